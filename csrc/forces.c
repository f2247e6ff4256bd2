/* forces.c - springs (Hooke + axial damping), gravity, linear drag towards the wind,
 * external forces; turned into accelerations. */
#include "springsim.h"

#include <math.h>

/* Springs shorter than this (m) exert no force: their direction is undefined. */
#define SS_MIN_SPRING_LENGTH 1e-12

/* Add spring s's force to both its nodes, for a fixed dimension (so the compiler
 * unrolls the inner loops).
 *
 * For spring (i, j) with d = x_j - x_i, l = |d|, u = d / l:
 *     F_i = (k (l - L) + c (v_j - v_i).u) u,    F_j = -F_i     [N]
 * One reciprocal square root per spring gives both l and u. */
static inline void add_spring_force(const ss_system *sys, size_t s, const double *restrict x,
                                    const double *restrict v, double *restrict f, const int dim) {
    const int32_t *pairs = SS_INT32S(sys, SS_SPRINGS);
    const size_t i = (size_t)pairs[2 * s] * dim, j = (size_t)pairs[2 * s + 1] * dim;
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
        SS_DOUBLES(sys, SS_STIFFNESS)[s] * (length - SS_DOUBLES(sys, SS_REST_LENGTHS)[s]) +
        SS_DOUBLES(sys, SS_DAMPING)[s] * closing_speed;
    for (int k = 0; k < dim; k++) {
        f[i + k] += magnitude * d[k];
        f[j + k] -= magnitude * d[k];
    }
}

/* Add the forces of the springs colour_order[first, last) into f. Called by every
 * thread of the team for one colour: no two of these springs share a node. */
static void add_colour_forces(const ss_system *sys, size_t first, size_t last, const double *x,
                              const double *v, double *f) {
    const int32_t *order = sys->colour_order;
    const ptrdiff_t lo = (ptrdiff_t)first, hi = (ptrdiff_t)last;
    if (sys->dim == 3) {
#pragma omp for schedule(static)
        for (ptrdiff_t q = lo; q < hi; q++)
            add_spring_force(sys, (size_t)order[q], x, v, f, 3);
    } else {
#pragma omp for schedule(static)
        for (ptrdiff_t q = lo; q < hi; q++)
            add_spring_force(sys, (size_t)order[q], x, v, f, 2);
    }
}

/* a = (springs + m g - drag (v - wind) + external) / m   [m/s^2]; a = 0 for pinned nodes.
 *
 * One parallel region: node forces, then the springs colour by colour (a barrier
 * after each colour), then the division by mass. The last colour may hold the
 * springs that overflowed the colour mask: one thread adds those, in order. */
void ss_forces_acceleration(const ss_system *sys, const double *x, const double *v, double *a) {
    const ptrdiff_t n = (ptrdiff_t)sys->num_nodes;
    const size_t dim = (size_t)sys->dim;
    const double *mass = SS_DOUBLES(sys, SS_MASSES);
    const double *external = SS_DOUBLES(sys, SS_EXTERNAL);
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    const double drag = sys->drag;
    const int threads = ss_threads_for(sys);
    (void)threads;

#pragma omp parallel num_threads(threads) if (threads > 1)
    {
        /* Node forces first: gravity, drag relative to the wind, the user's forces. */
#pragma omp for schedule(static)
        for (ptrdiff_t i = 0; i < n; i++)
            for (size_t k = 0; k < dim; k++) {
                const size_t ik = (size_t)i * dim + k;
                a[ik] = mass[i] * sys->gravity[k] - drag * (v[ik] - sys->wind[k]) + external[ik];
            }
        for (size_t c = 0; c < sys->num_colours; c++) {
            const size_t first = sys->colour_start[c], last = sys->colour_start[c + 1];
            if (c == SS_SERIAL_COLOUR) {
#pragma omp single
                for (size_t q = first; q < last; q++)
                    add_spring_force(sys, (size_t)sys->colour_order[q], x, v, a, (int)dim);
            } else {
                add_colour_forces(sys, first, last, x, v, a);
            }
        }
#pragma omp for schedule(static)
        for (ptrdiff_t i = 0; i < n; i++) {
            const double inv_mass = 1.0 / mass[i];
            for (size_t k = 0; k < dim; k++)
                a[(size_t)i * dim + k] = pinned[i] ? 0.0 : a[(size_t)i * dim + k] * inv_mass;
        }
    }
}
