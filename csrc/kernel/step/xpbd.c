/* xpbd.c - XPBD (Macklin, Mueller and Chentanez 2016), the xbdev cloth made
 * stiffness-exact: springs as compliant distance constraints, solved Gauss-Seidel in
 * colour order, by a portable loop or an AVX2 loop (the AVX-512 path runs the AVX2 loop)
 * that give the same bits. springsim/reference.py (_xpbd) is the same mathematics in
 * NumPy.
 *
 * One substep of dt:
 *  1. Predict with the node forces only (gravity, drag, external, gas; a = 0 for a
 *     pinned node):  s = x,  v += a dt,  x += v dt.
 *  2. For each spring (i, j) with w_i + w_j != 0 and k != 0 (the others pull nothing:
 *     k = 0 is infinitely compliant), w = 1/m (0 for a pinned node):
 *         alpha = 1/k  [m/N, 0 for a rigid rod, k = inf],  a~ = alpha / (dt dt)  [1/kg],
 *         gamma = alpha c / dt  (the spring damping c as XPBD damping, no unit),
 *         r = 1 / ((1 + gamma) (w_i + w_j) + a~)  [kg],  lambda = 0.
 *  3. `iterations` passes over those springs in colour order (below); each spring:
 *         d = x_j - x_i,  l2 = (d0 d0 + d1 d1) + d2 d2,  skipped if l2 < (1e-12 m)^2,
 *         l = sqrt(l2),  u = d (1 / l),  e = s_j - s_i,
 *         moved = ((d0 - e0) u0 + (d1 - e1) u1) + (d2 - e2) u2
 *                 (how far the ends moved apart along u in this substep, m),
 *         dlambda = (((L - l) - a~ lambda) - gamma moved) r,  lambda += dlambda,
 *         delta = dlambda u,  x_i -= w_i delta,  x_j += w_j delta.
 *  4. v = (x - s) / dt for the free nodes; pinned nodes keep v (they moved by v dt).
 *  5. Restitution of the node-node and collider contacts that pushed, on v.
 * Contacts: node-node contact, self-collision and the colliders are not forces (or,
 * for colliders, a rule after the substep) here but constraints, searched once per
 * substep at the prediction and projected one after another after the springs in each
 * pass of step 3, the colliders last (contact.c, "Contact as constraints";
 * self_collision.c; collider_constraints.c);
 * serial and in a fixed order, so bit-identical for any thread count.
 * Unconditionally stable; more iterations approach the exact constraint. A 2D system is
 * solved as a 3D one with z = 0: every z stays +0 and adds +0 to the sums above.
 * Step 2 runs once per step call and again after a spring tears (its k becomes 0):
 * nothing else it reads changes within a call, so this gives the bits of running it
 * every substep, without its four divisions per spring and substep.
 *
 * The colour order. The springs are coloured greedily in index order (parallel.c,
 * ss_system_ensure_colouring): each spring takes the lowest colour c in 0..62 that no
 * earlier spring at either of its nodes took; a spring that finds all 63 taken goes to
 * the overflow colour 63, which marks nothing. A pass solves colour 0's springs in
 * increasing index, then colour 1's, ..., the overflow colour's last. No two springs of
 * one colour (but the overflow) share a node, so within a colour no spring reads what
 * another writes: the AVX2 loop solves 4 at a time with exactly the result of one after
 * another, and no spring of a colour waits for the previous one's square root and
 * division (in index order each did: 14.6 ns per spring and pass on the 100x100 cloth).
 * The overflow colour runs one spring after another. Removing springs (tearing removes
 * the cut ones when a call ends) recolours the others, and so changes the rounding, as
 * a change of the force loop's blocks does: run() removes them at its records only, so
 * that its result does not depend on how its calls are cut.
 *
 * Every path computes each spring with the operations written above in that order
 * (sqrt and division correctly rounded, no FMA: the build passes -ffp-contract=off), so
 * every path gives the same bits. XPBD runs on one thread: bit-identical for any count.
 *
 * Memory, in the integrator scratch while xpbd is used: 48 bytes per spring (L, a~,
 * gamma, r, lambda and the two ends' record offsets, in solve order) and 64 + 8 dim per
 * node (the record below and the prediction's acceleration); plus the colouring's 4
 * bytes per spring. */
#include "springsim.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define SS_X86_SIMD 1
#include <immintrin.h>
#endif

#define SS_MIN_SPRING_LENGTH2 (SS_MIN_SPRING_LENGTH * SS_MIN_SPRING_LENGTH)
/* A node's record, 64 bytes (one cache line): (x, y, z, w, s_x, s_y, s_z, 0), m and 1/kg;
 * z = s_z = 0 in 2D. The solve reads and writes these, not the (N, dim) arrays. */
#define SS_RECORD 8
/* Colour offsets kept in the scratch: one more than the colours there can be. */
#define SS_XPBD_STARTS (SS_SERIAL_COLOUR + 2)

/* What a pass reads and writes, in the scratch; springs q in solve order. */
typedef struct {
    double *node;         /* (N, SS_RECORD) records */
    const uint32_t *ends; /* (A, 2) each end's record: node index * SS_RECORD (so
                             SS_XPBD_MAX_NODES) */
    const double *rest;   /* (A,) L, m */
    const double *compliance, *gamma, *reciprocal; /* (A,) a~, gamma, r */
    double *lambda;                                /* (A,) kg m */
} xpbd_view;

size_t ss_xpbd_scratch_size(const ss_system *sys) {
    const size_t n = sys->num_nodes, m = sys->num_springs;
    /* a; the records, 64-byte aligned (up to 7 doubles before them); five doubles and two
     * 32-bit offsets per spring; the colour offsets */
    return n * (size_t)sys->dim + 7 + n * SS_RECORD + 6 * m + SS_XPBD_STARTS;
}

/* ---- Portable ---------------------------------------------------------- */

/* Spring q of the solve order, as in the comment at the top. */
static inline void solve_one(const xpbd_view *xv, size_t q) {
    double *xi = xv->node + xv->ends[2 * q], *xj = xv->node + xv->ends[2 * q + 1];
    const double d0 = xj[0] - xi[0], d1 = xj[1] - xi[1], d2 = xj[2] - xi[2];
    const double q0 = d0 - (xj[4] - xi[4]), q1 = d1 - (xj[5] - xi[5]);
    const double q2 = d2 - (xj[6] - xi[6]);
    const double l2 = (d0 * d0 + d1 * d1) + d2 * d2;
    if (l2 < SS_MIN_SPRING_LENGTH2)
        return;
    const double length = sqrt(l2), inv = 1.0 / length;
    const double u0 = d0 * inv, u1 = d1 * inv, u2 = d2 * inv;
    const double moved = (q0 * u0 + q1 * u1) + q2 * u2;
    const double dlambda =
        (((xv->rest[q] - length) - xv->compliance[q] * xv->lambda[q]) - xv->gamma[q] * moved) *
        xv->reciprocal[q];
    xv->lambda[q] = xv->lambda[q] + dlambda;
    const double delta[3] = {dlambda * u0, dlambda * u1, dlambda * u2};
    const double wi = xi[3], wj = xj[3];
    for (int k = 0; k < 3; k++) {
        xi[k] = xi[k] - wi * delta[k];
        xj[k] = xj[k] + wj * delta[k];
    }
}

/* Springs [first, last) of the solve order, one after another. */
static void solve_portable(const xpbd_view *xv, size_t first, size_t last) {
    for (size_t q = first; q < last; q++)
        solve_one(xv, q);
}

#ifdef SS_X86_SIMD

/* ---- AVX2: 4 springs of a colour at a time ------------------------------ */
/* Each spring end's record is read with two 256-bit loads, the differences are
 * transposed into one vector per component, and the corrections are transposed back
 * into rows and added with one 256-bit store per spring end (its w, in the fourth
 * lane, minus w 0, stays w). A spring too short to have a direction stores nothing,
 * as the portable loop skips it. */

#define SS_AVX2 __attribute__((target("avx2")))

/* Rows m[0..3] (4 doubles each) to columns: r[k] = (m[0][k], m[1][k], m[2][k], m[3][k]). */
SS_AVX2 static inline void transpose_4x3(const __m256d m[4], __m256d r[3]) {
    const __m256d t0 = _mm256_unpacklo_pd(m[0], m[1]), t1 = _mm256_unpackhi_pd(m[0], m[1]);
    const __m256d t2 = _mm256_unpacklo_pd(m[2], m[3]), t3 = _mm256_unpackhi_pd(m[2], m[3]);
    r[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
    r[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
    r[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
}

/* The first half of 4 springs' solve: their d and q = d - e as component vectors, the
 * length and its reciprocal, and which are long enough to solve. */
typedef struct {
    __m256d d[3], q[3], length, inv, valid;
} front_avx2;

SS_AVX2 static inline void begin_avx2(const xpbd_view *xv, size_t q, front_avx2 *f) {
    const double *node = xv->node;
    const uint32_t *ends = xv->ends;
    __m256d D[4], Q[4]; /* rows (d, w_j - w_i) and (d - e, ...) */
    for (int l = 0; l < 4; l++) {
        const double *ri = node + ends[2 * (q + l)], *rj = node + ends[2 * (q + l) + 1];
        D[l] = _mm256_sub_pd(_mm256_load_pd(rj), _mm256_load_pd(ri));
        Q[l] = _mm256_sub_pd(D[l], _mm256_sub_pd(_mm256_load_pd(rj + 4), _mm256_load_pd(ri + 4)));
    }
    transpose_4x3(D, f->d);
    transpose_4x3(Q, f->q);
    const __m256d l2 = _mm256_add_pd(
        _mm256_add_pd(_mm256_mul_pd(f->d[0], f->d[0]), _mm256_mul_pd(f->d[1], f->d[1])),
        _mm256_mul_pd(f->d[2], f->d[2]));
    f->valid = _mm256_cmp_pd(l2, _mm256_set1_pd(SS_MIN_SPRING_LENGTH2), _CMP_NLT_UQ);
    f->length = _mm256_sqrt_pd(l2);
    f->inv = _mm256_div_pd(_mm256_set1_pd(1.0), f->length);
}

/* The second half: lambda, and the corrections to the records. */
SS_AVX2 static inline void end_avx2(const xpbd_view *xv, size_t q, const front_avx2 *f) {
    double *node = xv->node;
    const uint32_t *ends = xv->ends;
    const __m256d u0 = _mm256_mul_pd(f->d[0], f->inv), u1 = _mm256_mul_pd(f->d[1], f->inv);
    const __m256d u2 = _mm256_mul_pd(f->d[2], f->inv);
    const __m256d moved =
        _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(f->q[0], u0), _mm256_mul_pd(f->q[1], u1)),
                      _mm256_mul_pd(f->q[2], u2));
    const __m256d lam = _mm256_loadu_pd(xv->lambda + q);
    const __m256d c = _mm256_sub_pd(_mm256_loadu_pd(xv->rest + q), f->length);
    const __m256d numerator =
        _mm256_sub_pd(_mm256_sub_pd(c, _mm256_mul_pd(_mm256_loadu_pd(xv->compliance + q), lam)),
                      _mm256_mul_pd(_mm256_loadu_pd(xv->gamma + q), moved));
    const __m256d dlambda = _mm256_mul_pd(numerator, _mm256_loadu_pd(xv->reciprocal + q));
    _mm256_storeu_pd(xv->lambda + q, _mm256_blendv_pd(lam, _mm256_add_pd(lam, dlambda), f->valid));
    const __m256d x = _mm256_mul_pd(dlambda, u0), y = _mm256_mul_pd(dlambda, u1);
    const __m256d z = _mm256_mul_pd(dlambda, u2);
    /* Back to one row (delta_x, delta_y, delta_z, 0) per spring. */
    const __m256d zero = _mm256_setzero_pd();
    const __m256d a = _mm256_unpacklo_pd(x, y), b = _mm256_unpackhi_pd(x, y);
    const __m256d za = _mm256_unpacklo_pd(z, zero), zb = _mm256_unpackhi_pd(z, zero);
    const __m256d rows[4] = {
        _mm256_permute2f128_pd(a, za, 0x20), _mm256_permute2f128_pd(b, zb, 0x20),
        _mm256_permute2f128_pd(a, za, 0x31), _mm256_permute2f128_pd(b, zb, 0x31)};
    const int solved = _mm256_movemask_pd(f->valid);
    for (int l = 0; l < 4; l++) {
        if (!(solved >> l & 1))
            continue;
        double *ri = node + ends[2 * (q + l)], *rj = node + ends[2 * (q + l) + 1];
        const __m256d wi = _mm256_broadcast_sd(ri + 3), wj = _mm256_broadcast_sd(rj + 3);
        _mm256_store_pd(ri, _mm256_sub_pd(_mm256_load_pd(ri), _mm256_mul_pd(wi, rows[l])));
        _mm256_store_pd(rj, _mm256_add_pd(_mm256_load_pd(rj), _mm256_mul_pd(wj, rows[l])));
    }
}

/* One colour's springs [first, last), 4 at a time, software-pipelined: the next 4
 * springs' loads, square roots and divisions are issued before this 4's corrections
 * (within a colour nothing the next 4 read is written here), so that the corrections
 * never wait for the divider. */
SS_AVX2 static void colour_avx2(const xpbd_view *xv, size_t first, size_t last) {
    size_t q = first;
    if (q + 4 <= last) {
        front_avx2 now, next;
        begin_avx2(xv, q, &now);
        for (; q + 8 <= last; q += 4) {
            begin_avx2(xv, q + 4, &next);
            end_avx2(xv, q, &now);
            now = next;
        }
        end_avx2(xv, q, &now);
        q += 4;
    }
    solve_portable(xv, q, last);
}

#endif /* SS_X86_SIMD */

/* ---- The substep ------------------------------------------------------- */

/* Where the scratch holds what (see ss_xpbd_scratch_size). */
typedef struct {
    double *a, *node, *rest, *compliance, *gamma, *reciprocal, *lambda;
    uint32_t *ends;
    size_t *start; /* (colours + 1,) each colour's first spring in solve order */
} xpbd_scratch;

static xpbd_scratch carve(const ss_system *sys, double *scratch) {
    const size_t n = sys->num_nodes, m = sys->num_springs;
    xpbd_scratch p;
    p.a = scratch;
    p.node = (double *)(((uintptr_t)(scratch + n * (size_t)sys->dim) + 63) & ~(uintptr_t)63);
    p.rest = p.node + n * SS_RECORD;
    p.compliance = p.rest + m;
    p.gamma = p.compliance + m;
    p.reciprocal = p.gamma + m;
    p.lambda = p.reciprocal + m;
    p.ends = (uint32_t *)(p.lambda + m);
    p.start = (size_t *)(p.lambda + 2 * m);
    return p;
}

/* Step 2: the springs that pull, in colour order, with their constants (w from the
 * records). */
static void prepare(const ss_system *sys, double dt, const xpbd_scratch *p) {
    const double *rest = SS_DOUBLES(sys, SS_REST_LENGTHS);
    const double *stiffness = SS_DOUBLES(sys, SS_STIFFNESS);
    const double *damping = SS_DOUBLES(sys, SS_DAMPING);
    const int32_t *pairs = SS_INT32S(sys, SS_SPRINGS);
    size_t count = 0;
    for (size_t c = 0; c < sys->scratch.num_colours; c++) {
        p->start[c] = count;
        for (size_t k = sys->scratch.colour_start[c]; k < sys->scratch.colour_start[c + 1]; k++) {
            const size_t s = (size_t)sys->scratch.colour_order[k];
            const uint32_t i = (uint32_t)pairs[2 * s] * SS_RECORD;
            const uint32_t j = (uint32_t)pairs[2 * s + 1] * SS_RECORD;
            const double wsum = p->node[i + 3] + p->node[j + 3];
            if (wsum == 0.0 || stiffness[s] == 0.0) /* k = 0: infinitely compliant, no pull */
                continue;
            const double alpha = 1.0 / stiffness[s]; /* 0 for a rigid rod */
            const double alpha_dt2 = alpha / (dt * dt), gamma = alpha * damping[s] / dt;
            p->ends[2 * count] = i;
            p->ends[2 * count + 1] = j;
            p->rest[count] = rest[s];
            p->compliance[count] = alpha_dt2;
            p->gamma[count] = gamma;
            p->reciprocal[count] = 1.0 / ((1.0 + gamma) * wsum + alpha_dt2);
            count++;
        }
    }
    p->start[sys->scratch.num_colours] = count;
}

void ss_xpbd_step(ss_system *sys, double dt, double *scratch) {
    double *x = SS_DOUBLES(sys, SS_POSITIONS), *v = SS_DOUBLES(sys, SS_VELOCITIES);
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    const double *inv_mass = sys->scratch.plan->inv_mass;
    const size_t n = sys->num_nodes, dim = (size_t)sys->dim;
    const xpbd_scratch p = carve(sys, scratch);

    /* 1. The prediction, into the records. */
    ss_forces_external(sys, x, v, p.a);
    for (size_t i = 0; i < n; i++) {
        double *r = p.node + i * SS_RECORD;
        r[2] = r[6] = r[7] = 0.0; /* z and s_z in 2D */
        for (size_t k = 0; k < dim; k++) {
            const size_t ik = i * dim + k;
            r[4 + k] = x[ik];
            v[ik] = v[ik] + p.a[ik] * dt;
            r[k] = x[ik] + v[ik] * dt;
        }
        r[3] = pinned[i] ? 0.0 : inv_mass[i];
    }

    /* The contacts at the prediction: node-node pairs within reach (the margin: twice the
     * farthest predicted move, at most r_max) and self-collision's candidates. Searched
     * in x, which holds the prediction until step 4 overwrites it. */
    const int contact = !ss_array_absent(sys, SS_RADII);
    const int self = ss_self_collision_active(sys);
    const int colliders = sys->num_colliders > 0;
    int failed = 0;
    if (contact || self || colliders) {
        double moved2 = 0.0, r_max = 0.0;
        for (size_t i = 0; i < n; i++) {
            const double *r = p.node + i * SS_RECORD;
            double d2 = 0.0;
            for (size_t k = 0; k < dim; k++)
                d2 += (r[k] - r[4 + k]) * (r[k] - r[4 + k]);
            moved2 = d2 > moved2 ? d2 : moved2;
        }
        if (contact) {
            const double *radii = SS_DOUBLES(sys, SS_RADII);
            for (size_t i = 0; i < n; i++)
                r_max = radii[i] > r_max ? radii[i] : r_max;
        }
        const double margin = 2.0 * sqrt(moved2);
        /* The colliders' contacts first: a node that started inside one is moved onto it,
         * start and prediction alike, before the other searches. Within twice the
         * farthest move, and twice the largest radius (a neighbour's push), of one. */
        if (colliders)
            failed |=
                ss_collider_constraints_begin(sys, p.node, SS_RECORD, v, margin + 2.0 * r_max);
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < dim; k++)
                x[i * dim + k] = p.node[i * SS_RECORD + k];
        if (contact)
            failed |= ss_contact_constraints_begin(sys, x, v, margin < r_max ? margin : r_max, dt);
        if (self)
            failed |= ss_self_collision_constraints_begin(sys, x);
    }

    /* 2. Once per step call (each call starts at 0), and again after a spring tears. */
    if (sys->scratch.xpbd_prepared != sys->num_cut + 1) {
        prepare(sys, dt, &p);
        sys->scratch.xpbd_prepared = sys->num_cut + 1;
    }
    memset(p.lambda, 0, p.start[sys->scratch.num_colours] * sizeof(double));

    /* 3. The passes. */
    const xpbd_view xv = {p.node, p.ends, p.rest, p.compliance, p.gamma, p.reciprocal, p.lambda};
    void (*colour)(const xpbd_view *, size_t, size_t) = solve_portable;
#ifdef SS_X86_SIMD
    if (ss_simd_get() != SS_SIMD_PORTABLE)
        colour = colour_avx2;
#endif
    const size_t colours = sys->scratch.num_colours;
    const size_t overflow = colours > SS_SERIAL_COLOUR ? SS_SERIAL_COLOUR : SIZE_MAX;
    for (int pass = 0; pass < sys->iterations; pass++) {
        for (size_t c = 0; c < colours; c++)
            (c == overflow ? solve_portable : colour)(&xv, p.start[c], p.start[c + 1]);
        if (contact && !failed) /* then the contacts, one after another (contact.c) */
            ss_contact_constraints_solve(sys, p.node, SS_RECORD);
        if (self && !failed)
            ss_self_collision_constraints_solve(sys, p.node, SS_RECORD);
        if (colliders && !failed) /* last: a collider has the final say in each pass */
            ss_collider_constraints_solve(sys, p.node, SS_RECORD);
    }

    /* 4. Back to x, and v from the motion. */
    for (size_t i = 0; i < n; i++) {
        const double *r = p.node + i * SS_RECORD;
        for (size_t k = 0; k < dim; k++) {
            const size_t ik = i * dim + k;
            x[ik] = r[k];
            if (!pinned[i]) /* pinned nodes keep v: they moved by exactly v dt */
                v[ik] = (r[k] - r[4 + k]) / dt;
        }
    }

    /* 5. Restitution of the node-node contacts, then the colliders', that pushed
     * (contact.c, collider_constraints.c), below 2 |g| dt
     * none; the external forces' work over the substep, for the books (integrate.c). */
    size_t pushed = 0;
    double g2 = 0.0;
    for (size_t k = 0; k < dim; k++)
        g2 += sys->gravity[k] * sys->gravity[k];
    const double threshold = 2.0 * sqrt(g2) * dt;
    if (contact && !failed)
        pushed += ss_contact_constraints_restitute(sys, x, v, inv_mass, threshold);
    if (self && !failed)
        pushed += ss_self_collision_constraints_pushed(sys);
    if (colliders && !failed)
        pushed += ss_collider_constraints_restitute(sys, x, v, threshold);
    sys->scratch.xpbd_pushed = pushed;
    double work = 0.0;
    if (pushed && sys->track_energy && !ss_array_absent(sys, SS_EXTERNAL)) {
        const double *f = SS_DOUBLES(sys, SS_EXTERNAL);
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < dim && !pinned[i]; k++)
                work +=
                    f[i * dim + k] * (p.node[i * SS_RECORD + k] - p.node[i * SS_RECORD + 4 + k]);
    }
    sys->scratch.xpbd_work = work;
    if (failed) /* out of memory for the contacts: the step fails and rolls back */
        for (size_t k = 0; k < n * dim; k++)
            x[k] = NAN;
}
