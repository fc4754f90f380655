/* spmd_case.h - one named partitioning case, shared by tests/test_spmd_halo.c and tests/test_spmd_gather.c:
   an HLO body is parsed (after the given reductions), partitioned for D devices, run on lockstep devices with
   poisoned padding and compared with the reference interpreter (gs_partition_check), and the SPMD program's
   collectives, warnings, text and the explanation of the instruction named "r" are kept for the checks. */
#ifndef GST_SPMD_CASE_H
#define GST_SPMD_CASE_H

#include "test.h"

typedef struct gst_case {
    gs_ctx *ctx;              /* owns everything below; the test destroys it */
    gs_graph *src, *spmd;
    int ag, ar, a2a, cp, rs, warnings;
    int64_t ag_max_numel;     /* the largest all-gather result, in elements */
    const char *explain;      /* the explanation of the instruction named "r" ("" when none) */
    const char *text;         /* the SPMD program with explanations */
} gst_case;

static gs_value *gst_case_named(gs_graph *g, const char *name) {
    int i;
    for (i = 0; i < gs_graph_num_values(g); i++)
        if (strcmp(gs_value_name(gs_graph_value(g, i)), name) == 0) return gs_graph_value(g, i);
    return NULL;
}

static void gst_case_count(gst_case *h, const gs_graph *g) {
    int i;
    for (i = 0; i < gs_graph_num_values(g); i++) {
        gs_value *v = gs_graph_value(g, i);
        gs_shape s = gs_value_shape(v);
        switch (gs_value_op(v)) {
        case GS_OP_ALL_GATHER:
            h->ag++;
            if (gs_shape_numel(&s) > h->ag_max_numel) h->ag_max_numel = gs_shape_numel(&s);
            break;
        case GS_OP_ALL_REDUCE: h->ar++; break;
        case GS_OP_ALL_TO_ALL: h->a2a++; break;
        case GS_OP_COLLECTIVE_PERMUTE: h->cp++; break;
        case GS_OP_REDUCE_SCATTER: h->rs++; break;
        default: break;
        }
    }
}

/* "HloModule m" + reductions + "ENTRY main {" body "}" on D devices, tolerance tol (rtol and atol), inputs from
   gs_fill_random with seeds seed, seed + 1, ... Returns false (after reporting) when it cannot parse or
   partition; a wrong result is reported and the case still returns true (its counts are then checked too). */
static bool gst_case_run_desc(gst_case *h, const char *reductions, const char *body, int64_t D, double tol, uint64_t seed,
                              const gs_partition_desc *opt);
static bool gst_case_run(gst_case *h, const char *reductions, const char *body, int64_t D, double tol, uint64_t seed) {
    return gst_case_run_desc(h, reductions, body, D, tol, seed, NULL);
}

/* gst_case_run with partitioner options (opt NULL: the defaults; its num_devices is replaced by D) */
static bool gst_case_run_desc(gst_case *h, const char *reductions, const char *body, int64_t D, double tol, uint64_t seed,
                              const gs_partition_desc *opt) {
    char text[4096];
    gs_partition_desc pd;
    gs_runtime_desc rd;
    gs_runtime *rt = NULL;
    gs_check_desc cd;
    gs_check_report rep;
    void *in[8];
    int k, n;
    memset(h, 0, sizeof *h);
    h->ctx = gst_ctx();
    snprintf(text, sizeof text, "HloModule m\n%s\nENTRY main {\n%s}\n", reductions, body);
    if (gs_hlo_parse(h->ctx, text, strlen(text), &h->src) != GS_OK) {
        gst_failf(__FILE__, __LINE__, "parse: %s", gs_ctx_error_msg(h->ctx));
        return false;
    }
    if (opt) pd = *opt;
    else memset(&pd, 0, sizeof pd);
    pd.num_devices = D;
    if (gs_partition(h->src, &pd, &h->spmd) != GS_OK) {
        gst_failf(__FILE__, __LINE__, "partition: %s", gs_ctx_error_msg(h->ctx));
        return false;
    }
    n = gs_graph_num_params(h->src);
    for (k = 0; k < n && k < 8; k++) {
        gs_shape s = gs_value_shape(gs_graph_param(h->src, k));
        in[k] = malloc(gs_shape_bytes(&s) + 1);
        gs_fill_random(s, seed + (uint64_t)k, k, in[k]);
    }
    memset(&rd, 0, sizeof rd);
    rd.num_devices = D;
    rd.mode = GS_RUNTIME_LOCKSTEP;
    memset(&cd, 0, sizeof cd);
    cd.rtol = tol;
    cd.atol = tol;
    CHECK_OK(gs_runtime_create(h->ctx, &rd, &rt));
    if (rt) {
        gs_result r = gs_partition_check(h->spmd, rt, &cd, (const void *const *)in, &rep);
        CHECK_MSG(r == GS_OK && rep.ok && rep.n_compared > 0, "%s\n%s",
                  r == GS_OK ? (rep.ok ? "nothing compared" : rep.message) : gs_ctx_error_msg(h->ctx),
                  gs_partition_print(h->spmd, true));
    }
    gs_runtime_destroy(rt);
    for (k = 0; k < n && k < 8; k++) free(in[k]);
    gst_case_count(h, h->spmd);
    h->warnings = gs_partition_num_warnings(h->spmd);
    h->explain = gst_case_named(h->src, "r") ? gs_partition_explain(h->spmd, gst_case_named(h->src, "r")) : NULL;
    if (!h->explain) h->explain = "";
    h->text = gs_partition_print(h->spmd, true);
    return true;
}

#endif
