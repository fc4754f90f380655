/* gs_spmd_check.c - the partitioned-vs-reference check (gs_partition_check in gs_api_partition.h).

   The source graph runs on the reference interpreter and the SPMD program on the runtime, with the same global
   inputs. An observer on the evaluator (gs__exec.observe) keeps every device's copy of the program's outputs,
   and each device's part of each output is compared with the matching region of the reference output: every
   copy of a replicated tile counts, not only the one a gather would return, so devices that disagree cannot
   hide. When an output differs and the caller asked to locate the cause, both run again with observers: the
   reference run keeps the value of every source instruction of the entry graph that the partitioner mapped to a
   per-device value, and the SPMD run keeps, on every device, the values those map to. Walking the source
   instructions in program order, the first one with a difference, its first differing element (row-major in
   the global array) and the lowest device holding a wrong value there are reported. Tuple-shaped values,
   values inside loop bodies, values without a mapping (or whose mapped value the SPMD program never computes)
   and manual shardings are skipped. */
#include "gs_internal.h"

/* element i of an array as a double: storage format (bf16 as uint16) or compute format (bf16 as float) */
GS__FN double gs__chk_get(gs_dtype t, bool storage, const void *data, int64_t i) {
    switch (t) {
    case GS_F32: return ((const float *)data)[i];
    case GS_BF16: return storage ? gs_bf16_to_f32(((const uint16_t *)data)[i]) : ((const float *)data)[i];
    case GS_S32: return ((const int32_t *)data)[i];
    case GS_U32: return ((const uint32_t *)data)[i];
    case GS_PRED: return ((const uint8_t *)data)[i] ? 1.0 : 0.0;
    default: {   /* the other types through one compute-format element (complex: the real part) */
        unsigned char one[16];
        if (!storage) return gs__ld_f(t, data, i);
        gs__to_compute(t, one, (const char *)data + (size_t)i * gs_dtype_size(t), 1);
        return gs__ld_f(t, one, 0);
    }
    }
}

/* got matches want: floats within atol + rtol * |want| (NaN matches NaN, an infinity only itself); the rest
   exactly. *err receives |got - want| (0 for matching NaNs or infinities, infinity when only one side is a NaN
   or an infinity). */
GS__FN bool gs__chk_close(gs_dtype t, double got, double want, double rtol, double atol, double *err) {
    *err = 0.0;
    if (!gs__is_float(t)) {
        *err = fabs(got - want);
        return got == want;
    }
    if (got != got || want != want) {
        if (got != got && want != want) return true;
        *err = HUGE_VAL;
        return false;
    }
    if (got == want) return true;
    *err = fabs(got - want);
    if (*err != *err) *err = HUGE_VAL;   /* inf - inf of opposite signs */
    return *err <= atol + rtol * fabs(want);
}

/* "[1,0,3]": the multi-index of flat element i of shape s */
GS__FN void gs__chk_index_text(const gs_shape *s, int64_t i, char *buf, size_t cap) {
    int64_t idx[GS_MAX_RANK];
    size_t n = 0;
    int d;
    for (d = s->rank - 1; d >= 0; d--) {
        idx[d] = s->dims[d] > 0 ? i % s->dims[d] : 0;
        i = s->dims[d] > 0 ? i / s->dims[d] : 0;
    }
    n += (size_t)snprintf(buf, cap, "[");
    for (d = 0; d < s->rank && n < cap; d++) n += (size_t)snprintf(buf + n, cap - n, "%s%lld", d ? "," : "", (long long)idx[d]);
    if (n < cap) snprintf(buf + n, cap - n, "]");
}

GS__FN void gs__chk_num_text(gs_dtype t, double x, char *buf, size_t cap) {
    if (gs__is_float(t)) snprintf(buf, cap, t == GS_F64 ? "%.17g" : "%.9g", x);
    else snprintf(buf, cap, "%.0f", x);
}

/* ---- the state of one check ---- */
typedef struct gs__chk {
    gs_ctx *ctx;
    gs_graph *spmd, *src;
    const gs__spmd_info *I;
    gs_runtime *rt;
    int64_t D;
    double rtol, atol;        /* the tolerance in force (gs__chk_tol: per output) */
    double user_rtol, user_atol;  /* the caller's (both 0 and not user_given: each output's default) */
    bool user_given;          /* gs_check_desc.tolerances_given: the caller's apply even when both are 0 */
    int n_in, n_out;
    gs_shape *in_shapes, *out_shapes;
    const gs_sharding **in_sh, **out_sh;
    void **outs;              /* D * n_out: every device's outputs (compute format), device-major */
    void **ref_outs;          /* D * n_out: the reference program's, when the source has manual regions (else NULL) */
    const void **shards;      /* D: scratch */
    /* locating: recorded values, compute format (NULL: not recorded) */
    int n_src, n_spmd;
    uint8_t *ref_want;        /* n_src: record this source value */
    void **ref;               /* n_src */
    uint8_t *spmd_want;       /* n_spmd: record this SPMD value on every device */
    void **got;               /* D * n_spmd, device-major */
    void **want, **scratch;   /* n_out: the reference outputs, the gathered outputs (storage format) */
    uint8_t *bad;             /* per element of an output: 1 differs on some device, 2 held by some device */
} gs__chk;

GS__FN void *gs__chk_copy(gs_ctx *ctx, const gs__buf *buf) {
    size_t bytes = (size_t)gs__numel(&buf->shape) * gs__compute_size(buf->shape.dtype);
    void *p = gs__malloc(ctx, bytes + 1);
    if (p && bytes) memcpy(p, buf->data, bytes);
    return p;
}

/* The observer of the reference run: keeps the source values that have a mapping. */
GS__FN gs_result gs__chk_observe_ref(gs__exec *ex, const gs_value *v, int j, const gs__buf *buf) {
    gs__chk *c = (gs__chk *)ex->observe_user;
    if (j != 0 || v->graph != c->src || v->id >= c->n_src || !c->ref_want || !c->ref_want[v->id] || c->ref[v->id])
        return GS_OK;
    c->ref[v->id] = gs__chk_copy(ex->ctx, buf);
    return c->ref[v->id] ? GS_OK : GS_ERR_OUT_OF_MEMORY;
}

/* The observer of every device of the SPMD run: keeps the outputs (the root's buffers) and, when locating, the
   values some source value maps to. Each device writes only its own rows, so threaded runs need no lock. */
GS__FN gs_result gs__chk_observe_spmd(gs__exec *ex, const gs_value *v, int j, const gs__buf *buf) {
    gs__chk *c = (gs__chk *)ex->observe_user;
    int64_t d = ex->partition_id;
    void **slot;
    if (v->graph != c->spmd || d < 0 || d >= c->D) return GS_OK;
    if (v == c->spmd->root && j < c->n_out) {
        slot = &c->outs[(size_t)d * (size_t)c->n_out + (size_t)j];
        if (!*slot && !(*slot = gs__chk_copy(ex->ctx, buf))) return GS_ERR_OUT_OF_MEMORY;
    }
    if (j != 0 || !c->spmd_want || v->id >= c->n_spmd || !c->spmd_want[v->id]) return GS_OK;
    slot = &c->got[(size_t)d * (size_t)c->n_spmd + (size_t)v->id];
    if (!*slot && !(*slot = gs__chk_copy(ex->ctx, buf))) return GS_ERR_OUT_OF_MEMORY;
    return GS_OK;
}

/* A sharding whose regions tell what each device holds (NULL is replicated). */
GS__FN bool gs__chk_plain_sharding(const gs_sharding *s) {
    gs_sharding_kind k;
    if (!s) return true;
    k = gs_sharding_get_kind(s);
    if (k == GS_SHARDING_REPLICATED || k == GS_SHARDING_MAXIMAL || k == GS_SHARDING_UNREDUCED) return true;
    return k == GS_SHARDING_TILED && gs_sharding_manual_group(s) == 1;
}

/* element li of device d's shard; for an unreduced s, the sum of the summands of d's group (in device order) */
GS__FN double gs__chk_held(const gs__chk *c, const gs_sharding *s, gs_dtype t, int64_t d, int64_t li) {
    double a = 0;
    int64_t e;
    if (!gs__sh_has_unreduced(s)) return gs__chk_get(t, false, c->shards[d], li);
    for (e = 0; e < c->D; e++)
        if (c->shards[e] && gs__sh_same_sum(s, d, e)) a += gs__chk_get(t, false, c->shards[e], li);
    return a;
}

/* The source value v, the per-device value p it maps to (with sharding s), is worth comparing. */
GS__FN bool gs__chk_comparable(gs__chk *c, const gs_value *v, const gs_value **p_out, const gs_sharding **s_out) {
    const gs_sharding *s = NULL;
    const gs_value *p;
    gs_shape shard;
    gs_ctx scratch;
    gs_result r;
    if (v->shape.dtype == GS_TUPLE || v->id >= c->I->n_src) return false;
    p = gs_partition_lookup(c->spmd, v, &s);
    if (!p || p->graph != c->spmd || p->shape.dtype == GS_TUPLE || p->id >= c->n_spmd) return false;
    if (!gs__chk_plain_sharding(s)) return false;
    if (s) {
        memset(&scratch, 0, sizeof scratch);   /* a failure here only means "not comparable" */
        scratch.allocator = c->ctx->allocator;
        r = gs_sharding_shard_shape(&scratch, s, v->shape, &shard);
        if (r || !gs_shape_equal(&shard, &p->shape)) return false;
    } else if (!gs_shape_equal(&v->shape, &p->shape)) {
        return false;
    }
    *p_out = p;
    *s_out = s;
    return true;
}

/* The comparison of a global array with every device's copy of its parts. */
typedef struct gs__chk_diff {
    bool found;
    int64_t index, device;    /* the first differing element (row-major), the lowest device with a wrong copy */
    double got, want;
    int64_t n_bad;            /* elements with at least one wrong copy (counting mode) */
    double max_err;
} gs__chk_diff;

/* Compares want (global, shape gsh; storage format if want_storage, else compute) with c->shards[d] (device d's
   shard, compute format, shape sshape; NULL: not observed, skipped) laid out by sharding s (NULL: replicated).
   With bad (a numel-byte scratch map, zeroed) every element is visited, marked held (bit 2) and, when it
   differs, marked (bit 1) and counted;
   without, the walk stops as soon as nothing earlier can differ. */
GS__FN void gs__chk_diff_shards(const gs__chk *c, const gs_shape *gsh, const void *want, bool want_storage,
                                const gs_shape *sshape, const gs_sharding *s, uint8_t *bad, gs__chk_diff *out) {
    int64_t gst[GS_MAX_RANK], lst[GS_MAX_RANK], off[GS_MAX_RANK], lim[GS_MAX_RANK], idx[GS_MAX_RANK], d;
    int rank = gsh->rank, k;
    memset(out, 0, sizeof *out);
    out->device = -1;
    gs__strides(gsh, gst);
    gs__strides(sshape, lst);
    for (d = 0; d < c->D; d++) {
        const void *shard = c->shards[d];
        bool empty = false;
        if (!shard || gs__sh_unreduced_coord(s, d) != 0) continue;   /* unreduced: each group's sum once */
        if (s) {
            if (!gs_sharding_device_region(s, *gsh, d, off, lim)) continue;
        } else {
            for (k = 0; k < rank; k++) {
                off[k] = 0;
                lim[k] = gsh->dims[k];
            }
        }
        for (k = 0; k < rank; k++) {
            if (lim[k] <= off[k]) empty = true;
            idx[k] = off[k];
        }
        if (empty) continue;
        for (;;) {
            int64_t gi = 0, li = 0;
            double a, b, err;
            for (k = 0; k < rank; k++) {
                gi += idx[k] * gst[k];
                li += (idx[k] - off[k]) * lst[k];
            }
            /* a box is walked in increasing global order: nothing later here can come first */
            if (!bad && out->found && gi >= out->index) break;
            a = gs__chk_held(c, s, gsh->dtype, d, li);
            b = gs__chk_get(gsh->dtype, want_storage, want, gi);
            if (bad) bad[gi] |= 2;
            if (!gs__chk_close(gsh->dtype, a, b, c->rtol, c->atol, &err)) {
                if (bad && !(bad[gi] & 1)) {
                    bad[gi] |= 1;
                    out->n_bad++;
                }
                if (!out->found || gi < out->index) {
                    out->found = true;
                    out->index = gi;
                    out->device = d;
                    out->got = a;
                    out->want = b;
                }
                if (!bad) break;
            }
            if (err > out->max_err) out->max_err = err;
            for (k = rank - 1; k >= 0; k--) {
                if (++idx[k] < lim[k]) break;
                idx[k] = off[k];
            }
            if (k < 0) break;
        }
    }
}

GS__FN void gs__chk_free_records(gs__chk *c) {
    int64_t i;
    if (c->ref)
        for (i = 0; i < c->n_src; i++) gs__free(c->ctx, c->ref[i]);
    if (c->got)
        for (i = 0; i < c->D * c->n_spmd; i++) gs__free(c->ctx, c->got[i]);
    gs__free(c->ctx, c->ref_want);
    gs__free(c->ctx, c->ref);
    gs__free(c->ctx, c->spmd_want);
    gs__free(c->ctx, c->got);
    c->ref_want = c->spmd_want = NULL;
    c->ref = c->got = NULL;
}

GS__FN void gs__chk_free_outs(gs__chk *c) {
    int64_t i;
    if (!c->outs) return;
    for (i = 0; i < c->D * c->n_out; i++) {
        gs__free(c->ctx, c->outs[i]);
        c->outs[i] = NULL;
    }
}

/* The reference run with the observer: the source graph in compute format on storage-format inputs. */
GS__FN gs_result gs__chk_run_ref_observed(gs__chk *c, const void *const *inputs) {
    gs_ctx *ctx = c->ctx;
    gs__exec ex;
    gs__buf *in, *res;
    uint8_t *owned;
    int k, n_res = gs_graph_num_outputs(c->src);
    gs_result r = GS_OK;
    in = (gs__buf *)gs__malloc(ctx, sizeof(gs__buf) * (size_t)(c->n_in + 1));
    owned = (uint8_t *)gs__malloc(ctx, (size_t)c->n_in + 1);
    res = (gs__buf *)gs__malloc(ctx, sizeof(gs__buf) * (size_t)(n_res + 1));
    if (!in || !owned || !res) {
        gs__free(ctx, in);
        gs__free(ctx, owned);
        gs__free(ctx, res);
        return GS_ERR_OUT_OF_MEMORY;
    }
    memset(owned, 0, (size_t)c->n_in + 1);
    memset(res, 0, sizeof(gs__buf) * (size_t)(n_res + 1));
    for (k = 0; k < c->n_in && r == GS_OK; k++) {
        const gs_shape *s = &c->in_shapes[k];
        int64_t n = gs__numel(s);
        in[k].shape = *s;
        in[k].data = (void *)(uintptr_t)inputs[k];
        if (gs__fmt_differs(s->dtype)) {
            void *p = gs__malloc(ctx, (size_t)n * gs__compute_size(s->dtype) + 1);
            if (!p) {
                r = GS_ERR_OUT_OF_MEMORY;
                break;
            }
            gs__to_compute(s->dtype, p, inputs[k], n);
            in[k].data = p;
            owned[k] = 1;
        }
    }
    if (r == GS_OK) {
        memset(&ex, 0, sizeof ex);
        ex.ctx = ctx;
        ex.num_partitions = 1;
        ex.observe = gs__chk_observe_ref;
        ex.observe_user = c;
        r = gs__eval_graph(&ex, c->src, in, res);
        if (r == GS_OK)
            for (k = 0; k < n_res; k++) gs__free(ctx, res[k].data);
    }
    for (k = 0; k < c->n_in; k++)
        if (owned[k]) gs__free(ctx, in[k].data);
    gs__free(ctx, in);
    gs__free(ctx, owned);
    gs__free(ctx, res);
    return r;
}

/* The SPMD program on the runtime with the observer; gathered outputs go to scratch_out. */
GS__FN gs_result gs__chk_run_spmd(gs__chk *c, const void *const *inputs, void *const *scratch_out) {
    gs_result r;
    gs__chk_free_outs(c);
    gs__runtime_observe(c->rt, gs__chk_observe_spmd, c);
    r = gs_runtime_run_global(c->rt, c->spmd, c->in_shapes, c->in_sh, inputs, c->out_shapes, c->out_sh, scratch_out);
    gs__runtime_observe(c->rt, NULL, NULL);
    return r;
}

/* Both runs again with observers, then the first source instruction whose shards differ. d->found is false
   when no recorded value differs (the difference appears only where nothing was recorded). */
GS__FN gs_result gs__chk_locate(gs__chk *c, const void *const *inputs, void *const *scratch_out, const gs_value **bad,
                                gs__chk_diff *diff) {
    gs_ctx *ctx = c->ctx;
    gs_result r;
    int i;
    int64_t dv;
    memset(diff, 0, sizeof *diff);
    c->n_src = c->I->n_src < gs_graph_num_values(c->src) ? c->I->n_src : gs_graph_num_values(c->src);
    c->n_spmd = gs_graph_num_values(c->spmd);
    c->ref_want = (uint8_t *)gs__malloc(ctx, (size_t)c->n_src + 1);
    c->ref = (void **)gs__malloc(ctx, sizeof(void *) * ((size_t)c->n_src + 1));
    c->spmd_want = (uint8_t *)gs__malloc(ctx, (size_t)c->n_spmd + 1);
    c->got = (void **)gs__malloc(ctx, sizeof(void *) * ((size_t)c->D * (size_t)c->n_spmd + 1));
    if (!c->ref_want || !c->ref || !c->spmd_want || !c->got) {
        gs__chk_free_records(c);
        return GS_ERR_OUT_OF_MEMORY;
    }
    memset(c->ref_want, 0, (size_t)c->n_src + 1);
    memset(c->ref, 0, sizeof(void *) * ((size_t)c->n_src + 1));
    memset(c->spmd_want, 0, (size_t)c->n_spmd + 1);
    memset(c->got, 0, sizeof(void *) * ((size_t)c->D * (size_t)c->n_spmd + 1));
    for (i = 0; i < c->n_src; i++) {
        const gs_value *v = c->src->values[i], *p;
        const gs_sharding *s;
        if (!gs__chk_comparable(c, v, &p, &s)) continue;
        c->ref_want[i] = 1;
        c->spmd_want[p->id] = 1;
    }
    r = gs__chk_run_ref_observed(c, inputs);
    if (r == GS_OK) r = gs__chk_run_spmd(c, inputs, scratch_out);
    for (i = 0; r == GS_OK && i < c->n_src && !diff->found; i++) {
        const gs_value *v = c->src->values[i], *p;
        const gs_sharding *s;
        if (!c->ref_want[i] || !c->ref[i] || !gs__chk_comparable(c, v, &p, &s)) continue;
        for (dv = 0; dv < c->D; dv++) c->shards[dv] = c->got[(size_t)dv * (size_t)c->n_spmd + (size_t)p->id];
        gs__chk_diff_shards(c, &v->shape, c->ref[i], false, &p->shape, s, NULL, diff);
        if (diff->found) *bad = v;
    }
    gs__chk_free_records(c);
    return r;
}

/* The instruction that makes output i of g. */
GS__FN const gs_value *gs__chk_output_value(const gs_graph *g, int i) {
    const gs_value *root = g->root;
    if (root && root->op == GS_OP_TUPLE && i < root->n_operands) return root->operands[i];
    return root;
}

/* Step 1: checks the arguments and fills c's counts (nothing allocated yet). */
/* What every check needs of spmd and desc: the source, D, the caller's tolerances, the buffer counts (fn names
   the API function in the errors). */
GS__FN gs_result gs__chk_setup(gs__chk *c, gs_graph *spmd, const gs_check_desc *desc, const char *fn) {
    gs_ctx *ctx = spmd->ctx;
    int np, k;
    c->ctx = ctx;   /* first: gs__chk_end frees through it after any failure here */
    if (!spmd->spmd || !spmd->spmd->src)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: %s is not a program made by gs_partition", fn, spmd->name);
    c->spmd = spmd;
    c->I = spmd->spmd;
    c->src = c->I->src;
    c->D = c->I->num_devices;
    c->user_rtol = c->rtol = desc ? desc->rtol : 0.0;
    c->user_atol = c->atol = desc ? desc->atol : 0.0;
    c->user_given = desc && desc->tolerances_given;
    if (!(c->rtol >= 0.0) || !(c->atol >= 0.0))
        return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: tolerances must be >= 0 (rtol %g, atol %g)", fn, c->rtol, c->atol);
    /* the global inputs: the source parameters' buffers, laid out as the partitioner says */
    np = gs_graph_num_params(c->src);
    if (np != gs_graph_num_params(spmd))
        return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: the source has %d parameters but %s has %d", fn, np, spmd->name,
                       gs_graph_num_params(spmd));
    for (k = 0; k < np; k++) {
        const gs_value *p = c->src->params[k];
        if (!p || !spmd->params[k]) return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: parameter %d is missing", fn, k);
        c->n_in += p->shape.dtype == GS_TUPLE ? p->n_tuple : 1;
    }
    c->n_out = gs_graph_num_outputs(c->src);
    if (c->n_out != gs_graph_num_outputs(spmd))
        return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: the source has %d outputs but %s has %d", fn, c->n_out, spmd->name,
                       gs_graph_num_outputs(spmd));
    return GS_OK;
}

GS__FN gs_result gs__chk_begin(gs__chk *c, gs_graph *spmd, gs_runtime *rt, const gs_check_desc *desc,
                               const void *const *inputs) {
    gs_ctx *ctx = spmd->ctx;
    gs_result r = gs__chk_setup(c, spmd, desc, "gs_partition_check");
    if (r) return r;
    if (!rt) return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_partition_check: the runtime is NULL");
    c->rt = rt;
    if (gs_runtime_num_devices(rt) != c->D)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_partition_check: %s was partitioned for %lld devices but the runtime has %lld",
                       spmd->name, (long long)c->D, (long long)gs_runtime_num_devices(rt));
    if (c->n_in > 0 && !inputs)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_partition_check: inputs is NULL but %s has %d parameter buffers",
                       c->src->name, c->n_in);
    return GS_OK;
}

GS__FN gs_result gs__chk_alloc(gs__chk *c) {
    gs_ctx *ctx = c->ctx;
    int k, j, i, np = gs_graph_num_params(c->src);
    int64_t most = 0;
    c->in_shapes = (gs_shape *)gs__malloc(ctx, sizeof(gs_shape) * (size_t)(c->n_in + 1));
    c->in_sh = (const gs_sharding **)gs__malloc(ctx, sizeof(gs_sharding *) * (size_t)(c->n_in + 1));
    c->out_shapes = (gs_shape *)gs__malloc(ctx, sizeof(gs_shape) * (size_t)(c->n_out + 1));
    c->out_sh = (const gs_sharding **)gs__malloc(ctx, sizeof(gs_sharding *) * (size_t)(c->n_out + 1));
    c->outs = (void **)gs__malloc(ctx, sizeof(void *) * ((size_t)c->D * (size_t)c->n_out + 1));
    c->shards = (const void **)gs__malloc(ctx, sizeof(void *) * (size_t)c->D);
    c->want = (void **)gs__malloc(ctx, sizeof(void *) * (size_t)(c->n_out + 1));
    c->scratch = (void **)gs__malloc(ctx, sizeof(void *) * (size_t)(c->n_out + 1));
    if (c->want) memset(c->want, 0, sizeof(void *) * (size_t)(c->n_out + 1));
    if (c->scratch) memset(c->scratch, 0, sizeof(void *) * (size_t)(c->n_out + 1));
    if (c->outs) memset(c->outs, 0, sizeof(void *) * ((size_t)c->D * (size_t)c->n_out + 1));
    if (!c->in_shapes || !c->in_sh || !c->out_shapes || !c->out_sh || !c->outs || !c->shards || !c->want || !c->scratch)
        return GS_ERR_OUT_OF_MEMORY;
    for (k = 0, i = 0; k < np; k++) {
        const gs_value *p = c->src->params[k];
        for (j = 0; j < (p->shape.dtype == GS_TUPLE ? p->n_tuple : 1); j++, i++) {
            c->in_shapes[i] = p->shape.dtype == GS_TUPLE ? p->tuple[j] : p->shape;
            c->in_sh[i] = gs_partition_param_sharding(c->spmd, i);
        }
    }
    for (k = 0; k < c->n_out; k++) {
        size_t bytes;
        c->out_shapes[k] = gs_graph_output_shape(c->src, k);
        c->out_sh[k] = gs_partition_output_sharding(c->spmd, k);
        if (gs__numel(&c->out_shapes[k]) > most) most = gs__numel(&c->out_shapes[k]);
        bytes = gs_shape_bytes(&c->out_shapes[k]);
        c->want[k] = gs__malloc(ctx, bytes + 1);
        c->scratch[k] = gs__malloc(ctx, bytes + 1);
        if (!c->want[k] || !c->scratch[k]) return GS_ERR_OUT_OF_MEMORY;
        /* all ones (a NaN, -1, true): an element the gather never writes cannot pass for a right one */
        memset(c->scratch[k], 0xff, bytes + 1);
    }
    c->bad = (uint8_t *)gs__malloc(ctx, (size_t)most + 1);
    return c->bad ? GS_OK : GS_ERR_OUT_OF_MEMORY;
}

/* The fewest mantissa bits of any float value output k depends on in the source's entry graph (23 when none is
   narrower than f32): an output computed through bf16 partial sums is as precise as bf16. */
GS__FN int gs__chk_cone_mbits(gs__chk *c, int k) {
    int n = (int)stbds_arrlen(c->src->values), top = 0, i, best = 23;
    const gs_value *ov = gs__chk_output_value(c->src, k);
    const gs_value **stack = (const gs_value **)gs__malloc(c->ctx, sizeof(gs_value *) * (size_t)(n + 1));
    uint8_t *seen = (uint8_t *)gs__malloc(c->ctx, (size_t)n + 1);
    if (!stack || !seen || !ov || ov->graph != c->src) {
        gs__free(c->ctx, (void *)stack);
        gs__free(c->ctx, seen);
        return best;
    }
    memset(seen, 0, (size_t)n + 1);
    stack[top++] = ov;
    seen[ov->id] = 1;
    while (top > 0) {
        const gs_value *v = stack[--top];
        int nt = v->shape.dtype == GS_TUPLE ? v->n_tuple : 1;
        for (i = 0; i < nt; i++) {
            gs_dtype t = v->shape.dtype == GS_TUPLE ? v->tuple[i].dtype : v->shape.dtype;
            if (gs__is_float(t) && gs__dt(t)->mbits > 0 && gs__dt(t)->mbits < best) best = gs__dt(t)->mbits;
        }
        for (i = 0; i < v->n_operands; i++) {
            const gs_value *o = v->operands[i];
            if (o && o->graph == c->src && o->id >= 0 && o->id < n && !seen[o->id]) {
                seen[o->id] = 1;
                stack[top++] = o;
            }
        }
    }
    gs__free(c->ctx, (void *)stack);
    gs__free(c->ctx, seen);
    return best;
}

/* The most partial sums that one all-reduce or reduce-scatter of g (and the loops in it) combines in a float
   type narrower than f32 (1 when none): each such sum rounds to that type once per term added. */
GS__FN int64_t gs__chk_narrow_terms(const gs_graph *g, int64_t D, int depth) {
    int64_t most = 1, i, n = g ? (int64_t)stbds_arrlen(g->values) : 0;
    for (i = 0; i < n && depth < 8; i++) {
        const gs_value *v = g->values[i];
        if ((v->op == GS_OP_ALL_REDUCE || v->op == GS_OP_REDUCE_SCATTER) && gs__is_float(v->shape.dtype) &&
            gs__dt(v->shape.dtype)->mbits > 0 && gs__dt(v->shape.dtype)->mbits < 23) {
            int64_t gsz = v->coll.groups.group_size > 0 ? v->coll.groups.group_size : D;
            if (gsz > most) most = gsz;
        }
        if (v->op == GS_OP_WHILE) {
            int64_t a = gs__chk_narrow_terms(v->body, D, depth + 1);
            if (a > most) most = a;
        }
    }
    return most;
}

/* Sets c->rtol and c->atol for output k. Given by the caller (nonzero, or tolerances_given): those, as they are. By default, with p the
   fewest mantissa bits in the output's cone (gs__chk_cone_mbits): rtol = atol = 1e-5 when p >= 23 (f32, f64),
   else 2^-(p-1), two units in the last place (bf16 2^-6 = 0.015625, f16 2^-9, f8e4m3 2^-2); and atol grows by
   rtol times the root-mean-square of the reference output, since a sum taken in another order (split
   across devices) errs by a fraction of its terms' size, not of its own, which cancellation can make small.
   When p < 23 and the SPMD program combines G partial sums in that narrow type (an all-reduce or
   reduce-scatter over G devices, gs__chk_narrow_terms), that term is multiplied by sqrt(G): each of the G - 1
   additions rounds to p bits (at most half a unit, 2^-(p+1), of the running sum), and independent roundings
   add up like a random walk, so rtol = 4 half-units times sqrt(G) is about four standard deviations. */
GS__FN void gs__chk_tol(gs__chk *c, int k) {
    const gs_shape *os = &c->out_shapes[k];
    int64_t n = gs__numel(os), e, m = 0;
    double sum = 0.0;
    int p;
    if (c->user_given || c->user_rtol > 0.0 || c->user_atol > 0.0) {
        c->rtol = c->user_rtol;
        c->atol = c->user_atol;
        return;
    }
    p = gs__chk_cone_mbits(c, k);
    c->rtol = c->atol = p >= 23 ? 1e-5 : ldexp(1.0, -(p - 1));
    if (!gs__is_float(os->dtype)) return;
    for (e = 0; e < n; e++) {
        double w = gs__chk_get(os->dtype, true, c->want[k], e);
        if (w - w == 0.0) {   /* finite */
            sum += w * w;
            m++;
        }
    }
    if (m > 0) c->atol += c->rtol * sqrt(sum / (double)m) * (p >= 23 ? 1.0 : sqrt((double)gs__chk_narrow_terms(c->spmd, c->D, 0)));
}

/* A {manual} output (each device its own array): every device's copy against the reference program's copy on
   the same device. */
GS__FN void gs__chk_compare_manual(gs__chk *c, int k, gs__chk_diff *o) {
    const gs_shape *os = &c->out_shapes[k];
    int64_t n = gs__numel(os), d, e;
    for (d = 0; d < c->D; d++) {
        const void *got = c->outs[(size_t)d * (size_t)c->n_out + (size_t)k];
        const void *want = c->ref_outs[(size_t)d * (size_t)c->n_out + (size_t)k];
        if (!got || !want) continue;
        for (e = 0; e < n; e++) {
            double a = gs__chk_get(os->dtype, false, got, e), b = gs__chk_get(os->dtype, false, want, e), err;
            if (gs__chk_close(os->dtype, a, b, c->rtol, c->atol, &err)) {
                if (err > o->max_err) o->max_err = err;
                continue;
            }
            if (err > o->max_err) o->max_err = err;
            o->n_bad++;
            if (!o->found) {
                o->found = true;
                o->index = e;
                o->device = d;
                o->got = a;
                o->want = b;
            }
        }
    }
}

/* Step 3: every device's copy of every output against the reference, then every element of the gathered
   global output. An element that no device holds, or that the gather did not fill in correctly, is a
   difference too (device -1). Returns the first output that differs, or -1. */
GS__FN int gs__chk_compare(gs__chk *c, gs_check_report *report, gs__chk_diff *first, int64_t *n_bad,
                           int64_t *n_unheld) {
    int k, bad_out = -1;
    int64_t d, e;
    for (k = 0; k < c->n_out; k++) {
        const gs_shape *os = &c->out_shapes[k];
        gs_shape sshape = gs_graph_output_shape(c->spmd, k);
        int64_t n = gs__numel(os);
        gs__chk_diff o;
        gs__chk_tol(c, k);
        if (c->ref_outs && c->out_sh[k] && c->out_sh[k]->kind == GS_SHARDING_MANUAL) {
            memset(&o, 0, sizeof o);
            gs__chk_compare_manual(c, k, &o);
            if (o.max_err > report->max_abs_err) report->max_abs_err = o.max_err;
            *n_bad += o.n_bad;
            report->n_compared += n;
            if (o.found && bad_out < 0) {
                bad_out = k;
                *first = o;
            }
            continue;
        }
        memset(c->bad, 0, (size_t)n + 1);
        for (d = 0; d < c->D; d++) c->shards[d] = c->outs[(size_t)d * (size_t)c->n_out + (size_t)k];
        gs__chk_diff_shards(c, os, c->want[k], true, &sshape, c->out_sh[k], c->bad, &o);
        for (e = 0; e < n; e++) {
            double a, b, err;
            bool held = (c->bad[e] & 2) != 0;
            if (!held) (*n_unheld)++;
            a = gs__chk_get(os->dtype, true, c->scratch[k], e);
            b = gs__chk_get(os->dtype, true, c->want[k], e);
            if (held && gs__chk_close(os->dtype, a, b, c->rtol, c->atol, &err)) continue;
            if (!(c->bad[e] & 1)) o.n_bad++;
            if (!o.found || e < o.index) {
                o.found = true;
                o.index = e;
                o.device = -1;
                o.got = a;
                o.want = b;
            }
        }
        if (o.max_err > report->max_abs_err) report->max_abs_err = o.max_err;
        *n_bad += o.n_bad;
        report->n_compared += n;
        if (o.found && bad_out < 0) {
            bad_out = k;
            *first = o;
        }
    }
    return bad_out;
}

/* Step 4: a mismatch in output bad_out: name it, and (with locate) the first instruction that differs. */
GS__FN gs_result gs__chk_explain(gs__chk *c, const gs_check_desc *desc, const void *const *inputs,
                                 gs_check_report *report, int bad_out, const gs__chk_diff *first, int64_t n_bad,
                                 int64_t n_unheld) {
    const gs_value *ov = gs__chk_output_value(c->src, bad_out), *fb = NULL;
    const gs_shape *os = &c->out_shapes[bad_out];
    gs__chk_diff loc;
    char head[1024], where[64], ibuf[256], gbuf[64], wbuf[64], unheld[48];
    gs_result r = GS_OK;
    memset(&loc, 0, sizeof loc);
    gs__chk_tol(c, bad_out);
    report->output = bad_out;
    report->first_bad = ov;
    report->index = first->index;
    report->device = first->device;
    report->got = first->got;
    report->want = first->want;
    gs__chk_index_text(os, first->index, ibuf, sizeof ibuf);
    gs__chk_num_text(os->dtype, first->got, gbuf, sizeof gbuf);
    gs__chk_num_text(os->dtype, first->want, wbuf, sizeof wbuf);
    if (first->device >= 0) snprintf(where, sizeof where, "on device %lld", (long long)first->device);
    else snprintf(where, sizeof where, "%s", n_unheld ? "held by no device" : "as gathered");
    snprintf(unheld, sizeof unheld, ", %lld held by no device", (long long)n_unheld);
    snprintf(head, sizeof head, "output %d (%s) element %s %s: got %s, want %s (%lld of %lld output elements differ%s, max |got - want| %.3g, tolerance %g + %g * |want|)",
             bad_out, ov ? ov->name : "?", ibuf, where, gbuf, wbuf, (long long)n_bad, (long long)report->n_compared,
             n_unheld ? unheld : "", report->max_abs_err, c->atol, c->rtol);
    if (desc && desc->locate && !n_unheld) {
        r = gs__chk_locate(c, inputs, c->scratch, &fb, &loc);
        if (r) return r;
    }
    if (loc.found && fb) {
        report->first_bad = fb;
        report->index = loc.index;
        report->device = loc.device;
        report->got = loc.got;
        report->want = loc.want;
        gs__chk_index_text(&fb->shape, loc.index, ibuf, sizeof ibuf);
        gs__chk_num_text(fb->shape.dtype, loc.got, gbuf, sizeof gbuf);
        gs__chk_num_text(fb->shape.dtype, loc.want, wbuf, sizeof wbuf);
        report->message = gs__arena_printf(c->ctx, "first difference at %s %s, element %s on device %lld: got %s, want %s; %s",
                                           gs_op_name(fb->op), fb->name, ibuf, (long long)loc.device, gbuf, wbuf, head);
    } else {
        report->message = gs__arena_printf(c->ctx, "%s%s", head, desc && desc->locate ? "; no earlier instruction differs" : "");
    }
    return report->message ? GS_OK : GS_ERR_OUT_OF_MEMORY;
}

/* true if g's reference needs the devices: a manual region (each device runs it on its own block) or a
   collective written with channel_id, which only a run on the devices gives a meaning */
GS__FN bool gs__chk_needs_devices(const gs_graph *g) {
    int k;
    for (k = 0; k < (int)stbds_arrlen(g->values); k++) {
        const gs_value *v = g->values[k];
        const gs_sharding *vs = v->sharding;
        if (v->op == GS_OP_TO_MANUAL || v->op == GS_OP_TO_FULL ||
            (vs && (vs->kind == GS_SHARDING_MANUAL || (vs->kind == GS_SHARDING_TILED && gs_sharding_manual_group(vs) > 1))) ||
            ((v->op == GS_OP_ALL_REDUCE || v->op == GS_OP_COLLECTIVE_PERMUTE || v->op == GS_OP_RAGGED_ALL_TO_ALL) &&
             v->coll.channel_id != 0))
            return true;
    }
    return false;
}

/* The reference outputs (storage format) into c->want. A source with manual regions (to-manual/to-full), or
   with collectives across partitions written in it (channel_id), runs as the reference program of
   gs__partition_ex on the runtime: everything outside a manual region replicated, each manual region once per
   device on that device's block, the blocks gathered where it ends, the written collectives across the
   devices (the interpreter alone would see only device 0's block, one partition); any other source runs on
   the interpreter. */
GS__FN gs_result gs__chk_reference(gs__chk *c, const void *const *inputs) {
    gs_graph *ref = NULL;
    const gs_sharding **in_sh, **out_sh;
    gs_partition_desc pd;
    gs_result r;
    int k;
    if (!gs__chk_needs_devices(c->src)) return gs_eval(c->src, inputs, c->want);
    memset(&pd, 0, sizeof pd);
    pd.num_devices = c->D;
    if ((r = gs__partition_ex(c->src, &pd, true, &ref)) != GS_OK)
        return gs__err_prefix(c->ctx, "the reference program for the manual regions: ");
    in_sh = (const gs_sharding **)gs__malloc(c->ctx, sizeof(gs_sharding *) * (size_t)(c->n_in + c->n_out + 1));
    if (!in_sh) return GS_ERR_OUT_OF_MEMORY;
    out_sh = in_sh + c->n_in;
    for (k = 0; k < c->n_in; k++) in_sh[k] = gs_partition_param_sharding(ref, k);
    for (k = 0; k < c->n_out; k++) out_sh[k] = gs_partition_output_sharding(ref, k);
    c->ref_outs = (void **)gs__malloc(c->ctx, sizeof(void *) * ((size_t)c->D * (size_t)c->n_out + 1));
    if (!c->ref_outs) {
        gs__free(c->ctx, (void *)in_sh);
        return GS_ERR_OUT_OF_MEMORY;
    }
    memset(c->ref_outs, 0, sizeof(void *) * ((size_t)c->D * (size_t)c->n_out + 1));
    {
        /* every device's outputs too, through the SPMD run's observer pointed at the reference program */
        gs_graph *keep = c->spmd;
        void **keep_outs = c->outs;
        uint8_t *keep_want = c->spmd_want;
        c->spmd = ref;
        c->outs = c->ref_outs;
        c->spmd_want = NULL;
        gs__runtime_observe(c->rt, gs__chk_observe_spmd, c);
        r = gs_runtime_run_global(c->rt, ref, c->in_shapes, in_sh, inputs, c->out_shapes, out_sh, c->want);
        gs__runtime_observe(c->rt, NULL, NULL);
        c->spmd = keep;
        c->outs = keep_outs;
        c->spmd_want = keep_want;
    }
    gs__free(c->ctx, (void *)in_sh);
    return r;
}

/* Step 5: frees what the steps allocated (each pointer is NULL or this check's own). */
GS__FN void gs__chk_end(gs__chk *c) {
    gs_ctx *ctx = c->ctx;
    int k;
    gs__chk_free_outs(c);
    if (c->ref_outs) {
        int64_t i;
        for (i = 0; i < c->D * c->n_out; i++) gs__free(ctx, c->ref_outs[i]);
        gs__free(ctx, c->ref_outs);
    }
    for (k = 0; k < c->n_out; k++) {
        if (c->want) gs__free(ctx, c->want[k]);
        if (c->scratch) gs__free(ctx, c->scratch[k]);
    }
    gs__free(ctx, c->want);
    gs__free(ctx, c->scratch);
    gs__free(ctx, c->bad);
    gs__free(ctx, c->outs);
    gs__free(ctx, (void *)c->shards);
    gs__free(ctx, c->in_shapes);
    gs__free(ctx, (void *)c->in_sh);
    gs__free(ctx, c->out_shapes);
    gs__free(ctx, (void *)c->out_sh);
}

/* A report before anything is compared: not ok, nothing found, message "" */
GS__FN void gs__chk_report_start(gs_check_report *report) {
    if (!report) return;
    memset(report, 0, sizeof *report);
    report->output = -1;
    report->device = -1;
    report->message = "";
}

/* r, with a failed check's message (the context's error) in the report */
GS__FN gs_result gs__chk_report_end(gs_ctx *ctx, gs_check_report *report, gs_result r) {
    if (r) {
        const char *m = ctx->err ? gs__arena_strdup(ctx, ctx->errmsg) : NULL;
        report->ok = false;
        report->message = m ? m : gs_result_str(r);
    }
    return r;
}

GS_API gs_result gs_partition_check(gs_graph *spmd, gs_runtime *rt, const gs_check_desc *desc,
                                    const void *const *inputs, gs_check_report *report) {
    gs__chk c;
    gs_ctx *ctx;
    int64_t n_bad = 0, n_unheld = 0;
    gs_result r;
    int bad_out;
    gs__chk_diff first;
    gs__chk_report_start(report);
    if (!spmd) return GS_ERR_INVALID_ARG;
    ctx = spmd->ctx;
    if (!report) return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_partition_check: report is NULL");
    if (gs_runtime_num_ranks(rt) > 1)   /* every device's values are compared in this process */
        return gs__err(ctx, GS_ERR_UNSUPPORTED, "gs_partition_check: the runtime's devices are spread over %d MPI ranks; "
                       "the check compares every device in one process (compare the gathered outputs on rank 0, as "
                       "gshard-mpi run --check does)", gs_runtime_num_ranks(rt));
    memset(&c, 0, sizeof c);
    memset(&first, 0, sizeof first);
    r = gs__chk_begin(&c, spmd, rt, desc, inputs);
    if (r) return r;
    r = gs__chk_alloc(&c);
    /* the two runs, then the comparison */
    if (r == GS_OK) r = gs__chk_reference(&c, inputs);
    if (r == GS_OK) r = gs__chk_run_spmd(&c, inputs, c.scratch);
    if (r == GS_OK) {
        bad_out = gs__chk_compare(&c, report, &first, &n_bad, &n_unheld);
        report->ok = bad_out < 0;
        if (!report->ok) r = gs__chk_explain(&c, desc, inputs, report, bad_out, &first, n_bad, n_unheld);
    }
    gs__chk_end(&c);
    return gs__chk_report_end(ctx, report, r);
}

/* Every element of the gathered outputs got[] (storage format) against c->want, each output with its tolerance
   (gs__chk_tol). Returns the first output that differs, or -1. */
GS__FN int gs__chk_compare_gathered(gs__chk *c, const void *const *got, gs_check_report *report, gs__chk_diff *first,
                                    int64_t *n_bad) {
    int k, bad_out = -1;
    int64_t e;
    for (k = 0; k < c->n_out; k++) {
        const gs_shape *os = &c->out_shapes[k];
        int64_t n = gs__numel(os);
        gs__chk_tol(c, k);
        for (e = 0; e < n; e++) {
            double a = gs__chk_get(os->dtype, true, got[k], e), b = gs__chk_get(os->dtype, true, c->want[k], e), err;
            bool ok = gs__chk_close(os->dtype, a, b, c->rtol, c->atol, &err);
            if (err > report->max_abs_err) report->max_abs_err = err;
            if (ok) continue;
            (*n_bad)++;
            if (bad_out < 0) {
                bad_out = k;
                first->found = true;
                first->index = e;
                first->device = -1;
                first->got = a;
                first->want = b;
            }
        }
        report->n_compared += n;
    }
    return bad_out;
}

GS_API gs_result gs_partition_check_gathered(gs_graph *spmd, const gs_check_desc *desc, const void *const *inputs,
                                             const void *const *outputs, gs_check_report *report) {
    gs__chk c;
    gs_ctx *ctx;
    gs_check_desc no_locate;
    int64_t n_bad = 0;
    gs_result r;
    int k, bad_out;
    gs__chk_diff first;
    gs__chk_report_start(report);
    if (!spmd) return GS_ERR_INVALID_ARG;
    ctx = spmd->ctx;
    if (!report) return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_partition_check_gathered: report is NULL");
    memset(&c, 0, sizeof c);
    memset(&first, 0, sizeof first);
    memset(&no_locate, 0, sizeof no_locate);
    if (desc) no_locate = *desc;
    no_locate.locate = false;
    r = gs__chk_setup(&c, spmd, desc, "gs_partition_check_gathered");
    if (r == GS_OK && ((c.n_in > 0 && !inputs) || (c.n_out > 0 && !outputs)))
        r = gs__err(ctx, GS_ERR_INVALID_ARG, "gs_partition_check_gathered: %s is NULL but %s has %d %s",
                    !outputs && c.n_out > 0 ? "outputs" : "inputs", c.src->name, !outputs && c.n_out > 0 ? c.n_out : c.n_in,
                    !outputs && c.n_out > 0 ? "outputs" : "parameter buffers");
    if (r == GS_OK) {
        c.out_shapes = (gs_shape *)gs__malloc(ctx, sizeof(gs_shape) * (size_t)(c.n_out + 1));
        c.want = (void **)gs__malloc(ctx, sizeof(void *) * (size_t)(c.n_out + 1));
        if (c.want) memset(c.want, 0, sizeof(void *) * (size_t)(c.n_out + 1));
        if (!c.out_shapes || !c.want) r = GS_ERR_OUT_OF_MEMORY;
    }
    for (k = 0; r == GS_OK && k < c.n_out; k++) {
        c.out_shapes[k] = gs_graph_output_shape(c.src, k);
        if (!(c.want[k] = gs__malloc(ctx, gs_shape_bytes(&c.out_shapes[k]) + 1))) r = GS_ERR_OUT_OF_MEMORY;
    }
    /* the reference: the interpreter, or for manual regions and written collectives a thread runtime of D devices */
    if (r == GS_OK) r = gs_eval_devices(c.src, c.D, inputs, c.want);
    if (r == GS_OK) {
        bad_out = gs__chk_compare_gathered(&c, outputs, report, &first, &n_bad);
        report->ok = bad_out < 0;
        if (!report->ok) r = gs__chk_explain(&c, &no_locate, inputs, report, bad_out, &first, n_bad, 0);
    }
    gs__chk_end(&c);
    return gs__chk_report_end(ctx, report, r);
}

GS_API gs_result gs_eval_devices(gs_graph *g, int64_t num_devices, const void *const *inputs, void *const *outputs) {
    gs_ctx *ctx;
    gs_graph *ref = NULL;
    gs_runtime *rt = NULL;
    gs_runtime_desc rd;
    gs_partition_desc pd;
    gs_shape *shapes;
    const gs_sharding **sh;
    int np, n_in = 0, n_out, k, j, i;
    gs_result r;
    if (!g) return GS_ERR_INVALID_ARG;
    ctx = g->ctx;
    if (num_devices < 1 || num_devices > GS_RUNTIME_MAX_DEVICES)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_eval_devices: num_devices %lld is not in 1..%d", (long long)num_devices,
                       (int)GS_RUNTIME_MAX_DEVICES);
    if (!gs__chk_needs_devices(g)) return gs_eval(g, inputs, outputs);
    np = gs_graph_num_params(g);
    for (k = 0; k < np; k++) n_in += g->params[k] && g->params[k]->shape.dtype == GS_TUPLE ? g->params[k]->n_tuple : 1;
    n_out = gs_graph_num_outputs(g);
    memset(&pd, 0, sizeof pd);
    pd.num_devices = num_devices;
    if (gs__partition_ex(g, &pd, true, &ref) != GS_OK)
        return gs__err_prefix(ctx, "gs_eval_devices: the reference program for the manual regions: ");
    shapes = (gs_shape *)gs__malloc(ctx, sizeof(gs_shape) * (size_t)(n_in + n_out + 1));
    sh = (const gs_sharding **)gs__malloc(ctx, sizeof(gs_sharding *) * (size_t)(n_in + n_out + 1));
    if (!shapes || !sh) {
        gs__free(ctx, shapes);
        gs__free(ctx, (void *)sh);
        return GS_ERR_OUT_OF_MEMORY;
    }
    for (k = 0, i = 0; k < np; k++) {
        const gs_value *p = g->params[k];
        for (j = 0; j < (p->shape.dtype == GS_TUPLE ? p->n_tuple : 1); j++, i++) {
            shapes[i] = p->shape.dtype == GS_TUPLE ? p->tuple[j] : p->shape;
            sh[i] = gs_partition_param_sharding(ref, i);
        }
    }
    for (k = 0; k < n_out; k++) {
        shapes[n_in + k] = gs_graph_output_shape(g, k);
        sh[n_in + k] = gs_partition_output_sharding(ref, k);
    }
    memset(&rd, 0, sizeof rd);
    rd.num_devices = num_devices;
    rd.mode = GS_RUNTIME_THREADED;
    r = gs_runtime_create(ctx, &rd, &rt);
    if (r == GS_OK) r = gs_runtime_run_global(rt, ref, shapes, sh, inputs, shapes + n_in, sh + n_in, outputs);
    gs_runtime_destroy(rt);
    gs__free(ctx, shapes);
    gs__free(ctx, (void *)sh);
    return r;
}
