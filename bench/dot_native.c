/* dot_native.c -- gshard's GEMM and vector kernels (elementwise, reductions) as a build for this machine
 * compiles them (-O3 -march=native, the compile-time choice: GSHARD_NO_ISA_DISPATCH). Linked into bench_dot, which
 * is built at plain -O2 and so runs the kernels it chooses at run time: one run of bench_dot prints the ratio of
 * the two. Not a benchmark of its own. */
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GSHARD_NO_ISA_DISPATCH
#if defined(__GNUC__)
#define GS__FN static __attribute__((unused))
#else
#define GS__FN static
#endif
#include <math.h>
#include <stdbool.h>
#include "../src/gs_gemm.c"
#include "../src/gs_simd.c"

#include "dot_native.h"

size_t bench_native_work_floats(int64_t M, int64_t N, int64_t K) { return gs__sgemm_work_floats(M, N, K); }

void bench_native_sgemm(int64_t M, int64_t N, int64_t K, const float *A, const float *B, float *C, float *work)
{
    (void)gs__sgemm_isa(GS__GEMM_NATIVE, M, N, K, A, K, B, N, C, N, 0, work);
}

const char *bench_native_isa(void) { return gs__gemm_isa_name(GS__GEMM_NATIVE); }

void bench_native_binary(int op, const float *a, const float *b, float *y, int64_t n)
{
    gs__vk_binary(GS__GEMM_NATIVE, op, a, b, y, n);
}
void bench_native_compare(int cmp, const float *a, const float *b, uint8_t *y, int64_t n)
{
    gs__vk_compare(GS__GEMM_NATIVE, cmp, a, b, y, n);
}
void bench_native_select(const uint8_t *p, const float *a, const float *b, float *y, int64_t n)
{
    gs__vk_select(GS__GEMM_NATIVE, p, a, b, y, n);
}
void bench_native_round_bf16(const float *x, float *y, int64_t n) { gs__vk_round_bf16(GS__GEMM_NATIVE, x, y, n); }
void bench_native_reduce_rows(int kind, int bf, const float *x, int64_t rows, int64_t L, float init, float *y)
{
    gs__vk_reduce_rows(GS__GEMM_NATIVE, kind, bf, x, rows, L, init, y);
}
void bench_native_reduce_cols(int kind, int bf, const float *x, int64_t outer, int64_t L, int64_t inner, float *y)
{
    gs__vk_reduce_cols(GS__GEMM_NATIVE, kind, bf, x, outer, L, inner, y);
}
