"""Build the one extension, springsim._core, from csrc/.

The flags depend on the compiler (setuptools' compiler_type):

- GCC or clang ("unix": Linux, macOS): C11, -O3, -ffp-contract=off (no fused
  multiply-adds, so that every SIMD path and the NumPy reference give the same bits),
  and -fopenmp if the compiler builds and links an OpenMP program with it. Apple's
  clang does not (no libomp), so a macOS build is serial unless CC is a clang with
  OpenMP; results are bit-identical either way.
- MSVC ("msvc": Windows): /std:c11, /O2 and /fp:precise, which since Visual Studio
  2022 (17.0) does not contract a * b + c into a fused multiply-add (before 17.0 it
  could, where the target has FMA: not x64 without /arch:AVX2, which is not given);
  and /openmp, OpenMP 2.0, which is all the kernel's pragmas ask for (parallel,
  for schedule(dynamic) nowait, single, barrier; signed loop indices). The AVX2 and
  AVX-512 paths are GCC/clang code: MSVC builds the portable path.

Set SPRINGSIM_OPENMP=0 at build time for a serial build, and SPRINGSIM_SANITIZE=1
(GCC or clang) to compile with AddressSanitizer and UndefinedBehaviorSanitizer (see
docs/guide/development.md, "Testing under sanitizers").
"""

import glob
import os
import subprocess
import sysconfig
import tempfile

import numpy as np
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


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


def gnu_flags() -> tuple[list[str], list[str]]:
    """Compile and link arguments for GCC and clang."""
    compile_args = ["-std=c11", "-Wall", "-Wextra", "-ffp-contract=off"]
    link_args: list[str] = []
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
    openmp = openmp_flags()
    return compile_args + openmp, link_args + openmp


def msvc_flags() -> tuple[list[str], list[str]]:
    """Compile and link arguments for MSVC (cl.exe; it links OpenMP's vcomp140.dll by
    itself, which delvewheel copies into a Windows wheel)."""
    if os.environ.get("SPRINGSIM_SANITIZE") == "1":
        raise RuntimeError("SPRINGSIM_SANITIZE=1 needs GCC or clang, not MSVC")
    compile_args = ["/std:c11", "/O2", "/fp:precise"]
    if os.environ.get("SPRINGSIM_OPENMP") != "0":
        compile_args += ["/openmp"]
    return compile_args, []


class BuildExt(build_ext):
    """build_ext with the flags of the compiler it is about to use."""

    def build_extensions(self) -> None:
        if self.compiler.compiler_type == "msvc":
            compile_args, link_args = msvc_flags()
        else:
            compile_args, link_args = gnu_flags()
        for extension in self.extensions:
            extension.extra_compile_args = compile_args
            extension.extra_link_args = link_args
        super().build_extensions()


# csrc/: the kernel's public header (springsim.h), the kernel's stages by concern
# (csrc/kernel/<concern>/) and the Python binding (csrc/python/); every folder that
# holds a header is on the include path.
headers = sorted(glob.glob("csrc/**/*.h", recursive=True))
core = Extension(
    "springsim._core",
    sources=sorted(glob.glob("csrc/**/*.c", recursive=True)),
    depends=headers,
    include_dirs=[np.get_include(), *sorted({os.path.dirname(h) for h in headers})],
    define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
)

setup(ext_modules=[core], cmdclass={"build_ext": BuildExt})
