/* shapes.c - the geometry of the box and capsule colliders: where a point is against
 * them (colliders.c responds to it, as for planes and spheres). */
#include "springsim.h"

#include <math.h>

/* The point of segment a..b nearest p (a capsule's axis). */
void ss_nearest_on_segment(const double *a, const double *b, int dim, const double *p, double *q) {
    double ab2 = 0.0, t = 0.0;
    for (int k = 0; k < dim; k++) {
        ab2 += (b[k] - a[k]) * (b[k] - a[k]);
        t += (p[k] - a[k]) * (b[k] - a[k]);
    }
    t = ab2 > 0.0 ? fmin(fmax(t / ab2, 0.0), 1.0) : 0.0;
    for (int k = 0; k < dim; k++)
        q[k] = a[k] + t * (b[k] - a[k]);
}

/* A unit vector perpendicular to a capsule's axis (+y for a point-like one): the way
 * out for a node exactly on the axis. */
void ss_capsule_off_axis(const ss_collider *col, int dim, double *normal) {
    double d[3] = {0.0, 0.0, 0.0}, len2 = 0.0;
    for (int k = 0; k < dim; k++) {
        d[k] = col->end[k] - col->center[k];
        len2 += d[k] * d[k];
    }
    normal[0] = normal[2] = 0.0, normal[1] = 1.0;
    if (!(len2 > 0.0))
        return;
    int least = 0; /* cross the axis with the coordinate axis it is least along */
    for (int k = 1; k < dim; k++)
        if (fabs(d[k]) < fabs(d[least]))
            least = k;
    if (dim == 2) {
        normal[0] = -d[1], normal[1] = d[0];
    } else {
        const double e[3] = {least == 0, least == 1, least == 2};
        normal[0] = d[1] * e[2] - d[2] * e[1];
        normal[1] = d[2] * e[0] - d[0] * e[2];
        normal[2] = d[0] * e[1] - d[1] * e[0];
    }
    double len = 0.0;
    for (int k = 0; k < dim; k++)
        len += normal[k] * normal[k];
    len = sqrt(len);
    for (int k = 0; k < dim; k++)
        normal[k] /= len;
}

/* A box: inside, the nearest face (the first axis on a tie); outside, the nearest point. */
int ss_box_locate(const ss_collider *col, int dim, const double *p, double *depth, double *surface,
                  double *normal) {
    int inside = 1, axis = 0;
    double least = INFINITY, out2 = 0.0;
    for (int k = 0; k < dim; k++) {
        const double r = p[k] - col->center[k], gap = col->end[k] - fabs(r);
        const double clamped = fmin(fmax(r, -col->end[k]), col->end[k]);
        surface[k] = col->center[k] + clamped;
        normal[k] = r - clamped;
        out2 += normal[k] * normal[k];
        if (!(gap > 0.0))
            inside = 0;
        if (gap < least)
            least = gap, axis = k;
    }
    const double sign = p[axis] >= col->center[axis] ? 1.0 : -1.0;
    if (inside || !(out2 > 0.0)) { /* inside, or on the surface: out through the nearest face */
        for (int k = 0; k < dim; k++) {
            surface[k] = p[k];
            normal[k] = 0.0;
        }
        surface[axis] = col->center[axis] + sign * col->end[axis];
        normal[axis] = sign;
        *depth = least;
        return inside;
    }
    const double out = sqrt(out2);
    for (int k = 0; k < dim; k++)
        normal[k] /= out;
    *depth = -out;
    return 0;
}
