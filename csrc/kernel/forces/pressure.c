/* pressure.c - closed bodies of ideal gas (Matyka's pressure soft bodies).
 *
 * A body's boundary is a closed polygon of directed edges (2D) or a closed surface of
 * triangles (3D). Its gas is isothermal: P = nrt / V. The energy of the gas,
 *     E = -nrt ln V + ambient V,
 * has the force -dE/dx = (P - ambient) dV/dx on the boundary's nodes. For a closed,
 * consistently oriented boundary dV/dx is exactly "edge length (2D) or face area (3D)
 * along the outward normal, shared equally by the element's nodes":
 *     2D edge (a, b), d = b - a:       each node gets 1/2 (d_y, -d_x)
 *     3D triangle (a, b, c):           each node gets 1/6 (b - a) x (c - a)
 * (summed around a node, the other terms telescope away), so the symplectic methods
 * conserve kinetic + elastic + gravity + gas energy. */
#include "springsim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- Geometry ---------------------------------------------------------- */

/* Signed area (2D) or volume (3D) enclosed by the elements, measured from the body's
 * first node rather than the origin, so a body far from the origin loses no digits:
 *     2D: A = 1/2 sum (a - r) x (b - r)
 *     3D: V = 1/6 sum (a - r) . ((b - r) x (c - r))                                 */
static double signed_volume(int dim, size_t count, const int32_t *e, const double *x) {
    if (count == 0)
        return 0.0;
    const double *r = x + (size_t)e[0] * dim;
    double sum = 0.0;
    if (dim == 2) {
        for (size_t q = 0; q < count; q++) {
            const double *a = x + (size_t)e[2 * q] * 2, *b = x + (size_t)e[2 * q + 1] * 2;
            sum += (a[0] - r[0]) * (b[1] - r[1]) - (a[1] - r[1]) * (b[0] - r[0]);
        }
        return 0.5 * sum;
    }
    for (size_t q = 0; q < count; q++) {
        const double *a = x + (size_t)e[3 * q] * 3, *b = x + (size_t)e[3 * q + 1] * 3,
                     *c = x + (size_t)e[3 * q + 2] * 3;
        double u[3], v[3], w[3];
        for (int k = 0; k < 3; k++) {
            u[k] = a[k] - r[k];
            v[k] = b[k] - r[k];
            w[k] = c[k] - r[k];
        }
        sum += u[0] * (v[1] * w[2] - v[2] * w[1]) + u[1] * (v[2] * w[0] - v[0] * w[2]) +
               u[2] * (v[0] * w[1] - v[1] * w[0]);
    }
    return sum / 6.0;
}

double ss_pressure_volume(const ss_system *sys, const ss_pressure_body *body, const double *x) {
    return signed_volume(sys->dim, body->count, body->elements, x);
}

/* ---- Forces and energy ------------------------------------------------- */

/* Add `scale` dV/dx of one body to f, whose rows are `stride` doubles apart (see the
 * file comment for the formulas). */
static void add_volume_gradient(int dim, size_t count, const int32_t *e, const double *x,
                                double scale, double *f, size_t stride) {
    if (dim == 2) {
        const double half = 0.5 * scale;
        for (size_t q = 0; q < count; q++) {
            const size_t a = (size_t)e[2 * q] * 2, b = (size_t)e[2 * q + 1] * 2;
            const double gx = half * (x[b + 1] - x[a + 1]), gy = -half * (x[b] - x[a]);
            double *fa = f + (size_t)e[2 * q] * stride, *fb = f + (size_t)e[2 * q + 1] * stride;
            fa[0] += gx;
            fa[1] += gy;
            fb[0] += gx;
            fb[1] += gy;
        }
        return;
    }
    const double sixth = scale / 6.0;
    for (size_t q = 0; q < count; q++) {
        const size_t a = (size_t)e[3 * q] * 3, b = (size_t)e[3 * q + 1] * 3,
                     c = (size_t)e[3 * q + 2] * 3;
        double u[3], v[3];
        for (int k = 0; k < 3; k++) {
            u[k] = x[b + k] - x[a + k];
            v[k] = x[c + k] - x[a + k];
        }
        const double g[3] = {sixth * (u[1] * v[2] - u[2] * v[1]),
                             sixth * (u[2] * v[0] - u[0] * v[2]),
                             sixth * (u[0] * v[1] - u[1] * v[0])};
        double *fa = f + (size_t)e[3 * q] * stride, *fb = f + (size_t)e[3 * q + 1] * stride,
               *fc = f + (size_t)e[3 * q + 2] * stride;
        for (int k = 0; k < 3; k++) {
            fa[k] += g[k];
            fb[k] += g[k];
            fc[k] += g[k];
        }
    }
}

void ss_pressure_add_forces(ss_system *sys, const double *x, double *f, size_t stride) {
    const int dim = sys->dim;
    for (size_t k = 0; k < sys->num_bodies; k++) {
        const ss_pressure_body *body = &sys->bodies[k];
        const double volume = signed_volume(dim, body->count, body->elements, x);
        if (!(volume > 0.0)) {
            /* Inside out (or already non-finite): no physical gas force exists. NaN
             * forces make the step fail and roll back; the id says why. */
            if (volume <= 0.0 && sys->collapsed_body < 0)
                sys->collapsed_body = body->id;
            for (size_t q = 0; q < body->count * (size_t)dim; q++)
                for (int c = 0; c < dim; c++)
                    f[(size_t)body->elements[q] * stride + (size_t)c] = NAN;
            continue;
        }
        add_volume_gradient(dim, body->count, body->elements, x, body->nrt / volume - body->ambient,
                            f, stride);
    }
}

double ss_pressure_energy(const ss_system *sys) {
    const double *x = SS_DOUBLES(sys, SS_POSITIONS);
    double energy = 0.0;
    for (size_t k = 0; k < sys->num_bodies; k++) {
        const ss_pressure_body *body = &sys->bodies[k];
        const double volume = ss_pressure_volume(sys, body, x);
        const double gas = body->nrt == 0.0 ? 0.0 : volume > 0.0 ? -body->nrt * log(volume) : NAN;
        energy += gas + body->ambient * volume;
    }
    return energy;
}

/* The index of the first body whose volume is not > 0 (NaN included), or num_bodies. */
static size_t first_collapsed(const ss_system *sys, double *volume) {
    const double *x = SS_DOUBLES(sys, SS_POSITIONS);
    size_t k = 0;
    for (; k < sys->num_bodies; k++)
        if (!((*volume = ss_pressure_volume(sys, &sys->bodies[k], x)) > 0.0) ||
            !isfinite(*volume)) /* inf: nodes so far apart that no force is finite */
            break;
    return k;
}

long ss_pressure_first_collapsed(const ss_system *sys) {
    double volume;
    const size_t k = first_collapsed(sys, &volume);
    return k < sys->num_bodies ? sys->bodies[k].id : -1;
}

ss_status ss_pressure_validate(ss_system *sys) {
    double volume;
    const size_t k = first_collapsed(sys, &volume);
    if (k < sys->num_bodies)
        return ss_fail(sys, SS_ERR_VALUE,
                       "pressure body %ld encloses %s %g %s: it must be finite and > 0 (is "
                       "the body inside out, flattened or blown apart?)",
                       sys->bodies[k].id, sys->dim == 2 ? "an area of" : "a volume of", volume,
                       sys->dim == 2 ? "m^2" : "m^3");
    return SS_OK;
}

/* ---- Checking a boundary ----------------------------------------------- */

static int compare_keys(const void *p, const void *q) {
    const uint64_t a = *(const uint64_t *)p, b = *(const uint64_t *)q;
    return (a > b) - (a < b);
}

/* 2D: a closed, consistently directed set of edges enters every node as often as it
 * leaves it. A node touched an odd number of times ends an open chain. */
static ss_status check_loop(ss_system *sys, size_t count, const int64_t *e) {
    const size_t n = sys->num_nodes;
    long *out = ss_malloc(2 * n * sizeof(long)), *in = out + n;
    if (!out)
        return ss_fail(sys, SS_ERR_NOMEM, "out of memory checking a pressure boundary");
    memset(out, 0, 2 * n * sizeof(long));
    for (size_t q = 0; q < count; q++) {
        out[e[2 * q]]++;
        in[e[2 * q + 1]]++;
    }
    ss_status st = SS_OK;
    for (size_t i = 0; i < n && st == SS_OK; i++) {
        if (out[i] == in[i])
            continue;
        if ((out[i] + in[i]) % 2)
            st = ss_fail(sys, SS_ERR_VALUE,
                         "the pressure boundary is not closed: node %zu ends an open chain "
                         "(%ld edge(s) leave it, %ld enter it); a closed loop enters and leaves "
                         "every node equally often",
                         i, out[i], in[i]);
        else
            st = ss_fail(sys, SS_ERR_VALUE,
                         "the pressure boundary is not consistently oriented: %ld edge(s) leave "
                         "node %zu and %ld enter it; every edge of the loop must run the same "
                         "way round",
                         out[i], i, in[i]);
    }
    ss_free(out);
    return st;
}

/* 3D: a closed, consistently oriented surface uses every edge equally often in each
 * direction (a manifold: once each way). Keys (min * n + max) * 2 + reversed, sorted,
 * group each undirected edge. */
static ss_status check_surface(ss_system *sys, size_t count, const int64_t *e) {
    const uint64_t n = sys->num_nodes;
    uint64_t *keys = ss_malloc(3 * count * sizeof(uint64_t));
    if (!keys)
        return ss_fail(sys, SS_ERR_NOMEM, "out of memory checking a pressure boundary");
    for (size_t q = 0; q < count; q++)
        for (int c = 0; c < 3; c++) {
            const uint64_t a = (uint64_t)e[3 * q + c], b = (uint64_t)e[3 * q + (c + 1) % 3];
            keys[3 * q + c] = ((a < b ? a : b) * n + (a < b ? b : a)) * 2 + (a > b);
        }
    qsort(keys, 3 * count, sizeof *keys, compare_keys);
    ss_status st = SS_OK;
    for (size_t g = 0; g < 3 * count && st == SS_OK;) {
        size_t end = g, forward = 0;
        while (end < 3 * count && keys[end] >> 1 == keys[g] >> 1)
            forward += !(keys[end++] & 1);
        const size_t uses = end - g, backward = uses - forward;
        const unsigned long long i = (keys[g] >> 1) / n, j = (keys[g] >> 1) % n;
        if (uses % 2)
            st = ss_fail(sys, SS_ERR_VALUE,
                         "the pressure boundary is not closed: edge (%llu, %llu) belongs to %zu "
                         "triangle(s); on a closed surface every edge is shared by two",
                         i, j, uses);
        else if (forward != backward)
            st = ss_fail(sys, SS_ERR_VALUE,
                         "the pressure boundary is not consistently oriented: edge (%llu, %llu) "
                         "runs the same way in %zu triangles; two triangles sharing an edge must "
                         "list it in opposite directions",
                         i, j, forward > backward ? forward : backward);
        g = end;
    }
    ss_free(keys);
    return st;
}

static ss_status check_values(ss_system *sys, double nrt, double ambient) {
    const char *unit = sys->dim == 2 ? "J/m" : "J";
    if (!(nrt >= 0.0) || !isfinite(nrt))
        return ss_fail(sys, SS_ERR_VALUE, "nrt is %g: must be finite and >= 0 %s", nrt, unit);
    if (!(ambient >= 0.0) || !isfinite(ambient))
        return ss_fail(sys, SS_ERR_VALUE, "ambient is %g: must be finite and >= 0 %s", ambient,
                       sys->dim == 2 ? "N/m" : "Pa");
    return SS_OK;
}

/* ---- Adding, changing, removing ---------------------------------------- */

ss_pressure_body *ss_system_find_pressure(ss_system *sys, long id) {
    for (size_t k = 0; k < sys->num_bodies; k++)
        if (sys->bodies[k].id == id)
            return &sys->bodies[k];
    return NULL;
}

ss_status ss_system_add_pressure(ss_system *sys, size_t count, const int64_t *elements, double nrt,
                                 double ambient, long *id) {
    const size_t dim = (size_t)sys->dim;
    ss_status st = check_values(sys, nrt, ambient);
    if (st)
        return st;
    if (count == 0)
        return ss_fail(sys, SS_ERR_VALUE, "the pressure boundary is empty");
    for (size_t q = 0; q < count; q++) {
        for (size_t c = 0; c < dim; c++) {
            const int64_t i = elements[q * dim + c];
            if (i < 0 || (uint64_t)i >= sys->num_nodes)
                return ss_fail(sys, SS_ERR_INDEX,
                               "pressure boundary %s %zu refers to node %lld, but the system "
                               "has %zu nodes",
                               dim == 2 ? "edge" : "triangle", q, (long long)i, sys->num_nodes);
            for (size_t d = 0; d < c; d++)
                if (elements[q * dim + d] == i)
                    return ss_fail(sys, SS_ERR_VALUE, "pressure boundary %s %zu repeats node %lld",
                                   dim == 2 ? "edge" : "triangle", q, (long long)i);
        }
    }
    if ((st = dim == 2 ? check_loop(sys, count, elements) : check_surface(sys, count, elements)))
        return st;

    int32_t *stored = ss_malloc(count * dim * sizeof(int32_t));
    if (!stored)
        return ss_fail(sys, SS_ERR_NOMEM, "out of memory adding a pressure body");
    for (size_t k = 0; k < count * dim; k++)
        stored[k] = (int32_t)elements[k];
    const double volume = signed_volume((int)dim, count, stored, SS_DOUBLES(sys, SS_POSITIONS));
    if (!(volume != 0.0) || !isfinite(volume)) {
        ss_free(stored);
        return ss_fail(sys, SS_ERR_VALUE,
                       "the pressure boundary encloses %s %g: a gas needs a nonzero, finite one",
                       dim == 2 ? "an area of" : "a volume of", volume);
    }
    if (volume < 0.0) /* inward-facing: turn every element round */
        for (size_t q = 0; q < count; q++) {
            const int32_t t = stored[q * dim + dim - 2];
            stored[q * dim + dim - 2] = stored[q * dim + dim - 1];
            stored[q * dim + dim - 1] = t;
        }
    if (sys->num_bodies == sys->body_capacity) {
        const size_t capacity = sys->body_capacity ? 2 * sys->body_capacity : 4;
        ss_pressure_body *grown = ss_malloc(capacity * sizeof *grown);
        if (!grown) {
            ss_free(stored);
            return ss_fail(sys, SS_ERR_NOMEM, "out of memory adding a pressure body");
        }
        if (sys->num_bodies)
            memcpy(grown, sys->bodies, sys->num_bodies * sizeof *grown);
        ss_free(sys->bodies);
        sys->bodies = grown;
        sys->body_capacity = capacity;
    }
    ss_pressure_body body = {sys->next_body_id++, nrt, ambient, count, stored};
    sys->bodies[sys->num_bodies++] = body;
    *id = body.id;
    sys->state_edits++;
    return SS_OK;
}

ss_status ss_system_set_pressure(ss_system *sys, long id, double nrt, double ambient) {
    ss_pressure_body *body = ss_system_find_pressure(sys, id);
    if (!body)
        return ss_fail(sys, SS_ERR_VALUE, "there is no pressure body %ld in this system", id);
    ss_status st = check_values(sys, nrt, ambient);
    if (st)
        return st;
    body->nrt = nrt;
    body->ambient = ambient;
    sys->state_edits++;
    return SS_OK;
}

ss_status ss_system_remove_pressure(ss_system *sys, long id) {
    ss_pressure_body *body = ss_system_find_pressure(sys, id);
    if (!body)
        return ss_fail(sys, SS_ERR_VALUE, "there is no pressure body %ld in this system", id);
    const size_t k = (size_t)(body - sys->bodies);
    ss_free(body->elements);
    memmove(body, body + 1, (sys->num_bodies - k - 1) * sizeof *body);
    sys->num_bodies--;
    sys->state_edits++;
    return SS_OK;
}

/* ---- Life cycle and topology edits ------------------------------------- */

ss_status ss_pressure_copy(ss_system *dst, const ss_system *src) {
    dst->bodies = NULL;
    dst->num_bodies = dst->body_capacity = 0;
    if (!src->num_bodies)
        return SS_OK;
    dst->bodies = ss_malloc(src->num_bodies * sizeof *dst->bodies);
    if (!dst->bodies)
        return SS_ERR_NOMEM;
    dst->body_capacity = src->num_bodies;
    for (size_t k = 0; k < src->num_bodies; k++) {
        const ss_pressure_body *from = &src->bodies[k];
        const size_t bytes = from->count * (size_t)src->dim * sizeof(int32_t);
        int32_t *elements = ss_malloc(bytes);
        if (!elements)
            return SS_ERR_NOMEM; /* the caller frees dst, with the bodies copied so far */
        memcpy(elements, from->elements, bytes);
        dst->bodies[k] = *from;
        dst->bodies[k].elements = elements;
        dst->num_bodies = k + 1;
    }
    return SS_OK;
}

void ss_pressure_free(ss_system *sys) {
    for (size_t k = 0; k < sys->num_bodies; k++)
        ss_free(sys->bodies[k].elements);
    ss_free(sys->bodies);
    sys->bodies = NULL;
    sys->num_bodies = sys->body_capacity = 0;
}

ss_status ss_pressure_check_removal(ss_system *sys, const uint8_t *doomed) {
    const size_t dim = (size_t)sys->dim;
    for (size_t k = 0; k < sys->num_bodies; k++) {
        const ss_pressure_body *body = &sys->bodies[k];
        for (size_t q = 0; q < body->count * dim; q++)
            if (doomed[body->elements[q]])
                return ss_fail(sys, SS_ERR_VALUE,
                               "node %d is on the boundary of pressure body %ld: remove the body "
                               "first (sim.remove_pressure(%ld))",
                               (int)body->elements[q], body->id, body->id);
    }
    return SS_OK;
}

void ss_pressure_renumber(ss_system *sys, const int64_t *old_to_new) {
    const size_t dim = (size_t)sys->dim;
    for (size_t k = 0; k < sys->num_bodies; k++) {
        ss_pressure_body *body = &sys->bodies[k];
        for (size_t q = 0; q < body->count * dim; q++)
            body->elements[q] = (int32_t)old_to_new[body->elements[q]];
    }
}
