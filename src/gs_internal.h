/* gs_internal.h - configuration defaults, system includes, stb_ds, and the private IR types.

   Private names are gs__ (functions, types) and GS__ (macros); a second part names the stage (docs/source.md
   has the map of src/ and how one op flows through it):
     gs__sb_ text buffer, gs__arena_ the context's arena ......................................... gs_base.c
     gs__cur_ cursor, gs__parser/gs__pinst/gs__pcomp/gs__perr/gs__pattr, gs__attr_ the HLO text parser,
     gs__pr_ its printer, gs__hlo_ HLO text tables other stages use ............................ gs_hlo_text.c
     gs__ta_ tile assignments, gs__sh_ the sharding algebra, gs__shp_ the sharding text parser,
     gs__fac_/gs__dfac_ factors of tile dims ................................................. gs_sharding.c
     gs__prop state, gs__fwd_/gs__bwd_ forward and backward rules, gs__dotlike_ dim maps ...... gs_propagate.c
     gs__sp_ the SPMD partitioner (gs__sp its state), gs__wp/gs__wres windowed-engine plans ... gs_spmd*.c
     gs__ip_ the reference interpreter, gs__ev_ stepped evaluations ............................ gs_interp.c
     gs__k_ interpreter kernels ......................................................... gs_interp_window.c
     gs__gemm_/gs__sgemm the f32 GEMM ........................................................... gs_gemm.c
     gs__npy_ .npy files ......................................................................... gs_npy.c
     gs__pool_, gs__barrier_, gs__mutex_, gs__cond_ the thread layer ............... gs_thread.h, gs_thread.c
     gs__rt_ the runtime, gs__dev a device, gs__cplan_ collective plans, gs__coll_ pieces ...... gs_runtime.c
     gs__chk_ the partitioned-vs-reference check ........................................... gs_spmd_check.c
     gs__cm_ the cost model ..................................................................... gs_cost.c
     gs__net_ the link between ranks (GSHARD_MPI) ................................................. gs_mpi.c */
#ifndef GS_INTERNAL_H
#define GS_INTERNAL_H

#include "gs_api.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <float.h>
#include <limits.h>
#include <errno.h>

/* ---- configuration defaults ---- */
#ifndef GSHARD_ASSERT
#  include <assert.h>
#  define GSHARD_ASSERT(c) assert(c)
#endif
#if defined(GSHARD_MALLOC) && defined(GSHARD_REALLOC) && defined(GSHARD_FREE)
   /* all three given */
#elif !defined(GSHARD_MALLOC) && !defined(GSHARD_REALLOC) && !defined(GSHARD_FREE)
#  define GSHARD_MALLOC(sz) malloc(sz)
#  define GSHARD_REALLOC(p, sz) realloc(p, sz)
#  define GSHARD_FREE(p) free(p)
#else
#  error "gshard.h: define all of GSHARD_MALLOC, GSHARD_REALLOC and GSHARD_FREE, or none of them"
#endif

/* Every internal function is static in gshard.h. A file of src/ compiled on its own (an editor's language server,
   make check-src) sees the functions of the other files only through their declarations, so there they get
   external linkage: the compiler then has nothing to say about a function used here and defined elsewhere. */
#if defined(GSHARD_IMPLEMENTATION_INCLUDED)
#  define GS__STATIC static
#else
#  define GS__STATIC
#endif
#if defined(__GNUC__) || defined(__clang__)
#  define GS__FN GS__STATIC __attribute__((unused))
#else
#  define GS__FN GS__STATIC
#endif

#define GS__ZERO(x) memset(&(x), 0, sizeof(x))
#define GS__MIN(a, b) ((a) < (b) ? (a) : (b))
#define GS__MAX(a, b) ((a) > (b) ? (a) : (b))
#define GS__COUNTOF(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define GS__MAX_VARIADIC 32   /* operands of a variadic reduce, reduce-window or scatter whose reducer mixes them */

/* ---- stb_ds (see the top of this file for how it is found) ---- */
/* gcc in strict ISO modes turns typeof off, and stb_ds's hash maps use it. */
#if defined(__GNUC__) && !defined(__clang__) && !defined(__cplusplus) && defined(__STRICT_ANSI__) && \
    !defined(typeof) && (!defined(__STDC_VERSION__) || __STDC_VERSION__ < 202311L)
#  define typeof __typeof__
#  define GS__OWN_TYPEOF
#endif
#if defined(GSHARD_STB_DS_PATH)
#  define GS__STBDS_HDR GSHARD_STB_DS_PATH
#elif defined(__has_include)
#  if __has_include("stb_ds.h")
#    define GS__STBDS_HDR "stb_ds.h"
#  elif __has_include(<stb_ds.h>)
#    define GS__STBDS_HDR <stb_ds.h>
#  elif __has_include(<stb/stb_ds.h>)
#    define GS__STBDS_HDR <stb/stb_ds.h>
#  else
#    error "gshard.h needs stb_ds.h: apt-get install libstb-dev, copy stb_ds.h beside gshard.h, or -DGSHARD_STB_DS_PATH='\"path/stb_ds.h\"'"
     /* stop here instead of printing pages of follow-on errors: a missing include is fatal (a name no
        __has_include probed: gcc does not report again a file that __has_include failed to find) */
#    define GS__STBDS_HDR <gshard_needs_stb_ds.h>
#  endif
#else
#  define GS__STBDS_HDR "stb_ds.h"
#endif
#if defined(INCLUDE_STB_DS_H) && defined(STB_DS_IMPLEMENTATION)
   /* stb_ds.h was already included with its implementation in this TU: include nothing */
#else
#  if !defined(GSHARD_NO_STB_DS_IMPLEMENTATION) && !defined(STB_DS_IMPLEMENTATION)
#    define STB_DS_IMPLEMENTATION
#    define GS__OWN_STBDS_IMPL
#  endif
#  include GS__STBDS_HDR
#  ifdef GS__OWN_STBDS_IMPL
#    undef STB_DS_IMPLEMENTATION
#  endif
#endif

/* ---- the arena ---- */
typedef struct gs__chunk {
    struct gs__chunk *next;
    size_t size, used;
    /* data follows, 16-byte aligned */
} gs__chunk;

#define GS__CHUNK_MIN ((size_t)64 * 1024)
#define GS__ERRMSG_CAP 1024

typedef struct gs__name_entry { char *key; gs_value *value; } gs__name_entry;

struct gs_ctx {
    gs_allocator allocator;
    gs_logger logger;
    gs__chunk *chunks;
    gs_result err;
    char errmsg[GS__ERRMSG_CAP];
    gs_graph **graphs;        /* stb_ds array: every graph of the ctx, in creation order */
    int64_t next_auto_name;   /* counter for generated names ("add.7") */
    const char *next_name;    /* if set, the next value made takes this name (the HLO parser's names), so
                                 builder errors name the instruction as the user wrote it */
    struct gs__sh_entry *sh_intern;   /* stb_ds string map: interned shardings (gs_sharding.c) */
    const gs_mesh *notation_mesh;     /* set: printers write shardings as {X, _} over it (gs_notation.c) */
    bool hlo_extensions;      /* printers keep argmax/argmin and rng's shard form (gs_hlo_print_extensions) */
};

struct gs_graph {
    gs_ctx *ctx;
    const char *name;
    int id;
    gs_value **values;        /* stb_ds array, topological order */
    gs_value **params;        /* stb_ds array indexed by parameter number (NULL holes until filled) */
    gs__name_entry *names;    /* stb_ds string map name -> value (unique within the graph) */
    gs_value *root;
    int verified_n;           /* gs__verify_once: value count and root when last verified */
    gs_value *verified_root;
    /* module header (meaningful on an entry graph) */
    const char *module_name;
    int64_t num_partitions;
    const gs_mesh *mesh;      /* mesh={...} of the module header, or NULL */
    char **conflicts;         /* stb_ds: messages from the last gs_propagate (arena strings) */
    struct gs__spmd_info *spmd;   /* set on a graph made by gs_partition (gs_spmd.c) */
};

/* ---- shardings (gs_sharding.c) ----
   A tile assignment: an N-d array of device ids, an explicit row-major list or the iota form
   arange(total).reshape(idims).transpose(iperm).reshape(dims). */
typedef struct gs__ta {
    int n;
    int64_t dims[GS_MAX_IOTA_RANK];
    int64_t total;
    const int64_t *list;      /* explicit ids, or NULL for the iota form */
    const int64_t *sorted;    /* list only: (id, position) pairs sorted by id */
    int ir;
    int64_t idims[GS_MAX_IOTA_RANK];
    int iperm[GS_MAX_IOTA_RANK];
} gs__ta;

struct gs_sharding {
    gs_sharding_kind kind;
    int64_t device;           /* MAXIMAL */
    int rank;                 /* TILED: data dims; ta.n = rank + n_sub */
    int n_sub;
    gs_subgroup sub[3];       /* MANUAL, UNREDUCED, REPLICATED in that order, each at most once */
    gs__ta ta;
    int n_elems;              /* TUPLE */
    const gs_sharding **elems;
    int group_kind;           /* 0, or XLA's shard_group: 1 "shard_as N", 2 "shard_like N" */
    int64_t group_id;
    bool cse_prevention;      /* metadata={op_name="_sharding_propagation_cse_prevention"}: a sharding an earlier
                                 propagation pinned only to keep CSE apart; propagation drops it as XLA's does */
};

/* Shardings are interned per context (equal non-tuple shardings share one object): propagation computes the
   same candidates over and over, and this keeps its memory proportional to the distinct shardings. */
typedef struct gs__sh_entry { char *key; const gs_sharding *value; } gs__sh_entry;   /* key: canonical text */

struct gs_mesh {
    int n_axes;
    const char *names[GS_MAX_IOTA_RANK];
    int64_t sizes[GS_MAX_IOTA_RANK];
    int64_t total;
    gs__ta ta;                /* the device array */
};

struct gs_value {
    gs_op op;
    int id;                   /* index in graph->values */
    const char *name;
    gs_graph *graph;
    gs_shape shape;           /* dtype GS_TUPLE for tuples */
    int n_tuple;
    gs_shape *tuple;          /* n_tuple element shapes: the leaves (arrays) of the tuple, flattened in order */
    int n_tree;               /* a nested tuple's structure, preorder: a tuple node holds its child count (>= 0),  */
    const int *tree;          /* a leaf -1; the root is the value itself. NULL for a flat tuple (every element an array) */
    int n_operands;
    gs_value **operands;
    const gs_sharding *sharding;  /* NULL: none (yet) */
    bool sharding_user;       /* a user annotation: propagation keeps it (except open_dims) */
    uint32_t open_dims;       /* dims of a user sharding that propagation may refine */
    const char *open_text;    /* a named-mesh sharding with open dims ({?}) as written: printed back while the
                                 value's sharding is still open_sh (the one read from it) */
    const gs_sharding *open_sh;
    gs_origin origin;         /* where the sharding came from */
    int n_users;              /* propagation's user count (capped at 2) and the first user */
    gs_value *first_user;
    bool auto_name;           /* name generated by the builder ("add.7"), not given by the user */
    int group_kind;           /* a member of a shard group (from a "shard_as N"/"shard_like N" annotation): 1 as, 2 like */
    int64_t group_id;
    int barrier;              /* a COPY read from a propagation barrier: 1 ShardBarrierFrom (no sharding flows from
                                 its operand into it), 2 ShardBarrierTo (none flows from it back into its operand) */

    /* ---- attributes; which ones are meaningful depends on op ---- */
    int64_t index;            /* PARAMETER number, GET_TUPLE_ELEMENT index */
    int64_t dim;              /* IOTA, CONCATENATE, ALL_GATHER, REDUCE_SCATTER, ARGMAX/ARGMIN, CUM*, SORT dim;
                                 TOPK: k */
    int n_dims;
    int64_t *dims;            /* BROADCAST (operand dim -> output dim), TRANSPOSE (perm), REDUCE, REVERSE */
    int64_t *start, *limit, *stride;  /* SLICE */
    int64_t *sizes;           /* DYNAMIC_SLICE sizes */
    int64_t *lo, *hi, *interior;      /* PAD */
    gs_reduce_kind reduce;    /* REDUCE, REDUCE_WINDOW, ALL_REDUCE, REDUCE_SCATTER, SCATTER, CUM* (implied) */
    gs_graph *reducer;        /* reduce == GS_REDUCE_CUSTOM: the reducer computation (two scalars -> one; 2 red_n
                                 scalars -> a tuple of red_n when red_n > 0) */
    int red_n, red_k;         /* REDUCE, REDUCE_WINDOW, SCATTER with a variadic reducer (red_n >= 2): the value is
                                 result red_k of the variadic op over red_n operands, whose operands follow the op's
                                 own (gs__red_base of them): the n inputs, then the n inits (scatter: n updates) */
    gs_cmp cmp;               /* COMPARE */
    gs_cmp_type cmp_type;     /* COMPARE; stored resolved (never DEFAULT) */
    bool flag;                /* SORT descending, TOPK largest, CUM* reverse */
    void *data;               /* CONSTANT: storage-format bytes (1 element when splat); NULL when the HLO text
                                 elided the literal ({...}) */
    bool splat;
    uint64_t seed;            /* RNG */
    const gs_shape *rng_full; /* RNG shard form: the full shape (operands lo, hi, one s32 offset per dim);
                                 NULL for the plain form */
    int64_t split_dim, concat_dim;    /* ALL_TO_ALL */
    int rp_exp, rp_mant;      /* REDUCE_PRECISION: exponent and mantissa bits */
    int rng_alg;              /* RNG_BIT_GENERATOR: gs_rng_algorithm, and the bits' shape */
    const gs_shape *rbg_shape;
    float bn_epsilon;         /* BATCH_NORM_*: epsilon (feature_index in dim) */
    uint8_t la_lower, la_left, la_unit, la_trans;   /* CHOLESKY (lower), TRIANGULAR_SOLVE */
    int fft_type, fft_n;      /* FFT: gs_fft_type and the lengths of the last fft_n dims */
    int64_t fft_len[3];
    gs_dot_dims *dot;
    gs_ragged_dot_dims *ragged;   /* RAGGED_DOT */
    gs_conv_config *conv;
    gs_window_dim *window;    /* REDUCE_WINDOW: rank entries */
    gs_gather_dims *gather;
    gs_scatter_dims *scatter;
    gs_collective_desc coll;  /* collectives; coll.groups.ids lives in the arena */
    int64_t n_pairs;
    int64_t *pairs;           /* COLLECTIVE_PERMUTE, 2 * n_pairs */
    gs_graph *cond, *body;    /* WHILE; SORT: cond is a comparator computation (NULL: ordered by operand 0) */
    int n_branches;           /* CONDITIONAL: its branches (operand k + 1 is branch k's argument) */
    gs_graph **branches;
    const char *text_attrs;   /* attributes the HLO text gave that change nothing (", metadata={...}"), printed back;
                                 OPAQUE: every attribute but sharding, as written */
    const gs_sharding *kept_sharding; /* OPAQUE: a sharding attribute that does not fit the op's shape (outfeed's:
                                 one element per data leaf, then the token's), printed as written from text_attrs */
    const char *opaque;       /* OPAQUE: the opcode as written ("custom-call", "infeed", "after-all", ...) */
    const char *target;       /* OPAQUE custom-call: its custom_call_target (else NULL) */
    gs_shape opaque_shape;    /* OPAQUE: the declared shape (dtype GS_TUPLE: opaque_n elements in opaque_tuple) */
    int opaque_n;
    const gs_shape *opaque_tuple;
    int opaque_ntree;         /* OPAQUE: a nested tuple's structure as written (see tree), or 0 */
    const int *opaque_tree;
};

/* ---- what gs_partition records on the SPMD program (gs_spmd.c); arena memory ---- */
typedef struct gs__spmd_info {
    gs_graph *src;            /* the source graph */
    int n_src;                /* its value count when it was partitioned */
    gs_value **map;           /* n_src: the per-device value of each source value of the entry graph, or NULL */
    const gs_sharding **sh;   /* n_src: the sharding of that per-device value */
    const char **explain;     /* n_src: the strategy chosen, or NULL */
    int n_warn;
    const char **warn;
    int n_out;
    const gs_sharding **out_sh;
    int n_in;
    const gs_sharding **in_sh;    /* per flattened parameter buffer */
    int64_t num_devices;
    int n_spmd;               /* the SPMD entry graph's value count */
    int *group;               /* n_spmd: the source value whose partitioning made each value, or -1 */
    const char **why;         /* n_spmd: why a collective is there (--explain), or NULL */
    const gs_chip *chip;      /* the chip the explanations' times are for */
} gs__spmd_info;
/* gs_partition, or (reference) the check's reference program for a graph with manual regions: g's shardings
   as propagation left them (not run again), every value outside a manual region replicated, each manual
   region run on every device with that device's block and its blocks gathered where it ends (gs_spmd.c) */
GS__FN gs_result gs__partition_ex(gs_graph *g, const gs_partition_desc *desc, bool reference, gs_graph **out);

/* ---- base (gs_base.c) ---- */
GS__FN gs_result gs__err(gs_ctx *ctx, gs_result code, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
GS__FN gs_result gs__err_prefix(gs_ctx *ctx, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
GS__FN void gs__log(gs_ctx *ctx, gs_log_level level, gs_result code, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* Checked 64-bit arithmetic: every size, element count, product and offset computed from input goes through
   these, so an overflow is an error that names it instead of a wrapped value. They return false (leaving *out
   unchanged) when the exact result does not fit in int64_t. gs__prod64 multiplies d[0..n) (each >= 0) and
   returns -1 when the product does not fit. */
GS__FN bool gs__mul64(int64_t a, int64_t b, int64_t *out);
GS__FN bool gs__add64(int64_t a, int64_t b, int64_t *out);
GS__FN int64_t gs__prod64(int n, const int64_t *d);
GS__FN void *gs__arena_alloc(gs_ctx *ctx, size_t size);            /* zeroed; NULL + error on OOM */
GS__FN void *gs__arena_dup(gs_ctx *ctx, const void *p, size_t size);
GS__FN char *gs__arena_strdup(gs_ctx *ctx, const char *s);
GS__FN char *gs__arena_printf(gs_ctx *ctx, const char *fmt, ...);
GS__FN void *gs__malloc(gs_ctx *ctx, size_t size);                 /* heap via the allocator hook; NULL + error */
GS__FN void gs__free(gs_ctx *ctx, void *p);

/* ---- dtypes (gs_base.c) ---- */
enum { GS__DC_NONE = 0, GS__DC_PRED, GS__DC_SINT, GS__DC_UINT, GS__DC_FLOAT, GS__DC_COMPLEX, GS__DC_TOKEN };
/* float encodings: IEEE-like (inf, NaN with exponent all ones), fn (no inf; NaN is all ones), fnuz (no inf, no
   -0; NaN is the -0 pattern), mx (no inf, no NaN), e8m0 (exponent only, unsigned) */
enum { GS__FK_IEEE = 1, GS__FK_FN, GS__FK_FNUZ, GS__FK_MX, GS__FK_E8M0 };
typedef struct gs__dtinfo {
    const char *name;
    uint8_t size, csize, cls, bits;   /* storage bytes, compute bytes, GS__DC_*, value bits */
    uint8_t ebits, mbits;             /* floats: exponent and mantissa bits */
    int16_t bias;
    uint8_t fkind;                    /* floats: GS__FK_* */
} gs__dtinfo;
GS__FN const gs__dtinfo *gs__dt(gs_dtype t);
GS__FN gs_dtype gs__dtype_from_text(const char *s, size_t n);
GS__FN bool gs__is_float(gs_dtype t);      /* a real floating-point type, f64 included */
GS__FN bool gs__is_fc(gs_dtype t);         /* a real float computed as float (all but f64) */
GS__FN bool gs__is_int(gs_dtype t);        /* a signed or unsigned integer type of any width */
GS__FN bool gs__is_signed(gs_dtype t);
GS__FN bool gs__is_complex(gs_dtype t);
GS__FN bool gs__is_numeric(gs_dtype t);
GS__FN bool gs__is_array_dtype(gs_dtype t);
GS__FN double gs__fp_max(gs_dtype t);       /* largest finite value */
GS__FN uint32_t gs__fp_encode(gs_dtype t, double x);
GS__FN double gs__fp_decode(gs_dtype t, uint32_t bits);
GS__FN float gs__fp_round(gs_dtype t, double x);
GS__FN void gs__round_dt(gs_dtype t, float *x, int64_t n);
GS__FN uint64_t gs__int_wrap(gs_dtype t, uint64_t v);
GS__FN uint64_t gs__ld_i(gs_dtype t, const void *p, int64_t i);
GS__FN void gs__st_i(gs_dtype t, void *p, int64_t i, uint64_t v);
GS__FN double gs__ld_f(gs_dtype t, const void *p, int64_t i);
GS__FN void gs__st_f(gs_dtype t, void *p, int64_t i, double x);
GS__FN uint64_t gs__f2i(gs_dtype t, double x);
GS__FN void gs__set_elem(gs_dtype t, void *p, int64_t i, double x);
GS__FN bool gs__fmt_differs(gs_dtype t);   /* storage format != compute format */
GS__FN void gs__to_compute(gs_dtype t, void *dst, const void *src, int64_t n);
GS__FN void gs__to_storage(gs_dtype t, void *dst, const void *src, int64_t n);
GS__FN size_t gs__compute_size(gs_dtype t);   /* bytes per element in compute format */
GS__FN void gs__round_bf16(float *x, int64_t n);

/* growable text buffer on the heap (allocator hook); used by printers */
typedef struct gs__sb {
    gs_ctx *ctx;
    char *buf;
    size_t len, cap;
    bool oom;
} gs__sb;
GS__FN void gs__sb_init(gs__sb *sb, gs_ctx *ctx);
GS__FN void gs__sb_put(gs__sb *sb, const char *s, size_t n);
GS__FN void gs__sb_puts(gs__sb *sb, const char *s);
GS__FN void gs__sb_printf(gs__sb *sb, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
GS__FN void gs__sb_free(gs__sb *sb);
GS__FN char *gs__sb_finish(gs__sb *sb, const char *who);

/* ---- shared IR helpers (gs_ir.c) ---- */
GS__FN gs_value *gs__value_new(gs_graph *g, gs_op op, int n_operands, gs_value *const *operands);
GS__FN int64_t gs__numel(const gs_shape *s);
/* Tuple structure (nested tuples keep their leaves flat in v->tuple, and the shape in v->tree): the number of
   top-level elements, and top-level element i's first leaf and leaf count (*node: its preorder position in
   v->tree, or -1 when the tuple is flat). */
GS__FN int gs__tuple_arity(const gs_value *v);
/* the op's own operand count before a variadic reducer's operands (reduce, reduce-window: 2; scatter: 3) */
GS__FN int gs__red_base(const gs_value *v);
GS__FN bool gs__tuple_child(const gs_value *v, int64_t i, int *first_leaf, int *n_leaves, int *node);
/* the same element type and shape, tuples compared leaf by leaf and by structure */
GS__FN bool gs__vshape_equal(const gs_value *a, const gs_value *b);
/* The computations v runs (while: condition then body; conditional: its branches in order), and the k-th */
GS__FN int gs__n_subgraphs(const gs_value *v);
GS__FN gs_graph *gs__subgraph(const gs_value *v, int k);
/* gs_graph_verify unless the graph is unchanged since it last passed */
GS__FN gs_result gs__verify_once(gs_graph *g);
/* row-major strides in elements */
GS__FN void gs__strides(const gs_shape *s, int64_t *strides);
/* Expands replica groups for num_partitions partitions into n_groups*group_size ids (heap: the caller frees
   *ids with gs__free).
   Returns GS_OK, or an error describing the problem (ids out of range or repeated). */
GS__FN gs_result gs__groups_expand(gs_ctx *ctx, const gs_replica_groups *rg, int64_t num_partitions,
                                   int64_t *n_groups, int64_t *group_size, const int64_t **ids);

GS__FN void gs__sh_print(gs__sb *sb, const gs_sharding *s);
/* gs_sharding_validate, with the rule that a tiled sharding names every device only when cover (gs_sharding.c) */
GS__FN gs_result gs__sharding_validate(gs_ctx *ctx, const gs_sharding *s, gs_shape shape, int64_t num_devices, bool cover);
/* a mesh sharding from per-dim axis lists (gs_sharding.c; who names the caller in errors) */
GS__FN const gs_sharding *gs__mesh_build(gs_ctx *ctx, const gs_mesh *m, int rank, const int *n_of,
                                         int (*axes)[GS_MAX_IOTA_RANK], const char *who);
/* the notation in HLO text (gs_notation.c): v's sharding s as {X, _} over ctx's notation mesh when one is set and
   expresses it (else XLA's text); ", mesh={..}" for the module header when set; whether a sharding={...} text
   is a mesh spec; and the sharding such a text gives v over mesh m (NULL m: an error naming the missing header) */
GS__FN void gs__nt_print_sharding(gs__sb *sb, gs_ctx *ctx, const gs_sharding *s, const gs_value *v);
GS__FN void gs__nt_print_header(gs__sb *sb, gs_ctx *ctx);
GS__FN const char *gs__nt_sharding_text(gs_ctx *ctx, const gs_sharding *s, const gs_value *v);   /* ctx arena */
GS__FN bool gs__nt_is_spec(const char *text);
GS__FN const gs_sharding *gs__nt_value_sharding(gs_ctx *ctx, const gs_mesh *m, const char *text, const gs_value *v,
                                                uint32_t *open);
/* HLO printing with a hook that writes comment lines above each instruction. */
typedef void (*gs__pr_comment_fn)(gs__sb *sb, const gs_value *v, void *user);
GS__FN const char *gs__hlo_print_ex(gs_graph *entry, gs__pr_comment_fn comment, void *user);
/* the custom-calls carrying a sharding as text (gs_sharding.c) */
GS__FN gs_value *gs__custom(gs_graph *g, gs_op op, gs_value *x, const gs_shape *shape, const char *sharding);
/* rng-bit-generator whose result is the bits alone (v->flag), as XLA's text also allows */
GS__FN gs_value *gs__rng_bits_only(gs_graph *g, gs_value *state, gs_shape shape, gs_rng_algorithm algorithm);
GS__FN gs_value *gs__finish(gs_value *v);                 /* infers v's shape, appends it to its graph; NULL on error */
GS__FN gs_value *gs__constant_elided(gs_graph *g, gs_shape shape);   /* a constant of unknown value (data NULL) */
/* a called scalar computation (comparator, reducer): n_params rank-0 parameters of types pdt, a rank-0 root of
   rdt[0] (n_root > 1: a flat tuple of rank-0 leaves of types rdt), no loop, collective or random op */
GS__FN bool gs__check_scalar_comp(gs_ctx *ctx, const char *who, const gs_graph *c, int n_params, const gs_dtype *pdt,
                                  int n_root, const gs_dtype *rdt);
GS__FN bool gs__is_float(gs_dtype t);
GS__FN bool gs__is_int(gs_dtype t);
GS__FN const char *gs__shape_str(const gs_shape *s, char *buf, size_t cap);   /* "f32[4,8]" into buf */
/* a ragged dot's mode (XLA's three), its ragged lhs dim and that dim's place in the batch or contracting list, and
   the lhs dims group_sizes' prefix dims stand for, in order (gs_ragged_dot_dims) */
enum { GS__RD_NONCONTRACT, GS__RD_CONTRACT, GS__RD_BATCH };
typedef struct gs__rdinfo { int mode, ragged, pos, n_pre; int64_t pre[GS_MAX_RANK]; } gs__rdinfo;
GS__FN int gs__ragged_info(const gs_ragged_dot_dims *d, int lhs_rank, gs__rdinfo *I);   /* the mode, -1: invalid */
/* one window dim's output size (0 when the window does not fit) */
GS__FN int64_t gs__window_out(const gs_window_dim *w, int64_t in);
GS__FN gs_op gs__hlo_reduce_op(gs_reduce_kind k);         /* the binary op of reduction k (gs_hlo_text.c) */
/* A convolution read as a dot (XLA's dot-as-convolution rule), per spatial dim i of convolution v: a batch dim
   (lhs, rhs and output dims index one element each: window = input size, lhs_dilate = input size, stride or
   rhs_dilate = size - 1; or its padded, reversed form), contracting (one window over the whole input), lhs-free
   (a size-1 window), rhs-free (a size-1 input padded by kernel size - 1 each side, kernel reversed) or a real
   convolution dim. Returns the count of real convolution dims. */
typedef enum gs__cdk { GS__CDK_CONV = 0, GS__CDK_BATCH, GS__CDK_CONTRACT, GS__CDK_LHS_FREE, GS__CDK_RHS_FREE } gs__cdk;
GS__FN int gs__conv_dot_kinds(const gs_value *v, gs__cdk *kind);
/* the window of spatial dim i of kind k rewritten for an lhs extent n and a kernel extent m (the local blocks of a
   convolution partitioned as a dot); a real convolution dim or an lhs-free one keeps w */
GS__FN gs_window_dim gs__conv_dot_window(const gs_window_dim *w, bool *rev, gs__cdk k, int64_t n, int64_t m);

/* ---- tile arrays and the sharding algebra (gs_sharding.c), shared by propagation and the partitioner ---- */
#define GS__DEST_REP (-1)       /* a dim map's "this dim's tiles go to replication" */
#define GS__DEST_MANUAL (-2)    /* a dim map's "this dim's tiles go to the manual group" */
GS__FN int64_t gs__gcd(int64_t a, int64_t b);
GS__FN void gs__unravel(int n, const int64_t *dims, int64_t L, int64_t *idx);   /* row-major position -> index */
GS__FN int64_t gs__ravel(int n, const int64_t *dims, const int64_t *idx);       /* index -> row-major position */
GS__FN int64_t gs__ta_at(const gs__ta *t, int64_t L);      /* the device at row-major position L */
GS__FN int64_t gs__ta_pos(const gs__ta *t, int64_t d);     /* the row-major position of device d, or -1 */
/* the tile array transposed: new dim k is old dim perm[k] */
GS__FN gs_result gs__ta_transpose(gs_ctx *ctx, const gs__ta *t, const int *perm, gs__ta *out);
GS__FN int64_t gs__sh_tiles(const gs_sharding *s);         /* tiles, counting the manual group */
GS__FN int64_t gs__shard_size(int64_t S, int64_t k);       /* XLA's tile math: ceil(S / k) */
/* a tiled sharding from a valid tile array whose last n_sub dims are subgroups of the given types */
GS__FN const gs_sharding *gs__sh_from_ta(gs_ctx *ctx, int rank, int n_sub, const gs_subgroup *sub, const gs__ta *ta_in);
/* data dim d's tiles moved to dest_of_dim[d] (a dim of the rank-out_rank result, or GS__DEST_REP) */
GS__FN const gs_sharding *gs__sh_map(gs_ctx *ctx, const gs_sharding *s, int out_rank, const int *dest_of_dim);
/* the same with the manual group's tiles sent to man_dest (GS__DEST_MANUAL, GS__DEST_REP or a data dim) */
GS__FN const gs_sharding *gs__sh_map_man(gs_ctx *ctx, const gs_sharding *s, int out_rank, const int *dest_of_dim,
                                         int man_dest);
/* a sharding that refines both a and b, or NULL (no error) when there is none */
GS__FN const gs_sharding *gs__sh_merge(gs_ctx *ctx, const gs_sharding *a, const gs_sharding *b);
GS__FN bool gs__sh_more_specific(const gs_sharding *a, const gs_sharding *b);
GS__FN const gs_sharding *gs__sh_replicate_dims(gs_ctx *ctx, const gs_sharding *s, uint32_t mask);
/* unreduced shardings: s with its unreduced part replicated (the summed value's sharding); whether s (or an element)
   has one; device d's coordinate along its unreduced devices (0 when none, -1 when s does not name d) */
/* gs_sharding_parse, and the open dims ({?}) of a named-mesh sharding of an array in *open (may be NULL) */
GS__FN const gs_sharding *gs__sharding_parse_open(gs_ctx *ctx, const char *text, uint32_t *open);
GS__FN const gs_sharding *gs__sh_reduced(gs_ctx *ctx, const gs_sharding *s);
GS__FN bool gs__sh_has_unreduced(const gs_sharding *s);
GS__FN int64_t gs__sh_unreduced_coord(const gs_sharding *s, int64_t d);
GS__FN bool gs__sh_same_sum(const gs_sharding *s, int64_t d, int64_t e);   /* d, e: summands of one part */
GS__FN const gs_sharding *gs__sh_reshape(gs_ctx *ctx, const gs_sharding *s, const gs_shape *src, const gs_shape *dst);
GS__FN const gs_sharding *gs__sh_reverse(gs_ctx *ctx, const gs_sharding *s, uint32_t mask);
GS__FN bool gs__sh_subtiling_or_equal(gs_ctx *ctx, const gs_shape *shape, const gs_sharding *sub, const gs_sharding *s);
/* dim masks and the gather/scatter dim maps */
GS__FN uint32_t gs__mask_of(int n, const int64_t *dims);
GS__FN uint32_t gs__size_diff_mask(const gs_shape *x, const gs_shape *y);   /* dims of x that differ in size from y */
GS__FN void gs__gather_index_dest(const gs_value *v, int *out);
GS__FN void gs__gather_operand_dest(const gs_value *v, bool batching, int *out);
GS__FN void gs__scatter_update_dest(const gs_value *v, int *out);
GS__FN void gs__scatter_index_dest(const gs_value *v, int *out);
GS__FN int gs__iota_dim(const gs_value *x);
GS__FN const gs_sharding *gs__sh_ungrouped(gs_ctx *ctx, const gs_sharding *s);
GS__FN int gs__gs_parallel(const gs_value *v, int *op, int *ix);
GS__FN void gs__dest_invert(int n, const int *dest, int out_rank, int *inv);

/* ---- interpreter (gs_interp.c); the runtime reuses it with its own collective hook ----
   Buffers in compute format (gs__compute_size): real floats other than f64 as float (values already rounded
   to their type), f64 as double, integers as their C type (2/4-bit ones in a byte), pred as uint8_t, complex
   as pairs. */
typedef struct gs__buf {
    gs_shape shape;           /* compute dtype is implied by shape.dtype */
    void *data;
} gs__buf;
typedef struct gs__exec gs__exec;
struct gs__exec {
    gs_ctx *ctx;
    int64_t partition_id, num_partitions;
    /* Collectives. NULL: single-partition semantics (groups must only contain partition 0).
       Otherwise called for every collective instruction with its operand; it fills out (already allocated,
       shape v->shape) and returns GS_OK, or returns GS__PENDING to have a stepped evaluation (gs__ev_step)
       pause there until out has been filled. */
    gs_result (*collective)(gs__exec *ex, const gs_value *v, const gs__buf *in, gs__buf *out);
    void *user;
    /* Accounting, updated by the evaluator: storage bytes (gs_shape_bytes, bf16 = 2) of the value buffers it
       allocated and has not freed yet, and their high-water mark. Parameter buffers are the caller's and are
       not counted; results handed to the caller stay counted; kernel scratch space is not counted. */
    int64_t live_bytes, peak_bytes;
    /* Optional observer (the partitioned-vs-reference check): called when an instruction of the evaluated graph
       itself (not of a loop body) is complete, once per buffer of its value (j: tuple element, 0 for an array);
       the buffer is only valid during the call. An error it returns ends the evaluation. */
    gs_result (*observe)(gs__exec *ex, const gs_value *v, int j, const gs__buf *buf);
    void *observe_user;
};
/* Installs fn as the observer of every device's evaluation in the runs of rt that follow (NULL removes it). In
   threaded mode it is called from the device threads, each with its own ex (ex->partition_id is the device). */
GS__FN void gs__runtime_observe(gs_runtime *rt, gs_result (*fn)(gs__exec *ex, const gs_value *v, int j, const gs__buf *buf),
                                void *user);
/* ragged-all-to-all (gs_interp.c; the runtime uses them too). The hook above gets its six operands as in[0..6). */
typedef struct gs__ra2a_geom {
    int64_t K, N, M, row_bytes;   /* updates, input rows, output rows, bytes of a row (compute format) */
} gs__ra2a_geom;
typedef struct gs__ra2a_src {
    const char *in;               /* a member's input rows */
    const int64_t *meta;          /* its input_offsets, send_sizes, output_offsets, recv_sizes: K each */
} gs__ra2a_src;
GS__FN void gs__ra2a_geom_of(const gs_value *v, gs__ra2a_geom *g);
GS__FN void gs__ra2a_meta(const gs__buf *ops, int64_t K, int64_t *meta);
GS__FN bool gs__ra2a_receive(const gs_value *v, const gs__ra2a_geom *g, int64_t G, int64_t r,
                             gs__ra2a_src (*src)(const void *at, int64_t j), const void *at, const int64_t *ids, char *out,
                             char *msg, size_t cap);
/* A collective hook's answer: "the result will be filled in before the evaluation resumes". */
#define GS__PENDING ((gs_result)1)
/* Evaluates g: params[i] are parameter i's buffers (compute format, not modified); results receives
   gs_graph_num_outputs(g) buffers allocated with gs__malloc that the caller frees with gs__free. */
GS__FN gs_result gs__eval_graph(gs__exec *ex, gs_graph *g, const gs__buf *params, gs__buf *results);

/* The same evaluation, one step at a time (gs__eval_graph is a loop over gs__ev_step). A step runs one
   instruction of the innermost graph being evaluated, or one transition of a while loop. The state of a
   paused or unfinished evaluation lives in the gs__ev, so many evaluations (one per device) can advance in
   turn in one thread. */
typedef struct gs__ev gs__ev;
enum { GS__EV_RAN = 0, GS__EV_DONE = 1, GS__EV_PAUSED = 2 };
#define GS__EV_MAX_DEPTH 129  /* frames: the entry graph and up to 128 nested loops (HLO text allows 64) */
GS__FN gs_result gs__ev_new(gs__exec *ex, gs_graph *g, const gs__buf *params, gs__buf *results, gs__ev **out);
/* *status: GS__EV_RAN (more to do), GS__EV_DONE (results filled) or GS__EV_PAUSED (the collective hook
   answered GS__PENDING: fill its out buffer, then step again to go on). An error ends the evaluation. */
GS__FN gs_result gs__ev_step(gs__ev *ev, int *status);
/* Where the evaluation is: the while loops it is inside, outermost first (up to cap of them; returns how
   many there are), each with the number of body iterations completed so far. */
GS__FN int gs__ev_loops(const gs__ev *ev, const gs_value **whiles, int64_t *iters, int cap);
/* The instruction the evaluation is at (the paused collective when paused), or NULL when done. */
GS__FN const gs_value *gs__ev_current(const gs__ev *ev);
GS__FN void gs__ev_free(gs__ev *ev);   /* frees everything the evaluation still holds */

/* A reducer computation (gs_value_set_reducer) set up for repeated calls on one thread (gs_interp.c):
   d[di] = reducer(a[ai], b[bi]) on compute-format elements of type t (d may be a or b). The runtime folds its
   custom all-reduce and reduce-scatter with one per worker, made from a device's gs__exec. */
typedef struct gs__ip_fn gs__ip_fn;
GS__FN gs_result gs__reducer_new(gs__exec *ex, gs_graph *reducer, gs__ip_fn **out);
GS__FN void gs__reducer_free(gs_ctx *ctx, gs__ip_fn *f);
GS__FN gs_result gs__reducer_apply(gs__ip_fn *f, gs_dtype t, void *d, int64_t di, const void *a, int64_t ai,
                                   const void *b, int64_t bi);
/* y[iy] = reducer(y[iy], a[ia]) */
GS__FN gs_result gs__reducer_fold(gs__ip_fn *f, gs_dtype t, void *y, int64_t iy, const void *a, int64_t ia);

/* Windowed kernels (gs_interp_window.c), called by the evaluator with `out` already allocated (v->shape).
   in/kernel/init are compute-format buffers of v's operands. */
GS__FN gs_result gs__k_convolution(gs_ctx *ctx, const gs_value *v, const gs__buf *in, const gs__buf *kernel,
                                   gs__buf *out);
GS__FN gs_result gs__k_reduce_window(gs_ctx *ctx, const gs_value *v, const gs__buf *in, const gs__buf *init,
                                     gs__buf *out);
/* Batched matmul used by dot and convolution: C[b] (+)= A[b] x B[b] on compute-format f32 data. */
GS__FN gs_result gs__k_matmul(gs_ctx *ctx, int64_t batch, int64_t M, int64_t N, int64_t K, const float *A,
                              const float *B, float *C, int accumulate);

/* Shared with the runtime's collectives and copies: the combiners of a reduction in compute format, and the
   strided box copy with its two-offset odometer step (gs_interp.c). */
GS__FN float gs__ip_comb_f(gs_reduce_kind k, float a, float b, bool bf);
GS__FN int32_t gs__ip_comb_s(gs_reduce_kind k, int32_t a, int32_t b);
GS__FN uint32_t gs__ip_comb_u(gs_reduce_kind k, uint32_t a, uint32_t b);
GS__FN uint8_t gs__ip_comb_p(gs_reduce_kind k, uint8_t a, uint8_t b);
GS__FN void gs__ip_gcomb(gs_dtype t, gs_reduce_kind k, void *y, int64_t iy, const void *a, int64_t ia);
GS__FN void gs__ip_stc(gs_dtype t, void *p, int64_t i, double re, double im);   /* store a complex element */
GS__FN void gs__ip_xcopy(size_t es, int rank, const int64_t *dims, void *dst, int64_t doff, const int64_t *dstr,
                         const void *src, int64_t soff, const int64_t *sstr);
GS__FN bool gs__ip_xstep(int n, const int64_t *dims, int64_t *idx, int64_t *doff, const int64_t *dstr, int64_t *soff,
                         const int64_t *sstr);

/* ---- gemm kernel (gs_gemm.c) ---- */
GS__FN size_t gs__sgemm_work_floats(int64_t M, int64_t N, int64_t K);
GS__FN void gs__sgemm(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B, int64_t ldb,
                      float *C, int64_t ldc, int accumulate, float *work);
/* instruction-set paths of the kernel: GS__ISA_* in gs_gemm.c; GSHARD_ISA forces one */
GS__FN int gs__sgemm_isa(int isa, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
                         int64_t ldb, float *C, int64_t ldc, int accumulate, float *work);
GS__FN int gs__gemm_isa(void);
GS__FN int gs__gemm_isa_available(int isa);
GS__FN const char *gs__gemm_isa_name(int isa);
GS__FN int gs__gemm_isa_warning(char *buf, size_t cap);

/* ---- elementwise and reduction kernels, one instance per instruction set (gs_simd.c; codes in gs_isa.h);
   isa = gs__gemm_isa() for the process's path; every path gives the scalar path's bits ---- */
#include "gs_isa.h"
GS__FN bool gs__ip_isnan(float x);
GS__FN float gs__ip_fmax(float a, float b); /* XLA's max: a NaN wins, +0 above -0 */
GS__FN float gs__ip_fmin(float a, float b);
GS__FN float gs__vk_rbf(float x);            /* rounded to bf16, as an f32 */
GS__FN void gs__vk_binary(int isa, int op, const float *a, const float *b, float *y, int64_t n);
GS__FN void gs__vk_compare(int isa, int cmp, const float *a, const float *b, uint8_t *y, int64_t n);
GS__FN void gs__vk_select(int isa, const uint8_t *p, const float *a, const float *b, float *y, int64_t n);
GS__FN void gs__vk_round_bf16(int isa, const float *x, float *y, int64_t n);
GS__FN void gs__vk_reduce_rows(int isa, int kind, int bf, const float *x, int64_t rows, int64_t L, float init,
                               float *y);
GS__FN void gs__vk_reduce_cols(int isa, int kind, int bf, const float *x, int64_t outer, int64_t L, int64_t inner,
                               float *y);

/* ---- cost model helpers shared with the whole-model accounting (gs_cost.c) ---- */
GS__FN double gs__cm_chip_flops(const gs_chip *c, gs_math m);
GS__FN gs_result gs__cm_need_math(gs_ctx *ctx, const char *who, const gs_chip *c, gs_math m);
GS__FN gs_result gs__cm_need_ici(gs_ctx *ctx, const char *who, const gs_chip *chip);
GS__FN gs_result gs__cm_check_amount(gs_ctx *ctx, const char *who, const char *what, double v);
GS__FN void gs__cm_collective(const gs_chip *chip, gs_collective_kind kind, double V, int n_axes, const gs_cost_axis *axes,
                              gs_cost_comm *o);
GS__FN void gs__cm_json_str(gs__sb *sb, const char *s);
GS__FN bool gs__cm_trip_count(const gs_value *w, int64_t *trips);
GS__FN bool gs__cm_is_collective(gs_op op);
GS__FN bool gs__cm_axis_wraps(const gs_chip *c, gs_wrap_mode mode, int64_t size);
GS__FN void gs__cm_json_num(gs__sb *sb, double x);
/* 3 significant digits with an SI prefix ("8.39 MB"), and a time ("12.3 us") */
GS__FN void gs__cm_fmt_si(char *buf, size_t cap, double x, const char *unit);
GS__FN void gs__cm_fmt_time(char *buf, size_t cap, double s);

/* ---- what the pictures of a run (gs_trace.c) read from the runtime and the cost report ---- */
GS__FN gs_ctx *gs__rt_ctx(const gs_runtime *rt);                        /* gs_runtime.c */
GS__FN gs_ctx *gs__cm_report_ctx(const gs_cost_report *r);              /* gs_cost.c */
GS__FN const gs_topology *gs__cm_report_topo(const gs_cost_report *r);
/* ---- the link between ranks (gs_mpi.c, GSHARD_MPI builds only) ---- */
#if defined(GSHARD_MPI)
typedef struct gs__net gs__net;
typedef struct gs__net_xfer {
    int peer, tag;
    void *buf;
    int64_t bytes;
} gs__net_xfer;
enum { GS__NET_OK = 0, GS__NET_ABORT, GS__NET_REMOTE, GS__NET_TIMEOUT, GS__NET_ERROR };
enum { GS__NET_TAG_FAIL = 1, GS__NET_TAG_POST = 2, GS__NET_TAG_GATHER = 3, GS__NET_TAG_DATA = 16 };
GS__FN gs_result gs__net_open(gs_ctx *ctx, void *comm, gs__net **out);
GS__FN void gs__net_close(gs_ctx *ctx, gs__net *n);
GS__FN int gs__net_rank(const gs__net *n);
GS__FN int gs__net_size(const gs__net *n);
GS__FN int64_t gs__net_sent(const gs__net *n);
GS__FN bool gs__net_broken(const gs__net *n);
GS__FN int gs__net_move(gs__net *n, const gs__net_xfer *send, int n_send, const gs__net_xfer *recv, int n_recv,
                        int64_t timeout_us, const int *abort_flag, uint8_t *late, int *code, char *msg, size_t cap);
GS__FN int gs__net_start(gs__net *n, const gs__net_xfer *x, int cnt, bool recv, int *code, char *msg, size_t cap);
GS__FN int gs__net_started(const gs__net *n);
GS__FN int gs__net_finish(gs__net *n, int upto, int64_t timeout_us, const int *abort_flag, uint8_t *late, int *code,
                          char *msg, size_t cap);
GS__FN void gs__net_tell(gs__net *n, int code, const char *msg);
GS__FN bool gs__net_sum(gs__net *n, int64_t *x, int64_t count);
GS__FN int gs__net_allreduce(gs__net *n, gs_dtype t, gs_reduce_kind kind, void *buf, int64_t count, int64_t timeout_us,
                             const int *abort_flag, int *code, char *msg, size_t cap);
#endif

#endif /* GS_INTERNAL_H */
