/* test_text.c - HLO text: canonical round trips over every op, XLA-dump-style input, replica group forms,
   constants, reducers and comparators, any-order definitions, malformed text with line:column errors, and
   the .hlo files in examples/. */
#if !defined(_POSIX_C_SOURCE)
#  define _POSIX_C_SOURCE 200809L /* opendir */
#endif
#include "test.h"
#include <dirent.h>

/* ---- helpers ---- */

static gs_graph *parse_ok(gs_ctx *ctx, const char *text) {
    gs_graph *g = NULL;
    gs_result r = gs_hlo_parse(ctx, text, strlen(text), &g);
    CHECK_MSG(r == GS_OK, "parse failed (%s): %s", gs_result_str(r), gs_ctx_error_msg(ctx));
    if (r != GS_OK) return NULL;
    CHECK(g != NULL);
    return g;
}

/* reports the first line where a and b differ */
static void check_same_text(const char *got, const char *want) {
    int line = 1;
    const char *g = got, *w = want;
    if (!got || !want) {
        CHECK(got && want);
        return;
    }
    while (*g && *g == *w) {
        if (*g == '\n') line++;
        g++;
        w++;
    }
    if (*g != *w) {
        const char *gl = g, *wl = w;
        while (gl > got && gl[-1] != '\n') gl--;
        while (wl > want && wl[-1] != '\n') wl--;
        CHECK_MSG(0, "texts differ at line %d:\n   got: %.*s\n  want: %.*s", line, (int)strcspn(gl, "\n"), gl,
                  (int)strcspn(wl, "\n"), wl);
    }
}

/* parse(text) prints text again, and so does parse(print(...)) in a fresh context */
/* text is canonical: printed back byte for byte (with gshard.h's extensions kept: the canonical texts spell
   argmax as such) */
static void check_canonical(const char *text) {
    gs_ctx *ctx = gst_ctx(), *ctx2 = gst_ctx();
    gs_graph *g = parse_ok(ctx, text), *g2;
    const char *out;
    gs_hlo_print_extensions(ctx, true);
    gs_hlo_print_extensions(ctx2, true);
    if (g) {
        out = gs_hlo_print(g);
        CHECK(out != NULL);
        check_same_text(out, text);
        CHECK_OK(gs_graph_verify(g));
        g2 = out ? parse_ok(ctx2, out) : NULL;
        if (g2) check_same_text(gs_hlo_print(g2), out);
    }
    gs_ctx_destroy(ctx);
    gs_ctx_destroy(ctx2);
}

/* the same for a text given in two pieces (C99 only promises 4095-character string literals) */
static void check_canonical2(const char *a, const char *b) {
    size_t na = strlen(a), nb = strlen(b);
    char *text = (char *)malloc(na + nb + 1);
    CHECK(text != NULL);
    if (!text) return;
    memcpy(text, a, na);
    memcpy(text + na, b, nb + 1);
    check_canonical(text);
    free(text);
}

/* print(g) -> parse -> print gives the same bytes; returns the first print (valid until ctx dies) */
static const char *check_roundtrip(gs_graph *g) {
    gs_ctx *ctx2 = gst_ctx();
    const char *a = gs_hlo_print(g), *b = NULL;
    gs_graph *g2;
    CHECK(a != NULL);
    if (!a) {
        gs_ctx_destroy(ctx2);
        return NULL;
    }
    g2 = parse_ok(ctx2, a);
    if (g2) {
        b = gs_hlo_print(g2);
        check_same_text(b, a);
        /* a splat constant or an all-to-all with two dims prints as several instructions */
        CHECK(gs_graph_num_values(g2) >= gs_graph_num_values(g));
    }
    if (!g2) fprintf(stderr, "%s\n", a);
    gs_ctx_destroy(ctx2);
    return a;
}

/* parse fails with `code`, the message starts with "line L, column C: " and contains `part` */
static void check_error_at(const char *text, gs_result code, int line, int col, const char *part) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = (gs_graph *)&g;
    char where[64];
    gs_result r = gs_hlo_parse(ctx, text, strlen(text), &g);
    const char *msg = gs_ctx_error_msg(ctx);
    snprintf(where, sizeof where, "line %d, column %d: ", line, col);
    CHECK_MSG(r == code, "expected %s, got %s (%s) for:\n%s", gs_result_str(code), gs_result_str(r), msg, text);
    CHECK(g == NULL);
    CHECK_MSG(strncmp(msg, where, strlen(where)) == 0, "message '%s' does not start with '%s'", msg, where);
    CHECK_MSG(strstr(msg, part) != NULL, "message '%s' does not contain '%s'", msg, part);
    gs_ctx_destroy(ctx);
}

static gs_value *find(gs_graph *g, const char *name) {
    gs_value *v = gs_graph_find(g, name);
    CHECK_MSG(v != NULL, "no value named %s", name);
    return v;
}

/* ---- canonical text of every op ---- */

static void test_text_canonical_movement(void) {
    check_canonical(
        "HloModule movement\n"
        "\n"
        "ENTRY main {\n"
        "  x = f32[4,6] parameter(0)\n"
        "  i = s32[] parameter(1)\n"
        "  p = pred[4,6] parameter(2)\n"
        "  n = s32[4,6] parameter(3)\n"
        "  c0 = f32[] constant(0)\n"
        "  c1 = f32[2,2] constant({{1, 2.5}, {-3, 0.1}})\n"
        "  c2.scalar = f32[] constant(0.5)\n"
        "  c2 = f32[4,4] broadcast(c2.scalar), dimensions={}\n"
        "  c3 = pred[3] constant({true, false, true})\n"
        "  c4 = s32[2] constant({-7, 2147483647})\n"
        "  c5 = u32[2] constant({0, 4294967295})\n"
        "  c6 = bf16[3] constant({1.5, -0.0039, 3.14})\n"
        "  c7 = f32[4] constant({inf, -inf, nan, -0})\n"
        "  c8 = f32[3] constant({1e-08, 3.4028235e+38, 16777216})\n"
        "  c9 = pred[] constant(false)\n"
        "  c10 = f32[0,2] constant({})\n"
        "  c11 = f32[2,0] constant({{}, {}})\n"
        "  io = s32[4,6] iota(), iota_dimension=1\n"
        "  pid = u32[] partition-id()\n"
        "  b = f32[2,4,6] broadcast(x), dimensions={1,2}\n"
        "  bs = f32[3,2] broadcast(c0), dimensions={}\n"
        "  rs = f32[24] reshape(x)\n"
        "  tr = f32[6,4] transpose(x), dimensions={1,0}\n"
        "  sl = f32[2,2] slice(x), slice={[0:4:2], [1:3]}\n"
        "  ds = f32[2,3] dynamic-slice(x, i, i), dynamic_slice_sizes={2,3}\n"
        "  dus = f32[4,6] dynamic-update-slice(x, ds, i, i)\n"
        "  pd = f32[5,9] pad(x, c0), padding=0_1x1_2\n"
        "  pd2 = f32[10,10] pad(x, c0), padding=1_2_1x-1_0_1\n"
        "  cat = f32[12,6] concatenate(x, x, x), dimensions={0}\n"
        "  rev = f32[4,6] reverse(x), dimensions={0,1}\n"
        "  cv = bf16[4,6] convert(x)\n"
        "  cp = f32[4,6] copy(x)\n"
        "  u1 = f32[4,6] negate(x)\n"
        "  u2 = f32[4,6] abs(x)\n"
        "  u3 = f32[4,6] exponential(x)\n"
        "  u4 = f32[4,6] log(x)\n"
        "  u5 = f32[4,6] tanh(x)\n"
        "  u6 = f32[4,6] logistic(x)\n"
        "  u7 = f32[4,6] sqrt(x)\n"
        "  u8 = f32[4,6] rsqrt(x)\n"
        "  u9 = f32[4,6] floor(x)\n"
        "  u10 = f32[4,6] ceil(x)\n"
        "  u11 = f32[4,6] sign(x)\n"
        "  u12 = pred[4,6] not(p)\n"
        "  b1 = f32[4,6] add(x, x)\n"
        "  b2 = f32[4,6] subtract(x, x)\n"
        "  b3 = f32[4,6] multiply(x, x)\n"
        "  b4 = f32[4,6] divide(x, x)\n"
        "  b5 = f32[4,6] remainder(x, x)\n"
        "  b6 = f32[4,6] maximum(x, x)\n"
        "  b7 = f32[4,6] minimum(x, x)\n"
        "  b8 = f32[4,6] power(x, x)\n"
        "  b9 = pred[4,6] and(p, p)\n"
        "  b10 = pred[4,6] or(p, p)\n"
        "  b11 = s32[4,6] xor(n, n)\n"
        "  k1 = pred[4,6] compare(x, x), direction=EQ\n"
        "  k2 = pred[4,6] compare(x, x), direction=NE\n"
        "  k3 = pred[4,6] compare(x, x), direction=LT\n"
        "  k4 = pred[4,6] compare(x, x), direction=LE\n"
        "  k5 = pred[4,6] compare(n, n), direction=GT\n"
        "  k6 = pred[4,6] compare(n, n), direction=GE\n"
        "  sel = f32[4,6] select(p, x, b1)\n"
        "  cl = f32[4,6] clamp(c0, x, b1)\n"
        "  ROOT t = (f32[4,6], f32[2,2], s32[4,6]) tuple(cl, sl, io)\n"
        "}\n");
}

static void test_text_canonical_compute(void) {
    check_canonical2(
        "HloModule compute, num_partitions=4\n"
        "\n"
        "sum.f32 {\n"
        "  x = f32[] parameter(0)\n"
        "  y = f32[] parameter(1)\n"
        "  ROOT r = f32[] add(x, y)\n"
        "}\n"
        "\n"
        "prod.f32 {\n"
        "  x = f32[] parameter(0)\n"
        "  y = f32[] parameter(1)\n"
        "  ROOT r = f32[] multiply(x, y)\n"
        "}\n"
        "\n"
        "max.f32 {\n"
        "  x = f32[] parameter(0)\n"
        "  y = f32[] parameter(1)\n"
        "  ROOT r = f32[] maximum(x, y)\n"
        "}\n"
        "\n"
        "min.bf16 {\n"
        "  x = bf16[] parameter(0)\n"
        "  y = bf16[] parameter(1)\n"
        "  ROOT r = bf16[] minimum(x, y)\n"
        "}\n"
        "\n"
        "and.pred {\n"
        "  x = pred[] parameter(0)\n"
        "  y = pred[] parameter(1)\n"
        "  ROOT r = pred[] and(x, y)\n"
        "}\n"
        "\n"
        "or.pred {\n"
        "  x = pred[] parameter(0)\n"
        "  y = pred[] parameter(1)\n"
        "  ROOT r = pred[] or(x, y)\n"
        "}\n"
        "\n"
        "replace.f32 {\n"
        "  x = f32[] parameter(0)\n"
        "  ROOT y = f32[] parameter(1)\n"
        "}\n"
        "\n"
        "min.s32 {\n"
        "  x = s32[] parameter(0)\n"
        "  y = s32[] parameter(1)\n"
        "  ROOT r = s32[] minimum(x, y)\n"
        "}\n"
        "\n"
        "sum.s32 {\n"
        "  x = s32[] parameter(0)\n"
        "  y = s32[] parameter(1)\n"
        "  ROOT r = s32[] add(x, y)\n"
        "}\n"
        "\n"
        "compare.lt.f32 {\n"
        "  p0 = f32[] parameter(0)\n"
        "  p1 = f32[] parameter(1)\n"
        "  ROOT r = pred[] compare(p0, p1), direction=LT\n"
        "}\n"
        "\n"
        "compare.gt.f32.s32 {\n"
        "  p0 = f32[] parameter(0)\n"
        "  p1 = f32[] parameter(1)\n"
        "  p2 = s32[] parameter(2)\n"
        "  p3 = s32[] parameter(3)\n"
        "  ROOT r = pred[] compare(p0, p1), direction=GT\n"
        "}\n"
        "\n",
        "ENTRY main {\n"
        "  x = f32[4,6] parameter(0)\n"
        "  h = bf16[4,6] parameter(1)\n"
        "  p = pred[4,6] parameter(2)\n"
        "  idx = s32[3,1] parameter(3)\n"
        "  z = f32[] constant(0)\n"
        "  one = f32[] constant(1)\n"
        "  zh = bf16[] constant(0)\n"
        "  t = pred[] constant(true)\n"
        "  r1 = f32[4] reduce(x, z), dimensions={1}, to_apply=sum.f32\n"
        "  r2 = f32[] reduce(x, one), dimensions={0,1}, to_apply=prod.f32\n"
        "  r3 = f32[6] reduce(x, z), dimensions={0}, to_apply=max.f32\n"
        "  r4 = bf16[4] reduce(h, zh), dimensions={1}, to_apply=min.bf16\n"
        "  r5 = pred[6] reduce(p, t), dimensions={0}, to_apply=and.pred\n"
        "  r6 = pred[4] reduce(p, t), dimensions={1}, to_apply=or.pred\n"
        "  am = s32[4] argmax(x), dimensions={1}\n"
        "  an = s32[6] argmin(x), dimensions={0}\n"
        "  a3 = f32[2,4,6] parameter(4)\n"
        "  b3 = f32[2,6,5] parameter(5)\n"
        "  d1 = f32[2,4,5] dot(a3, b3), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}\n"
        "  d2 = f32[4,4] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={1}\n"
        "  d3 = f32[4,6,4,6] dot(x, x), lhs_contracting_dims={}, rhs_contracting_dims={}\n"
        "  img = f32[1,8,8,4] parameter(6)\n"
        "  ker = f32[3,3,2,6] parameter(7)\n"
        "  cv = f32[1,4,4,6] convolution(img, ker), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=2\n"
        "  ker2 = f32[3,3,5,4] parameter(13)\n"
        "  cv2 = f32[1,13,4,5] convolution(img, ker2), window={size=3x3 pad=0_0x-1_1 lhs_dilate=2x1 rhs_dilate=1x2}, dim_labels=b01f_01oi->b01f\n"
        "  rw = f32[2,3] reduce-window(x, z), window={size=3x3 stride=2x2 pad=1_0x1_1}, to_apply=max.f32\n"
        "  rw2 = f32[4,6] reduce-window(x, z), window={size=1x1}, to_apply=sum.f32\n"
        "  g = f32[3,6] gather(x, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,6}\n"
        "  bx = f32[2,5,3] parameter(8)\n"
        "  bi = s32[2,4,1] parameter(9)\n"
        "  g2 = f32[2,4,3] gather(bx, bi), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,3}\n"
        "  upd = f32[3,6] parameter(10)\n"
        "  s1 = f32[4,6] scatter(x, idx, upd), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=sum.f32\n"
        "  s2 = f32[4,6] scatter(x, idx, upd), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=replace.f32\n"
        "  bu = f32[2,4,3] parameter(11)\n"
        "  s3 = f32[2,5,3] scatter(bx, bi, bu), update_window_dims={2}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0}, index_vector_dim=2, to_apply=sum.f32\n"
        "  so = f32[4,6] sort(x), dimensions={1}, is_stable=true, to_apply=compare.lt.f32\n"
        "  ii = s32[4,6] iota(), iota_dimension=0\n"
        "  so2 = (f32[4,6], s32[4,6]) sort(x, ii), dimensions={0}, is_stable=true, to_apply=compare.gt.f32.s32\n"
        "  tk = (f32[4,2], s32[4,2]) topk(x), k=2, largest=true\n"
        "  tk2 = (f32[4,3], s32[4,3]) topk(x), k=3, largest=false\n"
        "  cs.init = f32[] constant(0)\n"
        "  cs = f32[4,6] reduce-window(x, cs.init), window={size=1x6 pad=0_0x5_0}, to_apply=sum.f32\n"
        "  cpr.init = f32[] constant(1)\n"
        "  cpr = f32[4,6] reduce-window(x, cpr.init), window={size=4x1 pad=0_3x0_0}, to_apply=prod.f32\n"
        "  cmx.init = f32[] constant(-inf)\n"
        "  cmx = f32[4,6] reduce-window(x, cmx.init), window={size=1x6 pad=0_0x5_0}, to_apply=max.f32\n"
        "  cmn.init = s32[] constant(2147483647)\n"
        "  cmn = s32[4,6] reduce-window(ii, cmn.init), window={size=1x6 pad=0_0x0_5}, to_apply=min.s32\n"
        "  rn = f32[3,5] rng(z, one), distribution=rng_uniform, seed=7\n"
        "  rn2 = f32[2] rng(z, one), distribution=rng_uniform, seed=18446744073709551615\n"
        "  ni = s32[4,6] parameter(12)\n"
        "  zi = s32[] constant(0)\n"
        "  r7 = s32[6] reduce(ni, zi), dimensions={0}, to_apply=sum.s32\n"
        "  ROOT out = (f32[4], f32[2,4,5], f32[1,4,4,6]) tuple(r1, d1, cv)\n"
        "}\n");
}

static void test_text_canonical_spmd(void) {
    check_canonical(
        "HloModule spmd, num_partitions=8\n"
        "\n"
        "sum.f32 {\n"
        "  x = f32[] parameter(0)\n"
        "  y = f32[] parameter(1)\n"
        "  ROOT r = f32[] add(x, y)\n"
        "}\n"
        "\n"
        "max.f32 {\n"
        "  x = f32[] parameter(0)\n"
        "  y = f32[] parameter(1)\n"
        "  ROOT r = f32[] maximum(x, y)\n"
        "}\n"
        "\n"
        "cond {\n"
        "  s = (s32[], f32[8,16]) parameter(0)\n"
        "  i = s32[] get-tuple-element(s), index=0\n"
        "  n = s32[] constant(4)\n"
        "  ROOT lt = pred[] compare(i, n), direction=LT\n"
        "}\n"
        "\n"
        "body {\n"
        "  s = (s32[], f32[8,16]) parameter(0)\n"
        "  i = s32[] get-tuple-element(s), index=0\n"
        "  v = f32[8,16] get-tuple-element(s), index=1\n"
        "  one = s32[] constant(1)\n"
        "  i2 = s32[] add(i, one)\n"
        "  v2 = f32[8,16] collective-permute(v), channel_id=1, source_target_pairs={{0,1},{1,2},{2,3},{3,0}}\n"
        "  ROOT s2 = (s32[], f32[8,16]) tuple(i2, v2)\n"
        "}\n"
        "\n"
        "ENTRY main {\n"
        "  x = f32[8,16] parameter(0), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}\n"
        "  pid = u32[] partition-id()\n"
        "  a = f32[8,16] all-reduce(x), channel_id=2, replica_groups={{0,1},{2,3},{4,5},{6,7}}, use_global_device_ids=true, to_apply=sum.f32\n"
        "  a2 = f32[8,16] all-reduce(x), channel_id=3, replica_groups={{0,1,2,3,4,5,6,7}}, use_global_device_ids=true, to_apply=max.f32\n"
        "  a3 = f32[8,16] all-reduce(x), channel_id=4, replica_groups=[2,4]<=[8], use_global_device_ids=true, to_apply=sum.f32\n"
        "  a4 = f32[8,16] all-reduce(x), channel_id=5, replica_groups=[4,2]<=[2,4]T(1,0), use_global_device_ids=true, to_apply=sum.f32\n"
        "  a5 = f32[8,16] all-reduce(x), channel_id=6, replica_groups=[2,4]<=[2,2,2]T(2,0,1), use_global_device_ids=true, to_apply=sum.f32\n"
        "  ag = f32[16,16] all-gather(x), channel_id=7, replica_groups={{0,1},{2,3},{4,5},{6,7}}, use_global_device_ids=true, dimensions={0}\n"
        "  rsc = f32[8,4] reduce-scatter(x), channel_id=8, replica_groups=[2,4]<=[8], use_global_device_ids=true, dimensions={1}, to_apply=sum.f32\n"
        "  aa = f32[8,16] all-to-all(x), channel_id=9, replica_groups={{0,1}}, dimensions={0}\n"
        "  aa2.split = f32[8,2,8] reshape(x)\n"
        "  aa2.a2a = f32[8,2,8] all-to-all(aa2.split), channel_id=10, replica_groups={{0,1}}, dimensions={1}\n"
        "  aa2.t = f32[2,8,8] transpose(aa2.a2a), dimensions={1,0,2}\n"
        "  aa2 = f32[16,8] reshape(aa2.t)\n"
        "  cpm = f32[8,16] collective-permute(x), channel_id=11, source_target_pairs={}\n"
        "  sh = f32[8,16] custom-call(x), custom_call_target=\"Sharding\", sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}\n"
        "  m = f32[4,16] custom-call(sh), custom_call_target=\"SPMDFullToShardShape\", sharding={manual}\n"
        "  e = f32[4,16] exponential(m), sharding={manual}\n"
        "  f = f32[8,16] custom-call(e), custom_call_target=\"SPMDShardToFullShape\", sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}\n"
        "  zero = s32[] constant(0)\n"
        "  init = (s32[], f32[8,16]) tuple(zero, f)\n"
        "  w = (s32[], f32[8,16]) while(init), condition=cond, body=body\n"
        "  res = f32[8,16] get-tuple-element(w), index=1, sharding={replicated}\n"
        "  ROOT out = (f32[8,16], f32[16,16], u32[]) tuple(res, ag, pid), sharding={{replicated}, {maximal device=0}, {manual}}\n"
        "}\n");
}

/* ---- builder graphs round-trip ---- */

static void test_text_roundtrip_builders(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "main"), *cond = gs_graph_new(ctx, "sum.f32"), *body = gs_graph_new(ctx, "body");
    gs_graph *body2 = gs_graph_new(ctx, "body");
    int64_t d8x16[2] = {8, 16}, d16x4[2] = {16, 4}, perm[2] = {1, 0}, lo[2] = {0, 1}, hi[2] = {2, 3};
    int64_t one_dim[1] = {1}, pairs[4] = {0, 1, 1, 0};
    gs_dot_dims dd;
    gs_collective_desc cd;
    gs_value *x, *w, *d, *z, *r, *t, *sv[2], *c, *i0, *st, *wl, *wl2, *ids;
    gs_shape ts[2];
    float cdata[4] = {0.1f, -2.0f, 1e30f, 3.0f};
    const char *text;
    int64_t gids[8] = {0, 2, 4, 6, 1, 3, 5, 7};

    /* a while whose condition is named like a synthesised reducer, and two bodies with one name */
    ts[0] = gs_shape_scalar(GS_S32);
    ts[1] = gs_shape_make(GS_F32, 2, d8x16);
    {
        gs_value *p = gs_parameter_tuple(cond, 0, 2, ts, "s");
        gs_value *i = gs_get_tuple_element(cond, p, 0);
        gs_value *lim = gs_scalar(cond, GS_S32, 3);
        CHECK_OK(gs_graph_set_root(cond, gs_compare(cond, i, lim, GS_CMP_LT)));
    }
    {
        gs_value *p = gs_parameter_tuple(body, 0, 2, ts, "s");
        gs_value *i = gs_get_tuple_element(body, p, 0), *v = gs_get_tuple_element(body, p, 1);
        gs_value *outs[2];
        outs[0] = gs_add(body, i, gs_scalar(body, GS_S32, 1));
        outs[1] = gs_exp(body, v);
        CHECK_OK(gs_graph_set_outputs(body, 2, outs));
    }
    {
        gs_value *p = gs_parameter_tuple(body2, 0, 2, ts, "s");
        gs_value *i = gs_get_tuple_element(body2, p, 0), *v = gs_get_tuple_element(body2, p, 1);
        gs_value *outs[2];
        outs[0] = gs_add(body2, i, gs_scalar(body2, GS_S32, 2));
        outs[1] = gs_neg(body2, v);
        CHECK_OK(gs_graph_set_outputs(body2, 2, outs));
    }
    x = gs_parameter(g, 0, gs_shape_make(GS_F32, 2, d8x16), "x");
    w = gs_parameter(g, 1, gs_shape_make(GS_F32, 2, d16x4), "w");
    CHECK_OK(gs_value_set_sharding_text(x, "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"));
    memset(&dd, 0, sizeof dd);
    dd.n_contract = 1;
    dd.lhs_contract[0] = 1;
    dd.rhs_contract[0] = 0;
    d = gs_dot(g, x, w, &dd);
    z = gs_scalar(g, GS_F32, 0);
    r = gs_reduce(g, d, z, GS_REDUCE_SUM, 1, one_dim);
    c = gs_constant(g, gs_shape_make(GS_F32, 1, one_dim + 0), cdata); /* f32[1] */
    (void)c;
    memset(&cd, 0, sizeof cd);
    cd.groups.n_groups = 2;
    cd.groups.group_size = 4;
    cd.groups.ids = gids;
    cd.channel_id = 5;
    sv[0] = gs_all_reduce(g, x, GS_REDUCE_SUM, &cd);
    sv[1] = gs_collective_permute(g, sv[0], 2, pairs, 0);
    i0 = gs_scalar(g, GS_S32, 0);
    sv[0] = i0;
    sv[1] = gs_transpose(g, gs_transpose(g, sv[1], perm), perm);
    st = gs_tuple(g, 2, sv);
    wl = gs_while(g, cond, body, st);
    wl2 = gs_while(g, cond, body2, wl);
    ids = gs_sort_with_indices(g, gs_pad(g, r, z, lo, hi, NULL), 0, true);
    sv[0] = gs_get_tuple_element(g, wl2, 1);
    sv[1] = gs_get_tuple_element(g, ids, 1);
    t = gs_tuple(g, 2, sv);
    CHECK_OK(gs_graph_set_root(g, t));
    CHECK_MSG(gs_ctx_error(ctx) == GS_OK, "%s", gs_ctx_error_msg(ctx));
    CHECK_OK(gs_graph_set_num_partitions(g, 8));
    text = check_roundtrip(g);
    if (text) {
        /* the condition keeps its name; the reducer and the second body are renamed to stay unique */
        CHECK(strstr(text, "\nsum.f32.1 {\n  x = f32[] parameter(0)\n") != NULL);
        CHECK(strstr(text, "\nsum.f32 {\n  s = (s32[], f32[8,16]) parameter(0)\n") != NULL);
        CHECK(strstr(text, "\nbody {\n") != NULL);
        CHECK(strstr(text, "\nbody.1 {\n") != NULL);
        CHECK(strstr(text, "condition=sum.f32, body=body.1\n") != NULL);
        CHECK(strstr(text, "to_apply=sum.f32.1\n") != NULL);
        CHECK(strstr(text, "HloModule main, num_partitions=8\n") == text);
        CHECK(strstr(text, "replica_groups={{0,2,4,6},{1,3,5,7}}") != NULL);
        CHECK(strstr(text, "constant({0.1, -2, 1e+30, 3})") == NULL); /* f32[1] holds one element */
        CHECK(strstr(text, "constant({0.1})") != NULL);
        CHECK(strstr(text, "compare.gt.f32.s32 {\n") != NULL);
        CHECK(strstr(text, "padding=0_2\n") != NULL);
        /* computations come before their users, the entry last */
        CHECK(strstr(text, "\nbody {") < strstr(text, "\nENTRY main {"));
        CHECK(strstr(text, "\nsum.f32 {") < strstr(text, "\nENTRY main {"));
    }
    CHECK_EQ_INT(gs_hlo_num_partitions(g), 8);
    CHECK(strcmp(gs_hlo_module_name(g), "main") == 0);
    gs_ctx_destroy(ctx);
}

/* random f32 and bf16 bit patterns survive print -> parse -> print, and parse to the same bits */
static void test_text_float_roundtrip(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "main");
    enum { N = 512 };
    float f[N], back[N];
    uint16_t h[N], hback[N];
    uint64_t seed = 42;
    int64_t n = N;
    int i;
    gs_value *outs[2];
    for (i = 0; i < N; i++) {
        uint32_t u;
        do {
            u = (uint32_t)gst_rand(&seed);
        } while ((u & 0x7f800000u) == 0x7f800000u); /* finite only; inf/nan are covered elsewhere */
        memcpy(&f[i], &u, 4);
        h[i] = (uint16_t)(u >> 16);
        if ((h[i] & 0x7f80u) == 0x7f80u) h[i] = 0x3f80; /* 1.0 */
    }
    f[0] = 0.1f;
    f[1] = -0.0f;
    f[2] = 1.17549435e-38f;  /* smallest normal */
    f[3] = 1.4e-45f;         /* smallest subnormal */
    f[4] = 16777217.0f;      /* rounds to 16777216 */
    outs[0] = gs_constant(g, gs_shape_make(GS_F32, 1, &n), f);
    outs[1] = gs_constant(g, gs_shape_make(GS_BF16, 1, &n), h);
    CHECK_OK(gs_graph_set_outputs(g, 2, outs));
    {
        const char *text = check_roundtrip(g);
        gs_ctx *ctx2 = gst_ctx();
        gs_graph *g2 = text ? parse_ok(ctx2, text) : NULL;
        void *o[2];
        o[0] = back;
        o[1] = hback;
        if (g2) {
            CHECK_OK(gs_eval(g2, NULL, o));
            CHECK(memcmp(back, f, sizeof f) == 0);
            CHECK(memcmp(hback, h, sizeof h) == 0);
        }
        /* the shortest form is used: 0.1f prints as 0.1 */
        CHECK(text && strstr(text, "constant({0.1, -0, 1.1754944e-38, 1e-45, 16777216, ") != NULL);
        gs_ctx_destroy(ctx2);
    }
    gs_ctx_destroy(ctx);
}

/* ---- constants: literal forms and values ---- */
static void test_text_constant_values(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = parse_ok(ctx,
                           "HloModule c\n"
                           "ENTRY e {\n"
                           "  a = f32[2,3] constant({ { 1, -2.5, 3e2 }, { inf, -inf, 0x1p-2 } })\n"
                           "  b = bf16[2] constant({1.00390625, -1e+30})\n"
                           "  c = s32[3] constant({-2147483648, 0, 7})\n"
                           "  d = u32[2] constant({4294967295, 1})\n"
                           "  e = pred[4] constant({true, false, 1, 0})\n"
                           "  f = f32[2,2] constant(-1.25)\n"
                           "  n = f32[] constant(nan)\n"
                           "  ROOT t = (f32[2,3], bf16[2], s32[3], u32[2], pred[4], f32[2,2], f32[]) tuple(a, b, c, d, e, f, n)\n"
                           "}\n");
    float a[6], f[4], nn;
    uint16_t b[2];
    int32_t c[3];
    uint32_t d[2];
    uint8_t e[4];
    void *outs[7];
    outs[0] = a;
    outs[1] = b;
    outs[2] = c;
    outs[3] = d;
    outs[4] = e;
    outs[5] = f;
    outs[6] = &nn;
    if (g) {
        CHECK_OK(gs_eval(g, NULL, outs));
        CHECK(a[0] == 1.0f && a[1] == -2.5f && a[2] == 300.0f && a[3] > FLT_MAX && a[4] < -FLT_MAX && a[5] == 0.25f);
        CHECK_EQ_INT(b[0], 0x3f80); /* 1.00390625 is a tie between 1 and 1.0078125: even mantissa wins */
        CHECK_EQ_INT(b[1], gs_f32_to_bf16(-1e30f));
        CHECK(c[0] == INT32_MIN && c[1] == 0 && c[2] == 7);
        CHECK(d[0] == 4294967295u && d[1] == 1u);
        CHECK(e[0] == 1 && e[1] == 0 && e[2] == 1 && e[3] == 0);
        CHECK(f[0] == -1.25f && f[3] == -1.25f);
        CHECK(nn != nn);
        /* the splat keeps its short form; hex floats print in decimal */
        CHECK(strstr(gs_hlo_print(g), "f.scalar = f32[] constant(-1.25)\n  f = f32[2,2] broadcast(f.scalar), dimensions={}\n") != NULL);
        CHECK(strstr(gs_hlo_print(g), "a = f32[2,3] constant({{1, -2.5, 300}, {inf, -inf, 0.25}})\n") != NULL);
        CHECK(strstr(gs_hlo_print(g), "b = bf16[2] constant({1, -1e+30})\n") != NULL);
    }
    gs_ctx_destroy(ctx);
}

/* ---- what JAX/XLA dumps look like ---- */
static const char *xla_dump =
    "HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[8,16]{1,0}, f32[16,4]{1,0})->(f32[8,4]{1,0}, f32[8]{0})}, num_partitions=2, replica_count=1\n"
    "\n"
    "/* the reducer comes first, as XLA prints it */\n"
    "%region_0.4 (Arg_0.5: f32[], Arg_1.6: f32[]) -> f32[] {\n"
    "  %Arg_0.5 = f32[] parameter(0), metadata={op_name=\"jit(f)/reduce_sum\"}\n"
    "  %Arg_1.6 = f32[] parameter(1)\n"
    "  ROOT %add.7 = f32[] add(f32[] %Arg_1.6, f32[] %Arg_0.5), metadata={op_name=\"jit(f)/reduce_sum\" source_file=\"/tmp/x.py\" source_line=7}\n"
    "}\n"
    "\n"
    "ENTRY %main.12 (Arg_0.1: f32[8,16], Arg_1.2: f32[16,4]) -> (f32[8,4], f32[8]) {\n"
    "  %Arg_0.1 = f32[8,16]{1,0} parameter(0), sharding={devices=[2,1]<=[2]}, metadata={op_name=\"x\"}\n"
    "  %Arg_1.2 = f32[16,4]{1,0:T(8,128)} parameter(1), sharding={replicated}\n"
    "  %dot.3 = f32[8,4]{1,0} dot(f32[8,16]{1,0} %Arg_0.1, f32[16,4]{1,0} %Arg_1.2), lhs_contracting_dims={1}, rhs_contracting_dims={0}, precision_config={default,default}, metadata={op_name=\"jit(f)/dot_general\" source_file=\"/tmp/x.py\" source_line=6}\n"
    "  %constant.8 = f32[] constant(0)\n"
    "  %partition-id.1 = u32[] partition-id()\n"
    "  // a line comment\n"
    "  %reduce.9 = f32[8]{0} reduce(f32[8,4]{1,0} %dot.3, f32[] %constant.8), dimensions={1}, to_apply=%region_0.4, control-predecessors={%constant.8}\n"
    "  %compare.10 = pred[8]{0} compare(%reduce.9, %reduce.9), direction=GE, type=TOTALORDER\n"
    "  ROOT %tuple.11 = (f32[8,4]{1,0}, f32[8]{0}) tuple(%dot.3, %reduce.9), frontend_attributes={_xla_x=\"1\"}, backend_config=\"{\\\"a\\\":{}}\", statistics={visualizing_index=1,stat-index-1=1}, origin={{\"x\"}}\n"
    "}\n";

static void test_text_xla_dump(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = parse_ok(ctx, xla_dump);
    gs_value *dot, *red, *root;
    float xin[8 * 16], win[16 * 4], dout[8 * 4], rout[8];
    const void *ins[2];
    void *outs[2];
    uint64_t seed = 7;
    int i, j, k;
    if (!g) {
        gs_ctx_destroy(ctx);
        return;
    }
    CHECK(strcmp(gs_hlo_module_name(g), "jit_f") == 0);
    CHECK(strcmp(gs_graph_name(g), "main.12") == 0);
    CHECK_EQ_INT(gs_hlo_num_partitions(g), 2);
    CHECK_EQ_INT(gs_graph_num_values(g), 8);
    CHECK_EQ_INT(gs_graph_num_params(g), 2);
    CHECK(strcmp(gs_value_name(gs_graph_param(g, 0)), "Arg_0.1") == 0);
    CHECK(strcmp(gs_value_sharding_text(gs_graph_param(g, 0)), "{devices=[2,1]<=[2]}") == 0);
    CHECK(strcmp(gs_value_sharding_text(gs_graph_param(g, 1)), "{replicated}") == 0);
    dot = find(g, "dot.3");
    red = find(g, "reduce.9");
    root = gs_graph_root(g);
    CHECK(gs_value_op(dot) == GS_OP_DOT && gs_value_operand(dot, 0) == gs_graph_param(g, 0));
    CHECK(gs_value_op(red) == GS_OP_REDUCE && gs_value_operand(red, 0) == dot);
    CHECK(gs_value_op(find(g, "partition-id.1")) == GS_OP_PARTITION_ID);
    CHECK(gs_value_op(find(g, "compare.10")) == GS_OP_COMPARE);
    CHECK(strcmp(gs_value_name(root), "tuple.11") == 0 && gs_value_tuple_size(root) == 2);
    CHECK(gs_value_sharding_text(root) == NULL);
    CHECK_OK(gs_graph_verify(g));
    /* evaluate against a naive loop */
    for (i = 0; i < 8 * 16; i++) xin[i] = gst_randf(&seed);
    for (i = 0; i < 16 * 4; i++) win[i] = gst_randf(&seed);
    ins[0] = xin;
    ins[1] = win;
    outs[0] = dout;
    outs[1] = rout;
    CHECK_OK(gs_eval(g, ins, outs));
    for (i = 0; i < 8; i++) {
        double rs = 0;
        for (j = 0; j < 4; j++) {
            double acc = 0;
            for (k = 0; k < 16; k++) acc += (double)xin[i * 16 + k] * win[k * 4 + j];
            CHECK_NEAR(dout[i * 4 + j], acc, 1e-5);
            rs += acc;
        }
        CHECK_NEAR(rout[i], rs, 1e-4);
    }
    /* printing gives the canonical form, which reads back to itself */
    {
        const char *text = check_roundtrip(g);
        CHECK(text && strstr(text, "HloModule jit_f, num_partitions=2\n\nsum.f32 {\n") == text);
        CHECK(text && strstr(text, "\nENTRY main.12 {\n  Arg_0.1 = f32[8,16] parameter(0), sharding={devices=[2,1]<=[2]}, metadata={op_name=\"x\"}\n") != NULL);
        /* attributes that change nothing are kept and printed back; hints are dropped */
        CHECK(text && strstr(text, "tuple(dot.3, reduce.9), frontend_attributes={_xla_x=\"1\"}, backend_config=\"{\\\"a\\\":{}}\", statistics={visualizing_index=1,stat-index-1=1}\n") != NULL);
        CHECK(text && strstr(text, "control-predecessors") == NULL && strstr(text, "precision_config") == NULL);
        CHECK(text && strstr(text, "  reduce.9 = f32[8] reduce(dot.3, constant.8), dimensions={1}, to_apply=sum.f32\n") != NULL);
        CHECK(text && strstr(text, "  compare.10 = pred[8] compare(reduce.9, reduce.9), direction=GE, type=TOTALORDER\n") != NULL);
    }
    gs_ctx_destroy(ctx);
}

/* instructions and computations in any order; generated names never clash with names from the text */
static void test_text_any_order(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = parse_ok(ctx,
                           "HloModule order\n"
                           "ENTRY main {\n"
                           "  ROOT add.1 = f32[4] add(add.3, add.2)\n"
                           "  add.2 = f32[4] add(add.3, multiply.4)\n"
                           "  add.3 = f32[4] add(x, x)\n"
                           "  multiply.4 = f32[4] multiply(x, add.3)\n"
                           "  r = f32[] reduce(add.1, z), dimensions={0}, to_apply=later\n"
                           "  z = f32[] constant(0)\n"
                           "  x = f32[4] parameter(0)\n"
                           "}\n"
                           "later {\n"
                           "  b = f32[] parameter(1)\n"
                           "  ROOT m = f32[] maximum(b, a)\n"
                           "  a = f32[] parameter(0)\n"
                           "}\n");
    float xin[4] = {1, -2, 3, 0.5f}, out[4];
    const void *ins[1];
    void *outs[1];
    int i;
    if (g) {
        /* values come out in dependency order: x before add.3 before multiply.4 before add.2 before add.1 */
        CHECK(gs_value_id(find(g, "x")) < gs_value_id(find(g, "add.3")));
        CHECK(gs_value_id(find(g, "add.3")) < gs_value_id(find(g, "multiply.4")));
        CHECK(gs_value_id(find(g, "multiply.4")) < gs_value_id(find(g, "add.2")));
        CHECK(gs_value_id(find(g, "add.2")) < gs_value_id(find(g, "add.1")));
        CHECK(gs_graph_root(g) == find(g, "add.1"));
        CHECK(strstr(gs_hlo_print(g), "to_apply=max.f32") != NULL);
        ins[0] = xin;
        outs[0] = out;
        CHECK_OK(gs_eval(g, ins, outs));
        for (i = 0; i < 4; i++) {
            float a3 = xin[i] + xin[i], m4 = xin[i] * a3, a2 = a3 + m4;
            CHECK_NEAR(out[i], a3 + a2, 1e-6);
        }
        check_roundtrip(g);
    }
    gs_ctx_destroy(ctx);
}

/* reducers in either operand order, REPLACE, and comparators in their accepted forms */
static void test_text_reducers_and_comparators(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = parse_ok(ctx,
                           "HloModule r\n"
                           "mn { a = s32[] parameter(0)  b = s32[] parameter(1)  ROOT m = s32[] minimum(b, a) }\n"
                           "rep { a = s32[] parameter(0)  ROOT b = s32[] parameter(1) }\n"
                           "asc_swapped { a = s32[] parameter(0)  b = s32[] parameter(1)  ROOT c = pred[] compare(b, a), direction=GT }\n"
                           "desc_swapped { a = s32[] parameter(0)  b = s32[] parameter(1)  ROOT c = pred[] compare(b, a), direction=LT }\n"
                           "ENTRY main {\n"
                           "  x = s32[5] parameter(0)\n"
                           "  big = s32[] constant(100)\n"
                           "  m = s32[] reduce(x, big), dimensions={0}, to_apply=mn\n"
                           "  i = s32[1,1] constant({{2}})\n"
                           "  u = s32[1] constant({-9})\n"
                           "  s = s32[5] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=rep\n"
                           "  a = s32[5] sort(x), dimensions={0}, to_apply=asc_swapped\n"
                           "  d = s32[5] sort(x), dimensions={0}, to_apply=desc_swapped\n"
                           "  ROOT t = (s32[], s32[5], s32[5], s32[5]) tuple(m, s, a, d)\n"
                           "}\n");
    int32_t xin[5] = {4, -1, 7, 3, 0}, m, s[5], a[5], d[5];
    const void *ins[1];
    void *outs[4];
    if (g) {
        const char *text = gs_hlo_print(g);
        ins[0] = xin;
        outs[0] = &m;
        outs[1] = s;
        outs[2] = a;
        outs[3] = d;
        CHECK_OK(gs_eval(g, ins, outs));
        CHECK_EQ_INT(m, -1);
        CHECK(s[0] == 4 && s[1] == -1 && s[2] == -9 && s[3] == 3 && s[4] == 0);
        CHECK(a[0] == -1 && a[1] == 0 && a[2] == 3 && a[3] == 4 && a[4] == 7);
        CHECK(d[0] == 7 && d[1] == 4 && d[2] == 3 && d[3] == 0 && d[4] == -1);
        CHECK(strstr(text, "to_apply=min.s32") && strstr(text, "to_apply=replace.s32"));
        CHECK(strstr(text, "to_apply=compare.lt.s32") && strstr(text, "to_apply=compare.gt.s32"));
        /* reducer and comparator computations are not graphs of their own */
        CHECK(strstr(text, "\nmn {") == NULL && strstr(text, "asc_swapped") == NULL);
        check_roundtrip(g);
    }
    gs_ctx_destroy(ctx);
}

/* every replica_groups form prints back as it was written; the groups mean what they say */
static void test_text_replica_groups(void) {
    static const char *forms[] = {
        "{{0,1,2,3,4,5,6,7}}", "{{0,1},{2,3},{4,5},{6,7}}", "{{0,4},{1,5},{2,6},{3,7}}", "{{3},{2},{1},{0},{4},{5},{6},{7}}",
        "[1,8]<=[8]", "[2,4]<=[8]", "[4,2]<=[2,4]T(1,0)", "[2,4]<=[2,2,2]T(2,1,0)", "[8,1]<=[8]", "[2,4]<=[2,4]",
    };
    int i;
    for (i = 0; i < (int)(sizeof forms / sizeof forms[0]); i++) {
        char text[1024];
        gs_ctx *ctx = gst_ctx();
        gs_graph *g;
        snprintf(text, sizeof text,
                 "HloModule rg, num_partitions=8\n\nsum.f32 {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
                 "  ROOT r = f32[] add(x, y)\n}\n\nENTRY main {\n  x = f32[8] parameter(0)\n"
                 "  ROOT a = f32[8] all-reduce(x), channel_id=1, replica_groups=%s, use_global_device_ids=true, to_apply=sum.f32\n}\n",
                 forms[i]);
        g = parse_ok(ctx, text);
        if (g) check_same_text(gs_hlo_print(g), text);
        gs_ctx_destroy(ctx);
    }
    /* "{}" (all partitions) and no channel_id are read as written but printed the way XLA reads a collective
       across partitions: explicit groups, a channel_id and global device ids */
    {
        gs_ctx *ctx = gst_ctx();
        gs_graph *g = parse_ok(ctx,
                               "HloModule rg, num_partitions=4\ns {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
                               "  ROOT r = f32[] add(x, y)\n}\nENTRY main {\n  x = f32[8] parameter(0)\n"
                               "  a = f32[8] all-reduce(x), replica_groups={}, to_apply=s\n"
                               "  ROOT b = f32[8] collective-permute(a), source_target_pairs={{0,1},{1,0}}\n}\n");
        const char *text = g ? gs_hlo_print(g) : NULL;
        CHECK(text && strstr(text, "all-reduce(x), channel_id=1, replica_groups={{0,1,2,3}}, use_global_device_ids=true, to_apply=") != NULL);
        CHECK(text && strstr(text, "collective-permute(a), channel_id=2, source_target_pairs={{0,1},{1,0}}") != NULL);
        gs_ctx_destroy(ctx);
    }
    /* the iota form [4,2]<=[2,4]T(1,0) is the groups {0,4},{1,5},{2,6},{3,7}: an all-gather over them
       on one partition is not possible, so check the grouping through reduce-scatter's shape rule and
       the text of a builder graph with the same explicit groups */
    {
        gs_ctx *ctx = gst_ctx();
        gs_graph *g = parse_ok(ctx,
                               "HloModule rg\nENTRY main {\n  x = f32[8] parameter(0)\n"
                               "  ROOT a = f32[16] all-gather(x), replica_groups=[4,2]<=[2,4]T(1,0), dimensions={0}\n}\n");
        if (g) CHECK_EQ_INT(gs_value_shape(gs_graph_root(g)).dims[0], 16); /* group size 2 */
        gs_ctx_destroy(ctx);
    }
}

/* ---- errors: code and line:column ---- */
static void test_text_errors(void) {
    const gs_result P = GS_ERR_PARSE, U = GS_ERR_UNSUPPORTED;
    /* shapes */
    check_error_at("HloModule m\nENTRY e {\n  x = f65[4] parameter(0)\n}\n", P, 3, 7, "expected an element type");
    check_error_at("HloModule m\nENTRY e {\n  x = f32[4,-1] parameter(0)\n}\n", P, 3, 13, "expected a dimension size >= 0, found '-1'");
    check_error_at("HloModule m\nENTRY e {\n  x = f32[<=4] parameter(0)\n}\n", U, 3, 11, "dynamic dimensions");
    check_error_at("HloModule m\nENTRY e {\n  x = (f32[4], (s32[]] parameter(0)\n}\n", P, 3, 22, "expected ',' or ')'");
    check_error_at("HloModule m\nENTRY e {\n  x = f32[1,1,1,1,1,1,1,1,1] parameter(0)\n}\n", P, 3, 27, "GS_MAX_RANK");
    /* syntax */
    check_error_at("HloModule m\nENTRY e {\n  x f32[4] parameter(0)\n}\n", P, 3, 5, "expected '=', found 'f32'");
    check_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  y = f32[4] add(x, x\n}\n", P, 5, 1, "expected ',' or ')', found '}'");
    check_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  y = f32[4] negate x\n}\n", P, 4, 21, "expected '(', found 'x'");
    check_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n", P, 4, 1, "end of input");
    check_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n}\n}\n", P, 5, 1, "expected a computation name, found '}'");
    check_error_at("HloModule m\n/* open\nENTRY e {\n}\n", P, 2, 1, "unterminated comment");
    check_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0), metadata={op_name=\"x}\n}\n", P, 3, 46, "unterminated string");
    check_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(x)\n}\n", P, 3, 24, "expected a parameter number >= 0, found 'x'");
    /* names and structure */
    check_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  x = f32[4] negate(x)\n}\n", P, 4, 3, "duplicate instruction name 'x'");
    check_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT y = f32[4] negate(z)\n}\n", P, 4, 26, "unknown operand 'z'");
    check_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  y = f32[4] fusoin(x), kind=kLoop\n}\n", P, 4, 14,
                   "unknown opcode 'fusoin' (did you mean 'fusion'?)");
    check_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  y = f32[4] fusion(x), kind=kLoop\n}\n", P, 4, 14,
                   "fusion 'y' needs the attribute calls=");
    check_error_at("HloModule m\nc {\n  x = f32[4] parameter(0)\n}\n", P, 5, 1, "expected an ENTRY computation, found end of input");
    check_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n}\nENTRY f {\n  y = f32[4] parameter(0)\n}\n", P, 5, 7, "second ENTRY");
    check_error_at("HloModule m\nENTRY e {\n}\n", P, 2, 7, "has no instructions");
    check_error_at("HloModule m\nENTRY e {\n  ROOT x = f32[4] parameter(0)\n  ROOT y = f32[4] negate(x)\n}\n", P, 4, 3, "second ROOT");
    check_error_at("HloModule m\nc {\n  x = f32[] parameter(0)\n}\nc {\n  y = f32[] parameter(0)\n}\n", P, 5, 1, "duplicate computation name 'c'");
    check_error_at("HloModule m\nENTRY e {\n  a = f32[4] negate(b)\n  b = f32[4] negate(a)\n}\n", P, 4, 21, "depends on itself");
    check_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0), sharding={replicated}, sharding={manual}\n}\n", P, 3, 51, "duplicate attribute 'sharding'");
    /* shapes that disagree */
    check_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT y = f32[5] add(x, x)\n}\n", P, 4, 12, "add 'y' is declared f32[5] but is f32[4]");
    check_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT y = f32[4] add(f32[8]{0} x, x)\n}\n", P, 4, 23, "operand 'x' is declared f32[8] but is f32[4]");
    check_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT y = f32[4] add(x)\n}\n", P, 4, 19, "add takes 2 operands, found 1");
    /* builder errors carry the instruction's position */
    check_error_at("HloModule m\nENTRY e {\n  a = f32[2,3] parameter(0)\n  b = f32[4,5] parameter(1)\n"
                   "  ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n",
                   P, 5, 8, "dot d: lhs contracting dim 1 (3) != rhs contracting dim 0 (4)");
    check_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  y = f32[4] parameter(0)\n}\n", P, 4, 3, "already has parameter 0");
    /* attributes */
    check_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[] reduce(x, z), to_apply=s\n}\n"
                   "s {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n",
                   P, 5, 18, "reduce 'r' needs the attribute dimensions=");
    check_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT c = pred[4] compare(x, x), direction=XX\n}\n", P, 4, 45,
                   "expected a direction (EQ, NE, LT, LE, GT or GE), found 'XX'");
    check_error_at("HloModule m\nENTRY e {\n  x = f32[4,4] parameter(0)\n  ROOT t = f32[4,4] transpose(x), dimensions={1,0,2}\n}\n", P, 4, 46,
                   "expected 2 dimensions (the operand's rank), found 3");
    check_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
                   "  ROOT r = f32[2] reduce-window(x, z), window={size=2 foo=1}, to_apply=s\n}\n"
                   "s {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n",
                   P, 5, 55, "expected a window field");
    check_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
                   "  ROOT r = f32[2] reduce-window(x, z), window={size=2x2}, to_apply=s\n}\n"
                   "s {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n",
                   P, 5, 53, "size has more than 1 entry");
    check_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT p = f32[6] pad(x, x), padding=1_1x2_2\n}\n", P, 4, 38, "padding has more than 1 entry");
    check_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT s = f32[2] slice(x), slice={[0:2:1:3]}\n}\n", P, 4, 42, "expected ']', found ':'");
    check_error_at("HloModule m\nENTRY e {\n  a = f32[1,4,4,1] parameter(0)\n  ROOT c = f32[1,4,4,1] convolution(a, a), window={size=1x1}, dim_labels=b01f_01xo->b01f\n}\n",
                   P, 4, 74, "expected dim_labels like b01f_01io->b01f, found 'b01f_01xo->b01f'");
    /* collectives */
    check_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT a = f32[8] all-gather(x), replica_groups={{0,1},{2}}, dimensions={0}\n}\n",
                   P, 4, 56, "the first group has 2");
    check_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT a = f32[8] all-gather(x), replica_groups=[2,4]<=[6], dimensions={0}\n}\n",
                   P, 4, 49, "do not have the 6 ids");
    check_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT a = f32[8] all-gather(x), replica_groups=[2,2]<=[2,2]T(0,0), dimensions={0}\n}\n",
                   P, 4, 63, "must be a permutation");
    /* constants */
    check_error_at("HloModule m\nENTRY e {\n  ROOT c = f32[3] constant({1, 2})\n}\n", P, 3, 33, "constant dimension 0 has 2 elements, expected 3");
    check_error_at("HloModule m\nENTRY e {\n  ROOT c = f32[2] constant({1, 2, 3})\n}\n", P, 3, 35, "more than 2 elements");
    check_error_at("HloModule m\nENTRY e {\n  ROOT c = f32[100] constant({1, ...})\n}\n", P, 3, 34, "elided");
    check_error_at("HloModule m\nENTRY e {\n  ROOT c = f32[] constant(abc)\n}\n", P, 3, 27, "expected a number, found 'abc'");
    check_error_at("HloModule m\nENTRY e {\n  ROOT c = s32[] constant(3000000000)\n}\n", P, 3, 27, "out of range for s32");
    check_error_at("HloModule m\nENTRY e {\n  ROOT c = s32[] constant(1.5)\n}\n", P, 3, 27, "expected an integer");
    /* called computations */
    check_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=nowhere\n}\n",
                   P, 5, 57, "unknown computation 'nowhere'");
    check_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=s\n}\n"
                   "s {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  c = f32[] parameter(2)\n  ROOT d = f32[] subtract(a, b)\n}\n",
                   P, 5, 8, "reducer: computation 's' has 3 parameters, expected 2");
    check_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=s\n}\n"
                   "s {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT d = s32[] subtract(a, b)\n}\n",
                   P, 5, 8, "reducer: parameter 0 of computation 's' must be f32[]");
    check_error_at("HloModule m\nENTRY e {\n  x = s32[4] parameter(0)\n  z = s32[] constant(0)\n  ROOT r = s32[] reduce(x, z), dimensions={0}, to_apply=s\n}\n"
                   "s {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n",
                   P, 5, 57, "reducer 's' works on f32, but reduce 'r' reduces s32");
    check_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT s = f32[4] sort(x), dimensions={0}, to_apply=c\n}\n"
                   "c {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  n = pred[] compare(a, b), direction=LT\n  ROOT r = s32[] convert(n)\n}\n",
                   P, 4, 8, "sort comparator: computation 'c' must return pred[]");
    check_error_at("HloModule m\nENTRY e {\n  x = s32[] parameter(0)\n  ROOT w = s32[] while(x), condition=c, body=b\n}\n"
                   "c {\n  p = s32[] parameter(0)\n  ROOT t = pred[] constant(true)\n}\n"
                   "b {\n  p = s32[] parameter(0)\n  ROOT w = s32[] while(p), condition=c, body=b\n}\n",
                   P, 12, 46, "computation 'b' calls itself");
    check_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT c = f32[4] custom-call(x, x), custom_call_target=\"Sharding\", sharding={replicated}\n}\n",
                   P, 4, 19, "custom-call 'c' takes 1 operand here, found 2");
    check_error_at("HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  ROOT r = f32[4] rng(a, a), distribution=rng_normal\n}\n", U, 4, 43,
                   "rng_normal is not supported");
    check_error_at("HloModule m, num_partitions=0\nENTRY e {\n  x = f32[4] parameter(0)\n}\n", P, 1, 29, "num_partitions >= 1");
}

/* no HloModule line: the module is named after ENTRY; no ROOT: the last instruction is the root */
static void test_text_xla_defaults(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = parse_ok(ctx,
                           "ENTRY %f.1 (p: f32[3]) -> f32[3] {\n"
                           "  %p = f32[3]{0} parameter(0)\n"
                           "  %lo = f32[] constant(0)\n"
                           "  %hi = f32[] constant(1)\n"
                           "  %u = f32[3]{0} rng(f32[] %lo, f32[] %hi), distribution=rng_uniform\n"
                           "  %n = f32[3]{0} negate(%p)\n"
                           "}\n");
    if (g) {
        CHECK(strcmp(gs_hlo_module_name(g), "f.1") == 0);
        CHECK_EQ_INT(gs_hlo_num_partitions(g), 1);
        CHECK(gs_graph_root(g) == find(g, "n"));
        check_same_text(gs_hlo_print(g), "HloModule f.1\n\nENTRY f.1 {\n  p = f32[3] parameter(0)\n  lo = f32[] constant(0)\n"
                                         "  hi = f32[] constant(1)\n  u = f32[3] rng(lo, hi), distribution=rng_uniform, seed=0\n"
                                         "  ROOT n = f32[3] negate(p)\n}\n");
    }
    gs_ctx_destroy(ctx);
}

/* a context with a pending error refuses to parse; a failed parse leaks nothing and leaves no entry */
static void test_text_error_state(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = NULL;
    const char *bad = "HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT y = f32[4] add(x, q)\n}\n";
    const char *good = "HloModule m\nENTRY e {\n  ROOT x = f32[4] parameter(0)\n}\n";
    CHECK(gs_hlo_parse(ctx, bad, strlen(bad), &g) == GS_ERR_PARSE);
    CHECK(g == NULL);
    CHECK(gs_hlo_parse(ctx, good, strlen(good), &g) == GS_ERR_PARSE); /* sticky */
    gs_ctx_clear_error(ctx);
    CHECK_OK(gs_hlo_parse(ctx, good, strlen(good), &g));
    CHECK(g != NULL);
    /* len bounds the text: the rest is never read */
    CHECK(gs_hlo_parse(ctx, good, 20, &g) == GS_ERR_PARSE);
    CHECK(strstr(gs_ctx_error_msg(ctx), "end of input") != NULL);
    gs_ctx_clear_error(ctx);
    CHECK(gs_hlo_parse(ctx, "", 0, &g) == GS_ERR_PARSE);
    gs_ctx_clear_error(ctx);
    CHECK(gs_hlo_parse(ctx, good, strlen(good), NULL) == GS_ERR_INVALID_ARG);
    CHECK(gs_hlo_parse(NULL, good, strlen(good), &g) == GS_ERR_INVALID_ARG);
    CHECK(gs_hlo_print(NULL) == NULL);
    gs_ctx_destroy(ctx);
}

/* every prefix of a valid module either parses or fails cleanly (no crash, no leak, a line:column) */
static void test_text_truncations(void) {
    size_t n = strlen(xla_dump), k;
    for (k = 0; k < n; k += 7) {
        gs_ctx *ctx = gst_ctx();
        gs_graph *g = NULL;
        gs_result r = gs_hlo_parse(ctx, xla_dump, k, &g);
        if (r != GS_OK) CHECK_MSG(strncmp(gs_ctx_error_msg(ctx), "line ", 5) == 0, "k=%d: %s", (int)k, gs_ctx_error_msg(ctx));
        gs_ctx_destroy(ctx);
    }
}

/* byte mutations of a valid module: parse succeeds or fails with a line:column message, never crashes */
static void test_text_mutations(void) {
    size_t n = strlen(xla_dump);
    char *buf = (char *)malloc(n + 1);
    static const char junk[] = "{}()[],=%\"/*-0x.9 \nROOT";
    uint64_t seed = 99;
    int it, k;
    if (!buf) return;
    for (it = 0; it < 400; it++) {
        gs_ctx *ctx = gst_ctx();
        gs_graph *g = NULL;
        memcpy(buf, xla_dump, n + 1);
        for (k = 0; k < 1 + it % 4; k++) {
            size_t at = (size_t)(gst_rand(&seed) % n);
            buf[at] = junk[gst_rand(&seed) % (sizeof junk - 1)];
        }
        if (gs_hlo_parse(ctx, buf, n, &g) == GS_OK) {
            const char *text = gs_hlo_print(g);
            CHECK(text != NULL);
            if (text) check_roundtrip(g);
        } else {
            CHECK_MSG(strncmp(gs_ctx_error_msg(ctx), "line ", 5) == 0, "%s", gs_ctx_error_msg(ctx));
        }
        gs_ctx_destroy(ctx);
    }
    free(buf);
}

/* every allocation failure on the way is reported as such, and nothing leaks */
typedef struct fail_alloc { int count, limit; } fail_alloc;
static void *fail_alloc_fn(size_t size, void *user) {
    fail_alloc *fa = (fail_alloc *)user;
    if (fa->count++ >= fa->limit) return NULL;
    return malloc(size);
}
static void fail_free_fn(void *p, void *user) {
    (void)user;
    free(p);
}

static void test_text_out_of_memory(void) {
    int limit, ok = 0;
    for (limit = 1; limit < 400 && !ok; limit++) {
        fail_alloc fa;
        gs_ctx_desc desc;
        gs_ctx *ctx = NULL;
        gs_graph *g = NULL;
        gs_result r;
        fa.count = 0;
        fa.limit = limit;
        memset(&desc, 0, sizeof desc);
        desc.allocator.alloc = fail_alloc_fn;
        desc.allocator.free = fail_free_fn;
        desc.allocator.user = &fa;
        if (gs_ctx_create(&desc, &ctx) != GS_OK) continue;
        r = gs_hlo_parse(ctx, xla_dump, strlen(xla_dump), &g);
        if (r == GS_OK) {
            const char *text = gs_hlo_print(g);
            if (text) ok = 1;
            else CHECK(gs_ctx_error(ctx) == GS_ERR_OUT_OF_MEMORY);
        } else {
            CHECK_MSG(r == GS_ERR_OUT_OF_MEMORY, "limit %d: %s", limit, gs_ctx_error_msg(ctx));
        }
        gs_ctx_destroy(ctx);
    }
    CHECK(ok);
}

/* ---- the .hlo files in examples/ ---- */
static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = (char *)malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) buf[n] = 0;
    *len = (size_t)n;
    return buf;
}

static void test_text_examples(void) {
    const char *dirs[] = {"examples", "../examples"};
    DIR *d = NULL;
    struct dirent *e;
    const char *dir = NULL;
    int i, n = 0;
    for (i = 0; i < 2 && !d; i++) {
        d = opendir(dirs[i]);
        dir = dirs[i];
    }
    CHECK_MSG(d != NULL, "cannot open examples/");
    if (!d) return;
    while ((e = readdir(d)) != NULL) {
        char path[512];
        size_t len = strlen(e->d_name), tlen;
        char *text;
        gs_ctx *ctx;
        gs_graph *g;
        if (len < 5 || strcmp(e->d_name + len - 4, ".hlo") != 0) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        text = read_file(path, &tlen);
        CHECK_MSG(text != NULL, "cannot read %s", path);
        if (!text) continue;
        ctx = gst_ctx();
        g = NULL;
        if (gs_hlo_parse(ctx, text, tlen, &g) != GS_OK) {
            CHECK_MSG(0, "%s: %s", path, gs_ctx_error_msg(ctx));
        } else {
            CHECK_OK(gs_graph_verify(g));
            check_roundtrip(g);
            n++;
        }
        gs_ctx_destroy(ctx);
        free(text);
    }
    closedir(d);
    CHECK(n >= 2);
}

/* examples/moe_gating.hlo computes GShard's top-2 gating: check it against a direct computation */
static void test_text_moe_gating_example(void) {
    enum { G = 2, S = 8, M = 16, E = 4, C = 4 };
    size_t len;
    char *text = read_file("examples/moe_gating.hlo", &len);
    gs_ctx *ctx;
    gs_graph *g;
    float x[G * S * M], wg[M * E], combine[G * S * E * C], probs[G * S * E];
    uint8_t dispatch[G * S * E * C];
    float want_combine[G * S * E * C];
    const void *ins[2];
    void *outs[3];
    uint64_t seed = 3;
    int gi, s, e, c, m;
    if (!text) text = read_file("../examples/moe_gating.hlo", &len);
    CHECK_MSG(text != NULL, "cannot read examples/moe_gating.hlo");
    if (!text) return;
    ctx = gst_ctx();
    g = parse_ok(ctx, text);
    free(text);
    if (!g) {
        gs_ctx_destroy(ctx);
        return;
    }
    CHECK_EQ_INT(gs_graph_num_outputs(g), 3);
    for (m = 0; m < G * S * M; m++) x[m] = gst_randf(&seed);
    for (m = 0; m < M * E; m++) wg[m] = gst_randf(&seed) * 2.0f;
    ins[0] = x;
    ins[1] = wg;
    outs[0] = combine;
    outs[1] = dispatch;
    outs[2] = probs;
    CHECK_OK(gs_eval(g, ins, outs));
    memset(want_combine, 0, sizeof want_combine);
    for (gi = 0; gi < G; gi++) {
        int count[E] = {0, 0, 0, 0};
        int top1[S], top2[S];
        float p[S][E];
        for (s = 0; s < S; s++) {
            double logit[E], mx = -1e30, sum = 0;
            for (e = 0; e < E; e++) {
                logit[e] = 0;
                for (m = 0; m < M; m++) logit[e] += (double)x[(gi * S + s) * M + m] * wg[m * E + e];
                if (logit[e] > mx) mx = logit[e];
            }
            for (e = 0; e < E; e++) sum += exp(logit[e] - mx);
            for (e = 0; e < E; e++) {
                p[s][e] = (float)(exp(logit[e] - mx) / sum);
                CHECK_NEAR(probs[(gi * S + s) * E + e], p[s][e], 1e-5);
            }
            top1[s] = 0;
            for (e = 1; e < E; e++)
                if (p[s][e] > p[s][top1[s]]) top1[s] = e;
            top2[s] = top1[s] == 0 ? 1 : 0;
            for (e = 0; e < E; e++)
                if (e != top1[s] && p[s][e] > p[s][top2[s]]) top2[s] = e;
        }
        /* first choices claim expert slots in token order, then second choices after all first choices */
        for (s = 0; s < S; s++) {
            int pos = count[top1[s]]++;
            float gate = p[s][top1[s]] / (p[s][top1[s]] + p[s][top2[s]]);
            if (pos < C) want_combine[((gi * S + s) * E + top1[s]) * C + pos] = gate;
        }
        for (s = 0; s < S; s++) {
            int pos = count[top2[s]]++;
            float gate = p[s][top2[s]] / (p[s][top1[s]] + p[s][top2[s]]);
            if (pos < C) want_combine[((gi * S + s) * E + top2[s]) * C + pos] = gate;
        }
    }
    for (m = 0; m < G * S * E * C; m++) {
        CHECK_NEAR(combine[m], want_combine[m], 1e-5);
        CHECK_EQ_INT(dispatch[m], want_combine[m] != 0.0f);
    }
    for (gi = 0; gi < G; gi++)
        for (e = 0; e < E; e++)
            for (c = 0; c < C; c++) {
                int users = 0;
                for (s = 0; s < S; s++) users += dispatch[((gi * S + s) * E + e) * C + c];
                CHECK(users <= 1); /* one token per expert slot */
            }
    gs_ctx_destroy(ctx);
}

void suite_text(void) {
    RUN(test_text_canonical_movement);
    RUN(test_text_canonical_compute);
    RUN(test_text_canonical_spmd);
    RUN(test_text_roundtrip_builders);
    RUN(test_text_float_roundtrip);
    RUN(test_text_constant_values);
    RUN(test_text_xla_dump);
    RUN(test_text_xla_defaults);
    RUN(test_text_any_order);
    RUN(test_text_reducers_and_comparators);
    RUN(test_text_replica_groups);
    RUN(test_text_errors);
    RUN(test_text_error_state);
    RUN(test_text_truncations);
    RUN(test_text_mutations);
    RUN(test_text_out_of_memory);
    RUN(test_text_examples);
    RUN(test_text_moe_gating_example);
}

/* the helpers above, for the other HLO text tests (test_text_structure.c) */
gs_graph *gst_hlo_parse(gs_ctx *ctx, const char *text) { return parse_ok(ctx, text); }
const char *gst_hlo_roundtrip(gs_graph *g) { return check_roundtrip(g); }
void gst_hlo_error_at(const char *text, gs_result code, int line, int col, const char *part) {
    check_error_at(text, code, line, col, part);
}
