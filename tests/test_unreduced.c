/* test_unreduced.c - unreduced shardings (XLA's OpSharding UNREDUCED, Shardy's unreduced axes: every device of an
   unreduced group holds a partial value, the value being their sum): read in all three spellings, normalised as
   XLA's HloSharding::Subgroup does (subgroup order manual, unreduced, replicated; size-1 dims dropped; one kind
   alone over unsplit data dims collapses), printed back, and refused by propagation and partitioning by name. */
#include "test.h"

/* text parses and prints as want */
static void prints_as(gs_ctx *ctx, const char *text, const char *want) {
    const gs_sharding *s = gs_sharding_parse(ctx, text);
    const char *t = s ? gs_sharding_to_text(ctx, s) : NULL;
    CHECK_MSG(t && strcmp(t, want) == 0, "%s: got %s, expected %s (%s)", text, t ? t : "(null)", want,
              t ? "" : gs_ctx_error_msg(ctx));
    gs_ctx_clear_error(ctx);
}

static void test_unreduced_forms(void) {
    gs_ctx *ctx = gst_ctx();
    const gs_sharding *s;
    gs_shape full = gs_shape_make(GS_F32, 2, (const int64_t[]){8, 6}), shard;
    int64_t off[2], lim[2], dims[8];
    gs_subgroup sub[8];
    prints_as(ctx, "{unreduced}", "{unreduced}");
    prints_as(ctx, "{devices=[1,2,2]<=[4] last_tile_dims={unreduced}}", "{devices=[1,2,2]<=[4] last_tile_dims={unreduced}}");
    /* all data dims unsplit, one kind: the whole value unreduced */
    prints_as(ctx, "{devices=[1,1,4]<=[4] last_tile_dims={unreduced}}", "{unreduced}");
    /* types sorted (unreduced before replicated), the tile array transposed with them */
    prints_as(ctx, "{devices=[2,3,2]<=[12] last_tile_dims={replicated, unreduced}}",
              "{devices=[2,2,3]<=[2,3,2]T(0,2,1) last_tile_dims={unreduced, replicated}}");
    prints_as(ctx, "{devices=[2,2,2,2]<=[16] last_tile_dims={manual, unreduced, replicated}}",
              "{devices=[2,2,2,2]<=[16] last_tile_dims={manual, unreduced, replicated}}");
    /* a size-1 manual dim dropped: data [2], unreduced 2, replicated 2 */
    prints_as(ctx, "{devices=[2,1,2,2]<=[8] last_tile_dims={manual, unreduced, replicated}}",
              "{devices=[2,2,2]<=[8] last_tile_dims={unreduced, replicated}}");
    /* a size-1 unreduced dim is nothing */
    prints_as(ctx, "{devices=[4,1]<=[4] last_tile_dims={unreduced}}", "{devices=[4]<=[4]}");
    /* named mesh: the unreduced axes after the dims' axes, then the replicated rest */
    prints_as(ctx, "{mesh['x'=2] [{},{}], unreduced={'x'}}", "{unreduced}");
    prints_as(ctx, "{mesh['x'=2,'y'=2] [{'x'},{}], unreduced={'y'}}", "{devices=[2,1,2]<=[4] last_tile_dims={unreduced}}");
    prints_as(ctx, "{mesh['x'=2,'y'=2,'z'=2] [{},{'z'}], unreduced={'x'}}",
              "{devices=[1,2,2,2]<=[4,2]T(1,0) last_tile_dims={unreduced, replicated}}");   /* z, then x, then y */
    CHECK(gs_sharding_parse(ctx, "{devices=[2,2]<=[4] last_tile_dims={reduced}}") == NULL &&
          strstr(gs_ctx_error_msg(ctx), "expected 'manual', 'unreduced' or 'replicated'"));
    gs_ctx_clear_error(ctx);
    /* queries: every device of a group holds a full-size partial tile */
    s = gs_sharding_parse(ctx, "{devices=[2,1,2]<=[4] last_tile_dims={unreduced}}");
    CHECK(s && gs_sharding_unreduced_group(s) == 2 && gs_sharding_replication(s) == 1 && gs_sharding_num_tiles(s) == 2);
    CHECK(s && gs_sharding_tile_shape(s, dims, sub) == 3 && sub[0] == GS_SUBGROUP_UNREDUCED);
    CHECK_OK(gs_sharding_shard_shape(ctx, s, full, &shard));
    CHECK(shard.dims[0] == 4 && shard.dims[1] == 6);
    CHECK(gs_sharding_device_region(s, full, 1, off, lim) && off[0] == 0 && lim[0] == 4);
    CHECK(gs_sharding_device_region(s, full, 3, off, lim) && off[0] == 4 && lim[0] == 8);
    s = gs_sharding_unreduced(ctx);
    CHECK(s && gs_sharding_get_kind(s) == GS_SHARDING_UNREDUCED && !gs_sharding_is_replicated(s));
    CHECK(gs_sharding_equal(s, gs_sharding_parse(ctx, "{unreduced}")));
    CHECK(!gs_sharding_equal(s, gs_sharding_replicated(ctx)));
    gs_ctx_destroy(ctx);
}

/* in a module: read and printed back; propagation (and so partitioning) refuses it by name */
static void test_unreduced_module(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx, "HloModule m, num_partitions=4\n\nENTRY e {\n"
                                     "  a = s32[2,4] parameter(0), sharding={devices=[1,2,2]<=[4] last_tile_dims={unreduced}}\n"
                                     "  b = s32[2,4] parameter(1), sharding={unreduced}\n"
                                     "  ROOT c = s32[2,4] add(a, b)\n}\n");
    gs_graph *spmd = NULL;
    gs_partition_desc pd;
    if (g) {
        const char *text = gst_hlo_roundtrip(g);
        CHECK(text && strstr(text, "sharding={devices=[1,2,2]<=[4] last_tile_dims={unreduced}}") &&
              strstr(text, "sharding={unreduced}"));
        CHECK(gs_propagate(g, NULL) == GS_ERR_UNSUPPORTED);
        CHECK(strstr(gs_ctx_error_msg(ctx), "a: the unreduced sharding {devices=[1,2,2]<=[4] last_tile_dims={unreduced}}") &&
              strstr(gs_ctx_error_msg(ctx), "not propagated or partitioned"));
        gs_ctx_clear_error(ctx);
        memset(&pd, 0, sizeof pd);
        pd.num_devices = 4;
        CHECK(gs_partition(g, &pd, &spmd) == GS_ERR_UNSUPPORTED && spmd == NULL);
    }
    gs_ctx_destroy(ctx);
}

/* the runtime cannot lay a global array out by an unreduced sharding (which devices' values would sum to it is
   not determined): an error naming it */
static void test_unreduced_runtime_layout(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx, "HloModule m\n\nENTRY e {\n  a = s32[4] parameter(0)\n  ROOT c = s32[4] add(a, a)\n}\n");
    gs_runtime_desc rd;
    gs_runtime *rt = NULL;
    gs_shape s4 = gs_shape_make(GS_S32, 1, (const int64_t[]){4});
    const gs_sharding *sh[1];
    int32_t in[4] = {1, 2, 3, 4}, out[4];
    const void *ins[1];
    void *outs[1];
    memset(&rd, 0, sizeof rd);
    rd.num_devices = 2;
    rd.mode = GS_RUNTIME_LOCKSTEP;
    CHECK_OK(gs_runtime_create(ctx, &rd, &rt));
    sh[0] = gs_sharding_parse(ctx, "{devices=[1,2]<=[2] last_tile_dims={unreduced}}");   /* = {unreduced} */
    CHECK(sh[0] && gs_sharding_get_kind(sh[0]) == GS_SHARDING_UNREDUCED);
    ins[0] = in;
    outs[0] = out;
    if (g && rt && sh[0]) {
        CHECK(gs_runtime_run_global(rt, g, &s4, sh, ins, &s4, NULL, outs) == GS_ERR_UNSUPPORTED);
        CHECK(strstr(gs_ctx_error_msg(ctx), "an unreduced sharding ({unreduced}) cannot lay out an array"));
    }
    gs_runtime_destroy(rt);
    gs_ctx_destroy(ctx);
}

void suite_unreduced(void) {
    RUN(test_unreduced_forms);
    RUN(test_unreduced_module);
    RUN(test_unreduced_runtime_layout);
}
