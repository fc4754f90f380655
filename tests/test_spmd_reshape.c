/* test_spmd_reshape.c - reshapes whose split only partly lines up (gcd factors), partial sums that
   reduce-scatter straight into the split their only user wants, and an all-reduce kept in a manual region. Every case is partitioned, run on lockstep
   devices with NaN-poisoned padding and compared with the reference interpreter (spmd_case.h); the collective
   counts asserted are worked out by hand in the comments. */
#include "spmd_case.h"

#define ADD_F32 "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT r = f32[] add(x, y)\n}\n"

/* x[12,8]{2,4} -> r[8,12]{8,1}: r's row i is x's elements [12i, 12i+12), so r split 4 ways is x split 4 ways
   along rows (3 rows of 8 each); the operand needs at most 3x8 = 24 elements per device, never the whole 96 */
static void test_reshape_partial_gcd(void) {
    gst_case h;
    if (gst_case_run(&h, "", "  x = f32[12,8] parameter(0), sharding={devices=[2,4]<=[8]}\n"
                             "  r = f32[8,12] reshape(x), sharding={devices=[8,1]<=[8]}\n"
                             "  ROOT z = f32[8,12] negate(r), sharding={devices=[8,1]<=[8]}\n", 8, 0, 1)) {
        CHECK_MSG(h.ag_max_numel <= 24, "largest all-gather %lld elements\n%s", (long long)h.ag_max_numel, h.text);
        CHECK_MSG(strstr(h.explain, "split both sides keep"), "%s", h.explain);
    }
    gs_ctx_destroy(h.ctx);
    /* x[6,4,8]{2,1,2} -> r[4,6,8]{2,1,2}: 3 rows of 4 = 12 elements = 2 rows of 6, and dim 8 is 1:1; every tile
       reshapes alone, no collective */
    if (gst_case_run(&h, "", "  x = f32[6,4,8] parameter(0), sharding={devices=[2,1,2]<=[4]}\n"
                             "  ROOT r = f32[4,6,8] reshape(x), sharding={devices=[2,1,2]<=[4]}\n", 4, 0, 2)) {
        CHECK_EQ_INT(h.ag + h.a2a + h.cp + h.ar + h.rs, 0);
    }
    gs_ctx_destroy(h.ctx);
    /* x[8,16] -> r[8,1,16]{1,2,4}: the split size-1 dim holds data only on its first tile; x held as
       {1,4 rep 2} with devices j and j+4 on column block j, which is the block r's devices j and j+4 need
       (XLA groups devices {2j, 2j+1} here, and would move data) */
    if (gst_case_run(&h, "", "  p = f32[8,16] parameter(0), sharding={replicated}\n"
                             "  x = f32[8,16] copy(p)\n"
                             "  ROOT r = f32[8,1,16] reshape(x), sharding={devices=[1,2,4]<=[8]}\n", 8, 0, 3)) {
        CHECK_EQ_INT(h.ag + h.a2a + h.cp + h.ar + h.rs, 0);
    }
    gs_ctx_destroy(h.ctx);
    /* uneven: x[10,6]{4,1} -> r[6,10]{4,1} (tiles of 3 and 2 rows): nothing lines up, the result is still right */
    if (gst_case_run(&h, "", "  x = f32[10,6] parameter(0), sharding={devices=[4,1]<=[4]}\n"
                             "  ROOT r = f32[6,10] reshape(x), sharding={devices=[4,1]<=[4]}\n", 4, 0, 4)) {
        CHECK(h.text != NULL);
    }
    gs_ctx_destroy(h.ctx);
}

/* n split into up to 3 dims at random (each > 1 unless n is 1) */
static int rs_factor(uint64_t *st, int64_t n, int64_t *dims) {
    int r = 0, want = (int)gst_randint(st, 1, 3);
    while (r < want - 1 && n > 1) {
        int64_t divs[64], c = 0, d;
        for (d = 2; d < n && c < 64; d++)
            if (n % d == 0) divs[c++] = d;
        if (!c) break;
        d = divs[gst_randint(st, 0, c - 1)];
        dims[r++] = d;
        n /= d;
    }
    dims[r++] = n;
    return r;
}

/* a random tiled sharding of dims over D devices: one or two dims split by divisors of D, the rest replicated */
static void rs_sharding(uint64_t *st, int rank, int64_t D, char *buf, size_t cap) {
    int64_t k[4] = {1, 1, 1, 1}, left = D, rep;
    int n = 0, d, splits = (int)gst_randint(st, 1, 2);
    while (splits-- > 0) {
        int64_t divs[16], c = 0, x;
        for (x = 2; x <= left && c < 16; x++)
            if (left % x == 0) divs[c++] = x;
        if (!c) break;
        x = divs[gst_randint(st, 0, c - 1)];
        k[gst_randint(st, 0, rank - 1)] *= x;
        left /= x;
    }
    rep = left;
    n += snprintf(buf + n, cap - (size_t)n, "{devices=[");
    for (d = 0; d < rank; d++) n += snprintf(buf + n, cap - (size_t)n, "%s%lld", d ? "," : "", (long long)k[d]);
    if (rep > 1) n += snprintf(buf + n, cap - (size_t)n, ",%lld", (long long)rep);
    snprintf(buf + n, cap - (size_t)n, "]<=[%lld]%s}", (long long)D, rep > 1 ? " last_tile_dim_replicate" : "");
}

static void rs_dims_text(const int64_t *dims, int r, char *buf, size_t cap) {
    int n = 0, d;
    for (d = 0; d < r; d++) n += snprintf(buf + n, cap - (size_t)n, "%s%lld", d ? "," : "", (long long)dims[d]);
}

/* random reshapes (totals with many divisors, and a few that do not divide D) between random shardings on
   2..8 devices, partitioned vs the reference; and the count of those that gather the whole operand */
static void test_reshape_partial_random(void) {
    static const int64_t totals[] = {24, 36, 48, 60, 72, 96, 120, 144, 30, 42, 210};
    static const int64_t devs[] = {2, 3, 4, 6, 8};
    uint64_t st = 0x5e5a9e;
    int i, n = 200, whole = 0;
    if (getenv("GST_RESHAPE_COUNT")) n = atoi(getenv("GST_RESHAPE_COUNT"));
    for (i = 0; i < n; i++) {
        int64_t total = totals[gst_randint(&st, 0, (int64_t)(sizeof totals / sizeof totals[0]) - 1)];
        int64_t D = devs[gst_randint(&st, 0, (int64_t)(sizeof devs / sizeof devs[0]) - 1)];
        int64_t sd[4], od[4];
        int rs = rs_factor(&st, total, sd), ro = rs_factor(&st, total, od);
        char body[1024], ss[128], os[128], st_s[64], ot_s[64];
        gst_case h;
        rs_sharding(&st, rs, D, ss, sizeof ss);
        rs_sharding(&st, ro, D, os, sizeof os);
        rs_dims_text(sd, rs, st_s, sizeof st_s);
        rs_dims_text(od, ro, ot_s, sizeof ot_s);
        snprintf(body, sizeof body,
                 "  x = f32[%s] parameter(0), sharding=%s\n  r = f32[%s] reshape(x), sharding=%s\n"
                 "  ROOT z = f32[%s] negate(r), sharding=%s\n", st_s, ss, ot_s, os, ot_s, os);
        if (gst_case_run(&h, "", body, D, 0, (uint64_t)i + 1)) {
            if (h.ag_max_numel >= total) whole++;
            if (getenv("GST_VERBOSE")) printf("  D=%lld %s%s -> %s%s: largest all-gather %lld of %lld\n", (long long)D,
                                              st_s, ss, ot_s, os, (long long)h.ag_max_numel, (long long)total);
        }
        gs_ctx_destroy(h.ctx);
    }
    if (getenv("GST_VERBOSE")) printf("  reshape: %d of %d random cases gather the whole operand\n", whole, n);
}

/* d = dot(a{K split}, b{K split}) held {replicated} by its annotation, its only user wants rows split: one
   reduce-scatter of the partial sums (each device sums its row block), no all-reduce; M = 18 rows over 4
   devices is uneven (blocks of 5, the last 3) */
static void test_reduce_scatter_formed(void) {
    static const int64_t rows[] = {16, 18};
    gst_case h;
    size_t i;
    for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char body[1024];
        snprintf(body, sizeof body,
                 "  a = f32[%lld,32] parameter(0), sharding={devices=[1,4]<=[4]}\n"
                 "  b = f32[32,8] parameter(1), sharding={devices=[4,1]<=[4]}\n"
                 "  r = f32[%lld,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}\n"
                 "  ROOT z = f32[%lld,8] exponential(r), sharding={devices=[4,1]<=[4]}\n",
                 (long long)rows[i], (long long)rows[i], (long long)rows[i]);
        if (gst_case_run(&h, "", body, 4, 1e-5, 10 + i)) {
            CHECK_MSG(h.rs == 1 && h.ar == 0 && h.ag == 0, "rs %d ar %d ag %d\n%s", h.rs, h.ar, h.ag, h.text);
            CHECK_MSG(strstr(h.explain, "reduce-scatter") && strstr(h.explain, "only user z"), "%s", h.explain);
        }
        gs_ctx_destroy(h.ctx);
    }
    /* a reduce over the split dim, its user a transpose that wants dim 1 split: r[6,16] held {1,4} */
    if (gst_case_run(&h, ADD_F32, "  a = f32[16,12,6] parameter(0), sharding={devices=[1,4,1]<=[4]}\n"
                                  "  c = f32[] constant(0)\n"
                                  "  r = f32[16,6] reduce(a, c), dimensions={1}, to_apply=add, sharding={replicated}\n"
                                  "  ROOT z = f32[6,16] transpose(r), dimensions={1,0}, sharding={devices=[1,4]<=[4]}\n",
                     4, 1e-5, 20)) {
        CHECK_MSG(h.rs == 1 && h.ar == 0, "rs %d ar %d\n%s", h.rs, h.ar, h.text);
    }
    gs_ctx_destroy(h.ctx);
    /* its user a reshape [16,8] -> [128] split 4: rows 4i..4i+3 are elements 32i..32i+31, so r held {4,1} */
    if (gst_case_run(&h, "", "  a = f32[16,32] parameter(0), sharding={devices=[1,4]<=[4]}\n"
                             "  b = f32[32,8] parameter(1), sharding={devices=[4,1]<=[4]}\n"
                             "  r = f32[16,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}\n"
                             "  ROOT z = f32[128] reshape(r), sharding={devices=[4]<=[4]}\n", 4, 1e-5, 21)) {
        CHECK_MSG(h.rs == 1 && h.ar == 0, "rs %d ar %d\n%s", h.rs, h.ar, h.text);
    }
    gs_ctx_destroy(h.ctx);
    /* two users, one of them wanting it whole: the all-reduce stays */
    if (gst_case_run(&h, "", "  a = f32[16,32] parameter(0), sharding={devices=[1,4]<=[4]}\n"
                             "  b = f32[32,8] parameter(1), sharding={devices=[4,1]<=[4]}\n"
                             "  r = f32[16,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}\n"
                             "  e = f32[16,8] exponential(r), sharding={devices=[4,1]<=[4]}\n"
                             "  n = f32[16,8] negate(r), sharding={replicated}\n"
                             "  ROOT t = (f32[16,8], f32[16,8]) tuple(e, n)\n", 4, 1e-5, 22)) {
        CHECK_MSG(h.ar == 1 && h.rs == 0, "rs %d ar %d\n%s", h.rs, h.ar, h.text);
    }
    gs_ctx_destroy(h.ctx);
}

/* an all-reduce inside a manual region: propagation passes {manual} through it to the negate, and the SPMD
   program keeps it as written (one all-reduce over the 4 devices; each block of y is -(sum of x's 4 blocks)) */
static void test_all_reduce_in_manual_region(void) {
    gst_case h;
    if (gst_case_run(&h, ADD_F32, "  x = f32[8,4] parameter(0), sharding={devices=[4,1]<=[4]}\n"
                                  "  m = f32[2,4] custom-call(x), custom_call_target=\"SPMDFullToShardShape\", sharding={manual}\n"
                                  "  r = f32[2,4] all-reduce(m), channel_id=1, replica_groups={{0,1,2,3}}, "
                                  "use_global_device_ids=true, to_apply=add\n"
                                  "  n = f32[2,4] negate(r)\n"
                                  "  ROOT y = f32[8,4] custom-call(n), custom_call_target=\"SPMDShardToFullShape\", "
                                  "sharding={devices=[4,1]<=[4]}\n", 4, 1e-6, 30)) {
        gs_value *n = gst_case_named(h.src, "n");
        CHECK_EQ_INT(h.ar, 1);
        CHECK(n && gs_sharding_get_kind(gs_value_sharding(n)) == GS_SHARDING_MANUAL);
    }
    gs_ctx_destroy(h.ctx);
}

void suite_spmd_reshape(void) {
    RUN(test_reshape_partial_gcd);
    RUN(test_reshape_partial_random);
    RUN(test_reduce_scatter_formed);
    RUN(test_all_reduce_in_manual_region);
}
