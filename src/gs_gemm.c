#ifndef GS__FN /* standalone builds (bench, tests) may pre-define GS__FN + the std headers */
#include "gs_internal.h"
#endif

/* ==========================================================================================
 * gs_gemm.c -- single-threaded f32 GEMM:  C[M,N] = (accumulate ? C : 0) + A[M,K] * B[K,N]
 *
 * GotoBLAS/BLIS-style structure (the kernels are in gs_gemm_kernel.inc):
 *   for jc in N step NC:                 (B panel  KC x NC lives in L2/L3)
 *     for pc in K step KC:   pack B      (micro-panels of NR columns, zero padded)
 *       for ic in M step MC: pack A      (micro-panels of MR rows, zero padded; lives in L2)
 *         for jr in NC step NR:
 *           for ir in MC step MR: micro-kernel  MR x NR register tile, k-loop over KC
 * Edge tiles are computed in full on the zero-padded panels and written back masked.
 *
 * One instance of the kernels per instruction set, each with its own register tile (block sizes KC/MC/NC tuned
 * on an AVX-512 EPYC):
 *   avx512 : 8 x 32   (16 zmm accumulators, FMA),                     KC 1024 MC 96 NC 1024
 *   avx2   : 6 x 16   (12 ymm accumulators, FMA; "avx" without FMA),   KC 512  MC 96 NC 2048
 *   sse2   : 6 x 8    (12 xmm accumulators; A packed pre-broadcast on x86, 8 x 8 on aarch64 as "vec4")
 *   scalar : 4 x 16   plain-C loops (the compiler may auto-vectorise them for the build's own flags)
 * Run-time choice: with GCC or Clang on x86-64 the header compiles all four (function target attributes, so a
 * plain `cc -O2` build carries the AVX2 and AVX-512 kernels) and picks once, at the first call, the widest the
 * CPU runs (__builtin_cpu_supports). The environment variable GSHARD_ISA=scalar|sse2|avx2|avx512 forces a path
 * (for these kernels and the vector kernels of gs_simd.c); a path this build or this CPU cannot run falls back to
 * the best available one, and gs_ctx_create logs a GS_LOG_WARN saying so; a name that is no instruction set
 * makes gs_ctx_create fail (GS_ERR_INVALID_ARG, logged as an error) and gs_isa_path report it. The choice is cached with relaxed atomics (any two
 * threads that race to set it compute the same value).
 * GSHARD_NO_ISA_DISPATCH (or another compiler or architecture) compiles two instances: scalar and the one the
 * compiler's flags allow (as before: -march=native picks avx2/avx512). GS_GEMM_PORTABLE keeps only scalar.
 * FMA is used through intrinsics so that gcc's -std=c99 (which turns off FP contraction) still fuses.
 *
 * Every path is deterministic (fixed blocking, fixed summation order per path). Paths differ in rounding: FMA
 * rounds once per step, the block size KC splits the k-sum differently, the small-shape kernels sum in vector
 * lanes. So two paths agree within the forward-error bound of a K-term dot product, |x - y| <= 2 K u sum|a b|
 * (u = 2^-24); paths with the same KC and no FMA on either side (sse2, and scalar built without FMA contraction)
 * or both with FMA (avx2, avx512 for K <= 512) agree exactly on the packed path (M > 16, N > NR/4).
 *
 * Degenerate / skinny shapes: M == 0 or N == 0 -> nothing; K == 0 -> C = accumulate ? C : 0;
 * M == 1 -> axpy over B rows; M <= 16 -> unpacked kernel on groups of <= 4 rows (packing B would cost
 * as much as the math); N <= NR/4 -> dot products against packed columns of B (no padding waste).
 * ========================================================================================== */

#include "gs_isa.h"

static int64_t gs__gemm_min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t gs__gemm_rup(int64_t a, int64_t m) { return (a + m - 1) / m * m; }

/* ---------------------------------------------------------------- the instances */

#define GS__GK_KIND GS__ISA_SCALAR
#define GS__GK_SFX scalar
#define GS__GK_TARGET
#include "gs_gemm_kernel.inc"

#if GS__GEMM_DISPATCH
#define GS__GK_KIND GS__ISA_SSE2
#define GS__GK_SFX sse2
#define GS__GK_TARGET __attribute__((target("sse2")))
#include "gs_gemm_kernel.inc"

#define GS__GK_KIND GS__ISA_AVX2
#define GS__GK_SFX avx2
#define GS__GK_TARGET __attribute__((target("avx2,fma")))
#include "gs_gemm_kernel.inc"

#define GS__GK_KIND GS__ISA_AVX512
#define GS__GK_SFX avx512
#define GS__GK_TARGET __attribute__((target("avx512f,avx2,fma")))
#include "gs_gemm_kernel.inc"
#elif GS__GEMM_NATIVE != GS__ISA_SCALAR
#define GS__GK_KIND GS__GEMM_NATIVE
#define GS__GK_SFX native
#define GS__GK_TARGET
#include "gs_gemm_kernel.inc"
#endif

/* ---------------------------------------------------------------- choosing a path */

GS__FN const char *gs__gemm_isa_name(int isa)
{
    static const char *const names[GS__ISA_COUNT] = {"scalar", "sse2", "avx2", "avx512", "avx", "vec4"};
    return isa >= 0 && isa < GS__ISA_COUNT ? names[isa] : "unknown";
}

/* 1 if this build holds the path and this CPU runs it */
GS__FN int gs__gemm_isa_available(int isa)
{
    if (isa == GS__ISA_SCALAR) return 1;
#if GS__GEMM_DISPATCH
    switch (isa) {
    case GS__ISA_SSE2: return __builtin_cpu_supports("sse2") != 0;
    case GS__ISA_AVX2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case GS__ISA_AVX512:
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    default: return 0;
    }
#else
    return isa == GS__GEMM_NATIVE;
#endif
}

/* the widest path available */
GS__FN int gs__gemm_isa_best(void)
{
    static const int order[] = {GS__ISA_AVX512, GS__ISA_AVX2, GS__ISA_AVX, GS__ISA_SSE2, GS__ISA_VEC4};
    size_t i;
    for (i = 0; i < sizeof order / sizeof order[0]; i++)
        if (gs__gemm_isa_available(order[i])) return order[i];
    return GS__ISA_SCALAR;
}

/* The path GSHARD_ISA asks for and whether it can be had: returns the path to use; *why is NULL when the
   request (or its absence) is honoured, else says what went wrong (unknown name / not available). */
GS__FN int gs__gemm_isa_request(const char **why)
{
    const char *env = getenv("GSHARD_ISA");
    int isa;
    *why = NULL;
    if (!env || !*env) return gs__gemm_isa_best();
    for (isa = 0; isa < GS__ISA_COUNT; isa++)
        if (strcmp(env, gs__gemm_isa_name(isa)) == 0) break;
    if (isa == GS__ISA_COUNT) {
        *why = "unknown instruction set (expected scalar, sse2, avx2 or avx512)";
        return gs__gemm_isa_best();
    }
    if (!gs__gemm_isa_available(isa)) {
        *why = GS__GEMM_DISPATCH ? "this CPU cannot run it" : "this build does not hold it";
        return gs__gemm_isa_best();
    }
    return isa;
}

/* The path in use, chosen at the first call and kept for the life of the process. */
GS__FN int gs__gemm_isa(void)
{
#if defined(__GNUC__)
    static int chosen = 0; /* path + 1; 0 = not chosen yet */
    int v = __atomic_load_n(&chosen, __ATOMIC_RELAXED);
    if (v == 0) {
        const char *why;
        v = gs__gemm_isa_request(&why) + 1;
        __atomic_store_n(&chosen, v, __ATOMIC_RELAXED);
    }
    return v - 1;
#else
    const char *why; /* no portable atomics in C99: ask again (a getenv per product) */
    return gs__gemm_isa_request(&why);
#endif
}

/* Writes why a GSHARD_ISA cannot be honoured into buf; returns 0 when it is (or is not set), 1 when it names a
   path this build or CPU does not run, 2 when it names no instruction set (the kernels use the widest path). */
GS__FN int gs__gemm_isa_warning(char *buf, size_t cap)
{
    const char *why;
    int isa = gs__gemm_isa_request(&why);
    if (!why) return 0;
    snprintf(buf, cap, "GSHARD_ISA=%s: %s; the kernels use %s", getenv("GSHARD_ISA"), why, gs__gemm_isa_name(isa));
    return why[0] == 'u' ? 2 : 1; /* "unknown instruction set ..." */
}

/* ---------------------------------------------------------------- entry points */

GS__FN size_t gs__sgemm_work_floats(int64_t M, int64_t N, int64_t K)
{
    /* the largest need of any instance, so a buffer fits whichever path runs */
    size_t w = gs__sgemm_work_floats_scalar(M, N, K);
#if GS__GEMM_DISPATCH
    w = w > gs__sgemm_work_floats_sse2(M, N, K) ? w : gs__sgemm_work_floats_sse2(M, N, K);
    w = w > gs__sgemm_work_floats_avx2(M, N, K) ? w : gs__sgemm_work_floats_avx2(M, N, K);
    w = w > gs__sgemm_work_floats_avx512(M, N, K) ? w : gs__sgemm_work_floats_avx512(M, N, K);
#elif GS__GEMM_NATIVE != GS__ISA_SCALAR
    w = w > gs__sgemm_work_floats_native(M, N, K) ? w : gs__sgemm_work_floats_native(M, N, K);
#endif
    return w;
}

/* The product on one given path (work: gs__sgemm_work_floats floats); returns 0, or -1 (and does nothing) when
   the path is not available. */
GS__FN int gs__sgemm_isa(int isa, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
                         int64_t ldb, float *C, int64_t ldc, int accumulate, float *work)
{
    if (!gs__gemm_isa_available(isa)) return -1;
#if GS__GEMM_DISPATCH
    switch (isa) {
    case GS__ISA_SSE2: gs__sgemm_sse2(M, N, K, A, lda, B, ldb, C, ldc, accumulate, work); return 0;
    case GS__ISA_AVX2: gs__sgemm_avx2(M, N, K, A, lda, B, ldb, C, ldc, accumulate, work); return 0;
    case GS__ISA_AVX512: gs__sgemm_avx512(M, N, K, A, lda, B, ldb, C, ldc, accumulate, work); return 0;
    default: break;
    }
#elif GS__GEMM_NATIVE != GS__ISA_SCALAR
    if (isa == GS__GEMM_NATIVE) {
        gs__sgemm_native(M, N, K, A, lda, B, ldb, C, ldc, accumulate, work);
        return 0;
    }
#endif
    gs__sgemm_scalar(M, N, K, A, lda, B, ldb, C, ldc, accumulate, work);
    return 0;
}

GS__FN void gs__sgemm(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B, int64_t ldb,
                      float *C, int64_t ldc, int accumulate, float *work)
{
    (void)gs__sgemm_isa(gs__gemm_isa(), M, N, K, A, lda, B, ldb, C, ldc, accumulate, work);
}
