/* test_spmd_halo.c - windowed ops along split dims: each case partitioned, run on emulated devices with poisoned
   padding against the reference interpreter, and the program checked to exchange halos (collective-permutes)
   rather than gather the dim; the explanation names the halos and the base-dilation case. */
#include "spmd_case.h"

static const char *add_f32 = "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
                             "max {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] maximum(a, b)\n}\n";

/* the case runner with this file's reductions and seeds */
static bool halo(gst_case *h, const char *body, int64_t D, double tol) { return gst_case_run(h, add_f32, body, D, tol, 77); }

/* the program exchanges halos: at least min_cp collective-permutes, no all-gather, no warning */
#define CHECK_HALO(h, min_cp)                                                                                    \
    CHECK_MSG((h).cp >= (min_cp) && (h).ag == 0 && (h).warnings == 0, "cp %d ag %d warnings %d\n%s", (h).cp,    \
              (h).ag, (h).warnings, (h).text)

/* GShard Fig. 11: a 4-way split with right halos 1, 2, 3, 4 (partition id + 1) */
static void test_halo_fig11(void) {
    gst_case h;
    if (halo(&h, "  x = f32[12] parameter(0), sharding={devices=[4]<=[4]}\n  z = f32[] constant(0)\n"
                 "  ROOT r = f32[16] reduce-window(x, z), window={size=3 pad=2_4}, to_apply=add, "
                 "sharding={devices=[4]<=[4]}\n", 4, 1e-5)) {
        CHECK_HALO(h, 1);
        CHECK_MSG(strstr(h.explain, "right 1,2,3,4") && strstr(h.explain, "left 2,1,0,-1"), "%s", h.explain);
        CHECK(strstr(h.text, "// r = reduce-window") != NULL);
    }
    gs_ctx_destroy(h.ctx);
}

/* the three base-dilation cases, on reduce-window and on convolution */
static void test_halo_base_dilation(void) {
    static const struct { const char *body; const char *want; } cases[] = {
        /* stride 2 x 6 windows per shard = 12, divisible by 2 */
        {"  x = f32[24] parameter(0), sharding={devices=[4]<=[4]}\n  z = f32[] constant(0)\n"
         "  ROOT r = f32[23] reduce-window(x, z), window={size=3 stride=2 lhs_dilate=2}, to_apply=add, "
         "sharding={devices=[4]<=[4]}\n", "base dilation case 1"},
        /* stride 1, 11 windows per shard, dilation 2 */
        {"  x = f32[24] parameter(0), sharding={devices=[4]<=[4]}\n  z = f32[] constant(0)\n"
         "  ROOT r = f32[44] reduce-window(x, z), window={size=4 lhs_dilate=2}, to_apply=add, "
         "sharding={devices=[4]<=[4]}\n", "base dilation case 2"},
        /* stride 3 x 5 windows per shard = 15, not divisible by 2 */
        {"  x = f32[24] parameter(0), sharding={devices=[4]<=[4]}\n  z = f32[] constant(0)\n"
         "  ROOT r = f32[17] reduce-window(x, z), window={size=3 stride=3 pad=0_4 lhs_dilate=2}, to_apply=max, "
         "sharding={devices=[4]<=[4]}\n", "base dilation case 3"},
        {"  x = f32[2,24,3] parameter(0), sharding={devices=[1,4,1]<=[4]}\n  k = f32[3,3,2] parameter(1)\n"
         "  ROOT r = f32[2,17,2] convolution(x, k), window={size=3 stride=3 pad=0_4 lhs_dilate=2}, "
         "dim_labels=b0f_0io->b0f, sharding={devices=[1,4,1]<=[4]}\n", "base dilation case 3"},
        {"  x = f32[2,24,3] parameter(0), sharding={devices=[1,4,1]<=[4]}\n  k = f32[4,3,2] parameter(1)\n"
         "  ROOT r = f32[2,44,2] convolution(x, k), window={size=4 lhs_dilate=2}, "
         "dim_labels=b0f_0io->b0f, sharding={devices=[1,4,1]<=[4]}\n", "base dilation case 2"},
    };
    int i;
    for (i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        gst_case h;
        if (halo(&h, cases[i].body, 4, 1e-5)) {
            CHECK_HALO(h, 1);
            CHECK_MSG(strstr(h.explain, cases[i].want), "case %d: %s", i, h.explain);
        }
        gs_ctx_destroy(h.ctx);
    }
}

/* a halo wider than one shard: pieces from two and three neighbours away */
static void test_halo_wide(void) {
    gst_case h;
    if (halo(&h, "  x = f32[16] parameter(0), sharding={devices=[8]<=[8]}\n  z = f32[] constant(0)\n"
                 "  ROOT r = f32[11] reduce-window(x, z), window={size=6}, to_apply=add, "
                 "sharding={devices=[8]<=[8]}\n", 8, 1e-5)) {
        CHECK_HALO(h, 3);
        CHECK_MSG(strstr(h.text, "{2,0}") && strstr(h.text, "{3,0}"), "%s", h.text);
    }
    gs_ctx_destroy(h.ctx);
}

/* a slice far from the first shards: negative left halos */
static void test_halo_negative(void) {
    gst_case h;
    if (halo(&h, "  x = f32[24,3] parameter(0), sharding={devices=[4,1]<=[4]}\n"
                 "  ROOT r = f32[16,3] slice(x), slice={[5:21], [0:3]}, sharding={devices=[4,1]<=[4]}\n", 4, 0)) {
        CHECK_HALO(h, 1);
        CHECK_MSG(strstr(h.explain, "left -5,-3,-1,1"), "%s", h.explain);
    }
    gs_ctx_destroy(h.ctx);
    /* negative window padding, strided slice of a far part (only the needed pieces move) */
    if (halo(&h, "  x = f32[30] parameter(0), sharding={devices=[4]<=[4]}\n"
                 "  ROOT r = f32[4] slice(x), slice={[21:29:2]}, sharding={devices=[4]<=[4]}\n", 4, 0)) {
        CHECK_HALO(h, 1);
    }
    gs_ctx_destroy(h.ctx);
    if (halo(&h, "  x = f32[20] parameter(0), sharding={devices=[4]<=[4]}\n  z = f32[] constant(0)\n"
                 "  ROOT r = f32[15] reduce-window(x, z), window={size=2 pad=-2_-2}, to_apply=max, "
                 "sharding={devices=[4]<=[4]}\n", 4, 0)) {
        CHECK_HALO(h, 1);
    }
    gs_ctx_destroy(h.ctx);
}

/* 2-D windows: dims handled one after another on a 2x2 mesh */
static void test_halo_2d(void) {
    gst_case h;
    if (halo(&h, "  x = f32[12,10] parameter(0), sharding={devices=[2,2]<=[4]}\n  z = f32[] constant(-inf)\n"
                 "  ROOT r = f32[12,10] reduce-window(x, z), window={size=3x3 pad=1_1x1_1}, to_apply=max, "
                 "sharding={devices=[2,2]<=[4]}\n", 4, 0)) {
        CHECK_HALO(h, 4);
        CHECK_MSG(strstr(h.explain, "dim 0 (2 shards of 6)") && strstr(h.explain, "dim 1 (2 shards of 5)"), "%s",
                  h.explain);
    }
    gs_ctx_destroy(h.ctx);
    /* 2-D convolution with both spatial dims split, window dilation and feature groups */
    if (halo(&h, "  x = f32[1,11,9,4] parameter(0), sharding={devices=[1,2,2,1]<=[4]}\n"
                 "  k = f32[3,2,2,6] parameter(1)\n"
                 "  ROOT r = f32[1,11,9,6] convolution(x, k), window={size=3x2 pad=2_2x1_1 rhs_dilate=2x2}, "
                 "dim_labels=b01f_01io->b01f, feature_group_count=2, sharding={devices=[1,2,2,1]<=[4]}\n", 4, 1e-5)) {
        CHECK_HALO(h, 4);
    }
    gs_ctx_destroy(h.ctx);
}

/* reverse of an uneven dim: the padding stays on the right */
static void test_halo_reverse(void) {
    gst_case h;
    if (halo(&h, "  x = f32[10,3] parameter(0), sharding={devices=[4,1]<=[4]}\n"
                 "  ROOT r = f32[10,3] reverse(x), dimensions={0}, sharding={devices=[4,1]<=[4]}\n", 4, 0)) {
        CHECK_HALO(h, 1);
        CHECK_MSG(strstr(h.explain, "padding kept on the right"), "%s", h.explain);
    }
    gs_ctx_destroy(h.ctx);
}

/* GShard Fig. 5c: [3,2] -> [6], input split 2 ways (shards [2,2]), output split 2 ways (shards [3]); and the split
   direction */
static void test_halo_reshape(void) {
    gst_case h;
    if (halo(&h, "  x = f32[3,2] parameter(0), sharding={devices=[2,1]<=[2]}\n"
                 "  ROOT r = f32[6] reshape(x), sharding={devices=[2]<=[2]}\n", 2, 0)) {
        CHECK_HALO(h, 1);
        CHECK_EQ_INT(h.cp, 1);
        CHECK_MSG(strstr(h.explain, "rows realigned"), "%s", h.explain);
    }
    gs_ctx_destroy(h.ctx);
    if (halo(&h, "  x = f32[15] parameter(0), sharding={devices=[4]<=[4]}\n"
                 "  ROOT r = f32[5,3] reshape(x), sharding={devices=[4,1]<=[4]}\n", 4, 0)) {
        CHECK_HALO(h, 1);
    }
    gs_ctx_destroy(h.ctx);
    if (halo(&h, "  x = f32[5,3,2] parameter(0), sharding={devices=[4,1,1]<=[4]}\n"
                 "  ROOT r = f32[15,2] reshape(x), sharding={devices=[4,1]<=[4]}\n", 4, 0)) {
        CHECK_HALO(h, 1);
    }
    gs_ctx_destroy(h.ctx);
}

/* convolution split along its output spatial dim (kernel whole), and the filter-gradient shape: input and
   kernel split along the same spatial dim with window dilation, partial sums added */
static void test_halo_convolution(void) {
    gst_case h;
    if (halo(&h, "  x = f32[2,30,3] parameter(0), sharding={devices=[1,4,1]<=[4]}\n  k = f32[5,3,4] parameter(1)\n"
                 "  ROOT r = f32[2,30,4] convolution(x, k), window={size=5 pad=4_4 rhs_dilate=2}, "
                 "dim_labels=b0f_0io->b0f, sharding={devices=[1,4,1]<=[4]}\n", 4, 1e-5)) {
        CHECK_HALO(h, 2);
        CHECK_EQ_INT(h.ar, 0);
    }
    gs_ctx_destroy(h.ctx);
    if (halo(&h, "  x = f32[1,19,2] parameter(0), sharding={devices=[1,4,1]<=[4]}\n"
                 "  k = f32[7,2,3] parameter(1), sharding={devices=[4,1,1]<=[4]}\n"
                 "  ROOT r = f32[1,7,3] convolution(x, k), window={size=7 rhs_dilate=2}, dim_labels=b0f_0io->b0f, "
                 "sharding={replicated}\n", 4, 1e-5)) {
        CHECK_HALO(h, 1);
        CHECK_EQ_INT(h.ar, 1);
        CHECK_MSG(strstr(h.explain, "partial sums added"), "%s", h.explain);
    }
    gs_ctx_destroy(h.ctx);
    /* nothing split spatially: the dot strategies; input features split -> partial sums all-reduced */
    if (halo(&h, "  x = f32[2,9,8] parameter(0), sharding={devices=[1,1,4]<=[4]}\n"
                 "  k = f32[3,8,6] parameter(1), sharding={devices=[1,4,1]<=[4]}\n"
                 "  ROOT r = f32[2,9,6] convolution(x, k), window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f, "
                 "sharding={replicated}\n", 4, 1e-5)) {
        CHECK_MSG(h.ar == 1 && h.ag == 0 && h.cp == 0 && h.warnings == 0, "%s", h.text);
        CHECK_MSG(strstr(h.explain, "convolution as a dot") && strstr(h.explain, "contracting dim split 4-way"), "%s",
                  h.explain);
    }
    gs_ctx_destroy(h.ctx);
    /* batch and output features split too (a 2x2 mesh: batch x spatial) */
    if (halo(&h, "  x = f32[4,17,3] parameter(0), sharding={devices=[2,2,1]<=[4]}\n  k = f32[3,3,4] parameter(1)\n"
                 "  ROOT r = f32[4,9,4] convolution(x, k), window={size=3 stride=2 pad=1_1}, "
                 "dim_labels=b0f_0io->b0f, sharding={devices=[2,2,1]<=[4]}\n", 4, 1e-5)) {
        CHECK_HALO(h, 1);
    }
    gs_ctx_destroy(h.ctx);
}

/* pad (negative edge and interior padding) and concatenate along a split dim */
static void test_halo_pad_concat(void) {
    gst_case h;
    if (halo(&h, "  x = f32[20] parameter(0), sharding={devices=[4]<=[4]}\n  z = f32[] parameter(1)\n"
                 "  ROOT r = f32[40] pad(x, z), padding=-3_4_1, sharding={devices=[4]<=[4]}\n", 4, 0)) {
        CHECK_HALO(h, 1);
        CHECK_MSG(strstr(h.explain, "base dilation case"), "%s", h.explain);
    }
    gs_ctx_destroy(h.ctx);
    if (halo(&h, "  x = f32[10,3] parameter(0), sharding={devices=[4,1]<=[4]}\n"
                 "  w = f32[7,3] parameter(1), sharding={devices=[4,1]<=[4]}\n"
                 "  ROOT r = f32[17,3] concatenate(x, w), dimensions={0}, sharding={devices=[4,1]<=[4]}\n", 4, 0)) {
        CHECK_HALO(h, 1);
    }
    gs_ctx_destroy(h.ctx);
}

/* a window covering most of the dim (a cumulative sum as reduce-window): the dim is gathered, with a warning,
   and the result is still right */
static void test_halo_gather_fallback(void) {
    gst_case h;
    if (halo(&h, "  x = f32[16] parameter(0), sharding={devices=[4]<=[4]}\n  z = f32[] constant(0)\n"
                 "  ROOT r = f32[16] reduce-window(x, z), window={size=16 pad=15_0}, to_apply=add, "
                 "sharding={devices=[4]<=[4]}\n", 4, 1e-5)) {
        CHECK_MSG(h.ag >= 1 && h.warnings >= 1, "ag %d warnings %d\n%s", h.ag, h.warnings, h.text);
        CHECK(strstr(gs_partition_warning(h.spmd, 0), "all-gathered") != NULL);
    }
    gs_ctx_destroy(h.ctx);
    /* base dilation with a stride the plan does not search (above 64) and windows that do not line up */
    if (halo(&h, "  x = f32[400] parameter(0), sharding={devices=[3]<=[3]}\n  z = f32[] constant(0)\n"
                 "  ROOT r = f32[8] reduce-window(x, z), window={size=3 stride=101 lhs_dilate=2}, to_apply=add, "
                 "sharding={devices=[3]<=[3]}\n", 3, 1e-5)) {
        CHECK_MSG(h.ag >= 1 && h.warnings == 1, "ag %d warnings %d\n%s", h.ag, h.warnings, h.text);
        CHECK(strstr(gs_partition_warning(h.spmd, 0), "no halo plan") != NULL);
    }
    gs_ctx_destroy(h.ctx);
}

/* the cost model prices the halo collective-permutes: each sender injects its piece */
static void test_halo_cost(void) {
    gst_case h;
    if (halo(&h, "  x = f32[2,32,3] parameter(0), sharding={devices=[1,4,1]<=[4]}\n  k = f32[3,3,4] parameter(1)\n"
                 "  ROOT r = f32[2,32,4] convolution(x, k), window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f, "
                 "sharding={devices=[1,4,1]<=[4]}\n", 4, 1e-5)) {
        gs_topology_desc td;
        gs_topology *topo = NULL;
        gs_cost_report *rep = NULL;
        int i, n_cp = 0;
        CHECK_HALO(h, 2);
        memset(&td, 0, sizeof td);
        td.chip = gs_chip_find("v5e");
        td.mesh_rank = 1;
        td.mesh[0] = 4;
        CHECK_OK(gs_topology_create(h.ctx, &td, &topo));
        if (topo) CHECK_OK(gs_cost_program(h.spmd, topo, &rep));
        for (i = 0; rep && i < gs_cost_report_num_rows(rep); i++) {
            const gs_cost_row *r = gs_cost_report_row(rep, i);
            if (gs_value_op(r->value) != GS_OP_COLLECTIVE_PERMUTE) continue;
            n_cp++;
            /* a halo of one row: batch 2 x 1 x 3 features, f32 */
            CHECK_NEAR(r->ici_bytes, 2.0 * 1 * 3 * 4, 0.0);
            CHECK(r->t_ici > 0 && r->seconds > 0);
        }
        CHECK_EQ_INT(n_cp, 2);
    }
    gs_ctx_destroy(h.ctx);
}

void suite_spmd_halo(void) {
    RUN(test_halo_fig11);
    RUN(test_halo_base_dilation);
    RUN(test_halo_wide);
    RUN(test_halo_negative);
    RUN(test_halo_2d);
    RUN(test_halo_reverse);
    RUN(test_halo_reshape);
    RUN(test_halo_convolution);
    RUN(test_halo_pad_concat);
    RUN(test_halo_gather_fallback);
    RUN(test_halo_cost);
}
