/* divergence.h - part of the kernel API: the divergence watch's books (divergence.c).
 * Included by springsim.h only, at its place there (it uses what comes before it). */
#ifndef SPRINGSIM_DIVERGENCE_H
#define SPRINGSIM_DIVERGENCE_H

/* ---- The divergence watch (divergence.c) ------------------------------- */

/* The books of one step call, or of a sequence of calls that make one motion (run(),
 * a loop of short plain calls): the motion's energy Q (kinetic energy of
 * the free nodes plus the elastic energy of the springs) may grow only by what gravity,
 * external forces, wind, gas and moving pins put in. At a check (every SS_BOOKS_EVERY
 * substeps of the sequence, and at the end of a call when asked) the step fails when
 *     Q > divergence_factor * max(A_max, floor),
 * A_max the most energy ever available: Q when the books opened plus the work put in
 * since. The default SS_BOOKS_CALL watches a call of SS_BOOKS_EVERY substeps or more
 * on its own, and shorter calls as one sequence while nothing else changes the state
 * between them (divergence.c, "Short calls"). xpbd is never watched (it is
 * unconditionally stable, and its rods do work no force accounts for). */
enum {
    SS_BOOKS_CALL = 0,     /* books for this call alone */
    SS_BOOKS_START = 1,    /* open books that the next calls continue */
    SS_BOOKS_CONTINUE = 2, /* continue them; the state may have been edited since the last
                              call (which checked at its end): the edit's energy counts as
                              put in */
    SS_BOOKS_CHECK_END = 4 /* flag: check at the end of this call */
};
#define SS_BOOKS_EVERY 64
#define SS_DIVERGENCE_FACTOR 100.0

/* The books (divergence.c keeps them; a step's loop reads the first fields). */
struct ss_books {
    size_t since_check; /* substeps since the last check */
    int check_end;      /* check at the end of the current call */
    int pins_move;      /* some pinned node has a velocity: their work is counted */
    int aero;           /* the air on faces acts (ss_aero_active, as the call began) */
    int open;           /* an account is open */
    int sequence;       /* the current call's books go on into the next call */
    double opened;      /* s, when the account opened */
    double available;   /* J: Q at opening + the work put in up to the current call */
    double most;        /* J: the largest energy available at any check, A_max */
    double motion_end;  /* J: Q at the last check (what an edit is measured against) */
    double stored_end;  /* J: the contacts' potential then (a sequence of calls only) */
    double dt;          /* s, the current call's */
    double gas_start;   /* J: the gas energy as the current call started */
    double pin_work;    /* J: work of moving pins and the air in the current call so far */
    double pin_power;   /* W: their power at the end of the last substep */
    /* Springs with a pinned end (rebuilt for each call, but kept across the short calls
     * of a driven loop while the topology is unchanged), and the topology they were
     * listed for. */
    int32_t *pin_springs;
    size_t num_pin_springs, pin_capacity, pin_topology;
    double failed_motion, failed_most; /* J: the figures of the last check */
    /* Short plain calls' account (casual): the work is measured from x_ref, the positions
     * at its last check; a check also runs as soon as a coordinate passes `bound`. */
    int casual;
    double *x_ref; /* (N, dim) */
    size_t x_ref_capacity;
    double bound, margin; /* m: the largest |coordinate| at the last check + margin */
    double scale;         /* the finiteness probe's for the bound */
    /* What the account assumes unchanged between its calls, as the last one ended; and
     * the hashes of the arrays it reads that a view may have written since (bit a of
     * `hashed`: array a's hash is in hash[a]). */
    size_t edits, topology, nodes, springs;
    double gravity[3], wind[3], drag, air_density, drag_coefficient;
    uint32_t hashed;
    uint64_t hash[SS_ARRAY_COUNT];
};

/* Before a step call's first substep, with x, v as the call starts: open or continue
 * the books as books_mode (the call's sys->books_mode) says. *watched: whether this call
 * keeps them (then call the functions below). SS_ERR_NOMEM possible. */
ss_status ss_books_begin(ss_system *sys, int books_mode, ss_method method, size_t steps, double dt,
                         int *watched);
/* The work of the moving pins and of the air on faces (where it pushes) over the
 * substep just taken (trapezoid rule). */
void ss_books_pin_work(ss_system *sys, double dt);
/* The drives gave their nodes the velocities of the coming substep: the power of the
 * moving pins it starts from. */
void ss_books_pins_placed(ss_system *sys);
/* aero.c (declared with the air's other functions in springsim.h): nonzero when the
 * air on faces acts. */
int ss_aero_active(const ss_system *sys);
/* After each substep of a watched call: nonzero when a check is due (`last`: the call's
 * last substep). */
static inline int ss_books_tick(ss_system *sys, double dt, int last) {
    struct ss_books *b = sys->scratch.books;
    if (b->pins_move || b->aero)
        ss_books_pin_work(sys, dt);
    return ++b->since_check >= SS_BOOKS_EVERY || (last && b->check_end);
}
/* The check, with x_start the positions the call started from: nonzero when the
 * motion's energy exceeds its bound (the books keep the figures for the message).
 * `beyond`: called because a coordinate passed the short calls' bound (their margin
 * then doubles). */
int ss_books_diverged(ss_system *sys, const double *x_start, int beyond);
/* After a successful watched call: carry its work into the books (a sequence goes on)
 * or close them. */
void ss_books_end(ss_system *sys, const double *x_start);
/* After a failed call: close the books. */
void ss_books_close(ss_system *sys);
/* The figures of the failed check: Q (J), the most available (J), when the books
 * opened (s). */
void ss_books_failure(const ss_system *sys, double *motion, double *available, double *opened);
/* The short calls' account (divergence_calls.c). Nonzero when no setter, topology edit
 * or new gravity, wind, drag or air changed the state since the account opened or was
 * last checked (ss_books_record): asked at its checks. */
int ss_books_unchanged(const ss_system *sys, const struct ss_books *b);
void ss_books_record(const ss_system *sys, struct ss_books *b);
/* The arrays the books read (the radii and groups: what the contacts hold), which a
 * view may write. */
#define SS_BOOKS_READ                                                                              \
    (1u << SS_POSITIONS | 1u << SS_VELOCITIES | 1u << SS_MASSES | 1u << SS_PINNED |                \
     1u << SS_EXTERNAL | 1u << SS_STIFFNESS | 1u << SS_REST_LENGTHS | 1u << SS_RADII |             \
     1u << SS_GROUPS)
/* Nonzero when no view wrote what the books read since the last call ended: asked as
 * each call begins, of the arrays in `hashed` (ss_books_end_call hashes them: those a
 * view still showed). */
int ss_books_views_unchanged(const ss_system *sys, const struct ss_books *b);
void ss_books_end_call(const ss_system *sys, struct ss_books *b);
/* The bound after a check (beyond: the check the bound called), and the probe's scale
 * s = sqrt(DBL_MAX / bound) that stands for it (0: none). */
void ss_books_set_bound(ss_system *sys, struct ss_books *b, int beyond);
double ss_books_probe_scale(double bound);
/* A writable view of array `which` is being made (py_views.c): if the short calls'
 * account reads that array, hash it now, so that the next call can tell whether the
 * view changed it. */
void ss_books_note_view(ss_system *sys, ss_array which);
/* Close the short calls' account (a twin is made: copy, save, pickle): the next call
 * opens one from the state then, as the twin's first call does. */
void ss_books_forget(const ss_system *sys);
void ss_books_free(struct ss_books *books);

#endif
