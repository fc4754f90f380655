/* dot_native.h -- the -march=native build of gshard's GEMM (bench/dot_native.c), for bench_dot */
#ifndef BENCH_DOT_NATIVE_H
#define BENCH_DOT_NATIVE_H
#include <stddef.h>
#include <stdint.h>
size_t bench_native_work_floats(int64_t M, int64_t N, int64_t K);
/* C = A * B, row-major, tight leading dimensions */
void bench_native_sgemm(int64_t M, int64_t N, int64_t K, const float *A, const float *B, float *C, float *work);
const char *bench_native_isa(void); /* the instruction set the native build's flags gave it */
#endif
