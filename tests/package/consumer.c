/* consumer.c - a program that uses gshard.h the way an installed or vendored copy is used (tests/package.sh):
   it prints the version it was compiled against and checks the library agrees. */
#define GSHARD_IMPLEMENTATION
#include <gshard.h>
#include <stdio.h>
#include <string.h>

#if GS_VERSION_NUMBER < 100
#  error "expected gshard 0.1.0 or later"
#endif

int main(void) {
    gs_ctx *ctx;
    int64_t d[1] = {3};
    float x[3] = {1, 2, 3}, y[3];
    const void *in[1] = {x};
    void *out[1] = {y};
    if (gs_ctx_create(NULL, &ctx) != GS_OK) return 1;
    gs_graph *g = gs_graph_new(ctx, "twice");
    gs_value *p = gs_parameter(g, -1, gs_shape_make(GS_F32, 1, d), "x");
    gs_graph_set_root(g, gs_add(g, p, p));
    if (gs_eval(g, in, out) != GS_OK || y[0] != 2 || y[2] != 6) return 1;
    gs_ctx_destroy(ctx);
    printf("gshard %s\n", gs_version());
    return strcmp(gs_version(), GS_VERSION_STRING) != 0;
}
