/* topology.c - editing a system's topology: adding nodes, springs and faces, pins,
 * removing springs and nodes (the arrays and their checks are system.c's). */
#include "springsim.h"
#include "storage.h"

#include <math.h>
#include <string.h>

/* ---- Nodes ------------------------------------------------------------- */

/* ---- Torn-spring marks ------------------------------------------------ */

/* Topology edits while cuts are pending (deferred tearing): make room for `springs`
 * springs in the cut marks (new springs are whole), ... */
static ss_status reserve_cut_marks(ss_system *sys, size_t springs) {
    if (!sys->cut || springs <= sys->num_springs)
        return SS_OK;
    uint8_t *cut = ss_malloc(springs);
    double *saved = ss_malloc(2 * springs * sizeof(double));
    if (!cut || !saved) {
        ss_free(cut);
        ss_free(saved);
        return ss_fail(sys, SS_ERR_NOMEM, "out of memory growing the torn-spring marks");
    }
    const size_t m = sys->num_springs;
    memcpy(cut, sys->cut, m);
    memset(cut + m, 0, springs - m);
    memcpy(saved, sys->cut_saved, 2 * m * sizeof(double));
    ss_free(sys->cut);
    ss_free(sys->cut_saved);
    sys->cut = cut;
    sys->cut_saved = saved;
    sys->cut_capacity = springs;
    return SS_OK;
}

/* ... and, after springs s < `springs` with doomed[s] were removed, drop their marks,
 * the others keeping their order. */
static void compact_cut_marks(ss_system *sys, const uint8_t *doomed, size_t springs) {
    if (!sys->cut)
        return;
    /* Writes go to cut[kept] with kept <= s, so doomed == sys->cut reads each mark
     * before it can be overwritten. */
    size_t kept = 0;
    for (size_t s = 0; s < springs; s++) {
        if (doomed[s]) {
            sys->num_cut -= sys->cut[s] != 0;
            continue;
        }
        sys->cut[kept] = sys->cut[s];
        sys->cut_saved[2 * kept] = sys->cut_saved[2 * s];
        sys->cut_saved[2 * kept + 1] = sys->cut_saved[2 * s + 1];
        kept++;
    }
}

ss_status ss_system_add_nodes(ss_system *sys, size_t count, const double *x, const double *v,
                              const double *m, const uint8_t *pinned, size_t *first) {
    size_t n = sys->num_nodes, dim = (size_t)sys->dim;
    ss_status st;
    *first = n;
    if (count > (size_t)INT32_MAX - n)
        return ss_fail(sys, SS_ERR_VALUE, "a system holds at most %d nodes", INT32_MAX);
    if ((st = ss_check_finite(sys, "position", x, count)) ||
        (v && (st = ss_check_finite(sys, "velocity", v, count))) ||
        (st = ss_check_masses(sys, m, count, 0)))
        return st;
    /* A default contact radius gives the new nodes radii: the array must exist. */
    const double radius = sys->contact->radius;
    if ((radius > 0.0 && (st = ss_system_materialize(sys, SS_RADII))) ||
        (st = ss_reserve_rows(sys, 0, SS_NODE_ARRAYS, n + count, n)))
        return st;
    size_t row = n * dim, bytes = count * dim * sizeof(double);
    if (!ss_array_absent(sys, SS_RADII))
        for (size_t i = 0; i < count; i++)
            SS_DOUBLES(sys, SS_RADII)[n + i] = radius;
    if (!ss_array_absent(sys, SS_GROUPS))
        memset(SS_INT32S(sys, SS_GROUPS) + n, 0, count * sizeof(int32_t));
    memcpy(SS_DOUBLES(sys, SS_POSITIONS) + row, x, bytes);
    if (v)
        memcpy(SS_DOUBLES(sys, SS_VELOCITIES) + row, v, bytes);
    else
        memset(SS_DOUBLES(sys, SS_VELOCITIES) + row, 0, bytes);
    if (!ss_array_absent(sys, SS_EXTERNAL))
        memset(SS_DOUBLES(sys, SS_EXTERNAL) + row, 0, bytes);
    if (!ss_array_absent(sys, SS_PREV_ACCEL))
        memset(SS_DOUBLES(sys, SS_PREV_ACCEL) + row, 0, bytes);
    memcpy(SS_DOUBLES(sys, SS_REST_POSITIONS) + row, x, bytes);
    if (!ss_array_absent(sys, SS_UVS))
        memset(SS_DOUBLES(sys, SS_UVS) + 2 * n, 0, 2 * count * sizeof(double));
    memcpy(SS_DOUBLES(sys, SS_MASSES) + n, m, count * sizeof(double));
    for (size_t i = 0; i < count; i++)
        SS_BYTES(sys, SS_PINNED)[n + i] = pinned ? (pinned[i] != 0) : 0;
    sys->num_nodes = n + count;
    sys->pins_unheld |= v && pinned; /* a new pinned node may be moving */
    ss_system_topology_changed(sys); /* the plan's blocks and force rows cover N nodes */
    sys->state.prev_accel_valid = 0;       /* the new nodes have no Verlet history */
    return SS_OK;
}

static ss_status check_node_index(ss_system *sys, const char *what, size_t k, int64_t index) {
    if (index < 0 || (uint64_t)index >= sys->num_nodes)
        return ss_fail(sys, SS_ERR_INDEX,
                       "%s %zu refers to node %lld, but the system has %zu nodes", what, k,
                       (long long)index, sys->num_nodes);
    return SS_OK;
}

ss_status ss_system_set_pinned(ss_system *sys, size_t count, const int64_t *indices,
                               uint8_t value) {
    ss_status st;
    for (size_t k = 0; k < count; k++)
        if ((st = check_node_index(sys, "entry", k, indices[k])))
            return st;
    for (size_t k = 0; k < count; k++)
        SS_BYTES(sys, SS_PINNED)[indices[k]] = value ? 1 : 0;
    sys->state_edits++;
    if (value)
        sys->pins_unheld = 1; /* the node may be moving */
    return SS_OK;
}

/* ---- Springs ----------------------------------------------------------- */

/* |x_j - x_i|, m. */
static double node_distance(const double *x, size_t dim, int64_t i, int64_t j) {
    double length2 = 0.0;
    for (size_t d = 0; d < dim; d++) {
        const double dx = x[(size_t)j * dim + d] - x[(size_t)i * dim + d];
        length2 += dx * dx;
    }
    return sqrt(length2);
}

ss_status ss_system_add_springs(ss_system *sys, size_t count, const int64_t *pairs,
                                const double *stiffness, const double *damping, const double *rest,
                                size_t *first) {
    size_t m = sys->num_springs, dim = (size_t)sys->dim;
    ss_status st;
    *first = m;
    for (size_t s = 0; s < count; s++) {
        if ((st = check_node_index(sys, "spring", s, pairs[2 * s])) ||
            (st = check_node_index(sys, "spring", s, pairs[2 * s + 1])))
            return st;
        if (pairs[2 * s] == pairs[2 * s + 1])
            return ss_fail(sys, SS_ERR_VALUE, "spring %zu connects node %lld to itself", s,
                           (long long)pairs[2 * s]);
    }
    if ((st = ss_check_stiffness(sys, stiffness, count)) ||
        (st = ss_check_spring_values(sys, "damping", "N*s/m", damping, count, 0)) ||
        (rest && (st = ss_check_spring_values(sys, "rest length", "m", rest, count, 0))))
        return st;
    const double *x = SS_DOUBLES(sys, SS_POSITIONS);
    if (!rest) /* the current distance: nodes far apart (1e200 m) can overflow it */
        for (size_t s = 0; s < count; s++) {
            const double length = node_distance(x, dim, pairs[2 * s], pairs[2 * s + 1]);
            if (!isfinite(length))
                return ss_fail(sys, SS_ERR_VALUE,
                               "spring %zu: nodes %lld and %lld are %g m apart, too far for a "
                               "finite rest length",
                               s, (long long)pairs[2 * s], (long long)pairs[2 * s + 1], length);
        }
    if ((st = reserve_cut_marks(sys, m + count)) ||
        (st = ss_reserve_rows(sys, SS_SPRINGS, SS_FACES, m + count, m)))
        return st;
    x = SS_DOUBLES(sys, SS_POSITIONS);
    for (size_t s = 0; s < count; s++) {
        int32_t i = (int32_t)pairs[2 * s], j = (int32_t)pairs[2 * s + 1];
        SS_INT32S(sys, SS_SPRINGS)[2 * (m + s)] = i;
        SS_INT32S(sys, SS_SPRINGS)[2 * (m + s) + 1] = j;
        SS_DOUBLES(sys, SS_STIFFNESS)[m + s] = stiffness[s];
        sys->rigid |= isinf(stiffness[s]);
        SS_DOUBLES(sys, SS_DAMPING)[m + s] = damping[s];
        if (!ss_array_absent(sys, SS_BREAK_STRAINS))
            SS_DOUBLES(sys, SS_BREAK_STRAINS)[m + s] = INFINITY;
        SS_DOUBLES(sys, SS_REST_LENGTHS)[m + s] = rest ? rest[s] : node_distance(x, dim, i, j);
    }
    sys->num_springs = m + count;
    ss_system_topology_changed(sys);
    return SS_OK;
}

/* Drop the rows r < rows with doomed[r] from arrays [first, last), in place, the
 * others keeping their order; returns the rows kept. The arrays must be unshared. */
static size_t compact_rows(ss_system *sys, ss_array first, ss_array last, size_t rows,
                           const uint8_t *doomed) {
    size_t kept = 0;
    for (size_t r = 0; r < rows; r++) {
        if (doomed[r])
            continue;
        for (ss_array a = first; a < last; a++) {
            if (ss_array_absent(sys, a))
                continue;
            size_t row = ss_array_columns(sys, a) * ss_array_itemsize(a);
            uint8_t *base = (uint8_t *)sys->arrays[a]->data;
            memmove(base + kept * row, base + r * row, row);
        }
        kept++;
    }
    return kept;
}

ss_status ss_system_remove_spring_mask(ss_system *sys, const uint8_t *doomed) {
    const size_t m = sys->num_springs;
    ss_status st = ss_reserve_rows(sys, SS_SPRINGS, SS_FACES, m, m);
    if (st)
        return st;
    sys->num_springs = compact_rows(sys, SS_SPRINGS, SS_FACES, m, doomed);
    compact_cut_marks(sys, doomed, m); /* last: doomed may be sys->cut itself */
    ss_system_topology_changed(sys);
    return SS_OK;
}

ss_status ss_system_remove_springs(ss_system *sys, size_t count, const int64_t *indices) {
    size_t m = sys->num_springs;
    for (size_t k = 0; k < count; k++)
        if (indices[k] < 0 || (uint64_t)indices[k] >= m)
            return ss_fail(sys, SS_ERR_INDEX,
                           "entry %zu refers to spring %lld, but the system has %zu springs", k,
                           (long long)indices[k], m);
    if (count == 0)
        return SS_OK;
    uint8_t *doomed = ss_malloc(m);
    if (!doomed)
        return ss_fail(sys, SS_ERR_NOMEM, "out of memory removing springs");
    memset(doomed, 0, m);
    for (size_t k = 0; k < count; k++)
        doomed[indices[k]] = 1;
    ss_status st = ss_system_remove_spring_mask(sys, doomed);
    ss_free(doomed);
    return st;
}

/* ---- Faces ------------------------------------------------------------- */

ss_status ss_system_add_faces(ss_system *sys, size_t count, const int64_t *tri, size_t *first) {
    size_t f = sys->num_faces;
    ss_status st;
    *first = f;
    for (size_t t = 0; t < count; t++) {
        for (int c = 0; c < 3; c++)
            if ((st = check_node_index(sys, "face", t, tri[3 * t + c])))
                return st;
        if (tri[3 * t] == tri[3 * t + 1] || tri[3 * t + 1] == tri[3 * t + 2] ||
            tri[3 * t] == tri[3 * t + 2])
            return ss_fail(sys, SS_ERR_VALUE, "face %zu repeats a node: (%lld, %lld, %lld)", t,
                           (long long)tri[3 * t], (long long)tri[3 * t + 1],
                           (long long)tri[3 * t + 2]);
    }
    if ((st = ss_reserve_rows(sys, SS_FACES, SS_ARRAY_COUNT, f + count, f)))
        return st;
    for (size_t k = 0; k < 3 * count; k++)
        SS_INT32S(sys, SS_FACES)[3 * f + k] = (int32_t)tri[k];
    sys->num_faces = f + count;
    return SS_OK;
}

/* ---- Removing nodes ---------------------------------------------------- */

/* Mark rows of an index array (pairs or triangles) that touch a doomed node. */
static void mark_touching(const int32_t *rows_of_nodes, size_t rows, int width,
                          const uint8_t *doomed_node, uint8_t *doomed_row) {
    for (size_t r = 0; r < rows; r++) {
        doomed_row[r] = 0;
        for (int c = 0; c < width; c++)
            doomed_row[r] |= doomed_node[rows_of_nodes[width * r + c]];
    }
}

ss_status ss_system_remove_nodes(ss_system *sys, size_t count, const int64_t *indices,
                                 int64_t *old_to_new) {
    const size_t n = sys->num_nodes, m = sys->num_springs, f = sys->num_faces;
    ss_status st;
    for (size_t k = 0; k < count; k++)
        if ((st = check_node_index(sys, "entry", k, indices[k])))
            return st;
    size_t marks = n + (m > f ? m : f);
    uint8_t *doomed = ss_malloc(marks), *doomed_rows = doomed + n;
    if (!doomed)
        return ss_fail(sys, SS_ERR_NOMEM, "out of memory removing nodes");
    memset(doomed, 0, n);
    for (size_t k = 0; k < count; k++)
        doomed[indices[k]] = 1;
    /* Make every array this system's own first: after this nothing can fail. */
    if ((st = ss_pressure_check_removal(sys, doomed)) ||
        (st = ss_reserve_rows(sys, 0, SS_NODE_ARRAYS, n, n)) ||
        (st = ss_reserve_rows(sys, SS_SPRINGS, SS_FACES, m, m)) ||
        (st = ss_reserve_rows(sys, SS_FACES, SS_ARRAY_COUNT, f, f))) {
        ss_free(doomed);
        return st;
    }
    int64_t next = 0;
    for (size_t i = 0; i < n; i++)
        old_to_new[i] = doomed[i] ? -1 : next++;

    mark_touching(SS_INT32S(sys, SS_SPRINGS), m, 2, doomed, doomed_rows);
    sys->num_springs = compact_rows(sys, SS_SPRINGS, SS_FACES, m, doomed_rows);
    compact_cut_marks(sys, doomed_rows, m);
    mark_touching(SS_INT32S(sys, SS_FACES), f, 3, doomed, doomed_rows);
    sys->num_faces = compact_rows(sys, SS_FACES, SS_ARRAY_COUNT, f, doomed_rows);
    sys->num_nodes = compact_rows(sys, 0, SS_NODE_ARRAYS, n, doomed);
    ss_system_topology_changed(sys);

    int32_t *pairs = SS_INT32S(sys, SS_SPRINGS), *tri = SS_INT32S(sys, SS_FACES);
    for (size_t k = 0; k < 2 * sys->num_springs; k++)
        pairs[k] = (int32_t)old_to_new[pairs[k]];
    for (size_t k = 0; k < 3 * sys->num_faces; k++)
        tri[k] = (int32_t)old_to_new[tri[k]];
    ss_pressure_renumber(sys, old_to_new);
    ss_drives_renumber(sys, old_to_new);
    ss_free(doomed);
    return SS_OK;
}
