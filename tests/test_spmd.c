/* test_spmd.c - the partitioner: each rule run on emulated devices (poisoned padding) against the reference
   interpreter, and the collectives each reshard and dot strategy chooses. */
#include "test.h"

/* instructions of op in g and its loop bodies */
static int count_op(const gs_graph *g, gs_op op) {
    int i, n = 0;
    for (i = 0; i < gs_graph_num_values(g); i++) {
        gs_value *v = gs_graph_value(g, i);
        if (gs_value_op(v) == op) n++;
    }
    return n;
}

/* Partitions g for D devices, runs it with poisoned padding and compares every output with gs_eval on the same
   random inputs (floats within tol relative, others exactly). Returns the SPMD program or NULL on failure. */
static gs_graph *spmd_check_opt(gs_graph *g, int64_t D, double tol, const gs_partition_desc *opt) {
    gs_ctx *ctx = gs_graph_ctx(g);
    gs_partition_desc pd;
    gs_graph *spmd = NULL;
    gs_runtime *rt = NULL;
    gs_runtime_desc rd;
    int nin = 0, nout, k;
    gs_shape in_shapes[16], out_shapes[16];
    const gs_sharding *in_sh[16], *out_sh[16];
    void *in[16], *ref[16], *got[16];
    bool ok = true;
    if (opt) pd = *opt;
    else memset(&pd, 0, sizeof pd);
    pd.num_devices = D;
    if (gs_partition(g, &pd, &spmd) != GS_OK) {
        gst_failf(__FILE__, __LINE__, "gs_partition: %s", gs_ctx_error_msg(ctx));
        return NULL;
    }
    for (k = 0; k < gs_graph_num_params(g); k++) {
        gs_value *p = gs_graph_param(g, k);
        in_shapes[nin] = gs_value_shape(p);
        in_sh[nin] = gs_partition_param_sharding(spmd, nin);
        in[nin] = malloc(gs_shape_bytes(&in_shapes[nin]) + 1);
        gs_fill_random(in_shapes[nin], 1234 + (uint64_t)k, k, in[nin]);
        nin++;
    }
    nout = gs_graph_num_outputs(g);
    for (k = 0; k < nout; k++) {
        out_shapes[k] = gs_graph_output_shape(g, k);
        out_sh[k] = gs_partition_output_sharding(spmd, k);
        ref[k] = calloc(1, gs_shape_bytes(&out_shapes[k]) + 1);
        got[k] = calloc(1, gs_shape_bytes(&out_shapes[k]) + 1);
    }
    CHECK_OK(gs_eval(g, (const void *const *)in, ref));
    memset(&rd, 0, sizeof rd);
    rd.num_devices = D;
    rd.mode = GS_RUNTIME_LOCKSTEP;
    rd.check_replicas = true;
    CHECK_OK(gs_runtime_create(ctx, &rd, &rt));
    if (rt && gs_runtime_run_global(rt, spmd, in_shapes, in_sh, (const void *const *)in, out_shapes, out_sh, got) != GS_OK) {
        gst_failf(__FILE__, __LINE__, "run: %s\n%s", gs_ctx_error_msg(ctx), gs_hlo_print(spmd));
        ok = false;
    }
    for (k = 0; k < nout && ok; k++) {
        int64_t n = gs_shape_numel(&out_shapes[k]), i;
        for (i = 0; i < n && ok; i++) {
            double a, b;
            switch (out_shapes[k].dtype) {
            case GS_F32: a = ((float *)got[k])[i]; b = ((float *)ref[k])[i]; break;
            case GS_BF16: a = gs_bf16_to_f32(((uint16_t *)got[k])[i]); b = gs_bf16_to_f32(((uint16_t *)ref[k])[i]); break;
            case GS_S32: a = ((int32_t *)got[k])[i]; b = ((int32_t *)ref[k])[i]; break;
            case GS_U32: a = ((uint32_t *)got[k])[i]; b = ((uint32_t *)ref[k])[i]; break;
            default: a = ((uint8_t *)got[k])[i]; b = ((uint8_t *)ref[k])[i]; break;
            }
            if (!(fabs(a - b) <= tol * (1 + fabs(b))) && !(isnan(a) && isnan(b))) {
                gst_failf(__FILE__, __LINE__, "D=%lld output %d element %lld: got %.9g want %.9g\n%s", (long long)D, k,
                          (long long)i, a, b, gs_partition_print(spmd, true));
                ok = false;
            }
        }
    }
    for (k = 0; k < nin; k++) free(in[k]);
    for (k = 0; k < nout; k++) { free(ref[k]); free(got[k]); }
    gs_runtime_destroy(rt);
    return ok ? spmd : NULL;
}

static gs_graph *spmd_check(gs_graph *g, int64_t D, double tol) { return spmd_check_opt(g, D, tol, NULL); }

static gs_shape shp(int rank, int64_t a, int64_t b, int64_t c) {
    int64_t d[3] = {a, b, c};
    return gs_shape_make(GS_F32, rank, d);
}

/* ---- reshards: one source sharding into one target, and the collectives that takes ---- */
typedef struct { const char *from, *to; int rank; int64_t d0, d1, d2; int64_t D; int a2a, ag, cp, ar; } reshard_case;

static void test_spmd_reshard_transitions(void) {
    static const reshard_case cases[] = {
        /* nothing */
        {"{devices=[4,1]<=[4]}", "{devices=[4,1]<=[4]}", 2, 8, 6, 0, 4, 0, 0, 0, 0},
        /* replicated -> split: a local slice */
        {"{replicated}", "{devices=[4,1]<=[4]}", 2, 8, 6, 0, 4, 0, 0, 0, 0},
        {"{replicated}", "{devices=[2,2]<=[4]}", 2, 7, 5, 0, 4, 0, 0, 0, 0},
        /* split -> replicated: all-gather */
        {"{devices=[4,1]<=[4]}", "{replicated}", 2, 8, 6, 0, 4, 0, 1, 0, 0},
        {"{devices=[2,2]<=[4]}", "{replicated}", 2, 7, 5, 0, 4, 0, 2, 0, 0},
        /* dim swap: one all-to-all */
        {"{devices=[4,1]<=[4]}", "{devices=[1,4]<=[4]}", 2, 8, 8, 0, 4, 1, 0, 0, 0},
        {"{devices=[4,1]<=[4]}", "{devices=[1,4]<=[4]}", 2, 7, 9, 0, 4, 1, 0, 0, 0},
        {"{devices=[1,8,1]<=[8]}", "{devices=[1,1,8]<=[8]}", 3, 3, 16, 8, 8, 1, 0, 0, 0},
        /* device order: collective-permute */
        {"{devices=[4,1]<=[4]}", "{devices=[4,1]3,2,1,0}", 2, 8, 6, 0, 4, 0, 0, 1, 0},
        /* partially replicated -> finer: local slice */
        {"{devices=[2,1,2]<=[4] last_tile_dim_replicate}", "{devices=[2,2]<=[4]}", 2, 8, 6, 0, 4, 0, 0, 0, 0},
        /* finer -> partially replicated: all-gather in groups */
        {"{devices=[2,2]<=[4]}", "{devices=[2,1,2]<=[4] last_tile_dim_replicate}", 2, 8, 6, 0, 4, 0, 1, 0, 0},
        /* 4 tiles on dim 0 -> 2x2 */
        {"{devices=[4,1]<=[4]}", "{devices=[2,2]<=[4]}", 2, 8, 8, 0, 4, 1, 0, 0, 0},
        /* uneven everywhere, 3 devices */
        {"{devices=[3,1]<=[3]}", "{devices=[1,3]<=[3]}", 2, 7, 5, 0, 3, 1, 0, 0, 0},
        {"{devices=[1,3]<=[3]}", "{replicated}", 2, 7, 5, 0, 3, 0, 1, 0, 0},
    };
    int i;
    for (i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        const reshard_case *c = &cases[i];
        gs_ctx *ctx = gst_ctx();
        gs_graph *g = gs_graph_new(ctx, "r"), *spmd;
        gs_value *x = gs_parameter(g, -1, shp(c->rank, c->d0, c->d1, c->d2), "x");
        gs_value *y;
        CHECK_OK(gs_value_set_sharding_text(x, c->from));
        y = gs_annotate(g, gs_neg(g, x), c->to);
        CHECK_OK(gs_graph_set_root(g, gs_neg(g, y)));
        spmd = spmd_check(g, c->D, 0);
        if (spmd) {
            CHECK_MSG(count_op(spmd, GS_OP_ALL_TO_ALL) == c->a2a && count_op(spmd, GS_OP_ALL_GATHER) == c->ag &&
                      count_op(spmd, GS_OP_COLLECTIVE_PERMUTE) == c->cp && count_op(spmd, GS_OP_ALL_REDUCE) == c->ar,
                      "case %d %s -> %s: a2a %d ag %d cp %d ar %d\n%s", i, c->from, c->to,
                      count_op(spmd, GS_OP_ALL_TO_ALL), count_op(spmd, GS_OP_ALL_GATHER),
                      count_op(spmd, GS_OP_COLLECTIVE_PERMUTE), count_op(spmd, GS_OP_ALL_REDUCE),
                      gs_partition_print(spmd, true));
            CHECK_EQ_INT(gs_partition_num_warnings(spmd), 0);
        }
        gs_ctx_destroy(ctx);
    }
}

/* ---- dot strategies ---- */
typedef struct { const char *spec, *ls, *rs, *os; int64_t l[3], r[3]; int lr, rr; int64_t D; int ar, rs_, ag, a2a; } dot_case;

static void test_spmd_dot_strategies(void) {
    static const dot_case cases[] = {
        /* batch-parallel: no communication */
        {"bmk,bkn->bmn", "{devices=[4,1,1]<=[4]}", "{devices=[4,1,1]<=[4]}", "{devices=[4,1,1]<=[4]}", {8, 5, 6}, {8, 6, 7}, 3, 3, 4, 0, 0, 0, 0},
        /* contracting split on both: local dot + all-reduce */
        {"mk,kn->mn", "{devices=[1,4]<=[4]}", "{devices=[4,1]<=[4]}", "{replicated}", {5, 8, 0}, {8, 6, 0}, 2, 2, 4, 1, 0, 0, 0},
        /* ... with the output split: reduce-scatter */
        {"mk,kn->mn", "{devices=[1,4]<=[4]}", "{devices=[4,1]<=[4]}", "{devices=[4,1]<=[4]}", {8, 8, 0}, {8, 6, 0}, 2, 2, 4, 0, 1, 0, 0},
        /* uneven contracting dim (masked with zeros) */
        {"mk,kn->mn", "{devices=[1,4]<=[4]}", "{devices=[4,1]<=[4]}", "{replicated}", {5, 7, 0}, {7, 3, 0}, 2, 2, 4, 1, 0, 0, 0},
        /* lhs non-contracting split like the output, rhs replicated */
        {"mk,kn->mn", "{devices=[4,1]<=[4]}", "{replicated}", "{devices=[4,1]<=[4]}", {9, 5, 0}, {5, 6, 0}, 2, 2, 4, 0, 0, 0, 0},
        /* rhs resharded to match by all-to-all (GShard's dispatch einsum: G split -> E split) */
        {"gsec,gsm->egcm", "{devices=[4,1,1,1]<=[4]}", "{devices=[4,1,1]<=[4]}", "{devices=[4,1,1,1]<=[4]}", {8, 3, 4}, {8, 3, 5}, 0, 0, 4, 0, 0, 0, 1},
    };
    int i;
    for (i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        const dot_case *c = &cases[i];
        gs_ctx *ctx = gst_ctx();
        gs_graph *g = gs_graph_new(ctx, "d"), *spmd;
        gs_value *l, *r, *y;
        if (c->lr == 0) {
            /* the dispatch einsum of the MoE layer: [G,S,E,C] x [G,S,M] -> [E,G,C,M] */
            int64_t ld[4] = {8, 3, 4, 2}, rd[3] = {8, 3, 5};
            l = gs_parameter(g, -1, gs_shape_make(GS_F32, 4, ld), "l");
            r = gs_parameter(g, -1, gs_shape_make(GS_F32, 3, rd), "r");
        } else {
            l = gs_parameter(g, -1, gs_shape_make(GS_F32, c->lr, c->l), "l");
            r = gs_parameter(g, -1, gs_shape_make(GS_F32, c->rr, c->r), "r");
        }
        CHECK_OK(gs_value_set_sharding_text(l, c->ls));
        CHECK_OK(gs_value_set_sharding_text(r, c->rs));
        y = gs_annotate(g, gs_einsum(g, c->spec, l, r), c->os);
        CHECK_OK(gs_graph_set_root(g, gs_neg(g, y)));
        spmd = spmd_check(g, c->D, 1e-5);
        if (spmd) {
            CHECK_MSG(count_op(spmd, GS_OP_ALL_REDUCE) == c->ar && count_op(spmd, GS_OP_REDUCE_SCATTER) == c->rs_ &&
                      count_op(spmd, GS_OP_ALL_GATHER) == c->ag && count_op(spmd, GS_OP_ALL_TO_ALL) == c->a2a,
                      "case %d %s: ar %d rs %d ag %d a2a %d\n%s", i, c->spec, count_op(spmd, GS_OP_ALL_REDUCE),
                      count_op(spmd, GS_OP_REDUCE_SCATTER), count_op(spmd, GS_OP_ALL_GATHER),
                      count_op(spmd, GS_OP_ALL_TO_ALL), gs_partition_print(spmd, true));
            CHECK_EQ_INT(gs_partition_num_warnings(spmd), 0);
        }
        gs_ctx_destroy(ctx);
    }
}

/* both operands split on non-contracting dims: all-gather the smaller, or the windowed einsum loop */
static void test_spmd_dot_windowed(void) {
    int w;
    for (w = 0; w < 2; w++) {
        gs_ctx *ctx = gst_ctx();
        gs_graph *g = gs_graph_new(ctx, "d"), *spmd;
        int64_t ld[2] = {8, 6}, rd[2] = {6, 10};
        gs_value *l = gs_parameter(g, -1, gs_shape_make(GS_F32, 2, ld), "l");
        gs_value *r = gs_parameter(g, -1, gs_shape_make(GS_F32, 2, rd), "r");
        gs_partition_desc pd;
        memset(&pd, 0, sizeof pd);
        pd.windowed_einsum_bytes = w ? 1 : -1;
        CHECK_OK(gs_value_set_sharding_text(l, "{devices=[4,1]<=[4]}"));
        CHECK_OK(gs_value_set_sharding_text(r, "{devices=[1,4]<=[4]}"));
        CHECK_OK(gs_graph_set_root(g, gs_annotate(g, gs_einsum(g, "mk,kn->mn", l, r), "{devices=[4,1]<=[4]}")));
        spmd = spmd_check_opt(g, 4, 1e-5, &pd);
        if (spmd) {
            if (w) {
                CHECK_EQ_INT(count_op(spmd, GS_OP_WHILE), 1);
                CHECK_EQ_INT(count_op(spmd, GS_OP_ALL_GATHER), 0);
            } else {
                CHECK_EQ_INT(count_op(spmd, GS_OP_ALL_GATHER), 1);
            }
        }
        gs_ctx_destroy(ctx);
    }
}

/* ---- reductions, scans, sorts, data movement ---- */
static void test_spmd_reduce_scan_sort(void) {
    static const char *const progs[] = {
        /* max over a split, uneven dim: the padding (poisoned) must be masked with -inf */
        "HloModule m\nmx { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT c = f32[] maximum(a, b) }\n"
        "ENTRY e { x = f32[7,5] parameter(0), sharding={devices=[4,1]<=[4]}\n i = f32[] constant(-inf)\n"
        " ROOT r = f32[5] reduce(x, i), dimensions={0}, to_apply=mx }\n",
        /* sum over a split dim into a split output: reduce-scatter */
        "HloModule m\nad { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT c = f32[] add(a, b) }\n"
        "ENTRY e { x = f32[8,8] parameter(0), sharding={devices=[4,1]<=[4]}\n i = f32[] constant(0)\n"
        " r = f32[8] reduce(x, i), dimensions={0}, to_apply=ad\n ROOT s = f32[8] custom-call(r), custom_call_target=\"Sharding\", sharding={devices=[4]<=[4]} }\n",
        /* cumulative sum and max along a split, uneven dim (and reversed) */
        "HloModule m\nENTRY e { x = f32[3,10] parameter(0), sharding={devices=[1,4]<=[4]}\n"
        " a = f32[3,10] cumsum(x), dimensions={1}\n b = f32[3,10] cummax(x), dimensions={1}, reverse=true\n ROOT t = (f32[3,10], f32[3,10]) tuple(a, b) }\n",
        /* sort along the split dim: tiles moved to the other dim by all-to-all */
        "HloModule m\nlt { a = f32[] parameter(0)\n b = f32[] parameter(1)\n c = s32[] parameter(2)\n d = s32[] parameter(3)\n"
        " ROOT r = pred[] compare(a, b), direction=LT }\n"
        "ENTRY e { x = f32[6,9] parameter(0), sharding={devices=[1,3]<=[3]}\n io = s32[6,9] iota(), iota_dimension=1\n"
        " s = (f32[6,9], s32[6,9]) sort(x, io), dimensions={1}, is_stable=true, to_apply=lt\n"
        " v = f32[6,9] get-tuple-element(s), index=0\n w = s32[6,9] get-tuple-element(s), index=1\n"
        " v2 = f32[6,9] custom-call(v), custom_call_target=\"Sharding\", sharding={devices=[1,3]<=[3]}\n"
        " w2 = s32[6,9] custom-call(w), custom_call_target=\"Sharding\", sharding={devices=[1,3]<=[3]}\n"
        " ROOT t = (f32[6,9], s32[6,9]) tuple(v2, w2) }\n",
        /* iota, broadcast, transpose, reshape, slice, pad, concatenate, dynamic-slice on split values */
        "HloModule m\nENTRY e { x = f32[6,4] parameter(0), sharding={devices=[2,1]<=[2]}\n"
        " io = f32[6,4] iota(), iota_dimension=0\n a = f32[6,4] add(x, io)\n t = f32[4,6] transpose(a), dimensions={1,0}\n"
        " r = f32[4,2,3] reshape(t)\n b = f32[5,4,2,3] broadcast(r), dimensions={1,2,3}\n"
        " s = f32[5,4,2,2] slice(b), slice={[0:5], [0:4], [0:2], [1:3]}\n z = f32[] constant(0)\n"
        " p = f32[5,4,2,4] pad(s, z), padding=0_0x0_0x0_0x1_1\n c = f32[5,4,2,7] concatenate(p, b), dimensions={3}\n"
        " k = s32[] constant(1)\n ROOT d = f32[5,4,2,3] dynamic-slice(c, k, k, k, k), dynamic_slice_sizes={5,4,2,3} }\n",
        /* random numbers: every device draws its own block, bit-identical to the unpartitioned program */
        "HloModule m\nENTRY e { lo = f32[] constant(-1)\n hi = f32[] constant(1)\n"
        " r = f32[7,6] rng(lo, hi), distribution=rng_uniform, seed=42, sharding={devices=[2,2]<=[4]}\n"
        " x = f32[7,6] parameter(0), sharding={devices=[2,2]<=[4]}\n ROOT a = f32[7,6] add(r, x) }\n",
        /* a sum whose init is not the identity, over a split dim: the init counts once, not once per device */
        "HloModule m\nad { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT c = f32[] add(a, b) }\n"
        "ENTRY e { x = f32[10,3] parameter(0), sharding={devices=[4,1]<=[4]}\n i = f32[] constant(10)\n"
        " ROOT r = f32[3] reduce(x, i), dimensions={0}, to_apply=ad }\n",
    };
    static const int64_t devs[] = {4, 4, 4, 3, 2, 4, 4};
    int i;
    for (i = 0; i < (int)(sizeof progs / sizeof progs[0]); i++) {
        gs_ctx *ctx = gst_ctx();
        gs_graph *g = NULL, *spmd;
        if (gs_hlo_parse(ctx, progs[i], strlen(progs[i]), &g) != GS_OK) {
            gst_failf(__FILE__, __LINE__, "program %d: %s", i, gs_ctx_error_msg(ctx));
            gs_ctx_destroy(ctx);
            continue;
        }
        spmd = spmd_check(g, devs[i], 1e-5);
        if (spmd && i == 1) {
            CHECK_EQ_INT(count_op(spmd, GS_OP_REDUCE_SCATTER), 1);
            CHECK_EQ_INT(count_op(spmd, GS_OP_ALL_REDUCE), 0);
        }
        if (spmd && i == 5) {
            int j, full = 0;
            for (j = 0; j < gs_graph_num_values(spmd); j++) {
                gs_shape sh = gs_value_shape(gs_graph_value(spmd, j));
                if (sh.rank == 2 && sh.dims[0] == 7 && sh.dims[1] == 6) full++;
            }
            CHECK_EQ_INT(full, 0);   /* no full-size tensor */
        }
        if (spmd && i == 3) {
            CHECK(count_op(spmd, GS_OP_ALL_TO_ALL) >= 3);   /* the keys there, both results back */
            CHECK_EQ_INT(count_op(spmd, GS_OP_ALL_GATHER), 0);
        }
        gs_ctx_destroy(ctx);
    }
}

/* a reshard whose tiles do not nest (7 split 2 ways -> 3 ways) goes through full replication: still correct,
   and reported with the instruction, the change and the bytes */
static void test_spmd_full_remat_warning(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "w"), *spmd;
    int64_t n = 7;
    gs_value *x = gs_parameter(g, -1, gs_shape_make(GS_F32, 1, &n), "x");
    CHECK_OK(gs_value_set_sharding_text(x, "{devices=[2,3]<=[6] last_tile_dim_replicate}"));
    CHECK_OK(gs_graph_set_root(g, gs_neg(g, gs_annotate(g, gs_neg(g, x), "{devices=[3,2]<=[6] last_tile_dim_replicate}"))));
    spmd = spmd_check(g, 6, 0);
    if (spmd) {
        const char *w = gs_partition_warning(spmd, 0);
        CHECK_EQ_INT(gs_partition_num_warnings(spmd), 1);
        CHECK(w && strstr(w, "full rematerialization") && strstr(w, "28 bytes") &&
              strstr(w, "{devices=[3,2]<=[6] last_tile_dim_replicate}"));
        CHECK(gs_partition_warning(spmd, 1) == NULL);
    }
    gs_ctx_destroy(ctx);
}

/* XLA's test mode: no all-gather, dynamic-update-slice into zeros + all-reduce instead, same results */
static void test_spmd_all_gather_as_all_reduce(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "a"), *spmd;
    gs_value *x = gs_parameter(g, -1, shp(2, 7, 5, 0), "x");
    gs_partition_desc pd;
    memset(&pd, 0, sizeof pd);
    pd.all_gather_as_all_reduce = true;
    CHECK_OK(gs_value_set_sharding_text(x, "{devices=[2,2]<=[4]}"));
    CHECK_OK(gs_graph_set_root(g, gs_neg(g, gs_annotate(g, gs_neg(g, x), "{replicated}"))));
    spmd = spmd_check_opt(g, 4, 0, &pd);
    if (spmd) {
        CHECK_EQ_INT(count_op(spmd, GS_OP_ALL_GATHER), 0);
        CHECK_EQ_INT(count_op(spmd, GS_OP_ALL_REDUCE), 2);
        CHECK_EQ_INT(count_op(spmd, GS_OP_DYNAMIC_UPDATE_SLICE), 2);
    }
    gs_ctx_destroy(ctx);
}

/* the strategy of each instruction is recorded and printed */
static void test_spmd_explain(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "e"), *spmd;
    gs_value *l = gs_parameter(g, -1, shp(2, 4, 8, 0), "l"), *r = gs_parameter(g, -1, shp(2, 8, 6, 0), "r"), *y;
    CHECK_OK(gs_value_set_sharding_text(l, "{devices=[1,4]<=[4]}"));
    CHECK_OK(gs_value_set_sharding_text(r, "{devices=[4,1]<=[4]}"));
    y = gs_einsum(g, "mk,kn->mn", l, r);
    CHECK_OK(gs_graph_set_root(g, gs_annotate(g, y, "{replicated}")));
    spmd = spmd_check(g, 4, 1e-5);
    if (spmd) {
        const char *e = gs_partition_explain(spmd, y), *txt = gs_partition_print(spmd, true);
        CHECK_MSG(e && strstr(e, "contracting dim split 4-way") && strstr(e, "all-reduce over 4 devices"), "%s", e ? e : "(null)");
        CHECK(txt && strstr(txt, "// ") && strstr(txt, "all-reduce over 4 devices"));
        CHECK(gs_partition_explain(spmd, NULL) == NULL);
    }
    gs_ctx_destroy(ctx);
}


/* ---- the book's four matmul cases ([book] ch.3) on a mesh {X: 4, Y: 2} (device x*2 + y), I = J = K = 1024 in
   bf16 on v5e: the strategy chosen and its collectives, and the estimated time of that collective against the
   book's formulas on a ring of 4 (T_min = 0 at these sizes: each hop's chunk is well over W_uni * T_min) ---- */
#define BOOK_X "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"    /* dim 0 split over X */
#define BOOK_JX "{devices=[1,4,2]<=[8] last_tile_dim_replicate}"   /* dim 1 split over X */

/* seconds the line of strategy `name` in explanation e gives for "ICI": -1 when absent */
static double book_ici_seconds(const char *e, const char *name) {
    char key[32];
    const char *l, *ici;
    double x;
    char unit[4];
    snprintf(key, sizeof key, "* %s ", name);
    if (!e || !(l = strstr(e, key)) || !(ici = strstr(l, "ICI ")) || sscanf(ici + 4, "%lf %3s", &x, unit) != 2) return -1;
    return x * (unit[0] == 'u' ? 1e-6 : unit[0] == 'm' ? 1e-3 : unit[0] == 'n' ? 1e-9 : 1);
}

static void test_spmd_dot_book_cases(void) {
    static const struct {
        const char *a, *b, *c, *strategy;
        int ar, rs, ag;
        double ici;   /* the chosen strategy's ICI time in units of V / W_uni, V = 2 MiB (a 1024x1024 bf16 array) */
    } cases[] = {
        /* 1. A[I_X, J] * B[J, K_Y] -> C[I_X, K_Y]: no communication */
        {BOOK_X, "{devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}", "{devices=[4,2]<=[8]}", "output", 0, 0, 0, 0},
        /* 2. A[I, J_X] * B[J_X, K] -> C[I, K]: local partial products, AllReduce over X: 2 * 2 hops * (V/4) / W_uni */
        {BOOK_JX, BOOK_X, "{replicated}", "lhs", 1, 0, 0, 1.0},
        /* ... -> C[I, K_X]: ReduceScatter over X, half of that */
        {BOOK_JX, BOOK_X, BOOK_JX, "lhs", 0, 1, 0, 0.5},
        /* 3. A[I_X, J] * B[J_X, K] -> C[I_X, K]: AllGather B over X: 2 hops * (V/4) / W_uni */
        {BOOK_X, BOOK_X, BOOK_X, "output", 0, 0, 1, 0.5},
        /* 4. A[I_X, J] * B[J, K_X] -> C[I_X, K]: AllGather B over X */
        {BOOK_X, BOOK_JX, BOOK_X, "output", 0, 0, 1, 0.5},
    };
    const gs_chip *v5e = gs_chip_find("v5e");
    int i;
    for (i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        gs_ctx *ctx = gst_ctx();
        gs_graph *g = NULL, *spmd = NULL;
        gs_partition_desc pd;
        char text[1024];
        snprintf(text, sizeof text,
                 "HloModule m, num_partitions=8\nENTRY e {\n  a = bf16[1024,1024] parameter(0), sharding=%s\n"
                 "  b = bf16[1024,1024] parameter(1), sharding=%s\n  ROOT c = bf16[1024,1024] dot(a, b), "
                 "lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding=%s\n}\n", cases[i].a, cases[i].b, cases[i].c);
        CHECK_OK(gs_hlo_parse(ctx, text, strlen(text), &g));
        memset(&pd, 0, sizeof pd);
        pd.num_devices = 8;
        if (g && gs_partition(g, &pd, &spmd) == GS_OK) {
            const char *e = gs_partition_explain(spmd, gs_graph_root(g));
            char want[64];
            double V = 1024.0 * 1024.0 * 2.0, got = book_ici_seconds(e, cases[i].strategy);
            snprintf(want, sizeof want, "strategy %s (least estimated time)", cases[i].strategy);
            CHECK_MSG(e && strstr(e, want), "case %d: %s", i + 1, e ? e : "(null)");
            CHECK_MSG(count_op(spmd, GS_OP_ALL_REDUCE) == cases[i].ar && count_op(spmd, GS_OP_REDUCE_SCATTER) == cases[i].rs &&
                          count_op(spmd, GS_OP_ALL_GATHER) == cases[i].ag && count_op(spmd, GS_OP_ALL_TO_ALL) == 0 &&
                          count_op(spmd, GS_OP_COLLECTIVE_PERMUTE) == 0,
                      "case %d\n%s", i + 1, gs_partition_print(spmd, true));
            CHECK_MSG(fabs(got - cases[i].ici * V / v5e->ici_bw_uni) <= 0.01 * got + 1e-12, "case %d: ICI %g s, want %g s\n%s",
                      i + 1, got, cases[i].ici * V / v5e->ici_bw_uni, e ? e : "");
        } else {
            gst_failf(__FILE__, __LINE__, "case %d: %s", i + 1, gs_ctx_error_msg(ctx));
        }
        gs_ctx_destroy(ctx);
    }
}

/* ---- every strategy a dot or convolution weighs, forced, on random shapes, shardings and device counts that need not divide
   the sizes: the SPMD program matches the reference (padding poisoned with NaN) ---- */
static const char *rand_tiling_of(uint64_t *st, int64_t D, int rank, unsigned dims, char *buf, size_t cap) {
    int64_t t[4] = {1, 1, 1, 1}, left = D, used = 1;
    int d, len;
    for (d = 0; d < rank; d++) {
        int64_t f = (dims >> d) & 1u ? gst_randint(st, 1, left) : 1;
        while (left % f) f--;
        t[d] = f;
        left /= f;
        used *= f;
    }
    if (used == 1 && gst_randint(st, 0, 2) == 0) return "{replicated}";
    len = snprintf(buf, cap, "{devices=[");
    for (d = 0; d < rank; d++) len += snprintf(buf + len, cap - (size_t)len, "%s%lld", d ? "," : "", (long long)t[d]);
    if (left > 1) len += snprintf(buf + len, cap - (size_t)len, ",%lld", (long long)left);
    /* the devices in order, or in the transposed order of a 2-factor split */
    if (D % 2 == 0 && D > 2 && gst_randint(st, 0, 1))
        len += snprintf(buf + len, cap - (size_t)len, "]<=[2,%lld]T(1,0)", (long long)(D / 2));
    else
        len += snprintf(buf + len, cap - (size_t)len, "]<=[%lld]", (long long)D);
    snprintf(buf + len, cap - (size_t)len, "%s}", left > 1 ? " last_tile_dim_replicate" : "");
    return buf;
}

static const char *rand_tiling(uint64_t *st, int64_t D, int rank, char *buf, size_t cap) {
    return rand_tiling_of(st, D, rank, ~0u, buf, cap);
}

/* the strategy names an explanation lists (lines "  name ..." or "* name ...") */
static int listed_strategies(const char *e, char names[8][16]) {
    static const char *const all[] = {"output", "lhs", "rhs", "lhs+rhs", "output+lhs", "output+rhs", "replicated"};
    int n = 0, k;
    for (k = 0; k < 7 && e; k++) {
        char a[32], b[32];
        snprintf(a, sizeof a, "\n  %s ", all[k]);
        snprintf(b, sizeof b, "\n* %s ", all[k]);
        if (strstr(e, a) || strstr(e, b)) snprintf(names[n++], 16, "%s", all[k]);
    }
    return n;
}

static gs_graph *forced_dot_graph(gs_ctx *ctx, uint64_t seed, int64_t D) {
    uint64_t st = seed;
    bool batch = gst_randint(&st, 0, 2) == 0;
    int64_t b = gst_randint(&st, 1, 5), m = gst_randint(&st, 1, 11), k = gst_randint(&st, 1, 11), n = gst_randint(&st, 1, 9);
    int64_t ld[3], rd[3];
    char bl[128], br[128], bo[128];
    gs_graph *g = gs_graph_new(ctx, "d");
    gs_value *l, *r, *y;
    int rank = batch ? 3 : 2;
    if (batch) { ld[0] = b; ld[1] = m; ld[2] = k; rd[0] = b; rd[1] = k; rd[2] = n; }
    else { ld[0] = m; ld[1] = k; rd[0] = k; rd[1] = n; }
    l = gs_parameter(g, -1, gs_shape_make(GS_F32, rank, ld), "l");
    r = gs_parameter(g, -1, gs_shape_make(GS_F32, rank, rd), "r");
    CHECK_OK(gs_value_set_sharding_text(l, rand_tiling(&st, D, rank, bl, sizeof bl)));
    CHECK_OK(gs_value_set_sharding_text(r, rand_tiling(&st, D, rank, br, sizeof br)));
    y = gs_einsum(g, batch ? "bmk,bkn->bmn" : "mk,kn->mn", l, r);
    gs_value_set_name(y, "y");
    CHECK_OK(gs_graph_set_root(g, gs_neg(g, gs_annotate(g, y, rand_tiling(&st, D, rank, bo, sizeof bo)))));
    return g;
}

/* a 1-D convolution x[N,W,C] * k[KW,C,F] -> y[N,W-KW+1,F], split anywhere but along W: the dot strategies */
static gs_graph *forced_conv_graph(gs_ctx *ctx, uint64_t seed, int64_t D) {
    uint64_t st = seed;
    int64_t N = gst_randint(&st, 1, 7), W = gst_randint(&st, 3, 9), C = gst_randint(&st, 1, 9), F = gst_randint(&st, 1, 7);
    int64_t KW = gst_randint(&st, 1, 3);
    char text[1024], bx[128], bk[128], by[128];
    gs_graph *g = NULL;
    const char *sx = rand_tiling_of(&st, D, 3, 5u, bx, sizeof bx), *sk = rand_tiling_of(&st, D, 3, 6u, bk, sizeof bk);
    const char *sy = rand_tiling_of(&st, D, 3, 5u, by, sizeof by);
    snprintf(text, sizeof text,
             "HloModule m\nENTRY main {\n  x = f32[%lld,%lld,%lld] parameter(0), sharding=%s\n"
             "  k = f32[%lld,%lld,%lld] parameter(1), sharding=%s\n"
             "  y = f32[%lld,%lld,%lld] convolution(x, k), window={size=%lld}, dim_labels=b0f_0io->b0f, sharding=%s\n"
             "  ROOT r = f32[%lld,%lld,%lld] negate(y)\n}\n",
             (long long)N, (long long)W, (long long)C, sx, (long long)KW, (long long)C, (long long)F, sk, (long long)N,
             (long long)(W - KW + 1), (long long)F, (long long)KW, sy, (long long)N, (long long)(W - KW + 1), (long long)F);
    if (gs_hlo_parse(ctx, text, strlen(text), &g) != GS_OK) gst_failf(__FILE__, __LINE__, "%s\n%s", gs_ctx_error_msg(ctx), text);
    return g;
}

static void test_spmd_dot_forced_strategies(void) {
    static const int64_t Ds[] = {2, 3, 4, 6, 8};
    int c, runs = 0;
    for (c = 0; c < 40; c++) {
        int64_t D = Ds[c % 5];
        uint64_t seed = 0x5eed0000u + (uint64_t)c;
        gs_graph *(*make)(gs_ctx *, uint64_t, int64_t) = c < 30 ? forced_dot_graph : forced_conv_graph;
        gs_ctx *ctx = gst_ctx();
        gs_graph *g = make(ctx, seed, D), *spmd = NULL;
        gs_partition_desc pd;
        char names[8][16];
        int n = 0, k;
        memset(&pd, 0, sizeof pd);
        pd.num_devices = D;
        if (g && gs_partition(g, &pd, &spmd) == GS_OK)
            n = listed_strategies(gs_partition_explain(spmd, gs_graph_find(g, "y")), names);
        else
            gst_failf(__FILE__, __LINE__, "case %d: %s", c, gs_ctx_error_msg(ctx));
        CHECK_MSG(n >= 2, "case %d: %d strategies listed", c, n);
        gs_ctx_destroy(ctx);
        for (k = 0; k < n; k++) {
            gs_partition_strategy fs;
            char want[160];
            ctx = gst_ctx();
            g = make(ctx, seed, D);
            memset(&pd, 0, sizeof pd);
            fs.instruction = "y";
            fs.strategy = names[k];
            pd.n_strategies = 1;
            pd.strategies = &fs;
            spmd = g ? spmd_check_opt(g, D, 1e-4, &pd) : NULL;
            snprintf(want, sizeof want, "strategy %s (forced)", names[k]);
            if (spmd) {
                const char *e = gs_partition_explain(spmd, gs_graph_find(g, "y"));
                CHECK_MSG(e && strstr(e, want), "case %d %s: %s", c, names[k], e ? e : "(null)");
                runs++;
            }
            gs_ctx_destroy(ctx);
        }
    }
    CHECK_MSG(runs >= 120, "%d forced runs", runs);
}

/* strategy errors: an unknown instruction or strategy names the valid ones; a chip without ICI figures is
   refused */
static void test_spmd_dot_strategy_errors(void) {
    static const struct { const char *instr, *strategy, *msg; } cases[] = {
        {"nope", "lhs", "no such instruction; the dots and convolutions of d: y"},
        {"l", "lhs", "'l': not a dot or convolution"},
        {"y", "fastest", "no strategy 'fastest'; the strategies: output, lhs, rhs, lhs+rhs, output+lhs, output+rhs, replicated"},
    };
    int i;
    for (i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        gs_ctx *ctx = gst_ctx();
        gs_graph *g = forced_dot_graph(ctx, 7, 4), *spmd = NULL;
        gs_partition_desc pd;
        gs_partition_strategy fs;
        memset(&pd, 0, sizeof pd);
        pd.num_devices = 4;
        fs.instruction = cases[i].instr;
        fs.strategy = cases[i].strategy;
        pd.n_strategies = 1;
        pd.strategies = &fs;
        CHECK_EQ_INT(gs_partition(g, &pd, &spmd), GS_ERR_INVALID_ARG);
        CHECK_MSG(strstr(gs_ctx_error_msg(ctx), cases[i].msg) != NULL, "%s", gs_ctx_error_msg(ctx));
        gs_ctx_destroy(ctx);
    }
    {
        gs_ctx *ctx = gst_ctx();
        gs_graph *g = forced_dot_graph(ctx, 7, 4), *spmd = NULL;
        gs_partition_desc pd;
        gs_chip chip;
        memset(&pd, 0, sizeof pd);
        memset(&chip, 0, sizeof chip);
        chip.name = "bare";
        chip.flops_bf16 = 1e12;
        chip.hbm_bw = 1e11;
        pd.num_devices = 4;
        pd.chip = &chip;
        CHECK_EQ_INT(gs_partition(g, &pd, &spmd), GS_ERR_INVALID_ARG);
        CHECK_MSG(strstr(gs_ctx_error_msg(ctx), "desc.chip") != NULL, "%s", gs_ctx_error_msg(ctx));
        gs_ctx_destroy(ctx);
    }
}

void suite_spmd(void) {
    RUN(test_spmd_reshard_transitions);
    RUN(test_spmd_dot_strategies);
    RUN(test_spmd_dot_windowed);
    RUN(test_spmd_reduce_scan_sort);
    RUN(test_spmd_full_remat_warning);
    RUN(test_spmd_all_gather_as_all_reduce);
    RUN(test_spmd_explain);
    RUN(test_spmd_dot_book_cases);
    RUN(test_spmd_dot_forced_strategies);
    RUN(test_spmd_dot_strategy_errors);
}
