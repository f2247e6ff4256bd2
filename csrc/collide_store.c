/* collide_store.c - what the contacts keep between substeps (ss_contact, built by
 * collide.c): freeing it and counting its bytes. Apart from collide.c so that the
 * topology's bookkeeping (parallel.c), which forgets it, does not call into the contact
 * pass, which runs on parallel.c's threads. */
#include "springsim.h"

#include <string.h>

void ss_collide_forget(ss_system *sys) {
    ss_free(sys->contact.first);
    ss_free(sys->contact.springs);
    ss_free(sys->contact.start);
    ss_free(sys->contact.gas);
    ss_free(sys->contact.hits);
    memset(&sys->contact, 0, sizeof sys->contact);
}

size_t ss_collide_nbytes(const ss_system *sys) {
    const ss_contact *c = &sys->contact;
    const size_t rows = c->nodes * (size_t)sys->dim * sizeof(double);
    return (c->first ? (c->nodes + 1) * sizeof(size_t) + 2 * sys->num_springs * sizeof(int32_t)
                     : 0) +
           (c->start ? rows : 0) + (c->gas ? rows : 0) +
           (c->hits ? 2 * c->nodes * sizeof(int32_t) : 0);
}
