/* py_errors.c - kernel statuses as Python exceptions, and the exceptions of our own. */
#define NO_IMPORT_ARRAY /* module.c imports NumPy's C API: see py_system.h */
#include "py_system.h"

#include <stdio.h>

PyObject *ss_py_unstable_error;
PyObject *ss_py_convergence_warning;
PyObject *ss_py_stiffness_warning;

/* Raise the Python exception for a kernel status; returns NULL for `return`. */
PyObject *ss_py_raise_status(ss_system *sys, ss_status st) {
    switch (st) {
    case SS_ERR_NOMEM: /* PyErr_NoMemory() would say nothing of what ran out */
        PyErr_SetString(PyExc_MemoryError, sys->error[0] ? sys->error : "out of memory");
        return NULL;
    case SS_ERR_INDEX:
    case SS_ERR_VALUE:
        PyErr_SetString(PyExc_ValueError, sys->error);
        return NULL;
    case SS_ERR_UNSTABLE:
        PyErr_SetString(ss_py_unstable_error, sys->error);
        return NULL;
    case SS_ERR_HOOK: /* a drive's Python function raised: its exception is set */
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_RuntimeError, sys->error);
        return NULL;
    default:
        PyErr_Format(PyExc_SystemError, "springsim kernel returned status %d", (int)st);
        return NULL;
    }
}

/* Whether `frame` runs the springsim package's code: its globals' __name__ is
 * "springsim" or "springsim.<module>". */
static int in_springsim(PyFrameObject *frame) {
    PyObject *globals = PyFrame_GetGlobals(frame);
    if (!globals) {
        PyErr_Clear();
        return 0;
    }
    int inside = 0;
    PyObject *name = PyDict_Check(globals) ? PyDict_GetItemString(globals, "__name__") : NULL;
    if (name && PyUnicode_Check(name)) {
        const char *text = PyUnicode_AsUTF8(name);
        if (!text)
            PyErr_Clear();
        else
            inside = strcmp(text, "springsim") == 0 || strncmp(text, "springsim.", 10) == 0;
    }
    Py_DECREF(globals);
    return inside;
}

/* Warn with `category` at the user's line: the first Python frame, from the caller of
 * the running method outwards, that is not springsim's (sim.run() -> run.py -> step
 * warns at the line calling sim.run). As PyErr_WarnEx: 0, or -1 with the exception set
 * (a warning filtered into an error). src/springsim/_warn.py does the same in Python. */
int ss_py_warn(PyObject *category, const char *message) {
    Py_ssize_t level = 1;
    PyFrameObject *frame = PyEval_GetFrame(); /* borrowed; NULL with no Python caller */
    Py_XINCREF(frame);
    while (frame && in_springsim(frame)) {
        PyFrameObject *back = PyFrame_GetBack(frame);
        Py_DECREF(frame);
        frame = back;
        level++;
    }
    Py_XDECREF(frame);
    return PyErr_WarnEx(category, message, level);
}

/* Create the class springsim.<name> (base: a class or a tuple of them) into *slot and
 * add it to `module`; -1 with the exception set if that fails. */
static int add_class(PyObject *module, PyObject **slot, const char *name, const char *doc,
                     PyObject *base) {
    char qualified[64];
    snprintf(qualified, sizeof qualified, "springsim.%s", name);
    *slot = PyErr_NewExceptionWithDoc(qualified, doc, base, NULL);
    if (!*slot)
        return -1;
    return PyModule_AddObjectRef(module, name, *slot);
}

/* Create springsim.UnstableError, ConvergenceWarning and StiffnessWarning and add them to
 * `module`; -1 with the exception set if that fails. */
int ss_py_add_exceptions(PyObject *module) {
    PyObject *bases = PyTuple_Pack(2, PyExc_FloatingPointError, PyExc_RuntimeError);
    if (!bases)
        return -1;
    const int failed = add_class(
        module, &ss_py_unstable_error, "UnstableError",
        "A step produced non-finite values. The system was rolled back to its state before "
        "the call; the message suggests a smaller dt.",
        bases);
    Py_DECREF(bases);
    if (failed ||
        add_class(module, &ss_py_convergence_warning, "ConvergenceWarning",
                  "An iterative solve (implicit_euler's conjugate gradients) stopped at its "
                  "iteration cap before reaching its tolerance. The state is finite but less "
                  "accurate.",
                  PyExc_RuntimeWarning) < 0 ||
        add_class(module, &ss_py_stiffness_warning, "StiffnessWarning",
                  "An implicit_euler step whose springs are nearly rigid at its dt (omega_max dt "
                  "> 1000): it damps the nodes' swinging, not only the springs' vibration, so "
                  "slow motion comes out too slow. Take smaller steps, softer springs, or rigid "
                  "rods with xpbd.",
                  PyExc_RuntimeWarning) < 0)
        return -1;
    return 0;
}
