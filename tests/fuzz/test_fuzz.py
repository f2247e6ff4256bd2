"""A fuzzer of our own: random sequences of public-API calls, hostile values included.

A hypothesis state machine builds a system, edits it (nodes, springs, faces, pins,
values written through the views, colliders, gas, drives, parameters), steps and
runs it with every method and dt from tiny to huge, copies, pickles, saves and loads
it, and after EVERY operation checks what the documentation promises:

- an operation that raised raised a documented exception (TypeError, ValueError,
  springsim.UnstableError) with a message, and changed nothing: every array, scalar,
  collider, gas body and drive is bit-for-bit as before;
- a read-only query (energy, lengths, normals, modes, ...) changed nothing either;
- a step or run that returned left a valid state: positions and velocities finite,
  every value in its documented domain (a step checks them all), time finite, every
  gas body's volume positive;
- a copy, a pickle and a saved-and-loaded file equal the original and step bit for
  bit like it (with one thread or two).

Anything else (ZeroDivisionError, IndexError, OverflowError, SystemError, a crash, a
hang) fails the test. Each operation is bounded (steps × size), and one that takes
longer than ``OPERATION_TIMEOUT`` seconds is taken for a hang: faulthandler prints
every thread's stack and ends the process.

The default run is short (``DEFAULT_EXAMPLES`` sequences). ``.ci/run`` sets
``SPRINGSIM_FUZZ_EXAMPLES=4000`` (and ``SPRINGSIM_FUZZ_STEPS``, the operations per
sequence) for the long run under ASan + UBSan, with a fresh random seed and no
example database; it prints how many sequences and operations ran.
"""

from __future__ import annotations

import collections
import contextlib
import faulthandler
import math
import os
import pickle
import sys
import tempfile
import threading
import time
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    precondition,
    rule,
    run_state_machine_as_test,
)
from state import ARRAYS, SCALARS

import springsim as ss
from springsim.colliders import Sphere
from springsim.model.pins import _Line, drives

#: Sequences and operations per sequence of the default (short) run.
DEFAULT_EXAMPLES, DEFAULT_STEPS = 40, 30
#: Seconds one operation may take before it counts as a hang (ASan included).
OPERATION_TIMEOUT = 60.0
#: What one step or run call may cost, in node-or-spring updates (keeps runs short).
WORK_PER_CALL = 200_000
#: No operation grows a system beyond this many nodes (except the one big cloth).
MAX_NODES = 120

BUILDERS = ["empty", "string", "cloth", "jelly", "ring", "ball", "mesh", "cluster", "balloon"]
#: The exceptions the documentation promises for bad input and blown-up steps.
DOCUMENTED = (TypeError, ValueError, ss.UnstableError)

FINITE = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e-3, 10.0, 100.0, -3.0]
EXTREME = [5e-324, 1e-300, -1e-300, 1e300, -1e300, 1.7976931348623157e308, -1e308]
NONFINITE = [math.nan, math.inf, -math.inf, -math.nan]

#: Mostly sane numbers (so systems live on), often hostile ones.
numbers = st.one_of(
    st.sampled_from(FINITE),
    st.sampled_from(EXTREME + NONFINITE),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(-10.0, 10.0),
)
positive = st.one_of(st.sampled_from([0.1, 1.0, 10.0, 100.0]), numbers)
#: Values for arguments that want a number: sometimes not one at all.
anything = st.one_of(numbers, st.sampled_from([None, "1.0", True, [1.0, 2.0], object()]))
time_steps = st.one_of(
    st.sampled_from([1e-4, 1e-3, 5e-3, 1e-2]),
    st.sampled_from([5e-324, 1e-300, 1e-12, 0.1, 1.0, 1e3, 1e300, 1.7976931348623157e308]),
    st.sampled_from([0.0, -1e-3, -1.0] + NONFINITE),
    st.floats(1e-6, 0.1),
)
#: Invalid values of `steps` that must be refused (never a huge valid one: it would
#: legitimately run for ever).
bad_steps = st.sampled_from([-1, -(2**31), 2**63, 2**64, 2**100, -(2**63) - 1, 1.0, True, "3"])
methods = st.one_of(
    st.sampled_from(ss.METHODS),
    st.sampled_from([None, "RK4", "rk4\x00junk", "", "nope", 4, b"rk4"]),
)


class _Path:
    """A picklable drive path: moves from ``start`` at ``speed``; ``bad`` makes it
    return a hostile value after time ``after``."""

    def __init__(self, start, speed, bad=None, after=0.0):
        self.start, self.speed, self.bad, self.after = start, speed, bad, after

    def __call__(self, t):
        if self.bad is not None and t > self.after:
            return {
                "nan": np.full_like(self.start, np.nan),
                "inf": np.full_like(self.start, np.inf),
                "shape": np.zeros((len(self.start) + 1, self.start.shape[-1])),
                "text": "up",
            }[self.bad]
        return self.start + self.speed * t


def _bits(value):
    """What bit-for-bit equality compares."""
    if isinstance(value, np.ndarray):
        return value.dtype.str, value.shape, value.tobytes()
    if isinstance(value, float):
        return "float", np.float64(value).tobytes()
    if isinstance(value, (list, tuple)):
        return tuple(_bits(v) for v in value)
    return type(value).__name__, value


def _path_bits(drive, ids):
    """What a drive follows, as comparable bits: its targets, its line, or (``ids``) which
    function (a pickle or a file does not keep the function itself)."""
    if drive.targets is not None:
        return drive.targets
    if isinstance(drive.function, _Line):
        line = drive.function
        return [line.start, line.velocity, float(line.t0)]
    return [id(drive.function) if ids else 0, drive.rows, drive.width]


def snapshot(sim, ids=True):
    """Everything ``sim`` holds, as comparable bits; ``ids=False`` leaves out what a
    pickle or a file may renumber (gas body ids) or does not keep."""
    state = {name: _bits(np.array(sim._view(name))) for name in ARRAYS}
    state.update({name: _bits(getattr(sim, name)) for name in SCALARS})
    state["dissipated"] = _bits(sim.dissipated)
    state["track_energy"] = sim.track_energy
    state["colliders"] = _bits([list(c) if ids else list(c[1:]) for c in sim._colliders()])
    state["contact_filter"] = _bits(sim._contact_filter())
    gas = []
    for body, nrt, ambient, volume in sim._pressure_bodies():
        elements = np.array(sim._pressure_elements(body))
        gas.append(
            [body, nrt, ambient, volume, elements] if ids else [nrt, ambient, volume, elements]
        )
    state["gas"] = _bits(gas)
    state["drives"] = _bits([[d.indices, d.counter, _path_bits(d, ids)] for d in drives(sim)])
    return state


def differences(a, b, skip=()):
    """The names whose bits differ between two snapshots."""
    return [name for name in a if name not in skip and a[name] != b[name]]


def invalid_step(dt, steps, method):
    """Why step(dt, steps, method) must be refused, or None."""
    if method is not None and method not in ss.METHODS:
        return f"method={method!r}"
    if isinstance(steps, bool) or not isinstance(steps, int) or not 0 <= steps < 2**63:
        return f"steps={steps!r}"
    if not dt > 0 or not math.isfinite(dt):
        return f"dt={dt!r}"
    return None


def invalid_run(method, duration, record_every, frames, callback):
    """Why run(duration, ..., method, record_every, frames, callback) must be refused."""
    if method is not None and method not in ss.METHODS:
        return f"method={method!r}"
    if not isinstance(duration, float) or not 0 < duration < math.inf:
        return f"duration={duration!r}"
    for name, count in (("record_every", record_every), ("frames", frames)):
        if count is not None and (not isinstance(count, int) or count < 1):
            return f"{name}={count!r}"
    if callback is not None and not callable(callback):
        return f"callback={callback!r}"
    return None


def assert_valid_after_step(sim, what):
    """What a step that returned promises: every value it checks is in its domain."""
    problems = []

    def require(name, ok):
        if not np.all(ok):
            problems.append(name)

    x, v = sim._view("positions"), sim._view("velocities")
    require("positions finite", np.isfinite(x))
    require("velocities finite", np.isfinite(v))
    require("external_forces finite", np.isfinite(sim._view("external_forces")))
    m = sim._view("masses")
    require("masses finite and > 0", np.isfinite(m) & (m > 0))
    k = sim._view("stiffness")
    require("stiffness >= 0 (not NaN)", k >= 0)
    c = sim._view("damping")
    require("damping finite and >= 0", np.isfinite(c) & (c >= 0))
    rest = sim._view("rest_lengths")
    require("rest_lengths finite and >= 0", np.isfinite(rest) & (rest >= 0))
    b = sim._view("break_strains")
    require("break_strains >= 0 (not NaN)", b >= 0)
    require("gravity, wind finite", np.isfinite(sim._view("gravity")))
    require("gravity, wind finite", np.isfinite(sim._view("wind")))
    require("time finite", np.isfinite(sim.time))
    for body, _nrt, _ambient, volume in sim._pressure_bodies():
        require(f"gas body {body}: volume > 0 (not inside out)", volume > 0)
    assert not problems, f"{what} returned, leaving: {', '.join(problems)}"


class Fuzzer(RuleBasedStateMachine):
    """Random sequences of operations on one System, invariants checked after each."""

    sequences = 0
    operations = 0
    #: Where a hang's tracebacks go: the real stderr (see test_fuzz), not pytest's capture.
    hang_report = sys.stderr
    #: rule name -> Counter of outcomes ("ok" or the exception type).
    outcomes: dict = collections.defaultdict(collections.Counter)

    def __init__(self):
        super().__init__()
        type(self).sequences += 1
        self.strain_unmet = False
        self.sim = None
        self.boundary = None  # a closed gas boundary of self.sim (ring or faces), if known
        self.handles = []  # every collider handle made (some removed since)
        self.bodies = []  # every gas body id returned (some removed since)
        self.folder = tempfile.TemporaryDirectory(prefix="springsim-fuzz-")

    def teardown(self):
        self.folder.cleanup()
        ss.set_num_threads(None)

    # ---- the operation wrapper: every invariant but the twin's --------------------

    def attempt(self, label, call, *, query=False, stepped=False, partial=None, invalid=None):
        """Run ``call()``; check the invariants; return (True, result) or (False, error).

        query: the call must change nothing even when it succeeds.
        stepped: the call steps the system; if it returns, the state must be valid.
        partial: ``partial(error, changed)`` is True when an error may come after some
            progress (a run's later chunk); the state must then be valid.
        invalid: why the call must be refused (an argument the documentation rules
            out), or None.
        """
        sim = self.sim
        before = snapshot(sim)
        type(self).operations += 1
        faulthandler.dump_traceback_later(OPERATION_TIMEOUT, exit=True, file=self.hang_report)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                result = call()
            # A strain limit that pins or colliders make unreachable is reported, not met.
            self.strain_unmet = any(
                issubclass(w.category, ss.ConvergenceWarning) and "max_strain" in str(w.message)
                for w in caught
            )
        except DOCUMENTED as error:
            self.outcomes[label][type(error).__name__] += 1
            changed = differences(before, snapshot(sim))
            assert str(error).strip(), f"{label} raised {type(error).__name__} with no message"
            if changed and partial is not None and partial(error, changed):
                assert_valid_after_step(sim, f"{label} (stopped by {error!r})")
                return False, error
            assert not changed, f"{label} raised {error!r} but changed {changed}"
            return False, error
        finally:
            faulthandler.cancel_dump_traceback_later()
        self.outcomes[label]["ok"] += 1
        assert invalid is None, f"{label} accepted {invalid}"
        if query:
            changed = differences(before, snapshot(sim))
            assert not changed, f"the query {label} changed {changed}"
        if stepped:
            assert_valid_after_step(sim, label)
        return True, result

    # ---- drawing arguments that depend on the state --------------------------------

    def node(self, data, spread=2):
        n = self.sim.num_nodes
        return data.draw(st.integers(-spread, n - 1 + spread) if n else st.integers(-1, 2))

    def nodes(self, data, most=6):
        return data.draw(st.lists(st.integers(-2, self.sim.num_nodes + 1), max_size=most))

    def valid_nodes(self, data, most=6):
        n = self.sim.num_nodes
        return data.draw(st.lists(st.integers(0, n - 1), max_size=most)) if n else []

    def max_steps(self, method):
        """Steps one call may take so that it costs at most WORK_PER_CALL."""
        sim = self.sim
        size = 1 + sim.num_nodes + sim.num_springs + sim.num_faces
        per_step = {"rk4": 4, "rk2": 2, "velocity_verlet": 2}.get(method, 1)
        if method == "xpbd":
            per_step = 1 + min(sim.iterations, 10_000)
        if method == "implicit_euler":
            per_step = 4 + 2 * min(sim.cg_max_iterations, 10_000)
        if sim.max_strain is not None:
            per_step += 1000  # strain limiting may take up to 1000 passes
        if self.sim._hook_drives():
            per_step += 50  # each substep calls a Python function
        return max(0, min(40, WORK_PER_CALL // (size * per_step)))

    # ---- building -------------------------------------------------------------------

    @initialize(data=st.data())
    def build(self, data):
        kind = data.draw(
            st.sampled_from(2 * BUILDERS + ["big cloth"]),
            label="builder",
        )
        dim = data.draw(st.sampled_from([2, 3]), label="dim")
        k = data.draw(st.sampled_from([0.0, 10.0, 100.0, 1e4]), label="stiffness")
        c = data.draw(st.sampled_from([0.0, 0.1]), label="damping")
        nrt = data.draw(st.sampled_from([None, 1.0, 20.0]), label="nrt")
        if kind == "empty":
            sim = ss.System(dim=dim)
            sim.add_nodes(data.draw(st.sampled_from([np.zeros((0, dim)), np.eye(dim)])))
        elif kind == "string":
            n = data.draw(st.integers(2, 8))
            pin = data.draw(st.sampled_from(["start", "end", "both", "middle", None]))
            sim = ss.string(n, length=1.0, mass=0.1 * n, stiffness=k, damping=c, dim=dim, pin=pin)
        elif kind == "cloth":
            nx, ny = data.draw(st.integers(2, 5)), data.draw(st.integers(2, 5))
            sim = ss.cloth(nx, ny, width=1.0, height=1.0, mass=0.2, stiffness=k, damping=c)
        elif kind == "big cloth":
            # Big enough (>= 8192 springs) to step on threads.
            sim = ss.cloth(38, 38, width=1.0, height=1.0, mass=0.5, stiffness=k, damping=c)
        elif kind == "jelly":
            nz = None if dim == 2 else data.draw(st.integers(2, 3))
            arrangement = data.draw(st.sampled_from(["simple", "stable"]))
            sim = ss.jelly(2, 3, nz, size=1.0, mass=1.0, stiffness=k, arrangement=arrangement)
        elif kind == "ring":
            n = data.draw(st.integers(3, 12))
            sim = ss.ball(nodes=n, radius=1.0, mass=1.0, stiffness=k, damping=c, dim=2, nrt=nrt)
            self.boundary = np.arange(n)
        elif kind == "ball":
            sim = ss.ball(subdivisions=0, radius=1.0, mass=1.0, stiffness=k, damping=c, nrt=nrt)
            self.boundary = np.array(sim.faces, dtype=np.int64)
        elif kind == "mesh":
            square = [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]]
            sim = ss.mesh(square, [[0, 1, 2, 3]], mass=1.0, stiffness=k, bend=True)
        elif kind == "cluster":
            points = np.array([[0, 0], [1, 0], [0, 1], [1, 1.5]])[: data.draw(st.integers(2, 4))]
            sim = ss.cluster(points, mass=1.0, stiffness=k)
        else:
            sim = ss.balloon(
                radius=0.3, string_length=0.5, mass=0.1, stiffness=max(k, 1.0), dim=dim, nrt=nrt
            )
        if nrt is not None and kind not in ("ring", "ball", "balloon"):
            self.boundary = None
        self.sim = sim
        self.bodies = [b for b, *_ in sim._pressure_bodies()]

    @rule(data=st.data())
    def build_hostile(self, data):
        """Builders with hostile arguments raise a documented error or build a valid system."""
        kind = data.draw(st.sampled_from(["string", "cloth", "jelly", "ball", "mesh", "cluster"]))
        a, b = data.draw(anything), data.draw(anything)
        n = data.draw(st.sampled_from([-1, 0, 1, 2, 3, 2.5, True, None]))
        calls = {
            "string": lambda: ss.string(n, length=a, mass=1.0, stiffness=b),
            "cloth": lambda: ss.cloth(n, 2, width=a, height=1.0, mass=1.0, stiffness=b),
            "jelly": lambda: ss.jelly(2, n, size=a, mass=1.0, stiffness=b),
            "ball": lambda: ss.ball(nodes=n, radius=a, mass=1.0, stiffness=b, dim=2),
            "mesh": lambda: ss.mesh([[0, 0], [a, 0], [0, 1]], [[0, 1, n]], mass=1.0, stiffness=b),
            "cluster": lambda: ss.cluster([[0, 0], [a, 1.0]], mass=1.0, stiffness=b),
        }
        ok, made = self.attempt(f"build_hostile {kind}", calls[kind], query=True)
        if ok:
            assert_valid_after_step(made, f"ss.{kind}(...)")  # a new system is valid

    # ---- topology ---------------------------------------------------------------------

    @precondition(lambda self: self.sim.num_nodes < MAX_NODES)
    @rule(data=st.data())
    def add_nodes(self, data):
        dim = self.sim.dim
        count = data.draw(st.integers(0, 4))
        shape = data.draw(st.sampled_from([(count, dim), (dim,), (count, dim + 1), (count,)]))
        x = data.draw(st.lists(numbers, min_size=int(np.prod(shape)), max_size=int(np.prod(shape))))
        x = np.array(x, dtype=float).reshape(shape)
        masses = data.draw(positive | st.lists(positive, min_size=count, max_size=count))
        velocities = data.draw(st.none() | numbers)
        pinned = data.draw(st.booleans())
        self.attempt("add_nodes", lambda: self.sim.add_nodes(x, masses, velocities, pinned))

    @rule(data=st.data())
    def add_springs(self, data):
        pairs = data.draw(
            st.lists(st.tuples(st.integers(-1, self.sim.num_nodes), st.integers(-1, 9)), max_size=4)
        )
        pairs = np.array(pairs, dtype=np.int64).reshape(-1, 2)
        stiffness = data.draw(positive | st.just(math.inf))
        damping = data.draw(positive)
        rest = data.draw(st.none() | positive)
        self.attempt("add_springs", lambda: self.sim.add_springs(pairs, stiffness, damping, rest))

    @rule(data=st.data())
    def connect(self, data):
        i, j = self.node(data), self.node(data)
        stiffness, damping = data.draw(anything), data.draw(positive)
        rest = data.draw(st.none() | numbers)
        self.attempt("connect", lambda: self.sim.connect(i, j, stiffness, damping, rest))

    @rule(data=st.data())
    def add_faces(self, data):
        tri = data.draw(st.lists(st.integers(-1, self.sim.num_nodes), min_size=3, max_size=6))
        tri = np.array(tri[: len(tri) // 3 * 3], dtype=np.int64).reshape(-1, 3)
        self.attempt("add_faces", lambda: self.sim.add_faces(tri))

    @precondition(lambda self: self.sim.num_nodes < MAX_NODES // 2)
    @rule(data=st.data())
    def add_system(self, data):
        choice = data.draw(st.sampled_from(["self", "copy", "string", "ring", "other dim", "junk"]))
        dim = self.sim.dim
        other = {
            "self": lambda: self.sim,
            "copy": lambda: self.sim.copy(),
            "string": lambda: ss.string(3, length=1.0, mass=1.0, stiffness=10.0, dim=dim),
            "ring": lambda: ss.ball(nodes=4, radius=1.0, mass=1.0, stiffness=10.0, dim=2, nrt=1.0),
            "other dim": lambda: ss.System(dim=5 - dim),
            "junk": lambda: "a system",
        }[choice]()
        self.attempt(f"add {choice}", lambda: self.sim.add(other))

    @rule(data=st.data())
    def remove_nodes(self, data):
        indices = self.nodes(data, most=3)
        ok, mapping = self.attempt("remove_nodes", lambda: self.sim.remove_nodes(indices))
        if ok and self.boundary is not None:
            # Renumbered; a boundary that lost a node is no longer closed (and its -1
            # entries would index the next mapping from its end).
            boundary = mapping[self.boundary]
            self.boundary = None if (boundary < 0).any() else boundary

    @rule(data=st.data())
    def remove_springs(self, data):
        m = self.sim.num_springs
        indices = data.draw(st.lists(st.integers(-2, m + 1), max_size=4))
        self.attempt("remove_springs", lambda: self.sim.remove_springs(indices))

    @rule(data=st.data(), pin=st.booleans())
    def pin_or_unpin(self, data, pin):
        indices = self.nodes(data)
        if not pin:
            self.attempt("unpin", lambda: self.sim.unpin(indices))
            return
        # held, or dragged at a velocity (one for all, per node, or not one at all)
        velocity = data.draw(
            st.none()
            | numbers
            | st.lists(numbers, min_size=self.sim.dim, max_size=self.sim.dim)
            | st.sampled_from([[[0.5, -1.0, 0.25][: self.sim.dim]] * len(indices), "up"])
        )
        label = "pin" if velocity is None else "pin (dragged)"
        self.attempt(label, lambda: self.sim.pin(indices, velocity=velocity))

    # ---- values -------------------------------------------------------------------------

    VALUE_ARRAYS = (
        "positions",
        "velocities",
        "masses",
        "pinned",
        "external_forces",
        "rest_lengths",
        "stiffness",
        "damping",
        "break_strains",
        "gravity",
        "wind",
        "uvs",
        "rest_positions",
        "radii",
    )

    @rule(data=st.data(), name=st.sampled_from(VALUE_ARRAYS), value=numbers)
    def write_view(self, data, name, value):
        """Write one element through a view: never refused; the next step checks it."""
        view = getattr(self.sim, name)
        if view.size == 0:
            return
        index = data.draw(st.integers(0, view.size - 1))
        self.attempt(f"write {name}", lambda: view.reshape(-1).__setitem__(index, value))

    @rule(data=st.data(), name=st.sampled_from(VALUE_ARRAYS), value=numbers)
    def assign_array(self, data, name, value):
        """Assign a whole array (broadcast): checked and copied in, or refused."""
        shape = getattr(self.sim, name).shape
        form = data.draw(st.sampled_from(["scalar", "row", "full", "wrong", "text"]))
        if form == "scalar":
            new = value
        elif form == "row":
            new = np.full(shape[-1:], value)
        elif form == "full":
            new = np.array(getattr(self.sim, name), dtype=float)
            if new.size:
                new.reshape(-1)[data.draw(st.integers(0, new.size - 1))] = value
        elif form == "wrong":
            new = np.zeros((shape[0] + 1, 5) if shape else 7)
        else:
            new = "1.0"
        self.attempt(f"assign {name} ({form})", lambda: setattr(self.sim, name, new))

    @rule(data=st.data())
    def transform_positions(self, data):
        """Squash (a flat body), mirror (inside out) or blow up the shape."""
        scale = np.array(
            data.draw(
                st.lists(
                    st.sampled_from([1.0, 0.0, -1.0, 1e-200, 1e200]),
                    min_size=self.sim.dim,
                    max_size=self.sim.dim,
                )
            )
        )
        self.attempt(
            "transform positions",
            lambda: setattr(self.sim, "positions", self.sim.positions * scale),
        )

    SCALAR_PARAMETERS = (
        "drag",
        "air_density",
        "drag_coefficient",
        "energy_loss",
        "time",
        "iterations",
        "max_strain",
        "break_strain",
        "cg_tolerance",
        "cg_max_iterations",
        "dissipated",
        "track_energy",
        "method",
        "contact_radius",
        "contact_stiffness",
        "contact_restitution",
        "contact_friction",
        "segment_contact",
    )

    @rule(
        name=st.sampled_from(SCALAR_PARAMETERS),
        value=st.one_of(
            anything,
            methods,
            st.sampled_from([0, 1, 3, 10, -1, 2**31, 2**63, None]),
            st.sampled_from([0.01, 0.1, 1.0]),
        ),
    )
    def set_parameter(self, name, value):
        invalid = None
        if name == "method" and value not in ss.METHODS:
            invalid = f"method = {value!r}"
        self.attempt(f"set {name}", lambda: setattr(self.sim, name, value), invalid=invalid)

    # ---- node-node contact ----------------------------------------------------------------

    @rule(
        data=st.data(),
        value=st.one_of(anything, st.sampled_from([0, 1, -3, 2**31, 2**40, 1.5, [1, 2, 3]])),
    )
    def assign_groups(self, data, value):
        """Groups: whole numbers in int32's range, or refused."""
        if data.draw(st.booleans(), label="per node") and self.sim.num_nodes:
            value = data.draw(
                st.lists(
                    st.integers(-5, 5), min_size=self.sim.num_nodes, max_size=self.sim.num_nodes
                )
            )
        self.attempt("assign groups", lambda: setattr(self.sim, "groups", value))

    @rule(
        a=st.one_of(st.integers(-3, 3), st.sampled_from([2**31, 1.0, None, True])),
        b=st.integers(-3, 3),
        enabled=st.one_of(st.booleans(), st.sampled_from([0, "no", None])),
    )
    def set_contact(self, a, b, enabled):
        self.attempt("set_contact", lambda: self.sim.set_contact(a, b, enabled))

    # ---- colliders ------------------------------------------------------------------------

    @rule(data=st.data(), sphere=st.booleans())
    def add_collider(self, data, sphere):
        dim = self.sim.dim
        vector = data.draw(st.lists(numbers, min_size=dim, max_size=dim) | st.just([0.0] * dim))
        a, e, mu = data.draw(anything), data.draw(numbers), data.draw(numbers)
        if sphere:
            call = lambda: self.sim.add_sphere(vector, a, e, mu)  # noqa: E731
        else:
            call = lambda: self.sim.add_plane(vector, a, e, mu)  # noqa: E731
        ok, handle = self.attempt("add_sphere" if sphere else "add_plane", call)
        if ok:
            self.handles.append(handle)

    @precondition(lambda self: self.handles)
    @rule(data=st.data())
    def edit_collider(self, data):
        handle = data.draw(st.sampled_from(self.handles))
        names = ["center", "radius"] if isinstance(handle, Sphere) else ["normal", "offset"]
        name = data.draw(st.sampled_from(names + ["restitution", "friction"]))
        if name in ("center", "normal"):
            value = data.draw(
                st.lists(numbers, min_size=self.sim.dim, max_size=self.sim.dim) | anything
            )
        else:
            value = data.draw(anything)
        self.attempt(f"collider.{name} = ...", lambda: setattr(handle, name, value))

    @precondition(lambda self: self.handles)
    @rule(data=st.data())
    def reassign_collider(self, data):
        """Writing a collider's own value back changes nothing."""
        handle = data.draw(st.sampled_from(self.handles))
        names = ["center", "radius"] if isinstance(handle, Sphere) else ["normal", "offset"]
        for name in names + ["restitution", "friction"]:
            ok, value = self.attempt(
                f"read collider.{name}", lambda h=handle, n=name: getattr(h, n), query=True
            )
            if ok:
                self.attempt(
                    f"collider.{name} = collider.{name}",
                    lambda h=handle, n=name, v=value: setattr(h, n, v),
                    query=True,
                )

    @precondition(lambda self: self.handles)
    @rule(data=st.data())
    def remove_collider(self, data):
        handle = data.draw(st.sampled_from(self.handles + ["junk"]))
        self.attempt("remove_collider", lambda: self.sim.remove_collider(handle))

    # ---- gas ---------------------------------------------------------------------------------

    @rule(data=st.data())
    def add_pressure(self, data):
        if self.boundary is not None and data.draw(st.booleans()):
            boundary = self.boundary
            if data.draw(st.booleans()):
                boundary = boundary[::-1]  # the other orientation: stored reversed
        else:
            boundary = self.nodes(data)
        nrt, ambient = data.draw(anything), data.draw(numbers | st.just(0.0))
        ok, body = self.attempt(
            "add_pressure", lambda: self.sim.add_pressure(boundary, nrt, ambient)
        )
        if ok:
            self.bodies.append(body)

    @precondition(lambda self: self.bodies)
    @rule(data=st.data())
    def use_gas(self, data):
        body = data.draw(st.sampled_from(self.bodies))
        ok, gas = self.attempt("gas(body)", lambda: self.sim.gas(body), query=True)
        if not ok:
            return
        for name in ("pressure", "volume", "energy", "nrt", "ambient", "boundary"):
            self.attempt(f"gas.{name}", lambda n=name: getattr(gas, n), query=True)
        self.attempt("repr(gas)", lambda: repr(gas), query=True)
        name = data.draw(st.sampled_from(["nrt", "ambient"]))
        value = data.draw(anything)
        self.attempt(f"gas.{name} = ...", lambda: setattr(gas, name, value))

    @precondition(lambda self: self.bodies)
    @rule(data=st.data())
    def remove_pressure(self, data):
        body = data.draw(st.sampled_from(self.bodies) | st.integers(-2, 5) | st.just("0"))
        self.attempt("remove_pressure", lambda: self.sim.remove_pressure(body))

    # ---- drives ----------------------------------------------------------------------------

    @rule(data=st.data())
    def drive(self, data):
        sim = self.sim
        indices = (
            sorted(set(self.valid_nodes(data, most=3)))
            if data.draw(st.booleans())
            else self.nodes(data, 3)
        )
        kind = data.draw(st.sampled_from(["array", "function", "none", "bad array", "junk"]))
        shape = (len(indices), sim.dim)
        if kind == "array":
            count = data.draw(st.integers(1, 5))
            path = np.array(
                data.draw(
                    st.lists(
                        numbers | st.floats(-2, 2),
                        min_size=count * int(np.prod(shape)),
                        max_size=count * int(np.prod(shape)),
                    )
                )
            ).reshape(count, *shape)
        elif kind == "function":
            start = (
                np.zeros(shape)
                if not sim.num_nodes
                else np.array(
                    sim.positions[np.clip(np.asarray(indices, np.int64), 0, sim.num_nodes - 1)]
                ).reshape(shape)
            )
            bad = data.draw(st.sampled_from([None, None, "nan", "inf", "shape", "text"]))
            path = _Path(
                start,
                data.draw(st.sampled_from([0.0, 1.0, -2.0])),
                bad,
                data.draw(st.sampled_from([0.0, 0.005])),
            )
        elif kind == "none":
            path = None
        elif kind == "bad array":
            path = data.draw(
                st.sampled_from(
                    [np.zeros((2, len(indices) + 1, sim.dim)), np.zeros(()), "up", [[["a"]]]]
                )
            )
        else:
            path = 42
        self.attempt(f"drive ({kind})", lambda: sim.drive(indices, path))

    # ---- stepping ---------------------------------------------------------------------------

    @rule(data=st.data(), dt=time_steps, method=methods)
    def step(self, data, dt, method):
        most = self.max_steps(method if isinstance(method, str) else self.sim.method)
        steps = data.draw(st.integers(0, most) | bad_steps)
        ok, _ = self.attempt(
            f"step {method}",
            lambda: self.sim.step(dt, steps=steps, method=method),
            stepped=True,
            invalid=invalid_step(dt, steps, method),
        )
        if ok and steps > 0 and self.sim.max_strain is not None and not self.strain_unmet:
            self.check_strain_limit(f"step {method}")

    def check_strain_limit(self, what):
        """After a step with max_strain set, no spring is longer than (1 + max_strain)
        times its rest length (springs between two pinned or driven nodes excepted)."""
        sim = self.sim
        if drives(sim) or not sim.num_springs:
            return
        pinned = sim.pinned[sim.springs]
        free = ~(pinned[:, 0] & pinned[:, 1])
        limit = (1 + sim.max_strain) * sim.rest_lengths * (1 + 1e-9) + 1e-12
        too_long = free & (sim.spring_lengths() > limit)
        assert not too_long.any(), (
            f"{what} returned with springs {np.flatnonzero(too_long)} longer than "
            f"(1 + max_strain = {sim.max_strain}) times their rest length"
        )

    @rule(data=st.data(), dt=st.sampled_from([1e-4, 1e-3, 1e-2]), method=methods)
    def run(self, data, dt, method):
        most = self.max_steps(method if isinstance(method, str) else self.sim.method)
        duration = data.draw(
            st.sampled_from([0.0, -1.0, math.nan, math.inf, "1"])
            | st.integers(1, max(1, most)).map(lambda k: k * dt)
        )
        if isinstance(duration, float) and math.isfinite(duration) and duration / dt > max(1, most):
            return
        record_every = data.draw(st.sampled_from([None, 1, 3, 0, -1, 2.5]))
        frames = data.draw(st.sampled_from([None, 1, 3, 0]))
        action = data.draw(
            st.sampled_from([None, "stop", "add spring", "add node", "remove spring", "junk"])
        )

        def callback(sim):
            if action == "stop":
                return True
            if action == "add spring" and sim.num_nodes >= 2:
                sim.add_springs([[0, sim.num_nodes - 1]], stiffness=10.0)
            if action == "add node":
                sim.add_nodes(np.zeros(sim.dim))
            if action == "remove spring" and sim.num_springs:
                sim.remove_springs([0])
            return False

        cb = "not callable" if action == "junk" else (None if action is None else callback)

        def partial(error, changed):
            # run steps in chunks: a chunk that blows up is rolled back, the chunks
            # before it stay (documented). A drive path that returns a bad value stops
            # the run the same way. What the callback changed is the user's doing.
            if action in ("add spring", "add node", "remove spring"):
                return True
            progressed = "time" in changed
            drive_error = isinstance(error, ValueError) and "drive path" in str(error)
            return progressed and (isinstance(error, ss.UnstableError) or drive_error)

        self.attempt(
            f"run {method} callback={action}",
            lambda: self.sim.run(
                duration,
                dt,
                method=method,
                record_every=record_every,
                frames=frames,
                progress=False,
                callback=cb,
            ),
            stepped=True,
            partial=partial,
            invalid=invalid_run(method, duration, record_every, frames, cb),
        )

    @rule(threads=st.sampled_from([1, 2]))
    def set_threads(self, threads):
        ss.set_num_threads(threads)

    # ---- read-only queries ------------------------------------------------------------------

    @rule(data=st.data())
    def query(self, data):
        sim = self.sim
        name = data.draw(
            st.sampled_from(
                [
                    "energy",
                    "momentum",
                    "center_of_mass",
                    "spring_lengths",
                    "spring_tensions",
                    "critical_dt",
                    "normals",
                    "rigid_frame",
                    "stiffness_matrix",
                    "normal_modes",
                    "repr",
                    "nbytes",
                    "colliders",
                    "gases",
                    "break_strain",
                    "max_strain",
                    "last_solve",
                    "write_obj",
                ]
            )
        )
        indices = data.draw(st.none() | st.just(self.nodes(data)))
        k = data.draw(st.integers(-1, 4))
        calls = {
            "rigid_frame": lambda: sim.rigid_frame(indices),
            "normal_modes": lambda: sim.normal_modes(k),
            "repr": lambda: repr(sim),
            "nbytes": lambda: sim.nbytes,
            "colliders": lambda: [repr(c) for c in sim.colliders],
            "gases": lambda: [repr(g) for g in sim.gases],
            "break_strain": lambda: sim.break_strain,
            "max_strain": lambda: sim.max_strain,
            "write_obj": lambda: sim.write_obj(os.path.join(self.folder.name, "frame.obj")),
        }
        if name == "normal_modes" and sim.num_nodes > 60:
            return
        call = calls.get(name) or getattr(sim, name)
        self.attempt(name, call, query=True)

    # ---- copies, pickles, files: they step like the original ---------------------------------

    @rule(
        data=st.data(),
        kind=st.sampled_from(["copy", "pickle", "file"]),
        dt=time_steps,
        method=st.sampled_from(ss.METHODS),
    )
    def twin_steps_identically(self, data, kind, dt, method):
        sim = self.sim
        sim.broken_springs()  # start both with an empty record of torn springs
        path = os.path.join(self.folder.name, "twin.npz")
        make = {
            "copy": sim.copy,
            "pickle": lambda: pickle.loads(
                pickle.dumps(sim, protocol=data.draw(st.sampled_from([2, 5])))
            ),
            "file": lambda: (sim.save(path), ss.load(path))[1],
        }[kind]
        ok, twin = self.attempt(f"twin by {kind}", make, query=True)
        if not ok:
            return
        # A file keeps neither the energy books nor the drives that follow a function
        # (it warns); pickles and files renumber gas bodies.
        skip = ("dissipated", "track_energy") if kind == "file" else ()
        if kind == "file" and any(
            d.targets is None and not isinstance(d.function, _Line) for d in drives(sim)
        ):
            return  # those nodes are held still in the file's system: it steps otherwise
        same = differences(snapshot(sim, ids=False), snapshot(twin, ids=False), skip)
        assert not same, f"the {kind} differs from the original in {same}"
        steps = data.draw(st.integers(0, self.max_steps(method)))
        threads = data.draw(st.sampled_from([None, 1, 2]))
        mine, _ = self.attempt(
            f"step before {kind}", lambda: sim.step(dt, steps, method), stepped=True
        )
        if threads:
            ss.set_num_threads(threads)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                twin.step(dt, steps, method)
            theirs = True
        except DOCUMENTED as error:
            theirs = type(error).__name__
        assert mine is (theirs is True), f"the original's step ok={mine}, the {kind}'s: {theirs}"
        same = differences(snapshot(sim, ids=False), snapshot(twin, ids=False), skip)
        assert not same, f"after {steps} steps of {method}, dt={dt}, the {kind} differs in {same}"
        assert _bits(sim.broken_springs()) == _bits(twin.broken_springs())


def _settings():
    """The short default run, or the long one when SPRINGSIM_FUZZ_EXAMPLES is set."""
    examples = os.environ.get("SPRINGSIM_FUZZ_EXAMPLES")
    steps = int(os.environ.get("SPRINGSIM_FUZZ_STEPS", DEFAULT_STEPS))
    common = dict(
        deadline=None,
        stateful_step_count=steps,
        suppress_health_check=list(HealthCheck),
        print_blob=True,
    )
    if examples:
        return settings(max_examples=int(examples), database=None, **common)
    # Short: one failure, shrunk, is enough for the default suite.
    return settings(max_examples=DEFAULT_EXAMPLES, report_multiple_bugs=False, **common)


def test_fuzz(pytestconfig):
    """Random operation sequences keep every documented promise (see the module)."""
    Fuzzer.sequences = Fuzzer.operations = 0
    Fuzzer.outcomes.clear()
    # A hang ends the process, and pytest's capture of stderr would go with it: send
    # faulthandler's tracebacks to a copy of the real stderr.
    capture = pytestconfig.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
        real_stderr = os.fdopen(os.dup(sys.stderr.fileno()), "w")
    Fuzzer.hang_report = real_stderr
    start = time.perf_counter()
    try:
        run_state_machine_as_test(Fuzzer, settings=_settings())
    finally:
        Fuzzer.hang_report = sys.stderr
        real_stderr.close()
        seconds = time.perf_counter() - start
        print(
            f"\nfuzz: {Fuzzer.sequences} sequences, {Fuzzer.operations} operations "
            f"(replays while shrinking included) in {seconds:.1f} s; "
            f"threads available: {ss.threading_available()}",
            file=sys.stdout,
        )
        if os.environ.get("SPRINGSIM_FUZZ_EXAMPLES"):
            for label in sorted(Fuzzer.outcomes):
                counts = ", ".join(f"{k} {v}" for k, v in Fuzzer.outcomes[label].most_common())
                print(f"  {label}: {counts}")
        ss.set_num_threads(None)


@pytest.mark.parametrize(
    ("name", "value", "problem"),
    [("positions", math.nan, "positions finite"), ("masses", -1.0, "masses finite and > 0")],
)
def test_the_checks_can_fail(name, value, problem):
    """The machine's checks fail when they should: a refused call that changed the
    state, a step that left a bad value."""
    machine = Fuzzer()
    machine.sim = ss.string(3, length=1.0, mass=1.0, stiffness=10.0, dim=2)

    def change_then_refuse():
        getattr(machine.sim, name)[0] = value
        raise ValueError("refused")

    with pytest.raises(AssertionError, match=f"changed \\['{name}'\\]"):
        machine.attempt("bad", change_then_refuse)
    with pytest.raises(AssertionError, match=problem):
        assert_valid_after_step(machine.sim, "a step")
    machine.teardown()


# ---- the threaded mode: a stepping thread (or a playing viewer) against another ------

#: Seconds of the default threaded run; SPRINGSIM_FUZZ_THREAD_SECONDS sets the long one.
DEFAULT_THREAD_SECONDS = 2.0


def _threaded_scene(rng):
    """A random system with the features whose scratch a step uses: node radii,
    self-collision, colliders, a gas body; and a method and dt to step it with."""
    kind = rng.choice(["cloth radii", "cloth self", "ball", "jelly", "string"])
    if kind.startswith("cloth"):
        sim = ss.cloth(12, 12, width=1.0, height=1.0, mass=0.2, stiffness=200.0, damping=0.01)
        if kind == "cloth radii":
            sim.radii = 0.02
        else:
            sim.enable_self_collision(0.02)
        sim.add_sphere([0.5, -0.4, 0.5], 0.3)
    elif kind == "ball":
        sim = ss.ball(radius=0.2, subdivisions=1, mass=0.5, stiffness=300.0, nrt=5.0)
        sim.add_plane([0, 1, 0], -0.5)
        sim.radii = 0.01
    elif kind == "jelly":
        sim = ss.jelly(4, 4, 4, size=0.3, mass=0.5, stiffness=300.0)
        sim.radii = 0.03
        sim.add_box([0.0, -0.6, 0.0], [1.0, 0.2, 1.0])
    else:
        sim = ss.string(30, length=1.0, mass=0.1, stiffness=100.0, dim=2)
        sim.radii = 0.02
    method = rng.choice([m for m in ss.METHODS if m != "implicit_euler"] + ["implicit_euler"])
    dt = 0.5 * sim.critical_dt() * rng.choice([0.5, 1.0, 3.0])
    return kind, sim, method, dt


def _random_operation(rng, sim, folder):
    """One call a notebook cell might make while something else steps ``sim``: a name,
    and a function returning what to check (a loaded file, a pickle, or None)."""
    n = sim.num_nodes
    pick = rng.integers(0, 14)
    value = rng.choice([0.0, 1e-3, 0.5, -2.0, 1e300, np.nan, np.inf])
    if pick == 0:
        return "energy", lambda: sim.energy()
    if pick == 1:
        return "queries", lambda: (sim.critical_dt(), sim.momentum(), sim.spring_tensions())
    if pick == 2:
        return "contact_pairs", lambda: sim.contact_pairs()
    if pick == 3:  # a racing write through a view: may make the next step refuse
        rows = rng.integers(0, n, size=3)
        return "write positions", lambda: sim.positions.__setitem__(rows, value)
    if pick == 4:
        rows = rng.integers(0, n, size=3)
        return "write velocities", lambda: sim.velocities.__setitem__(rows, value)
    if pick == 5:
        path = os.path.join(folder, f"t{rng.integers(0, 3)}.npz")
        return "save", lambda: (sim.save(path), ss.load(path))[1]
    if pick == 6:
        return "pickle", lambda: pickle.loads(pickle.dumps(sim))
    if pick == 7:
        return "copy", lambda: sim.copy()
    if pick == 8:
        count = int(rng.integers(1, 4))
        return "add_nodes", lambda: sim.add_nodes(rng.normal(size=(count, sim.dim)), masses=0.01)
    if pick == 9 and n > 4:
        return "remove_nodes", lambda: sim.remove_nodes([n - 1])
    if pick == 10 and n > 2:
        return "add_springs", lambda: sim.add_springs([[0, n - 1]], stiffness=10.0)
    if pick == 11:
        node = int(rng.integers(0, n))
        return "pin", lambda: sim.pin(node) if rng.random() < 0.5 else sim.unpin(node)
    if pick == 12:
        return "drag", lambda: setattr(sim, "drag", float(value))
    return "radii", lambda: setattr(sim, "radii", float(rng.choice([0.0, 0.01, 0.03])))


# (warnings.catch_warnings is not thread-safe: the test ignores them for its duration)
@pytest.mark.filterwarnings("ignore")
def test_fuzz_threads(tmp_path):
    """A stepping thread (or a playing viewer) against a second thread's random reads,
    writes, edits, saves and pickles: nothing crashes or hangs, every exception is a
    documented one, every file and pickle loads back whole and steps, and a call that
    raised (made holding the lock, so that nothing else moved) changed nothing."""
    seconds = float(os.environ.get("SPRINGSIM_FUZZ_THREAD_SECONDS", DEFAULT_THREAD_SECONDS))
    seed = int.from_bytes(os.urandom(4), "little")
    rng = np.random.default_rng(seed)
    deadline = time.monotonic() + seconds
    rounds = operations = 0
    outcomes: collections.Counter = collections.Counter()
    faulthandler.dump_traceback_later(OPERATION_TIMEOUT * 4, exit=True)
    try:
        while time.monotonic() < deadline:
            rounds += 1
            kind, sim, method, dt = _threaded_scene(rng)
            stop = time.monotonic() + min(1.0, max(0.2, deadline - time.monotonic()))
            viewer = None
            failures: list = []
            if rng.random() < 0.3 and kind != "string":  # (anywidget: a test requirement)
                viewer = ss.view(sim, dt=dt, substeps=10)
                viewer.play()
            else:

                def stepper(sim=sim, method=method, dt=dt, stop=stop, failures=failures):
                    while time.monotonic() < stop:
                        try:
                            sim.step(dt, steps=5, method=method)
                        except DOCUMENTED:
                            pass  # a racing write refused, a blow-up rolled back
                        except BaseException as error:  # reported by the main thread
                            failures.append(error)
                            return

                thread = threading.Thread(target=stepper)
                thread.start()
            while time.monotonic() < stop:
                name, call = _random_operation(rng, sim, str(tmp_path))
                operations += 1
                holding = rng.random() < 0.5
                try:
                    if holding:  # nothing else moves: a refusal must change nothing
                        with sim.lock:
                            before = snapshot(sim)
                            try:
                                result = call()
                            except DOCUMENTED:
                                changed = differences(before, snapshot(sim))
                                assert not changed, f"{name} raised but changed {changed}"
                                raise
                    else:
                        result = call()
                except DOCUMENTED as error:
                    outcomes[f"{name}: {type(error).__name__}"] += 1
                    assert str(error).strip(), f"{name} raised with no message"
                    continue
                outcomes[f"{name}: ok"] += 1
                if isinstance(result, ss.System):  # a file, a pickle or a copy: whole
                    assert result.velocities.shape == result.positions.shape
                    if name == "copy":  # (a copy may hold a racing write's NaN)
                        continue
                    again = pickle.loads(pickle.dumps(result))
                    assert not differences(snapshot(result, ids=False), snapshot(again, ids=False))
                    with contextlib.suppress(*DOCUMENTED):
                        result.step(dt, steps=2, method=method)
            if viewer is not None:
                viewer.pause()
                viewer.close()
            else:
                thread.join()
            assert not failures, f"the stepping thread failed (seed {seed}): {failures[0]!r}"
    except AssertionError as error:
        raise AssertionError(f"seed {seed}, round {rounds} ({kind}, {method}): {error}") from None
    finally:
        faulthandler.cancel_dump_traceback_later()
    print(f"\nthreaded fuzz: {rounds} rounds, {operations} operations in {seconds:g} s")
    if os.environ.get("SPRINGSIM_FUZZ_THREAD_SECONDS"):
        for label, count in sorted(outcomes.items()):
            print(f"  {label}: {count}")
    assert rounds >= 1 and operations > rounds
