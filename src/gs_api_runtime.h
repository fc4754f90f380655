/* ---------------------------------------------------------------------------------------------------------
   SPMD runtime: one program, D emulated devices in one process.

   A runtime holds D devices (1 to GS_RUNTIME_MAX_DEVICES). gs_runtime_run evaluates an SPMD program (an
   already partitioned graph: the same program on every device, device-dependent only through partition-id
   and the collectives) on every device with the reference interpreter's kernels, each device with its own
   partition-id, and performs the collectives between them with XLA's semantics.

   Modes:
   - THREADED: a persistent pool of W worker threads, created by gs_runtime_create, over which the devices
     are dealt in contiguous runs (device d on worker d * W / D). W is desc.workers, by default one thread per
     device up to the number of online processors (with more devices than processors, a thread per device
     would make every rendezvous a round trip through the scheduler). A worker runs each of its devices until
     it reaches a collective; when all have, the workers meet (a rendezvous: a barrier, a check that every
     device reached the same collective, the data exchange shared out evenly, a second barrier). With
     workers = D every device has its own thread.
   - LOCKSTEP: every device in the calling thread, one instruction per device in turn; at a collective a
     device pauses until all devices have reached it. No threads at all (the only mode when gshard.h is
     built with GSHARD_NO_THREADS). The same collective code runs in both modes, and however the devices are
     dealt to workers every result element is written once with the same order of operations, so all of
     them give the same bits; lockstep is the test oracle for the threaded mode.

   Collectives (XLA semantics; replica groups as listed or in iota form, "{}" = all devices, which must be
   covered exactly once):
   - all-reduce: every group member gets x_g0 (op) x_g1 (op) ... in group order (a left fold), so results are
     bit-identical run to run and in both modes. sum, prod, max, min on every dtype; and, or on s32/u32/pred
     (pred: sum/max act as or, prod/min as and). bf16 values are combined in f32 and rounded to bf16 after
     every step, the rule of the interpreter's reduce (the reducer is a bf16 computation).
   - all-gather along a dim, group order; reduce-scatter: member r gets block r of the all-reduce, same
     order and rounding; all-to-all: split along split_dim, block j to member j, received blocks concatenated
     along concat_dim in group order; collective-permute: (source, target) pairs, a device that no pair
     targets gets zeros (sources and targets must each be unique).

   Safety: a rendezvous checks that every participant is at the same collective instruction in the same
   iteration of every enclosing while loop (so devices that run a loop a different number of times are
   caught), with the same operand shape. A mismatch, a device that finishes while others wait at a
   collective, or a failure on any device (bad input, out of memory) ends the run on every device and
   gs_runtime_run returns an error naming the instruction(s) and device(s):
   GS_ERR_INVALID_ARG for a mismatch, the failing device's own code for a failure, GS_ERR_THREAD when the
   watchdog gave up waiting. A device stuck in an endless loop is stopped by the watchdog (watchdog_ms bounds
   every wait at a rendezvous).

   Data: per-device buffers (gs_runtime_run) are in storage format (bf16 as uint16, pred as uint8), one buffer
   per parameter buffer (a tuple-shaped parameter takes one per element, as in gs_eval), device-major:
   inputs[d * n_in + k]. With global arrays (gs_runtime_run_global), each input is scattered into padded
   shards by its sharding (ceil(S/k) tiles, padding on the right), and each output is gathered back without
   the padding (from the lowest-numbered device holding each tile; with check_replicas, every copy of a tile
   is compared bit for bit and a difference is an error, GS_ERR_SHARDING).

   Poisoned padding (on unless no_poison): the padding of scattered shards, and the whole buffer of a device
   that holds no part of an array, is filled with NaN (f32, bf16), INT32_MIN (s32), 0xDEADBEEF (u32) or 1
   (pred), so that a missing mask shows up in the results instead of passing by luck. With no_poison the
   padding is zero.

   Program and device count: a graph whose num_partitions is 1 (the default) runs on any D, partition
   count D; a graph written for num_partitions = P > 1 must run with D = P (else GS_ERR_INVALID_ARG).

   Accounting (gs_runtime_get_stats): per device, the peak bytes of live value buffers as a device would
   store them (bf16 = 2 bytes): parameter buffers count for the whole run, every other buffer from its
   creation to its last use (results until the end), kernel scratch space is not counted. Per collective
   instruction, how often it ran and the bytes each device sent and received in a direct exchange (the data
   it gives to / needs from the other members, never counting itself): all-reduce and all-gather (G-1)*n,
   reduce-scatter and all-to-all (G-1)*n/G, collective-permute n when the peer is another device, for an
   operand of n bytes and groups of G.

   Threads and ownership: one run at a time per runtime (like a gs_ctx, one thread at a time); the context's
   allocator is called from every worker thread, so it must be thread-safe (the default is). The graph must
   belong to the runtime's context and stays unchanged during a run.

   Ranks (gshard.h built with GSHARD_MPI and desc.comm set; see docs/distributed.md): the R processes of the
   communicator each create the runtime with the same desc (a collective call: every rank makes the same calls
   in the same order, with the same graph). D must be a multiple of R; rank r runs devices [r*D/R, (r+1)*D/R)
   on its own threads, as above. A collective moves the operands its local devices need from the other ranks
   (MPI point-to-point, after the ranks' posts were compared) and each device computes its own result with the
   same left fold in group order as in one process, so results are bit-identical to the thread runtime
   (fast_reduce: an all-reduce over one group of all devices folds the local devices, then MPI_Allreduce folds
   the ranks in MPI's order: faster, not bit-stable). gs_runtime_run reads and writes the entries of the local
   devices only (the others may be NULL); gs_runtime_run_global reads every rank's global inputs (only the local
   shards are used) and fills the outputs on rank 0 only (the other ranks' outputs are not written); stats are
   summed over the ranks. A rank whose run fails sends its message to the others, whose runs then fail with
   it; a rank that waits longer than the watchdog names the ranks and devices that never arrived. After a
   failed run the runtime cannot run again (the communicator may hold unmatched messages): the caller ends
   the job (MPI_Abort). Without GSHARD_MPI a non-NULL comm is GS_ERR_UNSUPPORTED.
   ------------------------------------------------------------------------------------------------------- */
typedef struct gs_runtime gs_runtime;

#define GS_RUNTIME_MAX_DEVICES 4096

typedef enum gs_runtime_mode {
    GS_RUNTIME_MODE_DEFAULT = 0,   /* THREADED, or LOCKSTEP when built with GSHARD_NO_THREADS */
    GS_RUNTIME_THREADED,
    GS_RUNTIME_LOCKSTEP
} gs_runtime_mode;

typedef struct gs_runtime_desc {
    int64_t num_devices;      /* D: 1 .. GS_RUNTIME_MAX_DEVICES */
    gs_runtime_mode mode;
    int64_t watchdog_ms;      /* bound on any wait at a rendezvous: 0 = 60000 ms, < 0 = none */
    bool no_poison;           /* scattered padding is zero instead of poison */
    bool check_replicas;      /* gathering compares every copy of a replicated tile */
    int64_t workers;          /* THREADED: worker threads, 1 .. D; 0 = min(D, online processors) */
    /* appended fields (code built against the layout above still compiles; zero keeps one process) */
    void *comm;               /* GSHARD_MPI builds: an MPI_Comm * whose R ranks share the D devices (below) */
    bool fast_reduce;         /* with comm: all-reduces over all devices use MPI_Allreduce (not bit-stable) */
} gs_runtime_desc;

/* desc must give num_devices. In THREADED mode the worker threads start here. */
GS_API gs_result gs_runtime_create(gs_ctx *ctx, const gs_runtime_desc *desc, gs_runtime **out);
GS_API void gs_runtime_destroy(gs_runtime *rt);   /* stops the threads; NULL is fine */
GS_API int64_t gs_runtime_num_devices(const gs_runtime *rt);
GS_API gs_runtime_mode gs_runtime_get_mode(const gs_runtime *rt);   /* THREADED or LOCKSTEP */
GS_API int64_t gs_runtime_num_workers(const gs_runtime *rt);        /* threads running devices (lockstep: 1) */
GS_API int gs_runtime_rank(const gs_runtime *rt);        /* this process's rank (0 without a communicator) */
GS_API int gs_runtime_num_ranks(const gs_runtime *rt);   /* R (1 without a communicator) */

/* Runs g on every device. inputs: D * n_in pointers (n_in = flattened parameter buffers of g, as gs_eval
   counts them), device-major; the same pointer may be given to several devices. outputs: D * n_out
   caller-owned buffers of gs_shape_bytes(gs_graph_output_shape(g, k)) bytes. */
GS_API gs_result gs_runtime_run(gs_runtime *rt, gs_graph *g, const void *const *inputs, void *const *outputs);

/* Runs g on global arrays: input k has global shape in_shapes[k] and sharding in_shardings[k] (NULL array
   or NULL entry = replicated; {manual}: every device gets the whole array, as replicated); its shard shape
   must be g's parameter buffer k. inputs[k] is the whole array (storage format). A {manual} output is device
   0's array (each device has its own; gs_partition_check compares every device's). Outputs likewise: outputs[k] receives the gathered global array. */
GS_API gs_result gs_runtime_run_global(gs_runtime *rt, gs_graph *g, const gs_shape *in_shapes,
                                       const gs_sharding *const *in_shardings, const void *const *inputs,
                                       const gs_shape *out_shapes, const gs_sharding *const *out_shardings,
                                       void *const *outputs);

/* run_global with each device's part of the inputs instead of the whole arrays, so that no process needs to
   hold (or read, or generate) more of an input than its own devices' parts: tiles[d * n_in + k] is device d's
   tile of input k, the region gs_sharding_device_region(in_shardings[k], in_shapes[k], d, ...) gives (the
   whole array for a replicated or {manual} input), dense and row-major in storage format, without padding;
   the runtime pads it into the shard as run_global's scatter does (poisoned unless no_poison). Only the
   entries of this process's devices are read (gs_runtime_local_devices; on one process, all D), and may be
   NULL for a device whose tile is empty; the same pointer may be given to several devices with the same tile
   (a replicated input: one copy per process), and then is converted once. A tile that is the whole shard in
   a type whose storage and compute formats agree (everything but bf16 and the narrow types) is read in
   place, never copied. Shapes, shardings and outputs as run_global; the results are the same bits. */
GS_API gs_result gs_runtime_run_tiles(gs_runtime *rt, gs_graph *g, const gs_shape *in_shapes,
                                      const gs_sharding *const *in_shardings, const void *const *tiles,
                                      const gs_shape *out_shapes, const gs_sharding *const *out_shardings,
                                      void *const *outputs);
/* The devices this process runs: [*first, *end) (without a communicator 0 and D; on ranks r*D/R, (r+1)*D/R). */
GS_API void gs_runtime_local_devices(const gs_runtime *rt, int64_t *first, int64_t *end);

/* The two halves of run_global. scatter: shards[d] (D buffers of the shard shape, storage format) receive
   device d's part of the global array, padding poisoned unless no_poison. gather: the inverse (padding
   dropped; check_replicas compares copies). */
GS_API gs_result gs_runtime_scatter(gs_runtime *rt, const gs_sharding *s, gs_shape global, const void *data,
                                    void *const *shards);
GS_API gs_result gs_runtime_gather(gs_runtime *rt, const gs_sharding *s, gs_shape global,
                                   const void *const *shards, void *data);

/* ---- the collective engine on its own (the runtime uses the same code for every collective) ---- */
typedef struct gs_collective_spec {
    gs_op op;                 /* GS_OP_ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, ALL_TO_ALL, COLLECTIVE_PERMUTE */
    gs_shape shape;           /* every device's operand */
    gs_reduce_kind reduce;    /* all-reduce, reduce-scatter */
    int64_t dim;              /* all-gather, reduce-scatter */
    int64_t split_dim, concat_dim;   /* all-to-all */
    gs_replica_groups groups; /* zero: one group of all devices */
    int64_t n_pairs;          /* collective-permute: n_pairs (source, target) pairs, flat */
    const int64_t *pairs;
} gs_collective_spec;

/* The result shape of spec on this runtime's devices (checks spec). */
GS_API gs_result gs_runtime_collective_shape(gs_runtime *rt, const gs_collective_spec *spec, gs_shape *out);
/* Runs the collective `repeat` times (>= 1) on in[d] -> out[d] (storage format, D buffers each; in and out
   must not overlap). Lockstep runs every device's part in the calling thread; threaded mode hands the D
   parts, cut into equal runs, to min(W, online processors) of its worker threads once, and they meet at one
   barrier per repetition (a benchmark's inner loop). The results are the same bits as inside a program. */
GS_API gs_result gs_runtime_collective(gs_runtime *rt, const gs_collective_spec *spec, const void *const *in,
                                       void *const *out, int64_t repeat);

/* ---- accounting of the last run ---- */
typedef struct gs_runtime_collective_stats {
    const gs_value *instruction;   /* the collective */
    gs_op op;
    int64_t group_size;       /* members per replica group (collective-permute: 1) */
    int64_t count;            /* executions per device */
    int64_t operand_bytes;    /* per device and execution, storage bytes */
    int64_t result_bytes;
    int64_t bytes_sent;       /* summed over devices and executions (see above for the definition) */
    int64_t bytes_received;
    int64_t max_device_sent;  /* the busiest device's total over the run */
    int64_t max_device_received;
    /* appended: what really crossed between MPI ranks for this collective (its operands, pieces, metadata and
       folded slices as docs/distributed.md lists them, not the posts), bytes summed over the ranks and
       executions; 0 when every device is in one process, and for an all-reduce MPI folds (--fast-reduce) */
    int64_t rank_bytes_sent;
} gs_runtime_collective_stats;

typedef struct gs_runtime_stats {
    int64_t num_devices;
    const int64_t *peak_bytes;    /* per device: parameters + the high-water mark of live value buffers */
    const int64_t *param_bytes;   /* per device: the parameter buffers */
    int64_t max_peak_bytes;       /* over devices */
    int n_collectives;            /* collective instructions of the program (executed or not) */
    const gs_runtime_collective_stats *collectives;   /* in program order, loop bodies after their loop */
    int64_t collective_count;     /* executions per device, all instructions */
    int64_t bytes_sent;           /* all collectives, all devices */
    double seconds;               /* wall time of the run */
} gs_runtime_stats;

/* The numbers of the last successful gs_runtime_run / run_global; the arrays belong to the runtime and stay
   valid until its next run or its destruction. GS_ERR_INVALID_ARG before any successful run. */
GS_API gs_result gs_runtime_get_stats(const gs_runtime *rt, gs_runtime_stats *out);

/* ---- tracing: when each device ran each instruction ----
   With tracing on, every run records, per device, one span per instruction of the entry computation in the
   order the device completed them (a while loop is one span; the instructions of its body are not shown
   one by one). A span begins when the device started the instruction, or, for a collective, when the device
   arrived at it (so the span includes the wait for the other members and the exchange); it ends when the
   device completed it. Times are wall-clock seconds since the run began (microsecond resolution). In
   lockstep mode the devices take turns in one thread, so a collective's span also covers the other devices'
   work until the last one arrives. The spans stay valid until the next run or gs_runtime_destroy; a run
   without tracing leaves none. */
typedef struct gs_runtime_span {
    const gs_value *instruction;   /* of the SPMD program the run executed */
    double start, end;
} gs_runtime_span;

GS_API gs_result gs_runtime_set_trace(gs_runtime *rt, bool on);   /* off by default */
GS_API int64_t gs_runtime_trace_count(const gs_runtime *rt, int64_t device);   /* 0 without a traced run */
GS_API const gs_runtime_span *gs_runtime_trace_span(const gs_runtime *rt, int64_t device, int64_t i);
/* The last traced run as Chrome trace-event JSON (the "JSON Object Format" that chrome://tracing and
   Perfetto load): {"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}. Per device d a
   process (pid d, named "device d" by a process_name metadata event) with one track (tid 0); per span one
   complete event (ph "X", ts and dur in microseconds) named after the instruction, cat "compute" or
   "collective", args {"opcode", "shape"} and for a collective also "operand_bytes" and "result_bytes" (per
   device and execution), "bytes_sent" (this collective, every device and execution, as gs_runtime_get_stats
   counts it), "group_size" and "groups" (the replica groups as lists of device ids; a collective-permute
   gives "pairs" [source, target] instead). NULL (error set) without a traced run. String in ctx's arena. */
GS_API const char *gs_runtime_trace_json(gs_runtime *rt);
