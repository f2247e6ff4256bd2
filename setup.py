"""Build the one extension, springsim._core, from csrc/.

Set SPRINGSIM_SANITIZE=1 at build time to compile with AddressSanitizer and
UndefinedBehaviorSanitizer (see README, "Testing under sanitizers").
"""

import glob
import os
import subprocess
import sysconfig
import tempfile

import numpy as np
from setuptools import Extension, setup

compile_args = ["-std=c11", "-Wall", "-Wextra", "-ffp-contract=off"]
link_args = []
if os.environ.get("SPRINGSIM_SANITIZE") == "1":
    sanitize = [
        "-fsanitize=address,undefined",
        "-fno-omit-frame-pointer",
        "-fno-sanitize-recover=all",
    ]
    compile_args += sanitize + ["-O1", "-g"]
    link_args += sanitize
else:
    compile_args += ["-O3"]


def openmp_flags() -> list[str]:
    """["-fopenmp"] if the C compiler builds and links an OpenMP program, else [].

    SPRINGSIM_OPENMP=0 forces a serial build. Results are bit-identical either way.
    """
    if os.environ.get("SPRINGSIM_OPENMP") == "0":
        return []
    compiler = (sysconfig.get_config_var("CC") or "cc").split()
    source = "#include <omp.h>\nint main(void) { return omp_get_max_threads() < 1; }\n"
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "probe.c")
        with open(path, "w") as f:
            f.write(source)
        try:
            result = subprocess.run(
                [*compiler, "-fopenmp", path, "-o", os.path.join(tmp, "probe")],
                capture_output=True,
            )
        except OSError:
            return []
    return ["-fopenmp"] if result.returncode == 0 else []


openmp = openmp_flags()
compile_args += openmp
link_args += openmp

core = Extension(
    "springsim._core",
    sources=sorted(glob.glob("csrc/*.c")),
    depends=sorted(glob.glob("csrc/*.h")),
    include_dirs=[np.get_include(), "csrc"],
    define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    extra_compile_args=compile_args,
    extra_link_args=link_args,
)

setup(ext_modules=[core])
