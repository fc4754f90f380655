/* Standalone test of the interpreter's vector kernels (src/gs_simd.c) on every instruction-set path.
 *
 *   cc -std=c99 -O2 -Wall -Wextra -DTEST_USE_GSHARD_H -I. tests/standalone/test_simd.c -o build/test_simd -lm
 *   cc -std=c99 -O2 -Wall -Wextra -I. tests/standalone/test_simd.c -o build/test_simd -lm   (src/ directly)
 *
 * Every path this machine runs (scalar, sse2, avx2, avx512; gs__gemm_isa_available) is called directly and must
 * give the scalar path's bytes exactly, for the elementwise kernels and for the reductions alike (gs_simd.c fixes
 * the reduction order independently of the vector width). Inputs mix random values with NaNs (with payloads,
 * signalling ones), signed zeros, infinities, subnormals and bf16 rounding ties; lengths cover 0, every tail
 * length of every width, and long arrays; arrays start misaligned. The scalar path itself is checked against
 * things computed here: C's operators, XLA's max/min rules on hand-picked pairs, the public
 * gs_f32_to_bf16 (with gshard.h), hand-rounded bf16 values, sequential folds for short rows and for columns,
 * the documented 32-lane order for long rows, and a double-precision sum within L u sum|x| (+ the bf16 rounding).
 * Prints "N passed, N failed"; exit status 1 on any failure. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef TEST_USE_GSHARD_H
#define GSHARD_IMPLEMENTATION
#include "gshard.h"
#else
#if defined(__GNUC__)
#define GS__FN static __attribute__((unused))
#else
#define GS__FN static
#endif
#include "../../src/gs_gemm.c"
#include "../../src/gs_simd.c"
#endif

static int n_pass = 0, n_fail = 0;
#define EXPECT(cond, ...)                                                                                      \
    do {                                                                                                       \
        if (cond) {                                                                                            \
            n_pass++;                                                                                          \
        } else {                                                                                               \
            n_fail++;                                                                                          \
            if (n_fail <= 30) {                                                                                \
                printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                    \
                printf(__VA_ARGS__);                                                                           \
                printf("\n");                                                                                  \
            }                                                                                                  \
        }                                                                                                      \
    } while (0)

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static uint32_t rng_u32(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 32);
}

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint32_t bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* a value for elementwise tests: mostly ordinary, often special */
static float special_or_random(void)
{
    static const uint32_t special[] = {
        0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, /* +-0, +-inf */
        0x7fc00000u, 0xffc00001u, 0x7f800001u, 0x7fa5a5a5u, /* quiet and signalling NaNs with payloads */
        0x00000001u, 0x807fffffu, 0x00800000u,              /* subnormals, the smallest normal */
        0x3f808000u, 0x3f818000u, 0x3f80ffffu, 0xbf808000u, /* bf16 ties (even down, odd up), just below */
        0x7f7fffffu, 0x7f7f8000u, 0xff7fffffu,              /* the largest floats: round to bf16 inf */
        0x3f800000u, 0xbf800000u, 0x40000000u};
    uint32_t r = rng_u32();
    if (r % 4 == 0) return from_bits(special[(r >> 8) % (sizeof special / sizeof special[0])]);
    if (r % 4 == 1) return from_bits(rng_u32()); /* any bits */
    return (float)((double)rng_u32() / 4294967296.0 * 8.0 - 4.0);
}

static float rnd_value(int bf)
{
    float x = (float)((double)rng_u32() / 4294967296.0 * 2.0 - 1.0);
    if (rng_u32() % 64 == 0) x = rng_u32() % 2 ? 0.0f : -0.0f;
    return bf ? gs__vk_rbf(x) : x;
}

static const char *path_name(int isa) { return gs__gemm_isa_name(isa); }

/* ---------------------------------------------------------------- the scalar path vs this file */

static void test_scalar_rules(void)
{
    /* XLA's max/min: a NaN operand is the result (the first, if both are), +0 is above -0 */
    const float nan1 = from_bits(0x7fc00001u), nan2 = from_bits(0xffc00002u);
    float a[8], b[8], y[8];
    uint8_t c[8];
    int i;
    a[0] = nan1; b[0] = 1.0f;
    a[1] = 1.0f; b[1] = nan2;
    a[2] = nan1; b[2] = nan2;
    a[3] = -0.0f; b[3] = 0.0f;
    a[4] = 0.0f; b[4] = -0.0f;
    a[5] = -INFINITY; b[5] = -3.0f;
    a[6] = 2.0f; b[6] = 2.0f;
    a[7] = -1.0f; b[7] = 5.0f;
    gs__vk_binary(GS__ISA_SCALAR, GS__VK_MAX, a, b, y, 8);
    EXPECT(bits(y[0]) == 0x7fc00001u && bits(y[1]) == 0xffc00002u && bits(y[2]) == 0x7fc00001u, "max of NaNs");
    EXPECT(bits(y[3]) == 0 && bits(y[4]) == 0, "max(-0, +0) = +0 either way: %08x %08x", (unsigned)bits(y[3]),
           (unsigned)bits(y[4]));
    EXPECT(y[5] == -3.0f && y[6] == 2.0f && y[7] == 5.0f, "max of numbers");
    gs__vk_binary(GS__ISA_SCALAR, GS__VK_MIN, a, b, y, 8);
    EXPECT(bits(y[0]) == 0x7fc00001u && bits(y[1]) == 0xffc00002u && bits(y[2]) == 0x7fc00001u, "min of NaNs");
    EXPECT(bits(y[3]) == 0x80000000u && bits(y[4]) == 0x80000000u, "min(-0, +0) = -0 either way");
    EXPECT(y[5] == -INFINITY && y[6] == 2.0f && y[7] == -1.0f, "min of numbers");
    /* with a NaN only != holds */
    gs__vk_compare(GS__ISA_SCALAR, GS__VK_NE, a, b, c, 3);
    EXPECT(c[0] == 1 && c[1] == 1 && c[2] == 1, "NaN != x");
    for (i = GS__VK_EQ; i <= GS__VK_GE; i++) {
        if (i == GS__VK_NE) continue;
        gs__vk_compare(GS__ISA_SCALAR, i, a, b, c, 3);
        EXPECT(c[0] == 0 && c[1] == 0 && c[2] == 0, "NaN (direction %d) x", i);
    }
    gs__vk_compare(GS__ISA_SCALAR, GS__VK_EQ, a + 3, b + 3, c, 1);
    EXPECT(c[0] == 1, "-0 == +0");
    /* bf16 rounding by hand: ties to even at 2^-8 steps above 1, NaN kept quiet, overflow to inf */
    a[0] = from_bits(0x3f808000u); /* 1 + 2^-8: tie between 1 and 1 + 2^-7 -> 1 */
    a[1] = from_bits(0x3f818000u); /* 1 + 3 2^-8: tie between 1 + 2^-7 and 1 + 2^-6 -> 1 + 2^-6 */
    a[2] = from_bits(0x3f808001u); /* just above the tie -> up */
    a[3] = from_bits(0x7f800001u); /* signalling NaN -> quiet, top bits kept */
    a[4] = from_bits(0x7f7fffffu); /* FLT_MAX -> inf */
    a[5] = from_bits(0xff7f7fffu); /* below the tie to inf -> the largest bf16 */
    gs__vk_round_bf16(GS__ISA_SCALAR, a, y, 6);
    EXPECT(y[0] == 1.0f && y[1] == 1.0f + 1.0f / 64 && y[2] == 1.0f + 1.0f / 128, "bf16 ties: %.9g %.9g %.9g",
           y[0], y[1], y[2]);
    EXPECT(bits(y[3]) == 0x7fc00000u && bits(y[4]) == 0x7f800000u && bits(y[5]) == 0xff7f0000u,
           "bf16 NaN/overflow: %08x %08x %08x", (unsigned)bits(y[3]), (unsigned)bits(y[4]), (unsigned)bits(y[5]));
}

/* the scalar path against C's operators and (with gshard.h) the public bf16 conversion, on random bits */
static void test_scalar_vs_c(void)
{
    enum { N = 4096 };
    static float a[N], b[N], y[N];
    static uint8_t p[N], c[N];
    int i, op, bad = 0;
    for (i = 0; i < N; i++) {
        a[i] = special_or_random();
        b[i] = special_or_random();
        p[i] = (uint8_t)(rng_u32() % 2);
    }
    for (op = GS__VK_ADD; op <= GS__VK_DIV; op++) {
        gs__vk_binary(GS__ISA_SCALAR, op, a, b, y, N);
        for (i = 0, bad = 0; i < N; i++) {
            float e = op == GS__VK_ADD ? a[i] + b[i] : op == GS__VK_SUB ? a[i] - b[i] : op == GS__VK_MUL ? a[i] * b[i]
                                                                                                       : a[i] / b[i];
            bad += memcmp(&e, &y[i], 4) != 0 && !(e != e && y[i] != y[i]);
        }
        EXPECT(bad == 0, "scalar op %d vs C: %d differ", op, bad);
    }
    gs__vk_compare(GS__ISA_SCALAR, GS__VK_LE, a, b, c, N);
    for (i = 0, bad = 0; i < N; i++) bad += c[i] != (a[i] <= b[i]);
    EXPECT(bad == 0, "scalar <= vs C: %d differ", bad);
    gs__vk_select(GS__ISA_SCALAR, p, a, b, y, N);
    for (i = 0, bad = 0; i < N; i++) bad += bits(y[i]) != bits(p[i] ? a[i] : b[i]);
    EXPECT(bad == 0, "scalar select: %d differ", bad);
#ifdef TEST_USE_GSHARD_H
    gs__vk_round_bf16(GS__ISA_SCALAR, a, y, N);
    for (i = 0, bad = 0; i < N; i++) bad += bits(y[i]) != bits(gs_bf16_to_f32(gs_f32_to_bf16(a[i])));
    EXPECT(bad == 0, "scalar bf16 rounding vs gs_f32_to_bf16: %d differ", bad);
#endif
}

static float comb(int kind, int bf, float acc, float x)
{
    float r;
    switch (kind) {
    case GS__VK_RSUM: r = acc + x; break;
    case GS__VK_RPROD: r = acc * x; break;
    case GS__VK_RMAX: return acc != acc ? acc : x != x ? x : acc == x ? (signbit(acc) ? x : acc) : acc > x ? acc : x;
    default: return acc != acc ? acc : x != x ? x : acc == x ? (signbit(acc) ? acc : x) : acc < x ? acc : x;
    }
    if (bf) gs__vk_round_bf16(GS__ISA_SCALAR, &r, &r, 1);
    return r;
}

/* the order gs_simd.c documents, written out: partial j = i mod 32 over the whole blocks, pairwise, init, tail
   (32 = GS__VK_LANES) */
static float row_by_definition(int kind, int bf, const float *p, int64_t L, float init)
{
    float lane[GS__VK_LANES];
    int64_t i, whole = L / GS__VK_LANES * GS__VK_LANES;
    int j, w;
    if (L < 2 * GS__VK_LANES) {
        for (i = 0; i < L; i++) init = comb(kind, bf, init, p[i]);
        return init;
    }
    for (j = 0; j < GS__VK_LANES; j++) lane[j] = p[j];
    for (i = GS__VK_LANES; i < whole; i++) lane[i % GS__VK_LANES] = comb(kind, bf, lane[i % GS__VK_LANES], p[i]);
    for (w = GS__VK_LANES / 2; w >= 1; w /= 2)
        for (j = 0; j < w; j++) lane[j] = comb(kind, bf, lane[j], lane[j + w]);
    init = comb(kind, bf, init, lane[0]);
    for (i = whole; i < L; i++) init = comb(kind, bf, init, p[i]);
    return init;
}

static void test_scalar_reductions(void)
{
    static const int64_t lens[] = {1, 2, 15, 16, 31, 32, 33, 47, 48, 63, 64, 65, 100, 127, 128, 129, 1000, 4099};
    size_t li;
    int kind, bf;
    float *x = (float *)malloc(3 * 4099 * sizeof(float)), y[3], init;
    if (!x) exit(2);
    for (bf = 0; bf <= 1; bf++)
        for (kind = GS__VK_RSUM; kind <= GS__VK_RMIN; kind++)
            for (li = 0; li < sizeof lens / sizeof lens[0]; li++) {
                const int64_t L = lens[li];
                int64_t i, r;
                int bad = 0;
                for (i = 0; i < 3 * L; i++)
                    x[i] = kind == GS__VK_RPROD ? (bf ? gs__vk_rbf(1.0f + rnd_value(0) / 64) : 1.0f + rnd_value(0) / 64)
                                                : rnd_value(bf);
                init = kind == GS__VK_RPROD ? 1.0f : kind == GS__VK_RSUM ? 0.0f : -INFINITY;
                gs__vk_reduce_rows(GS__ISA_SCALAR, kind, bf, x, 3, L, init, y);
                for (r = 0; r < 3; r++) {
                    float e = row_by_definition(kind, bf, x + r * L, L, init);
                    bad += bits(e) != bits(y[r]);
                    if (kind == GS__VK_RSUM) { /* and near the exact sum */
                        double s = 0.0, m = 0.0;
                        for (i = 0; i < L; i++) {
                            s += x[r * L + i];
                            m += fabs(x[r * L + i]);
                        }
                        bad += fabs(y[r] - s) > (double)L * (bf ? 1.0 / 256 : 1.0 / 16777216) * m + 1e-30;
                    }
                }
                EXPECT(bad == 0, "scalar reduce_rows kind %d bf %d L %lld", kind, bf, (long long)L);
            }
    /* columns: in order from the starting value, per column */
    for (kind = GS__VK_RSUM; kind <= GS__VK_RMIN; kind++) {
        float yc[2 * 37], e;
        int64_t o, l, i;
        int bad = 0;
        for (i = 0; i < 2 * 50 * 37; i++) x[i] = rnd_value(0);
        for (i = 0; i < 2 * 37; i++) yc[i] = kind == GS__VK_RPROD ? 1.0f : 0.5f;
        gs__vk_reduce_cols(GS__ISA_SCALAR, kind, 0, x, 2, 50, 37, yc);
        for (o = 0; o < 2; o++)
            for (i = 0; i < 37; i++) {
                e = kind == GS__VK_RPROD ? 1.0f : 0.5f;
                for (l = 0; l < 50; l++) e = comb(kind, 0, e, x[(o * 50 + l) * 37 + i]);
                bad += bits(e) != bits(yc[o * 37 + i]);
            }
        EXPECT(bad == 0, "scalar reduce_cols kind %d", kind);
    }
    free(x);
}

/* ---------------------------------------------------------------- every path vs the scalar path */

static void test_elementwise_paths(int isa)
{
    enum { MAXN = 5000, OFF = 3 };
    static float a[MAXN + OFF], b[MAXN + OFF], y0[MAXN + OFF], y1[MAXN + OFF];
    static uint8_t p[MAXN + OFF], c0[MAXN + OFF], c1[MAXN + OFF];
    int64_t n;
    int op, off, bad_bin = 0, bad_cmp = 0, bad_sel = 0, bad_rbf = 0, cases = 0;
    for (n = 0; n <= MAXN; n = n < 70 ? n + 1 : n * 2 + 7) {
        int64_t i;
        off = (int)(n % (OFF + 1));
        for (i = 0; i < n + OFF; i++) {
            a[i] = special_or_random();
            b[i] = rng_u32() % 8 == 0 ? a[i] : special_or_random(); /* equal pairs too */
            p[i] = (uint8_t)(rng_u32() % 3 == 0);
        }
        for (op = GS__VK_ADD; op <= GS__VK_MIN; op++) {
            memset(y0, 0x5a, sizeof y0);
            memset(y1, 0x5a, sizeof y1);
            gs__vk_binary(GS__ISA_SCALAR, op, a + off, b + off, y0 + off, n);
            gs__vk_binary(isa, op, a + off, b + off, y1 + off, n);
            bad_bin += memcmp(y0, y1, sizeof y0) != 0;
        }
        for (op = GS__VK_EQ; op <= GS__VK_GE; op++) {
            memset(c0, 7, sizeof c0);
            memset(c1, 7, sizeof c1);
            gs__vk_compare(GS__ISA_SCALAR, op, a + off, b + off, c0 + off, n);
            gs__vk_compare(isa, op, a + off, b + off, c1 + off, n);
            bad_cmp += memcmp(c0, c1, sizeof c0) != 0;
        }
        memset(y0, 0x5a, sizeof y0);
        memset(y1, 0x5a, sizeof y1);
        gs__vk_select(GS__ISA_SCALAR, p + off, a + off, b + off, y0 + off, n);
        gs__vk_select(isa, p + off, a + off, b + off, y1 + off, n);
        bad_sel += memcmp(y0, y1, sizeof y0) != 0;
        memset(y0, 0x5a, sizeof y0);
        memset(y1, 0x5a, sizeof y1);
        gs__vk_round_bf16(GS__ISA_SCALAR, a + off, y0 + off, n);
        gs__vk_round_bf16(isa, a + off, y1 + off, n);
        bad_rbf += memcmp(y0, y1, sizeof y0) != 0;
        memcpy(y1, a, sizeof y1); /* in place */
        gs__vk_round_bf16(isa, y1 + off, y1 + off, n);
        bad_rbf += memcmp(y0 + off, y1 + off, (size_t)n * 4) != 0;
        cases++;
    }
    EXPECT(bad_bin == 0, "%s binary: %d of %d cases differ from scalar", path_name(isa), bad_bin, cases * 6);
    EXPECT(bad_cmp == 0, "%s compare: %d of %d cases differ from scalar", path_name(isa), bad_cmp, cases * 6);
    EXPECT(bad_sel == 0, "%s select: %d of %d cases differ from scalar", path_name(isa), bad_sel, cases);
    EXPECT(bad_rbf == 0, "%s bf16 rounding: %d of %d cases differ from scalar", path_name(isa), bad_rbf, 2 * cases);
}

static void test_reduction_paths(int isa)
{
    static const int64_t shapes[][3] = {{1, 0, 1},    {3, 1, 1},   {2, 31, 1},   {2, 32, 1},  {5, 33, 1},
                                        {1, 48, 1},   {2, 63, 1},  {2, 64, 1},   {3, 65, 1},  {4, 129, 1},
                                        {2, 1000, 1}, {1, 70001, 1}, {2, 7, 3},  {3, 5, 16},  {1, 40, 17},
                                        {2, 9, 513},  {1, 3, 1100}, {2, 64, 8}};
    size_t s;
    int kind, bf, bad = 0, cases = 0;
    for (s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const int64_t O = shapes[s][0], L = shapes[s][1], I = shapes[s][2], n = O * L * I;
        float *x = (float *)malloc((size_t)(n + 1) * sizeof(float));
        float *y0 = (float *)malloc((size_t)(O * I + 1) * sizeof(float));
        float *y1 = (float *)malloc((size_t)(O * I + 1) * sizeof(float));
        int64_t i;
        if (!x || !y0 || !y1) exit(2);
        for (bf = 0; bf <= 1; bf++)
            for (kind = GS__VK_RSUM; kind <= GS__VK_RMIN; kind++) {
                for (i = 0; i < n + 1; i++) {
                    x[i] = kind == GS__VK_RPROD ? 1.0f + rnd_value(0) / 256 : rnd_value(0);
                    if (rng_u32() % (s % 2 ? 500 : 16) == 0) x[i] = special_or_random(); /* NaN meets NaN too */
                    if (bf) x[i] = gs__vk_rbf(x[i]);
                }
                if (I == 1) {
                    gs__vk_reduce_rows(GS__ISA_SCALAR, kind, bf, x + 1, O, L, 0.25f, y0);
                    gs__vk_reduce_rows(isa, kind, bf, x + 1, O, L, 0.25f, y1);
                } else {
                    for (i = 0; i < O * I; i++) y0[i] = y1[i] = 0.25f;
                    gs__vk_reduce_cols(GS__ISA_SCALAR, kind, bf, x + 1, O, L, I, y0);
                    gs__vk_reduce_cols(isa, kind, bf, x + 1, O, L, I, y1);
                }
                if (memcmp(y0, y1, (size_t)(O * I) * sizeof(float)) != 0) {
                    bad++;
                    if (bad <= 3)
                        printf("  %s: [%lld, %lld, %lld] kind %d bf %d differs\n", path_name(isa), (long long)O,
                               (long long)L, (long long)I, kind, bf);
                }
                cases++;
            }
        free(x);
        free(y0);
        free(y1);
    }
    EXPECT(bad == 0, "%s reductions: %d of %d cases differ from scalar", path_name(isa), bad, cases);
}

int main(void)
{
    int isa, paths = 0;
    test_scalar_rules();
    test_scalar_vs_c();
    test_scalar_reductions();
    printf("paths:");
    for (isa = 0; isa < GS__ISA_COUNT; isa++) {
        if (!gs__gemm_isa_available(isa)) continue;
        printf(" %s", path_name(isa));
        paths++;
        if (isa == GS__ISA_SCALAR) continue;
        test_elementwise_paths(isa);
        test_reduction_paths(isa);
    }
    printf(" (the process's choice: %s)\n", path_name(gs__gemm_isa()));
    EXPECT(paths >= 1, "no path available");
    printf("%d passed, %d failed\n", n_pass, n_fail);
    return n_fail ? 1 : 0;
}
