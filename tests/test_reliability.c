/* test_reliability.c - hostile inputs: sizes whose products overflow, allocation amplification, deep nesting,
   too many axes; each case was once a crash, a huge allocation or a silent wrong answer. */
#if !defined(_POSIX_C_SOURCE)
#  define _POSIX_C_SOURCE 200809L /* mkdtemp */
#endif
#include "test.h"
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* an allocator that remembers the largest single request */
typedef struct big_alloc { size_t largest; } big_alloc;
static void *big_alloc_fn(size_t n, void *user) {
    big_alloc *b = (big_alloc *)user;
    if (n > b->largest) b->largest = n;
    return malloc(n);
}
static void big_free_fn(void *p, void *user) { (void)user; free(p); }

/* a context whose allocator records the largest request in b */
static gs_ctx *big_ctx(big_alloc *b) {
    gs_ctx_desc desc;
    gs_ctx *ctx = NULL;
    memset(&desc, 0, sizeof desc);
    b->largest = 0;
    desc.allocator.alloc = big_alloc_fn;
    desc.allocator.free = big_free_fn;
    desc.allocator.user = b;
    CHECK_OK(gs_ctx_create(&desc, &ctx));
    return ctx;
}

static int msg_has(gs_ctx *ctx, const char *what) {
    const char *m = gs_ctx_error_msg(ctx);
    return m && strstr(m, what) != NULL;
}

/* writes text to dir/name (path receives the file's path); false when it cannot */
static bool put_file(char *path, size_t cap, const char *dir, const char *name, const char *text) {
    FILE *f;
    snprintf(path, cap, "%s/%s", dir, name);
    f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return false;
    fputs(text, f);
    fclose(f);
    return true;
}

/* removes what gst_cli left in dir, then dir */
static void drop_dir(const char *dir) {
    char p[256];
    snprintf(p, sizeof p, "%s/stdout.txt", dir);
    remove(p);
    snprintf(p, sizeof p, "%s/stderr.txt", dir);
    remove(p);
    rmdir(dir);
}

/* arange(4*4611686018427387905): the reshape product wraps to 4 in 64 bits, which once passed as 4 devices */
static void test_rel_iota_overflow(void) {
    gs_ctx *ctx = gst_ctx();
    int64_t dims[2] = {2, 2}, r[2] = {4, 4611686018427387905LL}, big[3] = {(int64_t)1 << 31, (int64_t)1 << 31, 4};
    int perm[2] = {1, 0};
    CHECK(gs_sharding_parse(ctx, "{devices=[2,2]<=[4,4611686018427387905]T(1,0)}") == NULL);
    CHECK(gs_ctx_error(ctx) == GS_ERR_SHARDING && msg_has(ctx, "overflows int64"));
    gs_ctx_clear_error(ctx);
    CHECK(gs_sharding_iota(ctx, 2, dims, 2, r, perm, 0, NULL) == NULL && msg_has(ctx, "overflows int64"));
    gs_ctx_clear_error(ctx);
    /* tile dims each within 2^31 whose product wraps */
    CHECK(gs_sharding_tiled(ctx, 3, big, NULL, 0, NULL) == NULL && msg_has(ctx, "more than 2^31 tiles"));
    gs_ctx_destroy(ctx);
}

/* 24 bytes of text once asked for 16 GiB before reading the first id */
static void test_rel_ids_bounded_by_text(void) {
    big_alloc b;
    gs_ctx *ctx = big_ctx(&b);
    CHECK(gs_sharding_parse(ctx, "{devices=[65536,32768]0}") == NULL);
    CHECK_MSG(gs_ctx_error(ctx) == GS_ERR_SHARDING && msg_has(ctx, "2147483648 ids expected, 1 given"), "got %s",
              gs_ctx_error_msg(ctx));
    CHECK_MSG(b.largest < ((size_t)1 << 20), "largest allocation %zu bytes", b.largest);
    gs_ctx_clear_error(ctx);
    CHECK(gs_sharding_parse(ctx, "{devices=[2,2]0,1,2}") == NULL && msg_has(ctx, "4 ids expected, 3 given"));
    gs_ctx_clear_error(ctx);
    CHECK(gs_sharding_parse(ctx, "{devices=[2]0,1,2}") == NULL && msg_has(ctx, "2 ids expected, 3 given"));
    gs_ctx_destroy(ctx);
}

/* 10,000 nested braces through the C API: a clean error, no recursion per brace */
static void test_rel_deep_nesting(void) {
    gs_ctx *ctx = gst_ctx();
    size_t n = 10000, i;
    char *t = (char *)malloc(2 * n + 32);
    CHECK(t != NULL);
    if (!t) return;
    for (i = 0; i < n; i++) t[i] = '{';
    strcpy(t + n, "replicated");
    for (i = 0; i < n; i++) t[n + 10 + i] = '}';
    t[2 * n + 10] = 0;
    CHECK(gs_sharding_parse(ctx, t) == NULL);
    CHECK_MSG(gs_ctx_error(ctx) == GS_ERR_SHARDING && msg_has(ctx, "tuple shardings are flat"), "got %s",
              gs_ctx_error_msg(ctx));
    gs_ctx_clear_error(ctx);
    /* one level of tuple still parses */
    CHECK(gs_sharding_parse(ctx, "{{replicated}, {maximal device=1}}") != NULL);
    free(t);
    gs_ctx_destroy(ctx);
}

/* a PartitionSpec entry naming 200 axes once wrote past a 16-entry stack array */
static void test_rel_spec_axes(void) {
    gs_ctx *ctx = gst_ctx();
    const char *names[16] = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p"};
    int64_t sizes[16];
    char spec[1024];
    size_t n = 0;
    int i;
    const gs_mesh *m;
    for (i = 0; i < 16; i++) sizes[i] = i < 2 ? 2 : 1;
    m = gs_mesh_new(ctx, 16, names, sizes, NULL);
    CHECK(m != NULL);
    spec[n++] = '(';
    for (i = 0; i < 200; i++) n += (size_t)snprintf(spec + n, sizeof spec - n, "%s%s", i ? "," : "", names[i % 16]);
    snprintf(spec + n, sizeof spec - n, "), _");
    CHECK(gs_mesh_sharding(ctx, m, 2, spec, NULL) == NULL);
    CHECK_MSG(gs_ctx_error(ctx) == GS_ERR_SHARDING && msg_has(ctx, "names more axes than the mesh's 16"), "got %s",
              gs_ctx_error_msg(ctx));
    gs_ctx_clear_error(ctx);
    /* all sixteen, once each, are fine */
    CHECK(gs_mesh_sharding(ctx, m, 2, "(a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p), _", NULL) != NULL);
    gs_ctx_destroy(ctx);
}

/* slice [0:4:INT64_MAX-1] holds one element (XLA: f32[1]); the old ceil formula overflowed to -1 */
static void test_rel_slice_stride(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "m");
    int64_t d4[1] = {4}, s[1] = {0}, l[1] = {4}, st[1] = {INT64_MAX - 1}, l2[1] = {3}, st2[1] = {2};
    gs_value *x = gs_parameter(g, 0, gs_shape_make(GS_F32, 1, d4), "x");
    gs_value *y = gs_slice(g, x, s, l, st), *z = gs_slice(g, x, s, l2, st2);
    CHECK(y != NULL && gs_value_shape(y).dims[0] == 1);
    CHECK(z != NULL && gs_value_shape(z).dims[0] == 2); /* ceil(3 / 2) */
    gs_ctx_destroy(ctx);
    ctx = gst_ctx();
    {
        const char *t = "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n"
                        "  ROOT r = f32[1] slice(p), slice={[0:4:9223372036854775806]}\n}\n";
        gs_graph *e = NULL;
        CHECK_OK(gs_hlo_parse(ctx, t, strlen(t), &e));
    }
    gs_ctx_destroy(ctx);
}

/* pad with interior 2^40 on 2^24 + 1 elements: (2^24) * 2^40 wrapped to 0 and the pad looked like f32[16777217] */
static void test_rel_pad_overflow(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "m");
    int64_t d[1] = {((int64_t)1 << 24) + 1}, lo[1] = {0}, hi[1] = {0}, in[1] = {(int64_t)1 << 40};
    gs_value *x = gs_parameter(g, 0, gs_shape_make(GS_F32, 1, d), "x");
    CHECK(gs_pad(g, x, gs_scalar(g, GS_F32, 0), lo, hi, in) == NULL);
    CHECK_MSG(gs_ctx_error(ctx) == GS_ERR_SHAPE && msg_has(ctx, "overflow"), "got %s", gs_ctx_error_msg(ctx));
    gs_ctx_destroy(ctx);
}

/* a base dilation of 2^20 over 2^45 elements: (2^45 - 1) * 2^20 does not fit in 64 bits */
static void test_rel_window_overflow(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "m");
    int64_t d[1] = {(int64_t)1 << 45};
    gs_window_dim w = gs_window_default();
    gs_value *x = gs_parameter(g, 0, gs_shape_make(GS_F32, 1, d), "x");
    w.base_dilation = (int64_t)1 << 20;
    CHECK(gs_reduce_window(g, x, gs_scalar(g, GS_F32, 0), GS_REDUCE_SUM, &w) == NULL);
    CHECK_MSG(gs_ctx_error(ctx) == GS_ERR_SHAPE && msg_has(ctx, "overflows int64"), "got %s", gs_ctx_error_msg(ctx));
    gs_ctx_destroy(ctx);
}

/* element counts and byte sizes of any shape a caller builds */
static void test_rel_shape_sizes(void) {
    int64_t huge[3] = {(int64_t)1 << 40, (int64_t)1 << 40, 2}, neg[2] = {3, -1}, ok[2] = {3, 5};
    gs_shape s;
    memset(&s, 0, sizeof s);
    s.dtype = GS_F32;
    s.rank = 3;
    memcpy(s.dims, huge, sizeof huge);
    CHECK_EQ_INT(gs_shape_numel(&s), -1);
    CHECK_EQ_INT(gs_shape_bytes(&s), 0);
    s.rank = 2;
    memcpy(s.dims, neg, sizeof neg);
    CHECK_EQ_INT(gs_shape_numel(&s), -1);
    memcpy(s.dims, ok, sizeof ok);
    CHECK_EQ_INT(gs_shape_numel(&s), 15);
    CHECK_EQ_INT(gs_shape_bytes(&s), 60);
    s.rank = GS_MAX_RANK + 1;
    CHECK_EQ_INT(gs_shape_numel(&s), -1);
}

/* a 100-byte .npy whose header claims 2^40 floats: "truncated", before any allocation of that size */
static void test_rel_npy_bounded_by_file(void) {
    char dir[] = "/tmp/gst_rel_XXXXXX", path[128], hdr[128];
    big_alloc b;
    gs_ctx *ctx = NULL;
    gs_shape shape;
    void *data = NULL;
    FILE *f;
    size_t hl;
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/big.npy", dir);
    memset(hdr, ' ', sizeof hdr);
    hl = (size_t)snprintf(hdr, sizeof hdr, "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }");
    hdr[hl] = ' ';
    hdr[117] = '\n';  /* 10 + 118 = 128 bytes of preamble */
    f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    fwrite("\x93NUMPY\x01\x00\x76\x00", 1, 10, f);
    fwrite(hdr, 1, 118, f);
    fwrite("0123456789abcdef", 1, 16, f);
    fclose(f);
    ctx = big_ctx(&b);
    CHECK(gs_npy_read(ctx, path, GS_DTYPE_INVALID, &shape, &data) != GS_OK && data == NULL);
    CHECK_MSG(msg_has(ctx, "truncated .npy file") && msg_has(ctx, "found 16"), "got %s", gs_ctx_error_msg(ctx));
    CHECK_MSG(b.largest < ((size_t)1 << 20), "largest allocation %zu bytes", b.largest);
    gs_ctx_destroy(ctx);
    remove(path);
    rmdir(dir);
}

/* the overflowing iota sharding through the CLI: exit 2 naming the overflow, never "check: ok" */
static void test_rel_cli_iota_overflow(void) {
    char dir[] = "/tmp/gst_rel_XXXXXX", path[128];
    int rc;
    CHECK(mkdtemp(dir) != NULL);
    if (!put_file(path, sizeof path, dir, "iota.hlo",
                  "HloModule m\nENTRY e {\n  p = f32[4,4] parameter(0), sharding={devices=[2,2]<=[4,4611686018427387905]T(1,0)}\n"
                  "  ROOT r = f32[4,4] add(p, p)\n}\n"))
        return;
    rc = gst_cli(dir, "run %s --devices 4 --check", path);
    CHECK_EQ_INT(rc, 2);
    CHECK_MSG(strstr(gst_cli_err, "overflows int64") != NULL, "stderr: %s", gst_cli_err);
    CHECK(strstr(gst_cli_out, "check: ok") == NULL);
    remove(path);
    drop_dir(dir);
}

/* run --watchdog SECONDS: a device computing for ages before a collective ends the run in a fraction of a
   second, naming the device that never arrived; 0 disables the watchdog; a negative value is a usage error */
static void test_rel_cli_watchdog(void) {
    static const char *text =
        "HloModule wd\n"
        "sum { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
        "cond {\n  s = s32[] parameter(0)\n  p = u32[] partition-id()\n  z = u32[] constant(0)\n"
        "  busy = pred[] compare(p, z), direction=EQ\n  big = s32[] constant(2000000000)\n"
        "  more = pred[] compare(s, big), direction=LT\n  ROOT c = pred[] and(busy, more)\n}\n"
        "body {\n  s = s32[] parameter(0)\n  one = s32[] constant(1)\n  ROOT t = s32[] add(s, one)\n}\n"
        "ENTRY main {\n  x = f32[4] parameter(0)\n  z = s32[] constant(0)\n"
        "  w = s32[] while(z), condition=cond, body=body\n  wf = f32[] convert(w)\n"
        "  wb = f32[4] broadcast(wf), dimensions={}\n  y = f32[4] add(x, wb)\n"
        "  ROOT ar = f32[4] all-reduce(y), replica_groups={}, to_apply=sum\n}\n";
    static const char *quick = "HloModule q\nENTRY main {\n  x = f32[4] parameter(0)\n  ROOT y = f32[4] add(x, x)\n}\n";
    char dir[] = "/tmp/gst_rel_XXXXXX", path[128], qpath[128];
    FILE *f;
    int rc;
    time_t t0;
    CHECK(mkdtemp(dir) != NULL);
    if (!put_file(path, sizeof path, dir, "wd.hlo", text) || !put_file(qpath, sizeof qpath, dir, "q.hlo", quick)) return;
    t0 = time(NULL);
    rc = gst_cli(dir, "run --spmd %s --devices 2 --watchdog 0.25 --seed 1", path);
    CHECK_EQ_INT(rc, 2);
    CHECK_MSG(strstr(gst_cli_err, "watchdog: device 1 waited") && strstr(gst_cli_err, "device 0 never arrived"),
              "stderr: %s", gst_cli_err);
    CHECK_MSG(time(NULL) - t0 < 30, "took %ld s", (long)(time(NULL) - t0)); /* the default would be 60 s */
    /* three busy devices and one waiting: all three are named */
    f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    {
        const char *at = strstr(text, "z = u32[] constant(0)"), *eq = strstr(text, "direction=EQ");
        fwrite(text, 1, (size_t)(at - text), f);
        fputs("z = u32[] constant(3)", f);
        fwrite(at + 21, 1, (size_t)(eq - (at + 21)), f);
        fputs("direction=NE", f);
        fputs(eq + 12, f);
    }
    fclose(f);
    rc = gst_cli(dir, "run --spmd %s --devices 4 --watchdog 0.25 --seed 1", path);
    CHECK_EQ_INT(rc, 2);
    CHECK_MSG(strstr(gst_cli_err, "watchdog: device 3 waited") && strstr(gst_cli_err, "devices 0, 1, 2 never arrived"),
              "stderr: %s", gst_cli_err);
    rc = gst_cli(dir, "run --spmd %s --devices 2 --watchdog -1", path);
    CHECK_EQ_INT(rc, 2);
    CHECK_MSG(strstr(gst_cli_err, "--watchdog wants a number >= 0 of seconds"), "stderr: %s", gst_cli_err);
    rc = gst_cli(dir, "run %s --devices 2 --watchdog x1", qpath);
    CHECK_EQ_INT(rc, 2);
    rc = gst_cli(dir, "run %s --devices 2 --watchdog 0 --check", qpath);
    CHECK_EQ_INT(rc, 0);
    CHECK(strstr(gst_cli_out, "check: ok") != NULL);
    remove(path);
    remove(qpath);
    drop_dir(dir);
}

void suite_reliability(void) {
    RUN(test_rel_cli_watchdog);
    RUN(test_rel_iota_overflow);
    RUN(test_rel_ids_bounded_by_text);
    RUN(test_rel_deep_nesting);
    RUN(test_rel_spec_axes);
    RUN(test_rel_slice_stride);
    RUN(test_rel_pad_overflow);
    RUN(test_rel_window_overflow);
    RUN(test_rel_shape_sizes);
    RUN(test_rel_npy_bounded_by_file);
    RUN(test_rel_cli_iota_overflow);
}
