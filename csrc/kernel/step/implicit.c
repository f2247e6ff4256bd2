/* implicit.c - linearised backward Euler (Baraff & Witkin 1998) with a Jacobi-
 * preconditioned conjugate-gradient solve, and the springs' stiffness matrix.
 *
 * One substep solves
 *     (M - dt df/dv - dt^2 df/dx) dv = dt (f + dt df/dx v),   v' = v + dv,  x' = x + dt v'
 * for the free nodes (pinned ones keep their velocity). df/dv is the spring damping
 * (-c u u^T per spring) and drag (-drag I); df/dx is minus the springs' projected
 * Hessian. Node-node contacts touching at x join both as compressed springs of
 * stiffness k_c along their normal u (rest length r_i + r_j, so the projected
 * transverse term is 0) with their dashpot c u u^T (contact.c); their friction,
 * gas pressure, the air on faces, gravity and external forces enter f only
 * (explicitly).
 *
 * The Hessian of spring s = (i, j) with length l, rest length L, unit vector u:
 *     K = k [u u^T + (1 - L/l)(I - u u^T)],   blocks (i,i), (j,j) += K, (i,j), (j,i) -= K.
 * A compressed spring (l < L) has a negative transverse term (it can buckle), which
 * would make the matrix indefinite; the projected Hessian clamps 1 - L/l at 0 (Choi &
 * Ko 2002), so M + dt D + dt^2 K is symmetric positive definite and CG always
 * applies. stiffness_matrix() reports the exact one. */
#include "springsim.h"

#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Per-spring data of one substep: the unit vector u (dim) and the transverse
 * stiffness k max(0, 1 - L/l) (exact: k (1 - L/l)); u = 0 and k_t = 0 for a spring
 * shorter than the force loop's cutoff (it exerts no force). */
static void spring_frames(const ss_system *sys, const double *x, int projected, double *u,
                          double *k_t) {
    const size_t dim = (size_t)sys->dim;
    const int32_t *pairs = SS_INT32S(sys, SS_SPRINGS);
    const double *rest = SS_DOUBLES(sys, SS_REST_LENGTHS);
    const double *k = SS_DOUBLES(sys, SS_STIFFNESS);
    for (size_t s = 0; s < sys->num_springs; s++) {
        const size_t i = (size_t)pairs[2 * s] * dim, j = (size_t)pairs[2 * s + 1] * dim;
        double length2 = 0.0;
        for (size_t c = 0; c < dim; c++) {
            u[s * dim + c] = x[j + c] - x[i + c];
            length2 += u[s * dim + c] * u[s * dim + c];
        }
        if (length2 < 1e-24) {
            for (size_t c = 0; c < dim; c++)
                u[s * dim + c] = 0.0;
            k_t[s] = 0.0;
            continue;
        }
        const double length = sqrt(length2);
        for (size_t c = 0; c < dim; c++)
            u[s * dim + c] /= length;
        const double transverse = 1.0 - rest[s] / length;
        k_t[s] = k[s] * (projected && transverse < 0.0 ? 0.0 : transverse);
    }
}

/* Per-spring coefficients of a block product: g = axial_minus_t (u . dp) u + t dp. */
typedef struct {
    const int32_t *restrict pairs;
    const int32_t *restrict order; /* springs in colour order (parallel.c) */
    const double *restrict u;      /* (M, dim) unit vectors */
    const double *restrict axial;  /* (M,) axial minus transverse coefficient */
    const double *restrict transverse;
} block_data;

/* out += the block products of springs order[first, last) applied to p:
 *     dp = p_i - p_j,  g = axial (u . dp) u + transverse dp,  out_i += g,  out_j -= g. */
static void add_blocks_in_order(block_data b, size_t first, size_t last, int dim,
                                const double *restrict p, double *restrict out) {
    for (size_t q = first; q < last; q++) {
        const size_t s = (size_t)b.order[q];
        const size_t i = (size_t)b.pairs[2 * s] * dim, j = (size_t)b.pairs[2 * s + 1] * dim;
        const double *us = b.u + s * dim;
        double dp[3], along = 0.0;
        for (int c = 0; c < dim; c++) {
            dp[c] = p[i + c] - p[j + c];
            along += us[c] * dp[c];
        }
        const double a = b.axial[s] * along, t = b.transverse[s];
        for (int c = 0; c < dim; c++) {
            const double g = a * us[c] + t * dp[c];
            out[i + c] += g;
            out[j + c] -= g;
        }
    }
}

/* out += sum of every spring's block product with p, in colour order: by colours on
 * several threads for a large system (no two springs of a colour share a node), so the
 * sums, and the result, are the same for any number of threads. */
static void add_spring_blocks(const ss_system *sys, block_data b, const double *p, double *out) {
    const int dim = sys->dim, threads = ss_threads_for(sys);
    if (threads <= 1) {
        add_blocks_in_order(b, 0, sys->num_springs, dim, p, out);
        return;
    }
#ifdef _OPENMP
#pragma omp parallel num_threads(threads)
    {
        const ss_fpstate fp = ss_fp_enter(); /* the same rounding on every thread */
        const int t = omp_get_thread_num(), team = omp_get_num_threads();
        for (size_t c = 0; c < sys->scratch.num_colours; c++) {
            const size_t start = sys->scratch.colour_start[c],
                         size = sys->scratch.colour_start[c + 1] - start;
            if (c == SS_SERIAL_COLOUR) {
                if (t == 0)
                    add_blocks_in_order(b, start, start + size, dim, p, out);
            } else {
                const size_t lo = size * (size_t)t / (size_t)team;
                const size_t hi = size * (size_t)(t + 1) / (size_t)team;
                add_blocks_in_order(b, start + lo, start + hi, dim, p, out);
            }
#pragma omp barrier
        }
        ss_fp_leave(fp);
    }
#endif
}

/* Fill the block coefficients scale_c c + scale_k k (axial, minus the transverse one)
 * and scale_k k_t (transverse): (0, 1) gives the Hessian K, (dt, dt^2) gives
 * dt D_springs + dt^2 K. */
static void block_coefficients(const ss_system *sys, const double *k_t, double scale_c,
                               double scale_k, double *axial, double *transverse) {
    const double *k = SS_DOUBLES(sys, SS_STIFFNESS), *c = SS_DOUBLES(sys, SS_DAMPING);
    for (size_t s = 0; s < sys->num_springs; s++) {
        transverse[s] = scale_k * k_t[s];
        axial[s] = (scale_c == 0.0 ? 0.0 : scale_c * c[s]) + scale_k * k[s] - transverse[s];
    }
}

static double dot(const double *a, const double *b, size_t n) {
    double sum = 0.0;
    for (size_t k = 0; k < n; k++)
        sum += a[k] * b[k];
    return sum;
}

/* The system matrix applied to p: (M + dt drag + dt D + dt^2 K) p on free rows, with
 * pinned entries of p taken as 0 (they are not unknowns) and pinned rows set to p. */
static void apply_matrix(const ss_system *sys, double dt, block_data blocks, int touch, double *p,
                         double *out) {
    const size_t n = sys->num_nodes, dim = (size_t)sys->dim;
    const double *m = SS_DOUBLES(sys, SS_MASSES);
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    for (size_t i = 0; i < n; i++)
        for (size_t q = i * dim; q < (i + 1) * dim; q++)
            out[q] = (m[i] + dt * sys->drag) * p[q];
    add_spring_blocks(sys, blocks, p, out);
    if (touch)
        ss_contact_add_blocks(sys, p, out); /* pinned entries of p: their rows are reset below */
    for (size_t i = 0; i < n; i++)
        if (pinned[i])
            for (size_t q = i * dim; q < (i + 1) * dim; q++)
                out[q] = p[q];
}

/* Jacobi preconditioner: the inverse of the matrix's diagonal (1 for pinned rows). */
static void inverse_diagonal(const ss_system *sys, double dt, block_data blocks, int touch,
                             double *inv) {
    const size_t n = sys->num_nodes, dim = (size_t)sys->dim;
    const double *m = SS_DOUBLES(sys, SS_MASSES);
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    for (size_t i = 0; i < n; i++)
        for (size_t q = i * dim; q < (i + 1) * dim; q++)
            inv[q] = m[i] + dt * sys->drag;
    for (size_t s = 0; s < sys->num_springs; s++)
        for (int end = 0; end < 2; end++) {
            const size_t i = (size_t)blocks.pairs[2 * s + end] * dim;
            for (size_t q = 0; q < dim; q++)
                inv[i + q] += blocks.axial[s] * blocks.u[s * dim + q] * blocks.u[s * dim + q] +
                              blocks.transverse[s];
        }
    if (touch)
        ss_contact_add_diagonal(sys, inv);
    for (size_t i = 0; i < n; i++)
        for (size_t q = i * dim; q < (i + 1) * dim; q++)
            inv[q] = pinned[i] ? 1.0 : 1.0 / inv[q];
}

/* Preconditioned CG for A x = b from x = 0, stopping when |r| <= tol |b| (the
 * recursively updated residual) or after max_iterations. Records the iterations and
 * |r| / |b| in sys. A solve that breaks down (b or A p not finite: forces or k dt^2
 * beyond double precision) returns x = NaN, so that the step fails and rolls back
 * instead of leaving the velocities unchanged. Work: r, z, p, Ap (4 nd doubles). */
static void solve(ss_system *sys, double dt, block_data blocks, int touch, const double *b,
                  const double *inv_diag, double *x, double *work) {
    const size_t nd = sys->num_nodes * (size_t)sys->dim;
    double *r = work, *z = r + nd, *p = z + nd, *ap = p + nd;
    const double b_norm = sqrt(dot(b, b, nd));
    memset(x, 0, nd * sizeof(double));
    int iterations = 0;
    double residual = 0.0;
    if (b_norm > 0.0) {
        memcpy(r, b, nd * sizeof(double));
        for (size_t q = 0; q < nd; q++)
            p[q] = z[q] = inv_diag[q] * r[q];
        double rz = dot(r, z, nd);
        residual = 1.0;
        while (iterations < sys->cg_max_iterations && residual > sys->cg_tolerance) {
            apply_matrix(sys, dt, blocks, touch, p, ap);
            const double curvature = dot(p, ap, nd);
            if (!(curvature > 0.0) || !isfinite(curvature)) { /* non-finite values */
                residual = NAN;
                break;
            }
            const double alpha = rz / curvature;
            for (size_t q = 0; q < nd; q++) {
                x[q] += alpha * p[q];
                r[q] -= alpha * ap[q];
            }
            iterations++;
            residual = sqrt(dot(r, r, nd)) / b_norm;
            if (residual <= sys->cg_tolerance)
                break;
            for (size_t q = 0; q < nd; q++)
                z[q] = inv_diag[q] * r[q];
            const double rz_next = dot(r, z, nd);
            const double beta = rz_next / rz;
            rz = rz_next;
            for (size_t q = 0; q < nd; q++)
                p[q] = z[q] + beta * p[q];
        }
    }
    if (!(b_norm < INFINITY) || isnan(residual))
        for (size_t q = 0; q < nd; q++)
            x[q] = NAN; /* broke down: the step rolls back */
    sys->last_cg_iterations = iterations;
    sys->last_cg_residual = residual;
    sys->cg_substeps++;
    if (!(residual <= sys->cg_tolerance))
        sys->cg_capped++;
}

size_t ss_implicit_scratch_size(const ss_system *sys) {
    const size_t nd = sys->num_nodes * (size_t)sys->dim;
    return 7 * nd + sys->num_springs * ((size_t)sys->dim + 3);
}

void ss_implicit_euler_step(ss_system *sys, double dt, double *scratch) {
    double *x = SS_DOUBLES(sys, SS_POSITIONS), *v = SS_DOUBLES(sys, SS_VELOCITIES);
    const double *m = SS_DOUBLES(sys, SS_MASSES);
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    const size_t n = sys->num_nodes, dim = (size_t)sys->dim, nd = n * dim;
    const size_t springs = sys->num_springs;
    double *b = scratch, *dv = b + nd, *inv_diag = dv + nd, *work = inv_diag + nd;
    double *u = work + 4 * nd, *k_t = u + springs * dim, *axial = k_t + springs;
    double *transverse = axial + springs;
    block_data blocks = {SS_INT32S(sys, SS_SPRINGS), sys->scratch.colour_order, u, axial,
                         transverse};

    ss_forces_acceleration(sys, x, v, b); /* a = f / m, 0 when pinned */
    /* the evaluation found the contacts at x (and failed, poisoning b, if it could not) */
    const int touch = !ss_array_absent(sys, SS_RADII) && ss_contact_num_pairs(sys);
    spring_frames(sys, x, 1, u, k_t);
    /* b = dt (f - dt K v): f = m a, and -dt K v from the projected Hessian. */
    block_coefficients(sys, k_t, 0.0, 1.0, axial, transverse);
    memset(dv, 0, nd * sizeof(double));
    add_spring_blocks(sys, blocks, v, dv); /* dv holds K v for now */
    if (touch) {
        ss_contact_frames(sys, x, 0.0, 1.0);
        ss_contact_add_blocks(sys, v, dv);
        ss_contact_frames(sys, x, dt, dt * dt);
    }
    for (size_t i = 0; i < n; i++)
        for (size_t q = i * dim; q < (i + 1) * dim; q++)
            b[q] = pinned[i] ? 0.0 : dt * (m[i] * b[q] - dt * dv[q]);
    block_coefficients(sys, k_t, dt, dt * dt, axial, transverse);
    inverse_diagonal(sys, dt, blocks, touch, inv_diag);
    solve(sys, dt, blocks, touch, b, inv_diag, dv, work);
    for (size_t i = 0; i < n; i++)
        for (size_t q = i * dim; q < (i + 1) * dim; q++) {
            if (!pinned[i])
                v[q] += dv[q];
            x[q] += dt * v[q];
        }
}

ss_status ss_stiffness_triplets(ss_system *sys, int64_t *rows, int64_t *cols, double *values) {
    const size_t dim = (size_t)sys->dim, m = sys->num_springs;
    const int32_t *pairs = SS_INT32S(sys, SS_SPRINGS);
    const double *k = SS_DOUBLES(sys, SS_STIFFNESS);
    double *u = ss_malloc(m * (dim + 1) * sizeof(double) + 1);
    if (!u)
        return ss_fail(sys, SS_ERR_NOMEM, "out of memory building the stiffness matrix");
    double *k_t = u + m * dim;
    spring_frames(sys, SS_DOUBLES(sys, SS_POSITIONS), 0, u, k_t);
    size_t e = 0;
    for (size_t s = 0; s < m; s++) {
        if (isinf(k[s])) {
            ss_free(u);
            return ss_fail(sys, SS_ERR_VALUE,
                           "spring %zu is a rigid rod (stiffness inf): it has no finite stiffness "
                           "matrix",
                           s);
        }
        const int32_t ends[2] = {pairs[2 * s], pairs[2 * s + 1]};
        for (size_t a = 0; a < dim; a++)
            for (size_t c = 0; c < dim; c++) {
                const double uu = u[s * dim + a] * u[s * dim + c];
                const double block = (k[s] - k_t[s]) * uu + (a == c ? k_t[s] : 0.0);
                for (int p = 0; p < 2; p++)
                    for (int q = 0; q < 2; q++) {
                        rows[e] = (int64_t)((size_t)ends[p] * dim + a);
                        cols[e] = (int64_t)((size_t)ends[q] * dim + c);
                        values[e++] = p == q ? block : -block;
                    }
            }
    }
    ss_free(u);
    return SS_OK;
}
