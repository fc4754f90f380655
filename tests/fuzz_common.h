/* fuzz_common.h - what the differential fuzzers share (tests/test_spmd_fuzz.c, suite spmd_fuzz, and
   tests/test_spmd_window.c, suite spmd_window): the random generator, what is known about a generated value
   (from which each program's tolerance is derived), the weighted step or case kinds and their GST_*
   variable, finishing a program (outputs, verification, tolerance, inputs, text), and the runner: runtimes
   reused per device count, the partition-and-check of one program, the failure reports with the shortest
   failing prefix, and the totals of a run. Each fuzzer keeps its own generator steps and shardings.

   Include it first (it defines _POSIX_C_SOURCE for clock_gettime before any system header). */
#ifndef GST_FUZZ_COMMON_H
#define GST_FUZZ_COMMON_H

#if !defined(_POSIX_C_SOURCE)
#  define _POSIX_C_SOURCE 200809L   /* clock_gettime */
#endif
#include "test.h"
#include <time.h>

/* static, and quiet when a fuzzer does not use a helper */
#if defined(__GNUC__) || defined(__clang__)
#  define FC_FN static __attribute__((unused))
#else
#  define FC_FN static
#endif

#define FC_MAXI(a, b) ((a) > (b) ? (a) : (b))
#define FC_MAXD(a, b) ((a) > (b) ? (a) : (b))
#define FC_MIND(a, b) ((a) < (b) ? (a) : (b))
#define FC_MAX_D 64           /* runtimes for 1 to 64 devices */
#define FC_MAX_INPUTS 12      /* parameters of one program */
#define FC_MAX_KINDS 32       /* kinds are bits of an unsigned mask */

/* ---- the random generator: splitmix64, the harness's gst_rand ---- */
FC_FN uint64_t fc_next(uint64_t *s) { return gst_rand(s); }
FC_FN int64_t fc_int(uint64_t *s, int64_t lo, int64_t hi) { return gst_randint(s, lo, hi); }
FC_FN bool fc_one_in(uint64_t *s, int n) { return gst_rand(s) % (uint64_t)n == 0; }

FC_FN void fc_shuffle(uint64_t *s, int64_t *a, int64_t n) {
    int64_t i;
    for (i = n - 1; i > 0; i--) {
        int64_t j = fc_int(s, 0, i), t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

/* ---- what the generator knows about a value ----
   Both sides compute the same bits ("reproducible") for elementwise ops and data movement of reproducible
   operands; an exact dyadic number (a multiple of 2^-f with |x| <= 2^e, f + e within the dtype's precision)
   stays exact under sums in any order; a bound on the magnitude and on |partitioned - reference| covers the
   rest. A program's atol is the largest err of its values. */
typedef struct fc_val {
    gs_value *v;
    bool repro;               /* both sides compute the same bits */
    bool dy;                  /* exact dyadic: a multiple of 2^-f with |x| <= 2^e (implies repro) */
    int f, e;
    double mag;               /* |x| <= mag */
    double err;               /* |partitioned - reference| <= err */
} fc_val;

FC_FN bool fc_isfloat(gs_dtype t) { return t == GS_F32 || t == GS_BF16; }
FC_FN int fc_prec(gs_dtype t) { return t == GS_BF16 ? 8 : 24; }
/* the largest difference one rounding can add to a value of magnitude m */
FC_FN double fc_ulp(gs_dtype t, double m) { return m * (t == GS_BF16 ? 1.0 / 128 : 1.0 / 8388608); }
FC_FN int fc_log2ceil(int64_t n) {
    int k = 0;
    while (k < 62 && ((int64_t)1 << k) < n) k++;
    return k;
}
/* the smallest e >= 0 with 2^e >= m */
FC_FN int fc_e_of(double m) {
    int k = 0;
    while (k < 200 && ldexp(1.0, k) < m) k++;
    return k;
}

/* the dims of s with dim `at` split into (a, s.dims[at] / a); returns their count */
FC_FN int fc_split_dim(gs_shape s, int at, int64_t a, int64_t *out) {
    int d, k = 0;
    for (d = 0; d < s.rank; d++) {
        if (d == at) {
            out[k++] = a;
            out[k++] = s.dims[d] / a;
        } else {
            out[k++] = s.dims[d];
        }
    }
    return k;
}

/* the dims of s with dims `at` and at + 1 merged; returns their count */
FC_FN int fc_merge_dims(gs_shape s, int at, int64_t *out) {
    int d, k = 0;
    for (d = 0; d < s.rank; d++) {
        if (d == at) {
            out[k++] = s.dims[d] * s.dims[d + 1];
            d++;
        } else {
            out[k++] = s.dims[d];
        }
    }
    return k;
}

/* Appends v with what is known about it to vals (n of cap used); returns its index, or -1 (when v is NULL the
   context's error says why). Integers are reproducible; a dyadic number beyond the precision is not exact. */
FC_FN int fc_push(fc_val *vals, int *n, int cap, gs_value *v, fc_val info) {
    gs_dtype t;
    if (!v || *n >= cap) return -1;
    t = gs_value_shape(v).dtype;
    info.v = v;
    if (!fc_isfloat(t)) {
        info.err = 0;
        info.repro = true;
    }
    if (info.dy && fc_isfloat(t) && info.f + info.e > fc_prec(t)) info.dy = false;
    if (info.dy) info.repro = true;
    if (info.repro) info.err = 0;
    vals[*n] = info;
    return (*n)++;
}

/* a parameter's elements: multiples of 1/8 in [-2, 2], or s32 in [-8, 8] (as fc_finish draws them) */
FC_FN fc_val fc_input_info(gs_dtype t) {
    fc_val r;
    memset(&r, 0, sizeof r);
    r.repro = r.dy = true;
    if (t == GS_S32) {
        r.mag = 8;
        r.e = 3;
    } else {
        r.mag = 2;
        r.f = 3;
        r.e = 1;
    }
    return r;
}

/* a constant c of dtype t: a multiple of 1/8 with |c| <= 2, or an s32 with |c| <= 8 */
FC_FN fc_val fc_const_info(gs_dtype t, double c) {
    fc_val r = fc_input_info(t);
    r.mag = fabs(c);
    return r;
}

/* an element of either a or b (data movement with a second source: pad value, init, another operand) */
FC_FN fc_val fc_either(fc_val a, fc_val b) {
    fc_val r = a;
    r.repro = a.repro && b.repro;
    r.dy = a.dy && b.dy;
    r.f = FC_MAXI(a.f, b.f);
    r.e = FC_MAXI(a.e, b.e);
    r.mag = FC_MAXD(a.mag, b.mag);
    r.err = FC_MAXD(a.err, b.err);
    return r;
}

/* the product of an element of a and one of b, in dtype t */
FC_FN fc_val fc_prod(gs_dtype t, fc_val a, fc_val b) {
    fc_val r;
    memset(&r, 0, sizeof r);
    r.repro = a.repro && b.repro;
    r.dy = a.dy && b.dy;
    r.f = a.f + b.f;
    r.e = a.e + b.e;
    r.mag = a.mag * b.mag;
    r.err = a.mag * b.err + b.mag * a.err + a.err * b.err + (r.repro ? 0 : fc_ulp(t, r.mag));
    return r;
}

/* A sum of n terms like `term`, in an order partitioning may change: exact when the terms are exact and the sum
   fits the precision (s32 sums always: modulo 2^32 in any order), else the classical worst case of a reordered
   sum, 2 gamma(n) sum |terms| with gamma(n) = n u / (1 - n u), plus the terms' own bounds and one rounding.
   gamma holds only while n u < 1 (not for a bf16 sum of 256 terms or more); there, and wherever it is smaller,
   the magnitude bound: a rounded running sum of n terms of at most m stays within n m (1 + u)^n, so the two
   sides differ by at most twice that. */
FC_FN fc_val fc_sum(gs_dtype t, int64_t n, fc_val term) {
    fc_val r;
    double u = t == GS_BF16 ? 1.0 / 256 : 1.0 / 16777216, grow = pow(1 + u, (double)n),
           gamma = (double)n * u < 1 ? FC_MIND((double)n * u / (1 - (double)n * u), grow) : grow;
    memset(&r, 0, sizeof r);
    r.mag = (double)n * term.mag;
    r.e = FC_MAXI(term.e + fc_log2ceil(n), fc_e_of(r.mag));
    r.f = term.f;
    if (t == GS_S32 || (term.dy && r.f + r.e <= fc_prec(t))) {
        r.dy = r.repro = true;
        return r;
    }
    r.err = (double)n * term.err + 2 * gamma * (double)n * term.mag + fc_ulp(t, r.mag);
    return r;
}

/* ---- kinds: a fuzzer's step or case kinds, drawn by weight; bit k of a mask enables kinds[k] ---- */
typedef struct fc_kind {
    const char *name;
    int weight;
} fc_kind;

/* a kind by weight among the bits of mask (which must enable one) */
FC_FN int fc_draw_kind(uint64_t *rng, const fc_kind *kinds, int n, unsigned mask) {
    int k, total = 0, pick, w = 0;
    for (k = 0; k < n; k++)
        if (mask & (1u << k)) total += kinds[k].weight;
    pick = (int)fc_int(rng, 0, total - 1);
    for (k = 0; k < n; k++) {
        if (!(mask & (1u << k))) continue;
        w += kinds[k].weight;
        if (pick < w) return k;
    }
    return 0;
}

/* The kinds a list names: comma-separated names, or "-name" entries that remove kinds from the full mix; NULL,
   empty, "all" or nothing left: all kinds. */
FC_FN unsigned fc_parse_kinds(const char *s, const fc_kind *kinds, int n) {
    const char *p;
    unsigned all = n >= 32 ? ~0u : (1u << n) - 1, mask = 0, minus = all;
    int k;
    if (!s || !*s || strcmp(s, "all") == 0) return all;
    for (p = s; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        size_t neg = *p == '-' ? 1 : 0;
        for (k = 0; k < n; k++)
            if (strlen(kinds[k].name) == len - neg && strncmp(kinds[k].name, p + neg, len - neg) == 0) {
                if (neg) minus &= ~(1u << k);
                else mask |= 1u << k;
            }
        p += len + (e ? 1 : 0);
    }
    if (!mask) mask = all;
    mask &= minus;
    return mask ? mask : all;
}

FC_FN double fc_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- one program ---- */
typedef struct fc_program {
    gs_graph *g;
    int kind;                 /* the case kind, for fuzzers that draw one per program (else 0) */
    int64_t D;
    gs_partition_desc pd;     /* the partitioner's options */
    bool threaded;            /* run on a threaded runtime, else lockstep */
    int n_steps;              /* steps built (a prefix keeps the first k) */
    int n_out;                /* outputs (a prefix has one: its last value) */
    double atol;
    int n_in;
    void *inputs[FC_MAX_INPUTS];
    const char *text;         /* the annotated source, before partitioning */
    char desc[96];            /* what else the report names: the devices, the kind or the options */
} fc_program;

FC_FN void fc_program_free(fc_program *p) {
    int k;
    for (k = 0; k < p->n_in; k++) free(p->inputs[k]);
    memset(p, 0, sizeof *p);
}

/* Finishes the program of g: its outputs, verification, the tolerance (the largest err of the n_vals values),
   random inputs from in_rng (floats multiples of 1/8 in [-2, 2], s32 in [-8, 8]) and its text. Returns false
   with *why on an error. */
FC_FN bool fc_finish(gs_graph *g, int n_out, gs_value **outs, const fc_val *vals, int n_vals, uint64_t in_rng,
                     fc_program *out, const char **why) {
    gs_ctx *ctx = gs_graph_ctx(g);
    int k;
    if (n_out == 1 ? gs_graph_set_root(g, outs[0]) != GS_OK : gs_graph_set_outputs(g, n_out, outs) != GS_OK) {
        *why = gs_ctx_error_msg(ctx);
        return false;
    }
    if (gs_graph_verify(g) != GS_OK) {
        *why = gs_ctx_error_msg(ctx);
        return false;
    }
    out->n_out = n_out;
    out->atol = 1e-30;
    for (k = 0; k < n_vals; k++)
        if (vals[k].err > out->atol) out->atol = vals[k].err;
    out->g = g;
    if (gs_graph_num_params(g) > FC_MAX_INPUTS) {
        *why = "too many parameters";
        return false;
    }
    out->n_in = gs_graph_num_params(g);
    for (k = 0; k < out->n_in; k++) {
        gs_shape s = gs_value_shape(gs_graph_param(g, k));
        int64_t e, n = gs_shape_numel(&s);
        out->inputs[k] = malloc(gs_shape_bytes(&s) + 1);
        if (!out->inputs[k]) {
            *why = "out of memory";
            return false;
        }
        for (e = 0; e < n; e++) {
            if (s.dtype == GS_S32) ((int32_t *)out->inputs[k])[e] = (int32_t)fc_int(&in_rng, -8, 8);
            else ((float *)out->inputs[k])[e] = (float)fc_int(&in_rng, -16, 16) / 8;
        }
    }
    out->text = gs_hlo_print(g);
    if (!out->text) {
        *why = gs_ctx_error_msg(ctx);
        return false;
    }
    return true;
}

/* ---- a fuzzer ---- */
/* Builds the program of seed in ctx from the kinds enabled in the mask `kinds`, on only_D devices (0: drawn);
   max_steps >= 0 keeps only the first steps (and the last value as the only output). Returns false with *why
   when the generator itself failed. */
typedef bool (*fc_build_fn)(gs_ctx *ctx, uint64_t seed, unsigned kinds, int64_t only_D, int max_steps,
                            fc_program *out, const char **why);

typedef struct fc_fuzzer {
    const char *tag;          /* FUZZ: the variables GST_FUZZ_COUNT, _SEED, ... and the failure lines */
    const char *test;         /* the test's name, in the command that reproduces a failure */
    const char *kinds_var;    /* the variable naming kinds: OPS gives GST_FUZZ_OPS */
    const fc_kind *kinds;
    int n_kinds;
    long long count;          /* programs of a run by default */
    int64_t max_D;            /* GST_<tag>_DEVICES may ask for 1 to max_D (<= FC_MAX_D) */
    bool text_roundtrip;      /* the SPMD program's text must parse back and print the same */
    bool show_warnings;       /* verbose output lists the partition warnings */
    fc_build_fn build;
    const char *title;        /* the summary line: "<title>: N <unit> from seed S ..." */
    const char *unit;
    const char *spmd_errors;  /* what the summary calls FC_SPMD outcomes */
} fc_fuzzer;

enum { FC_OK = 0, FC_GEN, FC_PARTITION, FC_SPMD, FC_RUN, FC_MISMATCH, FC_N_OUTCOMES };
enum { FC_C_PERMUTE, FC_C_GATHER, FC_C_A2A, FC_C_REDUCE, FC_N_COLL };

FC_FN const char *fc_outcome_name(const fc_fuzzer *F, int o) {
    static const char *const names[FC_N_OUTCOMES] = {"ok", "generator error", "partition error", "", "run error",
                                                     "mismatch"};
    if (o == FC_SPMD) return F->text_roundtrip ? "SPMD text error" : "SPMD verify error";
    return names[o];
}

/* What a run counts. */
typedef struct fc_totals {
    long long count;
    uint64_t seed0;
    double seconds;
    long long outcomes[FC_N_OUTCOMES];
    long long per_kind[FC_MAX_KINDS];
    long long coll[FC_N_COLL];      /* collectives the SPMD programs hold (loop bodies included) */
    long long warned, warnings;     /* programs with partition warnings, and the warnings */
} fc_totals;

/* ---- the runner ---- */
typedef struct fc_runner {
    gs_ctx *ctx;
    gs_runtime *rt[FC_MAX_D + 1], *thr[FC_MAX_D + 1];   /* lockstep and threaded, per device count */
    int used;                 /* programs built in ctx (a fresh context every so often bounds the arena) */
} fc_runner;

FC_FN void fc_runner_reset(fc_runner *R) {
    int d;
    for (d = 0; d <= FC_MAX_D; d++) {
        gs_runtime_destroy(R->rt[d]);
        gs_runtime_destroy(R->thr[d]);
    }
    gs_ctx_destroy(R->ctx);
    memset(R, 0, sizeof *R);
}

FC_FN gs_runtime *fc_runtime(fc_runner *R, int64_t D, bool threaded) {
    gs_runtime **rt = threaded ? &R->thr[D] : &R->rt[D];
    if (!*rt) {
        gs_runtime_desc rd;
        memset(&rd, 0, sizeof rd);
        rd.num_devices = D;
        rd.mode = threaded ? GS_RUNTIME_THREADED : GS_RUNTIME_LOCKSTEP;
        if (gs_runtime_create(R->ctx, &rd, rt) != GS_OK) return NULL;
    }
    return *rt;
}

/* Builds, partitions and checks one program; *msg describes a failure (in R's context or static). With T, the
   SPMD program's collectives and warnings are added to its counts. */
FC_FN int fc_run_one(const fc_fuzzer *F, fc_runner *R, uint64_t seed, unsigned kinds, int64_t only_D, int max_steps,
                     bool verbose, fc_totals *T, fc_program *P, const char **msg) {
    gs_graph *spmd = NULL;
    gs_check_desc cd;
    gs_check_report rep;
    gs_runtime *rt;
    gs_result r;
    int w;
    memset(P, 0, sizeof *P);
    if (!R->ctx || R->used >= 32) {
        fc_runner_reset(R);
        if (gs_ctx_create(NULL, &R->ctx) != GS_OK) {
            *msg = "cannot create a context";
            return FC_GEN;
        }
    }
    R->used++;
    gs_ctx_clear_error(R->ctx);
    if (!F->build(R->ctx, seed, kinds, only_D, max_steps, P, msg)) return FC_GEN;
    if (verbose) printf("---- seed %llu: %s, atol %g\n%s", (unsigned long long)seed, P->desc, P->atol, P->text);
    r = gs_partition(P->g, &P->pd, &spmd);
    if (r != GS_OK) {
        *msg = gs_ctx_error_msg(R->ctx);
        return FC_PARTITION;
    }
    if (verbose) {
        printf("---- SPMD program\n%s", gs_partition_print(spmd, true));
        if (F->show_warnings)
            for (w = 0; w < gs_partition_num_warnings(spmd); w++)
                printf("---- warning: %s\n", gs_partition_warning(spmd, w));
    }
    if (gs_graph_verify(spmd) != GS_OK) {
        *msg = gs_ctx_error_msg(R->ctx);
        return FC_SPMD;
    }
    if (F->text_roundtrip) {
        /* the SPMD program's text (what `gshard partition` prints) parses back to the same text */
        const char *t1 = gs_hlo_print(spmd), *t2 = NULL;
        gs_graph *back = NULL;
        if (!t1 || gs_hlo_parse(R->ctx, t1, strlen(t1), &back) != GS_OK || !(t2 = gs_hlo_print(back))) {
            *msg = gs_ctx_error_msg(R->ctx);
            return FC_SPMD;
        }
        if (strcmp(t1, t2) != 0) {
            *msg = "the SPMD program's text does not print back the same after parsing";
            return FC_SPMD;
        }
    }
    if (T && gs_partition_num_warnings(spmd) > 0) {
        T->warned++;
        T->warnings += gs_partition_num_warnings(spmd);
    }
    rt = fc_runtime(R, P->D, P->threaded);
    if (!rt) {
        *msg = gs_ctx_error_msg(R->ctx);
        return FC_RUN;
    }
    memset(&cd, 0, sizeof cd);
    cd.atol = P->atol;
    cd.rtol = 1e-12;
    cd.locate = true;
    r = gs_partition_check(spmd, rt, &cd, (const void *const *)P->inputs, &rep);
    if (r != GS_OK) {
        *msg = gs_ctx_error_msg(R->ctx);
        return FC_RUN;
    }
    if (T) {
        /* the runtime lists every collective instruction of the program it ran (loop bodies included) */
        gs_runtime_stats st;
        int i;
        if (gs_runtime_get_stats(rt, &st) == GS_OK)
            for (i = 0; i < st.n_collectives; i++) {
                gs_op op = st.collectives[i].op;
                if (op == GS_OP_COLLECTIVE_PERMUTE) T->coll[FC_C_PERMUTE]++;
                else if (op == GS_OP_ALL_GATHER) T->coll[FC_C_GATHER]++;
                else if (op == GS_OP_ALL_TO_ALL) T->coll[FC_C_A2A]++;
                else if (op == GS_OP_ALL_REDUCE || op == GS_OP_REDUCE_SCATTER) T->coll[FC_C_REDUCE]++;
            }
    }
    if (verbose) {
        printf("---- %s: %lld elements, max |got - want| %g", rep.ok ? "ok" : "MISMATCH", (long long)rep.n_compared,
               rep.max_abs_err);
        if (F->show_warnings) printf(", %d partition warnings", gs_partition_num_warnings(spmd));
        printf("\n");
    }
    if (!rep.ok) {
        *msg = rep.message;
        return FC_MISMATCH;
    }
    return FC_OK;
}

/* the value of the variable GST_<tag>_<what>, or NULL */
FC_FN const char *fc_var(const fc_fuzzer *F, const char *what) {
    char name[64];
    snprintf(name, sizeof name, "GST_%s_%s", F->tag, what);
    return getenv(name);
}

FC_FN long long fc_var_int(const fc_fuzzer *F, const char *what, long long dflt) {
    const char *s = fc_var(F, what);
    return s && *s ? strtoll(s, NULL, 10) : dflt;
}

/* the command that runs one seed again */
FC_FN void fc_print_repro(const fc_fuzzer *F, uint64_t seed) {
    const char *kinds = fc_var(F, F->kinds_var), *devs = fc_var(F, "DEVICES");
    fprintf(stderr, "  reproduce: GST_%s_SEED=%llu GST_%s_COUNT=1 GST_%s_VERBOSE=1", F->tag, (unsigned long long)seed,
            F->tag, F->tag);
    if (kinds && *kinds) fprintf(stderr, " GST_%s_%s=%s", F->tag, F->kinds_var, kinds);
    if (devs && *devs) fprintf(stderr, " GST_%s_DEVICES=%s", F->tag, devs);
    fprintf(stderr, " ./build/gshard_tests %s\n", F->test);
}

/* Runs GST_<tag>_COUNT programs from seed GST_<tag>_SEED (default 1), counts them in T and prints the summary
   line (a fuzzer may print more of T after it). Every failure fails the test and prints its seed, its
   description, the report and the command that reproduces it; the first GST_<tag>_SHOW (default 5) also print
   the source program and the shortest failing prefix: the first k steps with the last value as the only output,
   for k = 1 to n_steps (the whole program only when that drops outputs). GST_<tag>_VERBOSE=1 prints every
   program; GST_<tag>_DEVICES=D uses D devices only. */
/* GST_<tag>_DUMP=DIR: a program that passed is written as DIR/<tag>_<seed>_d<D>.hlo (the MPI tests run them
   on ranks and compare with the thread runtime); a file that cannot be written fails the test. */
FC_FN void fc_dump(const fc_fuzzer *F, uint64_t seed, const fc_program *P) {
    char path[4096];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s_%llu_d%lld.hlo", fc_var(F, "DUMP"), F->tag, (unsigned long long)seed, (long long)P->D);
    f = fopen(path, "w");
    if (!f || fputs(P->text, f) < 0) {
        fprintf(stderr, "  cannot write %s\n", path);
        gst_checks_failed_in_test++;
    }
    if (f) fclose(f);
}

FC_FN void fc_run(const fc_fuzzer *F, fc_totals *T) {
    const char *seed_s = fc_var(F, "SEED");
    uint64_t seed0 = seed_s ? strtoull(seed_s, NULL, 10) : 1;
    long long count = fc_var_int(F, "COUNT", F->count), i;
    bool verbose = fc_var_int(F, "VERBOSE", 0) != 0;
    int show = (int)fc_var_int(F, "SHOW", 5), shown = 0, k;
    int64_t only_D = fc_var_int(F, "DEVICES", 0);
    unsigned kinds = fc_parse_kinds(fc_var(F, F->kinds_var), F->kinds, F->n_kinds);
    double t0 = fc_now();
    fc_runner R;
    memset(&R, 0, sizeof R);
    memset(T, 0, sizeof *T);
    T->count = count;
    T->seed0 = seed0;
    if (only_D < 0 || only_D > F->max_D) only_D = 0;
    for (i = 0; i < count; i++) {
        uint64_t seed = seed0 + (uint64_t)i;
        fc_program P;
        const char *msg = "";
        int o = fc_run_one(F, &R, seed, kinds, only_D, -1, verbose, T, &P, &msg);
        if (o == FC_OK && fc_var(F, "DUMP")) fc_dump(F, seed, &P);
        T->outcomes[o]++;
        T->per_kind[P.kind]++;
        if (o != FC_OK) {
            gst_checks_failed_in_test++;
            if (shown < show) {
                shown++;
                fprintf(stderr, "  %s seed %llu (%s): %s: %s\n", F->tag, (unsigned long long)seed, P.desc,
                        fc_outcome_name(F, o), msg);
                if (P.text) fprintf(stderr, "%s", P.text);
                for (k = 1; k <= P.n_steps && o != FC_GEN && (k < P.n_steps || P.n_out > 1); k++) {
                    fc_program Q;
                    const char *m2 = "";
                    int o2 = fc_run_one(F, &R, seed, kinds, only_D, k, false, NULL, &Q, &m2);
                    bool fails = o2 != FC_OK && o2 != FC_GEN;
                    if (fails)
                        fprintf(stderr, "  shortest failing prefix (%d of %d steps): %s: %s\n%s", k, P.n_steps,
                                fc_outcome_name(F, o2), m2, Q.text ? Q.text : "");
                    fc_program_free(&Q);
                    if (fails) break;
                }
            } else {
                fprintf(stderr, "  %s seed %llu (%s): %s: %.200s\n", F->tag, (unsigned long long)seed, P.desc,
                        fc_outcome_name(F, o), msg);
            }
            fc_print_repro(F, seed);
        }
        fc_program_free(&P);
    }
    fc_runner_reset(&R);
    T->seconds = fc_now() - t0;
    printf("%s: %lld %s from seed %llu in %.1f s: %lld ok, %lld partition errors, %lld %s, %lld run errors, "
           "%lld mismatches, %lld generator errors\n",
           F->title, count, F->unit, (unsigned long long)seed0, T->seconds, T->outcomes[FC_OK],
           T->outcomes[FC_PARTITION], T->outcomes[FC_SPMD], F->spmd_errors, T->outcomes[FC_RUN],
           T->outcomes[FC_MISMATCH], T->outcomes[FC_GEN]);
}

#endif
