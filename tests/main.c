/* main.c - runs every suite; the last line is "N passed, N failed". Usage: gshard_tests [name-filter] */
#include "test.h"
#include <stdarg.h>

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

int main(int argc, char **argv) {
    if (argc > 1) gst_filter = argv[1];
    suite_base();
    suite_ir();
    suite_text();
    suite_interp();
    suite_window();
    suite_errors();
    suite_cli();
    suite_semantics();
    suite_sharding();
    suite_propagate();
    suite_cost();
    suite_runtime();
    printf("%d passed, %d failed\n", gst_passed, gst_failed);
    return gst_failed ? 1 : 0;
}
