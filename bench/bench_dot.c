/* bench_dot.c -- GFLOP/s of gshard's f32 GEMM kernel (gs__sgemm) vs a naive loop vs OpenBLAS.
 *
 *   cc -O3 -march=native -I. bench/bench_dot.c -o build/bench_dot -lm
 *   cc -O3 -march=native -I. bench/bench_dot.c -o build/bench_dot -lm -DHAVE_CBLAS -lopenblas
 *   cc -O2 -I. bench/bench_dot.c -o build/bench_dot_o2 -lm            (SSE2 baseline build)
 *
 * Options: -DBENCH_USE_GSHARD_H  take the kernel from the amalgamated gshard.h instead of src/gs_gemm.c
 *          argv[1] = "quick"     fewer repetitions
 *
 * All timings are single-threaded, best of several repetitions. Every kernel result is checked against
 * the naive loop (max relative error, scaled by sum |a*b|); exit status is 1 only if a result is wrong,
 * never because of speed. */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 199309L
#endif
#include <math.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef BENCH_USE_GSHARD_H
/* ---- later: the kernel lives (static) in gshard.h's implementation section ---- */
#ifndef GSHARD_EXTERNAL_IMPL   /* the Makefile links gshard_impl.c instead */
#define GSHARD_IMPLEMENTATION
#endif
#include "gshard.h"
#else
/* ---- for now: local shim + the kernel source directly ---- */
#ifndef GS__FN
#if defined(__GNUC__)
#define GS__FN static __attribute__((unused))
#else
#define GS__FN static
#endif
#endif
#include "../src/gs_gemm.c"
#endif

#ifdef HAVE_CBLAS
#include <cblas.h>
#endif

static double now_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rng_state = 88172645463325252ull;
static float rng_f(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (float)((double)(rng_state >> 40) / 16777216.0 * 2.0 - 1.0);
}

/* naive reference, i-k-j loop order (row of C += A[i,k] * row of B), no packing or blocking */
static void naive_ikj(int64_t M, int64_t N, int64_t K, const float *A, const float *B, float *C)
{
    int64_t i, j, k;
    for (i = 0; i < M; i++) {
        float *c = C + i * N;
        for (j = 0; j < N; j++) c[j] = 0.0f;
        for (k = 0; k < K; k++) {
            const float a = A[i * K + k];
            const float *b = B + k * N;
            for (j = 0; j < N; j++) c[j] += a * b[j];
        }
    }
}

/* max |x-ref| / sum_k |a*b| over all entries (ref from the naive loop; |A|,|B| computed here) */
static double max_rel_err(int64_t M, int64_t N, int64_t K, const float *A, const float *B, const float *x,
                          const float *ref)
{
    double worst = 0.0;
    int64_t i, j, k;
    double *mag = (double *)calloc((size_t)(N > 0 ? N : 1), sizeof(double));
    if (!mag) return 1e30;
    for (i = 0; i < M; i++) {
        for (j = 0; j < N; j++) mag[j] = 0.0;
        for (k = 0; k < K; k++) {
            const double a = fabs((double)A[i * K + k]);
            for (j = 0; j < N; j++) mag[j] += a * fabs((double)B[k * N + j]);
        }
        for (j = 0; j < N; j++) {
            double e = fabs((double)x[i * N + j] - (double)ref[i * N + j]) / (mag[j] + 1e-30);
            if (x[i * N + j] != x[i * N + j]) e = 1e30;
            if (e > worst) worst = e;
        }
    }
    free(mag);
    return worst;
}

enum { IMPL_KERNEL, IMPL_NAIVE, IMPL_BLAS };

static int g_quick = 0;

/* best-of-reps seconds for one call of impl; reps chosen so each impl gets ~0.3 s (min 3, max 50) */
static double time_impl(int impl, int64_t M, int64_t N, int64_t K, const float *A, const float *B, float *C,
                        float *work, int max_reps)
{
    double best = 1e30, total = 0.0;
    int r;
    for (r = 0; r < max_reps; r++) {
        double t0 = now_sec(), dt;
        switch (impl) {
        case IMPL_KERNEL: gs__sgemm(M, N, K, A, K, B, N, C, N, 0, work); break;
        case IMPL_NAIVE: naive_ikj(M, N, K, A, B, C); break;
#ifdef HAVE_CBLAS
        case IMPL_BLAS:
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)N, (int)K, 1.0f, A, (int)K, B,
                        (int)N, 0.0f, C, (int)N);
            break;
#endif
        default: break;
        }
        dt = now_sec() - t0;
        if (dt < best) best = dt;
        total += dt;
        if (r >= 2 && total > (g_quick ? 0.1 : 0.3)) break;
    }
    return best;
}

static int n_wrong = 0;

static void bench_shape(const char *label, int64_t M, int64_t N, int64_t K)
{
    const double flops = 2.0 * (double)M * (double)N * (double)K;
    size_t nw = gs__sgemm_work_floats(M, N, K);
    float *A = (float *)malloc((size_t)(M * K + 1) * sizeof(float));
    float *B = (float *)malloc((size_t)(K * N + 1) * sizeof(float));
    float *C = (float *)malloc((size_t)(M * N + 1) * sizeof(float));
    float *R = (float *)malloc((size_t)(M * N + 1) * sizeof(float));
    float *work = (float *)malloc((nw + 1) * sizeof(float));
    double t_k, t_n = 0.0, t_b = 0.0, err;
    int naive_sub = 0; /* naive timed on a row subset (scaled) when the full run would be too slow */
    int64_t i;
    char shape[64];

    if (!A || !B || !C || !R || !work) {
        printf("%-14s out of memory\n", label);
        n_wrong++;
        return;
    }
    for (i = 0; i < M * K; i++) A[i] = rng_f();
    for (i = 0; i < K * N; i++) B[i] = rng_f();

    /* reference (also the naive timing when it is cheap enough) */
    {
        double t0 = now_sec();
        naive_ikj(M, N, K, A, B, R);
        t_n = now_sec() - t0;
    }
    /* correctness of the kernel (C pre-filled with NaN: accumulate=0 must overwrite) */
    for (i = 0; i < M * N; i++) C[i] = (float)NAN;
    gs__sgemm(M, N, K, A, K, B, N, C, N, 0, work);
    err = max_rel_err(M, N, K, A, B, C, R);

    t_k = time_impl(IMPL_KERNEL, M, N, K, A, B, C, work, g_quick ? 5 : 50);
    if (t_n * 3 < (g_quick ? 1.0 : 3.0)) {
        double t2 = time_impl(IMPL_NAIVE, M, N, K, A, B, R, work, g_quick ? 2 : 3);
        if (t2 < t_n) t_n = t2;
    } else {
        naive_sub = 1; /* too slow to repeat: keep the single reference run */
    }
#ifdef HAVE_CBLAS
    t_b = time_impl(IMPL_BLAS, M, N, K, A, B, C, work, g_quick ? 5 : 50);
#endif

    snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)M, (long long)N, (long long)K);
    printf("%-16s %-16s %9.2f %9.2f%s", label, shape, flops / t_k * 1e-9, flops / t_n * 1e-9, naive_sub ? "*" : " ");
#ifdef HAVE_CBLAS
    printf(" %9.2f %8.1f%%", flops / t_b * 1e-9, 100.0 * t_b / t_k);
#else
    printf(" %9s %9s", "-", "-");
    (void)t_b;
#endif
    printf(" %8.1fx  %9.2e %s\n", t_n / t_k, err, err > 1e-5 ? "WRONG" : "ok");
    if (err > 1e-5) n_wrong++;
    fflush(stdout);
    free(A);
    free(B);
    free(C);
    free(R);
    free(work);
}

int main(int argc, char **argv)
{
    static const int64_t sq[] = {128, 256, 512, 1024};
    size_t s;
    if (argc > 1 && strcmp(argv[1], "quick") == 0) g_quick = 1;

#ifdef HAVE_CBLAS
    openblas_set_num_threads(1);
#endif
    printf("gs__sgemm benchmark (single thread), C = A*B, row-major f32\n");
#if defined(GS__GEMM_MR) && defined(GS__GEMM_NR)
    printf("kernel register tile %dx%d, blocks MC=%d KC=%d NC=%d (%s)\n", (int)GS__GEMM_MR, (int)GS__GEMM_NR,
           (int)GS__GEMM_MC, (int)GS__GEMM_KC, (int)GS__GEMM_NC,
#if defined(__AVX512F__)
           "AVX-512"
#elif defined(__AVX__) && defined(__FMA__)
           "AVX2/FMA"
#elif defined(__AVX__)
           "AVX"
#elif defined(__SSE2__)
           "SSE2"
#else
           "generic"
#endif
    );
#endif
#ifdef HAVE_CBLAS
    printf("OpenBLAS: %s, threads=%d\n", openblas_get_config(), openblas_get_num_threads());
#else
    printf("OpenBLAS: not compiled in (build with -DHAVE_CBLAS -lopenblas)\n");
#endif
    printf("GFLOP/s, best of several runs; naive = i-k-j triple loop (* = single run, too slow to repeat)\n\n");
    printf("%-16s %-16s %9s %10s %9s %9s %9s  %9s\n", "case", "MxNxK", "kernel", "naive", "openblas",
           "k/blas", "k/naive", "max_rel_err");

    for (s = 0; s < sizeof sq / sizeof sq[0]; s++) bench_shape("square", sq[s], sq[s], sq[s]);
    bench_shape("odd", 127, 129, 131);
    bench_shape("row-vector", 1, 1000, 1000);
    bench_shape("col-vector", 1000, 1, 1000);
    bench_shape("small-M", 4, 1000, 1000);
    bench_shape("tall-skinny", 4096, 64, 64);
    bench_shape("short-wide", 64, 4096, 64);
    bench_shape("inner-large", 64, 64, 4096);

    printf("\n%s\n", n_wrong ? "RESULT: WRONG RESULTS" : "RESULT: all results correct");
    return n_wrong ? 1 : 0;
}
