/* node_pass.c - the per-node loops of a force evaluation: the node forces that start
 * each force row (m g - drag (v - wind) + external) and the fused symplectic Euler
 * update that ends it (a = f / m, v' = v + a dt, x' = x + v' dt).
 *
 * On a string (one spring per node) these loops weigh as much as the springs, so they
 * have the spring pass's paths (spring_pass.c): a portable one and, on x86-64, an
 * AVX2 one chosen with it (ss_simd_get). Both make the same IEEE operations on each
 * component in the same order (no FMA: the build turns contraction off), so they give
 * the same bits. */
#include "springsim.h"

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define SS_X86_SIMD 1
#include <immintrin.h>
#endif

/* ---- Node forces ------------------------------------------------------- */

/* Node forces of nodes [first, last) into f's rows (`stride` doubles apart; the rest of
 * a row is zeroed). The parameters are copied into locals (the stores into f could
 * otherwise alias them) and dim is a constant in each instance, so the loop is
 * straight-line code per node. No external forces yet: every one is 0, and + 0.0
 * gives the same bits (it turns -0.0 into +0.0 in every path alike). */
SS_ALWAYS_INLINE void node_forces_dim(const ss_system *sys, size_t first, size_t last,
                                      const double *restrict v, double *restrict f, size_t stride,
                                      const size_t dim) {
    const double *restrict mass = SS_DOUBLES(sys, SS_MASSES);
    const double *restrict external =
        ss_array_absent(sys, SS_EXTERNAL) ? NULL : SS_DOUBLES(sys, SS_EXTERNAL);
    const double g[3] = {sys->gravity[0], sys->gravity[1], sys->gravity[2]};
    const double wind[3] = {sys->wind[0], sys->wind[1], sys->wind[2]};
    const double drag = sys->drag;
    for (size_t i = first; i < last; i++) {
        for (size_t k = 0; k < dim; k++) {
            const size_t ik = i * dim + k;
            const double user = external ? external[ik] : 0.0;
            f[i * stride + k] = mass[i] * g[k] - drag * (v[ik] - wind[k]) + user;
        }
        for (size_t k = dim; k < stride; k++)
            f[i * stride + k] = 0.0;
    }
}

#ifdef SS_X86_SIMD
#define SS_AVX2 __attribute__((target("avx2")))

/* 3D, rows of 4: one 256-bit load of a node's (vx, vy, vz) (and the next node's vx,
 * whose lane is then zeroed; the kernel pads its arrays, so the last load stays inside
 * the allocation), the same operations lane by lane, one store per row. */
SS_AVX2 static void node_forces_avx2_3d(const ss_system *sys, size_t first, size_t last,
                                        const double *v, double *f) {
    const double *mass = SS_DOUBLES(sys, SS_MASSES);
    const double *external =
        ss_array_absent(sys, SS_EXTERNAL) ? NULL : SS_DOUBLES(sys, SS_EXTERNAL);
    const __m256d g = _mm256_setr_pd(sys->gravity[0], sys->gravity[1], sys->gravity[2], 0.0);
    const __m256d wind = _mm256_setr_pd(sys->wind[0], sys->wind[1], sys->wind[2], 0.0);
    const __m256d drag = _mm256_set1_pd(sys->drag), zero = _mm256_setzero_pd();
    for (size_t i = first; i < last; i++) {
        const __m256d vi = _mm256_loadu_pd(v + 3 * i);
        const __m256d user = external ? _mm256_loadu_pd(external + 3 * i) : zero;
        const __m256d r = _mm256_add_pd(_mm256_sub_pd(_mm256_mul_pd(_mm256_set1_pd(mass[i]), g),
                                                      _mm256_mul_pd(drag, _mm256_sub_pd(vi, wind))),
                                        user);
        _mm256_storeu_pd(f + 4 * i, _mm256_blend_pd(r, zero, 0x8));
    }
}
#endif

void ss_node_forces(const ss_system *sys, size_t first, size_t last, const double *v, double *f,
                    size_t stride) {
    if (sys->dim == 3 && stride == 4) {
#ifdef SS_X86_SIMD
        if (ss_simd_get() != SS_SIMD_PORTABLE) {
            node_forces_avx2_3d(sys, first, last, v, f);
            return;
        }
#endif
        node_forces_dim(sys, first, last, v, f, 4, 3);
    } else if (sys->dim == 2 && stride == 2) {
        node_forces_dim(sys, first, last, v, f, 2, 2);
    } else {
        node_forces_dim(sys, first, last, v, f, stride, (size_t)sys->dim);
    }
}

/* ---- Symplectic Euler update ------------------------------------------- */

/* Nodes per chunk: their accelerations go into a buffer on the stack (in L1), then v
 * and x are updated by flat loops over the chunk's components, which vectorise. */
#define SS_UPDATE_CHUNK 128

/* a = f / m (0 if pinned) for nodes [start, end) into acc (flat, dim per node). */
SS_ALWAYS_INLINE void accelerations(const ss_system *sys, size_t start, size_t end,
                                    const double *restrict f, size_t stride, const size_t dim,
                                    double *restrict acc) {
    const double *restrict inv_mass = sys->scratch.plan->inv_mass;
    const uint8_t *restrict pinned = SS_BYTES(sys, SS_PINNED);
    for (size_t i = start; i < end; i++)
        for (size_t k = 0; k < dim; k++)
            acc[(i - start) * dim + k] = pinned[i] ? 0.0 : f[i * stride + k] * inv_mass[i];
}

/* Symplectic Euler for nodes [first, last) from their forces f. With save, x and v are
 * first copied out (the step's backup, taken as each node is first touched); with
 * check, the return is the finiteness probe: 0 * ((x s) s) + 0 * v summed is 0 exactly
 * when every value is finite (NaN otherwise), and, for s = sys->scratch.probe_scale, every
 * |coordinate| within the bound of the short calls' books (x s s overflows beyond it:
 * divergence.c; s = 1 bounds nothing). dim, save and check are constants in each
 * instance. */
SS_ALWAYS_INLINE double symplectic_dim(const ss_system *sys, size_t first, size_t last,
                                       const double *restrict f, size_t stride, double dt,
                                       double *restrict v, double *restrict x, const size_t dim,
                                       double *restrict save_x, double *restrict save_v,
                                       const int save, const int check) {
    const double scale = sys->scratch.probe_scale;
    double probe = 0.0, acc[SS_UPDATE_CHUNK * 3];
    for (size_t start = first; start < last; start += SS_UPDATE_CHUNK) {
        const size_t end = last - start < SS_UPDATE_CHUNK ? last : start + SS_UPDATE_CHUNK;
        accelerations(sys, start, end, f, stride, dim, acc);
        const size_t base = start * dim, count = (end - start) * dim;
        if (save)
            for (size_t j = 0; j < count; j++) {
                save_x[base + j] = x[base + j];
                save_v[base + j] = v[base + j];
            }
        for (size_t j = 0; j < count; j++) {
            const size_t ik = base + j;
            v[ik] = v[ik] + acc[j] * dt;
            x[ik] = x[ik] + v[ik] * dt;
            if (check)
                probe += 0.0 * ((x[ik] * scale) * scale) + 0.0 * v[ik];
        }
    }
    return probe;
}

/* Every instance the update needs, for one set of target options. */
#define SS_SYMPLECTIC_ALL(name, attributes)                                                        \
    attributes static double name(const ss_system *sys, size_t first, size_t last,                 \
                                  const double *f, size_t stride, double dt, double *v, double *x, \
                                  double *sx, double *sv, int check) {                             \
        if (sys->dim == 3 && stride == 4)                                                          \
            return sx ? (check                                                                     \
                             ? symplectic_dim(sys, first, last, f, 4, dt, v, x, 3, sx, sv, 1, 1)   \
                             : symplectic_dim(sys, first, last, f, 4, dt, v, x, 3, sx, sv, 1, 0))  \
                      : (check                                                                     \
                             ? symplectic_dim(sys, first, last, f, 4, dt, v, x, 3, sx, sv, 0, 1)   \
                             : symplectic_dim(sys, first, last, f, 4, dt, v, x, 3, sx, sv, 0, 0)); \
        return sx ? (check                                                                         \
                         ? symplectic_dim(sys, first, last, f, stride, dt, v, x, 2, sx, sv, 1, 1)  \
                         : symplectic_dim(sys, first, last, f, stride, dt, v, x, 2, sx, sv, 1, 0)) \
                  : (check                                                                         \
                         ? symplectic_dim(sys, first, last, f, stride, dt, v, x, 2, sx, sv, 0, 1)  \
                         : symplectic_dim(sys, first, last, f, stride, dt, v, x, 2, sx, sv, 0,     \
                                          0));                                                     \
    }

SS_SYMPLECTIC_ALL(symplectic_portable, )
#ifdef SS_X86_SIMD
/* The same code with 256-bit vectors for the flat loops (2D, and the 3D remainder). */
SS_SYMPLECTIC_ALL(symplectic_avx2_flat, SS_AVX2)

/* The accelerations of nodes i..i+3 (3D) from their force rows (fx, fy, fz, 0): times
 * 1/m, 0 when pinned, packed as x and v are laid out: (a0x a0y a0z a1x),
 * (a1y a1z a2x a2y), (a2z a3x a3y a3z). */
SS_AVX2 static inline void pack_accelerations_avx2(const double *f, const double *inv_mass,
                                                   const uint8_t *pinned, size_t i,
                                                   __m256d packed[3]) {
    __m256d a[4];
    for (int l = 0; l < 4; l++) {
        const __m256d row =
            _mm256_mul_pd(_mm256_loadu_pd(f + 4 * (i + l)), _mm256_set1_pd(inv_mass[i + l]));
        a[l] = pinned[i + l] ? _mm256_setzero_pd() : row;
    }
    packed[0] = _mm256_blend_pd(a[0], _mm256_permute4x64_pd(a[1], 0x00), 0x8);
    packed[1] =
        _mm256_blend_pd(_mm256_permute4x64_pd(a[1], 0x09), _mm256_permute4x64_pd(a[2], 0x40), 0xC);
    packed[2] =
        _mm256_blend_pd(_mm256_permute4x64_pd(a[2], 0x02), _mm256_permute4x64_pd(a[3], 0x90), 0xE);
}

SS_AVX2 static void accelerations_avx2_3d(const ss_force_rows *rows, size_t first, size_t last,
                                          double *acc) {
    size_t i = first;
    for (; i + 4 <= last; i += 4) {
        __m256d packed[3];
        pack_accelerations_avx2(rows->forces, rows->inv_mass, rows->pinned, i, packed);
        for (int q = 0; q < 3; q++)
            _mm256_storeu_pd(acc + 3 * (i - first) + 4 * (size_t)q, packed[q]);
    }
    for (; i < last; i++)
        for (size_t k = 0; k < 3; k++)
            acc[3 * (i - first) + k] =
                rows->pinned[i] ? 0.0 : rows->forces[4 * i + k] * rows->inv_mass[i];
}

/* 3D, 4 nodes at a time: their 12 components of x and of v are 3 full vectors; the 4
 * force rows (fx, fy, fz, 0), times 1/m (0 when pinned), are packed to match. */
SS_AVX2 static inline double symplectic_avx2_3d(const ss_system *sys, size_t first, size_t last,
                                                const double *f, double dt, double *v, double *x,
                                                double *sx, double *sv, const int save,
                                                const int check) {
    const double *inv_mass = sys->scratch.plan->inv_mass;
    const uint8_t *pinned = SS_BYTES(sys, SS_PINNED);
    const __m256d step = _mm256_set1_pd(dt), zero = _mm256_setzero_pd();
    const __m256d scale = _mm256_set1_pd(sys->scratch.probe_scale);
    __m256d probe = zero;
    size_t i = first;
    for (; i + 4 <= last; i += 4) {
        __m256d packed[3];
        pack_accelerations_avx2(f, inv_mass, pinned, i, packed);
        for (int q = 0; q < 3; q++) {
            double *vq = v + 3 * i + 4 * q, *xq = x + 3 * i + 4 * q;
            const __m256d v0 = _mm256_loadu_pd(vq), x0 = _mm256_loadu_pd(xq);
            if (save) {
                _mm256_storeu_pd(sv + 3 * i + 4 * q, v0);
                _mm256_storeu_pd(sx + 3 * i + 4 * q, x0);
            }
            const __m256d v1 = _mm256_add_pd(v0, _mm256_mul_pd(packed[q], step));
            const __m256d x1 = _mm256_add_pd(x0, _mm256_mul_pd(v1, step));
            _mm256_storeu_pd(vq, v1);
            _mm256_storeu_pd(xq, x1);
            if (check) {
                const __m256d scaled = _mm256_mul_pd(_mm256_mul_pd(x1, scale), scale);
                probe = _mm256_add_pd(
                    probe, _mm256_add_pd(_mm256_mul_pd(zero, scaled), _mm256_mul_pd(zero, v1)));
            }
        }
    }
    /* The lanes' sums in a fixed order: the probe is 0 or NaN, whatever the order. */
    double lanes[4];
    _mm256_storeu_pd(lanes, probe);
    double total = lanes[0] + lanes[1] + lanes[2] + lanes[3];
    if (i < last)
        total += symplectic_avx2_flat(sys, i, last, f, 4, dt, v, x, sx, sv, check);
    return total;
}

SS_AVX2 static double symplectic_avx2(const ss_system *sys, size_t first, size_t last,
                                      const double *f, size_t stride, double dt, double *v,
                                      double *x, double *sx, double *sv, int check) {
    if (sys->dim != 3 || stride != 4)
        return symplectic_avx2_flat(sys, first, last, f, stride, dt, v, x, sx, sv, check);
    return sx ? (check ? symplectic_avx2_3d(sys, first, last, f, dt, v, x, sx, sv, 1, 1)
                       : symplectic_avx2_3d(sys, first, last, f, dt, v, x, sx, sv, 1, 0))
              : (check ? symplectic_avx2_3d(sys, first, last, f, dt, v, x, sx, sv, 0, 1)
                       : symplectic_avx2_3d(sys, first, last, f, dt, v, x, sx, sv, 0, 0));
}
#endif

double ss_node_symplectic(const ss_system *sys, size_t first, size_t last, const double *f,
                          size_t stride, double dt, double *v, double *x, double *save_x,
                          double *save_v, int check) {
#ifdef SS_X86_SIMD
    if (ss_simd_get() != SS_SIMD_PORTABLE)
        return symplectic_avx2(sys, first, last, f, stride, dt, v, x, save_x, save_v, check);
#endif
    return symplectic_portable(sys, first, last, f, stride, dt, v, x, save_x, save_v, check);
}

void ss_node_accelerations(const ss_force_rows *rows, size_t first, size_t last, size_t dim,
                           double *acc) {
#ifdef SS_X86_SIMD
    if (dim == 3 && rows->stride == 4 && ss_simd_get() != SS_SIMD_PORTABLE) {
        accelerations_avx2_3d(rows, first, last, acc);
        return;
    }
#endif
    for (size_t i = first; i < last; i++)
        for (size_t k = 0; k < dim; k++)
            acc[(i - first) * dim + k] =
                rows->pinned[i] ? 0.0 : rows->forces[i * rows->stride + k] * rows->inv_mass[i];
}
