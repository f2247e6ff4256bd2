/* py_args.c - checks of the arguments every method passes on: arrays of exactly
 * the type, shape and layout the kernel reads, and integrator names. */
#define NO_IMPORT_ARRAY /* module.c imports NumPy's C API: see py_system.h */
#include "py_system.h"

#include <string.h>

/* The length of an array's first axis; 0 for anything else, a 0-d array included
 * (whose shape has no first entry to read), so that ss_py_check_exact_array reports it. */
npy_intp ss_py_leading_dim(PyObject *obj) {
    if (!PyArray_Check(obj) || PyArray_NDIM((PyArrayObject *)obj) < 1)
        return 0;
    return PyArray_DIM((PyArrayObject *)obj, 0);
}

/* `arr` must be an ndarray of exactly this type, shape and C layout. */
int ss_py_check_exact_array(PyObject *arr, const char *what, int typenum, int nd,
                            const npy_intp *dims) {
    if (!PyArray_Check(arr)) {
        PyErr_Format(PyExc_TypeError, "%s must be a numpy array, not %.100s", what,
                     Py_TYPE(arr)->tp_name);
        return -1;
    }
    PyArrayObject *a = (PyArrayObject *)arr;
    if (PyArray_TYPE(a) != typenum || !PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISALIGNED(a)) {
        PyErr_Format(PyExc_TypeError, "%s must be a C-contiguous array of the kernel's dtype",
                     what);
        return -1;
    }
    int ok = PyArray_NDIM(a) == nd;
    for (int k = 0; ok && k < nd; k++)
        ok = dims[k] < 0 || PyArray_DIM(a, k) == dims[k];
    if (!ok) {
        PyErr_Format(PyExc_ValueError, "%s has the wrong shape", what);
        return -1;
    }
    return 0;
}

/* The method named by `obj` (a str), or -1 with ValueError listing the valid names. */
int ss_py_parse_method(PyObject *obj) {
    if (!PyUnicode_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "method must be a str, not %.100s", Py_TYPE(obj)->tp_name);
        return -1;
    }
    Py_ssize_t length;
    const char *name = PyUnicode_AsUTF8AndSize(obj, &length);
    if (!name)
        return -1;
    /* "rk4\0junk" would read as "rk4" in C: a name with a NUL in it is no name. */
    int method = (size_t)length == strlen(name) ? ss_method_from_name(name) : -1;
    if (method < 0) {
        char valid[256] = "";
        for (int m = 0; m < SS_METHOD_COUNT; m++) {
            strncat(valid, m ? ", " : "", sizeof valid - strlen(valid) - 1);
            strncat(valid, ss_method_name(m), sizeof valid - strlen(valid) - 1);
        }
        PyErr_Format(PyExc_ValueError, "unknown method %R; valid methods are: %s", obj, valid);
        return -1;
    }
    return method;
}
