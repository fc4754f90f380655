/* test_sharding.c - shardings: text round trip (every form in XLA's syntax), iota device order, normalisation,
   equality, tile math for uneven splits, meshes and PartitionSpecs, annotations, visualisation, bad input. */
#include "test.h"

static const gs_sharding *P(gs_ctx *ctx, const char *text) {
    const gs_sharding *s = gs_sharding_parse(ctx, text);
    if (!s) fprintf(stderr, "  parse of %s failed: %s\n", text, gs_ctx_error_msg(ctx));
    return s;
}

static bool devices_are(const gs_sharding *s, int n, const int64_t *want) {
    int64_t got[64];
    int i;
    if (!s || gs_sharding_num_devices(s) != n || n > 64) return false;
    gs_sharding_devices(s, got);
    for (i = 0; i < n; i++)
        if (got[i] != want[i]) return false;
    return true;
}

/* Every example string of XLA's syntax prints back byte for byte. */
static void test_text_round_trip(void) {
    static const char *const same[] = {
        "{replicated}",
        "{maximal device=0}",
        "{maximal device=3}",
        "{manual}",
        "{unknown}",
        "{devices=[2,1]0,1}",
        "{devices=[2,1]1,0}",
        "{devices=[1,2,2,1]0,1,2,3}",
        "{devices=[2,2]0,2,1,3}",
        "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}",
        "{devices=[1,2,2]0,2,1,3 last_tile_dim_replicate}",
        "{devices=[2,4]0,1,4,5,2,3,6,7 last_tile_dim_replicate}",
        "{devices=[8]<=[8]}",
        "{devices=[4,2]<=[8]}",
        "{devices=[2,4]<=[4,2]T(1,0)}",
        "{devices=[3,4]<=[2,2,3]T(2,1,0)}",
        "{devices=[4,4,1]<=[4,2,2]T(1,0,2)}",
        "{devices=[2,1,4]<=[8] last_tile_dims={manual}}",
        "{devices=[2,1,1,4]<=[8] last_tile_dims={manual}}",
        "{devices=[1,1,2,2]<=[2,2]T(1,0) last_tile_dims={manual, replicated}}",
        "{devices=[2,1,2,2]0,1,2,3,4,5,6,7 last_tile_dims={manual, replicated}}",
        "{{maximal device=1}, {replicated}}",
        "{unknown shard_as 0}",
        "{devices=[2,1]0,1 shard_like 3}",
        "{}",
        "{{replicated}, {replicated}, {replicated}, {replicated}, {replicated}, /*index=5*/{manual}}",
    };
    gs_ctx *ctx = gst_ctx();
    size_t i;
    for (i = 0; i < sizeof same / sizeof same[0]; i++) {
        const gs_sharding *s = P(ctx, same[i]);
        const char *t = s ? gs_sharding_to_text(ctx, s) : NULL;
        CHECK_MSG(t && strcmp(t, same[i]) == 0, "%s printed as %s", same[i], t ? t : "(null)");
        CHECK(s && gs_sharding_equal(s, P(ctx, t)));
    }
    gs_ctx_destroy(ctx);
}

/* Forms that normalise (XLA's rules) print in their canonical form and stay equal to the original. */
static void test_text_normalisation(void) {
    static const char *const pairs[][2] = {
        /* subgroup types are ordered manual before replicated (the tile array is transposed) */
        {"{devices=[1,1,2,2]<=[4] last_tile_dims={replicated, manual}}",
         "{devices=[1,1,2,2]<=[2,2]T(1,0) last_tile_dims={manual, replicated}}"},
        /* ids inside a replication group are sorted */
        {"{devices=[2,2]1,0,3,2 last_tile_dim_replicate}", "{devices=[2,2]0,1,2,3 last_tile_dim_replicate}"},
        /* a lone replicated subgroup is last_tile_dim_replicate; size-1 subgroup dims vanish */
        {"{devices=[2,1,2]<=[4] last_tile_dims={replicated}}", "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"},
        {"{devices=[2,2,1]<=[4] last_tile_dims={manual}}", "{devices=[2,2]<=[4]}"},
        /* nothing split: replicated / manual */
        {"{devices=[1,1,4]<=[4] last_tile_dim_replicate}", "{replicated}"},
        {"{devices=[1,4]0,1,2,3 last_tile_dims={manual}}", "{manual}"},
        /* canonical iota: merged and size-1 reshape dims */
        {"{devices=[2,4]<=[2,2,2]}", "{devices=[2,4]<=[8]}"},
        {"{devices=[2,4]<=[2,1,4]T(0,1,2)}", "{devices=[2,4]<=[8]}"},
        {"{devices=[2,4]<=[2,2,2]T(2,0,1)}", "{devices=[2,4]<=[4,2]T(1,0)}"},
        /* whitespace, metadata and a T over one dim */
        {"{ devices=[2]<=[2]T(0) metadata={op_name=\"a}b\"} }", "{devices=[2]<=[2]}"},
    };
    gs_ctx *ctx = gst_ctx();
    size_t i;
    for (i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        const gs_sharding *a = P(ctx, pairs[i][0]), *b = P(ctx, pairs[i][1]);
        const char *t = a ? gs_sharding_to_text(ctx, a) : NULL;
        CHECK_MSG(t && strcmp(t, pairs[i][1]) == 0, "%s printed as %s", pairs[i][0], t ? t : "(null)");
        CHECK_MSG(a && b && gs_sharding_equal(a, b), "%s != %s", pairs[i][0], pairs[i][1]);
    }
    gs_ctx_destroy(ctx);
}

/* The iota form means numpy arange(N).reshape(r).transpose(p).reshape(dims) (values from XLA's tests). */
static void test_iota_devices(void) {
    gs_ctx *ctx = gst_ctx();
    static const int64_t a[] = {0, 2, 4, 6, 1, 3, 5, 7};
    static const int64_t b[] = {0, 6, 3, 9, 1, 7, 4, 10, 2, 8, 5, 11};
    static const int64_t c[] = {0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15};
    const gs_sharding *s;
    int64_t idx[4], d;
    CHECK(devices_are(P(ctx, "{devices=[2,4]<=[4,2]T(1,0)}"), 8, a));
    CHECK(devices_are(P(ctx, "{devices=[3,4]<=[2,2,3]T(2,1,0)}"), 12, b));
    CHECK(devices_are(P(ctx, "{devices=[4,4,1]<=[4,2,2]T(1,0,2)}"), 16, c));
    /* iota equals the same explicit list */
    CHECK(gs_sharding_equal(P(ctx, "{devices=[2,4]<=[4,2]T(1,0)}"), P(ctx, "{devices=[2,4]0,2,4,6,1,3,5,7}")));
    CHECK(!gs_sharding_equal(P(ctx, "{devices=[2,4]<=[4,2]T(1,0)}"), P(ctx, "{devices=[2,4]<=[8]}")));
    CHECK(!gs_sharding_equal(P(ctx, "{devices=[2,1]0,1}"), P(ctx, "{devices=[2,1]1,0}")));
    CHECK(!gs_sharding_equal(P(ctx, "{devices=[2,1]0,1}"), P(ctx, "{devices=[1,2]0,1}")));
    /* device <-> position, both forms, for every device */
    s = P(ctx, "{devices=[3,4]<=[2,2,3]T(2,1,0)}");
    for (d = 0; d < 12; d++) {
        CHECK(gs_sharding_device_index(s, d, idx));
        CHECK_EQ_INT(gs_sharding_device_at(s, idx), d);
        CHECK_EQ_INT(b[idx[0] * 4 + idx[1]], d);
    }
    CHECK(!gs_sharding_device_index(s, 12, idx));
    CHECK(!gs_sharding_device_index(s, -1, idx));
    s = P(ctx, "{devices=[2,2]3,1,0,2}");
    CHECK(gs_sharding_device_index(s, 0, idx) && idx[0] == 1 && idx[1] == 0);
    CHECK(!gs_sharding_device_index(s, 4, idx));
    /* a 2048-device iota sharding is not materialised; queries are O(rank) */
    s = P(ctx, "{devices=[32,64]<=[64,32]T(1,0)}");
    CHECK(gs_sharding_device_index(s, 2047, idx) && idx[0] == 31 && idx[1] == 63);
    idx[0] = 1;
    idx[1] = 0;
    CHECK_EQ_INT(gs_sharding_device_at(s, idx), 1);
    gs_ctx_destroy(ctx);
}

static void check_region(const gs_sharding *s, gs_shape full, int64_t dev, int64_t o0, int64_t l0, int64_t o1, int64_t l1) {
    int64_t off[GS_MAX_RANK], lim[GS_MAX_RANK];
    gs_sharding_device_region(s, full, dev, off, lim);
    CHECK_MSG(off[0] == o0 && lim[0] == l0, "device %lld dim 0: [%lld,%lld) expected [%lld,%lld)", (long long)dev,
              (long long)off[0], (long long)lim[0], (long long)o0, (long long)l0);
    if (full.rank > 1)
        CHECK_MSG(off[1] == o1 && lim[1] == l1, "device %lld dim 1: [%lld,%lld) expected [%lld,%lld)", (long long)dev,
                  (long long)off[1], (long long)lim[1], (long long)o1, (long long)l1);
}

/* ceil(S/k) shards, padding on the right: 15 over 2, 7 over 4, 19x19 over a 4x2 tile assignment. */
static void test_uneven_extents(void) {
    gs_ctx *ctx = gst_ctx();
    int64_t d15[1] = {15}, d7[1] = {7}, d19[2] = {19, 19};
    gs_shape s15 = gs_shape_make(GS_F32, 1, d15), s7 = gs_shape_make(GS_F32, 1, d7), s19 = gs_shape_make(GS_F32, 2, d19);
    gs_shape sh;
    const gs_sharding *a = P(ctx, "{devices=[2]0,1}"), *b = P(ctx, "{devices=[4]<=[4]}");
    const gs_sharding *c = P(ctx, "{devices=[4,2]<=[8]}"), *r = P(ctx, "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}");
    const gs_sharding *m = P(ctx, "{maximal device=1}");
    int64_t off[GS_MAX_RANK], lim[GS_MAX_RANK];
    CHECK_OK(gs_sharding_shard_shape(ctx, a, s15, &sh));
    CHECK_EQ_INT(sh.dims[0], 8);
    check_region(a, s15, 0, 0, 8, 0, 0);
    check_region(a, s15, 1, 8, 15, 0, 0);
    CHECK_OK(gs_sharding_shard_shape(ctx, b, s7, &sh));
    CHECK_EQ_INT(sh.dims[0], 2);
    check_region(b, s7, 0, 0, 2, 0, 0);
    check_region(b, s7, 1, 2, 4, 0, 0);
    check_region(b, s7, 2, 4, 6, 0, 0);
    check_region(b, s7, 3, 6, 7, 0, 0);
    CHECK_OK(gs_sharding_shard_shape(ctx, c, s19, &sh));
    CHECK(sh.dims[0] == 5 && sh.dims[1] == 10);
    check_region(c, s19, 0, 0, 5, 0, 10);
    check_region(c, s19, 1, 0, 5, 10, 19);
    check_region(c, s19, 5, 10, 15, 10, 19);
    check_region(c, s19, 6, 15, 19, 0, 10);
    check_region(c, s19, 7, 15, 19, 10, 19);
    /* 3 over 4: the last shard is all padding */
    {
        int64_t d3[1] = {3};
        gs_shape s3 = gs_shape_make(GS_F32, 1, d3);
        check_region(b, s3, 2, 2, 3, 0, 0);
        check_region(b, s3, 3, 3, 3, 0, 0);
    }
    /* partial replication: devices 0,1 hold rows [0,10), 2,3 rows [10,19) */
    check_region(r, s19, 1, 0, 10, 0, 19);
    check_region(r, s19, 2, 10, 19, 0, 19);
    CHECK(gs_sharding_replication(r) == 2 && gs_sharding_num_tiles(r) == 2);
    CHECK(gs_sharding_device_region(m, s19, 1, off, lim) && lim[0] == 19);
    CHECK(!gs_sharding_device_region(m, s19, 0, off, lim) && lim[0] == 0);
    CHECK(!gs_sharding_device_region(a, s15, 5, off, lim));
    /* rank mismatch is an error */
    CHECK(gs_sharding_shard_shape(ctx, c, s15, &sh) == GS_ERR_SHARDING);
    CHECK(strstr(gs_ctx_error_msg(ctx), "rank 1") != NULL);
    gs_ctx_destroy(ctx);
}

/* A mesh {x:2, y:4} with PartitionSpecs and GSPMD's mesh_split dims mappings. */
static void test_mesh(void) {
    gs_ctx *ctx = gst_ctx();
    const char *names[2] = {"x", "y"};
    int64_t sizes[2] = {2, 4};
    const gs_mesh *m = gs_mesh_new(ctx, 2, names, sizes, NULL);
    uint32_t open = 0;
    int map[3];
    const gs_sharding *s;
    CHECK(m && gs_mesh_num_devices(m) == 8 && gs_mesh_axis_size(m, 1) == 4 && strcmp(gs_mesh_axis_name(m, 0), "x") == 0);
    /* dim 0 over x, dim 1 over y: the plain row-major order */
    s = gs_mesh_sharding(ctx, m, 2, "x, y", NULL);
    CHECK(s && strcmp(gs_sharding_to_text(ctx, s), "{devices=[2,4]<=[8]}") == 0);
    /* dim 0 over y, dim 1 over x: transposed device order */
    s = gs_mesh_sharding(ctx, m, 2, "y,x", NULL);
    CHECK(s && strcmp(gs_sharding_to_text(ctx, s), "{devices=[4,2]<=[2,4]T(1,0)}") == 0);
    /* dim 1 over y only: x becomes partial replication */
    s = gs_mesh_sharding(ctx, m, 2, "None, y", NULL);
    CHECK(s && strcmp(gs_sharding_to_text(ctx, s), "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}") == 0);
    /* two axes on one dim, major to minor */
    s = gs_mesh_sharding(ctx, m, 2, "(y, x), _", NULL);
    CHECK(s && strcmp(gs_sharding_to_text(ctx, s), "{devices=[8,1]<=[2,4]T(1,0)}") == 0);
    s = gs_mesh_sharding(ctx, m, 3, "(x,y), _, ?", &open);
    CHECK(s && strcmp(gs_sharding_to_text(ctx, s), "{devices=[8,1,1]<=[8]}") == 0 && open == 4u);
    s = gs_mesh_sharding(ctx, m, 1, "_", NULL);
    CHECK(s && gs_sharding_get_kind(s) == GS_SHARDING_REPLICATED);
    map[0] = 1;
    map[1] = -1;
    map[2] = 0;
    s = gs_mesh_sharding_dims(ctx, m, 3, map);
    CHECK(s && strcmp(gs_sharding_to_text(ctx, s), "{devices=[4,1,2]<=[2,4]T(1,0)}") == 0);
    /* an explicit device order */
    {
        int64_t devs[8] = {7, 6, 5, 4, 3, 2, 1, 0};
        const gs_mesh *m2 = gs_mesh_new(ctx, 2, names, sizes, devs);
        s = gs_mesh_sharding(ctx, m2, 2, "x, _", NULL);
        CHECK(s && strcmp(gs_sharding_to_text(ctx, s), "{devices=[2,1,4]4,5,6,7,0,1,2,3 last_tile_dim_replicate}") == 0);
    }
    CHECK_OK(gs_ctx_error(ctx));
    gs_ctx_destroy(ctx);
}

/* The paper's annotation API and the value-level accessors. */
static void test_annotation_api(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "g");
    int64_t d[3] = {4, 6, 8}, tiles[3] = {2, 1, 2}, devs[4] = {3, 2, 1, 0};
    gs_value *x = gs_parameter(g, -1, gs_shape_make(GS_F32, 3, d), "x"), *a, *b, *c, *e;
    const char *names[2] = {"data", "model"};
    int64_t sizes[2] = {2, 2};
    const gs_mesh *m = gs_mesh_new(ctx, 2, names, sizes, NULL);
    a = gs_split(g, x, 1, 3);
    b = gs_shard(g, x, tiles, devs);
    c = gs_shard_partial(g, x, tiles, 2, NULL);
    e = gs_mesh_split(g, x, m, "data, ?, model");
    CHECK(a && b && c && e);
    CHECK(strcmp(gs_value_sharding_text(a), "{devices=[1,3,1]<=[3]}") == 0);
    CHECK(strcmp(gs_value_sharding_text(b), "{devices=[2,1,2]3,2,1,0}") == 0);
    CHECK(strcmp(gs_value_sharding_text(c), "{devices=[2,1,2,2]<=[8] last_tile_dim_replicate}") == 0);
    CHECK(strcmp(gs_value_sharding_text(e), "{devices=[2,1,2]<=[4]}") == 0 && gs_value_open_dims(e) == 2u);
    CHECK(gs_sharding_get_kind(gs_value_sharding(gs_replicate(g, x))) == GS_SHARDING_REPLICATED);
    /* shapes never change */
    {
        gs_shape sa = gs_value_shape(a), se = gs_value_shape(e), sx = gs_value_shape(x);
        CHECK(gs_shape_equal(&sa, &sx) && gs_shape_equal(&se, &sx));
    }
    /* the annotation prints as XLA's Sharding custom-call, open dims as unspecified_dims, and parses back */
    gs_graph_set_root(g, e);
    {
        const char *text = gs_hlo_print(g);
        gs_ctx *c2 = gst_ctx();
        gs_graph *g2 = NULL;
        CHECK(strstr(text, "custom_call_target=\"Sharding\", sharding={devices=[2,1,2]<=[4]}, "
                           "backend_config=\"unspecified_dims=[1]\"") != NULL);
        CHECK_OK(gs_hlo_parse(c2, text, strlen(text), &g2));
        CHECK(g2 && gs_value_open_dims(gs_graph_root(g2)) == 2u);
        CHECK(g2 && strcmp(gs_hlo_print(g2), text) == 0);
        gs_ctx_destroy(c2);
    }
    gs_ctx_destroy(ctx);
}

static void test_visualize(void) {
    gs_ctx *ctx = gst_ctx();
    int64_t d2[2] = {19, 19}, d1[1] = {7}, d3[3] = {4, 5, 6};
    const char *v;
    v = gs_sharding_visualize(ctx, P(ctx, "{devices=[4,2]<=[8]}"), gs_shape_make(GS_F32, 2, d2));
    CHECK(v && strstr(v, "dim 0: 19 split 4 ways, shards of 5: [0,5) [5,10) [10,15) [15,19)(4 valid)") != NULL);
    CHECK(v && strstr(v, "dim 1: 19 split 2 ways, shards of 10: [0,10) [10,19)(9 valid)") != NULL);
    CHECK(v && strstr(v, "| d 6") != NULL && strstr(v, "15:19 |") != NULL && strstr(v, "per-device shard: f32[5,10]") != NULL);
    v = gs_sharding_visualize(ctx, P(ctx, "{devices=[4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"), gs_shape_make(GS_F32, 1, d1));
    CHECK(v && strstr(v, "d 0,4") != NULL && strstr(v, "d 3,7") != NULL && strstr(v, "partial replication") != NULL);
    CHECK(v && strstr(v, "[6,7)(1 valid)") != NULL);
    v = gs_sharding_visualize(ctx, P(ctx, "{devices=[2,1,3]<=[6]}"), gs_shape_make(GS_F32, 3, d3));
    CHECK(v && strstr(v, "[2:4, 0:5, 4:6]  devices 5") != NULL);
    v = gs_sharding_visualize(ctx, P(ctx, "{maximal device=2}"), gs_shape_make(GS_F32, 1, d1));
    CHECK(v && strstr(v, "device 2 holds the whole tensor") != NULL);
    CHECK(gs_sharding_visualize(ctx, P(ctx, "{devices=[2]0,1}"), gs_shape_make(GS_F32, 2, d2)) == NULL);
    gs_ctx_destroy(ctx);
}

/* Bad shardings, meshes and annotations: each a clear error, nothing lost. */
static void test_bad_input(void) {
    static const struct { const char *text, *msg; } bad[] = {
        {"", "expected '{'"},
        {"{", "expected replicated"},
        {"{replicated", "expected '}'"},
        {"{replicated} x", "unexpected text"},
        {"{devices=[2,2]0,1,2}", "4 ids expected, 3 given"},
        {"{devices=[2]0,1,2}", "2 ids expected, 3 given"},
        {"{devices=[2]0,0}", "device 0 appears twice"},
        {"{devices=[2]0,-1}", "negative"},
        {"{devices=[0]}", "tile dims must be >= 1"},
        {"{devices=[1]0}", "more than one device"},
        {"{devices=[4]<=[3]}", "reshape dims hold 3 devices"},
        {"{devices=[4]<=[2,2]T(0,0)}", "not a permutation"},
        {"{devices=[4]<=[2,2]T(1)}", "one entry per reshape dim"},
        {"{devices=[2,2]<=[4] last_tile_dims={bogus}}", "expected 'manual', 'unreduced' or 'replicated'"},
        {"{maximal device=-1}", "negative"},
        {"{maximal}", "device="},
        {"{tiled}", "expected replicated"},
        {"{{replicated}, {{manual}}}", "tuple shardings are flat"},
        {"{devices=[2]0,1 shard_as -1}", "negative"},
    };
    gs_ctx *ctx = gst_ctx();
    size_t i;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gs_ctx_clear_error(ctx);
        CHECK_MSG(gs_sharding_parse(ctx, bad[i].text) == NULL, "accepted %s", bad[i].text);
        CHECK_MSG(gs_ctx_error(ctx) == GS_ERR_SHARDING && strstr(gs_ctx_error_msg(ctx), bad[i].msg),
                  "%s: message '%s' lacks '%s'", bad[i].text, gs_ctx_error_msg(ctx), bad[i].msg);
    }
    {
        const char *names[2] = {"x", "x"};
        const char *ok[2] = {"x", "y"};
        int64_t sizes[2] = {2, 2}, dup[4] = {0, 1, 1, 2};
        int64_t d[2] = {4, 4};
        const gs_mesh *m;
        gs_graph *g;
        gs_value *x;
        gs_ctx_clear_error(ctx);
        CHECK(gs_mesh_new(ctx, 2, names, sizes, NULL) == NULL && strstr(gs_ctx_error_msg(ctx), "used twice"));
        gs_ctx_clear_error(ctx);
        CHECK(gs_mesh_new(ctx, 2, ok, sizes, dup) == NULL && strstr(gs_ctx_error_msg(ctx), "appears twice"));
        gs_ctx_clear_error(ctx);
        m = gs_mesh_new(ctx, 2, ok, sizes, NULL);
        CHECK(m != NULL);
        CHECK(gs_mesh_sharding(ctx, m, 2, "x, x", NULL) == NULL && strstr(gs_ctx_error_msg(ctx), "\"x\" is used twice"));
        gs_ctx_clear_error(ctx);
        CHECK(gs_mesh_sharding(ctx, m, 2, "x, z", NULL) == NULL && strstr(gs_ctx_error_msg(ctx), "no axis \"z\""));
        gs_ctx_clear_error(ctx);
        CHECK(gs_mesh_sharding(ctx, m, 2, "x", NULL) == NULL && strstr(gs_ctx_error_msg(ctx), "rank 2"));
        gs_ctx_clear_error(ctx);
        CHECK(gs_mesh_sharding(ctx, m, 1, "x, y", NULL) == NULL && strstr(gs_ctx_error_msg(ctx), "more entries"));
        gs_ctx_clear_error(ctx);
        CHECK(gs_mesh_sharding(ctx, m, 2, "(x, y", NULL) == NULL && strstr(gs_ctx_error_msg(ctx), "expected ',' or ')'"));
        gs_ctx_clear_error(ctx);
        g = gs_graph_new(ctx, "g");
        gs_graph_set_num_partitions(g, 4);
        x = gs_parameter(g, -1, gs_shape_make(GS_F32, 2, d), "x");
        CHECK(gs_split(g, x, 2, 2) == NULL && strstr(gs_ctx_error_msg(ctx), "dim 2 is out of range"));
        gs_ctx_clear_error(ctx);
        CHECK(gs_split(g, x, 0, 8) == NULL && strstr(gs_ctx_error_msg(ctx), "needs 8 devices but only 4"));
        gs_ctx_clear_error(ctx);
        CHECK(gs_annotate(g, x, "{devices=[2]0,1}") == NULL && strstr(gs_ctx_error_msg(ctx), "rank 2"));
        gs_ctx_clear_error(ctx);
        CHECK(gs_annotate(g, x, "{devices=[2,1]0,7}") == NULL && strstr(gs_ctx_error_msg(ctx), "device 7 is out of range"));
        gs_ctx_clear_error(ctx);
        CHECK(gs_annotate(g, x, "{{replicated}}") == NULL && strstr(gs_ctx_error_msg(ctx), "tuple sharding on an array"));
        gs_ctx_clear_error(ctx);
        CHECK(gs_value_set_sharding_text(x, "{devices=[2,2]<=[4]}") == GS_OK);
        CHECK(gs_split(g, x, 1, 4) != NULL);
        /* a split over 2 of the 4 devices: XLA rejects a tiled sharding that leaves devices out */
        CHECK(gs_split(g, x, 1, 2) == NULL && strstr(gs_ctx_error_msg(ctx), "covers 2 of the 4 devices"));
    }
    gs_ctx_destroy(ctx);
}

void suite_sharding(void) {
    RUN(test_text_round_trip);
    RUN(test_text_normalisation);
    RUN(test_iota_devices);
    RUN(test_uneven_extents);
    RUN(test_mesh);
    RUN(test_annotation_api);
    RUN(test_visualize);
    RUN(test_bad_input);
}
