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
            CHECK_MSG(strstr(h.explain, "halo on the kernel") == NULL &&
                          strstr(h.explain, "halo on the input although conv_halo_exchange_always_on_lhs=false") != NULL,
                      "case %d: %s", i, h.explain);
        gs_ctx_destroy(h.ctx);
        /* the same program as without the option */
        if (gst_case_run(&h, "", body, 3, 1e-4, 90 + (uint64_t)i))
            CHECK_MSG(strstr(h.explain, "halo on the kernel") == NULL, "case %d: %s", i, h.explain);
        gs_ctx_destroy(h.ctx);
    }
}

static int count_op(const gs_graph *g, gs_op op) {
    int i, n = 0;
    for (i = 0; i < gs_graph_num_values(g); i++)
        if (gs_value_op(gs_graph_value(g, i)) == op) n++;
    return n;
}

/* the three options by name set their desc fields; a number for a switch is an error */
static void test_xopts_names(void) {
    gs_ctx *ctx = gst_ctx();
    gs_partition_desc pd;
    memset(&pd, 0, sizeof pd);
    CHECK_EQ_INT(gs_partition_xla_option(ctx, &pd, "partial_windowed_einsum", "true"), GS_OK);
    CHECK_EQ_INT(gs_partition_xla_option(ctx, &pd, "choose_faster_windowed_einsum_over_mem", "true"), GS_OK);
    CHECK_EQ_INT(gs_partition_xla_option(ctx, &pd, "conv_halo_exchange_always_on_lhs", "false"), GS_OK);
    CHECK(pd.windowed_einsum_partial && pd.windowed_einsum_prefer_speed && pd.conv_halo_on_rhs && pd.xla_inert == 0);
    CHECK_EQ_INT(gs_partition_xla_option(ctx, &pd, "partial_windowed_einsum", "false"), GS_OK);
    CHECK_EQ_INT(gs_partition_xla_option(ctx, &pd, "choose_faster_windowed_einsum_over_mem", "false"), GS_OK);
    CHECK_EQ_INT(gs_partition_xla_option(ctx, &pd, "conv_halo_exchange_always_on_lhs", "true"), GS_OK);
    CHECK(!pd.windowed_einsum_partial && !pd.windowed_einsum_prefer_speed && !pd.conv_halo_on_rhs);
    CHECK_EQ_INT(gs_partition_xla_option(ctx, &pd, "partial_windowed_einsum", "1"), GS_ERR_INVALID_ARG);
    CHECK(strstr(gs_ctx_error_msg(ctx), "wants true or false") != NULL);
    gs_ctx_destroy(ctx);
}

/* XLA's PartialWindowedEinsum, scaled down and made uneven: lhs[B,M,K] split over B (2) and M (D/2), rhs[K,N]
   split over N like the result and replicated over the B groups, result split over B and N. With
   partial_windowed_einsum the result's strategy is taken (XLA tries the loop first) and lhs's M blocks go round
   one ring per B group (XLA's pairs for D = 8: each device sends to the previous one in its group of 4), with
   nothing gathered; unroll and bidirectional leave a subgroup ring as it is (XLA's PartialWindowedEinsum-
   UnrollUnsupported). Without the option no loop. Sizes that do not divide; NaN-poisoned padding. */
static void test_xopts_partial_windowed(void) {
    static const int64_t Ds[] = {8, 6, 4};
    static const int64_t sz[][4] = {{4, 10, 6, 9}, {3, 7, 5, 11}, {5, 13, 4, 6}};
    int di, si, mode;
    for (di = 0; di < 3; di++)
        for (si = 0; si < 3; si++)
            for (mode = 0; mode < 3; mode++) {   /* 0: option off, 1: on, 2: on with unroll and bidirectional */
                int64_t D = Ds[di], G = D / 2;
                char body[1024];
                gst_case h;
                gs_partition_desc pd;
                memset(&pd, 0, sizeof pd);
                pd.windowed_einsum_bytes = 1;
                pd.windowed_einsum_partial = mode > 0;
                pd.windowed_einsum_unroll = pd.windowed_einsum_bidirectional = mode == 2;
                snprintf(body, sizeof body,
                         "  p0 = f32[%lld,%lld,%lld] parameter(0), sharding={devices=[2,%lld,1]<=[%lld]}\n"
                         "  p1 = f32[%lld,%lld] parameter(1), sharding={devices=[1,%lld,2]<=[2,%lld]T(1,0) last_tile_dim_replicate}\n"
                         "  ROOT r = f32[%lld,%lld,%lld] dot(p0, p1), lhs_contracting_dims={2}, rhs_contracting_dims={0}, "
                         "sharding={devices=[2,1,%lld]<=[%lld]}\n",
                         (long long)sz[si][0], (long long)sz[si][1], (long long)sz[si][2], (long long)G, (long long)D,
                         (long long)sz[si][2], (long long)sz[si][3], (long long)G, (long long)G, (long long)sz[si][0],
                         (long long)sz[si][1], (long long)sz[si][3], (long long)G, (long long)D);
                if (gst_case_run_desc(&h, "", body, D, 1e-5, 100 + (uint64_t)(di * 9 + si * 3 + mode), &pd)) {
                    CHECK_MSG(count_op(h.spmd, GS_OP_WHILE) == (mode ? 1 : 0), "D %lld size %d mode %d:\n%s",
                              (long long)D, si, mode, h.text);
                    if (mode) {
                        CHECK_MSG(h.ag == 0 && strstr(h.explain, "within each group of") != NULL &&
                                      strstr(h.explain, "partial windowed einsum pattern") != NULL &&
                                      strstr(h.explain, "(all-gather form)") != NULL,
                                  "D %lld size %d mode %d: %s", (long long)D, si, mode, h.explain);
                        if (D == 8)
                            CHECK_MSG(strstr(h.text, "source_target_pairs={{0,3},{1,0},{2,1},{3,2},{4,7},{5,4},{6,5},{7,6}}"),
                                      "%s", h.text);
                    }
                }
                gs_ctx_destroy(h.ctx);
            }
}

/* choose_faster_windowed_einsum_over_mem inside contracting groups: lhs[M,K] split over M and K, the rhs's
   strategy (K and N split, forced) wants lhs with M whole: with the option M's blocks go round a ring in each
   K group and the loop's partial sums are all-reduced over the K groups; without it lhs is all-gathered. Both
   match the reference on uneven sizes with poisoned padding. */
static void test_xopts_faster_contracting_groups(void) {
    static const int64_t sz[][3] = {{9, 7, 10}, {6, 5, 3}, {11, 9, 13}};
    static const gs_partition_strategy force = {"r", "rhs"};
    int si, on;
    for (si = 0; si < 3; si++)
        for (on = 0; on < 2; on++) {
            char body[1024];
            gst_case h;
            gs_partition_desc pd;
            memset(&pd, 0, sizeof pd);
            pd.windowed_einsum_bytes = 1;
            pd.windowed_einsum_prefer_speed = on != 0;
            pd.n_strategies = 1;
            pd.strategies = &force;
            snprintf(body, sizeof body,
                     "  l = f32[%lld,%lld] parameter(0), sharding={devices=[2,2]<=[4]}\n"
                     "  q = f32[%lld,%lld] parameter(1), sharding={devices=[2,2]<=[2,2]T(1,0)}\n"
                     "  ROOT r = f32[%lld,%lld] dot(l, q), lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
                     "sharding={devices=[1,2,2]<=[4] last_tile_dim_replicate}\n",
                     (long long)sz[si][0], (long long)sz[si][1], (long long)sz[si][1], (long long)sz[si][2],
                     (long long)sz[si][0], (long long)sz[si][2]);
            if (gst_case_run_desc(&h, "", body, 4, 1e-5, 130 + (uint64_t)(si * 2 + on), &pd)) {
                CHECK_MSG((count_op(h.spmd, GS_OP_WHILE) + h.cp > 0) == (on != 0) && (h.ag == 0) == (on != 0) &&
                              h.ar + h.rs == 1,
                          "size %d on %d:\n%s", si, on, h.text);
                if (on) CHECK_MSG(strstr(h.explain, "within each group of 2 devices") != NULL, "%s", h.explain);
            }
            gs_ctx_destroy(h.ctx);
        }
}

/* Partitions HLO text (no run) and checks that the explanation of instruction `name` contains `want` and, when
   `absent` is given, does not contain it. */
static void explain_check(const char *text, const gs_partition_desc *pd, const char *name, const char *want,
                          const char *absent) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = NULL, *spmd = NULL;
    CHECK_OK(gs_hlo_parse(ctx, text, strlen(text), &g));
    if (g && gs_partition(g, pd, &spmd) == GS_OK) {
        const char *ex = gs_partition_explain(spmd, gst_case_named(g, name));
        CHECK_MSG(ex && strstr(ex, want) != NULL && (!absent || !strstr(ex, absent)), "want '%s'%s%s: %s", want,
                  absent ? ", not " : "", absent ? absent : "", ex ? ex : "(none)");
    } else {
        CHECK_MSG(false, "partition: %s", gs_ctx_error_msg(ctx));
    }
    gs_ctx_destroy(ctx);
}

/* choose_faster_windowed_einsum_over_mem in the weighing: lhs[M,K]{K split 8} x rhs[K,N]{K split 8} -> out{M
   split 8} at sizes where the rhs's all-gather is long but hides behind the local dots: by default the partial
   sums' strategy wins on estimated time; with the option the result's strategy, its all-gather priced as the
   windowed loop, wins. (Partitioned only: the arrays are too large to run here.) */
static void test_xopts_faster_pricing(void) {
    static const char *const text =
        "HloModule m\nENTRY e {\n"
        "  l = bf16[16384,16384] parameter(0), sharding={devices=[1,8]<=[8]}\n"
        "  r = bf16[16384,65536] parameter(1), sharding={devices=[8,1]<=[8]}\n"
        "  ROOT d = bf16[16384,65536] dot(l, r), lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
        "sharding={devices=[8,1]<=[8]}\n}\n";
    gs_partition_desc pd;
    memset(&pd, 0, sizeof pd);
    pd.num_devices = 8;
    explain_check(text, &pd, "d", "dot strategy lhs", "as a windowed loop");
    pd.windowed_einsum_prefer_speed = true;
    explain_check(text, &pd, "d", "dot strategy output", NULL);
    explain_check(text, &pd, "d", "as a windowed loop", NULL);
}

/* "[t0,t1,t2]" tiles for a rank-3 value on an a x b mesh: axis a on dim p, axis b on dim q (p != q) */
static void tiles3(char *out, size_t cap, int p, int q, int64_t a, int64_t b) {
    int64_t t[3] = {1, 1, 1};
    t[p] = a;
    t[q] = b;
    snprintf(out, cap, "[%lld,%lld,%lld]", (long long)t[0], (long long)t[1], (long long)t[2]);
}

/* Random batched dots lhs[B,M,K] x rhs[B,K,N] -> out[B,M,N] on 4, 6 and 8 devices (2-D meshes), each value
   split over both mesh axes on two of its dims, sizes that mostly do not divide, with both subgroup options on
   and every operand windowable (threshold 1 byte): every program matches the reference with NaN-poisoned
   padding, and a good share of them run subgroup rings (batch, free or contracting ring dims). */
static void test_xopts_subgroup_rings_random(void) {
    static const int64_t mesh[][2] = {{2, 2}, {2, 3}, {3, 2}, {2, 4}, {4, 2}};
    uint64_t rng = 0x2545f4914f6cdd1dull;
    int it, rings = 0, ran = 0;
    for (it = 0; it < 40; it++) {
        int64_t a, b, D, sz[4];
        int m, i, pq[3][2];
        char tl[32], tr[32], to[32], body[1024];
        gst_case h;
        gs_partition_desc pd;
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        m = (int)((rng >> 33) % 5);
        a = mesh[m][0];
        b = mesh[m][1];
        D = a * b;
        for (i = 0; i < 4; i++) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            sz[i] = (a > b ? a : b) + 1 + (int64_t)((rng >> 33) % (uint64_t)(2 * D));
        }
        for (i = 0; i < 3; i++) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            pq[i][0] = (int)((rng >> 33) % 3);
            pq[i][1] = (pq[i][0] + 1 + (int)((rng >> 40) % 2)) % 3;
        }
        tiles3(tl, sizeof tl, pq[0][0], pq[0][1], a, b);
        tiles3(tr, sizeof tr, pq[1][0], pq[1][1], a, b);
        tiles3(to, sizeof to, pq[2][0], pq[2][1], a, b);
        snprintf(body, sizeof body,
                 "  l = f32[%lld,%lld,%lld] parameter(0), sharding={devices=%s<=[%lld]}\n"
                 "  q = f32[%lld,%lld,%lld] parameter(1), sharding={devices=%s<=[%lld]}\n"
                 "  ROOT r = f32[%lld,%lld,%lld] dot(l, q), lhs_batch_dims={0}, rhs_batch_dims={0}, "
                 "lhs_contracting_dims={2}, rhs_contracting_dims={1}, sharding={devices=%s<=[%lld]}\n",
                 (long long)sz[0], (long long)sz[1], (long long)sz[2], tl, (long long)D, (long long)sz[0],
                 (long long)sz[2], (long long)sz[3], tr, (long long)D, (long long)sz[0], (long long)sz[1],
                 (long long)sz[3], to, (long long)D);
        memset(&pd, 0, sizeof pd);
        pd.windowed_einsum_bytes = 1;
        pd.windowed_einsum_partial = true;
        pd.windowed_einsum_prefer_speed = true;
        if (gst_case_run_desc(&h, "", body, D, 1e-4, 200 + (uint64_t)it, &pd)) {
            ran++;
            if (strstr(h.explain, "within each group of") != NULL) rings++;
        }
        gs_ctx_destroy(h.ctx);
    }
    CHECK_EQ_INT(ran, 40);
    CHECK_MSG(rings >= 5, "only %d of %d programs ran a subgroup ring", rings, ran);
}

/* choose_faster_windowed_einsum_over_mem with both operands windowable (the replicated strategy, forced): the
   local dot (about 60 us on v5e) is shorter than both all-gathers, so XLA's rule hides the shorter one, the
   rhs's; by default the lhs is taken first. (Partitioned only: 48 MB of operands.) */
static void test_xopts_faster_which_operand(void) {
    static const char *const text =
        "HloModule m\nENTRY e {\n"
        "  l = f32[512,16384] parameter(0), sharding={devices=[4,1]<=[4]}\n"
        "  q = f32[16384,256] parameter(1), sharding={devices=[1,4]<=[4]}\n"
        "  ROOT r = f32[512,256] dot(l, q), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}\n}\n";
    static const gs_partition_strategy force = {"r", "replicated"};
    gs_partition_desc pd;
    memset(&pd, 0, sizeof pd);
    pd.num_devices = 4;
    pd.windowed_einsum_bytes = 1;
    pd.n_strategies = 1;
    pd.strategies = &force;
    explain_check(text, &pd, "r", "lhs's blocks", NULL);
    pd.windowed_einsum_prefer_speed = true;
    explain_check(text, &pd, "r", "rhs's blocks", NULL);
}

void suite_spmd_xopts(void) {
    RUN(test_xopts_names);
    RUN(test_xopts_partial_windowed);
    RUN(test_xopts_faster_contracting_groups);
    RUN(test_xopts_faster_pricing);
    RUN(test_xopts_faster_which_operand);
    RUN(test_xopts_subgroup_rings_random);
    RUN(test_xopts_conv_halo_on_rhs);
    RUN(test_xopts_conv_halo_on_rhs_2d);
    RUN(test_xopts_conv_halo_on_rhs_fallback);
}
