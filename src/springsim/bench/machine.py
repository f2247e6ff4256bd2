"""The machine and the kernel's build: cores, threads, SIMD path, for the report and the JSON."""

import contextlib
import os
import platform

import numpy as np

import springsim as ss


def _threading_api():
    """springsim's (set_num_threads, get_num_threads, threading_available), None if missing."""
    return (
        getattr(ss, "set_num_threads", None),
        getattr(ss, "get_num_threads", None),
        getattr(ss, "threading_available", None),
    )


def threading_available() -> bool:
    """Whether the kernel can step one system on several OpenMP threads.

    False when springsim has no threading API (``springsim.set_num_threads``) or was
    compiled without OpenMP.
    """
    setter, _, available = _threading_api()
    return bool(setter is not None and available is not None and available())


def get_threads() -> int:
    """The kernel's thread count: ``springsim.get_num_threads()``, or 1 without that API."""
    getter = _threading_api()[1]
    return int(getter()) if getter is not None else 1


def set_threads(n: int) -> int:
    """Ask the kernel for ``n`` threads; returns the count it now uses (1 without the API)."""
    setter = _threading_api()[0]
    if setter is not None:
        setter(int(n))
    return get_threads()


def thread_note() -> str:
    """Why the kernel may not use the threads asked for."""
    if _threading_api()[0] is None:
        return "this springsim has no set_num_threads()"
    if not threading_available():
        return "this springsim was compiled without OpenMP"
    return "the kernel chose otherwise"


def cores() -> int:
    """Logical CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def build_info() -> dict:
    """``springsim.build_info()``: the SIMD path, threads and OpenMP of the kernel."""
    return ss.build_info()


def describe_build(info: dict) -> str:
    """One line for the report: the SIMD path (how it was chosen, the kernel's measured
    ns per spring of each path) and the threads of the kernel."""
    available = [path for path, ok in info["simd_paths"].items() if ok]
    measured = info.get("simd_ns_per_spring")
    how = info.get("simd_choice", "")
    if measured:
        times = ", ".join(f"{path} {ns:.2f}" for path, ns in measured.items())
        how += f": {times} ns/spring in {info['simd_measurement_ms']:.1f} ms"
    return (
        f"kernel build: simd {info['simd']} ({how}; available: {', '.join(available)}), "
        f"threads {info['threads']}, openmp {info['openmp']}"
    )


def _cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo, else platform.processor()."""
    with contextlib.suppress(OSError):
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def machine() -> dict:
    """A description of this machine and software, for the JSON output.

    Returns
    -------
    dict
        platform, cpu (model), cores (logical CPUs this process may use), load
        (1-minute load average, if known), python, numpy and springsim versions,
        the kernel's threading state and ``build`` (``springsim.build_info()``).
    """
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        load = None
    return {
        "platform": platform.platform(),
        "cpu": _cpu_model(),
        "cores": cores(),
        "load_1min": load,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "springsim": ss.__version__,
        "threading_api": _threading_api()[0] is not None,
        "threading_available": threading_available(),
        "default_threads": get_threads(),
        "SPRINGSIM_NUM_THREADS": os.environ.get("SPRINGSIM_NUM_THREADS"),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
        "build": build_info(),
    }
