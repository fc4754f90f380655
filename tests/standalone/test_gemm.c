/* Standalone randomised correctness test for gs__sgemm (src/gs_gemm.c).
 *
 *   cc -std=c99 -O2 -Wall -Wextra -I. tests/standalone/test_gemm.c -o build/test_gemm -lm
 *   cc -std=c99 -O1 -g -fsanitize=address,undefined -I. tests/standalone/test_gemm.c -o build/test_gemm_asan -lm
 *
 * Compares against a naive double-accumulated triple loop over many shapes (0/1 sizes, non-multiples of
 * the register tile, sizes crossing the cache-block boundaries), padded leading dimensions, accumulate=0/1
 * (C pre-filled with NaN for accumulate=0: the result must not contain NaN). The work buffer is allocated
 * with exactly gs__sgemm_work_floats() floats at a deliberately misaligned address so that ASan/valgrind
 * catch overruns. Every instruction-set path this machine runs (scalar, sse2, avx2, avx512: gs__sgemm_isa) is
 * checked against the naive loop and against the scalar path: within 2 (K+1) u (|C0| + sum_k |a b|), u = 2^-24
 * (the forward-error bound of a (K+1)-term sum, twice), and bit for bit where the summation order is the same
 * (see gs_gemm.c: sse2 vs scalar built without FMA, avx2 vs avx512 for K <= 512, both on the packed path).
 * Prints "N passed, N failed"; exit status 1 on any failure.
 * Later this is folded into the main suite (use -DTEST_USE_GSHARD_H to go through gshard.h). */
#include <math.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef TEST_USE_GSHARD_H
#define GSHARD_IMPLEMENTATION
#include "gshard.h"
#else
#ifndef GS__FN
#if defined(__GNUC__)
#define GS__FN static __attribute__((unused))
#else
#define GS__FN static
#endif
#endif
#include "../../src/gs_gemm.c"
#endif

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rng_u32(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 32);
}
static float rng_f(void) { return (float)((double)rng_u32() / 4294967296.0 * 2.0 - 1.0); }
static int64_t rng_range(int64_t lo, int64_t hi) { return lo + (int64_t)(rng_u32() % (uint32_t)(hi - lo + 1)); }

static int n_pass = 0, n_fail = 0;

/* the result of the last case on each path (compared with the scalar path's) */
static float *path_out[GS__ISA_COUNT];

static int run_case_isa(int isa, int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb, int64_t ldc,
                        int accumulate)
{
    /* allocate at least one element so pointers are valid even for empty matrices */
    size_t na = (size_t)(M > 0 ? (M - 1) * lda + K : 0) + 1;
    size_t nb = (size_t)(K > 0 ? (K - 1) * ldb + N : 0) + 1;
    size_t nc = (size_t)(M > 0 ? (M - 1) * ldc + N : 0) + 1;
    size_t nw = gs__sgemm_work_floats(M, N, K);
    float *A = (float *)malloc(na * sizeof(float));
    float *B = (float *)malloc(nb * sizeof(float));
    float *C = (float *)malloc(nc * sizeof(float));
    float *C0 = (float *)malloc(nc * sizeof(float));
    /* work: exact size, offset by 1 float from malloc's alignment -> misaligned */
    float *wraw = (float *)malloc((nw + 1) * sizeof(float));
    float *work = nw ? wraw + 1 : NULL;
    double maxerr = 0.0;
    int bad = 0;
    size_t t;
    int64_t i, j, k;
    const float nanv = (float)NAN;

    if (!A || !B || !C || !C0 || !wraw) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    for (t = 0; t < na; t++) A[t] = rng_f();
    for (t = 0; t < nb; t++) B[t] = rng_f();
    for (t = 0; t < nc; t++) C[t] = accumulate ? rng_f() : nanv;
    /* padding (between rows, beyond N) gets a sentinel to detect stray writes */
    for (i = 0; i < M; i++)
        for (j = N; j < ldc && (size_t)(i * ldc + j) < nc; j++) C[i * ldc + j] = 12345.0f;
    memcpy(C0, C, nc * sizeof(float));

    if (isa < 0) gs__sgemm(M, N, K, A, lda, B, ldb, C, ldc, accumulate, work);
    else if (gs__sgemm_isa(isa, M, N, K, A, lda, B, ldb, C, ldc, accumulate, work) != 0) bad = 1;

    for (i = 0; i < M; i++) {
        for (j = 0; j < ldc && (size_t)(i * ldc + j) < nc; j++) {
            float got = C[i * ldc + j];
            if (j >= N) {
                if (memcmp(&got, &C0[i * ldc + j], sizeof got) != 0) bad = 1; /* wrote outside the tile */
                continue;
            }
            {
                double ref = accumulate ? (double)C0[i * ldc + j] : 0.0, mag = fabs(ref), err;
                for (k = 0; k < K; k++) {
                    ref += (double)A[i * lda + k] * (double)B[k * ldb + j];
                    mag += fabs((double)A[i * lda + k] * (double)B[k * ldb + j]);
                }
                if (got != got) {
                    bad = 1;
                    continue;
                }
                err = fabs((double)got - ref) / (mag + 1e-30);
                if (err > maxerr) maxerr = err;
            }
        }
    }
    /* allclose-style: |got-ref| <= tol * sum|a*b| ; f32 accumulation of K terms */
    if (maxerr > 1e-5 * (1.0 + sqrt((double)K))) bad = 1;
    if (M == 0 && nc > 0 && memcmp(C, C0, nc * sizeof(float)) != 0) bad = 1;

    /* against the scalar path (run first, same seed): the error bound, or equality where the order is the same */
    if (isa > GS__ISA_SCALAR && path_out[GS__ISA_SCALAR]) {
        const float *S = path_out[GS__ISA_SCALAR];
        const double u = 1.0 / 16777216.0;
        const int packed = M > 16 && N > 8; /* every path takes the packed micro-kernel */
#if !defined(__FMA__)
        const int exact_scalar = packed && isa == GS__ISA_SSE2; /* same KC, no FMA on either side */
#else
        const int exact_scalar = 0; /* the scalar loops may be contracted to FMA by the build's flags */
#endif
        const int exact_avx = packed && K <= 512 && isa == GS__ISA_AVX512 && path_out[GS__ISA_AVX2];
        const float *X = exact_avx ? path_out[GS__ISA_AVX2] : S;
        for (i = 0; i < M; i++)
            for (j = 0; j < N; j++) {
                const float got = C[i * ldc + j], want = X[i * ldc + j];
                double mag = accumulate ? fabs((double)C0[i * ldc + j]) : 0.0;
                for (k = 0; k < K; k++) mag += fabs((double)A[i * lda + k] * (double)B[k * ldb + j]);
                if (exact_scalar || exact_avx) {
                    if (memcmp(&got, &want, sizeof got) != 0) bad = 1;
                } else if (fabs((double)got - (double)S[i * ldc + j]) > 2.0 * (double)(K + 1) * u * mag) {
                    bad = 1;
                }
            }
    }
    if (isa >= 0) {
        free(path_out[isa]);
        path_out[isa] = (float *)malloc(nc * sizeof(float));
        if (!path_out[isa]) {
            fprintf(stderr, "out of memory\n");
            exit(2);
        }
        memcpy(path_out[isa], C, nc * sizeof(float));
    }

    if (bad) {
        n_fail++;
        printf("FAIL isa=%s M=%lld N=%lld K=%lld lda=%lld ldb=%lld ldc=%lld acc=%d maxrelerr=%.3g\n", isa < 0 ? "default" : gs__gemm_isa_name(isa),
               (long long)M, (long long)N, (long long)K, (long long)lda, (long long)ldb, (long long)ldc, accumulate, maxerr);
    } else {
        n_pass++;
    }
    free(A);
    free(B);
    free(C);
    free(C0);
    free(wraw);
    return !bad;
}

/* one case on the default path and on every path this machine runs, all with the same inputs */
static void run_case(int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb, int64_t ldc, int accumulate)
{
    const uint64_t seed = rng_state;
    int isa;
    for (isa = -1; isa < GS__ISA_COUNT; isa++) {
        if (isa >= 0 && !gs__gemm_isa_available(isa)) continue;
        rng_state = seed;
        run_case_isa(isa, M, N, K, lda, ldb, ldc, accumulate);
    }
    for (isa = 0; isa < GS__ISA_COUNT; isa++) {
        free(path_out[isa]);
        path_out[isa] = NULL;
    }
}

static void run_shape(int64_t M, int64_t N, int64_t K)
{
    int acc;
    for (acc = 0; acc <= 1; acc++) {
        run_case(M, N, K, K, N, N, acc);                                               /* tight */
        run_case(M, N, K, K + rng_range(1, 9), N + rng_range(1, 9), N + rng_range(1, 9), acc); /* padded */
    }
}

int main(int argc, char **argv)
{
    static const int64_t small[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 31, 32, 33};
    const int ns = (int)(sizeof small / sizeof small[0]);
    int a, b, c, r, isa, nrand = argc > 1 ? atoi(argv[1]) : 150;

    printf("paths:");
    for (isa = 0; isa < GS__ISA_COUNT; isa++)
        if (gs__gemm_isa_available(isa)) printf(" %s%s", gs__gemm_isa_name(isa), isa == gs__gemm_isa() ? "*" : "");
    printf("  (* = in use)\n");
    /* GSHARD_ISA, when it names a path this machine runs, is the one in use */
    {
        const char *env = getenv("GSHARD_ISA");
        if (env && *env) {
            int want = -1;
            for (isa = 0; isa < GS__ISA_COUNT; isa++)
                if (strcmp(env, gs__gemm_isa_name(isa)) == 0) want = isa;
            if (want >= 0 && gs__gemm_isa_available(want) && gs__gemm_isa() != want) {
                printf("FAIL GSHARD_ISA=%s but the path in use is %s\n", env, gs__gemm_isa_name(gs__gemm_isa()));
                n_fail++;
            }
            if (want < 0 || !gs__gemm_isa_available(want)) { /* documented fallback: the widest path */
                static const int widest_first[] = {GS__ISA_AVX512, GS__ISA_AVX2, GS__ISA_AVX, GS__ISA_SSE2,
                                                   GS__ISA_VEC4, GS__ISA_SCALAR};
                for (r = 0; !gs__gemm_isa_available(widest_first[r]); r++) continue;
                isa = widest_first[r];
                if (gs__gemm_isa() != isa) {
                    printf("FAIL GSHARD_ISA=%s cannot be honoured, but the path in use is %s, not %s\n", env,
                           gs__gemm_isa_name(gs__gemm_isa()), gs__gemm_isa_name(isa));
                    n_fail++;
                }
            }
        }
    }

    /* exhaustive small grid (covers 0/1 sizes, small-M / small-N paths and all tile edges) */
    for (a = 0; a < ns; a++)
        for (b = 0; b < ns; b++)
            for (c = 0; c < ns; c += 3) run_shape(small[a], small[b], small[c]);

    /* shapes straddling block boundaries (KC 256/512/1024, MC 96, NC 1024/2048, MR 4/6/8, NR 8/16/32) */
    run_shape(97, 33, 257);
    run_shape(95, 65, 385);
    run_shape(193, 47, 769);
    run_shape(100, 3100, 20);
    run_shape(7, 2049, 5);
    run_shape(3, 100, 300);
    run_shape(1, 5000, 37);
    run_shape(300, 1, 1000);
    run_shape(129, 4, 600);
    run_shape(127, 129, 131);
    run_shape(64, 64, 64);
    run_shape(256, 256, 256);
    run_shape(17, 1030, 1030);  /* crosses KC = 1024 and NC = 1024 */
    run_shape(20, 9, 2100);     /* several K blocks, packed path */
    run_shape(16, 100, 1500);   /* small-M path, long K */
    run_shape(600, 5, 1100);    /* small-N path with K chunking */
    run_shape(40, 2200, 11);    /* crosses NC = 2048 */

    /* random shapes */
    for (r = 0; r < nrand; r++) {
        int64_t M = rng_range(0, 150), N = rng_range(0, 150), K = rng_range(0, 420);
        if (r % 5 == 0) M = rng_range(0, 4);
        if (r % 7 == 0) N = rng_range(0, 6);
        run_shape(M, N, K);
    }

    printf("%d passed, %d failed\n", n_pass, n_fail);
    return n_fail ? 1 : 0;
}
