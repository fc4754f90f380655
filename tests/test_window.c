/* test_window.c - convolution, reduce-window and the matmul behind dot, evaluated through gs_eval and
   compared with hand-computed values or with naive loops written straight from the XLA definitions. */
#include "test.h"

/* ---------------------------------------------------------------------------------------------------------
   Small helpers
   ------------------------------------------------------------------------------------------------------- */

static int64_t tw_numel(const gs_shape *s) {
    int64_t n = 1;
    int i;
    for (i = 0; i < s->rank; i++) n *= s->dims[i];
    return n;
}

static void tw_strides(const gs_shape *s, int64_t *st) {
    int64_t n = 1;
    int i;
    for (i = s->rank - 1; i >= 0; i--) {
        st[i] = n;
        n *= s->dims[i];
    }
}

static void tw_unravel(const gs_shape *s, int64_t e, int64_t *idx) {
    int i;
    for (i = s->rank - 1; i >= 0; i--) {
        idx[i] = s->dims[i] ? e % s->dims[i] : 0;
        if (s->dims[i]) e /= s->dims[i];
    }
}

static gs_shape tw_shape(gs_dtype dt, int rank, const int64_t *dims) {
    gs_shape s;
    int i;
    memset(&s, 0, sizeof s);
    s.dtype = dt;
    s.rank = rank;
    for (i = 0; i < rank; i++) s.dims[i] = dims[i];
    return s;
}

static gs_window_dim tw_win(int64_t size, int64_t stride, int64_t lo, int64_t hi, int64_t base_dil, int64_t win_dil) {
    gs_window_dim w;
    w.size = size;
    w.stride = stride;
    w.pad_lo = lo;
    w.pad_hi = hi;
    w.base_dilation = base_dil;
    w.window_dilation = win_dil;
    return w;
}

/* output size of one window dim, straight from the definition (counting valid window starts) */
static int64_t tw_out_size(int64_t in, const gs_window_dim *w) {
    int64_t padded = (in > 0 ? (in - 1) * w->base_dilation + 1 : 0) + w->pad_lo + w->pad_hi;
    int64_t span = (w->size - 1) * w->window_dilation + 1, n = 0, start;
    for (start = 0; start + span <= padded; start += w->stride) n++;
    return n;
}

static float tw_bf16_round(float f) { return gs_bf16_to_f32(gs_f32_to_bf16(f)); }

static void tw_shuffle(uint64_t *rs, int64_t *a, int n) {
    int i;
    for (i = n - 1; i > 0; i--) {
        int j = (int)gst_randint(rs, 0, i);
        int64_t t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

/* ---------------------------------------------------------------------------------------------------------
   Convolution: a naive reference and a runner
   ------------------------------------------------------------------------------------------------------- */

/* y[out] = sum over kernel positions and the input features of the output feature's group, directly from the
   XLA definition: input position = out * stride - pad_lo + k * rhs_dilation in the lhs-dilated input; a
   position between dilated elements or outside the input contributes nothing. */
static void ref_conv(const gs_conv_config *c, const gs_shape *is, const double *x, const gs_shape *ks,
                     const double *w, const gs_shape *os, double *y) {
    const gs_conv_dims *d = &c->dims;
    const int ns = d->n_spatial;
    const int64_t G = c->feature_group_count > 0 ? c->feature_group_count : 1;
    const int64_t B = c->batch_group_count > 0 ? c->batch_group_count : 1;
    const int64_t cout = os->dims[d->output_feature], out_batch = os->dims[d->output_batch];
    const int64_t cin_per_group = ks->dims[d->kernel_input_feature];
    int64_t ist[GS_MAX_RANK], kst[GS_MAX_RANK], e, n_out = tw_numel(os), taps = 1;
    int i;
    tw_strides(is, ist);
    tw_strides(ks, kst);
    for (i = 0; i < ns; i++) taps *= ks->dims[d->kernel_spatial[i]];
    for (e = 0; e < n_out; e++) {
        int64_t oi[GS_MAX_RANK], t, ci;
        int64_t of, ob, group, in_batch, in_feat0;
        double acc = 0;
        tw_unravel(os, e, oi);
        ob = oi[d->output_batch];
        of = oi[d->output_feature];
        group = of / (cout / (G * B));
        in_batch = B > 1 ? group * out_batch + ob : ob;
        in_feat0 = G > 1 ? group * cin_per_group : 0;
        for (t = 0; t < taps; t++) {
            int64_t kk[GS_MAX_RANK], rem = t, xoff = in_batch * ist[d->input_batch];
            int64_t koff = of * kst[d->kernel_output_feature];
            int ok = 1;
            for (i = ns - 1; i >= 0; i--) {
                kk[i] = rem % ks->dims[d->kernel_spatial[i]];
                rem /= ks->dims[d->kernel_spatial[i]];
            }
            for (i = 0; i < ns && ok; i++) {
                const gs_window_dim *wd = &c->window[i];
                int64_t pos = oi[d->output_spatial[i]] * wd->stride - wd->pad_lo + kk[i] * wd->window_dilation;
                if (pos < 0 || pos % wd->base_dilation != 0) ok = 0;
                pos /= wd->base_dilation;
                if (pos >= is->dims[d->input_spatial[i]]) ok = 0;
                xoff += pos * ist[d->input_spatial[i]];
                koff += kk[i] * kst[d->kernel_spatial[i]];
            }
            if (!ok) continue;
            for (ci = 0; ci < cin_per_group; ci++)
                acc += x[xoff + (in_feat0 + ci) * ist[d->input_feature]] * w[koff + ci * kst[d->kernel_input_feature]];
        }
        y[e] = acc;
    }
}

/* Builds input/kernel shapes from canonical sizes and the dimension numbers. */
static void conv_shapes(const gs_conv_config *c, gs_dtype dt, int64_t n, int64_t cin, int64_t cout,
                        const int64_t *spatial, gs_shape *is, gs_shape *ks, gs_shape *os) {
    const gs_conv_dims *d = &c->dims;
    const int64_t G = c->feature_group_count > 0 ? c->feature_group_count : 1;
    const int64_t B = c->batch_group_count > 0 ? c->batch_group_count : 1;
    int i;
    memset(is, 0, sizeof *is);
    memset(ks, 0, sizeof *ks);
    memset(os, 0, sizeof *os);
    is->dtype = ks->dtype = os->dtype = dt;
    is->rank = ks->rank = os->rank = d->n_spatial + 2;
    is->dims[d->input_batch] = n;
    is->dims[d->input_feature] = cin;
    ks->dims[d->kernel_input_feature] = cin / G;
    ks->dims[d->kernel_output_feature] = cout;
    os->dims[d->output_batch] = n / B;
    os->dims[d->output_feature] = cout;
    for (i = 0; i < d->n_spatial; i++) {
        is->dims[d->input_spatial[i]] = spatial[i];
        ks->dims[d->kernel_spatial[i]] = c->window[i].size;
        os->dims[d->output_spatial[i]] = tw_out_size(spatial[i], &c->window[i]);
    }
}

/* value kinds for generated data */
enum { TW_INTS = 0, TW_REALS = 1 };

/* Runs one convolution through the builders and gs_eval and compares it with ref_conv. Returns 1 if it
   matched. f32 with integer-valued data is compared exactly; otherwise within a tolerance scaled by the sum
   of |products|. */
static int conv_case(const gs_conv_config *c, gs_dtype dt, int64_t n, int64_t cin, int64_t cout,
                     const int64_t *spatial, uint64_t *rs, int values, const char *what) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "conv");
    gs_shape is, ks, os, got_shape;
    gs_value *xv, *kv, *cv;
    int64_t nx, nk, ny, e, bad = -1;
    double *x, *w, *y, *xa, *wa, *ya;
    void *xs, *wsd, *ys;
    size_t esz = dt == GS_BF16 ? 2 : 4;
    int ok = 1;
    conv_shapes(c, dt, n, cin, cout, spatial, &is, &ks, &os);
    xv = gs_parameter(g, 0, is, "x");
    kv = gs_parameter(g, 1, ks, "k");
    cv = gs_convolution(g, xv, kv, c);
    if (!cv) {
        gst_failf(__FILE__, __LINE__, "%s: gs_convolution failed: %s", what, gs_ctx_error_msg(ctx));
        gs_ctx_destroy(ctx);
        return 0;
    }
    got_shape = gs_value_shape(cv);
    if (!gs_shape_equal(&got_shape, &os)) {
        gst_failf(__FILE__, __LINE__, "%s: result shape differs from the definition", what);
        gs_ctx_destroy(ctx);
        return 0;
    }
    CHECK_OK(gs_graph_set_root(g, cv));
    nx = tw_numel(&is);
    nk = tw_numel(&ks);
    ny = tw_numel(&os);
    x = (double *)calloc((size_t)nx + 1, sizeof(double));
    w = (double *)calloc((size_t)nk + 1, sizeof(double));
    y = (double *)calloc((size_t)ny + 1, sizeof(double));
    xa = (double *)calloc((size_t)nx + 1, sizeof(double));
    wa = (double *)calloc((size_t)nk + 1, sizeof(double));
    ya = (double *)calloc((size_t)ny + 1, sizeof(double));
    xs = calloc((size_t)nx + 1, esz);
    wsd = calloc((size_t)nk + 1, esz);
    ys = calloc((size_t)ny + 1, esz);
    if (!x || !w || !y || !xa || !wa || !ya || !xs || !wsd || !ys) {
        fprintf(stderr, "out of memory in test\n");
        exit(2);
    }
    for (e = 0; e < nx + nk; e++) {
        double *dst = e < nx ? &x[e] : &w[e - nx];
        void *sto = e < nx ? xs : wsd;
        int64_t k = e < nx ? e : e - nx;
        double val;
        if (values == TW_INTS) val = (double)gst_randint(rs, -3, 3);
        else val = (double)gst_randf(rs);
        if (dt == GS_BF16) {
            uint16_t b = gs_f32_to_bf16((float)val);
            ((uint16_t *)sto)[k] = b;
            val = (double)gs_bf16_to_f32(b);
        } else if (dt == GS_S32 || dt == GS_U32) {
            /* u32 wraps modulo 2^32 like s32, so small negative values work as their two's complement */
            ((int32_t *)sto)[k] = (int32_t)val;
        } else {
            ((float *)sto)[k] = (float)val;
            val = (double)(float)val;
        }
        *dst = val;
        if (e < nx) xa[k] = fabs(val);
        else wa[k] = fabs(val);
    }
    {
        const void *ins[2];
        void *outs[1];
        ins[0] = xs;
        ins[1] = wsd;
        outs[0] = ys;
        CHECK_OK(gs_eval(g, ins, outs));
    }
    ref_conv(c, &is, x, &ks, w, &os, y);
    ref_conv(c, &is, xa, &ks, wa, &os, ya);
    for (e = 0; e < ny && bad < 0; e++) {
        double got, tol;
        if (dt == GS_S32 || dt == GS_U32) {
            got = (double)((int32_t *)ys)[e];
            tol = 0;
        } else if (dt == GS_BF16) {
            got = (double)gs_bf16_to_f32(((uint16_t *)ys)[e]);
            tol = fabs(y[e]) * (1.0 / 128) + ya[e] * 2e-5;
        } else {
            got = (double)((float *)ys)[e];
            tol = values == TW_INTS ? 0 : ya[e] * 2e-5 + 1e-30;
        }
        if (!(fabs(got - y[e]) <= tol)) bad = e;
    }
    if (bad >= 0) {
        double got = dt == GS_S32 || dt == GS_U32 ? (double)((int32_t *)ys)[bad]
                     : dt == GS_BF16 ? (double)gs_bf16_to_f32(((uint16_t *)ys)[bad])
                                     : (double)((float *)ys)[bad];
        gst_failf(__FILE__, __LINE__, "%s: element %lld is %.9g, expected %.9g", what, (long long)bad, got, y[bad]);
        ok = 0;
    }
    free(x); free(w); free(y); free(xa); free(wa); free(ya); free(xs); free(wsd); free(ys);
    gs_ctx_destroy(ctx);
    return ok;
}

/* A config from dim labels, windows for every spatial dim and group counts. */
static gs_conv_config conv_cfg(const char *labels, const gs_window_dim *win, int64_t fgc, int64_t bgc) {
    gs_conv_config c;
    int i;
    memset(&c, 0, sizeof c);
    if (gs_conv_dims_from_labels(labels, &c.dims) != GS_OK) {
        gst_failf(__FILE__, __LINE__, "gs_conv_dims_from_labels(\"%s\") failed", labels);
        return c;
    }
    for (i = 0; i < c.dims.n_spatial; i++) c.window[i] = win[i];
    c.feature_group_count = fgc;
    c.batch_group_count = bgc;
    return c;
}

/* ---------------------------------------------------------------------------------------------------------
   Convolution tests
   ------------------------------------------------------------------------------------------------------- */

/* 1-D, batch 1, one feature: x = 1..6, k = [1, 2, -1], stride 2, padding (1, 0), rhs dilation 1:
   padded = [0 1 2 3 4 5 6], windows start at 0, 2, 4:
   [0 1 2].k = 0 + 2 - 2 = 0;  [2 3 4].k = 2 + 6 - 4 = 4;  [4 5 6].k = 4 + 10 - 6 = 8 */
static void test_conv_hand_1d(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "c");
    int64_t xd[3] = {1, 1, 6}, kd[3] = {1, 1, 3};
    float x[6] = {1, 2, 3, 4, 5, 6}, k[3] = {1, 2, -1}, y[3] = {-1, -1, -1};
    gs_window_dim win[1];
    gs_conv_config c;
    gs_value *cv;
    const void *ins[2];
    void *outs[1];
    gs_shape s;
    win[0] = tw_win(3, 2, 1, 0, 1, 1);
    c = conv_cfg("bf0_oi0->bf0", win, 1, 1);
    cv = gs_convolution(g, gs_parameter(g, 0, tw_shape(GS_F32, 3, xd), "x"),
                        gs_parameter(g, 1, tw_shape(GS_F32, 3, kd), "k"), &c);
    CHECK(cv != NULL);
    if (!cv) { gs_ctx_destroy(ctx); return; }
    s = gs_value_shape(cv);
    CHECK_EQ_INT(s.rank, 3);
    CHECK_EQ_INT(s.dims[2], 3);
    CHECK_OK(gs_graph_set_root(g, cv));
    ins[0] = x;
    ins[1] = k;
    outs[0] = y;
    CHECK_OK(gs_eval(g, ins, outs));
    CHECK_EQ_INT(y[0], 0);
    CHECK_EQ_INT(y[1], 4);
    CHECK_EQ_INT(y[2], 8);
    gs_ctx_destroy(ctx);
}

/* lhs (base) dilation 2 and rhs (window) dilation 2 by hand. x = [1 2 3] dilated -> [1 0 2 0 3], padding (1, 1)
   -> [0 1 0 2 0 3 0]; k = [1 10] with window dilation 2 spans 3: out[i] = p[i] + 10 p[i+2]
   -> [0+0, 1+20, 0+0, 2+30, 0+0] = [0 21 0 32 0] */
static void test_conv_hand_dilations(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "c");
    int64_t xd[3] = {1, 3, 1}, kd[3] = {2, 1, 1};
    float x[3] = {1, 2, 3}, k[2] = {1, 10}, y[5];
    float want[5] = {0, 21, 0, 32, 0};
    gs_window_dim win[1];
    gs_conv_config c;
    gs_value *cv;
    const void *ins[2];
    void *outs[1];
    int i;
    win[0] = tw_win(2, 1, 1, 1, 2, 2);
    c = conv_cfg("b0f_0io->b0f", win, 1, 1);
    cv = gs_convolution(g, gs_parameter(g, 0, tw_shape(GS_F32, 3, xd), "x"),
                        gs_parameter(g, 1, tw_shape(GS_F32, 3, kd), "k"), &c);
    CHECK(cv != NULL);
    if (!cv) { gs_ctx_destroy(ctx); return; }
    CHECK_EQ_INT(gs_value_shape(cv).dims[1], 5);
    CHECK_OK(gs_graph_set_root(g, cv));
    ins[0] = x;
    ins[1] = k;
    outs[0] = y;
    CHECK_OK(gs_eval(g, ins, outs));
    for (i = 0; i < 5; i++) CHECK_NEAR(y[i], want[i], 0);
    gs_ctx_destroy(ctx);
}

/* Depthwise (feature groups = features) and batch groups (as in a filter gradient) by hand.
   Feature groups 2: x features (f0, f1) = ([1 2 3], [4 5 6]), kernel size 2, out features 2 (one per group):
   k[:, 0, o0] = [1 1], k[:, 0, o1] = [1 -1] -> o0 = [3 5], o1 = [4-5, 5-6] = [-1 -1].
   Batch groups 2: batch b0 = [1 2 3], b1 = [4 5 6], one input feature, output features 2 (one per group):
   o0 uses b0 with k=[1 1] -> [3 5]; o1 uses b1 with k=[1 -1] -> [-1 -1]. Same numbers, different plumbing. */
static void test_conv_hand_groups(void) {
    int pass;
    for (pass = 0; pass < 2; pass++) {
        gs_ctx *ctx = gst_ctx();
        gs_graph *g = gs_graph_new(ctx, "c");
        int64_t xd_f[3] = {1, 3, 2}, xd_b[3] = {2, 3, 1}, kd[3] = {2, 1, 2};
        /* b0f layout: feature groups x[0, s, f]; batch groups x[b, s, 0] */
        float x_f[6] = {1, 4, 2, 5, 3, 6}, x_b[6] = {1, 2, 3, 4, 5, 6};
        float k[4] = {1, 1, 1, -1}; /* [s][i][o]: s0 -> (o0 1, o1 1), s1 -> (o0 1, o1 -1) */
        float y[4];
        float want[4] = {3, -1, 5, -1}; /* [b=0][s][o] */
        gs_window_dim win[1];
        gs_conv_config c;
        gs_value *cv;
        const void *ins[2];
        void *outs[1];
        int i;
        win[0] = tw_win(2, 1, 0, 0, 1, 1);
        c = conv_cfg("b0f_0io->b0f", win, pass == 0 ? 2 : 1, pass == 0 ? 1 : 2);
        cv = gs_convolution(g, gs_parameter(g, 0, tw_shape(GS_F32, 3, pass == 0 ? xd_f : xd_b), "x"),
                            gs_parameter(g, 1, tw_shape(GS_F32, 3, kd), "k"), &c);
        CHECK(cv != NULL);
        if (!cv) { gs_ctx_destroy(ctx); continue; }
        CHECK_EQ_INT(gs_value_shape(cv).dims[0], 1);
        CHECK_EQ_INT(gs_value_shape(cv).dims[1], 2);
        CHECK_EQ_INT(gs_value_shape(cv).dims[2], 2);
        CHECK_OK(gs_graph_set_root(g, cv));
        ins[0] = pass == 0 ? x_f : x_b;
        ins[1] = k;
        outs[0] = y;
        CHECK_OK(gs_eval(g, ins, outs));
        for (i = 0; i < 4; i++) CHECK_NEAR(y[i], want[i], 0);
        gs_ctx_destroy(ctx);
    }
}

/* Every window option on its own and in combination, with several layouts. */
static void test_conv_options(void) {
    uint64_t rs = 11;
    gs_window_dim w3[3];
    gs_conv_config c;
    int64_t sp[3];
    /* 2-D NHWC, stride 2, odd sizes */
    w3[0] = tw_win(3, 2, 0, 0, 1, 1);
    w3[1] = tw_win(2, 2, 0, 0, 1, 1);
    sp[0] = 7; sp[1] = 9;
    c = conv_cfg("b01f_01io->b01f", w3, 1, 1);
    conv_case(&c, GS_F32, 2, 3, 5, sp, &rs, TW_INTS, "b01f stride");
    /* padding, incl. negative */
    w3[0] = tw_win(3, 1, 2, -1, 1, 1);
    w3[1] = tw_win(3, 1, -2, 3, 1, 1);
    c = conv_cfg("b01f_01io->b01f", w3, 1, 1);
    conv_case(&c, GS_F32, 2, 3, 4, sp, &rs, TW_INTS, "padding");
    /* lhs dilation (transposed-conv style) */
    w3[0] = tw_win(3, 1, 2, 2, 2, 1);
    w3[1] = tw_win(2, 1, 1, 1, 3, 1);
    c = conv_cfg("bf01_oi01->bf01", w3, 1, 1);
    conv_case(&c, GS_F32, 2, 3, 4, sp, &rs, TW_INTS, "lhs dilation");
    /* rhs dilation (atrous) */
    w3[0] = tw_win(3, 1, 2, 2, 1, 2);
    w3[1] = tw_win(2, 2, 0, 1, 1, 3);
    c = conv_cfg("bf01_oi01->bf01", w3, 1, 1);
    conv_case(&c, GS_F32, 3, 2, 3, sp, &rs, TW_INTS, "rhs dilation");
    /* everything at once, transposed layouts */
    w3[0] = tw_win(2, 3, -1, 4, 2, 2);
    w3[1] = tw_win(3, 2, 3, -2, 3, 2);
    c = conv_cfg("fb01_io01->01bf", w3, 1, 1);
    conv_case(&c, GS_F32, 2, 5, 3, sp, &rs, TW_INTS, "fb01_io01->01bf");
    /* feature groups (grouped and depthwise with multiplier) */
    w3[0] = tw_win(3, 1, 1, 1, 1, 1);
    w3[1] = tw_win(3, 2, 1, 1, 1, 2);
    c = conv_cfg("b01f_01io->b01f", w3, 3, 1);
    conv_case(&c, GS_F32, 2, 6, 9, sp, &rs, TW_INTS, "feature groups 3");
    c = conv_cfg("bf01_oi01->bf01", w3, 4, 1);
    conv_case(&c, GS_F32, 2, 4, 8, sp, &rs, TW_INTS, "depthwise x2");
    c = conv_cfg("b01f_01io->b01f", w3, 8, 1);
    conv_case(&c, GS_F32, 1, 8, 8, sp, &rs, TW_INTS, "depthwise");
    c = conv_cfg("b01f_01io->b01f", w3, 2, 1);
    conv_case(&c, GS_F32, 2, 40, 64, sp, &rs, TW_INTS, "feature groups, wide");
    /* batch groups */
    c = conv_cfg("b01f_01io->b01f", w3, 1, 2);
    conv_case(&c, GS_F32, 4, 3, 6, sp, &rs, TW_INTS, "batch groups 2");
    c = conv_cfg("f01b_i01o->01bf", w3, 1, 3);
    conv_case(&c, GS_F32, 3, 2, 3, sp, &rs, TW_INTS, "batch groups 3 (filter-gradient layout)");
    /* 1-D and 3-D */
    w3[0] = tw_win(4, 3, 2, 1, 2, 1);
    sp[0] = 11;
    c = conv_cfg("b0f_0io->b0f", w3, 1, 1);
    conv_case(&c, GS_F32, 3, 2, 2, sp, &rs, TW_INTS, "1-D");
    c = conv_cfg("fb0_o0i->0fb", w3, 1, 1);
    conv_case(&c, GS_F32, 3, 2, 2, sp, &rs, TW_INTS, "1-D fb0_o0i->0fb");
    w3[0] = tw_win(2, 1, 1, 0, 1, 1);
    w3[1] = tw_win(3, 2, 1, 1, 1, 2);
    w3[2] = tw_win(2, 1, 0, 1, 2, 1);
    sp[0] = 4; sp[1] = 7; sp[2] = 3;
    c = conv_cfg("b012f_012io->b012f", w3, 1, 1);
    conv_case(&c, GS_F32, 2, 3, 4, sp, &rs, TW_INTS, "3-D");
    c = conv_cfg("bf012_oi012->bf012", w3, 1, 1);
    conv_case(&c, GS_F32, 2, 3, 4, sp, &rs, TW_REALS, "3-D bf012 reals");
    c = conv_cfg("b201f_2o1i0->f012b", w3, 1, 1);
    conv_case(&c, GS_F32, 2, 3, 4, sp, &rs, TW_INTS, "3-D permuted spatial dims");
    /* zero-sized results: the window does not fit */
    w3[0] = tw_win(5, 1, -1, 0, 1, 1);
    sp[0] = 4;
    c = conv_cfg("b0f_0io->b0f", w3, 1, 1);
    conv_case(&c, GS_F32, 2, 2, 2, sp, &rs, TW_INTS, "empty result");
}

/* Sizes big enough that the gathered input is processed in several row blocks and tap chunks. */
static void test_conv_large(void) {
    uint64_t rs = 5;
    gs_window_dim w2[2];
    gs_conv_config c;
    int64_t sp[2] = {33, 31};
    w2[0] = tw_win(3, 1, 1, 1, 1, 1);
    w2[1] = tw_win(3, 1, 1, 1, 1, 1);
    c = conv_cfg("b01f_01io->b01f", w2, 1, 1);
    conv_case(&c, GS_F32, 2, 200, 7, sp, &rs, TW_INTS, "large NHWC");
    w2[0] = tw_win(3, 2, 1, 1, 1, 1);
    w2[1] = tw_win(5, 1, 2, 2, 1, 1);
    c = conv_cfg("bf01_oi01->bf01", w2, 1, 1);
    conv_case(&c, GS_F32, 3, 17, 33, sp, &rs, TW_REALS, "large NCHW reals");
    c = conv_cfg("b01f_01io->b01f", w2, 16, 1);
    conv_case(&c, GS_F32, 2, 64, 64, sp, &rs, TW_REALS, "large depthwise");
}

/* Convolution with no spatial dims is a matmul over features. */
static void test_conv_no_spatial(void) {
    uint64_t rs = 77;
    gs_conv_config c;
    memset(&c, 0, sizeof c);
    c.dims.n_spatial = 0;
    c.dims.input_batch = 0;
    c.dims.input_feature = 1;
    c.dims.kernel_input_feature = 1;
    c.dims.kernel_output_feature = 0;
    c.dims.output_batch = 1;
    c.dims.output_feature = 0;
    conv_case(&c, GS_F32, 5, 7, 3, NULL, &rs, TW_INTS, "no spatial dims");
}

/* >= 200 random configurations: random layouts for all three operands, 1-3 spatial dims, every window
   option, feature or batch groups. */
static void test_conv_random_sweep(void) {
    uint64_t rs = 2024;
    int it, n_ok = 0, n_cases = 240;
    for (it = 0; it < n_cases; it++) {
        gs_conv_config c;
        int ns = (int)gst_randint(&rs, 1, 3), rank = ns + 2, i, mode;
        int64_t pi[GS_MAX_RANK], pk[GS_MAX_RANK], po[GS_MAX_RANK], sp[3];
        int64_t G = 1, B = 1, n, cin_g, cout;
        char what[64];
        memset(&c, 0, sizeof c);
        for (i = 0; i < rank; i++) pi[i] = pk[i] = po[i] = i;
        tw_shuffle(&rs, pi, rank);
        tw_shuffle(&rs, pk, rank);
        tw_shuffle(&rs, po, rank);
        c.dims.n_spatial = ns;
        c.dims.input_batch = pi[0];
        c.dims.input_feature = pi[1];
        c.dims.kernel_input_feature = pk[0];
        c.dims.kernel_output_feature = pk[1];
        c.dims.output_batch = po[0];
        c.dims.output_feature = po[1];
        for (i = 0; i < ns; i++) {
            c.dims.input_spatial[i] = pi[2 + i];
            c.dims.kernel_spatial[i] = pk[2 + i];
            c.dims.output_spatial[i] = po[2 + i];
        }
        mode = (int)gst_randint(&rs, 0, 3);
        if (mode == 1) G = gst_randint(&rs, 2, 4);
        if (mode == 2) B = gst_randint(&rs, 2, 3);
        c.feature_group_count = G;
        c.batch_group_count = B;
        n = gst_randint(&rs, 1, 3) * B;
        cin_g = gst_randint(&rs, 1, 5);
        cout = gst_randint(&rs, 1, 4) * G * B;
        for (i = 0; i < ns; i++) {
            int tries = 0;
            do {
                gs_window_dim *w = &c.window[i];
                sp[i] = gst_randint(&rs, 1, ns == 3 ? 6 : 10);
                *w = tw_win(gst_randint(&rs, 1, 4), gst_randint(&rs, 1, 3), gst_randint(&rs, -2, 3),
                            gst_randint(&rs, -2, 3), gst_randint(&rs, 1, 3), gst_randint(&rs, 1, 3));
                /* mostly non-empty results; a few empty ones stay */
            } while (tw_out_size(sp[i], &c.window[i]) == 0 && ++tries < 8 && it % 16 != 0);
        }
        snprintf(what, sizeof what, "random config %d", it);
        n_ok += conv_case(&c, GS_F32, n, cin_g * G, cout, sp, &rs, it % 3 == 0 ? TW_REALS : TW_INTS, what);
    }
    CHECK_EQ_INT(n_ok, n_cases);
}

static void test_conv_bf16(void) {
    uint64_t rs = 3;
    gs_window_dim w2[2];
    gs_conv_config c;
    int64_t sp[2] = {9, 8};
    w2[0] = tw_win(3, 2, 1, 1, 1, 1);
    w2[1] = tw_win(2, 1, 0, 1, 2, 2);
    c = conv_cfg("b01f_01io->b01f", w2, 1, 1);
    conv_case(&c, GS_BF16, 2, 6, 5, sp, &rs, TW_REALS, "bf16 NHWC");
    c = conv_cfg("bf01_oi01->bf01", w2, 2, 1);
    conv_case(&c, GS_BF16, 2, 6, 4, sp, &rs, TW_REALS, "bf16 grouped NCHW");
}

/* bf16 results inside a graph are rounded values: a convert to f32 right after the op shows them exactly. */
static void test_bf16_results_rounded(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "bf16");
    int64_t xd[4] = {1, 5, 5, 3}, kd[4] = {3, 3, 3, 2}, rd[2] = {4, 6};
    uint16_t x[75], k[54], r[24];
    float y[50], s[24];
    gs_window_dim w2[2], wr[2];
    gs_conv_config c;
    gs_value *cv, *rv, *outs_v[2];
    const void *ins[3];
    void *outs[2];
    uint64_t rs = 17;
    int i, n_bad = 0;
    for (i = 0; i < 75; i++) x[i] = gs_f32_to_bf16(gst_randf(&rs));
    for (i = 0; i < 54; i++) k[i] = gs_f32_to_bf16(gst_randf(&rs));
    for (i = 0; i < 24; i++) r[i] = gs_f32_to_bf16(gst_randf(&rs));
    w2[0] = w2[1] = tw_win(3, 1, 1, 1, 1, 1);
    wr[0] = tw_win(2, 1, 0, 0, 1, 1);
    wr[1] = tw_win(3, 1, 1, 1, 1, 1);
    c = conv_cfg("b01f_01io->b01f", w2, 1, 1);
    cv = gs_convolution(g, gs_parameter(g, 0, tw_shape(GS_BF16, 4, xd), "x"),
                        gs_parameter(g, 1, tw_shape(GS_BF16, 4, kd), "k"), &c);
    rv = gs_reduce_window(g, gs_parameter(g, 2, tw_shape(GS_BF16, 2, rd), "r"), gs_scalar(g, GS_BF16, 0),
                          GS_REDUCE_SUM, wr);
    outs_v[0] = gs_convert(g, cv, GS_F32);
    outs_v[1] = gs_convert(g, rv, GS_F32);
    CHECK(outs_v[0] && outs_v[1]);
    if (!outs_v[0] || !outs_v[1]) { gs_ctx_destroy(ctx); return; }
    CHECK_EQ_INT(gs_value_shape(rv).dims[0] * gs_value_shape(rv).dims[1], 18);
    CHECK_OK(gs_graph_set_outputs(g, 2, outs_v));
    ins[0] = x;
    ins[1] = k;
    ins[2] = r;
    outs[0] = y;
    outs[1] = s;
    CHECK_OK(gs_eval(g, ins, outs));
    for (i = 0; i < 50; i++) n_bad += tw_bf16_round(y[i]) != y[i];
    for (i = 0; i < 18; i++) n_bad += tw_bf16_round(s[i]) != s[i]; /* 3 x 6 results */
    CHECK_EQ_INT(n_bad, 0);
    gs_ctx_destroy(ctx);
}

static void test_conv_int(void) {
    uint64_t rs = 4;
    gs_window_dim w2[2];
    gs_conv_config c;
    int64_t sp[2] = {6, 7};
    w2[0] = tw_win(3, 1, 1, 1, 2, 1);
    w2[1] = tw_win(2, 2, -1, 2, 1, 2);
    c = conv_cfg("b01f_01io->b01f", w2, 1, 1);
    conv_case(&c, GS_S32, 2, 4, 3, sp, &rs, TW_INTS, "s32 NHWC");
    c = conv_cfg("fb01_io01->01bf", w2, 1, 2);
    conv_case(&c, GS_S32, 4, 3, 4, sp, &rs, TW_INTS, "s32 batch groups");
    c = conv_cfg("bf01_oi01->bf01", w2, 3, 1);
    conv_case(&c, GS_S32, 2, 6, 3, sp, &rs, TW_INTS, "s32 feature groups");
    c = conv_cfg("b01f_01io->b01f", w2, 1, 1);
    conv_case(&c, GS_U32, 2, 4, 3, sp, &rs, TW_INTS, "u32 NHWC");
}

/* ---------------------------------------------------------------------------------------------------------
   Reduce-window
   ------------------------------------------------------------------------------------------------------- */

/* Direct definition: result = init (op) x_w0 (op) x_w1 ... over the window positions in increasing order that
   land on an input element (padding and base-dilation holes are skipped). Works on doubles for f32/bf16
   (folded in float), and on int64 values wrapped to 32 bits for the integer types. */
static double rw_fold(gs_reduce_kind k, gs_dtype dt, double a, double b) {
    if (dt == GS_F32 || dt == GS_BF16) {
        float fa = (float)a, fb = (float)b;
        switch (k) {
        case GS_REDUCE_SUM: return (double)(fa + fb);
        case GS_REDUCE_PROD: return (double)(fa * fb);
        case GS_REDUCE_MAX: return fa > fb ? fa : fb;
        default: return fa < fb ? fa : fb;
        }
    } else {
        int64_t ia = (int64_t)a, ib = (int64_t)b, r;
        switch (k) {
        case GS_REDUCE_SUM: r = ia + ib; break;
        case GS_REDUCE_PROD: r = ia * ib; break;
        case GS_REDUCE_MAX: r = ia > ib ? ia : ib; break;
        case GS_REDUCE_MIN: r = ia < ib ? ia : ib; break;
        case GS_REDUCE_AND: r = dt == GS_PRED ? (ia && ib) : (ia & ib); break;
        default: r = dt == GS_PRED ? (ia || ib) : (ia | ib); break;
        }
        if (dt == GS_PRED && (k == GS_REDUCE_SUM || k == GS_REDUCE_PROD)) r = r != 0;
        return (double)(int32_t)(uint32_t)(uint64_t)r;
    }
}

static void ref_reduce_window(const gs_shape *is, const double *x, double init, gs_reduce_kind k,
                              const gs_window_dim *win, const gs_shape *os, double *y) {
    int64_t ist[GS_MAX_RANK], e, wn = 1;
    int i;
    tw_strides(is, ist);
    for (i = 0; i < is->rank; i++) wn *= win[i].size;
    for (e = 0; e < tw_numel(os); e++) {
        int64_t oi[GS_MAX_RANK], t;
        double acc = init;
        tw_unravel(os, e, oi);
        for (t = 0; t < wn; t++) {
            int64_t wi[GS_MAX_RANK], rem = t, off = 0;
            int ok = 1;
            for (i = is->rank - 1; i >= 0; i--) {
                wi[i] = rem % win[i].size;
                rem /= win[i].size;
            }
            for (i = 0; i < is->rank; i++) {
                int64_t pos = oi[i] * win[i].stride - win[i].pad_lo + wi[i] * win[i].window_dilation;
                if (pos < 0 || pos % win[i].base_dilation) { ok = 0; break; }
                pos /= win[i].base_dilation;
                if (pos >= is->dims[i]) { ok = 0; break; }
                off += pos * ist[i];
            }
            if (ok) acc = rw_fold(k, is->dtype, acc, x[off]);
        }
        y[e] = acc;
    }
}

static size_t tw_storage(gs_dtype dt) { return dt == GS_BF16 ? 2 : dt == GS_PRED ? 1 : 4; }

static void tw_store(gs_dtype dt, void *p, int64_t i, double v) {
    switch (dt) {
    case GS_F32: ((float *)p)[i] = (float)v; break;
    case GS_BF16: ((uint16_t *)p)[i] = gs_f32_to_bf16((float)v); break;
    case GS_S32: ((int32_t *)p)[i] = (int32_t)v; break;
    case GS_U32: ((uint32_t *)p)[i] = (uint32_t)(int64_t)v; break;
    default: ((uint8_t *)p)[i] = (uint8_t)(v != 0); break;
    }
}

static double tw_load(gs_dtype dt, const void *p, int64_t i) {
    switch (dt) {
    case GS_F32: return (double)((const float *)p)[i];
    case GS_BF16: return (double)gs_bf16_to_f32(((const uint16_t *)p)[i]);
    case GS_S32: return (double)((const int32_t *)p)[i];
    case GS_U32: return (double)((const uint32_t *)p)[i];
    default: return (double)((const uint8_t *)p)[i];
    }
}

/* Runs reduce-window via gs_eval and compares with ref_reduce_window; x holds the values (already
   representable in dt). exact: compare bit-exactly, else relative tolerance (bf16: one rounding step). */
static int rw_case(gs_dtype dt, int rank, const int64_t *dims, const double *x, double init, gs_reduce_kind k,
                   const gs_window_dim *win, const char *what) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "rw");
    gs_shape is = tw_shape(dt, rank, dims), os, got;
    gs_value *rv;
    int64_t nx = tw_numel(&is), ny, e;
    void *xs, *ys;
    double *y;
    int i, ok = 1;
    os = is;
    for (i = 0; i < rank; i++) os.dims[i] = tw_out_size(dims[i], &win[i]);
    rv = gs_reduce_window(g, gs_parameter(g, 0, is, "x"), gs_scalar(g, dt, init), k, win);
    if (!rv) {
        gst_failf(__FILE__, __LINE__, "%s: gs_reduce_window failed: %s", what, gs_ctx_error_msg(ctx));
        gs_ctx_destroy(ctx);
        return 0;
    }
    got = gs_value_shape(rv);
    if (!gs_shape_equal(&got, &os)) {
        gst_failf(__FILE__, __LINE__, "%s: result shape differs from the definition", what);
        gs_ctx_destroy(ctx);
        return 0;
    }
    CHECK_OK(gs_graph_set_root(g, rv));
    ny = tw_numel(&os);
    xs = calloc((size_t)nx + 1, tw_storage(dt));
    ys = calloc((size_t)ny + 1, tw_storage(dt));
    y = (double *)calloc((size_t)ny + 1, sizeof(double));
    if (!xs || !ys || !y) {
        fprintf(stderr, "out of memory in test\n");
        exit(2);
    }
    for (e = 0; e < nx; e++) tw_store(dt, xs, e, x[e]);
    {
        const void *ins[1];
        void *outs[1];
        ins[0] = xs;
        outs[0] = ys;
        CHECK_OK(gs_eval(g, ins, outs));
    }
    ref_reduce_window(&is, x, init, k, win, &os, y);
    for (e = 0; e < ny; e++) {
        double want = dt == GS_BF16 ? (double)tw_bf16_round((float)y[e]) : y[e];
        double have = tw_load(dt, ys, e);
        if (dt == GS_U32) want = (double)(uint32_t)(int32_t)want;
        if (have != want) {
            gst_failf(__FILE__, __LINE__, "%s: element %lld is %.9g, expected %.9g", what, (long long)e, have, want);
            ok = 0;
            break;
        }
    }
    free(xs); free(ys); free(y);
    gs_ctx_destroy(ctx);
    return ok;
}

/* max-pool 3x3 stride 2 pad 1 on a 4x4 image 0..15 (padding skipped): rows/cols windows {-1,0,1}, {1,2,3}
   -> out[i][j] = x[min(2i+1,3)][min(2j+1,3)] = [[5 7] [13 15]] */
static void test_rw_hand(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "rw");
    int64_t d[2] = {4, 4};
    float x[16], y[4] = {0, 0, 0, 0}, s[4];
    gs_window_dim w[2];
    gs_value *mx, *sm;
    gs_value *outs_v[2];
    const void *ins[1];
    void *outs[2];
    int i;
    for (i = 0; i < 16; i++) x[i] = (float)i;
    w[0] = w[1] = tw_win(3, 2, 1, 1, 1, 1);
    mx = gs_reduce_window(g, gs_parameter(g, 0, tw_shape(GS_F32, 2, d), "x"), gs_scalar(g, GS_F32, -INFINITY),
                          GS_REDUCE_MAX, w);
    /* sum-pool of the same windows, init 100: [0 1 4 5] -> 110, [1 2 3 5 6 7] -> 124, [4 5 8 9 12 13] -> 151,
       [5 6 7 9 10 11 13 14 15] -> 190 */
    sm = gs_reduce_window(g, gs_graph_param(g, 0), gs_scalar(g, GS_F32, 100), GS_REDUCE_SUM, w);
    CHECK(mx && sm);
    if (!mx || !sm) { gs_ctx_destroy(ctx); return; }
    outs_v[0] = mx;
    outs_v[1] = sm;
    CHECK_OK(gs_graph_set_outputs(g, 2, outs_v));
    ins[0] = x;
    outs[0] = y;
    outs[1] = s;
    CHECK_OK(gs_eval(g, ins, outs));
    CHECK_NEAR(y[0], 5, 0);
    CHECK_NEAR(y[1], 7, 0);
    CHECK_NEAR(y[2], 13, 0);
    CHECK_NEAR(y[3], 15, 0);
    CHECK_NEAR(s[0], 110, 0);
    CHECK_NEAR(s[1], 124, 0);
    CHECK_NEAR(s[2], 151, 0);
    CHECK_NEAR(s[3], 190, 0);
    gs_ctx_destroy(ctx);
}

/* cumsum as reduce-window: window n, padding (n-1, 0), stride 1 along the scanned dim */
static void test_rw_cumsum(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "cumsum");
    int64_t d[2] = {3, 7};
    float x[21], y[21];
    gs_window_dim w[2];
    gs_value *rv;
    const void *ins[1];
    void *outs[1];
    int i, j;
    for (i = 0; i < 21; i++) x[i] = (float)(i * 3 % 5) - 1.5f;
    w[0] = tw_win(1, 1, 0, 0, 1, 1);
    w[1] = tw_win(7, 1, 6, 0, 1, 1);
    rv = gs_reduce_window(g, gs_parameter(g, 0, tw_shape(GS_F32, 2, d), "x"), gs_scalar(g, GS_F32, 0),
                          GS_REDUCE_SUM, w);
    CHECK(rv != NULL);
    if (!rv) { gs_ctx_destroy(ctx); return; }
    CHECK_EQ_INT(gs_value_shape(rv).dims[0], 3);
    CHECK_EQ_INT(gs_value_shape(rv).dims[1], 7);
    CHECK_OK(gs_graph_set_root(g, rv));
    ins[0] = x;
    outs[0] = y;
    CHECK_OK(gs_eval(g, ins, outs));
    for (i = 0; i < 3; i++) {
        float acc = 0;
        for (j = 0; j < 7; j++) {
            acc += x[i * 7 + j];
            CHECK_NEAR(y[i * 7 + j], acc, 0);
        }
    }
    gs_ctx_destroy(ctx);
}

/* max/sum/min with padding, base dilation, window dilation and 2-D windows, against the reference */
static void test_rw_options(void) {
    uint64_t rs = 9;
    int64_t d2[2] = {5, 6}, d3[3] = {3, 4, 5}, e;
    double x[60];
    gs_window_dim w[3];
    for (e = 0; e < 60; e++) x[e] = (double)gst_randint(&rs, -9, 9) * 0.5;
    w[0] = tw_win(2, 1, 1, 1, 1, 1);
    w[1] = tw_win(3, 2, 2, 0, 1, 1);
    rw_case(GS_F32, 2, d2, x, -INFINITY, GS_REDUCE_MAX, w, "max, padding");
    rw_case(GS_F32, 2, d2, x, INFINITY, GS_REDUCE_MIN, w, "min, padding");
    rw_case(GS_F32, 2, d2, x, 0, GS_REDUCE_SUM, w, "sum, padding");
    w[0] = tw_win(3, 1, 0, 0, 2, 1);
    w[1] = tw_win(2, 2, 1, 2, 3, 1);
    rw_case(GS_F32, 2, d2, x, 0, GS_REDUCE_SUM, w, "sum, base dilation");
    rw_case(GS_F32, 2, d2, x, -INFINITY, GS_REDUCE_MAX, w, "max, base dilation");
    w[0] = tw_win(2, 1, 0, 1, 1, 2);
    w[1] = tw_win(3, 1, -1, 2, 2, 2);
    rw_case(GS_F32, 2, d2, x, 1, GS_REDUCE_PROD, w, "prod, both dilations, negative padding");
    rw_case(GS_F32, 2, d2, x, 5, GS_REDUCE_MIN, w, "min, non-identity init");
    w[0] = tw_win(2, 2, 1, 0, 1, 1);
    w[1] = tw_win(1, 1, 0, 0, 1, 1);
    w[2] = tw_win(3, 3, 1, 1, 1, 1);
    rw_case(GS_F32, 3, d3, x, 0, GS_REDUCE_SUM, w, "3-D sum");
    rw_case(GS_BF16, 3, d3, x, 0, GS_REDUCE_SUM, w, "3-D bf16 sum");
    rw_case(GS_BF16, 2, d2, x, -INFINITY, GS_REDUCE_MAX, w + 1, "bf16 max");
    /* empty output (window larger than the padded input) */
    w[0] = tw_win(7, 1, 0, 0, 1, 1);
    w[1] = tw_win(1, 1, 0, 0, 1, 1);
    rw_case(GS_F32, 2, d2, x, 0, GS_REDUCE_SUM, w, "empty result");
}

static void test_rw_int_types(void) {
    uint64_t rs = 10;
    int64_t d2[2] = {4, 5}, e;
    double xi[20], xp[20], xu[20];
    gs_window_dim w[2];
    for (e = 0; e < 20; e++) {
        xi[e] = (double)gst_randint(&rs, -50, 50);
        xp[e] = (double)gst_randint(&rs, 0, 1);
        xu[e] = (double)gst_randint(&rs, 0, 1000);
    }
    w[0] = tw_win(2, 1, 1, 0, 1, 1);
    w[1] = tw_win(3, 1, 1, 1, 2, 1);
    rw_case(GS_S32, 2, d2, xi, 0, GS_REDUCE_SUM, w, "s32 sum");
    rw_case(GS_S32, 2, d2, xi, 1, GS_REDUCE_PROD, w, "s32 prod (wraps)");
    rw_case(GS_S32, 2, d2, xi, -2147483648.0, GS_REDUCE_MAX, w, "s32 max");
    rw_case(GS_S32, 2, d2, xi, 2147483647.0, GS_REDUCE_MIN, w, "s32 min");
    rw_case(GS_S32, 2, d2, xi, -1, GS_REDUCE_AND, w, "s32 and");
    rw_case(GS_S32, 2, d2, xi, 0, GS_REDUCE_OR, w, "s32 or");
    rw_case(GS_U32, 2, d2, xu, 0, GS_REDUCE_MAX, w, "u32 max");
    rw_case(GS_PRED, 2, d2, xp, 1, GS_REDUCE_AND, w, "pred and");
    rw_case(GS_PRED, 2, d2, xp, 0, GS_REDUCE_OR, w, "pred or");
}

static void test_rw_random_sweep(void) {
    uint64_t rs = 99;
    int it, n_ok = 0, n_cases = 120;
    static const gs_reduce_kind kinds[3] = {GS_REDUCE_SUM, GS_REDUCE_MAX, GS_REDUCE_MIN};
    for (it = 0; it < n_cases; it++) {
        int rank = (int)gst_randint(&rs, 1, 3), i;
        int64_t dims[3], e, n = 1;
        double x[512];
        gs_window_dim w[3];
        gs_reduce_kind k = kinds[it % 3];
        char what[64];
        for (i = 0; i < rank; i++) {
            dims[i] = gst_randint(&rs, 1, 8);
            n *= dims[i];
            w[i] = tw_win(gst_randint(&rs, 1, 3), gst_randint(&rs, 1, 3), gst_randint(&rs, -1, 2),
                          gst_randint(&rs, -1, 2), gst_randint(&rs, 1, 3), gst_randint(&rs, 1, 2));
        }
        for (e = 0; e < n; e++) x[e] = (double)gst_randint(&rs, -20, 20);
        snprintf(what, sizeof what, "random reduce-window %d", it);
        n_ok += rw_case(it % 2 ? GS_F32 : GS_S32, rank, dims, x, k == GS_REDUCE_SUM ? 0 : k == GS_REDUCE_MAX ? -100 : 100,
                        k, w, what);
    }
    CHECK_EQ_INT(n_ok, n_cases);
}

/* ---------------------------------------------------------------------------------------------------------
   Matmul through dot
   ------------------------------------------------------------------------------------------------------- */

static void dot_case(int64_t batch, int64_t m, int64_t k, int64_t n, uint64_t *rs) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "dot");
    gs_dot_dims dd;
    int64_t ad[3], bd[3];
    int r = batch > 0 ? 3 : 2, o = batch > 0 ? 1 : 0;
    int64_t nb = batch > 0 ? batch : 1, e, b, i, j, l;
    float *A, *B, *C;
    double *W;
    gs_value *dv;
    memset(&dd, 0, sizeof dd);
    if (batch > 0) {
        ad[0] = bd[0] = batch;
        dd.n_batch = 1;
        dd.lhs_batch[0] = dd.rhs_batch[0] = 0;
    }
    ad[o] = m;
    ad[o + 1] = k;
    bd[o] = k;
    bd[o + 1] = n;
    dd.n_contract = 1;
    dd.lhs_contract[0] = o + 1;
    dd.rhs_contract[0] = o;
    dv = gs_dot(g, gs_parameter(g, 0, tw_shape(GS_F32, r, ad), "a"), gs_parameter(g, 1, tw_shape(GS_F32, r, bd), "b"),
                &dd);
    CHECK(dv != NULL);
    if (!dv) { gs_ctx_destroy(ctx); return; }
    CHECK_OK(gs_graph_set_root(g, dv));
    A = (float *)malloc((size_t)(nb * m * k + 1) * sizeof(float));
    B = (float *)malloc((size_t)(nb * k * n + 1) * sizeof(float));
    C = (float *)malloc((size_t)(nb * m * n + 1) * sizeof(float));
    W = (double *)calloc((size_t)(nb * m * n + 1), sizeof(double));
    if (!A || !B || !C || !W) {
        fprintf(stderr, "out of memory in test\n");
        exit(2);
    }
    for (e = 0; e < nb * m * k; e++) A[e] = (float)gst_randint(rs, -4, 4);
    for (e = 0; e < nb * k * n; e++) B[e] = (float)gst_randint(rs, -4, 4);
    {
        const void *ins[2];
        void *outs[1];
        ins[0] = A;
        ins[1] = B;
        outs[0] = C;
        CHECK_OK(gs_eval(g, ins, outs));
    }
    for (b = 0; b < nb; b++)
        for (i = 0; i < m; i++)
            for (j = 0; j < n; j++)
                for (l = 0; l < k; l++)
                    W[(b * m + i) * n + j] += (double)A[(b * m + i) * k + l] * B[(b * k + l) * n + j];
    for (e = 0; e < nb * m * n; e++) {
        if ((double)C[e] != W[e]) {
            gst_failf(__FILE__, __LINE__, "dot %lldx%lldx%lldx%lld: element %lld is %g, expected %g",
                      (long long)batch, (long long)m, (long long)k, (long long)n, (long long)e, C[e], W[e]);
            break;
        }
    }
    free(A); free(B); free(C); free(W);
    gs_ctx_destroy(ctx);
}

static void test_matmul_dot(void) {
    uint64_t rs = 8;
    dot_case(0, 1, 1, 1, &rs);
    dot_case(0, 3, 4, 5, &rs);
    dot_case(0, 37, 53, 61, &rs);
    dot_case(0, 130, 300, 70, &rs);
    dot_case(3, 17, 9, 23, &rs);
    dot_case(2, 1, 64, 2, &rs);
    dot_case(4, 40, 1, 33, &rs);
}

/* ---------------------------------------------------------------------------------------------------------
   Out of memory: every allocation made while evaluating fails in turn; gs_eval must report it (and, under
   ASan/valgrind, leak nothing).
   ------------------------------------------------------------------------------------------------------- */

typedef struct tw_alloc_state {
    int64_t countdown; /* < 0: never fail; otherwise allocations left before the next one fails */
    int64_t failed;
} tw_alloc_state;

static void *tw_alloc(size_t n, void *user) {
    tw_alloc_state *st = (tw_alloc_state *)user;
    if (st->countdown == 0) {
        st->failed++;
        return NULL;
    }
    if (st->countdown > 0) st->countdown--;
    return malloc(n);
}

static void tw_free(void *p, void *user) {
    (void)user;
    free(p);
}

static void test_window_out_of_memory(void) {
    int which;
    for (which = 0; which < 4; which++) {
        int64_t budget;
        int succeeded = 0;
        /* every allocation of gs_eval, from the first, fails once in turn */
        for (budget = 0; budget < 200 && !succeeded; budget++) {
            tw_alloc_state st;
            gs_ctx_desc desc;
            gs_ctx *ctx = NULL;
            gs_graph *g;
            gs_value *root = NULL;
            int64_t xd[4] = {2, 6, 7, 5}, kd[4] = {4, 6, 3, 2}, ad[3] = {2, 20, 30}, bd[3] = {2, 30, 10};
            float x[420], k[144], a[1200], b[600], y[2000];
            const void *ins[2];
            void *outs[1];
            gs_result r;
            memset(&desc, 0, sizeof desc);
            memset(x, 0, sizeof x);
            memset(k, 0, sizeof k);
            memset(a, 0, sizeof a);
            memset(b, 0, sizeof b);
            st.countdown = -1;
            st.failed = 0;
            desc.allocator.alloc = tw_alloc;
            desc.allocator.free = tw_free;
            desc.allocator.user = &st;
            if (gs_ctx_create(&desc, &ctx) != GS_OK) {
                CHECK(0);
                return;
            }
            g = gs_graph_new(ctx, "oom");
            if (which <= 1) {
                gs_window_dim w2[2];
                gs_conv_config c;
                w2[0] = tw_win(3, 1, 1, 1, 2, 1);
                w2[1] = tw_win(2, 2, 0, 1, 1, 2);
                /* NCHW: every operand is transposed through scratch; which 1: grouped direct loop */
                c = conv_cfg("bf01_oi01->bf01", w2, which == 0 ? 1 : 6, 1);
                if (which == 1) { kd[0] = 6; kd[1] = 1; }
                root = gs_convolution(g, gs_parameter(g, 0, tw_shape(GS_F32, 4, xd), "x"),
                                      gs_parameter(g, 1, tw_shape(GS_F32, 4, kd), "k"), &c);
                ins[0] = x;
                ins[1] = k;
            } else if (which == 2) {
                gs_window_dim w3[3];
                w3[0] = tw_win(2, 1, 1, 0, 1, 1);
                w3[1] = tw_win(2, 1, 0, 0, 1, 1);
                w3[2] = tw_win(3, 2, 1, 1, 1, 1);
                root = gs_reduce_window(g, gs_parameter(g, 0, tw_shape(GS_F32, 3, ad), "x"), gs_scalar(g, GS_F32, 0),
                                        GS_REDUCE_SUM, w3);
                ins[0] = a;
            } else {
                gs_dot_dims dd;
                memset(&dd, 0, sizeof dd);
                dd.n_batch = 1;
                dd.n_contract = 1;
                dd.lhs_contract[0] = 2;
                dd.rhs_contract[0] = 1;
                root = gs_dot(g, gs_parameter(g, 0, tw_shape(GS_F32, 3, ad), "a"),
                              gs_parameter(g, 1, tw_shape(GS_F32, 3, bd), "b"), &dd);
                ins[0] = a;
                ins[1] = b;
            }
            CHECK(root != NULL);
            if (!root) { gs_ctx_destroy(ctx); return; }
            CHECK_OK(gs_graph_set_root(g, root));
            outs[0] = y;
            st.countdown = budget;
            r = gs_eval(g, ins, outs);
            st.countdown = -1;
            if (st.failed == 0) {
                CHECK_OK(r);
                succeeded = 1;
            } else {
                CHECK_EQ_INT(r, GS_ERR_OUT_OF_MEMORY);
                CHECK_EQ_INT(gs_ctx_error(ctx), GS_ERR_OUT_OF_MEMORY);
            }
            gs_ctx_destroy(ctx);
        }
        CHECK(succeeded);
    }
}

void suite_window(void) {
    RUN(test_conv_hand_1d);
    RUN(test_conv_hand_dilations);
    RUN(test_conv_hand_groups);
    RUN(test_conv_options);
    RUN(test_conv_large);
    RUN(test_conv_no_spatial);
    RUN(test_conv_random_sweep);
    RUN(test_conv_bf16);
    RUN(test_bf16_results_rounded);
    RUN(test_conv_int);
    RUN(test_rw_hand);
    RUN(test_rw_cumsum);
    RUN(test_rw_options);
    RUN(test_rw_int_types);
    RUN(test_rw_random_sweep);
    RUN(test_matmul_dot);
    RUN(test_window_out_of_memory);
}
