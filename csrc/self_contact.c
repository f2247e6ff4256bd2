/* self_contact.c - surfaces that do not pass through themselves: node-triangle
 * repulsion with a thickness, for the system's faces.
 *
 * A node p that is not a vertex of triangle (a, b, c) and lies within the thickness h
 * of it, at distance d from its closest point q = w_a a + w_b b + w_c c (barycentric
 * weights, summing to 1), is pushed away from q by the penalty
 *     F = k (h - d) n,   n = (p - q) / d                              N
 * and the triangle's vertices are pushed back by -w_a F, -w_b F, -w_c F: the forces
 * sum to zero (momentum is conserved to round-off) and they are minus the gradient of
 *     E = 1/2 k (h - d)^2                                             J
 * (the closest point moves along the triangle, perpendicular to n, so d's gradient is
 * n on p and -w n on the vertices), the energy ss_energy reports as `contact`. With
 * friction mu, the sliding part u_t of the relative velocity u = v_p - sum w v is
 * resisted by -mu |F| u_t / sqrt(|u_t|^2 + s^2), Coulomb friction smoothed below the
 * slip speed s = SS_SELF_SLIP; its power goes to `dissipated` with damping's.
 *
 * Which pairs are checked: see self_contact_list.c.
 *
 * Each candidate's force is computed alone (the threads share the list, forces.c) into
 * a scratch row; then one thread, where the gas and the air on faces are added, adds
 * the rows to the nodes in list order: the same additions in the same order for any
 * thread count, so the results are bit-identical.
 *
 * Crossings (counted in self_contact_list.c, at every rebuild of the list and at the end
 * of every step call): a node whose side of a triangle of the list changed while its
 * projection stayed inside the triangle went through. Counted, not undone. */
#include "self_contact_list.h"

#include <math.h>
#include <string.h>

/* m/s: friction is smoothed below this sliding speed (so that it has a power). */
#define SS_SELF_SLIP 1e-3

/* Slack of the plane test, relative to h^2 |N|^2: far above the rounding of s = N.(p - a)
 * (a few ulps of |N| |p - a|, and |p - a| is within the list's reach of a triangle), so
 * that a pair the test skips is one the closest point would have found apart too. */
#define SS_PLANE_SLACK 1e-6

/* The plane of the triangle the last pairs were of: the list holds a triangle's pairs
 * one after the other, so that its normal is computed once for all of them. */
typedef struct {
    int32_t face;             /* -1: none yet */
    double a[3], N[3], limit; /* a vertex, the unnormalised normal, (1 + slack) h^2 |N|^2 */
} face_plane;

/* Nonzero when p is farther than h from the plane of triangle pair[1] (so from the
 * triangle): most of the list's pairs, skipped before the closest point. A degenerate
 * or non-finite triangle is never skipped (its limit is 0 or NaN). */
static inline int beyond_plane(face_plane *fp, double h, const double *x, const int32_t *faces,
                               const int32_t *pair) {
    if (fp->face != pair[1]) {
        const int32_t *tri = faces + 3 * (size_t)pair[1];
        const double *a = x + 3 * (size_t)tri[0], *b = x + 3 * (size_t)tri[1],
                     *c = x + 3 * (size_t)tri[2];
        double e1[3], e2[3];
        for (int q = 0; q < 3; q++) {
            fp->a[q] = a[q];
            e1[q] = b[q] - a[q];
            e2[q] = c[q] - a[q];
        }
        fp->N[0] = e1[1] * e2[2] - e1[2] * e2[1];
        fp->N[1] = e1[2] * e2[0] - e1[0] * e2[2];
        fp->N[2] = e1[0] * e2[1] - e1[1] * e2[0];
        const double nn = fp->N[0] * fp->N[0] + fp->N[1] * fp->N[1] + fp->N[2] * fp->N[2];
        fp->limit = (1.0 + SS_PLANE_SLACK) * h * h * nn;
        fp->face = pair[1];
    }
    const double *p = x + 3 * (size_t)pair[0];
    const double s =
        fp->N[0] * (p[0] - fp->a[0]) + fp->N[1] * (p[1] - fp->a[1]) + fp->N[2] * (p[2] - fp->a[2]);
    return s * s > fp->limit;
}

/* One pair's contact at x: 0 when apart (d >= h); else 1, with the weights w, the unit
 * direction n from the closest point to the node, and the penetration h - d. */
static inline int pair_contact(const ss_self_contact *sc, face_plane *plane, const double *x,
                               const int32_t *faces, const int32_t *pair, double w[3], double n[3],
                               double *depth) {
    if (beyond_plane(plane, sc->thickness, x, faces, pair))
        return 0;
    const double *p = x + 3 * (size_t)pair[0];
    const int32_t *tri = faces + 3 * (size_t)pair[1];
    const double *a = x + 3 * (size_t)tri[0], *b = x + 3 * (size_t)tri[1],
                 *c = x + 3 * (size_t)tri[2];
    ss_closest_weights(p, a, b, c, w);
    double d2 = 0.0;
    for (int q = 0; q < 3; q++) {
        n[q] = p[q] - (w[0] * a[q] + w[1] * b[q] + w[2] * c[q]);
        d2 += n[q] * n[q];
    }
    const double h = sc->thickness;
    if (!(d2 < h * h))
        return 0;
    double d = sqrt(d2);
    if (d == 0.0) { /* on the triangle: push along its normal */
        const double e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
        const double e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
        n[0] = e1[1] * e2[2] - e1[2] * e2[1];
        n[1] = e1[2] * e2[0] - e1[0] * e2[2];
        n[2] = e1[0] * e2[1] - e1[1] * e2[0];
        d = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        if (!(d > 0.0))
            return 0;
        *depth = h;
    } else {
        *depth = h - d;
    }
    for (int q = 0; q < 3; q++)
        n[q] /= d;
    return 1;
}

/* The friction force g (N) of a touching pair pushed with fn (N), and its power, W. */
static double friction_force(const ss_self_contact *sc, const double *v, const int32_t *faces,
                             const int32_t *pair, const double w[3], const double n[3], double fn,
                             double g[3]) {
    const double *vp = v + 3 * (size_t)pair[0];
    const int32_t *tri = faces + 3 * (size_t)pair[1];
    double u[3];
    for (int q = 0; q < 3; q++)
        u[q] = vp[q] - (w[0] * v[3 * (size_t)tri[0] + q] + w[1] * v[3 * (size_t)tri[1] + q] +
                        w[2] * v[3 * (size_t)tri[2] + q]);
    const double un = u[0] * n[0] + u[1] * n[1] + u[2] * n[2];
    double ut2 = 0.0;
    for (int q = 0; q < 3; q++) {
        u[q] -= un * n[q];
        ut2 += u[q] * u[q];
    }
    const double scale = sc->friction * fn / sqrt(ut2 + SS_SELF_SLIP * SS_SELF_SLIP);
    for (int q = 0; q < 3; q++)
        g[q] = -scale * u[q];
    return scale * ut2;
}

int ss_self_contact_active(const ss_system *sys) {
    return sys->self_contact != NULL && sys->num_faces > 0 && sys->dim == 3;
}

void ss_self_contact_search(const ss_system *sys, const double *x) {
    ss_self_contact *sc = sys->self_contact;
    sc->search_failed =
        ss_self_contact_refresh(sc, sys, x) ||
        ss_self_contact_reserve((void **)&sc->results, &sc->results_capacity, 6 * sc->count,
                                sizeof(double)) ||
        ss_self_contact_reserve((void **)&sc->touching, &sc->touching_capacity, sc->count, 1);
}

size_t ss_self_contact_num_pairs(const ss_system *sys) {
    const ss_self_contact *sc = sys->self_contact;
    return sc->search_failed ? 0 : sc->count;
}

void ss_self_contact_pair_forces(const ss_system *sys, const double *x, const double *v,
                                 size_t first, size_t last) {
    ss_self_contact *sc = sys->self_contact;
    const int32_t *faces = SS_INT32S(sys, SS_FACES);
    const double k = sc->stiffness;
    face_plane plane = {.face = -1}; /* per range: a range may start inside a triangle's run */
    for (size_t c = first; c < last; c++) {
        const int32_t *pair = sc->pairs + 2 * c;
        double *F = sc->results + 6 * c, *w = F + 3, n[3], depth;
        const int hit = pair_contact(sc, &plane, x, faces, pair, w, n, &depth);
        sc->touching[c] = (uint8_t)hit;
        if (!hit)
            continue;
        const double fn = k * depth;
        for (int q = 0; q < 3; q++)
            F[q] = fn * n[q];
        if (sc->friction > 0.0) {
            double g[3];
            friction_force(sc, v, faces, pair, w, n, fn, g);
            for (int q = 0; q < 3; q++)
                F[q] += g[q];
        }
    }
}

void ss_self_contact_gather_forces(const ss_system *sys, double *f, size_t stride) {
    const ss_self_contact *sc = sys->self_contact;
    if (sc->search_failed) {
        for (size_t i = 0; i < sys->num_nodes; i++)
            f[i * stride] = NAN; /* out of memory: the step fails and rolls back */
        return;
    }
    const int32_t *faces = SS_INT32S(sys, SS_FACES);
    for (size_t c = 0; c < sc->count; c++) {
        if (!sc->touching[c])
            continue;
        const int32_t *pair = sc->pairs + 2 * c;
        const double *F = sc->results + 6 * c, *w = F + 3;
        double *fp = f + (size_t)pair[0] * stride;
        const int32_t *tri = faces + 3 * (size_t)pair[1];
        for (int q = 0; q < 3; q++)
            fp[q] += F[q];
        for (int corner = 0; corner < 3; corner++) {
            double *fv = f + (size_t)tri[corner] * stride;
            for (int q = 0; q < 3; q++)
                fv[q] -= w[corner] * F[q];
        }
    }
}

void ss_self_contact_add_forces(const ss_system *sys, const double *x, const double *v, double *f,
                                size_t stride) {
    ss_self_contact_search(sys, x);
    ss_self_contact_pair_forces(sys, x, v, 0, ss_self_contact_num_pairs(sys));
    ss_self_contact_gather_forces(sys, f, stride);
}

double ss_self_contact_energy(const ss_system *sys, int in_step) {
    if (!ss_self_contact_active(sys))
        return 0.0;
    ss_self_contact *sc = sys->self_contact, own;
    const ss_self_contact *list = sc;
    const double *x = SS_DOUBLES(sys, SS_POSITIONS);
    if (in_step) {
        if (ss_self_contact_refresh(sc, sys, x))
            return NAN;
    } else if (!ss_self_contact_fits(sc, sys, x)) {
        /* a query: the step's list is read only as it is; else a list of its own, the
         * one a rebuild at x would make (so the same pairs, in the same order) */
        const int failed = ss_self_contact_query_list(&own, sc, sys, x);
        if (failed) {
            ss_self_contact_release(&own);
            return NAN;
        }
        list = &own;
    }
    const int32_t *faces = SS_INT32S(sys, SS_FACES);
    double energy = 0.0;
    face_plane plane = {.face = -1};
    for (size_t c = 0; c < list->count; c++) {
        double w[3], n[3], depth;
        if (pair_contact(list, &plane, x, faces, list->pairs + 2 * c, w, n, &depth))
            energy += depth * depth;
    }
    if (list == &own)
        ss_self_contact_release(&own);
    return 0.5 * sc->stiffness * energy;
}

double ss_self_contact_power(const ss_system *sys) {
    if (!ss_self_contact_active(sys) || sys->self_contact->friction == 0.0)
        return 0.0;
    ss_self_contact *sc = sys->self_contact;
    const double *x = SS_DOUBLES(sys, SS_POSITIONS), *v = SS_DOUBLES(sys, SS_VELOCITIES);
    if (ss_self_contact_refresh(sc, sys, x))
        return NAN;
    const int32_t *faces = SS_INT32S(sys, SS_FACES);
    double power = 0.0;
    face_plane plane = {.face = -1};
    for (size_t c = 0; c < sc->count; c++) {
        double w[3], n[3], depth, g[3];
        if (pair_contact(sc, &plane, x, faces, sc->pairs + 2 * c, w, n, &depth))
            power +=
                friction_force(sc, v, faces, sc->pairs + 2 * c, w, n, sc->stiffness * depth, g);
    }
    return power;
}

void ss_self_contact_end_step(ss_system *sys) {
    if (ss_self_contact_active(sys))
        ss_self_contact_count_crossings(sys->self_contact, sys, SS_DOUBLES(sys, SS_POSITIONS));
}

ss_status ss_self_contact_set(ss_system *sys, double thickness, double stiffness, double friction) {
    if (thickness == 0.0) {
        ss_self_contact_free(sys);
        sys->state_edits++; /* new contact energy: the short calls' books start afresh */
        return SS_OK;
    }
    if (sys->dim != 3)
        return ss_fail(sys, SS_ERR_VALUE,
                       "self-collision needs a 3D system (its faces are triangles in space)");
    if (!isfinite(thickness) || !(thickness > 0.0))
        return ss_fail(sys, SS_ERR_VALUE, "thickness is %g: must be finite and > 0 m", thickness);
    if (!isfinite(stiffness) || !(stiffness > 0.0))
        return ss_fail(sys, SS_ERR_VALUE, "stiffness is %g: must be finite and > 0 N/m", stiffness);
    if (!isfinite(friction) || !(friction >= 0.0))
        return ss_fail(sys, SS_ERR_VALUE, "friction is %g: must be finite and >= 0", friction);
    ss_self_contact *sc = sys->self_contact;
    if (!sc) {
        sc = ss_malloc(sizeof *sc);
        if (!sc)
            return ss_fail(sys, SS_ERR_NOMEM, "out of memory for self-collision");
        memset(sc, 0, sizeof *sc);
        sys->self_contact = sc;
    }
    sc->thickness = thickness;
    sc->stiffness = stiffness;
    sc->friction = friction;
    sc->margin = thickness;
    sc->crossings = 0;
    sc->valid = 0;
    sc->seen_valid = 0;
    sc->opposite_valid = 0;
    sys->state_edits++;
    return SS_OK;
}

int ss_self_contact_get(const ss_system *sys, double out[3]) {
    const ss_self_contact *sc = sys->self_contact;
    if (!sc)
        return 0;
    out[0] = sc->thickness;
    out[1] = sc->stiffness;
    out[2] = sc->friction;
    return 1;
}

size_t ss_self_contact_crossings(const ss_system *sys) {
    return sys->self_contact ? sys->self_contact->crossings : 0;
}

void ss_self_contact_set_crossings(ss_system *sys, size_t crossings) {
    ss_self_contact *sc = sys->self_contact;
    if (!sc)
        return;
    sc->crossings = crossings;
    sc->valid = sc->seen_valid = 0; /* a rollback: positions the list has not seen */
}

ss_status ss_self_contact_copy(ss_system *dst, const ss_system *src) {
    dst->self_contact = NULL;
    const ss_self_contact *from = src->self_contact;
    if (!from)
        return SS_OK;
    ss_self_contact *sc = ss_malloc(sizeof *sc);
    if (!sc)
        return SS_ERR_NOMEM;
    memset(sc, 0, sizeof *sc);
    sc->thickness = from->thickness;
    sc->stiffness = from->stiffness;
    sc->friction = from->friction;
    sc->margin = from->margin;
    sc->crossings = from->crossings;
    dst->self_contact = sc;
    return SS_OK;
}

void ss_self_contact_free(ss_system *sys) {
    ss_self_contact *sc = sys->self_contact;
    if (!sc)
        return;
    ss_self_contact_release(sc);
    ss_free(sc);
    sys->self_contact = NULL;
}

size_t ss_self_contact_nbytes(const ss_system *sys) {
    const ss_self_contact *sc = sys->self_contact;
    if (!sc)
        return 0;
    return sizeof *sc + (sc->pairs ? 2 * sc->pair_capacity * sizeof(int32_t) : 0) +
           (sc->built_x ? sc->built_capacity * sizeof(double) : 0) +
           (sc->buckets ? sc->bucket_capacity * sizeof(size_t) : 0) +
           (sc->bucket_of_node ? sc->bucket_of_node_capacity * sizeof(size_t) : 0) +
           (sc->sorted ? sc->sorted_capacity * sizeof(int32_t) : 0) +
           (sc->seen_x ? sc->seen_capacity * sizeof(double) : 0) +
           (sc->opposite ? sc->opposite_capacity * sizeof(int32_t) : 0) +
           (sc->sorted_x ? sc->sorted_x_capacity * sizeof(double) : 0) +
           (sc->hits ? sc->hits_capacity * sizeof(int32_t) : 0) +
           (sc->results ? sc->results_capacity * sizeof(double) : 0) +
           (sc->touching ? sc->touching_capacity : 0);
}
