/* edge_contact.h - edge-edge contact of self-colliding surfaces (edge_contact.c), and what
 * self-collision's two kinds of contact share (friction, the contact direction, the broad
 * phase's grid, the growth of a pair list). Private to self_collision.c, which owns the
 * list (inside its own setting) and calls these at each of its steps, so that the force
 * evaluation, XPBD, the energy and the books see one self-collision: its node-triangle
 * candidates first, then its edge pairs. */
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
/* XPBD: lambda = lambda_t = 0 for every pair; then one pass of the thickness as a hard
 * layer with friction on records of `stride` doubles, (x, y, z, w, s_x, s_y, s_z, ...). */
void ss_edge_constraints_begin(ss_edge_list *el);
void ss_edge_constraints_solve(ss_edge_list *el, double *records, size_t stride, double h,
                               double mu);
size_t ss_edge_constraints_pushed(const ss_edge_list *el);
/* Free every buffer (not el itself); bytes held. */
void ss_edge_list_release(ss_edge_list *el);
size_t ss_edge_list_nbytes(const ss_edge_list *el);

#endif
