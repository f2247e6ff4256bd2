/* forces.c - springs (Hooke + axial damping), gravity, linear drag towards the wind,
 * external forces; turned into accelerations. */
#include "springsim.h"

#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Springs shorter than this (m) exert no force: their direction is undefined. */
#define SS_MIN_SPRING_LENGTH 1e-12

/* The spring arrays the force loop reads, loaded once per loop. */
typedef struct {
    const int32_t *restrict pairs;
    const double *restrict rest, *restrict stiffness, *restrict damping;
} spring_data;

/* Add spring s's force to both its nodes, for a fixed dimension (so the compiler
 * unrolls the inner loops).
 *
 * For spring (i, j) with d = x_j - x_i, l = |d|, u = d / l:
 *     F_i = (k (l - L) + c (v_j - v_i).u) u,    F_j = -F_i     [N]
 * One reciprocal square root per spring gives both l and u. */
static inline void add_spring_force(spring_data sp, size_t s, const double *restrict x,
                                    const double *restrict v, double *restrict f, const int dim) {
    const size_t i = (size_t)sp.pairs[2 * s] * dim, j = (size_t)sp.pairs[2 * s + 1] * dim;
    double d[3], length2 = 0.0;
    for (int k = 0; k < dim; k++) {
        d[k] = x[j + k] - x[i + k];
        length2 += d[k] * d[k];
    }
    if (length2 < SS_MIN_SPRING_LENGTH * SS_MIN_SPRING_LENGTH)
        return;
    const double inv_length = 1.0 / sqrt(length2);
    const double length = length2 * inv_length;
    double closing_speed = 0.0;
    for (int k = 0; k < dim; k++) {
        d[k] *= inv_length; /* d is now the unit vector u */
        closing_speed += (v[j + k] - v[i + k]) * d[k];
    }
    const double magnitude =
        sp.stiffness[s] * (length - sp.rest[s]) + sp.damping[s] * closing_speed;
    for (int k = 0; k < dim; k++) {
        f[i + k] += magnitude * d[k];
        f[j + k] -= magnitude * d[k];
    }
}

/* Add the forces of the springs colour_order[first, last) into f. */
static void add_springs_in_order(const ss_system *sys, size_t first, size_t last, const double *x,
                                 const double *v, double *f) {
    const int32_t *restrict order = sys->colour_order;
    const spring_data sp = {SS_INT32S(sys, SS_SPRINGS), SS_DOUBLES(sys, SS_REST_LENGTHS),
                            SS_DOUBLES(sys, SS_STIFFNESS), SS_DOUBLES(sys, SS_DAMPING)};
    if (sys->dim == 3)
        for (size_t q = first; q < last; q++)
            add_spring_force(sp, (size_t)order[q], x, v, f, 3);
    else
        for (size_t q = first; q < last; q++)
            add_spring_force(sp, (size_t)order[q], x, v, f, 2);
}

/* Node forces of nodes [first, last): gravity, drag relative to the wind, the user's. */
static void add_node_forces(const ss_system *sys, size_t first, size_t last, const double *v,
                            double *a) {
    const size_t dim = (size_t)sys->dim;
    const double *mass = SS_DOUBLES(sys, SS_MASSES);
    const double *external = SS_DOUBLES(sys, SS_EXTERNAL);
    for (size_t i = first; i < last; i++)
        for (size_t k = 0; k < dim; k++) {
            const size_t ik = i * dim + k;
            a[ik] = mass[i] * sys->gravity[k] - sys->drag * (v[ik] - sys->wind[k]) + external[ik];
        }
}

/* Forces to accelerations for nodes [first, last); pinned nodes get 0. */
static void divide_by_mass(const ss_system *sys, size_t first, size_t last, double *a) {
    const size_t dim = (size_t)sys->dim;
    const double *mass = SS_DOUBLES(sys, SS_MASSES);
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    for (size_t i = first; i < last; i++) {
        const double inv_mass = 1.0 / mass[i];
        for (size_t k = 0; k < dim; k++)
            a[i * dim + k] = pinned[i] ? 0.0 : a[i * dim + k] * inv_mass;
    }
}

void ss_forces_external(ss_system *sys, const double *x, const double *v, double *a) {
    add_node_forces(sys, 0, sys->num_nodes, v, a);
    ss_pressure_add_forces(sys, x, a);
    divide_by_mass(sys, 0, sys->num_nodes, a);
}

/* The share [*first, *last) of `count` items for thread t of `threads`. */
static void share(size_t count, int t, int threads, size_t *first, size_t *last) {
    *first = count * (size_t)t / (size_t)threads;
    *last = count * (size_t)(t + 1) / (size_t)threads;
}

/* a = (springs + m g - drag (v - wind) + external + gas) / m  [m/s^2]; a = 0 if pinned.
 *
 * Node forces, then the springs colour by colour, then the gas pressure, then the
 * division by mass. With threads, each stage is split into equal shares with a
 * barrier after each colour (no two springs of a colour share a node). The last colour
 * may hold the springs that overflowed the colour mask: thread 0 adds those, in order,
 * and the gas forces (few, and a sum over each body's boundary). The order in which
 * each node receives its forces is the same for any number of threads. */
void ss_forces_acceleration(ss_system *sys, const double *x, const double *v, double *a) {
    const size_t n = sys->num_nodes;
    const int threads = ss_threads_for(sys);
    if (threads <= 1) {
        add_node_forces(sys, 0, n, v, a);
        add_springs_in_order(sys, 0, sys->num_springs, x, v, a);
        ss_pressure_add_forces(sys, x, a);
        divide_by_mass(sys, 0, n, a);
        return;
    }
#ifdef _OPENMP
#pragma omp parallel num_threads(threads)
    {
        const int t = omp_get_thread_num(), team = omp_get_num_threads();
        size_t first, last;
        share(n, t, team, &first, &last);
        add_node_forces(sys, first, last, v, a);
#pragma omp barrier
        for (size_t c = 0; c < sys->num_colours; c++) {
            const size_t start = sys->colour_start[c], size = sys->colour_start[c + 1] - start;
            if (c == SS_SERIAL_COLOUR) {
                if (t == 0)
                    add_springs_in_order(sys, start, start + size, x, v, a);
            } else {
                size_t lo, hi;
                share(size, t, team, &lo, &hi);
                add_springs_in_order(sys, start + lo, start + hi, x, v, a);
            }
#pragma omp barrier
        }
        if (sys->num_bodies) {
            if (t == 0)
                ss_pressure_add_forces(sys, x, a);
#pragma omp barrier
        }
        divide_by_mass(sys, first, last, a);
    }
#else
    (void)share;
#endif
}
