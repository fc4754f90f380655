/* test_ragged.c - ragged-dot end to end: text in and out, XLA's shape errors, the reference interpreter against
   hand-computed values and a naive loop written here from the definition (all three modes, group_sizes of rank 1
   and of full rank, negative sizes, several element types), propagation, and the partitioned program against the
   reference on random shapes and shardings, uneven splits included, with NaN-poisoned padding. */
#if !defined(_POSIX_C_SOURCE)
#  define _POSIX_C_SOURCE 200809L /* mkdtemp */
#endif
#include "test.h"
#include <stdlib.h>
#include <unistd.h>

/* ---- a naive ragged dot, straight from the definition (XLA's evaluator's index loops) ---- */
typedef struct rd_case {
    gs_ragged_dot_dims d;
    gs_shape L, R, Gs;   /* lhs, rhs, group_sizes */
} rd_case;

static int64_t rd_lin(const gs_shape *s, const int64_t *idx) {
    int64_t k = 0;
    int d;
    for (d = 0; d < s->rank; d++) k = k * s->dims[d] + idx[d];
    return k;
}

static bool rd_in(const int64_t *l, int n, int64_t x) {
    int i;
    for (i = 0; i < n; i++)
        if (l[i] == x) return true;
    return false;
}

/* out (the result's shape o, row-major doubles) = ragged-dot(lhs, rhs, gs) by its definition */
static void rd_naive(const rd_case *c, const gs_shape *o, const double *lhs, const double *rhs, const int64_t *gs,
                     double *out) {
    const gs_dot_dims *dd = &c->d.dot;
    int64_t rag = c->d.lhs_ragged[0], oi[GS_MAX_RANK], li[GS_MAX_RANK], ri[GS_MAX_RANK], gi[GS_MAX_RANK];
    int64_t G = c->Gs.dims[c->Gs.rank - 1], n = gs_shape_numel(o), e;
    int mode = rd_in(dd->lhs_batch, dd->n_batch, rag) ? 2 : rd_in(dd->lhs_contract, dd->n_contract, rag) ? 1 : 0;
    int d, k;
    for (e = 0; e < n; e++) {
        int64_t rem = e, grp = -1, pos = 0, ng = 0, total, kc[GS_MAX_RANK], kn = 1;
        double acc = 0;
        for (d = o->rank - 1; d >= 0; d--) { oi[d] = rem % o->dims[d]; rem /= o->dims[d]; }
        if (mode == 1) grp = oi[pos++];
        for (k = 0; k < dd->n_batch; k++, pos++) { li[dd->lhs_batch[k]] = oi[pos]; ri[dd->rhs_batch[k]] = oi[pos]; }
        for (d = 0; d < c->L.rank; d++)
            if (!rd_in(dd->lhs_batch, dd->n_batch, d) && !rd_in(dd->lhs_contract, dd->n_contract, d)) li[d] = oi[pos++];
        for (d = 0; d < c->R.rank; d++)
            if (!rd_in(dd->rhs_batch, dd->n_batch, d) && !rd_in(dd->rhs_contract, dd->n_contract, d) &&
                !(mode == 0 && d == c->d.rhs_group[0]))
                ri[d] = oi[pos++];
        /* group_sizes row: batch dims, then (mode 0) lhs free dims before the ragged one */
        if (mode == 2) {
            for (k = 0; k < dd->n_batch && dd->lhs_batch[k] != rag; k++) gi[ng++] = li[dd->lhs_batch[k]];
        } else {
            for (k = 0; k < dd->n_batch; k++) gi[ng++] = li[dd->lhs_batch[k]];
            if (mode == 0)
                for (d = 0; d < rag; d++)
                    if (!rd_in(dd->lhs_batch, dd->n_batch, d) && !rd_in(dd->lhs_contract, dd->n_contract, d)) gi[ng++] = li[d];
        }
        if (mode == 0) {
            int64_t run = 0, i;
            for (i = 0; i < G && grp < 0; i++) {
                gi[c->Gs.rank - 1] = i;
                run += c->Gs.rank == 1 ? gs[i] : gs[rd_lin(&c->Gs, gi)];
                if (li[rag] < run) grp = i;
            }
            if (grp < 0) { out[e] = 0; continue; }
            ri[c->d.rhs_group[0]] = grp;
        }
        if (mode == 2) {
            int64_t i;
            total = 0;
            for (i = 0; i < G; i++) {
                gi[c->Gs.rank - 1] = i;
                total += c->Gs.rank == 1 ? gs[i] : gs[rd_lin(&c->Gs, gi)];
            }
            if (li[rag] >= total) { out[e] = 0; continue; }
        }
        for (k = 0; k < dd->n_contract; k++) kn *= c->L.dims[dd->lhs_contract[k]];
        for (rem = 0; rem < kn; rem++) {
            int64_t r2 = rem;
            bool keep = true;
            for (k = dd->n_contract - 1; k >= 0; k--) {
                kc[k] = r2 % c->L.dims[dd->lhs_contract[k]];
                r2 /= c->L.dims[dd->lhs_contract[k]];
                li[dd->lhs_contract[k]] = kc[k];
                ri[dd->rhs_contract[k]] = kc[k];
            }
            if (mode == 1) {   /* the range of group grp, for this row's batch and outer contracting indices */
                int64_t start = 0, end = 0, i, K = c->L.dims[rag];
                int ng2 = ng;
                for (k = 0; k < dd->n_contract && dd->lhs_contract[k] != rag; k++) gi[ng2++] = kc[k];
                for (i = 0; i <= grp; i++) {
                    gi[c->Gs.rank - 1] = i;
                    start = end;
                    end += c->Gs.rank == 1 ? gs[i] : gs[rd_lin(&c->Gs, gi)];
                }
                start = start < 0 ? 0 : start > K ? K : start;
                end = end < 0 ? 0 : end > K ? K : end;
                keep = li[rag] >= start && li[rag] < end;
            }
            if (keep) acc += lhs[rd_lin(&c->L, li)] * rhs[rd_lin(&c->R, ri)];
        }
        out[e] = acc;
    }
}

/* a graph of the case (element type t, group sizes gt); returns its root or NULL */
static gs_value *rd_build(gs_ctx *ctx, const rd_case *c, gs_dtype t, gs_dtype gt, gs_graph **gout) {
    gs_graph *g = gs_graph_new(ctx, "rd");
    gs_shape L = c->L, R = c->R, Gs = c->Gs;
    gs_value *r;
    L.dtype = R.dtype = t;
    Gs.dtype = gt;
    r = gs_ragged_dot(g, gs_parameter(g, 0, L, "lhs"), gs_parameter(g, 1, R, "rhs"), gs_parameter(g, 2, Gs, "gs"), &c->d);
    if (r) gs_graph_set_root(g, r);
    *gout = g;
    return r;
}

static bool rd_isf(gs_dtype t) { return t == GS_F32 || t == GS_F64; }

static void rd_store(gs_dtype t, void *p, int64_t i, double x) {
    switch (t) {
    case GS_F32: ((float *)p)[i] = (float)x; break;
    case GS_F64: ((double *)p)[i] = x; break;
    case GS_S32: ((int32_t *)p)[i] = (int32_t)x; break;
    case GS_U32: ((uint32_t *)p)[i] = (uint32_t)x; break;
    case GS_S64: ((int64_t *)p)[i] = (int64_t)x; break;
    case GS_U8: ((uint8_t *)p)[i] = (uint8_t)x; break;
    default: break;
    }
}
static double rd_load(gs_dtype t, const void *p, int64_t i) {
    switch (t) {
    case GS_F32: return ((const float *)p)[i];
    case GS_F64: return ((const double *)p)[i];
    case GS_S32: return ((const int32_t *)p)[i];
    case GS_S64: return (double)((const int64_t *)p)[i];
    default: return 0;
    }
}

/* evaluates the case with gs_eval and the naive loop on the same inputs (values: floats in [-1, 1), integers in
   [-3, 3]; group sizes as given) and compares (exact for integers) */
static void rd_check(const rd_case *c, gs_dtype t, gs_dtype gt, const int64_t *gsv, uint64_t seed) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g;
    gs_value *r = rd_build(ctx, c, t, gt, &g);
    gs_shape o;
    int64_t nl = gs_shape_numel(&c->L), nr = gs_shape_numel(&c->R), ng = gs_shape_numel(&c->Gs), no, i, bad = 0;
    double *dl, *dr, *want, worst = 0;
    void *bl, *br, *bg, *bo;
    const void *in[3];
    void *outp[1];
    CHECK_MSG(r != NULL, "build: %s", gs_ctx_error_msg(ctx));
    if (!r) { gs_ctx_destroy(ctx); return; }
    o = gs_value_shape(r);
    no = gs_shape_numel(&o);
    dl = (double *)malloc(sizeof(double) * (size_t)(nl + 1));
    dr = (double *)malloc(sizeof(double) * (size_t)(nr + 1));
    want = (double *)malloc(sizeof(double) * (size_t)(no + 1));
    bl = malloc(8 * (size_t)(nl + 1));
    br = malloc(8 * (size_t)(nr + 1));
    bg = malloc(8 * (size_t)(ng + 1));
    bo = malloc(8 * (size_t)(no + 1));
    for (i = 0; i < nl; i++) {
        dl[i] = rd_isf(t) ? (double)gst_randf(&seed) : (double)gst_randint(&seed, -3, 3);
        if (t == GS_F32) dl[i] = (double)(float)dl[i];
        rd_store(t, bl, i, dl[i]);
    }
    for (i = 0; i < nr; i++) {
        dr[i] = rd_isf(t) ? (double)gst_randf(&seed) : (double)gst_randint(&seed, -3, 3);
        if (t == GS_F32) dr[i] = (double)(float)dr[i];
        rd_store(t, br, i, dr[i]);
    }
    for (i = 0; i < ng; i++) rd_store(gt, bg, i, (double)gsv[i]);
    rd_naive(c, &o, dl, dr, gsv, want);
    in[0] = bl;
    in[1] = br;
    in[2] = bg;
    outp[0] = bo;
    CHECK_OK(gs_eval(g, in, outp));
    for (i = 0; i < no; i++) {
        double got = rd_load(t, bo, i), err = fabs(got - want[i]);
        if (err > worst) worst = err;
        if (rd_isf(t) ? err > 1e-5 * (1 + fabs(want[i])) : got != want[i]) bad++;
    }
    CHECK_MSG(bad == 0, "%lld of %lld elements differ (worst %g) for %s", (long long)bad, (long long)no, worst,
              gs_hlo_print(g));
    free(dl); free(dr); free(want); free(bl); free(br); free(bg); free(bo);
    gs_ctx_destroy(ctx);
}

static gs_shape rd_shape(int rank, const int64_t *dims) { return gs_shape_make(GS_F32, rank, dims); }

/* the three modes by hand */
static void test_ragged_hand(void) {
    gs_ctx *ctx = gst_ctx();
    const char *text =
        "HloModule m\nENTRY e {\n"
        "  l = f32[4,2] constant({{1,2},{3,4},{5,6},{7,8}})\n"
        "  w = f32[2,2,1] constant({{{1},{1}},{{10},{0}}})\n"
        "  g = s32[2] constant({1,2})\n"
        "  a = f32[4,1] ragged-dot(l, w, g), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}\n"
        "  x = f32[1,4] constant({{1,2,3,4}})\n"
        "  y = f32[4,1] constant({{1},{1},{1},{1}})\n"
        "  b = f32[2,1,1] ragged-dot(x, y, g), lhs_contracting_dims={1}, rhs_contracting_dims={0}, lhs_ragged_dims={1}\n"
        "  p = f32[3,1,1] constant({{{1}},{{2}},{{3}}})\n"
        "  q = f32[3,1,1] constant({{{10}},{{10}},{{10}}})\n"
        "  h = u32[1] constant({2})\n"
        "  c = f32[3,1,1] ragged-dot(p, q, h), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}, lhs_ragged_dims={0}\n"
        "  n = s32[3] constant({5,-3,4})\n"
        "  l7 = f32[7,1] constant({{1},{2},{3},{4},{5},{6},{7}})\n"
        "  w3 = f32[3,1,1] constant({{{1}},{{100}},{{1000}}})\n"
        "  d = f32[7,1] ragged-dot(l7, w3, n), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}\n"
        "  ROOT t = (f32[4,1], f32[2,1,1], f32[3,1,1], f32[7,1]) tuple(a, b, c, d)\n}\n";
    gs_graph *g = NULL;
    float a[4], b[2], c[3], d[7];
    void *outs[4];
    outs[0] = a; outs[1] = b; outs[2] = c; outs[3] = d;
    CHECK_OK(gs_hlo_parse(ctx, text, strlen(text), &g));
    if (g) {
        CHECK_OK(gs_eval(g, NULL, outs));
        /* rows: 0 in group 0 (1+2), 1 and 2 in group 1 (x10 of column 0), 3 past the groups */
        CHECK_NEAR(a[0], 3, 0); CHECK_NEAR(a[1], 30, 0); CHECK_NEAR(a[2], 50, 0); CHECK_NEAR(a[3], 0, 0);
        /* group 0 sums k in [0,1), group 1 k in [1,3) */
        CHECK_NEAR(b[0], 1, 0); CHECK_NEAR(b[1], 5, 0);
        /* batches 0 and 1 within the total 2, batch 2 past it */
        CHECK_NEAR(c[0], 10, 0); CHECK_NEAR(c[1], 20, 0); CHECK_NEAR(c[2], 0, 0);
        /* sizes 5, -3, 4: running totals 5, 2, 6; rows 0-4 group 0, row 5 group 2 (5 < 6), row 6 none */
        CHECK_NEAR(d[0], 1, 0); CHECK_NEAR(d[4], 5, 0); CHECK_NEAR(d[5], 6000, 0); CHECK_NEAR(d[6], 0, 0);
        CHECK(gst_reprints(gs_hlo_print(g)));
    }
    gs_ctx_destroy(ctx);
}

/* a random case of mode `mode`: dims shuffled in both operands, a batch dim or two, one or two contracting dims,
   group_sizes of rank 1 or full rank; sizes in [-1, 4] (some negative, totals short of and past the dim) */
static void rd_random(uint64_t *s, int mode, rd_case *c, int64_t *gsv) {
    int nb = (int)gst_randint(s, mode == 2 ? 1 : 0, 2), nc = (int)gst_randint(s, 1, 2), nlf = (int)gst_randint(s, mode == 0 ? 1 : 0, 2);
    int nrf = (int)gst_randint(s, 0, 1), lr = nb + nc + nlf, rr = nb + nc + nrf + (mode == 0), k, d;
    int64_t lperm[GS_MAX_RANK], rperm[GS_MAX_RANK], ld[GS_MAX_RANK], rdims[GS_MAX_RANK], G = gst_randint(s, 1, 4), i;
    memset(c, 0, sizeof *c);
    for (d = 0; d < lr; d++) lperm[d] = d;
    for (d = 0; d < rr; d++) rperm[d] = d;
    for (d = lr - 1; d > 0; d--) { int64_t j = gst_randint(s, 0, d), tt = lperm[d]; lperm[d] = lperm[j]; lperm[j] = tt; }
    for (d = rr - 1; d > 0; d--) { int64_t j = gst_randint(s, 0, d), tt = rperm[d]; rperm[d] = rperm[j]; rperm[j] = tt; }
    /* logical dims: batch, contracting, then free; lperm/rperm place them */
    c->d.dot.n_batch = nb;
    c->d.dot.n_contract = nc;
    for (k = 0; k < nb; k++) {
        c->d.dot.lhs_batch[k] = lperm[k];
        c->d.dot.rhs_batch[k] = rperm[k];
        ld[lperm[k]] = rdims[rperm[k]] = gst_randint(s, 1, 3);
    }
    for (k = 0; k < nc; k++) {
        c->d.dot.lhs_contract[k] = lperm[nb + k];
        c->d.dot.rhs_contract[k] = rperm[nb + k];
        ld[lperm[nb + k]] = rdims[rperm[nb + k]] = gst_randint(s, 1, 5);
    }
    for (k = nb + nc; k < lr; k++) ld[lperm[k]] = gst_randint(s, 1, 5);
    for (k = nb + nc; k < rr; k++) rdims[rperm[k]] = gst_randint(s, 1, 3);
    c->d.n_lhs_ragged = 1;
    c->d.lhs_ragged[0] = mode == 2 ? lperm[gst_randint(s, 0, nb - 1)] : mode == 1 ? lperm[nb + gst_randint(s, 0, nc - 1)]
                                                                                   : lperm[nb + nc + gst_randint(s, 0, nlf - 1)];
    if (mode == 2) ld[c->d.lhs_ragged[0]] = rdims[rperm[0]] = ld[c->d.lhs_ragged[0]] + 3;   /* room for short totals */
    if (mode == 2)
        for (k = 0; k < nb; k++) rdims[rperm[k]] = ld[lperm[k]];
    if (mode == 0) {
        c->d.n_rhs_group = 1;
        c->d.rhs_group[0] = rperm[rr - 1];
        rdims[rperm[rr - 1]] = G;
    }
    c->L = rd_shape(lr, ld);
    c->R = rd_shape(rr, rdims);
    {
        int64_t gd[GS_MAX_RANK], rag = c->d.lhs_ragged[0];
        int np = 0;
        for (k = 0; k < nb && !(mode == 2 && c->d.dot.lhs_batch[k] == rag); k++) gd[np++] = ld[c->d.dot.lhs_batch[k]];
        if (mode == 1)
            for (k = 0; k < nc && c->d.dot.lhs_contract[k] != rag; k++) gd[np++] = ld[c->d.dot.lhs_contract[k]];
        if (mode == 0)
            for (d = 0; d < rag; d++)
                if (!rd_in(c->d.dot.lhs_batch, nb, d) && !rd_in(c->d.dot.lhs_contract, nc, d)) gd[np++] = ld[d];
        if (gst_randint(s, 0, 2) == 0) np = 0;
        gd[np] = G;
        c->Gs = rd_shape(np + 1, gd);
    }
    for (i = 0; i < gs_shape_numel(&c->Gs); i++) gsv[i] = gst_randint(s, -1, 4);
}

/* random cases of every mode and several element types against the naive loop */
static void test_ragged_naive(void) {
    static const gs_dtype types[] = {GS_F32, GS_F64, GS_S32, GS_S64};
    static const gs_dtype gtypes[] = {GS_S32, GS_S64, GS_U8, GS_S32};
    uint64_t s = 0x5eed;
    int it;
    for (it = 0; it < 120; it++) {
        rd_case c;
        int64_t gsv[1024];
        int mode = it % 3;
        gs_dtype gt = gtypes[(it / 3) % 4];
        rd_random(&s, mode, &c, gsv);
        if (gt == GS_U8) {
            int64_t i;
            for (i = 0; i < gs_shape_numel(&c.Gs); i++) gsv[i] = gsv[i] < 0 ? 0 : gsv[i];
        }
        rd_check(&c, types[(it / 3) % 4], gt, gsv, s);
        if (gst_checks_failed_in_test) break;
    }
}

/* every element type a dot takes: a ragged dot whose one group covers everything is that dot, bit for bit, in
   each mode (the same products and sums, accumulated as the dot accumulates them) */
static void test_ragged_types(void) {
    int t, tested = 0;
    for (t = GS_F32; t < GS_DTYPE_COUNT; t++) {
        gs_ctx *ctx;
        gs_graph *g;
        gs_value *o[6], *l, *r, *l3, *r3, *gz, *gk, *gb;
        gs_ragged_dot_dims rd;
        gs_dot_dims *dd = &rd.dot;
        int64_t ld[2] = {5, 3}, rdm[3] = {1, 3, 4}, rd2[2] = {3, 4}, l3d[3] = {2, 5, 3}, r3d[3] = {2, 3, 4}, one[1] = {1}, od[2] = {5, 4};
        int32_t n5 = 5, n3 = 3, n2 = 2;
        void *in[7], *out[6];
        int k;
        if (t == GS_PRED || t == GS_TUPLE || t == GS_TOKEN) continue;
        ctx = gst_ctx();
        g = gs_graph_new(ctx, "types");
        l = gs_parameter(g, 0, gs_shape_make((gs_dtype)t, 2, ld), "l");
        r = gs_parameter(g, 1, gs_shape_make((gs_dtype)t, 3, rdm), "r");
        l3 = gs_parameter(g, 2, gs_shape_make((gs_dtype)t, 3, l3d), "l3");
        r3 = gs_parameter(g, 3, gs_shape_make((gs_dtype)t, 3, r3d), "r3");
        gz = gs_parameter(g, 4, gs_shape_make(GS_S32, 1, one), "g5");
        gk = gs_parameter(g, 5, gs_shape_make(GS_S32, 1, one), "g3");
        gb = gs_parameter(g, 6, gs_shape_make(GS_S32, 1, one), "g2");
        memset(&rd, 0, sizeof rd);
        dd->n_contract = 1;
        dd->lhs_contract[0] = 1;
        dd->rhs_contract[0] = 1;
        rd.n_lhs_ragged = 1;
        rd.n_rhs_group = 1;
        o[0] = gs_ragged_dot(g, l, r, gz, &rd);                                 /* rows: [5,3] x [1,3,4] */
        dd->rhs_contract[0] = 0;
        o[1] = gs_dot(g, l, gs_reshape(g, r, 2, rd2), dd);
        rd.lhs_ragged[0] = 1;
        rd.n_rhs_group = 0;
        o[2] = gs_reshape(g, gs_ragged_dot(g, l, gs_reshape(g, r, 2, rd2), gk, &rd), 2, od);   /* k */
        o[3] = o[1];
        dd->n_batch = 1;
        dd->lhs_batch[0] = dd->rhs_batch[0] = 0;
        dd->lhs_contract[0] = 2;
        dd->rhs_contract[0] = 1;
        rd.lhs_ragged[0] = 0;
        o[4] = gs_ragged_dot(g, l3, r3, gb, &rd);                               /* batch */
        o[5] = gs_dot(g, l3, r3, dd);
        if (!o[0] || !o[2] || !o[4]) {   /* the dot refuses this type too */
            CHECK_MSG(!o[1] || !o[5], "%s: ragged-dot refused a type dot takes: %s", gs_dtype_name((gs_dtype)t), gs_ctx_error_msg(ctx));
            gs_ctx_destroy(ctx);
            continue;
        }
        CHECK_OK(gs_graph_set_outputs(g, 6, o));
        for (k = 0; k < 4; k++) {
            gs_shape s = gs_value_shape(gs_graph_param(g, k));
            in[k] = malloc(gs_shape_bytes(&s) + 1);
            gs_fill_random(s, 3, k, in[k]);
        }
        in[4] = &n5;
        in[5] = &n3;
        in[6] = &n2;
        for (k = 0; k < 6; k++) {
            gs_shape s = gs_value_shape(o[k]);
            out[k] = calloc(1, gs_shape_bytes(&s) + 1);
        }
        if (gs_eval(g, (const void *const *)in, out) == GS_OK) {
            gs_shape s = gs_value_shape(o[1]);
            size_t nb = gs_shape_bytes(&s);
            CHECK_MSG(memcmp(out[0], out[1], nb) == 0, "%s: rows mode differs from the dot", gs_dtype_name((gs_dtype)t));
            CHECK_MSG(memcmp(out[2], out[3], nb) == 0, "%s: contracting mode differs from the dot", gs_dtype_name((gs_dtype)t));
            s = gs_value_shape(o[5]);
            CHECK_MSG(memcmp(out[4], out[5], gs_shape_bytes(&s)) == 0, "%s: batch mode differs from the dot", gs_dtype_name((gs_dtype)t));
            tested++;
        } else {
            CHECK_MSG(strstr(gs_ctx_error_msg(ctx), "ragged-dot") == NULL, "%s: %s", gs_dtype_name((gs_dtype)t), gs_ctx_error_msg(ctx));
        }
        for (k = 0; k < 4; k++) free(in[k]);
        for (k = 0; k < 6; k++) free(out[k]);
        gs_ctx_destroy(ctx);
    }
    CHECK(tested >= 20);
}

/* ---- partitioned vs reference ---- */
/* "{devices=[..]<=[D] ...}": dims of x split per k[] (product dividing D; the rest replicated) */
static void rd_sharding(char *buf, size_t cap, int rank, const int64_t *k, int64_t D) {
    int64_t prod = 1;
    int d, len;
    for (d = 0; d < rank; d++) prod *= k[d];
    if (prod == 1) { snprintf(buf, cap, "{replicated}"); return; }
    len = snprintf(buf, cap, "{devices=[");
    for (d = 0; d < rank; d++) len += snprintf(buf + len, cap - (size_t)len, "%s%lld", d ? "," : "", (long long)k[d]);
    if (prod < D) len += snprintf(buf + len, cap - (size_t)len, ",%lld", (long long)(D / prod));
    snprintf(buf + len, cap - (size_t)len, "]<=[%lld]%s}", (long long)D, prod < D ? " last_tile_dim_replicate" : "");
}

/* up to two dims of a rank-r array split 2-way each (within D) */
static void rd_pick(uint64_t *s, int rank, int64_t D, int64_t *k) {
    int d, n = (int)gst_randint(s, 0, D >= 4 ? 2 : 1);
    for (d = 0; d < rank; d++) k[d] = 1;
    while (n-- > 0 && rank > 0) k[gst_randint(s, 0, rank - 1)] = 2;
}

/* the case partitioned for D devices with the given shardings (NULL: none), run on lockstep devices with
   poisoned padding and compared with the reference interpreter; *n_ag / *n_ar count the SPMD program's
   all-gathers and all-reduces */
static bool rd_partition(const rd_case *c, const char *const *sh, int64_t D, uint64_t seed, int *n_ag, int *n_ar) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g, *spmd = NULL;
    gs_value *r = rd_build(ctx, c, GS_F32, GS_S32, &g), *ps[3];
    gs_partition_desc pd;
    gs_runtime_desc rdsc;
    gs_runtime *rt = NULL;
    gs_check_desc cd;
    gs_check_report rep;
    void *in[3];
    bool ok = true;
    int k, i;
    if (!r) { gs_ctx_destroy(ctx); return false; }
    for (k = 0; k < 3; k++) ps[k] = gs_graph_param(g, k);
    for (k = 0; k < 4; k++)
        if (sh[k]) CHECK_OK(gs_value_set_sharding_text(k < 3 ? ps[k] : r, sh[k]));
    memset(&pd, 0, sizeof pd);
    pd.num_devices = D;
    if (gs_partition(g, &pd, &spmd) != GS_OK) {
        gst_failf(__FILE__, __LINE__, "partition: %s\n%s", gs_ctx_error_msg(ctx), gs_hlo_print(g));
        gs_ctx_destroy(ctx);
        return false;
    }
    for (k = 0; k < 3; k++) {
        gs_shape s = gs_value_shape(ps[k]);
        in[k] = malloc(gs_shape_bytes(&s) + 1);
        gs_fill_random(s, seed + (uint64_t)k, k, in[k]);
    }
    memset(&rdsc, 0, sizeof rdsc);
    rdsc.num_devices = D;
    rdsc.mode = GS_RUNTIME_LOCKSTEP;
    memset(&cd, 0, sizeof cd);
    CHECK_OK(gs_runtime_create(ctx, &rdsc, &rt));
    if (rt) {
        gs_result res = gs_partition_check(spmd, rt, &cd, (const void *const *)in, &rep);
        ok = res == GS_OK && rep.ok && rep.n_compared > 0;
        CHECK_MSG(ok, "%s\n%s\n%s", res == GS_OK ? rep.message : gs_ctx_error_msg(ctx), gs_hlo_print(g),
                  gs_partition_print(spmd, true));
    }
    *n_ag = *n_ar = 0;
    for (i = 0; i < gs_graph_num_values(spmd); i++) {
        gs_op op = gs_value_op(gs_graph_value(spmd, i));
        *n_ag += op == GS_OP_ALL_GATHER;
        *n_ar += op == GS_OP_ALL_REDUCE;
    }
    gs_runtime_destroy(rt);
    for (k = 0; k < 3; k++) free(in[k]);
    gs_ctx_destroy(ctx);
    return ok;
}

/* MoE's expert layer: tokens[T,d] sorted by expert x experts[E,d,f] -> [T,f]. The token dim (the ragged one) and
   the model dim split: each device runs its rows with its tile's offset taken off the first group, and the
   partial sums over d are all-reduced; nothing is gathered */
static void test_ragged_partition_moe(void) {
    rd_case c;
    int64_t l[2] = {13, 8}, w[3] = {4, 8, 6}, gz[1] = {4};
    const char *sh[4] = {"{devices=[2,2]<=[4]}", "{devices=[1,2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}", "{replicated}",
                         "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"};
    int ag, ar;
    memset(&c, 0, sizeof c);
    c.d.dot.n_contract = 1;
    c.d.dot.lhs_contract[0] = 1;
    c.d.dot.rhs_contract[0] = 1;
    c.d.n_lhs_ragged = 1;
    c.d.lhs_ragged[0] = 0;
    c.d.n_rhs_group = 1;
    c.d.rhs_group[0] = 0;
    c.L = rd_shape(2, l);
    c.R = rd_shape(3, w);
    c.Gs = rd_shape(1, gz);
    if (rd_partition(&c, sh, 4, 7, &ag, &ar)) {
        CHECK_EQ_INT(ag, 0);
        CHECK_EQ_INT(ar, 1);
    }
    /* contracting mode (the experts' weight gradient): x[d,T] x dy[T,f] -> [E,d,f], T split: partial sums */
    c.d.dot.lhs_contract[0] = 1;
    c.d.dot.rhs_contract[0] = 0;
    c.d.lhs_ragged[0] = 1;
    c.d.n_rhs_group = 0;
    l[0] = 8; l[1] = 13;
    w[0] = 13; w[1] = 6;
    c.L = rd_shape(2, l);
    c.R = rd_shape(2, w);
    sh[0] = "{devices=[1,4]<=[4]}";
    sh[1] = "{devices=[4,1]<=[4]}";
    sh[3] = "{replicated}";
    if (rd_partition(&c, sh, 4, 9, &ag, &ar)) {
        CHECK_EQ_INT(ag, 0);
        CHECK_EQ_INT(ar, 1);
    }
}

/* random shapes of the three modes, random shardings (uneven splits, dims of 1 split), D of 2, 4 and 8 */
static void test_ragged_partition_random(void) {
    uint64_t s = 0xabc;
    int it;
    for (it = 0; it < 90 && !gst_checks_failed_in_test; it++) {
        rd_case c;
        int64_t gsv[1024], k[GS_MAX_RANK], D = (int64_t)1 << gst_randint(&s, 1, 3);
        char b[4][160];
        const char *sh[4];
        gs_ctx *ctx = gst_ctx();
        gs_graph *g;
        gs_value *r;
        int j, ag, ar;
        rd_random(&s, it % 3, &c, gsv);
        r = rd_build(ctx, &c, GS_F32, GS_S32, &g);
        for (j = 0; j < 4; j++) {
            gs_shape sj = j == 0 ? c.L : j == 1 ? c.R : j == 2 ? c.Gs : gs_value_shape(r);
            rd_pick(&s, sj.rank, D, k);
            rd_sharding(b[j], sizeof b[j], sj.rank, k, D);
            sh[j] = gst_randint(&s, 0, 3) == 0 ? NULL : b[j];
        }
        gs_ctx_destroy(ctx);
        rd_partition(&c, sh, D, (uint64_t)it, &ag, &ar);
    }
}

/* propagation: the operands' splits reach the result (the rhs group dim's does not), and back */
static void test_ragged_propagate(void) {
    gs_ctx *ctx = gst_ctx();
    const char *text =
        "HloModule m\nENTRY e {\n"
        "  a = f32[16,32,64] parameter(0), sharding={devices=[2,2,1]<=[4]}\n"
        "  b = f32[4,16,64,8] parameter(1), sharding={devices=[2,1,1,1,2]<=[4] last_tile_dim_replicate}\n"
        "  c = u32[16,4] parameter(2)\n"
        "  ROOT r = f32[16,32,8] ragged-dot(a, b, c), lhs_batch_dims={0}, rhs_batch_dims={1}, lhs_contracting_dims={2}, "
        "rhs_contracting_dims={2}, lhs_ragged_dims={1}, rhs_group_dims={0}\n}\n";
    const char *text2 =
        "HloModule m\nENTRY e {\n"
        "  a = f32[16,32,64] parameter(0)\n  b = f32[16,64,8] parameter(1)\n  c = s32[16,4] parameter(2)\n"
        "  ROOT r = f32[4,16,32,8] ragged-dot(a, b, c), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, "
        "rhs_contracting_dims={1}, lhs_ragged_dims={2}, sharding={devices=[2,2,1,1]<=[4]}\n}\n";
    gs_graph *g = NULL;
    gs_propagate_desc pd;
    memset(&pd, 0, sizeof pd);
    pd.num_devices = 4;
    CHECK_OK(gs_hlo_parse(ctx, text, strlen(text), &g));
    if (g) {
        CHECK_OK(gs_propagate(g, &pd));
        /* a's batch and ragged splits pass; b's group split says nothing */
        CHECK(strstr(gs_hlo_print(g), "lhs_ragged_dims={1}, rhs_group_dims={0}, sharding={devices=[2,2,1]<=[4]}") != NULL);
        /* group_sizes[16,4] follows the batch split, its group dim whole */
        CHECK(strstr(gs_hlo_print(g), "c = u32[16,4] parameter(2), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}") != NULL);
    }
    g = NULL;
    CHECK_OK(gs_hlo_parse(ctx, text2, strlen(text2), &g));
    if (g) {
        const char *p;
        CHECK_OK(gs_propagate(g, &pd));
        p = gs_hlo_print(g);
        /* the result's group dim split is not passed back; its batch split is, to a, b and group_sizes */
        CHECK_MSG(strstr(p, "a = f32[16,32,64] parameter(0), sharding={devices=[2,1,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}") != NULL, "%s", p);
        CHECK_MSG(strstr(p, "c = s32[16,4] parameter(2), sharding={devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}") != NULL, "%s", p);
    }
    gs_ctx_destroy(ctx);
}

/* cost: a dot's FLOPs, 2 * outputs * contracted extent; the contracting mode's group dim does not multiply it */
static void test_ragged_cost(void) {
    gs_ctx *ctx = gst_ctx();
    const char *text =
        "HloModule m\nENTRY e {\n  a = f32[16,32,64] parameter(0)\n  b = f32[4,16,64,8] parameter(1)\n"
        "  c = u32[16,4] parameter(2)\n"
        "  r = f32[16,32,8] ragged-dot(a, b, c), lhs_batch_dims={0}, rhs_batch_dims={1}, lhs_contracting_dims={2}, "
        "rhs_contracting_dims={2}, lhs_ragged_dims={1}, rhs_group_dims={0}\n"
        "  x = f32[16,64,8] parameter(3)\n"
        "  ROOT k = f32[4,16,32,8] ragged-dot(a, x, c), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, "
        "rhs_contracting_dims={1}, lhs_ragged_dims={2}\n}\n";
    gs_graph *g = NULL;
    gs_topology_desc td;
    gs_topology *t = NULL;
    gs_cost_report *rep = NULL;
    int i, seen = 0;
    memset(&td, 0, sizeof td);
    td.chip = gs_chip_find("v5e");
    td.mesh_rank = 1;
    td.mesh[0] = 1;
    CHECK_OK(gs_hlo_parse(ctx, text, strlen(text), &g));
    CHECK_OK(gs_topology_create(ctx, &td, &t));
    if (g && t) CHECK_OK(gs_cost_program(g, t, &rep));
    for (i = 0; rep && i < gs_cost_report_num_rows(rep); i++) {
        const gs_cost_row *row = gs_cost_report_row(rep, i);
        if (gs_value_op(row->value) != GS_OP_RAGGED_DOT) continue;
        CHECK_NEAR(row->flops, 2.0 * 16 * 32 * 8 * 64, 0);
        seen++;
    }
    CHECK_EQ_INT(seen, 2);
    gs_ctx_destroy(ctx);
}

/* the command line: stats understands every construct, eval runs it, run --check partitions and checks it */
static void test_ragged_cli(void) {
    char dir[256], path[300];
    FILE *f;
    snprintf(dir, sizeof dir, "%s/gshard_ragged_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        CHECK_MSG(0, "cannot create a temporary directory");
        return;
    }
    snprintf(path, sizeof path, "%s/moe.hlo", dir);
    f = fopen(path, "w");
    if (!f) {
        CHECK_MSG(0, "cannot write %s", path);
        return;
    }
    fputs("HloModule moe\nENTRY e {\n  x = bf16[2,9,8] parameter(0), sharding={devices=[2,2,1]<=[4]}\n"
          "  w = bf16[3,2,8,5] parameter(1)\n  g = s32[2,3] parameter(2)\n"
          "  ROOT y = f32[2,9,5] ragged-dot(x, w, g), lhs_batch_dims={0}, rhs_batch_dims={1}, lhs_contracting_dims={2}, "
          "rhs_contracting_dims={2}, lhs_ragged_dims={1}, rhs_group_dims={0}, operand_precision={default,default}\n}\n", f);
    fclose(f);
    CHECK_EQ_INT(gst_cli(dir, "stats %s", path), 0);
    CHECK_MSG(strstr(gst_cli_out, "ragged-dot 1") != NULL && strstr(gst_cli_out, "!") == strstr(gst_cli_out, "! marks"),
              "%s", gst_cli_out);
    CHECK_EQ_INT(gst_cli(dir, "eval %s --seed 3", path), 0);
    CHECK_EQ_INT(gst_cli(dir, "run %s --devices 4 --seed 3 --check", path), 0);
    CHECK_MSG(strstr(gst_cli_out, "check: ok") != NULL, "%s%s", gst_cli_out, gst_cli_err);
    remove(path);
    rmdir(dir);
}

void suite_ragged(void) {
    RUN(test_ragged_hand);
    RUN(test_ragged_naive);
    RUN(test_ragged_types);
    RUN(test_ragged_propagate);
    RUN(test_ragged_cost);
    RUN(test_ragged_partition_moe);
    RUN(test_ragged_partition_random);
    RUN(test_ragged_cli);
}
