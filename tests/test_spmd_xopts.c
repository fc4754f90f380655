/* test_spmd_xopts.c - XLA's partitioner options that choose between program forms: conv_halo_exchange_always_on_lhs
   (the filter gradient's halo on the kernel), partial_windowed_einsum (a windowed einsum over a subgroup ring) and
   choose_faster_windowed_einsum_over_mem (the loop priced at its own time). Every case is partitioned, run on
   lockstep devices with NaN-poisoned padding and checked against the reference interpreter (spmd_case.h); the
   structural checks say that the option changed the program the way XLA's does. */
#include "spmd_case.h"

/* the last dim of every collective-permute's result: 1 bit per distinct extent (up to 31) */
static uint32_t permute_minor_extents(const gs_graph *g) {
    uint32_t m = 0;
    int i;
    for (i = 0; i < gs_graph_num_values(g); i++) {
        gs_value *v = gs_graph_value(g, i);
        gs_shape s = gs_value_shape(v);
        if (gs_value_op(v) == GS_OP_COLLECTIVE_PERMUTE && s.rank > 0 && s.dims[s.rank - 1] < 32)
            m |= 1u << s.dims[s.rank - 1];
    }
    return m;
}

/* The filter-gradient convolution, input l[S,6,4] (4 = its batch, the minor dim) and kernel k[W,6,5] (5 = output
   features) split alike along the spatial dim, result replicated: with conv_halo_exchange_always_on_lhs=false
   every halo piece moved is the kernel's (minor extent 5), by default the input's (4); both match the reference
   with poisoned padding, on shapes that do not divide, with padding (negative too), stride and window dilation */
static void test_xopts_conv_halo_on_rhs(void) {
    static const struct { int64_t S, W, D; const char *win; } cases[] = {
        {12, 12, 2, "size=12 pad=1_1"},                 /* XLA's ConvolutionLhsTiledRhsTiledWithPadding, scaled */
        {13, 11, 3, "size=11 pad=1_1"},
        {14, 7, 2, "size=7 pad=1_0 rhs_dilate=2"},      /* ...WindowDilateUneven, scaled: a shifted input */
        {16, 8, 2, "size=8 pad=0_-1 rhs_dilate=2"},     /* ...NegativeRhsPadding: no halo at all */
        {17, 19, 4, "size=19 stride=2 pad=2_3"},
        {23, 10, 3, "size=10 pad=3_2 rhs_dilate=2"},
        {10, 10, 4, "size=10 pad=4_4 stride=3"},
        {9, 7, 3, "size=7 pad=1_1 rhs_dilate=1"},
    };
    int i, rhs;
    for (i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++)
        for (rhs = 0; rhs < 2; rhs++) {
            gst_case h;
            gs_partition_desc pd;
            char body[512];
            gs_ctx *ctx = gst_ctx();
            memset(&pd, 0, sizeof pd);
            CHECK_EQ_INT(gs_partition_xla_option(ctx, &pd, "conv_halo_exchange_always_on_lhs", rhs ? "false" : "true"), GS_OK);
            gs_ctx_destroy(ctx);
            CHECK(pd.conv_halo_on_rhs == (rhs != 0));
            snprintf(body, sizeof body,
                     "  l = f32[%lld,6,4] parameter(0), sharding={devices=[%lld,1,1]<=[%lld]}\n"
                     "  k = f32[%lld,6,5] parameter(1), sharding={devices=[%lld,1,1]<=[%lld]}\n"
                     "  ROOT r = convolution(l, k), window={%s}, dim_labels=0fb_0io->0bf, sharding={replicated}\n",
                     (long long)cases[i].S, (long long)cases[i].D, (long long)cases[i].D, (long long)cases[i].W,
                     (long long)cases[i].D, (long long)cases[i].D, cases[i].win);
            if (gst_case_run_desc(&h, "", body, cases[i].D, 1e-4, 70 + (uint64_t)i, &pd)) {
                uint32_t m = permute_minor_extents(h.spmd);
                CHECK_MSG(strstr(h.explain, rhs ? "halo on the kernel" : "kernel taps") != NULL, "case %d rhs %d: %s", i,
                          rhs, h.explain);
                CHECK_MSG(m == 0 || m == (rhs ? 1u << 5 : 1u << 4), "case %d rhs %d: permuted extents %x\n%s", i, rhs,
                          (unsigned)m, h.text);
                CHECK_EQ_INT(h.ag, 0);
                CHECK_EQ_INT(h.ar, 1);
                if (i == 3 && rhs) CHECK_EQ_INT(h.cp, 0);   /* the taps each block meets are the device's own */
                if (i != 3) CHECK_MSG(h.cp > 0, "case %d rhs %d: no halo\n%s", i, rhs, h.text);
            }
            gs_ctx_destroy(h.ctx);
        }
}

/* two spatial dims split on a 2x2 mesh (one of them unevenly), the halo on the kernel along both */
static void test_xopts_conv_halo_on_rhs_2d(void) {
    static const char *const body =
        "  l = f32[17,16,3,2] parameter(0), sharding={devices=[2,2,1,1]<=[4]}\n"
        "  k = f32[16,15,3,5] parameter(1), sharding={devices=[2,2,1,1]<=[4]}\n"
        "  ROOT r = convolution(l, k), window={size=16x15 pad=1_1x1_0 rhs_dilate=1x1}, dim_labels=01fb_01io->01bf, "
        "sharding={replicated}\n";
    gst_case h;
    gs_partition_desc pd;
    memset(&pd, 0, sizeof pd);
    pd.conv_halo_on_rhs = true;
    if (gst_case_run_desc(&h, "", body, 4, 1e-4, 95, &pd)) {
        CHECK_MSG(strstr(h.explain, "halo on the kernel") != NULL, "%s", h.explain);
        CHECK_MSG(h.cp > 0 && permute_minor_extents(h.spmd) == 1u << 5, "%s", h.text);
        CHECK_EQ_INT(h.ag, 0);
    }
    gs_ctx_destroy(h.ctx);
}

/* a reversed or base-dilated window has no kernel-side form (XLA does not build one either): the input halo */
static void test_xopts_conv_halo_on_rhs_fallback(void) {
    static const char *const wins[] = {"size=5 pad=2_1 rhs_reversal=1", "size=3 pad=1_1 lhs_dilate=2"};
    int i;
    for (i = 0; i < 2; i++) {
        gst_case h;
        gs_partition_desc pd;
        char body[512];
        memset(&pd, 0, sizeof pd);
        pd.conv_halo_on_rhs = true;
        snprintf(body, sizeof body,
                 "  l = f32[11,6,4] parameter(0), sharding={devices=[3,1,1]<=[3]}\n"
                 "  k = f32[%d,6,5] parameter(1), sharding={devices=[3,1,1]<=[3]}\n"
                 "  ROOT r = convolution(l, k), window={%s}, dim_labels=0fb_0io->0bf, sharding={replicated}\n",
                 i ? 3 : 5, wins[i]);
        if (gst_case_run_desc(&h, "", body, 3, 1e-4, 90 + (uint64_t)i, &pd))
            CHECK_MSG(strstr(h.explain, "halo on the kernel") == NULL, "case %d: %s", i, h.explain);
        gs_ctx_destroy(h.ctx);
        /* the same program as without the option */
        if (gst_case_run(&h, "", body, 3, 1e-4, 90 + (uint64_t)i))
            CHECK_MSG(strstr(h.explain, "halo on the kernel") == NULL, "case %d: %s", i, h.explain);
        gs_ctx_destroy(h.ctx);
    }
}

void suite_spmd_xopts(void) {
    RUN(test_xopts_conv_halo_on_rhs);
    RUN(test_xopts_conv_halo_on_rhs_2d);
    RUN(test_xopts_conv_halo_on_rhs_fallback);
}
