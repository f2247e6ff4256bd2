/* drives.h - part of the kernel API: drives, nodes that follow a prescribed path
 * (drives.c). Included by springsim.h only, at its place there (it uses what comes
 * before it). */
#ifndef SPRINGSIM_DRIVES_H
#define SPRINGSIM_DRIVES_H

/* ---- Drives (drives.c) ------------------------------------------------- */

/* A drive moves its nodes along a path: before every substep of dt that ends at time
 * t + dt, each node's velocity becomes (target - x) / dt, so that the forces and the
 * energies see the velocity it really moves at, and after the substep its position is
 * the target exactly. The target of a drive's node k:
 *   - SS_DRIVE_LINE:    start_k + velocity_k (t + dt - t0)  (what pin(velocity=v) makes);
 *   - SS_DRIVE_TARGETS: targets[min(counter, steps - 1)][k], per-substep targets that
 *                       are held at the last;
 *   - SS_DRIVE_HOOK:    row rows[k] of what the system's drive_hook fills for the drive
 *                       (the caller's function of time, see ss_drive_hook).
 * Every drive counts the substeps it ran (counter). A node belongs to one drive at
 * most: adding a drive takes its nodes from the drives that had them, and a drive left
 * with no node goes away. Driven nodes are pinned; a step call holds the other pinned
 * nodes (v = 0) as always. Every step that fails restores the drives' counters with the
 * rest of the state. */
typedef enum { SS_DRIVE_LINE = 0, SS_DRIVE_TARGETS = 1, SS_DRIVE_HOOK = 2 } ss_drive_kind;

/* One drive, as it is added or read back. */
typedef struct {
    int kind;             /* ss_drive_kind */
    size_t count;         /* driven nodes k >= 1 */
    const int64_t *nodes; /* (k,) node indices */
    /* LINE: (2 k, dim) the k start positions (m) and then the k velocities (m/s);
     * TARGETS: (steps, k, dim) targets, m; HOOK: NULL. Finite. */
    const double *values;
    size_t steps;        /* TARGETS: rows of targets, >= 1; else 0 */
    double t0;           /* LINE: when the nodes were at start, s (finite); else 0 */
    size_t width;        /* HOOK: rows of the hook's targets, >= 1; else k */
    const int64_t *rows; /* HOOK: (k,) each node's row in [0, width), or NULL when k ==
                            width (node k takes row k); NULL otherwise */
    size_t counter;      /* substeps run (a saved drive's progress) */
} ss_drive_spec;

/* Add a drive; its nodes leave the drives that had them, and are pinned. *id receives
 * its id, unique within the system and never reused (a copy keeps them). Checks every
 * value first: SS_ERR_INDEX, SS_ERR_VALUE or SS_ERR_NOMEM change nothing. */
ss_status ss_drives_add(ss_system *sys, const ss_drive_spec *spec, long *id);
/* Stop driving these nodes (duplicates allowed; nodes no drive has are ignored): they
 * leave their drives, and a drive left with no node goes away. SS_ERR_INDEX or
 * SS_ERR_NOMEM change nothing. */
ss_status ss_drives_release(ss_system *sys, size_t count, const int64_t *nodes);
/* Remove every drive. */
void ss_drives_clear(ss_system *sys);
/* How many drives the system has, and how many of them are hooks. */
size_t ss_drives_count(const ss_system *sys);
size_t ss_drives_hooks(const ss_system *sys);
/* Drive `which` (< ss_drives_count, in the order they were added) into *out, whose
 * pointers show the kernel's own memory until the next change of the drives or the
 * topology (HOOK: rows is never NULL); returns its id. */
long ss_drives_get(const ss_system *sys, size_t which, ss_drive_spec *out);
/* After nodes were removed (old_to_new: each old node's new index, -1 if removed): the
 * drives follow their nodes' new numbers; removed nodes leave their drives (a TARGETS
 * drive keeps the columns of the others, a HOOK drive the rows they take), and a drive
 * left with no node goes away. Never fails. */
void ss_drives_renumber(ss_system *sys, const int64_t *old_to_new);
/* Give dst (a copy of src being made, whose drives are NULL) drives of its own, with
 * their own counters. SS_ERR_NOMEM possible. */
ss_status ss_drives_copy(ss_system *dst, const ss_system *src);
void ss_drives_free(ss_system *sys);
size_t ss_drives_nbytes(const ss_system *sys);

/* The step (integrate.c). At the start of a call, after the pins are held: save what a
 * rollback restores (the driven nodes' velocities, the counters) and give the driven
 * nodes the first substep's velocities; on failure it has restored them itself. */
ss_status ss_drives_begin(ss_system *sys, double dt);
/* Before each later substep: the driven nodes' velocities for the substep ending at
 * time + dt. SS_ERR_VALUE (a velocity that is not finite: a target too far for one
 * substep) or SS_ERR_HOOK (the hook failed): the caller rolls back. */
ss_status ss_drives_place(ss_system *sys, double dt);
/* After each substep: the driven nodes at their targets exactly; every counter + 1. */
void ss_drives_settle(ss_system *sys);
/* On a rollback, after the call's first x and v are back and before the held pins'
 * velocities are: the driven nodes' velocities and the counters as the call found them. */
void ss_drives_restore(ss_system *sys);

#endif
