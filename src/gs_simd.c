#ifndef GS__FN /* standalone builds (bench, tests) define GS__FN, include the std headers and gs_gemm.c first */
#include "gs_internal.h"
#endif

/* ==========================================================================================
 * gs_simd.c -- the interpreter's f32 elementwise and reduction kernels, one instance per instruction set
 *
 * Kernels (bf16 values live as f32 holding a bf16 value, as everywhere in the interpreter):
 *   gs__vk_binary      y = a (+ - * / max min) b
 *   gs__vk_compare     y = a (== != < <= > >=) b as 0/1 bytes (IEEE: with a NaN only != holds)
 *   gs__vk_select      y = p ? a : b, per element
 *   gs__vk_round_bf16  y = x rounded to bf16 (convert f32 -> bf16, and every bf16 op's result)
 *   gs__vk_reduce_rows y[r] = init (kind) x[r, 0..L)          (the reduced dims are the minor ones)
 *   gs__vk_reduce_cols y[o, i] = y[o, i] (kind) x[o, 0..L, i]  (the minor dims are kept)
 * kind: sum, product, max, min; bf != 0 rounds every sum and product to bf16, as the scalar combiner does.
 *
 * Instances and the choice between them follow the matrix kernel (gs_gemm.c): with GCC >= 9 or Clang on x86-64
 * the header compiles scalar, sse2 (4 lanes), avx2 (8) and avx512 (16) with function target attributes, and
 * the path gs__gemm_isa() chose for the process (the widest the CPU runs, or GSHARD_ISA) runs; otherwise scalar
 * and the width the compiler's flags allow (GSHARD_NO_ISA_DISPATCH, other compilers and architectures).
 *
 * Every path gives the same bits as the scalar path, for every input: elementwise kernels do one IEEE operation
 * per element either way, and max/min/bf16 rounding spell out the scalar rules lane by lane; when both operands
 * of an add or a multiply are NaN the result is the first one's, quieted, on every path (the hardware keeps its
 * first operand's NaN, but a compiler may swap the operands of a commutative operation). A reduction fixes
 * its order independently of the width: a row of L >= 64 elements is combined in GS__VK_LANES = 32 interleaved
 * partial results (partial j takes elements j, j+32, ... of the whole blocks of 32), which are combined pairwise
 * (j with j+16, then j+8, j+4, j+2, j+1), then combined into init, then the remaining L mod 32 elements follow in
 * order; shorter rows, and every column of reduce_cols, combine in order from init. So a result depends neither
 * on the CPU nor on GSHARD_ISA, only on the shape.
 * ========================================================================================== */

#include "gs_isa.h"

#if GS__GEMM_DISPATCH && (defined(__clang__) || __GNUC__ >= 9) /* __builtin_convertvector */
#  define GS__VK_DISPATCH 1
#else
#  define GS__VK_DISPATCH 0
#endif
#if !GS__VK_DISPATCH && GS__GEMM_DISPATCH == 0 && GS__GEMM_NATIVE != GS__ISA_SCALAR &&                          \
    (defined(__clang__) || __GNUC__ >= 9)
#  define GS__VK_NATIVE 1
#else
#  define GS__VK_NATIVE 0
#endif

/* a kernel's inner loop, and the combiner of a reduction, inlined into each caller with its operation a
   constant (a call per element, or a switch per vector, costs more than the operation) */
#if defined(__GNUC__)
#define GS__VK_INLINE static inline __attribute__((always_inline))
#else
#define GS__VK_INLINE static
#endif

/* ---------------------------------------------------------------- the scalar rules */

GS__FN bool gs__ip_isnan(float x) { return x != x; }

/* max / min as XLA's: a NaN operand wins (the first one), and +0 is above -0 */
GS__FN float gs__ip_fmax(float a, float b) {
    if (gs__ip_isnan(a)) return a;
    if (gs__ip_isnan(b)) return b;
    if (a == b) return signbit(a) ? b : a;
    return a > b ? a : b;
}

GS__FN float gs__ip_fmin(float a, float b) {
    if (gs__ip_isnan(a)) return a;
    if (gs__ip_isnan(b)) return b;
    if (a == b) return signbit(a) ? a : b;
    return a < b ? a : b;
}

/* x rounded to bf16 (nearest even; a NaN keeps its top bits and becomes quiet), as an f32 */
GS__FN float gs__vk_rbf(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) u = (u & 0xffff0000u) | 0x00400000u;
    else u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    memcpy(&x, &u, 4);
    return x;
}

/* a + b and a * b with the NaN of a (quieted) when both are NaN: the hardware returns the NaN of its first
   operand, and a compiler may swap the operands of a commutative operation */
GS__FN float gs__vk_nan2(float r, float a, float b) {
    uint32_t u;
    if (!(a != a && b != b)) return r;
    memcpy(&u, &a, 4);
    u |= 0x00400000u;
    memcpy(&r, &u, 4);
    return r;
}
GS__FN float gs__vk_add(float a, float b) { return gs__vk_nan2(a + b, a, b); }
GS__FN float gs__vk_mul(float a, float b) { return gs__vk_nan2(a * b, a, b); }

GS__VK_INLINE float gs__vk_comb(int kind, int bf, float a, float b) {
    switch (kind) {
    case GS__VK_RSUM: return bf ? gs__vk_rbf(gs__vk_add(a, b)) : gs__vk_add(a, b);
    case GS__VK_RPROD: return bf ? gs__vk_rbf(gs__vk_mul(a, b)) : gs__vk_mul(a, b);
    case GS__VK_RMAX: return gs__ip_fmax(a, b);
    default: return gs__ip_fmin(a, b);
    }
}

/* acc combined with p[0..n) in order */
GS__VK_INLINE float gs__vk_fold(int kind, int bf, float acc, const float *p, int64_t n) {
    int64_t i;
    for (i = 0; i < n; i++) acc = gs__vk_comb(kind, bf, acc, p[i]);
    return acc;
}

/* A row's result from its first `width` partial results (the pairwise steps for w >= width done): the pairwise
   steps w = width/2, ..., 1, then into init, then the elements after the whole blocks. */
GS__VK_INLINE float gs__vk_row_finish(int kind, int bf, float init, float *lane, int width, const float *p, int64_t L) {
    int w, j;
    int64_t whole = L / GS__VK_LANES * GS__VK_LANES;
    for (w = width / 2; w >= 1; w /= 2)
        for (j = 0; j < w; j++) lane[j] = gs__vk_comb(kind, bf, lane[j], lane[j + w]);
    return gs__vk_fold(kind, bf, gs__vk_comb(kind, bf, init, lane[0]), p + whole, L - whole);
}

GS__FN void gs__vk_binary_scalar(int op, const float *a, const float *b, float *y, int64_t n) {
    int64_t i;
    switch (op) {
    case GS__VK_ADD: for (i = 0; i < n; i++) y[i] = gs__vk_add(a[i], b[i]); break;
    case GS__VK_SUB: for (i = 0; i < n; i++) y[i] = a[i] - b[i]; break;
    case GS__VK_MUL: for (i = 0; i < n; i++) y[i] = gs__vk_mul(a[i], b[i]); break;
    case GS__VK_DIV: for (i = 0; i < n; i++) y[i] = a[i] / b[i]; break;
    case GS__VK_MAX: for (i = 0; i < n; i++) y[i] = gs__ip_fmax(a[i], b[i]); break;
    default: for (i = 0; i < n; i++) y[i] = gs__ip_fmin(a[i], b[i]); break;
    }
}

GS__FN void gs__vk_compare_scalar(int cmp, const float *a, const float *b, uint8_t *y, int64_t n) {
    int64_t i;
    switch (cmp) {
    case GS__VK_EQ: for (i = 0; i < n; i++) y[i] = (uint8_t)(a[i] == b[i]); break;
    case GS__VK_NE: for (i = 0; i < n; i++) y[i] = (uint8_t)(a[i] != b[i]); break;
    case GS__VK_LT: for (i = 0; i < n; i++) y[i] = (uint8_t)(a[i] < b[i]); break;
    case GS__VK_LE: for (i = 0; i < n; i++) y[i] = (uint8_t)(a[i] <= b[i]); break;
    case GS__VK_GT: for (i = 0; i < n; i++) y[i] = (uint8_t)(a[i] > b[i]); break;
    default: for (i = 0; i < n; i++) y[i] = (uint8_t)(a[i] >= b[i]); break;
    }
}

/* 4-byte elements moved as floats: a select never does arithmetic on them, so any bits pass unchanged */
GS__FN void gs__vk_select_scalar(const uint8_t *p, const float *a, const float *b, float *y, int64_t n) {
    int64_t i;
    for (i = 0; i < n; i++) memcpy(y + i, p[i] ? a + i : b + i, 4);
}

GS__FN void gs__vk_round_bf16_scalar(const float *x, float *y, int64_t n) {
    int64_t i;
    for (i = 0; i < n; i++) y[i] = gs__vk_rbf(x[i]);
}

GS__FN void gs__vk_reduce_rows_scalar(int kind, int bf, const float *x, int64_t rows, int64_t L, float init,
                                      float *y) {
    int64_t r, l;
    int j;
    for (r = 0; r < rows; r++) {
        const float *p = x + r * L;
        float lane[GS__VK_LANES];
        if (L < 2 * GS__VK_LANES) {
            y[r] = gs__vk_fold(kind, bf, init, p, L);
            continue;
        }
        for (j = 0; j < GS__VK_LANES; j++) lane[j] = p[j];
        for (l = GS__VK_LANES; l + GS__VK_LANES <= L; l += GS__VK_LANES)
            for (j = 0; j < GS__VK_LANES; j++) lane[j] = gs__vk_comb(kind, bf, lane[j], p[l + j]);
        y[r] = gs__vk_row_finish(kind, bf, init, lane, GS__VK_LANES, p, L);
    }
}

GS__FN void gs__vk_reduce_cols_scalar(int kind, int bf, const float *x, int64_t outer, int64_t L, int64_t inner,
                                      float *y) {
    int64_t o, l, i;
    for (o = 0; o < outer; o++)
        for (l = 0; l < L; l++)
            for (i = 0; i < inner; i++)
                y[o * inner + i] = gs__vk_comb(kind, bf, y[o * inner + i], x[(o * L + l) * inner + i]);
}

/* ---------------------------------------------------------------- the vector instances */

/* 0, 1, ..., 31: lane indices for rotating a vector (GS__VK_ROTATE) */
GS__FN const int32_t gs__vk_iota[2 * GS__VK_LANES] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15,
                                                      16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
                                                      32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,
                                                      48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63};

/* the loop over a row's partial-result vectors, unrolled so they stay in registers (GCC -O2 would not) */
#if defined(__clang__)
#define GS__VK_UNROLL _Pragma("unroll")
#elif defined(__GNUC__) && __GNUC__ >= 8
#define GS__VK_UNROLL _Pragma("GCC unroll 16")
#else
#define GS__VK_UNROLL
#endif

#if GS__VK_DISPATCH
#define GS__VK_W 4
#define GS__VK_SFX sse2
#define GS__VK_TARGET __attribute__((target("sse2")))
#define GS__VK_WIDEN8(m, p)                                                                                     \
    do {                                                                                                       \
        int32_t w_;                                                                                            \
        __m128i z_ = _mm_setzero_si128();                                                                      \
        memcpy(&w_, p, 4);                                                                                     \
        m = (gs__vk_vi_sse2)_mm_unpacklo_epi16(_mm_unpacklo_epi8(_mm_cvtsi32_si128(w_), z_), z_);              \
    } while (0)
#include "gs_simd_kernel.inc"

#define GS__VK_W 8
#define GS__VK_SFX avx2
#define GS__VK_TARGET __attribute__((target("avx2,fma")))
#define GS__VK_WIDEN8(m, p)                                                                                     \
    m = (gs__vk_vi_avx2)_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(p)))
#include "gs_simd_kernel.inc"

#define GS__VK_W 16
#define GS__VK_SFX avx512
#define GS__VK_TARGET __attribute__((target("avx512f,avx2,fma")))
/* the masked form: the unmasked one trips g++ 12's -Wmaybe-uninitialized inside the intrinsic */
#define GS__VK_WIDEN8(m, p)                                                                                     \
    m = (gs__vk_vi_avx512)_mm512_maskz_cvtepu8_epi32((__mmask16)0xffff,                                        \
                                                     _mm_loadu_si128((const __m128i *)(const void *)(p)))
#include "gs_simd_kernel.inc"

/* call name_<path>(args...) for the path isa (scalar for any path without a vector instance) */
#define GS__VK_RUN(isa, name, args)                                                                             \
    do {                                                                                                       \
        switch (isa) {                                                                                         \
        case GS__ISA_SSE2: name##_sse2 args; break;                                                            \
        case GS__ISA_AVX2: name##_avx2 args; break;                                                            \
        case GS__ISA_AVX512: name##_avx512 args; break;                                                        \
        default: name##_scalar args; break;                                                                    \
        }                                                                                                      \
    } while (0)
#elif GS__VK_NATIVE
#if GS__GEMM_NATIVE == GS__ISA_AVX512
#define GS__VK_W 16
#elif GS__GEMM_NATIVE == GS__ISA_AVX2 || GS__GEMM_NATIVE == GS__ISA_AVX
#define GS__VK_W 8
#else
#define GS__VK_W 4
#endif
#define GS__VK_SFX native
#define GS__VK_TARGET
#define GS__VK_WIDEN8(m, p)                                                                                     \
    do {                                                                                                       \
        int32_t t_[GS__VK_W];                                                                                  \
        int j_;                                                                                                \
        for (j_ = 0; j_ < GS__VK_W; j_++) t_[j_] = (p)[j_];                                                    \
        memcpy(&m, t_, sizeof m);                                                                              \
    } while (0)
#include "gs_simd_kernel.inc"

#define GS__VK_RUN(isa, name, args)                                                                             \
    do {                                                                                                       \
        if ((isa) == GS__GEMM_NATIVE) name##_native args;                                                      \
        else name##_scalar args;                                                                               \
    } while (0)
#else
#define GS__VK_RUN(isa, name, args) name##_scalar args
#endif

/* ---------------------------------------------------------------- entry points
   Each runs on path isa (gs__gemm_isa() for the process's choice; a path that is not available runs scalar,
   which gives the same bits). n, rows, L, outer, inner >= 0; a, b, x and y may be the same array (elementwise
   kernels read each element before they write it), never partly overlapping. */

GS__FN void gs__vk_binary(int isa, int op, const float *a, const float *b, float *y, int64_t n) {
    if (!gs__gemm_isa_available(isa)) isa = GS__ISA_SCALAR;
    GS__VK_RUN(isa, gs__vk_binary, (op, a, b, y, n));
}

GS__FN void gs__vk_compare(int isa, int cmp, const float *a, const float *b, uint8_t *y, int64_t n) {
    if (!gs__gemm_isa_available(isa)) isa = GS__ISA_SCALAR;
    GS__VK_RUN(isa, gs__vk_compare, (cmp, a, b, y, n));
}

GS__FN void gs__vk_select(int isa, const uint8_t *p, const float *a, const float *b, float *y, int64_t n) {
    if (!gs__gemm_isa_available(isa)) isa = GS__ISA_SCALAR;
    GS__VK_RUN(isa, gs__vk_select, (p, a, b, y, n));
}

GS__FN void gs__vk_round_bf16(int isa, const float *x, float *y, int64_t n) {
    if (!gs__gemm_isa_available(isa)) isa = GS__ISA_SCALAR;
    GS__VK_RUN(isa, gs__vk_round_bf16, (x, y, n));
}

GS__FN void gs__vk_reduce_rows(int isa, int kind, int bf, const float *x, int64_t rows, int64_t L, float init,
                               float *y) {
    if (!gs__gemm_isa_available(isa)) isa = GS__ISA_SCALAR;
    GS__VK_RUN(isa, gs__vk_reduce_rows, (kind, bf, x, rows, L, init, y));
}

/* y[o, i] must hold the starting values (init) */
GS__FN void gs__vk_reduce_cols(int isa, int kind, int bf, const float *x, int64_t outer, int64_t L, int64_t inner,
                               float *y) {
    if (!gs__gemm_isa_available(isa)) isa = GS__ISA_SCALAR;
    GS__VK_RUN(isa, gs__vk_reduce_cols, (kind, bf, x, outer, L, inner, y));
}
