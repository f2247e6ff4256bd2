/* divergence_calls.c - the divergence watch's account for a loop of short calls: what
 * it assumes unchanged between its calls, and the size bound that calls a check at
 * once.
 *
 * A plain call of fewer than SS_BOOKS_EVERY substeps is too short for books of its own;
 * a loop of them keeps one account (divergence.c's casual books) instead: its substep
 * counter goes on from call to call, so that every SS_BOOKS_EVERY-th substep of the
 * loop is checked, and the work is measured from the positions at the account's last
 * check (the work up to there is folded into the energy available then). Between its
 * calls the account assumes that nothing but the steps changed the state, and it starts
 * afresh, from the state then, after anything that may have. A write through a view: a
 * writable view of an array the books read (positions, velocities, masses, pins,
 * external forces, stiffness, rest lengths, radii, groups) is hashed when it is first
 * made after a call (ss_books_note_view), or when a call ends while one is still alive,
 * and the next call compares the hashes as it begins (a view that was only read keeps
 * the account), as it compares the number of nodes. (The radii and groups too: they
 * decide the contacts' potential, which counts as available when the account opens.)
 * Anything else, a kernel setter (an assignment, a pin, a gas, contact or
 * self-collision setting: sys->state_edits), a topology edit, other gravity, wind, drag
 * or air, is found at the account's next check, which then opens it afresh instead of
 * judging: an edit can delay a verdict by one check, never cause one. A copy, a save or
 * a pickle closes the account (ss_books_forget), so that the twin and the original both
 * start afresh from the same state and step alike. A continued call costs a few
 * comparisons; a check, divergence.c's sums, a copy of x and one pass for the bound,
 * once per SS_BOOKS_EVERY substeps.
 *
 * The bound: a blow-up can outgrow the counter (at twice the stability limit the energy
 * grows 75-fold per substep), so each short call also checks the size of the state, in
 * the finiteness probe it makes anyway (integrate.c, node_pass.c): 0 * ((x s) s)
 * overflows to NaN once |x| > bound for s = sqrt(DBL_MAX / bound). The bound is the
 * largest |coordinate| at the last check plus a margin of at least the largest side of
 * the nodes' box; a check runs as soon as a coordinate passes it, and the margin
 * doubles at each check it called and halves at the periodic ones (down to that side):
 * a blow-up is checked every time the state doubles in size, a motion that travels far
 * costs a check per doubling of its distance. */
#include "springsim.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* A hash of array a's bytes (one of SS_BOOKS_READ): word k (8 bytes, the tail padded with
 * zeros) enters as h ^= w_k + (k + 1) c, a loop the compiler vectorises ((k + 1) c is
 * carried as a sum). A write that keeps it needs values chosen for it. */
static uint64_t array_hash(const ss_system *sys, ss_array a) {
    const size_t n = sys->num_nodes, m = sys->num_springs, dim = (size_t)sys->dim;
    const size_t bytes = a == SS_PINNED                              ? n
                         : a == SS_GROUPS                            ? n * sizeof(int32_t)
                         : a == SS_STIFFNESS || a == SS_REST_LENGTHS ? m * sizeof(double)
                         : a == SS_MASSES || a == SS_RADII           ? n * sizeof(double)
                                                                     : n * dim * sizeof(double);
    const unsigned char *data = (const unsigned char *)sys->arrays[a]->data;
    const uint64_t c = 0x9E3779B97F4A7C15u;
    const size_t words = bytes / 8;
    uint64_t h = (uint64_t)bytes, tail = 0, kc = c;
    for (size_t k = 0; k < words; k++) {
        uint64_t w;
        memcpy(&w, data + 8 * k, 8);
        h ^= w + kc;
        kc += c;
    }
    memcpy(&tail, data + 8 * words, bytes - 8 * words);
    return h ^ (tail + kc);
}

int ss_books_unchanged(const ss_system *sys, const struct ss_books *b) {
    if (sys->state_edits != b->edits || sys->topology_edits != b->topology ||
        sys->num_nodes != b->nodes || sys->num_springs != b->springs || sys->drag != b->drag ||
        sys->air_density != b->air_density || sys->drag_coeff != b->drag_coefficient)
        return 0;
    for (int c = 0; c < sys->dim; c++)
        if (sys->gravity[c] != b->gravity[c] || sys->wind[c] != b->wind[c])
            return 0;
    return 1;
}

int ss_books_views_unchanged(const ss_system *sys, const struct ss_books *b) {
    for (uint32_t left = b->hashed; left; left &= left - 1) { /* the arrays hashed */
        int a = 0;
        while (!(left >> a & 1u))
            a++;
        if (ss_array_absent(sys, a) || array_hash(sys, a) != b->hash[a])
            return 0;
    }
    return 1;
}

void ss_books_record(const ss_system *sys, struct ss_books *b) {
    b->edits = sys->state_edits; /* (a step changes none of these) */
    b->aero = ss_aero_active(sys);
    b->topology = sys->topology_edits;
    b->nodes = sys->num_nodes;
    b->springs = sys->num_springs;
    b->drag = sys->drag;
    b->air_density = sys->air_density;
    b->drag_coefficient = sys->drag_coeff;
    for (int c = 0; c < 3; c++) {
        b->gravity[c] = sys->gravity[c];
        b->wind[c] = sys->wind[c];
    }
}

void ss_books_end_call(const ss_system *sys, struct ss_books *b) {
    for (uint32_t left = b->hashed; left; left &= left - 1) {
        int a = 0;
        while (!(left >> a & 1u))
            a++;
        b->hash[a] = array_hash(sys, a);
    }
}

double ss_books_probe_scale(double bound) {
    if (!(bound < DBL_MAX))
        return 0.0; /* no bound: (x 0) 0 is 0, or NaN for a non-finite x */
    return sqrt(DBL_MAX / (bound > 1e-280 ? bound : 1e-280));
}

void ss_books_set_bound(ss_system *sys, struct ss_books *b, int beyond) {
    const size_t dim = (size_t)sys->dim, n = sys->num_nodes;
    const double *x = SS_DOUBLES(sys, SS_POSITIONS);
    double lo[3] = {0.0, 0.0, 0.0}, hi[3] = {0.0, 0.0, 0.0}, reach = 0.0, side = 0.0;
    for (size_t i = 0; i < n; i++)
        for (size_t c = 0; c < dim; c++) {
            const double q = x[i * dim + c];
            lo[c] = i == 0 || q < lo[c] ? q : lo[c];
            hi[c] = i == 0 || q > hi[c] ? q : hi[c];
            reach = fabs(q) > reach ? fabs(q) : reach;
        }
    for (size_t c = 0; c < dim; c++)
        side = hi[c] - lo[c] > side ? hi[c] - lo[c] : side;
    /* (1 m for nodes that all sit at the origin) */
    const double least = side > 0.0 ? side : reach > 0.0 ? reach : 1.0;
    const double margin = beyond ? 2.0 * b->margin : 0.5 * b->margin;
    b->margin = margin > least ? margin : least;
    b->bound = reach + b->margin;
    b->scale = sys->scratch.probe_scale = ss_books_probe_scale(b->bound);
}

void ss_books_note_view(ss_system *sys, ss_array which) {
    struct ss_books *b = sys->scratch.books;
    if (!b || !b->open || !b->casual || !(SS_BOOKS_READ >> which & 1u) ||
        (b->hashed >> which & 1u) || ss_array_absent(sys, which))
        return;
    b->hash[which] = array_hash(sys, which);
    b->hashed |= 1u << which;
}

void ss_books_forget(const ss_system *sys) {
    if (sys->scratch.books && sys->scratch.books->casual)
        sys->scratch.books->open = 0;
}
