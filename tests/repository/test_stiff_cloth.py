"""The bench's stiff_cloth line (issue 26): the scene, the metrics, the rows (never timed).

The metrics are checked against hand computations and against the same quantities
computed here from the recorded trajectories with plain NumPy.
"""

import math

import numpy as np
import pytest

import springsim as ss
from springsim.bench.stiff_cloth import (
    FRAME,
    PD,
    REFERENCE,
    VBD,
    Setting,
    largest_stretch,
    reference_substeps,
    run_setting,
    stiff_cloth,
    stiff_cloth_lines,
    stiff_cloth_scene,
    stiff_cloth_settings,
)

ROW_KEYS = {
    "label",
    "family",
    "method",
    "substeps",
    "iterations",
    "dt",
    "frames",
    "cpu_per_frame",
    "setup_seconds",
    "worst_deviation",
    "largest_stretch",
    "status",
    "note",
}
SKIPPED_KEYS = {"label", "family", "method", "substeps", "iterations", "status", "note"}


def test_the_scene_is_the_issues():
    sim = stiff_cloth_scene(100)
    # 100×100: structural 2·100·99, shear 2·99², bend 2·100·98.
    assert sim.num_springs == 2 * 100 * 99 + 2 * 99 * 99 + 2 * 100 * 98 == 59_002
    assert np.all(sim.stiffness == 5000.0) and np.all(sim.damping == 0)
    assert sim.masses.sum() == pytest.approx(0.2, rel=1e-12)
    assert np.flatnonzero(sim.pinned).tolist() == [0, 99]  # two corners of one edge
    assert np.ptp(sim.positions[:, 1]) == 0  # level
    assert np.ptp(sim.positions[:, 0]) == pytest.approx(1.0)
    assert np.ptp(sim.positions[:, 2]) == pytest.approx(1.0)
    assert sim.drag == 0 and sim.drag_coefficient == 0  # no air: only springs and gravity
    # The reference: the fewest whole substeps per frame with dt <= 0.5 critical_dt().
    n = reference_substeps(sim)
    assert FRAME / n <= 0.5 * sim.critical_dt() < FRAME / (n - 1)


def test_the_reference_deviates_from_itself_by_exactly_zero():
    sim = stiff_cloth_scene(4)
    first, reference = run_setting(sim, REFERENCE, frames=4)
    again, trajectory = run_setting(sim, REFERENCE, reference, frames=4)
    # The same method, dt and start: bit for bit the same motion, so exactly 0.
    assert again["worst_deviation"] == 0.0
    assert np.array_equal(trajectory, reference)
    assert first["worst_deviation"] is None  # no reference given: none measured
    assert np.all(np.isfinite(reference)) and np.ptp(reference[:, :, 1]) > 0  # it falls


def test_worst_deviation_and_stretch_are_the_maxima_over_frames_and_nodes():
    sim = stiff_cloth_scene(5)
    _, reference = run_setting(sim, REFERENCE, frames=5)
    row, trajectory = run_setting(sim, Setting("xpbd", 10, 1), reference, frames=5)
    # Plain NumPy over the recorded frames: the norm per node, the max over everything.
    expected = np.linalg.norm(trajectory - reference, axis=2).max()
    assert row["worst_deviation"] == pytest.approx(expected, rel=1e-14) and expected > 0
    springs, rest = np.asarray(sim.springs), np.asarray(sim.rest_lengths)
    lengths = np.linalg.norm(trajectory[:, springs[:, 1]] - trajectory[:, springs[:, 0]], axis=2)
    assert row["largest_stretch"] == pytest.approx((lengths / rest - 1).max(), rel=1e-12)
    assert row["substeps"] == 10 and row["dt"] == FRAME / 10 and row["iterations"] == 1


def test_stretch_of_a_known_configuration():
    # A 2×2 cloth (sides of 1 m): 4 structural springs of L = 1, 2 diagonals of √2.
    sim = stiff_cloth_scene(2)
    x = np.array(sim.positions)
    along = (x[3] - x[2]) / np.linalg.norm(x[3] - x[2])
    x[3] += 0.2 * along  # the bottom edge pulled out by 20 cm along itself
    # By hand: bottom edge 1.2 / 1 − 1 = 0.2; right edge √(1 + 0.04) − 1 = 0.0198;
    # diagonal 0–3 √(1.2² + 1) / √2 − 1 = 0.1045; the others unchanged (0). Max: 0.2.
    springs, rest = np.asarray(sim.springs), np.asarray(sim.rest_lengths)
    assert sorted(rest.round(12).tolist()) == [1.0] * 4 + [round(math.sqrt(2), 12)] * 2
    assert largest_stretch(x, springs, rest) == pytest.approx(0.2, abs=1e-12)
    x[3] -= 0.2 * along
    x = x[0] + 0.99 * (x - x[0])  # shrunk by 1 %: every spring at 0.99 L, so −0.01
    assert largest_stretch(x, springs, rest) == pytest.approx(-0.01, abs=1e-12)


def test_the_settings_hold_the_issues_rows():
    issue = {
        "symplectic_euler (reference)",
        "implicit_euler 1",
        "implicit_euler 4",
        "xpbd 10×1",
        "xpbd 40×1",
        "xpbd 1×20",
    }
    big = {s.label for s in stiff_cloth_settings(100)}
    small = {s.label for s in stiff_cloth_settings(30)}
    assert issue <= big and issue | {"xpbd 32×5", "xpbd 80×1"} <= small
    for labels in (big, small):
        assert {"vbd 4×5", "vbd 8×4", "vbd 16×3", "vbd 40×2"} <= labels
        assert sum(label.startswith(PD) for label in labels) >= 3
    assert stiff_cloth_settings(30)[0] == REFERENCE


def test_quick_run_rows_have_the_documented_keys():
    result = stiff_cloth(4, frames=2)
    assert result["scene"] == "stiff_cloth_4" and result["nodes"] == 16
    assert result["frames"] == 2 and result["threads"] == 1 and result["clock"] == "thread"
    rows = result["rows"]
    assert [r["label"] for r in rows] == [s.label for s in stiff_cloth_settings(4)]
    has_vbd = VBD in ss.METHODS
    for row in rows:
        if row["method"] == VBD and not has_vbd:
            assert set(row) == SKIPPED_KEYS and row["status"] == "skipped"
            assert "not in springsim.METHODS" in row["note"]
            continue
        assert set(row) == ROW_KEYS, row["label"]
        assert row["status"] == "ok", row
        assert row["cpu_per_frame"] >= 0 and row["frames"] == 2
        assert row["worst_deviation"] >= 0 and row["largest_stretch"] > -1
    skipped = [r["label"] for r in rows if r["status"] == "skipped"]
    assert result["skipped"] == skipped and (skipped == []) == has_vbd
    assert rows[0]["worst_deviation"] == 0.0
    text = "\n".join(stiff_cloth_lines(result))
    assert all(r["label"] in text for r in rows)
    assert ("skipped" in text) == (not has_vbd)


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        (dict(n=1), "n must be"),
        (dict(n=4, frames=0), "frames must be"),
        (dict(n=4, settings=[Setting("xpbd", 10, 1)]), "REFERENCE"),
        (dict(n=4, stiffness=0.0), "stiffness must be"),
        (dict(n=4, stiffness=math.inf), "stiffness must be"),
        (dict(n=4, stiffness="5000"), "stiffness must be"),
    ],
)
def test_bad_arguments_are_refused(arguments, words):
    with pytest.raises(ValueError, match=words):
        stiff_cloth(**arguments)


def test_the_command_line_takes_sizes_or_none(capsys):
    from springsim.bench.cli import parser

    assert parser().parse_args(["--stiff-cloth", "100,30"]).stiff_cloth == [100, 30]
    assert parser().parse_args(["--stiff-cloth", "none"]).stiff_cloth == []
    assert parser().parse_args([]).stiff_cloth is None  # then: as the mode says
    for bad in ("1", "x", "30,"):
        with pytest.raises(SystemExit):
            parser().parse_args(["--stiff-cloth", bad])
        assert "stiff cloth sizes must be integers >= 2" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        (("xbpd", 10, 1), "method must be one of"),
        (("xpbd", 0, 1), "substeps must be"),
        (("xpbd", 10, 1.5), "iterations must be"),
        (("pd", 10), "needs substeps and iterations"),
    ],
)
def test_bad_settings_are_refused(arguments, words):
    with pytest.raises(ValueError, match=words):
        Setting(*arguments)
