/* collide.h - part of the kernel API: the colliders (collide.c).
 * Included by springsim.h only, at its place there (it uses what comes before it). */
#ifndef SPRINGSIM_COLLIDE_H
#define SPRINGSIM_COLLIDE_H

/* ---- Colliders (collide.c) -------------------------------------------- */

ss_status ss_system_add_collider(ss_system *sys, ss_collider c, long *id);
/* Replace the collider with c.id by c (same kind), after checking c. */
ss_status ss_system_set_collider(ss_system *sys, ss_collider c);
ss_status ss_system_remove_collider(ss_system *sys, long id);
ss_collider *ss_system_find_collider(ss_system *sys, long id);
/* Before a step call: build what ss_collide needs (nothing without colliders). */
ss_status ss_collide_prepare(ss_system *sys);
/* At the start of every substep: note where the nodes are (for sticking friction). */
void ss_collide_begin_substep(ss_system *sys);
/* After a substep's integration: put free nodes found inside a collider back on its
 * surface and apply restitution and Coulomb friction; adds what the contacts take to
 * sys->dissipated when track_energy (see collide.c for how it is counted), `damped` J
 * being what damping and drag were counted to dissipate in this substep. */
void ss_collide(ss_system *sys, double damped);
/* Free what ss_collide_prepare built (on topology edits and when the system goes). */
void ss_collide_forget(ss_system *sys);
/* Bytes held by sys->contact. */
size_t ss_collide_nbytes(const ss_system *sys);

#endif
