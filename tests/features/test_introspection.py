"""Introspection (issue 16, item 4): signatures that tools can read, type annotations on
everything public, an ``Energy`` that prints with its units, and a ``dir(springsim)``
of the public names only."""

import ast
import inspect
import pathlib
import types
import typing

import numpy as np
import pytest

import springsim as ss

STUB = pathlib.Path(ss._core.__file__).with_name("_core.pyi")
if not STUB.exists():  # an in-place build: the stub sits in the source tree
    STUB = pathlib.Path(__file__).resolve().parents[2] / "src" / "springsim" / "_core.pyi"


# ---------------------------------------------------------------- System(dim=...)


def test_system_has_a_signature():
    signature = inspect.signature(ss.System, eval_str=True)
    assert list(signature.parameters) == ["dim"]
    dim = signature.parameters["dim"]
    assert (dim.default, dim.annotation) == (3, int)
    assert dim.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert ss.System(2).dim == ss.System(dim=2).dim == 2 and ss.System().dim == 3
    with pytest.raises(TypeError):
        ss.System(dims=2)


def test_ipython_completes_the_dim_keyword():
    jedi = pytest.importorskip("jedi")  # what IPython's completer uses
    completions = jedi.Interpreter("ss.System(di", [{"ss": ss}]).complete()
    assert "dim=" in [c.name_with_symbols for c in completions]
    (signature,) = jedi.Interpreter("ss.System(", [{"ss": ss}]).get_signatures()
    assert [p.name for p in signature.params] == ["dim"]


def test_the_kernels_methods_have_signatures():
    sim = ss.System(dim=2)
    assert list(inspect.signature(sim.step).parameters) == ["dt", "steps", "method"]
    for name in ("momentum", "center_of_mass", "spring_lengths", "spring_tensions"):
        assert list(inspect.signature(getattr(sim, name)).parameters) == [], name
        assert inspect.signature(getattr(ss.System, name)).parameters, name  # self


# ---------------------------------------------------------------- annotations


def stub_methods():
    """name -> the FunctionDef of each method of System in the kernel's stub."""
    tree = ast.parse(STUB.read_text())
    (system,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "System"]
    return {n.name: n for n in system.body if isinstance(n, ast.FunctionDef)}


def assert_annotated(function, name):
    signature = inspect.signature(function)
    missing = [
        p.name
        for p in signature.parameters.values()
        if p.annotation is inspect.Parameter.empty and p.name not in ("self", "cls")
    ]
    assert not missing, f"{name}: parameters without annotations: {missing}"
    if name.rsplit(".", 1)[-1] != "__init__":
        assert signature.return_annotation is not inspect.Signature.empty, f"{name}: no return"


def public_methods(cls):
    for name, member in inspect.getmembers(cls):
        if name.startswith("_") and name != "__init__":
            continue
        if isinstance(member, (types.FunctionType, types.MethodDescriptorType)):
            yield name, member


def test_every_public_function_and_method_is_annotated():
    stub = stub_methods()
    checked = 0
    for name in ss.__all__:
        obj = getattr(ss, name)
        if isinstance(obj, types.FunctionType):
            assert_annotated(obj, name)
            checked += 1
        elif isinstance(obj, type) and not issubclass(obj, BaseException):
            for method_name, method in public_methods(obj):
                qualified = f"{name}.{method_name}"
                if isinstance(method, types.MethodDescriptorType):
                    if method.__objclass__ is not ss._core.System:
                        continue  # tuple's count and index (Energy, Solve)
                    # the C kernel's: typed in its stub
                    function = stub.get(method_name)
                    assert function is not None, f"{qualified} is not in _core.pyi"
                    params = function.args.args[1:] + function.args.kwonlyargs
                    assert all(p.annotation for p in params), f"{qualified} (stub)"
                    assert function.returns is not None, f"{qualified} (stub): no return"
                elif method.__module__.startswith("springsim"):
                    assert_annotated(method, qualified)
                checked += 1
    assert checked > 40


def test_the_annotations_resolve():
    assert typing.get_type_hints(ss.System.__init__) == {"dim": int, "return": type(None)}
    assert typing.get_type_hints(ss.System.energy)["return"] is ss.Energy


# ---------------------------------------------------------------- Energy


def test_energy_prints_with_units_and_four_digits():
    e = ss.Energy(1.23456789, 0.0, -58.86000001, -0.0, 2e-3, 1e-17)
    text = (
        "Energy(kinetic=1.235 J, elastic=0 J, gravity=-58.86 J, pressure=0 J, contact=0.002 J,"
        " total=1e-17 J)"
    )
    assert repr(e) == str(e) == f"{e}" == text


def test_energy_is_still_a_named_tuple():
    sim = ss.System(dim=2)
    sim.add_nodes([0, 2], masses=3.0, velocities=[1, 0])
    e = sim.energy()
    kinetic, elastic, gravity, pressure, contact, total = e  # unpacking
    assert (e.kinetic, e[0], kinetic) == (1.5, 1.5, 1.5)
    assert isinstance(e, tuple) and e._fields[-1] == "total"
    assert e._replace(kinetic=0.0).kinetic == 0.0 and e._asdict()["total"] == total
    assert repr(e).startswith("Energy(kinetic=1.5 J, elastic=0 J, gravity=58.86 J")
    assert isinstance(e.total, float) and np.isclose(total, 1.5 + 58.86)


# ---------------------------------------------------------------- dir(springsim)


def test_dir_lists_the_public_names_only():
    names = dir(ss)
    assert set(ss.__all__) <= set(names)
    for hidden in (
        "system",
        "_core",
        "np",
        "io",
        "builders",
        "files",
        "model",
        "runtime",
        "_set_default_at_import",
    ):
        assert hidden not in names, hidden
    assert {"__version__", "__doc__"} <= set(names)
    assert names == sorted(names)
    for name in names:
        getattr(ss, name)  # every listed name is there
    assert ss.system is not None and ss._core is not None  # still importable, just not listed
