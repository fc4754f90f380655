/* test_moe.c - the GShard MoE layer of examples/moe_model.h: its gating against a naive sequential C loop of
   the paper's Algorithm 1 (capacity drops, random routing, the aux loss) and its whole forward pass against
   naive einsum loops; examples/moe_layer.hlo against the builder; and the partitioned layer on 4, 8 and 16
   emulated devices (also E and G not multiples of D) against the reference interpreter with poisoned padding,
   with exactly one all-to-all for dispatch and one for combine, no all-gather and no replication warning, and
   the same instruction count at D = 2, 64 and 2048. */
#include "test.h"
#include "../examples/moe_model.h"

/* ---------------------------------------------------------------------------------------------------------
   Helpers
   ------------------------------------------------------------------------------------------------------- */
/* Global inputs for every parameter of g from the documented generator; wg (parameter 1 when `wg_scale`)
   is scaled so the gates are not all alike. Returns malloc'ed buffers (free with moe_free_inputs). */
static void **moe_inputs(gs_graph *g, uint64_t seed, double wg_scale) {
    int n = gs_graph_num_params(g), k;
    void **in = (void **)calloc((size_t)n, sizeof(void *));
    if (!in) return NULL;
    for (k = 0; k < n; k++) {
        gs_shape s = gs_value_shape(gs_graph_param(g, k));
        in[k] = malloc(gs_shape_bytes(&s) + 1);
        if (!in[k]) continue;
        gs_fill_random(s, seed, k, in[k]);
        if (k == 1 && wg_scale != 1 && s.dtype == GS_F32) {
            int64_t i, n_el = gs_shape_numel(&s);
            for (i = 0; i < n_el; i++) ((float *)in[k])[i] *= (float)wg_scale;
        }
    }
    return in;
}

static void moe_free_inputs(gs_graph *g, void **in) {
    int k;
    if (!in) return;
    for (k = 0; k < gs_graph_num_params(g); k++) free(in[k]);
    free(in);
}

/* Opcode counts of a whole module (every computation, while bodies included) from its printed text, and the
   number of instructions. Each instruction line reads "  [ROOT ]name = TYPE opcode(...". */
typedef struct op_counts {
    int total, all_to_all, all_gather, all_reduce, reduce_scatter, collective_permute, while_loops;
} op_counts;

static op_counts count_ops(const char *text) {
    op_counts c;
    const char *line = text;
    memset(&c, 0, sizeof c);
    while (line && *line) {
        const char *end = strchr(line, '\n'), *eq, *p;
        size_t len = end ? (size_t)(end - line) : strlen(line);
        eq = strstr(line, " = ");
        if (eq && (size_t)(eq - line) < len && line[0] == ' ' && strncmp(line, "HloModule", 9) != 0) {
            char op[64];
            size_t n = 0;
            p = eq + 3;
            if (*p == '(') { /* a tuple type: skip to its closing parenthesis */
                int depth = 0;
                for (; *p && *p != '\n'; p++) {
                    if (*p == '(') depth++;
                    if (*p == ')' && --depth == 0) break;
                }
                if (*p == ')') p++;
            } else {
                while (*p && *p != ' ' && *p != '\n') p++;
            }
            while (*p == ' ') p++;
            while (p[n] && p[n] != '(' && p[n] != '\n' && n + 1 < sizeof op) {
                op[n] = p[n];
                n++;
            }
            op[n] = 0;
            c.total++;
            if (!strcmp(op, "all-to-all")) c.all_to_all++;
            else if (!strcmp(op, "all-gather")) c.all_gather++;
            else if (!strcmp(op, "all-reduce")) c.all_reduce++;
            else if (!strcmp(op, "reduce-scatter")) c.reduce_scatter++;
            else if (!strcmp(op, "collective-permute")) c.collective_permute++;
            else if (!strcmp(op, "while")) c.while_loops++;
        }
        line = end ? end + 1 : NULL;
    }
    return c;
}

/* Counts the entry computation's ops with the graph API (the text count must agree for those). */
static int count_entry(const gs_graph *g, gs_op op) {
    int i, n = 0;
    for (i = 0; i < gs_graph_num_values(g); i++)
        if (gs_value_op(gs_graph_value(g, i)) == op) n++;
    return n;
}

/* The name of an SPMD instruction (entry computation) with the full shape of a source value that propagation
   split, or NULL: with consistent shardings no full-size copy of a split tensor may appear. Instructions that
   are where a source value lives (gs_partition_lookup) have that value's shard shape and are skipped, so
   that a replicated source value whose shape happens to equal a split one is not taken for a copy. */
static const char *full_size_value(gs_graph *src, gs_graph *spmd) {
    int i, j, n = gs_graph_num_values(spmd);
    char *mapped = (char *)calloc((size_t)n + 1, 1);
    const char *found = NULL;
    if (!mapped) return "(out of memory)";
    for (j = 0; j < gs_graph_num_values(src); j++) {
        gs_value *p = gs_partition_lookup(spmd, gs_graph_value(src, j), NULL);
        if (p && gs_value_id(p) >= 0 && gs_value_id(p) < n && gs_graph_value(spmd, gs_value_id(p)) == p) mapped[gs_value_id(p)] = 1;
    }
    for (i = 0; i < n && !found; i++) {
        gs_value *p = gs_graph_value(spmd, i);
        gs_shape ps = gs_value_shape(p);
        if (mapped[i] || ps.dtype == GS_TUPLE || ps.rank == 0) continue;
        for (j = 0; j < gs_graph_num_values(src) && !found; j++) {
            gs_value *v = gs_graph_value(src, j);
            gs_shape vs = gs_value_shape(v);
            const gs_sharding *sh = gs_value_sharding(v);
            if (vs.dtype == GS_TUPLE || !sh || gs_sharding_get_kind(sh) != GS_SHARDING_TILED || gs_sharding_num_tiles(sh) < 2) continue;
            if (vs.rank == ps.rank && memcmp(vs.dims, ps.dims, sizeof(int64_t) * (size_t)vs.rank) == 0) found = gs_value_name(p);
        }
    }
    free(mapped);
    return found;
}

static gs_graph *moe_partition(gs_graph *src, int64_t D) {
    gs_partition_desc pd;
    gs_graph *spmd = NULL;
    gs_result r;
    memset(&pd, 0, sizeof pd);
    pd.num_devices = D;
    r = gs_partition(src, &pd, &spmd);
    CHECK_MSG(r == GS_OK && spmd, "gs_partition(D=%lld): %s: %s", (long long)D, gs_result_str(r),
              gs_ctx_error_msg(gs_graph_ctx(src)));
    return r == GS_OK ? spmd : NULL;
}

/* Runs src on the reference interpreter and spmd on D emulated devices (poisoned padding) with the same
   global inputs; every output must match: |got - want| <= 1e-5 + 1e-4 |want|, no NaN. */
static void moe_run_compare(gs_graph *src, gs_graph *spmd, int64_t D, uint64_t seed, const char *what) {
    gs_ctx *ctx = gs_graph_ctx(src);
    int n_in = gs_graph_num_params(src), n_out = gs_graph_num_outputs(src), k, bad_params = 0, first_bad_param = -1;
    int allocated = 1;
    void **in = moe_inputs(src, seed, 4.0);
    void *want[8], *got[8];
    gs_shape in_shapes[64], out_shapes[8];
    const gs_sharding *in_sh[64], *out_sh[8];
    gs_runtime *rt = NULL;
    gs_runtime_desc rd;
    CHECK(in != NULL && n_in <= 64 && n_out <= 8);
    if (!in || n_in > 64 || n_out > 8) return;
    CHECK_EQ_INT(gs_graph_num_params(spmd), n_in);
    CHECK_EQ_INT(gs_graph_num_outputs(spmd), n_out);
    for (k = 0; k < n_in; k++) {
        /* the shard each device's parameter k holds; gs_partition_lookup must say the same */
        const gs_sharding *where = NULL;
        in_shapes[k] = gs_value_shape(gs_graph_param(src, k));
        in_sh[k] = gs_partition_param_sharding(spmd, k);
        gs_partition_lookup(spmd, gs_graph_param(src, k), &where);
        if (!in_sh[k] || !where || !gs_sharding_equal(in_sh[k], where)) {
            if (bad_params == 0) first_bad_param = k;
            bad_params++;
        }
    }
    CHECK_MSG(bad_params == 0, "%s: %d SPMD parameters (the first: %d) have no sharding, or not the one gs_partition_lookup "
                               "gives for the source parameter", what, bad_params, first_bad_param);
    for (k = 0; k < n_out; k++) {
        out_shapes[k] = gs_graph_output_shape(src, k);
        out_sh[k] = gs_partition_output_sharding(spmd, k);
        want[k] = calloc(1, gs_shape_bytes(&out_shapes[k]) + 1);
        got[k] = calloc(1, gs_shape_bytes(&out_shapes[k]) + 1);
        if (!want[k] || !got[k]) allocated = 0;
    }
    CHECK(allocated);
    if (allocated) CHECK_OK(gs_eval(src, (const void *const *)in, want));
    memset(&rd, 0, sizeof rd);
    rd.num_devices = D;
    if (allocated) CHECK_OK(gs_runtime_create(ctx, &rd, &rt));
    if (rt) {
        gs_result r = gs_runtime_run_global(rt, spmd, in_shapes, in_sh, (const void *const *)in, out_shapes, out_sh, got);
        CHECK_MSG(r == GS_OK, "%s: run: %s", what, gs_ctx_error_msg(ctx));
        if (r == GS_OK)
            for (k = 0; k < n_out; k++) {
                int64_t i, n = gs_shape_numel(&out_shapes[k]), bad = 0;
                CHECK(out_shapes[k].dtype == GS_F32);
                for (i = 0; i < n && out_shapes[k].dtype == GS_F32; i++) {
                    double a = ((float *)got[k])[i], b = ((float *)want[k])[i];
                    if (!(fabs(a - b) <= 1e-5 + 1e-4 * fabs(b))) {
                        if (!bad) CHECK_MSG(0, "%s: output %d element %lld: got %.9g, want %.9g", what, k, (long long)i, a, b);
                        bad++;
                    }
                }
                CHECK_MSG(bad == 0, "%s: output %d: %lld of %lld elements differ", what, k, (long long)bad, (long long)n);
            }
        gs_runtime_destroy(rt);
    }
    for (k = 0; k < n_out; k++) {
        free(want[k]);
        free(got[k]);
    }
    moe_free_inputs(src, in);
}

/* ---------------------------------------------------------------------------------------------------------
   The reference parts: Algorithm 1 as the paper writes it (a sequential loop per group) and Algorithm 2 as
   naive loops, against the builder's graph on the reference interpreter.
   ------------------------------------------------------------------------------------------------------- */
typedef struct naive_stats {
    int first_dropped, second_dropped_capacity, second_dropped_random, second_kept;
} naive_stats;

/* top-2 of one token's gates: the largest (lowest index on ties), then the largest of the others */
static void naive_top2_of(const float *gs, int64_t E, int64_t *e1, int64_t *e2) {
    int64_t e;
    *e1 = 0;
    *e2 = -1;
    for (e = 1; e < E; e++)
        if (gs[e] > gs[*e1]) *e1 = e;
    for (e = 0; e < E; e++)
        if (e != *e1 && (*e2 < 0 || gs[e] > gs[*e2])) *e2 = e;
}

/* Algorithm 1 for every group, from the graph's gates f32[G,S,E] and uniform numbers rnd f32[G,S] (NULL: no
   random routing). combine f32[G,S,E,C] must be zeroed by the caller. Returns the aux loss averaged over
   the groups. */
static double naive_top2_gating(const moe_config *c, const float *gates, const float *rnd, float *combine, naive_stats *st) {
    const int64_t G = c->G, S = c->S, E = c->E, C = c->C;
    int64_t g, s, e, e1, e2, cnt[64];
    double aux = 0;
    for (g = 0; g < G; g++) {
        double group_aux = 0;
        for (e = 0; e < E; e++) cnt[e] = 0;
        for (s = 0; s < S; s++) { /* first choices */
            const float *gs = gates + (g * S + s) * E;
            naive_top2_of(gs, E, &e1, &e2);
            if (cnt[e1] < C) combine[((g * S + s) * E + e1) * C + cnt[e1]] = gs[e1] / (gs[e1] + gs[e2]);
            else st->first_dropped++;
            cnt[e1]++;
        }
        for (e = 0; e < E; e++) { /* (1/E) sum_e (c_e / S) * m_e */
            double m = 0;
            for (s = 0; s < S; s++) m += gates[(g * S + s) * E + e];
            group_aux += ((double)cnt[e] / (double)S) * (m / (double)S);
        }
        aux += group_aux / (double)E;
        for (s = 0; s < S; s++) { /* second choices */
            const float *gs = gates + (g * S + s) * E;
            float g2;
            naive_top2_of(gs, E, &e1, &e2);
            g2 = gs[e2] / (gs[e1] + gs[e2]);
            if (cnt[e2] >= C) st->second_dropped_capacity++;
            else if (rnd && !(2 * g2 > rnd[g * S + s])) st->second_dropped_random++;
            else {
                combine[((g * S + s) * E + e2) * C + cnt[e2]] = g2;
                st->second_kept++;
            }
            cnt[e2]++;
        }
    }
    return aux / (double)G;
}

/* Algorithm 2 after the gating, as naive loops: out f32[G,S,M] */
static void naive_experts(const moe_config *c, const float *x, const float *wi, const float *wo, const float *combine, float *out) {
    const int64_t G = c->G, S = c->S, M = c->M, E = c->E, H = c->H, C = c->C;
    int64_t g, s, e, k, m, h;
    double *disp = (double *)calloc((size_t)(E * G * C * M), sizeof(double));
    double *hid = (double *)calloc((size_t)(E * G * C * H), sizeof(double));
    double *eo = (double *)calloc((size_t)(G * E * C * M), sizeof(double));
    CHECK(disp && hid && eo);
    if (disp && hid && eo) {
        for (e = 0; e < E; e++) /* dispatched[e,g,c,m] = sum_s dispatch[g,s,e,c] x[g,s,m] */
            for (g = 0; g < G; g++)
                for (k = 0; k < C; k++)
                    for (m = 0; m < M; m++) {
                        double a = 0;
                        for (s = 0; s < S; s++)
                            if (combine[((g * S + s) * E + e) * C + k] != 0) a += x[(g * S + s) * M + m];
                        disp[((e * G + g) * C + k) * M + m] = a;
                    }
        for (e = 0; e < E; e++) /* h[e,g,c,h] = relu(sum_m dispatched[e,g,c,m] wi[e,m,h]) */
            for (g = 0; g < G; g++)
                for (k = 0; k < C; k++)
                    for (h = 0; h < H; h++) {
                        double a = 0;
                        for (m = 0; m < M; m++) a += disp[((e * G + g) * C + k) * M + m] * wi[(e * M + m) * H + h];
                        hid[((e * G + g) * C + k) * H + h] = a > 0 ? a : 0;
                    }
        for (g = 0; g < G; g++) /* expert_outputs[g,e,c,m] = sum_h h[e,g,c,h] wo[e,h,m] */
            for (e = 0; e < E; e++)
                for (k = 0; k < C; k++)
                    for (m = 0; m < M; m++) {
                        double a = 0;
                        for (h = 0; h < H; h++) a += hid[((e * G + g) * C + k) * H + h] * wo[(e * H + h) * M + m];
                        eo[((g * E + e) * C + k) * M + m] = a;
                    }
        for (g = 0; g < G; g++) /* outputs[g,s,m] = sum_{e,c} combine[g,s,e,c] expert_outputs[g,e,c,m] */
            for (s = 0; s < S; s++)
                for (m = 0; m < M; m++) {
                    double a = 0;
                    for (e = 0; e < E; e++)
                        for (k = 0; k < C; k++) a += combine[((g * S + s) * E + e) * C + k] * eo[((g * E + e) * C + k) * M + m];
                    out[(g * S + s) * M + m] = (float)a;
                }
    }
    free(disp);
    free(hid);
    free(eo);
}

/* The unannotated layer with extra outputs (outputs, aux_loss, gates, combine, dispatch[, rnd]) on the
   reference interpreter, against the naive loops; the case must exercise every branch of Algorithm 1. */
static void moe_reference_case(int no_random_routing) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "moe");
    moe_config c;
    moe_values v;
    naive_stats st;
    gs_value *outs[6];
    void **in = NULL, *res[6];
    float *combine = NULL, *out = NULL;
    int n_out, k;
    int64_t i, n;
    memset(&c, 0, sizeof c);
    memset(&st, 0, sizeof st);
    memset(res, 0, sizeof res);
    c.G = 3;
    c.S = 8;
    c.M = 4;
    c.E = 4;
    c.H = 6;
    c.C = 2;
    c.seed = 11;
    c.no_random_routing = no_random_routing;
    CHECK(moe_config_error(&c) == NULL);
    outs[0] = moe_ffn(g, &c, gs_parameter(g, -1, moe_shape(GS_F32, 3, c.G, c.S, c.M, 0), "x"), "", &v);
    outs[1] = v.aux_loss;
    outs[2] = v.gates;
    outs[3] = v.combine;
    outs[4] = v.dispatch;
    outs[5] = v.rnd;
    n_out = no_random_routing ? 5 : 6;
    CHECK_MSG(outs[0] && gs_graph_set_outputs(g, n_out, outs) == GS_OK, "%s", gs_ctx_error_msg(ctx));
    CHECK(no_random_routing ? v.rnd == NULL : v.rnd != NULL);
    if (gs_ctx_error(ctx)) goto done;
    CHECK_EQ_INT(gs_graph_num_params(g), 4); /* x, wg, wi, wo */
    in = moe_inputs(g, 5, 4.0);
    for (k = 0; k < n_out; k++) {
        gs_shape s = gs_graph_output_shape(g, k);
        res[k] = calloc(1, gs_shape_bytes(&s) + 1);
    }
    CHECK_OK(gs_eval(g, (const void *const *)in, res));
    {
        const float *x = (const float *)in[0], *wg = (const float *)in[1], *gates = (const float *)res[2];
        const uint8_t *dispatch = (const uint8_t *)res[4];
        const float *rnd = no_random_routing ? NULL : (const float *)res[5];
        double aux;
        /* gates: softmax(x wg) per token */
        for (i = 0; i < c.G * c.S; i++) {
            double logit[16], mx = -1e300, den = 0;
            int64_t e, m;
            for (e = 0; e < c.E; e++) {
                logit[e] = 0;
                for (m = 0; m < c.M; m++) logit[e] += (double)x[i * c.M + m] * wg[m * c.E + e];
                if (logit[e] > mx) mx = logit[e];
            }
            for (e = 0; e < c.E; e++) den += exp(logit[e] - mx);
            for (e = 0; e < c.E; e++) CHECK_NEAR(gates[i * c.E + e], exp(logit[e] - mx) / den, 1e-6);
        }
        if (rnd)
            for (i = 0; i < c.G * c.S; i++) CHECK(rnd[i] >= 0 && rnd[i] < 1 && (i == 0 || rnd[i] != rnd[i - 1]));
        n = c.G * c.S * c.E * c.C;
        combine = (float *)calloc((size_t)n, sizeof(float));
        out = (float *)calloc((size_t)(c.G * c.S * c.M), sizeof(float));
        if (!combine || !out) goto done;
        aux = naive_top2_gating(&c, gates, rnd, combine, &st);
        for (i = 0; i < n; i++) {
            CHECK_MSG(fabs(((const float *)res[3])[i] - combine[i]) <= 1e-6, "combine[%lld]: %g, naive %g", (long long)i,
                      ((const float *)res[3])[i], combine[i]);
            CHECK_MSG(dispatch[i] == (combine[i] != 0), "dispatch[%lld]", (long long)i);
        }
        CHECK_NEAR(*(const float *)res[1], aux, 1e-6 * fabs(aux) + 1e-9);
        /* with E = 4 experts, a perfectly balanced top-1 assignment and uniform gates give 1/E^2 */
        CHECK(aux > 0 && aux < 1);
        naive_experts(&c, x, (const float *)in[2], (const float *)in[3], combine, out);
        for (i = 0; i < c.G * c.S * c.M; i++) CHECK_NEAR(((const float *)res[0])[i], out[i], 1e-4 + 1e-4 * fabs(out[i]));
        /* the case exercises capacity drops of both choices, and random routing both ways */
        CHECK_MSG(st.first_dropped > 0 && st.second_dropped_capacity > 0 && st.second_kept > 0,
                  "first dropped %d, second dropped %d, second kept %d", st.first_dropped, st.second_dropped_capacity, st.second_kept);
        if (rnd) CHECK_MSG(st.second_dropped_random > 0, "no second choice was dropped by random routing");
        else CHECK_EQ_INT(st.second_dropped_random, 0);
    }
done:
    free(combine);
    free(out);
    for (k = 0; k < 6; k++) free(res[k]);
    moe_free_inputs(g, in);
    gs_ctx_destroy(ctx);
}

static void test_moe_reference_gating(void) {
    moe_reference_case(0);
    moe_reference_case(1);
}

/* Bad configurations are rejected by name before any builder runs. */
static void test_moe_config_errors(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "bad");
    moe_config c = moe_example_config();
    moe_stack_config sc;
    CHECK(moe_config_error(&c) == NULL);
    c.E = 1;
    CHECK(moe_config_error(&c) && strstr(moe_config_error(&c), "E >= 2"));
    CHECK(moe_build_layer(g, &c, NULL) == GS_ERR_INVALID_ARG);
    CHECK_EQ_INT(gs_graph_num_values(g), 0);
    c = moe_example_config();
    c.C = 0;
    CHECK(moe_config_error(&c) && strstr(moe_config_error(&c), "capacity"));
    c = moe_example_config();
    c.D = -1;
    CHECK(moe_config_error(&c) != NULL);
    CHECK(moe_config_error(NULL) != NULL);
    CHECK(moe_ffn(g, NULL, NULL, "", NULL) == NULL && moe_build_layer(g, NULL, NULL) == GS_ERR_INVALID_ARG);
    memset(&sc, 0, sizeof sc);
    CHECK(moe_stack_config_error(&sc) != NULL);
    sc.D = 1;
    sc.L = sc.S = sc.M = sc.K = sc.F = sc.H = sc.C = sc.experts_per_device = 1;
    CHECK(moe_stack_config_error(&sc) && strstr(moe_stack_config_error(&sc), "E = D * experts_per_device >= 2"));
    sc.experts_per_device = 2;
    CHECK(moe_stack_config_error(&sc) == NULL);
    CHECK(moe_build_stack(NULL, &sc) == GS_ERR_INVALID_ARG);
    gs_ctx_destroy(ctx);
}

/* examples/moe_layer.hlo is the builder's example instance, printed (plus a comment header). */
static void test_moe_hlo_file(void) {
    static char text[1 << 18];
    gs_ctx *ctx = gst_ctx();
    gs_graph *built = gs_graph_new(ctx, "moe_layer"), *parsed = NULL;
    moe_config c = moe_example_config();
    size_t len = gst_read_file("examples/moe_layer.hlo", text, sizeof text);
    if (!len) len = gst_read_file("../examples/moe_layer.hlo", text, sizeof text);
    CHECK_MSG(len > 0 && len + 1 < sizeof text, "cannot read examples/moe_layer.hlo");
    CHECK_OK(moe_build_layer(built, &c, NULL));
    CHECK_OK(gs_hlo_parse(ctx, text, len, &parsed));
    if (parsed && !gs_ctx_error(ctx)) {
        const char *a = gs_hlo_print(parsed), *b = gs_hlo_print(built);
        CHECK_MSG(a && b && strcmp(a, b) == 0, "examples/moe_layer.hlo differs from moe_build_layer(moe_example_config()): "
                                               "regenerate it with build/examples/moe_layer --hlo");
        CHECK_EQ_INT(gs_hlo_num_partitions(parsed), 8);
    }
    gs_ctx_destroy(ctx);
}

/* ---------------------------------------------------------------------------------------------------------
   The partitioned layer
   ------------------------------------------------------------------------------------------------------- */
/* Partitions the annotated layer for D devices; checks the collectives, and with `run` runs it. */
static void moe_partition_case(int64_t D, int64_t G, int64_t S, int64_t E, int64_t C, int run) {
    char what[96];
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "moe_layer"), *spmd;
    moe_config c;
    memset(&c, 0, sizeof c);
    c.G = G;
    c.S = S;
    c.M = 8;
    c.E = E;
    c.H = 16;
    c.C = C;
    c.D = D;
    c.seed = 3;
    snprintf(what, sizeof what, "D=%lld G=%lld E=%lld", (long long)D, (long long)G, (long long)E);
    CHECK_OK(moe_build_layer(g, &c, NULL));
    spmd = moe_partition(g, D);
    if (spmd) {
        op_counts oc = count_ops(gs_hlo_print(spmd));
        const char *full;
        int w;
        CHECK_MSG(oc.all_to_all == 2, "%s: %d all-to-all, expected 2 (dispatch and combine)", what, oc.all_to_all);
        CHECK_MSG(oc.all_gather == 0, "%s: %d all-gather", what, oc.all_gather);
        CHECK(count_entry(spmd, GS_OP_ALL_TO_ALL) <= oc.all_to_all && count_entry(spmd, GS_OP_ALL_GATHER) <= oc.all_gather);
        CHECK_EQ_INT(gs_graph_num_partitions(spmd), D);
        for (w = 0; w < gs_partition_num_warnings(spmd); w++) CHECK_MSG(0, "%s: warning: %s", what, gs_partition_warning(spmd, w));
        full = full_size_value(g, spmd);
        CHECK_MSG(full == NULL, "%s: SPMD instruction %s has the full shape of a split tensor", what, full ? full : "");
        if (run) moe_run_compare(g, spmd, D, 21, what);
    }
    gs_ctx_destroy(ctx);
}

static void test_moe_partition_d4(void) { moe_partition_case(4, 4, 8, 4, 3, 1); }
static void test_moe_partition_d8(void) { moe_partition_case(8, 8, 8, 8, 2, 1); }
static void test_moe_partition_d16(void) { moe_partition_case(16, 16, 8, 16, 2, 1); }
/* E = 12 experts on 8 devices (shards of 2, the last two devices hold none) */
static void test_moe_partition_e12_d8(void) { moe_partition_case(8, 8, 8, 12, 2, 1); }
/* G and E not multiples of D */
static void test_moe_partition_uneven_g(void) {
    moe_partition_case(4, 6, 8, 6, 3, 1);
    moe_partition_case(8, 10, 6, 12, 2, 1);
}

/* The SPMD program has the same number of instructions whatever D (G = D groups, E = D or 2D experts). */
static void test_moe_partition_scaling(void) {
    const int64_t Ds[3] = {2, 64, 2048};
    int e, i, total[2][3];
    for (e = 0; e < 2; e++)
        for (i = 0; i < 3; i++) {
            gs_ctx *ctx = gst_ctx();
            gs_graph *g = gs_graph_new(ctx, "moe_layer"), *spmd;
            moe_config c;
            memset(&c, 0, sizeof c);
            c.G = Ds[i];
            c.S = 4;
            c.M = 4;
            c.E = Ds[i] * (e + 1);
            c.H = 8;
            c.C = 2;
            c.D = Ds[i];
            c.seed = 1;
            total[e][i] = -1;
            CHECK_OK(moe_build_layer(g, &c, NULL));
            spmd = moe_partition(g, Ds[i]);
            if (spmd) {
                op_counts oc = count_ops(gs_hlo_print(spmd));
                total[e][i] = oc.total;
                CHECK_MSG(oc.all_to_all == 2 && oc.all_gather == 0, "D=%lld E=%lld: %d all-to-all, %d all-gather", (long long)Ds[i],
                          (long long)c.E, oc.all_to_all, oc.all_gather);
                CHECK_EQ_INT(gs_partition_num_warnings(spmd), 0);
                CHECK_MSG(full_size_value(g, spmd) == NULL, "D=%lld: %s has the full shape of a split tensor", (long long)Ds[i],
                          full_size_value(g, spmd));
            }
            gs_ctx_destroy(ctx);
            if (i > 0)
                CHECK_MSG(total[e][i] == total[e][0], "E = %dD: %d instructions at D=%lld, %d at D=2", e + 1, total[e][i],
                          (long long)Ds[i], total[e][0]);
        }
}

/* Two layers of the transformer-with-MoE stack (one dense FFN, one MoE FFN) on 4 devices. */
static void test_moe_stack(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "moe_stack"), *spmd;
    moe_stack_config sc;
    memset(&sc, 0, sizeof sc);
    sc.D = 4;
    sc.L = 2;
    sc.S = 8;
    sc.M = 8;
    sc.K = 8;
    sc.F = 16;
    sc.H = 16;
    sc.experts_per_device = 2;
    sc.C = 4;
    sc.seed = 9;
    CHECK_OK(moe_build_stack(g, &sc));
    CHECK_OK(gs_graph_verify(g));
    spmd = moe_partition(g, sc.D);
    if (spmd) {
        op_counts oc = count_ops(gs_hlo_print(spmd));
        CHECK_EQ_INT(oc.all_to_all, 2);
        CHECK_EQ_INT(oc.all_gather, 0);
        CHECK_EQ_INT(gs_partition_num_warnings(spmd), 0);
        CHECK_MSG(full_size_value(g, spmd) == NULL, "stack: %s has the full shape of a split tensor", full_size_value(g, spmd));
        moe_run_compare(g, spmd, sc.D, 4, "stack");
    }
    gs_ctx_destroy(ctx);
}

void suite_moe(void) {
    RUN(test_moe_reference_gating);
    RUN(test_moe_config_errors);
    RUN(test_moe_hlo_file);
    RUN(test_moe_partition_d4);
    RUN(test_moe_partition_d8);
    RUN(test_moe_partition_d16);
    RUN(test_moe_partition_e12_d8);
    RUN(test_moe_partition_uneven_g);
    RUN(test_moe_partition_scaling);
    RUN(test_moe_stack);
}
