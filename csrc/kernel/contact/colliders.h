/* colliders.h - part of the kernel API: the colliders (colliders.c).
 * Included by springsim.h only, at its place there (it uses what comes before it). */
#ifndef SPRINGSIM_COLLIDE_H
#define SPRINGSIM_COLLIDE_H

/* ---- Colliders (colliders.c) -------------------------------------------- */

ss_status ss_system_add_collider(ss_system *sys, ss_collider c, long *id);
/* Replace the collider with c.id by c (same kind), after checking c. */
ss_status ss_system_set_collider(ss_system *sys, ss_collider c);
ss_status ss_system_remove_collider(ss_system *sys, long id);
ss_collider *ss_system_find_collider(ss_system *sys, long id);
/* Before a step call: build what ss_colliders_apply needs (nothing without colliders). */
ss_status ss_colliders_prepare(ss_system *sys);
/* At the start of every substep: note where the nodes are (for sticking friction). */
void ss_colliders_begin_substep(ss_system *sys);
/* After a substep's integration: put free nodes found inside a collider back on its
 * surface and apply restitution and Coulomb friction; adds what the contacts take to
 * sys->state.dissipated when track_energy (see colliders.c for how it is counted), `damped` J
 * being what damping and drag were counted to dissipate in this substep. With
 * meshes_only, the mesh colliders alone (VBD's safety net: vbd.c). */
void ss_colliders_apply(ss_system *sys, double damped, int meshes_only);
/* Free what ss_colliders_prepare built (on topology edits and when the system goes;
 * colliders.c). */
void ss_colliders_forget(ss_system *sys);
/* Bytes held by sys->scratch.collider_contacts. */
size_t ss_colliders_nbytes(const ss_system *sys);

/* ---- Boxes and capsules (shapes.c) --------------------------------------- */

/* q: the point of segment a..b nearest p. */
void ss_nearest_on_segment(const double *a, const double *b, int dim, const double *p, double *q);
/* A unit vector perpendicular to a capsule's axis (+y for a point-like one). */
void ss_capsule_off_axis(const ss_collider *col, int dim, double *normal);
/* Whether p is inside the box; always how far (m, negative outside), the nearest point
 * of its surface and the unit normal there (inside: through the nearest face). */
int ss_box_locate(const ss_collider *col, int dim, const double *p, double *depth, double *surface,
                  double *normal);

/* ---- Triangle meshes (mesh.c) ------------------------------------------- */

/* A mesh collider's triangles and their bounding volume hierarchy (built once, when the
 * mesh is added or its vertices change, in an order that depends on the mesh alone). */
typedef struct ss_mesh_node {
    double lo[3], hi[3];  /* the box around its triangles */
    int32_t first, count; /* leaf (count > 0): order[first .. first + count); else the
                           * children are nodes first and first + 1 */
} ss_mesh_node;
typedef struct ss_mesh {
    size_t num_vertices, num_faces, num_nodes;
    double *vertices;    /* (V, 3) m */
    int32_t *faces;      /* (F, 3) vertex triples */
    double *normals;     /* (F, 3) unit normals by the right-hand rule */
    ss_mesh_node *nodes; /* the hierarchy, root first */
    int32_t *order;      /* (F,) faces in leaf order */
    double skin;         /* m: the least distance a node is put back at (> 0) */
} ss_mesh;

/* Where a node is against a mesh: the triangle it touches and the side (+1 the side the
 * normal points to, -1 the other) it belongs on. */
typedef struct {
    int32_t face;
    int side;
} ss_mesh_contact;

/* Check vertices (V, 3, finite) and faces (F >= 1, 3, in range, not degenerate) and
 * build a mesh of copies of them (*out; NULL on error, with sys's error set). */
ss_status ss_mesh_build(ss_system *sys, const double *vertices, size_t num_vertices,
                        const int32_t *faces, size_t num_faces, ss_mesh **out);
ss_mesh *ss_mesh_copy(const ss_mesh *mesh);
void ss_mesh_free(ss_mesh *mesh);
size_t ss_mesh_nbytes(const ss_mesh *mesh);
/* Whether a node that went from a to p (in a substep) must be put back: p within
 * `thickness` (at least the skin) of a triangle, or the segment a..p crossing one. The
 * contact found: the first triangle crossed (side: a's), else the nearest one (side:
 * p's). */
int ss_mesh_find(const ss_mesh *mesh, double thickness, const double *a, const double *p,
                 ss_mesh_contact *found);
/* Against the triangle of `contact`: how far p is inside the layer of the given
 * thickness on the contact's side (m, negative outside), the nearest point of that
 * layer's surface and the unit normal there. Returns whether depth > 0. */
int ss_mesh_locate(const ss_mesh *mesh, double thickness, const ss_mesh_contact *contact,
                   const double *p, double *depth, double *surface, double *normal);

/* ---- Where a node is, and XPBD's collider constraints ------------------------- */

/* Whether p is inside the collider (a mesh: inside the layer about hint's triangle); if
 * so, or if `always`, how far inside (m, negative outside), the nearest point of the
 * surface and the unit normal there, into free space (colliders.c). */
int ss_collider_locate(const ss_collider *col, const ss_mesh_contact *hint, int dim,
                       const double *p, int always, double *depth, double *surface, double *normal);
/* XPBD (collider_constraints.c): the nodes within `margin` m of each collider at the
 * prediction (records of `stride` doubles, (x, y, z, w, s_x, s_y, s_z, ...) per node),
 * collider by collider, node by node; v the predicted velocities, for the restitution.
 * A node that started the substep inside a plane, sphere, box or capsule is first moved,
 * start and prediction alike, onto its surface. -1 when out of memory. */
int ss_collider_constraints_begin(ss_system *sys, double *records, size_t stride, const double *v,
                                  double margin);
/* One pass over them in that order: the non-penetration projection and its friction. */
void ss_collider_constraints_solve(ss_system *sys, double *records, size_t stride);
/* After v = (x - s) / dt: restitution of those that pushed (e for an approach faster
 * than threshold m/s, else 0); returns how many pushed. */
size_t ss_collider_constraints_restitute(ss_system *sys, const double *x, double *v,
                                         double threshold);

#endif
