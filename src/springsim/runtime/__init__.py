"""The runtime: how this build of the kernel runs here.

``build`` (the SIMD path of the kernel's loops, measured on first use), ``threads``
(how many threads step a large system) and ``openmp_env`` (how OpenMP's threads wait,
set before the kernel loads).
"""
