/* test_spmd_window.c - windowed ops under spatial sharding: a differential fuzzer and hand-checked cases.

   The fuzzer builds one small program per seed around the ops whose result element i reads operand elements
   near i (or elsewhere along the same dim): reduce-window, convolution, slice, pad, concatenate, reverse and
   reshape, and chains of two or three of them. Shardings split exactly those dims - the windowed, sliced, padded,
   concatenated, reversed, merged or split dims - most of the time, over a 1-D or 2-D mesh of D = 1..8 devices
   in a random order, sometimes with a second mesh axis on another dim or left over as partial replication, with
   sizes that mostly do not divide D. The operand and the result are both annotated (or only one of them), as an
   attribute of the value itself or through an annotation instruction, so that the split lands on the op's
   windowed dim. The program is partitioned with gs_partition and checked with gs_partition_check (poisoned
   padding, locate on) against the reference interpreter.

   Case kinds (weights in wz_kinds):
     reduce-window  sum, max, min over f32 or s32, rank 1-4, one or two windowed dims: size 1-7, stride 1-3,
                    padding -2..4 each side, base and window dilation 1-3; the init is the identity, or sometimes
                    another constant or a parameter (combined once per output, never per padding position)
     convolution    1 or 2 spatial dims, random dim orders for input, kernel and output, kernel size 1-7, stride
                    1-3, padding -2..4, lhs and rhs dilation 1-3, feature_group_count 1-3 or batch_group_count
                    1-2; the result split spatially, or lhs and kernel both split along a spatial dim (the
                    backprop-filter shape: a long kernel, a short result), or batch / output-feature splits
                    together with spatial ones on a 2-D mesh
     slice          start, limit and stride 1-3 along split dims, often far from the first device's shard
     pad            low/high edge padding -2..4 and interior padding 0-2, and (one dim in five) pads that keep
                    the size and only move the data; the value a constant or a parameter
     concatenate    2-3 operands of sizes 1-20 along a split dim, each with its own sharding
     reverse        split dims of even and uneven sizes
     reshape        a split dim merged with its minor neighbour or split in two, uneven ([3,2] -> [6] on 2
                    devices, [6] -> [3,2], [5,3] -> [15] on 4, random others)
     chain          2-3 of the above one after another (the first may be a convolution), so that a result whose
                    padding holds garbage feeds the next windowed op; intermediate results are sometimes outputs

   Tolerances are derived, not guessed. Float inputs are multiples of 1/8 in [-2, 2], s32 inputs lie in
   [-8, 8]. Every value carries whether it is an exact dyadic number (a multiple of 2^-f below 2^e with f + e
   <= 24, so that any sum of such numbers is exact in any order), a bound on its magnitude and a bound on
   |partitioned - reference|. Data movement, max and min keep what they get; a sum of n terms that is not exact
   adds 2 * gamma(n) * n * |term| with gamma(n) = n u / (1 - n u), u = 2^-24 (a reordered sum's worst case). The
   case's atol is the largest bound (1e-30 when everything is exact, which is nearly always: results are then
   compared bit for bit) and rtol is 1e-12. Integer sums are exact in any order (modulo 2^32).

   At the end of a run one line gives the cases per kind and, over every SPMD program, the collective-permutes,
   all-gathers, all-to-alls and all-reduces it holds (the runtime lists every collective instruction of a
   program, loop bodies included) and the programs with partition warnings (a full rematerialization): it shows
   whether windowed ops move halos or gather.

   Environment:
     GST_WFUZZ_COUNT=N     cases to run (default 3000; `make fuzz-window` runs 100000)
     GST_WFUZZ_SEED=S      the first seed (default 1); case i uses seed S + i
     GST_WFUZZ_VERBOSE=1   print every program, its SPMD program, its partition warnings and the result
     GST_WFUZZ_KINDS=list  only these case kinds (comma-separated names as above; "-name" removes a kind)
     GST_WFUZZ_DEVICES=D   only D devices (1 to 8)
     GST_WFUZZ_SHOW=K      print at most K failures in full (default 5)
   Every failure prints its seed and the command that reproduces it; a failing chain also shows its shortest
   failing prefix. The random generator, the value bookkeeping, the case's finishing and the runner are shared
   with the general fuzzer (fuzz_common.h); the steps, meshes and shardings below are this fuzzer's own. */
#include "fuzz_common.h"

/* ---- case kinds ---- */
enum { WZ_RW, WZ_CONV, WZ_SLICE, WZ_PAD, WZ_CONCAT, WZ_REVERSE, WZ_RESHAPE, WZ_CHAIN, WZ_N_KINDS };
static const fc_kind wz_kinds[WZ_N_KINDS] = {
    {"reduce-window", 4}, {"convolution", 4}, {"slice", 2}, {"pad", 2},
    {"concatenate", 2},   {"reverse", 1},     {"reshape", 2}, {"chain", 3},
};

#define WZ_MAX_D 8
#define WZ_MAX_VALS 24
#define WZ_MAX_PARAMS 12
#define WZ_MAX_STEPS 3
#define WZ_NUMEL_CAP 2048     /* elements of any array of a case */

/* A mesh of one or two axes over the D devices: dev is row-major over the axes. */
typedef struct wz_mesh {
    int n_axes;
    int64_t size[2];
    int64_t dev[WZ_MAX_D];
} wz_mesh;

/* Which values get a user sharding in a step: the operand(s) and the result, or only one side. */
enum { WZ_ANN_BOTH, WZ_ANN_OPERAND, WZ_ANN_RESULT };

typedef struct wz {
    gs_ctx *ctx;
    gs_graph *g;
    uint64_t rng;
    int64_t D;
    wz_mesh mesh;
    fc_val vals[WZ_MAX_VALS];
    bool annotated[WZ_MAX_VALS];   /* value i carries a user sharding (attribute or annotation instruction) */
    int n;
    int n_params;
    int steps;
    /* the map of the last operand sharding (mesh axis -> tensor dim, -1 = replication), for results that keep
       the operand's dims */
    int last_map[2];
    wz_mesh last_mesh;
    bool have_last;
    int canon;                /* reshape: a named case (1..4), 0 = random */
} wz;

static gs_shape wz_shape(const wz *z, int i) { return gs_value_shape(z->vals[i].v); }

/* Appends v with what is known about it; returns its index, or -1 (the context's error says why). */
static int wz_push(wz *z, gs_value *v, fc_val info) { return fc_push(z->vals, &z->n, WZ_MAX_VALS, v, info); }

/* ---- meshes and shardings ---- */
static void wz_mesh_draw(wz *z, wz_mesh *m) {
    int64_t i;
    memset(m, 0, sizeof *m);
    m->n_axes = 1;
    m->size[0] = z->D;
    m->size[1] = 1;
    if (z->D >= 4 && fc_one_in(&z->rng, 2)) {
        int64_t divs[WZ_MAX_D], nd = 0, a;
        for (a = 2; a < z->D; a++)
            if (z->D % a == 0) divs[nd++] = a;
        if (nd > 0) {
            a = divs[fc_int(&z->rng, 0, nd - 1)];
            m->n_axes = 2;
            m->size[0] = a;
            m->size[1] = z->D / a;
        }
    }
    for (i = 0; i < z->D; i++) m->dev[i] = i;
    if (fc_one_in(&z->rng, 2)) fc_shuffle(&z->rng, m->dev, z->D);
}

/* The sharding that splits tensor dim map[a] along mesh axis a (-1: the axis replicates). Axes that land on one
   dim split it together (the first axis major). */
static const gs_sharding *wz_sharding_map(wz *z, const wz_mesh *m, int rank, const int *map) {
    int64_t tiles[GS_MAX_RANK + 1], devs[WZ_MAX_D], idx[GS_MAX_RANK + 1], c[2], rep = 1;
    int a, d, n_dims;
    gs_subgroup sub = GS_SUBGROUP_REPLICATED;
    for (d = 0; d < rank; d++) tiles[d] = 1;
    for (a = 0; a < m->n_axes; a++) {
        if (map[a] >= 0) tiles[map[a]] *= m->size[a];
        else rep *= m->size[a];
    }
    n_dims = rank;
    if (rep > 1) tiles[n_dims++] = rep;
    for (c[0] = 0; c[0] < m->size[0]; c[0]++)
        for (c[1] = 0; c[1] < m->size[1]; c[1]++) {
            int64_t flat = 0;
            for (d = 0; d < n_dims; d++) idx[d] = 0;
            for (a = 0; a < m->n_axes; a++) {
                int t = map[a] >= 0 ? map[a] : rank;
                idx[t] = idx[t] * m->size[a] + c[a];
            }
            for (d = 0; d < n_dims; d++) flat = flat * tiles[d] + idx[d];
            devs[flat] = m->dev[c[0] * m->size[1] + c[1]];
        }
    return gs_sharding_tiled(z->ctx, n_dims, tiles, devs, rep > 1 ? 1 : 0, &sub);
}

/* A random dim of the bit set `dims` (which must not be empty). */
static int wz_pick_bit(wz *z, unsigned dims) {
    int n = 0, d, k;
    for (d = 0; d < 32; d++)
        if (dims & (1u << d)) n++;
    k = (int)fc_int(&z->rng, 0, n - 1);
    for (d = 0; d < 32; d++)
        if ((dims & (1u << d)) && k-- == 0) return d;
    return 0;
}

/* A map of the mesh axes onto a rank-`rank` tensor: mostly onto the preferred dims, else any dim or none. */
static void wz_map_draw(wz *z, const wz_mesh *m, int rank, unsigned prefer, int *map) {
    int a;
    prefer &= (1u << rank) - 1;
    for (a = 0; a < 2; a++) map[a] = -1;
    for (a = 0; a < m->n_axes; a++) {
        int r = (int)fc_int(&z->rng, 0, 9);
        unsigned p = prefer;
        /* the second axis often splits another preferred dim (two windowed dims split: corner halos) */
        if (a == 1 && map[0] >= 0 && (p & ~(1u << map[0])) && fc_one_in(&z->rng, 2)) p &= ~(1u << map[0]);
        if (r < (a == 0 ? 8 : 6) && p) map[a] = wz_pick_bit(z, p);
        else if (r < 9) map[a] = (int)fc_int(&z->rng, 0, rank - 1);
        else map[a] = -1;
    }
}

/* The mesh a sharding uses: the case's, or (one in five) the same shape with the devices in another order. */
static const wz_mesh *wz_mesh_for(wz *z, wz_mesh *tmp) {
    if (z->D < 2 || !fc_one_in(&z->rng, 5)) return &z->mesh;
    *tmp = z->mesh;
    fc_shuffle(&z->rng, tmp->dev, z->D);
    return tmp;
}

/* Gives value i a user sharding: as the attribute of the value itself (when it has none yet and attr_ok) or
   through an annotation instruction, which then replaces value i. The map is remembered for the result. */
static void wz_annotate_map(wz *z, int i, const wz_mesh *m, const int *map, bool attr_ok) {
    int rank = wz_shape(z, i).rank, mm[2], ax;
    const gs_sharding *s;
    for (ax = 0; ax < 2; ax++) mm[ax] = map[ax] < rank ? map[ax] : -1;   /* a remembered map of a value of higher rank */
    map = mm;
    s = wz_sharding_map(z, m, rank, map);
    if (!s) return;
    z->last_map[0] = map[0];
    z->last_map[1] = map[1];
    z->last_mesh = *m;
    z->have_last = true;
    if (attr_ok && !z->annotated[i] && fc_one_in(&z->rng, 2)) {
        gs_value_set_sharding(z->vals[i].v, s);
    } else {
        gs_value *a = gs_annotate_sharding(z->g, z->vals[i].v, s);
        if (!a) return;
        z->vals[i].v = a;
    }
    z->annotated[i] = true;
}

/* The operand side of a step: value i gets a sharding preferring `prefer` dims when the mode asks for it (an
   operand that already carries one, the previous step's result, only now and then). */
static void wz_annotate_operand(wz *z, int i, unsigned prefer, int mode) {
    wz_mesh tmp;
    const wz_mesh *m;
    int map[2];
    z->have_last = false;
    if (mode == WZ_ANN_RESULT) return;
    if (z->annotated[i] && !fc_one_in(&z->rng, 3)) return;
    m = wz_mesh_for(z, &tmp);
    wz_map_draw(z, m, wz_shape(z, i).rank, prefer, map);
    wz_annotate_map(z, i, m, map, true);
}

/* The result side: a sharding preferring `prefer` dims; when the result's dims are the operand's (same_dims),
   often the operand's own sharding. */
static void wz_annotate_result(wz *z, int i, unsigned prefer, int mode, bool same_dims) {
    wz_mesh tmp;
    const wz_mesh *m;
    int map[2];
    if (mode == WZ_ANN_OPERAND || i < 0) return;
    if (same_dims && z->have_last && fc_one_in(&z->rng, 2)) {
        wz_mesh keep = z->last_mesh;
        int km[2];
        km[0] = z->last_map[0];
        km[1] = z->last_map[1];
        wz_annotate_map(z, i, &keep, km, true);
        return;
    }
    m = wz_mesh_for(z, &tmp);
    wz_map_draw(z, m, wz_shape(z, i).rank, prefer, map);
    wz_annotate_map(z, i, m, map, true);
}

/* ---- leaves ---- */
static int wz_param(wz *z, gs_shape s) {
    gs_value *p;
    if (z->n_params >= WZ_MAX_PARAMS) return -1;
    p = gs_parameter(z->g, -1, s, NULL);
    if (!p) return -1;
    z->n_params++;
    return wz_push(z, p, fc_input_info(s.dtype));
}

/* A scalar of dtype t: a dyadic constant, or (one in three) a parameter. */
static int wz_scalar(wz *z, gs_dtype t) {
    double c;
    if (z->n_params < WZ_MAX_PARAMS && fc_one_in(&z->rng, 3)) return wz_param(z, gs_shape_scalar(t));
    c = t == GS_S32 ? (double)fc_int(&z->rng, -8, 8) : (double)fc_int(&z->rng, -16, 16) / 8;
    return wz_push(z, gs_scalar(z->g, t, c), fc_const_info(t, c));
}

static int64_t wz_numel(int rank, const int64_t *dims) {
    int64_t n = 1;
    int d;
    for (d = 0; d < rank; d++) n *= dims[d];
    return n;
}

/* A random shape: the dims in `big` take 1..24 elements (1..hi_big), the others 1..4; the element count stays
   below the cap (other dims shrink first). */
static gs_shape wz_random_shape(wz *z, gs_dtype t, int rank, unsigned big, int64_t hi_big) {
    int64_t dims[GS_MAX_RANK];
    int d;
    for (d = 0; d < rank; d++) dims[d] = (big & (1u << d)) ? fc_int(&z->rng, 1, hi_big) : fc_int(&z->rng, 1, 4);
    for (d = 0; d < rank && wz_numel(rank, dims) > WZ_NUMEL_CAP / 4; d++)
        if (!(big & (1u << d))) dims[d] = 1;
    for (d = 0; d < rank && wz_numel(rank, dims) > WZ_NUMEL_CAP / 4; d++) dims[d] = (dims[d] + 1) / 2;
    return gs_shape_make(t, rank, dims);
}

/* one or two distinct dims of a rank-r tensor, as a bit set */
static unsigned wz_some_dims(wz *z, int r, int max_n) {
    unsigned m = 1u << fc_int(&z->rng, 0, r - 1);
    if (r > 1 && max_n > 1 && fc_one_in(&z->rng, 3)) m |= 1u << fc_int(&z->rng, 0, r - 1);
    return m;
}

static gs_dtype wz_dtype(wz *z) { return fc_one_in(&z->rng, 3) ? GS_S32 : GS_F32; }

/* ---- steps: each takes value `in` (or, with in < 0, makes its own parameters) and returns the index of its
   result, -1 on a builder error, -2 when it does not apply to that operand ---- */

/* One windowed dim of reduce-window or convolution with an output of >= 1: a plain window (stride 1, no padding,
   no dilation), a "same"-padded one, or (half the time) any size 1-7, stride 1-3, padding -2..4 per side and
   base and window dilation 1-3, each field often at its default so that every combination turns up. */
static gs_window_dim wz_window(wz *z, int64_t n, int64_t max_size) {
    gs_window_dim w = gs_window_default();
    int t;
    for (t = 0; t < 40; t++) {
        int64_t din, dwin;
        int style = (int)fc_int(&z->rng, 0, 3);
        w = gs_window_default();
        w.size = fc_int(&z->rng, style == 0 ? 2 : 1, max_size);
        if (style == 1) {
            w.size |= 1;
            if (w.size > max_size) w.size = max_size;
            w.pad_lo = w.pad_hi = (w.size - 1) / 2;
            w.stride = fc_one_in(&z->rng, 3) ? fc_int(&z->rng, 2, 3) : 1;
        } else if (style >= 2) {
            w.stride = fc_one_in(&z->rng, 2) ? 1 : fc_int(&z->rng, 2, 3);
            w.pad_lo = fc_one_in(&z->rng, 3) ? 0 : fc_int(&z->rng, -2, 4);
            w.pad_hi = fc_one_in(&z->rng, 3) ? 0 : fc_int(&z->rng, -2, 4);
            w.base_dilation = fc_one_in(&z->rng, 3) ? fc_int(&z->rng, 2, 3) : 1;
            w.window_dilation = fc_one_in(&z->rng, 3) ? fc_int(&z->rng, 2, 3) : 1;
        }
        din = (n - 1) * w.base_dilation + 1;
        dwin = (w.size - 1) * w.window_dilation + 1;
        if (din + w.pad_lo + w.pad_hi >= dwin) return w;
    }
    w = gs_window_default();
    w.size = 1;
    w.stride = fc_int(&z->rng, 1, 3);
    return w;
}

static int64_t wz_window_out(const gs_window_dim *w, int64_t n) {
    int64_t din = (n - 1) * w->base_dilation + 1, dwin = (w->size - 1) * w->window_dilation + 1;
    return (din + w->pad_lo + w->pad_hi - dwin) / w->stride + 1;
}

static int wz_step_reduce_window(wz *z, int in, int mode) {
    gs_window_dim w[GS_MAX_RANK];
    int64_t odims[GS_MAX_RANK], n = 1;
    unsigned wd;
    int d, init, kind_pick, r;
    gs_shape s;
    gs_dtype t;
    gs_reduce_kind kind;
    fc_val x;
    if (in < 0) {
        int rank = (int)fc_int(&z->rng, 1, 4);
        wd = wz_some_dims(z, rank, 2);
        in = wz_param(z, wz_random_shape(z, wz_dtype(z), rank, wd, 24));
        if (in < 0) return -1;
    } else {
        if (wz_shape(z, in).rank < 1) return -2;
        wd = wz_some_dims(z, wz_shape(z, in).rank, 2);
    }
    s = wz_shape(z, in);
    t = s.dtype;
    for (d = 0; d < s.rank; d++) {
        w[d] = gs_window_default();
        if (wd & (1u << d)) w[d] = wz_window(z, s.dims[d], 7);
        odims[d] = wz_window_out(&w[d], s.dims[d]);
        n *= w[d].size;
    }
    if (wz_numel(s.rank, odims) > WZ_NUMEL_CAP) return -2;
    kind_pick = (int)fc_int(&z->rng, 0, 2);
    kind = kind_pick == 0 ? GS_REDUCE_SUM : kind_pick == 1 ? GS_REDUCE_MAX : GS_REDUCE_MIN;
    /* the init: the identity, or (one in four) another constant or a parameter */
    if (fc_one_in(&z->rng, 4)) {
        init = wz_scalar(z, t);
    } else {
        fc_val info;
        double c = kind == GS_REDUCE_SUM ? 0 : kind == GS_REDUCE_MAX ? (t == GS_S32 ? -2147483648.0 : -HUGE_VAL)
                                                                        : (t == GS_S32 ? 2147483647.0 : HUGE_VAL);
        memset(&info, 0, sizeof info);
        info.dy = true;
        init = wz_push(z, gs_scalar(z->g, t, c), info);
    }
    if (init < 0) return -1;
    wz_annotate_operand(z, in, wd, mode);
    x = z->vals[in];
    r = wz_push(z, gs_reduce_window(z->g, x.v, z->vals[init].v, kind, w),
                kind == GS_REDUCE_SUM ? fc_sum(t, n + 1, fc_either(x, z->vals[init])) : fc_either(x, z->vals[init]));
    if (r >= 0 && kind != GS_REDUCE_SUM && z->vals[init].mag == HUGE_VAL) z->vals[r].mag = x.mag;
    wz_annotate_result(z, r, wd, mode, true);
    return r;
}

/* Convolution (only as a first step: it makes its own input and kernel). Roles of the mesh axes: B (batch), F
   (output feature; the kernel's output feature), S0, S1 (spatial dims of input, kernel and output). */
enum { WZ_R_B, WZ_R_F, WZ_R_S0, WZ_R_S1, WZ_R_NONE };

static int wz_step_convolution(wz *z, int mode) {
    gs_conv_config cfg;
    int ns = fc_one_in(&z->rng, 3) ? 2 : 1, r = ns + 2, i, a, x_i, k_i, res, flavour;
    bool bpf = fc_one_in(&z->rng, 4);
    int64_t perm[3][GS_MAX_RANK], B, cg, C, O, fgc = 1, bgc = 1, W[2], K = 1;
    int64_t xd[GS_MAX_RANK], kd[GS_MAX_RANK], od[GS_MAX_RANK];
    int role[2], map_x[2], map_k[2], map_o[2];
    wz_mesh tmp;
    const wz_mesh *mx, *mo;
    fc_val term;
    memset(&cfg, 0, sizeof cfg);
    /* dim orders: a random permutation each for input, kernel and output */
    for (i = 0; i < 3; i++) {
        for (a = 0; a < r; a++) perm[i][a] = a;
        if (!fc_one_in(&z->rng, 4)) fc_shuffle(&z->rng, perm[i], r);
    }
    cfg.dims.n_spatial = ns;
    cfg.dims.input_batch = perm[0][0];
    cfg.dims.input_feature = perm[0][1];
    cfg.dims.kernel_input_feature = perm[1][0];
    cfg.dims.kernel_output_feature = perm[1][1];
    cfg.dims.output_batch = perm[2][0];
    cfg.dims.output_feature = perm[2][1];
    for (i = 0; i < ns; i++) {
        cfg.dims.input_spatial[i] = perm[0][2 + i];
        cfg.dims.kernel_spatial[i] = perm[1][2 + i];
        cfg.dims.output_spatial[i] = perm[2][2 + i];
    }
    /* groups: feature_group_count 1-3 or batch_group_count 1-2 */
    if (!bpf && fc_one_in(&z->rng, 3)) fgc = fc_int(&z->rng, 2, 3);
    else if (!bpf && fc_one_in(&z->rng, 4)) bgc = 2;
    cfg.feature_group_count = fgc;
    cfg.batch_group_count = bgc;
    B = bgc * fc_int(&z->rng, 1, 3);
    cg = fc_int(&z->rng, 1, fgc > 1 ? 2 : 4);
    C = fgc * cg;
    O = fgc * bgc * fc_int(&z->rng, 1, fgc * bgc > 1 ? 2 : 4);
    for (i = 0; i < ns; i++) {
        gs_window_dim *w = &cfg.window[i];
        if (bpf) {
            /* backprop-filter shape: a long kernel over a long input, a short result */
            int64_t o = fc_int(&z->rng, 1, 4), span;
            W[i] = ns == 1 ? fc_int(&z->rng, 8, 24) : fc_int(&z->rng, 6, 12);
            *w = gs_window_default();
            w->pad_lo = fc_int(&z->rng, 0, 2);
            w->pad_hi = fc_int(&z->rng, 0, 2);
            w->window_dilation = fc_one_in(&z->rng, 3) ? 2 : 1;
            span = W[i] + w->pad_lo + w->pad_hi - o;
            if (span % w->window_dilation) w->window_dilation = 1;
            w->size = span / w->window_dilation + 1;
        } else {
            W[i] = ns == 1 ? fc_int(&z->rng, 1, 24) : fc_int(&z->rng, 1, 12);
            *w = wz_window(z, W[i], 7);
        }
        K *= w->size;
    }
    xd[cfg.dims.input_batch] = B;
    xd[cfg.dims.input_feature] = C;
    kd[cfg.dims.kernel_input_feature] = cg;
    kd[cfg.dims.kernel_output_feature] = O;
    od[cfg.dims.output_batch] = B / bgc;
    od[cfg.dims.output_feature] = O;
    for (i = 0; i < ns; i++) {
        xd[cfg.dims.input_spatial[i]] = W[i];
        kd[cfg.dims.kernel_spatial[i]] = cfg.window[i].size;
        od[cfg.dims.output_spatial[i]] = wz_window_out(&cfg.window[i], W[i]);
    }
    if (wz_numel(r, xd) > WZ_NUMEL_CAP || wz_numel(r, kd) > WZ_NUMEL_CAP || wz_numel(r, od) > WZ_NUMEL_CAP ||
        wz_numel(r, od) * K * cg > 200000)
        return -2;
    x_i = wz_param(z, gs_shape_make(GS_F32, r, xd));
    k_i = wz_param(z, gs_shape_make(GS_F32, r, kd));
    if (x_i < 0 || k_i < 0) return -1;
    /* the mesh axes' roles: result split spatially (with batch / feature on a second axis), lhs and kernel split
       spatially (backprop filter), or batch / feature first */
    flavour = bpf ? 1 : (int)fc_int(&z->rng, 0, 2) == 2 ? 2 : 0;
    for (a = 0; a < 2; a++) {
        int spatial = WZ_R_S0 + (int)fc_int(&z->rng, 0, ns - 1), other = fc_one_in(&z->rng, 2) ? WZ_R_B : WZ_R_F;
        if (a == 0) role[a] = flavour == 2 ? other : spatial;
        else {
            int pick = (int)fc_int(&z->rng, 0, 3);
            /* with two spatial dims the second axis mostly splits the other one */
            if (ns == 2 && role[0] >= WZ_R_S0 && !fc_one_in(&z->rng, 4)) spatial = WZ_R_S0 + WZ_R_S1 - role[0];
            role[a] = flavour == 2 ? spatial : pick < 2 ? other : pick == 2 ? spatial : WZ_R_NONE;
        }
    }
    for (a = 0; a < 2; a++) {
        int ro = role[a];
        map_x[a] = ro == WZ_R_B ? (int)cfg.dims.input_batch
                   : ro >= WZ_R_S0 && ro <= WZ_R_S1 ? (int)cfg.dims.input_spatial[ro - WZ_R_S0] : -1;
        /* the input feature (contracted) now and then */
        if (ro == WZ_R_F && fc_one_in(&z->rng, 4)) map_x[a] = (int)cfg.dims.input_feature;
        map_k[a] = ro == WZ_R_F ? (int)cfg.dims.kernel_output_feature
                   : ro >= WZ_R_S0 && ro <= WZ_R_S1 && (bpf || fc_one_in(&z->rng, 6)) ? (int)cfg.dims.kernel_spatial[ro - WZ_R_S0]
                                                                                  : -1;
        map_o[a] = ro == WZ_R_B ? (int)cfg.dims.output_batch
                   : ro == WZ_R_F ? (int)cfg.dims.output_feature
                   : ro >= WZ_R_S0 && ro <= WZ_R_S1 ? (int)cfg.dims.output_spatial[ro - WZ_R_S0] : -1;
    }
    if (bpf && fc_one_in(&z->rng, 2)) map_o[0] = -1;   /* the small result often not split at all */
    if (mode != WZ_ANN_RESULT) {
        mx = wz_mesh_for(z, &tmp);
        wz_annotate_map(z, x_i, mx, map_x, true);
        if (bpf || fc_one_in(&z->rng, 2)) wz_annotate_map(z, k_i, wz_mesh_for(z, &tmp), map_k, true);
    }
    term = fc_prod(GS_F32, z->vals[x_i], z->vals[k_i]);
    res = wz_push(z, gs_convolution(z->g, z->vals[x_i].v, z->vals[k_i].v, &cfg), fc_sum(GS_F32, K * cg, term));
    if (res >= 0 && mode != WZ_ANN_OPERAND) {
        mo = wz_mesh_for(z, &tmp);
        wz_annotate_map(z, res, mo, map_o, true);
    }
    return res;
}

static int wz_step_slice(wz *z, int in, int mode) {
    int64_t st[GS_MAX_RANK], lim[GS_MAX_RANK], str[GS_MAX_RANK];
    unsigned sd;
    int d, r;
    gs_shape s;
    if (in < 0) {
        int rank = (int)fc_int(&z->rng, 1, 3);
        sd = wz_some_dims(z, rank, 2);
        in = wz_param(z, wz_random_shape(z, wz_dtype(z), rank, sd, 24));
        if (in < 0) return -1;
    } else {
        if (wz_shape(z, in).rank < 1) return -2;
        sd = wz_some_dims(z, wz_shape(z, in).rank, 2);
    }
    s = wz_shape(z, in);
    for (d = 0; d < s.rank; d++) {
        int64_t n = s.dims[d];
        st[d] = 0;
        lim[d] = n;
        str[d] = 1;
        if (!(sd & (1u << d))) continue;
        str[d] = fc_int(&z->rng, 1, 3);
        /* a third of the slices start in the last third: their data lives devices away from the result's */
        st[d] = fc_one_in(&z->rng, 3) ? fc_int(&z->rng, n * 2 / 3, n - 1) : fc_int(&z->rng, 0, n - 1);
        lim[d] = fc_int(&z->rng, st[d] + 1, n);
    }
    wz_annotate_operand(z, in, sd, mode);
    r = wz_push(z, gs_slice(z->g, z->vals[in].v, st, lim, str), z->vals[in]);
    wz_annotate_result(z, r, sd, mode, true);
    return r;
}

static int wz_step_pad(wz *z, int in, int mode) {
    int64_t lo[GS_MAX_RANK], hi[GS_MAX_RANK], it[GS_MAX_RANK], od[GS_MAX_RANK];
    unsigned pd;
    int d, r, pv;
    gs_shape s;
    if (in < 0) {
        int rank = (int)fc_int(&z->rng, 1, 3);
        pd = wz_some_dims(z, rank, 2);
        in = wz_param(z, wz_random_shape(z, wz_dtype(z), rank, pd, 24));
        if (in < 0) return -1;
    } else {
        if (wz_shape(z, in).rank < 1) return -2;
        pd = wz_some_dims(z, wz_shape(z, in).rank, 2);
    }
    s = wz_shape(z, in);
    for (d = 0; d < s.rank; d++) {
        int64_t n = s.dims[d];
        lo[d] = hi[d] = it[d] = 0;
        if ((pd & (1u << d)) && fc_one_in(&z->rng, 5)) {
            /* the size kept, the data moved: a shift, or interior padding cropped away again */
            it[d] = fc_one_in(&z->rng, 3) ? 1 : 0;
            lo[d] = fc_int(&z->rng, -2, 4);
            hi[d] = -lo[d] - (n - 1) * it[d];
        } else if (pd & (1u << d)) {
            lo[d] = fc_int(&z->rng, -2, 4);
            hi[d] = fc_int(&z->rng, -2, 4);
            it[d] = fc_one_in(&z->rng, 2) ? 0 : fc_int(&z->rng, 1, 2);
        }
        od[d] = n + (n - 1) * it[d] + lo[d] + hi[d];
        if (od[d] < 1) {
            hi[d] += 1 - od[d];
            od[d] = 1;
        }
    }
    if (wz_numel(s.rank, od) > WZ_NUMEL_CAP) return -2;
    pv = wz_scalar(z, s.dtype);
    if (pv < 0) return -1;
    wz_annotate_operand(z, in, pd, mode);
    r = wz_push(z, gs_pad(z->g, z->vals[in].v, z->vals[pv].v, lo, hi, it), fc_either(z->vals[in], z->vals[pv]));
    wz_annotate_result(z, r, pd, mode, true);
    return r;
}

static int wz_step_concatenate(wz *z, int in, int mode) {
    gs_value *xs[3];
    int idx[3], n_ops = (int)fc_int(&z->rng, 2, 3), k, r, d, rank, first_new = 0;
    int64_t total = 0;
    gs_shape s;
    fc_val info;
    if (in < 0) {
        rank = (int)fc_int(&z->rng, 1, 3);
        d = (int)fc_int(&z->rng, 0, rank - 1);
        s = wz_random_shape(z, wz_dtype(z), rank, 0, 4);
    } else {
        s = wz_shape(z, in);
        if (s.rank < 1) return -2;
        d = (int)fc_int(&z->rng, 0, s.rank - 1);
        idx[0] = in;
        first_new = 1;
        total = s.dims[d];
    }
    for (k = first_new; k < n_ops; k++) {
        gs_shape u = s;
        u.dims[d] = fc_int(&z->rng, 1, 20);
        total += u.dims[d];
        idx[k] = wz_param(z, u);
        if (idx[k] < 0) return -1;
    }
    s.dims[d] = total;
    if (gs_shape_numel(&s) > WZ_NUMEL_CAP) return -2;
    /* the operands in a random order, each with its own sharding (or the first one's) */
    for (k = n_ops - 1; k > 0; k--) {
        int j = (int)fc_int(&z->rng, 0, k), tmp = idx[k];
        idx[k] = idx[j];
        idx[j] = tmp;
    }
    for (k = 0; k < n_ops; k++) {
        if (k > 0 && z->have_last && mode != WZ_ANN_RESULT && fc_one_in(&z->rng, 2) && !z->annotated[idx[k]]) {
            wz_mesh keep = z->last_mesh;
            int km[2];
            km[0] = z->last_map[0];
            km[1] = z->last_map[1];
            wz_annotate_map(z, idx[k], &keep, km, true);
        } else if (mode != WZ_ANN_RESULT && (k == 0 || fc_one_in(&z->rng, 4) == false)) {
            wz_annotate_operand(z, idx[k], 1u << d, mode);
        }
        xs[k] = z->vals[idx[k]].v;
    }
    info = z->vals[idx[0]];
    for (k = 1; k < n_ops; k++) info = fc_either(info, z->vals[idx[k]]);
    r = wz_push(z, gs_concatenate(z->g, n_ops, xs, d), info);
    wz_annotate_result(z, r, 1u << d, mode, true);
    return r;
}

static int wz_step_reverse(wz *z, int in, int mode) {
    int64_t dims[GS_MAX_RANK];
    unsigned rd;
    int d, n = 0, r;
    if (in < 0) {
        int rank = (int)fc_int(&z->rng, 1, 3);
        rd = wz_some_dims(z, rank, 2);
        in = wz_param(z, wz_random_shape(z, wz_dtype(z), rank, rd, 24));
        if (in < 0) return -1;
    } else {
        if (wz_shape(z, in).rank < 1) return -2;
        rd = wz_some_dims(z, wz_shape(z, in).rank, 2);
    }
    for (d = 0; d < wz_shape(z, in).rank; d++)
        if (rd & (1u << d)) dims[n++] = d;
    wz_annotate_operand(z, in, rd, mode);
    r = wz_push(z, gs_reverse(z->g, z->vals[in].v, n, dims), z->vals[in]);
    wz_annotate_result(z, r, rd, mode, true);
    return r;
}

/* the named reshapes: {input dims, output dims, devices} */
static const struct { int rin, rout; int64_t in[2], out[2], D; } wz_canon[4] = {
    {2, 1, {3, 2}, {6, 0}, 2}, {1, 2, {6, 0}, {3, 2}, 2}, {2, 1, {5, 3}, {15, 0}, 4}, {1, 2, {15, 0}, {5, 3}, 4},
};

static int wz_step_reshape(wz *z, int in, int mode) {
    int64_t od[GS_MAX_RANK];
    int d, r, orank = 0, pos;
    bool merge;
    unsigned pin, pout;
    gs_shape s;
    if (in < 0 && z->canon > 0) {
        int c = z->canon - 1;
        in = wz_param(z, gs_shape_make(wz_dtype(z), wz_canon[c].rin, wz_canon[c].in));
        if (in < 0) return -1;
        merge = wz_canon[c].rin == 2;
        pos = 0;
        if (merge) {
            od[0] = wz_canon[c].out[0];
        } else {
            od[0] = wz_canon[c].out[0];
            od[1] = wz_canon[c].out[1];
        }
        orank = wz_canon[c].rout;
    } else {
        if (in < 0) {
            /* [pre.., a, b, post..] merged, or [pre.., a*b, post..] split */
            int64_t dims[GS_MAX_RANK], a = fc_int(&z->rng, 1, 8), b = fc_int(&z->rng, 1, 6);
            int rank = (int)fc_int(&z->rng, 1, 3), k;
            merge = fc_one_in(&z->rng, 2);
            pos = (int)fc_int(&z->rng, 0, rank - 1);
            for (d = 0, k = 0; d < rank; d++) {
                if (d == pos) {
                    if (merge) {
                        dims[k++] = a;
                        dims[k++] = b;
                    } else {
                        dims[k++] = a * b;
                    }
                } else {
                    dims[k++] = fc_int(&z->rng, 1, 3);
                }
            }
            in = wz_param(z, gs_shape_make(wz_dtype(z), k, dims));
            if (in < 0) return -1;
            if (!merge) orank = fc_split_dim(wz_shape(z, in), pos, a, od);   /* a*b into (a, b) */
        } else {
            s = wz_shape(z, in);
            if (s.rank < 1) return -2;
            merge = s.rank >= 2 && (s.rank >= 4 || fc_one_in(&z->rng, 2));
            pos = (int)fc_int(&z->rng, 0, s.rank - (merge ? 2 : 1));
            if (!merge) {
                int64_t n = s.dims[pos], divs[32], nd = 0, a;
                for (a = 2; a < n && nd < 32; a++)
                    if (n % a == 0) divs[nd++] = a;
                a = nd > 0 ? divs[fc_int(&z->rng, 0, nd - 1)] : (fc_one_in(&z->rng, 2) ? 1 : n);
                orank = fc_split_dim(s, pos, a, od);
            }
        }
        if (merge) orank = fc_merge_dims(wz_shape(z, in), pos, od);
    }
    /* the operand split along the dim(s) the reshape changes (the major one mostly), the result along its own */
    if (merge) {
        pin = fc_one_in(&z->rng, 4) ? 3u << pos : 1u << pos;
        pout = 1u << pos;
    } else {
        pin = 1u << pos;
        pout = fc_one_in(&z->rng, 4) ? 3u << pos : 1u << pos;
    }
    wz_annotate_operand(z, in, pin, mode);
    r = wz_push(z, gs_reshape(z->g, z->vals[in].v, orank, od), z->vals[in]);
    wz_annotate_result(z, r, pout, mode, false);
    return r;
}

static int wz_step(wz *z, int kind, int in, int mode) {
    switch (kind) {
    case WZ_RW: return wz_step_reduce_window(z, in, mode);
    case WZ_CONV: return in < 0 ? wz_step_convolution(z, mode) : -2;
    case WZ_SLICE: return wz_step_slice(z, in, mode);
    case WZ_PAD: return wz_step_pad(z, in, mode);
    case WZ_CONCAT: return wz_step_concatenate(z, in, mode);
    case WZ_REVERSE: return wz_step_reverse(z, in, mode);
    default: return wz_step_reshape(z, in, mode);
    }
}

static int wz_draw_mode(wz *z) {
    int m = (int)fc_int(&z->rng, 0, 4);
    return m <= 2 ? WZ_ANN_BOTH : m == 3 ? WZ_ANN_OPERAND : WZ_ANN_RESULT;
}

/* ---- one case ---- */
/* Builds the case of seed in ctx (see fc_build_fn; the steps of a chain are its steps). */
static bool wz_build(gs_ctx *ctx, uint64_t seed, unsigned kinds, int64_t only_D, int max_steps, fc_program *out,
                     const char **why) {
    wz z;
    int k, n_steps = 1, cur = -1, n_out = 0, tries;
    int step_res[WZ_MAX_STEPS];
    gs_value *outs[WZ_MAX_STEPS];
    uint64_t in_rng;
    memset(&z, 0, sizeof z);
    memset(out, 0, sizeof *out);
    z.ctx = ctx;
    z.rng = seed;
    out->kind = fc_draw_kind(&z.rng, wz_kinds, WZ_N_KINDS, kinds);
    z.D = only_D > 0 ? only_D : fc_int(&z.rng, 1, WZ_MAX_D);
    if (out->kind == WZ_RESHAPE && only_D <= 0 && fc_one_in(&z.rng, 3)) {
        z.canon = (int)fc_int(&z.rng, 1, 4);
        z.D = wz_canon[z.canon - 1].D;
    }
    out->D = z.D;
    out->pd.num_devices = z.D;
    out->threaded = fc_one_in(&z.rng, 16);
    snprintf(out->desc, sizeof out->desc, "%s, %lld devices%s", wz_kinds[out->kind].name, (long long)z.D,
             out->threaded ? " (threaded)" : "");
    in_rng = fc_next(&z.rng);
    wz_mesh_draw(&z, &z.mesh);
    z.g = gs_graph_new(ctx, "window");
    gs_graph_set_num_partitions(z.g, z.D);
    if (out->kind == WZ_CHAIN) n_steps = (int)fc_int(&z.rng, 2, WZ_MAX_STEPS);
    for (z.steps = 0; z.steps < n_steps && (max_steps < 0 || z.steps < max_steps) && !gs_ctx_error(ctx); z.steps++) {
        int r = -2;
        for (tries = 0; tries < 16 && r == -2; tries++) {
            int kind = out->kind;
            if (kind == WZ_CHAIN) {
                /* the first step may be a convolution; later ones take the previous result */
                unsigned later = (1u << WZ_N_KINDS) - 1 - (1u << WZ_CHAIN) - (z.steps > 0 ? 1u << WZ_CONV : 0);
                kind = fc_draw_kind(&z.rng, wz_kinds, WZ_N_KINDS, later);
            }
            r = wz_step(&z, kind, cur, wz_draw_mode(&z));
        }
        if (r < 0) break;
        step_res[z.steps] = r;
        cur = r;
    }
    out->n_steps = z.steps;
    if (gs_ctx_error(ctx) || cur < 0) {
        *why = gs_ctx_error(ctx) ? gs_ctx_error_msg(ctx) : "no step applied";
        return false;
    }
    /* outputs: the last result, and (one chain in three) the earlier results too */
    outs[n_out++] = z.vals[cur].v;
    if (z.steps > 1 && max_steps < 0 && fc_one_in(&z.rng, 3))
        for (k = 0; k < z.steps - 1; k++) outs[n_out++] = z.vals[step_res[k]].v;
    return fc_finish(z.g, n_out, outs, z.vals, z.n, in_rng, out, why);
}

/* the SPMD program must verify; verbose output lists partition warnings; the summary adds the cases per kind and
   the collectives */
static const fc_fuzzer wz_fuzzer = {"WFUZZ", "spmd_window_fuzz", "KINDS", wz_kinds, WZ_N_KINDS, 3000, WZ_MAX_D,
                                    false, true, wz_build, "spmd window fuzz", "cases", "verify errors"};

static void test_spmd_window_fuzz(void) {
    fc_totals T;
    int k;
    fc_run(&wz_fuzzer, &T);
    printf("  cases:");
    for (k = 0; k < WZ_N_KINDS; k++)
        printf(" %s %lld%s", wz_kinds[k].name, T.per_kind[k], k + 1 < WZ_N_KINDS ? "," : "\n");
    printf("  SPMD programs hold %lld collective-permutes, %lld all-gathers, %lld all-to-alls, %lld all-reduces/"
           "reduce-scatters; %lld programs with partition warnings (%lld warnings)\n",
           T.coll[FC_C_PERMUTE], T.coll[FC_C_GATHER], T.coll[FC_C_A2A], T.coll[FC_C_REDUCE], T.warned, T.warnings);
}

/* ---------------------------------------------------------------------------------------------------------
   Hand-checked cases: small programs whose results are written out below (worked by hand from the op's
   definition), gathered from the devices and compared element by element, and also checked with
   gs_partition_check (every device's copy against the reference interpreter).
   ------------------------------------------------------------------------------------------------------- */

/* Partitions g (one output) for D devices, runs it with poisoned padding on global inputs, gathers output 0
   into got (n elements of f32 or s32, chosen by the output's dtype) and checks every copy against gs_eval. */
static void wh_run(gs_graph *g, int64_t D, const void *const *inputs, void *got) {
    gs_ctx *ctx = gs_graph_ctx(g);
    gs_partition_desc pd;
    gs_graph *spmd = NULL;
    gs_runtime_desc rd;
    gs_runtime *rt = NULL;
    gs_shape in_shapes[4], out_shape;
    const gs_sharding *in_sh[4], *out_sh[1];
    void *outs[1];
    gs_check_desc cd;
    gs_check_report rep;
    int k, n_in = gs_graph_num_params(g);
    memset(&pd, 0, sizeof pd);
    pd.num_devices = D;
    CHECK_OK(gs_graph_set_num_partitions(g, D));
    if (gs_partition(g, &pd, &spmd) != GS_OK) {
        gst_failf(__FILE__, __LINE__, "gs_partition: %s", gs_ctx_error_msg(ctx));
        return;
    }
    memset(&rd, 0, sizeof rd);
    rd.num_devices = D;
    rd.mode = GS_RUNTIME_LOCKSTEP;
    rd.check_replicas = true;
    CHECK_OK(gs_runtime_create(ctx, &rd, &rt));
    if (!rt) return;
    for (k = 0; k < n_in && k < 4; k++) {
        in_shapes[k] = gs_value_shape(gs_graph_param(g, k));
        in_sh[k] = gs_partition_param_sharding(spmd, k);
    }
    out_shape = gs_graph_output_shape(g, 0);
    out_sh[0] = gs_partition_output_sharding(spmd, 0);
    outs[0] = got;
    CHECK_OK(gs_runtime_run_global(rt, spmd, in_shapes, in_sh, inputs, &out_shape, out_sh, outs));
    memset(&cd, 0, sizeof cd);
    cd.atol = 1e-30;   /* these results are exact */
    cd.rtol = 1e-12;
    cd.locate = true;
    CHECK_OK(gs_partition_check(spmd, rt, &cd, inputs, &rep));
    CHECK_MSG(rep.ok, "%s\n%s", rep.message, gs_partition_print(spmd, true));
    gs_runtime_destroy(rt);
}

static void wh_expect_f32(const float *got, const float *want, int n, const char *what) {
    int i;
    for (i = 0; i < n; i++) CHECK_MSG(got[i] == want[i], "%s: element %d is %g, expected %g", what, i, got[i], want[i]);
}

static void wh_expect_s32(const int32_t *got, const int32_t *want, int n, const char *what) {
    int i;
    for (i = 0; i < n; i++) CHECK_MSG(got[i] == want[i], "%s: element %d is %d, expected %d", what, i, got[i], want[i]);
}

/* a 1-D sharding of a rank-1 value: n tiles over the devices in `order` (NULL: 0..n-1) */
static const gs_sharding *wh_split(gs_ctx *ctx, int64_t n, const int64_t *order) {
    return gs_sharding_tiled(ctx, 1, &n, order, 0, NULL);
}

static gs_value *wh_param1(gs_graph *g, gs_dtype t, int64_t n, const gs_sharding *s) {
    gs_value *p = gs_parameter(g, -1, gs_shape_make(t, 1, &n), NULL);
    if (p && s) CHECK_OK(gs_value_set_sharding(p, s));
    return p;
}

static void wh_iota_f32(float *x, int n, float from) {
    int i;
    for (i = 0; i < n; i++) x[i] = from + (float)i;
}

/* reduce-window sum, size 3, padding 1 each side, over 0..9 split 4 ways (shards of 3: [0,3) [3,6) [6,9) [9,10)) */
static void test_spmd_window_rw_sum3(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "rw");
    gs_window_dim w = gs_window_default();
    float x[10], got[10];
    const float want[10] = {1, 3, 6, 9, 12, 15, 18, 21, 24, 17};
    const void *in[1];
    gs_value *p = wh_param1(g, GS_F32, 10, wh_split(ctx, 4, NULL)), *r;
    w.size = 3;
    w.pad_lo = w.pad_hi = 1;
    r = gs_reduce_window(g, p, gs_scalar(g, GS_F32, 0), GS_REDUCE_SUM, &w);
    CHECK(r != NULL);
    CHECK_OK(gs_value_set_sharding(r, wh_split(ctx, 4, NULL)));
    CHECK_OK(gs_graph_set_root(g, r));
    wh_iota_f32(x, 10, 0);
    in[0] = x;
    wh_run(g, 4, in, got);
    wh_expect_f32(got, want, 10, "sum window 3");
    gs_ctx_destroy(ctx);
}

/* reduce-window max, size 2 stride 2, pad_hi 1, over 11 s32 split 3 ways on devices {2, 0, 1}; the last window
   holds one element and the padding */
static void test_spmd_window_rw_max_strided(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "rw");
    gs_window_dim w = gs_window_default();
    const int64_t order[3] = {2, 0, 1};
    const int32_t x[11] = {3, -1, 4, 1, -5, 9, 2, -6, 5, 3, -5};
    const int32_t want[6] = {3, 4, 9, 2, 5, -5};
    int32_t got[6];
    const void *in[1];
    gs_value *p = wh_param1(g, GS_S32, 11, wh_split(ctx, 3, order)), *r;
    w.size = 2;
    w.stride = 2;
    w.pad_hi = 1;
    r = gs_reduce_window(g, p, gs_scalar(g, GS_S32, -2147483648.0), GS_REDUCE_MAX, &w);
    CHECK(r != NULL);
    CHECK_OK(gs_graph_set_root(g, gs_annotate_sharding(g, r, wh_split(ctx, 3, order))));
    in[0] = x;
    wh_run(g, 3, in, got);
    wh_expect_s32(got, want, 6, "max window 2 stride 2");
    gs_ctx_destroy(ctx);
}

/* reduce-window sum over the base dilated by 2 (1 _ 2 _ 3 _ 4 _ 5), window 2: the holes add nothing */
static void test_spmd_window_rw_base_dilated(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "rw");
    gs_window_dim w = gs_window_default();
    const float x[5] = {1, 2, 3, 4, 5}, want[8] = {1, 2, 2, 3, 3, 4, 4, 5};
    float got[8];
    const void *in[1];
    gs_value *p = wh_param1(g, GS_F32, 5, wh_split(ctx, 2, NULL)), *r;
    w.size = 2;
    w.base_dilation = 2;
    r = gs_reduce_window(g, p, gs_scalar(g, GS_F32, 0), GS_REDUCE_SUM, &w);
    CHECK(r != NULL);
    CHECK_OK(gs_value_set_sharding(r, wh_split(ctx, 2, NULL)));
    CHECK_OK(gs_graph_set_root(g, r));
    in[0] = x;
    wh_run(g, 2, in, got);
    wh_expect_f32(got, want, 8, "base-dilated sum");
    gs_ctx_destroy(ctx);
}

/* reduce-window sum with init 10 (not the identity), size 3 stride 3, pad_lo 2, over 0..6 split 4 ways: each
   output adds the init once, whatever the padding or the shards ([pad pad 0] [1 2 3] [4 5 6]) */
static void test_spmd_window_rw_init_once(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "rw");
    gs_window_dim w = gs_window_default();
    const float want[3] = {10, 16, 25};
    float x[7], got[3];
    const void *in[1];
    gs_value *p = wh_param1(g, GS_F32, 7, wh_split(ctx, 4, NULL)), *r;
    w.size = 3;
    w.stride = 3;
    w.pad_lo = 2;
    r = gs_reduce_window(g, p, gs_scalar(g, GS_F32, 10), GS_REDUCE_SUM, &w);
    CHECK(r != NULL);
    CHECK_OK(gs_value_set_sharding(r, wh_split(ctx, 4, NULL)));
    CHECK_OK(gs_graph_set_root(g, r));
    wh_iota_f32(x, 7, 0);
    in[0] = x;
    wh_run(g, 4, in, got);
    wh_expect_f32(got, want, 3, "sum with init 10");
    gs_ctx_destroy(ctx);
}

/* 1-D convolution b0f_0io->b0f: x = 0..9 (one batch, one feature), kernel [1, 2, 3]: out[i] = x[i] + 2 x[i+1]
   + 3 x[i+2] = 6 i + 8; input and output split 4 ways along the spatial dim. With padding 1, window dilation 2,
   stride 2 and a kernel [1, 1]: out[o] = x[2o - 1] + x[2o + 1] (x[-1] is padding). */
static void wh_conv1d(int64_t D, int64_t K, const float *kern, int64_t stride, int64_t pad, int64_t rhs_dil,
                      const float *want, int n_out) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "conv");
    gs_conv_config cfg;
    int64_t xd[3] = {1, 10, 1}, kd[3], tiles[3] = {1, D, 1};
    float x[10], got[16];
    const void *in[2];
    gs_value *xp, *kp, *r;
    const gs_sharding *sp = gs_sharding_tiled(ctx, 3, tiles, NULL, 0, NULL);
    kd[0] = K;
    kd[1] = 1;
    kd[2] = 1;
    memset(&cfg, 0, sizeof cfg);
    CHECK_OK(gs_conv_dims_from_labels("b0f_0io->b0f", &cfg.dims));
    cfg.window[0] = gs_window_default();
    cfg.window[0].size = K;
    cfg.window[0].stride = stride;
    cfg.window[0].pad_lo = cfg.window[0].pad_hi = pad;
    cfg.window[0].window_dilation = rhs_dil;
    xp = gs_parameter(g, 0, gs_shape_make(GS_F32, 3, xd), "x");
    kp = gs_parameter(g, 1, gs_shape_make(GS_F32, 3, kd), "k");
    CHECK_OK(gs_value_set_sharding(xp, sp));
    r = gs_convolution(g, xp, kp, &cfg);
    CHECK(r != NULL && gs_value_shape(r).dims[1] == n_out);
    CHECK_OK(gs_graph_set_root(g, gs_annotate_sharding(g, r, sp)));
    wh_iota_f32(x, 10, 0);
    in[0] = x;
    in[1] = kern;
    wh_run(g, D, in, got);
    wh_expect_f32(got, want, n_out, "conv");
    gs_ctx_destroy(ctx);
}

static void test_spmd_window_conv1d(void) {
    const float k3[3] = {1, 2, 3}, want3[8] = {8, 14, 20, 26, 32, 38, 44, 50};
    const float k2[2] = {1, 1}, want2[5] = {1, 4, 8, 12, 16};
    wh_conv1d(4, 3, k3, 1, 0, 1, want3, 8);
    wh_conv1d(3, 2, k2, 2, 1, 2, want2, 5);
}

/* slices of 0..19 split 4 ways (shards of 5): [13:19:2] lies on devices 2 and 3 only */
static void test_spmd_window_slice(void) {
    static const struct { int64_t start, limit, stride; int n; float want[8]; } cases[3] = {
        {13, 19, 2, 3, {13, 15, 17}}, {0, 20, 3, 7, {0, 3, 6, 9, 12, 15, 18}}, {19, 20, 1, 1, {19}},
    };
    int c;
    for (c = 0; c < 3; c++) {
        gs_ctx *ctx = gst_ctx();
        gs_graph *g = gs_graph_new(ctx, "slice");
        float x[20], got[8];
        const void *in[1];
        gs_value *p = wh_param1(g, GS_F32, 20, wh_split(ctx, 4, NULL)), *r;
        r = gs_slice(g, p, &cases[c].start, &cases[c].limit, &cases[c].stride);
        CHECK(r != NULL);
        CHECK_OK(gs_value_set_sharding(r, wh_split(ctx, 4, NULL)));
        CHECK_OK(gs_graph_set_root(g, r));
        wh_iota_f32(x, 20, 0);
        in[0] = x;
        wh_run(g, 4, in, got);
        wh_expect_f32(got, cases[c].want, cases[c].n, "slice");
        gs_ctx_destroy(ctx);
    }
}

/* pad of 1..7 split 3 ways with low -2, high 3, interior 1 and the value -1: interior padding gives
   1 -1 2 -1 3 -1 4 -1 5 -1 6 -1 7, the low edge drops two, the high edge adds three */
static void test_spmd_window_pad(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "pad");
    const int64_t lo = -2, hi = 3, it = 1;
    const float want[14] = {2, -1, 3, -1, 4, -1, 5, -1, 6, -1, 7, -1, -1, -1};
    float x[7], got[14];
    const void *in[1];
    gs_value *p = wh_param1(g, GS_F32, 7, wh_split(ctx, 3, NULL)), *r;
    r = gs_pad(g, p, gs_scalar(g, GS_F32, -1), &lo, &hi, &it);
    CHECK(r != NULL);
    CHECK_OK(gs_value_set_sharding(r, wh_split(ctx, 3, NULL)));
    CHECK_OK(gs_graph_set_root(g, r));
    wh_iota_f32(x, 7, 1);
    in[0] = x;
    wh_run(g, 3, in, got);
    wh_expect_f32(got, want, 14, "pad");
    gs_ctx_destroy(ctx);
}

/* [1 2 3] ++ [10 .. 14] ++ [20 21], each operand and the result split 4 ways */
static void test_spmd_window_concatenate(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "concat");
    const float a[3] = {1, 2, 3}, b[5] = {10, 11, 12, 13, 14}, c[2] = {20, 21};
    const float want[10] = {1, 2, 3, 10, 11, 12, 13, 14, 20, 21};
    const int64_t order[4] = {3, 1, 0, 2};
    float got[10];
    const void *in[3];
    gs_value *xs[3], *r;
    xs[0] = wh_param1(g, GS_F32, 3, wh_split(ctx, 4, NULL));
    xs[1] = wh_param1(g, GS_F32, 5, wh_split(ctx, 4, order));
    xs[2] = wh_param1(g, GS_F32, 2, wh_split(ctx, 4, NULL));
    r = gs_concatenate(g, 3, xs, 0);
    CHECK(r != NULL);
    CHECK_OK(gs_value_set_sharding(r, wh_split(ctx, 4, NULL)));
    CHECK_OK(gs_graph_set_root(g, r));
    in[0] = a;
    in[1] = b;
    in[2] = c;
    wh_run(g, 4, in, got);
    wh_expect_f32(got, want, 10, "concatenate");
    gs_ctx_destroy(ctx);
}

/* reverse of 0..n-1 split 4 ways, n = 7 (uneven) and 8 (even) */
static void test_spmd_window_reverse(void) {
    int n;
    for (n = 7; n <= 8; n++) {
        gs_ctx *ctx = gst_ctx();
        gs_graph *g = gs_graph_new(ctx, "reverse");
        const int64_t zero = 0;
        float x[8], got[8], want[8];
        const void *in[1];
        gs_value *p = wh_param1(g, GS_F32, n, wh_split(ctx, 4, NULL)), *r;
        int i;
        for (i = 0; i < n; i++) want[i] = (float)(n - 1 - i);
        r = gs_reverse(g, p, 1, &zero);
        CHECK(r != NULL);
        CHECK_OK(gs_value_set_sharding(r, wh_split(ctx, 4, NULL)));
        CHECK_OK(gs_graph_set_root(g, r));
        wh_iota_f32(x, n, 0);
        in[0] = x;
        wh_run(g, 4, in, got);
        wh_expect_f32(got, want, n, "reverse");
        gs_ctx_destroy(ctx);
    }
}

/* GShard's reshape examples: [3,2] -> [6] with both sides split 2 ways ([0 1 2 | 3 4 5] from rows {0,1} and
   {2}), [6] -> [3,2], and [5,3] -> [15] on 4 devices (rows split 2/2/1/0, the result 4/4/4/3) */
static void test_spmd_window_reshape(void) {
    static const struct { int rin, rout; int64_t in[2], out[2], D; } cases[4] = {
        {2, 1, {3, 2}, {6, 0}, 2}, {1, 2, {6, 0}, {3, 2}, 2}, {2, 1, {5, 3}, {15, 0}, 4}, {1, 2, {15, 0}, {5, 3}, 4},
    };
    int c, i;
    for (c = 0; c < 4; c++) {
        gs_ctx *ctx = gst_ctx();
        gs_graph *g = gs_graph_new(ctx, "reshape");
        int64_t tin[2] = {cases[c].D, 1}, tout[2] = {cases[c].D, 1};
        int n = (int)(cases[c].in[0] * (cases[c].rin == 2 ? cases[c].in[1] : 1));
        float x[15], got[15];
        const void *in[1];
        gs_value *p = gs_parameter(g, 0, gs_shape_make(GS_F32, cases[c].rin, cases[c].in), "x"), *r;
        CHECK_OK(gs_value_set_sharding(p, gs_sharding_tiled(ctx, cases[c].rin, tin, NULL, 0, NULL)));
        r = gs_reshape(g, p, cases[c].rout, cases[c].out);
        CHECK(r != NULL);
        CHECK_OK(gs_value_set_sharding(r, gs_sharding_tiled(ctx, cases[c].rout, tout, NULL, 0, NULL)));
        CHECK_OK(gs_graph_set_root(g, r));
        wh_iota_f32(x, n, 0);
        in[0] = x;
        wh_run(g, cases[c].D, in, got);
        /* row-major order is kept: the result is 0..n-1 again */
        for (i = 0; i < n; i++) CHECK_MSG(got[i] == (float)i, "reshape case %d: element %d is %g", c, i, got[i]);
        gs_ctx_destroy(ctx);
    }
}

/* a chain: pad (low 1, high 2, value 0) -> reduce-window max of 3 -> slice [1:8:3], split 3 ways all along;
   x = [5 -2 7 0 -9 4 1 8 -3]; padded: 0 5 -2 7 0 -9 4 1 8 -3 0 0; windows of 3: 5 7 7 7 4 4 8 8 8 0;
   the slice takes elements 1, 4, 7 -> 7 4 8 */
static void test_spmd_window_chain(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gs_graph_new(ctx, "chain");
    gs_window_dim w = gs_window_default();
    const int64_t lo = 1, hi = 2, st = 1, lim = 8, str = 3;
    const int32_t x[9] = {5, -2, 7, 0, -9, 4, 1, 8, -3}, want[3] = {7, 4, 8};
    int32_t got[3];
    const void *in[1];
    gs_value *p = wh_param1(g, GS_S32, 9, wh_split(ctx, 3, NULL)), *a, *b, *c;
    w.size = 3;
    a = gs_pad(g, p, gs_scalar(g, GS_S32, 0), &lo, &hi, NULL);
    CHECK(a != NULL);
    CHECK_OK(gs_value_set_sharding(a, wh_split(ctx, 3, NULL)));
    b = gs_reduce_window(g, a, gs_scalar(g, GS_S32, -2147483648.0), GS_REDUCE_MAX, &w);
    CHECK(b != NULL);
    CHECK_OK(gs_value_set_sharding(b, wh_split(ctx, 3, NULL)));
    c = gs_slice(g, b, &st, &lim, &str);
    CHECK(c != NULL);
    CHECK_OK(gs_value_set_sharding(c, wh_split(ctx, 3, NULL)));
    CHECK_OK(gs_graph_set_root(g, c));
    in[0] = x;
    wh_run(g, 3, in, got);
    wh_expect_s32(got, want, 3, "pad -> max window -> slice");
    gs_ctx_destroy(ctx);
}

void suite_spmd_window(void) {
    RUN(test_spmd_window_rw_sum3);
    RUN(test_spmd_window_rw_max_strided);
    RUN(test_spmd_window_rw_base_dilated);
    RUN(test_spmd_window_rw_init_once);
    RUN(test_spmd_window_conv1d);
    RUN(test_spmd_window_slice);
    RUN(test_spmd_window_pad);
    RUN(test_spmd_window_concatenate);
    RUN(test_spmd_window_reverse);
    RUN(test_spmd_window_reshape);
    RUN(test_spmd_window_chain);
    RUN(test_spmd_window_fuzz);
}
