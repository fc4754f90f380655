/* test.h - the in-house test harness: CHECK macros, a runner, and small helpers shared by the suites. */
#ifndef GS_TEST_H
#define GS_TEST_H

#include "../gshard.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <float.h>

extern int gst_checks_failed_in_test;
void gst_fail(const char *file, int line, const char *what);
void gst_failf(const char *file, int line, const char *fmt, ...);
void gst_run(const char *name, void (*fn)(void));

#define CHECK(c) do { if (!(c)) gst_fail(__FILE__, __LINE__, #c); } while (0)
#define CHECK_MSG(c, ...) do { if (!(c)) gst_failf(__FILE__, __LINE__, __VA_ARGS__); } while (0)
#define CHECK_EQ_INT(a, b) do { long long gst_a = (long long)(a), gst_b = (long long)(b); \
    if (gst_a != gst_b) gst_failf(__FILE__, __LINE__, "%s == %lld, expected %s == %lld", #a, gst_a, #b, gst_b); } while (0)
#define CHECK_NEAR(a, b, tol) do { double gst_a = (double)(a), gst_b = (double)(b); \
    if (!(fabs(gst_a - gst_b) <= (tol))) gst_failf(__FILE__, __LINE__, "%s == %.9g, expected %.9g (tol %g)", #a, gst_a, gst_b, (double)(tol)); } while (0)
#define CHECK_OK(expr) do { gs_result gst_r = (expr); \
    if (gst_r != GS_OK) gst_failf(__FILE__, __LINE__, "%s returned %s", #expr, gs_result_str(gst_r)); } while (0)
#define RUN(fn) gst_run(#fn, fn)
/* relative closeness: |a - b| <= rel * |b| */
#define CHECK_REL(a, b, rel) do { double gst_x = (double)(a), gst_y = (double)(b); \
    if (!(fabs(gst_x - gst_y) <= (rel) * fabs(gst_y))) \
        gst_failf(__FILE__, __LINE__, "%s == %.9g, expected %.9g within %g%%", #a, gst_x, gst_y, 100.0 * (rel)); } while (0)
/* expr fails with code and a message (of the test's `ctx`) containing needle; the error is then cleared */
#define CHECK_ERR(expr, code, needle) do { gs_result gst_r = (expr); \
    if (gst_r != (code)) gst_failf(__FILE__, __LINE__, "%s returned %s, expected %s", #expr, gs_result_str(gst_r), gs_result_str(code)); \
    else if (!strstr(gs_ctx_error_msg(ctx), (needle))) \
        gst_failf(__FILE__, __LINE__, "%s: message '%s' lacks '%s'", #expr, gs_ctx_error_msg(ctx), (needle)); \
    gs_ctx_clear_error(ctx); } while (0)

/* a fresh context that aborts the test process only on harness misuse */
gs_ctx *gst_ctx(void);
/* printed text parses in a fresh context and prints back byte for byte */
bool gst_reprints(const char *printed);
/* deterministic random numbers for tests */
uint64_t gst_rand(uint64_t *state);
float gst_randf(uint64_t *state);           /* [-1, 1) */
int64_t gst_randint(uint64_t *state, int64_t lo, int64_t hi); /* [lo, hi] */

/* the command-line driver: $GST_GSHARD (default ./build/gshard), run under $GST_CLI_WRAPPER when set
   (`make valgrind` runs it under valgrind, `make sanitize` uses the sanitizer build) */
const char *gst_gshard_bin(void);
/* Runs the driver with printf-style args; its stdout and stderr go through files in dir into gst_cli_out and
   gst_cli_err. Returns the exit status, or -1 if it did not exit normally. */
int gst_cli(const char *dir, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
extern char gst_cli_out[1 << 17], gst_cli_err[1 << 14];
/* reads a whole file into buf (NUL terminated, truncated to cap - 1); returns the byte count */
size_t gst_read_file(const char *path, char *buf, size_t cap);

/* suites (one per test file) */
void suite_base(void);
void suite_ir(void);
void suite_text(void);
void suite_text_structure(void);
void suite_reducers(void);
void suite_unreduced(void);
void suite_conditional(void);
void suite_ragged(void);
/* test_text.c's helpers: parse (a failure is a test failure), print(parse(print(g))) == print(g) (returns the
   print), and "parse fails with code at line:column with a message containing part" */
gs_graph *gst_hlo_parse(gs_ctx *ctx, const char *text);
const char *gst_hlo_roundtrip(gs_graph *g);
void gst_hlo_error_at(const char *text, gs_result code, int line, int col, const char *part);
void suite_interp(void);
void suite_window(void);
void suite_errors(void);
void suite_cli(void);
void suite_semantics(void);
void suite_sharding(void);
void suite_propagate(void);
void suite_cost(void);
void suite_model(void);
void suite_runtime(void);
void suite_spmd(void);
void suite_spmd_halo(void);
void suite_spmd_reshape(void);
void suite_spmd_conv(void);
void suite_spmd_gather(void);
void suite_spmd_xla(void);
void suite_spmd_xopts(void);
void suite_spmd_manual(void);
void suite_rng(void);
void suite_types(void);
void suite_numeric(void);
void suite_spmd_check(void);
void suite_spmd_fuzz(void);
void suite_spmd_window(void);
void suite_moe(void);
void suite_reliability(void);
void suite_fault(void);
void suite_notation(void);
void suite_course(void);
void suite_ragged_a2a(void);

#endif
