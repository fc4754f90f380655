/* gs_spmd_window.c - windowed ops along split dims: one engine that gives every device the region of an operand
   its share of the output needs (halo exchange), and the rules built on it: reduce-window, convolution, slice,
   pad, concatenate, reverse and reshape realignment. (A convolution with nothing split spatially goes to the dot
   strategies.)

   The engine works one dim at a time. Device c (its tile coordinate along the dim) needs the operand elements
   [a[c], a[c] + n): n is the same on every device, a[c] is any per-device table. The real part of each region is
   gathered from the shards that hold it with collective-permutes (one per distance between holder and receiver),
   then the region is cut out by a dynamic-slice at a per-device offset, and elements outside [0, S) are masked
   with the op's padding value. Window math (below) turns a window config into a, n and the local op's config. */
#include "gs_spmd_internal.h"

GS__FN int64_t gs__sp_fdiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
GS__FN int64_t gs__sp_cdiv(int64_t a, int64_t b) { return -gs__sp_fdiv(-a, b); }

/* per[c] for the device's tile coordinate c along dim d of s, as an s32 scalar */
GS__FN gs_value *gs__sp_ctab(gs__sp *sp, const gs_sharding *s, int d, const int64_t *per) {
    int32_t *vals = (int32_t *)gs__malloc(sp->ctx, sizeof(int32_t) * (size_t)sp->D);
    int64_t p, idx[GS_MAX_TILE_RANK];
    gs_value *v;
    if (!vals) return NULL;
    for (p = 0; p < sp->D; p++) {
        int64_t c = gs_sharding_device_index(s, p, idx) ? idx[d] : 0;
        vals[p] = (int32_t)per[c];
    }
    v = gs__sp_tab_make(sp, NULL, NULL, 0, 0, 0, vals);
    gs__free(sp->ctx, vals);
    return v;
}

/* x with dim d cut to [st, st + len) (static) */
GS__FN gs_value *gs__sp_cut(gs__sp *sp, gs_value *x, int d, int64_t st, int64_t len) {
    int64_t a[GS_MAX_RANK] = {0}, b[GS_MAX_RANK];
    int i;
    if (!x) return NULL;
    if (st == 0 && len == x->shape.dims[d]) return x;
    for (i = 0; i < x->shape.rank; i++) b[i] = x->shape.dims[i];
    a[d] = st;
    b[d] = st + len;
    return gs_slice(sp->G->g, x, a, b, NULL);
}

/* x with dim d cut to [off, off + len), off a per-device s32 scalar */
GS__FN gs_value *gs__sp_dcut(gs__sp *sp, gs_value *x, int d, gs_value *off, int64_t len) {
    gs_value *st[GS_MAX_RANK];
    int64_t sz[GS_MAX_RANK];
    int i;
    if (!x || !off) return NULL;
    for (i = 0; i < x->shape.rank; i++) {
        st[i] = i == d ? off : gs__sp_s32(sp, 0);
        sz[i] = i == d ? len : x->shape.dims[i];
    }
    return gs_dynamic_slice(sp->G->g, x, st, sz);
}

/* x padded along dim d with lo/hi zeros */
GS__FN gs_value *gs__sp_zpad(gs__sp *sp, gs_value *x, int d, int64_t lo, int64_t hi) {
    int64_t l[GS_MAX_RANK] = {0}, h[GS_MAX_RANK] = {0};
    if (!x || (!lo && !hi)) return x;
    l[d] = lo;
    h[d] = hi;
    return gs_pad(sp->G->g, x, gs__sp_zero(sp, x->shape.dtype), l, h, NULL);
}

/* the global index of each position along dim d of x (s32[x.dims[d]]): iota plus a per-device offset. Masks
   are computed on this one dim and broadcast (a full-rank iota would cost four bytes per element). */
GS__FN gs_value *gs__sp_gidx(gs__sp *sp, const gs_value *x, int d, gs_value *off) {
    gs_shape s1 = gs_shape_make(GS_S32, 1, &x->shape.dims[d]);
    return gs_add(sp->G->g, gs_iota(sp->G->g, s1, 0), gs_broadcast(sp->G->g, off, s1, NULL));
}

/* select(lo <= idx < hi, a, b) with idx from gs__sp_gidx for dim d of a (lo, hi: per-device s32 scalars; hi NULL:
   no upper bound) */
GS__FN gs_value *gs__sp_select_range(gs__sp *sp, gs_value *idx, gs_value *lo, gs_value *hi, int d, gs_value *a,
                                     gs_value *b) {
    gs_graph *g = sp->G->g;
    gs_value *m;
    int64_t dd = d;
    if (!idx || !a || !b) return NULL;
    m = gs_compare(g, idx, gs_broadcast(g, lo, idx->shape, NULL), GS_CMP_GE);
    if (hi) m = gs_binary(g, GS_OP_AND, m, gs_compare(g, idx, gs_broadcast(g, hi, idx->shape, NULL), GS_CMP_LT));
    return gs_select(g, gs_broadcast_in_dim(g, m, a->shape.rank, a->shape.dims, &dd), a, b);
}

/* The collective-permute that brings every receiving device the piece held by the device `delta` tiles further
   along dim d (same coordinates elsewhere, replicas with their own replica). want[c]: receivers. */
GS__FN gs_value *gs__sp_shift(gs__sp *sp, gs_value *x, const gs__ta *A, int d, int64_t delta, const bool *want) {
    int64_t *pairs, L, n = 0, idx[GS_MAX_IOTA_RANK], k = A->dims[d];
    if (!x) return NULL;
    pairs = (int64_t *)gs__arena_alloc(sp->ctx, sizeof(int64_t) * 2 * (size_t)A->total);
    if (!pairs) return NULL;
    for (L = 0; L < A->total; L++) {
        int64_t c, src;
        gs__unravel(A->n, A->dims, L, idx);
        c = idx[d];
        src = c + delta;
        if (src < 0 || src >= k || !want[c]) continue;
        idx[d] = src;
        pairs[2 * n] = gs__ta_at(A, gs__ravel(A->n, A->dims, idx));
        pairs[2 * n + 1] = gs__ta_at(A, L);
        n++;
    }
    if (!n) return gs__sp_splat(sp, x->shape.dtype, 0, x->shape);
    return gs_collective_permute(sp->G->g, x, n, pairs, 0);
}

/* "2,1,0,-1" for the explanation: at most 16 entries */
GS__FN void gs__sp_list(char *buf, size_t cap, const int64_t *v, const bool *used, int64_t k) {
    size_t len = 0;
    int64_t c, shown = 0;
    buf[0] = 0;
    for (c = 0; c < k && len + 24 < cap; c++) {
        if (shown == 16) {
            snprintf(buf + len, cap - len, ",...");
            return;
        }
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", shown ? "," : "", used[c] ? "" : "_");
        if (used[c]) len += (size_t)snprintf(buf + len, cap - len, "%lld", (long long)v[c]);
        shown++;
    }
}

/* =========================================================================================================
   The region engine
   ========================================================================================================= */
/* One region exchange (gs__sp_region): device c, at tile coordinate c along dim d (extent S, split k ways in
   shards of s), wants the elements [a[c], a[c] + n) when used[c]. */
typedef struct gs__sp_rx {
    const gs_sharding *xs;
    gs__ta A;                   /* xs's view */
    int d;
    int64_t S, k, s, n;
    const int64_t *a;
    const bool *used;
    int64_t *lo, *hi;           /* the real part [lo[c], hi[c]) of each region */
    int64_t *m;                 /* m[j + k - 1]: the largest piece distance j = holder - receiver carries */
    int64_t *tab;               /* k entries of scratch */
    int64_t HL, HR;             /* the widest halo on the left and on the right */
    int64_t minA, maxE;         /* the lowest region start and the highest region end */
    int64_t n_perm;             /* collective-permutes made */
    gs_value *idx;              /* the global index of every region element (s32), built when needed */
} gs__sp_rx;

/* Step 1 of the region engine: the real part of every region, the halos it implies and the pieces of the compact
   exchange; chooses the exchange: 0 (the neighbours' shard pieces concatenated around mine), 1 (compact: only
   what each device needs, one distance at a time) or 2 (the whole dim: the halos would carry most of it). hl and
   hr get the halo widths as text. */
GS__FN int gs__sp_region_plan(gs__sp *sp, gs__sp_rx *R, char *hl, char *hr, size_t cap) {
    int64_t k = R->k, s = R->s, n = R->n, c, j, standard, compact = 0;
    const int64_t *a = R->a;
    const bool *used = R->used;
    int64_t *lo = R->lo, *hi = R->hi, *m = R->m, *tab = R->tab;
    bool any = false;
    int mode;
    /* the real part of every region and the halos it implies */
    for (c = 0; c < k; c++) {
        if (!used[c]) continue;
        lo[c] = GS__MAX(a[c], 0);
        hi[c] = GS__MIN(a[c] + n, R->S);
        R->minA = GS__MIN(R->minA, a[c]);
        R->maxE = GS__MAX(R->maxE, a[c] + n);
        if (lo[c] >= hi[c]) continue;
        any = true;
        R->HL = GS__MAX(R->HL, c * s - lo[c]);
        R->HR = GS__MAX(R->HR, hi[c] - (c + 1) * s);
    }
    /* the largest piece each distance j = holder - receiver carries (the compact exchange), m[j + k - 1] */
    for (c = 0; c < k; c++) {
        int64_t src;
        if (!used[c] || lo[c] >= hi[c]) continue;
        for (src = lo[c] / s; src <= (hi[c] - 1) / s; src++) {
            int64_t o = GS__MIN(hi[c], (src + 1) * s) - GS__MAX(lo[c], src * s);
            m[src - c + k - 1] = GS__MAX(m[src - c + k - 1], o);
        }
    }
    for (j = -(k - 1); j <= k - 1; j++)
        if (j) compact += m[j + k - 1];
    standard = R->HL + R->HR;
    mode = GS__MIN(standard, compact) * 4 >= 3 * (k - 1) * s && any && GS__MIN(standard, compact) > 0 ? 2
           : standard <= compact ? 0 : 1;
    for (c = 0; c < k; c++) tab[c] = used[c] ? c * s - a[c] : 0;
    gs__sp_list(hl, cap, tab, used, k);
    for (c = 0; c < k; c++) tab[c] = used[c] ? a[c] + n - (c + 1) * s : 0;
    gs__sp_list(hr, cap, tab, used, k);
    if (mode == 2) {
        gs__sp_warnf(sp, "halo exchange at %s would move most of dim %d (%lld of %lld elements per device); the dim "
                     "is all-gathered instead", sp->at ? sp->at->name : "?", R->d,
                     (long long)GS__MIN(standard, compact), (long long)((k - 1) * s));
    }
    return mode;
}

/* Step 2, exchanges 0 and 2: a buffer x[.., base[c] .. base[c] + len, ..] holding every device's region (its
   shard with the neighbours' pieces concatenated around it, or the whole dim all-gathered), then each region cut
   out of it: x[.., s, ..] -> x[.., n, ..] */
GS__FN gs_value *gs__sp_region_buffer(gs__sp *sp, gs__sp_rx *R, gs_value *x, bool whole) {
    gs_graph *g = sp->G->g;
    int d = R->d;
    int64_t k = R->k, s = R->s, n = R->n, HL = R->HL, HR = R->HR, c, j;
    const int64_t *a = R->a;
    const bool *used = R->used;
    int64_t *lo = R->lo, *hi = R->hi, *tab = R->tab;
    gs_value *cat, **parts, *off;
    int64_t len, extL = 0, extR = 0, np = 0, nl = gs__sp_cdiv(HL, s), nr = gs__sp_cdiv(HR, s), off0;
    bool same = true;
    if (whole) {
        cat = gs__sp_all_gather(sp, x, d, &R->A, d);
        len = k * s;
        for (c = 0; c < k; c++) tab[c] = 0;
    } else {
        bool *need = (bool *)gs__arena_alloc(sp->ctx, sizeof(bool) * (size_t)k);
        parts = (gs_value **)gs__arena_alloc(sp->ctx, sizeof(gs_value *) * (size_t)(nl + nr + 1));
        if (!need || !parts) return NULL;
        for (j = nl; j >= 1; j--) {
            int64_t sz = GS__MIN(s, HL - (j - 1) * s);
            for (c = 0; c < k; c++) need[c] = used[c] && lo[c] < hi[c] && lo[c] < (c - j + 1) * s;
            parts[np++] = gs__sp_shift(sp, gs__sp_cut(sp, x, d, s - sz, sz), &R->A, d, -j, need);
            R->n_perm++;
        }
        parts[np++] = x;
        for (j = 1; j <= nr; j++) {
            int64_t sz = GS__MIN(s, HR - (j - 1) * s);
            for (c = 0; c < k; c++) need[c] = used[c] && lo[c] < hi[c] && hi[c] > (c + j) * s;
            parts[np++] = gs__sp_shift(sp, gs__sp_cut(sp, x, d, 0, sz), &R->A, d, j, need);
            R->n_perm++;
        }
        cat = np == 1 ? x : gs_concatenate(g, (int)np, parts, d);
        len = HL + s + HR;
        for (c = 0; c < k; c++) tab[c] = c * s - HL;
    }
    /* tab = base; widen the buffer so every region is inside it */
    for (c = 0; c < k; c++) {
        if (!used[c]) continue;
        extL = GS__MAX(extL, tab[c] - a[c]);
        extR = GS__MAX(extR, a[c] + n - (tab[c] + len));
    }
    cat = gs__sp_zpad(sp, cat, d, extL, extR);
    off0 = -1;
    for (c = 0; c < k; c++) {
        if (!used[c]) continue;
        tab[c] = a[c] - tab[c] + extL;
        if (off0 < 0) off0 = tab[c];
        else if (tab[c] != off0) same = false;
    }
    if (off0 < 0) off0 = 0;
    for (c = 0; c < k; c++)
        if (!used[c]) tab[c] = off0;
    if (same) return gs__sp_cut(sp, cat, d, off0, n);
    off = gs__sp_ctab(sp, R->xs, d, tab);
    return gs__sp_dcut(sp, cat, d, off, n);
}

/* Step 2, exchange 1 (compact): for each distance, every receiver gets exactly the piece it needs, placed at its
   position in the region: x[.., s, ..] -> x[.., n, ..] */
GS__FN gs_value *gs__sp_region_compact(gs__sp *sp, gs__sp_rx *R, gs_value *x) {
    const gs_sharding *xs = R->xs;
    int d = R->d;
    int64_t k = R->k, s = R->s, n = R->n, S = R->S, c, j;
    const int64_t *a = R->a;
    const bool *used = R->used;
    int64_t *lo = R->lo, *hi = R->hi, *m = R->m, *tab = R->tab;
    gs_value *acc = NULL;
    int64_t *u = (int64_t *)gs__arena_alloc(sp->ctx, sizeof(int64_t) * (size_t)(4 * k));
    int64_t *place = u + k, *plo = place + k, *phi = plo + k;
    bool *need = (bool *)gs__arena_alloc(sp->ctx, sizeof(bool) * (size_t)k);
    if (!u || !need) return NULL;
    for (j = -(k - 1); j <= k - 1; j++) {
        int64_t mj = m[j + k - 1], u0 = -1;
        gs_value *piece, *P;
        bool same = true;
        if (!mj) continue;
        for (c = 0; c < k; c++) u[c] = 0;
        for (c = 0; c < k; c++) {
            int64_t src = c + j, p0, p1;
            need[c] = false;
            plo[c] = phi[c] = 0;
            place[c] = 0;
            if (!used[c] || lo[c] >= hi[c] || src < 0 || src >= k) continue;
            p0 = GS__MAX(lo[c], src * s);
            p1 = GS__MIN(hi[c], GS__MIN((src + 1) * s, S));
            if (p0 >= p1) continue;
            need[c] = true;
            u[src] = GS__MIN(p0 - src * s, s - mj);
            if (u0 < 0) u0 = u[src];
            else if (u[src] != u0) same = false;
            place[c] = n + a[c] - (src * s + u[src]);
            plo[c] = p0;
            phi[c] = p1;
        }
        piece = same ? gs__sp_cut(sp, x, d, u0, mj) : gs__sp_dcut(sp, x, d, gs__sp_ctab(sp, xs, d, u), mj);
        if (j) {
            piece = gs__sp_shift(sp, piece, &R->A, d, j, need);
            R->n_perm++;
        }
        P = gs__sp_dcut(sp, gs__sp_zpad(sp, piece, d, n, n), d, gs__sp_ctab(sp, xs, d, place), n);
        if (!P) return NULL;
        if (!acc) {
            acc = P;
            continue;
        }
        if (!R->idx) {
            for (c = 0; c < k; c++) tab[c] = used[c] ? a[c] : 0;
            R->idx = gs__sp_gidx(sp, P, d, gs__sp_ctab(sp, xs, d, tab));
        }
        acc = gs__sp_select_range(sp, R->idx, gs__sp_ctab(sp, xs, d, plo), gs__sp_ctab(sp, xs, d, phi), d, P, acc);
    }
    return acc ? acc : gs__sp_cut(sp, gs__sp_zpad(sp, x, d, 0, GS__MAX(0, n - s)), d, 0, n);
}

/* The region engine. x: a per-device value in sharding xs (rank = x's rank) whose dim d holds the device's shard
   of an extent-S dim split k ways. Returns x with dim d replaced by the device's region [a[c], a[c] + n) of the
   global dim (c its tile coordinate along d): x[.., S/k, ..]{xs} -> x[.., n, ..]{xs}. Devices with !used[c] get
   garbage. With pad (a scalar of x's type), elements outside [0, S) are pad; without, they are garbage. `what` is
   added to the explanation. Steps: 1. plan the exchange, 2. exchange, 3. pad, 4. explain. */
GS__FN gs_value *gs__sp_region(gs__sp *sp, gs_value *x, const gs_sharding *xs, int d, int64_t S, const int64_t *a,
                               const bool *used, int64_t n, gs_value *pad, const char *what) {
    gs_graph *g = sp->G->g;
    int rank = x ? x->shape.rank : 0, mode;
    int64_t c, k, s;
    gs__sp_rx R;
    char hl[256], hr[256];
    if (!x) return NULL;
    memset(&R, 0, sizeof R);
    R.k = k = gs__sp_k(xs, d);
    R.s = s = gs__shard_size(S, k);
    if (k < 2 || x->shape.dims[d] != s || !gs__sp_view(sp, xs, rank, &R.A)) {
        gs__err(sp->ctx, GS_ERR_SHARDING, "%s: internal error: halo exchange on dim %d of a %s shard",
                sp->at ? sp->at->name : "?", d, gs_sharding_to_text(sp->ctx, xs));
        return NULL;
    }
    R.lo = (int64_t *)gs__arena_alloc(sp->ctx, sizeof(int64_t) * (size_t)(5 * k + 1));
    if (!R.lo) return NULL;
    R.hi = R.lo + k;
    R.tab = R.hi + k;
    R.m = R.tab + k;   /* m[delta + k - 1], delta in -(k-1) .. k-1 */
    R.xs = xs;
    R.d = d;
    R.S = S;
    R.n = n;
    R.a = a;
    R.used = used;
    R.minA = INT64_MAX;
    R.maxE = INT64_MIN;
    mode = gs__sp_region_plan(sp, &R, hl, hr, sizeof hl);
    x = mode == 1 ? gs__sp_region_compact(sp, &R, x) : gs__sp_region_buffer(sp, &R, x, mode == 2);
    if (!x) return NULL;
    /* what lies outside the real dim is the op's padding */
    if (pad && (R.minA < 0 || R.maxE > S)) {
        if (!R.idx) {
            for (c = 0; c < k; c++) R.tab[c] = used[c] ? a[c] : 0;
            R.idx = gs__sp_gidx(sp, x, d, gs__sp_ctab(sp, xs, d, R.tab));
        }
        x = gs__sp_select_range(sp, R.idx, gs__sp_s32(sp, 0), gs__sp_s32(sp, S), d, x,
                                gs_broadcast(g, pad, x->shape, NULL));
    }
    gs__sp_note(sp, "dim %d (%lld shards of %lld): halo left %s, right %s%s%s; %s", d, (long long)k, (long long)s,
                hl, hr, what && *what ? "; " : "", what ? what : "",
                mode == 2 ? "all-gathered (the halos would cover most of the dim)"
                : R.n_perm == 0 ? "no exchange" : mode == 1 ? "compact exchange" : "halo exchange");
    if (R.n_perm) gs__sp_note(sp, "%lld collective-permute%s", (long long)R.n_perm, R.n_perm == 1 ? "" : "s");
    return x;
}

/* =========================================================================================================
   Window math
   ========================================================================================================= */
/* One split dim of a windowed op, in padded coordinates (base-dilated and edge-padded: element e sits at
   L + e * B). Device c keeps `cnt` windows of W taps (stride T, tap distance R) whose first starts at G[c]. The
   plan gives each device a region [a[c], a[c] + n) and a local config (W, T, B, R as given, padding lc / hc)
   whose local windows r[c] .. r[c] + cnt - 1 are the device's windows. The local padding is the same on every
   device; when it cannot be (base dilation), devices take a little more data on the left, compute a few more
   windows, and keep theirs with a dynamic-slice (GShard's base-dilation cases 2 and 3). */
typedef struct gs__wp {
    int64_t S, k, W, T, L, B, R, cnt;
    int64_t *G;
    bool *used;
    int64_t *a, *r;                     /* k entries each (arena) */
    int64_t n, lc, hc, rmax;
} gs__wp;

/* Plans a dim of extent S split k ways: device c keeps cnt windows of `size` taps (w's stride, low padding and
   dilations) whose first starts at g0 + c * step (step < 0: the last device's first); devices with
   c * ustep >= ulim have no window of their own. */
GS__FN bool gs__sp_wplan(gs__sp *sp, gs__wp *p, int64_t S, int64_t k, const gs_window_dim *w, int64_t size,
                         int64_t cnt, int64_t g0, int64_t step, int64_t ustep, int64_t ulim) {
    const int64_t lim = (int64_t)1 << 30;
    int64_t c, Wd, *elo, *ehi, *cand, att, best_n = -1, best_r = 0, best_lc = 0;
    GS__ZERO(*p);
    p->S = S;
    p->k = k;
    p->W = size;
    p->T = w->stride;
    p->L = w->pad_lo;
    p->B = w->base_dilation;
    p->R = w->window_dilation;
    p->cnt = cnt;
    Wd = (p->W - 1) * p->R + 1;
    elo = (int64_t *)gs__arena_alloc(sp->ctx, sizeof(int64_t) * (size_t)(6 * k));
    p->used = (bool *)gs__arena_alloc(sp->ctx, sizeof(bool) * (size_t)k);
    if (!elo || !p->used) return false;
    ehi = elo + k;
    cand = ehi + k;
    p->a = cand + k;
    p->r = p->a + k;
    p->G = p->r + k;
    if (S <= 0 || S > lim || cnt <= 0 || Wd > lim || p->T > lim || p->B > lim || k * (step < 0 ? -step : step) > lim ||
        g0 > lim || g0 < -lim)
        return false;
    for (c = 0; c < k; c++) {
        p->G[c] = g0 + c * step;
        p->used[c] = c * ustep < ulim;
        if (!p->used[c]) continue;
        elo[c] = gs__sp_cdiv(p->G[c] - p->L, p->B);
        ehi[c] = gs__sp_fdiv(p->G[c] + (p->cnt - 1) * p->T + Wd - 1 - p->L, p->B);
        if (elo[c] < -lim || ehi[c] > lim) return false;
    }
    /* attempt -1: every device starts at its first needed element (optimal when it aligns); then one attempt per
       residue of the local low padding modulo the stride */
    for (att = -1; att < (p->T <= 64 ? p->T : 0); att++) {
        int64_t lc = 0, n = 1, rmax = 0;
        bool ok = true;
        for (c = 0; c < k && ok; c++) {
            if (!p->used[c]) continue;
            cand[c] = elo[c];
            if (att >= 0) {
                int64_t t;
                for (t = 0; t < p->T; t++, cand[c]--) {
                    int64_t q = (p->G[c] - p->L - cand[c] * p->B + att) % p->T;
                    if (q == 0) break;
                }
                if (t == p->T) ok = false;
            }
            lc = GS__MAX(lc, p->L + cand[c] * p->B - p->G[c]);
        }
        if (!ok) continue;
        if (att >= 0) lc += ((att - lc) % p->T + p->T) % p->T;
        for (c = 0; c < k && ok; c++) {
            int64_t q;
            if (!p->used[c]) continue;
            q = p->G[c] - p->L - cand[c] * p->B + lc;
            if (q % p->T) ok = false;
            rmax = GS__MAX(rmax, q / p->T);
            n = GS__MAX(n, ehi[c] - cand[c] + 1);
        }
        if (!ok) continue;
        if (best_n < 0 || n < best_n || (n == best_n && (rmax < best_r || (rmax == best_r && lc < best_lc)))) {
            best_n = n;
            best_r = rmax;
            best_lc = lc;
            for (c = 0; c < k; c++) {
                p->a[c] = p->used[c] ? cand[c] : 0;
                p->r[c] = p->used[c] ? (p->G[c] - p->L - cand[c] * p->B + lc) / p->T : 0;
            }
        }
        if (att < 0) break;
    }
    if (best_n < 0 || best_n > lim) return false;
    p->n = best_n;
    p->lc = best_lc;
    p->rmax = best_r;
    p->hc = GS__MAX(0, (best_r + p->cnt - 1) * p->T + Wd - (best_lc + (best_n - 1) * p->B + 1));
    return true;
}

/* =========================================================================================================
   Windowed operands
   ========================================================================================================= */
typedef struct gs__wres {
    gs_window_dim w[GS_MAX_RANK];   /* the local window, by operand dim */
    gs_value *r[GS_MAX_RANK];       /* the first kept local output window (NULL: 0), by operand dim */
    int64_t keep[GS_MAX_RANK];      /* output windows kept, by operand dim (-1: all the local op makes) */
} gs__wres;

GS__FN bool gs__sp_win_identity(const gs_window_dim *w) {
    return w->size == 1 && w->stride == 1 && !w->pad_lo && !w->pad_hi && w->base_dilation == 1;
}

/* The per-device operand X of a windowed op, wanted in sharding `want` (X's rank): every dim split there whose
   window win[d] is not the identity gets its region from the engine; O[d] is the op's output extent along the
   dim. Dims that cannot be planned are gathered instead (*failed). pad: the op's padding value or NULL. */
GS__FN gs_value *gs__sp_win_input(gs__sp *sp, const gs_value *X, const gs_sharding *want, const gs_window_dim *win,
                                  const int64_t *O, gs_value *pad, gs__wres *res, uint32_t *failed,
                                  const gs_sharding **os) {
    int rank = X->shape.rank, d;
    gs__wp P[GS_MAX_RANK];
    uint32_t planned = 0;
    gs_value *x;
    *failed = 0;
    for (d = 0; d < rank; d++) {
        const gs_window_dim *w = &win[d];
        int64_t k = gs__sp_k(want, d), o;
        res->w[d] = *w;
        res->r[d] = NULL;
        res->keep[d] = -1;
        if (k == 1) continue;
        if (gs__sp_win_identity(w)) {
            res->w[d] = gs_window_default();
            continue;
        }
        o = gs__shard_size(O[d], k);
        if (O[d] > 0 && gs__sp_wplan(sp, &P[d], X->shape.dims[d], k, w, w->size, o, 0, o * w->stride, o, O[d]))
            planned |= 1u << d;
        else *failed |= 1u << d;
    }
    if (*failed) {
        char dims[64];
        size_t len = 0;
        for (d = 0; d < rank; d++)
            if ((*failed >> d) & 1u) len += (size_t)snprintf(dims + len, sizeof dims - len, "%s%d", len ? "," : "", d);
        gs__sp_warnf(sp, "no halo plan at %s for dim(s) %s of %s (an empty output, or base dilation with a stride "
                     "above 64 that does not line up): gathered instead", sp->at ? sp->at->name : "?", dims,
                     gs_sharding_to_text(sp->ctx, want));
    }
    *os = *failed ? gs__sp_unsplit(sp, want, *failed) : want;
    x = gs__sp_get(sp, X, *os);
    for (d = 0; d < rank && x; d++) {
        const gs_window_dim *w = &win[d];
        const gs__wp *p = &P[d];
        const char *what = "";
        int64_t o;
        if (!((planned >> d) & 1u)) continue;
        o = p->cnt;
        if (w->base_dilation > 1)
            what = (o * w->stride) % w->base_dilation == 0
                       ? "base dilation case 1: stride x windows per shard divisible by the dilation, one low padding"
                   : w->stride == 1 ? "base dilation case 2: stride 1, the largest low padding, output dynamic-sliced"
                                    : "base dilation case 3: stride not 1 and not divisible, more data on the left, "
                                      "output dynamic-sliced";
        x = gs__sp_region(sp, x, *os, d, p->S, p->a, p->used, p->n, pad, what);
        res->w[d].pad_lo = p->lc;
        res->w[d].pad_hi = p->hc;
        res->keep[d] = o;
        if (p->rmax) res->r[d] = gs__sp_ctab(sp, *os, d, p->r);
    }
    return x;
}

/* The kept windows of y, the local op's output: operand dim d is output dim out_of[d] (-1: none; NULL: same). */
GS__FN gs_value *gs__sp_win_keep(gs__sp *sp, gs_value *y, const gs__wres *res, int rank_in, const int *out_of) {
    gs_value *st[GS_MAX_RANK];
    int64_t sz[GS_MAX_RANK];
    int d, e, rank;
    bool dyn = false, cut = false;
    if (!y) return NULL;
    rank = y->shape.rank;
    for (e = 0; e < rank; e++) {
        st[e] = NULL;
        sz[e] = y->shape.dims[e];
    }
    for (d = 0; d < rank_in; d++) {
        e = out_of ? out_of[d] : d;
        if (e < 0 || res->keep[d] < 0) continue;
        if (res->r[d]) {
            st[e] = res->r[d];
            dyn = true;
        }
        if (sz[e] != res->keep[d]) cut = true;
        sz[e] = res->keep[d];
    }
    if (dyn) {
        for (e = 0; e < rank; e++)
            if (!st[e]) st[e] = gs__sp_s32(sp, 0);
        return gs_dynamic_slice(sp->G->g, y, st, sz);
    }
    if (!cut) return y;
    {
        gs_shape n = y->shape;
        for (e = 0; e < rank; e++) n.dims[e] = sz[e];
        return gs__sp_prefix(sp, y, &n);
    }
}

/* =========================================================================================================
   The rules
   ========================================================================================================= */
/* slice, pad, reduce-window: x[S]{S split k} -> out[O]{O split k}; each device's input region by halo exchange.
   Reduce-window, pad and slice: operand and output dims correspond, so the operand is wanted in the output's
   sharding; pad and slice are windows of one element (slice: stride = its stride, low padding = -start; pad: base
   dilation = interior + 1, edge padding as window padding). */
GS__FN gs_value *gs__sp_windowed(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    gs_graph *g = sp->G->g;
    const gs_value *X = v->operands[0];
    int rank = v->shape.rank, d;
    gs_window_dim win[GS_MAX_RANK];
    int64_t O[GS_MAX_RANK];
    gs__wres res;
    uint32_t failed;
    gs_value *x, *y, *pv = NULL;
    for (d = 0; d < rank; d++) {
        O[d] = v->shape.dims[d];
        win[d] = gs_window_default();
        if (v->op == GS_OP_REDUCE_WINDOW) {
            win[d] = v->window[d];
        } else if (v->op == GS_OP_PAD) {
            win[d].pad_lo = v->lo[d];
            win[d].pad_hi = v->hi[d];
            win[d].base_dilation = v->interior[d] + 1;
        } else {
            win[d].stride = v->stride[d];
            win[d].pad_lo = -v->start[d];
            win[d].pad_hi = v->limit[d] - X->shape.dims[d];
        }
    }
    if (v->op != GS_OP_SLICE) pv = gs__sp_get(sp, v->operands[1], gs__sp_rep(sp));
    /* reduce-window: what lies outside the input adds nothing (the identity); the init enters each window once,
       in the local op */
    x = gs__sp_win_input(sp, X, t, win, O,
                         v->op == GS_OP_REDUCE_WINDOW
                             ? gs_scalar(g, X->shape.dtype, gs__sp_identity(v->reduce, X->shape.dtype)) : pv,
                         &res, &failed, osh);
    if (!x) return NULL;
    if (v->op == GS_OP_REDUCE_WINDOW) {
        y = gs_reduce_window(g, x, pv, v->reduce, res.w);
    } else if (v->op == GS_OP_PAD) {
        int64_t lo[GS_MAX_RANK], hi[GS_MAX_RANK], in[GS_MAX_RANK];
        for (d = 0; d < rank; d++) {
            lo[d] = res.w[d].pad_lo;
            hi[d] = res.w[d].pad_hi;
            in[d] = res.w[d].base_dilation - 1;
        }
        y = gs_pad(g, x, pv, lo, hi, in);
    } else {
        int64_t st[GS_MAX_RANK], li[GS_MAX_RANK], sd[GS_MAX_RANK];
        for (d = 0; d < rank; d++) {
            /* a one-element window without base dilation never needs local padding */
            if (res.w[d].pad_lo > 0 || res.w[d].pad_hi > 0) {
                gs__err(sp->ctx, GS_ERR_SHARDING, "%s: internal error: slice plan with local padding", v->name);
                return NULL;
            }
            st[d] = -res.w[d].pad_lo;
            li[d] = x->shape.dims[d] + res.w[d].pad_hi;
            sd[d] = res.w[d].stride;
        }
        y = gs_slice(g, x, st, li, sd);
    }
    return gs__sp_win_keep(sp, y, &res, rank, NULL);
}

/* concatenate along a split dim D: a[Sa]{D split k}, b[Sb] -> out[Sa+Sb]{D split k}. Concatenate along a split
   dim: each operand's part of every device's output range comes by the engine (the operand placed at its offset is
   a window of one element with edge padding), then the parts are selected by global position */
GS__FN gs_value *gs__sp_concat(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    int d = (int)v->dim, p;
    int64_t k = gs__sp_k(t, d), O = v->shape.dims[d], o = gs__shard_size(O, k), off = 0, c;
    int64_t *a = (int64_t *)gs__arena_alloc(sp->ctx, sizeof(int64_t) * (size_t)k);
    bool *used = (bool *)gs__arena_alloc(sp->ctx, sizeof(bool) * (size_t)k);
    gs_value *acc = NULL, *idx = NULL;
    char what[64];
    if (!a || !used) return NULL;
    *osh = t;
    for (p = 0; p < v->n_operands; p++) {
        const gs_value *X = v->operands[p];
        int64_t Sp = X->shape.dims[d];
        gs_value *r;
        if (Sp == 0) continue;
        for (c = 0; c < k; c++) {
            a[c] = c * o - off;
            used[c] = c * o < O && c * o < off + Sp && c * o + o > off;
        }
        snprintf(what, sizeof what, "operand %d at offset %lld", p, (long long)off);
        r = gs__sp_region(sp, gs__sp_get(sp, X, t), t, d, Sp, a, used, o, NULL, what);
        if (!r) return NULL;
        if (!acc) {
            acc = r;
        } else {
            if (!idx) idx = gs__sp_gidx(sp, r, d, gs__sp_offset(sp, t, d, o));
            acc = gs__sp_select_range(sp, idx, gs__sp_s32(sp, off), NULL, d, r, acc);
        }
        off += Sp;
    }
    return acc;
}

/* reverse along D: x[S]{D split k} -> out[S]{D split k}. Reverse: tiles mirrored; an uneven dim's padding would
   land on the left, so each device first takes the region shifted left by the padding (a halo from its left
   neighbour) */
GS__FN gs_value *gs__sp_reverse(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    const gs_value *X = v->operands[0];
    uint32_t m = 0;
    int i, rank = v->shape.rank;
    const gs_sharding *os;
    gs_value *x;
    for (i = 0; i < v->n_dims; i++) m |= 1u << v->dims[i];
    os = gs__sh_reverse(sp->ctx, t, m);
    x = gs__sp_get(sp, X, os);
    for (i = 0; i < rank && x; i++) {
        int64_t S = X->shape.dims[i], k = gs__sp_k(os, i), s = gs__shard_size(S, k), c, *a;
        bool *used;
        if (!((m >> i) & 1u) || k == 1 || s * k == S) continue;
        a = (int64_t *)gs__arena_alloc(sp->ctx, sizeof(int64_t) * (size_t)k);
        used = (bool *)gs__arena_alloc(sp->ctx, sizeof(bool) * (size_t)k);
        if (!a || !used) return NULL;
        for (c = 0; c < k; c++) {
            a[c] = c * s - (k * s - S);
            used[c] = (k - 1 - c) * s < S;
        }
        x = gs__sp_region(sp, x, os, i, S, a, used, s, NULL, "reverse of an uneven dim: padding kept on the right");
    }
    *osh = t;
    return x ? gs__sp_clone(sp, v, &x, &x->shape) : NULL;
}

/* The kernel taps device q needs when it keeps input [q*s, min((q+1)*s, S)) of a dim with window w and O output
   windows: the taps t with o*T + t*R - L in that block for some o in [0, O), from a[q] (clip: within [0, W)); n the
   most any device needs; P the local low padding and z[q] the zeros device q puts before its block so that P fits
   all. Returns the largest z. */
GS__FN int64_t gs__sp_rhs_taps(const gs_window_dim *w, int64_t k, int64_t s, int64_t S, int64_t W, int64_t O,
                               bool clip, int64_t *a, int64_t *z, int64_t *n, int64_t *P) {
    int64_t q, zmax = 0;
    *n = 1;
    *P = INT64_MAX;
    for (q = 0; q < k; q++) {
        int64_t end = GS__MIN((q + 1) * s, S);
        int64_t lo = gs__sp_cdiv(q * s + w->pad_lo - (O - 1) * w->stride, w->window_dilation);
        int64_t hi = gs__sp_fdiv(end - 1 + w->pad_lo, w->window_dilation);
        if (clip) {
            lo = GS__MAX(lo, 0);
            hi = GS__MIN(hi, W - 1);
        }
        a[q] = end > q * s && lo <= hi ? lo : 0;
        if (end > q * s && lo <= hi) *n = GS__MAX(*n, hi - lo + 1);
        z[q] = w->pad_lo + q * s - a[q] * w->window_dilation;   /* the local low padding without a shift */
        *P = GS__MIN(*P, z[q]);
    }
    for (q = 0; q < k; q++) {
        z[q] -= *P;
        zmax = GS__MAX(zmax, z[q]);
    }
    return zmax;
}

/* convolution, the filter-gradient shape with the halo on the kernel (XLA's conv_halo_exchange_always_on_lhs=
   false): in[N,S,C]{S split k} x kernel[W,C,F]{W split k} -> out[..]{S whole}, partial sums added. Device c keeps
   its input block [c*s, (c+1)*s) as it is and gathers the kernel taps that meet that block in some output window
   (a halo on the kernel); taps read against input outside the block meet zeros, so every input element enters
   once. The local padding differs per device when the taps' start does not move with the block: the input is
   then shifted right by z(c) zeros (pad + dynamic-slice) so that one config fits all. lmask: the input's split
   spatial dims. Returns NULL with *tried false when a split dim has base dilation or a reversed window (XLA
   does not build this form for them either). */
GS__FN gs_value *gs__sp_conv_rhs_halo(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh,
                                      uint32_t lmask, bool *tried) {
    const gs_conv_config *c = v->conv;
    const gs_conv_dims *cd = &c->dims;
    const gs_value *X = v->operands[0], *K = v->operands[1];
    const gs_sharding *ls = sp->G->vals[X->id].sh, *ks = sp->G->vals[K->id].sh;
    int rank = v->shape.rank, i, dest[GS_MAX_RANK];
    gs_conv_config lc = *c;
    gs_value *x, *kern;
    const int64_t lim = (int64_t)1 << 30;   /* the tap arithmetic stays far from overflow */
    *tried = false;
    for (i = 0; i < cd->n_spatial; i++) {
        const gs_window_dim *w = &c->window[i];
        if (!((lmask >> cd->input_spatial[i]) & 1u)) continue;
        if (w->base_dilation != 1 || c->reversal[i] || w->stride < 1 || w->window_dilation < 1 || w->stride > lim ||
            w->window_dilation > lim || w->pad_lo > lim || w->pad_lo < -lim || v->shape.dims[cd->output_spatial[i]] > lim ||
            X->shape.dims[cd->input_spatial[i]] > lim || K->shape.dims[cd->kernel_spatial[i]] > lim)
            return NULL;
    }
    *tried = true;
    x = gs__sp_mask(sp, gs__sp_get(sp, X, ls), ls, &X->shape, lmask, 0);
    kern = gs__sp_get(sp, K, ks);
    for (i = 0; i < cd->n_spatial && x && kern; i++) {
        int dl = (int)cd->input_spatial[i], dk = (int)cd->kernel_spatial[i];
        const gs_window_dim *w = &c->window[i];
        int64_t k = gs__sp_k(ls, dl), S = X->shape.dims[dl], s = gs__shard_size(S, k), W = K->shape.dims[dk];
        int64_t O = v->shape.dims[cd->output_spatial[i]], n, P, zmax, q, *a, *z;
        bool *used;
        if (!((lmask >> dl) & 1u)) continue;
        a = (int64_t *)gs__arena_alloc(sp->ctx, sizeof(int64_t) * (size_t)(4 * k));
        used = (bool *)gs__arena_alloc(sp->ctx, sizeof(bool) * (size_t)k);
        if (!a || !used) return NULL;
        z = a + k;
        for (q = 0; q < k; q++) used[q] = true;
        /* XLA's form (taps past the kernel's ends kept, as zeros) when one padding then fits every device and it
           costs at most two more taps; else only the kernel's own taps, the input shifted */
        zmax = gs__sp_rhs_taps(w, k, s, S, W, O, false, a, z, &n, &P);
        {
            int64_t n2, P2, z2 = gs__sp_rhs_taps(w, k, s, S, W, O, true, a + 2 * k, z + 2 * k, &n2, &P2);
            if (zmax || n > n2 + 2) {
                a += 2 * k;
                z += 2 * k;
                n = n2;
                P = P2;
                zmax = z2;
            }
        }
        kern = gs__sp_region(sp, kern, ks, dk, W, a, used, n, gs__sp_zero(sp, K->shape.dtype),
                             "kernel halo for the device's input block (conv_halo_exchange_always_on_lhs=false)");
        if (zmax) {
            for (q = 0; q < k; q++) z[q] = zmax - z[q];
            x = gs__sp_dcut(sp, gs__sp_zpad(sp, x, dl, zmax, zmax), dl, gs__sp_ctab(sp, ls, dl, z), s + zmax);
            gs__sp_note(sp, "dim %d: the input block shifted right by up to %lld zeros so one local padding fits every "
                        "device", dl, (long long)zmax);
        }
        lc.window[i].size = n;
        lc.window[i].pad_lo = P;
        lc.window[i].pad_hi = (O - 1) * w->stride + (n - 1) * w->window_dilation + 1 - P - (s + zmax);
    }
    if (!x || !kern) return NULL;
    /* the partial sums: lhs dims map to output dims, the split spatial dims are summed over */
    for (i = 0; i < rank; i++) dest[i] = GS__DEST_REP;
    dest[cd->input_batch] = (int)cd->output_batch;
    for (i = 0; i < cd->n_spatial; i++)
        if (!((lmask >> cd->input_spatial[i]) & 1u)) dest[cd->input_spatial[i]] = (int)cd->output_spatial[i];
    gs__sp_note(sp, "convolution: input and kernel split along spatial dims; halo on the kernel, partial sums added");
    return gs__sp_combine(sp, gs_convolution(sp->G->g, x, kern, &lc), ls, rank, dest, GS_REDUCE_SUM, &v->shape, t, osh);
}

/* convolution, the filter-gradient shape: in[N,S,C]{S split} x kernel[W,C,F]{W split} -> out[..]{S whole}, partial
   sums added (all-reduce or reduce-scatter). Both operands split along spatial dims the output keeps whole (the
   filter-gradient shape): every device convolves its input region with its kernel taps (a halo on the input),
   giving a partial sum of the whole output, then the partial sums are added. Returns NULL with *tried false when
   the shardings do not fit. */
GS__FN gs_value *gs__sp_conv_taps(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh,
                                  bool *tried) {
    const gs_conv_config *c = v->conv;
    const gs_conv_dims *cd = &c->dims;
    const gs_value *X = v->operands[0], *K = v->operands[1];
    const gs_sharding *ls = sp->G->vals[X->id].sh, *ks = sp->G->vals[K->id].sh;
    int rank = v->shape.rank, i, dest[GS_MAX_RANK];
    uint32_t lmask = 0, kmask = 0, want_l = 0, want_k = 0;
    int64_t p, il[GS_MAX_TILE_RANK], ik[GS_MAX_TILE_RANK];
    gs_conv_config lc = *c;
    gs_value *x, *kern, *y;
    *tried = false;
    if ((c->feature_group_count > 1) || (c->batch_group_count > 1)) return NULL;
    for (i = 0; i < cd->n_spatial; i++) {
        int64_t kl = gs__sp_k(ls, (int)cd->input_spatial[i]);
        if (kl > 1 && gs__sp_k(t, (int)cd->output_spatial[i]) == 1 &&
            gs__sp_k(ks, (int)cd->kernel_spatial[i]) == kl) {
            lmask |= 1u << cd->input_spatial[i];
            kmask |= 1u << cd->kernel_spatial[i];
        }
    }
    if (!lmask) return NULL;
    want_l = gs__sp_split_mask(ls, rank);
    want_k = gs__sp_split_mask(ks, rank);
    if ((want_l & ~(lmask | 1u << cd->input_batch)) || want_k != kmask) return NULL;
    for (p = 0; p < sp->D; p++) {
        if (!gs_sharding_device_index(ls, p, il) || !gs_sharding_device_index(ks, p, ik)) return NULL;
        for (i = 0; i < cd->n_spatial; i++)
            if (((lmask >> cd->input_spatial[i]) & 1u) && il[cd->input_spatial[i]] != ik[cd->kernel_spatial[i]])
                return NULL;
    }
    if (sp->desc.conv_halo_on_rhs) {
        if (!(want_l & 1u << cd->input_batch)) {
            y = gs__sp_conv_rhs_halo(sp, v, t, osh, lmask, tried);
            if (y || *tried) return y;
        }
        gs__sp_note(sp, "halo on the input although conv_halo_exchange_always_on_lhs=false: XLA's kernel-side form "
                    "needs the input batch whole and no base dilation or reversal along a split dim");
    }
    /* plan every split spatial dim first: any failure leaves the convolution to the output-split rule */
    {
        gs__wp P[GS_MAX_RANK];
        int sdim[GS_MAX_RANK];
        for (i = 0; i < cd->n_spatial; i++) {
            int dl = (int)cd->input_spatial[i];
            const gs_window_dim *w = &c->window[i];
            int64_t k = gs__sp_k(ls, dl), W = K->shape.dims[cd->kernel_spatial[i]], ws = gs__shard_size(W, k);
            sdim[i] = -1;
            if (!((lmask >> dl) & 1u)) continue;
            /* every device adds a partial sum, those without real taps a zero one (no garbage). Device c holds
               kernel taps [c*ws, (c+1)*ws); reversed, they are window positions [W-(c+1)*ws, W-c*ws): the
               mirrored side, so its input region starts there (and the local window stays reversed) */
            if (!gs__sp_wplan(sp, &P[i], X->shape.dims[dl], k, w, ws, v->shape.dims[cd->output_spatial[i]],
                              c->reversal[i] ? (W - ws) * w->window_dilation : 0,
                              (c->reversal[i] ? -ws : ws) * w->window_dilation, 0, 1))
                return NULL;
            sdim[i] = dl;
        }
        *tried = true;
        x = gs__sp_get(sp, X, ls);
        kern = gs__sp_mask(sp, gs__sp_get(sp, K, ks), ks, &K->shape, kmask, 0);
        for (i = 0; i < cd->n_spatial && x; i++) {
            if (sdim[i] < 0) continue;
            x = gs__sp_region(sp, x, ls, sdim[i], P[i].S, P[i].a, P[i].used, P[i].n, gs__sp_zero(sp, X->shape.dtype),
                              "input halo for the device's kernel taps");
            lc.window[i].size = P[i].W;
            lc.window[i].pad_lo = P[i].lc;
            lc.window[i].pad_hi = P[i].hc;
        }
        if (!x || !kern) return NULL;
        y = gs_convolution(sp->G->g, x, kern, &lc);
        {
            gs__wres res;
            int out_of[GS_MAX_RANK];
            for (i = 0; i < GS_MAX_RANK; i++) {
                res.r[i] = NULL;
                res.keep[i] = -1;
                out_of[i] = -1;
            }
            for (i = 0; i < cd->n_spatial; i++) {
                if (sdim[i] < 0) continue;
                out_of[sdim[i]] = (int)cd->output_spatial[i];
                res.keep[sdim[i]] = P[i].cnt;
                if (P[i].rmax) res.r[sdim[i]] = gs__sp_ctab(sp, ls, sdim[i], P[i].r);
            }
            y = gs__sp_win_keep(sp, y, &res, rank, out_of);
        }
    }
    /* the partial sums: lhs dims map to output dims, the split spatial dims are summed over */
    for (i = 0; i < rank; i++) dest[i] = GS__DEST_REP;
    dest[cd->input_batch] = (int)cd->output_batch;
    for (i = 0; i < cd->n_spatial; i++)
        if (!((lmask >> cd->input_spatial[i]) & 1u)) dest[cd->input_spatial[i]] = (int)cd->output_spatial[i];
    gs__sp_note(sp, "convolution: input and kernel split along spatial dims, partial sums added");
    return gs__sp_combine(sp, y, ls, rank, dest, GS_REDUCE_SUM, &v->shape, t, osh);
}

/* convolution: in[N,S,C]{N, S split} x kernel[W,C,F]{W whole} -> out[N,S',F]{N, S' split}, spatial halos.
   Convolution: spatial dims split like the output's get their input regions by the engine (the kernel whole along
   them); batch and output features split as the output */
GS__FN gs_value *gs__sp_conv(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    const gs_conv_config *c = v->conv;
    const gs_conv_dims *cd = &c->dims;
    const gs_value *X = v->operands[0], *K = v->operands[1];
    int rank = v->shape.rank, i, in_dest[GS_MAX_RANK], k_dest[GS_MAX_RANK], out_of[GS_MAX_RANK];
    uint32_t failed, fo = 0, keep_whole = 0;
    const gs_sharding *os, *is, *xs;
    gs_window_dim win[GS_MAX_RANK];
    int64_t O[GS_MAX_RANK];
    gs__wres res;
    gs_conv_config lc = *c;
    gs_value *x, *kern, *y;
    bool tried;
    {
        /* no real spatial dim split (dims that are a dot's batch, free or contracting dims may be): the dot
           strategies (contracting input features included) */
        uint32_t sl = 0, sk = 0, so = 0;
        gs__cdk kind[GS_MAX_RANK];
        int ri = 3 + cd->n_spatial + gs__conv_dot_kinds(v, kind);   /* the iteration rank (gs__sp_conv_dims) */
        for (i = 0; i < cd->n_spatial; i++) {
            ri += kind[i] == GS__CDK_CONTRACT;
            if (kind[i] != GS__CDK_CONV) continue;
            sl |= 1u << cd->input_spatial[i];
            sk |= 1u << cd->kernel_spatial[i];
            so |= 1u << cd->output_spatial[i];
        }
        if (c->feature_group_count <= 1 && c->batch_group_count <= 1 && ri <= GS_MAX_RANK &&
            !(gs__sp_split_mask(t, rank) & so) &&
            !(gs__sp_split_mask(sp->G->vals[X->id].sh, rank) & sl) &&
            !(gs__sp_split_mask(sp->G->vals[K->id].sh, rank) & sk))
            return gs__sp_dot(sp, v, t, osh);
    }
    y = gs__sp_conv_taps(sp, v, t, osh, &tried);
    if (y || tried) return y;
    if (c->feature_group_count > 1) keep_whole |= 1u << cd->output_feature;
    if (c->batch_group_count > 1) keep_whole |= 1u << cd->output_batch | 1u << cd->output_feature;
    os = gs__sp_unsplit(sp, t, keep_whole);
    if (!os) return NULL;
    for (i = 0; i < rank; i++) in_dest[i] = k_dest[i] = GS__DEST_REP;
    in_dest[cd->output_batch] = (int)cd->input_batch;
    for (i = 0; i < cd->n_spatial; i++) in_dest[cd->output_spatial[i]] = (int)cd->input_spatial[i];
    k_dest[cd->output_feature] = (int)cd->kernel_output_feature;
    is = gs__sh_map(sp->ctx, os, rank, in_dest);
    if (!is) return NULL;
    for (i = 0; i < rank; i++) {
        win[i] = gs_window_default();
        O[i] = X->shape.dims[i];
        out_of[i] = -1;
    }
    for (i = 0; i < cd->n_spatial; i++) {
        int dl = (int)cd->input_spatial[i];
        win[dl] = c->window[i];
        O[dl] = v->shape.dims[cd->output_spatial[i]];
        out_of[dl] = (int)cd->output_spatial[i];
    }
    x = gs__sp_win_input(sp, X, is, win, O, gs__sp_zero(sp, X->shape.dtype), &res, &failed, &xs);
    for (i = 0; i < cd->n_spatial; i++)
        if ((failed >> cd->input_spatial[i]) & 1u) fo |= 1u << cd->output_spatial[i];
    if (fo) os = gs__sp_unsplit(sp, os, fo);
    kern = gs__sp_get(sp, K, gs__sh_map(sp->ctx, os, rank, k_dest));
    if (!x || !kern || !os) return NULL;
    for (i = 0; i < cd->n_spatial; i++) lc.window[i] = res.w[cd->input_spatial[i]];
    y = gs_convolution(sp->G->g, x, kern, &lc);
    gs__sp_note(sp, "convolution: batch and output features split as the output");
    *osh = os;
    return gs__sp_win_keep(sp, y, &res, rank, out_of);
}

/* The groups of a reshape: the smallest runs of input dims [i0, i1) and output dims [j0, j1) with equal products
   (a size-1 dim left at the end forms a group of its own). Returns the count (at most 2 * GS_MAX_RANK), or -1
   when the products do not match. */
typedef struct gs__sp_rgroup { int i0, i1, j0, j1; } gs__sp_rgroup;

GS__FN int gs__sp_reshape_groups(const gs_shape *in, const gs_shape *out, gs__sp_rgroup *g) {
    int i = 0, j = 0, n = 0;
    while (i < in->rank || j < out->rank) {
        int64_t pi = 1, po = 1;
        g[n].i0 = i;
        g[n].j0 = j;
        if (i < in->rank) pi = in->dims[i++];
        if (j < out->rank) po = out->dims[j++];
        while (pi != po) {
            if (pi < po && i < in->rank) pi *= in->dims[i++];
            else if (pi > po && j < out->rank) po *= out->dims[j++];
            else return -1;
        }
        g[n].i1 = i;
        g[n].j1 = j;
        n++;
    }
    return n;
}

GS__FN bool gs__sp_one_to_one(const gs__sp_rgroup *g) { return g->i1 - g->i0 == 1 && g->j1 - g->j0 == 1; }

/* whether the reshape is local: 1:1 dims keep their tile counts, other groups split only evenly */
GS__FN bool gs__sp_reshape_local_ok(const gs_shape *in, const gs_sharding *si, const gs_shape *out,
                                    const gs_sharding *so) {
    gs__sp_rgroup g[2 * GS_MAX_RANK];
    int n = gs__sp_reshape_groups(in, out, g), q, d;
    if (n < 0) return false;
    for (q = 0; q < n; q++) {
        if (gs__sp_one_to_one(&g[q])) {
            if (gs__sp_k(si, g[q].i0) != gs__sp_k(so, g[q].j0)) return false;
            continue;
        }
        for (d = g[q].i0; d < g[q].i1; d++)
            if (gs__sp_k(si, d) > 1 && in->dims[d] % gs__sp_k(si, d)) return false;
        for (d = g[q].j0; d < g[q].j1; d++)
            if (gs__sp_k(so, d) > 1 && out->dims[d] % gs__sp_k(so, d)) return false;
    }
    return true;
}

/* dims of a reshape's operand (and of its result, *out_changed) in groups that are not 1:1 */
GS__FN uint32_t gs__sp_reshape_changed(const gs_shape *in, const gs_shape *out, uint32_t *out_changed) {
    gs__sp_rgroup g[2 * GS_MAX_RANK];
    int n = gs__sp_reshape_groups(in, out, g), q, d;
    uint32_t m = 0, mo = 0;
    if (n < 0) {   /* not a valid reshape: everything changes */
        m = (1u << in->rank) - 1;
        mo = (1u << out->rank) - 1;
    }
    for (q = 0; q < n; q++) {
        if (gs__sp_one_to_one(&g[q])) continue;
        for (d = g[q].i0; d < g[q].i1; d++) m |= 1u << d;
        for (d = g[q].j0; d < g[q].j1; d++) mo |= 1u << d;
    }
    if (out_changed) *out_changed = mo;
    return m;
}

/* reshape with realignment: x[3,2]{dim 0 split} -> out[6]{split}. A reshape whose groups are 1:1 dims, merges
   (input dims -> one output dim, only the major input dim split) or splits (one input dim -> output dims, only the
   major output dim split): each merge or split group realigns its rows by the engine (GShard's [3,2] -> [6] case).
   Returns NULL with *fits false when the groups do not fit. */
GS__FN gs_value *gs__sp_reshape_halo(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh,
                                     bool *fits) {
    const gs_value *X = v->operands[0];
    const gs_shape *I = &X->shape, *S = &v->shape;
    int dest[GS_MAX_RANK], ng, q;
    gs__sp_rgroup grp[2 * GS_MAX_RANK];
    const gs_sharding *is;
    gs_value *x, *post[GS_MAX_RANK];
    gs_shape pre;
    int64_t keep[GS_MAX_RANK];
    *fits = false;
    for (q = 0; q < S->rank; q++) dest[q] = GS__DEST_REP;
    if ((ng = gs__sp_reshape_groups(I, S, grp)) < 0) return NULL;
    pre = *S;
    for (q = 0; q < ng; q++) {
        int a0 = grp[q].i0, a1 = grp[q].i1, b0 = grp[q].j0, b1 = grp[q].j1, e, nsplit = 0, jm = -1, im = -1;
        for (e = b0; e < b1; e++)
            if (gs__sp_k(t, e) > 1) {
                nsplit++;
                jm = e;
            }
        if (!nsplit) continue;
        if (nsplit > 1 || (a1 - a0 != 1 && b1 - b0 != 1)) return NULL;
        if (b1 - b0 == 1) {
            for (e = a0; e < a1 && im < 0; e++)   /* the major input dim (size-1 dims ahead of it do not count) */
                if (I->dims[e] > 1) im = e;
            if (im < 0) return NULL;
        } else {
            for (e = b0; e < b1; e++)
                if (S->dims[e] > 1) break;
            if (e != jm) return NULL;           /* only the major output dim of a split may be split */
            im = a0;
        }
        dest[jm] = im;
    }
    is = gs__sh_map(sp->ctx, t, I->rank, dest);
    if (!is) return NULL;
    *fits = true;
    x = gs__sp_get(sp, X, is);
    for (q = 0; q < S->rank; q++) {
        post[q] = NULL;
        keep[q] = pre.dims[q] = gs__shard_size(S->dims[q], gs__sp_k(t, q));
    }
    for (q = 0; q < ng && x; q++) {
        int a1 = grp[q].i1, b0 = grp[q].j0, b1 = grp[q].j1, e, jm = -1, im;
        int64_t k, o, M = 1, c, *a, *off, n = 1;
        bool *used;
        for (e = b0; e < b1; e++)
            if (gs__sp_k(t, e) > 1) jm = e;
        if (jm < 0 || gs__sp_one_to_one(&grp[q])) continue;
        im = dest[jm];
        k = gs__sp_k(t, jm);
        a = (int64_t *)gs__arena_alloc(sp->ctx, sizeof(int64_t) * (size_t)(2 * k));
        used = (bool *)gs__arena_alloc(sp->ctx, sizeof(bool) * (size_t)k);
        if (!a || !used) return NULL;
        off = a + k;
        if (b1 - b0 == 1) {
            /* merge: output element f of the group is input row f / M of the major dim */
            for (e = im + 1; e < a1; e++) M *= I->dims[e];
            o = gs__shard_size(S->dims[jm], k);
            for (c = 0; c < k; c++) {
                used[c] = c * o < S->dims[jm];
                a[c] = (c * o) / M;
                if (used[c]) n = GS__MAX(n, (c * o + o - 1) / M - a[c] + 1);
                off[c] = c * o - a[c] * M;
            }
            x = gs__sp_region(sp, x, is, im, I->dims[im], a, used, n, NULL, "reshape: rows realigned to the merged dim");
            pre.dims[jm] = n * M;
            for (c = 0; c < k; c++) off[c] = used[c] ? off[c] : 0;
            post[jm] = gs__sp_ctab(sp, is, im, off);
        } else {
            /* split: output rows [c*o, c*o + o) of the major dim are input elements [c*o*M, (c*o + o)*M) */
            for (e = jm + 1; e < b1; e++) M *= S->dims[e];
            o = gs__shard_size(S->dims[jm], k);
            for (c = 0; c < k; c++) {
                used[c] = c * o < S->dims[jm];
                a[c] = c * o * M;
            }
            x = gs__sp_region(sp, x, is, im, I->dims[im], a, used, o * M, NULL, "reshape: the split dim realigned");
        }
    }
    if (!x) return NULL;
    x = gs_reshape(sp->G->g, x, pre.rank, pre.dims);
    {
        gs_value *st[GS_MAX_RANK];
        bool dyn = false;
        for (q = 0; q < S->rank; q++) {
            st[q] = post[q] ? post[q] : gs__sp_s32(sp, 0);
            if (post[q]) dyn = true;
        }
        if (dyn) x = gs_dynamic_slice(sp->G->g, x, st, keep);
    }
    *osh = t;
    return x;
}

/* The operand and result shardings of a reshape done tile by tile when t does not map back whole: the cheapest
   (operand reshard plus result reshard to t, gs__sp_est) of (a) t's factors that survive the reshape back
   (x[12,8]{2,4} -> out[8,12]{8,1}: x resharded to {4,1 rep 2}, reshaped, sliced to {8,1}), (b) the factors of
   the operand's own sharding that survive the reshape (x{2,4} reshapes as {2,1 rep 4}) and (c) the operand
   with the dims the reshape changes gathered. *in = NULL when none keeps a split. */
GS__FN void gs__sp_reshape_pick(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **in,
                                const gs_sharding **out) {
    const gs_shape *S = &v->shape, *X = &v->operands[0]->shape;
    const gs_sharding *cur = sp->G->vals[v->operands[0]->id].sh, *ci[3], *co[3];
    uint32_t ch_in, ch_out;
    double best = 0;
    int c;
    ci[0] = gs__sh_reshape(sp->ctx, t, S, X);
    ci[1] = gs__sh_reshape(sp->ctx, gs__sh_reshape(sp->ctx, cur, X, S), S, X);
    ch_in = gs__sp_reshape_changed(X, S, &ch_out);
    ci[2] = gs__sp_unsplit(sp, cur, ch_in);
    *in = *out = NULL;
    for (c = 0; c < 3; c++) {
        double s1, s2, secs;
        co[c] = ci[c] ? gs__sh_reshape(sp->ctx, ci[c], X, S) : NULL;
        if (!co[c] || gs__sp_is_rep(co[c]) || (c == 2 && gs__sp_split_mask(co[c], S->rank) & ch_out) ||
            !gs__sp_reshape_local_ok(X, ci[c], S, co[c]))
            continue;
        gs__sp_est(sp, cur, ci[c], X, &s1);
        gs__sp_est(sp, co[c], t, S, &s2);
        secs = s1 + s2;
        if (!*in || secs < best * (1 - 1e-9)) {
            best = secs;
            *in = ci[c];
            *out = co[c];
        }
    }
}

/* reshape: x[A,B]{t mapped back} -> out[A*B]{t} as a local reshape of every tile when the tiles line up;
   x[3,2]{dim 0 split} -> out[6]{split} realigned by the engine (gs__sp_reshape_halo); otherwise a sharding that
   keeps part of the split on both sides (gs__sp_reshape_pick), and only when none does, both gathered */
GS__FN gs_value *gs__sp_reshape(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh) {
    const gs_shape *S = &v->shape;
    gs_value *ops[1];
    const gs_shape *X = &v->operands[0]->shape;
    const gs_sharding *is = gs__sh_reshape(sp->ctx, t, S, X), *back;
    gs_shape ls;
    if (is && !gs__sp_is_rep(is) && (back = gs__sh_reshape(sp->ctx, is, X, S)) && gs_sharding_equal(back, t) &&
        gs__sp_reshape_local_ok(X, is, S, t)) {
        ls = gs__sp_local(t, *S);
        ops[0] = gs__sp_get(sp, v->operands[0], is);
        return gs__sp_clone(sp, v, ops, &ls);
    }
    if (gs__sp_is_rep(t)) {
        ops[0] = gs__sp_get(sp, v->operands[0], t);
        return gs__sp_clone(sp, v, ops, S);
    }
    {
        bool fits;
        gs_value *r = gs__sp_reshape_halo(sp, v, t, osh, &fits);
        if (r || fits) return r;
    }
    gs__sp_reshape_pick(sp, v, t, &is, &back);
    if (!is) {
        is = back = gs__sp_rep(sp);
        gs__sp_note(sp, "reshape gathered: no split lines up on both sides");
    } else {
        gs__sp_note(sp, "reshape through the split both sides keep (operand %s, result %s)",
                    gs_sharding_to_text(sp->ctx, is), gs_sharding_to_text(sp->ctx, back));
    }
    ls = gs__sp_local(back, *S);
    ops[0] = gs__sp_get(sp, v->operands[0], is);
    *osh = back;
    return gs__sp_clone(sp, v, ops, &ls);
}
