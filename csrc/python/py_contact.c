/* py_contact.c - node-node contact: its law, its group filter, the pairs in contact. */
#define NO_IMPORT_ARRAY /* module.c imports NumPy's C API: see py_system.h */
#include "py_system.h"

#include <string.h>

/* _contact_law() -> (radius, stiffness, restitution, friction) */
PyObject *ss_py_system_contact_law(SystemObject *self, PyObject *unused) {
    (void)unused;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    const ss_contact *t = sys->contact;
    return Py_BuildValue("(dddd)", t->radius, t->stiffness, t->restitution, t->friction);
}

/* _contact_dt() -> the substep, s, of the last step call that succeeded (0: none), at
 * which queries count the contact law from the step. */
PyObject *ss_py_system_contact_dt(SystemObject *self, PyObject *unused) {
    (void)unused;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    return PyFloat_FromDouble(sys->state.contact_dt);
}

/* _has_radii() -> bool: some node has a contact radius > 0 (makes no array). */
PyObject *ss_py_system_has_radii(SystemObject *self, PyObject *unused) {
    (void)unused;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    return PyBool_FromLong(ss_contact_active(sys));
}

/* _set_contact_law(radius, stiffness, restitution, friction): all checked first. */
PyObject *ss_py_system_set_contact_law(SystemObject *self, PyObject *args) {
    double radius, stiffness, restitution, friction;
    if (!PyArg_ParseTuple(args, "dddd:_set_contact_law", &radius, &stiffness, &restitution,
                          &friction))
        return NULL;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    ss_status st = ss_contact_set_law(sys, radius, stiffness, restitution, friction);
    if (st)
        return ss_py_raise_status(sys, st);
    Py_RETURN_NONE;
}

/* _segment_contact() -> bool: segment contact is on. */
PyObject *ss_py_system_segment_contact(SystemObject *self, PyObject *unused) {
    (void)unused;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    return PyBool_FromLong(sys->contact->segments);
}

/* _set_segment_contact(on): on in 3D only (ValueError, nothing changed). */
PyObject *ss_py_system_set_segment_contact(SystemObject *self, PyObject *args) {
    int on;
    if (!PyArg_ParseTuple(args, "p:_set_segment_contact", &on))
        return NULL;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    ss_status st = ss_contact_set_segments(sys, on);
    if (st)
        return ss_py_raise_status(sys, st);
    Py_RETURN_NONE;
}

/* _set_contact_filter(group_a, group_b, enabled) */
PyObject *ss_py_system_set_contact_filter(SystemObject *self, PyObject *args) {
    int a, b, enabled;
    if (!PyArg_ParseTuple(args, "iip:_set_contact_filter", &a, &b, &enabled))
        return NULL;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    ss_status st = ss_contact_set_filter(sys, (int32_t)a, (int32_t)b, enabled);
    if (st)
        return ss_py_raise_status(sys, st);
    Py_RETURN_NONE;
}

/* _contact_filter() -> [(a, b), ...] the group pairs switched off, a <= b, sorted. */
PyObject *ss_py_system_contact_filter(SystemObject *self, PyObject *unused) {
    (void)unused;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    const ss_contact *t = sys->contact;
    PyObject *list = PyList_New((Py_ssize_t)t->num_off);
    if (!list)
        return NULL;
    for (size_t k = 0; k < t->num_off; k++) {
        const int32_t a = (int32_t)(uint32_t)(t->off[k] >> 32);
        const int32_t b = (int32_t)(uint32_t)(t->off[k] & 0xFFFFFFFFu);
        PyObject *pair = Py_BuildValue("(ii)", (int)a, (int)b);
        if (!pair) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)k, pair);
    }
    return list;
}

/* _contact_pairs() -> (P, 2) int32, the node pairs i < j touching at the current
 * positions, in the order the forces are summed. */
PyObject *ss_py_system_contact_pairs(SystemObject *self, PyObject *unused) {
    (void)unused;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    int32_t *pairs;
    size_t count;
    /* searched in scratch of its own, not the step's */
    ss_status st = ss_system_validate(sys);
    if (st || (st = ss_contact_pairs_now(sys, &pairs, &count)))
        return ss_py_raise_status(sys, st);
    npy_intp dims[2] = {(npy_intp)count, 2};
    PyObject *arr = PyArray_SimpleNew(2, dims, NPY_INT32);
    if (arr && count)
        memcpy(PyArray_DATA((PyArrayObject *)arr), pairs, 2 * count * sizeof(int32_t));
    ss_free(pairs);
    return arr;
}
