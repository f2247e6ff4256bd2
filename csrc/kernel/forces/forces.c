/* forces.c - springs (Hooke + axial damping), gravity, linear drag towards the wind,
 * external forces, gas pressure, air on faces; turned into accelerations, or
 * (symplectic Euler) straight into the new velocities and positions.
 *
 * One evaluation is two passes over the blocks of the spring plan (plan.c):
 *   1. per block: the node forces of its nodes, then its interior springs, in index
 *      order (spring_pass.c); and, split evenly, the forces of the springs between
 *      blocks into the plan's buffer;
 *   2. per block: the between-block forces into its nodes (by node, in spring order),
 *      then the division by mass (and, fused, the symplectic Euler update).
 * With threads, blocks go to whichever thread is free, and the two passes are
 * separated by one barrier; gas pressure (few elements, a sum over each body's
 * boundary), then the air on faces (aero.c), then node-node contact (contact.c: its
 * pairs in their fixed order), then self-contact (self_collision.c), are added between
 * them by one thread. The contact pairs are found before the region (they read x
 * only); their forces are computed by the threads with the between-block springs,
 * each pair into its own scratch row, and the one thread adds the rows in pair order.
 * Every node receives its forces in one order whatever the number of threads, so the
 * results are bit-identical. */
#include "springsim.h"

#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* What pass 2 leaves: accelerations, or the symplectic Euler update. */
typedef enum { SS_FINISH_ACCELERATION, SS_FINISH_SYMPLECTIC } ss_finish;

typedef struct {
    ss_system *sys;
    ss_spring_view springs;
    const double *x, *v;
    double *forces; /* (N, ss_force_stride(dim)): the plan's force rows */
    double *out;    /* (N, dim) accelerations (SS_FINISH_ACCELERATION) */
    ss_finish finish;
    double dt;
    double *v_out, *x_out;   /* SS_FINISH_SYMPLECTIC: updated in place */
    double *save_x, *save_v; /* SS_FINISH_SYMPLECTIC: x and v before it (or NULL) */
    int check;               /* SS_FINISH_SYMPLECTIC: sum the finiteness probe */
    ss_node_finish then;     /* SS_FINISH_ACCELERATION: called per block of finished nodes
                              * instead of writing out */
    void *context;
} evaluation;

/* Forces (rows `stride` apart) to accelerations a (N, dim) for nodes [first, last);
 * pinned nodes get 0. f and a may be the same array when stride == dim. */
static void divide_by_mass(const ss_system *sys, size_t first, size_t last, const double *f,
                           size_t stride, double *a) {
    const size_t dim = (size_t)sys->dim;
    const double *inv_mass = sys->scratch.plan->inv_mass;
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    for (size_t i = first; i < last; i++) {
        for (size_t k = 0; k < dim; k++)
            a[i * dim + k] = pinned[i] ? 0.0 : f[i * stride + k] * inv_mass[i];
    }
}

static double symplectic_update(const evaluation *e, size_t first, size_t last, size_t stride) {
    return ss_node_symplectic(e->sys, first, last, e->forces, stride, e->dt, e->v_out, e->x_out,
                              e->save_x, e->save_v, e->check);
}

/* Pass 1 for block b. */
static void block_springs(const evaluation *e, size_t b) {
    const ss_plan *plan = e->sys->scratch.plan;
    ss_node_forces(e->sys, plan->node_start[b], plan->node_start[b + 1], e->v, e->forces,
                   ss_force_stride(e->sys->dim));
    for (size_t r = plan->run_start[b]; r < plan->run_start[b + 1]; r++)
        ss_springs_scatter(&e->springs, e->sys->dim, plan->runs[2 * r], plan->runs[2 * r + 1],
                           e->forces);
}

/* Pass 1, shared: the forces of the between-block springs [first, last) of the list. */
static void cross_springs(const evaluation *e, size_t first, size_t last) {
    const ss_plan *plan = e->sys->scratch.plan;
    ss_springs_forces(&e->springs, e->sys->dim, plan->cross + first, last - first,
                      plan->cross_forces + first * ss_force_stride(e->sys->dim));
}

/* Pass 2 for block b. */
static void block_finish(const evaluation *e, size_t b) {
    const ss_system *sys = e->sys;
    const ss_plan *plan = sys->scratch.plan;
    const size_t dim = (size_t)sys->dim, stride = ss_force_stride(sys->dim);
    for (size_t k = plan->end_start[b]; k < plan->end_start[b + 1]; k++) {
        const int32_t entry = plan->end_entry[k];
        const double *F = plan->cross_forces + (size_t)(entry >= 0 ? entry : ~entry) * stride;
        double *f = e->forces + (size_t)plan->end_node[k] * stride;
        for (size_t q = 0; q < dim; q++) {
            if (entry >= 0)
                f[q] += F[q];
            else
                f[q] -= F[q];
        }
    }
    const size_t first = plan->node_start[b], last = plan->node_start[b + 1];
    if (e->finish == SS_FINISH_SYMPLECTIC) {
        plan->block_probe[b] = symplectic_update(e, first, last, stride);
    } else if (e->then) {
        const ss_force_rows rows = {e->forces, stride, plan->inv_mass, SS_BYTES(sys, SS_PINNED)};
        e->then(e->context, &rows, first, last);
    } else {
        divide_by_mass(sys, first, last, e->forces, stride, e->out);
    }
}

/* How many pieces the between-block list is cut into for threads. */
#define SS_CROSS_PIECES 64
/* Contact pairs per piece at least (a piece's cost should dwarf taking it: a pair
 * costs about as much as a spring), and pieces at most, per contact pass. */
#define SS_CONTACT_PIECE_PAIRS 512
#define SS_CONTACT_PIECES 64

#ifdef _OPENMP
/* Pieces the pair list of a contact pass is cut into: contiguous ranges of pairs. */
static long contact_pieces(long long pairs) {
    const long long pieces = (pairs + SS_CONTACT_PIECE_PAIRS - 1) / SS_CONTACT_PIECE_PAIRS;
    return (long)(pieces < SS_CONTACT_PIECES ? pieces : SS_CONTACT_PIECES);
}
#endif

static void evaluate(const evaluation *e) {
    ss_system *sys = e->sys;
    const ss_plan *plan = sys->scratch.plan;
    const size_t blocks = plan->num_blocks;
    const int threads = ss_threads_for(sys);
    const int air = ss_aero_active(sys), self = ss_self_collision_active(sys);
    const int touch = !ss_array_absent(sys, SS_RADII); /* some node may have a radius */
    const size_t stride = ss_force_stride(sys->dim);
    if (threads <= 1 || blocks == 1) {
        if (!sys->num_bodies && !air && !touch && !self) {
            /* One thread, nothing added between the passes: the between-block forces
             * first (they read only x and v), then each block's two passes back to
             * back while its nodes are in cache (6 % faster on the 1000x1000 cloth,
             * the same on small ones). Every node sums the same terms in the same
             * order as below, so the bits do not change. */
            cross_springs(e, 0, plan->num_cross);
            for (size_t b = 0; b < blocks; b++) {
                block_springs(e, b);
                block_finish(e, b);
            }
            return;
        }
        for (size_t b = 0; b < blocks; b++)
            block_springs(e, b);
        cross_springs(e, 0, plan->num_cross);
        if (sys->num_bodies)
            ss_pressure_add_forces(sys, e->x, e->forces, ss_force_stride(sys->dim));
        if (air)
            ss_aero_add_forces(sys, e->x, e->v, e->forces, stride);
        if (touch)
            ss_contact_add_forces(sys, e->x, e->v, e->forces, stride);
        if (self)
            ss_self_collision_add_forces(sys, e->x, e->v, e->forces, stride);
        for (size_t b = 0; b < blocks; b++)
            block_finish(e, b);
        return;
    }
#ifdef _OPENMP
    /* The contact searches read x only: done here, on this thread (as before, when all of
     * contact ran in the single block), so that the pairs' forces can join the loop of
     * the between-block springs and the region keeps its two barriers. */
    if (touch)
        ss_contact_search(sys, e->x);
    if (self)
        ss_self_collision_search(sys, e->x);
    const long long touches = touch ? (long long)ss_contact_num_pairs(sys) : 0;
    const long long selfs = self ? (long long)ss_self_collision_num_pairs(sys) : 0;
    const long node_pieces = contact_pieces(touches), self_pieces = contact_pieces(selfs);
    /* long: OpenMP 2.0 (MSVC) wants a signed loop index; cross is 64-bit even where long
     * is 32 (Windows), so that cross * piece cannot overflow. */
    const long count = (long)blocks;
    const long long cross = (long long)plan->num_cross;
    const long pieces = SS_CROSS_PIECES + node_pieces + self_pieces;
#pragma omp parallel num_threads(threads)
    {
        const ss_fpstate fp = ss_fp_enter(); /* the same rounding on every thread */
#pragma omp for schedule(dynamic, 1) nowait
        for (long b = 0; b < count; b++)
            block_springs(e, (size_t)b);
            /* Barrier 1 (this loop's end). Each piece writes its own rows of scratch, so any
             * thread may take any piece. */
#pragma omp for schedule(dynamic, 1)
        for (long piece = 0; piece < pieces; piece++) {
            if (piece < SS_CROSS_PIECES) {
                cross_springs(e, (size_t)(cross * piece / SS_CROSS_PIECES),
                              (size_t)(cross * (piece + 1) / SS_CROSS_PIECES));
            } else if (piece < SS_CROSS_PIECES + node_pieces) {
                const long long q = piece - SS_CROSS_PIECES;
                ss_contact_pair_forces(sys, e->x, e->v, (size_t)(touches * q / node_pieces),
                                       (size_t)(touches * (q + 1) / node_pieces));
            } else {
                const long long q = piece - SS_CROSS_PIECES - node_pieces;
                ss_self_collision_pair_forces(sys, e->x, e->v, (size_t)(selfs * q / self_pieces),
                                              (size_t)(selfs * (q + 1) / self_pieces));
            }
        }
        if (sys->num_bodies || air || touch || self) {
            /* Barrier 2 (the single's end): everything added to the nodes, serially in
             * the serial code's order. */
#pragma omp single
            {
                if (sys->num_bodies)
                    ss_pressure_add_forces(sys, e->x, e->forces, stride);
                if (air)
                    ss_aero_add_forces(sys, e->x, e->v, e->forces, stride);
                if (touch)
                    ss_contact_gather_forces(sys, e->forces, stride);
                if (self)
                    ss_self_collision_gather_forces(sys, e->forces, stride);
            }
        }
#pragma omp for schedule(dynamic, 1) nowait
        for (long b = 0; b < count; b++)
            block_finish(e, (size_t)b);
        ss_fp_leave(fp);
    }
#endif
}

static evaluation prepare(ss_system *sys, const double *x, const double *v, double *out) {
    const evaluation e = {sys,
                          {SS_INT32S(sys, SS_SPRINGS), SS_DOUBLES(sys, SS_REST_LENGTHS),
                           SS_DOUBLES(sys, SS_STIFFNESS), SS_DOUBLES(sys, SS_DAMPING), x, v,
                           sys->num_nodes},
                          x,
                          v,
                          sys->scratch.plan->forces,
                          out,
                          SS_FINISH_ACCELERATION,
                          0.0,
                          NULL,
                          NULL,
                          NULL,
                          NULL,
                          0,
                          NULL,
                          NULL};
    return e;
}

/* a = (springs + m g - drag (v - wind) + external + gas + air) / m  [m/s^2]; a = 0 if
 * pinned. Needs the plan (ss_system_ensure_plan). */
void ss_forces_acceleration(ss_system *sys, const double *x, const double *v, double *a) {
    const evaluation e = prepare(sys, x, v, a);
    evaluate(&e);
}

void ss_forces_then(ss_system *sys, const double *x, const double *v, ss_node_finish then,
                    void *context) {
    evaluation e = prepare(sys, x, v, NULL);
    e.then = then;
    e.context = context;
    evaluate(&e);
}

int ss_forces_symplectic_euler(ss_system *sys, double dt, double *save_x, double *save_v,
                               int check) {
    double *x = SS_DOUBLES(sys, SS_POSITIONS), *v = SS_DOUBLES(sys, SS_VELOCITIES);
    evaluation e = prepare(sys, x, v, NULL);
    e.finish = SS_FINISH_SYMPLECTIC;
    e.dt = dt;
    e.v_out = v;
    e.x_out = x;
    e.save_x = save_x;
    e.save_v = save_v;
    e.check = check;
    evaluate(&e);
    if (!check)
        return 0;
    double probe = 0.0;
    for (size_t b = 0; b < sys->scratch.plan->num_blocks; b++)
        probe += sys->scratch.plan->block_probe[b];
    return probe == 0.0;
}

/* Every force but the springs' as an acceleration: node forces, gas, air on faces and,
 * with `contacts`, node-node contact and self-collision. */
static void forces_beside_springs(ss_system *sys, const double *x, const double *v, double *a,
                                  int contacts) {
    const size_t dim = (size_t)sys->dim;
    ss_node_forces(sys, 0, sys->num_nodes, v, a, dim);
    ss_pressure_add_forces(sys, x, a, dim);
    if (ss_aero_active(sys))
        ss_aero_add_forces(sys, x, v, a, dim);
    if (contacts && !ss_array_absent(sys, SS_RADII))
        ss_contact_add_forces(sys, x, v, a, dim);
    if (contacts && ss_self_collision_active(sys))
        ss_self_collision_add_forces(sys, x, v, a, dim);
    divide_by_mass(sys, 0, sys->num_nodes, a, dim, a);
}

void ss_forces_external(ss_system *sys, const double *x, const double *v, double *a) {
    forces_beside_springs(sys, x, v, a, 0);
}

void ss_forces_beside_springs(ss_system *sys, const double *x, const double *v, double *a) {
    forces_beside_springs(sys, x, v, a, 1);
}
