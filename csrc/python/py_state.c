/* py_state.c - the state's one definition, seen from Python: _core.STATE_FIELDS (the
 * table of state.c, as (name, kind) pairs), System._state() (every field, copied) and
 * System._set_state(values) (every field, checked first, all or nothing). The save
 * format and pickling go through these (springsim.files.npz); copy() copies the
 * kernel's struct and arrays whole. */
#define NO_IMPORT_ARRAY /* module.c imports NumPy's C API: see py_system.h */
#include "py_system.h"

#include <string.h>

static const char *const kind_names[] = {
    [SS_FIELD_ARRAY] = "array",
    [SS_FIELD_REAL] = "real",
    [SS_FIELD_FLAG] = "flag",
    [SS_FIELD_COUNT] = "count",
};

PyObject *ss_py_state_fields(void) {
    PyObject *fields = PyTuple_New(SS_STATE_FIELD_COUNT);
    if (!fields)
        return NULL;
    for (int f = 0; f < SS_STATE_FIELD_COUNT; f++) {
        PyObject *pair =
            Py_BuildValue("(ss)", ss_state_fields[f].name, kind_names[ss_state_fields[f].kind]);
        if (!pair) {
            Py_DECREF(fields);
            return NULL;
        }
        PyTuple_SET_ITEM(fields, f, pair);
    }
    return fields;
}

static void *state_member(ss_state *state, int f) {
    return (char *)state + ss_state_fields[f].offset;
}

/* One field's value, a new object: a copy for an array. */
static PyObject *field_value(ss_system *sys, int f) {
    const ss_state_field *field = &ss_state_fields[f];
    switch (field->kind) {
    case SS_FIELD_ARRAY: {
        npy_intp shape[2] = {(npy_intp)sys->num_nodes, sys->dim};
        PyObject *copy = PyArray_ZEROS(2, shape, NPY_FLOAT64, 0);
        if (copy && !ss_array_absent(sys, field->array))
            memcpy(PyArray_DATA((PyArrayObject *)copy), SS_DOUBLES(sys, field->array),
                   sys->num_nodes * (size_t)sys->dim * sizeof(double));
        return copy;
    }
    case SS_FIELD_REAL:
        return PyFloat_FromDouble(*(double *)state_member(&sys->state, f));
    case SS_FIELD_FLAG:
        return PyBool_FromLong(*(int *)state_member(&sys->state, f));
    case SS_FIELD_COUNT:
        return PyLong_FromSize_t(*(size_t *)state_member(&sys->state, f));
    }
    PyErr_SetString(PyExc_SystemError, "unknown state field kind");
    return NULL;
}

/* _state() -> {name: value} for every field of the state. */
PyObject *ss_py_system_state(SystemObject *self, PyObject *unused) {
    (void)unused;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    PyObject *values = PyDict_New();
    if (!values)
        return NULL;
    for (int f = 0; f < SS_STATE_FIELD_COUNT; f++) {
        PyObject *value = field_value(sys, f);
        if (!value || PyDict_SetItemString(values, ss_state_fields[f].name, value) < 0) {
            Py_XDECREF(value);
            Py_DECREF(values);
            return NULL;
        }
        Py_DECREF(value);
    }
    return values;
}

/* Read field f from `value` into `state` (scalars) or `*array` (a new reference to a
 * contiguous float64 (N, dim) array). 0, or -1 with TypeError / ValueError. */
static int read_field(ss_system *sys, int f, PyObject *value, ss_state *state, PyObject **array) {
    const ss_state_field *field = &ss_state_fields[f];
    switch (field->kind) {
    case SS_FIELD_ARRAY: {
        PyObject *a = PyArray_FROMANY(value, NPY_FLOAT64, 0, 0, NPY_ARRAY_IN_ARRAY);
        if (!a)
            return -1;
        const npy_intp *shape = PyArray_SHAPE((PyArrayObject *)a);
        if (PyArray_NDIM((PyArrayObject *)a) != 2 || shape[0] != (npy_intp)sys->num_nodes ||
            shape[1] != sys->dim) {
            PyErr_Format(PyExc_ValueError, "state field %s must have shape (%zu, %d)", field->name,
                         sys->num_nodes, sys->dim);
            Py_DECREF(a);
            return -1;
        }
        *array = a;
        return 0;
    }
    case SS_FIELD_REAL: {
        const double v = PyFloat_AsDouble(value);
        if (v == -1.0 && PyErr_Occurred())
            return -1;
        *(double *)state_member(state, f) = v;
        return 0;
    }
    case SS_FIELD_FLAG: {
        const int truth = PyObject_IsTrue(value);
        if (truth < 0)
            return -1;
        *(int *)state_member(state, f) = truth;
        return 0;
    }
    case SS_FIELD_COUNT: {
        const Py_ssize_t n = PyNumber_AsSsize_t(value, PyExc_OverflowError);
        if (n == -1 && PyErr_Occurred())
            return -1;
        if (n < 0) {
            PyErr_Format(PyExc_ValueError, "state field %s must be >= 0, got %zd", field->name, n);
            return -1;
        }
        *(size_t *)state_member(state, f) = (size_t)n;
        return 0;
    }
    }
    PyErr_SetString(PyExc_SystemError, "unknown state field kind");
    return -1;
}

/* _set_state(values): every field of the state from a mapping with exactly those keys;
 * nothing changes on error. */
PyObject *ss_py_system_set_state(SystemObject *self, PyObject *values) {
    if (!PyDict_Check(values)) {
        PyErr_Format(PyExc_TypeError, "_set_state takes a dict, not %.100s",
                     Py_TYPE(values)->tp_name);
        return NULL;
    }
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    if (PyDict_Size(values) != SS_STATE_FIELD_COUNT) {
        PyErr_Format(PyExc_ValueError, "_set_state takes the %d state fields, got %zd keys",
                     SS_STATE_FIELD_COUNT, PyDict_Size(values));
        return NULL;
    }
    ss_state state = sys->state;
    PyObject *arrays[SS_STATE_FIELD_COUNT] = {NULL};
    const double *data[SS_STATE_FIELD_COUNT] = {NULL};
    PyObject *result = NULL;
    for (int f = 0; f < SS_STATE_FIELD_COUNT; f++) {
        PyObject *value = PyDict_GetItemString(values, ss_state_fields[f].name); /* borrowed */
        if (!value) {
            PyErr_Format(PyExc_KeyError, "_set_state: the state field %s is missing",
                         ss_state_fields[f].name);
            goto done;
        }
        if (read_field(sys, f, value, &state, &arrays[f]) < 0)
            goto done;
        if (arrays[f])
            data[f] = PyArray_DATA((PyArrayObject *)arrays[f]);
    }
    const ss_status st = ss_system_set_state(sys, data, &state);
    if (st)
        ss_py_raise_status(sys, st);
    else
        result = Py_NewRef(Py_None);
done:
    for (int f = 0; f < SS_STATE_FIELD_COUNT; f++)
        Py_XDECREF(arrays[f]);
    return result;
}
