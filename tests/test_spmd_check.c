/* test_spmd_check.c - gs_partition_check: agreement, a mismatch traced to its first instruction and device,
   tolerances, tuple outputs, threaded runtimes, and bad arguments; gs_partition_check_gathered (outputs gathered
   elsewhere) against it; gs_eval_devices.

   The mismatch is real, not staged: a sum over a dim split across two devices adds in another order than the
   reference. With x = [1e8, 1, -1e8, 1] the reference adds left to right, ((1e8 + 1) - 1e8) + 1 = 1 in f32
   (1e8 + 1 rounds back to 1e8), while each device sums its half first: 1e8 + 1 = 1e8 and -1e8 + 1 = -1e8,
   and the all-reduce gives 0. */
#include "test.h"

/* x f32[4] split 2 ways -> s = reduce-sum(x) -> out = s * 2 (and optionally x itself as a second output) */
static gs_graph *sum_program(gs_ctx *ctx, bool two_outputs, gs_value **reduce_out, gs_value **mul_out) {
    int64_t d4[1] = {4}, zero = 0;
    gs_graph *g = gs_graph_new(ctx, "sum");
    gs_value *x = gs_parameter(g, 0, gs_shape_make(GS_F32, 1, d4), "x");
    gs_value *xs = gs_split(g, x, 0, 2);
    gs_value *s = gs_reduce(g, xs, gs_scalar(g, GS_F32, 0), GS_REDUCE_SUM, 1, &zero);
    gs_value *m = gs_mul(g, s, gs_scalar(g, GS_F32, 2));
    gs_value *outs[2];
    outs[0] = m;
    outs[1] = xs;
    if (two_outputs) gs_graph_set_outputs(g, 2, outs);
    else gs_graph_set_root(g, m);
    gs_graph_set_num_partitions(g, 2);
    *reduce_out = s;
    *mul_out = m;
    return g;
}

static gs_runtime *make_rt(gs_ctx *ctx, int64_t D, gs_runtime_mode mode) {
    gs_runtime_desc rd;
    gs_runtime *rt = NULL;
    memset(&rd, 0, sizeof rd);
    rd.num_devices = D;
    rd.mode = mode;
    CHECK_OK(gs_runtime_create(ctx, &rd, &rt));
    return rt;
}

static gs_graph *partition(gs_graph *g, int64_t D) {
    gs_partition_desc pd;
    gs_graph *spmd = NULL;
    memset(&pd, 0, sizeof pd);
    pd.num_devices = D;
    CHECK_OK(gs_partition(g, &pd, &spmd));
    return spmd;
}

static void check_located(gs_runtime_mode mode) {
    gs_ctx *ctx = gst_ctx();
    gs_value *s, *m;
    gs_graph *g = sum_program(ctx, false, &s, &m), *spmd = partition(g, 2);
    gs_runtime *rt = make_rt(ctx, 2, mode);
    float x[4] = {1e8f, 1, -1e8f, 1};
    const void *in[1];
    gs_check_desc cd;
    gs_check_report rep;
    in[0] = x;
    memset(&cd, 0, sizeof cd);
    cd.locate = true;
    CHECK_OK(gs_partition_check(spmd, rt, &cd, in, &rep));
    CHECK(!rep.ok);
    CHECK_EQ_INT(rep.n_compared, 1);
    CHECK_EQ_INT(rep.output, 0);
    CHECK(rep.first_bad == s);        /* the sum, not the output computed from it */
    CHECK_EQ_INT(rep.index, 0);
    CHECK_EQ_INT(rep.device, 0);
    CHECK_NEAR(rep.got, 0.0, 0.0);
    CHECK_NEAR(rep.want, 1.0, 0.0);
    CHECK_NEAR(rep.max_abs_err, 2.0, 0.0);   /* the output: 0 instead of 2 */
    CHECK_MSG(strstr(rep.message, gs_value_name(s)) && strstr(rep.message, "device 0") && strstr(rep.message, "got 0, want 1") &&
                  strstr(rep.message, "element []") && strstr(rep.message, gs_value_name(m)),
              "message: %s", rep.message);
    gs_runtime_destroy(rt);
    gs_ctx_destroy(ctx);
}

static void test_check_mismatch_located(void) { check_located(GS_RUNTIME_LOCKSTEP); }
/* the observers run on the device threads (make tsan runs this one) */
static void test_check_runtime_threaded(void) { check_located(GS_RUNTIME_THREADED); }

static void test_check_mismatch_unlocated_and_tolerance(void) {
    gs_ctx *ctx = gst_ctx();
    gs_value *s, *m;
    gs_graph *g = sum_program(ctx, true, &s, &m), *spmd = partition(g, 2);
    gs_runtime *rt = make_rt(ctx, 2, GS_RUNTIME_LOCKSTEP);
    float x[4] = {1e8f, 1, -1e8f, 1};
    const void *in[1];
    gs_check_desc cd;
    gs_check_report rep;
    in[0] = x;
    /* without locate: the output's own instruction and values */
    memset(&cd, 0, sizeof cd);
    CHECK_OK(gs_partition_check(spmd, rt, &cd, in, &rep));
    CHECK(!rep.ok);
    CHECK_EQ_INT(rep.n_compared, 5);   /* s * 2 and the 4 elements of x */
    CHECK_EQ_INT(rep.output, 0);
    CHECK(rep.first_bad == m);
    CHECK_NEAR(rep.got, 0.0, 0.0);
    CHECK_NEAR(rep.want, 2.0, 0.0);
    CHECK_MSG(strstr(rep.message, "output 0") && strstr(rep.message, "got 0, want 2") && strstr(rep.message, "1 of 5"),
              "message: %s", rep.message);
    /* a tolerance that covers the difference: |0 - 2| <= 1 + 0.5 * 2 */
    cd.atol = 1;
    cd.rtol = 0.5;
    CHECK_OK(gs_partition_check(spmd, rt, &cd, in, &rep));
    CHECK(rep.ok);
    CHECK(rep.message && rep.message[0] == 0);
    CHECK_NEAR(rep.max_abs_err, 2.0, 0.0);
    cd.rtol = 0.49;
    CHECK_OK(gs_partition_check(spmd, rt, &cd, in, &rep));
    CHECK(!rep.ok);
    /* a difference below the defaults (reference 2e-8, partitioned 0: 1 + 1e-8 rounds to 1 on each device):
       0, 0 means the defaults, and exact comparison with tolerances_given */
    x[0] = 1;
    x[1] = 1e-8f;
    x[2] = -1;
    x[3] = 1e-8f;
    memset(&cd, 0, sizeof cd);
    CHECK_OK(gs_partition_check(spmd, rt, &cd, in, &rep));
    CHECK_MSG(rep.ok, "%s", rep.message);
    CHECK(rep.max_abs_err > 1e-8 && rep.max_abs_err < 3e-8);
    cd.tolerances_given = true;
    CHECK_OK(gs_partition_check(spmd, rt, &cd, in, &rep));
    CHECK(!rep.ok);
    CHECK_NEAR(rep.got, 0.0, 0.0);
    CHECK_MSG(strstr(rep.message, "tolerance 0 + 0 * |want|") != NULL, "message: %s", rep.message);
    cd.atol = 3e-8;   /* given tolerances that cover it */
    CHECK_OK(gs_partition_check(spmd, rt, &cd, in, &rep));
    CHECK(rep.ok);
    gs_runtime_destroy(rt);
    gs_ctx_destroy(ctx);
}

/* Values that add up exactly in any order: the partitioned program agrees bit for bit, on an uneven split
   (6 rows over 4 devices: 2, 2, 2, 0) with a tiled output. */
static void test_check_agrees(void) {
    gs_ctx *ctx = gst_ctx();
    int64_t d[2] = {6, 5}, one = 1, tiles[2] = {4, 1}, i;
    gs_graph *g = gs_graph_new(ctx, "rows"), *spmd;
    gs_value *x = gs_parameter(g, 0, gs_shape_make(GS_F32, 2, d), "x");
    gs_value *xs = gs_shard(g, x, tiles, NULL);
    gs_value *r = gs_reduce(g, gs_unary(g, GS_OP_ABS, xs), gs_scalar(g, GS_F32, 0), GS_REDUCE_SUM, 1, &one);
    gs_runtime *rt = make_rt(ctx, 4, GS_RUNTIME_LOCKSTEP);
    float xv[30];
    const void *in[1];
    gs_check_desc cd;
    gs_check_report rep;
    gs_graph_set_root(g, r);
    gs_graph_set_num_partitions(g, 4);
    spmd = partition(g, 4);
    for (i = 0; i < 30; i++) xv[i] = (float)(i % 7) * 0.25f - 0.75f;
    in[0] = xv;
    memset(&cd, 0, sizeof cd);
    cd.tolerances_given = true;   /* exact: every sum of these values is exact in any order */
    cd.locate = true;
    CHECK_OK(gs_partition_check(spmd, rt, &cd, in, &rep));
    CHECK_MSG(rep.ok, "%s", rep.message);
    CHECK_EQ_INT(rep.n_compared, 6);
    CHECK_NEAR(rep.max_abs_err, 0.0, 0.0);
    CHECK_EQ_INT(rep.output, -1);
    CHECK(rep.first_bad == NULL);
    gs_runtime_destroy(rt);
    gs_ctx_destroy(ctx);
}

static void test_check_errors(void) {
    gs_ctx *ctx = gst_ctx();
    gs_value *s, *m;
    gs_graph *g = sum_program(ctx, false, &s, &m), *spmd = partition(g, 2);
    gs_runtime *rt2 = make_rt(ctx, 2, GS_RUNTIME_LOCKSTEP), *rt3 = make_rt(ctx, 3, GS_RUNTIME_LOCKSTEP);
    float x[4] = {1, 2, 3, 4};
    const void *in[1];
    gs_check_desc cd;
    gs_check_report rep;
    in[0] = x;
    memset(&cd, 0, sizeof cd);
    CHECK(gs_partition_check(g, rt2, &cd, in, &rep) == GS_ERR_INVALID_ARG);   /* not an SPMD program */
    CHECK(strstr(gs_ctx_error_msg(ctx), "not a program made by gs_partition") != NULL);
    CHECK(!rep.ok && rep.message && rep.message[0] == 0);
    gs_ctx_clear_error(ctx);
    CHECK(gs_partition_check(spmd, rt3, &cd, in, &rep) == GS_ERR_INVALID_ARG);
    CHECK(strstr(gs_ctx_error_msg(ctx), "partitioned for 2 devices but the runtime has 3") != NULL);
    gs_ctx_clear_error(ctx);
    CHECK(gs_partition_check(spmd, NULL, &cd, in, &rep) == GS_ERR_INVALID_ARG);
    gs_ctx_clear_error(ctx);
    CHECK(gs_partition_check(spmd, rt2, &cd, in, NULL) == GS_ERR_INVALID_ARG);
    gs_ctx_clear_error(ctx);
    CHECK(gs_partition_check(spmd, rt2, &cd, NULL, &rep) == GS_ERR_INVALID_ARG);
    CHECK(strstr(gs_ctx_error_msg(ctx), "inputs is NULL") != NULL);
    gs_ctx_clear_error(ctx);
    cd.rtol = -1;
    CHECK(gs_partition_check(spmd, rt2, &cd, in, &rep) == GS_ERR_INVALID_ARG);
    CHECK(strstr(gs_ctx_error_msg(ctx), "tolerances must be >= 0") != NULL);
    gs_ctx_clear_error(ctx);
    CHECK(gs_partition_check(NULL, rt2, &cd, in, &rep) == GS_ERR_INVALID_ARG);
    /* defaults (desc NULL) on inputs that add up exactly */
    CHECK_OK(gs_partition_check(spmd, rt2, NULL, in, &rep));
    CHECK(rep.ok);
    gs_runtime_destroy(rt2);
    gs_runtime_destroy(rt3);
    gs_ctx_destroy(ctx);
}

/* the start of a 4-device program whose manual region s sums the four 2-row blocks of p with a written all-reduce */
#define MANUAL_SUM_HEAD \
    "HloModule m, num_partitions=4\n" \
    "add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }\n" \
    "ENTRY e {\n" \
    "  p = f32[8,3] parameter(0), sharding={devices=[4,1]<=[4]}\n" \
    "  m = f32[2,3] custom-call(p), custom_call_target=\"SPMDFullToShardShape\", sharding={manual}\n" \
    "  s = f32[2,3] all-reduce(m), channel_id=1, replica_groups={{0,1,2,3}}, use_global_device_ids=true, " \
    "to_apply=add, sharding={manual}\n"

/* gs_eval_devices: a manual region whose blocks are summed by a written all-reduce, against the values worked
   out here (device d holds rows 2d, 2d+1; every device gets the sum of the four blocks, times 1 + its own
   block); a program without manual regions is gs_eval's; bad device counts are errors. */
static void test_eval_devices(void) {
    static const char *text =
        MANUAL_SUM_HEAD
        "  one = f32[] constant(1), sharding={manual}\n"
        "  b = f32[2,3] broadcast(one), dimensions={}, sharding={manual}\n"
        "  x = f32[2,3] add(m, b), sharding={manual}\n"
        "  y = f32[2,3] multiply(s, x), sharding={manual}\n"
        "  ROOT f = f32[8,3] custom-call(y), custom_call_target=\"SPMDShardToFullShape\", sharding={devices=[4,1]<=[4]}\n"
        "}\n";
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx, text), *plain;
    float in[24], out[24], sum[6], plain_out[24], want_plain[24];
    const void *ins[1];
    void *outs[1];
    int i, d;
    gs_value *p, *e;
    int64_t dims[1] = {24};
    for (i = 0; i < 24; i++) in[i] = (float)(i % 5) - 1.5f;
    for (i = 0; i < 6; i++) sum[i] = in[i] + in[6 + i] + in[12 + i] + in[18 + i];
    ins[0] = in;
    outs[0] = out;
    CHECK(g != NULL);
    if (g) {
        CHECK(gs_eval(g, ins, outs) == GS_ERR_UNSUPPORTED);   /* the region's block is not the array */
        gs_ctx_clear_error(ctx);
        CHECK_OK(gs_eval_devices(g, 4, ins, outs));
        for (d = 0; d < 4; d++)
            for (i = 0; i < 6; i++) CHECK_NEAR(out[6 * d + i], sum[i] * (in[6 * d + i] + 1.0f), 0.0);
        CHECK(gs_eval_devices(g, 0, ins, outs) == GS_ERR_INVALID_ARG);
        CHECK(strstr(gs_ctx_error_msg(ctx), "num_devices 0") != NULL);
        gs_ctx_clear_error(ctx);
        CHECK(gs_eval_devices(g, 3, ins, outs) != GS_OK);   /* 8 rows cannot be the blocks of 3 devices as written */
        gs_ctx_clear_error(ctx);
    }
    CHECK(gs_eval_devices(NULL, 4, ins, outs) == GS_ERR_INVALID_ARG);
    /* no manual region: exactly gs_eval */
    plain = gs_graph_new(ctx, "plain");
    p = gs_parameter(plain, 0, gs_shape_make(GS_F32, 1, dims), "p");
    e = gs_unary(plain, GS_OP_EXP, p);
    gs_graph_set_root(plain, e);
    outs[0] = plain_out;
    CHECK_OK(gs_eval_devices(plain, 4, ins, outs));
    outs[0] = want_plain;
    CHECK_OK(gs_eval(plain, ins, outs));
    CHECK(memcmp(plain_out, want_plain, sizeof plain_out) == 0);
    gs_ctx_destroy(ctx);
}

/* spmd's global outputs from a thread runtime (what an MPI run gathers on rank 0) */
static void run_gathered(gs_graph *src, gs_graph *spmd, int64_t D, const gs_shape *in_shapes, int n_in,
                         const void *const *ins, void *const *outs) {
    gs_runtime *rt = make_rt(gs_graph_ctx(spmd), D, GS_RUNTIME_THREADED);
    const gs_sharding *in_sh[4], *out_sh[1];
    gs_shape out_shape = gs_graph_output_shape(src, 0);
    int k;
    for (k = 0; k < n_in; k++) in_sh[k] = gs_partition_param_sharding(spmd, k);
    out_sh[0] = gs_partition_output_sharding(spmd, 0);
    CHECK_OK(gs_runtime_run_global(rt, spmd, in_shapes, in_sh, ins, &out_shape, out_sh, outs));
    gs_runtime_destroy(rt);
}

/* gs_partition_check_gathered: a bf16 contraction split 4 ways (each device rounds its partial sum to bf16 before
   the all-reduce) passes with the defaults exactly when gs_partition_check passes, with the same worst difference
   (which 1e-5 would not cover); exact tolerances find the difference "as gathered" (device -1); one planted wrong
   element is named with the reference's value; a manual region's reference runs on the devices; bad arguments. */
static void test_check_gathered(void) {
    static const char *text =
        "HloModule bf16_sums, num_partitions=4\n"
        "ENTRY e {\n"
        "  a = bf16[8,256] parameter(0), sharding={devices=[1,4]<=[4]}\n"
        "  b = bf16[256,8] parameter(1), sharding={devices=[4,1]<=[4]}\n"
        "  ROOT r = bf16[8,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}\n"
        "}\n";
    static const char *manual_text =
        MANUAL_SUM_HEAD
        "  ROOT f = f32[8,3] custom-call(s), custom_call_target=\"SPMDShardToFullShape\", sharding={devices=[4,1]<=[4]}\n"
        "}\n";
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx, text), *spmd, *mg, *mspmd;
    gs_shape shapes[2];
    uint16_t a[8 * 256], b[256 * 8], out[64], ref[64];
    float mp[24], mout[24];
    const void *ins[2];
    void *outs[1];
    gs_runtime *rt;
    gs_check_desc cd;
    gs_check_report rep, trep;
    CHECK(g != NULL);
    if (!g) {
        gs_ctx_destroy(ctx);
        return;
    }
    shapes[0] = gs_value_shape(gs_graph_param(g, 0));
    shapes[1] = gs_value_shape(gs_graph_param(g, 1));
    gs_fill_random(shapes[0], 3, 0, a);
    gs_fill_random(shapes[1], 3, 1, b);
    ins[0] = a;
    ins[1] = b;
    spmd = partition(g, 4);
    outs[0] = out;
    run_gathered(g, spmd, 4, shapes, 2, ins, outs);
    outs[0] = ref;
    CHECK_OK(gs_eval(g, ins, outs));
    /* the defaults: the same verdict and worst difference as the check on the devices */
    memset(&cd, 0, sizeof cd);
    rt = make_rt(ctx, 4, GS_RUNTIME_THREADED);
    CHECK_OK(gs_partition_check(spmd, rt, &cd, ins, &trep));
    outs[0] = out;
    CHECK_OK(gs_partition_check_gathered(spmd, &cd, ins, (const void *const *)outs, &rep));
    gs_runtime_destroy(rt);
    CHECK_MSG(trep.ok && rep.ok, "%s / %s", trep.message, rep.message);
    CHECK_EQ_INT(rep.n_compared, 64);
    CHECK(rep.max_abs_err > 1e-3);   /* bf16 partial sums: a 1e-5 tolerance would fail */
    CHECK_NEAR(rep.max_abs_err, trep.max_abs_err, 0.0);
    CHECK(rep.output == -1 && rep.first_bad == NULL && rep.message[0] == 0);
    /* exact: the difference, as gathered */
    cd.tolerances_given = true;
    CHECK_OK(gs_partition_check_gathered(spmd, &cd, ins, (const void *const *)outs, &rep));
    CHECK(!rep.ok);
    CHECK_EQ_INT(rep.output, 0);
    CHECK_EQ_INT(rep.device, -1);
    CHECK(rep.first_bad == gs_graph_root(g));
    CHECK(rep.got != rep.want);
    CHECK_NEAR(rep.want, gs_dtype_get(GS_BF16, ref, rep.index), 0.0);
    CHECK_NEAR(rep.got, gs_dtype_get(GS_BF16, out, rep.index), 0.0);
    CHECK_MSG(strstr(rep.message, "as gathered") && strstr(rep.message, "tolerance 0 + 0 * |want|"), "message: %s",
              rep.message);
    /* one planted wrong element under the defaults: named, with the reference's value */
    memset(&cd, 0, sizeof cd);
    out[13] = 0x4480;   /* bf16 1024 */
    CHECK_OK(gs_partition_check_gathered(spmd, &cd, ins, (const void *const *)outs, &rep));
    CHECK(!rep.ok);
    CHECK_EQ_INT(rep.index, 13);
    CHECK_NEAR(rep.got, 1024.0, 0.0);
    CHECK_NEAR(rep.want, gs_dtype_get(GS_BF16, ref, 13), 0.0);
    CHECK_MSG(strstr(rep.message, "element [1,5] as gathered") && strstr(rep.message, "1 of 64"), "message: %s",
              rep.message);
    /* bad arguments */
    CHECK(gs_partition_check_gathered(g, &cd, ins, (const void *const *)outs, &rep) == GS_ERR_INVALID_ARG);
    CHECK(strstr(gs_ctx_error_msg(ctx), "gs_partition_check_gathered: ") && strstr(gs_ctx_error_msg(ctx), "not a program made by gs_partition"));
    CHECK(!rep.ok);
    gs_ctx_clear_error(ctx);
    CHECK(gs_partition_check_gathered(spmd, &cd, ins, NULL, &rep) == GS_ERR_INVALID_ARG);
    CHECK(strstr(gs_ctx_error_msg(ctx), "outputs is NULL") != NULL);
    gs_ctx_clear_error(ctx);
    CHECK(gs_partition_check_gathered(spmd, &cd, NULL, (const void *const *)outs, &rep) == GS_ERR_INVALID_ARG);
    CHECK(strstr(gs_ctx_error_msg(ctx), "inputs is NULL") != NULL);
    gs_ctx_clear_error(ctx);
    cd.atol = -1;
    CHECK(gs_partition_check_gathered(spmd, &cd, ins, (const void *const *)outs, &rep) == GS_ERR_INVALID_ARG);
    CHECK(strstr(gs_ctx_error_msg(ctx), "tolerances must be >= 0") != NULL);
    gs_ctx_clear_error(ctx);
    CHECK(gs_partition_check_gathered(spmd, NULL, ins, (const void *const *)outs, NULL) == GS_ERR_INVALID_ARG);
    gs_ctx_clear_error(ctx);
    CHECK(gs_partition_check_gathered(NULL, NULL, ins, (const void *const *)outs, &rep) == GS_ERR_INVALID_ARG);
    /* a manual region with a written all-reduce: the reference runs on the devices (every block the sum of the
       four), and a wrong block is found */
    mg = gst_hlo_parse(ctx, manual_text);
    CHECK(mg != NULL);
    if (mg) {
        int i;
        shapes[0] = gs_value_shape(gs_graph_param(mg, 0));
        for (i = 0; i < 24; i++) mp[i] = (float)(i % 5) - 1.5f;
        ins[0] = mp;
        mspmd = partition(mg, 4);
        outs[0] = mout;
        run_gathered(mg, mspmd, 4, shapes, 1, ins, outs);
        for (i = 0; i < 24; i++) CHECK_NEAR(mout[i], mp[i % 6] + mp[6 + i % 6] + mp[12 + i % 6] + mp[18 + i % 6], 0.0);
        cd.atol = 0;
        cd.tolerances_given = true;
        CHECK_OK(gs_partition_check_gathered(mspmd, &cd, ins, (const void *const *)outs, &rep));
        CHECK_MSG(rep.ok && rep.n_compared == 24, "%s", rep.message);
        mout[20] += 1.0f;
        CHECK_OK(gs_partition_check_gathered(mspmd, &cd, ins, (const void *const *)outs, &rep));
        CHECK(!rep.ok && rep.index == 20);
    }
    gs_ctx_destroy(ctx);
}

void suite_spmd_check(void) {
    RUN(test_eval_devices);
    RUN(test_check_agrees);
    RUN(test_check_mismatch_located);
    RUN(test_check_runtime_threaded);
    RUN(test_check_mismatch_unlocated_and_tolerance);
    RUN(test_check_errors);
    RUN(test_check_gathered);
}
