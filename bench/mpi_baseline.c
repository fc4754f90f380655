/* mpi_baseline.c - Open MPI's collectives on the sizes bench_collectives uses, for the comparison columns.
 *
 *   mpicc -O3 -march=native bench/mpi_baseline.c -o build/bench/mpi_baseline
 *   mpirun -np D build/bench/mpi_baseline [--quick] [--min-kib 4] [--max-mib 64]
 *
 * Built and run by bench/run_mpi_baseline.sh (never by `make bench`: it needs mpicc). One rank per emulated
 * device. For each size (nccl-tests' size per rank, as in bench_collectives) and collective:
 *   allreduce      MPI_Allreduce(size bytes, MPI_FLOAT, MPI_SUM)
 *   allgather      MPI_Allgather(size / D bytes from each rank)
 *   reducescatter  MPI_Reduce_scatter_block(size bytes in, size / D out, MPI_SUM)
 *   alltoall       MPI_Alltoall(size / D bytes to each rank)
 *   permute        MPI_Sendrecv in a ring: send size bytes to rank + 1, receive from rank - 1
 * the time of one call is the slowest rank's average over a timed loop (the loop length is chosen on rank 0
 * and broadcast), best of a few loops. Rank 0 prints "op,D,bytes,microseconds" lines.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { AR, AG, RS, A2A, CP, N_OPS };
static const char *names[N_OPS] = {"allreduce", "allgather", "reducescatter", "alltoall", "permute"};

static void one_call(int op, float *in, float *out, long n, int D, int rank) {
    switch (op) {
    case AR: MPI_Allreduce(in, out, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
    case AG: MPI_Allgather(in, (int)(n / D), MPI_FLOAT, out, (int)(n / D), MPI_FLOAT, MPI_COMM_WORLD); break;
    case RS: MPI_Reduce_scatter_block(in, out, (int)(n / D), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
    case A2A: MPI_Alltoall(in, (int)(n / D), MPI_FLOAT, out, (int)(n / D), MPI_FLOAT, MPI_COMM_WORLD); break;
    default:
        MPI_Sendrecv(in, (int)n, MPI_FLOAT, (rank + 1) % D, 7, out, (int)n, MPI_FLOAT, (rank + D - 1) % D, 7,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        break;
    }
}

int main(int argc, char **argv) {
    int rank, D, op, i, trials;
    long min_size = 4L << 10, max_size = 64L << 20, size;
    double budget = 0.25;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &D);
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            budget = 0.05;
            max_size = 16L << 20;
        } else if (strcmp(argv[i], "--min-kib") == 0 && i + 1 < argc) {
            min_size = atol(argv[++i]) << 10;
        } else if (strcmp(argv[i], "--max-mib") == 0 && i + 1 < argc) {
            max_size = atol(argv[++i]) << 20;
        }
    }
    for (size = min_size; size <= max_size; size *= 4) {
        long n = size / 4 / D * D, e;
        float *in = (float *)malloc((size_t)n * 4 + 4), *out = (float *)malloc((size_t)n * 4 + 4);
        for (e = 0; e < n; e++) in[e] = (float)(rank + 1) + (float)(e % 1000) * 1e-3f;
        memset(out, 0, (size_t)n * 4);
        for (op = 0; op < N_OPS; op++) {
            long reps = 1, r;
            double best = 1e30;
            for (trials = 0; trials < 5; trials++) {
                double t0, dt, slowest;
                MPI_Barrier(MPI_COMM_WORLD);
                t0 = MPI_Wtime();
                for (r = 0; r < reps; r++) one_call(op, in, out, n, D, rank);
                dt = MPI_Wtime() - t0;
                MPI_Allreduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
                if (trials > 0 && slowest / (double)reps < best) best = slowest / (double)reps;
                if (rank == 0 && slowest < budget / 5)
                    reps = (long)((double)reps * (budget / 5) / (slowest > 1e-6 ? slowest : 1e-6)) + 1;
                MPI_Bcast(&reps, 1, MPI_LONG, 0, MPI_COMM_WORLD);
            }
            if (rank == 0) printf("%s,%d,%ld,%.3f\n", names[op], D, size, best * 1e6);
            fflush(stdout);
        }
        free(in);
        free(out);
    }
    MPI_Finalize();
    return 0;
}
