/* module.c - the springsim._core module: its functions (threads, the spring loop's SIMD
 * paths, the floating-point mode) and its init, which imports NumPy's C API and adds
 * the System type (py_system.c) and the exceptions (py_errors.c).
 *
 * module.c and the py_*.c files are the CPython + NumPy glue, and the only files that
 * include Python.h: see py_system.h for which concern lives in which file. */
#include "py_system.h" /* without NO_IMPORT_ARRAY: the NumPy C API table is defined here */

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

/* _simd_get() -> the name of the path the spring loop takes (chosen on first use). */
static PyObject *core_simd_get(PyObject *module, PyObject *unused) {
    (void)module;
    (void)unused;
    PyThreadState *released = PyEval_SaveThread(); /* a first use measures, a few ms */
    const int path = ss_simd_get();
    PyEval_RestoreThread(released);
    return PyUnicode_FromString(ss_simd_name(path));
}

/* _simd_set(name or None, forced=False) -> the name now in use. A name: that path (how:
 * "forced" if forced, else "set"); None: the measured one (measured now if need be). */
static PyObject *core_simd_set(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *name;
    int forced = 0;
    if (!PyArg_ParseTuple(args, "O|p:_simd_set", &name, &forced))
        return NULL;
    int path = 0;
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
    const int how = name == Py_None ? SS_SIMD_MEASURED : forced ? SS_SIMD_FORCED : SS_SIMD_SET;
    PyThreadState *released = PyEval_SaveThread(); /* None may measure, a few ms */
    path = ss_simd_set(path, how);
    PyEval_RestoreThread(released);
    return PyUnicode_FromString(ss_simd_name(path));
}

/* _simd_choice() -> {"path": name or None, "how": ss_simd_how_name, "ns_per_spring":
 * {name: ns} or None, "seconds": float or None, "measurements": int}: what was chosen
 * and what the measurement found, without choosing (None before the first use). */
static PyObject *core_simd_choice(PyObject *module, PyObject *unused) {
    (void)module;
    (void)unused;
    double ns[SS_SIMD_COUNT], seconds;
    int runs;
    const int measured = ss_simd_measurement(ns, &seconds, &runs);
    const int how = ss_simd_how();
    PyObject *times = Py_None, *took = Py_None;
    Py_INCREF(Py_None);
    Py_INCREF(Py_None);
    if (measured) {
        Py_DECREF(times);
        Py_DECREF(took);
        times = PyDict_New();
        took = PyFloat_FromDouble(seconds);
        for (int path = 0; times && path < SS_SIMD_COUNT; path++) {
            if (!(ns[path] > 0.0))
                continue;
            PyObject *value = PyFloat_FromDouble(ns[path]);
            if (!value || PyDict_SetItemString(times, ss_simd_name(path), value) < 0)
                Py_CLEAR(times);
            Py_XDECREF(value);
        }
    }
    PyObject *choice = NULL;
    if (times && took)
        choice = Py_BuildValue(
            "{s:s,s:s,s:O,s:O,s:i}", "path", how ? ss_simd_name(ss_simd_get()) : NULL, "how",
            ss_simd_how_name(how), "ns_per_spring", times, "seconds", took, "measurements", runs);
    Py_XDECREF(times);
    Py_XDECREF(took);
    return choice;
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
    {"_simd_get", core_simd_get, METH_NOARGS, "The SIMD path in use (chosen on first use)."},
    {"_simd_set", core_simd_set, METH_VARARGS,
     "_simd_set(path or None, forced=False): use a SIMD path (None: the measured one)."},
    {"_simd_choice", core_simd_choice, METH_NOARGS,
     "How the SIMD path was chosen and what the measurement found (chooses nothing)."},
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

/* A float constant of the module: -1 with an exception on failure. */
static int add_float(PyObject *m, const char *name, double value) {
    PyObject *number = PyFloat_FromDouble(value);
    if (!number)
        return -1;
    const int status = PyModule_AddObjectRef(m, name, number);
    Py_DECREF(number);
    return status;
}

PyMODINIT_FUNC PyInit__core(void) {
    import_array();
    /* The kernel allocates through PyMem_Raw*: thread-safe without the GIL, and
     * visible to tracemalloc. */
    ss_set_allocator((ss_allocator){PyMem_RawMalloc, PyMem_RawFree});

    if (PyType_Ready(&ss_py_system_type) < 0 || PyType_Ready(&ss_py_lock_type) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&core_module);
    if (!m)
        return NULL;
    if (ss_py_add_exceptions(m) < 0)
        goto error;
    if (PyModule_AddObjectRef(m, "System", (PyObject *)&ss_py_system_type) < 0)
        goto error;
    /* The divergence watch's books modes (divergence.h), for springsim.stepping.divergence:
     * shared from here, never copied by hand. */
    if (PyModule_AddIntConstant(m, "BOOKS_CALL", SS_BOOKS_CALL) < 0 ||
        PyModule_AddIntConstant(m, "BOOKS_START", SS_BOOKS_START) < 0 ||
        PyModule_AddIntConstant(m, "BOOKS_CONTINUE", SS_BOOKS_CONTINUE) < 0 ||
        PyModule_AddIntConstant(m, "BOOKS_CHECK_END", SS_BOOKS_CHECK_END) < 0 ||
        PyModule_AddIntConstant(m, "BOOKS_EVERY", SS_BOOKS_EVERY) < 0)
        goto error;
    /* Node-node contact's law from the step (contact.h), for springsim.reference's tests. */
    if (add_float(m, "CONTACT_OMEGA_DT", SS_CONTACT_OMEGA_DT) < 0 ||
        add_float(m, "CONTACT_DAMPING_DT", SS_CONTACT_DAMPING_DT) < 0)
        goto error;
    /* The kinds of drive (drives.h), for springsim.model.pins. */
    if (PyModule_AddIntConstant(m, "DRIVE_LINE", SS_DRIVE_LINE) < 0 ||
        PyModule_AddIntConstant(m, "DRIVE_TARGETS", SS_DRIVE_TARGETS) < 0 ||
        PyModule_AddIntConstant(m, "DRIVE_HOOK", SS_DRIVE_HOOK) < 0)
        goto error;
    /* The state's fields (state.c), for springsim.files.npz and the state tests. */
    PyObject *fields = ss_py_state_fields();
    if (!fields || PyModule_AddObject(m, "STATE_FIELDS", fields) < 0) {
        Py_XDECREF(fields);
        goto error;
    }
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
