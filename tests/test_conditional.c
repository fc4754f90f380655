/* test_conditional.c - XLA's conditional as an op of the IR: the pred and indexed forms against hand-computed
   values, only the taken branch running (a branch that cannot run is never reached), printing back as written,
   the C builder and its errors, propagation through branch parameters and roots, the partitioned program
   against the reference interpreter on shapes that do not divide, the cost of the longest branch, and a
   catalogue of bad input with line:column. Also the other computation wrappers of HLO text: async-start /
   async-update / async-done and call-start / call-done. */
#if !defined(_POSIX_C_SOURCE)
#  define _POSIX_C_SOURCE 200809L /* mkdtemp */
#endif
#include "test.h"
#include "spmd_case.h"
#include <unistd.h>

/* branches over a (f32[3], f32[3]) tuple or an f32[3]; an index outside [0, 3) takes the last branch */
static const char cond_module[] =
    "HloModule m\n\n"
    "sum {\n  p = (f32[3], f32[3]) parameter(0)\n  a = f32[3] get-tuple-element(p), index=0\n"
    "  b = f32[3] get-tuple-element(p), index=1\n  ROOT s = f32[3] add(a, b)\n}\n\n"
    "neg {\n  q = f32[3] parameter(0)\n  ROOT n = f32[3] negate(q)\n}\n\n"
    "sq {\n  q = f32[3] parameter(0)\n  ROOT m = f32[3] multiply(q, q)\n}\n\n"
    "ENTRY e {\n  c = pred[] parameter(0)\n  i = s32[] parameter(1)\n  x = f32[3] parameter(2)\n  y = f32[3] parameter(3)\n"
    "  t = (f32[3], f32[3]) tuple(x, y)\n"
    "  a = f32[3] conditional(c, t, y), true_computation=sum, false_computation=neg\n"
    "  b = f32[3] conditional(i, t, x, y), branch_computations={sum, neg, sq}\n"
    "  ROOT r = (f32[3], f32[3]) tuple(a, b)\n}\n";

static void test_cond_values_and_print(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx, cond_module);
    static const int32_t idx[6] = {0, 1, 2, 3, 100, -1};
    const float x[3] = {1, -2, 0.5f}, y[3] = {4, 3, -1};
    /* by hand: sum x+y = {5, 1, -0.5}, neg x = {-1, 2, -0.5}, sq y = {16, 9, 1} */
    static const float want_b[6][3] = {{5, 1, -0.5f}, {-1, 2, -0.5f}, {16, 9, 1}, {16, 9, 1}, {16, 9, 1}, {16, 9, 1}};
    float oa[3], ob[3];
    uint8_t pred;
    const void *ins[4];
    void *outs[2];
    const char *text;
    int k, j;
    if (!g) {
        gs_ctx_destroy(ctx);
        return;
    }
    text = gst_hlo_roundtrip(g);
    CHECK(text && strcmp(text, cond_module) == 0);   /* printed back exactly as written */
    CHECK(text && strstr(text, "conditional(c, t, y), true_computation=sum, false_computation=neg") != NULL);
    CHECK(text && strstr(text, "branch_computations={sum, neg, sq}") != NULL);
    CHECK_EQ_INT(gs_value_op(gs_graph_find(g, "b")), GS_OP_CONDITIONAL);
    ins[2] = x;
    ins[3] = y;
    outs[0] = oa;
    outs[1] = ob;
    for (k = 0; k < 6; k++) {
        pred = (uint8_t)(k % 2 == 0);
        ins[0] = &pred;
        ins[1] = &idx[k];
        CHECK_OK(gs_eval(g, ins, outs));
        for (j = 0; j < 3; j++) {
            CHECK_NEAR(oa[j], pred ? x[j] + y[j] : -y[j], 0);
            CHECK_NEAR(ob[j], want_b[k][j], 0);
        }
    }
    gs_ctx_destroy(ctx);
}

/* A branch that cannot run (an opaque custom-call) is never reached when the other branch is taken: the
   interpreter and the SPMD runtime run only the taken branch. */
static void test_cond_only_taken_branch(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx,
                                "HloModule m\n"
                                "ok {\n  p = f32[4] parameter(0)\n  ROOT d = f32[4] add(p, p)\n}\n"
                                "never {\n  p = f32[4] parameter(0)\n"
                                "  ROOT o = f32[4] custom-call(p), custom_call_target=\"NotRunnableHere\"\n}\n"
                                "ENTRY e {\n  c = pred[] parameter(0)\n  x = f32[4] parameter(1)\n"
                                "  ROOT r = f32[4] conditional(c, x, x), true_computation=ok, false_computation=never\n}\n");
    const float x[4] = {1, 2, 3, -4};
    float out[4], dev_out[2 * 4];
    const void *ins[2], *dins[4];
    void *outs[1], *douts[2];
    uint8_t yes = 1, no = 0;
    gs_runtime_desc rd;
    gs_runtime *rt = NULL;
    int j;
    if (!g) {
        gs_ctx_destroy(ctx);
        return;
    }
    ins[0] = &yes;
    ins[1] = x;
    outs[0] = out;
    CHECK_OK(gs_eval(g, ins, outs));
    for (j = 0; j < 4; j++) CHECK_NEAR(out[j], 2 * x[j], 0);
    ins[0] = &no;
    CHECK_ERR(gs_eval(g, ins, outs), GS_ERR_UNSUPPORTED, "NotRunnableHere");
    gs_ctx_clear_error(ctx);
    /* the same program on two devices (every value replicated): the taken branch alone runs on each */
    memset(&rd, 0, sizeof rd);
    rd.num_devices = 2;
    rd.mode = GS_RUNTIME_LOCKSTEP;
    CHECK_OK(gs_runtime_create(ctx, &rd, &rt));
    if (rt) {
        dins[0] = &yes;
        dins[1] = x;
        dins[2] = &yes;
        dins[3] = x;
        douts[0] = dev_out;
        douts[1] = dev_out + 4;
        CHECK_OK(gs_runtime_run(rt, g, dins, douts));
        for (j = 0; j < 8; j++) CHECK_NEAR(dev_out[j], 2 * x[j % 4], 0);
        dins[0] = &no;
        dins[2] = &no;
        CHECK(gs_runtime_run(rt, g, dins, douts) != GS_OK);
        CHECK(strstr(gs_ctx_error_msg(ctx), "NotRunnableHere") != NULL);
        gs_ctx_clear_error(ctx);
    }
    gs_runtime_destroy(rt);
    gs_ctx_destroy(ctx);
}

/* the C builder: branches are graphs with one parameter each */
static void test_cond_builder(void) {
    gs_ctx *ctx = gst_ctx();
    int64_t d2[1] = {2}, d3[1] = {3};
    gs_shape s2 = gs_shape_make(GS_F32, 1, d2), s3 = gs_shape_make(GS_F32, 1, d3), s0 = gs_shape_make(GS_S32, 0, NULL);
    gs_graph *neg = gs_graph_new(ctx, "neg"), *dbl = gs_graph_new(ctx, "dbl"), *three = gs_graph_new(ctx, "three");
    gs_graph *g = gs_graph_new(ctx, "main"), *br[3];
    gs_value *p, *i, *x, *z, *args[3], *c;
    const float xv[2] = {1.5f, -2};
    float out[2];
    int32_t iv;
    const void *ins[2];
    void *outs[1];
    int k;
    p = gs_parameter(neg, 0, s2, "p");
    CHECK_OK(gs_graph_set_root(neg, gs_neg(neg, p)));
    p = gs_parameter(dbl, 0, s2, "p");
    CHECK_OK(gs_graph_set_root(dbl, gs_add(dbl, p, p)));
    p = gs_parameter(three, 0, s3, "p");
    CHECK_OK(gs_graph_set_root(three, p));
    i = gs_parameter(g, 0, s0, "i");
    x = gs_parameter(g, 1, s2, "x");
    br[0] = neg;
    br[1] = dbl;
    args[0] = x;
    args[1] = x;
    c = gs_conditional(g, i, 2, br, args);
    CHECK(c != NULL);
    CHECK_OK(gs_graph_set_root(g, c));
    ins[0] = &iv;
    ins[1] = xv;
    outs[0] = out;
    for (k = -1; k < 3; k++) {
        iv = k;
        CHECK_OK(gs_eval(g, ins, outs));
        CHECK_NEAR(out[0], k == 0 ? -1.5 : 3.0, 0);
        CHECK_NEAR(out[1], k == 0 ? 2.0 : -4.0, 0);
    }
    /* errors: each names what is wrong, and the next builder returns NULL */
    z = gs_parameter(g, 2, gs_shape_make(GS_PRED, 0, NULL), "z");
    br[2] = dbl;
    args[2] = x;
    CHECK(gs_conditional(g, z, 3, br, args) == NULL);
    CHECK(strstr(gs_ctx_error_msg(ctx), "a pred selector takes 2 branches") != NULL);
    gs_ctx_clear_error(ctx);
    br[1] = three;
    CHECK(gs_conditional(g, i, 2, br, args) == NULL);
    CHECK(strstr(gs_ctx_error_msg(ctx), "parameter shape differs from its argument") != NULL);
    gs_ctx_clear_error(ctx);
    CHECK(gs_conditional(g, x, 2, br, args) == NULL);   /* f32[2] selector */
    CHECK(strstr(gs_ctx_error_msg(ctx), "the selector must be pred[] or s32[]") != NULL);
    gs_ctx_clear_error(ctx);
    CHECK(gs_conditional(g, i, 0, br, args) == NULL);
    CHECK(gs_ctx_error(ctx) == GS_ERR_INVALID_ARG);
    gs_ctx_clear_error(ctx);
    gs_ctx_destroy(ctx);
}

/* propagation: branch parameters take their arguments' shardings, the conditional its branches' roots, and back */
static void test_cond_propagate(void) {
    static const char *const srcs[2] = {
        "HloModule m\nb0 {\n  p = f32[8,4] parameter(0)\n  ROOT n = f32[8,4] negate(p)\n}\n"
        "b1 {\n  p = f32[8,4] parameter(0)\n  ROOT e = f32[8,4] exponential(p)\n}\n"
        "ENTRY e {\n  c = pred[] parameter(0)\n  x = f32[8,4] parameter(1), sharding={devices=[4,1]0,1,2,3}\n"
        "  ROOT r = f32[8,4] conditional(c, x, x), true_computation=b0, false_computation=b1\n}\n",
        "HloModule m\nb0 {\n  p = f32[8,4] parameter(0)\n  ROOT n = f32[8,4] negate(p)\n}\n"
        "b1 {\n  p = f32[8,4] parameter(0)\n  ROOT e = f32[8,4] exponential(p)\n}\n"
        "ENTRY e {\n  c = pred[] parameter(0)\n  x = f32[8,4] parameter(1)\n"
        "  k = f32[8,4] conditional(c, x, x), true_computation=b0, false_computation=b1\n"
        "  ROOT r = f32[8,4] copy(k), sharding={devices=[1,4]0,1,2,3}\n}\n"};
    static const char *const want[2] = {"{devices=[4,1]0,1,2,3}", "{devices=[1,4]0,1,2,3}"};
    int t;
    for (t = 0; t < 2; t++) {
        gs_ctx *ctx = gst_ctx();
        gs_graph *g = gst_hlo_parse(ctx, srcs[t]);
        gs_propagate_desc pd;
        gs_value *c;
        const char *names[4] = {"p", "n", "p", "e"};
        int k;
        if (!g) {
            gs_ctx_destroy(ctx);
            continue;
        }
        memset(&pd, 0, sizeof pd);
        pd.num_devices = 4;
        CHECK_OK(gs_propagate(g, &pd));
        c = gs_graph_find(g, t ? "k" : "r");
        CHECK_MSG(c && strcmp(gs_value_sharding_text(c), want[t]) == 0, "case %d: conditional %s", t,
                  c ? gs_value_sharding_text(c) : "?");
        CHECK_MSG(strcmp(gs_value_sharding_text(gs_graph_find(g, "x")), want[t]) == 0, "case %d: x %s", t,
                  gs_value_sharding_text(gs_graph_find(g, "x")));
        CHECK(strcmp(gs_value_sharding_text(gs_graph_find(g, "c")), "{replicated}") == 0);
        for (k = 0; k < 4; k++) {   /* b0's p and n, b1's p and e */
            gs_graph *b = gs_value_called(c, k / 2);
            gs_value *v = b ? gs_graph_find(b, names[k]) : NULL;
            CHECK_MSG(v && strcmp(gs_value_sharding_text(v), want[t]) == 0, "case %d: %s %s", t, names[k],
                      v ? gs_value_sharding_text(v) : "missing");
        }
        gs_ctx_destroy(ctx);
    }
}

/* the partitioned program against the reference, dims that do not divide by the devices, every branch taken
   (a constant index, one out of range both ways, and a predicate computed from sharded data) */
static void test_cond_partitioned_vs_reference(void) {
    static const char branches[] =
        "tb {\n  p = (f32[7,5], f32[5,3]) parameter(0)\n  a = f32[7,5] get-tuple-element(p), index=0\n"
        "  w = f32[5,3] get-tuple-element(p), index=1\n"
        "  d = f32[7,3] dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  ROOT t = f32[7,3] tanh(d)\n}\n"
        "fb {\n  q = f32[7,3] parameter(0)\n  ROOT n = f32[7,3] negate(q)\n}\n"
        "sb {\n  q = f32[7,3] parameter(0)\n  ROOT s = f32[7,3] multiply(q, q)\n}\n"
        "add {\n  u = f32[] parameter(0)\n  v = f32[] parameter(1)\n  ROOT s = f32[] add(u, v)\n}\n";
    static const int idx[5] = {0, 1, 2, 9, -3};
    char body[2048];
    int k, D;
    for (D = 3; D <= 4; D++) {
        for (k = 0; k < 5; k++) {
            gst_case h;
            snprintf(body, sizeof body,
                     "  x = f32[7,5] parameter(0), sharding={devices=[%d,1]<=[%d]}\n  w = f32[5,3] parameter(1)\n"
                     "  y = f32[7,3] parameter(2), sharding={devices=[1,%d]<=[%d]}\n  i = s32[] constant(%d)\n"
                     "  t = (f32[7,5], f32[5,3]) tuple(x, w)\n"
                     "  c = f32[7,3] conditional(i, t, y, y), branch_computations={tb, fb, sb}\n"
                     "  ROOT r = f32[7,3] add(c, y)\n",
                     D, D, D, D, idx[k]);
            if (gst_case_run(&h, branches, body, D, 1e-5, 11 + (uint64_t)k)) {
                CHECK_MSG(strstr(h.text, "conditional(") != NULL, "D=%d: no conditional in\n%s", D, h.text);
            }
            gs_ctx_destroy(h.ctx);
        }
        {   /* pred form, the predicate from a reduce over sharded data (each device must take the same branch) */
            gst_case h;
            snprintf(body, sizeof body,
                     "  x = f32[7,5] parameter(0), sharding={devices=[%d,1]<=[%d]}\n  w = f32[5,3] parameter(1)\n"
                     "  y = f32[7,3] parameter(2), sharding={devices=[%d,1]<=[%d]}\n  z = f32[] constant(0)\n"
                     "  s = f32[] reduce(x, z), dimensions={0,1}, to_apply=add\n"
                     "  c0 = pred[] compare(s, z), direction=GT\n"
                     "  t = (f32[7,5], f32[5,3]) tuple(x, w)\n"
                     "  c = f32[7,3] conditional(c0, t, y), true_computation=tb, false_computation=fb\n"
                     "  ROOT r = f32[7,3] add(c, y)\n",
                     D, D, D, D);
            if (gst_case_run(&h, branches, body, D, 1e-5, 5)) CHECK(strstr(h.text, "true_computation=") != NULL);
            gs_ctx_destroy(h.ctx);
        }
    }
}

/* cost: the conditional's row is its longest branch (a dot against a negate), the branches' rows follow it */
static void test_cond_cost(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx,
                                "HloModule m\n"
                                "cheap {\n  p = (f32[64,64], f32[64,64]) parameter(0)\n  a = f32[64,64] get-tuple-element(p), index=0\n"
                                "  ROOT s = f32[64,64] negate(a)\n}\n"
                                "dear {\n  p = (f32[64,64], f32[64,64]) parameter(0)\n  a = f32[64,64] get-tuple-element(p), index=0\n"
                                "  b = f32[64,64] get-tuple-element(p), index=1\n"
                                "  ROOT d = f32[64,64] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n"
                                "ENTRY e {\n  i = s32[] parameter(0)\n  x = f32[64,64] parameter(1)\n  y = f32[64,64] parameter(2)\n"
                                "  t = (f32[64,64], f32[64,64]) tuple(x, y)\n"
                                "  ROOT c = f32[64,64] conditional(i, t, t), branch_computations={cheap, dear}\n}\n");
    gs_topology_desc d;
    gs_topology *t = NULL;
    gs_cost_report *rep = NULL;
    const gs_cost_row *row = NULL;
    int k, n, branch_rows = 0;
    memset(&d, 0, sizeof d);
    d.chip = gs_chip_find("v5e");
    d.mesh_rank = 1;
    d.mesh[0] = 1;
    if (!g || gs_topology_create(ctx, &d, &t) != GS_OK || gs_cost_program(g, t, &rep) != GS_OK) {
        CHECK_MSG(0, "cost: %s", gs_ctx_error_msg(ctx));
        gs_ctx_destroy(ctx);
        return;
    }
    n = gs_cost_report_num_rows(rep);
    for (k = 0; k < n; k++) {
        const gs_cost_row *r = gs_cost_report_row(rep, k);
        if (gs_value_op(r->value) == GS_OP_CONDITIONAL) row = r;
        if (r->role == 3) branch_rows++;
    }
    CHECK_EQ_INT(branch_rows, 3 + 4);   /* cheap: p, a, s; dear: p, a, b, d */
    CHECK(row != NULL);
    if (row) {
        CHECK_NEAR(row->flops, 2.0 * 64 * 64 * 64, 0);   /* the dot, not the add */
        CHECK_EQ_INT(row->trips, 1);
    }
    CHECK(strstr(gs_cost_report_text(rep), "the longest branch (1)") != NULL);
    CHECK(strstr(gs_cost_report_json(rep), "\"branches\": [") != NULL);
    gs_ctx_destroy(ctx);
}

/* bad input: each an error at the place it is, and the CLI exits 2 */
static void test_cond_bad_input(void) {
    static const char head[] = "HloModule m\nb {\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(p)\n}\n"
                               "w {\n  p = f32[3] parameter(0)\n  ROOT n = f32[3] negate(p)\n}\n"
                               "ENTRY e {\n  c = pred[] parameter(0)\n  i = s32[] parameter(1)\n  x = f32[2] parameter(2)\n"
                               "  v = pred[2] parameter(3)\n  z = f32[3] parameter(4)\n";
    static const struct { const char *inst; int col; gs_result code; const char *msg; } cases[] = {
        {"  ROOT r = f32[2] conditional(i, x), branch_computations={b, b}\n", 19, GS_ERR_PARSE,
         "conditional with 2 branches takes 3 operands, found 2"},
        {"  ROOT r = f32[2] conditional(c, x, x, x), true_computation=b, false_computation=b\n", 19, GS_ERR_PARSE,
         "takes 3 operands, found 4"},
        {"  ROOT r = f32[2] conditional(v, x, x), true_computation=b, false_computation=b\n", 31, GS_ERR_PARSE,
         "needs a pred[] scalar first operand, found pred"},
        {"  ROOT r = f32[2] conditional(i, x, x), true_computation=b, false_computation=b\n", 31, GS_ERR_PARSE,
         "needs a pred[] scalar first operand, found s32"},
        {"  ROOT r = f32[2] conditional(c, x, z), true_computation=b, false_computation=w\n", 8, GS_ERR_PARSE,
         "branch w returns a different shape than branch b"},
        {"  ROOT r = f32[2] conditional(c, x, x), true_computation=b, false_computation=w\n", 8, GS_ERR_PARSE,
         "branch w's parameter shape differs from its argument x"},
        {"  ROOT r = f32[2] conditional(c, x, x), true_computation=b\n", 19, GS_ERR_PARSE,
         "needs true_computation= and false_computation="},
        {"  ROOT r = f32[2] conditional(i, x, x), branch_computations={b, nope}\n", 65, GS_ERR_PARSE,
         "unknown computation 'nope'"},
        {"  ROOT r = f32[2] conditional(i, x), branch_computations={b}, true_computation=b\n", 19, GS_ERR_PARSE,
         "needs true_computation= and false_computation="},
    };
    char text[1024], dir[] = "/tmp/gst_condXXXXXX", path[256];
    bool have_dir = mkdtemp(dir) != NULL;
    int k;
    for (k = 0; k < (int)(sizeof cases / sizeof cases[0]); k++) {
        FILE *f;
        snprintf(text, sizeof text, "%s%s}\n", head, cases[k].inst);
        gst_hlo_error_at(text, cases[k].code, 16, cases[k].col, cases[k].msg);
        if (!have_dir) continue;
        snprintf(path, sizeof path, "%s/bad%d.hlo", dir, k);
        if (!(f = fopen(path, "w"))) continue;
        fputs(text, f);
        fclose(f);
        CHECK_EQ_INT(gst_cli(dir, "print %s", path), 2);
        CHECK_MSG(strstr(gst_cli_err, "line 16, column ") != NULL, "case %d: %s", k, gst_cli_err);
        remove(path);
    }
    if (have_dir) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        CHECK(system(cmd) == 0);
    }
}

/* async-start(calls=C) / async-update / async-done and call-start(to_apply=C) / call-done: the wrapped
   computation's value (hand-computed), XLA's start tuple ((operands), result, context) read back, the start
   shape checked, and a manual start's every leaf manual after propagation */
static void test_async_wrappers(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx,
                                "HloModule m\n"
                                "body {\n  p0 = s32[4] parameter(0)\n  p1 = s32[4] parameter(1)\n  a = s32[4] add(p0, p1)\n"
                                "  m = s32[4] multiply(p0, p1)\n  ROOT r = (s32[4], s32[4]) tuple(a, m)\n}, execution_thread=\"t1\"\n"
                                "dbl {\n  q = s32[4] parameter(0)\n  ROOT d = s32[4] add(q, q)\n}\n"
                                "ENTRY e {\n  x = s32[4] parameter(0)\n  y = s32[4] parameter(1)\n"
                                "  s = ((s32[4], s32[4]), (s32[4], s32[4]), u32[]) async-start(x, y), calls=body, async_execution_thread=\"t1\"\n"
                                "  u = ((s32[4], s32[4]), (s32[4], s32[4]), u32[]) async-update(s)\n"
                                "  d = (s32[4], s32[4]) async-done(u)\n"
                                "  cs = ((s32[4]), s32[4], u32[]) call-start(x), to_apply=dbl, async_execution_thread=\"t1\"\n"
                                "  cd = s32[4] call-done(cs)\n"
                                "  d0 = s32[4] get-tuple-element(d), index=0\n  d1 = s32[4] get-tuple-element(d), index=1\n"
                                "  ROOT t = (s32[4], s32[4], s32[4]) tuple(d0, d1, cd)\n}\n");
    const int32_t x[4] = {1, -2, 3, 40}, y[4] = {5, 6, -7, 2};
    int32_t o[3][4];
    const void *ins[2];
    void *outs[3];
    int i;
    if (g) {
        gst_hlo_roundtrip(g);
        ins[0] = x;
        ins[1] = y;
        for (i = 0; i < 3; i++) outs[i] = o[i];
        CHECK_OK(gs_eval(g, ins, outs));
        for (i = 0; i < 4; i++) {
            CHECK_EQ_INT(o[0][i], x[i] + y[i]);
            CHECK_EQ_INT(o[1][i], x[i] * y[i]);
            CHECK_EQ_INT(o[2][i], 2 * x[i]);
        }
    }
    gs_ctx_destroy(ctx);
    ctx = gst_ctx();
    g = gst_hlo_parse(ctx, "HloModule m\nc {\n  p0 = f32[8] parameter(0)\n  ROOT n = f32[8] negate(p0)\n}\n"
                           "ENTRY e {\n  p = f32[8] parameter(0), sharding={manual}\n"
                           "  s = ((f32[8]), f32[8], u32[]) call-start(p), to_apply=c\n  ROOT d = f32[8] call-done(s)\n}\n");
    if (g) {
        gs_propagate_desc pd;
        memset(&pd, 0, sizeof pd);
        pd.num_devices = 2;
        CHECK_OK(gs_propagate(g, &pd));
        CHECK(strcmp(gs_value_sharding_text(gs_graph_find(g, "s")), "{{manual}, {manual}, {manual}}") == 0);
        CHECK(strcmp(gs_value_sharding_text(gs_graph_find(g, "d")), "{manual}") == 0);
    }
    gs_ctx_destroy(ctx);
    gst_hlo_error_at("HloModule m\nc {\n  p0 = f32[8] parameter(0)\n  ROOT n = f32[8] negate(p0)\n}\n"
                     "ENTRY e {\n  p = f32[8] parameter(0)\n  ROOT s = f32[8] async-start(p), calls=c\n}\n",
                     GS_ERR_PARSE, 8, 12, "async-start 's' needs its shape written: ((operands), result, contexts...)");
    gst_hlo_error_at("HloModule m\nc {\n  p0 = f32[8] parameter(0)\n  ROOT n = f32[8] negate(p0)\n}\n"
                     "ENTRY e {\n  p = f32[8] parameter(0)\n  ROOT s = ((f32[8]), f32[8], u32[]) async-start(p), to_apply=c\n}\n",
                     GS_ERR_PARSE, 8, 38, "async-start 's' needs the attribute calls=");
    gst_hlo_error_at("HloModule m\nc {\n  p0 = f32[8] parameter(0)\n  ROOT n = f32[8] negate(p0)\n}\n"
                     "ENTRY e {\n  p = f32[8] parameter(0)\n  ROOT s = ((f32[8]), f32[4], u32[]) call-start(p), to_apply=c\n}\n",
                     GS_ERR_PARSE, 8, 12, "call-start 's' is declared ((f32[8]), f32[4], u32[]) but is ((f32[8]), f32[8], u32[])");
}

void suite_conditional(void) {
    RUN(test_cond_values_and_print);
    RUN(test_cond_only_taken_branch);
    RUN(test_cond_builder);
    RUN(test_cond_propagate);
    RUN(test_cond_partitioned_vs_reference);
    RUN(test_cond_cost);
    RUN(test_cond_bad_input);
    RUN(test_async_wrappers);
}
