/* test_spmd_xla.c - XLA's partitioner options by name (gs_partition_xla_option), XLA's entry policy
   (gs_partition_desc.xla_compat), and the rules that follow XLA's partitioner: each case partitioned, run on
   lockstep devices with poisoned padding and checked against the reference interpreter (spmd_case.h). */
#include "spmd_case.h"

static int count_in(const gs_graph *g, gs_op op) {
    int i, n = 0;
    for (i = 0; i < gs_graph_num_values(g); i++)
        if (gs_value_op(gs_graph_value(g, i)) == op) n++;
    return n;
}

/* lhs[m,k]{m split} x rhs[k,n]{n split} -> out{m split}: rhs would be all-gathered, or windowed round a ring */
static const char *const xo_dot =
    "  l = f32[8,6] parameter(0), sharding={devices=[4,1]<=[4]}\n"
    "  r = f32[6,10] parameter(1), sharding={devices=[1,4]<=[4]}\n"
    "  ROOT d = f32[8,10] dot(l, r), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[4,1]<=[4]}\n";

static void test_xla_option_names(void) {
    gs_ctx *ctx = gst_ctx();
    gs_partition_desc pd;
    memset(&pd, 0, sizeof pd);
    CHECK_EQ_INT(gs_partition_xla_option(ctx, &pd, "threshold_for_windowed_einsum_mib", "3"), GS_OK);
    CHECK(pd.windowed_einsum_bytes == (int64_t)3 << 20);
    CHECK_EQ_INT(gs_partition_xla_option(ctx, &pd, "threshold_for_windowed_einsum_mib", "0"), GS_OK);
    CHECK(pd.windowed_einsum_bytes == 1);
    CHECK_EQ_INT(gs_partition_xla_option(ctx, &pd, "total_bytes_windowed_einsum_threshold", "1073741824"), GS_OK);
    CHECK(pd.windowed_einsum_total_bytes == (int64_t)1 << 30);
    CHECK_EQ_INT(gs_partition_xla_option(ctx, &pd, "bidirectional_windowed_einsum", "true"), GS_OK);
    CHECK(pd.windowed_einsum_bidirectional);
    CHECK_EQ_INT(gs_partition_xla_option(ctx, &pd, "unroll_windowed_einsum", "false"), GS_OK);
    CHECK(!pd.windowed_einsum_unroll);
    CHECK_EQ_INT(gs_partition_xla_option(ctx, &pd, "enable_enzyme_opt", "true"), GS_OK);
    CHECK(pd.xla_inert != 0);
    CHECK_EQ_INT(gs_partition_xla_option(ctx, &pd, "enable_windowed_einsum_for_all_gather", "false"), GS_OK);
    CHECK(pd.windowed_einsum_bytes < 0);
    gs_ctx_destroy(ctx);
    /* an unknown name, a switch given a number, a negative threshold: errors naming what is wrong */
    ctx = gst_ctx();
    CHECK_EQ_INT(gs_partition_xla_option(ctx, &pd, "threshold_for_windowed_einsum", "1"), GS_ERR_INVALID_ARG);
    CHECK(strstr(gs_ctx_error_msg(ctx), "unknown XLA partitioner option 'threshold_for_windowed_einsum'") != NULL);
    gs_ctx_destroy(ctx);
    ctx = gst_ctx();
    CHECK_EQ_INT(gs_partition_xla_option(ctx, &pd, "unroll_windowed_einsum", "1"), GS_ERR_INVALID_ARG);
    CHECK(strstr(gs_ctx_error_msg(ctx), "wants true or false") != NULL);
    gs_ctx_destroy(ctx);
    ctx = gst_ctx();
    CHECK_EQ_INT(gs_partition_xla_option(ctx, &pd, "threshold_for_windowed_einsum_mib", "-1"), GS_ERR_INVALID_ARG);
    gs_ctx_destroy(ctx);
}

/* threshold_for_windowed_einsum_mib=0 turns the all-gather into a loop; a total-bytes threshold above the
   operands' size turns it back; both programs match the reference */
static void test_xla_option_windowed_thresholds(void) {
    gst_case h;
    gs_partition_desc pd;
    memset(&pd, 0, sizeof pd);
    if (gst_case_run(&h, "", xo_dot, 4, 1e-5, 11)) {
        CHECK_EQ_INT(count_in(h.spmd, GS_OP_WHILE), 0);
        CHECK_EQ_INT(h.ag, 1);
    }
    gs_ctx_destroy(h.ctx);
    {
        gs_ctx *ctx = gst_ctx();
        CHECK_EQ_INT(gs_partition_xla_option(ctx, &pd, "threshold_for_windowed_einsum_mib", "0"), GS_OK);
        gs_ctx_destroy(ctx);
    }
    if (gst_case_run_desc(&h, "", xo_dot, 4, 1e-5, 12, &pd)) {
        CHECK_EQ_INT(count_in(h.spmd, GS_OP_WHILE), 1);
        CHECK_EQ_INT(h.ag, 0);
    }
    gs_ctx_destroy(h.ctx);
    /* 8*6*4 + 6*10*4 = 432 bytes of operands: a threshold of 433 keeps the all-gather, 432 windows */
    pd.windowed_einsum_total_bytes = 433;
    if (gst_case_run_desc(&h, "", xo_dot, 4, 1e-5, 13, &pd)) CHECK_EQ_INT(count_in(h.spmd, GS_OP_WHILE), 0);
    gs_ctx_destroy(h.ctx);
    pd.windowed_einsum_total_bytes = 432;
    if (gst_case_run_desc(&h, "", xo_dot, 4, 1e-5, 13, &pd)) CHECK_EQ_INT(count_in(h.spmd, GS_OP_WHILE), 1);
    gs_ctx_destroy(h.ctx);
}

/* the distinct source_target_pairs lists of the collective-permutes in an SPMD program's text */
static int distinct_permute_rings(const char *text) {
    const char *seen[8], *p = text;
    size_t len[8];
    int n = 0, i;
    while ((p = strstr(p, "source_target_pairs={")) != NULL) {
        const char *e = strstr(p, "}}");
        size_t l = e ? (size_t)(e - p) : strlen(p);
        for (i = 0; i < n; i++)
            if (len[i] == l && strncmp(seen[i], p, l) == 0) break;
        if (i == n && n < 8) { seen[n] = p; len[n++] = l; }
        p += l;
    }
    return n;
}

/* template with @M, @K, @N replaced by sz[0..2] and @D by D */
static void fill_template(char *out, size_t cap, const char *tpl, const int64_t *sz, int64_t D) {
    size_t n = 0;
    for (; *tpl && n + 24 < cap; tpl++) {
        const char *at = tpl[0] == '@' ? strchr("MKND", tpl[1]) : NULL;
        if (at && tpl[1]) {
            n += (size_t)snprintf(out + n, cap - n, "%lld", (long long)(tpl[1] == 'D' ? D : sz[at - "MKND"]));
            tpl++;
        } else {
            out[n++] = *tpl;
        }
    }
    out[n] = 0;
}

/* The windowed einsum in its four loop forms (one block per step one way round the ring, unrolled two steps per
   iteration, bidirectional, both) for the all-gather form (lhs windowed along a contracted dim, rhs along a free
   dim, lhs along a batch dim) and the reduce-scatter form (result split along a free or a batch dim), on 2 to 7
   devices with sizes drawn at random so that most do not divide: every program matches the reference with
   poisoned padding and gathers nothing; the explanation names the form; a bidirectional loop permutes both ways. */
static void test_xla_windowed_einsum_forms(void) {
    static const char *const kinds[5] = {
        /* lhs[M,K]{K split} x rhs[K,N]{N split} -> {N split}: lhs windowed along contracted K */
        "  l = f32[@M,@K] parameter(0), sharding={devices=[1,@D]<=[@D]}\n"
        "  q = f32[@K,@N] parameter(1), sharding={devices=[1,@D]<=[@D]}\n"
        "  ROOT r = f32[@M,@N] dot(l, q), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[1,@D]<=[@D]}\n",
        /* lhs{M split} x rhs{N split} -> {M split}: rhs windowed along free N */
        "  l = f32[@M,@K] parameter(0), sharding={devices=[@D,1]<=[@D]}\n"
        "  q = f32[@K,@N] parameter(1), sharding={devices=[1,@D]<=[@D]}\n"
        "  ROOT r = f32[@M,@N] dot(l, q), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[@D,1]<=[@D]}\n",
        /* lhs[B,M,K]{B split} x rhs[B,K,N]{N split} -> {N split}: lhs windowed along batch B, rhs sliced with it */
        "  l = f32[@M,3,@K] parameter(0), sharding={devices=[@D,1,1]<=[@D]}\n"
        "  q = f32[@M,@K,@N] parameter(1), sharding={devices=[1,1,@D]<=[@D]}\n"
        "  ROOT r = f32[@M,3,@N] dot(l, q), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}, sharding={devices=[1,1,@D]<=[@D]}\n",
        /* lhs{K split} x rhs{K split} -> {M split}: partial sums reduce-scattered round the ring */
        "  l = f32[@M,@K] parameter(0), sharding={devices=[1,@D]<=[@D]}\n"
        "  q = f32[@K,@N] parameter(1), sharding={devices=[@D,1]<=[@D]}\n"
        "  ROOT r = f32[@M,@N] dot(l, q), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[@D,1]<=[@D]}\n",
        /* lhs[B,M,K]{K split} x rhs[B,K,N]{K split} -> {B split}: both operands sliced along B per block */
        "  l = f32[@M,3,@K] parameter(0), sharding={devices=[1,1,@D]<=[@D]}\n"
        "  q = f32[@M,@K,@N] parameter(1), sharding={devices=[1,@D,1]<=[@D]}\n"
        "  ROOT r = f32[@M,3,@N] dot(l, q), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}, sharding={devices=[@D,1,1]<=[@D]}\n"};
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    int64_t D;
    int kind, form;
    for (D = 2; D <= 7; D++)
        for (kind = 0; kind < 5; kind++)
            for (form = 0; form < 4; form++) {
                char body[2048];
                int64_t sz[3];
                int i;
                gst_case h;
                gs_partition_desc pd;
                for (i = 0; i < 3; i++) {
                    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
                    sz[i] = D + 1 + (int64_t)((rng >> 33) % (uint64_t)(2 * D + 1));   /* D+1 .. 3D+1 */
                }
                fill_template(body, sizeof body, kinds[kind], sz, D);
                memset(&pd, 0, sizeof pd);
                pd.windowed_einsum_bytes = 1;
                pd.windowed_einsum_unroll = (form & 1) != 0;
                pd.windowed_einsum_bidirectional = (form & 2) != 0;
                if (gst_case_run_desc(&h, "", body, D, 1e-5, 40 + (uint64_t)(D * 8 + kind), &pd)) {
                    CHECK_MSG(h.ag + h.rs + h.ar == 0 && h.cp + count_in(h.spmd, GS_OP_WHILE) > 0, "D %lld kind %d form %d:\n%s",
                              (long long)D, kind, form, h.text);
                    CHECK_MSG(strstr(h.explain, kind < 3 ? "all-gather form" : "reduce-scatter form") != NULL,
                              "D %lld kind %d form %d: %s", (long long)D, kind, form, h.explain);
                    CHECK(((strstr(h.explain, "bidirectional") != NULL) == ((form & 2) && D > 2)));
                    CHECK((strstr(h.explain, "unrolled") != NULL) == ((form & 1) != 0));
                    CHECK_MSG(distinct_permute_rings(h.text) == ((form & 2) && D > 2 ? 2 : 1), "D %lld kind %d form %d: %d rings",
                              (long long)D, kind, form, distinct_permute_rings(h.text));
                    if (!(form & 2) && D - 1 >= (form & 1 ? 2 : 1)) CHECK_EQ_INT(count_in(h.spmd, GS_OP_WHILE), 1);
                }
                gs_ctx_destroy(h.ctx);
            }
}

/* enable_windowed_einsum_for_reduce_scatter=false: the partial sums are reduce-scattered in one collective */
static void test_xla_windowed_reduce_scatter_off(void) {
    static const char *const body =
        "  l = f32[9,7] parameter(0), sharding={devices=[1,4]<=[4]}\n"
        "  q = f32[7,10] parameter(1), sharding={devices=[4,1]<=[4]}\n"
        "  ROOT r = f32[9,10] dot(l, q), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[4,1]<=[4]}\n";
    gst_case h;
    gs_partition_desc pd;
    int on;
    for (on = 0; on < 2; on++) {
        gs_ctx *ctx = gst_ctx();
        memset(&pd, 0, sizeof pd);
        CHECK_EQ_INT(gs_partition_xla_option(ctx, &pd, "threshold_for_windowed_einsum_mib", "0"), GS_OK);
        CHECK_EQ_INT(gs_partition_xla_option(ctx, &pd, "enable_windowed_einsum_for_reduce_scatter", on ? "true" : "false"), GS_OK);
        gs_ctx_destroy(ctx);
        if (gst_case_run_desc(&h, "", body, 4, 1e-5, 51, &pd)) {
            CHECK_EQ_INT(h.rs, on ? 0 : 1);
            CHECK_EQ_INT(count_in(h.spmd, GS_OP_WHILE), on ? 1 : 0);
        }
        gs_ctx_destroy(h.ctx);
    }
}

/* XLA's partitioner-internal custom-calls read as the ops they stand for: values against hand-computed ones
   (x = 0..9 rotated right by 6 is 4..9,0..3; rotated by -1, 0, +1; slices [2,7) moved by 0, 1, 2; wrapped
   by 2 left and 1 right), then partitioned over 2 to 4 devices (10 does not divide by 3 or 4) and checked;
   a declared shape that the attributes contradict is an error naming both shapes. */
static void test_xla_spmd_internal_custom_calls(void) {
    static const char *const ops[4] = {
        "  ROOT r = f32[10] custom-call(x), custom_call_target=\"_SPMDInternalOp_RotateRight\", "
        "backend_config=\"dimension=0,amount=6\", sharding={devices=[@D]<=[@D]}\n",
        "  ROOT r = (f32[10], f32[10], f32[10]) custom-call(x), custom_call_target=\"_SPMDInternalOp_MultiRotate\", "
        "backend_config=\"dimension=0,left_amount=1,right_amount=1,bufferize=0\", "
        "sharding={{devices=[@D]<=[@D]}, {devices=[@D]<=[@D]}, {devices=[@D]<=[@D]}}\n",
        "  ROOT r = (f32[5], f32[5], f32[5]) custom-call(x), custom_call_target=\"_SPMDInternalOp_MultiSlice\", "
        "backend_config=\"dimension=0,amount=2,start_indices=[2],limit_indices=[7],strides=[1],bufferize=0\", "
        "sharding={{devices=[@D]<=[@D]}, {devices=[@D]<=[@D]}, {devices=[@D]<=[@D]}}\n",
        "  ROOT r = f32[13] custom-call(x), custom_call_target=\"_SPMDInternalOp_Wrap\", "
        "backend_config=\"dimension=0,left_amount=2,right_amount=1\", sharding={devices=[@D]<=[@D]}\n"};
    static const float want[4][30] = {
        {4, 5, 6, 7, 8, 9, 0, 1, 2, 3},
        {1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8},
        {2, 3, 4, 5, 6, 3, 4, 5, 6, 7, 4, 5, 6, 7, 8},
        {8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0}};
    static const int nwant[4] = {10, 30, 15, 13};
    int op;
    for (op = 0; op < 4; op++) {
        char body[1024], text[1200];
        int64_t D, sz[3] = {0, 0, 0};
        for (D = 1; D <= 4; D++) {
            /* (D = 1: the values; the shardings, for 2 devices, are not read by the interpreter) */
            fill_template(body, sizeof body, "  x = f32[10] parameter(0), sharding={devices=[@D]<=[@D]}\n", sz, D > 1 ? D : 2);
            fill_template(body + strlen(body), sizeof body - strlen(body), ops[op], sz, D > 1 ? D : 2);
            if (D == 1) {   /* the values, by the reference interpreter */
                gs_ctx *ctx = gst_ctx();
                gs_graph *g = NULL;
                float x[10], out[3][16];
                void *outs[3];
                const void *ins[1];
                int i;
                snprintf(text, sizeof text, "HloModule m\nENTRY e {\n%s}\n", body);
                for (i = 0; i < 10; i++) x[i] = (float)i;
                for (i = 0; i < 3; i++) outs[i] = out[i];
                ins[0] = x;
                CHECK_OK(gs_hlo_parse(ctx, text, strlen(text), &g));
                if (g) {
                    CHECK_OK(gs_eval(g, ins, outs));
                    for (i = 0; i < nwant[op]; i++) {
                        int per = op == 1 ? 10 : op == 2 ? 5 : nwant[op];
                        CHECK_MSG(out[i / per][i % per] == want[op][i], "op %d element %d: %g, want %g", op, i,
                                  (double)out[i / per][i % per], (double)want[op][i]);
                    }
                }
                gs_ctx_destroy(ctx);
                continue;
            }
            {
                gst_case h;
                (void)gst_case_run(&h, "", body, D, 0, 70 + (uint64_t)D);
                gs_ctx_destroy(h.ctx);
            }
        }
    }
    {   /* XLA's test declares Wrap's f32[12] -> f32[20] with one element each side: 14 elements */
        gs_ctx *ctx = gst_ctx();
        gs_graph *g = NULL;
        static const char *const bad = "HloModule m\nENTRY e {\n  x = f32[12] parameter(0)\n"
            "  ROOT r = f32[20] custom-call(x), custom_call_target=\"_SPMDInternalOp_Wrap\", "
            "backend_config=\"dimension=0,left_amount=1,right_amount=1\"\n}\n";
        CHECK(gs_hlo_parse(ctx, bad, strlen(bad), &g) != GS_OK);
        CHECK_MSG(strstr(gs_ctx_error_msg(ctx), "declared f32[20] but is f32[14]") != NULL, "%s", gs_ctx_error_msg(ctx));
        gs_ctx_destroy(ctx);
    }
    {   /* attributes that do not fit: a dim past the rank, an amount too long to read, a negative one */
        static const char *const cfgs[3] = {"dimension=1,amount=2", "dimension=0,amount=99999999999999999999",
                                            "dimension=0,amount=-1"};
        int i;
        for (i = 0; i < 3; i++) {
            gs_ctx *ctx = gst_ctx();
            gs_graph *g = NULL;
            char t[400];
            snprintf(t, sizeof t, "HloModule m\nENTRY e {\n  x = f32[10] parameter(0)\n  ROOT r = f32[10] custom-call(x), "
                     "custom_call_target=\"_SPMDInternalOp_RotateRight\", backend_config=\"%s\"\n}\n", cfgs[i]);
            CHECK(gs_hlo_parse(ctx, t, strlen(t), &g) != GS_OK);
            CHECK_MSG(strstr(gs_ctx_error_msg(ctx), "backend_config with dimension=D (< rank), amount=A >= 0") != NULL, "%s",
                      gs_ctx_error_msg(ctx));
            gs_ctx_destroy(ctx);
        }
    }
}

/* XLA's entry policy: the unannotated parameter and root are replicated; by default propagation splits them
   like the annotated operand */
static void test_xla_compat_entry_policy(void) {
    static const char *const body =
        "  a = f32[7,6] parameter(0)\n"
        "  b = f32[7,6] parameter(1), sharding={devices=[2,1]<=[2]}\n"
        "  ROOT s = f32[7,6] add(a, b)\n";
    gst_case h;
    gs_partition_desc pd;
    int compat;
    for (compat = 0; compat < 2; compat++) {
        memset(&pd, 0, sizeof pd);
        pd.xla_compat = compat == 1;
        if (gst_case_run_desc(&h, "", body, 2, 1e-5, 21, &pd)) {
            CHECK(gs_sharding_is_replicated(gs_partition_param_sharding(h.spmd, 0)) == (compat == 1));
            CHECK(!gs_sharding_is_replicated(gs_partition_param_sharding(h.spmd, 1)));
            CHECK(gs_sharding_is_replicated(gs_partition_output_sharding(h.spmd, 0)) == (compat == 1));
        }
        gs_ctx_destroy(h.ctx);
    }
}

/* a manual region whose devices hold different blocks: the check's reference runs it once per device (before,
   device 0's block stood for all and every other block came back as zeros); sizes the devices do not divide,
   so the last block carries poisoned padding into the region */
static void test_xla_manual_region_reference(void) {
    static const int64_t Ds[3] = {2, 3, 4};
    int i;
    for (i = 0; i < 3; i++) {
        char body[1024];
        int64_t D = Ds[i], b = (7 + D - 1) / D;
        gst_case h;
        snprintf(body, sizeof body,
                 "  p = f32[7,6] parameter(0), sharding={devices=[%lld,1]<=[%lld]}\n"
                 "  m = f32[%lld,6] custom-call(p), custom_call_target=\"SPMDFullToShardShape\", sharding={manual}\n"
                 "  one = f32[] constant(1), sharding={manual}\n"
                 "  ones = f32[%lld,6] broadcast(one), dimensions={}, sharding={manual}\n"
                 "  sq = f32[%lld,6] multiply(m, m), sharding={manual}\n"
                 "  e = f32[%lld,6] add(sq, ones), sharding={manual}\n"
                 "  ROOT r = f32[7,6] custom-call(e), custom_call_target=\"SPMDShardToFullShape\", "
                 "sharding={devices=[%lld,1]<=[%lld]}\n",
                 (long long)D, (long long)D, (long long)b, (long long)b, (long long)b, (long long)b, (long long)D,
                 (long long)D);
        if (gst_case_run(&h, "", body, D, 1e-6, 31 + (uint64_t)D)) CHECK_EQ_INT(h.ag + h.ar + h.a2a + h.cp, 0);
        gs_ctx_destroy(h.ctx);
    }
}

/* manual groups nested three deep (a fully manual block, then manual over 4 and 2 devices with the rest tiled):
   each device's data never moves, and the reference assembles the blocks by each level's sharding */
static void test_xla_nested_manual_reference(void) {
    static const char *const body =
        "  p = s32[4,6,10] parameter(0), sharding={devices=[2,2,2]<=[8]}\n"
        "  m0 = s32[2,3,5] custom-call(p), custom_call_target=\"SPMDFullToShardShape\", sharding={manual}\n"
        "  m1 = s32[4,3,5] custom-call(m0), custom_call_target=\"SPMDShardToFullShape\", "
        "sharding={devices=[2,1,1,4]<=[8] last_tile_dims={manual}}\n"
        "  m2 = s32[4,6,5] custom-call(m1), custom_call_target=\"SPMDShardToFullShape\", "
        "sharding={devices=[2,2,1,2]<=[8] last_tile_dims={manual}}\n"
        "  ROOT r = s32[4,6,10] custom-call(m2), custom_call_target=\"SPMDShardToFullShape\", "
        "sharding={devices=[2,2,2]<=[8]}\n";
    gst_case h;
    if (gst_case_run(&h, "", body, 8, 0, 41)) CHECK_EQ_INT(h.ag + h.ar + h.a2a + h.cp, 0);
    gs_ctx_destroy(h.ctx);
}

/* Checks h's SPMD program on `devices` lockstep devices against the reference, inputs from seed, seed + 1, first
   with the default tolerance (rep_default, unless NULL), then with rtol = atol = 1e-5 (rep_strict). */
static void bf16_check(gst_case *h, int devices, uint64_t seed, gs_check_report *rep_default, gs_check_report *rep_strict) {
    gs_runtime_desc rd;
    gs_runtime *rt = NULL;
    gs_check_desc cd;
    gs_shape s0 = gs_value_shape(gs_graph_param(h->src, 0)), s1 = gs_value_shape(gs_graph_param(h->src, 1));
    void *in[2];
    CHECK(h->ar + h->rs >= 1);
    in[0] = malloc(gs_shape_bytes(&s0));
    in[1] = malloc(gs_shape_bytes(&s1));
    gs_fill_random(s0, seed, 0, in[0]);
    gs_fill_random(s1, seed + 1, 1, in[1]);
    memset(&rd, 0, sizeof rd);
    rd.num_devices = devices;
    rd.mode = GS_RUNTIME_LOCKSTEP;
    CHECK_OK(gs_runtime_create(h->ctx, &rd, &rt));
    memset(&cd, 0, sizeof cd);
    if (rt && rep_default) CHECK_OK(gs_partition_check(h->spmd, rt, &cd, (const void *const *)in, rep_default));
    cd.rtol = cd.atol = 1e-5;
    if (rt) CHECK_OK(gs_partition_check(h->spmd, rt, &cd, (const void *const *)in, rep_strict));
    gs_runtime_destroy(rt);
    free(in[0]);
    free(in[1]);
}

/* bf16 partial products summed across devices: each partial rounds to bf16 before the all-reduce, as in XLA,
   so the result differs from the reference by about one bf16 unit. The default tolerance (two units, 2^-6)
   accepts it; f32's 1e-5 given explicitly does not, so the difference is real. */
static void test_xla_check_bf16_tolerance(void) {
    static const char *const body =
        "  a = bf16[6,40] parameter(0), sharding={devices=[1,4]<=[4]}\n"
        "  b = bf16[40,5] parameter(1), sharding={devices=[4,1]<=[4]}\n"
        "  ROOT r = bf16[6,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}\n";
    gst_case h;
    if (gst_case_run(&h, "", body, 4, 0, 51)) {
        gs_check_report strict;
        memset(&strict, 0, sizeof strict);
        strict.ok = true;
        bf16_check(&h, 4, 51, NULL, &strict);
        CHECK_MSG(!strict.ok && strict.max_abs_err < 0.05, "strict bf16 check: ok %d, max err %g", strict.ok,
                  strict.max_abs_err);
    }
    gs_ctx_destroy(h.ctx);
}

/* A bf16 contraction split 16 ways: the SPMD program rounds each device's partial product to bf16 and sums the 16
   in bf16 (as XLA's does), the reference rounds once. The default tolerance (2^-6, its absolute part grown by
   sqrt(16) for the 16 terms) accepts it; a strict one sees the rounding. (XLA's PartiallyReplicateRHS, a
   16384-long contraction with 524288 outputs, errs by 2 on an output RMS of 44: three times the absolute
   tolerance without the sqrt(16).) */
static void test_xla_check_bf16_partial_sums(void) {
    static const char *const body =
        "  a = bf16[64,1024] parameter(0), sharding={devices=[1,16]<=[16]}\n"
        "  b = bf16[1024,64] parameter(1), sharding={devices=[16,1]<=[16]}\n"
        "  ROOT r = bf16[64,64] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}\n";
    gst_case h;
    if (gst_case_run(&h, "", body, 16, 0, 61)) {
        gs_check_report def, strict;
        memset(&def, 0, sizeof def);
        def.message = "";
        memset(&strict, 0, sizeof strict);
        strict.ok = true;
        bf16_check(&h, 16, 61, &def, &strict);
        CHECK_MSG(def.ok, "%s", def.message);
        CHECK_MSG(!strict.ok && strict.max_abs_err > 0.01, "strict: ok %d, max err %g", strict.ok, strict.max_abs_err);
    }
    gs_ctx_destroy(h.ctx);
}

/* A tiled sharding must name every device once (XLA's rule): 4 ids when the module has 8 partitions is an
   error when the text is read; a graph annotated for 4 devices propagates for 8 (as XLA's propagation does)
   but partitioning it for 8 is an error of gs_partition; the same graph for 4 devices partitions and runs. */
static void test_xla_sharding_device_subset(void) {
    static const char *const text =
        "HloModule m, num_partitions=8\nENTRY e {\n"
        "  p = f32[8,8] parameter(0), sharding={devices=[2,2]0,1,2,3}\n"
        "  ROOT r = f32[8,8] add(p, p)\n}\n";
    static const char *const body =
        "  p = f32[9,8] parameter(0), sharding={devices=[2,2]<=[4]}\n"
        "  ROOT r = f32[9,8] add(p, p)\n";
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = NULL, *spmd = NULL;
    gs_partition_desc pd;
    gst_case h;
    CHECK(gs_hlo_parse(ctx, text, strlen(text), &g) != GS_OK);
    CHECK_MSG(strstr(gs_ctx_error_msg(ctx), "covers 4 of the 8 devices") != NULL, "%s", gs_ctx_error_msg(ctx));
    gs_ctx_destroy(ctx);
    ctx = gst_ctx();
    g = gs_graph_new(ctx, "g");
    {
        int64_t d[2] = {8, 8};
        gs_value *p = gs_parameter(g, -1, gs_shape_make(GS_F32, 2, d), "p");
        CHECK_OK(gs_value_set_sharding_text(p, "{devices=[2,2]<=[4]}"));
        CHECK_OK(gs_graph_set_root(g, gs_add(g, p, p)));
    }
    {   /* propagation alone allows a subset (XLA's propagation tests use them): r takes p's tiling */
        gs_propagate_desc prd;
        memset(&prd, 0, sizeof prd);
        prd.num_devices = 8;
        CHECK_OK(gs_propagate(g, &prd));
        CHECK(gs_sharding_equal(gs_value_sharding(gs_graph_root(g)), gs_value_sharding(gs_graph_param(g, 0))));
    }
    memset(&pd, 0, sizeof pd);
    pd.num_devices = 8;
    CHECK(gs_partition(g, &pd, &spmd) == GS_ERR_SHARDING && spmd == NULL);
    CHECK_MSG(strstr(gs_ctx_error_msg(ctx), "covers 4 of the 8 devices") != NULL, "%s", gs_ctx_error_msg(ctx));
    gs_ctx_destroy(ctx);
    if (gst_case_run(&h, "", body, 4, 0, 61)) CHECK_EQ_INT(h.ag + h.ar + h.a2a + h.cp, 0);
    gs_ctx_destroy(h.ctx);
}

/* A program manual from its parameter to its root: every device gets the whole input and returns its own
   array (here it depends on partition-id), and the check compares each device's array with the reference
   program's on the same device */
static void test_xla_manual_parameter_and_output(void) {
    static const char *const body =
        "  p = s32[5] parameter(0), sharding={manual}\n"
        "  id = u32[] partition-id(), sharding={manual}\n"
        "  ids = s32[] convert(id), sharding={manual}\n"
        "  b = s32[5] broadcast(ids), dimensions={}, sharding={manual}\n"
        "  ROOT r = s32[5] multiply(p, b), sharding={manual}\n";
    gst_case h;
    if (gst_case_run(&h, "", body, 3, 0, 71)) CHECK_EQ_INT(h.ag + h.ar + h.a2a + h.cp, 0);
    gs_ctx_destroy(h.ctx);
}

/* Inside a region manual over 2 groups of 3 devices, with the data split 3 ways within each group: a
   constant (replicated) takes each device's tile, and a value split along the other dim is resharded within
   its group; no collective may cross a group (each group's copy is its own) */
static void test_xla_partial_manual_reshard(void) {
    static const char *const body =
        "  c = f32[7,5] constant({{1,2,3,4,5},{6,7,8,9,10},{11,12,13,14,15},{16,17,18,19,20},{21,22,23,24,25},"
        "{26,27,28,29,30},{31,32,33,34,35}}), sharding={devices=[3,1,2]<=[6] last_tile_dims={manual}}\n"
        "  p = f32[7,5] parameter(0), sharding={devices=[1,3,2]<=[6] last_tile_dims={manual}}\n"
        "  q = f32[7,5] copy(p), sharding={devices=[3,1,2]<=[6] last_tile_dims={manual}}\n"
        "  ROOT r = f32[7,5] add(c, q), sharding={devices=[3,1,2]<=[6] last_tile_dims={manual}}\n";
    gst_case h;
    if (gst_case_run(&h, "", body, 6, 0, 81)) {
        int i;
        CHECK(h.a2a + h.ag >= 1);
        for (i = 0; i < gs_graph_num_values(h.spmd); i++) {
            gs_value *v = gs_graph_value(h.spmd, i);
            if (gs_value_op(v) == GS_OP_ALL_TO_ALL || gs_value_op(v) == GS_OP_ALL_GATHER)
                CHECK_MSG(strstr(h.text, "replica_groups={{0,2,4},{1,3,5}}") || strstr(h.text, "[2,3]<=[3,2]T(1,0)"),
                          "groups cross the manual groups:\n%s", h.text);
        }
    }
    gs_ctx_destroy(h.ctx);
}

/* partitions text on D devices; the program's text, which must read back */
static const char *feed_partition(gs_ctx *ctx, const char *text, int64_t D) {
    gs_graph *g = gst_hlo_parse(ctx, text), *spmd = NULL, *back = NULL;
    gs_partition_desc pd;
    const char *out;
    memset(&pd, 0, sizeof pd);
    pd.num_devices = D;
    if (!g) return NULL;
    CHECK_OK(gs_partition(g, &pd, &spmd));
    if (!spmd) return NULL;
    out = gs_hlo_print(spmd);
    CHECK(out != NULL);
    if (out) CHECK_MSG(gs_hlo_parse(ctx, out, strlen(out), &back) == GS_OK, "%s\n%s", gs_ctx_error_msg(ctx), out);
    return out;
}

/* infeed as XLA's HandleInfeed partitions it: every device infeeds its own tiles, per leaf of a nested tuple;
   uneven tiles (10 rows over 3 devices: 4, 4, 2; 9 over 4: 3, 3, 3, 0) through a conditional with one branch per
   distinct per-device shape, chosen by a table of partition-id, padding to the shard shape; in a manual region
   the shape as written */
static void test_xla_infeed(void) {
    gs_ctx *ctx = gst_ctx();
    const char *t;
    t = feed_partition(ctx, "HloModule m\nENTRY e {\n  tk = token[] after-all()\n"
        "  in = (f32[8,2], token[]) infeed(tk), sharding={{devices=[2,1]<=[2]}, {maximal device=0}}\n"
        "  ROOT d = f32[8,2] get-tuple-element(in), index=0, sharding={devices=[2,1]<=[2]}\n}\n", 2);
    CHECK(t && strstr(t, "in = (f32[4,2], token[]) infeed(tk)") && !strstr(t, "conditional") &&
          strstr(t, "ROOT d = f32[4,2] get-tuple-element(in), index=0"));
    t = feed_partition(ctx, "HloModule m\nENTRY e {\n  tk = token[] after-all()\n"
        "  in = ((f32[10,2], f32[2]), token[]) infeed(tk), sharding={{devices=[3,1]<=[3]}, {replicated}, {maximal device=0}}\n"
        "  ROOT d = (f32[10,2], f32[2]) get-tuple-element(in), index=0, sharding={{devices=[3,1]<=[3]}, {replicated}}\n}\n", 3);
    CHECK(t && strstr(t, "ROOT in = ((f32[4,2], f32[2]), token[]) infeed(infeed_token_param)") &&
          strstr(t, "in = ((f32[2,2], f32[2]), token[]) infeed(infeed_token_param)") &&
          strstr(t, "f32[4,2] pad(") && strstr(t, "padding=0_2x0_0") && strstr(t, "s32[3] constant({0, 0, 1})") &&
          strstr(t, "conditional(") && strstr(t, "branch_computations={in_branch_0, in_branch_1}") &&
          strstr(t, "ROOT d = (f32[4,2], f32[2]) get-tuple-element(in), index=0"));
    t = feed_partition(ctx, "HloModule m\nENTRY e {\n  tk = token[] after-all()\n"
        "  in = (s32[9,2], token[]) infeed(tk), sharding={{devices=[4,1]<=[4]}, {maximal device=0}}\n"
        "  ROOT d = s32[9,2] get-tuple-element(in), index=0, sharding={devices=[4,1]<=[4]}\n}\n", 4);
    CHECK(t && strstr(t, "(s32[0,2], token[]) infeed(infeed_token_param)") && strstr(t, "padding=0_3x0_0") &&
          strstr(t, "s32[4] constant({0, 0, 0, 1})") && strstr(t, "ROOT d = s32[3,2] get-tuple-element(in)"));
    t = feed_partition(ctx, "HloModule m\nENTRY e {\n  tk = token[] after-all()\n"
        "  in = (f32[32], token[]) infeed(tk), sharding={{manual}, {maximal device=0}}\n"
        "  ROOT d = f32[32] get-tuple-element(in), index=0, sharding={manual}\n}\n", 2);
    CHECK(t && strstr(t, "in = (f32[32], token[]) infeed(tk)") && strstr(t, "ROOT d = f32[32] get-tuple-element(in)"));
    gs_ctx_destroy(ctx);
}

/* outfeed as XLA's HandleOutfeed partitions it: each device sends its own tiles (outfeed_shape's dims made the
   tile's, its layout kept); uneven tiles (10 rows over 4 devices: 3, 3, 3, 1; 5 elements: 2, 2, 1, 0) through
   a conditional with a branch per distinct per-device shape, chosen by a table of partition-id, each cutting the
   padding off; data on one device: a conditional on partition-id == that device, the others sending nothing;
   a maximal leaf among tiled ones held as replicated; an outfeed_shape that is not the operand's dropped; a
   sharding that does not fit what it sends is an error naming the element */
static void test_xla_outfeed(void) {
    gs_ctx *ctx = gst_ctx();
    const char *t;
    gs_graph *g, *spmd = NULL;
    gs_partition_desc pd;
    t = feed_partition(ctx, "HloModule m\nENTRY e {\n  tk = token[] after-all()\n"
        "  x = f32[6,4] parameter(0), sharding={devices=[3,1]<=[3]}\n"
        "  ROOT o = token[] outfeed(x, tk), outfeed_shape=f32[6,4]{0,1}, sharding={devices=[3,1]<=[3]}\n}\n", 3);
    CHECK_MSG(t && strstr(t, "x = f32[2,4] parameter(0)") && strstr(t, "ROOT o = token[] outfeed(x, tk), outfeed_shape=f32[2,4]{0,1}") &&
              !strstr(t, "conditional") && !strstr(t, "all-gather"), "%s", t ? t : "");
    t = feed_partition(ctx, "HloModule m\nENTRY e {\n  tk = token[] after-all()\n"
        "  x = (f32[10,3], s32[5]) parameter(0), sharding={{devices=[4,1]<=[4]}, {devices=[4]<=[4]}}\n"
        "  ROOT o = token[] outfeed(x, tk), outfeed_shape=(f32[10,3]{1,0}, s32[5]{0}), "
        "sharding={{devices=[4,1]<=[4]}, {devices=[4]<=[4]}, {maximal device=0}}\n}\n", 4);
    CHECK_MSG(t && strstr(t, "s32[4] constant({0, 0, 1, 2})") && strstr(t, "branch_computations={outfeed_branch_0, outfeed_branch_1, outfeed_branch_2}") &&
              strstr(t, "= ((f32[3,3], s32[2]), token[]) parameter(0)") &&
              strstr(t, "outfeed_shape=(f32[3,3]{1,0}, s32[2]{0})") && strstr(t, "outfeed_shape=(f32[3,3]{1,0}, s32[1]{0})") &&
              strstr(t, "outfeed_shape=(f32[1,3]{1,0}, s32[0]{0})") && strstr(t, "f32[1,3] slice(") &&
              strstr(t, "s32[0] slice(") && strstr(t, "tuple(x, tk)"), "%s", t ? t : "");
    t = feed_partition(ctx, "HloModule m\nENTRY e {\n  tk = token[] after-all()\n"
        "  x = f32[8] parameter(0), sharding={maximal device=1}\n"
        "  ROOT o = token[] outfeed(x, tk), sharding={maximal device=1}\n}\n", 2);
    CHECK_MSG(t && strstr(t, "u32[] constant(1)") && strstr(t, "direction=EQ") && strstr(t, "ROOT after-all = token[] after-all()") &&
              strstr(t, "outfeed(get-tuple-element") && strstr(t, "true_computation=outfeed_branch_0, false_computation=outfeed_branch_1"),
              "%s", t ? t : "");
    t = feed_partition(ctx, "HloModule m\nENTRY e {\n  tk = token[] after-all()\n"
        "  x = (f32[8], f32[3]) parameter(0), sharding={{devices=[2]<=[2]}, {maximal device=0}}\n"
        "  ROOT o = token[] outfeed(x, tk), outfeed_shape=(f32[8]{0}, f32[3]{0}, f32[1]{0}), "
        "sharding={{devices=[2]<=[2]}, {maximal device=0}, {maximal device=0}}\n}\n", 2);
    CHECK_MSG(t && strstr(t, "outfeed(x, tk), sharding=") && !strstr(t, "outfeed_shape") && !strstr(t, "conditional"),
              "%s", t ? t : "");
    /* only the attribute itself is rewritten (not text inside a quoted config), a tiled layout kept; an
       outfeed_shape of another element type is dropped; one maximal sharding for a whole tuple sends it from
       that device */
    t = feed_partition(ctx, "HloModule m\nENTRY e {\n  tk = token[] after-all()\n"
        "  x = f32[8,4] parameter(0), sharding={devices=[2,1]<=[2]}\n"
        "  ROOT o = token[] outfeed(x, tk), outfeed_config=\"outfeed_shape=f32[8,4]\", outfeed_shape=f32[8,4]{1,0:T(8,128)}, "
        "sharding={{devices=[2,1]<=[2]}, {maximal device=0}}\n}\n", 2);
    CHECK_MSG(t && strstr(t, "outfeed_config=\"outfeed_shape=f32[8,4]\", outfeed_shape=f32[4,4]{1,0:T(8,128)}"), "%s", t ? t : "");
    t = feed_partition(ctx, "HloModule m\nENTRY e {\n  tk = token[] after-all()\n"
        "  x = f32[8,4] parameter(0), sharding={devices=[2,1]<=[2]}\n"
        "  ROOT o = token[] outfeed(x, tk), outfeed_shape=s32[8,4]{1,0}, sharding={{devices=[2,1]<=[2]}, {maximal device=0}}\n}\n", 2);
    CHECK_MSG(t && strstr(t, "outfeed(x, tk), sharding=") && !strstr(t, "outfeed_shape"), "%s", t ? t : "");
    t = feed_partition(ctx, "HloModule m\nENTRY e {\n  tk = token[] after-all()\n  x = (f32[8], s32[3]) parameter(0)\n"
        "  ROOT o = token[] outfeed(x, tk), sharding={maximal device=1}\n}\n", 2);
    CHECK_MSG(t && strstr(t, "u32[] constant(1)") && strstr(t, "direction=EQ") && strstr(t, "((f32[8], s32[3]), token[]) parameter(0)") &&
              strstr(t, "ROOT after-all = token[] after-all()"), "%s", t ? t : "");
    g = gst_hlo_parse(ctx, "HloModule m\nENTRY e {\n  tk = token[] after-all()\n  x = (f32[8], f32[3]) parameter(0)\n"
        "  ROOT o = token[] outfeed(x, tk), sharding={{replicated}, {devices=[2,2]<=[4]}}\n}\n");
    memset(&pd, 0, sizeof pd);
    pd.num_devices = 4;
    CHECK(g && gs_partition(g, &pd, &spmd) != GS_OK);
    CHECK_MSG(strstr(gs_ctx_error_msg(ctx), "o: the sharding of what it sends (element 1)") != NULL, "%s", gs_ctx_error_msg(ctx));
    gs_ctx_destroy(ctx);
}

void suite_spmd_xla(void) {
    RUN(test_xla_partial_manual_reshard);
    RUN(test_xla_manual_parameter_and_output);
    RUN(test_xla_sharding_device_subset);
    RUN(test_xla_check_bf16_tolerance);
    RUN(test_xla_check_bf16_partial_sums);
    RUN(test_xla_infeed);
    RUN(test_xla_outfeed);
    RUN(test_xla_manual_region_reference);
    RUN(test_xla_nested_manual_reference);
    RUN(test_xla_option_names);
    RUN(test_xla_option_windowed_thresholds);
    RUN(test_xla_windowed_einsum_forms);
    RUN(test_xla_windowed_reduce_scatter_off);
    RUN(test_xla_spmd_internal_custom_calls);
    RUN(test_xla_compat_entry_policy);
}
