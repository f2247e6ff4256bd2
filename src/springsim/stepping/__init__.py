"""Stepping beyond one kernel call: runs with records (``run``, ``history``), the
energy books across calls (``divergence``) and sweeps over parameters (``sweep``). One
call of :meth:`springsim.System.step` is the kernel's, driven nodes included.
"""
