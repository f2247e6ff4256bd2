/* py_system.h - private to the CPython + NumPy glue (module.c and the py_*.c files):
 * the _core.System object and what those files share.
 *
 * Only the glue includes Python.h and NumPy's headers; the kernel (springsim.h and the
 * other .c files) knows nothing of Python. Argument conversion and broadcasting are
 * done by springsim/system.py; the glue checks every argument again for exactly the
 * type, shape and layout the kernel reads, because the kernel trusts them.
 *
 * docs/architecture.md says which file holds which of the System's methods. */
#ifndef SPRINGSIM_PY_SYSTEM_H
#define SPRINGSIM_PY_SYSTEM_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>

/* NumPy's C API is one table of pointers for the whole extension, under this name:
 * module.c defines it and fills it (import_array() in PyInit__core); every other file
 * defines NO_IMPORT_ARRAY before including this header, and so only declares it. */
#define PY_ARRAY_UNIQUE_SYMBOL springsim_ARRAY_API
#include <numpy/arrayobject.h>

#include "springsim.h"

/* ---- The System object (py_system.c) ---------------------------------- */

typedef struct {
    PyObject_HEAD ss_system *sys;
    /* Its owner (py_owner.c): `owner` is the owning thread's id (0: none), `depth`
     * how often it acquired, and `waiters` the threads waiting for it, first come
     * first served. All three are read and written only with the GIL held. */
    unsigned long owner;
    Py_ssize_t depth;
    struct ss_py_waiter *waiters;
    /* A step is calling a drive's Python function (py_drives.c): until it returns, the
     * system refuses every call (ss_py_system), its own thread's too. */
    int in_step;
} SystemObject;

extern PyTypeObject ss_py_system_type;

/* The system of `self` for a call (py_owner.c): once no other thread owns it, and
 * refused (RuntimeError) while a step calls a drive's Python function; _query: for a
 * call that only reads it (a view, a getter, a diagnostic), which that function may make. */
ss_system *ss_py_system(SystemObject *self);
ss_system *ss_py_system_query(SystemObject *self);
PyObject *ss_py_remove_by_id(SystemObject *self, PyObject *arg,
                             ss_status (*remove)(ss_system *, long));

/* ---- One owner at a time (py_owner.c) ---------------------------------- */

extern PyTypeObject ss_py_lock_type;

int ss_py_owner_init(SystemObject *self);
void ss_py_owner_free(SystemObject *self);
/* Own the system: 1 when owned, 0 when timeout_us (< 0: none) ran out, -1 with an
 * exception (a signal's). Re-entrant. */
int ss_py_own(SystemObject *self, long long timeout_us);
int ss_py_disown(SystemObject *self);
/* Wait, with the GIL released, until no other thread owns the system: 0, or -1. */
int ss_py_wait_turn(SystemObject *self);
PyObject *ss_py_system_lock(SystemObject *self, void *closure);
PyObject *ss_py_system_check_turns(SystemObject *self, PyObject *arg);

/* ---- The state (py_state.c) ------------------------------------------- */

PyObject *ss_py_state_fields(void);
PyObject *ss_py_system_state(SystemObject *self, PyObject *unused);
PyObject *ss_py_system_set_state(SystemObject *self, PyObject *values);

/* ---- Errors (py_errors.c) ---------------------------------------------- */

extern PyObject *ss_py_unstable_error;      /* springsim.UnstableError */
extern PyObject *ss_py_convergence_warning; /* springsim.ConvergenceWarning */
extern PyObject *ss_py_stiffness_warning;   /* springsim.StiffnessWarning */

PyObject *ss_py_raise_status(ss_system *sys, ss_status st);
int ss_py_warn(PyObject *category, const char *message);
int ss_py_add_exceptions(PyObject *module);

/* ---- Argument checks (py_args.c) --------------------------------------- */

npy_intp ss_py_leading_dim(PyObject *obj);
int ss_py_check_exact_array(PyObject *arr, const char *what, int typenum, int nd,
                            const npy_intp *dims);
int ss_py_parse_method(PyObject *obj);

/* ---- The methods of System, by file ------------------------------------ */

/* py_views.c */
PyObject *ss_py_system_view(SystemObject *self, PyObject *name);
PyObject *ss_py_system_set_array(SystemObject *self, PyObject *args);

/* py_self_collision.c */
PyObject *ss_py_system_set_self_collision(SystemObject *self, PyObject *args);
PyObject *ss_py_system_self_collision(SystemObject *self, PyObject *unused);

/* py_topology.c */
PyObject *ss_py_system_add_nodes(SystemObject *self, PyObject *args);
PyObject *ss_py_system_add_springs(SystemObject *self, PyObject *args);
PyObject *ss_py_system_add_faces(SystemObject *self, PyObject *tri);
PyObject *ss_py_system_remove_springs(SystemObject *self, PyObject *arr);
PyObject *ss_py_system_remove_nodes(SystemObject *self, PyObject *arr);
PyObject *ss_py_system_validate(SystemObject *self, PyObject *unused);
PyObject *ss_py_system_set_pinned(SystemObject *self, PyObject *args);
PyObject *ss_py_system_broken_springs(SystemObject *self, PyObject *unused);
PyObject *ss_py_system_tear(SystemObject *self, PyObject *unused);

/* py_colliders.c */
PyObject *ss_py_system_add_collider(SystemObject *self, PyObject *args);
PyObject *ss_py_system_set_collider(SystemObject *self, PyObject *args);
PyObject *ss_py_system_remove_collider(SystemObject *self, PyObject *arg);
PyObject *ss_py_system_colliders(SystemObject *self, PyObject *unused);
PyObject *ss_py_system_add_shape(SystemObject *self, PyObject *args);
PyObject *ss_py_system_set_shape(SystemObject *self, PyObject *args);
PyObject *ss_py_system_add_mesh(SystemObject *self, PyObject *args);
PyObject *ss_py_system_set_mesh(SystemObject *self, PyObject *args);
PyObject *ss_py_system_collider_shape(SystemObject *self, PyObject *arg);

/* py_gas.c */
PyObject *ss_py_system_add_pressure(SystemObject *self, PyObject *args);
PyObject *ss_py_system_set_pressure(SystemObject *self, PyObject *args);
PyObject *ss_py_system_remove_pressure(SystemObject *self, PyObject *arg);
PyObject *ss_py_system_pressure_bodies(SystemObject *self, PyObject *unused);
PyObject *ss_py_system_pressure_elements(SystemObject *self, PyObject *arg);

/* py_contact.c */
PyObject *ss_py_system_contact_law(SystemObject *self, PyObject *unused);
PyObject *ss_py_system_set_contact_law(SystemObject *self, PyObject *args);
PyObject *ss_py_system_segment_contact(SystemObject *self, PyObject *unused);
PyObject *ss_py_system_set_segment_contact(SystemObject *self, PyObject *args);
PyObject *ss_py_system_crossings(SystemObject *self, PyObject *unused);
PyObject *ss_py_system_set_contact_filter(SystemObject *self, PyObject *args);
PyObject *ss_py_system_contact_filter(SystemObject *self, PyObject *unused);
PyObject *ss_py_system_contact_pairs(SystemObject *self, PyObject *unused);
PyObject *ss_py_system_has_radii(SystemObject *self, PyObject *unused);
PyObject *ss_py_system_contact_dt(SystemObject *self, PyObject *unused);

/* py_drives.c */
PyObject *ss_py_system_add_drive(SystemObject *self, PyObject *args);
PyObject *ss_py_system_undrive(SystemObject *self, PyObject *nodes);
PyObject *ss_py_system_clear_drives(SystemObject *self, PyObject *unused);
PyObject *ss_py_system_drive_table(SystemObject *self, PyObject *unused);
PyObject *ss_py_system_hook_drives(SystemObject *self, PyObject *unused);
/* What a step with drives that follow Python functions needs: the System's
 * `_drive_paths` (id -> function) and its dim. begin installs the hook that calls them
 * (sys->drive_hook) and makes the System refuse calls until end; 0, or -1 with an
 * exception. end undoes it. */
typedef struct {
    PyObject *functions;
    int dim;
} ss_py_drive_paths;
int ss_py_drive_paths_begin(SystemObject *self, ss_system *sys, ss_py_drive_paths *paths);
void ss_py_drive_paths_end(SystemObject *self, ss_system *sys, ss_py_drive_paths *paths);

/* py_step.c */
extern const char ss_py_step_doc[];
PyObject *ss_py_system_step_in_run(SystemObject *self, PyObject *args);
PyObject *ss_py_system_step(SystemObject *self, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames);

/* py_diagnostics.c */
PyObject *ss_py_system_energy_terms(SystemObject *self, PyObject *unused);
PyObject *ss_py_system_momentum(SystemObject *self, PyObject *unused);
PyObject *ss_py_system_center_of_mass(SystemObject *self, PyObject *unused);
PyObject *ss_py_system_spring_lengths(SystemObject *self, PyObject *unused);
PyObject *ss_py_system_spring_tensions(SystemObject *self, PyObject *unused);
PyObject *ss_py_system_critical_dt(SystemObject *self, PyObject *unused);
PyObject *ss_py_system_last_solve(SystemObject *self, PyObject *unused);
PyObject *ss_py_system_stiffness_triplets(SystemObject *self, PyObject *unused);

#endif
