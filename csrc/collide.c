/* collide.c - planes and spheres (circles in 2D) that nodes cannot enter, with
 * restitution and Coulomb friction, applied after every substep of every method. */
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
    if (c->kind != SS_PLANE && c->kind != SS_SPHERE)
        return ss_fail(sys, SS_ERR_VALUE, "unknown collider kind %d", c->kind);
    double largest = 0.0; /* scale by the largest component: no overflow, no underflow */
    for (int k = 0; k < 3; k++) {
        if (k >= dim) {
            c->normal[k] = c->center[k] = 0.0;
            continue;
        }
        if (!isfinite(c->normal[k]) || !isfinite(c->center[k]))
            return ss_fail(sys, SS_ERR_VALUE, "a collider's normal and center must be finite");
        if (fabs(c->normal[k]) > largest)
            largest = fabs(c->normal[k]);
    }
    if (c->kind == SS_PLANE) {
        if (!(largest > 0.0))
            return ss_fail(sys, SS_ERR_VALUE, "a plane's normal must be a nonzero vector");
        if (!isfinite(c->offset))
            return ss_fail(sys, SS_ERR_VALUE, "a plane's offset must be finite, got %g", c->offset);
        if (!is_unit(c->normal, dim))
            normalise(c->normal, dim, largest);
    } else if (!(c->radius > 0.0) || !isfinite(c->radius)) {
        return ss_fail(sys, SS_ERR_VALUE, "a sphere's radius must be finite and > 0 m, got %g",
                       c->radius);
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
    *slot = c;
    return SS_OK;
}

ss_status ss_system_remove_collider(ss_system *sys, long id) {
    ss_collider *slot = ss_system_find_collider(sys, id);
    if (!slot)
        return ss_fail(sys, SS_ERR_VALUE, "this collider is not (or no longer) in the system");
    size_t k = (size_t)(slot - sys->colliders);
    memmove(slot, slot + 1, (sys->num_colliders - k - 1) * sizeof *slot);
    sys->num_colliders--;
    return SS_OK;
}

/* Velocity response at a contact with unit normal n (pointing into free space):
 * a node moving inwards (v.n < 0) has its normal velocity reflected with restitution
 * e, a change dv_n = (1 + e)|v.n|, and its tangential velocity reduced by Coulomb
 * friction mu dv_n, at most to zero (friction stops sliding, never reverses it). */
static void respond(double *v, const double *n, int dim, double e, double mu) {
    double vn = 0.0;
    for (int k = 0; k < dim; k++)
        vn += v[k] * n[k];
    if (vn >= 0.0)
        return;
    const double dvn = -(1.0 + e) * vn;
    double vt[3], speed2 = 0.0;
    for (int k = 0; k < dim; k++) {
        vt[k] = v[k] - vn * n[k];
        speed2 += vt[k] * vt[k];
    }
    const double speed = sqrt(speed2);
    const double keep = speed > mu * dvn ? 1.0 - mu * dvn / speed : 0.0;
    for (int k = 0; k < dim; k++)
        v[k] = -e * vn * n[k] + keep * vt[k];
}

/* Push every free node out of every collider and apply the velocity response. */
void ss_collide(ss_system *sys) {
    const size_t n = sys->num_nodes;
    const int dim = sys->dim;
    double *x = SS_DOUBLES(sys, SS_POSITIONS), *v = SS_DOUBLES(sys, SS_VELOCITIES);
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    for (size_t c = 0; c < sys->num_colliders; c++) {
        const ss_collider *col = &sys->colliders[c];
        for (size_t i = 0; i < n; i++) {
            if (pinned[i])
                continue;
            double *xi = x + i * (size_t)dim, *vi = v + i * (size_t)dim;
            double normal[3] = {0.0, 0.0, 0.0};
            if (col->kind == SS_PLANE) {
                double depth = col->offset; /* how far inside: offset - n.x */
                for (int k = 0; k < dim; k++)
                    depth -= col->normal[k] * xi[k];
                if (!(depth > 0.0))
                    continue;
                for (int k = 0; k < dim; k++) {
                    xi[k] += depth * col->normal[k];
                    normal[k] = col->normal[k];
                }
            } else {
                double r2 = 0.0;
                for (int k = 0; k < dim; k++) {
                    normal[k] = xi[k] - col->center[k];
                    r2 += normal[k] * normal[k];
                }
                if (!(r2 < col->radius * col->radius))
                    continue;
                const double r = sqrt(r2);
                if (r > 0.0)
                    for (int k = 0; k < dim; k++)
                        normal[k] /= r;
                else /* at the very centre: out along +y, the up direction */
                    normal[1] = 1.0, normal[0] = normal[2] = 0.0;
                for (int k = 0; k < dim; k++)
                    xi[k] = col->center[k] + col->radius * normal[k];
            }
            respond(vi, normal, dim, col->restitution, col->friction);
        }
    }
}
