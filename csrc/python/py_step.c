/* py_step.c - step(): argument parsing, the GIL, Ctrl-C, and the warnings a step raises. */
#define NO_IMPORT_ARRAY /* module.c imports NumPy's C API: see py_system.h */
#include "py_system.h"

#include <stdio.h>

/* ---- Stepping ---------------------------------------------------------- */

/* The poll of a step running without the GIL (ss_poll): take the GIL back for a
 * moment and run the signal handlers, so that Ctrl-C stops a long step within about
 * SS_POLL_SECONDS. Nonzero when a handler raised (KeyboardInterrupt): the step then
 * rolls back and returns SS_ERR_INTERRUPTED, with the exception set. */
static int poll_signals(void *context) {
    PyThreadState **released = context;
    PyEval_RestoreThread(*released);
    const int stop = PyErr_CheckSignals() < 0;
    *released = PyEval_SaveThread();
    return stop;
}

/* The poll of a step that keeps the GIL (it calls drives' Python functions). */
static int poll_signals_held(void *context) {
    (void)context;
    return PyErr_CheckSignals() < 0;
}

const char ss_py_step_doc[] =
    "step(dt, steps=1, method=None)\n"
    "--\n"
    "\n"
    "Advance by ``steps`` substeps of ``dt`` seconds with ``method``.\n"
    "\n"
    "All substeps run in C without the GIL, driven nodes included, unless a node\n"
    "is driven along a Python function (:meth:`drive`): the step then keeps the\n"
    "GIL and calls the function once per substep. A step whose result is not\n"
    "finite, or that diverges (its motion's energy outgrows what was put in by\n"
    ":attr:`divergence_factor`, checked every 64 substeps of a call of 64 or\n"
    "more), raises :class:`springsim.UnstableError` and leaves the system as it\n"
    "was before the call.\n"
    "\n"
    "``method=\"implicit_euler\"`` is linearised backward Euler (Baraff & Witkin\n"
    "1998): each substep solves\n"
    "\n"
    "    (M − dt ∂f/∂v − dt² ∂f/∂x) Δv = dt (f + dt ∂f/∂x v),\n"
    "\n"
    "then v += Δv, x += dt v, for the free nodes (pinned ones are not unknowns).\n"
    "∂f/∂v holds the spring damping and drag; ∂f/∂x is minus the springs'\n"
    "Hessian (see :meth:`stiffness_matrix`) with the sideways term of compressed\n"
    "springs dropped (1 − L/l clamped at 0), which makes the matrix symmetric\n"
    "positive definite: Jacobi-preconditioned conjugate gradients, in C, always\n"
    "apply. They stop at ``cg_tolerance`` (relative residual, default 1e-8) or\n"
    "``cg_max_iterations`` (default 1000; reaching it warns with\n"
    ":class:`springsim.ConvergenceWarning`); :meth:`last_solve` reports them. Gas\n"
    "pressure, gravity and external forces are explicit. It is first order and\n"
    "stable at any dt, because it damps fast motions: amplitude × 1/√(1 + (ω dt)²)\n"
    "per step.\n"
    "\n"
    "Parameters\n"
    "----------\n"
    "dt : float\n"
    "    Seconds per substep, > 0 and finite.\n"
    "steps : int\n"
    "    Substeps, 0 <= steps < 2**63 - 1 (0 only checks the arguments and state).\n"
    "method : str, optional\n"
    "    One of :data:`springsim.METHODS` (default: :attr:`method`).\n"
    "\n"
    "Raises\n"
    "------\n"
    "TypeError, ValueError\n"
    "    A bad argument, or a bad value written into a view; a rigid rod (stiffness\n"
    "    inf) with any method but ``\"xpbd\"`` (the message names the rods); nothing\n"
    "    has run.\n"
    "springsim.UnstableError\n"
    "    The state became non-finite or diverged, or a gas body ended a substep\n"
    "    inside out: the system is rolled back to the state before the call.\n"
    "KeyboardInterrupt\n"
    "    Ctrl-C, answered within about 0.05 s (the kernel polls for signals while it\n"
    "    runs; one substep is never cut short): the state before the call is restored.\n";

/* The step arguments: step(dt, steps=1, method=None), positional or by keyword, parsed
 * by hand (vectorcall): this is the hot call of a Python loop of single steps. */
static int step_arguments(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                          PyObject *out[3]) {
    static const char *const names[3] = {"dt", "steps", "method"};
    out[0] = out[1] = NULL;
    out[2] = Py_None;
    if (nargs > 3) {
        PyErr_Format(PyExc_TypeError, "step() takes at most 3 arguments (%zd given)", nargs);
        return -1;
    }
    for (Py_ssize_t k = 0; k < nargs; k++)
        out[k] = args[k];
    const Py_ssize_t keywords = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < keywords; k++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, k);
        int which = 0;
        while (which < 3 && PyUnicode_CompareWithASCIIString(name, names[which]) != 0)
            which++;
        if (which == 3) {
            PyErr_Format(PyExc_TypeError, "step() got an unexpected keyword argument %R", name);
            return -1;
        }
        if (which < nargs || (which == 2 ? out[2] != Py_None : out[which] != NULL)) {
            PyErr_Format(PyExc_TypeError, "step() got multiple values for argument '%s'",
                         names[which]);
            return -1;
        }
        out[which] = args[nargs + k];
    }
    if (!out[0]) {
        PyErr_SetString(PyExc_TypeError, "step() missing required argument 'dt'");
        return -1;
    }
    return 0;
}

/* Node and spring updates (steps x (nodes + springs)) below which a step keeps the GIL
 * (a few microseconds of work). */
#define SS_KEEP_GIL_BELOW 16384

/* Implicit Euler (and VBD, the same step) with springs far stiffer than the step resolves: moving
 * sideways by v dt stretches a spring by about (v dt)^2 / 2L, which the backward step resists with
 * all of k, so a swing freezes (a 1 m pendulum: 14 % of its drop in 0.5 s at
 * omega dt = 1000, 50 % at 100; docs/guide/integrators.md, "Stiff springs"). Warn past
 * RIGID_OMEGA_DT, where the springs act as rods; 0, or -1 with an exception set. */
#define RIGID_OMEGA_DT 1000.0
static int warn_if_rigid(ss_system *sys, double dt, ss_method method) {
    double omega;
    ss_status st = ss_stiffest_omega(sys, &omega);
    if (st) {
        ss_py_raise_status(sys, st);
        return -1;
    }
    if (!(omega * dt > RIGID_OMEGA_DT))
        return 0;
    char message[400];
    snprintf(message, sizeof message,
             "%s: springs this stiff are nearly rigid at dt = %g s (omega_max dt = "
             "%.3g > %g): the backward-Euler step damps the nodes' swinging, not only the "
             "springs' vibration, so slow motion comes out too slow. Take smaller steps (more "
             "substeps of method='vbd' cost no global solve), softer springs, or rigid rods "
             "(stiffness=inf) with method='xpbd'",
             ss_method_name(method), dt, omega * dt, RIGID_OMEGA_DT);
    return ss_py_warn(ss_py_stiffness_warning, message);
}

/* How a call steps, beyond dt, steps and method: the step's call modes, explicit
 * arguments rather than flags left on the System. `books`: how the divergence watch
 * keeps its books (SS_BOOKS_*: a plain call's, or one set over the calls of a run);
 * `tear`: remove the springs cut at the end of the call (a run keeps them in place
 * until its next record, so that the spring order depends on its steps alone);
 * `contact_dt`: the substep node-node contact's law from the step is taken at (0: the
 * call's dt; a run's dt for its substep shortened to a frame time). */
typedef struct {
    int books;
    int tear;
    double contact_dt;
} call_modes;

static PyObject *step_call(SystemObject *self, PyObject *dt_obj, PyObject *steps_obj,
                           PyObject *method_obj, call_modes modes);

PyObject *ss_py_system_step(SystemObject *self, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames) {
    PyObject *parsed[3];
    if (step_arguments(args, nargs, kwnames, parsed) < 0)
        return NULL;
    return step_call(self, parsed[0], parsed[1], parsed[2], (call_modes){SS_BOOKS_CALL, 1, 0.0});
}

/* _step_in_run(dt, steps, method, books, contact_dt=0.0): one call of
 * springsim.System.run(): the books as `books` says (SS_BOOKS_*), the springs cut left
 * in place (run() tears at its records), and node-node contact's law from the step
 * taken at contact_dt (s; 0: dt), the run's dt for a substep shortened to a frame time. */
PyObject *ss_py_system_step_in_run(SystemObject *self, PyObject *args) {
    PyObject *dt_obj, *steps_obj, *method_obj;
    int books;
    double contact_dt = 0.0;
    if (!PyArg_ParseTuple(args, "OOOi|d:_step_in_run", &dt_obj, &steps_obj, &method_obj, &books,
                          &contact_dt))
        return NULL;
    if (books < 0 || books > (SS_BOOKS_CHECK_END | SS_BOOKS_CONTINUE) || (books & 3) == 3) {
        PyErr_Format(PyExc_ValueError, "unknown books mode %d", books);
        return NULL;
    }
    if (!(contact_dt >= 0.0) || !isfinite(contact_dt)) {
        PyErr_Format(PyExc_ValueError, "contact_dt must be a finite time >= 0 s, got %R",
                     PyTuple_GET_ITEM(args, 4));
        return NULL;
    }
    return step_call(self, dt_obj, steps_obj, method_obj, (call_modes){books, 0, contact_dt});
}

static PyObject *step_call(SystemObject *self, PyObject *dt_obj, PyObject *steps_obj,
                           PyObject *method_obj, call_modes modes) {
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    if (!PyFloat_CheckExact(dt_obj) && !PyLong_Check(dt_obj) && !PyNumber_Check(dt_obj)) {
        PyErr_Format(PyExc_TypeError, "dt must be a number of seconds, not %.100s",
                     Py_TYPE(dt_obj)->tp_name);
        return NULL;
    }
    double dt = PyFloat_CheckExact(dt_obj) ? PyFloat_AS_DOUBLE(dt_obj) : PyFloat_AsDouble(dt_obj);
    if (dt == -1.0 && PyErr_Occurred())
        return NULL;
    Py_ssize_t steps = 1;
    if (steps_obj) {
        if (!PyIndex_Check(steps_obj) || PyBool_Check(steps_obj)) {
            PyErr_Format(PyExc_TypeError, "steps must be an int, not %.100s",
                         Py_TYPE(steps_obj)->tp_name);
            return NULL;
        }
        /* NULL: out-of-range values clip to PY_SSIZE_T_MIN/MAX instead of raising
         * OverflowError; the range checks below then say what is wrong. */
        steps = PyNumber_AsSsize_t(steps_obj, NULL);
        if (steps == -1 && PyErr_Occurred())
            return NULL;
        if (steps < 0) {
            PyErr_Format(PyExc_ValueError, "steps must be >= 0, got %R", steps_obj);
            return NULL;
        }
        if (steps == PY_SSIZE_T_MAX) {
            PyErr_Format(PyExc_ValueError, "steps must be < %zd, got %R", PY_SSIZE_T_MAX,
                         steps_obj);
            return NULL;
        }
    }
    int method = sys->method;
    if (method_obj != Py_None && (method = ss_py_parse_method(method_obj)) < 0)
        return NULL;

    /* A short call keeps the GIL: releasing and taking it back costs about as much as
     * stepping a small system once, and it ends before anyone could use the GIL. */
    ss_status st;
    const int long_call = (size_t)steps * (sys->num_nodes + sys->num_springs) >= SS_KEEP_GIL_BELOW;
    if (steps > 0 && ss_drives_hooks(sys)) {
        /* Drives along Python functions: the step calls them with the GIL, which it keeps.
         * It owns the System, so that no other thread's call begins while a function
         * runs, and the System refuses the functions' own calls meanwhile. */
        ss_py_drive_paths paths;
        if (ss_py_own(self, -1) < 0)
            return NULL;
        if (ss_py_drive_paths_begin(self, sys, &paths) < 0) {
            ss_py_disown(self);
            return NULL;
        }
        const ss_poll poll = {poll_signals_held, NULL};
        st = ss_system_step(sys, dt, (size_t)steps, (ss_method)method, modes.books,
                            modes.contact_dt, long_call ? &poll : NULL);
        ss_py_drive_paths_end(self, sys, &paths);
        if (ss_py_disown(self) < 0)
            return NULL;
        if (st == SS_ERR_HOOK)
            return ss_py_raise_status(sys, st); /* the function's exception */
    } else if (!long_call) {
        st = ss_system_step(sys, dt, (size_t)steps, (ss_method)method, modes.books,
                            modes.contact_dt, NULL);
    } else {
        /* Owned for the step: every other thread's call on this system waits. */
        if (ss_py_own(self, -1) < 0)
            return NULL;
        PyThreadState *released = PyEval_SaveThread();
        const ss_poll poll = {poll_signals, &released};
        st = ss_system_step(sys, dt, (size_t)steps, (ss_method)method, modes.books,
                            modes.contact_dt, &poll);
        PyEval_RestoreThread(released);
        if (ss_py_disown(self) < 0)
            return NULL;
    }
    if (st == SS_ERR_INTERRUPTED)
        return NULL; /* KeyboardInterrupt (or the signal handler's error) is set */
    if (st)
        return ss_py_raise_status(sys, st);
    if (sys->strain_unmet) {
        char message[400];
        snprintf(message, sizeof message,
                 "max_strain = %g could not be met in %zu of %zu substeps: springs stayed longer "
                 "than (1 + max_strain) times their rest length, and strain limiting stopped "
                 "when its passes no longer shortened them. Pinned, driven or colliding nodes "
                 "may be holding them apart; raise max_strain or free those nodes",
                 sys->max_strain, sys->strain_unmet, (size_t)steps);
        if (ss_py_warn(ss_py_convergence_warning, message) < 0)
            return NULL;
    }
    /* Tearing moves the spring arrays to new blocks when views hold them: that
     * touches reference counts, so it runs here, with the GIL. */
    if (modes.tear && (st = ss_system_tear(sys)))
        return ss_py_raise_status(sys, st);
    if (method == SS_IMPLICIT_EULER && sys->cg_capped) {
        char message[400]; /* PyErr_WarnFormat has no %g */
        snprintf(message, sizeof message,
                 "implicit_euler: conjugate gradients stopped at cg_max_iterations = %d in %zu of "
                 "%zu substeps (last relative residual %.3g > cg_tolerance %.3g); the state is "
                 "finite but less accurate. Raise cg_max_iterations or take smaller steps",
                 sys->cg_max_iterations, sys->cg_capped, sys->cg_substeps, sys->last_cg_residual,
                 sys->cg_tolerance);
        if (ss_py_warn(ss_py_convergence_warning, message) < 0)
            return NULL;
    }
    if ((method == SS_IMPLICIT_EULER || method == SS_VBD) && warn_if_rigid(sys, dt, method) < 0)
        return NULL;
    Py_RETURN_NONE;
}
