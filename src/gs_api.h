#ifndef GSHARD_H
#define GSHARD_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GS_VERSION_MAJOR 0
#define GS_VERSION_MINOR 1
#define GS_VERSION_PATCH 0
#define GS_VERSION_STRING "0.1.0"
/* MAJOR*10000 + MINOR*100 + PATCH, for the preprocessor: #if GS_VERSION_NUMBER >= 100 (0.1.0 or later) */
#define GS_VERSION_NUMBER (GS_VERSION_MAJOR * 10000 + GS_VERSION_MINOR * 100 + GS_VERSION_PATCH)

#ifndef GS_API
#  if defined(GSHARD_STATIC) && (defined(__GNUC__) || defined(__clang__))
#    define GS_API static __attribute__((unused))
#  elif defined(GSHARD_STATIC)
#    define GS_API static
#  else
#    define GS_API extern
#  endif
#endif

/* Highest tensor rank. Override before including gshard.h (in every TU) if you need more. */
#ifndef GS_MAX_RANK
#  define GS_MAX_RANK 8
#endif

/* ---------------------------------------------------------------------------------------------------------
   Results and errors
   ------------------------------------------------------------------------------------------------------- */
/* Every function that does real work returns a gs_result. Values are only ever appended. */
typedef enum gs_result {
    GS_OK = 0,
    GS_ERR_INVALID_ARG = -1,   /* a bad argument: dims, attributes, ids, text */
    GS_ERR_OUT_OF_MEMORY = -2, /* an allocation failed */
    GS_ERR_SHAPE = -3,         /* operand shapes do not fit the op */
    GS_ERR_SHARDING = -4,      /* an invalid or inconsistent sharding */
    GS_ERR_UNSUPPORTED = -5,   /* valid input that this version does not implement */
    GS_ERR_THREAD = -6,        /* a thread or synchronisation failure */
    GS_ERR_PARSE = -7,         /* malformed text (the message says line:column) */
    GS_ERR_IO = -8             /* a file could not be read or written */
} gs_result;

GS_API const char *gs_result_str(gs_result r);
GS_API const char *gs_version(void);

/* ---------------------------------------------------------------------------------------------------------
   Context
   ------------------------------------------------------------------------------------------------------- */
typedef struct gs_ctx gs_ctx;       /* owns every IR object (arena); one thread at a time */
typedef struct gs_graph gs_graph;   /* a computation: parameters, instructions in topological order, a root */
typedef struct gs_value gs_value;   /* one instruction and the SSA value it defines */

typedef enum gs_log_level { GS_LOG_DEFAULT = 0, GS_LOG_ERROR, GS_LOG_WARN, GS_LOG_INFO, GS_LOG_DEBUG } gs_log_level;

typedef struct gs_allocator {
    void *(*alloc)(size_t size, void *user);   /* NULL: the GSHARD_MALLOC default */
    void (*free)(void *ptr, void *user);       /* NULL: the GSHARD_FREE default */
    void *user;
} gs_allocator;

typedef struct gs_logger {
    void (*fn)(gs_log_level level, gs_result code, const char *msg, void *user); /* NULL: silence */
    void *user;
} gs_logger;

typedef struct gs_ctx_desc {
    gs_allocator allocator;
    gs_logger logger;
} gs_ctx_desc;

/* desc may be NULL (all defaults). On success *out is a new context. */
GS_API gs_result gs_ctx_create(const gs_ctx_desc *desc, gs_ctx **out);
GS_API void gs_ctx_destroy(gs_ctx *ctx);
/* The instruction-set path of the interpreter's kernels (matrix products and convolution, elementwise ops,
   reductions): "scalar", "sse2", "avx2" or "avx512" ("avx", "vec4" in builds without a run-time choice), chosen
   once per process: the widest this CPU runs, or the one the environment variable GSHARD_ISA names. *path (if
   path) gets its name; msg (if cap > 0) gets why GSHARD_ISA is not honoured, or "". Returns GS_ERR_INVALID_ARG
   when GSHARD_ISA names no instruction set (gs_ctx_create then fails the same way), else GS_OK (a path this CPU
   cannot run falls back to the widest, with a message). */
GS_API gs_result gs_isa_path(const char **path, char *msg, size_t cap);
/* The sticky error: the first failure's code and message ("gs_dot: lhs dim 1 (128) != rhs dim 0 (64)").
   Builders return NULL after an error, and a builder given a NULL operand returns NULL silently. */
GS_API gs_result gs_ctx_error(const gs_ctx *ctx);
GS_API const char *gs_ctx_error_msg(const gs_ctx *ctx);
GS_API void gs_ctx_clear_error(gs_ctx *ctx);

/* ---------------------------------------------------------------------------------------------------------
   Shapes and dtypes
   ------------------------------------------------------------------------------------------------------- */
typedef enum gs_dtype {
    GS_DTYPE_INVALID = 0,
    GS_F32,    /* 4 bytes */
    GS_BF16,   /* 2 bytes of storage (the high half of an f32); arithmetic in f32, rounded to nearest even */
    GS_S32,    /* 4 bytes, two's complement */
    GS_U32,    /* 4 bytes (partition-id's type) */
    GS_PRED,   /* 1 byte, 0 or 1 */
    GS_TUPLE,  /* not an array: a tuple, possibly nested (see gs_value_tuple_*) */
    /* The rest of XLA's element types (values only ever appended). Integers are two's complement and wrap;
       the 2- and 4-bit integers are stored one element per byte, holding the value (sign-extended for s2/s4).
       Floats narrower than f32 are stored as their bit patterns (f16 in 2 bytes, the 8-bit formats in one,
       f4e2m1fn in the low 4 bits of a byte); the interpreter computes on them in f32 and rounds every new
       value to the type (nearest even), as it does for bf16. Complex values are (real, imaginary) pairs. */
    GS_S8, GS_S16, GS_S64,
    GS_U8, GS_U16, GS_U64,
    GS_F16,    /* IEEE binary16 */
    GS_F64,    /* IEEE binary64 */
    GS_S2, GS_S4, GS_U2, GS_U4,
    GS_F8E5M2,        /* IEEE-like e5m2: inf and NaN */
    GS_F8E4M3FN,      /* e4m3, bias 7: no inf, NaN is S.1111.111, max 448 */
    GS_F8E4M3,        /* IEEE-like e4m3, bias 7: inf and NaN, max 240 */
    GS_F8E4M3FNUZ,    /* e4m3, bias 8: no inf, no -0, NaN is 0x80, max 240 */
    GS_F8E4M3B11FNUZ, /* e4m3, bias 11: no inf, no -0, NaN is 0x80, max 30 */
    GS_F8E5M2FNUZ,    /* e5m2, bias 16: no inf, no -0, NaN is 0x80, max 57344 */
    GS_F8E3M4,        /* IEEE-like e3m4, bias 3: inf and NaN, max 15.5 */
    GS_F4E2M1FN,      /* e2m1, bias 1: no inf, no NaN, max 6 */
    GS_F8E8M0FNU,     /* 2^(e - 127): no sign, no zero, NaN is 0xFF */
    GS_C64,    /* 8 bytes: two f32 */
    GS_C128,   /* 16 bytes: two f64 */
    GS_TOKEN,  /* token[]: ordering only, no data (0 bytes) */
    GS_DTYPE_COUNT
} gs_dtype;

typedef struct gs_shape {
    gs_dtype dtype;
    int rank;
    int64_t dims[GS_MAX_RANK];
} gs_shape;

GS_API gs_shape gs_shape_make(gs_dtype dtype, int rank, const int64_t *dims);
GS_API gs_shape gs_shape_scalar(gs_dtype dtype);
/* Element count, or -1 when a dim is negative, the rank is outside [0, GS_MAX_RANK] or the count overflows
   int64_t; 0 for NULL. */
GS_API int64_t gs_shape_numel(const gs_shape *s);
GS_API size_t gs_shape_bytes(const gs_shape *s);   /* numel * storage size; 0 when numel is -1 or overflows */
GS_API bool gs_shape_equal(const gs_shape *a, const gs_shape *b);
GS_API size_t gs_dtype_size(gs_dtype t);            /* storage bytes per element; 0 for invalid/tuple/token */
GS_API const char *gs_dtype_name(gs_dtype t);       /* the HLO text name: "f32", "bf16", "s64", "f8e4m3fn", ... */
GS_API gs_dtype gs_dtype_from_name(const char *name); /* GS_DTYPE_INVALID for an unknown name */
/* Element i of storage-format data of type t as a double (64-bit integers beyond 2^53 rounded; complex: the
   real part; 0 for invalid/tuple/token). */
GS_API double gs_dtype_get(gs_dtype t, const void *data, int64_t i);
/* bf16 storage <-> f32 (round to nearest even; NaN stays NaN) */
GS_API uint16_t gs_f32_to_bf16(float f);
GS_API float gs_bf16_to_f32(uint16_t b);

/* ---------------------------------------------------------------------------------------------------------
   Ops. One X-macro list: X(ENUM_SUFFIX, "hlo-name", arity) with arity -1 for variadic.
   The names are XLA HLO opcodes, except the documented extensions argmax/argmin, cumsum/cumprod/cummax/cummin;
   the sharding annotation and the manual-region boundaries print as XLA's custom-calls
   ("Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape").
   ------------------------------------------------------------------------------------------------------- */
#define GS_OP_LIST(X) \
    X(PARAMETER, "parameter", 0) \
    X(CONSTANT, "constant", 0) \
    X(IOTA, "iota", 0) \
    X(PARTITION_ID, "partition-id", 0) \
    X(BROADCAST, "broadcast", 1) \
    X(RESHAPE, "reshape", 1) \
    X(TRANSPOSE, "transpose", 1) \
    X(SLICE, "slice", 1) \
    X(DYNAMIC_SLICE, "dynamic-slice", -1) \
    X(DYNAMIC_UPDATE_SLICE, "dynamic-update-slice", -1) \
    X(PAD, "pad", 2) \
    X(CONCATENATE, "concatenate", -1) \
    X(REVERSE, "reverse", 1) \
    X(CONVERT, "convert", 1) \
    X(COPY, "copy", 1) \
    X(NEGATE, "negate", 1) \
    X(ABS, "abs", 1) \
    X(EXP, "exponential", 1) \
    X(LOG, "log", 1) \
    X(TANH, "tanh", 1) \
    X(LOGISTIC, "logistic", 1) \
    X(SQRT, "sqrt", 1) \
    X(RSQRT, "rsqrt", 1) \
    X(FLOOR, "floor", 1) \
    X(CEIL, "ceil", 1) \
    X(SIGN, "sign", 1) \
    X(NOT, "not", 1) \
    X(ADD, "add", 2) \
    X(SUBTRACT, "subtract", 2) \
    X(MULTIPLY, "multiply", 2) \
    X(DIVIDE, "divide", 2) \
    X(REMAINDER, "remainder", 2) \
    X(MAXIMUM, "maximum", 2) \
    X(MINIMUM, "minimum", 2) \
    X(POWER, "power", 2) \
    X(AND, "and", 2) \
    X(OR, "or", 2) \
    X(XOR, "xor", 2) \
    X(COMPARE, "compare", 2) \
    X(SELECT, "select", 3) \
    X(CLAMP, "clamp", 3) \
    X(REDUCE, "reduce", 2) \
    X(ARGMAX, "argmax", 1) \
    X(ARGMIN, "argmin", 1) \
    X(DOT, "dot", 2) \
    X(CONVOLUTION, "convolution", 2) \
    X(REDUCE_WINDOW, "reduce-window", 2) \
    X(GATHER, "gather", 2) \
    X(SCATTER, "scatter", 3) \
    X(SORT, "sort", -1) \
    X(TOPK, "topk", 1) \
    X(CUMSUM, "cumsum", 1) \
    X(CUMPROD, "cumprod", 1) \
    X(CUMMAX, "cummax", 1) \
    X(CUMMIN, "cummin", 1) \
    X(RNG, "rng", -1) \
    X(ALL_REDUCE, "all-reduce", 1) \
    X(ALL_GATHER, "all-gather", 1) \
    X(REDUCE_SCATTER, "reduce-scatter", 1) \
    X(ALL_TO_ALL, "all-to-all", 1) \
    X(COLLECTIVE_PERMUTE, "collective-permute", 1) \
    X(ANNOTATE, "custom-call", 1) \
    X(TO_MANUAL, "custom-call", 1) \
    X(TO_FULL, "custom-call", 1) \
    X(TUPLE, "tuple", -1) \
    X(GET_TUPLE_ELEMENT, "get-tuple-element", 1) \
    X(WHILE, "while", 1) \
    X(OPAQUE, "custom-call", -1) /* read from HLO text, printed back as written, never evaluated */ \
    X(SINE, "sine", 1) \
    X(COSINE, "cosine", 1) \
    X(TAN, "tan", 1) \
    X(EXPM1, "exponential-minus-one", 1) \
    X(LOG1P, "log-plus-one", 1) \
    X(CBRT, "cbrt", 1) \
    X(ERF, "erf", 1) \
    X(IS_FINITE, "is-finite", 1) \
    X(POPCNT, "popcnt", 1) \
    X(CLZ, "count-leading-zeros", 1) \
    X(REAL, "real", 1) \
    X(IMAG, "imag", 1) \
    X(ATAN2, "atan2", 2) \
    X(SHIFT_LEFT, "shift-left", 2) \
    X(SHIFT_RIGHT_LOGICAL, "shift-right-logical", 2) \
    X(SHIFT_RIGHT_ARITHMETIC, "shift-right-arithmetic", 2) \
    X(COMPLEX, "complex", 2) \
    X(REDUCE_PRECISION, "reduce-precision", 1) \
    X(BITCAST_CONVERT, "bitcast-convert", 1) \
    X(REPLICA_ID, "replica-id", 0) \
    X(RNG_BIT_GENERATOR, "rng-bit-generator", 1) \
    X(BATCH_NORM_TRAINING, "batch-norm-training", 3) \
    X(BATCH_NORM_INFERENCE, "batch-norm-inference", 5) \
    X(BATCH_NORM_GRAD, "batch-norm-grad", 5) \
    X(CHOLESKY, "cholesky", 1) \
    X(TRIANGULAR_SOLVE, "triangular-solve", 2) \
    X(FFT, "fft", 1) \
    X(SELECT_AND_SCATTER, "select-and-scatter", 3) \
    X(CONDITIONAL, "conditional", -1) \
    X(RAGGED_DOT, "ragged-dot", 3) \
    X(RAGGED_ALL_TO_ALL, "ragged-all-to-all", 6)

typedef enum gs_op {
    GS_OP_INVALID = 0,
#define GS__X_ENUM(e, s, n) GS_OP_##e,
    GS_OP_LIST(GS__X_ENUM)
#undef GS__X_ENUM
    GS_OP_COUNT
} gs_op;

GS_API const char *gs_op_name(gs_op op);   /* HLO opcode text */
GS_API int gs_op_arity(gs_op op);          /* -1: variadic */

/* Reduction kinds (reduce, reduce-window, all-reduce, reduce-scatter, scatter combiners, cumulative ops).
   REPLACE is only valid as a scatter combiner (the update overwrites). */
typedef enum gs_reduce_kind {
    GS_REDUCE_INVALID = 0,
    GS_REDUCE_SUM, GS_REDUCE_PROD, GS_REDUCE_MAX, GS_REDUCE_MIN, GS_REDUCE_AND, GS_REDUCE_OR,
    GS_REDUCE_REPLACE,
    GS_REDUCE_CUSTOM,         /* a reducer computation (gs_value_set_reducer): any form XLA accepts */
    GS_REDUCE_COUNT
} gs_reduce_kind;
GS_API const char *gs_reduce_kind_name(gs_reduce_kind k);   /* "sum", "prod", "max", ... */

typedef enum gs_cmp {
    GS_CMP_INVALID = 0, GS_CMP_EQ, GS_CMP_NE, GS_CMP_LT, GS_CMP_LE, GS_CMP_GT, GS_CMP_GE, GS_CMP_COUNT
} gs_cmp;

/* XLA's comparison types. DEFAULT is FLOAT for f32/bf16, SIGNED for s32, UNSIGNED for u32 and pred.
   TOTALORDER (floats only) orders -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN, comparing bit patterns;
   SIGNED/UNSIGNED (integers only) reinterpret the 32 bits. */
typedef enum gs_cmp_type {
    GS_CMP_TYPE_DEFAULT = 0, GS_CMP_TYPE_FLOAT, GS_CMP_TYPE_TOTALORDER, GS_CMP_TYPE_SIGNED, GS_CMP_TYPE_UNSIGNED,
    GS_CMP_TYPE_COUNT
} gs_cmp_type;

/* dot_general dimension numbers (XLA DotDimensionNumbers). Output dims: batch dims (in the order given),
   then lhs free dims, then rhs free dims, each in increasing order. */
typedef struct gs_dot_dims {
    int n_batch;
    int64_t lhs_batch[GS_MAX_RANK], rhs_batch[GS_MAX_RANK];
    int n_contract;
    int64_t lhs_contract[GS_MAX_RANK], rhs_contract[GS_MAX_RANK];
} gs_dot_dims;

/* ragged-dot dimension numbers (XLA RaggedDotDimensionNumbers): a dot_general whose lhs has one ragged dim,
   cut into g groups by group_sizes (its last dim has g entries). Three modes, by the kind of the ragged dim:
   non-contracting [b,m,k] x [g,b,k,n] -> [b,m,n] (rows of group i use rhs group i; rows past the groups are 0;
   one rhs group dim), contracting [b,m,k] x [b,k,n] -> [g,b,m,n] (group i sums its range of k), batch
   [b,m,k] x [b,k,n] -> [b,m,n] (batches past the groups' total are 0). group_sizes is [b..,x..,g] or [g]
   (broadcast): b.. the lhs batch dims (in batch mode those before the ragged one), x.. the lhs non-contracting
   dims before the ragged dim (non-contracting mode) or the contracting dims listed before it (contracting mode).
   Lists as XLA's proto holds them; the builder accepts exactly one ragged dim and one or no group dim. */
typedef struct gs_ragged_dot_dims {
    gs_dot_dims dot;
    int n_lhs_ragged;
    int64_t lhs_ragged[GS_MAX_RANK];
    int n_rhs_group;
    int64_t rhs_group[GS_MAX_RANK];
} gs_ragged_dot_dims;

/* One dim of a window (convolution, reduce-window). A zeroed struct is not valid: size, stride and both
   dilations are >= 1 (gs_window_default gives size 1, stride 1, no padding, dilations 1). */
typedef struct gs_window_dim {
    int64_t size, stride, pad_lo, pad_hi, base_dilation, window_dilation;
} gs_window_dim;
GS_API gs_window_dim gs_window_default(void);

/* XLA ConvolutionDimensionNumbers, n_spatial spatial dims (the same count for input, kernel, output). */
typedef struct gs_conv_dims {
    int n_spatial;
    int64_t input_batch, input_feature, input_spatial[GS_MAX_RANK];
    int64_t kernel_input_feature, kernel_output_feature, kernel_spatial[GS_MAX_RANK];
    int64_t output_batch, output_feature, output_spatial[GS_MAX_RANK];
} gs_conv_dims;
/* Parse/print XLA dim_labels such as "b01f_01io->b01f" (0..9 are spatial dims in order). */
GS_API gs_result gs_conv_dims_from_labels(const char *labels, gs_conv_dims *out);
/* Writes the labels into buf (NUL terminated); returns the length, or -1 if cap is too small or dims invalid. */
GS_API int gs_conv_dims_to_labels(const gs_conv_dims *d, char *buf, size_t cap);

typedef struct gs_conv_config {
    gs_conv_dims dims;
    gs_window_dim window[GS_MAX_RANK];   /* one per spatial dim, in the order of dims.*_spatial */
    int64_t feature_group_count;         /* 0 means 1 */
    int64_t batch_group_count;           /* 0 means 1 */
    bool reversal[GS_MAX_RANK];          /* XLA window_reversal (rhs_reversal) per spatial dim: kernel tap k is
                                            applied at window position size-1-k; false (zeroed) reads it forwards */
} gs_conv_config;

/* XLA GatherDimensionNumbers; slice_sizes has operand-rank entries. */
typedef struct gs_gather_dims {
    int n_offset_dims;            int64_t offset_dims[GS_MAX_RANK];
    int n_collapsed_slice_dims;   int64_t collapsed_slice_dims[GS_MAX_RANK];
    int n_start_index_map;        int64_t start_index_map[GS_MAX_RANK];
    int n_operand_batching_dims;  int64_t operand_batching_dims[GS_MAX_RANK];
    int64_t start_indices_batching_dims[GS_MAX_RANK]; /* n_operand_batching_dims entries */
    int64_t index_vector_dim;
    int64_t slice_sizes[GS_MAX_RANK];
} gs_gather_dims;

/* XLA ScatterDimensionNumbers. */
typedef struct gs_scatter_dims {
    int n_update_window_dims;          int64_t update_window_dims[GS_MAX_RANK];
    int n_inserted_window_dims;        int64_t inserted_window_dims[GS_MAX_RANK];
    int n_scatter_dims_to_operand_dims; int64_t scatter_dims_to_operand_dims[GS_MAX_RANK];
    int n_input_batching_dims;         int64_t input_batching_dims[GS_MAX_RANK];
    int64_t scatter_indices_batching_dims[GS_MAX_RANK]; /* n_input_batching_dims entries */
    int64_t index_vector_dim;
} gs_scatter_dims;

/* Replica groups (XLA's replica_groups / device groups; ids are partition ids).
   - n_groups == 0: "{}", every partition in one group.
   - ids != NULL: explicit list, n_groups rows of group_size ids.
   - ids == NULL and iota_rank > 0: the iota form [n_groups,group_size]<=[iota_dims]T(iota_perm):
     arange(prod(iota_dims)).reshape(iota_dims).transpose(iota_perm).reshape(n_groups, group_size).
   All groups have the same size. */
typedef struct gs_replica_groups {
    int64_t n_groups, group_size;
    const int64_t *ids;
    int iota_rank;
    int64_t iota_dims[GS_MAX_RANK];
    int iota_perm[GS_MAX_RANK];
} gs_replica_groups;

/* Options common to collectives. channel_id 0 = none. */
typedef struct gs_collective_desc {
    gs_replica_groups groups;
    int64_t channel_id;
    bool use_global_device_ids;
} gs_collective_desc;

/* ---------------------------------------------------------------------------------------------------------
   Graphs and builders. Every builder checks its arguments; on failure it records the sticky error (naming
   the builder and the problem) and returns NULL. A NULL operand makes a builder return NULL quietly.
   ------------------------------------------------------------------------------------------------------- */
GS_API gs_graph *gs_graph_new(gs_ctx *ctx, const char *name);
GS_API gs_ctx *gs_graph_ctx(const gs_graph *g);
GS_API const char *gs_graph_name(const gs_graph *g);
/* The root: one value (which may be a tuple). gs_graph_set_outputs with n > 1 builds a tuple root. */
GS_API gs_result gs_graph_set_root(gs_graph *g, gs_value *root);
GS_API gs_result gs_graph_set_outputs(gs_graph *g, int n, gs_value *const *outs);
GS_API gs_value *gs_graph_root(const gs_graph *g);
GS_API int gs_graph_num_params(const gs_graph *g);
GS_API gs_value *gs_graph_param(const gs_graph *g, int i);
GS_API int gs_graph_num_values(const gs_graph *g);          /* instructions, in topological order */
GS_API gs_value *gs_graph_value(const gs_graph *g, int i);
/* Outputs of the graph as seen by gs_eval: the root's tuple elements, or the root itself. */
GS_API int gs_graph_num_outputs(const gs_graph *g);
GS_API gs_shape gs_graph_output_shape(const gs_graph *g, int i);
GS_API gs_value *gs_graph_find(const gs_graph *g, const char *name);
/* The number of partitions the program is written for (HloModule num_partitions=; default 1). Replica
   groups written "{}" mean all of them. */
GS_API gs_result gs_graph_set_num_partitions(gs_graph *g, int64_t n);
GS_API int64_t gs_graph_num_partitions(const gs_graph *g);
/* Checks every instruction again (shapes, attributes, operand order, root). */
GS_API gs_result gs_graph_verify(gs_graph *g);

/* Value accessors */
GS_API gs_op gs_value_op(const gs_value *v);
GS_API const char *gs_value_name(const gs_value *v);
GS_API gs_result gs_value_set_name(gs_value *v, const char *name);   /* must stay unique in its graph */
GS_API gs_shape gs_value_shape(const gs_value *v);   /* dtype GS_TUPLE for tuples */
GS_API int gs_value_num_operands(const gs_value *v);
GS_API gs_value *gs_value_operand(const gs_value *v, int i);
/* The computations v runs: a while's condition (0) and body (1), a conditional's branches in order; 0 and
   NULL for any other op or k out of range. */
GS_API int gs_value_num_called(const gs_value *v);
GS_API gs_graph *gs_value_called(const gs_value *v, int k);
/* Tuples. A tuple value holds its leaves (the arrays of the tuple, nested tuples flattened in order): the
   parameter buffers, gs_eval's inputs and outputs and the runtime's buffers are one per leaf, and a tuple
   sharding lists one sharding per leaf, as XLA's does. gs_value_tuple_size is the number of leaves and
   gs_value_tuple_shape(v, i) leaf i. The nesting: gs_value_tuple_arity counts the top-level elements
   (get-tuple-element's index range), gs_value_tuple_element_leaves gives top-level element i's leaf count (1
   for an array) and first leaf, and gs_value_tuple_tree the structure in preorder (a tuple node holds its
   child count, a leaf -1; (f32[], (s32[], pred[])) is {2, -1, 2, -1, -1}), or NULL for a flat tuple. */
GS_API int gs_value_tuple_size(const gs_value *v);    /* leaves; 0 for arrays */
GS_API gs_shape gs_value_tuple_shape(const gs_value *v, int i);
GS_API int gs_value_tuple_arity(const gs_value *v);   /* top-level elements; 0 for arrays */
GS_API int gs_value_tuple_element_leaves(const gs_value *v, int i, int *first_leaf);
GS_API const int *gs_value_tuple_tree(const gs_value *v, int *n);
GS_API int gs_value_id(const gs_value *v);            /* position in its graph */
/* The value's sharding as HLO attribute text (without "sharding="), as gs_sharding_to_text prints it: the same
   sharding, not necessarily the characters written (spaces dropped, "last_tile_dims={replicated}" as
   "last_tile_dim_replicate", a tiling whose every tile is the whole array as "{replicated}"); the device list
   keeps the form it was given in (iota or explicit). NULL when the value has none. */
GS_API const char *gs_value_sharding_text(const gs_value *v);
/* Parses text and attaches it as gs_value_set_sharding does; a named-mesh sharding's open dims ({?}) become the
   value's open dims (gs_value_open_dims) and the text is printed back as written while the value keeps it. */
GS_API gs_result gs_value_set_sharding_text(gs_value *v, const char *text);

/* Leaves: parameters are numbered in the order they are created unless index >= 0 is given. */
GS_API gs_value *gs_parameter(gs_graph *g, int64_t index, gs_shape shape, const char *name);
/* A parameter holding a flat tuple of n arrays (while-loop state). */
GS_API gs_value *gs_parameter_tuple(gs_graph *g, int64_t index, int n, const gs_shape *shapes, const char *name);
/* A parameter holding a nested tuple: n leaf shapes and the structure in preorder (see gs_value_tuple_tree;
   tree NULL: flat). */
GS_API gs_value *gs_parameter_tuple_nested(gs_graph *g, int64_t index, int n, const gs_shape *shapes, int n_tree,
                                           const int *tree, const char *name);
/* Dense constant: data holds numel elements in storage format (bf16 as uint16, pred as uint8). Copied. */
GS_API gs_value *gs_constant(gs_graph *g, gs_shape shape, const void *data);
/* Splat constant of any shape: value converted to dtype (pred: != 0). */
GS_API gs_value *gs_constant_splat(gs_graph *g, gs_shape shape, double value);
GS_API gs_value *gs_scalar(gs_graph *g, gs_dtype dtype, double value);
GS_API gs_value *gs_iota(gs_graph *g, gs_shape shape, int64_t iota_dim);
GS_API gs_value *gs_partition_id(gs_graph *g);   /* u32[] */

/* Data movement */
GS_API gs_value *gs_broadcast(gs_graph *g, gs_value *x, gs_shape shape, const int64_t *dims /* x.rank entries */);
GS_API gs_value *gs_broadcast_in_dim(gs_graph *g, gs_value *x, int rank, const int64_t *out_dims,
                                     const int64_t *dims);
GS_API gs_value *gs_reshape(gs_graph *g, gs_value *x, int rank, const int64_t *dims);
GS_API gs_value *gs_transpose(gs_graph *g, gs_value *x, const int64_t *perm);
GS_API gs_value *gs_slice(gs_graph *g, gs_value *x, const int64_t *start, const int64_t *limit,
                          const int64_t *stride /* NULL = all 1 */);
/* start indices: x.rank scalar integer values. Starts are clamped to [0, dim - size] (XLA). */
GS_API gs_value *gs_dynamic_slice(gs_graph *g, gs_value *x, gs_value *const *start, const int64_t *sizes);
GS_API gs_value *gs_dynamic_update_slice(gs_graph *g, gs_value *x, gs_value *update, gs_value *const *start);
/* lo/hi may be negative (cropping); interior >= 0. */
GS_API gs_value *gs_pad(gs_graph *g, gs_value *x, gs_value *pad_value, const int64_t *lo, const int64_t *hi,
                        const int64_t *interior /* NULL = 0 */);
GS_API gs_value *gs_concatenate(gs_graph *g, int n, gs_value *const *xs, int64_t dim);
GS_API gs_value *gs_reverse(gs_graph *g, gs_value *x, int n_dims, const int64_t *dims);
GS_API gs_value *gs_convert(gs_graph *g, gs_value *x, gs_dtype to);
GS_API gs_value *gs_copy(gs_graph *g, gs_value *x);

/* Elementwise. Binary ops need equal shapes (broadcast explicitly, as in HLO). gs_unary takes NEGATE..NOT and
   SINE..IMAG (is-finite gives pred; real/imag of c64/c128 give f32/f64, of a real float x and 0; popcnt and
   count-leading-zeros count within the integer's width); gs_binary takes ADD..XOR and ATAN2..COMPLEX
   (shifts: integers, the amount read as unsigned, an amount >= the width gives 0, or the sign for
   shift-right-arithmetic; complex(re, im) of f32/f64 gives c64/c128). */
GS_API gs_value *gs_unary(gs_graph *g, gs_op op, gs_value *x);
GS_API gs_value *gs_binary(gs_graph *g, gs_op op, gs_value *a, gs_value *b);
/* XLA's reduce-precision: x (a real float) rounded to exponent_bits (>= 1) and mantissa_bits (>= 0), nearest
   even; values above the reduced range become inf, values at or below its smallest normal exponent become
   (signed) zero; NaN stays NaN. */
GS_API gs_value *gs_reduce_precision(gs_graph *g, gs_value *x, int exponent_bits, int mantissa_bits);
/* XLA's bitcast-convert: the storage bits of x read as dtype `to`. Equal widths keep the shape; a narrower `to`
   adds a minor dim of size (width of x / width of to), a wider one removes x's minor dim, which must be that
   ratio. Elements are little-endian (element 0 of the added dim holds the lowest bits). Widths below 8 bits
   convert only to the same width. */
GS_API gs_value *gs_bitcast_convert(gs_graph *g, gs_value *x, gs_dtype to);
GS_API gs_value *gs_replica_id(gs_graph *g);   /* u32[]; always 0: a program runs as one replica */
/* XLA's rng-bit-generator: (new_state, bits) from state = u64[2] (key, counter) or, for Philox, u64[3] (key,
   128-bit counter low and high). bits has the shape `shape` (16-, 32- or 64-bit integer elements), filled as
   XLA's expansion fills it, bit for bit: Threefry-2x32 (20 rounds) of the counter + i under the key; Philox-4x32
   (10 rounds) of the 128-bit counter + i under the key, four 32-bit words per counter, in order. 64-bit
   elements take two words (the first the low half), 16-bit elements the low half of one word. new_state is
   the state with the counter advanced by the number of blocks used. GS_RNG_DEFAULT is Philox, as XLA's CPU
   and GPU compilers resolve it. */
/* XLA's batch normalization over every dim of x but feature_index (N elements per feature; real floats;
   scale, offset, mean and variance are [F] vectors of x's type). Computed in double, rounded once to the type.
   training(x, scale, offset) -> (y, mean, var): mean and the biased variance of each feature, then
   y = (x - mean) * scale / sqrt(var + epsilon) + offset. inference(x, scale, offset, mean, var) -> y, the same
   formula with the given statistics. grad(x, scale, mean, var, dy) -> (dx, dscale, doffset): doffset = sum(dy),
   dscale = sum(dy * (x - mean)) / sqrt(var + epsilon), dx = scale / sqrt(var + epsilon) * (dy - doffset / N -
   (x - mean) * sum(dy * (x - mean)) / (N * (var + epsilon))). */
GS_API gs_value *gs_batch_norm_training(gs_graph *g, gs_value *x, gs_value *scale, gs_value *offset, float epsilon,
                                        int64_t feature_index);
GS_API gs_value *gs_batch_norm_inference(gs_graph *g, gs_value *x, gs_value *scale, gs_value *offset, gs_value *mean,
                                         gs_value *variance, float epsilon, int64_t feature_index);
GS_API gs_value *gs_batch_norm_grad(gs_graph *g, gs_value *x, gs_value *scale, gs_value *mean, gs_value *variance,
                                    gs_value *grad_output, float epsilon, int64_t feature_index);
/* XLA's cholesky of a [..., n, n] (real floats): lower gives L with a = L L^T from a's lower triangle, else U with
   a = U^T U from its upper triangle; the other triangle of the result is 0. A matrix that is not positive
   definite gives NaN from the first failing column on (the square root of a negative pivot). */
GS_API gs_value *gs_cholesky(gs_graph *g, gs_value *a, bool lower);
/* XLA's triangular-solve: x with op(a) x = b (left_side) or x op(a) = b, a [..., m, m] triangular (its lower or
   upper triangle; unit_diagonal: the diagonal is taken as 1 and not read), b [..., m, n] (left) or [..., n, m];
   op is the identity, or the transpose for transpose_a (GS_TRANSPOSE_A_TRANSPOSE or ADJOINT: the same on real
   types). Computed in double, rounded once. */
typedef enum gs_transpose_a { GS_TRANSPOSE_A_NO = 0, GS_TRANSPOSE_A_TRANSPOSE, GS_TRANSPOSE_A_ADJOINT } gs_transpose_a;
GS_API gs_value *gs_triangular_solve(gs_graph *g, gs_value *a, gs_value *b, bool left_side, bool lower,
                                     bool unit_diagonal, gs_transpose_a transpose_a);
/* XLA's fft over the last n (1..3) dims, of lengths fft_length: FFT (complex -> complex, e^{-2 pi i k j / N}),
   IFFT (its inverse, scaled by 1 / prod(fft_length)), RFFT (real -> complex, the last dim keeps its first
   N/2 + 1 entries), IRFFT (those N/2 + 1 entries of a Hermitian spectrum -> real, scaled, the imaginary parts of
   the bins that must be real ignored). f32 goes with c64, f64 with c128. Computed in double. */
typedef enum gs_fft_type { GS_FFT_INVALID = 0, GS_FFT_FFT, GS_FFT_IFFT, GS_FFT_RFFT, GS_FFT_IRFFT } gs_fft_type;
GS_API gs_value *gs_fft(gs_graph *g, gs_value *x, gs_fft_type type, int n, const int64_t *fft_length);
/* XLA's select-and-scatter: out = init everywhere; for each window of operand (window: operand rank entries, as
   reduce-window's) the element select picks (the first, replaced by each later one w when select(chosen, w) is
   false; padding is never chosen) receives scatter(out, source at the window's position). source has the
   window positions' shape; select has two scalar parameters of operand's type and returns pred[]. */
GS_API gs_value *gs_select_and_scatter(gs_graph *g, gs_value *operand, gs_value *source, gs_value *init,
                                       const gs_window_dim *window, gs_graph *select, gs_reduce_kind scatter);
typedef enum gs_rng_algorithm { GS_RNG_DEFAULT = 0, GS_RNG_THREE_FRY, GS_RNG_PHILOX } gs_rng_algorithm;
GS_API gs_value *gs_rng_bit_generator(gs_graph *g, gs_value *state, gs_shape shape, gs_rng_algorithm algorithm);
GS_API gs_value *gs_neg(gs_graph *g, gs_value *x);
GS_API gs_value *gs_exp(gs_graph *g, gs_value *x);
GS_API gs_value *gs_add(gs_graph *g, gs_value *a, gs_value *b);
GS_API gs_value *gs_sub(gs_graph *g, gs_value *a, gs_value *b);
GS_API gs_value *gs_mul(gs_graph *g, gs_value *a, gs_value *b);
GS_API gs_value *gs_div(gs_graph *g, gs_value *a, gs_value *b);
GS_API gs_value *gs_max(gs_graph *g, gs_value *a, gs_value *b);
GS_API gs_value *gs_min(gs_graph *g, gs_value *a, gs_value *b);
GS_API gs_value *gs_compare(gs_graph *g, gs_value *a, gs_value *b, gs_cmp dir);
GS_API gs_value *gs_compare_typed(gs_graph *g, gs_value *a, gs_value *b, gs_cmp dir, gs_cmp_type type);
GS_API gs_value *gs_select(gs_graph *g, gs_value *pred, gs_value *on_true, gs_value *on_false);
GS_API gs_value *gs_clamp(gs_graph *g, gs_value *lo, gs_value *x, gs_value *hi);

/* Reductions. init is a scalar of x's dtype. */
GS_API gs_value *gs_reduce(gs_graph *g, gs_value *x, gs_value *init, gs_reduce_kind kind, int n_dims,
                           const int64_t *dims);
/* Index (s32) of the max/min along dim; ties take the lowest index; NaN counts as larger than everything
   for argmax and smaller than everything for argmin (so the first NaN wins in both, like NumPy). */
GS_API gs_value *gs_argmax(gs_graph *g, gs_value *x, int64_t dim);
GS_API gs_value *gs_argmin(gs_graph *g, gs_value *x, int64_t dim);

/* Contractions */
GS_API gs_value *gs_dot(gs_graph *g, gs_value *lhs, gs_value *rhs, const gs_dot_dims *dims);
/* ragged-dot(lhs, rhs, group_sizes): see gs_ragged_dot_dims. lhs and rhs of one numeric dtype (the result's),
   group_sizes of an integer type; negative sizes as XLA's evaluator reads them (a row belongs to the first
   group whose running total exceeds it; contracting ranges clamped to the dim). */
GS_API gs_value *gs_ragged_dot(gs_graph *g, gs_value *lhs, gs_value *rhs, gs_value *group_sizes,
                               const gs_ragged_dot_dims *dims);
/* einsum "GSM,ME->GSE": letters name dims; letters in both inputs and the output are batch dims, letters in
   both inputs only are contracted, others are free. Lowered to dot (+ transpose when the output order
   differs from dot's). Each letter appears at most once per operand. */
GS_API gs_value *gs_einsum(gs_graph *g, const char *spec, gs_value *lhs, gs_value *rhs);
GS_API gs_value *gs_convolution(gs_graph *g, gs_value *input, gs_value *kernel, const gs_conv_config *cfg);
/* window: x.rank entries. */
GS_API gs_value *gs_reduce_window(gs_graph *g, gs_value *x, gs_value *init, gs_reduce_kind kind,
                                  const gs_window_dim *window);

/* Gather/scatter with XLA semantics (start indices clamped so the slice stays inside the operand; scatter
   updates whose window would leave the operand are skipped). */
GS_API gs_value *gs_gather(gs_graph *g, gs_value *operand, gs_value *indices, const gs_gather_dims *dims);
GS_API gs_value *gs_scatter(gs_graph *g, gs_value *operand, gs_value *indices, gs_value *updates,
                            const gs_scatter_dims *dims, gs_reduce_kind combiner /* SUM..OR or REPLACE */);

/* Sort n operands of one shape along dim, ordered by the first operand (ascending or descending; stable:
   ties keep their order; NaN sorts after every number in ascending order, before them in descending).
   Returns a tuple when n > 1, else an array. */
GS_API gs_value *gs_sort(gs_graph *g, int n, gs_value *const *xs, int64_t dim, bool descending);
/* Sort n operands of one shape along dim with a comparator computation, as XLA's sort: comparator has 2n scalar
   parameters (2j and 2j+1 the two elements of operand j being compared, of its element type) and returns pred[],
   true when the first element goes before the second; the sort is stable. The comparator is evaluated as a
   computation (any ops the interpreter evaluates, except while loops and collectives). */
GS_API gs_value *gs_sort_custom(gs_graph *g, int n, gs_value *const *xs, int64_t dim, gs_graph *comparator);
/* Gives v (a reduce, reduce-window, scatter, all-reduce or reduce-scatter of one operand, built with any kind valid
   for its type) a reducer computation instead, as XLA's to_apply=: two rank-0 parameters of v's element type
   (the accumulated value first, then the element), a rank-0 root of that type, and only instructions a scalar
   computation can run (no collectives, loops, sorts). XLA leaves the order of application to the backend;
   gshard.h's order is in docs/hlo_text.md. Partitioned without cross-device combining (the reduced dims are
   gathered first; reduce-window replicated). */
GS_API gs_result gs_value_set_reducer(gs_value *v, gs_graph *reducer);
/* Makes v result k of a variadic reduce, reduce-window or scatter over n operands (2 <= n <= 32) whose reducer
   mixes them, as XLA's to_apply= on such an op: v is built (with any kind valid for its type) from operand k and
   init k (scatter: operand k, the indices and update k); xs are the n operands and inits the n initial values
   (scatter: the n updates), each of the dims of v's own and xs[k], inits[k] v's own. reducer has 2n scalar
   parameters (the n accumulated values, then the n elements, of the operands' element types) and returns a tuple
   of n scalars of those types. Every result k of one variadic op is a value of its own: each evaluates the whole
   fold (the order of gs_value_set_reducer) and keeps its component. The interpreter and the runtime run it; the
   partitioner splits it only where no partial results are combined, or combines them as XLA does
   (docs/hlo_text.md). */
GS_API gs_result gs_value_set_variadic_reducer(gs_value *v, gs_graph *reducer, int n, int k, gs_value *const *xs,
                                               gs_value *const *inits);
/* sort (x, iota) along dim: tuple (values, s32 indices) */
GS_API gs_value *gs_sort_with_indices(gs_graph *g, gs_value *x, int64_t dim, bool descending);
/* top-k along the last dim: tuple (values[..., k], s32 indices[..., k]); largest first (or smallest first when
   largest is false); ties take the lower index first. */
GS_API gs_value *gs_topk(gs_graph *g, gs_value *x, int64_t k, bool largest);

/* Inclusive (or, with reverse, suffix) scans along dim: kind SUM, PROD, MAX or MIN. */
GS_API gs_value *gs_cumulative(gs_graph *g, gs_value *x, gs_reduce_kind kind, int64_t dim, bool reverse);

/* Uniform random numbers in [lo, hi) (f32/bf16; s32/u32: integers in [lo, hi)). Element i of the result,
   counted row-major over the logical shape, is a pure function of (seed, i): a partitioned program
   reproduces the unpartitioned bits. lo and hi are scalars of the result dtype. */
GS_API gs_value *gs_rng_uniform(gs_graph *g, gs_value *lo, gs_value *hi, gs_shape shape, uint64_t seed);
/* The shard form, for partitioned programs: one device's block of gs_rng_uniform(lo, hi, full_shape, seed).
   The result has shard_shape (same dtype and rank as full_shape, no dim larger than full_shape's). offsets
   are full_shape.rank s32 scalars (run-time values, typically read from a table indexed by partition-id):
   the global index of the block's first element in each dim. Element l of the result (multi-index l) has
   the bits of element offsets + l of the full array. An element whose global index lies outside full_shape
   (the padding of an uneven shard, or a negative offset) holds lo. The operands are lo, hi, then the
   offsets; with full_shape.rank == 0 this is gs_rng_uniform on a scalar. */
GS_API gs_value *gs_rng_uniform_shard(gs_graph *g, gs_value *lo, gs_value *hi, gs_shape shard_shape,
                                      gs_shape full_shape, gs_value *const *offsets, uint64_t seed);

/* Collectives (XLA semantics; on one partition they are identities of the right shape). */
GS_API gs_value *gs_all_reduce(gs_graph *g, gs_value *x, gs_reduce_kind kind, const gs_collective_desc *cd);
GS_API gs_value *gs_all_gather(gs_graph *g, gs_value *x, int64_t dim, const gs_collective_desc *cd);
GS_API gs_value *gs_reduce_scatter(gs_graph *g, gs_value *x, gs_reduce_kind kind, int64_t dim,
                                   const gs_collective_desc *cd);
/* Splits x along split_dim into group_size pieces, sends piece j to the j-th member of the group, and
   concatenates what arrives along concat_dim, in group order. */
GS_API gs_value *gs_all_to_all(gs_graph *g, gs_value *x, int64_t split_dim, int64_t concat_dim,
                               const gs_collective_desc *cd);
/* pairs: n_pairs (source, target) entries, flat; a partition that is nobody's target receives zeros. */
GS_API gs_value *gs_collective_permute(gs_graph *g, gs_value *x, int64_t n_pairs, const int64_t *pairs,
                                       int64_t channel_id);

/* XLA's ragged-all-to-all: operands (input, output, input_offsets, send_sizes, output_offsets, recv_sizes), result
   the shape of `output`. input[N, rest...] and output[M, rest...] share their element type and the dims after the
   first (the ragged one); the four metadata operands share one integer shape of rank 1 or 2 ([K], or [A,B] read in
   row-major order as K = A*B updates) with K a multiple of the group size G. Update i of the sender (member
   i / (K/G) of its group receives it) sends the send_sizes[i] rows of its input starting at input_offsets[i]; they
   are written at output_offsets[i] of the receiver's result (the sender gives the receiver's offset), where the
   receiver's recv_sizes[(sender's position) * K/G + i % (K/G)] must say the same size. Rows nothing writes keep
   the `output` operand's values. Offsets and sizes are data: the interpreter and the runtime check each update's
   rows against the buffers and fail naming the device and the operand rather than read or write outside them.
   channel_id 0: across replicas as XLA reads it (gshard.h has one replica per partition, so both read alike). */
GS_API gs_value *gs_ragged_all_to_all(gs_graph *g, gs_value *const operands[6], const gs_collective_desc *cd);

/* Sharding annotation (an identity carrying a sharding for propagation) and manual-region boundaries. */
GS_API gs_value *gs_annotate(gs_graph *g, gs_value *x, const char *sharding_text);
/* full-shape x -> per-device shard shape (rank and dtype kept); to_full is the inverse. */
GS_API gs_value *gs_to_manual(gs_graph *g, gs_value *x, gs_shape shard_shape, const char *sharding_text);
GS_API gs_value *gs_to_full(gs_graph *g, gs_value *x, gs_shape full_shape, const char *sharding_text);

GS_API gs_value *gs_tuple(gs_graph *g, int n, gs_value *const *xs);   /* elements: arrays or tuples (nested) */
GS_API gs_value *gs_get_tuple_element(gs_graph *g, gs_value *t, int64_t index);
/* XLA while: cond(state) -> pred[], body(state) -> state; state is the shape of init (array or flat tuple).
   cond and body each have exactly one parameter of that shape. */
GS_API gs_value *gs_while(gs_graph *g, gs_graph *cond, gs_graph *body, gs_value *init);
/* XLA conditional: runs branches[k](args[k]) for one k and returns its result. selector is pred[] (then
   n_branches is 2: branches[0] runs when it is true, branches[1] when false) or s32[] (any n_branches >= 1:
   branch selector, an index outside [0, n_branches) runs the last one). Each branch has exactly one parameter,
   of args[k]'s shape, and every branch returns the same shape (an array or a tuple). Only the taken branch
   runs. */
GS_API gs_value *gs_conditional(gs_graph *g, gs_value *selector, int n_branches, gs_graph *const *branches,
                                gs_value *const *args);

/* ---------------------------------------------------------------------------------------------------------
   HLO text
   ------------------------------------------------------------------------------------------------------- */
/* Parses a module; returns its ENTRY computation (other computations become graphs of ctx too).
   On error returns the code, and gs_ctx_error_msg says "line L, column C: expected ...". */
GS_API gs_result gs_hlo_parse(gs_ctx *ctx, const char *text, size_t len, gs_graph **entry);
/* Prints the module rooted at entry (sub-computations and reducers first) in canonical form. The string
   lives in the ctx arena. Printing what was parsed gives the same text. */
GS_API const char *gs_hlo_print(gs_graph *entry);
/* on: printers of ctx's graphs keep gshard.h's extensions argmax/argmin and rng's shard form (full_shape=) as
   such; off (the default): they print as standard XLA HLO, argmax(x) as a variadic reduce of (x, iota) with a
   value-and-index reducer, rng's shard form as the rng of the whole shape, padded and dynamic-sliced to the
   shard. Both read back into the same program. */
GS_API void gs_hlo_print_extensions(gs_ctx *ctx, bool on);
GS_API const char *gs_hlo_module_name(const gs_graph *entry);
GS_API int64_t gs_hlo_num_partitions(const gs_graph *entry);   /* from the HloModule header; 1 if absent */
/* Reads text leniently (it need not parse) and writes a report into the ctx arena (*report): one line each
   for opcodes, element types, attributes, custom-call targets and sharding forms, with counts, marking with
   '!' what gshard.h does not understand. Returns 0 when everything is understood, 1 when something is not,
   2 when the text has no HLO instruction (or on an error, with the sticky error set). */
GS_API int gs_hlo_stats(gs_ctx *ctx, const char *text, size_t len, const char **report);

#include "gs_api_sharding.h"

/* ---------------------------------------------------------------------------------------------------------
   Reference interpreter (one device: partition-id is 0, collectives act on one partition).
   inputs[k] points at the data of parameter buffer k (storage format, row-major): parameters in number order,
   a tuple-shaped parameter taking one buffer per element (flattened). outputs[i] points at
   gs_shape_bytes(gs_graph_output_shape(g, i)) bytes owned by the caller. The graph is verified first (once,
   until it changes); a pending context error is returned as is. A manual region (to-manual/to-full) whose
   block is smaller than the array runs on several devices and is refused (GS_ERR_UNSUPPORTED naming the op):
   gs_partition_check runs it once per device.
   ------------------------------------------------------------------------------------------------------- */
GS_API gs_result gs_eval(gs_graph *g, const void *const *inputs, void *const *outputs);
/* gs_eval for a program that needs devices: each manual region runs once per device on that device's block,
   and collectives written with channel_id act across the devices (on a thread runtime of num_devices made and
   stopped here), as the reference of gs_partition_check does; outputs are the global arrays (a {manual} output is
   device 0's). A program without manual regions or written collectives is gs_eval. */
GS_API gs_result gs_eval_devices(gs_graph *g, int64_t num_devices, const void *const *inputs, void *const *outputs);

/* ---------------------------------------------------------------------------------------------------------
   Tensor files and inputs
   ------------------------------------------------------------------------------------------------------- */
/* Reads a NumPy .npy file (format 1.x/2.x/3.x, C order, little-endian; bool, integer, float and complex types).
   The file's dtype must match `want`, except for the types NumPy lacks: bf16, the 8/4-bit floats and 2/4-bit
   integers are read from a NumPy float file (rounded to nearest even), from the same-size unsigned type (as
   bits: see GS_NPY_RAW), or for s2/s4/u2/u4 from '|i1'/'|u1' holding values in range; pred also reads '|u1'.
   `want` = GS_DTYPE_INVALID takes the file's dtype. *data (storage format) is allocated with the context's allocator; free it with
   gs_free_data. Errors (GS_ERR_IO, GS_ERR_PARSE, GS_ERR_SHAPE) are also recorded in the context. */
GS_API gs_result gs_npy_read(gs_ctx *ctx, const char *path, gs_dtype want, gs_shape *shape, void **data);
/* Writes data (storage format) as .npy format 1.0. NumPy's types map one to one (pred '|b1', s64 '<i8', c64
   '<c8', ...); the others are written as the nearest wider NumPy type that holds every value exactly: bf16 and
   f8e8m0fnu as '<f4', the other 8-bit floats and f4e2m1fn as '<f2', s2/s4 as '|i1', u2/u4 as '|u1'. */
GS_API gs_result gs_npy_write(gs_ctx *ctx, const char *path, gs_shape shape, const void *data);
/* flags GS_NPY_RAW: the float types NumPy lacks are written as their bit patterns in a same-size unsigned type
   ('<u2' for bf16, '|u1' for the 8- and 4-bit floats; s2/s4 as their low bits in '|u1'). gs_npy_read takes
   such a file back as bits when asked for that type. */
#define GS_NPY_RAW 1u
GS_API gs_result gs_npy_write_ex(gs_ctx *ctx, const char *path, gs_shape shape, const void *data, unsigned flags);
/* Reads only a region of a .npy file: the file must hold an array of shape's dims, of a type gs_npy_read
   accepts for shape.dtype; data (caller-owned, storage format, gs_dtype_size(shape.dtype) bytes per element)
   receives the box of count[d] elements from offset[d] in every dim d, dense and row-major. Each row of the
   box is read from its place in the file (fseek), so a process holding a shard of an array never reads or
   holds the rest of it. The values are those gs_npy_read gives at the same places. Errors as gs_npy_read's,
   plus GS_ERR_SHAPE when the file's shape is not shape's and GS_ERR_INVALID_ARG for a region outside it. */
GS_API gs_result gs_npy_read_region(gs_ctx *ctx, const char *path, gs_shape shape, const int64_t *offset,
                                    const int64_t *count, void *data);
GS_API void gs_free_data(gs_ctx *ctx, void *data);   /* ctx: the context that allocated data */
/* The documented deterministic input generator (used by `gshard eval/run --seed N` for inputs not given):
   element i of parameter p is derived from splitmix64(seed, p, i): f32/bf16 uniform in [-1, 1) (24-bit
   resolution), s32/u32 uniform in [0, 8), pred 0/1; the other types as gs_npy.c documents (floats: that f32
   value rounded to the type; integers [0, 8), fewer for s2/u2). data is storage format, gs_shape_bytes(shape)
   bytes. */
GS_API void gs_fill_random(gs_shape shape, uint64_t seed, int64_t param_index, void *data);
/* The same values for a region only: data receives the elements gs_fill_random(shape, seed, param_index, .)
   writes at the box of count[d] elements from offset[d] in every dim d, dense and row-major (storage format),
   computing none of the others (element i of the whole array depends on (seed, param_index, i) alone).
   GS_ERR_INVALID_ARG (nothing written) for a region outside shape, a type without values (tuple, token) or
   NULL data with a non-empty region. */
GS_API gs_result gs_fill_random_region(gs_shape shape, uint64_t seed, int64_t param_index, const int64_t *offset,
                                       const int64_t *count, void *data);

#include "gs_api_cost.h"
#include "gs_api_model.h"
#include "gs_api_shapes.h"
#include "gs_api_runtime.h"
#include "gs_api_partition.h"
#include "gs_api_notation.h"

#ifdef __cplusplus
}
#endif

#endif /* GSHARD_H */
