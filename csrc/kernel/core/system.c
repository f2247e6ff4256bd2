/* system.c - storage: the arrays of a system, their growth, and the validation every
 * step relies on (allocation is memory.c's; adding and removing rows is topology.c's). */
#include "springsim.h"
#include "storage.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- Method names ------------------------------------------------------ */

static const char *const method_names[SS_METHOD_COUNT] = {
    "euler", "symplectic_euler", "verlet", "velocity_verlet", "rk2", "rk4",
    "xpbd",  "implicit_euler",   "vbd",
};

const char *ss_method_name(int method) {
    return (method >= 0 && method < SS_METHOD_COUNT) ? method_names[method] : NULL;
}

int ss_method_from_name(const char *name) {
    for (int m = 0; m < SS_METHOD_COUNT; m++)
        if (strcmp(name, method_names[m]) == 0)
            return m;
    return -1;
}

/* ---- Array geometry ---------------------------------------------------- */

size_t ss_array_columns(const ss_system *sys, ss_array which) {
    switch (which) {
    case SS_POSITIONS:
    case SS_VELOCITIES:
    case SS_EXTERNAL:
    case SS_PREV_ACCEL:
    case SS_REST_POSITIONS:
        return (size_t)sys->dim;
    case SS_SPRINGS:
    case SS_UVS:
        return 2;
    case SS_FACES:
        return 3;
    default:
        return 1;
    }
}

size_t ss_array_itemsize(ss_array which) {
    switch (which) {
    case SS_PINNED:
        return sizeof(uint8_t);
    case SS_SPRINGS:
    case SS_FACES:
    case SS_GROUPS:
        return sizeof(int32_t);
    default:
        return sizeof(double);
    }
}

size_t ss_array_rows(const ss_system *sys, ss_array which) {
    if (which < SS_NODE_ARRAYS)
        return sys->num_nodes;
    return which < SS_FACES ? sys->num_springs : sys->num_faces;
}

/* ---- Life cycle -------------------------------------------------------- */

ss_system *ss_system_new(int dim) {
    if (dim != 2 && dim != 3)
        return NULL;
    ss_system *sys = ss_malloc(sizeof *sys);
    if (!sys)
        return NULL;
    memset(sys, 0, sizeof *sys);
    sys->dim = dim;
    sys->gravity[1] = -9.81;
    sys->energy_loss = 1.0;
    sys->air_density = 1.2; /* kg/m^3: air at sea level, 20 C */
    sys->max_strain = -1.0;
    sys->iterations = 10;
    sys->method = SS_SYMPLECTIC_EULER;
    sys->collapsed_body = -1;
    sys->cg_tolerance = 1e-8;
    sys->cg_max_iterations = 1000;
    sys->last_cg_residual = NAN; /* no solve yet */
    sys->divergence_factor = SS_DIVERGENCE_FACTOR;
    sys->scratch.probe_scale = 1.0;
    sys->unchecked = ~0u;
    sys->absent = SS_COLD_ARRAYS;
    sys->contact = ss_contact_new();
    if (!sys->contact) {
        ss_free(sys);
        return NULL;
    }
    for (int a = 0; a < SS_ARRAY_COUNT; a++) {
        sys->arrays[a] = ss_buffer_new(0);
        if (!sys->arrays[a]) {
            ss_system_free(sys);
            return NULL;
        }
    }
    return sys;
}

void ss_system_topology_changed(ss_system *sys) {
    sys->topology_edits++;
    ss_colouring_forget(sys);
    ss_vbd_forget(sys);
    ss_plan_free(sys->scratch.plan);
    sys->scratch.plan = NULL;
    ss_colliders_forget(sys);
}

void ss_system_free(ss_system *sys) {
    if (!sys)
        return;
    for (int a = 0; a < SS_ARRAY_COUNT; a++)
        ss_buffer_release(sys->arrays[a]);
    ss_free(sys->scratch.buffer);
    ss_vbd_forget(sys);
    for (size_t k = 0; k < sys->num_colliders; k++)
        ss_mesh_free(sys->colliders[k].mesh);
    ss_free(sys->colliders);
    ss_free(sys->broken);
    ss_free(sys->cut);
    ss_free(sys->cut_saved);
    ss_free(sys->scratch.held);
    ss_free(sys->scratch.held_v);
    ss_pressure_free(sys);
    ss_contact_free(sys->contact);
    ss_self_collision_free(sys);
    ss_books_free(sys->scratch.books);
    ss_drives_free(sys);
    ss_system_topology_changed(sys);
    ss_free(sys);
}

ss_system *ss_system_copy(const ss_system *src) {
    ss_system *dst = ss_malloc(sizeof *dst);
    if (!dst)
        return NULL;
    *dst = *src; /* the model's settings and the state struct, as they are */
    /* A copy starts with no scratch: it is rebuilt on the copy's first step, and the
     * thread tuner probes afresh. The books close on both sides (below). */
    memset(&dst->scratch, 0, sizeof dst->scratch);
    dst->scratch.probe_scale = 1.0;
    dst->colliders = NULL;
    dst->collider_capacity = 0;
    dst->self_collision = NULL; /* copied below, with the bodies */
    dst->drives = NULL;         /* likewise: the copy's drives have their own counters */
    dst->broken = NULL;         /* the record of torn springs stays with the original */
    dst->num_broken = dst->broken_capacity = 0;
    /* Springs cut but not yet removed (deferred tearing, as inside run()) go with the
     * copy, so that it removes them at its next tear as the original does. */
    dst->cut = NULL;
    dst->cut_saved = NULL;
    if (src->cut) {
        const size_t m = src->num_springs ? src->num_springs : 1;
        dst->cut = ss_malloc(m);
        dst->cut_saved = ss_malloc(2 * m * sizeof(double));
        dst->cut_capacity = m;
        if (!dst->cut || !dst->cut_saved) {
            ss_free(dst->cut);
            ss_free(dst->cut_saved);
            ss_free(dst);
            return NULL;
        }
        memcpy(dst->cut, src->cut, src->num_springs);
        memcpy(dst->cut_saved, src->cut_saved, 2 * src->num_springs * sizeof(double));
    }
    if (src->num_colliders) {
        dst->colliders = ss_malloc(src->num_colliders * sizeof *dst->colliders);
        if (!dst->colliders) {
            ss_free(dst->cut);
            ss_free(dst->cut_saved);
            ss_free(dst);
            return NULL;
        }
        memcpy(dst->colliders, src->colliders, src->num_colliders * sizeof *dst->colliders);
        dst->collider_capacity = src->num_colliders;
        int copied = 1; /* each mesh collider owns its mesh: the copy gets its own */
        for (size_t k = 0; k < src->num_colliders; k++)
            if (!copied)
                dst->colliders[k].mesh = NULL;
            else if (src->colliders[k].mesh &&
                     !(dst->colliders[k].mesh = ss_mesh_copy(src->colliders[k].mesh)))
                copied = 0;
        if (!copied) {
            for (size_t k = 0; k < src->num_colliders; k++)
                ss_mesh_free(dst->colliders[k].mesh);
            ss_free(dst->colliders);
            ss_free(dst->cut);
            ss_free(dst->cut_saved);
            ss_free(dst);
            return NULL;
        }
    }
    ss_books_forget(src); /* the copy starts its own books, and so does the original */
    dst->unchecked = ~0u; /* the original may hold unchecked writes: check once */
    for (int a = 0; a < SS_ARRAY_COUNT; a++)
        dst->arrays[a] = NULL;
    dst->contact = ss_contact_copy(src->contact); /* the law and filter; the scratch is rebuilt */
    if (!dst->contact || ss_pressure_copy(dst, src) != SS_OK ||
        ss_self_collision_copy(dst, src) != SS_OK || ss_drives_copy(dst, src) != SS_OK) {
        ss_system_free(dst);
        return NULL;
    }
    for (int a = 0; a < SS_ARRAY_COUNT; a++) {
        size_t bytes = ss_array_rows(src, a) * ss_array_columns(src, a) * ss_array_itemsize(a);
        if (ss_array_absent(src, a))
            bytes = 0; /* absent in the copy too (dst->absent is src's) */
        dst->arrays[a] = ss_buffer_new(bytes);
        if (!dst->arrays[a]) {
            ss_system_free(dst);
            return NULL;
        }
        memcpy(dst->arrays[a]->data, src->arrays[a]->data, bytes);
    }
    return dst;
}

/* ---- Growth ------------------------------------------------------------ */

/* Make arrays [first, last) hold `rows` rows, keeping their first `keep` rows, and
 * make each one this system's alone (refcount 1), so the caller may write it.
 *
 * An array still shown by a NumPy view is never resized or rewritten in place:
 * it moves to a new block, and the view keeps the old data unchanged. All or
 * nothing: on failure no array has changed. */
ss_status ss_reserve_rows(ss_system *sys, ss_array first, ss_array last, size_t rows, size_t keep) {
    ss_buffer *fresh[SS_ARRAY_COUNT] = {0};
    for (ss_array a = first; a < last; a++) {
        if (ss_array_absent(sys, a))
            continue; /* no memory until used: it grows with its first use */
        size_t row_bytes = ss_array_columns(sys, a) * ss_array_itemsize(a);
        if (rows > SIZE_MAX / 2 / row_bytes)
            goto nomem;
        size_t need = rows * row_bytes;
        ss_buffer *old = sys->arrays[a];
        if (old->refcount == 1 && old->capacity >= need)
            continue;
        size_t capacity = old->capacity >= need ? old->capacity : need;
        if (need > old->capacity && capacity < 2 * old->capacity)
            capacity = 2 * old->capacity; /* amortised O(1) appends */
        fresh[a] = ss_buffer_new(capacity);
        if (!fresh[a])
            goto nomem;
    }
    for (ss_array a = first; a < last; a++) {
        if (!fresh[a])
            continue;
        size_t row_bytes = ss_array_columns(sys, a) * ss_array_itemsize(a);
        memcpy(fresh[a]->data, sys->arrays[a]->data, keep * row_bytes);
        ss_buffer_release(sys->arrays[a]);
        sys->arrays[a] = fresh[a];
        sys->grew = 1;
    }
    return SS_OK;

nomem:
    for (ss_array a = first; a < last; a++)
        ss_buffer_release(fresh[a]);
    return ss_fail(sys, SS_ERR_NOMEM, "out of memory growing the system to %zu rows", rows);
}

/* ---- Checks ------------------------------------------------------------ */

/* Index of the first non-finite value in v[0..n), or n. */
static size_t first_non_finite(const double *v, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return i;
    return n;
}

/* Index of the first value not finite or below `low` (or not above it, if strict). */
static size_t first_out_of_domain(const double *v, size_t n, double low, int strict) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]) || v[i] < low || (strict && v[i] == low))
            return i;
    return n;
}

ss_status ss_check_finite(ss_system *sys, const char *what, const double *v, size_t n) {
    size_t dim = (size_t)sys->dim;
    size_t bad = first_non_finite(v, n * dim);
    if (bad < n * dim)
        return ss_fail(sys, SS_ERR_VALUE, "%s of node %zu is %g: must be finite", what, bad / dim,
                       v[bad]);
    return SS_OK;
}

ss_status ss_check_masses(ss_system *sys, const double *m, size_t n, size_t offset) {
    size_t bad = first_out_of_domain(m, n, 0.0, 1);
    if (bad < n)
        return ss_fail(sys, SS_ERR_VALUE, "mass of node %zu is %g: must be finite and > 0 kg",
                       offset + bad, m[bad]);
    return SS_OK;
}

ss_status ss_check_spring_values(ss_system *sys, const char *what, const char *unit,
                                 const double *v, size_t n, size_t offset) {
    size_t bad = first_out_of_domain(v, n, 0.0, 0);
    if (bad < n)
        return ss_fail(sys, SS_ERR_VALUE, "%s of spring %zu is %g: must be finite and >= 0 %s",
                       what, offset + bad, v[bad], unit);
    return SS_OK;
}

/* Stiffness may be +inf: a rigid rod (for xpbd; force-based methods cannot step it). */
ss_status ss_check_stiffness(ss_system *sys, const double *k, size_t n) {
    for (size_t s = 0; s < n; s++)
        if (!(k[s] >= 0.0))
            return ss_fail(sys, SS_ERR_VALUE,
                           "stiffness of spring %zu is %g: must be >= 0 N/m (inf: a rigid rod)", s,
                           k[s]);
    return SS_OK;
}

ss_status ss_system_refuse_rigid(ss_system *sys, ss_method method) {
    if (method == SS_XPBD || !sys->rigid)
        return SS_OK;
    const double *k = SS_DOUBLES(sys, SS_STIFFNESS);
    size_t count = 0;
    char springs[160] = "";
    for (size_t s = 0; s < sys->num_springs; s++)
        if (isinf(k[s]) && count++ < 8) {
            const size_t used = strlen(springs);
            snprintf(springs + used, sizeof springs - used, "%s%zu", used ? ", " : "", s);
        }
    if (count == 0) {
        sys->rigid = 0; /* the rods were removed or given a finite stiffness */
        return SS_OK;
    }
    char more[48] = "";
    if (count > 8)
        snprintf(more, sizeof more, " and %zu more", count - 8);
    return ss_fail(sys, SS_ERR_VALUE,
                   "%s %s%s %s (stiffness inf), which method '%s' cannot step: it integrates "
                   "spring forces, and a rod has no finite force law. Use method='xpbd', which "
                   "holds rigid rods at their rest length, or give %s a finite stiffness",
                   count == 1 ? "spring" : "springs", springs, more,
                   count == 1 ? "is a rigid rod" : "are rigid rods", ss_method_name(method),
                   count == 1 ? "it" : "them");
}

static ss_status check_vector(ss_system *sys, const char *what, const double *v) {
    if (first_non_finite(v, (size_t)sys->dim) < (size_t)sys->dim)
        return ss_fail(sys, SS_ERR_VALUE, "%s must be finite", what);
    return SS_OK;
}

static ss_status check_break_strains(ss_system *sys, const double *b, size_t n) {
    for (size_t s = 0; s < n; s++)
        if (!(b[s] >= 0.0)) /* inf allowed: never breaks */
            return ss_fail(sys, SS_ERR_VALUE, "break strain of spring %zu is %g: must be >= 0", s,
                           b[s]);
    return SS_OK;
}

static ss_status check_radii(ss_system *sys, const double *r, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!(r[i] >= 0.0) || !isfinite(r[i]))
            return ss_fail(sys, SS_ERR_VALUE,
                           "contact radius of node %zu is %g: must be finite and >= 0 m", i, r[i]);
    return SS_OK;
}

static ss_status check_uvs(ss_system *sys, const double *uv, size_t n) {
    size_t bad = first_non_finite(uv, 2 * n);
    if (bad < 2 * n)
        return ss_fail(sys, SS_ERR_VALUE, "uv of node %zu is %g: must be finite", bad / 2, uv[bad]);
    return SS_OK;
}

/* Pinned flags are bools: a byte other than 0 or 1 (written through a view of another
 * dtype) is not a value NumPy, save() or load() can represent. */
static ss_status check_pinned(ss_system *sys, const uint8_t *pinned, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (pinned[i] > 1)
            return ss_fail(sys, SS_ERR_VALUE,
                           "pinned flag of node %zu is the byte %u: must be 0 or 1 (a bool)", i,
                           (unsigned)pinned[i]);
    return SS_OK;
}

/* Nonzero when some of the m break strains is finite (a spring can tear). */
static int any_finite(const ss_system *sys, size_t m) {
    const double *limit = SS_DOUBLES(sys, SS_BREAK_STRAINS);
    for (size_t s = 0; s < m; s++)
        if (isfinite(limit[s]))
            return 1;
    return 0;
}

/* Nonzero when array a may hold values nobody checked: a view was made of it since the
 * last validation (py_views.c marks it), or one still shows it (its block is shared). */
static int unchecked(const ss_system *sys, ss_array a) {
    if (ss_array_absent(sys, a))
        return 0; /* its defaults are valid */
    return (sys->unchecked >> a & 1u) || sys->arrays[a]->refcount > 1;
}

ss_status ss_system_materialize(ss_system *sys, ss_array which) {
    if (!ss_array_absent(sys, which))
        return SS_OK;
    const size_t rows = ss_array_rows(sys, which), columns = ss_array_columns(sys, which);
    ss_buffer *fresh = ss_buffer_new(rows * columns * ss_array_itemsize(which));
    if (!fresh)
        return ss_fail(sys, SS_ERR_NOMEM, "out of memory for an array of %zu rows", rows);
    double *data = fresh->data;
    if (which == SS_BREAK_STRAINS) /* the only default that is not all-zero bytes */
        for (size_t k = 0; k < rows * columns; k++)
            data[k] = INFINITY;
    else /* groups are int32: a double fill would overrun the block */
        memset(data, 0, rows * columns * ss_array_itemsize(which));
    ss_buffer_release(sys->arrays[which]);
    sys->arrays[which] = fresh;
    sys->absent &= ~(1u << which);
    sys->grew = 1;
    return SS_OK;
}

void ss_system_mark_unchecked(ss_system *sys, ss_array which) {
    sys->unchecked |= 1u << which;
}

/* Only arrays that can have changed are read: the kernel's own writes are checked by
 * the step (finite, gas not inside out), and every other writer checks what it
 * writes, but for writes through a view. A step loop that holds no view checks
 * nothing here. */
ss_status ss_system_validate(ss_system *sys) {
    size_t n = sys->num_nodes, m = sys->num_springs;
    ss_status st;
#define SS_IF(a, check) (unchecked(sys, (a)) && (st = (check)))
    if (SS_IF(SS_POSITIONS, ss_check_finite(sys, "position", SS_DOUBLES(sys, SS_POSITIONS), n)) ||
        SS_IF(SS_VELOCITIES, ss_check_finite(sys, "velocity", SS_DOUBLES(sys, SS_VELOCITIES), n)) ||
        SS_IF(SS_EXTERNAL,
              ss_check_finite(sys, "external force", SS_DOUBLES(sys, SS_EXTERNAL), n)) ||
        SS_IF(SS_MASSES, ss_check_masses(sys, SS_DOUBLES(sys, SS_MASSES), n, 0)) ||
        (unchecked(sys, SS_MASSES) && (ss_plan_refresh_masses(sys), 0)) ||
        SS_IF(SS_PINNED, check_pinned(sys, SS_BYTES(sys, SS_PINNED), n)) ||
        SS_IF(SS_PREV_ACCEL,
              ss_check_finite(sys, "previous acceleration", SS_DOUBLES(sys, SS_PREV_ACCEL), n)) ||
        SS_IF(SS_UVS, check_uvs(sys, SS_DOUBLES(sys, SS_UVS), n)) ||
        SS_IF(SS_RADII, check_radii(sys, SS_DOUBLES(sys, SS_RADII), n)) ||
        SS_IF(SS_REST_POSITIONS,
              ss_check_finite(sys, "rest position", SS_DOUBLES(sys, SS_REST_POSITIONS), n)) ||
        SS_IF(SS_REST_LENGTHS, ss_check_spring_values(sys, "rest length", "m",
                                                      SS_DOUBLES(sys, SS_REST_LENGTHS), m, 0)) ||
        SS_IF(SS_STIFFNESS, ss_check_stiffness(sys, SS_DOUBLES(sys, SS_STIFFNESS), m)) ||
        (unchecked(sys, SS_STIFFNESS) && (sys->rigid = 1, 0)) || /* a step looks for rods */
        SS_IF(SS_DAMPING,
              ss_check_spring_values(sys, "damping", "N*s/m", SS_DOUBLES(sys, SS_DAMPING), m, 0)) ||
        SS_IF(SS_BREAK_STRAINS, check_break_strains(sys, SS_DOUBLES(sys, SS_BREAK_STRAINS), m)) ||
        (unchecked(sys, SS_BREAK_STRAINS) && (sys->breakable = any_finite(sys, m), 0)) ||
        SS_IF(SS_POSITIONS, ss_pressure_validate(sys)) ||
        (st = check_vector(sys, "gravity", sys->gravity)) ||
        (st = check_vector(sys, "wind", sys->wind)))
        return st;
#undef SS_IF
    if (!isfinite(sys->drag) || sys->drag < 0)
        return ss_fail(sys, SS_ERR_VALUE, "drag is %g: must be finite and >= 0 N*s/m", sys->drag);
    if ((st = ss_aero_check(sys, sys->air_density, sys->drag_coeff)))
        return st;
    if (!(sys->energy_loss >= 0 && sys->energy_loss <= 1))
        return ss_fail(sys, SS_ERR_VALUE, "energy_loss is %g: must be in [0, 1]", sys->energy_loss);
    if (!isfinite(sys->state.time))
        return ss_fail(sys, SS_ERR_VALUE, "time is %g: must be finite", sys->state.time);
    if (unchecked(sys, SS_VELOCITIES) || unchecked(sys, SS_PINNED))
        sys->pins_unheld = 1; /* written through a view: the next step call looks */
    /* An array a view still shows stays marked: the view can be written after this
     * check and dropped before the next one, which must then still read it. */
    uint32_t viewed = 0;
    for (int a = 0; a < SS_ARRAY_COUNT; a++)
        if (sys->arrays[a]->refcount > 1)
            viewed |= 1u << a;
    sys->unchecked = viewed;
    return SS_OK;
}

/* Check values for array `which` as the kernel requires them (rows from `offset`). */
static ss_status check_array(ss_system *sys, ss_array which, const void *data, size_t rows) {
    switch (which) {
    case SS_POSITIONS:
        return ss_check_finite(sys, "position", data, rows);
    case SS_VELOCITIES:
        return ss_check_finite(sys, "velocity", data, rows);
    case SS_EXTERNAL:
        return ss_check_finite(sys, "external force", data, rows);
    case SS_MASSES:
        return ss_check_masses(sys, data, rows, 0);
    case SS_REST_LENGTHS:
        return ss_check_spring_values(sys, "rest length", "m", data, rows, 0);
    case SS_STIFFNESS:
        return ss_check_stiffness(sys, data, rows);
    case SS_DAMPING:
        return ss_check_spring_values(sys, "damping", "N*s/m", data, rows, 0);
    case SS_BREAK_STRAINS:
        return check_break_strains(sys, data, rows);
    case SS_PREV_ACCEL:
        return ss_check_finite(sys, "previous acceleration", data, rows);
    case SS_REST_POSITIONS:
        return ss_check_finite(sys, "rest position", data, rows);
    case SS_UVS:
        return check_uvs(sys, data, rows);
    case SS_RADII:
        return check_radii(sys, data, rows);
    case SS_PINNED:
    case SS_GROUPS: /* any int32 names a group */
        return SS_OK;
    default:
        return ss_fail(sys, SS_ERR_VALUE, "this array cannot be assigned");
    }
}

ss_status ss_system_set_array(ss_system *sys, ss_array which, const void *data) {
    size_t rows = ss_array_rows(sys, which);
    ss_status st = check_array(sys, which, data, rows);
    if (st || (st = ss_system_materialize(sys, which)))
        return st;
    size_t bytes = rows * ss_array_columns(sys, which) * ss_array_itemsize(which);
    memmove(sys->arrays[which]->data, data, bytes); /* data may be a view of this array */
    ss_system_mark_unchecked(sys, which); /* what the row checks cannot see: gas volumes */
    sys->state_edits++;
    if (which == SS_PINNED)
        for (size_t i = 0; i < rows; i++)
            SS_BYTES(sys, SS_PINNED)[i] = SS_BYTES(sys, SS_PINNED)[i] != 0;
    return SS_OK;
}
