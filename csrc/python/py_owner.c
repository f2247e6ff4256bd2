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
 * The lock is fair: threads that wait are served first come, first served. Letting go
 * hands the lock straight to the first waiter (`owner` becomes its thread id before it
 * wakes), so a thread that steps in a loop cannot take the lock back before a waiting
 * reader had its turn. The fields live in SystemObject: `owner` (0 for none), `depth`
 * and `waiters` (a queue of ss_py_waiter, each on its waiting thread's C stack). They
 * are read and written only with the GIL held, which is what makes them consistent. */
#define NO_IMPORT_ARRAY /* module.c imports NumPy's C API: see py_system.h */
#include "py_system.h"

#include <pythread.h>

/* The time between looks for a signal (Ctrl-C) while waiting for another thread. */
#define WAIT_SLICE_US 50000

/* A thread waiting for the lock: `wake` is released when the lock is handed to it. */
typedef struct ss_py_waiter {
    struct ss_py_waiter *next;
    PyThread_type_lock wake;
    unsigned long thread;
    int granted;
} ss_py_waiter;

int ss_py_owner_init(SystemObject *self) {
    self->owner = 0;
    self->depth = 0;
    self->waiters = NULL;
    return 0;
}

void ss_py_owner_free(SystemObject *self) {
    /* Nobody waits: each waiter holds a reference to the system. */
    self->waiters = NULL;
}

/* Let go of the lock entirely: hand it to the first waiter, if any. */
static void pass_on(SystemObject *self) {
    ss_py_waiter *first = self->waiters;
    if (!first) {
        self->owner = 0;
        self->depth = 0;
        return;
    }
    self->waiters = first->next;
    self->owner = first->thread;
    self->depth = 1;
    first->granted = 1;
    PyThread_release_lock(first->wake);
}

static void leave_queue(SystemObject *self, ss_py_waiter *me) {
    for (ss_py_waiter **link = &self->waiters; *link; link = &(*link)->next)
        if (*link == me) {
            *link = me->next;
            return;
        }
}

/* Join the queue and wait, with the GIL released, in slices that see Ctrl-C.
 * timeout_us < 0 waits for ever. Returns 1 when handed the lock, 0 on timeout, -1 with
 * the signal handler's exception (or MemoryError) set. */
static int wait_in_queue(SystemObject *self, unsigned long me, long long timeout_us) {
    ss_py_waiter waiter = {NULL, PyThread_allocate_lock(), me, 0};
    if (!waiter.wake) {
        PyErr_SetString(PyExc_MemoryError, "cannot allocate a lock to wait for a System");
        return -1;
    }
    PyThread_acquire_lock(waiter.wake, WAIT_LOCK); /* so that the next take waits */
    ss_py_waiter **tail = &self->waiters;
    while (*tail)
        tail = &(*tail)->next;
    *tail = &waiter;
    Py_INCREF(self); /* the system outlives its waiters */
    int result = 0;
    for (;;) {
        long long slice = WAIT_SLICE_US;
        if (timeout_us >= 0 && timeout_us < slice)
            slice = timeout_us;
        PyThreadState *released = PyEval_SaveThread();
        PyThread_acquire_lock_timed(waiter.wake, slice, 0);
        PyEval_RestoreThread(released);
        /* With the GIL again: `granted` cannot change under us now. */
        if (waiter.granted) {
            result = 1;
            break;
        }
        if (PyErr_CheckSignals() < 0) {
            leave_queue(self, &waiter);
            result = -1;
            break;
        }
        if (timeout_us >= 0) {
            timeout_us -= slice;
            if (timeout_us <= 0) {
                leave_queue(self, &waiter);
                break;
            }
        }
    }
    PyThread_free_lock(waiter.wake);
    Py_DECREF(self);
    return result;
}

int ss_py_own(SystemObject *self, long long timeout_us) {
    unsigned long me = PyThread_get_thread_ident();
    if (self->owner == me) {
        self->depth++;
        return 1;
    }
    if (self->owner == 0 && !self->waiters) {
        self->owner = me;
        self->depth = 1;
        return 1;
    }
    if (timeout_us == 0)
        return 0;
    return wait_in_queue(self, me, timeout_us);
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
    if (--self->depth == 0)
        pass_on(self);
    return 0;
}

/* Wait until no other thread owns the system. Returns 0, or -1 with an exception.
 * A waiter takes its turn in the queue and passes the lock on at once: the caller
 * holds the GIL from here to the end of its call, so the next owner cannot begin
 * before it is done. */
int ss_py_wait_turn(SystemObject *self) {
    unsigned long me = PyThread_get_thread_ident();
    if (self->owner == 0 || self->owner == me)
        return 0;
    if (wait_in_queue(self, me, -1) < 0)
        return -1;
    pass_on(self);
    return 0;
}

/* The system, once no other thread owns it (py_owner.c: the call waits, with the GIL
 * released, for the owner to let go); NULL with an exception when it is not
 * initialised or the wait was interrupted. The caller then holds the GIL until it is
 * done with the system, so no other thread's call can begin meanwhile. */
ss_system *ss_py_system_query(SystemObject *self) {
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

ss_system *ss_py_system(SystemObject *self) {
    if (!ss_py_system_query(self))
        return NULL;
    if (self->in_step) { /* a drive's function, called by this thread's step (py_drives.c) */
        PyErr_SetString(PyExc_RuntimeError,
                        "a drive's path function may look at the System its step is calling "
                        "it from, but not change it or step it");
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
    pass_on(system);
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
