/* forces.c - springs (Hooke + axial damping), gravity, linear drag towards the wind,
 * external forces; turned into accelerations. */
#include "springsim.h"

#include <math.h>

/* Springs shorter than this (m) exert no force: their direction is undefined. */
#define SS_MIN_SPRING_LENGTH 1e-12

/* Spring forces for a fixed dimension, so the compiler unrolls the inner loops.
 *
 * For spring (i, j) with d = x_j - x_i, l = |d|, u = d / l:
 *     F_i = (k (l - L) + c (v_j - v_i).u) u,    F_j = -F_i     [N]
 * One reciprocal square root per spring gives both l and u. Each spring is
 * computed once and applied to both ends, in spring order. */
static inline void springs_fixed_dim(const ss_system *sys, size_t first, size_t count,
                                     const double *restrict x, const double *restrict v,
                                     double *restrict f, const int dim) {
    const int32_t *pairs = SS_INT32S(sys, SS_SPRINGS);
    const double *rest = SS_DOUBLES(sys, SS_REST_LENGTHS);
    const double *stiffness = SS_DOUBLES(sys, SS_STIFFNESS);
    const double *damping = SS_DOUBLES(sys, SS_DAMPING);
    for (size_t s = first; s < first + count; s++) {
        const size_t i = (size_t)pairs[2 * s] * dim, j = (size_t)pairs[2 * s + 1] * dim;
        double d[3], length2 = 0.0;
        for (int k = 0; k < dim; k++) {
            d[k] = x[j + k] - x[i + k];
            length2 += d[k] * d[k];
        }
        if (length2 < SS_MIN_SPRING_LENGTH * SS_MIN_SPRING_LENGTH)
            continue;
        const double inv_length = 1.0 / sqrt(length2);
        const double length = length2 * inv_length;
        double closing_speed = 0.0;
        for (int k = 0; k < dim; k++) {
            d[k] *= inv_length; /* d is now the unit vector u */
            closing_speed += (v[j + k] - v[i + k]) * d[k];
        }
        const double magnitude = stiffness[s] * (length - rest[s]) + damping[s] * closing_speed;
        for (int k = 0; k < dim; k++) {
            const double fk = magnitude * d[k];
            f[i + k] += fk;
            f[j + k] -= fk;
        }
    }
}

void ss_forces_springs(const ss_system *sys, size_t first, size_t count, const double *x,
                       const double *v, double *f) {
    if (sys->dim == 2)
        springs_fixed_dim(sys, first, count, x, v, f, 2);
    else
        springs_fixed_dim(sys, first, count, x, v, f, 3);
}

/* a = (springs + m g - drag (v - wind) + external) / m   [m/s^2]; a = 0 for pinned nodes. */
void ss_forces_acceleration(const ss_system *sys, const double *x, const double *v, double *a) {
    const size_t n = sys->num_nodes, dim = (size_t)sys->dim;
    const double *mass = SS_DOUBLES(sys, SS_MASSES);
    const double *external = SS_DOUBLES(sys, SS_EXTERNAL);
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    const double drag = sys->drag;

    /* Node forces first: gravity, drag relative to the wind, the user's forces. */
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < dim; k++) {
            const size_t ik = i * dim + k;
            a[ik] = mass[i] * sys->gravity[k] - drag * (v[ik] - sys->wind[k]) + external[ik];
        }
    ss_forces_springs(sys, 0, sys->num_springs, x, v, a);
    for (size_t i = 0; i < n; i++) {
        const double inv_mass = 1.0 / mass[i];
        for (size_t k = 0; k < dim; k++)
            a[i * dim + k] = pinned[i] ? 0.0 : a[i * dim + k] * inv_mass;
    }
}
