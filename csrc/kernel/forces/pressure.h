/* pressure.h - part of the kernel API: gas pressure bodies (pressure.c).
 * Included by springsim.h only, at its place there (it uses what comes before it). */
#ifndef SPRINGSIM_PRESSURE_H
#define SPRINGSIM_PRESSURE_H

/* ---- Gas pressure (pressure.c) ----------------------------------------- */

/* Add a gas body. elements: (count, dim) node indices forming a closed, consistently
 * oriented boundary; stored reversed if it encloses a negative volume. */
ss_status ss_system_add_pressure(ss_system *sys, size_t count, const int64_t *elements, double nrt,
                                 double ambient, long *id);
ss_status ss_system_set_pressure(ss_system *sys, long id, double nrt, double ambient);
ss_status ss_system_remove_pressure(ss_system *sys, long id);
ss_pressure_body *ss_system_find_pressure(ss_system *sys, long id);
/* Enclosed area (2D, m^2) or volume (3D, m^3) of a body at positions x. */
double ss_pressure_volume(const ss_system *sys, const ss_pressure_body *body, const double *x);
/* Add every body's gas force (P - ambient) dV/dx to the node forces f (rows `stride`
 * doubles apart); a body whose
 * volume is <= 0 gets NaN forces and its id in sys->collapsed_body. */
void ss_pressure_add_forces(ss_system *sys, const double *x, double *f, size_t stride);
/* Sum over bodies of -nrt ln V + ambient V, J (NaN if a body is inside out). */
double ss_pressure_energy(const ss_system *sys);
/* SS_ERR_VALUE naming the first body whose volume is not > 0. */
ss_status ss_pressure_validate(ss_system *sys);
/* The id of the first body whose volume at the current positions is not > 0, or -1. */
long ss_pressure_first_collapsed(const ss_system *sys);
/* Deep-copy src's bodies into dst (whose bodies pointer is not owned yet). */
ss_status ss_pressure_copy(ss_system *dst, const ss_system *src);
void ss_pressure_free(ss_system *sys);
/* Before removing nodes: SS_ERR_VALUE if a doomed node is on a body's boundary. */
ss_status ss_pressure_check_removal(ss_system *sys, const uint8_t *doomed);
/* After removing nodes: renumber every body's elements. */
void ss_pressure_renumber(ss_system *sys, const int64_t *old_to_new);

#endif
