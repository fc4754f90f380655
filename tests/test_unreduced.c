/* test_unreduced.c - unreduced shardings (XLA's OpSharding UNREDUCED, Shardy's unreduced axes: every device of an
   unreduced group holds a partial value, the value being their sum): read in all three spellings, normalised as
   XLA's HloSharding::Subgroup does (subgroup order manual, unreduced, replicated; size-1 dims dropped; one kind
   alone over unsplit data dims collapses), printed back; propagation keeps them where they are written; the
   partitioner keeps partial sums that match them and sums partial values (all-reduce, reduce-scatter) where
   whole values are needed, checked against the reference interpreter and against hand-summed device inputs. */
#include "test.h"
#include "spmd_case.h"

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
    /* open dims ({?}, {'x', ?}) are read; the sharding is the one written, the openness is the value's */
    prints_as(ctx, "{mesh['x'=2,'y'=2] [{?},{'x'}], unreduced={'y'}}", "{devices=[1,2,2]<=[4] last_tile_dims={unreduced}}");
    prints_as(ctx, "{mesh['x'=2,'y'=2] [{'y', ?},{}]}", "{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}");
    CHECK(gs_sharding_parse(ctx, "{mesh['x'=2] [{?, 'x'},{}]}") == NULL &&
          strstr(gs_ctx_error_msg(ctx), "expected '}' after '?'"));
    gs_ctx_clear_error(ctx);
    CHECK(gs_sharding_parse(ctx, "{mesh['x'=2] [{},{}], unreduced={?}}") == NULL &&
          strstr(gs_ctx_error_msg(ctx), "expected a quoted mesh axis name"));
    gs_ctx_clear_error(ctx);
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

/* in a module: read and printed back; propagation keeps the unreduced annotations and gives the add the summed
   value's sharding (its operand's tiling, replicated along the unreduced devices), never an unreduced one; the
   open dim of a named mesh is the value's */
static void test_unreduced_module(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx, "HloModule m, num_partitions=4\n\nENTRY e {\n"
                                     "  a = s32[2,4] parameter(0), sharding={devices=[1,2,2]<=[4] last_tile_dims={unreduced}}\n"
                                     "  b = s32[2,4] parameter(1), sharding={unreduced}\n"
                                     "  q = s32[2,4] parameter(2), sharding={mesh['x'=2,'y'=2] [{?},{'x'}], unreduced={'y'}}\n"
                                     "  c = s32[2,4] add(a, b)\n"
                                     "  ROOT d = s32[2,4] add(c, q)\n}\n");
    gs_graph *spmd = NULL;
    gs_partition_desc pd;
    if (g) {
        const char *text = gst_hlo_roundtrip(g);
        gs_value *a = gst_case_named(g, "a"), *b = gst_case_named(g, "b"), *c = gst_case_named(g, "c"),
                 *q = gst_case_named(g, "q");
        CHECK(text && strstr(text, "sharding={devices=[1,2,2]<=[4] last_tile_dims={unreduced}}") &&
              strstr(text, "sharding={unreduced}"));
        CHECK(gs_value_open_dims(q) == 1u && gs_value_open_dims(a) == 0u);
        CHECK_OK(gs_propagate(g, NULL));
        CHECK(gs_sharding_equal(gs_value_sharding(a), gs_sharding_parse(ctx, "{devices=[1,2,2]<=[4] last_tile_dims={unreduced}}")));
        CHECK(gs_sharding_get_kind(gs_value_sharding(b)) == GS_SHARDING_UNREDUCED);
        CHECK_MSG(gs_sharding_equal(gs_value_sharding(c), gs_sharding_parse(ctx, "{devices=[1,2,2]<=[4] last_tile_dim_replicate}")),
                  "c: %s", gs_sharding_to_text(ctx, gs_value_sharding(c)));
        memset(&pd, 0, sizeof pd);
        pd.num_devices = 4;
        CHECK_OK(gs_partition(g, &pd, &spmd));
    }
    gs_ctx_destroy(ctx);
}

/* the runtime lays an unreduced array out as the value on the first device of each unreduced group and zero on
   the others, and gathers one by summing each group's devices */
static void test_unreduced_runtime_layout(void) {
    gs_ctx *ctx = gst_ctx();
    gs_runtime_desc rd;
    gs_runtime *rt = NULL;
    gs_shape s4 = gs_shape_make(GS_S32, 1, (const int64_t[]){4});
    const gs_sharding *u = gs_sharding_parse(ctx, "{devices=[2,2]<=[4] last_tile_dims={unreduced}}");
    int32_t in[4] = {1, 2, 3, 4}, sh[4][2], got[4];
    void *shards[4];
    const void *cshards[4];
    int d;
    memset(&rd, 0, sizeof rd);
    rd.num_devices = 4;
    rd.mode = GS_RUNTIME_LOCKSTEP;
    CHECK_OK(gs_runtime_create(ctx, &rd, &rt));
    for (d = 0; d < 4; d++) {
        shards[d] = sh[d];
        cshards[d] = sh[d];
    }
    if (rt && u) {
        /* devices 0, 1 hold summands of elements 0..1, devices 2, 3 of elements 2..3 */
        CHECK_OK(gs_runtime_scatter(rt, u, s4, in, shards));
        CHECK(sh[0][0] == 1 && sh[0][1] == 2 && sh[1][0] == 0 && sh[1][1] == 0);
        CHECK(sh[2][0] == 3 && sh[2][1] == 4 && sh[3][0] == 0 && sh[3][1] == 0);
        sh[1][0] = 10;
        sh[1][1] = -20;
        sh[3][0] = 300;
        CHECK_OK(gs_runtime_gather(rt, u, s4, cshards, got));
        CHECK(got[0] == 11 && got[1] == -18 && got[2] == 303 && got[3] == 4);
    }
    gs_runtime_destroy(rt);
    gs_ctx_destroy(ctx);
}

/* The SPMD program run on summands the devices choose (not the layout's value-and-zeros): the partitioner must sum
   them. p{unreduced} on 2 devices, r = p * p replicated: device 0 holds [1,2,3,4], device 1 [10,20,30,40]; every
   device's r is (11, 22, 33, 44) squared. */
static void test_unreduced_summands(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx, "HloModule m\n\nENTRY e {\n  p = s32[4] parameter(0), sharding={unreduced}\n"
                                     "  ROOT r = s32[4] multiply(p, p), sharding={replicated}\n}\n");
    gs_graph *spmd = NULL;
    gs_partition_desc pd;
    gs_runtime_desc rd;
    gs_runtime *rt = NULL;
    int32_t in0[4] = {1, 2, 3, 4}, in1[4] = {10, 20, 30, 40}, out0[4], out1[4];
    const void *ins[2] = {in0, in1};
    void *outs[2] = {out0, out1};
    memset(&pd, 0, sizeof pd);
    pd.num_devices = 2;
    memset(&rd, 0, sizeof rd);
    rd.num_devices = 2;
    rd.mode = GS_RUNTIME_LOCKSTEP;
    if (g && gs_partition(g, &pd, &spmd) == GS_OK && gs_runtime_create(ctx, &rd, &rt) == GS_OK) {
        CHECK_OK(gs_runtime_run(rt, spmd, ins, outs));
        CHECK(out0[0] == 121 && out0[1] == 484 && out0[2] == 1089 && out0[3] == 1936);
        CHECK(memcmp(out0, out1, sizeof out0) == 0);
    } else {
        CHECK_MSG(0, "%s", gs_ctx_error_msg(ctx));
    }
    gs_runtime_destroy(rt);
    gs_ctx_destroy(ctx);
}

static const char *ur_red = "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
                            "max {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] maximum(a, b)\n}\n";

/* partitioned vs the reference (lockstep devices, padding poisoned with NaN), collectives counted */
static bool ur_case(gst_case *h, const char *body, int64_t D) { return gst_case_run(h, ur_red, body, D, 1e-5, 31); }

/* a dot whose sharding is unreduced over the devices splitting its contracted dim keeps its partial sums: no
   collective; its user needing the whole value sums them (one all-reduce); uneven dims (5 rows, 7 contracted) */
static void test_unreduced_dot(void) {
    gst_case h;
    if (ur_case(&h, "  a = f32[5,7] parameter(0), sharding={devices=[1,2]0,1}\n"
                    "  b = f32[7,3] parameter(1), sharding={devices=[2,1]0,1}\n"
                    "  ROOT r = f32[5,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={unreduced}\n", 2))
        CHECK_MSG(h.ar == 0 && h.rs == 0 && h.ag == 0, "ar %d rs %d ag %d\n%s", h.ar, h.rs, h.ag, h.text);
    gs_ctx_destroy(h.ctx);
    if (ur_case(&h, "  a = f32[5,7] parameter(0), sharding={devices=[1,2]0,1}\n"
                    "  b = f32[7,3] parameter(1), sharding={devices=[2,1]0,1}\n"
                    "  d = f32[5,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={unreduced}\n"
                    "  n = f32[5,3] negate(d), sharding={unreduced}\n"
                    "  ROOT r = f32[5,3] exponential(n), sharding={replicated}\n", 2))
        CHECK_MSG(h.ar == 1 && h.ag == 0, "ar %d ag %d\n%s", h.ar, h.ag, h.text);
    gs_ctx_destroy(h.ctx);
}

/* a subgroup unreduced with tiled dims on 4 devices (mesh x=2, y=2): a[M,K]{M by x, K by y}, b[K,N]{K by y},
   out{M by x, unreduced over y}; M = 5 and K = 9 uneven. The partial sums stay; a subtract of two of them too. */
static void test_unreduced_subgroup_dot(void) {
    gst_case h;
    if (ur_case(&h, "  a = f32[5,9] parameter(0), sharding={devices=[2,2]<=[4]}\n"
                    "  b = f32[9,6] parameter(1), sharding={devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}\n"
                    "  c = f32[5,9] parameter(2), sharding={devices=[2,2]<=[4]}\n"
                    "  d = f32[5,6] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
                    "sharding={devices=[2,1,2]<=[4] last_tile_dims={unreduced}}\n"
                    "  e = f32[5,6] dot(c, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
                    "sharding={devices=[2,1,2]<=[4] last_tile_dims={unreduced}}\n"
                    "  ROOT r = f32[5,6] subtract(d, e), sharding={devices=[2,1,2]<=[4] last_tile_dims={unreduced}}\n", 4))
        CHECK_MSG(h.ar == 0 && h.rs == 0 && h.ag == 0 && h.a2a == 0 && h.cp == 0, "ar %d rs %d ag %d\n%s", h.ar, h.rs,
                  h.ag, h.text);
    gs_ctx_destroy(h.ctx);
    /* unreduced and replicated subgroups (8 devices: M by 2, unreduced 2, replicated 2) */
    if (ur_case(&h, "  a = f32[6,8] parameter(0), sharding={devices=[2,2,2]<=[8] last_tile_dim_replicate}\n"
                    "  b = f32[8,4] parameter(1), sharding={devices=[2,1,4]<=[2,2,2]T(1,0,2) last_tile_dim_replicate}\n"
                    "  ROOT r = f32[6,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
                    "sharding={devices=[2,1,2,2]<=[8] last_tile_dims={unreduced, replicated}}\n", 8))
        CHECK_MSG(h.ar == 0 && h.ag == 0, "ar %d ag %d\n%s", h.ar, h.ag, h.text);
    gs_ctx_destroy(h.ctx);
}

/* reshards from unreduced: to a split over exactly the unreduced devices a reduce-scatter; to replicated an
   all-reduce; an uneven split still sums right */
static void test_unreduced_reshard(void) {
    gst_case h;
    if (ur_case(&h, "  p = f32[6,4] parameter(0), sharding={unreduced}\n"
                    "  ROOT r = f32[6,4] copy(p), sharding={devices=[2,1]0,1}\n", 2))
        CHECK_MSG(h.rs == 1 && h.ar == 0, "rs %d ar %d\n%s", h.rs, h.ar, h.text);
    gs_ctx_destroy(h.ctx);
    if (ur_case(&h, "  p = f32[5,3] parameter(0), sharding={devices=[1,1,4]<=[4] last_tile_dims={unreduced}}\n"
                    "  ROOT r = f32[5,3] copy(p), sharding={devices=[4,1]<=[4]}\n", 4))
        CHECK_MSG(h.rs + h.ar == 1, "rs %d ar %d\n%s", h.rs, h.ar, h.text);
    gs_ctx_destroy(h.ctx);
    if (ur_case(&h, "  p = f32[5,3] parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dims={unreduced}}\n"
                    "  ROOT r = f32[5,3] copy(p), sharding={replicated}\n", 4))
        CHECK_MSG(h.ar == 1, "ar %d\n%s", h.ar, h.text);
    gs_ctx_destroy(h.ctx);
    /* a tuple of unreduced values, each summed where a copy wants it whole */
    if (ur_case(&h, "  a0 = f32[8] parameter(0), sharding={mesh['x'=2] [{}], unreduced={'x'}}\n"
                    "  a1 = f32[8] parameter(1), sharding={unreduced}\n"
                    "  a = (f32[8], f32[8]) tuple(a0, a1), sharding={{mesh['x'=2] [{}], unreduced={'x'}}, {unreduced}}\n"
                    "  g0 = f32[8] get-tuple-element(a), index=0\n"
                    "  g1 = f32[8] get-tuple-element(a), index=1\n"
                    "  c0 = f32[8] copy(g0), sharding={mesh['x'=2] []}\n"
                    "  c1 = f32[8] copy(g1), sharding={mesh['x'=2] []}\n"
                    "  ROOT r = (f32[8], f32[8]) tuple(c0, c1)\n", 2))
        CHECK_MSG(h.ar == 2, "ar %d\n%s", h.ar, h.text);
    gs_ctx_destroy(h.ctx);
}

/* to unreduced from whole values: the value on the first device of each group, zero on the others; an op that is
   not linear in partial values (multiply, max-reduce) is computed on summed operands first */
static void test_unreduced_to(void) {
    gst_case h;
    if (ur_case(&h, "  p = f32[5,3] parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}\n"
                    "  ROOT r = f32[5,3] copy(p), sharding={devices=[2,1,2]<=[2,2]T(1,0) last_tile_dims={unreduced}}\n", 4))
        CHECK_MSG(h.ar == 0 && h.rs == 0, "ar %d rs %d\n%s", h.ar, h.rs, h.text);
    gs_ctx_destroy(h.ctx);
    if (ur_case(&h, "  a = f32[4,6] parameter(0), sharding={unreduced}\n"
                    "  b = f32[4,6] parameter(1), sharding={unreduced}\n"
                    "  ROOT r = f32[4,6] multiply(a, b), sharding={unreduced}\n", 2))
        CHECK_MSG(h.ar == 2, "ar %d\n%s", h.ar, h.text);
    gs_ctx_destroy(h.ctx);
    if (ur_case(&h, "  x = f32[8,7] parameter(0), sharding={devices=[1,2]0,1}\n"
                    "  z = f32[] constant(0)\n"
                    "  m = f32[] constant(-inf)\n"
                    "  s = f32[8] reduce(x, z), dimensions={1}, to_apply=add, sharding={unreduced}\n"
                    "  t = f32[8] reduce(x, m), dimensions={1}, to_apply=max, sharding={unreduced}\n"
                    "  ROOT r = (f32[8], f32[8]) tuple(s, t), sharding={{unreduced}, {unreduced}}\n", 2))
        CHECK_MSG(h.ar == 1, "ar %d (the max-reduce's only)\n%s", h.ar, h.text);
    gs_ctx_destroy(h.ctx);
}

/* a convolution whose input features are split keeps its partial sums as its unreduced sharding asks; a while
   loop carrying an unreduced parameter sums it where the loop needs the whole value */
static void test_unreduced_conv_while(void) {
    gst_case h;
    if (ur_case(&h, "  x = f32[2,9,8] parameter(0), sharding={devices=[1,1,2]0,1}\n"
                    "  k = f32[3,8,5] parameter(1), sharding={devices=[1,2,1]0,1}\n"
                    "  ROOT r = f32[2,7,5] convolution(x, k), window={size=3}, dim_labels=b0f_0io->b0f, sharding={unreduced}\n", 2))
        CHECK_MSG(h.ar == 0 && h.rs == 0 && h.ag == 0, "ar %d rs %d ag %d\n%s", h.ar, h.rs, h.ag, h.text);
    gs_ctx_destroy(h.ctx);
    if (gst_case_run(&h, "cond {\n  s = (s32[], f32[4,6]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
                         "  n = s32[] constant(3)\n  ROOT lt = pred[] compare(i, n), direction=LT\n}\n"
                         "body {\n  s = (s32[], f32[4,6]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
                         "  x = f32[4,6] get-tuple-element(s), index=1\n  one = s32[] constant(1)\n  j = s32[] add(i, one)\n"
                         "  y = f32[4,6] add(x, x)\n  ROOT t = (s32[], f32[4,6]) tuple(j, y)\n}\n",
                     "  p = f32[4,6] parameter(0), sharding={unreduced}\n  z = s32[] constant(0)\n"
                     "  t = (s32[], f32[4,6]) tuple(z, p)\n  w = (s32[], f32[4,6]) while(t), condition=cond, body=body\n"
                     "  ROOT r = f32[4,6] get-tuple-element(w), index=1\n", 2, 1e-5, 5))
        CHECK_MSG(h.ar >= 1, "ar %d\n%s", h.ar, h.text);
    gs_ctx_destroy(h.ctx);
}

void suite_unreduced(void) {
    RUN(test_unreduced_forms);
    RUN(test_unreduced_module);
    RUN(test_unreduced_runtime_layout);
    RUN(test_unreduced_summands);
    RUN(test_unreduced_dot);
    RUN(test_unreduced_subgroup_dot);
    RUN(test_unreduced_reshard);
    RUN(test_unreduced_to);
    RUN(test_unreduced_conv_while);
}
