/* gs_api_cost.h - the TPU cost model: chips, tori, roofline and collective formulas, program cost reports.

   Notation follows "How to Scale Your Model" (Austin et al.), cited as [book] with its chapter:
     C        peak FLOPs/s of one chip                  W_hbm   HBM bandwidth (bytes/s)
     W_uni    one ICI link, one direction (bytes/s)     W_bi    = 2 * W_uni, what the book's ring formulas use
     T_min    time of one ICI hop (about 1 us)          V       bytes of a collective, as the book defines it
   Units are SI: seconds, bytes, FLOPs; "kB"/"MB"/"GB" in messages are decimal (1 MB = 1e6 B), as in the book.
   Every function that can fail takes a context and returns a gs_result with the sticky message set. */

/* ---------------------------------------------------------------------------------------------------------
   Chips
   ------------------------------------------------------------------------------------------------------- */
#define GS_COST_MAX_AXES 3   /* mesh and torus axes */

/* Which axes of a slice have wraparound links (a ring instead of an open line). */
typedef enum gs_wrap_rule {
    GS_WRAP_RULE_DEFAULT = 0,  /* GS_WRAP_RULE_POD_AXIS */
    GS_WRAP_RULE_POD_AXIS,     /* an axis wraps only when it is as long as the pod's (v5e/v6e: 16) */
    GS_WRAP_RULE_CUBE,         /* an axis wraps when its size is a multiple of 4 (v4p/v5p optical cubes) */
    GS_WRAP_RULE_ALWAYS,       /* every axis of size > 2 wraps */
    GS_WRAP_RULE_NEVER
} gs_wrap_rule;

/* One accelerator. Plain data: fill one yourself for a chip that is not in the table (zero-init, then set the
   fields; 0 means "not known" and a formula that needs the figure fails with a clear message). */
typedef struct gs_chip {
    const char *name;
    double hbm_capacity;    /* bytes of HBM per chip */
    double hbm_bw;          /* W_hbm, bytes/s */
    double flops_bf16;      /* C for bf16 (and f32: the model costs every float FLOP at this rate) */
    double flops_int8;      /* C for int8 */
    double ici_bw_uni;      /* W_uni: one ICI link, one direction, bytes/s (W_bi = 2 * W_uni) */
    int ici_links;          /* ICI links per chip (4 on a 2-D torus, 6 on a 3-D one) */
    int torus_rank;         /* 2 or 3; 0 = no ICI torus (a GPU): one device only */
    int64_t pod[GS_COST_MAX_AXES];    /* the largest slice, in chips (unused trailing axes 0) */
    int64_t host[GS_COST_MAX_AXES];   /* the chips one host drives */
    gs_wrap_rule wrap;
    double pcie_bw;         /* host <-> chip, bytes/s per chip, one direction */
    double dcn_bw;          /* data-center network egress per host, bytes/s */
    double hop_latency;     /* T_min, seconds per ICI hop */
    int cores_per_chip;     /* information only: the model treats one chip as one device */
    const char *source;     /* where the figures come from */
    /* Appended fields (code written against the first layout still compiles; 0 = not known). */
    double flops_fp8;       /* dense FP8 FLOPs/s (without structured sparsity) */
    int mxu_count;          /* matrix units per chip: TPU MXUs, GPU tensor cores */
    double clock_hz;        /* the matrix units' clock */
    double vmem_bytes;      /* TPU VMEM per chip (on-chip scratchpad next to the MXUs) */
    double vmem_bw;         /* VMEM <-> MXU bytes/s */
    double host_dram;       /* host DRAM per chip, bytes (the host's DRAM over the chips it drives) */
    double price_per_hour;  /* US dollars per chip-hour, on-demand list price */
    int64_t nvlink_domain;  /* GPUs: devices in one NVLink (scale-up) domain; 0 for a TPU */
    double nvlink_bw_uni;   /* GPUs: NVLink bytes/s per GPU, one direction */
    double ib_bw_uni;       /* GPUs: scale-out network (InfiniBand/RoCE) bytes/s per GPU, one direction */
} gs_chip;

/* The built-in table: TPU v2, v3, v4p, v5e, v5p, v6e; GPUs H100, H800, B200 (sources in each row's `source`). */
GS_API int gs_chip_count(void);
GS_API const gs_chip *gs_chip_at(int i);
/* Lookup by name, case-insensitive, with an optional "tpu" prefix ("v5e", "TPU v5e", "tpu-v5p"); aliases
   "v4" (v4p), "trillium" (v6e). Returns NULL when unknown. */
GS_API const gs_chip *gs_chip_find(const char *name);
/* The same with an error message listing the known chips. */
GS_API gs_result gs_chip_lookup(gs_ctx *ctx, const char *name, const gs_chip **out);
/* Checks a chip (built-in or user-made): figures must be finite and >= 0, and C and W_hbm > 0. */
GS_API gs_result gs_chip_check(gs_ctx *ctx, const gs_chip *chip);
/* Reads a chip from `key = value` lines, the keys being gs_chip's field names (name, hbm_capacity, hbm_bw,
   flops_bf16, ... ; pod and host as "16x16"; wrap as pod_axis, cube, always or never; '#' starts a comment).
   Fields not given are 0 (or, with `base = NAME` on the first line, the built-in chip NAME's values). The
   strings live in the ctx arena. Unknown keys, repeated keys, bad numbers: GS_ERR_PARSE with the line. */
GS_API gs_result gs_chip_parse(gs_ctx *ctx, const char *text, gs_chip *out);

typedef enum gs_math {
    GS_MATH_DEFAULT = 0,   /* bf16 */
    GS_MATH_BF16,
    GS_MATH_INT8,
    GS_MATH_FP8      /* the chip's dense FP8 rate (flops_fp8) */
} gs_math;

/* Critical arithmetic intensity I* = C / W_hbm in FLOPs per byte ([book] ch.1: 240 on v5e).
   0 if the chip lacks either figure. */
GS_API double gs_chip_intensity(const gs_chip *chip, gs_math math);
/* The per-hop shard size below which an ICI collective is latency-bound: W_uni * T_min ([book] ch.3:
   45 kB on v5e). */
GS_API double gs_chip_latency_bytes(const gs_chip *chip);

/* ---------------------------------------------------------------------------------------------------------
   Roofline ([book] ch.1)
   ------------------------------------------------------------------------------------------------------- */
typedef enum gs_bound {
    GS_BOUND_NONE = 0,   /* moves no data and does no math (parameter, tuple, bitcast reshape, ...) */
    GS_BOUND_COMPUTE,
    GS_BOUND_HBM,
    GS_BOUND_ICI,
    GS_BOUND_LATENCY,    /* an ICI transfer whose per-hop chunk is under W_uni * T_min */
    GS_BOUND_DCN         /* the data-center network (whole-model step times) */
} gs_bound;
GS_API const char *gs_bound_name(gs_bound b);   /* "none", "compute", "hbm", "ici", "latency", "dcn" */

typedef struct gs_roofline {
    double flops, bytes;
    double t_math;               /* FLOPs / C */
    double t_comms;              /* bytes / W */
    double t_lower;              /* max(T_math, T_comms): perfect overlap */
    double t_upper;              /* T_math + T_comms: no overlap (at most 2x t_lower) */
    double intensity;            /* FLOPs / bytes (0 when bytes = 0) */
    double critical_intensity;   /* C / W */
    gs_bound bound;              /* COMPUTE when I > I*, else HBM (NONE when both are 0) */
} gs_roofline;

/* The generic roofline: any FLOP rate against any bandwidth (HBM, ICI, PCIe, DCN). The bound is reported
   as COMPUTE or HBM; read HBM as "the bandwidth given". */
GS_API gs_result gs_cost_roofline(gs_ctx *ctx, double flops, double flops_per_s, double bytes, double bytes_per_s,
                                  gs_roofline *out);
/* X[B,D] . Y[D,F] -> Z[B,F] on one chip from HBM ([book] ch.1): FLOPs = 2BDF,
   bytes = s_x*B*D + s_w*D*F + s_o*B*F with s_* bytes per element (bf16 2, int8 1, int4 0.5, f32 4). */
GS_API gs_result gs_cost_matmul(gs_ctx *ctx, const gs_chip *chip, int64_t B, int64_t D, int64_t F, double s_x,
                                double s_w, double s_o, gs_math math, gs_roofline *out);
/* Batch above which a matmul with B << D, F is compute-bound: B_crit = s_w * C / (2 * W_hbm)
   (bf16: 240 on v5e; int8 weights with bf16 math: 120). */
GS_API gs_result gs_cost_critical_batch(gs_ctx *ctx, const gs_chip *chip, double s_w, gs_math math, double *out);
/* The exact break-even batch without the B << D, F approximation ([book] ch.2 Q4):
   B* = (s_w*D*F / W) / (2*D*F/C - (s_x*D + s_o*F)/W). HUGE_VAL if the matmul is never compute-bound. */
GS_API gs_result gs_cost_breakeven_batch(gs_ctx *ctx, const gs_chip *chip, int64_t D, int64_t F, double s_x,
                                         double s_w, double s_o, gs_math math, double *out);

/* ---------------------------------------------------------------------------------------------------------
   Communication formulas ([book] ch.2 and ch.3)
   ------------------------------------------------------------------------------------------------------- */
typedef struct gs_cost_comm {
    double seconds;        /* max(t_latency, t_bandwidth): the book's convention */
    double t_bandwidth;    /* bytes over the links, hops fully pipelined */
    double t_latency;      /* hops * T_min */
    double bytes_sent;     /* bytes one device injects into the network */
    int64_t hops;          /* hops on the critical path */
    gs_bound bound;        /* ICI or LATENCY (NONE for an empty transfer) */
} gs_cost_comm;

/* Point to point over ICI ([book] ch.2 Q5): T = max(hops * T_min, bytes / (ports * W_uni)), ports = the links
   the sender uses in parallel (2 from the corner of a 2-D slice). */
GS_API gs_result gs_cost_p2p(gs_ctx *ctx, const gs_chip *chip, double bytes, int64_t hops, int ports,
                             gs_cost_comm *out);
/* Host transfers ([book] ch.2): PCIe T = bytes / (n_chips * W_pcie); DCN T = bytes / (n_hosts * W_dcn). */
GS_API gs_result gs_cost_pcie(gs_ctx *ctx, const gs_chip *chip, double bytes, int64_t n_chips, gs_cost_comm *out);
GS_API gs_result gs_cost_dcn(gs_ctx *ctx, const gs_chip *chip, double bytes, int64_t n_hosts, gs_cost_comm *out);

typedef enum gs_collective_kind {
    GS_COLLECTIVE_INVALID = 0,
    GS_COLLECTIVE_ALL_GATHER,      /* V = bytes of the gathered result (each device starts with V/N) */
    GS_COLLECTIVE_REDUCE_SCATTER,  /* V = bytes of the full-size partial-sum input on each device */
    GS_COLLECTIVE_ALL_REDUCE,      /* V = bytes of the array on each device */
    GS_COLLECTIVE_ALL_TO_ALL,      /* V = bytes of the whole array, N x each device's share (as for AllGather) */
    GS_COLLECTIVE_PERMUTE          /* V = bytes each device sends to its neighbour (a shift by one) */
} gs_collective_kind;
GS_API const char *gs_collective_kind_name(gs_collective_kind k);

typedef enum gs_ring_kind {
    GS_RING_DEFAULT = 0,       /* GS_RING_BIDIRECTIONAL */
    GS_RING_BIDIRECTIONAL,     /* wraparound, both directions of every link used */
    GS_RING_UNIDIRECTIONAL,    /* wraparound, one direction */
    GS_RING_OPEN_LINE          /* no wraparound (both directions used): about 2x a full ring */
} gs_ring_kind;

typedef struct gs_cost_axis {
    int64_t size;        /* devices along the axis */
    gs_ring_kind ring;
} gs_cost_axis;

/* One collective over 1..3 mesh axes at once (every group of devices is the box these axes span).
   One axis of N devices, chunk s = V/N per hop:
     AllGather / ReduceScatter   h * max(T_min, s / W_uni), h = ceil((N-1)/2) on a bidirectional ring, N-1
                                 on a unidirectional ring or an open line. Bandwidth-bound that is V / W_bi
                                 on a full ring and (N-1)/N * V / W_uni on the others.
     AllReduce                   ReduceScatter + AllGather = 2 x AllGather of V.
     AllToAll                    max(T_min * diameter, busiest link / W_uni) = V / (4 W_bi) on a
                                 bidirectional ring (1/4 of AllGather), 1/2 of AllGather on a unidirectional one.
     CollectivePermute           max(T_min, V / W_uni) (every device sends V one hop).
   Several axes (the book's multi-axis formula): T = max(T_min * sum h_i, V / sum_i W_i) with W_i the axis'
   bandwidth (W_bi on an even full ring), i.e. max(T_min * sum |X_i| / 2, V / (W_bi * n_axes)); AllToAll
   takes the busiest link of dimension-ordered routing, which on a k x k torus is V_p * k / (8 * W_uni) for a
   per-device payload V_p = V / D: O(sqrt(D)). */
GS_API gs_result gs_cost_collective(gs_ctx *ctx, const gs_chip *chip, gs_collective_kind kind, double V, int n_axes,
                                    const gs_cost_axis *axes, gs_cost_comm *out);

/* ---------------------------------------------------------------------------------------------------------
   Parallelism thresholds for a Transformer MLP layer In[B,D] . W_in[D,F] . W_out[F,D] in bf16, B the global
   batch in tokens ([book] ch.5). X devices of data/FSDP parallelism over axes_x mesh axes, Y devices of
   tensor parallelism over axes_y axes, W = W_bi.
   ------------------------------------------------------------------------------------------------------- */
typedef enum gs_parallelism {
    GS_PARALLEL_INVALID = 0,
    GS_PARALLEL_DATA,          /* backward: T_math = 8BDF/(XC), T_comms = 8DF/(axes_x W) */
    GS_PARALLEL_FSDP,          /* forward:  T_math = 4BDF/(XC), T_comms = 4DF/(axes_x W) */
    GS_PARALLEL_TENSOR,        /* forward:  T_math = 4BDF/(YC), T_comms = 4BD/(axes_y W) */
    GS_PARALLEL_FSDP_TENSOR    /* forward:  T_math = 4BDF/(XYC), T_comms = 4DF/(Y W axes_x) + 4BD/(X W axes_y) */
} gs_parallelism;

typedef struct gs_mlp_desc {
    int64_t batch, d_model, d_ff;   /* B (tokens), D, F */
    int64_t x, y;                   /* data/FSDP ways, tensor ways (0 means 1) */
    int axes_x, axes_y;             /* mesh axes each uses (0 means 1) */
} gs_mlp_desc;

typedef struct gs_mlp_cost {
    double t_math, t_comms;   /* seconds per layer, as modelled above */
    bool comm_bound;          /* t_comms > t_math */
    /* The threshold the book states for the strategy:
         DATA, FSDP     least per-device batch B/X that is compute-bound: C / (axes_x * W)
         TENSOR         most tensor ways Y that stay compute-bound: axes_y * F * W / C
         FSDP_TENSOR    least B/N (N = X*Y): 4 alpha^2 / (axes_x * axes_y * F), alpha = C / W */
    double threshold;
    double x_opt;             /* FSDP_TENSOR: the X that minimises comms, sqrt(B/F * axes_x/axes_y * N) */
} gs_mlp_cost;

GS_API gs_result gs_cost_mlp(gs_ctx *ctx, const gs_chip *chip, gs_parallelism p, const gs_mlp_desc *d,
                             gs_mlp_cost *out);
/* Pure data parallelism across pods over DCN is compute-bound iff the per-pod batch exceeds
   C_pod / W_dcn,pod = n * C / ((n / chips per host) * W_dcn) = chips per host * C / W_dcn (the pod size n
   cancels; [book] ch.5: about 75,000 tokens on v5p). */
GS_API gs_result gs_cost_dcn_min_batch(gs_ctx *ctx, const gs_chip *chip, double *out);

/* ---------------------------------------------------------------------------------------------------------
   Topologies: a physical slice (a 1-3 axis torus of chips) and a logical device mesh laid onto it
   ------------------------------------------------------------------------------------------------------- */
typedef enum gs_wrap_mode {
    GS_WRAP_AUTO = 0,   /* the chip's rule */
    GS_WRAP_ALL,        /* every axis wraps (e.g. to model a full 2-D torus as the GShard paper used) */
    GS_WRAP_NONE
} gs_wrap_mode;

typedef struct gs_topology_desc {
    const gs_chip *chip;                    /* required; copied */
    int mesh_rank;                          /* logical mesh axes, 1..GS_COST_MAX_AXES */
    int64_t mesh[GS_COST_MAX_AXES];
    int torus_rank;                         /* 0: the physical slice has the mesh's shape */
    int64_t torus[GS_COST_MAX_AXES];
    /* NULL: logical device d (row-major over the mesh, = partition id) sits on physical chip d (row-major
       over the torus). Otherwise device d sits on chip device_order[d]; a permutation of 0..D-1. Copied. */
    const int64_t *device_order;
    gs_wrap_mode wrap;
} gs_topology_desc;

typedef struct gs_topology gs_topology;   /* lives in the ctx arena; no free */

/* Checks the desc: a valid chip with ICI figures when D > 1, at most the chip's torus rank of physical axes
   (trailing 1s padded), a slice that fits in the pod, D = mesh product = torus product, a permutation. */
GS_API gs_result gs_topology_create(gs_ctx *ctx, const gs_topology_desc *desc, gs_topology **out);
GS_API const gs_chip *gs_topology_chip(const gs_topology *t);
GS_API int64_t gs_topology_num_devices(const gs_topology *t);
/* Physical axes: returns the rank, fills dims and wrap (each may be NULL). */
GS_API int gs_topology_torus(const gs_topology *t, int64_t *dims, bool *wrap);
/* Physical coordinates of logical device d (torus rank entries). */
GS_API gs_result gs_topology_coords(const gs_topology *t, int64_t device, int64_t *coords);

/* How one group of devices (ids are logical devices) lies on the torus: it must be a box, along every
   physical axis either the whole axis (a ring when the axis wraps, else an open line) or a contiguous run
   (an open line). Axes along which the group does not vary are left out. */
typedef struct gs_topology_group {
    int n_axes;
    int physical_axis[GS_COST_MAX_AXES];
    gs_cost_axis axes[GS_COST_MAX_AXES];
} gs_topology_group;
GS_API gs_result gs_topology_group_shape(gs_ctx *ctx, const gs_topology *t, int64_t n, const int64_t *ids,
                                         gs_topology_group *out);
/* A collective over n_groups groups of group_size devices each (ids row-major, as XLA's replica_groups).
   Groups run at once on disjoint links, so the time is the slowest group's. V as in gs_cost_collective. */
GS_API gs_result gs_topology_collective(gs_ctx *ctx, const gs_topology *t, gs_collective_kind kind, double V,
                                        int64_t n_groups, int64_t group_size, const int64_t *ids, gs_cost_comm *out);
/* A collective-permute: every source sends `bytes` to its target. Each message follows the shortest path in
   dimension order, split evenly over the rotations of the axis order when it changes several coordinates
   (so a corner-to-corner transfer uses both ports, as in [book] ch.2 Q5), and half each way when it is
   exactly half way round a ring. T = max(longest path * T_min, busiest link's bytes / W_uni). */
GS_API gs_result gs_topology_permute(gs_ctx *ctx, const gs_topology *t, double bytes, int64_t n_pairs,
                                     const int64_t *pairs, gs_cost_comm *out);

/* Parses "8x4", "4x4x4" or "1" (at most GS_COST_MAX_AXES positive sizes, 'x' between them). */
GS_API gs_result gs_cost_parse_dims(gs_ctx *ctx, const char *text, int *rank, int64_t *dims);

/* ---------------------------------------------------------------------------------------------------------
   Program cost: an SPMD program (per-device shapes, explicit collectives) on a topology whose device count
   equals the program's partitions. Each row is one instruction, per device:
     FLOPs      dot 2 * output elements * contracted size; convolution 2 * output elements * kernel window *
                input features per group; elementwise (and convert, compare, select, clamp, rng) 1 per output
                element; reduce, argmax/argmin and cumulative ops 1 per input element; reduce-window output
                elements * window size; sort n * ceil(log2(dim)); topk input elements * ceil(log2(k)),
                at least 1 each; scatter 1 per update element; all-reduce / reduce-scatter (N-1)/N * input
                elements; everything else 0.
     HBM bytes  every operand read once and the result written once (no fusion), except: dynamic-slice and
                slice read only the slice; dynamic-update-slice and scatter update in place (read and write
                the update's bytes, plus indices); gather reads the gathered rows and the indices.
                parameter, constant, tuple, get-tuple-element, reshape (a bitcast in row-major layout),
                partition-id and the sharding custom-calls move nothing.
     ICI bytes  bytes this device injects into the network ((N-1)/N * V for AllGather / ReduceScatter,
                twice that for AllReduce, (N-1)/N of its share for AllToAll, its operand for a permute to
                another device); forwarding by other chips is not counted.
     seconds    max(T_math, T_hbm, T_ici); the bound names the largest (LATENCY when T_ici is set by T_min).
   A while loop counts its condition and body times an iteration count read from the usual counter pattern
   (a constant start in the init tuple, `compare(counter, constant)` in the condition, `counter + constant`
   in the body); when it cannot be read the body is counted once and the report says so. A conditional
   counts the branch that takes longest (only one runs, and which is known at run time only): its row holds
   that branch's sums and trips holds the branch's number; every branch's rows follow it (role 3).
   ------------------------------------------------------------------------------------------------------- */
typedef struct gs_cost_row {
    const gs_value *value;
    int parent;              /* -1 for the entry computation; else the row of the while or conditional that runs it */
    int role;                /* 0 entry, 1 loop body, 2 loop condition, 3 conditional branch */
    double flops, hbm_bytes, ici_bytes;
    double hbm_read, hbm_written;   /* hbm_bytes = hbm_read + hbm_written */
    double t_math, t_hbm, t_ici;
    double seconds;          /* per execution (a while row: all its iterations) */
    gs_bound bound;
    /* collectives: the group layout (n_axes 0 when every group has one device) */
    int64_t group_size;
    gs_topology_group group;
    /* while loops; a conditional: trips is the branch counted */
    int64_t trips;
    bool trips_known;
} gs_cost_row;

typedef struct gs_cost_totals {
    double flops, hbm_bytes, ici_bytes;
    double seconds_serial;       /* sum of every instruction's time: nothing overlaps */
    double seconds_overlapped;   /* max(sum over compute/HBM instructions, sum over collectives): a lower
                                    bound that assumes every collective overlaps with independent work */
    double seconds_compute, seconds_hbm, seconds_ici;   /* sums of t_math, t_hbm, t_ici */
    double peak_hbm_bytes;       /* most bytes of live buffers at any instruction, per device */
    double hbm_capacity;
    bool fits_in_hbm;
} gs_cost_totals;

typedef struct gs_cost_report gs_cost_report;   /* lives in the ctx arena; no free */

/* Fails with GS_ERR_UNSUPPORTED for a program that carries shardings but no collectives (partition it
   first), GS_ERR_INVALID_ARG when the partitions differ from the topology's devices or a replica group does
   not lie on the torus as a box. */
GS_API gs_result gs_cost_program(gs_graph *entry, const gs_topology *topo, gs_cost_report **out);
GS_API int gs_cost_report_num_rows(const gs_cost_report *r);
GS_API const gs_cost_row *gs_cost_report_row(const gs_cost_report *r, int i);   /* pre-order: a while's
                                                                                 condition and body rows
                                                                                 follow its own row, a
                                                                                 conditional's branches'
                                                                                 rows follow its own */
GS_API gs_cost_totals gs_cost_report_totals(const gs_cost_report *r);
GS_API int gs_cost_report_num_warnings(const gs_cost_report *r);
GS_API const char *gs_cost_report_warning(const gs_cost_report *r, int i);
/* The program as HLO text with a `// ...` cost line above every instruction and the totals at the end
   (still valid HLO text). NULL on out-of-memory. */
GS_API const char *gs_cost_report_text(gs_cost_report *r);
/* The report as JSON (schema in docs/cost.md): {"instructions": [...], "totals": {...}, ...}. */
GS_API const char *gs_cost_report_json(gs_cost_report *r);
/* The estimated timeline as Chrome trace-event JSON (the format of gs_runtime_trace_json): per device d
   (pid d) two tracks as the model overlaps them, tid 0 "compute and HBM" with the entry computation's other
   instructions back to back, tid 1 "ICI" with its collectives back to back, both from time 0, so the later
   end is totals.seconds_overlapped (a while loop is one span; instructions of no time are left out). Each
   complete event: cat "compute", "HBM" (the bound of a non-collective) or "ICI", ts and dur in microseconds,
   args {"opcode", "shape", "bound", "flops", "hbm_bytes", "ici_bytes", "t_math_us", "t_hbm_us",
   "t_ici_us"} and, for a collective, "group_size" and "groups" (or "pairs"). Every device runs the same
   program, so the tracks repeat. String in the report's ctx arena; NULL on out-of-memory. */
GS_API const char *gs_cost_report_trace_json(gs_cost_report *r);
