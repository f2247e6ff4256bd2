"""The C sources keep their two layers apart (docs/architecture.md, "Where each concern lives").

The kernel (springsim.h and every other .c file) is pure C11 and knows nothing of
Python; only the binding (module.c and the py_*.c files) includes Python's and NumPy's
headers. NumPy's C API table is defined once: module.c, which calls import_array(),
includes py_system.h as it is; every other binding file defines NO_IMPORT_ARRAY first.
"""

import pathlib
import re

CSRC = pathlib.Path(__file__).resolve().parents[2] / "csrc"
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def binding(path: pathlib.Path) -> bool:
    """The Python binding: the files of csrc/python/ (module.c and the py_*.c files)."""
    return path.parent == CSRC / "python"


def test_the_binding_is_its_own_folder():
    assert {p.name for p in (CSRC / "python").glob("*.c")} >= {"module.c", "py_system.c"}
    for path in CSRC.rglob("*.[ch]"):
        named_like_binding = path.name == "module.c" or path.name.startswith("py_")
        assert named_like_binding == binding(path), path


def test_the_kernel_includes_no_python_header():
    kernel = [p for p in sorted(CSRC.rglob("*.[ch]")) if not binding(p)]
    assert any(p.name == "springsim.h" for p in kernel)
    for path in kernel:
        includes = INCLUDE.findall(path.read_text())
        python = [
            h for h in includes if h == "Python.h" or h.startswith("numpy/") or h.startswith("py_")
        ]
        assert not python, f"{path.name} is kernel code but includes {python}"


def test_numpy_api_is_imported_in_module_c_only():
    for path in sorted(CSRC.rglob("py_*.c")):
        text = path.read_text()
        assert "import_array" not in text, path.name
        define = text.find("#define NO_IMPORT_ARRAY")
        include = text.find('#include "py_system.h"')
        assert 0 <= define < include, f"{path.name}: NO_IMPORT_ARRAY must come before py_system.h"
    module = (CSRC / "python" / "module.c").read_text()
    assert "#define NO_IMPORT_ARRAY" not in module and "import_array();" in module
