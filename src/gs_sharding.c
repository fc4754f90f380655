/* gs_sharding.c - shardings (XLA HloSharding), tile assignments in list and iota form, tile math, text,
   meshes and PartitionSpecs, annotations, visualisation. */
#include "gs_internal.h"

/* =========================================================================================================
   Tile assignments. A gs__ta is an N-d array of device ids, either an explicit row-major list or the iota
   form arange(total).reshape(idims).transpose(iperm).reshape(dims). The iota form answers "which device is
   at this position" and "where is this device" in O(rank) without materialising anything.
   ========================================================================================================= */

/* Canonical iota: size-1 dims dropped, runs of dims that stay adjacent under the permutation merged. */
GS__FN void gs__iota_canon(gs__ta *t) {
    int i, j, k;
    bool changed = true;
    /* drop size-1 dims */
    for (i = 0; i < t->ir;) {
        if (t->idims[i] != 1) {
            i++;
            continue;
        }
        for (j = 0, k = 0; j < t->ir; j++) {
            if (t->iperm[j] == i) continue;
            t->iperm[k++] = t->iperm[j] > i ? t->iperm[j] - 1 : t->iperm[j];
        }
        for (j = i; j + 1 < t->ir; j++) t->idims[j] = t->idims[j + 1];
        t->ir--;
    }
    while (changed) {
        changed = false;
        for (j = 0; j + 1 < t->ir; j++) {
            int a = t->iperm[j];
            if (t->iperm[j + 1] != a + 1) continue;
            /* merge original dims a and a+1 */
            t->idims[a] *= t->idims[a + 1];
            for (k = a + 1; k + 1 < t->ir; k++) t->idims[k] = t->idims[k + 1];
            for (k = j + 1; k + 1 < t->ir; k++) t->iperm[k] = t->iperm[k + 1];
            t->ir--;
            for (k = 0; k < t->ir; k++)
                if (t->iperm[k] > a) t->iperm[k]--;
            changed = true;
            break;
        }
    }
    if (t->ir == 0) {
        t->ir = 1;
        t->idims[0] = 1;
        t->iperm[0] = 0;
    }
}

GS__FN void gs__ta_iota(gs__ta *t, int n, const int64_t *dims) {
    int i;
    GS__ZERO(*t);
    t->n = n;
    for (i = 0; i < n; i++) t->dims[i] = dims[i];
    t->total = gs__prod64(n, dims);
    t->ir = 1;
    t->idims[0] = t->total;
    t->iperm[0] = 0;
}

/* device at row-major position L */
GS__FN int64_t gs__ta_at(const gs__ta *t, int64_t L) {
    int64_t m[GS_MAX_IOTA_RANK], dev = 0;
    int j;
    if (t->list) return t->list[L];
    for (j = t->ir - 1; j >= 0; j--) {
        int64_t sz = t->idims[t->iperm[j]];
        m[t->iperm[j]] = L % sz;
        L /= sz;
    }
    for (j = 0; j < t->ir; j++) dev = dev * t->idims[j] + m[j];
    return dev;
}

/* row-major position of device d, or -1 */
GS__FN int64_t gs__ta_pos(const gs__ta *t, int64_t d) {
    int64_t m[GS_MAX_IOTA_RANK], L = 0;
    int j;
    if (d < 0) return -1;
    if (t->list) {
        int64_t lo = 0, hi = t->total - 1;
        while (lo <= hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (t->sorted[2 * mid] == d) return t->sorted[2 * mid + 1];
            if (t->sorted[2 * mid] < d) lo = mid + 1;
            else hi = mid - 1;
        }
        return -1;
    }
    if (d >= t->total) return -1;
    for (j = t->ir - 1; j >= 0; j--) {
        m[j] = d % t->idims[j];
        d /= t->idims[j];
    }
    for (j = 0; j < t->ir; j++) L = L * t->idims[t->iperm[j]] + m[t->iperm[j]];
    return L;
}

GS__FN void gs__unravel(int n, const int64_t *dims, int64_t L, int64_t *idx) {
    int i;
    for (i = n - 1; i >= 0; i--) {
        idx[i] = L % dims[i];
        L /= dims[i];
    }
}
GS__FN int64_t gs__ravel(int n, const int64_t *dims, const int64_t *idx) {
    int64_t L = 0;
    int i;
    for (i = 0; i < n; i++) L = L * dims[i] + idx[i];
    return L;
}

GS__FN int gs__cmp_pair(const void *a, const void *b) {
    int64_t x = ((const int64_t *)a)[0], y = ((const int64_t *)b)[0];
    return x < y ? -1 : x > y;
}

/* Builds the device -> position index of a list; fails on negative or repeated ids. */
GS__FN gs_result gs__ta_index(gs_ctx *ctx, gs__ta *t, const char *who) {
    int64_t i, *pairs;
    if (!t->list) return GS_OK;
    pairs = (int64_t *)gs__arena_alloc(ctx, sizeof(int64_t) * 2 * (size_t)t->total);
    if (!pairs) return GS_ERR_OUT_OF_MEMORY;
    for (i = 0; i < t->total; i++) {
        if (t->list[i] < 0)
            return gs__err(ctx, GS_ERR_SHARDING, "%s: device id %lld is negative", who, (long long)t->list[i]);
        pairs[2 * i] = t->list[i];
        pairs[2 * i + 1] = i;
    }
    qsort(pairs, (size_t)t->total, 2 * sizeof(int64_t), gs__cmp_pair);
    for (i = 1; i < t->total; i++)
        if (pairs[2 * i] == pairs[2 * i - 2])
            return gs__err(ctx, GS_ERR_SHARDING, "%s: device %lld appears twice in the tile assignment", who,
                           (long long)pairs[2 * i]);
    t->sorted = pairs;
    return GS_OK;
}

GS__FN int64_t *gs__ta_materialize(gs_ctx *ctx, const gs__ta *t) {
    int64_t L, *out = (int64_t *)gs__arena_alloc(ctx, sizeof(int64_t) * (size_t)t->total);
    if (!out) return NULL;
    for (L = 0; L < t->total; L++) out[L] = gs__ta_at(t, L);
    return out;
}

/* The common refinement of an iota tile array's dims and its transposed iota shape: factor f has size fsz[f],
   lies in tile dim fa[f] and in transposed iota dim ft[f], in row-major order. Returns the factor count, or -1
   when there is none (some dim boundary does not divide) or more than cap factors. */
GS__FN int gs__ta_refine(const gs__ta *t, int64_t *fsz, int *fa, int *ft, int cap) {
    int nf = 0, i = 0, j = 0;
    int64_t ra = t->n ? t->dims[0] : 1, rt = t->idims[t->iperm[0]];
    while (i < t->n && j < t->ir) {
        if (ra == 1) { if (++i < t->n) ra = t->dims[i]; continue; }
        if (rt == 1) { if (++j < t->ir) rt = t->idims[t->iperm[j]]; continue; }
        if (nf >= cap) return -1;
        if (ra % rt == 0) { fsz[nf] = rt; fa[nf] = i; ft[nf] = j; nf++; ra /= rt; rt = 1; }
        else if (rt % ra == 0) { fsz[nf] = ra; fa[nf] = i; ft[nf] = j; nf++; rt /= ra; ra = 1; }
        else return -1;
    }
    return nf;
}

/* Transposes the tile array: new dim k is old dim perm[k]. Stays in iota form whenever the dims and the
   iota's transposed shape have a common refinement; otherwise the list is materialised. */
GS__FN gs_result gs__ta_transpose(gs_ctx *ctx, const gs__ta *t, const int *perm, gs__ta *out) {
    gs__ta r;
    int k;
    GS__ZERO(r);
    r.n = t->n;
    r.total = t->total;
    for (k = 0; k < t->n; k++) r.dims[k] = t->dims[perm[k]];
    if (!t->list) {
        /* factors: walk dims (A) and the transposed iota shape (T) together */
        int64_t fsz[GS_MAX_IOTA_RANK];
        int fa[GS_MAX_IOTA_RANK], ft[GS_MAX_IOTA_RANK];
        int nf = gs__ta_refine(t, fsz, fa, ft, GS_MAX_IOTA_RANK);
        if (nf >= 0) {
            /* new iota dims: factors grouped by original iota dim (in order), each group in T order */
            int pos2[GS_MAX_IOTA_RANK], np = 0, o, f, q;
            for (o = 0; o < t->ir; o++)
                for (f = 0; f < nf; f++)
                    if (t->iperm[ft[f]] == o) {
                        pos2[f] = np;
                        r.idims[np++] = fsz[f];
                    }
            r.ir = np;
            q = 0;
            for (k = 0; k < t->n; k++)
                for (f = 0; f < nf; f++)
                    if (fa[f] == perm[k]) r.iperm[q++] = pos2[f];
            gs__iota_canon(&r);
            *out = r;
            return GS_OK;
        }
    }
    {
        int64_t L, idx[GS_MAX_IOTA_RANK], src[GS_MAX_IOTA_RANK], *list;
        gs_result e;
        list = (int64_t *)gs__arena_alloc(ctx, sizeof(int64_t) * (size_t)t->total);
        if (!list) return GS_ERR_OUT_OF_MEMORY;
        for (L = 0; L < t->total; L++) {
            gs__unravel(r.n, r.dims, L, idx);
            for (k = 0; k < r.n; k++) src[perm[k]] = idx[k];
            list[L] = gs__ta_at(t, gs__ravel(t->n, t->dims, src));
        }
        r.list = list;
        /* its own result, not ctx->err: every GS_OK return must have written *out (gcc -O3 saw a path that did not) */
        if ((e = gs__ta_index(ctx, &r, "transpose")) != GS_OK) return e;
        *out = r;
        return GS_OK;
    }
}

/* =========================================================================================================
   Sharding construction and normalisation
   ========================================================================================================= */

/* The interned copy of a non-tuple sharding (built in a local struct by the caller), keyed by its canonical
   text. The text of an explicit list names its devices, so equal lists share one object too. */
GS__FN const gs_sharding *gs__sh_intern(gs_ctx *ctx, const gs_sharding *s) {
    gs__sb sb;
    ptrdiff_t at;
    gs_sharding *c = NULL;
    char *key;
    gs__sb_init(&sb, ctx);
    gs__sh_print(&sb, s);
    if (sb.oom || !sb.buf) {
        gs__sb_free(&sb);
        gs__err(ctx, GS_ERR_OUT_OF_MEMORY, "out of memory making a sharding");
        return NULL;
    }
    at = stbds_shgeti(ctx->sh_intern, sb.buf);
    if (at >= 0) {
        gs__sb_free(&sb);
        return ctx->sh_intern[at].value;
    }
    key = gs__arena_strdup(ctx, sb.buf);
    gs__sb_free(&sb);
    if (key) c = (gs_sharding *)gs__arena_dup(ctx, s, sizeof *s);
    if (!c) return NULL;
    stbds_shput(ctx->sh_intern, key, c);
    return c;
}

GS__FN const gs_sharding *gs__sh_simple(gs_ctx *ctx, gs_sharding_kind kind, int64_t device) {
    gs_sharding s;
    if (!ctx) return NULL;
    GS__ZERO(s);
    s.kind = kind;
    s.device = device;
    return gs__sh_intern(ctx, &s);
}

GS_API const gs_sharding *gs_sharding_replicated(gs_ctx *ctx) { return gs__sh_simple(ctx, GS_SHARDING_REPLICATED, -1); }
GS_API const gs_sharding *gs_sharding_manual(gs_ctx *ctx) { return gs__sh_simple(ctx, GS_SHARDING_MANUAL, -1); }
GS_API const gs_sharding *gs_sharding_unreduced(gs_ctx *ctx) { return gs__sh_simple(ctx, GS_SHARDING_UNREDUCED, -1); }
GS_API const gs_sharding *gs_sharding_unknown(gs_ctx *ctx) { return gs__sh_simple(ctx, GS_SHARDING_UNKNOWN, -1); }
GS_API const gs_sharding *gs_sharding_maximal(gs_ctx *ctx, int64_t device) {
    if (!ctx) return NULL;
    if (device < 0) {
        gs__err(ctx, GS_ERR_SHARDING, "gs_sharding_maximal: device %lld is negative", (long long)device);
        return NULL;
    }
    return gs__sh_simple(ctx, GS_SHARDING_MAXIMAL, device);
}

/* Makes a tiled sharding from a tile array whose last n_sub dims are subgroups of the given types, with XLA's
   normalisation (see gs_sharding_tiled). The tile array must already be valid (ids distinct, indexed). */
GS__FN const gs_sharding *gs__sh_from_ta(gs_ctx *ctx, int rank, int n_sub, const gs_subgroup *sub, const gs__ta *ta_in) {
    gs__ta ta = *ta_in, tb;
    gs_sharding s;
    int i, k, perm[GS_MAX_IOTA_RANK];
    int64_t man = 1, rep = 1, unr = 1;
    bool needs_transpose = false;
    static const gs_subgroup order[3] = {GS_SUBGROUP_MANUAL, GS_SUBGROUP_UNREDUCED, GS_SUBGROUP_REPLICATED};
    int o;
    GSHARD_ASSERT(rank + n_sub == ta.n);
    for (i = 0; i < n_sub; i++) {
        if (sub[i] == GS_SUBGROUP_MANUAL) man *= ta.dims[rank + i];
        else if (sub[i] == GS_SUBGROUP_UNREDUCED) unr *= ta.dims[rank + i];
        else rep *= ta.dims[rank + i];
    }
    /* order: data dims, manual dims, unreduced dims, replicated dims (stable); size-1 subgroup dims go anywhere */
    for (i = 0; i < rank; i++) perm[i] = i;
    k = rank;
    for (o = 0; o < 3; o++)
        for (i = 0; i < n_sub; i++)
            if (sub[i] == order[o]) perm[k++] = rank + i;
    for (i = 0; i < ta.n; i++)
        if (perm[i] != i && ta.dims[perm[i]] > 1) needs_transpose = true;
    if (needs_transpose) {
        if (gs__ta_transpose(ctx, &ta, perm, &tb) != GS_OK) return NULL;
        ta = tb;
    }
    /* reshape: data dims, then [man] if > 1, then [rep] if > 1 */
    ta.n = rank;
    if (man > 1) ta.dims[ta.n++] = man;
    if (unr > 1) ta.dims[ta.n++] = unr;
    if (rep > 1) ta.dims[ta.n++] = rep;
    if (gs__prod64(rank, ta.dims) == 1) {
        /* nothing split: replicated, manual or unreduced (one subgroup kind alone; mixed kinds stay tiled) */
        if (man > 1 && rep == 1 && unr == 1) return gs_sharding_manual(ctx);
        if (unr > 1 && rep == 1 && man == 1) return gs_sharding_unreduced(ctx);
        if (man == 1 && unr == 1) return gs_sharding_replicated(ctx);
    }
    GS__ZERO(s);
    s.kind = GS_SHARDING_TILED;
    s.device = -1;
    s.rank = rank;
    if (man > 1) s.sub[s.n_sub++] = GS_SUBGROUP_MANUAL;
    if (unr > 1) s.sub[s.n_sub++] = GS_SUBGROUP_UNREDUCED;
    if (rep > 1) s.sub[s.n_sub++] = GS_SUBGROUP_REPLICATED;
    /* partial replication with a list: sort ids inside every replication group (XLA PartialTile) */
    if (rep > 1 && ta.list) {
        int64_t g, *list = (int64_t *)gs__arena_dup(ctx, ta.list, sizeof(int64_t) * (size_t)ta.total);
        bool sorted = true;
        if (!list) return NULL;
        for (g = 0; g < ta.total; g += rep) {
            int64_t a, b;
            for (a = g + 1; a < g + rep; a++) {
                int64_t x = list[a];
                for (b = a; b > g && list[b - 1] > x; b--) { list[b] = list[b - 1]; sorted = false; }
                list[b] = x;
            }
        }
        if (!sorted) {
            ta.list = list;
            ta.sorted = NULL;
            if (gs__ta_index(ctx, &ta, "sharding") != GS_OK) return NULL;
        }
    }
    /* a clean copy of the tile array (only the meaningful entries set), so equal shardings intern together */
    s.ta.n = ta.n;
    s.ta.total = ta.total;
    for (i = 0; i < ta.n; i++) s.ta.dims[i] = ta.dims[i];
    s.ta.list = ta.list;
    s.ta.sorted = ta.sorted;
    if (!ta.list) {
        s.ta.ir = ta.ir;
        for (i = 0; i < ta.ir; i++) {
            s.ta.idims[i] = ta.idims[i];
            s.ta.iperm[i] = ta.iperm[i];
        }
    }
    return gs__sh_intern(ctx, &s);
}

GS__FN bool gs__check_tile_dims(gs_ctx *ctx, const char *who, int n_dims, const int64_t *dims, int n_sub,
                                const gs_subgroup *sub) {
    int i;
    if (n_dims < 1 || n_dims > GS_MAX_TILE_RANK) {
        gs__err(ctx, GS_ERR_SHARDING, "%s: %d tile dims (1..%d allowed)", who, n_dims, GS_MAX_TILE_RANK);
        return false;
    }
    if (n_sub < 0 || n_sub > n_dims || (n_sub > 0 && !sub)) {
        gs__err(ctx, GS_ERR_SHARDING, "%s: bad subgroup count %d", who, n_sub);
        return false;
    }
    if (!dims) {
        gs__err(ctx, GS_ERR_SHARDING, "%s: tile dims are NULL", who);
        return false;
    }
    for (i = 0; i < n_dims; i++)
        if (dims[i] < 1 || dims[i] > ((int64_t)1 << 31)) {
            gs__err(ctx, GS_ERR_SHARDING, "%s: tile dim %d is %lld (must be >= 1)", who, i, (long long)dims[i]);
            return false;
        }
    if ((uint64_t)gs__prod64(n_dims, dims) > ((uint64_t)1 << 31)) { /* -1 (overflow) is huge as unsigned */
        gs__err(ctx, GS_ERR_SHARDING, "%s: more than 2^31 tiles", who);
        return false;
    }
    for (i = 0; i < n_sub; i++)
        if (sub[i] != GS_SUBGROUP_MANUAL && sub[i] != GS_SUBGROUP_REPLICATED && sub[i] != GS_SUBGROUP_UNREDUCED) {
            gs__err(ctx, GS_ERR_SHARDING, "%s: subgroup %d has an invalid type", who, i);
            return false;
        }
    return true;
}

GS_API const gs_sharding *gs_sharding_tiled(gs_ctx *ctx, int n_dims, const int64_t *dims, const int64_t *devices,
                                            int n_sub, const gs_subgroup *sub) {
    gs__ta ta;
    if (!ctx || ctx->err) return NULL;
    if (!gs__check_tile_dims(ctx, "gs_sharding_tiled", n_dims, dims, n_sub, sub)) return NULL;
    gs__ta_iota(&ta, n_dims, dims);
    if (devices) {
        ta.list = (const int64_t *)gs__arena_dup(ctx, devices, sizeof(int64_t) * (size_t)ta.total);
        if (!ta.list || gs__ta_index(ctx, &ta, "gs_sharding_tiled") != GS_OK) return NULL;
    }
    return gs__sh_from_ta(ctx, n_dims - n_sub, n_sub, sub, &ta);
}

GS_API const gs_sharding *gs_sharding_iota(gs_ctx *ctx, int n_dims, const int64_t *dims, int n_reshape,
                                           const int64_t *reshape, const int *perm, int n_sub,
                                           const gs_subgroup *sub) {
    gs__ta ta;
    int i;
    bool seen[GS_MAX_IOTA_RANK];
    if (!ctx || ctx->err) return NULL;
    if (!gs__check_tile_dims(ctx, "gs_sharding_iota", n_dims, dims, n_sub, sub)) return NULL;
    gs__ta_iota(&ta, n_dims, dims);
    if (n_reshape < 1 || n_reshape > GS_MAX_IOTA_RANK || !reshape) {
        gs__err(ctx, GS_ERR_SHARDING, "gs_sharding_iota: %d reshape dims (1..%d allowed)", n_reshape, GS_MAX_IOTA_RANK);
        return NULL;
    }
    memset(seen, 0, sizeof seen);
    for (i = 0; i < n_reshape; i++) {
        if (reshape[i] < 1) {
            gs__err(ctx, GS_ERR_SHARDING, "gs_sharding_iota: reshape dim %d is %lld", i, (long long)reshape[i]);
            return NULL;
        }
        ta.idims[i] = reshape[i];
        ta.iperm[i] = perm ? perm[i] : i;
        if (ta.iperm[i] < 0 || ta.iperm[i] >= n_reshape || seen[ta.iperm[i]]) {
            gs__err(ctx, GS_ERR_SHARDING, "gs_sharding_iota: T(...) is not a permutation of %d dims", n_reshape);
            return NULL;
        }
        seen[ta.iperm[i]] = true;
    }
    ta.ir = n_reshape;
    if (gs__prod64(n_reshape, reshape) < 0) {
        gs__err(ctx, GS_ERR_SHARDING, "gs_sharding_iota: the product of the reshape dims overflows int64");
        return NULL;
    }
    if (gs__prod64(n_reshape, reshape) != ta.total) {
        gs__err(ctx, GS_ERR_SHARDING, "gs_sharding_iota: reshape dims hold %lld devices, tile dims %lld",
                (long long)gs__prod64(n_reshape, reshape), (long long)ta.total);
        return NULL;
    }
    gs__iota_canon(&ta);
    return gs__sh_from_ta(ctx, n_dims - n_sub, n_sub, sub, &ta);
}

GS_API const gs_sharding *gs_sharding_tuple(gs_ctx *ctx, int n, const gs_sharding *const *elems) {
    gs_sharding *s;
    int i;
    if (!ctx || ctx->err) return NULL;
    if (n < 0 || (n > 0 && !elems)) {
        gs__err(ctx, GS_ERR_SHARDING, "gs_sharding_tuple: bad element list");
        return NULL;
    }
    for (i = 0; i < n; i++) {
        if (!elems[i]) return NULL;
        if (elems[i]->kind == GS_SHARDING_TUPLE) {
            gs__err(ctx, GS_ERR_SHARDING, "gs_sharding_tuple: element %d is itself a tuple (tuples are flat)", i);
            return NULL;
        }
    }
    s = (gs_sharding *)gs__arena_alloc(ctx, sizeof(gs_sharding));
    if (!s) return NULL;
    s->kind = GS_SHARDING_TUPLE;
    s->device = -1;
    s->n_elems = n;
    if (n) {
        s->elems = (const gs_sharding **)gs__arena_dup(ctx, elems, sizeof(gs_sharding *) * (size_t)n);
        if (!s->elems) return NULL;
    }
    return s;
}

/* =========================================================================================================
   Queries and tile math
   ========================================================================================================= */
GS_API gs_sharding_kind gs_sharding_get_kind(const gs_sharding *s) { return s ? s->kind : GS_SHARDING_UNKNOWN; }
GS_API bool gs_sharding_is_replicated(const gs_sharding *s) {
    if (!s) return false;
    if (s->kind == GS_SHARDING_REPLICATED) return true;
    if (s->kind == GS_SHARDING_TUPLE) {
        int i;
        for (i = 0; i < s->n_elems; i++)
            if (!gs_sharding_is_replicated(s->elems[i])) return false;
        return true;
    }
    return false;
}
GS_API int gs_sharding_rank(const gs_sharding *s) { return s && s->kind == GS_SHARDING_TILED ? s->rank : 0; }
GS_API int64_t gs_sharding_tiles(const gs_sharding *s, int d) {
    if (!s || s->kind != GS_SHARDING_TILED || d < 0 || d >= s->rank) return 1;
    return s->ta.dims[d];
}
GS_API int64_t gs_sharding_num_tiles(const gs_sharding *s) {
    return s && s->kind == GS_SHARDING_TILED ? gs__prod64(s->rank, s->ta.dims) : 1;
}
GS__FN int64_t gs__sh_sub_size(const gs_sharding *s, gs_subgroup type) {
    int i;
    if (!s || s->kind != GS_SHARDING_TILED) return 1;
    for (i = 0; i < s->n_sub; i++)
        if (s->sub[i] == type) return s->ta.dims[s->rank + i];
    return 1;
}
GS_API int64_t gs_sharding_replication(const gs_sharding *s) { return gs__sh_sub_size(s, GS_SUBGROUP_REPLICATED); }
GS_API int64_t gs_sharding_manual_group(const gs_sharding *s) { return gs__sh_sub_size(s, GS_SUBGROUP_MANUAL); }
GS_API int64_t gs_sharding_unreduced_group(const gs_sharding *s) { return gs__sh_sub_size(s, GS_SUBGROUP_UNREDUCED); }
/* s with its unreduced part read as replicated (the sharding of the summed value: every device of an unreduced
   group then holds the group's sum); tuples element by element; anything else as it is */
GS__FN const gs_sharding *gs__sh_reduced(gs_ctx *ctx, const gs_sharding *s) {
    gs_subgroup sub[3];
    int i;
    if (!s) return s;
    if (s->kind == GS_SHARDING_UNREDUCED) return gs_sharding_replicated(ctx);
    if (s->kind == GS_SHARDING_TUPLE) {
        const gs_sharding **el;
        bool same = true;
        if (s->n_elems == 0) return s;
        el = (const gs_sharding **)gs__arena_alloc(ctx, sizeof(gs_sharding *) * (size_t)s->n_elems);
        if (!el) return NULL;
        for (i = 0; i < s->n_elems; i++) {
            if (!(el[i] = gs__sh_reduced(ctx, s->elems[i]))) return NULL;
            if (el[i] != s->elems[i]) same = false;
        }
        return same ? s : gs_sharding_tuple(ctx, s->n_elems, el);
    }
    if (s->kind != GS_SHARDING_TILED || gs_sharding_unreduced_group(s) == 1) return s;
    for (i = 0; i < s->n_sub; i++) sub[i] = s->sub[i] == GS_SUBGROUP_UNREDUCED ? GS_SUBGROUP_REPLICATED : s->sub[i];
    return gs__sh_from_ta(ctx, s->rank, s->n_sub, sub, &s->ta);
}
/* an array sharding with an unreduced part ({unreduced}, or an unreduced subgroup); tuples: any element */
GS__FN bool gs__sh_has_unreduced(const gs_sharding *s) {
    int i;
    if (!s) return false;
    if (s->kind == GS_SHARDING_TUPLE) {
        for (i = 0; i < s->n_elems; i++)
            if (gs__sh_has_unreduced(s->elems[i])) return true;
        return false;
    }
    return s->kind == GS_SHARDING_UNREDUCED || gs_sharding_unreduced_group(s) > 1;
}
/* device d's coordinate along the unreduced devices of s (its rank among the devices whose values are summed):
   {unreduced} d itself, an unreduced subgroup its index along it, else 0; -1 when s does not name d */
GS__FN int64_t gs__sh_unreduced_coord(const gs_sharding *s, int64_t d) {
    int64_t idx[GS_MAX_TILE_RANK];
    int i;
    if (!s) return 0;
    if (s->kind == GS_SHARDING_UNREDUCED) return d;
    if (s->kind != GS_SHARDING_TILED || gs_sharding_unreduced_group(s) == 1) return 0;
    if (!gs_sharding_device_index(s, d, idx)) return -1;
    for (i = 0; i < s->n_sub; i++)
        if (s->sub[i] == GS_SUBGROUP_UNREDUCED) return idx[s->rank + i];
    return 0;
}
/* devices d and e hold summands of the same part of an unreduced value (s unreduced: they differ only along its
   unreduced devices) */
GS__FN bool gs__sh_same_sum(const gs_sharding *s, int64_t d, int64_t e) {
    int64_t a[GS_MAX_TILE_RANK], b[GS_MAX_TILE_RANK];
    int i;
    if (!s || s->kind == GS_SHARDING_UNREDUCED) return true;
    if (s->kind != GS_SHARDING_TILED) return d == e;
    if (!gs_sharding_device_index(s, d, a) || !gs_sharding_device_index(s, e, b)) return false;
    for (i = 0; i < s->ta.n; i++)
        if (a[i] != b[i] && !(i >= s->rank && s->sub[i - s->rank] == GS_SUBGROUP_UNREDUCED)) return false;
    return true;
}
GS_API int64_t gs_sharding_num_devices(const gs_sharding *s) {
    if (!s) return 0;
    if (s->kind == GS_SHARDING_TILED) return s->ta.total;
    return s->kind == GS_SHARDING_MAXIMAL ? 1 : 0;
}
GS_API int64_t gs_sharding_maximal_device(const gs_sharding *s) {
    return s && s->kind == GS_SHARDING_MAXIMAL ? s->device : -1;
}
GS_API int gs_sharding_tuple_size(const gs_sharding *s) { return s && s->kind == GS_SHARDING_TUPLE ? s->n_elems : 0; }
GS_API const gs_sharding *gs_sharding_tuple_elem(const gs_sharding *s, int i) {
    if (!s || s->kind != GS_SHARDING_TUPLE || i < 0 || i >= s->n_elems) return NULL;
    return s->elems[i];
}
GS_API int gs_sharding_tile_shape(const gs_sharding *s, int64_t *dims, gs_subgroup *sub) {
    int i;
    if (!s || s->kind != GS_SHARDING_TILED) return 0;
    for (i = 0; i < s->ta.n; i++) {
        if (dims) dims[i] = s->ta.dims[i];
        if (sub && i >= s->rank) sub[i - s->rank] = s->sub[i - s->rank];
    }
    return s->ta.n;
}
GS_API int64_t gs_sharding_device_at(const gs_sharding *s, const int64_t *index) {
    int i;
    if (!s) return -1;
    if (s->kind == GS_SHARDING_MAXIMAL) return s->device;
    if (s->kind != GS_SHARDING_TILED || !index) return -1;
    for (i = 0; i < s->ta.n; i++)
        if (index[i] < 0 || index[i] >= s->ta.dims[i]) return -1;
    return gs__ta_at(&s->ta, gs__ravel(s->ta.n, s->ta.dims, index));
}
GS_API bool gs_sharding_device_index(const gs_sharding *s, int64_t device, int64_t *index) {
    int64_t L;
    if (!s || s->kind != GS_SHARDING_TILED) return false;
    L = gs__ta_pos(&s->ta, device);
    if (L < 0) return false;
    if (index) gs__unravel(s->ta.n, s->ta.dims, L, index);
    return true;
}
GS_API void gs_sharding_devices(const gs_sharding *s, int64_t *out) {
    int64_t L;
    if (!s || !out) return;
    if (s->kind == GS_SHARDING_MAXIMAL) out[0] = s->device;
    if (s->kind != GS_SHARDING_TILED) return;
    for (L = 0; L < s->ta.total; L++) out[L] = gs__ta_at(&s->ta, L);
}

/* XLA tile math: shard size ceil(S/k), tile i covers [min(i*c, S), min((i+1)*c, S)). */
GS__FN int64_t gs__shard_size(int64_t S, int64_t k) { return k <= 1 ? S : (S + k - 1) / k; }
GS__FN void gs__tile_range(int64_t S, int64_t k, int64_t i, int64_t *off, int64_t *lim) {
    int64_t c = gs__shard_size(S, k);
    *off = GS__MIN(i * c, S);
    *lim = GS__MIN((i + 1) * c, S);
}

GS_API gs_result gs_sharding_validate(gs_ctx *ctx, const gs_sharding *s, gs_shape shape, int64_t num_devices) {
    return gs__sharding_validate(ctx, s, shape, num_devices, true);
}

/* gs_sharding_validate; cover: a tiled sharding must name every device (the partitioner's and the runtime's
   rule). Propagation alone does not need it: XLA propagates shardings over a subset of the devices. */
GS__FN gs_result gs__sharding_validate(gs_ctx *ctx, const gs_sharding *s, gs_shape shape, int64_t num_devices, bool cover) {
    if (!ctx) return GS_ERR_INVALID_ARG;
    if (!s) return gs__err(ctx, GS_ERR_SHARDING, "sharding is NULL");
    switch (s->kind) {
    case GS_SHARDING_TUPLE:
        return gs__err(ctx, GS_ERR_SHARDING, "a tuple sharding needs a tuple value");
    case GS_SHARDING_MAXIMAL:
        if (num_devices > 0 && s->device >= num_devices)
            return gs__err(ctx, GS_ERR_SHARDING, "maximal device %lld is out of range (%lld devices)",
                           (long long)s->device, (long long)num_devices);
        return GS_OK;
    case GS_SHARDING_TILED: {
        int64_t L;
        if (shape.dtype == GS_TUPLE) return gs__err(ctx, GS_ERR_SHARDING, "a tiled sharding on a tuple value");
        if (s->rank != shape.rank)
            return gs__err(ctx, GS_ERR_SHARDING, "sharding has %d data dims but the tensor has rank %d", s->rank,
                           shape.rank);
        if (num_devices > 0) {
            if (s->ta.total > num_devices)
                return gs__err(ctx, GS_ERR_SHARDING, "sharding needs %lld devices but only %lld exist",
                               (long long)s->ta.total, (long long)num_devices);
            if (s->ta.list) {
                for (L = 0; L < s->ta.total; L++)
                    if (s->ta.list[L] >= num_devices)
                        return gs__err(ctx, GS_ERR_SHARDING, "device %lld is out of range (%lld devices)",
                                       (long long)s->ta.list[L], (long long)num_devices);
            }
            /* as XLA: a tiled sharding names every device once; the rest would hold no part of the value */
            if (cover && s->ta.total < num_devices)
                return gs__err(ctx, GS_ERR_SHARDING, "sharding covers %lld of the %lld devices (a tiled sharding must "
                               "name every device once)", (long long)s->ta.total, (long long)num_devices);
        }
        return GS_OK;
    }
    default: return GS_OK;
    }
}

GS_API gs_result gs_sharding_shard_shape(gs_ctx *ctx, const gs_sharding *s, gs_shape full, gs_shape *shard) {
    int d;
    gs_result r;
    if (!ctx || !shard) return GS_ERR_INVALID_ARG;
    if ((r = gs_sharding_validate(ctx, s, full, 0)) != GS_OK) return r;
    *shard = full;
    if (s->kind == GS_SHARDING_TILED)
        for (d = 0; d < full.rank; d++) shard->dims[d] = gs__shard_size(full.dims[d], s->ta.dims[d]);
    return GS_OK;
}

GS_API bool gs_sharding_device_region(const gs_sharding *s, gs_shape full, int64_t device, int64_t *offset,
                                      int64_t *limit) {
    int d;
    int64_t idx[GS_MAX_TILE_RANK];
    if (!s || !offset || !limit || full.rank < 0 || full.rank > GS_MAX_RANK) return false;
    for (d = 0; d < full.rank; d++) {
        offset[d] = 0;
        limit[d] = full.dims[d];
    }
    switch (s->kind) {
    case GS_SHARDING_MAXIMAL:
        if (device == s->device) return true;
        for (d = 0; d < full.rank; d++) limit[d] = 0;
        return false;
    case GS_SHARDING_TILED:
        if (s->rank != full.rank || !gs_sharding_device_index(s, device, idx)) {
            for (d = 0; d < full.rank; d++) limit[d] = 0;
            return false;
        }
        for (d = 0; d < full.rank; d++) gs__tile_range(full.dims[d], s->ta.dims[d], idx[d], &offset[d], &limit[d]);
        return true;
    case GS_SHARDING_TUPLE: return false;
    default: return true;
    }
}

/* =========================================================================================================
   Equality
   ========================================================================================================= */
GS__FN bool gs__ta_same_iota(const gs__ta *a, const gs__ta *b) {
    int i;
    if (a->list || b->list || a->ir != b->ir) return false;
    for (i = 0; i < a->ir; i++)
        if (a->idims[i] != b->idims[i] || a->iperm[i] != b->iperm[i]) return false;
    return true;
}

GS_API bool gs_sharding_equal(const gs_sharding *a, const gs_sharding *b) {
    int i;
    if (a == b) return true;
    if (!a || !b) return false;
    if (a->kind != b->kind || a->group_kind != b->group_kind || a->group_id != b->group_id ||
        a->cse_prevention != b->cse_prevention)
        return false;
    switch (a->kind) {
    case GS_SHARDING_MAXIMAL: return a->device == b->device;
    case GS_SHARDING_TUPLE:
        if (a->n_elems != b->n_elems) return false;
        for (i = 0; i < a->n_elems; i++)
            if (!gs_sharding_equal(a->elems[i], b->elems[i])) return false;
        return true;
    case GS_SHARDING_TILED: {
        int64_t L, rep, g;
        if (a->rank != b->rank || a->n_sub != b->n_sub || a->ta.n != b->ta.n) return false;
        for (i = 0; i < a->n_sub; i++)
            if (a->sub[i] != b->sub[i]) return false;
        for (i = 0; i < a->ta.n; i++)
            if (a->ta.dims[i] != b->ta.dims[i]) return false;
        if (gs__ta_same_iota(&a->ta, &b->ta)) return true;
        rep = gs_sharding_replication(a);
        if (rep == 1) {
            for (L = 0; L < a->ta.total; L++)
                if (gs__ta_at(&a->ta, L) != gs__ta_at(&b->ta, L)) return false;
            return true;
        }
        /* partial replication: each replication group must hold the same set of devices */
        for (g = 0; g < a->ta.total; g += rep) {
            int64_t x, y;
            for (x = g; x < g + rep; x++) {
                int64_t d = gs__ta_at(&a->ta, x), pb = gs__ta_pos(&b->ta, d);
                (void)y;
                if (pb < 0 || pb / rep != g / rep) return false;
            }
        }
        return true;
    }
    default: return true;
    }
}

/* =========================================================================================================
   Text
   ========================================================================================================= */
/* the op_name of XLA's CSE-prevention sharding metadata (gs__is_cse_prevention) */
static const char gs__cse_prevention_name[] = "_sharding_propagation_cse_prevention";
GS__FN void gs__sh_print(gs__sb *sb, const gs_sharding *s) {
    int i;
    if (!s) {
        gs__sb_puts(sb, "{unknown}");
        return;
    }
    switch (s->kind) {
    case GS_SHARDING_UNKNOWN: gs__sb_puts(sb, "{unknown"); break;
    case GS_SHARDING_REPLICATED: gs__sb_puts(sb, "{replicated"); break;
    case GS_SHARDING_MANUAL: gs__sb_puts(sb, "{manual"); break;
    case GS_SHARDING_UNREDUCED: gs__sb_puts(sb, "{unreduced"); break;
    case GS_SHARDING_MAXIMAL: gs__sb_printf(sb, "{maximal device=%lld", (long long)s->device); break;
    case GS_SHARDING_TUPLE:
        gs__sb_puts(sb, "{");
        for (i = 0; i < s->n_elems; i++) {
            if (i) gs__sb_puts(sb, ", ");
            if (i && i % 5 == 0) gs__sb_printf(sb, "/*index=%d*/", i);
            gs__sh_print(sb, s->elems[i]);
        }
        gs__sb_puts(sb, "}");
        return;
    case GS_SHARDING_TILED: {
        const gs__ta *t = &s->ta;
        int64_t L;
        gs__sb_puts(sb, "{devices=[");
        for (i = 0; i < t->n; i++) gs__sb_printf(sb, "%s%lld", i ? "," : "", (long long)t->dims[i]);
        gs__sb_puts(sb, "]");
        if (t->list) {
            for (L = 0; L < t->total; L++) gs__sb_printf(sb, "%s%lld", L ? "," : "", (long long)t->list[L]);
        } else {
            bool ident = true;
            gs__sb_puts(sb, "<=[");
            for (i = 0; i < t->ir; i++) {
                gs__sb_printf(sb, "%s%lld", i ? "," : "", (long long)t->idims[i]);
                if (t->iperm[i] != i) ident = false;
            }
            gs__sb_puts(sb, "]");
            if (!ident) {
                gs__sb_puts(sb, "T(");
                for (i = 0; i < t->ir; i++) gs__sb_printf(sb, "%s%d", i ? "," : "", t->iperm[i]);
                gs__sb_puts(sb, ")");
            }
        }
        if (s->n_sub == 1 && s->sub[0] == GS_SUBGROUP_REPLICATED) {
            gs__sb_puts(sb, " last_tile_dim_replicate");
        } else if (s->n_sub > 0) {
            gs__sb_puts(sb, " last_tile_dims={");
            for (i = 0; i < s->n_sub; i++)
                gs__sb_printf(sb, "%s%s", i ? ", " : "", s->sub[i] == GS_SUBGROUP_MANUAL ? "manual"
                                                         : s->sub[i] == GS_SUBGROUP_UNREDUCED ? "unreduced" : "replicated");
            gs__sb_puts(sb, "}");
        }
        break;
    }
    }
    if (s->group_kind) gs__sb_printf(sb, " %s %lld", s->group_kind == 1 ? "shard_as" : "shard_like", (long long)s->group_id);
    if (s->cse_prevention) gs__sb_printf(sb, " metadata={op_name=\"%s\"}", gs__cse_prevention_name);
    gs__sb_puts(sb, "}");
}

GS_API const char *gs_sharding_to_text(gs_ctx *ctx, const gs_sharding *s) {
    gs__sb sb;
    if (!ctx) return NULL;
    gs__sb_init(&sb, ctx);
    gs__sh_print(&sb, s);
    return gs__sb_finish(&sb, "gs_sharding_to_text");
}

/* ---- parser ---- */
typedef struct gs__shp {
    gs_ctx *ctx;
    const char *text, *p;
    bool failed;
    bool in_tuple;  /* tuple shardings are flat: '{' inside a tuple's element list is an error, not recursion */
    uint32_t open;  /* a named mesh's open dims ({?}, {'x', ?}: propagation may refine them) */
} gs__shp;

GS__FN void gs__shp_ws(gs__shp *P) {
    while (*P->p == ' ' || *P->p == '\t' || *P->p == '\n' || *P->p == '\r') P->p++;
}
GS__FN bool gs__shp_fail(gs__shp *P, const char *what) {
    /* long texts are cut to their first 80 characters so the message keeps its point */
    if (!P->failed)
        gs__err(P->ctx, GS_ERR_SHARDING, "sharding \"%.80s%s\", column %d: %s", P->text, strlen(P->text) > 80 ? "..." : "",
                (int)(P->p - P->text) + 1, what);
    P->failed = true;
    return false;
}
GS__FN bool gs__shp_ch(gs__shp *P, char c) {
    gs__shp_ws(P);
    if (*P->p != c) return false;
    P->p++;
    return true;
}
GS__FN bool gs__shp_word(gs__shp *P, const char *w) {
    size_t n = strlen(w);
    gs__shp_ws(P);
    if (strncmp(P->p, w, n) != 0) return false;
    if (P->p[n] == '_' || (P->p[n] >= 'a' && P->p[n] <= 'z') || (P->p[n] >= '0' && P->p[n] <= '9')) return false;
    P->p += n;
    return true;
}
GS__FN bool gs__shp_int(gs__shp *P, int64_t *out) {
    int64_t v = 0;
    bool neg = false;
    gs__shp_ws(P);
    if (*P->p == '-') { neg = true; P->p++; }
    if (*P->p < '0' || *P->p > '9') return gs__shp_fail(P, "expected an integer");
    while (*P->p >= '0' && *P->p <= '9') {
        if (v > (INT64_MAX - 9) / 10) return gs__shp_fail(P, "integer too large");
        v = v * 10 + (*P->p++ - '0');
    }
    *out = neg ? -v : v;
    return true;
}
/* [a,b,c] into out (at most cap) */
GS__FN bool gs__shp_list(gs__shp *P, int64_t *out, int cap, int *n) {
    *n = 0;
    if (!gs__shp_ch(P, '[')) return gs__shp_fail(P, "expected '['");
    if (gs__shp_ch(P, ']')) return true;
    for (;;) {
        if (*n >= cap) return gs__shp_fail(P, "too many dims");
        if (!gs__shp_int(P, &out[(*n)++])) return false;
        if (gs__shp_ch(P, ']')) return true;
        if (!gs__shp_ch(P, ',')) return gs__shp_fail(P, "expected ',' or ']'");
    }
}
/* skips a balanced {...} (metadata) */
GS__FN bool gs__shp_skip_braces(gs__shp *P) {
    int depth = 0;
    gs__shp_ws(P);
    if (*P->p != '{') return gs__shp_fail(P, "expected '{'");
    do {
        if (*P->p == 0) return gs__shp_fail(P, "unbalanced braces");
        if (*P->p == '"') {
            P->p++;
            while (*P->p && *P->p != '"') P->p += (*P->p == '\\' && P->p[1]) ? 2 : 1;
            if (!*P->p) return gs__shp_fail(P, "unterminated string");
        }
        if (*P->p == '{') depth++;
        if (*P->p == '}') depth--;
        P->p++;
    } while (depth > 0);
    return true;
}

/* the number of comma-separated integers at p (the explicit device list of a tiled sharding) */
GS__FN int64_t gs__shp_count_ids(const char *p) {
    int64_t n = 0;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
        if (*p == '-') p++;
        if (*p < '0' || *p > '9') return n;
        while (*p >= '0' && *p <= '9') p++;
        n++;
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
        if (*p != ',') return n;
        p++;
    }
}

GS__FN const gs_sharding *gs__shp_one(gs__shp *P);

/* XLA marks a sharding its propagation added only to keep common-subexpression elimination from merging two
   values with this metadata and nothing else (sharding_propagation.cc); [from, to) is the braces */
GS__FN bool gs__is_cse_prevention(const char *from, const char *to) {
    static const char want[] = "{op_name=\"_sharding_propagation_cse_prevention\"}";
    size_t n = 0;
    const char *p;
    for (p = from; p < to; p++) {   /* compare without blanks */
        if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') continue;
        if (n >= sizeof want - 1 || *p != want[n]) return false;
        n++;
    }
    return n == sizeof want - 1;
}

GS__FN bool gs__shp_trailer(gs__shp *P, gs_sharding *s) {
    for (;;) {
        int kind = gs__shp_word(P, "shard_as") ? 1 : gs__shp_word(P, "shard_like") ? 2 : 0;
        if (kind) {
            if (!gs__shp_int(P, &s->group_id)) return false;
            if (s->group_id < 0) return gs__shp_fail(P, "shard group id is negative");
            s->group_kind = kind;
        } else if (gs__shp_word(P, "metadata")) {
            const char *from, *to;
            if (!gs__shp_ch(P, '=')) return gs__shp_fail(P, "expected '=' after metadata");
            gs__shp_ws(P);
            from = P->p;
            if (!gs__shp_skip_braces(P)) return false;
            to = P->p;
            s->cse_prevention = gs__is_cse_prevention(from, to);
        } else {
            return true;
        }
    }
}

/* ---- XLA's named-mesh form: {mesh['x'=2,'y'=2], device_ids=(..), [{'x'}, {'y':(1)2}], replicated={'y'}} ----
   Each mesh axis is split into "fine" axes at every sub-axis boundary ('y':(pre)size is the part of y after
   the major factor pre, of that size). The devices, row-major over the mesh axes, are row-major over the
   fine axes too; the tile assignment lists the fine axes of dim 0, dim 1, ..., then the unused ones
   (replicated, implicitly or by replicated={...}) as a last replicated dim. So the form is XLA's iota tile
   assignment [tile dims..]<=[fine sizes]T(that order), or an explicit one through device_ids. */
#define GS__MESH_AXES 16

typedef struct gs__mesh {
    int n_axes, n_fine;
    char names[GS__MESH_AXES][32];
    int64_t size[GS__MESH_AXES];
    int64_t cut[GS__MESH_AXES][GS__MESH_AXES + 1];   /* per axis: 1 = c0 < c1 < ... = size */
    int n_cut[GS__MESH_AXES];
    int first_fine[GS__MESH_AXES];
    int64_t fine[GS__MESH_AXES];                     /* fine axis sizes, mesh order */
    bool used[GS__MESH_AXES];
} gs__mesh;

typedef struct gs__mesh_ref { int ax; int64_t pre, size; } gs__mesh_ref;

/* 'name' -> the axis index */
GS__FN bool gs__shp_mesh_name(gs__shp *P, gs__mesh *m, bool define, int *ax) {
    const char *s;
    size_t n;
    int i;
    if (!gs__shp_ch(P, '\'')) return gs__shp_fail(P, "expected a quoted mesh axis name");
    s = P->p;
    while (*P->p && *P->p != '\'') P->p++;
    n = (size_t)(P->p - s);
    if (!*P->p || n == 0 || n >= sizeof m->names[0]) return gs__shp_fail(P, "expected a mesh axis name (1 to 31 characters)");
    P->p++;
    for (i = 0; i < m->n_axes; i++)
        if (strlen(m->names[i]) == n && memcmp(m->names[i], s, n) == 0) break;
    if (define) {
        if (i < m->n_axes) return gs__shp_fail(P, "a mesh axis named twice");
        if (m->n_axes == GS__MESH_AXES) return gs__shp_fail(P, "more than 16 mesh axes");
        memcpy(m->names[i], s, n);
        m->names[i][n] = 0;
        m->n_axes++;
    } else if (i == m->n_axes) {
        return gs__shp_fail(P, "not an axis of the mesh");
    }
    *ax = i;
    return true;
}

/* 'x' or 'x':(pre)size */
GS__FN bool gs__shp_mesh_ref(gs__shp *P, gs__mesh *m, gs__mesh_ref *r) {
    if (!gs__shp_mesh_name(P, m, false, &r->ax)) return false;
    r->pre = 1;
    r->size = m->size[r->ax];
    if (gs__shp_ch(P, ':')) {
        if (!gs__shp_ch(P, '(') || !gs__shp_int(P, &r->pre) || !gs__shp_ch(P, ')') || !gs__shp_int(P, &r->size))
            return gs__shp_fail(P, "expected a sub-axis ':(pre)size'");
        if (r->pre < 1 || r->size < 1 || m->size[r->ax] % (r->pre * r->size) != 0)
            return gs__shp_fail(P, "the sub-axis does not divide its axis");
    }
    return true;
}

/* "{ref, ref, ...}" into refs[*n ..); with open (a dim's axes) a last '?' marks the dim open: "{?}", "{'x', ?}" */
GS__FN bool gs__shp_mesh_refs(gs__shp *P, gs__mesh *m, gs__mesh_ref *refs, int cap, int *n, bool *open) {
    if (!gs__shp_ch(P, '{')) return gs__shp_fail(P, "expected '{' and mesh axes");
    if (gs__shp_ch(P, '}')) return true;
    for (;;) {
        if (open && gs__shp_ch(P, '?')) {
            *open = true;
            return gs__shp_ch(P, '}') || gs__shp_fail(P, "expected '}' after '?' (an open dim ends its axes)");
        }
        if (*n == cap) return gs__shp_fail(P, "too many mesh axes");
        if (!gs__shp_mesh_ref(P, m, &refs[(*n)++])) return false;
        if (gs__shp_ch(P, '}')) return true;
        if (!gs__shp_ch(P, ',')) return gs__shp_fail(P, "expected ',' or '}'");
    }
}

/* splits the axes at every sub-axis boundary the refs name */
GS__FN bool gs__mesh_cut(gs__shp *P, gs__mesh *m, const gs__mesh_ref *refs, int n) {
    int a, i, k;
    for (a = 0; a < m->n_axes; a++) {
        m->cut[a][0] = 1;
        m->cut[a][1] = m->size[a];
        m->n_cut[a] = m->size[a] > 1 ? 2 : 1;
    }
    for (i = 0; i < n; i++) {
        int64_t pts[2];
        pts[0] = refs[i].pre;
        pts[1] = refs[i].pre * refs[i].size;
        for (k = 0; k < 2; k++) {
            int a2 = refs[i].ax, j, at = m->n_cut[a2];
            for (j = 0; j < m->n_cut[a2]; j++) {
                if (m->cut[a2][j] == pts[k]) break;
                if (m->cut[a2][j] > pts[k]) {
                    at = j;
                    break;
                }
            }
            if (j < m->n_cut[a2] && m->cut[a2][j] == pts[k]) continue;
            if (m->n_cut[a2] > GS__MESH_AXES) return gs__shp_fail(P, "too many sub-axes");
            memmove(&m->cut[a2][at + 1], &m->cut[a2][at], sizeof(int64_t) * (size_t)(m->n_cut[a2] - at));
            m->cut[a2][at] = pts[k];
            m->n_cut[a2]++;
        }
    }
    m->n_fine = 0;
    for (a = 0; a < m->n_axes; a++) {
        m->first_fine[a] = m->n_fine;
        for (k = 0; k + 1 < m->n_cut[a]; k++) {
            if (m->cut[a][k + 1] % m->cut[a][k] != 0) return gs__shp_fail(P, "sub-axes that overlap");
            if (m->n_fine == GS__MESH_AXES) return gs__shp_fail(P, "more than 16 mesh sub-axes");
            m->used[m->n_fine] = false;
            m->fine[m->n_fine++] = m->cut[a][k + 1] / m->cut[a][k];
        }
    }
    return true;
}

/* appends the fine axes of ref r to order[*n ..); false if one is used twice */
GS__FN bool gs__mesh_take(gs__shp *P, gs__mesh *m, const gs__mesh_ref *r, int *order, int *n, int64_t *tile) {
    int a = r->ax, k;
    for (k = 0; k + 1 < m->n_cut[a]; k++) {
        int f = m->first_fine[a] + k;
        if (m->cut[a][k] < r->pre || m->cut[a][k + 1] > r->pre * r->size) continue;
        if (m->used[f]) return gs__shp_fail(P, "a mesh axis shards two dims (or one twice)");
        m->used[f] = true;
        order[(*n)++] = f;
        *tile *= m->fine[f];
    }
    return true;
}

/* device_ids=(d0, d1, ...): one id per device of the mesh (heap array), or NULL with the error set */
GS__FN int64_t *gs__shp_mesh_ids(gs__shp *P, int64_t total) {
    int64_t *ids, n_ids = 0;
    if (!gs__shp_ch(P, '=') || !gs__shp_ch(P, '(')) {
        gs__shp_fail(P, "expected device_ids=(...)");
        return NULL;
    }
    ids = (int64_t *)gs__malloc(P->ctx, sizeof(int64_t) * (size_t)total);
    if (!ids) {
        P->failed = true;
        return NULL;
    }
    for (;;) {
        int64_t d;
        if (!gs__shp_int(P, &d) || n_ids == total || d < 0) {
            gs__free(P->ctx, ids);
            if (!P->failed) gs__shp_fail(P, "device_ids must list each of the mesh's devices");
            return NULL;
        }
        ids[n_ids++] = d;
        if (gs__shp_ch(P, ')')) break;
        if (!gs__shp_ch(P, ',')) {
            gs__free(P->ctx, ids);
            gs__shp_fail(P, "expected ',' or ')'");
            return NULL;
        }
    }
    (void)gs__shp_ch(P, ',');
    if (n_ids != total) {
        gs__free(P->ctx, ids);
        gs__shp_fail(P, "device_ids must list each of the mesh's devices");
        return NULL;
    }
    return ids;
}

/* the tile assignment: dims tiles (nd of them, then the unreduced and the replicated sizes), the fine axes in
   `order`; ids (may be NULL: the iota order) maps a mesh position to a device */
GS__FN const gs_sharding *gs__mesh_sharding(gs__shp *P, const gs__mesh *m, int nd, int64_t *tiles, const int *order,
                                            int n_order, int64_t total, int64_t unr_size, int64_t rep_size,
                                            const int64_t *ids) {
    gs_subgroup sub[2];
    const gs_sharding *s;
    int i, f, n_sub = 0;
    if (unr_size > 1) {
        tiles[nd + n_sub] = unr_size;
        sub[n_sub++] = GS_SUBGROUP_UNREDUCED;
    }
    if (rep_size > 1) {
        tiles[nd + n_sub] = rep_size;
        sub[n_sub++] = GS_SUBGROUP_REPLICATED;
    }
    if (!ids) {
        int perm[GS__MESH_AXES];
        for (i = 0; i < n_order; i++) perm[i] = order[i];
        s = gs_sharding_iota(P->ctx, nd + n_sub, tiles, m->n_fine, m->fine, perm, n_sub, sub);
    } else {
        /* position k of the tile assignment (row-major over the fine axes in `order`) -> mesh index */
        int64_t k, *dev = (int64_t *)gs__malloc(P->ctx, sizeof(int64_t) * (size_t)total);
        if (!dev) {
            P->failed = true;
            return NULL;
        }
        for (k = 0; k < total; k++) {
            int64_t rest = k, digit[GS__MESH_AXES], lin = 0;
            for (i = n_order - 1; i >= 0; i--) {
                digit[order[i]] = rest % m->fine[order[i]];
                rest /= m->fine[order[i]];
            }
            for (f = 0; f < m->n_fine; f++) lin = lin * m->fine[f] + digit[f];
            dev[k] = ids[lin];
        }
        s = gs_sharding_tiled(P->ctx, nd + n_sub, tiles, dev, n_sub, sub);
        gs__free(P->ctx, dev);
    }
    if (!s) P->failed = true;
    return s;
}

GS__FN const gs_sharding *gs__shp_mesh(gs__shp *P) {
    gs__mesh m;
    gs__mesh_ref refs[GS_MAX_TILE_RANK * GS__MESH_AXES + 2 * GS__MESH_AXES], rep[GS__MESH_AXES], unr[GS__MESH_AXES];
    int dim_first[GS_MAX_TILE_RANK + 1], nd = 0, nr = 0, nu = 0, n_refs = 0, order[GS__MESH_AXES], n_order = 0, i, f;
    int64_t tiles[GS_MAX_TILE_RANK], total = 1, rep_size = 1, unr_size = 1, *ids = NULL;
    const gs_sharding *s;
    memset(&m, 0, sizeof m);
    if (!gs__shp_ch(P, '[')) {
        gs__shp_fail(P, "expected '[' after mesh");
        return NULL;
    }
    for (;;) {
        int ax;
        if (!gs__shp_mesh_name(P, &m, true, &ax) || !gs__shp_ch(P, '=') || !gs__shp_int(P, &m.size[ax])) return NULL;
        if (m.size[ax] < 1 || m.size[ax] > ((int64_t)1 << 31)) {
            gs__shp_fail(P, "a mesh axis size must be >= 1");
            return NULL;
        }
        total *= m.size[ax];
        if (total > ((int64_t)1 << 31)) {
            gs__shp_fail(P, "the mesh holds more than 2^31 devices");
            return NULL;
        }
        if (gs__shp_ch(P, ']')) break;
        if (!gs__shp_ch(P, ',')) {
            gs__shp_fail(P, "expected ',' or ']'");
            return NULL;
        }
    }
    (void)gs__shp_ch(P, ',');
    if (gs__shp_word(P, "device_ids") && !(ids = gs__shp_mesh_ids(P, total))) return NULL;
    if (!gs__shp_ch(P, '[')) {
        gs__free(P->ctx, ids);
        gs__shp_fail(P, "expected '[' and one {axes} per dim");
        return NULL;
    }
    if (!gs__shp_ch(P, ']')) {
        for (;;) {
            if (nd == GS_MAX_RANK) {
                gs__free(P->ctx, ids);
                gs__shp_fail(P, "more dims than GS_MAX_RANK");
                return NULL;
            }
            bool open = false;
            dim_first[nd++] = n_refs;
            if (!gs__shp_mesh_refs(P, &m, refs, GS__COUNTOF(refs), &n_refs, &open)) {
                gs__free(P->ctx, ids);
                return NULL;
            }
            if (open) P->open |= 1u << (nd - 1);
            if (gs__shp_ch(P, ']')) break;
            if (!gs__shp_ch(P, ',')) {
                gs__free(P->ctx, ids);
                gs__shp_fail(P, "expected ',' or ']'");
                return NULL;
            }
        }
    }
    dim_first[nd] = n_refs;
    while (gs__shp_ch(P, ',')) {
        bool unreduced = gs__shp_word(P, "unreduced");
        if (!unreduced && !gs__shp_word(P, "replicated")) {
            gs__free(P->ctx, ids);
            gs__shp_fail(P, "expected replicated={...} or unreduced={...}");
            return NULL;
        }
        if (!gs__shp_ch(P, '=') || !gs__shp_mesh_refs(P, &m, unreduced ? unr : rep, GS__MESH_AXES, unreduced ? &nu : &nr, NULL)) {
            gs__free(P->ctx, ids);
            if (!P->failed) gs__shp_fail(P, "expected '={'");
            return NULL;
        }
    }
    /* split the axes, then order the fine axes: each dim's, the unreduced ones, then the rest (replicated) */
    memcpy(refs + n_refs, rep, sizeof(gs__mesh_ref) * (size_t)nr);
    memcpy(refs + n_refs + nr, unr, sizeof(gs__mesh_ref) * (size_t)nu);
    if (!gs__mesh_cut(P, &m, refs, n_refs + nr + nu)) {
        gs__free(P->ctx, ids);
        return NULL;
    }
    for (i = 0; i < nd; i++) {
        int k;
        tiles[i] = 1;
        for (k = dim_first[i]; k < dim_first[i + 1]; k++)
            if (!gs__mesh_take(P, &m, &refs[k], order, &n_order, &tiles[i])) {
                gs__free(P->ctx, ids);
                return NULL;
            }
    }
    for (i = 0; i < nu; i++)
        if (!gs__mesh_take(P, &m, &refs[n_refs + nr + i], order, &n_order, &unr_size)) {
            gs__free(P->ctx, ids);
            return NULL;
        }
    for (f = 0; f < m.n_fine; f++) {
        if (m.used[f]) continue;
        order[n_order++] = f;
        rep_size *= m.fine[f];
    }
    if (total / rep_size == 1) {   /* nothing is split: every device holds the whole */
        gs__free(P->ctx, ids);
        return gs_sharding_replicated(P->ctx);
    }
    s = gs__mesh_sharding(P, &m, nd, tiles, order, n_order, total, unr_size, rep_size, ids);
    gs__free(P->ctx, ids);
    return s;
}

GS__FN const gs_sharding *gs__shp_one(gs__shp *P) {
    const gs_sharding *s = NULL;
    if (!gs__shp_ch(P, '{')) {
        gs__shp_fail(P, "expected '{'");
        return NULL;
    }
    gs__shp_ws(P);
    if (*P->p == '{' || *P->p == '}') {
        /* tuple */
        const gs_sharding **elems = NULL;
        if (P->in_tuple) {
            gs__shp_fail(P, "a tuple sharding inside a tuple sharding (tuple shardings are flat)");
            return NULL;
        }
        P->in_tuple = true;
        if (!gs__shp_ch(P, '}')) {
            for (;;) {
                const gs_sharding *e;
                gs__shp_ws(P);
                if (P->p[0] == '/' && P->p[1] == '*') {
                    const char *end = strstr(P->p + 2, "*/");
                    if (!end) { gs__shp_fail(P, "unterminated comment"); break; }
                    P->p = end + 2;
                    continue;
                }
                e = gs__shp_one(P);
                if (!e) break;
                stbds_arrput(elems, e);
                if (gs__shp_ch(P, '}')) break;
                if (!gs__shp_ch(P, ',')) { gs__shp_fail(P, "expected ',' or '}' in a tuple sharding"); break; }
            }
        }
        P->in_tuple = false;
        if (!P->failed) s = gs_sharding_tuple(P->ctx, (int)stbds_arrlen(elems), elems);
        stbds_arrfree(elems);
        if (!s) P->failed = true;
        return s;
    }
    if (gs__shp_word(P, "replicated")) s = gs_sharding_replicated(P->ctx);
    else if (gs__shp_word(P, "manual")) s = gs_sharding_manual(P->ctx);
    else if (gs__shp_word(P, "unreduced")) s = gs_sharding_unreduced(P->ctx);
    else if (gs__shp_word(P, "unknown")) s = gs_sharding_unknown(P->ctx);
    else if (gs__shp_word(P, "mesh")) s = gs__shp_mesh(P);
    else if (gs__shp_word(P, "maximal")) {
        int64_t d;
        if (!gs__shp_word(P, "device") || !gs__shp_ch(P, '=')) { gs__shp_fail(P, "expected 'device='"); return NULL; }
        if (!gs__shp_int(P, &d)) return NULL;
        if (d < 0) { gs__shp_fail(P, "device id is negative"); return NULL; }
        s = gs_sharding_maximal(P->ctx, d);
    } else if (gs__shp_word(P, "devices")) {
        int64_t dims[GS_MAX_TILE_RANK], idims[GS_MAX_IOTA_RANK], pv[GS_MAX_IOTA_RANK], total, *ids = NULL;
        int nd, ni = 0, np = 0, n_sub = 0, i, perm[GS_MAX_IOTA_RANK];
        gs_subgroup sub[GS_MAX_TILE_RANK];
        bool iota = false;
        const char *at;
        if (!gs__shp_ch(P, '=')) { gs__shp_fail(P, "expected '=' after devices"); return NULL; }
        at = P->p;
        if (!gs__shp_list(P, dims, GS_MAX_TILE_RANK, &nd)) return NULL;
        if (nd == 0) { gs__shp_fail(P, "empty tile dims"); return NULL; }
        for (i = 0, total = 1; i < nd; i++) {
            if (dims[i] < 1 || dims[i] > ((int64_t)1 << 31) || total * dims[i] > ((int64_t)1 << 31)) {
                P->p = at;
                gs__shp_fail(P, "tile dims must be >= 1 and hold at most 2^31 devices");
                return NULL;
            }
            total *= dims[i];
        }
        gs__shp_ws(P);
        if (P->p[0] == '<' && P->p[1] == '=') {
            P->p += 2;
            iota = true;
            if (!gs__shp_list(P, idims, GS_MAX_IOTA_RANK, &ni)) return NULL;
            if (ni == 0) { gs__shp_fail(P, "empty iota reshape dims"); return NULL; }
            if (gs__shp_ch(P, 'T')) {
                if (!gs__shp_ch(P, '(')) { gs__shp_fail(P, "expected '(' after T"); return NULL; }
                for (;;) {
                    if (np >= GS_MAX_IOTA_RANK) { gs__shp_fail(P, "too many T dims"); return NULL; }
                    if (!gs__shp_int(P, &pv[np])) return NULL;
                    perm[np] = (int)pv[np];
                    np++;
                    if (gs__shp_ch(P, ')')) break;
                    if (!gs__shp_ch(P, ',')) { gs__shp_fail(P, "expected ',' or ')'"); return NULL; }
                }
                if (np != ni) { gs__shp_fail(P, "T(...) must have one entry per reshape dim"); return NULL; }
            } else {
                for (i = 0; i < ni; i++) perm[i] = i;
            }
        } else {
            int64_t k, given = gs__shp_count_ids(P->p);
            /* counted first, so the id array's size is bounded by the text's length, not by the tile dims */
            if (given != total) {
                char what[96];
                snprintf(what, sizeof what, "%lld ids expected, %lld given", (long long)total, (long long)given);
                gs__shp_fail(P, what);
                return NULL;
            }
            ids = (int64_t *)gs__malloc(P->ctx, sizeof(int64_t) * (size_t)total);
            if (!ids) { P->failed = true; return NULL; }
            for (k = 0; k < total; k++) {
                if (k && !gs__shp_ch(P, ',')) {
                    gs__shp_fail(P, "fewer device ids than the tile dims hold");
                    gs__free(P->ctx, ids);
                    return NULL;
                }
                if (!gs__shp_int(P, &ids[k])) { gs__free(P->ctx, ids); return NULL; }
            }
            gs__shp_ws(P);
            if (*P->p == ',') {
                gs__shp_fail(P, "more device ids than the tile dims hold");
                gs__free(P->ctx, ids);
                return NULL;
            }
        }
        if (total == 1) {
            gs__free(P->ctx, ids);
            gs__shp_fail(P, "a tiled sharding needs more than one device (use {maximal device=N})");
            return NULL;
        }
        if (gs__shp_word(P, "last_tile_dim_replicate")) {
            n_sub = 1;
            sub[0] = GS_SUBGROUP_REPLICATED;
        } else if (gs__shp_word(P, "last_tile_dims")) {
            if (!gs__shp_ch(P, '=') || !gs__shp_ch(P, '{')) {
                gs__free(P->ctx, ids);
                gs__shp_fail(P, "expected '={' after last_tile_dims");
                return NULL;
            }
            for (;;) {
                if (n_sub >= nd) { gs__free(P->ctx, ids); gs__shp_fail(P, "more subgroup types than tile dims"); return NULL; }
                if (gs__shp_word(P, "manual")) sub[n_sub++] = GS_SUBGROUP_MANUAL;
                else if (gs__shp_word(P, "replicated")) sub[n_sub++] = GS_SUBGROUP_REPLICATED;
                else if (gs__shp_word(P, "unreduced")) sub[n_sub++] = GS_SUBGROUP_UNREDUCED;
                else { gs__free(P->ctx, ids); gs__shp_fail(P, "expected 'manual', 'unreduced' or 'replicated'"); return NULL; }
                if (gs__shp_ch(P, '}')) break;
                if (!gs__shp_ch(P, ',')) { gs__free(P->ctx, ids); gs__shp_fail(P, "expected ',' or '}'"); return NULL; }
            }
        }
        if (n_sub > nd) { gs__free(P->ctx, ids); gs__shp_fail(P, "more subgroup dims than tile dims"); return NULL; }
        s = iota ? gs_sharding_iota(P->ctx, nd, dims, ni, idims, perm, n_sub, sub)
                 : gs_sharding_tiled(P->ctx, nd, dims, ids, n_sub, sub);
        gs__free(P->ctx, ids);
    } else {
        gs__shp_fail(P, "expected replicated, manual, unreduced, unknown, maximal, devices= or mesh[...]");
        return NULL;
    }
    if (!s) {
        P->failed = true;
        return NULL;
    }
    {
        /* shard_as / shard_like make a different sharding: change a copy */
        gs_sharding t = *s;
        if (!gs__shp_trailer(P, &t)) return NULL;
        if ((t.group_kind || t.cse_prevention) && !(s = gs__sh_intern(P->ctx, &t))) {
            P->failed = true;
            return NULL;
        }
    }
    if (!gs__shp_ch(P, '}')) {
        gs__shp_fail(P, "expected '}'");
        return NULL;
    }
    return s;
}

GS_API const gs_sharding *gs_sharding_parse(gs_ctx *ctx, const char *text) { return gs__sharding_parse_open(ctx, text, NULL); }

GS__FN const gs_sharding *gs__sharding_parse_open(gs_ctx *ctx, const char *text, uint32_t *open) {
    gs__shp P;
    const gs_sharding *s;
    if (open) *open = 0;
    if (!ctx || ctx->err) return NULL;
    if (!text) {
        gs__err(ctx, GS_ERR_SHARDING, "gs_sharding_parse: text is NULL");
        return NULL;
    }
    P.ctx = ctx;
    P.text = text;
    P.p = text;
    P.failed = false;
    P.in_tuple = false;
    P.open = 0;
    s = gs__shp_one(&P);
    if (!s) {
        if (!ctx->err) gs__err(ctx, GS_ERR_SHARDING, "sharding \"%s\": invalid", text);
        return NULL;
    }
    gs__shp_ws(&P);
    if (*P.p) {
        gs__shp_fail(&P, "unexpected text after the sharding");
        return NULL;
    }
    /* open dims of an array's sharding (a tuple element's are not kept: its dims stay as given) */
    if (open && s->kind != GS_SHARDING_TUPLE) *open = P.open;
    return s;
}

/* =========================================================================================================
   Meshes and PartitionSpecs
   ========================================================================================================= */
GS_API const gs_mesh *gs_mesh_new(gs_ctx *ctx, int n_axes, const char *const *names, const int64_t *sizes,
                                  const int64_t *devices) {
    gs_mesh *m;
    int i, j;
    if (!ctx || ctx->err) return NULL;
    if (n_axes < 1 || n_axes > GS_MAX_IOTA_RANK || !sizes) {
        gs__err(ctx, GS_ERR_SHARDING, "gs_mesh_new: %d axes (1..%d allowed)", n_axes, GS_MAX_IOTA_RANK);
        return NULL;
    }
    m = (gs_mesh *)gs__arena_alloc(ctx, sizeof(gs_mesh));
    if (!m) return NULL;
    m->n_axes = n_axes;
    m->total = 1;
    for (i = 0; i < n_axes; i++) {
        const char *nm = names ? names[i] : NULL;
        int64_t total;
        if (sizes[i] < 1 || !gs__mul64(m->total, sizes[i], &total) || total > ((int64_t)1 << 31)) {
            gs__err(ctx, GS_ERR_SHARDING, "gs_mesh_new: axis %d has size %lld", i, (long long)sizes[i]);
            return NULL;
        }
        m->sizes[i] = sizes[i];
        m->total *= sizes[i];
        if (nm) {
            const char *c;
            if (!*nm) { gs__err(ctx, GS_ERR_SHARDING, "gs_mesh_new: axis %d has an empty name", i); return NULL; }
            for (c = nm; *c; c++)
                if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_')) {
                    gs__err(ctx, GS_ERR_SHARDING, "gs_mesh_new: axis name \"%s\" (letters, digits and '_' only)", nm);
                    return NULL;
                }
            if (strcmp(nm, "None") == 0 || strcmp(nm, "_") == 0) {
                gs__err(ctx, GS_ERR_SHARDING, "gs_mesh_new: \"%s\" is reserved, not an axis name", nm);
                return NULL;
            }
            for (j = 0; j < i; j++)
                if (strcmp(m->names[j], nm) == 0) {
                    gs__err(ctx, GS_ERR_SHARDING, "gs_mesh_new: axis name \"%s\" is used twice", nm);
                    return NULL;
                }
            m->names[i] = gs__arena_strdup(ctx, nm);
        } else {
            m->names[i] = gs__arena_printf(ctx, "a%d", i);
        }
        if (!m->names[i]) return NULL;
    }
    gs__ta_iota(&m->ta, n_axes, m->sizes);
    if (devices) {
        m->ta.list = (const int64_t *)gs__arena_dup(ctx, devices, sizeof(int64_t) * (size_t)m->total);
        if (!m->ta.list || gs__ta_index(ctx, &m->ta, "gs_mesh_new") != GS_OK) return NULL;
    }
    return m;
}
GS_API int gs_mesh_num_axes(const gs_mesh *m) { return m ? m->n_axes : 0; }
GS_API int64_t gs_mesh_axis_size(const gs_mesh *m, int axis) {
    return m && axis >= 0 && axis < m->n_axes ? m->sizes[axis] : 0;
}
GS_API const char *gs_mesh_axis_name(const gs_mesh *m, int axis) {
    return m && axis >= 0 && axis < m->n_axes ? m->names[axis] : NULL;
}
GS_API int64_t gs_mesh_num_devices(const gs_mesh *m) { return m ? m->total : 0; }

/* axes[d][0..n_axes_of[d]) are the mesh axes of tensor dim d (major to minor). */
GS__FN const gs_sharding *gs__mesh_build(gs_ctx *ctx, const gs_mesh *m, int rank, const int *n_of,
                                         int (*axes)[GS_MAX_IOTA_RANK], const char *who) {
    int perm[GS_MAX_IOTA_RANK], np = 0, d, k, a;
    bool used[GS_MAX_IOTA_RANK];
    gs__ta t;
    gs_subgroup rep = GS_SUBGROUP_REPLICATED;
    int64_t rest = 1;
    memset(used, 0, sizeof used);
    for (d = 0; d < rank; d++)
        for (k = 0; k < n_of[d]; k++) {
            a = axes[d][k];
            if (used[a]) {
                gs__err(ctx, GS_ERR_SHARDING, "%s: mesh axis \"%s\" is used twice", who, m->names[a]);
                return NULL;
            }
            used[a] = true;
            perm[np++] = a;
        }
    for (a = 0; a < m->n_axes; a++)
        if (!used[a]) {
            perm[np++] = a;
            rest *= m->sizes[a];
        }
    if (gs__ta_transpose(ctx, &m->ta, perm, &t) != GS_OK) return NULL;
    /* reshape: one tile dim per tensor dim (product of its axes), then the unused axes as one group */
    for (d = 0, a = 0; d < rank; d++) {
        int64_t p = 1;
        for (k = 0; k < n_of[d]; k++) p *= m->sizes[axes[d][k]];
        t.dims[d] = p;
    }
    t.dims[rank] = rest;
    t.n = rank + 1;
    return gs__sh_from_ta(ctx, rank, 1, &rep, &t);
}

GS_API const gs_sharding *gs_mesh_sharding_dims(gs_ctx *ctx, const gs_mesh *m, int rank, const int *dims_mapping) {
    int n_of[GS_MAX_RANK], axes[GS_MAX_RANK][GS_MAX_IOTA_RANK], d;
    if (!ctx || ctx->err) return NULL;
    if (!m || rank < 0 || rank > GS_MAX_RANK || (rank > 0 && !dims_mapping)) {
        gs__err(ctx, GS_ERR_SHARDING, "gs_mesh_sharding_dims: bad arguments (mesh %s, rank %d)", m ? "ok" : "NULL", rank);
        return NULL;
    }
    for (d = 0; d < rank; d++) {
        n_of[d] = 0;
        if (dims_mapping[d] < -1 || dims_mapping[d] >= m->n_axes) {
            gs__err(ctx, GS_ERR_SHARDING, "gs_mesh_sharding_dims: dim %d maps to mesh axis %d (the mesh has %d)", d,
                    dims_mapping[d], m->n_axes);
            return NULL;
        }
        if (dims_mapping[d] >= 0) axes[d][n_of[d]++] = dims_mapping[d];
    }
    return gs__mesh_build(ctx, m, rank, n_of, axes, "gs_mesh_sharding_dims");
}

GS__FN int gs__mesh_axis(const gs_mesh *m, const char *name, size_t n) {
    int a;
    for (a = 0; a < m->n_axes; a++)
        if (strlen(m->names[a]) == n && strncmp(m->names[a], name, n) == 0) return a;
    return -1;
}

GS_API const gs_sharding *gs_mesh_sharding(gs_ctx *ctx, const gs_mesh *m, int rank, const char *spec,
                                           uint32_t *open_dims) {
    int n_of[GS_MAX_RANK], axes[GS_MAX_RANK][GS_MAX_IOTA_RANK], d = 0;
    uint32_t open = 0;
    const char *p = spec;
    if (!ctx || ctx->err) return NULL;
    if (!m || !spec || rank < 0 || rank > GS_MAX_RANK) {
        gs__err(ctx, GS_ERR_SHARDING, "gs_mesh_sharding: bad arguments");
        return NULL;
    }
#define GS__SPEC_FAIL(...) do { gs__err(ctx, GS_ERR_SHARDING, __VA_ARGS__); return NULL; } while (0)
    for (;;) {
        bool paren = false;
        while (*p == ' ') p++;
        if (*p == 0 && d == 0 && rank == 0) break;
        if (d >= rank) GS__SPEC_FAIL("gs_mesh_sharding: spec \"%s\" has more entries than the tensor's rank %d", spec, rank);
        n_of[d] = 0;
        if (*p == '(') { paren = true; p++; }
        for (;;) {
            const char *w;
            size_t n;
            while (*p == ' ') p++;
            w = p;
            while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_') p++;
            n = (size_t)(p - w);
            if (n == 0 && *p == '?' && !paren) {
                p++;
                open |= 1u << d;
            } else if (n == 0) {
                GS__SPEC_FAIL("gs_mesh_sharding: spec \"%s\", column %d: expected an axis name, '_', 'None' or '?'",
                              spec, (int)(p - spec) + 1);
            } else if ((n == 1 && w[0] == '_') || (n == 4 && strncmp(w, "None", 4) == 0)) {
                if (paren) GS__SPEC_FAIL("gs_mesh_sharding: spec \"%s\": '%.*s' inside parentheses", spec, (int)n, w);
            } else {
                int a = gs__mesh_axis(m, w, n);
                if (a < 0) GS__SPEC_FAIL("gs_mesh_sharding: spec \"%s\": the mesh has no axis \"%.*s\"", spec, (int)n, w);
                if (n_of[d] >= m->n_axes) /* the mesh has at most GS_MAX_IOTA_RANK axes, each usable once */
                    GS__SPEC_FAIL("gs_mesh_sharding: spec \"%s\": entry %d names more axes than the mesh's %d", spec, d,
                                  m->n_axes);
                axes[d][n_of[d]++] = a;
            }
            while (*p == ' ') p++;
            if (!paren) break;
            if (*p == ',') { p++; continue; }
            if (*p == ')') { p++; break; }
            GS__SPEC_FAIL("gs_mesh_sharding: spec \"%s\", column %d: expected ',' or ')'", spec, (int)(p - spec) + 1);
        }
        d++;
        while (*p == ' ') p++;
        if (*p == 0) break;
        if (*p != ',') GS__SPEC_FAIL("gs_mesh_sharding: spec \"%s\", column %d: expected ','", spec, (int)(p - spec) + 1);
        p++;
    }
    if (d != rank) GS__SPEC_FAIL("gs_mesh_sharding: spec \"%s\" has %d entries but the tensor has rank %d", spec, d, rank);
#undef GS__SPEC_FAIL
    if (open_dims) *open_dims = open;
    return gs__mesh_build(ctx, m, rank, n_of, axes, "gs_mesh_sharding");
}

/* =========================================================================================================
   Values and annotations
   ========================================================================================================= */
GS_API const gs_sharding *gs_value_sharding(const gs_value *v) { return v ? v->sharding : NULL; }
GS_API uint32_t gs_value_open_dims(const gs_value *v) { return v ? v->open_dims : 0; }

/* Checks s against v's shape (tuples element by element) and the graph's partition count. */
GS__FN gs_result gs__check_value_sharding(gs_value *v, const gs_sharding *s) {
    gs_ctx *ctx = v->graph->ctx;
    int64_t nd = v->graph->num_partitions > 1 ? v->graph->num_partitions : 0;
    if (s->kind == GS_SHARDING_TUPLE) {
        int i;
        if (v->shape.dtype != GS_TUPLE)
            return gs__err(ctx, GS_ERR_SHARDING, "%s: a tuple sharding on an array value", v->name);
        if (s->n_elems != v->n_tuple)
            return gs__err(ctx, GS_ERR_SHARDING, "%s: tuple sharding has %d elements, the value %d", v->name,
                           s->n_elems, v->n_tuple);
        for (i = 0; i < s->n_elems; i++) {
            if (s->elems[i]->kind == GS_SHARDING_TILED && gs_sharding_validate(ctx, s->elems[i], v->tuple[i], nd) != GS_OK)
                return gs__err_prefix(ctx, "%s: tuple element %d: ", v->name, i);
        }
        return GS_OK;
    }
    if (v->shape.dtype == GS_TUPLE && s->kind == GS_SHARDING_TILED)
        return gs__err(ctx, GS_ERR_SHARDING, "%s: a tiled sharding on a tuple value (give one per element)", v->name);
    if (gs_sharding_validate(ctx, s, v->shape, nd) != GS_OK) return gs__err_prefix(ctx, "%s: ", v->name);
    return GS_OK;
}

GS_API gs_result gs_value_set_sharding(gs_value *v, const gs_sharding *s) {
    gs_result r;
    if (!v) return GS_ERR_INVALID_ARG;
    if (v->graph->ctx->err) return v->graph->ctx->err;
    if (s && (r = gs__check_value_sharding(v, s)) != GS_OK) return r;
    v->sharding = s;
    v->sharding_user = s != NULL;
    v->open_dims = 0;
    v->open_text = NULL;
    v->open_sh = NULL;
    GS__ZERO(v->origin);
    if (s) {
        v->origin.kind = GS_ORIGIN_USER;
        v->origin.source = v;
    }
    return GS_OK;
}

GS_API const char *gs_value_sharding_text(const gs_value *v) {
    if (!v || !v->sharding) return NULL;
    return gs_sharding_to_text(v->graph->ctx, v->sharding);
}

GS_API gs_result gs_value_set_sharding_text(gs_value *v, const char *text) {
    const gs_sharding *s;
    uint32_t open;
    gs_result r;
    if (!v) return GS_ERR_INVALID_ARG;
    if (!text) return gs_value_set_sharding(v, NULL);
    s = gs__sharding_parse_open(v->graph->ctx, text, &open);
    if (!s) return gs__err_prefix(v->graph->ctx, "%s: ", v->name);
    if ((r = gs_value_set_sharding(v, s)) == GS_OK && open) {   /* a named mesh's {?} dims, and its text */
        v->open_dims = open;
        v->open_sh = s;
        if (!(v->open_text = gs__arena_strdup(v->graph->ctx, text))) return v->graph->ctx->err;
    }
    return r;
}

GS_API gs_result gs_value_set_open_dims(gs_value *v, uint32_t open_dims) {
    gs_ctx *ctx;
    if (!v) return GS_ERR_INVALID_ARG;
    ctx = v->graph->ctx;
    if (ctx->err) return ctx->err;
    if (v->op != GS_OP_ANNOTATE && v->op != GS_OP_TO_MANUAL && v->op != GS_OP_TO_FULL)
        return gs__err(ctx, GS_ERR_SHARDING, "%s: open dims belong on a sharding annotation or a manual conversion, not "
                       "on %s (a named-mesh sharding with '?' dims opens dims of any value)", v->name, gs_op_name(v->op));
    if (!v->sharding) return gs__err(ctx, GS_ERR_SHARDING, "%s: open dims need a sharding to refine", v->name);
    if (v->shape.dtype == GS_TUPLE) return gs__err(ctx, GS_ERR_SHARDING, "%s: open dims of a tuple value", v->name);
    if (open_dims && (v->shape.rank >= 32 ? 0 : open_dims >> v->shape.rank) != 0)
        return gs__err(ctx, GS_ERR_SHARDING, "%s: open dims 0x%x outside rank %d", v->name, (unsigned)open_dims,
                       v->shape.rank);
    v->open_dims = open_dims;
    v->open_text = NULL;   /* printed as unspecified_dims */
    v->open_sh = NULL;
    return GS_OK;
}

/* the custom-calls that carry a sharding as text: annotate, to-manual (full -> shard), to-full (shard -> full) */
GS__FN gs_value *gs__custom(gs_graph *g, gs_op op, gs_value *x, const gs_shape *shape, const char *sharding) {
    gs_value *v = gs__value_new(g, op, 1, &x);
    if (!v) return NULL;
    if (shape) v->shape = *shape;
    v = gs__finish(v);
    if (v && sharding && gs_value_set_sharding_text(v, sharding) != GS_OK) return NULL;
    return v;
}
GS_API gs_value *gs_annotate(gs_graph *g, gs_value *x, const char *sharding_text) {
    if (g && !g->ctx->err && x && !sharding_text) {
        gs__err(g->ctx, GS_ERR_SHARDING, "gs_annotate: sharding text is NULL");
        return NULL;
    }
    return gs__custom(g, GS_OP_ANNOTATE, x, NULL, sharding_text);
}
GS_API gs_value *gs_to_manual(gs_graph *g, gs_value *x, gs_shape shard_shape, const char *sharding_text) {
    return gs__custom(g, GS_OP_TO_MANUAL, x, &shard_shape, sharding_text);
}
GS_API gs_value *gs_to_full(gs_graph *g, gs_value *x, gs_shape full_shape, const char *sharding_text) {
    return gs__custom(g, GS_OP_TO_FULL, x, &full_shape, sharding_text);
}

/* annotation builders (the "Sharding" custom-call) */
GS__FN gs_value *gs__annotation(gs_graph *g, gs_value *x, const gs_sharding *s, uint32_t open) {
    gs_value *v;
    if (!g || !x || g->ctx->err) return NULL;
    if (!s) {
        if (!g->ctx->err) gs__err(g->ctx, GS_ERR_SHARDING, "annotation of %s: sharding is NULL", x->name);
        return NULL;
    }
    if (open && (x->shape.dtype == GS_TUPLE || (x->shape.rank < 32 && (open >> x->shape.rank) != 0))) {
        gs__err(g->ctx, GS_ERR_SHARDING, "annotation of %s: open dims 0x%x outside rank %d", x->name, (unsigned)open,
                x->shape.rank);
        return NULL;
    }
    v = gs__custom(g, GS_OP_ANNOTATE, x, NULL, NULL);
    if (!v) return NULL;
    if (gs_value_set_sharding(v, s) != GS_OK) return NULL;
    v->open_dims = open;
    return v;
}

GS_API gs_value *gs_annotate_sharding(gs_graph *g, gs_value *x, const gs_sharding *s) { return gs__annotation(g, x, s, 0); }
GS_API gs_value *gs_annotate_open(gs_graph *g, gs_value *x, const gs_sharding *s, uint32_t open_dims) {
    return gs__annotation(g, x, s, open_dims);
}
GS_API gs_value *gs_replicate(gs_graph *g, gs_value *x) {
    if (!g || !x || g->ctx->err) return NULL;
    return gs__annotation(g, x, gs_sharding_replicated(g->ctx), 0);
}
GS_API gs_value *gs_split(gs_graph *g, gs_value *x, int64_t dim, int64_t n) {
    int64_t dims[GS_MAX_RANK];
    int d;
    if (!g || !x || g->ctx->err) return NULL;
    if (x->shape.dtype == GS_TUPLE || dim < 0 || dim >= x->shape.rank) {
        gs__err(g->ctx, GS_ERR_SHARDING, "gs_split(%s): dim %lld is out of range for rank %d", x->name, (long long)dim,
                x->shape.dtype == GS_TUPLE ? 0 : x->shape.rank);
        return NULL;
    }
    if (n < 1) {
        gs__err(g->ctx, GS_ERR_SHARDING, "gs_split(%s): %lld parts", x->name, (long long)n);
        return NULL;
    }
    if (n == 1) return gs_replicate(g, x);
    for (d = 0; d < x->shape.rank; d++) dims[d] = d == dim ? n : 1;
    return gs__annotation(g, x, gs_sharding_tiled(g->ctx, x->shape.rank, dims, NULL, 0, NULL), 0);
}
GS_API gs_value *gs_shard(gs_graph *g, gs_value *x, const int64_t *tiles, const int64_t *devices) {
    if (!g || !x || g->ctx->err) return NULL;
    if (x->shape.dtype == GS_TUPLE || x->shape.rank == 0) {
        gs__err(g->ctx, GS_ERR_SHARDING, "gs_shard(%s): needs an array of rank >= 1", x->name);
        return NULL;
    }
    if (tiles && gs__prod64(x->shape.rank, tiles) == 1) return gs_replicate(g, x);
    return gs__annotation(g, x, gs_sharding_tiled(g->ctx, x->shape.rank, tiles, devices, 0, NULL), 0);
}
GS_API gs_value *gs_shard_partial(gs_graph *g, gs_value *x, const int64_t *tiles, int64_t replicas,
                                  const int64_t *devices) {
    int64_t dims[GS_MAX_TILE_RANK];
    gs_subgroup rep = GS_SUBGROUP_REPLICATED;
    int d;
    if (!g || !x || g->ctx->err) return NULL;
    if (x->shape.dtype == GS_TUPLE || !tiles) {
        gs__err(g->ctx, GS_ERR_SHARDING, "gs_shard_partial(%s): needs an array and tile counts", x->name);
        return NULL;
    }
    for (d = 0; d < x->shape.rank; d++) dims[d] = tiles[d];
    dims[x->shape.rank] = replicas;
    return gs__annotation(g, x, gs_sharding_tiled(g->ctx, x->shape.rank + 1, dims, devices, 1, &rep), 0);
}
GS_API gs_value *gs_mesh_split(gs_graph *g, gs_value *x, const gs_mesh *m, const char *spec) {
    uint32_t open = 0;
    const gs_sharding *s;
    if (!g || !x || g->ctx->err) return NULL;
    if (x->shape.dtype == GS_TUPLE) {
        gs__err(g->ctx, GS_ERR_SHARDING, "gs_mesh_split(%s): needs an array", x->name);
        return NULL;
    }
    s = gs_mesh_sharding(g->ctx, m, x->shape.rank, spec, &open);
    return s ? gs__annotation(g, x, s, open) : NULL;
}

/* =========================================================================================================
   Visualisation
   ========================================================================================================= */
/* the devices holding data tile `tile` (row-major over data dims), as "0" or "0,4" (replication) */
GS__FN void gs__vis_devices(gs__sb *sb, const gs_sharding *s, int64_t tile) {
    int64_t per = s->ta.total / gs__prod64(s->rank, s->ta.dims), k;
    for (k = 0; k < per; k++) gs__sb_printf(sb, "%s%lld", k ? "," : "", (long long)gs__ta_at(&s->ta, tile * per + k));
}

GS_API const char *gs_sharding_visualize(gs_ctx *ctx, const gs_sharding *s, gs_shape full) {
    gs__sb sb;
    int d;
    if (!ctx || ctx->err) return NULL;
    if (!s) {
        gs__err(ctx, GS_ERR_SHARDING, "gs_sharding_visualize: sharding is NULL");
        return NULL;
    }
    if (gs_sharding_validate(ctx, s, full, 0) != GS_OK) return NULL;
    gs__sb_init(&sb, ctx);
    gs__sb_printf(&sb, "%s[", gs_dtype_name(full.dtype));
    for (d = 0; d < full.rank; d++) gs__sb_printf(&sb, "%s%lld", d ? "," : "", (long long)full.dims[d]);
    gs__sb_puts(&sb, "] ");
    gs__sh_print(&sb, s);
    gs__sb_puts(&sb, "\n");
    if (s->kind != GS_SHARDING_TILED) {
        switch (s->kind) {
        case GS_SHARDING_REPLICATED: gs__sb_puts(&sb, "every device holds the whole tensor\n"); break;
        case GS_SHARDING_MANUAL: gs__sb_puts(&sb, "manually partitioned: each device holds its own piece\n"); break;
        case GS_SHARDING_UNREDUCED: gs__sb_puts(&sb, "unreduced: every device holds a partial value of the whole tensor (their sum is the tensor)\n"); break;
        case GS_SHARDING_MAXIMAL:
            gs__sb_printf(&sb, "device %lld holds the whole tensor; no other device holds any of it\n", (long long)s->device);
            break;
        default: gs__sb_puts(&sb, "no sharding decided yet\n"); break;
        }
    } else {
        int64_t rep = gs_sharding_replication(s), man = gs_sharding_manual_group(s);
        gs_shape shard;
        shard = full;
        for (d = 0; d < full.rank; d++) {
            int64_t k = s->ta.dims[d], c = gs__shard_size(full.dims[d], k), i, off, lim;
            shard.dims[d] = c;
            if (k == 1) {
                gs__sb_printf(&sb, "dim %d: %lld, not split\n", d, (long long)full.dims[d]);
                continue;
            }
            gs__sb_printf(&sb, "dim %d: %lld split %lld ways, shards of %lld:", d, (long long)full.dims[d], (long long)k,
                          (long long)c);
            for (i = 0; i < k; i++) {
                gs__tile_range(full.dims[d], k, i, &off, &lim);
                gs__sb_printf(&sb, " [%lld,%lld)", (long long)off, (long long)lim);
                if (lim - off < c) gs__sb_printf(&sb, "(%lld valid)", (long long)(lim - off));
            }
            gs__sb_puts(&sb, "\n");
        }
        if (rep > 1) gs__sb_printf(&sb, "each tile is held by %lld devices (partial replication)\n", (long long)rep);
        if (man > 1) gs__sb_printf(&sb, "manual subgroups of %lld devices\n", (long long)man);
        if (full.rank <= 2 && full.rank >= 1) {
            int64_t rows = full.rank == 2 ? s->ta.dims[0] : 1, cols = s->ta.dims[full.rank - 1], r, c, w = 4;
            char cell[128];
            /* column width: the longest cell text */
            for (r = 0; r < rows; r++)
                for (c = 0; c < cols; c++) {
                    gs__sb tmp;
                    gs__sb_init(&tmp, ctx);
                    gs__vis_devices(&tmp, s, r * cols + c);
                    if (tmp.len + 4 > (size_t)w) w = (int64_t)tmp.len + 4;
                    gs__sb_free(&tmp);
                }
            for (c = 0; c < cols; c++) {
                int64_t off, lim;
                gs__tile_range(full.dims[full.rank - 1], cols, c, &off, &lim);
                snprintf(cell, sizeof cell, "%lld:%lld", (long long)off, (long long)lim);
                if ((int64_t)strlen(cell) + 2 > w) w = (int64_t)strlen(cell) + 2;
            }
            if (w > 60) w = 60;
            for (r = 0; r <= rows; r++) {
                gs__sb_puts(&sb, full.rank == 2 ? "           +" : "+");
                for (c = 0; c < cols; c++) {
                    int64_t k;
                    for (k = 0; k < w; k++) gs__sb_puts(&sb, "-");
                    gs__sb_puts(&sb, "+");
                }
                gs__sb_puts(&sb, "\n");
                if (r == rows) break;
                {
                    int64_t off, lim;
                    if (full.rank == 2) {
                        gs__tile_range(full.dims[0], rows, r, &off, &lim);
                        snprintf(cell, sizeof cell, "%lld:%lld", (long long)off, (long long)lim);
                        gs__sb_printf(&sb, "%10s |", cell);
                    } else {
                        gs__sb_puts(&sb, "|");
                    }
                }
                for (c = 0; c < cols; c++) {
                    gs__sb tmp;
                    gs__sb_init(&tmp, ctx);
                    gs__sb_puts(&tmp, "d ");
                    gs__vis_devices(&tmp, s, r * cols + c);
                    gs__sb_printf(&sb, " %-*.*s|", (int)w - 1, (int)w - 1, tmp.buf ? tmp.buf : "");
                    gs__sb_free(&tmp);
                }
                gs__sb_puts(&sb, "\n");
            }
            gs__sb_puts(&sb, full.rank == 2 ? "            " : " ");
            for (c = 0; c < cols; c++) {
                int64_t off, lim;
                gs__tile_range(full.dims[full.rank - 1], cols, c, &off, &lim);
                snprintf(cell, sizeof cell, "%lld:%lld", (long long)off, (long long)lim);
                gs__sb_printf(&sb, "%-*s", (int)w + 1, cell);
            }
            gs__sb_puts(&sb, "\n");
        } else {
            /* higher ranks: one line per data tile */
            int64_t ntiles = gs__prod64(s->rank, s->ta.dims), t, idx[GS_MAX_RANK];
            gs__sb_puts(&sb, "tile -> region, devices\n");
            for (t = 0; t < ntiles && t < 4096; t++) {
                int64_t off, lim;
                gs__unravel(s->rank, s->ta.dims, t, idx);
                gs__sb_puts(&sb, "  [");
                for (d = 0; d < s->rank; d++) {
                    gs__tile_range(full.dims[d], s->ta.dims[d], idx[d], &off, &lim);
                    gs__sb_printf(&sb, "%s%lld:%lld", d ? ", " : "", (long long)off, (long long)lim);
                }
                gs__sb_puts(&sb, "]  devices ");
                gs__vis_devices(&sb, s, t);
                gs__sb_puts(&sb, "\n");
            }
            if (ntiles > 4096) gs__sb_printf(&sb, "  ... %lld more tiles\n", (long long)(ntiles - 4096));
        }
        {
            char sh[256];
            int n = 0;
            n += snprintf(sh + n, sizeof sh - (size_t)n, "per-device shard: %s[", gs_dtype_name(full.dtype));
            for (d = 0; d < full.rank && n < (int)sizeof sh - 24; d++)
                n += snprintf(sh + n, sizeof sh - (size_t)n, "%s%lld", d ? "," : "", (long long)shard.dims[d]);
            snprintf(sh + n, sizeof sh - (size_t)n, "]");
            gs__sb_printf(&sb, "%s\n", sh);
        }
    }
    return gs__sb_finish(&sb, "gs_sharding_visualize");
}

/* =========================================================================================================
   Sharding algebra (used by propagation and the partitioner). All functions take tiled, replicated or
   manual array shardings; replicated and manual pass through unchanged where that is the right answer.
   ========================================================================================================= */
#define GS__MAX_FAC 24

/* factors: a refinement of ta->dims (each tile dim split into consecutive factors, major to minor), each with a
   destination: a data dim of the result, GS__DEST_MANUAL or GS__DEST_REP. Builds the sharding whose data dim j is
   the product of the factors sent to j (in order), followed by the manual and the replicated groups. */
typedef struct gs__fac {
    int n;
    int64_t size[GS__MAX_FAC];
    int dest[GS__MAX_FAC];
} gs__fac;

GS__FN bool gs__fac_add(gs__fac *f, int64_t size, int dest) {
    if (size == 1) return true;
    if (f->n >= GS__MAX_FAC) return false;
    f->size[f->n] = size;
    f->dest[f->n] = dest;
    f->n++;
    return true;
}

GS__FN const gs_sharding *gs__sh_from_factors(gs_ctx *ctx, const gs__ta *ta, const gs__fac *f, int out_rank) {
    gs__ta src = *ta, t;
    int perm[GS__MAX_FAC], np = 0, i, j, n_sub = 0;
    int64_t man = 1, rep = 1;
    gs_subgroup sub[2];
    if (f->n > GS_MAX_IOTA_RANK) return NULL;
    /* the refinement is a reshape of the tile array: free in both forms */
    src.n = f->n;
    for (i = 0; i < f->n; i++) src.dims[i] = f->size[i];
    for (j = 0; j < out_rank; j++)
        for (i = 0; i < f->n; i++)
            if (f->dest[i] == j) perm[np++] = i;
    for (i = 0; i < f->n; i++)
        if (f->dest[i] == GS__DEST_MANUAL) { perm[np++] = i; man *= f->size[i]; }
    for (i = 0; i < f->n; i++)
        if (f->dest[i] == GS__DEST_REP) { perm[np++] = i; rep *= f->size[i]; }
    GSHARD_ASSERT(np == f->n);
    if (f->n == 0) {
        t = src;
    } else if (gs__ta_transpose(ctx, &src, perm, &t) != GS_OK) {
        return NULL;
    }
    t.n = out_rank;
    for (j = 0; j < out_rank; j++) {
        t.dims[j] = 1;
        for (i = 0; i < f->n; i++)
            if (f->dest[i] == j) t.dims[j] *= f->size[i];
    }
    if (man > 1) { t.dims[t.n++] = man; sub[n_sub++] = GS_SUBGROUP_MANUAL; }
    if (rep > 1) { t.dims[t.n++] = rep; sub[n_sub++] = GS_SUBGROUP_REPLICATED; }
    if (t.total == 1 || gs__prod64(out_rank, t.dims) == 1) {
        if (man > 1 && rep == 1) return gs_sharding_manual(ctx);
        if (man == 1) return gs_sharding_replicated(ctx);
    }
    return gs__sh_from_ta(ctx, out_rank, n_sub, sub, &t);
}

/* Moves data dim d's tiles to dest_of_dim[d] (a dim of a rank-out_rank result, or GS__DEST_REP to replicate
   them); result dims nobody targets get one tile. Covers transpose, partial replication, dropping and
   inserting dims, and mapping dot/broadcast/reduce dims. */
GS__FN const gs_sharding *gs__sh_map(gs_ctx *ctx, const gs_sharding *s, int out_rank, const int *dest_of_dim) {
    return gs__sh_map_man(ctx, s, out_rank, dest_of_dim, GS__DEST_MANUAL);
}

/* gs__sh_map with the manual group's tiles sent to man_dest: GS__DEST_MANUAL (kept manual), GS__DEST_REP (read
   as replication) or a data dim of the result (the manual dim treated as a data dim) */
GS__FN const gs_sharding *gs__sh_map_man(gs_ctx *ctx, const gs_sharding *s, int out_rank, const int *dest_of_dim,
                                         int man_dest) {
    gs__fac f;
    int d;
    if (!s || s->kind != GS_SHARDING_TILED) return s;
    f.n = 0;
    for (d = 0; d < s->rank; d++)
        if (!gs__fac_add(&f, s->ta.dims[d], dest_of_dim[d])) return NULL;
    for (d = 0; d < s->n_sub; d++)
        if (!gs__fac_add(&f, s->ta.dims[s->rank + d], s->sub[d] == GS_SUBGROUP_MANUAL ? man_dest : GS__DEST_REP))
            return NULL;
    /* size-1 factors were skipped: src dims must still match the refinement, so rebuild with them dropped */
    {
        gs__ta t = s->ta;
        int k = 0;
        for (d = 0; d < s->ta.n; d++)
            if (s->ta.dims[d] != 1) t.dims[k++] = s->ta.dims[d];
        t.n = k;
        return gs__sh_from_factors(ctx, &t, &f, out_rank);
    }
}

/* XLA PartiallyReplicateTiledShardingOnDims: the dims in mask stop being split; their devices join the
   replication groups. */
GS__FN const gs_sharding *gs__sh_replicate_dims(gs_ctx *ctx, const gs_sharding *s, uint32_t mask) {
    int dest[GS_MAX_RANK], d;
    if (!s || s->kind != GS_SHARDING_TILED) return s;
    for (d = 0; d < s->rank; d++) dest[d] = (mask >> d) & 1u ? GS__DEST_REP : d;
    return gs__sh_map(ctx, s, s->rank, dest);
}

/* Reverses the tile order along the dims in mask (XLA ReverseSharding). Materialises the device list. */
GS__FN const gs_sharding *gs__sh_reverse(gs_ctx *ctx, const gs_sharding *s, uint32_t mask) {
    gs__ta t;
    int64_t L, idx[GS_MAX_IOTA_RANK], *list;
    int d;
    bool any = false;
    if (!s || s->kind != GS_SHARDING_TILED) return s;
    for (d = 0; d < s->rank; d++)
        if (((mask >> d) & 1u) && s->ta.dims[d] > 1) any = true;
    if (!any) return s;
    t = s->ta;
    list = (int64_t *)gs__arena_alloc(ctx, sizeof(int64_t) * (size_t)t.total);
    if (!list) return NULL;
    for (L = 0; L < t.total; L++) {
        gs__unravel(t.n, t.dims, L, idx);
        for (d = 0; d < s->rank; d++)
            if ((mask >> d) & 1u) idx[d] = t.dims[d] - 1 - idx[d];
        list[L] = gs__ta_at(&s->ta, gs__ravel(t.n, t.dims, idx));
    }
    t.list = list;
    t.sorted = NULL;
    if (gs__ta_index(ctx, &t, "reverse") != GS_OK) return NULL;
    return gs__sh_from_ta(ctx, s->rank, s->n_sub, s->sub, &t);
}

/* XLA's reshape rule (ReshapeSharding), written as a factor walk. Source and target dims are grouped into
   the smallest runs with equal products; a run never decides another's factors, so a run that cannot keep its
   split does not cost the next one its split. Inside a run, going major to minor with E the source extent left,
   p its tiles left and T the target extent left: E == T moves all p tiles; otherwise g = gcd(p, T) tiles go to
   the target dim (E, p and T all divide by g), which covers splitting a dim (12 -> 4,3), merging a split major
   dim with unsplit minor ones (4,2 -> 8) and the partial matches between (12,8 -> 8,12 keeps gcd(2, 8) = 2 of a
   2-way split). Unsplit source extent is consumed by target dims that divide it, or merged with the next
   unsplit source dim. A split that does not divide its dim, a gcd of 1 or an unsplit remainder ahead of a split
   dim stops the run: its remaining tiles are replicated. Manual and replication groups stay. */
GS__FN int64_t gs__gcd(int64_t a, int64_t b) {
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* the run src[i0..i1) -> dst[j0..j1) of gs__sh_reshape: its factors appended to f; false when f is full */
GS__FN bool gs__sh_reshape_run(gs__fac *f, const gs_sharding *s, const gs_shape *src, const gs_shape *dst, int i0,
                               int i1, int j0, int j1) {
    int si = i0, tj = j0;
    int64_t E = src->dims[i0], p = s->ta.dims[i0], T = dst->dims[j0], g;
    bool stopped = false;
#define GS__RS_NEXT_SRC() do { if (++si < i1) { E = src->dims[si]; p = s->ta.dims[si]; } } while (0)
#define GS__RS_NEXT_DST() do { if (++tj < j1) T = dst->dims[tj]; } while (0)
    while (si < i1) {
        if (stopped || tj >= j1 || E == 1) {
            /* the run's rest, or a size-1 dim inside it: its tiles cannot stay */
            if (!gs__fac_add(f, p, GS__DEST_REP)) return false;
            GS__RS_NEXT_SRC();
        } else if (T == 1) {
            GS__RS_NEXT_DST();
        } else if (E == T) {
            if (!gs__fac_add(f, p, tj)) return false;
            GS__RS_NEXT_SRC();
            GS__RS_NEXT_DST();
        } else if (p == 1) {
            if (E % T == 0) {
                E /= T;
                GS__RS_NEXT_DST();
            } else if (si + 1 < i1 && s->ta.dims[si + 1] == 1) {
                E *= src->dims[++si];
            } else {
                stopped = true;
            }
        } else if (E % p != 0 || (g = gs__gcd(p, T)) == 1) {
            stopped = true;
        } else {
            if (!gs__fac_add(f, g, tj)) return false;
            E /= g;
            p /= g;
            T /= g;
        }
    }
#undef GS__RS_NEXT_SRC
#undef GS__RS_NEXT_DST
    return true;
}

GS__FN const gs_sharding *gs__sh_reshape(gs_ctx *ctx, const gs_sharding *s, const gs_shape *src, const gs_shape *dst) {
    gs__fac f;
    gs__ta t;
    int i = 0, j = 0, d, k;
    if (!s || s->kind != GS_SHARDING_TILED) return s;
    if (s->rank != src->rank) return NULL;
    f.n = 0;
    /* walk runs of equal product */
    while (i < src->rank || j < dst->rank) {
        int i0 = i, j0 = j;
        int64_t ps = 1, pt = 1;
        /* size-1 dims on their own: a split one lines up with a size-1 target dim at the same place, as in XLA */
        if (i < src->rank && src->dims[i] == 1) {
            bool pair = j < dst->rank && dst->dims[j] == 1;
            if (!gs__fac_add(&f, s->ta.dims[i], pair ? j : GS__DEST_REP)) return NULL;
            i++;
            j += pair;
            continue;
        }
        if (j < dst->rank && dst->dims[j] == 1) { j++; continue; }
        if (i >= src->rank || j >= dst->rank) {
            /* only size-1 dims can remain on one side: anything else is a malformed reshape */
            if (i < src->rank || j < dst->rank) return NULL;
            break;
        }
        ps = src->dims[i++];
        pt = dst->dims[j++];
        while (ps != pt) {
            if (ps < pt) {
                if (i >= src->rank) return NULL;
                ps *= src->dims[i++];
            } else {
                if (j >= dst->rank) return NULL;
                pt *= dst->dims[j++];
            }
        }
        if (!gs__sh_reshape_run(&f, s, src, dst, i0, i, j0, j)) return NULL;
    }
    for (d = 0; d < s->n_sub; d++)
        if (!gs__fac_add(&f, s->ta.dims[s->rank + d], s->sub[d] == GS_SUBGROUP_MANUAL ? GS__DEST_MANUAL : GS__DEST_REP))
            return NULL;
    /* the factors refine the tile array with its size-1 dims dropped */
    t = s->ta;
    for (d = 0, k = 0; d < s->ta.n; d++)
        if (s->ta.dims[d] != 1) t.dims[k++] = s->ta.dims[d];
    t.n = k;
    return gs__sh_from_factors(ctx, &t, &f, dst->rank);
}

/* Number of tiles counting the manual group (XLA NumTiles excludes replication only). */
GS__FN int64_t gs__sh_tiles(const gs_sharding *s) {
    if (!s || s->kind != GS_SHARDING_TILED) return 1;
    return s->ta.total / gs_sharding_replication(s);
}

/* XLA IsShardingMoreSpecific for array shardings. */
GS__FN bool gs__sh_more_specific(const gs_sharding *a, const gs_sharding *b) {
    if (!a) return false;
    if (!b || b->kind == GS_SHARDING_UNKNOWN) return a->kind != GS_SHARDING_UNKNOWN;
    if (a->kind == GS_SHARDING_MANUAL) return b->kind == GS_SHARDING_MAXIMAL;
    if (b->kind == GS_SHARDING_MANUAL) return false;
    if (b->kind == GS_SHARDING_TILED) return a->kind == GS_SHARDING_TILED && gs__sh_tiles(a) > gs__sh_tiles(b);
    if (b->kind == GS_SHARDING_REPLICATED) return a->kind == GS_SHARDING_TILED;
    if (b->kind == GS_SHARDING_MAXIMAL) return a->kind == GS_SHARDING_TILED;
    return false;
}

/* Fast merge for iota tile assignments (XLA's "method 1"): express both over one factorisation of the
   device ids and take each dim's factors from whichever sharding splits it. Returns NULL (no error) when the
   shardings do not decompose this way; the caller then tries the general method. */
typedef struct gs__dfac {
    int n;
    int64_t size[GS__MAX_FAC];   /* device-space factors, major to minor */
    int dim[GS__MAX_FAC];        /* tile dim each factor belongs to */
    int rank_in_dim[GS__MAX_FAC];/* position inside that tile dim's factor list (major first) */
} gs__dfac;

/* Device-space factors of an iota tile array; false when the tile dims and the iota's transposed shape have
   no common refinement. */
GS__FN bool gs__ta_device_factors(const gs__ta *t, gs__dfac *out) {
    int64_t fsz[GS__MAX_FAC];
    int fa[GS__MAX_FAC], ft[GS__MAX_FAC], nf, o, f, cnt[GS_MAX_IOTA_RANK];
    if (t->list || (nf = gs__ta_refine(t, fsz, fa, ft, GS__MAX_FAC)) < 0) return false;
    /* position of each factor inside its tile dim: factors are produced in tile (transposed) order */
    memset(cnt, 0, sizeof cnt);
    out->n = 0;
    {
        int rid[GS__MAX_FAC];
        for (f = 0; f < nf; f++) rid[f] = cnt[fa[f]]++;
        for (o = 0; o < t->ir; o++)
            for (f = 0; f < nf; f++)
                if (t->iperm[ft[f]] == o) {
                    out->size[out->n] = fsz[f];
                    out->dim[out->n] = fa[f];
                    out->rank_in_dim[out->n] = rid[f];
                    out->n++;
                }
    }
    return true;
}

/* After a split, each piece's position inside its tile dim: by the original factor's position (orig via
   from[]), then by split order, major first. */
GS__FN void gs__dfac_rerank(gs__dfac *r, const gs__dfac *orig, const int *from) {
    int f, k;
    for (f = 0; f < r->n; f++) {
        int pos = 0;
        for (k = 0; k < r->n; k++)
            if (r->dim[k] == r->dim[f] && (orig->rank_in_dim[from[k]] < orig->rank_in_dim[from[f]] ||
                                          (from[k] == from[f] && k < f)))
                pos++;
        r->rank_in_dim[f] = pos;
    }
}

/* Splits device factors so that a and b share one factorisation; false if impossible. */
GS__FN bool gs__dfac_common(gs__dfac *a, gs__dfac *b) {
    gs__dfac ra, rb;
    int i = 0, j = 0;
    int64_t x, y;
    int sub_a[GS__MAX_FAC], sub_b[GS__MAX_FAC]; /* for renumbering rank_in_dim */
    ra.n = rb.n = 0;
    if (a->n == 0 || b->n == 0) return a->n == b->n;
    x = a->size[0];
    y = b->size[0];
    while (i < a->n && j < b->n) {
        int64_t g;
        if (ra.n >= GS__MAX_FAC) return false;
        if (x % y == 0) g = y;
        else if (y % x == 0) g = x;
        else return false;
        ra.size[ra.n] = g; ra.dim[ra.n] = a->dim[i]; ra.rank_in_dim[ra.n] = a->rank_in_dim[i]; sub_a[ra.n] = i; ra.n++;
        rb.size[rb.n] = g; rb.dim[rb.n] = b->dim[j]; rb.rank_in_dim[rb.n] = b->rank_in_dim[j]; sub_b[rb.n] = j; rb.n++;
        x /= g;
        y /= g;
        if (x == 1 && ++i < a->n) x = a->size[i];
        if (y == 1 && ++j < b->n) y = b->size[j];
    }
    gs__dfac_rerank(&ra, a, sub_a);
    gs__dfac_rerank(&rb, b, sub_b);
    *a = ra;
    *b = rb;
    return true;
}

GS__FN const gs_sharding *gs__sh_merge_iota(gs_ctx *ctx, const gs_sharding *a, const gs_sharding *b, bool *tried) {
    gs__dfac fa, fb;
    gs__ta t;
    int rank = a->rank, d, f, q, perm[GS_MAX_IOTA_RANK], np = 0, n_sub = 0;
    int man_a = a->n_sub && a->sub[0] == GS_SUBGROUP_MANUAL ? rank : -1;
    int man_b = b->n_sub && b->sub[0] == GS_SUBGROUP_MANUAL ? rank : -1;
    int64_t man = 1, rep = 1;
    gs_subgroup sub[2];
    int owner[GS__MAX_FAC];   /* result dim of each factor: 0..rank-1, rank = manual, -1 = replicated */
    *tried = false;
    if (!gs__ta_device_factors(&a->ta, &fa) || !gs__ta_device_factors(&b->ta, &fb) || !gs__dfac_common(&fa, &fb))
        return NULL;
    if (fa.n > GS_MAX_IOTA_RANK) return NULL;
    *tried = true;
    for (f = 0; f < fa.n; f++) {
        int da = fa.dim[f], db = fb.dim[f];
        bool a_data = da < rank, b_data = db < rank;
        bool a_man = da == man_a, b_man = db == man_b;
        if (a_man != b_man) return NULL;
        if (a_man) { owner[f] = rank; continue; }
        if (a_data && b_data && da != db) return NULL;
        if (a_data && b_data) {
            /* both split this dim: the same factor at the same place */
            if (a->ta.dims[da] != b->ta.dims[db] || fa.rank_in_dim[f] != fb.rank_in_dim[f]) return NULL;
            owner[f] = da;
        } else if (a_data) {
            if (b->ta.dims[da] != 1) return NULL;
            owner[f] = da;
        } else if (b_data) {
            if (a->ta.dims[db] != 1) return NULL;
            owner[f] = db;
        } else {
            owner[f] = -1;
        }
    }
    /* result: iota over the common factors, transposed to dims (in each dim's factor order), manual, rep */
    GS__ZERO(t);
    t.total = a->ta.total;
    t.ir = fa.n;
    for (f = 0; f < fa.n; f++) t.idims[f] = fa.size[f];
    for (d = 0; d < rank; d++) {
        const gs__dfac *src = a->ta.dims[d] > 1 ? &fa : &fb;
        t.dims[d] = GS__MAX(a->ta.dims[d], b->ta.dims[d]);
        for (q = 0; q < GS__MAX_FAC; q++) {
            bool found = false;
            for (f = 0; f < fa.n; f++)
                if (owner[f] == d && src->rank_in_dim[f] == q) {
                    perm[np++] = f;
                    found = true;
                }
            if (!found) break;
        }
    }
    for (q = 0; q < GS__MAX_FAC; q++) {
        bool found = false;
        for (f = 0; f < fa.n; f++)
            if (owner[f] == rank && fa.rank_in_dim[f] == q) { perm[np++] = f; man *= fa.size[f]; found = true; }
        if (!found) break;
    }
    for (f = 0; f < fa.n; f++)
        if (owner[f] == -1) { perm[np++] = f; rep *= fa.size[f]; }
    if (np != fa.n) return NULL;
    for (f = 0; f < fa.n; f++) t.iperm[f] = perm[f];
    t.n = rank;
    if (man > 1) { t.dims[t.n++] = man; sub[n_sub++] = GS_SUBGROUP_MANUAL; }
    if (rep > 1) { t.dims[t.n++] = rep; sub[n_sub++] = GS_SUBGROUP_REPLICATED; }
    if (gs__prod64(t.n, t.dims) != t.total) return NULL;
    gs__iota_canon(&t);
    return gs__sh_from_ta(ctx, rank, n_sub, sub, &t);
}

/* XLA MergeShardingIfCompatible: a sharding that refines both a and b (each dim split as in whichever of them
   splits it; where both do, identically), or NULL (no error) when there is none. */
GS__FN const gs_sharding *gs__sh_merge(gs_ctx *ctx, const gs_sharding *a, const gs_sharding *b) {
    int d, rank;
    int64_t total, tiles = 1, group, dv, *list = NULL, *fill = NULL, ia[GS_MAX_IOTA_RANK], ib[GS_MAX_IOTA_RANK];
    int64_t mdims[GS_MAX_TILE_RANK], man_a, man_b;
    const gs_sharding *r = NULL;
    bool tried;
    if (!a || !b) return NULL;
    if (a->kind != GS_SHARDING_TILED || b->kind != GS_SHARDING_TILED) {
        if (a->kind == GS_SHARDING_REPLICATED && b->kind == GS_SHARDING_REPLICATED) return a;
        if (a->kind == GS_SHARDING_REPLICATED && b->kind == GS_SHARDING_TILED) return b;
        if (b->kind == GS_SHARDING_REPLICATED && a->kind == GS_SHARDING_TILED) return a;
        return gs_sharding_equal(a, b) ? a : NULL;
    }
    rank = a->rank;
    man_a = gs_sharding_manual_group(a);
    man_b = gs_sharding_manual_group(b);
    if (b->rank != rank || a->ta.total != b->ta.total || man_a != man_b) return NULL;
    for (d = 0; d < rank; d++) {
        if (a->ta.dims[d] > 1 && b->ta.dims[d] > 1 && a->ta.dims[d] != b->ta.dims[d]) return NULL;
        mdims[d] = GS__MAX(a->ta.dims[d], b->ta.dims[d]);
        tiles *= mdims[d];
    }
    total = a->ta.total;
    if (total % (tiles * man_a) != 0) return NULL;
    if (gs_sharding_equal(a, b)) return a;
    r = gs__sh_merge_iota(ctx, a, b, &tried);
    if (r || tried) return r;
    /* general method: each slot of the merged array takes the devices in both shardings' groups for it */
    group = total / (tiles * man_a);
    mdims[rank] = man_a;
    mdims[rank + 1] = group;
    list = (int64_t *)gs__malloc(ctx, sizeof(int64_t) * (size_t)total);
    fill = (int64_t *)gs__malloc(ctx, sizeof(int64_t) * (size_t)(tiles * man_a));
    if (!list || !fill) goto done;
    memset(fill, 0, sizeof(int64_t) * (size_t)(tiles * man_a));
    for (dv = 0; dv < total; dv++) {
        int64_t slot, devid = gs__ta_at(&a->ta, dv), midx[GS_MAX_TILE_RANK];
        gs__unravel(a->ta.n, a->ta.dims, dv, ia);
        if (!gs_sharding_device_index(b, devid, ib)) goto done;
        for (d = 0; d < rank; d++) {
            if (a->ta.dims[d] > 1 && b->ta.dims[d] > 1 && ia[d] != ib[d]) goto done;
            midx[d] = a->ta.dims[d] > 1 ? ia[d] : ib[d];
        }
        midx[rank] = man_a > 1 ? ia[rank] : 0;
        if (man_a > 1 && ia[rank] != ib[rank]) goto done;
        slot = gs__ravel(rank + 1, mdims, midx);
        if (fill[slot] >= group) goto done;
        list[slot * group + fill[slot]++] = devid;
    }
    {
        gs_subgroup sub[2];
        int n_sub = 0, n = rank;
        int64_t dims2[GS_MAX_TILE_RANK];
        for (d = 0; d < rank; d++) dims2[d] = mdims[d];
        if (man_a > 1) { dims2[n++] = man_a; sub[n_sub++] = GS_SUBGROUP_MANUAL; }
        dims2[n++] = group;
        sub[n_sub++] = GS_SUBGROUP_REPLICATED;
        r = gs_sharding_tiled(ctx, n, dims2, list, n_sub, sub);
    }
done:
    gs__free(ctx, list);
    gs__free(ctx, fill);
    return r;
}

/* XLA IsSubTilingOrEqualSharding: every device's tile under `sub` lies inside its tile under `s`. */
GS__FN bool gs__sh_subtiling_or_equal(gs_ctx *ctx, const gs_shape *shape, const gs_sharding *sub, const gs_sharding *s) {
    int64_t dv, n, o1[GS_MAX_RANK], l1[GS_MAX_RANK], o2[GS_MAX_RANK], l2[GS_MAX_RANK];
    int d;
    bool same_or_unsplit = true;
    if (!sub || !s) return false;
    if (s->kind == GS_SHARDING_REPLICATED) return sub->kind == GS_SHARDING_TILED || sub->kind == GS_SHARDING_REPLICATED;
    if (s->kind != GS_SHARDING_TILED || sub->kind != GS_SHARDING_TILED) return gs_sharding_equal(sub, s);
    if (sub->rank != s->rank || sub->ta.total != s->ta.total) return false;
    if (gs_sharding_equal(sub, s)) return true;
    /* when every dim s splits is split the same way in sub, sub refines s exactly when merging them gives sub
       (O(rank) for iota device lists) */
    for (d = 0; d < s->rank; d++)
        if (s->ta.dims[d] != 1 && s->ta.dims[d] != sub->ta.dims[d]) same_or_unsplit = false;
    if (same_or_unsplit) {
        const gs_sharding *m = gs__sh_merge(ctx, sub, s);
        return m && gs_sharding_equal(m, sub);
    }
    n = sub->ta.total;
    for (dv = 0; dv < n; dv++) {
        int64_t id = gs__ta_at(&sub->ta, dv);
        if (!gs_sharding_device_region(sub, *shape, id, o1, l1) || !gs_sharding_device_region(s, *shape, id, o2, l2))
            return false;
        for (d = 0; d < shape->rank; d++)
            if (l1[d] > o1[d] && (o1[d] < o2[d] || l1[d] > l2[d])) return false;
    }
    return true;
}

/* s without its shard group (a sharding that propagation passes on is not a member of the group) */
GS__FN const gs_sharding *gs__sh_ungrouped(gs_ctx *ctx, const gs_sharding *s) {
    gs_sharding t;
    if (!s || !s->group_kind) return s;
    t = *s;
    t.group_kind = 0;
    t.group_id = 0;
    return gs__sh_intern(ctx, &t);
}

/* ---- dim masks ---- */
GS__FN uint32_t gs__mask_of(int n, const int64_t *dims) {
    uint32_t m = 0;
    int i;
    for (i = 0; i < n; i++) m |= 1u << dims[i];
    return m;
}

/* dims of x that differ in size from y (same rank) */
GS__FN uint32_t gs__size_diff_mask(const gs_shape *x, const gs_shape *y) {
    uint32_t m = 0;
    int d;
    for (d = 0; d < x->rank; d++)
        if (x->dims[d] != y->dims[d]) m |= 1u << d;
    return m;
}

/* ---- gather and scatter dim maps (propagation and the partitioner) ---- */
/* out[d] for gather v's indices dim d: the output batch dim it becomes; GS__DEST_REP for the index vector dim */
GS__FN void gs__gather_index_dest(const gs_value *v, int *out) {
    const gs_gather_dims *gd = v->gather;
    uint32_t off = gs__mask_of(gd->n_offset_dims, gd->offset_dims);
    int batch_pos[GS_MAX_RANK], nb = 0, d, k;
    for (d = 0; d < v->shape.rank; d++)
        if (!((off >> d) & 1u)) batch_pos[nb++] = d;
    for (d = 0, k = 0; d < v->operands[1]->shape.rank; d++)
        out[d] = d == v->gather->index_vector_dim ? GS__DEST_REP : (k < nb ? batch_pos[k++] : GS__DEST_REP);
}

/* out[d] for gather v's operand dim d: the output offset dim it passes through to when the slice takes it whole,
   else GS__DEST_REP. With `batching`, an operand batching dim maps to the output batch dim of its indices
   batching dim (the two must then be split alike). */
GS__FN void gs__gather_operand_dest(const gs_value *v, bool batching, int *out) {
    const gs_gather_dims *gd = v->gather;
    const gs_shape *os = &v->operands[0]->shape;
    uint32_t col = gs__mask_of(gd->n_collapsed_slice_dims, gd->collapsed_slice_dims) |
                   gs__mask_of(gd->n_operand_batching_dims, gd->operand_batching_dims);
    int ix_dest[GS_MAX_RANK], d, k;
    for (d = 0, k = 0; d < os->rank; d++) {
        out[d] = GS__DEST_REP;
        if ((col >> d) & 1u) continue;
        if (k < gd->n_offset_dims && gd->slice_sizes[d] == os->dims[d]) out[d] = (int)gd->offset_dims[k];
        k++;
    }
    if (!batching) return;
    gs__gather_index_dest(v, ix_dest);
    for (k = 0; k < gd->n_operand_batching_dims; k++) {
        int64_t od = gd->operand_batching_dims[k], xd = gd->start_indices_batching_dims[k];
        if (od >= 0 && od < os->rank && xd >= 0 && xd < v->operands[1]->shape.rank) out[od] = ix_dest[xd];
    }
}

/* out[d] for scatter v's operand dim d: the update window dim that covers it whole, else GS__DEST_REP */
GS__FN void gs__scatter_update_dest(const gs_value *v, int *out) {
    const gs_scatter_dims *sd = v->scatter;
    const gs_shape *os = &v->shape, *us = &v->operands[2]->shape;
    uint32_t ins = gs__mask_of(sd->n_inserted_window_dims, sd->inserted_window_dims) |
                   gs__mask_of(sd->n_input_batching_dims, sd->input_batching_dims);
    int d, k;
    for (d = 0, k = 0; d < os->rank; d++) {
        out[d] = GS__DEST_REP;
        if ((ins >> d) & 1u) continue;
        if (k < sd->n_update_window_dims && us->dims[sd->update_window_dims[k]] == os->dims[d])
            out[d] = (int)sd->update_window_dims[k];
        k++;
    }
}

/* the indices dim along which x (an indices operand, or one piece of it) counts 0, 1, 2, ...: an iota, or a
   broadcast or copy of one (not a convert: a narrower type could wrap); -1 when it is not such a value */
GS__FN int gs__iota_dim(const gs_value *x) {
    int k;
    while (x->op == GS_OP_COPY) x = x->operands[0];
    if (x->shape.dtype == GS_TUPLE) return -1;
    if (x->op == GS_OP_IOTA) return (int)x->dim;
    if (x->op == GS_OP_BROADCAST && x->operands[0]->shape.rank > 0) {
        k = gs__iota_dim(x->operands[0]);
        return k >= 0 && k < x->n_dims ? (int)x->dims[k] : -1;
    }
    return -1;
}

/* Parallel dims of a gather or scatter v: n pairs (operand dim op[i], indices dim ix[i]) along which position i
   of the indices addresses position i of the operand, so both (and the gather's output or the scatter's updates)
   can be split alike: the explicit batching dims, and every index-vector component that is an iota along an
   indices dim (the indices themselves, or a piece of a concatenate along the index vector dim), where the operand
   dim it indexes is taken one wide and has that indices dim's size. Returns n. */
GS__FN int gs__gs_parallel(const gs_value *v, int *op, int *ix) {
    const gs_value *I = v->operands[1];
    const gs_shape *os = v->op == GS_OP_GATHER ? &v->operands[0]->shape : &v->shape, *is = &I->shape;
    int64_t ivd, map[GS_MAX_RANK], one[GS_MAX_RANK];
    int comp_dim[GS_MAX_RANK], nmap, n = 0, k, j, d, c;
    if (v->op == GS_OP_GATHER) {
        const gs_gather_dims *gd = v->gather;
        ivd = gd->index_vector_dim;
        nmap = gd->n_start_index_map;
        memcpy(map, gd->start_index_map, sizeof map);
        for (d = 0; d < os->rank; d++) one[d] = gd->slice_sizes[d] == 1;
        for (k = 0; k < gd->n_operand_batching_dims; k++) {
            op[n] = (int)gd->operand_batching_dims[k];
            ix[n++] = (int)gd->start_indices_batching_dims[k];
        }
    } else {
        const gs_scatter_dims *sd = v->scatter;
        const gs_shape *us = &v->operands[2]->shape;
        uint32_t ins = gs__mask_of(sd->n_inserted_window_dims, sd->inserted_window_dims) |
                       gs__mask_of(sd->n_input_batching_dims, sd->input_batching_dims);
        ivd = sd->index_vector_dim;
        nmap = sd->n_scatter_dims_to_operand_dims;
        memcpy(map, sd->scatter_dims_to_operand_dims, sizeof map);
        for (d = 0, k = 0; d < os->rank; d++) {
            one[d] = (ins >> d) & 1u;
            if (!one[d] && k < sd->n_update_window_dims) one[d] = us->dims[sd->update_window_dims[k++]] == 1;
        }
        for (k = 0; k < sd->n_input_batching_dims; k++) {
            op[n] = (int)sd->input_batching_dims[k];
            ix[n++] = (int)sd->scatter_indices_batching_dims[k];
        }
    }
    if (nmap > GS_MAX_RANK) return n;
    for (k = 0; k < nmap; k++) comp_dim[k] = -1;
    if (ivd < is->rank && I->op == GS_OP_CONCATENATE && I->dim == ivd) {
        for (j = 0, c = 0; j < I->n_operands && c < nmap; j++) {
            const gs_value *piece = I->operands[j];
            int w = (int)piece->shape.dims[ivd], id = gs__iota_dim(piece);
            for (k = 0; k < w && c < nmap; k++, c++) comp_dim[c] = id;
        }
    } else {
        int id = gs__iota_dim(I);
        for (k = 0; k < nmap; k++) comp_dim[k] = id;
    }
    for (k = 0; k < nmap; k++) {
        int od = (int)map[k], xd = comp_dim[k];
        /* the iota must count to the end without wrapping: 16-bit indices up to 32767, 8-bit ones not at all */
        int64_t cap = gs_dtype_size(is->dtype) >= 4 ? INT64_MAX : gs_dtype_size(is->dtype) == 2 ? 32767 : 0;
        if (xd < 0 || xd == ivd || xd >= is->rank || od < 0 || od >= os->rank || !one[od] ||
            os->dims[od] != is->dims[xd] || os->dims[od] - 1 > cap)
            continue;
        for (j = 0; j < n; j++)
            if (ix[j] == xd || op[j] == od) break;
        if (j < n) continue;
        op[n] = od;
        ix[n++] = xd;
    }
    return n;
}

/* out[d] for scatter v's indices dim d: the update scatter dim it becomes, in order; GS__DEST_REP for the index
   vector dim */
GS__FN void gs__scatter_index_dest(const gs_value *v, int *out) {
    const gs_scatter_dims *sd = v->scatter;
    const gs_shape *us = &v->operands[2]->shape;
    uint32_t win = gs__mask_of(sd->n_update_window_dims, sd->update_window_dims);
    int d, j;
    for (d = 0, j = 0; d < v->operands[1]->shape.rank; d++) {
        out[d] = GS__DEST_REP;
        if (d == sd->index_vector_dim) continue;
        while (j < us->rank && ((win >> j) & 1u)) j++;
        if (j < us->rank) out[d] = j++;
    }
}

/* the inverse of a dim map over n dims: inv[j] = the dim that dest sends to j (GS__DEST_REP when none) */
GS__FN void gs__dest_invert(int n, const int *dest, int out_rank, int *inv) {
    int d;
    for (d = 0; d < out_rank; d++) inv[d] = GS__DEST_REP;
    for (d = 0; d < n; d++)
        if (dest[d] >= 0 && dest[d] < out_rank) inv[dest[d]] = d;
}
