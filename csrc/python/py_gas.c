/* py_gas.c - gas bodies: closed boundaries filled with an ideal gas (pressure.c). */
#define NO_IMPORT_ARRAY /* module.c imports NumPy's C API: see py_system.h */
#include "py_system.h"

#include <string.h>

/* ---- Gas bodies -------------------------------------------------------- */

/* _add_pressure(elements, nrt, ambient) -> id; elements: (K, dim) int64. */
PyObject *ss_py_system_add_pressure(SystemObject *self, PyObject *args) {
    PyObject *elements;
    double nrt, ambient;
    if (!PyArg_ParseTuple(args, "Odd:_add_pressure", &elements, &nrt, &ambient))
        return NULL;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    npy_intp count = ss_py_leading_dim(elements);
    npy_intp dims[2] = {count, sys->dim};
    if (ss_py_check_exact_array(elements, "boundary", NPY_INT64, 2, dims) < 0)
        return NULL;
    long id;
    ss_status st = ss_system_add_pressure(
        sys, (size_t)count, PyArray_DATA((PyArrayObject *)elements), nrt, ambient, &id);
    return st ? ss_py_raise_status(sys, st) : PyLong_FromLong(id);
}

/* _set_pressure(id, nrt, ambient) */
PyObject *ss_py_system_set_pressure(SystemObject *self, PyObject *args) {
    long id;
    double nrt, ambient;
    if (!PyArg_ParseTuple(args, "ldd:_set_pressure", &id, &nrt, &ambient))
        return NULL;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    ss_status st = ss_system_set_pressure(sys, id, nrt, ambient);
    if (st)
        return ss_py_raise_status(sys, st);
    Py_RETURN_NONE;
}

PyObject *ss_py_system_remove_pressure(SystemObject *self, PyObject *arg) {
    return ss_py_remove_by_id(self, arg, ss_system_remove_pressure);
}

/* _pressure_bodies() -> [(id, nrt, ambient, volume), ...] in the order added. */
PyObject *ss_py_system_pressure_bodies(SystemObject *self, PyObject *unused) {
    (void)unused;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    PyObject *list = PyList_New((Py_ssize_t)sys->num_bodies);
    if (!list)
        return NULL;
    for (size_t k = 0; k < sys->num_bodies; k++) {
        const ss_pressure_body *b = &sys->bodies[k];
        PyObject *item = Py_BuildValue("(lddd)", b->id, b->nrt, b->ambient,
                                       ss_pressure_volume(sys, b, SS_DOUBLES(sys, SS_POSITIONS)));
        if (!item) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)k, item);
    }
    return list;
}

/* _pressure_elements(id) -> (K, dim) int32, a copy of the body's outward boundary. */
PyObject *ss_py_system_pressure_elements(SystemObject *self, PyObject *arg) {
    long id = PyLong_AsLong(arg);
    if (id == -1 && PyErr_Occurred())
        return NULL;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    const ss_pressure_body *body = ss_system_find_pressure(sys, id);
    if (!body) {
        PyErr_Format(PyExc_ValueError, "there is no pressure body %ld in this system", id);
        return NULL;
    }
    npy_intp dims[2] = {(npy_intp)body->count, sys->dim};
    PyObject *arr = PyArray_SimpleNew(2, dims, NPY_INT32);
    if (arr)
        memcpy(PyArray_DATA((PyArrayObject *)arr), body->elements,
               body->count * (size_t)sys->dim * sizeof(int32_t));
    return arr;
}
