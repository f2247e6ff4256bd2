/* drives.c - drives: nodes that follow a line, per-substep targets or the caller's
 * function of time (drives.h), placed by the step before and after each substep.
 *
 * Before the substep that ends at t = time + dt, every driven node gets the velocity
 *     v = (target - x) / dt                                            [m/s]
 * (pinned, it has no acceleration, so every method moves it by v dt, and the springs'
 * damping, the energies and the books see the velocity it moves at); after the
 * substep it is put on its target exactly, which the rounding of x + v dt may have
 * missed by an ulp. The targets of all the drives are found first, then the velocities
 * set, so that a hook sees the state as the last substep left it. */
#include "springsim.h"

#include <math.h>
#include <string.h>

typedef struct {
    long id;
    int kind;
    size_t count;   /* driven nodes */
    size_t made;    /* the nodes its memory was made for (count, before any was removed) */
    int64_t *nodes; /* (count,) */
    size_t counter, saved_counter;
    double t0;      /* LINE: s */
    size_t steps;   /* TARGETS: rows of targets */
    double *values; /* LINE: (2 count, dim) starts then velocities; TARGETS: (steps, count, dim) */
    size_t width;   /* HOOK: rows the hook fills */
    int64_t *rows;  /* HOOK: (count,) each node's row of them */
    /* (count, dim) this substep's targets; HOOK: then (width, dim) what the hook filled */
    double *target;
    double *saved_v; /* (count, dim) the velocities the call found, for a rollback */
} ss_drive;

struct ss_drives {
    ss_drive *list; /* in the order they were added */
    size_t count, capacity;
};

/* Doubles a drive of `nodes` nodes keeps: its values, its targets. */
static size_t values_doubles(const ss_drive *d, size_t nodes, size_t dim) {
    return d->kind == SS_DRIVE_LINE      ? 2 * nodes * dim
           : d->kind == SS_DRIVE_TARGETS ? d->steps * nodes * dim
                                         : 0;
}
static size_t target_doubles(const ss_drive *d, size_t nodes, size_t dim) {
    return (nodes + (d->kind == SS_DRIVE_HOOK ? d->width : 0)) * dim;
}

static void free_drive(ss_drive *d) {
    ss_free(d->nodes);
    ss_free(d->values);
    ss_free(d->rows);
    ss_free(d->target);
    ss_free(d->saved_v);
}

/* The memory of drive d (its scalars set), or SS_ERR_NOMEM with none of it. */
static ss_status allocate(ss_system *sys, ss_drive *d) {
    const size_t dim = (size_t)sys->dim, values = values_doubles(d, d->count, dim);
    d->made = d->count;
    d->nodes = ss_malloc(d->count * sizeof *d->nodes);
    d->values = values ? ss_malloc(values * sizeof *d->values) : NULL;
    d->rows = d->kind == SS_DRIVE_HOOK ? ss_malloc(d->count * sizeof *d->rows) : NULL;
    d->target = ss_malloc(target_doubles(d, d->count, dim) * sizeof *d->target);
    d->saved_v = ss_malloc(d->count * dim * sizeof *d->saved_v);
    if (!d->nodes || (values && !d->values) || (d->kind == SS_DRIVE_HOOK && !d->rows) ||
        !d->target || !d->saved_v) {
        free_drive(d);
        return ss_fail(sys, SS_ERR_NOMEM, "out of memory for a drive of %zu nodes", d->count);
    }
    return SS_OK;
}

/* Room for `count` drives in sys's list (made if missing), or SS_ERR_NOMEM. */
static ss_status reserve(ss_system *sys, size_t count) {
    struct ss_drives *all = sys->drives;
    if (!all) {
        if (!(all = ss_malloc(sizeof *all)))
            return ss_fail(sys, SS_ERR_NOMEM, "out of memory for a drive");
        *all = (struct ss_drives){0};
        sys->drives = all;
    }
    if (all->capacity >= count)
        return SS_OK;
    const size_t capacity = count > 2 * all->capacity ? count : 2 * all->capacity;
    ss_drive *list = ss_malloc(capacity * sizeof *list);
    if (!list)
        return ss_fail(sys, SS_ERR_NOMEM, "out of memory for a drive");
    if (all->count)
        memcpy(list, all->list, all->count * sizeof *list);
    ss_free(all->list);
    all->list = list;
    all->capacity = capacity;
    return SS_OK;
}

/* Free the list once no drive is left (sys->drives is NULL while there is none). */
static void forget_if_empty(ss_system *sys) {
    struct ss_drives *all = sys->drives;
    if (all && all->count == 0) {
        ss_free(all->list);
        ss_free(all);
        sys->drives = NULL;
    }
}

/* Keep the nodes of drive d whose number is >= 0 (the others were marked -1), with
 * their starts and velocities, columns of targets or rows; in place. Every pass reads
 * the marks before the last one compacts the node numbers. */
static void keep_nodes(ss_drive *d, size_t dim) {
    const size_t old = d->count;
    const int64_t *nodes = d->nodes;
    size_t kept = 0;
    for (size_t q = 0; q < old; q++)
        kept += nodes[q] >= 0;
    if (d->kind == SS_DRIVE_LINE) /* the starts, then the velocities: each row moves down */
        for (size_t half = 0, at = 0; half < 2; half++)
            for (size_t q = 0; q < old; q++)
                if (nodes[q] >= 0)
                    memmove(d->values + (at++) * dim, d->values + (half * old + q) * dim,
                            dim * sizeof(double));
    if (d->kind == SS_DRIVE_TARGETS) /* each step's row of targets, its kept columns */
        for (size_t r = 0, at = 0; r < d->steps; r++)
            for (size_t q = 0; q < old; q++)
                if (nodes[q] >= 0)
                    memmove(d->values + (at++) * dim, d->values + (r * old + q) * dim,
                            dim * sizeof(double));
    if (d->kind == SS_DRIVE_HOOK)
        for (size_t q = 0, at = 0; q < old; q++)
            if (nodes[q] >= 0)
                d->rows[at++] = d->rows[q];
    for (size_t q = 0, at = 0; q < old; q++)
        if (nodes[q] >= 0)
            d->nodes[at++] = nodes[q];
    d->count = kept;
}

/* Keep only the drives with a node left, in order (the list stays, if empty). */
static void drop_empty(ss_system *sys) {
    struct ss_drives *all = sys->drives;
    size_t left = 0;
    for (size_t k = 0; k < all->count; k++) {
        if (all->list[k].count == 0)
            free_drive(&all->list[k]);
        else
            all->list[left++] = all->list[k];
    }
    all->count = left;
}

/* Take the nodes marked in `doomed` (N entries) from every drive; drives left with no
 * node go away (the list stays, if empty: the caller frees it or adds to it). Never
 * fails. */
static void drop_marked(ss_system *sys, const uint8_t *doomed) {
    struct ss_drives *all = sys->drives;
    if (!all)
        return;
    for (size_t k = 0; k < all->count; k++) {
        ss_drive *d = &all->list[k];
        for (size_t q = 0; q < d->count; q++)
            d->nodes[q] = doomed[d->nodes[q]] ? -1 : d->nodes[q];
        keep_nodes(d, (size_t)sys->dim);
    }
    drop_empty(sys);
    sys->pins_unheld = 1; /* a node no longer driven may be moving: the next step holds it */
}

static ss_status check_nodes(ss_system *sys, size_t count, const int64_t *nodes) {
    for (size_t k = 0; k < count; k++)
        if (nodes[k] < 0 || (uint64_t)nodes[k] >= sys->num_nodes)
            return ss_fail(sys, SS_ERR_INDEX,
                           "drive node %zu is %lld, but the system has %zu nodes", k,
                           (long long)nodes[k], sys->num_nodes);
    return SS_OK;
}

static int all_finite(const double *values, size_t count) {
    double probe = 0.0;
    for (size_t k = 0; k < count; k++)
        probe += 0.0 * values[k];
    return probe == 0.0;
}

/* The checks of ss_drives_add, in its order. */
static ss_status check_spec(ss_system *sys, const ss_drive_spec *spec) {
    const size_t dim = (size_t)sys->dim, k = spec->count;
    if (spec->kind != SS_DRIVE_LINE && spec->kind != SS_DRIVE_TARGETS &&
        spec->kind != SS_DRIVE_HOOK)
        return ss_fail(sys, SS_ERR_VALUE, "unknown drive kind %d", spec->kind);
    if (k == 0)
        return ss_fail(sys, SS_ERR_VALUE, "a drive needs at least one node");
    ss_status st = check_nodes(sys, k, spec->nodes);
    if (st)
        return st;
    const size_t rows_limit = SIZE_MAX / 4 / sizeof(double) / dim;
    if (k > rows_limit)
        return ss_fail(sys, SS_ERR_NOMEM, "out of memory for a drive of %zu nodes", k);
    switch (spec->kind) {
    case SS_DRIVE_LINE:
        if (!isfinite(spec->t0) || !all_finite(spec->values, 2 * k * dim))
            return ss_fail(sys, SS_ERR_VALUE, "a drive's start, velocity and t0 must be finite");
        break;
    case SS_DRIVE_TARGETS:
        if (spec->steps == 0)
            return ss_fail(sys, SS_ERR_VALUE, "a drive needs at least one row of targets");
        if (spec->steps > rows_limit / k)
            return ss_fail(sys, SS_ERR_NOMEM, "out of memory for %zu rows of %zu targets",
                           spec->steps, k);
        if (!all_finite(spec->values, spec->steps * k * dim))
            return ss_fail(sys, SS_ERR_VALUE, "path targets must be finite");
        break;
    default: /* SS_DRIVE_HOOK */
        if (spec->width == 0)
            return ss_fail(sys, SS_ERR_VALUE, "a hook drive needs at least one row");
        if (spec->width > rows_limit - k)
            return ss_fail(sys, SS_ERR_NOMEM, "out of memory for a drive of %zu rows", spec->width);
        if (!spec->rows && spec->width != k)
            return ss_fail(sys, SS_ERR_VALUE,
                           "a hook drive of %zu nodes needs their rows among its %zu", k,
                           spec->width);
        for (size_t q = 0; spec->rows && q < k; q++)
            if (spec->rows[q] < 0 || (uint64_t)spec->rows[q] >= spec->width)
                return ss_fail(sys, SS_ERR_VALUE, "row %lld of a hook drive is not in [0, %zu)",
                               (long long)spec->rows[q], spec->width);
    }
    return SS_OK;
}

ss_status ss_drives_add(ss_system *sys, const ss_drive_spec *spec, long *id) {
    const size_t dim = (size_t)sys->dim, k = spec->count;
    ss_status st = check_spec(sys, spec);
    if (st)
        return st;
    ss_drive d = {0};
    d.kind = spec->kind;
    d.count = k;
    d.counter = spec->counter;
    d.t0 = spec->kind == SS_DRIVE_LINE ? spec->t0 : 0.0;
    d.steps = spec->kind == SS_DRIVE_TARGETS ? spec->steps : 0;
    d.width = spec->kind == SS_DRIVE_HOOK ? spec->width : k;
    if ((st = allocate(sys, &d)))
        return st;
    /* The marks that take the nodes from the drives that have them. */
    uint8_t *marks = ss_malloc(sys->num_nodes);
    if (!marks || (st = reserve(sys, (sys->drives ? sys->drives->count : 0) + 1))) {
        ss_free(marks);
        free_drive(&d);
        forget_if_empty(sys);
        return st ? st : ss_fail(sys, SS_ERR_NOMEM, "out of memory for a drive");
    }
    memcpy(d.nodes, spec->nodes, k * sizeof *d.nodes);
    if (d.values)
        memcpy(d.values, spec->values, values_doubles(&d, k, dim) * sizeof *d.values);
    for (size_t q = 0; d.rows && q < k; q++)
        d.rows[q] = spec->rows ? spec->rows[q] : (int64_t)q;
    memset(marks, 0, sys->num_nodes);
    for (size_t q = 0; q < k; q++)
        marks[d.nodes[q]] = 1;
    drop_marked(sys, marks); /* (the list stays, with the room reserved above) */
    ss_free(marks);
    uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    for (size_t q = 0; q < k; q++)
        pinned[d.nodes[q]] = 1;
    d.id = *id = ++sys->last_drive_id;
    sys->drives->list[sys->drives->count++] = d;
    sys->state_edits++;
    sys->pins_unheld = 1;
    return SS_OK;
}

ss_status ss_drives_release(ss_system *sys, size_t count, const int64_t *nodes) {
    ss_status st = check_nodes(sys, count, nodes);
    if (st || !sys->drives || count == 0)
        return st;
    uint8_t *marks = ss_malloc(sys->num_nodes);
    if (!marks)
        return ss_fail(sys, SS_ERR_NOMEM, "out of memory stopping drives");
    memset(marks, 0, sys->num_nodes);
    for (size_t q = 0; q < count; q++)
        marks[nodes[q]] = 1;
    drop_marked(sys, marks);
    ss_free(marks);
    forget_if_empty(sys);
    sys->state_edits++;
    return SS_OK;
}

void ss_drives_clear(ss_system *sys) {
    struct ss_drives *all = sys->drives;
    if (!all)
        return;
    for (size_t k = 0; k < all->count; k++)
        free_drive(&all->list[k]);
    all->count = 0;
    forget_if_empty(sys);
    sys->pins_unheld = 1;
    sys->state_edits++;
}

size_t ss_drives_count(const ss_system *sys) {
    return sys->drives ? sys->drives->count : 0;
}

size_t ss_drives_hooks(const ss_system *sys) {
    size_t hooks = 0;
    for (size_t k = 0; k < ss_drives_count(sys); k++)
        hooks += sys->drives->list[k].kind == SS_DRIVE_HOOK;
    return hooks;
}

long ss_drives_get(const ss_system *sys, size_t which, ss_drive_spec *out) {
    const ss_drive *d = &sys->drives->list[which];
    *out = (ss_drive_spec){d->kind, d->count, d->nodes, d->values, d->steps,
                           d->t0,   d->width, d->rows,  d->counter};
    return d->id;
}

void ss_drives_renumber(ss_system *sys, const int64_t *old_to_new) {
    struct ss_drives *all = sys->drives;
    if (!all)
        return;
    for (size_t k = 0; k < all->count; k++) {
        ss_drive *d = &all->list[k];
        for (size_t q = 0; q < d->count; q++)
            d->nodes[q] = old_to_new[d->nodes[q]]; /* -1: removed */
        keep_nodes(d, (size_t)sys->dim);
    }
    drop_empty(sys);
    forget_if_empty(sys);
}

ss_status ss_drives_copy(ss_system *dst, const ss_system *src) {
    dst->drives = NULL;
    dst->drive_hook = (ss_drive_hook){0};
    const size_t count = ss_drives_count(src), dim = (size_t)src->dim;
    if (count == 0)
        return SS_OK;
    if (reserve(dst, count))
        return SS_ERR_NOMEM;
    for (size_t k = 0; k < count; k++) {
        const ss_drive *from = &src->drives->list[k];
        ss_drive d = *from;
        if (allocate(dst, &d)) {
            ss_drives_clear(dst);
            forget_if_empty(dst);
            return SS_ERR_NOMEM;
        }
        memcpy(d.nodes, from->nodes, d.count * sizeof *d.nodes);
        if (d.values)
            memcpy(d.values, from->values, values_doubles(&d, d.count, dim) * sizeof *d.values);
        if (d.rows)
            memcpy(d.rows, from->rows, d.count * sizeof *d.rows);
        dst->drives->list[dst->drives->count++] = d;
    }
    return SS_OK;
}

void ss_drives_free(ss_system *sys) {
    ss_drives_clear(sys); /* (the last drive gone, its list goes too) */
}

size_t ss_drives_nbytes(const ss_system *sys) {
    const struct ss_drives *all = sys->drives;
    if (!all)
        return 0;
    const size_t dim = (size_t)sys->dim;
    size_t total = sizeof *all + all->capacity * sizeof *all->list;
    for (size_t k = 0; k < all->count; k++) {
        const ss_drive *d = &all->list[k]; /* as made: removing nodes frees nothing */
        total +=
            d->made * sizeof *d->nodes + (d->rows ? d->made * sizeof *d->rows : 0) +
            (values_doubles(d, d->made, dim) + target_doubles(d, d->made, dim) + d->made * dim) *
                sizeof(double);
    }
    return total;
}

/* ---- The step ---------------------------------------------------------- */

/* Drive d's targets at time t (the end of the coming substep) into d->target. */
static ss_status find_targets(ss_system *sys, ss_drive *d, double t) {
    const size_t dim = (size_t)sys->dim, row = d->count * dim;
    switch (d->kind) {
    case SS_DRIVE_LINE: {
        const double since = t - d->t0, *start = d->values, *velocity = d->values + row;
        for (size_t q = 0; q < row; q++)
            d->target[q] = start[q] + velocity[q] * since;
        return SS_OK;
    }
    case SS_DRIVE_TARGETS: {
        const size_t at = d->counter < d->steps - 1 ? d->counter : d->steps - 1;
        memcpy(d->target, d->values + at * row, row * sizeof(double));
        return SS_OK;
    }
    default: { /* SS_DRIVE_HOOK */
        const ss_drive_hook hook = sys->drive_hook;
        if (!hook.targets)
            return ss_fail(sys, SS_ERR_VALUE, "drive %ld follows a function, and no hook is set",
                           d->id);
        double *filled = d->target + row;
        if (hook.targets(hook.context, d->id, t, d->width, filled))
            return ss_fail(sys, SS_ERR_HOOK, "the path of drive %ld failed at t = %g s", d->id, t);
        for (size_t q = 0; q < d->count; q++)
            memcpy(d->target + q * dim, filled + (size_t)d->rows[q] * dim, dim * sizeof(double));
        return SS_OK;
    }
    }
}

ss_status ss_drives_place(ss_system *sys, double dt) {
    struct ss_drives *all = sys->drives;
    const size_t dim = (size_t)sys->dim;
    const double t = sys->state.time + dt;
    ss_status st;
    for (size_t k = 0; k < all->count; k++) /* every target first: a hook sees the state */
        if ((st = find_targets(sys, &all->list[k], t)))
            return st;
    const double *x = SS_DOUBLES(sys, SS_POSITIONS);
    double *v = SS_DOUBLES(sys, SS_VELOCITIES);
    for (size_t k = 0; k < all->count; k++) {
        const ss_drive *d = &all->list[k];
        for (size_t q = 0; q < d->count; q++) {
            const size_t i = (size_t)d->nodes[q] * dim;
            for (size_t c = 0; c < dim; c++) {
                const double velocity = (d->target[q * dim + c] - x[i + c]) / dt;
                if (!isfinite(velocity))
                    return ss_fail(sys, SS_ERR_VALUE,
                                   "the drive path's target at t = %g s is too far to reach in "
                                   "one substep: its velocity is not finite",
                                   t);
                v[i + c] = velocity;
            }
        }
    }
    return SS_OK;
}

ss_status ss_drives_begin(ss_system *sys, double dt) {
    struct ss_drives *all = sys->drives;
    const size_t dim = (size_t)sys->dim;
    const double *v = SS_DOUBLES(sys, SS_VELOCITIES);
    for (size_t k = 0; k < all->count; k++) {
        ss_drive *d = &all->list[k];
        d->saved_counter = d->counter;
        for (size_t q = 0; q < d->count; q++)
            memcpy(d->saved_v + q * dim, v + (size_t)d->nodes[q] * dim, dim * sizeof(double));
    }
    const ss_status st = ss_drives_place(sys, dt);
    if (st)
        ss_drives_restore(sys);
    return st;
}

void ss_drives_settle(ss_system *sys) {
    struct ss_drives *all = sys->drives;
    const size_t dim = (size_t)sys->dim;
    double *x = SS_DOUBLES(sys, SS_POSITIONS);
    for (size_t k = 0; k < all->count; k++) {
        ss_drive *d = &all->list[k];
        for (size_t q = 0; q < d->count; q++)
            memcpy(x + (size_t)d->nodes[q] * dim, d->target + q * dim, dim * sizeof(double));
        d->counter++;
    }
}

void ss_drives_restore(ss_system *sys) {
    struct ss_drives *all = sys->drives;
    const size_t dim = (size_t)sys->dim;
    double *v = SS_DOUBLES(sys, SS_VELOCITIES);
    for (size_t k = 0; k < all->count; k++) {
        ss_drive *d = &all->list[k];
        d->counter = d->saved_counter;
        for (size_t q = 0; q < d->count; q++)
            memcpy(v + (size_t)d->nodes[q] * dim, d->saved_v + q * dim, dim * sizeof(double));
    }
}
