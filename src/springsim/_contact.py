"""Contact: the plane, sphere, box, capsule and triangle-mesh colliders.

:class:`springsim.System` inherits these methods; this module never imports it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from springsim._checks import _as_real_array, _as_vectors, _scalar
from springsim._system_host import SystemHost

if TYPE_CHECKING:
    from springsim.colliders import AnyCollider, Box, Capsule, MeshCollider, Plane, Sphere


class ContactMixin(SystemHost):
    """Contact: the plane, sphere, box, capsule and triangle-mesh colliders."""

    def add_plane(
        self,
        normal: npt.ArrayLike,
        offset: float = 0.0,
        restitution: float = 0.0,
        friction: float = 0.0,
    ) -> Plane:
        """Add a plane that nodes cannot pass: the half-space n·x >= offset is free.

        After every substep, of every method, a free node found behind the plane is
        moved onto it; if it was moving inwards, it leaves with ``restitution`` e
        times the speed it met the plane with (its normal speed, less what climbing
        back out costs in potential energy), and Coulomb friction reduces its
        tangential velocity by μ times the normal velocity change (about
        (1 + e)|v·n|), at most to zero. A node that friction stops stays where it
        touched the plane: static friction holds without creeping. What contacts
        take goes into :attr:`dissipated` (docs/guide/colliders.md, "How contact energy
        is counted"). Pinned nodes are left alone.

        Parameters
        ----------
        normal : array_like, shape (dim,)
            Points into free space; normalised here. Nonzero and finite.
        offset : float
            m: the plane is n·x = offset (with the normalised n).
        restitution : float
            In [0, 1]: 0 stops the node, 1 bounces it back at full speed.
        friction : float
            Coulomb coefficient μ >= 0.

        Returns
        -------
        Plane
            A handle: change its ``normal``, ``offset``, ``restitution`` or
            ``friction`` between steps to move the plane.

        Raises
        ------
        ValueError
            A zero or non-finite normal, restitution outside [0, 1], negative friction.

        Examples
        --------
        >>> import springsim as ss
        >>> sim = ss.System(dim=2)
        >>> _ = sim.add_nodes([0.0, 1.0])
        >>> floor = sim.add_plane([0, 1], restitution=0.5)
        >>> sim.step(1e-3, steps=2000)
        >>> bool(sim.positions[0, 1] >= 0.0)
        True
        """
        from springsim.colliders import PLANE, handle

        vector = _as_vectors(normal, "normal", np.float64, (self.dim,))
        cid = self._add_collider(
            PLANE,
            vector,
            _scalar(offset, "offset"),
            _scalar(restitution, "restitution"),
            _scalar(friction, "friction"),
        )
        return handle(self, cid, PLANE)

    def add_sphere(
        self,
        center: npt.ArrayLike,
        radius: float,
        restitution: float = 0.0,
        friction: float = 0.0,
    ) -> Sphere:
        """Add a solid sphere (a disc in 2D) that nodes cannot enter.

        Contact works as for :meth:`add_plane`, with the normal pointing out of the
        sphere from its centre through the node.

        Parameters
        ----------
        center : array_like, shape (dim,)
            m.
        radius : float
            m, > 0.
        restitution, friction : float
            As for :meth:`add_plane`.

        Returns
        -------
        Sphere
            A handle: change ``center``, ``radius``, ``restitution`` or ``friction``
            between steps.

        Raises
        ------
        ValueError
            radius <= 0, restitution outside [0, 1], negative friction, a non-finite center.

        Examples
        --------
        >>> import springsim as ss
        >>> sim = ss.System(dim=2)
        >>> _ = sim.add_nodes([0.1, 0.0])
        >>> ball = sim.add_sphere([0, 0], radius=1.0)
        >>> sim.step(1e-3)
        >>> round(float(np.hypot(*sim.positions[0])), 12)
        1.0
        """
        from springsim.colliders import SPHERE, handle

        vector = _as_vectors(center, "center", np.float64, (self.dim,))
        cid = self._add_collider(
            SPHERE,
            vector,
            _scalar(radius, "radius"),
            _scalar(restitution, "restitution"),
            _scalar(friction, "friction"),
        )
        return handle(self, cid, SPHERE)

    def add_box(
        self,
        center: npt.ArrayLike,
        half_extents: npt.ArrayLike,
        restitution: float = 0.0,
        friction: float = 0.0,
    ) -> Box:
        """Add a solid axis-aligned box (a rectangle in 2D) that nodes cannot enter.

        Contact works as for :meth:`add_plane`: a free node found inside is put back on
        the nearest point of the surface (through the nearest face), with restitution
        and Coulomb friction along the outward normal there. The box is axis-aligned;
        a tilted box is a :meth:`add_mesh_collider` of its 12 triangles.

        Parameters
        ----------
        center : array_like, shape (dim,)
            m.
        half_extents : array_like, shape (dim,)
            m, each > 0: the box is ``|x_k − center_k| <= half_extents_k``.
        restitution, friction : float
            As for :meth:`add_plane`.

        Returns
        -------
        Box
            A handle: change ``center``, ``half_extents``, ``restitution`` or
            ``friction`` between steps.

        Raises
        ------
        ValueError
            A half-extent <= 0, non-finite values, restitution outside [0, 1],
            negative friction.

        Examples
        --------
        >>> import springsim as ss
        >>> sim = ss.System(dim=2)
        >>> _ = sim.add_nodes([0.2, 1.0])
        >>> table = sim.add_box([0, 0], [1.0, 0.5])
        >>> sim.step(1e-3, steps=1000)
        >>> sim.positions[0].round(12).tolist()
        [0.2, 0.5]
        """
        from springsim.colliders import BOX, handle

        cid = self._add_shape(
            BOX,
            _as_vectors(center, "center", np.float64, (self.dim,)),
            _as_vectors(half_extents, "half_extents", np.float64, (self.dim,)),
            0.0,
            _scalar(restitution, "restitution"),
            _scalar(friction, "friction"),
        )
        return handle(self, cid, BOX)

    def add_capsule(
        self,
        start: npt.ArrayLike,
        end: npt.ArrayLike,
        radius: float,
        restitution: float = 0.0,
        friction: float = 0.0,
    ) -> Capsule:
        """Add a solid capsule (a stadium in 2D): every point within ``radius`` of the
        segment from ``start`` to ``end``. Nodes cannot enter it.

        Contact works as for :meth:`add_sphere`, about the nearest point of the segment
        (a node exactly on the axis leaves perpendicular to it). ``start == end`` is a
        sphere.

        Parameters
        ----------
        start, end : array_like, shape (dim,)
            m: the ends of the axis.
        radius : float
            m, > 0.
        restitution, friction : float
            As for :meth:`add_plane`.

        Returns
        -------
        Capsule
            A handle: change ``start``, ``end``, ``radius``, ``restitution`` or
            ``friction`` between steps.

        Raises
        ------
        ValueError
            radius <= 0, non-finite ends, restitution outside [0, 1], negative friction.

        Examples
        --------
        >>> import springsim as ss
        >>> sim = ss.System(dim=2)
        >>> _ = sim.add_nodes([0.3, 1.0])
        >>> rod = sim.add_capsule([-1, 0], [1, 0], radius=0.25)
        >>> sim.step(1e-3, steps=1000)
        >>> sim.positions[0].round(12).tolist()
        [0.3, 0.25]
        """
        from springsim.colliders import CAPSULE, handle

        cid = self._add_shape(
            CAPSULE,
            _as_vectors(start, "start", np.float64, (self.dim,)),
            _as_vectors(end, "end", np.float64, (self.dim,)),
            _scalar(radius, "radius"),
            _scalar(restitution, "restitution"),
            _scalar(friction, "friction"),
        )
        return handle(self, cid, CAPSULE)

    def add_mesh_collider(
        self,
        vertices: npt.ArrayLike | str | os.PathLike[str],
        faces: npt.ArrayLike | None = None,
        *,
        thickness: float = 0.0,
        restitution: float = 0.0,
        friction: float = 0.0,
    ) -> MeshCollider:
        """Add a triangle mesh (3D systems) that nodes cannot pass through.

        The mesh is a surface of ``thickness`` h: a node belongs on the side of it that
        it started the substep on, and is kept at least h from every triangle. After
        every substep, of every method, the segment each free node moved along is tested
        against the triangles (continuous detection: nothing passes through a static
        mesh, at any dt), and a node closer than h to a triangle, or that crossed one,
        is put back at distance h on its side, with restitution and Coulomb friction
        as for :meth:`add_plane` (the normal: from the nearest point of the triangle
        towards the node). A closed mesh is a solid to nodes outside it; a node that
        starts inside stays inside. h = 0 is a skin of 10⁻⁹ of the mesh's extent, so
        that a node put back is on a definite side. In a concave corner a node is put
        back up to 4 times (once per triangle it is then too close to); one still too
        close goes back to where it started the substep. A bounding volume hierarchy,
        built once when the mesh is added or moved, makes a node's test cost about
        log F (F triangles); the results do not depend on the number of threads.

        Moving the mesh (assigning :attr:`MeshCollider.vertices` between steps) is a
        jump: a node it comes closer than h to is pushed out on its side, so a mesh
        moved by less than h per step pushes nodes along; one moved farther than h in
        one step may jump past nodes, which then stay on their (new) side. The work
        of a moving mesh is not counted (as for every moving collider).

        Parameters
        ----------
        vertices : array_like, shape (V, 3), or str or path
            m. A path reads the mesh from a file: ``.obj`` with
            :func:`springsim.read_obj`, any other with :func:`springsim.read_mesh`
            (meshio); then ``faces`` must be None.
        faces : array_like of int, shape (F, 3)
            Vertex triples (F >= 1); no degenerate triangle. Their orientation does
            not matter.
        thickness : float
            m >= 0.
        restitution, friction : float
            As for :meth:`add_plane`.

        Returns
        -------
        MeshCollider
            A handle: change ``vertices``, ``thickness``, ``restitution`` or
            ``friction`` between steps.

        Raises
        ------
        ValueError
            A 2D system, non-finite vertices, degenerate triangles, wrong shapes,
            thickness < 0, restitution outside [0, 1], negative friction.
        IndexError
            A face names a vertex that does not exist.

        Examples
        --------
        >>> import springsim as ss
        >>> sim = ss.System()
        >>> _ = sim.add_nodes([0.2, 1.0, 0.1])
        >>> square = sim.add_mesh_collider(
        ...     [[-1, 0, -1], [1, 0, -1], [1, 0, 1], [-1, 0, 1]], [[0, 1, 2], [0, 2, 3]],
        ...     thickness=0.01,
        ... )
        >>> sim.step(1e-3, steps=1000)
        >>> sim.positions[0].round(12).tolist()
        [0.2, 0.01, 0.1]
        """
        from springsim.colliders import MESH, handle

        if isinstance(vertices, (str, os.PathLike)):
            if faces is not None:
                raise TypeError("give a file, or vertices and faces, not both")
            vertices, faces = _read_mesh_file(vertices)
        if faces is None:
            raise TypeError("add_mesh_collider needs faces with the vertices (or a file)")
        if self.dim != 3:
            raise ValueError("a mesh collider needs a 3D system (this one is 2D)")
        v = np.ascontiguousarray(_as_real_array(vertices, "vertices"), dtype=np.float64)
        if v.ndim != 2 or v.shape[1] != 3:
            raise ValueError(f"vertices must have shape (V, 3), got {v.shape}")
        f_array = np.asarray(faces)
        if f_array.ndim != 2 or f_array.shape[1] != 3:
            raise ValueError(f"faces must have shape (F, 3), got {f_array.shape}")
        if f_array.size and not np.issubdtype(f_array.dtype, np.integer):
            raise TypeError(f"faces must be integers, not {f_array.dtype}")
        if f_array.size and (f_array.min() < 0 or f_array.max() >= v.shape[0]):
            raise IndexError(f"faces name vertices outside 0 .. {v.shape[0] - 1}")
        cid = self._add_mesh(
            v,
            np.ascontiguousarray(f_array, dtype=np.int32),
            _scalar(thickness, "thickness"),
            _scalar(restitution, "restitution"),
            _scalar(friction, "friction"),
        )
        return handle(self, cid, MESH)

    @property
    def colliders(self) -> list[AnyCollider]:
        """The colliders of this system, as handles, in the order added."""
        from springsim.colliders import handle

        return [handle(self, cid, kind) for cid, kind, *_ in self._colliders()]

    def remove_collider(self, collider: AnyCollider) -> None:
        """Remove a collider (a handle from this system).

        Raises
        ------
        ValueError
            The collider is not (or no longer) in this system.
        """
        from springsim.colliders import _Collider

        if not isinstance(collider, _Collider):
            raise TypeError(f"expected a collider handle, not {type(collider).__name__}")
        if collider._system is not self:
            raise ValueError("this collider belongs to another system")
        self._remove_collider(collider._id)


def _read_mesh_file(path: str | os.PathLike[str]) -> tuple[np.ndarray, np.ndarray]:
    """A mesh file's vertices and triangles (OBJ by springsim's reader, others by meshio)."""
    from springsim.mesh_io import read_mesh
    from springsim.obj import read_obj

    reader = read_obj if os.fspath(path).lower().endswith(".obj") else read_mesh
    mesh = reader(path, mass=1.0, stiffness=0.0)
    return np.array(mesh.positions), np.array(mesh.faces)
