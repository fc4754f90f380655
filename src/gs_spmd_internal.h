/* gs_spmd_internal.h - the SPMD partitioner's private API: its state, and every function one of its files
   calls in another, each with the shapes and shardings it maps (the role XLA's spmd_partitioner.h plays).

   The partitioner's files; each calls only the files above it (python3 tools/callgraph.py checks it):
     gs_spmd_core.c    tile views, partition-id tables, offsets, masks, collectives, the reshard planner, and the
                       helpers every rule shares (clone at local size, combine partial results, the replicate path)
     gs_spmd_dot.c     dot strategies (dot and convolution dims as batch/contracting/free), windowed einsum
     gs_spmd_window.c  the windowed-input engine (halo regions) and the rules on it: slice, pad, reduce-window,
                       concatenate, reverse, convolution, reshape realignment
     gs_spmd_ops.c     every other rule, the dispatcher gs__sp_op (one line per op), and the walk over a computation
     gs_spmd.c         gs_partition: the driver, what it records on the SPMD program, printing with explanations

   Notation in the comments: x[A,B]{A split} is a value of dims A, B with its sharding split along A; {rep} is
   replicated; "local" is a device's tile. Every rule has the signature of gs__sp_rule_fn: it returns v's per-device
   value and sets *osh to the sharding that value is in; the walk then reshards it to t, the sharding propagation
   gave v. */
#ifndef GS_SPMD_INTERNAL_H
#define GS_SPMD_INTERNAL_H
#include "gs_internal.h"

/* =========================================================================================================
   The partitioner's state
   ========================================================================================================= */
typedef struct gs__sp_alt { const gs_sharding *sh; gs_value *v; } gs__sp_alt;

/* a source value's per-device form: the value in its own sharding, and the reshards already made of it */
typedef struct gs__sp_val {
    gs_value *v;
    const gs_sharding *sh;
    gs__sp_alt *alts;           /* stb_ds */
} gs__sp_val;

typedef struct gs__sp_tab { const void *k1, *k2; int64_t a, b, c; gs_value *v; } gs__sp_tab;

typedef struct gs__sp_g {       /* one graph being written */
    gs_graph *g;
    gs_graph *src;
    gs__sp_val *vals;           /* by source value id (heap) */
    gs_value *pid;              /* s32 partition id */
    gs__sp_tab *tabs;           /* stb_ds: offset tables already built */
} gs__sp_g;

/* --explain: why a collective of the SPMD program is there (the entry graph's value id), its reason and the
   annotation that would remove it */
typedef struct gs__sp_why_t { const gs_graph *g; int id; const char *text; } gs__sp_why_t;

typedef struct gs__sp {
    gs_ctx *ctx;
    gs_partition_desc desc;
    int64_t D;
    int64_t we_bytes;           /* windowed einsum threshold (bytes per device), -1 = never */
    gs__sp_g *G;                /* the graph being written */
    const gs_value *at;         /* the source instruction being partitioned */
    char **warn;                /* stb_ds of arena strings */
    gs__sb ex;                  /* the current instruction's explanation */
    const char **explain;       /* the entry graph's explanations, by source value id */
    const gs_sharding *rep;     /* {replicated}, made once up front so it is never NULL (out of memory) later */
    const gs_chip *chip;        /* the chip whose estimated times choose dot strategies (v5e by default) */
    const gs_value **force;     /* desc.strategies[i]'s instruction (heap, desc.n_strategies entries) */
    bool *forced_used;          /* desc.strategies[i] reached the dot rule (heap, same count) */
    gs__sp_why_t *why;          /* stb_ds: why each collective of the entry program is there, by value id */
    const gs_graph *why_g;      /* the entry program (the only graph whose collectives are explained) */
    unsigned char *tagged;      /* stb_ds, by entry program value id: its collective has a reason in why */
    int *group;                 /* stb_ds: the source value whose partitioning wrote each entry program value */
    const gs_sharding *unreduced_t; /* the unreduced sharding the current instruction has: its rule's partial sums
                                   stay as they are when they are partial over exactly its unreduced devices */
    bool reference;             /* the check's reference program (gs__partition_ex): every value outside a
                                   manual region replicated, each manual region run per device on its block */
    const gs_value *var_src;    /* the variadic reduce whose gathered partial results var_parts are (the other */
    const gs__sp_g *var_G;      /* results of that op reuse them: gs__sp_reduce_variadic), in graph var_G */
    gs_value *var_parts[GS__MAX_VARIADIC];
} gs__sp;

/* a rule: v's per-device value; *osh = the sharding it is in (t is what propagation gave v) */
typedef gs_value *(*gs__sp_rule_fn)(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);

/* =========================================================================================================
   gs_spmd_core.c
   ========================================================================================================= */
/* the current instruction's explanation (--explain) gets "; " + the text */
GS__FN void gs__sp_note(gs__sp *sp, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* --explain: the collectives of the entry program made since value id `from` are there for this reason */
GS__FN void gs__sp_why(gs__sp *sp, int from, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* collective x's bytes sent per device and its estimated seconds on sp->chip */
GS__FN void gs__sp_coll_cost(const gs__sp *sp, const gs_value *x, double *bytes, double *secs);
/* a warning on the SPMD program (gs_partition_warning) and the log */
GS__FN void gs__sp_warnf(gs__sp *sp, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* ---- shardings as the partitioner reads them ---- */
GS__FN const gs_sharding *gs__sp_rep(gs__sp *sp);                      /* {rep} */
GS__FN bool gs__sp_is_rep(const gs_sharding *s);                       /* every device holds the whole value */
GS__FN int64_t gs__sp_k(const gs_sharding *s, int d);                  /* tiles along dim d (1: unsplit) */
GS__FN gs_shape gs__sp_local(const gs_sharding *s, gs_shape full);     /* x[S0..]{s} -> the tile shape */
GS__FN const gs_sharding *gs__sp_elem(const gs_sharding *s, int i);    /* a tuple sharding's element i */
GS__FN const gs_sharding *gs__sp_sh(gs__sp *sp, const gs_value *u);    /* u's sharding, unknown/maximal -> {rep} */
GS__FN const gs_sharding *gs__sp_norm(gs__sp *sp, const gs_sharding *s); /* s, unknown/maximal -> {rep}, per element */
GS__FN const gs_sharding *gs__sp_orig(gs__sp *sp, const gs_value *u);  /* gs__sp_sh, even in reference mode */
GS__FN uint32_t gs__sp_split_mask(const gs_sharding *s, int rank);     /* the dims s splits, as a bit mask */
GS__FN const gs_sharding *gs__sp_unsplit(gs__sp *sp, const gs_sharding *t, uint32_t mask); /* t, mask dims whole */
GS__FN bool gs__sp_aligned(int64_t S, int64_t kc, int64_t kf);        /* kc-way tiles = runs of kf-way tiles */
/* ---- per-device scalars and tables ---- */
GS__FN gs_value *gs__sp_s32(gs__sp *sp, int64_t x);                   /* s32[] constant */
GS__FN gs_value *gs__sp_zero(gs__sp *sp, gs_dtype t);                 /* t[] 0 */
GS__FN gs_value *gs__sp_splat(gs__sp *sp, gs_dtype t, double x, gs_shape shape); /* t[shape] filled with x */
GS__FN gs_value *gs__sp_pid(gs__sp *sp);                              /* s32[] partition id, made once per graph */
/* s32[] vals[partition id]: a table of D values (cached by the keys k1, k2, a, b, c) */
GS__FN gs_value *gs__sp_tab_make(gs__sp *sp, const void *k1, const void *k2, int64_t a, int64_t b, int64_t c,
                                 const int32_t *vals);
GS__FN gs_value *gs__sp_offset(gs__sp *sp, const gs_sharding *s, int d, int64_t c); /* s32[] tile coord along d * c */
GS__FN gs_value *gs__sp_coord(gs__sp *sp, const gs_sharding *s, int d);            /* s32[] tile coord along d */
/* ---- shapes and masks ---- */
GS__FN gs_value *gs__sp_pad_dim(gs__sp *sp, gs_value *x, int d, int64_t n);   /* x with dim d padded to n */
GS__FN gs_value *gs__sp_prefix(gs__sp *sp, gs_value *x, const gs_shape *n);   /* x[..] -> x[:n0, :n1, ..] */
/* x[local]{s} of full shape: the elements past the end of the dims in mask (an uneven tile's padding) set to fill */
GS__FN gs_value *gs__sp_mask(gs__sp *sp, gs_value *x, const gs_sharding *s, const gs_shape *full, uint32_t mask,
                             double fill);
GS__FN gs_value *gs__sp_mask_with(gs__sp *sp, gs_value *x, const gs_sharding *s, const gs_shape *full, uint32_t mask,
                                  gs_value *fillv, double fill);   /* fill a scalar value fillv (NULL: fill) */
GS__FN double gs__sp_identity(gs_reduce_kind k, gs_dtype t);          /* the identity of reduction k in t */
/* ---- tile views: a sharding as an array of devices with one axis per split dim ---- */
GS__FN bool gs__sp_view(gs__sp *sp, const gs_sharding *s, int rank, gs__ta *out);
GS__FN const gs_sharding *gs__sp_from_view(gs__sp *sp, int rank, const gs__ta *t);
/* ---- collectives ---- */
/* x{partial over rg} -> x summed (reduced by k) over each group of rg */
GS__FN gs_value *gs__sp_all_reduce(gs__sp *sp, gs_value *x, gs_reduce_kind k, const gs_replica_groups *rg);
/* estimated seconds of one collective over a ring of n devices on sp->chip (V as gs_cost_collective's) */
GS__FN double gs__sp_coll_secs(const gs__sp *sp, gs_collective_kind kind, double V, int64_t n);
/* x[..,Sd/k,..] -> x[..,Sd,..]: dim d gathered over the devices along axis ax of the view t */
GS__FN gs_value *gs__sp_all_gather(gs__sp *sp, gs_value *x, int d, const gs__ta *t, int ax);
/* ---- the reshard planner ---- */
/* x[local]{s} -> x[local]{t} for an array of shape full (inside a partly manual region: within its groups) */
GS__FN gs_value *gs__sp_reshard_raw(gs__sp *sp, gs_value *x, const gs_sharding *s, const gs_sharding *t, gs_shape full);
/* x[local]{from} -> x[local]{want} for source value u (tuples element by element) */
GS__FN gs_value *gs__sp_reshard_val(gs__sp *sp, gs_value *x, const gs_sharding *from, const gs_sharding *want,
                                    const gs_value *u);
/* source value u's per-device form in sharding want (made once per sharding, then cached) */
GS__FN gs_value *gs__sp_get(gs__sp *sp, const gs_value *u, const gs_sharding *want);
/* ---- what every rule shares ---- */
/* v's op over per-device operands, result shape `shape` (NULL: the builder's), every attribute copied */
GS__FN gs_value *gs__sp_clone(gs__sp *sp, const gs_value *v, gs_value *const *ops, const gs_shape *shape);
/* a convolution read as a dot over local operands ops: its config with the windows fitted to their extents */
GS__FN gs_conv_config *gs__sp_conv_local(gs__sp *sp, const gs_value *v, gs_value *const *ops);
/* y[iteration dims]{I, partial along the dims dest maps to GS__DEST_REP} -> out[..]{*out_sh}: reduce-scatter when
   t splits an output dim over exactly the reducing devices, else all-reduce */
GS__FN gs_value *gs__sp_combine(gs__sp *sp, gs_value *x, const gs_sharding *I, int ri, const int *dest,
                                gs_reduce_kind kind, const gs_shape *full_out, const gs_sharding *t,
                                const gs_sharding **out_sh);
/* y{I, partial along the dims dest maps to GS__DEST_REP} is what the instruction's unreduced sharding
   (sp->unreduced_t) asks for: partial over exactly its unreduced devices (*U: that sharding) */
GS__FN bool gs__sp_keeps_partial(gs__sp *sp, const gs_sharding *I, int ri, const int *dest, int out_rank,
                                 const gs_sharding **U);
/* any op: operands{rep} -> out{rep} at full size (warns when an operand was split); the fallback rule */
GS__FN gs_value *gs__sp_replicated(gs__sp *sp, const gs_value *v, const char *why, const gs_sharding **osh);

/* =========================================================================================================
   The rules, by file (gs__sp_op in gs_spmd_ops.c picks one per op). Each has the signature of gs__sp_rule_fn.
   ========================================================================================================= */
/* ---- gs_spmd_dot.c ---- */
/* x[full]{s} -> x{t}: a rough count of the bytes a device sends by the reshard planner's steps; *secs their
   estimated time on sp->chip */
GS__FN double gs__sp_est(gs__sp *sp, const gs_sharding *s, const gs_sharding *t, const gs_shape *full, double *secs);
/* dot: lhs[B,M,K] x rhs[B,K,N] -> out[B,M,N], any of B, M, N, K split (K split: partial sums combined); the
   strategy is the cheapest in bytes resharded, a windowed einsum loop when an operand is too big to gather.
   ragged-dot too: lhs[B,M,K] x rhs[G,B,K,N] x sizes[B,..,G] -> out[B,M,N] (or [G,B,M,N] contracting), the group
   dims whole, any other dim split (the ragged one with each tile's offset taken off its first group) */
GS__FN gs_value *gs__sp_dot(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);
/* desc.strategies resolved against the entry graph g (unknown instruction or strategy: the error, false); after
   the walk, whether every one reached a dot rule */
GS__FN bool gs__sp_force_init(gs__sp *sp, gs_graph *g);
GS__FN bool gs__sp_force_check(gs__sp *sp);
/* ---- gs_spmd_window.c: the windowed-input engine gives each device the input region its output tile needs ---- */
/* slice, pad, reduce-window: x[S]{S split k} -> out[O]{O split k}; each device's input region by halo exchange */
GS__FN gs_value *gs__sp_windowed(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);
/* concatenate along a split dim: a[Sa]{split}, b[Sb]{split} -> out[Sa+Sb]{split}; each operand's part by the engine */
GS__FN gs_value *gs__sp_concat(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);
/* reverse: x[S]{split k} -> out[S]{split k, tiles mirrored}; an uneven dim's padding kept on the right by a halo */
GS__FN gs_value *gs__sp_reverse(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);
/* convolution: in[N,S..,C]{N, S split} x kernel[S..,C,F] -> out[N,S'..,F]{N, S' split}, spatial halos; in and
   kernel both split along S (the filter gradient) -> partial sums added; nothing split spatially -> the dot rule */
GS__FN gs_value *gs__sp_conv(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);
/* reshape: x[A,B]{..} -> out[A*B]{t}: local when every tile reshapes alone; x[3,2]{dim 0 split} -> out[6]{split}
   realigned by the engine; else the changed dims gathered */
GS__FN gs_value *gs__sp_reshape(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);
/* ---- gs_spmd_ops.c ---- */
/* any op inside a manual region: operands[local]{manual} -> out[local]{manual}; the op as written */
GS__FN gs_value *gs__sp_manual(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);
/* elementwise: x[S..]{t}, y[S..]{t} (scalar operands {rep}) -> out[S..]{t}; no collective */
GS__FN gs_value *gs__sp_elementwise(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);
/* constant: a splat -> out[local]{t}; a literal -> out[S..]{rep}, the walk slices it to t */
GS__FN gs_value *gs__sp_constant(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);
/* iota along d: -> out[local]{t}; a split d adds the tile's offset */
GS__FN gs_value *gs__sp_iota(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);
/* partition-id of the one-partition source program: -> u32[] 0 {rep} */
GS__FN gs_value *gs__sp_partition_id(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);
/* cholesky, triangular-solve: the batch dims split, the two minor dims whole; no collective */
GS__FN gs_value *gs__sp_linalg(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);
/* fft: x[B.., N..]{B split} -> out[B.., M..]{B split}; the fft dims whole */
GS__FN gs_value *gs__sp_fft(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);
/* batch-norm-*: x{feature dim split only} with the [F] vectors{F split} -> outputs likewise; no collective */
GS__FN gs_value *gs__sp_batch_norm(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);
/* rng-bit-generator: state{rep} -> (state, bits){rep}, computed whole on every device */
GS__FN gs_value *gs__sp_rng_bit_generator(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);
/* replica-id (one replica): -> u32[] {rep} */
GS__FN gs_value *gs__sp_replica_id(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);
/* bitcast-convert: equal widths elementwise; a width change keeps the added/removed minor dim whole */
GS__FN gs_value *gs__sp_bitcast_convert(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);
/* broadcast: x[A]{A as out's A} -> out[A,B]{t}; no collective */
GS__FN gs_value *gs__sp_broadcast(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);
/* transpose: x[A,B]{B split} -> out[B,A]{B split}; no collective */
GS__FN gs_value *gs__sp_transpose(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);
/* concatenate along an unsplit dim, dynamic-slice, dynamic-update-slice: x[A,B]{A split} -> out[A,B']{A split},
   the dims the op changes gathered first (a concatenate along a split dim: gs__sp_concat) */
GS__FN gs_value *gs__sp_whole_dims(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);
/* reduce over R, argmax/argmin along R: x[A,R]{A split} -> out[A]{A split}; x[A,R]{R split} -> out[A] partial
   per device, combined by all-reduce or reduce-scatter */
GS__FN gs_value *gs__sp_reduce(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);
/* variadic reduce (reducer mixing the components) x_j[A,R]{R split} -> out_k[A]: local reduces, partials all-gathered
   along R, reduced again (XLA's HandleReduce); false when R is not split */
GS__FN bool gs__sp_reduce_variadic(gs__sp *sp, const gs_value *v, const int *dest, gs_value **out, const gs_sharding **osh);
/* sort along D, top-k: x[A,D]{D split} -> out[A,D]{D's tiles moved to A, or replicated}; whole rows per device */
GS__FN gs_value *gs__sp_sort(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);
/* cumsum, cumprod, cummax, cummin along D: x[A,D]{D split} -> out[A,D]{D split}; a local scan plus the exclusive
   prefix of the other shards' totals */
GS__FN gs_value *gs__sp_cumulative(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);
/* rng(lo{rep}, hi{rep}) -> out[S..]{t}: each device draws exactly its block of the unpartitioned numbers */
GS__FN gs_value *gs__sp_rng(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);
/* a sharding annotation: x{any} -> x{t}, a reshard */
GS__FN gs_value *gs__sp_annotate(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);
/* enter a manual region: x[S..]{s} -> x[local]{manual}, the tile's padding zeroed */
GS__FN gs_value *gs__sp_to_manual(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);
/* leave a manual region: x[local]{manual} -> out[S..]{t}, the value as it is */
GS__FN gs_value *gs__sp_to_full(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);
/* tuple(a, b, ..) -> out{(t0, t1, ..)}: each element resharded to its part of t */
GS__FN gs_value *gs__sp_tuple(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);
/* get-tuple-element i: x{(s0, s1, ..)} -> out{si} */
GS__FN gs_value *gs__sp_get_tuple_element(gs__sp *sp, const gs_value *v, const gs_sharding *t,
                                          const gs_sharding **osh);
/* while: state{t} -> state{t}; condition and body partitioned with the state in t */
GS__FN gs_value *gs__sp_while(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);
/* conditional: selector{rep} (partly manual: replicated in its manual groups), arg_k{p_k} -> out{t}; branch k
   partitioned with its parameter in p_k (the sharding propagation gave it) and its root resharded to t */
GS__FN gs_value *gs__sp_conditional(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);
/* gather: operand[V,E] x indices[B,1] -> out[B,E]: operand{E split} -> out{E split}, indices{B split} ->
   out{B split}, operand{V split} (vocab-parallel) -> masked local gathers + all-reduce; else replicated */
GS__FN gs_value *gs__sp_gather(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);
/* scatter: operand[V,E]{E split} x indices[B,1]{rep} x updates[B,E]{E split} -> out[V,E]{E split}, local;
   indices and updates{B split} -> local scatters into the identity + all-reduce; else replicated */
GS__FN gs_value *gs__sp_scatter(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);
/* infeed (data leaves.., token){per leaf} -> each device's tiles of the leaves (uneven: a conditional per shape) */
GS__FN gs_value *gs__sp_infeed(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);
/* a collective the source wrote: all-reduce, collective-permute or ragged-all-to-all (its six operands whole) with
   channel_id on a replicated value, or in a partly manual region when its groups or pairs stay within devices
   holding the same tile: x[local]{t} -> out[local]{t} as written; all-gather, reduce-scatter, all-to-all:
   x{whole in each manual group} -> out{the same} as written; all-reduce without channel_id (one replica):
   x{t} -> x{t}; else an error */
GS__FN gs_value *gs__sp_collective(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);
/* any other op: operands{rep} -> out{rep} at full size (gs__sp_replicated) */
GS__FN gs_value *gs__sp_no_rule(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);

/* =========================================================================================================
   The dispatcher and the walk (gs_spmd_ops.c)
   ========================================================================================================= */
/* the rule for v's op (the table of contents of the rules) */
GS__FN gs_value *gs__sp_op(gs__sp *sp, const gs_value *v, const gs_sharding *t, const gs_sharding **osh);
/* the per-device form of computation src into G (parameter 0 in param_sh, the root resharded to root_sh, when
   given); gs__sp_graph does it for a called computation with a state of its own */
GS__FN gs_graph *gs__sp_run(gs__sp *sp, gs__sp_g *G, gs_graph *src, const gs_sharding *param_sh,
                            const gs_sharding *root_sh);
GS__FN gs_graph *gs__sp_graph(gs__sp *sp, gs_graph *src, const gs_sharding *param_sh, const gs_sharding *root_sh);
GS__FN void gs__sp_g_free(gs__sp *sp, gs__sp_g *G);

#endif /* GS_SPMD_INTERNAL_H */
