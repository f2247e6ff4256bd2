/* constraints.c - pins, strain limiting (Provot 1995) and tearing. */
#include "springsim.h"

#include <math.h>
#include <string.h>

/* Passes of strain limiting per substep at most; each pass fixes every spring once,
 * and they stop as soon as no spring is longer than the bound by more than
 * SS_STRAIN_TOLERANCE (relative). Gauss-Seidel converges linearly on a hanging cloth:
 * a few dozen passes reach 1e-6, a few hundred 1e-9. */
#define SS_STRAIN_PASSES 1000
#define SS_STRAIN_TOLERANCE 1e-10
/* Passes in a row that shrink the total excess length by less than this fraction,
 * after which the bound is taken to be unreachable. Gauss-Seidel on a satisfiable
 * system shrinks it every pass, if slowly (a node between two pinned ends whose springs
 * are just long enough converges sublinearly); an unreachable one settles on the same
 * corrections pass after pass, to round-off. */
#define SS_STRAIN_STALL 20
#define SS_STRAIN_PROGRESS 1e-9

/* One Gauss-Seidel pass over the springs in index order; returns how many were too
 * long, and the sum of their excess lengths (m) in *total_excess. A spring of length l > l_max = (1
 * + max_strain) L moves its ends together by l - l_max, shared by inverse mass (pinned ends do not
 * move), and loses the part of its ends' relative velocity that separates them (shared the same
 * way). */
static size_t limit_strain_pass(ss_system *sys, double *total_excess) {
    const size_t dim = (size_t)sys->dim;
    double *x = SS_DOUBLES(sys, SS_POSITIONS), *v = SS_DOUBLES(sys, SS_VELOCITIES);
    const double *m = SS_DOUBLES(sys, SS_MASSES), *rest = SS_DOUBLES(sys, SS_REST_LENGTHS);
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    const int32_t *pairs = SS_INT32S(sys, SS_SPRINGS);
    const double stretch = 1.0 + sys->max_strain;
    size_t violated = 0;
    *total_excess = 0.0;
    for (size_t s = 0; s < sys->num_springs; s++) {
        const size_t i = (size_t)pairs[2 * s], j = (size_t)pairs[2 * s + 1];
        const double wi = pinned[i] ? 0.0 : 1.0 / m[i], wj = pinned[j] ? 0.0 : 1.0 / m[j];
        if (wi + wj == 0.0)
            continue;
        double d[3], length2 = 0.0;
        for (size_t k = 0; k < dim; k++) {
            d[k] = x[j * dim + k] - x[i * dim + k];
            length2 += d[k] * d[k];
        }
        const double longest = stretch * rest[s];
        if (!(length2 > longest * longest))
            continue;
        if (length2 > longest * longest * (1.0 + SS_STRAIN_TOLERANCE))
            violated++;
        const double length = sqrt(length2), excess = length - longest;
        *total_excess += excess;
        double separating = 0.0;
        for (size_t k = 0; k < dim; k++) {
            d[k] /= length;
            separating += (v[j * dim + k] - v[i * dim + k]) * d[k];
        }
        if (separating < 0.0)
            separating = 0.0;
        const double share_i = wi / (wi + wj), share_j = wj / (wi + wj);
        for (size_t k = 0; k < dim; k++) {
            x[i * dim + k] += share_i * excess * d[k];
            x[j * dim + k] -= share_j * excess * d[k];
            v[i * dim + k] += share_i * separating * d[k];
            v[j * dim + k] -= share_j * separating * d[k];
        }
    }
    return violated;
}

void ss_constraints_limit_strain(ss_system *sys) {
    if (sys->max_strain < 0.0)
        return;
    /* Pins (or colliders) farther apart than the springs may stretch make the bound
     * unsatisfiable: the passes then settle on the same corrections pass after pass.
     * Stop when SS_STRAIN_STALL passes in a row shrank the total excess by less than
     * SS_STRAIN_PROGRESS, and count the substep as unmet (the step warns). */
    double last = INFINITY;
    int stalled = 0;
    for (int pass = 0; pass < SS_STRAIN_PASSES; pass++) {
        double excess;
        if (limit_strain_pass(sys, &excess) == 0)
            return;
        stalled = excess > (1.0 - SS_STRAIN_PROGRESS) * last ? stalled + 1 : 0;
        if (stalled == SS_STRAIN_STALL)
            break;
        last = excess;
    }
    sys->strain_unmet++;
}

/* Nonzero when some spring with a free end is longer than the strain limit allows
 * (within the limiter's tolerance): after the colliders have moved nodes that the
 * limiter had placed, the bound may no longer hold, and the step must say so. */
int ss_constraints_strain_exceeded(const ss_system *sys) {
    const size_t dim = (size_t)sys->dim;
    const double *x = SS_DOUBLES(sys, SS_POSITIONS), *rest = SS_DOUBLES(sys, SS_REST_LENGTHS);
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    const int32_t *pairs = SS_INT32S(sys, SS_SPRINGS);
    const double stretch = 1.0 + sys->max_strain;
    for (size_t s = 0; s < sys->num_springs; s++) {
        const size_t i = (size_t)pairs[2 * s], j = (size_t)pairs[2 * s + 1];
        if (pinned[i] && pinned[j])
            continue;
        double length2 = 0.0;
        for (size_t k = 0; k < dim; k++) {
            const double d = x[j * dim + k] - x[i * dim + k];
            length2 += d * d;
        }
        const double longest = stretch * rest[s];
        if (length2 > longest * longest * (1.0 + SS_STRAIN_TOLERANCE))
            return 1;
    }
    return 0;
}

/* Nonzero when a velocity (dim components, m/s) is not exactly zero (NaN included). */
static int is_moving(const double *v, size_t dim) {
    for (size_t k = 0; k < dim; k++)
        if (v[k] != 0.0)
            return 1;
    return 0;
}

/* Nonzero while a NumPy view shows the velocities or the pin flags: it may write a
 * pinned velocity after this call and be dropped before the next, which would then see
 * no sign of it (ss_system_validate marks only arrays viewed since it last ran, or
 * still viewed), so the pins are looked at again next time. */
static int pins_shown(const ss_system *sys) {
    return sys->arrays[SS_VELOCITIES]->refcount > 1 || sys->arrays[SS_PINNED]->refcount > 1;
}

/* A pinned node has zero acceleration in every method, so it moves by exactly v dt per
 * substep: held (v = 0) it stays where it is, dragged it moves at v. */
ss_status ss_constraints_hold_pins(ss_system *sys) {
    sys->scratch.num_held = 0;
    if (!sys->pins_unheld)
        return SS_OK; /* the usual case: nothing wrote a pinned velocity since the last call */
    const size_t n = sys->num_nodes, dim = (size_t)sys->dim;
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    double *v = SS_DOUBLES(sys, SS_VELOCITIES);
    size_t moving = 0;
    for (size_t i = 0; i < n; i++)
        if (pinned[i])
            moving += (size_t)is_moving(v + i * dim, dim);
    if (moving == 0) {
        sys->pins_unheld = pins_shown(sys);
        return SS_OK;
    }
    if (moving > sys->scratch.held_capacity) {
        size_t *held = ss_malloc(moving * sizeof *held);
        double *held_v = ss_malloc(moving * dim * sizeof *held_v);
        if (!held || !held_v) {
            ss_free(held);
            ss_free(held_v);
            return ss_fail(sys, SS_ERR_NOMEM, "out of memory holding the pinned nodes");
        }
        ss_free(sys->scratch.held);
        ss_free(sys->scratch.held_v);
        sys->scratch.held = held;
        sys->scratch.held_v = held_v;
        sys->scratch.held_capacity = moving;
    }
    for (size_t i = 0; i < n; i++)
        if (pinned[i] && is_moving(v + i * dim, dim)) {
            sys->scratch.held[sys->scratch.num_held] = i;
            memcpy(sys->scratch.held_v + sys->scratch.num_held * dim, v + i * dim,
                   dim * sizeof(double));
            memset(v + i * dim, 0, dim * sizeof(double));
            sys->scratch.num_held++;
        }
    sys->pins_unheld = pins_shown(sys);
    return SS_OK;
}

void ss_constraints_release_pins(ss_system *sys) {
    const size_t dim = (size_t)sys->dim;
    double *v = SS_DOUBLES(sys, SS_VELOCITIES);
    for (size_t h = 0; h < sys->scratch.num_held; h++)
        memcpy(v + sys->scratch.held[h] * dim, sys->scratch.held_v + h * dim, dim * sizeof(double));
    if (sys->scratch.num_held)
        sys->pins_unheld = 1;
    sys->scratch.num_held = 0;
}

static void forget_cuts(ss_system *sys) {
    ss_free(sys->cut);
    ss_free(sys->cut_saved);
    sys->cut = NULL;
    sys->cut_saved = NULL;
    sys->cut_capacity = 0;
    sys->num_cut = 0;
}

ss_status ss_constraints_begin_tearing(ss_system *sys) {
    const size_t m = sys->num_springs;
    if (sys->cut) /* cuts deferred from earlier calls: keep marking on the same springs */
        return SS_OK;
    if (!sys->breakable)
        return SS_OK; /* nothing can break (ss_system_validate keeps the flag) */
    sys->cut = ss_malloc(m);
    sys->cut_saved = ss_malloc(2 * m * sizeof(double));
    if (!sys->cut || !sys->cut_saved) {
        forget_cuts(sys);
        return ss_fail(sys, SS_ERR_NOMEM, "out of memory preparing to tear springs");
    }
    memset(sys->cut, 0, m);
    sys->cut_capacity = m;
    return SS_OK;
}

void ss_constraints_cut(ss_system *sys) {
    if (!sys->cut)
        return;
    const size_t m = sys->num_springs, dim = (size_t)sys->dim;
    const double *x = SS_DOUBLES(sys, SS_POSITIONS), *rest = SS_DOUBLES(sys, SS_REST_LENGTHS);
    const double *limit = SS_DOUBLES(sys, SS_BREAK_STRAINS);
    double *k = SS_DOUBLES(sys, SS_STIFFNESS), *c = SS_DOUBLES(sys, SS_DAMPING);
    const int32_t *pairs = SS_INT32S(sys, SS_SPRINGS);
    for (size_t s = 0; s < m; s++) {
        if (sys->cut[s] || !isfinite(limit[s]))
            continue;
        const size_t i = (size_t)pairs[2 * s] * dim, j = (size_t)pairs[2 * s + 1] * dim;
        double length2 = 0.0;
        for (size_t q = 0; q < dim; q++)
            length2 += (x[j + q] - x[i + q]) * (x[j + q] - x[i + q]);
        const double longest = (1.0 + limit[s]) * rest[s];
        if (!(length2 > longest * longest))
            continue;
        if (sys->track_energy && isfinite(k[s])) { /* the stretch energy goes with it */
            const double stretch = sqrt(length2) - rest[s];
            sys->state.dissipated += 0.5 * k[s] * stretch * stretch;
        }
        sys->cut[s] = 2;
        sys->cut_saved[2 * s] = k[s];
        sys->cut_saved[2 * s + 1] = c[s];
        k[s] = c[s] = 0.0;
        sys->num_cut++;
    }
}

void ss_constraints_uncut(ss_system *sys) {
    if (!sys->cut)
        return;
    double *k = SS_DOUBLES(sys, SS_STIFFNESS), *c = SS_DOUBLES(sys, SS_DAMPING);
    for (size_t s = 0; s < sys->num_springs; s++)
        if (sys->cut[s] == 2) {
            k[s] = sys->cut_saved[2 * s];
            c[s] = sys->cut_saved[2 * s + 1];
            sys->cut[s] = 0;
            sys->num_cut--;
        }
    if (sys->num_cut == 0)
        forget_cuts(sys);
}

/* Every cut spring gets its k and c back (removing them failed). */
static void restore_all(ss_system *sys) {
    if (sys->cut)
        for (size_t s = 0; s < sys->num_springs; s++)
            if (sys->cut[s])
                sys->cut[s] = 2;
    ss_constraints_uncut(sys);
}

void ss_constraints_keep_cuts(ss_system *sys) {
    if (sys->cut)
        for (size_t s = 0; s < sys->num_springs; s++)
            if (sys->cut[s])
                sys->cut[s] = 1;
}

ss_status ss_system_tear(ss_system *sys) {
    if (!sys->cut || sys->num_cut == 0) {
        forget_cuts(sys);
        return SS_OK;
    }
    const size_t torn = sys->num_cut;
    const int32_t *pairs = SS_INT32S(sys, SS_SPRINGS);
    if (sys->num_broken + torn > sys->broken_capacity) {
        size_t capacity = 2 * (sys->num_broken + torn);
        int32_t *grown = ss_malloc(2 * capacity * sizeof *grown);
        if (!grown) {
            restore_all(sys); /* no half-torn state: the springs stay whole */
            return ss_fail(sys, SS_ERR_NOMEM, "out of memory recording torn springs");
        }
        if (sys->num_broken)
            memcpy(grown, sys->broken, 2 * sys->num_broken * sizeof *grown);
        ss_free(sys->broken);
        sys->broken = grown;
        sys->broken_capacity = capacity;
    }
    const size_t before = sys->num_broken;
    for (size_t s = 0; s < sys->num_springs; s++)
        if (sys->cut[s]) {
            sys->broken[2 * sys->num_broken] = pairs[2 * s];
            sys->broken[2 * sys->num_broken + 1] = pairs[2 * s + 1];
            sys->num_broken++;
        }
    ss_status st = ss_system_remove_spring_mask(sys, sys->cut);
    if (st) {
        sys->num_broken = before;
        restore_all(sys);
        return st;
    }
    forget_cuts(sys);
    return SS_OK;
}
