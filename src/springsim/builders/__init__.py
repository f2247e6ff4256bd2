"""Builders: one call for each model of the source articles, each returning a System.

The modules: ``strings`` (:func:`~springsim.string`, :func:`~springsim.balloon`),
``lattices`` (:func:`~springsim.cloth`, :func:`~springsim.jelly`), ``bodies``
(:func:`~springsim.mesh`, :func:`~springsim.ball`, :func:`~springsim.cluster`); what they
share: ``geometry`` (lattices, triangulations, icospheres, edges), ``materials``
(placement, materials in physical units, damping ratios) and ``arguments`` (their
checks, and the System they fill). The builders are the package's names
(``springsim.cloth``, ...).

Counts (nodes, cells) come first, positionally; everything else is a keyword.
Mass is the body's total mass, spread equally over its nodes, unless per-node
masses are given. Stiffness (N/m) and damping (N·s/m) are those of each spring, not
of the whole body: :func:`mesh` also takes per-spring arrays; the other builders
take one number per spring family (vary them afterwards by writing ``sim.stiffness``
— each builder documents its spring order). ``damping_ratio`` ζ may replace
``damping``: c = 2 ζ √(k m_eff) per spring, m_eff the reduced mass of its two nodes.
:func:`string` and :func:`cloth` also take a material in physical units (a linear or
areal density, EA and a tension, a 2D Young's modulus and Poisson ratio). Every
builder makes each spring once, never a zero-length one, with rest lengths equal to
the initial distances (but a string built under ``tension``).

Placement: each builder takes where its shape sits — an anchor point (``start`` of a
string, ``origin`` of a cloth or jelly, ``center`` of a ball or balloon) — and how it
is turned about that point: ``rotation``, a rotation matrix (dim × dim, or SciPy's
``Rotation``; in 2D also an angle in radians), or the shape's own direction
(``direction`` of a string, ``normal`` of a cloth). :func:`mesh` and
:func:`cluster` take their points where they are.

Conventions: y is up (the default gravity pulls along −y), so strings and cloth
hang along −y; faces are counter-clockwise seen from outside (outward normals by
the right-hand rule); ``pin`` takes a name, ``None``/``"none"``, or node indices.
"""
