/* gs_model.c - whole models: the Transformer presets, parameter and FLOP accounting, memory per chip, step
   times for training, prefill and decode over a mesh of parallelism axes, and the planner.
   Formulas: "How to Scale Your Model" (Austin et al.) ch.4-8, cited as [book]; docs/cost.md derives them. */
#include "gs_internal.h"

/* =========================================================================================================
   Presets
   ========================================================================================================= */

/* name, L, D, F, N, K, H, V, MLP, tied, E, k, source */
static const gs_model_desc gs__md_presets[] = {
    /* Brown et al. 2020, "Language Models are Few-Shot Learners", Table 2.1 (GPT-3 175B): 96 layers, d_model
       12288, 96 heads of 128, d_ff = 4 d_model, BPE vocabulary 50257, tied input/output embedding. The 2048
       learned position embeddings (25M parameters) are not modelled. */
    {"gpt3-175b", 96, 12288, 49152, 96, 96, 128, 50257, GS_MLP_PLAIN, true, 0, 0,
     "Brown et al. 2020, Table 2.1"},
    /* Touvron et al. 2023, "Llama 2", and the released configs (config.json on the model pages). */
    {"llama2-7b", 32, 4096, 11008, 32, 32, 128, 32000, GS_MLP_GATED, false, 0, 0, "Llama 2 paper; meta-llama/Llama-2-7b config"},
    {"llama2-13b", 40, 5120, 13824, 40, 40, 128, 32000, GS_MLP_GATED, false, 0, 0,
     "Llama 2 paper; meta-llama/Llama-2-13b config; [book] ch.5 and ch.7 tables"},
    {"llama2-70b", 80, 8192, 28672, 64, 8, 128, 32000, GS_MLP_GATED, false, 0, 0, "Llama 2 paper; meta-llama/Llama-2-70b config"},
    /* Llama 3 herd paper (Dubey et al. 2024), Table 3, and the released configs. */
    {"llama3-8b", 32, 4096, 14336, 32, 8, 128, 128256, GS_MLP_GATED, false, 0, 0, "Llama 3 paper, Table 3; meta-llama/Meta-Llama-3-8B config"},
    {"llama3-70b", 80, 8192, 28672, 64, 8, 128, 128256, GS_MLP_GATED, false, 0, 0,
     "Llama 3 paper, Table 3; meta-llama/Meta-Llama-3-70B config; [book] ch.6 and ch.8 tables"},
    {"llama3-405b", 126, 16384, 53248, 128, 8, 128, 128256, GS_MLP_GATED, false, 0, 0,
     "Llama 3 paper, Table 3; meta-llama/Llama-3.1-405B config"},
    /* Gemma team 2024, "Gemma: Open Models Based on Gemini Research and Technology", Table 1: 28 layers,
       d_model 3072, 16 heads of 256, feedforward hidden dims 49152 (= the two GeGLU halves of 24576 each),
       vocabulary 256128 in the paper (256000 in the released config, used here), tied embeddings. */
    {"gemma-7b", 28, 3072, 24576, 16, 16, 256, 256000, GS_MLP_GATED, true, 0, 0, "Gemma report, Table 1; google/gemma-7b config"},
    /* Jiang et al. 2024, "Mixtral of Experts", Table 1: Mistral 7B's shape with 8 experts, top-2. */
    {"mixtral-8x7b", 32, 4096, 14336, 32, 8, 128, 32000, GS_MLP_GATED, false, 8, 2,
     "Mixtral of Experts, Table 1; mistralai/Mixtral-8x7B-v0.1 config"},
};

GS_API int gs_model_preset_count(void) { return GS__COUNTOF(gs__md_presets); }
GS_API const gs_model_desc *gs_model_preset_at(int i) {
    return i >= 0 && i < GS__COUNTOF(gs__md_presets) ? &gs__md_presets[i] : NULL;
}

GS__FN bool gs__md_name_eq(const char *a, const char *b) {
    for (; *a && *b; a++, b++) {
        char x = *a, y = *b;
        if (x >= 'A' && x <= 'Z') x = (char)(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = (char)(y - 'A' + 'a');
        if (x != y) return false;
    }
    return *a == *b;
}

GS_API const gs_model_desc *gs_model_preset_find(const char *name) {
    int i;
    if (!name) return NULL;
    for (i = 0; i < GS__COUNTOF(gs__md_presets); i++)
        if (gs__md_name_eq(name, gs__md_presets[i].name)) return &gs__md_presets[i];
    return NULL;
}

GS_API gs_result gs_model_preset_lookup(gs_ctx *ctx, const char *name, const gs_model_desc **out) {
    char known[256];
    size_t n = 0;
    int i;
    if (!ctx) return GS_ERR_INVALID_ARG;
    if (!out) return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_model_preset_lookup: out is NULL");
    *out = gs_model_preset_find(name);
    if (*out) return GS_OK;
    known[0] = 0;
    for (i = 0; i < GS__COUNTOF(gs__md_presets) && n < sizeof known; i++)
        n += (size_t)snprintf(known + n, sizeof known - n, "%s%s", i ? ", " : "", gs__md_presets[i].name);
    return gs__err(ctx, GS_ERR_INVALID_ARG, "unknown model preset '%s' (known: %s)", name ? name : "(null)", known);
}

/* =========================================================================================================
   Accounting ([book] ch.4)
   ========================================================================================================= */

/* the description with its defaults applied, as doubles */
typedef struct gs__md {
    double L, D, F, N, K, H, V, E, k;
    bool gated, tied, moe;
} gs__md;

GS__FN void gs__md_load(const gs_model_desc *m, gs__md *o) {
    o->L = (double)m->layers;
    o->D = (double)m->d_model;
    o->F = (double)m->d_ff;
    o->N = (double)m->heads;
    o->K = (double)(m->kv_heads ? m->kv_heads : m->heads);
    o->H = (double)(m->head_dim ? m->head_dim : (m->heads ? m->d_model / m->heads : 0));
    o->V = (double)m->vocab;
    o->E = (double)(m->experts > 1 ? m->experts : 1);
    o->k = (double)(m->experts > 1 ? (m->top_k ? m->top_k : 1) : 1);
    o->gated = m->mlp != GS_MLP_PLAIN;
    o->tied = m->tied_embeddings;
    o->moe = m->experts > 1;
}

GS_API gs_result gs_model_check(gs_ctx *ctx, const gs_model_desc *m) {
    const char *nm;
    if (!ctx) return GS_ERR_INVALID_ARG;
    if (!m) return gs__err(ctx, GS_ERR_INVALID_ARG, "model is NULL");
    nm = m->name && *m->name ? m->name : "(unnamed)";
    if (m->layers <= 0 || m->d_model <= 0 || m->d_ff <= 0 || m->heads <= 0 || m->vocab <= 0)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "model '%s': layers, d_model, d_ff, heads and vocab must be > 0", nm);
    if (m->kv_heads < 0 || m->head_dim < 0 || m->experts < 0 || m->top_k < 0)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "model '%s': kv_heads, head_dim, experts and top_k must be >= 0", nm);
    if (m->kv_heads > 0 && m->heads % m->kv_heads != 0)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "model '%s': kv_heads %lld does not divide heads %lld", nm,
                       (long long)m->kv_heads, (long long)m->heads);
    if (m->head_dim == 0 && m->d_model % m->heads != 0)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "model '%s': head_dim not given and heads %lld does not divide d_model %lld",
                       nm, (long long)m->heads, (long long)m->d_model);
    if (m->experts > 1 && m->top_k > m->experts)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "model '%s': top_k %lld exceeds experts %lld", nm, (long long)m->top_k,
                       (long long)m->experts);
    if (m->experts <= 1 && m->top_k > 1)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "model '%s': top_k %lld needs experts > 1", nm, (long long)m->top_k);
    if ((int)m->mlp < 0 || (int)m->mlp > (int)GS_MLP_PLAIN)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "model '%s': unknown MLP kind %d", nm, (int)m->mlp);
    /* every count below is a product of at most four sizes; keep it inside double's exact integers */
    if ((double)m->layers * (double)m->d_model * (double)m->d_ff * (double)(m->experts > 1 ? m->experts : 1) > 1e18 ||
        (double)m->vocab * (double)m->d_model > 1e18 ||
        (double)m->d_model * (double)m->heads * (double)(m->head_dim ? m->head_dim : 1) * (double)m->layers > 1e18)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "model '%s': sizes too large (more than 1e18 parameters)", nm);
    return GS_OK;
}

/* per layer: attention, one expert's MLP */
GS__FN double gs__md_attn_layer(const gs__md *m) { return 2.0 * m->D * m->H * (m->N + m->K); }
GS__FN double gs__md_mlp1_layer(const gs__md *m) { return (m->gated ? 3.0 : 2.0) * m->D * m->F; }
GS__FN double gs__md_router_layer(const gs__md *m) { return m->moe ? m->D * m->E : 0.0; }

GS__FN void gs__md_counts(const gs__md *m, double seq, gs_model_counts *o) {
    memset(o, 0, sizeof *o);
    o->params_embed = m->V * m->D;
    o->params_unembed = m->tied ? 0.0 : m->V * m->D;
    o->params_attn = m->L * gs__md_attn_layer(m);
    o->params_mlp = m->L * m->E * gs__md_mlp1_layer(m);
    o->params_router = m->L * gs__md_router_layer(m);
    o->params_norm = (2.0 * m->L + 1.0) * m->D;
    o->params = o->params_embed + o->params_unembed + o->params_attn + o->params_mlp + o->params_router + o->params_norm;
    o->params_active = o->params - m->L * (m->E - m->k) * gs__md_mlp1_layer(m);
    /* the output layer is a matmul even when its weights are the embedding's */
    o->params_matmul = o->params_attn + m->L * m->k * gs__md_mlp1_layer(m) + o->params_router + m->V * m->D;
    o->attn_flops_fwd = 4.0 * seq * m->N * m->H * m->L;
    o->flops_fwd = 2.0 * o->params_matmul + o->attn_flops_fwd;
    o->flops_train = 3.0 * o->flops_fwd;
    o->kv_elems = 2.0 * m->L * m->K * m->H;
    o->attn_fraction_params = o->params_attn / (o->params_attn + o->params_mlp);
}

GS_API gs_result gs_model_count(gs_ctx *ctx, const gs_model_desc *m, int64_t seq, gs_model_counts *out) {
    gs__md d;
    if (!ctx) return GS_ERR_INVALID_ARG;
    if (!out) return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_model_count: out is NULL");
    memset(out, 0, sizeof *out);
    if (gs_model_check(ctx, m) != GS_OK) return gs_ctx_error(ctx);
    if (seq < 0) return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_model_count: seq %lld is negative", (long long)seq);
    gs__md_load(m, &d);
    gs__md_counts(&d, (double)seq, out);
    return GS_OK;
}

/* =========================================================================================================
   Book formulas used on their own: attention, the decode bound, 2-D weight-stationary
   ========================================================================================================= */

GS_API gs_result gs_cost_attention(gs_ctx *ctx, int64_t B, int64_t T, int64_t S, int64_t N, int64_t K, int64_t H,
                                   double s, bool fused, gs_attention_cost *out) {
    double b, t, sq, n, k, h;
    if (!ctx) return GS_ERR_INVALID_ARG;
    if (!out) return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_cost_attention: out is NULL");
    memset(out, 0, sizeof *out);
    if (B <= 0 || T <= 0 || S <= 0 || N <= 0 || K <= 0 || H <= 0)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_cost_attention: B, T, S, N, K, H must be > 0");
    if (N % K != 0) return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_cost_attention: K %lld does not divide N %lld", (long long)K, (long long)N);
    if (!(s > 0.0) || s > 64.0) return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_cost_attention: bytes per element %g is not in (0, 64]", s);
    b = (double)B; t = (double)T; sq = (double)S; n = (double)N; k = (double)K; h = (double)H;
    out->flops = 4.0 * b * t * sq * n * h;
    out->bytes = s * (2.0 * b * t * n * h + 2.0 * b * sq * k * h);
    if (!fused) out->bytes += 4.0 * s * b * n * t * sq;
    out->intensity = out->flops / out->bytes;
    return GS_OK;
}

GS_API gs_result gs_cost_decode_bound(gs_ctx *ctx, const gs_chip *chip, int64_t n_chips, double batch,
                                      double kv_bytes_per_seq, double params, double param_bytes, gs_math math,
                                      gs_decode_bound *out) {
    const char *who = "gs_cost_decode_bound";
    double n, C;
    if (!ctx) return GS_ERR_INVALID_ARG;
    if (!out) return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: out is NULL", who);
    memset(out, 0, sizeof *out);
    if (gs_chip_check(ctx, chip) != GS_OK || gs__cm_need_math(ctx, who, chip, math) != GS_OK) return gs_ctx_error(ctx);
    if (n_chips <= 0) return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: n_chips %lld must be > 0", who, (long long)n_chips);
    if (gs__cm_check_amount(ctx, who, "batch", batch) != GS_OK ||
        gs__cm_check_amount(ctx, who, "kv_bytes_per_seq", kv_bytes_per_seq) != GS_OK ||
        gs__cm_check_amount(ctx, who, "params", params) != GS_OK ||
        gs__cm_check_amount(ctx, who, "param_bytes", param_bytes) != GS_OK)
        return gs_ctx_error(ctx);
    n = (double)n_chips;
    C = gs__cm_chip_flops(chip, math);
    out->t_kv = batch * kv_bytes_per_seq / (n * chip->hbm_bw);
    out->t_math = 2.0 * batch * params / (n * C);
    out->t_weights = params * param_bytes / (n * chip->hbm_bw);
    out->seconds = out->t_kv + GS__MAX(out->t_math, out->t_weights);
    out->tokens_per_s = out->seconds > 0.0 ? batch / out->seconds : 0.0;
    return GS_OK;
}

GS_API gs_result gs_cost_ws2d(gs_ctx *ctx, const gs_chip *chip, int64_t B, int64_t D, int64_t F, int64_t N,
                              gs_ws2d_cost *out) {
    const char *who = "gs_cost_ws2d";
    double W, b, d, f, n;
    if (!ctx) return GS_ERR_INVALID_ARG;
    if (!out) return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: out is NULL", who);
    memset(out, 0, sizeof *out);
    if (gs_chip_check(ctx, chip) != GS_OK || gs__cm_need_ici(ctx, who, chip) != GS_OK) return gs_ctx_error(ctx);
    if (B <= 0 || D <= 0 || F <= 0 || N <= 0) return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: B, D, F and N must be > 0", who);
    W = 2.0 * chip->ici_bw_uni;
    b = (double)B; d = (double)D; f = (double)F; n = (double)N;
    out->t_1d = 4.0 * b * d / (3.0 * W);
    out->x_opt = sqrt(n * d / (2.0 * f));
    out->yz_opt = n / out->x_opt;
    out->t_2d = 2.0 * b * d / (out->x_opt * W) + 4.0 * b * f / (out->yz_opt * W);
    out->n_crossover = 32.0 * (f / d) * 0.5625;
    return GS_OK;
}

/* =========================================================================================================
   Runs: memory per chip and step times
   ========================================================================================================= */

GS_API const char *gs_phase_name(gs_phase p) {
    switch (p) {
    case GS_PHASE_DEFAULT:
    case GS_PHASE_TRAIN: return "train";
    case GS_PHASE_PREFILL: return "prefill";
    case GS_PHASE_DECODE: return "decode";
    }
    return "invalid";
}

GS_API const char *gs_role_name(gs_role r) {
    switch (r) {
    case GS_ROLE_DATA: return "data";
    case GS_ROLE_FSDP: return "fsdp";
    case GS_ROLE_TENSOR: return "tensor";
    case GS_ROLE_SEQUENCE: return "sequence";
    case GS_ROLE_EXPERT: return "expert";
    case GS_ROLE_PIPELINE: return "pipeline";
    case GS_ROLE_TENSOR_2D: return "tensor2d";
    case GS_ROLE_NONE: break;
    }
    return "none";
}

#define GS__MD_ROLES 8   /* gs_role values */

/* the run with defaults applied, and the ways of each role */
typedef struct gs__run {
    const gs_chip *chip;
    gs_phase phase;
    double batch, seq, pb, gb, ob, ab, kb, eff, ckpt, micro, price, C, accum;
    gs_remat remat;
    bool no_attn, gpu, causal;
    double ways[GS__MD_ROLES];       /* all axes of the role */
    double ici_ways[GS__MD_ROLES];   /* the role's ICI (or NVLink) axes */
    double dcn_ways[GS__MD_ROLES];
    int n_ici[GS__MD_ROLES];
    gs_cost_axis ici_axes[GS__MD_ROLES][GS_MODEL_MAX_AXES];
    double devices, ici_devices;
} gs__run;

GS_API gs_result gs_run_check(gs_ctx *ctx, const gs_run_desc *r) {
    const char *who = "run";
    double ici = 1.0;
    int i;
    if (!ctx) return GS_ERR_INVALID_ARG;
    if (!r) return gs__err(ctx, GS_ERR_INVALID_ARG, "run is NULL");
    if (gs_chip_check(ctx, r->chip) != GS_OK) return gs_ctx_error(ctx);
    if ((int)r->phase < 0 || (int)r->phase > (int)GS_PHASE_DECODE)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: unknown phase %d", who, (int)r->phase);
    if (r->batch <= 0 || r->seq <= 0)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: batch (%lld) and seq (%lld) must be > 0", who, (long long)r->batch,
                       (long long)r->seq);
    if ((double)r->batch * (double)r->seq > 1e15)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: batch * seq is over 1e15 tokens", who);
    if (r->n_axes < 0 || r->n_axes > GS_MODEL_MAX_AXES)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: n_axes %d is not 0..%d", who, r->n_axes, GS_MODEL_MAX_AXES);
    if (gs__cm_check_amount(ctx, who, "param_bytes", r->param_bytes) != GS_OK ||
        gs__cm_check_amount(ctx, who, "grad_bytes", r->grad_bytes) != GS_OK ||
        gs__cm_check_amount(ctx, who, "optimizer_bytes", r->optimizer_bytes) != GS_OK ||
        gs__cm_check_amount(ctx, who, "act_bytes", r->act_bytes) != GS_OK ||
        gs__cm_check_amount(ctx, who, "kv_bytes", r->kv_bytes) != GS_OK ||
        gs__cm_check_amount(ctx, who, "checkpoints", r->checkpoints) != GS_OK ||
        gs__cm_check_amount(ctx, who, "price_per_hour", r->price_per_hour) != GS_OK ||
        gs__cm_check_amount(ctx, who, "efficiency", r->efficiency) != GS_OK)
        return gs_ctx_error(ctx);
    if (r->efficiency > 1.0) return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: efficiency %g is over 1", who, r->efficiency);
    if ((int)r->remat < 0 || (int)r->remat > (int)GS_REMAT_CHECKPOINTS)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: unknown remat policy %d", who, (int)r->remat);
    if (r->remat == GS_REMAT_CHECKPOINTS && r->checkpoints <= 0.0)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: GS_REMAT_CHECKPOINTS needs checkpoints > 0", who);
    if (r->microbatches < 0) return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: microbatches must be >= 0", who);
    if (r->grad_accum < 0 || (r->grad_accum > 1 && r->batch % r->grad_accum != 0))
        return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: grad_accum %lld must be >= 0 and divide the batch (%lld)", who,
                       (long long)r->grad_accum, (long long)r->batch);
    if (gs__cm_need_math(ctx, who, r->chip, r->math) != GS_OK) return gs_ctx_error(ctx);
    for (i = 0; i < r->n_axes; i++) {
        const gs_run_axis *a = &r->axes[i];
        if (a->size <= 0 || a->size > 1000000)
            return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: axis %d has size %lld (1..1000000)", who, i, (long long)a->size);
        if ((int)a->role <= (int)GS_ROLE_NONE || (int)a->role > (int)GS_ROLE_TENSOR_2D)
            return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: axis %d has no role (data, fsdp, tensor, sequence, expert, "
                           "pipeline or tensor2d)", who, i);
        if (a->dcn) {
            bool gpu = r->chip->torus_rank == 0;
            if (gpu ? r->chip->ib_bw_uni <= 0.0 : r->chip->dcn_bw <= 0.0)
                return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: axis %d crosses the %s but chip '%s' has no %s figure", who, i,
                               gpu ? "scale-out network" : "data-center network", r->chip->name ? r->chip->name : "?",
                               gpu ? "ib_bw_uni" : "dcn_bw");
        } else {
            ici *= (double)a->size;
        }
    }
    if (ici > 1.0) {
        if (r->chip->torus_rank == 0) {
            if (r->chip->nvlink_domain <= 0 || r->chip->nvlink_bw_uni <= 0.0)
                return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: chip '%s' has neither an ICI torus nor an NVLink domain: put "
                               "the axes on the network (dcn)", who, r->chip->name ? r->chip->name : "?");
            if (ici > (double)r->chip->nvlink_domain)
                return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: %g GPUs on non-dcn axes exceed the NVLink domain of %lld; mark the "
                               "outer axes dcn", who, ici, (long long)r->chip->nvlink_domain);
        } else {
            double pod = 1.0;
            if (r->chip->ici_bw_uni <= 0.0)
                return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: chip '%s' has no ICI bandwidth", who, r->chip->name ? r->chip->name : "?");
            for (i = 0; i < GS_COST_MAX_AXES; i++)
                if (r->chip->pod[i] > 0) pod *= (double)r->chip->pod[i];
            if (ici > pod)
                return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: %g chips on ICI axes exceed chip '%s''s pod of %g; mark the outer "
                               "axes dcn", who, ici, r->chip->name ? r->chip->name : "?", pod);
        }
    }
    return GS_OK;
}

GS__FN void gs__run_load(const gs_run_desc *r, gs__run *o) {
    int i;
    memset(o, 0, sizeof *o);
    o->chip = r->chip;
    o->phase = r->phase == GS_PHASE_DEFAULT ? GS_PHASE_TRAIN : r->phase;
    o->batch = (double)r->batch;
    o->seq = (double)r->seq;
    o->pb = r->param_bytes > 0.0 ? r->param_bytes : 2.0;
    o->gb = r->grad_bytes;
    o->ob = r->optimizer_bytes > 0.0 ? r->optimizer_bytes : 8.0;
    o->ab = r->act_bytes > 0.0 ? r->act_bytes : 2.0;
    o->kb = r->kv_bytes > 0.0 ? r->kv_bytes : 2.0;
    o->eff = r->efficiency > 0.0 ? r->efficiency : 1.0;
    o->remat = r->remat == GS_REMAT_DEFAULT ? GS_REMAT_MATMULS : r->remat;
    o->ckpt = r->checkpoints;
    o->no_attn = r->no_attention_flops;
    o->price = r->price_per_hour > 0.0 ? r->price_per_hour : r->chip->price_per_hour;
    o->C = gs__cm_chip_flops(r->chip, r->math) * o->eff;
    o->gpu = r->chip->torus_rank == 0;
    o->devices = 1.0;
    o->ici_devices = 1.0;
    for (i = 0; i < GS__MD_ROLES; i++) o->ways[i] = o->ici_ways[i] = o->dcn_ways[i] = 1.0;
    for (i = 0; i < r->n_axes; i++) {
        const gs_run_axis *a = &r->axes[i];
        int role = (int)a->role;
        double sz = (double)a->size;
        o->ways[role] *= sz;
        o->devices *= sz;
        if (a->dcn) {
            o->dcn_ways[role] *= sz;
        } else {
            o->ici_ways[role] *= sz;
            o->ici_devices *= sz;
            if (a->size > 1 && o->n_ici[role] < GS_MODEL_MAX_AXES) {
                /* an axis no longer than the pod's sides is one physical axis: a ring where the chip's rule
                   gives it wraparound links (v5e: only at 16; v4p/v5p: multiples of 4), else an open line;
                   a longer one spans several physical axes and is taken as a ring */
                int64_t side = 0;
                int q;
                for (q = 0; q < GS_COST_MAX_AXES; q++) side = GS__MAX(side, r->chip->pod[q]);
                o->ici_axes[role][o->n_ici[role]].size = a->size;
                o->ici_axes[role][o->n_ici[role]].ring = a->size > side || gs__cm_axis_wraps(r->chip, GS_WRAP_AUTO, a->size)
                                                             ? GS_RING_BIDIRECTIONAL : GS_RING_OPEN_LINE;
                o->n_ici[role]++;
            }
        }
    }
    o->micro = r->microbatches > 0 ? (double)r->microbatches : 4.0 * o->ways[GS_ROLE_PIPELINE];
    o->causal = r->causal;
    o->accum = r->grad_accum > 1 && o->phase == GS_PHASE_TRAIN ? (double)r->grad_accum : 1.0;
}

/* time of one collective of V bytes (as gs_cost_collective defines V) over the axes of `role`; the ICI part
   and, when the role also has DCN axes, the cross-slice part on the shard left after the ICI step */
typedef struct gs__md_comm {
    double ici, dcn;
} gs__md_comm;

GS__FN void gs__md_collective(const gs__run *R, gs_role role, gs_collective_kind kind, double V, gs__md_comm *acc,
                              double times) {
    double n_ici = R->ici_ways[role], g = R->dcn_ways[role], t_ici = 0.0, t_dcn = 0.0;
    if (V <= 0.0 || times <= 0.0) return;
    if (n_ici > 1.0) {
        if (R->gpu) {
            /* inside an NVLink domain every GPU reaches every other through the switches at W_nvlink */
            double f = (n_ici - 1.0) / n_ici, W = R->chip->nvlink_bw_uni;
            switch (kind) {
            case GS_COLLECTIVE_ALL_REDUCE: t_ici = 2.0 * f * V / W; break;
            case GS_COLLECTIVE_ALL_TO_ALL: t_ici = f * (V / n_ici) / W; break;
            case GS_COLLECTIVE_PERMUTE: t_ici = V / W; break;
            default: t_ici = f * V / W; break;
            }
        } else {
            gs_cost_comm c;
            gs__cm_collective(R->chip, kind, V, R->n_ici[role], R->ici_axes[role], &c);
            t_ici = c.seconds;
        }
    }
    if (g > 1.0) {
        /* across g slices: each chip exchanges its shard V / n_ici; a host's chips share its DCN link (a GPU
           has its own NIC) */
        double shard = V / n_ici, f = (g - 1.0) / g, per_link;
        double chips_per_host = 1.0, W;
        int i;
        if (R->gpu) {
            W = R->chip->ib_bw_uni;
        } else {
            for (i = 0; i < GS_COST_MAX_AXES; i++)
                if (R->chip->host[i] > 0) chips_per_host *= (double)R->chip->host[i];
            W = R->chip->dcn_bw / chips_per_host;
        }
        switch (kind) {
        case GS_COLLECTIVE_ALL_REDUCE: per_link = 2.0 * f * shard; break;
        case GS_COLLECTIVE_ALL_TO_ALL: per_link = f * shard / g; break;
        case GS_COLLECTIVE_PERMUTE: per_link = shard; break;
        default: per_link = f * shard; break;
        }
        t_dcn = per_link / W;
    }
    acc->ici += times * t_ici;
    acc->dcn += times * t_dcn;
}

typedef struct gs__md_pass {
    double math, hbm, ici, dcn;
} gs__md_pass;

GS__FN double gs__md_pass_time(const gs__md_pass *p, gs_bound *b) {
    double t = p->math;
    *b = GS_BOUND_COMPUTE;
    if (p->hbm > t) { t = p->hbm; *b = GS_BOUND_HBM; }
    if (p->ici > t) { t = p->ici; *b = GS_BOUND_ICI; }
    if (p->dcn > t) { t = p->dcn; *b = GS_BOUND_DCN; }
    if (t <= 0.0) *b = GS_BOUND_NONE;
    return t;
}

/* activations kept per token and layer for the backward pass, in elements */
GS__FN double gs__md_ckpt_elems(const gs__md *m, const gs__run *R) {
    switch (R->remat) {
    case GS_REMAT_NONE: return 20.0 * m->D;
    case GS_REMAT_BLOCK: return m->D;
    case GS_REMAT_CHECKPOINTS: return R->ckpt * m->D;
    default: return m->D + (m->gated ? 2.0 : 1.0) * m->k * m->F;
    }
}

/* the collectives of one forward pass (cf) and one backward pass (cb) of a micro-step, per chip; tok_grp:
   the tokens one tensor group handles */
GS__FN void gs__md_comms(const gs__md *m, const gs__run *R, double tok_grp, gs__md_comm *cf, gs__md_comm *cb) {
    double wl_layer = (gs__md_attn_layer(m) + m->E * gs__md_mlp1_layer(m) / R->ways[GS_ROLE_EXPERT] + gs__md_router_layer(m)) *
                      R->pb / (R->ways[GS_ROLE_TENSOR] * R->ways[GS_ROLE_TENSOR_2D]);
    double Lst = m->L / R->ways[GS_ROLE_PIPELINE];   /* layers on one stage */
    double act_tp = tok_grp * m->D * R->ab;          /* [tokens, D] gathered over tensor */
    /* the embedding and output layer (vocabulary split over the tensor axes), held by the first and last
       stages: counted once */
    double w_embed = (m->tied ? 1.0 : 2.0) * m->V * m->D * R->pb / (R->ways[GS_ROLE_TENSOR] * R->ways[GS_ROLE_TENSOR_2D]);
    int pass;
    /* FSDP: gather the (tensor-sharded) weights before each pass; reduce-scatter gradients. Data (and
       sequence) replicas all-reduce their gradient shards. */
    for (pass = 0; pass < 2; pass++) {
        double times = pass == 0 ? Lst : 1.0, V = pass == 0 ? wl_layer : w_embed;
        gs__md_collective(R, GS_ROLE_FSDP, GS_COLLECTIVE_ALL_GATHER, V, cf, times);
        if (R->phase != GS_PHASE_TRAIN) continue;
        gs__md_collective(R, GS_ROLE_FSDP, GS_COLLECTIVE_ALL_GATHER, V, cb, times);
        gs__md_collective(R, GS_ROLE_FSDP, GS_COLLECTIVE_REDUCE_SCATTER, V, cb, times);
        /* once per step: a share of 1/R->accum in each micro-step */
        gs__md_collective(R, GS_ROLE_DATA, GS_COLLECTIVE_ALL_REDUCE, V / R->ways[GS_ROLE_FSDP], cb, times / R->accum);
        gs__md_collective(R, GS_ROLE_SEQUENCE, GS_COLLECTIVE_ALL_REDUCE, V / R->ways[GS_ROLE_FSDP], cb, times / R->accum);
    }
    /* tensor: per block (attention, MLP) gather [tokens, D] before and reduce-scatter after, each pass */
    if (R->ways[GS_ROLE_TENSOR_2D] > 1.0) {
        /* 2-D weight-stationary: activations [tokens, D/X] gathered and scattered over the tensor axes,
           the partial sums [tokens, F/YZ] (or [tokens, N*H/YZ]) all-reduced over X */
        double x = R->ways[GS_ROLE_TENSOR_2D], yz = R->ways[GS_ROLE_TENSOR];
        gs__md_collective(R, GS_ROLE_TENSOR, GS_COLLECTIVE_ALL_GATHER, act_tp / x, cf, 2.0 * Lst);
        gs__md_collective(R, GS_ROLE_TENSOR, GS_COLLECTIVE_REDUCE_SCATTER, act_tp / x, cf, 2.0 * Lst);
        gs__md_collective(R, GS_ROLE_TENSOR_2D, GS_COLLECTIVE_ALL_REDUCE, tok_grp * m->k * m->F * R->ab / yz, cf, Lst);
        gs__md_collective(R, GS_ROLE_TENSOR_2D, GS_COLLECTIVE_ALL_REDUCE, tok_grp * m->N * m->H * R->ab / yz, cf, Lst);
    } else {
        /* and one pair around the vocabulary-split embedding (its partial sums reduce-scattered) and output
           layer (its input gathered) */
        gs__md_collective(R, GS_ROLE_TENSOR, GS_COLLECTIVE_ALL_GATHER, act_tp, cf, 2.0 * Lst + 1.0);
        gs__md_collective(R, GS_ROLE_TENSOR, GS_COLLECTIVE_REDUCE_SCATTER, act_tp, cf, 2.0 * Lst + 1.0);
    }
    if (R->phase == GS_PHASE_TRAIN) {
        gs__md_collective(R, GS_ROLE_TENSOR, GS_COLLECTIVE_ALL_GATHER, act_tp, cb, 2.0 * Lst + 1.0);
        gs__md_collective(R, GS_ROLE_TENSOR, GS_COLLECTIVE_REDUCE_SCATTER, act_tp, cb, 2.0 * Lst + 1.0);
    }
    /* sequence: keys and values of the whole sequence gathered (forward), their gradients scattered */
    {
        double kv = tok_grp * R->ways[GS_ROLE_SEQUENCE] * 2.0 * m->K * m->H * R->ab / R->ways[GS_ROLE_TENSOR];
        gs__md_collective(R, GS_ROLE_SEQUENCE, GS_COLLECTIVE_ALL_GATHER, kv, cf, Lst);
        if (R->phase == GS_PHASE_TRAIN) gs__md_collective(R, GS_ROLE_SEQUENCE, GS_COLLECTIVE_REDUCE_SCATTER, kv, cb, Lst);
    }
    /* expert: dispatch and combine AllToAlls of the routed tokens [tokens * k, D] per MoE layer and pass */
    if (m->moe) {
        double a2a = tok_grp * R->ways[GS_ROLE_EXPERT] * m->k * m->D * R->ab / R->ways[GS_ROLE_TENSOR];
        gs__md_collective(R, GS_ROLE_EXPERT, GS_COLLECTIVE_ALL_TO_ALL, a2a, cf, 2.0 * Lst);
        if (R->phase == GS_PHASE_TRAIN) gs__md_collective(R, GS_ROLE_EXPERT, GS_COLLECTIVE_ALL_TO_ALL, a2a, cb, 2.0 * Lst);
    }
    /* pipeline: each stage passes [tokens, D] on (per microbatch; the bytes add up to the whole batch) */
    if (R->ways[GS_ROLE_PIPELINE] > 1.0) {
        double hop = tok_grp / R->ways[GS_ROLE_PIPELINE] * m->D * R->ab / R->ways[GS_ROLE_TENSOR];
        gs__md_collective(R, GS_ROLE_PIPELINE, GS_COLLECTIVE_PERMUTE, hop, cf, 1.0);
        if (R->phase == GS_PHASE_TRAIN) gs__md_collective(R, GS_ROLE_PIPELINE, GS_COLLECTIVE_PERMUTE, hop, cb, 1.0);
    }
}

GS_API gs_result gs_model_step_cost(gs_ctx *ctx, const gs_model_desc *model, const gs_run_desc *run, gs_model_step *out) {
    gs__md m;
    gs__run R;
    gs_model_counts cnt;
    double shard, shard_x, P_dense, P_exp, P_loc, tok, tok_grp, n, fwd_flops, attn_l, mlp_l, io_elems, w_read, act_io;
    double W_hbm, seq_ctx, A, attn_tok;
    gs__md_comm cf, cb;
    gs__md_pass fwd, bwd, upd;
    gs_bound bf, bb, bu;
    double tf, tb, tu;
    if (!ctx) return GS_ERR_INVALID_ARG;
    if (!out) return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_model_step_cost: out is NULL");
    memset(out, 0, sizeof *out);
    if (gs_model_check(ctx, model) != GS_OK || gs_run_check(ctx, run) != GS_OK) return gs_ctx_error(ctx);
    gs__md_load(model, &m);
    gs__run_load(run, &R);
    if (R.ways[GS_ROLE_EXPERT] > 1.0 && !m.moe)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "run: expert axes need a mixture-of-experts model ('%s' is dense)",
                       model->name ? model->name : "?");
    if (R.ways[GS_ROLE_EXPERT] > m.E)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "run: %g expert ways exceed the model's %g experts", R.ways[GS_ROLE_EXPERT], m.E);
    if (R.ways[GS_ROLE_PIPELINE] > m.L)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "run: %g pipeline stages exceed the model's %g layers", R.ways[GS_ROLE_PIPELINE], m.L);
    if (R.ways[GS_ROLE_TENSOR_2D] > 1.0 && R.phase == GS_PHASE_TRAIN)
        return gs__err(ctx, GS_ERR_UNSUPPORTED, "run: tensor2d (2-D weight-stationary) axes are modelled for prefill and "
                       "decode only");
    seq_ctx = R.seq;
    gs__md_counts(&m, seq_ctx, &cnt);
    n = R.devices;
    W_hbm = R.chip->hbm_bw;
    out->devices = (int64_t)n;
    out->tokens = R.phase == GS_PHASE_DECODE ? R.batch : R.batch * R.seq;
    A = R.accum;
    tok = out->tokens / A;   /* per micro-step */
    /* tokens handled by one tensor group: the batch-splitting roles divide them */
    tok_grp = tok / (R.ways[GS_ROLE_DATA] * R.ways[GS_ROLE_FSDP] * R.ways[GS_ROLE_SEQUENCE] * R.ways[GS_ROLE_EXPERT]);

    /* ---- memory per chip ---- */
    shard = R.ways[GS_ROLE_FSDP] * R.ways[GS_ROLE_TENSOR] * R.ways[GS_ROLE_TENSOR_2D] * R.ways[GS_ROLE_PIPELINE];
    shard_x = shard * R.ways[GS_ROLE_EXPERT];
    P_exp = m.moe ? cnt.params_mlp : 0.0;
    P_dense = cnt.params - P_exp;
    P_loc = P_dense / shard + P_exp / shard_x;
    out->mem.params = P_loc * R.pb;
    if (R.phase == GS_PHASE_TRAIN) {
        out->mem.grads = P_loc * (A > 1.0 && R.gb <= 0.0 ? 4.0 : R.gb);
        out->mem.optimizer = P_loc * R.ob;
        out->mem.activations = R.ab * gs__md_ckpt_elems(&m, &R) * m.L * tok / n;
        out->mem.activations_no_remat = R.ab * 20.0 * m.D * m.L * tok / n;
        out->mem.activations_block = R.ab * m.D * m.L * tok / n;
    } else {
        /* a forward pass's working set: one layer's input and widest intermediate for the chip's tokens */
        out->mem.activations = R.ab * (tok / n) * (m.D + (m.gated ? 2.0 : 1.0) * m.k * m.F);
        out->mem.kv_cache = R.batch * R.seq * cnt.kv_elems * R.kb / n;
    }
    out->mem.total = out->mem.params + out->mem.grads + out->mem.optimizer + out->mem.activations + out->mem.kv_cache;
    out->mem.capacity = R.chip->hbm_capacity;
    out->mem.fits = out->mem.total <= out->mem.capacity;

    /* ---- FLOPs per chip ---- */
    attn_tok = cnt.attn_flops_fwd * (R.causal && R.phase != GS_PHASE_DECODE ? 0.5 : 1.0);
    fwd_flops = tok * (R.no_attn ? 2.0 * cnt.params_matmul : 2.0 * cnt.params_matmul + attn_tok) / n;
    /* ---- HBM per pass: the weights the chip uses once, and every matmul's input and output ---- */
    attn_l = gs__md_attn_layer(&m);
    mlp_l = gs__md_mlp1_layer(&m);
    w_read = (m.L * (attn_l + gs__md_router_layer(&m)) + m.V * m.D) * R.pb /
                 (R.ways[GS_ROLE_TENSOR] * R.ways[GS_ROLE_TENSOR_2D] * R.ways[GS_ROLE_PIPELINE]) +
             m.L * m.E * mlp_l * R.pb /
                 (R.ways[GS_ROLE_TENSOR] * R.ways[GS_ROLE_TENSOR_2D] * R.ways[GS_ROLE_PIPELINE] * R.ways[GS_ROLE_EXPERT]);
    io_elems = m.L * ((m.D + (m.N + 2.0 * m.K) * m.H) + (m.N * m.H + m.D) +
                      m.k * (m.gated ? (m.D + 2.0 * m.F + m.F + m.D) : (m.D + m.F + m.F + m.D))) + (m.D + m.V);
    act_io = R.ab * io_elems * tok / n;

    /* ---- collectives per pass (forward cf; backward cb) ---- */
    memset(&cf, 0, sizeof cf);
    memset(&cb, 0, sizeof cb);
    gs__md_comms(&m, &R, tok_grp, &cf, &cb);

    /* ---- the passes ---- */
    memset(&fwd, 0, sizeof fwd);
    memset(&bwd, 0, sizeof bwd);
    memset(&upd, 0, sizeof upd);
    fwd.math = fwd_flops / R.C;
    fwd.hbm = (w_read + act_io) / W_hbm;
    fwd.ici = cf.ici;
    fwd.dcn = cf.dcn;
    out->model_flops = fwd_flops;
    out->flops = fwd_flops;
    if (R.phase == GS_PHASE_TRAIN) {
        double bwd_flops = 2.0 * fwd_flops + (R.remat == GS_REMAT_BLOCK ? fwd_flops : 0.0);
        bwd.math = bwd_flops / R.C;
        bwd.hbm = (2.0 * w_read + 2.0 * act_io + (R.remat == GS_REMAT_BLOCK ? w_read + act_io : 0.0)) / W_hbm;
        bwd.ici = cb.ici;
        bwd.dcn = cb.dcn;
        /* the optimizer reads and writes the chip's parameters and optimizer state, reads its gradients */
        upd.hbm = P_loc * (2.0 * R.pb + 2.0 * R.ob + (R.gb > 0.0 ? R.gb : R.pb)) / W_hbm;
        out->model_flops = 3.0 * fwd_flops;
        out->flops = fwd_flops + bwd_flops;
    }
    if (R.phase == GS_PHASE_DECODE) {
        /* [book] ch.7: the KV read is never hidden; the rest overlaps */
        out->t_kv = out->mem.kv_cache / W_hbm;
    } else if (R.phase == GS_PHASE_PREFILL) {
        fwd.hbm += out->mem.kv_cache / W_hbm;   /* the cache written once */
    }
    tf = gs__md_pass_time(&fwd, &bf);
    tb = gs__md_pass_time(&bwd, &bb);
    tu = gs__md_pass_time(&upd, &bu);
    out->model_flops *= A;
    out->flops *= A;
    out->t_math = A * (fwd.math + bwd.math);
    out->t_hbm = A * (fwd.hbm + bwd.hbm) + upd.hbm + out->t_kv;
    out->t_ici = A * (fwd.ici + bwd.ici);
    out->t_dcn = A * (fwd.dcn + bwd.dcn);
    out->seconds = out->t_kv + A * (tf + tb) + tu;
    out->bound = tb > tf ? bb : bf;
    if (R.phase == GS_PHASE_DECODE && out->t_kv > tf) out->bound = GS_BOUND_HBM;
    if (R.ways[GS_ROLE_PIPELINE] > 1.0) {
        double p = R.ways[GS_ROLE_PIPELINE];
        out->t_bubble = out->seconds * (p - 1.0) / R.micro;
        out->seconds += out->t_bubble;
    }
    out->mfu = out->seconds > 0.0 ? out->model_flops / (gs__cm_chip_flops(R.chip, run->math) * out->seconds) : 0.0;
    tok = out->tokens;
    out->tokens_per_s = out->seconds > 0.0 ? tok / out->seconds : 0.0;
    out->tokens_per_s_per_chip = out->tokens_per_s / n;
    out->cost_per_mtok = R.price > 0.0 && tok > 0.0 ? R.price * n * out->seconds / 3600.0 / tok * 1e6 : 0.0;
    /* thresholds */
    {
        double C = gs__cm_chip_flops(R.chip, run->math);
        out->b_crit = C * R.pb / (2.0 * W_hbm) * (m.E / m.k);
        if (R.chip->ici_bw_uni > 0.0) {
            double axes = R.n_ici[GS_ROLE_TENSOR] > 0 ? (double)R.n_ici[GS_ROLE_TENSOR] : 1.0;
            out->tensor_max = axes * m.F * 2.0 * R.chip->ici_bw_uni / C;
            out->tensor_max_decode = m.F / (R.batch * W_hbm / (2.0 * R.chip->ici_bw_uni));
        }
    }
    return GS_OK;
}

/* =========================================================================================================
   JSON
   ========================================================================================================= */

GS__FN void gs__md_json_kv(gs__sb *sb, const char *key, double v, bool comma) {
    gs__cm_json_str(sb, key);
    gs__sb_puts(sb, ": ");
    gs__cm_json_num(sb, v);
    if (comma) gs__sb_puts(sb, ", ");
}

GS__FN int gs__em_dim(int tensor, gs_role r);

/* the per-tensor annotations a layout implies, in the book's notation: each dim followed by the roles of the
   axes that split it, e.g. "x[tokens_{fsdp,sequence}, D] w_in[D_{fsdp}, F_{tensor}] ..." */
GS__FN void gs__md_annotations(gs__sb *sb, const gs_run_desc *r) {
    static const char *const names[4] = {"x", "h", "w_in", "w_out"};
    static const char *const dims[4][2] = {{"tokens", "D"}, {"tokens", "F"}, {"D", "F"}, {"F", "D"}};
    int t, d, a;
    for (t = 0; t < 4; t++) {
        gs__sb_printf(sb, "%s%s[", t ? " " : "", names[t]);
        for (d = 0; d < 2; d++) {
            int n = 0;
            gs__sb_printf(sb, "%s%s", d ? ", " : "", dims[t][d]);
            for (a = 0; a < r->n_axes; a++) {
                gs_role role = r->axes[a].role;
                int b;
                bool dup = false;
                if (gs__em_dim(t, role) != d) continue;
                for (b = 0; b < a; b++)
                    if (r->axes[b].role == role) dup = true;
                if (dup) continue;
                gs__sb_printf(sb, "%s%s", n ? "," : "_{", gs_role_name(role));
                n++;
            }
            if (n) gs__sb_puts(sb, "}");
        }
        gs__sb_puts(sb, "]");
    }
}

GS__FN void gs__md_json_run(gs__sb *sb, const gs_run_desc *r) {
    int i;
    gs__sb_puts(sb, "{\"chip\": ");
    gs__cm_json_str(sb, r->chip && r->chip->name ? r->chip->name : "");
    gs__sb_puts(sb, ", \"phase\": ");
    gs__cm_json_str(sb, gs_phase_name(r->phase));
    gs__sb_puts(sb, ", ");
    gs__md_json_kv(sb, "batch", (double)r->batch, true);
    gs__md_json_kv(sb, "seq", (double)r->seq, true);
    gs__sb_puts(sb, "\"axes\": [");
    for (i = 0; i < r->n_axes; i++) {
        gs__sb_printf(sb, "%s{\"size\": %lld, \"role\": ", i ? ", " : "", (long long)r->axes[i].size);
        gs__cm_json_str(sb, gs_role_name(r->axes[i].role));
        gs__sb_printf(sb, ", \"dcn\": %s}", r->axes[i].dcn ? "true" : "false");
    }
    gs__sb_puts(sb, "], \"annotations\": \"");
    gs__md_annotations(sb, r);
    gs__sb_puts(sb, "\", \"remat\": ");
    gs__cm_json_str(sb, r->remat == GS_REMAT_NONE ? "none" : r->remat == GS_REMAT_BLOCK ? "block" :
                        r->remat == GS_REMAT_CHECKPOINTS ? "checkpoints" : "matmuls");
    gs__sb_printf(sb, ", \"grad_accum\": %lld, \"causal\": %s}", (long long)(r->grad_accum > 1 ? r->grad_accum : 1),
                  r->causal ? "true" : "false");
}

GS__FN void gs__md_json_step(gs__sb *sb, const gs_model_step *s) {
    gs__sb_puts(sb, "{");
    gs__md_json_kv(sb, "devices", (double)s->devices, true);
    gs__md_json_kv(sb, "tokens", s->tokens, true);
    gs__sb_puts(sb, "\"memory_per_chip\": {");
    gs__md_json_kv(sb, "params", s->mem.params, true);
    gs__md_json_kv(sb, "grads", s->mem.grads, true);
    gs__md_json_kv(sb, "optimizer", s->mem.optimizer, true);
    gs__md_json_kv(sb, "activations", s->mem.activations, true);
    gs__md_json_kv(sb, "activations_no_remat", s->mem.activations_no_remat, true);
    gs__md_json_kv(sb, "activations_block_remat", s->mem.activations_block, true);
    gs__md_json_kv(sb, "kv_cache", s->mem.kv_cache, true);
    gs__md_json_kv(sb, "total", s->mem.total, true);
    gs__md_json_kv(sb, "capacity", s->mem.capacity, true);
    gs__sb_printf(sb, "\"fits\": %s}, ", s->mem.fits ? "true" : "false");
    gs__md_json_kv(sb, "flops_per_chip", s->flops, true);
    gs__md_json_kv(sb, "model_flops_per_chip", s->model_flops, true);
    gs__md_json_kv(sb, "t_math", s->t_math, true);
    gs__md_json_kv(sb, "t_hbm", s->t_hbm, true);
    gs__md_json_kv(sb, "t_kv", s->t_kv, true);
    gs__md_json_kv(sb, "t_ici", s->t_ici, true);
    gs__md_json_kv(sb, "t_dcn", s->t_dcn, true);
    gs__md_json_kv(sb, "t_bubble", s->t_bubble, true);
    gs__md_json_kv(sb, "seconds", s->seconds, true);
    gs__md_json_kv(sb, "latency", s->seconds, true);
    gs__sb_puts(sb, "\"bound\": ");
    gs__cm_json_str(sb, gs_bound_name(s->bound));
    gs__sb_puts(sb, ", ");
    gs__md_json_kv(sb, "mfu", s->mfu, true);
    gs__md_json_kv(sb, "tokens_per_s", s->tokens_per_s, true);
    gs__md_json_kv(sb, "tokens_per_s_per_chip", s->tokens_per_s_per_chip, true);
    gs__md_json_kv(sb, "cost_per_million_tokens", s->cost_per_mtok, true);
    gs__md_json_kv(sb, "b_crit", s->b_crit, true);
    gs__md_json_kv(sb, "tensor_max", s->tensor_max, true);
    gs__md_json_kv(sb, "tensor_max_decode", s->tensor_max_decode, false);
    gs__sb_puts(sb, "}");
}

GS_API const char *gs_model_json(gs_ctx *ctx, const gs_model_desc *m, int64_t seq, const gs_run_desc *run) {
    gs_model_counts c;
    gs_model_step st;
    gs__md d;
    gs__sb sb;
    double kvb = run && run->kv_bytes > 0.0 ? run->kv_bytes : 2.0;
    if (!ctx) return NULL;
    if (gs_model_count(ctx, m, seq, &c) != GS_OK) return NULL;
    if (run && gs_model_step_cost(ctx, m, run, &st) != GS_OK) return NULL;
    gs__md_load(m, &d);
    gs__sb_init(&sb, ctx);
    gs__sb_puts(&sb, "{\"name\": ");
    gs__cm_json_str(&sb, m->name ? m->name : "");
    gs__sb_puts(&sb, ", \"config\": {");
    gs__md_json_kv(&sb, "layers", d.L, true);
    gs__md_json_kv(&sb, "d_model", d.D, true);
    gs__md_json_kv(&sb, "d_ff", d.F, true);
    gs__md_json_kv(&sb, "heads", d.N, true);
    gs__md_json_kv(&sb, "kv_heads", d.K, true);
    gs__md_json_kv(&sb, "head_dim", d.H, true);
    gs__md_json_kv(&sb, "vocab", d.V, true);
    gs__sb_printf(&sb, "\"gated_mlp\": %s, \"tied_embeddings\": %s, ", d.gated ? "true" : "false", d.tied ? "true" : "false");
    gs__md_json_kv(&sb, "experts", d.E, true);
    gs__md_json_kv(&sb, "top_k", d.k, false);
    gs__sb_puts(&sb, "}, ");
    gs__md_json_kv(&sb, "params", c.params, true);
    gs__sb_puts(&sb, "\"params_by_part\": {");
    gs__md_json_kv(&sb, "embedding", c.params_embed, true);
    gs__md_json_kv(&sb, "output", c.params_unembed, true);
    gs__md_json_kv(&sb, "attention", c.params_attn, true);
    gs__md_json_kv(&sb, "mlp", c.params_mlp, true);
    gs__md_json_kv(&sb, "router", c.params_router, true);
    gs__md_json_kv(&sb, "norms", c.params_norm, false);
    gs__sb_puts(&sb, "}, ");
    gs__md_json_kv(&sb, "params_active", c.params_active, true);
    gs__md_json_kv(&sb, "attention_param_fraction", c.attn_fraction_params, true);
    gs__md_json_kv(&sb, "seq", (double)seq, true);
    gs__sb_puts(&sb, "\"flops_per_token\": {");
    gs__md_json_kv(&sb, "train", c.flops_train, true);
    gs__md_json_kv(&sb, "train_6n", 6.0 * c.params_matmul, true);
    gs__md_json_kv(&sb, "inference", c.flops_fwd, true);
    gs__md_json_kv(&sb, "attention_forward", c.attn_flops_fwd, false);
    gs__sb_puts(&sb, "}, ");
    gs__md_json_kv(&sb, "kv_cache_bytes_per_token", c.kv_elems * kvb, !!run);
    if (run) {
        gs__sb_puts(&sb, "\"run\": ");
        gs__md_json_run(&sb, run);
        gs__sb_puts(&sb, ", \"step\": ");
        gs__md_json_step(&sb, &st);
    }
    gs__sb_puts(&sb, "}\n");
    return gs__sb_finish(&sb, "gs_model_json");
}

/* =========================================================================================================
   The planner
   ========================================================================================================= */

typedef struct gs__plan_cand {
    gs_run_desc run;
    gs_model_step step;
} gs__plan_cand;

struct gs_plan {
    gs_ctx *ctx;
    const gs_model_desc *model;
    int n;
    gs__plan_cand *c;   /* arena, rank order */
    bool fits;
    double shortfall;
    const char *reason;
};

/* the roles the planner tries, in the order their axes are laid out (tensor innermost) */
static const gs_role gs__plan_roles[] = {GS_ROLE_TENSOR, GS_ROLE_TENSOR_2D, GS_ROLE_EXPERT, GS_ROLE_SEQUENCE,
                                         GS_ROLE_FSDP, GS_ROLE_DATA, GS_ROLE_PIPELINE};
#define GS__PLAN_NROLES 7

typedef struct gs__plan_gen {
    const gs_model_desc *m;
    gs__md md;
    gs_run_desc base;
    int64_t devices, slice;   /* chips one ICI slice (or NVLink domain) holds */
    int64_t divs[64];
    int n_divs;
    gs__plan_cand *out;
    int n, cap;
    int64_t ways[GS__PLAN_NROLES];
} gs__plan_gen;

GS__FN bool gs__plan_allowed(const gs__plan_gen *G, int ri, int64_t w) {
    gs_role role = gs__plan_roles[ri];
    gs_phase ph = G->base.phase == GS_PHASE_DEFAULT ? GS_PHASE_TRAIN : G->base.phase;
    if (w == 1) return true;
    switch (role) {
    case GS_ROLE_TENSOR: return w <= G->m->heads;
    case GS_ROLE_TENSOR_2D: return ph != GS_PHASE_TRAIN && w <= 64;
    case GS_ROLE_EXPERT: return G->md.moe && (int64_t)G->md.E % w == 0;
    case GS_ROLE_SEQUENCE: return ph != GS_PHASE_DECODE && G->base.seq % w == 0 && G->base.seq / w >= 256;
    case GS_ROLE_FSDP: return ph != GS_PHASE_DECODE;
    case GS_ROLE_DATA: return true;
    case GS_ROLE_PIPELINE: return ph == GS_PHASE_TRAIN && w <= 16 && (int64_t)G->md.L % w == 0;
    default: return false;
    }
}

/* lays the chosen ways out as axes: each role one axis (two when it is larger than a slice's side), the
   part of the batch roles beyond one slice on a DCN axis; false when it needs more than GS_MODEL_MAX_AXES */
GS__FN bool gs__plan_layout(gs__plan_gen *G, gs_run_desc *r) {
    int64_t slices = (G->devices + G->slice - 1) / G->slice;
    int i, n = 0;
    *r = G->base;
    r->n_axes = 0;
    if (slices > 1) {
        /* the data (or else FSDP) role must carry the factor of slices over the DCN */
        int carrier = -1;
        if (G->devices % slices != 0) return false;
        for (i = 0; i < GS__PLAN_NROLES; i++)
            if ((gs__plan_roles[i] == GS_ROLE_DATA || gs__plan_roles[i] == GS_ROLE_FSDP) && G->ways[i] % slices == 0 &&
                (carrier < 0 || gs__plan_roles[i] == GS_ROLE_DATA))
                carrier = i;
        if (carrier < 0) return false;
        for (i = 0; i < GS__PLAN_NROLES; i++) {
            int64_t w = G->ways[i] / (i == carrier ? slices : 1);
            if (w > 1) {
                if (n == GS_MODEL_MAX_AXES) return false;
                r->axes[n].size = w;
                r->axes[n].role = gs__plan_roles[i];
                r->axes[n].dcn = false;
                n++;
            }
        }
        if (n == GS_MODEL_MAX_AXES) return false;
        r->axes[n].size = slices;
        r->axes[n].role = gs__plan_roles[carrier];
        r->axes[n].dcn = true;
        n++;
    } else {
        /* a role larger than the torus side spans two physical axes (the book's M_X = 2) */
        int rank = G->base.chip->torus_rank > 0 ? G->base.chip->torus_rank : 1;
        double side = pow((double)G->devices, 1.0 / rank);
        for (i = 0; i < GS__PLAN_NROLES; i++) {
            int64_t w = G->ways[i];
            if (w <= 1) continue;
            if (rank > 1 && (double)w > side * 1.01 && G->base.chip->torus_rank > 0) {
                int64_t a = 1, d;
                for (d = 2; d * d <= w; d++)
                    if (w % d == 0) a = d;
                if (a > 1) {
                    if (n + 2 > GS_MODEL_MAX_AXES) return false;
                    r->axes[n].size = w / a;
                    r->axes[n].role = gs__plan_roles[i];
                    r->axes[n].dcn = false;
                    r->axes[n + 1] = r->axes[n];
                    r->axes[n + 1].size = a;
                    n += 2;
                    continue;
                }
            }
            if (n == GS_MODEL_MAX_AXES) return false;
            r->axes[n].size = w;
            r->axes[n].role = gs__plan_roles[i];
            r->axes[n].dcn = false;
            n++;
        }
    }
    r->n_axes = n;
    return true;
}

GS__FN gs_result gs__plan_push(gs_ctx *ctx, gs__plan_gen *G, const gs__plan_cand *cand) {
    if (G->n == G->cap) {
        int ncap = G->cap ? 2 * G->cap : 64;
        gs__plan_cand *nc = (gs__plan_cand *)gs__malloc(ctx, sizeof(gs__plan_cand) * (size_t)ncap);
        if (!nc) return GS_ERR_OUT_OF_MEMORY;
        if (G->n) memcpy(nc, G->out, sizeof(gs__plan_cand) * (size_t)G->n);
        gs__free(ctx, G->out);
        G->out = nc;
        G->cap = ncap;
    }
    G->out[G->n++] = *cand;
    return GS_OK;
}

/* a training layout whose batch does not fit: the fewest micro-steps of gradient accumulation (a power of
   two dividing the batch, each micro-step still one sequence per batch shard) that make it fit, as one more
   candidate; none when the caller fixed grad_accum or no split fits */
GS__FN gs_result gs__plan_accum(gs_ctx *ctx, gs__plan_gen *G, const gs__plan_cand *cand, int64_t batch_ways) {
    gs__plan_cand c = *cand;
    int64_t a;
    if (G->base.grad_accum > 1 || (G->base.phase != GS_PHASE_TRAIN && G->base.phase != GS_PHASE_DEFAULT)) return GS_OK;
    for (a = 2; G->base.batch % a == 0 && G->base.batch / a >= batch_ways; a *= 2) {
        c.run.grad_accum = a;
        if (gs_model_step_cost(ctx, G->m, &c.run, &c.step) != GS_OK) {
            gs_ctx_clear_error(ctx);
            return GS_OK;
        }
        if (c.step.mem.fits) return gs__plan_push(ctx, G, &c);
    }
    return GS_OK;
}

GS__FN gs_result gs__plan_rec(gs_ctx *ctx, gs__plan_gen *G, int ri, int64_t left) {
    int i;
    if (ri == GS__PLAN_NROLES) {
        gs__plan_cand cand;
        int64_t batch_ways = 1;
        int j;
        if (left != 1) return GS_OK;
        for (j = 0; j < GS__PLAN_NROLES; j++)
            if (gs__plan_roles[j] == GS_ROLE_DATA || gs__plan_roles[j] == GS_ROLE_FSDP || gs__plan_roles[j] == GS_ROLE_EXPERT)
                batch_ways *= G->ways[j];
        if (batch_ways > G->base.batch) return GS_OK;   /* every batch shard needs a sequence */
        int k, n_remat;
        gs_remat remats[2];
        memset(&cand, 0, sizeof cand);
        if (!gs__plan_layout(G, &cand.run)) return GS_OK;
        /* training with the default policy tries both: keep the matmuls' outputs, or only each layer's input */
        n_remat = 1;
        remats[0] = cand.run.remat;
        if (G->base.phase != GS_PHASE_PREFILL && G->base.phase != GS_PHASE_DECODE && cand.run.remat == GS_REMAT_DEFAULT) {
            remats[0] = GS_REMAT_MATMULS;
            remats[1] = GS_REMAT_BLOCK;
            n_remat = 2;
        }
        for (k = 0; k < n_remat; k++) {
            cand.run.remat = remats[k];
            if (gs_model_step_cost(ctx, G->m, &cand.run, &cand.step) != GS_OK) {
                gs_ctx_clear_error(ctx);   /* a layout the chip cannot hold: not a candidate */
                return GS_OK;
            }
            if (gs__plan_push(ctx, G, &cand) != GS_OK) return GS_ERR_OUT_OF_MEMORY;
            if (!cand.step.mem.fits && gs__plan_accum(ctx, G, &cand, batch_ways) != GS_OK) return GS_ERR_OUT_OF_MEMORY;
        }
        return GS_OK;
    }
    for (i = 0; i < G->n_divs; i++) {
        int64_t w = G->divs[i];
        gs_result rc;
        if (left % w != 0 || !gs__plan_allowed(G, ri, w)) continue;
        G->ways[ri] = w;
        rc = gs__plan_rec(ctx, G, ri + 1, left / w);
        if (rc != GS_OK) return rc;
    }
    G->ways[ri] = 1;
    return GS_OK;
}

GS__FN int gs__plan_cmp(const void *a, const void *b) {
    const gs__plan_cand *x = (const gs__plan_cand *)a, *y = (const gs__plan_cand *)b;
    double kx, ky;
    if (x->step.mem.fits != y->step.mem.fits) return x->step.mem.fits ? -1 : 1;
    kx = x->step.mem.fits ? x->step.seconds : x->step.mem.total;
    ky = y->step.mem.fits ? y->step.seconds : y->step.mem.total;
    if (kx < ky) return -1;
    if (kx > ky) return 1;
    /* equal step times: less network traffic, then the simpler layout */
    if (x->step.t_ici + x->step.t_dcn < y->step.t_ici + y->step.t_dcn) return -1;
    if (x->step.t_ici + x->step.t_dcn > y->step.t_ici + y->step.t_dcn) return 1;
    return x->run.n_axes - y->run.n_axes;
}

GS__FN void gs__plan_layout_text(gs__sb *sb, const gs_run_desc *r) {
    int i;
    if (r->n_axes == 0) gs__sb_puts(sb, "one chip");
    for (i = 0; i < r->n_axes; i++)
        gs__sb_printf(sb, "%s%s=%lld%s", i ? " x " : "", gs_role_name(r->axes[i].role), (long long)r->axes[i].size,
                      r->axes[i].dcn ? "(dcn)" : "");
    if (r->remat == GS_REMAT_BLOCK) gs__sb_puts(sb, ", remat=block");
    if (r->grad_accum > 1) gs__sb_printf(sb, ", accum=%lld", (long long)r->grad_accum);
}

GS__FN const char *gs__plan_reason(gs_ctx *ctx, const gs_plan *p) {
    gs__sb sb;
    const gs__plan_cand *b = &p->c[0];
    gs__sb_init(&sb, ctx);
    if (!p->fits) {
        gs__sb_printf(&sb, "nothing fits: the best layout (");
        gs__plan_layout_text(&sb, &b->run);
        gs__sb_printf(&sb, ") needs %.4g GB per chip of %.4g GB (%.4g GB short)", b->step.mem.total / 1e9,
                      b->step.mem.capacity / 1e9, p->shortfall / 1e9);
    } else {
        gs__sb_puts(&sb, "best: ");
        gs__plan_layout_text(&sb, &b->run);
        gs__sb_printf(&sb, ", %s-bound, %.4g ms per step (math %.4g, HBM %.4g, ICI %.4g, DCN %.4g ms)",
                      gs_bound_name(b->step.bound), b->step.seconds * 1e3, b->step.t_math * 1e3, b->step.t_hbm * 1e3,
                      b->step.t_ici * 1e3, b->step.t_dcn * 1e3);
        gs__sb_puts(&sb, "; annotations ");
        gs__md_annotations(&sb, &b->run);
        if (p->n > 1 && p->c[1].step.mem.fits) {
            const gs__plan_cand *s = &p->c[1];
            gs__sb_puts(&sb, "; the runner-up (");
            gs__plan_layout_text(&sb, &s->run);
            gs__sb_printf(&sb, ") is %s-bound at %.4g ms (math %.4g, HBM %.4g, ICI %.4g, DCN %.4g ms)",
                          gs_bound_name(s->step.bound), s->step.seconds * 1e3, s->step.t_math * 1e3, s->step.t_hbm * 1e3,
                          s->step.t_ici * 1e3, s->step.t_dcn * 1e3);
        }
    }
    return gs__sb_finish(&sb, "gs_model_plan");
}

GS_API gs_result gs_model_plan(gs_ctx *ctx, const gs_model_desc *m, const gs_run_desc *run, int64_t devices, gs_plan **out) {
    gs__plan_gen G;
    gs_plan *p;
    gs_result rc;
    int64_t d;
    int i;
    if (!ctx) return GS_ERR_INVALID_ARG;
    if (!out) return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_model_plan: out is NULL");
    *out = NULL;
    if (gs_model_check(ctx, m) != GS_OK) return gs_ctx_error(ctx);
    if (!run) return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_model_plan: run is NULL");
    if (devices <= 0 || devices > 1000000)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_model_plan: devices %lld is not 1..1000000", (long long)devices);
    memset(&G, 0, sizeof G);
    G.base = *run;
    G.base.n_axes = 0;
    if (gs_run_check(ctx, &G.base) != GS_OK) return gs_ctx_error(ctx);
    G.m = m;
    gs__md_load(m, &G.md);
    G.devices = devices;
    if (run->chip->torus_rank > 0) {
        G.slice = 1;
        for (i = 0; i < GS_COST_MAX_AXES; i++)
            if (run->chip->pod[i] > 0) G.slice *= run->chip->pod[i];
    } else {
        G.slice = run->chip->nvlink_domain > 0 ? run->chip->nvlink_domain : 1;
    }
    for (d = 1; d <= devices && G.n_divs < GS__COUNTOF(G.divs); d++)
        if (devices % d == 0) G.divs[G.n_divs++] = d;
    if (G.n_divs == GS__COUNTOF(G.divs) && G.divs[G.n_divs - 1] != devices)
        return gs__err(ctx, GS_ERR_UNSUPPORTED, "gs_model_plan: %lld devices have more than %d divisors", (long long)devices,
                       GS__COUNTOF(G.divs));
    for (i = 0; i < GS__PLAN_NROLES; i++) G.ways[i] = 1;
    rc = gs__plan_rec(ctx, &G, 0, devices);
    if (rc != GS_OK) {
        gs__free(ctx, G.out);
        return rc;
    }
    if (G.n == 0) {
        gs__free(ctx, G.out);
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_model_plan: no layout of %lld devices suits batch %lld (every data or "
                       "FSDP shard needs a sequence) on chip '%s'", (long long)devices, (long long)run->batch,
                       run->chip->name ? run->chip->name : "?");
    }
    qsort(G.out, (size_t)G.n, sizeof *G.out, gs__plan_cmp);
    p = (gs_plan *)gs__arena_alloc(ctx, sizeof *p);
    if (p) p->c = (gs__plan_cand *)gs__arena_dup(ctx, G.out, sizeof(gs__plan_cand) * (size_t)G.n);
    gs__free(ctx, G.out);
    if (!p || !p->c) return GS_ERR_OUT_OF_MEMORY;
    p->ctx = ctx;
    p->model = m;
    p->n = G.n;
    p->fits = p->c[0].step.mem.fits;
    p->shortfall = p->fits ? 0.0 : p->c[0].step.mem.total - p->c[0].step.mem.capacity;
    p->reason = gs__plan_reason(ctx, p);
    if (!p->reason) return GS_ERR_OUT_OF_MEMORY;
    *out = p;
    return GS_OK;
}

GS_API int gs_plan_num_candidates(const gs_plan *p) { return p ? p->n : 0; }
GS_API const gs_run_desc *gs_plan_run(const gs_plan *p, int i) { return p && i >= 0 && i < p->n ? &p->c[i].run : NULL; }
GS_API const gs_model_step *gs_plan_step(const gs_plan *p, int i) { return p && i >= 0 && i < p->n ? &p->c[i].step : NULL; }
GS_API bool gs_plan_fits(const gs_plan *p) { return p && p->fits; }
GS_API double gs_plan_shortfall(const gs_plan *p) { return p ? p->shortfall : 0.0; }
GS_API const char *gs_plan_reason(const gs_plan *p) { return p ? p->reason : NULL; }

GS_API const char *gs_plan_json(gs_plan *p, int max_candidates) {
    gs__sb sb;
    int i, n;
    if (!p) return NULL;
    n = max_candidates > 0 && max_candidates < p->n ? max_candidates : p->n;
    gs__sb_init(&sb, p->ctx);
    gs__sb_puts(&sb, "{\"model\": ");
    gs__cm_json_str(&sb, p->model->name ? p->model->name : "");
    gs__sb_printf(&sb, ", \"fits\": %s, ", p->fits ? "true" : "false");
    gs__md_json_kv(&sb, "shortfall_bytes", p->shortfall, true);
    gs__sb_puts(&sb, "\"reason\": ");
    gs__cm_json_str(&sb, p->reason);
    gs__sb_printf(&sb, ", \"num_candidates\": %d, \"candidates\": [", p->n);
    for (i = 0; i < n; i++) {
        gs__sb_puts(&sb, i ? ",\n  {\"run\": " : "\n  {\"run\": ");
        gs__md_json_run(&sb, &p->c[i].run);
        gs__sb_puts(&sb, ", \"step\": ");
        gs__md_json_step(&sb, &p->c[i].step);
        gs__sb_puts(&sb, "}");
    }
    gs__sb_puts(&sb, "]}\n");
    return gs__sb_finish(&sb, "gs_plan_json");
}

GS_API const char *gs_plan_text(gs_plan *p, int max_candidates) {
    gs__sb sb;
    int i, n;
    if (!p) return NULL;
    n = max_candidates > 0 && max_candidates < p->n ? max_candidates : p->n;
    gs__sb_init(&sb, p->ctx);
    gs__sb_printf(&sb, "%s: %d layouts, %s\n", p->model->name ? p->model->name : "model", p->n,
                  p->fits ? "ranked by step time" : "none fits in HBM (smallest memory first)");
    gs__sb_puts(&sb, " rank  step_ms   bound    mfu   tok/s/chip  GB/chip  fits  layout\n");
    for (i = 0; i < n; i++) {
        const gs_model_step *s = &p->c[i].step;
        gs__sb_printf(&sb, "%5d %8.4g %8s %6.3f %11.5g %8.4g  %-4s  ", i + 1, s->seconds * 1e3, gs_bound_name(s->bound), s->mfu,
                      s->tokens_per_s_per_chip, s->mem.total / 1e9, s->mem.fits ? "yes" : "no");
        gs__plan_layout_text(&sb, &p->c[i].run);
        gs__sb_puts(&sb, "\n");
    }
    gs__sb_printf(&sb, "%s\n", p->reason);
    return gs__sb_finish(&sb, "gs_plan_text");
}

/* =========================================================================================================
   The chosen layout as an annotated HLO module at reduced size
   ========================================================================================================= */

/* which tensor dim a role's axes split: activations [tokens, D], hidden [tokens, F], W_in [D, F], W_out [F, D] */
enum { GS__EM_X, GS__EM_H, GS__EM_WIN, GS__EM_WOUT };

GS__FN int gs__em_dim(int tensor, gs_role r) {
    bool batch = r == GS_ROLE_DATA || r == GS_ROLE_FSDP || r == GS_ROLE_SEQUENCE || r == GS_ROLE_EXPERT;
    switch (tensor) {
    case GS__EM_X: return batch ? 0 : r == GS_ROLE_TENSOR_2D ? 1 : -1;
    case GS__EM_H: return batch ? 0 : r == GS_ROLE_TENSOR ? 1 : -1;
    case GS__EM_WIN: return r == GS_ROLE_FSDP || r == GS_ROLE_TENSOR_2D ? 0 : r == GS_ROLE_TENSOR ? 1 : -1;
    default: return r == GS_ROLE_TENSOR ? 0 : r == GS_ROLE_FSDP || r == GS_ROLE_TENSOR_2D ? 1 : -1;
    }
}


/* The emitter's state: the text, the element type, the reduced mesh (every axis 2 ways or dropped) and the
   reduced sizes: batch B, tokens T, d_model D, d_ff F, vocab V, kv-heads K, queries per kv-head G, head_dim
   H, experts E (top-k k). */
typedef struct gs__em {
    gs__sb *sb;
    const char *ty;
    int n;
    int64_t size[GS_MODEL_MAX_AXES];
    gs_role role[GS_MODEL_MAX_AXES];
    int64_t B, T, D, F, V, K, G, H, E, k, L, param, scale, devices;
    bool gated, tied, moe;
    const gs_run_desc *run;   /* the candidate: its axes left out of the mesh are named in the header */
    bool kept[GS_MODEL_MAX_AXES];
} gs__em;

/* snprintf into a name or dims buffer of the emitter; they hold a few names and sizes, far below 128 bytes */
GS__FN void gs__em_fmt(char *buf, size_t n, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
GS__FN void gs__em_fmt(char *buf, size_t n, const char *fmt, ...) {
    int len;
    va_list ap;
    va_start(ap, fmt);
    len = vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    GSHARD_ASSERT(len >= 0 && (size_t)len < n);
    (void)len;   /* bounded by construction: layer numbers, short names and at most four int64 sizes */
}

/* does role r split a dim marked with letter c? b: batch (data, fsdp, expert), B: data and fsdp, e: expert,
   s: sequence, t: tensor, d: a weight's d_model (fsdp, tensor2d), D: an activation's d_model (tensor2d) */
GS__FN bool gs__em_letter(char c, gs_role r) {
    switch (c) {
    case 'b': return r == GS_ROLE_DATA || r == GS_ROLE_FSDP || r == GS_ROLE_EXPERT;
    case 'B': return r == GS_ROLE_DATA || r == GS_ROLE_FSDP;
    case 'e': return r == GS_ROLE_EXPERT;
    case 's': return r == GS_ROLE_SEQUENCE;
    case 't': return r == GS_ROLE_TENSOR;
    case 'd': return r == GS_ROLE_FSDP || r == GS_ROLE_TENSOR_2D;
    case 'D': return r == GS_ROLE_TENSOR_2D;
    default: return false;
    }
}

/* ", sharding={devices=[t0,...(,r)]<=[mesh]T(perm)( last_tile_dim_replicate)}" for a tensor whose dims are
   described by spec: one word of letters (gs__em_letter) per dim, "." for a dim no role splits, e.g. "b st D".
   A dim's tiles are ordered by the word's letters, then by axis; 'b' orders as "Be": the expert axes are the
   minor factor of the batch split, which is where the AllToAll into [E, ...] takes them from. */
GS__FN void gs__em_sharding(const gs__em *E, const char *spec) {
    int dimof[GS_MODEL_MAX_AXES], perm[GS_MODEL_MAX_AXES], np = 0, rank = 1, d, a;
    int64_t t[GS_MAX_RANK + 1], rep = 1;
    const char *c, *w = spec;
    bool ident = true;
    for (c = spec; *c; c++)
        if (*c == ' ') rank++;
    for (a = 0; a < E->n; a++) dimof[a] = -1;
    for (d = 0; d < rank; d++, w = c + (*c == ' ')) {
        t[d] = 1;
        for (c = w; *c && *c != ' '; c++) {
            const char *sub = *c == 'b' ? "Be" : NULL, one[2] = {*c, 0}, *l;
            for (l = sub ? sub : one; *l; l++)
                for (a = 0; a < E->n; a++)
                    if (dimof[a] < 0 && gs__em_letter(*l, E->role[a])) {
                        dimof[a] = d;
                        perm[np++] = a;
                        t[d] *= E->size[a];
                    }
        }
    }
    for (a = 0; a < E->n; a++)
        if (dimof[a] < 0) {
            perm[np++] = a;
            rep *= E->size[a];
        }
    if (rep == 1) {
        for (d = 0; d < rank && t[d] == 1; d++) {}
        if (d == rank) {
            gs__sb_puts(E->sb, ", sharding={replicated}");
            return;
        }
    }
    gs__sb_puts(E->sb, ", sharding={devices=[");
    for (d = 0; d < rank; d++) gs__sb_printf(E->sb, "%s%lld", d ? "," : "", (long long)t[d]);
    if (rep > 1) gs__sb_printf(E->sb, ",%lld", (long long)rep);
    gs__sb_puts(E->sb, "]<=[");
    for (a = 0; a < E->n; a++) gs__sb_printf(E->sb, "%s%lld", a ? "," : "", (long long)E->size[a]);
    gs__sb_puts(E->sb, "]");
    for (a = 0; a < np; a++)
        if (perm[a] != a) ident = false;
    if (!ident) {
        gs__sb_puts(E->sb, "T(");
        for (a = 0; a < np; a++) gs__sb_printf(E->sb, "%s%d", a ? "," : "", perm[a]);
        gs__sb_puts(E->sb, ")");
    }
    if (rep > 1) gs__sb_puts(E->sb, " last_tile_dim_replicate");
    gs__sb_puts(E->sb, "}");
}

/* one instruction line: "  <text>" and, with spec, its sharding */
GS__FN void gs__em_line(gs__em *E, const char *spec, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
GS__FN void gs__em_line(gs__em *E, const char *spec, const char *fmt, ...) {
    char buf[512];
    int len;
    va_list ap;
    va_start(ap, fmt);
    len = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    GSHARD_ASSERT(len >= 0 && (size_t)len < sizeof buf);   /* our own formats: names and a few sizes */
    (void)len;
    gs__sb_printf(E->sb, "  %s", buf);
    if (spec) gs__em_sharding(E, spec);
    gs__sb_puts(E->sb, "\n");
}

/* a weight parameter `name` of dims `dims` ("64,128") split as spec */
GS__FN void gs__em_param(gs__em *E, const char *name, const char *dims, const char *spec) {
    gs__em_line(E, spec, "%s = %s[%s] parameter(%lld)", name, E->ty, dims, (long long)E->param++);
}

/* name = ty[dims] broadcast of the scalar constant v */
GS__FN void gs__em_splat(gs__em *E, const char *name, const char *dims, double v) {
    gs__em_line(E, NULL, "%s_c = %s[] constant(%.9g)", name, E->ty, v);
    gs__em_line(E, NULL, "%s = %s[%s] broadcast(%s_c), dimensions={}", name, E->ty, dims, name);
}

/* out = a * v elementwise over dims */
GS__FN void gs__em_scale(gs__em *E, const char *out, const char *a, const char *dims, double v) {
    char b[128];
    gs__em_fmt(b, sizeof b, "%s_k", out);
    gs__em_splat(E, b, dims, v);
    gs__em_line(E, NULL, "%s = %s[%s] multiply(%s, %s)", out, E->ty, dims, a, b);
}

/* out [B,T,D] = in * rsqrt(mean(in^2 over D) + 1e-6) * g (RMSNorm; g [D]) */
GS__FN void gs__em_norm(gs__em *E, const char *out, const char *in, const char *g) {
    char bt[128], x[128], a[128], b[128];
    const char *ty = E->ty;
    gs__em_fmt(bt, sizeof bt, "%lld,%lld", (long long)E->B, (long long)E->T);
    gs__em_fmt(x, sizeof x, "%s,%lld", bt, (long long)E->D);
    gs__em_line(E, NULL, "%s_sq = %s[%s] multiply(%s, %s)", out, ty, x, in, in);
    gs__em_line(E, NULL, "%s_ss = %s[%s] reduce(%s_sq, zero), dimensions={2}, to_apply=add", out, ty, bt, out);
    gs__em_fmt(a, sizeof a, "%s_ms", out);
    gs__em_fmt(b, sizeof b, "%s_ss", out);
    gs__em_scale(E, a, b, bt, 1.0 / (double)E->D);
    gs__em_line(E, NULL, "%s_eps_c = %s[] constant(1e-06)", out, ty);
    gs__em_line(E, NULL, "%s_eps = %s[%s] broadcast(%s_eps_c), dimensions={}", out, ty, bt, out);
    gs__em_line(E, NULL, "%s_v = %s[%s] add(%s_ms, %s_eps)", out, ty, bt, out, out);
    gs__em_line(E, NULL, "%s_r = %s[%s] rsqrt(%s_v)", out, ty, bt, out);
    gs__em_line(E, NULL, "%s_rb = %s[%s] broadcast(%s_r), dimensions={0,1}", out, ty, x, out);
    gs__em_line(E, NULL, "%s_gb = %s[%s] broadcast(%s), dimensions={2}", out, ty, x, g);
    gs__em_line(E, NULL, "%s_n = %s[%s] multiply(%s, %s_rb)", out, ty, x, in, out);
    gs__em_line(E, "b st D", "%s = %s[%s] multiply(%s_n, %s_gb)", out, ty, x, out, out);
}

/* out = softmax of in over its last dim (of dims; keep: the other dims, listed "0,1,..") */
GS__FN void gs__em_softmax(gs__em *E, const char *out, const char *in, const char *dims, const char *rdims,
                           int last, const char *keep) {
    const char *ty = E->ty;
    gs__em_line(E, NULL, "%s_mx = %s[%s] reduce(%s, big_neg), dimensions={%d}, to_apply=max", out, ty, rdims, in, last);
    gs__em_line(E, NULL, "%s_mb = %s[%s] broadcast(%s_mx), dimensions={%s}", out, ty, dims, out, keep);
    gs__em_line(E, NULL, "%s_d = %s[%s] subtract(%s, %s_mb)", out, ty, dims, in, out);
    gs__em_line(E, NULL, "%s_e = %s[%s] exponential(%s_d)", out, ty, dims, out);
    gs__em_line(E, NULL, "%s_s = %s[%s] reduce(%s_e, zero), dimensions={%d}, to_apply=add", out, ty, rdims, out, last);
    gs__em_line(E, NULL, "%s_sb = %s[%s] broadcast(%s_s), dimensions={%s}", out, ty, dims, out, keep);
    gs__em_line(E, NULL, "%s = %s[%s] divide(%s_e, %s_sb)", out, ty, dims, out, out);
}

/* layer l's attention block: x<l>a [B,T,D] = x<l> + W_o . softmax(mask(Q K^T / sqrt(H))) V, grouped-query:
   Q [B,T,K,G,H], K and V [B,T,K,H], scores [B,K,T,G,S]; heads (K) split by tensor, T by sequence (the keys
   and values gathered for the scores) */
GS__FN void gs__em_attention(gs__em *E, int l) {
    char x[128], q[128], kv[128], sc[128], sr[128], cx[128], w[128], nm[128], in[128];
    const char *ty = E->ty;
    long long B = E->B, T = E->T, D = E->D, K = E->K, G = E->G, H = E->H;
    gs__em_fmt(x, sizeof x, "%lld,%lld,%lld", B, T, D);
    gs__em_fmt(q, sizeof q, "%lld,%lld,%lld,%lld,%lld", B, T, K, G, H);
    gs__em_fmt(kv, sizeof kv, "%lld,%lld,%lld,%lld", B, T, K, H);
    gs__em_fmt(sc, sizeof sc, "%lld,%lld,%lld,%lld,%lld", B, K, T, G, T);
    gs__em_fmt(sr, sizeof sr, "%lld,%lld,%lld,%lld", B, K, T, G);
    gs__em_fmt(cx, sizeof cx, "%lld,%lld,%lld,%lld,%lld", B, K, T, G, H);
    gs__em_fmt(nm, sizeof nm, "l%d_ga", l);
    gs__em_fmt(w, sizeof w, "%lld", D);
    gs__em_param(E, nm, w, "D");
    gs__em_fmt(w, sizeof w, "%lld,%lld,%lld,%lld", D, K, G, H);
    gs__em_fmt(nm, sizeof nm, "l%d_wq", l);
    gs__em_param(E, nm, w, "d t . .");
    gs__em_fmt(w, sizeof w, "%lld,%lld,%lld", D, K, H);
    gs__em_fmt(nm, sizeof nm, "l%d_wk", l);
    gs__em_param(E, nm, w, "d t .");
    gs__em_fmt(nm, sizeof nm, "l%d_wv", l);
    gs__em_param(E, nm, w, "d t .");
    gs__em_fmt(w, sizeof w, "%lld,%lld,%lld,%lld", K, G, H, D);
    gs__em_fmt(nm, sizeof nm, "l%d_wo", l);
    gs__em_param(E, nm, w, "t . . d");
    gs__em_fmt(nm, sizeof nm, "l%d_an", l);
    gs__em_fmt(in, sizeof in, "x%d", l);
    gs__em_fmt(w, sizeof w, "l%d_ga", l);
    gs__em_norm(E, nm, in, w);
    gs__em_line(E, "b s t . .", "l%d_q0 = %s[%s] dot(l%d_an, l%d_wq), lhs_contracting_dims={2}, rhs_contracting_dims={0}", l,
                ty, q, l, l);
    gs__em_line(E, "b s t .", "l%d_k0 = %s[%s] dot(l%d_an, l%d_wk), lhs_contracting_dims={2}, rhs_contracting_dims={0}", l,
                ty, kv, l, l);
    gs__em_line(E, "b s t .", "l%d_v0 = %s[%s] dot(l%d_an, l%d_wv), lhs_contracting_dims={2}, rhs_contracting_dims={0}", l,
                ty, kv, l, l);
    /* projections scaled by 1/sqrt(fan-in) so that activations stay near 1 */
    gs__em_fmt(nm, sizeof nm, "l%d_q", l);
    gs__em_fmt(in, sizeof in, "l%d_q0", l);
    gs__em_scale(E, nm, in, q, 1.0 / sqrt((double)D));
    gs__em_fmt(nm, sizeof nm, "l%d_k", l);
    gs__em_fmt(in, sizeof in, "l%d_k0", l);
    gs__em_scale(E, nm, in, kv, 1.0 / sqrt((double)D));
    gs__em_fmt(nm, sizeof nm, "l%d_v", l);
    gs__em_fmt(in, sizeof in, "l%d_v0", l);
    gs__em_scale(E, nm, in, kv, 1.0 / sqrt((double)D));
    gs__em_line(E, "b t s . .", "l%d_s0 = %s[%s] dot(l%d_q, l%d_k), lhs_batch_dims={0,2}, lhs_contracting_dims={4}, "
                "rhs_batch_dims={0,2}, rhs_contracting_dims={3}", l, ty, sc, l, l);
    gs__em_fmt(nm, sizeof nm, "l%d_s1", l);
    gs__em_fmt(in, sizeof in, "l%d_s0", l);
    gs__em_scale(E, nm, in, sc, 1.0 / sqrt((double)H));
    gs__em_line(E, NULL, "l%d_mask = pred[%s] broadcast(causal), dimensions={2,4}", l, sc);
    gs__em_line(E, NULL, "l%d_neg = %s[%s] broadcast(big_neg), dimensions={}", l, ty, sc);
    gs__em_line(E, "b t s . .", "l%d_s = %s[%s] select(l%d_mask, l%d_s1, l%d_neg)", l, ty, sc, l, l, l);
    gs__em_fmt(nm, sizeof nm, "l%d_p", l);
    gs__em_fmt(in, sizeof in, "l%d_s", l);
    gs__em_softmax(E, nm, in, sc, sr, 4, "0,1,2,3");
    gs__em_line(E, "b t s . .", "l%d_c = %s[%s] dot(l%d_p, l%d_v), lhs_batch_dims={0,1}, lhs_contracting_dims={4}, "
                "rhs_batch_dims={0,2}, rhs_contracting_dims={1}", l, ty, cx, l, l);
    gs__em_line(E, "b st D", "l%d_o0 = %s[%s] dot(l%d_c, l%d_wo), lhs_contracting_dims={1,3,4}, "
                "rhs_contracting_dims={0,1,2}", l, ty, x, l, l);
    gs__em_fmt(nm, sizeof nm, "l%d_o", l);
    gs__em_fmt(in, sizeof in, "l%d_o0", l);
    gs__em_scale(E, nm, in, x, 1.0 / sqrt((double)(K * G * H)));
    gs__em_line(E, "b st D", "x%da = %s[%s] add(x%d, l%d_o)", l, ty, x, l, l);
}

/* the MLP's nonlinearity on h [dims] (and the gate g when gated): silu(h) * g, or gelu(h) (erf form) */
GS__FN void gs__em_act(gs__em *E, const char *out, const char *h, const char *g, const char *dims) {
    const char *ty = E->ty;
    char a[128];
    if (E->gated) {
        gs__em_line(E, NULL, "%s_sg = %s[%s] logistic(%s)", out, ty, dims, h);
        gs__em_line(E, NULL, "%s_si = %s[%s] multiply(%s, %s_sg)", out, ty, dims, h, out);
        gs__em_line(E, NULL, "%s = %s[%s] multiply(%s_si, %s)", out, ty, dims, out, g);
        return;
    }
    gs__em_fmt(a, sizeof a, "%s_h2", out);
    gs__em_scale(E, a, h, dims, 0.5);
    gs__em_fmt(a, sizeof a, "%s_hs", out);
    gs__em_scale(E, a, h, dims, 0.70710678118654752);
    gs__em_line(E, NULL, "%s_er = %s[%s] erf(%s_hs)", out, ty, dims, out);
    gs__em_fmt(a, sizeof a, "%s_one", out);
    gs__em_splat(E, a, dims, 1.0);
    gs__em_line(E, NULL, "%s_e1 = %s[%s] add(%s_er, %s_one)", out, ty, dims, out, out);
    gs__em_line(E, NULL, "%s = %s[%s] multiply(%s_h2, %s_e1)", out, ty, dims, out, out);
}

/* layer l's MLP block: x<l+1> = x<l>a + W_out . act(x W_in) over [B,T,F], F split by tensor; with experts
   (GShard's dense dispatch): the router's softmax, the top-k mask (ties all selected), the tokens moved from
   the batch split to the expert split of [E,B,T,D] (an AllToAll), each expert's MLP on its tokens (the
   others zero), moved back (an AllToAll) and combined with the gates renormalised over the chosen k */
GS__FN void gs__em_mlp(gs__em *E, int l) {
    char x[128], h[128], w[128], nm[128], in[128], a[128], bt[128], bte[128];
    const char *ty = E->ty, *wspec_in = E->moe ? "e d t" : "d t",
               *wspec_out = E->moe ? "e t d" : "t d", *hspec = E->moe ? "e B s t" : "b s t";
    long long B = E->B, T = E->T, D = E->D, F = E->F, X = E->E;
    int j, bd = E->moe ? 1 : 0;
    gs__em_fmt(bt, sizeof bt, "%lld,%lld", B, T);
    gs__em_fmt(bte, sizeof bte, "%s,%lld", bt, X);
    gs__em_fmt(x, sizeof x, "%s,%lld", bt, D);
    if (E->moe) gs__em_fmt(h, sizeof h, "%lld,%s,%lld", X, bt, F);
    else gs__em_fmt(h, sizeof h, "%s,%lld", bt, F);
    gs__em_fmt(nm, sizeof nm, "l%d_gm", l);
    gs__em_fmt(w, sizeof w, "%lld", D);
    gs__em_param(E, nm, w, "D");
    if (E->moe) {
        gs__em_fmt(w, sizeof w, "%lld,%lld", D, X);
        gs__em_fmt(nm, sizeof nm, "l%d_wr", l);
        gs__em_param(E, nm, w, "d .");
        gs__em_fmt(w, sizeof w, "%lld,%lld,%lld", X, D, F);
    } else {
        gs__em_fmt(w, sizeof w, "%lld,%lld", D, F);
    }
    gs__em_fmt(nm, sizeof nm, "l%d_w1", l);
    gs__em_param(E, nm, w, wspec_in);
    if (E->gated) {
        gs__em_fmt(nm, sizeof nm, "l%d_w2", l);
        gs__em_param(E, nm, w, wspec_in);
    }
    if (E->moe) gs__em_fmt(w, sizeof w, "%lld,%lld,%lld", X, F, D);
    else gs__em_fmt(w, sizeof w, "%lld,%lld", F, D);
    gs__em_fmt(nm, sizeof nm, "l%d_w3", l);
    gs__em_param(E, nm, w, wspec_out);
    gs__em_fmt(nm, sizeof nm, "l%d_mn", l);
    gs__em_fmt(in, sizeof in, "x%da", l);
    gs__em_fmt(a, sizeof a, "l%d_gm", l);
    gs__em_norm(E, nm, in, a);
    gs__em_fmt(in, sizeof in, "l%d_mn", l);
    if (E->moe) {
        char ebtd[128];
        gs__em_fmt(ebtd, sizeof ebtd, "%lld,%s", X, x);
        gs__em_line(E, "b s .", "l%d_r0 = %s[%s] dot(l%d_mn, l%d_wr), lhs_contracting_dims={2}, rhs_contracting_dims={0}", l,
                    ty, bte, l, l);
        gs__em_fmt(nm, sizeof nm, "l%d_r", l);
        gs__em_fmt(a, sizeof a, "l%d_r0", l);
        gs__em_scale(E, nm, a, bte, 1.0 / sqrt((double)D));
        gs__em_fmt(nm, sizeof nm, "l%d_pr", l);
        gs__em_fmt(a, sizeof a, "l%d_r", l);
        gs__em_softmax(E, nm, a, bte, bt, 2, "0,1");
        gs__em_line(E, NULL, "l%d_cur0 = %s[%s] copy(l%d_pr)", l, ty, bte, l);
        gs__em_line(E, NULL, "l%d_ng = %s[%s] broadcast(big_neg), dimensions={}", l, ty, bte);
        for (j = 0; j < E->k; j++) {
            gs__em_line(E, NULL, "l%d_mx%d = %s[%s] reduce(l%d_cur%d, big_neg), dimensions={2}, to_apply=max", l, j, ty, bt, l, j);
            gs__em_line(E, NULL, "l%d_mb%d = %s[%s] broadcast(l%d_mx%d), dimensions={0,1}", l, j, ty, bte, l, j);
            gs__em_line(E, NULL, "l%d_m%d = pred[%s] compare(l%d_cur%d, l%d_mb%d), direction=EQ", l, j, bte, l, j, l, j);
            if (j == 0) gs__em_line(E, NULL, "l%d_sel0 = pred[%s] copy(l%d_m0)", l, bte, l);
            else gs__em_line(E, NULL, "l%d_sel%d = pred[%s] or(l%d_sel%d, l%d_m%d)", l, j, bte, l, j - 1, l, j);
            gs__em_line(E, NULL, "l%d_cur%d = %s[%s] select(l%d_m%d, l%d_ng, l%d_cur%d)", l, j + 1, ty, bte, l, j, l, l, j);
        }
        gs__em_line(E, NULL, "l%d_zg = %s[%s] broadcast(zero), dimensions={}", l, ty, bte);
        gs__em_line(E, NULL, "l%d_cs = %s[%s] select(l%d_sel%lld, l%d_pr, l%d_zg)", l, ty, bte, l, (long long)E->k - 1, l, l);
        gs__em_line(E, NULL, "l%d_ct = %s[%s] reduce(l%d_cs, zero), dimensions={2}, to_apply=add", l, ty, bt, l);
        gs__em_line(E, NULL, "l%d_ctb = %s[%s] broadcast(l%d_ct), dimensions={0,1}", l, ty, bte, l);
        gs__em_line(E, NULL, "l%d_comb = %s[%s] divide(l%d_cs, l%d_ctb)", l, ty, bte, l, l);
        gs__em_line(E, NULL, "l%d_mf = %s[%s] convert(l%d_sel%lld)", l, ty, bte, l, (long long)E->k - 1);
        gs__em_line(E, NULL, "l%d_mt = %s[%lld,%s] transpose(l%d_mf), dimensions={2,0,1}", l, ty, X, bt, l);
        gs__em_line(E, NULL, "l%d_mtb = %s[%s] broadcast(l%d_mt), dimensions={0,1,2}", l, ty, ebtd, l);
        gs__em_line(E, NULL, "l%d_xb = %s[%s] broadcast(l%d_mn), dimensions={1,2,3}", l, ty, ebtd, l);
        gs__em_line(E, ". b s D", "l%d_xd = %s[%s] multiply(l%d_xb, l%d_mtb)", l, ty, ebtd, l, l);
        gs__em_line(E, "e B s D", "l%d_xe = %s[%s] copy(l%d_xd)", l, ty, ebtd, l);
        gs__em_fmt(in, sizeof in, "l%d_xe", l);
    }
    gs__em_line(E, hspec, "l%d_h1_0 = %s[%s] dot(%s, l%d_w1), %slhs_contracting_dims={%d}, %srhs_contracting_dims={%d}", l, ty, h,
                in, l, bd ? "lhs_batch_dims={0}, " : "", 2 + bd, bd ? "rhs_batch_dims={0}, " : "", bd);
    if (E->gated)
        gs__em_line(E, hspec, "l%d_h2_0 = %s[%s] dot(%s, l%d_w2), %slhs_contracting_dims={%d}, %srhs_contracting_dims={%d}", l, ty,
                    h, in, l, bd ? "lhs_batch_dims={0}, " : "", 2 + bd, bd ? "rhs_batch_dims={0}, " : "", bd);
    gs__em_fmt(nm, sizeof nm, "l%d_h1", l);
    gs__em_fmt(a, sizeof a, "l%d_h1_0", l);
    gs__em_scale(E, nm, a, h, 1.0 / sqrt((double)D));
    if (E->gated) {
        gs__em_fmt(nm, sizeof nm, "l%d_h2", l);
        gs__em_fmt(a, sizeof a, "l%d_h2_0", l);
        gs__em_scale(E, nm, a, h, 1.0 / sqrt((double)D));
    }
    gs__em_fmt(nm, sizeof nm, "l%d_act", l);
    gs__em_fmt(in, sizeof in, "l%d_h1", l);
    gs__em_fmt(a, sizeof a, "l%d_h2", l);
    gs__em_act(E, nm, in, a, h);
    if (E->moe) {
        char ebtd[128];
        gs__em_fmt(ebtd, sizeof ebtd, "%lld,%s", X, x);
        gs__em_line(E, "e B s D", "l%d_y0 = %s[%s] dot(l%d_act, l%d_w3), lhs_batch_dims={0}, lhs_contracting_dims={3}, "
                    "rhs_batch_dims={0}, rhs_contracting_dims={1}", l, ty, ebtd, l, l);
        gs__em_fmt(nm, sizeof nm, "l%d_y", l);
        gs__em_fmt(a, sizeof a, "l%d_y0", l);
        gs__em_scale(E, nm, a, ebtd, 1.0 / sqrt((double)F));
        gs__em_line(E, ". b s D", "l%d_yb = %s[%s] copy(l%d_y)", l, ty, ebtd, l);
        gs__em_line(E, NULL, "l%d_cmt = %s[%lld,%s] transpose(l%d_comb), dimensions={2,0,1}", l, ty, X, bt, l);
        gs__em_line(E, NULL, "l%d_cmb = %s[%s] broadcast(l%d_cmt), dimensions={0,1,2}", l, ty, ebtd, l);
        gs__em_line(E, ". b s D", "l%d_yc = %s[%s] multiply(l%d_yb, l%d_cmb)", l, ty, ebtd, l, l);
        gs__em_line(E, "b st D", "l%d_f = %s[%s] reduce(l%d_yc, zero), dimensions={0}, to_apply=add", l, ty, x, l);
    } else {
        gs__em_line(E, "b st D", "l%d_f0 = %s[%s] dot(l%d_act, l%d_w3), lhs_contracting_dims={2}, rhs_contracting_dims={0}", l, ty,
                    x, l, l);
        gs__em_fmt(nm, sizeof nm, "l%d_f", l);
        gs__em_fmt(a, sizeof a, "l%d_f0", l);
        gs__em_scale(E, nm, a, x, 1.0 / sqrt((double)F));
    }
    gs__em_line(E, "b st D", "x%d = %s[%s] add(x%da, l%d_f)", l + 1, ty, x, l, l);
}

GS__FN int64_t gs__em_round(int64_t v, int64_t lo, int64_t mult) {
    v = v < lo ? lo : v;
    return (v + mult - 1) / mult * mult;
}

/* the reduced mesh and sizes of candidate r under desc (see gs_plan_emit_hlo_ex) */
GS__FN gs_result gs__em_setup(gs_ctx *ctx, const gs_model_desc *m, const gs_run_desc *r, const gs_emit_desc *d, gs__em *E) {
    int64_t maxd = d && d->max_devices > 0 ? d->max_devices : 16, dev = 1, ways[GS__MD_ROLES], k, kv, hd;
    int a;
    gs_dtype dt = d && d->dtype != GS_DTYPE_INVALID ? d->dtype : GS_F32;
    if (dt != GS_F32 && dt != GS_BF16)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_plan_emit_hlo: dtype %s is not f32 or bf16", gs_dtype_name(dt));
    if (d && (d->layers < 0 || d->layers > 256 || d->scale < 0 || d->max_devices < 0))
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_plan_emit_hlo: layers must be 0..256, scale and max_devices >= 0");
    E->ty = gs_dtype_name(dt);
    E->run = r;
    for (a = 0; a < GS__MD_ROLES; a++) ways[a] = 1;
    /* every axis 2 ways while the mesh stays within maxd devices; pipeline axes are left out */
    for (a = 0; a < r->n_axes; a++) {
        if (r->axes[a].size <= 1 || r->axes[a].role == GS_ROLE_PIPELINE || dev * 2 > maxd) continue;
        E->kept[a] = true;
        E->size[E->n] = 2;
        E->role[E->n] = r->axes[a].role;
        ways[r->axes[a].role] *= 2;
        dev *= 2;
        E->n++;
    }
    k = d && d->scale > 0 ? d->scale : (m->d_model / 64 > 1 ? m->d_model / 64 : 1);
    kv = m->kv_heads ? m->kv_heads : m->heads;
    hd = m->head_dim ? m->head_dim : m->d_model / m->heads;
    E->L = d && d->layers > 0 ? d->layers : 2;
    E->B = gs__em_round(ways[GS_ROLE_DATA] * ways[GS_ROLE_FSDP] * ways[GS_ROLE_EXPERT], 2, 1);
    E->T = 16;
    E->D = gs__em_round(m->d_model / k, 16, 16);
    E->F = gs__em_round(m->d_ff / k, 16, 16);
    E->V = gs__em_round(m->vocab / k, 16, 16);
    E->K = kv < 2 ? 1 : 2;
    E->K = E->K < ways[GS_ROLE_TENSOR] ? ways[GS_ROLE_TENSOR] : E->K;
    E->G = m->heads / kv >= 2 ? 2 : 1;
    E->H = gs__em_round(hd / k, 8, 8);
    E->moe = m->experts > 1;
    E->E = E->moe ? (m->experts < 4 ? m->experts : 4) : 1;
    E->E = E->E < ways[GS_ROLE_EXPERT] ? ways[GS_ROLE_EXPERT] : E->E;
    E->k = E->moe ? (m->top_k > 1 ? m->top_k : 1) : 1;
    E->k = E->k > E->E ? E->E : E->k;
    E->gated = m->mlp != GS_MLP_PLAIN;
    E->tied = m->tied_embeddings;
    E->scale = k;
    E->devices = dev;
    return GS_OK;
}

GS__FN void gs__em_header(gs__em *E, const gs_model_desc *m) {
    gs__sb *sb = E->sb;
    const char *name = m->name ? m->name : "model";
    int a, left;
    gs__sb_printf(sb, "// %s at reduced size (the model's dims divided by %lld): %lld layers, batch %lld x %lld tokens, "
                      "d_model %lld,\n// d_ff %lld, vocab %lld, %lld kv-heads x %lld queries each of head_dim %lld",
                  name, (long long)E->scale, (long long)E->L, (long long)E->B, (long long)E->T, (long long)E->D, (long long)E->F,
                  (long long)E->V, (long long)E->K, (long long)E->G, (long long)E->H);
    if (E->moe) gs__sb_printf(sb, ", %lld experts (top-%lld)", (long long)E->E, (long long)E->k);
    gs__sb_puts(sb, ";\n// the layout's roles on the mesh:");
    for (a = 0; a < E->n; a++) gs__sb_printf(sb, " %s=%lld", gs_role_name(E->role[a]), (long long)E->size[a]);
    for (a = 0, left = 0; a < E->run->n_axes; a++) {
        const gs_run_axis *x = &E->run->axes[a];
        if (x->size > 1 && !E->kept[a])
            gs__sb_printf(sb, "%s%s=%lld", left++ ? ", " : " (left out: ", gs_role_name(x->role), (long long)x->size);
    }
    if (left) gs__sb_puts(sb, ")");
    gs__sb_printf(sb, "\n// The forward pass of a pre-norm decoder: token ids -> one-hot . embedding; per layer RMSNorm,\n"
                      "// grouped-query attention with a causal mask (softmax(Q K^T / sqrt(H))), RMSNorm, %s%s;\n"
                      "// final RMSNorm and the %s output layer -> logits. Projections are scaled by 1/sqrt(fan-in).\n",
                  E->moe ? "a mixture of experts (router softmax, top-k, dense dispatch/combine) of " : "",
                  E->gated ? "gated (SiLU) MLP" : "GELU MLP", E->tied ? "tied" : "untied");
    gs__sb_puts(sb, "// Not emitted: the backward pass and optimizer (training), the KV cache (decode runs as a forward "
                    "pass),\n// pipeline stages (pipeline axes are left out of the mesh), expert capacity (every expert "
                    "sees every\n// token, the unrouted ones zeroed).\n\n");
}

GS_API const char *gs_plan_emit_hlo_ex(gs_plan *p, int i, const gs_emit_desc *desc, int64_t *devices, int64_t *scale) {
    gs__sb sb;
    gs__em E;
    const char *ty;
    long long B, T, D, V;
    int l;
    if (!p) return NULL;
    if (i < 0 || i >= p->n) {
        gs__err(p->ctx, GS_ERR_INVALID_ARG, "gs_plan_emit_hlo: candidate %d of %d", i, p->n);
        return NULL;
    }
    memset(&E, 0, sizeof E);
    if (gs__em_setup(p->ctx, p->model, &p->c[i].run, desc, &E) != GS_OK) return NULL;
    if (devices) *devices = E.devices;
    if (scale) *scale = E.scale;
    gs__sb_init(&sb, p->ctx);
    E.sb = &sb;
    ty = E.ty;
    B = E.B, T = E.T, D = E.D, V = E.V;
    gs__sb_printf(&sb, "HloModule plan_%s, num_partitions=%lld\n\n", p->model->name ? p->model->name : "model",
                  (long long)E.devices);
    gs__em_header(&E, p->model);
    gs__sb_printf(&sb, "add {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n  ROOT c = %s[] add(a, b)\n}\n\n", ty, ty, ty);
    gs__sb_printf(&sb, "max {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n  ROOT c = %s[] maximum(a, b)\n}\n\n", ty, ty,
                  ty);
    gs__sb_puts(&sb, "ENTRY main {\n");
    gs__em_line(&E, "b s", "ids = s32[%lld,%lld] parameter(%lld)", B, T, (long long)E.param++);
    gs__em_line(&E, "t d", "embed = %s[%lld,%lld] parameter(%lld)", ty, V, D, (long long)E.param++);
    gs__em_line(&E, NULL, "zero = %s[] constant(0)", ty);
    gs__em_line(&E, NULL, "big_neg = %s[] constant(-1e+30)", ty);
    gs__em_line(&E, NULL, "row = s32[%lld,%lld] iota(), iota_dimension=0", T, T);
    gs__em_line(&E, NULL, "col = s32[%lld,%lld] iota(), iota_dimension=1", T, T);
    gs__em_line(&E, NULL, "causal = pred[%lld,%lld] compare(row, col), direction=GE", T, T);
    gs__em_line(&E, NULL, "vocab = s32[%lld,%lld,%lld] iota(), iota_dimension=2", B, T, V);
    gs__em_line(&E, NULL, "idb = s32[%lld,%lld,%lld] broadcast(ids), dimensions={0,1}", B, T, V);
    gs__em_line(&E, NULL, "onehot = pred[%lld,%lld,%lld] compare(idb, vocab), direction=EQ", B, T, V);
    gs__em_line(&E, "b s t", "onehot_f = %s[%lld,%lld,%lld] convert(onehot)", ty, B, T, V);
    gs__em_line(&E, "b st D", "x0 = %s[%lld,%lld,%lld] dot(onehot_f, embed), lhs_contracting_dims={2}, rhs_contracting_dims={0}",
                ty, B, T, D);
    for (l = 0; l < E.L; l++) {
        gs__em_attention(&E, l);
        gs__em_mlp(&E, l);
    }
    gs__em_line(&E, "D", "g_final = %s[%lld] parameter(%lld)", ty, D, (long long)E.param++);
    {
        char in[128];
        gs__em_fmt(in, sizeof in, "x%d", l);
        gs__em_norm(&E, "xf", in, "g_final");
    }
    if (!E.tied) gs__em_line(&E, "d t", "unembed = %s[%lld,%lld] parameter(%lld)", ty, D, V, (long long)E.param++);
    gs__em_line(&E, "b s t", "logits0 = %s[%lld,%lld,%lld] dot(xf, %s), lhs_contracting_dims={2}, rhs_contracting_dims={%d}", ty,
                B, T, V, E.tied ? "embed" : "unembed", E.tied ? 1 : 0);
    gs__em_line(&E, NULL, "logits_c = %s[] constant(%.9g)", ty, 1.0 / sqrt((double)D));
    gs__em_line(&E, NULL, "logits_k = %s[%lld,%lld,%lld] broadcast(logits_c), dimensions={}", ty, B, T, V);
    gs__em_line(&E, "b s t", "ROOT logits = %s[%lld,%lld,%lld] multiply(logits0, logits_k)", ty, B, T, V);
    gs__sb_puts(&sb, "}\n");
    return gs__sb_finish(&sb, "gs_plan_emit_hlo");
}

GS_API const char *gs_plan_emit_hlo(gs_plan *p, int i, int64_t *devices, int64_t *scale) {
    return gs_plan_emit_hlo_ex(p, i, NULL, devices, scale);
}
