/* bench_collectives.c - the runtime's collective engine on D emulated devices (threads), against the memory
 * system's copy bandwidth measured in the same run and, when a results file from bench/run_mpi_baseline.sh is
 * given, against Open MPI on the same D and sizes.
 *
 *   cc -std=c99 -O3 -march=native -I. bench/bench_collectives.c -o bench_collectives -lpthread -lm
 *   build/bench/bench_collectives [--quick] [--passes 3] [--mpi FILE.csv] [--devices 2,4,8]
 *                                 [--ops allreduce,permute] [--min-kib 4] [--max-mib 64] [--program]
 *
 * What is measured: gs_runtime_collective(rt, spec, in, out, repeat) on f32 data, one call running the
 * collective `repeat` times, best of several calls, and best over --passes passes through the whole table
 * (default 3, --quick 1), spread over the run. The call runs the D devices' shares on min(D, processors)
 * worker threads that meet at one barrier per repetition. Inside a program (gs_runtime_run) a collective is
 * two barrier rounds of the runtime's workers (by default min(D, processors), each running a run of the
 * devices); the --program option times that path too (one all-reduce per iteration of a while loop), with
 * the default workers and with one thread per device, the latter as the in-run baseline for running
 * several devices per thread.
 * "size" is nccl-tests' size per device: the all-reduce/all-to-all/collective-permute buffer, the all-gather
 * output, the reduce-scatter input. Bus bandwidth is nccl-tests' too: algbw = size / time, times
 * 2(D-1)/D for all-reduce, (D-1)/D for all-gather, reduce-scatter and all-to-all, 1 for collective-permute
 * (a send/receive ring).
 *
 * The copy column is 2 threads each copying `size` bytes (memcpy, bytes copied per second): the bandwidth
 * the memory system gives two cores at this size. All D devices share that memory, so a collective that reads
 * R and writes W bytes per device cannot beat D (R + W) / (2 copy) seconds: "%cap" is that bound over the
 * measured time (all-reduce: R = W = size, so its bus bandwidth is capped at copy x 2(D-1)/D^2).
 *
 * The MPI file has lines "op,devices,bytes,microseconds" (op: allreduce, allgather, reducescatter, alltoall,
 * permute), the best of several launches. Targets are printed as met/missed on each row and the missed ones
 * are listed at the end; nothing here is an assertion: the exit status is 1 only if a result is wrong.
 */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#ifndef GSHARD_EXTERNAL_IMPL   /* the Makefile links gshard_impl.c instead */
#define GSHARD_IMPLEMENTATION
#endif
#include "gshard.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_sec(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

enum { OP_AR, OP_AG, OP_RS, OP_A2A, OP_CP, N_OPS };
static const char *op_label[N_OPS] = {"all-reduce", "all-gather", "reduce-scatter", "all-to-all", "coll-permute"};
static const char *op_mpi[N_OPS] = {"allreduce", "allgather", "reducescatter", "alltoall", "permute"};

/* ---- the 2-thread copy baseline ---- */
typedef struct copy_job {
    char *src, *dst;
    size_t bytes;
    long reps;
    double t0, t1;            /* this thread's own start and end */
    pthread_barrier_t *bar;
} copy_job;

/* through a volatile pointer: the compiler must not merge or drop the repeated copies */
static void *(*volatile copy_fn)(void *, const void *, size_t) = memcpy;

static void *copy_main(void *p) {
    copy_job *j = (copy_job *)p;
    long r;
    pthread_barrier_wait(j->bar);
    j->t0 = now_sec();
    for (r = 0; r < j->reps; r++) copy_fn(j->dst, j->src, j->bytes);
    j->t1 = now_sec();
    return NULL;
}

/* bytes copied per second by 2 threads, each copying `bytes` (best of a few runs; timed from the first
   thread's start to the last one's end) */
static double copy_bandwidth(size_t bytes, double budget) {
    pthread_t t[2];
    copy_job j[2];
    pthread_barrier_t bar;
    double best = 0;
    long reps = 1;
    int k, trial;
    for (k = 0; k < 2; k++) {
        j[k].src = (char *)malloc(bytes);
        j[k].dst = (char *)malloc(bytes);
        memset(j[k].src, 1 + k, bytes);
        memset(j[k].dst, 0, bytes);
        j[k].bytes = bytes;
        j[k].bar = &bar;
    }
    pthread_barrier_init(&bar, NULL, 2);
    for (trial = 0; trial < 6; trial++) {
        double dt;
        for (k = 0; k < 2; k++) {
            j[k].reps = reps;
            pthread_create(&t[k], NULL, copy_main, &j[k]);
        }
        for (k = 0; k < 2; k++) pthread_join(t[k], NULL);
        dt = (j[0].t1 > j[1].t1 ? j[0].t1 : j[1].t1) - (j[0].t0 < j[1].t0 ? j[0].t0 : j[1].t0);
        if (trial > 0 && dt > 0 && 2.0 * (double)bytes * (double)reps / dt > best)
            best = 2.0 * (double)bytes * (double)reps / dt;
        if (dt < budget / 6) reps = (long)((double)reps * (budget / 6) / (dt > 1e-6 ? dt : 1e-6)) + 1;
    }
    pthread_barrier_destroy(&bar);
    for (k = 0; k < 2; k++) {
        free(j[k].src);
        free(j[k].dst);
    }
    return best;
}

/* ---- the MPI results ---- */
typedef struct mpi_row {
    int op;
    long long D, bytes;
    double us;
} mpi_row;
static mpi_row *mpi_rows;
static int n_mpi;

static void load_mpi(const char *path) {
    FILE *f = fopen(path, "r");
    char line[256], name[64];
    int cap = 0;
    if (!f) {
        fprintf(stderr, "bench_collectives: cannot open %s (MPI columns left empty)\n", path);
        return;
    }
    while (fgets(line, sizeof line, f)) {
        long long D, bytes;
        double us;
        int op;
        char *c;
        for (c = line; *c; c++)
            if (*c == ',') *c = ' ';
        if (sscanf(line, "%63s %lld %lld %lf", name, &D, &bytes, &us) != 4) continue;
        for (op = 0; op < N_OPS; op++)
            if (strcmp(name, op_mpi[op]) == 0) break;
        if (op == N_OPS) continue;
        if (n_mpi == cap) {
            cap = cap ? 2 * cap : 64;
            mpi_rows = (mpi_row *)realloc(mpi_rows, sizeof(mpi_row) * (size_t)cap);
        }
        mpi_rows[n_mpi].op = op;
        mpi_rows[n_mpi].D = D;
        mpi_rows[n_mpi].bytes = bytes;
        mpi_rows[n_mpi].us = us;
        n_mpi++;
    }
    fclose(f);
}

static double mpi_us(int op, long long D, long long bytes) {
    int i;
    double best = -1;
    for (i = 0; i < n_mpi; i++)
        if (mpi_rows[i].op == op && mpi_rows[i].D == D && mpi_rows[i].bytes == bytes && (best < 0 || mpi_rows[i].us < best))
            best = mpi_rows[i].us;
    return best;
}

/* ---- one collective ---- */
typedef struct result {
    double us, busbw, cap_frac, mpi_us;
} result;

static double bus_factor(int op, double D) {
    switch (op) {
    case OP_AR: return 2.0 * (D - 1) / D;
    case OP_CP: return 1.0;
    default: return (D - 1) / D;
    }
}

/* bytes read + written per device */
static double traffic(int op, double size, double D) {
    return op == OP_RS ? size + size / D : 2.0 * size;
}

static int check_result(int op, int D, size_t n_in, size_t n_out, float **in, float **out) {
    /* spot checks against the definitions (device d's input is d + 1 + i * 1e-3 at element i) */
    size_t probe[3];
    int d, bad = 0, k;
    probe[0] = 0;
    probe[1] = n_out / 2;
    probe[2] = n_out - 1;
    for (d = 0; d < D; d++)
        for (k = 0; k < 3; k++) {
            size_t e = probe[k];
            float want = 0;
            int j;
            switch (op) {
            case OP_AR:
                for (j = 0; j < D; j++) want += in[j][e];
                break;
            case OP_AG: want = in[e / n_in][e % n_in]; break;
            case OP_RS:
                for (j = 0; j < D; j++) want += in[j][d * n_out + e];
                break;
            case OP_A2A: want = in[e / (n_in / D)][d * (n_in / D) + e % (n_in / D)]; break;
            default: want = in[(d + D - 1) % D][e]; break;
            }
            if (out[d][e] != want) bad = 1;
        }
    return bad;
}

static int run_one(gs_ctx *ctx, gs_runtime *rt, int op, int D, size_t size, double budget, result *res) {
    gs_collective_spec sp;
    size_t n_in, n_out, e;
    float **in = (float **)calloc((size_t)D, sizeof(float *)), **out = (float **)calloc((size_t)D, sizeof(float *));
    int64_t *pairs = (int64_t *)calloc((size_t)D * 2, sizeof(int64_t));
    int d, trial, bad;
    int64_t repeat = 1;
    double best = 1e30;
    memset(&sp, 0, sizeof sp);
    n_in = n_out = size / 4;
    switch (op) {
    case OP_AR: sp.op = GS_OP_ALL_REDUCE; sp.reduce = GS_REDUCE_SUM; break;
    case OP_AG: sp.op = GS_OP_ALL_GATHER; n_in = n_out / (size_t)D; n_out = n_in * (size_t)D; break;
    case OP_RS: sp.op = GS_OP_REDUCE_SCATTER; sp.reduce = GS_REDUCE_SUM; n_in = n_in / (size_t)D * (size_t)D; n_out = n_in / (size_t)D; break;
    case OP_A2A: sp.op = GS_OP_ALL_TO_ALL; n_in = n_in / (size_t)D * (size_t)D; n_out = n_in; break;
    default:
        sp.op = GS_OP_COLLECTIVE_PERMUTE;
        for (d = 0; d < D; d++) {
            pairs[2 * d] = d;
            pairs[2 * d + 1] = (d + 1) % D;
        }
        sp.n_pairs = D;
        sp.pairs = pairs;
        break;
    }
    sp.shape = gs_shape_make(GS_F32, 1, (int64_t[]){(int64_t)n_in});
    for (d = 0; d < D; d++) {
        in[d] = (float *)malloc(n_in * 4 + 4);
        out[d] = (float *)malloc(n_out * 4 + 4);
        for (e = 0; e < n_in; e++) in[d][e] = (float)(d + 1) + (float)(e % 1000) * 1e-3f;
        memset(out[d], 0, n_out * 4);
    }
    for (trial = 0; trial < 7; trial++) {
        double t0 = now_sec(), dt;
        if (gs_runtime_collective(rt, &sp, (const void *const *)in, (void *const *)out, repeat) != GS_OK) {
            fprintf(stderr, "bench_collectives: %s\n", gs_ctx_error_msg(ctx));
            return 1;
        }
        dt = now_sec() - t0;
        if (trial > 0 && dt / (double)repeat < best) best = dt / (double)repeat;
        if (dt < budget / 5) repeat = (int64_t)((double)repeat * (budget / 5) / (dt > 1e-6 ? dt : 1e-6)) + 1;
    }
    bad = check_result(op, D, n_in, n_out, in, out);
    for (d = 0; d < D; d++) {
        free(in[d]);
        free(out[d]);
    }
    free(in);
    free(out);
    free(pairs);
    res->us = best * 1e6;
    res->busbw = (double)size / best * bus_factor(op, D);
    return bad;
}

/* ---- the same all-reduce inside a program: a while loop of `trips` iterations, one all-reduce each ---- */
static double program_run(gs_ctx *ctx, gs_runtime *rt, gs_graph *g, int D, size_t n, int64_t trips) {
    float **in = (float **)calloc((size_t)D, sizeof(float *)), **out = (float **)calloc((size_t)D, sizeof(float *));
    const void **inp = (const void **)calloc((size_t)D * 2, sizeof(void *));
    void **outp = (void **)calloc((size_t)D, sizeof(void *));
    int32_t *k = (int32_t *)calloc((size_t)D, sizeof(int32_t));
    double t0, dt = -1;
    int d;
    size_t e;
    for (d = 0; d < D; d++) {
        in[d] = (float *)malloc(n * 4 + 4);
        out[d] = (float *)malloc(n * 4 + 4);
        for (e = 0; e < n; e++) in[d][e] = (float)(e % 7) * 1e-3f;
        k[d] = (int32_t)trips;
        inp[2 * d] = in[d];
        inp[2 * d + 1] = &k[d];
        outp[d] = out[d];
    }
    t0 = now_sec();
    if (gs_runtime_run(rt, g, inp, outp) == GS_OK) dt = now_sec() - t0;
    else fprintf(stderr, "bench_collectives: %s\n", gs_ctx_error_msg(ctx));
    for (d = 0; d < D; d++) {
        free(in[d]);
        free(out[d]);
    }
    free(in);
    free(out);
    free(inp);
    free(outp);
    free(k);
    return dt;
}

/* Microseconds per all-reduce of `bytes` per device inside a program on D devices run by `workers` threads
   (0: the runtime's default): the difference between
   loops of 1 + trips and 1 iterations, over trips (so the run's setup cancels), best of a few. */
static double program_us(int D, size_t bytes, double budget, int workers) {
    char text[2048];
    size_t n = bytes / 4;
    gs_ctx *ctx = NULL;
    gs_runtime *rt = NULL;
    gs_runtime_desc desc;
    gs_graph *g = NULL;
    double best = -1;
    int64_t trips = 100;
    int trial;
    snprintf(text, sizeof text,
             "HloModule loop\n"
             "sum { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
             "cond {\n  s = (s32[], s32[], f32[%zu]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
             "  k = s32[] get-tuple-element(s), index=1\n  ROOT c = pred[] compare(i, k), direction=LT\n}\n"
             "body {\n  s = (s32[], s32[], f32[%zu]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
             "  k = s32[] get-tuple-element(s), index=1\n  v = f32[%zu] get-tuple-element(s), index=2\n"
             "  ar = f32[%zu] all-reduce(v), replica_groups={}, to_apply=sum\n  one = s32[] constant(1)\n"
             "  i2 = s32[] add(i, one)\n  ROOT t = (s32[], s32[], f32[%zu]) tuple(i2, k, ar)\n}\n"
             "ENTRY main {\n  x = f32[%zu] parameter(0)\n  k = s32[] parameter(1)\n  z = s32[] constant(0)\n"
             "  t = (s32[], s32[], f32[%zu]) tuple(z, k, x)\n"
             "  w = (s32[], s32[], f32[%zu]) while(t), condition=cond, body=body\n"
             "  ROOT r = f32[%zu] get-tuple-element(w), index=2\n}\n",
             n, n, n, n, n, n, n, n, n);
    gs_ctx_create(NULL, &ctx);
    memset(&desc, 0, sizeof desc);
    desc.num_devices = D;
    desc.mode = GS_RUNTIME_THREADED;
    desc.workers = workers;
    if (gs_hlo_parse(ctx, text, strlen(text), &g) != GS_OK || gs_runtime_create(ctx, &desc, &rt) != GS_OK) {
        fprintf(stderr, "bench_collectives: %s\n", gs_ctx_error_msg(ctx));
        gs_ctx_destroy(ctx);
        return -1;
    }
    for (trial = 0; trial < 7; trial++) {
        double a = program_run(ctx, rt, g, D, n, 1), b = program_run(ctx, rt, g, D, n, 1 + trips), per;
        if (a < 0 || b < 0) break;
        per = (b - a) / (double)trips;
        if (trial > 0 && per > 0 && (best < 0 || per < best)) best = per;
        if (b - a < budget / 5) trips = (int64_t)((double)trips * (budget / 5) / (b - a > 1e-6 ? b - a : 1e-6)) + 1;
    }
    gs_runtime_destroy(rt);
    gs_ctx_destroy(ctx);
    return best * 1e6;
}

static void size_text(size_t b, char *buf, size_t cap) {
    if (b >= (size_t)1 << 20) snprintf(buf, cap, "%zu MiB", b >> 20);
    else snprintf(buf, cap, "%zu KiB", b >> 10);
}

int main(int argc, char **argv) {
    int devices[8] = {2, 4, 8}, n_dev = 3, i, di, op, bad = 0, cpus;
    int op_on[N_OPS] = {1, 1, 1, 1, 1}, passes = 3, pass, n_sizes, program = 0;
    double *best_us, *best_copy;
    size_t min_size = 4 << 10, max_size = (size_t)64 << 20, size;
    double budget = 0.25;
    const char *mpi_path = NULL;
    /* target bookkeeping */
    int met = 0, missed = 0, miss_len = 0;
    static char misses[16384];
    char sz[32];
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0 || strcmp(argv[i], "quick") == 0) {
            budget = 0.05;
            passes = 1;
            max_size = (size_t)16 << 20;
        } else if (strcmp(argv[i], "--passes") == 0 && i + 1 < argc) {
            passes = atoi(argv[++i]);
            if (passes < 1) passes = 1;
        } else if (strcmp(argv[i], "--mpi") == 0 && i + 1 < argc) {
            mpi_path = argv[++i];
        } else if (strcmp(argv[i], "--devices") == 0 && i + 1 < argc) {
            char *p = argv[++i];
            n_dev = 0;
            while (*p && n_dev < 8) {
                devices[n_dev++] = (int)strtol(p, &p, 10);
                if (*p == ',') p++;
            }
        } else if (strcmp(argv[i], "--ops") == 0 && i + 1 < argc) {
            const char *list = argv[++i];
            for (op = 0; op < N_OPS; op++) op_on[op] = strstr(list, op_mpi[op]) != NULL;
        } else if (strcmp(argv[i], "--min-kib") == 0 && i + 1 < argc) {
            min_size = (size_t)atol(argv[++i]) << 10;
        } else if (strcmp(argv[i], "--max-mib") == 0 && i + 1 < argc) {
            max_size = (size_t)atol(argv[++i]) << 20;
        } else if (strcmp(argv[i], "--program") == 0) {
            program = 1;
        } else {
            fprintf(stderr, "usage: bench_collectives [--quick] [--passes N] [--mpi FILE.csv] [--devices 2,4,8]\n"
                            "                         [--ops allreduce,allgather,...] [--min-kib N] [--max-mib N] [--program]\n");
            return 2;
        }
    }
    if (mpi_path) load_mpi(mpi_path);
    cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
    for (size = min_size, n_sizes = 0; size <= max_size && n_sizes < 16; size *= 4) n_sizes++;
    best_us = (double *)malloc(sizeof(double) * (size_t)(n_sizes * 8 * N_OPS));
    best_copy = (double *)calloc((size_t)n_sizes, sizeof(double));
    for (i = 0; i < n_sizes * 8 * N_OPS; i++) best_us[i] = 1e30;
    /* every pass measures everything once; the table keeps the best of the passes, which are spread over
       time (the machine may be running other work: the MPI launches are best-of too) */
    for (pass = 0; pass < passes; pass++) {
        int si;
        for (si = 0, size = min_size; si < n_sizes; si++, size *= 4) {
            double copy = copy_bandwidth(size, budget);
            if (copy > best_copy[si]) best_copy[si] = copy;
            for (di = 0; di < n_dev; di++) {
                int D = devices[di];
                gs_ctx *ctx = NULL;
                gs_runtime *rt = NULL;
                gs_runtime_desc desc;
                if (D < 1) continue;
                gs_ctx_create(NULL, &ctx);
                memset(&desc, 0, sizeof desc);
                desc.num_devices = D;
                desc.mode = GS_RUNTIME_THREADED;
                if (gs_runtime_create(ctx, &desc, &rt) != GS_OK) {
                    fprintf(stderr, "bench_collectives: %s\n", gs_ctx_error_msg(ctx));
                    return 2;
                }
                for (op = 0; op < N_OPS; op++) {
                    result r;
                    double *cell = &best_us[(si * 8 + di) * N_OPS + op];
                    if (!op_on[op]) continue;
                    if (run_one(ctx, rt, op, D, size, budget, &r)) {
                        printf("WRONG RESULT: %s D=%d size %zu\n", op_label[op], D, size);
                        bad = 1;
                    }
                    if (r.us < *cell) *cell = r.us;
                }
                gs_runtime_destroy(rt);
                gs_ctx_destroy(ctx);
            }
            fprintf(stderr, "\rpass %d of %d: %zu bytes done   ", pass + 1, passes, size);
        }
    }
    fprintf(stderr, "\n");
    printf("bench_collectives: gshard %s, f32, %d online cores, best of %d passes; size = nccl-tests size per\n",
           gs_version(), cpus, passes);
    printf("device; busbw as nccl-tests; copy = 2 threads x memcpy(size) in GB/s; %%cap = the shared-memory bound\n");
    printf("D*(read+write)/(2*copy) over the time; x mpi = Open MPI time / gshard time (Open MPI: best of several\n");
    printf("launches%s)\n\n", mpi_path ? "" : "; no MPI file given");
    printf("%-14s %3s %8s %11s %10s %9s %6s %11s %7s\n", "op", "D", "size", "time_us", "busbw_GB/s", "copy_GB/s", "%cap",
           "mpi_us", "x mpi");
    {
        int si;
        for (si = 0, size = min_size; si < n_sizes; si++, size *= 4) {
            double copy = best_copy[si];
            for (di = 0; di < n_dev; di++) {
                int D = devices[di];
                for (op = 0; op < N_OPS; op++) {
                    double us = best_us[(si * 8 + di) * N_OPS + op], busbw, cap_frac, mu, ratio, cap_time;
                    char mpis[32], xs[32], verdict[96];
                    if (!op_on[op] || D < 1) continue;
                    if (miss_len > (int)sizeof misses - 200) miss_len = (int)sizeof misses - 200;
                    busbw = (double)size / (us * 1e-6) * bus_factor(op, D);
                    cap_time = (double)D * traffic(op, (double)size, D) / (2.0 * copy);
                    cap_frac = cap_time / (us * 1e-6);
                    mu = mpi_us(op, D, (long long)size);
                    ratio = mu > 0 ? mu / us : 0;
                    snprintf(mpis, sizeof mpis, mu > 0 ? "%.1f" : "-", mu);
                    snprintf(xs, sizeof xs, mu > 0 ? "%.2f" : "-", ratio);
                    size_text(size, sz, sizeof sz);
                    verdict[0] = 0;
                    if ((op == OP_AR || op == OP_RS) && size >= ((size_t)16 << 20)) {
                        double want = D <= 4 ? 0.80 : 0.60;
                        snprintf(verdict, sizeof verdict, " cap>=%.0f%%:%s", want * 100, cap_frac >= want ? "met" : "MISSED");
                        if (cap_frac >= want) met++;
                        else missed++;
                        if (cap_frac < want)
                            miss_len += snprintf(misses + miss_len, sizeof misses - miss_len, "  %s D=%d %s: %.0f%% of the cap (goal %.0f%%)\n",
                                                 op_label[op], D, sz, cap_frac * 100, want * 100);
                    }
                    if (mu > 0) {
                        double want = 0;
                        if (op == OP_AR || op == OP_RS) want = size <= (64 << 10) ? 5 : (size == ((size_t)1 << 20) ? 3 : 0);
                        else want = size >= ((size_t)16 << 20) ? 1 : (size < ((size_t)1 << 20) ? 3 : 0);
                        if (want > 0) {
                            size_t l = strlen(verdict);
                            snprintf(verdict + l, sizeof verdict - l, " mpi>=%.0fx:%s", want, ratio >= want ? "met" : "MISSED");
                            if (ratio >= want) met++;
                            else missed++;
                            if (ratio < want)
                                miss_len += snprintf(misses + miss_len, sizeof misses - miss_len,
                                                     "  %s D=%d %s: %.2fx Open MPI (goal %.0fx)\n", op_label[op], D, sz, ratio, want);
                        }
                    }
                    if (D > cpus && size <= ((size_t)16 << 10)) {
                        size_t l = strlen(verdict);
                        snprintf(verdict + l, sizeof verdict - l, " <10us:%s", us < 10 ? "met" : "MISSED");
                        if (us < 10) met++;
                        else missed++;
                        if (us >= 10)
                            miss_len += snprintf(misses + miss_len, sizeof misses - miss_len, "  %s D=%d %s: %.2f us (goal < 10 us)\n",
                                                 op_label[op], D, sz, us);
                    }
                    printf("%-14s %3d %8s %11.2f %10.2f %9.2f %5.0f%% %11s %7s%s\n", op_label[op], D, sz, us, busbw / 1e9,
                           copy / 1e9, cap_frac * 100, mpis, xs, verdict);
                }
            }
        }
    }
    if (program) {
        /* the same all-reduce inside a program: the default workers, and one thread per device; small ones
           with more devices than processors have the < 10 us goal too */
        static const size_t psizes[4] = {4 << 10, 16 << 10, 64 << 10, 1 << 20};
        int k;
        printf("\nall-reduce inside a program (gs_runtime_run, one per while-loop iteration, two barrier rounds of the\n"
               "workers each), microseconds per iteration: default workers (min(D, processors)), one thread per\n"
               "device, and the direct call above:\n");
        printf("%3s %8s %11s %13s %11s %9s\n", "D", "size", "program_us", "per_device_us", "direct_us", "gain");
        for (di = 0; di < n_dev; di++)
            for (k = 0; k < 4; k++) {
                int D = devices[di], si;
                double direct = -1, pu = program_us(D, psizes[k], budget, 0), pd = program_us(D, psizes[k], budget, D);
                char ds[32], verdict[32] = "";
                for (si = 0, size = min_size; si < n_sizes; si++, size *= 4)
                    if (size == psizes[k] && op_on[OP_AR]) direct = best_us[(si * 8 + di) * N_OPS + OP_AR];
                size_text(psizes[k], sz, sizeof sz);
                snprintf(ds, sizeof ds, direct > 0 && direct < 1e29 ? "%.2f" : "-", direct);
                if (D > cpus && psizes[k] <= ((size_t)16 << 10) && pu > 0) {
                    snprintf(verdict, sizeof verdict, " <10us:%s", pu < 10 ? "met" : "MISSED");
                    if (pu < 10) met++;
                    else missed++;
                    if (pu >= 10 && miss_len < (int)sizeof misses - 200)
                        miss_len += snprintf(misses + miss_len, sizeof misses - miss_len,
                                             "  all-reduce in a program D=%d %s: %.2f us (goal < 10 us)\n", D, sz, pu);
                }
                printf("%3d %8s %11.2f %13.2f %11s %8.2fx%s\n", D, sz, pu, pd, ds, pu > 0 ? pd / pu : 0.0, verdict);
            }
    }
    printf("\ntargets: %d met, %d missed%s\n", met, missed, bad ? "; SOME RESULTS WERE WRONG" : "");
    if (missed) printf("missed:\n%s", misses);
    free(mpi_rows);
    free(best_us);
    free(best_copy);
    return bad;
}
