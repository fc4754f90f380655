/* notation.c - the book's sharding notation from C: read A[I_X, J] style expressions, build and partition the
   program they describe, and name each collective with its cost; print a sharding back in the notation.
   Build: cc -std=c99 -O2 examples/notation.c -o notation -lpthread -lm  (from the repository root)

   The same as `gshard notation 'A[I, J_X] * B[J_X, K] -> C[I, K]' --mesh X=4,Y=2`, for the book's ch.3 cases on
   a v5e 4x2 slice, every dim 1024 in bf16. */
#ifndef GSHARD_EXTERNAL_IMPL   /* the Makefile links gshard_impl.c instead */
#define GSHARD_IMPLEMENTATION
#endif
#include "../gshard.h"
#include <stdio.h>

int main(void) {
    static const char *const cases[] = {
        "A[I_X, J] * B[J, K_Y] -> C[I_X, K_Y]",   /* no communication */
        "A[I, J_X] * B[J_X, K] -> C[I, K]",       /* all-reduce over X */
        "A[I, J_X] * B[J_X, K] -> C[I, K_X]",     /* reduce-scatter over X */
        "A[I_X, J] * B[J_X, K] -> C[I_X, K]",     /* all-gather of B over X */
        "A[I_X, J] -> A[I, J_X]",                 /* all-to-all over X */
    };
    gs_ctx *ctx;
    gs_notation_desc d = {0};
    gs_topology_desc td = {0};
    gs_topology *t = NULL;
    if (gs_ctx_create(NULL, &ctx) != GS_OK) return 1;
    d.mesh = gs_mesh_parse(ctx, "X=4,Y=2");
    td.chip = gs_chip_find("v5e");
    td.mesh_rank = 2;
    td.mesh[0] = 4;
    td.mesh[1] = 2;
    if (!d.mesh || gs_topology_create(ctx, &td, &t) != GS_OK) {
        fprintf(stderr, "%s\n", gs_ctx_error_msg(ctx));
        return 1;
    }
    for (int i = 0; i < 5; i++) {
        gs_notation *n;
        gs_notation_comm *rows;
        int nr, col;
        if (gs_notation_build(ctx, cases[i], &d, &n, &col) != GS_OK || gs_notation_comms(n, t, &rows, &nr) != GS_OK) {
            fprintf(stderr, "%s: %s\n", cases[i], gs_ctx_error_msg(ctx));
            return 1;
        }
        printf("%-38s", cases[i]);
        if (nr == 0) printf("  no collective");
        for (int k = 0; k < nr; k++)
            printf("  %s of %s over %s: %.0f bytes, %.1f us", gs_collective_kind_name(rows[k].kind), rows[k].array,
                   rows[k].axes, rows[k].bytes, rows[k].seconds * 1e6);
        printf("\n");
    }
    /* and back: tile strings in the notation, when an order of the mesh axes gives their device order */
    {
        static const char *const tiles[] = {"{devices=[4,2]<=[8]}", "{devices=[2,4]<=[4,2]T(1,0)}",
                                            "{devices=[4,1,2]<=[8] last_tile_dim_replicate}", "{devices=[2,4]<=[8]}"};
        for (int i = 0; i < 4; i++) {
            const char *txt = gs_sharding_to_notation(ctx, gs_sharding_parse(ctx, tiles[i]), d.mesh, "W", 2, NULL);
            printf("%-48s is %s\n", tiles[i], txt ? txt : "not expressible on X=4,Y=2 (printers keep the tile string)");
        }
    }
    gs_ctx_destroy(ctx);
    return 0;
}
