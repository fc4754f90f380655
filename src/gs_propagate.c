/* gs_propagate.c - sharding propagation (XLA ShardingPropagation with is_spmd semantics): forward and backward
   sweeps to a fixpoint at four aggressiveness levels, per-op rules, provenance, conflicts, explanation. */
#include "gs_internal.h"

typedef struct gs__prop {
    gs_ctx *ctx;
    gs_graph *entry;
    gs_graph **graphs;     /* stb_ds: the entry and every while condition/body and conditional branch reachable from it */
    gs_value **whiles;     /* stb_ds: while instructions */
    gs_value **conds;      /* stb_ds: conditional instructions */
    gs_value **members;    /* stb_ds: shard group members, in graph order */
    int level;
    bool changed;
    int64_t iterations;
} gs__prop;

/* ---- small helpers ---- */
GS__FN bool gs__is_array(const gs_value *v) { return v->shape.dtype != GS_TUPLE; }
GS__FN bool gs__is_tiled(const gs_sharding *s) { return s && s->kind == GS_SHARDING_TILED; }
GS__FN bool gs__is_manual(const gs_sharding *s) { return s && s->kind == GS_SHARDING_MANUAL; }
/* a tuple sharding whose every element is manual (a tuple of manual values: an async-start's operands) */
GS__FN bool gs__all_manual(const gs_sharding *s) {
    int k;
    if (!s || s->kind != GS_SHARDING_TUPLE || s->n_elems == 0) return false;
    for (k = 0; k < s->n_elems; k++)
        if (!gs__is_manual(s->elems[k])) return false;
    return true;
}
/* sharding usable as a source for array rules (not unknown, not maximal, not a tuple) */
GS__FN const gs_sharding *gs__arr_sh(const gs_value *v) {
    const gs_sharding *s = v->sharding;
    if (!s || s->kind == GS_SHARDING_UNKNOWN || s->kind == GS_SHARDING_MAXIMAL || s->kind == GS_SHARDING_TUPLE) return NULL;
    return s;
}

GS__FN bool gs__elementwise(gs_op op) {
    switch (op) {
    case GS_OP_CONVERT: case GS_OP_COPY: case GS_OP_NEGATE: case GS_OP_ABS: case GS_OP_EXP: case GS_OP_LOG:
    case GS_OP_TANH: case GS_OP_LOGISTIC: case GS_OP_SQRT: case GS_OP_RSQRT: case GS_OP_FLOOR: case GS_OP_CEIL:
    case GS_OP_SIGN: case GS_OP_NOT: case GS_OP_ADD: case GS_OP_SUBTRACT: case GS_OP_MULTIPLY: case GS_OP_DIVIDE:
    case GS_OP_REMAINDER: case GS_OP_MAXIMUM: case GS_OP_MINIMUM: case GS_OP_POWER: case GS_OP_AND: case GS_OP_OR:
    case GS_OP_XOR: case GS_OP_COMPARE: case GS_OP_SELECT: case GS_OP_CLAMP:
    case GS_OP_SINE: case GS_OP_COSINE: case GS_OP_TAN: case GS_OP_EXPM1: case GS_OP_LOG1P: case GS_OP_CBRT:
    case GS_OP_ERF: case GS_OP_IS_FINITE: case GS_OP_POPCNT: case GS_OP_CLZ: case GS_OP_REAL: case GS_OP_IMAG:
    case GS_OP_ATAN2: case GS_OP_SHIFT_LEFT: case GS_OP_SHIFT_RIGHT_LOGICAL: case GS_OP_SHIFT_RIGHT_ARITHMETIC:
    case GS_OP_COMPLEX: case GS_OP_REDUCE_PRECISION:
        return true;
    default: return false;
    }
}

/* fft, cholesky, triangular-solve: the minor dims each transform or matrix needs whole (the last fft_n dims, the
   two matrix dims); the leading batch dims pass through */
GS__FN uint32_t gs__whole_minor_mask(const gs_value *v) {
    int r = v->shape.rank, k = v->op == GS_OP_FFT ? v->fft_n : 2, d;
    uint32_t m = 0;
    for (d = r - k; d < r; d++)
        if (d >= 0) m |= 1u << d;
    return m;
}

/* XLA's aggressiveness levels: 0 pass-through ops, 1 everything but broadcast, 2 broadcast backward,
   3 broadcast forward. */
GS__FN bool gs__fwd_allowed(gs_op op, int level) {
    if (op == GS_OP_BROADCAST) return level >= 3;
    if (gs__elementwise(op)) return true;
    switch (op) {
    case GS_OP_RESHAPE: case GS_OP_TRANSPOSE: case GS_OP_TUPLE: case GS_OP_GET_TUPLE_ELEMENT: case GS_OP_WHILE:
    case GS_OP_CONCATENATE: case GS_OP_DYNAMIC_SLICE: case GS_OP_DYNAMIC_UPDATE_SLICE: case GS_OP_ANNOTATE:
        return true;
    default: return level >= 1;
    }
}
/* may v's own sharding change at this level (XLA checks the instruction being inferred, in both directions) */
GS__FN bool gs__receive_allowed(gs_op op, int level, gs_origin_kind dir) {
    if (op == GS_OP_BROADCAST) return level >= (dir == GS_ORIGIN_BACKWARD ? 2 : 3);
    return gs__fwd_allowed(op, level);
}
static const char gs__rule_while[] = "while";
static const char gs__rule_cond[] = "conditional";
static const char gs__rule_group[] = "shard group";

GS__FN bool gs__bwd_allowed(gs_op op, int level) {
    if (op == GS_OP_BROADCAST) return level >= 2;
    if (gs__elementwise(op)) return true;
    switch (op) {
    case GS_OP_RESHAPE: case GS_OP_TRANSPOSE: case GS_OP_TUPLE: case GS_OP_GET_TUPLE_ELEMENT: case GS_OP_WHILE:
    case GS_OP_ANNOTATE:
        return true;
    default: return level >= 1;
    }
}

/* ---- dot and convolution dim maps ---- */
/* For operand `side` (0 lhs, 1 rhs) of a dot: out_pos[d] = output dim of operand dim d, or -1 (contracted). */
GS__FN void gs__dot_map(const gs_value *v, int side, int *out_pos) {
    const gs_dot_dims *dd = v->dot;
    const gs_shape *ls = &v->operands[0]->shape, *rs = &v->operands[1]->shape, *s = side ? rs : ls;
    const int64_t *batch = side ? dd->rhs_batch : dd->lhs_batch, *con = side ? dd->rhs_contract : dd->lhs_contract;
    int d, k, pos = dd->n_batch;
    uint32_t bm = gs__mask_of(dd->n_batch, batch), cm = gs__mask_of(dd->n_contract, con);
    if (side) pos += ls->rank - dd->n_batch - dd->n_contract;
    for (d = 0; d < s->rank; d++) {
        out_pos[d] = -1;
        if ((bm >> d) & 1u) {
            for (k = 0; k < dd->n_batch; k++)
                if (batch[k] == d) out_pos[d] = k;
        } else if (!((cm >> d) & 1u)) {
            out_pos[d] = pos++;
        }
    }
}

/* A dot, or a convolution read as one (XLA's DotConvolutionDimsInfo): entries (lhs, rhs, out) of each class, -1
   where an operand or the result has no such dim. A convolution's real spatial dims are class GS__DC_CONV. */
enum { GS__DC_BATCH, GS__DC_CONTRACT, GS__DC_LHS, GS__DC_RHS, GS__DC_CONV };
typedef struct gs__dotinfo {
    int n, n_conv;
    int cls[2 * GS_MAX_RANK + 2], lhs[2 * GS_MAX_RANK + 2], rhs[2 * GS_MAX_RANK + 2], out[2 * GS_MAX_RANK + 2];
} gs__dotinfo;

GS__FN void gs__di_add(gs__dotinfo *I, int cls, int64_t l, int64_t r, int64_t o) {
    I->cls[I->n] = cls;
    I->lhs[I->n] = (int)l;
    I->rhs[I->n] = (int)r;
    I->out[I->n++] = (int)o;
    if (cls == GS__DC_CONV) I->n_conv++;
}

/* A ragged dot read as a dot: batch, contracting and free dims as a dot's, without the rhs group dim
   (non-contracting mode) and the result's group dim (contracting mode), which stay whole; the ragged dim itself
   is an ordinary dim of its class (the partitioner splits it with each tile's offset taken off the first group) */
GS__FN void gs__ragged_dotinfo(const gs_value *v, gs__dotinfo *I) {
    const gs_ragged_dot_dims *rd = v->ragged;
    const gs_dot_dims *dd = &rd->dot;
    gs__rdinfo R;
    int mode = gs__ragged_info(rd, v->operands[0]->shape.rank, &R), off = mode == GS__RD_CONTRACT, pos, d, k, side;
    if (mode < 0) return;
    for (k = 0; k < dd->n_batch; k++) gs__di_add(I, GS__DC_BATCH, dd->lhs_batch[k], dd->rhs_batch[k], off + k);
    for (k = 0; k < dd->n_contract; k++) gs__di_add(I, GS__DC_CONTRACT, dd->lhs_contract[k], dd->rhs_contract[k], -1);
    pos = off + dd->n_batch;
    for (side = 0; side < 2; side++)
        for (d = 0; d < v->operands[side]->shape.rank; d++) {
            bool used = side == 1 && mode == GS__RD_NONCONTRACT && rd->rhs_group[0] == d;
            for (k = 0; k < dd->n_batch; k++) used = used || (side ? dd->rhs_batch[k] : dd->lhs_batch[k]) == d;
            for (k = 0; k < dd->n_contract; k++) used = used || (side ? dd->rhs_contract[k] : dd->lhs_contract[k]) == d;
            if (!used) gs__di_add(I, side ? GS__DC_RHS : GS__DC_LHS, side ? -1 : d, side ? d : -1, pos++);
        }
}

GS__FN void gs__dotinfo_of(const gs_value *v, gs__dotinfo *I);

/* group_sizes' sharding implied by a ragged dot's result sharding: its prefix dims split as the result dims of
   the lhs dims they stand for (batch dims, and lhs free dims before the ragged one), the group dim whole */
GS__FN const gs_sharding *gs__ragged_to_sizes(gs__prop *P, const gs_value *v, const gs_sharding *out) {
    const gs_value *gz = v->operands[2];
    gs__dotinfo I;
    gs__rdinfo R;
    int dest[GS_MAX_RANK], d, e, k;
    if (!gs__is_tiled(out) || gz->shape.rank == 1 || gs__ragged_info(v->ragged, v->operands[0]->shape.rank, &R) < 0)
        return NULL;
    gs__dotinfo_of(v, &I);
    for (d = 0; d < v->shape.rank; d++) dest[d] = GS__DEST_REP;
    for (k = 0; k < R.n_pre; k++)
        for (e = 0; e < I.n; e++)
            if (I.lhs[e] == R.pre[k] && I.out[e] >= 0) dest[I.out[e]] = k;
    return gs__sh_map(P->ctx, out, gz->shape.rank, dest);
}

GS__FN void gs__dotinfo_of(const gs_value *v, gs__dotinfo *I) {
    int d, k;
    memset(I, 0, sizeof *I);
    if (v->op == GS_OP_RAGGED_DOT) {
        gs__ragged_dotinfo(v, I);
    } else if (v->op == GS_OP_DOT) {
        int pos[GS_MAX_RANK];
        for (k = 0; k < v->dot->n_batch; k++) gs__di_add(I, GS__DC_BATCH, v->dot->lhs_batch[k], v->dot->rhs_batch[k], k);
        for (k = 0; k < v->dot->n_contract; k++)
            gs__di_add(I, GS__DC_CONTRACT, v->dot->lhs_contract[k], v->dot->rhs_contract[k], -1);
        gs__dot_map(v, 0, pos);
        for (d = 0; d < v->operands[0]->shape.rank; d++)
            if (pos[d] >= v->dot->n_batch) gs__di_add(I, GS__DC_LHS, d, -1, pos[d]);
        gs__dot_map(v, 1, pos);
        for (d = 0; d < v->operands[1]->shape.rank; d++)
            if (pos[d] >= v->dot->n_batch) gs__di_add(I, GS__DC_RHS, -1, d, pos[d]);
    } else {
        const gs_conv_dims *cd = &v->conv->dims;
        gs__cdk kind[GS_MAX_RANK];
        static const int cls_of[5] = {GS__DC_CONV, GS__DC_BATCH, GS__DC_CONTRACT, GS__DC_LHS, GS__DC_RHS};
        gs__conv_dot_kinds(v, kind);
        gs__di_add(I, GS__DC_LHS, cd->input_batch, -1, cd->output_batch);
        gs__di_add(I, GS__DC_RHS, -1, cd->kernel_output_feature, cd->output_feature);
        gs__di_add(I, GS__DC_CONTRACT, cd->input_feature, cd->kernel_input_feature, -1);
        for (k = 0; k < cd->n_spatial; k++)
            gs__di_add(I, cls_of[kind[k]], cd->input_spatial[k], cd->kernel_spatial[k], cd->output_spatial[k]);
    }
}

/* XLA's IsConvolutionKernelSmall: the kernel is smaller than the output along every spatial dim (a third and
   later dim may tie when its kernel is at most 3 and the kernel is smaller in product so far) */
GS__FN bool gs__conv_kernel_small(const gs_value *v) {
    const gs_conv_dims *cd = &v->conv->dims;
    int64_t kp = 1, op = 1;
    int i;
    for (i = 0; i < cd->n_spatial; i++) {
        int64_t k = v->operands[1]->shape.dims[cd->kernel_spatial[i]], o = v->shape.dims[cd->output_spatial[i]];
        kp *= k;
        op *= o;
        if (k >= o && (i < 2 || k > 3 || kp >= op)) return false;
    }
    return true;
}

/* For operand `side` of a dot (or a convolution read as one): out_pos[d] = the result dim of operand dim d
   (a batch dim or one of the operand's free dims), or -1 (a real convolution dim too). With conv_rule, a
   convolution with real spatial dims maps (backward) input batch, kernel output features, and the spatial dims
   when the kernel is small. */
GS__FN void gs__dotlike_map(const gs_value *v, int side, int *out_pos, bool conv_rule) {
    gs__dotinfo I;
    int d, e;
    gs__dotinfo_of(v, &I);
    for (d = 0; d < v->operands[side]->shape.rank; d++) out_pos[d] = -1;
    if (I.n_conv && conv_rule) {
        const gs_conv_config *c = v->conv;
        bool grouped = c->feature_group_count > 1 || c->batch_group_count > 1;
        if (side == 0) out_pos[c->dims.input_batch] = (int)c->dims.output_batch;
        else if (!grouped) out_pos[c->dims.kernel_output_feature] = (int)c->dims.output_feature;
        if (side == 0 && c->batch_group_count <= 1 && gs__conv_kernel_small(v))
            for (d = 0; d < c->dims.n_spatial; d++) out_pos[c->dims.input_spatial[d]] = (int)c->dims.output_spatial[d];
        return;
    }
    for (e = 0; e < I.n; e++) {
        int x = side ? I.rhs[e] : I.lhs[e];
        if (x >= 0 && (I.cls[e] == GS__DC_BATCH || I.cls[e] == (side ? GS__DC_RHS : GS__DC_LHS))) out_pos[x] = I.out[e];
    }
}

/* candidate output sharding implied by one operand of a dot/convolution */
GS__FN const gs_sharding *gs__dotlike_from_operand(gs__prop *P, const gs_value *v, int side) {
    const gs_sharding *s = gs__arr_sh(v->operands[side]);
    int pos[GS_MAX_RANK], d;
    if (!s) return NULL;
    gs__dotlike_map(v, side, pos, false);
    for (d = 0; d < v->operands[side]->shape.rank; d++)
        if (pos[d] < 0) pos[d] = GS__DEST_REP;
    return gs__sh_map(P->ctx, s, v->shape.rank, pos);
}

/* operand sharding implied by the dot/convolution output sharding (the other operand's free dims replicated) */
GS__FN const gs_sharding *gs__dotlike_to_operand(gs__prop *P, const gs_value *v, const gs_sharding *out, int side) {
    int pos[GS_MAX_RANK], dest[GS_MAX_RANK], d;
    const gs_value *x = v->operands[side];
    if (!gs__is_tiled(out)) return out;
    gs__dotlike_map(v, side, pos, true);
    for (d = 0; d < v->shape.rank; d++) dest[d] = GS__DEST_REP;
    for (d = 0; d < x->shape.rank; d++)
        if (pos[d] >= 0) dest[pos[d]] = d;
    return gs__sh_map(P->ctx, out, x->shape.rank, dest);
}

/* For a dot (or a convolution read as one): the sharding of operand `side` implied by the other operand's batch
   and contracting dims. */
GS__FN const gs_sharding *gs__dot_from_other(gs__prop *P, const gs_value *v, int side) {
    const gs_value *o = v->operands[1 - side];
    const gs_sharding *s = gs__arr_sh(o);
    gs__dotinfo I;
    int dest[GS_MAX_RANK], d, e;
    if (!gs__is_tiled(s)) return NULL;
    gs__dotinfo_of(v, &I);
    for (d = 0; d < o->shape.rank; d++) dest[d] = GS__DEST_REP;
    for (e = 0; e < I.n; e++)
        if ((I.cls[e] == GS__DC_BATCH || I.cls[e] == GS__DC_CONTRACT) && I.lhs[e] >= 0 && I.rhs[e] >= 0)
            dest[side ? I.lhs[e] : I.rhs[e]] = side ? I.rhs[e] : I.lhs[e];
    return gs__sh_map(P->ctx, s, v->operands[side]->shape.rank, dest);
}

/* ---- improving a value's sharding (XLA ReturnImprovedShardingImpl) ---- */
GS__FN const gs_sharding *gs__improved(gs__prop *P, const gs_sharding *cur, const gs_sharding *cand, bool may_combine,
                                       bool *merged) {
    const gs_sharding *m;
    *merged = false;
    if (!cand || cand->kind == GS_SHARDING_UNKNOWN || cand->kind == GS_SHARDING_MAXIMAL || cand->kind == GS_SHARDING_TUPLE)
        return NULL;
    if (!cur || cur->kind == GS_SHARDING_UNKNOWN) return cand;
    if (cur->kind == GS_SHARDING_MANUAL || cur->kind == GS_SHARDING_MAXIMAL) return NULL;
    if (cand->kind == GS_SHARDING_MANUAL) return cur->kind == GS_SHARDING_REPLICATED ? cand : NULL;
    if (gs_sharding_equal(cur, cand)) return NULL;
    if (may_combine && gs__is_tiled(cur) && gs__is_tiled(cand)) {
        m = gs__sh_merge(P->ctx, cur, cand);
        if (m && gs__sh_tiles(m) > GS__MAX(gs__sh_tiles(cur), gs__sh_tiles(cand))) {
            *merged = true;
            return m;
        }
    }
    return gs__sh_more_specific(cand, cur) ? cand : NULL;
}

/* the manual conversion (to-manual or to-full) that is annotation v's one user, or NULL: XLA refines such a pair's
   open dims together (gs__refine_pair), never the annotation alone */
GS__FN gs_value *gs__conversion_after(const gs_value *v) {
    gs_value *u = v->first_user;
    if (v->op != GS_OP_ANNOTATE || v->n_users != 1 || !u) return NULL;
    return u->op == GS_OP_TO_MANUAL || u->op == GS_OP_TO_FULL ? u : NULL;
}

/* Applies a candidate to an array value or one element of a tuple value; returns true if it changed. */
GS__FN bool gs__offer(gs__prop *P, gs_value *v, int elem, const gs_sharding *cand, gs_origin_kind dir,
                      const gs_value *from, const char *rule) {
    const gs_sharding *cur = v->sharding, *nw;
    bool merged = false;
    if (cand && cand->group_kind) cand = gs__sh_ungrouped(P->ctx, cand);
    /* unreduced (partial values): kept where the user put it, never changed, and spread only as the summed value's
       sharding (its unreduced devices read as replicated), since a neighbour's own values are whole */
    if (gs__sh_has_unreduced(cur)) return false;
    if (cand && gs__sh_has_unreduced(cand)) cand = gs__sh_reduced(P->ctx, cand);
    if (!cand) return false;
    if (rule != gs__rule_while && rule != gs__rule_cond && rule != gs__rule_group && !gs__receive_allowed(v->op, P->level, dir))
        return false;
    if (elem >= 0) {
        /* tuple element */
        const gs_sharding **elems;
        int i, n = v->n_tuple;
        if (cur && cur->kind != GS_SHARDING_TUPLE) return false;
        if (v->sharding_user) return false;
        nw = gs__improved(P, cur ? cur->elems[elem] : NULL, cand, P->level > 0, &merged);
        if (!nw) return false;
        elems = (const gs_sharding **)gs__arena_alloc(P->ctx, sizeof(gs_sharding *) * (size_t)(n ? n : 1));
        if (!elems) return false;
        for (i = 0; i < n; i++) elems[i] = cur ? cur->elems[i] : gs_sharding_unknown(P->ctx);
        elems[elem] = nw;
        nw = gs_sharding_tuple(P->ctx, n, elems);
        if (!nw) return false;
    } else if (v->sharding_user) {
        /* fixed, except the dims the user left open: merge the candidate's tiling on those dims only */
        uint32_t keep;
        const gs_sharding *c2, *m;
        if (!v->open_dims || P->level == 0 || !gs__is_tiled(cand) || gs__conversion_after(v) ||
            v->op == GS_OP_TO_MANUAL || v->op == GS_OP_TO_FULL)
            return false;
        keep = v->open_dims;
        c2 = gs__sh_replicate_dims(P->ctx, cand, ~keep & ((1u << v->shape.rank) - 1u));
        if (!gs__is_tiled(c2)) return false;
        if (!gs__is_tiled(cur)) {
            m = cur && cur->kind == GS_SHARDING_REPLICATED ? c2 : NULL;
        } else {
            m = gs__sh_merge(P->ctx, cur, c2);
            if (m && gs__sh_tiles(m) <= gs__sh_tiles(cur)) m = NULL;
        }
        if (!m) return false;
        v->sharding = m;
        v->origin.rule = gs__arena_printf(P->ctx, "open dims refined by %s from %s", rule, from ? from->name : "?");
        P->changed = true;
        return true;
    } else {
        nw = gs__improved(P, cur, cand, P->level > 0, &merged);
        if (!nw) return false;
    }
    v->sharding = nw;
    v->origin.kind = dir;
    v->origin.level = P->level;
    v->origin.from = from;
    v->origin.rule = merged ? gs__arena_printf(P->ctx, "%s, merged", rule) : rule;
    v->origin.source = from ? from->origin.source : NULL;
    P->changed = true;
    return true;
}

/* ---- lookahead (XLA LookaheadUserSharding): follow a chain of single users to the first sharded one and map
   its sharding back to v through the pass-through ops on the way. ---- */
GS__FN int gs__num_users(const gs_value *v, gs_value **only) {
    *only = v->first_user;
    return v->n_users;
}

/* user counts (0, 1 or "2 or more") and first users, for the lookahead; the graph does not change while
   propagation runs */
GS__FN void gs__count_users(gs_graph *g) {
    int i, k, j;
    for (i = 0; i < (int)stbds_arrlen(g->values); i++) {
        g->values[i]->n_users = 0;
        g->values[i]->first_user = NULL;
    }
    for (i = 0; i < (int)stbds_arrlen(g->values); i++) {
        gs_value *u = g->values[i];
        for (k = 0; k < u->n_operands; k++) {
            gs_value *x = u->operands[k];
            for (j = 0; j < k; j++)
                if (u->operands[j] == x) break;
            if (j < k) continue; /* the same operand twice counts once */
            if (x->n_users == 0) x->first_user = u;
            if (x->n_users < 2) x->n_users++;
        }
    }
}

GS__FN const gs_sharding *gs__bwd_sh(gs__prop *P, const gs_value *u, const gs_sharding *s, int i);

GS__FN const gs_sharding *gs__lookahead(gs__prop *P, const gs_value *v) {
    const gs_value *chain[8];
    int n = 0, k;
    const gs_value *cur = v;
    const gs_sharding *s = NULL;
    while (n < 8) {
        gs_value *u = NULL;
        if (gs__num_users(cur, &u) != 1 || u->barrier == 2) return NULL;
        if (gs__arr_sh(u) && gs__is_tiled(u->sharding)) {
            chain[n++] = u;
            s = u->sharding;
            break;
        }
        if (!(gs__elementwise(u->op) || u->op == GS_OP_TRANSPOSE || u->op == GS_OP_RESHAPE) || u->barrier) return NULL;
        chain[n++] = u;
        cur = u;
    }
    if (!s) return NULL;
    /* map back: the sharded user's operand view, then through each earlier op's backward rule */
    for (k = n - 1; k >= 0; k--) {
        const gs_value *u = chain[k], *prev = k ? chain[k - 1] : v;
        int op;
        for (op = 0; op < u->n_operands; op++)
            if (u->operands[op] == prev) break;
        if (!(s = gs__bwd_sh(P, u, s, op))) return NULL;
    }
    return s;
}

/* ---- forward rules: the sharding of v implied by its operands (array shardings; tuple-producing ops are
   handled by the caller per element) ---- */
GS__FN const gs_sharding *gs__fwd_dotlike(gs__prop *P, gs_value *v) {
    const gs_sharding *c0 = gs__dotlike_from_operand(P, v, 0), *c1 = gs__dotlike_from_operand(P, v, 1), *win, *oth, *m;
    if (!c0 || !gs__is_tiled(c0)) return c1 ? c1 : c0;
    if (!c1 || !gs__is_tiled(c1)) return c0;
    /* both operands imply a tiled output: lookahead, then batch dims first, then the larger operand */
    {
        const gs_sharding *look = gs__lookahead(P, v);
        bool s0 = look && gs__sh_subtiling_or_equal(P->ctx, &v->shape, c0, look);
        bool s1 = look && gs__sh_subtiling_or_equal(P->ctx, &v->shape, c1, look);
        if (s0 != s1) {
            win = s0 ? c0 : c1;
            oth = s0 ? c1 : c0;
        } else {
            bool b0 = false, b1 = false;
            gs__dotinfo I;
            int e;
            gs__dotinfo_of(v, &I);
            for (e = 0; e < I.n; e++)
                if (I.cls[e] == GS__DC_BATCH) {
                    if (gs_sharding_tiles(c0, I.out[e]) > 1) b0 = true;
                    if (gs_sharding_tiles(c1, I.out[e]) > 1) b1 = true;
                }
            if (b0 != b1) {
                win = b0 ? c0 : c1;
                oth = b0 ? c1 : c0;
            } else {
                bool lhs_larger = gs_shape_bytes(&v->operands[0]->shape) >= gs_shape_bytes(&v->operands[1]->shape);
                win = lhs_larger ? c0 : c1;
                oth = lhs_larger ? c1 : c0;
            }
        }
    }
    m = gs__sh_merge(P->ctx, win, oth);
    return m ? m : win;
}

/* A convolution: read as a dot (XLA InferDotShardingFromOperands) when it has no real spatial dim, or none split
   in either operand and no feature or batch groups; else from the input alone (XLA
   InferConvolutionShardingFromOperands): with a small kernel the input's split carries over (none when the input
   features are split), with a large one only the batch split does. */
GS__FN const gs_sharding *gs__fwd_conv(gs__prop *P, gs_value *v) {
    const gs_conv_config *c = v->conv;
    const gs_sharding *ls = gs__arr_sh(v->operands[0]), *ks = gs__arr_sh(v->operands[1]);
    int dest[GS_MAX_RANK], d, e;
    bool split = false;
    gs__dotinfo I;
    gs__dotinfo_of(v, &I);
    for (e = 0; e < I.n; e++)
        if (I.cls[e] == GS__DC_CONV && ((ls && gs_sharding_tiles(ls, I.lhs[e]) > 1) || (ks && gs_sharding_tiles(ks, I.rhs[e]) > 1)))
            split = true;
    if (I.n_conv == 0 || (!split && c->feature_group_count <= 1 && c->batch_group_count <= 1)) return gs__fwd_dotlike(P, v);
    if (!ls || !gs__is_tiled(ls)) return ls;
    for (d = 0; d < v->shape.rank; d++) dest[d] = GS__DEST_REP;
    dest[c->dims.input_batch] = (int)c->dims.output_batch;
    if (gs__conv_kernel_small(v)) {
        if (gs_sharding_tiles(ls, (int)c->dims.input_feature) > 1) return NULL;
        for (d = 0; d < c->dims.n_spatial; d++) dest[c->dims.input_spatial[d]] = (int)c->dims.output_spatial[d];
    }
    return gs__sh_map(P->ctx, ls, v->shape.rank, dest);
}

/* the most specific (then merged, at level > 0) sharding among operands of the same shape as v */
GS__FN const gs_sharding *gs__fwd_elementwise(gs__prop *P, gs_value *v, int first, int n) {
    const gs_sharding *best = NULL;
    int i;
    for (i = first; i < first + n && i < v->n_operands; i++) {
        const gs_sharding *s = gs__arr_sh(v->operands[i]);
        if (!s || v->operands[i]->shape.rank != v->shape.rank) continue;
        if (!best || gs__sh_more_specific(s, best)) best = s;
    }
    if (best && P->level > 0 && gs__is_tiled(best)) {
        for (i = first; i < first + n && i < v->n_operands; i++) {
            const gs_sharding *s = gs__arr_sh(v->operands[i]), *m;
            if (!gs__is_tiled(s) || s == best || v->operands[i]->shape.rank != v->shape.rank) continue;
            m = gs__sh_merge(P->ctx, best, s);
            if (m) best = m;
        }
    }
    return best;
}

/* sort (any number of operands): the operands' most specific sharding, merged with the others (one sharding for
   every element). Split along the sorted dim it stays so when another dim can take those tiles (the partitioner
   moves them there, as XLA's IsSortOperandShardingMovable), else the sorted dim is replicated. */
GS__FN const gs_sharding *gs__combine(gs__prop *P, int n, const gs_sharding *const *c);

GS__FN const gs_sharding *gs__fwd_sort(gs__prop *P, gs_value *v) {
    const gs_shape *x = &v->operands[0]->shape;
    const gs_sharding *best = NULL, *c[2];
    int k, d, dim = (int)v->dim;
    int64_t t;
    for (k = 0; k < v->n_operands; k++) {
        c[0] = best;
        c[1] = gs__arr_sh(v->operands[k]);
        best = gs__combine(P, 2, c);
    }
    if (!gs__is_tiled(best) || (t = gs_sharding_tiles(best, dim)) == 1) return best;
    for (d = 0; d < x->rank; d++)
        if (d != dim && gs_sharding_tiles(best, d) == 1 && x->dims[d] >= t && x->dims[d] % t == 0) return best;
    return gs__sh_replicate_dims(P->ctx, best, 1u << dim);
}

GS__FN const gs_sharding *gs__fwd_gather_scatter(gs__prop *P, gs_value *v);

/* custom-calls whose sharding XLA's propagation passes through unchanged, both ways (its IsPassthroughCustomOps in
   sharding_propagation.cc): X64Combine (two halves into one 64-bit value, element by element), and the resize ops
   of one operand of the result's rank. Operand x of v qualifies when it is an array of v's rank. */
GS__FN bool gs__passthrough_custom(const gs_value *v, const gs_value *x) {
    static const char *const one[] = {"ResizeNearest", "ResizeBilinear", "ResizeNearestGrad", "ResizeBilinearGrad"};
    int k;
    if (v->op != GS_OP_OPAQUE || !v->target || !gs__is_array(v) || !x || !gs__is_array(x) || x->shape.rank != v->shape.rank)
        return false;
    if (strcmp(v->target, "X64Combine") == 0) return true;
    for (k = 0; k < GS__COUNTOF(one); k++)
        if (v->n_operands == 1 && strcmp(v->target, one[k]) == 0) return true;
    return false;
}

GS__FN const gs_sharding *gs__fwd(gs__prop *P, gs_value *v) {
    const gs_sharding *s0 = v->n_operands ? gs__arr_sh(v->operands[0]) : NULL;
    int d, k, dest[GS_MAX_RANK];
    if (gs__elementwise(v->op)) {
        if (v->op == GS_OP_SELECT) return gs__fwd_elementwise(P, v, 0, 3);
        if (v->op == GS_OP_CLAMP) return gs__fwd_elementwise(P, v, 0, 3);
        return gs__fwd_elementwise(P, v, 0, v->n_operands);
    }
    switch (v->op) {
    case GS_OP_BROADCAST:
        if (!s0) return NULL;
        for (d = 0; d < v->operands[0]->shape.rank; d++) dest[d] = (int)v->dims[d];
        return gs__sh_map(P->ctx, s0, v->shape.rank, dest);
    case GS_OP_RESHAPE: return s0 ? gs__sh_reshape(P->ctx, s0, &v->operands[0]->shape, &v->shape) : NULL;
    case GS_OP_TRANSPOSE:
        if (!s0) return NULL;
        for (d = 0; d < v->shape.rank; d++) dest[v->dims[d]] = d;
        return gs__sh_map(P->ctx, s0, v->shape.rank, dest);
    case GS_OP_SLICE: case GS_OP_PAD: case GS_OP_COPY: case GS_OP_ANNOTATE: case GS_OP_CUMSUM: case GS_OP_CUMPROD: case GS_OP_CUMMAX:
    case GS_OP_CUMMIN:
        return s0;
    case GS_OP_REDUCE_WINDOW:
        for (d = 0; d < v->shape.rank; d++)
            if (v->window[d].base_dilation != 1 || v->window[d].window_dilation != 1) return NULL;
        return s0;
    case GS_OP_REVERSE: return s0 ? gs__sh_reverse(P->ctx, s0, gs__mask_of(v->n_dims, v->dims)) : NULL;
    case GS_OP_ALL_REDUCE:
        /* XLA passes an all-reduce's operand sharding through (its AllReduce test): each element is reduced
           with the same element of the other participants, so the layout of the result is the operand's */
        return v->n_operands == 1 && gs__is_array(v) ? s0 : NULL;
    case GS_OP_CONCATENATE: {
        const gs_sharding *best = gs__fwd_elementwise(P, v, 0, v->n_operands);
        if (P->level == 0 && best) {
            /* pass through only when every sharded operand leaves the concatenated dim alone */
            for (k = 0; k < v->n_operands; k++) {
                const gs_sharding *s = gs__arr_sh(v->operands[k]);
                if (gs__is_tiled(s) && gs_sharding_tiles(s, (int)v->dim) > 1) return NULL;
            }
        }
        return best;
    }
    case GS_OP_DYNAMIC_SLICE:
        return s0 ? gs__sh_replicate_dims(P->ctx, s0, gs__size_diff_mask(&v->operands[0]->shape, &v->shape)) : NULL;
    case GS_OP_DYNAMIC_UPDATE_SLICE: {
        const gs_sharding *su = gs__arr_sh(v->operands[1]), *m;
        if (gs__is_tiled(su) && P->level > 0) {
            su = gs__sh_replicate_dims(P->ctx, su, gs__size_diff_mask(&v->operands[1]->shape, &v->shape));
            if (!s0) return su;
            m = gs__is_tiled(s0) && gs__is_tiled(su) ? gs__sh_merge(P->ctx, s0, su) : NULL;
            return m ? m : s0;
        }
        return s0;
    }
    case GS_OP_REDUCE: case GS_OP_ARGMAX: case GS_OP_ARGMIN: {
        uint32_t red = v->op == GS_OP_REDUCE ? gs__mask_of(v->n_dims, v->dims) : 1u << v->dim;
        if (!s0) return NULL;
        for (d = 0, k = 0; d < v->operands[0]->shape.rank; d++) dest[d] = (red >> d) & 1u ? GS__DEST_REP : k++;
        return gs__sh_map(P->ctx, s0, v->shape.rank, dest);
    }
    case GS_OP_DOT: case GS_OP_RAGGED_DOT: return gs__fwd_dotlike(P, v);
    case GS_OP_CONVOLUTION: return gs__fwd_conv(P, v);
    case GS_OP_OPAQUE: return gs__passthrough_custom(v, v->operands[0]) ? s0 : NULL;
    case GS_OP_GATHER: case GS_OP_SCATTER: return gs__fwd_gather_scatter(P, v);
    case GS_OP_SORT: return gs__fwd_sort(P, v);
    case GS_OP_TOPK:
        return s0 ? gs__sh_replicate_dims(P->ctx, s0, 1u << (v->operands[0]->shape.rank - 1)) : NULL;
    case GS_OP_FFT: case GS_OP_CHOLESKY: case GS_OP_TRIANGULAR_SOLVE: {   /* batch dims pass, the rest whole */
        const gs_sharding *sb = v->op == GS_OP_TRIANGULAR_SOLVE ? gs__arr_sh(v->operands[1]) : NULL;
        if (gs__is_tiled(sb)) s0 = sb;
        return s0 ? gs__sh_replicate_dims(P->ctx, s0, gs__whole_minor_mask(v)) : NULL;
    }
    case GS_OP_WHILE: return v->operands[0]->sharding;
    case GS_OP_RAGGED_ALL_TO_ALL:
        /* XLA's SupportSpatialPartitioning leaves it out: no tiled sharding is inferred for it; an operand that is
           replicated makes it replicated (manual operands are handled before any rule: a manual region) */
        for (k = 0; k < v->n_operands; k++) {
            const gs_sharding *s = gs__arr_sh(v->operands[k]);
            if (s && s->kind == GS_SHARDING_REPLICATED) return s;
        }
        return NULL;
    default: return NULL;
    }
}

/* ---- gather and scatter: operand O, indices I and R (the gather's output, the scatter's updates). R's batch
   dims follow I's dims in order; O's dims taken whole pass through to R's offset (window) dims; the parallel dims
   (explicit batching dims, iota-built index components) tie an O dim, an I dim and an R batch dim together. ---- */
/* O dim -> R dim (pass-through and parallel dims), I dim -> R dim, and I dim -> O dim (parallel dims only) */
GS__FN void gs__gs_maps(const gs_value *v, int *o2r, int *i2r, int *i2o) {
    int op[GS_MAX_RANK], ix[GS_MAX_RANK], n, k, d;
    if (v->op == GS_OP_GATHER) {
        gs__gather_operand_dest(v, false, o2r);
        gs__gather_index_dest(v, i2r);
    } else {
        gs__scatter_update_dest(v, o2r);
        gs__scatter_index_dest(v, i2r);
    }
    for (d = 0; d < v->operands[1]->shape.rank; d++) i2o[d] = GS__DEST_REP;
    n = gs__gs_parallel(v, op, ix);
    for (k = 0; k < n; k++) {
        o2r[op[k]] = i2r[ix[k]];
        i2o[ix[k]] = op[k];
    }
}

/* the best of candidate shardings in order of preference: the first, made more specific by each later one it
   merges with (at level > 0), or replaced by a later one that is more specific and does not merge */
GS__FN const gs_sharding *gs__combine(gs__prop *P, int n, const gs_sharding *const *c) {
    const gs_sharding *best = NULL, *m;
    int k;
    for (k = 0; k < n; k++) {
        if (!c[k] || c[k]->kind == GS_SHARDING_MANUAL) continue;
        if (!best) best = c[k];
        else if (P->level > 0 && gs__is_tiled(best) && gs__is_tiled(c[k]) && (m = gs__sh_merge(P->ctx, best, c[k])))
            best = m;
        else if (gs__sh_more_specific(c[k], best))
            best = c[k];
    }
    return best;
}

/* forward: a gather's output from its indices (every batch dim) and its operand (pass-through and parallel dims);
   a scatter's output from its operand, then its indices' parallel dims, then its updates' window and parallel dims */
GS__FN const gs_sharding *gs__fwd_gather_scatter(gs__prop *P, gs_value *v) {
    const gs_value *O = v->operands[0], *I = v->operands[1];
    const gs_sharding *so = gs__arr_sh(O), *si = gs__arr_sh(I), *c[3] = {NULL, NULL, NULL};
    int o2r[GS_MAX_RANK], i2r[GS_MAX_RANK], i2o[GS_MAX_RANK], inv[GS_MAX_RANK];
    gs__gs_maps(v, o2r, i2r, i2o);
    if (v->op == GS_OP_GATHER) {
        if (si) c[0] = gs__sh_map(P->ctx, si, v->shape.rank, i2r);
        if (so) c[1] = gs__sh_map(P->ctx, so, v->shape.rank, o2r);
        return gs__combine(P, 2, c);
    }
    {
        const gs_value *U = v->operands[2];
        const gs_sharding *su = gs__arr_sh(U);
        c[0] = so;
        if (!gs__is_tiled(si) && !gs__is_tiled(su)) return so;
        if (si) c[1] = gs__sh_map(P->ctx, si, v->shape.rank, i2o);
        if (su) {
            gs__dest_invert(v->shape.rank, o2r, U->shape.rank, inv);
            c[2] = gs__sh_map(P->ctx, su, v->shape.rank, inv);
        }
        return gs__combine(P, 3, c);
    }
}

/* backward into operand i of gather/scatter u whose sharding is s: O and I from a gather's output; a scatter's
   operand takes the output's sharding, its updates take the output's window and parallel dims merged with the
   indices', its indices take the updates' batch dims */
GS__FN const gs_sharding *gs__bwd_gather_scatter(gs__prop *P, const gs_value *u, const gs_sharding *s, int i) {
    const gs_value *x = u->operands[i], *R = u->op == GS_OP_GATHER ? u : u->operands[2];
    int o2r[GS_MAX_RANK], i2r[GS_MAX_RANK], i2o[GS_MAX_RANK], dest[GS_MAX_RANK];
    const gs_sharding *c[2] = {NULL, NULL};
    gs__gs_maps(u, o2r, i2r, i2o);
    if (u->op == GS_OP_GATHER) {
        if (!gs__is_tiled(s)) return s;
        gs__dest_invert(x->shape.rank, i == 1 ? i2r : o2r, u->shape.rank, dest);
        return gs__sh_map(P->ctx, s, x->shape.rank, dest);
    }
    if (i == 0) return s;
    if (i == 1) {
        const gs_sharding *su = gs__arr_sh(R);
        if (!gs__is_tiled(su)) return NULL;
        gs__dest_invert(x->shape.rank, i2r, R->shape.rank, dest);
        return gs__sh_map(P->ctx, su, x->shape.rank, dest);
    }
    {
        const gs_sharding *si = gs__arr_sh(u->operands[1]);
        if (gs__is_tiled(s)) c[0] = gs__sh_map(P->ctx, s, R->shape.rank, o2r);
        if (gs__is_tiled(si)) c[1] = gs__sh_map(P->ctx, si, R->shape.rank, i2r);
        if (!gs__is_tiled(c[0])) return c[1] ? c[1] : c[0];
        return gs__combine(P, 2, c);
    }
}

/* ---- backward rules: the sharding of operand i implied by user u having sharding s ---- */
/* operand i's role in u: a variadic reducer's operands as u's own (inputs as operand 0, inits or updates as the
   last of u's own; each has the dims of the one it stands for) */
GS__FN int gs__bwd_role(const gs_value *u, int i) {
    int b = gs__red_base(u);
    if (u->red_n <= 0 || i < b) return i;
    return i - b < u->red_n ? 0 : b - 1;
}

GS__FN const gs_sharding *gs__bwd_sh(gs__prop *P, const gs_value *u, const gs_sharding *s, int i) {
    const gs_value *x = u->operands[i = gs__bwd_role(u, i)];
    int d, k, dest[GS_MAX_RANK];
    if (!s || s->kind == GS_SHARDING_UNKNOWN || s->kind == GS_SHARDING_MAXIMAL) return NULL;
    if (u->op == GS_OP_GET_TUPLE_ELEMENT || u->op == GS_OP_TUPLE || u->op == GS_OP_WHILE) return NULL; /* by the caller */
    if (s->kind == GS_SHARDING_TUPLE) {
        /* sort/top-k: element i (sort) or the values (top-k) */
        if (u->op == GS_OP_SORT) s = i < s->n_elems ? s->elems[i] : NULL;
        else if (u->op == GS_OP_TOPK) s = s->n_elems ? s->elems[0] : NULL;
        else return NULL;
        if (!s || s->kind == GS_SHARDING_UNKNOWN || s->kind == GS_SHARDING_MAXIMAL) return NULL;
        if (u->op == GS_OP_TOPK) return gs__sh_replicate_dims(P->ctx, s, 1u << (x->shape.rank - 1));
        return s;
    }
    if (!gs__is_array(x)) return NULL;
    if (gs__elementwise(u->op) || u->op == GS_OP_ANNOTATE) {
        if (x->shape.rank != u->shape.rank) return NULL; /* scalar operands of select/clamp */
        for (d = 0; d < x->shape.rank; d++)
            if (x->shape.dims[d] != u->shape.dims[d]) return NULL;
        return s;
    }
    switch (u->op) {
    case GS_OP_BROADCAST:
        if (!gs__is_tiled(s)) return s;
        for (d = 0; d < u->shape.rank; d++) dest[d] = GS__DEST_REP;
        for (d = 0; d < x->shape.rank; d++) dest[u->dims[d]] = d;
        return gs__sh_map(P->ctx, s, x->shape.rank, dest);
    case GS_OP_RESHAPE: return gs__sh_reshape(P->ctx, s, &u->shape, &x->shape);
    case GS_OP_TRANSPOSE:
        for (d = 0; d < u->shape.rank; d++) dest[d] = (int)u->dims[d];
        return gs__sh_map(P->ctx, s, x->shape.rank, dest);
    case GS_OP_SLICE: case GS_OP_PAD: case GS_OP_CUMSUM: case GS_OP_CUMPROD: case GS_OP_CUMMAX: case GS_OP_CUMMIN:
    case GS_OP_REDUCE_WINDOW:
        return i == 0 ? s : NULL;
    case GS_OP_REVERSE: return gs__sh_reverse(P->ctx, s, gs__mask_of(u->n_dims, u->dims));
    case GS_OP_ALL_REDUCE: return u->n_operands == 1 && gs__is_array(u) ? s : NULL;  /* as forward */
    case GS_OP_OPAQUE: return gs__passthrough_custom(u, x) ? s : NULL;
    case GS_OP_CONCATENATE: return s;
    case GS_OP_DYNAMIC_SLICE:
        if (i != 0) return NULL;
        return gs__sh_replicate_dims(P->ctx, s, gs__size_diff_mask(&x->shape, &u->shape));
    case GS_OP_DYNAMIC_UPDATE_SLICE:
        if (i == 0) return s;
        if (i == 1) return gs__sh_replicate_dims(P->ctx, s, gs__size_diff_mask(&x->shape, &u->shape));
        return NULL;
    case GS_OP_REDUCE: case GS_OP_ARGMAX: case GS_OP_ARGMIN: {
        uint32_t red = u->op == GS_OP_REDUCE ? gs__mask_of(u->n_dims, u->dims) : 1u << u->dim;
        if (i != 0) return NULL;
        for (d = 0, k = 0; d < x->shape.rank; d++)
            if (!((red >> d) & 1u)) dest[k++] = d;
        return gs__sh_map(P->ctx, s, x->shape.rank, dest);
    }
    case GS_OP_DOT: case GS_OP_CONVOLUTION: case GS_OP_RAGGED_DOT: {
        const gs_sharding *c, *o, *m;
        gs__dotinfo I;
        if (u->op == GS_OP_RAGGED_DOT && i == 2) return gs__ragged_to_sizes(P, u, s);
        c = gs__dotlike_to_operand(P, u, s, i);
        gs__dotinfo_of(u, &I);
        if (I.n_conv || P->level == 0) return c;
        o = gs__dot_from_other(P, u, i);
        /* an unsplit output says nothing; the other operand's batch/contracting split is then a guess, made
           last (level 3) so that anything the operand's own producers imply comes first */
        if (!gs__is_tiled(c)) return gs__is_tiled(o) && P->level == 3 ? o : c;
        m = gs__is_tiled(o) ? gs__sh_merge(P->ctx, c, o) : NULL;
        return m ? m : c;
    }
    case GS_OP_GATHER: case GS_OP_SCATTER: return gs__bwd_gather_scatter(P, u, s, i);
    case GS_OP_SORT: return s;
    case GS_OP_TOPK: return gs__sh_replicate_dims(P->ctx, s, 1u << (x->shape.rank - 1));
    case GS_OP_FFT: case GS_OP_CHOLESKY: case GS_OP_TRIANGULAR_SOLVE:
        return gs__sh_replicate_dims(P->ctx, s, gs__whole_minor_mask(u));
    default: return NULL;
    }
    return NULL;
}

/* ---- the driver ---- */
GS__FN void gs__collect_graphs(gs__prop *P, gs_graph *g) {
    int i, k;
    for (k = 0; k < (int)stbds_arrlen(P->graphs); k++)
        if (P->graphs[k] == g) return;
    stbds_arrput(P->graphs, g);
    for (i = 0; i < (int)stbds_arrlen(g->values); i++) {
        gs_value *v = g->values[i];
        if (v->op == GS_OP_CONDITIONAL) {
            stbds_arrput(P->conds, v);
            for (k = 0; k < v->n_branches; k++) gs__collect_graphs(P, v->branches[k]);
        }
        if (v->op != GS_OP_WHILE) continue;
        stbds_arrput(P->whiles, v);
        gs__collect_graphs(P, v->cond);
        gs__collect_graphs(P, v->body);
    }
}

/* forward for tuple-producing ops, element by element; manual operands make users manual */

/* batch-norm-training/-inference/-grad: x[.., F, ..] (and grad's grad_output, the same shape) and the [F] vectors.
   The partitioner keeps only the feature dim split (it gathers the others, gs__sp_batch_norm), so the rule passes
   the feature dim's tiles: between x-shaped values as they are, to and from the vectors' dim 0. */
GS__FN bool gs__bn_xlike(const gs_value *v, int i) { return i == 0 || (v->op == GS_OP_BATCH_NORM_GRAD && i == 4); }
GS__FN const gs_sharding *gs__bn_to_vec(gs__prop *P, const gs_value *v, const gs_sharding *xs) {
    int d, dest[GS_MAX_RANK];
    for (d = 0; d < v->operands[0]->shape.rank; d++) dest[d] = d == (int)v->dim ? 0 : GS__DEST_REP;
    return xs ? gs__sh_map(P->ctx, xs, 1, dest) : NULL;
}
GS__FN const gs_sharding *gs__bn_to_x(gs__prop *P, const gs_value *v, const gs_sharding *vs) {
    int dest[1];
    if (!gs__is_tiled(vs)) return vs;
    dest[0] = (int)v->dim;
    return gs__sh_map(P->ctx, vs, v->operands[0]->shape.rank, dest);
}
/* x's dims other than the feature dim */
GS__FN uint32_t gs__bn_others(const gs_value *v) {
    int d;
    uint32_t m = 0;
    for (d = 0; d < v->operands[0]->shape.rank; d++)
        if (d != (int)v->dim) m |= 1u << d;
    return m;
}
/* the x-shaped sharding the operands give (x first, then grad_output, then a vector's) */
GS__FN const gs_sharding *gs__bn_fwd(gs__prop *P, const gs_value *v) {
    int i;
    uint32_t others = gs__bn_others(v);
    for (i = 0; i < v->n_operands; i++) {
        const gs_sharding *s = gs__arr_sh(v->operands[i]);
        if (s && gs__bn_xlike(v, i)) return gs__is_tiled(s) ? gs__sh_replicate_dims(P->ctx, s, others) : s;
    }
    for (i = 0; i < v->n_operands; i++) {
        const gs_sharding *s = gs__arr_sh(v->operands[i]);
        if (s && !gs__bn_xlike(v, i)) return gs__bn_to_x(P, v, s);
    }
    return NULL;
}

GS__FN void gs__fwd_value(gs__prop *P, gs_value *v) {
    int k;
    const char *rule = gs_op_name(v->op);
    if (v->op == GS_OP_ANNOTATE) rule = "sharding";
    if (v->n_operands == 0 || v->op == GS_OP_TO_FULL || v->op == GS_OP_TO_MANUAL) return;
    for (k = 0; k < v->n_operands; k++)
        if (gs__is_manual(v->operands[k]->sharding) || gs__all_manual(v->operands[k]->sharding)) {
            if (gs__is_array(v))
                gs__offer(P, v, -1, gs__is_manual(v->operands[k]->sharding) ? v->operands[k]->sharding : gs_sharding_manual(P->ctx),
                          GS_ORIGIN_FORWARD, v->operands[k], "manual region");
            else
                for (k = 0; k < v->n_tuple; k++)
                    gs__offer(P, v, k, gs_sharding_manual(P->ctx), GS_ORIGIN_FORWARD, v->operands[0], "manual region");
            return;
        }
    if (!gs__fwd_allowed(v->op, P->level) || v->barrier == 1 || v->op == GS_OP_CONDITIONAL) return;   /* gs__sync_cond */
    if (v->op == GS_OP_TUPLE) {   /* leaf by leaf: an element that is a tuple gives each of its leaves */
        int leaf = 0, j;
        for (k = 0; k < v->n_operands; k++) {
            const gs_value *o = v->operands[k];
            const gs_sharding *t = o->sharding;
            if (gs__is_array(o)) {
                gs__offer(P, v, leaf++, gs__arr_sh(o), GS_ORIGIN_FORWARD, o, rule);
                continue;
            }
            for (j = 0; j < o->n_tuple; j++, leaf++)
                if (t && t->kind == GS_SHARDING_TUPLE && j < t->n_elems) gs__offer(P, v, leaf, t->elems[j], GS_ORIGIN_FORWARD, o, rule);
        }
        return;
    }
    if (v->op == GS_OP_GET_TUPLE_ELEMENT) {   /* the element's leaves */
        const gs_sharding *t = v->operands[0]->sharding;
        int first, n, node, j;
        if (!t || t->kind != GS_SHARDING_TUPLE || !gs__tuple_child(v->operands[0], v->index, &first, &n, &node)) return;
        if (gs__is_array(v)) {
            if (first < t->n_elems) gs__offer(P, v, -1, t->elems[first], GS_ORIGIN_FORWARD, v->operands[0], rule);
        } else {
            for (j = 0; j < n && first + j < t->n_elems; j++)
                gs__offer(P, v, j, t->elems[first + j], GS_ORIGIN_FORWARD, v->operands[0], rule);
        }
        return;
    }
    if (v->op == GS_OP_WHILE) {
        const gs_sharding *t = v->operands[0]->sharding;
        if (!t) return;
        if (t->kind == GS_SHARDING_TUPLE) {
            for (k = 0; k < t->n_elems && k < v->n_tuple; k++) gs__offer(P, v, k, t->elems[k], GS_ORIGIN_FORWARD, v->operands[0], rule);
        } else {
            gs__offer(P, v, -1, t, GS_ORIGIN_FORWARD, v->operands[0], rule);
        }
        return;
    }
    if (v->op >= GS_OP_BATCH_NORM_TRAINING && v->op <= GS_OP_BATCH_NORM_GRAD) {
        const gs_sharding *xs = gs__bn_fwd(P, v);
        if (!xs) return;
        if (gs__is_array(v)) gs__offer(P, v, -1, xs, GS_ORIGIN_FORWARD, v->operands[0], rule);
        else
            for (k = 0; k < v->n_tuple; k++) gs__offer(P, v, k, k == 0 ? xs : gs__bn_to_vec(P, v, xs), GS_ORIGIN_FORWARD, v->operands[0], rule);
        return;
    }
    if (!gs__is_array(v)) {
        /* sort with several operands and top-k: the same sharding for every element */
        const gs_sharding *s = gs__fwd(P, v);
        for (k = 0; k < v->n_tuple; k++) gs__offer(P, v, k, s, GS_ORIGIN_FORWARD, v->operands[0], rule);
        return;
    }
    {
        const gs_sharding *s = gs__fwd(P, v);
        const gs_value *from = v->operands[0];
        if (!s) return;
        /* credit the operand the sharding came from (the first whose sharding is the candidate) */
        for (k = 0; k < v->n_operands; k++)
            if (v->operands[k]->sharding == s) { from = v->operands[k]; break; }
        if (k == v->n_operands)
            for (k = 0; k < v->n_operands; k++)
                if (gs__is_tiled(v->operands[k]->sharding)) { from = v->operands[k]; break; }
        gs__offer(P, v, -1, s, GS_ORIGIN_FORWARD, from, rule);
    }
}

/* outfeed(data, token) with sharding={s_0, .., s_n-1, s_token} as written: leaf j of the data takes s_j, as XLA
   reads an outfeed's sharding (the shardings of what it sends, then its token's); maximal and manual elements are
   not offered (a device placement, and a manual region the program must enter itself) */
GS__FN bool gs__outfeed_offers(const gs_sharding *e) {
    return e->kind == GS_SHARDING_REPLICATED || (e->kind == GS_SHARDING_TILED && !gs__is_manual(e));
}
GS__FN void gs__bwd_outfeed(gs__prop *P, gs_value *u) {
    const gs_sharding *k = u->kept_sharding;
    gs_value *x = u->n_operands ? u->operands[0] : NULL;
    int j;
    if (!k || k->kind != GS_SHARDING_TUPLE || !x) return;
    if (gs__is_array(x)) {
        if (k->n_elems == 2 && gs__outfeed_offers(k->elems[0]))
            gs__offer(P, x, -1, k->elems[0], GS_ORIGIN_BACKWARD, u, "outfeed");
        return;
    }
    if (k->n_elems != x->n_tuple + 1) return;
    for (j = 0; j < x->n_tuple; j++)
        if (gs__outfeed_offers(k->elems[j])) gs__offer(P, x, j, k->elems[j], GS_ORIGIN_BACKWARD, u, "outfeed");
}

/* backward: u's sharding into each operand */
GS__FN void gs__bwd_value(gs__prop *P, gs_value *u) {
    int i, k;
    const gs_sharding *s = u->sharding;
    const char *rule = u->op == GS_OP_ANNOTATE ? "sharding" : gs_op_name(u->op);
    if (u->op == GS_OP_OPAQUE && u->opaque && strcmp(u->opaque, "outfeed") == 0) {
        gs__bwd_outfeed(P, u);
        return;
    }
    if (!s || s->kind == GS_SHARDING_UNKNOWN) return;
    if (gs__is_manual(s) && u->op != GS_OP_TO_MANUAL) {
        for (i = 0; i < u->n_operands; i++)
            if (gs__is_array(u->operands[i])) gs__offer(P, u->operands[i], -1, s, GS_ORIGIN_BACKWARD, u, "manual region");
        return;
    }
    if (u->op == GS_OP_TO_MANUAL || u->op == GS_OP_TO_FULL || u->op == GS_OP_CONDITIONAL) return;   /* gs__sync_cond */
    if (!gs__bwd_allowed(u->op, P->level) || u->barrier == 2) return;
    if (u->op == GS_OP_GET_TUPLE_ELEMENT) {   /* into the element's leaves of the tuple */
        gs_value *t = u->operands[0];
        int first, n, node, j;
        if (!gs__tuple_child(t, u->index, &first, &n, &node)) return;
        if (gs__arr_sh(u)) gs__offer(P, t, first, s, GS_ORIGIN_BACKWARD, u, rule);
        else if (!gs__is_array(u) && s->kind == GS_SHARDING_TUPLE)
            for (j = 0; j < n && j < s->n_elems; j++) gs__offer(P, t, first + j, s->elems[j], GS_ORIGIN_BACKWARD, u, rule);
        return;
    }
    if (u->op == GS_OP_TUPLE || u->op == GS_OP_WHILE) {
        int leaf = 0, j;
        if (s->kind != GS_SHARDING_TUPLE) {
            if (u->op == GS_OP_WHILE) gs__offer(P, u->operands[0], -1, s, GS_ORIGIN_BACKWARD, u, rule);
            return;
        }
        if (u->op == GS_OP_WHILE) {
            for (k = 0; k < s->n_elems; k++) gs__offer(P, u->operands[0], k, s->elems[k], GS_ORIGIN_BACKWARD, u, rule);
            return;
        }
        for (k = 0; k < u->n_operands; k++) {   /* leaf by leaf into the elements */
            gs_value *o = u->operands[k];
            if (gs__is_array(o)) {
                if (leaf < s->n_elems) gs__offer(P, o, -1, s->elems[leaf], GS_ORIGIN_BACKWARD, u, rule);
                leaf++;
                continue;
            }
            for (j = 0; j < o->n_tuple; j++, leaf++)
                if (leaf < s->n_elems) gs__offer(P, o, j, s->elems[leaf], GS_ORIGIN_BACKWARD, u, rule);
        }
        return;
    }
    if (u->op >= GS_OP_BATCH_NORM_TRAINING && u->op <= GS_OP_BATCH_NORM_GRAD) {   /* from the x-shaped result */
        const gs_sharding *xs = s->kind == GS_SHARDING_TUPLE ? (s->n_elems ? s->elems[0] : NULL) : s;
        if (!xs || xs->kind == GS_SHARDING_UNKNOWN || xs->kind == GS_SHARDING_MAXIMAL) return;
        if (gs__is_tiled(xs)) xs = gs__sh_replicate_dims(P->ctx, xs, gs__bn_others(u));
        for (i = 0; i < u->n_operands; i++)
            gs__offer(P, u->operands[i], -1, gs__bn_xlike(u, i) ? xs : gs__bn_to_vec(P, u, xs), GS_ORIGIN_BACKWARD, u, rule);
        return;
    }
    for (i = 0; i < u->n_operands; i++) {
        gs_value *x = u->operands[i];
        if (!gs__is_array(x)) continue;
        gs__offer(P, x, -1, gs__bwd_sh(P, u, s, i), GS_ORIGIN_BACKWARD, u, rule);
    }
}

/* ---- open dims across a manual conversion (XLA's RefineManualAutoShardingFromAuto / ...FromManual): an
   annotation with open dims whose one user is to-manual or to-full with the same open dims is refined together with
   it. The auto side (the annotation before to-manual, or the to-full) and the manual side (the to-manual, or the
   annotation before to-full) take the same split on the open dims; the manual subgroup stays as written. ---- */

/* *dst refined by cand when they are compatible and the result has more tiles (XLA MergeShardingIfCompatible: a
   replicated dst takes cand, a tiled one must have replication to give) */
GS__FN bool gs__merge_more(gs__prop *P, const gs_sharding *cand, const gs_sharding **dst) {
    const gs_sharding *m;
    if (!gs__is_tiled(cand) || !*dst) return false;
    if ((*dst)->kind == GS_SHARDING_REPLICATED) {
        *dst = cand;
        return true;
    }
    if (!gs__is_tiled(*dst) || gs_sharding_replication(*dst) <= 1) return false;
    m = gs__sh_merge(P->ctx, cand, *dst);
    if (!m || gs__sh_tiles(m) <= gs__sh_tiles(*dst)) return false;
    *dst = m;
    return true;
}

/* the pair's shardings can be refined: the manual side has a manual subgroup and replication (nothing nested),
   the auto side no manual subgroup */
GS__FN bool gs__pair_ok(const gs_sharding *au, const gs_sharding *man) {
    return au && man && gs__is_tiled(man) && man->n_sub == 2 && gs_sharding_manual_group(man) > 1 &&
           gs_sharding_replication(man) > 1 && gs_sharding_manual_group(au) <= 1;
}

/* from an auto sharding `src` (rank r): its split on the open dims into the auto side, and into the manual side with
   the manual dim read as one more data dim (auto: [.., 1]; manual: [.., m]) */
GS__FN bool gs__pair_from_auto(gs__prop *P, const gs_sharding *src, uint32_t open, int r, const gs_sharding **au,
                               const gs_sharding **man) {
    const gs_sharding *pr, *a = *au, *m;
    int dest[GS_MAX_RANK + 1], d;
    if (!gs__pair_ok(a, *man) || !gs__is_tiled(src) || gs_sharding_manual_group(src) > 1) return false;
    pr = gs__sh_replicate_dims(P->ctx, src, ~open & ((1u << r) - 1u));
    if (!gs__merge_more(P, pr, &a) || !gs__is_tiled(pr)) return false;
    for (d = 0; d <= r; d++) dest[d] = d;
    m = gs__sh_map_man(P->ctx, *man, r + 1, dest, r);
    if (!m || !gs__merge_more(P, gs__sh_map(P->ctx, pr, r + 1, dest), &m)) return false;
    dest[r] = GS__DEST_MANUAL;
    if (!(m = gs__sh_map(P->ctx, m, r, dest))) return false;
    *au = a;
    *man = m;
    return true;
}

/* from a partly manual sharding `src` (rank r): its split on the open dims into the manual side, and into the auto
   side with the manual subgroup read as replication */
GS__FN bool gs__pair_from_manual(gs__prop *P, const gs_sharding *src, uint32_t open, int r, const gs_sharding **au,
                                 const gs_sharding **man) {
    const gs_sharding *pr, *a = *au, *m = *man;
    int dest[GS_MAX_RANK], d;
    if (!gs__pair_ok(a, m) || !gs__is_tiled(src) || gs_sharding_manual_group(src) <= 1) return false;
    pr = gs__sh_replicate_dims(P->ctx, src, ~open & ((1u << r) - 1u));
    if (!gs__merge_more(P, pr, &m)) return false;
    for (d = 0; d < r; d++) dest[d] = d;
    if (!gs__merge_more(P, gs__sh_map_man(P->ctx, pr, r, dest, GS__DEST_REP), &a)) return false;
    *au = a;
    *man = m;
    return true;
}

/* one refinement of the pair (annotation v, conversion c) from `src`, which is on the auto side when from_auto */
GS__FN void gs__pair_apply(gs__prop *P, gs_value *v, gs_value *c, const gs_sharding *src, bool from_auto,
                           const gs_value *from) {
    bool to_manual = c->op == GS_OP_TO_MANUAL, ok;
    const gs_sharding *au = to_manual ? v->sharding : c->sharding, *man = to_manual ? c->sharding : v->sharding;
    ok = from_auto ? gs__pair_from_auto(P, src, v->open_dims, v->shape.rank, &au, &man)
                   : gs__pair_from_manual(P, src, v->open_dims, v->shape.rank, &au, &man);
    if (!ok) return;
    v->sharding = to_manual ? au : man;
    c->sharding = to_manual ? man : au;
    v->origin.rule = c->origin.rule = gs__arena_printf(P->ctx, "open dims refined across %s from %s",
                                                       to_manual ? "to-manual" : "to-full", from->name);
    P->changed = true;
}

/* XLA's InferUnspecifiedDimsFromOperand and ...FromUsers for a pair: from v's operand, then from each user of c
   (the sharding that user implies for c) */
GS__FN void gs__refine_pair(gs__prop *P, gs_graph *h, gs_value *v) {
    gs_value *c = gs__conversion_after(v);
    bool to_manual;
    int i, k;
    if (!c || !v->open_dims || c->open_dims != v->open_dims || P->level == 0 || !v->sharding_user ||
        !c->sharding_user || c->shape.rank != v->shape.rank)
        return;
    to_manual = c->op == GS_OP_TO_MANUAL;
    gs__pair_apply(P, v, c, gs__arr_sh(v->operands[0]), to_manual, v->operands[0]);
    for (i = 0; i < (int)stbds_arrlen(h->values); i++) {
        gs_value *w = h->values[i];
        for (k = 0; k < w->n_operands; k++)
            if (w->operands[k] == c && gs__is_tiled(w->sharding)) {
                gs__pair_apply(P, v, c, gs__bwd_sh(P, w, w->sharding, k), !to_manual, w);
                break;
            }
    }
}

/* ---- shard groups (XLA's shard_as / shard_like): an annotation "{unknown shard_as N}" leaves its value open and
   puts it (and, on a Sharding custom-call, the annotated operand) in group N. Members of a group offer each other
   their shardings while propagation runs; at the end every open member of a shard_as group takes the group's one
   sharding, so they all agree (shard_like members only take each other's as hints). ---- */
GS__FN void gs__join_group(gs__prop *P, gs_value *v, int kind, int64_t id) {
    int k;
    if (v->shape.dtype == GS_TUPLE) return;
    if (!v->group_kind) {
        v->group_kind = kind;
        v->group_id = id;
    }
    for (k = 0; k < (int)stbds_arrlen(P->members); k++)
        if (P->members[k] == v) return;
    stbds_arrput(P->members, v);
}

/* an {unknown} annotation is open: propagation decides it (its group, if any, is kept on the value) */
GS__FN void gs__open_unknown(gs__prop *P, gs_value *v) {
    const gs_sharding *s = v->sharding;
    if (s->group_kind) {
        gs__join_group(P, v, s->group_kind, s->group_id);
        if (v->op == GS_OP_ANNOTATE && !v->operands[0]->sharding_user)
            gs__join_group(P, v->operands[0], s->group_kind, s->group_id);
    }
    v->sharding_user = false;
    v->sharding = NULL;
    GS__ZERO(v->origin);
}

GS__FN bool gs__same_group(const gs_value *a, const gs_value *b) {
    return a != b && a->group_kind == b->group_kind && a->group_id == b->group_id && gs_shape_equal(&a->shape, &b->shape);
}

GS__FN void gs__sync_groups(gs__prop *P) {
    int a, b, n = (int)stbds_arrlen(P->members);
    for (a = 0; a < n; a++)
        for (b = 0; b < n; b++)
            if (gs__same_group(P->members[a], P->members[b]))
                gs__offer(P, P->members[a], -1, gs__arr_sh(P->members[b]), GS_ORIGIN_BACKWARD, P->members[b], gs__rule_group);
}

/* shard_as: the group's sharding (its members' combined, first member first) on every open member */
GS__FN void gs__settle_groups(gs__prop *P) {
    int a, b, n = (int)stbds_arrlen(P->members);
    for (a = 0; a < n; a++) {
        gs_value *v = P->members[a];
        const gs_sharding *best = NULL, *c[2];
        if (v->group_kind != 1 || v->sharding_user) continue;
        for (b = 0; b < n; b++) {
            const gs_sharding *s = gs__arr_sh(P->members[b]);
            if (b != a && !gs__same_group(v, P->members[b])) continue;
            if (!s) continue;
            c[0] = best;
            c[1] = s;
            best = gs__combine(P, 2, c);
        }
        best = gs__sh_ungrouped(P->ctx, best);
        if (best && !gs_sharding_equal(best, v->sharding)) {
            v->sharding = best;
            v->origin.kind = GS_ORIGIN_BACKWARD;
            v->origin.rule = gs__rule_group;
        }
    }
}

/* src's sharding offered to dst, which has src's shape (leaf by leaf for a tuple) */
GS__FN void gs__offer_same(gs__prop *P, gs_value *dst, const gs_value *src, gs_origin_kind dir, const char *rule) {
    const gs_sharding *s = src->sharding;
    int k;
    if (!s || dst->shape.dtype != src->shape.dtype) return;
    if (s->kind == GS_SHARDING_TUPLE) {
        if (!gs__is_array(dst))
            for (k = 0; k < s->n_elems && k < dst->n_tuple; k++) gs__offer(P, dst, k, s->elems[k], dir, src, rule);
    } else if (gs__is_array(dst)) {
        gs__offer(P, dst, -1, s, dir, src, rule);
    }
}

/* a while loop's output, its body's parameter and root and its condition's parameter hold one state */
GS__FN void gs__sync_while(gs__prop *P, gs_value *w) {
    gs_value *m[4];
    int a, b;
    m[0] = w;
    m[1] = w->body->params[0];
    m[2] = w->body->root;
    m[3] = w->cond->params[0];
    for (a = 0; a < 4; a++)   /* (the loop state members are one tensor: no level restriction) */
        for (b = 0; b < 4; b++)
            if (a != b) gs__offer_same(P, m[a], m[b], a == 0 ? GS_ORIGIN_FORWARD : GS_ORIGIN_BACKWARD, gs__rule_while);
}

/* XLA's conditional: branch k's parameter and argument k + 1 hold one value, and so do every branch's root
   and the conditional (the branches' roots agree through it); the selector is left to its producer (the
   partitioner replicates it) */
GS__FN void gs__sync_cond(gs__prop *P, gs_value *c) {
    int k;
    for (k = 0; k < c->n_branches; k++) {
        gs_graph *b = c->branches[k];
        gs__offer_same(P, b->params[0], c->operands[k + 1], GS_ORIGIN_FORWARD, gs__rule_cond);
        gs__offer_same(P, c->operands[k + 1], b->params[0], GS_ORIGIN_BACKWARD, gs__rule_cond);
        gs__offer_same(P, c, b->root, GS_ORIGIN_FORWARD, gs__rule_cond);
    }
    for (k = 0; k < c->n_branches; k++) gs__offer_same(P, c->branches[k]->root, c, GS_ORIGIN_BACKWARD, gs__rule_cond);
}

GS__FN void gs__add_conflict(gs__prop *P, const gs_value *a, const gs_value *b, const char *why) {
    char *msg = gs__arena_printf(P->ctx, "%s: annotated %s at %s, but %s annotates %s (%s); the partitioner will reshard",
                                 a->name, gs_sharding_to_text(P->ctx, a->sharding), a->name, b->name,
                                 gs_sharding_to_text(P->ctx, b->sharding), why);
    if (msg) stbds_arrput(P->entry->conflicts, msg);
}

/* Two user annotations on one tensor (an annotation of an annotated value, or two loop-state members). */
GS__FN void gs__find_conflicts(gs__prop *P) {
    int gi, i;
    for (gi = 0; gi < (int)stbds_arrlen(P->graphs); gi++) {
        gs_graph *g = P->graphs[gi];
        for (i = 0; i < (int)stbds_arrlen(g->values); i++) {
            gs_value *v = g->values[i];
            gs_value *x = v->n_operands ? v->operands[0] : NULL;
            if (v->op != GS_OP_ANNOTATE || !x || !x->sharding_user || !v->sharding_user) continue;
            if (!gs_sharding_equal(v->sharding, x->sharding))
                gs__add_conflict(P, x, v, "the annotation is an identity of the same tensor");
        }
        /* two annotations of one value: each against the first annotation of that value */
        {
            int n = (int)stbds_arrlen(g->values);
            gs_value **first = (gs_value **)gs__malloc(P->ctx, sizeof(gs_value *) * (size_t)(n ? n : 1));
            if (!first) return;
            memset(first, 0, sizeof(gs_value *) * (size_t)(n ? n : 1));
            for (i = 0; i < n; i++) {
                gs_value *v = g->values[i], *x;
                if (v->op != GS_OP_ANNOTATE || !v->sharding_user) continue;
                x = v->operands[0];
                if (!first[x->id]) first[x->id] = v;
                else if (!gs_sharding_equal(first[x->id]->sharding, v->sharding))
                    gs__add_conflict(P, first[x->id], v, "both annotate the same value");
            }
            gs__free(P->ctx, first);
        }
    }
    for (i = 0; i < (int)stbds_arrlen(P->whiles); i++) {
        gs_value *w = P->whiles[i], *m[3];
        int a, b;
        m[0] = w->operands[0];
        m[1] = w->body->root;
        m[2] = w;
        for (a = 0; a < 3; a++)
            for (b = a + 1; b < 3; b++)
                if (m[a]->sharding_user && m[b]->sharding_user && !gs_sharding_equal(m[a]->sharding, m[b]->sharding))
                    gs__add_conflict(P, m[a], m[b], "both are the state of one loop");
    }
}

GS_API gs_result gs_propagate(gs_graph *g, const gs_propagate_desc *desc) {
    gs__prop P;
    gs_result r;
    int gi, i;
    int64_t nd;
    if (!g) return GS_ERR_INVALID_ARG;
    if (g->ctx->err) return g->ctx->err;
    if ((r = gs__verify_once(g)) != GS_OK) return r;
    nd = desc && desc->num_devices > 0 ? desc->num_devices : g->num_partitions;
    if (desc && desc->num_devices < 0)
        return gs__err(g->ctx, GS_ERR_INVALID_ARG, "gs_propagate: num_devices %lld is negative", (long long)desc->num_devices);
    memset(&P, 0, sizeof P);
    P.ctx = g->ctx;
    P.entry = g;
    gs__collect_graphs(&P, g);
    for (gi = 0; gi < (int)stbds_arrlen(P.graphs); gi++) gs__count_users(P.graphs[gi]);
    stbds_arrfree(g->conflicts);
    g->conflicts = NULL;
    /* user shardings must fit the device count; everything else starts undecided */
    for (gi = 0; gi < (int)stbds_arrlen(P.graphs); gi++) {
        gs_graph *h = P.graphs[gi];
        for (i = 0; i < (int)stbds_arrlen(h->values); i++) {
            gs_value *v = h->values[i];
            if (v->op == GS_OP_RNG_BIT_GENERATOR && v->n_operands == 1 && !v->operands[0]->sharding_user &&
                gs__is_array(v->operands[0])) {
                /* the generator's state is replicated, as XLA pins it (each device draws its block from it) */
                v->operands[0]->sharding = gs_sharding_replicated(P.ctx);
                v->operands[0]->sharding_user = true;
            }
            if (v->sharding_user && (v->sharding->kind == GS_SHARDING_UNKNOWN || v->sharding->cse_prevention))
                gs__open_unknown(&P, v);
            else if (v->group_kind && !v->sharding_user) gs__join_group(&P, v, v->group_kind, v->group_id);
            if (v->sharding_user) {
                const gs_sharding *s = v->sharding;
                if (s->group_kind) gs__join_group(&P, v, s->group_kind, s->group_id);
                int k, n = s->kind == GS_SHARDING_TUPLE ? s->n_elems : 1;
                for (k = 0; k < n; k++) {
                    const gs_sharding *e = s->kind == GS_SHARDING_TUPLE ? s->elems[k] : s;
                    if (nd > 0 && e->kind == GS_SHARDING_TILED &&
                        gs__sharding_validate(P.ctx, e, s->kind == GS_SHARDING_TUPLE ? v->tuple[k] : v->shape, nd, false) != GS_OK) {
                        r = gs__err_prefix(P.ctx, "gs_propagate: %s: ", v->name);
                        goto out;
                    }
                    if (nd > 0 && e->kind == GS_SHARDING_MAXIMAL && e->device >= nd) {
                        r = gs__err(P.ctx, GS_ERR_SHARDING, "gs_propagate: %s: maximal device %lld but only %lld devices",
                                    v->name, (long long)e->device, (long long)nd);
                        goto out;
                    }
                }
                v->origin.kind = GS_ORIGIN_USER;
                v->origin.source = v;
                v->origin.rule = NULL;
                v->origin.from = NULL;
            } else {
                v->sharding = NULL;
                GS__ZERO(v->origin);
            }
        }
    }
    for (P.level = 0; P.level <= 3; P.level++) {
        do {
            P.changed = false;
            P.iterations++;
            for (gi = 0; gi < (int)stbds_arrlen(P.graphs); gi++) {
                gs_graph *h = P.graphs[gi];
                for (i = 0; i < (int)stbds_arrlen(h->values); i++) gs__fwd_value(&P, h->values[i]);
                for (i = (int)stbds_arrlen(h->values) - 1; i >= 0; i--) gs__bwd_value(&P, h->values[i]);
                for (i = 0; i < (int)stbds_arrlen(h->values); i++)
                    if (h->values[i]->op == GS_OP_ANNOTATE && h->values[i]->open_dims)
                        gs__refine_pair(&P, h, h->values[i]);
            }
            for (i = 0; i < (int)stbds_arrlen(P.whiles); i++) gs__sync_while(&P, P.whiles[i]);
            for (i = 0; i < (int)stbds_arrlen(P.conds); i++) gs__sync_cond(&P, P.conds[i]);
            gs__sync_groups(&P);
            if (P.ctx->err) {
                r = P.ctx->err;
                goto out;
            }
            /* shardings only ever get more specific, so this ends; the bound is a guard against a bug */
            if (P.iterations > 10000) {
                r = gs__err(P.ctx, GS_ERR_UNSUPPORTED, "gs_propagate: no fixpoint after %lld sweeps", (long long)P.iterations);
                goto out;
            }
        } while (P.changed);
    }
    gs__settle_groups(&P);
    /* whatever is undecided is replicated */
    for (gi = 0; gi < (int)stbds_arrlen(P.graphs); gi++) {
        gs_graph *h = P.graphs[gi];
        for (i = 0; i < (int)stbds_arrlen(h->values); i++) {
            gs_value *v = h->values[i];
            const gs_sharding *s = v->sharding;
            if (gs__is_array(v)) {
                if (!s || s->kind == GS_SHARDING_UNKNOWN) {
                    v->sharding = gs_sharding_replicated(P.ctx);
                    GS__ZERO(v->origin);
                    v->origin.kind = GS_ORIGIN_DEFAULT;
                }
            } else {
                const gs_sharding **elems = (const gs_sharding **)gs__arena_alloc(P.ctx, sizeof(gs_sharding *) * (size_t)(v->n_tuple + 1));
                int k;
                bool fix = !s;
                if (!elems) { r = P.ctx->err; goto out; }
                for (k = 0; k < v->n_tuple; k++) {
                    elems[k] = s && s->kind == GS_SHARDING_TUPLE ? s->elems[k] : NULL;
                    if (!elems[k] || elems[k]->kind == GS_SHARDING_UNKNOWN) {
                        elems[k] = gs_sharding_replicated(P.ctx);
                        fix = true;
                    }
                }
                if (fix) {
                    v->sharding = gs_sharding_tuple(P.ctx, v->n_tuple, elems);
                    if (!s) {
                        GS__ZERO(v->origin);
                        v->origin.kind = GS_ORIGIN_DEFAULT;
                    }
                }
            }
        }
    }
    gs__find_conflicts(&P);
    r = P.ctx->err;
out:
    stbds_arrfree(P.graphs);
    stbds_arrfree(P.whiles);
    stbds_arrfree(P.conds);
    stbds_arrfree(P.members);
    return r;
}

GS_API gs_origin gs_value_sharding_origin(const gs_value *v) {
    gs_origin o;
    if (v) return v->origin;
    GS__ZERO(o);
    return o;
}
GS_API int gs_propagate_num_conflicts(const gs_graph *g) { return g ? (int)stbds_arrlen(g->conflicts) : 0; }
GS_API const char *gs_propagate_conflict(const gs_graph *g, int i) {
    return g && i >= 0 && i < (int)stbds_arrlen(g->conflicts) ? g->conflicts[i] : NULL;
}

/* ---- explanation ---- */
GS__FN void gs__explain_comment(gs__sb *sb, const gs_value *v, void *user) {
    const gs_origin *o = &v->origin;
    gs__prop *P = (gs__prop *)user;
    switch (o->kind) {
    case GS_ORIGIN_USER: gs__sb_puts(sb, "  /* annotated by the user"); break;
    case GS_ORIGIN_FORWARD:
    case GS_ORIGIN_BACKWARD:
        gs__sb_printf(sb, "  /* %s from %s %s (rule %s, level %d)", o->kind == GS_ORIGIN_FORWARD ? "forward" : "backward",
                      o->kind == GS_ORIGIN_FORWARD ? "operand" : "user", o->from ? o->from->name : "?",
                      o->rule ? o->rule : "?", o->level);
        if (o->source) gs__sb_printf(sb, "; from the annotation on %s", o->source->name);
        break;
    case GS_ORIGIN_DEFAULT: gs__sb_puts(sb, "  /* no rule applied: replicated"); break;
    default: gs__sb_puts(sb, "  /* no sharding"); break;
    }
    if (v->open_dims) gs__sb_printf(sb, "; open dims 0x%x", (unsigned)v->open_dims);
    if (v->op != GS_OP_ANNOTATE && o->rule && strstr(o->rule, "open dims")) gs__sb_printf(sb, "; %s", o->rule);
    /* where the sharding changes: what the operands imply differs from what the instruction has */
    if (P && v->sharding && gs__is_array(v) && v->op != GS_OP_TO_FULL && v->op != GS_OP_TO_MANUAL) {
        const gs_sharding *imp = gs__fwd(P, (gs_value *)v);
        if (gs__is_tiled(imp) || gs__is_tiled(v->sharding)) {
            if (imp && imp->kind != GS_SHARDING_MANUAL && !gs_sharding_equal(imp, v->sharding) &&
                !(imp->kind == GS_SHARDING_REPLICATED && v->origin.kind != GS_ORIGIN_USER)) {
                gs__sb_puts(sb, "; RESHARD: the operands imply ");
                gs__nt_print_sharding(sb, v->graph->ctx, imp, v);
            }
        }
    }
    gs__sb_puts(sb, " */\n");
}

GS_API const char *gs_propagate_explain(gs_graph *g, bool explain) {
    const char *text;
    gs__sb sb;
    int i;
    if (!g || g->ctx->err) return NULL;
    {
        gs__prop P;
        memset(&P, 0, sizeof P);
        P.ctx = g->ctx;
        P.entry = g;
        P.level = 3;
        text = gs__hlo_print_ex(g, explain ? gs__explain_comment : NULL, &P);
    }
    if (!text || !explain || !stbds_arrlen(g->conflicts)) return text;
    gs__sb_init(&sb, g->ctx);
    gs__sb_puts(&sb, text);
    gs__sb_puts(&sb, "\n/* conflicts:\n");
    for (i = 0; i < (int)stbds_arrlen(g->conflicts); i++) gs__sb_printf(&sb, "   %s\n", g->conflicts[i]);
    gs__sb_puts(&sb, "*/\n");
    return gs__sb_finish(&sb, "gs_propagate_explain");
}
