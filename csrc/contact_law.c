/* contact_law.c - node-node contact's law: nodes with a radius repel when they overlap.
 *
 * The law (Cundall & Strack 1979, the linear spring-dashpot of DEM): for a pair i, j
 * with r_i + r_j > d = |x_j - x_i|, overlap delta = r_i + r_j - d and n the unit vector
 * from i to j, node j feels
 *     F = (k_c delta - c v_n) n - min(gamma |v_t|, mu |k_c delta - c v_n|) v_t / |v_t|
 * and node i feels -F, with v_n = (v_j - v_i).n (> 0 when they separate) and v_t the
 * rest of the relative velocity. The dashpot c = 2 zeta sqrt(k_c m_eff), m_eff =
 * m_i m_j / (m_i + m_j) (a pinned node counts as infinitely heavy: m_eff is the free
 * node's mass), with zeta = -ln e / sqrt(pi^2 + ln^2 e): the overlap is then a damped
 * oscillator that returns to 0 with exactly e times its entry speed (a head-on
 * collision's coefficient of restitution). As in the textbook model the dashpot may
 * pull during the end of a contact: clipping it would change e. Friction is Coulomb's,
 * regularised: a tangential dashpot gamma = 2 sqrt(k_c m_eff) (critical for the pair)
 * capped at mu times the normal force, so it can hold a slow slide but not a resting
 * stick exactly.
 *
 * The contact potential 1/2 k_c delta^2 is conservative (energy() reports it as
 * "contact"); the dashpot's c v_n^2 and friction's |F_t| |v_t| are powers that the step
 * books into dissipated with damping and drag (ss_dissipation_power).
 *
 * The pairs are contact.c's (ss_touch_find), in their fixed order. Each pair's force
 * is computed alone (by any thread, forces.c) into a scratch row; then one thread adds
 * the rows to the nodes serially in pair order: the same additions in the same order
 * for any thread count, so the results are bit-identical. */
#include "springsim.h"

#include <math.h>
#include <string.h>

typedef struct {
    double force[3]; /* on j; -force on i */
    double delta;    /* overlap, m */
    double power;    /* W taken by the dashpot and friction */
} pair_result;

/* The force of pair p of `pairs` at state (x, v); 0 for coincident nodes (no direction). */
static pair_result pair_law(const ss_system *sys, const int32_t *pairs, const double *x,
                            const double *v, size_t p) {
    const ss_touch *t = sys->touch;
    const size_t dim = (size_t)sys->dim;
    const int32_t i = pairs[2 * p], j = pairs[2 * p + 1];
    const double *r = SS_DOUBLES(sys, SS_RADII), *m = SS_DOUBLES(sys, SS_MASSES);
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    pair_result out = {{0.0, 0.0, 0.0}, 0.0, 0.0};
    double d[3] = {0.0, 0.0, 0.0}, dist2 = 0.0;
    for (size_t w = 0; w < dim; w++) {
        d[w] = x[(size_t)j * dim + w] - x[(size_t)i * dim + w];
        dist2 += d[w] * d[w];
    }
    const double dist = sqrt(dist2), delta = r[i] + r[j] - dist;
    if (!(dist >= SS_MIN_SPRING_LENGTH) || !(delta > 0.0) || (pinned[i] && pinned[j]))
        return out;
    const double m_eff = pinned[i] ? m[j] : pinned[j] ? m[i] : m[i] * m[j] / (m[i] + m[j]);
    const double root = sqrt(t->stiffness * m_eff);
    const double c = 2.0 * t->zeta * root;
    double n[3], vrel[3] = {0.0, 0.0, 0.0}, vn = 0.0;
    for (size_t w = 0; w < dim; w++) {
        n[w] = d[w] / dist;
        vrel[w] = v[(size_t)j * dim + w] - v[(size_t)i * dim + w];
        vn += vrel[w] * n[w];
    }
    const double fn = t->stiffness * delta - c * vn;
    for (size_t w = 0; w < dim; w++)
        out.force[w] = fn * n[w];
    out.delta = delta;
    out.power = c * vn * vn;
    if (t->friction > 0.0) {
        double vt[3], speed2 = 0.0;
        for (size_t w = 0; w < dim; w++) {
            vt[w] = vrel[w] - vn * n[w];
            speed2 += vt[w] * vt[w];
        }
        const double speed = sqrt(speed2);
        if (speed > 0.0) {
            const double viscous = 2.0 * root * speed, cap = t->friction * fabs(fn);
            const double ft = viscous < cap ? viscous : cap;
            for (size_t w = 0; w < dim; w++)
                out.force[w] -= ft * vt[w] / speed;
            out.power += ft * speed;
        }
    }
    return out;
}

void ss_touch_search(const ss_system *sys, const double *x) {
    if (ss_touch_step_find(sys, x))
        sys->touch->failed = 1;
}

size_t ss_touch_num_pairs(const ss_system *sys) {
    return sys->touch->search_failed ? 0 : sys->touch->found.num_pairs;
}

void ss_touch_pair_forces(const ss_system *sys, const double *x, const double *v, size_t first,
                          size_t last) {
    double *out = sys->touch->pair_forces;
    const int32_t *pairs = sys->touch->found.pairs;
    for (size_t p = first; p < last; p++) {
        const pair_result pr = pair_law(sys, pairs, x, v, p);
        memcpy(out + 3 * p, pr.force, sizeof pr.force);
    }
}

void ss_touch_gather_forces(const ss_system *sys, double *f, size_t stride) {
    const ss_touch *t = sys->touch;
    const size_t dim = (size_t)sys->dim;
    if (t->search_failed) {
        /* out of memory mid-step: poison the forces so the step rolls back */
        for (size_t i = 0; i < sys->num_nodes; i++)
            f[i * stride] = NAN;
        return;
    }
    const int32_t *pairs = t->found.pairs;
    for (size_t p = 0; p < t->found.num_pairs; p++) {
        const double *F = t->pair_forces + 3 * p;
        double *fi = f + (size_t)pairs[2 * p] * stride, *fj = f + (size_t)pairs[2 * p + 1] * stride;
        for (size_t w = 0; w < dim; w++) {
            fi[w] -= F[w];
            fj[w] += F[w];
        }
    }
}

void ss_touch_add_forces(const ss_system *sys, const double *x, const double *v, double *f,
                         size_t stride) {
    ss_touch_search(sys, x);
    ss_touch_pair_forces(sys, x, v, 0, ss_touch_num_pairs(sys));
    ss_touch_gather_forces(sys, f, stride);
}

/* Search at x in `found`: the step's scratch (kept fit for the step's other buffers) or
 * a query's. */
static int find_in(const ss_system *sys, const double *x, ss_touch_scratch *found) {
    return found == &sys->touch->found ? ss_touch_step_find(sys, x) : ss_touch_find(sys, x, found);
}

double ss_touch_energy(const ss_system *sys, ss_touch_scratch *found) {
    const double *x = SS_DOUBLES(sys, SS_POSITIONS), *v = SS_DOUBLES(sys, SS_VELOCITIES);
    if (find_in(sys, x, found))
        return NAN;
    double sum = 0.0;
    for (size_t p = 0; p < found->num_pairs; p++) {
        const double delta = pair_law(sys, found->pairs, x, v, p).delta;
        sum += delta * delta;
    }
    return 0.5 * sys->touch->stiffness * sum;
}

double ss_touch_found_energy(const ss_system *sys) {
    const ss_touch *t = sys->touch;
    const double *x = SS_DOUBLES(sys, SS_POSITIONS), *v = SS_DOUBLES(sys, SS_VELOCITIES);
    double sum = 0.0;
    for (size_t p = 0; p < ss_touch_num_pairs(sys); p++) {
        const double delta = pair_law(sys, t->found.pairs, x, v, p).delta;
        sum += delta * delta;
    }
    return t->search_failed ? NAN : 0.5 * t->stiffness * sum;
}

double ss_touch_power(const ss_system *sys) {
    const double *x = SS_DOUBLES(sys, SS_POSITIONS), *v = SS_DOUBLES(sys, SS_VELOCITIES);
    ss_touch_scratch *found = &sys->touch->found;
    if (find_in(sys, x, found))
        return NAN;
    double power = 0.0;
    for (size_t p = 0; p < found->num_pairs; p++)
        power += pair_law(sys, found->pairs, x, v, p).power;
    return power;
}

void ss_touch_stability_rows(const ss_system *sys, double *rows, double *own) {
    if (!ss_touch_active(sys))
        return;
    const ss_touch *t = sys->touch;
    const size_t n = sys->num_nodes;
    const double *r = SS_DOUBLES(sys, SS_RADII), *m = SS_DOUBLES(sys, SS_MASSES);
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    const double k = t->stiffness, friction = t->friction > 0.0 ? 1.0 : 0.0;
    /* damping per sqrt(k m_eff): the dashpot's 2 zeta and friction's 2 */
    const double damping = 2.0 * t->zeta + 2.0 * friction;
    memset(own, 0, 2 * n * sizeof *own);
    ss_touch_scratch found = {0}; /* a query's: the step's scratch is not touched */
    int searched = ss_touch_find(sys, SS_DOUBLES(sys, SS_POSITIONS), &found) == 0;
    for (size_t p = 0; searched && p < found.num_pairs; p++) {
        const int32_t i = found.pairs[2 * p], j = found.pairs[2 * p + 1];
        if (pinned[i] && pinned[j])
            continue;
        const double m_eff = pinned[i] ? m[j] : pinned[j] ? m[i] : m[i] * m[j] / (m[i] + m[j]);
        const double c = damping * sqrt(k * m_eff);
        const int32_t ends[2][2] = {{i, j}, {j, i}};
        for (int e = 0; e < 2; e++) {
            const int32_t a = ends[e][0], b = ends[e][1];
            if (pinned[a])
                continue;
            const double weight = 1.0 / m[a] + (pinned[b] ? 0.0 : 1.0 / sqrt(m[a] * m[b]));
            own[2 * a] += k * weight;
            own[2 * a + 1] += c * weight;
        }
    }
    ss_touch_scratch_release(&found);
    /* A node with no contact now may meet a node of its own mass: w^2 = 2 k / m. */
    for (size_t i = 0; i < n; i++) {
        if (pinned[i] || !(r[i] > 0.0))
            continue;
        const double one_w2 = 2.0 * k / m[i], one_g = 2.0 * damping * sqrt(0.5 * k * m[i]) / m[i];
        rows[2 * i] += own[2 * i] > one_w2 ? own[2 * i] : one_w2;
        rows[2 * i + 1] += own[2 * i] > one_w2 ? own[2 * i + 1] : one_g;
    }
}

void ss_touch_frames(const ss_system *sys, const double *x, double scale_c, double scale_k) {
    const ss_touch *t = sys->touch;
    const size_t dim = (size_t)sys->dim;
    const double *r = SS_DOUBLES(sys, SS_RADII), *m = SS_DOUBLES(sys, SS_MASSES);
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    const int32_t *pairs = t->found.pairs;
    for (size_t p = 0; p < ss_touch_num_pairs(sys); p++) {
        const int32_t i = pairs[2 * p], j = pairs[2 * p + 1];
        double *frame = t->frames + SS_TOUCH_FRAME * p, dist2 = 0.0;
        for (size_t w = 0; w < 3; w++) {
            frame[w] = w < dim ? x[(size_t)j * dim + w] - x[(size_t)i * dim + w] : 0.0;
            dist2 += frame[w] * frame[w];
        }
        const double dist = sqrt(dist2);
        frame[3] = 0.0;
        if (!(dist >= SS_MIN_SPRING_LENGTH) || !(r[i] + r[j] - dist > 0.0) ||
            (pinned[i] && pinned[j]))
            continue; /* no force (pair_law's cases): no block */
        for (size_t w = 0; w < dim; w++)
            frame[w] /= dist;
        const double m_eff = pinned[i] ? m[j] : pinned[j] ? m[i] : m[i] * m[j] / (m[i] + m[j]);
        const double c = 2.0 * t->zeta * sqrt(t->stiffness * m_eff);
        frame[3] = (scale_c == 0.0 ? 0.0 : scale_c * c) + scale_k * t->stiffness;
    }
}

void ss_touch_add_blocks(const ss_system *sys, const double *p, double *out) {
    const ss_touch *t = sys->touch;
    const size_t dim = (size_t)sys->dim;
    for (size_t q = 0; q < ss_touch_num_pairs(sys); q++) {
        const double *frame = t->frames + SS_TOUCH_FRAME * q;
        if (frame[3] == 0.0)
            continue;
        const size_t i = (size_t)t->found.pairs[2 * q] * dim;
        const size_t j = (size_t)t->found.pairs[2 * q + 1] * dim;
        double along = 0.0;
        for (size_t w = 0; w < dim; w++)
            along += frame[w] * (p[i + w] - p[j + w]);
        for (size_t w = 0; w < dim; w++) {
            const double g = frame[3] * along * frame[w];
            out[i + w] += g;
            out[j + w] -= g;
        }
    }
}

void ss_touch_add_diagonal(const ss_system *sys, double *diag) {
    const ss_touch *t = sys->touch;
    const size_t dim = (size_t)sys->dim;
    for (size_t q = 0; q < ss_touch_num_pairs(sys); q++) {
        const double *frame = t->frames + SS_TOUCH_FRAME * q;
        for (int end = 0; end < 2; end++) {
            const size_t i = (size_t)t->found.pairs[2 * q + end] * dim;
            for (size_t w = 0; w < dim; w++)
                diag[i + w] += frame[3] * frame[w] * frame[w];
        }
    }
}
