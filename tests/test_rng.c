/* test_rng.c - the shard form of rng: every tile of uneven tilings (rank 1-3, f32/bf16/s32/u32) against the
   full array bit for bit, the full array against the documented formula, padding and out-of-range offsets,
   the text form, propagation and the cost model on it, and the SPMD runtime computing the tiles from
   partition-id the way a partitioned program does. */
#include "test.h"

/* the documented counter-based generator (gs_interp.c), written out again here */
static uint64_t ref_bits(uint64_t seed, uint64_t i) {
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + i + 1u;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* element i of gs_rng_uniform(lo, hi) by the formula, in storage format (f32, s32, u32 only) */
static void ref_elem(gs_dtype t, double lo, double hi, uint64_t seed, uint64_t i, void *out) {
    uint64_t bits = ref_bits(seed, i);
    if (t == GS_F32) {
        float l = (float)lo, h = (float)hi, f = l;
        if (h > l) {
            f = (float)((double)l + ((double)h - (double)l) * ((double)(bits >> 40) / 16777216.0));
            if (f >= h) f = nextafterf(h, -INFINITY);
            if (f < l) f = l;
        }
        memcpy(out, &f, 4);
    } else {
        int64_t l = (int64_t)lo, h = (int64_t)hi, x = l;
        if (h > l) x = l + (int64_t)(bits % (uint64_t)(h - l));
        if (t == GS_S32) {
            int32_t y = (int32_t)x;
            memcpy(out, &y, 4);
        } else {
            uint32_t y = (uint32_t)x;
            memcpy(out, &y, 4);
        }
    }
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

typedef struct rng_case {
    gs_dtype t;
    int rank;
    int64_t full[3];
    int64_t tiles[3];
    double lo, hi;
    uint64_t seed;
} rng_case;

/* unravels a row-major position over dims */
static void unravel(int rank, const int64_t *dims, int64_t pos, int64_t *idx) {
    int d;
    for (d = rank - 1; d >= 0; d--) {
        idx[d] = dims[d] ? pos % dims[d] : 0;
        pos = dims[d] ? pos / dims[d] : 0;
    }
}

/* Builds the full rng and, for every tile of the tiling, its shard form with constant offsets (the padded
   tile shape ceil(S/k) everywhere, so the last tiles hang over the end), evaluates everything in one graph,
   and compares. */
static void check_tiling(const rng_case *c) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "tiles");
    gs_shape full = gs_shape_make(c->t, c->rank, c->full), shard;
    int64_t ntiles = 1, tile, e, tidx[3], lidx[3], gidx[3], shard_n;
    size_t es = gs_dtype_size(c->t);
    gs_value **outs;
    void **bufs;
    gs_value *lo = gs_scalar(g, c->t, c->lo), *hi = gs_scalar(g, c->t, c->hi);
    int d;
    char what[64];
    snprintf(what, sizeof what, "%s[%lld,%lld,%lld]/%d", gs_dtype_name(c->t), (long long)c->full[0],
             (long long)c->full[1], (long long)c->full[2], c->rank);
    shard = full;
    for (d = 0; d < c->rank; d++) {
        ntiles *= c->tiles[d];
        shard.dims[d] = ceil_div(c->full[d], c->tiles[d]);
    }
    shard_n = gs_shape_numel(&shard);
    outs = (gs_value **)calloc((size_t)(ntiles + 1), sizeof *outs);
    bufs = (void **)calloc((size_t)(ntiles + 1), sizeof *bufs);
    outs[0] = gs_rng_uniform(g, lo, hi, full, c->seed);
    for (tile = 0; tile < ntiles; tile++) {
        gs_value *offs[3];
        unravel(c->rank, c->tiles, tile, tidx);
        for (d = 0; d < c->rank; d++) offs[d] = gs_scalar(g, GS_S32, (double)(tidx[d] * shard.dims[d]));
        outs[tile + 1] = gs_rng_uniform_shard(g, lo, hi, shard, full, offs, c->seed);
    }
    CHECK_MSG(gs_graph_set_outputs(g, (int)ntiles + 1, outs) == GS_OK, "%s: %s", what, gs_ctx_error_msg(ctx));
    CHECK_MSG(gs_graph_verify(g) == GS_OK, "%s: verify: %s", what, gs_ctx_error_msg(ctx));
    bufs[0] = malloc(gs_shape_bytes(&full) + 1);
    for (tile = 0; tile < ntiles; tile++) bufs[tile + 1] = malloc(gs_shape_bytes(&shard) + 1);
    if (gs_ctx_error(ctx) == GS_OK) CHECK_MSG(gs_eval(g, NULL, bufs) == GS_OK, "%s: eval: %s", what, gs_ctx_error_msg(ctx));
    if (gs_ctx_error(ctx) == GS_OK) {
        const unsigned char *fb = (const unsigned char *)bufs[0];
        unsigned char lo_bits[4], want[4];
        int64_t fst[3], bad = 0, pad = 0;
        /* lo in storage format (what the padding holds) */
        if (c->t == GS_BF16) {
            uint16_t b = gs_f32_to_bf16((float)c->lo);
            memcpy(lo_bits, &b, 2);
        } else {
            ref_elem(c->t, c->lo, c->lo, 0, 0, lo_bits);
        }
        /* the full array against the formula (bf16 is covered by test_interp's range checks) */
        if (c->t != GS_BF16)
            for (e = 0; e < gs_shape_numel(&full); e++) {
                ref_elem(c->t, c->lo, c->hi, c->seed, (uint64_t)e, want);
                if (memcmp(want, fb + e * 4, 4) != 0) bad++;
            }
        CHECK_MSG(bad == 0, "%s: %lld elements of the full array differ from the formula", what, (long long)bad);
        fst[c->rank ? c->rank - 1 : 0] = 1;
        for (d = c->rank - 2; d >= 0; d--) fst[d] = fst[d + 1] * c->full[d + 1];
        for (tile = 0; tile < ntiles; tile++) {
            const unsigned char *sb = (const unsigned char *)bufs[tile + 1];
            unravel(c->rank, c->tiles, tile, tidx);
            for (e = 0; e < shard_n; e++) {
                bool in = true;
                int64_t flat = 0;
                unravel(c->rank, shard.dims, e, lidx);
                for (d = 0; d < c->rank; d++) {
                    gidx[d] = tidx[d] * shard.dims[d] + lidx[d];
                    if (gidx[d] >= c->full[d]) in = false;
                    flat += gidx[d] * fst[d];
                }
                if (in) {
                    if (memcmp(sb + e * (int64_t)es, fb + flat * (int64_t)es, es) != 0) bad++;
                } else {
                    pad++;
                    if (memcmp(sb + e * (int64_t)es, lo_bits, es) != 0) bad++;
                }
            }
        }
        CHECK_MSG(bad == 0, "%s: %lld shard elements differ", what, (long long)bad);
        /* the tiles cover the full array once, plus the padding */
        CHECK_MSG(pad == ntiles * shard_n - gs_shape_numel(&full), "%s: %lld padding elements", what, (long long)pad);
    }
    for (tile = 0; tile <= ntiles; tile++) free(bufs[tile]);
    free(bufs);
    free(outs);
    gs_ctx_destroy(ctx);
}

static void test_rng_shard_tiles(void) {
    static const rng_case cases[] = {
        {GS_F32, 1, {10, 1, 1}, {4, 1, 1}, -2.0, 3.0, 1234},   /* tiles of 3: 3, 3, 3, 1 */
        {GS_U32, 1, {7, 1, 1}, {3, 1, 1}, 5.0, 1000.0, 7},
        {GS_S32, 1, {5, 1, 1}, {5, 1, 1}, -50.0, 50.0, 0},      /* even */
        {GS_S32, 1, {5, 1, 1}, {2, 1, 1}, -50.0, 50.0, 0},
        {GS_F32, 2, {8, 6, 1}, {3, 4, 1}, 0.0, 1.0, 42},        /* rows 3,3,2; cols 2,2,2,0 (a whole tile of padding) */
        {GS_BF16, 2, {5, 9, 1}, {2, 3, 1}, -1.0, 1.0, 99},
        {GS_S32, 3, {4, 5, 6}, {2, 2, 4}, -7.0, 9.0, 5},
        {GS_BF16, 3, {3, 7, 2}, {3, 2, 1}, 10.0, 20.0, 0xFFFFFFFFFFFFFFFFull},
        {GS_U32, 3, {2, 3, 7}, {1, 3, 2}, 0.0, 4294967295.0, 3},
        {GS_F32, 3, {1, 1, 9}, {1, 1, 2}, 1.0, 1.0, 11},        /* lo == hi: everything lo */
    };
    int i;
    for (i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        check_tiling(&cases[i]);
    }
}

/* Offsets that are not tile starts: negative, straddling the end, entirely outside, at INT32 extremes. Every
   in-range element matches the full array, the rest are lo, and a second evaluation gives the same bits. */
static void test_rng_shard_any_offsets(void) {
    static const int64_t offs_list[][2] = {{-2, -1}, {6, 4}, {-3, 0}, {0, -6}, {8, 0}, {2147483647, 0},
                                          {-2147483647 - 1, -2147483647 - 1}, {1, 2}, {-1, 5}};
    int64_t fd[2] = {8, 6}, sd[2] = {3, 4};
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "offs");
    gs_shape full = gs_shape_make(GS_F32, 2, fd), shard = gs_shape_make(GS_F32, 2, sd);
    gs_value *lo = gs_scalar(g, GS_F32, -4), *hi = gs_scalar(g, GS_F32, 4);
    int n = (int)(sizeof offs_list / sizeof offs_list[0]), k;
    gs_value *outs[16];
    float fullv[48], got[16][12], again[16][12];
    void *bufs[16], *bufs2[16];
    outs[0] = gs_rng_uniform(g, lo, hi, full, 77);
    bufs[0] = fullv;
    bufs2[0] = fullv;
    for (k = 0; k < n; k++) {
        gs_value *o[2];
        o[0] = gs_scalar(g, GS_S32, (double)offs_list[k][0]);
        o[1] = gs_scalar(g, GS_S32, (double)offs_list[k][1]);
        outs[k + 1] = gs_rng_uniform_shard(g, lo, hi, shard, full, o, 77);
        bufs[k + 1] = got[k];
        bufs2[k + 1] = again[k];
    }
    CHECK_OK(gs_graph_set_outputs(g, n + 1, outs));
    CHECK_OK(gs_eval(g, NULL, bufs));
    CHECK_OK(gs_eval(g, NULL, bufs2));
    if (gs_ctx_error(ctx) == GS_OK) {
        for (k = 0; k < n; k++) {
            int e;
            for (e = 0; e < 12; e++) {
                int64_t r = offs_list[k][0] + e / 4, c = offs_list[k][1] + e % 4;
                float want = (r >= 0 && r < 8 && c >= 0 && c < 6) ? fullv[r * 6 + c] : -4.0f;
                CHECK_MSG(memcmp(&got[k][e], &want, 4) == 0, "offsets (%lld,%lld) element %d: %g, expected %g",
                          (long long)offs_list[k][0], (long long)offs_list[k][1], e, got[k][e], want);
            }
            CHECK(memcmp(got[k], again[k], sizeof got[k]) == 0);
        }
    }
    gs_ctx_destroy(ctx);
}

/* The scalar shard form (rank 0, no offsets) is the plain scalar rng. */
static void test_rng_shard_scalar(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "s");
    gs_value *lo = gs_scalar(g, GS_S32, 0), *hi = gs_scalar(g, GS_S32, 1000000), *outs[2];
    int32_t a = 0, b = 1;
    void *bufs[2];
    outs[0] = gs_rng_uniform(g, lo, hi, gs_shape_scalar(GS_S32), 9);
    outs[1] = gs_rng_uniform_shard(g, lo, hi, gs_shape_scalar(GS_S32), gs_shape_scalar(GS_S32), NULL, 9);
    bufs[0] = &a;
    bufs[1] = &b;
    CHECK_OK(gs_graph_set_outputs(g, 2, outs));
    CHECK_OK(gs_eval(g, NULL, bufs));
    CHECK_EQ_INT(a, b);
    CHECK_EQ_INT(a, (int32_t)(ref_bits(9, 0) % 1000000u));
    CHECK_EQ_INT(gs_value_num_operands(outs[1]), 2);
    CHECK_EQ_INT(gs_op_arity(GS_OP_RNG), -1);   /* 2 operands, or 2 + rank in the shard form */
    gs_ctx_destroy(ctx);
}

/* ---- text ---- */
static const char *shard_text =
    "HloModule shard_rng, num_partitions=6\n"
    "\n"
    "ENTRY main {\n"
    "  pid = u32[] partition-id()\n"
    "  rows = s32[6] constant({0, 0, 3, 3, 6, 6})\n"
    "  cols = s32[6] constant({0, 3, 0, 3, 0, 3})\n"
    "  r1 = s32[1] dynamic-slice(rows, pid), dynamic_slice_sizes={1}\n"
    "  o0 = s32[] reshape(r1)\n"
    "  c1 = s32[1] dynamic-slice(cols, pid), dynamic_slice_sizes={1}\n"
    "  o1 = s32[] reshape(c1)\n"
    "  lo = f32[] constant(-1)\n"
    "  hi = f32[] constant(1)\n"
    "  ROOT u = f32[3,3] rng(lo, hi, o0, o1), distribution=rng_uniform, seed=18446744073709551615, full_shape=f32[8,5]\n"
    "}\n";

static void test_rng_shard_text_roundtrip(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = NULL, *g2 = NULL;
    const char *p1, *p2;
    gs_value *u;
    gs_hlo_print_extensions(ctx, true);   /* the shard form's own spelling (standard HLO: test_text_structure.c) */
    CHECK_OK(gs_hlo_parse(ctx, shard_text, strlen(shard_text), &g));
    if (!g) {
        fprintf(stderr, "  %s\n", gs_ctx_error_msg(ctx));
        gs_ctx_destroy(ctx);
        return;
    }
    u = gs_graph_find(g, "u");
    CHECK(u && gs_value_op(u) == GS_OP_RNG && gs_value_num_operands(u) == 4);
    CHECK_OK(gs_graph_verify(g));
    p1 = gs_hlo_print(g);
    CHECK(p1 && strstr(p1, "ROOT u = f32[3,3] rng(lo, hi, o0, o1), distribution=rng_uniform, "
                           "seed=18446744073709551615, full_shape=f32[8,5]\n") != NULL);
    CHECK(p1 && strcmp(p1, shard_text) == 0);
    if (p1) CHECK_OK(gs_hlo_parse(ctx, p1, strlen(p1), &g2));
    p2 = g2 ? gs_hlo_print(g2) : NULL;
    CHECK(p1 && p2 && strcmp(p1, p2) == 0);
    /* the plain form prints without full_shape */
    {
        gs_graph *h = gs_graph_new(ctx, "plain");
        const char *t;
        gs_graph_set_root(h, gs_rng_uniform(h, gs_scalar(h, GS_U32, 0), gs_scalar(h, GS_U32, 9), gs_shape_scalar(GS_U32), 1));
        t = gs_hlo_print(h);
        CHECK(t && strstr(t, "distribution=rng_uniform, seed=1\n") != NULL && !strstr(t, "full_shape"));
    }
    gs_ctx_destroy(ctx);
}

/* ---- propagation and cost on a program with the shard form ---- */
static void test_rng_shard_propagate_and_cost(void) {
    static const char *text =
        "HloModule p, num_partitions=4\n"
        "ENTRY main {\n"
        "  x = f32[4,6] parameter(0), sharding={devices=[2,2]<=[4]}\n"
        "  pid = u32[] partition-id()\n"
        "  tab = s32[4] constant({0, 0, 4, 4})\n"
        "  t1 = s32[1] dynamic-slice(tab, pid), dynamic_slice_sizes={1}\n"
        "  o0 = s32[] reshape(t1)\n"
        "  o1 = s32[] constant(0)\n"
        "  lo = f32[] constant(0)\n"
        "  hi = f32[] constant(1)\n"
        "  u = f32[4,6] rng(lo, hi, o0, o1), distribution=rng_uniform, seed=3, full_shape=f32[8,6]\n"
        "  ROOT s = f32[4,6] add(x, u)\n"
        "}\n";
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = NULL;
    int64_t one[1] = {4};
    gs_topology_desc td;
    gs_topology *t = NULL;
    gs_cost_report *rep = NULL;
    int i;
    CHECK_OK(gs_hlo_parse(ctx, text, strlen(text), &g));
    if (!g) {
        gs_ctx_destroy(ctx);
        return;
    }
    /* propagation: rng has no rule; its operands (scalars, including the offsets) must not trip anything */
    CHECK_OK(gs_propagate(g, NULL));
    CHECK(gs_value_sharding_text(gs_graph_find(g, "o0")) != NULL);
    CHECK_OK(gs_graph_verify(g));
    gs_ctx_destroy(ctx);

    /* cost: the same program without shardings is an SPMD program; the rng row is 1 FLOP per shard element,
       reads lo, hi and the two offsets, writes the shard */
    ctx = gst_ctx();
    {
        char *plain = (char *)malloc(strlen(text) + 1);
        const char *src = text;
        char *dst = plain;
        while (*src) { /* drop ", sharding={...}" */
            if (strncmp(src, ", sharding={", 12) == 0) {
                src = strchr(src, '}') + 1;
                continue;
            }
            *dst++ = *src++;
        }
        *dst = 0;
        g = NULL;
        CHECK_OK(gs_hlo_parse(ctx, plain, strlen(plain), &g));
        free(plain);
    }
    memset(&td, 0, sizeof td);
    td.chip = gs_chip_find("v5e");
    td.mesh_rank = 1;
    td.mesh[0] = one[0];
    CHECK_OK(gs_topology_create(ctx, &td, &t));
    if (g && t) CHECK_OK(gs_cost_program(g, t, &rep));
    if (rep) {
        const gs_cost_row *r = NULL;
        for (i = 0; i < gs_cost_report_num_rows(rep); i++)
            if (strcmp(gs_value_name(gs_cost_report_row(rep, i)->value), "u") == 0) r = gs_cost_report_row(rep, i);
        CHECK(r != NULL);
        if (r) {
            CHECK_NEAR(r->flops, 4 * 6, 0.0);
            CHECK_NEAR(r->hbm_read, 4 * 4, 0.0);
            CHECK_NEAR(r->hbm_written, 4 * 6 * 4, 0.0);
        }
    }
    gs_ctx_destroy(ctx);
}

/* ---- the SPMD runtime: offsets from partition-id, shards gathered, compared with the full rng ---- */
static void test_rng_shard_runtime(void) {
    static const char *full_text =
        "HloModule full\nENTRY main {\n  lo = f32[] constant(-1)\n  hi = f32[] constant(1)\n"
        "  ROOT u = f32[8,5] rng(lo, hi), distribution=rng_uniform, seed=18446744073709551615\n}\n";
    int mode;
    for (mode = 0; mode < 2; mode++) {
        gs_ctx *ctx = gst_ctx();
        gs_graph *g = NULL, *gf = NULL;
        gs_runtime *rt = NULL;
        gs_runtime_desc desc;
        const gs_sharding *sh;
        int64_t fd[2] = {8, 5};
        gs_shape full = gs_shape_make(GS_F32, 2, fd);
        float want[40], got[40], dev[6][9];
        void *wo[1], *go[1], *dv[6];
        int d, e;
        CHECK_OK(gs_hlo_parse(ctx, shard_text, strlen(shard_text), &g));
        CHECK_OK(gs_hlo_parse(ctx, full_text, strlen(full_text), &gf));
        memset(&desc, 0, sizeof desc);
        desc.num_devices = 6;
        desc.mode = mode ? GS_RUNTIME_LOCKSTEP : GS_RUNTIME_THREADED;
        CHECK_OK(gs_runtime_create(ctx, &desc, &rt));
        sh = gs_sharding_parse(ctx, "{devices=[3,2]<=[6]}");
        if (!g || !gf || !rt || !sh) {
            gs_runtime_destroy(rt);
            gs_ctx_destroy(ctx);
            return;
        }
        wo[0] = want;
        go[0] = got;
        memset(got, 0xFF, sizeof got);
        CHECK_OK(gs_eval(gf, NULL, wo));
        CHECK_OK(gs_runtime_run_global(rt, g, NULL, NULL, NULL, &full, &sh, go));
        CHECK_MSG(memcmp(got, want, sizeof want) == 0, "mode %d: gathered shards differ from the full rng", mode);
        /* per device: the padding (row 2 of the last row of tiles, column 2 of the right tiles) is lo */
        for (d = 0; d < 6; d++) dv[d] = dev[d];
        CHECK_OK(gs_runtime_run(rt, g, NULL, dv));
        for (d = 0; d < 6; d++)
            for (e = 0; e < 9; e++) {
                int64_t r = (d / 2) * 3 + e / 3, c = (d % 2) * 3 + e % 3;
                float w = (r < 8 && c < 5) ? want[r * 5 + c] : -1.0f;
                CHECK_MSG(memcmp(&dev[d][e], &w, 4) == 0, "mode %d device %d element %d: %g, expected %g", mode, d, e,
                          dev[d][e], w);
            }
        gs_runtime_destroy(rt);
        gs_ctx_destroy(ctx);
    }
}

void suite_rng(void) {
    RUN(test_rng_shard_tiles);
    RUN(test_rng_shard_any_offsets);
    RUN(test_rng_shard_scalar);
    RUN(test_rng_shard_text_roundtrip);
    RUN(test_rng_shard_propagate_and_cost);
    RUN(test_rng_shard_runtime);
}
