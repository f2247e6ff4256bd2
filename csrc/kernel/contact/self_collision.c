/* self_collision.c - surfaces that do not pass through themselves: node-triangle
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
 * Which pairs are checked: see self_collision.c.
 *
 * Each candidate's force is computed alone (the threads share the list, forces.c) into
 * a scratch row; then one thread, where the gas and the air on faces are added, adds
 * the rows to the nodes in list order: the same additions in the same order for any
 * thread count, so the results are bit-identical.
 *
 * Crossings (counted in self_collision.c, at every rebuild of the list and at the end
 * of every step call): a node whose side of a triangle of the list changed while its
 * projection stayed inside the triangle went through. Counted, not undone. */
#include "springsim.h"

#include "edge_contact.h"

#include <math.h>
#include <string.h>
#include <stdlib.h>

/* ---- The setting and its broad phase's state (private to this file) ---- */

struct ss_self_collision {
    double thickness, stiffness, friction, margin;
    int edges_on; /* edge-edge contact too (edge_contact.c) */
    /* Crossings counted since the last fold into the state (sys->state.crossings, at the
     * end of every step call): the searches see the system only as const. */
    size_t pending;
    /* The candidate list: valid for the topology and node positions it was built at. */
    int valid;
    size_t built_edits, built_nodes, built_faces;
    int32_t *pairs; /* (count, 2) node, triangle */
    size_t count, pair_capacity;
    double *built_x;        /* (N, 3) positions at the build */
    size_t *buckets;        /* (num_buckets + 1,) counting sort's offsets */
    size_t *bucket_of_node; /* (N,) each node's bucket, computed once per build */
    size_t bucket_of_node_capacity;
    int32_t *sorted;  /* (N,) nodes by bucket */
    double *sorted_x; /* (3, N) their positions, in that order */
    size_t sorted_x_capacity;
    int32_t *hits; /* (N,) a scan's nodes inside a triangle's grown box */
    size_t hits_capacity;
    double *seen_x; /* (N, 3) positions at the last crossing check */
    /* (F, 3): for each triangle's edge k (from corner k to k + 1), the far vertex of the
     * other triangle on that edge, or -1; built with the list when the topology changed. */
    int32_t *opposite;
    size_t opposite_capacity, opposite_edits, opposite_faces;
    int opposite_valid;
    size_t built_capacity, sorted_capacity, seen_capacity, bucket_capacity; /* elements */
    int seen_valid; /* seen_x holds them (0: no check yet, or rolled back since) */
    /* The threads' scratch: per candidate, its force F on the node and the weights w
     * (6 doubles), and whether it touches; filled for the list of the last search. */
    double *results;
    uint8_t *touching;
    size_t results_capacity, touching_capacity;
    int search_failed; /* the last ss_self_collision_search ran out of memory */
    /* The edge pairs, built with the list and valid with it (edge_contact.c); candidates
     * count .. count + edges.count - 1 of the force evaluation. */
    ss_edge_list edges;
};

/* Make the candidate list valid for positions x: 0, or -1 when out of memory. */
int ss_self_collision_refresh(ss_self_collision *sc, const ss_system *sys, const double *x);
/* Nonzero when sc's list is valid for positions x as it is (refresh would keep it). */
int ss_self_collision_fits(const ss_self_collision *sc, const ss_system *sys, const double *x);
/* A query's list: *own (zeroed here) gets step's settings and the list at x, built in
 * memory of its own (the step's triangle neighbours only read, when current); no
 * crossing is counted. 0, or -1 when out of memory; release *own after either. */
int ss_self_collision_query_list(ss_self_collision *own, const ss_self_collision *step,
                                 const ss_system *sys, const double *x);
/* Free every buffer sc holds (not sc itself). */
void ss_self_collision_release(ss_self_collision *sc);
/* Count the list's nodes that went through a triangle between the last check and x;
 * x becomes the last check. */
void ss_self_collision_count_crossings(ss_self_collision *sc, const ss_system *sys,
                                       const double *x);
/* The closest point of triangle (a, b, c) to p as barycentric weights w. */
void ss_closest_weights(const double *p, const double *a, const double *b, const double *c,
                        double w[3]);

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
static inline int pair_contact(const ss_self_collision *sc, face_plane *plane, const double *x,
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
    return ss_self_contact_normal(n, d2, sc->thickness, a, b, a, c, depth);
}

/* The friction force g (N) of a touching pair pushed with fn (N), and its power, W. */
static double friction_force(const ss_self_collision *sc, const double *v, const int32_t *faces,
                             const int32_t *pair, const double w[3], const double n[3], double fn,
                             double g[3]) {
    const double *vp = v + 3 * (size_t)pair[0];
    const int32_t *tri = faces + 3 * (size_t)pair[1];
    double u[3];
    for (int q = 0; q < 3; q++)
        u[q] = vp[q] - (w[0] * v[3 * (size_t)tri[0] + q] + w[1] * v[3 * (size_t)tri[1] + q] +
                        w[2] * v[3 * (size_t)tri[2] + q]);
    return ss_self_collision_friction(sc->friction, u, n, fn, g);
}

int ss_self_collision_active(const ss_system *sys) {
    return sys->self_collision != NULL && sys->num_faces > 0 && sys->dim == 3;
}

void ss_self_collision_search(const ss_system *sys, const double *x) {
    ss_self_collision *sc = sys->self_collision;
    sc->search_failed =
        ss_self_collision_refresh(sc, sys, x) ||
        ss_self_collision_reserve((void **)&sc->results, &sc->results_capacity, 6 * sc->count,
                                  sizeof(double)) ||
        ss_self_collision_reserve((void **)&sc->touching, &sc->touching_capacity, sc->count, 1) ||
        ss_edge_list_fit(&sc->edges);
}

size_t ss_self_collision_num_pairs(const ss_system *sys) {
    const ss_self_collision *sc = sys->self_collision;
    return sc->search_failed ? 0 : sc->count + sc->edges.count;
}

void ss_self_collision_pair_forces(const ss_system *sys, const double *x, const double *v,
                                   size_t first, size_t last) {
    ss_self_collision *sc = sys->self_collision;
    const int32_t *faces = SS_INT32S(sys, SS_FACES);
    const double k = sc->stiffness;
    face_plane plane = {.face = -1}; /* per range: a range may start inside a triangle's run */
    /* Candidates count .. are the edge pairs (edge_contact.c). */
    if (last > sc->count)
        ss_edge_pair_forces(&sc->edges, x, v, sc->thickness, k, sc->friction,
                            (first > sc->count ? first : sc->count) - sc->count, last - sc->count);
    last = last < sc->count ? last : sc->count;
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

void ss_self_collision_gather_forces(const ss_system *sys, double *f, size_t stride) {
    const ss_self_collision *sc = sys->self_collision;
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
    ss_edge_gather_forces(&sc->edges, f, stride);
}

void ss_self_collision_add_forces(const ss_system *sys, const double *x, const double *v, double *f,
                                  size_t stride) {
    ss_self_collision_search(sys, x);
    ss_self_collision_pair_forces(sys, x, v, 0, ss_self_collision_num_pairs(sys));
    ss_self_collision_gather_forces(sys, f, stride);
}

double ss_self_collision_energy(const ss_system *sys, int in_step) {
    if (!ss_self_collision_active(sys))
        return 0.0;
    ss_self_collision *sc = sys->self_collision, own;
    const ss_self_collision *list = sc;
    const double *x = SS_DOUBLES(sys, SS_POSITIONS);
    if (in_step) {
        if (ss_self_collision_refresh(sc, sys, x))
            return NAN;
    } else if (!ss_self_collision_fits(sc, sys, x)) {
        /* a query: the step's list is read only as it is; else a list of its own, the
         * one a rebuild at x would make (so the same pairs, in the same order) */
        const int failed = ss_self_collision_query_list(&own, sc, sys, x);
        if (failed) {
            ss_self_collision_release(&own);
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
    energy += ss_edge_depth_sum(&list->edges, x, list->thickness);
    if (list == &own)
        ss_self_collision_release(&own);
    return 0.5 * sc->stiffness * energy;
}

double ss_self_collision_power(const ss_system *sys) {
    if (!ss_self_collision_active(sys) || sys->self_collision->friction == 0.0)
        return 0.0;
    ss_self_collision *sc = sys->self_collision;
    const double *x = SS_DOUBLES(sys, SS_POSITIONS), *v = SS_DOUBLES(sys, SS_VELOCITIES);
    if (ss_self_collision_refresh(sc, sys, x))
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
    return power + ss_edge_power(&sc->edges, x, v, sc->thickness, sc->stiffness, sc->friction);
}

void ss_self_collision_end_step(ss_system *sys) {
    ss_self_collision *sc = sys->self_collision;
    if (!sc)
        return;
    if (ss_self_collision_active(sys))
        ss_self_collision_count_crossings(sc, sys, SS_DOUBLES(sys, SS_POSITIONS));
    sys->state.crossings += sc->pending;
    sc->pending = 0;
}

ss_status ss_self_collision_set(ss_system *sys, double thickness, double stiffness, double friction,
                                int edges) {
    if (thickness == 0.0) {
        ss_self_collision_free(sys);
        sys->state.crossings = 0;
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
    ss_self_collision *sc = sys->self_collision;
    if (!sc) {
        sc = ss_malloc(sizeof *sc);
        if (!sc)
            return ss_fail(sys, SS_ERR_NOMEM, "out of memory for self-collision");
        memset(sc, 0, sizeof *sc);
        sys->self_collision = sc;
    }
    sc->thickness = thickness;
    sc->stiffness = stiffness;
    sc->friction = friction;
    sc->margin = thickness;
    sc->edges_on = edges != 0;
    sc->pending = 0;
    sys->state.crossings = 0;
    sc->valid = 0;
    sc->seen_valid = 0;
    sc->opposite_valid = 0;
    sys->state_edits++;
    return SS_OK;
}

int ss_self_collision_get(const ss_system *sys, double out[4]) {
    const ss_self_collision *sc = sys->self_collision;
    if (!sc)
        return 0;
    out[0] = sc->thickness;
    out[1] = sc->stiffness;
    out[2] = sc->friction;
    out[3] = sc->edges_on ? 1.0 : 0.0;
    return 1;
}

void ss_self_collision_forget_pending(ss_system *sys) {
    ss_self_collision *sc = sys->self_collision;
    if (!sc)
        return;
    sc->pending = 0;
    sc->valid = sc->seen_valid = 0; /* a rollback: positions the list has not seen */
}

ss_status ss_self_collision_copy(ss_system *dst, const ss_system *src) {
    dst->self_collision = NULL;
    const ss_self_collision *from = src->self_collision;
    if (!from)
        return SS_OK;
    ss_self_collision *sc = ss_malloc(sizeof *sc);
    if (!sc)
        return SS_ERR_NOMEM;
    memset(sc, 0, sizeof *sc);
    sc->thickness = from->thickness;
    sc->stiffness = from->stiffness;
    sc->friction = from->friction;
    sc->margin = from->thickness; /* as set: a margin vbd grew is the original's scratch */
    sc->edges_on = from->edges_on;
    sc->pending = from->pending;
    dst->self_collision = sc;
    return SS_OK;
}

void ss_self_collision_free(ss_system *sys) {
    ss_self_collision *sc = sys->self_collision;
    if (!sc)
        return;
    ss_self_collision_release(sc);
    ss_free(sc);
    sys->self_collision = NULL;
}

size_t ss_self_collision_nbytes(const ss_system *sys) {
    const ss_self_collision *sc = sys->self_collision;
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
           (sc->touching ? sc->touching_capacity : 0) + ss_edge_list_nbytes(&sc->edges);
}

/* ---- The broad phase: grid, candidate list, closest points ------------------ */

/* self_collision.c - self-collision's broad phase: which (node, triangle) pairs
 * the force evaluation checks (self_collision.c), and the closest point of a triangle.
 *
 * Left out: a node and a triangle that share an edge's neighbour, the far vertex of
 * the triangle across one of its edges. Flat, such a node is 0.7 of an edge from the
 * triangle (half a square's diagonal) and would be a candidate everywhere; it can reach
 * the triangle only by folding the two triangles shut about their common edge, which
 * the cloth's bend springs resist. Pairs of the same triangle are left out too.
 *
 * Broad phase: a Verlet list. The (node, triangle) pairs whose node lies in the
 * triangle's bounding box grown by h + margin (margin = h) are found with a uniform
 * grid, and kept while no node has moved more than margin / 2 since: a pair left out
 * was then at least h + margin apart, and each of its four nodes has moved at most
 * margin / 2, so it is still at least h apart (moves are measured from the centre of
 * the box that holds every node's move: translating everything changes no distance). The grid's
 * cells are half as large as the largest grown box, so that a box overlaps at most 3 x 3 x 3 cells;
 * the nodes are counting-sorted by their cell (a dense box of cells, or a hash of the cell when
 * that box would be too large), in index order within a bucket, and each triangle, in face order,
 * takes the nodes of its buckets: the list's order depends on nothing but the positions. Its memory
 * grows with the number of pairs (and N), never with N^2, and is kept (grow-only) from one build to
 * the next.
 *
 * Crossings: when the list is rebuilt, and at the end of every step call, its pairs
 * are checked for a node whose side of its triangle's plane changed since the last
 * check while its projection was inside the triangle at both: a node that went
 * through. A node that jumps further than the list reaches is not seen, nor one that
 * went through and back between two checks: the count is a lower bound. */

/* The pairs array grows keeping what it holds. */
static int reserve_pairs(ss_self_collision *sc, size_t need) {
    return ss_self_reserve_pairs(&sc->pairs, &sc->pair_capacity, sc->count, need);
}

/* Where the nodes of a cell are: a dense box of cells around the nodes (a row of cells
 * is one run of the sorted nodes, and neighbouring cells are neighbours in memory) when
 * it has at most 4 N cells, else a hash of the cell (a few far-flung nodes would make
 * the box huge). */
typedef struct {
    int dense;
    int64_t first[3]; /* dense: the box's first cell on each axis */
    size_t size[3];   /* dense: its cells per axis */
    size_t mask;      /* hashed: buckets - 1 */
    double inv_cell;
} ss_grid;

/* The bucket of cell (cx, cy, cz), or SIZE_MAX for a cell outside a dense box. */
static size_t grid_bucket(const ss_grid *g, int64_t cx, int64_t cy, int64_t cz) {
    if (!g->dense)
        return ss_self_grid_bucket(cx, cy, cz, g->mask);
    const int64_t c[3] = {cx - g->first[0], cy - g->first[1], cz - g->first[2]};
    for (int q = 0; q < 3; q++)
        if (c[q] < 0 || (uint64_t)c[q] >= g->size[q])
            return SIZE_MAX;
    return (size_t)c[0] + g->size[0] * ((size_t)c[1] + g->size[1] * (size_t)c[2]);
}

/* The bucket of the node at p, always one of the grid's: in a dense box, its cell is
 * clamped into the box. make_grid made the box hold every node's cell, so the clamp
 * changes nothing unless p was written by another thread since (a view written while
 * the step runs): then the node goes to an edge cell (a meaningless list, but no
 * index out of range). */
static size_t node_bucket(const ss_grid *g, const double *p) {
    int64_t c[3];
    for (int q = 0; q < 3; q++) {
        c[q] = ss_self_grid_cell(p[q], g->inv_cell);
        if (g->dense) {
            const int64_t last = g->first[q] + (int64_t)g->size[q] - 1;
            c[q] = c[q] < g->first[q] ? g->first[q] : c[q] > last ? last : c[q];
        }
    }
    return grid_bucket(g, c[0], c[1], c[2]);
}

/* The grid of cells `cell` m wide for the nodes at x; its number of buckets. */
static size_t make_grid(ss_grid *g, const double *x, size_t n, double cell) {
    g->inv_cell = isfinite(cell) ? 1.0 / cell : 0.0;
    int64_t lo[3] = {INT64_MAX, INT64_MAX, INT64_MAX}, hi[3] = {INT64_MIN, INT64_MIN, INT64_MIN};
    for (size_t i = 0; i < n; i++)
        for (int q = 0; q < 3; q++) {
            const int64_t c = ss_self_grid_cell(x[3 * i + q], g->inv_cell);
            lo[q] = c < lo[q] ? c : lo[q];
            hi[q] = c > hi[q] ? c : hi[q];
        }
    const size_t limit = 4 * n > 16 ? 4 * n : 16;
    size_t cells = 1;
    g->dense = n > 0;
    for (int q = 0; q < 3 && g->dense; q++) {
        const uint64_t span = (uint64_t)(hi[q] - lo[q]) + 1; /* cell_of is within 1e15 */
        g->dense = span <= limit && cells * span <= limit;
        g->first[q] = lo[q];
        g->size[q] = (size_t)span;
        cells *= g->dense ? (size_t)span : 1;
    }
    if (g->dense)
        return cells;
    size_t buckets = 16;
    while (buckets < limit)
        buckets *= 2;
    g->mask = buckets - 1;
    return buckets;
}

/* Nonzero when p is closer than `reach` to triangle tri at x (or anything is NaN): the
 * list keeps only such pairs, so that a flat cloth's neighbours are not candidates. */
static int within(const double *p, const double *x, const int32_t *tri, double reach) {
    const double *a = x + 3 * (size_t)tri[0], *b = x + 3 * (size_t)tri[1],
                 *c = x + 3 * (size_t)tri[2];
    double w[3], d2 = 0.0;
    ss_closest_weights(p, a, b, c, w);
    for (int q = 0; q < 3; q++) {
        const double r = p[q] - (w[0] * a[q] + w[1] * b[q] + w[2] * c[q]);
        d2 += r * r;
    }
    return !(d2 >= reach * reach);
}

typedef struct {
    int32_t lo, hi, face, far; /* an edge (lo < hi), its triangle, the third vertex */
} face_edge;

static int by_edge(const void *p, const void *q) {
    const face_edge *a = p, *b = q;
    if (a->lo != b->lo)
        return a->lo < b->lo ? -1 : 1;
    if (a->hi != b->hi)
        return a->hi < b->hi ? -1 : 1;
    return a->face < b->face ? -1 : a->face > b->face;
}

/* sc->opposite for the current faces: -1 when out of memory. */
static int find_opposites(ss_self_collision *sc, const ss_system *sys) {
    const size_t nf = sys->num_faces;
    const int32_t *faces = SS_INT32S(sys, SS_FACES);
    if (ss_self_collision_reserve((void **)&sc->opposite, &sc->opposite_capacity, 3 * nf,
                                  sizeof(int32_t)))
        return -1;
    face_edge *edges = ss_malloc((3 * nf + 1) * sizeof *edges); /* topology edits only */
    if (!edges)
        return -1;
    for (size_t t = 0; t < nf; t++)
        for (int k = 0; k < 3; k++) {
            const int32_t a = faces[3 * t + k], b = faces[3 * t + (k + 1) % 3];
            edges[3 * t + (size_t)k] =
                (face_edge){a < b ? a : b, a < b ? b : a, (int32_t)(3 * t + (size_t)k),
                            faces[3 * t + (k + 2) % 3]};
            sc->opposite[3 * t + (size_t)k] = -1;
        }
    qsort(edges, 3 * nf, sizeof *edges, by_edge);
    /* Two triangles on an edge see each other's far vertex; on an edge of three or
     * more (non-manifold), none do. */
    for (size_t e = 0; e < 3 * nf;) {
        size_t end = e + 1;
        while (end < 3 * nf && edges[end].lo == edges[e].lo && edges[end].hi == edges[e].hi)
            end++;
        if (end == e + 2) {
            sc->opposite[edges[e].face] = edges[e + 1].far;
            sc->opposite[edges[e + 1].face] = edges[e].far;
        }
        e = end;
    }
    ss_free(edges);
    sc->opposite_edits = sys->topology_edits;
    sc->opposite_faces = nf;
    sc->opposite_valid = 1;
    return 0;
}

/* s = N.(p - a), N = (b - a) x (c - a): which side of the plane of (a, b, c) p is on
 * (scaled by twice the area); with `inside`, whether p's projection on the plane is
 * inside the triangle. */
static double plane_side(const double *p, const double *a, const double *b, const double *c,
                         int *inside) {
    double e1[3], e2[3], r[3];
    for (int q = 0; q < 3; q++) {
        e1[q] = b[q] - a[q];
        e2[q] = c[q] - a[q];
        r[q] = p[q] - a[q];
    }
    const double N[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                         e1[0] * e2[1] - e1[1] * e2[0]};
    if (inside) {
        /* Barycentric coordinates of the projection: (r x e2).N / nn, (e1 x r).N / nn. */
        const double nn = N[0] * N[0] + N[1] * N[1] + N[2] * N[2];
        const double rx[3] = {r[1] * e2[2] - r[2] * e2[1], r[2] * e2[0] - r[0] * e2[2],
                              r[0] * e2[1] - r[1] * e2[0]};
        const double xr[3] = {e1[1] * r[2] - e1[2] * r[1], e1[2] * r[0] - e1[0] * r[2],
                              e1[0] * r[1] - e1[1] * r[0]};
        const double u = rx[0] * N[0] + rx[1] * N[1] + rx[2] * N[2];
        const double v = xr[0] * N[0] + xr[1] * N[1] + xr[2] * N[2];
        *inside = nn > 0.0 && u >= 0.0 && v >= 0.0 && u + v <= nn;
    }
    return N[0] * r[0] + N[1] * r[1] + N[2] * r[2];
}

/* plane_side's normal N = (b - a) x (c - a), and its s = N.(p - a) for a given N. */
static void normal(const double *a, const double *b, const double *c, double N[3]) {
    double e1[3], e2[3];
    for (int q = 0; q < 3; q++) {
        e1[q] = b[q] - a[q];
        e2[q] = c[q] - a[q];
    }
    N[0] = e1[1] * e2[2] - e1[2] * e2[1];
    N[1] = e1[2] * e2[0] - e1[0] * e2[2];
    N[2] = e1[0] * e2[1] - e1[1] * e2[0];
}

static double side(const double N[3], const double *p, const double *a) {
    return N[0] * (p[0] - a[0]) + N[1] * (p[1] - a[1]) + N[2] * (p[2] - a[2]);
}

void ss_self_collision_count_crossings(ss_self_collision *sc, const ss_system *sys,
                                       const double *x) {
    const size_t n3 = 3 * sys->num_nodes;
    if (sc->seen_valid && sc->valid && sc->built_nodes == sys->num_nodes &&
        sc->built_faces == sys->num_faces && sc->built_edits == sys->topology_edits) {
        const double *x0 = sc->seen_x;
        const int32_t *faces = SS_INT32S(sys, SS_FACES);
        /* A triangle's pairs are consecutive: its normals (now and then) once for all. */
        int32_t face = -1;
        double N1[3] = {0.0, 0.0, 0.0}, N0[3] = {0.0, 0.0, 0.0};
        for (size_t c = 0; c < sc->count; c++) {
            const size_t p = 3 * (size_t)sc->pairs[2 * c];
            const int32_t *tri = faces + 3 * (size_t)sc->pairs[2 * c + 1];
            const size_t a = 3 * (size_t)tri[0], b = 3 * (size_t)tri[1], t = 3 * (size_t)tri[2];
            if (sc->pairs[2 * c + 1] != face) {
                face = sc->pairs[2 * c + 1];
                normal(x + a, x + b, x + t, N1);
                normal(x0 + a, x0 + b, x0 + t, N0);
            }
            const double s1 = side(N1, x + p, x + a), s0 = side(N0, x0 + p, x0 + a);
            if (!((s0 > 0.0 && s1 < 0.0) || (s0 < 0.0 && s1 > 0.0)))
                continue; /* the same side: most pairs, decided by two cross products */
            int in0, in1;
            plane_side(x + p, x + a, x + b, x + t, &in1);
            plane_side(x0 + p, x0 + a, x0 + b, x0 + t, &in0);
            if (in0 && in1)
                sc->pending++;
        }
        sc->pending += ss_edge_count_crossings(&sc->edges, x0, x);
    }
    sc->seen_valid =
        !ss_self_collision_reserve((void **)&sc->seen_x, &sc->seen_capacity, n3, sizeof(double));
    if (sc->seen_valid)
        memcpy(sc->seen_x, x, n3 * sizeof(double));
}

/* Cells per axis a grown box may span: cells are 1 / (SS_SPAN - 1) of the largest. */
#define SS_SPAN 3

/* Nonzero when sc->opposite is that of the current faces. */
static int opposites_current(const ss_self_collision *sc, const ss_system *sys) {
    return sc->opposite_valid && sc->opposite_edits == sys->topology_edits &&
           sc->opposite_faces == sys->num_faces;
}

/* Rebuild the list at positions x, with `opposite` the triangles' neighbours across their
 * edges (find_opposites). -1 when out of memory (the list is then invalid).
 *
 * Each node's bucket is computed once (node_bucket, into bucket_of_node), and both the
 * count and the placement of the counting sort read it: two reads of a position that
 * disagree (another thread writing it meanwhile) cannot make them disagree, which
 * would write outside `sorted`. */
static int build(ss_self_collision *sc, const ss_system *sys, const double *x,
                 const int32_t *opposite) {
    const size_t n = sys->num_nodes, nf = sys->num_faces;
    const int32_t *faces = SS_INT32S(sys, SS_FACES);
    const double reach = sc->thickness + sc->margin;
    sc->valid = 0;
    sc->count = 0;
    double cell = 0.0;
    for (size_t t = 0; t < nf; t++) {
        const int32_t *tri = faces + 3 * t;
        for (int q = 0; q < 3; q++) {
            const double u = x[3 * (size_t)tri[0] + q], v = x[3 * (size_t)tri[1] + q],
                         w = x[3 * (size_t)tri[2] + q];
            const double extent = fmax(u, fmax(v, w)) - fmin(u, fmin(v, w));
            if (extent > cell)
                cell = extent;
        }
    }
    ss_grid grid = {0}; /* (every field is set below; zeroed for the compiler) */
    const size_t num_buckets = make_grid(&grid, x, n, (cell + 2.0 * reach) / (SS_SPAN - 1));
    if (ss_self_collision_reserve((void **)&sc->buckets, &sc->bucket_capacity, num_buckets + 1,
                                  sizeof(size_t)) ||
        ss_self_collision_reserve((void **)&sc->bucket_of_node, &sc->bucket_of_node_capacity, n,
                                  sizeof(size_t)) ||
        ss_self_collision_reserve((void **)&sc->sorted, &sc->sorted_capacity, n, sizeof(int32_t)) ||
        ss_self_collision_reserve((void **)&sc->sorted_x, &sc->sorted_x_capacity, 3 * n,
                                  sizeof(double)) ||
        ss_self_collision_reserve((void **)&sc->hits, &sc->hits_capacity, n, sizeof(int32_t)) ||
        ss_self_collision_reserve((void **)&sc->built_x, &sc->built_capacity, 3 * n,
                                  sizeof(double)))
        return -1;
    size_t *start = sc->buckets, *bucket = sc->bucket_of_node;
    memset(start, 0, (num_buckets + 1) * sizeof(size_t));
    for (size_t i = 0; i < n; i++) {
        bucket[i] = node_bucket(&grid, x + 3 * i);
        start[bucket[i]]++;
    }
    for (size_t b = 1; b <= num_buckets; b++)
        start[b] += start[b - 1];
    for (size_t i = n; i-- > 0;)
        sc->sorted[--start[bucket[i]]] = (int32_t)i;
    /* The positions in bucket order, one coordinate after the other: the scan below
     * reads them in sequence, and tests them without branches. */
    double *sx = sc->sorted_x, *sy = sx + n, *sz = sy + n;
    for (size_t k = 0; k < n; k++) {
        const double *p = x + 3 * (size_t)sc->sorted[k];
        sx[k] = p[0];
        sy[k] = p[1];
        sz[k] = p[2];
    }
    int32_t *hits = sc->hits;
    for (size_t t = 0; t < nf; t++) {
        const int32_t *tri = faces + 3 * t, *far = opposite + 3 * t;
        double lo[3], hi[3];
        int64_t c0[3], c1[3];
        for (int q = 0; q < 3; q++) {
            const double u = x[3 * (size_t)tri[0] + q], v = x[3 * (size_t)tri[1] + q],
                         w = x[3 * (size_t)tri[2] + q];
            lo[q] = fmin(u, fmin(v, w)) - reach;
            hi[q] = fmax(u, fmax(v, w)) + reach;
            c0[q] = ss_self_grid_cell(lo[q], grid.inv_cell);
            c1[q] = ss_self_grid_cell(hi[q], grid.inv_cell);
            if (c1[q] > c0[q] + (SS_SPAN - 1) || c1[q] < c0[q]) /* non-finite: one cell */
                c1[q] = c0[q];
        }
        const size_t first_pair = sc->count; /* this triangle's pairs start here */
        /* The box's cells as runs of buckets: dense, the cells along x are consecutive
         * buckets (one run per row); hashed, one run per cell. */
        for (int64_t cz = c0[2]; cz <= c1[2]; cz++)
            for (int64_t cy = c0[1]; cy <= c1[1]; cy++)
                for (int64_t cx = c0[0]; cx <= c1[0]; cx++) {
                    size_t b = grid_bucket(&grid, cx, cy, cz), last = b;
                    if (grid.dense) {
                        const int64_t end = grid.first[0] + (int64_t)grid.size[0] - 1;
                        b = grid_bucket(&grid, cx > grid.first[0] ? cx : grid.first[0], cy, cz);
                        last = grid_bucket(&grid, c1[0] < end ? c1[0] : end, cy, cz);
                        cx = c1[0]; /* the row is one run */
                    }
                    if (b == SIZE_MAX || last == SIZE_MAX || last < b)
                        continue; /* outside the box of the nodes: empty */
                    size_t num_hits = 0;
                    for (size_t k = start[b]; k < start[last + 1]; k++) {
                        hits[num_hits] = (int32_t)k;
                        num_hits += (sx[k] >= lo[0]) & (sx[k] <= hi[0]) & (sy[k] >= lo[1]) &
                                    (sy[k] <= hi[1]) & (sz[k] >= lo[2]) & (sz[k] <= hi[2]);
                    }
                    for (size_t h = 0; h < num_hits; h++) {
                        const size_t k = (size_t)hits[h];
                        const double p[3] = {sx[k], sy[k], sz[k]};
                        const int32_t j = sc->sorted[k];
                        if (j == tri[0] || j == tri[1] || j == tri[2] || j == far[0] ||
                            j == far[1] || j == far[2] || !within(p, x, tri, reach))
                            continue;
                        /* Two hashed cells may share a bucket: a node once. */
                        int again = 0;
                        for (size_t q = grid.dense ? sc->count : first_pair; q < sc->count; q++)
                            again |= sc->pairs[2 * q] == j;
                        if (again)
                            continue;
                        if (reserve_pairs(sc, sc->count + 1))
                            return -1;
                        sc->pairs[2 * sc->count] = j;
                        sc->pairs[2 * sc->count + 1] = (int32_t)t;
                        sc->count++;
                    }
                }
    }
    sc->edges.count = 0;
    if (sc->edges_on && ss_edge_list_build(&sc->edges, sys, x, reach))
        return -1;
    memcpy(sc->built_x, x, 3 * n * sizeof(double));
    sc->built_edits = sys->topology_edits;
    sc->built_nodes = n;
    sc->built_faces = nf;
    sc->valid = 1;
    return 0;
}

/* Nonzero when sc's list, valid for the topology, holds every pair within thickness +
 * extra at x (0 <= extra <= margin): no node has moved more than (margin - extra) / 2
 * since the build (the top of this part). */
static int fits_within(const ss_self_collision *sc, const ss_system *sys, const double *x,
                       double extra) {
    if (sc->valid && sc->built_edits == sys->topology_edits && sc->built_nodes == sys->num_nodes &&
        sc->built_faces == sys->num_faces) {
        const double room = sc->margin - extra;
        const double limit = 0.25 * room * room; /* ((margin - extra) / 2)^2 */
        const size_t n = sys->num_nodes;
        const double *x0 = sc->built_x;
        /* Moves relative to a common translation (which changes no distance): the
         * centre c of the box of the moves. Every node's move is within the box's half
         * diagonal of c. One pass of min and max, exact in any order, that the compiler
         * vectorises; a NaN move makes `broken` nonzero. */
        double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
        int broken = 0;
        for (size_t k = 0; k < 3 * n; k += 3)
            for (int q = 0; q < 3; q++) {
                const double d = x[k + (size_t)q] - x0[k + (size_t)q];
                lo[q] = d < lo[q] ? d : lo[q];
                hi[q] = d > hi[q] ? d : hi[q];
                broken |= d != d;
            }
        double farthest = 0.0; /* the squared half diagonal */
        for (int q = 0; q < 3; q++)
            farthest += 0.25 * (hi[q] - lo[q]) * (hi[q] - lo[q]);
        farthest = broken ? NAN : n ? farthest : 0.0; /* NaN: rebuild (and fail) */
        return farthest <= limit;
    }
    return 0;
}

int ss_self_collision_fits(const ss_self_collision *sc, const ss_system *sys, const double *x) {
    return fits_within(sc, sys, x, 0.0);
}

/* Make the list valid for positions x: 0, or -1 when out of memory. */
int ss_self_collision_refresh(ss_self_collision *sc, const ss_system *sys, const double *x) {
    if (ss_self_collision_fits(sc, sys, x))
        return 0;
    ss_self_collision_count_crossings(sc, sys, x); /* over the old list, before it goes */
    sc->valid = 0;
    sc->count = 0;
    if (!opposites_current(sc, sys) && find_opposites(sc, sys))
        return -1;
    return build(sc, sys, x, sc->opposite);
}

int ss_self_collision_query_list(ss_self_collision *own, const ss_self_collision *step,
                                 const ss_system *sys, const double *x) {
    memset(own, 0, sizeof *own);
    own->thickness = step->thickness;
    own->stiffness = step->stiffness;
    own->friction = step->friction;
    own->margin = step->margin;
    own->edges_on = step->edges_on;
    const int32_t *opposite = step->opposite;
    if (!opposites_current(step, sys)) {
        if (find_opposites(own, sys))
            return -1;
        opposite = own->opposite;
    }
    return build(own, sys, x, opposite);
}

void ss_self_collision_release(ss_self_collision *sc) {
    ss_free(sc->pairs);
    ss_free(sc->built_x);
    ss_free(sc->buckets);
    ss_free(sc->bucket_of_node);
    ss_free(sc->sorted);
    ss_free(sc->seen_x);
    ss_free(sc->opposite);
    ss_free(sc->sorted_x);
    ss_free(sc->hits);
    ss_free(sc->results);
    ss_free(sc->touching);
    ss_edge_list_release(&sc->edges);
}

/* The closest point of triangle (a, b, c) to p as barycentric weights w (Ericson,
 * Real-Time Collision Detection, 5.1.5: by the region of p). */
void ss_closest_weights(const double *p, const double *a, const double *b, const double *c,
                        double w[3]) {
    double ab[3], ac[3], ap[3], bp[3], cp[3];
    for (int q = 0; q < 3; q++) {
        ab[q] = b[q] - a[q];
        ac[q] = c[q] - a[q];
        ap[q] = p[q] - a[q];
        bp[q] = p[q] - b[q];
        cp[q] = p[q] - c[q];
    }
#define DOT(u, v) ((u)[0] * (v)[0] + (u)[1] * (v)[1] + (u)[2] * (v)[2])
    const double d1 = DOT(ab, ap), d2 = DOT(ac, ap), d3 = DOT(ab, bp), d4 = DOT(ac, bp);
    const double d5 = DOT(ab, cp), d6 = DOT(ac, cp);
#undef DOT
    w[0] = w[1] = w[2] = 0.0;
    const double vc = d1 * d4 - d3 * d2, vb = d5 * d2 - d1 * d6, va = d3 * d6 - d5 * d4;
    if (d1 <= 0.0 && d2 <= 0.0) {
        w[0] = 1.0;
    } else if (d3 >= 0.0 && d4 <= d3) {
        w[1] = 1.0;
    } else if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) {
        w[1] = d1 / (d1 - d3);
        w[0] = 1.0 - w[1];
    } else if (d6 >= 0.0 && d5 <= d6) {
        w[2] = 1.0;
    } else if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) {
        w[2] = d2 / (d2 - d6);
        w[0] = 1.0 - w[2];
    } else if (va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0) {
        w[2] = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        w[1] = 1.0 - w[2];
    } else if (va + vb + vc > 0.0) {
        const double inv = 1.0 / (va + vb + vc);
        w[1] = vb * inv;
        w[2] = vc * inv;
        w[0] = 1.0 - w[1] - w[2];
    } else {
        w[0] = 1.0; /* degenerate (or non-finite): its first vertex */
    }
}

/* ---- Self-collision as constraints (XPBD) -----------------------------------------
 *
 * XPBD (xpbd.c) projects each candidate pair, node p and triangle (a, b, c), as an
 * inequality constraint in the passes of its solve, after the springs and node-node
 * contact, in list order: with the closest point q = sum w_k x_k (weights from
 * ss_closest_weights at the current positions), d = |p - q|, n = (p - q) / d (the
 * triangle's normal when d = 0), C = d - h and the generalised inverse mass
 * W = w_p + w_a^2 w_A + w_b^2 w_B + w_c^2 w_C (w_X = 1/m, 0 pinned):
 *     dlambda = -C / W, clamped so that lambda >= 0 (it pushes, never pulls),
 *     p += w_p dlambda n,  x_k -= w_k w_X dlambda n:
 * compliance 0 (a hard layer of the thickness: the stiffness is the force methods'
 * only), momentum kept (the corrections times the masses sum to zero). Friction as for
 * node-node contact: the slip of p against the triangle's point under it over the
 * substep, its part across n, taken back up to mu times the normal correction in all.
 * No restitution (self-collision has none). Per candidate, the scratch keeps (lambda,
 * lambda_t) in the first two of its 6 doubles. */

int ss_self_collision_constraints_begin(const ss_system *sys, const double *x) {
    ss_self_collision_search(sys, x);
    ss_self_collision *sc = sys->self_collision;
    if (sc->search_failed)
        return -1;
    for (size_t c = 0; c < sc->count; c++)
        sc->results[6 * c] = sc->results[6 * c + 1] = 0.0;
    ss_edge_constraints_begin(&sc->edges);
    return 0;
}

void ss_self_collision_constraints_solve(const ss_system *sys, double *records, size_t stride) {
    ss_self_collision *sc = sys->self_collision;
    if (sc->search_failed)
        return;
    const int32_t *faces = SS_INT32S(sys, SS_FACES);
    const double h = sc->thickness, mu = sc->friction;
    for (size_t c = 0; c < sc->count; c++) {
        const int32_t *pair = sc->pairs + 2 * c;
        const int32_t *tri = faces + 3 * (size_t)pair[1];
        double *p = records + (size_t)pair[0] * stride;
        double *v[3] = {records + (size_t)tri[0] * stride, records + (size_t)tri[1] * stride,
                        records + (size_t)tri[2] * stride};
        double *state = sc->results + 6 * c;
        double e1[3], e2[3], N[3];
        for (int q = 0; q < 3; q++) {
            e1[q] = v[1][q] - v[0][q];
            e2[q] = v[2][q] - v[0][q];
        }
        N[0] = e1[1] * e2[2] - e1[2] * e2[1];
        N[1] = e1[2] * e2[0] - e1[0] * e2[2];
        N[2] = e1[0] * e2[1] - e1[1] * e2[0];
        const double nn = N[0] * N[0] + N[1] * N[1] + N[2] * N[2];
        const double s =
            N[0] * (p[0] - v[0][0]) + N[1] * (p[1] - v[0][1]) + N[2] * (p[2] - v[0][2]);
        if (state[0] == 0.0 && s * s > (1.0 + SS_PLANE_SLACK) * h * h * nn)
            continue; /* farther than h from the plane, and not pushed this substep */
        double w[3], n[3], d2 = 0.0;
        ss_closest_weights(p, v[0], v[1], v[2], w);
        for (int q = 0; q < 3; q++) {
            n[q] = p[q] - (w[0] * v[0][q] + w[1] * v[1][q] + w[2] * v[2][q]);
            d2 += n[q] * n[q];
        }
        if (state[0] == 0.0 && !(d2 < h * h))
            continue;
        double d = sqrt(d2);
        const double C = d - h;
        if (d == 0.0) {
            d = sqrt(nn);
            if (!(d > 0.0))
                continue;
            for (int q = 0; q < 3; q++)
                n[q] = N[q];
        }
        for (int q = 0; q < 3; q++)
            n[q] /= d;
        const double W =
            p[3] + ((w[0] * w[0] * v[0][3] + w[1] * w[1] * v[1][3]) + w[2] * w[2] * v[2][3]);
        if (!(W > 0.0))
            continue;
        double dlambda = -C / W;
        if (state[0] + dlambda < 0.0)
            dlambda = -state[0];
        state[0] = state[0] + dlambda;
        for (int q = 0; q < 3; q++) {
            const double g = dlambda * n[q];
            p[q] = p[q] + p[3] * g;
            for (int k = 0; k < 3; k++)
                v[k][q] = v[k][q] - (w[k] * v[k][3]) * g;
        }
        const double room = mu * state[0] - state[1];
        if (!(mu > 0.0) || !(room > 0.0))
            continue;
        double slip[3];
        for (int q = 0; q < 3; q++)
            slip[q] = (p[q] - p[4 + q]) -
                      (w[0] * (v[0][q] - v[0][4 + q]) + w[1] * (v[1][q] - v[1][4 + q]) +
                       w[2] * (v[2][q] - v[2][4 + q]));
        const double dmu = ss_contact_friction_take(slip, n, room, W);
        if (!(dmu > 0.0))
            continue;
        state[1] = state[1] + dmu;
        for (int q = 0; q < 3; q++) {
            const double g = dmu * slip[q];
            p[q] = p[q] - p[3] * g;
            for (int k = 0; k < 3; k++)
                v[k][q] = v[k][q] + (w[k] * v[k][3]) * g;
        }
    }
    ss_edge_constraints_solve(&sc->edges, records, stride, h, NULL, 0.0, mu);
}

size_t ss_self_collision_constraints_pushed(const ss_system *sys) {
    const ss_self_collision *sc = sys->self_collision;
    size_t pushed = 0;
    for (size_t c = 0; !sc->search_failed && c < sc->count; c++)
        pushed += sc->results[6 * c] > 0.0;
    return pushed + (sc->search_failed ? 0 : ss_edge_constraints_pushed(&sc->edges));
}

/* ---- Self-collision as contact energy (VBD) ---------------------------------------
 *
 * VBD (vbd.c) finds the substep's contacts once, at positions of its own (midway to its
 * inertial target): the list is made to hold every pair within h + extra there (rebuilt
 * unless no node moved more than (margin - extra) / 2 since its build; the margin is set
 * to twice extra, at least the thickness, when it is less than extra or more than four
 * times that, for this and the later builds; before a rebuild its
 * crossings are counted at the positions the substep starts from, never at positions no
 * node has reached), and its node-triangle candidates, then its edge pairs, in list
 * order, that are within h + extra there are handed to the caller. Each is then a 4-node
 * contact of the vertex blocks, whose closest points the blocks find again at their
 * iterates (ss_self_contact_at). */

int ss_self_contact_at(int kind, const double *const pts[4], double thickness, double w[4],
                       double n[3], double *depth) {
    const double *a = pts[0], *b = pts[1], *c = pts[2], *d = pts[3];
    double d2 = 0.0;
    if (kind == SS_QUAD_NODE_TRIANGLE) {
        double wt[3];
        ss_closest_weights(a, b, c, d, wt);
        w[0] = 1.0, w[1] = -wt[0], w[2] = -wt[1], w[3] = -wt[2];
        for (int q = 0; q < 3; q++) {
            n[q] = a[q] - (wt[0] * b[q] + wt[1] * c[q] + wt[2] * d[q]);
            d2 += n[q] * n[q];
        }
        return ss_self_contact_normal(n, d2, thickness, b, c, b, d, depth);
    }
    double s, t;
    ss_segments_closest(a, b, c, d, &s, &t);
    ss_edge_weights(s, t, w);
    for (int q = 0; q < 3; q++) {
        n[q] = (w[0] * a[q] + w[1] * b[q]) + (w[2] * c[q] + w[3] * d[q]);
        d2 += n[q] * n[q];
    }
    return ss_self_contact_normal(n, d2, thickness, a, b, c, d, depth);
}

double ss_self_contact_gap(int kind, const double *const pts[4]) {
    const double *a = pts[0], *b = pts[1], *c = pts[2], *d = pts[3];
    double w[4], d2 = 0.0;
    if (kind == SS_QUAD_NODE_TRIANGLE) {
        double wt[3];
        ss_closest_weights(a, b, c, d, wt);
        w[0] = 1.0, w[1] = -wt[0], w[2] = -wt[1], w[3] = -wt[2];
    } else {
        double s, t;
        ss_segments_closest(a, b, c, d, &s, &t);
        ss_edge_weights(s, t, w);
    }
    for (int q = 0; q < 3; q++) {
        const double r = (w[0] * a[q] + w[1] * b[q]) + (w[2] * c[q] + w[3] * d[q]);
        d2 += r * r;
    }
    return sqrt(d2);
}

int ss_self_collision_near(const ss_system *sys, const double *now, const double *x, double extra,
                           ss_quad_visit visit, void *context) {
    ss_self_collision *sc = sys->self_collision;
    /* The list's margin: twice the reach asked for (so that it is kept while the nodes
     * move less than extra / 2), at least the thickness; changed when too small, or
     * four times too large (a fast move is over). */
    const double wanted = 2.0 * extra > sc->thickness ? 2.0 * extra : sc->thickness;
    if (extra > sc->margin || 4.0 * wanted < sc->margin) {
        sc->margin = wanted;
        sc->valid = 0;
    }
    if (!fits_within(sc, sys, x, extra)) {
        ss_self_collision_count_crossings(sc, sys, now); /* over the old list, at real ones */
        sc->valid = 0;
        sc->count = 0;
        if ((!opposites_current(sc, sys) && find_opposites(sc, sys)) ||
            build(sc, sys, x, sc->opposite))
            return -1;
    }
    const int32_t *faces = SS_INT32S(sys, SS_FACES);
    const double reach = sc->thickness + extra;
    for (size_t c = 0; c < sc->count; c++) {
        const int32_t *tri = faces + 3 * (size_t)sc->pairs[2 * c + 1];
        const int32_t node[4] = {sc->pairs[2 * c], tri[0], tri[1], tri[2]};
        const double *pts[4] = {x + 3 * (size_t)node[0], x + 3 * (size_t)node[1],
                                x + 3 * (size_t)node[2], x + 3 * (size_t)node[3]};
        double w[4], n[3], depth;
        if (ss_self_contact_at(SS_QUAD_NODE_TRIANGLE, pts, reach, w, n, &depth) &&
            visit(context, SS_QUAD_NODE_TRIANGLE, node, sc->thickness))
            return -1;
    }
    for (size_t c = 0; c < sc->edges.count; c++) {
        size_t at[4];
        ss_edge_pair_nodes(&sc->edges, c, at);
        const int32_t node[4] = {(int32_t)at[0], (int32_t)at[1], (int32_t)at[2], (int32_t)at[3]};
        double w[4], n[3], depth;
        if (ss_edge_contact_at(x, 3, at, reach, w, n, &depth) &&
            visit(context, SS_QUAD_EDGES, node, sc->thickness))
            return -1;
    }
    return 0;
}
