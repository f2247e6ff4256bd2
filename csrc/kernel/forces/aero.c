/* aero.c - air on the faces: each triangle's pressure drag as a flat plate.
 *
 * `drag` (node_pass.c) is the articles' knob: a force -drag (v - wind) on every node,
 * so the air a body feels grows with its number of nodes. Here the air acts on the
 * surface instead, and a finer mesh of the same surface feels the same air.
 *
 * Triangle (a, b, c) with area A and unit normal n moves through the air at
 *     u = (v_a + v_b + v_c) / 3 - wind                          m/s
 * and the air pushes on it along its normal with a flat plate's pressure drag
 *     F = -1/2 rho C_d A |u.n| (u.n) n                          N
 * (rho the air density, kg/m^3; C_d the drag coefficient, about 1.2 for a plate
 * face-on), one third of it on each of its nodes. Which way the triangle faces does
 * not matter (n and -n give the same F), and air sliding along a face pushes nothing:
 * skin friction is a hundred times weaker than pressure drag, and left out. With
 * N = (b - a) x (c - a) = 2 A n, each node's share is
 *     F / 3 = -(rho C_d / 12) |u.N| (u.N) N / |N|^2,
 * and a degenerate triangle (N = 0) feels nothing.
 *
 * 3D only: a triangle in the plane has no normal out of it.
 *
 * The forces are added in face order, by one thread, between the force evaluation's
 * two passes (forces.c), where gas pressure is: every node receives them in one order
 * whatever the number of threads or the SIMD path. */
#include "springsim.h"

#include <math.h>

int ss_aero_active(const ss_system *sys) {
    return sys->dim == 3 && sys->num_faces && sys->air_density * sys->drag_coeff != 0.0;
}

/* The share F / 3 of one face, from its nodes' positions x and velocities v. With
 * w = 3 u = v_a + v_b + v_c - 3 wind (one division per face, not four):
 *     F / 3 = -(rho C_d / 108) |w.N| (w.N) N / |N|^2;   k9 = rho C_d / 108. */
static inline void face_share(const double *x, const double *v, const int32_t *t,
                              const double wind3[3], double k9, double g[3]) {
    const double *a = x + 3 * (size_t)t[0], *b = x + 3 * (size_t)t[1], *c = x + 3 * (size_t)t[2];
    const double *va = v + 3 * (size_t)t[0], *vb = v + 3 * (size_t)t[1], *vc = v + 3 * (size_t)t[2];
    double e1[3], e2[3], w[3];
    for (int q = 0; q < 3; q++) {
        e1[q] = b[q] - a[q];
        e2[q] = c[q] - a[q];
        w[q] = va[q] + vb[q] + vc[q] - wind3[q];
    }
    const double n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                         e1[0] * e2[1] - e1[1] * e2[0]};
    const double n2 = n[0] * n[0] + n[1] * n[1] + n[2] * n[2];
    const double wn = w[0] * n[0] + w[1] * n[1] + w[2] * n[2];
    const double scale = n2 > 0.0 ? -k9 * fabs(wn) * wn / n2 : 0.0;
    for (int q = 0; q < 3; q++)
        g[q] = scale * n[q];
}

/* The constants of face_share: 3 wind, and rho C_d / 108 (kg/m^3). */
static double face_constants(const ss_system *sys, double wind3[3]) {
    for (int q = 0; q < 3; q++)
        wind3[q] = 3.0 * sys->wind[q];
    return sys->air_density * sys->drag_coeff / 108.0;
}

/* f (rows `stride` doubles apart) += every face's share on each of its nodes. */
void ss_aero_add_forces(const ss_system *sys, const double *x, const double *v, double *f,
                        size_t stride) {
    const int32_t *faces = SS_INT32S(sys, SS_FACES);
    double wind3[3];
    const double k9 = face_constants(sys, wind3);
    for (size_t t = 0; t < sys->num_faces; t++) {
        double g[3];
        face_share(x, v, faces + 3 * t, wind3, k9, g);
        for (int c = 0; c < 3; c++) {
            double *row = f + (size_t)faces[3 * t + c] * stride;
            row[0] += g[0];
            row[1] += g[1];
            row[2] += g[2];
        }
    }
}

/* The power the air takes out of the free nodes' motion, W: -sum F/3 . v_i over every
 * face's free nodes. As for `drag`, it is what the force does to the motion, not to
 * the motion relative to the air: >= 0 in still air, and negative while a wind pushes
 * the body along (that energy comes from the wind). */
double ss_aero_power(const ss_system *sys) {
    if (!ss_aero_active(sys))
        return 0.0;
    const double *x = SS_DOUBLES(sys, SS_POSITIONS), *v = SS_DOUBLES(sys, SS_VELOCITIES);
    const int32_t *faces = SS_INT32S(sys, SS_FACES);
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    double wind3[3];
    const double k9 = face_constants(sys, wind3);
    double power = 0.0;
    for (size_t t = 0; t < sys->num_faces; t++) {
        double g[3];
        face_share(x, v, faces + 3 * t, wind3, k9, g);
        for (int c = 0; c < 3; c++) {
            const size_t i = (size_t)faces[3 * t + c];
            if (!pinned[i])
                power -= g[0] * v[3 * i] + g[1] * v[3 * i + 1] + g[2] * v[3 * i + 2];
        }
    }
    return power;
}

ss_status ss_aero_check(ss_system *sys, double air_density, double drag_coeff) {
    if (!isfinite(air_density) || !(air_density >= 0.0))
        return ss_fail(sys, SS_ERR_VALUE, "air_density is %g: must be finite and >= 0 kg/m^3",
                       air_density);
    if (!isfinite(drag_coeff) || !(drag_coeff >= 0.0))
        return ss_fail(sys, SS_ERR_VALUE,
                       "drag_coefficient is %g: must be finite and >= 0 (a flat plate "
                       "face-on: about 1.2)",
                       drag_coeff);
    if (sys->dim == 2 && drag_coeff != 0.0)
        return ss_fail(sys, SS_ERR_VALUE,
                       "drag_coefficient is %g in a 2D system: face aerodynamics acts on "
                       "triangles in 3D only (a triangle in the plane has no normal out of "
                       "it); use drag, the per-node air drag, in 2D",
                       drag_coeff);
    return SS_OK;
}
