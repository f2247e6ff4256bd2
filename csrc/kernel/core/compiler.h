/* compiler.h - the few spellings that differ between the compilers the wheels are
 * built with (GCC, clang, MSVC); every kernel file gets them through springsim.h. */
#ifndef SPRINGSIM_COMPILER_H
#define SPRINGSIM_COMPILER_H

/* Compiler spellings. GCC and clang (Linux, macOS) use GNU attributes; MSVC has
 * __forceinline, and takes `restrict` only in its C11 mode (/std:c11), else __restrict.
 * (The AVX2/AVX-512 paths and __builtin_cpu_supports are built only under __GNUC__:
 * other compilers build the portable path, which gives the same bits.) */
#if defined(__GNUC__)
#define SS_ALWAYS_INLINE static inline __attribute__((always_inline))
#elif defined(_MSC_VER)
#define SS_ALWAYS_INLINE static __forceinline
#else
#define SS_ALWAYS_INLINE static inline
#endif
#if defined(_MSC_VER) && !defined(__clang__) &&                                                    \
    (!defined(__STDC_VERSION__) || __STDC_VERSION__ < 199901L)
#define restrict __restrict
#endif

#endif /* SPRINGSIM_COMPILER_H */
