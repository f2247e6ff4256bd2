/* divergence.c - the divergence watch: energy books that catch an integration that
 * creates energy (an explicit method beyond its stability limit, explicit Euler on
 * undamped springs) long before its numbers overflow.
 *
 * The motion's energy is
 *     Q = 1/2 sum_free m |v|^2 + 1/2 sum_springs k (l - L)^2          [J]
 * (pinned nodes move as they are told: their kinetic energy is not the motion's; rigid
 * rods store none). Exact dynamics change Q only by the work of what is not a spring:
 *   - gravity, external forces and the constant part drag * wind of the drag, constant
 *     during a call: their work is sum_free (m g + F + drag wind) . (x - x_start);
 *   - the gas: the drop of its energy -nrt ln V + ambient V;
 *   - moving pinned nodes: the power -F_s . v_p of each spring s on its pinned end p,
 *     and the air on faces where it pushes (a wind: its power into the free nodes when
 *     positive), both integrated by the trapezoid rule over the substeps;
 *   - damping, drag (-drag v), energy_loss, contacts, strain limiting and tearing only
 *     take energy out, and are not counted: the books stay on the safe side.
 * The energy available to the motion, A = Q at opening + the work put in since, bounds
 * Q for any integrator that does not create energy. A check fails when
 *     Q > divergence_factor * max(A_max, floor),
 * A_max the largest A at any check (the energy available at some moment: a body thrown
 * up has little left at the top of its flight, and may take it back on the way down).
 * The floor is the kinetic energy the node forces give in one substep,
 * sum_free |m g + F + drag wind|^2 dt^2 / (2 m) (a node resting on a floor is bounced by
 * about that much), plus 1e-20 of 1/2 sum k L^2 (rounding in the springs' lengths): it
 * only matters for a system with nothing to move it.
 *
 * All sums run in node or spring order, on one thread: the check is deterministic.
 *
 * Short calls: a loop of plain calls of fewer than SS_BOOKS_EVERY substeps keeps one
 * account across them (casual), checked every SS_BOOKS_EVERY substeps of the loop and
 * whenever a coordinate passes a bound; what it assumes between its calls, and the
 * bound, are divergence_calls.c's. */
#include "springsim.h"

#include <math.h>
#include <string.h>

static int watching(const ss_system *sys, ss_method method) {
    return method != SS_XPBD && isfinite(sys->divergence_factor);
}

/* The elastic energy of the springs at x, J, summed the same way on every SIMD path (the
 * check is deterministic): spring s adds e_s = (k (l - L)) (l - L), with
 * l = sqrt((d0 d0 + d1 d1) + d2 d2), to partial sum s mod 4, or +0.0 when its k is 0 or
 * inf (no pull, or a rigid rod: no energy); the sum is ((p0 + p1) + (p2 + p3)) / 2. */
static inline double spring_elastic(const double *x, const int32_t *pairs, const double *rest,
                                    const double *stiffness, size_t s, const size_t dim) {
    const double k = stiffness[s];
    if (!(k > 0.0 && k < INFINITY))
        return 0.0;
    const size_t i = (size_t)pairs[2 * s] * dim, j = (size_t)pairs[2 * s + 1] * dim;
    const double d0 = x[j] - x[i], d1 = x[j + 1] - x[i + 1];
    const double d2 = dim == 3 ? x[j + 2] - x[i + 2] : 0.0;
    const double length2 = dim == 3 ? (d0 * d0 + d1 * d1) + d2 * d2 : d0 * d0 + d1 * d1;
    const double stretch = sqrt(length2) - rest[s];
    return (k * stretch) * stretch;
}

/* Partial sums p from spring `first` on (the lanes of springs [0, first) given). */
static inline void elastic_lanes(const ss_system *sys, const double *x, size_t first, double p[4],
                                 const size_t dim) {
    const double *rest = SS_DOUBLES(sys, SS_REST_LENGTHS);
    const double *stiffness = SS_DOUBLES(sys, SS_STIFFNESS);
    const int32_t *pairs = SS_INT32S(sys, SS_SPRINGS);
    for (size_t s = first; s < sys->num_springs; s++)
        p[s & 3] += spring_elastic(x, pairs, rest, stiffness, s, dim);
}

/* What the free nodes hold: 2 x their kinetic energy, sum m |v|^2, and (if x_start) the
 * work of the forces P = m g + F + drag wind since x_start, sum P.(x - x_start) (J; F = 0
 * while the external forces array is absent), summed the same way on every SIMD path:
 * node i adds m ((v0 v0 + v1 v1) + v2 v2) to partial sum k[i mod 4] and
 * (P0 d0 + P1 d1) + P2 d2, with P_c = (m g_c + F_c) + drag wind_c and d = x - x_start,
 * to w[i mod 4]; a pinned node adds nothing. Nodes [first, N) here. */
static inline void node_lanes(const ss_system *sys, const double *x_start, size_t first,
                              double k[4], double w[4], const size_t dim) {
    const double *x = SS_DOUBLES(sys, SS_POSITIONS), *v = SS_DOUBLES(sys, SS_VELOCITIES);
    const double *m = SS_DOUBLES(sys, SS_MASSES);
    const double *f = ss_array_absent(sys, SS_EXTERNAL) ? NULL : SS_DOUBLES(sys, SS_EXTERNAL);
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    for (size_t i = first; i < sys->num_nodes; i++) {
        if (pinned[i])
            continue;
        const double *vi = v + i * dim;
        const double v2 = dim == 3 ? (vi[0] * vi[0] + vi[1] * vi[1]) + vi[2] * vi[2]
                                   : vi[0] * vi[0] + vi[1] * vi[1];
        k[i & 3] += m[i] * v2;
        if (!x_start)
            continue;
        double t[3];
        for (size_t c = 0; c < dim; c++) {
            const size_t q = i * dim + c;
            const double push =
                (m[i] * sys->gravity[c] + (f ? f[q] : 0.0)) + sys->drag * sys->wind[c];
            t[c] = push * (x[q] - x_start[q]);
        }
        w[i & 3] += dim == 3 ? (t[0] + t[1]) + t[2] : t[0] + t[1];
    }
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define SS_BOOKS_AVX2 __attribute__((target("avx2")))

/* Four 3D rows (the (N, 3) array a at nodes i..i+3, read with one 256-bit load each: the
 * arrays and the scratch are padded past their last row) as one vector per component. */
SS_BOOKS_AVX2 static inline void rows_3d(const double *a, const size_t idx[4], __m256d col[3]) {
    const __m256d r0 = _mm256_loadu_pd(a + 3 * idx[0]), r1 = _mm256_loadu_pd(a + 3 * idx[1]);
    const __m256d r2 = _mm256_loadu_pd(a + 3 * idx[2]), r3 = _mm256_loadu_pd(a + 3 * idx[3]);
    const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
    const __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
    col[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
    col[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
    col[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
}

/* node_lanes in 3D, four nodes at a time (lane q: node i + q), the same operations lane
 * by lane (a pinned node adds +0.0, which changes no partial sum: they start at +0.0 and
 * never become -0.0); the nodes past the last multiple of 4 by node_lanes. */
SS_BOOKS_AVX2 static void node_lanes_avx2_3d(const ss_system *sys, const double *x_start,
                                             double k[4], double w[4]) {
    const double *x = SS_DOUBLES(sys, SS_POSITIONS), *v = SS_DOUBLES(sys, SS_VELOCITIES);
    const double *m = SS_DOUBLES(sys, SS_MASSES);
    const double *f = ss_array_absent(sys, SS_EXTERNAL) ? NULL : SS_DOUBLES(sys, SS_EXTERNAL);
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    const __m256d zero = _mm256_setzero_pd();
    __m256d g[3], air[3], kinetic = zero, work = zero;
    for (int c = 0; c < 3; c++) {
        g[c] = _mm256_set1_pd(sys->gravity[c]);
        air[c] = _mm256_set1_pd(sys->drag * sys->wind[c]);
    }
    size_t i = 0;
    for (; i + 4 <= sys->num_nodes; i += 4) {
        int32_t flags;
        memcpy(&flags, pinned + i, sizeof flags);
        const __m256i held = _mm256_cvtepu8_epi64(_mm_cvtsi32_si128(flags));
        const __m256d free = _mm256_castsi256_pd(_mm256_cmpeq_epi64(held, _mm256_setzero_si256()));
        const size_t idx[4] = {i, i + 1, i + 2, i + 3};
        const __m256d mass = _mm256_loadu_pd(m + i);
        __m256d vc[3];
        rows_3d(v, idx, vc);
        const __m256d v2 =
            _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(vc[0], vc[0]), _mm256_mul_pd(vc[1], vc[1])),
                          _mm256_mul_pd(vc[2], vc[2]));
        kinetic = _mm256_add_pd(kinetic, _mm256_and_pd(_mm256_mul_pd(mass, v2), free));
        if (!x_start)
            continue;
        __m256d xc[3], x0[3], fc[3] = {zero, zero, zero}, t[3];
        rows_3d(x, idx, xc);
        rows_3d(x_start, idx, x0);
        if (f)
            rows_3d(f, idx, fc);
        for (int c = 0; c < 3; c++) {
            const __m256d push =
                _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(mass, g[c]), fc[c]), air[c]);
            t[c] = _mm256_mul_pd(push, _mm256_sub_pd(xc[c], x0[c]));
        }
        const __m256d moved = _mm256_add_pd(_mm256_add_pd(t[0], t[1]), t[2]);
        work = _mm256_add_pd(work, _mm256_and_pd(moved, free));
    }
    _mm256_storeu_pd(k, kinetic);
    _mm256_storeu_pd(w, work);
    node_lanes(sys, x_start, i, k, w, 3);
}

/* 3D, four springs at a time: each end's (x, y, z) read with one 256-bit load (the
 * arrays are padded past their last row) and transposed; the same operations, lane by
 * lane, as spring_elastic. */
SS_BOOKS_AVX2 static void elastic_avx2_3d(const ss_system *sys, const double *x, double p[4]) {
    const double *rest = SS_DOUBLES(sys, SS_REST_LENGTHS);
    const double *stiffness = SS_DOUBLES(sys, SS_STIFFNESS);
    const int32_t *pairs = SS_INT32S(sys, SS_SPRINGS);
    const __m256d zero = _mm256_setzero_pd(), inf = _mm256_set1_pd(INFINITY);
    __m256d sum = zero;
    size_t s = 0;
    for (; s + 4 <= sys->num_springs; s += 4) {
        const int32_t *q = pairs + 2 * s;
        __m256d r[2][4], c[2][3];
        for (int end = 0; end < 2; end++) {
            for (int n = 0; n < 4; n++)
                r[end][n] = _mm256_loadu_pd(x + 3 * (size_t)q[2 * n + end]);
            const __m256d t0 = _mm256_unpacklo_pd(r[end][0], r[end][1]);
            const __m256d t1 = _mm256_unpackhi_pd(r[end][0], r[end][1]);
            const __m256d t2 = _mm256_unpacklo_pd(r[end][2], r[end][3]);
            const __m256d t3 = _mm256_unpackhi_pd(r[end][2], r[end][3]);
            c[end][0] = _mm256_permute2f128_pd(t0, t2, 0x20);
            c[end][1] = _mm256_permute2f128_pd(t1, t3, 0x20);
            c[end][2] = _mm256_permute2f128_pd(t0, t2, 0x31);
        }
        const __m256d d0 = _mm256_sub_pd(c[1][0], c[0][0]);
        const __m256d d1 = _mm256_sub_pd(c[1][1], c[0][1]);
        const __m256d d2 = _mm256_sub_pd(c[1][2], c[0][2]);
        const __m256d length2 = _mm256_add_pd(
            _mm256_add_pd(_mm256_mul_pd(d0, d0), _mm256_mul_pd(d1, d1)), _mm256_mul_pd(d2, d2));
        const __m256d stretch = _mm256_sub_pd(_mm256_sqrt_pd(length2), _mm256_loadu_pd(rest + s));
        const __m256d k = _mm256_loadu_pd(stiffness + s);
        const __m256d springy =
            _mm256_and_pd(_mm256_cmp_pd(k, zero, _CMP_GT_OQ), _mm256_cmp_pd(k, inf, _CMP_LT_OQ));
        const __m256d e = _mm256_mul_pd(_mm256_mul_pd(k, stretch), stretch);
        sum = _mm256_add_pd(sum, _mm256_and_pd(e, springy));
    }
    _mm256_storeu_pd(p, sum);
    elastic_lanes(sys, x, s, p, 3);
}
#define SS_BOOKS_HAVE_AVX2 1
#endif

static double elastic_energy(const ss_system *sys, const double *x) {
    double p[4] = {0.0, 0.0, 0.0, 0.0};
    if (sys->dim == 3) {
#ifdef SS_BOOKS_HAVE_AVX2
        if (ss_simd_get() != SS_SIMD_PORTABLE)
            elastic_avx2_3d(sys, x, p);
        else
#endif
            elastic_lanes(sys, x, 0, p, 3);
    } else {
        elastic_lanes(sys, x, 0, p, 2);
    }
    return 0.5 * ((p[0] + p[1]) + (p[2] + p[3]));
}

/* The constant force on node i that is not a spring's, N: P = m g + F + drag wind (f:
 * the external forces, NULL while absent). */
static inline double push_on(const ss_system *sys, const double *m, const double *f, size_t i,
                             size_t c, const double *air) {
    return m[i] * sys->gravity[c] + (f ? f[i * (size_t)sys->dim + c] : 0.0) + air[c];
}

/* The free nodes' kinetic energy, J, and (if x_start and work) the work of P since
 * x_start, J: node_lanes' partial sums added up as ((p0 + p1) + (p2 + p3)). */
static void node_sums(const ss_system *sys, const double *x_start, double *kinetic, double *work) {
    double k[4] = {0.0, 0.0, 0.0, 0.0}, w[4] = {0.0, 0.0, 0.0, 0.0};
    if (sys->dim == 3) {
#ifdef SS_BOOKS_HAVE_AVX2
        if (ss_simd_get() != SS_SIMD_PORTABLE)
            node_lanes_avx2_3d(sys, x_start, k, w);
        else
#endif
            node_lanes(sys, x_start, 0, k, w, 3);
    } else {
        node_lanes(sys, x_start, 0, k, w, 2);
    }
    *kinetic = 0.5 * ((k[0] + k[1]) + (k[2] + k[3]));
    if (work)
        *work = (w[0] + w[1]) + (w[2] + w[3]);
}

/* The floor of the books, J: the kinetic energy the forces P give the free nodes in one
 * substep of dt, sum |P|^2 dt^2 / (2 m) (a node resting on a floor is bounced by about
 * that much), plus 1e-20 of 1/2 sum k L^2 over the springs of finite stiffness (the
 * rounding of their lengths). */
static double books_floor(const ss_system *sys, double dt) {
    const size_t dim = (size_t)sys->dim;
    const double *m = SS_DOUBLES(sys, SS_MASSES);
    const double *f = ss_array_absent(sys, SS_EXTERNAL) ? NULL : SS_DOUBLES(sys, SS_EXTERNAL);
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    const double *rest = SS_DOUBLES(sys, SS_REST_LENGTHS);
    const double *stiffness = SS_DOUBLES(sys, SS_STIFFNESS);
    double air[3], twice_push = 0.0, twice_springs = 0.0;
    for (size_t c = 0; c < dim; c++)
        air[c] = sys->drag * sys->wind[c];
    for (size_t i = 0; i < sys->num_nodes; i++) {
        if (pinned[i])
            continue;
        double p2 = 0.0;
        for (size_t c = 0; c < dim; c++) {
            const double push = push_on(sys, m, f, i, c, air);
            p2 += push * push;
        }
        twice_push += p2 / m[i];
    }
    for (size_t s = 0; s < sys->num_springs; s++)
        if (isfinite(stiffness[s]))
            twice_springs += stiffness[s] * rest[s] * rest[s];
    return 0.5 * twice_push * dt * dt + 1e-20 * 0.5 * twice_springs;
}

/* Q at the current state, J. */
static double motion_energy(const ss_system *sys) {
    double kinetic;
    node_sums(sys, NULL, &kinetic, NULL);
    return kinetic + elastic_energy(sys, SS_DOUBLES(sys, SS_POSITIONS));
}

static double gas_energy(const ss_system *sys) {
    return sys->num_bodies ? ss_pressure_energy(sys) : 0.0;
}

/* The energy stored in the contacts, which a step releases into the motion, J: node
 * pairs' 1/2 k_c delta^2 (with the law from the step at the running call's dt) and
 * node-triangle pairs' 1/2 k (h - d)^2. As a call begins, the step's scratch holds the
 * node pairs at these positions (ss_contact_prepare: `found`) and the self-contact list
 * is made valid for them, as the first force evaluation would; else the pairs are
 * searched again. (Gas releases its energy as work, counted as such; springs' elastic
 * energy is part of Q.) */
static double stored_energy(const ss_system *sys, int found) {
    double stored = ss_self_collision_energy(sys, 1);
    if (!ss_array_absent(sys, SS_RADII))
        stored +=
            found ? ss_contact_found_energy(sys) : ss_contact_energy(sys, &sys->contact->found);
    return stored;
}

/* The energy the motion may take when books open: Q and what the contacts store (a
 * system that starts with overlaps releases it), J. */
static double opening_energy(const ss_system *sys, double motion, int found) {
    return motion + stored_energy(sys, found);
}

/* Power of the moving pins on the springs, W: a spring (i, j) pulls its end i with
 * F_i = T u (u = (x_j - x_i) / l, T = k (l - L) + c (v_j - v_i).u) and j with -T u; a
 * pinned end p moving at v_p puts in -F_p . v_p. */
static double pin_power(const ss_system *sys, const struct ss_books *b) {
    const size_t dim = (size_t)sys->dim;
    const double *x = SS_DOUBLES(sys, SS_POSITIONS), *v = SS_DOUBLES(sys, SS_VELOCITIES);
    const double *rest = SS_DOUBLES(sys, SS_REST_LENGTHS);
    const double *stiffness = SS_DOUBLES(sys, SS_STIFFNESS);
    const double *damping = SS_DOUBLES(sys, SS_DAMPING);
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    const int32_t *pairs = SS_INT32S(sys, SS_SPRINGS);
    double power = 0.0;
    for (size_t q = 0; q < b->num_pin_springs; q++) {
        const size_t s = (size_t)b->pin_springs[q];
        const size_t a = (size_t)pairs[2 * s], c = (size_t)pairs[2 * s + 1];
        const size_t i = a * dim, j = c * dim;
        double d[3], length2 = 0.0;
        for (size_t k = 0; k < dim; k++) {
            d[k] = x[j + k] - x[i + k];
            length2 += d[k] * d[k];
        }
        const double length = sqrt(length2);
        if (!(length >= SS_MIN_SPRING_LENGTH))
            continue; /* no force */
        double closing = 0.0, along_i = 0.0, along_j = 0.0;
        for (size_t k = 0; k < dim; k++) {
            const double u = d[k] / length;
            closing += (v[j + k] - v[i + k]) * u;
            along_i += v[i + k] * u;
            along_j += v[j + k] * u;
        }
        const double tension = stiffness[s] * (length - rest[s]) + damping[s] * closing;
        if (pinned[a])
            power -= tension * along_i;
        if (pinned[c])
            power += tension * along_j;
    }
    return power;
}

/* The power of what drives the motion from outside during the substeps, W: moving
 * pins, and the air on faces where it puts energy in (ss_aero_power is what it takes
 * out; only its negative part counts, so the books stay on the safe side). */
static double driven_power(const ss_system *sys, const struct ss_books *b) {
    const double air = ss_aero_power(sys);
    return (b->pins_move ? pin_power(sys, b) : 0.0) + (air < 0.0 ? -air : 0.0);
}

/* Whether a pinned node moves; if one does, list the springs with a pinned end and a
 * finite stiffness (unless `keep`: a short call of a driven loop, whose pins and
 * springs are those of the call before while the topology is the same). SS_ERR_NOMEM possible. */
static ss_status find_moving_pins(ss_system *sys, struct ss_books *b, int keep) {
    const size_t dim = (size_t)sys->dim;
    const double *v = SS_DOUBLES(sys, SS_VELOCITIES);
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    int move = sys->drives != NULL; /* driven nodes move (now, or later in the call) */
    for (size_t k = 0; k < sys->num_nodes * dim && !move; k++)
        move = pinned[k / dim] && v[k] != 0.0;
    if (move && !(keep && b->pins_move && b->pin_topology == sys->topology_edits)) {
        const int32_t *pairs = SS_INT32S(sys, SS_SPRINGS);
        const double *stiffness = SS_DOUBLES(sys, SS_STIFFNESS);
        size_t count = 0;
        for (size_t s = 0; s < sys->num_springs; s++)
            count += (pinned[pairs[2 * s]] || pinned[pairs[2 * s + 1]]) && isfinite(stiffness[s]);
        if (count > b->pin_capacity) {
            int32_t *fresh = ss_malloc(count * sizeof *fresh);
            if (!fresh)
                return ss_fail(sys, SS_ERR_NOMEM, "out of memory for the divergence watch");
            ss_free(b->pin_springs);
            b->pin_springs = fresh;
            b->pin_capacity = count;
        }
        b->num_pin_springs = 0;
        for (size_t s = 0; s < sys->num_springs; s++)
            if ((pinned[pairs[2 * s]] || pinned[pairs[2 * s + 1]]) && isfinite(stiffness[s]))
                b->pin_springs[b->num_pin_springs++] = (int32_t)s;
        b->pin_topology = sys->topology_edits;
    }
    b->pins_move = move;
    return SS_OK;
}

/* ---- Short calls' account (what it keeps between calls: divergence_calls.c) -- */

/* After a check passed: fold the work since x_ref into A, and measure from here. */
static void casual_rebase(ss_system *sys, struct ss_books *b, double available, int beyond) {
    b->available = available;
    memcpy(b->x_ref, SS_DOUBLES(sys, SS_POSITIONS),
           sys->num_nodes * (size_t)sys->dim * sizeof(double));
    b->gas_start = gas_energy(sys);
    b->pin_work = 0.0;
    ss_books_set_bound(sys, b, beyond);
}

/* Open the account at the current state (x_ref has room; `found`: as a call begins). */
static void casual_open(ss_system *sys, struct ss_books *b, int found) {
    b->motion_end = motion_energy(sys);
    b->available = b->most = opening_energy(sys, b->motion_end, found);
    b->opened = sys->state.time;
    b->since_check = 0;
    b->open = b->casual = b->sequence = 1;
    b->check_end = 0;
    /* pinned nodes are held still in a call that drives none; a driven call's moving
     * pins were found as it began (casual_begin) */
    b->pins_move = sys->drives ? b->pins_move : 0;
    b->pin_work = 0.0;
    b->margin = 0.0;
    ss_books_record(sys, b);
    b->pin_power = driven_power(sys, b);
    casual_rebase(sys, b, b->available, 0);
}

/* Whether a call of substep dt after one of b->dt changes the contacts' law: the law from
 * the step is stiffer at a shorter step, and its overlaps then hold more energy. */
static int contact_law_moves(const ss_system *sys, const struct ss_books *b, double dt) {
    return dt != b->dt && sys->contact->stiffness == SS_CONTACT_FROM_STEP && ss_contact_active(sys);
}

/* Open the account, or go on with it when no view wrote the state since the last call
 * and the contacts' law is the same (what else may have changed it, its next check
 * finds). */
static ss_status casual_begin(ss_system *sys, struct ss_books *b, double dt, int *watched) {
    if (!(b->open && b->casual && b->nodes == sys->num_nodes &&
          (!b->hashed || ss_books_views_unchanged(sys, b)) && !contact_law_moves(sys, b, dt))) {
        const size_t count = sys->num_nodes * (size_t)sys->dim;
        if (b->x_ref_capacity < count || !b->x_ref) {
            double *fresh = ss_malloc((count + SS_PAD_DOUBLES) * sizeof(double));
            if (!fresh)
                return ss_fail(sys, SS_ERR_NOMEM, "out of memory for the divergence watch");
            memset(fresh + count, 0, SS_PAD_DOUBLES * sizeof(double)); /* AVX2 reads past */
            ss_free(b->x_ref);
            b->x_ref = fresh;
            b->x_ref_capacity = count;
        }
        casual_open(sys, b, 1);
    }
    if (sys->drives) { /* the driven nodes move: the work of the moving pins counts */
        const ss_status st = find_moving_pins(sys, b, b->pins_move);
        if (st)
            return st;
        b->pin_power = driven_power(sys, b); /* the velocities the drives just gave */
    }
    b->dt = dt;
    sys->scratch.probe_scale = b->scale;
    *watched = 1;
    return SS_OK;
}

ss_status ss_books_begin(ss_system *sys, int books_mode, ss_method method, size_t steps, double dt,
                         int *watched) {
    const int mode = books_mode & 3, check_end = (books_mode & SS_BOOKS_CHECK_END) != 0;
    const int casual = mode == SS_BOOKS_CALL && steps < SS_BOOKS_EVERY;
    *watched = 0;
    sys->scratch.probe_scale = 1.0;
    struct ss_books *b = sys->scratch.books;
    if (!watching(sys, method)) {
        if (b)
            b->open = 0; /* a sequence the caller did not keep watched ends here */
        return SS_OK;
    }
    if (!b) {
        b = sys->scratch.books = ss_malloc(sizeof *b);
        if (!b)
            return ss_fail(sys, SS_ERR_NOMEM, "out of memory for the divergence watch");
        *b = (struct ss_books){0};
    }
    if (casual)
        return casual_begin(sys, b, dt, watched);
    const int go_on = b->open && !b->casual && mode != SS_BOOKS_CALL && mode != SS_BOOKS_START;
    ss_status st = find_moving_pins(sys, b, 0);
    if (st)
        return st;
    if (!go_on) {
        b->motion_end = motion_energy(sys);
        b->stored_end = stored_energy(sys, 1);
        b->available = b->most = b->motion_end + b->stored_end;
        b->opened = sys->state.time;
        b->since_check = 0;
        b->open = 1;
        b->casual = 0;
    } else if (mode == SS_BOOKS_CONTINUE) {
        /* the caller put energy in between the calls: into the motion, or into the
         * contacts (nodes moved into an overlap, radii grown, a stiffer law) */
        const double stored = stored_energy(sys, 1);
        const double edit = motion_energy(sys) + stored - (b->motion_end + b->stored_end);
        b->stored_end = stored;
        if (edit > 0.0)
            b->available += edit;
        if (b->available > b->most)
            b->most = b->available;
    }
    b->sequence = mode != SS_BOOKS_CALL;
    b->check_end = check_end || !b->sequence;
    b->dt = dt;
    b->gas_start = gas_energy(sys);
    b->pin_work = 0.0;
    b->aero = ss_aero_active(sys);
    b->pin_power = driven_power(sys, b);
    *watched = 1;
    return SS_OK;
}

void ss_books_pins_placed(ss_system *sys) {
    struct ss_books *b = sys->scratch.books;
    if (b->pins_move || b->aero)
        b->pin_power = driven_power(sys, b);
}

void ss_books_pin_work(ss_system *sys, double dt) {
    struct ss_books *b = sys->scratch.books;
    const double power = driven_power(sys, b);
    b->pin_work += 0.5 * dt * (b->pin_power + power);
    b->pin_power = power;
}

/* The work put in during the call so far, J (x_start: the call's first positions). */
static double work_now(const ss_system *sys, const struct ss_books *b, double potential) {
    return potential + (b->gas_start - gas_energy(sys)) + b->pin_work;
}

/* Q > divergence_factor * max(A_max, floor), A = available (work included), Q = motion. */
static int exceeds(ss_system *sys, struct ss_books *b, double motion) {
    b->failed_motion = motion;
    b->failed_most = b->most;
    if (!(motion > sys->divergence_factor * b->most))
        return 0;
    /* Only now the floor, which matters only for a system with nothing to move it. */
    const double floor = books_floor(sys, b->dt);
    if (b->most >= floor)
        return 1;
    b->failed_most = floor;
    return motion > sys->divergence_factor * floor;
}

int ss_books_diverged(ss_system *sys, const double *x_start, int beyond) {
    struct ss_books *b = sys->scratch.books;
    if (b->casual && !ss_books_unchanged(sys, b)) {
        casual_open(sys, b, 0); /* edited between the calls: no verdict, new books */
        return 0;
    }
    double kinetic, potential;
    node_sums(sys, b->casual ? b->x_ref : x_start, &kinetic, &potential);
    const double motion = kinetic + elastic_energy(sys, SS_DOUBLES(sys, SS_POSITIONS));
    const double available = b->available + work_now(sys, b, potential);
    if (available > b->most)
        b->most = available;
    b->motion_end = motion;
    if (b->sequence && !b->casual) /* what a caller's edit before the next call is measured from */
        b->stored_end = stored_energy(sys, 0);
    b->since_check = 0;
    const int diverged = exceeds(sys, b, motion);
    if (!diverged && b->casual)
        casual_rebase(sys, b, available, beyond);
    return diverged;
}

void ss_books_end(ss_system *sys, const double *x_start) {
    struct ss_books *b = sys->scratch.books;
    if (b->casual) {
        /* A view still alive may be written at any time: the arrays the call's validation
         * found shown by one (sys->unchecked; a view made since sets its bit too). */
        b->hashed = sys->unchecked & SS_BOOKS_READ & ~sys->absent;
        if (b->hashed)
            ss_books_end_call(sys, b);
        return;
    }
    if (!b->sequence) {
        b->open = 0;
        return;
    }
    double kinetic, potential;
    node_sums(sys, x_start, &kinetic, &potential);
    b->available += work_now(sys, b, potential);
}

void ss_books_close(ss_system *sys) {
    if (sys->scratch.books)
        sys->scratch.books->open = 0;
}

void ss_books_failure(const ss_system *sys, double *motion, double *available, double *opened) {
    const struct ss_books *b = sys->scratch.books;
    *motion = b ? b->failed_motion : NAN;
    *available = b ? b->failed_most : NAN;
    *opened = b ? b->opened : NAN;
}

void ss_books_free(struct ss_books *books) {
    if (books) {
        ss_free(books->pin_springs);
        ss_free(books->x_ref);
    }
    ss_free(books);
}
