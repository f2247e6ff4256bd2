/* storage.h - kernel-private helpers that system.c shares with topology.c: growing
 * the arrays and checking the values written into them. Not part of the kernel API. */
#ifndef SPRINGSIM_STORAGE_H
#define SPRINGSIM_STORAGE_H

#include "springsim.h"

ss_status ss_reserve_rows(ss_system *sys, ss_array first, ss_array last, size_t rows, size_t keep);
ss_status ss_check_finite(ss_system *sys, const char *what, const double *v, size_t n);
ss_status ss_check_masses(ss_system *sys, const double *m, size_t n, size_t offset);
ss_status ss_check_spring_values(ss_system *sys, const char *what, const char *unit,
                                 const double *v, size_t n, size_t offset);
ss_status ss_check_stiffness(ss_system *sys, const double *k, size_t n);

#endif
