/* bench_hlo_text.c -- HLO text throughput: parse + verify + print of a generated module of at least 20 MB,
 * against fread of the same file in the same run.
 *
 *   cc -std=c99 -O3 -march=native -I. bench/bench_hlo_text.c -o build/bench/bench_hlo_text -lpthread -lm
 *
 * The module is written the way XLA dumps look: '%' names, layouts, typed operands and a metadata attribute
 * on every instruction. It is a chain of blocks over a f32[64,128] activation, each block a dot with its own
 * weight parameter, a bias broadcast and add, tanh, a fusion (multiply-add, inlined when read), a reduce and
 * a broadcast back; the ENTRY returns the last activation. The file goes to a temporary path (argv[1] if
 * given) and is removed at the end.
 *
 * Each timing is the best of 3: fread of the whole file into memory; gs_hlo_parse of that buffer plus
 * gs_graph_verify; gs_hlo_print of the parsed graph. MB/s counts the file's bytes. The ratio of fread to
 * parse+verify+print says how far the text path is from reading the bytes. The exit status is 1 on an
 * error (a module that does not parse, or a print that does not read back to the same text), never
 * because of speed. */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 199309L
#endif
#ifndef GSHARD_EXTERNAL_IMPL   /* the Makefile links gshard_impl.c instead */
#define GSHARD_IMPLEMENTATION
#endif
#include "gshard.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TARGET_BYTES (21L * 1000 * 1000)

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* the generated module; returns its size in bytes, or -1 */
static long write_module(const char *path, int *blocks_out) {
    FILE *f = fopen(path, "wb");
    long size;
    int b, nb = 0;
    if (!f) return -1;
    fprintf(f, "HloModule bench_text, entry_computation_layout={(f32[64,128]{1,0})->f32[64,128]{1,0}}\n\n");
    fprintf(f, "%%add.r (a: f32[], b: f32[]) -> f32[] {\n  %%a = f32[] parameter(0)\n  %%b = f32[] parameter(1)\n"
               "  ROOT %%s = f32[] add(f32[] %%a, f32[] %%b)\n}\n\n");
    fprintf(f, "%%fused.ma (p0: f32[64,128], p1: f32[64,128]) -> f32[64,128] {\n"
               "  %%p0 = f32[64,128]{1,0} parameter(0)\n  %%p1 = f32[64,128]{1,0} parameter(1)\n"
               "  %%m = f32[64,128]{1,0} multiply(f32[64,128]{1,0} %%p0, f32[64,128]{1,0} %%p1)\n"
               "  ROOT %%r = f32[64,128]{1,0} add(f32[64,128]{1,0} %%m, f32[64,128]{1,0} %%p0)\n}\n\n");
    /* the block count is fixed by a first estimate of the bytes per block (about 2.2 KB) */
    nb = (int)(TARGET_BYTES / 2000);
    fprintf(f, "ENTRY %%main (x: f32[64,128]) -> f32[64,128] {\n  %%x = f32[64,128]{1,0} parameter(0)\n");
    for (b = 0; b < nb; b++) {
        const char *in = b ? "h" : "x";
        char prev[32];
        const char *meta = "metadata={op_type=\"dense\" op_name=\"jit(train_step)/model/layer/dense/dot_general\" "
                           "source_file=\"/home/user/model.py\" source_line=117}";
        if (b) snprintf(prev, sizeof prev, "%s.%d", in, b - 1);
        else snprintf(prev, sizeof prev, "x");
        fprintf(f, "  %%w.%d = f32[128,128]{1,0} parameter(%d), %s\n", b, b + 1, meta);
        fprintf(f, "  %%d.%d = f32[64,128]{1,0} dot(f32[64,128]{1,0} %%%s, f32[128,128]{1,0} %%w.%d), "
                   "lhs_contracting_dims={1}, rhs_contracting_dims={0}, %s\n", b, prev, b, meta);
        fprintf(f, "  %%c.%d = f32[] constant(0.25), %s\n", b, meta);
        fprintf(f, "  %%bb.%d = f32[64,128]{1,0} broadcast(f32[] %%c.%d), dimensions={}, %s\n", b, b, meta);
        fprintf(f, "  %%a.%d = f32[64,128]{1,0} add(f32[64,128]{1,0} %%d.%d, f32[64,128]{1,0} %%bb.%d), %s\n", b, b, b, meta);
        fprintf(f, "  %%t.%d = f32[64,128]{1,0} tanh(f32[64,128]{1,0} %%a.%d), %s\n", b, b, meta);
        fprintf(f, "  %%f.%d = f32[64,128]{1,0} fusion(f32[64,128]{1,0} %%t.%d, f32[64,128]{1,0} %%a.%d), kind=kLoop, "
                   "calls=%%fused.ma, %s\n", b, b, b, meta);
        fprintf(f, "  %%z.%d = f32[] constant(0), %s\n", b, meta);
        fprintf(f, "  %%r.%d = f32[64]{0} reduce(f32[64,128]{1,0} %%f.%d, f32[] %%z.%d), dimensions={1}, "
                   "to_apply=%%add.r, %s\n", b, b, b, meta);
        fprintf(f, "  %%rb.%d = f32[64,128]{1,0} broadcast(f32[64]{0} %%r.%d), dimensions={0}, %s\n", b, b, meta);
        fprintf(f, "  %s%%h.%d = f32[64,128]{1,0} subtract(f32[64,128]{1,0} %%f.%d, f32[64,128]{1,0} %%rb.%d), %s\n",
                b == nb - 1 ? "ROOT " : "", b, b, b, meta);
    }
    fprintf(f, "}\n");
    size = ftell(f);
    if (fclose(f) != 0) return -1;
    *blocks_out = nb;
    return size;
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "build/bench_hlo_text.hlo";
    int blocks = 0, rep, status = 0;
    long size = write_module(path, &blocks);
    double t_read = 1e30, t_parse = 1e30, t_print = 1e30, mb;
    char *buf = NULL;
    size_t values = 0, printed = 0;
    if (size < 0) {
        fprintf(stderr, "cannot write %s\n", path);
        return 1;
    }
    buf = (char *)malloc((size_t)size + 1);
    if (!buf) return 1;
    for (rep = 0; rep < 3 && status == 0; rep++) {
        FILE *f;
        size_t got;
        double t0, t1, t2, t3;
        gs_ctx *ctx = NULL;
        gs_ctx_desc desc;
        gs_graph *g = NULL;
        const char *text;
        t0 = now_s();
        f = fopen(path, "rb");
        if (!f) {
            status = 1;
            break;
        }
        got = fread(buf, 1, (size_t)size, f);
        fclose(f);
        t1 = now_s();
        if (got != (size_t)size) {
            status = 1;
            break;
        }
        memset(&desc, 0, sizeof desc);
        if (gs_ctx_create(&desc, &ctx) != GS_OK) return 1;
        if (gs_hlo_parse(ctx, buf, got, &g) != GS_OK || gs_graph_verify(g) != GS_OK) {
            fprintf(stderr, "parse: %s\n", gs_ctx_error_msg(ctx));
            status = 1;
        }
        t2 = now_s();
        text = status == 0 ? gs_hlo_print(g) : NULL;
        t3 = now_s();
        if (status == 0 && !text) status = 1;
        if (status == 0 && rep == 0) {   /* the printed text reads back to itself */
            gs_ctx *c2 = NULL;
            gs_graph *g2 = NULL;
            if (gs_ctx_create(&desc, &c2) != GS_OK || gs_hlo_parse(c2, text, strlen(text), &g2) != GS_OK ||
                strcmp(gs_hlo_print(g2), text) != 0) {
                fprintf(stderr, "the printed module does not read back to the same text\n");
                status = 1;
            }
            gs_ctx_destroy(c2);
        }
        if (status == 0) {
            values = (size_t)gs_graph_num_values(g);
            printed = strlen(text);
        }
        if (t1 - t0 < t_read) t_read = t1 - t0;
        if (t2 - t1 < t_parse) t_parse = t2 - t1;
        if (t3 - t2 < t_print) t_print = t3 - t2;
        gs_ctx_destroy(ctx);
    }
    remove(path);
    free(buf);
    if (status != 0) return status;
    mb = (double)size / 1e6;
    printf("module: %.1f MB, %d blocks, %zu instructions after inlining; printed %.1f MB\n", mb, blocks, values,
           (double)printed / 1e6);
    printf("fread                 %8.3f s  %8.1f MB/s\n", t_read, mb / t_read);
    printf("parse + verify        %8.3f s  %8.1f MB/s\n", t_parse, mb / t_parse);
    printf("print                 %8.3f s  %8.1f MB/s\n", t_print, mb / t_print);
    printf("parse + verify + print %7.3f s  %8.1f MB/s  (%.1fx the fread time)\n", t_parse + t_print,
           mb / (t_parse + t_print), (t_parse + t_print) / t_read);
    return 0;
}
