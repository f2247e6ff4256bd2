"""The documentation is tested: README examples, docstring examples, the demo command."""

import contextlib
import doctest
import io
import pathlib
import pkgutil
import re
import subprocess
import sys

import numpy as np
import pytest

import springsim
import springsim.__main__ as demo

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
PYTHON_BLOCKS = re.findall(r"```python\n(.*?)```", README, flags=re.S)


def test_readme_has_examples():
    assert len(PYTHON_BLOCKS) >= 3


@pytest.mark.parametrize("block", PYTHON_BLOCKS, ids=lambda b: b.splitlines()[0][:40])
def test_readme_example_runs(block):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, "README.md", "exec"), {})
    assert out.getvalue().strip(), "every README example prints what it shows"


def test_readme_first_simulation_is_the_documented_one():
    # The first example: a 0.5 kg mass on a damped spring (k = 100 N/m) below a pin.
    # After 1 s of lightly damped oscillation about the equilibrium 1 + m g / k, the
    # length lies within the first amplitude m g / k of it.
    namespace = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(PYTHON_BLOCKS[0], "README.md", "exec"), namespace)
    sim = namespace["sim"]
    sag = 0.5 * 9.81 / 100.0
    assert abs(sim.time - 1.0) < 1e-12
    assert sim.positions[0].tolist() == [0.0, 0.0]
    assert abs(-sim.positions[1, 1] - (1.0 + sag)) <= sag


def _modules():
    yield springsim
    for info in pkgutil.iter_modules(springsim.__path__, "springsim."):
        if not info.name.startswith("springsim._"):
            yield __import__(info.name, fromlist=["_"])


@pytest.mark.parametrize("module", list(_modules()), ids=lambda m: m.__name__)
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_every_public_name_has_a_numpydoc_docstring():
    for name in springsim.__all__:
        obj = getattr(springsim, name)
        if isinstance(obj, tuple):
            continue
        assert obj.__doc__, name
    for name in ("add_nodes", "add_springs", "remove_springs", "energy", "critical_dt"):
        doc = getattr(springsim.System, name).__doc__
        assert doc and len(doc.strip().splitlines()) > 2, name


def test_demo_prints_a_conserved_energy_table(capsys):
    assert demo.main(["--rows", "5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = np.array([[float(v) for v in line.split()] for line in lines[2:]])
    assert rows.shape == (6, 5)
    np.testing.assert_allclose(rows[:, 0], np.linspace(0.0, 1.0, 6), atol=0.01)
    # Symplectic Euler at a quarter of the stability limit: the total energy stays
    # within 1% of the energy exchanged (the largest kinetic energy).
    assert np.abs(rows[:, 4]).max() < 0.01 * rows[:, 1].max()
    np.testing.assert_allclose(rows[:, 1:4].sum(axis=1), rows[:, 4], atol=1e-4)


def test_demo_runs_as_a_module():
    out = subprocess.run(
        [sys.executable, "-m", "springsim", "--rows", "2", "--method", "rk4"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT / "tests",
    ).stdout
    assert "method = rk4" in out and len(out.splitlines()) == 5
