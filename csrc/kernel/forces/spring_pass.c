/* spring_pass.c - the spring force loop, in a portable path and in AVX2 and AVX-512
 * paths, and the choice of the path every SIMD pass takes: the fastest, measured on
 * first use (SPRINGSIM_SIMD or set_simd can force one).
 *
 * For spring (i, j) with d = x_j - x_i, l = |d|, u = d / l:
 *     F_i = (k (l - L) + c (v_j - v_i).u) u,    F_j = -F_i     [N]
 * A spring shorter than SS_MIN_SPRING_LENGTH exerts no force (its direction is
 * undefined); a NaN length is not skipped, so that a blow-up shows.
 *
 * Every path computes each spring with the same IEEE operations in the same order:
 *     l2 = (d0 d0 + d1 d1) + d2 d2,  inv = 1 / sqrt(l2),  l = l2 inv,  u = d inv,
 *     closing = ((v_j0 - v_i0) u0 + (v_j1 - v_i1) u1) + (v_j2 - v_i2) u2,
 *     magnitude = k (l - L) + c closing,  F = magnitude u,
 * (sqrt and division are correctly rounded in every path; the build passes
 * -ffp-contract=off, so nothing is fused into an FMA), and adds the forces into the
 * nodes' force rows one spring at a time in index order (a spring too short to pull
 * adds +0.0). So every path gives the same bits. The SIMD paths compute 4 or 8 springs
 * at once and then add those springs' forces in order.
 *
 * Force rows are ss_force_stride(dim) doubles apart: (fx, fy, fz, 0) in 3D, so that a
 * spring end's force is one 256-bit add. */
#if defined(__linux__) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* clock_gettime(CLOCK_THREAD_CPUTIME_ID), under -std=c11 */
#endif
#include "springsim.h"

#include <math.h>
#include <string.h>

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define SS_X86_SIMD 1
#include <immintrin.h>
#endif

#define SS_MIN_SPRING_LENGTH2 (SS_MIN_SPRING_LENGTH * SS_MIN_SPRING_LENGTH)

size_t ss_force_stride(int dim) {
    return dim == 3 ? 4 : 2;
}

/* ---- Portable ---------------------------------------------------------- */

/* The force on node i of spring s into F[0..dim): +0.0 for a spring too short to have
 * a direction (so that every path adds the same bits: +0.0 changes no sum here, whose
 * terms start from the node forces). */
static inline void spring_force(const ss_spring_view *sv, size_t s, const int dim, double F[3]) {
    const size_t i = (size_t)sv->pairs[2 * s] * (size_t)dim;
    const size_t j = (size_t)sv->pairs[2 * s + 1] * (size_t)dim;
    const double *x = sv->x, *v = sv->v;
    const double d0 = x[j] - x[i], d1 = x[j + 1] - x[i + 1];
    const double d2 = dim == 3 ? x[j + 2] - x[i + 2] : 0.0;
    const double l2 = dim == 3 ? (d0 * d0 + d1 * d1) + d2 * d2 : d0 * d0 + d1 * d1;
    if (l2 < SS_MIN_SPRING_LENGTH2) {
        F[0] = F[1] = F[2] = 0.0;
        return;
    }
    const double inv = 1.0 / sqrt(l2), length = l2 * inv;
    const double u0 = d0 * inv, u1 = d1 * inv, u2 = d2 * inv;
    double closing = (v[j] - v[i]) * u0 + (v[j + 1] - v[i + 1]) * u1;
    if (dim == 3)
        closing = closing + (v[j + 2] - v[i + 2]) * u2;
    const double magnitude = sv->stiffness[s] * (length - sv->rest[s]) + sv->damping[s] * closing;
    F[0] = magnitude * u0;
    F[1] = magnitude * u1;
    F[2] = magnitude * u2;
}

/* f_i += F, f_j -= F for spring s; f has rows of ss_force_stride(dim) doubles. */
static inline void scatter_one(const int32_t *pairs, size_t s, const int dim, const double F[3],
                               double *f) {
    const size_t stride = dim == 3 ? 4 : 2;
    double *fi = f + (size_t)pairs[2 * s] * stride, *fj = f + (size_t)pairs[2 * s + 1] * stride;
    for (int k = 0; k < dim; k++) {
        fi[k] += F[k];
        fj[k] -= F[k];
    }
}

static void scatter_portable(const ss_spring_view *sv, int dim, size_t first, size_t last,
                             double *f) {
    double F[3];
    if (dim == 3) {
        for (size_t s = first; s < last; s++) {
            spring_force(sv, s, 3, F);
            scatter_one(sv->pairs, s, 3, F, f);
        }
    } else {
        for (size_t s = first; s < last; s++) {
            spring_force(sv, s, 2, F);
            scatter_one(sv->pairs, s, 2, F, f);
        }
    }
}

static void springs_forces_portable(const ss_spring_view *sv, int dim, const int32_t *index,
                                    size_t count, double *out) {
    const size_t stride = ss_force_stride(dim);
    for (size_t q = 0; q < count; q++) {
        double F[3];
        spring_force(sv, (size_t)index[q], dim, F);
        memcpy(out + q * stride, F, (size_t)dim * sizeof(double));
    }
}

#ifdef SS_X86_SIMD

/* ---- AVX2: 4 springs at a time ----------------------------------------- */
/* Each spring end's x and v are read with one 256-bit load each from the (N, dim)
 * arrays (the kernel pads every array, and its scratch, so the load past the last node
 * stays inside the allocation) and transposed into one vector per component; the
 * forces are transposed back and added with one 256-bit (3D) or 128-bit (2D)
 * operation per spring end into the force rows. */

#define SS_AVX2 __attribute__((target("avx2")))

/* Rows a, b, c, d (4 doubles each) to columns: r0 = (a0, b0, c0, d0), r1, r2. */
SS_AVX2 static inline void transpose_4x3(__m256d a, __m256d b, __m256d c, __m256d d, __m256d *r0,
                                         __m256d *r1, __m256d *r2) {
    const __m256d t0 = _mm256_unpacklo_pd(a, b), t1 = _mm256_unpackhi_pd(a, b);
    const __m256d t2 = _mm256_unpacklo_pd(c, d), t3 = _mm256_unpackhi_pd(c, d);
    *r0 = _mm256_permute2f128_pd(t0, t2, 0x20);
    *r1 = _mm256_permute2f128_pd(t1, t3, 0x20);
    *r2 = _mm256_permute2f128_pd(t0, t2, 0x31);
}

/* The magnitude of 4 springs' forces times their unit vectors, +0.0 when too short. */
/* The same for springs whose rest lengths, stiffnesses and dampings are given. */
SS_AVX2 static inline void forces_avx2_of(const __m256d rest, const __m256d stiffness,
                                          const __m256d damping, const int dim, const __m256d d[3],
                                          const __m256d dv[3], __m256d F[3]) {
    const __m256d one = _mm256_set1_pd(1.0), shortest = _mm256_set1_pd(SS_MIN_SPRING_LENGTH2);
    __m256d l2 = _mm256_add_pd(_mm256_mul_pd(d[0], d[0]), _mm256_mul_pd(d[1], d[1]));
    if (dim == 3)
        l2 = _mm256_add_pd(l2, _mm256_mul_pd(d[2], d[2]));
    const __m256d valid = _mm256_cmp_pd(l2, shortest, _CMP_NLT_UQ);
    const __m256d inv = _mm256_div_pd(one, _mm256_sqrt_pd(l2));
    const __m256d length = _mm256_mul_pd(l2, inv);
    const __m256d u0 = _mm256_mul_pd(d[0], inv), u1 = _mm256_mul_pd(d[1], inv);
    const __m256d u2 = dim == 3 ? _mm256_mul_pd(d[2], inv) : one;
    __m256d closing = _mm256_add_pd(_mm256_mul_pd(dv[0], u0), _mm256_mul_pd(dv[1], u1));
    if (dim == 3)
        closing = _mm256_add_pd(closing, _mm256_mul_pd(dv[2], u2));
    const __m256d stretch = _mm256_sub_pd(length, rest);
    const __m256d magnitude =
        _mm256_add_pd(_mm256_mul_pd(stiffness, stretch), _mm256_mul_pd(damping, closing));
    F[0] = _mm256_and_pd(valid, _mm256_mul_pd(magnitude, u0));
    F[1] = _mm256_and_pd(valid, _mm256_mul_pd(magnitude, u1));
    F[2] = dim == 3 ? _mm256_and_pd(valid, _mm256_mul_pd(magnitude, u2)) : _mm256_setzero_pd();
}

/* Springs s..s+3 (consecutive indices). */
SS_AVX2 static inline void forces_avx2(const ss_spring_view *sv, size_t s, const int dim,
                                       const __m256d d[3], const __m256d dv[3], __m256d F[3]) {
    forces_avx2_of(_mm256_loadu_pd(sv->rest + s), _mm256_loadu_pd(sv->stiffness + s),
                   _mm256_loadu_pd(sv->damping + s), dim, d, dv, F);
}

/* Loads and transposes the ends of springs id[0..3] (3D): d, dv are their x_j - x_i
 * and v_j - v_i by component. */
SS_AVX2 static inline void spring_ends_avx2_3d(const ss_spring_view *sv, const size_t id[4],
                                               __m256d d[3], __m256d dv[3]) {
    __m256d P[4], Q[4];
    for (int l = 0; l < 4; l++) {
        const size_t i = 3 * (size_t)sv->pairs[2 * id[l]], j = 3 * (size_t)sv->pairs[2 * id[l] + 1];
        P[l] = _mm256_sub_pd(_mm256_loadu_pd(sv->x + j), _mm256_loadu_pd(sv->x + i));
        Q[l] = _mm256_sub_pd(_mm256_loadu_pd(sv->v + j), _mm256_loadu_pd(sv->v + i));
    }
    transpose_4x3(P[0], P[1], P[2], P[3], &d[0], &d[1], &d[2]);
    transpose_4x3(Q[0], Q[1], Q[2], Q[3], &dv[0], &dv[1], &dv[2]);
}

/* F by component back to one row (Fx, Fy, Fz, 0) per spring. */
SS_AVX2 static inline void force_rows_avx2(const __m256d F[3], __m256d rows[4]) {
    const __m256d zero = _mm256_setzero_pd();
    const __m256d a = _mm256_unpacklo_pd(F[0], F[1]), b = _mm256_unpackhi_pd(F[0], F[1]);
    const __m256d c = _mm256_unpacklo_pd(F[2], zero), e = _mm256_unpackhi_pd(F[2], zero);
    rows[0] = _mm256_permute2f128_pd(a, c, 0x20);
    rows[1] = _mm256_permute2f128_pd(b, e, 0x20);
    rows[2] = _mm256_permute2f128_pd(a, c, 0x31);
    rows[3] = _mm256_permute2f128_pd(b, e, 0x31);
}

/* ss_springs_forces in 3D: springs index[0..count) 4 at a time, one row each into out. */
SS_AVX2 static void springs_forces_avx2_3d(const ss_spring_view *sv, const int32_t *index,
                                           size_t count, double *out) {
    size_t q = 0;
    for (; q + 4 <= count; q += 4) {
        const size_t id[4] = {(size_t)index[q], (size_t)index[q + 1], (size_t)index[q + 2],
                              (size_t)index[q + 3]};
        __m256d d[3], dv[3], F[3], rows[4];
        spring_ends_avx2_3d(sv, id, d, dv);
#define SS_GATHER4(a) _mm256_setr_pd((a)[id[0]], (a)[id[1]], (a)[id[2]], (a)[id[3]])
        forces_avx2_of(SS_GATHER4(sv->rest), SS_GATHER4(sv->stiffness), SS_GATHER4(sv->damping), 3,
                       d, dv, F);
#undef SS_GATHER4
        force_rows_avx2(F, rows);
        for (int l = 0; l < 4; l++)
            _mm256_storeu_pd(out + 4 * (q + (size_t)l), rows[l]);
    }
    springs_forces_portable(sv, 3, index + q, count - q, out + 4 * q);
}

SS_AVX2 static void scatter_avx2_3d(const ss_spring_view *sv, size_t first, size_t last,
                                    double *f) {
    const int32_t *pairs = sv->pairs;
    size_t s = first;
    for (; s + 4 <= last; s += 4) {
        const size_t id[4] = {s, s + 1, s + 2, s + 3};
        __m256d d[3], dv[3], F[3], rows[4];
        spring_ends_avx2_3d(sv, id, d, dv);
        forces_avx2(sv, s, 3, d, dv, F);
        force_rows_avx2(F, rows);
        for (int l = 0; l < 4; l++) {
            double *fi = f + 4 * (size_t)pairs[2 * (s + l)];
            double *fj = f + 4 * (size_t)pairs[2 * (s + l) + 1];
            _mm256_storeu_pd(fi, _mm256_add_pd(_mm256_loadu_pd(fi), rows[l]));
            _mm256_storeu_pd(fj, _mm256_sub_pd(_mm256_loadu_pd(fj), rows[l]));
        }
    }
    scatter_portable(sv, 3, s, last, f);
}

SS_AVX2 static void scatter_avx2_2d(const ss_spring_view *sv, size_t first, size_t last,
                                    double *f) {
    const double *x = sv->x, *v = sv->v;
    const int32_t *pairs = sv->pairs;
    size_t s = first;
    for (; s + 4 <= last; s += 4) {
        __m256d P[4]; /* (dx, dy, dvx, dvy) of each spring */
        for (int l = 0; l < 4; l++) {
            const size_t i = 2 * (size_t)pairs[2 * (s + l)], j = 2 * (size_t)pairs[2 * (s + l) + 1];
            const __m256d end_j = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(x + j)),
                                                       _mm_loadu_pd(v + j), 1);
            const __m256d end_i = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(x + i)),
                                                       _mm_loadu_pd(v + i), 1);
            P[l] = _mm256_sub_pd(end_j, end_i);
        }
        const __m256d t0 = _mm256_unpacklo_pd(P[0], P[1]), t1 = _mm256_unpackhi_pd(P[0], P[1]);
        const __m256d t2 = _mm256_unpacklo_pd(P[2], P[3]), t3 = _mm256_unpackhi_pd(P[2], P[3]);
        const __m256d d[3] = {_mm256_permute2f128_pd(t0, t2, 0x20),
                              _mm256_permute2f128_pd(t1, t3, 0x20), _mm256_setzero_pd()};
        const __m256d dv[3] = {_mm256_permute2f128_pd(t0, t2, 0x31),
                               _mm256_permute2f128_pd(t1, t3, 0x31), _mm256_setzero_pd()};
        __m256d F[3];
        forces_avx2(sv, s, 2, d, dv, F);
        const __m256d a = _mm256_unpacklo_pd(F[0], F[1]); /* (F0x, F0y, F2x, F2y) */
        const __m256d b = _mm256_unpackhi_pd(F[0], F[1]); /* (F1x, F1y, F3x, F3y) */
        const __m128d rows[4] = {_mm256_castpd256_pd128(a), _mm256_castpd256_pd128(b),
                                 _mm256_extractf128_pd(a, 1), _mm256_extractf128_pd(b, 1)};
        for (int l = 0; l < 4; l++) {
            double *fi = f + 2 * (size_t)pairs[2 * (s + l)];
            double *fj = f + 2 * (size_t)pairs[2 * (s + l) + 1];
            _mm_storeu_pd(fi, _mm_add_pd(_mm_loadu_pd(fi), rows[l]));
            _mm_storeu_pd(fj, _mm_sub_pd(_mm_loadu_pd(fj), rows[l]));
        }
    }
    scatter_portable(sv, 2, s, last, f);
}

SS_AVX2 static void scatter_avx2(const ss_spring_view *sv, int dim, size_t first, size_t last,
                                 double *f) {
    if (dim == 3)
        scatter_avx2_3d(sv, first, last, f);
    else
        scatter_avx2_2d(sv, first, last, f);
}

/* ---- AVX-512: 8 springs at a time (3D) --------------------------------- */
/* The AVX2 scheme on 512-bit registers: springs s..s+3 in the low halves, s+4..s+7 in
 * the high halves. 2D systems take the AVX2 loop. */

#define SS_AVX512 __attribute__((target("avx512f")))

SS_AVX512 static void scatter_avx512_3d(const ss_spring_view *sv, size_t first, size_t last,
                                        double *f) {
    const double *x = sv->x, *v = sv->v;
    const int32_t *pairs = sv->pairs;
    const __m512d one = _mm512_set1_pd(1.0), shortest = _mm512_set1_pd(SS_MIN_SPRING_LENGTH2);
    const __m512d zero = _mm512_setzero_pd();
    /* Within each 256-bit half: (t0 low 128, t2 low 128) and (t0 high, t2 high). */
    const __m512i low = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13);
    const __m512i high = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
    size_t s = first;
    for (; s + 8 <= last; s += 8) {
        __m512d P[4], Q[4];
        for (int l = 0; l < 4; l++) {
            const size_t i = 3 * (size_t)pairs[2 * (s + l)], j = 3 * (size_t)pairs[2 * (s + l) + 1];
            const size_t i4 = 3 * (size_t)pairs[2 * (s + l + 4)];
            const size_t j4 = 3 * (size_t)pairs[2 * (s + l + 4) + 1];
            const __m512d xi = _mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_loadu_pd(x + i)),
                                                  _mm256_loadu_pd(x + i4), 1);
            const __m512d xj = _mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_loadu_pd(x + j)),
                                                  _mm256_loadu_pd(x + j4), 1);
            const __m512d vi = _mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_loadu_pd(v + i)),
                                                  _mm256_loadu_pd(v + i4), 1);
            const __m512d vj = _mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_loadu_pd(v + j)),
                                                  _mm256_loadu_pd(v + j4), 1);
            P[l] = _mm512_sub_pd(xj, xi);
            Q[l] = _mm512_sub_pd(vj, vi);
        }
        __m512d d[3], dv[3];
        {
            const __m512d t0 = _mm512_unpacklo_pd(P[0], P[1]), t1 = _mm512_unpackhi_pd(P[0], P[1]);
            const __m512d t2 = _mm512_unpacklo_pd(P[2], P[3]), t3 = _mm512_unpackhi_pd(P[2], P[3]);
            d[0] = _mm512_permutex2var_pd(t0, low, t2);
            d[1] = _mm512_permutex2var_pd(t1, low, t3);
            d[2] = _mm512_permutex2var_pd(t0, high, t2);
            const __m512d q0 = _mm512_unpacklo_pd(Q[0], Q[1]), q1 = _mm512_unpackhi_pd(Q[0], Q[1]);
            const __m512d q2 = _mm512_unpacklo_pd(Q[2], Q[3]), q3 = _mm512_unpackhi_pd(Q[2], Q[3]);
            dv[0] = _mm512_permutex2var_pd(q0, low, q2);
            dv[1] = _mm512_permutex2var_pd(q1, low, q3);
            dv[2] = _mm512_permutex2var_pd(q0, high, q2);
        }
        /* Lane l of d is spring s + l: springs s..s+3 low, s+4..s+7 high, as loaded. */
        const __m512d l2 =
            _mm512_add_pd(_mm512_add_pd(_mm512_mul_pd(d[0], d[0]), _mm512_mul_pd(d[1], d[1])),
                          _mm512_mul_pd(d[2], d[2]));
        const __mmask8 valid = _mm512_cmp_pd_mask(l2, shortest, _CMP_NLT_UQ);
        const __m512d inv = _mm512_div_pd(one, _mm512_sqrt_pd(l2));
        const __m512d length = _mm512_mul_pd(l2, inv);
        const __m512d u0 = _mm512_mul_pd(d[0], inv), u1 = _mm512_mul_pd(d[1], inv),
                      u2 = _mm512_mul_pd(d[2], inv);
        const __m512d closing =
            _mm512_add_pd(_mm512_add_pd(_mm512_mul_pd(dv[0], u0), _mm512_mul_pd(dv[1], u1)),
                          _mm512_mul_pd(dv[2], u2));
        /* Springs in lane order: s, s+1, s+2, s+3 | s+4, ..., s+7. */
        const __m512d stretch = _mm512_sub_pd(length, _mm512_loadu_pd(sv->rest + s));
        const __m512d magnitude =
            _mm512_add_pd(_mm512_mul_pd(_mm512_loadu_pd(sv->stiffness + s), stretch),
                          _mm512_mul_pd(_mm512_loadu_pd(sv->damping + s), closing));
        const __m512d Fx = _mm512_maskz_mul_pd(valid, magnitude, u0);
        const __m512d Fy = _mm512_maskz_mul_pd(valid, magnitude, u1);
        const __m512d Fz = _mm512_maskz_mul_pd(valid, magnitude, u2);
        const __m512d a = _mm512_unpacklo_pd(Fx, Fy), b = _mm512_unpackhi_pd(Fx, Fy);
        const __m512d c = _mm512_unpacklo_pd(Fz, zero), e = _mm512_unpackhi_pd(Fz, zero);
        const __m512d r02 = _mm512_permutex2var_pd(a, low, c);  /* rows of s, s+4 */
        const __m512d r13 = _mm512_permutex2var_pd(b, low, e);  /* s+1, s+5 */
        const __m512d r20 = _mm512_permutex2var_pd(a, high, c); /* s+2, s+6 */
        const __m512d r31 = _mm512_permutex2var_pd(b, high, e); /* s+3, s+7 */
        const __m256d rows[8] = {_mm512_castpd512_pd256(r02),    _mm512_castpd512_pd256(r13),
                                 _mm512_castpd512_pd256(r20),    _mm512_castpd512_pd256(r31),
                                 _mm512_extractf64x4_pd(r02, 1), _mm512_extractf64x4_pd(r13, 1),
                                 _mm512_extractf64x4_pd(r20, 1), _mm512_extractf64x4_pd(r31, 1)};
        for (int l = 0; l < 8; l++) {
            double *fi = f + 4 * (size_t)pairs[2 * (s + l)];
            double *fj = f + 4 * (size_t)pairs[2 * (s + l) + 1];
            _mm256_storeu_pd(fi, _mm256_add_pd(_mm256_loadu_pd(fi), rows[l]));
            _mm256_storeu_pd(fj, _mm256_sub_pd(_mm256_loadu_pd(fj), rows[l]));
        }
    }
    scatter_avx2_3d(sv, s, last, f);
}

SS_AVX512 static void scatter_avx512(const ss_spring_view *sv, int dim, size_t first, size_t last,
                                     double *f) {
    if (dim == 3)
        scatter_avx512_3d(sv, first, last, f);
    else
        scatter_avx2_2d(sv, first, last, f);
}

#endif /* SS_X86_SIMD */

/* ---- Choosing a path --------------------------------------------------- */
/* One path for the whole process, which every SIMD-dispatched pass follows (this loop,
 * the node pass, RK4's stages, XPBD's solve, the divergence watch; a pass with only a
 * portable and an AVX2 version takes AVX2 for any SIMD path). Unless a path was set
 * first (SPRINGSIM_SIMD or set_simd, through ss_simd_set), the first ss_simd_get()
 * chooses it by measuring this loop, once per process (pthread_once: a thread that
 * comes while another measures waits for its answer): every available path scatters a
 * probe cloth, interleaved, and the simplest path within SS_PROBE_MARGIN of the fastest
 * median wins. Since every path gives the same bits, the choice changes only the speed. */

typedef void (*scatter_fn)(const ss_spring_view *, int, size_t, size_t, double *);

static scatter_fn scatter_of(int path) {
#ifdef SS_X86_SIMD
    if (path == SS_SIMD_AVX512)
        return scatter_avx512;
    if (path == SS_SIMD_AVX2)
        return scatter_avx2;
#endif
    (void)path;
    return scatter_portable;
}

/* The path in use and how it was chosen, in one word so that they are read together:
 * path | how << 8, or -1 before the choice. Read by every pass, written by ss_simd_set
 * and the first ss_simd_get, from any thread: atomic (acquire / release). MSVC builds
 * the portable path only, and its volatile int accesses are atomic on x86 and x64. */
static int choice_word = -1;
#if defined(__GNUC__)
#define SS_LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define SS_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define SS_ADD(p, v) __atomic_add_fetch((p), (v), __ATOMIC_ACQ_REL)
/* *p = v if *p == expected (else nothing). */
#define SS_SWAP_IF(p, expected, v)                                                                 \
    do {                                                                                           \
        int old_ = (expected);                                                                     \
        __atomic_compare_exchange_n((p), &old_, (v), 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);       \
    } while (0)
#else
#define SS_LOAD(p) (*(volatile int *)(p))
#define SS_STORE(p, v) (*(volatile int *)(p) = (v))
#define SS_ADD(p, v) (*(volatile int *)(p) += (v))
#define SS_SWAP_IF(p, expected, v)                                                                 \
    do {                                                                                           \
        if (SS_LOAD(p) == (expected))                                                              \
            SS_STORE(p, v);                                                                        \
    } while (0)
#endif

static const char *const path_names[SS_SIMD_COUNT] = {"portable", "avx2", "avx512"};
static const char *const how_names[] = {"unchosen", "measured", "forced",
                                        "set",      "only",     "unmeasured"};

const char *ss_simd_name(int path) {
    return path >= 0 && path < SS_SIMD_COUNT ? path_names[path] : NULL;
}

const char *ss_simd_how_name(int how) {
    return how >= 0 && how <= SS_SIMD_UNMEASURED ? how_names[how] : NULL;
}

int ss_simd_available(int path) {
    switch (path) {
    case SS_SIMD_PORTABLE:
        return 1;
#ifdef SS_X86_SIMD
    case SS_SIMD_AVX2:
        return __builtin_cpu_supports("avx2");
    case SS_SIMD_AVX512:
        return __builtin_cpu_supports("avx512f");
#endif
    default:
        return 0;
    }
}

/* What the measurement found: written once (inside the once-guard), then read only. */
static struct {
    int best, how;            /* the path it chose; SS_SIMD_MEASURED, ONLY or UNMEASURED */
    double ns[SS_SIMD_COUNT]; /* median ns per spring of each path (0: not measured) */
    double seconds;           /* thread CPU time the measurement took (s) */
    int done, runs;           /* done: the above are final; runs: measurements made */
#ifdef SS_X86_SIMD
} probe = {SS_SIMD_PORTABLE, SS_SIMD_UNCHOSEN, {0.0}, 0.0, 0, 0};
#else
} probe = {SS_SIMD_PORTABLE, SS_SIMD_ONLY, {0.0}, 0.0, 0, 0}; /* nothing to measure */
#endif

#ifdef SS_X86_SIMD
#include <pthread.h>
#include <time.h>

/* The probe cloth: SS_PROBE_SIDE² nodes 1 cm apart, slightly out of plane and moving,
 * with structural, shear and bend springs listed family by family in node order (as the
 * lattice builders list them): 2,202 springs, about 100 kB with the nodes, so it stays
 * in the L2 cache. A timed sample is SS_PROBE_PASSES passes over its springs (about 40
 * to 60 µs); each path gets one warm-up sample, then SS_PROBE_ROUNDS timed ones, the
 * paths taking turns in an order that rotates each round. About 2 ms in all. */
#define SS_PROBE_SIDE 20
#define SS_PROBE_PASSES 4
#define SS_PROBE_ROUNDS 9
/* The chosen path is the simplest whose median is within this (3 %) of the fastest: a
 * near-tie goes to the simpler path. */
#define SS_PROBE_MARGIN 0.03

static double thread_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double median_of(double *v, int n) {
    for (int a = 1; a < n; a++) /* insertion sort: n is SS_PROBE_ROUNDS */
        for (int b = a; b > 0 && v[b - 1] > v[b]; b--) {
            const double t = v[b];
            v[b] = v[b - 1];
            v[b - 1] = t;
        }
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Fills the probe's springs (i, j, rest) in builder order; returns their count. */
static size_t probe_springs(int32_t *pairs, double *rest) {
    const int n = SS_PROBE_SIDE;
    const double h = 0.01, diagonal = 0.01 * 1.4142135623730951;
    /* (di, dj, rest) of each family: two structural, two shear, two bend */
    const struct {
        int di0, dj0, di1, dj1;
        double rest;
    } family[6] = {{0, 0, 1, 0, h},        {0, 0, 0, 1, h},       {0, 0, 1, 1, diagonal},
                   {1, 0, 0, 1, diagonal}, {0, 0, 2, 0, 2.0 * h}, {0, 0, 0, 2, 2.0 * h}};
    size_t s = 0;
    for (int k = 0; k < 6; k++) {
        const int span_i = family[k].di0 > family[k].di1 ? family[k].di0 : family[k].di1;
        const int span_j = family[k].dj0 > family[k].dj1 ? family[k].dj0 : family[k].dj1;
        for (int i = 0; i + span_i < n; i++)
            for (int j = 0; j + span_j < n; j++) {
                pairs[2 * s] = (i + family[k].di0) * n + j + family[k].dj0;
                pairs[2 * s + 1] = (i + family[k].di1) * n + j + family[k].dj1;
                rest[s++] = 0.99 * family[k].rest;
            }
    }
    return s;
}

static void measure(void) {
    const size_t nodes = (size_t)SS_PROBE_SIDE * SS_PROBE_SIDE, most = 6 * nodes;
    int paths[SS_SIMD_COUNT], count = 0;
    for (int p = 0; p < SS_SIMD_COUNT; p++)
        if (ss_simd_available(p))
            paths[count++] = p;
    if (count == 1) {
        probe.how = SS_SIMD_ONLY;
        return;
    }
    const size_t node_doubles = 3 * nodes + SS_PAD_DOUBLES, force_doubles = 4 * nodes + 8;
    const size_t doubles = 2 * node_doubles + force_doubles + 3 * most;
    double *x = ss_malloc(doubles * sizeof(double));
    int32_t *pairs = ss_malloc(2 * most * sizeof(int32_t));
    if (!x || !pairs) {
        ss_free(x);
        ss_free(pairs);
        probe.how = SS_SIMD_UNMEASURED; /* and the portable path */
        return;
    }
    double *v = x + node_doubles, *f = v + node_doubles, *rest = f + force_doubles;
    double *stiffness = rest + most, *damping = stiffness + most;
    memset(x, 0, doubles * sizeof(double)); /* the padding too: the loads past the last node */
    const size_t springs = probe_springs(pairs, rest);
    uint32_t seed = 12345u; /* a fixed pseudo-random sequence: the same probe every run */
    for (size_t a = 0; a < nodes; a++) {
        const size_t i = a / SS_PROBE_SIDE, j = a % SS_PROBE_SIDE;
        double jitter[4];
        for (int c = 0; c < 4; c++) {
            seed = seed * 1664525u + 1013904223u;
            jitter[c] = (double)(seed >> 8) / 16777216.0 - 0.5; /* in [-0.5, 0.5) */
        }
        x[3 * a] = 0.01 * (double)i;
        x[3 * a + 1] = 0.01 * (double)j;
        x[3 * a + 2] = 1e-3 * jitter[0];
        for (int c = 0; c < 3; c++)
            v[3 * a + (size_t)c] = 0.1 * jitter[c + 1];
    }
    for (size_t s = 0; s < springs; s++) {
        stiffness[s] = 1000.0;
        damping[s] = 0.01;
    }
    const ss_spring_view sv = {pairs, rest, stiffness, damping, x, v, nodes};
    double samples[SS_SIMD_COUNT][SS_PROBE_ROUNDS];
    const double started = thread_seconds();
    for (int round = -1; round < SS_PROBE_ROUNDS; round++) /* round -1: the warm-up */
        for (int q = 0; q < count; q++) {
            const int path = paths[(q + round + count) % count];
            const scatter_fn fn = scatter_of(path);
            memset(f, 0, force_doubles * sizeof(double));
            const double start = thread_seconds();
            for (int pass = 0; pass < SS_PROBE_PASSES; pass++)
                fn(&sv, 3, 0, springs, f);
            const double elapsed = thread_seconds() - start;
            if (round >= 0)
                samples[path][round] = elapsed;
        }
    double fastest = 0.0;
    for (int q = 0; q < count; q++) {
        const int path = paths[q];
        const double seconds = median_of(samples[path], SS_PROBE_ROUNDS);
        probe.ns[path] = seconds / (double)(SS_PROBE_PASSES * springs) * 1e9;
        if (q == 0 || probe.ns[path] < fastest)
            fastest = probe.ns[path];
    }
    for (int q = count - 1; q >= 0; q--) /* the simplest path within the margin */
        if (probe.ns[paths[q]] <= fastest * (1.0 + SS_PROBE_MARGIN))
            probe.best = paths[q];
    probe.seconds = thread_seconds() - started;
    probe.how = SS_SIMD_MEASURED;
    SS_ADD(&probe.runs, 1);
    ss_free(x);
    ss_free(pairs);
}

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;

static void measure_once(void) {
    pthread_once(&probe_once, measure);
    SS_STORE(&probe.done, 1);
}
#else
static void measure_once(void) {
    SS_STORE(&probe.done, 1);
}
#endif

int ss_simd_best(void) {
    if (!SS_LOAD(&probe.done))
        measure_once();
    return probe.best;
}

int ss_simd_set(int path, int how) {
    if (how == SS_SIMD_MEASURED) { /* back to the measured path, measured now if need be */
        path = ss_simd_best();
        how = probe.how;
    }
    if (!ss_simd_available(path))
        return -1;
    SS_STORE(&choice_word, path | how << 8);
    return path;
}

int ss_simd_get(void) {
    int word = SS_LOAD(&choice_word);
    if (word < 0) { /* first use: the measured path, unless a set came meanwhile */
        const int path = ss_simd_best();
        SS_SWAP_IF(&choice_word, -1, path | probe.how << 8);
        word = SS_LOAD(&choice_word);
    }
    return word & 0xFF;
}

int ss_simd_how(void) {
    const int word = SS_LOAD(&choice_word);
    return word < 0 ? SS_SIMD_UNCHOSEN : word >> 8;
}

int ss_simd_measurement(double ns_per_spring[SS_SIMD_COUNT], double *seconds, int *runs) {
    const int done = SS_LOAD(&probe.done);
    for (int p = 0; p < SS_SIMD_COUNT; p++)
        ns_per_spring[p] = done ? probe.ns[p] : 0.0;
    *seconds = done ? probe.seconds : 0.0;
    *runs = SS_LOAD(&probe.runs);
    return done && probe.how == SS_SIMD_MEASURED;
}

void ss_springs_forces(const ss_spring_view *sv, int dim, const int32_t *index, size_t count,
                       double *out) {
#ifdef SS_X86_SIMD
    /* The springs between blocks: an eighth of a jelly's. 2D keeps the portable loop. */
    if (dim == 3 && ss_simd_get() != SS_SIMD_PORTABLE) {
        springs_forces_avx2_3d(sv, index, count, out);
        return;
    }
#endif
    springs_forces_portable(sv, dim, index, count, out);
}

void ss_springs_scatter(const ss_spring_view *sv, int dim, size_t first, size_t last, double *f) {
    scatter_of(ss_simd_get())(sv, dim, first, last, f);
}
