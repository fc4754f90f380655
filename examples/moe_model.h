/* moe_model.h - the GShard mixture-of-experts layer (Lepikhin et al. 2020, Algorithms 1 and 2) and a
   transformer-with-MoE stack, built with gshard.h's public C builders. Static functions only: include this
   file after gshard.h wherever it is needed (examples/moe_layer.c, the tests, bench/bench_partition.c).

   Shapes: G groups of S tokens, model dim M, E experts with hidden dim H, capacity C tokens per expert and
   group (the paper takes C = 2S/E times a capacity factor).

   The layer, moe_ffn (Algorithm 2 with the Top2Gating of Algorithm 1):
     gates    = softmax(einsum("GSM,ME->GSE", inputs, wg))                        f32[G,S,E]
     e1       = argmax_e gates, g1 = gates[e1]; e2 = argmax_e gates with e1 masked out, g2 = gates[e2]
     g1, g2   = g1 / (g1 + g2), g2 / (g1 + g2)                                     f32[G,S]
     position of a token in expert e's buffer: the exclusive cumsum over the group's tokens of the one-hot mask
       of e1; second choices queue behind every first choice of their group (the paper's running count c_e
       includes first choices beyond capacity, and second choices that random routing drops);
       a token whose position is >= C is dropped for that expert (its one-hot over C is all zero)
     random routing: expert 2 is kept only if 2 * g2 > rnd, rnd = uniform [0, 1) per token (gs_rng_uniform,
       a pure function of the seed and the token's global index, so a partitioned program draws the same)
     aux_loss = mean over groups of (1/E) sum_e (c_e / S) * m_e, with c_e the group's first choices of e and
       m_e the group's mean gate of e (Algorithm 1 line 13)                        f32[]
     combine  = g1 * onehot(e1) * onehot(pos1, C) + g2 * keep2 * onehot(e2) * onehot(pos2, C)   f32[G,S,E,C]
     dispatch = combine != 0                                                      pred[G,S,E,C]
     dispatched_expert_inputs = einsum("GSEC,GSM->EGCM", dispatch, inputs)        f32[E,G,C,M]
     h = relu(einsum("EGCM,EMH->EGCH", dispatched_expert_inputs, wi))            f32[E,G,C,H]
     expert_outputs = einsum("EGCH,EHM->GECM", h, wo)                             f32[G,E,C,M]
     outputs = einsum("GSEC,GECM->GSM", combine, expert_outputs)                  f32[G,S,M]
   With D > 0 the paper's three annotations are added: inputs = split(inputs, 0, D) (along G),
   wg = replicate(wg), dispatched_expert_inputs = split(dispatched_expert_inputs, 0, D) (along E). Neither G
   nor E has to be a multiple of D. */
#ifndef MOE_MODEL_H
#define MOE_MODEL_H

#include "../gshard.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#  define MOE_FN static __attribute__((unused))
#else
#  define MOE_FN static
#endif

typedef struct moe_config {
    int64_t G, S, M, E, H, C;  /* groups, tokens per group, model dim, experts, expert hidden dim, capacity */
    int64_t D;                 /* devices for the paper's annotations; 0: no annotations */
    uint64_t seed;             /* seed of random routing's uniform numbers */
    int no_random_routing;     /* keep every second choice that fits (no random routing) */
} moe_config;

/* The values of one MoE layer, for inspection and tests. */
typedef struct moe_values {
    gs_value *inputs, *wg, *wi, *wo; /* inputs as given, the three weight parameters */
    gs_value *gates;                 /* f32[G,S,E] softmax */
    gs_value *expert1, *expert2;     /* s32[G,S] first and second choice */
    gs_value *gate1, *gate2;         /* f32[G,S] normalised gates (gate2 before random routing) */
    gs_value *rnd;                   /* f32[G,S] random routing's uniform numbers (NULL without it) */
    gs_value *combine;               /* f32[G,S,E,C] combine weights */
    gs_value *dispatch;              /* pred[G,S,E,C] dispatch mask */
    gs_value *dispatched;            /* f32[E,G,C,M] dispatched expert inputs (the annotated value with D) */
    gs_value *h;                     /* f32[E,G,C,H] after relu */
    gs_value *expert_outputs;        /* f32[G,E,C,M] */
    gs_value *outputs;               /* f32[G,S,M] */
    gs_value *aux_loss;              /* f32[] */
} moe_values;

/* The instance of examples/moe_layer.c and examples/moe_layer.hlo: 8 groups of 32 tokens, M = 16, 16 experts
   (two per device) with H = 32 and capacity 2S/E = 4, annotated for 8 devices, random-routing seed 1. */
MOE_FN moe_config moe_example_config(void) {
    moe_config c;
    memset(&c, 0, sizeof c);
    c.G = 8;
    c.S = 32;
    c.M = 16;
    c.E = 16;
    c.H = 32;
    c.C = 4;
    c.D = 8;
    c.seed = 1;
    return c;
}

/* NULL when cfg describes a layer moe_ffn can build, else what is wrong. */
MOE_FN const char *moe_config_error(const moe_config *cfg) {
    if (!cfg) return "moe_config: NULL";
    if (cfg->G < 1 || cfg->S < 1 || cfg->M < 1 || cfg->H < 1) return "moe_config: G, S, M and H must be >= 1";
    if (cfg->E < 2) return "moe_config: top-2 gating needs E >= 2 experts";
    if (cfg->C < 1) return "moe_config: the expert capacity C must be >= 1";
    if (cfg->D < 0) return "moe_config: D must be >= 0 (0: no annotations)";
    return NULL;
}

/* gs_value_set_name with a prefix; v may be NULL (an earlier builder failed, the ctx has the error). */
MOE_FN gs_value *moe_name(gs_value *v, const char *prefix, const char *name) {
    char buf[128];
    if (!v) return NULL;
    snprintf(buf, sizeof buf, "%s%s", prefix ? prefix : "", name);
    return gs_value_set_name(v, buf) == GS_OK ? v : NULL;
}

/* names an einsum's result; when gs_einsum added a transpose after the dot, the dot becomes name + "_dot" */
MOE_FN gs_value *moe_name_einsum(gs_value *v, const char *prefix, const char *name) {
    char buf[128];
    if (v && gs_value_op(v) == GS_OP_TRANSPOSE && gs_value_op(gs_value_operand(v, 0)) == GS_OP_DOT) {
        snprintf(buf, sizeof buf, "%s_dot", name);
        if (!moe_name(gs_value_operand(v, 0), prefix, buf)) return NULL;
    }
    return moe_name(v, prefix, name);
}

/* a parameter named prefix + name */
MOE_FN gs_value *moe_param(gs_graph *g, gs_shape s, const char *prefix, const char *name) {
    char buf[128];
    snprintf(buf, sizeof buf, "%s%s", prefix ? prefix : "", name);
    return gs_parameter(g, -1, s, buf);
}

MOE_FN gs_shape moe_shape(gs_dtype t, int rank, int64_t a, int64_t b, int64_t c, int64_t d) {
    int64_t dims[4];
    dims[0] = a;
    dims[1] = b;
    dims[2] = c;
    dims[3] = d;
    return gs_shape_make(t, rank, dims);
}

/* x broadcast to `to`: x's dims go to dims d0, d1, d2 of `to` (the first rank(x) of them are used) */
MOE_FN gs_value *moe_bcast(gs_graph *g, gs_value *x, gs_shape to, int64_t d0, int64_t d1, int64_t d2) {
    int64_t dims[3];
    dims[0] = d0;
    dims[1] = d1;
    dims[2] = d2;
    return gs_broadcast(g, x, to, dims);
}

/* a scalar broadcast to shape s */
MOE_FN gs_value *moe_splat(gs_graph *g, gs_shape s, double v) {
    return gs_broadcast(g, gs_scalar(g, s.dtype, v), s, NULL);
}

/* sum of x over one dim (x's dtype) */
MOE_FN gs_value *moe_sum(gs_graph *g, gs_value *x, int64_t dim) {
    return gs_reduce(g, x, gs_scalar(g, gs_value_shape(x).dtype, 0), GS_REDUCE_SUM, 1, &dim);
}

/* softmax over the last dim of x */
MOE_FN gs_value *moe_softmax(gs_graph *g, gs_value *x) {
    gs_shape s = gs_value_shape(x);
    int64_t last = s.rank - 1, keep[GS_MAX_RANK];
    int d;
    gs_value *mx, *ex;
    for (d = 0; d < s.rank - 1; d++) keep[d] = d;
    mx = gs_reduce(g, x, gs_scalar(g, GS_F32, -INFINITY), GS_REDUCE_MAX, 1, &last);
    ex = gs_exp(g, gs_sub(g, x, gs_broadcast(g, mx, s, keep)));
    return gs_div(g, ex, gs_broadcast(g, moe_sum(g, ex, last), s, keep));
}

/* The MoE layer on inputs f32[G,S,M] (see the top of this file). Makes the parameters wg f32[M,E],
   wi f32[E,M,H] and wo f32[E,H,M] (names prefixed with `prefix`), fills *v (may be NULL) and returns the
   outputs f32[G,S,M]; NULL when a builder failed (gs_ctx_error says why). cfg must pass moe_config_error. */
MOE_FN gs_value *moe_ffn(gs_graph *g, const moe_config *cfg, gs_value *inputs, const char *prefix, moe_values *v) {
    const int64_t ge_dims[2] = {0, 1};
    int64_t G, S, M, E, H, C;
    gs_shape gse, gse_i, gs_, ge, gsc_i, gsec;
    moe_values mv;
    gs_value *x, *wg, *wi, *wo, *t, *u, *gates, *eiota, *mask1, *mask2, *mask1_f, *mask2_f, *mask1_i, *mask2_i;
    gs_value *g1, *g2, *den, *count1, *density, *aux, *pos, *loc1, *loc2, *w2, *ciota, *slot, *combine;
    if (!v) v = &mv;
    memset(v, 0, sizeof *v);
    if (!g || moe_config_error(cfg)) return NULL;
    G = cfg->G;
    S = cfg->S;
    M = cfg->M;
    E = cfg->E;
    H = cfg->H;
    C = cfg->C;
    gse = moe_shape(GS_F32, 3, G, S, E, 0);
    gse_i = moe_shape(GS_S32, 3, G, S, E, 0);
    gs_ = moe_shape(GS_F32, 2, G, S, 0, 0);
    ge = moe_shape(GS_F32, 2, G, E, 0, 0);
    gsc_i = moe_shape(GS_S32, 3, G, S, C, 0);
    gsec = moe_shape(GS_F32, 4, G, S, E, C);
    /* Every builder call below is its own statement so that the instruction order (and the printed HLO)
       does not depend on the order in which a compiler evaluates arguments. */
    v->inputs = x = inputs;
    v->wg = wg = moe_param(g, moe_shape(GS_F32, 2, M, E, 0, 0), prefix, "wg");
    v->wi = wi = moe_param(g, moe_shape(GS_F32, 3, E, M, H, 0), prefix, "wi");
    v->wo = wo = moe_param(g, moe_shape(GS_F32, 3, E, H, M, 0), prefix, "wo");
    if (cfg->D > 0) { /* the paper's annotations: inputs split along G, wg replicated */
        x = moe_name(gs_split(g, inputs, 0, cfg->D), prefix, "inputs_split");
        wg = moe_name(gs_replicate(g, wg), prefix, "wg_replicated");
    }

    /* gates = softmax(einsum("GSM,ME->GSE", inputs, wg)) */
    t = moe_name(gs_einsum(g, "GSM,ME->GSE", x, wg), prefix, "logits");
    v->gates = gates = moe_name(moe_softmax(g, t), prefix, "gates");

    /* top-1 expert and gate; top-2 expert after masking out the first (gates are >= 0, the mask is -1) */
    eiota = moe_name(gs_iota(g, gse_i, 2), prefix, "expert_iota");
    v->expert1 = t = moe_name(gs_argmax(g, gates, 2), prefix, "expert1");
    t = moe_bcast(g, t, gse_i, 0, 1, 0);
    mask1 = moe_name(gs_compare(g, t, eiota, GS_CMP_EQ), prefix, "mask1");
    mask1_f = gs_convert(g, mask1, GS_F32);
    g1 = moe_name(moe_sum(g, gs_mul(g, gates, mask1_f), 2), prefix, "top1_gate");
    t = moe_splat(g, gse, -1);
    t = gs_select(g, mask1, t, gates);
    v->expert2 = t = moe_name(gs_argmax(g, t, 2), prefix, "expert2");
    t = moe_bcast(g, t, gse_i, 0, 1, 0);
    mask2 = moe_name(gs_compare(g, t, eiota, GS_CMP_EQ), prefix, "mask2");
    mask2_f = gs_convert(g, mask2, GS_F32);
    g2 = moe_name(moe_sum(g, gs_mul(g, gates, mask2_f), 2), prefix, "top2_gate");
    den = gs_add(g, g1, g2);
    v->gate1 = g1 = moe_name(gs_div(g, g1, den), prefix, "gate1");
    v->gate2 = g2 = moe_name(gs_div(g, g2, den), prefix, "gate2");

    /* aux_loss = mean over groups of (1/E) sum_e (c_e / S) * m_e */
    mask1_i = gs_convert(g, mask1, GS_S32);
    count1 = moe_name(moe_sum(g, mask1_i, 1), prefix, "count1"); /* s32[G,E]: c_e after the first loop */
    t = gs_convert(g, count1, GS_F32);
    u = moe_splat(g, ge, (double)S);
    density = gs_div(g, t, u);
    t = moe_sum(g, gates, 1);
    t = moe_name(gs_div(g, t, u), prefix, "mean_gate");
    t = gs_mul(g, density, t);
    u = gs_scalar(g, GS_F32, 0);
    aux = gs_reduce(g, t, u, GS_REDUCE_SUM, 2, ge_dims);
    t = gs_scalar(g, GS_F32, (double)(G * E));
    v->aux_loss = moe_name(gs_div(g, aux, t), prefix, "aux_loss");

    /* positions in the expert buffers: exclusive cumsums over the group's tokens; second choices queue
       behind every first choice of their group */
    t = gs_cumulative(g, mask1_i, GS_REDUCE_SUM, 1, false);
    pos = gs_sub(g, t, mask1_i);
    loc1 = moe_name(moe_sum(g, gs_mul(g, pos, mask1_i), 2), prefix, "position1"); /* s32[G,S] */
    mask2_i = gs_convert(g, mask2, GS_S32);
    t = gs_cumulative(g, mask2_i, GS_REDUCE_SUM, 1, false);
    pos = gs_sub(g, t, mask2_i);
    t = moe_bcast(g, count1, gse_i, 0, 2, 0);
    pos = gs_add(g, pos, t);
    loc2 = moe_name(moe_sum(g, gs_mul(g, pos, mask2_i), 2), prefix, "position2");

    /* random routing: keep expert 2 only if 2 * gate2 > uniform [0, 1) */
    w2 = g2;
    if (!cfg->no_random_routing) {
        t = gs_scalar(g, GS_F32, 0);
        u = gs_scalar(g, GS_F32, 1);
        v->rnd = moe_name(gs_rng_uniform(g, t, u, gs_, cfg->seed), prefix, "rnd");
        t = moe_splat(g, gs_, 2.0);
        t = gs_mul(g, g2, t);
        t = gs_compare(g, t, v->rnd, GS_CMP_GT);
        u = moe_splat(g, gs_, 0);
        w2 = moe_name(gs_select(g, t, g2, u), prefix, "gate2_routed");
    }

    /* combine weights [G,S,E,C]: gate x expert one-hot x slot one-hot (all zero when the position is >= C) */
    ciota = moe_name(gs_iota(g, gsc_i, 2), prefix, "slot_iota");
    t = moe_bcast(g, loc1, gsc_i, 0, 1, 0);
    slot = gs_convert(g, gs_compare(g, t, ciota, GS_CMP_EQ), GS_F32);
    t = moe_bcast(g, g1, gsec, 0, 1, 0);
    u = moe_bcast(g, mask1_f, gsec, 0, 1, 2);
    t = gs_mul(g, t, u);
    u = moe_bcast(g, slot, gsec, 0, 1, 3);
    combine = gs_mul(g, t, u);
    t = moe_bcast(g, loc2, gsc_i, 0, 1, 0);
    slot = gs_convert(g, gs_compare(g, t, ciota, GS_CMP_EQ), GS_F32);
    t = moe_bcast(g, w2, gsec, 0, 1, 0);
    u = moe_bcast(g, mask2_f, gsec, 0, 1, 2);
    t = gs_mul(g, t, u);
    u = moe_bcast(g, slot, gsec, 0, 1, 3);
    t = gs_mul(g, t, u);
    v->combine = combine = moe_name(gs_add(g, combine, t), prefix, "combine_weights");
    t = moe_splat(g, gsec, 0);
    v->dispatch = t = moe_name(gs_compare(g, combine, t, GS_CMP_NE), prefix, "dispatch_mask");

    /* dispatch, experts, combine */
    t = gs_convert(g, t, GS_F32);
    t = moe_name_einsum(gs_einsum(g, "GSEC,GSM->EGCM", t, x), prefix, "dispatched");
    if (cfg->D > 0) t = moe_name(gs_split(g, t, 0, cfg->D), prefix, "dispatched_expert_inputs");
    v->dispatched = t;
    t = moe_name(gs_einsum(g, "EGCM,EMH->EGCH", t, wi), prefix, "h_linear");
    u = moe_splat(g, moe_shape(GS_F32, 4, E, G, C, H), 0);
    v->h = t = moe_name(gs_max(g, t, u), prefix, "h");
    v->expert_outputs = t = moe_name_einsum(gs_einsum(g, "EGCH,EHM->GECM", t, wo), prefix, "expert_outputs");
    v->outputs = moe_name(gs_einsum(g, "GSEC,GECM->GSM", combine, t), prefix, "outputs");
    return v->outputs;
}

/* A graph holding one MoE layer: parameters inputs f32[G,S,M], wg, wi, wo (in that order); outputs
   (outputs f32[G,S,M], aux_loss f32[]). With cfg->D > 0 the graph is annotated and has num_partitions D. */
MOE_FN gs_result moe_build_layer(gs_graph *g, const moe_config *cfg, moe_values *v) {
    moe_values mv;
    gs_value *inputs, *outs[2];
    gs_result r;
    if (!g || moe_config_error(cfg)) return GS_ERR_INVALID_ARG;
    if (!v) v = &mv;
    if (cfg->D > 0 && (r = gs_graph_set_num_partitions(g, cfg->D)) != GS_OK) return r;
    inputs = gs_parameter(g, -1, moe_shape(GS_F32, 3, cfg->G, cfg->S, cfg->M, 0), "inputs");
    outs[0] = moe_ffn(g, cfg, inputs, "", v);
    outs[1] = v->aux_loss;
    if (!outs[0] || !outs[1]) return gs_ctx_error(gs_graph_ctx(g)) != GS_OK ? gs_ctx_error(gs_graph_ctx(g)) : GS_ERR_INVALID_ARG;
    if (gs_graph_set_outputs(g, 2, outs) != GS_OK) return gs_ctx_error(gs_graph_ctx(g));
    return gs_value_set_name(gs_graph_root(g), "layer_outputs");
}

/* ---------------------------------------------------------------------------------------------------------
   A transformer with MoE layers, scaled with the device count D as in the paper's experiments: G = D groups
   (data parallel), E = D * experts_per_device experts, every other shape fixed. L layers, each
     x = x + attention(norm(x))      single-head attention inside each group: q, k, v, the scores
                                     einsum("GSK,GTK->GST"), softmax, the context, the output projection
     x = x + ffn(norm(x))            layers 0, 2, 4, ...: a dense FFN relu(y wi) wo;
                                     layers 1, 3, 5, ...: the MoE layer above (its aux losses are summed)
   norm is a layer norm over M with a scale. Parameters: x f32[G,S,M] first, then every layer's weights.
   Outputs: (x f32[G,S,M], the summed aux loss f32[]). Annotations (with D > 0): x split along G, every
   dense weight replicated, and the MoE layers' own three annotations.
   ------------------------------------------------------------------------------------------------------- */
typedef struct moe_stack_config {
    int64_t D;                  /* devices: G = D, E = D * experts_per_device; the annotations use D */
    int64_t L;                  /* layers (>= 1) */
    int64_t S, M, K, F, H;      /* tokens per group, model dim, attention dim, dense FFN dim, expert dim */
    int64_t experts_per_device; /* >= 1; E = D * experts_per_device must be >= 2 */
    int64_t C;                  /* expert capacity per group */
    uint64_t seed;
} moe_stack_config;

MOE_FN gs_value *moe_weight(gs_graph *g, int64_t D, gs_shape s, const char *prefix, const char *name) {
    gs_value *w = moe_param(g, s, prefix, name);
    return D > 0 ? gs_replicate(g, w) : w;
}

/* layer norm over the last dim of x f32[G,S,M], times a scale f32[M] */
MOE_FN gs_value *moe_norm(gs_graph *g, gs_value *x, int64_t D, const char *prefix, const char *name) {
    gs_shape s = gs_value_shape(x), gs_ = moe_shape(GS_F32, 2, s.dims[0], s.dims[1], 0, 0);
    const int64_t keep[2] = {0, 1}, last[1] = {2};
    gs_value *n, *mean, *xc, *var, *scale;
    scale = moe_weight(g, D, moe_shape(GS_F32, 1, s.dims[2], 0, 0, 0), prefix, name);
    n = moe_splat(g, gs_, (double)s.dims[2]);
    mean = gs_div(g, moe_sum(g, x, 2), n);
    xc = gs_sub(g, x, gs_broadcast(g, mean, s, keep));
    var = gs_div(g, moe_sum(g, gs_mul(g, xc, xc), 2), n);
    xc = gs_mul(g, xc, gs_broadcast(g, gs_unary(g, GS_OP_RSQRT, gs_add(g, var, moe_splat(g, gs_, 1e-6))), s, keep));
    return gs_mul(g, xc, gs_broadcast(g, scale, s, last));
}

MOE_FN const char *moe_stack_config_error(const moe_stack_config *c) {
    if (!c) return "moe_stack_config: NULL";
    if (c->D < 1 || c->L < 1 || c->S < 1 || c->M < 1 || c->K < 1 || c->F < 1 || c->H < 1 || c->C < 1)
        return "moe_stack_config: D, L, S, M, K, F, H and C must be >= 1";
    if (c->experts_per_device < 1 || c->D * c->experts_per_device < 2)
        return "moe_stack_config: experts_per_device must be >= 1 and give E = D * experts_per_device >= 2";
    return NULL;
}

/* Builds the stack into g (see above) with the annotations for c->D devices; num_partitions is set to D. */
MOE_FN gs_result moe_build_stack(gs_graph *g, const moe_stack_config *c) {
    const int64_t G = c ? c->D : 0;
    gs_ctx *ctx = g ? gs_graph_ctx(g) : NULL;
    gs_value *x, *aux = NULL, *outs[2];
    moe_config mc;
    int64_t l;
    gs_result r;
    if (!g || moe_stack_config_error(c)) return GS_ERR_INVALID_ARG;
    if ((r = gs_graph_set_num_partitions(g, c->D)) != GS_OK) return r;
    memset(&mc, 0, sizeof mc);
    mc.G = G;
    mc.S = c->S;
    mc.M = c->M;
    mc.E = c->D * c->experts_per_device;
    mc.H = c->H;
    mc.C = c->C;
    mc.D = c->D;
    x = gs_split(g, gs_parameter(g, -1, moe_shape(GS_F32, 3, G, c->S, c->M, 0), "x"), 0, c->D);
    for (l = 0; l < c->L; l++) {
        const gs_shape gss = moe_shape(GS_F32, 3, G, c->S, c->S, 0);
        char p[32];
        gs_value *y, *q, *k, *val, *s, *o, *f;
        snprintf(p, sizeof p, "l%lld.", (long long)l);
        /* attention */
        y = moe_norm(g, x, c->D, p, "norm1");
        q = gs_einsum(g, "GSM,MK->GSK", y, moe_weight(g, c->D, moe_shape(GS_F32, 2, c->M, c->K, 0, 0), p, "wq"));
        k = gs_einsum(g, "GSM,MK->GSK", y, moe_weight(g, c->D, moe_shape(GS_F32, 2, c->M, c->K, 0, 0), p, "wk"));
        val = gs_einsum(g, "GSM,MK->GSK", y, moe_weight(g, c->D, moe_shape(GS_F32, 2, c->M, c->K, 0, 0), p, "wv"));
        s = gs_einsum(g, "GSK,GTK->GST", q, k);
        s = moe_softmax(g, gs_mul(g, s, moe_splat(g, gss, 1.0 / sqrt((double)c->K))));
        o = gs_einsum(g, "GST,GTK->GSK", s, val);
        o = gs_einsum(g, "GSK,KM->GSM", o, moe_weight(g, c->D, moe_shape(GS_F32, 2, c->K, c->M, 0, 0), p, "wo_att"));
        x = moe_name(gs_add(g, x, o), p, "attention_residual");
        /* feed-forward: dense on even layers, MoE on odd layers */
        y = moe_norm(g, x, c->D, p, "norm2");
        if (l % 2 == 0) {
            f = gs_einsum(g, "GSM,MF->GSF", y, moe_weight(g, c->D, moe_shape(GS_F32, 2, c->M, c->F, 0, 0), p, "w_in"));
            f = gs_max(g, f, moe_splat(g, moe_shape(GS_F32, 3, G, c->S, c->F, 0), 0));
            f = gs_einsum(g, "GSF,FM->GSM", f, moe_weight(g, c->D, moe_shape(GS_F32, 2, c->F, c->M, 0, 0), p, "w_out"));
        } else {
            moe_values mv;
            mc.seed = c->seed + (uint64_t)l;
            f = moe_ffn(g, &mc, y, p, &mv);
            aux = aux ? gs_add(g, aux, mv.aux_loss) : mv.aux_loss;
        }
        x = moe_name(gs_add(g, x, f), p, "ffn_residual");
    }
    outs[0] = x;
    outs[1] = aux ? aux : gs_scalar(g, GS_F32, 0);
    if (!outs[0] || !outs[1]) return gs_ctx_error(ctx) != GS_OK ? gs_ctx_error(ctx) : GS_ERR_INVALID_ARG;
    if (gs_graph_set_outputs(g, 2, outs) != GS_OK) return gs_ctx_error(ctx);
    return gs_value_set_name(gs_graph_root(g), "stack_outputs");
}

#endif /* MOE_MODEL_H */
