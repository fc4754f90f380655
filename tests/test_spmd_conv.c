/* test_spmd_conv.c - convolutions that are einsums (XLA's dot-as-convolution reading: a spatial dim that is a
   batch, contracting, lhs-free or rhs-free dim of a dot) and reversed windows (rhs_reversal). Propagation is
   checked against shardings worked out by hand from the dot rules; partitioning differentially: random
   einsum-as-convolution modules of every class, random shardings and device counts that do not divide the
   sizes, run on emulated devices with NaN-poisoned padding against the reference interpreter. */
#include "spmd_case.h"

static gs_ctx *cctx;
static gs_graph *cg;

/* parses text and propagates; false (with a message) on failure */
static bool cprop(const char *text) {
    gs_graph *g = NULL;
    if (cctx) gs_ctx_destroy(cctx);
    cctx = gst_ctx();
    cg = NULL;
    if (gs_hlo_parse(cctx, text, strlen(text), &g) != GS_OK || gs_propagate(g, NULL) != GS_OK) {
        fprintf(stderr, "  parse/propagate failed: %s\n", gs_ctx_error_msg(cctx));
        return false;
    }
    cg = g;
    return true;
}

/* the sharding of a named value equals want (compared as shardings) */
static bool csh(const char *name, const char *want) {
    gs_value *v = cg ? gs_graph_find(cg, name) : NULL;
    const gs_sharding *w = cctx ? gs_sharding_parse(cctx, want) : NULL;
    const char *got = v ? gs_value_sharding_text(v) : NULL;
    if (!v || !w || !gs_sharding_equal(gs_value_sharding(v), w)) {
        fprintf(stderr, "  %s: got %s, expected %s\n", name, got ? got : "(none)", want);
        return false;
    }
    return true;
}

static void cdone(void) {
    if (cctx) gs_ctx_destroy(cctx);
    cctx = NULL;
    cg = NULL;
}

/* out[i, b, o] = sum_f lhs[i, b, f] * rhs[i, o, f]: spatial dim 0 (size 6) is a batch dim (window 6, lhs_dilate 6,
   stride 5). A split of it on lhs reaches the result forward and the rhs backward (its batch dim), as a dot's
   batch split does; with a split on the result only, both operands get it backward. */
static void test_conv_einsum_batch_propagation(void) {
    const char *mod = "HloModule m, num_partitions=2\nENTRY e {\n"
                      "  l = f32[6,4,8] parameter(0)\n  lc = f32[6,4,8] copy(l)%s\n"
                      "  r = f32[6,10,8] parameter(1)\n  rc = f32[6,10,8] copy(r)\n"
                      "  c = f32[6,4,10] convolution(lc, rc), dim_labels=0bf_0oi->0bf, window={size=6 stride=5 lhs_dilate=6}%s\n"
                      "  ROOT o = f32[6,4,10] copy(c)\n}\n";
    char text[1024];
    snprintf(text, sizeof text, mod, ", sharding={devices=[2,1,1]0,1}", "");
    CHECK(cprop(text) && csh("c", "{devices=[2,1,1]0,1}") && csh("rc", "{devices=[2,1,1]0,1}") &&
          csh("o", "{devices=[2,1,1]0,1}"));
    snprintf(text, sizeof text, mod, "", ", sharding={devices=[2,1,1]0,1}");
    CHECK(cprop(text) && csh("lc", "{devices=[2,1,1]0,1}") && csh("rc", "{devices=[2,1,1]0,1}"));
    /* the same einsum in the padded, reversed form (window 6, pad 5 each side, lhs_dilate 5, stride 6) */
    snprintf(text, sizeof text,
             "HloModule m, num_partitions=2\nENTRY e {\n  l = f32[6,4,8] parameter(0), sharding={devices=[2,1,1]0,1}\n"
             "  r = f32[6,10,8] parameter(1)\n  rc = f32[6,10,8] copy(r)\n"
             "  c = f32[6,4,10] convolution(l, rc), dim_labels=0bf_0oi->0bf, "
             "window={size=6 stride=6 pad=5_5 lhs_dilate=5 rhs_reversal=1}\n  ROOT o = f32[6,4,10] copy(c)\n}\n");
    CHECK(cprop(text) && csh("c", "{devices=[2,1,1]0,1}") && csh("rc", "{devices=[2,1,1]0,1}"));
    /* next to a real convolution dim (unsplit): the kernel's split of the batch-like dim reaches the result */
    snprintf(text, sizeof text,
             "HloModule m, num_partitions=2\nENTRY e {\n  l = f32[2,6,8,4] parameter(0)\n  lc = f32[2,6,8,4] copy(l)\n"
             "  r = f32[6,3,4,5] parameter(1), sharding={devices=[2,1,1,1]0,1}\n"
             "  c = f32[2,6,6,5] convolution(lc, r), dim_labels=b01f_01io->b01f, window={size=6x3 stride=5x1 lhs_dilate=6x1}\n"
             "  ROOT o = f32[2,6,6,5] copy(c)\n}\n");
    CHECK(cprop(text) && csh("c", "{devices=[1,2,1,1]0,1}"));
    cdone();
}

/* lhs-free (window 1 over a size-1 kernel dim) and rhs-free (a size-1 input padded by kernel size - 1 each side,
   kernel reversed) spatial dims map to the result like a dot's free dims; the other operand's size-1 dim there is
   never split. Two operands: the larger one's split wins, a batch split beats both. */
static void test_conv_einsum_free_propagation(void) {
    char text[1200];
    /* lhs [b=4, s=6, f=8] x rhs [s=1, f=8, o=10] -> out [4, 6, 10]: s is lhs-free */
    snprintf(text, sizeof text,
             "HloModule m, num_partitions=4\nENTRY e {\n  l = f32[4,6,8] parameter(0), sharding={devices=[1,2,1,2]<=[4] last_tile_dim_replicate}\n"
             "  r = f32[1,8,10] parameter(1), sharding={devices=[1,1,2,2]0,2,1,3 last_tile_dim_replicate}\n"
             "  c = f32[4,6,10] convolution(l, r), dim_labels=b0f_0io->b0f, window={size=1}\n  ROOT o = f32[4,6,10] copy(c)\n}\n");
    CHECK(cprop(text) && csh("c", "{devices=[1,2,2]<=[4]}"));
    /* lhs [b=4, s=1, f=8] x rhs [s=5, f=8, o=10] -> out [4, 5, 10]: s is rhs-free. The result split on b and s
       gives the lhs its b split and the rhs its s split, backward */
    snprintf(text, sizeof text,
             "HloModule m, num_partitions=4\nENTRY e {\n  l = f32[4,1,8] parameter(0)\n  lc = f32[4,1,8] copy(l)\n"
             "  r = f32[5,8,10] parameter(1)\n  rc = f32[5,8,10] copy(r)\n"
             "  c = f32[4,5,10] convolution(lc, rc), dim_labels=b0f_0io->b0f, window={size=5 pad=4_4 rhs_reversal=1}, "
             "sharding={devices=[2,2,1]<=[4]}\n  ROOT o = f32[4,5,10] copy(c)\n}\n");
    CHECK(cprop(text) && csh("lc", "{devices=[2,1,1,2]<=[4] last_tile_dim_replicate}") &&
          csh("rc", "{devices=[2,1,1,2]0,2,1,3 last_tile_dim_replicate}"));
    /* the batch split first: lhs split on its batch-like spatial dim, rhs (larger) on its output features */
    snprintf(text, sizeof text,
             "HloModule m, num_partitions=2\nENTRY e {\n  l = f32[6,4,8] parameter(0), sharding={devices=[2,1,1]0,1}\n"
             "  r = f32[6,40,8] parameter(1), sharding={devices=[1,2,1]0,1}\n"
             "  c = f32[6,4,40] convolution(l, r), dim_labels=0bf_0oi->0bf, window={size=6 stride=5 lhs_dilate=6}\n"
             "  ROOT o = f32[6,4,40] copy(c)\n}\n");
    CHECK(cprop(text) && csh("c", "{devices=[2,1,1]0,1}"));
    cdone();
}

/* A contracting spatial dim (one window over the whole input): split on both operands, the result is not split
   there (its dim has size 1) and the partitioned program adds partial sums. */
static void test_conv_einsum_contracting(void) {
    gst_case h;
    char text[1024];
    snprintf(text, sizeof text,
             "  l = f32[3,10,4] parameter(0), sharding={devices=[1,2,1]0,1}\n"
             "  k = f32[10,4,5] parameter(1), sharding={devices=[2,1,1]0,1}\n"
             "  ROOT r = f32[3,1,5] convolution(l, k), dim_labels=b0f_0io->b0f, window={size=10 stride=3}\n");
    if (gst_case_run(&h, "", text, 2, 1e-4, 5)) {
        CHECK_MSG(h.ar + h.rs >= 1 && h.ag == 0, "ar %d rs %d ag %d\n%s", h.ar, h.rs, h.ag, h.text);
        CHECK_MSG(strstr(h.explain, "convolution as a dot") && strstr(h.explain, "contracting dim split 2-way"), "%s",
                  h.explain);
    }
    gs_ctx_destroy(h.ctx);
}

/* XLA's small-kernel test is against the output: a 12x28 kernel over a 16x32 input gives a 5x5 output, so only
   the batch split carries forward (a kernel smaller than the input, larger than the output) */
static void test_conv_small_kernel_vs_output(void) {
    CHECK(cprop("HloModule m, num_partitions=8\nENTRY e {\n  x = f32[8,6,16,32] parameter(0), sharding={devices=[2,1,2,2]<=[8]}\n"
                "  k = f32[6,1,12,28] parameter(1), sharding={replicated}\n"
                "  c = f32[8,6,5,5] convolution(x, k), window={size=12x28}, dim_labels=bf01_oi01->bf01, feature_group_count=6\n"
                "  ROOT o = f32[8,6,5,5] copy(c)\n}\n") &&
          csh("c", "{devices=[2,1,1,1,4]<=[8] last_tile_dim_replicate}"));
    /* a 3x3 kernel under a 14x30 output: the spatial split carries over */
    CHECK(cprop("HloModule m, num_partitions=8\nENTRY e {\n  x = f32[8,6,16,32] parameter(0), sharding={devices=[2,1,2,2]<=[8]}\n"
                "  k = f32[6,1,3,3] parameter(1), sharding={replicated}\n"
                "  c = f32[8,6,14,30] convolution(x, k), window={size=3x3}, dim_labels=bf01_oi01->bf01, feature_group_count=6\n"
                "  ROOT o = f32[8,6,14,30] copy(c)\n}\n") &&
          csh("c", "{devices=[2,1,2,2]<=[8]}"));
    cdone();
}

/* rhs_reversal is kept on the convolution (printed back, evaluated): a 2-D kernel reversed along one dim only,
   against a hand-written loop */
static void test_conv_reversal_eval(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = NULL;
    const char *text = "HloModule m\nENTRY e {\n  x = f32[1,4,3,1] parameter(0)\n  k = f32[2,2,1,1] parameter(1)\n"
                       "  ROOT c = f32[1,3,2,1] convolution(x, k), window={size=2x2 rhs_reversal=0x1}, dim_labels=b01f_01io->b01f\n}\n";
    float x[12], k[4], out[6];
    const void *ins[2];
    void *outs[1];
    int i, j, a, b;
    for (i = 0; i < 12; i++) x[i] = (float)(i * i % 7) - 2.0f;
    for (i = 0; i < 4; i++) k[i] = (float)(1 << (2 * i));
    CHECK_OK(gs_hlo_parse(ctx, text, strlen(text), &g));
    if (g) {
        ins[0] = x;
        ins[1] = k;
        outs[0] = out;
        CHECK_OK(gs_eval(g, ins, outs));
        for (i = 0; i < 3; i++)
            for (j = 0; j < 2; j++) {
                double want = 0;
                for (a = 0; a < 2; a++)
                    for (b = 0; b < 2; b++) want += x[(i + a) * 3 + j + b] * k[a * 2 + (1 - b)];
                CHECK_NEAR(out[i * 2 + j], want, 0);
            }
        CHECK(strstr(gs_hlo_print(g), "rhs_reversal=0x1") != NULL);
        CHECK(gst_reprints(gs_hlo_print(g)));
    }
    gs_ctx_destroy(ctx);
}

/* ---- the differential generator ---- */
enum { CK_BATCH_STRIDE, CK_BATCH_DILATE, CK_BATCH_PADDED, CK_CONTRACT, CK_LHS_FREE, CK_RHS_FREE, CK_CONV, CK_N };
static const char *const ck_names[CK_N] = {"batch", "batch (rhs_dilate form)", "batch (padded reversed form)",
                                           "contracting", "lhs-free", "rhs-free", "real convolution"};

typedef struct cz {
    uint64_t seed;
    int64_t D;
    int64_t ldims[4], kdims[4];   /* lhs b01f, kernel 01io */
    int kind[2];
    int64_t size[2], stride[2], lo[2], hi[2], ldil[2], rdil[2], rev[2];
} cz;

/* one spatial dim of class k: the lhs and kernel extents and the window */
static void cz_dim(cz *z, int i, int k) {
    int64_t n = gst_randint(&z->seed, 1, 7), m = gst_randint(&z->seed, 1, 6), m1 = n > 2 ? n - 1 : 1;
    z->kind[i] = k;
    z->stride[i] = z->ldil[i] = z->rdil[i] = 1;
    z->lo[i] = z->hi[i] = z->rev[i] = 0;
    z->ldims[1 + i] = z->kdims[i] = z->size[i] = n;
    switch (k) {
    case CK_BATCH_STRIDE: z->stride[i] = m1; z->ldil[i] = n; break;
    case CK_BATCH_DILATE: z->rdil[i] = m1; z->ldil[i] = n; break;
    case CK_BATCH_PADDED:
        n = n < 2 ? 2 : n;
        z->ldims[1 + i] = z->kdims[i] = z->size[i] = z->stride[i] = n;
        z->lo[i] = z->hi[i] = z->ldil[i] = n - 1;
        z->rev[i] = 1;
        break;
    case CK_CONTRACT: z->stride[i] = gst_randint(&z->seed, 1, 3); break;
    case CK_LHS_FREE: z->kdims[i] = z->size[i] = 1; break;
    case CK_RHS_FREE:
        z->ldims[1 + i] = 1;
        z->kdims[i] = z->size[i] = m;
        z->lo[i] = z->hi[i] = m - 1;
        z->rev[i] = 1;
        break;
    default:   /* a real convolution dim: input 3..9, kernel 1..3, padding, maybe reversed */
        z->ldims[1 + i] = n + 2;
        z->kdims[i] = z->size[i] = m > 3 ? 3 : m;
        z->lo[i] = gst_randint(&z->seed, 0, 1);
        z->hi[i] = gst_randint(&z->seed, 0, 1);
        z->rev[i] = gst_randint(&z->seed, 0, 1);
        break;
    }
}

/* the window of both spatial dims as HLO text */
static void cz_window(const cz *z, char *w, size_t cap) {
    snprintf(w, cap, "size=%lldx%lld stride=%lldx%lld pad=%lld_%lldx%lld_%lld lhs_dilate=%lldx%lld rhs_dilate=%lldx%lld "
             "rhs_reversal=%lldx%lld", (long long)z->size[0], (long long)z->size[1], (long long)z->stride[0],
             (long long)z->stride[1], (long long)z->lo[0], (long long)z->hi[0], (long long)z->lo[1], (long long)z->hi[1],
             (long long)z->ldil[0], (long long)z->ldil[1], (long long)z->rdil[0], (long long)z->rdil[1],
             (long long)z->rev[0], (long long)z->rev[1]);
}

/* a random sharding of a rank-4 value over D devices (tile counts dividing D, the rest replicated), or "" */
static void cz_sharding(cz *z, char *buf, size_t cap) {
    int64_t t[4] = {1, 1, 1, 1}, left = z->D, rep;
    int d, n = (int)gst_randint(&z->seed, 0, 2);
    buf[0] = 0;
    if (gst_randint(&z->seed, 0, 3) == 0) return;   /* unannotated: left to propagation */
    while (n-- > 0) {
        int64_t f;
        d = (int)gst_randint(&z->seed, 0, 3);
        for (f = left; f > 1; f--)
            if (left % f == 0 && gst_randint(&z->seed, 0, 1)) break;
        if (f > 1) {
            t[d] *= f;
            left /= f;
        }
    }
    rep = left;
    if (rep == z->D) {
        snprintf(buf, cap, ", sharding={replicated}");
        return;
    }
    if (rep > 1)
        snprintf(buf, cap, ", sharding={devices=[%lld,%lld,%lld,%lld,%lld]<=[%lld] last_tile_dim_replicate}", (long long)t[0],
                 (long long)t[1], (long long)t[2], (long long)t[3], (long long)rep, (long long)z->D);
    else
        snprintf(buf, cap, ", sharding={devices=[%lld,%lld,%lld,%lld]<=[%lld]}", (long long)t[0], (long long)t[1],
                 (long long)t[2], (long long)t[3], (long long)z->D);
}

/* one random einsum-as-convolution case (the first spatial dim of class k0); returns whether it ran as a dot */
static bool cz_case(uint64_t seed, int k0, int *ran) {
    static const int64_t devs[] = {2, 3, 4, 5, 6, 8};
    cz z;
    gst_case h;
    char body[2048], sl[128], sk[128], so[128], win[256];
    bool as_dot = false;
    memset(&z, 0, sizeof z);
    z.seed = seed;
    z.D = devs[gst_randint(&z.seed, 0, 5)];
    z.ldims[0] = gst_randint(&z.seed, 1, 5);      /* input batch */
    z.ldims[3] = z.kdims[2] = gst_randint(&z.seed, 1, 5);   /* features */
    z.kdims[3] = gst_randint(&z.seed, 1, 6);      /* output features */
    cz_dim(&z, 0, k0);
    cz_dim(&z, 1, (int)gst_randint(&z.seed, 0, CK_N - 1));
    cz_sharding(&z, sl, sizeof sl);
    cz_sharding(&z, sk, sizeof sk);
    cz_sharding(&z, so, sizeof so);
    cz_window(&z, win, sizeof win);
    snprintf(body, sizeof body,
             "  l = f32[%lld,%lld,%lld,%lld] parameter(0)%s\n  k = f32[%lld,%lld,%lld,%lld] parameter(1)%s\n"
             "  r = convolution(l, k), window={%s}, dim_labels=b01f_01io->b01f%s\n",
             (long long)z.ldims[0], (long long)z.ldims[1], (long long)z.ldims[2], (long long)z.ldims[3], sl,
             (long long)z.kdims[0], (long long)z.kdims[1], (long long)z.kdims[2], (long long)z.kdims[3], sk, win, so);
    if (gst_case_run(&h, "", body, z.D, 1e-4, seed)) {
        (*ran)++;
        as_dot = strstr(h.explain, "convolution as a dot") != NULL;
        if (gst_checks_failed_in_test)
            fprintf(stderr, "  case seed %llu, D %lld, dims %s / %s:\n%s", (unsigned long long)seed, (long long)z.D,
                    ck_names[z.kind[0]], ck_names[z.kind[1]], body);
    }
    gs_ctx_destroy(h.ctx);
    return as_dot;
}

/* every class, 12 random cases each (GST_CONV_COUNT=N for more), partitioned vs the reference with poisoned
   padding; most run as a dot */
static void test_conv_einsum_differential(void) {
    const char *env = getenv("GST_CONV_COUNT");
    int k, i, ran = 0, dots = 0, failed = 0, count = env && atoi(env) > 0 ? atoi(env) : 12;
    for (k = 0; k < CK_N; k++)
        for (i = 0; i < count && failed < 3; i++) {
            int before = gst_checks_failed_in_test;
            if (cz_case(100000u * (uint64_t)k + (uint64_t)i + 1, k, &ran)) dots++;
            if (gst_checks_failed_in_test > before) failed++;
        }
    CHECK_EQ_INT(ran, CK_N * count);
    CHECK_MSG(dots * 2 > ran, "only %d of %d cases partitioned as a dot", dots, ran);
}

/* the filter-gradient shape with a reversed kernel: input and kernel split alike along the spatial dim, each
   device's input region on the mirrored side of its taps (evenly and unevenly split) */
static void test_conv_reversed_taps(void) {
    static const struct { int64_t S, W, D; const char *win; } cases[] = {
        {9, 5, 3, "size=5 rhs_reversal=1"},
        {9, 5, 3, "size=5 pad=2_1 rhs_dilate=2 rhs_reversal=1"},
        {11, 7, 4, "size=7 pad=3_3 rhs_reversal=1"},
        {10, 5, 2, "size=5 stride=2 pad=1_2 rhs_reversal=1"},
        {8, 6, 4, "size=6 pad=1_0 rhs_reversal=1"},
    };
    int i;
    for (i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        gst_case h;
        char body[512];
        snprintf(body, sizeof body,
                 "  l = f32[%lld,6,4] parameter(0), sharding={devices=[%lld,1,1]<=[%lld]}\n"
                 "  k = f32[%lld,6,5] parameter(1), sharding={devices=[%lld,1,1]<=[%lld]}\n"
                 "  ROOT r = convolution(l, k), window={%s}, dim_labels=0fb_0io->0bf, sharding={replicated}\n",
                 (long long)cases[i].S, (long long)cases[i].D, (long long)cases[i].D, (long long)cases[i].W,
                 (long long)cases[i].D, (long long)cases[i].D, cases[i].win);
        if (gst_case_run(&h, "", body, cases[i].D, 1e-4, 31 + (uint64_t)i))
            CHECK_MSG(strstr(h.explain, "kernel taps") != NULL, "case %d: %s", i, h.explain);
        gs_ctx_destroy(h.ctx);
    }
}

void suite_spmd_conv(void) {
    RUN(test_conv_einsum_batch_propagation);
    RUN(test_conv_einsum_free_propagation);
    RUN(test_conv_einsum_contracting);
    RUN(test_conv_small_kernel_vs_output);
    RUN(test_conv_reversal_eval);
    RUN(test_conv_einsum_differential);
    RUN(test_conv_reversed_taps);
}
