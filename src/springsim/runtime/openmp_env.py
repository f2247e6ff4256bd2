"""How the kernel's OpenMP threads wait, set before the kernel (and libgomp) loads.

Between the two passes of a force evaluation, and between evaluations, a thread that
is done waits for the others. libgomp's default spins for a long time (about 300,000
rounds) before it sleeps: on a machine whose other cores are busy, a spinning thread
takes the core its partner needs, and two threads ran 3-90x slower than one. A short
spin, then sleep, keeps the wake-up quick on an idle machine and gives the core away
on a busy one. A value the user set is kept.
"""

import os

os.environ.setdefault("GOMP_SPINCOUNT", "10000")
