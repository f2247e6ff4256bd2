/* state.c - the state's one definition: the table of what a step changes.
 *
 * The model says what the system is, the state where it is now (springsim.h, ss_state).
 * Every piece of code that keeps or restores a state reads this table, so that none can
 * forget a field: a step's rollback (integrate.c, driven nodes included), copy() (which
 * copies the struct and every array), and in Python pickling and the save format
 * (springsim.files.npz: one entry per field, by these names), through
 * _core.STATE_FIELDS, System._state() and System._set_state() (py_state.c). */
#include "springsim.h"
#include "storage.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

const ss_state_field ss_state_fields[SS_STATE_FIELD_COUNT] = {
    [SS_STATE_POSITIONS] = {"positions", SS_FIELD_ARRAY, SS_POSITIONS, 0},
    [SS_STATE_VELOCITIES] = {"velocities", SS_FIELD_ARRAY, SS_VELOCITIES, 0},
    [SS_STATE_PREV_ACCEL] = {"_prev_accel", SS_FIELD_ARRAY, SS_PREV_ACCEL, 0},
    [SS_STATE_VERLET_VALID] = {"_verlet_valid", SS_FIELD_FLAG, 0,
                               offsetof(ss_state, prev_accel_valid)},
    [SS_STATE_TIME] = {"time", SS_FIELD_REAL, 0, offsetof(ss_state, time)},
    [SS_STATE_DISSIPATED] = {"dissipated", SS_FIELD_REAL, 0, offsetof(ss_state, dissipated)},
    [SS_STATE_CROSSINGS] = {"crossings", SS_FIELD_COUNT, 0, offsetof(ss_state, crossings)},
    [SS_STATE_CONTACT_DT] = {"contact_dt", SS_FIELD_REAL, 0, offsetof(ss_state, contact_dt)},
};

ss_status ss_system_set_state(ss_system *sys, const double *const arrays[SS_STATE_FIELD_COUNT],
                              const ss_state *state) {
    const size_t n = sys->num_nodes;
    ss_status st;
    for (int f = 0; f < SS_STATE_FIELD_COUNT; f++)
        if (ss_state_fields[f].kind == SS_FIELD_ARRAY &&
            (st = ss_check_finite(sys, ss_state_fields[f].name, arrays[f], n)))
            return st;
    if (!isfinite(state->time))
        return ss_fail(sys, SS_ERR_VALUE, "time is %g: must be finite", state->time);
    if (!isfinite(state->dissipated))
        return ss_fail(sys, SS_ERR_VALUE, "dissipated is %g J: must be finite", state->dissipated);
    if (!(state->contact_dt >= 0.0) || !isfinite(state->contact_dt))
        return ss_fail(sys, SS_ERR_VALUE, "contact_dt is %g s: must be finite and >= 0",
                       state->contact_dt);
    if (state->prev_accel_valid != 0 && state->prev_accel_valid != 1)
        return ss_fail(sys, SS_ERR_VALUE, "_verlet_valid must be 0 or 1");
    if (state->crossings && !sys->self_collision)
        return ss_fail(sys, SS_ERR_VALUE,
                       "self_collision_crossings = %zu, but self-collision is off",
                       state->crossings);
    for (int f = 0; f < SS_STATE_FIELD_COUNT; f++) /* the only step that can fail: memory */
        if (ss_state_fields[f].kind == SS_FIELD_ARRAY &&
            (st = ss_system_materialize(sys, ss_state_fields[f].array)))
            return st;
    for (int f = 0; f < SS_STATE_FIELD_COUNT; f++)
        if (ss_state_fields[f].kind == SS_FIELD_ARRAY) {
            const ss_array a = ss_state_fields[f].array;
            memmove(SS_DOUBLES(sys, a), arrays[f], n * (size_t)sys->dim * sizeof(double));
            ss_system_mark_unchecked(sys, a); /* gas volumes, pins: the next step looks */
        }
    sys->state = *state;
    ss_self_collision_forget_pending(sys);
    sys->state_edits++;
    return SS_OK;
}
