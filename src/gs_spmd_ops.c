/* gs_spmd_ops.c - the partitioner's per-op rules that need no halo and no dot strategy, the dispatcher gs__sp_op
   (one line per op: the table of contents of the rules), and the walk that partitions one computation. */
#include "gs_spmd_internal.h"

/* t with the tiles of dim d moved to another dim (unsplit in t; the largest, preferring sizes they divide),
   or with d replicated when there is none; so an op along d can run locally */
GS__FN const gs_sharding *gs__sp_move_tiles_off(gs__sp *sp, const gs_sharding *t, const gs_shape *shape, int d) {
    gs__ta A;
    int e, best = -1;
    int64_t k = gs__sp_k(t, d);
    if (k == 1) return t;
    if (!gs__sp_view(sp, t, shape->rank, &A)) return NULL;
    for (e = 0; e < shape->rank; e++) {
        if (e == d || A.dims[e] != 1 || shape->dims[e] < k) continue;
        if (best < 0 || (shape->dims[e] % k == 0 && shape->dims[best] % k != 0) ||
            ((shape->dims[e] % k == 0) == (shape->dims[best] % k == 0) && shape->dims[e] > shape->dims[best]))
            best = e;
    }
    if (best < 0) return gs__sh_replicate_dims(sp->ctx, t, 1u << d);
    {
        int perm[GS_MAX_IOTA_RANK], i;
        gs__ta B;
        for (i = 0; i < A.n; i++) perm[i] = i;
        perm[d] = best;
        perm[best] = d;
        if (gs__ta_transpose(sp->ctx, &A, perm, &B) != GS_OK) return NULL;
        return gs__sp_from_view(sp, shape->rank, &B);
    }
}

/* whether init (a source value) is the constant identity of reduction k, so it may enter a result any number of
   times */
GS__FN bool gs__sp_init_is_identity(const gs_value *init, gs_reduce_kind k) {
    double x;
    if (init->op != GS_OP_CONSTANT || !init->data || init->shape.rank != 0) return false;
    unsigned char one[16];
    gs_dtype t = init->shape.dtype;
    if (!gs__is_numeric(t) && t != GS_PRED) return false;
    gs__to_compute(t, one, init->data, 1);
    if (gs__is_complex(t) && (t == GS_C64 ? ((const float *)one)[1] : ((const double *)one)[1]) != 0) return false;
    if (gs__is_int(t)) {   /* exactly: the identity converted as a constant of t would be */
        unsigned char id[16];
        gs__set_elem(t, id, 0, gs__sp_identity(k, t));
        return gs__ld_i(t, one, 0) == gs__ld_i(t, id, 0);
    }
    x = gs__ld_f(t, one, 0);
    return x == gs__sp_identity(k, t);
}

/* cumsum, cumprod, cummax, cummin along d: x[A,D]{t} -> out[A,D]{t}; D split: a local scan, combined with the
   exclusive prefix of the other shards' totals (the totals all-gathered along D) */
GS__FN gs_value *gs__sp_cumulative(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    gs_graph *g = sp->G->g;
    int d = (int)v->dim, rank = v->shape.rank;
    gs_reduce_kind kind = v->op == GS_OP_CUMSUM ? GS_REDUCE_SUM : v->op == GS_OP_CUMPROD ? GS_REDUCE_PROD
                        : v->op == GS_OP_CUMMAX ? GS_REDUCE_MAX : GS_REDUCE_MIN;
    double id = gs__sp_identity(kind, v->shape.dtype);
    gs_value *x = gs__sp_get(sp, v->operands[0], t), *loc, *tot, *all, *io, *me, *mask, *pre, *b;
    int64_t k = gs__sp_k(t, d), st[GS_MAX_RANK] = {0}, lim[GS_MAX_RANK];
    gs_shape ls, ps;
    gs__ta A;
    int64_t bd[GS_MAX_RANK];
    int i, n;
    gs_op comb = kind == GS_REDUCE_SUM ? GS_OP_ADD : kind == GS_REDUCE_PROD ? GS_OP_MULTIPLY
               : kind == GS_REDUCE_MAX ? GS_OP_MAXIMUM : GS_OP_MINIMUM;
    (void)osh;
    if (!x) return NULL;
    x = gs__sp_mask(sp, x, t, &v->shape, 1u << d, id);
    {
        gs_value *ops1[1];
        ops1[0] = x;
        loc = gs__sp_clone(sp, v, ops1, &x->shape);
    }
    if (k == 1 || !loc) return loc;
    ls = loc->shape;
    for (i = 0; i < rank; i++) lim[i] = ls.dims[i];
    if (v->flag) { st[d] = 0; lim[d] = 1; }
    else { st[d] = ls.dims[d] - 1; lim[d] = ls.dims[d]; }
    tot = gs_slice(g, loc, st, lim, NULL);
    if (!gs__sp_view(sp, t, rank, &A)) return NULL;
    all = gs__sp_all_gather(sp, tot, d, &A, d);           /* [.., k, ..]: every shard's total, in tile order */
    if (!all) return NULL;
    ps = all->shape;
    ps.dtype = GS_S32;
    io = gs_iota(g, ps, d);
    me = gs_broadcast(g, gs__sp_coord(sp, t, d), ps, NULL);
    mask = gs_compare(g, io, me, v->flag ? GS_CMP_GT : GS_CMP_LT);
    all = gs_select(g, mask, all, gs__sp_splat(sp, all->shape.dtype, id, all->shape));
    {
        int64_t rd = d;
        pre = gs_reduce(g, all, gs_scalar(g, all->shape.dtype, id), kind, 1, &rd);
    }
    n = 0;
    for (i = 0; i < rank; i++)
        if (i != d) bd[n++] = i;
    b = gs_broadcast(g, pre, ls, bd);
    gs__sp_note(sp, "local scan + exclusive prefix of %lld shard totals (all-gather)", (long long)k);
    return gs_binary(g, comb, loc, b);
}

/* =========================================================================================================
   Gather and scatter: the pass-through strategies (XLA's gather/scatter handler)

   Gather, operand X, indices I, result R (shapes as the source has them):
   - operand pass-through: X split along dims the slice takes whole (offset dims, not collapsed); each device
     gathers from its shard of X with the indices it holds, slice size = the shard's size along those dims, and
     R comes out split along the matching offset dims. Those dims' starts clamp to 0 in both programs.
   - index pass-through: I split along batch dims (any dim but the index vector dim); each device gathers its
     own indices, R comes out split along the matching batch dims.
   - both: R's sharding combines the two (X partially replicated over the mesh axes that split I, and I over
     those that split X). An operand batching dim and its indices batching dim are split alike and pass through
     together to their output batch dim.
   Padding: the zero rows padding a shard of X only reach R's padded offset positions; padded indices are
   garbage that the gather clamps into range, and they only fill R's padded batch positions.
   Scatter, operand X, indices I, updates U: X split along window dims U covers whole (update window size ==
   operand size), U split alike, I whole: each device scatters every update into its shard. A start other
   than 0 along such a dim puts the window outside X in both programs (the whole update is skipped), so the
   local and the global scatter skip the same updates.
   Anything else replicates (gs__sp_replicated, with its warning when an operand was split).
   ========================================================================================================= */
/* "dim 1" or "dims 0,2" */
GS__FN const char *gs__sp_dims_text(uint32_t m, char *buf, size_t cap) {
    size_t n;
    int d, c = 0;
    for (d = 0; d < 32; d++)
        if ((m >> d) & 1u) c++;
    n = (size_t)snprintf(buf, cap, "%s", c == 1 ? "dim " : "dims ");
    for (d = 0, c = 0; d < 32 && n < cap; d++)
        if ((m >> d) & 1u) n += (size_t)snprintf(buf + n, cap - n, "%s%d", c++ ? "," : "", d);
    return buf;
}

/* P (the split a strategy brings) refined by what the result wants (tr) where the two agree */
GS__FN const gs_sharding *gs__sp_join(gs__sp *sp, const gs_sharding *P, const gs_sharding *tr, int rank) {
    const gs_sharding *m = gs__sh_merge(sp->ctx, P, tr), *rest;
    if (m) return m;
    rest = gs__sp_unsplit(sp, tr, gs__sp_split_mask(P, rank));   /* tr's splits of the dims P leaves whole */
    m = rest ? gs__sh_merge(sp->ctx, P, rest) : NULL;
    return m ? m : P;
}

/* an operand split along dims a strategy cannot keep is gathered along them: said, like a replication */
GS__FN void gs__sp_warn_unkept(gs__sp *sp, const gs_value *v, const gs_value *X, const gs_sharding *xs,
                               uint32_t lost, const char *what) {
    char buf[64];
    gs__sp_warnf(sp, "partial rematerialization at %s: %s's operand %s (%s) is gathered along %s, which the %s "
                 "cannot keep split; keeping %s unsplit along them would avoid it", v->name, gs_op_name(v->op),
                 X->name, gs_sharding_to_text(sp->ctx, xs), gs__sp_dims_text(lost, buf, sizeof buf), what, X->name);
}

/* device p's tile coordinates along the r data dims of s (zeros where s does not split) */
GS__FN void gs__sp_dev_coords(const gs_sharding *s, int r, int64_t p, int64_t *c) {
    int64_t idx[GS_MAX_TILE_RANK];
    int d;
    bool ok = s && s->kind == GS_SHARDING_TILED && gs_sharding_device_index(s, p, idx);
    for (d = 0; d < r; d++) c[d] = ok && d < s->rank ? idx[d] : 0;
}

/* whether every device holds, along each dim a of A (rank ar) with amap[a] >= 0, the tile it holds along dim
   amap[a] of B (rank br): same tile count, same coordinate */
GS__FN bool gs__sp_tiles_agree(gs__sp *sp, const gs_sharding *A, int ar, const int *amap, const gs_sharding *B,
                               int br) {
    int64_t p, ca[GS_MAX_RANK], cb[GS_MAX_RANK];
    int a;
    for (a = 0; a < ar; a++)
        if (amap[a] >= 0 && (amap[a] >= br || gs__sp_k(A, a) != gs__sp_k(B, amap[a]))) return false;
    for (p = 0; p < sp->D; p++) {
        gs__sp_dev_coords(A, ar, p, ca);
        gs__sp_dev_coords(B, br, p, cb);
        for (a = 0; a < ar; a++)
            if (amap[a] >= 0 && ca[a] != cb[amap[a]]) return false;
    }
    return true;
}

/* Replica groups that combine partial results: each group holds devices with the same tile of K (rank kr), one
   for each tile of B (rank br) along the dims in bm, in B's tile order (an explicit list in the arena). false
   when the devices do not fall into such groups (K's devices of a tile do not hold B's tiles equally often). */
GS__FN bool gs__sp_partial_groups(gs__sp *sp, const gs_sharding *K, int kr, const gs_sharding *B, int br,
                                  uint32_t bm, gs_replica_groups *rg) {
    int64_t D = sp->D, n = 1, p, q, s, c[GS_MAX_RANK], *key, *sub, *rk, *ids, ng = 0;
    int d;
    bool ok = true;
    GS__ZERO(*rg);
    for (d = 0; d < br; d++)
        if ((bm >> d) & 1u) n *= gs__sp_k(B, d);
    if (n < 1 || D % n) return false;
    key = (int64_t *)gs__malloc(sp->ctx, sizeof(int64_t) * 3 * (size_t)D);
    ids = (int64_t *)gs__arena_alloc(sp->ctx, sizeof(int64_t) * (size_t)D);
    if (!key || !ids) {
        gs__free(sp->ctx, key);
        return false;
    }
    sub = key + D;
    rk = sub + D;
    for (p = 0; p < D; p++) {
        gs__sp_dev_coords(K, kr, p, c);
        key[p] = 0;
        for (d = 0; d < kr; d++) key[p] = key[p] * gs__sp_k(K, d) + c[d];
        gs__sp_dev_coords(B, br, p, c);
        sub[p] = 0;
        for (d = 0; d < br; d++)
            if ((bm >> d) & 1u) sub[p] = sub[p] * gs__sp_k(B, d) + c[d];
        rk[p] = 0;
        for (q = 0; q < p; q++)
            if (key[q] == key[p] && sub[q] == sub[p]) rk[p]++;
    }
    /* a group per device of B's first tile: the devices of its K tile and rank, one per B tile */
    for (p = 0; p < D && ok; p++) {
        if (sub[p] != 0) continue;
        for (s = 0; s < n && ok; s++) {
            for (q = 0; q < D; q++)
                if (key[q] == key[p] && sub[q] == s && rk[q] == rk[p]) break;
            if (q == D) ok = false;
            else ids[ng * n + s] = q;
        }
        ng++;
    }
    gs__free(sp->ctx, key);
    if (!ok || ng * n != D) return false;
    rg->n_groups = ng;
    rg->group_size = n;
    rg->ids = ids;
    return true;
}

/* Gather with the operand split along indexed dims it slices one wide (XLA's trivially sliced operand dims), the
   vocab-parallel embedding: X in P0 (split along the pass-through dims and the dims in triv), I in ixs, R in T,
   devices in rg hold the same tile of R and the shards of X along triv. Each device clamps the starts along
   triv as the global gather does ([0, S-1]), keeps those that fall in its shard, gathers with them made local,
   zeroes the rows another device holds, and the group sums: exactly one device contributes each row. */
GS__FN gs_value *gs__sp_gather_indexed(gs__sp *sp, const gs_value *v, const gs_sharding *P0, const gs_sharding *ixs,
                                       const gs_sharding *T, uint32_t triv, uint32_t op_pass,
                                       const gs_replica_groups *rg) {
    gs_graph *g = sp->G->g;
    const gs_value *X = v->operands[0], *I = v->operands[1];
    const gs_gather_dims *gd = v->gather;
    gs_value *x = gs__sp_get(sp, X, P0), *ix = gs__sp_get(sp, I, ixs), *parts[GS_MAX_RANK], *ok = NULL, *r;
    int irank = I->shape.rank, ivd = (int)gd->index_vector_dim, nvec, k, d, nb = 0;
    int64_t bdims[GS_MAX_RANK], mdims[GS_MAX_RANK];
    gs_dtype it;
    gs_gather_dims ld;
    gs_shape ls;
    if (!x || !ix) return NULL;
    /* starts and shard bounds in at least 32 bits: an 8- or 16-bit type cannot hold every offset */
    if (gs_dtype_size(ix->shape.dtype) < 4 && !(ix = gs_convert(g, ix, GS_S32))) return NULL;
    it = ix->shape.dtype;
    nvec = ivd < irank ? (int)ix->shape.dims[ivd] : 1;
    if (nvec > GS_MAX_RANK) return NULL;
    for (k = 0; k < nvec; k++) {
        int64_t dd = gd->start_index_map[k], S = X->shape.dims[dd], c = x->shape.dims[dd];
        gs_value *part = ix, *off, *lo, *hi, *m;
        if (ivd < irank) {
            int64_t st[GS_MAX_RANK] = {0}, lim[GS_MAX_RANK];
            for (d = 0; d < irank; d++) lim[d] = ix->shape.dims[d];
            st[ivd] = k;
            lim[ivd] = k + 1;
            part = gs_slice(g, ix, st, lim, NULL);
        }
        parts[k] = part;
        if (!part || !((triv >> dd) & 1u)) continue;
        /* the start the global gather uses along dd, then where it lies relative to this device's shard */
        if (it == GS_U32) part = gs_binary(g, GS_OP_MINIMUM, part, gs__sp_splat(sp, it, (double)(S - 1), part->shape));
        else part = gs_clamp(g, gs__sp_splat(sp, it, 0, part->shape), part, gs__sp_splat(sp, it, (double)(S - 1), part->shape));
        off = gs__sp_offset(sp, P0, (int)dd, c);
        if (it != GS_S32) off = gs_convert(g, off, it);
        lo = gs_broadcast(g, off, part ? part->shape : ix->shape, NULL);
        hi = gs_add(g, lo, gs__sp_splat(sp, it, (double)c, lo ? lo->shape : ix->shape));
        m = gs_binary(g, GS_OP_AND, gs_compare(g, part, lo, GS_CMP_GE), gs_compare(g, part, hi, GS_CMP_LT));
        ok = ok ? gs_binary(g, GS_OP_AND, ok, m) : m;
        parts[k] = gs_binary(g, GS_OP_SUBTRACT, part, lo);   /* u32: wraps below the shard; such rows are masked */
    }
    if (!ok) return NULL;
    if (ivd < irank) {
        ix = nvec == 1 ? parts[0] : gs_concatenate(g, nvec, parts, ivd);
        for (d = 0; d < irank; d++)
            if (d != ivd) mdims[nb++] = ok->shape.dims[d];
        ok = gs_reshape(g, ok, nb, mdims);
    } else {
        ix = parts[0];
        nb = irank;
    }
    ld = *gd;
    for (d = 0; d < X->shape.rank; d++)
        if ((op_pass >> d) & 1u) ld.slice_sizes[d] = x->shape.dims[d];
    r = gs_gather(g, x, ix, &ld);
    ls = gs__sp_local(T, v->shape);
    if (!r || !ok) return NULL;
    if (!gs_shape_equal(&r->shape, &ls)) {
        char b1[128], b2[128];
        gs__err(sp->ctx, GS_ERR_SHARDING, "%s: internal error: local gather shape %s, expected %s under %s", v->name,
                gs__shape_str(&r->shape, b1, sizeof b1), gs__shape_str(&ls, b2, sizeof b2),
                gs_sharding_to_text(sp->ctx, T));
        return NULL;
    }
    {
        /* the mask over the batch dims of R (the indices' dims but the index vector dim, in order) */
        int idest[GS_MAX_RANK], j = 0;
        gs__gather_index_dest(v, idest);
        for (d = 0; d < irank; d++)
            if (idest[d] >= 0) bdims[j++] = idest[d];
        ok = gs_broadcast_in_dim(g, ok, r->shape.rank, r->shape.dims, bdims);
    }
    r = gs_select(g, ok, r, gs__sp_splat(sp, r->shape.dtype, 0, r->shape));
    return gs__sp_all_reduce(sp, r, r && r->shape.dtype == GS_PRED ? GS_REDUCE_OR : GS_REDUCE_SUM, rg);
}

/* ix with index-vector component comp lowered by off (an s32 scalar): iota-built indices along a parallel dim
   that is split address the device's own shard of the operand from its start */
GS__FN gs_value *gs__sp_index_shift(gs__sp *sp, gs_value *ix, int ivd, int comp, gs_value *off) {
    gs_graph *g = sp->G->g;
    gs_value *b;
    gs_shape is;
    if (!ix || !off) return NULL;
    if (ix->shape.dtype != GS_S32) off = gs_convert(g, off, ix->shape.dtype);
    b = gs_broadcast(g, off, ix->shape, NULL);
    if (ivd < ix->shape.rank) {
        is = ix->shape;
        is.dtype = GS_S32;
        b = gs_select(g, gs_compare(g, gs_iota(g, is, ivd), gs__sp_splat(sp, GS_S32, comp, is), GS_CMP_EQ), b,
                      gs__sp_splat(sp, ix->shape.dtype, 0, ix->shape));
    }
    return gs_binary(g, GS_OP_SUBTRACT, ix, b);
}

/* gather/scatter v's iota-built parallel dims (explicit batching dims are not among them): *op_par gets the
   operand dims, dest (operand dim -> output/updates dim) their batch dims, comp[d] the index component of each */
GS__FN void gs__sp_iota_parallel(const gs_value *v, int nbatch, const int *i2r, int *dest, uint32_t *op_par, int *comp) {
    int op[GS_MAX_RANK], ix[GS_MAX_RANK], n = gs__gs_parallel(v, op, ix), k, j;
    const int64_t *map = v->op == GS_OP_GATHER ? v->gather->start_index_map : v->scatter->scatter_dims_to_operand_dims;
    int nmap = v->op == GS_OP_GATHER ? v->gather->n_start_index_map : v->scatter->n_scatter_dims_to_operand_dims;
    *op_par = 0;
    for (k = nbatch; k < n; k++) {
        dest[op[k]] = i2r[ix[k]];
        *op_par |= 1u << op[k];
        for (j = 0; j < nmap; j++)
            if (map[j] == op[k]) comp[op[k]] = j;
    }
}

/* --explain: which operand dims (split mask xm) and index dims (im) pass through */
GS__FN void gs__sp_gather_notes(gs__sp *sp, uint32_t xm, uint32_t op_pass, uint32_t op_bat, uint32_t im, uint32_t ix_pass,
                                uint32_t ix_bat) {
    char buf[64];
    if (xm & op_pass & ~op_bat)
        gs__sp_note(sp, "gather: operand pass-through along %s", gs__sp_dims_text(xm & op_pass & ~op_bat, buf, sizeof buf));
    if (im & ix_pass & ~ix_bat)
        gs__sp_note(sp, "gather: index pass-through along %s", gs__sp_dims_text(im & ix_pass & ~ix_bat, buf, sizeof buf));
    if (xm & op_bat)
        gs__sp_note(sp, "gather: operand batching %s split like the indices", gs__sp_dims_text(xm & op_bat, buf, sizeof buf));
}

/* gather: operand[V,E] x indices[B,1] -> out[B,E]. Operand pass-through: operand{E split} -> out{E split}, local
   gathers; index pass-through: indices{B split} -> out{B split}; operand batching dims split like the indices';
   operand{V split} along a dim it slices one wide (vocab-parallel embedding): masked local gathers + all-reduce;
   anything else replicated */
GS__FN gs_value *gs__sp_gather(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    const gs_value *X = v->operands[0], *I = v->operands[1];
    const gs_shape *S = &v->shape;
    const gs_gather_dims *gd = v->gather;
    int rank = S->rank, orank = X->shape.rank, irank = I->shape.rank, d;
    int op_dest[GS_MAX_RANK], ix_dest[GS_MAX_RANK], op_src[GS_MAX_RANK], ix_src[GS_MAX_RANK], op_dest0[GS_MAX_RANK];
    int comp[GS_MAX_RANK];
    uint32_t op_pass = 0, ix_pass = 0, out_ok = 0, all_out, op_bat, ix_bat, lost, triv = 0, op_par, op_pass0 = 0;
    const gs_sharding *xs = sp->G->vals[X->id].sh, *is = sp->G->vals[I->id].sh, *tr, *T = NULL, *P, *os, *ixs;
    gs_gather_dims ld;
    gs_value *x, *ix, *r;
    gs_shape ls;
    char buf[64];
    if (!gd || rank > 31 || gs_sharding_manual_group(t) > 1 || gs_sharding_manual_group(xs) > 1 ||
        gs_sharding_manual_group(is) > 1)
        return gs__sp_replicated(sp, v, "gather/scatter", osh);
    all_out = (1u << rank) - 1;
    op_bat = gs__mask_of(gd->n_operand_batching_dims, gd->operand_batching_dims);
    ix_bat = gs__mask_of(gd->n_operand_batching_dims, gd->start_indices_batching_dims);
    gs__gather_operand_dest(v, true, op_dest);
    gs__gather_index_dest(v, ix_dest);
    memcpy(op_dest0, op_dest, sizeof op_dest0);
    for (d = 0; d < orank; d++)
        if (op_dest0[d] >= 0) op_pass0 |= 1u << d;
    gs__sp_iota_parallel(v, gd->n_operand_batching_dims, ix_dest, op_dest, &op_par, comp);
    for (d = 0; d < orank; d++)
        if (op_dest[d] >= 0) { op_pass |= 1u << d; out_ok |= 1u << op_dest[d]; }
    for (d = 0; d < irank; d++)
        if (ix_dest[d] >= 0) { ix_pass |= 1u << d; out_ok |= 1u << ix_dest[d]; }
    tr = gs__sp_unsplit(sp, t, all_out & ~out_ok);
    if (!tr) return NULL;
    /* 1. X's split along pass-through dims decides; 2. else I's along batch dims; 3. else what R wants */
    P = gs__sp_unsplit(sp, xs, ((1u << orank) - 1) & ~op_pass);
    if (P && gs__sp_split_mask(P, orank)) {
        P = gs__sh_map(sp->ctx, P, rank, op_dest);
        T = P ? gs__sp_join(sp, P, tr, rank) : NULL;
    } else {
        P = gs__sp_unsplit(sp, is, ((1u << irank) - 1) & ~ix_pass);
        if (P && gs__sp_split_mask(P, irank)) {
            P = gs__sh_map(sp->ctx, P, rank, ix_dest);
            T = P ? gs__sp_join(sp, P, tr, rank) : NULL;
        } else if (gs__sp_split_mask(tr, rank)) {
            T = tr;
        }
    }
    /* X split along indexed dims it slices one wide: masked local gathers, summed over the devices splitting them */
    for (d = 0; d < gd->n_start_index_map; d++) {
        int64_t dd = gd->start_index_map[d];
        if (dd >= 0 && dd < orank && !(((op_pass | op_bat) >> dd) & 1u) && gd->slice_sizes[dd] == 1 &&
            gs__sp_k(xs, (int)dd) > 1)
            triv |= 1u << dd;
    }
    if (triv) {
        const gs_sharding *P0 = gs__sp_unsplit(sp, xs, ((1u << orank) - 1) & ~(op_pass0 | triv)), *cand[3];
        gs_replica_groups rg;
        int c;
        /* R as the other strategies split it, else as X's pass-through dims alone, else replicated */
        cand[0] = T;
        cand[1] = P0 ? gs__sh_map(sp->ctx, P0, rank, op_dest0) : NULL;
        cand[2] = gs__sp_rep(sp);
        gs__dest_invert(irank, ix_dest, rank, ix_src);
        for (c = 0; c < 3 && P0; c++) {
            const gs_sharding *C = cand[c];
            if (!C || !gs__sp_tiles_agree(sp, P0, orank, op_dest0, C, rank) ||
                !gs__sp_partial_groups(sp, C, rank, P0, orank, triv, &rg) || !(ixs = gs__sh_map(sp->ctx, C, irank, ix_src)))
                continue;
            lost = gs__sp_split_mask(xs, orank) & ~(op_pass0 | triv);
            if (lost) gs__sp_warn_unkept(sp, v, X, xs, lost, "gather");
            r = gs__sp_gather_indexed(sp, v, P0, ixs, C, triv, op_pass0 & ~op_bat, &rg);
            if (!r) return NULL;
            gs__sp_gather_notes(sp, gs__sp_split_mask(P0, orank), op_pass0, op_bat, gs__sp_split_mask(ixs, irank),
                                ix_pass, ix_bat);
            gs__sp_note(sp, "gather: operand split along indexed %s: masked local gather + all-reduce",
                        gs__sp_dims_text(triv, buf, sizeof buf));
            *osh = C;
            return r;
        }
    }
    if (!T || !gs__sp_split_mask(T, rank)) return gs__sp_replicated(sp, v, "gather/scatter", osh);
    gs__dest_invert(orank, op_dest, rank, op_src);
    gs__dest_invert(irank, ix_dest, rank, ix_src);
    os = gs__sh_map(sp->ctx, T, orank, op_src);
    ixs = gs__sh_map(sp->ctx, T, irank, ix_src);
    if (!os || !ixs) return gs__sp_replicated(sp, v, "gather/scatter", osh);
    lost = gs__sp_split_mask(xs, orank) & ~op_pass;
    if (lost) gs__sp_warn_unkept(sp, v, X, xs, lost, "gather");
    x = gs__sp_get(sp, X, os);
    ix = gs__sp_get(sp, I, ixs);
    if (!x || !ix) return NULL;
    /* the local gather: pass-through dims are sliced whole at the shard's (padded) size; along a split parallel
       dim the iota-built indices count from the shard's start */
    ld = *gd;
    for (d = 0; d < orank; d++)
        if (((op_pass & ~op_bat & ~op_par) >> d) & 1u) ld.slice_sizes[d] = x->shape.dims[d];
    for (d = 0; d < orank; d++)
        if (((op_par >> d) & 1u) && gs__sp_k(os, d) > 1)
            ix = gs__sp_index_shift(sp, ix, (int)gd->index_vector_dim, comp[d], gs__sp_offset(sp, os, d, x->shape.dims[d]));
    if (!ix) return NULL;
    r = gs_gather(sp->G->g, x, ix, &ld);
    ls = gs__sp_local(T, *S);
    if (r && !gs_shape_equal(&r->shape, &ls)) {
        char b1[128], b2[128];
        gs__err(sp->ctx, GS_ERR_SHARDING, "%s: internal error: local gather shape %s, expected %s under %s", v->name,
                gs__shape_str(&r->shape, b1, sizeof b1), gs__shape_str(&ls, b2, sizeof b2),
                gs_sharding_to_text(sp->ctx, T));
        return NULL;
    }
    gs__sp_gather_notes(sp, gs__sp_split_mask(os, orank), op_pass & ~op_par, op_bat, gs__sp_split_mask(ixs, irank),
                        ix_pass, ix_bat);
    if (gs__sp_split_mask(os, orank) & op_par)
        gs__sp_note(sp, "gather: parallel (iota-built indices) along %s, indices shifted to the shard",
                    gs__sp_dims_text(gs__sp_split_mask(os, orank) & op_par, buf, sizeof buf));
    *osh = T;
    return r;
}

/* Scatter with the indices and updates split along their scatter dims, for a combiner with an identity (index
   pass-through): X in T (split along window dims the updates cover whole, or replicated), U split along its
   scatter dims as I is (or as U is, when I is whole) and along the window dims like X. Each device scatters its
   updates into the identity (U's padding set to the identity, so padded indices change nothing), the devices
   holding the same tile of X combine those with one all-reduce, and X is combined with the result last. Returns
   false (nothing built) when the indices and updates are not split that way or their devices do not group. */
GS__FN bool gs__sp_scatter_indexed(gs__sp *sp, const gs_value *v, const gs_sharding *T, const int *dest,
                                   gs_value **out) {
    gs_graph *g = sp->G->g;
    const gs_value *X = v->operands[0], *I = v->operands[1], *U = v->operands[2];
    const gs_scatter_dims *sd = v->scatter;
    int rank = v->shape.rank, urank = U->shape.rank, irank = I->shape.rank, ivd = (int)sd->index_vector_dim, d, j;
    int imap[GS_MAX_RANK], uinv[GS_MAX_RANK];
    uint32_t scm = 0, win = gs__mask_of(sd->n_update_window_dims, sd->update_window_dims), m;
    const gs_sharding *is = sp->G->vals[I->id].sh, *usrc = sp->G->vals[U->id].sh, *Q = NULL, *us, *ixs, *P;
    gs_replica_groups rg;
    gs_reduce_kind kind = v->reduce;
    gs_dtype t = v->shape.dtype;
    gs_value *x, *ix, *u, *r;
    double id;
    char buf[64];
    *out = NULL;
    if (urank > 31 || irank > 31 || gs_sharding_manual_group(is) > 1 || gs_sharding_manual_group(usrc) > 1)
        return false;
    /* index dim -> update scatter dim, in order */
    for (d = 0, j = 0; d < irank; d++) {
        imap[d] = GS__DEST_REP;
        if (d == ivd) continue;
        while (j < urank && ((win >> j) & 1u)) j++;
        if (j < urank) {
            imap[d] = j;
            scm |= 1u << j++;
        }
    }
    P = gs__sp_unsplit(sp, is, ivd < irank ? 1u << ivd : 0);
    if (P && gs__sp_split_mask(P, irank)) Q = gs__sh_map(sp->ctx, P, urank, imap);
    else if ((P = gs__sp_unsplit(sp, usrc, ((1u << urank) - 1) & ~scm)) && gs__sp_split_mask(P, urank)) Q = P;
    if (!Q) return false;
    us = gs__sp_split_mask(T, rank) ? gs__sh_merge(sp->ctx, gs__sh_map(sp->ctx, T, urank, dest), Q) : Q;
    if (!us || !gs__sp_tiles_agree(sp, T, rank, dest, us, urank) ||
        !gs__sp_partial_groups(sp, T, rank, us, urank, scm, &rg) || rg.group_size < 2)
        return false;
    gs__dest_invert(irank, imap, urank, uinv);
    if (!(ixs = gs__sh_map(sp->ctx, us, irank, uinv))) return false;
    if (t == GS_PRED) kind = kind == GS_REDUCE_SUM || kind == GS_REDUCE_OR || kind == GS_REDUCE_MAX ? GS_REDUCE_OR
                                                                                                    : GS_REDUCE_AND;
    id = gs__sp_identity(kind, t);
    x = gs__sp_get(sp, X, T);
    ix = gs__sp_get(sp, I, ixs);
    u = gs__sp_mask(sp, gs__sp_get(sp, U, us), us, &U->shape, scm, id);
    if (!x || !ix || !u) return true;
    r = gs_scatter(g, gs__sp_splat(sp, t, id, x->shape), ix, u, sd, kind);
    r = gs__sp_all_reduce(sp, r, kind, &rg);
    *out = r ? gs_binary(g, gs__hlo_reduce_op(kind), x, r) : NULL;
    if ((m = gs__sp_split_mask(T, rank)))
        gs__sp_note(sp, "scatter: operand pass-through along %s", gs__sp_dims_text(m, buf, sizeof buf));
    gs__sp_note(sp, "scatter: index pass-through along %s of the indices: local scatter into the identity + "
                "all-reduce", gs__sp_dims_text(gs__sp_split_mask(ixs, irank), buf, sizeof buf));
    return true;
}

/* a variadic reducer's operands (gs__red_base(v) on) as v's own: the inputs in xs (input k is ops[0]), the inits
   or updates in is (k's is ops[base - 1]); ops has room for v->n_operands */
GS__FN bool gs__sp_variadic_ops(gs__sp *sp, const gs_value *v, gs_value **ops, const gs_sharding *xs,
                                const gs_sharding *is) {
    int n = v->red_n, b = gs__red_base(v), j;
    for (j = 0; j < n; j++) {
        ops[b + j] = j == v->red_k ? ops[0] : gs__sp_get(sp, v->operands[b + j], xs);
        ops[b + n + j] = j == v->red_k ? ops[b - 1] : gs__sp_get(sp, v->operands[b + n + j], is);
        if (!ops[b + j] || !ops[b + n + j]) return false;
    }
    return true;
}

/* scatter: operand[V,E]{E split} x indices[B,1]{rep} x updates[B,E]{E split} -> out[V,E]{E split}: the window
   pass-through, local scatters; with a combiner that has an identity, indices and updates{B split} -> local
   scatters into the identity + one all-reduce; anything else replicated */
GS__FN gs_value *gs__sp_scatter(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    const gs_value *X = v->operands[0], *I = v->operands[1], *U = v->operands[2];
    int rank = v->shape.rank, irank = I->shape.rank, d, k, npar, dest[GS_MAX_RANK], i2u[GS_MAX_RANK], o2i[GS_MAX_RANK];
    int pop[GS_MAX_RANK], pix[GS_MAX_RANK], comp[GS_MAX_RANK];
    uint32_t pass = 0, lost, op_par = 0, m;
    const gs_sharding *xs = sp->G->vals[X->id].sh, *T, *us, *ixs;
    gs_value *ops[3 + 2 * GS__MAX_VARIADIC];
    gs_shape ls;
    char buf[64];
    if (!v->scatter || rank > 31 || irank > 31 || gs_sharding_manual_group(t) > 1 || gs_sharding_manual_group(xs) > 1)
        return gs__sp_replicated(sp, v, "gather/scatter", osh);
    /* window dims the updates cover whole, and the parallel dims (explicit batching, iota-built indices), each to
       its updates dim; the parallel dims also to their indices dim */
    gs__scatter_update_dest(v, dest);
    gs__scatter_index_dest(v, i2u);
    npar = gs__gs_parallel(v, pop, pix);
    for (d = 0; d < rank; d++) o2i[d] = GS__DEST_REP;
    for (k = 0; k < npar; k++) {
        dest[pop[k]] = i2u[pix[k]];
        o2i[pop[k]] = pix[k];
    }
    gs__sp_iota_parallel(v, v->scatter->n_input_batching_dims, i2u, dest, &op_par, comp);
    for (d = 0; d < rank; d++)
        if (dest[d] >= 0) pass |= 1u << d;
    /* X's split along those dims decides, else what the result wants */
    T = gs__sp_unsplit(sp, xs, ((1u << rank) - 1) & ~pass);
    if (!T || !gs__sp_split_mask(T, rank)) T = gs__sp_unsplit(sp, t, ((1u << rank) - 1) & ~pass);
    if (!T) return NULL;
    if (npar == 0 && v->reduce >= GS_REDUCE_SUM && v->reduce <= GS_REDUCE_OR) {
        /* indices and updates split along their scatter dims: local scatters combined by an all-reduce */
        const gs_sharding *To = gs__sp_split_mask(T, rank) ? T : gs__sp_rep(sp);
        gs_value *r = NULL;
        if (gs__sp_scatter_indexed(sp, v, To, dest, &r)) {
            if (r && (lost = gs__sp_split_mask(xs, rank) & ~pass)) gs__sp_warn_unkept(sp, v, X, xs, lost, "scatter");
            *osh = To;
            return r;
        }
    }
    if (!gs__sp_split_mask(T, rank)) return gs__sp_replicated(sp, v, "gather/scatter", osh);
    us = gs__sh_map(sp->ctx, T, U->shape.rank, dest);
    ixs = gs__sh_map(sp->ctx, T, irank, o2i);
    if (!us || !ixs) return gs__sp_replicated(sp, v, "gather/scatter", osh);
    lost = gs__sp_split_mask(xs, rank) & ~pass;
    if (lost) gs__sp_warn_unkept(sp, v, X, xs, lost, "scatter");
    ops[0] = gs__sp_get(sp, X, T);
    ops[1] = gs__sp_get(sp, I, ixs);
    ops[2] = gs__sp_get(sp, U, us);
    if (!ops[0] || !ops[1] || !ops[2] || !gs__sp_variadic_ops(sp, v, ops, T, us)) return NULL;
    /* along a split parallel dim the iota-built indices count from the shard's start */
    for (d = 0; d < rank; d++)
        if (((op_par >> d) & 1u) && gs__sp_k(T, d) > 1 &&
            !(ops[1] = gs__sp_index_shift(sp, ops[1], (int)v->scatter->index_vector_dim, comp[d],
                                          gs__sp_offset(sp, T, d, ops[0]->shape.dims[d]))))
            return NULL;
    m = gs__sp_split_mask(T, rank);
    op_par |= gs__mask_of(v->scatter->n_input_batching_dims, v->scatter->input_batching_dims);
    if (m & ~op_par)
        gs__sp_note(sp, "scatter: operand pass-through along %s (indices whole)", gs__sp_dims_text(m & ~op_par, buf, sizeof buf));
    if (m & op_par)
        gs__sp_note(sp, "scatter: parallel along %s, indices and updates split alike", gs__sp_dims_text(m & op_par, buf, sizeof buf));
    ls = gs__sp_local(T, v->shape);
    *osh = T;
    return gs__sp_clone(sp, v, ops, &ls);
}

/* =========================================================================================================
   The rules (each: v's per-device value, *osh = the sharding it is in; t is what propagation gave v)
   ========================================================================================================= */
/* any op inside a manual region: operands[local]{manual} -> out[local]{manual}; the op as written */
GS__FN gs_value *gs__sp_manual(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    gs_value *ops[GS_MAX_RANK + 4];
    int i;
    (void)t;
    (void)osh;
    if (v->n_operands > (int)GS__COUNTOF(ops)) {
        gs__err(sp->ctx, GS_ERR_UNSUPPORTED, "%s: too many operands in a manual region", v->name);
        return NULL;
    }
    for (i = 0; i < v->n_operands; i++) ops[i] = gs__sp_get(sp, v->operands[i], sp->G->vals[v->operands[i]->id].sh);
    gs__sp_note(sp, "manual: as written");
    return gs__sp_clone(sp, v, ops, v->shape.dtype == GS_TUPLE ? NULL : &v->shape);
}

GS__FN bool gs__sp_is_elementwise(gs_op op) {
    return (op >= GS_OP_CONVERT && op <= GS_OP_CLAMP) || (op >= GS_OP_SINE && op <= GS_OP_REDUCE_PRECISION);
}

/* elementwise: x[S..]{t}, y[S..]{t} (scalar operands {rep}) -> out[S..]{t}; no collective */
GS__FN gs_value *gs__sp_elementwise(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    gs_value *ops[GS_MAX_RANK + 4];
    gs_shape ls = gs__sp_local(t, v->shape);
    int i;
    (void)osh;
    for (i = 0; i < v->n_operands; i++)
        ops[i] = gs__sp_get(sp, v->operands[i], v->operands[i]->shape.rank == 0 ? gs__sp_rep(sp) : t);
    return gs__sp_clone(sp, v, ops, &ls);
}

/* constant: splat -> out[local]{t}; a literal -> out[S..]{rep} (the walk slices it to t) */
GS__FN gs_value *gs__sp_constant(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    if (v->splat) {
        gs_shape ls = gs__sp_local(t, v->shape);
        return gs__sp_clone(sp, v, NULL, &ls);
    }
    *osh = gs__sp_rep(sp);
    gs__sp_note(sp, "constant, then each device's slice");
    return gs__sp_clone(sp, v, NULL, &v->shape);
}

/* iota along d: -> out[local]{t}; a split d adds the tile's offset; no collective */
GS__FN gs_value *gs__sp_iota(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    gs_graph *g = sp->G->g;
    gs_shape ls = gs__sp_local(t, v->shape), is = ls;
    int d = (int)v->dim;
    gs_value *x;
    (void)osh;
    if (gs__sp_k(t, d) == 1) return gs_iota(g, ls, d);
    is.dtype = GS_S32;
    x = gs_add(g, gs_iota(g, is, d), gs_broadcast(g, gs__sp_offset(sp, t, d, ls.dims[d]), is, NULL));
    gs__sp_note(sp, "local iota + the shard's offset");
    return v->shape.dtype == GS_S32 ? x : gs_convert(g, x, v->shape.dtype);
}

/* partition-id of the source program (one partition): -> u32[] 0 {rep} */
GS__FN gs_value *gs__sp_partition_id(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    (void)v;
    (void)t;
    *osh = gs__sp_rep(sp);
    gs__sp_note(sp, "partition-id of the unpartitioned program: 0");
    return gs_scalar(sp->G->g, GS_U32, 0);
}

/* replica-id (one replica): -> u32[] {rep}, as written */
GS__FN gs_value *gs__sp_replica_id(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    (void)v;
    (void)t;
    *osh = gs__sp_rep(sp);
    gs__sp_note(sp, "replica-id: one replica");
    return gs_replica_id(sp->G->g);
}

/* s (a sharding of rank dims whose last dim is unsplit) without that dim; NULL when s has no such view */
GS__FN const gs_sharding *gs__sp_drop_minor(gs__sp *sp, const gs_sharding *s, int rank) {
    gs__ta A;
    if (rank < 1 || !gs__sp_view(sp, s, rank, &A) || A.dims[rank - 1] != 1) return NULL;
    A.dims[rank - 1] = A.dims[rank];
    A.n = rank;
    return gs__sp_from_view(sp, rank - 1, &A);
}

/* s (a sharding of rank dims) with an unsplit minor dim added */
GS__FN const gs_sharding *gs__sp_add_minor(gs__sp *sp, const gs_sharding *s, int rank) {
    gs__ta A;
    if (rank + 1 > GS_MAX_RANK || !gs__sp_view(sp, s, rank, &A)) return NULL;
    A.dims[rank + 1] = A.dims[rank];
    A.dims[rank] = 1;
    A.n = rank + 2;
    return gs__sp_from_view(sp, rank + 1, &A);
}

/* bitcast-convert: equal widths x[S]{t} -> out[S]{t}; a narrower type x[S]{t'} -> out[S,k]{t', k whole}; a wider
   one x[S,k]{t, k whole} -> out[S]{t}; no collective */
GS__FN gs_value *gs__sp_bitcast_convert(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    const gs_value *x = v->operands[0];
    const gs_shape *S = &v->shape;
    gs_value *ops[1];
    gs_shape ls;
    if (S->rank == x->shape.rank) return gs__sp_elementwise(sp, v, t, osh);
    if (S->rank > x->shape.rank) {   /* a minor dim added: x split as out's leading dims */
        const gs_sharding *xt = gs__sp_unsplit(sp, t, 1u << (S->rank - 1));
        *osh = xt;
        ls = gs__sp_local(xt, *S);
        ops[0] = gs__sp_get(sp, x, gs__sp_drop_minor(sp, xt, S->rank));
    } else {
        ls = gs__sp_local(t, *S);
        ops[0] = gs__sp_get(sp, x, gs__sp_add_minor(sp, t, S->rank));
    }
    gs__sp_note(sp, "bitcast-convert with the minor dim whole");
    return gs__sp_clone(sp, v, ops, &ls);
}

/* broadcast: x[A]{A as out's A} -> out[A,B]{t}; the new dims' tiles replicated on x; no collective */
GS__FN gs_value *gs__sp_broadcast(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    int dest[GS_MAX_RANK], i;
    gs_shape ls = gs__sp_local(t, v->shape);
    gs_value *ops[1];
    const gs_sharding *os;
    (void)osh;
    for (i = 0; i < v->shape.rank; i++) dest[i] = GS__DEST_REP;
    for (i = 0; i < v->n_dims; i++) dest[v->dims[i]] = i;
    os = gs__sh_map(sp->ctx, t, v->operands[0]->shape.rank, dest);
    ops[0] = gs__sp_get(sp, v->operands[0], os);
    return gs__sp_clone(sp, v, ops, &ls);
}

/* transpose: x[A,B]{B split} -> out[B,A]{B split}: the operand's tiles permuted like its dims; no collective */
GS__FN gs_value *gs__sp_transpose(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    int dest[GS_MAX_RANK], i;
    gs_shape ls = gs__sp_local(t, v->shape);
    gs_value *ops[1];
    (void)osh;
    for (i = 0; i < v->shape.rank; i++) dest[i] = (int)v->dims[i];
    ops[0] = gs__sp_get(sp, v->operands[0], gs__sh_map(sp->ctx, t, v->shape.rank, dest));
    return gs__sp_clone(sp, v, ops, &ls);
}

/* concatenate along an unsplit dim, dynamic-slice, dynamic-update-slice: x[A,B]{A split} -> out[A,B']{A split}:
   the dims the op changes are made whole (gathered) on every device; a concatenate along a split dim goes to the
   windowed engine (gs__sp_concat) */
GS__FN gs_value *gs__sp_whole_dims(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    gs_graph *g = sp->G->g;
    const gs_shape *S = &v->shape;
    gs_value *ops[GS_MAX_RANK + 4];
    int rank = S->rank, i;
    uint32_t m = 0;
    const gs_sharding *os;
    gs_shape ls;
    int n_arr = v->op == GS_OP_CONCATENATE ? v->n_operands : v->op == GS_OP_DYNAMIC_UPDATE_SLICE ? 2 : 1;
    if (v->op == GS_OP_CONCATENATE && gs__sp_k(t, (int)v->dim) > 1) return gs__sp_concat(sp, v, t, osh);
    if (v->op == GS_OP_CONCATENATE) m = 1u << v->dim;
    else if (v->op == GS_OP_DYNAMIC_UPDATE_SLICE) m = gs__size_diff_mask(S, &v->operands[1]->shape);
    else m = gs__size_diff_mask(S, &v->operands[0]->shape);
    os = gs__sp_unsplit(sp, t, m);
    if (!os) return NULL;
    if (gs__sp_split_mask(t, rank) & m) gs__sp_note(sp, "%s along split dims: those dims gathered first", gs_op_name(v->op));
    ls = gs__sp_local(os, *S);
    if (v->n_operands > (int)GS__COUNTOF(ops)) {
        *osh = gs__sp_rep(sp);
        return gs__sp_replicated(sp, v, "many operands", osh);
    }
    for (i = 0; i < v->n_operands; i++)
        ops[i] = gs__sp_get(sp, v->operands[i], i < n_arr ? os : gs__sp_rep(sp));
    *osh = os;
    if (v->op == GS_OP_DYNAMIC_SLICE || v->op == GS_OP_DYNAMIC_UPDATE_SLICE) {
        /* starts of whole dims clamp to 0 in the unpartitioned program too */
        int first = v->op == GS_OP_DYNAMIC_SLICE ? 1 : 2;
        for (i = 0; i < rank; i++)
            if (!((m >> i) & 1u)) ops[first + i] = gs__sp_s32(sp, 0);
        if (v->op == GS_OP_DYNAMIC_SLICE) return gs_dynamic_slice(g, ops[0], ops + 1, ls.dims);
        return gs_dynamic_update_slice(g, ops[0], ops[1], ops + 2);
    }
    return gs__sp_clone(sp, v, ops, &ls);
}

/* results of one variadic reduce: the same reducer, operands and dims */
GS__FN bool gs__same_variadic(const gs_value *a, const gs_value *b) {
    int i;
    if (a->op != b->op || a->reducer != b->reducer || a->red_n != b->red_n || a->n_dims != b->n_dims ||
        a->n_operands != b->n_operands)
        return false;
    for (i = gs__red_base(a); i < a->n_operands; i++)
        if (a->operands[i] != b->operands[i]) return false;
    for (i = 0; i < a->n_dims; i++)
        if (a->dims[i] != b->dims[i]) return false;
    return true;
}

/* result k reduced again from the partial results ops[2..2+n) and the inits ops[2+n..2+2n) */
GS__FN bool gs__sp_reduce_variadic_end(gs__sp *sp, const gs_value *v, gs_value **ops, const gs_sharding *I,
                                       const gs_sharding *Ig, const int *dest, gs_value **out, const gs_sharding **osh) {
    gs_shape ls = gs__sp_local(gs__sh_map(sp->ctx, I, v->shape.rank, dest), v->shape);
    ops[0] = ops[2 + v->red_k];
    ops[1] = ops[2 + v->red_n + v->red_k];
    *out = gs__sp_clone(sp, v, ops, &ls);
    *osh = gs__sh_map(sp->ctx, Ig, v->shape.rank, dest);
    gs__sp_note(sp, "variadic reduce with the reducer computation '%s': local reduces, partial results all-gathered "
                "along the reduced dims and reduced again (XLA's order)", v->reducer->name);
    return true;
}

/* A variadic reduce whose reducer mixes the components, its inputs split along reduced dims R, as XLA partitions it
   (HandleReduce, tuple case): every input in input 0's sharding I, padding set to its init; each device reduces
   its block (every component), the partial results (R of 1 each) are all-gathered along R and reduced again from
   the inits. This treats the reducer as associative with the inits as identities, as XLA does; the order of
   combination is: each device's block in row-major order, then the devices' partials in the order of their
   blocks. */
GS__FN bool gs__sp_reduce_variadic(gs__sp *sp, const gs_value *v, const int *dest, gs_value **out, const gs_sharding **osh) {
    int n = v->red_n, b = gs__red_base(v), rx = v->operands[0]->shape.rank, c, j, d;
    const gs_value *X0 = v->operands[b];
    const gs_sharding *I = sp->G->vals[X0->id].sh, *Ig;
    gs_value *ops[2 + 2 * GS__MAX_VARIADIC], *parts[GS__MAX_VARIADIC];
    uint32_t red = gs__mask_of(v->n_dims, v->dims);
    gs_shape ps = X0->shape, pl;
    gs_value tmp;
    *out = NULL;
    if (v->op != GS_OP_REDUCE || !I || I->kind != GS_SHARDING_TILED || gs_sharding_manual_group(I) > 1 ||
        !(gs__sp_split_mask(I, rx) & red))
        return false;
    Ig = gs__sp_unsplit(sp, I, red);
    if (!Ig) return true;
    if (sp->var_src && sp->var_G == sp->G && gs__same_variadic(sp->var_src, v)) {   /* another result of that op */
        for (j = 0; j < n; j++) ops[2 + j] = sp->var_parts[j];
        for (j = 0; j < n; j++)
            if (!(ops[2 + n + j] = gs__sp_get(sp, v->operands[b + n + j], gs__sp_rep(sp)))) return true;
        return gs__sp_reduce_variadic_end(sp, v, ops, I, Ig, dest, out, osh);
    }
    for (j = 0; j < n; j++) {   /* ops[2 + j]: input j in I with its padding its init; ops[2 + n + j]: init j */
        ops[2 + n + j] = gs__sp_get(sp, v->operands[b + n + j], gs__sp_rep(sp));
        ops[2 + j] = gs__sp_mask_with(sp, gs__sp_get(sp, v->operands[b + j], I), I, &X0->shape, red, ops[2 + n + j], 0);
        if (!ops[2 + j] || !ops[2 + n + j]) return true;
    }
    for (d = 0; d < rx; d++)   /* the partials: one element per tile along R */
        if ((red >> d) & 1u) ps.dims[d] = gs__sp_k(I, d);
    tmp = *v;
    for (c = 0; c < n; c++) {   /* each device's partial of component c, R kept at 1, gathered along R */
        tmp.red_k = c;
        ops[0] = ops[2 + c];
        ops[1] = ops[2 + n + c];
        pl = ops[2 + c]->shape;
        for (d = 0; d < rx; d++)
            if ((red >> d) & 1u) pl.dims[d] = 1;
        pl.dtype = v->operands[b + c]->shape.dtype;
        ps.dtype = pl.dtype;
        parts[c] = gs__sp_clone(sp, &tmp, ops, NULL);
        parts[c] = parts[c] ? gs_reshape(sp->G->g, parts[c], pl.rank, pl.dims) : NULL;
        if (!(parts[c] = gs__sp_reshard_raw(sp, parts[c], I, Ig, ps))) return true;
    }
    for (j = 0; j < n; j++) ops[2 + j] = sp->var_parts[j] = parts[j];
    sp->var_src = v;
    sp->var_G = sp->G;
    return gs__sp_reduce_variadic_end(sp, v, ops, I, Ig, dest, out, osh);
}

/* reduce over R, argmax/argmin along R: x[A,R]{A split} -> out[A]{A split}, no collective;
   x[A,R]{R split} -> partial out[A] per device, combined by all-reduce or reduce-scatter (gs__sp_combine) */
GS__FN gs_value *gs__sp_reduce(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    gs_graph *g = sp->G->g;
    const gs_shape *S = &v->shape;
    gs_value *ops[GS_MAX_RANK + 4];
    int rank = S->rank, i;
    const gs_value *X = v->operands[0];
    int rx = X->shape.rank, dest[GS_MAX_RANK], back[GS_MAX_RANK], j = 0;
    gs_value *vops[2 + 2 * GS__MAX_VARIADIC];
    uint32_t red = 0;
    const gs_sharding *xs = sp->G->vals[X->id].sh, *is;
    gs_value *x, *r;
    bool cross;
    gs_shape ls;
    if (v->op == GS_OP_REDUCE)
        for (i = 0; i < v->n_dims; i++) red |= 1u << v->dims[i];
    else
        red = 1u << v->dim;
    for (i = 0; i < rx; i++) dest[i] = (red >> i) & 1u ? GS__DEST_REP : j++;
    for (i = 0; i < rank; i++) back[i] = GS__DEST_REP;
    j = 0;
    for (i = 0; i < rx; i++)
        if (!((red >> i) & 1u)) back[j++] = i;
    if (v->red_n > 0 && gs__sp_reduce_variadic(sp, v, dest, &r, osh)) return r;
    /* the operand split along reduced dims: reduce locally, then combine the devices' partial results (not with a
       reducer computation: its partial results have no identity to pad with, and XLA's order would change; the
       reduced dims are gathered instead) */
    cross = v->op == GS_OP_REDUCE && (gs__sp_split_mask(xs, rx) & red) && v->reduce != GS_REDUCE_CUSTOM;
    if (v->op == GS_OP_REDUCE && (gs__sp_split_mask(xs, rx) & red) && !cross)
        gs__sp_note(sp, "reduce with the reducer computation '%s': the reduced dims gathered first", v->reducer->name);
    is = cross ? xs : gs__sh_map(sp->ctx, t, rx, back);   /* else the output's split, reduced dims whole */
    if (!is) return NULL;
    x = gs__sp_get(sp, X, is);
    if (v->op != GS_OP_REDUCE) {
        ls = gs__sp_local(gs__sh_map(sp->ctx, is, rank, dest), *S);
        ops[0] = x;
        *osh = gs__sh_map(sp->ctx, is, rank, dest);
        return gs__sp_clone(sp, v, ops, &ls);
    }
    x = gs__sp_mask(sp, x, is, &X->shape, red, gs__sp_identity(v->reduce, X->shape.dtype));
    ops[0] = x;
    ops[1] = gs__sp_get(sp, v->operands[1], gs__sp_rep(sp));
    ls = gs__sp_local(gs__sh_map(sp->ctx, is, rank, dest), *S);
    if (cross && !gs__sp_init_is_identity(v->operands[1], v->reduce)) {
        /* partial results are combined across devices: the init value must enter once, after them */
        gs_value *init = ops[1];
        ops[1] = gs_scalar(g, X->shape.dtype, gs__sp_identity(v->reduce, X->shape.dtype));
        r = gs__sp_combine(sp, gs__sp_clone(sp, v, ops, &ls), is, rx, dest, v->reduce, S, t, osh);
        gs__sp_note(sp, "local reduce from the identity, the init value applied after combining");
        return r ? gs_binary(g, gs__hlo_reduce_op(v->reduce), r, gs_broadcast(g, init, r->shape, NULL)) : NULL;
    }
    if (v->red_n > 0) {   /* a variadic reducer: no partial results are combined (cross is false) */
        vops[0] = ops[0];
        vops[1] = ops[1];
        if (!gs__sp_variadic_ops(sp, v, vops, is, gs__sp_rep(sp))) return NULL;
        *osh = gs__sh_map(sp->ctx, is, rank, dest);
        gs__sp_note(sp, "local reduce");
        return gs__sp_clone(sp, v, vops, &ls);
    }
    r = gs__sp_clone(sp, v, ops, &ls);
    gs__sp_note(sp, "local reduce");
    return gs__sp_combine(sp, r, is, rx, dest, v->reduce, S, t, osh);
}

/* sort along d, top-k along the last dim: x[A,D]{D split} -> out[A,D]{D's tiles moved to A, or replicated};
   the op runs on whole rows */
GS__FN gs_value *gs__sp_sort(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    gs_value *ops[GS_MAX_RANK + 4];
    int i;
    int d = v->op == GS_OP_SORT ? (int)v->dim : v->operands[0]->shape.rank - 1;
    const gs_shape *X = &v->operands[0]->shape;
    const gs_sharding *te = gs__sp_elem(t, 0), *os;
    gs_shape ls;
    if (v->n_operands > (int)GS__COUNTOF(ops)) return gs__sp_replicated(sp, v, "many operands", osh);
    os = gs__sp_move_tiles_off(sp, te, X, d);
    if (!os) return NULL;
    if (os != te) gs__sp_note(sp, "tiles moved off the %s dim", gs_op_name(v->op));
    for (i = 0; i < v->n_operands; i++) ops[i] = gs__sp_get(sp, v->operands[i], os);
    ls = gs__sp_local(os, *X);
    if (v->shape.dtype == GS_TUPLE) {
        const gs_sharding *el[64];
        int n = v->n_tuple;
        if (n > 64) return NULL;
        for (i = 0; i < n; i++) el[i] = os;
        *osh = gs_sharding_tuple(sp->ctx, n, el);
        return gs__sp_clone(sp, v, ops, NULL);
    }
    *osh = os;
    return gs__sp_clone(sp, v, ops, &ls);
}

/* rng(lo{rep}, hi{rep}) -> out[S..]{t}: each device draws exactly its block of the unpartitioned numbers */
GS__FN gs_value *gs__sp_rng(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    gs_value *ops[2], *off[GS_MAX_RANK];
    gs_shape ls = gs__sp_local(t, v->shape);
    int i;
    if (v->n_operands != 2) return gs__sp_replicated(sp, v, "rng shard form in the source", osh);
    ops[0] = gs__sp_get(sp, v->operands[0], gs__sp_rep(sp));
    ops[1] = gs__sp_get(sp, v->operands[1], gs__sp_rep(sp));
    for (i = 0; i < v->shape.rank; i++) off[i] = gs__sp_offset(sp, t, i, ls.dims[i]);
    gs__sp_note(sp, "rng: each device draws its own block");
    return gs_rng_uniform_shard(sp->G->g, ops[0], ops[1], ls, v->shape, off, v->seed);
}

/* sharding annotation: x{any} -> x{t} (a reshard) */
GS__FN gs_value *gs__sp_annotate(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    (void)osh;
    return gs__sp_get(sp, v->operands[0], t);
}

/* enter a manual region: x[S..]{s} -> x[local]{manual}, the tile's padding zeroed. A partly manual t may split
   the manual shard further within each group (XLA: the operand's tile is the manual shard's tile under t). */
GS__FN gs_value *gs__sp_to_manual(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    /* in reference mode the operand is replicated: its own sharding says which block each device takes */
    const gs_sharding *xs = sp->reference ? gs__sp_orig(sp, v->operands[0]) : sp->G->vals[v->operands[0]->id].sh;
    gs_shape want = gs__sp_local(xs, v->operands[0]->shape), have = gs__sp_local(t, v->shape);
    gs_value *x = gs__sp_get(sp, v->operands[0], xs);
    if (!x) return NULL;
    if (!gs_shape_equal(&want, &have)) {
        gs__err(sp->ctx, GS_ERR_SHAPE, "%s: the manual shard shape must be the operand's shard shape under %s",
                v->name, gs_sharding_to_text(sp->ctx, xs));
        return NULL;
    }
    *osh = t;
    gs__sp_note(sp, "enter the manual region (padding zeroed)");
    return gs__sp_mask(sp, x, xs, &v->operands[0]->shape, ~0u, 0);
}

/* leave a manual region: x[local]{manual} -> out[S..]{t}, the value as it is */
GS__FN gs_value *gs__sp_to_full(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    const gs_sharding *xs = sp->G->vals[v->operands[0]->id].sh;
    gs_value *x = gs__sp_get(sp, v->operands[0], xs);
    gs_shape want;
    if (sp->reference) t = gs__sp_orig(sp, v);   /* the blocks are laid out by v's own sharding, then gathered */
    want = gs__sp_local(t, v->shape);
    *osh = t;
    if (!x) return NULL;
    if (!gs_shape_equal(&want, &x->shape) && xs && xs->kind == GS_SHARDING_TILED && gs_sharding_manual_group(xs) > 1) {
        /* a partly manual value split within its group whose tiles are not t's: each group's whole array first */
        x = gs__sp_get(sp, v->operands[0], gs__sh_replicate_dims(sp->ctx, xs, ~0u));
        if (!x) return NULL;
        gs__sp_note(sp, "each manual group's array gathered within the group");
    }
    if (!gs_shape_equal(&want, &x->shape)) {
        gs__err(sp->ctx, GS_ERR_SHAPE, "%s: the manual value's shape is not the shard shape of %s", v->name,
                gs_sharding_to_text(sp->ctx, t));
        return NULL;
    }
    gs__sp_note(sp, "leave the manual region");
    return x;
}

/* tuple(a{t0}, b{t1}, ..) -> out{(t0, t1, ..)}: each element resharded to its part of t */
GS__FN gs_value *gs__sp_tuple(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    gs_value **el;
    gs_value *r;
    int i;
    (void)osh;
    if (v->tree) {
        gs__err(sp->ctx, GS_ERR_UNSUPPORTED, "%s: nested tuples are not partitioned (flatten the tuple)", v->name);
        return NULL;
    }
    el = (gs_value **)gs__malloc(sp->ctx, sizeof(gs_value *) * (size_t)(v->n_operands ? v->n_operands : 1));
    if (!el) return NULL;
    for (i = 0; i < v->n_operands; i++) el[i] = gs__sp_get(sp, v->operands[i], gs__sp_elem(t, i));
    r = gs_tuple(sp->G->g, v->n_operands, el);
    gs__free(sp->ctx, el);
    return r;
}

/* get-tuple-element i: x{(s0, s1, ..)} -> out{si}; no collective */
GS__FN gs_value *gs__sp_get_tuple_element(gs__sp *sp, const gs_value *v, const gs_sharding *t,
                                          const gs_sharding **osh) {
    const gs_sharding *ts = sp->G->vals[v->operands[0]->id].sh;
    const gs_value *x = v->operands[0];
    (void)t;
    if (x->tree) {   /* of a nested tuple: element index is leaf `first`, or a tuple of leaves first.. */
        int first, nl, node, j;
        const gs_sharding **el;
        if (!gs__tuple_child(x, v->index, &first, &nl, &node)) {
            gs__err(sp->ctx, GS_ERR_SHAPE, "%s: index %lld is out of range", v->name, (long long)v->index);
            return NULL;
        }
        if (x->tree[node] < 0) {
            *osh = gs__sp_elem(ts, first);
        } else {
            if (!(el = (const gs_sharding **)gs__arena_alloc(sp->ctx, sizeof(gs_sharding *) * (size_t)(nl > 0 ? nl : 1))))
                return NULL;
            for (j = 0; j < nl; j++) el[j] = gs__sp_elem(ts, first + j);
            if (!(*osh = gs_sharding_tuple(sp->ctx, nl, el))) return NULL;
        }
        return gs_get_tuple_element(sp->G->g, sp->G->vals[x->id].v, v->index);
    }
    *osh = gs__sp_elem(ts, (int)v->index);
    return gs_get_tuple_element(sp->G->g, sp->G->vals[v->operands[0]->id].v, v->index);
}

/* while: state{t} -> state{t}; the body partitioned with the state in t, the condition with it in t too */
GS__FN gs_value *gs__sp_while(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    gs_graph *body, *cond;
    gs_value *init = gs__sp_get(sp, v->operands[0], t);
    gs__sp_g *saved = sp->G;
    const gs_value *at = sp->at;
    (void)osh;
    if (!init) return NULL;
    cond = gs__sp_graph(sp, v->cond, t, gs__sp_rep(sp));
    sp->G = saved;
    sp->at = at;
    if (!cond) return NULL;
    body = gs__sp_graph(sp, v->body, t, t);
    sp->G = saved;
    sp->at = at;
    if (!body) return NULL;
    gs__sp_note(sp, "loop: body and condition partitioned with the loop state's sharding");
    return gs_while(sp->G->g, cond, body, init);
}

/* conditional: selector{rep}, arg_k{p_k} -> out{t}; each branch partitioned with its parameter in p_k and its root
   in t, so every branch gives the same per-device shape; only the taken branch runs on each device, and every
   device takes the same one (the selector is replicated; in a partly manual region, within each manual group) */
GS__FN gs_value *gs__sp_conditional(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    gs__sp_g *saved = sp->G;
    const gs_value *at = sp->at;
    const gs_sharding *ss;
    gs_value **xs;
    gs_graph **br;
    int k, n = v->n_branches;
    (void)osh;
    xs = (gs_value **)gs__arena_alloc(sp->ctx, sizeof(gs_value *) * (size_t)(n + 1));
    br = (gs_graph **)gs__arena_alloc(sp->ctx, sizeof(gs_graph *) * (size_t)n);
    if (!xs || !br) return NULL;
    ss = gs__sp_sh(sp, v->operands[0]);   /* a scalar in a partly manual region stays in its manual groups */
    if (!ss || ss->kind != GS_SHARDING_TILED || ss->rank != 0 || ss->n_sub < 1 || ss->sub[0] != GS_SUBGROUP_MANUAL)
        ss = gs__sp_rep(sp);
    if (!(xs[0] = gs__sp_get(sp, v->operands[0], ss))) return NULL;
    for (k = 0; k < n; k++) {
        const gs_sharding *pk = gs__sp_sh(sp, v->branches[k]->params[0]);
        if (!(xs[k + 1] = gs__sp_get(sp, v->operands[k + 1], pk))) return NULL;
        br[k] = gs__sp_graph(sp, v->branches[k], pk, t);
        sp->G = saved;
        sp->at = at;
        if (!br[k]) return NULL;
    }
    gs__sp_note(sp, "conditional: the selector replicated; each branch partitioned with its parameter's sharding and "
                "its root in the conditional's");
    return gs_conditional(sp->G->g, xs[0], n, br, xs + 1);
}

/* the coordinates of device d in t other than its manual one (its data tile and replica) */
GS__FN bool gs__sp_tile_key(const gs_sharding *t, int64_t d, int64_t *key) {
    int64_t idx[GS_MAX_TILE_RANK];
    int i, n = 0;
    if (!gs_sharding_device_index(t, d, idx)) return false;
    for (i = 0; i < t->ta.n; i++)
        if (i != t->rank) key[n++] = idx[i];   /* sub[0] is the manual subgroup (gs__sp_partly_manual) */
    return true;
}
GS__FN bool gs__sp_same_tile(const gs_sharding *t, int64_t a, int64_t b) {
    int64_t ka[GS_MAX_TILE_RANK], kb[GS_MAX_TILE_RANK];
    int i;
    if (!gs__sp_tile_key(t, a, ka) || !gs__sp_tile_key(t, b, kb)) return false;
    for (i = 0; i + 1 < t->ta.n; i++)
        if (ka[i] != kb[i]) return false;
    return true;
}
/* the pair or group of collective v that joins devices holding different tiles of t, as text, or NULL */
GS__FN const char *gs__sp_collective_cross(gs__sp *sp, const gs_value *v, const gs_sharding *t) {
    int64_t i, j, ng = 0, gsz = 0;
    const int64_t *ids = NULL;
    const char *bad = NULL;
    if (v->op == GS_OP_COLLECTIVE_PERMUTE) {
        for (i = 0; i < v->n_pairs && !bad; i++)
            if (!gs__sp_same_tile(t, v->pairs[2 * i], v->pairs[2 * i + 1]))
                bad = gs__arena_printf(sp->ctx, "pair {%lld,%lld}", (long long)v->pairs[2 * i], (long long)v->pairs[2 * i + 1]);
        return bad;
    }
    if (gs__groups_expand(sp->ctx, &v->coll.groups, sp->D, &ng, &gsz, &ids) != GS_OK) return "its replica groups";
    for (i = 0; i < ng && !bad; i++)
        for (j = 1; j < gsz && !bad; j++)
            if (!gs__sp_same_tile(t, ids[i * gsz], ids[i * gsz + j]))
                bad = gs__arena_printf(sp->ctx, "the group of devices %lld and %lld", (long long)ids[i * gsz],
                                       (long long)ids[i * gsz + j]);
    gs__free(sp->ctx, (void *)ids);
    return bad;
}

/* the manual group of device d under s (0 when s has no manual subgroup) */
GS__FN int64_t gs__sp_manual_index(const gs_sharding *s, int64_t d) {
    int64_t idx[GS_MAX_TILE_RANK] = {0};
    if (!s || s->kind != GS_SHARDING_TILED || gs_sharding_manual_group(s) < 2 || !gs_sharding_device_index(s, d, idx))
        return 0;
    return idx[s->rank];   /* sub[0] is the manual subgroup */
}

/* Collective v run on each manual group's whole value (the groups of t; one group when t has none): every device
   must be in one replica group, and the devices of one manual group must meet the same manual groups in the same
   order and, when `place` (reduce-scatter, all-to-all: the result depends on it), at the same place in their
   group, so that they all receive the same value. NULL when they do, else what breaks it, as text. */
GS__FN const char *gs__sp_groups_uniform(gs__sp *sp, const gs_value *v, const gs_sharding *t, bool place) {
    int64_t ng = 0, gsz = 0, i, j, D = sp->D, *grp, *pos, *rep;
    const int64_t *ids = NULL;
    const char *bad = NULL;
    if (gs__groups_expand(sp->ctx, &v->coll.groups, D, &ng, &gsz, &ids) != GS_OK) return "its replica groups";
    grp = (int64_t *)gs__malloc(sp->ctx, sizeof(int64_t) * (size_t)(3 * D));
    if (!grp) {
        gs__free(sp->ctx, (void *)ids);
        return "its replica groups (out of memory)";
    }
    pos = grp + D;
    rep = pos + D;   /* rep[m]: the first device of manual group m seen, or -1 */
    for (i = 0; i < D; i++) grp[i] = rep[i] = -1;
    for (i = 0; i < ng * gsz; i++) {
        grp[ids[i]] = i / gsz;
        pos[ids[i]] = i % gsz;
    }
    for (i = 0; i < D && !bad; i++) {
        int64_t m = gs__sp_manual_index(t, i), r;
        if (grp[i] < 0) {
            bad = gs__arena_printf(sp->ctx, "device %lld is in none of its groups", (long long)i);
            break;
        }
        if ((r = rep[m]) < 0) {
            rep[m] = i;
            continue;
        }
        for (j = 0; j < gsz; j++)
            if (gs__sp_manual_index(t, ids[grp[i] * gsz + j]) != gs__sp_manual_index(t, ids[grp[r] * gsz + j])) break;
        if (j < gsz || (place && pos[i] != pos[r]))
            bad = gs__arena_printf(sp->ctx, "devices %lld and %lld hold one manual group's value but their groups %s",
                                   (long long)r, (long long)i, j < gsz ? "join different manual groups" :
                                   "place them differently");
    }
    gs__free(sp->ctx, grp);
    gs__free(sp->ctx, (void *)ids);
    return bad;
}

/* all-gather, reduce-scatter, all-to-all written in the program (XLA's DefaultAction, within each manual group):
   x{t} -> x{whole in each manual group of t} -> op as written (its groups are device ids) -> out{whole in each
   group}; the walk then splits out to t. Its groups must give every device of a manual group the same value. */
GS__FN gs_value *gs__sp_collective_whole(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    const gs_sharding *w = t && t->kind == GS_SHARDING_TILED ? gs__sh_replicate_dims(sp->ctx, t, ~0u) : gs__sp_rep(sp);
    const char *bad;
    gs_value *x;
    if (v->n_operands != 1 || v->shape.dtype == GS_TUPLE) {
        gs__err(sp->ctx, GS_ERR_UNSUPPORTED, "%s: %s of %d operands written in the program is partitioned only with "
                "one array operand (outside fully manual regions)", v->name, gs_op_name(v->op), v->n_operands);
        return NULL;
    }
    if (v->coll.channel_id == 0) {
        gs__err(sp->ctx, GS_ERR_SHARDING, "%s: %s without channel_id outside a fully manual region: XLA reads it "
                "across replicas (there is one); write channel_id=1 for the one across the devices", v->name,
                gs_op_name(v->op));
        return NULL;
    }
    if ((bad = gs__sp_groups_uniform(sp, v, t, v->op != GS_OP_ALL_GATHER)) != NULL) {
        gs__err(sp->ctx, GS_ERR_SHARDING, "%s: %s on %s: %s", v->name, gs_op_name(v->op),
                gs_sharding_to_text(sp->ctx, t ? t : gs__sp_rep(sp)), bad);
        return NULL;
    }
    if (!w || !(x = gs__sp_get(sp, v->operands[0], w))) return NULL;
    *osh = w;
    gs__sp_note(sp, "%s as written on each manual group's whole value", gs_op_name(v->op));
    return gs__sp_clone(sp, v, &x, &v->shape);
}

/* all-reduce without channel_id (XLA: across replicas, handled like an elementwise op): x{t} -> x{t}; there is one
   replica, so each device's block is the result, as the reference interpreter reads it (groups over one device) */
GS__FN gs_value *gs__sp_cross_replica(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    int64_t ng = 0, gsz = 0;
    const int64_t *ids = NULL;
    if (v->n_operands != 1 || v->shape.dtype == GS_TUPLE) {
        gs__err(sp->ctx, GS_ERR_UNSUPPORTED, "%s: all-reduce without channel_id of %d operands is partitioned only "
                "with one array operand", v->name, v->n_operands);
        return NULL;
    }
    if (gs__groups_expand(sp->ctx, &v->coll.groups, 1, &ng, &gsz, &ids) != GS_OK) {
        gs__err_prefix(sp->ctx, "%s: all-reduce without channel_id reads its groups as replicas, and there is one: ",
                       v->name);
        return NULL;
    }
    gs__free(sp->ctx, (void *)ids);
    *osh = t;
    gs__sp_note(sp, "all-reduce across replicas: one replica, each block as it is");
    if (!sp->reference)
        gs__sp_warnf(sp, "all-reduce %s has no channel_id: read across replicas as XLA reads it (there is one, so each "
                     "device keeps its value); an all-reduce across the devices takes channel_id=1, and a program "
                     "already written per device runs with run --spmd", v->name);
    return gs__sp_get(sp, v->operands[0], t);
}

/* A collective the source program wrote, as XLA's partitioner reads it. All-gather, reduce-scatter and all-to-all:
   gs__sp_collective_whole. All-reduce without channel_id: gs__sp_cross_replica. All-reduce with channel_id
   (use_global_device_ids=true, or groups {}) and collective-permute with channel_id: on a replicated value the op
   as written, across the devices; in a partly manual region (t with a manual subgroup), the operand resharded to
   t, the op as written on each tile when every group or pair joins devices holding the same tile of t (an
   all-reduce there also needs use_global_device_ids). ragged-all-to-all is kept like all-reduce (XLA's
   partitioner replicates its operands and clones it: a collective of an SPMD program written as such), its six
   operands each whole (per manual group in a partly manual region, whose data dims must then be unsplit).
   Anything else is an error (docs/xla_differences.md). */
GS__FN gs_value *gs__sp_collective(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    const char *bad;
    gs_value *x[6];
    gs_shape ls;
    bool partly = t && t->kind == GS_SHARDING_TILED && gs_sharding_manual_group(t) > 1, ar = v->op == GS_OP_ALL_REDUCE;
    bool ragged = v->op == GS_OP_RAGGED_ALL_TO_ALL;
    int k;
    if (v->op == GS_OP_ALL_GATHER || v->op == GS_OP_REDUCE_SCATTER || v->op == GS_OP_ALL_TO_ALL)
        return gs__sp_collective_whole(sp, v, t, osh);
    if (ar && v->coll.channel_id == 0) return gs__sp_cross_replica(sp, v, t, osh);
    if ((!ar && !ragged && v->op != GS_OP_COLLECTIVE_PERMUTE) || v->n_operands != (ragged ? 6 : 1) ||
        v->shape.dtype == GS_TUPLE || (!partly && !gs__sp_is_rep(t))) {
        gs__err(sp->ctx, GS_ERR_SHARDING, "%s: %s outside a manual region (collectives belong to SPMD programs; "
                "kept are all-reduce, collective-permute and ragged-all-to-all with channel_id, on a replicated value "
                "or in a partly manual region)", v->name, gs_op_name(v->op));
        return NULL;
    }
    if (ragged && partly && gs__sh_tiles(t) != gs_sharding_manual_group(t)) {
        gs__err(sp->ctx, GS_ERR_SHARDING, "%s: ragged-all-to-all in a partly manual region with its data dims split "
                "(%s): its rows move whole, so each manual group must hold all of them", v->name, gs_sharding_to_text(sp->ctx, t));
        return NULL;
    }
    if (v->coll.channel_id == 0) {
        gs__err(sp->ctx, GS_ERR_SHARDING, "%s: %s outside a manual region without channel_id: XLA reads it across "
                "replicas (one replica: each block as it is), gshard.h's runtime across partitions (as run --spmd "
                "runs it); write channel_id=1 for the one across partitions", v->name, gs_op_name(v->op));
        return NULL;
    }
    if (ar && !v->coll.use_global_device_ids && (partly || v->coll.groups.n_groups > 0)) {
        gs__err(sp->ctx, GS_ERR_SHARDING, "%s: an all-reduce with replica groups written in the program needs "
                "use_global_device_ids=true (its groups are then device ids)", v->name);
        return NULL;
    }
    if (partly && (bad = gs__sp_collective_cross(sp, v, t)) != NULL) {
        gs__err(sp->ctx, GS_ERR_SHARDING, "%s: %s across manual subgroups: %s joins devices holding different tiles "
                "of %s", v->name, gs_op_name(v->op), bad, gs_sharding_to_text(sp->ctx, t));
        return NULL;
    }
    if (ragged) {   /* each operand whole (within its manual group: a partly manual value read as replicated) */
        for (k = 0; k < 6; k++)
            if (!(x[k] = gs__sp_get(sp, v->operands[k], k == 0 || k == 1 ? t : sp->rep))) return NULL;
    } else if (!(x[0] = gs__sp_get(sp, v->operands[0], t))) {
        return NULL;
    }
    ls = gs__sp_local(t, v->shape);
    gs__sp_note(sp, "%s as written", gs_op_name(v->op));
    return gs__sp_clone(sp, v, x, &ls);
}

/* A cross-partition all-reduce (channel_id) outside manual regions means something only on a replicated value
   (XLA refuses it on a split one); given a split sharding by propagation rather than by the program, it is held
   replicated, as XLA's partitioner holds an instruction nobody annotated */
GS__FN const gs_sharding *gs__sp_all_reduce_held(gs__sp *sp, const gs_value *v, const gs_sharding *t) {
    if (v->op != GS_OP_ALL_REDUCE || v->coll.channel_id == 0 || v->sharding_user || !t ||
        t->kind != GS_SHARDING_TILED || gs_sharding_manual_group(t) > 1 || gs__sp_is_rep(t))
        return t;
    gs__sp_note(sp, "a cross-partition all-reduce is held replicated (it sums the devices' copies)");
    return gs__sp_rep(sp);
}

/* rng-bit-generator: state{rep} -> (state, bits){rep}: every element's bits depend on its position in the whole
   array, so each device computes them all (the walk then slices the bits to their sharding) */
GS__FN gs_value *gs__sp_rng_bit_generator(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    (void)t;
    return gs__sp_replicated(sp, v, "the bits of each element depend on its position in the whole array", osh);
}

/* batch-norm-*: x[A,F,B]{F split only} with the [F] vectors{F split} -> (out[A,F,B]{F split}, [F]{F split}, ...):
   the statistics of a feature are local when only the feature dim is split; the other dims are gathered first;
   no collective otherwise */
GS__FN gs_value *gs__sp_batch_norm(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    const gs_value *x = v->operands[0];
    int r = x->shape.rank, f = (int)v->dim, i, dest[GS_MAX_RANK];
    const gs_sharding *xt = v->shape.dtype == GS_TUPLE ? gs__sp_elem(t, 0) : t, *vt, *el[3];
    gs_value *ops[5];
    uint32_t others = (r >= 32 ? 0xFFFFFFFFu : ((1u << r) - 1u)) & ~(1u << f);
    if (gs__sp_split_mask(xt, r) & others) gs__sp_note(sp, "%s: the dims other than the feature gathered first", gs_op_name(v->op));
    xt = gs__sp_unsplit(sp, xt, others);
    for (i = 0; i < r; i++) dest[i] = i == f ? 0 : GS__DEST_REP;   /* x's feature dim is the vectors' dim 0 */
    vt = gs__sh_map(sp->ctx, xt, 1, dest);
    if (!xt || !vt) return NULL;
    for (i = 0; i < v->n_operands; i++) {
        bool whole = i == 0 || (v->op == GS_OP_BATCH_NORM_GRAD && i == 4);
        ops[i] = gs__sp_get(sp, v->operands[i], whole ? xt : vt);
    }
    if (v->shape.dtype != GS_TUPLE) {
        gs_shape ls = gs__sp_local(xt, v->shape);
        *osh = xt;
        return gs__sp_clone(sp, v, ops, &ls);
    }
    el[0] = xt;
    el[1] = el[2] = vt;
    *osh = gs_sharding_tuple(sp->ctx, 3, el);
    return gs__sp_clone(sp, v, ops, NULL);
}

/* cholesky, triangular-solve: a[B.., m, m]{B split}, b[B.., m, n]{B split} -> out{B split}: one matrix per batch
   index, the two minor dims whole; no collective */
GS__FN gs_value *gs__sp_linalg(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    int r = v->shape.rank, i;
    const gs_sharding *bt = gs__sp_unsplit(sp, t, (1u << (r - 1)) | (1u << (r - 2)));
    gs_value *ops[2];
    gs_shape ls;
    if (!bt) return NULL;
    if (gs__sp_split_mask(t, r) & ((1u << (r - 1)) | (1u << (r - 2))))
        gs__sp_note(sp, "%s: the matrix dims gathered first", gs_op_name(v->op));
    for (i = 0; i < v->n_operands; i++) ops[i] = gs__sp_get(sp, v->operands[i], bt);
    *osh = bt;
    ls = gs__sp_local(bt, v->shape);
    return gs__sp_clone(sp, v, ops, &ls);
}

/* fft: x[B.., N..]{B split} -> out[B.., M..]{B split}: each device transforms its batch elements, the fft dims
   whole; no collective */
GS__FN gs_value *gs__sp_fft(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    int r = v->shape.rank, d;
    uint32_t m = 0;
    const gs_sharding *bt;
    gs_value *x;
    gs_shape ls;
    for (d = r - v->fft_n; d < r; d++) m |= 1u << d;
    if (!(bt = gs__sp_unsplit(sp, t, m))) return NULL;
    if (gs__sp_split_mask(t, r) & m) gs__sp_note(sp, "fft: the transformed dims gathered first");
    x = gs__sp_get(sp, v->operands[0], bt);
    *osh = bt;
    ls = gs__sp_local(bt, v->shape);
    return gs__sp_clone(sp, v, &x, &ls);
}

/* any other op: operands{rep} -> out{rep} at full size */
GS__FN gs_value *gs__sp_no_rule(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    (void)t;
    return gs__sp_replicated(sp, v, "no partitioned rule", osh);
}

/* The n leaves `full` (an infeed's result leaves, data then token; an outfeed's data leaves) on device p, or with
   p < 0 their shard shapes (XLA's MakePartitionedShape / MakeNonPaddedShapeForGivenPartition): leaf i's tile under
   element i of t (t itself when it is not a tuple; on device p its real part, the padding cut off); other leaves
   and tokens whole. The partitioner holds a maximal leaf as replicated (docs/xla_differences.md): every device
   infeeds it, where XLA's other devices read an empty tuple and make zeros. */
GS__FN void gs__sp_feed_leaves(int n, const gs_shape *full, const gs_sharding *t, int64_t p, gs_shape *out) {
    int i, d;
    int64_t idx[GS_MAX_TILE_RANK];
    for (i = 0; i < n; i++) {
        const gs_sharding *e = t && t->kind == GS_SHARDING_TUPLE ? (i < t->n_elems ? t->elems[i] : NULL) : t;
        out[i] = full[i];
        if (full[i].dtype == GS_TOKEN || !e || e->kind != GS_SHARDING_TILED) continue;
        out[i] = gs__sp_local(e, full[i]);
        if (p < 0 || !gs_sharding_device_index(e, p, idx)) continue;
        for (d = 0; d < out[i].rank && d < e->rank; d++) {
            int64_t left = full[i].dims[d] - idx[d] * out[i].dims[d];
            out[i].dims[d] = left < 0 ? 0 : left < out[i].dims[d] ? left : out[i].dims[d];
        }
    }
}

/* The distinct per-device leaf lists of n leaves `full` under t: shard[0, n) their shard shapes, then nb lists
   of n at shard + n (nb returned), pick[p] device p's list. Arena memory; -1 when out of memory. */
GS__FN int gs__sp_feed_branches(gs__sp *sp, int n, const gs_shape *full, const gs_sharding *t, gs_shape **shard,
                                int32_t **pick) {
    size_t L = (size_t)n, B = sizeof(gs_shape) * L;
    gs_shape *all;
    int nb = 0;
    int64_t p, q;
    *shard = (gs_shape *)gs__arena_alloc(sp->ctx, B * (size_t)(sp->D + 1) + 1);
    *pick = (int32_t *)gs__arena_alloc(sp->ctx, sizeof(int32_t) * (size_t)sp->D);
    if (!*shard || !*pick) return -1;
    all = *shard + L;
    gs__sp_feed_leaves(n, full, t, -1, *shard);
    for (p = 0; p < sp->D; p++) {
        gs__sp_feed_leaves(n, full, t, p, all + (size_t)nb * L);
        for (q = 0; q < nb && memcmp(all + (size_t)q * L, all + (size_t)nb * L, B); q++) {}
        (*pick)[p] = (int32_t)q;
        if (q == nb) nb++;
    }
    return nb;
}

/* infeed v's op in graph g reading token tok, its result's leaves `leaves` */
GS__FN gs_value *gs__sp_infeed_op(gs__sp *sp, gs_graph *g, const gs_value *v, gs_value *tok, const gs_shape *leaves) {
    gs_value *n;
    size_t at = offsetof(gs_value, index);
    sp->ctx->next_name = v->name;
    n = gs__value_new(g, GS_OP_OPAQUE, 1, &tok);
    sp->ctx->next_name = NULL;
    if (!n) return NULL;
    memcpy((char *)n + at, (const char *)v + at, sizeof(gs_value) - at);
    if (!(n->opaque_tuple = (const gs_shape *)gs__arena_dup(sp->ctx, leaves, sizeof(gs_shape) * (size_t)v->n_tuple)))
        return NULL;
    return gs__finish(n);
}

/* element k of x (k < 0: x; node *node of v's result, leaves from *leaf on) with every array leaf padded on the
   high side up to want's (XLA's PadToShape: zeros) */
GS__FN gs_value *gs__sp_pad_tree(gs__sp *sp, gs_graph *g, gs_value *x, int64_t k, const gs_value *v, int *node,
                                 int *leaf, const gs_shape *want) {
    int kids = v->tree ? v->tree[*node] : *node == 0 ? v->n_tuple : -1, c, d;
    gs_value **el, *e = k < 0 ? x : gs_get_tuple_element(g, x, k);
    (*node)++;
    if (!e) return NULL;
    if (kids < 0) {
        int64_t lo[GS_MAX_RANK] = {0}, hi[GS_MAX_RANK] = {0};
        const gs_shape *w = &want[(*leaf)++];
        if (e->shape.dtype == GS_TOKEN || gs_shape_equal(&e->shape, w)) return e;
        for (d = 0; d < w->rank; d++) hi[d] = w->dims[d] - e->shape.dims[d];
        return gs_pad(g, e, gs_scalar(g, e->shape.dtype, 0), lo, hi, NULL);
    }
    if (!(el = (gs_value **)gs__arena_alloc(sp->ctx, sizeof(gs_value *) * (size_t)(kids > 0 ? kids : 1)))) return NULL;
    for (c = 0; c < kids; c++)
        if (!(el[c] = gs__sp_pad_tree(sp, g, e, c, v, node, leaf, want))) return NULL;
    return gs_tuple(g, kids, el);
}

/* infeed: (data.., token){per-leaf sharding} -> each device infeeds its own tile of every data leaf (XLA's
   HandleInfeed): one infeed of the shard shapes when the tiles are even; else a conditional with a branch per
   distinct per-device shape (selected by partition-id, or a table of it), each infeeding its real tiles and
   padding them to the shard shapes */
GS__FN gs_value *gs__sp_infeed(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    gs_graph *g = sp->G->g, **br;
    gs_shape *shard, *all;
    gs_value *tok, *sel, **args;
    int32_t *pick;
    int nb, b, node, leaf;
    size_t L = (size_t)v->n_tuple, B = sizeof(gs_shape) * L;
    tok = gs__sp_get(sp, v->operands[0], sp->G->vals[v->operands[0]->id].sh);
    nb = gs__sp_feed_branches(sp, v->n_tuple, v->tuple, t, &shard, &pick);
    if (!tok || nb < 0) return NULL;
    all = shard + L;   /* the distinct per-device leaves, nb of them */
    *osh = t;
    if (nb == 1 && !memcmp(all, shard, B)) {
        gs__sp_note(sp, "infeed: each device reads its tiles");
        return gs__sp_infeed_op(sp, g, v, tok, shard);
    }
    br = (gs_graph **)gs__arena_alloc(sp->ctx, sizeof(gs_graph *) * (size_t)nb);
    args = (gs_value **)gs__arena_alloc(sp->ctx, sizeof(gs_value *) * (size_t)nb);
    if (!br || !args) return NULL;
    for (b = 0; b < nb; b++) {
        const gs_shape *lb = all + (size_t)b * L;
        gs_value *r;
        const char *name = gs__arena_printf(sp->ctx, "%s_branch_%d", v->name, b);
        if (!name || !(br[b] = gs_graph_new(sp->ctx, name))) return NULL;
        r = gs__sp_infeed_op(sp, br[b], v, gs_parameter(br[b], 0, tok->shape, "infeed_token_param"), lb);
        node = leaf = 0;
        if (r && memcmp(lb, shard, B)) r = gs__sp_pad_tree(sp, br[b], r, -1, v, &node, &leaf, shard);
        if (!r || gs_graph_set_root(br[b], r) != GS_OK) return NULL;
        args[b] = tok;
    }
    sel = nb == sp->D ? gs__sp_pid(sp) : gs__sp_tab_make(sp, NULL, NULL, 0, 0, 0, pick);
    gs__sp_note(sp, "infeed: a conditional of %d branches (one per per-device shape), each padded to the shard shape", nb);
    return gs_conditional(g, sel, nb, br, args);
}

/* outfeed v's data sharding as XLA's HandleOutfeed reads the attribute: the sharding written on the outfeed (kept
   aside when it does not fit the token result, else its user sharding), a trailing element for the token dropped;
   for a tuple of data leaves the tuple of their shardings. NULL: none written, a nested tuple, or a manual
   element (the op is then computed as before: replicated, or in its manual region). *err on a sharding that does
   not fit its leaf. */
GS__FN const gs_sharding *gs__sp_outfeed_sharding(gs__sp *sp, const gs_value *v, const gs_value *data, bool *err) {
    const gs_sharding *k = v->kept_sharding ? v->kept_sharding : v->sharding_user ? v->sharding : NULL;
    bool tuple = data->shape.dtype == GS_TUPLE;
    int n = tuple ? data->n_tuple : 1, i;
    *err = false;
    if (!k || (tuple && data->tree)) return NULL;
    if (k->kind == GS_SHARDING_TUPLE) {
        if (k->n_elems != n && k->n_elems != n + 1) return NULL;
        if (!tuple) k = k->elems[0];
        else if (k->n_elems == n + 1 && !(k = gs_sharding_tuple(sp->ctx, n, k->elems))) return NULL;
    } else if (tuple) {   /* one sharding for the whole tuple ({maximal device=1}, {replicated}): every leaf's */
        const gs_sharding **el = (const gs_sharding **)gs__arena_alloc(sp->ctx, sizeof(gs_sharding *) * (size_t)n);
        if (!el) return NULL;
        for (i = 0; i < n; i++) el[i] = k;
        if (!(k = gs_sharding_tuple(sp->ctx, n, el))) return NULL;
    }
    for (i = 0; i < n; i++) {
        const gs_sharding *e = tuple ? k->elems[i] : k;
        if (!e || e->kind == GS_SHARDING_MANUAL || e->kind == GS_SHARDING_UNKNOWN || gs_sharding_manual_group(e) > 1)
            return NULL;
        if (gs_sharding_validate(sp->ctx, e, tuple ? data->tuple[i] : data->shape, sp->D) != GS_OK) {
            gs__err_prefix(sp->ctx, "%s: the sharding of what it sends%s: ", v->name,
                           tuple ? gs__arena_printf(sp->ctx, " (element %d)", i) : "");
            *err = true;
            return NULL;
        }
    }
    return k;
}

/* In kept attribute text (", name=value" ...): where attribute `key` (with its "=") begins and its value ends,
   looking only outside quoted strings and brackets. false when it is not there. */
GS__FN bool gs__sp_attr_span(const char *attrs, const char *key, const char **at, const char **end) {
    size_t kl = strlen(key);
    int depth = 0;
    bool quoted = false, found = false;
    const char *p;
    for (p = attrs; *p; p++) {
        if (quoted) {
            if (*p == '\\' && p[1]) p++;
            else if (*p == '"') quoted = false;
            continue;
        }
        if (*p == '"') {
            quoted = true;
            continue;
        }
        if (found && depth == 0 && *p == ',') break;
        if (*p == '(' || *p == '{' || *p == '[') depth++;
        else if (*p == ')' || *p == '}' || *p == ']') depth--;
        if (!found && depth == 0 && (p == attrs || p[-1] == ' ' || p[-1] == ',') && strncmp(p, key, kl) == 0) {
            found = true;
            *at = p;
            p += kl - 1;
        }
    }
    *end = p;
    return found;
}

/* v's attribute text with the array dims of its outfeed_shape replaced by leaves[0, n), in order, the layouts kept
   (XLA gives the partitioned outfeed the operand's shape with outfeed_shape's layout); the outfeed_shape dropped
   (XLA then takes the operand's shape) when its arrays are not the operand's n leaves (count, element type,
   rank). NULL only when out of memory. */
GS__FN const char *gs__sp_outfeed_attrs(gs__sp *sp, const char *attrs, const gs_shape *leaves, int n) {
    const char *at = NULL, *end = NULL, *q, *val;
    char *out, *o;
    int j = 0, brace = 0, d;
    if (!attrs || !gs__sp_attr_span(attrs, "outfeed_shape=", &at, &end)) return attrs;
    val = at + strlen("outfeed_shape=");
    if (!(out = (char *)gs__arena_alloc(sp->ctx, strlen(attrs) + (size_t)n * (GS_MAX_RANK * 21 + 2) + 1))) return NULL;
    memcpy(out, attrs, (size_t)(val - attrs));
    o = out + (val - attrs);
    for (q = val; q < end; q++) {
        if (*q == '[' && brace == 0) {   /* an array's dims (not inside a layout's braces): the next leaf's */
            const char *close = (const char *)memchr(q, ']', (size_t)(end - q)), *ty = q, *e;
            const char *name = j < n ? gs_dtype_name(leaves[j].dtype) : NULL;
            int rank = 0;
            while (ty > val && ((ty[-1] >= 'a' && ty[-1] <= 'z') || (ty[-1] >= '0' && ty[-1] <= '9'))) ty--;   /* f32, f8e4m3fn */
            for (e = q + 1; close && e < close; e++) rank += *e == ',';
            if (close && close > q + 1) rank++;
            if (!close || !name || (size_t)(q - ty) != strlen(name) || strncmp(ty, name, strlen(name)) != 0 ||
                rank != leaves[j].rank)
                break;
            *o++ = '[';
            for (d = 0; d < leaves[j].rank; d++) o += sprintf(o, "%s%lld", d ? "," : "", (long long)leaves[j].dims[d]);
            *o++ = ']';
            j++;
            q = close;
            continue;
        }
        brace += *q == '{' ? 1 : *q == '}' ? -1 : 0;
        *o++ = *q;
    }
    if (q < end || j != n) {   /* not the operand's arrays: drop the attribute (and the ", " before it) */
        size_t head = (size_t)(at - attrs);
        if (head >= 2 && attrs[head - 2] == ',' && attrs[head - 1] == ' ') head -= 2;
        return gs__arena_printf(sp->ctx, "%.*s%s", (int)head, attrs, end);
    }
    strcpy(o, end);
    return out;
}

/* outfeed v's op in graph g sending data (its n leaves `leaves`) after token tok */
GS__FN gs_value *gs__sp_outfeed_op(gs__sp *sp, gs_graph *g, const gs_value *v, gs_value *data, gs_value *tok,
                                   const gs_shape *leaves, int n) {
    gs_value *ops[2], *o;
    size_t at = offsetof(gs_value, index);
    ops[0] = data;
    ops[1] = tok;
    if (!data || !tok) return NULL;
    sp->ctx->next_name = v->name;
    o = gs__value_new(g, GS_OP_OPAQUE, 2, ops);
    sp->ctx->next_name = NULL;
    if (!o) return NULL;
    memcpy((char *)o + at, (const char *)v + at, sizeof(gs_value) - at);
    if (v->text_attrs && !(o->text_attrs = gs__sp_outfeed_attrs(sp, v->text_attrs, leaves, n))) return NULL;
    return gs__finish(o);
}

/* A branch of an outfeed's conditional: its parameter is (data, token) for data of shape `shard` (n leaves; an
   array when !tuple); it sends the data cut to `real` (each leaf's first real.dims elements), or with after_all
   sends nothing and returns a new token. */
GS__FN gs_graph *gs__sp_outfeed_branch(gs__sp *sp, const gs_value *v, int b, bool tuple, int n, const gs_shape *shard,
                                       const gs_shape *real, bool after_all) {
    const char *name = gs__arena_printf(sp->ctx, "outfeed_branch_%d", b);
    gs_graph *br = name ? gs_graph_new(sp->ctx, name) : NULL;
    gs_shape *ps = (gs_shape *)gs__arena_alloc(sp->ctx, sizeof(gs_shape) * (size_t)(n + 1));
    int *tree = (int *)gs__arena_alloc(sp->ctx, sizeof(int) * (size_t)(n + 3));
    gs_value *prm, *d, *tk, *r, **el;
    int i;
    if (!br || !ps || !tree) return NULL;
    memcpy(ps, shard, sizeof(gs_shape) * (size_t)n);
    memset(&ps[n], 0, sizeof ps[n]);
    ps[n].dtype = GS_TOKEN;
    tree[0] = 2;
    tree[1] = n;
    for (i = 0; i < n + 1; i++) tree[2 + i] = -1;
    prm = tuple ? gs_parameter_tuple_nested(br, 0, n + 1, ps, n + 3, tree, "outfeed_token_param")
                : gs_parameter_tuple(br, 0, 2, ps, "outfeed_token_param");
    d = gs_get_tuple_element(br, prm, 0);
    tk = gs_get_tuple_element(br, prm, 1);
    if (!d || !tk) return NULL;
    if (after_all) {
        sp->ctx->next_name = "after-all";
        r = gs__value_new(br, GS_OP_OPAQUE, 0, NULL);
        sp->ctx->next_name = NULL;
        if (!r) return NULL;
        r->opaque = "after-all";
        memset(&r->opaque_shape, 0, sizeof r->opaque_shape);
        r->opaque_shape.dtype = GS_TOKEN;
        r = gs__finish(r);
    } else {
        if (memcmp(shard, real, sizeof(gs_shape) * (size_t)n)) {   /* the padding cut off */
            int64_t zero[GS_MAX_RANK] = {0};
            if (!(el = (gs_value **)gs__arena_alloc(sp->ctx, sizeof(gs_value *) * (size_t)n))) return NULL;
            for (i = 0; i < n; i++) {
                gs_value *e = tuple ? gs_get_tuple_element(br, d, i) : d;
                el[i] = gs_shape_equal(&shard[i], &real[i]) ? e : gs_slice(br, e, zero, real[i].dims, NULL);
            }
            d = tuple ? gs_tuple(br, n, el) : el[0];
        }
        r = gs__sp_outfeed_op(sp, br, v, d, tk, real, n);
    }
    return r && gs_graph_set_root(br, r) == GS_OK ? br : NULL;
}

/* outfeed(data, token){s: what it sends} (XLA's HandleOutfeed): each device outfeeds its own tile of every data
   leaf (a maximal leaf held as replicated: docs/xla_differences.md): one outfeed of the shard shapes when the
   tiles are even; else a conditional with a branch per distinct per-device shape (selected by partition-id, or a
   table of it), each cutting the padding off and outfeeding the real tiles. Data all on one device (maximal):
   a conditional on partition-id == that device, the other devices' branch sending nothing (XLA's
   HandleSingleDevice). NULL with *handled false: no sharding this rule reads (the caller's default). */
GS__FN gs_value *gs__sp_outfeed(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh,
                                bool *handled) {
    gs_graph *g = sp->G->g, *br[2], **brs;
    const gs_value *data = v->operands[0];
    bool tuple = data->shape.dtype == GS_TUPLE, err;
    int n = tuple ? data->n_tuple : 1, nb, b, i;
    const gs_sharding *k = gs__sp_outfeed_sharding(sp, v, data, &err), *e;
    gs_shape *shard, *all;
    int32_t *pick;
    int64_t dev = -1;
    gs_value *x, *tok, *arg, *sel, **args;
    *handled = k != NULL || err;
    if (!k) return NULL;
    *osh = t;
    tok = gs__sp_get(sp, v->operands[1], sp->G->vals[v->operands[1]->id].sh);
    for (i = 0; i < n; i++) {   /* every leaf on one device: that device's */
        e = tuple ? k->elems[i] : k;
        if (e->kind != GS_SHARDING_MAXIMAL || (dev >= 0 && e->device != dev)) break;
        dev = e->device;
    }
    if (i == n && dev >= 0) {   /* the whole data, from device dev */
        const gs_shape *whole = tuple ? data->tuple : &data->shape;
        gs_value *pid = gs_partition_id(g), *two[2];
        two[0] = x = gs__sp_get(sp, data, gs__sp_rep(sp));
        two[1] = tok;
        arg = x && tok ? gs_tuple(g, 2, two) : NULL;
        if (!arg || !pid || !(br[0] = gs__sp_outfeed_branch(sp, v, 0, tuple, n, whole, whole, false)) ||
            !(br[1] = gs__sp_outfeed_branch(sp, v, 1, tuple, n, whole, whole, true)))
            return NULL;
        args = (gs_value **)gs__arena_alloc(sp->ctx, sizeof(gs_value *) * 2);
        if (!args) return NULL;
        args[0] = args[1] = arg;
        gs__sp_note(sp, "outfeed: data on device %lld: a conditional sends it there, the other devices send nothing",
                    (long long)dev);
        return gs_conditional(g, gs_compare(g, pid, gs_scalar(g, GS_U32, (double)dev), GS_CMP_EQ), 2, br, args);
    }
    k = gs__sp_norm(sp, k);   /* maximal leaves held as replicated */
    x = gs__sp_get(sp, data, k);
    nb = gs__sp_feed_branches(sp, n, tuple ? data->tuple : &data->shape, k, &shard, &pick);
    if (!x || !tok || nb < 0) return NULL;
    all = shard + n;
    if (nb == 1 && !memcmp(all, shard, sizeof(gs_shape) * (size_t)n)) {
        gs__sp_note(sp, "outfeed: each device sends its tiles");
        return gs__sp_outfeed_op(sp, g, v, x, tok, shard, n);
    }
    brs = (gs_graph **)gs__arena_alloc(sp->ctx, sizeof(gs_graph *) * (size_t)nb);
    args = (gs_value **)gs__arena_alloc(sp->ctx, sizeof(gs_value *) * (size_t)nb);
    if (!brs || !args) return NULL;
    {
        gs_value *two[2];
        two[0] = x;
        two[1] = tok;
        if (!(arg = gs_tuple(g, 2, two))) return NULL;   /* every branch's parameter: (data, token) */
    }
    for (b = 0; b < nb; b++) {
        if (!(brs[b] = gs__sp_outfeed_branch(sp, v, b, tuple, n, shard, all + (size_t)b * (size_t)n, false))) return NULL;
        args[b] = arg;
    }
    sel = nb == sp->D ? gs__sp_pid(sp) : gs__sp_tab_make(sp, NULL, NULL, 0, 0, 0, pick);
    gs__sp_note(sp, "outfeed: a conditional of %d branches (one per per-device shape), each sending its real tiles", nb);
    return gs_conditional(g, sel, nb, brs, args);
}

/* an op gshard.h reads but cannot run (GS_OP_OPAQUE): computed replicated, with a warning naming it */
GS__FN gs_value *gs__sp_opaque(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    if (v->opaque && strcmp(v->opaque, "infeed") == 0 && v->n_operands == 1 && v->shape.dtype == GS_TUPLE && v->n_tuple > 0)
        return gs__sp_infeed(sp, v, t, osh);
    if (v->opaque && strcmp(v->opaque, "outfeed") == 0 && v->n_operands == 2 && v->operands[1]->shape.dtype == GS_TOKEN) {
        bool handled;
        gs_value *r = gs__sp_outfeed(sp, v, t, osh, &handled);
        if (handled) return r;
    }
    if (v->opaque && strcmp(v->opaque, "after-all") == 0)   /* a token: nothing to split */
        return gs__sp_replicated(sp, v, "a token", osh);
    if (v->tree) {
        gs__err(sp->ctx, GS_ERR_UNSUPPORTED, "%s: %s with a nested tuple result is not partitioned", v->name,
                v->opaque ? v->opaque : "op");
        return NULL;
    }
    gs__sp_warnf(sp, "%s: %s%s%s has no partitioning rule: computed replicated on every device", v->name,
                 v->target ? "custom-call target \"" : v->opaque, v->target ? v->target : "", v->target ? "\"" : "");
    return gs__sp_replicated(sp, v, "an opaque op", osh);
}

/* =========================================================================================================
   The dispatcher: the rule for each op (the table of contents of the rules; gs_spmd_internal.h lists the
   shapes and shardings each maps)
   ========================================================================================================= */
/* Partitions v: returns its per-device value and, in *osh, the sharding it is in (the caller reshards it to t,
   the sharding propagation gave v). */
/* t is {manual}, or a tuple sharding whose every element is (XLA reads such a tuple as manual too) */
GS__FN bool gs__sp_all_manual(const gs_sharding *t) {
    int i;
    if (!t) return false;
    if (t->kind != GS_SHARDING_TUPLE) return t->kind == GS_SHARDING_MANUAL;
    for (i = 0; i < t->n_elems; i++)
        if (!t->elems[i] || t->elems[i]->kind != GS_SHARDING_MANUAL) return false;
    return t->n_elems > 0;
}

GS__FN gs_value *gs__sp_op(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    *osh = t;
    if (gs__sp_all_manual(t) && v->op != GS_OP_TO_MANUAL && v->op != GS_OP_TUPLE && v->op != GS_OP_GET_TUPLE_ELEMENT)
        return gs__sp_manual(sp, v, t, osh);
    if (gs__sp_is_elementwise(v->op)) return gs__sp_elementwise(sp, v, t, osh);
    switch (v->op) {
    case GS_OP_CONSTANT:             return gs__sp_constant(sp, v, t, osh);
    case GS_OP_IOTA:                 return gs__sp_iota(sp, v, t, osh);
    case GS_OP_PARTITION_ID:         return gs__sp_partition_id(sp, v, t, osh);
    case GS_OP_REPLICA_ID:           return gs__sp_replica_id(sp, v, t, osh);
    case GS_OP_BITCAST_CONVERT:      return gs__sp_bitcast_convert(sp, v, t, osh);
    case GS_OP_RNG_BIT_GENERATOR:    return gs__sp_rng_bit_generator(sp, v, t, osh);
    case GS_OP_BATCH_NORM_TRAINING:  return gs__sp_batch_norm(sp, v, t, osh);
    case GS_OP_BATCH_NORM_INFERENCE: return gs__sp_batch_norm(sp, v, t, osh);
    case GS_OP_BATCH_NORM_GRAD:      return gs__sp_batch_norm(sp, v, t, osh);
    case GS_OP_CHOLESKY:             return gs__sp_linalg(sp, v, t, osh);
    case GS_OP_TRIANGULAR_SOLVE:     return gs__sp_linalg(sp, v, t, osh);
    case GS_OP_FFT:                  return gs__sp_fft(sp, v, t, osh);
    case GS_OP_SELECT_AND_SCATTER:   return gs__sp_replicated(sp, v, "select-and-scatter, computed whole", osh);
    case GS_OP_BROADCAST:            return gs__sp_broadcast(sp, v, t, osh);
    case GS_OP_TRANSPOSE:            return gs__sp_transpose(sp, v, t, osh);
    case GS_OP_RESHAPE:              return gs__sp_reshape(sp, v, t, osh);
    case GS_OP_SLICE:                return gs__sp_windowed(sp, v, t, osh);
    case GS_OP_PAD:                  return gs__sp_windowed(sp, v, t, osh);
    case GS_OP_REDUCE_WINDOW:
        if (v->reduce == GS_REDUCE_CUSTOM)   /* halo padding needs the reduction's identity */
            return gs__sp_replicated(sp, v, "reduce-window with a reducer computation", osh);
        return gs__sp_windowed(sp, v, t, osh);
    case GS_OP_REVERSE:              return gs__sp_reverse(sp, v, t, osh);
    case GS_OP_CONVOLUTION:          return gs__sp_conv(sp, v, t, osh);
    case GS_OP_CONCATENATE:          return gs__sp_whole_dims(sp, v, t, osh);
    case GS_OP_DYNAMIC_SLICE:        return gs__sp_whole_dims(sp, v, t, osh);
    case GS_OP_DYNAMIC_UPDATE_SLICE: return gs__sp_whole_dims(sp, v, t, osh);
    case GS_OP_REDUCE:               return gs__sp_reduce(sp, v, t, osh);
    case GS_OP_ARGMAX:               return gs__sp_reduce(sp, v, t, osh);
    case GS_OP_ARGMIN:               return gs__sp_reduce(sp, v, t, osh);
    case GS_OP_SORT:                 return gs__sp_sort(sp, v, t, osh);
    case GS_OP_TOPK:                 return gs__sp_sort(sp, v, t, osh);
    case GS_OP_CUMSUM:               return gs__sp_cumulative(sp, v, t, osh);
    case GS_OP_CUMPROD:              return gs__sp_cumulative(sp, v, t, osh);
    case GS_OP_CUMMAX:               return gs__sp_cumulative(sp, v, t, osh);
    case GS_OP_CUMMIN:               return gs__sp_cumulative(sp, v, t, osh);
    case GS_OP_DOT:                  return gs__sp_dot(sp, v, t, osh);
    case GS_OP_RAGGED_DOT:           return gs__sp_dot(sp, v, t, osh);
    case GS_OP_RNG:                  return gs__sp_rng(sp, v, t, osh);
    case GS_OP_ANNOTATE:             return gs__sp_annotate(sp, v, t, osh);
    case GS_OP_TO_MANUAL:            return gs__sp_to_manual(sp, v, t, osh);
    case GS_OP_TO_FULL:              return gs__sp_to_full(sp, v, t, osh);
    case GS_OP_TUPLE:                return gs__sp_tuple(sp, v, t, osh);
    case GS_OP_GET_TUPLE_ELEMENT:    return gs__sp_get_tuple_element(sp, v, t, osh);
    case GS_OP_WHILE:                return gs__sp_while(sp, v, t, osh);
    case GS_OP_CONDITIONAL:          return gs__sp_conditional(sp, v, t, osh);
    case GS_OP_ALL_REDUCE:           return gs__sp_collective(sp, v, t, osh);
    case GS_OP_ALL_GATHER:           return gs__sp_collective(sp, v, t, osh);
    case GS_OP_REDUCE_SCATTER:       return gs__sp_collective(sp, v, t, osh);
    case GS_OP_ALL_TO_ALL:           return gs__sp_collective(sp, v, t, osh);
    case GS_OP_COLLECTIVE_PERMUTE:   return gs__sp_collective(sp, v, t, osh);
    case GS_OP_RAGGED_ALL_TO_ALL:    return gs__sp_collective(sp, v, t, osh);
    case GS_OP_GATHER:               return gs__sp_gather(sp, v, t, osh);
    case GS_OP_SCATTER:              return gs__sp_scatter(sp, v, t, osh);
    case GS_OP_OPAQUE:               return gs__sp_opaque(sp, v, t, osh);
    default:                         return gs__sp_no_rule(sp, v, t, osh);
    }
}

/* add, subtract, negate or copy whose operands all hold the same unreduced sharding: that sharding (the op is
   linear in each partial value, so it runs on them and its result is partial alike), else NULL */
GS__FN const gs_sharding *gs__sp_linear_unreduced(gs__sp *sp, const gs_value *v) {
    const gs_sharding *u;
    int i;
    if (v->shape.dtype == GS_TUPLE || v->n_operands < 1 || v->n_operands > 2 ||
        (v->op != GS_OP_ADD && v->op != GS_OP_SUBTRACT && v->op != GS_OP_NEGATE && v->op != GS_OP_COPY))
        return NULL;
    u = sp->G->vals[v->operands[0]->id].sh;
    if (!u || u->kind == GS_SHARDING_TUPLE || !gs__sh_has_unreduced(u)) return NULL;
    for (i = 1; i < v->n_operands; i++)
        if (!gs_sharding_equal(sp->G->vals[v->operands[i]->id].sh, u)) return NULL;
    return u;
}

/* v{t} with t unreduced (each device of an unreduced group holds a partial value, the value their sum), or v
   linear in unreduced operands: a linear op of operands in one unreduced sharding runs on the partial values
   (the walk then sums them once, if t wants the whole value); a dot, convolution or add-reduce whose partial
   sums are partial over exactly t's unreduced devices keeps them (no all-reduce); any other op is computed on
   the summed value (t read as replicated along its unreduced devices) and the walk reshards its result to t */
GS__FN gs_value *gs__sp_unreduced_op(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    const gs_sharding *r, *u = gs__sp_linear_unreduced(sp, v);
    gs_value *ops[2], *x;
    int i;
    if (u) {
        gs_shape ls = gs__sp_local(u, v->shape);
        for (i = 0; i < v->n_operands; i++) ops[i] = sp->G->vals[v->operands[i]->id].v;
        gs__sp_note(sp, "linear in its unreduced operands: computed on the partial values");
        *osh = u;
        return gs__sp_clone(sp, v, ops, &ls);
    }
    if (!(r = gs__sh_reduced(sp->ctx, t))) return NULL;
    *osh = r;
    if (v->op != GS_OP_DOT && v->op != GS_OP_CONVOLUTION && v->op != GS_OP_REDUCE) return gs__sp_op(sp, v, r, osh);
    sp->unreduced_t = t;
    x = gs__sp_op(sp, v, r, osh);
    sp->unreduced_t = NULL;
    return x;
}

/* =========================================================================================================
   The driver
   ========================================================================================================= */
GS__FN void gs__sp_g_free(gs__sp *sp, gs__sp_g *G) {
    int i;
    if (G->vals) {
        for (i = 0; i < (int)stbds_arrlen(G->src->values); i++) stbds_arrfree(G->vals[i].alts);
        gs__free(sp->ctx, G->vals);
    }
    stbds_arrfree(G->tabs);
}

/* a parameter's per-device shape */
GS__FN gs_value *gs__sp_param(gs__sp *sp, const gs_value *p, const gs_sharding *s) {
    if (p->shape.dtype == GS_TUPLE) {
        gs_shape ts[64];
        int i;
        if (p->n_tuple > 64) { gs__err(sp->ctx, GS_ERR_UNSUPPORTED, "%s: tuples of more than 64 elements", p->name); return NULL; }
        for (i = 0; i < p->n_tuple; i++) ts[i] = gs__sp_local(gs__sp_elem(s, i), p->tuple[i]);
        return gs_parameter_tuple(sp->G->g, p->index, p->n_tuple, ts, p->name);
    }
    return gs_parameter(sp->G->g, p->index, gs__sp_local(s, p->shape), p->name);
}

/* The instruction of the values written for source value v that takes v's name: the last one of v's own op
   among those its rule wrote (ids first .. mid-1), else x unless it is a collective (a collective keeps a name of its own: all-reduce.3) */
GS__FN void gs__sp_name_step(gs__sp *sp, const gs_value *v, gs_value *x, int first, int mid) {
    gs_graph *g = sp->G->g;
    gs_value *named = NULL;
    int j;
    if (gs_graph_find(g, v->name)) return;
    for (j = mid - 1; j >= first && !named; j--)
        if (g->values[j]->op == v->op && g->values[j]->auto_name) named = g->values[j];
    if (!named && x->graph == g && x->auto_name && !gs__cm_is_collective(x->op)) named = x;
    if (named && named->op != GS_OP_PARAMETER) gs_value_set_name(named, v->name);
}

/* --explain: the values written from id `first` on belong to source value i's group */
GS__FN void gs__sp_group_step(gs__sp *sp, int i, int first) {
    int j, n = (int)stbds_arrlen(sp->G->g->values);
    for (j = (int)stbds_arrlen(sp->group); j < n; j++) stbds_arrput(sp->group, j >= first ? i : -1);
}

/* {replicated} on an array computed from a partly manual value means each manual group's array on each of its
   devices (the groups' values differ, so nothing else can be meant; XLA reads it so too): that sharding, at
   v's rank with the operand's manual subgroup, is what v is given; else t */
GS__FN const gs_sharding *gs__sp_rep_in_groups(gs__sp *sp, const gs_value *v, const gs_sharding *t) {
    int k, d, dest[GS_MAX_RANK];
    if (!t || !gs__sp_is_rep(t) || v->shape.dtype == GS_TUPLE ||
        v->op == GS_OP_TO_FULL || v->op == GS_OP_TO_MANUAL)
        return t;
    for (k = 0; k < v->n_operands; k++) {
        const gs_sharding *s = sp->G->vals[v->operands[k]->id].sh;
        if (!s || s->kind != GS_SHARDING_TILED || gs_sharding_manual_group(s) < 2) continue;
        for (d = 0; d < s->rank; d++) dest[d] = GS__DEST_REP;
        s = gs__sh_map(sp->ctx, s, v->shape.rank, dest);
        return s ? s : t;
    }
    return t;
}

/* out[S]{t} -> the sharding to hold v in instead of t, or NULL: the one v's only user u (u is not the root and
   reads v nowhere else) wants of it, when reaching it from t is a slice (no data moves) and v is a dot, reduce or
   convolution, whose partial sums then reduce-scatter into it (gs__sp_combine) instead of an all-reduce and the
   user's dynamic-slice. Users whose wish is known: elementwise ops of v's dims, transpose, and a reshape whose
   split maps back whole. */
GS__FN const gs_sharding *gs__sp_user_hint(gs__sp *sp, const gs_value *v, const gs_value *u, const gs_sharding *t) {
    const gs_sharding *tu, *h = NULL;
    int d, dest[GS_MAX_RANK];
    double secs;
    if (sp->reference || !u || v->shape.dtype == GS_TUPLE || u->shape.dtype == GS_TUPLE) return NULL;
    if (v->op != GS_OP_DOT && v->op != GS_OP_REDUCE && v->op != GS_OP_CONVOLUTION && v->op != GS_OP_RAGGED_DOT) return NULL;
    tu = gs__sp_sh(sp, u);
    if (!tu || tu->kind != GS_SHARDING_TILED || gs_sharding_manual_group(tu) > 1) return NULL;
    if (!t || (t->kind != GS_SHARDING_TILED && t->kind != GS_SHARDING_REPLICATED) || gs_sharding_manual_group(t) > 1 ||
        gs__sh_has_unreduced(t) || gs__sh_has_unreduced(tu))
        return NULL;
    if (gs__sp_is_elementwise(u->op)) {
        if (u->shape.rank != v->shape.rank) return NULL;
        for (d = 0; d < v->shape.rank; d++)
            if (u->shape.dims[d] != v->shape.dims[d]) return NULL;
        h = tu;
    } else if (u->op == GS_OP_TRANSPOSE) {
        for (d = 0; d < u->shape.rank; d++) dest[d] = (int)u->dims[d];
        h = gs__sh_map(sp->ctx, tu, v->shape.rank, dest);
    } else if (u->op == GS_OP_RESHAPE) {
        const gs_sharding *back;
        h = gs__sh_reshape(sp->ctx, tu, &u->shape, &v->shape);
        back = h ? gs__sh_reshape(sp->ctx, h, &v->shape, &u->shape) : NULL;
        if (!back || !gs_sharding_equal(back, tu)) return NULL;
    }
    if (!h || gs__sp_is_rep(h) || gs_sharding_equal(h, t) || gs__sp_est(sp, t, h, &v->shape, &secs) > 0) return NULL;
    return h;
}

/* the only user of each value of src (NULL: none, or more than one, or the root) */
GS__FN const gs_value **gs__sp_only_users(gs__sp *sp, const gs_graph *src) {
    int n = (int)stbds_arrlen(src->values), i, k;
    const gs_value **only = (const gs_value **)gs__malloc(sp->ctx, sizeof(gs_value *) * (size_t)(n ? n : 1));
    unsigned char *many = (unsigned char *)gs__malloc(sp->ctx, (size_t)(n ? n : 1));
    if (!only || !many) {
        gs__free(sp->ctx, only);
        gs__free(sp->ctx, many);
        return NULL;
    }
    memset(only, 0, sizeof(gs_value *) * (size_t)(n ? n : 1));
    memset(many, 0, (size_t)(n ? n : 1));
    if (src->root && src->root->id < n) many[src->root->id] = 1;
    for (i = 0; i < n; i++) {
        const gs_value *u = src->values[i];
        for (k = 0; k < u->n_operands; k++) {
            int x = u->operands[k]->id;
            if (x < 0 || x >= n || only[x] == u) continue;
            if (only[x]) many[x] = 1;
            only[x] = u;
        }
    }
    for (i = 0; i < n; i++)
        if (many[i]) only[i] = NULL;
    gs__free(sp->ctx, many);
    return only;
}

/* Writes the per-device form of src (its parameter 0 sharded by param_sh and its root resharded to root_sh
   when they are given, else the shardings propagation gave them). The entry's state stays in sp->G. */
GS__FN gs_graph *gs__sp_run(gs__sp *sp, gs__sp_g *G, gs_graph *src, const gs_sharding *param_sh,
                            const gs_sharding *root_sh) {
    int i, n = (int)stbds_arrlen(src->values);
    gs_value *root;
    const gs_value **only;
    const char **explain = sp->explain;
    sp->explain = NULL;   /* sub-graphs partitioned on the way keep no explanations */
    sp->G = G;
    G->src = src;
    G->g = gs_graph_new(sp->ctx, src->name);
    G->vals = (gs__sp_val *)gs__malloc(sp->ctx, sizeof(gs__sp_val) * (size_t)(n ? n : 1));
    /* zeroed before any return: gs__sp_g_free frees each entry's list */
    if (G->vals) memset(G->vals, 0, sizeof(gs__sp_val) * (size_t)(n ? n : 1));
    if (!G->g || !G->vals) return NULL;
    if (explain) sp->why_g = G->g;
    only = gs__sp_only_users(sp, src);
    if (!only) return NULL;
    for (i = 0; i < n; i++) {
        const gs_value *v = src->values[i];
        const gs_sharding *t = gs__sp_sh(sp, v), *osh = t, *hint;
        gs_value *x;
        int first = (int)stbds_arrlen(G->g->values), mid = first;
        sp->at = v;
        sp->ex.len = 0;
        if (v->op == GS_OP_PARAMETER) {
            if (param_sh) t = param_sh;
            x = gs__sp_param(sp, v, t);
            osh = t;
        } else {
            t = osh = gs__sp_rep_in_groups(sp, v, gs__sp_all_reduce_held(sp, v, t));
            if ((hint = gs__sp_user_hint(sp, v, only[i], t)) != NULL) {
                gs__sp_note(sp, "held as %s, the sharding its only user %s wants of it", gs_sharding_to_text(sp->ctx, hint),
                            only[i]->name);
                t = osh = hint;
            }
            x = v->shape.dtype != GS_TUPLE && (gs__sh_has_unreduced(t) || gs__sp_linear_unreduced(sp, v))
                    ? gs__sp_unreduced_op(sp, v, t, &osh)
                    : gs__sp_op(sp, v, t, &osh);
            mid = (int)stbds_arrlen(G->g->values);
            x = gs__sp_reshard_val(sp, x, osh, t, v);
            if (x && explain && osh)
                gs__sp_why(sp, mid, "reshards %s from %s, the sharding its rule gives, to %s, the one it has (annotated or "
                           "propagated); annotating %s with sharding=%s would remove it", v->name,
                           gs_sharding_to_text(sp->ctx, osh), gs_sharding_to_text(sp->ctx, t), v->name,
                           gs_sharding_to_text(sp->ctx, osh));
            osh = t;
        }
        if (!x || sp->ctx->err) {
            if (!sp->ctx->err) gs__err(sp->ctx, GS_ERR_UNSUPPORTED, "could not partition");
            gs__err_prefix(sp->ctx, "gs_partition: %s (%s): ", v->name, gs_op_name(v->op));
            gs__free(sp->ctx, (void *)only);
            return NULL;
        }
        if (explain) {
            const char *note = sp->ex.len ? sp->ex.buf : "no note";
            size_t nl = strcspn(note, "\n");   /* the note's first line */
            gs__sp_why(sp, first, "made by %s's rule (%s: %.*s); shardings of %s and its operands that need no "
                       "device's data on another along the dims it names would remove it", v->name, gs_op_name(v->op),
                       (int)(nl < 300 ? nl : 300), note, v->name);
        }
        gs__sp_name_step(sp, v, x, first, mid);
        if (explain) gs__sp_group_step(sp, i, first);
        G->vals[i].v = x;
        G->vals[i].sh = osh;
        if (explain && sp->ex.len) explain[i] = gs__arena_strdup(sp->ctx, sp->ex.buf);
        sp->G = G;
    }
    gs__free(sp->ctx, (void *)only);
    root = src->root ? gs__sp_get(sp, src->root, root_sh ? root_sh : G->vals[src->root->id].sh) : NULL;
    if (!root || gs_graph_set_root(G->g, root) != GS_OK) {
        if (!sp->ctx->err) gs__err(sp->ctx, GS_ERR_INVALID_ARG, "gs_partition: graph %s has no root", src->name);
        return NULL;
    }
    return G->g;
}

GS__FN gs_graph *gs__sp_graph(gs__sp *sp, gs_graph *src, const gs_sharding *param_sh, const gs_sharding *root_sh) {
    gs__sp_g G;
    gs_graph *r;
    memset(&G, 0, sizeof G);
    r = gs__sp_run(sp, &G, src, param_sh, root_sh);
    gs__sp_g_free(sp, &G);
    return r;
}
