/* aero.h - part of the kernel API: the air on faces (aero.c).
 * Included by springsim.h only, at its place there (it uses what comes before it). */
#ifndef SPRINGSIM_AERO_H
#define SPRINGSIM_AERO_H

/* ---- Air on faces (aero.c) ------------------------------------------- */

/* Nonzero when the faces feel the air: 3D, some faces, air_density * drag_coeff != 0. */
int ss_aero_active(const ss_system *sys);
/* f (rows `stride` doubles apart) += each face's pressure drag at state (x, v),
 * -1/2 rho C_d A |u.n| (u.n) n with u = mean node velocity - wind, a third on each of
 * its nodes, face by face. Call only when ss_aero_active. */
void ss_aero_add_forces(const ss_system *sys, const double *x, const double *v, double *f,
                        size_t stride);
/* Power, W, the face drag takes out of the free nodes' motion at the current state:
 * -sum over faces and their free nodes of F/3 . v (0 when not active). */
double ss_aero_power(const ss_system *sys);
/* SS_ERR_VALUE unless both are finite and >= 0, and drag_coeff is 0 in 2D. */
ss_status ss_aero_check(ss_system *sys, double air_density, double drag_coeff);

#endif
