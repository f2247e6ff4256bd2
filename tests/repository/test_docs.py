"""The documentation is tested: the examples of the README and of the user guide
(docs/guide/), docstring examples, the demo command, the site's wiring and links."""

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

ROOT = pathlib.Path(__file__).resolve().parents[2]
README_PATH = ROOT / "README.md"
README = README_PATH.read_text()
DOCS = ROOT / "docs"
GUIDE = sorted((DOCS / "guide").glob("*.md"))

# A Python example, and what it prints when the page shows it: a plain fence headed
# "prints" right after the example.
EXAMPLE = re.compile(r"```python\n(.*?)```(?:\n\nprints\n\n```\n(.*?)```)?", re.S)


def _examples(path: pathlib.Path) -> list[tuple[str, str, str | None]]:
    """(where, code, printed) for each Python example of a Markdown page."""
    text = path.read_text()
    name = path.relative_to(ROOT).as_posix()
    return [
        (f"{name}:{text.count(chr(10), 0, m.start()) + 2}", m[1], m[2])
        for m in EXAMPLE.finditer(text)
    ]


README_EXAMPLES = _examples(README_PATH)
GUIDE_EXAMPLES = [example for page in GUIDE for example in _examples(page)]
EXAMPLES = README_EXAMPLES + GUIDE_EXAMPLES


def _run(where: str, code: str) -> tuple[str, dict]:
    out = io.StringIO()
    namespace = {"__name__": "__main__"}  # as a script
    with contextlib.redirect_stdout(out):
        exec(compile(code, where.rpartition(":")[0], "exec"), namespace)
    return out.getvalue(), namespace


def test_readme_and_guide_have_examples():
    assert len(README_EXAMPLES) >= 1, "the README's first simulation"
    assert len(GUIDE) >= 10 and len(GUIDE_EXAMPLES) >= 30
    assert sum(printed is not None for _, _, printed in GUIDE_EXAMPLES) >= 3


@pytest.mark.parametrize("where, code, printed", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_example_runs(where, code, printed, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    out, _ = _run(where, code)
    assert out.strip(), "every example prints what it shows"
    if printed is not None:  # the page shows what it prints: exactly that
        assert out == printed


def test_sweep_example_reports_twice_the_critical_step_unstable(tmp_path, monkeypatch):
    # It used to print "2.0 ok" for a run whose energy reached 3.4e44 J.
    monkeypatch.chdir(tmp_path)
    ((where, code, _),) = [e for e in GUIDE_EXAMPLES if "ss.sweep(" in e[1]]
    out, _ = _run(where, code)
    assert out.split() == ["0.5", "ok", "2.0", "unstable"]


def test_readme_first_simulation_is_the_documented_one():
    # The first example: a 0.5 kg mass on a damped spring (k = 100 N/m) below a pin.
    # After 1 s of lightly damped oscillation about the equilibrium 1 + m g / k, the
    # length lies within the first amplitude m g / k of it.
    where, code, _ = README_EXAMPLES[0]
    _, namespace = _run(where, code)
    sim = namespace["sim"]
    sag = 0.5 * 9.81 / 100.0
    assert abs(sim.time - 1.0) < 1e-12
    assert sim.positions[0].tolist() == [0.0, 0.0]
    assert abs(-sim.positions[1, 1] - (1.0 + sag)) <= sag


def _modules():
    """The package and its modules, those of its folders included (System's methods
    are in the modules of their concerns); of the viewer and the bench, which need
    optional libraries, the package's own docstrings."""
    yield springsim
    for info in pkgutil.walk_packages(springsim.__path__, "springsim."):
        if info.name == "springsim._core" or info.name.startswith(
            ("springsim.viewer.", "springsim.bench.")
        ):
            continue
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


def test_api_reference_documents_every_public_name():
    api = (DOCS / "api.md").read_text()
    documented = set(re.findall(r"^\.\. (?:auto\w+|py:data):: springsim\.(\w+)", api, flags=re.M))
    documented |= set(re.findall(r"^\.\. automodule:: springsim\.(\w+)", api, flags=re.M))
    assert set(springsim.__all__) <= documented, set(springsim.__all__) - documented


def test_readme_fits_on_a_screen():
    # The README is the landing page; the user guide is docs/guide/ (issue 25, item 6).
    assert len(README.splitlines()) <= 250


def test_the_guide_is_pages_not_slices_of_the_readme():
    # The guide's pages are written for the site: none includes the README, which has
    # no slicing markers; the front page (docs/index.md) includes it whole, and its
    # toctree lists every page of the guide.
    assert "<!--" not in README
    for page in GUIDE:
        assert "{include}" not in page.read_text(), page.name
    index = (DOCS / "index.md").read_text()
    assert re.search(r"```\{include\} \.\./README\.md\n(:[\w-]+:.*\n)*```", index)
    assert not re.search(r":(start|end)-(after|before|line):", index)
    listed = set(re.findall(r"^guide/([\w-]+)$", index, flags=re.M))
    assert listed == {page.stem for page in GUIDE}


def _fenced(path: pathlib.Path, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", path.read_text(), flags=re.S | re.M)


def test_the_guide_repeats_the_readmes_commands_exactly():
    # .ci/run runs the README's commands; the guide's copies must be the same commands.
    def section(heading):
        return README.split(f"\n{heading}\n")[1].split("\n## ")[0]

    set_up = re.findall(r"^```bash\n(.*?)```$", section("## Set up"), flags=re.S | re.M)
    documentation = re.findall(r"^```bash\n(.*?)```$", section("## Documentation"), re.S | re.M)
    assert len(set_up) == 2 and len(documentation) == 1
    assert _fenced(DOCS / "guide" / "getting-started.md", "bash") == set_up
    assert documentation[0] in _fenced(DOCS / "guide" / "development.md", "bash")


def _slug(heading: str) -> str:
    """The anchor GitHub (and MyST's heading anchors) give a Markdown heading."""
    text = re.sub(r"\[([^]]*)\]\([^)]*\)", r"\1", heading).replace("`", "").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(path: pathlib.Path) -> set[str]:
    text = re.sub(r"^```.*?^```$", "", path.read_text(), flags=re.S | re.M)
    return {_slug(h) for h in re.findall(r"^#{1,6} (.+)$", text, flags=re.M)}


MARKDOWN = [README_PATH, *sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts)]


@pytest.mark.parametrize("page", MARKDOWN, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_resolve(page):
    # Links and images as GitHub shows them: relative to the page, to a file of the
    # checkout, and an anchor to one of the target page's headings.
    text = re.sub(r"^```.*?^```$", "", page.read_text(), flags=re.S | re.M)
    text = re.sub(r"`[^`\n]*`", "", text)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue  # a web address
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        assert resolved.exists(), f"{page.name}: {target} does not exist"
        if anchor:
            assert resolved.suffix == ".md", f"{page.name}: {target}"
            assert anchor in _anchors(resolved), f"{page.name}: no heading for {target}"


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
