/* test_cli.c - .npy files, the input generator, and the command-line driver (build/gshard run on temp files).
   The driver is found as $GST_GSHARD (default ./build/gshard) and run under $GST_CLI_WRAPPER if set
   (`make valgrind` runs it under valgrind, `make sanitize` uses the sanitizer build). */
#if !defined(_POSIX_C_SOURCE)
#  define _POSIX_C_SOURCE 200809L /* mkdtemp */
#endif
#include "test.h"
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmpdir[256];

static void path_in_tmp(char *buf, size_t cap, const char *name) { snprintf(buf, cap, "%s/%s", tmpdir, name); }

static void write_text(const char *name, const char *text) {
    char p[512];
    FILE *f;
    path_in_tmp(p, sizeof p, name);
    f = fopen(p, "wb");
    CHECK(f != NULL);
    if (!f) return;
    fwrite(text, 1, strlen(text), f);
    fclose(f);
}

static void write_bytes(const char *name, const void *data, size_t n) {
    char p[512];
    FILE *f;
    path_in_tmp(p, sizeof p, name);
    f = fopen(p, "wb");
    CHECK(f != NULL);
    if (!f) return;
    if (n) fwrite(data, 1, n, f);
    fclose(f);
}

static bool have_cli(void) {
    if (access(gst_gshard_bin(), X_OK) != 0) {
        CHECK_MSG(0, "%s not found: build it first (make test builds it)", gst_gshard_bin());
        return false;
    }
    return true;
}

/* ---- the independent input generator: splitmix64 as the harness implements it (gst_rand) ---- */
static uint64_t ref_random_bits(uint64_t seed, int64_t p, int64_t i) {
    uint64_t s = seed, key = 0, r = 0;
    int64_t k;
    for (k = 0; k <= p; k++) key = gst_rand(&s); /* the (p+1)-th output from state seed */
    s = key;
    for (k = 0; k <= i; k++) r = gst_rand(&s);   /* the (i+1)-th output from state key */
    return r;
}

static void test_fill_random_formula(void) {
    int64_t dims[2] = {3, 5};
    float f[15];
    uint16_t h[15];
    int32_t s[15];
    uint32_t u[15];
    uint8_t b[15];
    int i, ones = 0;
    gs_fill_random(gs_shape_make(GS_F32, 2, dims), 42, 3, f);
    gs_fill_random(gs_shape_make(GS_BF16, 2, dims), 42, 3, h);
    gs_fill_random(gs_shape_make(GS_S32, 2, dims), 7, 0, s);
    gs_fill_random(gs_shape_make(GS_U32, 2, dims), 7, 0, u);
    gs_fill_random(gs_shape_make(GS_PRED, 2, dims), 9, 1, b);
    for (i = 0; i < 15; i++) {
        uint64_t r = ref_random_bits(42, 3, i);
        double want = (double)(r >> 40) / 8388608.0 - 1.0;
        CHECK_NEAR(f[i], want, 0.0);
        CHECK(f[i] >= -1.0f && f[i] < 1.0f);
        CHECK_EQ_INT(h[i], gs_f32_to_bf16((float)want));
        CHECK_EQ_INT(s[i], (int64_t)(ref_random_bits(7, 0, i) >> 61));
        CHECK_EQ_INT(u[i], (int64_t)(ref_random_bits(7, 0, i) >> 61));
        CHECK_EQ_INT(b[i], (int64_t)(ref_random_bits(9, 1, i) >> 63));
        ones += b[i];
    }
    CHECK(ones > 0 && ones < 15);
    /* parameters and seeds give different streams; the same arguments give the same bits */
    {
        float f2[15], f3[15];
        gs_fill_random(gs_shape_make(GS_F32, 2, dims), 42, 4, f2);
        gs_fill_random(gs_shape_make(GS_F32, 2, dims), 42, 3, f3);
        CHECK(memcmp(f, f2, sizeof f) != 0);
        CHECK(memcmp(f, f3, sizeof f) == 0);
    }
}

/* The box (off, cnt) of a row-major array of dims (element size es), by a naive element loop. */
static void box_of(int rank, const int64_t *dims, const int64_t *off, const int64_t *cnt, size_t es, const void *src,
                   void *dst) {
    int64_t n = 1, e, idx[GS_MAX_RANK];
    int i;
    for (i = 0; i < rank; i++) n *= cnt[i];
    for (e = 0; e < n; e++) {
        int64_t rest = e, at = 0;
        for (i = rank - 1; i >= 0; i--) {
            idx[i] = off[i] + rest % cnt[i];
            rest /= cnt[i];
        }
        for (i = 0; i < rank; i++) at = at * dims[i] + idx[i];
        memcpy((char *)dst + e * (int64_t)es, (const char *)src + at * (int64_t)es, es);
    }
}

/* gs_fill_random_region: the same values as gs_fill_random at the region's places (every type the CLI
   generates, a 3-d box, a scalar), nothing written for a region outside the shape */
static void test_fill_random_region(void) {
    gs_dtype types[6] = {GS_F32, GS_BF16, GS_S32, GS_U32, GS_PRED, GS_S4};
    int64_t dims[3] = {4, 5, 6}, off[3] = {1, 2, 3}, cnt[3] = {2, 3, 2}, bad[3] = {3, 2, 3};
    static unsigned char whole[4 * 5 * 6 * 4], want[12 * 4], got[12 * 4 + 4];
    int t;
    for (t = 0; t < 6; t++) {
        gs_shape s = gs_shape_make(types[t], 3, dims);
        size_t es = gs_dtype_size(types[t]);
        gs_fill_random(s, 5, 2, whole);
        box_of(3, dims, off, cnt, es, whole, want);
        memset(got, 0xEE, sizeof got);
        CHECK_OK(gs_fill_random_region(s, 5, 2, off, cnt, got));
        CHECK_MSG(memcmp(got, want, 12 * es) == 0, "type %s", gs_dtype_name(types[t]));
        CHECK(got[12 * es] == 0xEE);   /* nothing past the box */
    }
    {   /* element (1,2,3) against the documented formula */
        float f;
        uint64_t r = ref_random_bits(5, 2, 1 * 30 + 2 * 6 + 3);
        CHECK_OK(gs_fill_random_region(gs_shape_make(GS_F32, 3, dims), 5, 2, off, (int64_t[]){1, 1, 1}, &f));
        CHECK_NEAR(f, (double)(r >> 40) / 8388608.0 - 1.0, 0.0);
    }
    {
        float sc = 3.0f, one;
        gs_fill_random(gs_shape_make(GS_F32, 0, NULL), 9, 0, &one);
        CHECK_OK(gs_fill_random_region(gs_shape_make(GS_F32, 0, NULL), 9, 0, NULL, NULL, &sc));
        CHECK_NEAR(sc, one, 0.0);
    }
    memset(got, 0xEE, sizeof got);
    CHECK(gs_fill_random_region(gs_shape_make(GS_F32, 3, dims), 5, 2, bad, cnt, got) == GS_ERR_INVALID_ARG);
    CHECK(gs_fill_random_region(gs_shape_make(GS_F32, 3, dims), 5, 2, off, cnt, NULL) == GS_ERR_INVALID_ARG);
    CHECK(gs_fill_random_region(gs_shape_make(GS_TOKEN, 0, NULL), 5, 2, NULL, NULL, got) == GS_ERR_INVALID_ARG);
    CHECK(got[0] == 0xEE);
    CHECK_OK(gs_fill_random_region(gs_shape_make(GS_F32, 3, dims), 5, 2, off, (int64_t[]){2, 0, 2}, NULL));   /* empty */
}

/* ---- .npy ---- */
static void test_npy_round_trip(void) {
    gs_ctx *ctx = gst_ctx();
    gs_dtype types[5] = {GS_F32, GS_BF16, GS_S32, GS_U32, GS_PRED};
    int64_t shapes[4][3] = {{3, 5, 0}, {7, 0, 0}, {0, 0, 0}, {0, 4, 0}};
    int ranks[4] = {2, 1, 0, 2};
    int t, si;
    char p[512];
    uint64_t rs = 11;
    for (t = 0; t < 5; t++) {
        for (si = 0; si < 4; si++) {
            gs_shape s = gs_shape_make(types[t], ranks[si], shapes[si]), got;
            size_t nb = gs_shape_bytes(&s);
            unsigned char *d = (unsigned char *)malloc(nb + 1);
            void *back = NULL;
            size_t k;
            for (k = 0; k < nb; k++) d[k] = (unsigned char)gst_rand(&rs);
            if (types[t] == GS_PRED)
                for (k = 0; k < nb; k++) d[k] &= 1;
            if (types[t] == GS_BF16) /* keep bf16 bit patterns finite so the comparison is meaningful */
                for (k = 1; k < nb; k += 2) d[k] &= 0x3f;
            snprintf(p, sizeof p, "%s/rt_%d_%d.npy", tmpdir, t, si);
            CHECK_OK(gs_npy_write(ctx, p, s, d));
            CHECK_OK(gs_npy_read(ctx, p, types[t], &got, &back));
            CHECK(gs_shape_equal(&got, &s));
            CHECK(back != NULL && (nb == 0 || memcmp(back, d, nb) == 0));
            gs_free_data(ctx, back);
            back = NULL;
            /* without a wanted dtype the file's type comes back: bf16 was stored as f32 */
            CHECK_OK(gs_npy_read(ctx, p, GS_DTYPE_INVALID, &got, &back));
            CHECK_EQ_INT(got.dtype, types[t] == GS_BF16 ? GS_F32 : types[t]);
            CHECK_EQ_INT(got.rank, ranks[si]);
            if (types[t] == GS_BF16 && back) {
                for (k = 0; k < nb / 2; k++) {
                    uint16_t hb;
                    float fv;
                    memcpy(&hb, d + 2 * k, 2);
                    memcpy(&fv, (char *)back + 4 * k, 4);
                    CHECK_NEAR(fv, gs_bf16_to_f32(hb), 0.0);
                }
            }
            gs_free_data(ctx, back);
            free(d);
        }
    }
    CHECK_EQ_INT(gs_ctx_error(ctx), GS_OK);
    gs_ctx_destroy(ctx);
}

static void test_npy_header_layout(void) {
    gs_ctx *ctx = gst_ctx();
    int64_t dims[3] = {2, 3, 4};
    float v[24];
    char p[512], buf[4096];
    size_t n;
    unsigned hl;
    int i;
    for (i = 0; i < 24; i++) v[i] = (float)i * 0.5f;
    path_in_tmp(p, sizeof p, "layout.npy");
    CHECK_OK(gs_npy_write(ctx, p, gs_shape_make(GS_F32, 3, dims), v));
    n = gst_read_file(p, buf, sizeof buf);
    CHECK(n > 10 && memcmp(buf, "\x93NUMPY\x01\x00", 8) == 0);
    hl = (unsigned)(unsigned char)buf[8] | ((unsigned)(unsigned char)buf[9] << 8);
    CHECK_EQ_INT((10 + hl) % 64, 0);
    CHECK_EQ_INT(n, 10 + hl + sizeof v);
    CHECK(buf[10 + hl - 1] == '\n');
    buf[10 + hl] = 0;
    CHECK(strstr(buf + 10, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 4), }") == buf + 10);
    {
        float back[24];
        memcpy(back, buf + 10 + hl, sizeof back); /* the data is raw little-endian f32 (x86, ARM) */
        CHECK(memcmp(back, v, sizeof v) == 0);
    }
    /* a 1-d shape prints Python's one-element tuple */
    path_in_tmp(p, sizeof p, "layout1.npy");
    CHECK_OK(gs_npy_write(ctx, p, gs_shape_make(GS_S32, 1, dims + 2), v));
    gst_read_file(p, buf, sizeof buf);
    CHECK(strstr(buf + 10, "'descr': '<i4'") != NULL && strstr(buf + 10, "'shape': (4,)") != NULL);
    path_in_tmp(p, sizeof p, "layout0.npy");
    CHECK_OK(gs_npy_write(ctx, p, gs_shape_scalar(GS_PRED), "\1"));
    gst_read_file(p, buf, sizeof buf);
    CHECK(strstr(buf + 10, "'descr': '|b1'") != NULL && strstr(buf + 10, "'shape': ()") != NULL);
    gs_ctx_destroy(ctx);
}

/* builds a .npy file by hand: version, header text (padded to 16 bytes + '\n' as given), then data */
static void make_npy(const char *name, int major, const char *header, const void *data, size_t n) {
    unsigned char buf[1024];
    size_t hl = strlen(header), pre = major == 1 ? 10 : 12;
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major;
    buf[7] = 0;
    buf[8] = (unsigned char)(hl & 0xff);
    buf[9] = (unsigned char)(hl >> 8);
    if (major != 1) {
        buf[10] = 0;
        buf[11] = 0;
    }
    memcpy(buf + pre, header, hl);
    if (n) memcpy(buf + pre + hl, data, n);
    write_bytes(name, buf, pre + hl + n);
}

static void test_npy_foreign_files(void) {
    gs_ctx *ctx = gst_ctx();
    char p[512];
    gs_shape s;
    void *d = NULL;
    float f[4] = {1.5f, -2.0f, 0.25f, 8.0f};
    int32_t iv[3] = {-1, 7, 123456};
    unsigned char u1[5] = {0, 1, 2, 0, 255};
    /* version 2.0, keys in another order, extra spaces, no trailing comma */
    make_npy("v2.npy", 2, "{ 'shape' : (2,2) , 'fortran_order':False,'descr':'<f4' }\n", f, sizeof f);
    path_in_tmp(p, sizeof p, "v2.npy");
    CHECK_OK(gs_npy_read(ctx, p, GS_F32, &s, &d));
    CHECK_EQ_INT(s.rank, 2);
    CHECK_EQ_INT(s.dims[0], 2);
    CHECK_EQ_INT(s.dims[1], 2);
    CHECK(d && memcmp(d, f, sizeof f) == 0);
    gs_free_data(ctx, d);
    d = NULL;
    /* version 3.0 with double quotes */
    make_npy("v3.npy", 3, "{\"descr\": \"<i4\", \"fortran_order\": False, \"shape\": (3,)}    \n", iv, sizeof iv);
    path_in_tmp(p, sizeof p, "v3.npy");
    CHECK_OK(gs_npy_read(ctx, p, GS_DTYPE_INVALID, &s, &d));
    CHECK_EQ_INT(s.dtype, GS_S32);
    CHECK(d && memcmp(d, iv, sizeof iv) == 0);
    gs_free_data(ctx, d);
    d = NULL;
    /* '|u1' reads as pred, nonzero -> 1 */
    make_npy("u1.npy", 1, "{'descr': '|u1', 'fortran_order': False, 'shape': (5,), }\n", u1, sizeof u1);
    path_in_tmp(p, sizeof p, "u1.npy");
    CHECK_OK(gs_npy_read(ctx, p, GS_PRED, &s, &d));
    CHECK(d && memcmp(d, "\0\1\1\0\1", 5) == 0);
    gs_free_data(ctx, d);
    d = NULL;
    /* f4 read as bf16 rounds to nearest even: 1 + 2^-8 is a tie between 1 and 1 + 2^-7 -> 1 */
    {
        float t[2] = {1.00390625f, -3.0f};
        uint16_t want0 = 0x3f80, want1 = 0xc040;
        make_npy("bf.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", t, sizeof t);
        path_in_tmp(p, sizeof p, "bf.npy");
        CHECK_OK(gs_npy_read(ctx, p, GS_BF16, &s, &d));
        CHECK_EQ_INT(s.dtype, GS_BF16);
        if (d) {
            uint16_t h[2];
            memcpy(h, d, 4);
            CHECK_EQ_INT(h[0], want0);
            CHECK_EQ_INT(h[1], want1);
        }
        gs_free_data(ctx, d);
        d = NULL;
    }
    CHECK_EQ_INT(gs_ctx_error(ctx), GS_OK);
    gs_ctx_destroy(ctx);
}

/* each malformed file must fail with the given code and a message naming the file */
static void expect_npy_error(const char *name, gs_dtype want, gs_result code, const char *what) {
    gs_ctx *ctx = gst_ctx();
    char p[512];
    gs_shape s;
    void *d = (void *)&s;
    gs_result r;
    path_in_tmp(p, sizeof p, name);
    r = gs_npy_read(ctx, p, want, &s, &d);
    CHECK_MSG(r == code, "%s: got %s, expected %s (%s)", name, gs_result_str(r), gs_result_str(code),
              gs_ctx_error_msg(ctx));
    CHECK(d == NULL);
    CHECK_EQ_INT(gs_ctx_error(ctx), code);
    CHECK_MSG(strstr(gs_ctx_error_msg(ctx), name) != NULL, "%s: message lacks the path: %s", name,
              gs_ctx_error_msg(ctx));
    CHECK_MSG(strstr(gs_ctx_error_msg(ctx), what) != NULL, "%s: message lacks '%s': %s", name, what,
              gs_ctx_error_msg(ctx));
    gs_ctx_destroy(ctx);
}

static void test_npy_malformed(void) {
    float f[4] = {1, 2, 3, 4};
    const char *ok_hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }\n";
    write_bytes("empty.npy", "", 0);
    write_bytes("magic.npy", "\x93NUMPX\x01\x00\x10\x00{}", 12);
    write_bytes("short_len.npy", "\x93NUMPY\x02\x00\x10", 9);
    write_bytes("short_hdr.npy", "\x93NUMPY\x01\x00\x40\x00{'descr'", 17);
    make_npy("version.npy", 4, ok_hdr, f, sizeof f);
    make_npy("trunc.npy", 1, ok_hdr, f, sizeof f - 1);
    make_npy("long.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }\n", f, sizeof f);
    make_npy("fortran.npy", 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }\n", f, sizeof f);
    make_npy("big.npy", 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 2), }\n", f, sizeof f);
    make_npy("f16.npy", 1, "{'descr': '<f16', 'fortran_order': False, 'shape': (1,), }\n", f, sizeof f);
    make_npy("nokey.npy", 1, "{'descr': '<f4', 'shape': (4,), }\n", f, sizeof f);
    make_npy("extrakey.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'x': 1}\n", f, sizeof f);
    make_npy("negdim.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, -2), }\n", f, sizeof f);
    make_npy("notdict.npy", 1, "['descr', '<f4']\n", f, sizeof f);
    make_npy("garbage.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), } x\n", f, sizeof f);
    make_npy("rank9.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }\n", f, 4);
    make_npy("struct.npy", 1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (4,), }\n", f, sizeof f);
    make_npy("huge.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }\n", f,
             sizeof f);
    expect_npy_error("missing.npy", GS_F32, GS_ERR_IO, "cannot open");
    {
        char dir[512];
        path_in_tmp(dir, sizeof dir, "adir.npy");
        CHECK(mkdir(dir, 0700) == 0);
        expect_npy_error("adir.npy", GS_F32, GS_ERR_IO, "read error");
    }
    expect_npy_error("empty.npy", GS_F32, GS_ERR_PARSE, "not a .npy file");
    expect_npy_error("magic.npy", GS_F32, GS_ERR_PARSE, "not a .npy file");
    expect_npy_error("short_len.npy", GS_F32, GS_ERR_PARSE, "truncated");
    expect_npy_error("short_hdr.npy", GS_F32, GS_ERR_PARSE, "truncated");
    expect_npy_error("version.npy", GS_F32, GS_ERR_PARSE, "version 4.0");
    expect_npy_error("trunc.npy", GS_F32, GS_ERR_PARSE, "truncated");
    expect_npy_error("long.npy", GS_F32, GS_ERR_PARSE, "longer");
    expect_npy_error("fortran.npy", GS_F32, GS_ERR_PARSE, "Fortran");
    expect_npy_error("big.npy", GS_F32, GS_ERR_PARSE, "big-endian");
    expect_npy_error("f16.npy", GS_F32, GS_ERR_PARSE, "'<f16' is not supported");
    expect_npy_error("nokey.npy", GS_F32, GS_ERR_PARSE, "lacks");
    expect_npy_error("extrakey.npy", GS_F32, GS_ERR_PARSE, "key");
    expect_npy_error("negdim.npy", GS_F32, GS_ERR_PARSE, "shape");
    expect_npy_error("notdict.npy", GS_F32, GS_ERR_PARSE, "not a dict");
    expect_npy_error("garbage.npy", GS_F32, GS_ERR_PARSE, "after the dict");
    expect_npy_error("rank9.npy", GS_F32, GS_ERR_SHAPE, "GS_MAX_RANK");
    expect_npy_error("struct.npy", GS_F32, GS_ERR_PARSE, "descr");
    expect_npy_error("huge.npy", GS_F32, GS_ERR_SHAPE, "too large");
    make_npy("f4.npy", 1, ok_hdr, f, sizeof f);
    expect_npy_error("f4.npy", GS_S32, GS_ERR_SHAPE, "s32");
    expect_npy_error("f4.npy", GS_PRED, GS_ERR_SHAPE, "pred");
}

/* gs_npy_read_region: the region's values as gs_npy_read gives them (f32, bf16 rounded from an f32 file, s32),
   and the errors: another shape, a region outside, a file longer than its header says */
static void test_npy_read_region(void) {
    gs_ctx *ctx = gst_ctx();
    int64_t dims[3] = {3, 4, 5}, off[3] = {1, 1, 2}, cnt[3] = {2, 2, 3}, bad[3] = {2, 3, 2};
    static float f[60];
    static int32_t si[60];
    unsigned char want[12 * 4], got[12 * 4];
    void *whole = NULL;
    gs_shape s, back;
    char p[512], q[512];
    int i;
    FILE *fp;
    uint64_t rs = 3;
    for (i = 0; i < 60; i++) {
        f[i] = gst_randf(&rs) * 100.0f;
        si[i] = (int32_t)gst_randint(&rs, -1000, 1000);
    }
    s = gs_shape_make(GS_F32, 3, dims);
    snprintf(p, sizeof p, "%s/region_f32.npy", tmpdir);
    CHECK_OK(gs_npy_write(ctx, p, s, f));
    box_of(3, dims, off, cnt, 4, f, want);
    CHECK_OK(gs_npy_read_region(ctx, p, s, off, cnt, got));
    CHECK(memcmp(got, want, 12 * 4) == 0);
    /* bf16 from the f32 file: what gs_npy_read rounds to, at the same places */
    CHECK_OK(gs_npy_read(ctx, p, GS_BF16, &back, &whole));
    box_of(3, dims, off, cnt, 2, whole, want);
    gs_free_data(ctx, whole);
    CHECK_OK(gs_npy_read_region(ctx, p, gs_shape_make(GS_BF16, 3, dims), off, cnt, got));
    CHECK(memcmp(got, want, 12 * 2) == 0);
    snprintf(q, sizeof q, "%s/region_s32.npy", tmpdir);
    CHECK_OK(gs_npy_write(ctx, q, gs_shape_make(GS_S32, 3, dims), si));
    box_of(3, dims, off, cnt, 4, si, want);
    CHECK_OK(gs_npy_read_region(ctx, q, gs_shape_make(GS_S32, 3, dims), off, cnt, got));
    CHECK(memcmp(got, want, 12 * 4) == 0);
    /* the whole array as a region is gs_npy_read's array */
    {
        static float all[60];
        int64_t zero[3] = {0, 0, 0};
        CHECK_OK(gs_npy_read_region(ctx, p, s, zero, dims, all));
        CHECK(memcmp(all, f, sizeof f) == 0);
    }
    CHECK_ERR(gs_npy_read_region(ctx, p, gs_shape_make(GS_F32, 2, dims), off, cnt, got), GS_ERR_SHAPE,
              "holds f32[3,4,5] but f32[3,4] was expected");
    CHECK_ERR(gs_npy_read_region(ctx, p, s, bad, cnt, got), GS_ERR_INVALID_ARG, "does not lie inside the shape");
    CHECK_ERR(gs_npy_read_region(ctx, q, gs_shape_make(GS_F32, 3, dims), off, cnt, got), GS_ERR_SHAPE,
              "but f32 was expected");
    fp = fopen(p, "ab");
    CHECK(fp != NULL);
    if (fp) {
        fputc(0, fp);
        fclose(fp);
    }
    CHECK_ERR(gs_npy_read_region(ctx, p, s, off, cnt, got), GS_ERR_PARSE, "longer than its header's shape says");
    CHECK_ERR(gs_npy_read(ctx, p, GS_F32, &back, &whole), GS_ERR_PARSE, "longer than its header's shape says");
    gs_ctx_destroy(ctx);
}

static void test_npy_write_errors(void) {
    gs_ctx *ctx = gst_ctx();
    int64_t dims[2] = {2, -1};
    char p[512];
    float f[2] = {0, 0};
    snprintf(p, sizeof p, "%s/no/such/dir/x.npy", tmpdir);
    CHECK_EQ_INT(gs_npy_write(ctx, p, gs_shape_scalar(GS_F32), f), GS_ERR_IO);
    CHECK(strstr(gs_ctx_error_msg(ctx), p) != NULL);
    gs_ctx_clear_error(ctx);
    path_in_tmp(p, sizeof p, "w.npy");
    CHECK_EQ_INT(gs_npy_write(ctx, p, gs_shape_make(GS_F32, 2, dims), f), GS_ERR_INVALID_ARG);
    gs_ctx_clear_error(ctx);
    CHECK_EQ_INT(gs_npy_write(ctx, p, gs_shape_scalar(GS_TUPLE), f), GS_ERR_INVALID_ARG);
    gs_ctx_clear_error(ctx);
    CHECK_EQ_INT(gs_npy_write(ctx, p, gs_shape_scalar(GS_F32), NULL), GS_ERR_INVALID_ARG);
    gs_ctx_destroy(ctx);
}

/* ---- the driver ---- */
static const char *small_module =
    "HloModule small\n"
    "\n"
    "ENTRY main {\n"
    "  x = f32[2,3] parameter(0)\n"
    "  w = f32[3,2] parameter(1)\n"
    "  b = s32[4] parameter(2)\n"
    "  d = f32[2,2] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  bb = s32[4] add(b, b)\n"
    "  ROOT t = (f32[2,2], s32[4]) tuple(d, bb)\n"
    "}\n";

static void test_cli_print_round_trip(void) {
    char p1[512], p2[512];
    static char first[sizeof gst_cli_out], second[sizeof gst_cli_out];
    if (!have_cli()) return;
    write_text("small.hlo", small_module);
    CHECK_EQ_INT(gst_cli(tmpdir, "print %s/small.hlo", tmpdir), 0);
    CHECK_MSG(gst_cli_err[0] == 0, "stderr: %s", gst_cli_err);
    CHECK(strstr(gst_cli_out, "ENTRY") != NULL && strstr(gst_cli_out, "dot(") != NULL);
    path_in_tmp(p1, sizeof p1, "printed1.hlo");
    write_text("printed1.hlo", gst_cli_out);
    snprintf(first, sizeof first, "%s", gst_cli_out);
    CHECK_EQ_INT(gst_cli(tmpdir, "print %s", p1), 0);
    snprintf(second, sizeof second, "%s", gst_cli_out);
    CHECK_MSG(strcmp(first, second) == 0, "print is not a fixed point:\n%s\n---\n%s", first, second);
    /* '-' reads standard input */
    path_in_tmp(p2, sizeof p2, "small.hlo");
    CHECK_EQ_INT(gst_cli(tmpdir, "print - < %s", p2), 0);
    CHECK(strcmp(gst_cli_out, first) == 0);
    /* the example module */
    CHECK_EQ_INT(gst_cli(tmpdir, "print examples/mlp.hlo"), 0);
    CHECK_MSG(strstr(gst_cli_out, "reduce(") != NULL, "%s%s", gst_cli_out, gst_cli_err);
}

static void test_cli_eval_files(void) {
    gs_ctx *ctx;
    int64_t xd[2] = {2, 3}, wd[2] = {3, 2}, bd[1] = {4};
    float x[6] = {1, 2, 3, -1, 0.5f, 4}, w[6] = {0.5f, -1, 2, 0.25f, -3, 1};
    char p[512];
    gs_shape s;
    void *d = NULL;
    int i, j, k;
    if (!have_cli()) return;
    ctx = gst_ctx();
    write_text("small.hlo", small_module);
    path_in_tmp(p, sizeof p, "x.npy");
    CHECK_OK(gs_npy_write(ctx, p, gs_shape_make(GS_F32, 2, xd), x));
    path_in_tmp(p, sizeof p, "w.npy");
    CHECK_OK(gs_npy_write(ctx, p, gs_shape_make(GS_F32, 2, wd), w));
    /* x by name, w by number, b from the generator with seed 5 */
    CHECK_EQ_INT(gst_cli(tmpdir, "eval %s/small.hlo --input x=%s/x.npy --input=1=%s/w.npy --seed 5 --output-dir %s/out", tmpdir,
                     tmpdir, tmpdir, tmpdir), 0);
    CHECK_MSG(gst_cli_err[0] == 0, "stderr: %s", gst_cli_err);
    path_in_tmp(p, sizeof p, "out/out0.npy");
    CHECK_OK(gs_npy_read(ctx, p, GS_F32, &s, &d));
    CHECK_EQ_INT(s.rank, 2);
    CHECK_EQ_INT(s.dims[0], 2);
    CHECK_EQ_INT(s.dims[1], 2);
    for (i = 0; d && i < 2; i++)
        for (j = 0; j < 2; j++) {
            double acc = 0;
            for (k = 0; k < 3; k++) acc += (double)x[i * 3 + k] * w[k * 2 + j];
            CHECK_NEAR(((float *)d)[i * 2 + j], acc, 1e-5);
        }
    gs_free_data(ctx, d);
    d = NULL;
    path_in_tmp(p, sizeof p, "out/out1.npy");
    CHECK_OK(gs_npy_read(ctx, p, GS_S32, &s, &d));
    CHECK_EQ_INT(s.rank, 1);
    CHECK_EQ_INT(s.dims[0], bd[0]);
    for (i = 0; d && i < 4; i++) CHECK_EQ_INT(((int32_t *)d)[i], 2 * (int64_t)(ref_random_bits(5, 2, i) >> 61));
    gs_free_data(ctx, d);
    d = NULL;

    /* without --output-dir: a summary of each output */
    CHECK_EQ_INT(gst_cli(tmpdir, "eval %s/small.hlo --input x=%s/x.npy --input w=%s/w.npy", tmpdir, tmpdir, tmpdir), 0);
    CHECK_MSG(strstr(gst_cli_out, "out0: f32[2,2]") != NULL && strstr(gst_cli_out, "out1: s32[4]") != NULL &&
                  strstr(gst_cli_out, "min") != NULL && strstr(gst_cli_out, "mean") != NULL,
              "summary: %s", gst_cli_out);
    /* every input from the generator: seed 0 and seed 1 differ, the same seed repeats */
    CHECK_EQ_INT(gst_cli(tmpdir, "eval %s/small.hlo --seed=1", tmpdir), 0);
    {
        static char a[sizeof gst_cli_out];
        snprintf(a, sizeof a, "%s", gst_cli_out);
        CHECK_EQ_INT(gst_cli(tmpdir, "eval %s/small.hlo --seed 1", tmpdir), 0);
        CHECK(strcmp(a, gst_cli_out) == 0);
        CHECK_EQ_INT(gst_cli(tmpdir, "eval %s/small.hlo", tmpdir), 0);
        CHECK(strcmp(a, gst_cli_out) != 0);
    }
    gs_ctx_destroy(ctx);
}

static void test_cli_eval_example(void) {
    if (!have_cli()) return;
    CHECK_EQ_INT(gst_cli(tmpdir, "eval examples/mlp.hlo --seed 1 --output-dir %s/mlp", tmpdir), 0);
    CHECK_MSG(gst_cli_err[0] == 0, "stderr: %s", gst_cli_err);
    {
        gs_ctx *ctx = gst_ctx();
        char p[512];
        gs_shape s;
        void *d = NULL;
        int i, j;
        path_in_tmp(p, sizeof p, "mlp/out0.npy");
        CHECK_OK(gs_npy_read(ctx, p, GS_F32, &s, &d));
        CHECK_EQ_INT(s.rank, 2);
        CHECK_EQ_INT(s.dims[0], 8);
        CHECK_EQ_INT(s.dims[1], 4);
        for (i = 0; d && i < 8; i++) { /* softmax rows sum to 1 */
            double sum = 0;
            for (j = 0; j < 4; j++) sum += ((float *)d)[i * 4 + j];
            CHECK_NEAR(sum, 1.0, 1e-5);
        }
        gs_free_data(ctx, d);
        gs_ctx_destroy(ctx);
    }
}

/* A mistyped command or option is answered with the closest known one; messages name no C function; counts read
   as English. */
static void test_cli_suggestions(void) {
    if (!have_cli()) return;
    CHECK_EQ_INT(gst_cli(tmpdir, "parition examples/mlp.hlo --devices 4"), 2);
    CHECK_MSG(strstr(gst_cli_err, "unknown command 'parition'; did you mean 'partition'?") != NULL, "stderr: %s", gst_cli_err);
    CHECK_EQ_INT(gst_cli(tmpdir, "--verison"), 2);
    CHECK_MSG(strstr(gst_cli_err, "did you mean '--version'?") != NULL, "stderr: %s", gst_cli_err);
    CHECK_EQ_INT(gst_cli(tmpdir, "run examples/mlp.hlo --devics 4"), 2);
    CHECK_MSG(strstr(gst_cli_err, "gshard run: unknown option '--devics'; did you mean '--devices'?") != NULL, "stderr: %s",
              gst_cli_err);
    CHECK_EQ_INT(gst_cli(tmpdir, "eval examples/mlp.hlo --sed=1"), 2);   /* the "=VALUE" is not part of the match */
    CHECK_MSG(strstr(gst_cli_err, "did you mean '--seed'?") != NULL, "stderr: %s", gst_cli_err);
    CHECK_EQ_INT(gst_cli(tmpdir, "cost examples/mlp.hlo --jsn"), 2);
    CHECK_MSG(strstr(gst_cli_err, "gshard cost: unknown option '--jsn'; did you mean '--json'?") != NULL, "stderr: %s",
              gst_cli_err);
    /* only options of the command are offered: --check belongs to run, not partition */
    CHECK_EQ_INT(gst_cli(tmpdir, "partition examples/mlp.hlo --devices 4 --checks"), 2);
    CHECK_MSG(strstr(gst_cli_err, "unknown option '--checks'") != NULL && strstr(gst_cli_err, "did you mean") == NULL,
              "stderr: %s", gst_cli_err);
    /* nothing close: no suggestion */
    CHECK_EQ_INT(gst_cli(tmpdir, "frobnicate"), 2);
    CHECK_MSG(strstr(gst_cli_err, "did you mean") == NULL, "stderr: %s", gst_cli_err);
    CHECK_EQ_INT(gst_cli(tmpdir, "print examples/mlp.hlo --xyz"), 2);
    CHECK_MSG(strstr(gst_cli_err, "did you mean") == NULL, "stderr: %s", gst_cli_err);
    CHECK_EQ_INT(gst_cli(tmpdir, "ru examples/mlp.hlo"), 2);   /* two letters: one edit is half of it */
    CHECK_MSG(strstr(gst_cli_err, "did you mean") == NULL, "stderr: %s", gst_cli_err);
    /* a library error seen from the shell: the message without the C function that reported it */
    CHECK_EQ_INT(gst_cli(tmpdir, "run --spmd examples/spmd_matmul.hlo --devices 2 --seed 1"), 2);
    CHECK_MSG(strstr(gst_cli_err, "spmd_matmul.hlo: main is written for 4 partitions but the runtime has 2 devices") != NULL,
              "stderr: %s", gst_cli_err);
    CHECK_MSG(strstr(gst_cli_err, "gs_") == NULL, "stderr: %s", gst_cli_err);
    /* --stats: a collective that ran once says so */
    CHECK_EQ_INT(gst_cli(tmpdir, "run --spmd examples/spmd_matmul.hlo --devices 4 --seed 1 --stats"), 0);
    CHECK_MSG(strstr(gst_cli_out, "ran once per device") != NULL, "stdout: %s", gst_cli_out);
    CHECK(strstr(gst_cli_out, " 1 times") == NULL);
}

static void test_cli_errors(void) {
    if (!have_cli()) return;
    /* usage */
    CHECK_EQ_INT(gst_cli(tmpdir, "%s", ""), 2);
    CHECK(strstr(gst_cli_err, "usage") != NULL);
    CHECK_EQ_INT(gst_cli(tmpdir, "--help"), 0);
    CHECK(strstr(gst_cli_out, "usage: gshard") != NULL && strstr(gst_cli_out, "--output-dir") != NULL);
    CHECK_EQ_INT(gst_cli(tmpdir, "--version"), 0);
    CHECK(strstr(gst_cli_out, GS_VERSION_STRING) != NULL);
    CHECK_EQ_INT(gst_cli(tmpdir, "frobnicate x.hlo"), 2);
    CHECK(strstr(gst_cli_err, "unknown command 'frobnicate'") != NULL);
    CHECK_EQ_INT(gst_cli(tmpdir, "--frobnicate"), 2);
    CHECK_EQ_INT(gst_cli(tmpdir, "partition examples/mlp.hlo"), 2);   /* --devices is required */
    CHECK_EQ_INT(gst_cli(tmpdir, "run examples/mlp.hlo"), 2);
    CHECK_EQ_INT(gst_cli(tmpdir, "cost examples/mlp.hlo"), 2);
    CHECK(strstr(gst_cli_err, "--chip NAME is required") != NULL); /* the cost command: tests/test_cost.c */
    CHECK_EQ_INT(gst_cli(tmpdir, "print"), 2);
    CHECK(strstr(gst_cli_err, "FILE is missing") != NULL);
    CHECK_EQ_INT(gst_cli(tmpdir, "print a.hlo b.hlo"), 2);
    CHECK_EQ_INT(gst_cli(tmpdir, "print examples/mlp.hlo --seed 1"), 2); /* io options belong to eval */
    CHECK_EQ_INT(gst_cli(tmpdir, "eval examples/mlp.hlo --bogus"), 2);
    CHECK(strstr(gst_cli_err, "unknown option '--bogus'") != NULL);
    CHECK_EQ_INT(gst_cli(tmpdir, "eval examples/mlp.hlo --seed"), 2);
    CHECK_EQ_INT(gst_cli(tmpdir, "eval examples/mlp.hlo --seed -3"), 2);
    CHECK_EQ_INT(gst_cli(tmpdir, "eval examples/mlp.hlo --seed 99999999999999999999999"), 2);
    CHECK_EQ_INT(gst_cli(tmpdir, "eval examples/mlp.hlo --input x"), 2);
    /* files */
    CHECK_EQ_INT(gst_cli(tmpdir, "print %s/does_not_exist.hlo", tmpdir), 2);
    CHECK(strstr(gst_cli_err, "does_not_exist.hlo: cannot open") != NULL);
    write_text("bad.hlo", "HloModule bad\n\nENTRY main {\n  x = f32[2] parameter(0)\n  ROOT y = f32[2] frob(x)\n}\n");
    CHECK_EQ_INT(gst_cli(tmpdir, "print %s/bad.hlo", tmpdir), 2);
    CHECK_MSG(strstr(gst_cli_err, "bad.hlo: line 5") != NULL, "stderr: %s", gst_cli_err);
    CHECK(gst_cli_out[0] == 0);
    CHECK_EQ_INT(gst_cli(tmpdir, "eval %s/bad.hlo", tmpdir), 2);
    write_text("shape.hlo",
               "HloModule bad\n\nENTRY main {\n  x = f32[2] parameter(0)\n  ROOT y = f32[3] negate(x)\n}\n");
    CHECK_EQ_INT(gst_cli(tmpdir, "print %s/shape.hlo", tmpdir), 2);
    CHECK_MSG(strstr(gst_cli_err, "shape.hlo: ") != NULL, "stderr: %s", gst_cli_err);
    write_bytes("empty.hlo", "", 0);
    CHECK_EQ_INT(gst_cli(tmpdir, "print %s/empty.hlo", tmpdir), 2);
    CHECK_EQ_INT(gst_cli(tmpdir, "print - < /dev/null"), 2);
    CHECK(strstr(gst_cli_err, "<stdin>") != NULL);
    /* inputs that do not fit */
    write_text("small.hlo", small_module);
    {
        gs_ctx *ctx = gst_ctx();
        char p[512];
        int64_t d3[1] = {3};
        float v[3] = {1, 2, 3};
        path_in_tmp(p, sizeof p, "v3.npy");
        CHECK_OK(gs_npy_write(ctx, p, gs_shape_make(GS_F32, 1, d3), v));
        gs_ctx_destroy(ctx);
    }
    CHECK_EQ_INT(gst_cli(tmpdir, "eval %s/small.hlo --input x=%s/v3.npy", tmpdir, tmpdir), 2);
    CHECK_MSG(strstr(gst_cli_err, "f32[3]") != NULL && strstr(gst_cli_err, "f32[2,3]") != NULL, "stderr: %s", gst_cli_err);
    CHECK_EQ_INT(gst_cli(tmpdir, "eval %s/small.hlo --input b=%s/v3.npy", tmpdir, tmpdir), 2); /* f4 for an s32 parameter */
    CHECK_EQ_INT(gst_cli(tmpdir, "eval %s/small.hlo --input nosuch=%s/v3.npy", tmpdir, tmpdir), 2);
    CHECK(strstr(gst_cli_err, "nosuch") != NULL);
    CHECK_EQ_INT(gst_cli(tmpdir, "eval %s/small.hlo --input 7=%s/v3.npy", tmpdir, tmpdir), 2);
    CHECK_EQ_INT(gst_cli(tmpdir, "eval %s/small.hlo --input x=%s/missing.npy", tmpdir, tmpdir), 2);
    CHECK(strstr(gst_cli_err, "missing.npy: cannot open") != NULL);
    CHECK_EQ_INT(gst_cli(tmpdir, "eval %s/small.hlo --input x=%s/v3.npy --input 0=%s/v3.npy", tmpdir, tmpdir, tmpdir), 2);
    write_text("notdir", "a file");
    CHECK_EQ_INT(gst_cli(tmpdir, "eval %s/small.hlo --output-dir %s/notdir", tmpdir, tmpdir), 2);
}

/* gshard propagate: the MoE layer from its three annotations, --explain, --show, and bad usage */
static void test_cli_propagate(void) {
    if (!have_cli()) return;
    CHECK_EQ_INT(gst_cli(tmpdir, "propagate examples/moe_layer.hlo --devices 8 --explain --show dispatched_dot"), 0);
    CHECK(strstr(gst_cli_out, "logits = f32[8,32,16] dot(inputs_split, wg_replicated), lhs_contracting_dims={2}, "
                          "rhs_contracting_dims={0}, sharding={devices=[8,1,1]<=[8]}") != NULL);
    CHECK(strstr(gst_cli_out, "h = f32[16,8,4,32] maximum(h_linear, broadcast.102), sharding={devices=[8,1,1,1]<=[8]}") != NULL);
    CHECK(strstr(gst_cli_out, "expert_outputs = f32[8,16,4,16] transpose(expert_outputs_dot), dimensions={1,0,2,3}, "
                          "sharding={devices=[1,8,1,1]<=[8]}") != NULL);
    CHECK(strstr(gst_cli_out, "RESHARD: the operands imply {devices=[1,8,1,1]<=[8]} */\n  dispatched = ") != NULL);
    CHECK(strstr(gst_cli_out, "/* forward from operand inputs_split (rule dot, level 1); from the annotation on inputs_split */\n  logits") != NULL);
    CHECK(strstr(gst_cli_out, "dispatched_dot: f32[8,16,4,16] {devices=[8,1,1,1]<=[8]}") != NULL);
    /* a tuple value: one drawing per element */
    CHECK_EQ_INT(gst_cli(tmpdir, "propagate examples/moe_layer.hlo --devices 8 --show layer_outputs"), 0);
    CHECK(strstr(gst_cli_out, "layer_outputs, element 0: f32[8,32,16] {devices=[8,1,1]<=[8]}") != NULL);
    CHECK(strstr(gst_cli_out, "layer_outputs, element 1: f32[] {replicated}") != NULL);
    /* without --explain: no comments, and the text parses back to the same module */
    CHECK_EQ_INT(gst_cli(tmpdir, "propagate examples/moe_layer.hlo --devices 8"), 0);
    CHECK(strstr(gst_cli_out, "/*") == NULL && strstr(gst_cli_out, "sharding={devices=[8,1,1,1]<=[8]}") != NULL);
    /* bad usage */
    CHECK_EQ_INT(gst_cli(tmpdir, "propagate examples/moe_layer.hlo"), 2);
    CHECK(strstr(gst_cli_err, "--devices D is required") != NULL);
    CHECK_EQ_INT(gst_cli(tmpdir, "propagate examples/moe_layer.hlo --devices 0"), 2);
    CHECK_EQ_INT(gst_cli(tmpdir, "propagate examples/moe_layer.hlo --devices 4"), 2);
    CHECK(strstr(gst_cli_err, "num_partitions=8 but --devices is 4") != NULL);
    CHECK_EQ_INT(gst_cli(tmpdir, "propagate examples/mlp.hlo --devices 4 --show nosuch"), 2);
    CHECK(strstr(gst_cli_err, "no instruction named 'nosuch'") != NULL);
    CHECK_EQ_INT(gst_cli(tmpdir, "propagate examples/moe_layer.hlo --devices 8 --seed 3"), 2);
}

/* ---- partition and run ---- */
/* x split over two devices and summed: with x = [1e8, 1, -1e8, 1] the reference adds left to right and gets
   1 (1e8 + 1 rounds back to 1e8), each device sums its half (1e8 and -1e8) and the all-reduce gives 0 */
static const char *sum_module =
    "HloModule sum\n"
    "\n"
    "add {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  ROOT c = f32[] add(a, b)\n"
    "}\n"
    "\n"
    "ENTRY main {\n"
    "  x = f32[4] parameter(0), sharding={devices=[2]<=[2]}\n"
    "  zero = f32[] constant(0)\n"
    "  s = f32[] reduce(x, zero), dimensions={0}, to_apply=add\n"
    "  two = f32[] constant(2)\n"
    "  ROOT y = f32[] multiply(s, two)\n"
    "}\n";

/* a reshard that can only go through the whole array: 6 elements in tiles of 2 -> tiles of 3 */
static const char *remat_module =
    "HloModule remat\n"
    "\n"
    "ENTRY main {\n"
    "  x = f32[6] parameter(0), sharding={devices=[4]<=[4]}\n"
    "  n = f32[6] negate(x)\n"
    "  ROOT y = f32[6] custom-call(n), custom_call_target=\"Sharding\", sharding={devices=[2,2]<=[4] last_tile_dim_replicate}\n"
    "}\n";

/* both operands split on the contracting dim, a tall result */
static const char *kdot_module =
    "HloModule kdot\n"
    "\n"
    "ENTRY main {\n"
    "  a = f32[256,64] parameter(0), sharding={devices=[1,4]<=[4]}\n"
    "  b = f32[64,256] parameter(1), sharding={devices=[4,1]<=[4]}\n"
    "  ROOT d = f32[256,256] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}\n"
    "}\n";

static void test_cli_partition(void) {
    char p[512];
    if (!have_cli()) return;
    write_text("sum.hlo", sum_module);
    CHECK_EQ_INT(gst_cli(tmpdir, "partition %s/sum.hlo --devices 2", tmpdir), 0);
    CHECK_MSG(gst_cli_err[0] == 0, "stderr: %s", gst_cli_err);
    CHECK_MSG(strstr(gst_cli_out, "num_partitions=2") && strstr(gst_cli_out, "x = f32[2] parameter(0)") &&
                  strstr(gst_cli_out, "all-reduce(") && !strstr(gst_cli_out, "//"),
              "%s", gst_cli_out);
    /* the SPMD program is HLO text that parses back */
    write_text("sum_spmd.hlo", gst_cli_out);
    CHECK_EQ_INT(gst_cli(tmpdir, "print %s/sum_spmd.hlo", tmpdir), 0);
    CHECK_MSG(strstr(gst_cli_out, "all-reduce(") != NULL, "%s%s", gst_cli_out, gst_cli_err);
    /* --explain: the source instruction and strategy above its instructions */
    CHECK_EQ_INT(gst_cli(tmpdir, "partition %s/sum.hlo --devices 2 --explain", tmpdir), 0);
    CHECK_MSG(strstr(gst_cli_out, "// s = reduce") != NULL && strstr(gst_cli_out, "all-reduce over 2 devices") != NULL, "%s", gst_cli_out);
    /* the comment comes before the first instruction of its group, the all-reduce has a name of its own and
       says why it is there, its bytes and time on the chip */
    {
        const char *c = strstr(gst_cli_out, "// s = reduce"), *red = strstr(gst_cli_out, " reduce(");
        const char *ar = strstr(gst_cli_out, "all-reduce(");
        CHECK_MSG(c && red && ar && c < red && red < ar, "%s", gst_cli_out);
        CHECK_MSG(strstr(gst_cli_out, "  s = f32[] reduce(") && strstr(gst_cli_out, "= f32[] all-reduce(s)") &&
                      strstr(gst_cli_out, "combines the partial results of s (reduce)") &&
                      strstr(gst_cli_out, "per device, ") && strstr(gst_cli_out, " on v5e"),
                  "%s", gst_cli_out);
    }
    write_text("sum_explained.hlo", gst_cli_out);
    CHECK_EQ_INT(gst_cli(tmpdir, "print %s/sum_explained.hlo", tmpdir), 0);
    CHECK_EQ_INT(gst_cli(tmpdir, "partition %s/sum.hlo --devices 2 --explain --chip v4p", tmpdir), 0);
    CHECK_MSG(strstr(gst_cli_out, " on v4p") != NULL, "%s", gst_cli_out);
    /* a dot: every strategy weighed with bytes and time; one forced by --strategy, on partition and run */
    write_text("kdot.hlo", kdot_module);
    CHECK_EQ_INT(gst_cli(tmpdir, "partition %s/kdot.hlo --devices 4 --explain", tmpdir), 0);
    CHECK_MSG(strstr(gst_cli_out, "strategies weighed on v5e (--strategy d=NAME") && strstr(gst_cli_out, "//   * output ") &&
                  strstr(gst_cli_out, "//     lhs        contracting dim split 4-way: sends ") &&
                  strstr(gst_cli_out, "reshards a from {devices=[1,4]<=[4]} to {replicated}, the sharding d (dot) needs") &&
                  strstr(gst_cli_out, "annotating a with sharding={replicated} would remove it"),
              "%s", gst_cli_out);
    write_text("kdot_explained.hlo", gst_cli_out);   /* the comments keep it HLO text */
    CHECK_EQ_INT(gst_cli(tmpdir, "print %s/kdot_explained.hlo", tmpdir), 0);
    CHECK_EQ_INT(gst_cli(tmpdir, "partition %s/kdot.hlo --devices 4 --strategy d=lhs+rhs", tmpdir), 0);
    CHECK_MSG(strstr(gst_cli_out, "all-reduce(d)") && !strstr(gst_cli_out, "all-gather("), "%s", gst_cli_out);
    CHECK_EQ_INT(gst_cli(tmpdir, "run %s/kdot.hlo --devices 4 --strategy d=lhs --check", tmpdir), 0);
    CHECK_MSG(strstr(gst_cli_out, "check: ok") != NULL, "%s%s", gst_cli_out, gst_cli_err);
    CHECK_EQ_INT(gst_cli(tmpdir, "partition %s/kdot.hlo --devices 4 --strategy e=lhs", tmpdir), 2);
    CHECK_MSG(strstr(gst_cli_err, "strategy for 'e': no such instruction; the dots and convolutions of main: d"), "%s", gst_cli_err);
    CHECK_EQ_INT(gst_cli(tmpdir, "partition %s/kdot.hlo --devices 4 --strategy d=fast", tmpdir), 2);
    CHECK_MSG(strstr(gst_cli_err, "no strategy 'fast'; the strategies: output, lhs, rhs, lhs+rhs"), "%s", gst_cli_err);
    CHECK_EQ_INT(gst_cli(tmpdir, "run %s/kdot.hlo --devices 4 --strategy d", tmpdir), 2);
    CHECK_EQ_INT(gst_cli(tmpdir, "partition %s/kdot.hlo --devices 4 --chip v9", tmpdir), 2);
    CHECK_MSG(strstr(gst_cli_err, "unknown chip 'v9'"), "%s", gst_cli_err);
    /* the MoE layer: one all-to-all into the experts and one back, nothing replicated; and it runs correctly */
    CHECK_EQ_INT(gst_cli(tmpdir, "partition examples/moe_layer.hlo --devices 8"), 0);
    {
        const char *a2a = strstr(gst_cli_out, "all-to-all(");
        CHECK(a2a && strstr(a2a + 1, "all-to-all(") && !strstr(strstr(a2a + 1, "all-to-all(") + 1, "all-to-all("));
        CHECK(!strstr(gst_cli_out, "all-gather(") && gst_cli_err[0] == 0);
    }
    CHECK_EQ_INT(gst_cli(tmpdir, "run examples/moe_layer.hlo --devices 8 --seed 5 --check"), 0);
    CHECK_MSG(strstr(gst_cli_out, "check: ok") != NULL, "%s%s", gst_cli_out, gst_cli_err);
    /* a full rematerialization is a warning on stderr, not an error */
    write_text("remat.hlo", remat_module);
    CHECK_EQ_INT(gst_cli(tmpdir, "partition %s/remat.hlo --devices 4", tmpdir), 0);
    CHECK_MSG(strstr(gst_cli_err, "remat.hlo: warning: involuntary full rematerialization at y") != NULL, "stderr: %s", gst_cli_err);
    CHECK(strstr(gst_cli_out, "all-gather(") != NULL);
    /* errors */
    CHECK_EQ_INT(gst_cli(tmpdir, "partition %s/sum.hlo", tmpdir), 2);
    CHECK(strstr(gst_cli_err, "--devices D is required") != NULL);
    CHECK_EQ_INT(gst_cli(tmpdir, "partition examples/moe_layer.hlo --devices 4"), 2);
    CHECK(strstr(gst_cli_err, "num_partitions=8 but --devices is 4") != NULL);
    /* already an SPMD program: read as an unpartitioned one (partition-id 0, the all-reduce without channel_id
       across the one replica), with a warning saying so */
    CHECK_EQ_INT(gst_cli(tmpdir, "partition examples/spmd_matmul.hlo --devices 4"), 0);
    CHECK_MSG(strstr(gst_cli_err, "spmd_matmul.hlo: warning: all-reduce y has no channel_id") != NULL &&
              strstr(gst_cli_err, "run --spmd") != NULL, "stderr: %s", gst_cli_err);
    CHECK_EQ_INT(gst_cli(tmpdir, "partition %s/sum.hlo --devices 2 --seed 1", tmpdir), 2);   /* io options belong to run */
    path_in_tmp(p, sizeof p, "missing.hlo");
    CHECK_EQ_INT(gst_cli(tmpdir, "partition %s --devices 2", p), 2);
}

static void test_cli_run_check(void) {
    gs_ctx *ctx;
    int64_t d4[1] = {4};
    float x[4] = {1e8f, 1, -1e8f, 1};
    char p[512];
    gs_shape s;
    void *d = NULL;
    if (!have_cli()) return;
    ctx = gst_ctx();
    write_text("sum.hlo", sum_module);
    path_in_tmp(p, sizeof p, "big.npy");
    CHECK_OK(gs_npy_write(ctx, p, gs_shape_make(GS_F32, 1, d4), x));
    /* run writes the gathered outputs, as eval does: 0 partitioned, 2 on one device */
    CHECK_EQ_INT(gst_cli(tmpdir, "run %s/sum.hlo --devices 2 --input x=%s/big.npy --output-dir %s/run", tmpdir, tmpdir, tmpdir), 0);
    CHECK_MSG(gst_cli_err[0] == 0 && gst_cli_out[0] == 0, "%s%s", gst_cli_out, gst_cli_err);
    path_in_tmp(p, sizeof p, "run/out0.npy");
    CHECK_OK(gs_npy_read(ctx, p, GS_F32, &s, &d));
    CHECK_EQ_INT(s.rank, 0);
    if (d) CHECK_NEAR(((float *)d)[0], 0.0, 0.0);
    gs_free_data(ctx, d);
    d = NULL;
    CHECK_EQ_INT(gst_cli(tmpdir, "eval %s/sum.hlo --input x=%s/big.npy --output-dir %s/ev", tmpdir, tmpdir, tmpdir), 0);
    path_in_tmp(p, sizeof p, "ev/out0.npy");
    CHECK_OK(gs_npy_read(ctx, p, GS_F32, &s, &d));
    if (d) CHECK_NEAR(((float *)d)[0], 2.0, 0.0);
    gs_free_data(ctx, d);
    d = NULL;
    /* --check: exit 1, the first instruction that differs, its device and both values */
    CHECK_EQ_INT(gst_cli(tmpdir, "run %s/sum.hlo --devices 2 --input x=%s/big.npy --check", tmpdir, tmpdir), 1);
    CHECK_MSG(strstr(gst_cli_err, "sum.hlo: check: first difference at reduce s, element [] on device 0: got 0, want 1") != NULL &&
                  strstr(gst_cli_err, "output 0 (y) element [] on device 0: got 0, want 2") != NULL,
              "stderr: %s", gst_cli_err);
    CHECK(strstr(gst_cli_out, "out0: f32[]") != NULL);   /* the outputs are still written */
    /* a tolerance that covers it: |0 - 2| <= 3 */
    CHECK_EQ_INT(gst_cli(tmpdir, "run %s/sum.hlo --devices 2 --input x=%s/big.npy --check --atol 3 --lockstep", tmpdir, tmpdir), 0);
    CHECK_MSG(strstr(gst_cli_out, "check: ok, 1 elements match the reference") != NULL, "%s%s", gst_cli_out, gst_cli_err);
    /* a difference far below the default tolerance (the reference's 2e-8 against the partitioned 0): ok by
       default; an explicit --atol 0 (rtol 1e-5) or --rtol 0 --atol 0 (exact) finds it */
    {
        float tiny[4] = {1, 1e-8f, -1, 1e-8f};
        path_in_tmp(p, sizeof p, "tiny.npy");
        CHECK_OK(gs_npy_write(ctx, p, gs_shape_make(GS_F32, 1, d4), tiny));
        CHECK_EQ_INT(gst_cli(tmpdir, "run %s/sum.hlo --devices 2 --input x=%s/tiny.npy --check", tmpdir, tmpdir), 0);
        CHECK_EQ_INT(gst_cli(tmpdir, "run %s/sum.hlo --devices 2 --input x=%s/tiny.npy --check --atol 0", tmpdir, tmpdir), 1);
        CHECK_EQ_INT(gst_cli(tmpdir, "run %s/sum.hlo --devices 2 --input x=%s/tiny.npy --check --rtol 0 --atol 0", tmpdir,
                             tmpdir), 1);
        CHECK_MSG(strstr(gst_cli_err, "tolerance 0 + 0 * |want|") != NULL, "stderr: %s", gst_cli_err);
        CHECK_EQ_INT(gst_cli(tmpdir, "run %s/sum.hlo --devices 2 --input x=%s/tiny.npy --check --rtol 0 --atol 1e-7", tmpdir,
                             tmpdir), 0);
    }
    /* generated inputs add up without trouble; --stats; an uneven split over 4 devices */
    CHECK_EQ_INT(gst_cli(tmpdir, "run %s/sum.hlo --devices 2 --seed 4 --check --stats", tmpdir), 0);
    CHECK_MSG(strstr(gst_cli_out, "check: ok") != NULL && strstr(gst_cli_out, "stats: 2 devices (threaded, ") != NULL &&
                  strstr(gst_cli_out, "all-reduce") != NULL,
              "%s%s", gst_cli_out, gst_cli_err);
    write_text("remat.hlo", remat_module);
    CHECK_EQ_INT(gst_cli(tmpdir, "run %s/remat.hlo --devices 4 --seed 2 --check --lockstep --output-dir %s/remat", tmpdir, tmpdir), 0);
    CHECK_MSG(strstr(gst_cli_out, "check: ok, 6 elements") != NULL && strstr(gst_cli_err, "warning: involuntary") != NULL,
              "%s%s", gst_cli_out, gst_cli_err);
    {
        /* the gathered output is -x, x from the generator */
        float xs[6];
        int i;
        int64_t d6[1] = {6};
        gs_fill_random(gs_shape_make(GS_F32, 1, d6), 2, 0, xs);
        path_in_tmp(p, sizeof p, "remat/out0.npy");
        CHECK_OK(gs_npy_read(ctx, p, GS_F32, &s, &d));
        CHECK_EQ_INT(s.dims[0], 6);
        for (i = 0; d && i < 6; i++) CHECK_NEAR(((float *)d)[i], -xs[i], 0.0);
        gs_free_data(ctx, d);
        d = NULL;
    }
    /* bad usage */
    CHECK_EQ_INT(gst_cli(tmpdir, "run %s/sum.hlo", tmpdir), 2);
    CHECK(strstr(gst_cli_err, "--devices D is missing") != NULL);
    CHECK_EQ_INT(gst_cli(tmpdir, "run --spmd %s/sum.hlo --devices 2 --check", tmpdir), 2);
    CHECK(strstr(gst_cli_err, "give the unpartitioned FILE without --spmd") != NULL);
    CHECK_EQ_INT(gst_cli(tmpdir, "run %s/sum.hlo --devices 2 --atol 1", tmpdir), 2);
    CHECK(strstr(gst_cli_err, "only apply with --check") != NULL);
    CHECK_EQ_INT(gst_cli(tmpdir, "run %s/sum.hlo --devices 2 --rtol 0", tmpdir), 2);   /* given, even as 0 */
    CHECK(strstr(gst_cli_err, "only apply with --check") != NULL);
    CHECK_EQ_INT(gst_cli(tmpdir, "run %s/sum.hlo --devices 2 --fast-reduce", tmpdir), 2);   /* gshard-mpi only */
    CHECK(strstr(gst_cli_err, "--fast-reduce applies to gshard-mpi") != NULL);
    CHECK_EQ_INT(gst_cli(tmpdir, "run %s/sum.hlo --devices 2 --check --rtol x", tmpdir), 2);
    CHECK_EQ_INT(gst_cli(tmpdir, "run %s/sum.hlo --devices 2 --check --atol -1", tmpdir), 2);
    CHECK_EQ_INT(gst_cli(tmpdir, "run %s/sum.hlo --devices 3", tmpdir), 2);   /* 4 elements split 2 ways on 3 devices */
    CHECK_MSG(strstr(gst_cli_err, "sum.hlo: ") != NULL, "stderr: %s", gst_cli_err);
    gs_ctx_destroy(ctx);
}

void suite_cli(void) {
    char cmd[512];
    snprintf(tmpdir, sizeof tmpdir, "%s/gshard_test_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir)) {
        fprintf(stderr, "suite_cli: cannot create a temporary directory\n");
        snprintf(tmpdir, sizeof tmpdir, ".");
    }
    RUN(test_fill_random_formula);
    RUN(test_fill_random_region);
    RUN(test_npy_round_trip);
    RUN(test_npy_header_layout);
    RUN(test_npy_foreign_files);
    RUN(test_npy_malformed);
    RUN(test_npy_write_errors);
    RUN(test_npy_read_region);
    RUN(test_cli_print_round_trip);
    RUN(test_cli_eval_files);
    RUN(test_cli_eval_example);
    RUN(test_cli_errors);
    RUN(test_cli_suggestions);
    RUN(test_cli_propagate);
    RUN(test_cli_partition);
    RUN(test_cli_run_check);
    if (strcmp(tmpdir, ".") != 0) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        if (system(cmd) != 0) fprintf(stderr, "suite_cli: could not remove %s\n", tmpdir);
    }
}
