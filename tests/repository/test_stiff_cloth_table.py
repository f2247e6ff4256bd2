"""tools/stiff_cloth_table.py, the README's table for each stiffness (issue 26): its
metrics, its fit of the convergence order and its Markdown, on hand-made numbers and a
tiny cloth (never timed)."""

import doctest
import importlib.util
import math
import pathlib
import re

import numpy as np
import pytest

import springsim.bench.stiff_cloth
from springsim.bench.stiff_cloth import (
    FRAME,
    largest_stretch,
    stiff_cloth,
    stiff_cloth_scene,
    worst_deviation,
)

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _tool():
    """tools/stiff_cloth_table.py as a module."""
    spec = importlib.util.spec_from_file_location(
        "stiff_cloth_table", ROOT / "tools" / "stiff_cloth_table.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


tool = _tool()


def test_worst_deviation_and_stretch_of_hand_made_arrays():
    reference = np.zeros((3, 3))
    x = np.array([[0.0, 0.0, 0.0], [3.0, 4.0, 0.0], [1.0, 2.0, 2.0]])
    # By hand: the nodes are 0, 5 (3-4-5) and 3 (1-2-2) from the reference: worst 5.
    assert worst_deviation(x, reference) == pytest.approx(5.0, abs=1e-15)
    # Springs 0–1 (l = 5, L = 4: +25 %) and 0–2 (l = 3, L = 3: 0): largest 0.25.
    pairs, rest = np.array([[0, 1], [0, 2]]), np.array([4.0, 3.0])
    assert largest_stretch(x, pairs, rest) == pytest.approx(0.25, abs=1e-15)


@pytest.mark.parametrize("order", [1.0, 2.0, 0.5])
def test_convergence_order_of_exact_power_laws(order):
    substeps = [8, 16, 32, 64]
    deviations = [0.3 * (FRAME / s) ** order for s in substeps]
    assert tool.convergence_order(substeps, deviations) == pytest.approx(order, abs=1e-12)


def test_convergence_order_is_the_least_squares_slope():
    # Three points off a line: the least-squares slope by its textbook formula,
    # Σ (u − ū)(w − w̄) / Σ (u − ū)², in u = log dt, w = log deviation.
    substeps, deviations = [10, 20, 40], [0.5, 0.2, 0.15]
    u = [math.log(FRAME / s) for s in substeps]
    w = [math.log(d) for d in deviations]
    u_mean, w_mean = sum(u) / 3, sum(w) / 3
    slope = sum((a - u_mean) * (b - w_mean) for a, b in zip(u, w, strict=True)) / sum(
        (a - u_mean) ** 2 for a in u
    )
    assert tool.convergence_order(substeps, deviations) == pytest.approx(slope, rel=1e-12)
    with pytest.raises(ValueError, match="substeps and deviations"):
        tool.convergence_order([8, 16], [0.1])


def _row(method, substeps, iterations, cpu, deviation, stretch, status="ok", note=""):
    return {
        "label": f"{method} {substeps}",
        "method": method,
        "substeps": substeps,
        "iterations": iterations,
        "cpu_per_frame": cpu,
        "worst_deviation": deviation,
        "largest_stretch": stretch,
        "status": status,
        "note": note,
    }


def test_markdown_table_of_a_hand_made_result():
    reference = _row("symplectic_euler", 388, None, 0.004, 0.0, 0.0051)
    reference["label"] = "symplectic_euler (reference)"
    result = {
        "stiffness": 5000.0,
        "rows": [
            reference,
            _row("xpbd", 32, 5, 0.0123, 0.0456, 0.9123),
            _row("implicit_euler", 4, None, 0.002, 0.5, 0.03, note="2 of 60 frames warned"),
            _row("vbd", 4, 5, None, None, None, status="unstable", note="frame 3: boom"),
        ],
    }
    lines = tool.markdown_table([result]).splitlines()
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in lines[2:6]]
    assert cells[0][:4] == ["5,000", "symplectic Euler (reference, 0.5 critical_dt)", "388", "4"]
    # 12.3 ms; 12.3 / 4 = 3.075 → "3.1" (two digits); 4.56 cm; 91.23 % → "91" (two digits).
    assert cells[1] == ["5,000", "XPBD", "32 × 5", "12.3", "3.1", "0.0456", "91"]
    assert cells[2] == ["5,000", "implicit Euler", "4 *", "2", "0.5", "0.5", "3"]
    assert cells[3][:4] == ["5,000", "VBD", "4 × 5 *", "unstable"]
    assert lines[-2] == "" and lines[-1].startswith("\\* ")  # one paragraph of notes
    assert "implicit Euler 4: 2 of 60 frames warned" in lines[-1]
    assert "VBD 4 × 5: frame 3: boom" in lines[-1]


def _cells(table: str) -> list[list[str]]:
    return [
        [c.strip() for c in line.strip("|").split("|")]
        for line in table.splitlines()
        if line.startswith("| ") and not line.startswith("| k,")
    ]


def test_the_table_of_a_tiny_cloth_at_two_stiffnesses():
    results = [
        stiff_cloth(3, frames=2, settings=tool.SETTINGS, stiffness=k) for k in (500.0, 5000.0)
    ]
    # The stiffness reaches the scene: every spring has it, and critical_dt, ∝ √(m/k),
    # is √10 times shorter at ten times the stiffness.
    assert np.all(stiff_cloth_scene(3, 500.0).stiffness == 500.0)
    ratio = results[0]["critical_dt"] / results[1]["critical_dt"]
    assert ratio == pytest.approx(math.sqrt(10.0), rel=1e-12)
    rows = _cells(tool.markdown_table(results))
    assert len(rows) == 2 * len(tool.SETTINGS)
    for cells, (result, row) in zip(
        rows, [(r, row) for r in results for row in r["rows"]], strict=True
    ):
        assert cells[0] == f"{result['stiffness']:,.0f}"
        assert cells[2].rstrip(" *") == (
            f"{row['substeps']}"
            if row["iterations"] is None
            else f"{row['substeps']} × {row['iterations']}"
        )
        assert row["status"] == "ok", row
        # Each number is the row's, to the digits printed (3, or 2 for ratio and stretch).
        reference = result["rows"][0]["cpu_per_frame"]
        for text, value, digits in (
            (cells[3], row["cpu_per_frame"] * 1e3, 3),
            (cells[4], row["cpu_per_frame"] / reference, 2),
            (cells[5], row["worst_deviation"], 3),
            (cells[6], row["largest_stretch"] * 100, 2),
        ):
            assert float(text) == pytest.approx(float(f"{value:.{digits}g}"), rel=1e-9, abs=0)


def test_convergence_study_of_a_tiny_cloth_finds_first_order():
    study = tool.convergence(3, substeps=(8, 16, 32, 64), frames=2, passes_per_frame=160)
    assert study["passes"] == [20, 10, 10, 10]  # 160 / 8, then the fewest, 10
    # In the first two frames the cloth only starts to fall and stretch: the motion is
    # smooth and slow against dt, so backward Euler's leading error term, first order
    # in dt, is all there is. Both methods (VBD converged: the extra passes change
    # nothing beyond rounding) must show order 1; 0.05 leaves room for the next term.
    assert study["reference_error"] < 1e-3 * min(study["implicit_euler"]["deviations"])
    for method in ("implicit_euler", "vbd"):
        assert study[method]["order"] == pytest.approx(1.0, abs=0.05), study[method]
        assert len(study[method]["orders"]) == 2
    assert max(study["vbd"]["passes_change"]) < 1e-6 * min(study["vbd"]["deviations"])
    # The fitted orders are those of the deviations printed.
    table = tool.convergence_markdown(study)
    rows = [line for line in table.splitlines() if "worst deviation" in line]
    assert len(rows) == 2
    for line, method in zip(rows, ("implicit_euler", "vbd"), strict=True):
        numbers = [float(c) for c in re.findall(r"\|\s*([-\d.e]+)\s*(?=\|)", line)]
        assert numbers[-2:] == [round(p, 2) for p in study[method]["orders"]]


@pytest.mark.parametrize("module", [tool, springsim.bench.stiff_cloth], ids=lambda m: m.__name__)
def test_docstring_examples(module):
    # test_docs.py leaves the bench's modules out (optional libraries); these two need none.
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_the_command_line_writes_json_that_prints_and_draws_the_same(tmp_path, capsys):
    import matplotlib.image  # the project's test dependency (test_docs.py draws too)

    stored, png = tmp_path / "table.json", tmp_path / "table.png"
    tiny = ["--size", "3", "--frames", "2", "--stiffnesses", "500,5000"]
    tiny += ["--convergence-size", "3", "--convergence-frames", "2", "--passes-per-frame", "80"]
    tool.main([*tiny, "--json", str(stored), "--png", str(png)])
    measured = capsys.readouterr().out
    tool.main(["--from-json", str(stored), "--png", str(tmp_path / "again.png")])
    again = capsys.readouterr().out
    # The stored file prints the tables the run printed, character for character.
    table = re.findall(r"^\|.*\|$", measured, flags=re.M)
    assert len(table) == 2 + 2 * len(tool.SETTINGS) + 2 + 4
    assert re.findall(r"^\|.*\|$", again, flags=re.M) == table
    image = matplotlib.image.imread(png)[..., :3]
    assert 0.01 < np.any(image < 0.9, axis=-1).mean() < 0.9, "the picture is blank or solid"
    with pytest.raises(SystemExit):
        tool.main(["--stiffnesses", "0,500"])
