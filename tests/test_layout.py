"""The source tree stays in order (issue 15, item 1; files split by concern, never by
size: issue 25, item 5).

The module-level imports of the ``springsim`` package form no circle (a feature module
receives a system, or imports lazily inside a function, instead of importing back a
module that imports it); and the kernel's files call each other in one direction only (a
file calls only functions of files below it).
"""

import ast
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "springsim"


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports at module level (its top statements)."""
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        imported = set()
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(
                        package.split(".")[: len(package.split(".")) - node.level + 1] + [base]
                    ).strip(".")
                imported.add(base)
                imported.update(f"{base}.{alias.name}" for alias in node.names)
        # a submodule importing its own package is not an edge back: the package's
        # __init__ runs first, whatever the submodule imports
        graph[name] = {
            m for m in imported if m in modules and m != name and not name.startswith(m + ".")
        }
    return graph


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


def test_find_cycle_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_the_package_imports_no_circle():
    graph = import_graph()
    assert "springsim.system" in graph and graph["springsim.io"] >= {"springsim.system"}
    cycle = find_cycle(graph)
    assert cycle is None, "import circle: " + " -> ".join(cycle)


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
