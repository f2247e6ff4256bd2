"""The documentation is tested: README examples, docstring examples, the demo command."""

import contextlib
import doctest
import io
import itertools
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
def test_readme_example_runs(block, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, "README.md", "exec"), {"__name__": "__main__"})  # as a script
    assert out.getvalue().strip(), "every README example prints what it shows"


def test_readme_sweep_reports_twice_the_critical_step_unstable():
    # It used to print "2.0 ok" for a run whose energy reached 3.4e44 J.
    (block,) = [b for b in PYTHON_BLOCKS if "ss.sweep(" in b]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, "README.md", "exec"), {"__name__": "__main__"})
    assert out.getvalue().split() == ["0.5", "ok", "2.0", "unstable"]


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
        if info.name != "springsim._core":  # System's methods live in springsim._*.py
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


def _table(out: str) -> np.ndarray:
    """The numeric rows of a demo's energy table."""
    rows = []
    for line in out.splitlines():
        try:
            rows.append([float(v) for v in line.split()])
        except ValueError:
            continue
    return np.array(rows)


def test_demo_prints_a_conserved_energy_table(capsys):
    assert demo.main(["demo", "string", "--rows", "5", "--duration", "1"]) == 0
    rows = _table(capsys.readouterr().out)
    assert rows.shape == (6, 5)
    np.testing.assert_allclose(rows[:, 0], np.linspace(0.0, 1.0, 6), atol=0.01)
    # Symplectic Euler at half the stability limit, no damping: the total energy
    # stays within 2% of the energy exchanged (the largest kinetic energy).
    assert np.abs(rows[:, 4]).max() < 0.02 * rows[:, 1].max()
    np.testing.assert_allclose(rows[:, 1:4].sum(axis=1), rows[:, 4], atol=1e-3)


@pytest.mark.parametrize("scene", ["string", "cloth", "jelly", "balloon"])
def test_demo_scene_runs_and_draws(scene, tmp_path):
    png = tmp_path / f"{scene}.png"
    out = subprocess.run(
        [sys.executable, "-m", "springsim", "demo", scene, "--rows", "3", "--png", str(png)],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    ).stdout
    rows = _table(out)
    assert rows.shape == (4, 5) and np.all(np.isfinite(rows))
    assert rows[-1, 0] > 1.0  # a few simulated seconds
    import matplotlib.image

    image = matplotlib.image.imread(png)[..., :3]
    not_white = np.any(image < 0.9, axis=-1)
    assert 0.01 < not_white.mean() < 0.9, "the picture is blank or solid"


def test_plain_command_and_help(tmp_path):
    run = dict(capture_output=True, text=True, check=True, cwd=tmp_path)
    out = subprocess.run([sys.executable, "-m", "springsim"], **run).stdout
    assert "demo string" in out and _table(out).shape == (11, 5)
    usage = subprocess.run([sys.executable, "-m", "springsim", "--help"], **run).stdout
    assert "demo" in usage
    scenes = subprocess.run([sys.executable, "-m", "springsim", "demo", "--help"], **run).stdout
    assert all(name in scenes for name in ("string", "cloth", "jelly", "balloon", "--png"))
    bad = subprocess.run(
        [sys.executable, "-m", "springsim", "demo", "rope"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


# The documentation site (docs/) is built by .ci/run, warnings as errors; these checks
# keep its wiring honest without building it.
DOCS = ROOT / "docs"


def test_api_reference_documents_every_public_name():
    api = (DOCS / "api.md").read_text()
    documented = set(re.findall(r"^\.\. (?:auto\w+|py:data):: springsim\.(\w+)", api, flags=re.M))
    documented |= set(re.findall(r"^\.\. automodule:: springsim\.(\w+)", api, flags=re.M))
    assert set(springsim.__all__) <= documented, set(springsim.__all__) - documented


def test_user_guide_includes_every_readme_section_once():
    # The guide's pages include the README between markers ("<!-- docs: name -->" before
    # a "## " heading); taken together, their ranges must cover the README from the
    # first section to the end, each part once.
    markers = re.findall(r"^<!-- docs: ([\w-]+) -->\n## ", README, flags=re.M)
    assert README.count("<!-- docs: ") == len(markers) == len(set(markers))
    assert README.index("<!-- docs: ") < README.index("\n## "), "a section before the first"
    ranges = []
    for page in sorted((DOCS / "guide").glob("*.md")):
        for block in re.findall(
            r"```\{include\} ../../README.md\n(.*?)```", page.read_text(), re.S
        ):
            after = re.search(r":start-after: <!-- docs: ([\w-]+) -->", block)
            before = re.search(r":end-before: <!-- docs: ([\w-]+) -->", block)
            ranges.append((after[1], before[1] if before else None))
    order = {name: k for k, name in enumerate(markers)}
    ranges.sort(key=lambda r: order[r[0]])
    assert ranges[0][0] == markers[0] and ranges[-1][1] is None
    for (_, end), (start, _) in itertools.pairwise(ranges):
        assert end == start, f"the guide skips or repeats the README from {end!r} to {start!r}"


def test_nothing_refers_to_files_outside_the_repository():
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if tracked.returncode != 0:
        pytest.skip("not a git checkout")
    # Names of files outside the repository ("[k]": so that this line is no match).
    outside = re.compile(r"\.\./shared|/wor[k]/|DESIGN\.md|STYLE\.md")
    for name in tracked.stdout.split():
        path = ROOT / name
        if (
            path.is_file()
            and not path.is_symlink()
            and path.suffix in {".md", ".py", ".c", ".h", ".toml", ".cff", ".ipynb", ".txt", ""}
        ):
            assert not outside.search(path.read_text(errors="replace")), name
