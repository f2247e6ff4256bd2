/* divergence.h - part of the kernel API: the divergence watch's books (divergence.c).
 * Included by springsim.h only, at its place there (it uses what comes before it). */
#ifndef SPRINGSIM_DIVERGENCE_H
#define SPRINGSIM_DIVERGENCE_H

/* ---- The divergence watch (divergence.c) ------------------------------- */

/* The books of one step call, or of a sequence of calls that make one motion (run(),
 * a driven step): the motion's energy Q (kinetic energy of the free nodes plus the
 * elastic energy of the springs) may grow only by what gravity, external forces, wind,
 * gas and moving pins put in. At a check (every SS_BOOKS_EVERY substeps of the
 * sequence, and at the end of a call when asked) the step fails when
 *     Q > divergence_factor * max(A_max, floor),
 * A_max the most energy ever available: Q when the books opened plus the work put in
 * since. The default SS_BOOKS_CALL watches a call of SS_BOOKS_EVERY substeps or more
 * on its own. xpbd is never watched (it is unconditionally stable, and its rods do
 * work no force accounts for). */
enum {
    SS_BOOKS_CALL = 0,     /* books for this call alone */
    SS_BOOKS_START = 1,    /* open books that the next calls continue */
    SS_BOOKS_CONTINUE = 2, /* continue them; the state may have been edited since the last
                              call (which checked at its end): the edit's energy counts as
                              put in */
    SS_BOOKS_EXACT = 3,    /* continue them; only driven (pinned) nodes were placed since */
    SS_BOOKS_CHECK_END = 4 /* flag: check at the end of this call */
};
#define SS_BOOKS_EVERY 64
#define SS_DIVERGENCE_FACTOR 100.0

/* The books (divergence.c keeps them; a step's loop reads the first fields). */
struct ss_books {
    size_t since_check; /* substeps since the last check */
    int check_end;      /* check at the end of the current call */
    int pins_move;      /* some pinned node has a velocity: their work is counted */
    int open;           /* an account is open */
    int sequence;       /* the current call's books go on into the next call */
    double opened;      /* s, when the account opened */
    double available;   /* J: Q at opening + the work put in up to the current call */
    double most;        /* J: the largest energy available at any check, A_max */
    double motion_end;  /* J: Q at the last check (what an edit is measured against) */
    double dt;          /* s, the current call's */
    double gas_start;   /* J: the gas energy as the current call started */
    double pin_work;    /* J: work of moving pins and the air in the current call so far */
    double pin_power;   /* W: their power at the end of the last substep */
    /* Springs with a pinned end (rebuilt for each call but the exact continuations of
     * an unchanged topology), and the topology they were listed for. */
    int32_t *pin_springs;
    size_t num_pin_springs, pin_capacity, pin_topology;
    double failed_motion, failed_most; /* J: the figures of the last check */
};

/* Before a step call's first substep, with x, v as the call starts: open or continue
 * the books as books_mode (the call's sys->books_mode) says. *watched: whether this call
 * keeps them (then call the functions below). SS_ERR_NOMEM possible. */
ss_status ss_books_begin(ss_system *sys, int books_mode, ss_method method, size_t steps, double dt,
                         int *watched);
/* The work of the moving pins and of the air on faces (where it pushes) over the
 * substep just taken (trapezoid rule). */
void ss_books_pin_work(ss_system *sys, double dt);
/* aero.c (declared with the air's other functions in springsim.h): nonzero when the
 * air on faces acts. */
int ss_aero_active(const ss_system *sys);
/* After each substep of a watched call: nonzero when a check is due (`last`: the call's
 * last substep). */
static inline int ss_books_tick(ss_system *sys, double dt, int last) {
    struct ss_books *b = sys->books;
    if (b->pins_move || ss_aero_active(sys))
        ss_books_pin_work(sys, dt);
    return ++b->since_check >= SS_BOOKS_EVERY || (last && b->check_end);
}
/* The check, with x_start the positions the call started from: nonzero when the
 * motion's energy exceeds its bound (the books keep the figures for the message). */
int ss_books_diverged(ss_system *sys, const double *x_start);
/* After a successful watched call: carry its work into the books (a sequence goes on)
 * or close them. */
void ss_books_end(ss_system *sys, const double *x_start);
/* After a failed call: close the books. */
void ss_books_close(ss_system *sys);
/* The figures of the failed check: Q (J), the most available (J), when the books
 * opened (s). */
void ss_books_failure(const ss_system *sys, double *motion, double *available, double *opened);
void ss_books_free(struct ss_books *books);

#endif
