/* parallel.c - the thread count, and the spring colouring that lets implicit_euler's
 * threads add block products without atomics while keeping results bit-identical
 * (the force loop uses the block plan of plan.c instead), and that is XPBD's solve
 * order (xpbd.c).
 *
 * A spring scatters its force into both its nodes. Two threads adding into one node
 * at once would race, and atomics would make the order of the additions (and so the
 * rounding) depend on timing. Instead the springs are coloured so that no two
 * springs of one colour share a node: within a colour every node receives at most
 * one force, so threads never collide, and every node sums its springs in colour
 * order whatever the number of threads. One thread runs the same order. */
#include "springsim.h"

#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Below this many springs a step is too short for threads to pay for themselves. */
#define SS_MIN_PARALLEL_SPRINGS 8192

static int num_threads = 1;

#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__)
#include <xmmintrin.h>
/* MXCSR: flush-to-zero (bit 15), denormals-are-zero (bit 6), rounding (bits 13-14). */
#define SS_MXCSR_NOT_IEEE 0xE040u
ss_fpstate ss_fp_enter(void) {
    const unsigned saved = _mm_getcsr();
    if (saved & SS_MXCSR_NOT_IEEE)
        _mm_setcsr(saved & ~SS_MXCSR_NOT_IEEE);
    return saved;
}
void ss_fp_leave(ss_fpstate saved) {
    if (saved & (SS_MXCSR_NOT_IEEE | 0x10000u)) /* bit 16: set even an IEEE word */
        _mm_setcsr(saved & 0xFFFFu);
}
#else
ss_fpstate ss_fp_enter(void) {
    return 0; /* other CPUs: the C default mode, which nothing here changes */
}
void ss_fp_leave(ss_fpstate saved) {
    (void)saved;
}
#endif

int ss_threading_available(void) {
#ifdef _OPENMP
    return 1;
#else
    return 0;
#endif
}

int ss_set_num_threads(int n) {
    num_threads = n < 1 ? 1 : n;
    if (!ss_threading_available())
        num_threads = 1;
    return num_threads;
}

int ss_get_num_threads(void) {
    return num_threads;
}

int ss_threads_for(const ss_system *sys) {
    if (sys->num_springs < SS_MIN_PARALLEL_SPRINGS || num_threads == 1)
        return 1;
    return sys->scratch.tuner.use > 0 ? sys->scratch.tuner.use : num_threads;
}

/* The median of n <= 8 values (sorted copy). */
static double median(const double *values, unsigned n) {
    double sorted[8];
    memcpy(sorted, values, n * sizeof(double));
    for (unsigned a = 1; a < n; a++)
        for (unsigned b = a; b > 0 && sorted[b - 1] > sorted[b]; b--) {
            const double t = sorted[b];
            sorted[b] = sorted[b - 1];
            sorted[b - 1] = t;
        }
    return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

/* Each cycle: substeps 0-3 on the choice, 4-7 on the other one (the probe), then the
 * decision, then the rest on the choice. The first decision comes after 8 substeps;
 * a cycle lasts 64 substeps after a change and doubles, up to SS_TUNE_CYCLE_MAX, each
 * time the answer stays the same: probing costs 4 / 64 of the substeps at first and
 * under 1 % once the choice is settled. */
#define SS_TUNE_CYCLE_MAX 1024
#define SS_TUNE_PROBE_FIRST 4
#define SS_TUNE_PROBE_LAST 8

static int probing(const ss_system *sys) {
    return sys->scratch.tuner.phase >= SS_TUNE_PROBE_FIRST &&
           sys->scratch.tuner.phase < SS_TUNE_PROBE_LAST;
}

int ss_threads_begin_substep(ss_system *sys) {
    if (sys->num_springs < SS_MIN_PARALLEL_SPRINGS || num_threads == 1) {
        sys->scratch.tuner.use = 1;
        return 0; /* nothing to tune: no need to time */
    }
    if (sys->scratch.tuner.use == 0) /* the first substep of this system: start threaded */
        sys->scratch.tuner.threaded = 1;
    const int threaded = probing(sys) ? !sys->scratch.tuner.threaded : sys->scratch.tuner.threaded;
    sys->scratch.tuner.use = threaded ? num_threads : 1;
    return 1;
}

void ss_threads_end_substep(ss_system *sys, double seconds) {
    const unsigned phase = sys->scratch.tuner.phase;
    if (probing(sys))
        sys->scratch.tuner.probe[phase - SS_TUNE_PROBE_FIRST] = seconds;
    else
        sys->scratch.tuner.recent[sys->scratch.tuner.recent_count++ % 8] = seconds;
    if (sys->scratch.tuner.recent_count >= 16) /* keep the count small, its index mod 8 */
        sys->scratch.tuner.recent_count = 8 + sys->scratch.tuner.recent_count % 8;
    const unsigned cycle = sys->scratch.tuner.cycle ? sys->scratch.tuner.cycle : SS_TUNE_CYCLE;
    sys->scratch.tuner.phase = phase + 1 >= cycle ? 0 : phase + 1;
    if (phase + 1 != SS_TUNE_PROBE_LAST)
        return;
    /* Switch only for a clear gain (5 %), comparing medians of noisy clocks. */
    const unsigned recent =
        sys->scratch.tuner.recent_count < 8 ? sys->scratch.tuner.recent_count : 8;
    if (median(sys->scratch.tuner.probe, SS_TUNE_PROBE_LAST - SS_TUNE_PROBE_FIRST) <
        0.95 * median(sys->scratch.tuner.recent, recent)) {
        sys->scratch.tuner.threaded = !sys->scratch.tuner.threaded;
        memcpy(sys->scratch.tuner.recent, sys->scratch.tuner.probe,
               sizeof sys->scratch.tuner.probe);
        sys->scratch.tuner.recent_count = SS_TUNE_PROBE_LAST - SS_TUNE_PROBE_FIRST;
        sys->scratch.tuner.cycle = SS_TUNE_CYCLE; /* a change: look again soon */
    } else if (cycle < SS_TUNE_CYCLE_MAX) {
        sys->scratch.tuner.cycle = 2 * cycle; /* the same answer: probe less and less often */
    }
}

void ss_colouring_forget(ss_system *sys) {
    ss_free(sys->scratch.colour_order);
    ss_free(sys->scratch.colour_start);
    sys->scratch.colour_order = NULL;
    sys->scratch.colour_start = NULL;
    sys->scratch.num_colours = 0;
    sys->scratch.colouring_valid = 0;
}

/* Greedy edge colouring in spring order: each spring takes the lowest colour in
 * 0..62 free at both its nodes, or else the overflow colour SS_SERIAL_COLOUR (which
 * marks nothing). A graph of maximum degree D needs at most 2D - 1 colours this way
 * (D or D + 1 are optimal): 12 for a cloth with shear and bend springs, whose nodes
 * have 12 springs. Within a colour, springs stay in index order (memory locality).
 * XPBD solves in this order, and springsim.reference.colour_order computes it again:
 * change it only with both. */
ss_status ss_system_ensure_colouring(ss_system *sys) {
    if (sys->scratch.colouring_valid)
        return SS_OK;
    const size_t n = sys->num_nodes, m = sys->num_springs;
    const int32_t *pairs = SS_INT32S(sys, SS_SPRINGS);
    uint64_t *used = ss_malloc(n * sizeof *used);
    uint8_t *colour = ss_malloc(m);
    int32_t *order = ss_malloc(m * sizeof *order);
    size_t *start = ss_malloc((SS_SERIAL_COLOUR + 2) * sizeof *start);
    if (!used || !colour || !order || !start) {
        ss_free(used);
        ss_free(colour);
        ss_free(order);
        ss_free(start);
        return ss_fail(sys, SS_ERR_NOMEM, "out of memory colouring %zu springs", m);
    }
    memset(used, 0, n * sizeof *used);
    size_t count[SS_SERIAL_COLOUR + 1] = {0};
    size_t colours = 0;
    for (size_t s = 0; s < m; s++) {
        const int32_t i = pairs[2 * s], j = pairs[2 * s + 1];
        const uint64_t taken = used[i] | used[j];
        unsigned c = 0;
        while (c < SS_SERIAL_COLOUR && (taken >> c & 1u))
            c++;
        if (c < SS_SERIAL_COLOUR) {
            used[i] |= (uint64_t)1 << c;
            used[j] |= (uint64_t)1 << c;
        }
        colour[s] = (uint8_t)c;
        count[c]++;
        if (c + 1 > colours)
            colours = c + 1;
    }
    start[0] = 0;
    for (size_t c = 0; c < colours; c++)
        start[c + 1] = start[c] + count[c];
    size_t fill[SS_SERIAL_COLOUR + 1];
    memcpy(fill, start, sizeof fill);
    for (size_t s = 0; s < m; s++)
        order[fill[colour[s]]++] = (int32_t)s;
    ss_free(used);
    ss_free(colour);
    ss_colouring_forget(sys);
    sys->scratch.colour_order = order;
    sys->scratch.colour_start = start;
    sys->scratch.num_colours = colours;
    sys->scratch.colouring_valid = 1;
    return SS_OK;
}
