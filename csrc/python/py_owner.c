/* py_owner.c - one owner at a time: the lock every call on a System goes through.
 *
 * A System is used by one thread at a time. Its owner is the thread that holds its
 * lock: a step while it runs without the GIL, or Python code holding `sim.lock`
 * (springsim's composite methods, such as save() or run(), and user code). Every other
 * call that reads or writes the system's kernel state first waits, with the GIL
 * released, until no other thread owns it (ss_py_system); the call then runs with the
 * GIL held and so cannot be overtaken. The lock is re-entrant: the owner's own calls
 * never wait.
 *
 * The fields live in SystemObject: `mutex` (a PyThread lock, held by the owner for as
 * long as it owns), `owner` (its thread id, 0 for none) and `depth` (how many times it
 * acquired). `owner` and `depth` are read and written only with the GIL held. A thread
 * that has taken `mutex` but not yet the GIL has not set `owner`: a call that sees 0
 * then runs first, under the GIL, before the new owner can begin, which is safe. */
#define NO_IMPORT_ARRAY /* module.c imports NumPy's C API: see py_system.h */
#include "py_system.h"

#include <pythread.h>

/* The time between looks for a signal (Ctrl-C) while waiting for another thread. */
#define WAIT_SLICE_US 50000

int ss_py_owner_init(SystemObject *self) {
    self->owner = 0;
    self->depth = 0;
    self->mutex = PyThread_allocate_lock();
    if (!self->mutex) {
        PyErr_SetString(PyExc_MemoryError, "cannot allocate a System's lock");
        return -1;
    }
    return 0;
}

void ss_py_owner_free(SystemObject *self) {
    if (self->mutex)
        PyThread_free_lock(self->mutex);
    self->mutex = NULL;
}

/* Take `mutex`, waiting with the GIL released in slices, so that Ctrl-C is seen.
 * timeout_us < 0 waits for ever. Returns 1 when taken, 0 on timeout, -1 with the
 * signal handler's exception set. */
static int take_mutex(SystemObject *self, long long timeout_us) {
    if (PyThread_acquire_lock(self->mutex, NOWAIT_LOCK))
        return 1;
    for (;;) {
        long long slice = WAIT_SLICE_US;
        if (timeout_us >= 0 && timeout_us < slice)
            slice = timeout_us;
        PyLockStatus got;
        Py_BEGIN_ALLOW_THREADS got = PyThread_acquire_lock_timed(self->mutex, slice, 0);
        Py_END_ALLOW_THREADS if (got == PY_LOCK_ACQUIRED) return 1;
        if (PyErr_CheckSignals() < 0)
            return -1;
        if (timeout_us >= 0) {
            timeout_us -= slice;
            if (timeout_us <= 0)
                return 0;
        }
    }
}

int ss_py_own(SystemObject *self, long long timeout_us) {
    unsigned long me = PyThread_get_thread_ident();
    if (self->owner == me) {
        self->depth++;
        return 1;
    }
    int got = take_mutex(self, timeout_us);
    if (got == 1) {
        self->owner = me;
        self->depth = 1;
    }
    return got;
}

/* 0 when this thread holds the system's lock, else -1 with RuntimeError. */
static int check_held(SystemObject *self) {
    if (self->owner != PyThread_get_thread_ident() || self->depth <= 0) {
        PyErr_SetString(PyExc_RuntimeError,
                        "cannot release a System's lock that this thread does not hold");
        return -1;
    }
    return 0;
}

int ss_py_disown(SystemObject *self) {
    if (check_held(self) < 0)
        return -1;
    if (--self->depth == 0) {
        self->owner = 0;
        PyThread_release_lock(self->mutex);
    }
    return 0;
}

/* Wait until no other thread owns the system. Returns 0, or -1 with an exception. */
int ss_py_wait_turn(SystemObject *self) {
    unsigned long me = PyThread_get_thread_ident();
    while (self->owner != 0 && self->owner != me) {
        int got = take_mutex(self, -1);
        if (got < 0)
            return -1;
        PyThread_release_lock(self->mutex); /* its turn came; take the GIL's turn */
    }
    return 0;
}

/* The system, once no other thread owns it (py_owner.c: the call waits, with the GIL
 * released, for the owner to let go); NULL with an exception when it is not
 * initialised or the wait was interrupted. The caller then holds the GIL until it is
 * done with the system, so no other thread's call can begin meanwhile. */
ss_system *ss_py_system(SystemObject *self) {
    if (!self->sys) {
        PyErr_SetString(PyExc_RuntimeError, "System.__init__ was not called");
        return NULL;
    }
    if (ss_py_wait_turn(self) < 0)
        return NULL;
    if (!self->sys) { /* freed while we waited? (never: a waiter holds a reference) */
        PyErr_SetString(PyExc_RuntimeError, "System.__init__ was not called");
        return NULL;
    }
    return self->sys;
}

/* _check_turns(count): make `count` of the checks every call makes (for the bench,
 * which times it: what one owner at a time costs a one-substep step()). */
PyObject *ss_py_system_check_turns(SystemObject *self, PyObject *arg) {
    Py_ssize_t count = PyNumber_AsSsize_t(arg, PyExc_OverflowError);
    if (count == -1 && PyErr_Occurred())
        return NULL;
    if (count < 1) {
        PyErr_Format(PyExc_ValueError, "count must be >= 1, got %zd", count);
        return NULL;
    }
    for (Py_ssize_t k = 0; k < count; k++)
        if (!ss_py_system(self))
            return NULL;
    Py_RETURN_NONE;
}

/* ---- sim.lock: the lock as a Python object ----------------------------- */

/* A handle on a System's lock, with the interface of threading.RLock (and the three
 * private methods threading.Condition uses, so a Condition can wait on it). */
typedef struct {
    PyObject_HEAD SystemObject *system; /* a strong reference */
} LockObject;

static PyObject *Lock_acquire(LockObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"blocking", "timeout", NULL};
    int blocking = 1;
    double timeout = -1.0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|pd:acquire", kwlist, &blocking, &timeout))
        return NULL;
    if (!blocking && timeout != -1.0) {
        PyErr_SetString(PyExc_ValueError, "can't specify a timeout for a non-blocking call");
        return NULL;
    }
    if (timeout < 0 && timeout != -1.0) {
        PyErr_SetString(PyExc_ValueError, "timeout value must be a non-negative number");
        return NULL;
    }
    if (!(timeout <= 1e12)) { /* also NaN */
        PyErr_SetString(PyExc_OverflowError, "timeout value is too large");
        return NULL;
    }
    long long timeout_us = !blocking ? 0 : timeout < 0 ? -1 : (long long)(timeout * 1e6);
    int got = ss_py_own(self->system, timeout_us);
    if (got < 0)
        return NULL;
    return PyBool_FromLong(got);
}

static PyObject *Lock_release(LockObject *self, PyObject *unused) {
    (void)unused;
    if (ss_py_disown(self->system) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *Lock_enter(LockObject *self, PyObject *unused) {
    (void)unused;
    if (ss_py_own(self->system, -1) < 0)
        return NULL;
    Py_RETURN_TRUE;
}

static PyObject *Lock_exit(LockObject *self, PyObject *args) {
    (void)args;
    if (ss_py_disown(self->system) < 0)
        return NULL;
    Py_RETURN_FALSE;
}

static PyObject *Lock_locked(LockObject *self, PyObject *unused) {
    (void)unused;
    return PyBool_FromLong(self->system->owner != 0);
}

static PyObject *Lock_is_owned(LockObject *self, PyObject *unused) {
    (void)unused;
    return PyBool_FromLong(self->system->owner == PyThread_get_thread_ident());
}

/* threading.Condition.wait: let go of every level, and return what to restore. */
static PyObject *Lock_release_save(LockObject *self, PyObject *unused) {
    (void)unused;
    SystemObject *system = self->system;
    if (check_held(system) < 0)
        return NULL;
    Py_ssize_t depth = system->depth;
    system->depth = 0;
    system->owner = 0;
    PyThread_release_lock(system->mutex);
    return PyLong_FromSsize_t(depth);
}

static PyObject *Lock_acquire_restore(LockObject *self, PyObject *state) {
    Py_ssize_t depth = PyLong_AsSsize_t(state);
    if (depth == -1 && PyErr_Occurred())
        return NULL;
    if (depth < 1) {
        PyErr_SetString(PyExc_ValueError, "a saved lock depth is at least 1");
        return NULL;
    }
    int got = ss_py_own(self->system, -1);
    if (got < 0)
        return NULL;
    self->system->depth = depth;
    Py_RETURN_NONE;
}

static void Lock_dealloc(LockObject *self) {
    Py_XDECREF(self->system);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Lock_repr(LockObject *self) {
    SystemObject *system = self->system;
    return PyUnicode_FromFormat("<springsim System lock, %s, depth %zd>",
                                system->owner ? "held" : "free", system->depth);
}

static PyMethodDef Lock_methods[] = {
    {"acquire", (PyCFunction)(void (*)(void))Lock_acquire, METH_VARARGS | METH_KEYWORDS,
     "acquire(blocking=True, timeout=-1)\n--\n\nOwn the System (re-entrant: the owner may "
     "acquire again). Waits, with the GIL released, while another thread owns it; returns "
     "whether it got it."},
    {"release", (PyCFunction)Lock_release, METH_NOARGS,
     "release()\n--\n\nRelease one level; RuntimeError if this thread does not hold it."},
    {"locked", (PyCFunction)Lock_locked, METH_NOARGS,
     "locked()\n--\n\nWhether some thread owns the System."},
    {"__enter__", (PyCFunction)Lock_enter, METH_NOARGS, "Acquire (waiting)."},
    {"__exit__", (PyCFunction)Lock_exit, METH_VARARGS, "Release."},
    {"_is_owned", (PyCFunction)Lock_is_owned, METH_NOARGS,
     "Whether this thread owns it (threading.Condition)."},
    {"_release_save", (PyCFunction)Lock_release_save, METH_NOARGS,
     "Release every level, returning the depth (threading.Condition)."},
    {"_acquire_restore", (PyCFunction)Lock_acquire_restore, METH_O,
     "Acquire again to a saved depth (threading.Condition)."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject ss_py_lock_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "springsim._core.SystemLock",
    .tp_basicsize = sizeof(LockObject),
    .tp_dealloc = (destructor)Lock_dealloc,
    .tp_repr = (reprfunc)Lock_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A System's lock: re-entrant, with the interface of threading.RLock. Every call "
              "on the System holds it for its duration; hold it yourself (`with sim.lock:`) "
              "to make several calls one, with no other thread's call in between.",
    .tp_methods = Lock_methods,
};

PyObject *ss_py_system_lock(SystemObject *self, void *closure) {
    (void)closure;
    LockObject *lock = PyObject_New(LockObject, &ss_py_lock_type);
    if (!lock)
        return NULL;
    Py_INCREF(self);
    lock->system = self;
    return (PyObject *)lock;
}
