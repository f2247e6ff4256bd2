/* segment_contact.c - segment contact: strings with radii that cannot pass through each
 * other between their nodes.
 *
 * With segment contact on (sys->contact->segments, 3D), each spring whose two nodes a, b
 * have contact radii r_a, r_b > 0 is a segment of radius R = (r_a + r_b) / 2 (a constant
 * along it: see "Why a constant radius" below). For two segments (a, b) and (c, d), the
 * closest points p = a + s (b - a) and q = c + t (d - c) (s, t in [0, 1]; Ericson 5.1.9,
 * ss_segments_closest), at distance d_pq, overlap by
 *     delta = R_ab + R_cd - d_pq                                           m
 * and, when delta > 0, p is pushed along n = (p - q) / d_pq by node-node contact's law
 * (ss_contact_law: the spring k delta, its dashpot, its friction) with the relative
 * velocity u = v_p - v_q = sum w_k v_k of the contact points, w = (1 - s, s, -(1 - t),
 * -t): the force F on p is shared by the ends as w_k F (so (1 - s) F on a, s F on b,
 * -(1 - t) F on c, -t F on d), which sum to zero: momentum is kept to round-off. The
 * spring part is minus the gradient of E = 1/2 k delta^2 (the closest points minimise
 * d_pq over (s, t), so their sliding along the segments does not change it to first
 * order), which ss_energy counts in `contact`; the dashpot's and friction's power is
 * booked with node-node contact's (ss_contact_power).
 *
 * The stiffness: the user's k_c (N/m), or from the step as node-node contact's,
 * k = m_k (w_c dt / dt)^2 with m_k = 1 / W_max, W_max = max(w_a, w_b) + max(w_c, w_d)
 * (w = 1/m, 0 pinned): the largest generalised inverse mass sum_k w_k^2 / m_k of the
 * contact point over (s, t), so that no node meets a stiffer contact than node-node
 * contact's stable one (k w_k^2 / m_k <= k W_max <= (w_c dt / dt)^2), and a constant of
 * the pair, so that the force stays conservative (for two equal nodes m_k = m / 2, node
 * contact's m_eff). The dashpot and friction take the contact point's own effective mass
 * 1 / W, W = sum_k w_k^2 / m_k at (s, t): the overlap's oscillator then has exactly the
 * damping ratio the restitution asks.
 *
 * Why a constant radius: with r(s) = (1 - s) r_a + s r_b, delta would depend on (s, t)
 * through r as well as through d_pq, the closest points would no longer make delta
 * stationary, and the force at them would not be the gradient of 1/2 k delta^2 (the books
 * would not balance). Strings of one radius (the usual case) see no difference.
 *
 * Which pairs: the segments (each spring once, however many join the same two nodes)
 * that share no node, with no node of one joined by a spring to a node of the other
 * (neighbours along the string, as edge_contact.c leaves out face neighbours: at a bend
 * they would touch everywhere), and whose groups may touch, every node of one with every
 * node of the other (ss_contact_enabled). Searched at every force evaluation, as node
 * pairs are, by edge_contact.c's broad phase (a hashed grid of segment midpoints, pairs
 * within 2 R_max), then sorted by their segments' indices (e, f): each pair's force is
 * computed alone (threads share them, after the node pairs) and they are added serially
 * in that order, so the bits do not depend on the thread count.
 *
 * XPBD: each pair is an inequality constraint C = d_pq - (R_ab + R_cd) >= 0, solved in
 * (e, f) order (as node pairs are in (i, j) order), with
 * edge_contact.c's projection (lambda >= 0, momentum kept, positional friction) and node
 * contact's compliance 1 / (k_c dt^2) (0, a hard layer, for the law from the step); it
 * gets no restitution pass (its contacts are inelastic).
 *
 * Crossings: each step call sees the positions as it starts; after every substep, the
 * pairs within 2 R_max + 2 D of each other at the new positions, D the largest node move
 * since the positions seen (every pair that met in between, moving in a straight line, is
 * among them: from where they met, each point of theirs moved at most D), whose
 * four nodes, moving straight, became coplanar with the segments meeting there went
 * through (ss_edge_count_crossings, the cubic's roots): counted into
 * sys->state.crossings, with self-collision's. A move faster than the guarantee's bound
 * (docs/guide/node-contact.md) is counted as well: the check is swept over the substep's
 * move, not over the pairs in contact. The check's list, a superset of the pairs within
 * 2 R_max at the new positions, is kept by the next search if it is at the same positions
 * (symplectic Euler's and most methods' next force evaluation): each search sorts its
 * pairs by (e, f), so the touching pairs come in the same order from either list and the
 * sums have the same bits. */
#include "springsim.h"

#include "edge_contact.h"

#include <math.h>
#include <string.h>

struct ss_segments {
    ss_edge_list list; /* edges: the segments (lo < hi); pairs: the last search's */
    double *radius;    /* (num_edges,) R of each segment at the last search, m */
    size_t radius_capacity;
    uint8_t *mask; /* (M,) which springs were segments when the edges were made */
    size_t mask_capacity, mask_springs, mask_nodes, mask_edits;
    int edges_valid;
    double *seen; /* (N, 3) positions at the last crossing check (the step's only) */
    size_t seen_capacity;
    int seen_valid;
    /* The list is the last crossing check's, built at `seen` within 2 R_max + reuse_margin:
     * a search at those positions with no larger margin keeps it (see the top). */
    int reuse;
    double reuse_margin;
    int failed; /* the last search ran out of memory */
};

ss_status ss_contact_set_segments(ss_system *sys, int on) {
    if (on && sys->dim != 3)
        return ss_fail(sys, SS_ERR_VALUE,
                       "segment contact needs a 3D system (strings in a plane meet at nodes)");
    sys->contact->segments = on != 0;
    sys->state_edits++; /* new contact energy: the short calls' books start afresh */
    return SS_OK;
}

/* sg->list.edges for the springs whose nodes both have radii: rebuilt when that set or
 * the topology changed. -1 when out of memory. */
static int ensure_edges(struct ss_segments *sg, const ss_system *sys) {
    const size_t m = sys->num_springs, n = sys->num_nodes;
    const int32_t *springs = SS_INT32S(sys, SS_SPRINGS);
    const double *r = SS_DOUBLES(sys, SS_RADII);
    int same = sg->edges_valid && sg->mask_springs == m && sg->mask_nodes == n &&
               sg->mask_edits == sys->topology_edits;
    if (!same && ss_self_collision_reserve((void **)&sg->mask, &sg->mask_capacity, m + 1, 1))
        return -1;
    size_t raw = 0;
    for (size_t k = 0; k < m; k++) {
        const int32_t a = springs[2 * k], b = springs[2 * k + 1];
        const uint8_t on = a != b && r[a] > 0.0 && r[b] > 0.0;
        same &= sg->mask[k] == on;
        sg->mask[k] = on;
        raw += on;
    }
    if (same)
        return 0;
    sg->edges_valid = 0;
    ss_edge_list *el = &sg->list;
    if (ss_self_collision_reserve((void **)&el->edges, &el->edges_capacity, 2 * raw + 2,
                                  sizeof(int32_t)))
        return -1;
    size_t e = 0;
    for (size_t k = 0; k < m; k++)
        if (sg->mask[k]) {
            const int32_t a = springs[2 * k], b = springs[2 * k + 1];
            el->edges[2 * e] = a < b ? a : b;
            el->edges[2 * e + 1] = a < b ? b : a;
            e++;
        }
    if (ss_edge_list_index(el, raw, n))
        return -1;
    sg->mask_springs = m;
    sg->mask_nodes = n;
    sg->mask_edits = sys->topology_edits;
    sg->edges_valid = 1;
    return 0;
}

/* Nonzero when every node of segment e may touch every node of f (their groups). */
static int groups_touch(const void *context, const int32_t *e, const int32_t *f) {
    const ss_system *sys = context;
    const int32_t *group = SS_INT32S(sys, SS_GROUPS);
    int ok = 1;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            ok &= ss_contact_enabled(sys->contact, group[e[i]], group[f[j]]);
    return ok;
}

int ss_segments_search(const ss_system *sys, const double *x, ss_contact_scratch *found,
                       double margin) {
    struct ss_segments *sg = found->segments;
    if (sg && sg->reuse && !sg->failed && margin <= sg->reuse_margin &&
        memcmp(x, sg->seen, 3 * sys->num_nodes * sizeof(double)) == 0)
        return 0; /* the crossing check's list, at these positions, holds every pair */
    if (sg) {
        sg->list.count = 0;
        sg->reuse = 0;
    }
    if (!sys->contact->segments || sys->dim != 3 || ss_array_absent(sys, SS_RADII))
        return 0;
    if (!sg) {
        sg = ss_malloc(sizeof *sg);
        if (!sg)
            return -1;
        memset(sg, 0, sizeof *sg);
        found->segments = sg;
    }
    sg->failed = 1;
    if (ensure_edges(sg, sys))
        return -1;
    ss_edge_list *el = &sg->list;
    if (ss_self_collision_reserve((void **)&sg->radius, &sg->radius_capacity, el->num_edges + 1,
                                  sizeof(double)))
        return -1;
    const double *r = SS_DOUBLES(sys, SS_RADII);
    double r_max = 0.0;
    for (size_t e = 0; e < el->num_edges; e++) {
        sg->radius[e] = 0.5 * (r[el->edges[2 * e]] + r[el->edges[2 * e + 1]]);
        r_max = sg->radius[e] > r_max ? sg->radius[e] : r_max;
    }
    const int filtered = !ss_array_absent(sys, SS_GROUPS) && sys->contact->num_off;
    /* The reach, with the box test's slack: a pair the forces find touching (their own
     * rounding of |p - q| < R_e + R_f <= 2 R_max) is always listed. */
    const double reach = (1.0 + SS_EDGE_BOX_SLACK) * 2.0 * r_max + margin;
    if (ss_edge_list_search(el, x, reach, filtered ? groups_touch : NULL, sys) ||
        ss_edge_list_fit(el))
        return -1;
    ss_edge_list_sort_pairs(el); /* an order that does not depend on the reach */
    sg->failed = 0;
    return 0;
}

int ss_segments_near(const ss_system *sys, ss_contact_scratch *found, const double *x,
                     double margin, ss_quad_visit visit, void *context) {
    if (ss_segments_search(sys, x, found, margin))
        return -1;
    const struct ss_segments *sg = found->segments;
    for (size_t c = 0; c < ss_segments_num_pairs(found); c++) {
        size_t at[4];
        ss_edge_pair_nodes(&sg->list, c, at);
        const int32_t *pair = sg->list.pairs + 2 * c;
        const double thickness = sg->radius[pair[0]] + sg->radius[pair[1]];
        const double reach = thickness + margin;
        const int32_t node[4] = {(int32_t)at[0], (int32_t)at[1], (int32_t)at[2], (int32_t)at[3]};
        double w[4], n[3], depth;
        if (ss_edge_contact_at(x, 3, at, reach, w, n, &depth) &&
            visit(context, SS_QUAD_EDGES, node, thickness))
            return -1;
    }
    return 0;
}

size_t ss_segments_num_pairs(const ss_contact_scratch *found) {
    const struct ss_segments *sg = found->segments;
    return sg && !sg->failed ? sg->list.count : 0;
}

/* Pair c of sg at x: 0 when apart (or every node pinned); else 1 with its nodes, weights
 * w, unit normal n (from q to p), overlap delta, stiffness k at substep dt and the contact
 * point's effective mass (see the top of this file). */
static int pair_at(const ss_system *sys, const struct ss_segments *sg, const double *x, double dt,
                   size_t c, size_t node[4], double w[4], double n[3], double *delta, double *k,
                   double *m_eff) {
    const double *m = SS_DOUBLES(sys, SS_MASSES);
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    const int32_t *pair = sg->list.pairs + 2 * c;
    ss_edge_pair_nodes(&sg->list, c, node);
    if (!ss_edge_contact_at(x, 3, node, sg->radius[pair[0]] + sg->radius[pair[1]], w, n, delta))
        return 0;
    double inv[4];
    for (int q = 0; q < 4; q++)
        inv[q] = pinned[node[q]] ? 0.0 : 1.0 / m[node[q]];
    const double w_max = fmax(inv[0], inv[1]) + fmax(inv[2], inv[3]);
    if (!(w_max > 0.0))
        return 0;
    const double W = (w[0] * w[0] * inv[0] + w[1] * w[1] * inv[1]) +
                     (w[2] * w[2] * inv[2] + w[3] * w[3] * inv[3]);
    *k = ss_contact_pair_stiffness(sys->contact, 1.0 / w_max, dt);
    *m_eff = W > 0.0 ? 1.0 / W : 0.0;
    return 1;
}

void ss_segments_pair_forces(const ss_system *sys, ss_contact_scratch *found, const double *x,
                             const double *v, double dt, size_t first, size_t last) {
    struct ss_segments *sg = found->segments;
    for (size_t c = first; c < last; c++) {
        size_t node[4];
        double w[4], n[3], delta, k, m_eff, u[3], *F = sg->list.results + SS_EDGE_RESULT * c;
        const int hit = pair_at(sys, sg, x, dt, c, node, w, n, &delta, &k, &m_eff);
        sg->list.touching[c] = (uint8_t)hit;
        if (!hit)
            continue;
        ss_edge_relative_velocity(v, node, w, u);
        ss_contact_law(sys->contact, 3, delta, n, u, k, m_eff, F);
        F[3] = w[1];
        F[4] = -w[3];
    }
}

void ss_segments_gather_forces(const ss_contact_scratch *found, double *f, size_t stride) {
    if (ss_segments_num_pairs(found))
        ss_edge_gather_forces(&found->segments->list, f, stride);
}

double ss_segments_energy(const ss_system *sys, const ss_contact_scratch *found, const double *x,
                          double dt) {
    double sum = 0.0;
    for (size_t c = 0; c < ss_segments_num_pairs(found); c++) {
        size_t node[4];
        double w[4], n[3], delta, k, m_eff;
        if (pair_at(sys, found->segments, x, dt, c, node, w, n, &delta, &k, &m_eff))
            sum += k * delta * delta;
    }
    return 0.5 * sum;
}

double ss_segments_power(const ss_system *sys, const ss_contact_scratch *found, const double *x,
                         const double *v, double dt) {
    double power = 0.0;
    for (size_t c = 0; c < ss_segments_num_pairs(found); c++) {
        size_t node[4];
        double w[4], n[3], delta, k, m_eff, u[3], F[3];
        if (!pair_at(sys, found->segments, x, dt, c, node, w, n, &delta, &k, &m_eff))
            continue;
        ss_edge_relative_velocity(v, node, w, u);
        power += ss_contact_law(sys->contact, 3, delta, n, u, k, m_eff, F);
    }
    return power;
}

void ss_segments_constraints_begin(ss_contact_scratch *found) {
    if (ss_segments_num_pairs(found))
        ss_edge_constraints_begin(&found->segments->list);
}

void ss_segments_constraints_solve(const ss_system *sys, ss_contact_scratch *found, double *records,
                                   size_t stride, double compliance) {
    if (ss_segments_num_pairs(found))
        ss_edge_constraints_solve(&found->segments->list, records, stride, 0.0,
                                  found->segments->radius, compliance, sys->contact->friction);
}

size_t ss_segments_constraints_pushed(const ss_contact_scratch *found) {
    return ss_segments_num_pairs(found) ? ss_edge_constraints_pushed(&found->segments->list) : 0;
}

int ss_segments_see(ss_system *sys) {
    ss_contact_scratch *found = &sys->contact->found;
    if (!sys->contact->segments || sys->dim != 3)
        return 0;
    if (!found->segments && ss_segments_search(sys, SS_DOUBLES(sys, SS_POSITIONS), found, 0.0))
        return -1;
    struct ss_segments *sg = found->segments;
    if (!sg)
        return 0; /* no radii */
    const size_t n3 = 3 * sys->num_nodes;
    sg->seen_valid = 0;
    if (ss_self_collision_reserve((void **)&sg->seen, &sg->seen_capacity, n3 + 1, sizeof(double)))
        return -1;
    memcpy(sg->seen, SS_DOUBLES(sys, SS_POSITIONS), n3 * sizeof(double));
    sg->seen_valid = 1;
    return 0;
}

int ss_segments_count_crossings(ss_system *sys) {
    ss_contact_scratch *found = &sys->contact->found;
    struct ss_segments *sg = found->segments;
    if (!sys->contact->segments || !sg || !sg->seen_valid)
        return 0;
    const size_t n3 = 3 * sys->num_nodes;
    const double *x = SS_DOUBLES(sys, SS_POSITIONS);
    double most = 0.0; /* the largest squared node move since the last check */
    for (size_t k = 0; k < n3; k += 3) {
        const double d0 = x[k] - sg->seen[k], d1 = x[k + 1] - sg->seen[k + 1],
                     d2 = x[k + 2] - sg->seen[k + 2];
        const double d = (d0 * d0 + d1 * d1) + d2 * d2;
        most = d > most ? d : most;
    }
    /* A NaN move leaves `most` as it was: the step fails on its forces anyway. */
    const double margin = 2.0 * sqrt(most);
    if (ss_segments_search(sys, x, found, margin)) {
        sg->seen_valid = 0; /* counted from the next call's start */
        return -1;
    }
    sys->state.crossings += ss_edge_count_crossings(&sg->list, sg->seen, x);
    memcpy(sg->seen, x, n3 * sizeof(double));
    sg->reuse = 1; /* the next force evaluation, at x, may keep this list */
    sg->reuse_margin = margin;
    return 0;
}

void ss_segments_forget(ss_contact_scratch *found) {
    if (found->segments)
        found->segments->reuse = 0;
}

void ss_segments_free(struct ss_segments *sg) {
    if (!sg)
        return;
    ss_edge_list_release(&sg->list);
    ss_free(sg->radius);
    ss_free(sg->mask);
    ss_free(sg->seen);
    ss_free(sg);
}

size_t ss_segments_nbytes(const struct ss_segments *sg) {
    if (!sg)
        return 0;
    return sizeof *sg + ss_edge_list_nbytes(&sg->list) + sg->radius_capacity * sizeof(double) +
           sg->mask_capacity + sg->seen_capacity * sizeof(double);
}
