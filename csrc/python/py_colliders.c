/* py_colliders.c - planes, spheres, boxes, capsules and meshes the nodes collide with. */
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
    ss_system *sys = ss_py_system(self);
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

/* The collider `id` of a system that may be written, with its values checked on the way
 * in; NULL with ValueError if it was removed (or is not a mesh when `mesh` is set). */
static ss_collider *collider_to_edit(SystemObject *self, long id, int mesh, ss_system **sys) {
    *sys = ss_py_system(self);
    if (!*sys)
        return NULL;
    ss_collider *found = ss_system_find_collider(*sys, id);
    if (!found || (mesh && found->kind != SS_MESH)) {
        PyErr_SetString(PyExc_ValueError, mesh ? "this mesh collider was removed from the system"
                                               : "this collider was removed from the system");
        return NULL;
    }
    return found;
}

/* _set_collider(id, vector, scalar, restitution, friction): replace every value. */
PyObject *ss_py_system_set_collider(SystemObject *self, PyObject *args) {
    long id;
    PyObject *vector;
    double scalar, restitution, friction;
    if (!PyArg_ParseTuple(args, "lOddd:_set_collider", &id, &vector, &scalar, &restitution,
                          &friction))
        return NULL;
    ss_system *sys;
    ss_collider *old = collider_to_edit(self, id, 0, &sys);
    if (!old)
        return NULL;
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
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    PyObject *list = PyList_New((Py_ssize_t)sys->num_colliders);
    if (!list)
        return NULL;
    for (size_t k = 0; k < sys->num_colliders; k++) {
        const ss_collider *c = &sys->colliders[k];
        const double *vec = c->kind == SS_PLANE ? c->normal : c->center; /* a mesh: 0 */
        PyObject *vector = sys->dim == 3 ? Py_BuildValue("(ddd)", vec[0], vec[1], vec[2])
                                         : Py_BuildValue("(dd)", vec[0], vec[1]);
        PyObject *item = vector ? Py_BuildValue("(liNddd)", c->id, c->kind, vector,
                                                c->kind == SS_PLANE  ? c->offset
                                                : c->kind == SS_MESH ? c->thickness
                                                                     : c->radius,
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

/* ---- Boxes and capsules -------------------------------------------------- */

/* _add_shape(kind, center, end, radius, restitution, friction) -> id: a box (center,
 * half-extents `end`; radius unused) or a capsule (ends center and end, radius). */
PyObject *ss_py_system_add_shape(SystemObject *self, PyObject *args) {
    int kind;
    PyObject *center, *end;
    double radius, restitution, friction;
    if (!PyArg_ParseTuple(args, "iOOddd:_add_shape", &kind, &center, &end, &radius, &restitution,
                          &friction))
        return NULL;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    if (kind != SS_BOX && kind != SS_CAPSULE) {
        PyErr_Format(PyExc_ValueError, "_add_shape makes boxes and capsules, not kind %d", kind);
        return NULL;
    }
    ss_collider c = {
        .kind = kind, .radius = radius, .restitution = restitution, .friction = friction};
    if (collider_vector(sys, center, c.center) < 0 || collider_vector(sys, end, c.end) < 0)
        return NULL;
    long id;
    ss_status st = ss_system_add_collider(sys, c, &id);
    return st ? ss_py_raise_status(sys, st) : PyLong_FromLong(id);
}

/* _set_shape(id, center, end, radius, restitution, friction): replace every value. */
PyObject *ss_py_system_set_shape(SystemObject *self, PyObject *args) {
    long id;
    PyObject *center, *end;
    double radius, restitution, friction;
    if (!PyArg_ParseTuple(args, "lOOddd:_set_shape", &id, &center, &end, &radius, &restitution,
                          &friction))
        return NULL;
    ss_system *sys;
    ss_collider *old = collider_to_edit(self, id, 0, &sys);
    if (!old)
        return NULL;
    ss_collider c = *old;
    c.radius = radius;
    c.restitution = restitution;
    c.friction = friction;
    if (collider_vector(sys, center, c.center) < 0 || collider_vector(sys, end, c.end) < 0)
        return NULL;
    ss_status st = ss_system_set_collider(sys, c);
    if (st)
        return ss_py_raise_status(sys, st);
    Py_RETURN_NONE;
}

/* ---- Meshes -------------------------------------------------------------- */

/* A new mesh from exact (V, 3) float64 vertices and (F, 3) int32 faces. */
static ss_mesh *mesh_from(ss_system *sys, PyObject *vertices, PyObject *faces) {
    npy_intp vdims[2] = {-1, 3}, fdims[2] = {-1, 3};
    if (ss_py_check_exact_array(vertices, "vertices", NPY_DOUBLE, 2, vdims) < 0 ||
        ss_py_check_exact_array(faces, "faces", NPY_INT32, 2, fdims) < 0)
        return NULL;
    PyArrayObject *v = (PyArrayObject *)vertices, *f = (PyArrayObject *)faces;
    ss_mesh *mesh;
    ss_status st = ss_mesh_build(sys, PyArray_DATA(v), (size_t)PyArray_DIM(v, 0), PyArray_DATA(f),
                                 (size_t)PyArray_DIM(f, 0), &mesh);
    if (st) {
        ss_py_raise_status(sys, st);
        return NULL;
    }
    return mesh;
}

/* _add_mesh(vertices, faces, thickness, restitution, friction) -> id. */
PyObject *ss_py_system_add_mesh(SystemObject *self, PyObject *args) {
    PyObject *vertices, *faces;
    double thickness, restitution, friction;
    if (!PyArg_ParseTuple(args, "OOddd:_add_mesh", &vertices, &faces, &thickness, &restitution,
                          &friction))
        return NULL;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    ss_collider c = {
        .kind = SS_MESH, .thickness = thickness, .restitution = restitution, .friction = friction};
    if (!(c.mesh = mesh_from(sys, vertices, faces)))
        return NULL;
    long id;
    ss_status st = ss_system_add_collider(sys, c, &id);
    if (st) {
        ss_mesh_free(c.mesh);
        return ss_py_raise_status(sys, st);
    }
    return PyLong_FromLong(id);
}

/* _set_mesh(id, vertices or None, thickness, restitution, friction): new vertices (the
 * same faces; the hierarchy is built again) and values. */
PyObject *ss_py_system_set_mesh(SystemObject *self, PyObject *args) {
    long id;
    PyObject *vertices;
    double thickness, restitution, friction;
    if (!PyArg_ParseTuple(args, "lOddd:_set_mesh", &id, &vertices, &thickness, &restitution,
                          &friction))
        return NULL;
    ss_system *sys;
    ss_collider *old = collider_to_edit(self, id, 1, &sys);
    if (!old)
        return NULL;
    ss_collider c = *old;
    c.thickness = thickness;
    c.restitution = restitution;
    c.friction = friction;
    if (vertices != Py_None) {
        npy_intp dims[2] = {(npy_intp)old->mesh->num_vertices, 3};
        if (ss_py_check_exact_array(vertices, "vertices", NPY_DOUBLE, 2, dims) < 0)
            return NULL;
        ss_mesh *mesh;
        ss_status st =
            ss_mesh_build(sys, PyArray_DATA((PyArrayObject *)vertices), old->mesh->num_vertices,
                          old->mesh->faces, old->mesh->num_faces, &mesh);
        if (st)
            return ss_py_raise_status(sys, st);
        c.mesh = mesh;
    }
    ss_status st = ss_system_set_collider(sys, c);
    if (st) {
        if (c.mesh != old->mesh)
            ss_mesh_free(c.mesh);
        return ss_py_raise_status(sys, st);
    }
    Py_RETURN_NONE;
}

/* _collider_shape(id) -> a box's half-extents or a capsule's other end (a tuple), a
 * mesh's (vertices, faces) (copies), None for a plane or sphere. */
PyObject *ss_py_system_collider_shape(SystemObject *self, PyObject *arg) {
    long id = PyLong_AsLong(arg);
    if (id == -1 && PyErr_Occurred())
        return NULL;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    const ss_collider *c = ss_system_find_collider(sys, id);
    if (!c) {
        PyErr_SetString(PyExc_ValueError, "this collider was removed from its system");
        return NULL;
    }
    if (c->kind == SS_BOX || c->kind == SS_CAPSULE)
        return sys->dim == 3 ? Py_BuildValue("(ddd)", c->end[0], c->end[1], c->end[2])
                             : Py_BuildValue("(dd)", c->end[0], c->end[1]);
    if (c->kind != SS_MESH)
        Py_RETURN_NONE;
    npy_intp vdims[2] = {(npy_intp)c->mesh->num_vertices, 3};
    npy_intp fdims[2] = {(npy_intp)c->mesh->num_faces, 3};
    PyObject *v = PyArray_SimpleNew(2, vdims, NPY_DOUBLE);
    PyObject *f = v ? PyArray_SimpleNew(2, fdims, NPY_INT32) : NULL;
    if (!f) {
        Py_XDECREF(v);
        return NULL;
    }
    memcpy(PyArray_DATA((PyArrayObject *)v), c->mesh->vertices,
           c->mesh->num_vertices * 3 * sizeof(double));
    memcpy(PyArray_DATA((PyArrayObject *)f), c->mesh->faces,
           c->mesh->num_faces * 3 * sizeof(int32_t));
    return Py_BuildValue("(NN)", v, f);
}
