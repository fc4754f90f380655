/* gs_api_shapes.h - shapes-only runs: an SPMD program executed on D virtual devices without data.

   The walk follows the runtime's buffer accounting exactly (gs_runtime_get_stats): parameter buffers count
   for the whole run; every other buffer from the instruction that makes it to its last reader (results to
   the end); pass-through instructions (parameter, tuple, get-tuple-element, reshape, copy, the sharding
   annotation, a convert to the same type) share their operand's buffer; instructions the root does not
   depend on are skipped; a while loop's state is the body's fresh results each iteration, its condition's
   predicate freed after each test. So at sizes where both run, the peak agrees with the runtime's to the
   byte. Collective bytes are counted as the runtime counts them: all-reduce and all-gather (G-1)*n,
   reduce-scatter and all-to-all (G-1)*n/G, collective-permute n when the peer is another device, for an
   operand of n bytes and groups of G.

   Every device runs the same program (uneven shards are padded), so every device has the same peak; the
   bytes each device sends differ where it is outside a collective's groups or pairs. A while loop needs a
   static trip count: the counter pattern gs_cost_program reads (constant start, compare with a constant,
   constant step), or one given by name in the desc; otherwise GS_ERR_UNSUPPORTED naming the loop. A
   conditional is GS_ERR_UNSUPPORTED (the branch it runs depends on the data). */
#define GS_SHAPES_MAX_DEVICES 1048576

typedef struct gs_shapes_desc {
    int64_t num_devices;              /* D: the program's num_partitions when it is > 1 */
    int mesh_rank;                    /* optional logical mesh (row-major device ids) to name the axes a */
    int64_t mesh[GS_COST_MAX_AXES];   /* collective's groups span; 0: no mesh */
    int n_trip_counts;                /* trip counts of while loops by instruction name */
    const char *const *trip_names;
    const int64_t *trip_counts;
} gs_shapes_desc;

typedef struct gs_shapes_collective {
    const gs_value *instruction;
    int64_t count;             /* executions per device (loop trip counts multiplied) */
    int64_t group_size;        /* 2 for a permute */
    unsigned axes;             /* bit i: the groups vary along mesh axis i (0 without a mesh) */
    double bytes_sent;         /* over every device and execution */
    double max_device_bytes;   /* the most one device sent, over its executions */
} gs_shapes_collective;

typedef struct gs_shapes_report gs_shapes_report;   /* lives in the ctx arena; no free */

GS_API gs_result gs_shapes_run(gs_graph *spmd, const gs_shapes_desc *desc, gs_shapes_report **out);
GS_API int64_t gs_shapes_num_devices(const gs_shapes_report *r);
GS_API int64_t gs_shapes_param_bytes(const gs_shapes_report *r);          /* per device */
GS_API int64_t gs_shapes_peak_bytes(const gs_shapes_report *r, int64_t device);   /* params + live buffers */
/* The instruction running when the peak was first reached, and the loops around it ("while.3/body"). */
GS_API const gs_value *gs_shapes_peak_instruction(const gs_shapes_report *r, int64_t device);
GS_API const char *gs_shapes_peak_path(const gs_shapes_report *r, int64_t device);
GS_API double gs_shapes_bytes_sent(const gs_shapes_report *r, int64_t device);
GS_API int gs_shapes_num_collectives(const gs_shapes_report *r);
GS_API const gs_shapes_collective *gs_shapes_collective_at(const gs_shapes_report *r, int i);
/* Totals per set of mesh axes (bit mask as in gs_shapes_collective.axes): bytes sent over all devices. */
GS_API double gs_shapes_axes_bytes(const gs_shapes_report *r, unsigned axes);
GS_API const char *gs_shapes_text(gs_shapes_report *r);   /* a summary; NULL on out-of-memory */
GS_API const char *gs_shapes_json(gs_shapes_report *r);
