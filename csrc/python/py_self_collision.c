/* py_self_collision.c - self-collision of surfaces (self_collision.c). */
#define NO_IMPORT_ARRAY /* module.c imports NumPy's C API: see py_system.h */
#include "py_system.h"

/* _set_self_collision(thickness, stiffness, friction); thickness 0 turns it off. */
PyObject *ss_py_system_set_self_collision(SystemObject *self, PyObject *args) {
    double thickness, stiffness, friction;
    if (!PyArg_ParseTuple(args, "ddd:_set_self_collision", &thickness, &stiffness, &friction))
        return NULL;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    ss_status st = ss_self_collision_set(sys, thickness, stiffness, friction);
    if (st)
        return ss_py_raise_status(sys, st);
    Py_RETURN_NONE;
}

/* _self_collision() -> (thickness, stiffness, friction, crossings), or None when off. */
PyObject *ss_py_system_self_collision(SystemObject *self, PyObject *unused) {
    (void)unused;
    ss_system *sys = ss_py_system(self);
    if (!sys)
        return NULL;
    double setting[3];
    if (!ss_self_collision_get(sys, setting))
        Py_RETURN_NONE;
    return Py_BuildValue("(dddn)", setting[0], setting[1], setting[2],
                         (Py_ssize_t)sys->state.crossings);
}
