/* ---------------------------------------------------------------------------------------------------------
   Shardings (XLA HloSharding semantics). A sharding says how a logical tensor is laid out over devices:
   - replicated: every device holds the whole tensor;
   - maximal: one device holds the whole tensor;
   - tiled: a tile assignment (an N-d array of device ids) with one dim per data dim, giving the number of
     shards of that dim, plus up to two trailing "subgroup" dims: REPLICATED (the devices along it hold the
     same tile: partial replication, XLA's last_tile_dim_replicate) and MANUAL (the devices along it run a
     manually partitioned region, XLA's last_tile_dims={manual});
   - manual: the whole tensor is manually partitioned (inside a to_manual/to_full region);
   - unknown: a placeholder that propagation replaces;
   - tuple: one sharding per element of a tuple-shaped value.
   A tile assignment is either an explicit device list or XLA's compact iota form
   [dims]<=[reshape]T(perm) = arange(N).reshape(reshape).transpose(perm).reshape(dims), which is never
   expanded into a list unless asked.
   Shard sizes follow XLA: a dim of size S split k ways has shards of ceil(S/k); tile i covers
   [min(i*ceil(S/k), S), min((i+1)*ceil(S/k), S)), so padding sits on the right and trailing tiles may be
   partly or wholly empty.
   Shardings are immutable and live in a context's arena; functions that make one take the context and
   return NULL (with the context's sticky error set) on bad input.
   ------------------------------------------------------------------------------------------------------- */
typedef struct gs_sharding gs_sharding;

typedef enum gs_sharding_kind {
    GS_SHARDING_UNKNOWN = 0,   /* "{unknown}" or no sharding at all */
    GS_SHARDING_REPLICATED,
    GS_SHARDING_MAXIMAL,
    GS_SHARDING_TILED,
    GS_SHARDING_MANUAL,
    GS_SHARDING_TUPLE,
    GS_SHARDING_UNREDUCED      /* "{unreduced}": every device holds a partial value; the value is their sum */
} gs_sharding_kind;

typedef enum gs_subgroup {
    GS_SUBGROUP_INVALID = 0,
    GS_SUBGROUP_MANUAL,       /* printed "manual"; always ordered before REPLICATED */
    GS_SUBGROUP_REPLICATED,   /* printed "replicated" (alone: last_tile_dim_replicate) */
    GS_SUBGROUP_UNREDUCED     /* printed "unreduced": the devices along it hold partial values of the tile, whose
                                 sum is the tile (XLA's OpSharding UNREDUCED, Shardy's unreduced axes); ordered
                                 after MANUAL and before REPLICATED */
} gs_subgroup;

/* Tiled: the devices along an unreduced subgroup dim (1 when none). Unreduced shardings ({unreduced},
   last_tile_dims={unreduced, ..}, a named mesh's unreduced={'x'}): the devices of each unreduced group hold
   partial values whose sum is the value. Propagation keeps them where written and spreads only the summed value's
   sharding; the partitioner keeps partial sums that match them and sums where whole values are needed; the
   runtime lays a global array out as the value on each group's first device and zeros on the others, and gathers
   by summing (docs/sharding.md). */
GS_API int64_t gs_sharding_unreduced_group(const gs_sharding *s);
GS_API const gs_sharding *gs_sharding_unreduced(gs_ctx *ctx);

/* Tile-assignment dims: the data rank plus at most three subgroup dims. */
#define GS_MAX_TILE_RANK (GS_MAX_RANK + 3)
/* The iota form's reshape may have more dims than the tile assignment. */
#define GS_MAX_IOTA_RANK 16

GS_API const gs_sharding *gs_sharding_replicated(gs_ctx *ctx);
GS_API const gs_sharding *gs_sharding_manual(gs_ctx *ctx);
GS_API const gs_sharding *gs_sharding_unknown(gs_ctx *ctx);
GS_API const gs_sharding *gs_sharding_maximal(gs_ctx *ctx, int64_t device);
/* Tiled with an explicit device list (row-major over dims; n_dims = data rank + n_sub) or, when devices is
   NULL, devices 0..N-1 in order. sub: the types of the trailing n_sub dims (NULL when n_sub is 0). The result
   is normalised as XLA does (subgroup dims of size 1 dropped, equal types merged, MANUAL before REPLICATED,
   replication groups sorted; all-ones data dims with one subgroup type collapse to replicated or manual). */
GS_API const gs_sharding *gs_sharding_tiled(gs_ctx *ctx, int n_dims, const int64_t *dims, const int64_t *devices,
                                            int n_sub, const gs_subgroup *sub);
/* Tiled with the iota tile assignment [dims]<=[reshape]T(perm); perm NULL is the identity. */
GS_API const gs_sharding *gs_sharding_iota(gs_ctx *ctx, int n_dims, const int64_t *dims, int n_reshape,
                                           const int64_t *reshape, const int *perm, int n_sub,
                                           const gs_subgroup *sub);
GS_API const gs_sharding *gs_sharding_tuple(gs_ctx *ctx, int n, const gs_sharding *const *elems);

/* XLA's HloSharding text: {replicated}, {manual}, {unknown}, {maximal device=N}, {devices=[..]ids} or
   {devices=[..]<=[..]T(..)} with last_tile_dim_replicate or last_tile_dims={manual, replicated}, tuples
   {{..}, {..}}; "shard_as N"/"shard_like N" are kept (propagation acts on them), metadata={...} is accepted
   and ignored. Errors name the column. */
GS_API const gs_sharding *gs_sharding_parse(gs_ctx *ctx, const char *text);
/* Canonical text (the string lives in ctx's arena). Iota assignments print in iota form, lists as lists. */
GS_API const char *gs_sharding_to_text(gs_ctx *ctx, const gs_sharding *s);
/* Equality as XLA defines it: the same kind, tile dims, subgroup types and device at every tile. An iota and
   an explicit assignment naming the same devices are equal. */
GS_API bool gs_sharding_equal(const gs_sharding *a, const gs_sharding *b);

/* Queries */
GS_API gs_sharding_kind gs_sharding_get_kind(const gs_sharding *s);
GS_API bool gs_sharding_is_replicated(const gs_sharding *s);  /* also true for tiled with one tile per dim */
/* Tiled: the data rank (tile dims excluding subgroup dims). 0 for the other kinds. */
GS_API int gs_sharding_rank(const gs_sharding *s);
/* Tiled: shards along data dim d (1 for dims that are not split, and for non-tiled kinds). */
GS_API int64_t gs_sharding_tiles(const gs_sharding *s, int d);
/* Tiled: the product of the data tile dims (XLA NumTiles), without replication or manual groups. */
GS_API int64_t gs_sharding_num_tiles(const gs_sharding *s);
/* Tiled: size of the replication (or manual) subgroup, 1 when there is none. */
GS_API int64_t gs_sharding_replication(const gs_sharding *s);
GS_API int64_t gs_sharding_manual_group(const gs_sharding *s);
/* The number of devices the tile assignment names (tiled), 1 for maximal, 0 for the rest. */
GS_API int64_t gs_sharding_num_devices(const gs_sharding *s);
GS_API int64_t gs_sharding_maximal_device(const gs_sharding *s);   /* -1 unless maximal */
GS_API int gs_sharding_tuple_size(const gs_sharding *s);          /* 0 unless a tuple */
GS_API const gs_sharding *gs_sharding_tuple_elem(const gs_sharding *s, int i);
/* The full tile-assignment shape: n_dims = rank + number of subgroup dims; sub receives their types. */
GS_API int gs_sharding_tile_shape(const gs_sharding *s, int64_t *dims, gs_subgroup *sub);
/* The device at a tile-assignment position (index: one entry per tile dim, subgroup dims included). */
GS_API int64_t gs_sharding_device_at(const gs_sharding *s, const int64_t *index);
/* The tile-assignment position of a device; false when the device does not appear. */
GS_API bool gs_sharding_device_index(const gs_sharding *s, int64_t device, int64_t *index);
/* Writes every device id in row-major tile order (gs_sharding_num_devices entries). */
GS_API void gs_sharding_devices(const gs_sharding *s, int64_t *out);

/* Tile math for a data shape (rank must match a tiled sharding). */
/* The per-device shard shape: each split dim becomes ceil(S/k); replicated and maximal keep the full shape. */
GS_API gs_result gs_sharding_shard_shape(gs_ctx *ctx, const gs_sharding *s, gs_shape full, gs_shape *shard);
/* The part of the logical tensor device `device` holds: [offset[d], limit[d]) per dim (valid extent =
   limit - offset, possibly 0 for all-padding shards). Replicated/manual: the whole tensor. Maximal: the whole
   tensor on its device, empty (limit = offset = 0) elsewhere; returns false when the device holds nothing,
   including a device missing from the tile assignment. */
GS_API bool gs_sharding_device_region(const gs_sharding *s, gs_shape full, int64_t device, int64_t *offset,
                                      int64_t *limit);
/* Text rendering of which device holds which part of a tensor: for rank 1 and 2, a grid of tiles with
   device ids (replication groups listed together, each tile's valid extent); for higher ranks, per-dim
   ranges and a device table. String in ctx's arena. */
GS_API const char *gs_sharding_visualize(gs_ctx *ctx, const gs_sharding *s, gs_shape full);
/* Checks that s fits shape (tiled rank = shape rank) and that a tiled s names each of the num_devices devices
   exactly once, as XLA requires (a subset is an error; num_devices 0:
   no bound). Tuple shardings need a tuple value: use gs_value_set_sharding. */
GS_API gs_result gs_sharding_validate(gs_ctx *ctx, const gs_sharding *s, gs_shape shape, int64_t num_devices);

/* ---------------------------------------------------------------------------------------------------------
   Device meshes (GSPMD's mesh_split, JAX's Mesh + PartitionSpec). A mesh is an N-d array of device ids with
   named axes; devices NULL means 0..N-1 in row-major order.
   ------------------------------------------------------------------------------------------------------- */
typedef struct gs_mesh gs_mesh;
GS_API const gs_mesh *gs_mesh_new(gs_ctx *ctx, int n_axes, const char *const *names, const int64_t *sizes,
                                  const int64_t *devices);
GS_API int gs_mesh_num_axes(const gs_mesh *m);
GS_API int64_t gs_mesh_axis_size(const gs_mesh *m, int axis);
GS_API const char *gs_mesh_axis_name(const gs_mesh *m, int axis);
GS_API int64_t gs_mesh_num_devices(const gs_mesh *m);
/* gs_sharding_visualize as an SVG picture (for slides): on the left the array cut into its tiles (rows: the tiles of the
   leading dims, columns: the tiles of the last dim), each labelled with its region and the devices holding
   it; on the right the num_devices devices, each coloured like the tile it holds (grey: none), laid out as
   the mesh (its first axis down, the others across; NULL, or a mesh of another size: a near-square row-major
   grid). title (may be NULL) heads it with the sharding's text, and with a mesh also the book's notation
   (A[I_X, J]) where one expresses it. One array sharding (not a tuple), 1 to 4096 devices, at most 1024
   tiles; else NULL with the error set. String in ctx's arena. */
GS_API const char *gs_sharding_svg(gs_ctx *ctx, const gs_sharding *s, gs_shape full, int64_t num_devices,
                                   const gs_mesh *mesh, const char *title);
/* A sharding from a PartitionSpec string with one entry per tensor dim, separated by commas: an axis name,
   several axes in parentheses "(x, y)" (major to minor), "_" or "None" for a dim that is not split, or "?" for
   a dim left open for propagation to decide. Mesh axes no dim uses become partial replication.
   `open_dims` (may be NULL) receives a bit per dim marked "?". Example: "data, _, model" on a rank-3 tensor. */
GS_API const gs_sharding *gs_mesh_sharding(gs_ctx *ctx, const gs_mesh *m, int rank, const char *spec,
                                           uint32_t *open_dims);
/* GSPMD's mesh_split: dims_mapping[d] is the mesh axis that splits tensor dim d, or -1. */
GS_API const gs_sharding *gs_mesh_sharding_dims(gs_ctx *ctx, const gs_mesh *m, int rank, const int *dims_mapping);

/* ---------------------------------------------------------------------------------------------------------
   Annotations. Each returns an annotation instruction (an identity, printed as XLA's custom-call "Sharding")
   that carries the sharding; shapes never change. Propagation never overwrites an annotation, except the dims
   it leaves open.
   ------------------------------------------------------------------------------------------------------- */
GS_API gs_value *gs_annotate_sharding(gs_graph *g, gs_value *x, const gs_sharding *s);
/* As above, with dims left open for propagation (bit d = tensor dim d; XLA's unspecified_dims). */
GS_API gs_value *gs_annotate_open(gs_graph *g, gs_value *x, const gs_sharding *s, uint32_t open_dims);
/* The paper's API: replicate(x); split(x, dim, n) = dim split n ways over devices 0..n-1;
   shard(x, device_assignment) = the tile assignment given as an array with rank(x) dims. */
GS_API gs_value *gs_replicate(gs_graph *g, gs_value *x);
GS_API gs_value *gs_split(gs_graph *g, gs_value *x, int64_t dim, int64_t n);
GS_API gs_value *gs_shard(gs_graph *g, gs_value *x, const int64_t *tiles, const int64_t *devices);
/* Partial replication: tiles per data dim, then `replicas` devices holding each tile (devices NULL: iota). */
GS_API gs_value *gs_shard_partial(gs_graph *g, gs_value *x, const int64_t *tiles, int64_t replicas,
                                  const int64_t *devices);
/* mesh_split with a PartitionSpec string (see gs_mesh_sharding; "?" dims stay open). */
GS_API gs_value *gs_mesh_split(gs_graph *g, gs_value *x, const gs_mesh *m, const char *spec);

/* The sharding attached to a value (parsed from HLO text, set by an annotation or by propagation), or NULL. */
GS_API const gs_sharding *gs_value_sharding(const gs_value *v);
/* Attaches a sharding to any value as a fixed user annotation (NULL removes it). Checked against the shape. */
GS_API gs_result gs_value_set_sharding(gs_value *v, const gs_sharding *s);
/* Dims of a value's user sharding that propagation may still refine (bit per dim). */
GS_API uint32_t gs_value_open_dims(const gs_value *v);
/* Sets them, as HLO text's backend_config="unspecified_dims=[...]" does: on a sharding annotation (gs_annotate)
   or a manual conversion (gs_to_manual, gs_to_full), the places XLA keeps them; propagation refines those dims
   of the sharding and, across a conversion, XLA's rules for the manual subgroup apply. Printed back as
   unspecified_dims. 0 closes every dim. Errors (GS_ERR_SHARDING): another op (a named-mesh sharding with "?"
   dims, gs_value_set_sharding_text, opens dims of any value), a value without a sharding, a tuple, a dim past the
   value's rank. */
GS_API gs_result gs_value_set_open_dims(gs_value *v, uint32_t open_dims);

/* Where a sharding came from. */
typedef enum gs_origin_kind {
    GS_ORIGIN_NONE = 0,       /* no sharding yet */
    GS_ORIGIN_USER,           /* an annotation or a sharding= attribute */
    GS_ORIGIN_FORWARD,        /* inferred from operands */
    GS_ORIGIN_BACKWARD,       /* inferred from a user */
    GS_ORIGIN_DEFAULT         /* nothing decided: replicated */
} gs_origin_kind;

typedef struct gs_origin {
    gs_origin_kind kind;
    int level;                /* aggressiveness level 0..3 (forward/backward) */
    const gs_value *from;     /* the operand or user it came from (forward/backward) */
    const char *rule;         /* the op rule, e.g. "dot", "elementwise", "broadcast" */
    const gs_value *source;   /* the user annotation the chain started at, if any */
} gs_origin;

/* ---------------------------------------------------------------------------------------------------------
   Propagation: gives every instruction of g (and of its while bodies) a sharding, XLA-style: iterative forward
   and backward passes to a fixpoint at four aggressiveness levels. User shardings stay as they are (except
   their open dims); whatever is left undecided becomes replicated.
   ------------------------------------------------------------------------------------------------------- */
typedef struct gs_propagate_desc {
    int64_t num_devices;          /* 0: the graph's num_partitions; user shardings must fit it */
} gs_propagate_desc;

GS_API gs_result gs_propagate(gs_graph *g, const gs_propagate_desc *desc);
GS_API gs_origin gs_value_sharding_origin(const gs_value *v);
/* The module as HLO text with a sharding on every instruction; with explain, a comment per instruction
   saying where its sharding came from, and the conflicts found. String in the ctx arena. */
GS_API const char *gs_propagate_explain(gs_graph *g, bool explain);
/* Conflicts found by the last gs_propagate: two user annotations that give one tensor different shardings (an
   annotation of an annotated value, two annotations of one value, two members of one loop state). Each message
   names both. */
GS_API int gs_propagate_num_conflicts(const gs_graph *g);
GS_API const char *gs_propagate_conflict(const gs_graph *g, int i);
