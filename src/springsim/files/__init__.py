"""Files: the save format (``npz``) and pickles (``pickling``), Wavefront OBJ (``obj``),
the formats meshio reads (``mesh_io``), welding a mesh's coincident vertices
(``weld``), ParaView series (``vtk``), what they share (``paths``: path names, atomic
writes) and the module paths older files name (``legacy``).

These read and write; a System saves and pickles itself with them. What builds a new
System from a file (:func:`springsim.io.load`, :func:`~springsim.io.read_obj`,
:func:`~springsim.io.read_mesh`) is :mod:`springsim.io`, the public face of files.
"""
