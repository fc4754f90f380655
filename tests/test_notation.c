/* test_notation.c - the book's sharding notation both ways: meshes as text, shardings as {X, _} and A[I_X, J],
   HLO input with mesh={...}, and `gshard notation` on the book's ch.3 cases with their costs. */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#  define _POSIX_C_SOURCE 200809L /* mkdtemp */
#endif
#include "test.h"

static const gs_mesh *mesh(gs_ctx *ctx, const char *text) {
    const gs_mesh *m = gs_mesh_parse(ctx, text);
    CHECK_MSG(m != NULL, "gs_mesh_parse(%s): %s", text, gs_ctx_error_msg(ctx));
    return m;
}

static void test_notation_mesh_text(void) {
    gs_ctx *ctx = gst_ctx();
    const gs_mesh *m = mesh(ctx, "X=4,Y=2");
    CHECK_EQ_INT(gs_mesh_num_axes(m), 2);
    CHECK_EQ_INT(gs_mesh_axis_size(m, 0), 4);
    CHECK(strcmp(gs_mesh_axis_name(m, 1), "Y") == 0);
    CHECK(strcmp(gs_mesh_to_text(ctx, m), "X=4,Y=2") == 0);
    /* the book's dict form and spaces */
    m = mesh(ctx, "{data: 8, model : 4}");
    CHECK(strcmp(gs_mesh_to_text(ctx, m), "data=8,model=4") == 0);
    CHECK_EQ_INT(gs_mesh_num_devices(m), 32);
    CHECK(gs_mesh_parse(ctx, "X=4,Y") == NULL);
    CHECK(strstr(gs_ctx_error_msg(ctx), "column 6") != NULL);
    gs_ctx_clear_error(ctx);
    CHECK(gs_mesh_parse(ctx, "X=0") == NULL);
    gs_ctx_clear_error(ctx);
    CHECK(gs_mesh_parse(ctx, "X=4,X=2") == NULL);
    CHECK(strstr(gs_ctx_error_msg(ctx), "used twice") != NULL);
    gs_ctx_clear_error(ctx);
    CHECK(gs_mesh_parse(ctx, "{X=4") == NULL);
    gs_ctx_clear_error(ctx);
    CHECK(gs_mesh_parse(ctx, "4=X") == NULL);
    gs_ctx_destroy(ctx);
}

/* every spec of rank 2 over a 3-axis mesh prints back as itself, and the printed spec reads back to the same
   sharding (the search finds the one assignment that gives the device order) */
static void test_notation_spec_both_ways(void) {
    gs_ctx *ctx = gst_ctx();
    const gs_mesh *m = mesh(ctx, "X=2,Y=3,Z=4");
    static const char *const entries[] = {"_", "X", "Y", "Z", "(X,Y)", "(Y,X)", "(X,Z)", "(Z,X)", "(Y,Z)", "(Z,Y)",
                                          "(X,Y,Z)", "(Z,Y,X)", "(Y,Z,X)"};
    int i, j, n = (int)(sizeof entries / sizeof entries[0]), tried = 0;
    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++) {
            char spec[64], want[70];
            const gs_sharding *s, *back;
            const char *got;
            /* an axis may split only one dim */
            if ((strchr(entries[i], 'X') && strchr(entries[j], 'X')) || (strchr(entries[i], 'Y') && strchr(entries[j], 'Y')) ||
                (strchr(entries[i], 'Z') && strchr(entries[j], 'Z')))
                continue;
            snprintf(spec, sizeof spec, "%s, %s", entries[i], entries[j]);
            snprintf(want, sizeof want, "{%s}", spec);
            s = gs_mesh_sharding(ctx, m, 2, spec, NULL);
            got = gs_sharding_to_spec(ctx, s, m, 2);
            CHECK_MSG(got && strcmp(got, want) == 0, "%s printed as %s", want, got ? got : "(null)");
            back = got ? gs_mesh_sharding(ctx, m, 2, spec, NULL) : NULL;
            CHECK(back && gs_sharding_equal(back, s));
            tried++;
        }
    CHECK_EQ_INT(tried, 43);
    /* a device order no axis order gives: no spec, no error */
    {
        int64_t d3[3] = {2, 1, 12}, devs[24];
        gs_subgroup rep = GS_SUBGROUP_REPLICATED;
        const gs_sharding *odd;
        for (i = 0; i < 24; i++) devs[i] = (i * 7) % 24;
        odd = gs_sharding_tiled(ctx, 3, d3, devs, 1, &rep);
        CHECK(odd != NULL);
        CHECK(gs_sharding_to_spec(ctx, odd, m, 2) == NULL);
        CHECK(gs_ctx_error(ctx) == GS_OK);
    }
    /* 12 axes of 2 and the devices in reverse order (no axis order gives it): the search gives up in time */
    {
        const gs_mesh *m12 = mesh(ctx, "a=2,b=2,c=2,d=2,e=2,f=2,g=2,h=2,i=2,j=2,k=2,l=2");
        int64_t d2[2] = {64, 64}, n4096 = 4096, *rev = (int64_t *)malloc(sizeof(int64_t) * 4096);
        CHECK(rev != NULL);
        if (rev) {
            const gs_sharding *r;
            for (i = 0; i < 4096; i++) rev[i] = 4095 - i;
            r = gs_sharding_tiled(ctx, 2, d2, rev, 0, NULL);
            CHECK(r && gs_sharding_to_spec(ctx, r, m12, 2) == NULL && gs_ctx_error(ctx) == GS_OK);
            CHECK(strcmp(gs_sharding_to_spec(ctx, gs_sharding_iota(ctx, 2, d2, 1, &n4096, NULL, 0, NULL), m12, 2),
                         "{(a,b,c,d,e,f), (g,h,i,j,k,l)}") == 0);
            free(rev);
        }
    }
    /* replicated reads as every dim "_"; a sharding over another device count has no spec */
    CHECK(strcmp(gs_sharding_to_spec(ctx, gs_sharding_replicated(ctx), m, 3), "{_, _, _}") == 0);
    CHECK(gs_sharding_to_spec(ctx, gs_sharding_parse(ctx, "{devices=[4,1]<=[4]}"), m, 2) == NULL);
    CHECK(gs_sharding_to_spec(ctx, gs_sharding_maximal(ctx, 3), m, 2) == NULL);
    gs_ctx_destroy(ctx);
}

static void test_notation_book_form(void) {
    gs_ctx *ctx = gst_ctx();
    const gs_mesh *m = mesh(ctx, "X=4,Y=2"), *big = mesh(ctx, "data=4,model=2");
    const char *dn[2] = {"B", "D"};
    /* X splits dim 0: tiles of devices {0,1}, {2,3}, ...: XLA's [4,1,2] with replication */
    const gs_sharding *s = gs_sharding_parse(ctx, "{devices=[4,1,2]<=[8] last_tile_dim_replicate}");
    CHECK(strcmp(gs_sharding_to_notation(ctx, s, m, "A", 2, NULL), "A[I_X, J]") == 0);
    CHECK(strcmp(gs_sharding_to_notation(ctx, s, m, "In", 2, dn), "In[B_X, D]") == 0);
    s = gs_sharding_parse(ctx, "{devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}");
    CHECK(strcmp(gs_sharding_to_notation(ctx, s, m, "A", 2, NULL), "A[I, J_Y]") == 0);
    s = gs_sharding_parse(ctx, "{devices=[8,1]<=[8]}");
    CHECK(strcmp(gs_sharding_to_notation(ctx, s, m, "A", 2, NULL), "A[I_{XY}, J]") == 0);
    s = gs_sharding_parse(ctx, "{devices=[8,1]<=[4,2]T(1,0)}");
    CHECK(strcmp(gs_sharding_to_notation(ctx, s, m, "A", 2, NULL), "A[I_{YX}, J]") == 0);
    CHECK(strcmp(gs_sharding_to_notation(ctx, s, big, "W", 2, NULL), "W[I_{model,data}, J]") == 0);
    s = gs_sharding_parse(ctx, "{devices=[4,2]<=[8]}");
    CHECK(strcmp(gs_sharding_to_notation(ctx, s, big, "W", 2, dn), "W[B_{data}, D_{model}]") == 0);
    gs_ctx_destroy(ctx);
}

/* mesh={...} in the header and sharding={X, _} read as the tile strings XLA would write */
static void test_notation_hlo_input(void) {
    gs_ctx *ctx = gst_ctx();
    const char *text =
        "HloModule m, num_partitions=8, mesh={X=4,Y=2}\n\n"
        "ENTRY main {\n"
        "  x = f32[16,32] parameter(0), sharding={X, _}\n"
        "  w = f32[32,64] parameter(1), sharding={_, Y}\n"
        "  h = f32[16,64] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={(Y,X), _}\n"
        "  a = f32[16,64] custom-call(h), custom_call_target=\"Sharding\", sharding={(X,Y), ?}\n"
        "  t = (f32[16,64], f32[16,64]) tuple(a, h), sharding={{X, Y}, {replicated}}\n"
        "  ROOT r = f32[16,64] get-tuple-element(t), index=0\n"
        "}\n";
    gs_graph *g = gst_hlo_parse(ctx, text);
    const char *printed;
    if (!g) {
        gs_ctx_destroy(ctx);
        return;
    }
    CHECK(gs_hlo_mesh(g) != NULL && gs_mesh_num_devices(gs_hlo_mesh(g)) == 8);
    CHECK(gs_sharding_equal(gs_value_sharding(gs_graph_find(g, "x")),
                            gs_sharding_parse(ctx, "{devices=[4,1,2]<=[8] last_tile_dim_replicate}")));
    CHECK(gs_sharding_equal(gs_value_sharding(gs_graph_find(g, "w")),
                            gs_sharding_parse(ctx, "{devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}")));
    CHECK(gs_sharding_equal(gs_value_sharding(gs_graph_find(g, "h")), gs_sharding_parse(ctx, "{devices=[8,1]<=[4,2]T(1,0)}")));
    CHECK(gs_sharding_equal(gs_value_sharding(gs_graph_find(g, "a")), gs_sharding_parse(ctx, "{devices=[8,1]<=[8]}")));
    CHECK_EQ_INT(gs_value_open_dims(gs_graph_find(g, "a")), 2);
    CHECK(gs_sharding_equal(gs_value_sharding(gs_graph_find(g, "t")),
                            gs_sharding_parse(ctx, "{{devices=[4,2]<=[8]}, {replicated}}")));
    /* printed HLO stays XLA's unless a notation mesh is set; then it reads back to the same shardings */
    printed = gs_hlo_print(g);
    CHECK(printed && strstr(printed, "sharding={devices=[4,1,2]<=[8] last_tile_dim_replicate}") && !strstr(printed, "mesh="));
    gs_ctx_set_notation_mesh(ctx, gs_hlo_mesh(g));
    printed = gs_hlo_print(g);
    CHECK(printed && strstr(printed, "HloModule m, num_partitions=8, mesh={X=4,Y=2}\n"));
    CHECK(printed && strstr(printed, "x = f32[16,32] parameter(0), sharding={X, _}\n"));
    CHECK(printed && strstr(printed, "sharding={(Y,X), _}"));
    CHECK(printed && strstr(printed, "sharding={{X, Y}, {replicated}}"));
    if (printed) {   /* read back in a fresh context, printed the same way: the same text */
        gs_ctx *c2 = gst_ctx();
        gs_graph *g2 = gst_hlo_parse(c2, printed);
        gs_ctx_set_notation_mesh(c2, g2 ? gs_hlo_mesh(g2) : NULL);
        CHECK(g2 && strcmp(gs_hlo_print(g2), printed) == 0);
        gs_ctx_destroy(c2);
    }
    gs_ctx_destroy(ctx);

    /* errors: no mesh in the header, an unknown axis, '?' off an annotation, a tuple of the wrong length */
    gst_hlo_error_at("HloModule m, num_partitions=8\nENTRY e {\n  ROOT x = f32[8] parameter(0), sharding={X}\n}\n",
                     GS_ERR_PARSE, 3, 33, "declares no mesh");
    gst_hlo_error_at("HloModule m, mesh={X=4,Y=2}\nENTRY e {\n  ROOT x = f32[8] parameter(0), sharding={Q}\n}\n",
                     GS_ERR_PARSE, 3, 33, "no axis \"Q\"");
    gst_hlo_error_at("HloModule m, mesh={X=4,Y=2}\nENTRY e {\n  ROOT x = f32[8] parameter(0), sharding={?}\n}\n",
                     GS_ERR_PARSE, 3, 33, "only on a Sharding annotation");
    gst_hlo_error_at("HloModule m, mesh={X=4,Y=2}\nENTRY e {\n  ROOT x = f32[8,2] parameter(0), sharding={X}\n}\n",
                     GS_ERR_PARSE, 3, 35, "rank 2");
    gst_hlo_error_at("HloModule m, mesh={X=4,Y}\nENTRY e {\n  ROOT x = f32[8] parameter(0)\n}\n", GS_ERR_PARSE, 1, 19,
                     "expected '=' and the axis size");
    gst_hlo_error_at("HloModule m, num_partitions=4, mesh={X=4,Y=2}\nENTRY e {\n  ROOT x = f32[8] parameter(0)\n}\n",
                     GS_ERR_PARSE, 1, 37, "mesh={...} has 8 devices but num_partitions=4");
    {   /* the mesh gives num_partitions when the header does not */
        gs_ctx *c3 = gst_ctx();
        gs_graph *g3 = gst_hlo_parse(c3, "HloModule m, mesh={X=4,Y=2}\nENTRY e {\n  ROOT x = f32[8] parameter(0), sharding={X}\n}\n");
        CHECK(g3 && gs_hlo_num_partitions(g3) == 8);
        gs_ctx_destroy(c3);
    }
}

/* ---- expressions ---- */
static gs_notation *build(gs_ctx *ctx, const char *expr, const char *mesh_text, const char *sizes) {
    gs_notation_desc d;
    gs_notation *n = NULL;
    const char *names[4];
    int64_t vals[4];
    int col = 0;
    memset(&d, 0, sizeof d);
    d.mesh = mesh(ctx, mesh_text);
    if (sizes) {   /* "I=1024,J=4096" with one-letter names */
        const char *p = sizes;
        static char nm[4][2];
        while (*p && d.n_sizes < 4) {
            nm[d.n_sizes][0] = *p;
            names[d.n_sizes] = nm[d.n_sizes];
            vals[d.n_sizes++] = strtoll(p + 2, NULL, 10);
            p = strchr(p, ',');
            if (!p) break;
            p++;
        }
        d.size_names = names;
        d.sizes = vals;
    }
    CHECK_MSG(gs_notation_build(ctx, expr, &d, &n, &col) == GS_OK, "%s: %s", expr, gs_ctx_error_msg(ctx));
    return n;
}

static gs_topology *torus(gs_ctx *ctx, const char *chip, int rank, const int64_t *dims) {
    gs_topology_desc td;
    gs_topology *t = NULL;
    memset(&td, 0, sizeof td);
    td.chip = gs_chip_find(chip);
    td.mesh_rank = rank;
    memcpy(td.mesh, dims, sizeof(int64_t) * (size_t)rank);
    CHECK_OK(gs_topology_create(ctx, &td, &t));
    return t;
}

/* the collective opcodes of the SPMD program, in order, as "all-gather all-reduce" */
static const char *collectives(gs_graph *spmd, char *buf, size_t cap) {
    int i, n = 0;
    buf[0] = 0;
    for (i = 0; i < gs_graph_num_values(spmd); i++) {
        gs_op op = gs_value_op(gs_graph_value(spmd, i));
        if (op == GS_OP_ALL_GATHER || op == GS_OP_ALL_REDUCE || op == GS_OP_REDUCE_SCATTER || op == GS_OP_ALL_TO_ALL ||
            op == GS_OP_COLLECTIVE_PERMUTE)
            n += snprintf(buf + n, cap - (size_t)n, "%s%s", n ? " " : "", gs_op_name(op));
    }
    return buf;
}

/* The book's ch.3 cases on mesh {X: 4, Y: 2}, v5e 4x2 (no wraparound: v5e wraps only axes of 16), every dim 1024
   in bf16: the collective the strategy needs and nothing else, and its time by the book's open-line formulas:
   AllGather/ReduceScatter (N-1)/N * V / W_uni, AllReduce twice that, AllToAll V / (4 W_uni) (twice the ring's
   V / (4 W_bi)); W_uni = 4.5e10 B/s. */
static void test_notation_book_cases(void) {
    static const struct {
        const char *expr, *ops, *words;
        double V, seconds;
    } cases[] = {
        {"A[I_X, J] * B[J, K_Y] -> C[I_X, K_Y]", "", "", 0, 0},
        {"A[I, J_X] * B[J_X, K] -> C[I, K]", "all-reduce", "AllReduce C over X", 2097152.0, 2 * 0.75 * 2097152.0 / 4.5e10},
        {"A[I, J_X] * B[J_X, K] -> C[I, K_X]", "reduce-scatter", "ReduceScatter C over X", 2097152.0, 0.75 * 2097152.0 / 4.5e10},
        {"A[I_X, J] * B[J_X, K] -> C[I_X, K]", "all-gather", "AllGather B over X", 2097152.0, 0.75 * 2097152.0 / 4.5e10},
        {"A[I_X, J] -> A[I, J_X]", "all-to-all", "AllToAll A over X", 2097152.0, 2097152.0 / (4 * 4.5e10)},
        {"A[I, J_X] * B[J_X, K] -> C[I, K]{U_X}", "", "", 0, 0},
    };
    int i;
    for (i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        gs_ctx *ctx = gst_ctx();
        int64_t dims[2] = {4, 2};
        gs_topology *t = torus(ctx, "v5e", 2, dims);
        gs_notation *n = build(ctx, cases[i].expr, "X=4,Y=2", NULL);
        gs_notation_comm *rows = NULL;
        int nr = -1;
        char ops[256];
        const char *rep;
        if (!n || !t) {
            gs_ctx_destroy(ctx);
            continue;
        }
        CHECK_MSG(strcmp(collectives(gs_notation_spmd(n), ops, sizeof ops), cases[i].ops) == 0, "%s: collectives '%s'",
                  cases[i].expr, ops);
        CHECK_OK(gs_notation_comms(n, t, &rows, &nr));
        CHECK_EQ_INT(nr, cases[i].ops[0] ? 1 : 0);
        rep = gs_notation_report(n, t);
        CHECK(rep != NULL);
        if (nr == 1) {
            CHECK_REL(rows[0].bytes, cases[i].V, 1e-12);
            CHECK_REL(rows[0].seconds, cases[i].seconds, 1e-9);
            CHECK_MSG(rep && strstr(rep, cases[i].words), "%s: report lacks '%s':\n%s", cases[i].expr, cases[i].words, rep);
            CHECK(rep && strstr(rep, "2 MiB"));
            CHECK(rep && strstr(rep, "// total: 1 collective, 2 MiB"));
        } else {
            CHECK(rep && strstr(rep, "// no collective") && strstr(rep, "// total: 0 collectives"));
        }
        gs_ctx_destroy(ctx);
    }
}

/* the book's worked numbers: ch.3 AllGather_Y([E_Y, F]) of bf16[2048,8192] on a v5e 8x4 (no wraparound): 560 us;
   ch.3 Q2 on a v4p 4x4x4 (wraparound everywhere), B = 1024, D = 4096: AllGather_X([B_X, D_Y]) 23 us and the
   AllReduce_Z of [B_X, D_Y]{U_Z} (here the sum over J_Z of a contraction) 11.6 us */
static void test_notation_book_numbers(void) {
    gs_ctx *ctx = gst_ctx();
    int64_t d84[2] = {8, 4}, d444[3] = {4, 4, 4};
    gs_topology *v5e = torus(ctx, "v5e", 2, d84), *v4 = torus(ctx, "v4p", 3, d444);
    gs_notation *n;
    gs_notation_comm *rows = NULL;
    int nr = 0;
    char ops[256];
    n = build(ctx, "A[E_Y, F] -> A[E, F]", "X=8,Y=4", "E=2048,F=8192");
    CHECK_OK(gs_notation_comms(n, v5e, &rows, &nr));
    CHECK(nr == 1 && rows[0].kind == GS_COLLECTIVE_ALL_GATHER && strcmp(rows[0].axes, "Y") == 0);
    CHECK_REL(rows[0].bytes, 2048.0 * 8192 * 2, 1e-12);
    CHECK_REL(rows[0].seconds, 560e-6, 0.002);
    n = build(ctx, "A[B_X, D_Y] -> A[B, D_Y]", "X=4,Y=4,Z=4", "B=1024,D=4096");
    CHECK_OK(gs_notation_comms(n, v4, &rows, &nr));
    CHECK(nr == 1 && rows[0].kind == GS_COLLECTIVE_ALL_GATHER && strcmp(rows[0].axes, "X") == 0);
    CHECK_REL(rows[0].bytes, 2.0 * 1024 * 4096 / 4, 1e-12);
    CHECK_REL(rows[0].seconds, 23.3e-6, 0.002);
    n = build(ctx, "A[B_X, J_Z] * W[J_Z, D_Y] -> C[B_X, D_Y]", "X=4,Y=4,Z=4", "B=1024,D=4096");
    CHECK(strcmp(collectives(gs_notation_spmd(n), ops, sizeof ops), "all-reduce") == 0);
    CHECK_OK(gs_notation_comms(n, v4, &rows, &nr));
    CHECK(nr == 1 && rows[0].kind == GS_COLLECTIVE_ALL_REDUCE && strcmp(rows[0].array, "C") == 0 &&
          strcmp(rows[0].axes, "Z") == 0);
    CHECK_REL(rows[0].bytes, 2.0 * 1024 * 4096 / 16, 1e-12);
    CHECK_REL(rows[0].seconds, 11.6e-6, 0.005);
    /* two axes named on one dim: the group spans both */
    n = build(ctx, "A[I_{XY}, J] -> A[I, J_{XY}]", "X=4,Y=2", NULL);
    CHECK_OK(gs_notation_comms(n, torus(ctx, "v5e", 2, (const int64_t[]){4, 2}), &rows, &nr));
    CHECK(nr == 1 && rows[0].kind == GS_COLLECTIVE_ALL_TO_ALL && strcmp(rows[0].axes, "{XY}") == 0);
    gs_ctx_destroy(ctx);
}

/* the programs compute what the expression says: C = A . B summed by the reference interpreter against a naive
   loop, the unreduced form's partial sums adding up to it, a transposed result in C's dim order */
static void test_notation_semantics(void) {
    static const char *const exprs[] = {"A[I_X, J] * B[J, K_Y] -> C[I_X, K_Y]", "A[I, J_X] * B[J_X, K] -> C[I, K]{U_X}",
                                        "A[I, J] * B[J, K_X] -> C[K_X, I]"};
    int e;
    for (e = 0; e < 3; e++) {
        gs_ctx *ctx = gst_ctx();
        gs_notation_desc d;
        gs_notation *n = NULL;
        const char *names[3] = {"I", "J", "K"};
        int64_t sz[3] = {3, 8, 5}, i, j, k, u, U = e == 1 ? 4 : 1;
        float a[24], b[40], out[4 * 15], want[15];
        const void *in[2];
        void *outs[1];
        memset(&d, 0, sizeof d);
        d.mesh = mesh(ctx, e == 1 ? "X=4" : "X=2,Y=2");
        d.n_sizes = 3;
        d.size_names = names;
        d.sizes = sz;
        d.dtype = GS_F32;
        if (e == 1) sz[2] = 5;
        CHECK_OK(gs_notation_build(ctx, exprs[e], &d, &n, NULL));
        if (!n) {
            gs_ctx_destroy(ctx);
            continue;
        }
        gs_fill_random(gs_shape_make(GS_F32, 2, (const int64_t[]){3, 8}), 1, 0, a);
        gs_fill_random(gs_shape_make(GS_F32, 2, (const int64_t[]){8, 5}), 1, 1, b);
        in[0] = a;
        in[1] = b;
        outs[0] = out;
        CHECK_OK(gs_eval(gs_notation_source(n), in, outs));
        for (i = 0; i < 3; i++)
            for (k = 0; k < 5; k++) {
                double s = 0;
                for (j = 0; j < 8; j++) s += (double)a[i * 8 + j] * b[j * 5 + k];
                want[i * 5 + k] = (float)s;
            }
        for (i = 0; i < 3; i++)
            for (k = 0; k < 5; k++) {
                double got = 0;
                if (e == 2) got = out[k * 3 + i];
                else
                    for (u = 0; u < U; u++) got += out[u * 15 + i * 5 + k];
                CHECK_NEAR(got, want[i * 5 + k], 1e-4);
            }
        gs_ctx_destroy(ctx);
    }
}

static void test_notation_errors(void) {
    static const struct {
        const char *expr;
        int col;
        const char *part;
    } bad[] = {
        {"A[I_X, J", 9, "expected ',' or ']'"},
        {"A[I_Q, J]", 5, "expected a mesh axis after '_'"},
        {"A[I_X, J] -> B[I, J_X]", 14, "one array on both sides"},
        {"A[I_X, I]", 8, "appears twice"},
        {"A[I_{XX}, J]", 7, "used twice"},
        {"A[I_X, J_X]", 10, "splits two dims"},
        {"A[I_X, J] * B[J, K]", 20, "expected '->'"},
        {"A[I_X, J] -> A[I, J_X] extra", 24, "unexpected text"},
        {"A[I_X, J] -> A[J, I]", 14, "keeps the dims in order"},
        {"A[I_X, J]{U_Y}", 1, "marks a result"},
        {"[I]", 1, "expected an array name"},
        {"A[I_{X", 7, "expected a mesh axis or '}'"},
        {"A[I] -> A[I]{U_X}", 1, "only a contraction's result"},
        {"A[_X]", 3, "expected a dim name"},
    };
    gs_ctx *ctx = gst_ctx();
    gs_notation_desc d;
    gs_notation *n = NULL;
    int i, col = -1;
    const char *q[1] = {"Q"};
    int64_t three = 3;
    memset(&d, 0, sizeof d);
    d.mesh = mesh(ctx, "X=4,Y=2");
    for (i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++) {
        gs_result r = gs_notation_build(ctx, bad[i].expr, &d, &n, &col);
        CHECK_MSG(r == GS_ERR_PARSE && col == bad[i].col, "%s: %s, column %d (want %d)", bad[i].expr, gs_result_str(r),
                  col, bad[i].col);
        CHECK_MSG(strstr(gs_ctx_error_msg(ctx), bad[i].part) != NULL, "%s: '%s' lacks '%s'", bad[i].expr,
                  gs_ctx_error_msg(ctx), bad[i].part);
        CHECK(n == NULL);
        gs_ctx_clear_error(ctx);
    }
    /* not syntax: column 0 and a message naming the problem */
    CHECK_ERR(gs_notation_build(ctx, "A[I,J] * B[J,K] -> C[I, Z]", &d, &n, &col), GS_ERR_SHAPE, "neither A nor B");
    CHECK_EQ_INT(col, 0);
    CHECK_ERR(gs_notation_build(ctx, "A[I,J,L] * B[J,K] -> C[I, K]", &d, &n, &col), GS_ERR_SHAPE, "summing one operand's dim");
    CHECK_ERR(gs_notation_build(ctx, "A[I, J_X] * B[J_X, K] -> C[I, K]{U_Y}", &d, &n, &col), GS_ERR_UNSUPPORTED,
              "exactly the unreduced axes");
    d.n_sizes = 1;
    d.size_names = q;
    d.sizes = &three;
    CHECK_ERR(gs_notation_build(ctx, "A[I_X]", &d, &n, &col), GS_ERR_INVALID_ARG, "a size is given for Q");
    d.n_sizes = 0;
    d.mesh = NULL;
    CHECK_ERR(gs_notation_build(ctx, "A[I_X]", &d, &n, &col), GS_ERR_INVALID_ARG, "a desc with a mesh");
    gs_ctx_destroy(ctx);
}

/* random expressions from the grammar's tokens (mostly wrong): each builds, or fails with a message, and a syntax
   error points inside the text */
static void test_notation_random_text(void) {
    static const char *const tok[] = {"A", "B", "C", "[", "]", ",", "I", "J", "K", "_X", "_Y", "_{XY}", "_{", "}",
                                      " * ", " -> ", "{U_X}", "{U_", " ", "_", "X", "(", "9"};
    uint64_t st = 12345;
    int i, k, built = 0, nt = (int)(sizeof tok / sizeof tok[0]);
    gs_ctx *ctx = gst_ctx();
    gs_notation_desc d;
    memset(&d, 0, sizeof d);
    d.mesh = mesh(ctx, "X=2,Y=2");
    for (i = 0; i < 3000; i++) {
        char expr[256];
        size_t n = 0;
        int col = -1, len = (int)gst_randint(&st, 1, 24);
        gs_notation *nt_out = NULL;
        gs_result r;
        expr[0] = 0;
        if (i % 2 == 0) {   /* a valid expression with one character changed reaches deeper paths */
            static const char chars[] = "XYIJK_,[]{}*->U AB";
            n = (size_t)snprintf(expr, sizeof expr, "A[I_X, J] * B[J, K_Y] -> C[I_X, K_Y]");
            expr[gst_randint(&st, 0, (int64_t)n - 1)] = chars[gst_randint(&st, 0, (int64_t)sizeof chars - 2)];
        } else {
            for (k = 0; k < len && n + 8 < sizeof expr; k++)
                n += (size_t)snprintf(expr + n, sizeof expr - n, "%s", tok[gst_randint(&st, 0, nt - 1)]);
        }
        r = gs_notation_build(ctx, expr, &d, &nt_out, &col);
        if (r == GS_OK) {
            built++;
            CHECK(nt_out && gs_notation_spmd(nt_out));
        } else {
            CHECK(nt_out == NULL && gs_ctx_error_msg(ctx)[0] != 0);
            CHECK_MSG(r != GS_ERR_PARSE || (col >= 1 && col <= (int)n + 1), "%s: column %d", expr, col);
            CHECK_MSG(r == GS_ERR_PARSE || col == 0, "%s: %s with column %d", expr, gs_result_str(r), col);
        }
        gs_ctx_clear_error(ctx);
    }
    CHECK(built > 0);
    gs_ctx_destroy(ctx);
}

/* the CLI: the report, the caret under a bad column, --notation round trips and its errors */
static void test_notation_cli(void) {
    char dir[256], path[300];
    FILE *f;
    snprintf(dir, sizeof dir, "%s/gshard_notation_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        CHECK(!"mkdtemp");
        return;
    }
    CHECK_EQ_INT(gst_cli(dir, "notation 'A[I_X, J] * B[J_X, K] -> C[I_X, K]' --mesh X=4,Y=2"), 0);
    CHECK(strstr(gst_cli_out, "all-gather(B)") != NULL);
    CHECK(strstr(gst_cli_out, "// AllGather B over X: 2 MiB, 35 \xC2\xB5s on v5e\n") != NULL);
    CHECK(strstr(gst_cli_out, "// per device: A bf16[256,1024], B bf16[256,1024], C bf16[256,1024]\n") != NULL);
    CHECK(strstr(gst_cli_out, "(torus 4x2, no wraparound)") != NULL);
    CHECK_EQ_INT(gst_cli(dir, "notation 'A[I_X, J] -> A[I, J_X]' --mesh X=4,Y=2 --sizes I=512,J=256 --dtype f32 --chip v5p"), 0);
    CHECK(strstr(gst_cli_out, "// mesh X=4,Y=2 (8 devices), f32, I=512, J=256\n") != NULL);
    CHECK(strstr(gst_cli_out, "AllToAll A over X: 512 KiB") != NULL);
    CHECK(strstr(gst_cli_out, " on v5p") != NULL);
    CHECK_EQ_INT(gst_cli(dir, "notation 'A[I_X, J' --mesh X=4,Y=2"), 2);
    CHECK(strstr(gst_cli_err, "column 9: expected ',' or ']'\n  A[I_X, J\n          ^\n") != NULL);
    CHECK_EQ_INT(gst_cli(dir, "notation 'A[I_X]' --mesh X=4 --sizes I"), 2);
    CHECK_EQ_INT(gst_cli(dir, "notation 'A[I_X]'"), 2);
    CHECK(strstr(gst_cli_err, "--mesh is required") != NULL);
    CHECK_EQ_INT(gst_cli(dir, "notation 'A[I_X]' --mesh X=4 --chip v9"), 2);
    CHECK_EQ_INT(gst_cli(dir, "notation 'A[I_X]' --mesh X=4 --meshh X=2"), 2);

    snprintf(path, sizeof path, "%s/m.hlo", dir);
    f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs("HloModule m, num_partitions=8\n\nENTRY main {\n"
          "  x = f32[16,32] parameter(0), sharding={devices=[4,1,2]<=[8] last_tile_dim_replicate}\n"
          "  w = f32[32,64] parameter(1), sharding={devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}\n"
          "  ROOT h = f32[16,64] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n", f);
    fclose(f);
    CHECK_EQ_INT(gst_cli(dir, "print %s --notation --mesh X=4,Y=2", path), 0);
    CHECK(strstr(gst_cli_out, "HloModule m, num_partitions=8, mesh={X=4,Y=2}\n") != NULL);
    CHECK(strstr(gst_cli_out, "sharding={X, _}\n") != NULL && strstr(gst_cli_out, "sharding={_, Y}\n") != NULL);
    CHECK_EQ_INT(gst_cli(dir, "propagate %s --devices 8 --notation --mesh X=4,Y=2", path), 0);
    CHECK(strstr(gst_cli_out, "ROOT h = f32[16,64] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
                              "sharding={X, Y}\n") != NULL);
    CHECK_EQ_INT(gst_cli(dir, "partition %s --devices 8 --explain --notation --mesh X=4,Y=2", path), 0);
    CHECK(strstr(gst_cli_out, "// h = dot, sharding {X, Y}") != NULL);
    /* a mesh whose axis order cannot give x's device order: the tile string stays */
    CHECK_EQ_INT(gst_cli(dir, "print %s --notation --mesh Y=2,X=4", path), 0);
    CHECK(strstr(gst_cli_out, "sharding={devices=[4,1,2]<=[8] last_tile_dim_replicate}") != NULL);
    CHECK_EQ_INT(gst_cli(dir, "print %s --notation", path), 2);
    CHECK(strstr(gst_cli_err, "--notation needs a mesh") != NULL);
    CHECK_EQ_INT(gst_cli(dir, "print %s --notation --mesh X=2", path), 2);
    CHECK_EQ_INT(gst_cli(dir, "print %s --mesh X=8", path), 2);
    remove(path);
    remove(dir);
}

void suite_notation(void) {
    RUN(test_notation_mesh_text);
    RUN(test_notation_spec_both_ways);
    RUN(test_notation_book_form);
    RUN(test_notation_hlo_input);
    RUN(test_notation_book_cases);
    RUN(test_notation_book_numbers);
    RUN(test_notation_semantics);
    RUN(test_notation_errors);
    RUN(test_notation_random_text);
    RUN(test_notation_cli);
}
