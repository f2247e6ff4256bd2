/* memory.c - what a system holds (ss_system_nbytes), and giving freed memory back after
 * a large build (the allocator itself is alloc.c's, below every other file). */
#include "springsim.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

/* ---- Accounting -------------------------------------------------------- */

/* Bytes that ss_malloc(bytes) takes (it never asks for 0). */
static size_t block(size_t bytes) {
    return bytes ? bytes : 1;
}

/* Every block the system owns, at the size it was allocated with: the sum of the live
 * ss_malloc sizes (what tracemalloc sees), so that nbytes is what the process holds for
 * the system, but for the allocator's own few bytes per block. */
size_t ss_system_nbytes(const ss_system *sys) {
    const size_t pad = SS_PAD_DOUBLES * sizeof(double);
    size_t total = sizeof *sys;
    for (int a = 0; a < SS_ARRAY_COUNT; a++) /* absent arrays hold an empty block */
        total += sizeof(ss_buffer) + sys->arrays[a]->capacity + pad;
    if (sys->scratch.buffer)
        total += sys->scratch.doubles * sizeof(double) + pad;
    if (sys->scratch.colour_order)
        total +=
            block(sys->num_springs * sizeof(int32_t)) + (SS_SERIAL_COLOUR + 2) * sizeof(size_t);
    if (sys->cut)
        total += block(sys->cut_capacity) + block(2 * sys->cut_capacity * sizeof(double));
    if (sys->broken)
        total += 2 * sys->broken_capacity * sizeof(int32_t);
    if (sys->scratch.held) /* the pins a step held, and their velocities (constraints.c) */
        total += sys->scratch.held_capacity * (sizeof(size_t) + (size_t)sys->dim * sizeof(double));
    if (sys->bodies)
        total += block(sys->body_capacity * sizeof(ss_pressure_body));
    for (size_t k = 0; k < sys->num_bodies; k++)
        total += block(sys->bodies[k].count * (size_t)sys->dim * sizeof(int32_t));
    if (sys->colliders)
        total += block(sys->collider_capacity * sizeof(ss_collider));
    for (size_t k = 0; k < sys->num_colliders; k++)
        total += ss_mesh_nbytes(sys->colliders[k].mesh);
    if (sys->scratch.books) /* the divergence watch's */
        total += sizeof *sys->scratch.books +
                 (sys->scratch.books->pin_springs
                      ? block(sys->scratch.books->pin_capacity * sizeof(int32_t))
                      : 0) +
                 (sys->scratch.books->x_ref
                      ? (sys->scratch.books->x_ref_capacity + SS_PAD_DOUBLES) * sizeof(double)
                      : 0);
    return total + ss_plan_nbytes(sys->scratch.plan) + ss_colliders_nbytes(sys) +
           ss_contact_nbytes(sys->contact) + ss_self_collision_nbytes(sys) + ss_drives_nbytes(sys) +
           ss_vbd_nbytes(sys);
}

/* ---- Giving freed memory back ------------------------------------------
 *
 * glibc's malloc serves a block from its heap (brk) unless the block is at least the
 * mmap threshold; and whenever an mmapped block is freed it raises that threshold to the
 * block's size (up to 32 MiB), and the trim threshold (free space at the top of the heap
 * it keeps) to twice that. Building a large system frees temporaries of about a
 * megabyte: the builder's NumPy arrays (int64 spring pairs, stiffness, positions), the
 * plan's. After the first of them, blocks of that size come from the heap, and when they
 * are freed their pages stay resident: free chunks between live ones are never given
 * back, free space at the top only beyond the raised trim threshold. Measured on the
 * 100x100 cloth: 1.8 MB of free heap after building (nbytes 3.1 MB), 1.0 MB of it still
 * resident after the first step reused the rest: process growth 1.26x nbytes.
 *
 * malloc_trim(0) gives every free page of every arena back to the system (since glibc
 * 2.8 also those between live chunks). It runs once after a system grew by a large
 * build, at the end of its next step's set-up (plan, colouring, scratch), so
 * that the plan and the step's scratch reuse the freed heap first, and after the caller's
 * temporaries are gone. It costs a walk of the free lists (0.1 to 1 ms) and the page
 * faults of memory used again; below SS_TRIM_BYTES a build leaves too little to be
 * worth it.
 *
 * Not chosen: mmapping the kernel's own large blocks directly returns them on free, but
 * the builder's NumPy temporaries stay resident (1.9 of the 2.0 MB of heap the 100x100
 * cloth's build left, with the kernel's blocks mmapped), and the first step then maps
 * new pages instead of reusing freed ones; mallopt (a fixed threshold) would change the
 * allocator of the whole process, for every library in it. */

/* Systems smaller than this (sim.nbytes) do not trim after a build. */
#define SS_TRIM_BYTES ((size_t)1 << 20)

void ss_system_release_free_memory(ss_system *sys) {
    if (!sys->grew || ss_system_nbytes(sys) < SS_TRIM_BYTES)
        return;
    sys->grew = 0;
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}
