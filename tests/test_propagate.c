/* test_propagate.c - sharding propagation: every op rule in both directions (expected shardings worked out by
   hand from XLA's documented rules, several taken from XLA's own tests), levels, partial-replication merges,
   open dims, conflicts, the dot tie-breaks, loops, manual regions, fixpoint and idempotence, the MoE layer. */
#include "test.h"

static gs_ctx *pctx;
static gs_graph *pg;

/* Parses text, propagates on its num_partitions devices; false (with a message) on failure. */
static bool prop(const char *text) {
    gs_graph *g = NULL;
    if (pctx) gs_ctx_destroy(pctx);
    pctx = gst_ctx();
    pg = NULL;
    if (gs_hlo_parse(pctx, text, strlen(text), &g) != GS_OK) {
        fprintf(stderr, "  parse failed: %s\n", gs_ctx_error_msg(pctx));
        return false;
    }
    if (gs_propagate(g, NULL) != GS_OK) {
        fprintf(stderr, "  propagate failed: %s\n", gs_ctx_error_msg(pctx));
        return false;
    }
    pg = g;
    return true;
}

/* the sharding of a named entry value equals the expected text (compared as shardings) */
static bool has(const char *name, const char *want) {
    gs_value *v = pg ? gs_graph_find(pg, name) : NULL;
    const gs_sharding *w;
    const char *got;
    if (!v) {
        fprintf(stderr, "  no value %s\n", name);
        return false;
    }
    got = gs_value_sharding_text(v);
    w = gs_sharding_parse(pctx, want);
    if (!w || !gs_sharding_equal(gs_value_sharding(v), w)) {
        fprintf(stderr, "  %s: got %s, expected %s\n", name, got ? got : "(none)", want);
        return false;
    }
    return true;
}

static gs_origin_kind origin_of(const char *name) {
    return gs_value_sharding_origin(gs_graph_find(pg, name)).kind;
}

#define HDR "HloModule m, num_partitions=4\n\nadd.f32 {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n" \
            "  ROOT r = f32[] add(x, y)\n}\n\n"

static void test_elementwise_both_ways(void) {
    CHECK(prop(HDR "ENTRY e {\n"
                   "  a = f32[8,6] parameter(0), sharding={devices=[4,1]<=[4]}\n"
                   "  b = f32[8,6] parameter(1)\n"
                   "  c = f32[8,6] add(a, b)\n"
                   "  d = f32[8,6] exponential(c)\n"
                   "  p = pred[8,6] compare(d, b), direction=LT\n"
                   "  ROOT s = f32[8,6] select(p, d, b)\n}\n"));
    CHECK(has("c", "{devices=[4,1]<=[4]}") && origin_of("c") == GS_ORIGIN_FORWARD);
    CHECK(has("d", "{devices=[4,1]<=[4]}") && has("p", "{devices=[4,1]<=[4]}") && has("s", "{devices=[4,1]<=[4]}"));
    /* b receives the sharding backward from its user c */
    CHECK(has("b", "{devices=[4,1]<=[4]}") && origin_of("b") == GS_ORIGIN_BACKWARD);
    CHECK(has("a", "{devices=[4,1]<=[4]}") && origin_of("a") == GS_ORIGIN_USER);
    /* backward through a chain to the parameter */
    CHECK(prop(HDR "ENTRY e {\n"
                   "  a = f32[8,6] parameter(0)\n"
                   "  x = f32[8,6] tanh(a)\n"
                   "  y = f32[8,6] convert(x)\n"
                   "  ROOT z = f32[8,6] custom-call(y), custom_call_target=\"Sharding\", sharding={devices=[1,4]3,2,1,0}\n}\n"));
    CHECK(has("a", "{devices=[1,4]3,2,1,0}") && has("x", "{devices=[1,4]3,2,1,0}"));
    {
        gs_origin o = gs_value_sharding_origin(gs_graph_find(pg, "a"));
        /* a parameter is not a pass-through op: it takes shardings from level 1 on (as in XLA) */
        CHECK(o.kind == GS_ORIGIN_BACKWARD && o.level == 1 && o.from == gs_graph_find(pg, "x") &&
              o.source == gs_graph_find(pg, "z") && strcmp(o.rule, "tanh") == 0);
    }
}

static void test_broadcast_levels(void) {
    /* forward into a broadcast only at level 3; backward at level 2, new dims replicated */
    CHECK(prop(HDR "ENTRY e {\n"
                   "  p = f32[8] parameter(0), sharding={devices=[4]<=[4]}\n"
                   "  ROOT b = f32[8,6] broadcast(p), dimensions={0}\n}\n"));
    CHECK(has("b", "{devices=[4,1]<=[4]}"));
    CHECK(gs_value_sharding_origin(gs_graph_find(pg, "b")).level == 3);
    CHECK(prop(HDR "ENTRY e {\n"
                   "  p = f32[6] parameter(0)\n"
                   "  b = f32[8,6] broadcast(p), dimensions={1}\n"
                   "  ROOT y = f32[8,6] custom-call(b), custom_call_target=\"Sharding\", sharding={devices=[2,2]<=[4]}\n}\n"));
    /* tile (i,j) = 2i+j; replicating dim 0 leaves groups {0,2} and {1,3} */
    CHECK(has("p", "{devices=[2,2]0,2,1,3 last_tile_dim_replicate}"));
    CHECK(gs_value_sharding_origin(gs_graph_find(pg, "p")).level == 2);
    /* a broadcast's operand prefers a pass-through source over the broadcast (levels) */
    CHECK(prop(HDR "ENTRY e {\n"
                   "  p = f32[8] parameter(0)\n"
                   "  q = f32[8] negate(p)\n"
                   "  r = f32[8] custom-call(q), custom_call_target=\"Sharding\", sharding={devices=[4]3,2,1,0}\n"
                   "  b = f32[8,6] broadcast(p), dimensions={0}\n"
                   "  ROOT y = f32[8,6] custom-call(b), custom_call_target=\"Sharding\", sharding={devices=[4,1]<=[4]}\n}\n"));
    CHECK(has("p", "{devices=[4]3,2,1,0}"));
}

static void test_reduce_transpose(void) {
    CHECK(prop(HDR "ENTRY e {\n"
                   "  x = f32[8,6] parameter(0), sharding={devices=[2,2]<=[4]}\n"
                   "  z = f32[] constant(0)\n"
                   "  r = f32[8] reduce(x, z), dimensions={1}, to_apply=add.f32\n"
                   "  t = f32[6,8] transpose(x), dimensions={1,0}\n"
                   "  am = s32[6] argmax(x), dimensions={0}\n"
                   "  ROOT o = (f32[8], f32[6,8], s32[6]) tuple(r, t, am)\n}\n"));
    CHECK(has("r", "{devices=[2,2]<=[4] last_tile_dim_replicate}"));
    CHECK(has("t", "{devices=[2,2]<=[2,2]T(1,0)}"));
    CHECK(has("am", "{devices=[2,2]<=[2,2]T(1,0) last_tile_dim_replicate}"));
    CHECK(has("o", "{{devices=[2,2]<=[4] last_tile_dim_replicate}, {devices=[2,2]<=[2,2]T(1,0)}, "
                   "{devices=[2,2]<=[2,2]T(1,0) last_tile_dim_replicate}}"));
    /* backward: the reduced dim gets one tile; transpose inverts its permutation */
    CHECK(prop(HDR "ENTRY e {\n"
                   "  x = f32[8,6] parameter(0)\n"
                   "  y = f32[6,8] parameter(1)\n"
                   "  z = f32[] constant(0)\n"
                   "  r = f32[8] reduce(x, z), dimensions={1}, to_apply=add.f32\n"
                   "  ra = f32[8] custom-call(r), custom_call_target=\"Sharding\", sharding={devices=[4]<=[4]}\n"
                   "  t = f32[8,6] transpose(y), dimensions={1,0}\n"
                   "  ROOT ta = f32[8,6] custom-call(t), custom_call_target=\"Sharding\", sharding={devices=[2,2]<=[4]}\n}\n"));
    CHECK(has("x", "{devices=[4,1]<=[4]}") && has("y", "{devices=[2,2]<=[2,2]T(1,0)}"));
}

/* XLA's ReshapeForwardPassTranspose table (f32[6,4,5] {devices=[6,2,1]<=[12]}) and two more of its cases */
static void test_reshape_rules(void) {
    static const struct { const char *src, *src_sh, *dst, *want; } cases[] = {
        {"f32[6,4,5]", "{devices=[6,2,1]<=[12]}", "f32[2,3,20]", "{devices=[2,3,2]<=[12]}"},
        {"f32[6,4,5]", "{devices=[6,2,1]<=[12]}", "f32[2,4,3,5]", "{devices=[2,1,1,1,6]<=[12] last_tile_dim_replicate}"},
        {"f32[6,4,5]", "{devices=[6,2,1]<=[12]}", "f32[20,6]", "{devices=[2,1,6]<=[12] last_tile_dim_replicate}"},
        {"f32[6,4,5]", "{devices=[6,2,1]<=[12]}", "f32[3,5,8]", "{devices=[3,1,1,4]<=[12] last_tile_dim_replicate}"},
        {"f32[6,4,5]", "{devices=[6,2,1]<=[12]}", "f32[10,4,3]", "{devices=[2,1,1,6]<=[12] last_tile_dim_replicate}"},
        {"f32[6,4,5]", "{devices=[6,2,1]<=[12]}", "f32[5,8,3]", "{replicated}"},
        {"f32[1430,1]", "{devices=[2,1]0,1}", "f32[10,11,13]", "{devices=[2,1,1]0,1}"},
        {"f32[14,32]", "{devices=[4,4]<=[16]}", "f32[7,2,2,16]",
         "{devices=[1,1,2,2,4]0,4,8,12,1,5,9,13,2,6,10,14,3,7,11,15 last_tile_dim_replicate}"},
        /* merge of dims when only the major one is split; a size-1 dim appears */
        {"f32[8,6]", "{devices=[4,1]<=[4]}", "f32[48,1]", "{devices=[4,1]<=[4]}"},
        /* a split minor dim cannot survive a merge */
        {"f32[8,6]", "{devices=[1,4]<=[4]}", "f32[48]", "{replicated}"},
        /* partial matches keep gcd(tiles, target dim) tiles: 12 = 2 x 6 rows of 8 are 4 rows of 12 each */
        {"f32[12,8]", "{devices=[2,4]<=[8]}", "f32[8,12]", "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"},
        {"f32[12,8]", "{devices=[4,1]<=[4]}", "f32[8,12]", "{devices=[4,1]<=[4]}"},
        {"f32[12,8]", "{devices=[3,1]<=[3]}", "f32[8,12]", "{replicated}"},
        /* a run that loses its split does not take the next run's split with it */
        {"f32[6,4,8]", "{devices=[2,1,2]<=[4]}", "f32[4,6,8]", "{devices=[2,1,2]<=[4]}"},
        {"f32[6,4,8]", "{devices=[3,1,2]<=[6]}", "f32[4,6,8]", "{devices=[1,1,2,3]<=[3,2]T(1,0) last_tile_dim_replicate}"},
        /* a split size-1 dim lines up with a size-1 target dim; 8 split 4 -> 2 x 4 */
        {"f32[1,8]", "{devices=[2,4]<=[8]}", "f32[1,2,4]", "{devices=[2,2,2]<=[8]}"},
        /* a split dim that does not divide evenly keeps nothing in a changed run */
        {"f32[6,4]", "{devices=[4,1]<=[4]}", "f32[4,6]", "{replicated}"},
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024];
        int n = 0;
        int64_t dims = 1;
        /* device count: the product of the tile dims */
        {
            const char *q = strchr(cases[i].src_sh, '[');
            dims = 1;
            while (q && *q && *q != ']') {
                q++;
                dims *= strtol(q, (char **)&q, 10);
            }
        }
        n = snprintf(text, sizeof text,
                     "HloModule m, num_partitions=%lld\nENTRY e {\n  x = %s parameter(0), sharding=%s\n"
                     "  ROOT y = %s reshape(x)\n}\n",
                     (long long)dims, cases[i].src, cases[i].src_sh, cases[i].dst);
        CHECK(n > 0 && n < (int)sizeof text);
        CHECK_MSG(prop(text) && has("y", cases[i].want), "reshape %s -> %s", cases[i].src, cases[i].dst);
    }
    /* backward through a reshape (the same rule, shapes swapped) */
    CHECK(prop("HloModule m, num_partitions=12\nENTRY e {\n  x = f32[2,3,20] parameter(0)\n"
               "  y = f32[6,4,5] reshape(x)\n"
               "  ROOT z = f32[6,4,5] custom-call(y), custom_call_target=\"Sharding\", sharding={devices=[6,2,1]<=[12]}\n}\n"));
    CHECK(has("x", "{devices=[2,3,2]<=[12]}"));
}

/* XLA's AllReduce rule: an all-reduce passes its operand's sharding on, forward and backward */
static void test_all_reduce_pass_through(void) {
    CHECK(prop(HDR "ENTRY e {\n"
                   "  a = f32[8,6] parameter(0), sharding={devices=[4,1]<=[4]}\n"
                   "  r = f32[8,6] all-reduce(a), replica_groups={}, to_apply=add.f32\n"
                   "  q = f32[8,6] all-reduce(a), channel_id=1, replica_groups={{0,1,2,3}}, use_global_device_ids=true, "
                   "to_apply=add.f32\n"
                   "  ROOT t = (f32[8,6], f32[8,6]) tuple(r, q)\n}\n"));
    CHECK(has("r", "{devices=[4,1]<=[4]}") && has("q", "{devices=[4,1]<=[4]}"));
    CHECK(prop(HDR "ENTRY e {\n"
                   "  a = f32[8,6] parameter(0)\n"
                   "  r = f32[8,6] all-reduce(a), replica_groups={}, to_apply=add.f32\n"
                   "  ROOT c = f32[8,6] custom-call(r), custom_call_target=\"Sharding\", sharding={devices=[1,2,2]<=[4] "
                   "last_tile_dim_replicate}\n}\n"));
    CHECK(has("a", "{devices=[1,2,2]<=[4] last_tile_dim_replicate}") &&
          has("r", "{devices=[1,2,2]<=[4] last_tile_dim_replicate}"));
}

static void test_dot_rules(void) {
    /* XLA test Dot: the larger operand (rhs, 2 MB) wins */
    CHECK(prop("HloModule m, num_partitions=4\nENTRY e {\n"
               "  l = f32[8,256,128] parameter(0), sharding={devices=[1,4,1]0,1,2,3}\n"
               "  r = f32[8,128,512] parameter(1), sharding={devices=[1,1,4]0,1,2,3}\n"
               "  ROOT d = f32[8,256,512] dot(l, r), lhs_batch_dims={0}, rhs_batch_dims={0}, "
               "lhs_contracting_dims={2}, rhs_contracting_dims={1}\n}\n"));
    CHECK(has("d", "{devices=[1,1,4]0,1,2,3}"));
    /* a candidate split on a batch dim beats a larger operand's */
    CHECK(prop("HloModule m, num_partitions=2\nENTRY e {\n"
               "  l = f32[4,64,16] parameter(0), sharding={devices=[1,2,1]0,1}\n"
               "  r = f32[4,16,8] parameter(1), sharding={devices=[2,1,1]0,1}\n"
               "  ROOT d = f32[4,64,8] dot(l, r), lhs_batch_dims={0}, rhs_batch_dims={0}, "
               "lhs_contracting_dims={2}, rhs_contracting_dims={1}\n}\n"));
    CHECK(has("d", "{devices=[2,1,1]0,1}"));
    /* partially replicated operands merge into a 2-D tiled output; backward gives each operand its part */
    CHECK(prop("HloModule m, num_partitions=4\nENTRY e {\n"
               "  l = f32[8,16] parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}\n"
               "  r = f32[16,12] parameter(1), sharding={devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}\n"
               "  ROOT d = f32[8,12] dot(l, r), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n"));
    CHECK(has("d", "{devices=[2,2]<=[4]}"));
    CHECK(prop("HloModule m, num_partitions=4\nENTRY e {\n"
               "  l = f32[8,16] parameter(0)\n"
               "  r = f32[16,12] parameter(1)\n"
               "  d = f32[8,12] dot(l, r), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
               "  ROOT a = f32[8,12] custom-call(d), custom_call_target=\"Sharding\", sharding={devices=[2,2]<=[4]}\n}\n"));
    CHECK(has("l", "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"));
    CHECK(has("r", "{devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}"));
    /* contracting dims split on an operand: replicated in the output (the partitioner all-reduces) */
    CHECK(prop("HloModule m, num_partitions=4\nENTRY e {\n"
               "  l = f32[8,16] parameter(0), sharding={devices=[1,4]<=[4]}\n"
               "  r = f32[16,12] parameter(1)\n"
               "  ROOT d = f32[8,12] dot(l, r), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n"));
    CHECK(has("d", "{replicated}") && has("r", "{devices=[4,1]<=[4]}"));
    /* lookahead: the user chain's sharding picks the smaller operand's candidate */
    CHECK(prop("HloModule m, num_partitions=4\nENTRY e {\n"
               "  l = f32[8,16] parameter(0), sharding={devices=[4,1]<=[4]}\n"
               "  r = f32[16,64] parameter(1), sharding={devices=[1,4]<=[4]}\n"
               "  d = f32[8,64] dot(l, r), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
               "  t = f32[8,64] tanh(d)\n"
               "  ROOT a = f32[8,64] custom-call(t), custom_call_target=\"Sharding\", sharding={devices=[4,1]<=[4]}\n}\n"));
    CHECK(has("d", "{devices=[4,1]<=[4]}"));
}

static void test_convolution_rules(void) {
    /* batch split passes through; the output feature follows the kernel; a small kernel passes spatial dims */
    CHECK(prop("HloModule m, num_partitions=4\nENTRY e {\n"
               "  x = f32[8,16,16,3] parameter(0), sharding={devices=[2,2,1,1]<=[4]}\n"
               "  k = f32[3,3,3,8] parameter(1)\n"
               "  ROOT y = f32[8,14,14,8] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f\n}\n"));
    CHECK(has("y", "{devices=[2,2,1,1]<=[4]}"));
    CHECK(prop("HloModule m, num_partitions=4\nENTRY e {\n"
               "  x = f32[8,16,16,3] parameter(0)\n"
               "  k = f32[3,3,3,8] parameter(1), sharding={devices=[1,1,1,4]<=[4]}\n"
               "  ROOT y = f32[8,14,14,8] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f\n}\n"));
    CHECK(has("y", "{devices=[1,1,1,4]<=[4]}"));
    /* backward: the input gets the batch split, the kernel the output-feature split */
    CHECK(prop("HloModule m, num_partitions=4\nENTRY e {\n"
               "  x = f32[8,16,16,3] parameter(0)\n"
               "  k = f32[3,3,3,8] parameter(1)\n"
               "  y = f32[8,14,14,8] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f\n"
               "  ROOT a = f32[8,14,14,8] custom-call(y), custom_call_target=\"Sharding\", sharding={devices=[2,1,1,2]<=[4]}\n}\n"));
    CHECK(has("x", "{devices=[2,1,1,1,2]<=[4] last_tile_dim_replicate}"));
    CHECK(has("k", "{devices=[1,1,1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}"));
}

static void test_data_movement_rules(void) {
    CHECK(prop(HDR "ENTRY e {\n"
                   "  x = f32[8,6] parameter(0), sharding={devices=[4,1]<=[4]}\n"
                   "  c = f32[] constant(0)\n"
                   "  sl = f32[4,6] slice(x), slice={[0:4], [0:6]}\n"
                   "  pd = f32[10,6] pad(x, c), padding=1_1x0_0\n"
                   "  rv = f32[8,6] reverse(x), dimensions={0}\n"
                   "  i = s32[] constant(1)\n"
                   "  ds = f32[8,3] dynamic-slice(x, i, i), dynamic_slice_sizes={8,3}\n"
                   "  ds0 = f32[2,6] dynamic-slice(x, i, i), dynamic_slice_sizes={2,6}\n"
                   "  cs = f32[8,6] cumsum(x), dimensions={0}\n"
                   "  rw = f32[8,6] reduce-window(x, c), window={size=1x3 pad=0_0x1_1}, to_apply=add.f32\n"
                   "  ROOT o = (f32[4,6], f32[10,6], f32[8,6], f32[8,3], f32[2,6], f32[8,6], f32[8,6]) tuple(sl, pd, rv, ds, ds0, cs, rw)\n}\n"));
    CHECK(has("sl", "{devices=[4,1]<=[4]}") && has("pd", "{devices=[4,1]<=[4]}"));
    CHECK(has("rv", "{devices=[4,1]3,2,1,0}"));
    CHECK(has("ds", "{devices=[4,1]<=[4]}"));
    CHECK(has("ds0", "{replicated}"));
    CHECK(has("cs", "{devices=[4,1]<=[4]}") && has("rw", "{devices=[4,1]<=[4]}"));
    /* backward: slice, pad, reverse, dynamic-update-slice */
    CHECK(prop(HDR "ENTRY e {\n"
                   "  a = f32[8,6] parameter(0)\n"
                   "  b = f32[8,6] parameter(1)\n"
                   "  u = f32[8,2] parameter(2)\n"
                   "  i = s32[] constant(1)\n"
                   "  c = f32[] constant(0)\n"
                   "  rv = f32[8,6] reverse(a), dimensions={0}\n"
                   "  rva = f32[8,6] custom-call(rv), custom_call_target=\"Sharding\", sharding={devices=[4,1]<=[4]}\n"
                   "  d = f32[8,6] dynamic-update-slice(b, u, i, i)\n"
                   "  ROOT da = f32[8,6] custom-call(d), custom_call_target=\"Sharding\", sharding={devices=[2,2]<=[4]}\n}\n"));
    CHECK(has("a", "{devices=[4,1]3,2,1,0}"));
    CHECK(has("b", "{devices=[2,2]<=[4]}") && has("u", "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"));
    /* concatenate: at level 0 only when the concatenated dim is not split; otherwise at level 1 */
    CHECK(prop(HDR "ENTRY e {\n"
                   "  a = f32[4,6] parameter(0), sharding={devices=[1,4]<=[4]}\n"
                   "  b = f32[4,6] parameter(1)\n"
                   "  ROOT c = f32[8,6] concatenate(a, b), dimensions={0}\n}\n"));
    CHECK(has("c", "{devices=[1,4]<=[4]}") && gs_value_sharding_origin(gs_graph_find(pg, "c")).level == 0);
    CHECK(has("b", "{devices=[1,4]<=[4]}") && gs_value_sharding_origin(gs_graph_find(pg, "b")).level == 1);
    CHECK(prop(HDR "ENTRY e {\n"
                   "  a = f32[4,6] parameter(0), sharding={devices=[4,1]<=[4]}\n"
                   "  b = f32[4,6] parameter(1)\n"
                   "  ROOT c = f32[8,6] concatenate(a, b), dimensions={0}\n}\n"));
    CHECK(has("c", "{devices=[4,1]<=[4]}") && gs_value_sharding_origin(gs_graph_find(pg, "c")).level == 1);
}

/* backward through slice, pad, cumsum, reduce-window, dynamic-slice, concatenate and sort */
static void test_backward_pass_through(void) {
    CHECK(prop(HDR "lt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = pred[] compare(a, b), direction=LT\n}\n\n"
                   "ENTRY e {\n"
                   "  a = f32[8,6] parameter(0)\n  b = f32[8,6] parameter(1)\n  c = f32[8,6] parameter(2)\n"
                   "  d = f32[8,6] parameter(3)\n  e1 = f32[8,6] parameter(4)\n  f = f32[4,6] parameter(5)\n"
                   "  h = f32[8,6] parameter(6)\n"
                   "  z = f32[] constant(0)\n  i = s32[] constant(0)\n"
                   "  sl = f32[4,6] slice(a), slice={[0:4], [0:6]}\n"
                   "  pd = f32[10,6] pad(b, z), padding=1_1x0_0\n"
                   "  cs = f32[8,6] cumsum(c), dimensions={1}\n"
                   "  rw = f32[8,6] reduce-window(d, z), window={size=3x1 pad=1_1x0_0}, to_apply=add.f32\n"
                   "  ds = f32[8,3] dynamic-slice(e1, i, i), dynamic_slice_sizes={8,3}\n"
                   "  cc = f32[12,6] concatenate(f, h), dimensions={0}\n"
                   "  st = f32[8,6] sort(h), dimensions={0}, to_apply=lt\n"
                   "  s1 = f32[4,6] custom-call(sl), custom_call_target=\"Sharding\", sharding={devices=[1,4]<=[4]}\n"
                   "  s2 = f32[10,6] custom-call(pd), custom_call_target=\"Sharding\", sharding={devices=[4,1]<=[4]}\n"
                   "  s3 = f32[8,6] custom-call(cs), custom_call_target=\"Sharding\", sharding={devices=[2,2]<=[4]}\n"
                   "  s4 = f32[8,6] custom-call(rw), custom_call_target=\"Sharding\", sharding={devices=[4,1]3,2,1,0}\n"
                   "  s5 = f32[8,3] custom-call(ds), custom_call_target=\"Sharding\", sharding={devices=[2,2]<=[4]}\n"
                   "  s6 = f32[12,6] custom-call(cc), custom_call_target=\"Sharding\", sharding={devices=[1,4]<=[4]}\n"
                   "  ROOT o = (f32[4,6], f32[10,6], f32[8,6], f32[8,6], f32[8,3], f32[12,6], f32[8,6]) tuple(s1, s2, s3, s4, s5, s6, st)\n}\n"));
    CHECK(has("a", "{devices=[1,4]<=[4]}") && has("b", "{devices=[4,1]<=[4]}") && has("c", "{devices=[2,2]<=[4]}"));
    CHECK(has("d", "{devices=[4,1]3,2,1,0}") && has("e1", "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"));
    CHECK(has("f", "{devices=[1,4]<=[4]}"));
    /* h: the concatenate gives [1,4] (level 1); the sort's split on its sorted dim would not be kept */
    CHECK(has("h", "{devices=[1,4]<=[4]}") && has("st", "{devices=[1,4]<=[4]}"));
}

static void test_gather_scatter_sort_rules(void) {
    /* embedding lookup: the output's batch dim follows the indices, its feature dim the table */
    CHECK(prop(HDR "ENTRY e {\n"
                   "  t = f32[16,8] parameter(0), sharding={devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}\n"
                   "  i = s32[4] parameter(1), sharding={devices=[2,2]<=[4] last_tile_dim_replicate}\n"
                   "  ROOT g = f32[4,8] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
                   "index_vector_dim=1, slice_sizes={1,8}\n}\n"));
    CHECK(has("g", "{devices=[2,2]<=[4]}"));
    CHECK(prop(HDR "ENTRY e {\n"
                   "  t = f32[16,8] parameter(0)\n"
                   "  i = s32[4] parameter(1)\n"
                   "  g = f32[4,8] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
                   "index_vector_dim=1, slice_sizes={1,8}\n"
                   "  ROOT a = f32[4,8] custom-call(g), custom_call_target=\"Sharding\", sharding={devices=[2,2]<=[4]}\n}\n"));
    CHECK(has("i", "{devices=[2,2]<=[4] last_tile_dim_replicate}"));
    CHECK(has("t", "{devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}"));
    /* scatter: the output follows the operand; backward the updates get the window dims whole */
    CHECK(prop(HDR "ENTRY e {\n"
                   "  o = f32[16,8] parameter(0)\n"
                   "  i = s32[4,1] parameter(1)\n"
                   "  u = f32[4,8] parameter(2)\n"
                   "  s = f32[16,8] scatter(o, i, u), update_window_dims={1}, inserted_window_dims={0}, "
                   "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add.f32\n"
                   "  ROOT a = f32[16,8] custom-call(s), custom_call_target=\"Sharding\", sharding={devices=[1,4]<=[4]}\n}\n"));
    CHECK(has("o", "{devices=[1,4]<=[4]}") && has("u", "{devices=[1,4]<=[4]}"));
    /* sort split along the sorted dim keeps that split when another dim can take the tiles (the partitioner moves
       them there, as XLA); top-k replicates the last dim */
    CHECK(prop(HDR "ENTRY e {\n"
                   "  x = f32[8,6] parameter(0), sharding={devices=[1,4]<=[4]}\n"
                   "  y = f32[8,6] parameter(1), sharding={devices=[4,1]<=[4]}\n"
                   "  s = f32[8,6] sort(x), dimensions={1}, to_apply=lt\n"
                   "  tk = (f32[8,2], s32[8,2]) topk(y), k=2, largest=true\n"
                   "  v = f32[8,2] get-tuple-element(tk), index=0\n"
                   "  ROOT o = (f32[8,6], f32[8,2]) tuple(s, v)\n}\n"
                   "lt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = pred[] compare(a, b), direction=LT\n}\n"));
    CHECK(has("s", "{devices=[1,4]<=[4]}") && has("v", "{devices=[4,1]<=[4]}"));
    /* no other dim can take 4 tiles (6 rows): the sorted dim is replicated */
    CHECK(prop(HDR "ENTRY e {\n"
                   "  x = f32[6,8] parameter(0), sharding={devices=[1,4]<=[4]}\n"
                   "  io = s32[6,8] iota(), iota_dimension=1\n"
                   "  ROOT s = (f32[6,8], s32[6,8]) sort(x, io), dimensions={1}, to_apply=lt\n}\n"
                   "lt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  c = s32[] parameter(2)\n  d = s32[] parameter(3)\n"
                   "  ROOT r = pred[] compare(a, b), direction=LT\n}\n"));
    CHECK(has("s", "{{replicated}, {replicated}}") && has("io", "{replicated}"));
    /* several operands: the split of any of them reaches the sort and every operand */
    CHECK(prop(HDR "ENTRY e {\n"
                   "  x = f32[8,6] parameter(0)\n"
                   "  y = s32[8,6] parameter(1), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}\n"
                   "  ROOT s = (f32[8,6], s32[8,6]) sort(x, y), dimensions={1}, to_apply=lt\n}\n"
                   "lt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  c = s32[] parameter(2)\n  d = s32[] parameter(3)\n"
                   "  ROOT r = pred[] compare(a, b), direction=LT\n}\n"));
    CHECK(has("s", "{{devices=[2,1,2]<=[4] last_tile_dim_replicate}, {devices=[2,1,2]<=[4] last_tile_dim_replicate}}") &&
          has("x", "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"));
}

/* gather/scatter parallel dims: an iota-built index component or an explicit batching dim ties an operand dim to
   an indices dim and the output's (updates') batch dim; a scatter's indices and updates inform each other */
static void test_gather_scatter_parallel_dims(void) {
    /* component 0 of the indices counts along indices dim 0, so operand dim 0 splits like the output's dim 0 */
    CHECK(prop(HDR "ENTRY e {\n"
                   "  t = f32[8,6] parameter(0), sharding={devices=[4,1]<=[4]}\n"
                   "  p = s32[8,1] parameter(1)\n"
                   "  io = s32[8,1] iota(), iota_dimension=0\n"
                   "  c = s32[8,2] concatenate(io, p), dimensions={1}\n"
                   "  g = f32[8] gather(t, c), offset_dims={}, collapsed_slice_dims={0,1}, start_index_map={0,1}, "
                   "index_vector_dim=1, slice_sizes={1,1}\n"
                   "  ROOT r = f32[8] negate(g)\n}\n"));
    CHECK(has("g", "{devices=[4]<=[4]}") && has("c", "{devices=[4,1]<=[4]}") && has("p", "{devices=[4,1]<=[4]}"));
    /* the same with the iota broadcast from a vector, and the output annotated: the operand follows backward */
    CHECK(prop(HDR "ENTRY e {\n"
                   "  t = f32[8,6] parameter(0)\n"
                   "  i1 = s32[8] iota(), iota_dimension=0\n"
                   "  b = s32[8,1] broadcast(i1), dimensions={0}\n"
                   "  g = f32[8,6] gather(t, b), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
                   "index_vector_dim=1, slice_sizes={1,6}, sharding={devices=[2,2]<=[4]}\n"
                   "  ROOT r = f32[8,6] negate(g)\n}\n"));
    CHECK(has("t", "{devices=[2,2]<=[4]}"));
    /* a slice wider than one along the indexed dim is not parallel: the operand's split there is dropped */
    CHECK(prop(HDR "ENTRY e {\n"
                   "  t = f32[8,6] parameter(0), sharding={devices=[4,1]<=[4]}\n"
                   "  i1 = s32[7,1] iota(), iota_dimension=0\n"
                   "  g = f32[7,2,6] gather(t, i1), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0}, "
                   "index_vector_dim=1, slice_sizes={2,6}\n"
                   "  ROOT r = f32[7,2,6] negate(g)\n}\n"));
    CHECK(has("g", "{replicated}"));
    /* explicit batching dims: operand dim 0 and indices dim 0 are one dim of the output */
    CHECK(prop(HDR "ENTRY e {\n"
                   "  t = f32[4,10,3] parameter(0), sharding={devices=[2,1,1,2]<=[4] last_tile_dim_replicate}\n"
                   "  i = s32[4,5,1] parameter(1)\n"
                   "  g = f32[4,5,3] gather(t, i), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, "
                   "operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,3}\n"
                   "  ROOT r = f32[4,5,3] negate(g)\n}\n"));
    CHECK(has("g", "{devices=[2,1,1,2]<=[4] last_tile_dim_replicate}") &&
          has("i", "{devices=[2,1,1,2]<=[4] last_tile_dim_replicate}"));
    /* scatter: the updates' scatter dim gives the indices theirs (the scatter itself pinned replicated) */
    CHECK(prop(HDR "ENTRY e {\n"
                   "  o = f32[10,6] parameter(0)\n"
                   "  ip = s32[8] parameter(1)\n"
                   "  ic = s32[8] copy(ip)\n"
                   "  u = f32[8,6] parameter(2), sharding={devices=[4,1]<=[4]}\n"
                   "  ROOT s = f32[10,6] scatter(o, ic, u), update_window_dims={1}, inserted_window_dims={0}, "
                   "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add.f32, sharding={replicated}\n}\n"));
    CHECK(has("ic", "{devices=[4]<=[4]}"));
    /* and the indices give the updates theirs */
    CHECK(prop(HDR "ENTRY e {\n"
                   "  o = f32[10,6] parameter(0)\n"
                   "  i = s32[8] parameter(1), sharding={devices=[2,2]<=[4] last_tile_dim_replicate}\n"
                   "  up = f32[8,6] parameter(2)\n"
                   "  uc = f32[8,6] copy(up)\n"
                   "  ROOT s = f32[10,6] scatter(o, i, uc), update_window_dims={1}, inserted_window_dims={0}, "
                   "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add.f32, sharding={replicated}\n}\n"));
    CHECK(has("uc", "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"));
    /* iota indices make the scatter's dim 0 parallel: the output splits like the updates' scatter dim */
    CHECK(prop(HDR "ENTRY e {\n"
                   "  o = f32[8,6] parameter(0)\n"
                   "  i = s32[8] iota(), iota_dimension=0\n"
                   "  u = f32[8,6] parameter(1), sharding={devices=[4,1]<=[4]}\n"
                   "  s = f32[8,6] scatter(o, i, u), update_window_dims={1}, inserted_window_dims={0}, "
                   "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add.f32\n"
                   "  ROOT r = f32[8,6] negate(s)\n}\n"));
    CHECK(has("s", "{devices=[4,1]<=[4]}") && has("o", "{devices=[4,1]<=[4]}"));
}

/* ShardBarrierFrom stops forward propagation through it, ShardBarrierTo backward; both print back as written */
static void test_shard_barriers(void) {
    const char *txt;
    CHECK(prop(HDR "ENTRY e {\n"
                   "  x = f32[8,4] parameter(0), sharding={devices=[4,1]<=[4]}\n"
                   "  b = f32[8,4] custom-call(x), custom_call_target=\"ShardBarrierFrom\", custom_call_has_side_effect=true\n"
                   "  n = f32[8,4] negate(b)\n"
                   "  y = f32[8,4] parameter(1)\n"
                   "  yc = f32[8,4] copy(y)\n"
                   "  c = f32[8,4] custom-call(yc), custom_call_target=\"ShardBarrierTo\"\n"
                   "  m = f32[8,4] negate(c), sharding={devices=[1,4]<=[4]}\n"
                   "  ROOT t = (f32[8,4], f32[8,4]) tuple(n, m)\n}\n"));
    CHECK(has("n", "{replicated}") && has("b", "{replicated}"));
    CHECK(has("c", "{devices=[1,4]<=[4]}") && has("yc", "{replicated}"));
    /* without the barriers the same module propagates through */
    CHECK(prop(HDR "ENTRY e {\n"
                   "  x = f32[8,4] parameter(0), sharding={devices=[4,1]<=[4]}\n"
                   "  b = f32[8,4] copy(x)\n"
                   "  n = f32[8,4] negate(b)\n"
                   "  y = f32[8,4] parameter(1)\n"
                   "  yc = f32[8,4] copy(y)\n"
                   "  c = f32[8,4] copy(yc)\n"
                   "  m = f32[8,4] negate(c), sharding={devices=[1,4]<=[4]}\n"
                   "  ROOT t = (f32[8,4], f32[8,4]) tuple(n, m)\n}\n"));
    CHECK(has("n", "{devices=[4,1]<=[4]}") && has("yc", "{devices=[1,4]<=[4]}"));
    /* printed back as custom-calls */
    CHECK(prop(HDR "ENTRY e {\n"
                   "  x = f32[8,4] parameter(0)\n"
                   "  b = f32[8,4] custom-call(x), custom_call_target=\"ShardBarrierFrom\"\n"
                   "  ROOT c = f32[8,4] custom-call(b), custom_call_target=\"ShardBarrierTo\"\n}\n"));
    txt = pg ? gs_hlo_print(pg) : NULL;
    CHECK(txt && strstr(txt, "custom-call(x), custom_call_target=\"ShardBarrierFrom\"") &&
          strstr(txt, "custom-call(b), custom_call_target=\"ShardBarrierTo\""));
    if (txt && !strstr(txt, "ShardBarrierFrom")) fprintf(stderr, "%s\n", txt);
}

/* {unknown} is open (decided by propagation, no conflict); shard_as members end alike, shard_like ones only hint */
static void test_shard_groups_and_unknown(void) {
    const gs_sharding *a, *b;
    /* an open annotation takes its operand's sharding and passes it on */
    CHECK(prop(HDR "ENTRY e {\n"
                   "  x = f32[8,4] parameter(0), sharding={devices=[4,1]<=[4]}\n"
                   "  u = f32[8,4] custom-call(x), custom_call_target=\"Sharding\", sharding={unknown}\n"
                   "  ROOT n = f32[8,4] negate(u)\n}\n"));
    CHECK(has("u", "{devices=[4,1]<=[4]}") && has("n", "{devices=[4,1]<=[4]}"));
    CHECK(pg && gs_propagate_num_conflicts(pg) == 0);
    /* shard_as: two values split differently end with one sharding (the first member's) */
    CHECK(prop(HDR "ENTRY e {\n"
                   "  p = f32[8,8] parameter(0), sharding={devices=[4,1]<=[4]}\n"
                   "  q = f32[8,8] parameter(1), sharding={devices=[1,4]<=[4]}\n"
                   "  a = f32[8,8] add(p, p)\n"
                   "  sa = f32[8,8] custom-call(a), custom_call_target=\"Sharding\", sharding={unknown shard_as 0}\n"
                   "  b = f32[8,8] add(q, q)\n"
                   "  sb = f32[8,8] custom-call(b), custom_call_target=\"Sharding\", sharding={unknown shard_as 0}\n"
                   "  ROOT m = f32[8,8] multiply(a, b)\n}\n"));
    CHECK(has("a", "{devices=[4,1]<=[4]}") && has("b", "{devices=[4,1]<=[4]}") && has("sb", "{devices=[4,1]<=[4]}"));
    /* shard_like: the same program keeps the two apart */
    CHECK(prop(HDR "ENTRY e {\n"
                   "  p = f32[8,8] parameter(0), sharding={devices=[4,1]<=[4]}\n"
                   "  q = f32[8,8] parameter(1), sharding={devices=[1,4]<=[4]}\n"
                   "  a = f32[8,8] add(p, p)\n"
                   "  sa = f32[8,8] custom-call(a), custom_call_target=\"Sharding\", sharding={unknown shard_like 0}\n"
                   "  b = f32[8,8] add(q, q)\n"
                   "  sb = f32[8,8] custom-call(b), custom_call_target=\"Sharding\", sharding={unknown shard_like 0}\n"
                   "  ROOT m = f32[8,8] multiply(a, b)\n}\n"));
    CHECK(has("a", "{devices=[4,1]<=[4]}") && has("b", "{devices=[1,4]<=[4]}"));
    /* ... but gives a member without one the other's; partial shardings merge across the group */
    CHECK(prop(HDR "ENTRY e {\n"
                   "  p = f32[8,8] parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}\n"
                   "  q = f32[8,8] parameter(1)\n"
                   "  a = f32[8,8] add(p, p)\n"
                   "  sa = f32[8,8] custom-call(a), custom_call_target=\"Sharding\", sharding={unknown shard_like 3}\n"
                   "  b = f32[8,8] add(q, q)\n"
                   "  sb = f32[8,8] custom-call(b), custom_call_target=\"Sharding\", sharding={unknown shard_like 3}\n"
                   "  r1 = f32[] constant(0)\n"
                   "  ROOT m = f32[8] reduce(b, r1), dimensions={1}, to_apply=add.f32\n}\n"));
    CHECK(has("b", "{devices=[2,1,2]<=[4] last_tile_dim_replicate}") && has("q", "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"));
    /* a parameter in a shard_as group with an annotated value elsewhere; propagating twice gives the same */
    CHECK(prop(HDR "ENTRY e {\n"
                   "  p = f32[8,8] parameter(0), sharding={unknown shard_as 1}\n"
                   "  q = f32[8,8] parameter(1), sharding={devices=[2,2]<=[4] shard_as 1}\n"
                   "  ROOT t = (f32[8,8], f32[8,8]) tuple(p, q)\n}\n"));
    CHECK(has("p", "{devices=[2,2]<=[4]}"));
    if (pg) {
        a = gs_value_sharding(gs_graph_find(pg, "p"));
        CHECK_OK(gs_propagate(pg, NULL));
        b = gs_value_sharding(gs_graph_find(pg, "p"));
        CHECK(a && b && gs_sharding_equal(a, b));
    }
}

/* the state of an rng-bit-generator stays replicated even when what computes it is split */
static void test_rng_bit_generator_state(void) {
    CHECK(prop(HDR "ENTRY e {\n"
                   "  p = u64[2] parameter(0), sharding={devices=[2,2]<=[4] last_tile_dim_replicate}\n"
                   "  q = u64[2] add(p, p)\n"
                   "  ROOT r = (u64[2], u32[8,4]) rng-bit-generator(q), algorithm=rng_default\n}\n"));
    CHECK(has("q", "{replicated}") && has("p", "{devices=[2,2]<=[4] last_tile_dim_replicate}"));
    /* without the generator the same add takes p's split */
    CHECK(prop(HDR "ENTRY e {\n"
                   "  p = u64[2] parameter(0), sharding={devices=[2,2]<=[4] last_tile_dim_replicate}\n"
                   "  ROOT q = u64[2] add(p, p)\n}\n"));
    CHECK(has("q", "{devices=[2,2]<=[4] last_tile_dim_replicate}"));
}

/* batch norm: only the feature dim's split passes, between x-shaped values and to and from the [F] vectors (the
   partitioner gathers x's other dims, so they are not propagated) */
static void test_batch_norm_feature_dim(void) {
    CHECK(prop(HDR "ENTRY e {\n"
                   "  x = f32[8,6,4] parameter(0), sharding={devices=[2,1,2]<=[4]}\n"
                   "  sc = f32[4] parameter(1)\n"
                   "  of = f32[4] parameter(2)\n"
                   "  bn = (f32[8,6,4], f32[4], f32[4]) batch-norm-training(x, sc, of), epsilon=0.001, feature_index=2\n"
                   "  ROOT m = f32[4] get-tuple-element(bn), index=1\n}\n"));
    CHECK(has("bn", "{{devices=[1,1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}, "
                    "{devices=[2,2]<=[2,2]T(1,0) last_tile_dim_replicate}, {devices=[2,2]<=[2,2]T(1,0) last_tile_dim_replicate}}"));
    CHECK(has("sc", "{devices=[2,2]<=[2,2]T(1,0) last_tile_dim_replicate}") && has("m", "{devices=[2,2]<=[2,2]T(1,0) last_tile_dim_replicate}"));
    /* from a vector to x-shaped values (inference), and backward from the result into x and grad_output */
    CHECK(prop(HDR "ENTRY e {\n"
                   "  x = f32[8,4] parameter(0)\n"
                   "  v = f32[4] parameter(1), sharding={devices=[4]<=[4]}\n"
                   "  ROOT y = f32[8,4] batch-norm-inference(x, v, v, v, v), epsilon=0.001, feature_index=1\n}\n"));
    CHECK(has("y", "{devices=[1,4]<=[4]}") && has("x", "{devices=[1,4]<=[4]}"));
    CHECK(prop(HDR "ENTRY e {\n"
                   "  x = f32[8,4] parameter(0)\n"
                   "  v = f32[4] parameter(1)\n"
                   "  g = f32[8,4] parameter(2)\n"
                   "  bg = (f32[8,4], f32[4], f32[4]) batch-norm-grad(x, v, v, v, g), epsilon=0.001, feature_index=1\n"
                   "  ROOT d = f32[8,4] get-tuple-element(bg), index=0, sharding={devices=[2,2]<=[4]}\n}\n"));
    CHECK(has("x", "{devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}") &&
          has("g", "{devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}") &&
          has("v", "{devices=[2,2]<=[2,2]T(1,0) last_tile_dim_replicate}"));
}

static void test_topk_and_tuples(void) {
    CHECK(prop(HDR "ENTRY e {\n"
                   "  y = f32[8,6] parameter(0), sharding={devices=[4,1]<=[4]}\n"
                   "  tk = (f32[8,2], s32[8,2]) topk(y), k=2, largest=true\n"
                   "  v = f32[8,2] get-tuple-element(tk), index=0\n"
                   "  ROOT ix = s32[8,2] get-tuple-element(tk), index=1\n}\n"));
    CHECK(has("tk", "{{devices=[4,1]<=[4]}, {devices=[4,1]<=[4]}}") && has("v", "{devices=[4,1]<=[4]}"));
    /* backward through get-tuple-element and tuple */
    CHECK(prop(HDR "ENTRY e {\n"
                   "  a = f32[8] parameter(0)\n"
                   "  b = f32[8] parameter(1)\n"
                   "  t = (f32[8], f32[8]) tuple(a, b)\n"
                   "  g = f32[8] get-tuple-element(t), index=1\n"
                   "  ROOT s = f32[8] custom-call(g), custom_call_target=\"Sharding\", sharding={devices=[4]<=[4]}\n}\n"));
    CHECK(has("b", "{devices=[4]<=[4]}") && has("a", "{replicated}") && origin_of("a") == GS_ORIGIN_DEFAULT);
}

static void test_while_loop(void) {
    CHECK(prop(HDR "cond {\n  s = (s32[], f32[8,6]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
                   "  n = s32[] constant(3)\n  ROOT c = pred[] compare(i, n), direction=LT\n}\n\n"
                   "body {\n  s = (s32[], f32[8,6]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
                   "  x = f32[8,6] get-tuple-element(s), index=1\n  one = s32[] constant(1)\n"
                   "  i2 = s32[] add(i, one)\n  x2 = f32[8,6] tanh(x)\n  ROOT r = (s32[], f32[8,6]) tuple(i2, x2)\n}\n\n"
                   "ENTRY e {\n"
                   "  a = f32[8,6] parameter(0), sharding={devices=[4,1]<=[4]}\n"
                   "  z = s32[] constant(0)\n"
                   "  t = (s32[], f32[8,6]) tuple(z, a)\n"
                   "  w = (s32[], f32[8,6]) while(t), condition=cond, body=body\n"
                   "  ROOT o = f32[8,6] get-tuple-element(w), index=1\n}\n"));
    CHECK(has("w", "{{replicated}, {devices=[4,1]<=[4]}}") && has("o", "{devices=[4,1]<=[4]}"));
    {
        /* inside the body (checked in the printed module): the parameter and the loop values agree */
        const char *text = gs_propagate_explain(pg, false);
        CHECK(text && strstr(text, "x2 = f32[8,6] tanh(x), sharding={devices=[4,1]<=[4]}") != NULL);
        CHECK(text && strstr(text, "s = (s32[], f32[8,6]) parameter(0), sharding={{replicated}, {devices=[4,1]<=[4]}}") != NULL);
    }
}

static void test_manual_region(void) {
    CHECK(prop(HDR "ENTRY e {\n"
                   "  x = f32[8,6] parameter(0)\n"
                   "  a = f32[8,6] custom-call(x), custom_call_target=\"Sharding\", sharding={devices=[4,1]<=[4]}\n"
                   "  m = f32[2,6] custom-call(a), custom_call_target=\"SPMDFullToShardShape\", sharding={manual}\n"
                   "  e = f32[2,6] exponential(m)\n"
                   "  pid = u32[] partition-id()\n"
                   "  pf = f32[] convert(pid)\n"
                   "  pb = f32[2,6] broadcast(pf), dimensions={}\n"
                   "  s = f32[2,6] add(e, pb)\n"
                   "  f = f32[8,6] custom-call(s), custom_call_target=\"SPMDShardToFullShape\", sharding={devices=[4,1]<=[4]}\n"
                   "  ROOT y = f32[8,6] tanh(f)\n}\n"));
    CHECK(has("e", "{manual}") && has("s", "{manual}") && has("pb", "{manual}") && has("pid", "{manual}"));
    CHECK(has("y", "{devices=[4,1]<=[4]}") && has("x", "{devices=[4,1]<=[4]}"));
}

static void test_partial_merge_and_open_dims(void) {
    /* two partially replicated operands merge (level 1) */
    CHECK(prop(HDR "ENTRY e {\n"
                   "  a = f32[8,6] parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}\n"
                   "  b = f32[8,6] parameter(1), sharding={devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}\n"
                   "  ROOT c = f32[8,6] add(a, b)\n}\n"));
    CHECK(has("c", "{devices=[2,2]<=[4]}"));
    /* the same with explicit device lists (the general merge) */
    CHECK(prop(HDR "ENTRY e {\n"
                   "  a = f32[8,6] parameter(0), sharding={devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}\n"
                   "  b = f32[8,6] parameter(1), sharding={devices=[1,2,2]0,2,1,3 last_tile_dim_replicate}\n"
                   "  ROOT c = f32[8,6] add(a, b)\n}\n"));
    CHECK(has("c", "{devices=[2,2]0,1,2,3}"));
    /* incompatible partial shardings do not merge: the first stays */
    CHECK(prop(HDR "ENTRY e {\n"
                   "  a = f32[8,6] parameter(0), sharding={devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}\n"
                   "  b = f32[8,6] parameter(1), sharding={devices=[1,2,2]0,1,2,3 last_tile_dim_replicate}\n"
                   "  ROOT c = f32[8,6] add(a, b)\n}\n"));
    CHECK(has("c", "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}"));
    /* a user annotation with an open dim: refined there only; a closed one stays as written */
    CHECK(prop(HDR "ENTRY e {\n"
                   "  x = f32[8,6] parameter(0)\n"
                   "  o = f32[8,6] custom-call(x), custom_call_target=\"Sharding\", sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}, backend_config=\"unspecified_dims=[1]\"\n"
                   "  k = f32[8,6] custom-call(x), custom_call_target=\"Sharding\", sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}\n"
                   "  z = f32[8,6] parameter(1), sharding={devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}\n"
                   "  s = f32[8,6] add(o, z)\n"
                   "  t = f32[8,6] add(k, z)\n"
                   "  ROOT r = (f32[8,6], f32[8,6]) tuple(s, t)\n}\n"));
    CHECK(has("o", "{devices=[2,2]<=[4]}") && has("k", "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"));
    CHECK(gs_value_sharding_origin(gs_graph_find(pg, "o")).kind == GS_ORIGIN_USER);
}

/* Open dims across a manual conversion (XLA's RefineManualAutoSharding rules): an annotation with open dims whose
   one user is to-manual / to-full with the same open dims is refined with it. 4 devices, manual over 2 groups
   ({0,2} and {1,3}); the split of dim 1 ({0,1} | {2,3}) comes from the full side and reaches both sides of both
   conversions, the manual group kept. Expected tile arrays worked out by intersecting the device groups. */
#define CONV_PROG(PSH, TO_MANUAL_BC, ROOTSH) \
    HDR "ENTRY e {\n" \
        "  p = f32[8,6] parameter(0)" PSH "\n" \
        "  a = f32[8,6] custom-call(p), custom_call_target=\"Sharding\", sharding={devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}, backend_config=\"unspecified_dims=[1]\"\n" \
        "  m = f32[4,6] custom-call(a), custom_call_target=\"SPMDFullToShardShape\", sharding={devices=[1,1,2,2]0,2,1,3 last_tile_dims={manual, replicated}}" TO_MANUAL_BC "\n" \
        "  n = f32[4,6] add(m, m)\n" \
        "  b = f32[4,6] custom-call(n), custom_call_target=\"Sharding\", sharding={devices=[1,1,2,2]0,2,1,3 last_tile_dims={manual, replicated}}, backend_config=\"unspecified_dims=[1]\"\n" \
        "  f = f32[8,6] custom-call(b), custom_call_target=\"SPMDShardToFullShape\", sharding={devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}, backend_config=\"unspecified_dims=[1]\"\n" \
        "  ROOT r = f32[8,6] copy(f)" ROOTSH "\n}\n"
static void test_open_dims_across_manual_conversion(void) {
    const char *full = "{devices=[2,2]0,2,1,3}", *man = "{devices=[1,2,2]<=[4] last_tile_dims={manual}}";
    /* from the operand of the first annotation, forward through both conversions */
    CHECK(prop(CONV_PROG(", sharding={devices=[1,2,2]<=[4] last_tile_dim_replicate}",
                         ", backend_config=\"unspecified_dims=[1]\"", "")));
    CHECK(has("a", full) && has("m", man) && has("n", man) && has("b", man) && has("f", full) && has("r", full));
    CHECK(strstr(gs_value_sharding_origin(gs_graph_find(pg, "m")).rule, "across to-manual") != NULL);
    /* from the user of the last conversion, backward through both */
    CHECK(prop(CONV_PROG("", ", backend_config=\"unspecified_dims=[1]\"",
                         ", sharding={devices=[1,2,2]<=[4] last_tile_dim_replicate}")));
    CHECK(has("f", full) && has("b", man) && has("n", man) && has("m", man) && has("a", full) && has("p", full));
    /* the to-manual names no open dims: neither it nor the annotation before it is refined (as XLA), while the
       pair after it still is */
    CHECK(prop(CONV_PROG(", sharding={devices=[1,2,2]<=[4] last_tile_dim_replicate}", "", "")));
    CHECK(has("a", "{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}"));
    CHECK(has("m", "{devices=[1,1,2,2]0,2,1,3 last_tile_dims={manual, replicated}}"));
    CHECK(has("f", "{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}"));
    /* the open dims print back on the conversions */
    {
        const char *t = gs_hlo_print(pg);
        CHECK(t && strstr(t, "custom_call_target=\"SPMDShardToFullShape\", sharding={devices=[2,1,2]0,2,1,3 "
                               "last_tile_dim_replicate}, backend_config=\"unspecified_dims=[1]\"") != NULL);
    }
}

/* an equally fine but unrelated sharding does not replace a tiled one */
static void test_no_equal_replacement(void) {
    CHECK(prop(HDR "ENTRY e {\n"
                   "  a = f32[8,8] parameter(0), sharding={devices=[4,1]<=[4]}\n"
                   "  b = f32[8,8] parameter(1), sharding={devices=[1,4]<=[4]}\n"
                   "  c = f32[8,8] add(a, b)\n"
                   "  ROOT d = f32[8,8] multiply(c, b)\n}\n"));
    CHECK(has("c", "{devices=[4,1]<=[4]}") && has("d", "{devices=[4,1]<=[4]}"));
}

static void test_conflicts(void) {
    CHECK(prop(HDR "ENTRY e {\n"
                   "  x = f32[8,6] parameter(0), sharding={devices=[4,1]<=[4]}\n"
                   "  a = f32[8,6] custom-call(x), custom_call_target=\"Sharding\", sharding={devices=[1,4]<=[4]}\n"
                   "  b = f32[8,6] custom-call(x), custom_call_target=\"Sharding\", sharding={devices=[2,2]<=[4]}\n"
                   "  ROOT c = f32[8,6] add(a, b)\n}\n"));
    CHECK_EQ_INT(gs_propagate_num_conflicts(pg), 3);
    CHECK(strstr(gs_propagate_conflict(pg, 0), "x: annotated {devices=[4,1]<=[4]} at x, but a annotates {devices=[1,4]<=[4]}") != NULL);
    CHECK(strstr(gs_propagate_conflict(pg, 2), "a: annotated {devices=[1,4]<=[4]} at a, but b annotates {devices=[2,2]<=[4]} (both annotate the same value)") != NULL);
    CHECK(gs_propagate_conflict(pg, 3) == NULL);
    {
        const char *text = gs_propagate_explain(pg, true);
        CHECK(text && strstr(text, "/* conflicts:") != NULL);
    }
    /* no conflict when annotations agree */
    CHECK(prop(HDR "ENTRY e {\n"
                   "  x = f32[8,6] parameter(0), sharding={devices=[4,1]<=[4]}\n"
                   "  ROOT a = f32[8,6] custom-call(x), custom_call_target=\"Sharding\", sharding={devices=[4,1]0,1,2,3}\n}\n"));
    CHECK_EQ_INT(gs_propagate_num_conflicts(pg), 0);
}

/* Ops with no rule (rng and its scalar bounds) end replicated; an all-reduce passes its operand's sharding on
   (XLA's rule); nothing crashes. */
static void test_fallbacks(void) {
    CHECK(prop(HDR "ENTRY e {\n"
                   "  x = f32[8] parameter(0), sharding={devices=[4]<=[4]}\n"
                   "  r = f32[8] all-reduce(x), replica_groups={}, to_apply=add.f32\n"
                   "  lo = f32[] constant(0)\n"
                   "  hi = f32[] constant(1)\n"
                   "  g = f32[8] rng(lo, hi), distribution=rng_uniform, seed=3\n"
                   "  ROOT s = f32[8] add(r, g)\n}\n"));
    CHECK(has("r", "{devices=[4]<=[4]}") && has("lo", "{replicated}"));
    CHECK(origin_of("r") == GS_ORIGIN_FORWARD && origin_of("lo") == GS_ORIGIN_DEFAULT);
}

/* An outfeed's sharding {data leaves..., token} gives each data leaf its element (XLA's OutfeedUser); maximal
   and manual elements are not offered; the printed outfeed keeps its sharding as written, once. */
static void test_outfeed_sharding(void) {
    const char *text, *at;
    CHECK(prop("HloModule m, num_partitions=2\n\nENTRY e {\n"
               "  p = f32[10,128] parameter(0)\n"
               "  q = f32[6] parameter(1)\n"
               "  c = f32[10,128] copy(p)\n"
               "  d = f32[6] copy(q)\n"
               "  t = (f32[10,128], f32[6]) tuple(c, d)\n"
               "  a = token[] after-all()\n"
               "  ROOT of = token[] outfeed(t, a), outfeed_shape=(f32[10,128], f32[6]), "
               "sharding={{devices=[2,1]0,1}, {maximal device=1}, {maximal device=0}}\n}\n"));
    CHECK(has("c", "{devices=[2,1]0,1}") && has("p", "{devices=[2,1]0,1}"));
    CHECK(has("d", "{replicated}"));
    text = gs_hlo_print(pg);
    CHECK(text != NULL);
    at = text ? strstr(text, "outfeed(t, a)") : NULL;
    CHECK(at && strstr(at, ", sharding=") && !strstr(strstr(at, ", sharding=") + 1, ", sharding="));
    CHECK(prop("HloModule m, num_partitions=2\n\nENTRY e {\n"
               "  p = f32[8] parameter(0)\n"
               "  c = f32[8] copy(p)\n"
               "  t = (f32[8]) tuple(c)\n"
               "  a = token[] after-all()\n"
               "  ROOT of = token[] outfeed(t, a), outfeed_shape=(f32[8]), sharding={{manual}, {manual}}\n}\n"));
    CHECK(has("c", "{replicated}"));
}

/* XLA's pass-through custom-calls (X64Combine, the resize ops of one operand) carry a sharding both ways; any
   other target carries none. */
static void test_passthrough_custom_calls(void) {
    CHECK(prop("HloModule m, num_partitions=4\n\nENTRY e {\n"
               "  p0 = f32[8,6] parameter(0), sharding={devices=[2,2]<=[4]}\n"
               "  p1 = f32[8,6] parameter(1)\n"
               "  c = f64[8,6] custom-call(p0, p1), custom_call_target=\"X64Combine\"\n"
               "  q = f32[4,6] parameter(2)\n"
               "  r = f32[8,12] custom-call(q), custom_call_target=\"ResizeBilinear\"\n"
               "  s = f32[8,12] copy(r), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}\n"
               "  o = f32[8,6] custom-call(p0), custom_call_target=\"SomethingElse\"\n"
               "  ROOT t = (f64[8,6], f32[8,12], f32[8,6]) tuple(c, s, o)\n}\n"));
    CHECK(has("c", "{devices=[2,2]<=[4]}"));
    CHECK(has("q", "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"));
    CHECK(has("o", "{replicated}"));
}

/* A sharding whose only metadata is op_name="_sharding_propagation_cse_prevention" was pinned by an earlier
   propagation to keep CSE apart: propagation drops it and decides the value again (XLA's RemoveCSEPrevention);
   it prints back as written and is not equal to the same sharding without the mark. */
static void test_cse_prevention_dropped(void) {
    const gs_sharding *a, *b;
    CHECK(prop("HloModule m, num_partitions=4\n\nENTRY e {\n"
               "  p = f32[] parameter(0), sharding={replicated}\n"
               "  br = f32[4] broadcast(p), dimensions={}, "
               "sharding={devices=[4]0,1,2,3 metadata={op_name=\"_sharding_propagation_cse_prevention\"}}\n"
               "  x = f32[4] broadcast(p), dimensions={}, sharding={devices=[4]0,1,2,3 metadata={op_name=\"other\"}}\n"
               "  s = f32[4] add(br, br)\n"
               "  c = f32[4] copy(s), sharding={devices=[4]3,2,1,0}\n"
               "  y = f32[4] copy(x), sharding={devices=[4]3,2,1,0}\n"
               "  ROOT t = (f32[4], f32[4]) tuple(c, y)\n}\n"));
    CHECK(has("br", "{devices=[4]3,2,1,0}"));
    CHECK(has("x", "{devices=[4]0,1,2,3}"));
    a = gs_sharding_parse(pctx, "{devices=[4]0,1,2,3 metadata={ op_name=\"_sharding_propagation_cse_prevention\" }}");
    b = gs_sharding_parse(pctx, "{devices=[4]0,1,2,3}");
    CHECK(a && b && !gs_sharding_equal(a, b));
    CHECK(a && strcmp(gs_sharding_to_text(pctx, a),
                      "{devices=[4]0,1,2,3 metadata={op_name=\"_sharding_propagation_cse_prevention\"}}") == 0);
    CHECK(b && strcmp(gs_sharding_to_text(pctx, b), "{devices=[4]0,1,2,3}") == 0);
}

/* Propagating again changes nothing; every value has a sharding and an origin. */
static void test_fixpoint_idempotent(void) {
    FILE *f = fopen("examples/moe_layer.hlo", "rb");
    char *text;
    long n;
    const char *first, *second;
    int i;
    CHECK(f != NULL);
    if (!f) return;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    text = (char *)malloc((size_t)n + 1);
    CHECK(text && fread(text, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    if (!text) return;
    text[n] = 0;
    CHECK(prop(text));
    free(text);
    if (!pg) return;
    first = gs_propagate_explain(pg, true);
    for (i = 0; i < gs_graph_num_values(pg); i++) {
        gs_value *v = gs_graph_value(pg, i);
        CHECK_MSG(gs_value_sharding(v) != NULL && gs_value_sharding_origin(v).kind != GS_ORIGIN_NONE, "%s", gs_value_name(v));
    }
    CHECK_OK(gs_propagate(pg, NULL));
    second = gs_propagate_explain(pg, true);
    CHECK(first && second && strcmp(first, second) == 0);
    /* the printed, propagated module parses and propagates to the same text (all shardings now fixed) */
    {
        const char *plain = gs_propagate_explain(pg, false);
        gs_ctx *c2 = gst_ctx();
        gs_graph *g2 = NULL;
        CHECK_OK(gs_hlo_parse(c2, plain, strlen(plain), &g2));
        CHECK_OK(gs_propagate(g2, NULL));
        CHECK(strcmp(gs_propagate_explain(g2, false), plain) == 0);
        gs_ctx_destroy(c2);
    }
    /* the paper's MoE shardings: G for the gating and dispatch einsums, E for h and expert_outputs */
    CHECK(has("logits", "{devices=[8,1,1]<=[8]}") && has("dispatched_dot", "{devices=[8,1,1,1]<=[8]}"));
    CHECK(has("h", "{devices=[8,1,1,1]<=[8]}") && has("expert_outputs", "{devices=[1,8,1,1]<=[8]}"));
    CHECK(has("wi", "{devices=[8,1,1]<=[8]}") && has("wo", "{devices=[8,1,1]<=[8]}"));
    CHECK(has("outputs", "{devices=[8,1,1]<=[8]}") && has("rnd", "{devices=[8,1]<=[8]}"));
    CHECK(has("combine_weights", "{devices=[8,1,1,1]<=[8]}") && has("aux_loss", "{replicated}"));
    CHECK(strstr(first, "RESHARD: the operands imply {devices=[1,8,1,1]<=[8]} */\n  dispatched = ") != NULL);
}

/* Bad input: shardings that do not fit the device count. */
static void test_propagate_errors(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = NULL;
    gs_propagate_desc d;
    const char *t = "HloModule m\nENTRY e {\n  x = f32[8] parameter(0), sharding={devices=[4]<=[4]}\n  ROOT y = f32[8] negate(x)\n}\n";
    CHECK_OK(gs_hlo_parse(ctx, t, strlen(t), &g));
    memset(&d, 0, sizeof d);
    d.num_devices = 2;
    CHECK(gs_propagate(g, &d) == GS_ERR_SHARDING);
    CHECK(strstr(gs_ctx_error_msg(ctx), "x: sharding needs 4 devices but only 2 exist") != NULL);
    gs_ctx_clear_error(ctx);
    d.num_devices = -1;
    CHECK(gs_propagate(g, &d) == GS_ERR_INVALID_ARG);
    gs_ctx_clear_error(ctx);
    CHECK(gs_propagate(NULL, NULL) == GS_ERR_INVALID_ARG);
    d.num_devices = 4;
    CHECK_OK(gs_propagate(g, &d));
    gs_ctx_destroy(ctx);
    /* as many devices as the program has, but one of them out of range */
    ctx = gst_ctx();
    t = "HloModule m\nENTRY e {\n  x = f32[8] parameter(0), sharding={devices=[2]0,7}\n  ROOT y = f32[8] negate(x)\n}\n";
    CHECK_OK(gs_hlo_parse(ctx, t, strlen(t), &g));
    d.num_devices = 2;
    CHECK(gs_propagate(g, &d) == GS_ERR_SHARDING);
    CHECK(strstr(gs_ctx_error_msg(ctx), "x: device 7 is out of range (2 devices)") != NULL);
    gs_ctx_destroy(ctx);
}

void suite_propagate(void) {
    RUN(test_elementwise_both_ways);
    RUN(test_broadcast_levels);
    RUN(test_reduce_transpose);
    RUN(test_reshape_rules);
    RUN(test_all_reduce_pass_through);
    RUN(test_dot_rules);
    RUN(test_convolution_rules);
    RUN(test_data_movement_rules);
    RUN(test_backward_pass_through);
    RUN(test_gather_scatter_sort_rules);
    RUN(test_gather_scatter_parallel_dims);
    RUN(test_shard_barriers);
    RUN(test_shard_groups_and_unknown);
    RUN(test_rng_bit_generator_state);
    RUN(test_batch_norm_feature_dim);
    RUN(test_topk_and_tuples);
    RUN(test_while_loop);
    RUN(test_manual_region);
    RUN(test_partial_merge_and_open_dims);
    RUN(test_open_dims_across_manual_conversion);
    RUN(test_no_equal_replacement);
    RUN(test_conflicts);
    RUN(test_fallbacks);
    RUN(test_outfeed_sharding);
    RUN(test_passthrough_custom_calls);
    RUN(test_cse_prevention_dropped);
    RUN(test_fixpoint_idempotent);
    RUN(test_propagate_errors);
    if (pctx) gs_ctx_destroy(pctx);
    pctx = NULL;
}
