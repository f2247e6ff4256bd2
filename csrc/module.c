/* module.c - CPython + NumPy glue: the _core.System type, zero-copy views, errors.
 *
 * The only file that includes Python.h. Argument conversion and broadcasting are
 * done by springsim/system.py; here every argument is checked again for exactly
 * the type, shape and layout the kernel reads, because the kernel trusts them. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <string.h>

#define PY_ARRAY_UNIQUE_SYMBOL springsim_ARRAY_API
#include <numpy/arrayobject.h>

#include "springsim.h"

static PyObject *UnstableError;
static PyObject *ConvergenceWarning;

/* ---- The System object ------------------------------------------------- */

typedef struct {
    PyObject_HEAD ss_system *sys;
    /* Set while a step runs without the GIL: any other call that would step or
     * resize this system raises RuntimeError instead of racing it. */
    int busy;
    /* Nodes are driven (system.py sets it): step() hands over to _driven_step. */
    int driven;
} SystemObject;

static PyTypeObject SystemType;

/* Raise the Python exception for a kernel status; returns NULL for `return`. */
static PyObject *raise_status(ss_system *sys, ss_status st) {
    switch (st) {
    case SS_ERR_NOMEM: /* PyErr_NoMemory() would say nothing of what ran out */
        PyErr_SetString(PyExc_MemoryError, sys->error[0] ? sys->error : "out of memory");
        return NULL;
    case SS_ERR_INDEX:
    case SS_ERR_VALUE:
        PyErr_SetString(PyExc_ValueError, sys->error);
        return NULL;
    case SS_ERR_UNSTABLE:
        PyErr_SetString(UnstableError, sys->error);
        return NULL;
    default:
        PyErr_Format(PyExc_SystemError, "springsim kernel returned status %d", (int)st);
        return NULL;
    }
}

/* The system, or NULL with RuntimeError when it is not initialised or is busy in
 * another thread's step. */
static ss_system *writable_system(SystemObject *self) {
    if (!self->sys) {
        PyErr_SetString(PyExc_RuntimeError, "System.__init__ was not called");
        return NULL;
    }
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError,
                        "this System is being stepped in another thread; a System may be "
                        "stepped or resized by one thread at a time");
        return NULL;
    }
    return self->sys;
}

static ss_system *readable_system(SystemObject *self) {
    if (!self->sys)
        PyErr_SetString(PyExc_RuntimeError, "System.__init__ was not called");
    return self->sys;
}

static PyObject *System_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    (void)args;
    (void)kwds;
    SystemObject *self = (SystemObject *)type->tp_alloc(type, 0);
    if (self) {
        self->sys = NULL;
        self->busy = 0;
        self->driven = 0;
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
    Py_TYPE(self)->tp_free((PyObject *)self);
}

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
            return raise_status(sys, SS_ERR_NOMEM);
        ss_buffer *buf = sys->arrays[spec->which];
        data = buf->data;
        if (spec->writable) /* whatever the view writes is checked before the next step */
            ss_system_mark_unchecked(sys, spec->which);
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

static PyObject *System_view(SystemObject *self, PyObject *name) {
    if (!readable_system(self))
        return NULL;
    const ArraySpec *spec = find_spec(name);
    return spec ? make_view(self, spec) : NULL;
}

/* The length of an array's first axis; 0 for anything else, a 0-d array included
 * (whose shape has no first entry to read), so that check_exact_array reports it. */
static npy_intp leading_dim(PyObject *obj) {
    if (!PyArray_Check(obj) || PyArray_NDIM((PyArrayObject *)obj) < 1)
        return 0;
    return PyArray_DIM((PyArrayObject *)obj, 0);
}

/* `arr` must be an ndarray of exactly this type, shape and C layout. */
static int check_exact_array(PyObject *arr, const char *what, int typenum, int nd,
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

static PyObject *System_set_array(SystemObject *self, PyObject *args) {
    PyObject *name, *arr;
    if (!PyArg_ParseTuple(args, "OO:_set_array", &name, &arr))
        return NULL;
    ss_system *sys = writable_system(self);
    const ArraySpec *spec = sys ? find_spec(name) : NULL;
    if (!spec)
        return NULL;
    if (!spec->writable) {
        PyErr_Format(PyExc_AttributeError, "%s is read-only", spec->name);
        return NULL;
    }
    npy_intp dims[2];
    int nd = spec_shape(sys, spec, dims);
    if (check_exact_array(arr, spec->name, spec->typenum, nd, dims) < 0)
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
        return raise_status(sys, st);
    Py_RETURN_NONE;
}

/* ---- Topology ---------------------------------------------------------- */

static PyObject *System_add_nodes(SystemObject *self, PyObject *args) {
    PyObject *x, *v, *m, *pinned;
    if (!PyArg_ParseTuple(args, "OOOO:_add_nodes", &x, &v, &m, &pinned))
        return NULL;
    ss_system *sys = writable_system(self);
    if (!sys)
        return NULL;
    npy_intp count = leading_dim(x);
    npy_intp node_dims[2] = {count, sys->dim}, mass_dims[1] = {count};
    if (check_exact_array(x, "positions", NPY_DOUBLE, 2, node_dims) < 0 ||
        (v != Py_None && check_exact_array(v, "velocities", NPY_DOUBLE, 2, node_dims) < 0) ||
        check_exact_array(m, "masses", NPY_DOUBLE, 1, mass_dims) < 0 ||
        check_exact_array(pinned, "pinned", NPY_BOOL, 1, mass_dims) < 0)
        return NULL;
    size_t first;
    ss_status st = ss_system_add_nodes(sys, (size_t)count, PyArray_DATA((PyArrayObject *)x),
                                       v == Py_None ? NULL : PyArray_DATA((PyArrayObject *)v),
                                       PyArray_DATA((PyArrayObject *)m),
                                       PyArray_DATA((PyArrayObject *)pinned), &first);
    if (st)
        return raise_status(sys, st);
    return PyLong_FromSize_t(first);
}

static PyObject *System_add_springs(SystemObject *self, PyObject *args) {
    PyObject *pairs, *k, *c, *rest;
    if (!PyArg_ParseTuple(args, "OOOO:_add_springs", &pairs, &k, &c, &rest))
        return NULL;
    ss_system *sys = writable_system(self);
    if (!sys)
        return NULL;
    npy_intp count = leading_dim(pairs);
    npy_intp pair_dims[2] = {count, 2}, dims[1] = {count};
    if (check_exact_array(pairs, "pairs", NPY_INT64, 2, pair_dims) < 0 ||
        check_exact_array(k, "stiffness", NPY_DOUBLE, 1, dims) < 0 ||
        check_exact_array(c, "damping", NPY_DOUBLE, 1, dims) < 0 ||
        (rest != Py_None && check_exact_array(rest, "rest_lengths", NPY_DOUBLE, 1, dims) < 0))
        return NULL;
    size_t first;
    ss_status st =
        ss_system_add_springs(sys, (size_t)count, PyArray_DATA((PyArrayObject *)pairs),
                              PyArray_DATA((PyArrayObject *)k), PyArray_DATA((PyArrayObject *)c),
                              rest == Py_None ? NULL : PyArray_DATA((PyArrayObject *)rest), &first);
    if (st)
        return raise_status(sys, st);
    return PyLong_FromSize_t(first);
}

static PyObject *System_add_faces(SystemObject *self, PyObject *tri) {
    ss_system *sys = writable_system(self);
    if (!sys)
        return NULL;
    npy_intp count = leading_dim(tri);
    npy_intp dims[2] = {count, 3};
    if (check_exact_array(tri, "faces", NPY_INT64, 2, dims) < 0)
        return NULL;
    size_t first;
    ss_status st =
        ss_system_add_faces(sys, (size_t)count, PyArray_DATA((PyArrayObject *)tri), &first);
    if (st)
        return raise_status(sys, st);
    return PyLong_FromSize_t(first);
}

/* Parse a 1-D int64 index array for the methods below. */
static int index_array(PyObject *arr, const int64_t **data, size_t *count) {
    npy_intp dims[1] = {-1};
    if (check_exact_array(arr, "indices", NPY_INT64, 1, dims) < 0)
        return -1;
    *data = PyArray_DATA((PyArrayObject *)arr);
    *count = (size_t)PyArray_DIM((PyArrayObject *)arr, 0);
    return 0;
}

static PyObject *System_remove_springs(SystemObject *self, PyObject *arr) {
    ss_system *sys = writable_system(self);
    const int64_t *idx;
    size_t count;
    if (!sys || index_array(arr, &idx, &count) < 0)
        return NULL;
    ss_status st = ss_system_remove_springs(sys, count, idx);
    if (st)
        return raise_status(sys, st);
    Py_RETURN_NONE;
}

static PyObject *System_remove_nodes(SystemObject *self, PyObject *arr) {
    ss_system *sys = writable_system(self);
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
        return raise_status(sys, st);
    }
    return map;
}

static PyObject *System_validate(SystemObject *self, PyObject *unused) {
    (void)unused;
    ss_system *sys = readable_system(self);
    if (!sys)
        return NULL;
    ss_status st = ss_system_validate(sys);
    if (st)
        return raise_status(sys, st);
    Py_RETURN_NONE;
}

/* ---- Colliders --------------------------------------------------------- */

/* Fill c's vector (normal or center) from an exact (dim,) float64 array. */
static int collider_vector(ss_system *sys, PyObject *arr, double out[3]) {
    npy_intp dims[1] = {sys->dim};
    if (check_exact_array(arr, "collider vector", NPY_DOUBLE, 1, dims) < 0)
        return -1;
    const double *data = PyArray_DATA((PyArrayObject *)arr);
    for (int k = 0; k < 3; k++)
        out[k] = k < sys->dim ? data[k] : 0.0;
    return 0;
}

/* _add_collider(kind, vector, scalar, restitution, friction) -> id; vector and scalar
 * are the normal and offset of a plane, the center and radius of a sphere. */
static PyObject *System_add_collider(SystemObject *self, PyObject *args) {
    int kind;
    PyObject *vector;
    double scalar, restitution, friction;
    if (!PyArg_ParseTuple(args, "iOddd:_add_collider", &kind, &vector, &scalar, &restitution,
                          &friction))
        return NULL;
    ss_system *sys = writable_system(self);
    if (!sys)
        return NULL;
    ss_collider c = {.kind = kind, .restitution = restitution, .friction = friction};
    if (collider_vector(sys, vector, kind == SS_PLANE ? c.normal : c.center) < 0)
        return NULL;
    if (kind == SS_PLANE)
        c.offset = scalar;
    else
        c.radius = scalar;
    long id;
    ss_status st = ss_system_add_collider(sys, c, &id);
    return st ? raise_status(sys, st) : PyLong_FromLong(id);
}

/* _set_collider(id, vector, scalar, restitution, friction): replace every value. */
static PyObject *System_set_collider(SystemObject *self, PyObject *args) {
    long id;
    PyObject *vector;
    double scalar, restitution, friction;
    if (!PyArg_ParseTuple(args, "lOddd:_set_collider", &id, &vector, &scalar, &restitution,
                          &friction))
        return NULL;
    ss_system *sys = writable_system(self);
    if (!sys)
        return NULL;
    ss_collider *old = ss_system_find_collider(sys, id);
    if (!old) {
        PyErr_SetString(PyExc_ValueError, "this collider was removed from the system");
        return NULL;
    }
    ss_collider c = *old;
    c.restitution = restitution;
    c.friction = friction;
    if (collider_vector(sys, vector, c.kind == SS_PLANE ? c.normal : c.center) < 0)
        return NULL;
    if (c.kind == SS_PLANE)
        c.offset = scalar;
    else
        c.radius = scalar;
    ss_status st = ss_system_set_collider(sys, c);
    if (st)
        return raise_status(sys, st);
    Py_RETURN_NONE;
}

/* Remove the collider or gas body with the id `arg` by `remove`. */
static PyObject *remove_by_id(SystemObject *self, PyObject *arg,
                              ss_status (*remove)(ss_system *, long)) {
    long id = PyLong_AsLong(arg);
    if (id == -1 && PyErr_Occurred())
        return NULL;
    ss_system *sys = writable_system(self);
    if (!sys)
        return NULL;
    ss_status st = remove(sys, id);
    if (st)
        return raise_status(sys, st);
    Py_RETURN_NONE;
}

static PyObject *System_remove_collider(SystemObject *self, PyObject *arg) {
    return remove_by_id(self, arg, ss_system_remove_collider);
}

/* _colliders() -> [(id, kind, vector tuple, scalar, restitution, friction), ...] */
static PyObject *System_colliders(SystemObject *self, PyObject *unused) {
    (void)unused;
    ss_system *sys = readable_system(self);
    if (!sys)
        return NULL;
    PyObject *list = PyList_New((Py_ssize_t)sys->num_colliders);
    if (!list)
        return NULL;
    for (size_t k = 0; k < sys->num_colliders; k++) {
        const ss_collider *c = &sys->colliders[k];
        const double *vec = c->kind == SS_PLANE ? c->normal : c->center;
        PyObject *vector = sys->dim == 3 ? Py_BuildValue("(ddd)", vec[0], vec[1], vec[2])
                                         : Py_BuildValue("(dd)", vec[0], vec[1]);
        PyObject *item = vector ? Py_BuildValue("(liNddd)", c->id, c->kind, vector,
                                                c->kind == SS_PLANE ? c->offset : c->radius,
                                                c->restitution, c->friction)
                                : NULL;
        if (!item) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)k, item);
    }
    return list;
}

/* ---- Gas bodies -------------------------------------------------------- */

/* _add_pressure(elements, nrt, ambient) -> id; elements: (K, dim) int64. */
static PyObject *System_add_pressure(SystemObject *self, PyObject *args) {
    PyObject *elements;
    double nrt, ambient;
    if (!PyArg_ParseTuple(args, "Odd:_add_pressure", &elements, &nrt, &ambient))
        return NULL;
    ss_system *sys = writable_system(self);
    if (!sys)
        return NULL;
    npy_intp count = leading_dim(elements);
    npy_intp dims[2] = {count, sys->dim};
    if (check_exact_array(elements, "boundary", NPY_INT64, 2, dims) < 0)
        return NULL;
    long id;
    ss_status st = ss_system_add_pressure(
        sys, (size_t)count, PyArray_DATA((PyArrayObject *)elements), nrt, ambient, &id);
    return st ? raise_status(sys, st) : PyLong_FromLong(id);
}

/* _set_pressure(id, nrt, ambient) */
static PyObject *System_set_pressure(SystemObject *self, PyObject *args) {
    long id;
    double nrt, ambient;
    if (!PyArg_ParseTuple(args, "ldd:_set_pressure", &id, &nrt, &ambient))
        return NULL;
    ss_system *sys = writable_system(self);
    if (!sys)
        return NULL;
    ss_status st = ss_system_set_pressure(sys, id, nrt, ambient);
    if (st)
        return raise_status(sys, st);
    Py_RETURN_NONE;
}

static PyObject *System_remove_pressure(SystemObject *self, PyObject *arg) {
    return remove_by_id(self, arg, ss_system_remove_pressure);
}

/* _pressure_bodies() -> [(id, nrt, ambient, volume), ...] in the order added. */
static PyObject *System_pressure_bodies(SystemObject *self, PyObject *unused) {
    (void)unused;
    ss_system *sys = readable_system(self);
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
static PyObject *System_pressure_elements(SystemObject *self, PyObject *arg) {
    long id = PyLong_AsLong(arg);
    if (id == -1 && PyErr_Occurred())
        return NULL;
    ss_system *sys = readable_system(self);
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

/* broken_springs() -> (K, 2) int32 node pairs torn since the last call; clears them. */
static PyObject *System_broken_springs(SystemObject *self, PyObject *unused) {
    (void)unused;
    ss_system *sys = writable_system(self);
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

static PyObject *get_iterations(SystemObject *self, void *closure) {
    (void)closure;
    ss_system *sys = readable_system(self);
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
    ss_system *sys = writable_system(self);
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
    ss_system *sys = readable_system(self);
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
    ss_system *sys = writable_system(self);
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

static PyObject *get_books(SystemObject *self, void *closure) {
    (void)closure;
    ss_system *sys = readable_system(self);
    return sys ? PyLong_FromLong(sys->books_mode) : NULL;
}

static int set_books(SystemObject *self, PyObject *value, void *closure) {
    (void)closure;
    ss_system *sys = writable_system(self);
    return sys ? int_setting(value, "_books", 0, 7, &sys->books_mode) : -1;
}

static PyObject *System_set_pinned(SystemObject *self, PyObject *args) {
    PyObject *arr;
    int value;
    if (!PyArg_ParseTuple(args, "Op:_set_pinned", &arr, &value))
        return NULL;
    ss_system *sys = writable_system(self);
    const int64_t *idx;
    size_t count;
    if (!sys || index_array(arr, &idx, &count) < 0)
        return NULL;
    ss_status st = ss_system_set_pinned(sys, count, idx, (uint8_t)value);
    if (st)
        return raise_status(sys, st);
    Py_RETURN_NONE;
}

/* ---- Stepping ---------------------------------------------------------- */

/* The method named by `obj` (a str), or -1 with ValueError listing the valid names. */
static int parse_method(PyObject *obj) {
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

static const char step_doc[] =
    "step(dt, steps=1, method=None)\n"
    "--\n"
    "\n"
    "Advance by ``steps`` substeps of ``dt`` seconds with ``method``.\n"
    "\n"
    "All substeps run in C without the GIL, unless nodes are driven\n"
    "(:meth:`drive`): then each substep returns to Python to place them. A step\n"
    "whose result is not finite, or that diverges (its motion's energy outgrows\n"
    "what was put in by :attr:`divergence_factor`, checked every 64 substeps of a\n"
    "call of 64 or more), raises :class:`springsim.UnstableError` and leaves the\n"
    "system as it was before the call.\n"
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

static PyObject *step_impl(SystemObject *self, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames, int dispatch) {
    /* Driven nodes need Python between substeps: System._driven_step (system.py). */
    if (dispatch && self->driven) {
        PyObject *stack[7] = {(PyObject *)self};
        const Py_ssize_t total = nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
        if (total > 6) {
            PyErr_SetString(PyExc_TypeError, "step() takes at most 3 arguments");
            return NULL;
        }
        for (Py_ssize_t k = 0; k < total; k++)
            stack[k + 1] = args[k];
        PyObject *name = PyUnicode_InternFromString("_driven_step");
        if (!name)
            return NULL;
        PyObject *result = PyObject_VectorcallMethod(name, stack, (size_t)nargs + 1, kwnames);
        Py_DECREF(name);
        return result;
    }
    PyObject *parsed[3];
    if (step_arguments(args, nargs, kwnames, parsed) < 0)
        return NULL;
    PyObject *dt_obj = parsed[0], *steps_obj = parsed[1], *method_obj = parsed[2];
    ss_system *sys = writable_system(self);
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
    if (method_obj != Py_None && (method = parse_method(method_obj)) < 0)
        return NULL;

    /* A short call keeps the GIL: releasing and taking it back costs about as much as
     * stepping a small system once, and it ends before anyone could use the GIL. */
    ss_status st;
    if ((size_t)steps * (sys->num_nodes + sys->num_springs) < SS_KEEP_GIL_BELOW) {
        st = ss_system_step(sys, dt, (size_t)steps, (ss_method)method, NULL);
    } else {
        self->busy = 1;
        PyThreadState *released = PyEval_SaveThread();
        const ss_poll poll = {poll_signals, &released};
        st = ss_system_step(sys, dt, (size_t)steps, (ss_method)method, &poll);
        PyEval_RestoreThread(released);
        self->busy = 0;
    }
    if (st == SS_ERR_INTERRUPTED)
        return NULL; /* KeyboardInterrupt (or the signal handler's error) is set */
    if (st)
        return raise_status(sys, st);
    if (sys->strain_unmet) {
        char message[400];
        snprintf(message, sizeof message,
                 "max_strain = %g could not be met in %zu of %zu substeps: springs stayed longer "
                 "than (1 + max_strain) times their rest length, and strain limiting stopped "
                 "when its passes no longer shortened them. Pinned, driven or colliding nodes "
                 "may be holding them apart; raise max_strain or free those nodes",
                 sys->max_strain, sys->strain_unmet, (size_t)steps);
        if (PyErr_WarnEx(ConvergenceWarning, message, 1) < 0)
            return NULL;
    }
    /* Tearing moves the spring arrays to new blocks when views hold them: that
     * touches reference counts, so it runs here, with the GIL. */
    if (!sys->defer_tearing && (st = ss_system_tear(sys)))
        return raise_status(sys, st);
    if (method == SS_IMPLICIT_EULER && sys->cg_capped) {
        char message[400]; /* PyErr_WarnFormat has no %g */
        snprintf(message, sizeof message,
                 "implicit_euler: conjugate gradients stopped at cg_max_iterations = %d in %zu of "
                 "%zu substeps (last relative residual %.3g > cg_tolerance %.3g); the state is "
                 "finite but less accurate. Raise cg_max_iterations or take smaller steps",
                 sys->cg_max_iterations, sys->cg_capped, sys->cg_substeps, sys->last_cg_residual,
                 sys->cg_tolerance);
        if (PyErr_WarnEx(ConvergenceWarning, message, 1) < 0)
            return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *System_step(SystemObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
    return step_impl(self, args, nargs, kwnames, 1);
}

/* _step(dt, steps=1, method=None): the kernel's step, never handing over to Python's
 * driven step (which calls this for each of its substeps). */
static PyObject *System_kernel_step(SystemObject *self, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames) {
    return step_impl(self, args, nargs, kwnames, 0);
}

static PyObject *get_driven(SystemObject *self, void *closure) {
    (void)closure;
    return PyBool_FromLong(self->driven);
}

static int set_driven(SystemObject *self, PyObject *value, void *closure) {
    (void)closure;
    const int truth = value ? PyObject_IsTrue(value) : -1;
    if (truth < 0) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_AttributeError, "cannot delete _driven");
        return -1;
    }
    self->driven = truth;
    return 0;
}

/* _tear(): remove the springs cut by earlier calls while tearing was deferred. */
static PyObject *System_tear(SystemObject *self, PyObject *unused) {
    (void)unused;
    ss_system *sys = writable_system(self);
    if (!sys)
        return NULL;
    ss_status st = ss_system_tear(sys);
    if (st)
        return raise_status(sys, st);
    Py_RETURN_NONE;
}

/* _settle_cuts(keep): end a run of calls made with _hold_cuts set: keep their cuts, or
 * give the springs they cut their k and c back (a driven step that failed part-way). */
static PyObject *System_settle_cuts(SystemObject *self, PyObject *keep) {
    ss_system *sys = writable_system(self);
    if (!sys)
        return NULL;
    const int truth = PyObject_IsTrue(keep);
    if (truth < 0)
        return NULL;
    ss_constraints_settle_cuts(sys, truth);
    Py_RETURN_NONE;
}

/* last_solve() -> (iterations, residual, substeps, capped) of the last implicit_euler call. */
static PyObject *System_last_solve(SystemObject *self, PyObject *unused) {
    (void)unused;
    ss_system *sys = readable_system(self);
    if (!sys)
        return NULL;
    return Py_BuildValue("(idnn)", sys->last_cg_iterations, sys->last_cg_residual,
                         (Py_ssize_t)sys->cg_substeps, (Py_ssize_t)sys->cg_capped);
}

/* _stiffness_triplets() -> (rows int64, cols int64, values float64), 4 dim^2 per spring. */
static PyObject *System_stiffness_triplets(SystemObject *self, PyObject *unused) {
    (void)unused;
    ss_system *sys = readable_system(self);
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
        return raise_status(sys, st);
    }
    return Py_BuildValue("(NNN)", rows, cols, values);
}

static PyObject *get_cg_tolerance(SystemObject *self, void *closure) {
    (void)closure;
    ss_system *sys = readable_system(self);
    return sys ? PyFloat_FromDouble(sys->cg_tolerance) : NULL;
}

static int set_cg_tolerance(SystemObject *self, PyObject *value, void *closure) {
    (void)closure;
    ss_system *sys = writable_system(self);
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
    ss_system *sys = readable_system(self);
    return sys ? PyLong_FromLong(sys->cg_max_iterations) : NULL;
}

static int set_cg_max_iterations(SystemObject *self, PyObject *value, void *closure) {
    (void)closure;
    ss_system *sys = writable_system(self);
    return sys ? int_setting(value, "cg_max_iterations", 1, 10000000, &sys->cg_max_iterations) : -1;
}

/* ---- Diagnostics ------------------------------------------------------- */

static PyObject *System_energy_terms(SystemObject *self, PyObject *unused) {
    (void)unused;
    ss_system *sys = readable_system(self);
    if (!sys)
        return NULL;
    ss_energy_terms e;
    ss_energy(sys, &e);
    return Py_BuildValue("(dddd)", e.kinetic, e.elastic, e.gravity, e.pressure);
}

/* A new (dim,) array filled by `fill`. */
static PyObject *vector_result(SystemObject *self, void (*fill)(const ss_system *, double *)) {
    ss_system *sys = readable_system(self);
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
    ss_system *sys = readable_system(self);
    if (!sys)
        return NULL;
    npy_intp dims[1] = {(npy_intp)sys->num_springs};
    PyObject *arr = PyArray_SimpleNew(1, dims, NPY_DOUBLE);
    if (arr)
        fill(sys, PyArray_DATA((PyArrayObject *)arr));
    return arr;
}

static PyObject *System_momentum(SystemObject *self, PyObject *unused) {
    (void)unused;
    return vector_result(self, ss_momentum);
}

static PyObject *System_center_of_mass(SystemObject *self, PyObject *unused) {
    (void)unused;
    return vector_result(self, ss_center_of_mass);
}

static PyObject *System_spring_lengths(SystemObject *self, PyObject *unused) {
    (void)unused;
    return spring_result(self, ss_spring_lengths);
}

static PyObject *System_spring_tensions(SystemObject *self, PyObject *unused) {
    (void)unused;
    return spring_result(self, ss_spring_tensions);
}

static PyObject *System_critical_dt(SystemObject *self, PyObject *unused) {
    (void)unused;
    ss_system *sys = readable_system(self);
    double limit;
    if (!sys)
        return NULL;
    ss_status st = ss_critical_dt(sys, &limit);
    return st ? raise_status(sys, st) : PyFloat_FromDouble(limit);
}

static PyObject *System_copy(SystemObject *self, PyObject *unused) {
    (void)unused;
    ss_system *sys = writable_system(self);
    if (!sys)
        return NULL;
    SystemObject *dup = (SystemObject *)Py_TYPE(self)->tp_alloc(Py_TYPE(self), 0);
    if (!dup)
        return NULL;
    dup->busy = 0;
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
    ss_system *sys = readable_system(self);
    return sys ? PyLong_FromLong(sys->dim) : NULL;
}

/* Number of rows of the array group the closure names: nodes, springs or faces. */
static PyObject *get_count(SystemObject *self, void *closure) {
    ss_system *sys = readable_system(self);
    return sys ? PyLong_FromSize_t(ss_array_rows(sys, (ss_array)(intptr_t)closure)) : NULL;
}

static PyObject *get_nbytes(SystemObject *self, void *closure) {
    (void)closure;
    ss_system *sys = readable_system(self);
    return sys ? PyLong_FromSize_t(ss_system_nbytes(sys)) : NULL;
}

/* The system's boolean flags, by attribute name. */
static int *flag_field(ss_system *sys, const char *name) {
    if (strcmp(name, "track_energy") == 0)
        return &sys->track_energy;
    if (strcmp(name, "_defer_tearing") == 0)
        return &sys->defer_tearing;
    if (strcmp(name, "_hold_cuts") == 0)
        return &sys->hold_cuts;
    if (strcmp(name, "_drag_pins") == 0)
        return &sys->drag_pins;
    return &sys->prev_accel_valid;
}

static PyObject *get_flag(SystemObject *self, void *closure) {
    ss_system *sys = readable_system(self);
    return sys ? PyBool_FromLong(*flag_field(sys, closure)) : NULL;
}

static int set_flag(SystemObject *self, PyObject *value, void *closure) {
    ss_system *sys = writable_system(self);
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
        return &sys->dissipated;
    return &sys->time;
}

static PyObject *get_scalar(SystemObject *self, void *closure) {
    ss_system *sys = readable_system(self);
    return sys ? PyFloat_FromDouble(*scalar_field(sys, closure)) : NULL;
}

static int set_scalar(SystemObject *self, PyObject *value, void *closure) {
    const char *name = closure;
    ss_system *sys = writable_system(self);
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
            raise_status(sys, st);
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
    ss_system *sys = readable_system(self);
    return sys ? PyUnicode_FromString(ss_method_name(sys->method)) : NULL;
}

static int set_method(SystemObject *self, PyObject *value, void *closure) {
    (void)closure;
    ss_system *sys = writable_system(self);
    if (!sys)
        return -1;
    if (!value) {
        PyErr_SetString(PyExc_AttributeError, "cannot delete method");
        return -1;
    }
    int method = parse_method(value);
    if (method < 0)
        return -1;
    sys->method = (ss_method)method;
    return 0;
}

/* ---- Type -------------------------------------------------------------- */

static PyMethodDef System_methods[] = {
    {"_view", (PyCFunction)System_view, METH_O, "A zero-copy view of a named array."},
    {"_set_array", (PyCFunction)System_set_array, METH_VARARGS,
     "Overwrite a named array from an exact-shape array, checking every value first."},
    {"_add_nodes", (PyCFunction)System_add_nodes, METH_VARARGS,
     "_add_nodes(x, v or None, m, pinned) -> first new index."},
    {"_add_springs", (PyCFunction)System_add_springs, METH_VARARGS,
     "_add_springs(pairs, k, c, rest or None) -> first new index."},
    {"_remove_springs", (PyCFunction)System_remove_springs, METH_O, "Remove springs by index."},
    {"_add_collider", (PyCFunction)System_add_collider, METH_VARARGS,
     "_add_collider(kind, vector, scalar, restitution, friction) -> id."},
    {"_set_collider", (PyCFunction)System_set_collider, METH_VARARGS,
     "_set_collider(id, vector, scalar, restitution, friction)."},
    {"_remove_collider", (PyCFunction)System_remove_collider, METH_O, "Remove a collider by id."},
    {"_add_pressure", (PyCFunction)System_add_pressure, METH_VARARGS,
     "_add_pressure(elements, nrt, ambient) -> id."},
    {"_set_pressure", (PyCFunction)System_set_pressure, METH_VARARGS,
     "_set_pressure(id, nrt, ambient)."},
    {"_remove_pressure", (PyCFunction)System_remove_pressure, METH_O, "Remove a gas body by id."},
    {"_pressure_bodies", (PyCFunction)System_pressure_bodies, METH_NOARGS,
     "[(id, nrt, ambient, volume), ...]."},
    {"_pressure_elements", (PyCFunction)System_pressure_elements, METH_O,
     "A copy of a gas body's outward boundary, (K, dim) int32."},
    {"_colliders", (PyCFunction)System_colliders, METH_NOARGS,
     "[(id, kind, vector, scalar, restitution, friction), ...] in order."},
    {"broken_springs", (PyCFunction)System_broken_springs, METH_NOARGS,
     "broken_springs()\n--\n\nThe (K, 2) node pairs of the springs torn since the last call "
     "(int32), in the order they broke; the record is then cleared."},
    {"_validate", (PyCFunction)System_validate, METH_NOARGS,
     "Raise ValueError if any value a step relies on is out of its domain."},
    {"_add_faces", (PyCFunction)System_add_faces, METH_O, "_add_faces(tri) -> first new index."},
    {"_remove_nodes", (PyCFunction)System_remove_nodes, METH_O,
     "Remove nodes with their springs and faces; returns the old-to-new index map."},
    {"_set_pinned", (PyCFunction)System_set_pinned, METH_VARARGS, "Set pinned flags."},
    {"_energy_terms", (PyCFunction)System_energy_terms, METH_NOARGS,
     "(kinetic, elastic, gravity, pressure) in joules."},
    {"step", (PyCFunction)(void (*)(void))System_step, METH_FASTCALL | METH_KEYWORDS, step_doc},
    {"_step", (PyCFunction)(void (*)(void))System_kernel_step, METH_FASTCALL | METH_KEYWORDS,
     "_step(dt, steps=1, method=None)\n--\n\nThe kernel's step: never hands over to "
     "_driven_step."},
    {"momentum", (PyCFunction)System_momentum, METH_NOARGS, "Total momentum, kg m/s."},
    {"center_of_mass", (PyCFunction)System_center_of_mass, METH_NOARGS, "Centre of mass, m."},
    {"spring_lengths", (PyCFunction)System_spring_lengths, METH_NOARGS, "Spring lengths, m."},
    {"spring_tensions", (PyCFunction)System_spring_tensions, METH_NOARGS,
     "Signed axial spring forces, N."},
    {"critical_dt", (PyCFunction)System_critical_dt, METH_NOARGS, "Explicit stability limit, s."},
    {"copy", (PyCFunction)System_copy, METH_NOARGS, "A deep copy."},
    {"_tear", (PyCFunction)System_tear, METH_NOARGS,
     "Remove the springs cut while tearing was deferred (run() calls it)."},
    {"_settle_cuts", (PyCFunction)System_settle_cuts, METH_O,
     "End calls made with _hold_cuts: keep their cuts (True) or undo them (False)."},
    {"_last_solve", (PyCFunction)System_last_solve, METH_NOARGS,
     "(iterations, residual, substeps, capped) of the last implicit_euler call."},
    {"_stiffness_triplets", (PyCFunction)System_stiffness_triplets, METH_NOARGS,
     "(rows, cols, values) of the elastic energy's Hessian; duplicates sum."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef System_getset[] = {
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
     "Constraint passes per substep of method 'xpbd' (default 10).", NULL},
    {"max_strain", (getter)get_optional, (setter)set_optional,
     "Strain limit (Provot): after every substep no spring is longer than "
     "(1 + max_strain) times its rest length. None (the default) turns it off.",
     "max_strain"},
    {"divergence_factor", (getter)get_optional, (setter)set_optional,
     "The divergence watch: a step raises UnstableError (and rolls back) when the motion's "
     "kinetic + elastic energy exceeds divergence_factor (> 1, default 100) times the most "
     "energy available to it (what it had plus what gravity, external forces, wind, gas and "
     "moving pins put in). Checked every 64 substeps of a step call (or of a run()). None "
     "turns it off.",
     "divergence_factor"},
    {"_books", (getter)get_books, (setter)set_books,
     "How the next step call keeps the divergence watch's books (SS_BOOKS_* in "
     "springsim.h); each call resets it to 0.",
     NULL},
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
     "Energy, J, taken out of the motion while track_energy is on: by spring damping, drag and "
     "the air on faces (trapezoid rule on their power), energy_loss and contacts. Assign 0 to "
     "restart the count.",
     "dissipated"},
    {"_defer_tearing", (getter)get_flag, (setter)set_flag,
     "Keep springs cut by a step in place (pulling nothing) until _tear() (run() uses it, so "
     "that how it groups substeps into calls changes nothing).",
     "_defer_tearing"},
    {"_drag_pins", (getter)get_flag, (setter)set_flag,
     "Let pinned nodes keep their velocities in step calls (a driven step sets them before "
     "each substep); off, a step call first holds every pinned node (velocity 0).",
     "_drag_pins"},
    {"_driven", (getter)get_driven, (setter)set_driven,
     "Nodes are driven: step() hands over to the Python method _driven_step.", NULL},
    {"_hold_cuts", (getter)get_flag, (setter)set_flag,
     "Keep the cuts of successful step calls undoable until _settle_cuts() (a driven step "
     "runs one call per substep, and undoes them all if one fails).",
     "_hold_cuts"},
    {"track_energy", (getter)get_flag, (setter)set_flag,
     "Whether steps add to `dissipated` (off by default: it costs a pass over the springs per "
     "substep). run() turns it on.",
     "track_energy"},
    {"method", (getter)get_method, (setter)set_method,
     "The integrator step() uses when none is given.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject SystemType = {
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

/* ---- Module ------------------------------------------------------------ */

static PyObject *method_names(void) {
    PyObject *names = PyTuple_New(SS_METHOD_COUNT);
    if (!names)
        return NULL;
    for (int m = 0; m < SS_METHOD_COUNT; m++) {
        PyObject *s = PyUnicode_FromString(ss_method_name(m));
        if (!s) {
            Py_DECREF(names);
            return NULL;
        }
        PyTuple_SET_ITEM(names, m, s);
    }
    return names;
}

static PyObject *core_set_num_threads(PyObject *module, PyObject *arg) {
    (void)module;
    if (!PyLong_Check(arg) || PyBool_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "n must be an int, not %.100s", Py_TYPE(arg)->tp_name);
        return NULL;
    }
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    if (n < 1 || n > 4096) {
        PyErr_Format(PyExc_ValueError, "n must be between 1 and 4096, got %ld", n);
        return NULL;
    }
    return PyLong_FromLong(ss_set_num_threads((int)n));
}

static PyObject *core_get_num_threads(PyObject *module, PyObject *unused) {
    (void)module;
    (void)unused;
    return PyLong_FromLong(ss_get_num_threads());
}

static PyObject *core_threading_available(PyObject *module, PyObject *unused) {
    (void)module;
    (void)unused;
    return PyBool_FromLong(ss_threading_available());
}

/* _simd_paths() -> {name: available} for every path of the spring loop. */
static PyObject *core_simd_paths(PyObject *module, PyObject *unused) {
    (void)module;
    (void)unused;
    PyObject *paths = PyDict_New();
    if (!paths)
        return NULL;
    for (int path = 0; path < SS_SIMD_COUNT; path++) {
        PyObject *available = PyBool_FromLong(ss_simd_available(path));
        const int failed = PyDict_SetItemString(paths, ss_simd_name(path), available);
        Py_DECREF(available);
        if (failed < 0) {
            Py_DECREF(paths);
            return NULL;
        }
    }
    return paths;
}

/* _simd_get() -> the name of the path the spring loop takes. */
static PyObject *core_simd_get(PyObject *module, PyObject *unused) {
    (void)module;
    (void)unused;
    return PyUnicode_FromString(ss_simd_name(ss_simd_get()));
}

/* _simd_set(name or None) -> the name now in use; None: the best for this CPU. */
static PyObject *core_simd_set(PyObject *module, PyObject *name) {
    (void)module;
    int path = ss_simd_best();
    if (name != Py_None) {
        if (!PyUnicode_Check(name)) {
            PyErr_Format(PyExc_TypeError, "a SIMD path is a str, not %.100s",
                         Py_TYPE(name)->tp_name);
            return NULL;
        }
        for (path = 0; path < SS_SIMD_COUNT; path++)
            if (PyUnicode_CompareWithASCIIString(name, ss_simd_name(path)) == 0)
                break;
        if (path == SS_SIMD_COUNT) {
            PyErr_Format(PyExc_ValueError,
                         "unknown SIMD path %R: valid paths are portable, avx2 and avx512", name);
            return NULL;
        }
        if (!ss_simd_available(path)) {
            PyErr_Format(PyExc_ValueError, "this CPU (or this build) cannot run the %s path",
                         ss_simd_name(path));
            return NULL;
        }
    }
    ss_simd_set(path);
    return PyUnicode_FromString(ss_simd_name(path));
}

/* _fp_mode() -> this thread's floating-point control word (x86: MXCSR; else 0), and
 * _set_fp_mode(word): for tests that check the kernel ignores the caller's mode. */
static PyObject *core_fp_mode(PyObject *module, PyObject *unused) {
    (void)module;
    (void)unused;
    const ss_fpstate mode = ss_fp_enter();
    ss_fp_leave(mode);
    return PyLong_FromUnsignedLong(mode);
}

static PyObject *core_set_fp_mode(PyObject *module, PyObject *word) {
    (void)module;
    const unsigned long mode = PyLong_AsUnsignedLong(word);
    if (mode == (unsigned long)-1 && PyErr_Occurred())
        return NULL;
    if (mode > 0xFFFFu) {
        PyErr_SetString(PyExc_ValueError, "a floating-point control word has 16 bits");
        return NULL;
    }
    ss_fp_leave((ss_fpstate)mode | 0x10000u); /* the high bit forces the write */
    Py_RETURN_NONE;
}

static PyMethodDef core_functions[] = {
    {"_simd_paths", core_simd_paths, METH_NOARGS, "{path: available} for the spring loop."},
    {"_fp_mode", core_fp_mode, METH_NOARGS, "This thread's floating-point control word."},
    {"_set_fp_mode", core_set_fp_mode, METH_O, "Set this thread's control word (tests)."},
    {"_simd_get", core_simd_get, METH_NOARGS, "The SIMD path the spring loop takes."},
    {"_simd_set", core_simd_set, METH_O, "Force a SIMD path (None: the best available)."},
    {"set_num_threads", core_set_num_threads, METH_O,
     "set_num_threads(n) -> the number set (1 when compiled without OpenMP)."},
    {"get_num_threads", core_get_num_threads, METH_NOARGS, "Threads a large system steps on."},
    {"threading_available", core_threading_available, METH_NOARGS,
     "Whether the kernel was compiled with OpenMP."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "springsim._core",
    .m_methods = core_functions,
    .m_doc = "The springsim C kernel: see springsim for the public API.",
    .m_size = -1,
};

PyMODINIT_FUNC PyInit__core(void) {
    import_array();
    /* The kernel allocates through PyMem_Raw*: thread-safe without the GIL, and
     * visible to tracemalloc. */
    ss_set_allocator((ss_allocator){PyMem_RawMalloc, PyMem_RawFree});

    if (PyType_Ready(&SystemType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&core_module);
    if (!m)
        return NULL;
    PyObject *bases = PyTuple_Pack(2, PyExc_FloatingPointError, PyExc_RuntimeError);
    if (!bases)
        goto error;
    UnstableError = PyErr_NewExceptionWithDoc(
        "springsim.UnstableError",
        "A step produced non-finite values. The system was rolled back to its state before "
        "the call; the message suggests a smaller dt.",
        bases, NULL);
    Py_DECREF(bases);
    if (!UnstableError)
        goto error;
    if (PyModule_AddObjectRef(m, "UnstableError", UnstableError) < 0)
        goto error;
    ConvergenceWarning = PyErr_NewExceptionWithDoc(
        "springsim.ConvergenceWarning",
        "An iterative solve (implicit_euler's conjugate gradients) stopped at its iteration cap "
        "before reaching its tolerance. The state is finite but less accurate.",
        PyExc_RuntimeWarning, NULL);
    if (!ConvergenceWarning)
        goto error;
    if (PyModule_AddObjectRef(m, "ConvergenceWarning", ConvergenceWarning) < 0)
        goto error;
    if (PyModule_AddObjectRef(m, "System", (PyObject *)&SystemType) < 0)
        goto error;
    PyObject *names = method_names();
    if (!names || PyModule_AddObject(m, "METHODS", names) < 0) {
        Py_XDECREF(names);
        goto error;
    }
    return m;

error:
    Py_DECREF(m);
    return NULL;
}
