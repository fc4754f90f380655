/* gs_api_model.h - whole models: Transformer accounting (parameters, FLOPs, KV cache, memory per chip), step
   times for training, prefill and decode on a chip and a mesh of parallelism axes, and a planner that ranks
   meshes and strategies. Formulas: "How to Scale Your Model" (Austin et al.) ch.4-8, cited as [book];
   docs/cost.md derives each term and names what the model leaves out. Units: seconds, bytes, FLOPs, dollars. */

/* ---------------------------------------------------------------------------------------------------------
   A Transformer decoder
   ------------------------------------------------------------------------------------------------------- */
typedef enum gs_mlp_kind {
    GS_MLP_DEFAULT = 0,   /* GS_MLP_GATED */
    GS_MLP_GATED,         /* W_in1, W_in2 [D, F] and W_out [F, D]: 3DF parameters (LLaMA, Gemma, Mixtral) */
    GS_MLP_PLAIN          /* W_in [D, F] and W_out [F, D]: 2DF (GPT-3) */
} gs_mlp_kind;

typedef struct gs_model_desc {
    const char *name;
    int64_t layers;          /* L */
    int64_t d_model;         /* D */
    int64_t d_ff;            /* F (of one expert in an MoE) */
    int64_t heads;           /* N, query heads */
    int64_t kv_heads;        /* K (0: = N, multi-head attention) */
    int64_t head_dim;        /* H (0: D / N) */
    int64_t vocab;           /* V */
    gs_mlp_kind mlp;
    bool tied_embeddings;    /* the output projection reuses the input embedding (V*D counted once) */
    int64_t experts;         /* E: 0 or 1 for a dense model */
    int64_t top_k;           /* k experts per token (0: 1); the router adds D*E parameters per layer */
    const char *source;      /* where the sizes come from (presets) */
} gs_model_desc;

/* The presets, named exactly: gpt3-175b, llama2-7b, llama2-13b, llama2-70b, llama3-8b, llama3-70b,
   llama3-405b, gemma-7b, mixtral-8x7b. */
GS_API int gs_model_preset_count(void);
GS_API const gs_model_desc *gs_model_preset_at(int i);
GS_API const gs_model_desc *gs_model_preset_find(const char *name);   /* NULL if unknown (case-insensitive) */
GS_API gs_result gs_model_preset_lookup(gs_ctx *ctx, const char *name, const gs_model_desc **out);
/* Sizes > 0 (kv_heads divides heads, top_k <= experts); products that would overflow are refused. */
GS_API gs_result gs_model_check(gs_ctx *ctx, const gs_model_desc *m);

/* Parameters and FLOPs ([book] ch.4). Per layer: attention 2DH(N+K) (Q, K, V, O), MLP 3DF or 2DF (times E
   in an MoE, plus a D*E router), 2D of norms; once: V*D embedding, V*D output layer unless tied, D final norm.
   FLOPs per token: 2 per active matmul parameter forward (the input embedding is a lookup: no FLOPs; the
   output layer counts), 4*T*N*H*L for dot-product attention at context T forward (QK and AV, no causal
   halving, as the book), three times each for training (6N + 12TNHL). */
typedef struct gs_model_counts {
    double params;                  /* everything */
    double params_embed, params_unembed, params_attn, params_mlp, params_router, params_norm;
    double params_active;           /* read for one token: k of E experts */
    double params_matmul;           /* active parameters that are matmul weights (the N of 6*N*T) */
    double attn_flops_fwd;          /* per token at context seq: 4 * seq * N * H * L */
    double flops_fwd;               /* per token: 2 * params_matmul + attn_flops_fwd */
    double flops_train;             /* per token: 3 * flops_fwd (6N + 12TNHL) */
    double kv_elems;                /* per token: 2 * L * K * H (keys and values) */
    double attn_fraction_params;    /* params_attn / (params_attn + params_mlp) */
} gs_model_counts;
GS_API gs_result gs_model_count(gs_ctx *ctx, const gs_model_desc *m, int64_t seq, gs_model_counts *out);
/* The counts as JSON: {"name":..., "params":..., "params_by_part": {...}, ...} (schema in docs/cost.md);
   with run != NULL also the memory per chip and the step of gs_model_step. NULL on error. */
typedef struct gs_run_desc gs_run_desc;
GS_API const char *gs_model_json(gs_ctx *ctx, const gs_model_desc *m, int64_t seq, const gs_run_desc *run);

/* ---------------------------------------------------------------------------------------------------------
   A run: phase, batch, precision and a mesh of parallelism axes on a chip
   ------------------------------------------------------------------------------------------------------- */
typedef enum gs_phase {
    GS_PHASE_DEFAULT = 0,  /* GS_PHASE_TRAIN */
    GS_PHASE_TRAIN,        /* forward + backward + optimizer */
    GS_PHASE_PREFILL,      /* one forward pass over batch * seq prompt tokens, filling the KV cache */
    GS_PHASE_DECODE        /* one token for each of batch sequences, attending to seq cached tokens */
} gs_phase;
GS_API const char *gs_phase_name(gs_phase p);   /* "train", "prefill", "decode" */

typedef enum gs_role {
    GS_ROLE_NONE = 0,
    GS_ROLE_DATA,        /* batch split, weights replicated: gradients all-reduced (backward) */
    GS_ROLE_FSDP,        /* batch split, weights, gradients and optimizer state split (ZeRO-3): weights
                            all-gathered forward and backward, gradients reduce-scattered */
    GS_ROLE_TENSOR,      /* Megatron: heads and d_ff split; activations all-gathered before and
                            reduce-scattered after each attention and MLP block */
    GS_ROLE_SEQUENCE,    /* sequence (context) split: like data for the weights, plus keys and values
                            all-gathered for attention (ring attention) */
    GS_ROLE_EXPERT,      /* experts split; tokens routed by two AllToAlls per MoE layer and pass */
    GS_ROLE_PIPELINE,    /* layers split into stages; activations permuted between stages; bubble
                            (stages - 1) / (microbatches + stages - 1) */
    GS_ROLE_TENSOR_2D    /* 2-D weight-stationary ([book] ch.7 appendix B): weights' d_model split over these
                            axes and d_ff over the TENSOR axes; activations gathered over TENSOR and the
                            partial sums all-reduced over these */
} gs_role;
GS_API const char *gs_role_name(gs_role r);   /* "data", "fsdp", "tensor", "sequence", "expert", "pipeline",
                                                 "tensor2d" */

#define GS_MODEL_MAX_AXES 4
typedef struct gs_run_axis {
    int64_t size;
    gs_role role;
    bool dcn;            /* across slices over the data-center network (TPU) or across NVLink domains (GPU) */
} gs_run_axis;

typedef enum gs_remat {
    GS_REMAT_DEFAULT = 0,   /* GS_REMAT_MATMULS */
    GS_REMAT_NONE,          /* keep every intermediate: about 20 D-vectors per token and layer ([book] ch.4) */
    GS_REMAT_BLOCK,         /* keep each layer's input only (1 D-vector); the forward runs twice: 8N FLOPs */
    GS_REMAT_MATMULS,       /* keep the big matmuls' outputs: MLP D + 2F (gated) or D + F ([book] ch.5 Q2) */
    GS_REMAT_CHECKPOINTS    /* keep `checkpoints` D-vectors per token and layer ([book] ch.6 uses 4) */
} gs_remat;

struct gs_run_desc {
    const gs_chip *chip;                 /* required */
    gs_phase phase;
    int64_t batch;                       /* sequences (> 0) */
    int64_t seq;                         /* tokens per sequence; decode: cached tokens (> 0) */
    int n_axes;                          /* 0: one chip */
    gs_run_axis axes[GS_MODEL_MAX_AXES];
    double param_bytes;                  /* per weight (0: 2, bf16); int8 1, int4 0.5 */
    double grad_bytes;                   /* per gradient kept through the step (0: none, the book's count) */
    double optimizer_bytes;              /* per parameter (0: 8, Adam's two f32 moments) */
    double act_bytes;                    /* per activation element (0: 2) */
    double kv_bytes;                     /* per cached key/value element (0: 2) */
    gs_math math;                        /* FLOP rate used: bf16 (default) or int8 */
    gs_remat remat;
    double checkpoints;                  /* GS_REMAT_CHECKPOINTS */
    int64_t microbatches;                /* pipeline microbatches (0: 4 per stage) */
    double efficiency;                   /* fraction of peak FLOPs/s reached (0: 1); the book often uses 0.4 */
    bool no_attention_flops;             /* the book's rule of thumb: 6N / 2N per token, attention left out */
    double price_per_hour;               /* $ per chip-hour (0: the chip's) */
    /* appended fields */
    bool causal;                         /* training and prefill: attention FLOPs halved for the causal mask
                                            (each query sees the keys before it). false: the book's count, the
                                            full T*S of every chapter's worked numbers ([book] ch.4) */
    int64_t grad_accum;                  /* training: gradient accumulation over this many micro-steps of
                                            batch / grad_accum sequences (0 or 1: none); see gs_model_step_cost */
};

typedef struct gs_model_memory {   /* bytes per chip */
    double params, grads, optimizer, activations, kv_cache, total;
    double activations_no_remat;   /* training: what GS_REMAT_NONE would keep (20 D per token and layer) */
    double activations_block;      /* training: what GS_REMAT_BLOCK would keep (D per token and layer) */
    double capacity;               /* the chip's HBM */
    bool fits;
} gs_model_memory;

typedef struct gs_model_step {
    int64_t devices;
    double tokens;              /* processed per step: batch*seq (train, prefill) or batch (decode) */
    gs_model_memory mem;
    double flops;               /* per chip per step, including rematerialisation */
    double model_flops;         /* per chip per step without rematerialisation (the MFU numerator) */
    double t_math;              /* flops / (C * efficiency) */
    double t_hbm;               /* weights, activations and KV cache through HBM */
    double t_kv;                /* decode: the KV cache read (part of t_hbm; never overlapped: [book] ch.7) */
    double t_ici;               /* collectives inside a slice (or an NVLink domain), latency included */
    double t_dcn;               /* collectives across slices (or NVLink domains) */
    double t_bubble;            /* pipeline bubble added */
    double seconds;             /* the step: per pass max(math, HBM, ICI, DCN), summed over passes */
    gs_bound bound;             /* the largest term of the longest pass */
    double mfu;                 /* model_flops / (C * seconds) */
    double tokens_per_s, tokens_per_s_per_chip;
    double cost_per_mtok;       /* $ per million tokens (0 when no price is known) */
    /* thresholds the book derives for this run's chip (ICI: C / W_bi) */
    double b_crit;              /* tokens per chip above which a weight matmul is compute-bound (C*s_w/(2*W_hbm)) */
    double tensor_max;          /* most tensor ways that stay compute-bound: n_axes * F / (C / W_bi) */
    double tensor_max_decode;   /* decode: tensor ways before ICI exceeds the weights' HBM time: F / (B * W_hbm/W_bi) */
} gs_model_step;

/* Memory per chip and the step time of m under run (model and formulas in docs/cost.md):
     train    passes forward and backward (+ the forward again under GS_REMAT_BLOCK); in each pass the math, HBM,
              ICI and DCN terms overlap (max); DATA all-reduces gradients, FSDP gathers weights in both passes
              and reduce-scatters gradients, TENSOR gathers and reduce-scatters [tokens, D] twice per layer
              and pass (and once around the vocabulary-split embedding and output layer), SEQUENCE gathers
              keys and values, EXPERT does two AllToAlls per layer and pass, PIPELINE adds the bubble.
              With grad_accum = A > 1 the forward and backward passes run A times on batch / A sequences
              (activations and per-token collectives per micro-step, FSDP gathers and reduce-scatters every
              micro-step, the DATA/SEQUENCE gradient all-reduce once per step), the optimizer once;
              gradients are accumulated in a buffer of grad_bytes (0: 4, f32) per parameter.
     prefill  one forward pass, the same terms.
     decode   t_kv + max(math, weights through HBM, ICI): batch * KV bytes / W_hbm is never hidden
              ([book] ch.7 "theoretical step time"). TENSOR_2D models 2-D weight-stationary sharding.
   Collectives over ICI use gs_cost_collective on the role's axes (full bidirectional rings); DCN and GPU
   scale-out axes move bytes at W_dcn per host (or W_ib per GPU); GPU axes inside an NVLink domain at
   W_nvlink per GPU. Fails on a bad model, run, or an axis layout the chip cannot hold. */
GS_API gs_result gs_model_step_cost(gs_ctx *ctx, const gs_model_desc *m, const gs_run_desc *run, gs_model_step *out);
/* Checks a run alone (chip, batch, seq, axes, byte sizes). */
GS_API gs_result gs_run_check(gs_ctx *ctx, const gs_run_desc *run);

/* 2-D weight-stationary vs 1-D tensor parallelism for one MLP layer In[B,D] . W[D,F] . W[F,D] on N chips
   ([book] ch.7 Q7): T_1D = 4BD / (3 W) (1-D over 3 axes), T_2D = 2BD / (X W) + 4BF / (YZ W) at the best X
   (X = sqrt(N D / (2F)), YZ = N / X), and the N above which 2-D sends less: 32 * (F/D) * (3/4)^2 (81 for F =
   4D). W = W_bi of the chip. */
typedef struct gs_ws2d_cost {
    double t_1d, t_2d, x_opt, yz_opt, n_crossover;
} gs_ws2d_cost;
GS_API gs_result gs_cost_ws2d(gs_ctx *ctx, const gs_chip *chip, int64_t B, int64_t D, int64_t F, int64_t N,
                              gs_ws2d_cost *out);

/* One decode step with the model fully sharded over n chips, the book's "theoretical step time" ([book] ch.7):
   T = B * kv_bytes_per_seq / (n W_hbm) + max(2 B P / (n C), P * param_bytes / (n W_hbm)). */
typedef struct gs_decode_bound {
    double t_kv, t_math, t_weights, seconds, tokens_per_s;
} gs_decode_bound;
GS_API gs_result gs_cost_decode_bound(gs_ctx *ctx, const gs_chip *chip, int64_t n_chips, double batch,
                                      double kv_bytes_per_seq, double params, double param_bytes, gs_math math,
                                      gs_decode_bound *out);

/* Dot-product attention of B sequences, T queries against S keys, N query heads sharing K key/value heads of
   size H, s bytes per element ([book] ch.4 Q4, ch.7): FLOPs 4*B*T*S*N*H (QK and AV); fused (flash) bytes
   s*(2*B*T*N*H + 2*B*S*K*H) (Q read, O written, K and V read); unfused adds the [B,N,T,S] scores written,
   read by the softmax, written again and read by AV: 4*s*B*N*T*S. Intensity = FLOPs / bytes: T*S*G/(T*G+S)
   fused with G = N/K (MHA: S*T/(S+T); prefill T/2; decode -> G). */
typedef struct gs_attention_cost {
    double flops, bytes, intensity;
} gs_attention_cost;
GS_API gs_result gs_cost_attention(gs_ctx *ctx, int64_t B, int64_t T, int64_t S, int64_t N, int64_t K, int64_t H,
                                   double s, bool fused, gs_attention_cost *out);

/* ---------------------------------------------------------------------------------------------------------
   The planner
   ------------------------------------------------------------------------------------------------------- */
typedef struct gs_plan gs_plan;   /* lives in the ctx arena; no free */

/* Enumerates meshes of `devices` chips for run's phase (run->axes ignored): every factorisation into
   data, FSDP, tensor, sequence, expert (MoE), pipeline (train) and 2-D weight-stationary (decode) ways with
   power-of-two or divisor sizes, each role on its own logical axis, the ICI axes a role spans estimated from
   the slice's shape; for training with the default rematerialisation also each layout with GS_REMAT_BLOCK. Ranks the candidates that fit in HBM by step time; when none fits, the one with the
   smallest shortfall first. */
GS_API gs_result gs_model_plan(gs_ctx *ctx, const gs_model_desc *m, const gs_run_desc *run, int64_t devices,
                               gs_plan **out);
GS_API int gs_plan_num_candidates(const gs_plan *p);
/* Candidate i in rank order: its run (axes filled in) and step. */
GS_API const gs_run_desc *gs_plan_run(const gs_plan *p, int i);
GS_API const gs_model_step *gs_plan_step(const gs_plan *p, int i);
GS_API bool gs_plan_fits(const gs_plan *p);           /* the best candidate fits in HBM */
GS_API double gs_plan_shortfall(const gs_plan *p);    /* bytes per chip missing for the best when nothing fits */
/* A sentence on why the best wins over the runner-up (bound, terms). */
GS_API const char *gs_plan_reason(const gs_plan *p);
/* The ranking as JSON ({"fits":..., "best":..., "candidates":[...]}, schema in docs/cost.md); text as a table. */
GS_API const char *gs_plan_json(gs_plan *p, int max_candidates);
/* Candidate i's layout as an annotated HLO module of the model at reduced size, for `gshard run --check`:
   the forward pass of the decoder (one-hot embedding, per layer RMSNorm, grouped-query attention with a causal
   mask, RMSNorm, gated/GELU MLP or top-k experts with dense dispatch/combine; final RMSNorm and the output
   layer), every weight and the main activations annotated with the candidate's roles on a mesh whose axes are
   cut to 2 ways (at most max_devices, *devices; pipeline axes left out). Dims are the model's divided by
   *scale (d_model / 64 unless given), with floors that keep every split even; the file's header names the
   sizes and what is not emitted (backward pass, KV cache, pipeline stages, expert capacity). NULL on error. */
typedef struct gs_emit_desc {
    int64_t layers;        /* 0: 2 */
    int64_t scale;         /* 0: d_model / 64 (at least 1) */
    gs_dtype dtype;        /* 0: GS_F32; GS_F32 or GS_BF16 */
    int64_t max_devices;   /* 0: 16 */
} gs_emit_desc;
GS_API const char *gs_plan_emit_hlo_ex(gs_plan *p, int i, const gs_emit_desc *desc, int64_t *devices, int64_t *scale);
GS_API const char *gs_plan_emit_hlo(gs_plan *p, int i, int64_t *devices, int64_t *scale);   /* desc NULL */
GS_API const char *gs_plan_text(gs_plan *p, int max_candidates);
