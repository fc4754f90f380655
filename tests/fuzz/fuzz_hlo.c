/* fuzz_hlo.c - libFuzzer target: HLO text through the whole pipeline.
   parse -> verify -> print -> parse the printed text -> print again (must be byte-identical) -> propagate and
   partition for D = 2 or 4 devices -> for small modules without loops, run the SPMD program on a lockstep
   runtime against the reference interpreter (gs_partition_check): integer and pred outputs must agree
   exactly. Every failure must come with a message. Size caps keep every run small: 8 KiB of text, 64
   instructions, 4096 elements per value. Build and run: make fuzz-libfuzzer. */
#define GSHARD_IMPLEMENTATION
#include "../../gshard.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void need_msg(gs_ctx *ctx) {
    if (gs_ctx_error(ctx) == GS_OK || !gs_ctx_error_msg(ctx)[0]) abort();
}

/* small enough to run: few instructions, small values, no while loop (it may never end) */
static bool runnable(gs_graph *g, const char *text) {
    int i, n = gs_graph_num_values(g);
    if (n > 64 || strstr(text, " while(")) return false;
    for (i = 0; i < n; i++) {
        gs_shape s = gs_value_shape(gs_graph_value(g, i));
        if (s.dtype != GS_TUPLE && gs_shape_numel(&s) > 4096) return false;
    }
    return true;
}

static void run_check(gs_ctx *ctx, gs_graph *g, gs_graph *spmd, int64_t D) {
    gs_runtime_desc rd;
    gs_runtime *rt = NULL;
    gs_check_desc cd;
    gs_check_report rep;
    void *in[64];
    const void *cin[64];
    int k, n_in = 0, ok_types = 1;
    gs_result r;
    for (k = 0; k < gs_graph_num_params(g); k++) {
        gs_shape s = gs_value_shape(gs_graph_param(g, k));
        if (s.dtype == GS_TUPLE || n_in == 64) goto done;   /* tuple parameters: not generated here */
        in[n_in] = malloc(gs_shape_bytes(&s) + 1);
        if (!in[n_in]) goto done;
        gs_fill_random(s, 1, k, in[n_in]);
        cin[n_in] = in[n_in];
        n_in++;
    }
    for (k = 0; k < gs_graph_num_outputs(g); k++) {
        gs_dtype t = gs_graph_output_shape(g, k).dtype;
        if (t == GS_F32 || t == GS_BF16) ok_types = 0;
    }
    memset(&rd, 0, sizeof rd);
    rd.num_devices = D;
    rd.mode = GS_RUNTIME_LOCKSTEP;
    if (gs_runtime_create(ctx, &rd, &rt) != GS_OK) { need_msg(ctx); goto done; }
    memset(&cd, 0, sizeof cd);
    r = gs_partition_check(spmd, rt, &cd, cin, &rep);
    if (r != GS_OK) need_msg(ctx);
    else if (!rep.ok && ok_types) abort();   /* integers and pred: the SPMD program must agree exactly */
done:
    gs_runtime_destroy(rt);
    for (k = 0; k < n_in; k++) free(in[k]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    gs_ctx *ctx = NULL, *ctx2 = NULL;
    gs_graph *g = NULL, *g2 = NULL, *spmd = NULL;
    gs_partition_desc pd;
    const char *t1, *t2;
    char *copy;
    int64_t D;
    if (size > 8192) return 0;
    if (gs_ctx_create(NULL, &ctx) != GS_OK || gs_ctx_create(NULL, &ctx2) != GS_OK) abort();
    if (gs_hlo_parse(ctx, (const char *)data, size, &g) != GS_OK) {
        need_msg(ctx);
        goto done;
    }
    if (gs_graph_verify(g) != GS_OK) { need_msg(ctx); goto done; }
    t1 = gs_hlo_print(g);
    if (!t1) { need_msg(ctx); goto done; }
    if (gs_hlo_parse(ctx2, t1, strlen(t1), &g2) != GS_OK) abort();   /* what we print, we read */
    t2 = gs_hlo_print(g2);
    if (!t2 || strcmp(t1, t2) != 0) abort();                          /* and print the same */
    copy = (char *)malloc(strlen(t1) + 1);
    if (!copy) goto done;
    strcpy(copy, t1);
    D = size % 2 ? 2 : 4;
    memset(&pd, 0, sizeof pd);
    pd.num_devices = D;
    if (gs_partition(g, &pd, &spmd) != GS_OK) {
        need_msg(ctx);
    } else {
        if (!gs_partition_print(spmd, true)) need_msg(ctx);
        else if (runnable(g, copy)) run_check(ctx, g, spmd, D);
    }
    free(copy);
done:
    gs_ctx_destroy(ctx);
    gs_ctx_destroy(ctx2);
    return 0;
}
