"""The SIMD paths on the bench's cloth: what the kernel chose, and what each path costs.

On first use the kernel times every SIMD path it can run on a small probe cloth, once
per process, and keeps the fastest (a near-tie, within 3 %, goes to the simpler path;
``springsim.build_info()`` reports the choice and the probe's figures). The bench checks
that choice on the real thing: the 100×100 cloth (:func:`~springsim.bench.scenes.cloth_100`,
59,002 springs), stepped with symplectic Euler on each available path from the same state,
:data:`STEPS` substeps per call, interleaved, one thread, by thread CPU time; the line
reports each path's median ns per spring-step. Every path gives the same bits, so only
the time differs.
"""

import springsim as ss
from springsim.bench.kernel import kernel_contender
from springsim.bench.scenes import DT_FRACTION, TARGET_METHOD, cloth_100
from springsim.bench.timing import interleave, median

#: Substeps per timed call.
STEPS = 20


def simd_cost(repeats: int = 5) -> dict:
    """The kernel's SIMD choice, and the median ns per spring-step of each path on the
    100×100 cloth.

    Returns
    -------
    dict
        ``chosen`` (the path in use), ``choice`` (how it was chosen, as in
        ``build_info()["simd_choice"]``), ``probe_ns_per_spring`` (the kernel's own
        measurement, or None), ``cloth_ns_per_spring_step`` ({path: ns}: every
        available path on the cloth), ``fastest`` (the path fastest on the cloth),
        ``substeps`` per timed call and ``rounds``.

    Examples
    --------
    >>> from springsim.bench.simd import simd_cost
    >>> row = simd_cost(repeats=1)
    >>> row["chosen"] in row["cloth_ns_per_spring_step"], row["substeps"]
    (True, 20)
    """
    info = ss.build_info()
    paths = [path for path, ok in info["simd_paths"].items() if ok]
    pristine = cloth_100()
    dt = DT_FRACTION * pristine.critical_dt()

    def on_path(path: str):
        contender = kernel_contender(path, pristine, dt, TARGET_METHOD, 1)
        warm_up = contender.reset

        def reset():
            ss.set_simd(path)
            warm_up()

        contender.reset, contender.steps = reset, STEPS
        return contender

    try:
        timed = interleave([on_path(path) for path in paths], rounds=repeats)
    finally:  # back to the choice in force before
        ss.set_simd(info["simd"] if info["simd_choice"] == "set" else None)
    cloth = {
        path: median(timed[path]["seconds"]) / (STEPS * pristine.num_springs) * 1e9
        for path in paths
    }
    return {
        "chosen": info["simd"],
        "choice": info["simd_choice"],
        "probe_ns_per_spring": info["simd_ns_per_spring"],
        "cloth_ns_per_spring_step": cloth,
        "fastest": min(cloth, key=cloth.__getitem__),
        "substeps": STEPS,
        "rounds": repeats,
    }


def simd_line(row: dict) -> str:
    """The report's line for :func:`simd_cost`'s figures."""

    def listed(times: dict) -> str:
        return ", ".join(f"{path} {ns:.2f}" for path, ns in times.items())

    probe = row["probe_ns_per_spring"]
    how = row["choice"] if probe is None else f"{row['choice']} ({listed(probe)} ns/spring)"
    return (
        f"simd: {row['chosen']}, {how}; the 100×100 cloth on each path:"
        f" {listed(row['cloth_ns_per_spring_step'])} ns/spring-step (1 thread),"
        f" fastest {row['fastest']}"
    )
