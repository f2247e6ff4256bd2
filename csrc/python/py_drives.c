/* py_drives.c - drives (drives.c): adding, stopping and reading them, and the hook
 * through which a step calls the Python function of a drive that follows one.
 *
 * The kernel keeps every drive; Python keeps only the functions, in the System's
 * instance dictionary as `_drive_paths` (drive id -> callable), where the garbage
 * collector sees them. */
#define NO_IMPORT_ARRAY /* module.c imports NumPy's C API: see py_system.h */
#include "py_system.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* An int64 array of node indices, (count,), checked for the kernel. */
static int node_array(PyObject *arr, const int64_t **idx, size_t *count) {
    npy_intp dims[1] = {-1};
    if (ss_py_check_exact_array(arr, "nodes", NPY_INT64, 1, dims) < 0)
        return -1;
    *idx = PyArray_DATA((PyArrayObject *)arr);
    *count = (size_t)PyArray_DIM((PyArrayObject *)arr, 0);
    return 0;
}

/* _add_drive(kind, nodes, values, t0, width, rows, counter) -> id. nodes: (k,) int64;
 * values: LINE (2k, dim) float64, TARGETS (steps, k, dim) float64, HOOK None; rows:
 * HOOK (k,) int64 or None, else None. See ss_drive_spec. */
PyObject *ss_py_system_add_drive(SystemObject *self, PyObject *args) {
    int kind;
    PyObject *nodes, *values, *rows, *counter_obj;
    double t0;
    Py_ssize_t width;
    if (!PyArg_ParseTuple(args, "iOOdnOO:_add_drive", &kind, &nodes, &values, &t0, &width, &rows,
                          &counter_obj))
        return NULL;
    ss_system *sys = ss_py_system(self);
    ss_drive_spec spec = {0};
    if (!sys || node_array(nodes, &spec.nodes, &spec.count) < 0)
        return NULL;
    const npy_intp k = (npy_intp)spec.count;
    if (!PyLong_Check(counter_obj) || PyBool_Check(counter_obj)) {
        PyErr_SetString(PyExc_TypeError, "a drive's counter must be an int");
        return NULL;
    }
    const unsigned long long counter = PyLong_AsUnsignedLongLong(counter_obj);
    if (counter == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_SetString(PyExc_ValueError, "a drive's counter must be >= 0 and < 2**64");
        return NULL;
    }
    if (width < 0) {
        PyErr_Format(PyExc_ValueError, "a drive's width must be >= 0, got %zd", width);
        return NULL;
    }
    spec.kind = kind;
    spec.t0 = t0;
    spec.width = (size_t)width;
    spec.counter = (size_t)counter;
    if (kind == SS_DRIVE_LINE) {
        npy_intp dims[2] = {2 * k, sys->dim};
        if (ss_py_check_exact_array(values, "line", NPY_DOUBLE, 2, dims) < 0)
            return NULL;
        spec.values = PyArray_DATA((PyArrayObject *)values);
    } else if (kind == SS_DRIVE_TARGETS) {
        npy_intp dims[3] = {ss_py_leading_dim(values), k, sys->dim};
        if (ss_py_check_exact_array(values, "targets", NPY_DOUBLE, 3, dims) < 0)
            return NULL;
        spec.values = PyArray_DATA((PyArrayObject *)values);
        spec.steps = (size_t)dims[0];
    } else if (kind == SS_DRIVE_HOOK && rows != Py_None) {
        npy_intp dims[1] = {k};
        if (ss_py_check_exact_array(rows, "rows", NPY_INT64, 1, dims) < 0)
            return NULL;
        spec.rows = PyArray_DATA((PyArrayObject *)rows);
    }
    long id;
    ss_status st = ss_drives_add(sys, &spec, &id);
    return st ? ss_py_raise_status(sys, st) : PyLong_FromLong(id);
}

/* _undrive(nodes): stop driving these nodes ((k,) int64); the rest of their drives go on. */
PyObject *ss_py_system_undrive(SystemObject *self, PyObject *nodes) {
    ss_system *sys = ss_py_system(self);
    const int64_t *idx;
    size_t count;
    if (!sys || node_array(nodes, &idx, &count) < 0)
        return NULL;
    ss_status st = ss_drives_release(sys, count, idx);
    if (st)
        return ss_py_raise_status(sys, st);
    Py_RETURN_NONE;
}

/* _clear_drives(): no drive left. */
PyObject *ss_py_system_clear_drives(SystemObject *self, PyObject *unused) {
    (void)unused;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    ss_drives_clear(sys);
    Py_RETURN_NONE;
}

/* A new array of `nd` dims holding a copy of `count` items at `data`. */
static PyObject *array_copy(int nd, npy_intp *dims, int typenum, const void *data, size_t bytes) {
    PyObject *arr = PyArray_SimpleNew(nd, dims, typenum);
    if (arr && bytes)
        memcpy(PyArray_DATA((PyArrayObject *)arr), data, bytes);
    return arr;
}

/* One drive as (id, kind, nodes, counter, t0, values, width, rows): copies. */
static PyObject *drive_row(const ss_system *sys, size_t which) {
    ss_drive_spec d;
    const long id = ss_drives_get(sys, which, &d);
    npy_intp k = (npy_intp)d.count, dim = sys->dim;
    PyObject *nodes = array_copy(1, &k, NPY_INT64, d.nodes, d.count * sizeof(int64_t));
    PyObject *values = NULL, *rows = NULL;
    if (d.kind == SS_DRIVE_LINE) {
        npy_intp dims[2] = {2 * k, dim};
        values = array_copy(2, dims, NPY_DOUBLE, d.values, 2 * d.count * sizeof(double) * dim);
    } else if (d.kind == SS_DRIVE_TARGETS) {
        npy_intp dims[3] = {(npy_intp)d.steps, k, dim};
        values = array_copy(3, dims, NPY_DOUBLE, d.values,
                            d.steps * d.count * (size_t)dim * sizeof(double));
    } else {
        rows = array_copy(1, &k, NPY_INT64, d.rows, d.count * sizeof(int64_t));
    }
    if (!nodes || (d.kind != SS_DRIVE_HOOK && !values) || (d.kind == SS_DRIVE_HOOK && !rows)) {
        Py_XDECREF(nodes);
        Py_XDECREF(values);
        Py_XDECREF(rows);
        return NULL;
    }
    return Py_BuildValue("(liNKdNnN)", id, d.kind, nodes, (unsigned long long)d.counter, d.t0,
                         values ? values : Py_NewRef(Py_None), (Py_ssize_t)d.width,
                         rows ? rows : Py_NewRef(Py_None));
}

/* _drive_table() -> [(id, kind, nodes, counter, t0, values, width, rows), ...] in the
 * order the drives were added (values: a line's (2k, dim) starts and velocities, or the
 * (steps, k, dim) targets, else None; rows: a hook drive's (k,) rows, else None). */
PyObject *ss_py_system_drive_table(SystemObject *self, PyObject *unused) {
    (void)unused;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    const size_t count = ss_drives_count(sys);
    PyObject *table = PyList_New((Py_ssize_t)count);
    if (!table)
        return NULL;
    for (size_t k = 0; k < count; k++) {
        PyObject *row = drive_row(sys, k);
        if (!row) {
            Py_DECREF(table);
            return NULL;
        }
        PyList_SET_ITEM(table, (Py_ssize_t)k, row);
    }
    return table;
}

/* _hook_drives() -> [id, ...]: the ids of the drives that follow a function, in order. */
PyObject *ss_py_system_hook_drives(SystemObject *self, PyObject *unused) {
    (void)unused;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    PyObject *ids = PyList_New(0);
    for (size_t k = 0; ids && k < ss_drives_count(sys); k++) {
        ss_drive_spec d;
        const long id = ss_drives_get(sys, k, &d);
        if (d.kind != SS_DRIVE_HOOK)
            continue;
        PyObject *number = PyLong_FromLong(id);
        if (!number || PyList_Append(ids, number) < 0) {
            Py_XDECREF(number);
            Py_CLEAR(ids);
            break;
        }
        Py_DECREF(number);
    }
    return ids;
}

/* ---- The hook: a drive's Python function, called by the step ----------- */

/* "(2, 3)", "(3,)", "()": a shape as Python writes it. */
static void shape_text(char *out, size_t size, PyArrayObject *arr) {
    const int nd = PyArray_NDIM(arr);
    size_t used = (size_t)snprintf(out, size, "(");
    for (int k = 0; k < nd && used < size; k++)
        used += (size_t)snprintf(out + used, size - used, "%s%lld", k ? ", " : "",
                                 (long long)PyArray_DIM(arr, k));
    if (used < size)
        snprintf(out + used, size - used, nd == 1 ? ",)" : ")");
}

/* ValueError with a message that has a %g (which PyErr_Format lacks). */
static int value_error(const char *message) {
    PyErr_SetString(PyExc_ValueError, message);
    return -1;
}

/* Convert the function's value at t to (width, dim) finite doubles in out, as
 * np.broadcast_to(np.asarray(value), (width, dim)).astype(float) would, or -1 with
 * ValueError saying what is wrong with it. */
static int copy_targets(PyObject *value, double t, size_t width, int dim, double *out) {
    char message[300];
    PyArrayObject *arr = (PyArrayObject *)PyArray_FromAny(value, NULL, 0, 0, 0, NULL);
    if (!arr)
        return -1;
    if (!strchr("biuf", PyArray_DESCR(arr)->kind)) {
        PyObject *name = PyObject_Str((PyObject *)PyArray_DESCR(arr));
        const char *text = name ? PyUnicode_AsUTF8(name) : NULL;
        if (text)
            snprintf(message, sizeof message, "the drive path returned %s values at t = %g s", text,
                     t);
        Py_XDECREF(name);
        Py_DECREF(arr);
        return text ? value_error(message) : -1;
    }
    const int nd = PyArray_NDIM(arr);
    const npy_intp rows = nd == 2 ? PyArray_DIM(arr, 0) : 1;
    const npy_intp columns = nd >= 1 ? PyArray_DIM(arr, nd - 1) : 1;
    if (nd > 2 || (rows != 1 && (size_t)rows != width) || (columns != 1 && columns != dim)) {
        char shape[200];
        shape_text(shape, sizeof shape, arr);
        snprintf(message, sizeof message,
                 "the drive path returned shape %s at t = %g s; expected (%zu, %d)", shape, t,
                 width, dim);
        Py_DECREF(arr);
        return value_error(message);
    }
    PyArrayObject *doubles = (PyArrayObject *)PyArray_FromAny(
        (PyObject *)arr, PyArray_DescrFromType(NPY_DOUBLE), 0, 2,
        NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | NPY_ARRAY_FORCECAST, NULL);
    Py_DECREF(arr);
    if (!doubles)
        return -1;
    const double *data = PyArray_DATA(doubles);
    double probe = 0.0;
    for (npy_intp k = 0; k < rows * columns; k++)
        probe += 0.0 * data[k];
    if (probe != 0.0) {
        Py_DECREF(doubles);
        snprintf(message, sizeof message, "the drive path returned non-finite targets at t = %g s",
                 t);
        return value_error(message);
    }
    for (size_t r = 0; r < width; r++)
        for (int c = 0; c < dim; c++)
            out[r * (size_t)dim + (size_t)c] =
                data[(rows == 1 ? 0 : (npy_intp)r) * columns + (columns == 1 ? 0 : c)];
    Py_DECREF(doubles);
    return 0;
}

/* ss_drive_hook's function: call drive id's Python function at t and convert what it
 * returns into out. Runs with the GIL held (a step with hook drives keeps it). */
static int call_path(void *context, long id, double t, size_t width, double *out) {
    ss_py_drive_paths *paths = context;
    PyObject *key = PyLong_FromLong(id);
    if (!key)
        return -1;
    PyObject *path = PyDict_GetItemWithError(paths->functions, key); /* borrowed */
    Py_DECREF(key);
    if (!path) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_RuntimeError, "drive %ld follows a function the System lost", id);
        return -1;
    }
    Py_INCREF(path); /* the call could drop it from the dictionary */
    PyObject *time = PyFloat_FromDouble(t);
    PyObject *value = time ? PyObject_CallOneArg(path, time) : NULL;
    Py_XDECREF(time);
    Py_DECREF(path);
    if (!value)
        return -1;
    const int result = copy_targets(value, t, width, paths->dim, out);
    Py_DECREF(value);
    return result;
}

int ss_py_drive_paths_begin(SystemObject *self, ss_system *sys, ss_py_drive_paths *paths) {
    PyObject *functions = PyObject_GetAttrString((PyObject *)self, "_drive_paths");
    if (!functions)
        return -1;
    if (!PyDict_Check(functions)) {
        PyErr_Format(PyExc_TypeError, "_drive_paths must be a dict, not %.100s",
                     Py_TYPE(functions)->tp_name);
        Py_DECREF(functions);
        return -1;
    }
    paths->functions = functions;
    paths->dim = sys->dim;
    sys->drive_hook = (ss_drive_hook){call_path, paths};
    self->in_step = 1;
    return 0;
}

void ss_py_drive_paths_end(SystemObject *self, ss_system *sys, ss_py_drive_paths *paths) {
    self->in_step = 0;
    sys->drive_hook = (ss_drive_hook){0};
    Py_CLEAR(paths->functions);
}
