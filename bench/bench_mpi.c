/* bench_mpi.c - the runtime's MPI backend against plain Open MPI calls and against the thread runtime, per
 * collective and size, in one run on 2 ranks (one device per rank).
 *
 *   mpicc -std=c99 -O2 -DGSHARD_MPI -I. bench/bench_mpi.c -o build/bench/bench_mpi -lpthread -lm
 *   mpirun --oversubscribe -np 2 build/bench/bench_mpi [--quick] [--op NAME] [--size KIB]
 *   (--op: one collective, e.g. all-to-all; --size: one size in KiB, e.g. 16384: to repeat a single cell)
 *
 * Built and run by bench/run_bench_mpi.sh (which also times the MoE example on 1, 2 and 4 ranks). For each
 * collective and size (nccl-tests' size per device, as bench_collectives: the all-reduce / all-to-all /
 * collective-permute buffer, the all-gather output, the reduce-scatter input), on f32 data:
 *   mpi      the plain Open MPI call on the 2 ranks (MPI_Allreduce, MPI_Allgather, MPI_Reduce_scatter_block,
 *            MPI_Alltoall, MPI_Sendrecv in a ring)
 *   backend  gs_runtime_collective on a runtime whose 2 devices are the 2 ranks (desc.comm): the same
 *            bit-stable fold as in one process, operands moved by MPI point-to-point
 *   threads  gs_runtime_collective on a thread runtime of 2 devices in rank 0 alone (rank 1 sleeps)
 * Between ranks every call is timed on its own after a barrier and the fastest call counts (the slowest
 * rank's fastest): on a loaded machine a rank that loses its processor stalls single calls, which the minimum
 * skips. The thread runtime is the best of 20 loops of calls. The number of calls comes from a first timing
 * on rank 0 (about 0.3 s per cell, 0.05 s with --quick). Ratios: backend / mpi (target <= 1.10 at >= 1 MiB) and backend / threads. Results are
 * compared with each other once per row (the backend and the thread runtime bit for bit; MPI within 1e-5
 * relative for reductions); a difference makes the exit status 1. Nothing here asserts a speed.
 */
#if !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#ifndef GSHARD_EXTERNAL_IMPL
#define GSHARD_IMPLEMENTATION
#endif
#include <mpi.h>
#include "gshard.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { AR, AG, RS, A2A, CP, N_OPS };
static const char *names[N_OPS] = {"all-reduce", "all-gather", "reduce-scatter", "all-to-all", "coll-permute"};
static int rank, R;

/* the spec of op on n floats per device (size as described above) */
static gs_collective_spec spec_of(int op, long n) {
    static const int64_t ring[4] = {0, 1, 1, 0};
    gs_collective_spec s;
    memset(&s, 0, sizeof s);
    s.shape = gs_shape_make(GS_F32, 1, (int64_t[]){n});
    switch (op) {
    case AR: s.op = GS_OP_ALL_REDUCE; s.reduce = GS_REDUCE_SUM; break;
    case AG: s.op = GS_OP_ALL_GATHER; s.shape.dims[0] = n / 2; s.dim = 0; break;
    case RS: s.op = GS_OP_REDUCE_SCATTER; s.reduce = GS_REDUCE_SUM; s.dim = 0; break;
    case A2A: s.op = GS_OP_ALL_TO_ALL; s.split_dim = s.concat_dim = 0; break;
    default: s.op = GS_OP_COLLECTIVE_PERMUTE; s.n_pairs = 2; s.pairs = ring; break;
    }
    return s;
}

static void mpi_call(int op, const float *in, float *out, long n) {
    switch (op) {
    case AR: MPI_Allreduce(in, out, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
    case AG: MPI_Allgather(in, (int)(n / 2), MPI_FLOAT, out, (int)(n / 2), MPI_FLOAT, MPI_COMM_WORLD); break;
    case RS: MPI_Reduce_scatter_block(in, out, (int)(n / 2), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
    case A2A: MPI_Alltoall(in, (int)(n / 2), MPI_FLOAT, out, (int)(n / 2), MPI_FLOAT, MPI_COMM_WORLD); break;
    default:
        MPI_Sendrecv(in, (int)n, MPI_FLOAT, 1 - rank, 7, out, (int)n, MPI_FLOAT, 1 - rank, 7, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        break;
    }
}

/* rank 1 waits for rank 0's thread-runtime timing without spinning a core */
static void idle_until_told(void) {
    MPI_Request q;
    int flag = 0, dummy;
    struct timespec ts = {0, 200000};
    MPI_Irecv(&dummy, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, &q);
    while (!flag) {
        MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
        if (!flag) nanosleep(&ts, NULL);
    }
}

/* seconds per call of what(k) over `reps` calls, best of 5, the slowest rank's (kind 2: rank 0 alone) */
typedef struct job {
    int kind, op;
    long n;
    gs_runtime *rt;
    gs_collective_spec spec;
    const void **in;
    void **out;
} job;

static int run_reps(job *j, long reps) {
    long i;
    if (j->kind == 0) {
        for (i = 0; i < reps; i++) mpi_call(j->op, (const float *)j->in[rank], (float *)j->out[rank], j->n);
        return 0;
    }
    return gs_runtime_collective(j->rt, &j->spec, j->in, j->out, reps) == GS_OK ? 0 : 1;
}

static double time_job(job *j, double budget) {
    long reps = 1, i;
    double best = 1e30, t, worst;
    int bad = 0;
    if (j->kind == 2 && rank != 0) {
        idle_until_told();
        return 0;
    }
    /* the number of timed calls from a first timing on rank 0 */
    if (j->kind != 2) MPI_Barrier(MPI_COMM_WORLD);
    t = MPI_Wtime();
    bad |= run_reps(j, 1);
    t = MPI_Wtime() - t;
    if (rank == 0) reps = t > 0 ? (long)(budget / t) : 1000;
    if (reps < 20) reps = 20;
    if (reps > 20000) reps = 20000;
    if (j->kind != 2) MPI_Bcast(&reps, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (j->kind == 2) {
        /* the thread runtime alone: 20 loops of reps / 20 calls (one job handed to the pool per loop) */
        for (i = 0; i < 20; i++) {
            int one = 1;
            t = MPI_Wtime();
            bad |= run_reps(j, reps / 20);
            t = (MPI_Wtime() - t) / (double)(reps / 20);
            if (t < best) best = t;
            if (i == 19) MPI_Send(&one, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
        }
        return bad ? -1 : best;
    }
    /* between ranks: every call timed on its own after a barrier, the fastest call of each rank, the slowest
       rank's (on a loaded machine a rank that loses its processor stalls single calls, not all of them) */
    for (i = 0; i < reps; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        t = MPI_Wtime();
        bad |= run_reps(j, 1);
        t = MPI_Wtime() - t;
        if (t < best) best = t;
    }
    MPI_Allreduce(&best, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return bad ? -1 : worst;
}

int main(int argc, char **argv) {
    int level, op, i, wrong = 0, only_op = -1;
    long size, min_size = 64L << 10, max_size = 16L << 20;
    double budget = 0.3;
    gs_ctx *ctx = NULL;
    gs_runtime *net = NULL, *thr = NULL;
    gs_runtime_desc d;
    MPI_Comm world = MPI_COMM_WORLD;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &level);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &R);
    for (i = 1; i < argc; i++)
        if (strcmp(argv[i], "--quick") == 0) {
            budget = 0.05;
            max_size = 4L << 20;
        } else if (strcmp(argv[i], "--op") == 0 && i + 1 < argc) {
            for (only_op = 0; only_op < N_OPS && strcmp(names[only_op], argv[i + 1]) != 0; only_op++) {}
            if (only_op == N_OPS) {
                if (rank == 0) fprintf(stderr, "bench_mpi: --op %s: no such collective\n", argv[i + 1]);
                MPI_Finalize();
                return 2;
            }
            i++;
        } else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc && atol(argv[i + 1]) > 0) {
            min_size = max_size = atol(argv[++i]) << 10;
        } else {
            if (rank == 0) fprintf(stderr, "bench_mpi: unknown argument '%s' (--quick, --op NAME, --size KIB)\n", argv[i]);
            MPI_Finalize();
            return 2;
        }
    if (R != 2) {
        if (rank == 0) fprintf(stderr, "bench_mpi: run it on 2 ranks (mpirun -np 2)\n");
        MPI_Finalize();
        return 2;
    }
    gs_ctx_create(NULL, &ctx);
    memset(&d, 0, sizeof d);
    d.num_devices = 2;
    d.comm = &world;
    if (gs_runtime_create(ctx, &d, &net) != GS_OK) {
        fprintf(stderr, "bench_mpi: %s\n", gs_ctx_error_msg(ctx));
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    d.comm = NULL;
    if (rank == 0 && gs_runtime_create(ctx, &d, &thr) != GS_OK) {
        fprintf(stderr, "bench_mpi: %s\n", gs_ctx_error_msg(ctx));
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rank == 0)
        printf("%-14s %9s %11s %11s %11s %12s %14s\n", "collective", "size", "mpi us", "backend us", "threads us",
               "backend/mpi", "backend/threads");
    for (size = min_size; size <= max_size; size *= 4) {
        long n = size / 4, e;
        float *buf[6];
        for (i = 0; i < 6; i++) buf[i] = (float *)malloc((size_t)size + 64);
        for (e = 0; e < n; e++) {
            buf[0][e] = (float)(rank + 1) * 0.25f + (float)(e % 1000) * 1e-3f;   /* this rank's operand */
            buf[1][e] = 1.0f * 0.25f + (float)(e % 1000) * 1e-3f;                /* device 0's, for threads */
            buf[2][e] = 2.0f * 0.25f + (float)(e % 1000) * 1e-3f;                /* device 1's */
        }
        for (op = 0; op < N_OPS; op++) {
            job j;
            if (only_op >= 0 && op != only_op) continue;
            const void *in2[2];
            void *out2[2];
            double t_mpi, t_net, t_thr = 0;
            long cmp = op == AR || op == CP || op == A2A || op == AG ? n : n / 2;
            memset(&j, 0, sizeof j);
            j.op = op;
            j.n = n;
            j.spec = spec_of(op, n);
            in2[rank] = buf[0];
            out2[rank] = buf[3];
            in2[1 - rank] = NULL;
            out2[1 - rank] = NULL;
            j.in = in2;
            j.out = out2;
            /* plain MPI: out in buf[3]; keep a copy in buf[5] */
            j.kind = 0;
            t_mpi = time_job(&j, budget);
            memcpy(buf[5], buf[3], (size_t)size);
            j.kind = 1;
            j.rt = net;
            t_net = time_job(&j, budget);
            if (t_net < 0) wrong = 1;
            for (e = 0; e < cmp; e++)
                if (fabsf(buf[3][e] - buf[5][e]) > 1e-5f * fabsf(buf[5][e])) {
                    fprintf(stderr, "bench_mpi: %s %ld bytes: rank %d element %ld: backend %g, MPI %g\n", names[op], size,
                            rank, e, (double)buf[3][e], (double)buf[5][e]);
                    wrong = 1;
                    break;
                }
            /* threads: rank 0 runs both devices (device `rank` result compared bit for bit with the backend's) */
            j.kind = 2;
            j.rt = thr;
            if (rank == 0) {
                in2[0] = buf[1];
                in2[1] = buf[2];
                out2[0] = buf[4];
                out2[1] = malloc((size_t)size + 64);
            }
            t_thr = time_job(&j, budget);
            if (rank == 0) {
                if (memcmp(buf[4], buf[3], (size_t)cmp * 4) != 0) {
                    fprintf(stderr, "bench_mpi: %s %ld bytes: the thread runtime's device 0 differs from rank 0's\n",
                            names[op], size);
                    wrong = 1;
                }
                free(out2[1]);
                printf("%-14s %6ld KiB %11.1f %11.1f %11.1f %12.2f %14.2f\n", names[op], size >> 10, t_mpi * 1e6,
                       t_net * 1e6, t_thr * 1e6, t_net / t_mpi, t_net / t_thr);
                fflush(stdout);
            }
        }
        for (i = 0; i < 6; i++) free(buf[i]);
    }
    MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    gs_runtime_destroy(net);
    gs_runtime_destroy(thr);
    gs_ctx_destroy(ctx);
    MPI_Finalize();
    return wrong;
}
