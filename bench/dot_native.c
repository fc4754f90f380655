/* dot_native.c -- gshard's GEMM as a build for this machine compiles it (-O3 -march=native, the compile-time
 * choice: GSHARD_NO_ISA_DISPATCH). Linked into bench_dot, which is built at plain -O2 and so runs the kernels
 * it chooses at run time: one run of bench_dot prints the ratio of the two. Not a benchmark of its own. */
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
#include "../src/gs_gemm.c"

#include "dot_native.h"

size_t bench_native_work_floats(int64_t M, int64_t N, int64_t K) { return gs__sgemm_work_floats(M, N, K); }

void bench_native_sgemm(int64_t M, int64_t N, int64_t K, const float *A, const float *B, float *C, float *work)
{
    (void)gs__sgemm_isa(GS__GEMM_NATIVE, M, N, K, A, K, B, N, C, N, 0, work);
}

const char *bench_native_isa(void) { return gs__gemm_isa_name(GS__GEMM_NATIVE); }
