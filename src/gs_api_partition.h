/* ---------------------------------------------------------------------------------------------------------
   The SPMD partitioner: one program for every device.

   gs_partition propagates shardings through g (gs_propagate; user shardings stay), then writes a new graph,
   the SPMD program, that every device runs with its own partition-id. Every array value of g becomes its
   per-device shard: a dim of size S split k ways has shards of ceil(S/k) elements (the last shards padded on
   the right; padding holds garbage that is never allowed to reach a result: reductions, contractions and
   scans mask it with their identity). Where an operand's sharding is not the one an instruction needs, a
   reshard is inserted, chosen in XLA's order of preference:
     nothing; collective-permute (same tiling, other device order); all-to-all (tiles moved from one dim to
     another); dynamic-slice out of a partially replicated or replicated value (no communication);
     all-gather within the replication groups; and, only as the last resort, full replication then slicing,
     which is reported as a warning (instruction, bytes, and the annotation that would avoid it).
   Device-dependent values come only from partition-id (offset tables indexed by it), so the program has the
   same number of instructions for D = 2 and D = 2048.

   The SPMD program's parameters are the shards of g's parameters: parameter k of the result holds the shard of
   g's parameter k under gs_partition_param_sharding(spmd, k), so gs_runtime_run_global can scatter global
   inputs into it; its outputs likewise are shards under gs_partition_output_sharding(spmd, i). The SPMD
   program's own values carry no sharding attributes (it is a per-device program). The result has
   num_partitions = D and belongs to g's context; g keeps the shardings propagation gave it.
   ------------------------------------------------------------------------------------------------------- */
/* A dot or convolution strategy forced by name (gs_partition_desc.strategies): instruction is the source
   instruction's name, strategy one of the names its explanation lists (output, lhs, rhs, lhs+rhs, output+lhs,
   output+rhs, replicated). */
typedef struct gs_partition_strategy {
    const char *instruction;
    const char *strategy;
} gs_partition_strategy;

typedef struct gs_partition_desc {
    int64_t num_devices;              /* D >= 1; 0: g's num_partitions */
    /* XLA's test mode: replicate by dynamic-update-slice into zeros + all-reduce(sum) instead of all-gather */
    bool all_gather_as_all_reduce;
    /* A dot that would all-gather an operand split D ways on one dim becomes a windowed einsum loop (D local
       dots while the operand's blocks travel round a ring of collective-permutes) when that operand has at
       least this many bytes per device, and one that would reduce-scatter its result over D devices when the
       whole result has that many: 0 = 256 MiB (XLA's default), < 0 = never. */
    int64_t windowed_einsum_bytes;
    /* The chip whose estimated times choose among a dot's (or convolution's) strategies and price the
       collectives --explain describes: NULL = v5e. Not copied: it must outlive gs_partition. */
    const gs_chip *chip;
    /* Strategies forced on named dots and convolutions of the entry computation (the names gs_partition_explain
       lists for each); an unknown instruction or strategy is GS_ERR_INVALID_ARG naming the valid ones. */
    int n_strategies;
    const gs_partition_strategy *strategies;
    /* XLA's total_bytes_windowed_einsum_threshold: when > 0 it replaces windowed_einsum_bytes, and a dot is
       windowed when its two operands together (global, unsharded) have at least this many bytes */
    int64_t windowed_einsum_total_bytes;
    /* XLA's unroll_windowed_einsum: two steps of the windowed einsum loop per iteration (docs/partition.md) */
    bool windowed_einsum_unroll;
    /* XLA's bidirectional_windowed_einsum: blocks (or partial sums) travel both ways round the ring, two dots per
       step, about half the steps */
    bool windowed_einsum_bidirectional;
    /* XLA's enable_windowed_einsum_for_reduce_scatter=false: a dot whose partial sums would be reduce-scattered
       is never windowed (by default it is when the partial result per device reaches the thresholds above) */
    bool windowed_einsum_no_reduce_scatter;
    /* XLA's partial_windowed_einsum: a dot whose strategy would all-gather an operand along one free dim inside
       groups of devices (split k < D ways there, its other splits free dims the strategy keeps) runs the
       windowed einsum on one ring of k devices per group instead; and XLA's pattern for it (an operand split
       over all D devices on two free dims, one kept by the result, the result split over all D devices) takes
       the result's strategy before the weighing, as XLA tries that loop first (docs/partition.md) */
    bool windowed_einsum_partial;
    /* XLA's choose_faster_windowed_einsum_over_mem: the weighing prices a strategy whose all-gather becomes a
       windowed loop at the loop's time (its permutes hidden behind its dots), and any one-dim all-gather inside
       device groups becomes a subgroup ring, also where the groups split contracting dims (the loop's partial
       sums combined after it: more memory, less waiting) */
    bool windowed_einsum_prefer_speed;
    /* XLA's conv_halo_exchange_always_on_lhs=false: a convolution whose input and kernel are both split along a
       spatial dim the output keeps whole (the filter gradient) exchanges its halo on the kernel, each device
       keeping its input block; by default (XLA's true) the halo is on the input */
    bool conv_halo_on_rhs;
    /* XLA's option names set with gs_partition_xla_option that have no effect on gshard.h's program (each
       listed in docs/xla_differences.md), as a bit mask by their index in that function's table */
    uint32_t xla_inert;
    /* XLA's policy for the entry computation: a parameter or the root without a sharding is replicated (as
       if annotated {replicated}), where by default propagation chooses it (docs/xla_differences.md) */
    bool xla_compat;
} gs_partition_desc;

/* Sets one of XLA's SpmdPartitionerOptions by its field name, value as text: "true"/"false" for the switches,
   a non-negative integer for threshold_for_windowed_einsum_mib (0: window whenever possible) and
   total_bytes_windowed_einsum_threshold. Known: threshold_for_windowed_einsum_mib,
   total_bytes_windowed_einsum_threshold, unroll_windowed_einsum, bidirectional_windowed_einsum,
   partial_windowed_einsum, choose_faster_windowed_einsum_over_mem, conv_halo_exchange_always_on_lhs (these
   change the program; the desc fields above say how), and enable_enzyme_opt, skip_checking_windowed_einsum_users, cache_all_gather,
   bidirectional_decomposed_all_gather, enable_windowed_einsum_for_all_gather (false: no windowed einsum),
   enable_windowed_einsum_for_reduce_scatter, disable_ag_rewrite_for_multiple_consumers,
   allow_module_signature_change, report_instruction_count (accepted; docs/xla_differences.md says what each
   does here). An unknown name or a malformed value is GS_ERR_INVALID_ARG with a message in ctx. */
GS_API gs_result gs_partition_xla_option(gs_ctx *ctx, gs_partition_desc *desc, const char *name, const char *value);

/* On success *out is the SPMD program. Errors (bad shardings, unsupported sharded constructs) leave g as
   propagation left it and name the instruction. */
GS_API gs_result gs_partition(gs_graph *g, const gs_partition_desc *desc, gs_graph **out);

/* Reshards that had to replicate a whole tensor (docs/design.md: no silent full rematerialization): one message per
   case, naming the instruction, the bytes per device and the annotation that would avoid it. Also logged at
   GS_LOG_WARN. */
GS_API int gs_partition_num_warnings(const gs_graph *spmd);
GS_API const char *gs_partition_warning(const gs_graph *spmd, int i);

/* The strategy chosen for an instruction of the source graph, e.g. "dot strategy lhs (least estimated time):
   contracting dim split 4-way; all-reduce over 4 devices"; for a dot or convolution further lines ('\n'
   before each) list every strategy weighed with the bytes a device sends and its estimated time on the chip.
   NULL if none recorded. */
GS_API const char *gs_partition_explain(const gs_graph *spmd, const gs_value *orig);
/* The SPMD program as HLO text (ctx arena). With explain, before the first instruction each source instruction's
   partitioning wrote, a comment naming it, its sharding and gs_partition_explain's text; and before each
   collective of the entry computation, why it is there (which operand's sharding did not fit which
   instruction, or which partial sums it combines), the bytes a device sends, its estimated time on
   desc.chip and the annotation that would remove it. */
GS_API const char *gs_partition_print(gs_graph *spmd, bool explain);

/* The source graph, and where a source value lives in the SPMD program: its per-device value and the
   sharding describing which part of the global array each device holds (NULL for values inside loop bodies
   and values nothing needed). */
GS_API gs_graph *gs_partition_source(const gs_graph *spmd);
GS_API gs_value *gs_partition_lookup(const gs_graph *spmd, const gs_value *orig, const gs_sharding **sharding);
/* The sharding of output i of the SPMD program (how to gather it into the global output), and of parameter
   buffer k (a tuple-shaped parameter counts one per element, as gs_eval counts inputs). */
GS_API const gs_sharding *gs_partition_output_sharding(const gs_graph *spmd, int i);
GS_API const gs_sharding *gs_partition_param_sharding(const gs_graph *spmd, int k);

/* Runs the source graph on the reference interpreter and the SPMD program on rt (D devices), with the same
   global inputs (storage format, one buffer per flattened parameter of the source graph, as gs_eval), and
   compares every output: each device's part of it (every copy of a replicated tile, not only the one a gather
   returns) against the matching region of the reference output, and then every element of the gathered global
   output; an element that no device holds (or that the gather leaves unwritten) is a difference, reported
   with device -1, never "ok". Floating-point values match when
   |got - want| <= atol + rtol * |want| (NaN matches NaN, an infinity only itself); integers and pred exactly.
   Tolerances the caller gives apply as they are (rtol = atol = 0 means the defaults below unless
   desc->tolerances_given, which asks for exact comparison). By default each output gets its own: with p the fewest
   mantissa bits of any float value the output depends on (bf16 7, f16 10, f32 23), rtol = atol = 1e-5 when
   p >= 23, else 2^-(p-1), two units in the last place (bf16: 2^-6 = 0.015625; f16: 2^-9); and atol grows by
   rtol times the root-mean-square of the reference output, because a sum split across devices adds in
   another order and errs by a fraction of its terms' size, not of its own; when p < 23 and the SPMD program
   sums G partial results in that narrow type (an all-reduce or reduce-scatter over G devices), by rtol times
   that RMS times sqrt(G), each of the G - 1 additions rounding once. A source with manual regions
   (to-manual/to-full) is checked against a reference program on rt that runs each region once per device
   on that device's block and gathers the blocks where it ends.
   With locate, a mismatch is traced back to the first instruction of the source's entry graph (in program
   order) whose per-device values, compared the same way through gs_partition_lookup, differ, and the lowest
   device holding a wrong value at its first differing element (both runs happen again, with an observer on
   the evaluator; tuple-shaped values, values inside loop bodies and values without a mapping are skipped).
   A run that fails (for instance a collective mismatch between devices) returns its error, with the message
   also in report->message. The runtime may be threaded or lockstep; poisoned padding is the runtime's
   (gs_runtime_desc.no_poison). */
typedef struct gs_check_desc {
    double rtol, atol;                /* both 0: per output, by the narrowest float it is computed through (see
                                         gs_partition_check), unless tolerances_given */
    bool locate;
    /* appended (code built against the layout above still compiles; false keeps its meaning) */
    bool tolerances_given;            /* rtol and atol apply as they are, also when both are 0: floats then match
                                         only when equal (NaN still matches NaN; 0 and -0 are equal) */
} gs_check_desc;

typedef struct gs_check_report {
    bool ok;
    int64_t n_compared;               /* elements of the global outputs compared */
    double max_abs_err;               /* max |got - want| over every compared copy, integers included
                                         (infinity where only one side is NaN) */
    /* On a mismatch: the instruction located (with locate, when one is found), else the instruction making
       the output that differs; index, device, got and want describe that instruction's first differing
       element. NULL when ok. */
    const gs_value *first_bad;
    int output;                       /* the output that differs first, or -1 */
    int64_t index;                    /* flat index of that element in first_bad's global array */
    int64_t device;                   /* the lowest device holding a wrong copy of it */
    double got, want;
    const char *message;              /* one line (ctx arena) naming instruction, device, element, got and
                                         want; "" when ok */
} gs_check_report;

GS_API gs_result gs_partition_check(gs_graph *spmd, gs_runtime *rt, const gs_check_desc *desc,
                                    const void *const *inputs, gs_check_report *report);
/* The check of outputs gathered elsewhere, for runs whose devices are not all in this process (MPI ranks, where
   gs_partition_check refuses): outputs[i] is output i of spmd as the run gathered it (the global array, storage
   format, as gs_runtime_run_global and gs_runtime_run_tiles return it), inputs the global inputs it ran on (as
   gs_partition_check takes them). The reference is the source's outputs by gs_eval_devices (the interpreter, or
   a thread runtime of spmd's D devices for manual regions and written collectives), compared element by element
   by the rules and with the default tolerances of gs_partition_check (the same per-output defaults, so a run
   on ranks and a run on threads pass or fail alike). Only the gathered arrays are compared (not each device's
   copy of a replicated tile), and no instruction is located (desc->locate is ignored): on a mismatch the report
   names the output and its first differing element, device -1. */
GS_API gs_result gs_partition_check_gathered(gs_graph *spmd, const gs_check_desc *desc, const void *const *inputs,
                                             const void *const *outputs, gs_check_report *report);
