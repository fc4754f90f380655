/* test_ragged.c - ragged-all-to-all: text (round trip, the verifier's errors with line:column), the reference
   interpreter (groups of one), the runtime on 2 and 4 devices in every runtime mode against hand-computed results
   (uneven and zero sizes, several updates per member, rank-2 and s64 metadata, rows of several elements, bf16),
   data-dependent bounds errors naming the device and the operand, propagation, the partitioner (a manual region
   run against its reference; refused outside one) and the cost bound. */
#if !defined(_POSIX_C_SOURCE)
#  define _POSIX_C_SOURCE 200809L /* mkdtemp */
#endif
#include "test.h"

#define RG_VARIANTS 5
/* the runtime modes test_runtime.c uses: threaded (automatic workers), lockstep, a worker per device, 3 workers, 1 */
static gs_runtime *rg_runtime(gs_ctx *ctx, int64_t D, int variant) {
    static const int64_t workers[RG_VARIANTS] = {0, 0, -1, 3, 1};
    gs_runtime_desc desc;
    gs_runtime *rt = NULL;
    memset(&desc, 0, sizeof desc);
    desc.num_devices = D;
    desc.mode = variant == 1 ? GS_RUNTIME_LOCKSTEP : GS_RUNTIME_THREADED;
    desc.workers = workers[variant] < 0 ? D : workers[variant] > D ? D : workers[variant];
    if (gs_runtime_create(ctx, &desc, &rt) != GS_OK)
        gst_failf(__FILE__, __LINE__, "gs_runtime_create(%lld, variant %d): %s", (long long)D, variant, gs_ctx_error_msg(ctx));
    return rt;
}

/* ---- text ---- */
static void test_ragged_text(void) {
    gs_ctx *ctx = gst_ctx();
    static const char *text =
        "HloModule r, num_partitions=4\n"
        "\n"
        "ENTRY e {\n"
        "  a = bf16[8,3] parameter(0)\n"
        "  b = bf16[5,3] parameter(1)\n"
        "  io = s64[2,4] parameter(2)\n"
        "  ss = s64[2,4] parameter(3)\n"
        "  oo = s64[2,4] parameter(4)\n"
        "  rs = s64[2,4] parameter(5)\n"
        "  x = bf16[5,3] ragged-all-to-all(a, b, io, ss, oo, rs), channel_id=3, replica_groups=[2,2]<=[4], dimensions={0}\n"
        "  ROOT y = bf16[5,3] ragged-all-to-all(a, x, io, ss, oo, rs), replica_groups={{0,1,2,3}}\n"
        "}\n";
    gs_graph *g = gst_hlo_parse(ctx, text);
    const char *p;
    if (!g) {
        gs_ctx_destroy(ctx);
        return;
    }
    CHECK(gs_value_op(gs_graph_find(g, "y")) == GS_OP_RAGGED_ALL_TO_ALL);
    CHECK(gs_graph_find(g, "y") && gs_value_num_operands(gs_graph_find(g, "y")) == 6);
    p = gst_hlo_roundtrip(g);
    CHECK(p && strstr(p, "x = bf16[5,3] ragged-all-to-all(a, b, io, ss, oo, rs), channel_id=1, replica_groups=[2,2]<=[4], dimensions={0}"));
    /* without channel_id in the text it is printed with one (every collective here is across the partitions) and
       no use_global_device_ids, which XLA's parser does not take for it */
    CHECK(p && strstr(p, "y = bf16[5,3] ragged-all-to-all(a, x, io, ss, oo, rs), channel_id=2, replica_groups={{0,1,2,3}}\n"));
    CHECK(p && !strstr(p, "use_global_device_ids"));
    gs_ctx_destroy(ctx);
}

/* the verifier's errors (XLA's checks, and those its runtimes imply), each with line:column */
static void test_ragged_text_errors(void) {
    static const char *head = "HloModule m, num_partitions=2\n\nENTRY e {\n  a = f32[4,2] parameter(0)\n"
                              "  b = f32[6,2] parameter(1)\n  c = %s parameter(2)\n  d = s32[2] parameter(3)\n"
                              "  ROOT r = %s ragged-all-to-all(%s)%s\n}\n";
    static const struct {
        const char *c, *shape, *ops, *attrs;
        int col;
        const char *part;
        gs_result code;
    } cases[] = {
        {"s32[2]", "f32[6,2]", "a, b, c, d, d", ", replica_groups={{0,1}}", 21, "ragged-all-to-all takes 6 operands, found 5", GS_ERR_PARSE},
        {"s32[2,2,1]", "f32[6,2]", "a, b, c, c, c, c", "", 8, "operand 2 (input_offsets, c) must be rank 1 or 2, not s32[2,2,1]", GS_ERR_PARSE},
        {"s32[3]", "f32[6,2]", "a, b, c, d, d, d", "", 8, "operands 2 (input_offsets, s32[3]) and 3 (send_sizes, s32[2]) have different shapes", GS_ERR_PARSE},
        {"s64[2]", "f32[6,2]", "a, b, c, d, d, d", "", 8, "operands 2 (input_offsets, s64[2]) and 3 (send_sizes, s32[2]) have different shapes", GS_ERR_PARSE},
        {"f32[2]", "f32[6,2]", "a, b, c, c, c, c", "", 8, "operand 2 (input_offsets, c) must be integer, not f32[2]", GS_ERR_PARSE},
        {"s32[3]", "f32[6,2]", "a, b, c, c, c, c", ", replica_groups={{0,1}}", 8, "3 offsets/sizes do not divide into the 2 members of a group", GS_ERR_PARSE},
        {"s32[2]", "f32[6,2]", "a, b, c, d, d, d", ", replica_groups={{0,1}}, use_global_device_ids=true", 82,
         "attribute 'use_global_device_ids' is not read on ragged-all-to-all", GS_ERR_UNSUPPORTED},
        {"s32[2]", "f32[4,2]", "a, b, c, d, d, d", "", 12, "is declared f32[4,2] but is f32[6,2]", GS_ERR_PARSE},
        {"s32[2]", "f32[6,2]", "a, b, c, d, d, d", ", dimensions={0,1}", 69, "expected one dimension in dimensions=, found 2", GS_ERR_PARSE},
        {"s32[2]", "f32[6,2]", "a, b, c, d, d, d", ", replica_group={{0,1}}", 58, "unknown attribute 'replica_group' (did you mean 'replica_groups'?)", GS_ERR_PARSE},
        {"f32[6,3]", "f32[6,3]", "a, c, d, d, d, d", "", 8, "input f32[4,2] and output f32[6,3] differ in dim 1 (only dim 0 is ragged)", GS_ERR_PARSE},
        {"s32[6,2]", "s32[6,2]", "a, c, d, d, d, d", "", 8, "input f32[4,2] and output s32[6,2] differ in element type", GS_ERR_PARSE},
        {"f32[]", "f32[]", "c, c, d, d, d, d", "", 8, "the input (f32[]) needs a ragged dim 0", GS_ERR_PARSE},
    };
    char text[1024];
    int i;
    for (i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        snprintf(text, sizeof text, head, cases[i].c, cases[i].shape, cases[i].ops, cases[i].attrs);
        gst_hlo_error_at(text, cases[i].code, 8, cases[i].col, cases[i].part);
    }
}

/* ---- the reference interpreter: a group of one is the device's own updates (XLA's degenerate case) ---- */
static void test_ragged_interp(void) {
    static const char *text =
        "HloModule one\n"
        "\n"
        "ENTRY e {\n"
        "  a = s32[5,2] parameter(0)\n"
        "  b = s32[6,2] parameter(1)\n"
        "  io = s32[3,1] parameter(2)\n"
        "  ss = s32[3,1] parameter(3)\n"
        "  oo = s32[3,1] parameter(4)\n"
        "  rs = s32[3,1] parameter(5)\n"
        "  ROOT r = s32[6,2] ragged-all-to-all(a, b, io, ss, oo, rs), replica_groups={}\n"
        "}\n";
    static const char *pair =
        "HloModule two, num_partitions=2\n"
        "\n"
        "ENTRY e {\n"
        "  a = s32[5,2] parameter(0)\n"
        "  b = s32[6,2] parameter(1)\n"
        "  m = s32[2] parameter(2)\n"
        "  ROOT r = s32[6,2] ragged-all-to-all(a, b, m, m, m, m), channel_id=1, replica_groups={{0,1}}\n"
        "}\n";
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx, text), *g2 = gst_hlo_parse(ctx, pair);
    int32_t a[10], b[12], out[12];
    /* three updates (rank-2 metadata, row-major): rows [3,5) -> 0, none, row 0 -> 4 */
    int32_t io[3] = {3, 1, 0}, ss[3] = {2, 0, 1}, oo[3] = {0, 6, 4}, rs[3] = {2, 0, 1};
    static const int32_t want[12] = {30, 31, 40, 41, -1, -1, -1, -1, 0, 1, -1, -1};
    const void *in[6] = {a, b, io, ss, oo, rs};
    void *outs[1] = {out};
    int i;
    if (!g || !g2) {
        gs_ctx_destroy(ctx);
        return;
    }
    for (i = 0; i < 10; i++) a[i] = 10 * (i / 2) + i % 2;
    for (i = 0; i < 12; i++) b[i] = -1;
    CHECK_OK(gs_eval(g, in, outs));
    CHECK(memcmp(out, want, sizeof want) == 0);
    /* offsets and sizes are data: an update outside a buffer fails naming the device and the operand */
    io[0] = 4;
    CHECK_ERR(gs_eval(g, in, outs), GS_ERR_INVALID_ARG,
              "device 0 sends device 0 rows [4, 6) of its input (input_offsets[0] = 4, send_sizes[0] = 2), which has 5 rows");
    io[0] = 3;
    oo[2] = 5;
    rs[2] = 1;
    ss[2] = 2;
    rs[2] = 2;
    CHECK_ERR(gs_eval(g, in, outs), GS_ERR_INVALID_ARG,
              "device 0 writes rows [5, 7) of device 0's output (output_offsets[2] = 5, send_sizes[2] = 2), which has 6 rows");
    oo[2] = 4;
    rs[2] = 1;
    CHECK_ERR(gs_eval(g, in, outs), GS_ERR_INVALID_ARG, "device 0's recv_sizes[2] = 1, but device 0 sends it send_sizes[2] = 2 rows");
    ss[2] = -1;
    CHECK_ERR(gs_eval(g, in, outs), GS_ERR_INVALID_ARG, "device 0's send_sizes[2] = -1 is negative");
    /* an empty input and updates of no rows: the output operand as it is */
    {
        gs_graph *ge = gst_hlo_parse(ctx, "HloModule empty\nENTRY e {\n  a = f32[0,3] parameter(0)\n  b = f32[2,3] parameter(1)\n"
                                          "  m = s64[2] parameter(2)\n  ROOT r = f32[2,3] ragged-all-to-all(a, b, m, m, m, m)\n}\n");
        static const float eb[6] = {1, 2, 3, 4, 5, 6};
        static const int64_t zero[2] = {0, 0};
        float eo[6];
        const void *ein[3] = {NULL, eb, zero};
        void *eout[1] = {eo};
        if (ge) {
            CHECK_OK(gs_eval(ge, ein, eout));
            CHECK(memcmp(eo, eb, sizeof eb) == 0);
        }
    }
    /* a group of two partitions cannot run on the interpreter's one (gs_eval runs partition 0 of 1) */
    {
        gs_result r = gs_eval(g2, in, outs);
        CHECK_MSG(r == GS_ERR_INVALID_ARG && strstr(gs_ctx_error_msg(ctx), "partition 1 is out of range for 1 partitions"),
                  "%s: %s", gs_result_str(r), gs_ctx_error_msg(ctx));
    }
    gs_ctx_destroy(ctx);
}

/* ---- the runtime ---- */

/* jax.lax.ragged_all_to_all's docstring example (2 devices): results [1, 3, 0, 0] and [2, 2, 4, 0] */
static void test_ragged_runtime_two(void) {
    static const char *text =
        "HloModule jax, num_partitions=2\n"
        "\n"
        "ENTRY e {\n"
        "  a = f32[3] parameter(0)\n"
        "  b = f32[4] parameter(1)\n"
        "  io = s32[2] parameter(2)\n"
        "  ss = s32[2] parameter(3)\n"
        "  oo = s32[2] parameter(4)\n"
        "  rs = s32[2] parameter(5)\n"
        "  ROOT r = f32[4] ragged-all-to-all(a, b, io, ss, oo, rs), channel_id=1, replica_groups={{0,1}}\n"
        "}\n";
    static const float a0[3] = {1, 2, 2}, a1[3] = {3, 4, 0}, zeros[4] = {0, 0, 0, 0};
    static const int32_t io0[2] = {0, 1}, ss0[2] = {1, 2}, oo0[2] = {0, 0}, rs0[2] = {1, 1};
    static const int32_t io1[2] = {0, 1}, ss1[2] = {1, 1}, oo1[2] = {1, 2}, rs1[2] = {2, 1};
    static const float want0[4] = {1, 3, 0, 0}, want1[4] = {2, 2, 4, 0};
    int variant;
    for (variant = 0; variant < RG_VARIANTS; variant++) {
        gs_ctx *ctx = gst_ctx();
        gs_graph *g = gst_hlo_parse(ctx, text);
        gs_runtime *rt = rg_runtime(ctx, 2, variant);
        float o0[4], o1[4];
        const void *in[12] = {a0, zeros, io0, ss0, oo0, rs0, a1, zeros, io1, ss1, oo1, rs1};
        void *out[2] = {o0, o1};
        gs_runtime_stats st;
        if (g && rt) {
            CHECK_OK(gs_runtime_run(rt, g, in, out));
            CHECK_MSG(memcmp(o0, want0, sizeof want0) == 0, "variant %d: device 0 [%g %g %g %g]", variant, o0[0], o0[1], o0[2], o0[3]);
            CHECK_MSG(memcmp(o1, want1, sizeof want1) == 0, "variant %d: device 1 [%g %g %g %g]", variant, o1[0], o1[1], o1[2], o1[3]);
            /* bytes: device 0 sends 2 rows to device 1 and receives 1 row from it (4-byte rows) */
            CHECK_OK(gs_runtime_get_stats(rt, &st));
            CHECK(st.n_collectives == 1 && st.collectives[0].bytes_sent == (2 + 1) * 4);
        }
        gs_runtime_destroy(rt);
        gs_ctx_destroy(ctx);
    }
}

/* 4 devices, one group, rows of 2 elements, uneven sizes with zeros (device 1 sends nothing to 2 or 3; device
   0 to 1), written on an output of -1s; row r of device s's input holds (10 s + r, 10 s + r + 0.5). By hand:
     device 0 gets  0 (from 0), 10, 11 (from 1), 30 (from 3), and one row left as written
     device 1 gets 12 (from 1), 20, 21, 22 (from 2), 31 (from 3)
     device 2 gets  1, 2 (from 0), 23 (from 2), 32 (from 3)
     device 3 gets  3 (from 0), 24 (from 2), 33, 34 (from 3)
   The same run in two layouts of the metadata: s32[4] and s64[2,2] (row-major: the same 4 updates). */
static void test_ragged_runtime_four(void) {
    static const int64_t S[4][4] = {{1, 0, 2, 1}, {2, 1, 0, 0}, {0, 3, 1, 1}, {1, 1, 1, 2}};
    static const float want_rows[4][5] = {{0, 10, 11, 30, -1}, {12, 20, 21, 22, 31}, {1, 2, 23, 32, -1}, {3, 24, 33, 34, -1}};
    static const char *fmt =
        "HloModule four, num_partitions=4\n"
        "\n"
        "ENTRY e {\n"
        "  a = f32[6,2] parameter(0)\n"
        "  b = f32[5,2] parameter(1)\n"
        "  io = %s parameter(2)\n"
        "  ss = %s parameter(3)\n"
        "  oo = %s parameter(4)\n"
        "  rs = %s parameter(5)\n"
        "  ROOT r = f32[5,2] ragged-all-to-all(a, b, io, ss, oo, rs), channel_id=1, replica_groups={{0,1,2,3}}\n"
        "}\n";
    float a[4][12], b[10], out[4][10];
    int64_t meta[4][4][4];   /* device, operand (io, ss, oo, rs), entry */
    int32_t meta32[4][4][4];
    int s, t, layout, variant, i;
    for (i = 0; i < 10; i++) b[i] = -1;
    for (s = 0; s < 4; s++) {
        int64_t at = 0;
        for (i = 0; i < 6; i++) {
            a[s][2 * i] = (float)(10 * s + i);
            a[s][2 * i + 1] = (float)(10 * s + i) + 0.5f;
        }
        for (t = 0; t < 4; t++) {
            int64_t o = 0, q;
            for (q = 0; q < s; q++) o += S[q][t];   /* receiver t keeps its senders in order */
            meta[s][0][t] = at;
            meta[s][1][t] = S[s][t];
            meta[s][2][t] = o;
            meta[s][3][t] = S[t][s];
            at += S[s][t];
        }
        for (t = 0; t < 16; t++) meta32[s][t / 4][t % 4] = (int32_t)meta[s][t / 4][t % 4];
    }
    for (layout = 0; layout < 2; layout++)
        for (variant = 0; variant < RG_VARIANTS; variant++) {
            gs_ctx *ctx = gst_ctx();
            char text[1024];
            const char *ms = layout ? "s64[2,2]" : "s32[4]";
            gs_graph *g;
            gs_runtime *rt = rg_runtime(ctx, 4, variant);
            const void *in[24];
            void *outs[4];
            snprintf(text, sizeof text, fmt, ms, ms, ms, ms);
            g = gst_hlo_parse(ctx, text);
            for (s = 0; s < 4; s++) {
                in[6 * s] = a[s];
                in[6 * s + 1] = b;
                for (i = 0; i < 4; i++) in[6 * s + 2 + i] = layout ? (const void *)meta[s][i] : (const void *)meta32[s][i];
                outs[s] = out[s];
            }
            if (g && rt) {
                CHECK_OK(gs_runtime_run(rt, g, in, outs));
                for (s = 0; s < 4; s++)
                    for (i = 0; i < 5; i++) {
                        float w = want_rows[s][i];
                        CHECK_MSG(out[s][2 * i] == w && out[s][2 * i + 1] == (w < 0 ? -1.0f : w + 0.5f),
                                  "layout %d variant %d: device %d row %d is (%g, %g), expected %g", layout, variant, s, i,
                                  out[s][2 * i], out[s][2 * i + 1], w);
                    }
            }
            gs_runtime_destroy(rt);
            gs_ctx_destroy(ctx);
        }
}

/* two groups of 2 ({0,2}, {3,1}) with two updates per member (K = 4: entries 0-1 go to the group's first member,
   2-3 to its second), on bf16 rows. Device d's input is (d, d + 0.5, d + 0.25, d + 0.75); every device sends row 0
   and rows [1, 3) to the first member, row 3 and nothing (an empty update at the end of the input) to the second.
   The first member lays out its own 3 rows at 0 and the other's at 3; the second member the first's row at 0 and
   its own at 2, the rest of its output left at -1. */
static void test_ragged_runtime_groups(void) {
    static const char *text =
        "HloModule groups, num_partitions=4\n"
        "\n"
        "ENTRY e {\n"
        "  a = bf16[4] parameter(0)\n"
        "  b = bf16[6] parameter(1)\n"
        "  io = s32[4] parameter(2)\n"
        "  ss = s32[4] parameter(3)\n"
        "  oo = s32[4] parameter(4)\n"
        "  rs = s32[4] parameter(5)\n"
        "  ROOT r = bf16[6] ragged-all-to-all(a, b, io, ss, oo, rs), channel_id=1, replica_groups={{0,2},{3,1}}\n"
        "}\n";
    static const int32_t io[4] = {0, 1, 3, 4}, ss[4] = {1, 2, 1, 0};
    /* a sender gives the receivers' offsets: the first member's updates land at 0, 1 (first) and 0 (second), the
       second member's at 3, 4 and 2; a receiver expects sizes (1, 2, 1, 2) as first, (1, 0, 1, 0) as second */
    static const int32_t oo_first[4] = {0, 1, 0, 5}, oo_second[4] = {3, 4, 2, 5};
    static const int32_t rs_first[4] = {1, 2, 1, 2}, rs_second[4] = {1, 0, 1, 0};
    static const float add[4] = {0, 0.5f, 0.25f, 0.75f};
    uint16_t a[4][4], b[6], out[4][6];
    int d, i, variant;
    for (i = 0; i < 6; i++) b[i] = gs_f32_to_bf16(-1.0f);
    for (d = 0; d < 4; d++)
        for (i = 0; i < 4; i++) a[d][i] = gs_f32_to_bf16((float)d + add[i]);
    for (variant = 0; variant < RG_VARIANTS; variant++) {
        gs_ctx *ctx = gst_ctx();
        gs_graph *g = gst_hlo_parse(ctx, text);
        gs_runtime *rt = rg_runtime(ctx, 4, variant);
        const void *in[24];
        void *outs[4];
        for (d = 0; d < 4; d++) {
            bool first = d == 0 || d == 3;
            in[6 * d] = a[d];
            in[6 * d + 1] = b;
            in[6 * d + 2] = io;
            in[6 * d + 3] = ss;
            in[6 * d + 4] = first ? oo_first : oo_second;
            in[6 * d + 5] = first ? rs_first : rs_second;
            outs[d] = out[d];
        }
        if (g && rt) {
            CHECK_OK(gs_runtime_run(rt, g, in, outs));
            for (d = 0; d < 4; d++) {
                int other = d == 0 ? 2 : d == 2 ? 0 : d == 3 ? 1 : 3;
                float want[6], got;
                if (d == 0 || d == 3) {
                    for (i = 0; i < 3; i++) {
                        want[i] = (float)d + add[i];
                        want[3 + i] = (float)other + add[i];
                    }
                } else {
                    want[0] = (float)other + 0.75f;
                    want[2] = (float)d + 0.75f;
                    want[1] = want[3] = want[4] = want[5] = -1;
                }
                for (i = 0; i < 6; i++) {
                    got = gs_bf16_to_f32(out[d][i]);
                    CHECK_MSG(got == want[i], "variant %d: device %d element %d is %g, expected %g", variant, d, i, got, want[i]);
                }
            }
        }
        gs_runtime_destroy(rt);
        gs_ctx_destroy(ctx);
    }
}

/* an update outside a buffer fails the run naming the device and the operand, in every mode (and nothing is
   written outside a buffer: the sanitizer builds run this too) */
static void test_ragged_runtime_bounds(void) {
    static const char *text =
        "HloModule oob, num_partitions=2\n"
        "\n"
        "ENTRY e {\n"
        "  a = f32[3] parameter(0)\n"
        "  b = f32[4] parameter(1)\n"
        "  io = s32[2] parameter(2)\n"
        "  ss = s32[2] parameter(3)\n"
        "  oo = s32[2] parameter(4)\n"
        "  rs = s32[2] parameter(5)\n"
        "  ROOT r = f32[4] ragged-all-to-all(a, b, io, ss, oo, rs), channel_id=1, replica_groups={{0,1}}\n"
        "}\n";
    static const float a[3] = {1, 2, 3}, zeros[4] = {0, 0, 0, 0};
    static const int32_t io0[2] = {0, 1}, ss0[2] = {1, 2}, oo0[2] = {0, 0}, rs0[2] = {1, 1};
    static const int32_t io1_bad[2] = {0, 2}, io1[2] = {0, 1}, ss1[2] = {1, 2}, oo1_bad[2] = {1, 3}, oo1[2] = {1, 2};
    static const int32_t rs1[2] = {2, 2}, rs1_bad[2] = {2, 1};
    static const struct {
        const int32_t *io1, *oo1, *rs1;
        const char *part;
    } cases[] = {
        {io1_bad, oo1, rs1, "device 1 sends device 1 rows [2, 4) of its input (input_offsets[1] = 2, send_sizes[1] = 2), which has 3 rows"},
        {io1, oo1_bad, rs1, "device 1 writes rows [3, 5) of device 1's output (output_offsets[1] = 3, send_sizes[1] = 2), which has 4 rows"},
        {io1, oo1, rs1_bad, "device 1's recv_sizes[1] = 1, but device 1 sends it send_sizes[1] = 2 rows"},
    };
    int c, variant;
    for (c = 0; c < 3; c++)
        for (variant = 0; variant < RG_VARIANTS; variant++) {
            gs_ctx *ctx = gst_ctx();
            gs_graph *g = gst_hlo_parse(ctx, text);
            gs_runtime *rt = rg_runtime(ctx, 2, variant);
            float o0[4], o1[4];
            const void *in[12] = {a, zeros, io0, ss0, oo0, rs0, a, zeros, cases[c].io1, ss1, cases[c].oo1, cases[c].rs1};
            void *out[2] = {o0, o1};
            if (g && rt) {
                gs_result r = gs_runtime_run(rt, g, in, out);
                CHECK_MSG(r == GS_ERR_INVALID_ARG, "case %d variant %d: %s", c, variant, gs_result_str(r));
                CHECK_MSG(strstr(gs_ctx_error_msg(ctx), cases[c].part) != NULL, "case %d variant %d: '%s' lacks '%s'", c,
                          variant, gs_ctx_error_msg(ctx), cases[c].part);
            }
            gs_runtime_destroy(rt);
            gs_ctx_destroy(ctx);
        }
}

/* ---- propagation, partitioner, cost ---- */

/* a manual region (shard_map): each device's block of x is its input; the metadata comes from partition-id
   tables; each device sends the rows it is told to (see test_ragged_partition) */
static const char *rg_region =
    "HloModule sm, num_partitions=2\n"
    "\n"
    "ENTRY e {\n"
    "  x = f32[6] parameter(0), sharding={devices=[2]0,1}\n"
    "  a = f32[3] custom-call(x), custom_call_target=\"SPMDFullToShardShape\", sharding={manual}\n"
    "  p = u32[] partition-id()\n"
    "  i = s32[] convert(p)\n"
    "  z = s32[] constant(0)\n"
    "  c = f32[] constant(-1)\n"
    "  b = f32[4] broadcast(c), dimensions={}\n"
    "  t = s32[2,4,2] constant({{{0,1},{1,2},{0,0},{1,1}}, {{0,1},{1,1},{1,2},{2,1}}})\n"
    "  m2 = s32[1,4,2] dynamic-slice(t, i, z, z), dynamic_slice_sizes={1,4,2}\n"
    "  m = s32[4,2] reshape(m2)\n"
    "  io2 = s32[1,2] slice(m), slice={[0:1], [0:2]}\n"
    "  ss2 = s32[1,2] slice(m), slice={[1:2], [0:2]}\n"
    "  oo2 = s32[1,2] slice(m), slice={[2:3], [0:2]}\n"
    "  rs2 = s32[1,2] slice(m), slice={[3:4], [0:2]}\n"
    "  io = s32[2] reshape(io2)\n"
    "  ss = s32[2] reshape(ss2)\n"
    "  oo = s32[2] reshape(oo2)\n"
    "  rs = s32[2] reshape(rs2)\n"
    "  r = f32[4] ragged-all-to-all(a, b, io, ss, oo, rs), replica_groups={{0,1}}, channel_id=1, sharding={manual}\n"
    "  ROOT y = f32[8] custom-call(r), custom_call_target=\"SPMDShardToFullShape\", sharding={devices=[2]0,1}\n"
    "}\n";

/* a manual region (shard_map): each device's block of x is its input; the metadata comes from partition-id
   tables; the program is partitioned, run on 2 devices and compared with the reference (each manual region run
   once per device); outside a manual region, and without channel_id, the partitioner refuses it by name */
static void test_ragged_partition(void) {
    static const char *outside =
        "HloModule out, num_partitions=2\n"
        "\n"
        "ENTRY e {\n"
        "  a = f32[3] parameter(0), sharding={replicated}\n"
        "  b = f32[4] parameter(1)\n"
        "  m = s32[2] parameter(2)\n"
        "  ROOT r = f32[4] ragged-all-to-all(a, b, m, m, m, m), replica_groups={{0,1}}\n"
        "}\n";
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx, rg_region), *g2 = gst_hlo_parse(ctx, outside), *spmd = NULL;
    gs_partition_desc pd;
    gs_runtime *rt = rg_runtime(ctx, 2, 0);
    gs_propagate_desc pr;
    float x[6] = {1, 2, 3, 4, 5, 6}, y[8];
    /* device 0 keeps x[0] and gets device 1's first row (x[3]); device 1 gets x[1], x[2] from 0, its own x[4] */
    static const float want[8] = {1, 4, -1, -1, 2, 3, 5, -1};
    gs_shape xs, ys;
    const gs_sharding *xsh, *ysh;
    const void *in[1] = {x};
    void *out[1] = {y};
    if (!g || !g2 || !rt) {
        gs_runtime_destroy(rt);
        gs_ctx_destroy(ctx);
        return;
    }
    memset(&pd, 0, sizeof pd);
    pd.num_devices = 2;
    CHECK_OK(gs_partition(g, &pd, &spmd));
    if (spmd) {
        xs = gs_value_shape(gs_graph_param(g, 0));
        ys = gs_graph_output_shape(g, 0);
        xsh = gs_partition_param_sharding(spmd, 0);
        ysh = gs_partition_output_sharding(spmd, 0);
        CHECK_OK(gs_runtime_run_global(rt, spmd, &xs, &xsh, in, &ys, &ysh, out));
        CHECK_MSG(memcmp(y, want, sizeof want) == 0, "[%g %g %g %g | %g %g %g %g]", y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7]);
    }
    /* propagation: a replicated operand makes it replicated (XLA infers no tiling for it) */
    memset(&pr, 0, sizeof pr);
    pr.num_devices = 2;
    CHECK_OK(gs_propagate(g2, &pr));
    CHECK(gs_sharding_get_kind(gs_value_sharding(gs_graph_find(g2, "r"))) == GS_SHARDING_REPLICATED);
    /* on a replicated value without channel_id: XLA reads it across replicas; refused by name */
    spmd = NULL;
    CHECK_ERR(gs_partition(g2, &pd, &spmd), GS_ERR_SHARDING, "r: ragged-all-to-all outside a manual region without channel_id");
    gs_runtime_destroy(rt);
    gs_ctx_destroy(ctx);
}

/* the cost: an all-to-all whose every device receives its whole output (the sizes are data): on a ring of 4,
   each device sends 3/4 of its output buffer */
static void test_ragged_cost(void) {
    static const char *text =
        "HloModule c, num_partitions=4\n"
        "\n"
        "ENTRY e {\n"
        "  a = f32[64,128] parameter(0)\n"
        "  b = f32[256,128] parameter(1)\n"
        "  m = s32[4] parameter(2)\n"
        "  ROOT r = f32[256,128] ragged-all-to-all(a, b, m, m, m, m), channel_id=1, replica_groups={{0,1,2,3}}\n"
        "}\n";
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx, text);
    gs_topology_desc d;
    gs_topology *t = NULL;
    gs_cost_report *rep = NULL;
    const gs_cost_row *r;
    int i;
    memset(&d, 0, sizeof d);
    d.chip = gs_chip_find("v5e");
    d.mesh_rank = 1;
    d.mesh[0] = 4;
    d.wrap = GS_WRAP_AUTO;
    CHECK_OK(gs_topology_create(ctx, &d, &t));
    if (g && t) CHECK_OK(gs_cost_program(g, t, &rep));
    for (i = 0; rep && i < gs_cost_report_num_rows(rep); i++) {
        r = gs_cost_report_row(rep, i);
        if (gs_value_op(r->value) != GS_OP_RAGGED_ALL_TO_ALL) continue;
        CHECK_NEAR(r->ici_bytes, 0.75 * 256 * 128 * 4, 1e-6);
        CHECK_MSG(r->group_size == 4 && r->t_ici > 0, "group %lld t_ici %g", (long long)r->group_size, r->t_ici);
    }
    CHECK(rep != NULL);
    gs_ctx_destroy(ctx);
}

/* the command line: run --check of the manual region (its reference runs the region once per device), run --spmd
   of the JAX docstring example, and a verifier error with exit 2 and line:column */
static void test_ragged_cli(void) {
    static const char *jax =
        "HloModule jax, num_partitions=2\n"
        "ENTRY e {\n"
        "  p = u32[] partition-id()\n"
        "  i = s32[] convert(p)\n"
        "  z = s32[] constant(0)\n"
        "  t = f32[2,3] constant({{1,2,2},{3,4,0}})\n"
        "  a2 = f32[1,3] dynamic-slice(t, i, z), dynamic_slice_sizes={1,3}\n"
        "  a = f32[3] reshape(a2)\n"
        "  c = f32[] constant(0)\n"
        "  b = f32[4] broadcast(c), dimensions={}\n"
        "  tm = s32[2,4,2] constant({{{0,1},{1,2},{0,0},{1,1}}, {{0,1},{1,1},{1,2},{2,1}}})\n"
        "  m2 = s32[1,4,2] dynamic-slice(tm, i, z, z), dynamic_slice_sizes={1,4,2}\n"
        "  m = s32[4,2] reshape(m2)\n"
        "  io2 = s32[1,2] slice(m), slice={[0:1], [0:2]}\n"
        "  ss2 = s32[1,2] slice(m), slice={[1:2], [0:2]}\n"
        "  oo2 = s32[1,2] slice(m), slice={[2:3], [0:2]}\n"
        "  rs2 = s32[1,2] slice(m), slice={[3:4], [0:2]}\n"
        "  io = s32[2] reshape(io2)\n"
        "  ss = s32[2] reshape(ss2)\n"
        "  oo = s32[2] reshape(oo2)\n"
        "  rs = s32[2] reshape(rs2)\n"
        "  ROOT r = f32[4] ragged-all-to-all(a, b, io, ss, oo, rs), channel_id=1, replica_groups={{0,1}}\n"
        "}\n";
    static const char *const files[3] = {"region.hlo", "jax.hlo", "bad.hlo"};
    char dir[] = "/tmp/gst_raggedXXXXXX", path[256];
    const char *texts[3];
    int k;
    if (!mkdtemp(dir)) {
        CHECK_MSG(0, "mkdtemp failed");
        return;
    }
    texts[0] = rg_region;
    texts[1] = jax;
    texts[2] = "HloModule bad\nENTRY e {\n  a = f32[4] parameter(0)\n  m = s32[2,2,2] parameter(1)\n"
               "  ROOT r = f32[4] ragged-all-to-all(a, a, m, m, m, m)\n}\n";
    for (k = 0; k < 3; k++) {
        FILE *f;
        snprintf(path, sizeof path, "%s/%s", dir, files[k]);
        if (!(f = fopen(path, "w"))) continue;
        fputs(texts[k], f);
        fclose(f);
    }
    CHECK_EQ_INT(gst_cli(dir, "run %s/region.hlo --devices 2 --check --seed 5", dir), 0);
    CHECK_MSG(strstr(gst_cli_out, "check: ok, 8 elements match the reference") != NULL, "%s", gst_cli_out);
    CHECK_EQ_INT(gst_cli(dir, "run --spmd %s/jax.hlo --devices 2 --lockstep", dir), 0);
    CHECK_MSG(strstr(gst_cli_out, "dev0_out0: f32[4]\n  [1, 3, 0, 0]") && strstr(gst_cli_out, "dev1_out0: f32[4]\n  [2, 2, 4, 0]"),
              "%s", gst_cli_out);
    CHECK_EQ_INT(gst_cli(dir, "print %s/bad.hlo", dir), 2);
    CHECK_MSG(strstr(gst_cli_err, "line 5, column 8: ragged-all-to-all r: operand 2 (input_offsets, m) must be rank 1 or 2") != NULL,
              "%s", gst_cli_err);
    {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        CHECK(system(cmd) == 0);
    }
}

void suite_ragged_a2a(void) {
    RUN(test_ragged_text);
    RUN(test_ragged_text_errors);
    RUN(test_ragged_interp);
    RUN(test_ragged_runtime_two);
    RUN(test_ragged_runtime_four);
    RUN(test_ragged_runtime_groups);
    RUN(test_ragged_runtime_bounds);
    RUN(test_ragged_partition);
    RUN(test_ragged_cost);
    RUN(test_ragged_cli);
}
