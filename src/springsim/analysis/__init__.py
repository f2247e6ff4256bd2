"""What a system's state says: energies, the stable step, the solver's report, normals
and the rigid frame (``diagnostics``), the stiffness matrix and normal modes
(``modes``), and the equilibrium (``statics``).
"""
