/* gs_spmd_core.c - the partitioner's core: notes and warnings, tile views of shardings, partition-id tables,
   offsets and masks, collectives over a view's axes, the reshard planner, and the helpers every rule shares
   (clone an op at local size, combine partial results, the replicate path). */
#include "gs_spmd_internal.h"

GS__FN void gs__sp_note(gs__sp *sp, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
GS__FN void gs__sp_note(gs__sp *sp, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (sp->ex.len) gs__sb_puts(&sp->ex, "; ");
    gs__sb_puts(&sp->ex, buf);
}

GS__FN double gs__sp_coll_secs(const gs__sp *sp, gs_collective_kind kind, double V, int64_t n) {
    gs_cost_axis ax;
    gs_cost_comm c;
    if (n <= 1 || V <= 0) return 0;
    ax.size = n;
    ax.ring = GS_RING_BIDIRECTIONAL;
    gs__cm_collective(sp->chip, kind, V, 1, &ax, &c);
    return c.seconds;
}

/* collective x's bytes sent per device and estimated seconds on sp->chip (a ring of its group's devices) */
GS__FN void gs__sp_coll_cost(const gs__sp *sp, const gs_value *x, double *bytes, double *secs) {
    int64_t n = x->coll.groups.group_size > 0 ? x->coll.groups.group_size : sp->D;
    double in = x->n_operands ? (double)gs_shape_bytes(&x->operands[0]->shape) : 0, V = in;
    gs_collective_kind k = GS_COLLECTIVE_PERMUTE;
    gs_cost_axis ax;
    gs_cost_comm c;
    if (x->op == GS_OP_ALL_GATHER) { k = GS_COLLECTIVE_ALL_GATHER; V = (double)gs_shape_bytes(&x->shape); }
    else if (x->op == GS_OP_REDUCE_SCATTER) k = GS_COLLECTIVE_REDUCE_SCATTER;
    else if (x->op == GS_OP_ALL_REDUCE) k = GS_COLLECTIVE_ALL_REDUCE;
    else if (x->op == GS_OP_ALL_TO_ALL) { k = GS_COLLECTIVE_ALL_TO_ALL; V = in * (double)n; }
    else if (x->op == GS_OP_RAGGED_ALL_TO_ALL) { k = GS_COLLECTIVE_ALL_TO_ALL; V = (double)gs_shape_bytes(&x->shape) * (double)n; }
    else n = 2;
    *bytes = *secs = 0;
    if (n <= 1 || V <= 0) return;
    ax.size = n;
    ax.ring = GS_RING_BIDIRECTIONAL;
    gs__cm_collective(sp->chip, k, V, 1, &ax, &c);
    *bytes = c.bytes_sent;
    *secs = c.seconds;
}

/* --explain: the collectives written into the entry program since value id `from` and not yet explained are
   there for the reason fmt says (with their bytes and time appended) */
GS__FN void gs__sp_why(gs__sp *sp, int from, const char *fmt, ...) {
    char buf[768], by[24], tm[24];
    gs_graph *g = sp->G ? sp->G->g : NULL;
    int i, n;
    va_list ap;
    if (!g || g != sp->why_g) return;
    n = (int)stbds_arrlen(g->values);
    while ((int)stbds_arrlen(sp->tagged) < n) stbds_arrput(sp->tagged, 0);
    for (i = from < 0 ? 0 : from; i < n; i++) {
        gs__sp_why_t w;
        double b, t;
        int len;
        if (!gs__cm_is_collective(g->values[i]->op) || sp->tagged[i]) continue;
        sp->tagged[i] = 1;
        va_start(ap, fmt);
        len = vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        if (len < 0) return;
        gs__sp_coll_cost(sp, g->values[i], &b, &t);
        gs__cm_fmt_si(by, sizeof by, b, "B");
        gs__cm_fmt_time(tm, sizeof tm, t);
        w.g = g;
        w.id = i;
        w.text = gs__arena_printf(sp->ctx, "%s; sends %s per device, %s on %s", buf, by, tm, sp->chip->name);
        if (!w.text) return;
        stbds_arrput(sp->why, w);
    }
}

/* a partition warning: kept on the SPMD program (gs_partition_warning) and logged */
GS__FN void gs__sp_warnf(gs__sp *sp, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
GS__FN void gs__sp_warnf(gs__sp *sp, const char *fmt, ...) {
    char *msg;
    int n;
    va_list ap;
    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);   /* exact size: device lists can be long */
    va_end(ap);
    if (n < 0 || !(msg = (char *)gs__arena_alloc(sp->ctx, (size_t)n + 1))) return;
    va_start(ap, fmt);
    vsnprintf(msg, (size_t)n + 1, fmt, ap);
    va_end(ap);
    stbds_arrput(sp->warn, msg);
    gs__log(sp->ctx, GS_LOG_WARN, GS_OK, "%s", msg);
}

GS__FN const gs_sharding *gs__sp_rep(gs__sp *sp) { return sp->rep; }

/* shardings the partitioner treats as "every device holds the whole value" */
GS__FN bool gs__sp_is_rep(const gs_sharding *s) {
    return !s || s->kind == GS_SHARDING_REPLICATED || s->kind == GS_SHARDING_MAXIMAL ||
           (s->kind == GS_SHARDING_TILED && gs__sh_tiles(s) == 1 && gs_sharding_manual_group(s) == 1 &&
            gs_sharding_unreduced_group(s) == 1);
}

GS__FN int64_t gs__sp_k(const gs_sharding *s, int d) {
    return s && s->kind == GS_SHARDING_TILED && d < s->rank ? s->ta.dims[d] : 1;
}

GS__FN gs_shape gs__sp_local(const gs_sharding *s, gs_shape full) {
    int d;
    if (s && s->kind == GS_SHARDING_TILED)
        for (d = 0; d < full.rank && d < s->rank; d++) full.dims[d] = gs__shard_size(full.dims[d], s->ta.dims[d]);
    return full;
}

/* ---- small builders in the graph being written ---- */
GS__FN gs_value *gs__sp_s32(gs__sp *sp, int64_t x) { return gs_scalar(sp->G->g, GS_S32, (double)x); }

GS__FN gs_value *gs__sp_pid(gs__sp *sp) {
    if (!sp->G->pid) sp->G->pid = gs_convert(sp->G->g, gs_partition_id(sp->G->g), GS_S32);
    return sp->G->pid;
}

/* vals[partition-id] as an s32 scalar: a constant table indexed by partition-id (the instruction count does not
   depend on D). Tables are cached per graph under (k1, k2, a, b, c). */
GS__FN gs_value *gs__sp_tab_find(gs__sp *sp, const void *k1, const void *k2, int64_t a, int64_t b, int64_t c) {
    int i;
    for (i = 0; i < (int)stbds_arrlen(sp->G->tabs); i++) {
        gs__sp_tab *t = &sp->G->tabs[i];
        if (t->k1 == k1 && t->k2 == k2 && t->a == a && t->b == b && t->c == c) return t->v;
    }
    return NULL;
}

GS__FN gs_value *gs__sp_tab_make(gs__sp *sp, const void *k1, const void *k2, int64_t a, int64_t b, int64_t c,
                                 const int32_t *vals) {
    gs_graph *g = sp->G->g;
    int64_t D = sp->D, one = 1, i;
    gs_value *t, *ds, *pid = gs__sp_pid(sp), *v;
    gs__sp_tab e;
    bool same = true;
    for (i = 1; i < D; i++)
        if (vals[i] != vals[0]) same = false;
    if (same) {
        v = gs__sp_s32(sp, vals[0]);
    } else {
        t = gs_constant(g, gs_shape_make(GS_S32, 1, &D), vals);
        ds = gs_dynamic_slice(g, t, &pid, &one);
        v = gs_reshape(g, ds, 0, NULL);
    }
    if (!v) return NULL;
    if (k1) {
        e.k1 = k1; e.k2 = k2; e.a = a; e.b = b; e.c = c; e.v = v;
        stbds_arrput(sp->G->tabs, e);
    }
    return v;
}

/* The global offset of the device's tile along dim d of sharding s, for shards of c elements. */
GS__FN gs_value *gs__sp_offset(gs__sp *sp, const gs_sharding *s, int d, int64_t c) {
    gs_value *v;
    int32_t *vals;
    int64_t p, idx[GS_MAX_TILE_RANK];
    if (gs__sp_k(s, d) == 1) return gs__sp_s32(sp, 0);
    if ((v = gs__sp_tab_find(sp, s, NULL, d, c, 1))) return v;
    vals = (int32_t *)gs__malloc(sp->ctx, sizeof(int32_t) * (size_t)sp->D);
    if (!vals) return NULL;
    for (p = 0; p < sp->D; p++) {
        if (!gs_sharding_device_index(s, p, idx)) idx[d] = 0;
        vals[p] = (int32_t)(idx[d] * c);
    }
    v = gs__sp_tab_make(sp, s, NULL, d, c, 1, vals);
    gs__free(sp->ctx, vals);
    return v;
}

/* The device's tile coordinate along dim d of s, as an s32 scalar. */
GS__FN gs_value *gs__sp_coord(gs__sp *sp, const gs_sharding *s, int d) { return gs__sp_offset(sp, s, d, 1); }

GS__FN gs_value *gs__sp_zero(gs__sp *sp, gs_dtype t) { return gs_scalar(sp->G->g, t, 0); }

GS__FN gs_value *gs__sp_splat(gs__sp *sp, gs_dtype t, double x, gs_shape shape) {
    shape.dtype = t;
    return gs_constant_splat(sp->G->g, shape, x);
}

/* pads dim d of x on the right up to n (garbage: zero) */
GS__FN gs_value *gs__sp_pad_dim(gs__sp *sp, gs_value *x, int d, int64_t n) {
    int64_t lo[GS_MAX_RANK] = {0}, hi[GS_MAX_RANK] = {0};
    if (!x || x->shape.dims[d] >= n) return x;
    hi[d] = n - x->shape.dims[d];
    return gs_pad(sp->G->g, x, gs__sp_zero(sp, x->shape.dtype), lo, hi, NULL);
}

/* slices x to shape n (a prefix of every dim) */
GS__FN gs_value *gs__sp_prefix(gs__sp *sp, gs_value *x, const gs_shape *n) {
    int64_t st[GS_MAX_RANK] = {0};
    int d;
    bool same = true;
    if (!x) return NULL;
    for (d = 0; d < x->shape.rank; d++)
        if (x->shape.dims[d] != n->dims[d]) same = false;
    if (same) return x;
    return gs_slice(sp->G->g, x, st, n->dims, NULL);
}

/* select(in bounds, x, fill) over the dims in mask whose split leaves padding: a local element at index i of dim d
   is real when offset(d) + i < S[d]. x is in sharding s of full shape `full`. */
GS__FN gs_value *gs__sp_mask(gs__sp *sp, gs_value *x, const gs_sharding *s, const gs_shape *full, uint32_t mask,
                             double fill) {
    return gs__sp_mask_with(sp, x, s, full, mask, NULL, fill);
}

/* gs__sp_mask with the fill a scalar value (fillv; NULL: the constant fill) */
GS__FN gs_value *gs__sp_mask_with(gs__sp *sp, gs_value *x, const gs_sharding *s, const gs_shape *full, uint32_t mask,
                                  gs_value *fillv, double fill) {
    gs_graph *g = sp->G->g;
    gs_value *ok = NULL;
    int d;
    if (!x) return NULL;
    for (d = 0; d < full->rank; d++) {
        int64_t k = gs__sp_k(s, d), c = x->shape.dims[d], dd = d;
        gs_shape s1 = gs_shape_make(GS_S32, 1, &c);
        gs_value *m;
        if (!((mask >> d) & 1u) || k == 1 || c * k == full->dims[d]) continue;
        if (c * k < full->dims[d]) continue; /* not a shard of this dim */
        /* on the dim alone (4 bytes per position, not per element), then broadcast */
        m = gs_add(g, gs_iota(g, s1, 0), gs_broadcast(g, gs__sp_offset(sp, s, d, c), s1, NULL));
        m = gs_compare(g, m, gs_constant_splat(g, s1, (double)full->dims[d]), GS_CMP_LT);
        m = gs_broadcast_in_dim(g, m, x->shape.rank, x->shape.dims, &dd);
        ok = ok ? gs_binary(g, GS_OP_AND, ok, m) : m;
    }
    if (!ok) return x;
    return gs_select(g, ok, x, fillv ? gs_broadcast(g, fillv, x->shape, NULL) : gs__sp_splat(sp, x->shape.dtype, fill, x->shape));
}

/* the identity of a reduction on dtype t */
GS__FN double gs__sp_identity(gs_reduce_kind k, gs_dtype t) {
    int b = gs__dt(t)->bits;
    bool inf = gs__is_float(t) && gs__dt(t)->fkind == GS__FK_IEEE;
    switch (k) {
    case GS_REDUCE_SUM: case GS_REDUCE_OR: return 0;
    case GS_REDUCE_PROD: return 1;
    case GS_REDUCE_AND: return gs__is_signed(t) ? -1 : gs__is_int(t) ? ldexp(1.0, b) - 1.0 : 1;   /* all bits set */
    case GS_REDUCE_MAX:   /* the lowest value of the type (types without inf: the lowest finite one) */
        if (gs__is_signed(t)) return -ldexp(1.0, b - 1);
        if (!gs__is_float(t)) return 0;
        return inf ? -INFINITY : t == GS_F8E8M0FNU ? gs__fp_decode(t, 0) : -gs__fp_max(t);
    case GS_REDUCE_MIN:   /* the highest value (saturating conversions make 2^63 the s64 maximum) */
        if (gs__is_signed(t)) return ldexp(1.0, b - 1) - 1.0;
        if (gs__is_int(t)) return ldexp(1.0, b) - 1.0;
        if (!gs__is_float(t)) return 1;
        return inf ? INFINITY : gs__fp_max(t);
    default: return 0;
    }
}

/* =========================================================================================================
   Tile arrays in a normal form: [k_0 .. k_{r-1}, R] (R the replication, possibly 1)
   ========================================================================================================= */
GS__FN bool gs__sp_view(gs__sp *sp, const gs_sharding *s, int rank, gs__ta *out) {
    int d;
    GS__ZERO(*out);
    /* partial values are laid out as their sum is (the reshard planner sums them first: gs__sp_reshard_unreduced) */
    if (gs__sh_has_unreduced(s) && !(s = gs__sh_reduced(sp->ctx, s))) return false;
    if (gs__sp_is_rep(s) && !(s && s->kind == GS_SHARDING_TILED)) {
        out->n = rank + 1;
        for (d = 0; d < rank; d++) out->dims[d] = 1;
        out->dims[rank] = sp->D;
        out->total = sp->D;
        out->ir = 1;
        out->idims[0] = sp->D;
        out->iperm[0] = 0;
        return true;
    }
    if (!s || s->kind != GS_SHARDING_TILED || s->rank != rank || gs_sharding_manual_group(s) > 1) return false;
    *out = s->ta;
    out->n = rank + 1;
    out->dims[rank] = gs_sharding_replication(s);
    return true;
}

GS__FN const gs_sharding *gs__sp_from_view(gs__sp *sp, int rank, const gs__ta *t) {
    gs__ta u = *t;
    gs_subgroup sub = GS_SUBGROUP_REPLICATED;
    if (u.dims[rank] == 1) {
        u.n = rank;
        if (rank == 0) return gs__sp_rep(sp);
        return gs__sh_from_ta(sp->ctx, rank, 0, NULL, &u);
    }
    return gs__sh_from_ta(sp->ctx, rank, 1, &sub, &u);
}

/* Refines axis `ax` of t into (dims[ax]/m, m); returns the new axis count (the m factor is axis ax+1). */
GS__FN void gs__sp_split_axis(gs__ta *t, int ax, int64_t m) {
    int i;
    for (i = t->n; i > ax + 1; i--) t->dims[i] = t->dims[i - 1];
    t->dims[ax] /= m;
    t->dims[ax + 1] = m;
    t->n++;
}

/* Moves axis `from` of t to position `to` (in the result's numbering), by a transpose of the tile array. */
GS__FN bool gs__sp_move_axis(gs__sp *sp, gs__ta *t, int from, int to) {
    int perm[GS_MAX_IOTA_RANK], i, k = 0;
    gs__ta r;
    if (from == to) return true;
    for (i = 0; i < t->n; i++) {
        if (k == to) perm[k++] = from;
        if (i != from) perm[k++] = i;
    }
    if (k == to) perm[k++] = from;
    if (gs__ta_transpose(sp->ctx, t, perm, &r) != GS_OK) return false;
    *t = r;
    return true;
}

/* Merges axes pos .. pos+n-1 of t into axis pos (a reshape of the tile array: free in both forms). */
GS__FN void gs__sp_merge_axes(gs__ta *t, int pos, int n) {
    int i;
    for (i = 1; i < n; i++) t->dims[pos] *= t->dims[pos + i];
    for (i = pos + 1; i + n - 1 < t->n; i++) t->dims[i] = t->dims[i + n - 1];
    t->n -= n - 1;
}

/* Replica groups: the devices that differ only along axis ax of t (ordered by their coordinate on it). */
GS__FN bool gs__sp_groups(gs__sp *sp, const gs__ta *t, int ax, gs_replica_groups *rg) {
    gs__ta u = *t;
    int i;
    GS__ZERO(*rg);
    if (!gs__sp_move_axis(sp, &u, ax, u.n - 1)) return false;
    rg->group_size = t->dims[ax];
    rg->n_groups = t->total / rg->group_size;
    if (u.list) {
        rg->ids = u.list;
    } else {
        rg->iota_rank = u.ir;
        for (i = 0; i < u.ir; i++) {
            rg->iota_dims[i] = u.idims[i];
            rg->iota_perm[i] = u.iperm[i];
        }
    }
    return true;
}

/* =========================================================================================================
   Collectives
   ========================================================================================================= */
GS__FN gs_value *gs__sp_all_reduce(gs__sp *sp, gs_value *x, gs_reduce_kind k, const gs_replica_groups *rg) {
    gs_collective_desc cd;
    GS__ZERO(cd);
    cd.groups = *rg;
    if (rg->group_size == 1) return x;
    return gs_all_reduce(sp->G->g, x, k, &cd);
}

/* all-gather along dim d over the groups of axis ax of t (the caller's view), member j's block at j * local */
GS__FN gs_value *gs__sp_all_gather(gs__sp *sp, gs_value *x, int d, const gs__ta *t, int ax) {
    gs_collective_desc cd;
    GS__ZERO(cd);
    if (!x || !gs__sp_groups(sp, t, ax, &cd.groups)) return NULL;
    if (!sp->desc.all_gather_as_all_reduce) return gs_all_gather(sp->G->g, x, d, &cd);
    {
        /* XLA's test mode: my block into zeros at my slot, then a sum over the group */
        gs_graph *g = sp->G->g;
        int64_t m = t->dims[ax], p, idx[GS_MAX_IOTA_RANK];
        gs_shape big = x->shape;
        gs_value *z, *st[GS_MAX_RANK], *slot, *xs = x;
        int32_t *vals;
        int i;
        big.dims[d] *= m;
        vals = (int32_t *)gs__malloc(sp->ctx, sizeof(int32_t) * (size_t)sp->D);
        if (!vals) return NULL;
        for (p = 0; p < sp->D; p++) {
            int64_t L = gs__ta_pos(t, p);
            gs__unravel(t->n, t->dims, L < 0 ? 0 : L, idx);
            vals[p] = (int32_t)(idx[ax] * x->shape.dims[d]);
        }
        slot = gs__sp_tab_make(sp, NULL, NULL, 0, 0, 0, vals);
        gs__free(sp->ctx, vals);
        if (x->shape.dtype == GS_PRED) xs = gs_convert(g, x, GS_S32);
        z = gs__sp_splat(sp, xs->shape.dtype, 0, big);
        for (i = 0; i < x->shape.rank; i++) st[i] = i == d ? slot : gs__sp_s32(sp, 0);
        z = gs_dynamic_update_slice(g, z, xs, st);
        z = gs_all_reduce(g, z, GS_REDUCE_SUM, &cd);
        return x->shape.dtype == GS_PRED ? gs_convert(g, z, GS_PRED) : z;
    }
}

/* =========================================================================================================
   The reshard planner
   ========================================================================================================= */
/* vals[p] = coord_b(d) * cb - coord_a(d) * ca: where device p's tile of b starts inside its tile of a */
GS__FN gs_value *gs__sp_rel_offset(gs__sp *sp, const gs_sharding *b, int64_t cb, const gs_sharding *a, int64_t ca,
                                   int d) {
    gs_value *v;
    int32_t *vals;
    int64_t p, ib[GS_MAX_TILE_RANK], ia[GS_MAX_TILE_RANK];
    if (gs__sp_k(a, d) == 1) return gs__sp_offset(sp, b, d, cb);
    if ((v = gs__sp_tab_find(sp, b, a, d, cb, ca))) return v;
    vals = (int32_t *)gs__malloc(sp->ctx, sizeof(int32_t) * (size_t)sp->D);
    if (!vals) return NULL;
    for (p = 0; p < sp->D; p++) {
        if (!gs_sharding_device_index(b, p, ib)) ib[d] = 0;
        if (!gs_sharding_device_index(a, p, ia)) ia[d] = 0;
        vals[p] = (int32_t)(ib[d] * cb - ia[d] * ca);
    }
    v = gs__sp_tab_make(sp, b, a, d, cb, ca, vals);
    gs__free(sp->ctx, vals);
    return v;
}

GS__FN void gs__sp_warn_remat(gs__sp *sp, const gs_sharding *s, const gs_sharding *t, const gs_shape *full,
                              const char *why) {
    const char *name = sp->at ? sp->at->name : "?";
    gs__sp_warnf(sp, "involuntary full rematerialization at %s: resharding %s -> %s (%s) replicates %llu bytes on every "
                 "device; giving %s the sharding %s (an annotation) would avoid it", name,
                 gs_sharding_to_text(sp->ctx, s), gs_sharding_to_text(sp->ctx, t), why,
                 (unsigned long long)gs_shape_bytes(full), name, gs_sharding_to_text(sp->ctx, s));
    gs__sp_note(sp, "full rematerialization (%s)", why);
}

/* all-gather the minor factor m of dim d: cur -> cur with dim d split k/m ways (m into the replication) */
GS__FN gs_value *gs__sp_gather_step(gs__sp *sp, gs_value *x, const gs_sharding **cur, int d, int64_t m,
                                    const gs_shape *full) {
    int rank = full->rank;
    gs__ta A;
    int64_t k;
    if (!x || !gs__sp_view(sp, *cur, rank, &A)) return NULL;
    k = A.dims[d];
    gs__sp_split_axis(&A, d, m);
    x = gs__sp_all_gather(sp, x, d, &A, d + 1);
    if (!x || !gs__sp_move_axis(sp, &A, d + 1, A.n - 1)) return NULL;
    gs__sp_merge_axes(&A, A.n - 2, 2);
    *cur = gs__sp_from_view(sp, rank, &A);
    {
        gs_shape want = x->shape;
        want.dims[d] = gs__shard_size(full->dims[d], k / m);
        x = gs__sp_prefix(sp, x, &want);
    }
    return *cur ? x : NULL;
}

GS__FN bool gs__sp_aligned(int64_t S, int64_t kc, int64_t kf) {
    /* tiles of the coarse split (kc) are made of kf/kc consecutive fine tiles */
    return kc == 1 || gs__shard_size(S, kc) == (kf / kc) * gs__shard_size(S, kf);
}

/* Step 1 of the reshard planner: all-to-all. While a dim has more tiles than the target's B wants and another
   fewer, a factor m of the first's tiles moves to the second: x[.., Sd/ks, .., Se/ks2, ..]{*cur} ->
   x[.., Sd/(ks/m), .., Se/(ks2*m), ..]. */
GS__FN gs_value *gs__sp_reshard_all_to_all(gs__sp *sp, gs_value *x, const gs_sharding **cur, const gs__ta *B,
                                           const gs_shape *full) {
    gs_graph *g = sp->G->g;
    int rank = full->rank, d, e;
    gs__ta A;
    for (;;) {
        int fs = -1, ft = -1;
        int64_t m = 1;
        if (!gs__sp_view(sp, *cur, rank, &A)) return NULL;
        for (d = 0; d < rank && fs < 0; d++) {
            int64_t ks = A.dims[d], kt = B->dims[d];
            if (ks <= kt || ks % kt) continue;
            for (e = 0; e < rank; e++) {
                int64_t ks2 = A.dims[e], kt2 = B->dims[e], mm;
                if (e == d || ks2 >= kt2 || kt2 % ks2) continue;
                mm = gs__gcd(ks / kt, kt2 / ks2);
                if (mm < 2 || !gs__sp_aligned(full->dims[d], ks / mm, ks)) continue;
                if (ks2 > 1 && !gs__sp_aligned(full->dims[e], ks2, ks2 * mm)) continue;
                fs = d;
                ft = e;
                m = mm;
                break;
            }
        }
        if (fs < 0) break;
        {
            gs_collective_desc cd;
            int64_t ks = A.dims[fs], ks2 = A.dims[ft], ct_new = gs__shard_size(full->dims[ft], ks2 * m);
            int tref, to;
            gs_shape want;
            GS__ZERO(cd);
            if (ks2 == 1) x = gs__sp_pad_dim(sp, x, ft, m * ct_new);
            gs__sp_split_axis(&A, fs, m);
            if (!gs__sp_groups(sp, &A, fs + 1, &cd.groups)) return NULL;
            x = gs_all_to_all(g, x, ft, fs, &cd);
            if (!x) return NULL;
            want = x->shape;
            want.dims[fs] = gs__shard_size(full->dims[fs], ks / m);
            x = gs__sp_prefix(sp, x, &want);
            tref = ft < fs + 1 ? ft : ft + 1;
            to = tref < fs + 1 ? tref + 1 : tref;
            if (!gs__sp_move_axis(sp, &A, fs + 1, to)) return NULL;
            gs__sp_merge_axes(&A, to - 1, 2);
            *cur = gs__sp_from_view(sp, rank, &A);
            if (!*cur) return NULL;
        }
    }
    return x;
}

/* Step 2: all-gather, inside replication groups, what is split more than B wants (or split out of line with it):
   x[.., Sd/ks, ..]{*cur} -> x[.., Sd/(ks/m), ..] */
GS__FN gs_value *gs__sp_reshard_gather(gs__sp *sp, gs_value *x, const gs_sharding **cur, const gs__ta *B,
                                       const gs_shape *full) {
    int rank = full->rank, d;
    gs__ta A;
    for (d = 0; d < rank; d++) {
        int64_t ks, kt;
        if (!gs__sp_view(sp, *cur, rank, &A)) return NULL;
        ks = A.dims[d];
        kt = B->dims[d];
        if (ks == 1) continue;
        if (ks > kt) {
            int64_t m = (ks % kt == 0 && gs__sp_aligned(full->dims[d], kt, ks)) ? ks / kt : ks;
            x = gs__sp_gather_step(sp, x, cur, d, m, full);
        } else if (ks < kt && (kt % ks || !gs__sp_aligned(full->dims[d], ks, kt))) {
            x = gs__sp_gather_step(sp, x, cur, d, ks, full);   /* misaligned: gather, then slice below */
        }
        if (!x) return NULL;
    }
    return x;
}

/* Step 3: dynamic-slice the finer tiles B wants out of the data each device holds (no communication):
   x[.., Sd/ks, ..]{*cur} -> x[.., Sd/(ks*f), ..]. Returns NULL when a view fails, else x (NULL when a builder
   failed). */
GS__FN gs_value *gs__sp_reshard_slice(gs__sp *sp, gs_value *x, const gs_sharding **cur, const gs__ta *B,
                                      const gs_shape *full) {
    int rank = full->rank, d;
    gs__ta A, C;
    bool any = false;
    const gs_sharding *nxt;
    if (!gs__sp_view(sp, *cur, rank, &A)) return NULL;
    C = A;
    if (gs__sp_is_rep(*cur)) {
        /* every device holds the whole value: each slices its own tile of B, on the devices B puts it */
        C = *B;
        for (d = 0; d < rank; d++) any = any || B->dims[d] > 1;
    } else {
        for (d = 0; d < rank; d++) {
            int64_t f = B->dims[d] / C.dims[d];
            if (f <= 1) continue;
            any = true;
            gs__sp_split_axis(&C, C.n - 1, C.dims[C.n - 1] / f);   /* R -> (f, R/f) */
            if (!gs__sp_move_axis(sp, &C, C.n - 2, d + 1)) return NULL;
            gs__sp_merge_axes(&C, d, 2);
        }
    }
    if (any) {
        gs_value *st[GS_MAX_RANK];
        gs_shape loc;
        nxt = gs__sp_from_view(sp, rank, &C);
        if (!nxt) return NULL;
        loc = gs__sp_local(nxt, *full);
        for (d = 0; d < rank; d++) {
            int64_t f = C.dims[d] / A.dims[d];
            if (f > 1) {
                if (A.dims[d] == 1) x = gs__sp_pad_dim(sp, x, d, f * loc.dims[d]);
                st[d] = gs__sp_rel_offset(sp, nxt, loc.dims[d], *cur, x ? x->shape.dims[d] : 0, d);
            } else {
                st[d] = gs__sp_s32(sp, 0);
            }
        }
        x = gs_dynamic_slice(sp->G->g, x, st, loc.dims);
        *cur = nxt;
    }
    return x;
}

/* Step 4: collective-permute when the tiles are right but sit on the wrong devices: x{cur} -> x{t} (B its view) */
GS__FN gs_value *gs__sp_reshard_permute(gs__sp *sp, gs_value *x, const gs_sharding *cur, const gs_sharding *s,
                                        const gs_sharding *t, const gs__ta *B, int rank) {
    int64_t L, *pairs;
    int d;
    gs__ta A;
    if (!gs__sp_view(sp, cur, rank, &A)) return NULL;
    for (d = 0; d <= rank; d++)
        if (A.dims[d] != B->dims[d]) {
            gs__err(sp->ctx, GS_ERR_SHARDING, "%s: internal error: reshard %s -> %s ended at %s",
                    sp->at ? sp->at->name : "?", gs_sharding_to_text(sp->ctx, s),
                    gs_sharding_to_text(sp->ctx, t), gs_sharding_to_text(sp->ctx, cur));
            return NULL;
        }
    pairs = (int64_t *)gs__arena_alloc(sp->ctx, sizeof(int64_t) * 2 * (size_t)sp->D);
    if (!pairs) return NULL;
    for (L = 0; L < sp->D; L++) {
        pairs[2 * L] = gs__ta_at(&A, L);
        pairs[2 * L + 1] = gs__ta_at(B, L);
    }
    return gs_collective_permute(sp->G->g, x, sp->D, pairs, 0);
}

/* A reshard inside a partly manual region, x{s} -> x{t}: s replicated (a constant or a broadcast in the
   region) or in the same manual groups as t (every device's manual coordinate the same in both). */
GS__FN bool gs__sp_manual_alike(gs__sp *sp, const gs_sharding *s, const gs_sharding *t) {
    int64_t d, is[GS_MAX_TILE_RANK], it[GS_MAX_TILE_RANK];
    if (t->kind != GS_SHARDING_TILED || gs_sharding_manual_group(t) < 2) return false;
    if (gs__sp_is_rep(s)) return true;
    if (s->kind != GS_SHARDING_TILED || gs_sharding_manual_group(s) != gs_sharding_manual_group(t)) return false;
    for (d = 0; d < sp->D; d++)
        if (!gs_sharding_device_index(s, d, is) || !gs_sharding_device_index(t, d, it) || is[s->rank] != it[t->rank])
            return false;
    return true;
}

/* s (a partly manual sharding of rank r) read as a sharding of rank r + 1 whose new leading dim is the manual
   subgroup: [M, dims..] split M ways along dim 0 as the manual groups are, the data dims as in s */
GS__FN const gs_sharding *gs__sp_manual_as_dim(gs__sp *sp, const gs_sharding *s) {
    static const gs_subgroup rep[1] = {GS_SUBGROUP_REPLICATED};
    int perm[GS_MAX_IOTA_RANK], k;
    gs__ta ta;
    perm[0] = s->rank;   /* sub[0] is MANUAL (manual before replicated) */
    for (k = 0; k < s->rank; k++) perm[k + 1] = k;
    for (k = s->rank + 1; k < s->ta.n; k++) perm[k] = k;
    if (gs__ta_transpose(sp->ctx, &s->ta, perm, &ta) != GS_OK) return NULL;
    return gs__sh_from_ta(sp->ctx, s->rank + 1, s->n_sub - 1, rep, &ta);
}

/* x{s} -> x{t} within the manual groups of t (gs__sp_manual_alike): each group holds its own copy of the
   value, so the value is read as one of shape [M, full..] whose dim 0 is split by the groups, and the planner
   reshards that. Dim 0 is split the same way in both, so no collective moves data from one group to another
   (reading the manual subgroup as replication instead would let the planner take a tile from any group). */
GS__FN gs_value *gs__sp_reshard_in_groups(gs__sp *sp, gs_value *x, const gs_sharding *s, const gs_sharding *t,
                                          gs_shape full) {
    const gs_sharding *s2, *t2 = gs__sp_manual_as_dim(sp, t);
    gs_shape f2, xs, ls;
    int k;
    if (!t2 || full.rank + 1 > GS_MAX_RANK) {
        if (t2) gs__err(sp->ctx, GS_ERR_UNSUPPORTED, "%s: a partly manual value of rank %d is resharded only up to rank %d",
                        sp->at ? sp->at->name : "?", full.rank, GS_MAX_RANK - 1);
        return NULL;
    }
    s2 = gs__sp_is_rep(s) ? gs__sh_replicate_dims(sp->ctx, t2, ((1u << full.rank) - 1u) << 1) : gs__sp_manual_as_dim(sp, s);
    if (!s2) return NULL;
    f2 = full;
    xs = x->shape;
    f2.rank = xs.rank = full.rank + 1;
    f2.dims[0] = gs_sharding_manual_group(t);
    xs.dims[0] = 1;
    for (k = 0; k < full.rank; k++) {
        f2.dims[k + 1] = full.dims[k];
        xs.dims[k + 1] = x->shape.dims[k];
    }
    x = gs__sp_reshard_raw(sp, gs_reshape(sp->G->g, x, xs.rank, xs.dims), s2, t2, f2);
    ls = gs__sp_local(t, full);
    return x ? gs_reshape(sp->G->g, x, ls.rank, ls.dims) : NULL;
}

/* The devices of s whose partial values are summed, as replica groups: all of them for {unreduced}, else the
   devices along the unreduced subgroup dim (each group holds one tile's summands). */
GS__FN bool gs__sp_unreduced_groups(gs__sp *sp, const gs_sharding *s, gs_replica_groups *rg) {
    int i;
    GS__ZERO(*rg);
    if (s->kind == GS_SHARDING_UNREDUCED) {
        rg->n_groups = 1;
        rg->group_size = sp->D;
        rg->iota_rank = 1;
        rg->iota_dims[0] = sp->D;
        return true;
    }
    for (i = 0; i < s->n_sub; i++)
        if (s->sub[i] == GS_SUBGROUP_UNREDUCED) return gs__sp_groups(sp, &s->ta, s->rank + i, rg);
    return false;
}

GS__FN gs_value *gs__sp_combine_raw(gs__sp *sp, gs_value *x, const gs_sharding *I, int ri, const int *dest,
                                    gs_reduce_kind kind, const gs_shape *full_out, const gs_sharding *t,
                                    const gs_sharding **out_sh);

/* x[local]{s} -> x[local]{t} when s or t has an unreduced part (each device of an unreduced group holds a partial
   value; the value is their sum): s's partials summed over its unreduced groups by an all-reduce, then the planner
   from s read as replicated along them; a target with an unreduced part gets the value on the first device of each
   of its unreduced groups and zero on the others (x + 0 + .. + 0 is x exactly, in every type). */
GS__FN gs_value *gs__sp_reshard_unreduced(gs__sp *sp, gs_value *x, const gs_sharding *s, const gs_sharding *t,
                                          gs_shape full) {
    gs_graph *g = sp->G->g;
    const gs_sharding *r;
    int32_t *vals;
    int64_t d;
    gs_value *first;
    gs_shape ps;
    if (gs_sharding_manual_group(s) > 1 || gs_sharding_manual_group(t) > 1 || s->kind == GS_SHARDING_MANUAL ||
        t->kind == GS_SHARDING_MANUAL) {
        gs__err(sp->ctx, GS_ERR_UNSUPPORTED, "%s: an unreduced value in a manual region (%s -> %s) is not partitioned",
                sp->at ? sp->at->name : "?", gs_sharding_to_text(sp->ctx, s), gs_sharding_to_text(sp->ctx, t));
        return NULL;
    }
    if (gs__sh_has_unreduced(s)) {
        /* read as a partial result over an iteration space of one more dim, split over the unreduced devices and
           summed away: the combine then reduce-scatters when t splits a dim over exactly them, else all-reduces */
        static const gs_subgroup rep[1] = {GS_SUBGROUP_REPLICATED};
        const gs_sharding *keep = sp->unreduced_t, *I, *o = NULL;
        int dest[GS_MAX_RANK + 1], k;
        gs__ta A;
        if (full.rank + 1 > GS_MAX_RANK) {
            gs_replica_groups rg;
            if (!(r = gs__sh_reduced(sp->ctx, s)) || !gs__sp_unreduced_groups(sp, s, &rg)) return NULL;
            return gs__sp_reshard_raw(sp, gs__sp_all_reduce(sp, x, GS_REDUCE_SUM, &rg), r, t, full);
        }
        if (s->kind == GS_SHARDING_UNREDUCED) {
            if (!gs__sp_view(sp, sp->rep, full.rank, &A)) return NULL;
            I = gs__sh_from_ta(sp->ctx, full.rank + 1, 0, NULL, &A);
        } else {   /* data dims, then the unreduced subgroup (sub[0]: no manual one), then any replicated one */
            I = gs__sh_from_ta(sp->ctx, full.rank + 1, s->n_sub - 1, rep, &s->ta);
        }
        if (!I) return NULL;
        for (k = 0; k < full.rank; k++) dest[k] = k;
        dest[full.rank] = GS__DEST_REP;
        sp->unreduced_t = NULL;   /* these partial values are to be summed, whatever the instruction wants */
        x = gs__sp_combine_raw(sp, x, I, full.rank + 1, dest, GS_REDUCE_SUM, &full, t, &o);
        sp->unreduced_t = keep;
        return x && o ? gs__sp_reshard_raw(sp, x, o, t, full) : NULL;
    }
    if (!(r = gs__sh_reduced(sp->ctx, t)) || !(x = gs__sp_reshard_raw(sp, x, s, r, full))) return NULL;
    vals = (int32_t *)gs__malloc(sp->ctx, sizeof(int32_t) * (size_t)sp->D);
    if (!vals) return NULL;
    for (d = 0; d < sp->D; d++) vals[d] = gs__sh_unreduced_coord(t, d) == 0;
    first = gs__sp_tab_make(sp, t, NULL, -2, 0, 0, vals);
    gs__free(sp->ctx, vals);
    gs__sp_note(sp, "the value kept on the first device of each unreduced group, zero on the others");
    ps = x->shape;
    ps.dtype = GS_PRED;
    first = gs_compare(g, first, gs__sp_s32(sp, 0), GS_CMP_NE);
    return gs_select(g, gs_broadcast(g, first, ps, NULL), x, gs__sp_splat(sp, x->shape.dtype, 0, x->shape));
}

/* The reshard planner: x[local]{s} -> x[local]{t} for an array of shape full, in four steps, each doing nothing
   when there is nothing for it: 1. all-to-all moves tiles between dims, 2. all-gather undoes splits the target
   does not have, 3. dynamic-slice makes the splits it adds, 4. collective-permute puts tiles on their devices. */
GS__FN gs_value *gs__sp_reshard_raw(gs__sp *sp, gs_value *x, const gs_sharding *s, const gs_sharding *t,
                                    gs_shape full) {
    int rank = full.rank;
    gs__ta A, B;
    const gs_sharding *cur = s;
    bool s_rep, t_rep;
    if (!x) return NULL;
    if (!s) s = gs__sp_rep(sp);
    if (!t) t = gs__sp_rep(sp);
    if (s == t || gs_sharding_equal(s, t)) return x;
    if (gs__sh_has_unreduced(s) || gs__sh_has_unreduced(t)) return gs__sp_reshard_unreduced(sp, x, s, t, full);
    s_rep = gs__sp_is_rep(s);
    t_rep = gs__sp_is_rep(t);
    if (s_rep && t_rep) return x;
    if (t_rep && s->kind == GS_SHARDING_TILED && gs_sharding_manual_group(s) > 1) {
        /* {replicated} for a partly manual value: each group's array on each of its devices (XLA reads the
           target within the value's manual groups too; the groups' arrays differ, so nothing else is meant) */
        t = gs__sh_replicate_dims(sp->ctx, s, ~0u);
        if (!t) return NULL;
        if (gs_sharding_equal(s, t)) return x;
    }
    if (gs__sp_manual_alike(sp, s, t)) return gs__sp_reshard_in_groups(sp, x, s, t, full);
    if (s->kind == GS_SHARDING_MANUAL || t->kind == GS_SHARDING_MANUAL || gs_sharding_manual_group(s) > 1 ||
        gs_sharding_manual_group(t) > 1) {
        gs__err(sp->ctx, GS_ERR_SHARDING, "%s: cannot reshard a manual value (%s -> %s); leave manual regions through "
                "SPMDShardToFullShape", sp->at ? sp->at->name : "?", gs_sharding_to_text(sp->ctx, s),
                gs_sharding_to_text(sp->ctx, t));
        return NULL;
    }
    if (!gs__sp_view(sp, s, rank, &A) || !gs__sp_view(sp, t, rank, &B)) {
        gs__err(sp->ctx, GS_ERR_SHARDING, "%s: cannot reshard %s -> %s", sp->at ? sp->at->name : "?",
                gs_sharding_to_text(sp->ctx, s), gs_sharding_to_text(sp->ctx, t));
        return NULL;
    }
    if (!(x = gs__sp_reshard_all_to_all(sp, x, &cur, &B, &full))) return NULL;
    if (!(x = gs__sp_reshard_gather(sp, x, &cur, &B, &full))) return NULL;
    if (gs__sp_is_rep(cur) && !s_rep && !t_rep)
        gs__sp_warn_remat(sp, s, t, &full, "no all-to-all, slice or partial gather reaches the target");
    x = gs__sp_reshard_slice(sp, x, &cur, &B, &full);
    if (x && !gs_sharding_equal(cur, t)) x = gs__sp_reshard_permute(sp, x, cur, s, t, &B, rank);
    return x;
}

/* =========================================================================================================
   Per-value access during partitioning
   ========================================================================================================= */
/* element i of a tuple sharding (or the sharding itself) */
GS__FN const gs_sharding *gs__sp_elem(const gs_sharding *s, int i) {
    return s && s->kind == GS_SHARDING_TUPLE ? (i < s->n_elems ? s->elems[i] : NULL) : s;
}

/* x (a per-device value of source value u, in sharding from) in sharding want; tuples element by element */
GS__FN gs_value *gs__sp_reshard_val(gs__sp *sp, gs_value *x, const gs_sharding *from, const gs_sharding *want,
                                    const gs_value *u) {
    gs_value *el[64];
    int i, n = u->n_tuple;
    if (u->shape.dtype != GS_TUPLE) return gs__sp_reshard_raw(sp, x, from, want, u->shape);
    if (!x || from == want || gs_sharding_equal(from, want)) return x;
    if (n > 64) {
        gs__err(sp->ctx, GS_ERR_UNSUPPORTED, "%s: tuples of more than 64 elements", u->name);
        return NULL;
    }
    for (i = 0; i < n; i++)
        el[i] = gs__sp_reshard_raw(sp, gs_get_tuple_element(sp->G->g, x, i), gs__sp_elem(from, i),
                                   gs__sp_elem(want, i), u->tuple[i]);
    return gs_tuple(sp->G->g, n, el);
}

/* The per-device form of source value u in sharding want (array reshards are made once and cached). */
GS__FN gs_value *gs__sp_get(gs__sp *sp, const gs_value *u, const gs_sharding *want) {
    gs__sp_val *e = &sp->G->vals[u->id];
    gs_value *x;
    gs__sp_alt a;
    int i;
    if (!e->v) return NULL;
    if (!want) want = gs__sp_rep(sp);
    if (e->sh == want || gs_sharding_equal(e->sh, want)) return e->v;
    if (u->shape.dtype == GS_TUPLE) return gs__sp_reshard_val(sp, e->v, e->sh, want, u);
    for (i = 0; i < (int)stbds_arrlen(e->alts); i++)
        if (e->alts[i].sh == want) return e->alts[i].v;
    i = (int)stbds_arrlen(sp->G->g->values);
    x = gs__sp_reshard_raw(sp, e->v, e->sh, want, u->shape);
    if (!x) return NULL;
    if (sp->at && sp->at != u && sp->G->g == sp->why_g)
        gs__sp_why(sp, i, "reshards %s from %s to %s, the sharding %s (%s) needs of it; annotating %s with sharding=%s would remove it",
                   u->name, gs_sharding_to_text(sp->ctx, e->sh), gs_sharding_to_text(sp->ctx, want), sp->at->name,
                   gs_op_name(sp->at->op), u->name, gs_sharding_to_text(sp->ctx, want));
    a.sh = want;
    a.v = x;
    stbds_arrput(e->alts, a);
    return x;
}

/* the sharding a source value has (replicated when none) */
GS__FN const gs_sharding *gs__sp_norm(gs__sp *sp, const gs_sharding *s) {
    if (!s || s->kind == GS_SHARDING_UNKNOWN || s->kind == GS_SHARDING_MAXIMAL) return gs__sp_rep(sp);
    if (s->kind == GS_SHARDING_TUPLE) {
        const gs_sharding *el[64];
        int i;
        bool same = true;
        if (s->n_elems > 64) return s;
        for (i = 0; i < s->n_elems; i++) {
            el[i] = gs__sp_norm(sp, s->elems[i]);
            if (el[i] != s->elems[i]) same = false;
        }
        return same ? s : gs_sharding_tuple(sp->ctx, s->n_elems, el);
    }
    return s;
}
/* in reference mode (gs__sp.reference) a sharding with no manual part is {rep}, element-wise for tuples */
GS__FN const gs_sharding *gs__sp_ref_norm(gs__sp *sp, const gs_sharding *s) {
    const gs_sharding *el[64];
    int i;
    if (!sp->reference || !s) return s;
    if (s->kind == GS_SHARDING_TUPLE) {
        if (s->n_elems > 64) return s;
        for (i = 0; i < s->n_elems; i++) el[i] = gs__sp_ref_norm(sp, s->elems[i]);
        return gs_sharding_tuple(sp->ctx, s->n_elems, el);
    }
    return s->kind == GS_SHARDING_MANUAL || gs_sharding_manual_group(s) > 1 ? s : sp->rep;
}
GS__FN const gs_sharding *gs__sp_sh(gs__sp *sp, const gs_value *u) {
    return gs__sp_ref_norm(sp, gs__sp_norm(sp, u->sharding));
}
GS__FN const gs_sharding *gs__sp_orig(gs__sp *sp, const gs_value *u) { return gs__sp_norm(sp, u->sharding); }

/* A convolution partitioned as a dot, over local operands: the windows of its batch, contracting and rhs-free
   spatial dims rewritten for the local extents (XLA CreateShardedConvForDotGeneralConvolution) */
GS__FN gs_conv_config *gs__sp_conv_local(gs__sp *sp, const gs_value *v, gs_value *const *ops) {
    const gs_conv_config *c = v->conv;
    gs_conv_config *lc = (gs_conv_config *)gs__arena_dup(sp->ctx, c, sizeof *c);
    gs__cdk kind[GS_MAX_RANK];
    int i;
    if (!lc) return NULL;
    gs__conv_dot_kinds(v, kind);
    for (i = 0; i < c->dims.n_spatial; i++)
        lc->window[i] = gs__conv_dot_window(&c->window[i], &lc->reversal[i], kind[i],
                                            ops[0]->shape.dims[c->dims.input_spatial[i]],
                                            ops[1]->shape.dims[c->dims.kernel_spatial[i]]);
    return lc;
}

/* v's op over new operands with a local result shape; every attribute copied (builders re-check it all) */
GS__FN gs_value *gs__sp_clone(gs__sp *sp, const gs_value *v, gs_value *const *ops, const gs_shape *shape) {
    gs_value *n = gs__value_new(sp->G->g, v->op, v->n_operands, ops);
    size_t at = offsetof(gs_value, index);
    if (!n) return NULL;
    memcpy((char *)n + at, (const char *)v + at, sizeof(gs_value) - at);
    if (shape) n->shape = *shape;
    else if (v->op == GS_OP_CONVOLUTION && !(n->conv = gs__sp_conv_local(sp, v, ops))) return NULL;
    return gs__finish(n);
}

GS__FN uint32_t gs__sp_split_mask(const gs_sharding *s, int rank) {
    uint32_t m = 0;
    int d;
    for (d = 0; d < rank; d++)
        if (gs__sp_k(s, d) > 1) m |= 1u << d;
    return m;
}

/* Groups of devices that differ only along the axes in `axes` of view I (merged, major to minor). */
GS__FN bool gs__sp_groups_multi(gs__sp *sp, const gs__ta *I, uint32_t axes, gs_replica_groups *rg) {
    gs__ta u = *I;
    int a, n = I->n, moved = 0;
    for (a = 0; a < n; a++)
        if ((axes >> a) & 1u) {
            /* axis a sits at a - moved once earlier group axes went to the end */
            if (!gs__sp_move_axis(sp, &u, a - moved, u.n - 1)) return false;
            moved++;
        }
    if (moved > 1) gs__sp_merge_axes(&u, u.n - moved, moved);
    if (moved == 0) {
        GS__ZERO(*rg);
        rg->n_groups = I->total;
        rg->group_size = 1;
        return true;
    }
    return gs__sp_groups(sp, &u, u.n - 1, rg);
}

/* The sharding a partial result is in before its combine, as an unreduced sharding: view A of the iteration space
   (rank ri, then its replication), the axes in red summed, dest[a] the output dim of iteration dim a. The summed
   axes are read as a manual subgroup through the mapping (which keeps a manual subgroup apart) and relabelled. */
GS__FN const gs_sharding *gs__sp_partial_sh(gs__sp *sp, const gs__ta *A, int ri, uint32_t red, const int *dest,
                                            int out_rank) {
    static const gs_subgroup mr[2] = {GS_SUBGROUP_MANUAL, GS_SUBGROUP_REPLICATED};
    gs_subgroup sub[3];
    int perm[GS_MAX_IOTA_RANK], qdest[GS_MAX_IOTA_RANK], a, k = 0, n_red = 0, i;
    gs__ta r;
    const gs_sharding *Q;
    for (a = 0; a < ri; a++)
        if (!((red >> a) & 1u)) {
            qdest[k] = dest[a];
            perm[k++] = a;
        }
    for (a = 0; a < ri; a++)
        if ((red >> a) & 1u) perm[k + n_red++] = a;
    perm[k + n_red] = ri;
    if (gs__ta_transpose(sp->ctx, A, perm, &r) != GS_OK) return NULL;
    if (n_red > 1) gs__sp_merge_axes(&r, k, n_red);
    if (n_red == 0) {   /* nothing summed: a manual subgroup of size 1 */
        for (i = r.n; i > k; i--) r.dims[i] = r.dims[i - 1];
        r.dims[k] = 1;
        r.n++;
    }
    if (!(Q = gs__sh_from_ta(sp->ctx, k, 2, mr, &r)) || !(Q = gs__sh_map(sp->ctx, Q, out_rank, qdest))) return NULL;
    if (Q->kind == GS_SHARDING_MANUAL) return gs_sharding_unreduced(sp->ctx);
    if (Q->kind != GS_SHARDING_TILED) return Q;
    for (i = 0; i < Q->n_sub; i++) sub[i] = Q->sub[i] == GS_SUBGROUP_MANUAL ? GS_SUBGROUP_UNREDUCED : Q->sub[i];
    return gs__sh_from_ta(sp->ctx, Q->rank, Q->n_sub, sub, &Q->ta);
}

/* Finishes a local partial result x (output dims of an iteration space): I is the iteration sharding (rank ri),
   dest[a] the output dim of iteration dim a or GS__DEST_REP for a reduced dim whose partial results must be
   combined with `kind`. Chooses reduce-scatter when t wants an output dim split over exactly the reducing
   devices, else all-reduce. Returns x in *out_sh. */
GS__FN gs_value *gs__sp_combine_raw(gs__sp *sp, gs_value *x, const gs_sharding *I, int ri, const int *dest,
                                    gs_reduce_kind kind, const gs_shape *full_out, const gs_sharding *t,
                                    const gs_sharding **out_sh) {
    gs__ta A;
    uint32_t red = 0;
    int a, j;
    int64_t G = 1;
    const gs_sharding *P = gs__sh_map(sp->ctx, I, full_out->rank, dest);
    if (!x || !P || !gs__sp_view(sp, I, ri, &A)) return NULL;
    for (a = 0; a < ri; a++)
        if (dest[a] == GS__DEST_REP && A.dims[a] > 1) {
            red |= 1u << a;
            G *= A.dims[a];
        }
    *out_sh = P;
    if (!red) return x;
    if (sp->unreduced_t && kind == GS_REDUCE_SUM) {
        /* the sharding wanted is unreduced over exactly the devices holding partial sums: they stay partial */
        const gs_sharding *U = gs__sp_partial_sh(sp, &A, ri, red, dest, full_out->rank);
        if (U && gs_sharding_equal(U, sp->unreduced_t)) {
            gs__sp_note(sp, "partial sums of %lld devices kept unreduced (no all-reduce)", (long long)G);
            *out_sh = U;
            return x;
        }
    }
    /* reduce-scatter: the reduced axes become the minor factor of an output dim j, and that is what t wants */
    for (j = 0; j < full_out->rank && t && !gs__sp_is_rep(t); j++) {
        int aj = -1, i, moved = 0;
        const gs_sharding *Q;
        int qdest[GS_MAX_IOTA_RANK];
        int64_t kj;
        for (a = 0; a < ri; a++)
            if (dest[a] == j) aj = a;
        kj = aj >= 0 ? A.dims[aj] : 1;
        if (aj < 0 || gs__sp_k(t, j) != kj * G || !gs__sp_aligned(full_out->dims[j], kj, kj * G)) continue;
        /* move the reduced axes (in order) to just after aj, then merge them into it */
        {
            int order[GS_MAX_IOTA_RANK], perm[GS_MAX_IOTA_RANK], k = 0;
            gs__ta r;
            for (a = 0; a < A.n; a++) {
                if ((red >> a) & 1u) continue;
                order[k++] = a;
                if (a == aj)
                    for (i = 0; i < ri; i++)
                        if ((red >> i) & 1u) order[k++] = i;
            }
            for (i = 0; i < A.n; i++) perm[i] = order[i];
            if (gs__ta_transpose(sp->ctx, &A, perm, &r) != GS_OK) return NULL;
            /* merge axes aj' .. aj'+moved into one */
            for (i = 0; i < A.n; i++)
                if (perm[i] == aj) break;
            for (a = 0; a < ri; a++)
                if ((red >> a) & 1u) moved++;
            gs__sp_merge_axes(&r, i, moved + 1);
            /* r is a view over the iteration dims minus the reduced ones (+ R) */
            k = 0;
            for (a = 0; a < ri; a++)
                if (!((red >> a) & 1u)) qdest[k++] = dest[a];
            Q = gs__sp_from_view(sp, k, &r);
            if (!Q) return NULL;
            Q = gs__sh_map(sp->ctx, Q, full_out->rank, qdest);
            if (!Q) return NULL;
        }
        if (!gs_sharding_equal(Q, t)) {
            /* same tiling on other devices is still worth it: a permute after */
            gs__ta Qv, Tv;
            int d;
            bool same_dims = gs__sp_view(sp, Q, full_out->rank, &Qv) && gs__sp_view(sp, t, full_out->rank, &Tv);
            for (d = 0; same_dims && d <= full_out->rank; d++)
                if (Qv.dims[d] != Tv.dims[d]) same_dims = false;
            if (!same_dims) continue;
        }
        {
            gs_collective_desc cd;
            int64_t cnew = gs__shard_size(full_out->dims[j], kj * G);
            GS__ZERO(cd);
            if (!gs__sp_groups_multi(sp, &A, red, &cd.groups)) return NULL;
            if (kj == 1) x = gs__sp_pad_dim(sp, x, j, G * cnew);
            x = gs_reduce_scatter(sp->G->g, x, kind, j, &cd);
            gs__sp_note(sp, "reduce-scatter over %lld devices into dim %d", (long long)G, j);
            *out_sh = Q;
            return x;
        }
    }
    {
        gs_replica_groups rg;
        if (!gs__sp_groups_multi(sp, &A, red, &rg)) return NULL;
        gs__sp_note(sp, "all-reduce over %lld devices", (long long)G);
        return gs__sp_all_reduce(sp, x, kind, &rg);
    }
}

/* the inverse of gs__sp_manual_as_dim: a sharding of rank r + 1 whose dim 0 is split by the manual groups, read
   back as the partly manual sharding of rank r */
GS__FN const gs_sharding *gs__sp_dim_as_manual(gs__sp *sp, const gs_sharding *s) {
    static const gs_subgroup mr[2] = {GS_SUBGROUP_MANUAL, GS_SUBGROUP_REPLICATED};
    int perm[GS_MAX_IOTA_RANK], k, r = s->rank - 1;
    gs__ta ta = s->ta;
    if (s->kind != GS_SHARDING_TILED || s->rank < 1) return NULL;
    if (s->n_sub == 0) {   /* room for the replicated subgroup, of size 1 */
        ta.n++;
        ta.dims[ta.n - 1] = 1;
    }
    for (k = 0; k < r; k++) perm[k] = k + 1;
    perm[r] = 0;
    perm[r + 1] = r + 1;
    if (gs__ta_transpose(sp->ctx, &ta, perm, &ta) != GS_OK) return NULL;
    return gs__sh_from_ta(sp->ctx, r, 2, mr, &ta);
}

/* gs__sp_combine for partial results in a partly manual region (I with a manual subgroup): each group combines
   its own, so the value is read as [M, ..] with dim 0 split by the groups (gs__sp_reshard_in_groups) and the
   combine's collectives run along the other dims only */
GS__FN gs_value *gs__sp_combine_in_groups(gs__sp *sp, gs_value *x, const gs_sharding *I, int ri, const int *dest,
                                          gs_reduce_kind kind, const gs_shape *full_out, const gs_sharding *t,
                                          const gs_sharding **out_sh) {
    const gs_sharding *I2 = gs__sp_manual_as_dim(sp, I), *t2 = NULL, *P2 = NULL;
    int dest2[GS_MAX_RANK + 1], a;
    gs_shape f2 = *full_out, xs;
    gs_value *r;
    if (!x || !I2) return NULL;
    if (ri + 1 > GS_MAX_RANK || full_out->rank + 1 > GS_MAX_RANK) {
        gs__err(sp->ctx, GS_ERR_UNSUPPORTED, "%s: partial results of rank %d in a partly manual region are combined "
                "only up to rank %d", sp->at ? sp->at->name : "?", ri, GS_MAX_RANK - 1);
        return NULL;
    }
    dest2[0] = 0;
    for (a = 0; a < ri; a++) dest2[a + 1] = dest[a] == GS__DEST_REP ? GS__DEST_REP : dest[a] + 1;
    f2.rank = full_out->rank + 1;
    f2.dims[0] = gs_sharding_manual_group(I);
    for (a = 0; a < full_out->rank; a++) f2.dims[a + 1] = full_out->dims[a];
    if (t && gs__sp_manual_alike(sp, I, t) && !gs__sp_is_rep(I)) t2 = gs__sp_manual_as_dim(sp, t);
    xs = x->shape;
    xs.rank = x->shape.rank + 1;
    xs.dims[0] = 1;
    for (a = 0; a < x->shape.rank; a++) xs.dims[a + 1] = x->shape.dims[a];
    r = gs__sp_combine_raw(sp, gs_reshape(sp->G->g, x, xs.rank, xs.dims), I2, ri + 1, dest2, kind, &f2, t2, &P2);
    if (!r || !P2 || !(*out_sh = gs__sp_dim_as_manual(sp, P2))) return NULL;
    xs = gs__sp_local(*out_sh, *full_out);
    return gs_reshape(sp->G->g, r, xs.rank, xs.dims);
}

GS__FN gs_value *gs__sp_combine(gs__sp *sp, gs_value *x, const gs_sharding *I, int ri, const int *dest,
                                gs_reduce_kind kind, const gs_shape *full_out, const gs_sharding *t,
                                const gs_sharding **out_sh) {
    int from = (int)stbds_arrlen(sp->G->g->values);
    gs_value *r = I && I->kind == GS_SHARDING_TILED && gs_sharding_manual_group(I) > 1
                      ? gs__sp_combine_in_groups(sp, x, I, ri, dest, kind, full_out, t, out_sh)
                      : gs__sp_combine_raw(sp, x, I, ri, dest, kind, full_out, t, out_sh);
    if (r && sp->at && sp->G->g == sp->why_g)
        gs__sp_why(sp, from, "combines the partial results of %s (%s), whose operands are split along the dims it "
                   "reduces; operands unsplit along those dims would remove it (and be gathered instead)",
                   sp->at->name, gs_op_name(sp->at->op));
    return r;
}

/* ---- the replicate path: operands replicated, the op at full size, the result sliced by the caller ---- */
GS__FN gs_value *gs__sp_replicated(gs__sp *sp, const gs_value *v, const char *why, const gs_sharding **osh) {
    gs_value *ops[GS_MAX_RANK + 8], **heap = NULL, **o = ops;
    gs_value *r;
    int i;
    bool split = false;
    if (v->n_operands > (int)GS__COUNTOF(ops)) {
        heap = (gs_value **)gs__malloc(sp->ctx, sizeof(gs_value *) * (size_t)v->n_operands);
        if (!heap) return NULL;
        o = heap;
    }
    for (i = 0; i < v->n_operands; i++) {
        const gs_sharding *s = sp->G->vals[v->operands[i]->id].sh;
        if (s && !gs__sp_is_rep(s)) split = true;
        o[i] = gs__sp_get(sp, v->operands[i], gs__sp_rep(sp));
    }
    if (split)
        gs__sp_warnf(sp, "full rematerialization at %s: %s replicates its operands (%s); %llu bytes of result computed "
                     "on every device; keeping %s's operands unsplit along those dims would avoid it", v->name,
                     gs_op_name(v->op), why,
                     (unsigned long long)(v->shape.dtype == GS_TUPLE ? 0 : gs_shape_bytes(&v->shape)), v->name);
    gs__sp_note(sp, "replicated: %s", why);
    r = gs__sp_clone(sp, v, o, v->shape.dtype == GS_TUPLE ? NULL : &v->shape);
    gs__free(sp->ctx, heap);
    *osh = gs__sp_rep(sp);
    return r;
}

/* the mask of dims whose extent an op changes or reads across (they must not be split for a local op) */
GS__FN const gs_sharding *gs__sp_unsplit(gs__sp *sp, const gs_sharding *t, uint32_t mask) {
    return gs__sh_replicate_dims(sp->ctx, t, mask);
}
