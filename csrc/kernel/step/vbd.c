/* vbd.c - Vertex Block Descent (Chen, Macklin et al., SIGGRAPH 2024): a backward-Euler
 * substep written as the minimisation of the incremental potential and solved one
 * vertex at a time, each taking a Newton step on its own 3x3 (2x2 in 2D) block, in
 * colour order. springsim/reference.py (_vbd) is the same mathematics in NumPy.
 *
 * One substep of h, from x0 and v0:
 *  1. The forces that are not springs, gas, colliders, node-node contact pairs,
 *     self-collision or segment contact (gravity, drag, external, air on faces) at (x0,
 *     v0), explicitly: a (0 if pinned); ss_forces_external gives them with the gas,
 *     whose force is then taken off again (the gas is in the blocks, below).
 *  2. The inertial target, per free node, y = x0 + h (v0 + h a), and the first guess
 *     x = x0 + h v0 (a pinned node moves there and stays). Starting from y instead puts
 *     the whole substep's h^2 a into every node at once, which a stiff cloth's springs
 *     resist with all of k: a few passes then leave it stretched, and a hanging stiff
 *     cloth (100x100, 5,000 N/m, 4 substeps x 1 pass a frame) diverged by t = 0.25 s;
 *     from x0 + h v0 it did not at 1 to 20 passes a frame.
 *  3. `iterations` passes; a pass visits the vertex colours in order (below) and, in
 *     each, every free node i in increasing index. Node i minimises, with its
 *     neighbours held, the local incremental potential
 *         G_i(x_i) = m_i/(2 h^2) |x_i - y_i|^2
 *                    + sum over its springs s = (i, j):  k/2 (l - L)^2 + c/(2h) r^2,
 *     d = x_i - x_j, l = |d|, u = d/l, r = (d - (x0_i - x0_j)).u (how far the ends moved
 *     apart along u in this substep: the dashpot's work as a potential, with u frozen
 *     at the node's position before its step, so that f below is exactly -grad G_i
 *     there). In the springs' index order, skipping springs shorter than
 *     SS_MIN_SPRING_LENGTH before the step:
 *         w = m_i / (h h),  f = -w (x_i - y_i),  H = w I,  G = 1/2 w |x_i - y_i|^2,
 *         per spring: t = k max(0, 1 - L (1/l)) (the projected Hessian's transverse
 *         term: H stays positive definite), a = k - t [+ c/h],
 *         f -= k (l - L) u [+ (c/h) r u],  H += a u u^T + t I,
 *         G += 1/2 k (l - L)^2 [+ 1/2 (c/h) r^2];
 *     then the gas bodies and the colliders, in order (below); the Newton step dx = H^-1 f (the
 * adjugate over the determinant). The step is taken if G_i(x_i + dx) <= G + its rounding
 *     (SS_VBD_ROUNDING), else halved, up to SS_VBD_BACKTRACKS times, else skipped (the
 *     line search: no vertex ever raises its local energy, so the solve cannot diverge).
 *  3b. The translation (translate()): with no node pinned, x += t, t = -sum m_i (x_i -
 *     y_i) / sum m_i, unless a collider touches some node at x or at x + t. Every energy
 *     of G but the inertia's (springs, gas, contact pairs) is the same for any uniform
 *     t, so this is G's exact minimiser along it, and it makes the momentum sum m v0 +
 *     h sum m a exactly, at any number of passes: Gauss-Seidel short of convergence is
 *     not equal and opposite (two 4x4x4 jelly cubes meeting head-on at 2 m/s, 1/600 s,
 *     drifted to |P| = 0.23 kg m/s at 10 passes, 0.021 at 40, 6e-6 at 160; now 1e-13).
 *  4. v = (x - x0) / h for the free nodes; pinned nodes keep v0; then the colliders'
 *     and the contact pairs' restitution (restitute(), restitute_pairs(), below).
 * With enough passes x is the backward-Euler step x0 + h v', v' = v0 + h M^-1 f(x'),
 * of the springs' exact (nonlinear) forces and the colliders' contact and friction, the
 * other forces taken at the start.
 *
 * Gas bodies (pressure.c: isothermal, E = -nrt ln V + ambient V) are in G_i too. V is
 * linear in one node's position, the others held: V(p) = V + grad.(p - x_i), grad =
 * dV/dx_i summed over the node's elements of the body (pressure.c's shares), so per body
 *         G += -nrt ln V(p) + ambient V(p)   (+inf where V(p) <= 0: the line search
 *                                             never turns a body inside out),
 *         f += (nrt/V - ambient) grad,  H += nrt/V^2 grad grad^T   (exact, and PSD),
 * with V the body's volume as the node's colour began: a colour's nodes are solved at
 * once, so the volumes are measured again (ss_pressure_volume, one thread) after each
 * colour, and the vertex colouring also keeps apart nodes that share a gas element, so
 * that a node's grad does not change while its colour is solved. A balloon whose gas
 * sets its size (tests/physics/test_vbd_gas.py) settles at 28 critical_dt per step;
 * with the gas explicit it still moved at 0.17 m/s after 10 s.
 *
 * Colliders (planes, spheres, boxes, capsules, meshes) are contact energy in G_i (Chen
 * et al. 2024, section 5; the friction of IPC, Li et al. 2020). Each collider in order
 * finds node i against it at its iterate x_i as the other methods do
 * (ss_collider_locate; a mesh: ss_mesh_find from x0_i to x_i, then ss_mesh_locate):
 * depth d > 0 inside (for a mesh: inside its layer), unit normal n into free space. Then
 *         k_c = kappa (m_i/h^2 + sum of its springs' k)      (SS_VBD_CONTACT_KAPPA = 100)
 *         G += 1/2 k_c d^2,  f += k_c d n,  H += k_c n n^T     (Gauss-Newton: n frozen),
 * so a node resting under a load F is inside by F / k_c (g h^2 / kappa for a lone node
 * under its weight), and with friction mu > 0, lagged: lambda = k_c d and n frozen at
 * x_i for this vertex step, the slip u_T = (I - n n^T)(x - x0_i) of the substep,
 *         G += mu lambda f0(|u_T|),  f -= mu lambda f1/|u_T| u_T,
 *         H += mu lambda f1/|u_T| (I - n n^T),
 * f0, f1 = f0' IPC's smoothing over the slip eps = eps_v h (SS_VBD_FRICTION_SPEED =
 * 1 mm/s): exactly Coulomb's mu lambda past eps, growing smoothly from 0 below, so a
 * sticking node creeps at eps_v (1 - sqrt(1 - F_t / (mu lambda))) < eps_v. A collider
 * apart at x_i that the Newton step enters (d_p > 0 at p = x_i + dx, normal n_p) joins
 * the block linearised there, 1/2 k_c (d_p + n_p.dx)^2 about x_i, and the step is taken
 * again, once: for a plane, the exact minimiser of the block's model with the contact
 * (without it a falling node would creep onto a surface by halvings). The line search
 * counts the colliders at the trial point and the frozen frictions. kappa by
 * measurement: a stiff cloth (30x30, 5,000 N/m) draped on a sphere at 1/60 s x 10 passes
 * went in by at most 29, 2.9 and 0.2 um at kappa 10, 100 and 1,000 (with kappa (m/h^2)
 * alone, no springs' k, 1,000 let it in by 11 mm: the springs press harder than the
 * inertia holds); 100 keeps it at micrometres with the block's normal direction no more
 * than about 100 times stiffer than the rest. Backward Euler's stiff contact absorbs an
 * impact's normal speed, so restitution e > 0 is a velocity pass after the solve, as
 * XPBD's (collider_constraints.c). A contact involves one node: the colour parallelism
 * stays exact. The books (integrate.c: E0 + W - E1) do not count the contact potential
 * 1/2 k_c d^2, which energy() does not report: a resting node's, (m g)^2 / (2 k_c),
 * shows in `dissipated` while it rests and returns when it leaves.
 *
 * Node-node contact (nodes with radii, contact.c) is contact energy in both nodes'
 * blocks too (Chen et al. 2024's vertex-vertex contact). At the start of the substep the
 * pairs within r_i + r_j + margin at the inertial target y (margin: twice the farthest
 * |y - x0|, at most r_max, as XPBD's) are found by contact.c's search
 * (ss_contact_find_near: groups' filter, no spring neighbours), sorted by (i, j), and
 * each node lists its pairs in pair order. The vertex colouring is then made again for
 * the substep, greedily in node order over springs, gas elements and these pairs
 * (colour_greedy, the same function as the cached colouring's): two nodes in contact
 * never share a colour, so the threads never race; a substep with no pairs (or a system
 * without radii) uses the cached colouring. For each pair (i, j) of node i, j held:
 *         delta = r_i + r_j - |x_i - x_j| - delta_rest,  n = (x_i - x_j) / |x_i - x_j|,
 *         if delta > 0:  G += 1/2 k delta^2,  f += k delta n,  H += k n n^T,
 * k the user's contact_stiffness (N/m), else kappa m_eff / h^2 (kappa =
 * SS_VBD_CONTACT_KAPPA, m_eff = m_i m_j / (m_i + m_j), m_i against a pinned j): the
 * colliders' form with the pair's inertia, without the springs' k. Measured: with the
 * springs' k in it (kappa times the two blocks' scales in series), the 10-cube jelly
 * stack of tests/features/test_contact_defaults.py tipped over (31 mm off its axis in
 * 3 s at 1/240 s, 10 passes: Gauss-Seidel converges slowly against a contact that much
 * stiffer than the rest); with kappa m_eff / h^2 it stays within 1 mm. A resting pair
 * under a load W is inside by W / k (the 100-ball pile: 0.18 % of r at 1/120 s, 0.007 %
 * at 1/600 s). delta_rest = max(0, delta(x0) - SS_VBD_PUSH_OUT h): a pair that starts
 * the substep deeper than 3 m/s h (bodies placed overlapping) is pushed apart at that
 * speed, not at delta / h. Friction mu = contact_friction is the colliders' lagged IPC
 * friction on the pair's relative slip since the substep began, u = (x_i - x0_i) - (x_j
 * - x0_j) across n, with lambda = k delta (at most SS_VBD_MAX_PAIR_FRICTIONS per vertex
 * step). A pair apart at x_i that the Newton step enters joins the block linearised
 * there, as a collider does.
 *
 * Gauss-Seidel with a contact kappa times stiffer than the inertia converges slowly, and
 * unconverged it gives the whole push to the node solved first: two balls meeting
 * head-on kept m1 v1 + m2 v2 = -1.39 instead of -0.5 kg m/s at 10 passes. So the first
 * guess is made apart, equal and opposite (guess_apart): each pair overlapping at x0 + h
 * v0 by more than at x0 (an impact), or at all if it separates faster than 2 |g| h, is
 * moved apart along n by the pair-alone backward-Euler share k / (k + m_eff / h^2) of
 * that overlap, the nodes by w_i / (w_i + w_j) and w_j / (w_i + w_j) of it. Only the
 * start of the passes changes, not the target or the energy they minimise: two balls now
 * keep their momentum to round-off (bodies with springs: step 3b). A resting pair
 * (the same overlap at x0) keeps its overlap (moving it apart each substep took the
 * stack's support away: it fell). After the velocities, a pair touching at x that came
 * in faster than 2 |g| h, (coming_j - coming_i).n = u0 < 0, leaves at e (-u0) (e =
 * contact_restitution) by equal and opposite impulses (restitute_pairs, XPBD's rule).
 * springsim.reference (_vbd) does the same, bit for bit.
 *
 * Self-collision (node-triangle, and edge-edge with `edges`) and segment contact are
 * contact energy in the blocks too: 4-node contacts (find_quads, once per substep). A
 * contact has nodes a, b, c, d (node a against triangle (b, c, d), or segment (a, b)
 * against segment (c, d)) whose closest points p, q give p - q = sum w_k x_k (w = (1,
 * -w_b, -w_c, -w_d), the triangle's barycentric weights; or (1 - s, s, -(1 - t), -t)),
 * distance d, and a thickness T (self-collision's; R_ab + R_cd for segments). Found:
 * self-collision's Verlet list (ss_self_collision_near: its crossings counted at x0
 * before a rebuild, never at positions no node reached) and segment contact's search
 * (ss_segments_near) at the midpoints (x0 + y) / 2 of the moves to the target, each
 * contact kept when d there < T + 2 R, R = max_k |(y_k - x0_k) - (y_a - x0_a)| (its
 * closest points' distance changes by at most R from there along straight moves: the
 * weights sum to 0 and their sizes to 2), so a contact met anywhere on the way is found
 * however fast the nodes go, and a common motion (a falling pile) adds none. In the
 * block of node a (slot of weight w_a), the others held, the closest points found again
 * at the node's iterate (ss_self_contact_at):
 *         if d < T:  G += 1/2 k (T - d)^2,  f += k (T - d) w_a n,  H += k w_a^2 n n^T,
 * n = (p - q) / d (the closest points' own motion drops out of the gradient: they
 * minimise d). k = kappa m_eff / h^2 + k_s for self-collision (k_s its stiffness, by
 * default the stiffest spring), the user's contact_stiffness or kappa m_eff / h^2 for
 * segments (node-node pairs' form), with 1 / m_eff = W_max, the largest sum_k w_k^2 / m_k
 * over the closest points' parameters (w_a + max(w_b, w_c, w_d) or max(w_a, w_b) +
 * max(w_c, w_d); 1/m, 0 pinned): a constant of the contact, so the energy is 1/2 k
 * (T - d)^2 with k fixed (segment_contact.c's choice). Measured, two 8 x 8 cloths thrown
 * together at 1/240 s: with kappa (m_eff / h^2 + k_s), the colliders' form, the contacts
 * were ~1000 times stiffer than the light nodes' inertia and Gauss-Seidel barely
 * converged (the momentum off by 12 % of sum m |v| at 10 passes, 7 % at 160); with
 * kappa m_eff / h^2 + k_s, 6 % and 0.3 %; a 10 x 10 cloth dropped on a pinned one at 1/60
 * s x 10 passes rests 0.02 % of T inside (0.0004 % with the colliders' form). Segments
 * take the pairs' form: two strings crosswise at 1/60 s rest 1.4 % of 2 R inside. A
 * contact deeper than SS_VBD_PUSH_OUT h at x0 pushes to T less the rest (as a pair's
 * delta_rest). Friction mu (self-collision's, or contact_friction for segments) is the
 * pairs' lagged IPC friction on the contact's slip u = sum_k w_k (x_k - x0_k), u = w_a
 * (x_a - x0_a) + rest in node a's block (rest frozen, lambda = k (T - d) and n frozen;
 * f -= mu lambda f1/|u_T| w_a u_T, H += mu lambda f1/|u_T| w_a^2 (I - n n^T)). A contact
 * apart at x_a that the Newton step enters joins the block linearised there, 1/2 k (d_p
 * + w_a n_p.dx)^2, as a pair does. The colouring keeps the four nodes of every contact
 * apart (each two free ones linked, with the pairs), so a contact's nodes are never
 * solved at once. The first guess is moved apart equal and opposite as the pairs'
 * (guess_quads_apart: x_k += (w_k / m_k) / W of the contact-alone backward-Euler share
 * of the depth gained, W = sum_k w_k^2 / m_k: momentum kept). Crossings: the unsigned
 * distance has its maximum at d = 0, so a step that carries a node through a surface is
 * pushed on through, not back. So each node of a contact moves at most
 * SS_VBD_CONTACT_BOUND = 0.4 of its least contact distance at x0 in the substep (the
 * first guess and every trial point of its line search are pulled back to that ball,
 * hold_within; Chen et al. 2024's conservative bound, without its re-detection): the
 * closest points then close by at most 2 x 0.4 of the distance, and never meet. The
 * cost: nodes approaching a contact are slowed to 0.4 of the gap a substep (a cloth
 * thrown at 1 m/s at one 3 mm away, 1/60 s: it lands over a few substeps, not one), and
 * a contact sliding faster than 0.4 T / h is held back. A resting contact's potential
 * is in energy() only at self-collision's own stiffness (and segments' at node-node
 * contact's): the difference shows in `dissipated`, as a collider's.
 *
 * The after-substep rule (colliders.c) no longer acts on planes, spheres, boxes and
 * capsules in vbd, only on meshes, as a safety net: a mesh is a thin layer (its skin,
 * 1e-9 of its size, or its thickness), thinner than a resting node's F / k_c, so a node
 * would end a substep through it and then belong on the wrong side
 * (tests/physics/test_vbd_contact.py, the cloth on a mesh ball, went through without it).
 *
 * The colour order: nodes are coloured greedily in index order, each taking the lowest
 * colour that no node sharing a spring (a gas element, a contact pair, a 4-node contact)
 * with it took; a pass visits
 * colour 0's nodes in increasing index, then colour 1's, ... No two nodes of a colour share a
 * spring, so a colour's nodes read only what earlier colours wrote: on several threads each takes a
 * fixed share of a colour, with a barrier between colours, and the result is the same
 * for any number of threads. Every node sums its springs in their index order.
 * Built once per topology (the graph below), dropped by ss_system_topology_changed.
 *
 * Memory: the graph (8 bytes per spring end, 32 per node, 8 per gas element end; with
 * radii 52 more per node and 12 per pair end for the substep's pairs; with 4-node
 * contacts 48 more per node and 60 per contact, plus 4 per link) and,
 * in the integrator scratch, 3 N dim doubles (x0, y, a), with gas N dim + bodies more
 * (its explicit force, the volumes); the colliders need none. */
#include "springsim.h"

#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* A node of 4-node contacts moves at most this fraction of its least contact distance at
 * the substep's start (the header comment, "crossings"): the contact's closest points then
 * close by at most 2 x 0.4 of it, so they never meet, and never cross. */
#define SS_VBD_CONTACT_BOUND 0.4
/* Halvings of a Newton step that raised its vertex's energy before it is skipped. */
#define SS_VBD_BACKTRACKS 3
/* A step "raises" G when it adds more than SS_VBD_ROUNDING times G's rounding scale:
 * the sum over its terms of their sizes before cancellation (w |e|_1 (|x|+|x0|+|y|) for
 * inertia, k |l - L| (the coordinates' and lengths' sizes) per spring, likewise the
 * dashpot), each in metres times the force. Near convergence a step changes G by less
 * than G's rounding, and such a step is taken, so that rounding never decides. 64
 * ulps of that scale. */
#define SS_VBD_ROUNDING (64.0 * 2.220446049250313e-16)
#define SS_MIN_SPRING_LENGTH2 (SS_MIN_SPRING_LENGTH * SS_MIN_SPRING_LENGTH)
/* The colliders' contact stiffness, k_c = SS_VBD_CONTACT_KAPPA (m_i / h^2 + the sum of
 * node i's springs' k): kappa times the diagonal scale of the node's block, so that the
 * contact stays stiff against both the inertia and the springs pressing the node in. A
 * free node resting under its weight is inside by m g / k_c = g h^2 / kappa (27 um at
 * 1/60 s). Chosen by measurement (the header comment). */
#define SS_VBD_CONTACT_KAPPA 100.0
/* The friction's smoothing speed eps_v, m/s: a slip below eps_v h in a substep meets a
 * friction force that grows smoothly from 0 to mu lambda (IPC's f1), so a sticking node
 * creeps at less than eps_v. */
#define SS_VBD_FRICTION_SPEED 1e-3
/* At most this many colliders' frictions held frozen per vertex step (more: no friction
 * from the later ones in that step). */
#define SS_VBD_MAX_FRICTIONS 8
/* At most this many contact pairs' frictions held frozen per vertex step (more: no
 * friction from the later pairs in that step; a ball in a 3D packing has 12 neighbours). */
#define SS_VBD_MAX_PAIR_FRICTIONS 16
/* The fastest a contact pair that starts a substep overlapping (placed so, or pressed in
 * by more than this in one substep) is pushed apart, m/s: its energy is 1/2 k (delta -
 * delta_rest)^2 with delta_rest = max(0, delta(x0) - v h) (Box2D v3's
 * contactPushMaxVelocity, 3 m/s), so that bodies placed overlapping come apart at a few
 * m/s, not at delta / h with all of 1/2 k delta^2 released. */
#define SS_VBD_PUSH_OUT 3.0

/* A 4-node contact of the substep: node a against triangle (b, c, d)
 * (SS_QUAD_NODE_TRIANGLE), or segments (a, b) and (c, d) (SS_QUAD_EDGES); the thickness
 * T, m, its stiffness k, N/m, and friction mu. */
typedef struct {
    int32_t node[4];
    int kind;
    double thickness, k, mu;
} vbd_quad;

/* The vertex graph: each node's springs (other end and spring index, by spring index)
 * and the nodes in colour order. */
struct ss_vbd_graph {
    size_t *adj_start;    /* (N + 1,) */
    int32_t *adj_node;    /* (2 M,) the other end */
    int32_t *adj_spring;  /* (2 M,) */
    int32_t *order;       /* (N,) nodes, colour by colour */
    size_t *colour_start; /* (num_colours + 1,) */
    size_t num_colours;
    /* Each node's gas elements, body by body, element by element: (body, element). */
    size_t *gas_start; /* (N + 1,) */
    int32_t *gas_elem; /* (2 E,) E: the element ends over every body */
    size_t gas_bodies; /* sys->num_bodies it was built for */
    long gas_next;     /* sys->next_body_id it was built for */
    /* Node-node contact, per substep (ss_vbd_step): the pairs within reach, each node's
     * pairs in pair order (the other node), and the colouring with them. Grow-only. */
    ss_contact_scratch near;
    size_t *pair_start;   /* (N + 1,) */
    int32_t *pair_other;  /* (2 P,) */
    double *pair_rest;    /* (2 P,) the overlap the pair may keep in the substep, m */
    size_t pair_room;     /* 2 P that pair_other has room for */
    int32_t *colour;      /* (N + 1,) a node's colour, while colouring */
    size_t *seen;         /* (N + 2,) */
    size_t *fill;         /* (N + 1,) */
    int32_t *touch_order; /* (N + 1,) nodes, colour by colour, with the pairs */
    size_t *touch_start;  /* (N + 1,) */
    size_t touch_colours;
    /* The 4-node contacts (self-collision, segment contact), per substep (find_quads):
     * the contacts, each node's (contact, slot) as 4 contact + slot in contact order, and
     * the links the colouring keeps apart (pairs' others, then the contacts' other free
     * nodes). Grow-only. */
    vbd_quad *quads;
    size_t num_quads, quad_room;
    size_t *quad_start; /* (N + 1,) */
    int32_t *quad_ref;  /* (4 Q,) */
    size_t *link_start; /* (N + 1,) */
    int32_t *link_other;
    size_t link_room;
    double *mid; /* (N, 3) where the contacts are searched: (x0 + y) / 2 */
    size_t mid_room;
    double *bound; /* (N,) how far each node may move in the substep, m (inf: any) */
};

void ss_vbd_forget(ss_system *sys) {
    ss_vbd_graph *g = sys->scratch.vbd;
    if (!g)
        return;
    ss_free(g->adj_start);
    ss_free(g->adj_node);
    ss_free(g->adj_spring);
    ss_free(g->order);
    ss_free(g->colour_start);
    ss_free(g->gas_start);
    ss_free(g->gas_elem);
    ss_contact_scratch_release(&g->near);
    ss_free(g->pair_start);
    ss_free(g->pair_other);
    ss_free(g->pair_rest);
    ss_free(g->colour);
    ss_free(g->seen);
    ss_free(g->fill);
    ss_free(g->touch_order);
    ss_free(g->touch_start);
    ss_free(g->quads);
    ss_free(g->quad_start);
    ss_free(g->quad_ref);
    ss_free(g->link_start);
    ss_free(g->link_other);
    ss_free(g->mid);
    ss_free(g->bound);
    ss_free(g);
    sys->scratch.vbd = NULL;
}

size_t ss_vbd_nbytes(const ss_system *sys) {
    const ss_vbd_graph *g = sys->scratch.vbd;
    if (!g)
        return 0;
    const size_t n = sys->num_nodes, m = sys->num_springs;
    const size_t touch = g->pair_start ? 4 * (n + 1) * sizeof(size_t) + n * sizeof(size_t) +
                                             2 * (n + 1) * sizeof(int32_t) +
                                             g->pair_room * (sizeof(int32_t) + sizeof(double))
                                       : 0;
    const size_t quads = g->quad_room * (sizeof(vbd_quad) + 4 * sizeof(int32_t)) +
                         (g->quad_start ? 2 * (n + 1) * sizeof(size_t) : 0) +
                         g->link_room * sizeof(int32_t) +
                         (g->mid_room + (g->mid_room + 2) / 3) * sizeof(double);
    return sizeof *g + (n + 1) * sizeof(size_t) + 2 * (2 * m + 1) * sizeof(int32_t) +
           (n + 1) * sizeof(int32_t) + (g->num_colours + 1) * sizeof(size_t) +
           (n + 1) * sizeof(size_t) + 2 * (g->gas_start[n] + 1) * sizeof(int32_t) + touch + quads;
}

/* Each node's gas elements (g->gas_start, g->gas_elem); 0 when out of memory. */
static int build_gas(const ss_system *sys, ss_vbd_graph *g) {
    const size_t n = sys->num_nodes, per = (size_t)sys->dim;
    g->gas_start = ss_malloc((n + 1) * sizeof *g->gas_start);
    size_t ends = 0;
    for (size_t b = 0; b < sys->num_bodies; b++)
        ends += sys->bodies[b].count * per;
    g->gas_elem = ss_malloc(2 * (ends + 1) * sizeof *g->gas_elem);
    size_t *fill = ss_malloc((n + 1) * sizeof *fill);
    if (!g->gas_start || !g->gas_elem || !fill) {
        ss_free(fill);
        return 0;
    }
    memset(g->gas_start, 0, (n + 1) * sizeof *g->gas_start);
    for (size_t b = 0; b < sys->num_bodies; b++)
        for (size_t q = 0; q < sys->bodies[b].count * per; q++)
            g->gas_start[sys->bodies[b].elements[q] + 1]++;
    for (size_t i = 0; i < n; i++)
        g->gas_start[i + 1] += g->gas_start[i];
    memcpy(fill, g->gas_start, (n + 1) * sizeof *fill);
    for (size_t b = 0; b < sys->num_bodies; b++)
        for (size_t q = 0; q < sys->bodies[b].count * per; q++) {
            const size_t i = (size_t)sys->bodies[b].elements[q];
            g->gas_elem[2 * fill[i]] = (int32_t)b;
            g->gas_elem[2 * fill[i]++ + 1] = (int32_t)(q / per);
        }
    ss_free(fill);
    g->gas_bodies = sys->num_bodies;
    g->gas_next = sys->next_body_id;
    return 1;
}

/* Greedy colouring in node order: node i takes the lowest colour that no earlier node
 * sharing a spring, a gas element (its gradient is fixed while the colour is solved) or,
 * with pair_start (CSR of each node's contact pairs, the other node), a contact pair with
 * it took; a node of degree D finds a free colour <= D. colour (N,), seen (N + 2,)
 * scratch. Returns the number of colours. */
static size_t colour_greedy(const ss_system *sys, const ss_vbd_graph *g, const size_t *pair_start,
                            const int32_t *pair_other, int32_t *colour, size_t *seen) {
    const size_t n = sys->num_nodes;
    memset(seen, 0, (n + 2) * sizeof *seen); /* seen[c] = 1 + the node that saw c */
    size_t colours = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t e = g->adj_start[i]; e < g->adj_start[i + 1]; e++) {
            const size_t j = (size_t)g->adj_node[e];
            if (j < i)
                seen[colour[j]] = i + 1;
        }
        for (size_t e = g->gas_start[i]; e < g->gas_start[i + 1]; e++) {
            const ss_pressure_body *body = &sys->bodies[g->gas_elem[2 * e]];
            const int32_t *el = body->elements + (size_t)g->gas_elem[2 * e + 1] * (size_t)sys->dim;
            for (int q = 0; q < sys->dim; q++)
                if ((size_t)el[q] < i)
                    seen[colour[el[q]]] = i + 1;
        }
        if (pair_start)
            for (size_t e = pair_start[i]; e < pair_start[i + 1]; e++)
                if ((size_t)pair_other[e] < i)
                    seen[colour[pair_other[e]]] = i + 1;
        int32_t c = 0;
        while (seen[c] == i + 1)
            c++;
        colour[i] = c;
        if ((size_t)c + 1 > colours)
            colours = (size_t)c + 1;
    }
    return colours;
}

/* The nodes colour by colour, each colour's in index order: order (N,), colour_start
 * (colours + 1,); fill (colours,) scratch. */
static void order_by_colour(const int32_t *colour, size_t n, size_t colours, size_t *colour_start,
                            int32_t *order, size_t *fill) {
    memset(colour_start, 0, (colours + 1) * sizeof *colour_start);
    for (size_t i = 0; i < n; i++)
        colour_start[colour[i] + 1]++;
    for (size_t c = 0; c < colours; c++)
        colour_start[c + 1] += colour_start[c];
    memcpy(fill, colour_start, colours * sizeof *fill);
    for (size_t i = 0; i < n; i++)
        order[fill[colour[i]]++] = (int32_t)i;
}

ss_status ss_vbd_ensure_graph(ss_system *sys) {
    if (sys->scratch.vbd && (sys->scratch.vbd->gas_bodies != sys->num_bodies ||
                             sys->scratch.vbd->gas_next != sys->next_body_id))
        ss_vbd_forget(sys); /* gas bodies came or went: their elements join the colouring */
    if (sys->scratch.vbd)
        return SS_OK;
    const size_t n = sys->num_nodes, m = sys->num_springs;
    const int32_t *pairs = SS_INT32S(sys, SS_SPRINGS);
    ss_vbd_graph *g = ss_malloc(sizeof *g);
    size_t *fill = ss_malloc((n + 1) * sizeof *fill);
    int32_t *colour = ss_malloc((n + 1) * sizeof *colour);
    size_t *seen = ss_malloc((n + 2) * sizeof *seen); /* seen[c] = 1 + the node that saw c */
    if (g) {
        memset(g, 0, sizeof *g);
        g->adj_start = ss_malloc((n + 1) * sizeof *g->adj_start);
        g->adj_node = ss_malloc((2 * m + 1) * sizeof *g->adj_node);
        g->adj_spring = ss_malloc((2 * m + 1) * sizeof *g->adj_spring);
        g->order = ss_malloc((n + 1) * sizeof *g->order);
    }
    if (!g || !fill || !colour || !seen || !g->adj_start || !g->adj_node || !g->adj_spring ||
        !g->order || !build_gas(sys, g))
        goto out_of_memory;
    /* Adjacency in spring order: count, offsets, fill. */
    memset(g->adj_start, 0, (n + 1) * sizeof *g->adj_start);
    for (size_t s = 0; s < m; s++) {
        g->adj_start[pairs[2 * s] + 1]++;
        g->adj_start[pairs[2 * s + 1] + 1]++;
    }
    for (size_t i = 0; i < n; i++)
        g->adj_start[i + 1] += g->adj_start[i];
    memcpy(fill, g->adj_start, (n + 1) * sizeof *fill);
    for (size_t s = 0; s < m; s++) {
        const int32_t i = pairs[2 * s], j = pairs[2 * s + 1];
        g->adj_node[fill[i]] = j;
        g->adj_spring[fill[i]++] = (int32_t)s;
        g->adj_node[fill[j]] = i;
        g->adj_spring[fill[j]++] = (int32_t)s;
    }
    const size_t colours = colour_greedy(sys, g, NULL, NULL, colour, seen);
    g->colour_start = ss_malloc((colours + 1) * sizeof *g->colour_start);
    if (!g->colour_start)
        goto out_of_memory;
    order_by_colour(colour, n, colours, g->colour_start, g->order, fill);
    g->num_colours = colours;
    ss_free(fill);
    ss_free(colour);
    ss_free(seen);
    sys->scratch.vbd = g;
    return SS_OK;
out_of_memory:
    sys->scratch.vbd = g;
    ss_vbd_forget(sys);
    ss_free(fill);
    ss_free(colour);
    ss_free(seen);
    return ss_fail(sys, SS_ERR_NOMEM, "out of memory for the vbd graph of %zu nodes", n);
}

size_t ss_vbd_scratch_size(const ss_system *sys) {
    const size_t nd = sys->num_nodes * (size_t)sys->dim;
    return 3 * nd + (sys->num_bodies ? nd + sys->num_bodies : 0);
}

/* The largest |coordinate| of a row, m. */
static inline double largest(const double *row, int dim) {
    double most = 0.0;
    for (int q = 0; q < dim; q++)
        most = fabs(row[q]) > most ? fabs(row[q]) : most;
    return most;
}

/* What a vertex solve reads and writes. */
typedef struct {
    const ss_vbd_graph *g;
    const double *rest, *k, *c, *m, *x0, *y;
    double *x;
    const uint8_t *pinned;
    double h, inv_h, inv_h2;
    int dim;
    const ss_collider *colliders;
    size_t num_colliders;
    const ss_pressure_body *bodies;
    const double *volumes; /* (bodies,) m^3 (m^2 in 2D) when the colour began */
    /* node-node contact: the radii, or NULL (no pairs this substep: g->pair_start unread) */
    const double *radii;
    double pair_k;  /* the user's contact_stiffness, N/m, or 0: kappa's form */
    double pair_mu; /* contact_friction */
    int quads;      /* 4-node contacts this substep (g->quad_start read) */
} vbd_view;

/* dV/dx_i of gas body b over node i's elements of it, gas_elem[e0 .. e1), at the
 * current positions: each element's share as pressure.c gives it (2D edge (a, b):
 * 1/2 (d_y, -d_x), d = x_b - x_a; 3D triangle: 1/6 (x_b - x_a) x (x_c - x_a)). V is
 * linear in x_i: V(p) = V + grad.(p - x_i) exactly, the others held. */
static void gas_gradient(const vbd_view *vv, size_t e0, size_t e1, double *grad) {
    const int dim = vv->dim;
    const ss_pressure_body *body = &vv->bodies[vv->g->gas_elem[2 * e0]];
    grad[0] = grad[1] = grad[2] = 0.0;
    for (size_t e = e0; e < e1; e++) {
        const int32_t *el = body->elements + (size_t)vv->g->gas_elem[2 * e + 1] * (size_t)dim;
        const double *a = vv->x + (size_t)el[0] * (size_t)dim,
                     *b = vv->x + (size_t)el[1] * (size_t)dim;
        if (dim == 2) {
            grad[0] += 0.5 * (b[1] - a[1]);
            grad[1] += -0.5 * (b[0] - a[0]);
            continue;
        }
        const double *c = vv->x + (size_t)el[2] * 3;
        double u[3], v[3];
        for (int k = 0; k < 3; k++) {
            u[k] = b[k] - a[k];
            v[k] = c[k] - a[k];
        }
        const double sixth = 1.0 / 6.0;
        grad[0] += sixth * (u[1] * v[2] - u[2] * v[1]);
        grad[1] += sixth * (u[2] * v[0] - u[0] * v[2]);
        grad[2] += sixth * (u[0] * v[1] - u[1] * v[0]);
    }
}

/* The end of the run of node i's gas elements from e0 that belong to one body. */
static size_t gas_run(const vbd_view *vv, size_t i, size_t e0) {
    size_t e1 = e0 + 1;
    while (e1 < vv->g->gas_start[i + 1] && vv->g->gas_elem[2 * e1] == vv->g->gas_elem[2 * e0])
        e1++;
    return e1;
}

/* The gas bodies' share of G_i at p: -nrt ln V(p) + ambient V(p) per body, V(p) = V +
 * grad.(p - x_i) (V as the colour began); +inf if some V(p) <= 0. */
static double gas_energy(const vbd_view *vv, size_t i, const double *p) {
    const int dim = vv->dim;
    const double *xi = vv->x + i * (size_t)dim;
    double energy = 0.0;
    for (size_t e0 = vv->g->gas_start[i], e1; e0 < vv->g->gas_start[i + 1]; e0 = e1) {
        e1 = gas_run(vv, i, e0);
        const size_t b = (size_t)vv->g->gas_elem[2 * e0];
        double grad[3];
        gas_gradient(vv, e0, e1, grad);
        double volume = vv->volumes[b];
        for (int q = 0; q < dim; q++)
            volume += grad[q] * (p[q] - xi[q]);
        if (!(volume > 0.0))
            return INFINITY;
        energy += -vv->bodies[b].nrt * log(volume) + vv->bodies[b].ambient * volume;
    }
    return energy;
}

/* One contact's friction on node i, frozen for the node's step (the header comment): the
 * normal n, the force mu lambda, N, and where the slip is measured from, m (x0_i for a
 * collider; x0_i + (x_j - x0_j) for a pair with node j). */
typedef struct {
    double n[3], mu_lambda, base[3];
} vbd_friction;

/* Where p is against collider col for node i, which started the substep at x0i: whether
 * it is inside (depth > 0, m), and then the depth, the surface point and the unit normal
 * into free space. A mesh: the triangle the segment x0i..p crosses first, else the
 * nearest within its thickness (ss_mesh_find, as the other methods find it). */
static int collider_depth(const ss_collider *col, int dim, const double *x0i, const double *p,
                          double *depth, double *surface, double *normal) {
    if (col->kind == SS_MESH) {
        ss_mesh_contact hit = {-1, 1};
        if (!ss_mesh_find(col->mesh, col->thickness, x0i, p, &hit))
            return 0;
        return ss_mesh_locate(col->mesh, col->thickness, &hit, p, depth, surface, normal);
    }
    return ss_collider_locate(col, NULL, dim, p, 0, depth, surface, normal) && *depth > 0.0;
}

/* IPC's smoothed friction (Li et al. 2020) for a slip s = |u_T| in a substep, eps = eps_v
 * h: the energy per unit force f0(s) (m) and f1(s) / s (1/m), f1 = f0'. Below eps:
 * f0 = -s^3/(3 eps^2) + s^2/eps + eps/3, f1/s = 2/eps - s/eps^2; above: s and 1/s. */
static inline double friction_f0(double s, double eps) {
    return s < eps ? (-(s * s * s) / (3.0 * eps * eps) + (s * s) / eps) + eps / 3.0 : s;
}
static inline double friction_f1_over_s(double s, double eps) {
    return s < eps ? 2.0 / eps - s / (eps * eps) : 1.0 / s;
}

/* The tangential slip of p since x0i across unit normal n: u - (u.n) n, u = p - x0i; its
 * length. */
static double slip(const double *p, const double *x0i, const double *n, int dim, double *ut) {
    double u[3] = {0.0, 0.0, 0.0};
    for (int q = 0; q < dim; q++)
        u[q] = p[q] - x0i[q];
    const double un = (u[0] * n[0] + u[1] * n[1]) + u[2] * n[2];
    for (int q = 0; q < dim; q++)
        ut[q] = u[q] - un * n[q];
    return sqrt((ut[0] * ut[0] + ut[1] * ut[1]) + ut[2] * ut[2]);
}

/* k_c of node i, N/m: kappa (m_i / h^2 + the sum of its springs' k, in their order). */
static double contact_stiffness(const vbd_view *vv, size_t i) {
    double block = vv->m[i] * vv->inv_h2;
    for (size_t a = vv->g->adj_start[i]; a < vv->g->adj_start[i + 1]; a++)
        block += vv->k[vv->g->adj_spring[a]];
    return SS_VBD_CONTACT_KAPPA * block;
}

/* The colliders' and their frozen frictions' share of G_i at p. */
static double contact_energy(const vbd_view *vv, size_t i, const double *p, double kc,
                             const vbd_friction *frozen, int num_frozen) {
    const int dim = vv->dim;
    const double *x0i = vv->x0 + i * (size_t)dim;
    const double eps = SS_VBD_FRICTION_SPEED * vv->h;
    double energy = 0.0;
    for (size_t c = 0; c < vv->num_colliders; c++) {
        double depth = 0.0, surface[3] = {0.0, 0.0, 0.0}, n[3] = {0.0, 0.0, 0.0};
        if (collider_depth(&vv->colliders[c], dim, x0i, p, &depth, surface, n))
            energy += 0.5 * kc * (depth * depth);
    }
    for (int q = 0; q < num_frozen; q++) {
        double ut[3] = {0.0, 0.0, 0.0};
        energy +=
            frozen[q].mu_lambda * friction_f0(slip(p, frozen[q].base, frozen[q].n, dim, ut), eps);
    }
    return energy;
}

/* The stiffness of contact pair (i, j), N/m: the user's contact_stiffness, else kappa
 * m_eff / h^2, m_eff = m_i m_j / (m_i + m_j) (m_i against a pinned j): the pair's inertia
 * scale, without the springs' k that the colliders' k_c counts (the header comment). The
 * same bits from either end. */
static double pair_stiffness(const vbd_view *vv, size_t i, size_t j) {
    if (vv->pair_k > 0.0)
        return vv->pair_k;
    if (vv->pinned[j])
        return SS_VBD_CONTACT_KAPPA * (vv->m[i] * vv->inv_h2);
    const double lo = vv->m[i] < vv->m[j] ? vv->m[i] : vv->m[j];
    const double hi = vv->m[i] < vv->m[j] ? vv->m[j] : vv->m[i]; /* one order either end */
    return SS_VBD_CONTACT_KAPPA * ((lo * hi / (lo + hi)) * vv->inv_h2);
}

/* Overlap of node i at p with node j at x_j, m (> 0: touching), and the unit normal from
 * j to i; 0 when the centres are closer than SS_MIN_SPRING_LENGTH (no direction). */
static double pair_overlap(const vbd_view *vv, size_t i, size_t j, const double *p, double *n) {
    const int dim = vv->dim;
    const double *xj = vv->x + j * (size_t)dim;
    double d[3] = {0.0, 0.0, 0.0};
    for (int q = 0; q < dim; q++)
        d[q] = p[q] - xj[q];
    const double d2 = (d[0] * d[0] + d[1] * d[1]) + d[2] * d[2];
    if (!(d2 >= SS_MIN_SPRING_LENGTH2))
        return 0.0;
    const double dist = sqrt(d2), inv = 1.0 / dist;
    n[0] = d[0] * inv, n[1] = d[1] * inv, n[2] = d[2] * inv;
    return (vv->radii[i] + vv->radii[j]) - dist;
}

/* The contact pairs' share of G_i at p: 1/2 k delta^2 per touching pair. */
static double pairs_energy(const vbd_view *vv, size_t i, const double *p) {
    double energy = 0.0;
    for (size_t a = vv->g->pair_start[i]; a < vv->g->pair_start[i + 1]; a++) {
        const size_t j = (size_t)vv->g->pair_other[a];
        double n[3] = {0.0, 0.0, 0.0};
        const double delta = pair_overlap(vv, i, j, p, n) - vv->g->pair_rest[a];
        if (delta > 0.0)
            energy += 0.5 * pair_stiffness(vv, i, j) * (delta * delta);
    }
    return energy;
}

/* G_i at position p of node i (the others where they are), as the comment at the top. */
static double local_energy(const vbd_view *vv, size_t i, const double *p) {
    const int dim = vv->dim;
    const double *xi = vv->x + i * (size_t)dim;
    const double *yi = vv->y + i * (size_t)dim, *x0i = vv->x0 + i * (size_t)dim;
    const double w = vv->m[i] * vv->inv_h2;
    double e[3] = {0.0, 0.0, 0.0};
    for (int q = 0; q < dim; q++)
        e[q] = p[q] - yi[q];
    double energy = 0.5 * w * ((e[0] * e[0] + e[1] * e[1]) + e[2] * e[2]);
    for (size_t a = vv->g->adj_start[i]; a < vv->g->adj_start[i + 1]; a++) {
        const size_t j = (size_t)vv->g->adj_node[a], s = (size_t)vv->g->adj_spring[a];
        const double *xj = vv->x + j * (size_t)dim, *x0j = vv->x0 + j * (size_t)dim;
        double d[3] = {0.0, 0.0, 0.0}, now[3] = {0.0, 0.0, 0.0};
        for (int q = 0; q < dim; q++) {
            d[q] = p[q] - xj[q];
            now[q] = xi[q] - xj[q];
        }
        const double now2 = (now[0] * now[0] + now[1] * now[1]) + now[2] * now[2];
        if (now2 < SS_MIN_SPRING_LENGTH2)
            continue; /* as the step's own sums skip it */
        const double l2 = (d[0] * d[0] + d[1] * d[1]) + d[2] * d[2];
        const double stretch = sqrt(l2) - vv->rest[s];
        energy += 0.5 * vv->k[s] * (stretch * stretch);
        if (vv->c[s] > 0.0) { /* along the spring's direction before the step: frozen */
            const double inv = 1.0 / sqrt(now2), ch = vv->c[s] * vv->inv_h;
            double r = 0.0;
            for (int q = 0; q < dim; q++)
                r += (d[q] - (x0i[q] - x0j[q])) * (now[q] * inv);
            energy += 0.5 * ch * (r * r);
        }
    }
    return energy;
}

/* h += a v v^T for the symmetric block h = (h00, h01, h02, h11, h12, h22). */
static inline void add_outer(double *h, double a, const double *v, int dim) {
    h[0] += a * v[0] * v[0];
    h[1] += a * v[0] * v[1];
    h[3] += a * v[1] * v[1];
    if (dim == 3) {
        h[2] += a * v[0] * v[2];
        h[4] += a * v[1] * v[2];
        h[5] += a * v[2] * v[2];
    }
}

/* dx = H^-1 f by the adjugate over the determinant; 0 (dx untouched) unless the
 * determinant is positive and finite. */
static int newton(const double *h, const double *f, int dim, double *dx) {
    const double h00 = h[0], h01 = h[1], h02 = h[2], h11 = h[3], h12 = h[4], h22 = h[5];
    if (dim == 3) {
        const double c00 = h11 * h22 - h12 * h12, c01 = h02 * h12 - h01 * h22;
        const double c02 = h01 * h12 - h02 * h11, c11 = h00 * h22 - h02 * h02;
        const double c12 = h01 * h02 - h00 * h12, c22 = h00 * h11 - h01 * h01;
        const double det = (h00 * c00 + h01 * c01) + h02 * c02;
        if (!(det > 0.0) || !isfinite(det))
            return 0;
        const double inv_det = 1.0 / det;
        dx[0] = ((c00 * f[0] + c01 * f[1]) + c02 * f[2]) * inv_det;
        dx[1] = ((c01 * f[0] + c11 * f[1]) + c12 * f[2]) * inv_det;
        dx[2] = ((c02 * f[0] + c12 * f[1]) + c22 * f[2]) * inv_det;
    } else {
        const double det = h00 * h11 - h01 * h01;
        if (!(det > 0.0) || !isfinite(det))
            return 0;
        const double inv_det = 1.0 / det;
        dx[0] = (h11 * f[0] - h01 * f[1]) * inv_det;
        dx[1] = (h00 * f[1] - h01 * f[0]) * inv_det;
    }
    return 1;
}

/* At most this many 4-node contacts' frictions held frozen per vertex step (more: no
 * friction from the later ones in that step). */
#define SS_VBD_MAX_QUAD_FRICTIONS 16

/* p moved back towards x0i to within `bound` of it (a node of 4-node contacts moves at
 * most that far in the substep: the header comment, "crossings"). */
static void hold_within(const double *x0i, double bound, double *p) {
    const double e0 = p[0] - x0i[0], e1 = p[1] - x0i[1], e2 = p[2] - x0i[2];
    const double d2 = (e0 * e0 + e1 * e1) + e2 * e2;
    if (!(d2 > bound * bound))
        return;
    const double s = bound / sqrt(d2);
    p[0] = x0i[0] + s * e0, p[1] = x0i[1] + s * e1, p[2] = x0i[2] + s * e2;
}

/* One 4-node contact's friction on the node in its slot, frozen for the node's step: the
 * normal n, the force mu lambda, N, the node's weight w and the others' share of the
 * contact's slip, rest = sum over the other slots of w_k (x_k - x0_k), m: the slip is
 * u = w (p - x0_i) + rest. */
typedef struct {
    double n[3], mu_lambda, w, rest[3];
} vbd_quad_friction;

/* Contact q with the node of `slot` at p, the others where they are: whether its closest
 * points are closer than its thickness, and then the weights w, the normal n and the
 * depth (ss_self_contact_at). */
static int quad_depth(const vbd_view *vv, const vbd_quad *q, int slot, const double *p, double w[4],
                      double n[3], double *depth) {
    const double *pts[4];
    for (int k = 0; k < 4; k++)
        pts[k] = k == slot ? p : vv->x + 3 * (size_t)q->node[k];
    return ss_self_contact_at(q->kind, pts, q->thickness, w, n, depth);
}

/* The slip of a frozen 4-node friction with its node at p: u_T = u - (u.n) n, u = w (p -
 * x0_i) + rest; its length. */
static double quad_slip(const vbd_quad_friction *fr, const double *p, const double *x0i,
                        double *ut) {
    double u[3];
    for (int q = 0; q < 3; q++)
        u[q] = fr->w * (p[q] - x0i[q]) + fr->rest[q];
    const double un = (u[0] * fr->n[0] + u[1] * fr->n[1]) + u[2] * fr->n[2];
    for (int q = 0; q < 3; q++)
        ut[q] = u[q] - un * fr->n[q];
    return sqrt((ut[0] * ut[0] + ut[1] * ut[1]) + ut[2] * ut[2]);
}

/* The sizes of contact q's nodes (largest |coordinate| at x, and at x0 with `starts`). */
static double quad_size(const vbd_view *vv, const vbd_quad *q, int starts) {
    double size = 0.0;
    for (int k = 0; k < 4; k++) {
        size += largest(vv->x + 3 * (size_t)q->node[k], 3);
        if (starts)
            size += largest(vv->x0 + 3 * (size_t)q->node[k], 3);
    }
    return size;
}

/* Node i's 4-node contacts into its block at x_i (the header comment): for each touching,
 * weight w of the node, G += 1/2 k (T - d)^2, f += k (T - d) w n, H += k w^2 n n^T, and
 * friction lagged as the pairs' on the contact's slip, frozen into `frozen`. */
static void quad_terms(const vbd_view *vv, size_t i, double *energy, double *f, double *hc,
                       double *scale, vbd_quad_friction *frozen, int *num_frozen) {
    const double *xi = vv->x + 3 * i, *x0i = vv->x0 + 3 * i;
    const double eps = SS_VBD_FRICTION_SPEED * vv->h;
    for (size_t r = vv->g->quad_start[i]; r < vv->g->quad_start[i + 1]; r++) {
        const vbd_quad *q = &vv->g->quads[vv->g->quad_ref[r] / 4];
        const int slot = vv->g->quad_ref[r] % 4;
        double w[4], n[3], depth;
        if (!quad_depth(vv, q, slot, xi, w, n, &depth))
            continue;
        const double wa = w[slot], push = q->k * depth;
        *energy += 0.5 * push * depth;
        *scale += push * (quad_size(vv, q, 0) + q->thickness);
        for (int d = 0; d < 3; d++)
            f[d] += (push * wa) * n[d];
        add_outer(hc, q->k * (wa * wa), n, 3);
        if (!(q->mu > 0.0) || *num_frozen == SS_VBD_MAX_QUAD_FRICTIONS)
            continue;
        vbd_quad_friction *fr = &frozen[(*num_frozen)++];
        memcpy(fr->n, n, sizeof n);
        fr->mu_lambda = q->mu * push;
        fr->w = wa;
        fr->rest[0] = fr->rest[1] = fr->rest[2] = 0.0;
        for (int k = 0; k < 4; k++) {
            if (k == slot)
                continue;
            const double *xk = vv->x + 3 * (size_t)q->node[k],
                         *x0k = vv->x0 + 3 * (size_t)q->node[k];
            for (int d = 0; d < 3; d++)
                fr->rest[d] += w[k] * (xk[d] - x0k[d]);
        }
        double ut[3];
        const double sl = quad_slip(fr, xi, x0i, ut);
        const double grip = fr->mu_lambda * friction_f1_over_s(sl, eps);
        *energy += fr->mu_lambda * friction_f0(sl, eps);
        *scale += fr->mu_lambda * quad_size(vv, q, 1);
        for (int d = 0; d < 3; d++)
            f[d] -= (grip * wa) * ut[d];
        const double g2 = grip * (wa * wa); /* g2 (I - n n^T) */
        hc[0] += g2, hc[3] += g2, hc[5] += g2;
        add_outer(hc, -g2, n, 3);
    }
}

/* The 4-node contacts' share of G_i at p: 1/2 k (T - d)^2 per touching contact, and the
 * frozen frictions' mu lambda f0(|u_T|). */
static double quads_energy(const vbd_view *vv, size_t i, const double *p,
                           const vbd_quad_friction *frozen, int num_frozen) {
    double energy = 0.0;
    for (size_t r = vv->g->quad_start[i]; r < vv->g->quad_start[i + 1]; r++) {
        const vbd_quad *q = &vv->g->quads[vv->g->quad_ref[r] / 4];
        double w[4], n[3], depth;
        if (quad_depth(vv, q, vv->g->quad_ref[r] % 4, p, w, n, &depth))
            energy += 0.5 * q->k * (depth * depth);
    }
    const double eps = SS_VBD_FRICTION_SPEED * vv->h;
    for (int k = 0; k < num_frozen; k++) {
        double ut[3];
        energy +=
            frozen[k].mu_lambda * friction_f0(quad_slip(&frozen[k], p, vv->x0 + 3 * i, ut), eps);
    }
    return energy;
}

/* A 4-node contact apart at x_i that the Newton step dx enters (touching at p = x_i + dx,
 * depth d_p, normal n_p, the node's weight w) joins the block linearised there, 1/2 k
 * (d_p + w n_p.dx)^2 about x_i, as a pair does. Returns whether one did. */
static int quads_entering(const vbd_view *vv, size_t i, const double *p, const double *dx,
                          double *f, double *hh) {
    const double *xi = vv->x + 3 * i;
    int entered = 0;
    for (size_t r = vv->g->quad_start[i]; r < vv->g->quad_start[i + 1]; r++) {
        const vbd_quad *q = &vv->g->quads[vv->g->quad_ref[r] / 4];
        const int slot = vv->g->quad_ref[r] % 4;
        double w[4], n[3], depth;
        if (quad_depth(vv, q, slot, xi, w, n, &depth) || !quad_depth(vv, q, slot, p, w, n, &depth))
            continue;
        const double wa = w[slot];
        const double reach = depth + wa * ((n[0] * dx[0] + n[1] * dx[1]) + n[2] * dx[2]);
        for (int d = 0; d < 3; d++)
            f[d] += (q->k * wa * reach) * n[d];
        add_outer(hh, q->k * (wa * wa), n, 3);
        entered = 1;
    }
    return entered;
}

/* One free node's Newton step with its line search (the comment at the top). */
static void solve_vertex(const vbd_view *vv, size_t i, double *force) {
    const int dim = vv->dim;
    double *xi = vv->x + i * (size_t)dim;
    const double *yi = vv->y + i * (size_t)dim, *x0i = vv->x0 + i * (size_t)dim;
    const double w = vv->m[i] * vv->inv_h2;
    double f[3] = {0.0, 0.0, 0.0}, e[3] = {0.0, 0.0, 0.0};
    double h00 = w, h01 = 0.0, h02 = 0.0, h11 = w, h12 = 0.0, h22 = w;
    for (int q = 0; q < dim; q++) {
        e[q] = xi[q] - yi[q];
        f[q] = -w * e[q];
    }
    double energy = 0.5 * w * ((e[0] * e[0] + e[1] * e[1]) + e[2] * e[2]);
    /* How large G's rounding can be: each term's size before its cancellations (see
     * SS_VBD_ROUNDING). */
    const double size_i = largest(xi, dim) + largest(x0i, dim);
    double scale = w * (fabs(e[0]) + fabs(e[1]) + fabs(e[2])) * (size_i + largest(yi, dim));
    for (size_t a = vv->g->adj_start[i]; a < vv->g->adj_start[i + 1]; a++) {
        const size_t j = (size_t)vv->g->adj_node[a], s = (size_t)vv->g->adj_spring[a];
        const double *xj = vv->x + j * (size_t)dim, *x0j = vv->x0 + j * (size_t)dim;
        double d[3] = {0.0, 0.0, 0.0}, u[3] = {0.0, 0.0, 0.0};
        for (int q = 0; q < dim; q++)
            d[q] = xi[q] - xj[q];
        const double l2 = (d[0] * d[0] + d[1] * d[1]) + d[2] * d[2];
        if (l2 < SS_MIN_SPRING_LENGTH2)
            continue;
        const double length = sqrt(l2), inv = 1.0 / length, ks = vv->k[s];
        for (int q = 0; q < dim; q++)
            u[q] = d[q] * inv;
        const double stretch = length - vv->rest[s];
        energy += 0.5 * ks * (stretch * stretch);
        const double size = size_i + largest(xj, dim) + largest(x0j, dim) + length + vv->rest[s];
        scale += ks * fabs(stretch) * size;
        const double pull = ks * stretch;
        const double transverse = 1.0 - vv->rest[s] * inv;
        const double t = transverse > 0.0 ? ks * transverse : 0.0;
        double axial = ks - t;
        for (int q = 0; q < dim; q++)
            f[q] -= pull * u[q];
        if (vv->c[s] > 0.0) {
            const double ch = vv->c[s] * vv->inv_h;
            double r = 0.0;
            for (int q = 0; q < dim; q++)
                r += (d[q] - (x0i[q] - x0j[q])) * u[q];
            energy += 0.5 * ch * (r * r);
            scale += ch * fabs(r) * size;
            for (int q = 0; q < dim; q++)
                f[q] -= ch * r * u[q];
            axial += ch;
        }
        h00 += axial * u[0] * u[0] + t;
        h01 += axial * u[0] * u[1];
        h11 += axial * u[1] * u[1] + t;
        if (dim == 3) {
            h02 += axial * u[0] * u[2];
            h12 += axial * u[1] * u[2];
            h22 += axial * u[2] * u[2] + t;
        }
    }
    /* The colliders at the node's iterate: contact 1/2 k_c d^2, and friction with its
     * normal and normal force frozen here. */
    vbd_friction frozen[SS_VBD_MAX_FRICTIONS + SS_VBD_MAX_PAIR_FRICTIONS];
    int num_frozen = 0;
    uint64_t touching = 0; /* bit c: in contact with collider c < 64 at x_i */
    const double kc = vv->num_colliders ? contact_stiffness(vv, i) : 0.0;
    const double eps = SS_VBD_FRICTION_SPEED * vv->h;
    double hc[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0}; /* the gas' and colliders' Hessian */
    /* The gas bodies: -nrt ln V + ambient V, f += (nrt/V - ambient) grad, H += nrt/V^2
     * grad grad^T (exact: V is linear in x_i). */
    const int gas = vv->g->gas_start[i] < vv->g->gas_start[i + 1];
    if (gas) {
        energy += gas_energy(vv, i, xi);
        for (size_t e0 = vv->g->gas_start[i], e1; e0 < vv->g->gas_start[i + 1]; e0 = e1) {
            e1 = gas_run(vv, i, e0);
            const ss_pressure_body *body = &vv->bodies[vv->g->gas_elem[2 * e0]];
            const double volume = vv->volumes[vv->g->gas_elem[2 * e0]];
            double grad[3];
            gas_gradient(vv, e0, e1, grad);
            const double push = body->nrt / volume - body->ambient;
            for (int q = 0; q < dim; q++)
                f[q] += push * grad[q];
            add_outer(hc, body->nrt / (volume * volume), grad, dim);
            scale += (body->nrt / volume + body->ambient) *
                         ((fabs(grad[0]) + fabs(grad[1])) + fabs(grad[2])) * size_i +
                     body->nrt * fabs(log(volume)) + body->ambient * volume;
        }
    }
    for (size_t c = 0; c < vv->num_colliders; c++) {
        const ss_collider *col = &vv->colliders[c];
        double depth = 0.0, surface[3] = {0.0, 0.0, 0.0}, n[3] = {0.0, 0.0, 0.0};
        if (!collider_depth(col, dim, x0i, xi, &depth, surface, n))
            continue;
        if (c < 64)
            touching |= (uint64_t)1 << c;
        const double push = kc * depth;
        energy += 0.5 * push * depth;
        scale += push * (size_i + largest(surface, dim));
        for (int q = 0; q < dim; q++)
            f[q] += push * n[q];
        add_outer(hc, kc, n, dim);
        if (!(col->friction > 0.0) || num_frozen == SS_VBD_MAX_FRICTIONS)
            continue;
        vbd_friction *fr = &frozen[num_frozen++];
        memcpy(fr->n, n, sizeof n);
        memcpy(fr->base, x0i, (size_t)dim * sizeof *x0i);
        fr->mu_lambda = col->friction * push;
        double ut[3] = {0.0, 0.0, 0.0};
        const double s = slip(xi, x0i, n, dim, ut),
                     grip = fr->mu_lambda * friction_f1_over_s(s, eps);
        energy += fr->mu_lambda * friction_f0(s, eps);
        scale += fr->mu_lambda * size_i;
        for (int q = 0; q < dim; q++)
            f[q] -= grip * ut[q];
        /* grip (I - n n^T) */
        hc[0] += grip, hc[3] += grip, hc[5] += dim == 3 ? grip : 0.0;
        add_outer(hc, -grip, n, dim);
    }
    /* The contact pairs, node j held: 1/2 k delta^2, f += k delta n, H += k n n^T
     * (Gauss-Newton), and friction on the pair's relative slip, lagged as the colliders'. */
    const int pairs = vv->radii && vv->g->pair_start[i] < vv->g->pair_start[i + 1];
    const int collider_frictions = num_frozen;
    for (size_t a = pairs ? vv->g->pair_start[i] : 0; pairs && a < vv->g->pair_start[i + 1]; a++) {
        const size_t j = (size_t)vv->g->pair_other[a];
        double n[3] = {0.0, 0.0, 0.0};
        const double delta = pair_overlap(vv, i, j, xi, n) - vv->g->pair_rest[a];
        if (!(delta > 0.0))
            continue;
        const double kp = pair_stiffness(vv, i, j), push = kp * delta;
        const double *xj = vv->x + j * (size_t)dim, *x0j = vv->x0 + j * (size_t)dim;
        energy += 0.5 * push * delta;
        scale += push * (size_i + largest(xj, dim) + vv->radii[i] + vv->radii[j]);
        for (int q = 0; q < dim; q++)
            f[q] += push * n[q];
        add_outer(hc, kp, n, dim);
        if (!(vv->pair_mu > 0.0) || num_frozen - collider_frictions == SS_VBD_MAX_PAIR_FRICTIONS)
            continue;
        vbd_friction *fr = &frozen[num_frozen++];
        memcpy(fr->n, n, sizeof n);
        for (int q = 0; q < dim; q++)
            fr->base[q] = x0i[q] + (xj[q] - x0j[q]);
        fr->mu_lambda = vv->pair_mu * push;
        double ut[3] = {0.0, 0.0, 0.0};
        const double s = slip(xi, fr->base, n, dim, ut),
                     grip = fr->mu_lambda * friction_f1_over_s(s, eps);
        energy += fr->mu_lambda * friction_f0(s, eps);
        scale += fr->mu_lambda * (size_i + largest(xj, dim) + largest(x0j, dim));
        for (int q = 0; q < dim; q++)
            f[q] -= grip * ut[q];
        hc[0] += grip, hc[3] += grip, hc[5] += dim == 3 ? grip : 0.0;
        add_outer(hc, -grip, n, dim);
    }
    /* The 4-node contacts (self-collision, segment contact), the others held. */
    vbd_quad_friction quad_frozen[SS_VBD_MAX_QUAD_FRICTIONS];
    int num_quad_frozen = 0;
    const int quads = vv->quads && vv->g->quad_start[i] < vv->g->quad_start[i + 1];
    if (quads)
        quad_terms(vv, i, &energy, f, hc, &scale, quad_frozen, &num_quad_frozen);
    if (force) { /* only -grad G_i at x_i, wanted */
        memcpy(force, f, (size_t)dim * sizeof *f);
        return;
    }
    double hh[6] = {h00 + hc[0], h01 + hc[1], h02 + hc[2], h11 + hc[3], h12 + hc[4], h22 + hc[5]};
    double dx[3] = {0.0, 0.0, 0.0};
    if (!newton(hh, f, dim, dx))
        return;
    /* A collider the step would enter, apart at the iterate: its contact linearised at
     * the trial point p = x_i + dx (depth d_p, normal n), 1/2 k_c (d_p + n.(p - x))^2,
     * joins the block and the step is taken again (once): for a plane this is the exact
     * minimiser of the block's model with the contact. */
    if (vv->num_colliders || pairs || quads) {
        double p[3] = {0.0, 0.0, 0.0};
        int entered = 0;
        for (int q = 0; q < dim; q++)
            p[q] = xi[q] + dx[q];
        for (size_t c = 0; c < vv->num_colliders; c++) {
            const ss_collider *col = &vv->colliders[c];
            double depth = 0.0, surface[3] = {0.0, 0.0, 0.0}, n[3] = {0.0, 0.0, 0.0};
            double now = 0.0, s0[3], n0[3];
            const int near = c < 64 ? (int)((touching >> c) & 1)
                                    : collider_depth(col, dim, x0i, xi, &now, s0, n0);
            if (near || !collider_depth(col, dim, x0i, p, &depth, surface, n))
                continue;
            const double reach = depth + ((n[0] * dx[0] + n[1] * dx[1]) + n[2] * dx[2]);
            for (int q = 0; q < dim; q++)
                f[q] += kc * reach * n[q];
            add_outer(hh, kc, n, dim);
            entered = 1;
        }
        /* likewise a pair apart at x_i that the step enters: 1/2 k (delta_p + n_p.dx)^2 */
        for (size_t a = pairs ? vv->g->pair_start[i] : 0; pairs && a < vv->g->pair_start[i + 1];
             a++) {
            const size_t j = (size_t)vv->g->pair_other[a];
            double n[3] = {0.0, 0.0, 0.0};
            if (pair_overlap(vv, i, j, xi, n) - vv->g->pair_rest[a] > 0.0)
                continue;
            const double delta = pair_overlap(vv, i, j, p, n) - vv->g->pair_rest[a];
            if (!(delta > 0.0))
                continue;
            const double kp = pair_stiffness(vv, i, j);
            const double reach = delta + ((n[0] * dx[0] + n[1] * dx[1]) + n[2] * dx[2]);
            for (int q = 0; q < dim; q++)
                f[q] += kp * reach * n[q];
            add_outer(hh, kp, n, dim);
            entered = 1;
        }
        if (quads)
            entered |= quads_entering(vv, i, p, dx, f, hh);
        if (entered && !newton(hh, f, dim, dx))
            return;
    }
    for (int tries = 0; tries <= SS_VBD_BACKTRACKS; tries++) {
        double p[3] = {0.0, 0.0, 0.0};
        for (int q = 0; q < dim; q++)
            p[q] = xi[q] + dx[q];
        if (vv->quads)
            hold_within(x0i, vv->g->bound[i], p);
        double trial = local_energy(vv, i, p);
        if (gas)
            trial += gas_energy(vv, i, p);
        if (vv->num_colliders || num_frozen)
            trial += contact_energy(vv, i, p, kc, frozen, num_frozen);
        if (pairs)
            trial += pairs_energy(vv, i, p);
        if (quads)
            trial += quads_energy(vv, i, p, quad_frozen, num_quad_frozen);
        if (trial <= energy + SS_VBD_ROUNDING * scale) {
            for (int q = 0; q < dim; q++)
                xi[q] = p[q];
            return;
        }
        for (int q = 0; q < dim; q++)
            dx[q] = 0.5 * dx[q];
    }
}

/* The colouring a substep sweeps in: the nodes colour by colour and where each starts. */
typedef struct {
    const int32_t *order;
    const size_t *start;
    size_t colours;
} vbd_colouring;

/* Nodes [first, last) of the colour order. */
static void solve_range(const vbd_view *vv, const int32_t *order, size_t first, size_t last) {
    for (size_t q = first; q < last; q++) {
        const size_t i = (size_t)order[q];
        if (!vv->pinned[i])
            solve_vertex(vv, i, NULL);
    }
}

/* Every gas body's volume at positions x, for the next colour. */
static void measure_gas(const ss_system *sys, const double *x, double *volumes) {
    for (size_t b = 0; b < sys->num_bodies; b++)
        volumes[b] = ss_pressure_volume(sys, &sys->bodies[b], x);
}

/* The passes; `volumes` (vv->volumes) measured again after each colour. */
static void passes(ss_system *sys, const vbd_view *vv, const vbd_colouring *g, double *volumes) {
    const int threads = ss_threads_for(sys);
    const int gas = sys->num_bodies > 0;
    if (threads <= 1) {
        for (int pass = 0; pass < sys->iterations; pass++)
            for (size_t c = 0; c < g->colours; c++) {
                solve_range(vv, g->order, g->start[c], g->start[c + 1]);
                if (gas)
                    measure_gas(sys, vv->x, volumes);
            }
        return;
    }
#ifdef _OPENMP
#pragma omp parallel num_threads(threads)
    {
        const ss_fpstate fp = ss_fp_enter(); /* the same rounding on every thread */
        const size_t t = (size_t)omp_get_thread_num(), team = (size_t)omp_get_num_threads();
        for (int pass = 0; pass < sys->iterations; pass++)
            for (size_t c = 0; c < g->colours; c++) {
                const size_t start = g->start[c], size = g->start[c + 1] - start;
                solve_range(vv, g->order, start + size * t / team, start + size * (t + 1) / team);
#pragma omp barrier
                if (gas) {
#pragma omp single
                    measure_gas(sys, vv->x, volumes);
                }
            }
        ss_fp_leave(fp);
    }
#else
    (void)volumes;
#endif
}

/* The restitution of collider col on a free node at x (which started the substep at
 * x0i, came with velocity `coming` and leaves with v), as XPBD's (collider_constraints.c):
 * in contact at x (normal n) and coming in faster than `threshold` m/s (u0 = coming.n <
 * -threshold), its normal velocity becomes e (-u0): v += du n, du = e (-u0) - v.n, if
 * du > 0 (else the solve already sends it out faster), and Coulomb's law on that impulse
 * drops |v_t| by mu du (to 0 at most). Backward Euler's stiff contact alone ends every
 * impact with no normal velocity: e = 0 needs nothing more. */
static void restitute(const ss_collider *col, int dim, const double *x0i, const double *x,
                      const double *coming, double *v, double threshold) {
    double depth = 0.0, surface[3] = {0.0, 0.0, 0.0}, n[3] = {0.0, 0.0, 0.0};
    if (!(col->restitution > 0.0) || !collider_depth(col, dim, x0i, x, &depth, surface, n))
        return;
    const double u0 = (coming[0] * n[0] + coming[1] * n[1]) + coming[2] * n[2];
    if (!(-u0 > threshold))
        return;
    double un = 0.0;
    for (int q = 0; q < dim; q++)
        un += v[q] * n[q];
    const double du = col->restitution * -u0 - un, mu = col->friction;
    if (!(du > 0.0))
        return; /* the solve already sends it out faster */
    for (int q = 0; q < dim; q++)
        v[q] = v[q] + du * n[q];
    if (!(mu > 0.0))
        return;
    double vt[3] = {0.0, 0.0, 0.0}, vn = 0.0, speed2 = 0.0;
    for (int q = 0; q < dim; q++)
        vn += v[q] * n[q];
    for (int q = 0; q < dim; q++) {
        vt[q] = v[q] - vn * n[q];
        speed2 += vt[q] * vt[q];
    }
    const double speed = sqrt(speed2), cap = mu * du;
    const double keep = speed > cap ? 1.0 - cap / speed : 0.0;
    for (int q = 0; q < dim; q++)
        v[q] = vn * n[q] + keep * vt[q];
}

/* The whole system's translation (step 3b of the header comment): when no node is pinned,
 * x += t with t = -sum m_i (x_i - y_i) / sum m_i, the exact minimiser of G(x + t) over t,
 * unless a collider touches some node at x or at x + t (then G is not the inertia's alone
 * along t). */
static void translate(const ss_system *sys, const double *x0, const double *y, double *x) {
    const size_t n = sys->num_nodes, dim = (size_t)sys->dim;
    const double *m = SS_DOUBLES(sys, SS_MASSES);
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    double mass = 0.0, t[3] = {0.0, 0.0, 0.0};
    for (size_t i = 0; i < n; i++) {
        if (pinned[i])
            return;
        mass += m[i];
        for (size_t q = 0; q < dim; q++)
            t[q] += m[i] * (x[i * dim + q] - y[i * dim + q]);
    }
    if (!(mass > 0.0))
        return;
    for (size_t q = 0; q < dim; q++)
        t[q] = -t[q] / mass;
    for (size_t i = 0; i < n; i++)
        for (size_t c = 0; c < sys->num_colliders; c++) {
            double depth = 0.0, surface[3] = {0.0, 0.0, 0.0}, normal[3] = {0.0, 0.0, 0.0};
            double moved[3] = {0.0, 0.0, 0.0};
            for (size_t q = 0; q < dim; q++)
                moved[q] = x[i * dim + q] + t[q];
            if (collider_depth(&sys->colliders[c], sys->dim, x0 + i * dim, x + i * dim, &depth,
                               surface, normal) ||
                collider_depth(&sys->colliders[c], sys->dim, x0 + i * dim, moved, &depth, surface,
                               normal))
                return;
        }
    for (size_t i = 0; i < n; i++)
        for (size_t q = 0; q < dim; q++)
            x[i * dim + q] = x[i * dim + q] + t[q];
}

/* Room for the contact scratch of g's N nodes (once per graph: N changes only with the
 * topology, which drops the graph) and 2 P pair ends; 0 when out of memory. */
static int fit_touch(ss_vbd_graph *g, size_t n, size_t ends) {
    if (!g->pair_start) {
        g->pair_start = ss_malloc((n + 1) * sizeof *g->pair_start);
        g->colour = ss_malloc((n + 1) * sizeof *g->colour);
        g->seen = ss_malloc((n + 2) * sizeof *g->seen);
        g->fill = ss_malloc((n + 1) * sizeof *g->fill);
        g->touch_order = ss_malloc((n + 1) * sizeof *g->touch_order);
        g->touch_start = ss_malloc((n + 1) * sizeof *g->touch_start);
        if (!g->pair_start || !g->colour || !g->seen || !g->fill || !g->touch_order ||
            !g->touch_start) {
            ss_free(g->colour), ss_free(g->seen), ss_free(g->fill);
            ss_free(g->touch_order), ss_free(g->touch_start), ss_free(g->pair_start);
            g->pair_start = NULL, g->colour = NULL, g->seen = NULL, g->fill = NULL;
            g->touch_order = NULL, g->touch_start = NULL;
            return 0;
        }
    }
    if (g->pair_room < ends) {
        const size_t room = ends > 2 * g->pair_room ? ends : 2 * g->pair_room;
        int32_t *fresh = ss_malloc(room * sizeof *fresh);
        double *rest = ss_malloc(room * sizeof *rest);
        if (!fresh || !rest) {
            ss_free(fresh);
            ss_free(rest);
            return 0;
        }
        ss_free(g->pair_other);
        ss_free(g->pair_rest);
        g->pair_other = fresh;
        g->pair_rest = rest;
        g->pair_room = room;
    }
    return 1;
}

/* The substep's contact pairs (the header comment): those within r_i + r_j + margin at
 * the inertial target y, the margin twice the farthest a node's target is from its start
 * (at most r_max, as XPBD's), sorted by (i, j); each node's, in pair order; the colouring
 * with them. 1: pairs (the colouring in g->touch_*), 0: none, -1: out of memory. */
static int find_pairs(const ss_system *sys, ss_vbd_graph *g, const double *x0, const double *y,
                      double h) {
    const size_t n = sys->num_nodes, dim = (size_t)sys->dim;
    const double *r = SS_DOUBLES(sys, SS_RADII);
    double moved2 = 0.0, r_max = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d2 = 0.0;
        for (size_t q = i * dim; q < (i + 1) * dim; q++)
            d2 += (y[q] - x0[q]) * (y[q] - x0[q]);
        moved2 = d2 > moved2 ? d2 : moved2;
        r_max = r[i] > r_max ? r[i] : r_max;
    }
    const double margin = 2.0 * sqrt(moved2);
    if (ss_contact_find_near(sys, y, margin < r_max ? margin : r_max, &g->near))
        return -1;
    const size_t count = g->near.num_pairs;
    const int32_t *pairs = g->near.pairs;
    if (!count)
        return 0;
    if (!fit_touch(g, n, 2 * count))
        return -1;
    memset(g->pair_start, 0, (n + 1) * sizeof *g->pair_start);
    for (size_t p = 0; p < 2 * count; p++)
        g->pair_start[pairs[p] + 1]++;
    for (size_t i = 0; i < n; i++)
        g->pair_start[i + 1] += g->pair_start[i];
    memcpy(g->fill, g->pair_start, (n + 1) * sizeof *g->fill);
    for (size_t p = 0; p < count; p++) {
        const int32_t i = pairs[2 * p], j = pairs[2 * p + 1];
        double d2 = 0.0;
        for (size_t q = 0; q < dim; q++) {
            const double d = x0[(size_t)j * dim + q] - x0[(size_t)i * dim + q];
            d2 += d * d;
        }
        const double rest = ((r[i] + r[j]) - sqrt(d2)) - SS_VBD_PUSH_OUT * h;
        g->pair_rest[g->fill[i]] = rest > 0.0 ? rest : 0.0;
        g->pair_other[g->fill[i]++] = j;
        g->pair_rest[g->fill[j]] = rest > 0.0 ? rest : 0.0;
        g->pair_other[g->fill[j]++] = i;
    }
    return 1;
}

/* What find_quads hands the contact searches to fill g's list with. */
typedef struct {
    const ss_system *sys;
    ss_vbd_graph *g;
    const double *x0, *y, *mid;
    double h, inv_h2, k_s, user_k, mu;
    int segments;
} quad_finding;

/* Room for `count` 4-node contacts in g; 0 when out of memory. */
static int fit_quads(ss_vbd_graph *g, size_t count) {
    if (count <= g->quad_room)
        return 1;
    const size_t room = count > 2 * g->quad_room ? count : 2 * g->quad_room;
    vbd_quad *fresh = ss_malloc(room * sizeof *fresh);
    int32_t *ref = ss_malloc(4 * room * sizeof *ref);
    if (!fresh || !ref) {
        ss_free(fresh);
        ss_free(ref);
        return 0;
    }
    if (g->num_quads)
        memcpy(fresh, g->quads, g->num_quads * sizeof *fresh);
    ss_free(g->quads);
    ss_free(g->quad_ref);
    g->quads = fresh;
    g->quad_ref = ref;
    g->quad_room = room;
    return 1;
}

/* ss_quad_visit for find_quads: a contact with some free node joins g's list, with its
 * stiffness (the header comment) k = kappa m_eff / h^2 + k_s for self-collision
 * (k_s its stiffness), the user's contact_stiffness or kappa m_eff / h^2 for segments,
 * 1 / m_eff = W_max the largest sum_k w_k^2 / m_k of its closest points over their
 * parameters (w_a + max(w_b, w_c, w_d) node-triangle, max(w_a, w_b) + max(w_c, w_d) two
 * segments; 1/m, 0 pinned): a constant of the contact, so that its energy is 1/2 k
 * (T - d)^2 with k fixed, as segment contact's. Nonzero when out of memory. */
static int quad_add(void *context, int kind, const int32_t node[4], double thickness) {
    quad_finding *qf = context;
    const double *m = SS_DOUBLES(qf->sys, SS_MASSES);
    const uint8_t *pinned = SS_BYTES(qf->sys, SS_PINNED);
    double inv[4];
    for (int k = 0; k < 4; k++)
        inv[k] = pinned[node[k]] ? 0.0 : 1.0 / m[node[k]];
    const double w_max = kind == SS_QUAD_NODE_TRIANGLE
                             ? inv[0] + fmax(inv[1], fmax(inv[2], inv[3]))
                             : fmax(inv[0], inv[1]) + fmax(inv[2], inv[3]);
    if (!(w_max > 0.0))
        return 0;
    const double inertia = (1.0 / w_max) * qf->inv_h2;
    /* R: the farthest a node's move to the target is from node a's, so that the closest
     * points' distance changes by at most R from the midpoints along the moves (the
     * weights sum to 0 and their sizes to 2); kept when within T + 2 R there. */
    const double *pts[4], *mids[4];
    double far2 = 0.0;
    for (int k = 0; k < 4; k++) {
        const size_t at = 3 * (size_t)node[k], a = 3 * (size_t)node[0];
        pts[k] = qf->x0 + at;
        mids[k] = qf->mid + at;
        double d2 = 0.0;
        for (int q = 0; q < 3; q++) {
            const double e = (qf->y[at + q] - qf->x0[at + q]) - (qf->y[a + q] - qf->x0[a + q]);
            d2 += e * e;
        }
        far2 = d2 > far2 ? d2 : far2;
    }
    double w[4], n[3], depth = 0.0;
    if (!ss_self_contact_at(kind, mids, thickness + 2.0 * sqrt(far2), w, n, &depth))
        return 0;
    /* Deeper than SS_VBD_PUSH_OUT h at the start (placed so): the thickness it pushes
     * to in the substep is less by the rest, as a pair's delta_rest. */
    const double rest = ss_self_contact_at(kind, pts, thickness, w, n, &depth)
                            ? depth - SS_VBD_PUSH_OUT * qf->h
                            : 0.0;
    /* Each node moves at most SS_VBD_CONTACT_BOUND of the contact's distance at the
     * start in the substep (vbd.c, "crossings"). */
    const double gap = ss_self_contact_gap(kind, pts);
    ss_vbd_graph *g = qf->g;
    for (int k = 0; k < 4; k++) { /* (a pinned node moves with its velocity) */
        double *b = &g->bound[node[k]];
        const double mine = SS_VBD_CONTACT_BOUND * gap;
        *b = gap > 0.0 && mine < *b && !pinned[node[k]] ? mine : *b;
    }
    if (!fit_quads(g, g->num_quads + 1))
        return 1;
    vbd_quad *q = &g->quads[g->num_quads++];
    memcpy(q->node, node, sizeof q->node);
    q->kind = kind;
    q->thickness = rest > 0.0 ? thickness - rest : thickness;
    q->k = qf->segments ? (qf->user_k > 0.0 ? qf->user_k : SS_VBD_CONTACT_KAPPA * inertia)
                        : SS_VBD_CONTACT_KAPPA * inertia + qf->k_s;
    q->mu = qf->mu;
    return 0;
}

/* The substep's 4-node contacts (the header comment): self-collision's candidates and
 * segment contact's pairs within their thickness + margin at the midpoints (x0 + y) / 2
 * of the nodes' moves to the inertial target, the margin twice the farthest move |y -
 * x0| (a contact met anywhere on the straight moves from x0 to y is within its thickness
 * + the farthest move there: found however fast the nodes go), in their lists' order,
 * self-collision's first; each node's (contact, slot) in contact order. 1: some, 0:
 * none, -1: out of memory. */
static int find_quads(const ss_system *sys, ss_vbd_graph *g, const double *x0, const double *y,
                      double h) {
    g->num_quads = 0;
    const int self = ss_self_collision_active(sys);
    const int segments = sys->contact->segments && sys->dim == 3 && !ss_array_absent(sys, SS_RADII);
    if (!self && !segments)
        return 0;
    const size_t n = sys->num_nodes;
    /* The box of the moves y - x0: any two nodes' moves differ by at most its diagonal,
     * 2 `spread`, so a contact kept (within T + 2 R, R <= 2 spread) is within T + 4
     * spread at the midpoints: the searches' margin (a common move changes no distance). */
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t q = 0; q < 3 * n; q++) {
        const double d = y[q] - x0[q];
        lo[q % 3] = d < lo[q % 3] ? d : lo[q % 3];
        hi[q % 3] = d > hi[q % 3] ? d : hi[q % 3];
    }
    double spread2 = 0.0;
    for (int q = 0; q < 3; q++)
        spread2 += 0.25 * (hi[q] - lo[q]) * (hi[q] - lo[q]);
    const double margin = 4.0 * (1.0 + 1e-9) * sqrt(spread2);
    if (g->mid_room < 3 * n + 1) {
        double *fresh = ss_malloc((3 * n + 1) * sizeof *fresh);
        double *bound = ss_malloc((n + 1) * sizeof *bound);
        if (!fresh || !bound) {
            ss_free(fresh);
            ss_free(bound);
            return -1;
        }
        ss_free(g->mid);
        ss_free(g->bound);
        g->mid = fresh;
        g->bound = bound;
        g->mid_room = 3 * n + 1;
    }
    double *mid = g->mid;
    for (size_t q = 0; q < 3 * n; q++)
        mid[q] = 0.5 * (x0[q] + y[q]);
    for (size_t i = 0; i < n; i++)
        g->bound[i] = INFINITY;
    quad_finding qf = {sys, g, x0, y, mid, h, 1.0 / (h * h), 0.0, 0.0, 0.0, 0};
    if (self) {
        double setting[4];
        ss_self_collision_get(sys, setting);
        qf.k_s = setting[1];
        qf.mu = setting[2];
        if (ss_self_collision_near(sys, x0, mid, margin, quad_add, &qf))
            return -1;
    }
    if (segments) {
        qf.segments = 1;
        qf.mu = sys->contact->friction;
        qf.user_k = sys->contact->stiffness == SS_CONTACT_FROM_STEP ? 0.0 : sys->contact->stiffness;
        if (ss_segments_near(sys, &g->near, mid, margin, quad_add, &qf))
            return -1;
    }
    if (!g->num_quads)
        return 0;
    if (!g->quad_start) {
        g->quad_start = ss_malloc((n + 1) * sizeof *g->quad_start);
        g->link_start = ss_malloc((n + 1) * sizeof *g->link_start);
        if (!g->quad_start || !g->link_start) {
            ss_free(g->quad_start), ss_free(g->link_start);
            g->quad_start = NULL, g->link_start = NULL;
            return -1;
        }
    }
    size_t *start = g->quad_start;
    memset(start, 0, (n + 1) * sizeof *start);
    for (size_t c = 0; c < g->num_quads; c++)
        for (int k = 0; k < 4; k++)
            start[g->quads[c].node[k] + 1]++;
    for (size_t i = 0; i < n; i++)
        start[i + 1] += start[i];
    size_t *fill = g->link_start; /* scratch here */
    memcpy(fill, start, (n + 1) * sizeof *fill);
    for (size_t c = 0; c < g->num_quads; c++)
        for (int k = 0; k < 4; k++)
            g->quad_ref[fill[g->quads[c].node[k]]++] = (int32_t)(4 * c + (size_t)k);
    return 1;
}

/* The colouring of a substep with contacts (the header comment): greedy over springs,
 * gas elements and the links, each node's contact pairs' others (with `pairs`) and its
 * 4-node contacts' other free nodes (with `quads`); in g->touch_*. 0 when out of
 * memory. */
static int colour_touching(const ss_system *sys, ss_vbd_graph *g, int pairs, int quads) {
    const size_t n = sys->num_nodes;
    if (!fit_touch(g, n, 0))
        return 0;
    const size_t *link_start = g->pair_start;
    const int32_t *link_other = g->pair_other;
    if (quads) {
        const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
        size_t *start = g->link_start;
        start[0] = 0;
        for (size_t i = 0; i < n; i++)
            start[i + 1] = start[i] + (pairs ? g->pair_start[i + 1] - g->pair_start[i] : 0) +
                           3 * (g->quad_start[i + 1] - g->quad_start[i]);
        if (g->link_room < start[n] + 1) {
            int32_t *fresh = ss_malloc((start[n] + 1) * sizeof *fresh);
            if (!fresh)
                return 0;
            ss_free(g->link_other);
            g->link_other = fresh;
            g->link_room = start[n] + 1;
        }
        for (size_t i = 0; i < n; i++) {
            size_t at = start[i];
            for (size_t e = pairs ? g->pair_start[i] : 0; pairs && e < g->pair_start[i + 1]; e++)
                g->link_other[at++] = g->pair_other[e];
            for (size_t r = g->quad_start[i]; r < g->quad_start[i + 1] && !pinned[i]; r++) {
                const vbd_quad *q = &g->quads[g->quad_ref[r] / 4];
                for (int k = 0; k < 4; k++)
                    if (k != g->quad_ref[r] % 4 && !pinned[q->node[k]])
                        g->link_other[at++] = q->node[k];
            }
            for (; at < start[i + 1]; at++)
                g->link_other[at] = (int32_t)i; /* itself: no constraint */
        }
        link_start = start;
        link_other = g->link_other;
    }
    g->touch_colours = colour_greedy(sys, g, link_start, link_other, g->colour, g->seen);
    order_by_colour(g->colour, n, g->touch_colours, g->touch_start, g->touch_order, g->fill);
    return 1;
}

/* Pair p's nodes i, j, their inverse masses (0 pinned) and the unit normal from i to j
 * at x, when some node of it is free and it touches there (1), else 0. */
static int pair_touching(const ss_system *sys, const ss_vbd_graph *g, size_t p, const double *x,
                         size_t *i_out, size_t *j_out, double *wi, double *wj, double *n) {
    const size_t dim = (size_t)sys->dim;
    const double *r = SS_DOUBLES(sys, SS_RADII), *m = SS_DOUBLES(sys, SS_MASSES);
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    const size_t i = (size_t)g->near.pairs[2 * p], j = (size_t)g->near.pairs[2 * p + 1];
    *i_out = i;
    *j_out = j;
    *wi = pinned[i] ? 0.0 : 1.0 / m[i];
    *wj = pinned[j] ? 0.0 : 1.0 / m[j];
    if (*wi + *wj == 0.0)
        return 0;
    double d2 = 0.0;
    for (size_t q = 0; q < dim; q++) {
        n[q] = x[j * dim + q] - x[i * dim + q];
        d2 += n[q] * n[q];
    }
    if (!(d2 >= SS_MIN_SPRING_LENGTH2))
        return 0;
    const double dist = sqrt(d2);
    if (!((r[i] + r[j]) - dist > 0.0))
        return 0;
    for (size_t q = 0; q < dim; q++)
        n[q] = n[q] / dist;
    return 1;
}

/* The first guess apart, equal and opposite (Gauss-Seidel's passes would otherwise give
 * the whole push to the node solved first, and momentum with it): each pair (in pair
 * order, one after another) overlapping at x by delta, normal n at x, is moved apart by
 * s k / (k + m_eff / h^2) along n, x_i -= w_i / (w_i + w_j) s n, x_j += w_j / (w_i + w_j)
 * s n (w = 1/m, 0 pinned; k the pair's stiffness; the factor makes it the backward-Euler
 * step of the pair alone), s = delta when it separates faster than `threshold` m/s at
 * the start, (v0_j - v0_i).n > threshold (the overlap left after a bounce), else the
 * overlap gained in the substep, delta - max(delta0, 0) (an impact; a resting pair,
 * delta = delta0, keeps its overlap). Only where the passes start: the target y and the
 * energy they minimise stay. */
static void guess_apart(const ss_system *sys, const ss_vbd_graph *g, const double *x0,
                        const double *v0, double threshold, double h, double *x) {
    const size_t dim = (size_t)sys->dim;
    const double *r = SS_DOUBLES(sys, SS_RADII);
    for (size_t p = 0; p < g->near.num_pairs; p++) {
        size_t i, j;
        double wi, wj, n[3] = {0.0, 0.0, 0.0};
        if (!pair_touching(sys, g, p, x, &i, &j, &wi, &wj, n))
            continue;
        const double wsum = wi + wj;
        double d2 = 0.0, e2 = 0.0, un = 0.0;
        for (size_t q = 0; q < dim; q++) {
            d2 += (x[j * dim + q] - x[i * dim + q]) * (x[j * dim + q] - x[i * dim + q]);
            e2 += (x0[j * dim + q] - x0[i * dim + q]) * (x0[j * dim + q] - x0[i * dim + q]);
            un += (v0[j * dim + q] - v0[i * dim + q]) * n[q];
        }
        const double delta = (r[i] + r[j]) - sqrt(d2), before = (r[i] + r[j]) - sqrt(e2);
        const double gained = un > threshold || !(before > 0.0) ? delta : delta - before;
        if (!(gained > 0.0))
            continue;
        const double inertia = 1.0 / (wsum * (h * h)); /* m_eff / h^2 */
        const double user = sys->contact->stiffness;
        const double k = user != SS_CONTACT_FROM_STEP ? user : SS_VBD_CONTACT_KAPPA * inertia;
        const double apart = gained * (k / (k + inertia));
        for (size_t q = 0; q < dim; q++) {
            x[i * dim + q] = x[i * dim + q] - (wi / wsum) * (apart * n[q]);
            x[j * dim + q] = x[j * dim + q] + (wj / wsum) * (apart * n[q]);
        }
    }
}

/* The first guess apart for the 4-node contacts, as guess_apart for the pairs: each
 * contact (in order, one after another) touching at x, weights w, normal n, depth d,
 * W = sum_k w_k^2 / m_k (0 pinned), that came in since x0 (s = d - max(d0, 0), d0 its
 * depth at x0) or separates faster than `threshold` (u = sum_k w_k v0_k . n > threshold:
 * s = d), is moved apart by s k / (k + 1 / (W h^2)) along n (the contact-alone
 * backward-Euler step), x_k += (w_k / m_k) / W of it: sum_k w_k dx_k = that times n, and
 * sum_k m_k dx_k = 0 (the weights sum to zero), so momentum is kept. */
static void guess_quads_apart(const ss_system *sys, const ss_vbd_graph *g, const double *x0,
                              const double *v0, double threshold, double h, double *x) {
    const double *m = SS_DOUBLES(sys, SS_MASSES);
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    for (size_t c = 0; c < g->num_quads; c++) {
        const vbd_quad *q = &g->quads[c];
        const double *now[4], *then[4];
        double inv[4];
        for (int k = 0; k < 4; k++) {
            now[k] = x + 3 * (size_t)q->node[k];
            then[k] = x0 + 3 * (size_t)q->node[k];
            inv[k] = pinned[q->node[k]] ? 0.0 : 1.0 / m[q->node[k]];
        }
        double w[4], n[3], depth, w0[4], n0[3], before = 0.0;
        if (!ss_self_contact_at(q->kind, now, q->thickness, w, n, &depth))
            continue;
        if (!ss_self_contact_at(q->kind, then, q->thickness, w0, n0, &before))
            before = 0.0;
        const double W = (w[0] * w[0] * inv[0] + w[1] * w[1] * inv[1]) +
                         (w[2] * w[2] * inv[2] + w[3] * w[3] * inv[3]);
        if (!(W > 0.0))
            continue;
        double un = 0.0;
        for (int k = 0; k < 4; k++) {
            const double *vk = v0 + 3 * (size_t)q->node[k];
            un += w[k] * ((vk[0] * n[0] + vk[1] * n[1]) + vk[2] * n[2]);
        }
        const double gained = un > threshold || !(before > 0.0) ? depth : depth - before;
        if (!(gained > 0.0))
            continue;
        const double inertia = 1.0 / (W * (h * h));
        const double apart = gained * (q->k / (q->k + inertia));
        for (int k = 0; k < 4; k++) {
            double *xk = x + 3 * (size_t)q->node[k];
            const double share = (w[k] * inv[k]) / W;
            for (int d = 0; d < 3; d++)
                xk[d] = xk[d] + share * (apart * n[d]);
        }
    }
}

/* The contact pairs' restitution, pair by pair in their order, after v = (x - x0) / h (as
 * XPBD's, contact.c): a pair touching at x (normal n from i to j) that came in faster
 * than `threshold` m/s (u0 = (coming_j - coming_i).n < -threshold) leaves at e (-u0): du =
 * e (-u0) - (v_j - v_i).n, if du > 0, by equal and opposite impulses, v_i -= w_i / (w_i +
 * w_j) du n, v_j += w_j / (w_i + w_j) du n (w = 1/m, 0 pinned). */
static void restitute_pairs(const ss_system *sys, const ss_vbd_graph *g, const double *x,
                            const double *coming, double *v, double threshold) {
    const double e = sys->contact->restitution;
    const size_t dim = (size_t)sys->dim;
    for (size_t p = 0; p < g->near.num_pairs; p++) {
        size_t i, j;
        double wi, wj, n[3] = {0.0, 0.0, 0.0};
        if (!pair_touching(sys, g, p, x, &i, &j, &wi, &wj, n))
            continue;
        const double wsum = wi + wj;
        double u0 = 0.0, un = 0.0;
        for (size_t q = 0; q < dim; q++) {
            u0 += (coming[j * dim + q] - coming[i * dim + q]) * n[q];
            un += (v[j * dim + q] - v[i * dim + q]) * n[q];
        }
        if (!(-u0 > threshold))
            continue;
        const double du = e * -u0 - un;
        if (!(du > 0.0))
            continue;
        for (size_t q = 0; q < dim; q++) {
            v[i * dim + q] = v[i * dim + q] - (wi / wsum) * (du * n[q]);
            v[j * dim + q] = v[j * dim + q] + (wj / wsum) * (du * n[q]);
        }
    }
}

void ss_vbd_step(ss_system *sys, double dt, double *scratch) {
    double *x = SS_DOUBLES(sys, SS_POSITIONS), *v = SS_DOUBLES(sys, SS_VELOCITIES);
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    const size_t n = sys->num_nodes, dim = (size_t)sys->dim, nd = n * dim;
    double *x0 = scratch, *y = x0 + nd, *a = y + nd;

    /* 1-2. The explicit forces (less the gas, which is in the blocks), the target and the
     * first guess. */
    double *gas = sys->num_bodies ? a + nd : NULL, *volumes = gas ? gas + nd : NULL;
    ss_forces_external(sys, x, v, a);
    if (sys->num_bodies) {
        const double *m = SS_DOUBLES(sys, SS_MASSES);
        memset(gas, 0, nd * sizeof(double));
        ss_pressure_add_forces(sys, x, gas, dim);
        for (size_t i = 0; i < n; i++)
            if (!pinned[i])
                for (size_t q = i * dim; q < (i + 1) * dim; q++)
                    a[q] -= gas[q] / m[i];
    }
    memcpy(x0, x, nd * sizeof(double));
    for (size_t i = 0; i < n; i++)
        for (size_t q = i * dim; q < (i + 1) * dim; q++) {
            y[q] = pinned[i] ? x0[q] + dt * v[q] : x0[q] + dt * (v[q] + dt * a[q]);
            x[q] = x0[q] + dt * v[q];
        }

    /* The contact pairs and the colouring with them. A pair struck when it came in faster
     * than `threshold` (m/s); slower, it rests (e = 0, no jitter), as XPBD's. */
    const double g = sqrt((sys->gravity[0] * sys->gravity[0] + sys->gravity[1] * sys->gravity[1]) +
                          sys->gravity[2] * sys->gravity[2]);
    const double threshold = 2.0 * g * dt;

    ss_vbd_graph *graph = sys->scratch.vbd;
    vbd_colouring colouring = {graph->order, graph->colour_start, graph->num_colours};
    int touching = 0;
    const int contact = !ss_array_absent(sys, SS_RADII);
    if (contact)
        touching = find_pairs(sys, graph, x0, y, dt);
    const int quads = touching < 0 ? 0 : find_quads(sys, graph, x0, y, dt);
    if (touching < 0 || quads < 0 ||
        ((touching || quads) && !colour_touching(sys, graph, touching, quads))) {
        for (size_t q = 0; q < nd; q++)
            x[q] = v[q] = NAN; /* out of memory mid-step: the step rolls back */
        return;
    }
    if (touching || quads)
        colouring = (vbd_colouring){graph->touch_order, graph->touch_start, graph->touch_colours};
    if (touching)
        guess_apart(sys, graph, x0, v, threshold, dt, x);
    if (quads) {
        guess_quads_apart(sys, graph, x0, v, threshold, dt, x);
        for (size_t i = 0; i < n; i++)
            hold_within(x0 + 3 * i, graph->bound[i], x + 3 * i);
    }

    /* 3. The passes. */
    const vbd_view vv = {sys->scratch.vbd,
                         SS_DOUBLES(sys, SS_REST_LENGTHS),
                         SS_DOUBLES(sys, SS_STIFFNESS),
                         SS_DOUBLES(sys, SS_DAMPING),
                         SS_DOUBLES(sys, SS_MASSES),
                         x0,
                         y,
                         x,
                         pinned,
                         dt,
                         1.0 / dt,
                         1.0 / (dt * dt),
                         sys->dim,
                         sys->colliders,
                         sys->num_colliders,
                         sys->bodies,
                         volumes,
                         touching ? SS_DOUBLES(sys, SS_RADII) : NULL,
                         sys->contact->stiffness == SS_CONTACT_FROM_STEP ? 0.0
                                                                         : sys->contact->stiffness,
                         sys->contact->friction,
                         quads};
    if (sys->num_bodies)
        measure_gas(sys, x, volumes);
    passes(sys, &vv, &colouring, volumes);
    translate(sys, x0, y, x);

    /* 4. The velocities from the motion, and the colliders' and pairs' restitution. */
    for (size_t i = 0; i < n; i++) {
        double *coming = a + i * dim; /* the velocity it came with, v0 + h a (a no longer) */
        for (size_t q = 0; q < dim; q++) {
            coming[q] = pinned[i] ? v[i * dim + q] : v[i * dim + q] + dt * a[i * dim + q];
            if (!pinned[i])
                v[i * dim + q] = (x[i * dim + q] - x0[i * dim + q]) / dt;
        }
    }
    for (size_t i = 0; i < n; i++)
        for (size_t c = 0; c < sys->num_colliders && !pinned[i]; c++)
            restitute(&sys->colliders[c], sys->dim, x0 + i * dim, x + i * dim, a + i * dim,
                      v + i * dim, threshold);
    if (touching)
        restitute_pairs(sys, graph, x, a, v, threshold);
}

double ss_vbd_external_work(const ss_system *sys, const double *scratch) {
    const double *x = SS_DOUBLES(sys, SS_POSITIONS), *x0 = scratch;
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    const double *f = ss_array_absent(sys, SS_EXTERNAL) ? NULL : SS_DOUBLES(sys, SS_EXTERNAL);
    const size_t n = sys->num_nodes, dim = (size_t)sys->dim;
    double work = 0.0;
    for (size_t i = 0; i < n; i++)
        if (!pinned[i])
            for (size_t q = 0; q < dim; q++) {
                const double push = (f ? f[i * dim + q] : 0.0) + sys->drag * sys->wind[q];
                work += push * (x[i * dim + q] - x0[i * dim + q]);
            }
    return work;
}
