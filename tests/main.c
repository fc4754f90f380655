/* main.c - runs every suite; the last line is "N passed, N failed". Usage: gshard_tests [name-filter] */
#if !defined(_POSIX_C_SOURCE)
#  define _POSIX_C_SOURCE 200809L
#endif
#include "test.h"
#include <stdarg.h>
#include <sys/wait.h>

int gst_checks_failed_in_test;
static int gst_passed, gst_failed;
static const char *gst_filter;
static const char *gst_current;

void gst_fail(const char *file, int line, const char *what) {
    gst_checks_failed_in_test++;
    if (gst_checks_failed_in_test <= 10) fprintf(stderr, "  FAIL %s:%d (%s): %s\n", file, line, gst_current, what);
}

void gst_failf(const char *file, int line, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    gst_fail(file, line, buf);
}

void gst_run(const char *name, void (*fn)(void)) {
    if (gst_filter && !strstr(name, gst_filter)) return;
    gst_current = name;
    gst_checks_failed_in_test = 0;
    fn();
    if (gst_checks_failed_in_test) {
        gst_failed++;
        printf("FAIL %s\n", name);
    } else {
        gst_passed++;
        if (getenv("GST_VERBOSE")) printf("ok   %s\n", name);
    }
    fflush(stdout);
}

bool gst_reprints(const char *printed) {
    gs_ctx *ctx = NULL;
    gs_graph *g = NULL;
    const char *again;
    bool same;
    if (!printed || gs_ctx_create(NULL, &ctx) != GS_OK) return false;
    again = gs_hlo_parse(ctx, printed, strlen(printed), &g) == GS_OK ? gs_hlo_print(g) : NULL;
    same = again && strcmp(again, printed) == 0;
    gs_ctx_destroy(ctx);
    return same;
}

static gs_ctx *gst_last_ctx;
gs_ctx *gst_ctx(void) {
    gs_ctx *ctx = NULL;
    if (gs_ctx_create(NULL, &ctx) != GS_OK) {
        fprintf(stderr, "cannot create a context\n");
        exit(2);
    }
    gst_last_ctx = ctx;
    return ctx;
}

uint64_t gst_rand(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
float gst_randf(uint64_t *s) { return (float)((double)(gst_rand(s) >> 40) / (double)(1ull << 24) * 2.0 - 1.0); }
int64_t gst_randint(uint64_t *s, int64_t lo, int64_t hi) {
    return lo + (int64_t)(gst_rand(s) % (uint64_t)(hi - lo + 1));
}

size_t gst_read_file(const char *path, char *buf, size_t cap) {
    FILE *f = fopen(path, "rb");
    size_t n = 0;
    buf[0] = 0;
    if (!f) return 0;
    n = fread(buf, 1, cap - 1, f);
    buf[n] = 0;
    fclose(f);
    return n;
}

const char *gst_gshard_bin(void) {
    const char *b = getenv("GST_GSHARD");
    return b && *b ? b : "./build/gshard";
}

char gst_cli_out[1 << 17], gst_cli_err[1 << 14];

int gst_cli(const char *dir, const char *fmt, ...) {
    char args[2048], cmd[4096], p[512];
    const char *wrap = getenv("GST_CLI_WRAPPER");
    va_list ap;
    int st;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "%s %s %s >%s/stdout.txt 2>%s/stderr.txt", wrap ? wrap : "", gst_gshard_bin(), args,
             dir, dir);
    st = system(cmd);
    snprintf(p, sizeof p, "%s/stdout.txt", dir);
    gst_read_file(p, gst_cli_out, sizeof gst_cli_out);
    snprintf(p, sizeof p, "%s/stderr.txt", dir);
    gst_read_file(p, gst_cli_err, sizeof gst_cli_err);
    if (st == -1 || !WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

int main(int argc, char **argv) {
    if (argc > 1) gst_filter = argv[1];
    suite_base();
    suite_ir();
    suite_text();
    suite_text_structure();
    suite_reducers();
    suite_unreduced();
    suite_conditional();
    suite_ragged();
    suite_interp();
    suite_window();
    suite_errors();
    suite_cli();
    suite_semantics();
    suite_sharding();
    suite_propagate();
    suite_cost();
    suite_model();
    suite_runtime();
    suite_spmd();
    suite_spmd_halo();
    suite_spmd_reshape();
    suite_spmd_conv();
    suite_spmd_gather();
    suite_spmd_xla();
    suite_spmd_xopts();
    suite_spmd_manual();
    suite_rng();
    suite_types();
    suite_numeric();
    suite_spmd_check();
    suite_spmd_fuzz();
    suite_spmd_window();
    suite_moe();
    suite_reliability();
    suite_fault();
    suite_notation();
    suite_course();
    suite_ragged_a2a();
    printf("%d passed, %d failed\n", gst_passed, gst_failed);
    return gst_failed ? 1 : 0;
}
