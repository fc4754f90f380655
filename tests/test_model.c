/* test_model.c - whole-model accounting, step times and the planner against the worked examples and answers of
   "How to Scale Your Model" (Austin et al.) ch.4-8, cited as [book] with chapter and question. Every BOOK()
   check is a number the book states (or, where the book's arithmetic is wrong, the corrected value; the
   comment and docs/cost.md say so). Other checks are hand-computed here from the formulas. */
#if !defined(_POSIX_C_SOURCE)
#  define _POSIX_C_SOURCE 200809L /* mkdtemp */
#endif
#include "test.h"
#include <unistd.h>

/* a number stated in the book, checked within the rounding it was printed with */
#define BOOK(a, b, rel) CHECK_REL(a, b, rel)

static long long cli_number_after(const char *text, const char *needle);

static const gs_model_desc *preset(const char *name) {
    const gs_model_desc *m = gs_model_preset_find(name);
    CHECK_MSG(m != NULL, "preset %s missing", name);
    return m;
}

static gs_model_counts counts(gs_ctx *ctx, const gs_model_desc *m, int64_t seq) {
    gs_model_counts c;
    CHECK_OK(gs_model_count(ctx, m, seq, &c));
    return c;
}

/* a run with up to four axes: sizes[i] > 0 with roles[i] */
static gs_run_desc run_of(const char *chip, gs_phase phase, int64_t batch, int64_t seq, int n, const int64_t *sizes,
                          const gs_role *roles) {
    gs_run_desc r;
    int i;
    memset(&r, 0, sizeof r);
    r.chip = gs_chip_find(chip);
    r.phase = phase;
    r.batch = batch;
    r.seq = seq;
    r.n_axes = n;
    for (i = 0; i < n; i++) {
        r.axes[i].size = sizes[i];
        r.axes[i].role = roles[i];
    }
    return r;
}

/* ---- presets and parameter counts ---- */
static void test_model_presets(void) {
    gs_ctx *ctx = gst_ctx();
    gs_model_counts c;
    const char *names[] = {"gpt3-175b", "llama2-7b", "llama2-13b", "llama2-70b", "llama3-8b", "llama3-70b",
                           "llama3-405b", "gemma-7b", "mixtral-8x7b"};
    /* public totals: GPT-3 175B (without its 25M position embeddings: 174.6e9), Llama 2 6.74e9 / 13.0e9 /
       69.0e9, Llama 3 8.03e9 / 70.6e9 / 405.9e9, Gemma 8.54e9, Mixtral 46.7e9 (12.9e9 active) */
    const double totals[] = {174.6e9, 6.74e9, 13.0e9, 69.0e9, 8.03e9, 70.6e9, 405.9e9, 8.54e9, 46.7e9};
    int i;
    CHECK_EQ_INT(gs_model_preset_count(), 9);
    CHECK(gs_model_preset_at(9) == NULL && gs_model_preset_at(-1) == NULL);
    for (i = 0; i < 9; i++) {
        const gs_model_desc *m = preset(names[i]);
        CHECK_OK(gs_model_check(ctx, m));
        CHECK(m->source && strlen(m->source) > 10);
        c = counts(ctx, m, 0);
        CHECK_REL(c.params, totals[i], 0.005);
        CHECK_REL(c.params, c.params_embed + c.params_unembed + c.params_attn + c.params_mlp + c.params_router + c.params_norm, 1e-12);
    }
    CHECK(gs_model_preset_find("LLAMA3-70B") == preset("llama3-70b"));
    CHECK(gs_model_preset_find("llama3") == NULL && gs_model_preset_find(NULL) == NULL);
    c = counts(ctx, preset("mixtral-8x7b"), 0);
    CHECK_REL(c.params_active, 12.9e9, 0.005);
    /* [book] ch.6: LLaMA 3-70B FFW 56.3e9, vocabulary 2.1e9, attention 12e9, total 70.4e9 (the book drops the
       1.3M norm weights and rounds; the total is 70.55e9) */
    c = counts(ctx, preset("llama3-70b"), 0);
    BOOK(c.params_mlp, 56.3e9, 0.002);
    BOOK(c.params_embed + c.params_unembed, 2.1e9, 0.002);
    BOOK(c.params_attn, 12e9, 0.01);
    BOOK(c.params, 70.4e9, 0.003);
    CHECK_REL(c.params_norm, (2.0 * 80 + 1) * 8192, 1e-12);
    /* ch.6 "MLP weights 56B of the 70B" */
    BOOK(c.params_mlp / c.params, 56.0 / 70.0, 0.01);
    /* [book] ch.5 Q1 and ch.7 table: LLaMA 2-13B FFW 8.5e9, attention 4.2e9, vocabulary 0.3e9, total 13.1e9
       ("13e9" in ch.7) */
    c = counts(ctx, preset("llama2-13b"), 0);
    BOOK(c.params_mlp, 8.5e9, 0.005);
    BOOK(c.params_attn, 4.2e9, 0.005);
    BOOK(c.params_embed + c.params_unembed, 0.33e9, 0.01);
    BOOK(c.params, 13.1e9, 0.01);
    /* ch.5 Q2: bf16 parameters and two f32 Adam moments, (2 + 4 + 4) * 13e9 ~ 130 GB */
    BOOK(10.0 * c.params, 130e9, 0.01);
    /* [book] ch.7 Q1: L = 64, D = 4096, F = 16384, N = 32, K = 8, H = 256, V = 32128, tied: 18.4e9 */
    {
        gs_model_desc m;
        memset(&m, 0, sizeof m);
        m.name = "ch7-q1";
        m.layers = 64; m.d_model = 4096; m.d_ff = 16384; m.heads = 32; m.kv_heads = 8; m.head_dim = 256;
        m.vocab = 32128; m.tied_embeddings = true;
        c = counts(ctx, &m, 0);
        BOOK(c.params, 18.4e9, 0.002);
        CHECK_REL(c.kv_elems, 2.0 * 64 * 8 * 256, 1e-12);
    }
    /* [book] ch.8: LLaMA 3-70B int8 parameters 70 GB, bf16 140 GB, int4 35 GB (the ch.8 table prints 45 GB for
       int4: 70e9 * 0.5 is 35e9; see docs/cost.md) */
    c = counts(ctx, preset("llama3-70b"), 0);
    BOOK(c.params * 1.0, 70e9, 0.01);
    BOOK(c.params * 2.0, 140e9, 0.01);
    CHECK_REL(c.params * 0.5, 35e9, 0.01);
    gs_ctx_destroy(ctx);
}

/* ---- [book] ch.4 problems ---- */
static void test_model_book_ch4(void) {
    gs_ctx *ctx = gst_ctx();
    gs_model_desc m;
    gs_model_counts c;
    gs_attention_cost a;
    double ratio;
    /* Q1: D = 4096, F = 4D, V = 32000, L = 64, N*H = D, MHA, int8 KV. The book's total L(3DF + 4DNH + D) + 2DV
       with D rounded to 4e3 gives 16.6e9 (it prints 16e9); with D = 4096 the same formula (and our 2 norms per
       layer) gives 17.4e9. Attention share 1/4; KV 2*L*N*H = 512 kB per token in int8. */
    memset(&m, 0, sizeof m);
    m.name = "ch4-q1";
    m.layers = 64; m.d_model = 4096; m.d_ff = 4 * 4096; m.heads = 32; m.vocab = 32000;
    c = counts(ctx, &m, 0);
    CHECK_REL(c.params, 64.0 * (3.0 * 4096 * 16384 + 4.0 * 4096 * 4096 + 2.0 * 4096) + 2.0 * 4096 * 32000 + 4096, 1e-12);
    BOOK(c.attn_fraction_params, 0.25, 1e-12);
    BOOK(c.kv_elems * 1.0, 512.0 * 1024, 1e-12);
    m.d_model = 4000; m.d_ff = 16000; m.heads = 40; m.head_dim = 100;
    CHECK_REL(counts(ctx, &m, 0).params, 16.6e9, 0.005);
    /* Q5: attention FLOPs equal the QKVO projections' at T = 2D (D = 4096: 8192) */
    memset(&m, 0, sizeof m);
    m.name = "ch4-q5";
    m.layers = 1; m.d_model = 4096; m.d_ff = 16384; m.heads = 32; m.vocab = 1;
    c = counts(ctx, &m, 8192);
    BOOK(c.attn_flops_fwd, 2.0 * c.params_attn, 1e-12);
    /* "attention / matmul FLOPs = T / 8D" with F = 4D, N = K, D = NH: equal at T = 8D; D = 8192: 64K tokens;
       Gemma-27B's D = 4608: 36,864 ("about 32k") */
    memset(&m, 0, sizeof m);
    m.name = "ch4-ratio";
    m.layers = 1; m.d_model = 8192; m.d_ff = 4 * 8192; m.heads = 64; m.vocab = 1;
    c = counts(ctx, &m, 65536);
    ratio = 12.0 * 65536 * 64 * 128 / (6.0 * (c.params_mlp + c.params_attn));
    BOOK(ratio, 1.0, 1e-12);
    BOOK(3.0 * c.attn_flops_fwd / (6.0 * (c.params_mlp + c.params_attn)), 1.0, 1e-12);
    m.d_model = 4608; m.d_ff = 4 * 4608; m.heads = 36;
    c = counts(ctx, &m, 8 * 4608);
    CHECK_REL(3.0 * c.attn_flops_fwd, 6.0 * (c.params_mlp + c.params_attn), 1e-12);
    /* Q4: attention intensity, fused: T*S*G/(T*G + S); prefill (S = T) T*G/(G+1), decode (T = 1) S*G/(G+S) -> G */
    CHECK_OK(gs_cost_attention(ctx, 2, 4096, 4096, 32, 8, 128, 2, true, &a));
    BOOK(a.intensity, 4096.0 * 4 / 5, 1e-12);
    CHECK_OK(gs_cost_attention(ctx, 2, 1, 1 << 20, 32, 8, 128, 2, true, &a));
    BOOK(a.intensity, 4.0, 1e-4);
    CHECK_OK(gs_cost_attention(ctx, 2, 1, 8192, 32, 8, 128, 2, true, &a));
    CHECK_REL(a.intensity, 8192.0 * 4 / (4 + 8192), 1e-12);
    /* [book] ch.7: MHA S*T/(S+T); prefill T/2, so compute-bound (> 240 on v5e) above T = 480 */
    CHECK_OK(gs_cost_attention(ctx, 1, 480, 480, 16, 16, 128, 2, true, &a));
    BOOK(a.intensity, 240.0, 1e-12);
    CHECK_OK(gs_cost_attention(ctx, 1, 1, 8192, 16, 16, 128, 2, true, &a));
    BOOK(a.intensity, 8192.0 / 8193.0, 1e-12);
    /* without fusion the [B,N,T,S] scores go through HBM four times: intensity 4BTSNH / (... + 8BNTS) < H/2 */
    CHECK_OK(gs_cost_attention(ctx, 1, 4096, 4096, 16, 16, 128, 2, false, &a));
    CHECK_REL(a.bytes, 2.0 * (2.0 * 4096 * 16 * 128 * 2) + 4.0 * 2 * 16 * 4096.0 * 4096, 1e-12);
    CHECK(a.intensity < 64.0);
    /* block rematerialisation: "6ND becomes about 8ND"; the checkpoint memory of ch.4: 2 * 20 * B*T * D * L =
       84 TB for 4M tokens, L = 64, D = 8192, and 4.2 TB with one checkpoint per layer (see test_model_memory) */
    /* Q7: DeepSeek v3, 2.79M H800-hours for 14.8T tokens at 37B active: 1.52e25 FLOPs available, 3.3e24 used,
       21.7% */
    {
        const gs_chip *h800 = gs_chip_find("h800");
        double avail = 2.79e6 * 3600.0 * h800->flops_fp8, used = 6.0 * 37e9 * 14.8e12;
        BOOK(avail, 1.52e25, 0.005);
        BOOK(used / avail, 0.217, 0.005);
        CHECK(gs_chip_intensity(h800, GS_MATH_FP8) > 0.0);
    }
    /* Q8: an MoE with int8 weights on v5e is compute-bound for B > 120 E / k tokens: 3840 for DeepSeek (E = 256,
       k = 8). The book's 120 = 240 / 2 uses W_hbm = 8.2e11; the table's 8.1e11 gives 121.6 and 3891 (1.3%). */
    {
        gs_run_desc r = run_of("v5e", GS_PHASE_DECODE, 64, 1024, 0, NULL, NULL);
        gs_model_step st;
        memset(&m, 0, sizeof m);
        m.name = "moe";
        m.layers = 2; m.d_model = 1024; m.d_ff = 512; m.heads = 8; m.vocab = 100; m.experts = 256; m.top_k = 8;
        r.param_bytes = 1;
        CHECK_OK(gs_model_step_cost(ctx, &m, &r, &st));
        BOOK(st.b_crit, 3840, 0.014);
        CHECK_REL(st.b_crit, 1.97e14 / 8.1e11 / 2.0 * 32.0, 1e-12);
    }
    gs_ctx_destroy(ctx);
}

/* ---- memory ([book] ch.4, ch.5, ch.6) ---- */
static void test_model_memory(void) {
    gs_ctx *ctx = gst_ctx();
    gs_model_step st;
    gs_run_desc r;
    gs_model_desc m;
    int64_t sizes[4];
    gs_role roles[4];
    /* ch.5 Q2: LLaMA 2-13B, 16M tokens, bf16 weights, f32 Adam, the three big MLP matmuls checkpointed:
       2 * L * B * (D + 2F) = 42 TB of activations (4.2e13) and 130 GB of weights and optimizer state */
    r = run_of("v5p", GS_PHASE_TRAIN, 16000, 1000, 0, NULL, NULL);
    CHECK_OK(gs_model_step_cost(ctx, preset("llama2-13b"), &r, &st));
    BOOK(st.mem.activations, 4.2e13, 0.005);
    BOOK(st.mem.params + st.mem.optimizer, 130e9, 0.01);
    CHECK(!st.mem.fits && st.mem.grads == 0.0);
    /* ch.5 Q3: the same with 3M tokens: 7.86e12 of activations, and about 8 TB in all */
    r.batch = 3000;
    CHECK_OK(gs_model_step_cost(ctx, preset("llama2-13b"), &r, &st));
    BOOK(st.mem.activations, 7.86e12, 0.005);
    BOOK(st.mem.total, 8e12, 0.01);
    /* and 393 TB of HBM on a v5p 16x16x16 */
    BOOK(4096.0 * gs_chip_find("v5p")->hbm_capacity, 393e12, 0.001);
    /* ch.6: LLaMA 3-70B with 4M tokens (1000 x 4000 here: the book multiplies by 4e6), 4 checkpoints per layer:
       parameters 140 GB, optimizer 560 GB, checkpoints 20.9 TB, total 21.6 TB: 225 v5p chips at least; on 8960
       chips 2.4 GB each */
    sizes[0] = 16; sizes[1] = 20; sizes[2] = 28;
    roles[0] = roles[1] = roles[2] = GS_ROLE_FSDP;
    r = run_of("v5p", GS_PHASE_TRAIN, 1000, 4000, 3, sizes, roles);
    r.remat = GS_REMAT_CHECKPOINTS;
    r.checkpoints = 4;
    CHECK_OK(gs_model_step_cost(ctx, preset("llama3-70b"), &r, &st));
    BOOK(st.mem.params * 8960, 140e9, 0.01);
    BOOK(st.mem.optimizer * 8960, 560e9, 0.01);
    BOOK(st.mem.activations * 8960, 20.9e12, 0.005);
    BOOK(st.mem.total * 8960, 21.6e12, 0.005);
    BOOK(st.mem.total * 8960 / 96e9, 225, 0.01);
    BOOK(st.mem.total, 2.4e9, 0.01);
    CHECK(st.mem.fits && st.devices == 8960);
    /* ch.5: with pure data parallelism every chip holds 10 bytes per parameter: at most HBM / 10 parameters,
       9.6e9 on a v5p ("about 9B") */
    sizes[0] = 8;
    roles[0] = GS_ROLE_DATA;
    r = run_of("v5p", GS_PHASE_TRAIN, 8, 256, 1, sizes, roles);
    CHECK_OK(gs_model_step_cost(ctx, preset("llama2-7b"), &r, &st));
    CHECK_REL(st.mem.params + st.mem.optimizer, 10.0 * counts(ctx, preset("llama2-7b"), 0).params, 1e-12);
    BOOK(gs_chip_find("v5p")->hbm_capacity / 10.0, 9.6e9, 0.001);
    /* ch.4: no rematerialisation keeps about 20 intermediates: 2 * 20 * 4M * 8192 * 64 = 84 TB; one per layer
       4.2 TB (a model with L = 64, D = 8192) */
    memset(&m, 0, sizeof m);
    m.name = "ch4-remat";
    m.layers = 64; m.d_model = 8192; m.d_ff = 32768; m.heads = 64; m.vocab = 32000;
    r = run_of("v5p", GS_PHASE_TRAIN, 1000, 4000, 0, NULL, NULL);
    r.remat = GS_REMAT_NONE;
    CHECK_OK(gs_model_step_cost(ctx, &m, &r, &st));
    BOOK(st.mem.activations, 84e12, 0.005);
    r.remat = GS_REMAT_BLOCK;
    CHECK_OK(gs_model_step_cost(ctx, &m, &r, &st));
    BOOK(st.mem.activations, 4.2e12, 0.005);
    /* every training step also reports both extremes */
    CHECK_REL(st.mem.activations_no_remat, 2.0 * 20 * 4e6 * 8192 * 64, 1e-12);
    CHECK_REL(st.mem.activations_block, st.mem.activations, 1e-12);
    /* and the FLOPs go from 6N to 8N per token */
    CHECK_REL(st.flops / st.model_flops, 8.0 / 6.0, 1e-12);
    /* ch.7: LLaMA 2-13B's KV cache for one 8192-token sequence in bf16: 6.7 GB; an 8k prefill's activations
       8192 * 5120 * 2 = 80 MB */
    r = run_of("v5e", GS_PHASE_DECODE, 1, 8192, 0, NULL, NULL);
    CHECK_OK(gs_model_step_cost(ctx, preset("llama2-13b"), &r, &st));
    BOOK(st.mem.kv_cache, 6.7e9, 0.005);
    /* ch.8: LLaMA 3-70B int8 KV is 160 kB per token; 32k tokens 5.3 GB per sequence; 240 of them 1.3 TB, and
       with the weights (70e9 + 1.3e12) / 16e9 = 86 v5e chips */
    r = run_of("v5e", GS_PHASE_DECODE, 240, 32768, 0, NULL, NULL);
    r.kv_bytes = 1;
    r.param_bytes = 1;
    CHECK_OK(gs_model_step_cost(ctx, preset("llama3-70b"), &r, &st));
    BOOK(counts(ctx, preset("llama3-70b"), 0).kv_elems, 160e3, 0.03);
    BOOK(st.mem.kv_cache / 240, 5.3e9, 0.02);
    BOOK(st.mem.kv_cache, 1.3e12, 0.04);
    BOOK((st.mem.params + st.mem.kv_cache) / 16e9, 86, 0.04);
    /* ch.8: batch 32 of 8192 tokens in int8: KV 41.9 GB, 112 GB in all, 7 chips at least (a 4x2) */
    r.batch = 32;
    r.seq = 8192;
    CHECK_OK(gs_model_step_cost(ctx, preset("llama3-70b"), &r, &st));
    BOOK(st.mem.kv_cache, 41.9e9, 0.03);
    BOOK(st.mem.params + st.mem.kv_cache, 112e9, 0.02);
    BOOK(ceil((st.mem.params + st.mem.kv_cache) / 16e9), 8, 0);
    gs_ctx_destroy(ctx);
}

/* ---- training step times ([book] ch.5, ch.6) ---- */
static void test_model_training(void) {
    gs_ctx *ctx = gst_ctx();
    gs_model_step st;
    gs_run_desc r;
    gs_model_counts c;
    gs_mlp_desc md;
    gs_mlp_cost mc;
    int64_t sizes[4];
    gs_role roles[4];
    double steps;
    const gs_chip *v5p = gs_chip_find("v5p");
    /* ch.6: 6 * 70e9 = 4.2e11 FLOPs per token (1 ms on one v5p); 15T tokens: 6.3e24 FLOPs; 435 years on one
       chip; 8960 v5p chips at 40% MFU: 3.8e6 s, 44 days */
    c = counts(ctx, preset("llama3-70b"), 0);
    BOOK(c.flops_train, 4.2e11, 0.01);
    BOOK(c.flops_train / 4.59e14, 1e-3, 0.1);
    BOOK(c.flops_train * 15e12, 6.3e24, 0.01);
    BOOK(c.flops_train * 15e12 / 4.59e14 / (365.25 * 86400), 435, 0.01);
    sizes[0] = 16; sizes[1] = 20; sizes[2] = 28;
    roles[0] = GS_ROLE_FSDP; roles[1] = GS_ROLE_FSDP; roles[2] = GS_ROLE_FSDP;
    r = run_of("v5p", GS_PHASE_TRAIN, 1024, 4096, 3, sizes, roles);
    r.efficiency = 0.4;
    r.no_attention_flops = true;
    CHECK_OK(gs_model_step_cost(ctx, preset("llama3-70b"), &r, &st));
    steps = 15e12 / st.tokens;
    BOOK(st.t_math * steps, 3.8e6, 0.01);
    BOOK(st.t_math * steps / 86400, 44, 0.01);
    /* ch.6: 4M tokens on 8960 chips of pure FSDP is 468 tokens per chip, under C / (3 W_bi) = 850: ICI-bound
       (at the peak rate the book's thresholds assume) */
    r.efficiency = 0;
    CHECK_OK(gs_model_step_cost(ctx, preset("llama3-70b"), &r, &st));
    BOOK(st.tokens / 8960, 468, 0.001);
    BOOK(v5p->flops_bf16 / (2.0 * v5p->ici_bw_uni) / 3.0, 850, 0.001);
    CHECK(st.bound == GS_BOUND_ICI && st.t_ici > st.t_math);
    /* ch.6: FSDP + tensor stays compute-bound above 2 * 2550^2 / F = 453 per chip; X_opt = sqrt(2BN/F) = 1618
       (gs_cost_mlp with M_X = 2, M_Y = 1) */
    memset(&md, 0, sizeof md);
    md.batch = 4194304; md.d_model = 8192; md.d_ff = 28672; md.x = 2240; md.y = 4; md.axes_x = 2; md.axes_y = 1;
    CHECK_OK(gs_cost_mlp(ctx, gs_chip_find("v5p"), GS_PARALLEL_FSDP_TENSOR, &md, &mc));
    BOOK(mc.threshold, 453, 0.003);
    BOOK(mc.x_opt, 1618, 0.002);
    /* 2048-way FSDP (two axes) and 4-way tensor: compute-bound in the model too */
    sizes[0] = 64; sizes[1] = 32; sizes[2] = 4;
    roles[0] = GS_ROLE_FSDP; roles[1] = GS_ROLE_FSDP; roles[2] = GS_ROLE_TENSOR;
    r = run_of("v5p", GS_PHASE_TRAIN, 1024, 4096, 3, sizes, roles);
    CHECK_OK(gs_model_step_cost(ctx, preset("llama3-70b"), &r, &st));
    CHECK(st.bound == GS_BOUND_COMPUTE);
    CHECK(st.mfu > 0.8 && st.mfu <= 1.0);
    /* ch.5 Q3: LLaMA 2-13B, 3M tokens on a v5p 16x16x16 of FSDP: the least batch is 850 * 4096 = 3.48M, so
       ICI-bound; FSDP + tensor needs B/N > 2 * 2550^2 / F = 940 */
    sizes[0] = 16; sizes[1] = 16; sizes[2] = 16;
    roles[0] = roles[1] = roles[2] = GS_ROLE_FSDP;
    r = run_of("v5p", GS_PHASE_TRAIN, 96, 32768, 3, sizes, roles);
    r.no_attention_flops = true;   /* "roofline FLOPs only, attention ignored" */
    CHECK_OK(gs_model_step_cost(ctx, preset("llama2-13b"), &r, &st));
    BOOK(v5p->flops_bf16 / (2.0 * v5p->ici_bw_uni) / 3.0 * 4096, 3.48e6, 0.001);
    CHECK(st.bound == GS_BOUND_ICI);
    md.batch = 3145728; md.d_model = 5120; md.d_ff = 13824; md.x = 1024; md.y = 4; md.axes_x = 2; md.axes_y = 1;
    CHECK_OK(gs_cost_mlp(ctx, gs_chip_find("v5p"), GS_PARALLEL_FSDP_TENSOR, &md, &mc));
    BOOK(mc.threshold, 940, 0.003);
    /* ch.5: LLaMA 3-70B, 16M tokens over 16e6 / (2550 / 3) = 18,823 chips at 50% MFU: about 17 days; DeepSeek's
       40M-token batch over 850 per chip: about 47,000 chips */
    {
        double per_chip = v5p->flops_bf16 / (2.0 * v5p->ici_bw_uni) / 3.0, chips = 16e6 / per_chip;
        BOOK(chips, 18823, 0.001);
        BOOK(c.flops_train * 15e12 / (chips * v5p->flops_bf16 * 0.5) / 86400, 17, 0.015);   /* "about 17 days" */
        BOOK(40e6 / per_chip, 47000, 0.002);
    }
    /* a DCN axis: pure data parallelism across 2 slices with 16384 tokens each, under the 75,000-per-pod
       threshold: DCN-bound; the all-reduce moves 2 * (1/2) * the bf16 gradients per chip, a host's 4 chips
       sharing its 2.5e10 B/s */
    sizes[0] = 2;
    roles[0] = GS_ROLE_DATA;
    r = run_of("v5p", GS_PHASE_TRAIN, 8, 2048, 1, sizes, roles);
    r.axes[0].dcn = true;
    CHECK_OK(gs_model_step_cost(ctx, preset("llama3-8b"), &r, &st));
    CHECK(st.bound == GS_BOUND_DCN && st.t_ici == 0.0);
    c = counts(ctx, preset("llama3-8b"), 0);
    CHECK_REL(st.t_dcn, 2.0 * 0.5 * (c.params - c.params_norm) * 2.0 * 4 / 2.5e10, 1e-12);
    gs_ctx_destroy(ctx);
}

/* ---- inference ([book] ch.7, ch.8) ---- */
static void test_model_inference(void) {
    gs_ctx *ctx = gst_ctx();
    const gs_chip *v5e = gs_chip_find("v5e");
    gs_decode_bound db;
    gs_model_step st;
    gs_run_desc r;
    gs_mlp_desc md;
    gs_mlp_cost mc;
    gs_ws2d_cost ws;
    int64_t sizes[4];
    gs_role roles[4];
    const int batches[6] = {1, 8, 16, 32, 64, 240};
    const double t13[6] = {4.98, 12.13, 20.30, 36.65, 69.33, 249.09};
    const double q13[6] = {200.61, 659.30, 787.99, 873.21, 923.13, 963.53};
    const double t13g[6] = {4.17, 5.60, 7.23, 10.50, 17.04, 52.99};
    gs_model_counts cnt;
    double prefill_s = 0.0;
    int i;
    /* ch.7 quiz: 30B dense, int8 weights, bf16 FLOPs, 100 kB KV per token, 8192 context, v5e 4x4: batch 4
       2.5 ms; batch 256: 21 ms */
    CHECK_OK(gs_cost_decode_bound(ctx, v5e, 16, 4, 100e3 * 8192, 30e9, 1, GS_MATH_BF16, &db));
    BOOK(db.seconds, 2.5e-3, 0.03);   /* (4 * 819e6 + 30e9) / (16 * 8.1e11) = 2.57 ms, printed as 2.5 */
    CHECK_OK(gs_cost_decode_bound(ctx, v5e, 16, 256, 100e3 * 8192, 30e9, 1, GS_MATH_BF16, &db));
    BOOK(db.seconds, 21e-3, 0.03);
    CHECK(db.t_math > db.t_weights);
    /* ch.7 tables: LLaMA 2-13B on 8 v5e in bf16 at 8192 context. The book divides bytes by a bandwidth it
       calls 6.5 TiB/s; the step times' ratios do not depend on it, so they are checked against the model's
       own ratios, and the throughputs as batch / step */
    for (i = 0; i < 6; i++) {
        gs_model_step s1;
        r = run_of("v5e", GS_PHASE_DECODE, batches[i], 8192, 0, NULL, NULL);
        r.n_axes = 1; r.axes[0].size = 8; r.axes[0].role = GS_ROLE_TENSOR;
        CHECK_OK(gs_model_step_cost(ctx, preset("llama2-13b"), &r, &st));
        r.batch = 1;
        CHECK_OK(gs_model_step_cost(ctx, preset("llama2-13b"), &r, &s1));
        /* within 1.2%: the model also reads and writes the matmuls' activations, which the book leaves out */
        BOOK(st.t_hbm / s1.t_hbm, t13[i] / t13[0], 0.012);
        BOOK(batches[i] / (t13[i] * 1e-3), q13[i], 0.002);
        /* with a KV cache 5x smaller and the same parameters (the book's thought experiment, so through the
           formula itself): 26 GB of bf16 weights, 6.7e9 / 5 bytes of KV per sequence */
        CHECK_OK(gs_cost_decode_bound(ctx, gs_chip_find("v5e"), 8, batches[i], 6.71e9 / 5, 13e9, 2, GS_MATH_BF16, &db));
        {
            gs_decode_bound d1;
            CHECK_OK(gs_cost_decode_bound(ctx, gs_chip_find("v5e"), 8, 1, 6.71e9 / 5, 13e9, 2, GS_MATH_BF16, &d1));
            BOOK(db.seconds / d1.seconds, t13g[i] / t13g[0], 0.005);
        }
    }
    /* ch.8: LLaMA 3-70B, batch 32 of 8192 tokens, int8 weights and KV, bf16 FLOPs, tensor-parallel on a v5e 4x2:
       about 17 ms per step, 1882 tokens/s, 235 per chip; on a 4x4 half: 8.5 ms */
    sizes[0] = 4; sizes[1] = 2;
    roles[0] = GS_ROLE_TENSOR; roles[1] = GS_ROLE_TENSOR;
    r = run_of("v5e", GS_PHASE_DECODE, 32, 8192, 2, sizes, roles);
    r.param_bytes = 1;
    r.kv_bytes = 1;
    CHECK_OK(gs_model_step_cost(ctx, preset("llama3-70b"), &r, &st));
    BOOK(st.seconds, 17e-3, 0.04);
    BOOK(st.tokens_per_s, 1882, 0.04);
    BOOK(st.tokens_per_s_per_chip, 235, 0.04);
    CHECK(st.bound == GS_BOUND_HBM);
    /* the book's critical batch for int8 weights and bf16 FLOPs: 120 (121.6 with 8.1e11) */
    BOOK(st.b_crit, 120, 0.014);
    /* ch.8's ICI check: Y > 2 F / (C/W_ici) = 22 with v5p's 2550; on v5e C/W_ici is 2189, so Y_max = 26.2
       (the book's erratum, see docs/cost.md) */
    BOOK(st.tensor_max, 26.2, 0.002);
    BOOK(v5e->flops_bf16 / (2.0 * v5e->ici_bw_uni), 2189, 0.0002);
    md.batch = 32; md.d_model = 8192; md.d_ff = 28672; md.x = 1; md.y = 8; md.axes_x = 1; md.axes_y = 2;
    CHECK_OK(gs_cost_mlp(ctx, v5e, GS_PARALLEL_TENSOR, &md, &mc));
    BOOK(mc.threshold, 26.2, 0.002);
    sizes[0] = 4; sizes[1] = 4;
    r = run_of("v5e", GS_PHASE_DECODE, 32, 8192, 2, sizes, roles);
    r.param_bytes = 1;
    r.kv_bytes = 1;
    CHECK_OK(gs_model_step_cost(ctx, preset("llama3-70b"), &r, &st));
    BOOK(st.seconds, 8.5e-3, 0.06);
    /* ch.7: "Y > F / (B beta)": F = 16384, B = 32, beta = W_hbm / W_ici ~ 8: 64-way; the exact beta on v5e
       is 8.1e11 / 9e10 = 9 (56.9); ch.8: B = 64, F = 28672: 56 (49.8 exact) */
    r = run_of("v5e", GS_PHASE_DECODE, 32, 8192, 0, NULL, NULL);
    {
        gs_model_desc g = *preset("llama3-70b");
        g.d_ff = 16384;
        CHECK_OK(gs_model_step_cost(ctx, &g, &r, &st));
        BOOK(st.tensor_max_decode * 9.0 / 8.0, 64, 1e-12);
        r.batch = 64;
        CHECK_OK(gs_model_step_cost(ctx, preset("llama3-70b"), &r, &st));
        BOOK(st.tensor_max_decode * 9.0 / 8.0, 56, 0.001);
    }
    /* ch.8: prefill of 8192 tokens on 16 v5e at 40% MFU: 2 * 70e9 * 8192 / (16 * 1.97e14 * 0.4) = 0.91 s */
    sizes[0] = 4; sizes[1] = 4;
    r = run_of("v5e", GS_PHASE_PREFILL, 1, 8192, 2, sizes, roles);
    r.efficiency = 0.4;
    r.no_attention_flops = true;
    r.param_bytes = 1;
    CHECK_OK(gs_model_step_cost(ctx, preset("llama3-70b"), &r, &st));
    BOOK(st.seconds, 0.91, 0.015);
    CHECK(st.bound == GS_BOUND_COMPUTE);
    prefill_s = st.seconds;
    /* ch.8: the smallest v5e slices for LLaMA 3-70B weights: bf16 8.75 chips (4x4), int8 4.38 (4x2), int4 2.19
       (2x2; the book prints 2.81 from its 45 GB) */
    {
        double p70 = 0.0;
        gs_model_count(ctx, preset("llama3-70b"), 0, &cnt);
        p70 = cnt.params;
        BOOK(p70 * 2 / v5e->hbm_capacity, 8.75, 0.01);
        BOOK(p70 * 1 / v5e->hbm_capacity, 4.38, 0.01);
        CHECK_REL(p70 * 0.5 / v5e->hbm_capacity, 2.2, 0.01);
    }
    /* ch.8: a full v5e's HBM read takes 16e9 / 8.2e11 = 19 ms (19.75 with 8.1e11); 512 steps: about 9-10 s */
    BOOK(v5e->hbm_capacity / v5e->hbm_bw, 19e-3, 0.04);
    /* ch.8 disaggregated serving: P / prefill = 32 G / (decode step * 512), so P = 3 G with the 0.91 s prefill
       and the 19 ms decode step (2.9 with the model's 19.75 ms) */
    BOOK(prefill_s * 32 / (v5e->hbm_capacity / v5e->hbm_bw * 512), 3.0, 0.05);
    /* ch.7 Q7: 2-D weight-stationary beats 1-D tensor parallelism above N = 128 * (3/4)^2 chips for F = 4D,
       which is 72 (the book prints 81: an arithmetic slip, see docs/cost.md); its comms are
       sqrt(128) B D / (sqrt(N) W) = 11.3 B D / (sqrt(N) W) */
    CHECK_OK(gs_cost_ws2d(ctx, v5e, 64, 8192, 32768, 256, &ws));
    BOOK(ws.n_crossover, 72, 0);
    BOOK(ws.t_2d, sqrt(128.0) * 64 * 8192 / (16.0 * 9e10), 1e-12);
    BOOK(ws.x_opt, sqrt(256.0 / 8), 1e-12);
    CHECK_OK(gs_cost_ws2d(ctx, v5e, 64, 8192, 32768, 72, &ws));
    CHECK_REL(ws.t_1d, ws.t_2d, 1e-12);
    /* 2-D weight-stationary as a run: 16 ways of d_model, 16 of d_ff on a 16x16 v5e, bigger batch: less ICI
       time than 256-way 1-D tensor parallelism */
    {
        gs_model_step s1;
        sizes[0] = 16; sizes[1] = 16;
        roles[0] = GS_ROLE_TENSOR_2D; roles[1] = GS_ROLE_TENSOR;
        r = run_of("v5e", GS_PHASE_DECODE, 512, 2048, 2, sizes, roles);
        CHECK_OK(gs_model_step_cost(ctx, preset("llama3-405b"), &r, &st));
        roles[0] = GS_ROLE_TENSOR;
        r = run_of("v5e", GS_PHASE_DECODE, 512, 2048, 2, sizes, roles);
        CHECK_OK(gs_model_step_cost(ctx, preset("llama3-405b"), &r, &s1));
        CHECK(st.t_ici < s1.t_ici);
    }
    /* ch.8 Q1: LLaMA 3-405B forward FLOPs per token about 2 * 405e9 */
    BOOK(counts(ctx, preset("llama3-405b"), 0).flops_fwd, 8.1e11, 0.005);
    /* ch.8 prices: FLOPs per dollar, H100 3.3e17, v5p 3.9e17, v5e 5.8e17 */
    BOOK(gs_chip_find("h100")->flops_bf16 * 3600 / gs_chip_find("h100")->price_per_hour, 3.3e17, 0.01);
    BOOK(gs_chip_find("v5p")->flops_bf16 * 3600 / gs_chip_find("v5p")->price_per_hour, 3.9e17, 0.01);
    BOOK(v5e->flops_bf16 * 3600 / v5e->price_per_hour, 5.9e17, 0.01);
    gs_ctx_destroy(ctx);
}

/* ---- GPUs, pipeline, experts, sequence ---- */
static void test_model_strategies(void) {
    gs_ctx *ctx = gst_ctx();
    gs_model_step st, s2;
    gs_run_desc r;
    int64_t sizes[4];
    gs_role roles[4];
    /* H100: 8-way tensor inside the NVLink domain, 4-way data over InfiniBand */
    sizes[0] = 4; sizes[1] = 8;
    roles[0] = GS_ROLE_DATA; roles[1] = GS_ROLE_TENSOR;
    r = run_of("h100", GS_PHASE_TRAIN, 64, 4096, 2, sizes, roles);
    r.axes[0].dcn = true;
    CHECK_OK(gs_model_step_cost(ctx, preset("llama3-8b"), &r, &st));
    CHECK(st.t_ici > 0.0 && st.t_dcn > 0.0);
    /* prefill with 8-way tensor parallelism inside the NVLink domain: per layer an AllGather and a
       ReduceScatter of [tokens, D] around attention and the MLP, and one pair around the vocabulary-split
       embedding and output layer, each (7/8) V / W_nvlink with V the gathered bf16 bytes (every GPU reaches
       every other through the switches) */
    sizes[0] = 8;
    roles[0] = GS_ROLE_TENSOR;
    r = run_of("h100", GS_PHASE_PREFILL, 1, 8192, 1, sizes, roles);
    CHECK_OK(gs_model_step_cost(ctx, preset("llama3-8b"), &r, &s2));
    CHECK_REL(s2.t_ici, (32.0 * 4.0 + 2.0) * (7.0 / 8.0) * (8192.0 * 4096 * 2) / 4.5e11, 1e-12);
    CHECK(s2.t_dcn == 0.0);
    /* more than 8 GPUs on NVLink axes: refused */
    sizes[0] = 4; sizes[1] = 8;
    roles[0] = GS_ROLE_DATA; roles[1] = GS_ROLE_TENSOR;
    r = run_of("h100", GS_PHASE_TRAIN, 64, 4096, 2, sizes, roles);
    r.axes[0].dcn = false;
    CHECK_ERR(gs_model_step_cost(ctx, preset("llama3-8b"), &r, &st), GS_ERR_INVALID_ARG, "NVLink domain");
    /* pipeline: 4 stages with 16 microbatches add a bubble of 3/16 */
    sizes[0] = 4;
    roles[0] = GS_ROLE_PIPELINE;
    r = run_of("v5p", GS_PHASE_TRAIN, 64, 4096, 1, sizes, roles);
    r.microbatches = 16;
    CHECK_OK(gs_model_step_cost(ctx, preset("llama3-8b"), &r, &st));
    CHECK_REL(st.t_bubble, (st.seconds - st.t_bubble) * 3.0 / 16.0, 1e-12);
    /* experts: Mixtral on 8 expert ways holds a quarter... an eighth of the expert weights per chip */
    sizes[0] = 8;
    roles[0] = GS_ROLE_EXPERT;
    r = run_of("v5p", GS_PHASE_TRAIN, 64, 4096, 1, sizes, roles);
    CHECK_OK(gs_model_step_cost(ctx, preset("mixtral-8x7b"), &r, &st));
    {
        gs_model_counts c = counts(ctx, preset("mixtral-8x7b"), 0);
        CHECK_REL(st.mem.params, 2.0 * ((c.params - c.params_mlp) + c.params_mlp / 8.0), 1e-12);
    }
    CHECK(st.t_ici > 0.0);
    CHECK_ERR(gs_model_step_cost(ctx, preset("llama3-8b"), &r, &st), GS_ERR_INVALID_ARG, "mixture-of-experts");
    /* sequence parallelism gathers keys and values: more ICI than the same ways of data parallelism in the
       forward pass, the same memory */
    sizes[0] = 8;
    roles[0] = GS_ROLE_SEQUENCE;
    r = run_of("v5p", GS_PHASE_PREFILL, 1, 65536, 1, sizes, roles);
    CHECK_OK(gs_model_step_cost(ctx, preset("llama3-8b"), &r, &st));
    CHECK(st.t_ici > 0.0);
    roles[0] = GS_ROLE_DATA;
    r = run_of("v5p", GS_PHASE_PREFILL, 8, 8192, 1, sizes, roles);
    CHECK_OK(gs_model_step_cost(ctx, preset("llama3-8b"), &r, &s2));
    CHECK(s2.t_ici == 0.0);
    /* cost per million tokens: price * chips * seconds / 3600 / tokens * 1e6 */
    CHECK_REL(s2.cost_per_mtok, 4.2 * 8 * s2.seconds / 3600.0 / s2.tokens * 1e6, 1e-12);
    gs_ctx_destroy(ctx);
}

static void test_model_bad_input(void) {
    gs_ctx *ctx = gst_ctx();
    gs_model_desc m = *preset("llama3-8b");
    gs_run_desc r;
    gs_model_step st;
    gs_model_counts c;
    gs_chip chip;
    m.kv_heads = 5;
    CHECK_ERR(gs_model_check(ctx, &m), GS_ERR_INVALID_ARG, "does not divide");
    m = *preset("llama3-8b");
    m.layers = 0;
    CHECK_ERR(gs_model_count(ctx, &m, 1, &c), GS_ERR_INVALID_ARG, "must be > 0");
    m = *preset("llama3-8b");
    m.top_k = 2;
    CHECK_ERR(gs_model_check(ctx, &m), GS_ERR_INVALID_ARG, "needs experts");
    m.experts = 4; m.top_k = 5;
    CHECK_ERR(gs_model_check(ctx, &m), GS_ERR_INVALID_ARG, "exceeds experts");
    m = *preset("llama3-8b");
    m.d_model = 3000000000LL; m.d_ff = 3000000000LL;
    CHECK_ERR(gs_model_check(ctx, &m), GS_ERR_INVALID_ARG, "too large");
    {
        const gs_model_desc *found = NULL;
        CHECK_ERR(gs_model_preset_lookup(ctx, "llama9", &found), GS_ERR_INVALID_ARG, "known: gpt3-175b");
        CHECK(found == NULL);
    }
    r = run_of("v5e", GS_PHASE_TRAIN, 0, 10, 0, NULL, NULL);
    CHECK_ERR(gs_model_step_cost(ctx, preset("llama3-8b"), &r, &st), GS_ERR_INVALID_ARG, "must be > 0");
    r = run_of("v5e", GS_PHASE_TRAIN, 1, 10, 0, NULL, NULL);
    r.n_axes = 1; r.axes[0].size = 4;
    CHECK_ERR(gs_model_step_cost(ctx, preset("llama3-8b"), &r, &st), GS_ERR_INVALID_ARG, "no role");
    r.axes[0].role = GS_ROLE_TENSOR; r.axes[0].size = 512;
    CHECK_ERR(gs_model_step_cost(ctx, preset("llama3-8b"), &r, &st), GS_ERR_INVALID_ARG, "pod");
    r.axes[0].size = 4; r.efficiency = 1.5;
    CHECK_ERR(gs_model_step_cost(ctx, preset("llama3-8b"), &r, &st), GS_ERR_INVALID_ARG, "efficiency");
    r.efficiency = 0; r.param_bytes = -1;
    CHECK_ERR(gs_model_step_cost(ctx, preset("llama3-8b"), &r, &st), GS_ERR_INVALID_ARG, "param_bytes");
    r.param_bytes = 0; r.remat = GS_REMAT_CHECKPOINTS;
    CHECK_ERR(gs_model_step_cost(ctx, preset("llama3-8b"), &r, &st), GS_ERR_INVALID_ARG, "checkpoints");
    r.remat = GS_REMAT_DEFAULT; r.axes[0].role = GS_ROLE_TENSOR_2D;
    CHECK_ERR(gs_model_step_cost(ctx, preset("llama3-8b"), &r, &st), GS_ERR_UNSUPPORTED, "tensor2d");
    r.axes[0].role = GS_ROLE_PIPELINE; r.axes[0].size = 64;
    CHECK_ERR(gs_model_step_cost(ctx, preset("llama3-8b"), &r, &st), GS_ERR_INVALID_ARG, "layers");
    r = run_of("h100", GS_PHASE_TRAIN, 1, 10, 0, NULL, NULL);
    r.math = GS_MATH_INT8;
    CHECK_ERR(gs_model_step_cost(ctx, preset("llama3-8b"), &r, &st), GS_ERR_INVALID_ARG, "flops_int8");
    /* chip files */
    CHECK_OK(gs_chip_parse(ctx, "base = v5e\nname = v5e-lite # a comment\nhbm_capacity = 8e9\npod = 8x8\nwrap = never\n", &chip));
    CHECK(strcmp(chip.name, "v5e-lite") == 0 && chip.hbm_capacity == 8e9 && chip.pod[0] == 8 && chip.wrap == GS_WRAP_RULE_NEVER);
    CHECK(chip.flops_bf16 == 1.97e14 && chip.price_per_hour == 1.2);
    CHECK_OK(gs_chip_parse(ctx, "name = x\nhbm_bw = 1e12\nflops_bf16 = 1e15\nnvlink_domain = 72\nnvlink_bw_uni = 9e11\n", &chip));
    CHECK(chip.nvlink_domain == 72 && chip.torus_rank == 0);
    CHECK_ERR(gs_chip_parse(ctx, "name = x\nbogus = 1\n", &chip), GS_ERR_PARSE, "line 2: unknown field 'bogus'");
    CHECK_ERR(gs_chip_parse(ctx, "name = x\nname = y\n", &chip), GS_ERR_PARSE, "given twice");
    CHECK_ERR(gs_chip_parse(ctx, "name = x\nhbm_bw = fast\n", &chip), GS_ERR_PARSE, "not a finite number");
    CHECK_ERR(gs_chip_parse(ctx, "name = x\nici_links = 2.5\n", &chip), GS_ERR_PARSE, "whole number");
    CHECK_ERR(gs_chip_parse(ctx, "name = x\nhbm_bw\n", &chip), GS_ERR_PARSE, "key = value");
    CHECK_ERR(gs_chip_parse(ctx, "hbm_bw = 1\n", &chip), GS_ERR_PARSE, "no `name");
    CHECK_ERR(gs_chip_parse(ctx, "name = x\nhbm_bw = 1e12\n", &chip), GS_ERR_INVALID_ARG, "flops_bf16 must be > 0");
    CHECK_ERR(gs_chip_parse(ctx, "name = x\nbase = v5e\n", &chip), GS_ERR_PARSE, "before every other field");
    CHECK_ERR(gs_chip_parse(ctx, "base = v9\n", &chip), GS_ERR_PARSE, "unknown base chip");
    CHECK_ERR(gs_chip_parse(ctx, "name = x\npod = 4by4\n", &chip), GS_ERR_PARSE, "pod");
    CHECK_ERR(gs_chip_parse(ctx, "name = x\nwrap = sometimes\n", &chip), GS_ERR_PARSE, "wrap");
    CHECK_ERR(gs_cost_attention(ctx, 1, 1, 1, 6, 4, 1, 2, true, NULL), GS_ERR_INVALID_ARG, "out is NULL");
    {
        gs_attention_cost a;
        CHECK_ERR(gs_cost_attention(ctx, 1, 1, 1, 6, 4, 1, 2, true, &a), GS_ERR_INVALID_ARG, "does not divide");
        CHECK_ERR(gs_cost_attention(ctx, 0, 1, 1, 6, 3, 1, 2, true, &a), GS_ERR_INVALID_ARG, "must be > 0");
    }
    gs_ctx_destroy(ctx);
}

/* ---- the planner ---- */
static int smallest_fit(gs_ctx *ctx, double bytes) {
    /* the smallest power-of-two v5e slice that serves LLaMA 3-70B decode (batch 1, 8k context) */
    gs_run_desc r = run_of("v5e", GS_PHASE_DECODE, 1, 8192, 0, NULL, NULL);
    int64_t d;
    r.param_bytes = bytes;
    r.kv_bytes = bytes;
    for (d = 1; d <= 256; d *= 2) {
        gs_plan *p = NULL;
        CHECK_OK(gs_model_plan(ctx, preset("llama3-70b"), &r, d, &p));
        if (p && gs_plan_fits(p)) return (int)d;
    }
    return -1;
}

static void test_model_planner(void) {
    gs_ctx *ctx = gst_ctx();
    gs_run_desc r;
    gs_plan *p = NULL;
    const gs_model_step *best;
    const gs_run_desc *br;
    double tensor = 1, fsdp = 1;
    int i;
    /* [book] ch.8 table: the smallest v5e slices for LLaMA 3-70B: bf16 4x4, int8 4x2, int4 2x2 */
    BOOK(smallest_fit(ctx, 2), 16, 0);
    BOOK(smallest_fit(ctx, 1), 8, 0);
    BOOK(smallest_fit(ctx, 0.5), 4, 0);
    /* nothing fits on 4 chips in int8: the best is the smallest shortfall */
    r = run_of("v5e", GS_PHASE_DECODE, 32, 8192, 0, NULL, NULL);
    r.param_bytes = 1;
    r.kv_bytes = 1;
    CHECK_OK(gs_model_plan(ctx, preset("llama3-70b"), &r, 4, &p));
    CHECK(!gs_plan_fits(p));
    CHECK_REL(gs_plan_shortfall(p), gs_plan_step(p, 0)->mem.total - 16e9, 1e-12);
    CHECK(strstr(gs_plan_reason(p), "nothing fits") != NULL);
    for (i = 1; i < gs_plan_num_candidates(p); i++) CHECK(gs_plan_step(p, i)->mem.total >= gs_plan_step(p, 0)->mem.total);
    /* [book] ch.6: LLaMA 3-70B, 4M tokens (1024 x 4096) on a full v5p pod: mixed FSDP and 4-way tensor
       parallelism (with some sequence parallelism), compute-bound; pure FSDP is ICI-bound */
    r = run_of("v5p", GS_PHASE_TRAIN, 1024, 4096, 0, NULL, NULL);
    CHECK_OK(gs_model_plan(ctx, preset("llama3-70b"), &r, 8192, &p));
    CHECK(gs_plan_fits(p));
    best = gs_plan_step(p, 0);
    br = gs_plan_run(p, 0);
    for (i = 0; i < br->n_axes; i++) {
        if (br->axes[i].role == GS_ROLE_TENSOR) tensor *= (double)br->axes[i].size;
        if (br->axes[i].role == GS_ROLE_FSDP) fsdp *= (double)br->axes[i].size;
    }
    BOOK(tensor, 4, 0);
    CHECK(fsdp >= 1024);
    CHECK(best->bound == GS_BOUND_COMPUTE);
    for (i = 1; i < gs_plan_num_candidates(p); i++)
        if (gs_plan_step(p, i)->mem.fits) CHECK(gs_plan_step(p, i)->seconds >= best->seconds);
    CHECK(strstr(gs_plan_reason(p), "best: tensor=4") != NULL);
    /* the per-tensor annotations it implies, in the book's notation */
    CHECK(strstr(gs_plan_reason(p), "w_in[D_{fsdp}, F_{tensor}] w_out[F_{tensor}, D_{fsdp}]") != NULL);
    CHECK(strstr(gs_plan_json(p, 1), "\"annotations\": \"x[tokens_{") != NULL);
    CHECK(strstr(gs_plan_json(p, 3), "\"fits\": true") != NULL);
    CHECK(strstr(gs_plan_text(p, 3), "rank") != NULL);
    /* beyond one pod the batch roles cross the DCN */
    CHECK_OK(gs_model_plan(ctx, preset("llama3-70b"), &r, 16384, &p));
    br = gs_plan_run(p, 0);
    CHECK(br->n_axes > 0 && br->axes[br->n_axes - 1].dcn);
    /* bad input */
    CHECK_ERR(gs_model_plan(ctx, preset("llama3-70b"), &r, 0, &p), GS_ERR_INVALID_ARG, "devices");
    {
        /* 7 chips for one short sequence of a 4-head, 2-layer model: no role can take 7 ways */
        gs_model_desc m;
        memset(&m, 0, sizeof m);
        m.name = "tiny";
        m.layers = 2; m.d_model = 64; m.d_ff = 256; m.heads = 4; m.vocab = 100;
        r.batch = 1;
        r.seq = 100;
        CHECK_ERR(gs_model_plan(ctx, &m, &r, 7, &p), GS_ERR_INVALID_ARG, "no layout");
    }
    gs_ctx_destroy(ctx);
}

static void test_model_cli(void) {
    char dir[64], path[128];
    FILE *f;
    int rc, i;
    if (access(gst_gshard_bin(), X_OK) != 0) {
        CHECK_MSG(0, "%s not found: build it first (make test builds it)", gst_gshard_bin());
        return;
    }
    snprintf(dir, sizeof dir, "/tmp/gst_model_XXXXXX");
    if (!mkdtemp(dir)) {
        CHECK_MSG(0, "mkdtemp failed");
        return;
    }
    rc = gst_cli(dir, "model --preset llama3-70b --json");
    CHECK_MSG(rc == 0, "rc %d: %s", rc, gst_cli_err);
    CHECK(strstr(gst_cli_out, "\"params\": 70553706496,") != NULL);
    CHECK(strstr(gst_cli_out, "\"params_by_part\": {\"embedding\": 1050673152") != NULL);
    rc = gst_cli(dir, "model --preset llama3-70b");
    CHECK(rc == 0 && strstr(gst_cli_out, "7.055e+10 parameters") != NULL);
    rc = gst_cli(dir, "model --preset llama3-70b --chip v5e --decode --batch 32 --seq 8192 --param-bytes 1 --kv-bytes 1 "
                      "--mesh tensor=4,tensor=2 --json");
    CHECK_MSG(rc == 0, "rc %d: %s", rc, gst_cli_err);
    CHECK(strstr(gst_cli_out, "\"bound\": \"hbm\"") && strstr(gst_cli_out, "\"fits\": true"));
    rc = gst_cli(dir, "model --layers 2 --d-model 64 --d-ff 256 --heads 4 --vocab 100 --tied --plain-mlp --name tiny");
    CHECK(rc == 0 && strstr(gst_cli_out, "tiny: 1.05e+05 parameters") != NULL);
    rc = gst_cli(dir, "plan --preset llama3-70b --chip v5e --devices 8 --batch 32 --seq 8192 --decode --param-bytes 1 "
                      "--kv-bytes 1 --json --top 2");
    CHECK_MSG(rc == 0, "rc %d: %s", rc, gst_cli_err);
    CHECK(strstr(gst_cli_out, "\"fits\": true") != NULL);
    rc = gst_cli(dir, "plan --preset llama3-70b --chip v5e --devices 4 --batch 32 --seq 8192 --decode --json");
    CHECK_EQ_INT(rc, 1);
    CHECK(strstr(gst_cli_out, "\"fits\": false") != NULL);
    rc = gst_cli(dir, "plan --preset llama3-70b --chip v5e --sweep devices=4..16,chips=v5e,v5p --batch 1 --seq 8192 --decode");
    CHECK_EQ_INT(rc, 0);
    CHECK(strstr(gst_cli_out, "v5e      8 chips: DOES NOT FIT") && strstr(gst_cli_out, "v5e     16 chips: fits") &&
          strstr(gst_cli_out, "v5p      4 chips: fits"));
    snprintf(path, sizeof path, "%s/chip.txt", dir);
    f = fopen(path, "w");
    if (f) {
        fputs("base = v5e\nname = v5e-32g\nhbm_capacity = 32e9\n", f);
        fclose(f);
    }
    rc = gst_cli(dir, "plan --preset llama3-70b --chip-file %s --devices 8 --batch 1 --seq 8192 --decode", path);
    CHECK_MSG(rc == 0, "rc %d: %s", rc, gst_cli_err);
    /* the same chip file costs a program: its HBM is 32 GB */
    rc = gst_cli(".", "cost examples/sharded_matmul_spmd.hlo --chip-file %s --mesh 2x4", path);
    CHECK_MSG(rc == 0 && strstr(gst_cli_out, "of 32 GB (fits)"), "rc %d: %s", rc, gst_cli_err);
    CHECK_EQ_INT(gst_cli(".", "cost examples/sharded_matmul_spmd.hlo --chip v5e --chip-file %s --mesh 2x4", path), 2);
    /* --emit-hlo: the best layout as an annotated module at reduced size, proven by run --check */
    {
        const char *plans[3] = {"--preset llama3-70b --chip v5p --devices 8192 --batch 1024 --seq 4096 --train",
                                "--preset llama3-405b --chip v5e --devices 256 --batch 512 --seq 2048 --decode --param-bytes 1",
                                "--preset mixtral-8x7b --chip v5p --devices 64 --batch 64 --seq 4096 --train"};
        for (i = 0; i < 3; i++) {
            char hlo[256];
            long long D;
            snprintf(hlo, sizeof hlo, "%s/plan%d.hlo", dir, i);
            rc = gst_cli(dir, "plan %s --top 1 --emit-hlo %s", plans[i], hlo);
            CHECK_MSG(rc == 0, "rc %d: %s", rc, gst_cli_err);
            CHECK(strstr(gst_cli_err, "check it with: gshard run") != NULL);
            D = cli_number_after(gst_cli_err, "--devices ");
            CHECK(D >= 2 && D <= 16);
            rc = gst_cli(dir, "run %s --devices %lld --check", hlo, D);
            CHECK_MSG(rc == 0, "%s: rc %d: %s", plans[i], rc, gst_cli_err);
            CHECK(strstr(gst_cli_out, "check: ok") != NULL);
        }
    }
    /* errors: exit 2 with a message */
    CHECK_EQ_INT(gst_cli(dir, "model"), 2);
    CHECK(strstr(gst_cli_err, "--preset") != NULL);
    CHECK_EQ_INT(gst_cli(dir, "model --preset llama9"), 2);
    CHECK(strstr(gst_cli_err, "unknown model preset") != NULL);
    CHECK_EQ_INT(gst_cli(dir, "model --preset llama3-8b --mesh tensor=4"), 2);
    CHECK_EQ_INT(gst_cli(dir, "model --preset llama3-8b --chip v5e --mesh tensor4"), 2);
    CHECK_EQ_INT(gst_cli(dir, "model --preset llama3-8b --chip v5e --mesh expert=4"), 2);
    CHECK(strstr(gst_cli_err, "mixture-of-experts") != NULL);
    CHECK_EQ_INT(gst_cli(dir, "plan --preset llama3-8b --chip v5e --batch 4"), 2);
    CHECK_EQ_INT(gst_cli(dir, "plan --preset llama3-8b --chip v5e --devices 8 --emit-hlo /nonexistent/dir/x.hlo"), 2);
    CHECK_EQ_INT(gst_cli(dir, "model --preset llama3-8b --bogus"), 2);
    CHECK_EQ_INT(gst_cli(dir, "model --preset llama3-8b --batch -1"), 2);
    CHECK_EQ_INT(gst_cli(dir, "model --preset llama3-8b --chip-file %s/missing.txt", dir), 2);
    CHECK_EQ_INT(gst_cli(dir, "model --help"), 0);
    CHECK(strstr(gst_cli_out, "--sweep") != NULL);
    {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        CHECK(system(cmd) == 0);
    }
}

/* ---- shapes-only runs against the full runtime ---- */
static long long cli_number_after(const char *text, const char *needle) {
    const char *p = strstr(text, needle);
    return p ? atoll(p + strlen(needle)) : -1;
}

/* an SPMD program: a loop of 3 iterations with an all-reduce over pairs and a permute in its body */
static const char shapes_loop_text[] =
    "HloModule sl, num_partitions=4\n"
    "add.f32 {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
    "cond {\n  p = (s32[], f32[64,32]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
    "  n = s32[] constant(3)\n  ROOT c = pred[] compare(i, n), direction=LT\n}\n"
    "body {\n  p = (s32[], f32[64,32]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
    "  one = s32[] constant(1)\n  i2 = s32[] add(i, one)\n  x = f32[64,32] get-tuple-element(p), index=1\n"
    "  y = f32[64,32] exponential(x)\n"
    "  z = f32[64,32] all-reduce(y), replica_groups={{0,1},{2,3}}, to_apply=add.f32\n"
    "  q = f32[64,32] collective-permute(z), source_target_pairs={{0,1},{1,0}}\n"
    "  ROOT t = (s32[], f32[64,32]) tuple(i2, q)\n}\n"
    "ENTRY main {\n  zero = s32[] constant(0)\n  x = f32[64,32] parameter(0)\n"
    "  init = (s32[], f32[64,32]) tuple(zero, x)\n"
    "  w = (s32[], f32[64,32]) while(init), condition=cond, body=body\n"
    "  ROOT r = f32[64,32] get-tuple-element(w), index=1\n}\n";

static void test_model_shapes_only(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = NULL;
    gs_shapes_desc sd;
    gs_shapes_report *rep = NULL;
    const char *files[3] = {"examples/mlp.hlo", "examples/moe_layer.hlo", "examples/ops_tour.hlo"};
    const int devs[3] = {8, 8, 4};
    char dir[64], path[128];
    FILE *f;
    int i;
    /* the example programs: the same peak per device and the same bytes per collective as the runtime */
    for (i = 0; i < 3; i++) {
        long long peak_rt, peak_sh;
        static char rt_out[sizeof gst_cli_out];
        CHECK_EQ_INT(gst_cli(".", "run %s --devices %d --stats", files[i], devs[i]), 0);
        memcpy(rt_out, gst_cli_out, sizeof rt_out);
        peak_rt = cli_number_after(rt_out, "device 0: peak ");
        CHECK_EQ_INT(gst_cli(".", "run %s --devices %d --shapes-only", files[i], devs[i]), 0);
        peak_sh = cli_number_after(gst_cli_out, "every device peaks at ");
        CHECK_MSG(peak_rt > 0 && peak_rt == peak_sh, "%s: runtime peak %lld, shapes-only %lld", files[i], peak_rt, peak_sh);
        CHECK(cli_number_after(rt_out, "device 1: peak ") == peak_sh);
        if (i == 1) {
            /* the MoE layer's two AllToAlls and the aux-loss all-reduce: 57568 bytes sent in all */
            CHECK(strstr(rt_out, "all-to-all all-to-all.211: groups of 8, ran once per device, 28672 bytes sent") != NULL);
            CHECK(strstr(gst_cli_out, "all-to-all all-to-all.211: groups of 8, mesh axes -, ran once per device, 28672 "
                                      "bytes sent in all (at most 3584 by one device)") != NULL);
            CHECK(strstr(gst_cli_out, "bytes sent: 57568 in all, at most 7196 by one device") != NULL);
        }
    }
    /* an SPMD program with a loop: the runtime (--spmd --stats) against the C API */
    snprintf(dir, sizeof dir, "/tmp/gst_shapes_XXXXXX");
    if (!mkdtemp(dir)) {
        CHECK_MSG(0, "mkdtemp failed");
        gs_ctx_destroy(ctx);
        return;
    }
    snprintf(path, sizeof path, "%s/loop.hlo", dir);
    f = fopen(path, "w");
    if (f) {
        fputs(shapes_loop_text, f);
        fclose(f);
    }
    CHECK_EQ_INT(gst_cli(dir, "run --spmd %s --devices 4 --stats", path), 0);
    CHECK_OK(gs_hlo_parse(ctx, shapes_loop_text, strlen(shapes_loop_text), &g));
    memset(&sd, 0, sizeof sd);
    sd.num_devices = 4;
    sd.mesh_rank = 2;
    sd.mesh[0] = 2;
    sd.mesh[1] = 2;
    CHECK_OK(gs_shapes_run(g, &sd, &rep));
    if (rep) {
        const gs_shapes_collective *ar = gs_shapes_collective_at(rep, 0), *cp = gs_shapes_collective_at(rep, 1);
        CHECK_EQ_INT(gs_shapes_peak_bytes(rep, 3), cli_number_after(gst_cli_out, "device 3: peak "));
        CHECK_EQ_INT(gs_shapes_param_bytes(rep), 64 * 32 * 4);
        CHECK(strstr(gs_shapes_peak_path(rep, 0), "w/body") != NULL);
        CHECK_EQ_INT(gs_shapes_num_collectives(rep), 2);
        CHECK(ar && cp);
        if (ar && cp) {
            /* 3 iterations; all-reduce in pairs {0,1},{2,3} (mesh axis 1): (2-1) * 8192 bytes per device and run */
            CHECK_EQ_INT(ar->count, 3);
            CHECK_EQ_INT(ar->axes, 2u);
            CHECK_NEAR(ar->bytes_sent, 4.0 * 3 * 8192, 0);
            CHECK_NEAR(cp->bytes_sent, 2.0 * 3 * 8192, 0);
            CHECK(strstr(gst_cli_out, "all-reduce z: groups of 2, ran 3 times per device, 98304 bytes sent") != NULL);
            CHECK(strstr(gst_cli_out, "collective-permute q: groups of 1, ran 3 times per device, 49152 bytes sent") != NULL);
        }
        /* devices 2 and 3 are outside the permute */
        CHECK_NEAR(gs_shapes_bytes_sent(rep, 0), 3.0 * 8192 * 2, 0);
        CHECK_NEAR(gs_shapes_bytes_sent(rep, 3), 3.0 * 8192, 0);
        CHECK_NEAR(gs_shapes_axes_bytes(rep, 2u), 6.0 * 3 * 8192, 0);   /* both collectives run along axis 1 */
        CHECK(strstr(gs_shapes_json(rep), "\"mesh_axes\": [1]") != NULL);
    }
    /* a loop whose trip count cannot be read: an error that names the loop, unless the count is given */
    {
        const char *txt = "HloModule u\ncond {\n  p = s32[] parameter(0)\n  ROOT c = pred[] compare(p, p), direction=LT\n}\n"
                          "body {\n  p = s32[] parameter(0)\n  ROOT q = s32[] multiply(p, p)\n}\n"
                          "ENTRY main {\n  i = s32[] parameter(0)\n  ROOT w = s32[] while(i), condition=cond, body=body\n}\n";
        const char *names[1] = {"w"};
        const int64_t counts[1] = {5};
        gs_graph *u = NULL;
        CHECK_OK(gs_hlo_parse(ctx, txt, strlen(txt), &u));
        memset(&sd, 0, sizeof sd);
        sd.num_devices = 2;
        CHECK_ERR(gs_shapes_run(u, &sd, &rep), GS_ERR_UNSUPPORTED, "--trip-count w=N");
        sd.n_trip_counts = 1;
        sd.trip_names = names;
        sd.trip_counts = counts;
        CHECK_OK(gs_shapes_run(u, &sd, &rep));
        sd.num_devices = 0;
        CHECK_ERR(gs_shapes_run(u, &sd, &rep), GS_ERR_INVALID_ARG, "num_devices");
        sd.num_devices = 4;
        sd.mesh_rank = 1;
        sd.mesh[0] = 3;
        CHECK_ERR(gs_shapes_run(u, &sd, &rep), GS_ERR_INVALID_ARG, "mesh has 3 devices");
    }
    /* the same through the CLI: an SPMD file with --spmd */
    CHECK_EQ_INT(gst_cli(dir, "run --spmd %s --devices 4 --shapes-only --mesh 2x2", path), 0);
    CHECK(strstr(gst_cli_out, "every device peaks at 32780 bytes (parameters 8192) at w/body/") != NULL);
    CHECK(strstr(gst_cli_out, "all-reduce z: groups of 2, mesh axes 1, ran 3 times per device, 98304 bytes sent") != NULL);
    CHECK_EQ_INT(gst_cli(dir, "run %s --devices 4 --shapes-only --check", path), 2);
    CHECK_EQ_INT(gst_cli(dir, "run %s --devices 4 --trip-count w=3", path), 2);
    CHECK_EQ_INT(gst_cli(".", "run examples/ops_tour.hlo --devices 4 --shapes-only --trip-count bad"), 2);
    CHECK_EQ_INT(gst_cli(".", "run examples/moe_layer.hlo --devices 8 --shapes-only --mesh 2x4 --json"), 0);
    CHECK(strstr(gst_cli_out, "\"peak_bytes\": 44548") != NULL);
    {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        CHECK(system(cmd) == 0);
    }
    gs_ctx_destroy(ctx);
}


/* ---- chip data: VMEM ---- */
static void test_model_chip_vmem(void) {
    const double MiB = 1048576.0;
    /* [book] ch.2: "VMEM ... 128 MiB on TPU v5e"; the rest from JAX's Pallas TPU table (per core times cores) */
    BOOK(gs_chip_find("v5e")->vmem_bytes, 128 * MiB, 1e-12);
    CHECK_REL(gs_chip_find("v6e")->vmem_bytes, 128 * MiB, 1e-12);
    CHECK_REL(gs_chip_find("v5p")->vmem_bytes, 2 * 64 * MiB, 1e-12);
    CHECK_REL(gs_chip_find("v4p")->vmem_bytes, 2 * 16 * MiB, 1e-12);
    CHECK_REL(gs_chip_find("v3")->vmem_bytes, 2 * 16 * MiB, 1e-12);
    CHECK_REL(gs_chip_find("v2")->vmem_bytes, 2 * 16 * MiB, 1e-12);
    /* GPUs have no VMEM */
    CHECK(gs_chip_find("h100")->vmem_bytes == 0.0 && gs_chip_find("b200")->vmem_bytes == 0.0);
}

/* ---- causal halving and gradient accumulation ---- */
static void test_model_causal_accum(void) {
    gs_ctx *ctx = gst_ctx();
    gs_model_step a, b;
    gs_run_desc r;
    gs_plan *plan = NULL;
    const gs_model_desc *m = preset("llama3-8b");
    double T = 8192, tok = 4 * T, attn = 4.0 * T * 32 * 128 * 32, P;
    int i, n_accum = 0;
    gs_model_counts c = counts(ctx, m, (int64_t)T);
    P = c.params_matmul;
    /* the book's convention (every chapter's numbers): the full T*S; 4 T N H L per token forward */
    CHECK_REL(c.attn_flops_fwd, attn, 1e-12);
    r = run_of("v5p", GS_PHASE_TRAIN, 4, (int64_t)T, 0, NULL, NULL);
    CHECK_OK(gs_model_step_cost(ctx, m, &r, &a));
    CHECK_REL(a.model_flops, 3.0 * tok * (2.0 * P + attn), 1e-12);
    /* causal: half of the attention term, in training (3 passes) and prefill (1) */
    r.causal = true;
    CHECK_OK(gs_model_step_cost(ctx, m, &r, &b));
    CHECK_REL(b.model_flops, 3.0 * tok * (2.0 * P + attn / 2.0), 1e-12);
    CHECK(b.t_math < a.t_math);
    r.phase = GS_PHASE_PREFILL;
    CHECK_OK(gs_model_step_cost(ctx, m, &r, &b));
    CHECK_REL(b.model_flops, tok * (2.0 * P + attn / 2.0), 1e-12);
    /* decode: one query against all S cached keys, nothing to halve */
    r.phase = GS_PHASE_DECODE;
    CHECK_OK(gs_model_step_cost(ctx, m, &r, &b));
    r.causal = false;
    CHECK_OK(gs_model_step_cost(ctx, m, &r, &a));
    CHECK_REL(b.model_flops, a.model_flops, 1e-12);
    CHECK_REL(a.model_flops, 4 * (2.0 * P + attn), 1e-12);

    /* gradient accumulation over 4 micro-steps of one sequence: the same FLOPs, a quarter of the activations,
       an f32 gradient buffer (4 bytes per parameter), the optimizer once; on one chip without collectives the
       step is 4 * (forward + backward of one sequence) + the update */
    r = run_of("v5p", GS_PHASE_TRAIN, 4, (int64_t)T, 0, NULL, NULL);
    CHECK_OK(gs_model_step_cost(ctx, m, &r, &a));
    r.grad_accum = 4;
    CHECK_OK(gs_model_step_cost(ctx, m, &r, &b));
    CHECK_REL(b.model_flops, a.model_flops, 1e-12);
    CHECK_REL(b.flops, a.flops, 1e-12);
    CHECK_REL(b.t_math, a.t_math, 1e-12);
    CHECK_REL(b.mem.activations, a.mem.activations / 4.0, 1e-12);
    CHECK_EQ_INT((long long)a.mem.grads, 0);
    CHECK_REL(b.mem.grads, 4.0 * c.params, 1e-12);
    CHECK_REL(b.tokens, a.tokens, 1e-12);
    {
        gs_model_step one;
        gs_run_desc r1 = r;
        double upd;
        r1.batch = 1;
        r1.grad_accum = 0;
        CHECK_OK(gs_model_step_cost(ctx, m, &r1, &one));
        /* the optimizer pass reads and writes parameters (2+2 bytes) and Adam's state (8+8), reads the
           gradients (2): 22 bytes per parameter through HBM */
        upd = c.params * 22.0 / gs_chip_find("v5p")->hbm_bw;
        CHECK_REL(b.seconds, 4.0 * (one.seconds - upd) + upd, 1e-9);
    }
    r.grad_accum = 3;   /* does not divide the batch */
    CHECK(gs_model_step_cost(ctx, m, &r, &b) == GS_ERR_INVALID_ARG);
    CHECK(strstr(gs_ctx_error_msg(ctx), "grad_accum") != NULL);
    gs_ctx_clear_error(ctx);

    /* the planner: llama3-70b, 256 x 8192 tokens on 256 v5e (16 GB per chip): the layouts that do not fit in
       one step get the fewest micro-steps that fit as another candidate, and the best is one of them */
    r = run_of("v5e", GS_PHASE_TRAIN, 256, 8192, 0, NULL, NULL);
    CHECK_OK(gs_model_plan(ctx, preset("llama3-70b"), &r, 256, &plan));
    CHECK(gs_plan_fits(plan));
    CHECK(gs_plan_run(plan, 0)->grad_accum > 1);
    CHECK(gs_plan_step(plan, 0)->mem.fits);
    /* each accumulating candidate uses the fewest micro-steps: half as many do not fit */
    for (i = 0; i < gs_plan_num_candidates(plan); i++) {
        gs_run_desc half = *gs_plan_run(plan, i);
        if (half.grad_accum <= 1) continue;
        n_accum++;
        half.grad_accum /= 2;
        CHECK_OK(gs_model_step_cost(ctx, preset("llama3-70b"), &half, &a));
        CHECK(!a.mem.fits);
    }
    CHECK(n_accum > 0);
    CHECK(strstr(gs_plan_text(plan, 3), "accum=") != NULL);
    CHECK(strstr(gs_plan_json(plan, 1), "\"grad_accum\": ") != NULL);
    gs_ctx_destroy(ctx);
}

/* ---- the planner's emitted Transformer ---- */

/* per-device bytes (the shapes-only "max_device_bytes") and count of the collectives `opcode` over groups of
   `group` in a shapes-only JSON report */
static long long emitted_bytes(const char *json, const char *opcode, long long group, int *count) {
    char key[96];
    const char *p = json;
    long long sum = 0;
    snprintf(key, sizeof key, "\"opcode\": \"%s\", \"group_size\": %lld,", opcode, group);
    *count = 0;
    while ((p = strstr(p, key)) != NULL) {
        long long b = cli_number_after(p, "\"max_device_bytes\": ");
        CHECK(b >= 0);
        sum += b;
        (*count)++;
        p += strlen(key);
    }
    return sum;
}

/* emits candidate `rank` of `plan` on at most `devices` devices into dir/name, checks that its header names the
   mesh `roles`, that run --check passes at the default tolerance, and leaves the shapes-only JSON in
   gst_cli_out */
static bool emit_and_check(const char *dir, const char *name, const char *plan, int rank, int devices, const char *roles) {
    char hlo[256];
    int rc;
    snprintf(hlo, sizeof hlo, "%s/%s", dir, name);
    rc = gst_cli(dir, "plan %s --top 1 --emit-rank %d --emit-devices %d --emit-hlo %s", plan, rank, devices, hlo);
    CHECK_MSG(rc == 0, "%s: rc %d: %s", plan, rc, gst_cli_err);
    if (rc != 0) return false;
    CHECK_MSG(cli_number_after(gst_cli_err, "--devices ") == devices, "%s: %s", plan, gst_cli_err);
    CHECK(strstr(gst_cli_err, "--rtol") == NULL);
    {
        char head[2048];
        size_t got = 0;
        FILE *f = fopen(hlo, "r");
        if (f) {
            got = fread(head, 1, sizeof head - 1, f);
            fclose(f);
        }
        head[got] = 0;
        CHECK_MSG(strstr(head, roles) != NULL, "%s: the mesh is not '%s'", plan, roles);
    }
    rc = gst_cli(dir, "run %s --devices %d --check", hlo, devices);
    CHECK_MSG(rc == 0 && strstr(gst_cli_out, "check: ok"), "%s at %d: rc %d: %s", plan, devices, rc, gst_cli_err);
    rc = gst_cli(dir, "run %s --devices %d --shapes-only --json", hlo, devices);
    CHECK_MSG(rc == 0, "%s: shapes-only rc %d: %s", plan, rc, gst_cli_err);
    return rc == 0;
}

static void test_model_emit(void) {
    static const char *const llama8 = "--preset llama3-8b --chip v5e --devices 64 --batch 64 --seq 2048 --train";
    static const char *const llama70 = "--preset llama3-70b --chip v5p --devices 8192 --batch 1024 --seq 4096 --train";
    static const char *const gpt3 = "--preset gpt3-175b --chip v5p --devices 1024 --batch 512 --seq 2048 --train";
    static const char *const mixtral = "--preset mixtral-8x7b --chip v5p --devices 64 --batch 64 --seq 4096 --train";
    char dir[64];
    int n, d;
    long long L = 2, D = 64, F = 224, H = 8, K = 2, Nq = 4, act, kv, wl, emb;
    if (access(gst_gshard_bin(), X_OK) != 0) {
        CHECK_MSG(0, "%s not found: build it first (make test builds it)", gst_gshard_bin());
        return;
    }
    snprintf(dir, sizeof dir, "/tmp/gst_emit_XXXXXX");
    if (!mkdtemp(dir)) {
        CHECK_MSG(0, "mkdtemp failed");
        return;
    }
    /* every emitted module proves itself at 4 and 8 devices: dense gated (llama3-8b), plain GELU with two
       tensor axes (gpt3-175b), experts with tensor (mixtral-8x7b's 5th layout) */
    for (d = 4; d <= 8; d *= 2) {
        /* the axes beyond d devices are named as left out */
        emit_and_check(dir, "a.hlo", llama8, 1, d, d == 4 ? "tensor=2 fsdp=2 (left out: fsdp=4)\n" : "tensor=2 fsdp=2 fsdp=2\n");
        emit_and_check(dir, "b.hlo", gpt3, 1, d,
                       d == 4 ? "tensor=2 tensor=2 (left out: fsdp=8, fsdp=8)\n" : "tensor=2 tensor=2 fsdp=2 (left out: fsdp=8)\n");
        emit_and_check(dir, "c.hlo", mixtral, 5, d,
                       d == 4 ? "tensor=2 expert=2 (left out: fsdp=4, fsdp=2)\n" : "tensor=2 expert=2 fsdp=2 (left out: fsdp=2)\n");
    }
    /* a layout with pipeline stages: the stages are left out of the mesh and named in the header */
    emit_and_check(dir, "p.hlo", "--preset llama3-70b --chip v5e --devices 256 --batch 256 --seq 8192 --train", 3, 8,
                   "tensor=2 fsdp=2 fsdp=2 (left out: pipeline=2)\n");
    /* the collectives against the cost model's terms (gs_model_step_cost, per device and forward pass; bytes
       sent = (n-1)/n of the gathered or reduced array, an AllToAll (n-1)/n^2 of the group's): llama3-8b / 64
       is L=2, D=64, F=224 (gated), 2 kv-heads x 2 queries x head_dim 8, vocab 2016, batch 4 x 16 tokens */
    if (emit_and_check(dir, "a.hlo", llama8, 1, 8, "tensor=2 fsdp=2 fsdp=2\n")) {
        /* tensor (2 ways): [tokens/fsdp, D] gathered before and reduce-scattered after each block, and once
           more around the vocabulary-split embedding and output layer */
        act = 4 * 16 / 4 * D * 4 / 2;
        CHECK_EQ_INT(emitted_bytes(gst_cli_out, "all-gather", 2, &n), (2 * L + 1) * act);
        CHECK_EQ_INT(n, 2 * L + 1);
        CHECK_EQ_INT(emitted_bytes(gst_cli_out, "reduce-scatter", 2, &n), (2 * L + 1) * act);
        CHECK_EQ_INT(n, 2 * L + 1);
        /* fsdp (4 ways): each layer's tensor-split weights 2DH(N+K) + 3DF, and the embedding and output layer
           2VD, gathered */
        wl = (2 * D * H * (Nq + K) + 3 * D * F) * 4 / 2 * 3 / 4;
        emb = 2 * 2016 * D * 4 / 2 * 3 / 4;
        CHECK_EQ_INT(emitted_bytes(gst_cli_out, "all-gather", 4, &n), L * wl + emb);
        CHECK_EQ_INT(emitted_bytes(gst_cli_out, "all-reduce", 2, &n) + emitted_bytes(gst_cli_out, "all-to-all", 2, &n), 0);
    }
    /* sequence (2 ways) with tensor: llama3-70b / 128, batch 2 x 16 tokens: the keys and values of the whole
       sequence gathered per layer, 2 * tokens * K * H / tensor */
    if (emit_and_check(dir, "d.hlo", llama70, 1, 4, "tensor=2 sequence=2 (left out: fsdp=32, fsdp=32)\n")) {
        act = 2 * 16 / 2 * D * 4 / 2;
        kv = 2 * 16 * 2 * K * H * 4 / 2 / 2;
        CHECK_EQ_INT(emitted_bytes(gst_cli_out, "reduce-scatter", 2, &n), (2 * L + 1) * act);
        CHECK_EQ_INT(emitted_bytes(gst_cli_out, "all-gather", 2, &n), (2 * L + 1) * act + L * kv);
        CHECK_EQ_INT(n, 2 * L + 1 + 2 * L);
    }
    /* experts (2 ways) with fsdp (4): mixtral / 64, 4 experts top-2, batch 8 x 16 tokens. Dispatch and combine
       are one AllToAll each per layer; the cost model moves tokens * k rows, the emitted dense dispatch all E
       rows: E/k times the bytes */
    if (emit_and_check(dir, "e.hlo", mixtral, 8, 8, "expert=2 fsdp=2 fsdp=2\n")) {
        long long E = 4, k = 2, tok_grp = 8 * 16 / 8, a2a = tok_grp * 2 * k * D * 4 / 4;
        CHECK_EQ_INT(emitted_bytes(gst_cli_out, "all-to-all", 2, &n), 2 * L * a2a * E / k);
        CHECK_EQ_INT(n, 2 * L);
        wl = (2 * D * H * (Nq + K) + E * 3 * D * F / 2 + D * E) * 4 * 3 / 4;
        emb = 2 * 512 * D * 4 * 3 / 4;
        CHECK_EQ_INT(emitted_bytes(gst_cli_out, "all-gather", 4, &n), L * wl + emb);
    }
    /* bf16 on request: the CLI names the tolerance its rounding needs */
    CHECK_EQ_INT(gst_cli(dir, "plan %s --emit-dtype bf16 --emit-layers 1 --emit-devices 4 --emit-hlo %s/f.hlo", llama8, dir), 0);
    CHECK(strstr(gst_cli_err, "--rtol 2e-2 --atol 2e-2") != NULL);
    CHECK_EQ_INT(gst_cli(dir, "run %s/f.hlo --devices 4 --check --rtol 2e-2 --atol 2e-2", dir), 0);
    CHECK_EQ_INT(gst_cli(dir, "print %s/f.hlo", dir), 0);
    CHECK(strstr(gst_cli_out, "logits = bf16[") != NULL);
    /* errors */
    CHECK_EQ_INT(gst_cli(dir, "plan %s --emit-dtype s32 --emit-hlo %s/g.hlo", llama8, dir), 2);
    CHECK(strstr(gst_cli_err, "not f32 or bf16") != NULL);
    CHECK_EQ_INT(gst_cli(dir, "plan %s --top 1 --emit-rank 100000 --emit-hlo %s/g.hlo", llama8, dir), 2);
    CHECK(strstr(gst_cli_err, "candidates") != NULL);
    {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        CHECK(system(cmd) == 0);
    }
}

static void test_model_emit_api(void) {
    gs_ctx *ctx = gst_ctx();
    gs_plan *plan = NULL;
    gs_run_desc run;
    gs_emit_desc ed;
    const char *text;
    int64_t dev = 0, scale = 0;
    memset(&run, 0, sizeof run);
    run.chip = gs_chip_find("v5e");
    run.batch = 64;
    run.seq = 2048;
    CHECK_OK(gs_model_plan(ctx, preset("llama3-8b"), &run, 64, &plan));
    memset(&ed, 0, sizeof ed);
    ed.layers = 3;
    ed.scale = 128;
    ed.max_devices = 4;
    text = gs_plan_emit_hlo_ex(plan, 0, &ed, &dev, &scale);
    CHECK(text != NULL);
    CHECK_EQ_INT(dev, 4);
    CHECK_EQ_INT(scale, 128);
    /* 4096 / 128 = 32 rounds up to the floor of 16 and stays; three layers: l2 exists, l3 does not */
    CHECK(text && strstr(text, "d_model 32,") != NULL && strstr(text, "l2_wq") && !strstr(text, "l3_wq"));
    ed.dtype = GS_S32;
    CHECK(gs_plan_emit_hlo_ex(plan, 0, &ed, &dev, &scale) == NULL);
    CHECK(strstr(gs_ctx_error_msg(ctx), "not f32 or bf16") != NULL);
    ed.dtype = GS_F32;
    ed.layers = -1;
    CHECK(gs_plan_emit_hlo_ex(plan, 0, &ed, &dev, &scale) == NULL);
    CHECK(gs_plan_emit_hlo_ex(plan, gs_plan_num_candidates(plan), NULL, &dev, &scale) == NULL);
    gs_ctx_destroy(ctx);
}

void suite_model(void) {
    RUN(test_model_presets);
    RUN(test_model_book_ch4);
    RUN(test_model_memory);
    RUN(test_model_training);
    RUN(test_model_inference);
    RUN(test_model_strategies);
    RUN(test_model_bad_input);
    RUN(test_model_planner);
    RUN(test_model_cli);
    RUN(test_model_shapes_only);
    RUN(test_model_chip_vmem);
    RUN(test_model_causal_accum);
    RUN(test_model_emit);
    RUN(test_model_emit_api);
}
