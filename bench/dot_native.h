/* dot_native.h -- the -march=native build of gshard's GEMM (bench/dot_native.c), for bench_dot */
#ifndef BENCH_DOT_NATIVE_H
#define BENCH_DOT_NATIVE_H
#include <stddef.h>
#include <stdint.h>
size_t bench_native_work_floats(int64_t M, int64_t N, int64_t K);
/* C = A * B, row-major, tight leading dimensions */
void bench_native_sgemm(int64_t M, int64_t N, int64_t K, const float *A, const float *B, float *C, float *work);
const char *bench_native_isa(void); /* the instruction set the native build's flags gave it */
/* the vector kernels of src/gs_simd.c on the native build's path (codes: src/gs_isa.h) */
void bench_native_binary(int op, const float *a, const float *b, float *y, int64_t n);
void bench_native_compare(int cmp, const float *a, const float *b, uint8_t *y, int64_t n);
void bench_native_select(const uint8_t *p, const float *a, const float *b, float *y, int64_t n);
void bench_native_round_bf16(const float *x, float *y, int64_t n);
void bench_native_reduce_rows(int kind, int bf, const float *x, int64_t rows, int64_t L, float init, float *y);
void bench_native_reduce_cols(int kind, int bf, const float *x, int64_t outer, int64_t L, int64_t inner, float *y);
#endif
