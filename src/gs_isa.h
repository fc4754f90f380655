/* gs_isa.h -- instruction-set paths of the kernels (gs_gemm.c, gs_simd.c), how this build may choose between
   them, and the codes the elementwise and reduction kernels of gs_simd.c take */
#ifndef GS_ISA_H
#define GS_ISA_H

/* instruction-set paths (usable in #if); GS__ISA_AVX and GS__ISA_VEC4 exist only as the compiler-flag instance */
#define GS__ISA_SCALAR 0
#define GS__ISA_SSE2 1
#define GS__ISA_AVX2 2
#define GS__ISA_AVX512 3
#define GS__ISA_AVX 4  /* 8-wide AVX without FMA */
#define GS__ISA_VEC4 5 /* 4-wide GNUC vectors on a target other than x86 SSE2 (NEON, ...) */
#define GS__ISA_COUNT 6

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__amd64__)) && !defined(GSHARD_NO_ISA_DISPATCH) &&       \
    !defined(GS_GEMM_PORTABLE)
#  define GS__GEMM_DISPATCH 1
#  include <immintrin.h>
#else
#  define GS__GEMM_DISPATCH 0
#  if !defined(__GNUC__) || defined(GS_GEMM_PORTABLE)
#    define GS__GEMM_NATIVE GS__ISA_SCALAR
#  elif defined(__AVX512F__)
#    define GS__GEMM_NATIVE GS__ISA_AVX512
#  elif defined(__AVX__) && defined(__FMA__)
#    define GS__GEMM_NATIVE GS__ISA_AVX2
#  elif defined(__AVX__)
#    define GS__GEMM_NATIVE GS__ISA_AVX
#  elif defined(__SSE2__)
#    define GS__GEMM_NATIVE GS__ISA_SSE2
#  else
#    define GS__GEMM_NATIVE GS__ISA_VEC4
#  endif
#  if GS__GEMM_NATIVE == GS__ISA_AVX512 || GS__GEMM_NATIVE == GS__ISA_AVX2
#    include <immintrin.h>
#  endif
#endif

#define GS__VK_ADD 0
#define GS__VK_SUB 1
#define GS__VK_MUL 2
#define GS__VK_DIV 3
#define GS__VK_MAX 4
#define GS__VK_MIN 5

#define GS__VK_EQ 0
#define GS__VK_NE 1
#define GS__VK_LT 2
#define GS__VK_LE 3
#define GS__VK_GT 4
#define GS__VK_GE 5

#define GS__VK_RSUM 0
#define GS__VK_RPROD 1
#define GS__VK_RMAX 2
#define GS__VK_RMIN 3

#define GS__VK_LANES 32  /* partial results of a row reduction, on every path */
#define GS__VK_CHUNK 512 /* kept outputs reduce_cols updates per pass over the reduced rows (2 KiB) */

#endif
