/* spring_pass.c - the spring force loop, in a portable path and in AVX2 and AVX-512
 * paths chosen at run time from the CPU (SPRINGSIM_SIMD can force one).
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
 * nodes one spring at a time in index order. So every path gives the same bits. The
 * SIMD paths compute 4 or 8 springs at once (gathering their ends' x and v) and then
 * add those springs' forces in order, lane by lane. */
#include "springsim.h"

#include <math.h>
#include <string.h>

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define SS_X86_SIMD 1
#include <immintrin.h>
#endif

#define SS_MIN_SPRING_LENGTH2 (SS_MIN_SPRING_LENGTH * SS_MIN_SPRING_LENGTH)

/* ---- Portable ---------------------------------------------------------- */

/* The force on node i of spring s, into F[0..dim); 0 when the spring is too short to
 * have a direction (the caller then adds nothing). */
static inline int spring_force(const ss_spring_view *sv, size_t s, const int dim, double F[3]) {
    const size_t i = (size_t)sv->pairs[2 * s] * (size_t)dim;
    const size_t j = (size_t)sv->pairs[2 * s + 1] * (size_t)dim;
    const double *x = sv->x, *v = sv->v;
    const double d0 = x[j] - x[i], d1 = x[j + 1] - x[i + 1];
    const double d2 = dim == 3 ? x[j + 2] - x[i + 2] : 0.0;
    const double l2 = dim == 3 ? (d0 * d0 + d1 * d1) + d2 * d2 : d0 * d0 + d1 * d1;
    if (l2 < SS_MIN_SPRING_LENGTH2)
        return 0;
    const double inv = 1.0 / sqrt(l2), length = l2 * inv;
    const double u0 = d0 * inv, u1 = d1 * inv, u2 = d2 * inv;
    double closing = (v[j] - v[i]) * u0 + (v[j + 1] - v[i + 1]) * u1;
    if (dim == 3)
        closing = closing + (v[j + 2] - v[i + 2]) * u2;
    const double magnitude = sv->stiffness[s] * (length - sv->rest[s]) + sv->damping[s] * closing;
    F[0] = magnitude * u0;
    F[1] = magnitude * u1;
    F[2] = magnitude * u2;
    return 1;
}

static inline void scatter_one(const int32_t *pairs, size_t s, const int dim, const double F[3],
                               double *f) {
    const size_t i = (size_t)pairs[2 * s] * (size_t)dim, j = (size_t)pairs[2 * s + 1] * (size_t)dim;
    for (int k = 0; k < dim; k++) {
        f[i + k] += F[k];
        f[j + k] -= F[k];
    }
}

static void scatter_portable(const ss_spring_view *sv, int dim, size_t first, size_t last,
                             double *f) {
    double F[3];
    if (dim == 3) {
        for (size_t s = first; s < last; s++)
            if (spring_force(sv, s, 3, F))
                scatter_one(sv->pairs, s, 3, F, f);
    } else {
        for (size_t s = first; s < last; s++)
            if (spring_force(sv, s, 2, F))
                scatter_one(sv->pairs, s, 2, F, f);
    }
}

void ss_springs_forces(const ss_spring_view *sv, int dim, const int32_t *index, size_t count,
                       double *out) {
    /* Few springs (those between blocks): the portable path, the same bits. */
    const size_t width = (size_t)dim + 1;
    for (size_t q = 0; q < count; q++) {
        double F[3] = {0.0, 0.0, 0.0};
        const int valid = spring_force(sv, (size_t)index[q], dim, F);
        memcpy(out + q * width, F, (size_t)dim * sizeof(double));
        out[q * width + (size_t)dim] = valid;
    }
}

#ifdef SS_X86_SIMD

/* ---- AVX2: 4 springs at a time ----------------------------------------- */

/* The loop for a fixed dim (inlined into scatter_avx2 with dim = 2 and 3, so that
 * the loops over components unroll). */
__attribute__((target("avx2"), always_inline)) static inline void
scatter_avx2_dim(const ss_spring_view *sv, const int dim, size_t first, size_t last, double *f) {
    const double *x = sv->x, *v = sv->v;
    const __m256d one = _mm256_set1_pd(1.0), shortest = _mm256_set1_pd(SS_MIN_SPRING_LENGTH2);
    const __m256i evens = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    const __m128i width = _mm_set1_epi32(dim);
    double F[3][4] __attribute__((aligned(32)));
    size_t s = first;
    for (; s + 4 <= last; s += 4) {
        const __m256i pairs = _mm256_permutevar8x32_epi32(
            _mm256_loadu_si256((const __m256i *)(sv->pairs + 2 * s)), evens);
        const __m128i i = _mm_mullo_epi32(_mm256_castsi256_si128(pairs), width);
        const __m128i j = _mm_mullo_epi32(_mm256_extracti128_si256(pairs, 1), width);
        __m256d d[3] = {one, one, one}, dv[3] = {one, one, one};
        for (int k = 0; k < dim; k++) {
            d[k] =
                _mm256_sub_pd(_mm256_i32gather_pd(x + k, j, 8), _mm256_i32gather_pd(x + k, i, 8));
            dv[k] =
                _mm256_sub_pd(_mm256_i32gather_pd(v + k, j, 8), _mm256_i32gather_pd(v + k, i, 8));
        }
        __m256d l2 = _mm256_add_pd(_mm256_mul_pd(d[0], d[0]), _mm256_mul_pd(d[1], d[1]));
        if (dim == 3)
            l2 = _mm256_add_pd(l2, _mm256_mul_pd(d[2], d[2]));
        const int valid = _mm256_movemask_pd(_mm256_cmp_pd(l2, shortest, _CMP_NLT_UQ));
        const __m256d inv = _mm256_div_pd(one, _mm256_sqrt_pd(l2));
        const __m256d length = _mm256_mul_pd(l2, inv);
        __m256d u[3] = {one, one, one};
        for (int k = 0; k < dim; k++)
            u[k] = _mm256_mul_pd(d[k], inv);
        __m256d closing = _mm256_add_pd(_mm256_mul_pd(dv[0], u[0]), _mm256_mul_pd(dv[1], u[1]));
        if (dim == 3)
            closing = _mm256_add_pd(closing, _mm256_mul_pd(dv[2], u[2]));
        const __m256d stretch = _mm256_sub_pd(length, _mm256_loadu_pd(sv->rest + s));
        const __m256d magnitude =
            _mm256_add_pd(_mm256_mul_pd(_mm256_loadu_pd(sv->stiffness + s), stretch),
                          _mm256_mul_pd(_mm256_loadu_pd(sv->damping + s), closing));
        for (int k = 0; k < dim; k++)
            _mm256_store_pd(F[k], _mm256_mul_pd(magnitude, u[k]));
        for (int lane = 0; lane < 4; lane++) {
            if (!(valid >> lane & 1))
                continue;
            const double G[3] = {F[0][lane], F[1][lane], dim == 3 ? F[2][lane] : 0.0};
            scatter_one(sv->pairs, s + (size_t)lane, dim, G, f);
        }
    }
    scatter_portable(sv, dim, s, last, f);
}

__attribute__((target("avx2"))) static void scatter_avx2(const ss_spring_view *sv, int dim,
                                                         size_t first, size_t last, double *f) {
    if (dim == 3)
        scatter_avx2_dim(sv, 3, first, last, f);
    else
        scatter_avx2_dim(sv, 2, first, last, f);
}

/* ---- AVX-512: 8 springs at a time -------------------------------------- */

__attribute__((target("avx512f"), always_inline)) static inline void
scatter_avx512_dim(const ss_spring_view *sv, const int dim, size_t first, size_t last, double *f) {
    const double *x = sv->x, *v = sv->v;
    const __m512d one = _mm512_set1_pd(1.0), shortest = _mm512_set1_pd(SS_MIN_SPRING_LENGTH2);
    const __m256i width = _mm256_set1_epi32(dim);
    double F[3][8] __attribute__((aligned(64)));
    size_t s = first;
    for (; s + 8 <= last; s += 8) {
        /* 8 pairs (i, j) of int32 as 8 int64 lanes: i in the low half, j in the high. */
        const __m512i pairs = _mm512_loadu_si512((const void *)(sv->pairs + 2 * s));
        const __m256i i = _mm256_mullo_epi32(_mm512_cvtepi64_epi32(pairs), width);
        const __m256i j =
            _mm256_mullo_epi32(_mm512_cvtepi64_epi32(_mm512_srli_epi64(pairs, 32)), width);
        __m512d d[3] = {one, one, one}, dv[3] = {one, one, one};
        for (int k = 0; k < dim; k++) {
            d[k] =
                _mm512_sub_pd(_mm512_i32gather_pd(j, x + k, 8), _mm512_i32gather_pd(i, x + k, 8));
            dv[k] =
                _mm512_sub_pd(_mm512_i32gather_pd(j, v + k, 8), _mm512_i32gather_pd(i, v + k, 8));
        }
        __m512d l2 = _mm512_add_pd(_mm512_mul_pd(d[0], d[0]), _mm512_mul_pd(d[1], d[1]));
        if (dim == 3)
            l2 = _mm512_add_pd(l2, _mm512_mul_pd(d[2], d[2]));
        const __mmask8 valid = _mm512_cmp_pd_mask(l2, shortest, _CMP_NLT_UQ);
        const __m512d inv = _mm512_div_pd(one, _mm512_sqrt_pd(l2));
        const __m512d length = _mm512_mul_pd(l2, inv);
        __m512d u[3] = {one, one, one};
        for (int k = 0; k < dim; k++)
            u[k] = _mm512_mul_pd(d[k], inv);
        __m512d closing = _mm512_add_pd(_mm512_mul_pd(dv[0], u[0]), _mm512_mul_pd(dv[1], u[1]));
        if (dim == 3)
            closing = _mm512_add_pd(closing, _mm512_mul_pd(dv[2], u[2]));
        const __m512d stretch = _mm512_sub_pd(length, _mm512_loadu_pd(sv->rest + s));
        const __m512d magnitude =
            _mm512_add_pd(_mm512_mul_pd(_mm512_loadu_pd(sv->stiffness + s), stretch),
                          _mm512_mul_pd(_mm512_loadu_pd(sv->damping + s), closing));
        for (int k = 0; k < dim; k++)
            _mm512_store_pd(F[k], _mm512_mul_pd(magnitude, u[k]));
        for (int lane = 0; lane < 8; lane++) {
            if (!(valid >> lane & 1))
                continue;
            const double G[3] = {F[0][lane], F[1][lane], dim == 3 ? F[2][lane] : 0.0};
            scatter_one(sv->pairs, s + (size_t)lane, dim, G, f);
        }
    }
    scatter_portable(sv, dim, s, last, f);
}

__attribute__((target("avx512f"))) static void
scatter_avx512(const ss_spring_view *sv, int dim, size_t first, size_t last, double *f) {
    if (dim == 3)
        scatter_avx512_dim(sv, 3, first, last, f);
    else
        scatter_avx512_dim(sv, 2, first, last, f);
}

#endif /* SS_X86_SIMD */

/* ---- Choosing a path --------------------------------------------------- */

typedef void (*scatter_fn)(const ss_spring_view *, int, size_t, size_t, double *);

static const char *const path_names[SS_SIMD_COUNT] = {"portable", "avx2", "avx512"};
static int chosen = -1; /* -1: not chosen yet */

const char *ss_simd_name(int path) {
    return path >= 0 && path < SS_SIMD_COUNT ? path_names[path] : NULL;
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

int ss_simd_best(void) {
    for (int path = SS_SIMD_COUNT - 1; path > 0; path--)
        if (ss_simd_available(path))
            return path;
    return SS_SIMD_PORTABLE;
}

int ss_simd_set(int path) {
    if (!ss_simd_available(path))
        return -1;
    chosen = path;
    return path;
}

int ss_simd_get(void) {
    if (chosen < 0)
        chosen = ss_simd_best();
    return chosen;
}

void ss_springs_scatter(const ss_spring_view *sv, int dim, size_t first, size_t last, double *f) {
    scatter_fn fn = scatter_portable;
#ifdef SS_X86_SIMD
    /* The gathers take int32 offsets: node * dim must fit (2^31 / 3 nodes is 17 GB of
     * positions, so this only guards the arithmetic). */
    if (sv->num_nodes < (size_t)INT32_MAX / 3) {
        const int path = ss_simd_get();
        fn = path == SS_SIMD_AVX512 ? scatter_avx512 : path == SS_SIMD_AVX2 ? scatter_avx2 : fn;
    }
#endif
    fn(sv, dim, first, last, f);
}
