/* collider_constraints.c - XPBD's node-collider contacts: the colliders (planes,
 * spheres, boxes, capsules, meshes; colliders.c says where a node is against each) as
 * inequality constraints projected in every pass of the solve (xpbd.c), after the
 * springs, the node-node contacts and self-collision, with positional Coulomb friction
 * and restitution in a velocity pass after the solve: the law of the node-node
 * constraints (contact.c, "Contact as constraints") with a collider of infinite mass.
 * The other methods take colliders.c's rule after each substep; XPBD does not.
 *
 * As that rule does, a collider holds the node's centre (its contact radius is not
 * counted). The contacts of a substep: for each collider in order, each free node in
 * index order within `margin` of it at the prediction (a mesh: ss_mesh_find from the
 * node's start to its prediction with the thickness grown by the margin). A node that
 * started the substep inside a plane, sphere, box or capsule (placed there, or reached by
 * a collider moved between steps) is first moved onto its surface, start and prediction
 * alike, keeping its velocity (colliders.c's "only put back"). For contact (node i, w =
 * 1/m, record x, start s), at x: depth d (m, > 0 inside), unit normal n into free space,
 *     if d <= 0 and lambda = 0: nothing (apart, and not pushed this substep);
 *     dlambda = d / w, then dlambda = max(dlambda, -lambda) (lambda >= 0: it pushes,
 *     never pulls),  lambda += dlambda,  x += w (dlambda n);                      [kg m]
 * friction: the slip of the substep across n, p = (x - s) - ((x - s).n) n, is taken back by
 *     dmu = min(|p| / w, mu lambda - lambda_t),  lambda_t += dmu,  x -= w (dmu (p / |p|)),
 * so that the friction correction is at most mu times the normal one (Coulomb's cone): a
 * node sliding on a level support decelerates by mu g, one whose slip fits the cone stays
 * where it touched. A mesh contact finds its triangle again in each pass (ss_mesh_find
 * from the start: nothing crosses it) and keeps the last one found. Restitution, after
 * v = (x - s) / dt: each contact that pushed (lambda > 0) and was coming in, u0 = v.n < 0
 * at the prediction, gets the normal velocity e (-u0) if -u0 > 2 |g| dt, else 0 (no
 * jitter at rest): v += du n, du = target - v.n, n at the end of the solve; and, as
 * Coulomb's law asks of that impulse too, the tangential velocity v_t = v - (v.n) n drops
 * by mu du (to 0 at most): v = (v.n) n + max(0, 1 - mu du / |v_t|) v_t. An impact then
 * changes |v_t| by mu (1 + e) |v_n| in all, as colliders.c's rule does.
 *
 * Serial, in that fixed order: bit-identical for any thread count and SIMD path.
 * springsim.reference (_collider_constraints) is the same in NumPy (planes, spheres,
 * boxes, capsules). */
#include "springsim.h"

#include <math.h>
#include <string.h>

/* Room for k contacts; -1 when out of memory (what was held is kept). */
static int fit(ss_collider_contacts *c, size_t k) {
    if (k <= c->held_capacity)
        return 0;
    size_t capacity = c->held_capacity ? 2 * c->held_capacity : 64;
    while (capacity < k)
        capacity *= 2;
    int32_t *held = ss_malloc(4 * capacity * sizeof *held);
    double *frames = ss_malloc(3 * capacity * sizeof *frames);
    if (!held || !frames) {
        ss_free(held);
        ss_free(frames);
        return -1;
    }
    if (c->num_held) {
        memcpy(held, c->held, 4 * c->num_held * sizeof *held);
        memcpy(frames, c->frames, 3 * c->num_held * sizeof *frames);
    }
    ss_free(c->held);
    ss_free(c->frames);
    c->held = held;
    c->frames = frames;
    c->held_capacity = capacity;
    return 0;
}

int ss_collider_constraints_begin(ss_system *sys, double *records, size_t stride, const double *v,
                                  double margin) {
    ss_collider_contacts *c = &sys->scratch.collider_contacts;
    const size_t n = sys->num_nodes, dim = (size_t)sys->dim;
    c->num_held = 0;
    for (size_t q = 0; q < sys->num_colliders; q++) {
        const ss_collider *col = &sys->colliders[q];
        for (size_t i = 0; i < n; i++) {
            double *r = records + i * stride;
            if (!(r[3] > 0.0)) /* pinned */
                continue;
            double depth, surface[3] = {0.0, 0.0, 0.0}, normal[3] = {0.0, 0.0, 0.0};
            ss_mesh_contact hit = {-1, 1};
            if (col->kind == SS_MESH) {
                if (!ss_mesh_find(col->mesh, col->thickness + margin, r + 4, r, &hit))
                    continue;
                ss_collider_locate(col, &hit, 3, r, 1, &depth, surface, normal);
            } else {
                if (ss_collider_locate(col, NULL, (int)dim, r + 4, 0, &depth, surface, normal))
                    for (size_t k = 0; k < dim; k++) { /* started inside: put back first */
                        const double shift = surface[k] - r[4 + k];
                        r[4 + k] = surface[k];
                        r[k] = r[k] + shift;
                    }
                ss_collider_locate(col, NULL, (int)dim, r, 1, &depth, surface, normal);
                if (!(depth > -margin))
                    continue;
            }
            if (fit(c, c->num_held + 1))
                return -1;
            double un = 0.0;
            for (size_t k = 0; k < dim; k++)
                un += v[i * dim + k] * normal[k];
            int32_t *h = c->held + 4 * c->num_held;
            double *f = c->frames + 3 * c->num_held;
            h[0] = (int32_t)q, h[1] = (int32_t)i, h[2] = hit.face, h[3] = hit.side;
            f[0] = 0.0, f[1] = un, f[2] = 0.0;
            c->num_held++;
        }
    }
    return 0;
}

void ss_collider_constraints_solve(ss_system *sys, double *records, size_t stride) {
    ss_collider_contacts *c = &sys->scratch.collider_contacts;
    const int dim = sys->dim;
    for (size_t p = 0; p < c->num_held; p++) {
        int32_t *h = c->held + 4 * p;
        double *f = c->frames + 3 * p;
        const ss_collider *col = &sys->colliders[h[0]];
        double *x = records + (size_t)h[1] * stride;
        const double w = x[3], mu = col->friction;
        ss_mesh_contact hit = {h[2], h[3]};
        if (col->kind == SS_MESH) {
            ss_mesh_contact now = {-1, 1};
            if (ss_mesh_find(col->mesh, col->thickness, x + 4, x, &now))
                hit = now, h[2] = now.face, h[3] = now.side;
        }
        double depth, surface[3] = {0.0, 0.0, 0.0}, n[3] = {0.0, 0.0, 0.0};
        ss_collider_locate(col, &hit, dim, x, 1, &depth, surface, n);
        const double lambda = f[0];
        if (!(depth > 0.0) && lambda == 0.0)
            continue; /* apart, and not pushed this substep */
        double dlambda = depth / w;
        if (lambda + dlambda < 0.0)
            dlambda = -lambda;
        f[0] = lambda + dlambda;
        for (int k = 0; k < 3; k++)
            x[k] = x[k] + w * (dlambda * n[k]);
        const double room = mu * f[0] - f[2];
        if (!(mu > 0.0) || !(room > 0.0))
            continue;
        double slip[3];
        for (int k = 0; k < 3; k++)
            slip[k] = x[k] - x[4 + k];
        const double dmu = ss_contact_friction_take(slip, n, room, w);
        if (!(dmu > 0.0))
            continue;
        f[2] = f[2] + dmu;
        for (int k = 0; k < 3; k++)
            x[k] = x[k] - w * (dmu * slip[k]);
    }
}

size_t ss_collider_constraints_restitute(ss_system *sys, const double *x, double *v,
                                         double threshold) {
    const ss_collider_contacts *c = &sys->scratch.collider_contacts;
    const size_t dim = (size_t)sys->dim;
    size_t pushed = 0;
    for (size_t p = 0; p < c->num_held; p++) {
        const int32_t *h = c->held + 4 * p;
        const double *f = c->frames + 3 * p;
        if (!(f[0] > 0.0))
            continue;
        pushed++;
        const double u0 = f[1];
        if (!(u0 < 0.0))
            continue; /* it was not coming in: the solve's velocity stands */
        const ss_collider *col = &sys->colliders[h[0]];
        const size_t i = (size_t)h[1];
        const ss_mesh_contact hit = {h[2], h[3]};
        double depth, surface[3] = {0.0, 0.0, 0.0}, n[3] = {0.0, 0.0, 0.0};
        ss_collider_locate(col, &hit, (int)dim, x + i * dim, 1, &depth, surface, n);
        double un = 0.0;
        for (size_t k = 0; k < dim; k++)
            un += v[i * dim + k] * n[k];
        const double target = -u0 > threshold ? col->restitution * -u0 : 0.0;
        const double du = target - un, mu = col->friction;
        for (size_t k = 0; k < dim; k++)
            v[i * dim + k] = v[i * dim + k] + du * n[k];
        if (!(mu > 0.0) || !(du > 0.0))
            continue;
        /* Coulomb on this impulse too: |v_t| drops by mu du, to 0 at most. */
        double vt[3] = {0.0, 0.0, 0.0}, vn = 0.0, speed2 = 0.0;
        for (size_t k = 0; k < dim; k++)
            vn += v[i * dim + k] * n[k];
        for (size_t k = 0; k < dim; k++) {
            vt[k] = v[i * dim + k] - vn * n[k];
            speed2 += vt[k] * vt[k];
        }
        const double speed = sqrt(speed2), cap = mu * du;
        const double keep = speed > cap ? 1.0 - cap / speed : 0.0;
        for (size_t k = 0; k < dim; k++)
            v[i * dim + k] = vn * n[k] + keep * vt[k];
    }
    return pushed;
}
