/* Manual and partly manual regions against hand-computed values: collectives the source program writes inside
   a partly manual region, reshards of a partly manual value, and the reference interpreter on to-manual and
   to-full. Inputs are small integer ramps so every expected element is written out by formula; shapes the
   devices do not divide, so the runtime's poisoned padding (NaN, INT32_MIN) reaches the rules. */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#  define _POSIX_C_SOURCE 200809L /* mkdtemp */
#endif
#include "test.h"

#include <stdlib.h>
#include <unistd.h>

/* Parses text, partitions it for D devices, runs it on D emulated devices (lockstep, poisoned padding) with
   inputs in[] and writes output 0 (global, n floats or ints as its type says) to out. The error message of
   the first failing step is in *msg (static), NULL when everything ran. */
static const char *man_run(const char *text, int64_t D, const void *const *in, void *out, char **spmd_text) {
    static char msg[512];
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = NULL, *spmd = NULL;
    gs_partition_desc pd;
    gs_runtime_desc rd;
    gs_runtime *rt = NULL;
    gs_shape in_shapes[4], os;
    const gs_sharding *in_sh[4], *osh;
    int k, n;
    gs_result r;
    msg[0] = 0;
    if (spmd_text) *spmd_text = NULL;
    r = gs_hlo_parse(ctx, text, strlen(text), &g);
    memset(&pd, 0, sizeof pd);
    pd.num_devices = D;
    if (r == GS_OK) r = gs_partition(g, &pd, &spmd);
    if (r == GS_OK && spmd_text) {
        const char *t = gs_hlo_print(spmd);
        if (t && (*spmd_text = (char *)malloc(strlen(t) + 1)) != NULL) memcpy(*spmd_text, t, strlen(t) + 1);
    }
    n = r == GS_OK ? gs_graph_num_params(g) : 0;
    for (k = 0; k < n && k < 4; k++) {
        in_shapes[k] = gs_value_shape(gs_graph_param(g, k));
        in_sh[k] = gs_partition_param_sharding(spmd, k);
    }
    if (r == GS_OK) {
        os = gs_graph_output_shape(g, 0);
        osh = gs_partition_output_sharding(spmd, 0);
        memset(&rd, 0, sizeof rd);
        rd.num_devices = D;
        rd.mode = GS_RUNTIME_LOCKSTEP;
        r = gs_runtime_create(ctx, &rd, &rt);
        if (r == GS_OK) r = gs_runtime_run_global(rt, spmd, in_shapes, in_sh, in, &os, &osh, &out);
        gs_runtime_destroy(rt);
    }
    if (r != GS_OK) snprintf(msg, sizeof msg, "%s", gs_ctx_error_msg(ctx));
    gs_ctx_destroy(ctx);
    return r == GS_OK ? NULL : msg;
}

/* A collective-permute inside a region manual over 4 groups of 2 devices (each group's s32[3] split 2 ways, so
   the second device of a group holds one element and a poisoned pad): every group takes the next group's
   squares, as the pairs say. out[3m + i] = x[3 ((m + 1) mod 4) + i]^2. */
static void test_manual_partial_collective_permute(void) {
    static const char *const text =
        "HloModule m, num_partitions=8\nENTRY e {\n"
        "  x = s32[12] parameter(0), sharding={devices=[4,2]<=[8] last_tile_dim_replicate}\n"
        "  m = s32[3] custom-call(x), custom_call_target=\"SPMDFullToShardShape\", "
        "sharding={devices=[1,4,2]<=[8] last_tile_dims={manual, replicated}}\n"
        "  c = s32[3] copy(m), sharding={devices=[2,4]<=[4,2]T(1,0) last_tile_dims={manual}}\n"
        "  sq = s32[3] multiply(c, c), sharding={devices=[2,4]<=[4,2]T(1,0) last_tile_dims={manual}}\n"
        "  p = s32[3] collective-permute(sq), channel_id=1, "
        "source_target_pairs={{0,6},{2,0},{4,2},{6,4},{1,7},{3,1},{5,3},{7,5}}, "
        "sharding={devices=[2,4]<=[4,2]T(1,0) last_tile_dims={manual}}\n"
        "  ROOT r = s32[12] custom-call(p), custom_call_target=\"SPMDShardToFullShape\", "
        "sharding={devices=[4,2]<=[8] last_tile_dim_replicate}\n}\n";
    int32_t x[12], got[12];
    const void *in[1];
    char *prog = NULL;
    const char *err;
    int i;
    for (i = 0; i < 12; i++) x[i] = i + 1;
    in[0] = x;
    err = man_run(text, 8, in, got, &prog);
    CHECK_MSG(err == NULL, "%s", err ? err : "");
    if (!err)
        for (i = 0; i < 12; i++) {
            int m = i / 3, j = i % 3, src = 3 * ((m + 1) % 4) + j;
            CHECK_MSG(got[i] == x[src] * x[src], "element %d: got %d, want %d", i, got[i], x[src] * x[src]);
        }
    CHECK_MSG(prog && strstr(prog, "collective-permute") && strstr(prog, "s32[2]"), "%s", prog ? prog : "");
    free(prog);
}

/* An all-reduce inside a region manual over 2 groups (the data split 2 ways within each): its groups join the
   devices that hold the same tile in the two groups, so each tile becomes the sum of the groups' tiles.
   x: f32[5,2], group g's block is rows [3g, 3g+3) (the last block padded with poison); out[r] = x[r] +
   x[r + 3] for the rows both groups hold. The same all-reduce over devices holding different tiles is an
   error naming the group (XLA rejects it too), and so is one without use_global_device_ids. */
static void test_manual_partial_all_reduce(void) {
    static const char *const fmt =
        "HloModule m, num_partitions=4\n"
        "sum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
        "ENTRY e {\n"
        "  x = f32[6,2] parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}\n"
        "  m = f32[3,2] custom-call(x), custom_call_target=\"SPMDFullToShardShape\", "
        "sharding={devices=[1,1,2,2]<=[4] last_tile_dims={manual, replicated}}\n"
        "  c = f32[3,2] copy(m), sharding={devices=[2,1,2]<=[2,2]T(1,0) last_tile_dims={manual}}\n"
        "  s = f32[3,2] all-reduce(c), to_apply=sum, replica_groups=%s%s, "
        "sharding={devices=[2,1,2]<=[2,2]T(1,0) last_tile_dims={manual}}\n"
        "  ROOT r = f32[6,2] custom-call(s), custom_call_target=\"SPMDShardToFullShape\", "
        "sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}\n}\n";
    char text[2048];
    float x[12], got[12];
    const void *in[1];
    const char *err;
    int i;
    for (i = 0; i < 12; i++) x[i] = (float)(i + 1);
    in[0] = x;
    /* [2,1,2]<=[2,2]T(1,0): device d holds data tile d % 2 of manual group d / 2 */
    snprintf(text, sizeof text, fmt, "{{0,2},{1,3}}", ", use_global_device_ids=true, channel_id=1");
    err = man_run(text, 4, in, got, NULL);
    CHECK_MSG(err == NULL, "%s", err ? err : "");
    if (!err)
        for (i = 0; i < 12; i++) {
            int row = i / 2, col = i % 2, r3 = row % 3;
            float want = x[r3 * 2 + col] + x[(r3 + 3) * 2 + col];
            CHECK_MSG(got[i] == want, "element %d: got %g, want %g", i, got[i], want);
        }
    snprintf(text, sizeof text, fmt, "{{0,1},{2,3}}", ", use_global_device_ids=true, channel_id=1");
    err = man_run(text, 4, in, got, NULL);
    CHECK_MSG(err && strstr(err, "across manual subgroups") && strstr(err, "devices 0 and 1"), "%s", err ? err : "(ran)");
    snprintf(text, sizeof text, fmt, "{{0,2},{1,3}}", "");
    err = man_run(text, 4, in, got, NULL);
    CHECK_MSG(err && strstr(err, "without channel_id reads its groups as replicas"), "%s", err ? err : "(ran)");
    /* without channel_id, across the one replica: each device's tile as it is */
    snprintf(text, sizeof text, fmt, "{}", "");
    err = man_run(text, 4, in, got, NULL);
    CHECK_MSG(err == NULL, "%s", err ? err : "");
    for (i = 0; !err && i < 12; i++) CHECK_MSG(got[i] == x[i], "element %d: got %g, want %g", i, got[i], x[i]);
    snprintf(text, sizeof text, fmt, "{{0,2},{1,3}}", ", channel_id=1");
    err = man_run(text, 4, in, got, NULL);
    CHECK_MSG(err && strstr(err, "needs use_global_device_ids=true"), "%s", err ? err : "(ran)");
}

/* {replicated} on a value computed inside a region manual over 2 groups (each group's f32[3,5] split 2 ways
   along the 5 columns, so one block carries 1 poisoned column) means each group's whole array on each of its
   devices: an all-gather within the group, never across groups. out = -x. */
static void test_manual_partial_to_replicated(void) {
    static const char *const text =
        "HloModule m, num_partitions=4\nENTRY e {\n"
        "  x = f32[6,5] parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}\n"
        "  m = f32[3,5] custom-call(x), custom_call_target=\"SPMDFullToShardShape\", "
        "sharding={devices=[1,1,2,2]<=[4] last_tile_dims={manual, replicated}}\n"
        "  c = f32[3,5] copy(m), sharding={devices=[1,2,2]<=[2,2]T(1,0) last_tile_dims={manual}}\n"
        "  n = f32[3,5] negate(c), sharding={devices=[1,2,2]<=[2,2]T(1,0) last_tile_dims={manual}}\n"
        "  r = f32[3,5] copy(n), sharding={replicated}\n"
        "  ROOT o = f32[6,5] custom-call(r), custom_call_target=\"SPMDShardToFullShape\", "
        "sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}\n}\n";
    float x[30], got[30];
    const void *in[1];
    char *prog = NULL;
    const char *err;
    int i;
    for (i = 0; i < 30; i++) x[i] = (float)i - 7.5f;
    in[0] = x;
    err = man_run(text, 4, in, got, &prog);
    CHECK_MSG(err == NULL, "%s", err ? err : "");
    if (!err)
        for (i = 0; i < 30; i++) CHECK_MSG(got[i] == -x[i], "element %d: got %g, want %g", i, got[i], -x[i]);
    /* device d holds column block d % 2 of group d / 2: the gather joins {0,1} and {2,3} */
    CHECK_MSG(prog && strstr(prog, "all-gather") && strstr(prog, "replica_groups=[2,2]<=[4]"), "%s", prog ? prog : "");
    free(prog);
}

/* A reduce inside a region manual over 2 groups, over the dim split within each group (5 columns over 2
   devices: the second block's poisoned column must not reach the sum): partial sums combined by an all-reduce
   within the group, never across groups. out[3g + i] = sum_j x[3g + i][j] (+ the init 10 once). */
static void test_manual_partial_reduce(void) {
    static const char *const text =
        "HloModule m, num_partitions=4\n"
        "sum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
        "ENTRY e {\n"
        "  x = f32[6,5] parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}\n"
        "  m = f32[3,5] custom-call(x), custom_call_target=\"SPMDFullToShardShape\", "
        "sharding={devices=[1,1,2,2]<=[4] last_tile_dims={manual, replicated}}\n"
        "  c = f32[3,5] copy(m), sharding={devices=[1,2,2]<=[2,2]T(1,0) last_tile_dims={manual}}\n"
        "  z = f32[] constant(10), sharding={devices=[2,2]<=[4] last_tile_dims={manual, replicated}}\n"
        "  r = f32[3] reduce(c, z), dimensions={1}, to_apply=sum, "
        "sharding={devices=[1,2,2]<=[4] last_tile_dims={manual, replicated}}\n"
        "  ROOT o = f32[6] custom-call(r), custom_call_target=\"SPMDShardToFullShape\", "
        "sharding={devices=[2,2]<=[4] last_tile_dim_replicate}\n}\n";
    float x[30], got[6];
    const void *in[1];
    char *prog = NULL;
    const char *err;
    int i, j;
    for (i = 0; i < 30; i++) x[i] = (float)(i % 7) - 2.5f;
    in[0] = x;
    err = man_run(text, 4, in, got, &prog);
    CHECK_MSG(err == NULL, "%s", err ? err : "");
    for (i = 0; !err && i < 6; i++) {
        float want = 10;
        for (j = 0; j < 5; j++) want += x[i * 5 + j];
        CHECK_MSG(got[i] == want, "element %d: got %g, want %g", i, got[i], want);
    }
    /* device d holds column block d % 2 of group d / 2: the partial sums meet over {0,1} and {2,3} */
    CHECK_MSG(prog && strstr(prog, "all-reduce") && (strstr(prog, "replica_groups={{0,1},{2,3}}") ||
                                                     strstr(prog, "replica_groups=[2,2]<=[4]")), "%s", prog ? prog : "");
    free(prog);
}

/* Random cases of the rule above: D devices in M manual groups of K (device m K + k holds column block k of
   group m; K does not always divide the columns, so padding is poisoned), group m's value A_m = x rows
   [m n, (m + 1) n), and the collectives across the groups {k, K + k, ..}. all-gather: every group holds x, so
   out = M copies of x; reduce-scatter: group m holds rows [m q, (m + 1) q) of sum_h A_h (n = M q). */
static void test_manual_partial_collectives_random(void) {
    static const char *const fmt =
        "HloModule m, num_partitions=%d\n"
        "sum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
        "ENTRY e {\n"
        "  x = f32[%d,%d] parameter(0), sharding={devices=[%d,1,%d]<=[%d] last_tile_dim_replicate}\n"
        "  m = f32[%d,%d] custom-call(x), custom_call_target=\"SPMDFullToShardShape\", "
        "sharding={devices=[1,1,%d,%d]<=[%d] last_tile_dims={manual, replicated}}\n"
        "  c = f32[%d,%d] copy(m), sharding={devices=[1,%d,%d]<=[%d,%d]T(1,0) last_tile_dims={manual}}\n"
        "  g = f32[%d,%d] %s(c), dimensions={0}%s, channel_id=1, replica_groups=[%d,%d]<=[%d,%d]T(1,0), "
        "use_global_device_ids=true, sharding={devices=[1,%d,%d]<=[%d,%d]T(1,0) last_tile_dims={manual}}\n"
        "  ROOT r = f32[%d,%d] custom-call(g), custom_call_target=\"SPMDShardToFullShape\", "
        "sharding={devices=[%d,1,%d]<=[%d] last_tile_dim_replicate}\n}\n";
    static const int Ds[] = {4, 6, 8};
    uint64_t st = 0x5eed1234u;
    char text[4096];
    static float x[8 * 24 * 7], got[8 * 8 * 24 * 7];   /* M <= 8, n = M q <= 24, c <= 7 */
    const void *in[1];
    int it;
    in[0] = x;
    for (it = 0; it < 12; it++) {
        int D = Ds[gst_randint(&st, 0, 2)], M, K, q = (int)gst_randint(&st, 1, 3), n, c = (int)gst_randint(&st, 1, 7);
        int i, j, h, rs = (int)gst_randint(&st, 0, 1), out_rows;
        const char *err;
        do M = (int)gst_randint(&st, 2, D); while (D % M);
        K = D / M;
        n = M * q;
        for (i = 0; i < M * n * c; i++) x[i] = (float)gst_randint(&st, -50, 50);
        out_rows = rs ? M * q : M * M * n;
        snprintf(text, sizeof text, fmt, D, M * n, c, M, K, D, n, c, M, K, D, n, c, K, M, M, K, rs ? q : M * n, c,
                 rs ? "reduce-scatter" : "all-gather", rs ? ", to_apply=sum" : "", K, M, M, K, K, M, M, K, out_rows, c,
                 M, K, D);
        err = man_run(text, D, in, got, NULL);
        CHECK_MSG(err == NULL, "case %d (D=%d M=%d n=%d c=%d %s): %s", it, D, M, n, c, rs ? "reduce-scatter" : "all-gather",
                  err ? err : "");
        for (i = 0; !err && i < out_rows; i++)
            for (j = 0; j < c; j++) {
                float want = 0;
                if (!rs) {
                    want = x[(i % (M * n)) * c + j];
                } else {
                    for (h = 0; h < M; h++) want += x[(h * n + i) * c + j];
                }
                CHECK_MSG(got[i * c + j] == want, "case %d (D=%d M=%d): [%d,%d] got %g, want %g", it, D, M, i, j,
                          got[i * c + j], want);
            }
    }
}

/* Runs the open-dims program (x f32[8,5] in, out[i][j] = x[i][j] + k[i mod 4][j]) on 4 devices: the values, and
   each device entering and leaving the region with its own 4 x 3 block (`add`: the add the program must show; no
   collective). */
static void open_dims_run(const char *text, const char *add) {
    float x[40], got[40];
    const void *in[1];
    char *prog = NULL;
    const char *err;
    int i;
    for (i = 0; i < 40; i++) x[i] = (float)i * 0.25f - 4;
    in[0] = x;
    err = man_run(text, 4, in, got, &prog);
    CHECK_MSG(err == NULL, "%s", err ? err : "");
    for (i = 0; !err && i < 40; i++) {
        float want = x[i] + (float)(10 * ((i / 5) % 4) + i % 5);
        CHECK_MSG(got[i] == want, "element %d: got %g, want %g", i, got[i], want);
    }
    CHECK_MSG(prog && strstr(prog, add) && !strstr(prog, "all-gather") && !strstr(prog, "all-to-all") &&
              !strstr(prog, "collective-permute"), "%s", prog ? prog : "");
    free(prog);
}

/* Open dims refined across both conversions (propagation): the split of the 5 columns over {0,1} | {2,3} given on
   the input reaches the partly manual region, so each device enters it with its own 4 x 3 block (one poisoned
   column on the second) and leaves it without a collective. out[i][j] = x[i][j] + k[i mod 4][j]. */
static void test_manual_open_dims_refined(void) {
    static const char *const text =
        "HloModule m, num_partitions=4\nENTRY e {\n"
        "  p = f32[8,5] parameter(0), sharding={devices=[1,2,2]<=[4] last_tile_dim_replicate}\n"
        "  a = f32[8,5] custom-call(p), custom_call_target=\"Sharding\", "
        "sharding={devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}, backend_config=\"unspecified_dims=[1]\"\n"
        "  m = f32[4,5] custom-call(a), custom_call_target=\"SPMDFullToShardShape\", "
        "sharding={devices=[1,1,2,2]0,2,1,3 last_tile_dims={manual, replicated}}, backend_config=\"unspecified_dims=[1]\"\n"
        "  k = f32[4,5] constant({{0,1,2,3,4},{10,11,12,13,14},{20,21,22,23,24},{30,31,32,33,34}})\n"
        "  n = f32[4,5] add(m, k)\n"
        "  b = f32[4,5] custom-call(n), custom_call_target=\"Sharding\", "
        "sharding={devices=[1,1,2,2]0,2,1,3 last_tile_dims={manual, replicated}}, backend_config=\"unspecified_dims=[1]\"\n"
        "  f = f32[8,5] custom-call(b), custom_call_target=\"SPMDShardToFullShape\", "
        "sharding={devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}, backend_config=\"unspecified_dims=[1]\"\n"
        "  ROOT r = f32[8,5] copy(f)\n}\n";
    open_dims_run(text, "n = f32[4,3] add(");
}

/* The same program built with the C API, its open dims given by gs_value_set_open_dims: printed with
   unspecified_dims on the four custom-calls, it partitions and runs as the text does; the setter's errors. */
static void test_manual_open_dims_api(void) {
    static const float kv[20] = {0, 1, 2, 3, 4, 10, 11, 12, 13, 14, 20, 21, 22, 23, 24, 30, 31, 32, 33, 34};
    static const char *const split = "{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}";
    static const char *const manual = "{devices=[1,1,2,2]0,2,1,3 last_tile_dims={manual, replicated}}";
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "m");
    int64_t full[2] = {8, 5}, blk[2] = {4, 5};
    gs_shape fs = gs_shape_make(GS_F32, 2, full), bs = gs_shape_make(GS_F32, 2, blk);
    gs_value *p = gs_parameter(g, 0, fs, "p"), *a, *m, *n, *b, *f;
    const char *text, *at;
    char *copy = NULL;
    int count = 0;
    CHECK_OK(gs_value_set_sharding_text(p, "{devices=[1,2,2]<=[4] last_tile_dim_replicate}"));
    a = gs_annotate(g, p, split);
    m = gs_to_manual(g, a, bs, manual);
    n = gs_add(g, m, gs_constant(g, bs, kv));
    b = gs_annotate(g, n, manual);
    f = gs_to_full(g, b, fs, split);
    gs_graph_set_root(g, gs_copy(g, f));
    gs_graph_set_num_partitions(g, 4);
    CHECK(a && m && n && b && f);
    if (!a || !m || !n || !b || !f) {
        gs_ctx_destroy(ctx);
        return;
    }
    CHECK_OK(gs_value_set_open_dims(a, 2));
    CHECK_OK(gs_value_set_open_dims(m, 2));
    CHECK_OK(gs_value_set_open_dims(b, 2));
    CHECK_OK(gs_value_set_open_dims(f, 2));
    CHECK(gs_value_open_dims(m) == 2);
    /* the errors: not an annotation or conversion, a dim past the rank, NULL */
    CHECK(gs_value_set_open_dims(n, 2) == GS_ERR_SHARDING);
    CHECK(strstr(gs_ctx_error_msg(ctx), "not on add") != NULL);
    gs_ctx_clear_error(ctx);
    CHECK(gs_value_set_open_dims(a, 4) == GS_ERR_SHARDING);
    CHECK(strstr(gs_ctx_error_msg(ctx), "outside rank 2") != NULL);
    gs_ctx_clear_error(ctx);
    CHECK(gs_value_open_dims(a) == 2);   /* a refused call changes nothing */
    CHECK(gs_value_set_open_dims(NULL, 1) == GS_ERR_INVALID_ARG);
    text = gs_hlo_print(g);
    CHECK(text != NULL);
    for (at = text; at && (at = strstr(at, "backend_config=\"unspecified_dims=[1]\"")) != NULL; at++) count++;
    CHECK_MSG(count == 4, "%s", text ? text : "");
    if (text && (copy = (char *)malloc(strlen(text) + 1)) != NULL) memcpy(copy, text, strlen(text) + 1);
    gs_ctx_destroy(ctx);
    if (!copy) return;
    open_dims_run(copy, "f32[4,3] add(");
    free(copy);
}

/* An op whose tuple sharding is {manual} in every element runs as written on each device's block, as XLA reads
   such a tuple (before, rng-bit-generator's rule asked for its state replicated and the partition failed).
   Each device's bits are those the interpreter draws from that device's half of the state. */
static void test_manual_tuple_sharding(void) {
    static const char *const text =
        "HloModule m, num_partitions=2\nENTRY e {\n"
        "  st = u64[4] parameter(0), sharding={devices=[2]<=[2]}\n"
        "  ms = u64[2] custom-call(st), custom_call_target=\"SPMDFullToShardShape\", sharding={manual}\n"
        "  g = (u64[2], u32[2,3]) rng-bit-generator(ms), algorithm=rng_three_fry, sharding={{manual}, {manual}}\n"
        "  b = u32[2,3] get-tuple-element(g), index=1, sharding={manual}\n"
        "  ROOT r = u32[4,3] custom-call(b), custom_call_target=\"SPMDShardToFullShape\", "
        "sharding={devices=[2,1]<=[2]}\n}\n";
    static const char *const one =
        "HloModule one\nENTRY e {\n  s = u64[2] parameter(0)\n"
        "  g = (u64[2], u32[2,3]) rng-bit-generator(s), algorithm=rng_three_fry\n"
        "  ROOT b = u32[2,3] get-tuple-element(g), index=1\n}\n";
    static const uint64_t st[4] = {1, 2, 0x123456789abcdefULL, 42};
    uint32_t got[12], want[12];
    const void *in[1];
    const char *err;
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = NULL;
    int d, i;
    CHECK_OK(gs_hlo_parse(ctx, one, strlen(one), &g));
    for (d = 0; d < 2 && g; d++) {
        const void *sin[1];
        void *sout[1];
        sin[0] = st + 2 * d;
        sout[0] = want + 6 * d;
        CHECK_OK(gs_eval(g, sin, sout));
    }
    gs_ctx_destroy(ctx);
    in[0] = st;
    err = man_run(text, 2, in, got, NULL);
    CHECK_MSG(err == NULL, "%s", err ? err : "");
    if (!err)
        for (i = 0; i < 12; i++) CHECK_MSG(got[i] == want[i], "element %d: got %u, want %u", i, got[i], want[i]);
    CHECK(want[0] != want[6]);   /* the two halves of the state draw different bits */
}

/* Collectives written outside manual regions: an all-reduce with channel_id over 3 devices on a replicated
   value sums the 3 copies, 3 x, as XLA partitions it. Without channel_id it is across replicas (XLA), and there
   is one: x as it is, on a replicated or a split value alike. With channel_id on a value the program splits
   over the devices: an error (XLA has no meaning for it outside manual regions either); on one propagation split
   (nothing annotates the all-reduce) it is held replicated, as XLA's partitioner holds an unannotated
   instruction: 4 devices sum their copies, 4 x, each device holding the whole result. */
static void test_manual_collectives_outside(void) {
    static const char *const fmt =
        "HloModule m, num_partitions=%d\n"
        "sum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
        "ENTRY e {\n"
        "  x = f32[5,3] parameter(0), sharding=%s\n"
        "  ROOT r = f32[5,3] all-reduce(x), to_apply=sum, replica_groups=%s, sharding=%s\n}\n";
    char text[1024];
    float x[15], got[15];
    const void *in[1];
    const char *err;
    int i;
    for (i = 0; i < 15; i++) x[i] = (float)i * 0.5f - 3;
    in[0] = x;
    snprintf(text, sizeof text, fmt, 2, "{replicated}", "{}", "{replicated}");
    err = man_run(text, 2, in, got, NULL);
    CHECK_MSG(err == NULL, "%s", err ? err : "");
    for (i = 0; !err && i < 15; i++) CHECK_MSG(got[i] == x[i], "element %d: got %g, want %g", i, got[i], x[i]);
    snprintf(text, sizeof text, fmt, 3, "{devices=[3,1]<=[3]}", "{{0}}", "{devices=[3,1]<=[3]}");
    err = man_run(text, 3, in, got, NULL);
    CHECK_MSG(err == NULL, "%s", err ? err : "");
    for (i = 0; !err && i < 15; i++) CHECK_MSG(got[i] == x[i], "element %d: got %g, want %g", i, got[i], x[i]);
    snprintf(text, sizeof text, fmt, 2, "{devices=[2,1]<=[2]}", "{{0,1}}", "{devices=[2,1]<=[2]}");
    err = man_run(text, 2, in, got, NULL);
    CHECK_MSG(err && strstr(err, "reads its groups as replicas, and there is one"), "%s", err ? err : "(ran)");
    snprintf(text, sizeof text, fmt, 3, "{replicated}", "{{0,1,2}}, use_global_device_ids=true, channel_id=1",
             "{replicated}");
    err = man_run(text, 3, in, got, NULL);
    CHECK_MSG(err == NULL, "%s", err ? err : "");
    for (i = 0; !err && i < 15; i++) CHECK_MSG(got[i] == 3 * x[i], "element %d: got %g, want %g", i, got[i], 3 * x[i]);
    /* split over the devices, an all-reduce with channel_id has no meaning XLA gives it outside manual regions */
    snprintf(text, sizeof text, fmt, 2, "{devices=[2,1]<=[2]}", "{{0,1}}, use_global_device_ids=true, channel_id=1",
             "{devices=[2,1]<=[2]}");
    err = man_run(text, 2, in, got, NULL);
    CHECK_MSG(err && strstr(err, "outside a manual region"), "%s", err ? err : "(ran)");
    {
        static const char *const held =
            "HloModule m, num_partitions=4\n"
            "sum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
            "ENTRY e {\n  x = f32[5,3] parameter(0), sharding={devices=[2,2]<=[4]}\n"
            "  ROOT r = f32[5,3] all-reduce(x), to_apply=sum, replica_groups={{0,1,2,3}}, use_global_device_ids=true, "
            "channel_id=1\n}\n";
        char *prog = NULL;
        err = man_run(held, 4, in, got, &prog);
        CHECK_MSG(err == NULL, "%s", err ? err : "");
        for (i = 0; !err && i < 15; i++) CHECK_MSG(got[i] == 4 * x[i], "element %d: got %g, want %g", i, got[i], 4 * x[i]);
        CHECK_MSG(prog && strstr(prog, "ROOT r = f32[5,3] all-reduce("), "%s", prog ? prog : "");
        free(prog);
    }
}

/* All-gather, reduce-scatter and all-to-all written in a region manual over 2 groups ({0,1} and {2,3}, each
   group's rows A_0 = x[0:n], A_1 = x[n:2n], split 2 ways along its 5 columns, so one block has a poisoned column):
   each runs as written on its group's whole value, across the groups {0,2} and {1,3}. all-gather: both groups
   hold [A_0; A_1]; reduce-scatter: group g gets rows 2g..2g+1 of A_0 + A_1; all-to-all (split rows, concat
   columns): group g gets [A_0 rows 2g..2g+1 | A_1 rows 2g..2g+1]. Groups that would give two devices of one
   manual group different values are errors. */
static void test_manual_partial_whole_collectives(void) {
    static const char *const fmt =
        "HloModule m, num_partitions=4\n"
        "sum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
        "ENTRY e {\n"
        "  x = f32[%d,5] parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}\n"
        "  m = f32[%d,5] custom-call(x), custom_call_target=\"SPMDFullToShardShape\", "
        "sharding={devices=[1,1,2,2]<=[4] last_tile_dims={manual, replicated}}\n"
        "  c = f32[%d,5] copy(m), sharding={devices=[1,2,2]<=[2,2]T(1,0) last_tile_dims={manual}}\n"
        "  g = %s%s, replica_groups=%s, use_global_device_ids=true%s\n"
        "  ROOT r = %s custom-call(g), custom_call_target=\"SPMDShardToFullShape\", "
        "sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}\n}\n";
    static const char *const ch = ", channel_id=1", *across = "{{0,2},{1,3}}";
    static const char *const sh = ", sharding={devices=[1,2,2]<=[2,2]T(1,0) last_tile_dims={manual}}";
    char text[2048];
    float x[40], got[60];
    const void *in[1];
    const char *err;
    int i;
    for (i = 0; i < 40; i++) x[i] = (float)i * 0.5f - 6;
    in[0] = x;
    snprintf(text, sizeof text, fmt, 6, 3, 3, "f32[6,5] all-gather(c), dimensions={0}", ch, across, sh, "f32[12,5]");
    err = man_run(text, 4, in, got, NULL);
    CHECK_MSG(err == NULL, "all-gather: %s", err ? err : "");
    for (i = 0; !err && i < 60; i++) CHECK_MSG(got[i] == x[i % 30], "element %d: got %g, want %g", i, got[i], x[i % 30]);
    /* the all-gather not annotated: propagation leaves it {replicated}, which after a partly manual value means
       each group's whole value (docs/sharding.md) */
    snprintf(text, sizeof text, fmt, 6, 3, 3, "f32[6,5] all-gather(c), dimensions={0}", ch, across, "", "f32[12,5]");
    err = man_run(text, 4, in, got, NULL);
    CHECK_MSG(err == NULL, "all-gather, not annotated: %s", err ? err : "");
    for (i = 0; !err && i < 60; i++) CHECK_MSG(got[i] == x[i % 30], "element %d: got %g, want %g", i, got[i], x[i % 30]);
    snprintf(text, sizeof text, fmt, 8, 4, 4, "f32[2,5] reduce-scatter(c), dimensions={0}, to_apply=sum", ch, across, sh, "f32[4,5]");
    err = man_run(text, 4, in, got, NULL);
    CHECK_MSG(err == NULL, "reduce-scatter: %s", err ? err : "");
    for (i = 0; !err && i < 20; i++) CHECK_MSG(got[i] == x[i] + x[i + 20], "element %d: got %g, want %g", i, got[i], x[i] + x[i + 20]);
    snprintf(text, sizeof text, fmt, 8, 4, 4, "f32[2,10] all-to-all(c), split_dimension=0, concat_dimension=1", ch,
             across, sh, "f32[4,10]");
    err = man_run(text, 4, in, got, NULL);
    CHECK_MSG(err == NULL, "all-to-all: %s", err ? err : "");
    for (i = 0; !err && i < 40; i++) {
        int r = i / 10, c = i % 10;
        float want = c < 5 ? x[r * 5 + c] : x[(4 + r) * 5 + c - 5];
        CHECK_MSG(got[i] == want, "element %d: got %g, want %g", i, got[i], want);
    }
    /* device 0 would hold [A_0; A_1] and device 1 (the same manual group) [A_1; A_0] */
    snprintf(text, sizeof text, fmt, 6, 3, 3, "f32[6,5] all-gather(c), dimensions={0}", ch, "{{0,2},{3,1}}", sh, "f32[12,5]");
    err = man_run(text, 4, in, got, NULL);
    CHECK_MSG(err && strstr(err, "devices 0 and 1 hold one manual group's value but their groups join different manual groups"),
              "%s", err ? err : "(ran)");
    /* within each group: the all-gather gives both devices [A_g; A_g]; the reduce-scatter would give them
       different halves of 2 A_g */
    snprintf(text, sizeof text, fmt, 6, 3, 3, "f32[6,5] all-gather(c), dimensions={0}", ch, "{{0,1},{2,3}}", sh, "f32[12,5]");
    err = man_run(text, 4, in, got, NULL);
    CHECK_MSG(err == NULL, "all-gather within groups: %s", err ? err : "");
    for (i = 0; !err && i < 60; i++) {
        int r = i / 5, g = r / 6, rr = r % 3;
        CHECK_MSG(got[i] == x[(3 * g + rr) * 5 + i % 5], "element %d: got %g, want %g", i, got[i], x[(3 * g + rr) * 5 + i % 5]);
    }
    snprintf(text, sizeof text, fmt, 8, 4, 4, "f32[2,5] reduce-scatter(c), dimensions={0}, to_apply=sum", ch,
             "{{0,1},{2,3}}", sh, "f32[4,5]");
    err = man_run(text, 4, in, got, NULL);
    CHECK_MSG(err && strstr(err, "their groups place them differently"), "%s", err ? err : "(ran)");
    snprintf(text, sizeof text, fmt, 6, 3, 3, "f32[6,5] all-gather(c), dimensions={0}", "", across, sh, "f32[12,5]");
    err = man_run(text, 4, in, got, NULL);
    CHECK_MSG(err && strstr(err, "without channel_id"), "%s", err ? err : "(ran)");
}

/* ---- tuple entry parameters in the CLI: one .npy file per leaf, NAME[I] (nested tuples flattened in order) ---- */
static char man_tmp[256];

static void man_write(const char *name, const char *text) {
    char p[512];
    FILE *f;
    snprintf(p, sizeof p, "%s/%s", man_tmp, name);
    f = fopen(p, "wb");
    CHECK(f != NULL);
    if (!f) return;
    fwrite(text, 1, strlen(text), f);
    fclose(f);
}

/* out0.npy of DIR in man_tmp against out[r][c] = a[r][c] * b[c] + i[r] */
static void man_check_out(gs_ctx *ctx, const char *dir, const float *a, const int32_t *iv, const float *b) {
    char p[512];
    gs_shape s;
    void *d = NULL;
    int r, c;
    snprintf(p, sizeof p, "%s/%s/out0.npy", man_tmp, dir);
    CHECK_OK(gs_npy_read(ctx, p, GS_F32, &s, &d));
    CHECK(s.rank == 2 && s.dims[0] == 5 && s.dims[1] == 3);
    for (r = 0; d && r < 5; r++)
        for (c = 0; c < 3; c++)
            CHECK_MSG(((float *)d)[r * 3 + c] == a[r * 3 + c] * b[c] + (float)iv[r], "%s: out[%d][%d] = %g, want %g", dir,
                      r, c, ((float *)d)[r * 3 + c], a[r * 3 + c] * b[c] + (float)iv[r]);
    gs_free_data(ctx, d);
}

static void test_manual_cli_tuple_parameters(void) {
    static const char *const nested =
        "HloModule nested\nENTRY e {\n"
        "  t = (f32[5,3], (s32[5], f32[3])) parameter(0)\n"
        "  a = f32[5,3] get-tuple-element(t), index=0\n"
        "  n = (s32[5], f32[3]) get-tuple-element(t), index=1\n"
        "  i = s32[5] get-tuple-element(n), index=0\n"
        "  b = f32[3] get-tuple-element(n), index=1\n"
        "  bb = f32[5,3] broadcast(b), dimensions={1}\n"
        "  fi = f32[5] convert(i)\n"
        "  bi = f32[5,3] broadcast(fi), dimensions={0}\n"
        "  m = f32[5,3] multiply(a, bb)\n"
        "  ROOT r = f32[5,3] add(m, bi)\n}\n";
    static const char *const flat =
        "HloModule flat\nENTRY e {\n"
        "  t = (f32[5,3], s32[5], f32[3]) parameter(0), "
        "sharding={{devices=[2,1]<=[2]}, {devices=[2]<=[2]}, {replicated}}\n"
        "  a = f32[5,3] get-tuple-element(t), index=0\n"
        "  i = s32[5] get-tuple-element(t), index=1\n"
        "  b = f32[3] get-tuple-element(t), index=2\n"
        "  bb = f32[5,3] broadcast(b), dimensions={1}\n"
        "  fi = f32[5] convert(i)\n"
        "  bi = f32[5,3] broadcast(fi), dimensions={0}\n"
        "  m = f32[5,3] multiply(a, bb)\n"
        "  ROOT r = f32[5,3] add(m, bi), sharding={devices=[2,1]<=[2]}\n}\n";
    float a[15], b[3] = {0.5f, -2, 3};
    int32_t iv[5] = {7, -1, 0, 4, 100};
    int64_t ad[2] = {5, 3}, idim = 5, bdim = 3;
    char p[512];
    gs_ctx *ctx;
    int k;
    if (access(gst_gshard_bin(), X_OK) != 0) {
        CHECK_MSG(0, "%s not found: build it first (make test builds it)", gst_gshard_bin());
        return;
    }
    snprintf(man_tmp, sizeof man_tmp, "%s/gshard_manual_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(man_tmp)) {
        CHECK_MSG(0, "mkdtemp failed");
        return;
    }
    ctx = gst_ctx();
    for (k = 0; k < 15; k++) a[k] = (float)k * 0.25f - 1;
    man_write("nested.hlo", nested);
    man_write("flat.hlo", flat);
    snprintf(p, sizeof p, "%s/a.npy", man_tmp);
    CHECK_OK(gs_npy_write(ctx, p, gs_shape_make(GS_F32, 2, ad), a));
    snprintf(p, sizeof p, "%s/i.npy", man_tmp);
    CHECK_OK(gs_npy_write(ctx, p, gs_shape_make(GS_S32, 1, &idim), iv));
    snprintf(p, sizeof p, "%s/b.npy", man_tmp);
    CHECK_OK(gs_npy_write(ctx, p, gs_shape_make(GS_F32, 1, &bdim), b));
    /* a nested tuple: its three leaves by name and by parameter number */
    CHECK_EQ_INT(gst_cli(man_tmp, "eval %s/nested.hlo --input 't[0]=%s/a.npy' --input '0[1]=%s/i.npy' "
                         "--input 't[2]=%s/b.npy' --output-dir %s/ev", man_tmp, man_tmp, man_tmp, man_tmp, man_tmp), 0);
    CHECK_MSG(gst_cli_err[0] == 0, "stderr: %s", gst_cli_err);
    man_check_out(ctx, "ev", a, iv, b);
    /* a flat tuple split over 2 devices (5 rows: the second device's block is padded), checked and written */
    CHECK_EQ_INT(gst_cli(man_tmp, "run %s/flat.hlo --devices 2 --check --input 't[0]=%s/a.npy' --input 't[1]=%s/i.npy' "
                         "--input 't[2]=%s/b.npy' --output-dir %s/run", man_tmp, man_tmp, man_tmp, man_tmp, man_tmp), 0);
    CHECK_MSG(strstr(gst_cli_out, "check: ok") != NULL, "%s%s", gst_cli_out, gst_cli_err);
    man_check_out(ctx, "run", a, iv, b);
    /* leaves without --input come from the generator; the check still runs */
    CHECK_EQ_INT(gst_cli(man_tmp, "run %s/flat.hlo --devices 2 --check --seed 3", man_tmp), 0);
    CHECK_MSG(strstr(gst_cli_out, "check: ok, 15 elements") != NULL, "%s%s", gst_cli_out, gst_cli_err);
    /* a tuple given whole, a leaf out of range, an index on an array: exit 2, naming the leaves */
    CHECK_EQ_INT(gst_cli(man_tmp, "eval %s/nested.hlo --input t=%s/a.npy", man_tmp, man_tmp), 2);
    CHECK_MSG(strstr(gst_cli_err, "is a tuple of 3 arrays") && strstr(gst_cli_err, "t[2]  f32[3]"), "%s", gst_cli_err);
    CHECK_EQ_INT(gst_cli(man_tmp, "eval %s/nested.hlo --input 't[3]=%s/a.npy'", man_tmp, man_tmp), 2);
    CHECK_MSG(strstr(gst_cli_err, "I = 0..2") != NULL, "%s", gst_cli_err);
    CHECK_EQ_INT(gst_cli(man_tmp, "eval %s/nested.hlo --input 't[0]=%s/b.npy'", man_tmp, man_tmp), 2);
    CHECK_MSG(strstr(gst_cli_err, "holds f32[3] but leaf 0 of parameter 0 (t) is f32[5,3]") != NULL, "%s", gst_cli_err);
    CHECK_EQ_INT(gst_cli(man_tmp, "eval %s/nested.hlo --input 't[1]=%s/a.npy'", man_tmp, man_tmp), 2);
    CHECK_MSG(strstr(gst_cli_err, "s32 was expected") != NULL, "%s", gst_cli_err);
    gs_ctx_destroy(ctx);
}

void suite_spmd_manual(void) {
    RUN(test_manual_partial_collective_permute);
    RUN(test_manual_partial_all_reduce);
    RUN(test_manual_partial_to_replicated);
    RUN(test_manual_partial_reduce);
    RUN(test_manual_collectives_outside);
    RUN(test_manual_partial_whole_collectives);
    RUN(test_manual_partial_collectives_random);
    RUN(test_manual_open_dims_refined);
    RUN(test_manual_open_dims_api);
    RUN(test_manual_tuple_sharding);
    RUN(test_manual_cli_tuple_parameters);
}
