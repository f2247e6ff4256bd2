/* py_topology.c - editing the topology: adding and removing nodes, springs and
 * faces, pinning, checking the state, and the springs torn by steps. */
#define NO_IMPORT_ARRAY /* module.c imports NumPy's C API: see py_system.h */
#include "py_system.h"

#include <string.h>

/* ---- Topology ---------------------------------------------------------- */

PyObject *ss_py_system_add_nodes(SystemObject *self, PyObject *args) {
    PyObject *x, *v, *m, *pinned;
    if (!PyArg_ParseTuple(args, "OOOO:_add_nodes", &x, &v, &m, &pinned))
        return NULL;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    npy_intp count = ss_py_leading_dim(x);
    npy_intp node_dims[2] = {count, sys->dim}, mass_dims[1] = {count};
    if (ss_py_check_exact_array(x, "positions", NPY_DOUBLE, 2, node_dims) < 0 ||
        (v != Py_None && ss_py_check_exact_array(v, "velocities", NPY_DOUBLE, 2, node_dims) < 0) ||
        ss_py_check_exact_array(m, "masses", NPY_DOUBLE, 1, mass_dims) < 0 ||
        ss_py_check_exact_array(pinned, "pinned", NPY_BOOL, 1, mass_dims) < 0)
        return NULL;
    size_t first;
    ss_status st = ss_system_add_nodes(sys, (size_t)count, PyArray_DATA((PyArrayObject *)x),
                                       v == Py_None ? NULL : PyArray_DATA((PyArrayObject *)v),
                                       PyArray_DATA((PyArrayObject *)m),
                                       PyArray_DATA((PyArrayObject *)pinned), &first);
    if (st)
        return ss_py_raise_status(sys, st);
    return PyLong_FromSize_t(first);
}

PyObject *ss_py_system_add_springs(SystemObject *self, PyObject *args) {
    PyObject *pairs, *k, *c, *rest;
    if (!PyArg_ParseTuple(args, "OOOO:_add_springs", &pairs, &k, &c, &rest))
        return NULL;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    npy_intp count = ss_py_leading_dim(pairs);
    npy_intp pair_dims[2] = {count, 2}, dims[1] = {count};
    if (ss_py_check_exact_array(pairs, "pairs", NPY_INT64, 2, pair_dims) < 0 ||
        ss_py_check_exact_array(k, "stiffness", NPY_DOUBLE, 1, dims) < 0 ||
        ss_py_check_exact_array(c, "damping", NPY_DOUBLE, 1, dims) < 0 ||
        (rest != Py_None && ss_py_check_exact_array(rest, "rest_lengths", NPY_DOUBLE, 1, dims) < 0))
        return NULL;
    size_t first;
    ss_status st =
        ss_system_add_springs(sys, (size_t)count, PyArray_DATA((PyArrayObject *)pairs),
                              PyArray_DATA((PyArrayObject *)k), PyArray_DATA((PyArrayObject *)c),
                              rest == Py_None ? NULL : PyArray_DATA((PyArrayObject *)rest), &first);
    if (st)
        return ss_py_raise_status(sys, st);
    return PyLong_FromSize_t(first);
}

PyObject *ss_py_system_add_faces(SystemObject *self, PyObject *tri) {
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    npy_intp count = ss_py_leading_dim(tri);
    npy_intp dims[2] = {count, 3};
    if (ss_py_check_exact_array(tri, "faces", NPY_INT64, 2, dims) < 0)
        return NULL;
    size_t first;
    ss_status st =
        ss_system_add_faces(sys, (size_t)count, PyArray_DATA((PyArrayObject *)tri), &first);
    if (st)
        return ss_py_raise_status(sys, st);
    return PyLong_FromSize_t(first);
}

/* Parse a 1-D int64 index array for the methods below. */
static int index_array(PyObject *arr, const int64_t **data, size_t *count) {
    npy_intp dims[1] = {-1};
    if (ss_py_check_exact_array(arr, "indices", NPY_INT64, 1, dims) < 0)
        return -1;
    *data = PyArray_DATA((PyArrayObject *)arr);
    *count = (size_t)PyArray_DIM((PyArrayObject *)arr, 0);
    return 0;
}

PyObject *ss_py_system_remove_springs(SystemObject *self, PyObject *arr) {
    ss_system *sys = ss_py_system(self);
    const int64_t *idx;
    size_t count;
    if (!sys || index_array(arr, &idx, &count) < 0)
        return NULL;
    ss_status st = ss_system_remove_springs(sys, count, idx);
    if (st)
        return ss_py_raise_status(sys, st);
    Py_RETURN_NONE;
}

PyObject *ss_py_system_remove_nodes(SystemObject *self, PyObject *arr) {
    ss_system *sys = ss_py_system(self);
    const int64_t *idx;
    size_t count;
    if (!sys || index_array(arr, &idx, &count) < 0)
        return NULL;
    npy_intp dims[1] = {(npy_intp)sys->num_nodes};
    PyObject *map = PyArray_SimpleNew(1, dims, NPY_INT64);
    if (!map)
        return NULL;
    ss_status st = ss_system_remove_nodes(sys, count, idx, PyArray_DATA((PyArrayObject *)map));
    if (st) {
        Py_DECREF(map);
        return ss_py_raise_status(sys, st);
    }
    return map;
}

PyObject *ss_py_system_validate(SystemObject *self, PyObject *unused) {
    (void)unused;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    ss_status st = ss_system_validate(sys);
    if (st)
        return ss_py_raise_status(sys, st);
    /* save and pickle validate first: the twin they make starts its books for short
     * calls afresh, and so does the original (divergence.c) */
    ss_books_forget(sys);
    Py_RETURN_NONE;
}

PyObject *ss_py_system_set_pinned(SystemObject *self, PyObject *args) {
    PyObject *arr;
    int value;
    if (!PyArg_ParseTuple(args, "Op:_set_pinned", &arr, &value))
        return NULL;
    ss_system *sys = ss_py_system(self);
    const int64_t *idx;
    size_t count;
    if (!sys || index_array(arr, &idx, &count) < 0)
        return NULL;
    ss_status st = ss_system_set_pinned(sys, count, idx, (uint8_t)value);
    if (st)
        return ss_py_raise_status(sys, st);
    Py_RETURN_NONE;
}

/* ---- Torn springs ------------------------------------------------------ */

/* broken_springs() -> (K, 2) int32 node pairs torn since the last call; clears them. */
PyObject *ss_py_system_broken_springs(SystemObject *self, PyObject *unused) {
    (void)unused;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    npy_intp dims[2] = {(npy_intp)sys->num_broken, 2};
    PyObject *pairs = PyArray_SimpleNew(2, dims, NPY_INT32);
    if (!pairs)
        return NULL;
    if (sys->num_broken)
        memcpy(PyArray_DATA((PyArrayObject *)pairs), sys->broken,
               2 * sys->num_broken * sizeof(int32_t));
    sys->num_broken = 0;
    return pairs;
}

/* _tear(): remove the springs cut by earlier calls while tearing was deferred. */
PyObject *ss_py_system_tear(SystemObject *self, PyObject *unused) {
    (void)unused;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    ss_status st = ss_system_tear(sys);
    if (st)
        return ss_py_raise_status(sys, st);
    Py_RETURN_NONE;
}
