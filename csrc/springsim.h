/* springsim.h - the kernel's own API (prefix ss_).
 *
 * Pure C11: nothing here knows about Python. The CPython glue (module.c and the
 * py_*.c files, see py_system.h) is the only caller that does. Every function that
 * can fail returns an ss_status and, on failure, leaves the system exactly as it was
 * and writes a message into sys->error.
 *
 * Units: metres, kilograms, seconds, newtons.
 */
#ifndef SPRINGSIM_H
#define SPRINGSIM_H

#include <stddef.h>
#include <stdint.h>

#include "compiler.h"

typedef enum {
    SS_OK = 0,
    SS_ERR_NOMEM,       /* an allocation failed */
    SS_ERR_VALUE,       /* a value is out of its domain: NaN, negative mass, dt <= 0, ... */
    SS_ERR_INDEX,       /* a node or spring index is out of range */
    SS_ERR_UNSTABLE,    /* a step blew up (non-finite, diverged); the state was rolled back */
    SS_ERR_INTERRUPTED, /* the caller's poll asked a step to stop; the state was rolled back */
    SS_ERR_HOOK,        /* a drive's hook failed (it keeps its error); the state was rolled back */
} ss_status;

typedef enum {
    SS_EULER = 0,
    SS_SYMPLECTIC_EULER,
    SS_VERLET,
    SS_VELOCITY_VERLET,
    SS_RK2,
    SS_RK4,
    SS_XPBD,
    SS_IMPLICIT_EULER,
    SS_VBD,
    SS_METHOD_COUNT
} ss_method;

/* The name of a method ("rk4"), or NULL when out of range. */
const char *ss_method_name(int method);
/* The method with this name, or -1. */
int ss_method_from_name(const char *name);

/* ---- Allocation (memory.c) --------------------------------------------- */

/* The allocator the kernel uses for all its memory. module.c installs
 * PyMem_Raw* (thread-safe, visible to tracemalloc); the default is libc. */
typedef struct {
    void *(*malloc)(size_t size);
    void (*free)(void *ptr);
} ss_allocator;
void ss_set_allocator(ss_allocator allocator);
void *ss_malloc(size_t size);
void ss_free(void *ptr);

/* A reference-counted block of memory holding one array.
 *
 * NumPy views keep a reference to the block they show, so a view never dangles:
 * when the system grows an array that a view still holds, the system moves to a
 * new block and the view keeps the old one. The count is not atomic: every
 * retain and release happens under one lock (in Python, the GIL). */
typedef struct ss_buffer {
    size_t refcount;
    size_t capacity; /* bytes available at data */
    double data[];   /* any element type; double for alignment */
} ss_buffer;

/* Every array (and the integrators' scratch) has this many readable doubles past its
 * end, zeroed: the SIMD spring loop reads a whole 256-bit row at the last node. */
#define SS_PAD_DOUBLES 8

ss_buffer *ss_buffer_new(size_t capacity);
void ss_buffer_retain(ss_buffer *buf);
void ss_buffer_release(ss_buffer *buf);

/* ---- The system -------------------------------------------------------- */

/* Per-node arrays (N rows) and per-spring arrays (M rows). Hot data only:
 * everything touched each substep is a contiguous array. */
typedef enum {
    SS_POSITIONS = 0,            /* (N, dim) double, m */
    SS_VELOCITIES,               /* (N, dim) double, m/s */
    SS_MASSES,                   /* (N,) double, kg > 0 */
    SS_PINNED,                   /* (N,) uint8, 1 = held: ignores forces, v = 0 unless dragged */
    SS_EXTERNAL,                 /* (N, dim) double, N, added at every evaluation */
    SS_PREV_ACCEL,               /* (N, dim) double, m/s^2, Verlet's last acceleration */
    SS_UVS,                      /* (N, 2) double, texture coordinates (cold: never stepped) */
    SS_REST_POSITIONS,           /* (N, dim) double, m, the shape rigid_frame fits (cold) */
    SS_RADII,                    /* (N,) double, m >= 0, node-node contact radius (cold) */
    SS_GROUPS,                   /* (N,) int32, contact group (cold: 0) */
    SS_NODE_ARRAYS,              /* count of node arrays */
    SS_SPRINGS = SS_NODE_ARRAYS, /* (M, 2) int32 node pairs */
    SS_REST_LENGTHS,             /* (M,) double, m >= 0 */
    SS_STIFFNESS,                /* (M,) double, N/m >= 0 */
    SS_DAMPING,                  /* (M,) double, N s/m >= 0, along the spring */
    SS_BREAK_STRAINS,            /* (M,) double >= 0: torn beyond (1 + b) L; inf = never */
    SS_FACES,                    /* (F, 3) int32 node triples, outward by the right-hand rule */
    SS_ARRAY_COUNT
} ss_array;

/* A plane (the half-space n.x >= offset is free), a sphere (|x - c| >= r free; a circle
 * in 2D), an axis-aligned box (|x_k - c_k| >= h_k for some k free; a rectangle in 2D), a
 * capsule (points within r of the segment c..end taken; a stadium in 2D) or a triangle
 * mesh (3D only: a surface of thickness `thickness` that a node stays on its side of;
 * mesh.c) that nodes cannot enter. */
typedef enum { SS_PLANE, SS_SPHERE, SS_BOX, SS_CAPSULE, SS_MESH } ss_collider_kind;
struct ss_mesh;
typedef struct {
    int kind;
    long id;              /* unique within its system, never reused */
    double normal[3];     /* plane: unit normal towards free space */
    double offset;        /* plane: m */
    double center[3];     /* sphere, box: centre; capsule: one end, m */
    double radius;        /* sphere, capsule: m > 0 */
    double end[3];        /* box: half-extents, m > 0; capsule: the other end, m */
    double thickness;     /* mesh: m >= 0 */
    struct ss_mesh *mesh; /* mesh: owned (vertices, faces, bounding volumes); else NULL */
    double restitution;   /* in [0, 1]: the normal velocity kept, reversed, at impact */
    double friction;      /* Coulomb coefficient >= 0 */
} ss_collider;

/* What contacts keep between substeps (colliders.c), all derived from the system and
 * rebuilt when missing (every topology edit drops it): each node's springs, for the
 * potential energy that putting a node back on a surface costs, and the scratch of a
 * substep. */
typedef struct {
    size_t nodes;     /* N this was built for */
    size_t *first;    /* (N + 1,) node i's springs are springs[first[i] .. first[i + 1]) */
    int32_t *springs; /* (2 M,) spring indices, node by node, in index order */
    double *start;    /* (N, dim) m, positions at the start of the substep (for sticking) */
    double *gas;      /* (N, dim) N, gas forces at the end of the substep's integration */
    int32_t *hits;    /* (N, 2) what a mesh's detection found per node: face (-1 none), side */
    int sticky;       /* some collider has friction or is a mesh: start is saved */
    /* XPBD's collider constraints (collider_constraints.c), grow-only: per contact the
     * collider, the node, the mesh face (-1) and side; and lambda, u0, lambda_t. */
    int32_t *held;
    double *frames;
    size_t num_held, held_capacity;
} ss_collider_contacts;

/* A closed body of ideal gas (pressure.c): its boundary is a closed, consistently
 * oriented loop of edges (2D, elements of 2 nodes) or surface of triangles (3D,
 * elements of 3 nodes), stored outward (enclosing a positive area or volume). */
typedef struct {
    long id;           /* unique within its system, never reused */
    double nrt;        /* J in 3D, J/m in 2D (per metre of depth): P V = nrt, >= 0 */
    double ambient;    /* Pa in 3D, N/m in 2D: the pressure outside, >= 0 */
    size_t count;      /* elements */
    int32_t *elements; /* (count, dim) node indices, owned */
} ss_pressure_body;

/* How the springs are split among threads (plan.c): the nodes in a fixed number of
 * blocks of consecutive indices (the same for any thread count); each block's interior
 * springs (both ends in the block) as runs of consecutive spring indices; the springs
 * between blocks in a list of their own. A block's nodes receive their interior
 * springs' forces in index order from whichever thread takes the block, then the
 * between-block springs' forces in index order: so every node sums its springs in
 * one order whatever the number of threads. */
typedef struct {
    size_t num_blocks;
    size_t num_nodes, stride; /* what the force rows were sized for */
    size_t *node_start;       /* (num_blocks + 1,) first node of each block */
    size_t *run_start;        /* (num_blocks + 1,) each block's runs: runs[run_start[b]..] */
    size_t *runs;             /* (num_runs, 2) spring index ranges [first, last) */
    int32_t *cross;           /* (num_cross,) springs between blocks, in index order */
    size_t num_cross;
    double *cross_forces; /* (num_cross, ss_force_stride(dim)) force on the first node */
    double *forces;       /* (N, ss_force_stride(dim)) the force rows of an evaluation */
    double *block_probe;  /* (num_blocks,) symplectic Euler's finiteness sums */
    double *inv_mass;     /* (N,) 1 / m, refreshed whenever the masses may have changed */
    /* The ends of the between-block springs, by node then spring: the node, and the
     * entry q (>= 0: the first node, gets +F; ~q: the second, gets -F). */
    int32_t *end_node, *end_entry; /* (2 num_cross,) */
    size_t *end_start;             /* (num_blocks + 1,) each block's ends */
} ss_plan;

/* The caller's function of time behind the drives of kind SS_DRIVE_HOOK (drives.h):
 * from the stepping thread, before each substep that ends at time t, a step calls
 * targets(context, id, t, width, out) once for each hook drive, in the order the drives
 * were added; it fills out, (width, dim) doubles, with drive `id`'s targets at t (m)
 * and returns 0, or nonzero when it cannot (its own error, which the caller keeps: the
 * step rolls back and returns SS_ERR_HOOK). A target that is not finite fails the step
 * with SS_ERR_VALUE, as one too far to reach. The caller sets sys->drive_hook before a
 * step with hook drives; a step that finds one and no hook returns SS_ERR_VALUE. */
typedef struct {
    int (*targets)(void *context, long id, double t, size_t width, double *out);
    void *context;
} ss_drive_hook;

typedef struct ss_self_collision ss_self_collision; /* self_collision.c's own */
typedef struct ss_vbd_graph ss_vbd_graph;           /* vbd.c's own */

/* The state: what a step changes, as opposed to the model (what describes the system:
 * topology, masses, spring parameters, colliders, gas, settings) and the scratch
 * (caches and work space, rebuilt on demand). It is the arrays SS_STATE_ARRAYS names
 * (positions, velocities, and Verlet's last acceleration) and this struct; the table
 * ss_state_fields (state.c) lists both, and rollback, copy, pickling and the save
 * format all go through it. A field added here goes into that table, or the test of
 * the state's round trips (tests/state_and_files/test_state.py) fails. */
typedef struct {
    double time;          /* s */
    double dissipated;    /* J removed since reset (with track_energy: see below) */
    int prev_accel_valid; /* SS_PREV_ACCEL holds the last Verlet step's acceleration */
    size_t crossings;     /* nodes seen going through a triangle (self_collision.c) */
    /* s: the substep of the last step call that succeeded (0: none yet), at which the
     * contact law from the step is counted between steps (energy(), contact.c) */
    double contact_dt;
} ss_state;

/* The state's parts, by the names Python shows them under (_core.STATE_FIELDS). */
typedef enum {
    SS_FIELD_ARRAY, /* one of the system's arrays (`array`), (N, dim) float64 */
    SS_FIELD_REAL,  /* a double in ss_state at `offset`, finite */
    SS_FIELD_FLAG,  /* an int in ss_state at `offset`, 0 or 1 */
    SS_FIELD_COUNT  /* a size_t in ss_state at `offset` */
} ss_field_kind;
typedef struct {
    const char *name;
    ss_field_kind kind;
    ss_array array; /* SS_FIELD_ARRAY */
    size_t offset;  /* the others */
} ss_state_field;
/* The fields, in ss_state_fields' order. */
enum {
    SS_STATE_POSITIONS,
    SS_STATE_VELOCITIES,
    SS_STATE_PREV_ACCEL,
    SS_STATE_VERLET_VALID,
    SS_STATE_TIME,
    SS_STATE_DISSIPATED,
    SS_STATE_CROSSINGS,
    SS_STATE_CONTACT_DT,
    SS_STATE_FIELD_COUNT
};
extern const ss_state_field ss_state_fields[SS_STATE_FIELD_COUNT];

/* The scratch: what the kernel keeps between calls only to go faster or to undo a
 * call, all of it derived and rebuilt on demand. A copy starts with none (zeroed), a
 * file never holds it, and no result depends on whether it was there. */
typedef struct {
    /* The integrators' work space, grown on demand: a step call's backup first (see
     * integrate.c), then the substeps' own. */
    double *buffer;
    size_t doubles;
    /* XPBD (xpbd.c): 1 + num_cut when the buffer holds the springs' solve order and
     * constants, computed in the current step call with that many springs cut; 0
     * otherwise (every step call starts from 0: masses, pins, springs or dt may have
     * changed since the last). */
    size_t xpbd_prepared;
    /* XPBD solves node-node contact and self-collision as constraints (xpbd.c): set by
     * each step call (1 for xpbd), so that the dissipation power leaves their force laws
     * out; the constraints that pushed in the last substep, and the work of the external
     * forces over it, J, for the energy books (integrate.c). */
    int contact_constraints;
    size_t xpbd_pushed;
    double xpbd_work;
    /* The spring colouring (parallel.c): springs in colour order, no two springs of
     * a colour sharing a node, so each colour's forces can be added by many threads
     * at once and every node still sums its springs in one fixed order; XPBD's solve
     * order. Rebuilt before an implicit_euler or xpbd step whenever the topology
     * changed (colouring_valid == 0). */
    int32_t *colour_order; /* (M,) spring indices, colour by colour */
    size_t *colour_start;  /* (num_colours + 1,) offsets into colour_order */
    size_t num_colours;    /* the last one may be SS_SERIAL_COLOUR's overflow */
    int colouring_valid;
    ss_plan *plan; /* NULL until a force evaluation needs it; dropped on topology edits */
    /* VBD's vertex graph (vbd.c): each node's springs and the nodes in colour order;
     * NULL until a vbd step needs it, dropped on topology edits. */
    ss_vbd_graph *vbd;
    /* Threads that never lose (parallel.c): a large system's substeps run on the
     * configured thread count or on 1, whichever the last probe timed faster (results
     * are bit-identical either way). */
    struct {
        int use;          /* threads for the current substep (0: not decided yet) */
        int threaded;     /* 1: the configured count is the choice; 0: one thread */
        unsigned phase;   /* substeps into the probe cycle */
        unsigned cycle;   /* its length (0: SS_TUNE_CYCLE) */
        double probe[4];  /* seconds per substep on the other choice */
        double recent[8]; /* seconds per substep on the choice, the last 8 */
        unsigned recent_count;
    } tuner;
    ss_collider_contacts collider_contacts; /* what contacts keep between substeps */
    /* Pins (constraints.c): the nodes a step call stopped and their velocities before,
     * m/s, for a rollback. */
    size_t *held;   /* (num_held,) node indices */
    double *held_v; /* (num_held, dim) */
    size_t num_held, held_capacity;
    /* Set by ss_system_step before a substep whose result it will check for blow-up
     * (check_finite); set by the substep when it found x and v finite on the way
     * (known_finite), which spares a pass. */
    int check_finite, known_finite;
    double power; /* W, damping and drag power at the start of the current substep */
    /* The divergence watch's books (divergence.c): NULL until a watched step; owned,
     * never shared by a copy. */
    struct ss_books *books;
    /* The finiteness probe's scale s: it sums 0 * ((x s) s) + 0 * v, NaN also once some
     * |coordinate| passes the bound of the short calls' books (divergence.c); 1 else. */
    double probe_scale;
} ss_scratch;

/* A system: its model (what it is: the fields first, below, and the model arrays),
 * its state (where it is now: `state` and the state arrays, see ss_state) and its
 * scratch (see ss_scratch). */
typedef struct ss_system {
    /* ---- The model ---- */
    int dim; /* 2 or 3 */
    size_t num_nodes;
    size_t num_springs;
    size_t num_faces;
    /* Every per-node, per-spring and per-face array: the model's (masses, springs, ...)
     * and the state's (SS_STATE_ARRAYS: positions, velocities, Verlet's history). */
    ss_buffer *arrays[SS_ARRAY_COUNT];

    double gravity[3];   /* m/s^2 */
    double wind[3];      /* m/s, the air velocity drag pulls towards */
    double drag;         /* N s/m: force -drag (v - wind) on every free node */
    double air_density;  /* kg/m^3, the air the faces move through (aero.c) */
    double drag_coeff;   /* C_d of every face as a flat plate, >= 0; 0 = no air on faces */
    double energy_loss;  /* fraction of velocity kept per substep, in [0, 1] */
    int iterations;      /* XPBD constraint passes per substep, >= 1 */
    double max_strain;   /* strain limit (Provot): springs kept <= (1 + max_strain) L; < 0 = off */
    ss_method method;    /* default for ss_system_step */
    double cg_tolerance; /* implicit_euler: CG stops at |r| <= cg_tolerance |b| */
    int cg_max_iterations; /* implicit_euler: CG iterations per substep at most, >= 1 */
    /* Energy bookkeeping (off by default: it costs a pass over the damped springs per
     * substep): state.dissipated gains the J removed by spring damping and drag
     * (trapezoid rule on their power), energy_loss, the strain limit and contacts. */
    int track_energy;
    /* The divergence watch (divergence.c): a step fails with SS_ERR_UNSTABLE when the
     * motion's energy exceeds divergence_factor (> 1; INFINITY: off) times the most
     * energy that was available to it. */
    double divergence_factor;

    ss_collider *colliders; /* applied in order after every substep */
    size_t num_colliders, collider_capacity;
    long last_collider_id;
    struct ss_contact *contact; /* node-node contact: law, group filter, scratch (contact.h) */
    ss_pressure_body *bodies;   /* gas bodies, in the order added */
    size_t num_bodies, body_capacity;
    long next_body_id;
    ss_self_collision *self_collision; /* node-triangle self-collision; NULL: off */
    /* Drives (drives.c): nodes that follow a line, per-substep targets or the caller's
     * function (drive_hook, set by the caller for a step); NULL while there is none.
     * Their counters (substeps run) are state, which each drive keeps, and a failed
     * step restores. last_drive_id: the last id given to a drive. */
    struct ss_drives *drives;
    ss_drive_hook drive_hook;
    long last_drive_id;

    /* What the model's checks found, kept so that a step need not look again:
     * - breakable: some break strain is finite (set by ss_system_validate whenever the
     *   break strains may have changed; it stays set when springs are removed: then a
     *   step only prepares to tear in vain);
     * - rigid: some stiffness may be inf (a rigid rod; set by ss_system_validate
     *   whenever the stiffnesses may have changed and by ss_system_add_springs, cleared
     *   by a step that finds none, ss_system_refuse_rigid);
     * - pins_unheld: some pinned node may be moving (set by whatever may write a pinned
     *   node's velocity or pin a node; cleared by holding them), so that a call that
     *   finds it clear holds nothing. */
    int breakable, rigid, pins_unheld;
    /* Bit a set: array a may hold values written through a view since the last
     * ss_system_validate, which then checks it (see unchecked() in system.c). */
    uint32_t unchecked;
    /* Bit a set: cold array a (SS_COLD_ARRAYS) holds no memory yet, and every row is
     * its default (0, or inf for break strains): a feature that uses it, or a view of
     * it, makes it real (ss_system_materialize). */
    uint32_t absent;
    /* Arrays were allocated since the heap was last trimmed (ss_system_release_free_memory). */
    int grew;
    size_t topology_edits; /* counts ss_system_topology_changed calls */
    /* Edits made between steps through the kernel's setters (an assignment, a pin, a gas
     * setting): the books of a loop of short calls start afresh after one. */
    size_t state_edits;

    /* ---- The state: what a step changes (with the state arrays; see ss_state) ---- */
    ss_state state;
    /* Tearing (constraints.c): the node pairs of springs torn since last taken, and,
     * during a step call that can tear, the springs cut so far (k = c = 0 until the call
     * ends and ss_system_tear removes them) with their (k, c) for a rollback. */
    int32_t *broken; /* (num_broken, 2) */
    size_t num_broken, broken_capacity;
    uint8_t *cut; /* 0 whole, 1 cut by an earlier call (tearing deferred), 2 by this call */
    double *cut_saved;
    size_t num_cut, cut_capacity; /* cut springs; springs the marks have room for */

    /* ---- What the last step call reports ---- */
    /* implicit_euler: its last substep's CG iterations and |r| / |b|, and how many of
     * its substeps solved / hit the iteration cap. */
    int last_cg_iterations;
    double last_cg_residual;
    size_t cg_substeps, cg_capped;
    /* Substeps whose strain limiting stopped with springs still longer than the limit
     * (the pins or colliders make it unsatisfiable). */
    size_t strain_unmet;
    /* Set by a force evaluation that finds a body with volume <= 0 (its id), so the
     * step can roll back and say which; -1 otherwise. Reset by every step. */
    long collapsed_body;

    /* ---- The scratch ---- */
    ss_scratch scratch;

    char error[1024]; /* the last failure's message (ss_fail), last: it is cold */
} ss_system;

/* The data of one array, typed, for the kernel's loops. */
#define SS_DOUBLES(sys, which) ((sys)->arrays[(which)]->data)
#define SS_BYTES(sys, which) ((uint8_t *)(sys)->arrays[(which)]->data)
#define SS_INT32S(sys, which) ((int32_t *)(sys)->arrays[(which)]->data)

/* Row width (elements) and element size (bytes) of an array. */
size_t ss_array_columns(const ss_system *sys, ss_array which);
size_t ss_array_itemsize(ss_array which);
size_t ss_array_rows(const ss_system *sys, ss_array which);

/* Write a printf-style message into sys->error and return `status`, so that a
 * failing check is one line: `return ss_fail(sys, SS_ERR_VALUE, "...", ...);` */
ss_status ss_fail(ss_system *sys, ss_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

ss_system *ss_system_new(int dim);
void ss_system_free(ss_system *sys);
/* The topology changed (nodes, springs or faces added or removed): count the edit and
 * free what was built for the old one, the plan, the colouring and the colliders'
 * contact lists, to be rebuilt when needed (system.c). */
void ss_system_topology_changed(ss_system *sys);
/* A deep copy, or NULL when out of memory. */
ss_system *ss_system_copy(const ss_system *sys);

/* Append `count` nodes. x: (count, dim); v: (count, dim) or NULL for zero;
 * m: (count,); pinned: (count,) or NULL. The first new index goes to *first. */
ss_status ss_system_add_nodes(ss_system *sys, size_t count, const double *x, const double *v,
                              const double *m, const uint8_t *pinned, size_t *first);
/* Append `count` springs. pairs: (count, 2) node indices; rest: (count,) or NULL
 * for the current distance. */
ss_status ss_system_add_springs(ss_system *sys, size_t count, const int64_t *pairs,
                                const double *stiffness, const double *damping, const double *rest,
                                size_t *first);
/* Append `count` triangles. tri: (count, 3) distinct node indices. */
ss_status ss_system_add_faces(ss_system *sys, size_t count, const int64_t *tri, size_t *first);
/* Remove the nodes at these indices (duplicates allowed), with every spring and face
 * that touches them; the others keep their order and are renumbered. old_to_new
 * (N entries) receives each old node's new index, or -1 if it was removed. */
ss_status ss_system_remove_nodes(ss_system *sys, size_t count, const int64_t *indices,
                                 int64_t *old_to_new);
/* Remove the springs s with doomed[s] != 0 (M entries); the others keep their order. */
ss_status ss_system_remove_spring_mask(ss_system *sys, const uint8_t *doomed);
/* Remove the springs at these indices (duplicates allowed); the others keep their order. */
ss_status ss_system_remove_springs(ss_system *sys, size_t count, const int64_t *indices);
/* Set the pinned flag of these nodes. */
ss_status ss_system_set_pinned(ss_system *sys, size_t count, const int64_t *indices, uint8_t value);

/* Overwrite the whole state (state.c): arrays[f] holds N x dim doubles for each array
 * field f of ss_state_fields (the others are ignored). Everything is checked first
 * (finite; a crossing count only with self-collision on): SS_ERR_VALUE or SS_ERR_NOMEM
 * change nothing. */
ss_status ss_system_set_state(ss_system *sys, const double *const arrays[SS_STATE_FIELD_COUNT],
                              const ss_state *state);

/* Overwrite a public array (not SS_SPRINGS, not SS_PREV_ACCEL) with `data`, of its
 * current rows x columns, after checking every value: nothing is written on error. */
ss_status ss_system_set_array(ss_system *sys, ss_array which, const void *data);

/* Bytes this system holds (memory.c): every block it owns at its allocated size, the
 * arrays at capacity with their padding, scratch, plan, colouring, tear marks, the
 * broken list, gas bodies, colliders, the struct. */
size_t ss_system_nbytes(const ss_system *sys);
/* After a large build (the system grew since the last call and holds over 1 MiB): give
 * the heap's free pages back to the system (glibc: malloc_trim), so that the temporaries
 * of the build do not stay resident. See memory.c for why. */
void ss_system_release_free_memory(ss_system *sys);

/* The arrays that cost nothing until used: external forces, Verlet's history, texture
 * coordinates, break strains. */
#define SS_COLD_ARRAYS                                                                             \
    ((1u << SS_EXTERNAL) | (1u << SS_PREV_ACCEL) | (1u << SS_UVS) | (1u << SS_BREAK_STRAINS) |     \
     (1u << SS_RADII) | (1u << SS_GROUPS))
/* Nonzero when cold array `which` holds no memory yet (all rows at their default). */
static inline int ss_array_absent(const ss_system *sys, ss_array which) {
    return (int)(sys->absent >> which & 1u);
}
/* Give cold array `which` memory, filled with its default; nothing if it has some. */
ss_status ss_system_materialize(ss_system *sys, ss_array which);

/* Check every value the kernel relies on (finite state, masses > 0, gas volumes > 0, ...)
 * in the arrays that may have changed since the last validation: those marked, and those
 * a view still shows. */
ss_status ss_system_validate(ss_system *sys);
/* A view of array `which` was made: its values are checked at the next validation. */
void ss_system_mark_unchecked(ss_system *sys, ss_array which);

/* How a caller can stop a long step (Ctrl-C): `stop(context)` is called about every
 * SS_POLL_SECONDS of wall time, from the stepping thread; nonzero stops the step. */
typedef struct {
    int (*stop)(void *context);
    void *context;
} ss_poll;
#define SS_POLL_SECONDS 0.05

/* Run `steps` substeps of `dt` with `method`. Validates first. On a non-finite result,
 * or a gas body found inside out, restores the state from before the call and returns
 * SS_ERR_UNSTABLE; when `poll` (may be NULL) says stop, restores it and returns
 * SS_ERR_INTERRUPTED. `books` is how the divergence watch keeps its books for this
 * call (SS_BOOKS_*, divergence.h: SS_BOOKS_CALL for a plain call). `contact_dt` (s) is
 * the substep node-node contact's stiffness from the step is taken at: 0 for dt itself,
 * or a run's dt for the shortened substep that takes it to a frame time, so that the
 * law stays the run's. Springs cut are left in place for the caller to remove
 * (ss_system_tear). */
ss_status ss_system_step(ss_system *sys, double dt, size_t steps, ss_method method, int books,
                         double contact_dt, const ss_poll *poll);

/* ---- Rigid rods (system.c) --------------------------------------------- */

/* SS_ERR_VALUE naming the rigid rods (stiffness inf) when `method` integrates forces:
 * only xpbd can hold a rod's length. Clears sys->rigid when there are none. */
ss_status ss_system_refuse_rigid(ss_system *sys, ss_method method);

/* Sections of this header kept in their own files (included here, in this order). */
#include "divergence.h"
#include "drives.h"
#include "parallel.h"
#include "colliders.h"
#include "contact.h"
#include "self_collision.h"

/* ---- Constraints (constraints.c) --------------------------------------- */

/* Strain limiting (Provot 1995): shorten every spring longer than (1 + max_strain) L
 * to that length, moving its free ends by inverse mass, and remove the separating
 * part of their relative velocity. Gauss-Seidel passes in spring order. */
/* Nonzero when a spring with a free end is longer than max_strain allows. */
int ss_constraints_strain_exceeded(const ss_system *sys);
void ss_constraints_limit_strain(ss_system *sys);
/* Before a step call's first substep: hold the pinned nodes, v = 0, so that a pinned node
 * moves only when its position is written or it is driven (the drives then give their
 * nodes their velocities). Allocates only when some pinned node is moving. */
ss_status ss_constraints_hold_pins(ss_system *sys);
/* On a rollback: give the nodes the call held their velocities back. */
void ss_constraints_release_pins(ss_system *sys);
/* Before a step call: get ready to cut springs (allocates only when some break
 * strain is finite). */
ss_status ss_constraints_begin_tearing(ss_system *sys);
/* After each substep: cut every spring stretched beyond (1 + break_strain) L, so that it
 * pulls no more (k = c = 0); its elastic energy counts as dissipated. */
void ss_constraints_cut(ss_system *sys);
/* On a rollback: give the springs this call cut back their k and c. */
void ss_constraints_uncut(ss_system *sys);
/* After a successful call: its cuts become earlier ones. */
void ss_constraints_keep_cuts(ss_system *sys);
/* After a step call: remove the springs it cut and record their node pairs.
 * Changes the spring arrays' blocks: call with the lock that guards views (the GIL). */
ss_status ss_system_tear(ss_system *sys);

/* ---- Forces (forces.c) ------------------------------------------------- */

/* Acceleration a (N, dim) of every node at state (x, v):
 * a = (sum of spring forces + m g - drag (v - wind) + external + gas + air on faces) / m,
 * 0 if pinned.
 * Needs the plan (ss_system_ensure_plan); runs on ss_threads_for(sys) threads,
 * bit-identical for any number. */
void ss_forces_acceleration(ss_system *sys, const double *x, const double *v, double *a);

/* The forces of a range of finished nodes, as a node-finish callback sees them: rows
 * `stride` doubles apart (ss_force_stride), with the inverse masses and pin flags that
 * make them accelerations (a = f * inv_mass, 0 if pinned: ss_forces_acceleration's
 * arithmetic). */
typedef struct {
    const double *forces;
    size_t stride;
    const double *inv_mass;
    const uint8_t *pinned;
} ss_force_rows;

/* The same evaluation without the accelerations array: then(context, forces, first,
 * last) for each range of nodes whose forces are complete, while they are in cache
 * (any thread may call it; the ranges cover every node once). It may write only those
 * nodes' entries of arrays the evaluation does not read from other nodes: it runs
 * while other ranges are still being finished. */
typedef void (*ss_node_finish)(void *context, const ss_force_rows *forces, size_t first,
                               size_t last);
void ss_forces_then(ss_system *sys, const double *x, const double *v, ss_node_finish then,
                    void *context);

/* node_pass.c: the node forces m g - drag (v - wind) + external of nodes [first, last)
 * into f's rows (`stride` doubles apart, the rest of each row zeroed); and the fused
 * symplectic Euler update of those nodes from their force rows, first saving x and v
 * into save_x, save_v if they are not NULL, returning the finiteness probe if check
 * (0 when every updated value is finite, NaN otherwise). On the SIMD path in use. */
void ss_node_forces(const ss_system *sys, size_t first, size_t last, const double *v, double *f,
                    size_t stride);
double ss_node_symplectic(const ss_system *sys, size_t first, size_t last, const double *f,
                          size_t stride, double dt, double *v, double *x, double *save_x,
                          double *save_v, int check);

/* a = f / m (0 if pinned) of nodes [first, last) into acc, flat (dim per node, from
 * acc[0]): the arithmetic of ss_forces_acceleration, on the SIMD path in use. */
void ss_node_accelerations(const ss_force_rows *rows, size_t first, size_t last, size_t dim,
                           double *acc);

/* rk4.c: one classical RK4 substep of dt, its four evaluations fused with the stage
 * updates; scratch holds ss_rk4_scratch_doubles(sys) doubles. */
size_t ss_rk4_scratch_doubles(const ss_system *sys);
void ss_step_rk4(ss_system *sys, double dt, double *scratch);

/* One symplectic Euler substep of dt fused into the force evaluation: each node's
 * velocity and position are updated as soon as its force is complete (and first copied
 * into save_x and save_v, when they are not NULL). With check, returns nonzero when
 * every new x and v is finite (else 0). Needs the plan. */
int ss_forces_symplectic_euler(ss_system *sys, double dt, double *save_x, double *save_v,
                               int check);

/* Acceleration from the forces on nodes that are not springs (gravity, drag,
 * external, gas, air on faces), 0 if pinned: XPBD's prediction uses it (it solves
 * node-node contact and self-collision as constraints), and VBD's explicit part (it
 * takes them as contact energy in its blocks, vbd.c). */
void ss_forces_external(ss_system *sys, const double *x, const double *v, double *a);
/* The same, and node-node contact and self-collision as forces: every force but the
 * springs', as an acceleration. */
void ss_forces_beside_springs(ss_system *sys, const double *x, const double *v, double *a);

#include "aero.h"
#include "pressure.h"

/* ---- Integrators (integrate.c) ----------------------------------------- */

/* One substep of `dt` with `method` on sys's own positions and velocities; save_x and
 * save_v (or NULL) receive x and v from before it. */
void ss_integrate_substep(ss_system *sys, double dt, ss_method method, double *scratch,
                          double *save_x, double *save_v);
/* Doubles of scratch the method needs for this system. */
size_t ss_integrate_scratch_size(const ss_system *sys, ss_method method);

/* ---- XPBD (xpbd.c) ---------------------------------------------------- */

/* One XPBD substep: springs as compliant constraints, solved sys->iterations times in
 * colour order (see xpbd.c). Needs the plan, the colouring, and at most
 * SS_XPBD_MAX_NODES nodes (its 32-bit offsets of 64-byte node records). */
#define SS_XPBD_MAX_NODES ((size_t)1 << 29)
void ss_xpbd_step(ss_system *sys, double dt, double *scratch);
size_t ss_xpbd_scratch_size(const ss_system *sys);

/* ---- Vertex Block Descent (vbd.c) -------------------------------------- */

/* One VBD substep: backward Euler as the minimisation of the incremental potential,
 * sys->iterations passes of per-vertex Newton steps in vertex colour order (see vbd.c).
 * Needs the plan and the graph (ss_vbd_ensure_graph). */
void ss_vbd_step(ss_system *sys, double dt, double *scratch);
size_t ss_vbd_scratch_size(const ss_system *sys);
/* Build the vertex graph if the topology changed since the last one. */
ss_status ss_vbd_ensure_graph(ss_system *sys);
/* Free the graph (ss_system_topology_changed and ss_system_free call it). */
void ss_vbd_forget(ss_system *sys);
size_t ss_vbd_nbytes(const ss_system *sys);
/* After a substep: the work, J, of the constant pushes (external forces, drag towards the
 * wind) on the free nodes over it, from x0 (the scratch's first N dim doubles). */
double ss_vbd_external_work(const ss_system *sys, const double *scratch);

/* ---- Implicit Euler (implicit.c) --------------------------------------- */

/* One linearised backward-Euler substep (Baraff & Witkin), CG solve; see implicit.c. */
void ss_implicit_euler_step(ss_system *sys, double dt, double *scratch);
size_t ss_implicit_scratch_size(const ss_system *sys);
/* The exact Hessian of the elastic energy at the current positions as triplets, 4 dim^2
 * per spring (duplicates are to be summed); row and column indices node * dim + axis.
 * SS_ERR_VALUE for a rigid rod (stiffness inf). */
ss_status ss_stiffness_triplets(ss_system *sys, int64_t *rows, int64_t *cols, double *values);

/* ---- Diagnostics (energy.c) -------------------------------------------- */

typedef struct {
    double kinetic;  /* 1/2 sum m |v|^2 */
    double elastic;  /* 1/2 sum k (l - L)^2 */
    double gravity;  /* -sum m g.x */
    double pressure; /* sum over gas bodies of -nrt ln V + ambient V */
    double contact;  /* node-node pairs' 1/2 sum k_c delta^2 (contact.c) and node-triangle
                      * pairs' 1/2 sum k (h - d)^2 (self_collision.c) */
} ss_energy_terms;

/* The energies at the current state, for a query (energy()): the contact searches run
 * in scratch of their own, so the step's is never freed, grown or written. */
void ss_energy(const ss_system *sys, ss_energy_terms *out);
/* The same bits, for the step's own use (between its substeps): the searches run in the
 * step's scratch, as its force evaluations do. */
void ss_energy_in_step(const ss_system *sys, ss_energy_terms *out);
void ss_momentum(const ss_system *sys, double out[3]);
void ss_center_of_mass(const ss_system *sys, double out[3]);
void ss_spring_lengths(const ss_system *sys, double *out);
void ss_spring_tensions(const ss_system *sys, double *out);
/* Power, W, that spring damping, drag and the air on faces take out of the motion at
 * the current state: sum c ((v_j - v_i).u)^2 + sum over free nodes of drag (v - wind).v
 * + ss_aero_power, and the contacts' dashpots and friction. The step's: the contact
 * searches run in the step's scratch. */
double ss_dissipation_power(const ss_system *sys);
/* Kinetic energy of the free nodes, J (what energy_loss scales). */
double ss_free_kinetic_energy(const ss_system *sys);
/* The explicit stability limit, s (see energy.c for the estimate). A query: node-node
 * contacts are searched in scratch of its own. */
ss_status ss_critical_dt(ss_system *sys, double *out);
/* The Gershgorin bound on the springs' highest angular frequency, rad/s (inf with a
 * rigid rod, 0 with no spring on a free node): the w of ss_critical_dt's bound. */
ss_status ss_stiffest_omega(ss_system *sys, double *out);

#endif
