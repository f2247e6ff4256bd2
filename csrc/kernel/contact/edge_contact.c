/* edge_contact.c - edge-edge contact of self-colliding surfaces: two edges of the faces
 * that come closer than the thickness h are pushed apart, so that two cloths (or two
 * folds of one) that meet edge across edge cannot pass between their nodes.
 *
 * For edges (a, b) and (c, d), the closest points p = a + s (b - a) and q = c + t (d - c)
 * (s, t in [0, 1]; Ericson, Real-Time Collision Detection, 5.1.9), at distance d_pq =
 * |p - q| < h, n = (p - q) / d_pq: the law of node-triangle self-collision
 * (self_collision.c), with the contact point of the first edge in the node's place,
 *     F = k (h - d_pq) n                                                  N
 * on p, shared by the ends as (1 - s) F on a, s F on b, and -(1 - t) F on c, -t F on d:
 * the four sum to zero (momentum kept to round-off) and are minus the gradient of
 *     E = 1/2 k (h - d_pq)^2                                              J
 * (the closest points are a minimum over (s, t), so their motion along the edges does
 * not change d_pq to first order), which ss_energy counts in `contact`. With friction
 * mu, the sliding u_t of u = v_p - v_q is resisted by self-collision's smoothed Coulomb
 * friction (ss_self_collision_friction), its power booked with damping's. Segments that
 * meet (d_pq = 0) are pushed along (b - a) x (d - c) with depth h. A pair whose closest
 * point is an end of an edge is also a node's pair with a triangle of that edge, or a
 * node's with the other edge's triangle: near a node the pushes add up, as a node near a
 * triangles' common edge is pushed by both (the potentials add: still conservative).
 *
 * Which pairs: the faces' edges, each once; two edges with a node in common, or with a
 * node of one joined by a face edge to a node of the other, are left out (neighbours in
 * the mesh, which only a fold sharper than the mesh resolves could bring into contact;
 * flat, the closest such pairs are 0.7 of an edge apart and would be candidates
 * everywhere). The list is self_collision.c's Verlet list's: built with it, at the same
 * reach h + margin and kept as long as it is (no node has moved more than margin / 2 since:
 * each point of an edge has then moved at most margin / 2, so a pair left out is still at
 * least h apart). Broad phase: each edge's midpoint cell, of side the largest edge extent
 * on any axis plus the reach (two edges within reach have their midpoints in neighbouring
 * cells), hashed and counting-sorted (an edge's bucket in index order); each edge, in index
 * order, takes the later edges of its own cell and the edges of the 13 cells after it. The order of
 * the pairs depends on the positions only; their forces are computed alone (threads share them) and
 * added serially in pair order, after the node-triangle candidates': bit-identical for any
 * thread count.
 *
 * XPBD: each pair is an inequality constraint C = d_pq - h >= 0 with the generalised
 * inverse mass W = (1 - s)^2 w_a + s^2 w_b + (1 - t)^2 w_c + t^2 w_d (w = 1/m, 0
 * pinned), projected as node-triangle self-collision's (self_collision.c: a hard layer,
 * lambda >= 0, momentum kept), with the same positional friction (ss_contact_friction_take).
 *
 * Crossings: at each check (self_collision.c's), a pair went through when, its nodes
 * moving straight from the last check's positions to the new ones, the four became
 * coplanar at some tau in [0, 1] (a root of the cubic V(tau) = ((b - a) x (d - c)).(c -
 * a)) with the segments meeting there (pair_crossed): counted with the node-triangle
 * crossings. (A sign change of V between the checks alone is not enough: V also changes
 * sign when two edges turn through parallel at a distance, and keeps its sign when an
 * edge passes through another while turning; a flat cloth's edges are coplanar all
 * along, and meet at no root.) */
#include "springsim.h"

#include "edge_contact.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void ss_edge_pair_forces(ss_edge_list *el, const double *x, const double *v, double h, double k,
                         double mu, size_t first, size_t last) {
    for (size_t c = first; c < last; c++) {
        size_t node[4];
        double w[4], n[3], depth, *F = el->results + SS_EDGE_RESULT * c;
        ss_edge_pair_nodes(el, c, node);
        const int hit = ss_edge_contact_at(x, 3, node, h, w, n, &depth);
        el->touching[c] = (uint8_t)hit;
        if (!hit)
            continue;
        const double fn = k * depth;
        for (int q = 0; q < 3; q++)
            F[q] = fn * n[q];
        F[3] = w[1];
        F[4] = -w[3];
        if (mu > 0.0) {
            double u[3], g[3];
            ss_edge_relative_velocity(v, node, w, u);
            ss_self_collision_friction(mu, u, n, fn, g);
            for (int q = 0; q < 3; q++)
                F[q] += g[q];
        }
    }
}

void ss_edge_gather_forces(const ss_edge_list *el, double *f, size_t stride) {
    for (size_t c = 0; c < el->count; c++) {
        if (!el->touching[c])
            continue;
        size_t node[4];
        double w[4];
        const double *F = el->results + SS_EDGE_RESULT * c;
        ss_edge_pair_nodes(el, c, node);
        ss_edge_weights(F[3], F[4], w);
        for (int corner = 0; corner < 4; corner++) {
            double *fv = f + node[corner] * stride;
            for (int q = 0; q < 3; q++)
                fv[q] += w[corner] * F[q];
        }
    }
}

double ss_edge_depth_sum(const ss_edge_list *el, const double *x, double h) {
    double sum = 0.0;
    for (size_t c = 0; c < el->count; c++) {
        size_t node[4];
        double w[4], n[3], depth;
        ss_edge_pair_nodes(el, c, node);
        if (ss_edge_contact_at(x, 3, node, h, w, n, &depth))
            sum += depth * depth;
    }
    return sum;
}

double ss_edge_power(const ss_edge_list *el, const double *x, const double *v, double h, double k,
                     double mu) {
    double power = 0.0;
    for (size_t c = 0; mu > 0.0 && c < el->count; c++) {
        size_t node[4];
        double w[4], n[3], depth, u[3], g[3];
        ss_edge_pair_nodes(el, c, node);
        if (!ss_edge_contact_at(x, 3, node, h, w, n, &depth))
            continue;
        ss_edge_relative_velocity(v, node, w, u);
        power += ss_self_collision_friction(mu, u, n, k * depth, g);
    }
    return power;
}

/* The pair's four nodes at tau of the straight moves from x0 to x: p[k] = x0 + tau (x - x0). */
static void pair_at(const double *x0, const double *x, const size_t node[4], double tau,
                    double p[4][3]) {
    for (int k = 0; k < 4; k++)
        for (int q = 0; q < 3; q++) {
            const double from = x0[3 * node[k] + (size_t)q];
            p[k][q] = from + tau * (x[3 * node[k] + (size_t)q] - from);
        }
}

static inline void cross3(const double *u, const double *v, double *w) {
    w[0] = u[1] * v[2] - u[2] * v[1];
    w[1] = u[2] * v[0] - u[0] * v[2];
    w[2] = u[0] * v[1] - u[1] * v[0];
}

static inline double dot3(const double *u, const double *v) {
    return (u[0] * v[0] + u[1] * v[1]) + u[2] * v[2];
}

/* ((b - a) x (d - c)).(c - a) of p = (a, b, c, d): 0 exactly when the four are coplanar. */
static double volume(double p[4][3]) {
    double e1[3], e2[3], r[3], n[3];
    for (int q = 0; q < 3; q++) {
        e1[q] = p[1][q] - p[0][q];
        e2[q] = p[3][q] - p[2][q];
        r[q] = p[2][q] - p[0][q];
    }
    cross3(e1, e2, n);
    return dot3(n, r);
}

/* Whether coplanar segments (a, b) and (c, d) meet: each one's ends on the two sides of
 * the other's line, the sides taken along their common normal; parallel ones (normal
 * below round-off) when their distance is below 1e-9 of `scale`. */
static int segments_meet(double p[4][3], double scale) {
    double e1[3], e2[3], n[3];
    for (int q = 0; q < 3; q++) {
        e1[q] = p[1][q] - p[0][q];
        e2[q] = p[3][q] - p[2][q];
    }
    cross3(e1, e2, n);
    if (dot3(n, n) <= (1e-12 * scale * scale) * (1e-12 * scale * scale)) {
        double s, t, d2 = 0.0;
        ss_segments_closest(p[0], p[1], p[2], p[3], &s, &t);
        for (int q = 0; q < 3; q++) {
            const double g = (p[0][q] + s * e1[q]) - (p[2][q] + t * e2[q]);
            d2 += g * g;
        }
        return d2 < (1e-9 * scale) * (1e-9 * scale);
    }
    /* side of point r from the line (o, o + e): ((e) x (r - o)).n */
    double side[4];
    const int line[4][3] = {{0, 1, 2}, {0, 1, 3}, {2, 3, 0}, {2, 3, 1}};
    for (int k = 0; k < 4; k++) {
        const double *o = p[line[k][0]], *end = p[line[k][1]], *r = p[line[k][2]];
        double e[3], u[3], w[3];
        for (int q = 0; q < 3; q++) {
            e[q] = end[q] - o[q];
            u[q] = r[q] - o[q];
        }
        cross3(e, u, w);
        side[k] = dot3(w, n);
    }
    return side[0] * side[1] <= 0.0 && side[2] * side[3] <= 0.0;
}

/* Whether the pair's edges pass through each other while each node moves straight from
 * x0 to x: the four nodes' volume V(tau) (a cubic in tau) is found 0 in [0, 1], between
 * 0, 1 and its turning points, by bisection, and there the segments meet. */
static int pair_crossed(const double *x0, const double *x, const size_t node[4]) {
    double p[4][3], v[4];
    const double taus[4] = {0.0, 1.0 / 3.0, 2.0 / 3.0, 1.0};
    double scale = 0.0, move = 0.0;
    for (int k = 0; k < 4; k++) {
        pair_at(x0, x, node, taus[k], p);
        v[k] = volume(p);
    }
    for (int k = 0; k < 4; k += 2) {
        double e2 = 0.0, m0 = 0.0, m1 = 0.0;
        for (int q = 0; q < 3; q++) {
            const size_t i = 3 * node[k] + (size_t)q, j = 3 * node[k + 1] + (size_t)q;
            e2 += (x0[j] - x0[i]) * (x0[j] - x0[i]);
            m0 += (x[i] - x0[i]) * (x[i] - x0[i]);
            m1 += (x[j] - x0[j]) * (x[j] - x0[j]);
        }
        scale = sqrt(e2) > scale ? sqrt(e2) : scale;
        move += sqrt(m0 > m1 ? m0 : m1); /* no point of the edge moved farther */
    }
    /* Apart by more than both edges moved: they cannot have met (most pairs). */
    pair_at(x0, x, node, 0.0, p);
    double s, t, d2 = 0.0;
    ss_segments_closest(p[0], p[1], p[2], p[3], &s, &t);
    for (int q = 0; q < 3; q++) {
        const double g = (p[0][q] + s * (p[1][q] - p[0][q])) - (p[2][q] + t * (p[3][q] - p[2][q]));
        d2 += g * g;
    }
    if (sqrt(d2) > move * (1.0 + 1e-9))
        return 0;
    /* V(tau) = c3 tau^3 + c2 tau^2 + c1 tau + c0 through the four values (Lagrange). */
    const double c3 = 4.5 * (-v[0] + 3.0 * v[1] - 3.0 * v[2] + v[3]);
    const double c2 = 4.5 * (2.0 * v[0] - 5.0 * v[1] + 4.0 * v[2] - v[3]);
    const double c1 = -5.5 * v[0] + 9.0 * v[1] - 4.5 * v[2] + v[3];
    double cuts[4] = {0.0, 1.0, 1.0, 1.0};
    int count = 1;
    /* turning points: 3 c3 tau^2 + 2 c2 tau + c1 = 0 */
    if (c3 != 0.0) {
        const double disc = 4.0 * c2 * c2 - 12.0 * c3 * c1;
        if (disc >= 0.0) {
            const double root = sqrt(disc);
            const double t1 = (-2.0 * c2 - root) / (6.0 * c3), t2 = (-2.0 * c2 + root) / (6.0 * c3);
            const double lo = t1 < t2 ? t1 : t2, hi = t1 < t2 ? t2 : t1;
            if (lo > 0.0 && lo < 1.0)
                cuts[count++] = lo;
            if (hi > 0.0 && hi < 1.0 && hi != lo)
                cuts[count++] = hi;
        }
    } else if (c2 != 0.0) {
        const double t1 = -c1 / (2.0 * c2);
        if (t1 > 0.0 && t1 < 1.0)
            cuts[count++] = t1;
    }
    cuts[count++] = 1.0;
    for (int k = 0; k + 1 < count; k++) {
        double lo = cuts[k], hi = cuts[k + 1];
        pair_at(x0, x, node, lo, p);
        double vlo = volume(p);
        pair_at(x0, x, node, hi, p);
        const double vhi = volume(p);
        if ((vlo > 0.0 && vhi > 0.0) || (vlo < 0.0 && vhi < 0.0))
            continue; /* no root between (V is monotone there) */
        if (vlo == 0.0) {
            hi = lo;
        } else if (vhi != 0.0) {
            for (int it = 0; it < 80 && hi - lo > 0.0; it++) {
                const double mid = 0.5 * (lo + hi);
                if (!(mid > lo && mid < hi))
                    break;
                pair_at(x0, x, node, mid, p);
                const double vm = volume(p);
                if ((vm > 0.0) == (vlo > 0.0) && vm != 0.0) {
                    lo = mid;
                    vlo = vm;
                } else {
                    hi = mid;
                }
            }
        } else {
            lo = hi;
        }
        pair_at(x0, x, node, hi, p);
        if (segments_meet(p, scale))
            return 1;
        pair_at(x0, x, node, lo, p);
        if (segments_meet(p, scale))
            return 1;
    }
    return 0;
}

size_t ss_edge_count_crossings(const ss_edge_list *el, const double *x0, const double *x) {
    size_t crossed = 0;
    for (size_t c = 0; c < el->count; c++) {
        size_t node[4];
        ss_edge_pair_nodes(el, c, node);
        crossed += (size_t)pair_crossed(x0, x, node);
    }
    return crossed;
}

void ss_edge_constraints_begin(ss_edge_list *el) {
    for (size_t c = 0; c < el->count; c++)
        el->results[SS_EDGE_RESULT * c] = el->results[SS_EDGE_RESULT * c + 1] = 0.0;
}

void ss_edge_constraints_solve(ss_edge_list *el, double *records, size_t stride, double thickness,
                               const double *radius, double compliance, double mu) {
    for (size_t c = 0; c < el->count; c++) {
        const double h =
            radius ? radius[el->pairs[2 * c]] + radius[el->pairs[2 * c + 1]] : thickness;
        size_t node[4];
        double *state = el->results + SS_EDGE_RESULT * c, *r[4];
        ss_edge_pair_nodes(el, c, node);
        for (int k = 0; k < 4; k++)
            r[k] = records + node[k] * stride;
        if (state[0] == 0.0 && ss_edge_apart_by_box(r[0], r[1], r[2], r[3], h))
            continue; /* apart, and not pushed this substep */
        double w[4], n[3], s, t, d2 = 0.0;
        ss_segments_closest(r[0], r[1], r[2], r[3], &s, &t);
        ss_edge_weights(s, t, w);
        for (int q = 0; q < 3; q++) {
            n[q] = (w[0] * r[0][q] + w[1] * r[1][q]) + (w[2] * r[2][q] + w[3] * r[3][q]);
            d2 += n[q] * n[q];
        }
        if (state[0] == 0.0 && !(d2 < h * h))
            continue; /* apart, and not pushed this substep */
        double d = sqrt(d2);
        const double C = d - h;
        if (d == 0.0) {
            const double e1[3] = {r[1][0] - r[0][0], r[1][1] - r[0][1], r[1][2] - r[0][2]};
            const double e2[3] = {r[3][0] - r[2][0], r[3][1] - r[2][1], r[3][2] - r[2][2]};
            n[0] = e1[1] * e2[2] - e1[2] * e2[1];
            n[1] = e1[2] * e2[0] - e1[0] * e2[2];
            n[2] = e1[0] * e2[1] - e1[1] * e2[0];
            d = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
            if (!(d > 0.0))
                continue;
        }
        for (int q = 0; q < 3; q++)
            n[q] /= d;
        const double W = (w[0] * w[0] * r[0][3] + w[1] * w[1] * r[1][3]) +
                         (w[2] * w[2] * r[2][3] + w[3] * w[3] * r[3][3]);
        if (!(W > 0.0))
            continue;
        double dlambda = (-C - compliance * state[0]) / (W + compliance);
        if (state[0] + dlambda < 0.0)
            dlambda = -state[0];
        state[0] = state[0] + dlambda;
        for (int q = 0; q < 3; q++) {
            const double g = dlambda * n[q];
            for (int k = 0; k < 4; k++)
                r[k][q] = r[k][q] + (w[k] * r[k][3]) * g;
        }
        const double room = mu * state[0] - state[1];
        if (!(mu > 0.0) || !(room > 0.0))
            continue;
        double slip[3];
        for (int q = 0; q < 3; q++)
            slip[q] = (w[0] * (r[0][q] - r[0][4 + q]) + w[1] * (r[1][q] - r[1][4 + q])) +
                      (w[2] * (r[2][q] - r[2][4 + q]) + w[3] * (r[3][q] - r[3][4 + q]));
        const double dmu = ss_contact_friction_take(slip, n, room, W);
        if (!(dmu > 0.0))
            continue;
        state[1] = state[1] + dmu;
        for (int q = 0; q < 3; q++) {
            const double g = dmu * slip[q];
            for (int k = 0; k < 4; k++)
                r[k][q] = r[k][q] - (w[k] * r[k][3]) * g;
        }
    }
}

size_t ss_edge_constraints_pushed(const ss_edge_list *el) {
    size_t pushed = 0;
    for (size_t c = 0; c < el->count; c++)
        pushed += el->results[SS_EDGE_RESULT * c] > 0.0;
    return pushed;
}

/* ---- The list: the faces' edges, and the pairs within reach ------------------- */

static int by_edge(const void *p, const void *q) {
    const int32_t *a = p, *b = q;
    return a[0] != b[0] ? (a[0] > b[0]) - (a[0] < b[0]) : (a[1] > b[1]) - (a[1] < b[1]);
}

/* el->edges for the current faces: -1 when out of memory. */
static int find_edges(ss_edge_list *el, const ss_system *sys) {
    const size_t nf = sys->num_faces;
    const int32_t *faces = SS_INT32S(sys, SS_FACES);
    if (ss_self_collision_reserve((void **)&el->edges, &el->edges_capacity, 6 * nf + 2,
                                  sizeof(int32_t)))
        return -1;
    int32_t *e = el->edges;
    for (size_t t = 0; t < nf; t++)
        for (int k = 0; k < 3; k++) {
            const int32_t a = faces[3 * t + (size_t)k], b = faces[3 * t + (size_t)(k + 1) % 3];
            e[6 * t + 2 * (size_t)k] = a < b ? a : b;
            e[6 * t + 2 * (size_t)k + 1] = a < b ? b : a;
        }
    if (ss_edge_list_index(el, 3 * nf, sys->num_nodes))
        return -1;
    el->edges_edits = sys->topology_edits;
    el->edges_faces = nf;
    el->edges_valid = 1;
    return 0;
}

int ss_edge_list_index(ss_edge_list *el, size_t raw, size_t n) {
    int32_t *e = el->edges;
    qsort(e, raw, 2 * sizeof(int32_t), by_edge);
    size_t unique = 0;
    for (size_t k = 0; k < raw; k++)
        if (unique == 0 || e[2 * k] != e[2 * unique - 2] || e[2 * k + 1] != e[2 * unique - 1]) {
            e[2 * unique] = e[2 * k];
            e[2 * unique + 1] = e[2 * k + 1];
            unique++;
        }
    el->num_edges = unique;
    /* Each node's neighbours along the edges (CSR): joined() scans a node's few. */
    if (ss_self_collision_reserve((void **)&el->adj_first, &el->adj_first_capacity, n + 1,
                                  sizeof(size_t)) ||
        ss_self_collision_reserve((void **)&el->adj, &el->adj_capacity, 2 * unique + 1,
                                  sizeof(int32_t)))
        return -1;
    size_t *first = el->adj_first;
    memset(first, 0, (n + 1) * sizeof(size_t));
    for (size_t k = 0; k < 2 * unique; k++)
        first[(size_t)e[k] + 1]++;
    for (size_t i = 0; i < n; i++)
        first[i + 1] += first[i];
    for (size_t k = 0; k < unique; k++) { /* first[i] advances to i's end, then back */
        el->adj[first[(size_t)e[2 * k]]++] = e[2 * k + 1];
        el->adj[first[(size_t)e[2 * k + 1]]++] = e[2 * k];
    }
    for (size_t i = n; i > 0; i--)
        first[i] = first[i - 1];
    first[0] = 0;
    return 0;
}

/* Nonzero when nodes i and j are joined by a face edge. */
static int joined(const ss_edge_list *el, int32_t i, int32_t j) {
    int found = 0;
    for (size_t k = el->adj_first[i]; k < el->adj_first[i + 1]; k++)
        found |= el->adj[k] == j;
    return found;
}

/* Nonzero when a node of edge e is joined by a face edge to a node of f (neighbours in
 * the mesh, with those that have a node in common: see the top of this file). */
static int neighbours(const ss_edge_list *el, size_t e, size_t f) {
    const int32_t *u = el->edges + 2 * e, *v = el->edges + 2 * f;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            if (joined(el, u[i], v[j]))
                return 1;
    return 0;
}

/* A cell coordinate; non-finite or huge positions all go to cell 0 (their forces are NaN
 * anyway, and the step rolls back). */
static int reserve_pairs(ss_edge_list *el, size_t need) {
    return ss_self_reserve_pairs(&el->pairs, &el->pair_capacity, el->count, need);
}

/* An edge as the broad phase reads it: its midpoint's cell, its bounding box, its index
 * and its nodes; kept in bucket order, so that a scan reads its bucket in sequence. */
typedef struct {
    int64_t cell[3];
    double box[6]; /* lo, then hi */
    int32_t edge, a, b;
} edge_slot;

int ss_edge_list_build(ss_edge_list *el, const ss_system *sys, const double *x, double reach) {
    el->count = 0;
    if (!(el->edges_valid && el->edges_edits == sys->topology_edits &&
          el->edges_faces == sys->num_faces) &&
        find_edges(el, sys))
        return -1;
    return ss_edge_list_search(el, x, reach, NULL, NULL);
}

int ss_edge_list_search(ss_edge_list *el, const double *x, double reach, ss_edge_filter allowed,
                        const void *context) {
    el->count = 0;
    const size_t ne = el->num_edges;
    double extent = 0.0;
    for (size_t e = 0; e < ne; e++)
        for (int q = 0; q < 3; q++) {
            const double span = fabs(x[3 * (size_t)el->edges[2 * e] + (size_t)q] -
                                     x[3 * (size_t)el->edges[2 * e + 1] + (size_t)q]);
            extent = span > extent ? span : extent;
        }
    const double cell = extent + reach, inv_cell = isfinite(cell) && cell > 0.0 ? 1.0 / cell : 0.0;
    size_t buckets = 16;
    while (buckets < 2 * ne)
        buckets *= 2;
    if (ss_self_collision_reserve(&el->slots, &el->slots_capacity, 2 * ne + 2, sizeof(edge_slot)) ||
        ss_self_collision_reserve((void **)&el->bucket, &el->bucket_capacity, ne + 1,
                                  sizeof(size_t)) ||
        ss_self_collision_reserve((void **)&el->start, &el->start_capacity, buckets + 1,
                                  sizeof(size_t)))
        return -1;
    edge_slot *raw = el->slots, *sorted = raw + ne;
    size_t *start = el->start;
    memset(start, 0, (buckets + 1) * sizeof(size_t));
    for (size_t e = 0; e < ne; e++) {
        edge_slot *o = raw + e;
        o->edge = (int32_t)e;
        o->a = el->edges[2 * e];
        o->b = el->edges[2 * e + 1];
        const double *a = x + 3 * (size_t)o->a, *b = x + 3 * (size_t)o->b;
        for (int q = 0; q < 3; q++) {
            o->cell[q] = ss_self_grid_cell(0.5 * (a[q] + b[q]), inv_cell);
            o->box[q] = fmin(a[q], b[q]);
            o->box[3 + q] = fmax(a[q], b[q]);
        }
        el->bucket[e] = ss_self_grid_bucket(o->cell[0], o->cell[1], o->cell[2], buckets - 1);
        start[el->bucket[e] + 1]++;
    }
    for (size_t b = 0; b < buckets; b++)
        start[b + 1] += start[b];
    for (size_t e = 0; e < ne; e++) /* stable: a bucket lists its edges in index order */
        sorted[start[el->bucket[e]]++] = raw[e];
    for (size_t b = buckets; b > 0; b--) /* start[b] was advanced to its end: shift back */
        start[b] = start[b - 1];
    start[0] = 0;
    for (size_t e = 0; e < ne; e++) {
        const edge_slot *own = raw + e;
        const double *a = x + 3 * (size_t)own->a, *b = x + 3 * (size_t)own->b, *u = own->box;
        /* Half the neighbourhood: its own cell (the edges after it) and the 13 cells
         * after it (z, then y, then x greater), so that each pair is met once. */
        for (int64_t dz = 0; dz <= 1; dz++)
            for (int64_t dy = dz == 0 ? 0 : -1; dy <= 1; dy++)
                for (int64_t dx = dz == 0 && dy == 0 ? 0 : -1; dx <= 1; dx++) {
                    const int64_t around[3] = {own->cell[0] + dx, own->cell[1] + dy,
                                               own->cell[2] + dz};
                    const int same = dz == 0 && dy == 0 && dx == 0;
                    const size_t bucket =
                        ss_self_grid_bucket(around[0], around[1], around[2], buckets - 1);
                    for (size_t k = start[bucket]; k < start[bucket + 1]; k++) {
                        const edge_slot *o = sorted + k;
                        const double *w = o->box;
                        /* each pair once, from its own cell only; then most are farther
                         * apart than the reach along some axis, which their boxes show
                         * (NaN: kept), or have a node in common */
                        if ((same && o->edge <= own->edge) | (o->cell[0] != around[0]) |
                            (o->cell[1] != around[1]) | (o->cell[2] != around[2]) |
                            (u[0] > w[3] + reach) | (w[0] > u[3] + reach) | (u[1] > w[4] + reach) |
                            (w[1] > u[4] + reach) | (u[2] > w[5] + reach) | (w[2] > u[5] + reach) |
                            (o->a == own->a) | (o->a == own->b) | (o->b == own->a) |
                            (o->b == own->b))
                            continue;
                        const double *c = x + 3 * (size_t)o->a, *d = x + 3 * (size_t)o->b;
                        double s, t, d2 = 0.0;
                        ss_segments_closest(a, b, c, d, &s, &t);
                        for (int q = 0; q < 3; q++) {
                            const double g =
                                (a[q] + s * (b[q] - a[q])) - (c[q] + t * (d[q] - c[q]));
                            d2 += g * g;
                        }
                        const size_t f = (size_t)o->edge;
                        if (d2 >= reach * reach || neighbours(el, e, f) ||
                            (allowed && !allowed(context, el->edges + 2 * e, el->edges + 2 * f)))
                            continue; /* (NaN is kept: its forces fail the step) */
                        if (reserve_pairs(el, el->count + 1))
                            return -1;
                        el->pairs[2 * el->count] = (int32_t)(e < f ? e : f);
                        el->pairs[2 * el->count + 1] = (int32_t)(e < f ? f : e);
                        el->count++;
                    }
                }
    }
    return 0;
}

void ss_edge_list_sort_pairs(ss_edge_list *el) {
    if (el->count > 1)
        qsort(el->pairs, el->count, 2 * sizeof(int32_t), by_edge);
}

int ss_edge_list_fit(ss_edge_list *el) {
    return ss_self_collision_reserve((void **)&el->results, &el->results_capacity,
                                     SS_EDGE_RESULT * el->count, sizeof(double)) ||
           ss_self_collision_reserve((void **)&el->touching, &el->touching_capacity, el->count, 1);
}

void ss_edge_list_release(ss_edge_list *el) {
    ss_free(el->edges);
    ss_free(el->pairs);
    ss_free(el->adj_first);
    ss_free(el->adj);
    ss_free(el->slots);
    ss_free(el->bucket);
    ss_free(el->start);
    ss_free(el->results);
    ss_free(el->touching);
}

size_t ss_edge_list_nbytes(const ss_edge_list *el) {
    return (el->edges ? el->edges_capacity * sizeof(int32_t) : 0) +
           (el->pairs ? 2 * el->pair_capacity * sizeof(int32_t) : 0) +
           (el->slots ? el->slots_capacity * sizeof(edge_slot) : 0) +
           (el->adj_first ? el->adj_first_capacity * sizeof(size_t) : 0) +
           (el->adj ? el->adj_capacity * sizeof(int32_t) : 0) +
           (el->bucket ? el->bucket_capacity * sizeof(size_t) : 0) +
           (el->start ? el->start_capacity * sizeof(size_t) : 0) +
           (el->results ? el->results_capacity * sizeof(double) : 0) +
           (el->touching ? el->touching_capacity : 0);
}
