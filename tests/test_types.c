/* test_types.c - XLA's element types: names and sizes, HLO text shapes and literals, the narrow float formats
   (bit patterns computed by hand from each format's definition), convert between types with XLA's semantics,
   exact 64-bit integer arithmetic, and partitioned programs on the new types checked against the reference
   interpreter. */
#include "test.h"
#include "spmd_case.h"

static uint64_t bits_u64(double x) {
    uint64_t u;
    memcpy(&u, &x, 8);
    return u;
}

/* Parses text, evaluates its ENTRY on inputs, copies output 0 (storage format) to out. */
static bool eval_text(const char *text, const void *const *inputs, void *out, size_t cap) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = NULL;
    gs_shape s;
    void *outs[1];
    void *buf;
    bool ok = false;
    if (gs_hlo_parse(ctx, text, strlen(text), &g) != GS_OK) {
        gst_failf(__FILE__, __LINE__, "parse: %s\n%s", gs_ctx_error_msg(ctx), text);
        gs_ctx_destroy(ctx);
        return false;
    }
    s = gs_graph_output_shape(g, 0);
    buf = malloc(gs_shape_bytes(&s) + 16);
    outs[0] = buf;
    if (gs_eval(g, inputs, outs) != GS_OK) {
        gst_failf(__FILE__, __LINE__, "eval: %s\n%s", gs_ctx_error_msg(ctx), text);
    } else if (gs_shape_bytes(&s) > cap) {
        gst_failf(__FILE__, __LINE__, "output too large");
    } else {
        memcpy(out, buf, gs_shape_bytes(&s));
        ok = true;
    }
    free(buf);
    gs_ctx_destroy(ctx);
    return ok;
}

static void test_types_names_sizes(void) {
    static const struct { const char *name; size_t size; } want[] = {
        {"f32", 4}, {"bf16", 2}, {"s32", 4}, {"u32", 4}, {"pred", 1}, {"s8", 1}, {"s16", 2}, {"s64", 8},
        {"u8", 1}, {"u16", 2}, {"u64", 8}, {"f16", 2}, {"f64", 8}, {"s2", 1}, {"s4", 1}, {"u2", 1}, {"u4", 1},
        {"f8e5m2", 1}, {"f8e4m3fn", 1}, {"f8e4m3", 1}, {"f8e4m3fnuz", 1}, {"f8e4m3b11fnuz", 1},
        {"f8e5m2fnuz", 1}, {"f8e3m4", 1}, {"f4e2m1fn", 1}, {"f8e8m0fnu", 1}, {"c64", 8}, {"c128", 16}, {"token", 0},
    };
    int i;
    /* the first values keep their numbers */
    CHECK_EQ_INT(GS_F32, 1);
    CHECK_EQ_INT(GS_BF16, 2);
    CHECK_EQ_INT(GS_S32, 3);
    CHECK_EQ_INT(GS_U32, 4);
    CHECK_EQ_INT(GS_PRED, 5);
    CHECK_EQ_INT(GS_TUPLE, 6);
    for (i = 0; i < (int)(sizeof want / sizeof want[0]); i++) {
        gs_dtype t = gs_dtype_from_name(want[i].name);
        CHECK_MSG(t != GS_DTYPE_INVALID, "%s unknown", want[i].name);
        CHECK_MSG(strcmp(gs_dtype_name(t), want[i].name) == 0, "%s named %s", want[i].name, gs_dtype_name(t));
        CHECK_MSG(gs_dtype_size(t) == want[i].size, "%s: size %zu, expected %zu", want[i].name, gs_dtype_size(t),
                  want[i].size);
    }
    CHECK_EQ_INT(GS_DTYPE_COUNT, 31);   /* every type above, tuple and invalid */
    CHECK_EQ_INT(gs_dtype_from_name("tuple"), GS_DTYPE_INVALID);
    CHECK_EQ_INT(gs_dtype_from_name("f65"), GS_DTYPE_INVALID);
    CHECK_EQ_INT(gs_dtype_from_name(NULL), GS_DTYPE_INVALID);
}

static void test_types_text_shapes(void) {
    const char *text =
        "HloModule m, entry_computation_layout={()->f32[]}\n\n"
        "ENTRY e {\n"
        "  a = s64[4]{0} parameter(0)\n"
        "  b = f64[] parameter(1)\n"
        "  c = u8[2,3]{1,0} parameter(2)\n"
        "  d = c64[8]{0} parameter(3)\n"
        "  t = token[] parameter(4)\n"
        "  f = f8e4m3fn[2] parameter(5)\n"
        "  h = (s4[2], u2[], f8e5m2fnuz[1], c128[], f4e2m1fn[3]) parameter(6)\n"
        "  ROOT r = f32[] constant(1)\n"
        "}\n";
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = NULL;
    const char *out;
    gs_shape s;
    CHECK_OK(gs_hlo_parse(ctx, text, strlen(text), &g));
    if (!g) {
        fprintf(stderr, "%s\n", gs_ctx_error_msg(ctx));
        gs_ctx_destroy(ctx);
        return;
    }
    s = gs_value_shape(gs_graph_find(g, "a"));
    CHECK_EQ_INT(s.dtype, GS_S64);
    CHECK_EQ_INT(s.dims[0], 4);
    CHECK_EQ_INT(gs_value_shape(gs_graph_find(g, "b")).dtype, GS_F64);
    CHECK_EQ_INT(gs_value_shape(gs_graph_find(g, "d")).dtype, GS_C64);
    CHECK_EQ_INT(gs_shape_bytes(&s), 32);
    s = gs_value_shape(gs_graph_find(g, "t"));
    CHECK_EQ_INT(s.dtype, GS_TOKEN);
    CHECK_EQ_INT(gs_shape_bytes(&s), 0);
    CHECK_EQ_INT(gs_value_tuple_size(gs_graph_find(g, "h")), 5);
    CHECK_EQ_INT(gs_value_tuple_shape(gs_graph_find(g, "h"), 2).dtype, GS_F8E5M2FNUZ);
    out = gs_hlo_print(g);
    CHECK(out && strstr(out, "a = s64[4] parameter(0)"));
    CHECK(out && strstr(out, "b = f64[] parameter(1)"));
    CHECK(out && strstr(out, "c = u8[2,3] parameter(2)"));
    CHECK(out && strstr(out, "d = c64[8] parameter(3)"));
    CHECK(out && strstr(out, "t = token[] parameter(4)"));
    CHECK(out && strstr(out, "f = f8e4m3fn[2] parameter(5)"));
    CHECK(out && strstr(out, "h = (s4[2], u2[], f8e5m2fnuz[1], c128[], f4e2m1fn[3]) parameter(6)"));
    gs_ctx_destroy(ctx);
}

/* constant(lit) of type ty printed back exactly as want */
static void check_literal(const char *ty, const char *lit, const char *want) {
    char text[512], line[256];
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = NULL;
    const char *out;
    snprintf(text, sizeof text, "HloModule m\n\nENTRY e {\n  ROOT c = %s constant(%s)\n}\n", ty, lit);
    snprintf(line, sizeof line, "ROOT c = %s constant(%s)", ty, want);
    if (gs_hlo_parse(ctx, text, strlen(text), &g) != GS_OK) {
        gst_failf(__FILE__, __LINE__, "%s constant(%s): %s", ty, lit, gs_ctx_error_msg(ctx));
    } else {
        out = gs_hlo_print(g);
        CHECK_MSG(out && strstr(out, line), "printed\n%s\nexpected the line %s", out ? out : "", line);
    }
    gs_ctx_destroy(ctx);
}

static void check_literal_error(const char *ty, const char *lit, const char *part) {
    char text[512];
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = NULL;
    snprintf(text, sizeof text, "HloModule m\n\nENTRY e {\n  ROOT c = %s constant(%s)\n}\n", ty, lit);
    CHECK_MSG(gs_hlo_parse(ctx, text, strlen(text), &g) != GS_OK, "%s constant(%s) parsed", ty, lit);
    CHECK_MSG(strstr(gs_ctx_error_msg(ctx), part) != NULL, "message '%s' lacks '%s'", gs_ctx_error_msg(ctx), part);
    gs_ctx_destroy(ctx);
}

static void test_types_literals(void) {
    check_literal("s64[2]", "{-9223372036854775808, 9223372036854775807}", "{-9223372036854775808, 9223372036854775807}");
    check_literal("u64[]", "18446744073709551615", "18446744073709551615");
    check_literal("s8[3]", "{-128, 127, 0}", "{-128, 127, 0}");
    check_literal("s4[3]", "{-8, 7, -1}", "{-8, 7, -1}");
    check_literal("u2[2]", "{3, 0}", "{3, 0}");
    check_literal("f64[]", "0.1", "0.1");
    check_literal("f64[]", "1e300", "1e+300");
    check_literal("f16[3]", "{65504, 0.1, -inf}", "{65504, 0.1, -inf}");
    check_literal("f8e4m3fn[3]", "{448, 0.1, nan}", "{448, 0.1, nan}");
    check_literal("f8e4m3fn[]", "500", "nan");            /* rounds above 448: NaN (no inf) */
    check_literal("f8e5m2[]", "0.1", "0.09");   /* 0.09375 = 1.5 * 2^-4, the shortest text that reads back to it */
    check_literal("f4e2m1fn[4]", "{0.25, 0.75, 5, 7}", "{0, 1, 4, 6}");   /* ties to even; saturates at 6 */
    check_literal("f8e8m0fnu[2]", "{1, 3}", "{1, 4}");
    check_literal("c64[2]", "{(1, 2), (-0.5, 3.25)}", "{(1, 2), (-0.5, 3.25)}");
    check_literal("c128[]", "(0.1, -1e-300)", "(0.1, -1e-300)");
    check_literal("pred[2]", "{true, false}", "{true, false}");
    check_literal_error("s8[]", "128", "out of range for s8");
    check_literal_error("s4[]", "-9", "out of range for s4");
    check_literal_error("u8[]", "-1", "out of range for u8");
    check_literal_error("u64[]", "18446744073709551616", "out of range for u64");
    check_literal_error("s64[]", "9223372036854775808", "out of range for s64");
    check_literal_error("c64[]", "1", "expected '('");
    check_literal_error("token[]", "1", "token");
}

/* convert f32 -> ty of the given values; the output bit patterns (1 byte, or 2 for f16) must be want */
static void check_encode(const char *ty, int n, const float *x, const unsigned *want) {
    char text[512];
    unsigned char out[64];
    const void *in[1];
    int i, w = strcmp(ty, "f16") == 0 ? 2 : 1;
    snprintf(text, sizeof text, "HloModule m\n\nENTRY e {\n  x = f32[%d] parameter(0)\n  ROOT c = %s[%d] convert(x)\n}\n",
             n, ty, n);
    in[0] = x;
    if (!eval_text(text, in, out, sizeof out)) return;
    for (i = 0; i < n; i++) {
        unsigned got = w == 2 ? (unsigned)(out[2 * i] | (out[2 * i + 1] << 8)) : out[i];
        CHECK_MSG(got == want[i], "%s(%.9g) = 0x%x, expected 0x%x", ty, (double)x[i], got, want[i]);
    }
}

static void test_types_narrow_floats(void) {
    float inf = INFINITY, nan = NAN;
    /* f16: 1 = 0x3C00, max 65504 = 0x7BFF, 65520 is halfway to 2^16 and rounds to inf, 2^-24 is the smallest
       subnormal, -0 keeps its sign */
    { float x[6] = {1.0f, 65504.0f, 65520.0f, 5.9604644775390625e-08f, -0.0f, nan};
      unsigned w[6] = {0x3C00, 0x7BFF, 0x7C00, 0x0001, 0x8000, 0x7E00};
      check_encode("f16", 6, x, w); }
    /* e4m3fn: bias 7; 448 = 1.75 * 2^8 = 0x7E; 464 is the tie between 448 and 480 (not a number here) and goes
       to the even mantissa (448); 470 rounds to 480: NaN; inf -> NaN; 2^-9 = 0x01; -0 = 0x80 */
    { float x[7] = {1.0f, 448.0f, 464.0f, 470.0f, inf, 0.001953125f, -0.0f};
      unsigned w[7] = {0x38, 0x7E, 0x7E, 0x7F, 0x7F, 0x01, 0x80};
      check_encode("f8e4m3fn", 7, x, w); }
    /* e4m3 (IEEE-like): max 240 = 1.875 * 2^7 = 0x77; 256 -> inf 0x78 */
    { float x[3] = {1.0f, 240.0f, 256.0f};
      unsigned w[3] = {0x38, 0x77, 0x78};
      check_encode("f8e4m3", 3, x, w); }
    /* e5m2: 57344 = 1.75 * 2^15 = 0x7B; 65536 -> inf 0x7C; -1 = 0xBC */
    { float x[3] = {57344.0f, 65536.0f, -1.0f};
      unsigned w[3] = {0x7B, 0x7C, 0xBC};
      check_encode("f8e5m2", 3, x, w); }
    /* e4m3fnuz: bias 8; 1 = 0x40; -0 -> 0x00 (no negative zero); NaN = 0x80; 240 = 0x7F; 300 -> NaN */
    { float x[5] = {1.0f, -0.0f, nan, 240.0f, 300.0f};
      unsigned w[5] = {0x40, 0x00, 0x80, 0x7F, 0x80};
      check_encode("f8e4m3fnuz", 5, x, w); }
    /* e4m3b11fnuz: bias 11; 1 = 0x58; max 30 = 0x7F */
    { float x[2] = {1.0f, 30.0f};
      unsigned w[2] = {0x58, 0x7F};
      check_encode("f8e4m3b11fnuz", 2, x, w); }
    /* e5m2fnuz: bias 16; 1 = 0x40; max 57344 = 0x7F */
    { float x[2] = {1.0f, 57344.0f};
      unsigned w[2] = {0x40, 0x7F};
      check_encode("f8e5m2fnuz", 2, x, w); }
    /* e3m4: bias 3; 1 = 0x30; max 15.5 = 1.9375 * 2^3 = 0x6F; 16 -> inf 0x70 */
    { float x[3] = {1.0f, 15.5f, 16.0f};
      unsigned w[3] = {0x30, 0x6F, 0x70};
      check_encode("f8e3m4", 3, x, w); }
    /* e2m1fn: 1 = 0x2, 6 = 0x7, 100 saturates to 6, -0.5 = 0x9, NaN -> 0x8 */
    { float x[5] = {1.0f, 6.0f, 100.0f, -0.5f, nan};
      unsigned w[5] = {0x2, 0x7, 0x7, 0x9, 0x8};
      check_encode("f4e2m1fn", 5, x, w); }
    /* e8m0fnu: 2^(e-127); 1 = 0x7F, 0.5 = 0x7E, NaN and negatives = 0xFF */
    { float x[4] = {1.0f, 0.5f, nan, -2.0f};
      unsigned w[4] = {0x7F, 0x7E, 0xFF, 0xFF};
      check_encode("f8e8m0fnu", 4, x, w); }
}

static void test_types_convert(void) {
    /* f32 -> s8/u8/s64: truncation, saturation, NaN -> 0 */
    { float x[6] = {300.5f, -1e10f, NAN, -7.9f, 127.99f, -128.5f};
      int8_t out[6];
      const void *in[1] = {x};
      if (eval_text("HloModule m\n\nENTRY e {\n  x = f32[6] parameter(0)\n  ROOT c = s8[6] convert(x)\n}\n", in, out,
                    sizeof out)) {
          CHECK_EQ_INT(out[0], 127); CHECK_EQ_INT(out[1], -128); CHECK_EQ_INT(out[2], 0);
          CHECK_EQ_INT(out[3], -7); CHECK_EQ_INT(out[4], 127); CHECK_EQ_INT(out[5], -128);
      } }
    { float x[3] = {-5.0f, 255.9f, 1e6f};
      uint8_t out[3];
      const void *in[1] = {x};
      if (eval_text("HloModule m\n\nENTRY e {\n  x = f32[3] parameter(0)\n  ROOT c = u8[3] convert(x)\n}\n", in, out,
                    sizeof out)) {
          CHECK_EQ_INT(out[0], 0); CHECK_EQ_INT(out[1], 255); CHECK_EQ_INT(out[2], 255);
      } }
    { double x[3] = {1e19, -1e19, 123456789012.75};
      int64_t out[3];
      const void *in[1] = {x};
      if (eval_text("HloModule m\n\nENTRY e {\n  x = f64[3] parameter(0)\n  ROOT c = s64[3] convert(x)\n}\n", in, out,
                    sizeof out)) {
          CHECK(out[0] == INT64_MAX); CHECK(out[1] == INT64_MIN); CHECK(out[2] == 123456789012LL);
      } }
    /* integer -> integer wraps; s4 sign-extends */
    { int32_t x[3] = {200, -129, 0x12345678};
      int8_t out[3];
      const void *in[1] = {x};
      if (eval_text("HloModule m\n\nENTRY e {\n  x = s32[3] parameter(0)\n  ROOT c = s8[3] convert(x)\n}\n", in, out,
                    sizeof out)) {
          CHECK_EQ_INT(out[0], -56); CHECK_EQ_INT(out[1], 127); CHECK_EQ_INT(out[2], 0x78);
      } }
    { int32_t x[3] = {7, 8, -9};
      int8_t out[3];
      const void *in[1] = {x};
      if (eval_text("HloModule m\n\nENTRY e {\n  x = s32[3] parameter(0)\n  ROOT c = s4[3] convert(x)\n}\n", in, out,
                    sizeof out)) {
          CHECK_EQ_INT(out[0], 7); CHECK_EQ_INT(out[1], -8); CHECK_EQ_INT(out[2], 7);
      } }
    /* s64 -> bf16 rounds once: 2^62 + 2^54 + 1 is just above the midpoint between 2^62 and 2^62 + 2^55 (bf16
       has 8 significant bits), so it rounds up; rounding to double first would make a tie and round down */
    { int64_t x[1] = {((int64_t)1 << 62) + ((int64_t)1 << 54) + 1};
      uint16_t out[1];
      const void *in[1] = {x};
      if (eval_text("HloModule m\n\nENTRY e {\n  x = s64[1] parameter(0)\n  ROOT c = bf16[1] convert(x)\n}\n", in, out,
                    sizeof out))
          CHECK_EQ_INT(out[0], 0x5E81);   /* 2^62 * (1 + 2^-7) */ }
    /* f64 -> f32 and f64 -> bf16 round once from the double */
    { double x[2] = {1.0 + 0x1p-24 + 0x1p-40, 1.0 + 0x1p-8 + 0x1p-40};
      float out[2];
      uint16_t outb[2];
      const void *in[1] = {x};
      if (eval_text("HloModule m\n\nENTRY e {\n  x = f64[2] parameter(0)\n  ROOT c = f32[2] convert(x)\n}\n", in, out,
                    sizeof out)) {
          CHECK(out[0] == 1.0f + 0x1p-23f); CHECK(out[1] == (float)(1.0 + 0x1p-8 + 0x1p-40)); }
      if (eval_text("HloModule m\n\nENTRY e {\n  x = f64[2] parameter(0)\n  ROOT c = bf16[2] convert(x)\n}\n", in, outb,
                    sizeof outb)) {
          CHECK_EQ_INT(outb[0], 0x3F80); CHECK_EQ_INT(outb[1], 0x3F81); } }
    /* real -> complex, c64 -> c128, u64 -> f64 */
    { float x[2] = {1.5f, -2.0f};
      double out[4];
      const void *in[1] = {x};
      if (eval_text("HloModule m\n\nENTRY e {\n  x = f32[2] parameter(0)\n  c = c64[2] convert(x)\n"
                    "  ROOT d = c128[2] convert(c)\n}\n", in, out, sizeof out)) {
          CHECK(out[0] == 1.5 && out[1] == 0.0 && out[2] == -2.0 && out[3] == 0.0);
      } }
    { uint64_t x[1] = {UINT64_MAX};
      double out[1];
      const void *in[1] = {x};
      if (eval_text("HloModule m\n\nENTRY e {\n  x = u64[1] parameter(0)\n  ROOT c = f64[1] convert(x)\n}\n", in, out,
                    sizeof out))
          CHECK(out[0] == 18446744073709551616.0); }
    /* complex -> real is refused with a hint */
    { gs_ctx *ctx = gst_ctx();
      gs_graph *g = NULL;
      const char *t = "HloModule m\n\nENTRY e {\n  x = c64[2] parameter(0)\n  ROOT c = f32[2] convert(x)\n}\n";
      CHECK(gs_hlo_parse(ctx, t, strlen(t), &g) != GS_OK);
      CHECK(strstr(gs_ctx_error_msg(ctx), "real or imag") != NULL);
      gs_ctx_destroy(ctx); }
}

static void test_types_int64_exact(void) {
    int64_t a[6] = {((int64_t)1 << 62) + 1, INT64_MIN, 7, -7, INT64_MAX, 5};
    int64_t b[6] = {3, -1, 0, 2, 1, -3};
    int64_t out[6];
    const void *in[2] = {a, b};
    const char *ops[] = {"multiply", "divide", "remainder", "add", "subtract", "maximum", "power"};
    int k, i;
    for (k = 0; k < 7; k++) {
        char text[512];
        snprintf(text, sizeof text,
                 "HloModule m\n\nENTRY e {\n  a = s64[6] parameter(0)\n  b = s64[6] parameter(1)\n"
                 "  ROOT c = s64[6] %s(a, b)\n}\n", ops[k]);
        if (!eval_text(text, in, out, sizeof out)) continue;
        for (i = 0; i < 6; i++) {
            uint64_t ua = (uint64_t)a[i], ub = (uint64_t)b[i], w = 0;
            switch (k) {
            case 0: w = ua * ub; break;
            case 1: w = b[i] == 0 ? ~(uint64_t)0 : (a[i] == INT64_MIN && b[i] == -1) ? ua : (uint64_t)(a[i] / b[i]); break;
            case 2: w = b[i] == 0 ? ua : (a[i] == INT64_MIN && b[i] == -1) ? 0 : (uint64_t)(a[i] % b[i]); break;
            case 3: w = ua + ub; break;
            case 4: w = ua - ub; break;
            case 5: w = a[i] > b[i] ? ua : ub; break;
            default: {   /* naive repeated multiplication; negative exponents give 0 unless the base is 1 */
                int64_t e;
                w = 1;
                if (b[i] < 0) w = a[i] == 1 ? 1 : 0;
                else for (e = 0; e < b[i]; e++) w *= ua;
                break;
            }
            }
            CHECK_MSG((uint64_t)out[i] == w, "%s element %d: %lld, expected %lld", ops[k], i, (long long)out[i],
                      (long long)w);
        }
    }
    /* u8 wraps; compare on s64 is signed, on u64 unsigned */
    { uint8_t x[2] = {250, 3}, y[2] = {10, 5}, o[2];
      const void *in2[2] = {x, y};
      if (eval_text("HloModule m\n\nENTRY e {\n  a = u8[2] parameter(0)\n  b = u8[2] parameter(1)\n"
                    "  ROOT c = u8[2] add(a, b)\n}\n", in2, o, sizeof o)) {
          CHECK_EQ_INT(o[0], 4); CHECK_EQ_INT(o[1], 8); } }
    { int64_t x[1] = {-1}, y[1] = {1};
      uint8_t o[2];
      const void *in2[2] = {x, y};
      if (eval_text("HloModule m\n\nENTRY e {\n  a = s64[1] parameter(0)\n  b = s64[1] parameter(1)\n"
                    "  ROOT c = pred[1] compare(a, b), direction=LT\n}\n", in2, o, 1))
          CHECK_EQ_INT(o[0], 1);
      if (eval_text("HloModule m\n\nENTRY e {\n  a = u64[1] parameter(0)\n  b = u64[1] parameter(1)\n"
                    "  ROOT c = pred[1] compare(a, b), direction=LT\n}\n", in2, o, 1))
          CHECK_EQ_INT(o[0], 0); }
}

static void test_types_float_ops(void) {
    /* f64 is computed in double: 0.1 + 0.2 is 0.30000000000000004 */
    { double x[2] = {0.1, 2.0}, y[2] = {0.2, 0.0}, o[2];
      const void *in[2] = {x, y};
      if (eval_text("HloModule m\n\nENTRY e {\n  a = f64[2] parameter(0)\n  b = f64[2] parameter(1)\n"
                    "  s = f64[2] add(a, b)\n  ROOT q = f64[2] sqrt(s)\n}\n", in, o, sizeof o)) {
          CHECK(bits_u64(o[0]) == bits_u64(sqrt(0.1 + 0.2)));
          CHECK(o[1] == sqrt(2.0)); } }
    /* f16 rounds every result: 2049 is not an f16 (ulp 2 above 2048): 2048 + 1 ties to even 2048 */
    { uint16_t x[1] = {0x6800 /* 2048 */}, y[1] = {0x3C00 /* 1 */}, o[1];
      const void *in[2] = {x, y};
      if (eval_text("HloModule m\n\nENTRY e {\n  a = f16[1] parameter(0)\n  b = f16[1] parameter(1)\n"
                    "  ROOT s = f16[1] add(a, b)\n}\n", in, o, sizeof o))
          CHECK_EQ_INT(o[0], 0x6800); }
    /* reduce over f64 and s64, max over f8e4m3fn (whose identity is the lowest finite value) */
    { double x[4] = {1e16, 1.0, -1e16, 1.0}, o[1];
      const void *in[1] = {x};
      if (eval_text("HloModule m\n\nadd {\n  p = f64[] parameter(0)\n  q = f64[] parameter(1)\n"
                    "  ROOT r = f64[] add(p, q)\n}\n\nENTRY e {\n  x = f64[4] parameter(0)\n  z = f64[] constant(0)\n"
                    "  ROOT r = f64[] reduce(x, z), dimensions={0}, to_apply=add\n}\n", in, o, sizeof o))
          CHECK(o[0] == 1.0);   /* ((0 + 1e16) + 1) + -1e16 + 1 in double: 1e16 + 1 rounds to 1e16 */ }
    { int64_t x[3] = {INT64_MAX, 1, 1}, o[1];
      const void *in[1] = {x};
      if (eval_text("HloModule m\n\nadd {\n  p = s64[] parameter(0)\n  q = s64[] parameter(1)\n"
                    "  ROOT r = s64[] add(p, q)\n}\n\nENTRY e {\n  x = s64[3] parameter(0)\n  z = s64[] constant(0)\n"
                    "  ROOT r = s64[] reduce(x, z), dimensions={0}, to_apply=add\n}\n", in, o, sizeof o))
          CHECK(o[0] == INT64_MIN + 1); }
}

/* A partitioned program on type ty (elementwise op, a reduction over a split dim, with uneven splits) agrees
   with the reference interpreter. */
static void check_partitioned(const char *ty, const char *op, int64_t D) {
    char body[1024];
    gst_case h;
    snprintf(body, sizeof body,
             "  a = %s[7,5] parameter(0), sharding={devices=[%lld,1]<=[%lld]}\n"
             "  b = %s[7,5] parameter(1), sharding={devices=[1,%lld]<=[%lld]}\n"
             "  c = %s[7,5] %s(a, b)\n"
             "  z = %s[] constant(0)\n"
             "  ROOT r = %s[5] reduce(c, z), dimensions={0}, to_apply=red, sharding={replicated}\n",
             ty, (long long)D, (long long)D, ty, (long long)D, (long long)D, ty, op, ty, ty);
    {
        char red[256];
        snprintf(red, sizeof red, "red {\n  p = %s[] parameter(0)\n  q = %s[] parameter(1)\n  ROOT r = %s[] maximum(p, q)\n}\n",
                 ty, ty, ty);
        if (gst_case_run(&h, red, body, D, 0.0, 11)) CHECK_MSG(h.ar + h.ag + h.a2a + h.cp + h.rs > 0, "%s: no collective", ty);
    }
    gs_ctx_destroy(h.ctx);
}

static void test_types_partitioned(void) {
    static const char *const types[] = {"s64", "u8", "s8", "u16", "f64", "f16", "f8e4m3fn", "f8e5m2", "s4", "u64"};
    int i;
    for (i = 0; i < (int)(sizeof types / sizeof types[0]); i++) {
        check_partitioned(types[i], "add", 3);
        check_partitioned(types[i], "multiply", 2);
    }
    check_partitioned("s64", "subtract", 4);
    check_partitioned("f64", "divide", 3);
}

/* reads the .npy header's descr of path into buf */
static void npy_descr(const char *path, char *buf, size_t cap) {
    char h[256];
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(h, 1, sizeof h - 1, f) : 0;
    const char *p;
    buf[0] = 0;
    if (f) fclose(f);
    h[n] = 0;
    p = n > 10 ? strstr(h + 10, "'descr': '") : NULL;
    if (p) {
        size_t k = 0;
        p += 10;
        while (*p && *p != '\'' && k + 1 < cap) buf[k++] = *p++;
        buf[k] = 0;
    }
}

/* writes data of type t (n elements) with flags, checks the descr, reads it back as t and compares the bytes */
static void npy_roundtrip(gs_dtype t, int n, const void *data, unsigned flags, const char *descr) {
    const char *path = "build/test_types_tmp.npy";
    gs_ctx *ctx = gst_ctx();
    int64_t dims[1];
    gs_shape s, got;
    void *back = NULL;
    char d[16];
    dims[0] = n;
    s = gs_shape_make(t, 1, dims);
    CHECK_OK(gs_npy_write_ex(ctx, path, s, data, flags));
    npy_descr(path, d, sizeof d);
    CHECK_MSG(strcmp(d, descr) == 0, "%s: written as '%s', expected '%s'", gs_dtype_name(t), d, descr);
    CHECK_OK(gs_npy_read(ctx, path, t, &got, &back));
    CHECK(gs_shape_equal(&got, &s));
    CHECK_MSG(back && memcmp(back, data, gs_shape_bytes(&s)) == 0, "%s (flags %u): read back differs", gs_dtype_name(t), flags);
    gs_free_data(ctx, back);
    remove(path);
    gs_ctx_destroy(ctx);
}

static void test_types_npy(void) {
    int64_t s64[3] = {INT64_MIN, -1, INT64_MAX};
    double f64[2] = {0.1, -1e300};
    float c64[4] = {1, 2, -3, 4.5f};
    uint16_t u16[2] = {0, 65535}, bf[2] = {0x3F80, 0xC0C0}, h[2] = {0x3C00, 0x7C00};
    /* NaNs keep their sign and payload through the wider file type (quiet ones; the widening keeps the bits) */
    uint16_t bfnan[4] = {0xFFFF, 0xFFC1, 0x7FC0, 0x7FEA}, hnan[3] = {0xFE01, 0x7E00, 0xFFFF};
    uint8_t e5nan[3] = {0xFE, 0x7F, 0x7E}, fnnan[2] = {0xFF, 0x7F};
    uint8_t f8[4] = {0x7E, 0x01, 0x80, 0x38}, f4[3] = {0x7, 0x9, 0x0}, e8[2] = {0x7F, 0xFF};
    int8_t s4[3] = {-8, 7, -1};
    uint8_t u2[2] = {3, 0}, pr[2] = {1, 0};
    npy_roundtrip(GS_S64, 3, s64, 0, "<i8");
    npy_roundtrip(GS_F64, 2, f64, 0, "<f8");
    npy_roundtrip(GS_C64, 2, c64, 0, "<c8");
    npy_roundtrip(GS_U16, 2, u16, 0, "<u2");
    npy_roundtrip(GS_F16, 2, h, 0, "<f2");
    npy_roundtrip(GS_PRED, 2, pr, 0, "|b1");
    /* the types NumPy lacks: the nearest wider type, or their bits with GS_NPY_RAW */
    npy_roundtrip(GS_BF16, 2, bf, 0, "<f4");
    npy_roundtrip(GS_BF16, 2, bf, GS_NPY_RAW, "<u2");
    npy_roundtrip(GS_BF16, 4, bfnan, 0, "<f4");
    npy_roundtrip(GS_F16, 3, hnan, 0, "<f2");
    npy_roundtrip(GS_F8E5M2, 3, e5nan, 0, "<f2");
    npy_roundtrip(GS_F8E4M3FN, 2, fnnan, 0, "<f2");
    npy_roundtrip(GS_F8E4M3FN, 4, f8, 0, "<f2");
    npy_roundtrip(GS_F8E4M3FN, 4, f8, GS_NPY_RAW, "|u1");
    npy_roundtrip(GS_F4E2M1FN, 3, f4, 0, "<f2");
    npy_roundtrip(GS_F4E2M1FN, 3, f4, GS_NPY_RAW, "|u1");
    npy_roundtrip(GS_F8E8M0FNU, 2, e8, 0, "<f4");
    npy_roundtrip(GS_S4, 3, s4, 0, "|i1");
    npy_roundtrip(GS_S4, 3, s4, GS_NPY_RAW, "|u1");
    npy_roundtrip(GS_U2, 2, u2, 0, "|u1");
    /* the widened values are the exact values: f8e4m3fn 448 is 448 in the f2 file */
    {
        gs_ctx *ctx = gst_ctx();
        int64_t dims[1] = {4};
        gs_shape s = gs_shape_make(GS_F8E4M3FN, 1, dims), got;
        void *back = NULL;
        CHECK_OK(gs_npy_write(ctx, "build/test_types_tmp.npy", s, f8));
        CHECK_OK(gs_npy_read(ctx, "build/test_types_tmp.npy", GS_DTYPE_INVALID, &got, &back));
        CHECK_EQ_INT(got.dtype, GS_F16);
        if (back) {
            uint16_t w[4];
            memcpy(w, back, 8);
            CHECK_EQ_INT(w[0], 0x5F00);   /* 448 = 1.75 * 2^8 */
            CHECK_EQ_INT(w[1], 0x1800);   /* 2^-9 */
            CHECK_EQ_INT(w[2], 0x8000);   /* -0 */
            CHECK_EQ_INT(w[3], 0x3C00);   /* 1 */
        }
        gs_free_data(ctx, back);
        /* an s4 file value out of range is refused */
        {
            int8_t bad[1] = {9};
            gs_shape s8 = gs_shape_make(GS_S8, 1, dims);
            s8.dims[0] = 1;
            CHECK_OK(gs_npy_write(ctx, "build/test_types_tmp.npy", s8, bad));
            back = NULL;
            CHECK(gs_npy_read(ctx, "build/test_types_tmp.npy", GS_S4, &got, &back) == GS_ERR_SHAPE);
            CHECK(strstr(gs_ctx_error_msg(ctx), "does not fit s4") != NULL);
        }
        remove("build/test_types_tmp.npy");
        gs_ctx_destroy(ctx);
    }
}

/* Nested tuples: parse, print, the leaf/structure API, get-tuple-element of a nested element, a nested while
   state, and evaluation (one buffer per leaf). */
static void test_types_nested_tuples(void) {
    const char *text =
        "HloModule m\n\n"
        "cond {\n"
        "  s = (s32[], (f32[2], pred[])) parameter(0)\n"
        "  i = s32[] get-tuple-element(s), index=0\n"
        "  n = s32[] constant(3)\n"
        "  ROOT c = pred[] compare(i, n), direction=LT\n"
        "}\n\n"
        "body {\n"
        "  s = (s32[], (f32[2], pred[])) parameter(0)\n"
        "  i = s32[] get-tuple-element(s), index=0\n"
        "  one = s32[] constant(1)\n"
        "  j = s32[] add(i, one)\n"
        "  in = (f32[2], pred[]) get-tuple-element(s), index=1\n"
        "  x = f32[2] get-tuple-element(in), index=0\n"
        "  p = pred[] get-tuple-element(in), index=1\n"
        "  y = f32[2] add(x, x)\n"
        "  q = pred[] not(p)\n"
        "  t = (f32[2], pred[]) tuple(y, q)\n"
        "  ROOT r = (s32[], (f32[2], pred[])) tuple(j, t)\n"
        "}\n\n"
        "ENTRY e {\n"
        "  a = (f32[2], (s32[], pred[])) parameter(0)\n"
        "  b = (s32[], pred[]) get-tuple-element(a), index=1\n"
        "  x = f32[2] get-tuple-element(a), index=0\n"
        "  p = pred[] get-tuple-element(b), index=1\n"
        "  z = s32[] constant(0)\n"
        "  t = (f32[2], pred[]) tuple(x, p)\n"
        "  init = (s32[], (f32[2], pred[])) tuple(z, t)\n"
        "  w = (s32[], (f32[2], pred[])) while(init), condition=cond, body=body\n"
        "  ROOT out = ((s32[], (f32[2], pred[])), s32[]) tuple(w, z)\n"
        "}\n";
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = NULL;
    const char *out;
    gs_value *a, *w;
    const int *tree;
    int n = 0, first = -1;
    CHECK_OK(gs_hlo_parse(ctx, text, strlen(text), &g));
    if (!g) {
        fprintf(stderr, "%s\n", gs_ctx_error_msg(ctx));
        gs_ctx_destroy(ctx);
        return;
    }
    a = gs_graph_find(g, "a");
    CHECK_EQ_INT(gs_value_tuple_size(a), 3);    /* leaves f32[2], s32[], pred[] */
    CHECK_EQ_INT(gs_value_tuple_arity(a), 2);
    CHECK_EQ_INT(gs_value_tuple_element_leaves(a, 1, &first), 2);
    CHECK_EQ_INT(first, 1);
    CHECK_EQ_INT(gs_value_tuple_shape(a, 2).dtype, GS_PRED);
    tree = gs_value_tuple_tree(a, &n);
    CHECK(n == 5 && tree && tree[0] == 2 && tree[1] == -1 && tree[2] == 2 && tree[3] == -1 && tree[4] == -1);
    CHECK(gs_value_tuple_tree(gs_graph_find(g, "t"), &n) == NULL && n == 0);   /* flat */
    w = gs_graph_find(g, "w");
    CHECK_EQ_INT(gs_value_tuple_size(w), 3);
    CHECK_EQ_INT(gs_graph_num_outputs(g), 4);   /* the root's leaves */
    out = gs_hlo_print(g);
    CHECK(out && strstr(out, "a = (f32[2], (s32[], pred[])) parameter(0)"));
    CHECK(out && strstr(out, "ROOT out = ((s32[], (f32[2], pred[])), s32[]) tuple(w, z)"));
    CHECK(gst_reprints(out));
    {   /* 3 iterations: x doubled three times, p negated three times */
        float x[2] = {1.5f, -2.0f}, y[2];
        int32_t s = 5, i = -1, z = -1;
        uint8_t p = 1, q = 9;
        const void *in[3];
        void *outs[4];
        in[0] = x;
        in[1] = &s;
        in[2] = &p;
        outs[0] = &i;
        outs[1] = y;
        outs[2] = &q;
        outs[3] = &z;
        CHECK_MSG(gs_eval(g, in, outs) == GS_OK, "eval: %s", gs_ctx_error_msg(ctx));
        CHECK_EQ_INT(i, 3);
        CHECK(y[0] == 12.0f && y[1] == -16.0f);
        CHECK_EQ_INT(q, 0);
        CHECK_EQ_INT(z, 0);
    }
    /* a declared shape must match the structure, not only the leaves */
    {
        const char *bad = "HloModule m\n\nENTRY e {\n  a = (f32[2], (s32[], pred[])) parameter(0)\n"
                          "  ROOT b = (s32[], pred[], f32[2]) get-tuple-element(a), index=1\n}\n";
        gs_ctx *c3 = gst_ctx();
        gs_graph *g3 = NULL;
        CHECK(gs_hlo_parse(c3, bad, strlen(bad), &g3) != GS_OK);
        CHECK(strstr(gs_ctx_error_msg(c3), "(s32[], pred[])") != NULL);
        gs_ctx_destroy(c3);
    }
    /* the builder API: a nested parameter and a malformed structure */
    {
        gs_ctx *c4 = gst_ctx();
        gs_graph *g4 = NULL;
        gs_shape leaves[3];
        int good[5] = {2, -1, 2, -1, -1}, wrong[4] = {2, -1, 2, -1};
        leaves[0] = gs_shape_scalar(GS_F32);
        leaves[1] = gs_shape_scalar(GS_S64);
        leaves[2] = gs_shape_scalar(GS_PRED);
        g4 = gs_graph_new(c4, "g");
        CHECK(gs_parameter_tuple_nested(g4, 0, 3, leaves, 5, good, "p") != NULL);
        CHECK(gs_parameter_tuple_nested(g4, 1, 3, leaves, 4, wrong, "q") == NULL);
        CHECK(strstr(gs_ctx_error_msg(c4), "does not fit 3 leaves") != NULL);
        gs_ctx_destroy(c4);
    }
    gs_ctx_destroy(ctx);
}

void suite_types(void) {
    RUN(test_types_nested_tuples);
    RUN(test_types_npy);
    RUN(test_types_names_sizes);
    RUN(test_types_text_shapes);
    RUN(test_types_literals);
    RUN(test_types_narrow_floats);
    RUN(test_types_convert);
    RUN(test_types_int64_exact);
    RUN(test_types_float_ops);
    RUN(test_types_partitioned);
}
