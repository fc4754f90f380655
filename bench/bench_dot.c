/* bench_dot.c -- GFLOP/s of gshard's f32 GEMM kernel (gs__sgemm) vs a naive loop vs OpenBLAS, and of each
 * instruction-set path of the kernel.
 *
 * `make bench` builds this file at plain -O2 (no -march: the kernel chooses its instruction set at run time)
 * and links bench/dot_native.c, the same kernel compiled -O3 -march=native with the compile-time choice, so
 * one run prints the ratio plain-O2 / -march=native ("k/native"; the target is >= 0.9):
 *   cc -std=c99 -O3 -march=native -c bench/dot_native.c -o build/dot_native.o
 *   cc -std=c99 -O2 -I. -DBENCH_NATIVE bench/bench_dot.c build/dot_native.o -o build/bench_dot -lm
 *   (add -DHAVE_CBLAS -lopenblas to compare with OpenBLAS)
 *
 * It also times the interpreter's elementwise and reduction kernels (src/gs_simd.c) the same way: plain -O2
 * (the run-time path) against -march=native, and against the scalar path (what the interpreter's plain C loops
 * were: GCC -O2 does not vectorise a loop of unknown length).
 *
 * OpenBLAS reads OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE when it is loaded; an environment that sets them (e.g. a
 * CI image pinning Haswell kernels) would hand it kernels that are not its own choice for this CPU. So the
 * bench removes both and runs itself again (Linux), says so, and prints the core OpenBLAS chose
 * (openblas_get_corename). "keep-env" as an argument keeps them.
 *
 * Options: -DBENCH_USE_GSHARD_H  take the kernel from the amalgamated gshard.h instead of src/gs_gemm.c
 *          argv[1] = "quick"     fewer repetitions
 *          "kernels"             only the elementwise and reduction kernels
 *
 * All timings are single-threaded, best of several repetitions. Every kernel result is checked against
 * the naive loop (max relative error, scaled by sum |a*b|); exit status is 1 only if a result is wrong,
 * never because of speed. */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 200112L
#endif
#include <math.h>
#include <stdbool.h>
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
#include "../src/gs_simd.c"
#endif
#if defined(HAVE_CBLAS) && defined(__linux__)
#include <unistd.h> /* execv: a fair OpenBLAS row (see openblas_own_choice) */
#endif

#ifdef HAVE_CBLAS
#include <cblas.h>
#endif
#ifdef BENCH_NATIVE
#include "dot_native.h"
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

enum { IMPL_KERNEL, IMPL_NAIVE, IMPL_BLAS, IMPL_NATIVE, IMPL_PATH };

static int g_quick = 0;
static int g_isa = 0; /* the path IMPL_PATH runs */

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
        case IMPL_PATH: (void)gs__sgemm_isa(g_isa, M, N, K, A, K, B, N, C, N, 0, work); break;
#ifdef BENCH_NATIVE
        case IMPL_NATIVE: bench_native_sgemm(M, N, K, A, B, C, work); break;
#endif
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

/* the summary: worst ratios (plain / native, plain / OpenBLAS) over the square products with n >= 256, and the
   range of plain / native over the elementwise and reduction kernels */
static double g_dot_nat_min = 1e30, g_dot_blas_min = 1e30, g_vk_min = 1e30, g_vk_max = 0.0, g_vk_logsum = 0.0;
static int g_vk_count = 0;

static void bench_shape(const char *label, int64_t M, int64_t N, int64_t K)
{
    const double flops = 2.0 * (double)M * (double)N * (double)K;
    size_t nw = gs__sgemm_work_floats(M, N, K);
#ifdef BENCH_NATIVE
    size_t nw_native = bench_native_work_floats(M, N, K);
#endif
    float *A = (float *)malloc((size_t)(M * K + 1) * sizeof(float));
    float *B = (float *)malloc((size_t)(K * N + 1) * sizeof(float));
    float *C = (float *)malloc((size_t)(M * N + 1) * sizeof(float));
    float *R = (float *)malloc((size_t)(M * N + 1) * sizeof(float));
    float *work;
    double t_k, t_n = 0.0, t_b = 0.0, t_nat = 0.0, err;
    int naive_sub = 0; /* naive timed on a row subset (scaled) when the full run would be too slow */
    int64_t i;
    char shape[64];

#ifdef BENCH_NATIVE
    if (nw_native > nw) nw = nw_native;
#endif
    work = (float *)malloc((nw + 1) * sizeof(float));
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
#ifdef BENCH_NATIVE
    for (i = 0; i < M * N; i++) C[i] = (float)NAN;
    bench_native_sgemm(M, N, K, A, B, C, work);
    {
        const double e2 = max_rel_err(M, N, K, A, B, C, R);
        if (e2 > err) err = e2;
    }
    t_nat = time_impl(IMPL_NATIVE, M, N, K, A, B, C, work, g_quick ? 5 : 50);
#endif

    snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)M, (long long)N, (long long)K);
    printf("%-16s %-16s %9.2f %9.2f%s", label, shape, flops / t_k * 1e-9, flops / t_n * 1e-9, naive_sub ? "*" : " ");
#ifdef HAVE_CBLAS
    printf(" %9.2f %8.1f%%", flops / t_b * 1e-9, 100.0 * t_b / t_k);
    if (M == N && N == K && N >= 256 && t_b / t_k < g_dot_blas_min) g_dot_blas_min = t_b / t_k;
#else
    printf(" %9s %9s", "-", "-");
    (void)t_b;
#endif
#ifdef BENCH_NATIVE
    printf(" %9.2f %9.2f", flops / t_nat * 1e-9, t_nat / t_k);
    if (M == N && N == K && N >= 256 && t_nat / t_k < g_dot_nat_min) g_dot_nat_min = t_nat / t_k;
#else
    printf(" %9s %9s", "-", "-");
    (void)t_nat;
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

/* GFLOP/s of every instruction-set path this machine runs (forced through gs__sgemm_isa), square shapes */
static void bench_paths(void)
{
    static const int64_t sq[] = {256, 512, 1024};
    int isa;
    size_t s;
    printf("\nGFLOP/s per instruction-set path (this build, forced with gs__sgemm_isa; GSHARD_ISA forces one)\n");
    printf("%-10s", "path");
    for (s = 0; s < sizeof sq / sizeof sq[0]; s++) printf(" %8lld^3", (long long)sq[s]);
    printf("\n");
    for (isa = 0; isa < GS__ISA_COUNT; isa++) {
        if (!gs__gemm_isa_available(isa)) continue;
        printf("%-10s", gs__gemm_isa_name(isa));
        for (s = 0; s < sizeof sq / sizeof sq[0]; s++) {
            const int64_t n = sq[s];
            float *A = (float *)malloc((size_t)(n * n) * sizeof(float));
            float *B = (float *)malloc((size_t)(n * n) * sizeof(float));
            float *C = (float *)malloc((size_t)(n * n) * sizeof(float));
            float *R = (float *)malloc((size_t)(n * n) * sizeof(float));
            float *work = (float *)malloc((gs__sgemm_work_floats(n, n, n) + 1) * sizeof(float));
            int64_t i;
            double t, err;
            if (!A || !B || !C || !R || !work) {
                printf(" out of memory");
                n_wrong++;
            } else {
                for (i = 0; i < n * n; i++) A[i] = rng_f();
                for (i = 0; i < n * n; i++) B[i] = rng_f();
                naive_ikj(n, n, n, A, B, R);
                g_isa = isa;
                t = time_impl(IMPL_PATH, n, n, n, A, B, C, work, g_quick ? 5 : 20);
                err = max_rel_err(n, n, n, A, B, C, R);
                printf(" %9.2f%s", 2.0 * (double)n * (double)n * (double)n / t * 1e-9, err > 1e-5 ? "!" : " ");
                if (err > 1e-5) n_wrong++;
            }
            free(A);
            free(B);
            free(C);
            free(R);
            free(work);
        }
        printf("\n");
        fflush(stdout);
    }
}


/* ---------------------------------------------------------------- elementwise and reduction kernels */

enum { VK_BINARY, VK_COMPARE, VK_SELECT, VK_RBF, VK_ROWS, VK_COLS };
typedef struct vk_case {
    const char *name;
    int what, code, bf;
} vk_case;

typedef struct vk_bufs {
    float *a, *b, *y;
    uint8_t *p, *c;
    int64_t n;
} vk_bufs;

/* one call of case k on path isa (-1: the -march=native build) */
static void vk_call(int isa, const vk_case *k, vk_bufs *m)
{
    const int64_t L = 1024; /* reduced extent: rows of 1024, or 1024 kept columns */
#ifdef BENCH_NATIVE
#define VK_NATIVE(call) if (isa < 0) call; else
#else
#define VK_NATIVE(call) /* isa >= 0 */
#endif
    switch (k->what) {
    case VK_BINARY:
        VK_NATIVE(bench_native_binary(k->code, m->a, m->b, m->y, m->n))
        gs__vk_binary(isa, k->code, m->a, m->b, m->y, m->n);
        break;
    case VK_COMPARE:
        VK_NATIVE(bench_native_compare(k->code, m->a, m->b, m->c, m->n))
        gs__vk_compare(isa, k->code, m->a, m->b, m->c, m->n);
        break;
    case VK_SELECT:
        VK_NATIVE(bench_native_select(m->p, m->a, m->b, m->y, m->n))
        gs__vk_select(isa, m->p, m->a, m->b, m->y, m->n);
        break;
    case VK_RBF:
        VK_NATIVE(bench_native_round_bf16(m->a, m->y, m->n))
        gs__vk_round_bf16(isa, m->a, m->y, m->n);
        break;
    case VK_ROWS:
        VK_NATIVE(bench_native_reduce_rows(k->code, k->bf, m->a, m->n / L, L, 0.0f, m->y))
        gs__vk_reduce_rows(isa, k->code, k->bf, m->a, m->n / L, L, 0.0f, m->y);
        break;
    default:
        memset(m->y, 0, (size_t)L * sizeof(float));
        VK_NATIVE(bench_native_reduce_cols(k->code, k->bf, m->a, 1, m->n / L, L, m->y))
        gs__vk_reduce_cols(isa, k->code, k->bf, m->a, 1, m->n / L, L, m->y);
        break;
    }
#undef VK_NATIVE
}

static double vk_time(int isa, const vk_case *k, vk_bufs *m)
{
    double best = 1e30, total = 0.0;
    int r;
    for (r = 0; r < 200; r++) {
        double t0 = now_sec(), dt;
        vk_call(isa, k, m);
        dt = now_sec() - t0;
        if (dt < best) best = dt;
        total += dt;
        if (r >= 2 && total > (g_quick ? 0.03 : 0.15)) break;
    }
    return best;
}

/* output bytes of case k (to compare paths: every path must give the same bits) */
static size_t vk_out_bytes(const vk_case *k, const vk_bufs *m)
{
    if (k->what == VK_COMPARE) return (size_t)m->n;
    if (k->what == VK_ROWS) return (size_t)(m->n / 1024) * sizeof(float);
    if (k->what == VK_COLS) return 1024 * sizeof(float);
    return (size_t)m->n * sizeof(float);
}

static void bench_vk(void)
{
    static const vk_case cases[] = {
        {"add f32", VK_BINARY, GS__VK_ADD, 0},      {"multiply f32", VK_BINARY, GS__VK_MUL, 0},
        {"divide f32", VK_BINARY, GS__VK_DIV, 0},   {"maximum f32", VK_BINARY, GS__VK_MAX, 0},
        {"compare LT f32", VK_COMPARE, GS__VK_LT, 0}, {"select 32-bit", VK_SELECT, 0, 0},
        {"convert f32->bf16", VK_RBF, 0, 0},        {"reduce-sum rows f32", VK_ROWS, GS__VK_RSUM, 0},
        {"reduce-sum rows bf16", VK_ROWS, GS__VK_RSUM, 1}, {"reduce-max rows f32", VK_ROWS, GS__VK_RMAX, 0},
        {"reduce-sum cols f32", VK_COLS, GS__VK_RSUM, 0}, {"reduce-max cols bf16", VK_COLS, GS__VK_RMAX, 1}};
    static const int64_t sizes[] = {(int64_t)1 << 16, (int64_t)1 << 22};
    size_t s, k;
    printf("\nElementwise and reduction kernels (src/gs_simd.c), G elements/s of the input, best of several runs;\n"
           "plain = this -O2 build (%s path chosen at run time), native = -O3 -march=native build (%s path),\n"
           "scalar = the scalar path forced; reductions: rows of 1024 (minor dim reduced) or 1024 kept columns\n",
           gs__gemm_isa_name(gs__gemm_isa()),
#ifdef BENCH_NATIVE
           bench_native_isa()
#else
           "not linked"
#endif
    );
    printf("%-22s %9s %9s %9s %9s %10s %9s\n", "kernel", "elements", "plain", "native", "scalar", "plain/nat",
           "vs scalar");
    for (s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        vk_bufs m;
        uint8_t *ref;
        int64_t i;
        m.n = sizes[s];
        m.a = (float *)malloc((size_t)m.n * sizeof(float));
        m.b = (float *)malloc((size_t)m.n * sizeof(float));
        m.y = (float *)malloc((size_t)m.n * sizeof(float));
        m.p = (uint8_t *)malloc((size_t)m.n);
        m.c = (uint8_t *)malloc((size_t)m.n);
        ref = (uint8_t *)malloc((size_t)m.n * sizeof(float));
        if (!m.a || !m.b || !m.y || !m.p || !m.c || !ref) {
            printf("out of memory\n");
            n_wrong++;
            return;
        }
        for (i = 0; i < m.n; i++) {
            m.a[i] = gs__vk_rbf(rng_f());
            m.b[i] = rng_f() + 1.5f;
            m.p[i] = (uint8_t)(m.a[i] > 0.0f);
        }
        for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            const vk_case *c = &cases[k];
            double t_plain, t_nat = 0.0, t_sc;
            const size_t nb = vk_out_bytes(c, &m);
            const void *out = c->what == VK_COMPARE ? (const void *)m.c : (const void *)m.y;
            int same = 1;
            vk_call(GS__ISA_SCALAR, c, &m);
            memcpy(ref, out, nb);
            t_sc = vk_time(GS__ISA_SCALAR, c, &m);
            t_plain = vk_time(gs__gemm_isa(), c, &m);
            same &= memcmp(ref, out, nb) == 0;
#ifdef BENCH_NATIVE
            t_nat = vk_time(-1, c, &m);
            same &= memcmp(ref, out, nb) == 0;
            printf("%-22s %9lld %9.2f %9.2f %9.2f %10.2f %8.1fx%s\n", c->name, (long long)m.n, m.n / t_plain * 1e-9,
                   m.n / t_nat * 1e-9, m.n / t_sc * 1e-9, t_nat / t_plain, t_sc / t_plain, same ? "" : "  WRONG");
            if (t_nat / t_plain < g_vk_min) g_vk_min = t_nat / t_plain;
            if (t_nat / t_plain > g_vk_max) g_vk_max = t_nat / t_plain;
            g_vk_logsum += log(t_nat / t_plain);
            g_vk_count++;
#else
            (void)t_nat;
            printf("%-22s %9lld %9.2f %9s %9.2f %10s %8.1fx%s\n", c->name, (long long)m.n, m.n / t_plain * 1e-9, "-",
                   m.n / t_sc * 1e-9, "-", t_sc / t_plain, same ? "" : "  WRONG");
#endif
            if (!same) n_wrong++;
            fflush(stdout);
        }
        free(m.a);
        free(m.b);
        free(m.y);
        free(m.p);
        free(m.c);
        free(ref);
    }
}

#if defined(HAVE_CBLAS) && defined(__linux__)
/* OpenBLAS reads OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE when it is loaded, before main: remove them and run this
   program again, so that OpenBLAS picks its own kernels for this CPU. Returns only if nothing was set (or exec
   failed); BENCH_DOT_UNSET tells the second run what was removed. */
static void openblas_own_choice(char **argv)
{
    const char *ct = getenv("OPENBLAS_CORETYPE"), *l2 = getenv("OPENBLAS_L2_SIZE");
    char note[256];
    if (!ct && !l2) return;
    snprintf(note, sizeof note, "%s%s%s%s%s", ct ? "OPENBLAS_CORETYPE=" : "", ct ? ct : "", ct && l2 ? " " : "",
             l2 ? "OPENBLAS_L2_SIZE=" : "", l2 ? l2 : "");
    if (setenv("BENCH_DOT_UNSET", note, 1) != 0 || unsetenv("OPENBLAS_CORETYPE") != 0 ||
        unsetenv("OPENBLAS_L2_SIZE") != 0)
        return;
    fflush(stdout);
    execv("/proc/self/exe", argv);
    printf("note: could not run again without %s (OpenBLAS keeps them)\n", note);
}
#endif

int main(int argc, char **argv)
{
    static const int64_t sq[] = {128, 256, 512, 1024};
    size_t s;
    int a, only_kernels = 0;
    for (a = 1; a < argc; a++) {
        if (strcmp(argv[a], "quick") == 0) g_quick = 1;
        else if (strcmp(argv[a], "kernels") == 0) only_kernels = 1;
        else if (strcmp(argv[a], "keep-env") != 0) {
            fprintf(stderr, "bench_dot: unknown argument '%s' (quick, kernels, keep-env)\n", argv[a]);
            return 2;
        }
    }
    if (only_kernels) {
        bench_vk();
        return n_wrong ? 1 : 0;
    }
#if defined(HAVE_CBLAS) && defined(__linux__)
    for (a = 1; a < argc && strcmp(argv[a], "keep-env") != 0; a++) {}
    if (a == argc) openblas_own_choice(argv);
#endif

#ifdef HAVE_CBLAS
    openblas_set_num_threads(1);
#endif
    printf("gs__sgemm benchmark (single thread), C = A*B, row-major f32\n");
    printf("kernel: %s path chosen at run time (GSHARD_ISA=%s)", gs__gemm_isa_name(gs__gemm_isa()),
           getenv("GSHARD_ISA") ? getenv("GSHARD_ISA") : "");
#ifdef BENCH_NATIVE
    printf("; native = the kernel built -O3 -march=native (%s path)\n", bench_native_isa());
#else
    printf("; native: not linked (see the top of bench/dot_native.c)\n");
#endif
#ifdef HAVE_CBLAS
    printf("OpenBLAS: core %s (its own choice for this CPU%s%s), %s, threads=%d\n", openblas_get_corename(),
           getenv("BENCH_DOT_UNSET") ? "; removed from the environment: " : "",
           getenv("BENCH_DOT_UNSET") ? getenv("BENCH_DOT_UNSET") : "", openblas_get_config(),
           openblas_get_num_threads());
    if (getenv("OPENBLAS_CORETYPE") || getenv("OPENBLAS_L2_SIZE"))
        printf("note: OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE are set and kept: OpenBLAS did not choose its own core\n");
#else
    printf("OpenBLAS: not compiled in (libopenblas-dev absent, or build with -DHAVE_CBLAS -lopenblas): "
           "its columns are skipped\n");
#endif
    printf("GFLOP/s, best of several runs; naive = i-k-j triple loop (* = single run, too slow to repeat)\n\n");
    printf("%-16s %-16s %9s %10s %9s %9s %9s %9s %9s  %9s\n", "case", "MxNxK", "kernel", "naive", "openblas",
           "k/blas", "native", "k/native", "k/naive", "max_rel_err");

    for (s = 0; s < sizeof sq / sizeof sq[0]; s++) bench_shape("square", sq[s], sq[s], sq[s]);
    bench_shape("odd", 127, 129, 131);
    bench_shape("row-vector", 1, 1000, 1000);
    bench_shape("col-vector", 1000, 1, 1000);
    bench_shape("small-M", 4, 1000, 1000);
    bench_shape("tall-skinny", 4096, 64, 64);
    bench_shape("short-wide", 64, 4096, 64);
    bench_shape("inner-large", 64, 64, 4096);

    bench_paths();
    bench_vk();
    printf("\nSummary (speed ratios, higher is better for this -O2 build; targets >= 0.9):\n");
#ifdef BENCH_NATIVE
    printf("  dot, square n >= 256: plain -O2 / -march=native, worst %.2f\n", g_dot_nat_min);
    printf("  elementwise and reductions: plain -O2 / -march=native, geometric mean %.2f (from %.2f to %.2f)\n",
           g_vk_count ? exp(g_vk_logsum / g_vk_count) : 0.0, g_vk_min, g_vk_max);
#else
    printf("  -march=native: not linked\n");
    (void)g_dot_nat_min;
    (void)g_vk_min;
    (void)g_vk_max;
    (void)g_vk_logsum;
    (void)g_vk_count;
#endif
#ifdef HAVE_CBLAS
    printf("  dot, square n >= 256: plain -O2 / OpenBLAS (core %s), worst %.2f\n", openblas_get_corename(),
           g_dot_blas_min);
#else
    printf("  OpenBLAS: skipped (not installed)\n");
    (void)g_dot_blas_min;
#endif
    printf("\n%s\n", n_wrong ? "RESULT: WRONG RESULTS" : "RESULT: all results correct");
    return n_wrong ? 1 : 0;
}
