/* fuzz_sharding.c - libFuzzer target: HLO sharding text, PartitionSpec strings and the book's notation.
   A sharding that parses must print back to text that parses to the same sharding; a PartitionSpec on a
   small mesh either gives a sharding that validates or a clear error, and a sharding it gives prints back as
   a spec ({x, _}) that reads to the same sharding; an expression (first byte >= 0x80) builds, or fails with a
   message (and a column inside the text for a syntax error). Build and run: make fuzz-libfuzzer. */
#define GSHARD_IMPLEMENTATION
#include "../../gshard.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    gs_ctx *ctx = NULL;
    char *text;
    const gs_sharding *s, *back;
    if (size < 1 || size > 4096) return 0;
    text = (char *)malloc(size);
    if (!text) return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = 0;
    if (gs_ctx_create(NULL, &ctx) != GS_OK) abort();
    if (data[0] & 0x80) {
        /* the book's notation on a 2x2x2 mesh (every dim 1024) */
        gs_notation_desc d;
        gs_notation *n = NULL;
        int col = -1;
        memset(&d, 0, sizeof d);
        d.mesh = gs_mesh_parse(ctx, "x=2,y=2,z=2");
        if (!d.mesh) abort();
        gs_notation_build(ctx, text, &d, &n, &col);
        if (!n && (!gs_ctx_error_msg(ctx)[0] || (gs_ctx_error(ctx) == GS_ERR_PARSE && (col < 1 || col > (int)size))))
            abort();
    } else if (data[0] & 1) {
        /* PartitionSpec against a 2x2x2 mesh (x, y, z) for a tensor of rank data[0] >> 1 & 7 */
        static const char *names[3] = {"x", "y", "z"};
        int64_t sizes[3] = {2, 2, 2}, dims[8] = {4, 6, 8, 3, 2, 5, 7, 1};
        uint32_t open = 0;
        int rank = (data[0] >> 1) & 7;
        const gs_mesh *m = gs_mesh_new(ctx, 3, names, sizes, NULL);
        if (!m) abort();
        s = gs_mesh_sharding(ctx, m, rank, text, &open);
        if (s && gs_sharding_validate(ctx, s, gs_shape_make(GS_F32, rank, dims), 8) != GS_OK && !gs_ctx_error_msg(ctx)[0])
            abort();
        if (!s && !gs_ctx_error_msg(ctx)[0]) abort();   /* every failure says why */
        if (s && rank > 0) {   /* and back: the spec printed from the sharding reads to the same sharding */
            const char *spec = gs_sharding_to_spec(ctx, s, m, rank);
            char inner[256];
            size_t k;
            if (!spec || strlen(spec) >= sizeof inner) abort();
            k = strlen(spec);
            memcpy(inner, spec + 1, k - 2);
            inner[k - 2] = 0;
            back = gs_mesh_sharding(ctx, m, rank, inner, NULL);
            if (!back || !gs_sharding_equal(s, back)) abort();
        }
    } else {
        s = gs_sharding_parse(ctx, text);
        if (s) {
            const char *t = gs_sharding_to_text(ctx, s);
            if (!t) abort();
            back = gs_sharding_parse(ctx, t);
            if (!back || !gs_sharding_equal(s, back)) abort();   /* the printed form reads back the same */
        } else if (gs_ctx_error(ctx) == GS_OK || !gs_ctx_error_msg(ctx)[0]) {
            abort();
        }
    }
    gs_ctx_destroy(ctx);
    free(text);
    return 0;
}
