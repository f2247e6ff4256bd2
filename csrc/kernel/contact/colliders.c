/* colliders.c - planes, spheres (circles in 2D), axis-aligned boxes, capsules (stadiums
 * in 2D) and triangle meshes (3D; mesh.c finds where a node is against one) that nodes
 * cannot enter, with restitution and Coulomb friction, applied after every substep of
 * every method but XPBD (which projects them as constraints in its passes:
 * collider_constraints.c).
 *
 * A free node found inside a collider after a substep's integration (at x1, depth d,
 * unit normal n into free space) is put back on the surface. If it moves inwards,
 * v_n = v.n < 0, it has hit the surface:
 *
 * - Impact at the surface. Putting the node back costs the potential energy
 *   dU = U(surface) - U(x1) (gravity -m g.dx; its springs' 1/2 k (l - L)^2, exactly; the
 *   gas, to first order -F_gas.dx; every other node where it is) less the work W that its
 *   dampers and drag do over the move. Energy conservation gives the normal speed it
 *   meets the surface with, 1/2 m v_s^2 = 1/2 m v_n^2 - (dU - W) (v_s = 0 if that is
 *   negative), and the impact law acts on it: the node leaves with e v_s along n, and
 *   the impact dissipates 1/2 m (1 - e^2) v_s^2. Its normal velocity changes by
 *   dv_n = e v_s - v_n > 0 (about (1 + e)|v_n| for a fast impact).
 * - Coulomb friction: |v_t| drops by mu dv_n, to 0 at most (sticking), never reversing.
 *   Friction acts from where the node touched the surface, a fraction f of the way from
 *   its place x0 at the start of the substep to x1 (0 if it started on or inside), and
 *   the node ends on the surface where it would be had it slid from there with its
 *   braked velocity: a node that sticks stays exactly where it touched, so static
 *   friction does not creep. Friction dissipates the kinetic energy it takes, less the
 *   potential energy (and the dampers' work) of that move, never less than 0.
 *
 * The books. The integration counted the dampers' and drag's dissipation along the way
 * into the surface, which the contact undoes: W goes back to their account (at most
 * what they were counted in the substep), so `dissipated` never decreases, and a
 * contact with e = 1 and mu = 0 of a node without dampers adds exactly 0. A contact
 * changes total + dissipated by exactly 0 except for a node with less normal kinetic
 * energy than putting it back costs (v_s = 0: a node resting on, or pressed into, the
 * surface): that difference, of order m a^2 dt^2 per substep, is the time step's error,
 * like the integrator's own (for symplectic Euler it cancels it: a node lying on a floor
 * keeps its energy exactly). A node found inside but moving out (placed there, or
 * reached by a moving collider) is only put back on the surface: the work of a moving
 * collider is not counted.
 *
 * dU and W matter to the motion only when the node bounces (e > 0); with e = 0 they are
 * evaluated only for the books (track_energy). */
#include "springsim.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* Whether v (dim components) is a unit vector to within rounding: |v|^2 within
 * UNIT_TOLERANCE of 1. normalise() always returns such a vector (|v|^2 - 1 within
 * 3 DBL_EPSILON), so a stored normal passed back in (by load, unpickling or
 * `p.normal = p.normal`) is kept bit for bit instead of being rounded again. */
#define UNIT_TOLERANCE (8 * DBL_EPSILON)
static int is_unit(const double *v, int dim) {
    double norm2 = 0.0;
    for (int k = 0; k < dim; k++)
        norm2 += v[k] * v[k];
    return fabs(norm2 - 1.0) <= UNIT_TOLERANCE;
}

/* Divide v by its length, scaling by its largest |component| first: no overflow,
 * no underflow for any finite nonzero v. */
static void normalise(double *v, int dim, double largest) {
    double norm2 = 0.0;
    for (int k = 0; k < dim; k++) {
        v[k] /= largest;
        norm2 += v[k] * v[k];
    }
    const double inv = 1.0 / sqrt(norm2);
    for (int k = 0; k < dim; k++)
        v[k] *= inv;
}

/* Check a collider's values and bring it to canonical form (a unit normal, unused
 * components zero; a normal already unit to within rounding is kept as it is).
 * Writes nothing on error. */
static ss_status check_collider(ss_system *sys, ss_collider *c) {
    const int dim = sys->dim;
    if (c->kind < SS_PLANE || c->kind > SS_MESH)
        return ss_fail(sys, SS_ERR_VALUE, "unknown collider kind %d", c->kind);
    if (c->kind == SS_MESH && !c->mesh)
        return ss_fail(sys, SS_ERR_VALUE, "a mesh collider needs its mesh");
    double largest = 0.0; /* scale by the largest component: no overflow, no underflow */
    for (int k = 0; k < 3; k++) {
        if (k >= dim) {
            c->normal[k] = c->center[k] = c->end[k] = 0.0;
            continue;
        }
        if (!isfinite(c->normal[k]) || !isfinite(c->center[k]) || !isfinite(c->end[k]))
            return ss_fail(sys, SS_ERR_VALUE, "a collider's vectors must be finite");
        if (fabs(c->normal[k]) > largest)
            largest = fabs(c->normal[k]);
        if (c->kind == SS_BOX && !(c->end[k] > 0.0))
            return ss_fail(sys, SS_ERR_VALUE, "a box's half-extents must be > 0 m, got %g",
                           c->end[k]);
    }
    if (c->kind == SS_PLANE) {
        if (!(largest > 0.0))
            return ss_fail(sys, SS_ERR_VALUE, "a plane's normal must be a nonzero vector");
        if (!isfinite(c->offset))
            return ss_fail(sys, SS_ERR_VALUE, "a plane's offset must be finite, got %g", c->offset);
        if (!is_unit(c->normal, dim))
            normalise(c->normal, dim, largest);
    } else if ((c->kind == SS_SPHERE || c->kind == SS_CAPSULE) &&
               (!(c->radius > 0.0) || !isfinite(c->radius))) {
        return ss_fail(sys, SS_ERR_VALUE, "a %s's radius must be finite and > 0 m, got %g",
                       c->kind == SS_SPHERE ? "sphere" : "capsule", c->radius);
    } else if (c->kind == SS_MESH && (!(c->thickness >= 0.0) || !isfinite(c->thickness))) {
        return ss_fail(sys, SS_ERR_VALUE, "a mesh's thickness must be finite and >= 0 m, got %g",
                       c->thickness);
    }
    if (!(c->restitution >= 0.0 && c->restitution <= 1.0))
        return ss_fail(sys, SS_ERR_VALUE, "restitution must be in [0, 1], got %g", c->restitution);
    if (!(c->friction >= 0.0) || !isfinite(c->friction))
        return ss_fail(sys, SS_ERR_VALUE, "friction must be finite and >= 0, got %g", c->friction);
    return SS_OK;
}

ss_collider *ss_system_find_collider(ss_system *sys, long id) {
    for (size_t k = 0; k < sys->num_colliders; k++)
        if (sys->colliders[k].id == id)
            return &sys->colliders[k];
    return NULL;
}

ss_status ss_system_add_collider(ss_system *sys, ss_collider c, long *id) {
    ss_status st = check_collider(sys, &c);
    if (st)
        return st;
    if (sys->num_colliders == sys->collider_capacity) {
        size_t capacity = sys->collider_capacity ? 2 * sys->collider_capacity : 4;
        ss_collider *grown = ss_malloc(capacity * sizeof *grown);
        if (!grown)
            return ss_fail(sys, SS_ERR_NOMEM, "out of memory adding a collider");
        if (sys->num_colliders)
            memcpy(grown, sys->colliders, sys->num_colliders * sizeof *grown);
        ss_free(sys->colliders);
        sys->colliders = grown;
        sys->collider_capacity = capacity;
    }
    c.id = ++sys->last_collider_id;
    sys->colliders[sys->num_colliders++] = c;
    *id = c.id;
    return SS_OK;
}

ss_status ss_system_set_collider(ss_system *sys, ss_collider c) {
    ss_collider *slot = ss_system_find_collider(sys, c.id);
    if (!slot)
        return ss_fail(sys, SS_ERR_VALUE, "this collider was removed from the system");
    if (c.kind != slot->kind)
        return ss_fail(sys, SS_ERR_VALUE, "a collider cannot change its kind");
    ss_status st = check_collider(sys, &c);
    if (st)
        return st;
    if (slot->mesh != c.mesh) /* the slot owns its mesh; c brings a new one (or the same) */
        ss_mesh_free(slot->mesh);
    *slot = c;
    return SS_OK;
}

ss_status ss_system_remove_collider(ss_system *sys, long id) {
    ss_collider *slot = ss_system_find_collider(sys, id);
    if (!slot)
        return ss_fail(sys, SS_ERR_VALUE, "this collider is not (or no longer) in the system");
    size_t k = (size_t)(slot - sys->colliders);
    ss_mesh_free(slot->mesh);
    memmove(slot, slot + 1, (sys->num_colliders - k - 1) * sizeof *slot);
    sys->num_colliders--;
    return SS_OK;
}

/* ---- What contacts keep ------------------------------------------------ */

/* Each node's springs in index order: a counting sort of the spring ends by node. */
static ss_status build_adjacency(ss_system *sys) {
    const size_t n = sys->num_nodes, m = sys->num_springs;
    const int32_t *pairs = SS_INT32S(sys, SS_SPRINGS);
    size_t *first = ss_malloc((n + 1) * sizeof *first);
    int32_t *springs = ss_malloc(2 * m * sizeof *springs);
    if (!first || !springs) {
        ss_free(first);
        ss_free(springs);
        return ss_fail(sys, SS_ERR_NOMEM, "out of memory preparing the contacts");
    }
    memset(first, 0, (n + 1) * sizeof *first);
    for (size_t q = 0; q < 2 * m; q++)
        first[pairs[q] + 1]++;
    for (size_t i = 0; i < n; i++)
        first[i + 1] += first[i];
    for (size_t s = 0; s < m; s++) /* first[i] runs ahead while filling, then steps back */
        for (int end = 0; end < 2; end++)
            springs[first[pairs[2 * s + end]]++] = (int32_t)s;
    for (size_t i = n; i > 0; i--)
        first[i] = first[i - 1];
    first[0] = 0;
    sys->scratch.collider_contacts.first = first;
    sys->scratch.collider_contacts.springs = springs;
    return SS_OK;
}

ss_status ss_colliders_prepare(ss_system *sys) {
    ss_collider_contacts *c = &sys->scratch.collider_contacts;
    c->sticky = 0;
    if (!sys->num_colliders)
        return SS_OK;
    if (c->nodes != sys->num_nodes)
        ss_colliders_forget(sys); /* a safety net: topology edits forget it already */
    c->nodes = sys->num_nodes;
    int meshes = 0;
    for (size_t k = 0; k < sys->num_colliders; k++) {
        meshes |= sys->colliders[k].kind == SS_MESH;
        if (sys->colliders[k].friction > 0.0 || meshes) /* a mesh needs the start (mesh.c) */
            c->sticky = 1;
    }
    const size_t bytes = sys->num_nodes * (size_t)sys->dim * sizeof(double);
    ss_status st = c->first ? SS_OK : build_adjacency(sys);
    if (!st && c->sticky && !c->start && !(c->start = ss_malloc(bytes)))
        st = ss_fail(sys, SS_ERR_NOMEM, "out of memory preparing the contacts");
    if (!st && sys->num_bodies && !c->gas && !(c->gas = ss_malloc(bytes)))
        st = ss_fail(sys, SS_ERR_NOMEM, "out of memory preparing the contacts");
    if (!st && meshes && !c->hits && !(c->hits = ss_malloc(2 * c->nodes * sizeof(int32_t) + 1)))
        st = ss_fail(sys, SS_ERR_NOMEM, "out of memory preparing the contacts");
    return st;
}

void ss_colliders_begin_substep(ss_system *sys) {
    if (sys->scratch.collider_contacts.sticky && sys->num_colliders)
        memcpy(sys->scratch.collider_contacts.start, SS_DOUBLES(sys, SS_POSITIONS),
               sys->num_nodes * (size_t)sys->dim * sizeof(double));
}

/* ---- Contact ------------------------------------------------------------ */

/* Whether p is inside the collider (plane: offset - n.p > 0; sphere: |p - c|^2 < r^2;
 * capsule: the same about its axis; box: within every half-extent; mesh: inside the
 * layer about the triangle of `hint`); if so, or if `always`, also how far inside it is
 * (m, negative outside), the nearest point of the surface and the unit normal there
 * (into free space; from a sphere's very centre, +y). */
int ss_collider_locate(const ss_collider *col, const ss_mesh_contact *hint, int dim,
                       const double *p, int always, double *depth, double *surface,
                       double *normal) {
    int inside;
    if (col->kind == SS_MESH)
        return ss_mesh_locate(col->mesh, col->thickness, hint, p, depth, surface, normal);
    if (col->kind == SS_BOX)
        return ss_box_locate(col, dim, p, depth, surface, normal);
    if (col->kind == SS_PLANE) {
        double d = col->offset;
        for (int k = 0; k < dim; k++)
            d -= col->normal[k] * p[k];
        inside = d > 0.0;
        if (inside || always)
            for (int k = 0; k < dim; k++) {
                surface[k] = p[k] + d * col->normal[k];
                normal[k] = col->normal[k];
            }
        *depth = d;
        return inside;
    }
    double axis[3];
    if (col->kind == SS_CAPSULE)
        ss_nearest_on_segment(col->center, col->end, dim, p, axis);
    else
        memcpy(axis, col->center, sizeof axis);
    double r2 = 0.0;
    for (int k = 0; k < dim; k++) {
        normal[k] = p[k] - axis[k];
        r2 += normal[k] * normal[k];
    }
    inside = r2 < col->radius * col->radius;
    if (!inside && !always)
        return 0;
    const double r = sqrt(r2);
    if (r > 0.0)
        for (int k = 0; k < dim; k++)
            normal[k] /= r;
    else if (col->kind == SS_CAPSULE)
        ss_capsule_off_axis(col, dim, normal);
    else
        normal[1] = 1.0, normal[0] = normal[2] = 0.0;
    for (int k = 0; k < dim; k++)
        surface[k] = axis[k] + col->radius * normal[k];
    *depth = col->radius - r;
    return inside;
}

/* ss_collider_locate()'s test alone, for the loop over every node (planes and spheres; the other
 * kinds locate at once). */
static inline int touches(const ss_collider *col, int dim, const double *p) {
    double d = 0.0;
    if (col->kind == SS_PLANE) {
        d = col->offset;
        for (int k = 0; k < dim; k++)
            d -= col->normal[k] * p[k];
        return d > 0.0;
    }
    if (col->kind == SS_BOX) {
        for (int k = 0; k < dim; k++)
            if (!(fabs(p[k] - col->center[k]) < col->end[k]))
                return 0;
        return 1;
    }
    if (col->kind != SS_SPHERE) {
        double depth, surface[3], normal[3];
        return ss_collider_locate(col, NULL, dim, p, 0, &depth, surface, normal);
    }
    for (int k = 0; k < dim; k++)
        d += (p[k] - col->center[k]) * (p[k] - col->center[k]);
    return d < col->radius * col->radius;
}

/* J: the change of potential energy when free node i moves from a to b, every other
 * node staying where it is: gravity -m g.(b - a), each of its springs
 * 1/2 k (l_b - L)^2 - 1/2 k (l_a - L)^2 = 1/2 k (l_b - l_a)(l_b + l_a - 2 L) exactly
 * (a rigid rod stores none), and the gas -F_gas.(b - a) to first order. */
static double potential_change(const ss_system *sys, const double *gas, size_t i, const double *a,
                               const double *b) {
    const size_t dim = (size_t)sys->dim;
    const double *x = SS_DOUBLES(sys, SS_POSITIONS), *m = SS_DOUBLES(sys, SS_MASSES);
    const double *rest = SS_DOUBLES(sys, SS_REST_LENGTHS);
    const double *stiffness = SS_DOUBLES(sys, SS_STIFFNESS);
    const int32_t *pairs = SS_INT32S(sys, SS_SPRINGS);
    double change = 0.0;
    for (size_t k = 0; k < dim; k++) {
        const double moved = b[k] - a[k];
        change -= m[i] * sys->gravity[k] * moved;
        if (gas)
            change -= gas[i * dim + k] * moved;
    }
    for (size_t q = sys->scratch.collider_contacts.first[i];
         q < sys->scratch.collider_contacts.first[i + 1]; q++) {
        const size_t s = (size_t)sys->scratch.collider_contacts.springs[q];
        if (stiffness[s] == 0.0 || isinf(stiffness[s]))
            continue;
        const size_t j =
            (size_t)pairs[2 * s] == i ? (size_t)pairs[2 * s + 1] : (size_t)pairs[2 * s];
        double la = 0.0, lb = 0.0;
        for (size_t k = 0; k < dim; k++) {
            la += (a[k] - x[j * dim + k]) * (a[k] - x[j * dim + k]);
            lb += (b[k] - x[j * dim + k]) * (b[k] - x[j * dim + k]);
        }
        la = sqrt(la), lb = sqrt(lb);
        change += 0.5 * stiffness[s] * (lb - la) * (lb + la - 2.0 * rest[s]);
    }
    return change;
}

/* N: the force of free node i's spring dampers and of drag on it at position p with the
 * current velocities, c ((v_j - v_i).u) u summed over its springs (u from p towards the
 * other end) and -drag (v_i - wind). */
static void resisting_force(const ss_system *sys, size_t i, const double *p, double *out) {
    const size_t dim = (size_t)sys->dim;
    const double *x = SS_DOUBLES(sys, SS_POSITIONS), *v = SS_DOUBLES(sys, SS_VELOCITIES);
    const double *damping = SS_DOUBLES(sys, SS_DAMPING);
    const int32_t *pairs = SS_INT32S(sys, SS_SPRINGS);
    for (size_t k = 0; k < dim; k++)
        out[k] = -sys->drag * (v[i * dim + k] - sys->wind[k]);
    for (size_t q = sys->scratch.collider_contacts.first[i];
         q < sys->scratch.collider_contacts.first[i + 1]; q++) {
        const size_t s = (size_t)sys->scratch.collider_contacts.springs[q];
        if (damping[s] == 0.0)
            continue;
        const size_t j =
            (size_t)pairs[2 * s] == i ? (size_t)pairs[2 * s + 1] : (size_t)pairs[2 * s];
        double u[3], length = 0.0, closing = 0.0;
        for (size_t k = 0; k < dim; k++) {
            u[k] = x[j * dim + k] - p[k];
            length += u[k] * u[k];
        }
        length = sqrt(length);
        if (!(length >= SS_MIN_SPRING_LENGTH))
            continue;
        for (size_t k = 0; k < dim; k++)
            closing += (v[j * dim + k] - v[i * dim + k]) * u[k] / length;
        for (size_t k = 0; k < dim; k++)
            out[k] += damping[s] * closing * u[k] / length;
    }
}

/* The response of free node i, which the integrator left at `reached`, `depth` inside
 * the collider, moving inwards (v.n = vn < 0), and which is now on the surface (normal
 * n). Sets its velocity (and, if it sticks, its position); returns the energy the
 * contact dissipates, J (see the file comment). */
static double respond(ss_system *sys, const ss_collider *col, const ss_mesh_contact *hint, size_t i,
                      const double *reached, double depth, const double *n, double vn,
                      const double *gas) {
    const int dim = sys->dim;
    const double m = SS_DOUBLES(sys, SS_MASSES)[i];
    double *x = SS_DOUBLES(sys, SS_POSITIONS) + i * (size_t)dim;
    double *v = SS_DOUBLES(sys, SS_VELOCITIES) + i * (size_t)dim;
    const double e = col->restitution, mu = col->friction;
    /* The normal speed at the surface, 1/2 m vs^2 = 1/2 m vn^2 - cost, the cost of putting
     * the node back being dU - W (the dampers' work W returns to their account). */
    const int weigh = e > 0.0 || sys->track_energy;
    double resist[3] = {0.0, 0.0, 0.0}, work = 0.0;
    if (weigh)
        resisting_force(sys, i, reached, resist);
    for (int k = 0; k < dim; k++)
        work += resist[k] * (x[k] - reached[k]);
    const double cost = weigh ? potential_change(sys, gas, i, reached, x) - work : 0.0;
    const double vs2 = vn * vn - 2.0 * cost / m;
    const double vs = cost == 0.0 ? -vn : vs2 > 0.0 ? sqrt(vs2) : 0.0;
    const double out = e * vs, dvn = out - vn;
    double taken = 0.5 * m * (1.0 - e * e) * vs * vs - work;
    double vt[3] = {0.0, 0.0, 0.0}, speed2 = 0.0;
    for (int k = 0; k < dim; k++) {
        vt[k] = v[k] - vn * n[k];
        speed2 += vt[k] * vt[k];
    }
    /* Coulomb: |v_t| drops by mu dv_n, to 0 at most (then the node sticks). */
    const double speed = sqrt(speed2), cap = mu * dvn;
    const double keep = speed > cap ? 1.0 - cap / speed : 0.0;
    double normal[3] = {n[0], n[1], n[2]};
    double lost = 0.5 * m * speed2 * (1.0 - keep * keep);
    if (mu > 0.0) {
        /* Friction acted from where the node touched the surface, a fraction
         * f = h0 / (h0 + depth) of the way from its place x0 at the start of the substep
         * to `reached` (h0: how far outside it started; f = 0 if on or inside): it slid
         * from there keep times as far as it would have without friction (as its velocity
         * was braked), and ends on the surface. Sticking (keep = 0): where it touched. */
        const double *x0 = sys->scratch.collider_contacts.start + i * (size_t)dim;
        double d0, touch[3], anchor[3];
        const int started_inside = ss_collider_locate(col, hint, dim, x0, 1, &d0, anchor, normal);
        const double h0 = started_inside || !(d0 < 0.0) ? 0.0 : -d0;
        const double f = h0 > 0.0 ? h0 / (h0 + depth) : 0.0;
        for (int k = 0; k < dim; k++) {
            touch[k] = x0[k] + f * (reached[k] - x0[k]);
            touch[k] += keep * (reached[k] - touch[k]);
        }
        ss_collider_locate(col, hint, dim, touch, 1, &d0, anchor, normal);
        if (sys->track_energy) { /* moving it there costs that, as above */
            double slid = 0.0;
            for (int k = 0; k < dim; k++)
                slid += resist[k] * (anchor[k] - x[k]);
            lost -= potential_change(sys, gas, i, x, anchor) - slid;
            taken -= slid;
        }
        for (int k = 0; k < dim; k++)
            x[k] = anchor[k];
    }
    taken += lost > 0.0 ? lost : 0.0;
    for (int k = 0; k < dim; k++)
        v[k] = out * normal[k] + keep * vt[k];
    return taken;
}

/* Put free node i, found inside the collider, back on its surface, and respond if it was
 * moving in; returns what the contact dissipates (J). *gas: the gas forces, evaluated at
 * the first impact that needs them (as the integration left the nodes). */
static double put_back(ss_system *sys, const ss_collider *col, const ss_mesh_contact *hint,
                       size_t i, double **gas) {
    const int dim = sys->dim;
    double *x = SS_DOUBLES(sys, SS_POSITIONS);
    double *xi = x + i * (size_t)dim, *vi = SS_DOUBLES(sys, SS_VELOCITIES) + i * (size_t)dim;
    double depth, surface[3], normal[3] = {0.0, 0.0, 0.0}, reached[3];
    ss_collider_locate(col, hint, dim, xi, 1, &depth, surface, normal);
    double vn = 0.0;
    for (int k = 0; k < dim; k++)
        vn += vi[k] * normal[k];
    if (vn < 0.0 && !*gas && sys->num_bodies && (col->restitution > 0.0 || sys->track_energy)) {
        *gas = sys->scratch.collider_contacts.gas;
        memset(*gas, 0, sys->num_nodes * (size_t)dim * sizeof(double));
        ss_pressure_add_forces(sys, x, *gas, (size_t)dim);
    }
    for (int k = 0; k < dim; k++) {
        reached[k] = xi[k];
        xi[k] = surface[k];
    }
    if (vn < 0.0) /* moving in: an impact; moving out: only put back */
        return respond(sys, col, hint, i, reached, depth, normal, vn, *gas);
    return 0.0;
}

/* What ss_mesh_find says of every free node against mesh collider col, into
 * contact.hits: a pure function of the node's start and end and of the mesh, so the
 * threads (the system's count, as for the springs) give the same answer as one. */
static void detect(ss_system *sys, const ss_collider *col) {
    const double *x = SS_DOUBLES(sys, SS_POSITIONS), *x0 = sys->scratch.collider_contacts.start;
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    int32_t *hits = sys->scratch.collider_contacts.hits;
    const long n = (long)sys->num_nodes;
    const int threads = ss_threads_for(sys);
    (void)threads; /* without OpenMP */
#ifdef _OPENMP
#pragma omp parallel num_threads(threads) if (threads > 1)
#endif
    {
        const ss_fpstate fp = ss_fp_enter(); /* the same rounding on every thread */
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (long i = 0; i < n; i++) {
            ss_mesh_contact hit = {-1, 1};
            if (!pinned[i])
                ss_mesh_find(col->mesh, col->thickness, x0 + 3 * i, x + 3 * i, &hit);
            hits[2 * i] = pinned[i] ? -1 : hit.face;
            hits[2 * i + 1] = hit.side;
        }
        ss_fp_leave(fp);
    }
}

/* A mesh: a node put back on one triangle's layer may be inside a neighbour's (in a
 * concave corner), so it is looked at again, up to MESH_PASSES times; one still inside
 * then goes back to where it started the substep, where it was outside (and keeps the
 * velocity the last contact gave it; that move's energy is not counted). The first
 * look is detect()'s. */
#define MESH_PASSES 4
static double collide_mesh(ss_system *sys, const ss_collider *col, size_t i, double **gas) {
    const double *x0 = sys->scratch.collider_contacts.start + 3 * i;
    double *xi = SS_DOUBLES(sys, SS_POSITIONS) + 3 * i;
    /* Put back at the layer's surface, a node is found again within rounding of it:
     * after the first pass only a depth beyond this counts. */
    const double slack = 1e-6 * fmax(col->thickness, col->mesh->skin);
    double taken = 0.0;
    for (int pass = 0; pass <= MESH_PASSES; pass++) {
        ss_mesh_contact hit = {sys->scratch.collider_contacts.hits[2 * i],
                               (int)sys->scratch.collider_contacts.hits[2 * i + 1]};
        double depth, surface[3], normal[3];
        if (pass ? !ss_mesh_find(col->mesh, col->thickness, x0, xi, &hit) : hit.face < 0)
            break;
        ss_collider_locate(col, &hit, 3, xi, 1, &depth, surface, normal);
        if (pass > 0 && depth <= slack)
            break;
        if (pass == MESH_PASSES) {
            memcpy(xi, x0, 3 * sizeof(double));
            break;
        }
        taken += put_back(sys, col, &hit, i, gas);
    }
    return taken;
}

void ss_colliders_apply(ss_system *sys, double damped, int meshes_only) {
    const size_t n = sys->num_nodes;
    const int dim = sys->dim;
    double *x = SS_DOUBLES(sys, SS_POSITIONS);
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    double *gas = NULL; /* evaluated at the first impact, if there is gas */
    double taken = 0.0;
    for (size_t c = 0; c < sys->num_colliders; c++) {
        const ss_collider *col = &sys->colliders[c];
        if (meshes_only && col->kind != SS_MESH)
            continue;
        if (col->kind == SS_MESH)
            detect(sys, col);
        for (size_t i = 0; i < n; i++) {
            if (pinned[i])
                continue;
            if (col->kind == SS_MESH) {
                if (sys->scratch.collider_contacts.hits[2 * i] >=
                    0) /* detect() found it in contact */
                    taken += collide_mesh(sys, col, i, &gas);
            } else if (touches(col, dim, x + i * (size_t)dim))
                taken += put_back(sys, col, NULL, i, &gas);
        }
    }
    /* The dampers get back at most what they were counted in this substep. */
    if (sys->track_energy)
        sys->state.dissipated += damped > 0.0 ? fmax(taken, -damped) : fmax(taken, 0.0);
}

/* ---- What the contact lists keep -------------------------------------------- */

/* colliders.c - what the contacts keep between substeps (ss_collider_contacts, built by
 * colliders.c): freeing it and counting its bytes. Apart from colliders.c so that the
 * topology's bookkeeping (parallel.c), which forgets it, does not call into the contact
 * pass, which runs on parallel.c's threads. */

void ss_colliders_forget(ss_system *sys) {
    ss_free(sys->scratch.collider_contacts.first);
    ss_free(sys->scratch.collider_contacts.springs);
    ss_free(sys->scratch.collider_contacts.start);
    ss_free(sys->scratch.collider_contacts.gas);
    ss_free(sys->scratch.collider_contacts.hits);
    ss_free(sys->scratch.collider_contacts.held);
    ss_free(sys->scratch.collider_contacts.frames);
    memset(&sys->scratch.collider_contacts, 0, sizeof sys->scratch.collider_contacts);
}

size_t ss_colliders_nbytes(const ss_system *sys) {
    const ss_collider_contacts *c = &sys->scratch.collider_contacts;
    const size_t rows = c->nodes * (size_t)sys->dim * sizeof(double);
    return (c->first ? (c->nodes + 1) * sizeof(size_t) + 2 * sys->num_springs * sizeof(int32_t)
                     : 0) +
           (c->start ? rows : 0) + (c->gas ? rows : 0) +
           (c->hits ? 2 * c->nodes * sizeof(int32_t) : 0) +
           c->held_capacity * (4 * sizeof(int32_t) + 3 * sizeof(double));
}
