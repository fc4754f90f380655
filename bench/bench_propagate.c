/* bench_propagate.c -- time of sharding propagation (gs_propagate) on a generated transformer-like graph.
 *
 *   cc -std=c99 -O3 -march=native -I. bench/bench_propagate.c -o bench_propagate -lpthread -lm
 *
 * The graph: L pre-norm transformer layers on x f32[batch, seq, model], each with its own weights:
 *   layer norm (reduce-sum mean and variance, broadcasts, rsqrt, scale and shift),
 *   Q/K/V projections (einsum to [b,s,h*k], reshape to [b,s,h,k]), K transposed to [b,h,k,s],
 *   scores einsum, softmax (reduce-max, subtract, exp, reduce-sum, divide), context einsum, transpose and
 *   reshape back, output projection, residual add,
 *   layer norm, MLP (einsum, bias, tanh, einsum), residual add.
 * Annotations, as a user writes them on a 2-D mesh ("data", "model"): the input activations split on batch
 * over "data"; the weights split Megatron-style over "model" (Q/K/V and the first MLP matrix by columns,
 * the output projection and the second MLP matrix by rows, the MLP bias by its only dim). By default every
 * layer's weights are annotated; argv "first" annotates the first layer's weights only. Layer-norm scales
 * and shifts are never annotated. Everything else (over 90% of the instructions) is left to propagation.
 * The full-size graph has L layers, the smallest multiple of 4 that gives at least 10,000 instructions
 * (108 layers, 10,262 instructions with every layer annotated); the half and quarter sizes have L/2 and L/4.
 *
 * Device counts 2, 64 and 2048 on meshes 1x2, 8x8 and 32x64 (data x model); argv "dp2" makes D = 2 a 2x1
 * mesh instead. Shapes are the same at every D and divisible by every mesh axis.
 *
 * Each timing is the best of 5 runs, each on a fresh context and graph; only the gs_propagate call is
 * timed (the graph is built and verified before). After the runs, the propagated shardings are compared
 * across D: for every instruction, which mesh axes split each of its dims must be the same at every D
 * (at D = 2 only the axis of size 2 can appear). "OK" or "MISMATCH" is printed; the exit status is 1 on a
 * mismatch or an error, never because of speed. argv "quick": one run per cell instead of 5. */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 199309L
#endif
#ifndef GSHARD_EXTERNAL_IMPL   /* the Makefile links gshard_impl.c instead */
#define GSHARD_IMPLEMENTATION
#endif
#include "gshard.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* batch, sequence, model width, heads, head width, MLP width: divisible by data <= 32 and model <= 64 */
#define NB 4096
#define NS 512
#define NM 1024
#define NH 64
#define NK 16
#define NF 4096

#define MIN_VALUES 10000   /* instructions in the full-size graph, at least */
#define N_SIZES 3
#define N_DEV 3
#define N_PROBES 7
#define AXIS_DATA 1u
#define AXIS_MODEL 2u
#define AXIS_ODD 4u   /* tile count is not a product of mesh axis sizes, or an unexpected layout */

static const int probe_rank_of[N_PROBES] = {3, 3, 4, 4, 2, 2, 3};
static const char *const probe_label[N_PROBES] = {
    "last layer: MLP output (einsum bsf,fm->bsm)",
    "last layer: MLP activation tanh(h)",
    "last layer: attention probabilities",
    "last layer: Q after reshape to heads",
    "last layer: layer-norm rstd",
    "last layer: Wq parameter",
    "root: last residual add",
};

static double now_sec(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct net {
    gs_ctx *ctx;
    gs_graph *g;
    const gs_mesh *mesh;
    int annotate_all;
    int layer;
    gs_value *probe[N_PROBES];
} net;

static gs_shape shp(int rank, int64_t a, int64_t b, int64_t c, int64_t d) {
    int64_t dims[4];
    dims[0] = a;
    dims[1] = b;
    dims[2] = c;
    dims[3] = d;
    return gs_shape_make(GS_F32, rank, dims);
}

/* A weight (or other parameter); annotated with spec when spec is given and this layer is annotated. */
static gs_value *param(net *n, gs_shape s, const char *what, const char *spec, gs_value **raw) {
    char name[64];
    gs_value *p;
    snprintf(name, sizeof name, "%s.%d", what, n->layer);
    p = gs_parameter(n->g, -1, s, name);
    if (raw) *raw = p;
    if (spec && (n->annotate_all || n->layer == 0)) return gs_mesh_split(n->g, p, n->mesh, spec);
    return p;
}

/* broadcast(y) to shape `to`: y's dims map to the leading (lead = 1) or the trailing dims of `to` */
static gs_value *bcast(net *n, gs_value *y, gs_shape to, int lead) {
    int64_t dims[GS_MAX_RANK];
    gs_shape ys = gs_value_shape(y);
    int d;
    for (d = 0; d < ys.rank; d++) dims[d] = lead ? d : to.rank - ys.rank + d;
    return gs_broadcast(n->g, y, to, dims);
}

static gs_value *splat(net *n, gs_shape to, double v) {
    return bcast(n, gs_scalar(n->g, GS_F32, v), to, 1);
}

/* layer norm over the last dim of x [b, s, m] */
static gs_value *layer_norm(net *n, gs_value *x, const char *tag, gs_value **rstd_out) {
    gs_graph *g = n->g;
    const int64_t last[1] = {2};
    gs_shape xs = shp(3, NB, NS, NM, 0), rs = shp(2, NB, NS, 0, 0);
    char nm[16];
    gs_value *gamma, *beta, *mean, *xc, *var, *rstd, *y;
    snprintf(nm, sizeof nm, "%s_scale", tag);
    gamma = param(n, shp(1, NM, 0, 0, 0), nm, NULL, NULL);
    snprintf(nm, sizeof nm, "%s_shift", tag);
    beta = param(n, shp(1, NM, 0, 0, 0), nm, NULL, NULL);
    mean = gs_div(g, gs_reduce(g, x, gs_scalar(g, GS_F32, 0), GS_REDUCE_SUM, 1, last), splat(n, rs, NM));
    xc = gs_sub(g, x, bcast(n, mean, xs, 1));
    var = gs_div(g, gs_reduce(g, gs_mul(g, xc, xc), gs_scalar(g, GS_F32, 0), GS_REDUCE_SUM, 1, last), splat(n, rs, NM));
    rstd = gs_unary(g, GS_OP_RSQRT, gs_add(g, var, splat(n, rs, 1e-5)));
    if (rstd_out) *rstd_out = rstd;
    y = gs_mul(g, xc, bcast(n, rstd, xs, 1));
    y = gs_mul(g, y, bcast(n, gamma, xs, 0));
    return gs_add(g, y, bcast(n, beta, xs, 0));
}

/* y [b, s, m] -> [b, s, h, k] through a [m, h*k] weight */
static gs_value *head_proj(net *n, gs_value *y, const char *what, gs_value **raw) {
    const int64_t heads[4] = {NB, NS, NH, NK};
    gs_value *w = param(n, shp(2, NM, NH * NK, 0, 0), what, "_, model", raw);
    return gs_reshape(n->g, gs_einsum(n->g, "bsm,mn->bsn", y, w), 4, heads);
}

static gs_value *layer(net *n, gs_value *x, int last) {
    gs_graph *g = n->g;
    const int64_t perm_k[4] = {0, 2, 3, 1}, perm_c[4] = {0, 2, 1, 3}, flat[3] = {NB, NS, NH * NK};
    const int64_t keys[1] = {3};
    gs_shape ss = shp(4, NB, NH, NS, NS), hs = shp(3, NB, NS, NF, 0);
    gs_value *y, *q, *k, *v, *s, *mx, *e, *den, *p, *c, *o, *x1, *h, *a, *o2, *x2, *wq_raw, *rstd;
    /* attention */
    y = layer_norm(n, x, "ln1", &rstd);
    q = head_proj(n, y, "wq", &wq_raw);
    k = gs_transpose(g, head_proj(n, y, "wk", NULL), perm_k);             /* [b, h, k, s] */
    v = head_proj(n, y, "wv", NULL);
    s = gs_einsum(g, "bshk,bhkt->bhst", q, k);
    s = gs_mul(g, s, splat(n, ss, 1.0 / sqrt((double)NK)));
    mx = gs_reduce(g, s, gs_scalar(g, GS_F32, -INFINITY), GS_REDUCE_MAX, 1, keys);
    e = gs_exp(g, gs_sub(g, s, bcast(n, mx, ss, 1)));
    den = gs_reduce(g, e, gs_scalar(g, GS_F32, 0), GS_REDUCE_SUM, 1, keys);
    p = gs_div(g, e, bcast(n, den, ss, 1));
    c = gs_einsum(g, "bhst,bthk->bhsk", p, v);
    c = gs_reshape(g, gs_transpose(g, c, perm_c), 3, flat);                 /* [b, s, h*k] */
    o = gs_einsum(g, "bsn,nm->bsm", c, param(n, shp(2, NH * NK, NM, 0, 0), "wo", "model, _", NULL));
    x1 = gs_add(g, x, o);
    /* MLP */
    y = layer_norm(n, x1, "ln2", NULL);
    h = gs_einsum(g, "bsm,mf->bsf", y, param(n, shp(2, NM, NF, 0, 0), "w1", "_, model", NULL));
    h = gs_add(g, h, bcast(n, param(n, shp(1, NF, 0, 0, 0), "b1", "model", NULL), hs, 0));
    a = gs_unary(g, GS_OP_TANH, h);
    o2 = gs_einsum(g, "bsf,fm->bsm", a, param(n, shp(2, NF, NM, 0, 0), "w2", "model, _", NULL));
    x2 = gs_add(g, x1, o2);
    if (last) {
        n->probe[0] = o2;
        n->probe[1] = a;
        n->probe[2] = p;
        n->probe[3] = q;
        n->probe[4] = rstd;
        n->probe[5] = wq_raw;
        n->probe[6] = x2;
    }
    return x2;
}

/* A fresh context and graph of `layers` layers on a data x model mesh; 0 on success. */
static int build(net *n, int layers, int64_t data, int64_t model, int annotate_all) {
    const char *axes[2] = {"data", "model"};
    int64_t sizes[2];
    gs_value *x;
    int l;
    memset(n, 0, sizeof *n);
    sizes[0] = data;
    sizes[1] = model;
    if (gs_ctx_create(NULL, &n->ctx) != GS_OK) return 1;
    n->g = gs_graph_new(n->ctx, "transformer");
    n->mesh = gs_mesh_new(n->ctx, 2, axes, sizes, NULL);
    n->annotate_all = annotate_all;
    gs_graph_set_num_partitions(n->g, data * model);
    x = gs_mesh_split(n->g, gs_parameter(n->g, -1, shp(3, NB, NS, NM, 0), "x"), n->mesh, "data, _, _");
    for (l = 0; l < layers; l++) {
        n->layer = l;
        x = layer(n, x, l == layers - 1);
    }
    if (x) gs_graph_set_root(n->g, x);
    if (gs_ctx_error(n->ctx) != GS_OK || gs_graph_verify(n->g) != GS_OK) {
        fprintf(stderr, "building the graph failed: %s\n", gs_ctx_error_msg(n->ctx));
        gs_ctx_destroy(n->ctx);
        n->ctx = NULL;
        return 1;
    }
    return 0;
}

/* Which mesh axes split data dim d of s (iota mesh: device = data_index * model + model_index). */
static unsigned dim_axes(const gs_sharding *s, int d, int64_t data, int64_t model) {
    int64_t dims[GS_MAX_TILE_RANK], idx[GS_MAX_TILE_RANK], dev0, k, want = 1;
    gs_subgroup sub[2];
    int nd, i;
    unsigned m = 0;
    if (gs_sharding_get_kind(s) != GS_SHARDING_TILED) return 0;
    nd = gs_sharding_tile_shape(s, dims, sub);
    for (i = 0; i < nd; i++) idx[i] = 0;
    dev0 = gs_sharding_device_at(s, idx);
    for (k = 1; k < dims[d]; k++) {
        int64_t dev;
        idx[d] = k;
        dev = gs_sharding_device_at(s, idx);
        if (dev / model != dev0 / model) m |= AXIS_DATA;
        if (dev % model != dev0 % model) m |= AXIS_MODEL;
    }
    if (m & AXIS_DATA) want *= data;
    if (m & AXIS_MODEL) want *= model;
    if (want != dims[d]) m |= AXIS_ODD;
    return m;
}

static const char *axes_text(unsigned m) {
    switch (m) {
    case 0: return "_";
    case AXIS_DATA: return "data";
    case AXIS_MODEL: return "model";
    case AXIS_DATA | AXIS_MODEL: return "(data,model)";
    default: return "?";
    }
}

/* one cell's results */
typedef struct cell {
    double best_ms;
    int n_values;
    unsigned char *axes;            /* n_values * GS_MAX_RANK */
    char *probe_text[N_PROBES];
    unsigned char probe_axes[N_PROBES][GS_MAX_RANK];
    int origin_count[5];
} cell;

static char *dup_str(const char *s) {
    size_t len = strlen(s ? s : "(null)");
    char *r = (char *)malloc(len + 1);
    if (r) memcpy(r, s ? s : "(null)", len + 1);
    return r;
}

static void record(cell *c, net *n, int64_t data, int64_t model) {
    int i, d, nv = gs_graph_num_values(n->g);
    c->n_values = nv;
    c->axes = (unsigned char *)calloc((size_t)nv * GS_MAX_RANK, 1);
    for (i = 0; i < nv; i++) {
        gs_value *v = gs_graph_value(n->g, i);
        const gs_sharding *s = gs_value_sharding(v);
        gs_shape vs = gs_value_shape(v);
        c->origin_count[gs_value_sharding_origin(v).kind]++;
        for (d = 0; d < vs.rank && c->axes; d++) c->axes[(size_t)i * GS_MAX_RANK + (size_t)d] = (unsigned char)dim_axes(s, d, data, model);
    }
    for (i = 0; i < N_PROBES; i++) {
        const gs_sharding *s = gs_value_sharding(n->probe[i]);
        c->probe_text[i] = dup_str(gs_sharding_to_text(n->ctx, s));
        for (d = 0; d < probe_rank_of[i]; d++) c->probe_axes[i][d] = (unsigned char)dim_axes(s, d, data, model);
    }
}

int main(int argc, char **argv) {
    int quick = 0, annotate_all = 1, dp2 = 0, reps, si, di, r, i, d, bad = 0, full_layers;
    int64_t mesh[N_DEV][2] = {{1, 2}, {8, 8}, {32, 64}};
    int layers[N_SIZES];
    static cell cells[N_SIZES][N_DEV];
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "quick") == 0) quick = 1;
        else if (strcmp(argv[i], "first") == 0) annotate_all = 0;
        else if (strcmp(argv[i], "dp2") == 0) dp2 = 1;
        else {
            fprintf(stderr, "usage: %s [quick] [first] [dp2]\n", argv[0]);
            return 2;
        }
    }
    if (dp2) {
        mesh[0][0] = 2;
        mesh[0][1] = 1;
    }
    reps = quick ? 1 : 5;
    /* the full size: the smallest multiple of 4 layers with at least MIN_VALUES instructions */
    {
        net n;
        int one, two, per;
        if (build(&n, 1, mesh[0][0], mesh[0][1], annotate_all)) return 1;
        one = gs_graph_num_values(n.g);
        gs_ctx_destroy(n.ctx);
        if (build(&n, 2, mesh[0][0], mesh[0][1], annotate_all)) return 1;
        two = gs_graph_num_values(n.g);
        gs_ctx_destroy(n.ctx);
        per = two - one;
        full_layers = per > 0 ? 1 + (MIN_VALUES - one + per - 1) / per : 4;
        full_layers = (full_layers + 3) / 4 * 4;
    }
    layers[0] = full_layers / 4;
    layers[1] = full_layers / 2;
    layers[2] = full_layers;

    printf("gs_propagate on a transformer-like graph: x f32[%d,%d,%d], %d heads of %d, MLP %d; weights of %s annotated\n",
           NB, NS, NM, NH, NK, NF, annotate_all ? "every layer" : "the first layer only");
    printf("best of %d runs, fresh context and graph each, only the gs_propagate call timed\n\n", reps);

    for (si = 0; si < N_SIZES; si++)
        for (di = 0; di < N_DEV; di++) {
            cell *c = &cells[si][di];
            c->best_ms = 1e30;
            for (r = 0; r < reps; r++) {
                net n;
                gs_propagate_desc pd;
                gs_result res;
                double t0, t1;
                if (build(&n, layers[si], mesh[di][0], mesh[di][1], annotate_all)) return 1;
                pd.num_devices = mesh[di][0] * mesh[di][1];
                t0 = now_sec();
                res = gs_propagate(n.g, &pd);
                t1 = now_sec();
                if (res != GS_OK) {
                    fprintf(stderr, "gs_propagate failed (%s): %s\n", gs_result_str(res), gs_ctx_error_msg(n.ctx));
                    gs_ctx_destroy(n.ctx);
                    return 1;
                }
                if ((t1 - t0) * 1e3 < c->best_ms) c->best_ms = (t1 - t0) * 1e3;
                if (r == reps - 1) record(c, &n, mesh[di][0], mesh[di][1]);
                gs_ctx_destroy(n.ctx);
            }
        }

    /* the table */
    printf("%-13s %-7s", "instructions", "layers");
    for (di = 0; di < N_DEV; di++) {
        char hdr[32];
        snprintf(hdr, sizeof hdr, "D=%lld (%lldx%lld)", (long long)(mesh[di][0] * mesh[di][1]), (long long)mesh[di][0],
                 (long long)mesh[di][1]);
        printf(" %15s", hdr);
    }
    printf(" %14s\n", "t(2048)/t(2)");
    for (si = 0; si < N_SIZES; si++) {
        printf("%-13d %-7d", cells[si][0].n_values, layers[si]);
        for (di = 0; di < N_DEV; di++) printf(" %12.2f ms", cells[si][di].best_ms);
        printf(" %14.2f\n", cells[si][N_DEV - 1].best_ms / cells[si][0].best_ms);
    }
    printf("%-21s", "t(full)/t(quarter)");
    for (di = 0; di < N_DEV; di++) printf(" %15.2f", cells[N_SIZES - 1][di].best_ms / cells[0][di].best_ms);
    printf("   (instructions: %.2f)\n", (double)cells[N_SIZES - 1][0].n_values / (double)cells[0][0].n_values);
    printf("%-21s", "us per instruction");
    for (di = 0; di < N_DEV; di++) printf(" %15.2f", 1e3 * cells[N_SIZES - 1][di].best_ms / cells[N_SIZES - 1][di].n_values);
    printf("   (full size)\n\n");

    {
        const cell *c = &cells[N_SIZES - 1][N_DEV - 1];
        printf("where the %d shardings of the full graph at D=2048 came from: %d annotated, %d forward, %d backward, "
               "%d left replicated\n\n", c->n_values, c->origin_count[GS_ORIGIN_USER], c->origin_count[GS_ORIGIN_FORWARD],
               c->origin_count[GS_ORIGIN_BACKWARD], c->origin_count[GS_ORIGIN_DEFAULT]);
    }

    /* probes of the full graph at every D */
    for (i = 0; i < N_PROBES; i++) {
        printf("%s\n", probe_label[i]);
        for (di = 0; di < N_DEV; di++) {
            const cell *c = &cells[N_SIZES - 1][di];
            printf("  D=%-5lld [", (long long)(mesh[di][0] * mesh[di][1]));
            for (d = 0; d < probe_rank_of[i]; d++) printf("%s%s", d ? ", " : "", axes_text(c->probe_axes[i][d]));
            printf("]  %s\n", c->probe_text[i]);
        }
    }

    /* the same dims split by the same axes at every D, for every instruction (the reference: D=2048) */
    printf("\n");
    for (si = 0; si < N_SIZES; si++) {
        const cell *ref = &cells[si][N_DEV - 1];
        int mismatches = 0;
        for (di = 0; di < N_DEV; di++) {
            const cell *c = &cells[si][di];
            unsigned live = (mesh[di][0] > 1 ? AXIS_DATA : 0u) | (mesh[di][1] > 1 ? AXIS_MODEL : 0u) | AXIS_ODD;
            if (!c->axes || !ref->axes || c->n_values != ref->n_values) {
                mismatches++;
                continue;
            }
            for (i = 0; i < c->n_values; i++)
                for (d = 0; d < GS_MAX_RANK; d++) {
                    size_t at = (size_t)i * GS_MAX_RANK + (size_t)d;
                    unsigned want = ref->axes[at] & live, got = c->axes[at];
                    if (got != want || (ref->axes[at] & AXIS_ODD)) {
                        if (mismatches < 5)
                            printf("  value %d dim %d: %s at D=%lld, %s at D=2048\n", i, d, axes_text(got),
                                   (long long)(mesh[di][0] * mesh[di][1]), axes_text(ref->axes[at]));
                        mismatches++;
                    }
                }
        }
        printf("%d instructions: split dims across D = 2, 64, 2048: %s", ref->n_values, mismatches ? "MISMATCH" : "OK");
        if (mismatches) printf(" (%d dims differ)", mismatches);
        printf("\n");
        if (mismatches) bad = 1;
    }

    for (si = 0; si < N_SIZES; si++)
        for (di = 0; di < N_DEV; di++) {
            free(cells[si][di].axes);
            for (i = 0; i < N_PROBES; i++) free(cells[si][di].probe_text[i]);
        }
    return bad;
}
