/* test_spmd_gather.c - gather and scatter partitioned by pass-through, by masked local gathers (operand split
   along indexed dims) and by local scatters into the identity (indices split along scatter dims): each case is
   parsed, partitioned, run on emulated devices with poisoned padding against the reference interpreter (device
   counts that do not divide the sizes), and its SPMD program checked for the collectives the strategy needs
   (none, or exactly one all-reduce) and for no warning; the explanation names the strategy. Cases outside the
   strategies still give the right result, with a warning. */
#include "spmd_case.h"

static const char *add_f32 = "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
                             "max {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] maximum(a, b)\n}\n"
                             "rep {\n  a = f32[] parameter(0)\n  ROOT b = f32[] parameter(1)\n}\n"
                             "min {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] minimum(a, b)\n}\n"
                             "mul {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] multiply(a, b)\n}\n"
                             "maxs {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT s = s32[] maximum(a, b)\n}\n"
                             "ands {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT s = s32[] and(a, b)\n}\n"
                             "orp {\n  a = pred[] parameter(0)\n  b = pred[] parameter(1)\n  ROOT s = pred[] or(a, b)\n}\n";

/* the case runner with this file's reductions, tolerance and seeds */
static bool run(gst_case *h, const char *body, int64_t D) { return gst_case_run(h, add_f32, body, D, 1e-6, 91); }

/* the program moves nothing between devices and warns about nothing */
#define CHECK_LOCAL(h)                                                                                         \
    CHECK_MSG((h).ag + (h).ar + (h).a2a + (h).cp + (h).rs == 0 && (h).warnings == 0,                           \
              "ag %d ar %d a2a %d cp %d rs %d warnings %d\n%s", (h).ag, (h).ar, (h).a2a, (h).cp, (h).rs,         \
              (h).warnings, (h).text)

#define CHECK_EXPLAIN(h, want) CHECK_MSG(strstr((h).explain, (want)) != NULL, "explain: %s", (h).explain)

/* an embedding table split along hidden, looked up by replicated token ids: each device gathers its columns */
static void test_gather_operand_passthrough(void) {
    static const int64_t Ds[] = {4, 3, 7};
    int i;
    for (i = 0; i < 3; i++) {
        gst_case h;
        char body[1024];
        snprintf(body, sizeof body,
                 "  t = f32[9,10] parameter(0), sharding={devices=[1,%lld]<=[%lld]}\n"
                 "  i = s32[5] parameter(1)\n"
                 "  ROOT r = f32[5,10] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
                 "index_vector_dim=1, slice_sizes={1,10}\n",
                 (long long)Ds[i], (long long)Ds[i]);
        if (run(&h, body, Ds[i])) {
            CHECK_LOCAL(h);
            CHECK_EXPLAIN(h, "gather: operand pass-through along dim 1");
        }
        gs_ctx_destroy(h.ctx);
    }
}

/* operand pass-through on a rank-3 operand with a partial slice along another dim, indices in a vector */
static void test_gather_operand_passthrough_rank3(void) {
    gst_case h;
    if (run(&h,
            "  t = f32[6,5,7] parameter(0), sharding={devices=[1,1,3]<=[3]}\n"
            "  i = s32[4,2] parameter(1)\n"
            "  ROOT r = f32[4,2,7] gather(t, i), offset_dims={1,2}, collapsed_slice_dims={0}, start_index_map={0,1}, "
            "index_vector_dim=1, slice_sizes={1,2,7}\n",
            3)) {
        CHECK_LOCAL(h);
        CHECK_EXPLAIN(h, "gather: operand pass-through along dim 2");
    }
    gs_ctx_destroy(h.ctx);
}

/* token ids split along the batch, table replicated: each device looks up its own tokens */
static void test_gather_index_passthrough(void) {
    static const int64_t Ds[] = {4, 3};
    int i;
    for (i = 0; i < 2; i++) {
        gst_case h;
        char body[1024];
        snprintf(body, sizeof body,
                 "  t = f32[7,6] parameter(0)\n"
                 "  i = s32[10,3,1] parameter(1), sharding={devices=[%lld,1,1]<=[%lld]}\n"
                 "  ROOT r = f32[10,3,6] gather(t, i), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, "
                 "index_vector_dim=2, slice_sizes={1,6}\n",
                 (long long)Ds[i], (long long)Ds[i]);
        if (run(&h, body, Ds[i])) {
            CHECK_LOCAL(h);
            CHECK_EXPLAIN(h, "gather: index pass-through along dim 0");
        }
        gs_ctx_destroy(h.ctx);
    }
    {
        /* the index vector dim first: indices [1, 5, 4] split along dim 2 */
        gst_case h;
        if (run(&h,
                "  t = f32[8,3] parameter(0)\n"
                "  i = s32[1,5,4] parameter(1), sharding={devices=[1,1,3]<=[3]}\n"
                "  ROOT r = f32[5,4,3] gather(t, i), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, "
                "index_vector_dim=0, slice_sizes={1,3}\n",
                3)) {
            CHECK_LOCAL(h);
            CHECK_EXPLAIN(h, "gather: index pass-through along dim 2");
        }
        gs_ctx_destroy(h.ctx);
    }
}

/* a 2x3 mesh: the table split 3 ways along hidden (replicated over the other axis), the ids 2 ways along the
   batch (replicated over the first): the result [2,3] needs no communication */
static void test_gather_both_passthrough(void) {
    gst_case h;
    if (run(&h,
            "  t = f32[9,10] parameter(0), sharding={devices=[1,3,2]<=[2,3]T(1,0) last_tile_dim_replicate}\n"
            "  i = s32[5] parameter(1), sharding={devices=[2,3]<=[6] last_tile_dim_replicate}\n"
            "  ROOT r = f32[5,10] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
            "index_vector_dim=1, slice_sizes={1,10}, sharding={devices=[2,3]<=[6]}\n",
            6)) {
        CHECK_LOCAL(h);
        CHECK_EXPLAIN(h, "gather: operand pass-through along dim 1");
        CHECK_EXPLAIN(h, "gather: index pass-through along dim 0");
    }
    gs_ctx_destroy(h.ctx);
    /* the same from the result's annotation alone: both operands are sliced out locally */
    if (run(&h,
            "  t = f32[9,10] parameter(0)\n"
            "  i = s32[5] parameter(1)\n"
            "  ROOT r = f32[5,10] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
            "index_vector_dim=1, slice_sizes={1,10}, sharding={devices=[2,2]<=[4]}\n",
            4)) {
        CHECK_LOCAL(h);
        CHECK_EXPLAIN(h, "gather: operand pass-through along dim 1");
        CHECK_EXPLAIN(h, "gather: index pass-through along dim 0");
    }
    gs_ctx_destroy(h.ctx);
}

/* operand batching dims pass through together with their indices batching dims */
static void test_gather_batching_dims(void) {
    gst_case h;
    if (run(&h,
            "  t = f32[4,7,6] parameter(0), sharding={devices=[3,1,1]<=[3]}\n"
            "  i = s32[4,3,1] parameter(1), sharding={devices=[3,1,1]<=[3]}\n"
            "  ROOT r = f32[4,3,6] gather(t, i), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, "
            "operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,6}\n",
            3)) {
        CHECK_LOCAL(h);
        CHECK_EXPLAIN(h, "gather: operand batching dim 0 split like the indices");
    }
    gs_ctx_destroy(h.ctx);
    /* from the result's annotation on a 2x2 mesh: the batching pair split 2 ways, the hidden dim 2 ways */
    if (run(&h,
            "  t = f32[5,7,6] parameter(0)\n"
            "  i = s32[5,3,1] parameter(1)\n"
            "  ROOT r = f32[5,3,6] gather(t, i), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, "
            "operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,6}, "
            "sharding={devices=[2,1,2]<=[2,2]T(1,0)}\n",
            4)) {
        CHECK_LOCAL(h);
        CHECK_EXPLAIN(h, "gather: operand batching dim 0 split like the indices");
        CHECK_EXPLAIN(h, "gather: operand pass-through along dim 2");
    }
    gs_ctx_destroy(h.ctx);
}

/* the table split along hidden while the result is wanted split along the batch (one mesh axis): the gather stays
   local and only the result moves (all-to-all); the table is never gathered */
static void test_gather_passthrough_then_reshard(void) {
    gst_case h;
    if (run(&h,
            "  t = f32[64,12] parameter(0), sharding={devices=[1,4]<=[4]}\n"
            "  i = s32[8] parameter(1)\n"
            "  ROOT r = f32[8,12] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
            "index_vector_dim=1, slice_sizes={1,12}, sharding={devices=[4,1]<=[4]}\n",
            4)) {
        /* propagation splits the ids like the result: they are all-gathered (8 ids), the table is not */
        CHECK_MSG(h.ag_max_numel <= 8 && h.warnings == 0 && h.a2a == 1, "largest all-gather %lld a2a %d warnings %d\n%s",
                  (long long)h.ag_max_numel, h.a2a, h.warnings, h.text);
        CHECK_EXPLAIN(h, "gather: operand pass-through along dim 1");
    }
    gs_ctx_destroy(h.ctx);
    /* the result wanted whole: the gathered rows are all-gathered, not the table */
    if (run(&h,
            "  t = f32[64,12] parameter(0), sharding={devices=[1,3]<=[3]}\n"
            "  i = s32[8] parameter(1)\n"
            "  ROOT r = f32[8,12] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
            "index_vector_dim=1, slice_sizes={1,12}, sharding={replicated}\n",
            3)) {
        CHECK_MSG(h.ag == 1 && h.ag_max_numel <= 8 * 12 && h.warnings == 0, "ag %d (largest %lld) warnings %d\n%s",
                  h.ag, (long long)h.ag_max_numel, h.warnings, h.text);
        CHECK_EXPLAIN(h, "gather: operand pass-through along dim 1");
    }
    gs_ctx_destroy(h.ctx);
}

/* scatter into a table split along a window dim the updates cover whole: local scatter, indices whole. The
   index vector names both dims, so updates with a nonzero start along the split dim are skipped on both sides. */
static void test_scatter_operand_passthrough(void) {
    static const char *comb[] = {"add", "max", "rep"};
    int c;
    for (c = 0; c < 3; c++) {
        gst_case h;
        char body[1024];
        snprintf(body, sizeof body,
                 "  o = f32[9,10] parameter(0), sharding={devices=[1,4]<=[4]}\n"
                 "  i = s32[6,2] parameter(1)\n"
                 "  u = f32[6,10] parameter(2), sharding={devices=[1,4]<=[4]}\n"
                 "  ROOT r = f32[9,10] scatter(o, i, u), update_window_dims={1}, inserted_window_dims={0}, "
                 "scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=%s\n",
                 comb[c]);
        if (run(&h, body, 4)) {
            CHECK_LOCAL(h);
            CHECK_EXPLAIN(h, "scatter: operand pass-through along dim 1");
        }
        gs_ctx_destroy(h.ctx);
    }
    {
        /* updates split along their scatter dim are gathered (small), the operand stays split */
        gst_case h;
        if (run(&h,
                "  o = f32[9,10] parameter(0), sharding={devices=[1,3]<=[3]}\n"
                "  i = s32[6,1] parameter(1)\n"
                "  u = f32[6,10] parameter(2), sharding={devices=[3,1]<=[3]}\n"
                "  ROOT r = f32[9,10] scatter(o, i, u), update_window_dims={1}, inserted_window_dims={0}, "
                "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n",
                3)) {
            CHECK_MSG(h.warnings == 0 && h.ag_max_numel < 9 * 10, "warnings %d largest all-gather %lld\n%s",
                      h.warnings, (long long)h.ag_max_numel, h.text);
            CHECK_EXPLAIN(h, "scatter: operand pass-through along dim 1");
        }
        gs_ctx_destroy(h.ctx);
    }
}

/* outside the strategies: the operand split along the dim it is indexed by with slices two rows wide (a slice
   can straddle two shards). The result is still right, and the partitioner says the operand is gathered. */
static void test_gather_scatter_fallback(void) {
    gst_case h;
    if (run(&h,
            "  t = f32[8,6] parameter(0), sharding={devices=[4,1]<=[4]}\n"
            "  i = s32[5] parameter(1)\n"
            "  ROOT r = f32[5,2,6] gather(t, i), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0}, "
            "index_vector_dim=1, slice_sizes={2,6}\n",
            4)) {
        CHECK_MSG(h.warnings >= 1 && strstr(gs_partition_warning(h.spmd, 0), "r") != NULL, "no warning\n%s", h.text);
    }
    gs_ctx_destroy(h.ctx);
    /* a partial slice of the split dim: not pass-through either */
    if (run(&h,
            "  t = f32[8,6] parameter(0), sharding={devices=[1,3]<=[3]}\n"
            "  i = s32[5,2] parameter(1)\n"
            "  ROOT r = f32[5,4] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0,1}, "
            "index_vector_dim=1, slice_sizes={1,4}\n",
            3)) {
        CHECK_MSG(h.warnings >= 1, "no warning\n%s", h.text);
    }
    gs_ctx_destroy(h.ctx);
    /* scatter into an operand split along the inserted (indexed) dim */
    if (run(&h,
            "  o = f32[9,4] parameter(0), sharding={devices=[2,1]<=[2]}\n"
            "  i = s32[3,1] parameter(1)\n"
            "  u = f32[3,4] parameter(2)\n"
            "  ROOT r = f32[9,4] scatter(o, i, u), update_window_dims={1}, inserted_window_dims={0}, "
            "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n",
            2)) {
        CHECK_MSG(h.warnings >= 1, "no warning\n%s", h.text);
    }
    gs_ctx_destroy(h.ctx);
}

/* exactly one all-reduce, nothing else moves the operand, no warning */
#define CHECK_ONE_AR(h)                                                                                        \
    CHECK_MSG((h).ar == 1 && (h).ag + (h).a2a + (h).cp + (h).rs == 0 && (h).warnings == 0,                     \
              "ar %d ag %d a2a %d cp %d rs %d warnings %d\n%s", (h).ar, (h).ag, (h).a2a, (h).cp, (h).rs,         \
              (h).warnings, (h).text)

#define INDEXED0 "gather: operand split along indexed dim 0: masked local gather + all-reduce"

/* the vocab-parallel embedding: the table split along vocab (the dim the ids index, sliced one row wide), the ids
   replicated. Each device looks up the ids in its rows, zeroes the others, and one all-reduce sums the rows; the
   table is never gathered. 10 rows on 4 devices (the last shard holds 1 real row), on 3, 7 and 2, and 3 rows on
   4 devices (the last shard holds none); the ids are constants that hit the first and last rows and ids out of
   range that the gather clamps to them (-4 -> 0, 12 -> 9). */
static void test_gather_indexed_vocab(void) {
    static const int64_t Ds[] = {4, 3, 7, 2};
    static const char *ty[] = {"f32", "s32", "pred", "bf16"};
    int i;
    for (i = 0; i < 4; i++) {
        gst_case h;
        char body[1024];
        snprintf(body, sizeof body,
                 "  t = %s[10,6] parameter(0), sharding={devices=[%lld,1]<=[%lld]}\n"
                 "  i = s32[8] constant({0, 9, 3, -4, 12, 7, 8, 2})\n"
                 "  ROOT r = %s[8,6] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
                 "index_vector_dim=1, slice_sizes={1,6}\n",
                 ty[i], (long long)Ds[i], (long long)Ds[i], ty[i]);
        if (run(&h, body, Ds[i])) {
            CHECK_ONE_AR(h);
            CHECK_EXPLAIN(h, INDEXED0);
            /* pred sums are or-reductions */
            if (i == 2) CHECK_MSG(strstr(h.text, "all-reduce") && strstr(h.text, "or("), "%s", h.text);
        }
        gs_ctx_destroy(h.ctx);
    }
    {
        /* u32 ids (4294967295 clamps to the last row, not below 0) on a table with fewer rows than devices */
        gst_case h;
        if (run(&h,
                "  t = f32[3,5] parameter(0), sharding={devices=[4,1]<=[4]}\n"
                "  i = u32[2,3] constant({{0, 2, 4294967295}, {7, 1, 2147483648}})\n"
                "  ROOT r = f32[2,3,5] gather(t, i), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, "
                "index_vector_dim=2, slice_sizes={1,5}\n",
                4)) {
            CHECK_ONE_AR(h);
            CHECK_EXPLAIN(h, INDEXED0);
        }
        gs_ctx_destroy(h.ctx);
    }
    {
        /* ids from a parameter (values 0..7) into 7 rows on 3 devices, not collapsed (an offset dim of size 1) */
        gst_case h;
        if (run(&h,
                "  t = f32[7,4] parameter(0), sharding={devices=[3,1]<=[3]}\n"
                "  i = s32[6,1] parameter(1)\n"
                "  ROOT r = f32[6,1,4] gather(t, i), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0}, "
                "index_vector_dim=1, slice_sizes={1,4}\n",
                3)) {
            CHECK_ONE_AR(h);
            CHECK_EXPLAIN(h, INDEXED0);
        }
        gs_ctx_destroy(h.ctx);
    }
}

/* the table split along vocab on one mesh axis and along hidden (pass-through) or the ids along the batch (index
   pass-through) on the other: the all-reduce runs over the vocab axis only */
static void test_gather_indexed_mesh(void) {
    gst_case h;
    /* 2x2: vocab on the major axis, the ids' batch on the minor one */
    if (run(&h,
            "  t = f32[10,6] parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}\n"
            "  i = s32[7] parameter(1), sharding={devices=[2,2]<=[2,2]T(1,0) last_tile_dim_replicate}\n"
            "  ROOT r = f32[7,6] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
            "index_vector_dim=1, slice_sizes={1,6}\n",
            4)) {
        CHECK_ONE_AR(h);
        CHECK_EXPLAIN(h, INDEXED0);
        CHECK_EXPLAIN(h, "gather: index pass-through along dim 0");
        CHECK_MSG(strstr(h.text, "replica_groups={{0,2},{1,3}}") != NULL, "%s", h.text);
    }
    gs_ctx_destroy(h.ctx);
    /* 2x3: vocab 2 ways (minor axis), hidden 3 ways (major axis), ids replicated: groups along the minor axis */
    if (run(&h,
            "  t = f32[9,7] parameter(0), sharding={devices=[2,3]<=[3,2]T(1,0)}\n"
            "  i = s32[5] constant({8, 0, 4, 5, 20})\n"
            "  ROOT r = f32[5,7] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
            "index_vector_dim=1, slice_sizes={1,7}\n",
            6)) {
        CHECK_ONE_AR(h);
        CHECK_EXPLAIN(h, INDEXED0);
        CHECK_EXPLAIN(h, "gather: operand pass-through along dim 1");
        CHECK_MSG(strstr(h.text, "replica_groups={{0,1},{2,3},{4,5}}") != NULL, "%s", h.text);
    }
    gs_ctx_destroy(h.ctx);
    /* 2x2x2: vocab, hidden and the ids' batch each on their own axis */
    if (run(&h,
            "  t = f32[5,6] parameter(0), sharding={devices=[2,2,2]<=[8] last_tile_dim_replicate}\n"
            "  i = s32[3] parameter(1), sharding={devices=[2,4]<=[2,2,2]T(2,0,1) last_tile_dim_replicate}\n"
            "  ROOT r = f32[3,6] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
            "index_vector_dim=1, slice_sizes={1,6}\n",
            8)) {
        CHECK_ONE_AR(h);
        CHECK_EXPLAIN(h, INDEXED0);
        CHECK_EXPLAIN(h, "gather: operand pass-through along dim 1");
        CHECK_EXPLAIN(h, "gather: index pass-through along dim 0");
    }
    gs_ctx_destroy(h.ctx);
}

/* two indexed dims split (a 2-d table looked up by (row, column) pairs): one all-reduce over all six devices; the
   ids split along the same devices as the table (no mesh axis left for them) are gathered, which is small */
static void test_gather_indexed_two_dims(void) {
    gst_case h;
    if (run(&h,
            "  t = f32[5,7,4] parameter(0), sharding={devices=[2,3,1]<=[6]}\n"
            "  i = s32[6,2] constant({{0,0},{4,6},{-1,9},{2,3},{3,1},{4,0}})\n"
            "  ROOT r = f32[6,4] gather(t, i), offset_dims={1}, collapsed_slice_dims={0,1}, start_index_map={0,1}, "
            "index_vector_dim=1, slice_sizes={1,1,4}\n",
            6)) {
        CHECK_ONE_AR(h);
        CHECK_EXPLAIN(h, "gather: operand split along indexed dims 0,1: masked local gather + all-reduce");
    }
    gs_ctx_destroy(h.ctx);
    /* the index vector first, the second component indexing a dim the slice takes whole (start clamps to 0) */
    if (run(&h,
            "  t = f32[10,3] parameter(0), sharding={devices=[4,1]<=[4]}\n"
            "  i = s32[2,5] constant({{9,0,5,-2,11},{1,2,0,1,2}})\n"
            "  ROOT r = f32[5,3] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0,1}, "
            "index_vector_dim=0, slice_sizes={1,3}\n",
            4)) {
        CHECK_ONE_AR(h);
        CHECK_EXPLAIN(h, INDEXED0);
    }
    gs_ctx_destroy(h.ctx);
    /* the ids split over the same devices as the vocab: the ids are gathered (7 of them), not the table */
    if (run(&h,
            "  t = f32[8,6] parameter(0), sharding={devices=[3,1]<=[3]}\n"
            "  i = s32[7] parameter(1), sharding={devices=[3]<=[3]}\n"
            "  ROOT r = f32[7,6] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
            "index_vector_dim=1, slice_sizes={1,6}, sharding={devices=[3,1]<=[3]}\n",
            3)) {
        CHECK_MSG(h.ar == 1 && h.ag <= 1 && h.ag_max_numel <= 9 && h.warnings == 0, "ar %d ag %d (%lld) warnings %d\n%s",
                  h.ar, h.ag, (long long)h.ag_max_numel, h.warnings, h.text);
        CHECK_EXPLAIN(h, INDEXED0);
    }
    gs_ctx_destroy(h.ctx);
}

/* scatter with the indices and updates split along the scatter (batch) dim: each device scatters its updates
   into the combiner's identity, one all-reduce combines them, the operand is combined last. 7 updates on 3
   devices (padded), ids that repeat (3, 8) and ids out of range (-1, 9: skipped); the operand is never gathered
   and the updates never move. */
static void test_scatter_indexed(void) {
    static const char *comb[] = {"add", "max", "min", "mul"};
    int c;
    for (c = 0; c < 4; c++) {
        gst_case h;
        char body[1024];
        snprintf(body, sizeof body,
                 "  o = f32[9,4] parameter(0)\n"
                 "  i = s32[7,1] constant({{0},{8},{3},{-1},{9},{3},{8}})\n"
                 "  u = f32[7,4] parameter(1), sharding={devices=[3,1]<=[3]}\n"
                 "  ROOT r = f32[9,4] scatter(o, i, u), update_window_dims={1}, inserted_window_dims={0}, "
                 "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%s\n",
                 comb[c]);
        if (run(&h, body, 3)) {
            CHECK_ONE_AR(h);
            CHECK_EXPLAIN(h, "scatter: index pass-through along dim 0 of the indices");
        }
        gs_ctx_destroy(h.ctx);
    }
    {
        /* s32 max and and (identity: all bits set), indices from a parameter split along the batch (values 0..7
           into 6 rows: 6 and 7 are skipped), on 4 devices */
        static const char *sc[] = {"maxs", "ands"};
        for (c = 0; c < 2; c++) {
            gst_case h;
            char body[1024];
            snprintf(body, sizeof body,
                     "  o = s32[6,3] parameter(0)\n"
                     "  i = s32[9] parameter(1), sharding={devices=[4]<=[4]}\n"
                     "  u = s32[9,3] parameter(2)\n"
                     "  ROOT r = s32[6,3] scatter(o, i, u), update_window_dims={1}, inserted_window_dims={0}, "
                     "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%s\n",
                     sc[c]);
            if (run(&h, body, 4)) {
                CHECK_MSG(h.ar == 1 && h.ag == 0 && h.warnings == 0, "ar %d ag %d warnings %d\n%s", h.ar, h.ag,
                          h.warnings, h.text);
                CHECK_EXPLAIN(h, "scatter: index pass-through along dim 0 of the indices");
            }
            gs_ctx_destroy(h.ctx);
        }
    }
    {
        /* pred or */
        gst_case h;
        if (run(&h,
                "  o = pred[5,2] parameter(0)\n"
                "  i = s32[6,1] parameter(1), sharding={devices=[4,1]<=[4]}\n"
                "  u = pred[6,2] parameter(2), sharding={devices=[4,1]<=[4]}\n"
                "  ROOT r = pred[5,2] scatter(o, i, u), update_window_dims={1}, inserted_window_dims={0}, "
                "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=orp\n",
                4)) {
            CHECK_ONE_AR(h);
            CHECK_EXPLAIN(h, "scatter: index pass-through along dim 0 of the indices");
        }
        gs_ctx_destroy(h.ctx);
    }
    {
        /* a 2x2 mesh: the operand split along its window dim on the major axis (operand pass-through), the
           indices and updates along the batch on the minor one: the all-reduce runs over the minor axis */
        gst_case h;
        if (run(&h,
                "  o = f32[9,7] parameter(0), sharding={devices=[1,2,2]<=[4] last_tile_dim_replicate}\n"
                "  i = s32[5,1] parameter(1), sharding={devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}\n"
                "  u = f32[5,7] parameter(2), sharding={devices=[2,2]<=[2,2]T(1,0)}\n"
                "  ROOT r = f32[9,7] scatter(o, i, u), update_window_dims={1}, inserted_window_dims={0}, "
                "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n",
                4)) {
            CHECK_ONE_AR(h);
            CHECK_EXPLAIN(h, "scatter: operand pass-through along dim 1");
            CHECK_EXPLAIN(h, "scatter: index pass-through along dim 0 of the indices");
            CHECK_MSG(strstr(h.text, "replica_groups={{0,1},{2,3}}") != NULL, "%s", h.text);
        }
        gs_ctx_destroy(h.ctx);
    }
    {
        /* replace has no identity to start from: the updates are gathered (small), no all-reduce */
        gst_case h;
        if (run(&h,
                "  o = f32[9,4] parameter(0)\n"
                "  i = s32[7,1] parameter(1), sharding={devices=[3,1]<=[3]}\n"
                "  u = f32[7,4] parameter(2), sharding={devices=[3,1]<=[3]}\n"
                "  ROOT r = f32[9,4] scatter(o, i, u), update_window_dims={1}, inserted_window_dims={0}, "
                "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=rep\n",
                3)) {
            CHECK_MSG(h.ar == 0, "ar %d\n%s", h.ar, h.text);
            CHECK_MSG(strstr(h.explain, "index pass-through") == NULL, "%s", h.explain);
        }
        gs_ctx_destroy(h.ctx);
    }
}

/* iota-built indices make the indexed dim parallel: operand, indices and result split alike along it and each
   device gathers from its own rows with the iota component shifted to its shard; nothing moves. 8 rows on 4, 3
   (uneven: the last shard is padding-poisoned) and 5 devices; the other component indexes a dim left whole. */
static void test_gather_iota_parallel(void) {
    static const int64_t Ds[] = {4, 3, 5};
    int i;
    for (i = 0; i < 3; i++) {
        gst_case h;
        char body[1024];
        snprintf(body, sizeof body,
                 "  t = f32[8,6] parameter(0), sharding={devices=[%lld,1]<=[%lld]}\n"
                 "  p = s32[8,1] parameter(1)\n"
                 "  io = s32[8,1] iota(), iota_dimension=0\n"
                 "  c = s32[8,2] concatenate(io, p), dimensions={1}\n"
                 "  ROOT r = f32[8] gather(t, c), offset_dims={}, collapsed_slice_dims={0,1}, start_index_map={0,1}, "
                 "index_vector_dim=1, slice_sizes={1,1}\n",
                 (long long)Ds[i], (long long)Ds[i]);
        if (run(&h, body, Ds[i])) {
            CHECK_LOCAL(h);
            CHECK_EXPLAIN(h, "gather: parallel (iota-built indices) along dim 0");
        }
        gs_ctx_destroy(h.ctx);
    }
    /* the iota broadcast along indices dim 1 of a rank-3 index array, the result split on a 2x2 mesh; the indexed
       dim (7 rows) does not divide by 2 */
    {
        gst_case h;
        if (run(&h,
                "  t = f32[7,5,6] parameter(0)\n"
                "  io = s32[7] iota(), iota_dimension=0\n"
                "  b = s32[3,7] broadcast(io), dimensions={1}\n"
                "  ROOT r = f32[3,7,6] gather(t, b), offset_dims={2}, collapsed_slice_dims={0,1}, "
                "start_index_map={0}, index_vector_dim=2, slice_sizes={1,1,6}, sharding={devices=[1,2,2]<=[4]}\n",
                4)) {
            CHECK_MSG(h.warnings == 0 && h.ag == 0, "ag %d warnings %d\n%s", h.ag, h.warnings, h.text);
        }
        gs_ctx_destroy(h.ctx);
    }
}

/* scatter along parallel dims: explicit batching dims (operand split, or only the indices and updates split) and
   iota-built indices; operand, indices and updates split alike, each device scatters into its own shard */
static void test_scatter_parallel_and_batching(void) {
    static const int64_t Ds[] = {2, 3};
    int i;
    for (i = 0; i < 2; i++) {
        gst_case h;
        char body[1024];
        snprintf(body, sizeof body,
                 "  o = f32[4,10,3] parameter(0), sharding={devices=[%lld,1,1]<=[%lld]}\n"
                 "  i = s32[4,5,1] parameter(1)\n"
                 "  u = f32[4,5,3] parameter(2)\n"
                 "  ROOT r = f32[4,10,3] scatter(o, i, u), update_window_dims={2}, inserted_window_dims={1}, "
                 "input_batching_dims={0}, scatter_indices_batching_dims={0}, scatter_dims_to_operand_dims={1}, "
                 "index_vector_dim=2, to_apply=add\n",
                 (long long)Ds[i], (long long)Ds[i]);
        if (run(&h, body, Ds[i])) {
            CHECK_LOCAL(h);
            CHECK_EXPLAIN(h, "scatter: parallel along dim 0");
        }
        gs_ctx_destroy(h.ctx);
    }
    {   /* the indices split along their batching dim (dim 1 here), nothing else annotated */
        gst_case h;
        if (run(&h,
                "  o = f32[10,5,3] parameter(0)\n"
                "  i = s32[6,5] parameter(1), sharding={devices=[1,3]<=[3]}\n"
                "  u = f32[6,5,3] parameter(2)\n"
                "  ROOT r = f32[10,5,3] scatter(o, i, u), update_window_dims={2}, inserted_window_dims={0}, "
                "input_batching_dims={1}, scatter_indices_batching_dims={1}, scatter_dims_to_operand_dims={0}, "
                "index_vector_dim=2, to_apply=max\n",
                3)) {
            CHECK_LOCAL(h);
            CHECK_EXPLAIN(h, "scatter: parallel along dim 1");
        }
        gs_ctx_destroy(h.ctx);
    }
    for (i = 0; i < 2; i++) {   /* iota indices: updates row k goes to operand row k */
        gst_case h;
        char body[1024];
        snprintf(body, sizeof body,
                 "  o = f32[8,6] parameter(0), sharding={devices=[%lld,1]<=[%lld]}\n"
                 "  i = s32[8] iota(), iota_dimension=0\n"
                 "  u = f32[8,6] parameter(1)\n"
                 "  ROOT r = f32[8,6] scatter(o, i, u), update_window_dims={1}, inserted_window_dims={0}, "
                 "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%s\n",
                 (long long)Ds[i] + 1, (long long)Ds[i] + 1, i ? "rep" : "add");
        if (run(&h, body, Ds[i] + 1)) {
            CHECK_LOCAL(h);
            CHECK_EXPLAIN(h, "scatter: parallel along dim 0");
        }
        gs_ctx_destroy(h.ctx);
    }
}

/* sort with several operands (argsort: keys and an iota): the keys' split reaches the sort and every element of the
   result is split alike; split along the sorted dim, the tiles move to the other dim (12 rows on 4 and 3 devices) */
static void test_sort_multi_operand(void) {
    static const int64_t Ds[] = {4, 3};
    int i;
    for (i = 0; i < 2; i++) {
        gst_case h;
        char body[1024];
        snprintf(body, sizeof body,
                 "  k = f32[12,9] parameter(0), sharding={devices=[1,%lld]<=[%lld]}\n"
                 "  io = s32[12,9] iota(), iota_dimension=1\n"
                 "  s = (f32[12,9], s32[12,9]) sort(k, io), dimensions={1}, to_apply=lt\n"
                 "  v = f32[12,9] get-tuple-element(s), index=0\n"
                 "  x = s32[12,9] get-tuple-element(s), index=1\n"
                 "  ROOT r = (f32[12,9], s32[12,9]) tuple(v, x)\n",
                 (long long)Ds[i], (long long)Ds[i]);
        if (gst_case_run(&h, "lt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  c = s32[] parameter(2)\n"
                             "  d = s32[] parameter(3)\n  ROOT r = pred[] compare(a, b), direction=LT\n}\n",
                         body, Ds[i], 0, 7)) {
            gs_value *sv = gst_case_named(h.src, "s");
            const gs_sharding *ss = sv ? gs_value_sharding(sv) : NULL;
            CHECK(ss && gs_sharding_tuple_size(ss) == 2 &&
                  gs_sharding_equal(gs_sharding_tuple_elem(ss, 0), gs_sharding_tuple_elem(ss, 1)) &&
                  gs_sharding_tiles(gs_sharding_tuple_elem(ss, 0), 1) == Ds[i]);
            CHECK_MSG(h.warnings == 0, "warnings %d\n%s", h.warnings, h.text);
        }
        gs_ctx_destroy(h.ctx);
    }
}

void suite_spmd_gather(void) {
    RUN(test_gather_operand_passthrough);
    RUN(test_gather_operand_passthrough_rank3);
    RUN(test_gather_index_passthrough);
    RUN(test_gather_both_passthrough);
    RUN(test_gather_batching_dims);
    RUN(test_gather_passthrough_then_reshard);
    RUN(test_scatter_operand_passthrough);
    RUN(test_gather_scatter_fallback);
    RUN(test_gather_indexed_vocab);
    RUN(test_gather_indexed_mesh);
    RUN(test_gather_indexed_two_dims);
    RUN(test_scatter_indexed);
    RUN(test_gather_iota_parallel);
    RUN(test_scatter_parallel_and_batching);
    RUN(test_sort_multi_operand);
}
