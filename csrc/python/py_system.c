/* py_system.c - the _core.System type: creation, copies, the attributes that read
 * and write the system's scalars, and the tables of its methods and attributes. */
#define NO_IMPORT_ARRAY /* module.c imports NumPy's C API: see py_system.h */
#include "py_system.h"

#include <math.h>
#include <string.h>

/* ---- The System object ------------------------------------------------- */

/* Remove the collider or gas body with the id `arg` by `remove`. */
PyObject *ss_py_remove_by_id(SystemObject *self, PyObject *arg,
                             ss_status (*remove)(ss_system *, long)) {
    long id = PyLong_AsLong(arg);
    if (id == -1 && PyErr_Occurred())
        return NULL;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    ss_status st = remove(sys, id);
    if (st)
        return ss_py_raise_status(sys, st);
    Py_RETURN_NONE;
}

static PyObject *System_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    (void)args;
    (void)kwds;
    SystemObject *self = (SystemObject *)type->tp_alloc(type, 0);
    if (self) {
        self->sys = NULL;
        self->in_step = 0;
        if (ss_py_owner_init(self) < 0) {
            Py_DECREF(self);
            return NULL;
        }
    }
    return (PyObject *)self;
}

static int System_init(SystemObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"dim", NULL};
    PyObject *dim_obj = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:System", kwlist, &dim_obj))
        return -1;
    if (self->sys) {
        PyErr_SetString(PyExc_RuntimeError, "System is already initialised");
        return -1;
    }
    long dim = 3;
    if (dim_obj) {
        if (!PyLong_Check(dim_obj) || PyBool_Check(dim_obj)) {
            PyErr_Format(PyExc_TypeError, "dim must be an int (2 or 3), not %.100s",
                         Py_TYPE(dim_obj)->tp_name);
            return -1;
        }
        dim = PyLong_AsLong(dim_obj);
        if (dim == -1 && PyErr_Occurred())
            return -1;
    }
    if (dim != 2 && dim != 3) {
        PyErr_Format(PyExc_ValueError, "dim must be 2 or 3, got %ld", dim);
        return -1;
    }
    self->sys = ss_system_new((int)dim);
    if (!self->sys) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void System_dealloc(SystemObject *self) {
    ss_system_free(self->sys);
    ss_py_owner_free(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *System_copy(SystemObject *self, PyObject *unused) {
    (void)unused;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    SystemObject *dup = (SystemObject *)Py_TYPE(self)->tp_alloc(Py_TYPE(self), 0);
    if (!dup)
        return NULL;
    dup->sys = NULL;
    dup->in_step = 0;
    if (ss_py_owner_init(dup) < 0) {
        Py_DECREF(dup);
        return NULL;
    }
    dup->sys = ss_system_copy(sys);
    if (!dup->sys) {
        Py_DECREF(dup);
        return PyErr_NoMemory();
    }
    return (PyObject *)dup;
}

/* ---- Scalar attributes ------------------------------------------------- */

static PyObject *get_dim(SystemObject *self, void *closure) {
    (void)closure;
    ss_system *sys = ss_py_system_query(self);
    return sys ? PyLong_FromLong(sys->dim) : NULL;
}

/* Number of rows of the array group the closure names: nodes, springs or faces. */
static PyObject *get_count(SystemObject *self, void *closure) {
    ss_system *sys = ss_py_system_query(self);
    return sys ? PyLong_FromSize_t(ss_array_rows(sys, (ss_array)(intptr_t)closure)) : NULL;
}

static PyObject *get_nbytes(SystemObject *self, void *closure) {
    (void)closure;
    ss_system *sys = ss_py_system_query(self);
    return sys ? PyLong_FromSize_t(ss_system_nbytes(sys)) : NULL;
}

/* The system's boolean flags, by attribute name. */
static int *flag_field(ss_system *sys, const char *name) {
    if (strcmp(name, "track_energy") == 0)
        return &sys->track_energy;
    return &sys->state.prev_accel_valid;
}

static PyObject *get_flag(SystemObject *self, void *closure) {
    ss_system *sys = ss_py_system_query(self);
    return sys ? PyBool_FromLong(*flag_field(sys, closure)) : NULL;
}

static int set_flag(SystemObject *self, PyObject *value, void *closure) {
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return -1;
    int truth = value ? PyObject_IsTrue(value) : -1;
    if (truth < 0) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_AttributeError, "cannot delete %s", (const char *)closure);
        return -1;
    }
    *flag_field(sys, closure) = truth;
    return 0;
}

/* The double field a scalar attribute reads and writes. */
static double *scalar_field(ss_system *sys, const char *name) {
    if (strcmp(name, "drag") == 0)
        return &sys->drag;
    if (strcmp(name, "air_density") == 0)
        return &sys->air_density;
    if (strcmp(name, "drag_coefficient") == 0)
        return &sys->drag_coeff;
    if (strcmp(name, "energy_loss") == 0)
        return &sys->energy_loss;
    if (strcmp(name, "dissipated") == 0)
        return &sys->state.dissipated;
    return &sys->state.time;
}

static PyObject *get_scalar(SystemObject *self, void *closure) {
    ss_system *sys = ss_py_system_query(self);
    return sys ? PyFloat_FromDouble(*scalar_field(sys, closure)) : NULL;
}

static int set_scalar(SystemObject *self, PyObject *value, void *closure) {
    const char *name = closure;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return -1;
    if (!value) {
        PyErr_Format(PyExc_AttributeError, "cannot delete %s", name);
        return -1;
    }
    if (!PyFloat_Check(value) && !PyLong_Check(value) && !PyNumber_Check(value)) {
        PyErr_Format(PyExc_TypeError, "%s must be a number, not %.100s", name,
                     Py_TYPE(value)->tp_name);
        return -1;
    }
    double v = PyFloat_AsDouble(value);
    if (v == -1.0 && PyErr_Occurred())
        return -1;
    const int air = strcmp(name, "air_density") == 0, cd = strcmp(name, "drag_coefficient") == 0;
    if (air || cd) { /* the kernel's check and message (2D refuses face air) */
        const ss_status st =
            ss_aero_check(sys, air ? v : sys->air_density, cd ? v : sys->drag_coeff);
        if (st) {
            ss_py_raise_status(sys, st);
            return -1;
        }
    }
    int ok = isfinite(v);
    const char *domain = "finite";
    if (strcmp(name, "drag") == 0) {
        ok = ok && v >= 0;
        domain = "finite and >= 0 N*s/m";
    } else if (strcmp(name, "energy_loss") == 0) {
        ok = ok && v >= 0 && v <= 1;
        domain = "in [0, 1] (the fraction of velocity kept per step)";
    }
    if (!ok) {
        PyErr_Format(PyExc_ValueError, "%s must be %s, got %R", name, domain, value);
        return -1;
    }
    *scalar_field(sys, name) = v;
    return 0;
}

static PyObject *get_method(SystemObject *self, void *closure) {
    (void)closure;
    ss_system *sys = ss_py_system_query(self);
    return sys ? PyUnicode_FromString(ss_method_name(sys->method)) : NULL;
}

static int set_method(SystemObject *self, PyObject *value, void *closure) {
    (void)closure;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return -1;
    if (!value) {
        PyErr_SetString(PyExc_AttributeError, "cannot delete method");
        return -1;
    }
    int method = ss_py_parse_method(value);
    if (method < 0)
        return -1;
    sys->method = (ss_method)method;
    return 0;
}

static PyObject *get_iterations(SystemObject *self, void *closure) {
    (void)closure;
    ss_system *sys = ss_py_system_query(self);
    return sys ? PyLong_FromLong(sys->iterations) : NULL;
}

/* An int setting in [low, high] from `value`, or -1 with TypeError or ValueError (a
 * huge int is out of range too, not an OverflowError). */
static int int_setting(PyObject *value, const char *name, long low, long high, int *out) {
    if (!value || !PyLong_Check(value) || PyBool_Check(value)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int", name);
        return -1;
    }
    int overflow;
    const long n = PyLong_AsLongAndOverflow(value, &overflow);
    if (n == -1 && PyErr_Occurred())
        return -1;
    if (overflow || n < low || n > high) {
        PyErr_Format(PyExc_ValueError, "%s must be between %ld and %ld, got %R", name, low, high,
                     value);
        return -1;
    }
    *out = (int)n;
    return 0;
}

static int set_iterations(SystemObject *self, PyObject *value, void *closure) {
    (void)closure;
    ss_system *sys = ss_py_system(self);
    return sys ? int_setting(value, "iterations", 1, 100000, &sys->iterations) : -1;
}

/* Optional settings, None when off: max_strain >= 0 (off: -1), divergence_factor > 1
 * (off: inf). */
static double *optional_field(ss_system *sys, const char *name, double *off) {
    if (strcmp(name, "max_strain") == 0) {
        *off = -1.0;
        return &sys->max_strain;
    }
    *off = INFINITY;
    return &sys->divergence_factor;
}

static PyObject *get_optional(SystemObject *self, void *closure) {
    ss_system *sys = ss_py_system_query(self);
    if (!sys)
        return NULL;
    double off;
    const double value = *optional_field(sys, closure, &off);
    if (value == off)
        Py_RETURN_NONE;
    return PyFloat_FromDouble(value);
}

static int set_optional(SystemObject *self, PyObject *value, void *closure) {
    const char *name = closure;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return -1;
    if (!value) {
        PyErr_Format(PyExc_AttributeError, "cannot delete %s (set it to None)", name);
        return -1;
    }
    double off, *field = optional_field(sys, name, &off);
    if (value == Py_None) {
        *field = off;
        return 0;
    }
    if (PyBool_Check(value) || !PyNumber_Check(value)) {
        PyErr_Format(PyExc_TypeError, "%s must be a number or None, not %.100s", name,
                     Py_TYPE(value)->tp_name);
        return -1;
    }
    double v = PyFloat_AsDouble(value);
    if (v == -1.0 && PyErr_Occurred())
        return -1;
    const int strain = field == &sys->max_strain;
    if (!(strain ? v >= 0.0 : v > 1.0) || !isfinite(v)) {
        PyErr_Format(PyExc_ValueError, "%s must be finite and %s (or None), got %R", name,
                     strain ? ">= 0" : "> 1", value);
        return -1;
    }
    *field = v;
    return 0;
}

static PyObject *get_cg_tolerance(SystemObject *self, void *closure) {
    (void)closure;
    ss_system *sys = ss_py_system_query(self);
    return sys ? PyFloat_FromDouble(sys->cg_tolerance) : NULL;
}

static int set_cg_tolerance(SystemObject *self, PyObject *value, void *closure) {
    (void)closure;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return -1;
    if (!value || PyBool_Check(value) || !(PyFloat_Check(value) || PyLong_Check(value))) {
        PyErr_SetString(PyExc_TypeError, "cg_tolerance must be a number");
        return -1;
    }
    double tol = PyFloat_AsDouble(value);
    if (tol == -1.0 && PyErr_Occurred())
        return -1;
    if (!(tol > 0.0 && tol < 1.0)) {
        PyErr_Format(PyExc_ValueError,
                     "cg_tolerance is the relative residual |r| / |b| CG stops at: it must be in "
                     "(0, 1), got %R",
                     value);
        return -1;
    }
    sys->cg_tolerance = tol;
    return 0;
}

static PyObject *get_cg_max_iterations(SystemObject *self, void *closure) {
    (void)closure;
    ss_system *sys = ss_py_system_query(self);
    return sys ? PyLong_FromLong(sys->cg_max_iterations) : NULL;
}

static int set_cg_max_iterations(SystemObject *self, PyObject *value, void *closure) {
    (void)closure;
    ss_system *sys = ss_py_system(self);
    return sys ? int_setting(value, "cg_max_iterations", 1, 10000000, &sys->cg_max_iterations) : -1;
}

/* ---- Type -------------------------------------------------------------- */

static PyMethodDef System_methods[] = {
    {"_view", (PyCFunction)ss_py_system_view, METH_O, "A zero-copy view of a named array."},
    {"_set_array", (PyCFunction)ss_py_system_set_array, METH_VARARGS,
     "Overwrite a named array from an exact-shape array, checking every value first."},
    {"_add_nodes", (PyCFunction)ss_py_system_add_nodes, METH_VARARGS,
     "_add_nodes(x, v or None, m, pinned) -> first new index."},
    {"_add_springs", (PyCFunction)ss_py_system_add_springs, METH_VARARGS,
     "_add_springs(pairs, k, c, rest or None) -> first new index."},
    {"_remove_springs", (PyCFunction)ss_py_system_remove_springs, METH_O,
     "Remove springs by index."},
    {"_add_collider", (PyCFunction)ss_py_system_add_collider, METH_VARARGS,
     "_add_collider(kind, vector, scalar, restitution, friction) -> id."},
    {"_set_collider", (PyCFunction)ss_py_system_set_collider, METH_VARARGS,
     "_set_collider(id, vector, scalar, restitution, friction)."},
    {"_remove_collider", (PyCFunction)ss_py_system_remove_collider, METH_O,
     "Remove a collider by id."},
    {"_add_pressure", (PyCFunction)ss_py_system_add_pressure, METH_VARARGS,
     "_add_pressure(elements, nrt, ambient) -> id."},
    {"_set_pressure", (PyCFunction)ss_py_system_set_pressure, METH_VARARGS,
     "_set_pressure(id, nrt, ambient)."},
    {"_remove_pressure", (PyCFunction)ss_py_system_remove_pressure, METH_O,
     "Remove a gas body by id."},
    {"_pressure_bodies", (PyCFunction)ss_py_system_pressure_bodies, METH_NOARGS,
     "[(id, nrt, ambient, volume), ...]."},
    {"_pressure_elements", (PyCFunction)ss_py_system_pressure_elements, METH_O,
     "A copy of a gas body's outward boundary, (K, dim) int32."},
    {"_add_shape", (PyCFunction)ss_py_system_add_shape, METH_VARARGS,
     "_add_shape(kind, center, end, radius, restitution, friction) -> id."},
    {"_set_shape", (PyCFunction)ss_py_system_set_shape, METH_VARARGS,
     "_set_shape(id, center, end, radius, restitution, friction)."},
    {"_add_mesh", (PyCFunction)ss_py_system_add_mesh, METH_VARARGS,
     "_add_mesh(vertices, faces, thickness, restitution, friction) -> id."},
    {"_set_mesh", (PyCFunction)ss_py_system_set_mesh, METH_VARARGS,
     "_set_mesh(id, vertices or None, thickness, restitution, friction)."},
    {"_collider_shape", (PyCFunction)ss_py_system_collider_shape, METH_O,
     "_collider_shape(id) -> a box's half-extents, a capsule's end, a mesh's arrays."},
    {"_contact_law", (PyCFunction)ss_py_system_contact_law, METH_NOARGS,
     "(radius, stiffness, restitution, friction) of node-node contact."},
    {"_set_contact_law", (PyCFunction)ss_py_system_set_contact_law, METH_VARARGS,
     "_set_contact_law(radius, stiffness, restitution, friction), checked first."},
    {"_segment_contact", (PyCFunction)ss_py_system_segment_contact, METH_NOARGS,
     "_segment_contact() -> bool: segment contact is on."},
    {"_crossings", (PyCFunction)ss_py_system_crossings, METH_NOARGS,
     "_crossings() -> int: crossings counted by self-collision and segment contact."},
    {"_set_segment_contact", (PyCFunction)ss_py_system_set_segment_contact, METH_VARARGS,
     "_set_segment_contact(on): segment contact on or off (3D only)."},
    {"_set_contact_filter", (PyCFunction)ss_py_system_set_contact_filter, METH_VARARGS,
     "_set_contact_filter(group_a, group_b, enabled)."},
    {"_contact_filter", (PyCFunction)ss_py_system_contact_filter, METH_NOARGS,
     "[(a, b), ...]: the group pairs that do not touch, a <= b."},
    {"_contact_pairs", (PyCFunction)ss_py_system_contact_pairs, METH_NOARGS,
     "(P, 2) int32: node pairs touching now, in force order."},
    {"_has_radii", (PyCFunction)ss_py_system_has_radii, METH_NOARGS,
     "Whether some node has a contact radius > 0 (makes no array)."},
    {"_contact_dt", (PyCFunction)ss_py_system_contact_dt, METH_NOARGS,
     "s: the last step call's substep, which the contact law from the step is at (0: none)."},
    {"_colliders", (PyCFunction)ss_py_system_colliders, METH_NOARGS,
     "[(id, kind, vector, scalar, restitution, friction), ...] in order."},
    {"broken_springs", (PyCFunction)ss_py_system_broken_springs, METH_NOARGS,
     "broken_springs()\n--\n\nThe (K, 2) node pairs of the springs torn since the last call "
     "(int32), in the order they broke; the record is then cleared."},
    {"_set_self_collision", (PyCFunction)ss_py_system_set_self_collision, METH_VARARGS,
     "Turn self-collision on (thickness, stiffness, friction) or off (thickness 0)."},
    {"_self_collision", (PyCFunction)ss_py_system_self_collision, METH_NOARGS,
     "(thickness, stiffness, friction, crossings), or None when off."},
    {"_state", (PyCFunction)ss_py_system_state, METH_NOARGS,
     "{name: value} for every field of the state (_core.STATE_FIELDS), arrays copied."},
    {"_set_state", (PyCFunction)ss_py_system_set_state, METH_O,
     "Set every field of the state from a dict of them; checked first, all or nothing."},
    {"_check_turns", (PyCFunction)ss_py_system_check_turns, METH_O,
     "_check_turns(count): the ownership check every call makes, count times (the bench)."},
    {"_validate", (PyCFunction)ss_py_system_validate, METH_NOARGS,
     "Raise ValueError if any value a step relies on is out of its domain."},
    {"_add_faces", (PyCFunction)ss_py_system_add_faces, METH_O,
     "_add_faces(tri) -> first new index."},
    {"_remove_nodes", (PyCFunction)ss_py_system_remove_nodes, METH_O,
     "Remove nodes with their springs and faces; returns the old-to-new index map."},
    {"_set_pinned", (PyCFunction)ss_py_system_set_pinned, METH_VARARGS, "Set pinned flags."},
    {"_energy_terms", (PyCFunction)ss_py_system_energy_terms, METH_NOARGS,
     "(kinetic, elastic, gravity, pressure, contact) in joules."},
    {"_step_in_run", (PyCFunction)ss_py_system_step_in_run, METH_VARARGS,
     "_step_in_run(dt, steps, method, books, contact_dt=0.0): one call of run(): the "
     "divergence books as `books` says (springsim.stepping.divergence), the springs cut "
     "left in place until _tear() (so that how run() groups substeps into calls changes "
     "nothing), node-node contact's law from the step taken at contact_dt (0: dt)."},
    {"step", (PyCFunction)(void (*)(void))ss_py_system_step, METH_FASTCALL | METH_KEYWORDS,
     ss_py_step_doc},
    {"momentum", (PyCFunction)ss_py_system_momentum, METH_NOARGS,
     "momentum($self, /)\n--\n\nTotal momentum, kg m/s."},
    {"center_of_mass", (PyCFunction)ss_py_system_center_of_mass, METH_NOARGS,
     "center_of_mass($self, /)\n--\n\nCentre of mass, m."},
    {"spring_lengths", (PyCFunction)ss_py_system_spring_lengths, METH_NOARGS,
     "spring_lengths($self, /)\n--\n\nSpring lengths, m."},
    {"spring_tensions", (PyCFunction)ss_py_system_spring_tensions, METH_NOARGS,
     "spring_tensions($self, /)\n--\n\nSigned axial spring forces, N."},
    {"critical_dt", (PyCFunction)ss_py_system_critical_dt, METH_NOARGS,
     "Explicit stability limit, s."},
    {"copy", (PyCFunction)System_copy, METH_NOARGS, "A deep copy."},
    {"_tear", (PyCFunction)ss_py_system_tear, METH_NOARGS,
     "Remove the springs cut while tearing was deferred (run() calls it)."},
    {"_add_drive", (PyCFunction)ss_py_system_add_drive, METH_VARARGS,
     "_add_drive(kind, nodes, values, t0, width, rows, counter) -> id: a drive (DRIVE_LINE, "
     "DRIVE_TARGETS or DRIVE_HOOK), its nodes taken from other drives and pinned."},
    {"_undrive", (PyCFunction)ss_py_system_undrive, METH_O,
     "_undrive(nodes): stop driving these nodes; the rest of their drives go on."},
    {"_clear_drives", (PyCFunction)ss_py_system_clear_drives, METH_NOARGS, "Remove every drive."},
    {"_drive_table", (PyCFunction)ss_py_system_drive_table, METH_NOARGS,
     "[(id, kind, nodes, counter, t0, values, width, rows), ...]: copies of the drives."},
    {"_hook_drives", (PyCFunction)ss_py_system_hook_drives, METH_NOARGS,
     "[id, ...]: the drives that follow a function (their functions: _drive_paths)."},
    {"_last_solve", (PyCFunction)ss_py_system_last_solve, METH_NOARGS,
     "(iterations, residual, substeps, capped) of the last implicit_euler call."},
    {"_stiffness_triplets", (PyCFunction)ss_py_system_stiffness_triplets, METH_NOARGS,
     "(rows, cols, values) of the elastic energy's Hessian; duplicates sum."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef System_getset[] = {
    {"lock", (getter)ss_py_system_lock, NULL,
     "The System's lock (re-entrant, like threading.RLock). Every call on the System holds "
     "it for its duration, and a call made while another thread holds it waits for it; hold "
     "it yourself (``with sim.lock:``) so that several calls see no other thread's in between.",
     NULL},
    {"dim", (getter)get_dim, NULL, "Spatial dimension, 2 or 3.", NULL},
    {"num_nodes", (getter)get_count, NULL, "Number of nodes N.", (void *)SS_POSITIONS},
    {"num_springs", (getter)get_count, NULL, "Number of springs M.", (void *)SS_SPRINGS},
    {"cg_tolerance", (getter)get_cg_tolerance, (setter)set_cg_tolerance,
     "implicit_euler: conjugate gradients stop when the residual is below cg_tolerance times "
     "the right-hand side (2-norms; default 1e-8).",
     NULL},
    {"cg_max_iterations", (getter)get_cg_max_iterations, (setter)set_cg_max_iterations,
     "implicit_euler: conjugate-gradient iterations per substep at most (default 1000); "
     "reaching it warns with springsim.ConvergenceWarning.",
     NULL},
    {"iterations", (getter)get_iterations, (setter)set_iterations,
     "Passes per substep of method 'xpbd' (over its constraints) and 'vbd' (over its "
     "vertices) (default 10).",
     NULL},
    {"max_strain", (getter)get_optional, (setter)set_optional,
     "Strain limit (Provot): after every substep no spring is longer than "
     "(1 + max_strain) times its rest length. None (the default) turns it off.",
     "max_strain"},
    {"divergence_factor", (getter)get_optional, (setter)set_optional,
     "The divergence watch: a step raises UnstableError (and rolls back) when the motion's "
     "kinetic + elastic energy exceeds divergence_factor (> 1, default 100) times the most "
     "energy available to it (what it had plus what gravity, external forces, wind, gas and "
     "moving pins put in). Checked every 64 substeps of a step call, of a run() and of a loop "
     "of shorter step calls. None turns it off.",
     "divergence_factor"},
    {"nbytes", (getter)get_nbytes, NULL,
     "Bytes the kernel holds for this system: every block it owns (arrays, scratch, plan, ...).",
     NULL},
    {"num_faces", (getter)get_count, NULL, "Number of triangles F.", (void *)SS_FACES},
    {"_verlet_valid", (getter)get_flag, (setter)set_flag,
     "Whether _prev_accel holds the last Verlet step's acceleration (saved with the state).",
     "_verlet_valid"},
    {"drag", (getter)get_scalar, (setter)set_scalar,
     "Linear air drag coefficient, N*s/m: force -drag (v - wind) on every free node.", "drag"},
    {"air_density", (getter)get_scalar, (setter)set_scalar,
     "Density of the air the faces move through, kg/m^3 (default 1.2).", "air_density"},
    {"drag_coefficient", (getter)get_scalar, (setter)set_scalar,
     "Drag coefficient C_d of every face as a flat plate (3D); 0, the default, turns the air "
     "on faces off.",
     "drag_coefficient"},
    {"energy_loss", (getter)get_scalar, (setter)set_scalar,
     "Fraction of velocity kept per step, in [0, 1]; 1.0 = no loss.", "energy_loss"},
    {"time", (getter)get_scalar, (setter)set_scalar, "Simulation time, s.", "time"},
    {"dissipated", (getter)get_scalar, (setter)set_scalar,
     "Energy, J, taken out of the motion while track_energy is on (run() and the viewer turn "
     "it on): by spring damping, drag and the air on faces (trapezoid rule on their power), "
     "energy_loss, the strain limit and contacts. Assign 0 to restart the count.",
     "dissipated"},
    {"track_energy", (getter)get_flag, (setter)set_flag,
     "Whether steps add to `dissipated` (off by default: the books cost a pass over the "
     "damped springs per substep, two with colliders, about as much as the spring forces). "
     "run() and the viewer turn it on while they run.",
     "track_energy"},
    {"method", (getter)get_method, (setter)set_method,
     "The integrator step() uses when none is given.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject ss_py_system_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "springsim._core.System",
    .tp_basicsize = sizeof(SystemObject),
    .tp_dealloc = (destructor)System_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "The C kernel's mass-spring system; use springsim.System.",
    .tp_methods = System_methods,
    .tp_getset = System_getset,
    .tp_init = (initproc)System_init,
    .tp_new = System_new,
};
