/* rk4.c - classical fourth-order Runge-Kutta on (x, v): slopes at the start, twice at
 * the midpoint and at the end, weighted 1, 2, 2, 1.
 *
 * Each stage's update of a node reads only that node's own entries, so it runs inside
 * the force evaluation (ss_forces_then), range by range, as soon as the range's forces
 * are complete: the acceleration a = f / m (0 if pinned) is formed in registers and
 * never stored, and the next evaluation point is written while the range is in cache.
 * The arithmetic is springsim.reference._rk4's, operation for operation:
 *     stage 1: a1 at (x, v);   xs = x + h v,   vs = v + h a1        (h = dt / 2)
 *     stage 2: a2 at (xs, vs); sum_v = v + 2 vs, sum_a = a1 + 2 a2; xs = x + h vs, ...
 *     stage 3: a3;             sum_v += 2 vs,  sum_a += 2 a3;       xs = x + dt vs, ...
 *     stage 4: a4;             x += dt/6 (sum_v + vs),  v += dt/6 (sum_a + a4)
 * (pinned nodes: every slope is 0 and x += v dt). */
#include "springsim.h"

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define SS_X86_SIMD 1
#define SS_AVX2 __attribute__((target("avx2")))
#endif

typedef struct {
    double *x, *v, *xs, *vs, *sum_v, *sum_a;
    size_t dim;
    double half_dt, dt, sixth_dt;
} rk4_state;

/* Nodes per chunk: their accelerations are formed into a buffer on the stack (in L1),
 * then the stage runs as flat loops over the chunk's components, which vectorise. */
#define RK4_CHUNK 64

/* One stage for nodes [first, last); dim and stage are constants in each instance
 * below. */
SS_ALWAYS_INLINE void rk4_stage_dim(const rk4_state *r, const ss_force_rows *rows, size_t first,
                                    size_t last, const size_t dim, const int stage) {
    double *restrict x = r->x, *restrict v = r->v, *restrict xs = r->xs, *restrict vs = r->vs;
    double *restrict sum_v = r->sum_v, *restrict sum_a = r->sum_a;
    const uint8_t *restrict pinned = rows->pinned;
    const double h = r->half_dt, dt = r->dt, sixth_dt = r->sixth_dt;
    double acc[RK4_CHUNK * 3];
    uint8_t held[RK4_CHUNK * 3];
    for (size_t start = first; start < last; start += RK4_CHUNK) {
        const size_t end = last - start < RK4_CHUNK ? last : start + RK4_CHUNK;
        ss_node_accelerations(rows, start, end, dim, acc);
        if (stage == 4)
            for (size_t i = start; i < end; i++)
                for (size_t k = 0; k < dim; k++)
                    held[(i - start) * dim + k] = pinned[i];
        const size_t base = start * dim, count = (end - start) * dim;
        for (size_t j = 0; j < count; j++) {
            const size_t ik = base + j;
            const double a = acc[j];
            if (stage == 1) {
                sum_a[ik] = a;
                xs[ik] = x[ik] + h * v[ik];
                vs[ik] = v[ik] + h * a;
            } else if (stage == 2 || stage == 3) {
                const double step = stage == 2 ? h : dt;
                sum_v[ik] = (stage == 2 ? v[ik] : sum_v[ik]) + 2.0 * vs[ik];
                sum_a[ik] = sum_a[ik] + 2.0 * a;
                xs[ik] = x[ik] + step * vs[ik];
                vs[ik] = v[ik] + step * a;
            } else {
                const double moved = x[ik] + v[ik] * dt;
                const double solved = x[ik] + sixth_dt * (sum_v[ik] + vs[ik]);
                x[ik] = held[j] ? moved : solved;
                v[ik] = v[ik] + sixth_dt * (sum_a[ik] + a);
            }
        }
    }
}

/* Every instance a stage needs, for one set of target options. */
#define RK4_STAGE_ALL(name, attributes, stage)                                                     \
    attributes static void name(const rk4_state *r, const ss_force_rows *rows, size_t first,       \
                                size_t last) {                                                     \
        if (r->dim == 3)                                                                           \
            rk4_stage_dim(r, rows, first, last, 3, stage);                                         \
        else                                                                                       \
            rk4_stage_dim(r, rows, first, last, 2, stage);                                         \
    }

#ifdef SS_X86_SIMD
/* The flat loops with 256-bit vectors: the same operations element by element. */
#define RK4_STAGE(stage)                                                                           \
    RK4_STAGE_ALL(rk4_portable##stage, , stage)                                                    \
    RK4_STAGE_ALL(rk4_avx2##stage, SS_AVX2, stage)                                                 \
    static void rk4_stage##stage(void *context, const ss_force_rows *rows, size_t first,           \
                                 size_t last) {                                                    \
        if (ss_simd_get() != SS_SIMD_PORTABLE)                                                     \
            rk4_avx2##stage(context, rows, first, last);                                           \
        else                                                                                       \
            rk4_portable##stage(context, rows, first, last);                                       \
    }
#else
#define RK4_STAGE(stage)                                                                           \
    RK4_STAGE_ALL(rk4_portable##stage, , stage)                                                    \
    static void rk4_stage##stage(void *context, const ss_force_rows *rows, size_t first,           \
                                 size_t last) {                                                    \
        rk4_portable##stage(context, rows, first, last);                                           \
    }
#endif

RK4_STAGE(1)
RK4_STAGE(2)
RK4_STAGE(3)
RK4_STAGE(4)

size_t ss_rk4_scratch_doubles(const ss_system *sys) {
    return 4 * sys->num_nodes * (size_t)sys->dim;
}

void ss_step_rk4(ss_system *sys, double dt, double *scratch) {
    const size_t nd = sys->num_nodes * (size_t)sys->dim;
    const rk4_state r = {SS_DOUBLES(sys, SS_POSITIONS),
                         SS_DOUBLES(sys, SS_VELOCITIES),
                         scratch,
                         scratch + nd,
                         scratch + 2 * nd,
                         scratch + 3 * nd,
                         (size_t)sys->dim,
                         0.5 * dt,
                         dt,
                         dt / 6.0};
    ss_forces_then(sys, r.x, r.v, rk4_stage1, (void *)&r);   /* slope 1 */
    ss_forces_then(sys, r.xs, r.vs, rk4_stage2, (void *)&r); /* slope 2, midpoint */
    ss_forces_then(sys, r.xs, r.vs, rk4_stage3, (void *)&r); /* slope 3, midpoint */
    ss_forces_then(sys, r.xs, r.vs, rk4_stage4, (void *)&r); /* slope 4, the end */
}
