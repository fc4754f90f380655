/* test_semantics.c - the reference interpreter against XLA's documented operation semantics.
 *
 * Every expected value here comes from XLA's operation-semantics page (its worked examples are reproduced
 * number for number) or from XLA's HloEvaluator rules worked out by hand, never from running gs_eval. Where
 * XLA leaves a result implementation-defined, the test checks the choice gs_api.h documents. */
#include "test.h"
#include <float.h>
#include <limits.h>

/* ---- utilities ---- */
static gs_shape T0(gs_dtype t) { return gs_shape_scalar(t); }
static gs_shape T1(gs_dtype t, int64_t a) { return gs_shape_make(t, 1, &a); }
static gs_shape T2(gs_dtype t, int64_t a, int64_t b) {
    int64_t d[2];
    d[0] = a; d[1] = b;
    return gs_shape_make(t, 2, d);
}
static gs_shape T3(gs_dtype t, int64_t a, int64_t b, int64_t c) {
    int64_t d[3];
    d[0] = a; d[1] = b; d[2] = c;
    return gs_shape_make(t, 3, d);
}

/* evaluates a graph without parameters whose outputs are outs[0..n) into out[0..n) */
static gs_result eval_outputs(gs_graph *g, int n, gs_value *const *outs, void *const *out) {
    gs_result r = gs_graph_set_outputs(g, n, outs);
    if (r == GS_OK) r = gs_eval(g, NULL, out);
    if (r != GS_OK) fprintf(stderr, "    eval failed: %s\n", gs_ctx_error_msg(gs_graph_ctx(g)));
    return r;
}

static gs_result eval1(gs_graph *g, gs_value *root, void *out0) {
    void *out[1];
    out[0] = out0;
    if (!root) {
        fprintf(stderr, "    builder failed: %s\n", gs_ctx_error_msg(gs_graph_ctx(g)));
        return GS_ERR_INVALID_ARG;
    }
    return eval_outputs(g, 1, &root, out);
}

static gs_value *cf(gs_graph *g, gs_shape s, const float *d) { return gs_constant(g, s, d); }
static gs_value *ci(gs_graph *g, gs_shape s, const int32_t *d) { return gs_constant(g, s, d); }
static gs_value *cu(gs_graph *g, gs_shape s, const uint32_t *d) { return gs_constant(g, s, d); }

static uint32_t bits_of(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

#define CHECK_FLOATS(got, want, n) do { int gst_i; \
    for (gst_i = 0; gst_i < (n); gst_i++) \
        CHECK_MSG((got)[gst_i] == (want)[gst_i], "element %d: %.9g, expected %.9g", gst_i, (double)(got)[gst_i], \
                  (double)(want)[gst_i]); } while (0)
#define CHECK_INTS(got, want, n) do { int gst_i; \
    for (gst_i = 0; gst_i < (n); gst_i++) \
        CHECK_MSG((got)[gst_i] == (want)[gst_i], "element %d: %lld, expected %lld", gst_i, (long long)(got)[gst_i], \
                  (long long)(want)[gst_i]); } while (0)

/* ======================================================================================================
   Integer power. XLA's HloEvaluator (HandlePower): x^0 = 1 and 1^y = 1 first; then for a signed type a
   negative exponent gives 1 if the base is 1 and 0 otherwise (so (-1)^-1 = 0, not -1); otherwise
   exponentiation by squaring in the unsigned type (wrapping). XLA's CPU/GPU emitters do the same.
   ====================================================================================================== */
static void test_sem_power_int_negative_exponent(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    int32_t a[10] = {-1, -1, -1, 1, 2, 0, -2, 7, 0, -3};
    int32_t b[10] = {-1, -2, -3, -5, -1, -1, 3, 0, 0, 5};
    int32_t want[10] = {0, 0, 0, 1, 0, 0, -8, 1, 1, -243};
    int32_t y[10];
    CHECK_OK(eval1(g, gs_binary(g, GS_OP_POWER, ci(g, T1(GS_S32, 10), a), ci(g, T1(GS_S32, 10), b)), y));
    CHECK_INTS(y, want, 10);
    gs_ctx_destroy(ctx);
}

static void test_sem_power_wraps_and_float_case0(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    uint32_t ua[3] = {3, 2, 0}, ub[3] = {40, 31, 0}, uy[3], uw[3];
    int32_t sa[2] = {3, -3}, sb[2] = {21, 21}, sy[2], sw[2];
    float fa[5] = {NAN, 1.0f, 0.0f, 2.0f, -8.0f}, fb[5] = {0.0f, NAN, 0.0f, -1.0f, 3.0f}, fy[5];
    gs_value *outs[3];
    void *out[3];
    uint32_t acc;
    int i;
    outs[0] = gs_binary(g, GS_OP_POWER, cu(g, T1(GS_U32, 3), ua), cu(g, T1(GS_U32, 3), ub));
    outs[1] = gs_binary(g, GS_OP_POWER, ci(g, T1(GS_S32, 2), sa), ci(g, T1(GS_S32, 2), sb));
    outs[2] = gs_binary(g, GS_OP_POWER, cf(g, T1(GS_F32, 5), fa), cf(g, T1(GS_F32, 5), fb));
    out[0] = uy; out[1] = sy; out[2] = fy;
    CHECK_OK(eval_outputs(g, 3, outs, out));
    /* independent: repeated multiplication mod 2^32 */
    for (acc = 1, i = 0; i < 40; i++) acc *= 3u;
    uw[0] = acc;
    uw[1] = 0x80000000u;
    uw[2] = 1;   /* 0^0 = 1 */
    CHECK_INTS(uy, uw, 3);
    for (acc = 1, i = 0; i < 21; i++) acc *= 3u;
    sw[0] = (int32_t)acc;
    sw[1] = (int32_t)(0u - acc);   /* (-3)^21 = -(3^21), wrapped */
    CHECK_INTS(sy, sw, 2);
    CHECK(fy[0] == 1.0f);   /* NaN^0 */
    CHECK(fy[1] == 1.0f);   /* 1^NaN */
    CHECK(fy[2] == 1.0f);   /* 0^0 */
    CHECK(fy[3] == 0.5f);
    CHECK(fy[4] == -512.0f);
    gs_ctx_destroy(ctx);
}

/* ======================================================================================================
   Integer division and remainder (HloEvaluator HandleDivide/HandleRemainder): x/0 = -1 (signed) or all ones
   (unsigned); x%0 = x; INT_MIN/-1 = INT_MIN; INT_MIN%-1 = 0; C truncation otherwise (remainder takes the
   dividend's sign).
   ====================================================================================================== */
static void test_sem_int_divide_remainder_edges(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    int32_t a[6] = {7, -7, 7, INT32_MIN, INT32_MIN, -9}, b[6] = {0, 0, -2, -1, 1, 4};
    int32_t q[6], r[6], qw[6] = {-1, -1, -3, INT32_MIN, INT32_MIN, -2}, rw[6] = {7, -7, 1, 0, 0, -1};
    uint32_t ua[2] = {5, 0xFFFFFFFFu}, ub[2] = {0, 0}, uq[2], ur[2];
    gs_value *pa = ci(g, T1(GS_S32, 6), a), *pb = ci(g, T1(GS_S32, 6), b);
    gs_value *qa = cu(g, T1(GS_U32, 2), ua), *qb = cu(g, T1(GS_U32, 2), ub), *outs[4];
    void *out[4];
    outs[0] = gs_div(g, pa, pb);
    outs[1] = gs_binary(g, GS_OP_REMAINDER, pa, pb);
    outs[2] = gs_div(g, qa, qb);
    outs[3] = gs_binary(g, GS_OP_REMAINDER, qa, qb);
    out[0] = q; out[1] = r; out[2] = uq; out[3] = ur;
    CHECK_OK(eval_outputs(g, 4, outs, out));
    CHECK_INTS(q, qw, 6);
    CHECK_INTS(r, rw, 6);
    CHECK(uq[0] == 0xFFFFFFFFu && uq[1] == 0xFFFFFFFFu);
    CHECK(ur[0] == 5 && ur[1] == 0xFFFFFFFFu);
    gs_ctx_destroy(ctx);
}

/* ======================================================================================================
   convert float -> integer (xla/literal.cc): NaN -> 0, saturate at the target range, else truncate toward
   zero; -> pred is x != 0 (NaN -> true).
   ====================================================================================================== */
static void test_sem_convert_saturates(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float x[10] = {NAN, INFINITY, -INFINITY, 3e9f, -3e9f, 2147483520.0f, -2147483648.0f, 2.9f, -2.9f, 4294967040.0f};
    int32_t s[10], sw[10] = {0, INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN, 2147483520, INT32_MIN, 2, -2, INT32_MAX};
    uint32_t u[10], uw[10] = {0, UINT32_MAX, 0, 3000000000u, 0, 2147483520u, 0, 2, 0, 4294967040u};
    uint8_t p[10], pw[10] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    gs_value *px = cf(g, T1(GS_F32, 10), x), *outs[3];
    void *out[3];
    outs[0] = gs_convert(g, px, GS_S32);
    outs[1] = gs_convert(g, px, GS_U32);
    outs[2] = gs_convert(g, px, GS_PRED);
    out[0] = s; out[1] = u; out[2] = p;
    CHECK_OK(eval_outputs(g, 3, outs, out));
    CHECK_INTS(s, sw, 10);
    CHECK_INTS(u, uw, 10);
    CHECK_INTS(p, pw, 10);
    gs_ctx_destroy(ctx);
}

/* ======================================================================================================
   sign / abs / negate on edge values. Doc: sgn(-0) = -0, sgn(NaN) = NaN, sgn(+0) = +0; integer sign is
   (0 < x) - (x < 0); integer abs and negate wrap (abs(INT_MIN) = INT_MIN).
   ====================================================================================================== */
static void test_sem_sign_abs_edges(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float x[6] = {-0.0f, 0.0f, NAN, -INFINITY, 1e-40f, -3.5f}, sg[6], ab[6];
    int32_t xi[4] = {INT32_MIN, -5, 0, 9}, sgi[4], abi[4], ngi[4];
    int32_t sgw[4] = {-1, -1, 0, 1}, abw[4] = {INT32_MIN, 5, 0, 9}, ngw[4] = {INT32_MIN, 5, 0, -9};
    uint32_t xu[3] = {0, 7, 0x80000000u}, sgu[3];
    gs_value *px = cf(g, T1(GS_F32, 6), x), *pi = ci(g, T1(GS_S32, 4), xi), *outs[6];
    void *out[6];
    outs[0] = gs_unary(g, GS_OP_SIGN, px);
    outs[1] = gs_unary(g, GS_OP_ABS, px);
    outs[2] = gs_unary(g, GS_OP_SIGN, pi);
    outs[3] = gs_unary(g, GS_OP_ABS, pi);
    outs[4] = gs_neg(g, pi);
    outs[5] = gs_unary(g, GS_OP_SIGN, cu(g, T1(GS_U32, 3), xu));
    out[0] = sg; out[1] = ab; out[2] = sgi; out[3] = abi; out[4] = ngi; out[5] = sgu;
    CHECK_OK(eval_outputs(g, 6, outs, out));
    CHECK(bits_of(sg[0]) == 0x80000000u);   /* -0 */
    CHECK(bits_of(sg[1]) == 0x00000000u);   /* +0 */
    CHECK(isnan(sg[2]));
    CHECK(sg[3] == -1.0f && sg[4] == 1.0f && sg[5] == -1.0f);
    CHECK(bits_of(ab[0]) == 0 && ab[1] == 0 && isnan(ab[2]) && ab[3] == INFINITY && ab[4] == 1e-40f && ab[5] == 3.5f);
    CHECK_INTS(sgi, sgw, 4);
    CHECK_INTS(abi, abw, 4);
    CHECK_INTS(ngi, ngw, 4);
    CHECK(sgu[0] == 0 && sgu[1] == 1 && sgu[2] == 1);
    gs_ctx_destroy(ctx);
}

/* ======================================================================================================
   compare with NaN (IEEE: only NE is true) and maximum/minimum propagating NaN from either side.
   ====================================================================================================== */
static void test_sem_compare_and_minmax_nan(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float a[3] = {NAN, 1.0f, NAN}, b[3] = {1.0f, NAN, NAN}, mx[3], mn[3];
    uint8_t r[6][3];
    gs_value *pa = cf(g, T1(GS_F32, 3), a), *pb = cf(g, T1(GS_F32, 3), b), *outs[8];
    void *out[8];
    int c, i;
    for (c = 0; c < 6; c++) {
        outs[c] = gs_compare(g, pa, pb, (gs_cmp)(GS_CMP_EQ + c));
        out[c] = r[c];
    }
    outs[6] = gs_max(g, pa, pb);
    outs[7] = gs_min(g, pa, pb);
    out[6] = mx; out[7] = mn;
    CHECK_OK(eval_outputs(g, 8, outs, out));
    for (c = 0; c < 6; c++)
        for (i = 0; i < 3; i++) CHECK_EQ_INT(r[c][i], (GS_CMP_EQ + c) == GS_CMP_NE ? 1 : 0);
    for (i = 0; i < 3; i++) CHECK(isnan(mx[i]) && isnan(mn[i]));
    gs_ctx_destroy(ctx);
}

/* ======================================================================================================
   bf16: every op rounds its result to nearest even at once, so a chain of bf16 adds differs from one f32
   chain rounded at the end.
   ====================================================================================================== */
static void test_sem_bf16_round_each_op(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    /* 1 + 2^-8 is a tie between 1 and 1 + 2^-7: even -> 1. 1 + 3*2^-8 ties between 1 + 2^-7 and 1 + 2^-6:
       even -> 1 + 2^-6. -(1 + 2^-8) -> -1. */
    float x[4] = {1.00390625f, 1.01171875f, -1.00390625f, 0.0f}, xr[4];
    float one = 1.0f, step = 0.00390625f, sum2, sum_f32;
    gs_value *bone, *bstep, *outs[3];
    void *out[3];
    x[3] = nextafterf(1.00390625f, 2.0f);   /* one f32 ulp above the tie */
    outs[0] = gs_convert(g, cf(g, T1(GS_F32, 4), x), GS_BF16);
    outs[0] = gs_convert(g, outs[0], GS_F32);
    bone = gs_convert(g, cf(g, T0(GS_F32), &one), GS_BF16);
    bstep = gs_convert(g, cf(g, T0(GS_F32), &step), GS_BF16);
    /* (1 + 2^-8) + 2^-8 in bf16: the first add rounds to 1, the second again */
    outs[1] = gs_convert(g, gs_add(g, gs_add(g, bone, bstep), bstep), GS_F32);
    outs[2] = gs_add(g, gs_add(g, cf(g, T0(GS_F32), &one), cf(g, T0(GS_F32), &step)), cf(g, T0(GS_F32), &step));
    out[0] = xr; out[1] = &sum2; out[2] = &sum_f32;
    CHECK_OK(eval_outputs(g, 3, outs, out));
    CHECK(xr[0] == 1.0f);
    CHECK(xr[1] == 1.015625f);
    CHECK(xr[2] == -1.0f);
    CHECK(xr[3] == 1.0078125f);   /* just above the tie: rounds up */
    CHECK(sum2 == 1.0f);
    CHECK(sum_f32 == 1.0078125f);
    gs_ctx_destroy(ctx);
}

/* ======================================================================================================
   Worked examples of the operation-semantics page
   ====================================================================================================== */
static void test_sem_doc_clamp(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    int32_t x[3] = {-1, 5, 9}, y[3], w[3] = {0, 5, 6};
    CHECK_OK(eval1(g, gs_clamp(g, gs_scalar(g, GS_S32, 0), ci(g, T1(GS_S32, 3), x), gs_scalar(g, GS_S32, 6)), y));
    CHECK_INTS(y, w, 3);
    gs_ctx_destroy(ctx);
}

static void fill_v423(float *v) {
    /* {{{10,11,12},{15,16,17}}, {{20,21,22},{25,26,27}}, {{30,...}}, {{40,...}}} */
    int a, b, c;
    for (a = 0; a < 4; a++)
        for (b = 0; b < 2; b++)
            for (c = 0; c < 3; c++) v[(a * 2 + b) * 3 + c] = (float)(10 * (a + 1) + 5 * b + c);
}

static void test_sem_doc_reshape_and_collapse(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float v[24], y24[24], y83[24], y46[24], one = 5.0f, s, m11;
    float w24[24] = {10, 11, 12, 15, 16, 17, 20, 21, 22, 25, 26, 27, 30, 31, 32, 35, 36, 37, 40, 41, 42, 45, 46, 47};
    int64_t d24[1] = {24}, d83[2] = {8, 3}, d46[2] = {4, 6}, d11[2] = {1, 1};
    gs_value *pv, *outs[5];
    void *out[5];
    fill_v423(v);
    pv = cf(g, T3(GS_F32, 4, 2, 3), v);
    outs[0] = gs_reshape(g, pv, 1, d24);
    outs[1] = gs_reshape(g, pv, 2, d83);
    outs[2] = gs_reshape(g, pv, 2, d46);   /* Collapse(v, {0,1}) in the doc is v01 = f32[4x6] */
    outs[3] = gs_reshape(g, cf(g, T2(GS_F32, 1, 1), &one), 0, NULL);
    outs[4] = gs_reshape(g, gs_scalar(g, GS_F32, 5), 2, d11);
    out[0] = y24; out[1] = y83; out[2] = y46; out[3] = &s; out[4] = &m11;
    CHECK_OK(eval_outputs(g, 5, outs, out));
    CHECK_FLOATS(y24, w24, 24);
    CHECK_FLOATS(y83, w24, 24);   /* row-major: the same element sequence */
    CHECK_FLOATS(y46, w24, 24);
    CHECK(y46[6] == 20 && y46[11] == 27 && y83[3] == 15);
    CHECK(s == 5.0f && m11 == 5.0f);
    gs_ctx_destroy(ctx);
}

static void test_sem_doc_concatenate(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    int32_t p[2] = {2, 3}, q[2] = {4, 5}, r[2] = {6, 7}, y1[6], w1[6] = {2, 3, 4, 5, 6, 7};
    int32_t a[6] = {1, 2, 3, 4, 5, 6}, b[2] = {7, 8}, y2[8], w2[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    gs_value *xs[3], *ys[2], *outs[2];
    void *out[2];
    xs[0] = ci(g, T1(GS_S32, 2), p);
    xs[1] = ci(g, T1(GS_S32, 2), q);
    xs[2] = ci(g, T1(GS_S32, 2), r);
    ys[0] = ci(g, T2(GS_S32, 3, 2), a);
    ys[1] = ci(g, T2(GS_S32, 1, 2), b);
    outs[0] = gs_concatenate(g, 3, xs, 0);
    outs[1] = gs_concatenate(g, 2, ys, 0);
    out[0] = y1; out[1] = y2;
    CHECK_OK(eval_outputs(g, 2, outs, out));
    CHECK_INTS(y1, w1, 6);
    CHECK_INTS(y2, w2, 8);
    gs_ctx_destroy(ctx);
}

static void test_sem_doc_dot_general(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float l1[6] = {1, 2, 3, 4, 5, 6}, r1[6] = {1, 1, 1, 2, 2, 2}, y1[4], w1[4] = {6, 12, 15, 30};
    float l2[8] = {1, 2, 3, 4, 5, 6, 7, 8}, r2[8] = {1, 0, 0, 1, 1, 0, 0, 1}, y2[8];
    gs_dot_dims d1, d2;
    gs_value *outs[2];
    void *out[2];
    memset(&d1, 0, sizeof d1);
    d1.n_contract = 1;
    d1.lhs_contract[0] = 1;
    d1.rhs_contract[0] = 1;
    memset(&d2, 0, sizeof d2);
    d2.n_contract = 1;
    d2.lhs_contract[0] = 2;
    d2.rhs_contract[0] = 1;
    d2.n_batch = 1;
    d2.lhs_batch[0] = 0;
    d2.rhs_batch[0] = 0;
    outs[0] = gs_dot(g, cf(g, T2(GS_F32, 2, 3), l1), cf(g, T2(GS_F32, 2, 3), r1), &d1);
    outs[1] = gs_dot(g, cf(g, T3(GS_F32, 2, 2, 2), l2), cf(g, T3(GS_F32, 2, 2, 2), r2), &d2);
    out[0] = y1; out[1] = y2;
    CHECK_OK(eval_outputs(g, 2, outs, out));
    CHECK_FLOATS(y1, w1, 4);
    CHECK_FLOATS(y2, l2, 8);   /* batched product with identities */
    gs_ctx_destroy(ctx);
}

static void test_sem_doc_dynamic_slice(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float a[5] = {0, 1, 2, 3, 4}, b[12], y1[2], y2[4], y3[4], y4[2];
    float w1[2] = {2, 3}, w2[4] = {7, 8, 10, 11}, w3[4] = {1, 2, 4, 5}, w4[2] = {3, 4};
    int64_t s1[1] = {2}, s2[2] = {2, 2};
    gs_value *st[2], *pa, *pb, *outs[4];
    void *out[4];
    int i;
    for (i = 0; i < 12; i++) b[i] = (float)i;
    pa = cf(g, T1(GS_F32, 5), a);
    pb = cf(g, T2(GS_F32, 4, 3), b);
    st[0] = gs_scalar(g, GS_S32, 2);
    outs[0] = gs_dynamic_slice(g, pa, st, s1);
    st[0] = gs_scalar(g, GS_S32, 2);
    st[1] = gs_scalar(g, GS_S32, 1);
    outs[1] = gs_dynamic_slice(g, pb, st, s2);
    /* clamping: start (-3, 7) becomes (0, 3 - 2 = 1) */
    st[0] = gs_scalar(g, GS_S32, -3);
    st[1] = gs_scalar(g, GS_S32, 7);
    outs[2] = gs_dynamic_slice(g, pb, st, s2);
    /* u32 start 0xFFFFFFFF is a huge positive start: clamped to 5 - 2 = 3 */
    st[0] = gs_scalar(g, GS_U32, 4294967295.0);
    outs[3] = gs_dynamic_slice(g, pa, st, s1);
    out[0] = y1; out[1] = y2; out[2] = y3; out[3] = y4;
    CHECK_OK(eval_outputs(g, 4, outs, out));
    CHECK_FLOATS(y1, w1, 2);
    CHECK_FLOATS(y2, w2, 4);
    CHECK_FLOATS(y3, w3, 4);
    CHECK_FLOATS(y4, w4, 2);
    gs_ctx_destroy(ctx);
}

static void test_sem_doc_dynamic_update_slice(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float a[5] = {0, 1, 2, 3, 4}, u[2] = {5, 6}, b[12], ub[6] = {12, 13, 14, 15, 16, 17}, y1[5], y2[12], y3[5];
    float w1[5] = {0, 1, 5, 6, 4}, w2[12] = {0, 1, 2, 3, 12, 13, 6, 14, 15, 9, 16, 17}, w3[5] = {0, 1, 2, 5, 6};
    gs_value *st[2], *pa, *outs[3];
    void *out[3];
    int i;
    for (i = 0; i < 12; i++) b[i] = (float)i;
    pa = cf(g, T1(GS_F32, 5), a);
    st[0] = gs_scalar(g, GS_S32, 2);
    outs[0] = gs_dynamic_update_slice(g, pa, cf(g, T1(GS_F32, 2), u), st);
    st[0] = gs_scalar(g, GS_S32, 1);
    st[1] = gs_scalar(g, GS_S32, 1);
    outs[1] = gs_dynamic_update_slice(g, cf(g, T2(GS_F32, 4, 3), b), cf(g, T2(GS_F32, 3, 2), ub), st);
    st[0] = gs_scalar(g, GS_S32, 4);   /* clamped to 5 - 2 = 3 */
    outs[2] = gs_dynamic_update_slice(g, pa, cf(g, T1(GS_F32, 2), u), st);
    out[0] = y1; out[1] = y2; out[2] = y3;
    CHECK_OK(eval_outputs(g, 3, outs, out));
    CHECK_FLOATS(y1, w1, 5);
    CHECK_FLOATS(y2, w2, 12);
    CHECK_FLOATS(y3, w3, 5);
    gs_ctx_destroy(ctx);
}

static void test_sem_doc_iota(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    int32_t y0[32], y1[32];
    gs_value *outs[2];
    void *out[2];
    int r, c;
    outs[0] = gs_iota(g, T2(GS_S32, 4, 8), 0);
    outs[1] = gs_iota(g, T2(GS_S32, 4, 8), 1);
    out[0] = y0; out[1] = y1;
    CHECK_OK(eval_outputs(g, 2, outs, out));
    for (r = 0; r < 4; r++)
        for (c = 0; c < 8; c++) {
            CHECK_EQ_INT(y0[r * 8 + c], r);
            CHECK_EQ_INT(y1[r * 8 + c], c);
        }
    gs_ctx_destroy(ctx);
}

static void test_sem_doc_reduce(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    /* the 2x3 matrix {{1,2,3},{4,5,6}}, and a 4x2x3 array of it replicated along dim 0 */
    float m[6] = {1, 2, 3, 4, 5, 6}, a[24], r0[3], r1[2], d0[6], d2[8], d01[3], all;
    float w0[3] = {5, 7, 9}, w1[2] = {6, 15}, wd0[6] = {4, 8, 12, 16, 20, 24}, wd2[8] = {6, 15, 6, 15, 6, 15, 6, 15};
    float wd01[3] = {20, 28, 36};
    int64_t k0[1] = {0}, k1[1] = {1}, k2[1] = {2}, k01[2] = {0, 1}, kall[3] = {2, 0, 1};
    gs_value *pm, *pa, *z, *outs[6];
    void *out[6];
    int i;
    for (i = 0; i < 24; i++) a[i] = m[i % 6];
    pm = cf(g, T2(GS_F32, 2, 3), m);
    pa = cf(g, T3(GS_F32, 4, 2, 3), a);
    z = gs_scalar(g, GS_F32, 0);
    outs[0] = gs_reduce(g, pm, z, GS_REDUCE_SUM, 1, k0);
    outs[1] = gs_reduce(g, pm, z, GS_REDUCE_SUM, 1, k1);
    outs[2] = gs_reduce(g, pa, z, GS_REDUCE_SUM, 1, k0);
    outs[3] = gs_reduce(g, pa, z, GS_REDUCE_SUM, 1, k2);
    outs[4] = gs_reduce(g, pa, z, GS_REDUCE_SUM, 2, k01);
    outs[5] = gs_reduce(g, pa, z, GS_REDUCE_SUM, 3, kall);   /* dims are unordered */
    out[0] = r0; out[1] = r1; out[2] = d0; out[3] = d2; out[4] = d01; out[5] = &all;
    CHECK_OK(eval_outputs(g, 6, outs, out));
    CHECK_FLOATS(r0, w0, 3);
    CHECK_FLOATS(r1, w1, 2);
    CHECK_FLOATS(d0, wd0, 6);
    CHECK_FLOATS(d2, wd2, 8);
    CHECK_FLOATS(d01, wd01, 3);
    CHECK(all == 84.0f);
    gs_ctx_destroy(ctx);
}

/* Reduce-window minimum, window 3, stride 2 over [10000, 1000, 100, 10, 1]: kValid gives [100, 1]; kSame
   pads one init value on each side and gives [1000, 10, 1]. */
static void test_sem_doc_reduce_window(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float x[5] = {10000, 1000, 100, 10, 1}, yv[2], ys[3], wv[2] = {100, 1}, ws[3] = {1000, 10, 1};
    gs_window_dim w[1];
    gs_value *px, *init, *outs[2];
    void *out[2];
    px = cf(g, T1(GS_F32, 5), x);
    init = gs_scalar(g, GS_F32, FLT_MAX);
    w[0] = gs_window_default();
    w[0].size = 3;
    w[0].stride = 2;
    outs[0] = gs_reduce_window(g, px, init, GS_REDUCE_MIN, w);
    w[0].pad_lo = 1;
    w[0].pad_hi = 1;
    outs[1] = gs_reduce_window(g, px, init, GS_REDUCE_MIN, w);
    out[0] = yv; out[1] = ys;
    CHECK_OK(eval_outputs(g, 2, outs, out));
    CHECK_FLOATS(yv, wv, 2);
    CHECK_FLOATS(ys, ws, 3);
    gs_ctx_destroy(ctx);
}

static void test_sem_doc_select(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    uint8_t p[4] = {1, 0, 0, 1}, t = 1;
    int32_t v1[4] = {1, 2, 3, 4}, v2[4] = {100, 200, 300, 400}, y1[4], y2[4], w1[4] = {1, 200, 300, 4};
    gs_value *a, *b, *outs[2];
    void *out[2];
    a = ci(g, T1(GS_S32, 4), v1);
    b = ci(g, T1(GS_S32, 4), v2);
    outs[0] = gs_select(g, gs_constant(g, T1(GS_PRED, 4), p), a, b);
    outs[1] = gs_select(g, gs_constant(g, T0(GS_PRED), &t), a, b);
    out[0] = y1; out[1] = y2;
    CHECK_OK(eval_outputs(g, 2, outs, out));
    CHECK_INTS(y1, w1, 4);
    CHECK_INTS(y2, v1, 4);
    gs_ctx_destroy(ctx);
}

static void test_sem_doc_slice_and_strides(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float a[5] = {0, 1, 2, 3, 4}, b[12], c[10], y1[2], y2[4], y3[3], y4[2], y5[2];
    float w1[2] = {2, 3}, w2[4] = {7, 8, 10, 11}, w3[3] = {1, 4, 7}, w4[2] = {1, 4}, w5[2] = {1, 10};
    int64_t s1[1] = {2}, l1[1] = {4}, s2[2] = {2, 1}, l2[2] = {4, 3};
    int64_t s3[1] = {1}, l3[1] = {8}, t3[1] = {3}, l4[1] = {7}, s5[2] = {0, 1}, l5[2] = {4, 3}, t5[2] = {3, 2};
    gs_value *outs[5], *pc;
    void *out[5];
    int i;
    for (i = 0; i < 12; i++) b[i] = (float)i;
    for (i = 0; i < 10; i++) c[i] = (float)i;
    pc = cf(g, T1(GS_F32, 10), c);
    outs[0] = gs_slice(g, cf(g, T1(GS_F32, 5), a), s1, l1, NULL);
    outs[1] = gs_slice(g, cf(g, T2(GS_F32, 4, 3), b), s2, l2, NULL);
    outs[2] = gs_slice(g, pc, s3, l3, t3);   /* ceil(7 / 3) = 3 elements */
    outs[3] = gs_slice(g, pc, s3, l4, t3);   /* ceil(6 / 3) = 2 */
    outs[4] = gs_slice(g, cf(g, T2(GS_F32, 4, 3), b), s5, l5, t5);   /* rows 0, 3 (ceil(4/3)); col 1 (ceil(2/2)) */
    out[0] = y1; out[1] = y2; out[2] = y3; out[3] = y4; out[4] = y5;
    CHECK_OK(eval_outputs(g, 5, outs, out));
    CHECK_FLOATS(y1, w1, 2);
    CHECK_FLOATS(y2, w2, 4);
    CHECK_FLOATS(y3, w3, 3);
    CHECK_FLOATS(y4, w4, 2);
    CHECK(gs_value_shape(outs[4]).dims[0] == 2 && gs_value_shape(outs[4]).dims[1] == 1);
    CHECK_FLOATS(y5, w5, 2);
    gs_ctx_destroy(ctx);
}

/* Sort with three operands keyed by the first: ([3,1], [42,50], [-3.0,1.1]) -> ([1,3], [50,42], [1.1,-3.0]) */
static void test_sem_doc_sort_multi_operand(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    int32_t k[2] = {3, 1}, v[2] = {42, 50}, yk[2], yv[2];
    float f[2] = {-3.0f, 1.1f}, yf[2];
    gs_value *xs[3], *s, *outs[3];
    void *out[3];
    xs[0] = ci(g, T1(GS_S32, 2), k);
    xs[1] = ci(g, T1(GS_S32, 2), v);
    xs[2] = cf(g, T1(GS_F32, 2), f);
    s = gs_sort(g, 3, xs, 0, false);
    outs[0] = gs_get_tuple_element(g, s, 0);
    outs[1] = gs_get_tuple_element(g, s, 1);
    outs[2] = gs_get_tuple_element(g, s, 2);
    out[0] = yk; out[1] = yv; out[2] = yf;
    CHECK_OK(eval_outputs(g, 3, outs, out));
    CHECK(yk[0] == 1 && yk[1] == 3);
    CHECK(yv[0] == 50 && yv[1] == 42);
    CHECK(yf[0] == 1.1f && yf[1] == -3.0f);
    gs_ctx_destroy(ctx);
}

/* stable sort (equal keys, including -0 and +0, keep their order); NaN after numbers ascending, before them
   descending (gs_api.h) */
static void test_sem_sort_stable_signed_zero_nan(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float k[6] = {0.0f, NAN, -0.0f, -1.0f, 0.0f, 2.0f};
    int32_t tag[6] = {0, 1, 2, 3, 4, 5}, ya[6], yd[6];
    int32_t wa[6] = {3, 0, 2, 4, 5, 1}, wd[6] = {1, 5, 0, 2, 4, 3};
    gs_value *xs[2], *outs[2];
    void *out[2];
    xs[0] = cf(g, T1(GS_F32, 6), k);
    xs[1] = ci(g, T1(GS_S32, 6), tag);
    outs[0] = gs_get_tuple_element(g, gs_sort(g, 2, xs, 0, false), 1);
    outs[1] = gs_get_tuple_element(g, gs_sort(g, 2, xs, 0, true), 1);
    out[0] = ya; out[1] = yd;
    CHECK_OK(eval_outputs(g, 2, outs, out));
    CHECK_INTS(ya, wa, 6);
    CHECK_INTS(yd, wd, 6);
    gs_ctx_destroy(ctx);
}

/* TopK: "If two elements within a row are equal, the lower-index element appears first." */
static void test_sem_doc_topk_ties(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float x[2 * 5] = {5, 7, 5, 7, 1, 2, 2, 2, 9, 2}, v[6], sv[6];
    int32_t ix[6], six[6];
    float wv[6] = {7, 7, 5, 9, 2, 2}, wsv[6] = {1, 5, 5, 2, 2, 2};
    int32_t wix[6] = {1, 3, 0, 3, 0, 1}, wsix[6] = {4, 0, 2, 0, 1, 2};
    gs_value *px = cf(g, T2(GS_F32, 2, 5), x), *t, *s, *outs[4];
    void *out[4];
    t = gs_topk(g, px, 3, true);
    s = gs_topk(g, px, 3, false);
    outs[0] = gs_get_tuple_element(g, t, 0);
    outs[1] = gs_get_tuple_element(g, t, 1);
    outs[2] = gs_get_tuple_element(g, s, 0);
    outs[3] = gs_get_tuple_element(g, s, 1);
    out[0] = v; out[1] = ix; out[2] = sv; out[3] = six;
    CHECK_OK(eval_outputs(g, 4, outs, out));
    CHECK_FLOATS(v, wv, 6);
    CHECK_INTS(ix, wix, 6);
    CHECK_FLOATS(sv, wsv, 6);
    CHECK_INTS(six, wsix, 6);
    gs_ctx_destroy(ctx);
}

/* transpose: input_dimensions[permutation[i]] = output_dimensions[i]; reverse: index i -> N - 1 - i */
static void test_sem_transpose_reverse_broadcast(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float x[24], t[24], r[24], b[6];
    int64_t perm[3] = {2, 0, 1}, rd[2] = {0, 2};
    gs_value *px, *outs[3];
    void *out[3];
    int i, j, k;
    for (i = 0; i < 24; i++) x[i] = (float)i;
    px = cf(g, T3(GS_F32, 2, 3, 4), x);
    outs[0] = gs_transpose(g, px, perm);   /* [4, 2, 3] */
    outs[1] = gs_reverse(g, px, 2, rd);
    outs[2] = gs_broadcast(g, gs_scalar(g, GS_F32, 2.0), T2(GS_F32, 2, 3), NULL);
    out[0] = t; out[1] = r; out[2] = b;
    CHECK_OK(eval_outputs(g, 3, outs, out));
    CHECK(gs_value_shape(outs[0]).dims[0] == 4 && gs_value_shape(outs[0]).dims[1] == 2 &&
          gs_value_shape(outs[0]).dims[2] == 3);
    for (i = 0; i < 2; i++)
        for (j = 0; j < 3; j++)
            for (k = 0; k < 4; k++) {
                CHECK(t[(k * 2 + i) * 3 + j] == x[(i * 3 + j) * 4 + k]);
                CHECK(r[((1 - i) * 3 + j) * 4 + (3 - k)] == x[(i * 3 + j) * 4 + k]);
            }
    for (i = 0; i < 6; i++) CHECK(b[i] == 2.0f);
    gs_ctx_destroy(ctx);
}

/* pad: interior padding comes first, then (possibly negative) edge padding crops the interior-padded array */
static void test_sem_pad_negative_edges_with_interior(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    const float P = -9;
    float x[3] = {1, 2, 3}, m[4] = {1, 2, 3, 4}, y1[3], y2[7], y3[1], y4[16], w4[16];
    float w1[3] = {-9, 2, -9}, w2[7] = {-9, -9, 1, -9, -9, 2, -9};
    int64_t lo1[1] = {-1}, hi1[1] = {-1}, in1[1] = {1}, lo2[1] = {2}, hi2[1] = {-2}, in2[1] = {2};
    int64_t lo3[1] = {-4}, hi3[1] = {0}, in3[1] = {1};
    int64_t lo4[2] = {-1, 1}, hi4[2] = {2, -1}, in4[2] = {1, 2};
    gs_value *px, *pv, *outs[4];
    gs_shape s;
    void *out[4];
    int i;
    px = cf(g, T1(GS_F32, 3), x);
    pv = gs_scalar(g, GS_F32, P);
    /* [1,p,2,p,3] without its first and last element */
    outs[0] = gs_pad(g, px, pv, lo1, hi1, in1);
    /* [1,p,p,2,p,p,3] -> two in front -> [p,p,1,p,p,2,p,p,3] -> drop the last two */
    outs[1] = gs_pad(g, px, pv, lo2, hi2, in2);
    /* [1,p,2,p,3] without its first four: [3] */
    outs[2] = gs_pad(g, px, pv, lo3, hi3, in3);
    /* m = [[1,2],[3,4]]. Rows: [r0,p,r1] -> drop one in front -> [p,r1] -> two behind -> [p,r1,p,p].
       Cols: [c0,p,p,c1] -> one in front -> [p,c0,p,p,c1] -> drop the last -> [p,c0,p,p].
       The only surviving element is m[1][0] = 3, at (1, 1) of a 4x4 result. */
    outs[3] = gs_pad(g, cf(g, T2(GS_F32, 2, 2), m), pv, lo4, hi4, in4);
    out[0] = y1; out[1] = y2; out[2] = y3; out[3] = y4;
    CHECK_OK(eval_outputs(g, 4, outs, out));
    CHECK_FLOATS(y1, w1, 3);
    CHECK_FLOATS(y2, w2, 7);
    CHECK(y3[0] == 3);
    s = gs_value_shape(outs[3]);
    CHECK(s.rank == 2 && s.dims[0] == 4 && s.dims[1] == 4);
    for (i = 0; i < 16; i++) w4[i] = P;
    w4[1 * 4 + 1] = 3;
    CHECK_FLOATS(y4, w4, 16);
    gs_ctx_destroy(ctx);
}

/* Gather as a batched dynamic slice (the doc's [16,11] operand, [5,2] indices, slice sizes [8,6]): output
   [G, O0, O1] = operand[X + O0, Y + O1] with (X, Y) clamped to [0, 16 - 8] x [0, 11 - 6]. */
static void test_sem_gather_batched_dynamic_slice(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float op[16 * 11], y[5 * 8 * 6];
    int32_t idx[5 * 2] = {0, 0, 3, 2, 8, 5, 12, -4, -1, 100};
    gs_gather_dims d;
    int gi, o0, o1;
    for (gi = 0; gi < 16 * 11; gi++) op[gi] = (float)gi;
    memset(&d, 0, sizeof d);
    d.n_offset_dims = 2;
    d.offset_dims[0] = 1;
    d.offset_dims[1] = 2;
    d.n_start_index_map = 2;
    d.start_index_map[0] = 0;
    d.start_index_map[1] = 1;
    d.index_vector_dim = 1;
    d.slice_sizes[0] = 8;
    d.slice_sizes[1] = 6;
    CHECK_OK(eval1(g, gs_gather(g, cf(g, T2(GS_F32, 16, 11), op), ci(g, T2(GS_S32, 5, 2), idx), &d), y));
    for (gi = 0; gi < 5; gi++) {
        int x0 = idx[gi * 2], y0 = idx[gi * 2 + 1];
        x0 = x0 < 0 ? 0 : x0 > 8 ? 8 : x0;
        y0 = y0 < 0 ? 0 : y0 > 5 ? 5 : y0;
        for (o0 = 0; o0 < 8; o0++)
            for (o1 = 0; o1 < 6; o1++)
                CHECK(y[(gi * 8 + o0) * 6 + o1] == op[(x0 + o0) * 11 + (y0 + o1)]);
    }
    gs_ctx_destroy(ctx);
}

/* XLA: a collapsed (or batching) slice dim must have slice size exactly 1 (ShapeInference for gather). A
   collapsed size of 0 used to pass, and the clamp then allowed a start of dim itself: a read past the end. */
static void test_sem_gather_collapsed_slice_size_must_be_one(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float op[3] = {1, 2, 3};
    int32_t idx[1] = {3};
    gs_gather_dims d;
    gs_value *v;
    memset(&d, 0, sizeof d);
    d.n_collapsed_slice_dims = 1;
    d.collapsed_slice_dims[0] = 0;
    d.n_start_index_map = 1;
    d.start_index_map[0] = 0;
    d.index_vector_dim = 1;
    d.slice_sizes[0] = 0;
    v = gs_gather(g, cf(g, T1(GS_F32, 3), op), ci(g, T2(GS_S32, 1, 1), idx), &d);
    CHECK(v == NULL);
    CHECK_EQ_INT(gs_ctx_error(ctx), GS_ERR_SHAPE);
    gs_ctx_destroy(ctx);
}

/* Scatter: an update whose window would leave the operand is skipped as a whole (XLA CPU scatter and the
   HloEvaluator check start in [0, dim - window]); the combiner gets (current, update). */
static void test_sem_scatter_partial_window_skipped(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float op[6] = {0, 0, 0, 0, 0, 0}, up[4 * 2] = {1, 2, 10, 20, 100, 200, 1000, 2000}, y[6];
    float w[6] = {0, 1, 2, 1000, 2000, 0};
    int32_t idx[4] = {1, 5, -1, 3};   /* 5: [5, 7) sticks out; -1 starts before 0 */
    gs_scatter_dims d;
    memset(&d, 0, sizeof d);
    d.n_update_window_dims = 1;
    d.update_window_dims[0] = 1;
    d.n_scatter_dims_to_operand_dims = 1;
    d.scatter_dims_to_operand_dims[0] = 0;
    d.index_vector_dim = 1;
    CHECK_OK(eval1(g, gs_scatter(g, cf(g, T1(GS_F32, 6), op), ci(g, T2(GS_S32, 4, 1), idx),
                                 cf(g, T2(GS_F32, 4, 2), up), &d, GS_REDUCE_SUM), y));
    CHECK_FLOATS(y, w, 6);
    gs_ctx_destroy(ctx);
}

/* The while-loop pseudocode of the doc: 1000 iterations adding a constant vector to an accumulator. */
static void test_sem_doc_while(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g"), *cond = gs_graph_new(ctx, "cond"), *body = gs_graph_new(ctx, "body");
    gs_shape shapes[2];
    float cvec[10], vec[10];
    int32_t it = -1;
    gs_value *cp, *bp, *xs[2], *w, *outs[2];
    void *out[2];
    int i;
    for (i = 0; i < 10; i++) cvec[i] = (float)(i + 1) * 0.25f;
    shapes[0] = T0(GS_S32);
    shapes[1] = T1(GS_F32, 10);
    cp = gs_parameter_tuple(cond, 0, 2, shapes, "s");
    gs_graph_set_root(cond, gs_compare(cond, gs_get_tuple_element(cond, cp, 0), gs_scalar(cond, GS_S32, 1000), GS_CMP_LT));
    bp = gs_parameter_tuple(body, 0, 2, shapes, "s");
    xs[0] = gs_add(body, gs_get_tuple_element(body, bp, 0), gs_scalar(body, GS_S32, 1));
    xs[1] = gs_add(body, gs_get_tuple_element(body, bp, 1), cf(body, T1(GS_F32, 10), cvec));
    gs_graph_set_root(body, gs_tuple(body, 2, xs));
    xs[0] = gs_scalar(g, GS_S32, 0);
    xs[1] = gs_constant_splat(g, T1(GS_F32, 10), 0.0);
    w = gs_while(g, cond, body, gs_tuple(g, 2, xs));
    outs[0] = gs_get_tuple_element(g, w, 0);
    outs[1] = gs_get_tuple_element(g, w, 1);
    out[0] = &it; out[1] = vec;
    CHECK_OK(eval_outputs(g, 2, outs, out));
    CHECK_EQ_INT(it, 1000);
    for (i = 0; i < 10; i++) CHECK(vec[i] == 250.0f * (float)(i + 1));   /* multiples of 0.25: exact */
    gs_ctx_destroy(ctx);
}

/* Collective shapes (the doc's AllToAll: f32[4,16], split 1, concat 0, 4 cores -> f32[16,4]); all-gather
   multiplies and reduce-scatter divides the dim by the group size; collective-permute keeps the shape. */
static void test_sem_collective_shapes(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    gs_collective_desc cd;
    int64_t ids[4] = {0, 2, 1, 3}, pairs[4] = {0, 1, 1, 0};
    gs_value *x, *a, *ag, *rs, *cp;
    gs_shape s;
    CHECK_OK(gs_graph_set_num_partitions(g, 4));
    x = gs_parameter(g, 0, T2(GS_F32, 4, 16), "x");
    memset(&cd, 0, sizeof cd);
    a = gs_all_to_all(g, x, 1, 0, &cd);
    s = gs_value_shape(a);
    CHECK(a && s.rank == 2 && s.dims[0] == 16 && s.dims[1] == 4);
    cd.groups.n_groups = 2;
    cd.groups.group_size = 2;
    cd.groups.ids = ids;
    ag = gs_all_gather(g, x, 0, &cd);
    rs = gs_reduce_scatter(g, x, GS_REDUCE_SUM, 1, &cd);
    cp = gs_collective_permute(g, x, 2, pairs, 0);
    s = gs_value_shape(ag);
    CHECK(ag && s.dims[0] == 8 && s.dims[1] == 16);
    s = gs_value_shape(rs);
    CHECK(rs && s.dims[0] == 4 && s.dims[1] == 8);
    s = gs_value_shape(cp);
    CHECK(cp && s.dims[0] == 4 && s.dims[1] == 16);
    gs_ctx_destroy(ctx);
}

/* collective-permute on the reference device: a partition that no pair targets receives zeros (doc); one that
   sends to itself keeps its operand. */
static void test_sem_collective_permute_single_device(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float x[3] = {1, 2, 3}, y0[3], y1[3], w0[3] = {0, 0, 0};
    int64_t none[2] = {0, 0};
    gs_value *px = cf(g, T1(GS_F32, 3), x), *outs[2];
    void *out[2];
    outs[0] = gs_collective_permute(g, px, 0, none, 0);
    outs[1] = gs_collective_permute(g, px, 1, none, 1);
    out[0] = y0; out[1] = y1;
    CHECK_OK(eval_outputs(g, 2, outs, out));
    CHECK_FLOATS(y0, w0, 3);
    CHECK_FLOATS(y1, x, 3);
    gs_ctx_destroy(ctx);
}

/* clamp(lo, x, hi) = min(max(x, lo), hi): lo > hi gives hi everywhere; a NaN anywhere gives NaN */
static void test_sem_clamp_edges(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float x[3] = {-1, 4, 10}, y1[3], y2[3], y3[3], w1[3] = {3, 3, 3};
    gs_value *px = cf(g, T1(GS_F32, 3), x), *outs[3];
    void *out[3];
    outs[0] = gs_clamp(g, gs_scalar(g, GS_F32, 5), px, gs_scalar(g, GS_F32, 3));
    outs[1] = gs_clamp(g, gs_scalar(g, GS_F32, NAN), px, gs_scalar(g, GS_F32, 3));
    outs[2] = gs_clamp(g, gs_scalar(g, GS_F32, 0), px, gs_scalar(g, GS_F32, NAN));
    out[0] = y1; out[1] = y2; out[2] = y3;
    CHECK_OK(eval_outputs(g, 3, outs, out));
    CHECK_FLOATS(y1, w1, 3);
    CHECK(isnan(y2[0]) && isnan(y2[1]) && isnan(y2[2]));
    CHECK(isnan(y3[0]) && isnan(y3[1]) && isnan(y3[2]));
    gs_ctx_destroy(ctx);
}

/* s32 <-> u32 converts keep the bits (static_cast); not/and/or/xor are bitwise on integers, logical on pred */
static void test_sem_int_convert_and_bitwise(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    int32_t s[3] = {-1, INT32_MIN, 5}, su[3], nt[3], an[3], orr[3], xo[3];
    uint32_t u[3] = {0xFFFFFFFFu, 0x80000000u, 5u}, us[3], uw[3] = {0xFFFFFFFFu, 0x80000000u, 5u};
    int32_t sw[3] = {-1, INT32_MIN, 5}, ntw[3] = {0, INT32_MAX, -6}, m[3] = {6, -1, 3};
    int32_t anw[3] = {6, INT32_MIN, 1}, orw[3] = {-1, -1, 7}, xow[3] = {-7, INT32_MAX, 6};
    uint8_t p[2] = {0, 1}, q[2] = {1, 1}, pn[2], px[2];
    gs_value *ps = ci(g, T1(GS_S32, 3), s), *pm = ci(g, T1(GS_S32, 3), m), *pp, *pq, *outs[8];
    void *out[8];
    pp = gs_constant(g, T1(GS_PRED, 2), p);
    pq = gs_constant(g, T1(GS_PRED, 2), q);
    outs[0] = gs_convert(g, ps, GS_U32);
    outs[1] = gs_convert(g, cu(g, T1(GS_U32, 3), u), GS_S32);
    outs[2] = gs_unary(g, GS_OP_NOT, ps);
    outs[3] = gs_binary(g, GS_OP_AND, ps, pm);
    outs[4] = gs_binary(g, GS_OP_OR, ps, pm);
    outs[5] = gs_binary(g, GS_OP_XOR, ps, pm);
    outs[6] = gs_unary(g, GS_OP_NOT, pp);
    outs[7] = gs_binary(g, GS_OP_XOR, pp, pq);
    out[0] = us; out[1] = su; out[2] = nt; out[3] = an; out[4] = orr; out[5] = xo; out[6] = pn; out[7] = px;
    CHECK_OK(eval_outputs(g, 8, outs, out));
    CHECK_INTS(us, uw, 3);
    CHECK_INTS(su, sw, 3);
    CHECK_INTS(nt, ntw, 3);
    CHECK_INTS(an, anw, 3);
    CHECK_INTS(orr, orw, 3);
    CHECK_INTS(xo, xow, 3);
    CHECK(pn[0] == 1 && pn[1] == 0);
    CHECK(px[0] == 1 && px[1] == 0);
    gs_ctx_destroy(ctx);
}

/* XLA rejects a window dim of size 0 (ShapeInference: "non-positive dimension"); gs_api.h says size >= 1 */
static void test_sem_window_size_zero_rejected(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    gs_window_dim w[1];
    gs_value *v;
    w[0] = gs_window_default();
    w[0].size = 0;
    v = gs_reduce_window(g, gs_parameter(g, 0, T1(GS_F32, 4), "x"), gs_scalar(g, GS_F32, 0), GS_REDUCE_SUM, w);
    CHECK(v == NULL);
    CHECK_EQ_INT(gs_ctx_error(ctx), GS_ERR_INVALID_ARG);
    gs_ctx_destroy(ctx);
}

static void test_sem_compare_types(void);

void suite_semantics(void) {
    RUN(test_sem_compare_types);
    RUN(test_sem_power_int_negative_exponent);
    RUN(test_sem_power_wraps_and_float_case0);
    RUN(test_sem_int_divide_remainder_edges);
    RUN(test_sem_convert_saturates);
    RUN(test_sem_sign_abs_edges);
    RUN(test_sem_compare_and_minmax_nan);
    RUN(test_sem_bf16_round_each_op);
    RUN(test_sem_doc_clamp);
    RUN(test_sem_doc_reshape_and_collapse);
    RUN(test_sem_doc_concatenate);
    RUN(test_sem_doc_dot_general);
    RUN(test_sem_doc_dynamic_slice);
    RUN(test_sem_doc_dynamic_update_slice);
    RUN(test_sem_doc_iota);
    RUN(test_sem_doc_reduce);
    RUN(test_sem_doc_reduce_window);
    RUN(test_sem_doc_select);
    RUN(test_sem_doc_slice_and_strides);
    RUN(test_sem_doc_sort_multi_operand);
    RUN(test_sem_sort_stable_signed_zero_nan);
    RUN(test_sem_doc_topk_ties);
    RUN(test_sem_transpose_reverse_broadcast);
    RUN(test_sem_pad_negative_edges_with_interior);
    RUN(test_sem_gather_batched_dynamic_slice);
    RUN(test_sem_gather_collapsed_slice_size_must_be_one);
    RUN(test_sem_scatter_partial_window_skipped);
    RUN(test_sem_doc_while);
    RUN(test_sem_collective_shapes);
    RUN(test_sem_collective_permute_single_device);
    RUN(test_sem_clamp_edges);
    RUN(test_sem_int_convert_and_bitwise);
    RUN(test_sem_window_size_zero_rejected);
}

/* compare types (XLA: type=TOTALORDER for floats, SIGNED/UNSIGNED for integers), through HLO text */
static void test_sem_compare_types(void) {
    const char *text =
        "HloModule m\n"
        "ENTRY e {\n"
        "  a = f32[4] parameter(0)\n"
        "  b = f32[4] parameter(1)\n"
        "  i = s32[2] parameter(2)\n"
        "  j = s32[2] parameter(3)\n"
        "  t = pred[4] compare(a, b), direction=LT, type=TOTALORDER\n"
        "  f = pred[4] compare(a, b), direction=LT\n"
        "  u = pred[2] compare(i, j), direction=LT, type=UNSIGNED\n"
        "  s = pred[2] compare(i, j), direction=LT\n"
        "  ROOT r = (pred[4], pred[4], pred[2], pred[2]) tuple(t, f, u, s)\n"
        "}\n";
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = NULL;
    float a[4], b[4];
    int32_t i[2] = {-1, 1}, j[2] = {1, 2};
    uint8_t t[4], f[4], u[2], s[2];
    const void *ins[4];
    void *outs[4];
    const char *printed;
    a[0] = -0.0f; b[0] = 0.0f;        /* total order: -0 < +0; IEEE: equal */
    a[1] = 1.0f;  b[1] = NAN;         /* total order: 1 < +NaN; IEEE: unordered */
    a[2] = -NAN;  b[2] = -INFINITY;   /* total order: -NaN < -inf */
    a[3] = 2.0f;  b[3] = 3.0f;
    ins[0] = a; ins[1] = b; ins[2] = i; ins[3] = j;
    outs[0] = t; outs[1] = f; outs[2] = u; outs[3] = s;
    CHECK_OK(gs_hlo_parse(ctx, text, strlen(text), &g));
    CHECK_OK(gs_eval(g, ins, outs));
    CHECK(t[0] == 1 && t[1] == 1 && t[2] == 1 && t[3] == 1);
    CHECK(f[0] == 0 && f[1] == 0 && f[2] == 0 && f[3] == 1);
    CHECK(u[0] == 0 && u[1] == 1);   /* 0xffffffff < 1 is false unsigned */
    CHECK(s[0] == 1 && s[1] == 1);
    printed = gs_hlo_print(g);
    CHECK(printed && strstr(printed, "direction=LT, type=TOTALORDER") != NULL);
    CHECK(printed && strstr(printed, "direction=LT, type=UNSIGNED") != NULL);
    /* the default type is not printed */
    CHECK(printed && strstr(printed, "compare(a, b), direction=LT\n") != NULL);
    gs_ctx_destroy(ctx);
    /* a type that does not fit the dtype is an error */
    ctx = gst_ctx();
    g = gs_graph_new(ctx, "g");
    CHECK(gs_compare_typed(g, gs_scalar(g, GS_F32, 1), gs_scalar(g, GS_F32, 2), GS_CMP_LT, GS_CMP_TYPE_SIGNED) == NULL);
    CHECK(strstr(gs_ctx_error_msg(ctx), "comparison type SIGNED does not fit f32") != NULL);
    gs_ctx_destroy(ctx);
}

