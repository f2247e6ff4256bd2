/* mesh.c - triangle-mesh colliders: the checked copy of a mesh, its bounding volume
 * hierarchy, and where a node is against it (colliders.c responds to what this finds).
 *
 * The mesh is a surface of thickness h >= 0 (at least the skin, 1e-9 of the mesh's
 * extent, so that a node put back is on a definite side of it, clear of rounding). A
 * node belongs on the side of a triangle it started the substep on: ss_mesh_find looks
 * for the first triangle that the segment from its start to where the integration left
 * it crosses (continuous: nothing passes a static mesh, at any dt), and else for the
 * nearest triangle closer than h; colliders.c puts it back at distance h on its side. The
 * hierarchy is built once per mesh (median splits along the widest axis of the
 * triangles' centroids, ties broken by face index), so its shape, and every result,
 * depends on the mesh alone: a query costs about log F box tests. */
#include "springsim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LEAF_SIZE 2
/* How far outside a triangle (in barycentric terms) a crossing still counts: the two
 * triangles of a shared edge overlap by this much, so no crossing slips between them. */
#define EDGE_SLACK 1e-9
/* Depth of the hierarchy: a median split halves the faces, so 2 + log2(F) < 64. */
#define STACK_DEPTH 128

static double dot3(const double *a, const double *b) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void sub3(const double *a, const double *b, double *out) {
    for (int k = 0; k < 3; k++)
        out[k] = a[k] - b[k];
}

static void cross3(const double *a, const double *b, double *out) {
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

static const double *vertex(const ss_mesh *m, int32_t f, int corner) {
    return m->vertices + 3 * (size_t)m->faces[3 * (size_t)f + (size_t)corner];
}

/* q: the point of triangle f nearest p (Ericson, Real-Time Collision Detection 5.1.5).
 * Returns 1 if it is inside the face (p - q is along the normal), 0 on an edge or corner. */
static int closest_point(const ss_mesh *m, int32_t f, const double *p, double *q) {
    const double *a = vertex(m, f, 0), *b = vertex(m, f, 1), *c = vertex(m, f, 2);
    double ab[3], ac[3], ap[3], bp[3], cp[3];
    sub3(b, a, ab), sub3(c, a, ac), sub3(p, a, ap);
    const double d1 = dot3(ab, ap), d2 = dot3(ac, ap);
    if (d1 <= 0.0 && d2 <= 0.0) {
        memcpy(q, a, 3 * sizeof(double));
        return 0;
    }
    sub3(p, b, bp);
    const double d3 = dot3(ab, bp), d4 = dot3(ac, bp);
    if (d3 >= 0.0 && d4 <= d3) {
        memcpy(q, b, 3 * sizeof(double));
        return 0;
    }
    const double vc = d1 * d4 - d3 * d2;
    if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) {
        const double v = d1 / (d1 - d3);
        for (int k = 0; k < 3; k++)
            q[k] = a[k] + v * ab[k];
        return 0;
    }
    sub3(p, c, cp);
    const double d5 = dot3(ab, cp), d6 = dot3(ac, cp);
    if (d6 >= 0.0 && d5 <= d6) {
        memcpy(q, c, 3 * sizeof(double));
        return 0;
    }
    const double vb = d5 * d2 - d1 * d6;
    if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) {
        const double w = d2 / (d2 - d6);
        for (int k = 0; k < 3; k++)
            q[k] = a[k] + w * ac[k];
        return 0;
    }
    const double va = d3 * d6 - d5 * d4;
    if (va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0) {
        const double w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        for (int k = 0; k < 3; k++)
            q[k] = b[k] + w * (c[k] - b[k]);
        return 0;
    }
    const double denom = 1.0 / (va + vb + vc), v = vb * denom, w = vc * denom;
    for (int k = 0; k < 3; k++)
        q[k] = a[k] + v * ab[k] + w * ac[k];
    return 1;
}

/* Whether x, a point of triangle f's plane, is in the triangle (or within EDGE_SLACK of
 * its edges, in barycentric terms). */
static int in_triangle(const ss_mesh *m, int32_t f, const double *x) {
    const double *n = m->normals + 3 * (size_t)f;
    double twice_area = 0.0, edge[3], to[3], c[3], lambda[3];
    for (int k = 0; k < 3; k++) {
        const double *u = vertex(m, f, k), *w = vertex(m, f, (k + 1) % 3);
        sub3(w, u, edge), sub3(x, u, to), cross3(edge, to, c);
        lambda[k] = dot3(c, n);
        twice_area += lambda[k];
    }
    for (int k = 0; k < 3; k++)
        if (lambda[k] < -EDGE_SLACK * twice_area)
            return 0;
    return 1;
}

/* ---- Building ------------------------------------------------------------ */

typedef struct {
    double key;
    int32_t face;
} keyed;

static int by_key(const void *pa, const void *pb) {
    const keyed *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return (a->face > b->face) - (a->face < b->face);
}

static void build_node(ss_mesh *m, size_t at, int32_t begin, int32_t end, const double *centroids,
                       keyed *scratch) {
    ss_mesh_node *node = &m->nodes[at];
    double clo[3], chi[3];
    for (int k = 0; k < 3; k++) {
        node->lo[k] = clo[k] = INFINITY;
        node->hi[k] = chi[k] = -INFINITY;
    }
    for (int32_t q = begin; q < end; q++) {
        const int32_t f = m->order[q];
        for (int corner = 0; corner < 3; corner++)
            for (int k = 0; k < 3; k++) {
                node->lo[k] = fmin(node->lo[k], vertex(m, f, corner)[k]);
                node->hi[k] = fmax(node->hi[k], vertex(m, f, corner)[k]);
            }
        for (int k = 0; k < 3; k++) {
            clo[k] = fmin(clo[k], centroids[3 * (size_t)f + (size_t)k]);
            chi[k] = fmax(chi[k], centroids[3 * (size_t)f + (size_t)k]);
        }
    }
    int axis = 0;
    for (int k = 1; k < 3; k++)
        if (chi[k] - clo[k] > chi[axis] - clo[axis])
            axis = k;
    if (end - begin <= LEAF_SIZE || !(chi[axis] > clo[axis])) {
        node->first = begin;
        node->count = end - begin;
        return;
    }
    const int32_t count = end - begin, mid = begin + count / 2;
    for (int32_t q = 0; q < count; q++) {
        scratch[q].face = m->order[begin + q];
        scratch[q].key = centroids[3 * (size_t)scratch[q].face + (size_t)axis];
    }
    qsort(scratch, (size_t)count, sizeof *scratch, by_key);
    for (int32_t q = 0; q < count; q++)
        m->order[begin + q] = scratch[q].face;
    const size_t child = m->num_nodes;
    m->num_nodes += 2;
    node->first = (int32_t)child;
    node->count = 0;
    build_node(m, child, begin, mid, centroids, scratch);
    build_node(m, child + 1, mid, end, centroids, scratch);
}

void ss_mesh_free(ss_mesh *mesh) {
    if (!mesh)
        return;
    ss_free(mesh->vertices);
    ss_free(mesh->faces);
    ss_free(mesh->normals);
    ss_free(mesh->nodes);
    ss_free(mesh->order);
    ss_free(mesh);
}

static ss_mesh *allocate(size_t num_vertices, size_t num_faces) {
    ss_mesh *m = ss_malloc(sizeof *m);
    if (!m)
        return NULL;
    memset(m, 0, sizeof *m);
    m->num_vertices = num_vertices;
    m->num_faces = num_faces;
    m->vertices = ss_malloc(3 * num_vertices * sizeof(double));
    m->faces = ss_malloc(3 * num_faces * sizeof(int32_t));
    m->normals = ss_malloc(3 * num_faces * sizeof(double));
    m->nodes = ss_malloc(2 * num_faces * sizeof(ss_mesh_node));
    m->order = ss_malloc(num_faces * sizeof(int32_t));
    if (!m->vertices || !m->faces || !m->normals || !m->nodes || !m->order) {
        ss_mesh_free(m);
        return NULL;
    }
    return m;
}

ss_status ss_mesh_build(ss_system *sys, const double *vertices, size_t num_vertices,
                        const int32_t *faces, size_t num_faces, ss_mesh **out) {
    *out = NULL;
    if (sys->dim != 3)
        return ss_fail(sys, SS_ERR_VALUE, "a mesh collider needs a 3D system (this one is 2D)");
    if (!num_faces || num_faces > (size_t)INT32_MAX / 2)
        return ss_fail(sys, SS_ERR_VALUE, "a mesh collider needs at least one face, got %zu",
                       num_faces);
    double extent = 0.0;
    for (size_t q = 0; q < 3 * num_vertices; q++) {
        if (!isfinite(vertices[q]))
            return ss_fail(sys, SS_ERR_VALUE, "a mesh collider's vertices must be finite");
        extent = fmax(extent, fabs(vertices[q]));
    }
    for (size_t q = 0; q < 3 * num_faces; q++)
        if (faces[q] < 0 || (size_t)faces[q] >= num_vertices)
            return ss_fail(sys, SS_ERR_INDEX, "face %zu names vertex %d; there are %zu vertices",
                           q / 3, faces[q], num_vertices);
    ss_mesh *m = allocate(num_vertices, num_faces);
    double *centroids = ss_malloc(3 * num_faces * sizeof(double));
    keyed *scratch = ss_malloc(num_faces * sizeof(keyed));
    if (!m || !centroids || !scratch) {
        ss_mesh_free(m);
        ss_free(centroids);
        ss_free(scratch);
        return ss_fail(sys, SS_ERR_NOMEM, "out of memory adding a mesh collider");
    }
    memcpy(m->vertices, vertices, 3 * num_vertices * sizeof(double));
    memcpy(m->faces, faces, 3 * num_faces * sizeof(int32_t));
    for (size_t f = 0; f < num_faces; f++) {
        const double *a = vertex(m, (int32_t)f, 0), *b = vertex(m, (int32_t)f, 1);
        const double *c = vertex(m, (int32_t)f, 2);
        double ab[3], ac[3], bc[3], *n = m->normals + 3 * f;
        sub3(b, a, ab), sub3(c, a, ac), sub3(c, b, bc), cross3(ab, ac, n);
        const double longest = fmax(dot3(ab, ab), fmax(dot3(ac, ac), dot3(bc, bc)));
        const double area2 = sqrt(dot3(n, n)); /* twice the area */
        /* Relative to its longest edge, so that a sliver whose normal is rounding noise
         * is refused and any triangle of a real mesh, at any scale, is not. */
        if (!(area2 > 1e-12 * longest)) {
            ss_mesh_free(m);
            ss_free(centroids);
            ss_free(scratch);
            return ss_fail(sys, SS_ERR_VALUE,
                           "face %zu of the mesh collider is degenerate (its corners are "
                           "collinear or repeated)",
                           f);
        }
        for (int k = 0; k < 3; k++) {
            n[k] /= area2;
            centroids[3 * f + (size_t)k] = (a[k] + b[k] + c[k]) / 3.0;
        }
        m->order[f] = (int32_t)f;
    }
    m->num_nodes = 1;
    build_node(m, 0, 0, (int32_t)num_faces, centroids, scratch);
    double diagonal = 0.0;
    for (int k = 0; k < 3; k++)
        diagonal +=
            (m->nodes[0].hi[k] - m->nodes[0].lo[k]) * (m->nodes[0].hi[k] - m->nodes[0].lo[k]);
    /* Far above the rounding of any coordinate (1e-16 of the largest), far below any
     * distance that matters. */
    m->skin = 1e-9 * fmax(sqrt(diagonal), extent);
    ss_free(centroids);
    ss_free(scratch);
    *out = m;
    return SS_OK;
}

ss_mesh *ss_mesh_copy(const ss_mesh *mesh) {
    ss_mesh *m = allocate(mesh->num_vertices, mesh->num_faces);
    if (!m)
        return NULL;
    memcpy(m->vertices, mesh->vertices, 3 * mesh->num_vertices * sizeof(double));
    memcpy(m->faces, mesh->faces, 3 * mesh->num_faces * sizeof(int32_t));
    memcpy(m->normals, mesh->normals, 3 * mesh->num_faces * sizeof(double));
    memcpy(m->nodes, mesh->nodes, mesh->num_nodes * sizeof(ss_mesh_node));
    memcpy(m->order, mesh->order, mesh->num_faces * sizeof(int32_t));
    m->num_nodes = mesh->num_nodes;
    m->skin = mesh->skin;
    return m;
}

size_t ss_mesh_nbytes(const ss_mesh *mesh) {
    if (!mesh)
        return 0;
    return sizeof *mesh + 3 * mesh->num_vertices * sizeof(double) +
           mesh->num_faces * (3 * sizeof(int32_t) + 3 * sizeof(double) + sizeof(int32_t) +
                              2 * sizeof(ss_mesh_node));
}

/* ---- Queries ------------------------------------------------------------- */

int ss_mesh_find(const ss_mesh *m, double thickness, const double *a, const double *p,
                 ss_mesh_contact *found) {
    /* (Comparisons, not fmin/fmax: those are calls into libm here, for every node.) */
    const double h = thickness > m->skin ? thickness : m->skin;
    double lo[3], hi[3];
    for (int k = 0; k < 3; k++) {
        lo[k] = (a[k] < p[k] ? a[k] : p[k]) - h;
        hi[k] = (a[k] < p[k] ? p[k] : a[k]) + h;
    }
    const ss_mesh_node *root = m->nodes;
    if (root->lo[0] > hi[0] || root->hi[0] < lo[0] || root->lo[1] > hi[1] || root->hi[1] < lo[1] ||
        root->lo[2] > hi[2] || root->hi[2] < lo[2])
        return 0; /* far from the mesh: most nodes, most of the time */
    int32_t stack[STACK_DEPTH];
    int top = 0;
    stack[top++] = 0;
    double first = INFINITY, nearest = h * h;
    int32_t crossed = -1, near = -1;
    int crossed_side = 1, near_side = 1;
    while (top) {
        const ss_mesh_node *node = &m->nodes[stack[--top]];
        if (node->lo[0] > hi[0] || node->hi[0] < lo[0] || node->lo[1] > hi[1] ||
            node->hi[1] < lo[1] || node->lo[2] > hi[2] || node->hi[2] < lo[2])
            continue;
        if (!node->count) {
            stack[top++] = node->first + 1;
            stack[top++] = node->first;
            continue;
        }
        for (int32_t q = node->first; q < node->first + node->count; q++) {
            const int32_t f = m->order[q];
            const double *n = m->normals + 3 * (size_t)f, *v0 = vertex(m, f, 0);
            double ra[3], rp[3];
            sub3(a, v0, ra), sub3(p, v0, rp);
            const double da = dot3(ra, n), dp = dot3(rp, n);
            const int side = da >= 0.0 ? 1 : -1;
            if (side * dp < 0.0) { /* the segment crosses the plane: in the triangle? */
                const double t = da / (da - dp);
                double x[3];
                for (int k = 0; k < 3; k++)
                    x[k] = a[k] + t * (p[k] - a[k]);
                if (in_triangle(m, f, x) && (t < first || (t == first && f < crossed))) {
                    first = t, crossed = f, crossed_side = side;
                }
            }
            if (dp * dp > nearest) /* the plane is farther than the nearest so far */
                continue;
            double c[3], w[3];
            closest_point(m, f, p, c);
            sub3(p, c, w);
            const double d2 = dot3(w, w);
            if (d2 < nearest || (d2 == nearest && near >= 0 && f < near)) {
                const double wn = dot3(w, n);
                nearest = d2, near = f;
                near_side = wn > 0.0 ? 1 : wn < 0.0 ? -1 : side;
            }
        }
    }
    if (crossed >= 0) {
        found->face = crossed, found->side = crossed_side;
        return 1;
    }
    if (near >= 0) {
        found->face = near, found->side = near_side;
        return 1;
    }
    return 0;
}

int ss_mesh_locate(const ss_mesh *m, double thickness, const ss_mesh_contact *contact,
                   const double *p, double *depth, double *surface, double *normal) {
    const double h = fmax(thickness, m->skin);
    const double *n = m->normals + 3 * (size_t)contact->face;
    double q[3], w[3];
    const int in_face = closest_point(m, contact->face, p, q);
    sub3(p, q, w);
    const double length = sqrt(dot3(w, w)), along = contact->side * dot3(w, n);
    if (in_face) { /* the normal exactly: p - q is only rounding off it, and may be tiny */
        for (int k = 0; k < 3; k++)
            normal[k] = contact->side * n[k];
        *depth = h - along;
    } else if (along > 0.0 && length > 0.0) { /* on its side, off an edge or corner */
        for (int k = 0; k < 3; k++)
            normal[k] = w[k] / length;
        *depth = h - length;
    } else { /* on the triangle, or through it */
        for (int k = 0; k < 3; k++)
            normal[k] = contact->side * n[k];
        *depth = h + length;
    }
    for (int k = 0; k < 3; k++)
        surface[k] = q[k] + h * normal[k];
    return *depth > 0.0;
}
