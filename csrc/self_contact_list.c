/* self_contact_list.c - self-collision's broad phase: which (node, triangle) pairs
 * the force evaluation checks (self_contact.c), and the closest point of a triangle.
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
#include "self_contact_list.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Grow-only: *p to hold `need` elements of `size` bytes, keeping none of the old. */
int ss_self_contact_reserve(void **p, size_t *capacity, size_t need, size_t size) {
    if (need <= *capacity && *p)
        return 0;
    size_t grown = *capacity + *capacity / 2;
    if (grown < need)
        grown = need;
    if (grown == 0)
        grown = 1;
    void *fresh = ss_malloc(grown * size);
    if (!fresh)
        return -1;
    ss_free(*p);
    *p = fresh;
    *capacity = grown;
    return 0;
}

/* The pairs array grows keeping what it holds. */
static int reserve_pairs(ss_self_contact *sc, size_t need) {
    if (need <= sc->pair_capacity)
        return 0;
    size_t grown = sc->pair_capacity * 2 > need ? sc->pair_capacity * 2 : need + 1024;
    int32_t *fresh = ss_malloc(2 * grown * sizeof(int32_t));
    if (!fresh)
        return -1;
    if (sc->count)
        memcpy(fresh, sc->pairs, 2 * sc->count * sizeof(int32_t));
    ss_free(sc->pairs);
    sc->pairs = fresh;
    sc->pair_capacity = grown;
    return 0;
}

/* A grid coordinate; non-finite or huge positions all go to cell 0 (their forces are
 * NaN anyway, and the step rolls back). */
static int64_t cell_of(double q, double inv_cell) {
    const double c = floor(q * inv_cell);
    return fabs(c) < 1e15 ? (int64_t)c : 0;
}

static size_t bucket_of(int64_t cx, int64_t cy, int64_t cz, size_t mask) {
    const uint64_t h =
        (uint64_t)cx * 73856093u ^ (uint64_t)cy * 19349663u ^ (uint64_t)cz * 83492791u;
    return (size_t)(h ^ h >> 29) & mask;
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
        return bucket_of(cx, cy, cz, g->mask);
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
        c[q] = cell_of(p[q], g->inv_cell);
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
            const int64_t c = cell_of(x[3 * i + q], g->inv_cell);
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
static int find_opposites(ss_self_contact *sc, const ss_system *sys) {
    const size_t nf = sys->num_faces;
    const int32_t *faces = SS_INT32S(sys, SS_FACES);
    if (ss_self_contact_reserve((void **)&sc->opposite, &sc->opposite_capacity, 3 * nf,
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

void ss_self_contact_count_crossings(ss_self_contact *sc, const ss_system *sys, const double *x) {
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
                sc->crossings++;
        }
    }
    sc->seen_valid =
        !ss_self_contact_reserve((void **)&sc->seen_x, &sc->seen_capacity, n3, sizeof(double));
    if (sc->seen_valid)
        memcpy(sc->seen_x, x, n3 * sizeof(double));
}

/* Cells per axis a grown box may span: cells are 1 / (SS_SPAN - 1) of the largest. */
#define SS_SPAN 3

/* Nonzero when sc->opposite is that of the current faces. */
static int opposites_current(const ss_self_contact *sc, const ss_system *sys) {
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
static int build(ss_self_contact *sc, const ss_system *sys, const double *x,
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
    if (ss_self_contact_reserve((void **)&sc->buckets, &sc->bucket_capacity, num_buckets + 1,
                                sizeof(size_t)) ||
        ss_self_contact_reserve((void **)&sc->bucket_of_node, &sc->bucket_of_node_capacity, n,
                                sizeof(size_t)) ||
        ss_self_contact_reserve((void **)&sc->sorted, &sc->sorted_capacity, n, sizeof(int32_t)) ||
        ss_self_contact_reserve((void **)&sc->sorted_x, &sc->sorted_x_capacity, 3 * n,
                                sizeof(double)) ||
        ss_self_contact_reserve((void **)&sc->hits, &sc->hits_capacity, n, sizeof(int32_t)) ||
        ss_self_contact_reserve((void **)&sc->built_x, &sc->built_capacity, 3 * n, sizeof(double)))
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
            c0[q] = cell_of(lo[q], grid.inv_cell);
            c1[q] = cell_of(hi[q], grid.inv_cell);
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
    memcpy(sc->built_x, x, 3 * n * sizeof(double));
    sc->built_edits = sys->topology_edits;
    sc->built_nodes = n;
    sc->built_faces = nf;
    sc->valid = 1;
    return 0;
}

int ss_self_contact_fits(const ss_self_contact *sc, const ss_system *sys, const double *x) {
    if (sc->valid && sc->built_edits == sys->topology_edits && sc->built_nodes == sys->num_nodes &&
        sc->built_faces == sys->num_faces) {
        const double limit = 0.25 * sc->margin * sc->margin; /* (margin / 2)^2 */
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

/* Make the list valid for positions x: 0, or -1 when out of memory. */
int ss_self_contact_refresh(ss_self_contact *sc, const ss_system *sys, const double *x) {
    if (ss_self_contact_fits(sc, sys, x))
        return 0;
    ss_self_contact_count_crossings(sc, sys, x); /* over the old list, before it goes */
    sc->valid = 0;
    sc->count = 0;
    if (!opposites_current(sc, sys) && find_opposites(sc, sys))
        return -1;
    return build(sc, sys, x, sc->opposite);
}

int ss_self_contact_query_list(ss_self_contact *own, const ss_self_contact *step,
                               const ss_system *sys, const double *x) {
    memset(own, 0, sizeof *own);
    own->thickness = step->thickness;
    own->stiffness = step->stiffness;
    own->friction = step->friction;
    own->margin = step->margin;
    const int32_t *opposite = step->opposite;
    if (!opposites_current(step, sys)) {
        if (find_opposites(own, sys))
            return -1;
        opposite = own->opposite;
    }
    return build(own, sys, x, opposite);
}

void ss_self_contact_release(ss_self_contact *sc) {
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
