/* contact.h - part of the kernel API: node-node contact (contact.c, contact_law.c) and
 * segment contact (segment_contact.c).
 * Included by springsim.h only, at its place there (it uses what comes before it).
 *
 * Nodes with a contact radius r > 0 (SS_RADII) repel when closer than r_i + r_j: a
 * linear spring-dashpot (Cundall & Strack 1979) with regularised Coulomb friction, whose
 * stiffness is either the user's k_c in N/m or, by default, each pair's own from the
 * substep: k = m_eff (w_c dt / dt)^2 (contact.c: "The stiffness from the step").
 * Which pairs touch: nodes of different groups (SS_GROUPS) always, nodes of one group
 * unless a spring joins them; and never a pair of groups switched off. The pairs are
 * found by a uniform grid (cell 2 max r) hashed into a table and counting-sorted, so
 * their order depends on the positions only: forces are summed serially in pair order,
 * bit-identical for any thread count. */
#ifndef SPRINGSIM_CONTACT_H
#define SPRINGSIM_CONTACT_H

#include <math.h>

/* Doubles per pair of implicit Euler's contact blocks: the unit vector (3), the axial
 * coefficient (scale_c c + scale_k k_c). */
#define SS_CONTACT_FRAME 4

/* The stiffness setting that means "from the step" (the default): each pair's
 * k = m_eff w_c^2 with w_c dt = min(SS_CONTACT_OMEGA_DT, SS_CONTACT_DAMPING_DT /
 * (2 zeta + 2 [mu > 0])), dt the substep (contact.c). */
#define SS_CONTACT_FROM_STEP 0.0
/* w_c dt of the law from the step (a twentieth of symplectic Euler's limit of 2), and the
 * most its dashpot and friction may take per substep, (c + gamma) dt / m_eff: chosen by
 * measurement (contact.c). */
#define SS_CONTACT_OMEGA_DT 0.1
#define SS_CONTACT_DAMPING_DT 0.3
/* The law from the step's dashpot force is at most this many times its spring's,
 * |c v_n| <= 2 k delta (contact.c, "The restitution of the law from the step"). */
#define SS_CONTACT_DAMPER_CAP 2.0

/* What one search finds, and the memory it searches in (grow-only, derived from the
 * state: never copied, never saved). The step searches in its own, sys->contact->found; a
 * query (energy(), critical_dt(), contact_pairs()) in one of its own, zeroed on its stack
 * and released with ss_contact_scratch_release, so that it never frees, grows or writes
 * what the step uses. */
typedef struct ss_contact_scratch {
    int32_t *pairs; /* (num_pairs, 2) i < j, in contact at the last search */
    size_t num_pairs, pair_capacity;
    void *entries;          /* (2 K) grid entries: by node, then sorted by bucket */
    int32_t *bucket_start;  /* (buckets + 1,) */
    size_t node_capacity;   /* K the entries have room for */
    size_t bucket_capacity; /* buckets the table has room for */
    size_t *adj_first;      /* (N + 1,) each node's spring neighbours, sorted */
    int32_t *adj;           /* (2 M,) */
    size_t adj_edits, adj_nodes, adj_capacity; /* topology_edits it was built at; N; room */
    size_t adj_node_capacity;                  /* N + 1 that adj_first has room for */
    int adj_valid;
    struct ss_segments *segments; /* segment contact's pairs (segment_contact.c), or NULL */
} ss_contact_scratch;

/* Settings and scratch of node-node contact; every system owns one (sys->contact). */
typedef struct ss_contact {
    double radius;      /* m >= 0: the radius nodes added later get */
    double stiffness;   /* k_c, N/m > 0, or SS_CONTACT_FROM_STEP (the default) */
    double restitution; /* e in [0, 1]: the speed ratio of a head-on two-ball collision */
    double friction;    /* Coulomb mu >= 0 */
    int segments;       /* segment contact on (segment_contact.c): springs with radii touch */
    double zeta;        /* the dashpot's damping ratio for e */
    double omega_dt;    /* w_c dt of the law from the step, for zeta and mu */
    /* The law from the step's dashpot for the running call's method: its damping ratio,
     * calibrated (contact.c, "The restitution of the law from the step"); each method's
     * (calibrated[m] nonzero once found) for the restitution and friction > 0 they were
     * found at (calibrated_rough -1: none yet). */
    double step_zeta;
    double calibrated_zeta[SS_METHOD_COUNT];
    uint8_t calibrated[SS_METHOD_COUNT];
    double calibrated_restitution;
    int calibrated_rough;
    /* s: the running call's substep, which its forces and books use. (The last
     * successful call's, which queries use, is state: sys->state.contact_dt.) */
    double step_dt;
    double segment_compliance; /* XPBD: the running substep's 1 / (k_c dt^2) (0: from the step) */
    uint64_t *off;             /* group pairs switched off: (min << 32 | max) keys, sorted */
    size_t num_off, off_capacity;
    /* The step's scratch, grow-only, derived from the state (never copied, never saved). */
    ss_contact_scratch found; /* the step's searches */
    double *frames;           /* (num_pairs, SS_CONTACT_FRAME): u, then its block's coefficient */
    double *pair_forces;      /* (num_pairs, 3): each pair's force on j, computed by threads */
    size_t frame_capacity;    /* pairs the frames and pair forces have room for */
    int failed;               /* an allocation failed during a search (forces were poisoned: NaN) */
    int search_failed;        /* the last search in `found` ran out of memory (no pairs are used) */
} ss_contact;

/* ---- Node-node contact (contact.c; the law: contact.c) ------------------- */

ss_contact *ss_contact_new(void);
void ss_contact_free(ss_contact *contact);
/* A copy of the settings and filter (no scratch), or NULL when out of memory. */
ss_contact *ss_contact_copy(const ss_contact *contact);
size_t ss_contact_nbytes(const ss_contact *contact);
/* Check and set the law (nothing changes on error). */
ss_status ss_contact_set_law(ss_system *sys, double radius, double stiffness, double restitution,
                             double friction);
/* Switch contact between groups a and b (a == b: within a group) off or on
 * (contact_law.c, with ss_contact_enabled, ss_contact_pair_stiffness, ss_contact_law). */
ss_status ss_contact_set_filter(ss_system *sys, int32_t a, int32_t b, int enabled);
/* Nonzero when groups a and b may touch. */
int ss_contact_enabled(const ss_contact *contact, int32_t a, int32_t b);
/* Nonzero when some node has a radius > 0. */
int ss_contact_active(const ss_system *sys);
/* Find the pairs touching at positions x into found->pairs (contact.c): the step's
 * scratch (&sys->contact->found) or a query's; -1 when out of memory. Safe whatever x holds
 * and however another thread changes it meanwhile (a write through a view that races a
 * step): the result is then meaningless, but every index stays in range. */
int ss_contact_find(const ss_system *sys, const double *x, ss_contact_scratch *found);
/* The pairs within r_i + r_j + margin (m) at x into found->pairs, sorted by (i, j) (VBD's
 * contact energy, vbd.c); -1 when out of memory. */
int ss_contact_find_near(const ss_system *sys, const double *x, double margin,
                         ss_contact_scratch *found);
/* Free what a query's scratch holds (and zero it). */
void ss_contact_scratch_release(ss_contact_scratch *found);
/* The step's search: ss_contact_find into sys->contact->found, with the frames and pair
 * forces grown to the pairs' room; -1 when out of memory. */
int ss_contact_step_find(const ss_system *sys, const double *x);
/* Before a step call of substep dt by `method`: build the scratch at the current positions
 * (SS_ERR_NOMEM); the law from the step takes this dt for the call, and its dashpot the
 * method's calibrated damping ratio. */
ss_status ss_contact_prepare(ss_system *sys, double dt, ss_method method);
/* The damping ratio of the law from the step's dashpot that makes `method`'s head-on
 * bounce leave at `restitution` times its approach speed, on average over the impact's
 * phase within a substep (`rough`: friction > 0, which lowers w_c dt). */
double ss_contact_calibrated_zeta(double restitution, int rough, ss_method method);
/* After a step call succeeded: its dt becomes the one queries count the law at. */
void ss_contact_end_step(ss_system *sys);
/* The law's stiffness for a pair of effective mass m_eff (kg; the free node's mass when
 * the other is pinned), N/m, at substep dt (s) when it is from the step (0 for dt 0). */
double ss_contact_pair_stiffness(const ss_contact *contact, double m_eff, double dt);
/* The pairs touching at the current positions, in the step's order, found in a query's
 * own scratch: *pairs (2 *count int32, ss_malloc'ed: the caller frees it with ss_free;
 * NULL when there are none). SS_ERR_NOMEM possible. */
ss_status ss_contact_pairs_now(ss_system *sys, int32_t **pairs, size_t *count);
/* f (rows `stride` apart) += the contact forces at state (x, v), pair by pair: the
 * three steps below, on one thread. */
void ss_contact_add_forces(const ss_system *sys, const double *x, const double *v, double *f,
                           size_t stride);
/* The force evaluation's steps, which let threads share the pairs: find the pairs at x
 * (one thread; they read x only, so it may run before the spring passes); then the
 * forces of pairs [first, last) into the pair scratch (any thread, disjoint ranges);
 * then, on one thread, f += them in pair order (NaN rows if the search ran out of
 * memory). The sums, and so the bits, do not depend on how the pairs were shared. */
void ss_contact_search(const ss_system *sys, const double *x);
void ss_contact_pair_forces(const ss_system *sys, const double *x, const double *v, size_t first,
                            size_t last);
void ss_contact_gather_forces(const ss_system *sys, double *f, size_t stride);
/* Pairs found by the last search (0 after a failed one). */
size_t ss_contact_num_pairs(const ss_system *sys);
/* Implicit Euler's blocks (contact.c): for each pair found at the last search (at
 * x), a compressed spring k_c u u^T with the dashpot c u u^T along the normal (no
 * transverse or friction terms): frames get u and scale_c c + scale_k k_c (0 for a pair
 * that exerts no force). */
void ss_contact_frames(const ss_system *sys, const double *x, double scale_c, double scale_k);
/* out_i += a (u . (p_i - p_j)) u, out_j -= it, pair by pair (a pinned node's p is read
 * as given: implicit.c zeroes pinned rows after). */
void ss_contact_add_blocks(const ss_system *sys, const double *p, double *out);
/* diag (N dim) += a u_q^2 at both ends of each pair. */
void ss_contact_add_diagonal(const ss_system *sys, double *diag);
/* The contact potential 1/2 k_c delta^2 summed over pairs at the current positions, J
 * (NaN when out of memory), searched in `found`: the step's scratch (the running call's
 * dt) or a query's (the last call's dt). */
double ss_contact_energy(const ss_system *sys, ss_contact_scratch *found);
/* The same sum over the pairs the step's last search found, J (NaN if it failed): the
 * potential at the current positions when they are the ones it searched at. */
double ss_contact_found_energy(const ss_system *sys);
/* Power, W, the dashpots and friction take out of the motion at the current state (the
 * step's: it searches in the step's scratch). */
double ss_contact_power(const ss_system *sys);
/* For ss_critical_dt: rows[2 i] += each free node's contact stiffness bound (1/s^2),
 * rows[2 i + 1] += its damping bound (1/s): its current contacts or, if larger, one
 * contact with a node of its own mass. own: 2 N doubles of scratch. The contacts are
 * searched in a scratch of its own (a query). Nothing for the law from the step: it
 * scales with dt, at a w_c dt chosen stable (contact.c). */
void ss_contact_stability_rows(const ss_system *sys, double *rows, double *own);

/* The law for one contact of overlap delta (m) along the unit normal n, relative
 * velocity vrel (m/s; n and vrel point the same way for a separating pair), stiffness k
 * (N/m) and effective mass m_eff (kg): writes the force on the side n points to (N;
 * minus it on the other), returns the power its dashpot and friction take, W. */
double ss_contact_law(const ss_contact *contact, size_t dim, double delta, const double n[3],
                      const double vrel[3], double k, double m_eff, double force[3]);

/* ---- Segment contact (segment_contact.c) --------------------------------------
 *
 * With sys->contact->segments on (3D only), each spring whose two nodes have radii is a
 * segment of radius (r_a + r_b) / 2, and two segments that share no node, are not joined
 * by a spring and whose groups may touch get node-node contact's law at their closest
 * points. Their pairs live in a contact search's scratch (found->segments), after its
 * node pairs: the force evaluation's pair ranges count both. */

/* 4-node contacts, VBD's contact energy for self-collision and segment contact (vbd.c):
 * nodes a, b, c, d, node a against triangle (b, c, d), or segment (a, b) against segment
 * (c, d). Found one by one by ss_self_collision_near and ss_segments_near, which call
 * visit with its kind, nodes and thickness (m); nonzero from visit: stop (out of memory). */
#define SS_QUAD_NODE_TRIANGLE 0
#define SS_QUAD_EDGES 1
typedef int (*ss_quad_visit)(void *context, int kind, const int32_t node[4], double thickness);

/* Switch segment contact on or off: SS_ERR_VALUE (nothing changed) in 2D. */
ss_status ss_contact_set_segments(ss_system *sys, int on);
/* The segment pairs within 2 r_max + margin (m) at x into found->segments (none when off);
 * -1 when out of memory. */
int ss_segments_search(const ss_system *sys, const double *x, ss_contact_scratch *found,
                       double margin);
/* VBD: the segment pairs within 2 r_max + margin at x into found->segments (as the
 * search), then visit, in pair order, each within R_e + R_f + margin at x (kind
 * SS_QUAD_EDGES, thickness R_e + R_f). -1 when out of memory or visit says stop. */
int ss_segments_near(const ss_system *sys, ss_contact_scratch *found, const double *x,
                     double margin, ss_quad_visit visit, void *context);
/* Pairs in found's list (0 when off or after a failed search). */
size_t ss_segments_num_pairs(const ss_contact_scratch *found);
/* The forces of pairs [first, last) at (x, v), the law at substep dt, into found's scratch
 * (any thread, disjoint ranges); then f += them, in pair order (one thread). */
void ss_segments_pair_forces(const ss_system *sys, ss_contact_scratch *found, const double *x,
                             const double *v, double dt, size_t first, size_t last);
void ss_segments_gather_forces(const ss_contact_scratch *found, double *f, size_t stride);
/* 1/2 k delta^2 over found's pairs at x, J; the power their dashpots and friction take at
 * (x, v), W (the law at substep dt). */
double ss_segments_energy(const ss_system *sys, const ss_contact_scratch *found, const double *x,
                          double dt);
double ss_segments_power(const ss_system *sys, const ss_contact_scratch *found, const double *x,
                         const double *v, double dt);
/* XPBD: start found's pairs (lambda = lambda_t = 0); one pass of them on records of
 * `stride` doubles, as a layer of compliance a~ (0: hard). */
void ss_segments_constraints_begin(ss_contact_scratch *found);
void ss_segments_constraints_solve(const ss_system *sys, ss_contact_scratch *found, double *records,
                                   size_t stride, double compliance);
/* How many of found's pairs pushed in the last solve. */
size_t ss_segments_constraints_pushed(const ss_contact_scratch *found);
/* Crossings: at a step call's start the positions are seen; after each substep the pairs
 * that went through each other since the last check are counted into
 * sys->state.crossings (segment_contact.c). -1 when out of memory (nothing counted). */
int ss_segments_see(ss_system *sys);
int ss_segments_count_crossings(ss_system *sys);
/* Before a step call: the next search builds its list afresh (the last check's list may
 * have been made for radii, groups or positions since changed). */
void ss_segments_forget(ss_contact_scratch *found);
/* Free a list (NULL: nothing); bytes it holds. */
void ss_segments_free(struct ss_segments *segments);
size_t ss_segments_nbytes(const struct ss_segments *segments);

/* ---- Contact as constraints (XPBD; contact.c, "Contact as constraints") ------- */

/* Find the pairs within r_i + r_j + margin (m) at the predicted positions x, sorted by
 * (i, j), and start their constraints for a substep of dt: lambda = lambda_t = 0, the
 * normal velocity before the solve from v, the compliance 1 / (k_c dt^2) (0 for the
 * stiffness from the step). -1 when out of memory (no pair is then solved). */
int ss_contact_constraints_begin(const ss_system *sys, const double *x, const double *v,
                                 double margin, double dt);
/* One pass over the pairs in that order: the non-penetration projection and its
 * friction on records of `stride` doubles, (x, y, z, w, s_x, s_y, s_z, ...) per node. */
void ss_contact_constraints_solve(const ss_system *sys, double *records, size_t stride);
/* After the solve, v = (x - s) / dt: restitution on the pairs that pushed (e for an
 * approach faster than threshold m/s, else 0), pair by pair; returns how many pushed,
 * the segment pairs (which get no restitution) with them. */
size_t ss_contact_constraints_restitute(const ss_system *sys, const double *x, double *v,
                                        const double *inv_mass, double threshold);

/* The positional Coulomb friction of a contact constraint, shared by the node pairs,
 * the self-collision layers and the colliders: `slip` holds the substep's relative
 * displacement of the contact; its part along the unit normal n is taken off, and the
 * rest, of length s, is to be taken back at most `room` (mu lambda_n - lambda_t, in
 * multiplier units) with w the inverse-mass sum: returns that multiplier, min(s / w,
 * room), and leaves slip / s (the direction) in `slip`; 0 when there is no slip. */
static inline double ss_contact_friction_take(double slip[3], const double n[3], double room,
                                              double w) {
    double along = 0.0, s2 = 0.0;
    for (int k = 0; k < 3; k++)
        along += slip[k] * n[k];
    for (int k = 0; k < 3; k++) {
        slip[k] = slip[k] - along * n[k];
        s2 += slip[k] * slip[k];
    }
    if (!(s2 > 0.0))
        return 0.0;
    const double s = sqrt(s2), full = s / w, taken = full < room ? full : room;
    for (int k = 0; k < 3; k++)
        slip[k] = slip[k] / s;
    return taken;
}

#endif
