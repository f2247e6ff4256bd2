/* integrate.c - the explicit integrators, and ss_system_step: validation, the substep
 * loop, the finiteness and divergence checks (divergence.c) and the rollback.
 *
 * Each integrator updates sys's positions x and velocities v in place. Pinned nodes
 * have zero acceleration and move with their own velocity, exactly x += v dt, in
 * every method: zero (a step call holds them first) unless drive() drags them.
 * springsim/reference.py is the same mathematics in NumPy. */
#include "springsim.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* Explicit Euler: x' = x + v dt, v' = v + a(x, v) dt. First order; it gains energy
 * on every undamped spring, whatever dt (kept for teaching). */
static void step_euler(ss_system *sys, double dt, double *a) {
    double *x = SS_DOUBLES(sys, SS_POSITIONS), *v = SS_DOUBLES(sys, SS_VELOCITIES);
    const size_t nd = sys->num_nodes * (size_t)sys->dim;
    ss_forces_acceleration(sys, x, v, a);
    for (size_t k = 0; k < nd; k++) {
        x[k] = x[k] + v[k] * dt;
        v[k] = v[k] + a[k] * dt;
    }
}

/* Symplectic (semi-implicit) Euler: v' = v + a(x, v) dt, x' = x + v' dt. First order,
 * and its energy error stays bounded for dt below the stability limit. */
static void step_symplectic_euler(ss_system *sys, double dt, double *save_x, double *save_v) {
    /* fused: each node updated once its force is (and first saved, if asked), and the
     * finiteness check made on the way */
    sys->scratch.known_finite =
        ss_forces_symplectic_euler(sys, dt, save_x, save_v, sys->scratch.check_finite);
}

/* Position Verlet (the xbdev article): x' = 2x - x_prev + a dt^2.
 *
 * The previous position is the one the current state implies,
 *     x_prev = x - v dt + 1/2 a_prev dt^2,
 * with a_prev the last Verlet step's acceleration, so a user who writes x or v
 * between steps is always honoured. The velocity left behind,
 *     v' = (x' - x) / dt + 1/2 a dt,
 * is second-order accurate (exact for constant acceleration). */
static void step_verlet(ss_system *sys, double dt, double *a) {
    double *x = SS_DOUBLES(sys, SS_POSITIONS), *v = SS_DOUBLES(sys, SS_VELOCITIES);
    double *a_prev = SS_DOUBLES(sys, SS_PREV_ACCEL);
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    const size_t n = sys->num_nodes, dim = (size_t)sys->dim;
    ss_forces_acceleration(sys, x, v, a);
    if (!sys->state.prev_accel_valid)
        memcpy(a_prev, a, n * dim * sizeof(double)); /* first step: start from a Taylor step */
    for (size_t i = 0; i < n; i++)
        for (size_t k = i * dim; k < (i + 1) * dim; k++) {
            const double x0 = x[k];
            if (pinned[i]) {
                x[k] = x0 + v[k] * dt;
            } else {
                const double x_prev = x0 - v[k] * dt + 0.5 * a_prev[k] * dt * dt;
                x[k] = 2.0 * x0 - x_prev + a[k] * dt * dt;
                v[k] = (x[k] - x0) / dt + 0.5 * a[k] * dt;
            }
            a_prev[k] = a[k];
        }
    sys->state.prev_accel_valid = 1;
}

/* Velocity Verlet (kick-drift-kick): v_h = v + 1/2 a(x, v) dt, x' = x + v_h dt,
 * v' = v_h + 1/2 a(x', v_p) dt. Velocity-dependent forces (damping, drag) at x' use
 * the Euler-predicted end velocity v_p = v + a dt, accurate to O(dt^2); the
 * half-step velocity would be O(dt) off and make the method first order. Without
 * such forces this is the classical, symplectic velocity Verlet. */
static void step_velocity_verlet(ss_system *sys, double dt, double *scratch) {
    double *x = SS_DOUBLES(sys, SS_POSITIONS), *v = SS_DOUBLES(sys, SS_VELOCITIES);
    const size_t nd = sys->num_nodes * (size_t)sys->dim;
    double *a = scratch, *v_predicted = scratch + nd;
    const double half_dt = 0.5 * dt;
    ss_forces_acceleration(sys, x, v, a);
    for (size_t k = 0; k < nd; k++) {
        v_predicted[k] = v[k] + dt * a[k];
        v[k] = v[k] + half_dt * a[k];
        x[k] = x[k] + v[k] * dt;
    }
    ss_forces_acceleration(sys, x, v_predicted, a);
    for (size_t k = 0; k < nd; k++)
        v[k] = v[k] + half_dt * a[k];
}

/* Heun (RK2), the OSU slides' method: evaluate the whole state, predict an Euler
 * step, evaluate there, and apply the average of the two slopes. */
static void step_rk2(ss_system *sys, double dt, double *scratch) {
    double *x = SS_DOUBLES(sys, SS_POSITIONS), *v = SS_DOUBLES(sys, SS_VELOCITIES);
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    const size_t n = sys->num_nodes, dim = (size_t)sys->dim, nd = n * dim;
    double *a1 = scratch, *a2 = a1 + nd, *x1 = a2 + nd, *v1 = x1 + nd;
    const double half_dt = 0.5 * dt;
    ss_forces_acceleration(sys, x, v, a1);
    for (size_t k = 0; k < nd; k++) {
        x1[k] = x[k] + dt * v[k];
        v1[k] = v[k] + dt * a1[k];
    }
    ss_forces_acceleration(sys, x1, v1, a2);
    for (size_t i = 0; i < n; i++)
        for (size_t k = i * dim; k < (i + 1) * dim; k++) {
            x[k] = pinned[i] ? x[k] + v[k] * dt : x[k] + half_dt * (v[k] + v1[k]);
            v[k] = v[k] + half_dt * (a1[k] + a2[k]); /* a1 = a2 = 0 when pinned */
        }
}

size_t ss_integrate_scratch_size(const ss_system *sys, ss_method method) {
    const size_t nd = sys->num_nodes * (size_t)sys->dim;
    switch (method) {
    case SS_VELOCITY_VERLET:
        return 2 * nd;
    case SS_RK2:
        return 4 * nd;
    case SS_RK4:
        return ss_rk4_scratch_doubles(sys);
    case SS_XPBD:
        return ss_xpbd_scratch_size(sys);
    case SS_IMPLICIT_EULER:
        return ss_implicit_scratch_size(sys);
    case SS_VBD:
        return ss_vbd_scratch_size(sys);
    case SS_SYMPLECTIC_EULER:
        return 0; /* the forces live in the plan's force rows */
    default:
        return nd;
    }
}

static double total_energy(const ss_system *sys) {
    ss_energy_terms e;
    ss_energy_in_step(sys, &e);
    return e.kinetic + e.elastic + e.gravity + e.pressure + e.contact;
}

/* Pinned nodes have zero acceleration, so every method leaves their velocity as it
 * is and moves them by exactly v dt: explicit, symplectic and velocity Verlet by
 * construction (v + 0 dt = v), Verlet, RK2 and RK4 by an explicit branch, implicit
 * Euler because pinned nodes are not unknowns of its solve. */
void ss_integrate_substep(ss_system *sys, double dt, ss_method method, double *scratch,
                          double *save_x, double *save_v) {
    if (save_x && method != SS_SYMPLECTIC_EULER) {
        const size_t bytes = sys->num_nodes * (size_t)sys->dim * sizeof(double);
        memcpy(save_x, SS_DOUBLES(sys, SS_POSITIONS), bytes);
        memcpy(save_v, SS_DOUBLES(sys, SS_VELOCITIES), bytes);
    }
    sys->scratch.known_finite = 0;
    ss_colliders_begin_substep(sys);
    /* XPBD's contact constraints: in a substep where any pushed, the books take the
     * energy the substep lost, the external forces' work counted in, never less than 0
     * (xpbd.c). */
    const int xpbd_books =
        method == SS_XPBD && sys->track_energy &&
        (!ss_array_absent(sys, SS_RADII) || ss_self_collision_active(sys) || sys->num_colliders);
    /* VBD's books: the energy its solve took out (the implicit step's own damping, the
     * dashpots' and drag's), the external forces' work counted in: E0 + W - E1, so that
     * they balance exactly (a pass short of convergence may also put a little in). */
    const int vbd_books = method == SS_VBD && sys->track_energy;
    const double solver_before = xpbd_books || vbd_books ? total_energy(sys) : 0.0;
    const double booked_before = sys->state.dissipated;
    switch (method) {
    case SS_EULER:
        step_euler(sys, dt, scratch);
        break;
    case SS_SYMPLECTIC_EULER:
        step_symplectic_euler(sys, dt, save_x, save_v);
        break;
    case SS_VERLET:
        step_verlet(sys, dt, scratch);
        break;
    case SS_VELOCITY_VERLET:
        step_velocity_verlet(sys, dt, scratch);
        break;
    case SS_RK2:
        step_rk2(sys, dt, scratch);
        break;
    case SS_XPBD:
        ss_xpbd_step(sys, dt, scratch);
        break;
    case SS_IMPLICIT_EULER:
        ss_implicit_euler_step(sys, dt, scratch);
        break;
    case SS_VBD:
        ss_vbd_step(sys, dt, scratch);
        break;
    case SS_RK4:
    default:
        ss_step_rk4(sys, dt, scratch);
        break;
    }
    /* Damping and drag: the trapezoid rule on their power over the integration, from
     * the state it started from to the one it reached (before contacts and
     * energy_loss, which count their own losses exactly). */
    double damped = 0.0; /* J, by damping and drag in this substep */
    if (vbd_books) {
        const double lost = solver_before + ss_vbd_external_work(sys, scratch) - total_energy(sys);
        damped = lost;
        sys->state.dissipated += lost;
    } else if (sys->track_energy) {
        const double power = ss_dissipation_power(sys);
        damped = 0.5 * dt * (sys->scratch.power + power);
        sys->state.dissipated += damped;
        sys->scratch.power = power;
    }

    /* The strain limit moves nodes: what it takes (or gives) is the change of the whole
     * energy across it. Contacts count what they dissipate themselves (colliders.c). */
    const int limited = sys->max_strain >= 0.0, corrected = limited || sys->num_colliders;
    if (corrected || sys->energy_loss != 1.0)
        sys->scratch.known_finite = 0; /* what moved the nodes after the check is checked again */
    double before = 0.0;
    if (sys->track_energy && limited)
        before = total_energy(sys);
    const size_t unmet_before = sys->strain_unmet;
    ss_constraints_limit_strain(sys);
    if (sys->track_energy && limited)
        sys->state.dissipated += before - total_energy(sys);
    /* XPBD solved the colliders as constraints (xpbd.c), VBD as contact energy (vbd.c),
     * which leaves the meshes' thin layers to this rule as a safety net */
    if (method != SS_XPBD)
        ss_colliders_apply(sys, damped, method == SS_VBD);
    if (xpbd_books && sys->scratch.xpbd_pushed) {
        /* the energy the substep lost, in place of what damping, drag, the strain limit
         * and the colliders booked by their own rules (which assume no other contact
         * moved the nodes) */
        const double lost = solver_before + sys->scratch.xpbd_work - total_energy(sys);
        sys->state.dissipated = booked_before + (lost > 0.0 ? lost : 0.0);
    }
    /* A collider that pushed a node back out may have stretched a spring the limiter
     * had just shortened: then the limit is not met this substep, and the step says so. */
    if (limited && sys->num_colliders && sys->strain_unmet == unmet_before &&
        ss_constraints_strain_exceeded(sys))
        sys->strain_unmet++;
    const size_t cut_before = sys->num_cut;
    ss_constraints_cut(sys); /* tear: per substep, so chunking a run changes nothing */
    /* Free nodes keep the fraction energy_loss of their velocity. */
    const double keep = sys->energy_loss;
    if (keep != 1.0 && sys->track_energy)
        sys->state.dissipated += (1.0 - keep * keep) * ss_free_kinetic_energy(sys);
    if (keep != 1.0) {
        double *v = SS_DOUBLES(sys, SS_VELOCITIES);
        const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
        const size_t n = sys->num_nodes, dim = (size_t)sys->dim;
        for (size_t i = 0; i < n; i++)
            if (!pinned[i])
                for (size_t k = i * dim; k < (i + 1) * dim; k++)
                    v[k] *= keep;
    }
    if (sys->track_energy && (keep != 1.0 || corrected || sys->num_cut != cut_before))
        sys->scratch.power = ss_dissipation_power(sys); /* the next substep starts from here */
}

/* Nonzero when every value of x and v is finite and every |coordinate| within the
 * bound that scale s stands for (s = 1: none; see divergence.c): 0 * inf and 0 * NaN
 * are NaN, and (x s) s overflows to inf beyond the bound, so one sum tells, and the
 * loop vectorises. */
static int state_is_finite(const ss_system *sys, double s) {
    const double *x = SS_DOUBLES(sys, SS_POSITIONS), *v = SS_DOUBLES(sys, SS_VELOCITIES);
    const size_t nd = sys->num_nodes * (size_t)sys->dim;
    double probe = 0.0;
    for (size_t k = 0; k < nd; k++)
        probe += 0.0 * ((x[k] * s) * s) + 0.0 * v[k];
    return probe == 0.0;
}

static ss_status ensure_scratch(ss_system *sys, size_t doubles) {
    if (doubles == 0)
        doubles = 1; /* never NULL: memcpy(NULL, ..., 0) is undefined behaviour */
    if (sys->scratch.doubles >= doubles)
        return SS_OK;
    if (doubles > SIZE_MAX / sizeof(double) - SS_PAD_DOUBLES)
        return ss_fail(sys, SS_ERR_NOMEM, "out of memory for integrator scratch");
    double *fresh = ss_malloc((doubles + SS_PAD_DOUBLES) * sizeof(double));
    if (!fresh)
        return ss_fail(sys, SS_ERR_NOMEM, "out of memory for integrator scratch");
    ss_free(sys->scratch.buffer);
    sys->scratch.buffer = fresh;
    sys->scratch.doubles = doubles;
    return SS_OK;
}

/* How often (in substeps) a long run checks for blow-up, to stop early. */
#define SS_FINITE_CHECK_EVERY 64

/* Wall-clock seconds, for pacing the caller's poll (C11: no POSIX needed). */
static double wall_seconds(void) {
    struct timespec now;
    if (timespec_get(&now, TIME_UTC) != TIME_UTC)
        return 0.0;
    return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

/* The state a step call started from (ss_state_fields: every state array and the
 * state struct), and how to go back to it. */
typedef struct {
    /* Each state array's copy in scratch, by field; NULL for the previous acceleration
     * unless the method is Verlet (no other method writes it). */
    double *saved[SS_STATE_FIELD_COUNT];
    size_t bytes;
    ss_state state;
} ss_backup;

static void restore(ss_system *sys, const ss_backup *b) {
    for (int f = 0; f < SS_STATE_FIELD_COUNT; f++)
        if (ss_state_fields[f].kind == SS_FIELD_ARRAY && b->saved[f])
            memcpy(SS_DOUBLES(sys, ss_state_fields[f].array), b->saved[f], b->bytes);
    if (sys->drives) /* the drives' counters, and their nodes' velocities before them */
        ss_drives_restore(sys);
    ss_constraints_release_pins(sys); /* the velocities of the nodes the call held */
    ss_constraints_uncut(sys);
    sys->state = b->state;
    ss_self_collision_forget_pending(sys);
}

/* After a rollback: the UnstableError message, with a dt to try. */
static ss_status fail_unstable(ss_system *sys, double dt, ss_method method, double failed_at,
                               double time0, int diverged) {
    if (sys->contact->failed)
        return ss_fail(sys, SS_ERR_NOMEM,
                       "out of memory for node-node contact during a %s step; the system was "
                       "rolled back to t = %g s",
                       ss_method_name(method), time0);
    double limit = INFINITY;
    if (ss_critical_dt(sys, &limit) != SS_OK)
        limit = INFINITY; /* out of memory: fall back to a tenth of dt */
    const double suggest = isfinite(limit) && limit < dt ? 0.5 * limit : 0.1 * dt;
    char why[400] = "", off[80] = "";
    if (diverged) { /* the divergence watch's figures (divergence.c) */
        double motion, available, opened;
        ss_books_failure(sys, &motion, &available, &opened);
        snprintf(why, sizeof why,
                 ": its motion's kinetic + elastic energy reached %.3g J, more than "
                 "divergence_factor = %g times the most energy available to it (%.3g J: what it "
                 "had at t = %g s plus what gravity, external forces, wind, gas and moving pins "
                 "put in since)",
                 motion, sys->divergence_factor, available, opened);
        snprintf(off, sizeof off, ". (divergence_factor = None turns this check off.)");
    }
    if (sys->collapsed_body >= 0)
        return ss_fail(sys, SS_ERR_UNSTABLE,
                       "pressure body %ld turned inside out (its %s reached <= 0) during a "
                       "%s step by t = %g s with dt = %g s; the system was rolled back to "
                       "t = %g s. Its gas could not hold the load: try dt = %.3g s or "
                       "smaller (critical_dt() is %g s), more gas (a larger nrt) or stiffer "
                       "springs",
                       sys->collapsed_body, sys->dim == 2 ? "area" : "volume",
                       ss_method_name(method), failed_at, dt, time0, suggest, limit);
    return ss_fail(sys, SS_ERR_UNSTABLE,
                   "the %s step %s by t = %g s with dt = %g s%s; the system was rolled back to "
                   "t = %g s. The estimated explicit limit critical_dt() is %g s: try dt = "
                   "%.3g s or smaller%s%s",
                   ss_method_name(method), diverged ? "diverged" : "became non-finite", failed_at,
                   dt, why, time0, limit, suggest,
                   method == SS_EULER ? " (or a stable method: explicit euler gains energy "
                                        "on undamped springs at any dt)"
                   : method != SS_IMPLICIT_EULER && method != SS_VBD && dt > 2.0 * limit
                       ? ", or keep dt and use method='implicit_euler' or 'vbd' (backward "
                         "Euler, stable at any dt: it damps the fast motions)"
                       : "",
                   off);
}

static ss_status step_in_ieee_mode(ss_system *sys, double dt, size_t steps, ss_method method,
                                   int books_mode, double contact_dt, const ss_poll *poll);

/* Before each substep after the first: the driven nodes' velocities for it, and the
 * powers that the trapezoid rules of dissipated and of the books start from (the
 * velocities changed). */
static ss_status place_drives(ss_system *sys, double dt, int watched) {
    const ss_status st = ss_drives_place(sys, dt);
    if (st)
        return st;
    if (sys->track_energy)
        sys->scratch.power = ss_dissipation_power(sys);
    if (watched)
        ss_books_pins_placed(sys);
    return SS_OK;
}

ss_status ss_system_step(ss_system *sys, double dt, size_t steps, ss_method method, int books,
                         double contact_dt, const ss_poll *poll) {
    (void)ss_simd_get(); /* the SIMD path, measured on first use before any thread starts */
    const ss_fpstate fp = ss_fp_enter(); /* bit-identical whatever the caller's mode */
    const ss_status st = step_in_ieee_mode(sys, dt, steps, method, books, contact_dt, poll);
    ss_fp_leave(fp);
    return st;
}

static ss_status step_in_ieee_mode(ss_system *sys, double dt, size_t steps, ss_method method,
                                   int books_mode, double contact_dt, const ss_poll *poll) {
    if (!(dt > 0.0) || !isfinite(dt))
        return ss_fail(sys, SS_ERR_VALUE, "dt is %g: must be a positive, finite time in seconds",
                       dt);
    if (!(contact_dt >= 0.0) || !isfinite(contact_dt))
        return ss_fail(sys, SS_ERR_VALUE, "contact_dt is %g: must be a finite time >= 0 s",
                       contact_dt);
    if ((int)method < 0 || method >= SS_METHOD_COUNT)
        return ss_fail(sys, SS_ERR_VALUE, "unknown method %d", (int)method);
    ss_status st = ss_system_validate(sys);
    if (st || (st = ss_system_refuse_rigid(sys, method)) || steps == 0)
        return st;
    /* The clock must stay finite: time + steps dt (the sum of the substeps' dt is within
     * a few ulps of this) below the largest double. */
    if (!isfinite(sys->state.time + (double)steps * dt))
        return ss_fail(sys, SS_ERR_VALUE,
                       "time %g s + %zu steps of %g s would overflow the clock: take fewer or "
                       "shorter steps",
                       sys->state.time, steps, dt);

    if (method == SS_XPBD && sys->num_nodes > SS_XPBD_MAX_NODES)
        return ss_fail(sys, SS_ERR_VALUE, "xpbd steps at most %zu nodes; this system has %zu",
                       SS_XPBD_MAX_NODES, sys->num_nodes);
    /* Scratch: the backup for a rollback (x, v, and a_prev, which only Verlet
     * changes), then the substeps' own. */
    const size_t saved = method == SS_VERLET ? 3 : 2;
    const size_t nd = sys->num_nodes * (size_t)sys->dim;
    if ((method == SS_VERLET && (st = ss_system_materialize(sys, SS_PREV_ACCEL))) ||
        (st = ensure_scratch(sys, saved * nd + ss_integrate_scratch_size(sys, method))) ||
        (st = ss_system_ensure_plan(sys)) ||
        ((method == SS_IMPLICIT_EULER || method == SS_XPBD) &&
         (st = ss_system_ensure_colouring(sys))) ||
        (method == SS_VBD && (st = ss_vbd_ensure_graph(sys))) ||
        (st = ss_constraints_begin_tearing(sys)) || (st = ss_colliders_prepare(sys)) ||
        (st = ss_contact_prepare(sys, contact_dt > 0.0 ? contact_dt : dt, method)))
        return st;
    if (ss_segments_see(sys)) /* the positions segment contact's crossings are counted from */
        return ss_fail(sys, SS_ERR_NOMEM, "out of memory for segment contact");
    ss_system_release_free_memory(sys); /* after the set-up's last large allocation */
    ss_backup backup = {.bytes = nd * sizeof(double), .state = sys->state};
    backup.saved[SS_STATE_POSITIONS] = sys->scratch.buffer;
    backup.saved[SS_STATE_VELOCITIES] = sys->scratch.buffer + nd;
    backup.saved[SS_STATE_PREV_ACCEL] = saved == 3 ? sys->scratch.buffer + 2 * nd : NULL;
    double *const backup_x = backup.saved[SS_STATE_POSITIONS];
    double *substep_scratch = sys->scratch.buffer + saved * nd;
    /* x and v are saved by the first substep (symplectic Euler's node pass saves each
     * node just before it moves it: no pass of its own). */
    if (backup.saved[SS_STATE_PREV_ACCEL])
        memcpy(backup.saved[SS_STATE_PREV_ACCEL], SS_DOUBLES(sys, SS_PREV_ACCEL), backup.bytes);
    if ((st = ss_constraints_hold_pins(sys))) /* before anything reads v */
        return st;
    /* The drives give their nodes the first substep's velocities, before the books open
     * (which then see them move). */
    if (sys->drives && (st = ss_drives_begin(sys, dt))) {
        ss_constraints_release_pins(sys);
        return st;
    }
    sys->scratch.contact_constraints = method == SS_XPBD; /* before any dissipation power */
    if (sys->track_energy)
        sys->scratch.power = ss_dissipation_power(sys);
    if (method != SS_VERLET)
        sys->state.prev_accel_valid = 0; /* another method breaks Verlet's history */
    sys->collapsed_body = -1;
    sys->strain_unmet = 0;
    sys->scratch.xpbd_prepared = 0;
    if (method == SS_IMPLICIT_EULER)
        sys->cg_substeps = sys->cg_capped = 0;
    int watched;
    if ((st = ss_books_begin(sys, books_mode, method, steps, dt, &watched))) {
        if (sys->drives)
            ss_drives_restore(sys);
        ss_constraints_release_pins(sys);
        return st;
    }

    /* The clock is read about every 2^16 node and spring updates (a few tens of
     * microseconds), so that reading it costs nothing next to the substeps, and the
     * poll runs about every SS_POLL_SECONDS. */
    const size_t work = sys->num_nodes + sys->num_springs + 1;
    const size_t clock_every = work >= 65536 ? 1 : 65536 / work;
    double next_poll = poll ? wall_seconds() + SS_POLL_SECONDS : INFINITY;

    for (size_t s = 0; s < steps; s++) {
        double *save_x = s == 0 ? backup_x : NULL;
        double *save_v = s == 0 ? backup.saved[SS_STATE_VELOCITIES] : NULL;
        if (s > 0 && sys->drives && (st = place_drives(sys, dt, watched))) {
            restore(sys, &backup);
            ss_books_close(sys);
            return st; /* a path's target too far, or its hook failed */
        }
        sys->scratch.check_finite = (s + 1) % SS_FINITE_CHECK_EVERY == 0 || s + 1 == steps;
        if (ss_threads_begin_substep(sys)) {
            const double start = wall_seconds();
            ss_integrate_substep(sys, dt, method, substep_scratch, save_x, save_v);
            ss_threads_end_substep(sys, wall_seconds() - start);
        } else {
            ss_integrate_substep(sys, dt, method, substep_scratch, save_x, save_v);
        }
        sys->state.time += dt;
        const int books_due = watched && ss_books_tick(sys, dt, s + 1 == steps);
        if (sys->drives)
            ss_drives_settle(sys); /* the driven nodes on their targets exactly */
        /* the segments that went through each other in this substep, counted (out of
         * memory: not counted) */
        (void)ss_segments_count_crossings(sys);

        if (poll && (s + 1) % clock_every == 0 && s + 1 != steps && wall_seconds() >= next_poll) {
            if (poll->stop(poll->context)) {
                restore(sys, &backup);
                ss_books_close(sys);
                return SS_ERR_INTERRUPTED; /* the caller knows why: no message */
            }
            next_poll = wall_seconds() + SS_POLL_SECONDS;
        }
        if ((s + 1) % SS_FINITE_CHECK_EVERY != 0 && s + 1 != steps && !books_due)
            continue;
        /* Contacts and strain limiting run after the last force evaluation: they can
         * leave a gas body inside out that no force has seen yet. */
        if (sys->collapsed_body < 0 && sys->num_bodies)
            sys->collapsed_body = ss_pressure_first_collapsed(sys);
        /* The energy books too: velocities near 1e154 are finite, but the power of their
         * damping and drag, counted into dissipated, is not. */
        int finite =
            (sys->scratch.known_finite || state_is_finite(sys, sys->scratch.probe_scale)) &&
            isfinite(sys->state.dissipated);
        /* Finite, but a coordinate passed the short calls' bound: their books now. */
        const int beyond = !finite && sys->scratch.probe_scale != 1.0 &&
                           isfinite(sys->state.dissipated) && state_is_finite(sys, 1.0);
        finite |= beyond;
        const int diverged =
            finite && (books_due || beyond) && ss_books_diverged(sys, backup_x, beyond);
        if (finite && sys->collapsed_body < 0 && !diverged)
            continue;
        const double failed_at = sys->state.time;
        restore(sys, &backup);
        ss_books_close(sys);
        return fail_unstable(sys, dt, method, failed_at, backup.state.time,
                             diverged && sys->collapsed_body < 0);
    }
    ss_self_collision_end_step(sys); /* count the nodes that went through a triangle */
    ss_contact_end_step(sys);        /* queries count the contact law from the step at this dt */
    if (watched)
        ss_books_end(sys, backup_x);
    ss_constraints_keep_cuts(sys);
    return SS_OK;
}
