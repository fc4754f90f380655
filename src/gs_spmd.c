/* gs_spmd.c - the SPMD partitioner's driver: gs_partition (propagate, then partition the entry computation
   through the rules of gs_spmd_ops.c), what it records on the SPMD program, and printing it with explanations
   (gs_api_partition.h). The partitioner's files and their order: see gs_spmd_internal.h. */
#include "gs_spmd_internal.h"

/* ---------------------------------------------------------------------------------------------------------
   What gs_partition records on the SPMD program
   ------------------------------------------------------------------------------------------------------- */
GS_API int gs_partition_num_warnings(const gs_graph *spmd) { return spmd && spmd->spmd ? spmd->spmd->n_warn : 0; }
GS_API const char *gs_partition_warning(const gs_graph *spmd, int i) {
    if (!spmd || !spmd->spmd || i < 0 || i >= spmd->spmd->n_warn) return NULL;
    return spmd->spmd->warn[i];
}
GS_API gs_graph *gs_partition_source(const gs_graph *spmd) { return spmd && spmd->spmd ? spmd->spmd->src : NULL; }
GS_API const char *gs_partition_explain(const gs_graph *spmd, const gs_value *orig) {
    const gs__spmd_info *I = spmd ? spmd->spmd : NULL;
    if (!I || !orig || orig->graph != I->src || orig->id >= I->n_src) return NULL;
    return I->explain[orig->id];
}
GS_API gs_value *gs_partition_lookup(const gs_graph *spmd, const gs_value *orig, const gs_sharding **sharding) {
    const gs__spmd_info *I = spmd ? spmd->spmd : NULL;
    if (sharding) *sharding = NULL;
    if (!I || !orig || orig->graph != I->src || orig->id >= I->n_src || !I->map[orig->id]) return NULL;
    if (sharding) *sharding = I->sh[orig->id];
    return I->map[orig->id];
}
GS_API const gs_sharding *gs_partition_output_sharding(const gs_graph *spmd, int i) {
    const gs__spmd_info *I = spmd ? spmd->spmd : NULL;
    if (!I || i < 0 || i >= I->n_out) return NULL;
    return I->out_sh[i];
}
GS_API const gs_sharding *gs_partition_param_sharding(const gs_graph *spmd, int k) {
    const gs__spmd_info *I = spmd ? spmd->spmd : NULL;
    if (!I || k < 0 || k >= I->n_in) return NULL;
    return I->in_sh[k];
}

/* --explain: what the partitioner learnt about the entry program r's values: the source value whose partitioning
   wrote each, and why each collective is there */
GS__FN bool gs__sp_record_why(gs__sp *sp, gs_graph *r, gs__spmd_info *I) {
    int n = (int)stbds_arrlen(r->values), i;
    I->n_spmd = n;
    I->chip = sp->chip;
    I->group = (int *)gs__arena_alloc(sp->ctx, sizeof(int) * (size_t)(n ? n : 1));
    I->why = (const char **)gs__arena_alloc(sp->ctx, sizeof(char *) * (size_t)(n ? n : 1));
    if (!I->group || !I->why) return false;
    for (i = 0; i < n; i++) {
        I->group[i] = i < (int)stbds_arrlen(sp->group) ? sp->group[i] : -1;
        I->why[i] = NULL;
    }
    for (i = 0; i < (int)stbds_arrlen(sp->why); i++)
        if (sp->why[i].g == r && sp->why[i].id < n) I->why[sp->why[i].id] = sp->why[i].text;
    return true;
}

/* ---- XLA's partitioner options by name ---- */
/* the switches that do not change gshard.h's program, by bit in gs_partition_desc.xla_inert */
static const char *const gs__sp_xla_inert[] = {
    "enable_enzyme_opt", "skip_checking_windowed_einsum_users", "cache_all_gather",
    "bidirectional_decomposed_all_gather", "disable_ag_rewrite_for_multiple_consumers", "allow_module_signature_change", "report_instruction_count"};

/* the switches that change the program (true/false), in the order gs_partition_xla_option's switch reads them */
static const char *const gs__sp_xla_switch[] = {
    "unroll_windowed_einsum", "bidirectional_windowed_einsum", "enable_windowed_einsum_for_reduce_scatter",
    "partial_windowed_einsum", "choose_faster_windowed_einsum_over_mem", "conv_halo_exchange_always_on_lhs",
    "enable_windowed_einsum_for_all_gather"};

/* "123" -> 123 (0 .. 2^62); false for anything else */
GS__FN bool gs__sp_parse_count(const char *s, int64_t *out) {
    int64_t x = 0;
    if (!s || !*s) return false;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || x > ((int64_t)1 << 62) / 10) return false;
        x = x * 10 + (*s - '0');
    }
    *out = x;
    return true;
}

GS_API gs_result gs_partition_xla_option(gs_ctx *ctx, gs_partition_desc *desc, const char *name, const char *value) {
    bool yes = value && strcmp(value, "true") == 0, no = value && strcmp(value, "false") == 0;
    int64_t n = 0;
    size_t i;
    if (!ctx) return GS_ERR_INVALID_ARG;
    if (!desc || !name || !value) return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_partition_xla_option: NULL argument");
    if (strcmp(name, "threshold_for_windowed_einsum_mib") == 0 || strcmp(name, "total_bytes_windowed_einsum_threshold") == 0) {
        bool mib = name[0] == 't' && name[1] == 'h';
        if (!gs__sp_parse_count(value, &n) || (mib && n > ((int64_t)1 << 40)))
            return gs__err(ctx, GS_ERR_INVALID_ARG, "XLA option %s wants a non-negative integer%s, not '%s'", name,
                           mib ? " of MiB" : " of bytes", value);
        if (mib) desc->windowed_einsum_bytes = n == 0 ? 1 : n << 20;   /* 0: every operand qualifies */
        else desc->windowed_einsum_total_bytes = n == 0 ? 1 : n;
        return GS_OK;
    }
    if (strcmp(name, "report_instruction_count") == 0) {
        if (!gs__sp_parse_count(value, &n))
            return gs__err(ctx, GS_ERR_INVALID_ARG, "XLA option %s wants a non-negative integer, not '%s'", name, value);
        desc->xla_inert |= 1u << (sizeof gs__sp_xla_inert / sizeof gs__sp_xla_inert[0] - 1);
        return GS_OK;
    }
    for (i = 0; i < sizeof gs__sp_xla_switch / sizeof gs__sp_xla_switch[0]; i++)
        if (strcmp(name, gs__sp_xla_switch[i]) == 0) break;
    if (!yes && !no) {
        size_t j;
        for (j = 0; j < sizeof gs__sp_xla_inert / sizeof gs__sp_xla_inert[0]; j++)
            if (strcmp(name, gs__sp_xla_inert[j]) == 0) break;
        if (i < sizeof gs__sp_xla_switch / sizeof gs__sp_xla_switch[0] || j < sizeof gs__sp_xla_inert / sizeof gs__sp_xla_inert[0])
            return gs__err(ctx, GS_ERR_INVALID_ARG, "XLA option %s wants true or false, not '%s'", name, value);
    }
    switch (i) {   /* gs__sp_xla_switch's order */
    case 0: desc->windowed_einsum_unroll = yes; return GS_OK;
    case 1: desc->windowed_einsum_bidirectional = yes; return GS_OK;
    case 2: desc->windowed_einsum_no_reduce_scatter = no; return GS_OK;
    case 3: desc->windowed_einsum_partial = yes; return GS_OK;
    case 4: desc->windowed_einsum_prefer_speed = yes; return GS_OK;
    case 5: desc->conv_halo_on_rhs = no; return GS_OK;
    case 6:
        if (no) desc->windowed_einsum_bytes = -1;
        else if (desc->windowed_einsum_bytes < 0) desc->windowed_einsum_bytes = 0;
        return GS_OK;
    default: break;
    }
    for (i = 0; i + 1 < sizeof gs__sp_xla_inert / sizeof gs__sp_xla_inert[0]; i++)
        if (strcmp(name, gs__sp_xla_inert[i]) == 0) {
            desc->xla_inert |= 1u << i;
            return GS_OK;
        }
    return gs__err(ctx, GS_ERR_INVALID_ARG,
                   "unknown XLA partitioner option '%s' (known: threshold_for_windowed_einsum_mib, "
                   "total_bytes_windowed_einsum_threshold, unroll_windowed_einsum, bidirectional_windowed_einsum, "
                   "enable_windowed_einsum_for_all_gather, partial_windowed_einsum, "
                   "choose_faster_windowed_einsum_over_mem, conv_halo_exchange_always_on_lhs, enable_enzyme_opt, "
                   "skip_checking_windowed_einsum_users, cache_all_gather, bidirectional_decomposed_all_gather, "
                   "enable_windowed_einsum_for_reduce_scatter, disable_ag_rewrite_for_multiple_consumers, "
                   "allow_module_signature_change, report_instruction_count)", name);
}

/* the flattened parameter buffers' shardings, in gs_eval's order */
GS__FN bool gs__sp_in_shardings(gs__sp *sp, gs_graph *g, gs__spmd_info *I) {
    int k, n = 0, j = 0, i;
    for (k = 0; k < gs_graph_num_params(g); k++) {
        const gs_value *p = g->params[k];
        n += p && p->shape.dtype == GS_TUPLE ? p->n_tuple : 1;
    }
    I->n_in = n;
    I->in_sh = (const gs_sharding **)gs__arena_alloc(sp->ctx, sizeof(gs_sharding *) * (size_t)(n ? n : 1));
    if (!I->in_sh) return false;
    for (k = 0; k < gs_graph_num_params(g); k++) {
        const gs_value *p = g->params[k];
        const gs_sharding *s = gs__sp_sh(sp, p);
        if (!p) continue;
        if (p->shape.dtype == GS_TUPLE)
            for (i = 0; i < p->n_tuple; i++) I->in_sh[j++] = gs__sp_elem(s, i);
        else
            I->in_sh[j++] = s;
    }
    return true;
}

/* XLA's entry policy (gs_partition_desc.xla_compat): a parameter or root without a sharding is pinned
   replicated; a tuple gets a tuple of replicated elements */
GS__FN gs_result gs__sp_xla_entry_policy(gs__sp *sp, gs_graph *g) {
    int k, i;
    for (k = 0; k <= gs_graph_num_params(g); k++) {
        gs_value *v = k < gs_graph_num_params(g) ? g->params[k] : g->root;
        const gs_sharding *s = sp->rep;
        if (!v || v->sharding) continue;
        if (v->shape.dtype == GS_TUPLE) {
            const gs_sharding **el = (const gs_sharding **)gs__arena_alloc(sp->ctx, sizeof(gs_sharding *) * (size_t)(v->n_tuple + 1));
            if (!el) return gs__err(sp->ctx, GS_ERR_OUT_OF_MEMORY, "gs_partition: out of memory");
            for (i = 0; i < v->n_tuple; i++) el[i] = sp->rep;
            if (!(s = gs_sharding_tuple(sp->ctx, v->n_tuple, el))) return sp->ctx->err;
        }
        if (gs_value_set_sharding(v, s) != GS_OK) return sp->ctx->err;
    }
    return GS_OK;
}

GS_API gs_result gs_partition(gs_graph *g, const gs_partition_desc *desc, gs_graph **out) {
    return gs__partition_ex(g, desc, false, out);
}

/* Every tiled sharding of g's values names each of the D devices once, as XLA's partitioner requires (a device
   outside a subset would hold no part of the value; propagation alone allows subsets). */
GS__FN gs_result gs__sp_check_cover(gs_ctx *ctx, const gs_graph *g, int64_t D) {
    int i, k, n = (int)stbds_arrlen(g->values);
    for (i = 0; i < n; i++) {
        const gs_value *v = g->values[i];
        const gs_sharding *s = v->sharding;
        int m = s && s->kind == GS_SHARDING_TUPLE ? s->n_elems : 1;
        for (k = 0; s && k < m; k++) {
            const gs_sharding *e = s->kind == GS_SHARDING_TUPLE ? s->elems[k] : s;
            if (e->kind == GS_SHARDING_TILED &&
                gs_sharding_validate(ctx, e, s->kind == GS_SHARDING_TUPLE ? v->tuple[k] : v->shape, D) != GS_OK)
                return gs__err_prefix(ctx, "gs_partition: %s: ", v->name);
        }
    }
    return GS_OK;
}

GS__FN gs_result gs__partition_ex(gs_graph *g, const gs_partition_desc *desc, bool reference, gs_graph **out) {
    gs_ctx *ctx;
    gs__sp sp;
    gs__sp_g G;
    gs_graph *r = NULL;
    gs__spmd_info *I;
    gs_propagate_desc pd;
    gs_result res;
    int i, n;
    if (out) *out = NULL;
    if (!g) return GS_ERR_INVALID_ARG;
    ctx = g->ctx;
    if (ctx->err) return ctx->err;
    if (!out) return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_partition: out is NULL");
    if (g->spmd) return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_partition: %s is already an SPMD program", g->name);
    memset(&sp, 0, sizeof sp);
    if (desc) sp.desc = *desc;
    sp.D = sp.desc.num_devices ? sp.desc.num_devices : g->num_partitions;
    if (sp.D < 1 || sp.D > ((int64_t)1 << 20))
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_partition: num_devices %lld is out of range (1 .. 2^20)",
                       (long long)sp.D);
    sp.we_bytes = sp.desc.windowed_einsum_bytes == 0 ? (int64_t)256 << 20 : sp.desc.windowed_einsum_bytes < 0 ? -1
                : sp.desc.windowed_einsum_bytes;
    sp.ctx = ctx;
    sp.chip = sp.desc.chip ? sp.desc.chip : gs_chip_find("v5e");
    if ((res = gs_chip_check(ctx, sp.chip)) != GS_OK || (res = gs__cm_need_ici(ctx, "gs_partition", sp.chip)) != GS_OK)
        return gs__err_prefix(ctx, "gs_partition: desc.chip: ");
    if ((res = gs__verify_once(g)) != GS_OK) return res;
    if (!(sp.rep = gs_sharding_replicated(ctx))) return ctx->err ? ctx->err : GS_ERR_OUT_OF_MEMORY;
    pd.num_devices = sp.D;
    sp.reference = reference;
    if (!reference && sp.desc.xla_compat && (res = gs__sp_xla_entry_policy(&sp, g)) != GS_OK) return res;
    if (!reference && (res = gs_propagate(g, &pd)) != GS_OK) return res;
    if ((res = gs__sp_check_cover(ctx, g, sp.D)) != GS_OK) return res;
    n = (int)stbds_arrlen(g->values);
    gs__sb_init(&sp.ex, ctx);
    memset(&G, 0, sizeof G);
    I = (gs__spmd_info *)gs__arena_alloc(ctx, sizeof *I);
    if (I) {
        I->src = g;
        I->n_src = n;
        I->num_devices = sp.D;
        I->map = (gs_value **)gs__arena_alloc(ctx, sizeof(gs_value *) * (size_t)(n ? n : 1));
        I->sh = (const gs_sharding **)gs__arena_alloc(ctx, sizeof(gs_sharding *) * (size_t)(n ? n : 1));
        I->explain = (const char **)gs__arena_alloc(ctx, sizeof(char *) * (size_t)(n ? n : 1));
    }
    if (I && I->map && I->sh && I->explain && gs__sp_in_shardings(&sp, g, I) && gs__sp_force_init(&sp, g)) {
        sp.explain = I->explain;
        r = gs__sp_run(&sp, &G, g, NULL, NULL);
        if (r && !gs__sp_force_check(&sp)) r = NULL;
    }
    if (r && !gs__sp_record_why(&sp, r, I)) r = NULL;
    if (r) {
        const gs_sharding *rs = G.vals[g->root->id].sh;
        r->num_partitions = sp.D;
        r->module_name = g->module_name;
        for (i = 0; i < n; i++) {
            I->map[i] = G.vals[i].v && G.vals[i].v->graph == r ? G.vals[i].v : NULL;
            I->sh[i] = G.vals[i].sh;
        }
        I->n_out = gs_graph_num_outputs(g);
        I->out_sh = (const gs_sharding **)gs__arena_alloc(ctx, sizeof(gs_sharding *) * (size_t)(I->n_out ? I->n_out : 1));
        if (I->out_sh)
            for (i = 0; i < I->n_out; i++) I->out_sh[i] = g->root->shape.dtype == GS_TUPLE ? gs__sp_elem(rs, i) : rs;
        I->n_warn = (int)stbds_arrlen(sp.warn);
        I->warn = (const char **)gs__arena_alloc(ctx, sizeof(char *) * (size_t)(I->n_warn ? I->n_warn : 1));
        if (I->warn)
            for (i = 0; i < I->n_warn; i++) I->warn[i] = sp.warn[i];
        if (!I->out_sh || !I->warn) r = NULL;
        else r->spmd = I;
    }
    gs__sp_g_free(&sp, &G);
    gs__free(ctx, (void *)sp.force);
    gs__free(ctx, sp.forced_used);
    stbds_arrfree(sp.group);
    stbds_arrfree(sp.why);
    stbds_arrfree(sp.tagged);
    stbds_arrfree(sp.warn);
    gs__sb_free(&sp.ex);
    if (!r) return ctx->err ? ctx->err : gs__err(ctx, GS_ERR_OUT_OF_MEMORY, "gs_partition: out of memory");
    *out = r;
    return GS_OK;
}

/* ---- printing with explanations ---- */
typedef struct gs__sp_pr { const gs_graph *spmd; int next; } gs__sp_pr;

/* source value s's comment: name, op, sharding and explanation, its extra lines indented */
GS__FN void gs__sp_comment_src(gs__sb *sb, const gs__spmd_info *I, gs_ctx *ctx, int s) {
    const char *e = I->explain[s], *nl;
    gs__sb_printf(sb, "// %s = %s, sharding %s%s", I->src->values[s]->name, gs_op_name(I->src->values[s]->op),
                  gs__nt_sharding_text(ctx, I->sh[s], I->src->values[s]), e ? ": " : "");
    while (e && (nl = strchr(e, '\n')) != NULL) {
        gs__sb_printf(sb, "%.*s\n//   ", (int)(nl - e), e);
        e = nl + 1;
    }
    gs__sb_printf(sb, "%s\n", e ? e : "");
}

/* before each SPMD value: the comments of the source instructions whose partitioning wrote it (and of those
   before them that wrote nothing of their own), then why it is there when it is a collective */
GS__FN void gs__sp_comment(gs__sb *sb, const gs_value *v, void *user) {
    gs__sp_pr *P = (gs__sp_pr *)user;
    const gs__spmd_info *I = P->spmd->spmd;
    int g, s;
    if (v->graph != P->spmd || v->id < 0 || v->id >= I->n_spmd) return;
    g = I->group[v->id];
    if (v->id == I->n_spmd - 1) g = I->n_src - 1;   /* the last value: whatever is left */
    for (s = P->next; s <= g; s++)
        if (I->map[s] && I->map[s]->graph == P->spmd) gs__sp_comment_src(sb, I, P->spmd->ctx, s);
    if (g >= P->next) P->next = g + 1;
    if (I->why[v->id]) gs__sb_printf(sb, "//   %s %s\n", gs_value_name(v), I->why[v->id]);
}

GS_API const char *gs_partition_print(gs_graph *spmd, bool explain) {
    gs__sp_pr P;
    if (!spmd) return NULL;
    if (!explain || !spmd->spmd) return gs_hlo_print(spmd);
    P.spmd = spmd;
    P.next = 0;
    return gs__hlo_print_ex(spmd, gs__sp_comment, &P);
}
