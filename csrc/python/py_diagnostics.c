/* py_diagnostics.c - what the system reports: energies, momentum, spring lengths and
 * tensions, the stability limit, the last implicit solve, the stiffness matrix. */
#define NO_IMPORT_ARRAY /* module.c imports NumPy's C API: see py_system.h */
#include "py_system.h"

#include <string.h>

/* ---- Diagnostics ------------------------------------------------------- */

PyObject *ss_py_system_energy_terms(SystemObject *self, PyObject *unused) {
    (void)unused;
    ss_system *sys = ss_py_system_query(self);
    if (!sys)
        return NULL;
    ss_energy_terms e;
    ss_energy(sys, &e);
    return Py_BuildValue("(ddddd)", e.kinetic, e.elastic, e.gravity, e.pressure, e.contact);
}

/* A new (dim,) array filled by `fill`. */
static PyObject *vector_result(SystemObject *self, void (*fill)(const ss_system *, double *)) {
    ss_system *sys = ss_py_system_query(self);
    if (!sys)
        return NULL;
    double out[3];
    fill(sys, out);
    npy_intp dims[1] = {sys->dim};
    PyObject *arr = PyArray_SimpleNew(1, dims, NPY_DOUBLE);
    if (arr)
        memcpy(PyArray_DATA((PyArrayObject *)arr), out, sys->dim * sizeof(double));
    return arr;
}

/* A new (M,) array filled by `fill`. */
static PyObject *spring_result(SystemObject *self, void (*fill)(const ss_system *, double *)) {
    ss_system *sys = ss_py_system_query(self);
    if (!sys)
        return NULL;
    npy_intp dims[1] = {(npy_intp)sys->num_springs};
    PyObject *arr = PyArray_SimpleNew(1, dims, NPY_DOUBLE);
    if (arr)
        fill(sys, PyArray_DATA((PyArrayObject *)arr));
    return arr;
}

PyObject *ss_py_system_momentum(SystemObject *self, PyObject *unused) {
    (void)unused;
    return vector_result(self, ss_momentum);
}

PyObject *ss_py_system_center_of_mass(SystemObject *self, PyObject *unused) {
    (void)unused;
    return vector_result(self, ss_center_of_mass);
}

PyObject *ss_py_system_spring_lengths(SystemObject *self, PyObject *unused) {
    (void)unused;
    return spring_result(self, ss_spring_lengths);
}

PyObject *ss_py_system_spring_tensions(SystemObject *self, PyObject *unused) {
    (void)unused;
    return spring_result(self, ss_spring_tensions);
}

PyObject *ss_py_system_critical_dt(SystemObject *self, PyObject *unused) {
    (void)unused;
    ss_system *sys = ss_py_system_query(self);
    double limit;
    if (!sys)
        return NULL;
    ss_status st = ss_critical_dt(sys, &limit);
    return st ? ss_py_raise_status(sys, st) : PyFloat_FromDouble(limit);
}

/* last_solve() -> (iterations, residual, substeps, capped) of the last implicit_euler call. */
PyObject *ss_py_system_last_solve(SystemObject *self, PyObject *unused) {
    (void)unused;
    ss_system *sys = ss_py_system_query(self);
    if (!sys)
        return NULL;
    return Py_BuildValue("(idnn)", sys->last_cg_iterations, sys->last_cg_residual,
                         (Py_ssize_t)sys->cg_substeps, (Py_ssize_t)sys->cg_capped);
}

/* _stiffness_triplets() -> (rows int64, cols int64, values float64), 4 dim^2 per spring. */
PyObject *ss_py_system_stiffness_triplets(SystemObject *self, PyObject *unused) {
    (void)unused;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    npy_intp count = (npy_intp)(sys->num_springs * 4 * (size_t)(sys->dim * sys->dim));
    PyObject *rows = PyArray_SimpleNew(1, &count, NPY_INT64);
    PyObject *cols = rows ? PyArray_SimpleNew(1, &count, NPY_INT64) : NULL;
    PyObject *values = cols ? PyArray_SimpleNew(1, &count, NPY_DOUBLE) : NULL;
    if (!values) {
        Py_XDECREF(rows);
        Py_XDECREF(cols);
        return NULL;
    }
    ss_status st = ss_stiffness_triplets(sys, PyArray_DATA((PyArrayObject *)rows),
                                         PyArray_DATA((PyArrayObject *)cols),
                                         PyArray_DATA((PyArrayObject *)values));
    if (st) {
        Py_DECREF(rows);
        Py_DECREF(cols);
        Py_DECREF(values);
        return ss_py_raise_status(sys, st);
    }
    return Py_BuildValue("(NNN)", rows, cols, values);
}
