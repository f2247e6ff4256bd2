/* self_collision.h - part of the kernel API: surfaces that do not pass through
 * themselves (self_collision.c). Included by springsim.h only, at its place there. */
#ifndef SPRINGSIM_SELF_CONTACT_H
#define SPRINGSIM_SELF_CONTACT_H

/* ---- Self-collision of surfaces (self_collision.c) ----------------------- */

/* Turn node-triangle repulsion on (thickness > 0, m; stiffness > 0, N/m; friction >= 0,
 * Coulomb) for the system's faces, with edge-edge contact too when `edges` is nonzero
 * (edge_contact.c), or off (thickness == 0: the others are ignored).
 * SS_ERR_VALUE, changing nothing, unless the system is 3D with faces, the values are
 * finite and in range, and thickness < half the shortest face edge now. */
ss_status ss_self_collision_set(ss_system *sys, double thickness, double stiffness, double friction,
                                int edges);
/* Nonzero when on; then out = {thickness, stiffness, friction, edges (0 or 1)}. */
int ss_self_collision_get(const ss_system *sys, double out[4]);
/* The crossings counted since it was turned on are state: sys->state.crossings, which
 * every step call's end brings up to date. A rollback forgets the ones counted since. */
void ss_self_collision_forget_pending(ss_system *sys);
/* Nonzero when on and the system has faces: the force evaluation calls add_forces. */
int ss_self_collision_active(const ss_system *sys);
/* f (rows `stride` doubles apart) += the contact forces at state (x, v), in the
 * candidate list's order. Out of memory for the list: NaN forces (the step
 * then rolls back). */
void ss_self_collision_add_forces(const ss_system *sys, const double *x, const double *v, double *f,
                                  size_t stride);
/* The force evaluation's steps, which let threads share the candidates: make the list
 * valid for x and the scratch its size (one thread; reads x only); then the forces of
 * candidates [first, last) into the scratch (any thread, disjoint ranges); then, on one
 * thread, f += them in list order (NaN rows if out of memory). add_forces is the three
 * on one thread; the bits do not depend on how the candidates were shared. */
void ss_self_collision_search(const ss_system *sys, const double *x);
void ss_self_collision_pair_forces(const ss_system *sys, const double *x, const double *v,
                                   size_t first, size_t last);
void ss_self_collision_gather_forces(const ss_system *sys, double *f, size_t stride);
/* Candidates of the last search (0 after a failed one). */
size_t ss_self_collision_num_pairs(const ss_system *sys);
/* sum 1/2 k (h - d)^2 over touching node-triangle pairs at the current positions, J.
 * in_step: the list is made valid for them (rebuilt if need be), as a force evaluation
 * does. Otherwise (a query) the step's list is only read, when valid as it is, and else
 * a list of the query's own is built and freed: the same pairs in the same order, so the
 * same bits, and the step's memory is never freed, grown or written. */
double ss_self_collision_energy(const ss_system *sys, int in_step);
/* Power the friction takes out of the motion at the current state, W (>= 0); the
 * step's (its list is refreshed). */
double ss_self_collision_power(const ss_system *sys);
/* At the end of a successful step call: count the nodes that went through a triangle
 * they were near since the last check (see self_collision.c). */
void ss_self_collision_end_step(ss_system *sys);
/* Deep-copy the setting (not the candidate list) into dst, whose pointer is src's. */
ss_status ss_self_collision_copy(ss_system *dst, const ss_system *src);
void ss_self_collision_free(ss_system *sys);
/* Bytes held, candidates and grid included. */
size_t ss_self_collision_nbytes(const ss_system *sys);

/* ---- Self-collision as constraints (XPBD; self_collision.c) ------------------- */

/* Make the candidate list valid for the predicted positions x (N, 3) and start the
 * constraints of a substep (lambda = lambda_t = 0); -1 when out of memory. */
int ss_self_collision_constraints_begin(const ss_system *sys, const double *x);
/* One pass over the candidates in list order: the thickness as a hard layer, with
 * friction, on records of `stride` doubles, (x, y, z, w, s_x, s_y, s_z, ...) per node. */
void ss_self_collision_constraints_solve(const ss_system *sys, double *records, size_t stride);
/* How many candidates pushed in the last solve. */
size_t ss_self_collision_constraints_pushed(const ss_system *sys);

/* ---- Self-collision as contact energy (VBD; self_collision.c) --------------------- */

/* 4-node contacts (SS_QUAD_NODE_TRIANGLE, SS_QUAD_EDGES, ss_quad_visit): contact.h. */
/* The contact at points pts (as its nodes): 0 when they are `thickness` or more apart;
 * else 1, with the signed weights w (p - q = sum w_k pts_k, p, q the closest points), the
 * unit normal n = (p - q) / |p - q| and the depth thickness - |p - q|. */
int ss_self_contact_at(int kind, const double *const pts[4], double thickness, double w[4],
                       double n[3], double *depth);
/* The distance of the closest points of a 4-node contact at points pts, m. */
double ss_self_contact_gap(int kind, const double *const pts[4]);
/* The list made to hold every pair within thickness + extra (m; the list's margin made
 * twice extra, at least the thickness, when less than extra or more than four times that)
 * at x, its crossings counted at `now` before a rebuild; then visit each
 * node-triangle candidate, then each edge pair, in list order, within thickness + extra at
 * x. -1 when out of memory or when visit says stop. */
int ss_self_collision_near(const ss_system *sys, const double *now, const double *x, double extra,
                           ss_quad_visit visit, void *context);

#endif
