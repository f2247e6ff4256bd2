"""The source tree stays in order (issue 15, item 1; issue 25, items 4 and 5: no
circles, counted honestly; files split by concern, never by size).

Every import of the ``springsim`` package counts: at module level, inside functions,
methods and classes, and the type-only ones under ``if TYPE_CHECKING:``. Importing a
module runs the ``__init__`` of each package above it first, so that counts as
importing those packages too; a module importing its own parent package is not an
edge back (the parent is already running). The modules import no circle; an import
inside a function is kept for an optional third-party dependency. And the kernel's
files call each other in one direction only (a file calls only functions of files
below it).
"""

import ast
import pathlib
import re
import textwrap
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "springsim"

#: Modules of the package that need an optional third-party dependency to be imported,
#: and so may be imported inside a function (as that dependency is): the viewer's
#: widget subclasses anywidget's.
NEEDS_OPTIONAL = frozenset({"springsim.viewer.widget"})


def module_name(path: pathlib.Path, package: pathlib.Path) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_modules(package: pathlib.Path) -> dict[str, pathlib.Path]:
    """Module name -> file, for every ``.py`` file of the package folder ``package``."""
    return {
        module_name(p, package): p
        for p in sorted(package.rglob("*.py"))
        if "__pycache__" not in p.parts
    }


def imports(path: pathlib.Path, name: str) -> list[tuple[str, tuple[str, ...], bool]]:
    """(module, names, inside a function) for every import statement of a module,
    wherever it is (a function, a class, ``if TYPE_CHECKING:``): ``import a.b`` gives
    ("a.b", (), ...), ``from a import b, c`` gives ("a", ("b", "c"), ...) (b and c may be
    submodules); a relative import is resolved."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
            )
            if isinstance(child, ast.Import):
                found.extend((alias.name, (), inner) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - child.level + 1] + [base]).strip(".")
                found.append((base, tuple(alias.name for alias in child.names), inner))
            visit(child, inner)

    visit(ast.parse(path.read_text()), False)
    return found


def with_packages(module: str) -> list[str]:
    """``module`` and the packages whose ``__init__`` importing it runs first."""
    parts = module.split(".")
    return [".".join(parts[:k]) for k in range(1, len(parts) + 1)]


def import_graph(package: pathlib.Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (every import, see the docstring)."""
    modules = package_modules(package)
    graph = {}
    for name, path in modules.items():
        targets = set()
        for base, names, _ in imports(path, name):
            for imported in [base, *(f"{base}.{n}" for n in names)]:
                targets.update(m for m in with_packages(imported) if m in modules)
        # a module importing its own package (or itself) is not an edge back
        graph[name] = {m for m in targets if m != name and not name.startswith(m + ".")}
    return graph


def function_level_imports(package: pathlib.Path = PACKAGE) -> list[str]:
    """ "module -> imported" for each import of the package's own modules (or of a name
    from one) made inside a function: allowed only for those in :data:`NEEDS_OPTIONAL`."""
    modules = package_modules(package)
    root = package.name
    found = set()
    for name, path in modules.items():
        for base, names, in_function in imports(path, name):
            if not in_function or not (base == root or base.startswith(root + ".")):
                continue
            wanted = [f"{base}.{n}" for n in names if f"{base}.{n}" in modules]
            if not wanted or len(wanted) < len(names):  # a name of a module, not a module
                wanted.append(base)
            found.update(f"{name} -> {m}" for m in wanted if m not in NEEDS_OPTIONAL)
    return sorted(found)


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state = {}  # 1: on the current path, 2: done
    path = []

    def visit(node):
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def circles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan's)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def connect(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(component)

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def test_find_cycle_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
    assert circles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [{"a", "b"}]


def write_package(folder: pathlib.Path, files: dict[str, str]) -> pathlib.Path:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return folder / next(iter(files)).split("/")[0]


def test_a_circle_made_only_inside_a_function_is_found(tmp_path):
    # b imports a at module level; a imports b only inside a function: one circle.
    package = write_package(
        tmp_path,
        {
            "fake/__init__.py": "",
            "fake/a.py": """
                def f():
                    from fake.b import g

                    return g()
            """,
            "fake/b.py": """
                from fake import a


                def g():
                    return a
            """,
        },
    )
    graph = import_graph(package)
    assert graph == {"fake": set(), "fake.a": {"fake.b"}, "fake.b": {"fake.a"}}
    assert find_cycle(graph) == ["fake.a", "fake.b", "fake.a"]
    assert function_level_imports(package) == ["fake.a -> fake.b"]


def test_type_only_and_package_imports_count(tmp_path):
    # c's type-only import of d.e runs d/__init__.py first, which imports c.
    package = write_package(
        tmp_path,
        {
            "fake/__init__.py": "",
            "fake/c.py": """
                from typing import TYPE_CHECKING

                if TYPE_CHECKING:
                    from .d.e import E
            """,
            "fake/d/__init__.py": "from fake import c\n",
            "fake/d/e.py": "import fake.d\n\nE = int\n",
        },
    )
    graph = import_graph(package)
    assert graph["fake.c"] == {"fake.d", "fake.d.e"}
    assert graph["fake.d"] == {"fake.c"} and graph["fake.d.e"] == set()
    assert find_cycle(graph) == ["fake.c", "fake.d", "fake.c"]
    assert function_level_imports(package) == []


def test_the_package_imports_no_circle():
    graph = import_graph()
    assert "springsim.system" in graph and "springsim.system" in graph["springsim.io"]
    cycle = find_cycle(graph)
    assert cycle is None, "import circle: " + " -> ".join(cycle)


def test_imports_inside_functions_are_of_optional_dependencies_only():
    found = function_level_imports()
    assert not found, "the package's own modules imported inside a function: " + ", ".join(found)


def test_every_folder_of_the_package_is_a_package_that_is_installed():
    # setuptools installs the packages pyproject.toml lists, and only those: a folder
    # left out would be missing from the wheel, while the tests (which import the
    # source tree) pass.
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["packages"])
    folders = {p.parent for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts}
    assert all((folder / "__init__.py").is_file() for folder in folders), sorted(folders)
    assert {module_name(folder / "__init__.py", PACKAGE) for folder in folders} == listed


# A kernel function's definition: its name at the start of a line, after its return
# type, with the parameter list followed by a body (not a declaration's ";").
C_DEFINITION = re.compile(r"^[A-Za-z_][\w \*]*?\b(ss_\w+)\s*\([^;{]*\)\s*\{", re.M)
C_CALL = re.compile(r"\b(ss_\w+)\s*\(")


def kernel_call_graph(sources: dict[str, str]) -> dict[str, set[str]]:
    """C file -> the other C files whose ``ss_`` functions it calls (comments ignored)."""
    code = {name: re.sub(r"/\*.*?\*/", "", text, flags=re.S) for name, text in sources.items()}
    defined = {}
    for name, text in code.items():
        for match in C_DEFINITION.finditer(text):
            defined.setdefault(match.group(1), name)
    return {
        name: {defined[f] for f in C_CALL.findall(text) if defined.get(f, name) != name}
        for name, text in code.items()
    }


def test_kernel_call_graph_reads_definitions_and_calls():
    sources = {
        "a.c": "/* ss_c() */\nint ss_a(int x) {\n    return ss_b(x);\n}\n",
        "b.c": "int ss_b(int x);\nint ss_b(int x) {\n    return ss_a(x) + ss_b(x - 1);\n}\n",
        "c.c": "void ss_c(void) {\n}\n",
    }
    graph = kernel_call_graph(sources)
    assert graph == {"a.c": {"b.c"}, "b.c": {"a.c"}, "c.c": set()}
    assert find_cycle(graph) == ["a.c", "b.c", "a.c"]


def test_the_kernel_files_call_in_one_direction():
    paths = sorted((ROOT / "csrc").rglob("*.c"))
    sources = {p.name: p.read_text() for p in paths}
    assert len(sources) == len(paths), "two C files of one name"
    graph = kernel_call_graph(sources)
    # the layers the issue names: storage below colouring and gas, errors below all
    assert graph["plan.c"] >= {"alloc.c", "errors.c"} and "system.c" in graph["topology.c"]
    cycle = find_cycle(graph)
    assert cycle is None, "kernel files calling in a circle: " + " -> ".join(cycle)
