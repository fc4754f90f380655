/* fuzz_npy.c - libFuzzer target: .npy reading. The bytes are written to a temporary file and read back with
   gs_npy_read for each dtype request; an array that reads writes back and reads again to the same shape and
   bytes (a signaling NaN of a type NumPy lacks may come back quiet: the wider file type is read back through
   convert, which quiets it as IEEE 754 does). Failures must carry a message. Build and run: make fuzz-libfuzzer. */
#define GSHARD_IMPLEMENTATION
#include "../../gshard.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* element by element: the same bytes, or NaNs of the same sign */
static int same_values(gs_shape s, const void *a, const void *b) {
    int64_t i, n = gs_shape_numel(&s);
    size_t es = gs_dtype_size(s.dtype);
    for (i = 0; i < n; i++) {
        double x = gs_dtype_get(s.dtype, a, i), y = gs_dtype_get(s.dtype, b, i);
        if (memcmp((const char *)a + (size_t)i * es, (const char *)b + (size_t)i * es, es) == 0) continue;
        if (x != x && y != y && !signbit(x) == !signbit(y)) continue;
        return 0;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const gs_dtype want[3] = {GS_DTYPE_INVALID, GS_F32, GS_BF16};
    char path[64], path2[64];
    gs_ctx *ctx = NULL;
    FILE *f;
    int w;
    if (size > 1 << 16) return 0;
    snprintf(path, sizeof path, "/tmp/gs_fuzz_npy_%ld.npy", (long)getpid());
    snprintf(path2, sizeof path2, "/tmp/gs_fuzz_npy_%ld_b.npy", (long)getpid());
    f = fopen(path, "wb");
    if (!f) return 0;
    if (size) fwrite(data, 1, size, f);
    fclose(f);
    if (gs_ctx_create(NULL, &ctx) != GS_OK) abort();
    for (w = 0; w < 3; w++) {
        gs_shape s, s2;
        void *a = NULL, *b = NULL;
        gs_ctx_clear_error(ctx);
        if (gs_npy_read(ctx, path, want[w], &s, &a) != GS_OK) {
            if (!gs_ctx_error_msg(ctx)[0] || a) abort();
            continue;
        }
        if (gs_shape_bytes(&s) > size) abort();   /* never more data than the file held */
        if (gs_npy_write(ctx, path2, s, a) != GS_OK) abort();
        if (gs_npy_read(ctx, path2, s.dtype, &s2, &b) != GS_OK || !gs_shape_equal(&s, &s2) ||
            !same_values(s, a, b))
            abort();
        gs_free_data(ctx, a);
        gs_free_data(ctx, b);
    }
    gs_ctx_destroy(ctx);
    remove(path);
    remove(path2);
    return 0;
}
