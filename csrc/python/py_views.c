/* py_views.c - zero-copy NumPy views of the system's arrays, the capsules that keep
 * their memory alive, and writing a whole array at once. */
#define NO_IMPORT_ARRAY /* module.c imports NumPy's C API: see py_system.h */
#include "py_system.h"

#include <math.h>
#include <string.h>

/* ---- Views ------------------------------------------------------------- */

typedef struct {
    const char *name;
    int which; /* an ss_array, or -1 gravity, -2 wind */
    int typenum;
    int writable;
} ArraySpec;

static const ArraySpec array_specs[] = {
    {"positions", SS_POSITIONS, NPY_DOUBLE, 1},
    {"velocities", SS_VELOCITIES, NPY_DOUBLE, 1},
    {"masses", SS_MASSES, NPY_DOUBLE, 1},
    {"pinned", SS_PINNED, NPY_BOOL, 1},
    {"external_forces", SS_EXTERNAL, NPY_DOUBLE, 1},
    {"springs", SS_SPRINGS, NPY_INT32, 0},
    {"rest_lengths", SS_REST_LENGTHS, NPY_DOUBLE, 1},
    {"stiffness", SS_STIFFNESS, NPY_DOUBLE, 1},
    {"damping", SS_DAMPING, NPY_DOUBLE, 1},
    {"faces", SS_FACES, NPY_INT32, 0},
    {"break_strains", SS_BREAK_STRAINS, NPY_DOUBLE, 1},
    {"uvs", SS_UVS, NPY_DOUBLE, 1},
    {"rest_positions", SS_REST_POSITIONS, NPY_DOUBLE, 1},
    {"radii", SS_RADII, NPY_DOUBLE, 1},
    {"groups", SS_GROUPS, NPY_INT32, 1},
    {"_prev_accel", SS_PREV_ACCEL, NPY_DOUBLE, 1},
    {"gravity", -1, NPY_DOUBLE, 1},
    {"wind", -2, NPY_DOUBLE, 1},
};
#define NUM_ARRAY_SPECS (sizeof array_specs / sizeof array_specs[0])

static const ArraySpec *find_spec(PyObject *name) {
    if (!PyUnicode_Check(name)) {
        PyErr_SetString(PyExc_TypeError, "array name must be a str");
        return NULL;
    }
    const char *s = PyUnicode_AsUTF8(name);
    if (!s)
        return NULL;
    for (size_t k = 0; k < NUM_ARRAY_SPECS; k++)
        if (strcmp(s, array_specs[k].name) == 0)
            return &array_specs[k];
    PyErr_Format(PyExc_ValueError, "no array named %R", name);
    return NULL;
}

static const char buffer_capsule_name[] = "springsim.buffer";

static void buffer_capsule_destructor(PyObject *capsule) {
    ss_buffer *buf = PyCapsule_GetPointer(capsule, buffer_capsule_name);
    if (buf)
        ss_buffer_release(buf);
    else
        PyErr_WriteUnraisable(capsule);
}

/* Shape of a spec's array now: rows x columns, 1-D for single-column node/spring data. */
static int spec_shape(const ss_system *sys, const ArraySpec *spec, npy_intp dims[2]) {
    if (spec->which < 0) {
        dims[0] = sys->dim;
        return 1;
    }
    dims[0] = (npy_intp)ss_array_rows(sys, spec->which);
    dims[1] = (npy_intp)ss_array_columns(sys, spec->which);
    return dims[1] > 1 ? 2 : 1;
}

/* A zero-copy view of one of the system's arrays. Its base is a capsule holding a
 * reference to the memory block, so the view stays valid after the system moves
 * to a new block or is freed. gravity and wind live in the system itself: their
 * views keep the System object alive instead. */
static PyObject *make_view(SystemObject *self, const ArraySpec *spec) {
    ss_system *sys = self->sys;
    npy_intp dims[2];
    int nd = spec_shape(sys, spec, dims);
    void *data;
    PyObject *owner;
    if (spec->which < 0) {
        data = spec->which == -1 ? sys->gravity : sys->wind;
        owner = (PyObject *)self;
        Py_INCREF(owner);
    } else {
        /* A view of a cold array makes it real: a view needs memory to show. */
        if (ss_system_materialize(sys, spec->which) != SS_OK)
            return ss_py_raise_status(sys, SS_ERR_NOMEM);
        ss_buffer *buf = sys->arrays[spec->which];
        data = buf->data;
        if (spec->writable) { /* whatever the view writes is checked before the next step */
            ss_system_mark_unchecked(sys, spec->which);
            ss_books_note_view(sys, spec->which); /* and whether it wrote, by the books */
        }
        owner = PyCapsule_New(buf, buffer_capsule_name, buffer_capsule_destructor);
        if (!owner)
            return NULL;
        ss_buffer_retain(buf);
    }
    PyArray_Descr *descr = PyArray_DescrFromType(spec->typenum);
    if (!descr) {
        Py_DECREF(owner);
        return NULL;
    }
    int flags =
        NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | (spec->writable ? NPY_ARRAY_WRITEABLE : 0);
    /* PyArray_NewFromDescr steals descr, even on failure. */
    PyObject *view = PyArray_NewFromDescr(&PyArray_Type, descr, nd, dims, NULL, data, flags, NULL);
    if (!view) {
        Py_DECREF(owner);
        return NULL;
    }
    /* PyArray_SetBaseObject steals owner, even on failure. */
    if (PyArray_SetBaseObject((PyArrayObject *)view, owner) < 0) {
        Py_DECREF(view);
        return NULL;
    }
    return view;
}

PyObject *ss_py_system_view(SystemObject *self, PyObject *name) {
    if (!ss_py_system_query(self)) /* (a drive's function may look at its System) */
        return NULL;
    const ArraySpec *spec = find_spec(name);
    return spec ? make_view(self, spec) : NULL;
}

PyObject *ss_py_system_set_array(SystemObject *self, PyObject *args) {
    PyObject *name, *arr;
    if (!PyArg_ParseTuple(args, "OO:_set_array", &name, &arr))
        return NULL;
    ss_system *sys = ss_py_system(self);
    const ArraySpec *spec = sys ? find_spec(name) : NULL;
    if (!spec)
        return NULL;
    if (!spec->writable) {
        PyErr_Format(PyExc_AttributeError, "%s is read-only", spec->name);
        return NULL;
    }
    npy_intp dims[2];
    int nd = spec_shape(sys, spec, dims);
    if (ss_py_check_exact_array(arr, spec->name, spec->typenum, nd, dims) < 0)
        return NULL;
    const void *data = PyArray_DATA((PyArrayObject *)arr);
    if (spec->which < 0) {
        const double *v = data;
        for (int k = 0; k < sys->dim; k++)
            if (!isfinite(v[k])) {
                PyErr_Format(PyExc_ValueError, "%s must be finite", spec->name);
                return NULL;
            }
        memcpy(spec->which == -1 ? sys->gravity : sys->wind, v, sys->dim * sizeof(double));
        Py_RETURN_NONE;
    }
    ss_status st = ss_system_set_array(sys, spec->which, data);
    if (st)
        return ss_py_raise_status(sys, st);
    Py_RETURN_NONE;
}
