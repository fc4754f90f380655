/* gs_spmd_dot.c - the partitioner's dot strategies: dot and convolution dims as one batch/contracting/free
   classification, the candidate operand shardings priced by the reshards they need, and the windowed einsum loop. */
#include "gs_spmd_internal.h"

/* ---- a rough cost of a reshard (bytes a device sends), by the planner's steps on tile counts; *secs gets
   the steps' estimated time on sp->chip (each step one collective over a ring of the devices it mixes) ---- */
GS__FN double gs__sp_est(gs__sp *sp, const gs_sharding *s, const gs_sharding *t, const gs_shape *full, double *secs) {
    gs__ta A, B;
    int rank = full->rank, d, e;
    int64_t k[GS_MAX_RANK + 1];
    double cost = 0, loc;
    gs_shape ls;
    *secs = 0;
    if (!s || !t || s == t || gs_sharding_equal(s, t)) return 0;
    if (gs__sp_is_rep(s) && gs__sp_is_rep(t)) return 0;
    if (!gs__sp_view(sp, s, rank, &A) || !gs__sp_view(sp, t, rank, &B)) { *secs = 1e30; return 1e30; }
    for (d = 0; d <= rank; d++) k[d] = A.dims[d];
    ls = gs__sp_local(s, *full);
    loc = (double)gs_shape_bytes(&ls);
    for (;;) {
        int fs = -1, ft = -1;
        int64_t m = 1;
        for (d = 0; d < rank && fs < 0; d++) {
            if (k[d] <= B.dims[d] || k[d] % B.dims[d]) continue;
            for (e = 0; e < rank; e++) {
                int64_t mm;
                if (e == d || k[e] >= B.dims[e] || B.dims[e] % k[e]) continue;
                mm = gs__gcd(k[d] / B.dims[d], B.dims[e] / k[e]);
                if (mm < 2 || !gs__sp_aligned(full->dims[d], k[d] / mm, k[d])) continue;
                if (k[e] > 1 && !gs__sp_aligned(full->dims[e], k[e], k[e] * mm)) continue;
                fs = d; ft = e; m = mm;
                break;
            }
        }
        if (fs < 0) break;
        cost += loc * (double)(m - 1) / (double)m;
        *secs += gs__sp_coll_secs(sp, GS_COLLECTIVE_ALL_TO_ALL, loc * (double)m, m);
        k[fs] /= m;
        k[ft] *= m;
    }
    for (d = 0; d < rank; d++) {
        int64_t m = 0;
        if (k[d] == 1) continue;
        if (k[d] > B.dims[d]) m = (k[d] % B.dims[d] == 0 && gs__sp_aligned(full->dims[d], B.dims[d], k[d])) ? k[d] / B.dims[d] : k[d];
        else if (k[d] < B.dims[d] && (B.dims[d] % k[d] || !gs__sp_aligned(full->dims[d], k[d], B.dims[d]))) m = k[d];
        if (m > 1) {
            cost += loc * (double)(m - 1);
            *secs += gs__sp_coll_secs(sp, GS_COLLECTIVE_ALL_GATHER, loc * (double)m, m);
            loc *= (double)m;
            k[d] /= m;
        }
    }
    {
        bool moved = false;
        for (d = 0; d < rank; d++)
            if (k[d] != A.dims[d]) moved = true;
        for (d = 0; d < rank; d++)
            if (k[d] < B.dims[d]) { moved = true; loc /= (double)(B.dims[d] / k[d]); }
        if (!moved && cost == 0) {   /* only a permute */
            cost = loc;
            *secs = gs__sp_coll_secs(sp, GS_COLLECTIVE_PERMUTE, loc, 2);
        }
    }
    return cost;
}

/* ---- dot: choose an iteration-space sharding ---- */
/* The iteration space: batch, lhs-free, rhs-free dims (the result's, in order nb, nlf, nrf), then contracting
   dims. A convolution without split real spatial dims uses it too (read as a dot, gs__conv_dot_kinds): its
   batch-like spatial dims are batch, input batch, lhs-free and real spatial dims lhs-free, output features and
   rhs-free spatial dims rhs-free, input features, contracting spatial dims and real kernel spatial dims (no lhs
   dim) contracting. */
typedef struct gs__sp_dotdims {
    int nb, nlf, nrf, nc, ri, nout;
    int lhs_of[GS_MAX_RANK * 2], rhs_of[GS_MAX_RANK * 2];   /* iteration dim -> operand dim or -1 */
    int out_of[GS_MAX_RANK * 2];                            /* iteration dim -> result dim or -1 */
    int it_of_lhs[GS_MAX_RANK], it_of_rhs[GS_MAX_RANK];     /* operand dim -> iteration dim */
    int it_of_out[GS_MAX_RANK];                             /* result dim -> iteration dim */
    int64_t size[GS_MAX_RANK * 2];
    uint32_t zero_rhs;   /* rhs dims besides contracting ones whose padding must read 0: a convolution's batch and
                            rhs-free spatial dims, whose windows also meet base-dilation holes or edge padding */
} gs__sp_dotdims;

/* the inverse maps */
GS__FN void gs__sp_dot_index(gs__sp_dotdims *D) {
    int i;
    for (i = 0; i < D->ri; i++) {
        if (D->lhs_of[i] >= 0) D->it_of_lhs[D->lhs_of[i]] = i;
        if (D->rhs_of[i] >= 0) D->it_of_rhs[D->rhs_of[i]] = i;
        if (D->out_of[i] >= 0) D->it_of_out[D->out_of[i]] = i;
    }
}

/* one iteration dim: lhs, rhs and result dims (-1 where absent) and its extent */
GS__FN void gs__sp_it_add(gs__sp_dotdims *D, int64_t l, int64_t r, int64_t o, int64_t size) {
    D->lhs_of[D->ri] = (int)l;
    D->rhs_of[D->ri] = (int)r;
    D->out_of[D->ri] = (int)o;
    D->size[D->ri++] = size;
}

GS__FN bool gs__sp_conv_dims(const gs_value *v, gs__sp_dotdims *D) {
    const gs_conv_dims *cd = &v->conv->dims;
    const gs_shape *L = &v->operands[0]->shape, *R = &v->operands[1]->shape;
    gs__cdk kind[GS_MAX_RANK];
    int i, n_conv = gs__conv_dot_kinds(v, kind), n_contract = 0;
    memset(D, 0, sizeof *D);
    for (i = 0; i < cd->n_spatial; i++) n_contract += kind[i] == GS__CDK_CONTRACT;
    if (3 + cd->n_spatial + n_conv + n_contract > GS_MAX_RANK) return false;   /* iteration shardings: rank ri */
    for (i = 0; i < GS_MAX_RANK * 2; i++) D->lhs_of[i] = D->rhs_of[i] = D->out_of[i] = -1;
    for (i = 0; i < cd->n_spatial; i++)
        if (kind[i] == GS__CDK_BATCH) {
            gs__sp_it_add(D, cd->input_spatial[i], cd->kernel_spatial[i], cd->output_spatial[i],
                          v->shape.dims[cd->output_spatial[i]]);
            D->zero_rhs |= 1u << cd->kernel_spatial[i];
        }
    D->nb = D->ri;
    gs__sp_it_add(D, cd->input_batch, -1, cd->output_batch, v->shape.dims[cd->output_batch]);
    for (i = 0; i < cd->n_spatial; i++)
        if (kind[i] == GS__CDK_LHS_FREE || kind[i] == GS__CDK_CONV)
            gs__sp_it_add(D, cd->input_spatial[i], -1, cd->output_spatial[i], v->shape.dims[cd->output_spatial[i]]);
        else if (kind[i] == GS__CDK_CONTRACT)   /* the result's extent-1 dim: every result dim is an iteration dim */
            gs__sp_it_add(D, -1, -1, cd->output_spatial[i], 1);
    D->nlf = D->ri - D->nb;
    gs__sp_it_add(D, -1, cd->kernel_output_feature, cd->output_feature, v->shape.dims[cd->output_feature]);
    for (i = 0; i < cd->n_spatial; i++)
        if (kind[i] == GS__CDK_RHS_FREE) {
            gs__sp_it_add(D, -1, cd->kernel_spatial[i], cd->output_spatial[i], v->shape.dims[cd->output_spatial[i]]);
            D->zero_rhs |= 1u << cd->kernel_spatial[i];
        }
    D->nout = D->ri;
    D->nrf = D->nout - D->nb - D->nlf;
    gs__sp_it_add(D, cd->input_feature, cd->kernel_input_feature, -1, R->dims[cd->kernel_input_feature]);
    for (i = 0; i < cd->n_spatial; i++) {
        if (kind[i] == GS__CDK_CONTRACT)
            gs__sp_it_add(D, cd->input_spatial[i], cd->kernel_spatial[i], -1, L->dims[cd->input_spatial[i]]);
        else if (kind[i] == GS__CDK_CONV)
            gs__sp_it_add(D, -1, cd->kernel_spatial[i], -1, R->dims[cd->kernel_spatial[i]]);
    }
    D->nc = D->ri - D->nout;
    /* the extent-1 operand dims of free spatial dims (the kernel's of an lhs-free dim, the input's of an rhs-free
       one) are in no iteration dim: a split of them is dropped */
    for (i = 0; i < GS_MAX_RANK; i++) D->it_of_lhs[i] = D->it_of_rhs[i] = GS__DEST_REP;
    gs__sp_dot_index(D);
    return true;
}

GS__FN bool gs__sp_dot_dims(const gs_value *v, gs__sp_dotdims *D) {
    const gs_dot_dims *dd = v->dot;
    const gs_shape *L = &v->operands[0]->shape, *R = &v->operands[1]->shape;
    int i, a = 0;
    uint32_t lu = 0, ru = 0;
    memset(D, 0, sizeof *D);
    for (i = 0; i < GS_MAX_RANK * 2; i++) D->lhs_of[i] = D->rhs_of[i] = D->out_of[i] = -1;
    D->nb = dd->n_batch;
    D->nc = dd->n_contract;
    for (i = 0; i < dd->n_batch; i++) {
        lu |= 1u << dd->lhs_batch[i];
        ru |= 1u << dd->rhs_batch[i];
    }
    for (i = 0; i < dd->n_contract; i++) {
        lu |= 1u << dd->lhs_contract[i];
        ru |= 1u << dd->rhs_contract[i];
    }
    for (i = 0; i < dd->n_batch; i++, a++) {
        D->lhs_of[a] = (int)dd->lhs_batch[i];
        D->rhs_of[a] = (int)dd->rhs_batch[i];
        D->size[a] = L->dims[dd->lhs_batch[i]];
    }
    for (i = 0; i < L->rank; i++)
        if (!((lu >> i) & 1u)) { D->lhs_of[a] = i; D->size[a] = L->dims[i]; a++; D->nlf++; }
    for (i = 0; i < R->rank; i++)
        if (!((ru >> i) & 1u)) { D->rhs_of[a] = i; D->size[a] = R->dims[i]; a++; D->nrf++; }
    D->nout = a;
    for (i = 0; i < dd->n_contract; i++, a++) {
        D->lhs_of[a] = (int)dd->lhs_contract[i];
        D->rhs_of[a] = (int)dd->rhs_contract[i];
        D->size[a] = L->dims[dd->lhs_contract[i]];
    }
    D->ri = a;
    if (a > GS_MAX_RANK) return false;   /* iteration shardings are shardings of a rank-a array */
    for (i = 0; i < D->nout; i++) D->out_of[i] = i;
    gs__sp_dot_index(D);
    return true;
}

/* projections of an iteration sharding */
GS__FN const gs_sharding *gs__sp_proj(gs__sp *sp, const gs_sharding *I, const gs__sp_dotdims *D, int which,
                                      int out_rank) {
    int dest[GS_MAX_RANK * 2], a;
    memset(dest, 0, sizeof dest);
    for (a = 0; a < D->ri; a++) {
        int o = which == 0 ? D->lhs_of[a] : which == 1 ? D->rhs_of[a] : D->out_of[a];
        dest[a] = o >= 0 ? o : GS__DEST_REP;
    }
    return gs__sh_map(sp->ctx, I, out_rank, dest);
}

/* an operand's sharding as an iteration sharding (the dims it does not have unsplit) */
GS__FN const gs_sharding *gs__sp_lift(gs__sp *sp, const gs_sharding *s, const int *it_of, int rank, int ri) {
    int dest[GS_MAX_RANK], d;
    if (gs__sp_is_rep(s)) return gs__sp_rep(sp);
    for (d = 0; d < rank; d++) dest[d] = it_of[d];
    return gs__sh_map(sp->ctx, s, ri, dest);
}

GS__FN gs_value *gs__sp_windowed_dot(gs__sp *sp, const gs_value *v, const gs__sp_dotdims *D, const gs_sharding *I,
                                     int wop, int wdim, const gs_sharding **osh);

/* ---- dot strategies: iteration shardings priced by estimated time on sp->chip ---- */
#define GS__SP_NSTRAT 7
/* the strategies' names (gs_partition_strategy), in the order they are weighed (ties go to the first) */
static const char *const gs__sp_strat_names[GS__SP_NSTRAT] = {"output", "lhs", "rhs", "lhs+rhs", "output+lhs",
                                                              "output+rhs", "replicated"};

typedef struct gs__sp_price {
    double bytes;                  /* bytes a device sends: the operands' reshards, the combine, the result's */
    double t_math, t_hbm, t_ici;   /* estimated seconds on sp->chip */
    double seconds;                /* max(t_math, t_hbm) + t_ici: the collectives wait for their operands */
    int64_t G;                     /* devices the partial sums are combined over (1: none) */
} gs__sp_price;

/* The candidates: iteration shardings split like the output, lhs, rhs, both operands, the output and one
   operand, or nothing (NULL where two splits do not merge). */
GS__FN void gs__sp_dot_cands(gs__sp *sp, const gs_value *v, const gs__sp_dotdims *D, const gs_sharding *t,
                             const gs_sharding **cand) {
    const gs_value *Lv = v->operands[0], *Rv = v->operands[1];
    const gs_sharding *IT = gs__sp_lift(sp, t, D->it_of_out, D->nout, D->ri);
    const gs_sharding *IL = gs__sp_lift(sp, sp->G->vals[Lv->id].sh, D->it_of_lhs, Lv->shape.rank, D->ri);
    const gs_sharding *IR = gs__sp_lift(sp, sp->G->vals[Rv->id].sh, D->it_of_rhs, Rv->shape.rank, D->ri);
    cand[0] = IT;
    cand[1] = IL;
    cand[2] = IR;
    cand[3] = IL && IR ? gs__sh_merge(sp->ctx, IL, IR) : NULL;
    cand[4] = IT && IL ? gs__sh_merge(sp->ctx, IT, IL) : NULL;
    cand[5] = IT && IR ? gs__sh_merge(sp->ctx, IT, IR) : NULL;
    cand[6] = gs__sp_rep(sp);
}

/* lhs[..]{Ls} x rhs[..]{Rs} -> out{t} under iteration sharding I: the operands resharded to I's projections,
   the local dot (its FLOPs: a strategy that leaves dims unsplit repeats their work on every device), the
   partial sums combined over the G devices that split contracting dims (reduce-scatter into t when t splits
   an output dim over them, else all-reduce) and the result resharded to t. */
GS__FN bool gs__sp_dot_price(gs__sp *sp, const gs_value *v, const gs__sp_dotdims *D, const gs_sharding *I,
                             const gs_sharding *t, gs__sp_price *P) {
    const gs_value *Lv = v->operands[0], *Rv = v->operands[1];
    const gs_sharding *pl, *pr, *po;
    gs__ta A;
    double flops = 2, sl, sr, so, bo, V;
    gs_shape ll, lr, lo;
    int a;
    memset(P, 0, sizeof *P);
    pl = gs__sp_proj(sp, I, D, 0, Lv->shape.rank);
    pr = gs__sp_proj(sp, I, D, 1, Rv->shape.rank);
    po = gs__sp_proj(sp, I, D, 2, v->shape.rank);
    if (!pl || !pr || !po || !gs__sp_view(sp, I, D->ri, &A)) return false;
    P->bytes = gs__sp_est(sp, sp->G->vals[Lv->id].sh, pl, &Lv->shape, &sl) +
               gs__sp_est(sp, sp->G->vals[Rv->id].sh, pr, &Rv->shape, &sr);
    bo = gs__sp_est(sp, po, t, &v->shape, &so);
    P->t_ici = sl + sr;
    P->G = 1;
    for (a = D->nout; a < D->ri; a++) P->G *= A.dims[a];
    for (a = 0; a < D->ri; a++) flops *= (double)gs__shard_size(D->size[a], A.dims[a]);
    ll = gs__sp_local(pl, Lv->shape);
    lr = gs__sp_local(pr, Rv->shape);
    lo = gs__sp_local(po, v->shape);
    V = (double)gs_shape_bytes(&lo);
    if (P->G > 1 && gs__sh_tiles(t) >= gs__sh_tiles(po) * P->G) {
        /* reduce-scatter straight into t's split (what is left of the reshard to t is not counted) */
        P->bytes += V * (double)(P->G - 1) / (double)P->G;
        P->t_ici += gs__sp_coll_secs(sp, GS_COLLECTIVE_REDUCE_SCATTER, V, P->G);
    } else {
        if (P->G > 1) {
            P->bytes += 2.0 * V * (double)(P->G - 1) / (double)P->G;
            P->t_ici += gs__sp_coll_secs(sp, GS_COLLECTIVE_ALL_REDUCE, V, P->G);
        }
        P->bytes += bo;
        P->t_ici += so;
    }
    P->t_math = flops / sp->chip->flops_bf16;
    P->t_hbm = ((double)gs_shape_bytes(&ll) + (double)gs_shape_bytes(&lr) + V) / sp->chip->hbm_bw;
    P->seconds = GS__MAX(P->t_math, P->t_hbm) + P->t_ici;
    return true;
}

/* "lhs-free dim split 2-way, contracting dim split 4-way" for iteration sharding I */
GS__FN void gs__sp_dot_describe(gs__sp *sp, const gs__sp_dotdims *D, const gs_sharding *I, char *buf, size_t cap) {
    gs__ta A;
    int a, len = 0;
    buf[0] = 0;
    if (gs__sp_view(sp, I, D->ri, &A))
        for (a = 0; a < D->ri && len + 60 < (int)cap; a++) {
            const char *cls = a < D->nb ? "batch" : a < D->nb + D->nlf ? "lhs-free" : a < D->nout ? "rhs-free" : "contracting";
            if (A.dims[a] > 1)
                len += snprintf(buf + len, cap - (size_t)len, "%s%s dim split %lld-way", len ? ", " : "", cls,
                                (long long)A.dims[a]);
        }
    if (!len) snprintf(buf, cap, "nothing split");
}

/* the strategy desc.strategies forces on v, or NULL */
GS__FN const char *gs__sp_forced(gs__sp *sp, const gs_value *v) {
    int i;
    for (i = 0; sp->force && i < sp->desc.n_strategies; i++)
        if (sp->force[i] == v) {
            sp->forced_used[i] = true;
            return sp->desc.strategies[i].strategy;
        }
    return NULL;
}

/* Picks v's iteration sharding: the forced strategy, else the least estimated time (then the fewest bytes,
   then the first). Writes the weighing into *list (one line per strategy, for --explain). -1 with the error
   set when a forced name is not one of v's strategies. */
GS__FN int gs__sp_dot_choose(gs__sp *sp, const gs_value *v, const gs__sp_dotdims *D, const gs_sharding *t,
                             const gs_sharding **cand, gs__sb *list) {
    gs__sp_price P[GS__SP_NSTRAT];
    int same[GS__SP_NSTRAT], i, j, best = -1;
    const char *forced = gs__sp_forced(sp, v);
    gs__sp_dot_cands(sp, v, D, t, cand);
    for (i = 0; i < GS__SP_NSTRAT; i++) {
        same[i] = -1;
        for (j = 0; j < i && cand[i]; j++)
            if (same[j] < 0 && cand[j] && gs_sharding_equal(cand[j], cand[i])) { same[i] = j; break; }
        if (same[i] >= 0) P[i] = P[same[i]];
        else if (cand[i] && !gs__sp_dot_price(sp, v, D, cand[i], t, &P[i])) cand[i] = NULL;
        if (!cand[i]) continue;
        if (forced ? strcmp(forced, gs__sp_strat_names[i]) == 0
                   : best < 0 || P[i].seconds < P[best].seconds * (1 - 1e-9) ||
                         (P[i].seconds <= P[best].seconds * (1 + 1e-9) && P[i].bytes < P[best].bytes))
            best = i;
    }
    if (forced && best < 0) {
        char names[128];
        int len = 0;
        for (i = 0; i < GS__SP_NSTRAT; i++)
            if (cand[i]) len += snprintf(names + len, sizeof names - (size_t)len, "%s%s", len ? ", " : "", gs__sp_strat_names[i]);
        gs__err(sp->ctx, GS_ERR_INVALID_ARG, "no strategy '%s' for %s; its strategies: %s", forced, v->name, names);
        return -1;
    }
    gs__sb_printf(list, "\nstrategies weighed on %s (--strategy %s=NAME; time = max(compute, HBM) + ICI):",
                  sp->chip->name, v->name);
    for (i = 0; i < GS__SP_NSTRAT; i++) {
        char how[200], tb[4][24], by[24];
        if (!cand[i]) continue;
        if (same[i] >= 0) {
            gs__sb_printf(list, "\n%c %-10s = %s", i == best ? '*' : ' ', gs__sp_strat_names[i], gs__sp_strat_names[same[i]]);
            continue;
        }
        gs__sp_dot_describe(sp, D, cand[i], how, sizeof how);
        gs__cm_fmt_si(by, sizeof by, P[i].bytes, "B");
        gs__cm_fmt_time(tb[0], sizeof tb[0], P[i].seconds);
        gs__cm_fmt_time(tb[1], sizeof tb[1], P[i].t_math);
        gs__cm_fmt_time(tb[2], sizeof tb[2], P[i].t_hbm);
        gs__cm_fmt_time(tb[3], sizeof tb[3], P[i].t_ici);
        gs__sb_printf(list, "\n%c %-10s %s: sends %s, %s (compute %s, HBM %s, ICI %s)", i == best ? '*' : ' ',
                      gs__sp_strat_names[i], how, by, tb[0], tb[1], tb[2], tb[3]);
    }
    return best;
}

GS__FN gs_value *gs__sp_dot_apply(gs__sp *sp, const gs_value *v, const gs__sp_dotdims *D, const gs_sharding *best,
                                  const gs_sharding *t, const gs_sharding **osh);

/* the dot and convolution names of g, ", "-separated, for an error message */
GS__FN void gs__sp_dot_names(const gs_graph *g, char *buf, size_t cap) {
    int i, len = 0;
    buf[0] = 0;
    for (i = 0; i < (int)stbds_arrlen(g->values) && len + 40 < (int)cap; i++) {
        const gs_value *v = g->values[i];
        if (v->op == GS_OP_DOT || v->op == GS_OP_CONVOLUTION)
            len += snprintf(buf + len, cap - (size_t)len, "%s%s", len ? ", " : "", v->name);
    }
    if (!len) snprintf(buf, cap, "none");
}

GS__FN bool gs__sp_force_init(gs__sp *sp, gs_graph *g) {
    const gs_partition_desc *d = &sp->desc;
    char names[400];
    int i, k;
    if (d->n_strategies == 0) return true;
    if (d->n_strategies < 0 || !d->strategies) {
        gs__err(sp->ctx, GS_ERR_INVALID_ARG, "gs_partition: %d strategies%s", d->n_strategies,
                d->strategies ? "" : " with a NULL array");
        return false;
    }
    sp->force = (const gs_value **)gs__malloc(sp->ctx, sizeof(gs_value *) * (size_t)d->n_strategies);
    sp->forced_used = (bool *)gs__malloc(sp->ctx, sizeof(bool) * (size_t)d->n_strategies);
    if (!sp->force || !sp->forced_used) return false;
    for (i = 0; i < d->n_strategies; i++) {
        const char *in = d->strategies[i].instruction, *st = d->strategies[i].strategy;
        const gs_value *v = in ? gs_graph_find(g, in) : NULL;
        sp->forced_used[i] = false;
        sp->force[i] = v;
        if (!v || (v->op != GS_OP_DOT && v->op != GS_OP_CONVOLUTION)) {
            gs__sp_dot_names(g, names, sizeof names);
            gs__err(sp->ctx, GS_ERR_INVALID_ARG, "gs_partition: strategy for '%s': %s; the dots and convolutions of %s: %s",
                    in ? in : "(null)", v ? "not a dot or convolution" : "no such instruction", g->name, names);
            return false;
        }
        for (k = 0; st && k < GS__SP_NSTRAT; k++)
            if (strcmp(st, gs__sp_strat_names[k]) == 0) break;
        if (!st || k == GS__SP_NSTRAT) {
            gs__err(sp->ctx, GS_ERR_INVALID_ARG, "gs_partition: %s: no strategy '%s'; the strategies: output, lhs, rhs, "
                    "lhs+rhs, output+lhs, output+rhs, replicated", in, st ? st : "(null)");
            return false;
        }
        for (k = 0; k < i; k++)
            if (sp->force[k] == v) {
                gs__err(sp->ctx, GS_ERR_INVALID_ARG, "gs_partition: two strategies for %s", in);
                return false;
            }
    }
    return true;
}

GS__FN bool gs__sp_force_check(gs__sp *sp) {
    int i;
    for (i = 0; i < sp->desc.n_strategies; i++)
        if (!sp->forced_used[i]) {
            gs__err(sp->ctx, GS_ERR_INVALID_ARG, "gs_partition: %s is not partitioned by a dot strategy (a convolution "
                    "split along spatial dims, or a dot with too many dims), so strategy '%s' cannot apply",
                    sp->desc.strategies[i].instruction, sp->desc.strategies[i].strategy);
            return false;
        }
    return true;
}

/* dot (and a convolution with nothing split spatially): lhs[B,M,K] x rhs[B,K,N] -> out[B,M,N]{t}. An iteration
   sharding over (B, M, N, K) is chosen among the operands' and the output's splits and their merges
   (gs__sp_dot_choose: the least estimated time on the chip); lhs and rhs are resharded to its projections, the
   local dot runs, and when K is split the partial sums are combined (all-reduce, or reduce-scatter into t).
   E.g. lhs[B,M,K]{B split} x rhs[B,K,N]{B split} -> out[B,M,N]{B split}, no collective; lhs[M,K]{K split} x
   rhs[K,N]{K split} -> out[M,N] partial, all-reduce. */
GS__FN gs_value *gs__sp_dot(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    const gs_sharding *cand[GS__SP_NSTRAT];
    gs__sp_dotdims D;
    gs__sb list;
    gs_value *r;
    char buf[256];
    int bi;
    if (!(v->op == GS_OP_DOT ? gs__sp_dot_dims(v, &D) : gs__sp_conv_dims(v, &D)))
        return gs__sp_replicated(sp, v, "dot of too many dims", osh);
    gs__sb_init(&list, sp->ctx);
    bi = gs__sp_dot_choose(sp, v, &D, t, cand, &list);
    if (bi < 0) {
        gs__sb_free(&list);
        return sp->ctx->err ? NULL : gs__sp_replicated(sp, v, "no dot strategy", osh);
    }
    gs__sp_dot_describe(sp, &D, cand[bi], buf, sizeof buf);
    gs__sp_note(sp, "%s strategy %s (%s): %s", v->op == GS_OP_DOT ? "dot" : "convolution as a dot",
                gs__sp_strat_names[bi], gs__sp_forced(sp, v) ? "forced" : "least estimated time", buf);
    r = gs__sp_dot_apply(sp, v, &D, cand[bi], t, osh);
    if (list.len && !list.oom) gs__sb_puts(&sp->ex, list.buf);
    gs__sb_free(&list);
    return r;
}

/* v under iteration sharding best: a windowed einsum when an operand would be all-gathered whole and holds at
   least sp->we_bytes per device (its blocks are passed round a ring instead, gs__sp_windowed_dot), else lhs and
   rhs resharded to best's projections (their padding along contracted dims masked to 0), the local dot, and
   its partial sums combined into t */
GS__FN gs_value *gs__sp_dot_apply(gs__sp *sp, const gs_value *v, const gs__sp_dotdims *Dp, const gs_sharding *best,
                                  const gs_sharding *t, const gs_sharding **osh) {
    const gs_value *Lv = v->operands[0], *Rv = v->operands[1];
    const gs_sharding *Ls = sp->G->vals[Lv->id].sh, *Rs = sp->G->vals[Rv->id].sh;
    gs__sp_dotdims D = *Dp;
    int a, dest[GS_MAX_RANK * 2];
    for (a = 0; a < D.ri; a++) dest[a] = D.out_of[a] >= 0 ? D.out_of[a] : GS__DEST_REP;
    /* the windowed einsum: an operand that would be all-gathered in full is instead passed round a ring */
    if (sp->we_bytes >= 0 && v->op == GS_OP_DOT) {
        int w;
        for (w = 0; w < 2; w++) {
            const gs_value *O = w == 0 ? Lv : Rv;
            const gs_sharding *os = w == 0 ? Ls : Rs, *want = gs__sp_proj(sp, best, &D, w, O->shape.rank);
            gs_shape lo = gs__sp_local(os, O->shape);
            int d, split = -1, nsplit = 0;
            for (d = 0; d < O->shape.rank; d++)
                if (gs__sp_k(os, d) > 1) { split = d; nsplit++; }
            int64_t big = sp->desc.windowed_einsum_total_bytes > 0
                              ? (int64_t)(gs_shape_bytes(&Lv->shape) + gs_shape_bytes(&Rv->shape)) - sp->desc.windowed_einsum_total_bytes
                              : (int64_t)gs_shape_bytes(&lo) - sp->we_bytes;
            if (nsplit != 1 || !gs__sp_is_rep(want) || big < 0 ||
                gs__sp_split_mask(os, O->shape.rank) != (1u << split) || gs_sharding_replication(os) > 1 ||
                gs__sp_k(os, split) != sp->D)
                continue;
            return gs__sp_windowed_dot(sp, v, &D, best, w, split, osh);
        }
    }
    {
        gs_value *ops[2];
        const gs_sharding *pl = gs__sp_proj(sp, best, &D, 0, Lv->shape.rank);
        const gs_sharding *pr = gs__sp_proj(sp, best, &D, 1, Rv->shape.rank);
        uint32_t cl = 0, cr = D.zero_rhs;
        gs_value *x;
        for (a = D.nout; a < D.ri; a++) {
            if (D.lhs_of[a] >= 0) cl |= 1u << D.lhs_of[a];
            if (D.rhs_of[a] >= 0) cr |= 1u << D.rhs_of[a];
        }
        ops[0] = gs__sp_mask(sp, gs__sp_get(sp, Lv, pl), pl, &Lv->shape, cl, 0);
        ops[1] = gs__sp_mask(sp, gs__sp_get(sp, Rv, pr), pr, &Rv->shape, cr, 0);
        x = gs__sp_clone(sp, v, ops, NULL);
        return gs__sp_combine(sp, x, best, D.ri, dest, GS_REDUCE_SUM, &v->shape, t, osh);
    }
}

/* windowed einsum: x[.., W/D, ..] (operand wop, split D ways along W) x y -> out in I's projection, with no
   all-gather of x. AG-style windowed einsum: operand wop is split D ways along its dim wdim (iteration dim aw) and would be
   all-gathered; instead a loop of D local dots passes each device's block round a ring (collective-permute to
   the previous tile), device p working on block (coord(p) + i) mod D in iteration i. */
GS__FN gs_value *gs__sp_windowed_dot(gs__sp *sp, const gs_value *v, const gs__sp_dotdims *D, const gs_sharding *I,
                                     int wop, int wdim, const gs_sharding **osh) {
    const gs_value *W = v->operands[wop], *O = v->operands[1 - wop];
    const gs_sharding *ws = sp->G->vals[W->id].sh;
    const gs_sharding *po = gs__sp_proj(sp, I, D, 2, v->shape.rank);
    const gs_sharding *oproj = gs__sp_proj(sp, I, D, 1 - wop, O->shape.rank);
    int aw = wop == 0 ? D->it_of_lhs[wdim] : D->it_of_rhs[wdim];
    int odim = wop == 0 ? D->rhs_of[aw] : D->lhs_of[aw];    /* the other operand's dim for aw, or -1 */
    int64_t Dn = sp->D, cw = gs__shard_size(W->shape.dims[wdim], Dn), p, idx[GS_MAX_TILE_RANK];
    gs_graph *g = sp->G->g, *cond, *body;
    gs_value *win, *oth, *acc, *st[4], *init, *res;
    gs_shape accs, lo;
    int64_t *pairs;
    bool contract = aw >= D->nout;
    oth = gs__sp_get(sp, O, oproj);
    win = gs__sp_get(sp, W, ws);
    if (!oth || !win) return NULL;
    if (odim >= 0) oth = gs__sp_pad_dim(sp, oth, odim, Dn * cw);
    lo = gs__sp_local(po, v->shape);
    accs = lo;
    if (!contract) accs.dims[aw] = Dn * cw;
    acc = gs__sp_splat(sp, v->shape.dtype, 0, accs);
    st[0] = oth; st[1] = win; st[2] = acc; st[3] = gs__sp_s32(sp, 0);
    if (!oth || !acc || !st[3]) return NULL;   /* a builder failed (out of memory): the error is set */
    pairs = (int64_t *)gs__arena_alloc(sp->ctx, sizeof(int64_t) * 2 * (size_t)Dn);
    if (!pairs) return NULL;
    for (p = 0; p < Dn; p++) {
        int64_t c;
        if (!gs_sharding_device_index(ws, p, idx)) return NULL;
        c = idx[wdim];
        idx[wdim] = (c + Dn - 1) % Dn;
        pairs[2 * p] = p;
        pairs[2 * p + 1] = gs_sharding_device_at(ws, idx);
    }
    {
        gs_shape ts[4];
        int k;
        for (k = 0; k < 4; k++) ts[k] = st[k]->shape;
        /* state: (other operand, the block held now, the result, iteration i); cond: i < D */
        cond = gs_graph_new(sp->ctx, "windowed_einsum_cond");
        body = gs_graph_new(sp->ctx, "windowed_einsum_body");
        if (!cond || !body) return NULL;
        {
            gs_value *pc = gs_parameter_tuple(cond, 0, 4, ts, "state");
            gs_value *it = gs_get_tuple_element(cond, pc, 3);
            if (gs_graph_set_root(cond, gs_compare(cond, it, gs_scalar(cond, GS_S32, (double)Dn), GS_CMP_LT)))
                return NULL;
        }
        {
            gs__sp_g sub, *saved = sp->G;
            gs_value *pb, *o2, *w2, *a2, *it, *c, *part, *ops[2], *outs[4];
            memset(&sub, 0, sizeof sub);
            sub.g = body;
            sp->G = &sub;
            pb = gs_parameter_tuple(body, 0, 4, ts, "state");
            o2 = gs_get_tuple_element(body, pb, 0);
            w2 = gs_get_tuple_element(body, pb, 1);
            a2 = gs_get_tuple_element(body, pb, 2);
            it = gs_get_tuple_element(body, pb, 3);
            /* block index held now: (coord + i) mod D */
            c = gs_binary(body, GS_OP_REMAINDER, gs_add(body, gs__sp_coord(sp, ws, wdim), it), gs_scalar(body, GS_S32, (double)Dn));
            {
                /* mask the block's padding (its global rows c*cw + l >= S) when it is contracted */
                gs_value *wm = w2;
                if (contract && cw * Dn != W->shape.dims[wdim]) {
                    gs_shape ps = w2->shape;
                    gs_value *pos, *ok;
                    ps.dtype = GS_S32;
                    pos = gs_add(body, gs_iota(body, ps, wdim),
                                 gs_broadcast(body, gs_mul(body, c, gs_scalar(body, GS_S32, (double)cw)), ps, NULL));
                    ok = gs_compare(body, pos, gs_constant_splat(body, ps, (double)W->shape.dims[wdim]), GS_CMP_LT);
                    wm = gs_select(body, ok, w2, gs_constant_splat(body, w2->shape, 0));
                }
                ops[wop] = wm;
            }
            if (odim >= 0) {
                gs_value *sts[GS_MAX_RANK];
                int64_t sz[GS_MAX_RANK];
                int d;
                for (d = 0; d < O->shape.rank; d++) {
                    sz[d] = o2->shape.dims[d];
                    sts[d] = gs_scalar(body, GS_S32, 0);
                }
                sz[odim] = cw;
                sts[odim] = gs_mul(body, c, gs_scalar(body, GS_S32, (double)cw));
                ops[1 - wop] = gs_dynamic_slice(body, o2, sts, sz);
            } else {
                ops[1 - wop] = o2;
            }
            part = gs__sp_clone(sp, v, ops, NULL);
            if (contract) {
                outs[2] = gs_add(body, a2, part);
            } else {
                gs_value *sts[GS_MAX_RANK];
                int d;
                for (d = 0; d < v->shape.rank; d++) sts[d] = gs_scalar(body, GS_S32, 0);
                sts[aw] = gs_mul(body, c, gs_scalar(body, GS_S32, (double)cw));
                outs[2] = gs_dynamic_update_slice(body, a2, part, sts);
            }
            outs[0] = o2;
            outs[1] = gs_collective_permute(body, w2, Dn, pairs, 0);
            outs[3] = gs_add(body, it, gs_scalar(body, GS_S32, 1));
            if (!outs[0] || !outs[1] || !outs[2] || !outs[3] || gs_graph_set_root(body, gs_tuple(body, 4, outs))) {
                sp->G = saved;
                stbds_arrfree(sub.tabs);
                return NULL;
            }
            sp->G = saved;
            stbds_arrfree(sub.tabs);
        }
    }
    init = gs_tuple(g, 4, st);
    res = gs_get_tuple_element(g, gs_while(g, cond, body, init), 2);
    gs__sp_note(sp, "windowed einsum: %lld local dots, %s's blocks passed round a ring of collective-permutes",
                (long long)Dn, wop == 0 ? "lhs" : "rhs");
    *osh = po;
    return gs__sp_prefix(sp, res, &lo);
}
