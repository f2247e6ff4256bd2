/* energy.c - energies, momentum, centre of mass, spring lengths and tensions, and the
 * explicit stability estimate. All sums run in node or spring order (deterministic). */
#include "springsim.h"

#include <math.h>

/* Length of spring s at the current positions, m. */
static double spring_length(const ss_system *sys, size_t s) {
    const size_t dim = (size_t)sys->dim;
    const double *x = SS_DOUBLES(sys, SS_POSITIONS);
    const int32_t *pairs = SS_INT32S(sys, SS_SPRINGS);
    const size_t i = (size_t)pairs[2 * s] * dim, j = (size_t)pairs[2 * s + 1] * dim;
    double length2 = 0.0;
    for (size_t k = 0; k < dim; k++) {
        const double d = x[j + k] - x[i + k];
        length2 += d * d;
    }
    return sqrt(length2);
}

/* Kinetic 1/2 sum m |v|^2, elastic 1/2 sum k (l - L)^2, gravitational -sum m g.x, the
 * gas's -nrt ln V + ambient V, node-node contact's 1/2 k_c delta^2 and self-contact's
 * 1/2 k (h - d)^2  [J]. The contacts' pairs are searched in the step's scratch when
 * in_step, else (a query) in scratch of the query's own, or read from the step's
 * self-contact list when that is valid for x: the same pairs in the same order either
 * way (each search depends on x alone), so the same bits. */
static void energy_terms(const ss_system *sys, ss_energy_terms *out, int in_step) {
    const size_t n = sys->num_nodes, dim = (size_t)sys->dim;
    const double *x = SS_DOUBLES(sys, SS_POSITIONS), *v = SS_DOUBLES(sys, SS_VELOCITIES);
    const double *m = SS_DOUBLES(sys, SS_MASSES);
    const double *rest = SS_DOUBLES(sys, SS_REST_LENGTHS);
    const double *stiffness = SS_DOUBLES(sys, SS_STIFFNESS);
    double kinetic = 0.0, gravity = 0.0, elastic = 0.0;
    for (size_t i = 0; i < n; i++) {
        double v2 = 0.0, gx = 0.0;
        for (size_t k = 0; k < dim; k++) {
            v2 += v[i * dim + k] * v[i * dim + k];
            gx += sys->gravity[k] * x[i * dim + k];
        }
        kinetic += m[i] * v2;
        gravity -= m[i] * gx;
    }
    for (size_t s = 0; s < sys->num_springs; s++) {
        if (isinf(stiffness[s]))
            continue; /* a rigid rod stores no energy: it keeps its length */
        const double stretch = spring_length(sys, s) - rest[s];
        elastic += stiffness[s] * stretch * stretch;
    }
    out->kinetic = 0.5 * kinetic;
    out->elastic = 0.5 * elastic;
    out->gravity = gravity;
    out->pressure = ss_pressure_energy(sys);
    double touch = 0.0;
    if (!ss_array_absent(sys, SS_RADII)) {
        ss_contact_scratch own = {0};
        touch = ss_contact_energy(sys, in_step ? &sys->contact->found : &own);
        ss_contact_scratch_release(&own);
    }
    out->contact = touch + ss_self_collision_energy(sys, in_step);
}

void ss_energy(const ss_system *sys, ss_energy_terms *out) {
    energy_terms(sys, out, 0);
}

void ss_energy_in_step(const ss_system *sys, ss_energy_terms *out) {
    energy_terms(sys, out, 1);
}

/* The springs' damping power sum c ((v_j - v_i).u)^2 = c ((v_j - v_i).d)^2 / |d|^2, W,
 * with d = x_j - x_i: no square root and one division per damped spring, the loop
 * written per dimension (this runs once or twice per substep while track_energy is
 * on). A spring shorter than SS_MIN_SPRING_LENGTH (or of NaN length) has no
 * direction and adds nothing, as in the force pass. */
static inline double damping_power_in(const ss_system *sys, const size_t dim) {
    const double *x = SS_DOUBLES(sys, SS_POSITIONS), *v = SS_DOUBLES(sys, SS_VELOCITIES);
    const int32_t *pairs = SS_INT32S(sys, SS_SPRINGS);
    const double *damping = SS_DOUBLES(sys, SS_DAMPING);
    double power = 0.0;
    for (size_t s = 0; s < sys->num_springs; s++) {
        const double c = damping[s];
        if (c == 0.0)
            continue;
        const size_t i = (size_t)pairs[2 * s] * dim, j = (size_t)pairs[2 * s + 1] * dim;
        double l2 = 0.0, p = 0.0;
        for (size_t k = 0; k < dim; k++) {
            const double d = x[j + k] - x[i + k];
            l2 += d * d;
            p += (v[j + k] - v[i + k]) * d;
        }
        if (l2 >= SS_MIN_SPRING_LENGTH * SS_MIN_SPRING_LENGTH)
            power += c * (p * p) / l2;
    }
    return power;
}

static double springs_damping_power(const ss_system *sys) {
    return sys->dim == 3 ? damping_power_in(sys, 3) : damping_power_in(sys, 2);
}

double ss_dissipation_power(const ss_system *sys) {
    const size_t dim = (size_t)sys->dim;
    const double *v = SS_DOUBLES(sys, SS_VELOCITIES);
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    double power = springs_damping_power(sys);
    if (sys->drag != 0.0)
        for (size_t i = 0; i < sys->num_nodes; i++)
            if (!pinned[i])
                for (size_t k = 0; k < dim; k++)
                    power += sys->drag * (v[i * dim + k] - sys->wind[k]) * v[i * dim + k];
    if (sys->scratch.contact_constraints) /* XPBD: contacts are constraints, not forces */
        return power + ss_aero_power(sys);
    if (!ss_array_absent(sys, SS_RADII))
        power += ss_contact_power(sys);
    return power + ss_aero_power(sys) + ss_self_collision_power(sys);
}

double ss_free_kinetic_energy(const ss_system *sys) {
    const size_t dim = (size_t)sys->dim;
    const double *v = SS_DOUBLES(sys, SS_VELOCITIES), *m = SS_DOUBLES(sys, SS_MASSES);
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    double twice = 0.0;
    for (size_t i = 0; i < sys->num_nodes; i++)
        if (!pinned[i])
            for (size_t k = 0; k < dim; k++)
                twice += m[i] * v[i * dim + k] * v[i * dim + k];
    return 0.5 * twice;
}

/* Linear momentum sum m v, kg m/s. */
void ss_momentum(const ss_system *sys, double out[3]) {
    const size_t dim = (size_t)sys->dim;
    const double *v = SS_DOUBLES(sys, SS_VELOCITIES), *m = SS_DOUBLES(sys, SS_MASSES);
    out[0] = out[1] = out[2] = 0.0;
    for (size_t i = 0; i < sys->num_nodes; i++)
        for (size_t k = 0; k < dim; k++)
            out[k] += m[i] * v[i * dim + k];
}

/* Centre of mass sum m x / sum m, m; NaN for an empty system. */
void ss_center_of_mass(const ss_system *sys, double out[3]) {
    const size_t dim = (size_t)sys->dim;
    const double *x = SS_DOUBLES(sys, SS_POSITIONS), *m = SS_DOUBLES(sys, SS_MASSES);
    double total = 0.0;
    out[0] = out[1] = out[2] = 0.0;
    for (size_t i = 0; i < sys->num_nodes; i++) {
        total += m[i];
        for (size_t k = 0; k < dim; k++)
            out[k] += m[i] * x[i * dim + k];
    }
    for (size_t k = 0; k < dim; k++)
        out[k] = sys->num_nodes ? out[k] / total : NAN;
}

void ss_spring_lengths(const ss_system *sys, double *out) {
    for (size_t s = 0; s < sys->num_springs; s++)
        out[s] = spring_length(sys, s);
}

/* Signed axial force of each spring, N, positive when it pulls its ends together:
 * k (l - L) + c (v_j - v_i).u, the magnitude used by the force loop (0 when l ~ 0). */
void ss_spring_tensions(const ss_system *sys, double *out) {
    const size_t dim = (size_t)sys->dim;
    const double *x = SS_DOUBLES(sys, SS_POSITIONS), *v = SS_DOUBLES(sys, SS_VELOCITIES);
    const int32_t *pairs = SS_INT32S(sys, SS_SPRINGS);
    const double *rest = SS_DOUBLES(sys, SS_REST_LENGTHS);
    const double *stiffness = SS_DOUBLES(sys, SS_STIFFNESS);
    const double *damping = SS_DOUBLES(sys, SS_DAMPING);
    for (size_t s = 0; s < sys->num_springs; s++) {
        const size_t i = (size_t)pairs[2 * s] * dim, j = (size_t)pairs[2 * s + 1] * dim;
        const double length = spring_length(sys, s);
        double closing_speed = 0.0;
        if (length >= SS_MIN_SPRING_LENGTH)
            for (size_t k = 0; k < dim; k++)
                closing_speed += (v[j + k] - v[i + k]) * (x[j + k] - x[i + k]) / length;
        out[s] = length >= SS_MIN_SPRING_LENGTH
                     ? stiffness[s] * (length - rest[s]) + damping[s] * closing_speed
                     : 0.0;
    }
}

/* Largest stable step of symplectic Euler, s.
 *
 * For one degree of freedom x'' = -w^2 x - g x' (w^2 = k/m, g = c/m), symplectic Euler
 * (v' = v + h a(x, v), x' = x + h v') has the amplification matrix of trace
 * 2 - h^2 w^2 - h g and determinant 1 - h g; its eigenvalues stay inside the unit
 * circle while h^2 w^2 + 2 h g < 4, that is while
 *     h < 4 / (g + sqrt(g^2 + 4 w^2))        (2 / w undamped; 2 / g without springs).
 *
 * Many degrees of freedom: w^2 and g are bounded node by node by Gershgorin's theorem,
 * applied to the mass-weighted axial stiffness M^-1/2 K M^-1/2 and damping
 * M^-1/2 C M^-1/2: for each free node i, the sum over its springs s = (i, j) of
 * k_s / m_i (the diagonal) + k_s / sqrt(m_i m_j) (the off-diagonal), a pinned j counting
 * as infinitely heavy, and the same with the damping c_s, plus drag / m_i. The limit is
 * the smallest over the nodes. Exact for one mass on a pinned spring, two free masses
 * and the top mode of a long uniform chain; never above the truth when every spring has
 * the same c / k (the damping is then proportional, and the top mode's g is the bound's),
 * and otherwise an estimate. Infinite when nothing acts on a free node. Node-node
 * contacts count as springs of stiffness k_c with their dashpot and friction as damping
 * (contact.c): those touching now, or, if more, one with a node of equal mass. */
/* Per free node i: rows[2 i] bounds w^2 (1/s^2) and rows[2 i + 1] bounds g (1/s), as
 * described above; pinned nodes' rows are 0. */
static void stability_rows(const ss_system *sys, double *rows) {
    const size_t n = sys->num_nodes;
    const int32_t *pairs = SS_INT32S(sys, SS_SPRINGS);
    const double *m = SS_DOUBLES(sys, SS_MASSES);
    const double *stiffness = SS_DOUBLES(sys, SS_STIFFNESS);
    const double *damping = SS_DOUBLES(sys, SS_DAMPING);
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    for (size_t i = 0; i < n; i++) {
        rows[2 * i] = 0.0;
        rows[2 * i + 1] = pinned[i] ? 0.0 : sys->drag / m[i];
    }
    for (size_t s = 0; s < sys->num_springs; s++) {
        const int32_t i = pairs[2 * s], j = pairs[2 * s + 1];
        const double k = stiffness[s], c = damping[s];
        if (!pinned[i]) {
            const double weight = 1.0 / m[i] + (pinned[j] ? 0.0 : 1.0 / sqrt(m[i] * m[j]));
            rows[2 * i] += k * weight;
            rows[2 * i + 1] += c * weight;
        }
        if (!pinned[j]) {
            const double weight = 1.0 / m[j] + (pinned[i] ? 0.0 : 1.0 / sqrt(m[i] * m[j]));
            rows[2 * j] += k * weight;
            rows[2 * j + 1] += c * weight;
        }
    }
}

ss_status ss_critical_dt(ss_system *sys, double *out) {
    const size_t n = sys->num_nodes;
    /* per node: w^2 (1/s^2), g (1/s); then the contacts' scratch */
    double *rows = ss_malloc((4 * n + 1) * sizeof(double));
    if (!rows)
        return ss_fail(sys, SS_ERR_NOMEM, "out of memory estimating critical_dt");
    stability_rows(sys, rows);
    ss_contact_stability_rows(sys, rows, rows + 2 * n); /* node-node contact's springs */
    double limit = INFINITY;
    for (size_t i = 0; i < n; i++) {
        const double w2 = rows[2 * i], g = rows[2 * i + 1];
        if (w2 == 0.0 && g == 0.0)
            continue;
        const double h = 4.0 / (g + sqrt(g * g + 4.0 * w2));
        if (h < limit)
            limit = h;
    }
    ss_free(rows);
    *out = limit;
    return SS_OK;
}

ss_status ss_stiffest_omega(ss_system *sys, double *out) {
    const size_t n = sys->num_nodes;
    double *rows = ss_malloc(2 * n * sizeof(double));
    if (!rows)
        return ss_fail(sys, SS_ERR_NOMEM, "out of memory bounding the springs' frequencies");
    stability_rows(sys, rows);
    double w2 = 0.0;
    for (size_t i = 0; i < n; i++)
        if (rows[2 * i] > w2)
            w2 = rows[2 * i];
    ss_free(rows);
    *out = sqrt(w2);
    return SS_OK;
}
