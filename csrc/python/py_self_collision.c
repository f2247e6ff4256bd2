/* py_self_collision.c - self-collision of surfaces (self_collision.c). */
#define NO_IMPORT_ARRAY /* module.c imports NumPy's C API: see py_system.h */
#include "py_system.h"

/* _set_self_collision(thickness, stiffness, friction, edges=0.0); thickness 0 turns it
 * off; edges 1.0 adds edge-edge contact. */
PyObject *ss_py_system_set_self_collision(SystemObject *self, PyObject *args) {
    double thickness, stiffness, friction, edges = 0.0;
    if (!PyArg_ParseTuple(args, "ddd|d:_set_self_collision", &thickness, &stiffness, &friction,
                          &edges))
        return NULL;
    if (edges != 0.0 && edges != 1.0)
        return PyErr_Format(PyExc_ValueError, "edges is %g: must be 0 or 1 (off or on)", edges);
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    ss_status st = ss_self_collision_set(sys, thickness, stiffness, friction, edges == 1.0);
    if (st)
        return ss_py_raise_status(sys, st);
    Py_RETURN_NONE;
}

/* _self_collision() -> (thickness, stiffness, friction, crossings, edges), or None when
 * off. */
PyObject *ss_py_system_self_collision(SystemObject *self, PyObject *unused) {
    (void)unused;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    double setting[4];
    if (!ss_self_collision_get(sys, setting))
        Py_RETURN_NONE;
    return Py_BuildValue("(dddnO)", setting[0], setting[1], setting[2],
                         (Py_ssize_t)sys->state.crossings, setting[3] != 0.0 ? Py_True : Py_False);
}

/* _crossings() -> int: the crossings counted (self-collision's and segment contact's). */
PyObject *ss_py_system_crossings(SystemObject *self, PyObject *unused) {
    (void)unused;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    return PyLong_FromSize_t(sys->state.crossings);
}
