/* test_ragged.c - ragged-dot end to end: text in and out, XLA's shape errors, the reference interpreter against
   hand-computed values and a naive loop written here from the definition (all three modes, group_sizes of rank 1
   and of full rank, negative sizes, several element types), propagation, and the partitioned program against the
   reference on random shapes and shardings, uneven splits included, with NaN-poisoned padding. */
#include "test.h"

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

void suite_ragged(void) {
    RUN(test_ragged_hand);
    RUN(test_ragged_naive);
}
