/* edge_contact.h - edge-edge contact of self-colliding surfaces (edge_contact.c), and what
 * self-collision's two kinds of contact share (friction, the contact direction, the broad
 * phase's grid, the growth of a pair list). Private to self_collision.c, which owns the
 * list (inside its own setting) and calls these at each of its steps, so that the force
 * evaluation, XPBD, the energy and the books see one self-collision: its node-triangle
 * candidates first, then its edge pairs; and to segment_contact.c, whose segment pairs
 * are a list of its own (its edges the springs of strings with radii) that reuses the
 * closest points, the pair geometry, the broad phase, the gather of forces, the XPBD
 * projection and the crossing count. */
#ifndef SPRINGSIM_EDGE_CONTACT_H
#define SPRINGSIM_EDGE_CONTACT_H

#include "springsim.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* m/s: self-collision's friction is smoothed below this sliding speed (so that it has a
 * power). */
#define SS_SELF_SLIP 1e-3

/* Self-collision's friction, node-triangle and edge-edge alike: the force g (N) on the
 * contact's first side of a pair pushed with fn (N) whose sides move at relative velocity
 * u (m/s; overwritten), n the unit normal: g = -mu fn u_t / sqrt(|u_t|^2 + s^2), u_t the
 * part of u across n, s = SS_SELF_SLIP (Coulomb's, smoothed). Returns its power, W
 * (>= 0). */
static inline double ss_self_collision_friction(double mu, double u[3], const double n[3],
                                                double fn, double g[3]) {
    const double un = u[0] * n[0] + u[1] * n[1] + u[2] * n[2];
    double ut2 = 0.0;
    for (int q = 0; q < 3; q++) {
        u[q] -= un * n[q];
        ut2 += u[q] * u[q];
    }
    const double scale = mu * fn / sqrt(ut2 + SS_SELF_SLIP * SS_SELF_SLIP);
    for (int q = 0; q < 3; q++)
        g[q] = -scale * u[q];
    return scale * ut2;
}

/* Self-collision's broad phase, node-triangle and edge-edge alike: a grid coordinate
 * (non-finite or huge positions all go to cell 0: their forces are NaN anyway, and the
 * step rolls back), and a cell's bucket in a table of mask + 1 (a power of 2). */
static inline int64_t ss_self_grid_cell(double q, double inv_cell) {
    const double c = floor(q * inv_cell);
    return fabs(c) < 1e15 ? (int64_t)c : 0;
}
static inline size_t ss_self_grid_bucket(int64_t cx, int64_t cy, int64_t cz, size_t mask) {
    const uint64_t h =
        (uint64_t)cx * 73856093u ^ (uint64_t)cy * 19349663u ^ (uint64_t)cz * 83492791u;
    return (size_t)(h ^ h >> 29) & mask;
}

/* A list of int32 pairs that grows keeping its first `count`: room for `need` pairs in
 * *pairs (*capacity pairs now). 0, or -1 when out of memory (nothing changed). */
static inline int ss_self_reserve_pairs(int32_t **pairs, size_t *capacity, size_t count,
                                        size_t need) {
    if (need <= *capacity)
        return 0;
    const size_t grown = *capacity * 2 > need ? *capacity * 2 : need + 1024;
    int32_t *fresh = ss_malloc(2 * grown * sizeof(int32_t));
    if (!fresh)
        return -1;
    if (count)
        memcpy(fresh, *pairs, 2 * count * sizeof(int32_t));
    ss_free(*pairs);
    *pairs = fresh;
    *capacity = grown;
    return 0;
}

/* Self-collision's contact direction, node-triangle and edge-edge alike: n holds the offset
 * between the two closest points (m), d2 = |n|^2. Returns 0 when they are apart (d >= h);
 * else 1, with the depth h - d and n made a unit vector. At d = 0 (the sides meet) n is
 * (b - a) x (d - c), normalised, and the depth h (0 when that is 0: no direction). */
static inline int ss_self_contact_normal(double n[3], double d2, double h, const double *a,
                                         const double *b, const double *c, const double *d,
                                         double *depth) {
    if (!(d2 < h * h))
        return 0;
    double dist = sqrt(d2);
    if (dist == 0.0) {
        const double e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
        const double e2[3] = {d[0] - c[0], d[1] - c[1], d[2] - c[2]};
        n[0] = e1[1] * e2[2] - e1[2] * e2[1];
        n[1] = e1[2] * e2[0] - e1[0] * e2[2];
        n[2] = e1[0] * e2[1] - e1[1] * e2[0];
        dist = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        if (!(dist > 0.0))
            return 0;
        *depth = h;
    } else {
        *depth = h - dist;
    }
    for (int q = 0; q < 3; q++)
        n[q] /= dist;
    return 1;
}

/* The edge pairs of a self-collision's candidate list, and their scratch (grow-only). */
typedef struct ss_edge_list {
    /* The faces' edges, each once, (lo < hi) in increasing order; current while
     * edges_valid and the topology's edit count and face count are the ones seen. */
    int32_t *edges;
    size_t num_edges, edges_capacity, edges_edits, edges_faces;
    int edges_valid;
    size_t *adj_first; /* (N + 1,): node i's neighbours along the edges are adj[first[i] ..] */
    int32_t *adj;
    size_t adj_first_capacity, adj_capacity;
    int32_t *pairs; /* (count, 2) edge indices e < f */
    size_t count, pair_capacity;
    /* The broad phase's scratch: the edges as it reads them, by index then by bucket
     * (edge_contact.c's slots), each edge's bucket and the buckets' starts. */
    void *slots;
    size_t *bucket, *start;
    size_t slots_capacity, bucket_capacity, start_capacity;
    /* Per pair: the force F on the first edge's contact point and the parameters (s, t)
     * (forces), or (lambda, lambda_t) (XPBD); and whether it touches. */
    double *results;
    uint8_t *touching;
    size_t results_capacity, touching_capacity;
} ss_edge_list;

/* Doubles per pair in results. */
#define SS_EDGE_RESULT 5

/* The closest points of segments (p1, q1) and (p2, q2): p1 + s (q1 - p1) and p2 + t (q2 -
 * p2) (Ericson 5.1.9; a degenerate segment is its first point; parallel ones take s = 0). */
static inline void ss_segments_closest(const double *p1, const double *q1, const double *p2,
                                       const double *q2, double *s_out, double *t_out) {
    double d1[3], d2[3], r[3];
    for (int q = 0; q < 3; q++) {
        d1[q] = q1[q] - p1[q];
        d2[q] = q2[q] - p2[q];
        r[q] = p1[q] - p2[q];
    }
#define DOT(u, v) ((u)[0] * (v)[0] + (u)[1] * (v)[1] + (u)[2] * (v)[2])
    const double a = DOT(d1, d1), e = DOT(d2, d2), f = DOT(d2, r);
    double s = 0.0, t = 0.0;
    if (!(a > 0.0) && !(e > 0.0)) {
        s = t = 0.0;
    } else if (!(a > 0.0)) {
        t = f / e;
        t = t < 0.0 ? 0.0 : t > 1.0 ? 1.0 : t;
    } else {
        const double c = DOT(d1, r);
        if (!(e > 0.0)) {
            s = -c / a;
            s = s < 0.0 ? 0.0 : s > 1.0 ? 1.0 : s;
        } else {
            const double b = DOT(d1, d2), denom = a * e - b * b;
            if (denom > 0.0) {
                s = (b * f - c * e) / denom;
                s = s < 0.0 ? 0.0 : s > 1.0 ? 1.0 : s;
            }
            t = (b * s + f) / e;
            if (t < 0.0) {
                t = 0.0;
                s = -c / a;
                s = s < 0.0 ? 0.0 : s > 1.0 ? 1.0 : s;
            } else if (t > 1.0) {
                t = 1.0;
                s = (b - c) / a;
                s = s < 0.0 ? 0.0 : s > 1.0 ? 1.0 : s;
            }
        }
    }
#undef DOT
    *s_out = s;
    *t_out = t;
}

/* The four nodes of pair c: a, b of the first edge, then c, d of the second. */
static inline void ss_edge_pair_nodes(const ss_edge_list *el, size_t c, size_t node[4]) {
    const int32_t *pair = el->pairs + 2 * c;
    for (int k = 0; k < 2; k++) {
        node[2 * k] = (size_t)el->edges[2 * (size_t)pair[k]];
        node[2 * k + 1] = (size_t)el->edges[2 * (size_t)pair[k] + 1];
    }
}

/* The signed weights of the four nodes for parameters (s, t): p - q = sum w_k x_k. */
static inline void ss_edge_weights(double s, double t, double w[4]) {
    w[0] = 1.0 - s;
    w[1] = s;
    w[2] = -(1.0 - t);
    w[3] = -t;
}

/* Slack of the box test, relative to h: far above the rounding of the closest points, so
 * that a pair the test skips is one they would have found apart too. */
#define SS_EDGE_BOX_SLACK 1e-6

/* Nonzero when edges (a, b) and (c, d) are farther apart than h along some axis (so
 * apart): most of the list's pairs, skipped before the closest points. NaN: never. */
static inline int ss_edge_apart_by_box(const double *a, const double *b, const double *c,
                                       const double *d, double h) {
    const double gap = (1.0 + SS_EDGE_BOX_SLACK) * h;
    int apart = 0;
    for (int q = 0; q < 3; q++) {
        const double lo1 = a[q] < b[q] ? a[q] : b[q], hi1 = a[q] < b[q] ? b[q] : a[q];
        const double lo2 = c[q] < d[q] ? c[q] : d[q], hi2 = c[q] < d[q] ? d[q] : c[q];
        apart |= (lo1 - hi2 > gap) | (lo2 - hi1 > gap);
    }
    return apart;
}

/* One pair's contact at x (nodes x[node[k]] with `stride` doubles per row): 0 when apart
 * (d_pq >= h, or no direction); else 1, with the weights w, the unit normal n from q to p
 * and the depth h - d_pq. */
static inline int ss_edge_contact_at(const double *x, size_t stride, const size_t node[4], double h,
                                     double w[4], double n[3], double *depth) {
    const double *a = x + stride * node[0], *b = x + stride * node[1], *c = x + stride * node[2],
                 *d = x + stride * node[3];
    if (ss_edge_apart_by_box(a, b, c, d, h))
        return 0;
    double s, t;
    ss_segments_closest(a, b, c, d, &s, &t);
    ss_edge_weights(s, t, w);
    double d2 = 0.0;
    for (int q = 0; q < 3; q++) {
        n[q] = (w[0] * a[q] + w[1] * b[q]) + (w[2] * c[q] + w[3] * d[q]);
        d2 += n[q] * n[q];
    }
    return ss_self_contact_normal(n, d2, h, a, b, c, d, depth);
}

/* u = sum w_k v_k: the velocity of p relative to q. */
static inline void ss_edge_relative_velocity(const double *v, const size_t node[4],
                                             const double w[4], double u[3]) {
    for (int q = 0; q < 3; q++)
        u[q] = (w[0] * v[3 * node[0] + (size_t)q] + w[1] * v[3 * node[1] + (size_t)q]) +
               (w[2] * v[3 * node[2] + (size_t)q] + w[3] * v[3 * node[3] + (size_t)q]);
}

/* Self-collision's scratch, node-triangle and edge-edge alike, grows only: *p to hold
 * `need` elements of `size` bytes, keeping none of the old (its capacity in elements in
 * *capacity); -1 when out of memory. */
static inline int ss_self_collision_reserve(void **p, size_t *capacity, size_t need, size_t size) {
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

/* The pairs of edges (no node in common, no node of one a face neighbour of a node of
 * the other) closer than `reach` at x: -1 when out of memory (the list is then empty). */
int ss_edge_list_build(ss_edge_list *el, const ss_system *sys, const double *x, double reach);
/* Nonzero when edges e and f (their nodes, lo < hi) may touch (a list's own rule). */
typedef int (*ss_edge_filter)(const void *context, const int32_t *e, const int32_t *f);
/* The list's search, for the edges it holds: the pairs closer than `reach` at x that
 * share no node, are not neighbours along the edges and that `allowed` (NULL: every
 * pair) lets touch; -1 when out of memory (the list is then empty). */
int ss_edge_list_search(ss_edge_list *el, const double *x, double reach, ss_edge_filter allowed,
                        const void *context);
/* el->edges[0 .. 2 raw) (each lo < hi) sorted and made unique, el->num_edges set, and
 * each node's neighbours along them (n nodes) indexed: -1 when out of memory. */
int ss_edge_list_index(ss_edge_list *el, size_t raw, size_t n);
/* The pairs in (e, f) order (a solve order that depends on the topology only). */
void ss_edge_list_sort_pairs(ss_edge_list *el);
/* Results and touching for the pairs: -1 when out of memory. */
int ss_edge_list_fit(ss_edge_list *el);
/* The forces of pairs [first, last) at (x, v) into results (any thread, disjoint ranges):
 * thickness h (m), stiffness k (N/m), friction mu. */
void ss_edge_pair_forces(ss_edge_list *el, const double *x, const double *v, double h, double k,
                         double mu, size_t first, size_t last);
/* f (rows `stride` apart) += the touching pairs' forces, in pair order (one thread). */
void ss_edge_gather_forces(const ss_edge_list *el, double *f, size_t stride);
/* sum (h - d)^2 over the touching pairs at x, m^2 (the caller multiplies by k / 2). */
double ss_edge_depth_sum(const ss_edge_list *el, const double *x, double h);
/* Power friction takes out at (x, v), W. */
double ss_edge_power(const ss_edge_list *el, const double *x, const double *v, double h, double k,
                     double mu);
/* Pairs that went through each other between positions x0 and x (see edge_contact.c). */
size_t ss_edge_count_crossings(const ss_edge_list *el, const double *x0, const double *x);
/* XPBD: lambda = lambda_t = 0 for every pair; then one pass of the thickness as a layer
 * (hard for compliance 0, else of compliance a~ = 1 / (k dt^2)) with friction on records of
 * `stride` doubles, (x, y, z, w, s_x, s_y, s_z, ...). The thickness of pair (e, f) is
 * radius[e] + radius[f], or `thickness` when radius is NULL. */
void ss_edge_constraints_begin(ss_edge_list *el);
void ss_edge_constraints_solve(ss_edge_list *el, double *records, size_t stride, double thickness,
                               const double *radius, double compliance, double mu);
size_t ss_edge_constraints_pushed(const ss_edge_list *el);
/* Free every buffer (not el itself); bytes held. */
void ss_edge_list_release(ss_edge_list *el);
size_t ss_edge_list_nbytes(const ss_edge_list *el);

#endif
