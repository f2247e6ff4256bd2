"""Build the one extension, springsim._core, from csrc/.

Set SPRINGSIM_SANITIZE=1 at build time to compile with AddressSanitizer and
UndefinedBehaviorSanitizer (see README, "Testing under sanitizers").
"""

import glob
import os

import numpy as np
from setuptools import Extension, setup

compile_args = ["-std=c11", "-Wall", "-Wextra", "-ffp-contract=off"]
link_args = []
if os.environ.get("SPRINGSIM_SANITIZE") == "1":
    sanitize = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=all"]
    compile_args += sanitize + ["-O1", "-g"]
    link_args += sanitize
else:
    compile_args += ["-O3"]

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
