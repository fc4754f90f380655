/* test_fault.c - allocation failure, tested the way SQLite tests itself: a counting allocator (given to the
   context through gs_ctx_desc.allocator, which the runtime and its workers use too) fails the k-th allocation,
   either once or from k on, and a whole pipeline runs for every k:
       parse -> verify -> propagate -> partition -> print -> runtime -> run -> check -> destroy.
   Every k must end in GS_ERR_OUT_OF_MEMORY with a message, or in exactly the result of a run without
   failures (the same SPMD text, the same output bytes, the check ok); and nothing may stay allocated. The
   sanitizer build (make sanitize, make fault) adds crash, leak and undefined-behaviour detection.
   make test runs a sample of k (GST_FAULT_STRIDE, default 29); make fault sweeps every k and prints a table
   (GST_FAULT_FULL=1). stb_ds's side tables do not go through the allocator (see "Memory" in gshard.h), so
   they never fail here. */
#include "test.h"
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct fault_alloc {
    pthread_mutex_t mu;
    long long count;          /* allocations asked for */
    long long fail_at;        /* 0: never fail */
    bool from_on;             /* fail every allocation from fail_at on (else only that one) */
    long long failed, live;
} fault_alloc;

static void *fault_alloc_fn(size_t n, void *user) {
    fault_alloc *f = (fault_alloc *)user;
    void *p = NULL;
    bool fail;
    pthread_mutex_lock(&f->mu);
    f->count++;
    fail = f->fail_at > 0 && (f->from_on ? f->count >= f->fail_at : f->count == f->fail_at);
    if (fail) {
        f->failed++;
    } else {
        p = malloc(n);
        if (p) f->live++;
    }
    pthread_mutex_unlock(&f->mu);
    return p;
}
static void fault_free_fn(void *p, void *user) {
    fault_alloc *f = (fault_alloc *)user;
    if (!p) return;
    pthread_mutex_lock(&f->mu);
    f->live--;
    pthread_mutex_unlock(&f->mu);
    free(p);
}

typedef struct pipeline {
    const char *name;
    char *text;
    int64_t D;
    int64_t we_bytes;         /* gs_partition_desc.windowed_einsum_bytes */
} pipeline;

/* What one run produced: its status, and on success the SPMD text and the outputs' bytes. */
typedef struct outcome {
    gs_result r;
    char msg[256];
    char *spmd_text;
    unsigned char *out;
    size_t out_bytes;
    bool check_ok;
} outcome;

static void outcome_free(outcome *o) {
    free(o->spmd_text);
    free(o->out);
    memset(o, 0, sizeof *o);
}

static gs_result stage(gs_ctx *ctx, gs_result r, outcome *o) {
    if (r != GS_OK && !o->r) {
        o->r = r;
        snprintf(o->msg, sizeof o->msg, "%s", gs_ctx_error_msg(ctx) ? gs_ctx_error_msg(ctx) : "");
    }
    return r;
}

/* The pipeline on one context; the runtime in mode (workers threads when THREADED). */
static void run_pipeline(const pipeline *p, fault_alloc *f, gs_runtime_mode mode, int64_t workers, outcome *o) {
    gs_ctx_desc desc;
    gs_ctx *ctx = NULL;
    gs_graph *g = NULL, *spmd = NULL;
    gs_runtime *rt = NULL;
    gs_runtime_desc rd;
    gs_partition_desc pd;
    gs_propagate_desc prd;
    gs_check_desc cd;
    gs_check_report rep;
    void *in[16];
    void *outs[16];
    const gs_sharding *in_sh[16], *out_sh[16];
    gs_shape in_shapes[16], out_shapes[16];
    int n_in = 0, n_out = 0, k;
    const char *t;
    memset(o, 0, sizeof *o);
    memset(in, 0, sizeof in);
    memset(outs, 0, sizeof outs);
    memset(&desc, 0, sizeof desc);
    desc.allocator.alloc = fault_alloc_fn;
    desc.allocator.free = fault_free_fn;
    desc.allocator.user = f;
    if ((o->r = gs_ctx_create(&desc, &ctx)) != GS_OK) {
        snprintf(o->msg, sizeof o->msg, "gs_ctx_create failed");
        return;
    }
    if (stage(ctx, gs_hlo_parse(ctx, p->text, strlen(p->text), &g), o)) goto done;
    if (stage(ctx, gs_graph_verify(g), o)) goto done;
    memset(&prd, 0, sizeof prd);
    prd.num_devices = p->D;
    if (stage(ctx, gs_propagate(g, &prd), o)) goto done;
    memset(&pd, 0, sizeof pd);
    pd.num_devices = p->D;
    pd.windowed_einsum_bytes = p->we_bytes;
    if (stage(ctx, gs_partition(g, &pd, &spmd), o)) goto done;
    t = gs_partition_print(spmd, true);
    if (stage(ctx, t ? GS_OK : gs_ctx_error(ctx), o)) goto done;
    o->spmd_text = (char *)malloc(strlen(t) + 1);
    if (o->spmd_text) strcpy(o->spmd_text, t);
    memset(&rd, 0, sizeof rd);
    rd.num_devices = p->D;
    rd.mode = mode;
    rd.workers = mode == GS_RUNTIME_THREADED ? workers : 0;
    rd.watchdog_ms = 20000;
    if (stage(ctx, gs_runtime_create(ctx, &rd, &rt), o)) goto done;
    /* global inputs and outputs (the test's own memory, never failed) */
    for (k = 0; k < gs_graph_num_params(g) && n_in < 16; k++, n_in++) {
        in_shapes[n_in] = gs_value_shape(gs_graph_param(g, k));
        in_sh[n_in] = gs_partition_param_sharding(spmd, n_in);
        in[n_in] = malloc(gs_shape_bytes(&in_shapes[n_in]) + 1);
        if (in[n_in]) gs_fill_random(in_shapes[n_in], 7, k, in[n_in]);
    }
    for (k = 0; k < gs_graph_num_outputs(g) && n_out < 16; k++, n_out++) {
        out_shapes[n_out] = gs_graph_output_shape(g, k);
        out_sh[n_out] = gs_partition_output_sharding(spmd, k);
        outs[n_out] = calloc(1, gs_shape_bytes(&out_shapes[n_out]) + 1);
        o->out_bytes += gs_shape_bytes(&out_shapes[n_out]);
    }
    if (stage(ctx, gs_runtime_run_global(rt, spmd, in_shapes, in_sh, (const void *const *)in, out_shapes, out_sh, outs),
              o))
        goto done;
    o->out = (unsigned char *)malloc(o->out_bytes + 1);
    if (o->out) {
        size_t at = 0;
        for (k = 0; k < n_out; k++) {
            memcpy(o->out + at, outs[k], gs_shape_bytes(&out_shapes[k]));
            at += gs_shape_bytes(&out_shapes[k]);
        }
    }
    memset(&cd, 0, sizeof cd);
    cd.locate = true;
    if (stage(ctx, gs_partition_check(spmd, rt, &cd, (const void *const *)in, &rep), o)) goto done;
    o->check_ok = rep.ok;
done:
    gs_runtime_destroy(rt);
    gs_ctx_destroy(ctx);
    for (k = 0; k < 16; k++) {
        free(in[k]);
        free(outs[k]);
    }
}

typedef struct sweep_stats {
    long long ks, oom, ok, wrong_code, silent_diff, leaks, no_msg;
} sweep_stats;

/* One run failing at k; classifies it against the run without failures. */
static void one_k(const pipeline *p, const outcome *base, long long k, bool from_on, gs_runtime_mode mode,
                  int64_t workers, sweep_stats *st) {
    fault_alloc f;
    outcome o;
    memset(&f, 0, sizeof f);
    pthread_mutex_init(&f.mu, NULL);
    f.fail_at = k;
    f.from_on = from_on;
    run_pipeline(p, &f, mode, workers, &o);
    st->ks++;
    if (f.live != 0) {
        st->leaks++;
        gst_failf(__FILE__, __LINE__, "%s: k=%lld (%s): %lld allocations left after destroy", p->name, k,
                  from_on ? "from k on" : "once", f.live);
    }
    if (o.r == GS_ERR_OUT_OF_MEMORY) {
        st->oom++;
        if (!o.msg[0]) {
            st->no_msg++;
            gst_failf(__FILE__, __LINE__, "%s: k=%lld: out of memory without a message", p->name, k);
        }
    } else if (o.r != GS_OK) {
        st->wrong_code++;
        gst_failf(__FILE__, __LINE__, "%s: k=%lld (%s): %s instead of out of memory: %s", p->name, k,
                  from_on ? "from k on" : "once", gs_result_str(o.r), o.msg);
    } else {
        st->ok++;
        if (!o.check_ok || !o.spmd_text || !base->spmd_text || strcmp(o.spmd_text, base->spmd_text) != 0 || !o.out ||
            o.out_bytes != base->out_bytes || memcmp(o.out, base->out, base->out_bytes) != 0) {
            st->silent_diff++;
            gst_failf(__FILE__, __LINE__, "%s: k=%lld (%s): GS_OK with a different result", p->name, k,
                      from_on ? "from k on" : "once");
        }
    }
    outcome_free(&o);
    pthread_mutex_destroy(&f.mu);
}

/* the whole file (up to 1 MiB), or NULL */
static char *read_text(const char *path) {
    size_t cap = (size_t)1 << 20;
    char *t = (char *)malloc(cap);
    if (t && gst_read_file(path, t, cap) == 0) {
        free(t);
        t = NULL;
    }
    return t;
}

/* Sweeps one pipeline: every k (stride 1) or every stride-th, "once" and "from k on", lockstep and one worker;
   then a random sample of k with several workers. */
static void sweep(const pipeline *p, long long stride, int n_random) {
    fault_alloc f;
    outcome base;
    sweep_stats st;
    long long n, k;
    uint64_t rng = 0x5eed + (uint64_t)p->D;
    int m, i;
    memset(&f, 0, sizeof f);
    memset(&st, 0, sizeof st);
    pthread_mutex_init(&f.mu, NULL);
    run_pipeline(p, &f, GS_RUNTIME_LOCKSTEP, 0, &base);
    CHECK_MSG(base.r == GS_OK && base.check_ok, "%s: the run without failures: %s %s", p->name, gs_result_str(base.r),
              base.msg);
    CHECK_EQ_INT(f.live, 0);
    if (p->we_bytes > 0 && base.spmd_text)   /* the pipeline really has the windowed einsum loop */
        CHECK(strstr(base.spmd_text, "windowed_einsum") != NULL);
    n = f.count;
    pthread_mutex_destroy(&f.mu);
    if (base.r != GS_OK) {
        outcome_free(&base);
        return;
    }
    for (m = 0; m < 2; m++) {
        gs_runtime_mode mode = m == 0 ? GS_RUNTIME_LOCKSTEP : GS_RUNTIME_THREADED;
        for (k = 1; k <= n + 1; k += stride) {
            one_k(p, &base, k, false, mode, 1, &st);
            one_k(p, &base, k, true, mode, 1, &st);
        }
    }
    for (i = 0; i < n_random; i++) {
        k = 1 + (long long)(gst_rand(&rng) % (uint64_t)(n + 1));
        one_k(p, &base, k, i % 2 == 1, GS_RUNTIME_THREADED, p->D, &st);
    }
    /* a crash ends the process (under the sanitizers, with a report), so a printed row has 0 crashes */
    {
        char swept[64];
        snprintf(swept, sizeof swept, "1..%lld/%lld", n + 1, stride);
        printf("fault: %-10s %7lld  %-15s %7lld %7lld %5lld %10lld %7lld %7lld %5lld %12lld\n", p->name, n, swept, st.ks,
               st.oom, st.ok, st.wrong_code, st.no_msg, 0LL, st.leaks, st.silent_diff);
    }
    outcome_free(&base);
}

static void test_fault_pipelines(void) {
    const char *full = getenv("GST_FAULT_FULL"), *s = getenv("GST_FAULT_STRIDE");
    long long stride = full && *full ? 1 : (s && *s ? atoll(s) : 29);
    int n_random = full && *full ? 200 : 6;
    pipeline ps[2];
    int i;
    if (stride < 1) stride = 1;
    printf("fault: %-10s %7s  %-15s %7s %7s %5s %10s %7s %7s %5s %12s\n", "pipeline", "allocs", "k swept/stride", "runs",
           "OOM", "ok", "wrong code", "no msg", "crashes", "leaks", "silent diffs");
    ps[0].name = "moe_layer";
    ps[0].text = read_text("examples/moe_layer.hlo");
    ps[0].D = 8;
    ps[0].we_bytes = 0;
    ps[1].name = "fault_mix";
    ps[1].text = read_text("tests/data/fault_mix.hlo");
    ps[1].D = 4;
    ps[1].we_bytes = 1;   /* the dot becomes a windowed einsum loop */
    for (i = 0; i < 2; i++) {
        CHECK_MSG(ps[i].text != NULL, "cannot read the %s module (run from the repository root)", ps[i].name);
        if (ps[i].text) sweep(&ps[i], stride, n_random);
        free(ps[i].text);
    }
}

void suite_fault(void) { RUN(test_fault_pipelines); }
