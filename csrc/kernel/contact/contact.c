/* contact.c - node-node contact: its settings, the search for the pairs that touch (the
 * broad phase), and the pairs' forces, energy and power ("The law" below explains them;
 * the law for one contact and the group filter are contact_law.c's, which segment
 * contact shares). Each search also finds the segment pairs (segment_contact.c) when
 * segment contact is on: they follow the node pairs in the force evaluation's ranges,
 * the sums of energy and power, and XPBD's passes.
 *
 * Broad phase, at every force evaluation: every node with r > 0 gets the grid cell of
 * side 2 r_max it is in, and the nodes are counting-sorted by cell, stably (a cell
 * lists its nodes in index order): numbered densely inside the bounding box when that
 * has at most 4 cells per such node, else hashed into a power of 2 >= 2 K buckets (K
 * such nodes). Each node, in index order, looks in the half of its 3^dim neighbouring
 * cells that come after its own, and in its own cell at the nodes after it, so that
 * each pair is met once (stored i < j; see ss_contact_find): the pairs come in an order
 * fixed by the positions alone, and the forces are added serially in that order (bit-identical for
 * any thread count). The buffers only grow, so once they fit the contacts nothing is allocated. */
#include "springsim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SS_PI 3.14159265358979323846

typedef struct {
    int64_t cell[3];
    int32_t node;
    uint32_t bucket;
} entry;

/* zeta for restitution e: -ln e / sqrt(pi^2 + ln^2 e); e = 0: ln e = -inf, the limit
 * is 1 (critical damping: no rebound). */
static double zeta_of(double restitution) {
    const double log_e = log(restitution);
    return restitution == 0.0 ? 1.0 : -log_e / sqrt(SS_PI * SS_PI + log_e * log_e);
}

/* w_c dt of the law from the step: SS_CONTACT_OMEGA_DT, less when the dashpot and
 * friction would take more than SS_CONTACT_DAMPING_DT per substep (see the law's
 * comment below). */
static double omega_dt_of(double zeta, double friction) {
    const double damping = 2.0 * zeta + (friction > 0.0 ? 2.0 : 0.0);
    const double limit = SS_CONTACT_DAMPING_DT / damping;
    return damping > 0.0 && limit < SS_CONTACT_OMEGA_DT ? limit : SS_CONTACT_OMEGA_DT;
}

ss_contact *ss_contact_new(void) {
    ss_contact *t = ss_malloc(sizeof *t);
    if (!t)
        return NULL;
    memset(t, 0, sizeof *t);
    t->stiffness = SS_CONTACT_FROM_STEP;
    t->restitution = 0.5;
    t->zeta = zeta_of(0.5);
    t->omega_dt = omega_dt_of(t->zeta, 0.0);
    t->calibrated_rough = -1;
    return t;
}

void ss_contact_scratch_release(ss_contact_scratch *found) {
    ss_free(found->pairs);
    ss_free(found->entries);
    ss_free(found->bucket_start);
    ss_free(found->adj_first);
    ss_free(found->adj);
    ss_segments_free(found->segments);
    memset(found, 0, sizeof *found);
}

void ss_contact_free(ss_contact *t) {
    if (!t)
        return;
    ss_contact_scratch_release(&t->found);
    ss_free(t->frames);
    ss_free(t->pair_forces);
    ss_free(t->off);
    ss_free(t);
}

ss_contact *ss_contact_copy(const ss_contact *src) {
    ss_contact *t = ss_malloc(sizeof *t);
    if (!t)
        return NULL;
    memset(t, 0, sizeof *t);
    t->radius = src->radius;
    t->stiffness = src->stiffness;
    t->restitution = src->restitution;
    t->friction = src->friction;
    t->segments = src->segments;
    t->zeta = src->zeta;
    t->omega_dt = src->omega_dt;
    t->calibrated_rough = -1; /* calibrated again at its first step: the same numbers */
    if (src->num_off) {
        t->off = ss_malloc(src->num_off * sizeof *t->off);
        if (!t->off) {
            ss_free(t);
            return NULL;
        }
        memcpy(t->off, src->off, src->num_off * sizeof *t->off);
        t->num_off = t->off_capacity = src->num_off;
    }
    return t;
}

size_t ss_contact_nbytes(const ss_contact *t) {
    if (!t)
        return 0;
    const ss_contact_scratch *f = &t->found;
    return sizeof *t + t->off_capacity * sizeof *t->off + f->pair_capacity * 2 * sizeof(int32_t) +
           t->frame_capacity * (SS_CONTACT_FRAME + 3) * sizeof(double) +
           2 * f->node_capacity * sizeof(entry) +
           (f->bucket_start ? (f->bucket_capacity + 1) * sizeof(int32_t) : 0) +
           f->adj_node_capacity * sizeof(size_t) + f->adj_capacity * sizeof(int32_t) +
           ss_segments_nbytes(f->segments);
}

ss_status ss_contact_set_law(ss_system *sys, double radius, double stiffness, double restitution,
                             double friction) {
    if (!(radius >= 0.0) || !isfinite(radius))
        return ss_fail(sys, SS_ERR_VALUE, "contact_radius is %g: must be finite and >= 0 m",
                       radius);
    if (stiffness != SS_CONTACT_FROM_STEP && (!(stiffness > 0.0) || !isfinite(stiffness)))
        return ss_fail(sys, SS_ERR_VALUE,
                       "contact_stiffness is %g: must be finite and > 0 N/m (or None: from the "
                       "step)",
                       stiffness);
    if (!(restitution >= 0.0 && restitution <= 1.0))
        return ss_fail(sys, SS_ERR_VALUE, "contact_restitution is %g: must be in [0, 1]",
                       restitution);
    if (!(friction >= 0.0) || !isfinite(friction))
        return ss_fail(sys, SS_ERR_VALUE, "contact_friction is %g: must be finite and >= 0",
                       friction);
    ss_contact *t = sys->contact;
    sys->state_edits++; /* new contact energy: the short calls\' books start afresh */
    t->radius = radius;
    t->stiffness = stiffness;
    t->restitution = restitution;
    t->friction = friction;
    t->zeta = zeta_of(restitution);
    t->omega_dt = omega_dt_of(t->zeta, friction);
    return SS_OK;
}

int ss_contact_active(const ss_system *sys) {
    if (ss_array_absent(sys, SS_RADII))
        return 0;
    const double *r = SS_DOUBLES(sys, SS_RADII);
    for (size_t i = 0; i < sys->num_nodes; i++)
        if (r[i] > 0.0)
            return 1;
    return 0;
}

/* ---- Spring neighbours (same-group pairs joined by a spring do not touch) ---- */

static int compare_int32(const void *a, const void *b) {
    const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Nonzero when t's adjacency is that of the current topology. */
static int adjacency_current(const ss_system *sys, const ss_contact_scratch *t) {
    return t->adj_valid && t->adj_edits == sys->topology_edits && t->adj_nodes == sys->num_nodes;
}

static int ensure_adjacency(const ss_system *sys, ss_contact_scratch *t) {
    const size_t n = sys->num_nodes, m = sys->num_springs;
    if (adjacency_current(sys, t))
        return 0;
    if (t->adj_node_capacity < n + 1) {
        size_t *fresh = ss_malloc((n + 1) * sizeof *fresh);
        if (!fresh)
            return -1;
        ss_free(t->adj_first);
        t->adj_first = fresh;
        t->adj_node_capacity = n + 1;
    }
    if (t->adj_capacity < 2 * m || !t->adj) {
        int32_t *fresh = ss_malloc((2 * m + 1) * sizeof *fresh);
        if (!fresh)
            return -1;
        ss_free(t->adj);
        t->adj = fresh;
        t->adj_capacity = 2 * m + 1;
    }
    const int32_t *pairs = SS_INT32S(sys, SS_SPRINGS);
    size_t *first = t->adj_first;
    memset(first, 0, (n + 1) * sizeof *first);
    for (size_t s = 0; s < 2 * m; s++)
        first[pairs[s] + 1]++;
    for (size_t i = 0; i < n; i++)
        first[i + 1] += first[i];
    for (size_t s = 0; s < m; s++) { /* fill from the back: first[i] ends at its start */
        const int32_t a = pairs[2 * s], b = pairs[2 * s + 1];
        t->adj[first[a + 1] - 1] = b;
        first[a + 1]--;
        t->adj[first[b + 1] - 1] = a;
        first[b + 1]--;
    }
    /* now first[i + 1] is node i's start: shift back to first[i] */
    memmove(first, first + 1, n * sizeof *first);
    first[n] = 2 * m;
    for (size_t i = 0; i < n; i++)
        if (first[i + 1] - first[i] > 1)
            qsort(t->adj + first[i], first[i + 1] - first[i], sizeof(int32_t), compare_int32);
    t->adj_nodes = n;
    t->adj_edits = sys->topology_edits;
    t->adj_valid = 1;
    return 0;
}

/* The adjacency a search in `found` reads: the step's when it is current (a query then
 * only reads it), else found's own, built now; NULL when out of memory. */
static const ss_contact_scratch *adjacency(const ss_system *sys, ss_contact_scratch *found) {
    const ss_contact_scratch *step = &sys->contact->found;
    if (adjacency_current(sys, step))
        return step;
    return ensure_adjacency(sys, found) ? NULL : found;
}

static int joined(const ss_contact_scratch *t, int32_t i, int32_t j) {
    size_t lo = t->adj_first[i], hi = t->adj_first[i + 1];
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (t->adj[mid] < j)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->adj_first[i + 1] && t->adj[lo] == j;
}

/* ---- The search ----------------------------------------------------------- */

static size_t bucket_of(const int64_t c[3], size_t mask) {
    uint64_t h = (uint64_t)c[0] * 0x9E3779B97F4A7C15u ^ (uint64_t)c[1] * 0xC2B2AE3D27D4EB4Fu ^
                 (uint64_t)c[2] * 0x165667B19E3779F9u;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9u;
    h ^= h >> 32;
    return (size_t)(h & mask);
}

/* A cell coordinate, clamped so that far-away (or NaN) nodes still get a valid one. */
static int64_t cell_coordinate(double x, double inv_cell) {
    double q = floor(x * inv_cell);
    if (!(q >= -1e15))
        q = -1e15;
    if (q > 1e15)
        q = 1e15;
    return (int64_t)q;
}

/* The pairs double their room, keeping what they hold. */
static int grow_pairs(ss_contact_scratch *t) {
    const size_t capacity = t->pair_capacity ? 2 * t->pair_capacity : 64;
    int32_t *fresh = ss_malloc(2 * capacity * sizeof *fresh);
    if (!fresh)
        return -1;
    if (t->num_pairs)
        memcpy(fresh, t->pairs, 2 * t->num_pairs * sizeof *fresh);
    ss_free(t->pairs);
    t->pairs = fresh;
    t->pair_capacity = capacity;
    return 0;
}

/* Cells of the bounding box at most this many per node with a radius: a dense grid
 * (memory O(K)); a sparser cloud (a node far away) is hashed instead. */
#define SS_DENSE_CELLS_PER_NODE 4

static int ensure_nodes(ss_contact_scratch *t, size_t k, size_t buckets) {
    if (t->node_capacity < k) {
        entry *fresh = ss_malloc(2 * k * sizeof *fresh);
        if (!fresh)
            return -1;
        ss_free(t->entries);
        t->entries = (int32_t *)(void *)fresh;
        t->node_capacity = k;
    }
    if (t->bucket_capacity < buckets) {
        /* room for the most either mode may use with k nodes, so that a moving bounding
         * box never makes a step allocate */
        const size_t most =
            SS_DENSE_CELLS_PER_NODE * k + 64 > buckets ? SS_DENSE_CELLS_PER_NODE * k + 64 : buckets;
        int32_t *fresh = ss_malloc((most + 1) * sizeof *fresh);
        if (!fresh)
            return -1;
        ss_free(t->bucket_start);
        t->bucket_start = fresh;
        t->bucket_capacity = most;
    }
    return 0;
}

/* What a search reads and where it writes. */
typedef struct {
    const ss_system *sys;
    const double *x, *r;           /* positions, radii */
    const int32_t *group;          /* NULL: every node in group 0 */
    const ss_contact_scratch *adj; /* the spring neighbours */
    ss_contact_scratch *found;     /* the pairs go here */
    double margin;                 /* m: pairs closer than r_i + r_j + margin (0: touching) */
} search;

/* Nonzero when i and j may touch: the groups' filter, and no spring within a group. */
static int may_touch(const search *q, int32_t i, int32_t j) {
    const int32_t a = q->group ? q->group[i] : 0, b = q->group ? q->group[j] : 0;
    if (a == b && joined(q->adj, i, j))
        return 0;
    return ss_contact_enabled(q->sys->contact, a, b);
}

/* Pair (i, j), i < j, if it touches at x: appended to the pairs; -1 when out of memory. */
static int consider(const search *q, int32_t i, int32_t j) {
    const ss_system *sys = q->sys;
    const double *x = q->x, *r = q->r;
    const size_t dim = (size_t)sys->dim;
    double d2 = 0.0;
    for (size_t w = 0; w < dim; w++) {
        const double d = x[(size_t)j * dim + w] - x[(size_t)i * dim + w];
        d2 += d * d;
    }
    const double reach = q->margin > 0.0 ? r[i] + r[j] + q->margin : r[i] + r[j];
    if (!(d2 < reach * reach) || !may_touch(q, i, j))
        return 0;
    ss_contact_scratch *t = q->found;
    if (t->num_pairs == t->pair_capacity && grow_pairs(t))
        return -1;
    t->pairs[2 * t->num_pairs] = i;
    t->pairs[2 * t->num_pairs + 1] = j;
    t->num_pairs++;
    return 0;
}

/* Counting sort of the k raw entries by their slot (bucket or cell) into sorted, stable
 * (a slot keeps index order); start[s] .. start[s + 1] is then slot s's range. */
static void sort_by_slot(const entry *raw, entry *sorted, size_t k, int32_t *start, size_t slots) {
    memset(start, 0, (slots + 1) * sizeof *start);
    for (size_t q = 0; q < k; q++)
        start[raw[q].bucket + 1]++;
    for (size_t b = 0; b < slots; b++)
        start[b + 1] += start[b];
    for (size_t q = 0; q < k; q++)
        sorted[start[raw[q].bucket]++] = raw[q];
    for (size_t b = slots; b > 0; b--) /* start[b] was advanced to its end: shift back */
        start[b] = start[b - 1];
    start[0] = 0;
}

/* A dense grid's cell coordinate floor((c - lo) / (2 r_max)) on an axis of `cells` cells,
 * clamped into [0, cells - 1] before the conversion (NaN to 0). The first pass found
 * every coordinate within [lo, hi], whose cells are 0 .. cells - 1, so the clamp changes
 * nothing; a position written by another thread between the two passes (a view written
 * while the step runs), or made NaN, infinite or huge, lands in an edge cell instead of
 * outside the grid: meaningless pairs, but no index out of range. */
static int64_t dense_coordinate(double c, double lo, double inv_cell, int64_t cells) {
    const double q = floor((c - lo) * inv_cell);
    if (!(q >= 0.0))
        return 0;
    if (q >= (double)(cells - 1))
        return cells - 1;
    return (int64_t)q;
}

/* Dense grid: cells are numbered x fastest inside the contact nodes' bounding box, so
 * the cells x - 1 .. x + 1 of a row are one run of the sorted entries: a node scans 5
 * runs in 3D (its own row from its cell on, the next row, the three rows above), 2 in
 * 2D. Otherwise the cells are hashed into buckets and a node looks in 14 (3D) or 5
 * (2D) buckets, keeping the entries of the cell it wants. Either way the pairs come by
 * the node that met them, then by neighbouring cell, then by index: an order fixed by
 * the positions.
 *
 * Each node's cell is computed once, into its entry, and everything after (the slot it
 * is counted and placed in, the cells its neighbours are looked for in) reads the
 * entry, never x again: the positions are read twice (the bounding box, then the
 * cells), but the second read alone decides where a node goes, and it is clamped into
 * the grid. So is the number of entries: a node counts only if the first pass counted
 * room for it (radii written meanwhile cannot overrun the entries). */
static int find_within(const ss_system *sys, const double *x, ss_contact_scratch *found,
                       double margin) {
    ss_contact_scratch *t = found;
    t->num_pairs = 0;
    if (ss_array_absent(sys, SS_RADII))
        return 0;
    const double *r = SS_DOUBLES(sys, SS_RADII);
    const int32_t *group = ss_array_absent(sys, SS_GROUPS) ? NULL : SS_INT32S(sys, SS_GROUPS);
    const size_t n = sys->num_nodes, dim = (size_t)sys->dim;
    size_t k = 0;
    double r_max = 0.0, lo[3] = {0.0, 0.0, 0.0}, hi[3] = {0.0, 0.0, 0.0};
    int finite = 1;
    for (size_t i = 0; i < n; i++)
        if (r[i] > 0.0) {
            for (size_t q = 0; q < dim; q++) {
                const double c = x[i * dim + q];
                finite &= isfinite(c);
                lo[q] = k == 0 || c < lo[q] ? c : lo[q];
                hi[q] = k == 0 || c > hi[q] ? c : hi[q];
            }
            k++;
            r_max = r[i] > r_max ? r[i] : r_max;
        }
    if (k < 2)
        return 0;
    /* cells 2 r_max wide (plus the margin: a pair within reach is in neighbouring cells) */
    const double inv_cell = margin > 0.0 ? 1.0 / (2.0 * r_max + margin) : 0.5 / r_max;
    int64_t g[3] = {1, 1, 1};
    double cells = 1.0;
    for (size_t q = 0; q < dim && finite; q++) {
        const double span = floor((hi[q] - lo[q]) * inv_cell) + 1.0;
        cells *= span;
        g[q] = span < 1e15 ? (int64_t)span : (int64_t)1e15;
    }
    const int dense = finite && cells <= (double)(SS_DENSE_CELLS_PER_NODE * k + 64);
    size_t slots = 16;
    if (dense)
        slots = (size_t)cells;
    else
        while (slots < 2 * k)
            slots *= 2;
    const ss_contact_scratch *adj = adjacency(sys, t);
    if (!adj || ensure_nodes(t, k, slots))
        return -1;
    const search ctx = {sys, x, r, group, adj, t, margin};
    entry *raw = (entry *)(void *)t->entries;
    int32_t *start = t->bucket_start;
    size_t e = 0;
    for (size_t i = 0; i < n && e < k; i++) {
        if (!(r[i] > 0.0))
            continue;
        entry *en = raw + e++;
        for (size_t q = 0; q < 3; q++)
            en->cell[q] = q >= dim ? 0
                          : dense  ? dense_coordinate(x[i * dim + q], lo[q], inv_cell, g[q])
                                   : cell_coordinate(x[i * dim + q], inv_cell);
        en->node = (int32_t)i;
        en->bucket = dense ? (uint32_t)(en->cell[0] + g[0] * (en->cell[1] + g[1] * en->cell[2]))
                           : (uint32_t)bucket_of(en->cell, slots - 1);
    }
    k = e; /* fewer, if radii were written meanwhile */
    entry *sorted = raw + k;
    sort_by_slot(raw, sorted, k, start, slots);
    /* Half the neighbourhood: the cells after this one (z, then y, then x greater),
     * and in its own cell the nodes after it, so that each pair is met once. */
    const int64_t reach_z = dim == 3 ? 1 : 0;
    for (size_t q = 0; q < k; q++) {
        const entry *a = raw + q;
        const int32_t i = a->node;
        for (int64_t dz = 0; dz <= reach_z; dz++)
            for (int64_t dy = dz == 0 ? 0 : -1; dy <= 1; dy++) {
                const int own_row = dz == 0 && dy == 0;
                if (dense) {
                    const int64_t y = a->cell[1] + dy, z = a->cell[2] + dz;
                    if (y >= g[1] || y < 0 || z >= g[2])
                        continue;
                    const int64_t x0 = own_row || a->cell[0] == 0 ? a->cell[0] : a->cell[0] - 1;
                    const int64_t x1 = a->cell[0] + 1 < g[0] ? a->cell[0] + 1 : g[0] - 1;
                    const int64_t row = g[0] * (y + g[1] * z);
                    for (int32_t s = start[row + x0]; s < start[row + x1 + 1]; s++) {
                        const int32_t j = sorted[s].node;
                        if (own_row && sorted[s].cell[0] == a->cell[0] && j <= i)
                            continue;
                        if (consider(&ctx, i < j ? i : j, i < j ? j : i))
                            return -1;
                    }
                    continue;
                }
                for (int64_t dx = own_row ? 0 : -1; dx <= 1; dx++) {
                    const int64_t c[3] = {a->cell[0] + dx, a->cell[1] + dy, a->cell[2] + dz};
                    const size_t b = bucket_of(c, slots - 1);
                    for (int32_t s = start[b]; s < start[b + 1]; s++) {
                        const entry *o = sorted + s;
                        const int32_t j = o->node;
                        if ((own_row && dx == 0 && j <= i) || o->cell[0] != c[0] ||
                            o->cell[1] != c[1] || o->cell[2] != c[2])
                            continue;
                        if (consider(&ctx, i < j ? i : j, i < j ? j : i))
                            return -1;
                    }
                }
            }
    }
    return 0;
}

int ss_contact_find(const ss_system *sys, const double *x, ss_contact_scratch *found) {
    return find_within(sys, x, found, 0.0);
}

/* The frames and pair forces grown to the pairs' room: -1 when out of memory. */
static int fit_frames(ss_contact *t) {
    const size_t need = t->found.pair_capacity;
    if (t->frame_capacity >= need)
        return 0;
    double *frames = ss_malloc(SS_CONTACT_FRAME * need * sizeof *frames);
    double *forces = ss_malloc(3 * need * sizeof *forces);
    if (!frames || !forces) {
        ss_free(frames);
        ss_free(forces);
        return -1;
    }
    ss_free(t->frames);
    ss_free(t->pair_forces);
    t->frames = frames;
    t->pair_forces = forces;
    t->frame_capacity = need;
    return 0;
}

int ss_contact_step_find(const ss_system *sys, const double *x) {
    ss_contact *t = sys->contact;
    /* a failed search leaves pairs the frames may have no room for: none are used then */
    t->search_failed = ss_contact_find(sys, x, &t->found) || fit_frames(t) ||
                       ss_segments_search(sys, x, &t->found, 0.0);
    return t->search_failed ? -1 : 0;
}

/* ---- The restitution of the law from the step ------------------------------
 *
 * A contact of the law from the step lasts about pi / a substeps whatever dt is, so the
 * step's error in its bounce does not shrink with dt. Two things make it small and
 * known. The dashpot never exceeds the spring, |c v_n| <= k delta (pair_law): the
 * normal force k delta + clip(-c v_n, -k delta, k delta) then starts and ends at 0,
 * with no step at the impact or the release to fall anywhere within a substep, and it
 * never pulls. And its damping ratio is calibrated for each method: the law is
 * homogeneous in (delta, v), so in units of the substep and the pair's effective mass
 * (dt = m_eff = 1, k = a^2, c = 2 zeta a) one head-on contact is a fixed map of the
 * method that depends on the impact's phase within a substep only. zeta is found by
 * bisection so that the exit speed, averaged over eight phases (u_0 = (i + 1/2) / 8
 * of the approach speed's step), is e times the approach speed. Implicit Euler leaves
 * the law from the step out of its Jacobian (stable by construction, it needs no
 * implicit help, and its Jacobian would damp every bounce by about pi a / 2): its
 * contact map is symplectic Euler's. The cap lets the dashpot pull at the end of a
 * contact, up to the spring's force, so a strong one holds the pair: a contact still
 * on after CAL_MAX_STEPS substeps (over 60 times a bounce's) counts as leaving at 0, and
 * e = 0 takes the largest zeta, CAL_ZETA_MAX. */

#define CAL_PHASES 8
#define CAL_ZETA_MAX 10.0
#define CAL_ITERATIONS 40
#define CAL_MAX_STEPS 2000

/* The force of the law from the step on a gap u < 0 closing at w < 0, in the units
 * above: a^2 delta + clip(-2 zeta a w, -a^2 delta, a^2 delta). */
static double law_1d(double u, double w, double a, double zeta) {
    if (!(u < 0.0))
        return 0.0;
    const double spring = -a * a * u, cap = SS_CONTACT_DAMPER_CAP * spring;
    double damper = -2.0 * zeta * a * w;
    damper = damper > cap ? cap : damper < -cap ? -cap : damper;
    return spring + damper;
}

/* The exit speed of one head-on contact that starts at gap `phase` closing at 1, by
 * `method` (implicit Euler: symplectic Euler's map, see above). */
static double bounce_1d(ss_method method, double a, double zeta, double phase) {
    double u = phase, w = -1.0, prev = 0.0;
    for (int n = 0; n < CAL_MAX_STEPS; n++) {
        const double f = law_1d(u, w, a, zeta);
        switch (method) {
        case SS_EULER:
            u += w;
            w += f;
            break;
        case SS_VERLET: {
            const double before = n == 0 ? f : prev;
            const double u0 = u, up = u - w + 0.5 * before;
            u = 2.0 * u0 - up + f;
            w = (u - u0) + 0.5 * f;
            prev = f;
            break;
        }
        case SS_VELOCITY_VERLET: {
            const double half = w + 0.5 * f;
            u += half;
            w = half + 0.5 * law_1d(u, w + f, a, zeta);
            break;
        }
        case SS_RK2: {
            const double u1 = u + w, w1 = w + f, f2 = law_1d(u1, w1, a, zeta);
            u += 0.5 * (w + w1);
            w += 0.5 * (f + f2);
            break;
        }
        case SS_RK4: {
            const double u2 = u + 0.5 * w, w2 = w + 0.5 * f, f2 = law_1d(u2, w2, a, zeta);
            const double u3 = u + 0.5 * w2, w3 = w + 0.5 * f2, f3 = law_1d(u3, w3, a, zeta);
            const double u4 = u + w3, w4 = w + f3, f4 = law_1d(u4, w4, a, zeta);
            u += (w + 2.0 * w2 + 2.0 * w3 + w4) / 6.0;
            w += (f + 2.0 * f2 + 2.0 * f3 + f4) / 6.0;
            break;
        }
        default: /* symplectic Euler, and implicit Euler's contact */
            w += f;
            u += w;
            break;
        }
        if (u > 0.0 && w > 0.0)
            return w;
    }
    return 0.0; /* held: a dashpot this strong pulls the pair together */
}

static double mean_bounce(ss_method method, double a, double zeta) {
    double sum = 0.0;
    for (int i = 0; i < CAL_PHASES; i++)
        sum += bounce_1d(method, a, zeta, (i + 0.5) / CAL_PHASES);
    return sum / CAL_PHASES;
}

double ss_contact_calibrated_zeta(double restitution, int rough, ss_method method) {
    const double a = omega_dt_of(zeta_of(restitution), rough ? 1.0 : 0.0);
    double lo = 0.0, hi = CAL_ZETA_MAX;
    if (mean_bounce(method, a, lo) <= restitution)
        return lo;
    if (mean_bounce(method, a, hi) >= restitution)
        return hi;
    for (int n = 0; n < CAL_ITERATIONS; n++) {
        const double mid = 0.5 * (lo + hi);
        if (mean_bounce(method, a, mid) > restitution)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

ss_status ss_contact_prepare(ss_system *sys, double dt, ss_method method) {
    ss_contact *t = sys->contact;
    t->failed = 0;
    ss_segments_forget(&t->found);
    if (ss_contact_step_find(sys, SS_DOUBLES(sys, SS_POSITIONS)))
        return ss_fail(sys, SS_ERR_NOMEM, "out of memory for node-node contact");
    t->step_dt = dt;
    const int rough = t->friction > 0.0;
    /* XPBD takes node-node and segment contact as constraints and VBD as contact energy
     * (vbd.c): no law from the step */
    if (t->stiffness != SS_CONTACT_FROM_STEP || method == SS_XPBD || method == SS_VBD)
        return SS_OK;
    if (t->calibrated_restitution != t->restitution || t->calibrated_rough != rough) {
        memset(t->calibrated, 0, sizeof t->calibrated); /* a new law: every method again */
        t->calibrated_restitution = t->restitution;
        t->calibrated_rough = rough;
    }
    if (!t->calibrated[method]) {
        t->calibrated_zeta[method] = ss_contact_calibrated_zeta(t->restitution, rough, method);
        t->calibrated[method] = 1;
    }
    t->step_zeta = t->calibrated_zeta[method];
    return SS_OK;
}

void ss_contact_end_step(ss_system *sys) {
    sys->state.contact_dt = sys->contact->step_dt;
}

ss_status ss_contact_pairs_now(ss_system *sys, int32_t **pairs, size_t *count) {
    ss_contact_scratch own = {0};
    *pairs = NULL;
    *count = 0;
    if (ss_contact_find(sys, SS_DOUBLES(sys, SS_POSITIONS), &own)) {
        ss_contact_scratch_release(&own);
        return ss_fail(sys, SS_ERR_NOMEM, "out of memory for node-node contact");
    }
    *count = own.num_pairs;
    if (own.num_pairs) {
        *pairs = own.pairs; /* handed over */
        own.pairs = NULL;
    }
    ss_contact_scratch_release(&own);
    return SS_OK;
}

/* ---- The law: forces, energy, power, stability ------------------------------ */

/* contact.c - node-node contact's law: nodes with a radius repel when they overlap.
 *
 * The law (Cundall & Strack 1979, the linear spring-dashpot of DEM): for a pair i, j
 * with r_i + r_j > d = |x_j - x_i|, overlap delta = r_i + r_j - d and n the unit vector
 * from i to j, node j feels
 *     F = (k_c delta - c v_n) n - min(gamma |v_t|, mu |k_c delta - c v_n|) v_t / |v_t|
 * and node i feels -F, with v_n = (v_j - v_i).n (> 0 when they separate) and v_t the
 * rest of the relative velocity. The dashpot c = 2 zeta sqrt(k_c m_eff), m_eff =
 * m_i m_j / (m_i + m_j) (a pinned node counts as infinitely heavy: m_eff is the free
 * node's mass), with zeta = -ln e / sqrt(pi^2 + ln^2 e): the overlap is then a damped
 * oscillator that returns to 0 with exactly e times its entry speed (a head-on
 * collision's coefficient of restitution). As in the textbook model the dashpot may
 * pull during the end of a contact: clipping it would change e. Friction is Coulomb's,
 * regularised: a tangential dashpot gamma = 2 sqrt(k_c m_eff) (critical for the pair)
 * capped at mu times the normal force, so it can hold a slow slide but not a resting
 * stick exactly.
 *
 * The stiffness from the step (the default, SS_CONTACT_FROM_STEP): each pair gets
 *     k_c = m_eff w_c^2,   w_c = a / dt,   a = min(0.1, 0.3 / (2 zeta + 2 [mu > 0]))
 * with dt the substep of the call (SS_CONTACT_OMEGA_DT, SS_CONTACT_DAMPING_DT): a contact
 * frequency tied to the step, as Box2D v3's "soft step" ties its contacts' to the
 * substep, so that a resting overlap under a load F, F / k_c = F dt^2 / (m_eff a^2)
 * (g dt^2 / a^2 for a node resting on a pinned one), shrinks with dt^2 and needs no
 * tuning, and an impact at relative speed v overlaps by at most v dt / a. Its dashpot is
 * not the textbook's: capped at twice the spring, with a damping ratio calibrated for the
 * call's method (see "The restitution of the law from the step" above; friction's gamma
 * stays 2 sqrt(k_c m_eff), and the cap 0.3 on (2 zeta + 2 [mu > 0]) a, position Verlet's,
 * stays on the textbook zeta). a was chosen by measurement (tests/features/
 * test_contact_defaults.py): a bounce's error over the impact's phase grows with a (at
 * most 0.6 % at 0.1; 0.86 % at 0.11; at 0.12 Verlet's reaches 1.2 % at e = 0.1) and a
 * resting overlap falls as 1 / a^2 (100 balls poured into a box rest with 1.0 % of a
 * radius at 0.1, against the 2 %). The law from the step is explicit like any
 * contact, but stable by construction at any dt, so critical_dt() leaves it out: near
 * critical_dt() the springs' own modes use up the explicit limit, and the contacts,
 * a^2 each (1/400 of symplectic Euler's (w dt)^2 < 4), then tip them over (take 0.5
 * critical_dt() or less, as for anything else that touches).
 *
 * The contact potential 1/2 k_c delta^2 is conservative (energy() reports it as
 * "contact", with the law from the step at the dt of the last step call: 0 before the
 * first); the dashpot's c v_n^2 (capped: -F_d v_n, never negative) and friction's
 * |F_t| |v_t| are powers that the step books into dissipated with damping and drag
 * (ss_dissipation_power).
 *
 * The pairs are contact.c's (ss_contact_find), in their fixed order. Each pair's force
 * is computed alone (by any thread, forces.c) into a scratch row; then one thread adds
 * the rows to the nodes serially in pair order: the same additions in the same order
 * for any thread count, so the results are bit-identical. */

typedef struct {
    double force[3];  /* on j; -force on i */
    double delta;     /* overlap, m */
    double power;     /* W taken by the dashpot and friction */
    double stiffness; /* k_c, N/m */
} pair_result;

/* The dt the law from the step is at: the running call's in the step's scratch, the
 * last call's for a query. */
static double law_dt(const ss_system *sys, const ss_contact_scratch *found) {
    return found == &sys->contact->found ? sys->contact->step_dt : sys->state.contact_dt;
}

/* The effective mass of pair (i, j), kg: m_i m_j / (m_i + m_j), or the free node's mass
 * when the other is pinned. */
static inline double pair_mass(const double *m, const uint8_t *pinned, int32_t i, int32_t j) {
    return pinned[i] ? m[j] : pinned[j] ? m[i] : m[i] * m[j] / (m[i] + m[j]);
}

/* The force of pair p of `pairs` at state (x, v), the law at substep dt; 0 for
 * coincident nodes (no direction). */
static pair_result pair_law(const ss_system *sys, const int32_t *pairs, const double *x,
                            const double *v, size_t p, double dt) {
    const ss_contact *t = sys->contact;
    const size_t dim = (size_t)sys->dim;
    const int32_t i = pairs[2 * p], j = pairs[2 * p + 1];
    const double *r = SS_DOUBLES(sys, SS_RADII), *m = SS_DOUBLES(sys, SS_MASSES);
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    pair_result out = {{0.0, 0.0, 0.0}, 0.0, 0.0, 0.0};
    double d[3] = {0.0, 0.0, 0.0}, dist2 = 0.0;
    for (size_t w = 0; w < dim; w++) {
        d[w] = x[(size_t)j * dim + w] - x[(size_t)i * dim + w];
        dist2 += d[w] * d[w];
    }
    const double dist = sqrt(dist2), delta = r[i] + r[j] - dist;
    if (!(dist >= SS_MIN_SPRING_LENGTH) || !(delta > 0.0) || (pinned[i] && pinned[j]))
        return out;
    const double m_eff = pair_mass(m, pinned, i, j);
    const double k = ss_contact_pair_stiffness(t, m_eff, dt);
    double n[3] = {0.0, 0.0, 0.0}, vrel[3] = {0.0, 0.0, 0.0};
    for (size_t w = 0; w < dim; w++) {
        n[w] = d[w] / dist;
        vrel[w] = v[(size_t)j * dim + w] - v[(size_t)i * dim + w];
    }
    out.power = ss_contact_law(t, dim, delta, n, vrel, k, m_eff, out.force);
    out.delta = delta;
    out.stiffness = k;
    return out;
}

void ss_contact_search(const ss_system *sys, const double *x) {
    if (ss_contact_step_find(sys, x))
        sys->contact->failed = 1;
}

/* Node pairs found by the step's last search (0 after a failed one). */
static size_t node_pairs(const ss_system *sys) {
    return sys->contact->search_failed ? 0 : sys->contact->found.num_pairs;
}

size_t ss_contact_num_pairs(const ss_system *sys) {
    return node_pairs(sys) + ss_segments_num_pairs(&sys->contact->found);
}

void ss_contact_pair_forces(const ss_system *sys, const double *x, const double *v, size_t first,
                            size_t last) {
    double *out = sys->contact->pair_forces;
    const int32_t *pairs = sys->contact->found.pairs;
    const double dt = sys->contact->step_dt;
    const size_t nodes = node_pairs(sys), split = last < nodes ? last : nodes;
    for (size_t p = first; p < split; p++) {
        const pair_result pr = pair_law(sys, pairs, x, v, p, dt);
        memcpy(out + 3 * p, pr.force, sizeof pr.force);
    }
    /* then the segment pairs (their range follows the node pairs') */
    if (last > nodes)
        ss_segments_pair_forces(sys, &sys->contact->found, x, v, dt,
                                (first > nodes ? first : nodes) - nodes, last - nodes);
}

void ss_contact_gather_forces(const ss_system *sys, double *f, size_t stride) {
    const ss_contact *t = sys->contact;
    const size_t dim = (size_t)sys->dim;
    if (t->search_failed) {
        /* out of memory mid-step: poison the forces so the step rolls back */
        for (size_t i = 0; i < sys->num_nodes; i++)
            f[i * stride] = NAN;
        return;
    }
    const int32_t *pairs = t->found.pairs;
    for (size_t p = 0; p < t->found.num_pairs; p++) {
        const double *F = t->pair_forces + 3 * p;
        double *fi = f + (size_t)pairs[2 * p] * stride, *fj = f + (size_t)pairs[2 * p + 1] * stride;
        for (size_t w = 0; w < dim; w++) {
            fi[w] -= F[w];
            fj[w] += F[w];
        }
    }
    ss_segments_gather_forces(&t->found, f, stride);
}

void ss_contact_add_forces(const ss_system *sys, const double *x, const double *v, double *f,
                           size_t stride) {
    ss_contact_search(sys, x);
    ss_contact_pair_forces(sys, x, v, 0, ss_contact_num_pairs(sys));
    ss_contact_gather_forces(sys, f, stride);
}

/* Search at x in `found`: the step's scratch (kept fit for the step's other buffers) or
 * a query's. */
static int find_in(const ss_system *sys, const double *x, ss_contact_scratch *found) {
    return found == &sys->contact->found
               ? ss_contact_step_find(sys, x)
               : ss_contact_find(sys, x, found) || ss_segments_search(sys, x, found, 0.0);
}

/* 1/2 sum k_c delta^2 over the first `count` pairs of `pairs` at the current positions,
 * the law at substep dt, J: 1/2 k_c sum delta^2 for the user's k_c. */
static double potential(const ss_system *sys, const int32_t *pairs, size_t count, double dt) {
    const double *x = SS_DOUBLES(sys, SS_POSITIONS), *v = SS_DOUBLES(sys, SS_VELOCITIES);
    const int from_step = sys->contact->stiffness == SS_CONTACT_FROM_STEP;
    double sum = 0.0;
    for (size_t p = 0; p < count; p++) {
        const pair_result pr = pair_law(sys, pairs, x, v, p, dt);
        sum += from_step ? pr.stiffness * pr.delta * pr.delta : pr.delta * pr.delta;
    }
    return from_step ? 0.5 * sum : 0.5 * sys->contact->stiffness * sum;
}

double ss_contact_energy(const ss_system *sys, ss_contact_scratch *found) {
    if (find_in(sys, SS_DOUBLES(sys, SS_POSITIONS), found))
        return NAN;
    const double dt = law_dt(sys, found);
    return potential(sys, found->pairs, found->num_pairs, dt) +
           ss_segments_energy(sys, found, SS_DOUBLES(sys, SS_POSITIONS), dt);
}

double ss_contact_found_energy(const ss_system *sys) {
    const ss_contact *t = sys->contact;
    const double sum =
        potential(sys, t->found.pairs, node_pairs(sys), t->step_dt) +
        ss_segments_energy(sys, &t->found, SS_DOUBLES(sys, SS_POSITIONS), t->step_dt);
    return t->search_failed ? NAN : sum;
}

double ss_contact_power(const ss_system *sys) {
    const double *x = SS_DOUBLES(sys, SS_POSITIONS), *v = SS_DOUBLES(sys, SS_VELOCITIES);
    ss_contact_scratch *found = &sys->contact->found;
    if (find_in(sys, x, found))
        return NAN;
    double power = 0.0;
    for (size_t p = 0; p < found->num_pairs; p++)
        power += pair_law(sys, found->pairs, x, v, p, sys->contact->step_dt).power;
    return power + ss_segments_power(sys, found, x, v, sys->contact->step_dt);
}

void ss_contact_stability_rows(const ss_system *sys, double *rows, double *own) {
    if (sys->contact->stiffness == SS_CONTACT_FROM_STEP || !ss_contact_active(sys))
        return; /* the law from the step is stable at any dt by construction */
    const ss_contact *t = sys->contact;
    const size_t n = sys->num_nodes;
    const double *r = SS_DOUBLES(sys, SS_RADII), *m = SS_DOUBLES(sys, SS_MASSES);
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    const double k = t->stiffness, friction = t->friction > 0.0 ? 1.0 : 0.0;
    /* damping per sqrt(k m_eff): the dashpot's 2 zeta and friction's 2 */
    const double damping = 2.0 * t->zeta + 2.0 * friction;
    memset(own, 0, 2 * n * sizeof *own);
    ss_contact_scratch found = {0}; /* a query's: the step's scratch is not touched */
    int searched = ss_contact_find(sys, SS_DOUBLES(sys, SS_POSITIONS), &found) == 0;
    for (size_t p = 0; searched && p < found.num_pairs; p++) {
        const int32_t i = found.pairs[2 * p], j = found.pairs[2 * p + 1];
        if (pinned[i] && pinned[j])
            continue;
        const double m_eff = pair_mass(m, pinned, i, j);
        const double c = damping * sqrt(k * m_eff);
        const int32_t ends[2][2] = {{i, j}, {j, i}};
        for (int e = 0; e < 2; e++) {
            const int32_t a = ends[e][0], b = ends[e][1];
            if (pinned[a])
                continue;
            const double weight = 1.0 / m[a] + (pinned[b] ? 0.0 : 1.0 / sqrt(m[a] * m[b]));
            own[2 * a] += k * weight;
            own[2 * a + 1] += c * weight;
        }
    }
    ss_contact_scratch_release(&found);
    /* A node with no contact now may meet a node of its own mass: w^2 = 2 k / m. */
    for (size_t i = 0; i < n; i++) {
        if (pinned[i] || !(r[i] > 0.0))
            continue;
        const double one_w2 = 2.0 * k / m[i], one_g = 2.0 * damping * sqrt(0.5 * k * m[i]) / m[i];
        rows[2 * i] += own[2 * i] > one_w2 ? own[2 * i] : one_w2;
        rows[2 * i + 1] += own[2 * i] > one_w2 ? own[2 * i + 1] : one_g;
    }
}

void ss_contact_frames(const ss_system *sys, const double *x, double scale_c, double scale_k) {
    const ss_contact *t = sys->contact;
    const size_t dim = (size_t)sys->dim;
    const double *r = SS_DOUBLES(sys, SS_RADII), *m = SS_DOUBLES(sys, SS_MASSES);
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    const int32_t *pairs = t->found.pairs;
    for (size_t p = 0; p < node_pairs(sys); p++) {
        const int32_t i = pairs[2 * p], j = pairs[2 * p + 1];
        double *frame = t->frames + SS_CONTACT_FRAME * p, dist2 = 0.0;
        for (size_t w = 0; w < 3; w++) {
            frame[w] = w < dim ? x[(size_t)j * dim + w] - x[(size_t)i * dim + w] : 0.0;
            dist2 += frame[w] * frame[w];
        }
        const double dist = sqrt(dist2);
        frame[3] = 0.0;
        if (!(dist >= SS_MIN_SPRING_LENGTH) || !(r[i] + r[j] - dist > 0.0) ||
            (pinned[i] && pinned[j]))
            continue; /* no force (pair_law's cases): no block */
        for (size_t w = 0; w < dim; w++)
            frame[w] /= dist;
        if (t->stiffness == SS_CONTACT_FROM_STEP)
            continue; /* explicit (see "The restitution of the law from the step") */
        const double m_eff = pair_mass(m, pinned, i, j);
        const double k = ss_contact_pair_stiffness(t, m_eff, t->step_dt);
        const double c = 2.0 * t->zeta * sqrt(k * m_eff);
        frame[3] = (scale_c == 0.0 ? 0.0 : scale_c * c) + scale_k * k;
    }
}

void ss_contact_add_blocks(const ss_system *sys, const double *p, double *out) {
    const ss_contact *t = sys->contact;
    const size_t dim = (size_t)sys->dim;
    for (size_t q = 0; q < node_pairs(sys); q++) {
        const double *frame = t->frames + SS_CONTACT_FRAME * q;
        if (frame[3] == 0.0)
            continue;
        const size_t i = (size_t)t->found.pairs[2 * q] * dim;
        const size_t j = (size_t)t->found.pairs[2 * q + 1] * dim;
        double along = 0.0;
        for (size_t w = 0; w < dim; w++)
            along += frame[w] * (p[i + w] - p[j + w]);
        for (size_t w = 0; w < dim; w++) {
            const double g = frame[3] * along * frame[w];
            out[i + w] += g;
            out[j + w] -= g;
        }
    }
}

void ss_contact_add_diagonal(const ss_system *sys, double *diag) {
    const ss_contact *t = sys->contact;
    const size_t dim = (size_t)sys->dim;
    for (size_t q = 0; q < node_pairs(sys); q++) {
        const double *frame = t->frames + SS_CONTACT_FRAME * q;
        for (int end = 0; end < 2; end++) {
            const size_t i = (size_t)t->found.pairs[2 * q + end] * dim;
            for (size_t w = 0; w < dim; w++)
                diag[i + w] += frame[3] * frame[w] * frame[w];
        }
    }
}

/* ---- Contact as constraints (XPBD) ----------------------------------------------
 *
 * XPBD (xpbd.c) does not take the law above: it projects each pair as an inequality
 * constraint (Macklin, Mueller and Chentanez 2016; contacts and friction as in Macklin
 * et al. 2020, "Detailed rigid body simulation with extended position based dynamics",
 * and Mueller et al. 2020, "Small steps in physics simulation"), in the passes of its
 * solve after the springs. The pairs: those within r_i + r_j + margin at the predicted
 * positions, the margin 2 max |x - s| (the most a node was predicted to move in the
 * substep, at most r_max: a pair that the corrections bring into contact is in the list),
 * sorted by (i, j) so that the solve order is the oracle's. For pair (i, j), w = 1/m (0
 * pinned), d = x_j - x_i, l = |d|, n = d / l, C = l - (r_i + r_j):
 *     dlambda = (-C - a~ lambda) / (w_i + w_j + a~),  then clamped so that lambda >= 0
 *     (a contact pushes, never pulls: dlambda = max(dlambda, -lambda)),
 *     x_i -= w_i dlambda n,  x_j += w_j dlambda n,                        [kg m]
 * a~ = 1 / (k_c dt^2) for the user's k_c in N/m (XPBD's compliance: the penalty law's
 * resting overlap, unconditionally stable), 0 for the stiffness from the step (a hard
 * constraint: no overlap left once the passes converge). Friction, positional: the
 * relative slip of the substep, p = (x_j - s_j) - (x_i - s_i), its part across n,
 * p_t = p - (p.n) n, is taken back by dmu = min(|p_t| / (w_i + w_j), mu lambda - lambda_t),
 * lambda_t += dmu (Coulomb's cone: the friction correction, in all, is at most mu times
 * the normal one), x_i += w_i dmu t, x_j -= w_j dmu t, t = p_t / |p_t|: static friction
 * when the slip fits the cone (the node stays where it touched), sliding friction (a
 * deceleration mu g on a level support) when it does not. Restitution, a velocity pass
 * after v = (x - s) / dt (Macklin 2020, 3.5): each pair that pushed (lambda > 0) and was
 * coming in before the solve, with u_n = (v_j - v_i).n now and u0 < 0 the same before
 * the solve (the prediction's), gets the separating speed e (-u0) if it came in faster
 * than 2 |g| dt (slower: e = 0, so that a resting contact does not jitter), by dv_i = -w_i / (w_i +
 * w_j) du n, dv_j = +w_j / (w_i + w_j) du n, du = target - u_n: equal and opposite impulses
 * (momentum kept), a head-on collision leaving with exactly e times its approach speed. The frames
 * hold, per pair, (lambda, u0, lambda_t, a~). springsim.reference (_xpbd) is the same in NumPy. */

static int by_pair(const void *a, const void *b) {
    const int32_t *p = a, *q = b;
    return p[0] != q[0] ? (p[0] > q[0]) - (p[0] < q[0]) : (p[1] > q[1]) - (p[1] < q[1]);
}

int ss_contact_find_near(const ss_system *sys, const double *x, double margin,
                         ss_contact_scratch *found) {
    if (find_within(sys, x, found, margin))
        return -1;
    if (found->num_pairs > 1)
        qsort(found->pairs, found->num_pairs, 2 * sizeof(int32_t), by_pair);
    return 0;
}

int ss_contact_constraints_begin(const ss_system *sys, const double *x, const double *v,
                                 double margin, double dt) {
    ss_contact *t = sys->contact;
    t->search_failed = find_within(sys, x, &t->found, margin) || fit_frames(t) ||
                       ss_segments_search(sys, x, &t->found, margin);
    if (t->search_failed)
        return -1;
    ss_segments_constraints_begin(&t->found);
    if (t->found.num_pairs > 1)
        qsort(t->found.pairs, t->found.num_pairs, 2 * sizeof(int32_t), by_pair);
    const size_t dim = (size_t)sys->dim;
    const double compliance =
        t->stiffness == SS_CONTACT_FROM_STEP ? 0.0 : 1.0 / (t->stiffness * dt * dt);
    t->segment_compliance = compliance;
    for (size_t p = 0; p < t->found.num_pairs; p++) {
        const size_t i = (size_t)t->found.pairs[2 * p], j = (size_t)t->found.pairs[2 * p + 1];
        double d2 = 0.0, along = 0.0;
        for (size_t w = 0; w < dim; w++) {
            const double d = x[j * dim + w] - x[i * dim + w];
            d2 += d * d;
            along += (v[j * dim + w] - v[i * dim + w]) * d;
        }
        const double dist = sqrt(d2);
        double *frame = t->frames + SS_CONTACT_FRAME * p;
        frame[0] = 0.0;
        frame[1] = dist >= SS_MIN_SPRING_LENGTH ? along / dist : 0.0;
        frame[2] = 0.0;
        frame[3] = compliance;
    }
    return 0;
}

void ss_contact_constraints_solve(const ss_system *sys, double *records, size_t stride) {
    const ss_contact *t = sys->contact;
    const double *r = SS_DOUBLES(sys, SS_RADII), mu = t->friction;
    for (size_t p = 0; p < t->found.num_pairs; p++) {
        const size_t i = (size_t)t->found.pairs[2 * p], j = (size_t)t->found.pairs[2 * p + 1];
        double *xi = records + i * stride, *xj = records + j * stride;
        double *frame = t->frames + SS_CONTACT_FRAME * p;
        const double wsum = xi[3] + xj[3];
        if (wsum == 0.0)
            continue;
        const double d0 = xj[0] - xi[0], d1 = xj[1] - xi[1], d2 = xj[2] - xi[2];
        const double l2 = (d0 * d0 + d1 * d1) + d2 * d2;
        if (l2 < SS_MIN_SPRING_LENGTH * SS_MIN_SPRING_LENGTH)
            continue;
        const double length = sqrt(l2), inv = 1.0 / length;
        const double n[3] = {d0 * inv, d1 * inv, d2 * inv};
        const double c = length - (r[i] + r[j]), lambda = frame[0];
        if (c >= 0.0 && lambda == 0.0)
            continue; /* apart, and not pushed this substep */
        double dlambda = (-c - frame[3] * lambda) / (wsum + frame[3]);
        if (lambda + dlambda < 0.0)
            dlambda = -lambda;
        frame[0] = lambda + dlambda;
        for (int k = 0; k < 3; k++) {
            xi[k] = xi[k] - xi[3] * (dlambda * n[k]);
            xj[k] = xj[k] + xj[3] * (dlambda * n[k]);
        }
        const double room = mu * frame[0] - frame[2];
        if (!(mu > 0.0) || !(room > 0.0))
            continue;
        double slip[3];
        for (int k = 0; k < 3; k++)
            slip[k] = (xj[k] - xj[4 + k]) - (xi[k] - xi[4 + k]);
        const double dmu = ss_contact_friction_take(slip, n, room, wsum);
        if (!(dmu > 0.0))
            continue;
        frame[2] = frame[2] + dmu;
        for (int k = 0; k < 3; k++) {
            const double g = dmu * slip[k];
            xi[k] = xi[k] + xi[3] * g;
            xj[k] = xj[k] - xj[3] * g;
        }
    }
    ss_segments_constraints_solve(sys, &sys->contact->found, records, stride,
                                  sys->contact->segment_compliance);
}

size_t ss_contact_constraints_restitute(const ss_system *sys, const double *x, double *v,
                                        const double *inv_mass, double threshold) {
    const ss_contact *t = sys->contact;
    const size_t dim = (size_t)sys->dim;
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    const double e = t->restitution;
    size_t pushed = 0;
    for (size_t p = 0; p < t->found.num_pairs; p++) {
        const double *frame = t->frames + SS_CONTACT_FRAME * p;
        if (!(frame[0] > 0.0))
            continue;
        pushed++;
        const size_t i = (size_t)t->found.pairs[2 * p], j = (size_t)t->found.pairs[2 * p + 1];
        const double wi = pinned[i] ? 0.0 : inv_mass[i], wj = pinned[j] ? 0.0 : inv_mass[j];
        double n[3] = {0.0, 0.0, 0.0}, d2 = 0.0;
        for (size_t w = 0; w < dim; w++) {
            n[w] = x[j * dim + w] - x[i * dim + w];
            d2 += n[w] * n[w];
        }
        if (d2 < SS_MIN_SPRING_LENGTH * SS_MIN_SPRING_LENGTH)
            continue;
        const double length = sqrt(d2);
        double un = 0.0;
        for (size_t w = 0; w < dim; w++) {
            n[w] = n[w] / length;
            un += (v[j * dim + w] - v[i * dim + w]) * n[w];
        }
        const double u0 = frame[1];
        if (!(u0 < 0.0))
            continue; /* it was not coming in: the solve's velocity stands */
        const double target = -u0 > threshold ? e * -u0 : 0.0;
        const double du = target - un, wsum = wi + wj;
        for (size_t w = 0; w < dim; w++) {
            v[i * dim + w] = v[i * dim + w] - (wi / wsum) * (du * n[w]);
            v[j * dim + w] = v[j * dim + w] + (wj / wsum) * (du * n[w]);
        }
    }
    return pushed + ss_segments_constraints_pushed(&sys->contact->found);
}
