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

GS_API gs_result gs_partition(gs_graph *g, const gs_partition_desc *desc, gs_graph **out) {
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
    if ((res = gs__verify_once(g)) != GS_OK) return res;
    if (!(sp.rep = gs_sharding_replicated(ctx))) return ctx->err ? ctx->err : GS_ERR_OUT_OF_MEMORY;
    pd.num_devices = sp.D;
    if ((res = gs_propagate(g, &pd)) != GS_OK) return res;
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
    if (I && I->map && I->sh && I->explain && gs__sp_in_shardings(&sp, g, I)) {
        sp.explain = I->explain;
        r = gs__sp_run(&sp, &G, g, NULL, NULL);
    }
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
    stbds_arrfree(sp.warn);
    gs__sb_free(&sp.ex);
    if (!r) return ctx->err ? ctx->err : gs__err(ctx, GS_ERR_OUT_OF_MEMORY, "gs_partition: out of memory");
    *out = r;
    return GS_OK;
}

/* ---- printing with explanations ---- */
typedef struct gs__sp_pr { const gs_graph *spmd; const int *rev; } gs__sp_pr;

GS__FN void gs__sp_comment(gs__sb *sb, const gs_value *v, void *user) {
    const gs__sp_pr *P = (const gs__sp_pr *)user;
    const gs__spmd_info *I = P->spmd->spmd;
    int s;
    if (v->graph != P->spmd || v->id < 0 || v->id >= (int)stbds_arrlen(P->spmd->values)) return;
    s = P->rev[v->id];
    if (s < 0) return;
    gs__sb_printf(sb, "// %s = %s, sharding %s%s%s\n", I->src->values[s]->name, gs_op_name(I->src->values[s]->op),
                  gs__nt_sharding_text(P->spmd->ctx, I->sh[s], I->src->values[s]), I->explain[s] ? ": " : "",
                  I->explain[s] ? I->explain[s] : "");
}

GS_API const char *gs_partition_print(gs_graph *spmd, bool explain) {
    gs__sp_pr P;
    int *rev, i, n;
    const char *r;
    if (!spmd) return NULL;
    if (!explain || !spmd->spmd) return gs_hlo_print(spmd);
    n = (int)stbds_arrlen(spmd->values);
    rev = (int *)gs__malloc(spmd->ctx, sizeof(int) * (size_t)(n ? n : 1));
    if (!rev) return NULL;
    for (i = 0; i < n; i++) rev[i] = -1;
    for (i = 0; i < spmd->spmd->n_src; i++) {
        const gs_value *m = spmd->spmd->map[i];
        if (m && m->graph == spmd && rev[m->id] < 0) rev[m->id] = i;
    }
    P.spmd = spmd;
    P.rev = rev;
    r = gs__hlo_print_ex(spmd, gs__sp_comment, &P);
    gs__free(spmd->ctx, rev);
    return r;
}
