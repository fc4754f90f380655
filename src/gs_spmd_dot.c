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

/* ragged dot read as a dot (its three modes alike): batch, lhs-free, rhs-free and contracting dims as a dot's;
   the rhs group dim (non-contracting mode) and the result's group dim (contracting mode) are in no iteration dim,
   so they stay whole. The ragged dim may be split: each device's group sizes then lose its tile's offset from
   the first group (gs__sp_ragged_apply). */
GS__FN bool gs__sp_ragged_dims(const gs_value *v, gs__sp_dotdims *D) {
    const gs_ragged_dot_dims *rd = v->ragged;
    const gs_dot_dims *dd = &rd->dot;
    const gs_shape *L = &v->operands[0]->shape, *R = &v->operands[1]->shape;
    gs__rdinfo I;
    int mode = gs__ragged_info(rd, L->rank, &I), off = mode == GS__RD_CONTRACT, i, k, side, o;
    memset(D, 0, sizeof *D);
    if (mode < 0) return false;
    for (i = 0; i < GS_MAX_RANK * 2; i++) D->lhs_of[i] = D->rhs_of[i] = D->out_of[i] = -1;
    for (i = 0; i < dd->n_batch; i++) gs__sp_it_add(D, dd->lhs_batch[i], dd->rhs_batch[i], off + i, L->dims[dd->lhs_batch[i]]);
    D->nb = D->ri;
    o = off + dd->n_batch;
    for (side = 0; side < 2; side++) {
        const gs_shape *X = side ? R : L;
        for (i = 0; i < X->rank; i++) {
            bool used = side == 1 && mode == GS__RD_NONCONTRACT && rd->rhs_group[0] == i;
            for (k = 0; k < dd->n_batch; k++) used = used || (side ? dd->rhs_batch[k] : dd->lhs_batch[k]) == i;
            for (k = 0; k < dd->n_contract; k++) used = used || (side ? dd->rhs_contract[k] : dd->lhs_contract[k]) == i;
            if (used) continue;
            if (D->ri >= GS_MAX_RANK) return false;
            gs__sp_it_add(D, side ? -1 : i, side ? i : -1, o++, X->dims[i]);
        }
        if (side == 0) D->nlf = D->ri - D->nb;
    }
    D->nout = D->ri;
    D->nrf = D->nout - D->nb - D->nlf;
    for (i = 0; i < dd->n_contract; i++) {
        if (D->ri >= GS_MAX_RANK) return false;   /* iteration shardings are shardings of a rank-ri array */
        gs__sp_it_add(D, dd->lhs_contract[i], dd->rhs_contract[i], -1, L->dims[dd->lhs_contract[i]]);
    }
    D->nc = D->ri - D->nout;
    for (i = 0; i < GS_MAX_RANK; i++) D->it_of_lhs[i] = D->it_of_rhs[i] = D->it_of_out[i] = GS__DEST_REP;
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
    /* a sharding of another rank (a convolution's output seen as a dot of fewer dims) has no lifting here: no
       candidate, rather than a map that reads dest past rank */
    if (s && s->kind == GS_SHARDING_TILED && s->rank != rank) return NULL;
    for (d = 0; d < rank; d++) dest[d] = it_of[d];
    return gs__sh_map(sp->ctx, s, ri, dest);
}

GS__FN gs_value *gs__sp_windowed_dot(gs__sp *sp, const gs_value *v, const gs__sp_dotdims *D, const gs_sharding *I,
                                     int wop, int wdim, const gs_sharding **osh);
GS__FN int gs__we_rs_dim(gs__sp *sp, const gs_value *v, const gs__sp_dotdims *D, const gs_sharding *best,
                         const gs_sharding *t);
GS__FN gs_value *gs__sp_windowed_rs(gs__sp *sp, const gs_value *v, const gs__sp_dotdims *D, gs_value *l, gs_value *r,
                                    const gs_sharding *t, int od, const gs_sharding **osh);

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
    const gs_sharding *IT = gs__sp_lift(sp, t, D->it_of_out, v->shape.rank, D->ri);
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

GS__FN bool gs__sp_we_pick(gs__sp *sp, const gs_value *v, const gs__sp_dotdims *D, const gs_sharding *I, int *w_out,
                           int *wdim_out);

/* choose_faster_windowed_einsum_over_mem: *P re-priced for iteration sharding I when its all-gather becomes a
   windowed loop: the loop (its steps' local dots, each step's block permute hidden behind them when shorter)
   replaces the local dot and that all-gather. True when re-priced. */
GS__FN bool gs__sp_we_price(gs__sp *sp, const gs_value *v, const gs__sp_dotdims *D, const gs_sharding *I,
                            gs__sp_price *P) {
    const gs_value *O;
    const gs_sharding *os;
    double t_ag, t_step, t_cp;
    int64_t n, steps;
    int w, wd;
    bool both;
    gs_shape lo;
    if (!sp->desc.windowed_einsum_prefer_speed || !gs__sp_we_pick(sp, v, D, I, &w, &wd)) return false;
    O = v->operands[w];
    os = sp->G->vals[O->id].sh;
    gs__sp_est(sp, os, gs__sp_proj(sp, I, D, w, O->shape.rank), &O->shape, &t_ag);
    n = gs__sp_k(os, wd);
    both = sp->desc.windowed_einsum_bidirectional && n > 2 && n == sp->D;
    steps = both ? n / 2 : n - 1;
    lo = gs__sp_local(os, O->shape);
    t_step = GS__MAX(P->t_math, P->t_hbm) / (double)n;
    t_cp = gs__sp_coll_secs(sp, GS_COLLECTIVE_PERMUTE, (double)gs_shape_bytes(&lo), 2);
    P->t_ici = GS__MAX(0, P->t_ici - t_ag);
    P->seconds = t_step + (double)steps * GS__MAX(t_step * (both ? 2 : 1), t_cp) + P->t_ici;
    return true;
}

/* partial_windowed_einsum: whether v has the pattern XLA partitions by a partial windowed einsum before weighing
   anything else: the result t split over all D devices with no replication; an operand split over all D
   devices along free dims only, its loop applying under IT (the result's strategy) over subgroups; the other
   operand already split as IT wants it */
GS__FN bool gs__sp_partial_first(gs__sp *sp, const gs_value *v, const gs__sp_dotdims *D, const gs_sharding *t,
                                 const gs_sharding *IT) {
    const gs_value *W, *O;
    const gs_sharding *ws;
    double secs;
    int w, wd, d;
    if (!sp->desc.windowed_einsum_partial || !IT || !t || t->kind != GS_SHARDING_TILED || t->rank != v->shape.rank ||
        gs_sharding_replication(t) > 1 || gs__sh_tiles(t) != sp->D || !gs__sp_we_pick(sp, v, D, IT, &w, &wd))
        return false;
    W = v->operands[w];
    O = v->operands[1 - w];
    ws = sp->G->vals[W->id].sh;
    if (gs__sp_k(ws, wd) == sp->D || gs__sh_tiles(ws) != sp->D) return false;
    for (d = 0; d < W->shape.rank; d++) {
        int a = w == 0 ? D->it_of_lhs[d] : D->it_of_rhs[d];
        if (gs__sp_k(ws, d) > 1 && (a < D->nb || a >= D->nout)) return false;
    }
    return gs__sp_est(sp, sp->G->vals[O->id].sh, gs__sp_proj(sp, IT, D, 1 - w, O->shape.rank), &O->shape, &secs) == 0;
}

/* Picks v's iteration sharding: the forced strategy, else the least estimated time (then the fewest bytes,
   then the first), or with partial_windowed_einsum the result's strategy when XLA's partial windowed einsum
   pattern holds (*why says which). Writes the weighing into *list (one line per strategy, for --explain). -1
   with the error set when a forced name is not one of v's strategies. */
GS__FN int gs__sp_dot_choose(gs__sp *sp, const gs_value *v, const gs__sp_dotdims *D, const gs_sharding *t,
                             const gs_sharding **cand, gs__sb *list, const char **why) {
    gs__sp_price P[GS__SP_NSTRAT];
    int same[GS__SP_NSTRAT], i, j, best = -1;
    const char *forced = gs__sp_forced(sp, v);
    bool looped[GS__SP_NSTRAT];
    gs__sp_dot_cands(sp, v, D, t, cand);
    for (i = 0; i < GS__SP_NSTRAT; i++) {
        same[i] = -1;
        for (j = 0; j < i && cand[i]; j++)
            if (same[j] < 0 && cand[j] && gs_sharding_equal(cand[j], cand[i])) { same[i] = j; break; }
        looped[i] = false;
        if (same[i] >= 0) P[i] = P[same[i]];
        else if (cand[i] && !gs__sp_dot_price(sp, v, D, cand[i], t, &P[i])) cand[i] = NULL;
        else if (cand[i]) looped[i] = gs__sp_we_price(sp, v, D, cand[i], &P[i]);
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
    *why = forced ? "forced" : "least estimated time";
    if (!forced && cand[0] && gs__sp_partial_first(sp, v, D, t, cand[0])) {
        best = 0;
        *why = "XLA's partial windowed einsum pattern, tried before the others as XLA does";
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
        gs__sb_printf(list, "\n%c %-10s %s: sends %s, %s (compute %s, HBM %s, ICI %s%s)", i == best ? '*' : ' ',
                      gs__sp_strat_names[i], how, by, tb[0], tb[1], tb[2], tb[3],
                      looped[i] ? "; its all-gather as a windowed loop, the permutes behind the dots" : "");
    }
    return best;
}

GS__FN gs_value *gs__sp_dot_apply(gs__sp *sp, const gs_value *v, const gs__sp_dotdims *D, const gs_sharding *best,
                                  const gs_sharding *t, const gs_sharding **osh);
GS__FN gs_value *gs__sp_ragged_apply(gs__sp *sp, const gs_value *v, const gs__sp_dotdims *D, const gs_sharding *best,
                                     const gs_sharding *t, const gs_sharding **osh);

/* the dot and convolution names of g, ", "-separated, for an error message */
GS__FN void gs__sp_dot_names(const gs_graph *g, char *buf, size_t cap) {
    int i, len = 0;
    buf[0] = 0;
    for (i = 0; i < (int)stbds_arrlen(g->values) && len + 40 < (int)cap; i++) {
        const gs_value *v = g->values[i];
        if (v->op == GS_OP_DOT || v->op == GS_OP_CONVOLUTION || v->op == GS_OP_RAGGED_DOT)
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
        if (!v || (v->op != GS_OP_DOT && v->op != GS_OP_CONVOLUTION && v->op != GS_OP_RAGGED_DOT)) {
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
    const char *why = "";
    char buf[256];
    int bi;
    bool ok = v->op == GS_OP_DOT ? gs__sp_dot_dims(v, &D)
              : v->op == GS_OP_RAGGED_DOT ? gs__sp_ragged_dims(v, &D) : gs__sp_conv_dims(v, &D);
    if (!ok) return gs__sp_replicated(sp, v, "dot of too many dims", osh);
    gs__sb_init(&list, sp->ctx);
    bi = gs__sp_dot_choose(sp, v, &D, t, cand, &list, &why);
    if (bi < 0) {
        gs__sb_free(&list);
        return sp->ctx->err ? NULL : gs__sp_replicated(sp, v, "no dot strategy", osh);
    }
    gs__sp_dot_describe(sp, &D, cand[bi], buf, sizeof buf);
    gs__sp_note(sp, "%s strategy %s (%s): %s",
                v->op == GS_OP_DOT ? "dot" : v->op == GS_OP_RAGGED_DOT ? "ragged dot" : "convolution as a dot",
                gs__sp_strat_names[bi], why, buf);
    r = v->op == GS_OP_RAGGED_DOT ? gs__sp_ragged_apply(sp, v, &D, cand[bi], t, osh)
                                  : gs__sp_dot_apply(sp, v, &D, cand[bi], t, osh);
    if (list.len && !list.oom) gs__sb_puts(&sp->ex, list.buf);
    gs__sb_free(&list);
    return r;
}

/* whether operand w (sharding os, wanted as want: os without the dims in gone, iteration dim a) may be windowed
   over subgroups (gs__sp_we_pick) */
GS__FN bool gs__sp_we_subgroup(gs__sp *sp, const gs__sp_dotdims *D, const gs_sharding *os, const gs_sharding *want,
                               int w, uint32_t gone, int a) {
    int d;
    bool contracted = false;
    if (!gs_sharding_equal(want, gs__sp_unsplit(sp, os, gone))) return false;
    if (sp->desc.windowed_einsum_prefer_speed) return true;
    for (d = 0; d < os->rank; d++) {
        int b = w == 0 ? D->it_of_lhs[d] : D->it_of_rhs[d];
        if (gs__sp_k(os, d) > 1 && (b < D->nb || b >= D->nout)) contracted = true;
    }
    return sp->desc.windowed_einsum_partial && !contracted && a >= D->nb && a < D->nout;
}

/* The operand (*w) and its dim (*wdim) whose all-gather, under iteration sharding I, a windowed einsum of the
   all-gather form replaces: the operand, split k >= 2 ways along wdim with no replication, is wanted by I with
   wdim whole and its other splits kept, and holds at least the threshold's bytes. By default it must have no
   other split (k = D: one ring of all devices). With partial_windowed_einsum a free dim may be windowed over
   each group of k devices sharing the other splits when those are free dims too (XLA's partial windowed
   einsum); with choose_faster_windowed_einsum_over_mem any dim, whatever the other splits (XLA's windowed loops
   inside device groups; where the groups split contracting dims the loop's partial sums are then combined over
   them, holding the whole unreduced result per group). With
   choose_faster_windowed_einsum_over_mem and two candidates, XLA's rule picks the one to hide: the shorter
   all-gather when the local dot is shorter than both, else the longer; otherwise the lhs first. */
GS__FN bool gs__sp_we_pick(gs__sp *sp, const gs_value *v, const gs__sp_dotdims *D, const gs_sharding *I, int *w_out,
                           int *wdim_out) {
    const gs_value *Lv = v->operands[0], *Rv = v->operands[1];
    double t_ag[2] = {0, 0};
    int w, n = 0, wd[2] = {-1, -1};
    if (sp->we_bytes < 0 || v->op != GS_OP_DOT) return false;
    for (w = 0; w < 2; w++) {
        const gs_value *O = w == 0 ? Lv : Rv;
        const gs_sharding *os = sp->G->vals[O->id].sh, *want = gs__sp_proj(sp, I, D, w, O->shape.rank);
        int rank = O->shape.rank, d, a;
        uint32_t gone;
        gs_shape lo;
        int64_t big;
        if (!want || !os || gs__sp_is_rep(os) || os->kind != GS_SHARDING_TILED || gs_sharding_replication(os) > 1 ||
            gs_sharding_manual_group(os) > 1)
            continue;
        gone = gs__sp_split_mask(os, rank) & ~gs__sp_split_mask(want, rank);
        if (!gone || (gone & (gone - 1))) continue;   /* exactly one dim gathered */
        for (d = 0; !((gone >> d) & 1u); d++) {}
        a = w == 0 ? D->it_of_lhs[d] : D->it_of_rhs[d];
        if (gs__sp_k(os, d) == sp->D ? !gs__sp_is_rep(want) : !gs__sp_we_subgroup(sp, D, os, want, w, gone, a))
            continue;
        lo = gs__sp_local(os, O->shape);
        big = sp->desc.windowed_einsum_total_bytes > 0
                  ? (int64_t)(gs_shape_bytes(&Lv->shape) + gs_shape_bytes(&Rv->shape)) - sp->desc.windowed_einsum_total_bytes
                  : (int64_t)gs_shape_bytes(&lo) - sp->we_bytes;
        if (big < 0) continue;
        wd[w] = d;
        n++;
        gs__sp_est(sp, os, want, &O->shape, &t_ag[w]);
    }
    if (!n) return false;
    w = wd[0] >= 0 ? 0 : 1;
    if (n == 2 && sp->desc.windowed_einsum_prefer_speed) {
        gs__sp_price P;
        const gs_sharding *po = gs__sp_proj(sp, I, D, 2, v->shape.rank);
        double t_dot = po && gs__sp_dot_price(sp, v, D, I, po, &P) ? GS__MAX(P.t_math, P.t_hbm) : 0;
        bool shorter = t_dot <= t_ag[0] && t_dot <= t_ag[1];
        w = (shorter ? t_ag[1] < t_ag[0] : t_ag[1] > t_ag[0]) ? 1 : 0;
    }
    *w_out = w;
    *wdim_out = wd[w];
    return true;
}

/* v under iteration sharding best: a windowed einsum when an operand would be all-gathered whole and holds at
   least sp->we_bytes per device (its blocks are passed round a ring instead, gs__sp_windowed_dot), else lhs and
   rhs resharded to best's projections (their padding along contracted dims masked to 0), the local dot, and
   its partial sums combined into t */
GS__FN gs_value *gs__sp_dot_apply(gs__sp *sp, const gs_value *v, const gs__sp_dotdims *Dp, const gs_sharding *best,
                                  const gs_sharding *t, const gs_sharding **osh) {
    const gs_value *Lv = v->operands[0], *Rv = v->operands[1];
    gs__sp_dotdims D = *Dp;
    int a, dest[GS_MAX_RANK * 2];
    for (a = 0; a < D.ri; a++) dest[a] = D.out_of[a] >= 0 ? D.out_of[a] : GS__DEST_REP;
    /* the windowed einsum: an operand that would be all-gathered along one dim is passed round rings instead */
    {
        int w, wdim;
        if (gs__sp_we_pick(sp, v, &D, best, &w, &wdim)) {
            gs_value *x = gs__sp_windowed_dot(sp, v, &D, best, w, wdim, osh);
            gs__ta A;
            bool partial = false;
            if (!x || !gs__sp_view(sp, best, D.ri, &A)) return NULL;
            for (a = D.nout; a < D.ri; a++) partial = partial || A.dims[a] > 1;
            return partial ? gs__sp_combine(sp, x, best, D.ri, dest, GS_REDUCE_SUM, &v->shape, t, osh) : x;
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
        if (sp->we_bytes >= 0 && v->op == GS_OP_DOT && !sp->desc.windowed_einsum_no_reduce_scatter) {
            /* the reduce-scatter form: the partial result, at least the threshold, is summed round a ring */
            int od = gs__we_rs_dim(sp, v, &D, best, t);
            int64_t big = sp->desc.windowed_einsum_total_bytes > 0
                              ? (int64_t)(gs_shape_bytes(&Lv->shape) + gs_shape_bytes(&Rv->shape)) - sp->desc.windowed_einsum_total_bytes
                              : (int64_t)gs_shape_bytes(&v->shape) - sp->we_bytes;
            if (od >= 0 && big >= 0) return gs__sp_windowed_rs(sp, v, &D, ops[0], ops[1], t, od, osh);
        }
        x = gs__sp_clone(sp, v, ops, NULL);
        return gs__sp_combine(sp, x, best, D.ri, dest, GS_REDUCE_SUM, &v->shape, t, osh);
    }
}

/* group_sizes[P..,g]{its prefix dims split as the lhs dims they stand for} -> the device's s64 group sizes when
   the ragged dim R is split: tile c of R starts at row c * ceil(R / k), so that offset comes off the first group
   (every running total moves by it: rows, ranges and totals are then those of the tile) */
GS__FN gs_value *gs__sp_ragged_sizes(gs__sp *sp, const gs_value *v, const gs__sp_dotdims *D, const gs_sharding *best,
                                     const gs_sharding *pl) {
    const gs_value *Gv = v->operands[2];
    gs_graph *g = sp->G->g;
    gs__rdinfo I;
    int dest[GS_MAX_RANK * 2], a, k;
    const gs_sharding *pg;
    gs_value *x, *off, *first;
    int64_t S, kk;
    gs_shape ls;
    gs__ragged_info(v->ragged, v->operands[0]->shape.rank, &I);
    for (a = 0; a < D->ri; a++) {
        dest[a] = GS__DEST_REP;
        for (k = 0; Gv->shape.rank > 1 && k < I.n_pre; k++)
            if (D->lhs_of[a] == (int)I.pre[k]) dest[a] = k;
    }
    pg = gs__sh_map(sp->ctx, best, Gv->shape.rank, dest);
    x = pg ? gs__sp_get(sp, Gv, pg) : NULL;
    kk = gs__sp_k(pl, I.ragged);
    if (!x || kk == 1) return x;
    S = v->operands[0]->shape.dims[I.ragged];
    off = gs_convert(g, gs__sp_offset(sp, pl, I.ragged, gs__shard_size(S, kk)), GS_S64);
    x = gs_convert(g, x, GS_S64);
    ls = x ? x->shape : gs_shape_make(GS_S64, 0, NULL);
    first = gs_compare(g, gs_iota(g, gs_shape_make(GS_S32, ls.rank, ls.dims), ls.rank - 1), gs__sp_splat(sp, GS_S32, 0, ls),
                       GS_CMP_EQ);
    return gs_sub(g, x, gs_select(g, first, gs_broadcast(g, off, ls, NULL), gs__sp_splat(sp, GS_S64, 0, ls)));
}

/* ragged dot under iteration sharding best: lhs[B,M,K] and rhs[(G),B,K,N] resharded to best's projections with
   the padding of split contracting dims read as 0, group_sizes split along the lhs dims its prefix stands for
   (less the tile's offset when the ragged dim is split), the local ragged dot, and its partial sums (K split)
   combined into t. E.g. lhs[B,M,K]{B, K split} x rhs[G,B,K,N]{B, K split} -> out[B,M,N]{B split}: local ragged
   dots, all-reduce over K's devices. */
GS__FN gs_value *gs__sp_ragged_apply(gs__sp *sp, const gs_value *v, const gs__sp_dotdims *D, const gs_sharding *best,
                                     const gs_sharding *t, const gs_sharding **osh) {
    const gs_value *Lv = v->operands[0], *Rv = v->operands[1];
    const gs_sharding *pl = gs__sp_proj(sp, best, D, 0, Lv->shape.rank), *pr = gs__sp_proj(sp, best, D, 1, Rv->shape.rank);
    gs_value *ops[3], *x;
    int a, dest[GS_MAX_RANK * 2];
    uint32_t cl = 0, cr = 0;
    if (!pl || !pr) return NULL;
    for (a = 0; a < D->ri; a++) {
        dest[a] = D->out_of[a] >= 0 ? D->out_of[a] : GS__DEST_REP;
        if (a < D->nout) continue;
        cl |= 1u << D->lhs_of[a];
        cr |= 1u << D->rhs_of[a];
    }
    ops[0] = gs__sp_mask(sp, gs__sp_get(sp, Lv, pl), pl, &Lv->shape, cl, 0);
    ops[1] = gs__sp_mask(sp, gs__sp_get(sp, Rv, pr), pr, &Rv->shape, cr, 0);
    ops[2] = gs__sp_ragged_sizes(sp, v, D, best, pl);
    if (!ops[0] || !ops[1] || !ops[2]) return NULL;
    x = gs__sp_clone(sp, v, ops, NULL);
    return gs__sp_combine(sp, x, best, D->ri, dest, GS_REDUCE_SUM, &v->shape, t, osh);
}

/* ---- the windowed einsum loop: a dot's operand blocks (all-gather form) or its result's partial sums
   (reduce-scatter form) travel round a ring of the D devices by collective-permute, one block per step ---- */
typedef struct gs__we {
    const gs_value *v;
    const gs__sp_dotdims *D;
    bool ag;                      /* all-gather form; else reduce-scatter form */
    int wop, wdim, odim, aw;      /* ag: the windowed operand, its split dim, the other operand's dim for it, the iteration dim */
    bool contract;                /* ag: the windowed dim is contracted */
    int od, sl[2];                /* rs: the result's split dim; the lhs and rhs dims sliced with it (-1: none) */
    int64_t Dn, cw, S;            /* ring size, block size, the split dim's global size */
    bool unroll;                  /* two steps per loop iteration (the whole-D ring only, as XLA) */
    const gs_sharding *ring;      /* the ring: devices in order of their tile coordinate along rdim */
    int rdim;
    int64_t *pairs[2];            /* [0]: each device sends to coordinate - 1, [1]: to coordinate + 1 */
    int64_t nd[2], off[2];        /* per direction: its steps, the block offset at step 0 */
    int sign[2], send[2];         /* per direction: the block index moves by sign per step; the permute used */
    int ns, tr[2], acc;           /* the loop state's size (without the counter), travelers' and ag accumulator's slots */
    bool both;                    /* bidirectional */
    int loops;                    /* while loops built (for --explain) */
    const gs_value *part;         /* the first local dot (for --explain) */
} gs__we;

/* the block index direction dir works on at step j (an s32 scalar of the graph being written) */
GS__FN gs_value *gs__we_block(gs__sp *sp, const gs__we *we, int dir, gs_value *j) {
    gs_graph *g = sp->G->g;
    gs_value *c = gs_add(g, gs__sp_coord(sp, we->ring, we->rdim), gs_scalar(g, GS_S32, (double)(we->off[dir] + 2 * we->Dn)));
    c = we->sign[dir] > 0 ? gs_add(g, c, j) : gs_sub(g, c, j);
    return gs_binary(g, GS_OP_REMAINDER, c, gs_scalar(g, GS_S32, (double)we->Dn));
}

/* x with dim d sliced to [c*cw, (c+1)*cw) (x padded to D*cw along d beforehand) */
GS__FN gs_value *gs__we_slice(gs__sp *sp, const gs__we *we, gs_value *x, int d, gs_value *c) {
    gs_graph *g = sp->G->g;
    gs_value *sts[GS_MAX_RANK];
    int64_t sz[GS_MAX_RANK];
    int e;
    for (e = 0; e < x->shape.rank; e++) {
        sz[e] = x->shape.dims[e];
        sts[e] = gs_scalar(g, GS_S32, 0);
    }
    sz[d] = we->cw;
    sts[d] = gs_mul(g, c, gs_scalar(g, GS_S32, (double)we->cw));
    return gs_dynamic_slice(g, x, sts, sz);
}

/* all-gather form: the result so far (NULL: none yet) with block c's local dot added: w is block c of the
   windowed operand (its padding past S masked to 0 when contracted), the other operand sliced to it */
GS__FN gs_value *gs__we_ag_add(gs__sp *sp, gs__we *we, gs_value *acc, gs_value *oth, gs_value *w, gs_value *c) {
    gs_graph *g = sp->G->g;
    gs_value *ops[2], *part;
    if (we->contract && we->cw * we->Dn != we->S) {
        gs_shape ps = w->shape;
        gs_value *pos, *ok;
        ps.dtype = GS_S32;
        pos = gs_add(g, gs_iota(g, ps, we->wdim), gs_broadcast(g, gs_mul(g, c, gs_scalar(g, GS_S32, (double)we->cw)), ps, NULL));
        ok = gs_compare(g, pos, gs_constant_splat(g, ps, (double)we->S), GS_CMP_LT);
        w = gs_select(g, ok, w, gs_constant_splat(g, w->shape, 0));
    }
    ops[we->wop] = w;
    ops[1 - we->wop] = we->odim >= 0 ? gs__we_slice(sp, we, oth, we->odim, c) : oth;
    if (!ops[0] || !ops[1]) return NULL;
    part = gs__sp_clone(sp, we->v, ops, NULL);
    if (!we->part) we->part = part;
    if (!part || (!acc && we->contract)) return part;
    if (we->contract) return gs_add(g, acc, part);
    {
        gs_value *sts[GS_MAX_RANK];
        int d;
        if (!acc) {
            gs_shape s = part->shape;
            s.dims[we->aw] = we->Dn * we->cw;
            acc = gs__sp_splat(sp, s.dtype, 0, s);
        }
        for (d = 0; d < we->v->shape.rank; d++) sts[d] = gs_scalar(g, GS_S32, 0);
        sts[we->aw] = gs_mul(g, c, gs_scalar(g, GS_S32, (double)we->cw));
        return gs_dynamic_update_slice(g, acc, part, sts);
    }
}

/* reduce-scatter form: this device's partial product for block c of the result (lhs, rhs sliced to it) */
GS__FN gs_value *gs__we_rs_part(gs__sp *sp, gs__we *we, gs_value *const *st, gs_value *c) {
    gs_value *ops[2], *part;
    int k;
    if (!c) return NULL;
    for (k = 0; k < 2; k++) ops[k] = we->sl[k] >= 0 ? gs__we_slice(sp, we, st[k], we->sl[k], c) : st[k];
    if (!ops[0] || !ops[1]) return NULL;
    part = gs__sp_clone(sp, we->v, ops, NULL);
    if (!we->part) we->part = part;
    return part;
}

/* one step j >= 1 of direction dir on the state st: the traveler moves one place round the ring and is used */
GS__FN void gs__we_step(gs__sp *sp, gs__we *we, gs_value **st, int dir, gs_value *j) {
    gs_graph *g = sp->G->g;
    gs_value *c = gs__we_block(sp, we, dir, j);
    gs_value *t = gs_collective_permute(g, st[we->tr[dir]], sp->D, we->pairs[we->send[dir]], 0);
    if (!t || !c) { st[we->tr[dir]] = NULL; return; }
    st[we->tr[dir]] = t;
    if (we->ag) st[we->acc] = gs__we_ag_add(sp, we, st[we->acc], st[0], t, c);
    else st[we->tr[dir]] = gs_add(g, t, gs__we_rs_part(sp, we, st, c));
}

/* steps j0 .. j0+L-1, of both directions or the first only: a while loop of L/U iterations of U steps each (U = 2
   when unrolled), the remaining steps after it; loop false: every step written out in the current graph */
GS__FN bool gs__we_steps(gs__sp *sp, gs__we *we, gs_value **st, int64_t j0, int64_t L, bool both, bool loop) {
    int64_t U = we->unroll ? 2 : 1, K = loop ? L / U : 0, r;
    int k, n = we->ns;
    if (K > 0) {
        gs_graph *g = sp->G->g, *cond = gs_graph_new(sp->ctx, "windowed_einsum_cond");
        gs_graph *body = gs_graph_new(sp->ctx, "windowed_einsum_body");
        gs__sp_g sub, *saved = sp->G;
        gs_shape ts[8];
        gs_value *pb, *cur[8], *it, *w;
        bool ok;
        int64_t u;
        if (!cond || !body) return false;
        st[n] = gs__sp_s32(sp, 0);
        for (k = 0; k <= n; k++) {
            if (!st[k]) return false;
            ts[k] = st[k]->shape;
        }
        pb = gs_parameter_tuple(cond, 0, n + 1, ts, "state");
        if (gs_graph_set_root(cond, gs_compare(cond, gs_get_tuple_element(cond, pb, n), gs_scalar(cond, GS_S32, (double)K), GS_CMP_LT)))
            return false;
        memset(&sub, 0, sizeof sub);
        sub.g = body;
        sp->G = &sub;
        pb = gs_parameter_tuple(body, 0, n + 1, ts, "state");
        for (k = 0; k <= n; k++) cur[k] = gs_get_tuple_element(body, pb, k);
        it = cur[n];
        for (u = 0; u < U; u++) {
            gs_value *j = gs_add(body, gs_mul(body, it, gs_scalar(body, GS_S32, (double)U)), gs_scalar(body, GS_S32, (double)(j0 + u)));
            gs__we_step(sp, we, cur, 0, j);
            if (both) gs__we_step(sp, we, cur, 1, j);
        }
        cur[n] = gs_add(body, it, gs_scalar(body, GS_S32, 1));
        ok = true;
        for (k = 0; k <= n; k++) ok = ok && cur[k];
        ok = ok && gs_graph_set_root(body, gs_tuple(body, n + 1, cur)) == GS_OK;
        sp->G = saved;
        stbds_arrfree(sub.tabs);
        if (!ok) return false;
        w = gs_while(g, cond, body, gs_tuple(g, n + 1, st));
        for (k = 0; k < n; k++) st[k] = gs_get_tuple_element(g, w, k);
        we->loops++;
    }
    for (r = K * U; r < L; r++) {
        gs__we_step(sp, we, st, 0, gs__sp_s32(sp, j0 + r));
        if (both) gs__we_step(sp, we, st, 1, gs__sp_s32(sp, j0 + r));
    }
    for (k = 0; k < n; k++)
        if (!st[k]) return false;
    return true;
}

/* the rings along dim rdim of s (split Dn ways there: one ring of all D devices, or with partial_windowed_einsum
   one per group of devices sharing s's other tile coordinates), both permutes, and the steps per direction:
   Dn - 1 one way, or ceil((Dn-1)/2) one way and floor((Dn-1)/2) the other when bidirectional. A subgroup ring
   is neither unrolled nor bidirectional (XLA builds those forms only over all the partitions). */
GS__FN bool gs__we_ring(gs__sp *sp, gs__we *we, const gs_sharding *s, int rdim) {
    int64_t p, q, idx[GS_MAX_TILE_RANK];
    int k;
    we->Dn = gs__sp_k(s, rdim);
    we->ring = s;
    we->rdim = rdim;
    we->unroll = sp->desc.windowed_einsum_unroll && we->Dn == sp->D;
    we->both = sp->desc.windowed_einsum_bidirectional && we->Dn > 2 && we->Dn == sp->D;
    we->nd[0] = we->both ? we->Dn / 2 : we->Dn - 1;
    we->nd[1] = we->both ? (we->Dn - 1) / 2 : 0;
    for (k = 0; k < 2; k++) {
        we->pairs[k] = (int64_t *)gs__arena_alloc(sp->ctx, sizeof(int64_t) * 2 * (size_t)sp->D);
        if (!we->pairs[k]) return false;
        for (p = 0; p < sp->D; p++) {
            if (!gs_sharding_device_index(s, p, idx)) return false;
            q = idx[rdim];
            idx[rdim] = (q + (k ? 1 : we->Dn - 1)) % we->Dn;
            we->pairs[k][2 * p] = p;
            we->pairs[k][2 * p + 1] = gs_sharding_device_at(s, idx);
        }
    }
    return true;
}

/* --explain: the loop built and its estimated time: each step one local dot (part is one) per direction and one
   block permuted each way, a permute hidden behind the step's dots when it is shorter */
GS__FN void gs__we_note(gs__sp *sp, const gs__we *we, const gs_value *part, const gs_value *block) {
    int64_t kc = 1;
    int a;
    double t_dot, t_cp, secs;
    char tb[24], lp[48], grp[160] = "";
    for (a = we->D->nout; a < we->D->ri; a++) kc *= part->operands[0]->shape.dims[we->D->lhs_of[a]];
    t_dot = 2.0 * (double)gs__numel(&part->shape) * (double)kc / sp->chip->flops_bf16;
    t_cp = gs__sp_coll_secs(sp, GS_COLLECTIVE_PERMUTE, (double)gs_shape_bytes(&block->shape), 2);
    secs = t_dot * (we->ag ? 1 : 1 + (double)we->both) + (double)we->nd[1] * GS__MAX(2 * t_dot, t_cp) +
           (double)(we->nd[0] - we->nd[1]) * GS__MAX(t_dot, t_cp);
    gs__cm_fmt_time(tb, sizeof tb, secs);
    snprintf(lp, sizeof lp, we->loops ? "in %d while loop%s" : "written out (too few steps for a loop)", we->loops,
             we->loops == 1 ? "" : "s");
    if (we->Dn < sp->D)
        snprintf(grp, sizeof grp, " within each group of %lld devices (a subgroup ring: not unrolled or "
                 "bidirectional, as XLA)", (long long)we->Dn);
    gs__sp_note(sp, "windowed einsum (%s form%s%s): %lld local dots, %s passed %s a ring of collective-permutes%s %s; "
                "about %s on %s", we->ag ? "all-gather" : "reduce-scatter", we->both ? ", bidirectional" : "",
                we->unroll ? ", unrolled" : "", (long long)we->Dn,
                we->ag ? (we->wop == 0 ? "lhs's blocks" : "rhs's blocks") : "the result's partial sums",
                we->both ? "both ways round" : "round", grp, lp, tb, sp->chip->name);
}

/* windowed einsum, all-gather form: x[.., W/D, ..] (operand wop, split D ways along wdim) x y -> out in I's
   projection with no all-gather of x: step 0 multiplies the device's own block; at step j each device holds
   block (coord + j) mod D (received from coordinate + 1), and when bidirectional also block (coord - j) mod D
   (received from coordinate - 1), until all D blocks are used. Free dims fill the result by
   dynamic-update-slice, contracted ones accumulate. */
GS__FN gs_value *gs__sp_windowed_dot(gs__sp *sp, const gs_value *v, const gs__sp_dotdims *D, const gs_sharding *I,
                                     int wop, int wdim, const gs_sharding **osh) {
    const gs_value *W = v->operands[wop], *O = v->operands[1 - wop];
    const gs_sharding *ws = sp->G->vals[W->id].sh;
    const gs_sharding *po = gs__sp_proj(sp, I, D, 2, v->shape.rank);
    gs__we we;
    gs_value *st[8], *win;
    gs_shape lo;
    memset(&we, 0, sizeof we);
    we.v = v;
    we.D = D;
    we.ag = true;
    we.wop = wop;
    we.wdim = wdim;
    we.aw = wop == 0 ? D->it_of_lhs[wdim] : D->it_of_rhs[wdim];
    we.odim = wop == 0 ? D->rhs_of[we.aw] : D->lhs_of[we.aw];   /* the other operand's dim for aw, or -1 */
    we.contract = we.aw >= D->nout;
    we.S = W->shape.dims[wdim];
    if (!po || !gs__we_ring(sp, &we, ws, wdim)) return NULL;
    we.cw = gs__shard_size(we.S, we.Dn);
    we.sign[0] = 1;
    we.sign[1] = -1;
    we.send[1] = 1;
    {
        /* padding along contracted dims split by I (other than the windowed one, masked per block) reads 0 */
        const gs_sharding *os = gs__sp_proj(sp, I, D, 1 - wop, O->shape.rank);
        uint32_t cm[2] = {0, 0};
        int a;
        for (a = D->nout; a < D->ri; a++) {
            if (D->lhs_of[a] >= 0) cm[0] |= 1u << D->lhs_of[a];
            if (D->rhs_of[a] >= 0) cm[1] |= 1u << D->rhs_of[a];
        }
        st[0] = gs__sp_mask(sp, gs__sp_get(sp, O, os), os, &O->shape, cm[1 - wop], 0);
        win = gs__sp_mask(sp, gs__sp_get(sp, W, ws), ws, &W->shape, cm[wop] & ~(1u << wdim), 0);
    }
    if (!st[0] || !win) return NULL;
    if (we.odim >= 0) st[0] = gs__sp_pad_dim(sp, st[0], we.odim, we.Dn * we.cw);
    /* state: the other operand, the block(s) held now, the result so far */
    we.tr[0] = 1;
    we.tr[1] = 2;
    we.acc = we.both ? 3 : 2;
    we.ns = we.acc + 1;
    st[1] = st[2] = win;
    st[we.acc] = gs__we_ag_add(sp, &we, NULL, st[0], win, gs__sp_coord(sp, ws, wdim));
    if (!st[0] || !st[we.acc] || !gs__we_steps(sp, &we, st, 1, we.nd[1], true, true) ||
        !gs__we_steps(sp, &we, st, 1 + we.nd[1], we.nd[0] - we.nd[1], false, !we.both))
        return NULL;
    gs__we_note(sp, &we, we.part, win);
    lo = gs__sp_local(po, v->shape);
    *osh = po;
    return gs__sp_prefix(sp, st[we.acc], &lo);
}

/* The result dim a reduce-scatter-form windowed einsum splits, or -1: the iteration sharding best splits only
   contracting dims, over all D devices with no replication, and t splits one result dim D ways (nothing else) */
GS__FN int gs__we_rs_dim(gs__sp *sp, const gs_value *v, const gs__sp_dotdims *D, const gs_sharding *best,
                         const gs_sharding *t) {
    gs__ta A;
    int a, od = -1, d;
    int64_t G = 1;
    if (!gs__sp_view(sp, best, D->ri, &A) || A.dims[D->ri] != 1 || !t || t->kind != GS_SHARDING_TILED ||
        t->rank != v->shape.rank || gs_sharding_replication(t) != 1 || gs_sharding_manual_group(t) > 1)
        return -1;
    for (a = 0; a < D->ri; a++) {
        if (a < D->nout && A.dims[a] != 1) return -1;
        if (a >= D->nout) G *= A.dims[a];
    }
    for (d = 0; d < v->shape.rank; d++)
        if (gs__sp_k(t, d) > 1) {
            if (od >= 0) return -1;
            od = d;
        }
    return G == sp->D && od >= 0 && gs__sp_k(t, od) == sp->D ? od : -1;
}

/* windowed einsum, reduce-scatter form: lhs, rhs (this device's blocks, split only along contracting dims,
   padding masked) -> out{t split D ways along od} with no reduce-scatter: a partial sum of one result block
   travels round the ring, each device adding its partial product for that block before passing it on (to
   coordinate + 1; when bidirectional a second partial sum goes the other way), and after D - 1 moves each
   device holds its own block, summed over all D. */
GS__FN gs_value *gs__sp_windowed_rs(gs__sp *sp, const gs_value *v, const gs__sp_dotdims *D, gs_value *l, gs_value *r,
                                    const gs_sharding *t, int od, const gs_sharding **osh) {
    gs__we we;
    gs_value *st[8], *res;
    gs_shape lo;
    int k, a = D->it_of_out[od];
    memset(&we, 0, sizeof we);
    we.v = v;
    we.D = D;
    we.sl[0] = D->lhs_of[a];
    we.sl[1] = D->rhs_of[a];
    we.S = v->shape.dims[od];
    if (!l || !r || !gs__we_ring(sp, &we, t, od)) return NULL;
    we.cw = gs__shard_size(we.S, we.Dn);
    st[0] = l;
    st[1] = r;
    for (k = 0; k < 2; k++)
        if (we.sl[k] >= 0) st[k] = gs__sp_pad_dim(sp, st[k], we.sl[k], we.Dn * we.cw);
    /* state: lhs, rhs, the partial sum(s) travelling; forward one at step j is block (coord + n0 - j), sent to
       coordinate + 1, so that at step n0 it is the device's own block; backward one block (coord - n1 + j) */
    we.tr[0] = 2;
    we.tr[1] = 3;
    we.ns = we.both ? 4 : 3;
    we.off[0] = we.nd[0];
    we.sign[0] = -1;
    we.send[0] = 1;
    we.off[1] = -we.nd[1];
    we.sign[1] = 1;
    for (k = 0; k < (we.both ? 2 : 1); k++) st[2 + k] = gs__we_rs_part(sp, &we, st, gs__we_block(sp, &we, k, gs__sp_s32(sp, 0)));
    if (!st[0] || !st[1] || !st[2] || (we.both && !st[3])) return NULL;
    if (we.both) {
        /* both ways for steps 1 .. n1 - 1, then forward to step n0, and the backward sum's last move */
        if (!gs__we_steps(sp, &we, st, 1, we.nd[1] - 1, true, true) ||
            !gs__we_steps(sp, &we, st, we.nd[1], we.nd[0] - we.nd[1] + 1, false, false))
            return NULL;
        res = gs_add(sp->G->g, st[2], gs_collective_permute(sp->G->g, st[3], sp->D, we.pairs[we.send[1]], 0));
    } else {
        if (!gs__we_steps(sp, &we, st, 1, we.nd[0], false, true)) return NULL;
        res = st[2];
    }
    gs__we_note(sp, &we, we.part, st[2]);
    lo = gs__sp_local(t, v->shape);
    *osh = t;
    return gs__sp_prefix(sp, res, &lo);
}
