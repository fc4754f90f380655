/* ---------------------------------------------------------------------------------------------------------
   The book's sharding notation ("How to Scale Your Model", ch.3), both ways.

   A mesh is written "X=4,Y=2" (or "{X: 4, Y: 2}"): named axes, major to minor, devices 0..N-1 row-major.
   An array is written A[I_X, J]: dim I split over mesh axis X, dim J not split; I_{XY} splits I over X and Y
   (X major); mesh axes no dim names hold copies (partial replication). A PartitionSpec-like form of the same
   sharding, without array or dim names, is {X, _} (one entry per dim, "(X,Y)" for several axes); HLO text
   accepts it in sharding={...} when the module header declares the mesh: HloModule m, mesh={X=4,Y=2}.

   Expressions (gs_notation_build):
     A[I_X, J]                          one array
     A[I_X, J] -> A[I, J_X]             a reshard: the same array, the same dims, another sharding
     A[I, J_X] * B[J_X, K] -> C[I, K]   a contraction: dims named in A and B but not in C are summed, dims in
                                        all three are batch dims, the others are free dims of one operand
     ... -> C[I, K]{U_X}                an unreduced result: each device keeps its partial sum over X (no
                                        collective); the program returns the partial sums as a leading dim U
                                        of size |X| split over X
   Names are letters and digits; an axis name after '_' without braces is one mesh axis.
   ------------------------------------------------------------------------------------------------------- */

/* A mesh from "X=4,Y=2", "{X=4, Y=2}" or "X:4,Y:2" (devices 0..N-1 row-major). Errors name the column. */
GS_API const gs_mesh *gs_mesh_parse(gs_ctx *ctx, const char *text);
/* "X=4,Y=2" (ctx arena). */
GS_API const char *gs_mesh_to_text(gs_ctx *ctx, const gs_mesh *m);

/* The sharding of a rank-`rank` array as {X, _} over mesh m: which mesh axes (in which order) split each dim,
   found by trying every assignment of axes to dims. NULL without an error when no assignment gives s's device
   order (or s is manual, maximal or a tuple); {replicated} prints as {_, _, ...}. String in the ctx arena. */
GS_API const char *gs_sharding_to_spec(gs_ctx *ctx, const gs_sharding *s, const gs_mesh *m, int rank);
/* The same in the book's form, A[I_X, J]: `name` the array, dim_names[d] dim d's name (NULL: I, J, K, L, ...).
   NULL without an error when no mesh axis order expresses s. */
GS_API const char *gs_sharding_to_notation(gs_ctx *ctx, const gs_sharding *s, const gs_mesh *m, const char *name,
                                           int rank, const char *const *dim_names);
/* Printing in the notation: while m is set (NULL: never), gs_hlo_print, gs_propagate_explain and
   gs_partition_print write every sharding they can as {X, _} over m (the tile string where no axis order
   expresses it) and put mesh={...} in the module header, so the text reads back. */
GS_API void gs_ctx_set_notation_mesh(gs_ctx *ctx, const gs_mesh *m);
/* The mesh declared by the module header (mesh={X=4,Y=2}), or NULL. */
GS_API const gs_mesh *gs_hlo_mesh(const gs_graph *entry);

/* ---- expressions: build the program, partition it, cost its collectives ---- */
typedef struct gs_notation_desc {
    const gs_mesh *mesh;               /* required */
    int n_sizes;                       /* dims not listed are 1024 */
    const char *const *size_names;
    const int64_t *sizes;
    gs_dtype dtype;                    /* 0: bf16 */
} gs_notation_desc;

typedef struct gs_notation gs_notation;   /* lives in the ctx arena; no free */

/* Parses expr, builds the program with the C builders (parameters A and B with their shardings, the dot or the
   reshard, the result's sharding), and partitions it over the mesh's devices. A syntax error returns
   GS_ERR_PARSE and sets *error_column (1-based; may be NULL) to where it is; 0 for other errors. */
GS_API gs_result gs_notation_build(gs_ctx *ctx, const char *expr, const gs_notation_desc *desc, gs_notation **out,
                                   int *error_column);
GS_API gs_graph *gs_notation_source(const gs_notation *n);
GS_API gs_graph *gs_notation_spmd(const gs_notation *n);

/* One collective of the SPMD program, in the book's words. */
typedef struct gs_notation_comm {
    gs_collective_kind kind;           /* ALL_GATHER, REDUCE_SCATTER, ALL_REDUCE, ALL_TO_ALL or PERMUTE */
    const char *array;                 /* the array it moves: "A", "B" or the result "C" */
    const char *axes;                  /* the mesh axes its groups span, "X" or "XY" (ctx arena) */
    double bytes;                      /* V as gs_cost_collective defines it */
    double seconds;                    /* the cost model's time on the topology */
    const gs_value *value;             /* the instruction in the SPMD program */
} gs_notation_comm;

/* The collectives of the SPMD program in program order, costed on t (t's devices = the mesh's). *rows lives in
   the ctx arena. */
GS_API gs_result gs_notation_comms(gs_notation *n, const gs_topology *t, gs_notation_comm **rows, int *n_rows);
/* The SPMD program as HLO text, then `//` lines: the expression, each array's per-device shape, each collective
   ("AllGather B over X: 2 MiB, 12 us on v5e") and the total. String in the ctx arena. */
GS_API const char *gs_notation_report(gs_notation *n, const gs_topology *t);
