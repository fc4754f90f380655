/* gs_spmd.c - the SPMD partitioner: reshard planner, per-op rules, dot strategies (gs_api_partition.h). */
#include "gs_internal.h"

/* ---------------------------------------------------------------------------------------------------------
   What gs_partition records on the SPMD program
   ------------------------------------------------------------------------------------------------------- */
GS_API int gs_partition_num_warnings(const gs_graph *spmd) { return spmd && spmd->spmd ? spmd->spmd->n_warn : 0; }
GS_API const char *gs_partition_warning(const gs_graph *spmd, int i) {
    if (!spmd || !spmd->spmd || i < 0 || i >= spmd->spmd->n_warn) return NULL;
    return spmd->spmd->warn[i];
}
GS_API gs_graph *gs_partition_source(const gs_graph *spmd) { return spmd && spmd->spmd ? spmd->spmd->src : NULL; }
GS_API const char *gs_partition_explain(const gs_graph *spmd, const gs_value *orig) {
    const gs__spmd_info *I = spmd ? spmd->spmd : NULL;
    if (!I || !orig || orig->graph != I->src || orig->id >= I->n_src) return NULL;
    return I->explain[orig->id];
}
GS_API gs_value *gs_partition_lookup(const gs_graph *spmd, const gs_value *orig, const gs_sharding **sharding) {
    const gs__spmd_info *I = spmd ? spmd->spmd : NULL;
    if (sharding) *sharding = NULL;
    if (!I || !orig || orig->graph != I->src || orig->id >= I->n_src || !I->map[orig->id]) return NULL;
    if (sharding) *sharding = I->sh[orig->id];
    return I->map[orig->id];
}
GS_API const gs_sharding *gs_partition_output_sharding(const gs_graph *spmd, int i) {
    const gs__spmd_info *I = spmd ? spmd->spmd : NULL;
    if (!I || i < 0 || i >= I->n_out) return NULL;
    return I->out_sh[i];
}

GS_API gs_result gs_partition(gs_graph *g, const gs_partition_desc *desc, gs_graph **out) {
    (void)desc;
    if (out) *out = NULL;
    if (!g) return GS_ERR_INVALID_ARG;
    return gs__err(g->ctx, GS_ERR_UNSUPPORTED, "gs_partition: not written yet");
}

GS_API const char *gs_partition_print(gs_graph *spmd, bool explain) {
    (void)explain;
    return gs_hlo_print(spmd);
}
