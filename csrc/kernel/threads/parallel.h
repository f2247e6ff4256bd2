/* parallel.h - part of the kernel API: threads, the spring colouring, the spring plan and force
 * loop (parallel.c, plan.c, spring_pass.c). Included by springsim.h only, at its place there (it
 * uses what comes before it). */
#ifndef SPRINGSIM_PARALLEL_H
#define SPRINGSIM_PARALLEL_H

/* ---- Threads and the spring colouring (parallel.c) -------------------- */

/* The floating-point mode of the calling thread (x86: MXCSR). A library that sets
 * flush-to-zero or denormals-are-zero in one thread (some JIT runtimes do) would make
 * that thread round tiny values differently from the kernel's other threads; the
 * kernel's loops run in the IEEE default mode (round to nearest, denormals kept) on
 * every thread, and leave each thread's mode as they found it. */
typedef unsigned ss_fpstate;
ss_fpstate ss_fp_enter(void);
void ss_fp_leave(ss_fpstate saved);

/* Colours are bits of a 64-bit mask per node; springs of a node with more than 63
 * springs that find no free colour go to this last colour, run by one thread. */
#define SS_SERIAL_COLOUR 63

/* Nonzero when the kernel was compiled with OpenMP. */
int ss_threading_available(void);
/* Threads the kernel uses for a large system; n < 1 means 1. Returns the value set. */
int ss_set_num_threads(int n);
int ss_get_num_threads(void);
/* Threads for a force evaluation of this system: 1 when it is too small to gain from
 * more, else what the tuner chose for the current substep. */
int ss_threads_for(const ss_system *sys);
/* Around each substep of a step call: pick the thread count for it, and report its wall
 * time. Every cycle (SS_TUNE_CYCLE substeps, longer while the answer stays the same) a
 * few run on the other choice (1 thread or the configured count); the faster one, by
 * the median, is kept. On a machine whose other cores are busy, threads then stop
 * costing more than they gain. */
#define SS_TUNE_CYCLE 64
int ss_threads_begin_substep(ss_system *sys);
void ss_threads_end_substep(ss_system *sys, double seconds);
/* Build the colouring (implicit_euler's block product and XPBD's solve order use it)
 * if the topology changed since the last one. */
ss_status ss_system_ensure_colouring(ss_system *sys);
/* Free the colouring, to be rebuilt when needed (ss_system_topology_changed calls it). */
void ss_colouring_forget(ss_system *sys);

/* ---- The spring plan (plan.c) ------------------------------------------ */

/* Build the plan if the topology changed since the last one. */
ss_status ss_system_ensure_plan(ss_system *sys);
/* Recompute the plan's 1 / m (ss_system_validate calls it when the masses may have
 * changed). */
void ss_plan_refresh_masses(ss_system *sys);
void ss_plan_free(ss_plan *plan);
/* Bytes the plan holds. */
size_t ss_plan_nbytes(const ss_plan *plan);

/* ---- The spring force loop (spring_pass.c) ----------------------------- */

/* Springs shorter than this (m) exert no force: their direction is undefined. */
#define SS_MIN_SPRING_LENGTH 1e-12

/* What the spring loop reads. */
typedef struct {
    const int32_t *pairs;
    const double *rest, *stiffness, *damping;
    const double *x, *v;
    size_t num_nodes;
} ss_spring_view;

/* The code paths of the spring loop; every one gives the same bits. One path is in use
 * for the whole process, and every SIMD-dispatched pass follows it (the spring and node
 * passes, RK4's stages, XPBD's solve, the divergence watch; a pass built only portable
 * and AVX2 takes AVX2 for AVX-512; a new SIMD pass, such as a vertex pass, branches on
 * ss_simd_get() the same way). Unless set first, the first ss_simd_get() chooses it by
 * measuring the spring loop on a small probe cloth, once per process and thread-safely
 * (spring_pass.c, "Choosing a path"). */
enum { SS_SIMD_PORTABLE = 0, SS_SIMD_AVX2, SS_SIMD_AVX512, SS_SIMD_COUNT };
/* How the path in use was chosen: not yet; measured (the fastest, a near-tie going to
 * the simpler path); forced (SPRINGSIM_SIMD) or set (set_simd) through ss_simd_set;
 * the only path this CPU and build have; not measured (no memory for the probe: the
 * portable path). */
enum {
    SS_SIMD_UNCHOSEN = 0,
    SS_SIMD_MEASURED,
    SS_SIMD_FORCED,
    SS_SIMD_SET,
    SS_SIMD_ONLY,
    SS_SIMD_UNMEASURED
};
const char *ss_simd_name(int path);
/* "unchosen", "measured", "forced", "set", "only", "unmeasured". */
const char *ss_simd_how_name(int how);
/* Nonzero when this CPU (and build) can run the path. */
int ss_simd_available(int path);
/* The measured fastest available path (measured on the first call of this or of
 * ss_simd_get, a few milliseconds; later calls return the same answer). */
int ss_simd_best(void);
/* Use this path from now on, recording how it was chosen (SS_SIMD_FORCED or
 * SS_SIMD_SET); how = SS_SIMD_MEASURED: back to ss_simd_best() (path ignored).
 * Returns the path, or -1 if it is not available (then nothing changes). */
int ss_simd_set(int path, int how);
/* The path in use: chosen on first use as above. Safe from any thread. */
int ss_simd_get(void);
/* How the path in use was chosen (SS_SIMD_UNCHOSEN before the first use). */
int ss_simd_how(void);
/* The measurement: each path's median ns per spring (0 for one not measured), the
 * thread CPU seconds it took and how many measurements ran (0 or 1). Returns nonzero
 * if it ran; it never starts one. */
int ss_simd_measurement(double ns_per_spring[SS_SIMD_COUNT], double *seconds, int *runs);
/* Doubles per row of force arrays: 4 in 3D ((fx, fy, fz, 0): one 256-bit add), 2 in 2D. */
size_t ss_force_stride(int dim);
/* f += the forces of springs [first, last), added to both ends spring by spring; f has
 * rows of ss_force_stride(dim) doubles. x and v (N, dim) must be readable for one row
 * past the last node (the kernel pads every array and its scratch). */
void ss_springs_scatter(const ss_spring_view *sv, int dim, size_t first, size_t last, double *f);
/* out (count, ss_force_stride(dim)): the force on the first node of each spring
 * index[q] (zeros for a spring too short to pull). */
void ss_springs_forces(const ss_spring_view *sv, int dim, const int32_t *index, size_t count,
                       double *out);

#endif
