/* test_interp.c - the reference interpreter (gs_eval): every op against hand-computed values or a naive loop
   written here. */
#include "test.h"
#include <float.h>
#include <limits.h>

/* ---- test utilities ---- */
static gs_shape S0(gs_dtype t) { return gs_shape_scalar(t); }
static gs_shape S1(gs_dtype t, int64_t a) { return gs_shape_make(t, 1, &a); }
static gs_shape S2(gs_dtype t, int64_t a, int64_t b) {
    int64_t d[2];
    d[0] = a; d[1] = b;
    return gs_shape_make(t, 2, d);
}
static gs_shape S3(gs_dtype t, int64_t a, int64_t b, int64_t c) {
    int64_t d[3];
    d[0] = a; d[1] = b; d[2] = c;
    return gs_shape_make(t, 3, d);
}
static gs_shape S4(gs_dtype t, int64_t a, int64_t b, int64_t c, int64_t e) {
    int64_t d[4];
    d[0] = a; d[1] = b; d[2] = c; d[3] = e;
    return gs_shape_make(t, 4, d);
}

/* sets the root and evaluates; reports the context error on failure */
static gs_result run(gs_graph *g, gs_value *root, const void *const *in, void *const *out) {
    gs_result r;
    gs_ctx *ctx = gs_graph_ctx(g);
    if (!root) {
        fprintf(stderr, "    builder failed: %s\n", gs_ctx_error_msg(ctx));
        return gs_ctx_error(ctx) ? gs_ctx_error(ctx) : GS_ERR_INVALID_ARG;
    }
    r = gs_graph_set_root(g, root);
    if (r == GS_OK) r = gs_eval(g, in, out);
    if (r != GS_OK) fprintf(stderr, "    eval failed: %s\n", gs_ctx_error_msg(ctx));
    return r;
}

/* one input, one output */
static gs_result run1(gs_graph *g, gs_value *root, const void *in0, void *out0) {
    const void *in[1];
    void *out[1];
    in[0] = in0;
    out[0] = out0;
    return run(g, root, in, out);
}

static gs_value *cf(gs_graph *g, gs_shape s, const float *data) { return gs_constant(g, s, data); }
static gs_value *ci(gs_graph *g, gs_shape s, const int32_t *data) { return gs_constant(g, s, data); }

static uint32_t fbits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float bfr(float x) { return gs_bf16_to_f32(gs_f32_to_bf16(x)); }

static void fill_rand(float *p, int64_t n, uint64_t seed) {
    uint64_t s = seed;
    int64_t i;
    for (i = 0; i < n; i++) p[i] = gst_randf(&s);
}

/* naive dot_general; out in the XLA order (batch, lhs free, rhs free); also sum |a*b| per element */
static void naive_dot(const float *A, gs_shape as, const float *B, gs_shape bs, const gs_dot_dims *d, double *out,
                      double *mag) {
    int lf[GS_MAX_RANK], rf[GS_MAX_RANK], nlf = 0, nrf = 0, i, j, k;
    int64_t ast[GS_MAX_RANK], bst[GS_MAX_RANK], acc;
    int64_t odims[GS_MAX_RANK], cdims[GS_MAX_RANK], oidx[GS_MAX_RANK], cidx[GS_MAX_RANK];
    int orank = 0, nout = 1, o;
    acc = 1;
    for (i = as.rank - 1; i >= 0; i--) { ast[i] = acc; acc *= as.dims[i]; }
    acc = 1;
    for (i = bs.rank - 1; i >= 0; i--) { bst[i] = acc; acc *= bs.dims[i]; }
    for (i = 0; i < as.rank; i++) {
        int used = 0;
        for (j = 0; j < d->n_batch; j++) used |= d->lhs_batch[j] == i;
        for (j = 0; j < d->n_contract; j++) used |= d->lhs_contract[j] == i;
        if (!used) lf[nlf++] = i;
    }
    for (i = 0; i < bs.rank; i++) {
        int used = 0;
        for (j = 0; j < d->n_batch; j++) used |= d->rhs_batch[j] == i;
        for (j = 0; j < d->n_contract; j++) used |= d->rhs_contract[j] == i;
        if (!used) rf[nrf++] = i;
    }
    for (i = 0; i < d->n_batch; i++) odims[orank++] = as.dims[d->lhs_batch[i]];
    for (i = 0; i < nlf; i++) odims[orank++] = as.dims[lf[i]];
    for (i = 0; i < nrf; i++) odims[orank++] = bs.dims[rf[i]];
    for (i = 0; i < orank; i++) nout *= (int)odims[i];
    for (i = 0; i < d->n_contract; i++) cdims[i] = as.dims[d->lhs_contract[i]];
    for (o = 0; o < nout; o++) {
        int rem = o;
        double s = 0, m = 0;
        int done = 0;
        for (i = orank - 1; i >= 0; i--) { oidx[i] = rem % odims[i]; rem /= (int)odims[i]; }
        for (i = 0; i < d->n_contract; i++) { cidx[i] = 0; if (cdims[i] == 0) done = 1; }
        while (!done) {
            int64_t pa = 0, pb = 0;
            double p;
            for (i = 0; i < d->n_batch; i++) { pa += oidx[i] * ast[d->lhs_batch[i]]; pb += oidx[i] * bst[d->rhs_batch[i]]; }
            for (i = 0; i < nlf; i++) pa += oidx[d->n_batch + i] * ast[lf[i]];
            for (i = 0; i < nrf; i++) pb += oidx[d->n_batch + nlf + i] * bst[rf[i]];
            for (i = 0; i < d->n_contract; i++) { pa += cidx[i] * ast[d->lhs_contract[i]]; pb += cidx[i] * bst[d->rhs_contract[i]]; }
            p = (double)A[pa] * (double)B[pb];
            s += p;
            m += fabs(p);
            for (k = d->n_contract - 1; k >= 0; k--) {
                if (++cidx[k] < cdims[k]) break;
                cidx[k] = 0;
            }
            if (k < 0) done = 1;
        }
        out[o] = s;
        if (mag) mag[o] = m;
    }
}

/* ====================================================================================================== */
/* leaves */

static void test_constant_and_param(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float c[6] = {1, 2, 3, 4, 5, 6}, x[6] = {10, 20, 30, 40, 50, 60}, y[6];
    gs_value *p = gs_parameter(g, 0, S2(GS_F32, 2, 3), "x");
    int i;
    CHECK_OK(run1(g, gs_add(g, p, cf(g, S2(GS_F32, 2, 3), c)), x, y));
    for (i = 0; i < 6; i++) CHECK_NEAR(y[i], c[i] + x[i], 0);
    gs_ctx_destroy(ctx);
}

static void test_constant_splat_and_types(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    uint16_t hb[3];
    uint8_t pr[3] = {0, 1, 0};
    gs_value *outs[3];
    uint16_t ob[3];
    uint8_t op[3];
    int32_t os[4];
    void *out[3];
    int i;
    hb[0] = gs_f32_to_bf16(1.5f); hb[1] = gs_f32_to_bf16(-2.0f); hb[2] = gs_f32_to_bf16(0.25f);
    outs[0] = gs_constant(g, S1(GS_BF16, 3), hb);
    outs[1] = gs_constant(g, S1(GS_PRED, 3), pr);
    outs[2] = gs_constant_splat(g, S2(GS_S32, 2, 2), -7);
    CHECK_OK(gs_graph_set_outputs(g, 3, outs));
    out[0] = ob; out[1] = op; out[2] = os;
    CHECK_OK(gs_eval(g, NULL, out));
    for (i = 0; i < 3; i++) CHECK_EQ_INT(ob[i], hb[i]);
    for (i = 0; i < 3; i++) CHECK_EQ_INT(op[i], pr[i]);
    for (i = 0; i < 4; i++) CHECK_EQ_INT(os[i], -7);
    gs_ctx_destroy(ctx);
}

static void test_iota(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    gs_value *outs[2];
    float f[6];
    int32_t s[6];
    void *out[2];
    int i, j;
    outs[0] = gs_iota(g, S2(GS_F32, 2, 3), 1);
    outs[1] = gs_iota(g, S2(GS_S32, 2, 3), 0);
    CHECK_OK(gs_graph_set_outputs(g, 2, outs));
    out[0] = f; out[1] = s;
    CHECK_OK(gs_eval(g, NULL, out));
    for (i = 0; i < 2; i++)
        for (j = 0; j < 3; j++) {
            CHECK_NEAR(f[i * 3 + j], j, 0);
            CHECK_EQ_INT(s[i * 3 + j], i);
        }
    gs_ctx_destroy(ctx);
}

static void test_iota_bf16_rounds(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    uint16_t o[300];
    int i;
    CHECK_OK(run1(g, gs_iota(g, S1(GS_BF16, 300), 0), NULL, o));
    for (i = 0; i < 300; i++) CHECK_EQ_INT(o[i], gs_f32_to_bf16((float)i));
    /* 257 is not a bf16 value: ties to even gives 256 */
    CHECK(gs_bf16_to_f32(o[257]) == 256.0f);
    gs_ctx_destroy(ctx);
}

static void test_partition_id_u32(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    uint32_t o = 12345;
    gs_value *pid = gs_partition_id(g);
    gs_shape s = gs_value_shape(pid);
    CHECK(s.dtype == GS_U32 && s.rank == 0);
    CHECK_OK(run1(g, pid, NULL, &o));
    CHECK_EQ_INT(o, 0);
    gs_ctx_destroy(ctx);
}

static void test_root_is_parameter(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    int32_t x[4] = {1, -2, 3, -4}, y[4];
    int i;
    CHECK_OK(run1(g, gs_parameter(g, 0, S1(GS_S32, 4), "x"), x, y));
    for (i = 0; i < 4; i++) CHECK_EQ_INT(y[i], x[i]);
    gs_ctx_destroy(ctx);
}

/* ====================================================================================================== */
/* data movement */

static void test_broadcast_dim_map(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float x[6] = {1, 2, 3, 4, 5, 6}, y[2 * 4 * 3 * 5];
    int64_t dims[2] = {1, 3};
    int a, b, c, d;
    /* x[4? no: x is [2,3] mapped to output dims 1 and 3 of [4,2,5,3] */
    gs_value *p = gs_parameter(g, 0, S2(GS_F32, 2, 3), "x");
    CHECK_OK(run1(g, gs_broadcast(g, p, S4(GS_F32, 4, 2, 5, 3), dims), x, y));
    for (a = 0; a < 4; a++)
        for (b = 0; b < 2; b++)
            for (c = 0; c < 5; c++)
                for (d = 0; d < 3; d++) CHECK_NEAR(y[((a * 2 + b) * 5 + c) * 3 + d], x[b * 3 + d], 0);
    gs_ctx_destroy(ctx);
}

static void test_broadcast_scalar_and_in_dim(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    int32_t y[6], z[6], x3[3] = {7, 8, 9};
    int64_t od[2] = {2, 3}, dm[1] = {1};
    gs_value *outs[2];
    void *out[2];
    int i;
    outs[0] = gs_broadcast(g, gs_scalar(g, GS_S32, 5), S2(GS_S32, 2, 3), NULL);
    outs[1] = gs_broadcast_in_dim(g, ci(g, S1(GS_S32, 3), x3), 2, od, dm);
    CHECK_OK(gs_graph_set_outputs(g, 2, outs));
    out[0] = y; out[1] = z;
    CHECK_OK(gs_eval(g, NULL, out));
    for (i = 0; i < 6; i++) {
        CHECK_EQ_INT(y[i], 5);
        CHECK_EQ_INT(z[i], x3[i % 3]);
    }
    gs_ctx_destroy(ctx);
}

static void test_reshape(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float x[12], y[12];
    int64_t nd[3] = {3, 2, 2};
    int i;
    for (i = 0; i < 12; i++) x[i] = (float)i * 0.5f;
    CHECK_OK(run1(g, gs_reshape(g, gs_parameter(g, 0, S2(GS_F32, 4, 3), "x"), 3, nd), x, y));
    for (i = 0; i < 12; i++) CHECK_NEAR(y[i], x[i], 0);
    gs_ctx_destroy(ctx);
}

static void test_transpose_3d(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float x[2 * 3 * 4], y[24];
    int64_t perm[3] = {2, 0, 1};
    int a, b, c;
    fill_rand(x, 24, 1);
    CHECK_OK(run1(g, gs_transpose(g, gs_parameter(g, 0, S3(GS_F32, 2, 3, 4), "x"), perm), x, y));
    /* y[c][a][b] = x[a][b][c] */
    for (a = 0; a < 2; a++)
        for (b = 0; b < 3; b++)
            for (c = 0; c < 4; c++) CHECK(y[(c * 2 + a) * 3 + b] == x[(a * 3 + b) * 4 + c]);
    gs_ctx_destroy(ctx);
}

/* transposes whose last two dims are swapped and at least 16 long are copied in tiles: sizes that are not
   multiples of the tile, a batch dim in front, and 2-D, against a naive loop */
static void test_transpose_tiled(void) {
    static const int64_t shapes[3][3] = {{3, 37, 50}, {1, 16, 17}, {2, 64, 40}};
    int k;
    for (k = 0; k < 3; k++) {
        gs_ctx *ctx = gst_ctx();
        gs_graph *g = gs_graph_new(ctx, "g");
        int64_t A = shapes[k][0], B = shapes[k][1], C = shapes[k][2], perm3[3] = {0, 2, 1}, perm2[2] = {1, 0}, a, b, c;
        int32_t *x = (int32_t *)malloc(sizeof(int32_t) * (size_t)(A * B * C)), *y = (int32_t *)malloc(sizeof(int32_t) * (size_t)(A * B * C));
        int bad = 0;
        for (a = 0; a < A * B * C; a++) x[a] = (int32_t)(a * 7 - 3);
        CHECK_OK(run1(g, gs_transpose(g, gs_parameter(g, 0, S3(GS_S32, A, B, C), "x"), perm3), x, y));
        for (a = 0; a < A; a++)   /* y[a][c][b] = x[a][b][c] */
            for (b = 0; b < B; b++)
                for (c = 0; c < C; c++) bad += y[(a * C + c) * B + b] != x[(a * B + b) * C + c];
        CHECK_MSG(bad == 0, "[%lld,%lld,%lld] {0,2,1}: %d elements wrong", (long long)A, (long long)B, (long long)C, bad);
        g = gs_graph_new(ctx, "g2");
        CHECK_OK(run1(g, gs_transpose(g, gs_parameter(g, 0, S2(GS_S32, A * B, C), "x"), perm2), x, y));
        for (b = 0, bad = 0; b < A * B; b++)   /* y[c][b] = x[b][c] */
            for (c = 0; c < C; c++) bad += y[c * A * B + b] != x[b * C + c];
        CHECK_MSG(bad == 0, "[%lld,%lld] {1,0}: %d elements wrong", (long long)(A * B), (long long)C, bad);
        free(x);
        free(y);
        gs_ctx_destroy(ctx);
    }
}

static void test_transpose_4d(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    int32_t x[2 * 3 * 4 * 5], y[120];
    int64_t perm[4] = {3, 1, 0, 2};
    int a, b, c, d;
    for (a = 0; a < 120; a++) x[a] = a * 3 - 7;
    CHECK_OK(run1(g, gs_transpose(g, gs_parameter(g, 0, S4(GS_S32, 2, 3, 4, 5), "x"), perm), x, y));
    /* out dims (5,3,2,4): y[d][b][a][c] = x[a][b][c][d] */
    for (a = 0; a < 2; a++)
        for (b = 0; b < 3; b++)
            for (c = 0; c < 4; c++)
                for (d = 0; d < 5; d++) CHECK_EQ_INT(y[((d * 3 + b) * 2 + a) * 4 + c], x[((a * 3 + b) * 4 + c) * 5 + d]);
    gs_ctx_destroy(ctx);
}

static void test_slice_strided(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    int32_t x[7 * 9], y[3 * 3];
    int64_t st[2] = {1, 2}, lim[2] = {7, 9}, str[2] = {2, 3};
    int i, j;
    for (i = 0; i < 63; i++) x[i] = i;
    CHECK_OK(run1(g, gs_slice(g, gs_parameter(g, 0, S2(GS_S32, 7, 9), "x"), st, lim, str), x, y));
    /* rows 1,3,5; cols 2,5,8 */
    for (i = 0; i < 3; i++)
        for (j = 0; j < 3; j++) CHECK_EQ_INT(y[i * 3 + j], x[(1 + 2 * i) * 9 + 2 + 3 * j]);
    gs_ctx_destroy(ctx);
}

static void test_slice_empty(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float x[12];
    float y[1] = {42};
    int64_t st[2] = {2, 0}, lim[2] = {2, 4};
    gs_value *s;
    gs_shape sh;
    fill_rand(x, 12, 3);
    s = gs_slice(g, gs_parameter(g, 0, S2(GS_F32, 3, 4), "x"), st, lim, NULL);
    sh = gs_value_shape(s);
    CHECK_EQ_INT(sh.dims[0], 0);
    CHECK_OK(run1(g, s, x, y));
    CHECK(y[0] == 42);   /* nothing written */
    gs_ctx_destroy(ctx);
}

static void test_dynamic_slice_clamped(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    int32_t x[5 * 6], y[2 * 3], z[2 * 3];
    int64_t sizes[2] = {2, 3};
    gs_value *p, *st1[2], *st2[2], *outs[2];
    void *out[2];
    const void *in[1];
    int i, j;
    for (i = 0; i < 30; i++) x[i] = i;
    p = gs_parameter(g, 0, S2(GS_S32, 5, 6), "x");
    st1[0] = gs_scalar(g, GS_S32, -3);   /* clamps to 0 */
    st1[1] = gs_scalar(g, GS_S32, 10);   /* clamps to 6 - 3 = 3 */
    st2[0] = gs_scalar(g, GS_U32, 4);    /* clamps to 3 */
    st2[1] = gs_scalar(g, GS_U32, 1);
    outs[0] = gs_dynamic_slice(g, p, st1, sizes);
    outs[1] = gs_dynamic_slice(g, p, st2, sizes);
    CHECK_OK(gs_graph_set_outputs(g, 2, outs));
    in[0] = x;
    out[0] = y; out[1] = z;
    CHECK_OK(gs_eval(g, in, out));
    for (i = 0; i < 2; i++)
        for (j = 0; j < 3; j++) {
            CHECK_EQ_INT(y[i * 3 + j], x[i * 6 + 3 + j]);
            CHECK_EQ_INT(z[i * 3 + j], x[(3 + i) * 6 + 1 + j]);
        }
    gs_ctx_destroy(ctx);
}

static void test_dynamic_update_slice_clamped(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float x[4 * 5], y[20];
    float u[2 * 2] = {-1, -2, -3, -4};
    gs_value *st[2];
    int i, j;
    for (i = 0; i < 20; i++) x[i] = (float)i;
    st[0] = gs_scalar(g, GS_S32, 3);    /* clamps to 4 - 2 = 2 */
    st[1] = gs_scalar(g, GS_S32, -1);   /* clamps to 0 */
    CHECK_OK(run1(g, gs_dynamic_update_slice(g, gs_parameter(g, 0, S2(GS_F32, 4, 5), "x"), cf(g, S2(GS_F32, 2, 2), u), st),
                  x, y));
    for (i = 0; i < 4; i++)
        for (j = 0; j < 5; j++) {
            float want = (i >= 2 && j < 2) ? u[(i - 2) * 2 + j] : x[i * 5 + j];
            CHECK(y[i * 5 + j] == want);
        }
    gs_ctx_destroy(ctx);
}

/* naive pad for rank 2 */
static void naive_pad2(const float *x, int64_t n0, int64_t n1, float pv, const int64_t *lo, const int64_t *hi,
                       const int64_t *in, float *y, int64_t *o0, int64_t *o1) {
    int64_t d0 = lo[0] + hi[0] + n0 + (n0 > 0 ? (n0 - 1) * in[0] : 0);
    int64_t d1 = lo[1] + hi[1] + n1 + (n1 > 0 ? (n1 - 1) * in[1] : 0);
    int64_t i, j;
    for (i = 0; i < d0 * d1; i++) y[i] = pv;
    for (i = 0; i < n0; i++)
        for (j = 0; j < n1; j++) {
            int64_t p = lo[0] + i * (in[0] + 1), q = lo[1] + j * (in[1] + 1);
            if (p >= 0 && p < d0 && q >= 0 && q < d1) y[p * d1 + q] = x[i * n1 + j];
        }
    *o0 = d0;
    *o1 = d1;
}

static void check_pad_case(const int64_t *lo, const int64_t *hi, const int64_t *in) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float x[4 * 5], y[400], want[400];
    int64_t d0, d1, i;
    gs_value *v;
    gs_shape s;
    fill_rand(x, 20, 11);
    naive_pad2(x, 4, 5, -9.0f, lo, hi, in, want, &d0, &d1);
    v = gs_pad(g, gs_parameter(g, 0, S2(GS_F32, 4, 5), "x"), gs_scalar(g, GS_F32, -9), lo, hi, in);
    s = gs_value_shape(v);
    CHECK_EQ_INT(s.dims[0], d0);
    CHECK_EQ_INT(s.dims[1], d1);
    CHECK_OK(run1(g, v, x, y));
    for (i = 0; i < d0 * d1; i++) CHECK(y[i] == want[i]);
    gs_ctx_destroy(ctx);
}

static void test_pad_negative_and_interior(void) {
    int64_t lo1[2] = {2, -1}, hi1[2] = {-3, 1}, in1[2] = {1, 2};
    int64_t lo2[2] = {-2, 0}, hi2[2] = {-1, -2}, in2[2] = {0, 0};
    int64_t lo3[2] = {1, 3}, hi3[2] = {2, 0}, in3[2] = {0, 1};
    int64_t lo4[2] = {-5, -3}, hi4[2] = {0, -3}, in4[2] = {2, 1};   /* lo crops into interior padding */
    check_pad_case(lo1, hi1, in1);
    check_pad_case(lo2, hi2, in2);
    check_pad_case(lo3, hi3, in3);
    check_pad_case(lo4, hi4, in4);
}

static void test_pad_everything_cropped(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    int32_t x[3] = {1, 2, 3}, y[4];
    int64_t lo[1] = {-3}, hi[1] = {4}, in[1] = {0};
    int i;
    /* output dim = -3 + 4 + 3 = 4, all padding */
    CHECK_OK(run1(g, gs_pad(g, gs_parameter(g, 0, S1(GS_S32, 3), "x"), gs_scalar(g, GS_S32, 8), lo, hi, in), x, y));
    for (i = 0; i < 4; i++) CHECK_EQ_INT(y[i], 8);
    gs_ctx_destroy(ctx);
}

static void test_concatenate(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float a[2 * 2] = {1, 2, 3, 4}, c[2 * 3] = {5, 6, 7, 8, 9, 10}, y[2 * 5];
    float want[10] = {1, 2, 5, 6, 7, 3, 4, 8, 9, 10};
    gs_value *xs[3];
    int i;
    xs[0] = cf(g, S2(GS_F32, 2, 2), a);
    xs[1] = gs_constant_splat(g, S2(GS_F32, 2, 0), 0);   /* empty piece */
    xs[2] = cf(g, S2(GS_F32, 2, 3), c);
    CHECK_OK(run1(g, gs_concatenate(g, 3, xs, 1), NULL, y));
    for (i = 0; i < 10; i++) CHECK(y[i] == want[i]);
    gs_ctx_destroy(ctx);
}

static void test_reverse(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    int32_t x[2 * 3 * 4], y[24];
    int64_t dims[2] = {0, 2};
    int a, b, c;
    for (a = 0; a < 24; a++) x[a] = a;
    CHECK_OK(run1(g, gs_reverse(g, gs_parameter(g, 0, S3(GS_S32, 2, 3, 4), "x"), 2, dims), x, y));
    for (a = 0; a < 2; a++)
        for (b = 0; b < 3; b++)
            for (c = 0; c < 4; c++) CHECK_EQ_INT(y[(a * 3 + b) * 4 + c], x[((1 - a) * 3 + b) * 4 + (3 - c)]);
    gs_ctx_destroy(ctx);
}

static void test_copy_and_annotate(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float x[3] = {1, 2, 3}, y[3];
    gs_value *p = gs_parameter(g, 0, S1(GS_F32, 3), "x");
    int i;
    CHECK_OK(run1(g, gs_copy(g, gs_annotate(g, p, "{replicated}")), x, y));
    for (i = 0; i < 3; i++) CHECK(y[i] == x[i]);
    gs_ctx_destroy(ctx);
}

/* The interpreter runs one device: a manual region whose block is the whole array is a copy in and out; a
   smaller block is one device's part of a region that runs on every device, and evaluating it is an error
   naming the op (it used to take device 0's block and return zeros for the rest of the full array) */
static void test_to_manual_to_full(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    int32_t x[5 * 4], m[5 * 4], f[5 * 4];
    gs_value *p = gs_parameter(g, 0, S2(GS_S32, 5, 4), "x");
    gs_value *man = gs_to_manual(g, p, S2(GS_S32, 5, 4), "{manual}");
    gs_value *outs[2];
    const void *in[1];
    void *out[2];
    int i;
    for (i = 0; i < 20; i++) x[i] = i + 1;
    outs[0] = gs_neg(g, man);
    outs[1] = gs_to_full(g, outs[0], S2(GS_S32, 5, 4), "{replicated}");
    CHECK_OK(gs_graph_set_outputs(g, 2, outs));
    in[0] = x;
    out[0] = m; out[1] = f;
    CHECK_OK(gs_eval(g, in, out));
    for (i = 0; i < 20; i++) {
        CHECK_EQ_INT(m[i], -x[i]);
        CHECK_EQ_INT(f[i], -x[i]);
    }
    gs_ctx_destroy(ctx);
    ctx = gst_ctx();
    g = gs_graph_new(ctx, "g");
    p = gs_parameter(g, 0, S2(GS_S32, 5, 4), "x");
    man = gs_to_manual(g, p, S2(GS_S32, 3, 2), "{devices=[2,2]0,1,2,3}");
    CHECK_OK(gs_graph_set_root(g, gs_to_full(g, man, S2(GS_S32, 5, 4), "{devices=[2,2]0,1,2,3}")));
    out[0] = f;
    CHECK(gs_eval(g, in, out) == GS_ERR_UNSUPPORTED);
    CHECK_MSG(strstr(gs_ctx_error_msg(ctx), "per-device block is s32[3,2] of s32[5,4]") != NULL, "%s", gs_ctx_error_msg(ctx));
    gs_ctx_destroy(ctx);
}

/* ====================================================================================================== */
/* conversions */

static void test_convert_float_to_int(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float x[8] = {NAN, 3e9f, -3e9f, 2.9f, -2.9f, INFINITY, -INFINITY, -0.5f};
    int32_t s[8], ws[8] = {0, INT_MAX, INT_MIN, 2, -2, INT_MAX, INT_MIN, 0};
    uint32_t u[8], wu[8] = {0, 3000000000u, 0, 2, 0, UINT32_MAX, 0, 0};
    uint8_t pr[8], wp[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    gs_value *p = gs_parameter(g, 0, S1(GS_F32, 8), "x"), *outs[3];
    const void *in[1];
    void *out[3];
    int i;
    outs[0] = gs_convert(g, p, GS_S32);
    outs[1] = gs_convert(g, p, GS_U32);
    outs[2] = gs_convert(g, p, GS_PRED);
    CHECK_OK(gs_graph_set_outputs(g, 3, outs));
    in[0] = x;
    out[0] = s; out[1] = u; out[2] = pr;
    CHECK_OK(gs_eval(g, in, out));
    for (i = 0; i < 8; i++) {
        CHECK_EQ_INT(s[i], ws[i]);
        CHECK_EQ_INT(u[i], wu[i]);
        CHECK_EQ_INT(pr[i], wp[i]);
    }
    gs_ctx_destroy(ctx);
}

static void test_convert_int_pred(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    int32_t x[4] = {-1, 0, 7, INT_MIN};
    uint32_t u[4];
    uint8_t pr[4];
    float f[4];
    int32_t back[4];
    gs_value *p = gs_parameter(g, 0, S1(GS_S32, 4), "x"), *outs[4];
    const void *in[1];
    void *out[4];
    int i;
    outs[0] = gs_convert(g, p, GS_U32);
    outs[1] = gs_convert(g, p, GS_PRED);
    outs[2] = gs_convert(g, outs[1], GS_F32);
    outs[3] = gs_convert(g, outs[0], GS_S32);
    CHECK_OK(gs_graph_set_outputs(g, 4, outs));
    in[0] = x;
    out[0] = u; out[1] = pr; out[2] = f; out[3] = back;
    CHECK_OK(gs_eval(g, in, out));
    CHECK_EQ_INT(u[0], 0xFFFFFFFFu);
    CHECK_EQ_INT(u[3], 0x80000000u);
    for (i = 0; i < 4; i++) {
        CHECK_EQ_INT(pr[i], x[i] != 0);
        CHECK(f[i] == (x[i] != 0 ? 1.0f : 0.0f));
        CHECK_EQ_INT(back[i], x[i]);
    }
    gs_ctx_destroy(ctx);
}

static void test_convert_to_bf16_rne(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    /* 1+2^-8 ties to 1 (even); 1+3*2^-8 ties to 1+2^-6 (even); 1+2^-8+2^-20 rounds up */
    float x[4] = {1.00390625f, 1.01171875f, 1.0039072036743164f, -3.0f};
    float want[4] = {1.0f, 1.015625f, 1.0078125f, -3.0f};
    uint16_t y[4];
    int32_t iv[2] = {257, 16777217};
    uint16_t yi[2];
    gs_value *outs[2];
    const void *in[1];
    void *out[2];
    int i;
    outs[0] = gs_convert(g, gs_parameter(g, 0, S1(GS_F32, 4), "x"), GS_BF16);
    outs[1] = gs_convert(g, ci(g, S1(GS_S32, 2), iv), GS_BF16);
    CHECK_OK(gs_graph_set_outputs(g, 2, outs));
    in[0] = x;
    out[0] = y; out[1] = yi;
    CHECK_OK(gs_eval(g, in, out));
    for (i = 0; i < 4; i++) CHECK(gs_bf16_to_f32(y[i]) == want[i]);
    CHECK(gs_bf16_to_f32(yi[0]) == 256.0f);
    CHECK(gs_bf16_to_f32(yi[1]) == 16777216.0f);
    gs_ctx_destroy(ctx);
}

/* ====================================================================================================== */
/* elementwise */

static void test_unary_float(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float x[5] = {0.5f, 1.0f, 2.25f, 3.7f, 0.01f};
    gs_op ops[10] = {GS_OP_NEGATE, GS_OP_ABS, GS_OP_EXP, GS_OP_LOG, GS_OP_TANH, GS_OP_LOGISTIC, GS_OP_SQRT, GS_OP_RSQRT,
                     GS_OP_FLOOR, GS_OP_CEIL};
    gs_value *p = gs_parameter(g, 0, S1(GS_F32, 5), "x"), *outs[10];
    float y[10][5];
    const void *in[1];
    void *out[10];
    int i, k;
    for (k = 0; k < 10; k++) {
        outs[k] = gs_unary(g, ops[k], p);
        out[k] = y[k];
    }
    CHECK_OK(gs_graph_set_outputs(g, 10, outs));
    in[0] = x;
    CHECK_OK(gs_eval(g, in, out));
    for (i = 0; i < 5; i++) {
        double v = x[i];
        CHECK_NEAR(y[0][i], -v, 0);
        CHECK_NEAR(y[1][i], v, 0);
        CHECK_NEAR(y[2][i], exp(v), 1e-6 * exp(v));
        CHECK_NEAR(y[3][i], log(v), 1e-6);
        CHECK_NEAR(y[4][i], tanh(v), 1e-6);
        CHECK_NEAR(y[5][i], 1 / (1 + exp(-v)), 1e-6);
        CHECK_NEAR(y[6][i], sqrt(v), 1e-6);
        CHECK_NEAR(y[7][i], 1 / sqrt(v), 1e-5);
        CHECK_NEAR(y[8][i], floor(v), 0);
        CHECK_NEAR(y[9][i], ceil(v), 0);
    }
    gs_ctx_destroy(ctx);
}

static void test_unary_float_edges(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float x[6] = {NAN, -0.0f, 0.0f, -3.5f, 2.0f, -INFINITY};
    float sg[6], lg[6], ab[6];
    gs_value *p = gs_parameter(g, 0, S1(GS_F32, 6), "x"), *outs[3];
    const void *in[1];
    void *out[3];
    outs[0] = gs_unary(g, GS_OP_SIGN, p);
    outs[1] = gs_unary(g, GS_OP_LOGISTIC, p);
    outs[2] = gs_unary(g, GS_OP_ABS, p);
    CHECK_OK(gs_graph_set_outputs(g, 3, outs));
    in[0] = x;
    out[0] = sg; out[1] = lg; out[2] = ab;
    CHECK_OK(gs_eval(g, in, out));
    CHECK(isnan(sg[0]));
    CHECK(sg[1] == 0 && signbit(sg[1]));
    CHECK(sg[2] == 0 && !signbit(sg[2]));
    CHECK(sg[3] == -1.0f && sg[4] == 1.0f && sg[5] == -1.0f);
    CHECK(lg[5] == 0.0f);
    CHECK_NEAR(lg[2], 0.5, 0);
    CHECK(ab[1] == 0 && !signbit(ab[1]));
    CHECK(isinf(ab[5]) && ab[5] > 0);
    gs_ctx_destroy(ctx);
}

static void test_unary_int(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    int32_t x[5] = {INT_MIN, -5, 0, 9, INT_MAX};
    int32_t ng[5], ab[5], sg[5], nt[5];
    uint32_t ux[3] = {0, 5, 0xFFFFFFFFu}, un[3], us[3];
    gs_value *p = gs_parameter(g, 0, S1(GS_S32, 5), "x"), *q = gs_parameter(g, 1, S1(GS_U32, 3), "u"), *outs[6];
    const void *in[2];
    void *out[6];
    int i;
    outs[0] = gs_neg(g, p);
    outs[1] = gs_unary(g, GS_OP_ABS, p);
    outs[2] = gs_unary(g, GS_OP_SIGN, p);
    outs[3] = gs_unary(g, GS_OP_NOT, p);
    outs[4] = gs_neg(g, q);
    outs[5] = gs_unary(g, GS_OP_SIGN, q);
    CHECK_OK(gs_graph_set_outputs(g, 6, outs));
    in[0] = x; in[1] = ux;
    out[0] = ng; out[1] = ab; out[2] = sg; out[3] = nt; out[4] = un; out[5] = us;
    CHECK_OK(gs_eval(g, in, out));
    CHECK_EQ_INT(ng[0], INT_MIN);
    CHECK_EQ_INT(ab[0], INT_MIN);
    CHECK_EQ_INT(ng[1], 5);
    CHECK_EQ_INT(ab[1], 5);
    CHECK_EQ_INT(ng[4], -INT_MAX);
    for (i = 0; i < 5; i++) {
        CHECK_EQ_INT(sg[i], (x[i] > 0) - (x[i] < 0));
        CHECK_EQ_INT(nt[i], ~x[i]);
    }
    CHECK_EQ_INT(un[0], 0);
    CHECK_EQ_INT(un[1], 0xFFFFFFFBu);
    CHECK_EQ_INT(un[2], 1);
    CHECK_EQ_INT(us[0], 0);
    CHECK_EQ_INT(us[1], 1);
    CHECK_EQ_INT(us[2], 1);
    gs_ctx_destroy(ctx);
}

static void test_logical_pred(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    uint8_t a[4] = {0, 0, 1, 1}, b[4] = {0, 1, 0, 1};
    uint8_t nt[4], an[4], orr[4], xr[4];
    gs_value *pa = gs_parameter(g, 0, S1(GS_PRED, 4), "a"), *pb = gs_parameter(g, 1, S1(GS_PRED, 4), "b"), *outs[4];
    const void *in[2];
    void *out[4];
    int i;
    outs[0] = gs_unary(g, GS_OP_NOT, pa);
    outs[1] = gs_binary(g, GS_OP_AND, pa, pb);
    outs[2] = gs_binary(g, GS_OP_OR, pa, pb);
    outs[3] = gs_binary(g, GS_OP_XOR, pa, pb);
    CHECK_OK(gs_graph_set_outputs(g, 4, outs));
    in[0] = a; in[1] = b;
    out[0] = nt; out[1] = an; out[2] = orr; out[3] = xr;
    CHECK_OK(gs_eval(g, in, out));
    for (i = 0; i < 4; i++) {
        CHECK_EQ_INT(nt[i], !a[i]);
        CHECK_EQ_INT(an[i], a[i] && b[i]);
        CHECK_EQ_INT(orr[i], a[i] || b[i]);
        CHECK_EQ_INT(xr[i], a[i] != b[i]);
    }
    gs_ctx_destroy(ctx);
}

static void test_bitwise_int(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    int32_t a[3] = {0x0F0F, -1, 12}, b[3] = {0x00FF, 5, -8}, an[3], orr[3], xr[3];
    gs_value *pa = gs_parameter(g, 0, S1(GS_S32, 3), "a"), *pb = gs_parameter(g, 1, S1(GS_S32, 3), "b"), *outs[3];
    const void *in[2];
    void *out[3];
    int i;
    outs[0] = gs_binary(g, GS_OP_AND, pa, pb);
    outs[1] = gs_binary(g, GS_OP_OR, pa, pb);
    outs[2] = gs_binary(g, GS_OP_XOR, pa, pb);
    CHECK_OK(gs_graph_set_outputs(g, 3, outs));
    in[0] = a; in[1] = b;
    out[0] = an; out[1] = orr; out[2] = xr;
    CHECK_OK(gs_eval(g, in, out));
    for (i = 0; i < 3; i++) {
        CHECK_EQ_INT(an[i], a[i] & b[i]);
        CHECK_EQ_INT(orr[i], a[i] | b[i]);
        CHECK_EQ_INT(xr[i], a[i] ^ b[i]);
    }
    gs_ctx_destroy(ctx);
}

static void test_binary_float(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float a[4] = {1.5f, -2.0f, 7.0f, 0.3f}, b[4] = {0.5f, 4.0f, -2.0f, 3.0f};
    gs_op ops[5] = {GS_OP_ADD, GS_OP_SUBTRACT, GS_OP_MULTIPLY, GS_OP_DIVIDE, GS_OP_POWER};
    float y[5][4];
    gs_value *pa = gs_parameter(g, 0, S1(GS_F32, 4), "a"), *pb = gs_parameter(g, 1, S1(GS_F32, 4), "b"), *outs[5];
    const void *in[2];
    void *out[5];
    int i, k;
    for (k = 0; k < 5; k++) {
        outs[k] = gs_binary(g, ops[k], pa, pb);
        out[k] = y[k];
    }
    CHECK_OK(gs_graph_set_outputs(g, 5, outs));
    in[0] = a; in[1] = b;
    CHECK_OK(gs_eval(g, in, out));
    for (i = 0; i < 4; i++) {
        CHECK(y[0][i] == a[i] + b[i]);
        CHECK(y[1][i] == a[i] - b[i]);
        CHECK(y[2][i] == a[i] * b[i]);
        CHECK(y[3][i] == a[i] / b[i]);
    }
    CHECK_NEAR(y[4][0], pow(1.5, 0.5), 1e-6);
    CHECK_NEAR(y[4][1], 16.0, 0);
    CHECK_NEAR(y[4][2], 1.0 / 49.0, 1e-7);
    CHECK(isnan(y[4][3]) == 0);
    gs_ctx_destroy(ctx);
}

static void test_div_rem_s32_edges(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    int32_t a[7] = {7, -7, 7, -7, 5, INT_MIN, INT_MIN}, b[7] = {2, 2, -2, -2, 0, -1, 0};
    int32_t wd[7] = {3, -3, -3, 3, -1, INT_MIN, -1}, wr[7] = {1, -1, 1, -1, 5, 0, INT_MIN};
    int32_t d[7], r[7];
    gs_value *pa = gs_parameter(g, 0, S1(GS_S32, 7), "a"), *pb = gs_parameter(g, 1, S1(GS_S32, 7), "b"), *outs[2];
    const void *in[2];
    void *out[2];
    int i;
    outs[0] = gs_div(g, pa, pb);
    outs[1] = gs_binary(g, GS_OP_REMAINDER, pa, pb);
    CHECK_OK(gs_graph_set_outputs(g, 2, outs));
    in[0] = a; in[1] = b;
    out[0] = d; out[1] = r;
    CHECK_OK(gs_eval(g, in, out));
    for (i = 0; i < 7; i++) {
        CHECK_EQ_INT(d[i], wd[i]);
        CHECK_EQ_INT(r[i], wr[i]);
    }
    gs_ctx_destroy(ctx);
}

static void test_div_rem_u32_and_wrap(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    uint32_t a[3] = {7, 9, 0xFFFFFFFFu}, b[3] = {0, 4, 2}, d[3], r[3], s[3];
    int32_t ia[2] = {INT_MAX, INT_MIN}, ib[2] = {1, 1}, is[2], id[2], im[2];
    gs_value *pa = gs_parameter(g, 0, S1(GS_U32, 3), "a"), *pb = gs_parameter(g, 1, S1(GS_U32, 3), "b");
    gs_value *qa = gs_parameter(g, 2, S1(GS_S32, 2), "c"), *qb = gs_parameter(g, 3, S1(GS_S32, 2), "d"), *outs[6];
    const void *in[4];
    void *out[6];
    outs[0] = gs_div(g, pa, pb);
    outs[1] = gs_binary(g, GS_OP_REMAINDER, pa, pb);
    outs[2] = gs_add(g, pa, pb);
    outs[3] = gs_add(g, qa, qb);
    outs[4] = gs_sub(g, qa, qb);
    outs[5] = gs_mul(g, qa, qa);
    CHECK_OK(gs_graph_set_outputs(g, 6, outs));
    in[0] = a; in[1] = b; in[2] = ia; in[3] = ib;
    out[0] = d; out[1] = r; out[2] = s; out[3] = is; out[4] = id; out[5] = im;
    CHECK_OK(gs_eval(g, in, out));
    CHECK_EQ_INT(d[0], 0xFFFFFFFFu);
    CHECK_EQ_INT(r[0], 7);
    CHECK_EQ_INT(d[1], 2);
    CHECK_EQ_INT(r[1], 1);
    CHECK_EQ_INT(s[2], 1);                 /* wraps */
    CHECK_EQ_INT(is[0], INT_MIN);          /* INT_MAX + 1 wraps */
    CHECK_EQ_INT(id[1], INT_MAX);          /* INT_MIN - 1 wraps */
    CHECK_EQ_INT(im[0], 1);                /* INT_MAX^2 mod 2^32 = 1 */
    CHECK_EQ_INT(im[1], 0);
    gs_ctx_destroy(ctx);
}

static void test_remainder_float(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float a[4] = {5.5f, -5.5f, 5.5f, 1.0f}, b[4] = {2.0f, 2.0f, -2.0f, 0.0f}, r[4];
    CHECK_OK(run1(g, gs_binary(g, GS_OP_REMAINDER, cf(g, S1(GS_F32, 4), a), cf(g, S1(GS_F32, 4), b)), NULL, r));
    CHECK(r[0] == 1.5f);
    CHECK(r[1] == -1.5f);
    CHECK(r[2] == 1.5f);
    CHECK(isnan(r[3]));
    gs_ctx_destroy(ctx);
}

static void test_max_min_nan_and_zero(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float a[5] = {NAN, 1.0f, 0.0f, -0.0f, 3.0f}, b[5] = {1.0f, NAN, -0.0f, 0.0f, -4.0f};
    float mx[5], mn[5], mx2[5];
    gs_value *pa = gs_parameter(g, 0, S1(GS_F32, 5), "a"), *pb = gs_parameter(g, 1, S1(GS_F32, 5), "b"), *outs[3];
    const void *in[2];
    void *out[3];
    outs[0] = gs_max(g, pa, pb);
    outs[1] = gs_min(g, pa, pb);
    outs[2] = gs_max(g, pb, pa);
    CHECK_OK(gs_graph_set_outputs(g, 3, outs));
    in[0] = a; in[1] = b;
    out[0] = mx; out[1] = mn; out[2] = mx2;
    CHECK_OK(gs_eval(g, in, out));
    CHECK(isnan(mx[0]) && isnan(mx[1]) && isnan(mn[0]) && isnan(mn[1]));
    CHECK(mx[2] == 0 && !signbit(mx[2]) && !signbit(mx[3]) && !signbit(mx2[2]));
    CHECK(mn[2] == 0 && signbit(mn[2]) && signbit(mn[3]));
    CHECK(mx[4] == 3.0f && mn[4] == -4.0f);
    gs_ctx_destroy(ctx);
}

static void test_power_int(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    int32_t a[8] = {2, 3, -2, 1, -1, -1, 5, 0}, b[8] = {10, 0, 3, -5, -3, -4, -1, 0};
    int32_t w[8] = {1024, 1, -8, 1, 0, 0, 0, 1}, y[8];   /* XLA: (-1)^negative = 0 */
    uint32_t ua[2] = {3, 2}, ub[2] = {4, 33}, uy[2];
    gs_value *outs[2];
    void *out[2];
    int i;
    outs[0] = gs_binary(g, GS_OP_POWER, ci(g, S1(GS_S32, 8), a), ci(g, S1(GS_S32, 8), b));
    outs[1] = gs_binary(g, GS_OP_POWER, gs_constant(g, S1(GS_U32, 2), ua), gs_constant(g, S1(GS_U32, 2), ub));
    CHECK_OK(gs_graph_set_outputs(g, 2, outs));
    out[0] = y; out[1] = uy;
    CHECK_OK(gs_eval(g, NULL, out));
    for (i = 0; i < 8; i++) CHECK_EQ_INT(y[i], w[i]);
    CHECK_EQ_INT(uy[0], 81);
    CHECK_EQ_INT(uy[1], 0);   /* 2^33 wraps to 0 */
    gs_ctx_destroy(ctx);
}

static void test_compare_float_nan(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float a[4] = {1, 2, NAN, NAN}, b[4] = {2, 2, 1, NAN};
    gs_cmp dirs[6] = {GS_CMP_EQ, GS_CMP_NE, GS_CMP_LT, GS_CMP_LE, GS_CMP_GT, GS_CMP_GE};
    uint8_t y[6][4];
    gs_value *pa = gs_parameter(g, 0, S1(GS_F32, 4), "a"), *pb = gs_parameter(g, 1, S1(GS_F32, 4), "b"), *outs[6];
    const void *in[2];
    void *out[6];
    int i, k;
    for (k = 0; k < 6; k++) {
        outs[k] = gs_compare(g, pa, pb, dirs[k]);
        out[k] = y[k];
    }
    CHECK_OK(gs_graph_set_outputs(g, 6, outs));
    in[0] = a; in[1] = b;
    CHECK_OK(gs_eval(g, in, out));
    for (i = 0; i < 4; i++) {
        CHECK_EQ_INT(y[0][i], a[i] == b[i]);
        CHECK_EQ_INT(y[1][i], a[i] != b[i]);
        CHECK_EQ_INT(y[2][i], a[i] < b[i]);
        CHECK_EQ_INT(y[3][i], a[i] <= b[i]);
        CHECK_EQ_INT(y[4][i], a[i] > b[i]);
        CHECK_EQ_INT(y[5][i], a[i] >= b[i]);
    }
    CHECK_EQ_INT(y[1][2], 1);
    CHECK_EQ_INT(y[1][3], 1);
    gs_ctx_destroy(ctx);
}

static void test_compare_signedness(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    int32_t a[2] = {-1, 3}, b[2] = {1, 3};
    uint32_t ua[2] = {0xFFFFFFFFu, 3}, ub[2] = {1, 3};
    uint8_t s[2], u[2];
    gs_value *outs[2];
    void *out[2];
    outs[0] = gs_compare(g, ci(g, S1(GS_S32, 2), a), ci(g, S1(GS_S32, 2), b), GS_CMP_LT);
    outs[1] = gs_compare(g, gs_constant(g, S1(GS_U32, 2), ua), gs_constant(g, S1(GS_U32, 2), ub), GS_CMP_LT);
    CHECK_OK(gs_graph_set_outputs(g, 2, outs));
    out[0] = s; out[1] = u;
    CHECK_OK(gs_eval(g, NULL, out));
    CHECK_EQ_INT(s[0], 1);
    CHECK_EQ_INT(u[0], 0);
    CHECK_EQ_INT(s[1], 0);
    gs_ctx_destroy(ctx);
}

static void test_select(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    uint8_t p[4] = {1, 0, 0, 1};
    float a[4] = {1, 2, 3, 4}, b[4] = {-1, -2, -3, -4}, y[4], z[4];
    gs_value *pa = cf(g, S1(GS_F32, 4), a), *pb = cf(g, S1(GS_F32, 4), b), *outs[2];
    void *out[2];
    int i;
    outs[0] = gs_select(g, gs_constant(g, S1(GS_PRED, 4), p), pa, pb);
    outs[1] = gs_select(g, gs_scalar(g, GS_PRED, 0), pa, pb);
    CHECK_OK(gs_graph_set_outputs(g, 2, outs));
    out[0] = y; out[1] = z;
    CHECK_OK(gs_eval(g, NULL, out));
    for (i = 0; i < 4; i++) {
        CHECK(y[i] == (p[i] ? a[i] : b[i]));
        CHECK(z[i] == b[i]);
    }
    gs_ctx_destroy(ctx);
}

static void test_clamp(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float x[5] = {-5, 0.5f, 3, 10, NAN}, lo[5] = {0, 1, 2, 3, 4}, y[5], z[5];
    int32_t xi[3] = {-4, 2, 9}, yi[3];
    gs_value *px = cf(g, S1(GS_F32, 5), x), *outs[3];
    void *out[3];
    outs[0] = gs_clamp(g, gs_scalar(g, GS_F32, 0), px, gs_scalar(g, GS_F32, 2));
    outs[1] = gs_clamp(g, cf(g, S1(GS_F32, 5), lo), px, gs_scalar(g, GS_F32, 4));
    outs[2] = gs_clamp(g, gs_scalar(g, GS_S32, -1), ci(g, S1(GS_S32, 3), xi), gs_scalar(g, GS_S32, 5));
    CHECK_OK(gs_graph_set_outputs(g, 3, outs));
    out[0] = y; out[1] = z; out[2] = yi;
    CHECK_OK(gs_eval(g, NULL, out));
    CHECK(y[0] == 0 && y[1] == 0.5f && y[2] == 2 && y[3] == 2 && isnan(y[4]));
    CHECK(z[0] == 0 && z[1] == 1 && z[2] == 3 && z[3] == 4 && isnan(z[4]));
    CHECK(yi[0] == -1 && yi[1] == 2 && yi[2] == 5);
    gs_ctx_destroy(ctx);
}

static void test_bf16_elementwise_rounding(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float av[3] = {1.0f, 1.0078125f, 3.0f}, bv[3] = {0.00390625f, 0.00390625f, 7.0f};
    uint16_t a[3], b[3], y[3], m[3];
    gs_value *pa = gs_parameter(g, 0, S1(GS_BF16, 3), "a"), *pb = gs_parameter(g, 1, S1(GS_BF16, 3), "b"), *outs[2];
    const void *in[2];
    void *out[2];
    int i;
    for (i = 0; i < 3; i++) {
        a[i] = gs_f32_to_bf16(av[i]);
        b[i] = gs_f32_to_bf16(bv[i]);
    }
    outs[0] = gs_add(g, pa, pb);
    outs[1] = gs_div(g, pa, pb);
    CHECK_OK(gs_graph_set_outputs(g, 2, outs));
    in[0] = a; in[1] = b;
    out[0] = y; out[1] = m;
    CHECK_OK(gs_eval(g, in, out));
    CHECK(gs_bf16_to_f32(y[0]) == 1.0f);       /* 1 + 2^-8: tie -> even */
    CHECK(gs_bf16_to_f32(y[1]) == 1.015625f);  /* 1 + 3*2^-8: tie -> even */
    CHECK(gs_bf16_to_f32(y[2]) == 10.0f);
    CHECK(gs_bf16_to_f32(m[2]) == bfr(3.0f / 7.0f));
    gs_ctx_destroy(ctx);
}

/* ====================================================================================================== */
/* reductions and scans */

static void test_reduce_sum_several_dims(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float x[3 * 4 * 5 * 2], y[4 * 2];
    int64_t dims[2] = {2, 0};
    int a, b, c, d;
    fill_rand(x, 120, 5);
    CHECK_OK(run1(g, gs_reduce(g, gs_parameter(g, 0, S4(GS_F32, 3, 4, 5, 2), "x"), gs_scalar(g, GS_F32, 0.25), GS_REDUCE_SUM,
                               2, dims), x, y));
    for (b = 0; b < 4; b++)
        for (d = 0; d < 2; d++) {
            /* exact order: init, then increasing linear order over (a, c) */
            float s = 0.25f;
            for (a = 0; a < 3; a++)
                for (c = 0; c < 5; c++) s += x[((a * 4 + b) * 5 + c) * 2 + d];
            CHECK(y[b * 2 + d] == s);
        }
    gs_ctx_destroy(ctx);
}

static void test_reduce_all_dims(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    int32_t x[2 * 3 * 4], y = 0, sum = 0;
    int64_t dims[3] = {0, 1, 2};
    int i;
    for (i = 0; i < 24; i++) {
        x[i] = i * 7 - 50;
        sum += x[i];
    }
    CHECK_OK(run1(g, gs_reduce(g, gs_parameter(g, 0, S3(GS_S32, 2, 3, 4), "x"), gs_scalar(g, GS_S32, 100), GS_REDUCE_SUM, 3,
                               dims), x, &y));
    CHECK_EQ_INT(y, sum + 100);
    gs_ctx_destroy(ctx);
}

static void test_reduce_order_exact(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    /* a sum whose value depends on the order: the defined order is init, x0, x1, ... */
    float x[6] = {1e8f, 1.0f, -1e8f, 1.0f, 3.0f, 1e-3f}, y, s = 0.0f;
    int64_t dims[1] = {0};
    int i;
    for (i = 0; i < 6; i++) s += x[i];
    CHECK_OK(run1(g, gs_reduce(g, gs_parameter(g, 0, S1(GS_F32, 6), "x"), gs_scalar(g, GS_F32, 0), GS_REDUCE_SUM, 1, dims), x,
                  &y));
    CHECK(fbits(y) == fbits(s));
    gs_ctx_destroy(ctx);
}

static void test_reduce_max_min_prod(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float x[2 * 3] = {1, NAN, 3, -4, 5, 0.5f}, mx[2], mn[3], pr[2];
    int64_t d1[1] = {1}, d0[1] = {0};
    gs_value *p = gs_parameter(g, 0, S2(GS_F32, 2, 3), "x"), *outs[3];
    const void *in[1];
    void *out[3];
    outs[0] = gs_reduce(g, p, gs_scalar(g, GS_F32, -INFINITY), GS_REDUCE_MAX, 1, d1);
    outs[1] = gs_reduce(g, p, gs_scalar(g, GS_F32, INFINITY), GS_REDUCE_MIN, 1, d0);
    outs[2] = gs_reduce(g, p, gs_scalar(g, GS_F32, 2), GS_REDUCE_PROD, 1, d1);
    CHECK_OK(gs_graph_set_outputs(g, 3, outs));
    in[0] = x;
    out[0] = mx; out[1] = mn; out[2] = pr;
    CHECK_OK(gs_eval(g, in, out));
    CHECK(isnan(mx[0]));
    CHECK(mx[1] == 5);
    CHECK(mn[0] == -4 && isnan(mn[1]) && mn[2] == 0.5f);
    CHECK(isnan(pr[0]));
    CHECK(pr[1] == 2 * -4 * 5 * 0.5f);
    gs_ctx_destroy(ctx);
}

static void test_reduce_logical_and_bitwise(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    uint8_t pv[2 * 3] = {1, 1, 1, 1, 0, 1}, an[2], orr[2];
    int32_t iv[3] = {0x0F, 0x3C, 0xF0}, ia, io;
    int64_t d1[1] = {1}, d0[1] = {0};
    gs_value *pp = gs_constant(g, S2(GS_PRED, 2, 3), pv), *pi = ci(g, S1(GS_S32, 3), iv), *outs[4];
    void *out[4];
    outs[0] = gs_reduce(g, pp, gs_scalar(g, GS_PRED, 1), GS_REDUCE_AND, 1, d1);
    outs[1] = gs_reduce(g, pp, gs_scalar(g, GS_PRED, 0), GS_REDUCE_OR, 1, d1);
    outs[2] = gs_reduce(g, pi, gs_scalar(g, GS_S32, -1), GS_REDUCE_AND, 1, d0);
    outs[3] = gs_reduce(g, pi, gs_scalar(g, GS_S32, 0), GS_REDUCE_OR, 1, d0);
    CHECK_OK(gs_graph_set_outputs(g, 4, outs));
    out[0] = an; out[1] = orr; out[2] = &ia; out[3] = &io;
    CHECK_OK(gs_eval(g, NULL, out));
    CHECK(an[0] == 1 && an[1] == 0);
    CHECK(orr[0] == 1 && orr[1] == 1);
    CHECK_EQ_INT(ia, 0x0F & 0x3C & 0xF0);
    CHECK_EQ_INT(io, 0xFF);
    gs_ctx_destroy(ctx);
}

static void test_reduce_empty_gives_init(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float y[3] = {0, 0, 0};
    int64_t d1[1] = {1};
    int i;
    CHECK_OK(run1(g, gs_reduce(g, gs_constant_splat(g, S2(GS_F32, 3, 0), 1), gs_scalar(g, GS_F32, 7), GS_REDUCE_SUM, 1, d1),
                  NULL, y));
    for (i = 0; i < 3; i++) CHECK(y[i] == 7);
    gs_ctx_destroy(ctx);
}

static void test_reduce_bf16_rounds_each_step(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    /* 256 + 1 + 1 + ... in bf16: every partial sum 257 rounds back to 256 */
    uint16_t x[9], y;
    int64_t d0[1] = {0};
    int i;
    x[0] = gs_f32_to_bf16(256.0f);
    for (i = 1; i < 9; i++) x[i] = gs_f32_to_bf16(1.0f);
    CHECK_OK(run1(g, gs_reduce(g, gs_parameter(g, 0, S1(GS_BF16, 9), "x"), gs_scalar(g, GS_BF16, 0), GS_REDUCE_SUM, 1, d0), x,
                  &y));
    CHECK(gs_bf16_to_f32(y) == 256.0f);
    gs_ctx_destroy(ctx);
}

static void test_argmax_ties_nan(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float x[3 * 4] = {1, 5, 5, 2,   NAN, 3, NAN, 9,   -1, -1, -1, -1};
    int32_t am[3], an[3];
    gs_value *p = gs_parameter(g, 0, S2(GS_F32, 3, 4), "x"), *outs[2];
    const void *in[1];
    void *out[2];
    outs[0] = gs_argmax(g, p, 1);
    outs[1] = gs_argmin(g, p, 1);
    CHECK_OK(gs_graph_set_outputs(g, 2, outs));
    in[0] = x;
    out[0] = am; out[1] = an;
    CHECK_OK(gs_eval(g, in, out));
    CHECK_EQ_INT(am[0], 1);
    CHECK_EQ_INT(am[1], 0);
    CHECK_EQ_INT(am[2], 0);
    CHECK_EQ_INT(an[0], 0);
    CHECK_EQ_INT(an[1], 0);
    CHECK_EQ_INT(an[2], 0);
    gs_ctx_destroy(ctx);
}

static void test_argmin_dim0_int(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    int32_t x[3 * 2] = {4, -1, 2, -1, 2, -7}, am[2], an[2];
    gs_value *p = ci(g, S2(GS_S32, 3, 2), x), *outs[2];
    void *out[2];
    outs[0] = gs_argmin(g, p, 0);
    outs[1] = gs_argmax(g, p, 0);
    CHECK_OK(gs_graph_set_outputs(g, 2, outs));
    out[0] = am; out[1] = an;
    CHECK_OK(gs_eval(g, NULL, out));
    CHECK_EQ_INT(am[0], 1);   /* 2 at rows 1 and 2: first */
    CHECK_EQ_INT(am[1], 2);
    CHECK_EQ_INT(an[0], 0);
    CHECK_EQ_INT(an[1], 0);   /* -1 at rows 0 and 1: first */
    gs_ctx_destroy(ctx);
}

static void test_cumsum_forward_reverse(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float x[2 * 4] = {1, 2, 3, 4, 10, 20, 30, 40}, f[8], r[8], c0[8];
    float wf[8] = {1, 3, 6, 10, 10, 30, 60, 100}, wr[8] = {10, 9, 7, 4, 100, 90, 70, 40};
    float wc[8] = {1, 2, 3, 4, 11, 22, 33, 44};
    gs_value *p = gs_parameter(g, 0, S2(GS_F32, 2, 4), "x"), *outs[3];
    const void *in[1];
    void *out[3];
    int i;
    outs[0] = gs_cumulative(g, p, GS_REDUCE_SUM, 1, false);
    outs[1] = gs_cumulative(g, p, GS_REDUCE_SUM, 1, true);
    outs[2] = gs_cumulative(g, p, GS_REDUCE_SUM, 0, false);
    CHECK_OK(gs_graph_set_outputs(g, 3, outs));
    in[0] = x;
    out[0] = f; out[1] = r; out[2] = c0;
    CHECK_OK(gs_eval(g, in, out));
    for (i = 0; i < 8; i++) {
        CHECK(f[i] == wf[i]);
        CHECK(r[i] == wr[i]);
        CHECK(c0[i] == wc[i]);
    }
    gs_ctx_destroy(ctx);
}

static void test_cum_max_min_prod(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    int32_t x[5] = {3, 1, 4, 1, 5}, mx[5], mn[5], pr[5], mxr[5];
    int32_t wmx[5] = {3, 3, 4, 4, 5}, wmn[5] = {3, 1, 1, 1, 1}, wpr[5] = {3, 3, 12, 12, 60}, wmxr[5] = {5, 5, 5, 5, 5};
    gs_value *p = ci(g, S1(GS_S32, 5), x), *outs[4];
    void *out[4];
    int i;
    outs[0] = gs_cumulative(g, p, GS_REDUCE_MAX, 0, false);
    outs[1] = gs_cumulative(g, p, GS_REDUCE_MIN, 0, false);
    outs[2] = gs_cumulative(g, p, GS_REDUCE_PROD, 0, false);
    outs[3] = gs_cumulative(g, p, GS_REDUCE_MAX, 0, true);
    CHECK_OK(gs_graph_set_outputs(g, 4, outs));
    out[0] = mx; out[1] = mn; out[2] = pr; out[3] = mxr;
    CHECK_OK(gs_eval(g, NULL, out));
    for (i = 0; i < 5; i++) {
        CHECK_EQ_INT(mx[i], wmx[i]);
        CHECK_EQ_INT(mn[i], wmn[i]);
        CHECK_EQ_INT(pr[i], wpr[i]);
        CHECK_EQ_INT(mxr[i], wmxr[i]);
    }
    gs_ctx_destroy(ctx);
}

/* ====================================================================================================== */
/* dot */

static void check_dot_case(gs_shape as, gs_shape bs, const gs_dot_dims *dd, uint64_t seed, int bf16) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    int64_t na = gs_shape_numel(&as), nb = gs_shape_numel(&bs), no, i;
    float *a = (float *)malloc(sizeof(float) * (size_t)(na + 1)), *b = (float *)malloc(sizeof(float) * (size_t)(nb + 1));
    uint16_t *ha = (uint16_t *)malloc(sizeof(uint16_t) * (size_t)(na + 1));
    uint16_t *hb = (uint16_t *)malloc(sizeof(uint16_t) * (size_t)(nb + 1));
    gs_value *v;
    gs_shape os;
    double *want, *mag;
    float *y;
    uint16_t *hy;
    const void *in[2];
    void *out[1];
    fill_rand(a, na, seed);
    fill_rand(b, nb, seed + 1);
    if (bf16) {
        as.dtype = bs.dtype = GS_BF16;
        for (i = 0; i < na; i++) { ha[i] = gs_f32_to_bf16(a[i]); a[i] = gs_bf16_to_f32(ha[i]); }
        for (i = 0; i < nb; i++) { hb[i] = gs_f32_to_bf16(b[i]); b[i] = gs_bf16_to_f32(hb[i]); }
    }
    v = gs_dot(g, gs_parameter(g, 0, as, "a"), gs_parameter(g, 1, bs, "b"), dd);
    CHECK(v != NULL);
    if (!v) {
        free(a); free(b); free(ha); free(hb);
        gs_ctx_destroy(ctx);
        return;
    }
    os = gs_value_shape(v);
    no = gs_shape_numel(&os);
    want = (double *)malloc(sizeof(double) * (size_t)(no + 1));
    mag = (double *)malloc(sizeof(double) * (size_t)(no + 1));
    y = (float *)malloc(sizeof(float) * (size_t)(no + 1));
    hy = (uint16_t *)malloc(sizeof(uint16_t) * (size_t)(no + 1));
    naive_dot(a, as, b, bs, dd, want, mag);
    in[0] = bf16 ? (const void *)ha : (const void *)a;
    in[1] = bf16 ? (const void *)hb : (const void *)b;
    out[0] = bf16 ? (void *)hy : (void *)y;
    CHECK_OK(run(g, v, in, out));
    for (i = 0; i < no; i++) {
        double got = bf16 ? gs_bf16_to_f32(hy[i]) : y[i];
        double tol = 1e-5 * mag[i] + 1e-6 + (bf16 ? fabs(want[i]) / 128.0 : 0);
        CHECK_NEAR(got, want[i], tol);
        if (bf16) CHECK(got == bfr((float)got));
    }
    free(a); free(b); free(ha); free(hb); free(want); free(mag); free(y); free(hy);
    gs_ctx_destroy(ctx);
}

static gs_dot_dims matmul_dims(void) {
    gs_dot_dims d;
    memset(&d, 0, sizeof d);
    d.n_contract = 1;
    d.lhs_contract[0] = 1;
    d.rhs_contract[0] = 0;
    return d;
}

static void test_dot_matmul_hand(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float a[2 * 3] = {1, 2, 3, 4, 5, 6}, b[3 * 2] = {7, 8, 9, 10, 11, 12}, y[4];
    gs_dot_dims d = matmul_dims();
    CHECK_OK(run1(g, gs_dot(g, cf(g, S2(GS_F32, 2, 3), a), cf(g, S2(GS_F32, 3, 2), b), &d), NULL, y));
    CHECK(y[0] == 58 && y[1] == 64 && y[2] == 139 && y[3] == 154);
    gs_ctx_destroy(ctx);
}

static void test_dot_sizes(void) {
    gs_dot_dims d = matmul_dims();
    check_dot_case(S2(GS_F32, 1, 1), S2(GS_F32, 1, 1), &d, 21, 0);
    check_dot_case(S2(GS_F32, 7, 13), S2(GS_F32, 13, 5), &d, 22, 0);
    check_dot_case(S2(GS_F32, 65, 33), S2(GS_F32, 33, 129), &d, 23, 0);
    check_dot_case(S2(GS_F32, 1, 300), S2(GS_F32, 300, 1), &d, 24, 0);
}

static void test_dot_transposed_operands(void) {
    gs_dot_dims d;
    memset(&d, 0, sizeof d);
    /* lhs [K, M], rhs [N, K]: both need the transpose */
    d.n_contract = 1;
    d.lhs_contract[0] = 0;
    d.rhs_contract[0] = 1;
    check_dot_case(S2(GS_F32, 17, 9), S2(GS_F32, 11, 17), &d, 31, 0);
}

static void test_dot_batch_multi_contract(void) {
    gs_dot_dims d;
    memset(&d, 0, sizeof d);
    /* lhs [b=3, k1=4, m=5, k2=2], rhs [k2=2, b=3, n=6, k1=4] */
    d.n_batch = 1;
    d.lhs_batch[0] = 0;
    d.rhs_batch[0] = 1;
    d.n_contract = 2;
    d.lhs_contract[0] = 1; d.rhs_contract[0] = 3;
    d.lhs_contract[1] = 3; d.rhs_contract[1] = 0;
    check_dot_case(S4(GS_F32, 3, 4, 5, 2), S4(GS_F32, 2, 3, 6, 4), &d, 41, 0);
}

static void test_dot_two_batch_dims_odd(void) {
    gs_dot_dims d;
    memset(&d, 0, sizeof d);
    /* lhs [m=7, b1=2, k=13, b2=3], rhs [b2=3, b1=2, k=13, n=5]; batch order (b2, b1) */
    d.n_batch = 2;
    d.lhs_batch[0] = 3; d.rhs_batch[0] = 0;
    d.lhs_batch[1] = 1; d.rhs_batch[1] = 1;
    d.n_contract = 1;
    d.lhs_contract[0] = 2; d.rhs_contract[0] = 2;
    check_dot_case(S4(GS_F32, 7, 2, 13, 3), S4(GS_F32, 3, 2, 13, 5), &d, 51, 0);
}

static void test_dot_bf16(void) {
    gs_dot_dims d = matmul_dims();
    check_dot_case(S2(GS_BF16, 7, 13), S2(GS_BF16, 13, 5), &d, 61, 1);
    check_dot_case(S2(GS_BF16, 65, 33), S2(GS_BF16, 33, 129), &d, 62, 1);
}

static void test_dot_outer_and_empty_contract(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float a[3] = {1, 2, 3}, b[2] = {10, 20}, y[6], z[4] = {9, 9, 9, 9};
    gs_dot_dims outer, d = matmul_dims();
    gs_value *outs[2];
    void *out[2];
    int i, j;
    memset(&outer, 0, sizeof outer);
    outs[0] = gs_dot(g, cf(g, S1(GS_F32, 3), a), cf(g, S1(GS_F32, 2), b), &outer);
    outs[1] = gs_dot(g, gs_constant_splat(g, S2(GS_F32, 2, 0), 1), gs_constant_splat(g, S2(GS_F32, 0, 2), 1), &d);
    CHECK_OK(gs_graph_set_outputs(g, 2, outs));
    out[0] = y; out[1] = z;
    CHECK_OK(gs_eval(g, NULL, out));
    for (i = 0; i < 3; i++)
        for (j = 0; j < 2; j++) CHECK(y[i * 2 + j] == a[i] * b[j]);
    for (i = 0; i < 4; i++) CHECK(z[i] == 0);
    gs_ctx_destroy(ctx);
}

static void test_dot_s32_exact(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    int32_t a[3 * 4], b[4 * 2], y[3 * 2];
    gs_dot_dims d = matmul_dims();
    int i, j, k;
    for (i = 0; i < 12; i++) a[i] = (i % 2 ? 65536 : -3) + i;
    for (i = 0; i < 8; i++) b[i] = 65537 * (i + 1);
    CHECK_OK(run1(g, gs_dot(g, ci(g, S2(GS_S32, 3, 4), a), ci(g, S2(GS_S32, 4, 2), b), &d), NULL, y));
    for (i = 0; i < 3; i++)
        for (j = 0; j < 2; j++) {
            uint32_t s = 0;
            for (k = 0; k < 4; k++) s += (uint32_t)a[i * 4 + k] * (uint32_t)b[k * 2 + j];
            CHECK_EQ_INT(y[i * 2 + j], (int32_t)s);
        }
    gs_ctx_destroy(ctx);
}

static void test_einsum_eval(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float a[2 * 3 * 4], b[4 * 5], y[2 * 5 * 3];
    gs_value *v;
    int gg, s, e, m;
    fill_rand(a, 24, 71);
    fill_rand(b, 20, 72);
    /* out[g, e, s] = sum_m a[g, s, m] b[m, e] */
    v = gs_einsum(g, "GSM,ME->GES", cf(g, S3(GS_F32, 2, 3, 4), a), cf(g, S2(GS_F32, 4, 5), b));
    CHECK_OK(run1(g, v, NULL, y));
    for (gg = 0; gg < 2; gg++)
        for (e = 0; e < 5; e++)
            for (s = 0; s < 3; s++) {
                double w = 0;
                for (m = 0; m < 4; m++) w += (double)a[(gg * 3 + s) * 4 + m] * b[m * 5 + e];
                CHECK_NEAR(y[(gg * 5 + e) * 3 + s], w, 1e-5);
            }
    gs_ctx_destroy(ctx);
}

/* ====================================================================================================== */
/* gather / scatter */

static void test_gather_embedding(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float table[5 * 3], y[4 * 3];
    int32_t ids[4] = {3, 0, 9, -2};   /* 9 and -2 clamp to 4 and 0 */
    int32_t want[4] = {3, 0, 4, 0};
    gs_gather_dims gd;
    const void *in[2];
    void *out[1];
    int i, j;
    for (i = 0; i < 15; i++) table[i] = (float)i;
    memset(&gd, 0, sizeof gd);
    gd.n_offset_dims = 1; gd.offset_dims[0] = 1;
    gd.n_collapsed_slice_dims = 1; gd.collapsed_slice_dims[0] = 0;
    gd.n_start_index_map = 1; gd.start_index_map[0] = 0;
    gd.index_vector_dim = 1;
    gd.slice_sizes[0] = 1; gd.slice_sizes[1] = 3;
    in[0] = table; in[1] = ids;
    out[0] = y;
    CHECK_OK(run(g, gs_gather(g, gs_parameter(g, 0, S2(GS_F32, 5, 3), "t"), gs_parameter(g, 1, S1(GS_S32, 4), "i"), &gd), in,
                 out));
    for (i = 0; i < 4; i++)
        for (j = 0; j < 3; j++) CHECK(y[i * 3 + j] == table[want[i] * 3 + j]);
    gs_ctx_destroy(ctx);
}

static void test_gather_2d_index_vector_clamped(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    int32_t x[5 * 6], y[3 * 2 * 3];
    /* index vectors along dim 0 of the indices: indices [2, 3] */
    int32_t idx[2 * 3] = {0, 4, 2,   1, 5, -1};
    gs_gather_dims gd;
    int i, a, b;
    for (i = 0; i < 30; i++) x[i] = i;
    memset(&gd, 0, sizeof gd);
    gd.n_offset_dims = 2; gd.offset_dims[0] = 1; gd.offset_dims[1] = 2;
    gd.n_start_index_map = 2; gd.start_index_map[0] = 0; gd.start_index_map[1] = 1;
    gd.index_vector_dim = 0;
    gd.slice_sizes[0] = 2; gd.slice_sizes[1] = 3;
    CHECK_OK(run1(g, gs_gather(g, ci(g, S2(GS_S32, 5, 6), x), ci(g, S2(GS_S32, 2, 3), idx), &gd), NULL, y));
    for (i = 0; i < 3; i++) {
        int r0 = idx[i], c0 = idx[3 + i];
        r0 = r0 < 0 ? 0 : (r0 > 3 ? 3 : r0);
        c0 = c0 < 0 ? 0 : (c0 > 3 ? 3 : c0);
        for (a = 0; a < 2; a++)
            for (b = 0; b < 3; b++) CHECK_EQ_INT(y[(i * 2 + a) * 3 + b], x[(r0 + a) * 6 + c0 + b]);
    }
    gs_ctx_destroy(ctx);
}

static void test_gather_dispatch_batching(void) {
    /* GShard-style dispatch: per group g, expert e, capacity slot c, fetch token idx[g,e,c] of group g.
       operand [G=2, S=5, M=3], indices [G=2, E=3, C=2, 1] (index_vector_dim 3), operand batching dim 0. */
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float x[2 * 5 * 3], y[2 * 3 * 2 * 3];
    int32_t idx[2 * 3 * 2];
    gs_gather_dims gd;
    gs_value *v;
    gs_shape s;
    int i, gg, e, c, m;
    for (i = 0; i < 30; i++) x[i] = (float)(i * 10);
    for (i = 0; i < 12; i++) idx[i] = (i * 7) % 6;   /* 5 clamps to 4... values 0..5 */
    memset(&gd, 0, sizeof gd);
    gd.n_offset_dims = 1; gd.offset_dims[0] = 3;
    gd.n_collapsed_slice_dims = 1; gd.collapsed_slice_dims[0] = 1;
    gd.n_start_index_map = 1; gd.start_index_map[0] = 1;
    gd.n_operand_batching_dims = 1; gd.operand_batching_dims[0] = 0; gd.start_indices_batching_dims[0] = 0;
    gd.index_vector_dim = 3;
    gd.slice_sizes[0] = 1; gd.slice_sizes[1] = 1; gd.slice_sizes[2] = 3;
    v = gs_gather(g, cf(g, S3(GS_F32, 2, 5, 3), x), ci(g, S4(GS_S32, 2, 3, 2, 1), idx), &gd);
    s = gs_value_shape(v);
    CHECK(s.rank == 4 && s.dims[0] == 2 && s.dims[1] == 3 && s.dims[2] == 2 && s.dims[3] == 3);
    CHECK_OK(run1(g, v, NULL, y));
    for (gg = 0; gg < 2; gg++)
        for (e = 0; e < 3; e++)
            for (c = 0; c < 2; c++) {
                int t = idx[(gg * 3 + e) * 2 + c];
                if (t > 4) t = 4;
                for (m = 0; m < 3; m++) CHECK(y[((gg * 3 + e) * 2 + c) * 3 + m] == x[(gg * 5 + t) * 3 + m]);
            }
    gs_ctx_destroy(ctx);
}

static void test_scatter_add_duplicates_oob(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float base[5 * 3], upd[5 * 3], y[15], want[15];
    int32_t idx[5] = {1, 3, 1, 7, -1};   /* 7 and -1 are skipped */
    gs_scatter_dims sd;
    const void *in[3];
    void *out[1];
    int i, j;
    for (i = 0; i < 15; i++) {
        base[i] = (float)i;
        upd[i] = (float)(100 * (i + 1));
        want[i] = base[i];
    }
    for (i = 0; i < 5; i++)
        if (idx[i] >= 0 && idx[i] < 5)
            for (j = 0; j < 3; j++) want[idx[i] * 3 + j] += upd[i * 3 + j];
    memset(&sd, 0, sizeof sd);
    sd.n_update_window_dims = 1; sd.update_window_dims[0] = 1;
    sd.n_inserted_window_dims = 1; sd.inserted_window_dims[0] = 0;
    sd.n_scatter_dims_to_operand_dims = 1; sd.scatter_dims_to_operand_dims[0] = 0;
    sd.index_vector_dim = 1;
    in[0] = base; in[1] = idx; in[2] = upd;
    out[0] = y;
    CHECK_OK(run(g, gs_scatter(g, gs_parameter(g, 0, S2(GS_F32, 5, 3), "o"), gs_parameter(g, 1, S1(GS_S32, 5), "i"),
                               gs_parameter(g, 2, S2(GS_F32, 5, 3), "u"), &sd, GS_REDUCE_SUM), in, out));
    for (i = 0; i < 15; i++) CHECK(y[i] == want[i]);
    gs_ctx_destroy(ctx);
}

static void test_scatter_replace_window_oob_skipped(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    int32_t base[6] = {0, 0, 0, 0, 0, 0}, y[6];
    int32_t idx[3] = {4, 2, 0};              /* start 4 with a window of 3 leaves the operand: skipped */
    int32_t upd[3 * 3] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    int32_t want[6] = {7, 8, 9, 5, 6, 0};    /* [0..3) by update 2 (last), [2..5) by update 1 first */
    gs_scatter_dims sd;
    int i;
    memset(&sd, 0, sizeof sd);
    sd.n_update_window_dims = 1; sd.update_window_dims[0] = 1;
    sd.n_scatter_dims_to_operand_dims = 1; sd.scatter_dims_to_operand_dims[0] = 0;
    sd.index_vector_dim = 1;
    CHECK_OK(run1(g, gs_scatter(g, ci(g, S1(GS_S32, 6), base), ci(g, S2(GS_S32, 3, 1), idx), ci(g, S2(GS_S32, 3, 3), upd), &sd,
                                GS_REDUCE_REPLACE), NULL, y));
    /* update 1 writes [2..5) = 4,5,6; update 2 writes [0..3) = 7,8,9 (overwrites index 2) */
    for (i = 0; i < 6; i++) CHECK_EQ_INT(y[i], want[i]);
    gs_ctx_destroy(ctx);
}

static void test_scatter_batching_dims(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float base[2 * 4], upd[2 * 3] = {1, 2, 3, 10, 20, 30}, y[8], want[8];
    int32_t idx[2 * 3] = {0, 3, 0, 2, 2, 1};
    gs_scatter_dims sd;
    int b, j;
    for (b = 0; b < 8; b++) want[b] = base[b] = (float)b;
    for (b = 0; b < 2; b++)
        for (j = 0; j < 3; j++) want[b * 4 + idx[b * 3 + j]] += upd[b * 3 + j];
    memset(&sd, 0, sizeof sd);
    sd.n_inserted_window_dims = 1; sd.inserted_window_dims[0] = 1;
    sd.n_input_batching_dims = 1; sd.input_batching_dims[0] = 0; sd.scatter_indices_batching_dims[0] = 0;
    sd.n_scatter_dims_to_operand_dims = 1; sd.scatter_dims_to_operand_dims[0] = 1;
    sd.index_vector_dim = 2;
    CHECK_OK(run1(g, gs_scatter(g, cf(g, S2(GS_F32, 2, 4), base), ci(g, S2(GS_S32, 2, 3), idx), cf(g, S2(GS_F32, 2, 3), upd), &sd,
                                GS_REDUCE_SUM), NULL, y));
    for (b = 0; b < 8; b++) CHECK(y[b] == want[b]);
    gs_ctx_destroy(ctx);
}

static void test_scatter_max_2d_index(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    int32_t base[3 * 3] = {0}, y[9];
    int32_t idx[3 * 2] = {0, 0, 2, 1, 0, 0};   /* (0,0), (2,1), (0,0) */
    int32_t upd[3] = {5, 7, 3};
    gs_scatter_dims sd;
    int i;
    memset(&sd, 0, sizeof sd);
    sd.n_inserted_window_dims = 2; sd.inserted_window_dims[0] = 0; sd.inserted_window_dims[1] = 1;
    sd.n_scatter_dims_to_operand_dims = 2; sd.scatter_dims_to_operand_dims[0] = 0; sd.scatter_dims_to_operand_dims[1] = 1;
    sd.index_vector_dim = 1;
    CHECK_OK(run1(g, gs_scatter(g, ci(g, S2(GS_S32, 3, 3), base), ci(g, S2(GS_S32, 3, 2), idx), ci(g, S1(GS_S32, 3), upd), &sd,
                                GS_REDUCE_MAX), NULL, y));
    for (i = 0; i < 9; i++) CHECK_EQ_INT(y[i], i == 0 ? 5 : (i == 7 ? 7 : 0));
    gs_ctx_destroy(ctx);
}

/* ====================================================================================================== */
/* sort / topk */

static void test_sort_nan_both_directions(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float x[6] = {3, NAN, -1, 2, NAN, -5}, a[6], d[6];
    gs_value *p = gs_parameter(g, 0, S1(GS_F32, 6), "x"), *outs[2];
    const void *in[1];
    void *out[2];
    outs[0] = gs_sort(g, 1, &p, 0, false);
    outs[1] = gs_sort(g, 1, &p, 0, true);
    CHECK_OK(gs_graph_set_outputs(g, 2, outs));
    in[0] = x;
    out[0] = a; out[1] = d;
    CHECK_OK(gs_eval(g, in, out));
    CHECK(a[0] == -5 && a[1] == -1 && a[2] == 2 && a[3] == 3 && isnan(a[4]) && isnan(a[5]));
    CHECK(isnan(d[0]) && isnan(d[1]) && d[2] == 3 && d[3] == 2 && d[4] == -1 && d[5] == -5);
    gs_ctx_destroy(ctx);
}

static void test_sort_stable_multi_operand(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    /* rows sorted along dim 1; keys tie, payloads show stability */
    int32_t k[2 * 5] = {2, 1, 2, 1, 0,   5, 5, 5, 4, 6};
    float v[2 * 5] = {0, 1, 2, 3, 4,   10, 11, 12, 13, 14};
    int32_t ka[10], kd[10];
    float va[10], vd[10];
    int32_t wka[10] = {0, 1, 1, 2, 2, 4, 5, 5, 5, 6};
    float wva[10] = {4, 1, 3, 0, 2, 13, 10, 11, 12, 14};
    int32_t wkd[10] = {2, 2, 1, 1, 0, 6, 5, 5, 5, 4};
    float wvd[10] = {0, 2, 1, 3, 4, 14, 10, 11, 12, 13};
    gs_value *xs[2], *sa, *sdv, *outs[4];
    void *out[4];
    int i;
    xs[0] = ci(g, S2(GS_S32, 2, 5), k);
    xs[1] = cf(g, S2(GS_F32, 2, 5), v);
    sa = gs_sort(g, 2, xs, 1, false);
    sdv = gs_sort(g, 2, xs, 1, true);
    outs[0] = gs_get_tuple_element(g, sa, 0);
    outs[1] = gs_get_tuple_element(g, sa, 1);
    outs[2] = gs_get_tuple_element(g, sdv, 0);
    outs[3] = gs_get_tuple_element(g, sdv, 1);
    CHECK_OK(gs_graph_set_outputs(g, 4, outs));
    out[0] = ka; out[1] = va; out[2] = kd; out[3] = vd;
    CHECK_OK(gs_eval(g, NULL, out));
    for (i = 0; i < 10; i++) {
        CHECK_EQ_INT(ka[i], wka[i]);
        CHECK(va[i] == wva[i]);
        CHECK_EQ_INT(kd[i], wkd[i]);
        CHECK(vd[i] == wvd[i]);
    }
    gs_ctx_destroy(ctx);
}

static void test_sort_dim0_and_tuple_root(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float x[3 * 2] = {3, 0, 1, 5, 2, -1}, v[6];
    int32_t ix[6];
    float wv[6] = {1, -1, 2, 0, 3, 5};
    int32_t wi[6] = {1, 2, 2, 0, 0, 1};
    void *out[2];
    int i;
    CHECK_OK(gs_graph_set_root(g, gs_sort_with_indices(g, cf(g, S2(GS_F32, 3, 2), x), 0, false)));
    CHECK_EQ_INT(gs_graph_num_outputs(g), 2);
    out[0] = v; out[1] = ix;
    CHECK_OK(gs_eval(g, NULL, out));
    for (i = 0; i < 6; i++) {
        CHECK(v[i] == wv[i]);
        CHECK_EQ_INT(ix[i], wi[i]);
    }
    gs_ctx_destroy(ctx);
}

static void test_topk_ties_nan(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float x[2 * 6] = {1, 5, 3, 5, NAN, 0,   2, 2, 2, 1, 1, 9};
    float vl[6], vs[6];
    int32_t il[6], is[6];
    gs_value *p = gs_parameter(g, 0, S2(GS_F32, 2, 6), "x"), *tl, *ts, *outs[4];
    const void *in[1];
    void *out[4];
    tl = gs_topk(g, p, 3, true);
    ts = gs_topk(g, p, 3, false);
    outs[0] = gs_get_tuple_element(g, tl, 0);
    outs[1] = gs_get_tuple_element(g, tl, 1);
    outs[2] = gs_get_tuple_element(g, ts, 0);
    outs[3] = gs_get_tuple_element(g, ts, 1);
    CHECK_OK(gs_graph_set_outputs(g, 4, outs));
    in[0] = x;
    out[0] = vl; out[1] = il; out[2] = vs; out[3] = is;
    CHECK_OK(gs_eval(g, in, out));
    /* row 0 largest: NaN (4), 5 (1), 5 (3); smallest: 0 (5), 1 (0), 3 (2) */
    CHECK(isnan(vl[0]) && vl[1] == 5 && vl[2] == 5);
    CHECK(il[0] == 4 && il[1] == 1 && il[2] == 3);
    CHECK(vs[0] == 0 && vs[1] == 1 && vs[2] == 3);
    CHECK(is[0] == 5 && is[1] == 0 && is[2] == 2);
    /* row 1 largest: 9 (5), 2 (0), 2 (1); smallest: 1 (3), 1 (4), 2 (0) */
    CHECK(vl[3] == 9 && vl[4] == 2 && vl[5] == 2 && il[3] == 5 && il[4] == 0 && il[5] == 1);
    CHECK(vs[3] == 1 && vs[4] == 1 && vs[5] == 2 && is[3] == 3 && is[4] == 4 && is[5] == 0);
    gs_ctx_destroy(ctx);
}

static void test_topk_int_vs_naive(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    int32_t x[4 * 37], v[4 * 5], ix[4 * 5];
    uint64_t s = 99;
    gs_value *t;
    void *out[2];
    int r, i, k;
    for (i = 0; i < 4 * 37; i++) x[i] = (int32_t)gst_randint(&s, -10, 10);
    t = gs_topk(g, ci(g, S2(GS_S32, 4, 37), x), 5, true);
    CHECK_OK(gs_graph_set_root(g, t));
    out[0] = v; out[1] = ix;
    CHECK_OK(gs_eval(g, NULL, out));
    for (r = 0; r < 4; r++) {
        /* naive: repeatedly take the largest unused value, lowest index first */
        int used[37] = {0};
        for (k = 0; k < 5; k++) {
            int best = -1;
            for (i = 0; i < 37; i++)
                if (!used[i] && (best < 0 || x[r * 37 + i] > x[r * 37 + best])) best = i;
            used[best] = 1;
            CHECK_EQ_INT(v[r * 5 + k], x[r * 37 + best]);
            CHECK_EQ_INT(ix[r * 5 + k], best);
        }
    }
    gs_ctx_destroy(ctx);
}

/* ====================================================================================================== */
/* rng */

/* the documented generator: splitmix64's finaliser of seed * 0x9E3779B97F4A7C15 + i + 1 */
static uint64_t doc_rng_bits(uint64_t seed, uint64_t i) {
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + i + 1;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void test_rng_float_range_and_determinism(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float y1[1000], y2[1000];
    gs_value *v = gs_rng_uniform(g, gs_scalar(g, GS_F32, -2), gs_scalar(g, GS_F32, 3), S2(GS_F32, 10, 100), 1234);
    double mean = 0;
    int i;
    CHECK_OK(run1(g, v, NULL, y1));
    {
        void *out2[1];
        out2[0] = y2;
        CHECK_OK(gs_eval(g, NULL, out2));
    }
    for (i = 0; i < 1000; i++) {
        double u = (double)(doc_rng_bits(1234, (uint64_t)i) >> 40) / 16777216.0;
        CHECK(fbits(y1[i]) == fbits(y2[i]));
        CHECK(y1[i] >= -2.0f && y1[i] < 3.0f);
        CHECK(y1[i] == (float)(-2.0 + 5.0 * u));
        mean += y1[i];
    }
    CHECK_NEAR(mean / 1000, 0.5, 0.15);
    gs_ctx_destroy(ctx);
}

static void test_rng_int_and_degenerate(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    int32_t y[50], z[4];
    uint16_t b[64];
    gs_value *outs[3];
    void *out[3];
    int i;
    outs[0] = gs_rng_uniform(g, gs_scalar(g, GS_S32, -3), gs_scalar(g, GS_S32, 4), S1(GS_S32, 50), 7);
    outs[1] = gs_rng_uniform(g, gs_scalar(g, GS_S32, 5), gs_scalar(g, GS_S32, 5), S1(GS_S32, 4), 7);
    outs[2] = gs_rng_uniform(g, gs_scalar(g, GS_BF16, 0), gs_scalar(g, GS_BF16, 1), S1(GS_BF16, 64), 9);
    CHECK_OK(gs_graph_set_outputs(g, 3, outs));
    out[0] = y; out[1] = z; out[2] = b;
    CHECK_OK(gs_eval(g, NULL, out));
    for (i = 0; i < 50; i++) CHECK_EQ_INT(y[i], -3 + (int32_t)(doc_rng_bits(7, (uint64_t)i) % 7));
    for (i = 0; i < 4; i++) CHECK_EQ_INT(z[i], 5);
    for (i = 0; i < 64; i++) {
        float f = gs_bf16_to_f32(b[i]);
        CHECK(f >= 0.0f && f < 1.0f);
    }
    gs_ctx_destroy(ctx);
}

/* ====================================================================================================== */
/* tuples, while, collectives */

static void test_tuple_root_and_gte(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float x[2] = {1, 2}, a[2], b[2], c[2];
    gs_value *p = gs_parameter(g, 0, S1(GS_F32, 2), "x"), *t, *xs[2], *outs[3];
    const void *in[1];
    void *out[3];
    xs[0] = p;
    xs[1] = gs_neg(g, p);
    t = gs_tuple(g, 2, xs);
    outs[0] = gs_get_tuple_element(g, t, 1);
    outs[1] = p;                           /* the same buffer twice, and a parameter: copied */
    outs[2] = p;
    CHECK_OK(gs_graph_set_outputs(g, 3, outs));
    CHECK_EQ_INT(gs_graph_num_outputs(g), 3);
    in[0] = x;
    out[0] = a; out[1] = b; out[2] = c;
    CHECK_OK(gs_eval(g, in, out));
    CHECK(a[0] == -1 && a[1] == -2 && b[0] == 1 && b[1] == 2 && c[0] == 1 && c[1] == 2);
    gs_ctx_destroy(ctx);
}

static void test_same_intermediate_twice_in_root(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float x[2] = {1, 2}, a[2], b[2];
    gs_value *p = gs_parameter(g, 0, S1(GS_F32, 2), "x"), *s, *outs[2];
    const void *in[1];
    void *out[2];
    s = gs_add(g, p, p);
    outs[0] = s;
    outs[1] = s;
    CHECK_OK(gs_graph_set_outputs(g, 2, outs));
    in[0] = x;
    out[0] = a; out[1] = b;
    CHECK_OK(gs_eval(g, in, out));
    CHECK(a[0] == 2 && a[1] == 4 && b[0] == 2 && b[1] == 4);
    gs_ctx_destroy(ctx);
}

/* state (i: s32, acc: f32, v: f32[3]); while i < n: acc += i; i += 1 (v passes through) */
static gs_value *counted_loop(gs_ctx *ctx, gs_graph *g, gs_value *init, int n) {
    gs_graph *cond = gs_graph_new(ctx, "cond"), *body = gs_graph_new(ctx, "body");
    gs_shape shapes[3];
    gs_value *cs, *bs, *ni, *na, *xs[3];
    shapes[0] = S0(GS_S32);
    shapes[1] = S0(GS_F32);
    shapes[2] = S1(GS_F32, 3);
    cs = gs_parameter_tuple(cond, 0, 3, shapes, "s");
    gs_graph_set_root(cond, gs_compare(cond, gs_get_tuple_element(cond, cs, 0), gs_scalar(cond, GS_S32, n), GS_CMP_LT));
    bs = gs_parameter_tuple(body, 0, 3, shapes, "s");
    ni = gs_add(body, gs_get_tuple_element(body, bs, 0), gs_scalar(body, GS_S32, 1));
    na = gs_add(body, gs_get_tuple_element(body, bs, 1), gs_convert(body, gs_get_tuple_element(body, bs, 0), GS_F32));
    xs[0] = ni;
    xs[1] = na;
    xs[2] = gs_get_tuple_element(body, bs, 2);
    gs_graph_set_root(body, gs_tuple(body, 3, xs));
    return gs_while(g, cond, body, init);
}

static void test_while_counted_sum(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float v[3] = {7, 8, 9}, acc = -1, vo[3];
    int32_t i_out = -1;
    gs_value *xs[3], *w, *outs[3];
    const void *in[1];
    void *out[3];
    xs[0] = gs_scalar(g, GS_S32, 0);
    xs[1] = gs_scalar(g, GS_F32, 0.5);
    xs[2] = gs_parameter(g, 0, S1(GS_F32, 3), "v");
    w = counted_loop(ctx, g, gs_tuple(g, 3, xs), 10);
    outs[0] = gs_get_tuple_element(g, w, 0);
    outs[1] = gs_get_tuple_element(g, w, 1);
    outs[2] = gs_get_tuple_element(g, w, 2);
    CHECK_OK(gs_graph_set_outputs(g, 3, outs));
    in[0] = v;
    out[0] = &i_out; out[1] = &acc; out[2] = vo;
    CHECK_OK(gs_eval(g, in, out));
    CHECK_EQ_INT(i_out, 10);
    CHECK(acc == 45.5f);
    CHECK(vo[0] == 7 && vo[1] == 8 && vo[2] == 9);
    gs_ctx_destroy(ctx);
}

static void test_while_zero_iterations_tuple_root(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float v[3] = {1, 2, 3}, acc = -1, vo[3];
    int32_t i_out = -1;
    gs_value *xs[3], *w;
    const void *in[1];
    void *out[3];
    xs[0] = gs_scalar(g, GS_S32, 5);
    xs[1] = gs_scalar(g, GS_F32, 2);
    xs[2] = gs_parameter(g, 0, S1(GS_F32, 3), "v");
    w = counted_loop(ctx, g, gs_tuple(g, 3, xs), 3);
    CHECK_OK(gs_graph_set_root(g, w));   /* the while itself is the (tuple) root */
    in[0] = v;
    out[0] = &i_out; out[1] = &acc; out[2] = vo;
    CHECK_OK(gs_eval(g, in, out));
    CHECK_EQ_INT(i_out, 5);
    CHECK(acc == 2);
    CHECK(vo[0] == 1 && vo[2] == 3);
    gs_ctx_destroy(ctx);
}

static void test_while_array_state(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g"), *cond = gs_graph_new(ctx, "c"), *body = gs_graph_new(ctx, "b");
    int32_t y = 0;
    gs_value *cp = gs_parameter(cond, 0, S0(GS_S32), "x"), *bp = gs_parameter(body, 0, S0(GS_S32), "x");
    /* x = 2*x + 1 while x < 100, from 1: 1, 3, 7, 15, 31, 63, 127 */
    gs_graph_set_root(cond, gs_compare(cond, cp, gs_scalar(cond, GS_S32, 100), GS_CMP_LT));
    gs_graph_set_root(body, gs_add(body, gs_mul(body, bp, gs_scalar(body, GS_S32, 2)), gs_scalar(body, GS_S32, 1)));
    CHECK_OK(run1(g, gs_while(g, cond, body, gs_scalar(g, GS_S32, 1)), NULL, &y));
    CHECK_EQ_INT(y, 127);
    gs_ctx_destroy(ctx);
}

static void test_tuple_parameter_inputs(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    gs_shape shapes[2];
    float a[2] = {1, 2}, y[2];
    int32_t b = 5, z = 0;
    float c = 10;
    gs_value *t, *q, *outs[2];
    const void *in[3];
    void *out[2];
    shapes[0] = S1(GS_F32, 2);
    shapes[1] = S0(GS_S32);
    t = gs_parameter_tuple(g, 0, 2, shapes, "t");
    q = gs_parameter(g, 1, S0(GS_F32), "q");
    outs[0] = gs_add(g, gs_get_tuple_element(g, t, 0), gs_broadcast(g, q, S1(GS_F32, 2), NULL));
    outs[1] = gs_get_tuple_element(g, t, 1);
    CHECK_OK(gs_graph_set_outputs(g, 2, outs));
    /* flattened: tuple elements first, then parameter 1 */
    in[0] = a; in[1] = &b; in[2] = &c;
    out[0] = y; out[1] = &z;
    CHECK_OK(gs_eval(g, in, out));
    CHECK(y[0] == 11 && y[1] == 12);
    CHECK_EQ_INT(z, 5);
    gs_ctx_destroy(ctx);
}

static void test_collectives_single_partition(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float x[2 * 4], y[5][8];
    gs_collective_desc cd;
    int64_t self_pair[2] = {0, 0};
    gs_value *p = gs_parameter(g, 0, S2(GS_F32, 2, 4), "x"), *outs[5];
    const void *in[1];
    void *out[5];
    int i, k;
    fill_rand(x, 8, 81);
    memset(&cd, 0, sizeof cd);
    outs[0] = gs_all_reduce(g, p, GS_REDUCE_SUM, &cd);
    outs[1] = gs_all_gather(g, p, 1, &cd);
    outs[2] = gs_reduce_scatter(g, p, GS_REDUCE_SUM, 0, &cd);
    outs[3] = gs_all_to_all(g, p, 1, 0, &cd);
    outs[4] = gs_collective_permute(g, p, 1, self_pair, 0);
    CHECK_OK(gs_graph_set_outputs(g, 5, outs));
    in[0] = x;
    for (k = 0; k < 5; k++) out[k] = y[k];
    CHECK_OK(gs_eval(g, in, out));
    for (k = 0; k < 5; k++)
        for (i = 0; i < 8; i++) CHECK(y[k][i] == x[i]);
    gs_ctx_destroy(ctx);
}

static void test_collective_permute_no_source_gives_zeros(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    int32_t x[3] = {1, 2, 3}, y[3] = {9, 9, 9};
    int i;
    CHECK_OK(run1(g, gs_collective_permute(g, ci(g, S1(GS_S32, 3), x), 0, NULL, 0), NULL, y));
    for (i = 0; i < 3; i++) CHECK_EQ_INT(y[i], 0);
    gs_ctx_destroy(ctx);
}

static void test_collective_explicit_groups(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float x[2] = {1, 2}, y[2];
    int64_t ids[1] = {0};
    gs_collective_desc cd;
    memset(&cd, 0, sizeof cd);
    cd.groups.n_groups = 1;
    cd.groups.group_size = 1;
    cd.groups.ids = ids;
    CHECK_OK(run1(g, gs_all_reduce(g, gs_parameter(g, 0, S1(GS_F32, 2), "x"), GS_REDUCE_MAX, &cd), x, y));
    CHECK(y[0] == 1 && y[1] == 2);
    gs_ctx_destroy(ctx);
}

/* ====================================================================================================== */
/* size-0 shapes, chains, errors */

static void test_zero_size_everywhere(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    int64_t perm[3] = {2, 0, 1}, bd[2] = {0, 2}, rd[1] = {1}, all[3] = {0, 1, 2};
    int64_t st[3] = {0, 0, 0}, lim[3] = {0, 3, 2}, lo[3] = {1, 0, 0}, hi[3] = {0, 0, 1};
    float y0 = -1, pad_out[9], dot_out[12], junk[4];
    float dummy[1] = {0};
    gs_value *p = gs_parameter(g, 0, S3(GS_F32, 0, 3, 2), "x"), *w = gs_parameter(g, 1, S2(GS_F32, 0, 2), "w");
    gs_value *e = gs_exp(g, p), *outs[7];
    const void *in[2];
    void *out[7];
    gs_dot_dims dd;
    int i;
    memset(&dd, 0, sizeof dd);
    dd.n_contract = 1;
    outs[0] = gs_transpose(g, e, perm);                                                          /* [2,0,3] */
    outs[1] = gs_broadcast(g, gs_reduce(g, p, gs_scalar(g, GS_F32, 0), GS_REDUCE_SUM, 1, rd), S3(GS_F32, 0, 5, 2), bd);
    outs[2] = gs_reduce(g, p, gs_scalar(g, GS_F32, 3), GS_REDUCE_SUM, 3, all);                  /* 3 */
    outs[3] = gs_slice(g, p, st, lim, NULL);
    outs[4] = gs_pad(g, p, gs_scalar(g, GS_F32, 4), lo, hi, NULL);                              /* [1,3,3] of 4 */
    outs[5] = gs_dot(g, p, w, &dd);                                                              /* [3,2,2] of 0 */
    outs[6] = gs_sort(g, 1, &e, 0, false);
    for (i = 0; i < 7; i++) CHECK(outs[i] != NULL);
    CHECK_OK(gs_graph_set_outputs(g, 7, outs));
    in[0] = dummy;
    in[1] = dummy;
    out[0] = junk; out[1] = junk; out[2] = &y0; out[3] = junk; out[4] = pad_out; out[5] = dot_out; out[6] = junk;
    CHECK_OK(gs_eval(g, in, out));
    CHECK(y0 == 3);
    for (i = 0; i < 9; i++) CHECK(pad_out[i] == 4);
    for (i = 0; i < 12; i++) CHECK(dot_out[i] == 0);
    gs_ctx_destroy(ctx);
}

static void test_long_chain_frees_intermediates(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float x[64], y[64];
    gs_value *v = gs_parameter(g, 0, S1(GS_F32, 64), "x"), *p = v;
    int i;
    for (i = 0; i < 64; i++) x[i] = (float)i;
    for (i = 0; i < 200; i++) v = gs_add(g, v, p);
    CHECK_OK(run1(g, v, x, y));
    for (i = 0; i < 64; i++) CHECK(y[i] == 201.0f * x[i]);
    gs_ctx_destroy(ctx);
}

static void test_dead_code_not_needed(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float x[2] = {3, 4}, y[2];
    gs_value *p = gs_parameter(g, 0, S1(GS_F32, 2), "x");
    gs_value *r = gs_neg(g, p);
    int i;
    for (i = 0; i < 5; i++) (void)gs_exp(g, p);   /* unused */
    CHECK_OK(run1(g, r, x, y));
    CHECK(y[0] == -3 && y[1] == -4);
    gs_ctx_destroy(ctx);
}

static void test_eval_null_arguments(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g"), *h = gs_graph_new(ctx, "h");
    float x[2] = {1, 2}, y[2];
    const void *in_null[1];
    void *out_null[1];
    const void *in[1];
    void *out[1];
    CHECK(gs_eval(NULL, NULL, NULL) == GS_ERR_INVALID_ARG);
    /* no root yet */
    CHECK(gs_eval(h, NULL, NULL) != GS_OK);
    gs_ctx_clear_error(ctx);
    CHECK_OK(gs_graph_set_root(g, gs_neg(g, gs_parameter(g, 0, S1(GS_F32, 2), "x"))));
    out[0] = y;
    CHECK(gs_eval(g, NULL, out) == GS_ERR_INVALID_ARG);
    CHECK(strstr(gs_ctx_error_msg(ctx), "inputs") != NULL);
    gs_ctx_clear_error(ctx);
    in[0] = x;
    CHECK(gs_eval(g, in, NULL) == GS_ERR_INVALID_ARG);
    CHECK(strstr(gs_ctx_error_msg(ctx), "outputs") != NULL);
    gs_ctx_clear_error(ctx);
    in_null[0] = NULL;
    CHECK(gs_eval(g, in_null, out) == GS_ERR_INVALID_ARG);
    gs_ctx_clear_error(ctx);
    out_null[0] = NULL;
    CHECK(gs_eval(g, in, out_null) == GS_ERR_INVALID_ARG);
    gs_ctx_clear_error(ctx);
    CHECK_OK(gs_eval(g, in, out));
    CHECK(y[0] == -1 && y[1] == -2);
    gs_ctx_destroy(ctx);
}

static void test_eval_collective_needs_runtime(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    float x[4] = {1, 2, 3, 4}, y[8];
    gs_collective_desc cd;
    gs_result r;
    const void *in[1];
    void *out[1];
    memset(&cd, 0, sizeof cd);
    CHECK_OK(gs_graph_set_num_partitions(g, 2));
    /* all-gather over 2 partitions cannot run on the one-device interpreter */
    CHECK_OK(gs_graph_set_root(g, gs_all_gather(g, gs_parameter(g, 0, S1(GS_F32, 4), "x"), 0, &cd)));
    in[0] = x;
    out[0] = y;
    r = gs_eval(g, in, out);
    CHECK(r != GS_OK);
    CHECK(strlen(gs_ctx_error_msg(ctx)) > 0);
    gs_ctx_destroy(ctx);
}

void suite_interp(void) {
    RUN(test_constant_and_param);
    RUN(test_constant_splat_and_types);
    RUN(test_iota);
    RUN(test_iota_bf16_rounds);
    RUN(test_partition_id_u32);
    RUN(test_root_is_parameter);
    RUN(test_broadcast_dim_map);
    RUN(test_broadcast_scalar_and_in_dim);
    RUN(test_reshape);
    RUN(test_transpose_3d);
    RUN(test_transpose_4d);
    RUN(test_transpose_tiled);
    RUN(test_slice_strided);
    RUN(test_slice_empty);
    RUN(test_dynamic_slice_clamped);
    RUN(test_dynamic_update_slice_clamped);
    RUN(test_pad_negative_and_interior);
    RUN(test_pad_everything_cropped);
    RUN(test_concatenate);
    RUN(test_reverse);
    RUN(test_copy_and_annotate);
    RUN(test_to_manual_to_full);
    RUN(test_convert_float_to_int);
    RUN(test_convert_int_pred);
    RUN(test_convert_to_bf16_rne);
    RUN(test_unary_float);
    RUN(test_unary_float_edges);
    RUN(test_unary_int);
    RUN(test_logical_pred);
    RUN(test_bitwise_int);
    RUN(test_binary_float);
    RUN(test_div_rem_s32_edges);
    RUN(test_div_rem_u32_and_wrap);
    RUN(test_remainder_float);
    RUN(test_max_min_nan_and_zero);
    RUN(test_power_int);
    RUN(test_compare_float_nan);
    RUN(test_compare_signedness);
    RUN(test_select);
    RUN(test_clamp);
    RUN(test_bf16_elementwise_rounding);
    RUN(test_reduce_sum_several_dims);
    RUN(test_reduce_all_dims);
    RUN(test_reduce_order_exact);
    RUN(test_reduce_max_min_prod);
    RUN(test_reduce_logical_and_bitwise);
    RUN(test_reduce_empty_gives_init);
    RUN(test_reduce_bf16_rounds_each_step);
    RUN(test_argmax_ties_nan);
    RUN(test_argmin_dim0_int);
    RUN(test_cumsum_forward_reverse);
    RUN(test_cum_max_min_prod);
    RUN(test_dot_matmul_hand);
    RUN(test_dot_sizes);
    RUN(test_dot_transposed_operands);
    RUN(test_dot_batch_multi_contract);
    RUN(test_dot_two_batch_dims_odd);
    RUN(test_dot_bf16);
    RUN(test_dot_outer_and_empty_contract);
    RUN(test_dot_s32_exact);
    RUN(test_einsum_eval);
    RUN(test_gather_embedding);
    RUN(test_gather_2d_index_vector_clamped);
    RUN(test_gather_dispatch_batching);
    RUN(test_scatter_add_duplicates_oob);
    RUN(test_scatter_replace_window_oob_skipped);
    RUN(test_scatter_batching_dims);
    RUN(test_scatter_max_2d_index);
    RUN(test_sort_nan_both_directions);
    RUN(test_sort_stable_multi_operand);
    RUN(test_sort_dim0_and_tuple_root);
    RUN(test_topk_ties_nan);
    RUN(test_topk_int_vs_naive);
    RUN(test_rng_float_range_and_determinism);
    RUN(test_rng_int_and_degenerate);
    RUN(test_tuple_root_and_gte);
    RUN(test_same_intermediate_twice_in_root);
    RUN(test_while_counted_sum);
    RUN(test_while_zero_iterations_tuple_root);
    RUN(test_while_array_state);
    RUN(test_tuple_parameter_inputs);
    RUN(test_collectives_single_partition);
    RUN(test_collective_permute_no_source_gives_zeros);
    RUN(test_collective_explicit_groups);
    RUN(test_zero_size_everywhere);
    RUN(test_long_chain_frees_intermediates);
    RUN(test_dead_code_not_needed);
    RUN(test_eval_null_arguments);
    RUN(test_eval_collective_needs_runtime);
}
