/* py_colliders.c - planes and spheres the nodes collide with. */
#define NO_IMPORT_ARRAY /* module.c imports NumPy's C API: see py_system.h */
#include "py_system.h"

/* ---- Colliders --------------------------------------------------------- */

/* Fill c's vector (normal or center) from an exact (dim,) float64 array. */
static int collider_vector(ss_system *sys, PyObject *arr, double out[3]) {
    npy_intp dims[1] = {sys->dim};
    if (ss_py_check_exact_array(arr, "collider vector", NPY_DOUBLE, 1, dims) < 0)
        return -1;
    const double *data = PyArray_DATA((PyArrayObject *)arr);
    for (int k = 0; k < 3; k++)
        out[k] = k < sys->dim ? data[k] : 0.0;
    return 0;
}

/* _add_collider(kind, vector, scalar, restitution, friction) -> id; vector and scalar
 * are the normal and offset of a plane, the center and radius of a sphere. */
PyObject *ss_py_system_add_collider(SystemObject *self, PyObject *args) {
    int kind;
    PyObject *vector;
    double scalar, restitution, friction;
    if (!PyArg_ParseTuple(args, "iOddd:_add_collider", &kind, &vector, &scalar, &restitution,
                          &friction))
        return NULL;
    ss_system *sys = ss_py_writable_system(self);
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
    return st ? ss_py_raise_status(sys, st) : PyLong_FromLong(id);
}

/* _set_collider(id, vector, scalar, restitution, friction): replace every value. */
PyObject *ss_py_system_set_collider(SystemObject *self, PyObject *args) {
    long id;
    PyObject *vector;
    double scalar, restitution, friction;
    if (!PyArg_ParseTuple(args, "lOddd:_set_collider", &id, &vector, &scalar, &restitution,
                          &friction))
        return NULL;
    ss_system *sys = ss_py_writable_system(self);
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
        return ss_py_raise_status(sys, st);
    Py_RETURN_NONE;
}

PyObject *ss_py_system_remove_collider(SystemObject *self, PyObject *arg) {
    return ss_py_remove_by_id(self, arg, ss_system_remove_collider);
}

/* _colliders() -> [(id, kind, vector tuple, scalar, restitution, friction), ...] */
PyObject *ss_py_system_colliders(SystemObject *self, PyObject *unused) {
    (void)unused;
    ss_system *sys = ss_py_readable_system(self);
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
