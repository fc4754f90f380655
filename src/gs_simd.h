/* gs_simd.h -- the codes the elementwise and reduction kernels of gs_simd.c take (shared with the interpreter) */
#ifndef GS_SIMD_H
#define GS_SIMD_H

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

#define GS__VK_LANES 16  /* partial results of a row reduction, on every path */
#define GS__VK_CHUNK 512 /* kept outputs reduce_cols updates per pass over the reduced rows (2 KiB) */

#endif
