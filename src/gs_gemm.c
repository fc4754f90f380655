#ifndef GS__FN /* standalone builds (bench, tests) may pre-define GS__FN + the std headers */
#include "gs_internal.h"
#endif

/* ==========================================================================================
 * gs_gemm.c -- single-threaded f32 GEMM:  C[M,N] = (accumulate ? C : 0) + A[M,K] * B[K,N]
 *
 * GotoBLAS/BLIS-style structure:
 *   for jc in N step NC:                 (B panel  KC x NC lives in L2/L3)
 *     for pc in K step KC:   pack B      (micro-panels of NR columns, zero padded)
 *       for ic in M step MC: pack A      (micro-panels of MR rows, zero padded; lives in L2)
 *         for jr in NC step NR:
 *           for ir in MC step MR: micro-kernel  MR x NR register tile, k-loop over KC
 * Edge tiles are computed in full on the zero-padded panels and written back masked.
 *
 * The register tile is chosen at compile time (block sizes KC/MC/NC tuned on an AVX-512 EPYC):
 *   __AVX512F__          : 8 x 32   (16 zmm accumulators, FMA via <immintrin.h>), KC 1024 MC 96 NC 1024
 *   __AVX__ (+__FMA__)   : 6 x 16   (12 ymm accumulators),                        KC 512  MC 96 NC 2048
 *   other GNUC (SSE2,...): 6 x 8    (12 xmm accumulators; A packed pre-broadcast on x86, 8 x 8 on aarch64)
 *   non-GNUC compilers   : 4 x 16 plain-C loops (auto-vectorisable)
 * Define GS_GEMM_PORTABLE to force the plain-C micro-kernel. FMA is used through intrinsics so that
 * gcc's -std=c99 (which turns off FP contraction) still gets fused multiply-adds.
 *
 * Degenerate / skinny shapes: M == 0 or N == 0 -> nothing; K == 0 -> C = accumulate ? C : 0;
 * M == 1 -> axpy over B rows; M <= 16 -> unpacked kernel on groups of <= 4 rows (packing B would cost
 * as much as the math); N <= NR/4 -> dot products against packed columns of B (no padding waste).
 * ========================================================================================== */

#if defined(__GNUC__) && !defined(GS_GEMM_PORTABLE)
#  define GS__GEMM_VEC 1
#  if defined(__AVX512F__)
#    include <immintrin.h>
#    define GS__GEMM_VL 16
#    define GS__GEMM_MR 8
#    define GS__GEMM_KC_DEF 1024 /* long k-loop: fewer C tile reloads (C rows 4 KiB apart alias in L1) */
#    define GS__GEMM_MC_DEF 96
#    define GS__GEMM_NC_DEF 1024
#    define GS__GEMM_FMA(c, a, b) ((c) = _mm512_fmadd_ps((a), (b), (c)))
#  elif defined(__AVX__)
#    define GS__GEMM_VL 8
#    define GS__GEMM_MR 6
#    define GS__GEMM_KC_DEF 512
#    define GS__GEMM_MC_DEF 96
#    define GS__GEMM_NC_DEF 2048
#    if defined(__FMA__)
#      include <immintrin.h>
#      define GS__GEMM_FMA(c, a, b) ((c) = _mm256_fmadd_ps((a), (b), (c)))
#    endif
#  else
#    define GS__GEMM_VL 4
#    ifndef GS__GEMM_MR
#    if defined(__aarch64__)
#      define GS__GEMM_MR 8
#    else
#      define GS__GEMM_MR 6
#    endif
#    endif
#    ifndef GS__GEMM_UNROLL4
#      define GS__GEMM_UNROLL4 0 /* x86 SSE: unrolling makes gcc hoist broadcasts and spill */
#    endif
#    if !defined(GS__GEMM_AREP) && !defined(__aarch64__) && !defined(__ARM_NEON)
#      define GS__GEMM_AREP GS__GEMM_VL /* SSE has no cheap broadcast: pack A pre-broadcast */
#    endif
#    define GS__GEMM_KC_DEF 256
#    define GS__GEMM_MC_DEF 96
#    define GS__GEMM_NC_DEF 2048
#  endif
#  ifndef GS__GEMM_FMA
#    define GS__GEMM_FMA(c, a, b) ((c) += (a) * (b))
#  endif
#  ifndef GS__GEMM_UNROLL4
#    define GS__GEMM_UNROLL4 1 /* unroll the micro-kernel k-loop by 4 */
#  endif
#  ifndef GS__GEMM_AREP
#    define GS__GEMM_AREP 1 /* A panel stores scalars; broadcast in the kernel */
#  endif
#  if GS__GEMM_AREP == 1
#    define GS__GEMM_LOADA(v, i)                                                                             \
        const float s_ = pa[i];                                                                              \
        const gs__gemm_vf v = GS__GEMM_SPLAT(s_)
#  else
#    define GS__GEMM_LOADA(v, i)                                                                             \
        gs__gemm_vf v;                                                                                       \
        memcpy(&v, pa + (i) * GS__GEMM_VL, sizeof v)
#  endif
#  define GS__GEMM_NR (2 * GS__GEMM_VL) /* two vectors per tile row */
typedef float gs__gemm_vf __attribute__((vector_size(GS__GEMM_VL * 4)));
#  if GS__GEMM_VL == 16
#    define GS__GEMM_SPLAT(x) {x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x}
#  elif GS__GEMM_VL == 8
#    define GS__GEMM_SPLAT(x) {x, x, x, x, x, x, x, x}
#  else
#    define GS__GEMM_SPLAT(x) {x, x, x, x}
#  endif
#  if GS__GEMM_MR == 4
#    define GS__GEMM_ROWS(X) X(0) X(1) X(2) X(3)
#  elif GS__GEMM_MR == 6
#    define GS__GEMM_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
#  elif GS__GEMM_MR == 8
#    define GS__GEMM_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#  else
#    error "unsupported GS__GEMM_MR"
#  endif
#  define GS__GEMM_RESTRICT __restrict
#else
#  define GS__GEMM_VEC 0
#  define GS__GEMM_AREP 1
#  define GS__GEMM_MR 4
#  define GS__GEMM_NR 16
#  define GS__GEMM_KC_DEF 256
#  define GS__GEMM_MC_DEF 96
#  define GS__GEMM_NC_DEF 2048
#  if defined(_MSC_VER)
#    define GS__GEMM_RESTRICT __restrict
#  else
#    define GS__GEMM_RESTRICT
#  endif
#endif

/* cache block sizes (overridable for tuning) */
#ifndef GS__GEMM_KC
#define GS__GEMM_KC GS__GEMM_KC_DEF
#endif
#ifndef GS__GEMM_MC
#define GS__GEMM_MC GS__GEMM_MC_DEF
#endif
#ifndef GS__GEMM_NC
#define GS__GEMM_NC GS__GEMM_NC_DEF
#endif

/* below these sizes the padded micro-kernel wastes too much; use axpy / dot paths */
#ifndef GS__GEMM_SMALL_M
#define GS__GEMM_SMALL_M 16 /* M <= this: unpacked small-M path */
#endif
#ifndef GS__GEMM_SMALL_N
#define GS__GEMM_SMALL_N (GS__GEMM_NR / 4) /* N <= this: dot-product path */
#endif

static int64_t gs__gemm_min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t gs__gemm_rup(int64_t a, int64_t m) { return (a + m - 1) / m * m; }

/* block sizes actually used for a problem (balanced so the last block is not tiny) */
static void gs__gemm_blocks(int64_t M, int64_t N, int64_t K, int64_t *mc, int64_t *kc, int64_t *nc)
{
    int64_t nb;
    nb = (K + GS__GEMM_KC - 1) / GS__GEMM_KC;
    *kc = nb > 0 ? (K + nb - 1) / nb : 0;
    nb = (M + GS__GEMM_MC - 1) / GS__GEMM_MC;
    *mc = nb > 0 ? gs__gemm_rup((M + nb - 1) / nb, GS__GEMM_MR) : 0;
    *nc = gs__gemm_min64(gs__gemm_rup(N, GS__GEMM_NR), GS__GEMM_NC);
}

GS__FN size_t gs__sgemm_work_floats(int64_t M, int64_t N, int64_t K)
{
    int64_t mc, kc, nc;
    if (M <= 0 || N <= 0 || K <= 0) return 0;
    gs__gemm_blocks(M, N, K, &mc, &kc, &nc);
    /* packed A (mc x kc) + packed B (kc x nc), each 64-byte aligned inside the buffer */
    return (size_t)(gs__gemm_rup(mc * kc * GS__GEMM_AREP, 16) + kc * nc + 32);
}

/* ---------------------------------------------------------------- vector helpers */

/* y[0..n) += s * x[0..n) */
static void gs__gemm_axpy(int64_t n, float s, const float *GS__GEMM_RESTRICT x, float *GS__GEMM_RESTRICT y)
{
    int64_t j = 0;
#if GS__GEMM_VEC
    gs__gemm_vf vs = GS__GEMM_SPLAT(s);
    for (; j + 2 * GS__GEMM_VL <= n; j += 2 * GS__GEMM_VL) {
        gs__gemm_vf x0, x1, y0, y1;
        memcpy(&x0, x + j, sizeof x0);
        memcpy(&x1, x + j + GS__GEMM_VL, sizeof x1);
        memcpy(&y0, y + j, sizeof y0);
        memcpy(&y1, y + j + GS__GEMM_VL, sizeof y1);
        GS__GEMM_FMA(y0, vs, x0);
        GS__GEMM_FMA(y1, vs, x1);
        memcpy(y + j, &y0, sizeof y0);
        memcpy(y + j + GS__GEMM_VL, &y1, sizeof y1);
    }
#endif
    for (; j < n; j++) y[j] += s * x[j];
}

/* sum_k x[k] * y[k] */
static float gs__gemm_dot(int64_t n, const float *x, const float *y)
{
    int64_t k = 0;
    float s = 0.0f;
#if GS__GEMM_VEC
    {
        gs__gemm_vf a0 = GS__GEMM_SPLAT(0.0f), a1 = a0, a2 = a0, a3 = a0;
        float part[GS__GEMM_VL];
        int t;
        for (; k + 4 * GS__GEMM_VL <= n; k += 4 * GS__GEMM_VL) {
            gs__gemm_vf x0, x1, x2, x3, y0, y1, y2, y3;
            memcpy(&x0, x + k, sizeof x0);
            memcpy(&x1, x + k + GS__GEMM_VL, sizeof x1);
            memcpy(&x2, x + k + 2 * GS__GEMM_VL, sizeof x2);
            memcpy(&x3, x + k + 3 * GS__GEMM_VL, sizeof x3);
            memcpy(&y0, y + k, sizeof y0);
            memcpy(&y1, y + k + GS__GEMM_VL, sizeof y1);
            memcpy(&y2, y + k + 2 * GS__GEMM_VL, sizeof y2);
            memcpy(&y3, y + k + 3 * GS__GEMM_VL, sizeof y3);
            GS__GEMM_FMA(a0, x0, y0);
            GS__GEMM_FMA(a1, x1, y1);
            GS__GEMM_FMA(a2, x2, y2);
            GS__GEMM_FMA(a3, x3, y3);
        }
        for (; k + GS__GEMM_VL <= n; k += GS__GEMM_VL) {
            gs__gemm_vf x0, y0;
            memcpy(&x0, x + k, sizeof x0);
            memcpy(&y0, y + k, sizeof y0);
            GS__GEMM_FMA(a0, x0, y0);
        }
        a0 = (a0 + a1) + (a2 + a3);
        memcpy(part, &a0, sizeof part);
        for (t = 0; t < GS__GEMM_VL; t++) s += part[t];
    }
#else
    {
        float part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        int t;
        for (; k + 8 <= n; k += 8)
            for (t = 0; t < 8; t++) part[t] += x[k + t] * y[k + t];
        for (t = 0; t < 8; t++) s += part[t];
    }
#endif
    for (; k < n; k++) s += x[k] * y[k];
    return s;
}

/* ---------------------------------------------------------------- packing */

/* A[mc x kc] (row-major, lda) -> micro-panels of MR rows: pa[(ir/MR)*MR*kc + k*MR + r] */
static void gs__gemm_pack_a(int64_t mc, int64_t kc, const float *A, int64_t lda, float *pa)
{
    int64_t ir, k;
    int r;
    for (ir = 0; ir < mc; ir += GS__GEMM_MR) {
        const int64_t mr = gs__gemm_min64(GS__GEMM_MR, mc - ir);
        const float *a = A + ir * lda;
        float *d = pa + ir * kc * GS__GEMM_AREP;
#if GS__GEMM_AREP == 1
        if (mr == GS__GEMM_MR) {
            const float *rows[GS__GEMM_MR];
            for (r = 0; r < GS__GEMM_MR; r++) rows[r] = a + r * lda;
            for (k = 0; k < kc; k++) {
                for (r = 0; r < GS__GEMM_MR; r++) d[r] = rows[r][k];
                d += GS__GEMM_MR;
            }
        } else {
            for (k = 0; k < kc; k++) {
                for (r = 0; r < GS__GEMM_MR; r++) d[r] = r < mr ? a[r * lda + k] : 0.0f;
                d += GS__GEMM_MR;
            }
        }
#else /* each element stored GS__GEMM_AREP times (pre-broadcast vectors) */
        for (k = 0; k < kc; k++) {
            for (r = 0; r < GS__GEMM_MR; r++) {
                const float v = r < mr ? a[r * lda + k] : 0.0f;
                int t;
                for (t = 0; t < GS__GEMM_AREP; t++) d[r * GS__GEMM_AREP + t] = v;
            }
            d += GS__GEMM_MR * GS__GEMM_AREP;
        }
#endif
    }
}

/* B[kc x nc] (row-major, ldb) -> micro-panels of NR columns: pb[(jr/NR)*NR*kc + k*NR + j] */
static void gs__gemm_pack_b(int64_t kc, int64_t nc, const float *B, int64_t ldb, float *pb)
{
    int64_t jr, k;
    for (jr = 0; jr < nc; jr += GS__GEMM_NR) {
        const int64_t nr = gs__gemm_min64(GS__GEMM_NR, nc - jr);
        const float *b = B + jr;
        float *d = pb + jr * kc;
        if (nr == GS__GEMM_NR) {
            for (k = 0; k < kc; k++) {
                memcpy(d, b, GS__GEMM_NR * sizeof(float));
                b += ldb;
                d += GS__GEMM_NR;
            }
        } else {
            for (k = 0; k < kc; k++) {
                memcpy(d, b, (size_t)nr * sizeof(float));
                memset(d + nr, 0, (size_t)(GS__GEMM_NR - nr) * sizeof(float));
                b += ldb;
                d += GS__GEMM_NR;
            }
        }
    }
}

/* ---------------------------------------------------------------- micro-kernel */

/* masked write-back of a full MR x NR tile held in ab (row stride NR) */
static void gs__gemm_store_edge(const float *ab, float *C, int64_t ldc, int64_t mr, int64_t nr, int acc)
{
    int64_t i, j;
    for (i = 0; i < mr; i++) {
        float *c = C + i * ldc;
        const float *s = ab + i * GS__GEMM_NR;
        if (acc)
            for (j = 0; j < nr; j++) c[j] += s[j];
        else
            for (j = 0; j < nr; j++) c[j] = s[j];
    }
}

#if GS__GEMM_VEC

/* C[mr x nr] (+)= pa-panel (MR x kc) * pb-panel (kc x NR) */
static void gs__gemm_ukr(int64_t kc, const float *GS__GEMM_RESTRICT pa, const float *GS__GEMM_RESTRICT pb,
                         float *C, int64_t ldc, int64_t mr, int64_t nr, int acc)
{
    const gs__gemm_vf vz = GS__GEMM_SPLAT(0.0f);
    int64_t k;
#define GS__GEMM_DECL(i) gs__gemm_vf c##i##_0 = vz, c##i##_1 = vz;
#define GS__GEMM_STEP(i)                                                                                     \
    {                                                                                                        \
        GS__GEMM_LOADA(a_, i);                                                                               \
        GS__GEMM_FMA(c##i##_0, a_, b0);                                                                      \
        GS__GEMM_FMA(c##i##_1, a_, b1);                                                                      \
    }
#define GS__GEMM_ITER                                                                                        \
    {                                                                                                        \
        gs__gemm_vf b0, b1;                                                                                  \
        memcpy(&b0, pb, sizeof b0);                                                                          \
        memcpy(&b1, pb + GS__GEMM_VL, sizeof b1);                                                            \
        GS__GEMM_ROWS(GS__GEMM_STEP)                                                                         \
        pa += GS__GEMM_MR * GS__GEMM_AREP;                                                                   \
        pb += GS__GEMM_NR;                                                                                   \
    }
    GS__GEMM_ROWS(GS__GEMM_DECL)
#if GS__GEMM_UNROLL4
    for (k = 0; k + 4 <= kc; k += 4) {
        GS__GEMM_ITER
        GS__GEMM_ITER
        GS__GEMM_ITER
        GS__GEMM_ITER
    }
#else
    k = 0;
#endif
    for (; k < kc; k++) GS__GEMM_ITER

    if (mr == GS__GEMM_MR && nr == GS__GEMM_NR) {
        if (acc) {
#define GS__GEMM_STORE_ACC(i)                                                                                \
    {                                                                                                        \
        float *cr_ = C + (i) * ldc;                                                                          \
        gs__gemm_vf t0_, t1_;                                                                                \
        memcpy(&t0_, cr_, sizeof t0_);                                                                       \
        memcpy(&t1_, cr_ + GS__GEMM_VL, sizeof t1_);                                                         \
        t0_ += c##i##_0;                                                                                     \
        t1_ += c##i##_1;                                                                                     \
        memcpy(cr_, &t0_, sizeof t0_);                                                                       \
        memcpy(cr_ + GS__GEMM_VL, &t1_, sizeof t1_);                                                         \
    }
            GS__GEMM_ROWS(GS__GEMM_STORE_ACC)
        } else {
#define GS__GEMM_STORE_SET(i)                                                                                \
    {                                                                                                        \
        float *cr_ = C + (i) * ldc;                                                                          \
        memcpy(cr_, &c##i##_0, sizeof c##i##_0);                                                             \
        memcpy(cr_ + GS__GEMM_VL, &c##i##_1, sizeof c##i##_1);                                               \
    }
            GS__GEMM_ROWS(GS__GEMM_STORE_SET)
        }
    } else {
        float ab[GS__GEMM_MR * GS__GEMM_NR];
#define GS__GEMM_STORE_TMP(i)                                                                                \
    memcpy(ab + (i) * GS__GEMM_NR, &c##i##_0, sizeof c##i##_0);                                              \
    memcpy(ab + (i) * GS__GEMM_NR + GS__GEMM_VL, &c##i##_1, sizeof c##i##_1);
        GS__GEMM_ROWS(GS__GEMM_STORE_TMP)
        gs__gemm_store_edge(ab, C, ldc, mr, nr, acc);
    }
#undef GS__GEMM_DECL
#undef GS__GEMM_STEP
#undef GS__GEMM_ITER
#undef GS__GEMM_STORE_ACC
#undef GS__GEMM_STORE_SET
#undef GS__GEMM_STORE_TMP
}

#else /* plain C micro-kernel (non-GNUC compilers or GS_GEMM_PORTABLE) */

static void gs__gemm_ukr(int64_t kc, const float *GS__GEMM_RESTRICT pa, const float *GS__GEMM_RESTRICT pb,
                         float *C, int64_t ldc, int64_t mr, int64_t nr, int acc)
{
    float ab[GS__GEMM_MR * GS__GEMM_NR];
    int64_t k;
    int i, j;
    for (i = 0; i < GS__GEMM_MR * GS__GEMM_NR; i++) ab[i] = 0.0f;
    for (k = 0; k < kc; k++) {
        for (i = 0; i < GS__GEMM_MR; i++) {
            const float s = pa[i];
            float *r = ab + i * GS__GEMM_NR;
            for (j = 0; j < GS__GEMM_NR; j++) r[j] += s * pb[j];
        }
        pa += GS__GEMM_MR;
        pb += GS__GEMM_NR;
    }
    gs__gemm_store_edge(ab, C, ldc, mr, nr, acc);
}

#endif

/* ---------------------------------------------------------------- small-shape paths */

/* M tiny: C[i,:] (+)= sum_k A[i,k] * B[k,:], row by row with axpy over B rows (no packing) */
static void gs__gemm_rows(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
                             int64_t ldb, float *C, int64_t ldc, int accumulate)
{
    const int64_t JB = 2048; /* keep the C row chunk in L1 */
    int64_t i, j0, k;
    for (i = 0; i < M; i++) {
        float *c = C + i * ldc;
        const float *a = A + i * lda;
        if (!accumulate) memset(c, 0, (size_t)N * sizeof(float));
        for (j0 = 0; j0 < N; j0 += JB) {
            const int64_t nb = gs__gemm_min64(JB, N - j0);
            for (k = 0; k < K; k++) gs__gemm_axpy(nb, a[k], B + k * ldb + j0, c + j0);
        }
    }
}

#if GS__GEMM_VEC
/* Direct (unpacked) kernel for a group of R = 1, 2 or 4 rows of A: B rows are streamed NR columns at a
   time, C kept in registers. Used for small M where packing B would cost as much as the math. */
#define GS__GEMM_R1(X) X(0)
#define GS__GEMM_R2(X) X(0) X(1)
#define GS__GEMM_R3(X) X(0) X(1) X(2)
#define GS__GEMM_R4(X) X(0) X(1) X(2) X(3)
#define GS__GEMM_DDECL(i) gs__gemm_vf c##i##_0 = vz, c##i##_1 = vz;
#define GS__GEMM_DSTEP(i)                                                                                    \
    {                                                                                                        \
        const float s_ = A[(i) * lda + k];                                                                   \
        const gs__gemm_vf a_ = GS__GEMM_SPLAT(s_);                                                           \
        GS__GEMM_FMA(c##i##_0, a_, b0);                                                                      \
        GS__GEMM_FMA(c##i##_1, a_, b1);                                                                      \
    }
#define GS__GEMM_DSTORE(i)                                                                                   \
    {                                                                                                        \
        float *cr_ = C + (i) * ldc + j;                                                                      \
        if (acc) {                                                                                           \
            gs__gemm_vf t0_, t1_;                                                                            \
            memcpy(&t0_, cr_, sizeof t0_);                                                                   \
            memcpy(&t1_, cr_ + GS__GEMM_VL, sizeof t1_);                                                     \
            c##i##_0 += t0_;                                                                                 \
            c##i##_1 += t1_;                                                                                 \
        }                                                                                                    \
        memcpy(cr_, &c##i##_0, sizeof c##i##_0);                                                             \
        memcpy(cr_ + GS__GEMM_VL, &c##i##_1, sizeof c##i##_1);                                               \
    }
#define GS__GEMM_DIRECT_FN(name, R, ROWS)                                                                    \
    static void name(int64_t N, int64_t K, const float *A, int64_t lda, const float *B, int64_t ldb,         \
                     float *C, int64_t ldc, int acc)                                                         \
    {                                                                                                        \
        const gs__gemm_vf vz = GS__GEMM_SPLAT(0.0f);                                                         \
        int64_t j, k;                                                                                        \
        int r;                                                                                               \
        for (j = 0; j + GS__GEMM_NR <= N; j += GS__GEMM_NR) {                                                \
            ROWS(GS__GEMM_DDECL)                                                                             \
            const float *b = B + j;                                                                          \
            for (k = 0; k < K; k++) {                                                                        \
                gs__gemm_vf b0, b1;                                                                          \
                memcpy(&b0, b, sizeof b0);                                                                   \
                memcpy(&b1, b + GS__GEMM_VL, sizeof b1);                                                     \
                b += ldb;                                                                                    \
                ROWS(GS__GEMM_DSTEP)                                                                         \
            }                                                                                                \
            ROWS(GS__GEMM_DSTORE)                                                                            \
        }                                                                                                    \
        for (r = 0; r < (R); r++) { /* column tail (< NR): plain loops */                                    \
            float *c = C + r * ldc;                                                                          \
            const float *a = A + r * lda;                                                                    \
            int64_t jj;                                                                                      \
            if (j >= N) break;                                                                               \
            if (!acc)                                                                                        \
                for (jj = j; jj < N; jj++) c[jj] = 0.0f;                                                     \
            for (k = 0; k < K; k++)                                                                          \
                for (jj = j; jj < N; jj++) c[jj] += a[k] * B[k * ldb + jj];                                  \
        }                                                                                                    \
    }
GS__GEMM_DIRECT_FN(gs__gemm_direct1, 1, GS__GEMM_R1)
GS__GEMM_DIRECT_FN(gs__gemm_direct2, 2, GS__GEMM_R2)
GS__GEMM_DIRECT_FN(gs__gemm_direct3, 3, GS__GEMM_R3)
GS__GEMM_DIRECT_FN(gs__gemm_direct4, 4, GS__GEMM_R4)
#undef GS__GEMM_DDECL
#undef GS__GEMM_DSTEP
#undef GS__GEMM_DSTORE
#undef GS__GEMM_DIRECT_FN
#undef GS__GEMM_R1
#undef GS__GEMM_R2
#undef GS__GEMM_R3
#undef GS__GEMM_R4

static void gs__gemm_small_m(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
                             int64_t ldb, float *C, int64_t ldc, int accumulate)
{
    int64_t i = 0;
    /* groups of 4 rows; a remainder of 1 (M >= 5) is done as 3 + 2 to avoid the latency-bound 1-row case */
    for (; M - i >= 4 && M - i != 5; i += 4)
        gs__gemm_direct4(N, K, A + i * lda, lda, B, ldb, C + i * ldc, ldc, accumulate);
    if (M - i == 5) {
        gs__gemm_direct3(N, K, A + i * lda, lda, B, ldb, C + i * ldc, ldc, accumulate);
        i += 3;
    }
    if (M - i == 3) gs__gemm_direct3(N, K, A + i * lda, lda, B, ldb, C + i * ldc, ldc, accumulate);
    if (M - i == 2) gs__gemm_direct2(N, K, A + i * lda, lda, B, ldb, C + i * ldc, ldc, accumulate);
    if (M - i == 1) gs__gemm_direct1(N, K, A + i * lda, lda, B, ldb, C + i * ldc, ldc, accumulate);
}
#endif /* GS__GEMM_VEC */

#if GS__GEMM_VEC
/* out[r] = dot(a + r*lda, b) for r = 0..3 (four rows share each load of b) */
static void gs__gemm_dot4(int64_t n, const float *a, int64_t lda, const float *b, float *out)
{
    const gs__gemm_vf vz = GS__GEMM_SPLAT(0.0f);
    gs__gemm_vf s0 = vz, s1 = vz, s2 = vz, s3 = vz, t0 = vz, t1 = vz, t2 = vz, t3 = vz;
    const float *a0 = a, *a1 = a + lda, *a2 = a + 2 * lda, *a3 = a + 3 * lda;
    float part[4][GS__GEMM_VL];
    int64_t k = 0;
    int r, t;
#define GS__GEMM_DOT4_STEP(S0, S1, S2, S3, off)                                                              \
    {                                                                                                        \
        gs__gemm_vf bv, x0, x1, x2, x3;                                                                      \
        memcpy(&bv, b + k + (off), sizeof bv);                                                               \
        memcpy(&x0, a0 + k + (off), sizeof x0);                                                              \
        memcpy(&x1, a1 + k + (off), sizeof x1);                                                              \
        memcpy(&x2, a2 + k + (off), sizeof x2);                                                              \
        memcpy(&x3, a3 + k + (off), sizeof x3);                                                              \
        GS__GEMM_FMA(S0, x0, bv);                                                                            \
        GS__GEMM_FMA(S1, x1, bv);                                                                            \
        GS__GEMM_FMA(S2, x2, bv);                                                                            \
        GS__GEMM_FMA(S3, x3, bv);                                                                            \
    }
    for (; k + 2 * GS__GEMM_VL <= n; k += 2 * GS__GEMM_VL) {
        GS__GEMM_DOT4_STEP(s0, s1, s2, s3, 0)
        GS__GEMM_DOT4_STEP(t0, t1, t2, t3, GS__GEMM_VL)
    }
    for (; k + GS__GEMM_VL <= n; k += GS__GEMM_VL) GS__GEMM_DOT4_STEP(s0, s1, s2, s3, 0)
#undef GS__GEMM_DOT4_STEP
    s0 += t0;
    s1 += t1;
    s2 += t2;
    s3 += t3;
    memcpy(part[0], &s0, sizeof s0);
    memcpy(part[1], &s1, sizeof s1);
    memcpy(part[2], &s2, sizeof s2);
    memcpy(part[3], &s3, sizeof s3);
    for (r = 0; r < 4; r++) {
        const float *ar = a + r * lda;
        float acc = 0.0f;
        int64_t kk;
        for (t = 0; t < GS__GEMM_VL; t++) acc += part[r][t];
        for (kk = k; kk < n; kk++) acc += ar[kk] * b[kk];
        out[r] = acc;
    }
}
#endif

/* N tiny: C[i,j] (+)= dot(A[i,:], B[:,j]); chunks of B's columns are packed contiguously into bt */
static void gs__gemm_small_n(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
                             int64_t ldb, float *C, int64_t ldc, int accumulate, float *bt, int64_t kcb)
{
    int64_t pc, i, j, k;
    for (pc = 0; pc < K; pc += kcb) {
        const int64_t kc = gs__gemm_min64(kcb, K - pc);
        const int acc = pc == 0 ? accumulate : 1;
        for (k = 0; k < kc; k++)
            for (j = 0; j < N; j++) bt[j * kc + k] = B[(pc + k) * ldb + j];
        i = 0;
#if GS__GEMM_VEC
        for (; i + 4 <= M; i += 4) {
            const float *a = A + i * lda + pc;
            float *c = C + i * ldc;
            float d[4];
            int r;
            for (j = 0; j < N; j++) {
                gs__gemm_dot4(kc, a, lda, bt + j * kc, d);
                for (r = 0; r < 4; r++) c[r * ldc + j] = acc ? c[r * ldc + j] + d[r] : d[r];
            }
        }
#endif
        for (; i < M; i++) {
            const float *a = A + i * lda + pc;
            float *c = C + i * ldc;
            for (j = 0; j < N; j++) {
                const float d = gs__gemm_dot(kc, a, bt + j * kc);
                c[j] = acc ? c[j] + d : d;
            }
        }
    }
}

/* ---------------------------------------------------------------- driver */

GS__FN void gs__sgemm(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B, int64_t ldb,
                      float *C, int64_t ldc, int accumulate, float *work)
{
    int64_t mcb, kcb, ncb, jc, pc, ic, jr, ir;
    float *pa, *pb;
    if (M <= 0 || N <= 0) return;
    if (K <= 0) {
        if (!accumulate)
            for (ic = 0; ic < M; ic++) memset(C + ic * ldc, 0, (size_t)N * sizeof(float));
        return;
    }
    if (M == 1 || (!GS__GEMM_VEC && M <= 2)) {
        gs__gemm_rows(M, N, K, A, lda, B, ldb, C, ldc, accumulate);
        return;
    }
#if GS__GEMM_VEC
    if (M <= GS__GEMM_SMALL_M) {
        gs__gemm_small_m(M, N, K, A, lda, B, ldb, C, ldc, accumulate);
        return;
    }
#endif
    gs__gemm_blocks(M, N, K, &mcb, &kcb, &ncb);
    pa = (float *)(((uintptr_t)work + 63) & ~(uintptr_t)63);
    pb = pa + gs__gemm_rup(mcb * kcb * GS__GEMM_AREP, 16);
    if (N <= GS__GEMM_SMALL_N) { /* B^T chunks may use the whole work area (>= N * kcb floats) */
        const int64_t avail = gs__gemm_rup(mcb * kcb * GS__GEMM_AREP, 16) + kcb * ncb;
        gs__gemm_small_n(M, N, K, A, lda, B, ldb, C, ldc, accumulate, pa, gs__gemm_min64(K, avail / N));
        return;
    }
    for (jc = 0; jc < N; jc += ncb) {
        const int64_t nc = gs__gemm_min64(ncb, N - jc);
        for (pc = 0; pc < K; pc += kcb) {
            const int64_t kc = gs__gemm_min64(kcb, K - pc);
            const int acc = pc == 0 ? accumulate : 1;
            gs__gemm_pack_b(kc, nc, B + pc * ldb + jc, ldb, pb);
            for (ic = 0; ic < M; ic += mcb) {
                const int64_t mc = gs__gemm_min64(mcb, M - ic);
                gs__gemm_pack_a(mc, kc, A + ic * lda + pc, lda, pa);
                for (jr = 0; jr < nc; jr += GS__GEMM_NR) {
                    const int64_t nr = gs__gemm_min64(GS__GEMM_NR, nc - jr);
                    for (ir = 0; ir < mc; ir += GS__GEMM_MR) {
                        const int64_t mr = gs__gemm_min64(GS__GEMM_MR, mc - ir);
                        gs__gemm_ukr(kc, pa + ir * kc * GS__GEMM_AREP, pb + jr * kc, C + (ic + ir) * ldc + jc + jr, ldc, mr, nr,
                                     acc);
                    }
                }
            }
        }
    }
}
