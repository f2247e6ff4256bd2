"""What a scene costs the process: ``sim.nbytes`` against the growth of a fresh process.

``sim.nbytes`` is the sum of the blocks the kernel holds for a system. Whether the
process really grows by that much is measured in a fresh interpreter
(a child interpreter running :func:`growth_here`), so that nothing an earlier measurement
freed or paged in counts: after a warm-up (a 10-node string built and stepped, which
loads and touches the kernel), the process's resident memory is read, the scene is
built and stepped 10 times, and it is read again.

Resident memory is the process's **anonymous** memory (``RssAnon`` in
``/proc/self/status``: what malloc and mmap gave it), not its whole RSS: the whole RSS
also counts the pages of shared libraries' code read in on first use, which is the
program, not the system's memory, and the same for any size of scene (a 3×3×3 jelly
pages in 0.6 MB of NumPy's ``_multiarray_umath`` on its first build, as does the
20³ one). The whole RSS is reported too (``rss_growth``).
"""

import gc
import json
import os
import subprocess
import sys

from springsim.bench import scenes

#: Substeps the scene takes before the second reading (its plan and scratch are made).
STEPS = 10


def anonymous_bytes() -> int | None:
    """The process's anonymous resident memory (Linux ``RssAnon``), or None elsewhere."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def resident_bytes() -> int | None:
    """The process's whole resident memory (Linux ``/proc/self/statm``), or None elsewhere."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return None


def growth_here(scene_name: str) -> dict:
    """Build and step ``scene_name`` in this process; its nbytes and the process's growth.

    Meaningful in a fresh process only (see :func:`process_growth`).
    """
    warm = scenes.string_10()
    warm.step(1e-4, steps=10)
    del warm
    gc.collect()
    anon0, rss0 = anonymous_bytes(), resident_bytes()
    sim = scenes.scene(scene_name)
    sim.step(scenes.scene_dt(sim), steps=STEPS)
    gc.collect()
    anon1, rss1 = anonymous_bytes(), resident_bytes()
    # (/proc is there for both readings or for neither)
    growth = None if anon0 is None else anon1 - anon0  # type: ignore[operator]
    rss_growth = None if rss0 is None else rss1 - rss0  # type: ignore[operator]
    nbytes, springs = sim.nbytes, sim.num_springs
    return {
        "scene": scene_name,
        "nodes": sim.num_nodes,
        "springs": springs,
        "nbytes": nbytes,
        "bytes_per_spring": nbytes / springs,
        "growth": growth,
        "growth_per_spring": None if growth is None else growth / springs,
        "growth_ratio": None if growth is None else growth / nbytes,
        "rss_growth": rss_growth,
        "rss_ratio": None if rss_growth is None else rss_growth / nbytes,
    }


def process_growth(scene_name: str, timeout: float = 300.0) -> dict:
    """:func:`growth_here` in a fresh interpreter, so that the growth is the scene's alone.

    Returns
    -------
    dict
        ``scene``, ``nodes``, ``springs``, ``nbytes`` (``sim.nbytes`` after building and
        stepping), ``bytes_per_spring``, ``growth`` (the anonymous resident memory the
        process gained, bytes; None where it cannot be read), ``growth_per_spring``,
        ``growth_ratio`` (growth / nbytes), ``rss_growth`` and ``rss_ratio`` (the same
        for the whole RSS, with library code paged in).

    Examples
    --------
    >>> from springsim.bench.memory import process_growth
    >>> figures = process_growth("string_1000")
    >>> figures["springs"], figures["nbytes"] > 0
    (999, True)
    """
    code = f"import json, {__name__} as m; print(json.dumps(m.growth_here({scene_name!r})))"
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=True,
    )
    return json.loads(done.stdout.splitlines()[-1])
