/* test_spmd_fuzz.c - the differential fuzzer: random programs, random shardings, partitioned and run on D
   emulated devices, compared with the reference interpreter (gs_partition_check).

   Each program comes from one seed (splitmix64): 1 to 3 parameters of small shapes whose sizes often do
   not divide the device count, then 2 to 12 random steps drawn from elementwise ops (unary, binary, compare,
   select, convert, clamp), broadcast, reduce (sum, max, min), transpose, reshape (split, merge, unit dims),
   dot and einsum (batch, contracting and free dims), dynamic-slice (constant and computed starts), sort (with
   and without indices) and cumsum/cummax, and also slice, pad, concatenate, reverse, reduce-window,
   argmax/argmin, top-k, rng, 1-D convolution, while loops, gather and scatter. A few values get a sharding annotation (tiled,
   partially replicated, maximal, iota device orders with reshape and transpose, permuted explicit lists, 1-D
   and 2-D meshes, some with open dims; one program in eight has one on every value) on a random device count D from 1 to 16; parameters may carry a
   sharding attribute; the partitioner's options are drawn too. The program is partitioned with gs_partition,
   the SPMD program's text must parse back to the same text, and the program is checked with
   gs_partition_check (poisoned padding, locate on) on a lockstep runtime (one per device count, reused), or a
   threaded one for one program in 16.

   Tolerances are derived per program, not guessed. The float inputs are multiples of 1/8 in [-2, 2] and every
   value carries what the generator knows about it: whether both sides must compute the same bits
   ("reproducible": elementwise ops and data movement on reproducible operands, max/min reductions and scans,
   sorts, argmax, rng), whether it is still an exact dyadic number (a multiple of 2^-f below 2^e with f + e within the
   dtype's precision, so that sums and dot products of such values are exact in any order), a bound on its
   magnitude, and a bound on |partitioned - reference|. Only sums (reduce-sum, dot, cumsum, reduce-window sum,
   convolution) over inexact values are reordered by partitioning; each adds the classical worst-case bound of a reordered sum,
   2 * gamma(n) * sum |terms| with gamma(n) = n u / (1 - n u) (u = 2^-24 for f32, 2^-8 for bf16 reductions),
   and elementwise ops propagate it with their Lipschitz constants plus one rounding. The program's atol is the
   largest bound over its values (1e-30 when all values are reproducible, so those programs are compared bit
   for bit) and rtol is 1e-12. Ops whose result jumps with a tiny change of the operand (floor, ceil, sign,
   compare, float -> int convert, sort and top-k indices, argmax, dynamic-slice starts) are only applied to reproducible values, so every
   mismatch is a real difference.

   Environment:
     GST_FUZZ_COUNT=N     programs to run (default 2000; `make fuzz` runs 100000)
     GST_FUZZ_SEED=S      the first seed (default 1); program i uses seed S + i
     GST_FUZZ_VERBOSE=1   print every program, its SPMD program and the result
     GST_FUZZ_OPS=list    restrict the generator to some step kinds (comma-separated: elementwise, broadcast,
                          reduce, transpose, reshape, dot, dynamic-slice, sort, cumulative, slice, pad,
                          concatenate, reverse, reduce-window, argmax, topk, rng, convolution, while, gather
                          (gather and scatter); default all;
                          "-name" entries remove kinds from the full mix)
     GST_FUZZ_DEVICES=D   use only D devices (1 to 64)
     GST_FUZZ_SHOW=K      print at most K failures in full (default 5)
     GST_FUZZ_DUMP=DIR    write every program that passes to DIR/FUZZ_<seed>_d<D>.hlo (make test-mpi)
   Every failure prints the command that reproduces it (GST_FUZZ_SEED=<seed> GST_FUZZ_COUNT=1 GST_FUZZ_VERBOSE=1
   build/gshard_tests spmd_fuzz); the first K also show the shortest prefix of the program that still fails.
   The random generator, the value bookkeeping, the program's finishing and the runner are shared with the
   windowed-op fuzzer (fuzz_common.h); the steps and shardings below are this fuzzer's own. */
#include "fuzz_common.h"

/* ---- step kinds ---- */
enum {
    FZ_ELEM, FZ_BCAST, FZ_REDUCE, FZ_TRANSPOSE, FZ_RESHAPE, FZ_DOT, FZ_DSLICE, FZ_SORT, FZ_CUM, FZ_SLICE, FZ_PAD,
    FZ_CONCAT, FZ_REVERSE, FZ_RWINDOW, FZ_ARG, FZ_TOPK, FZ_RNG, FZ_CONV, FZ_WHILE, FZ_GATHER, FZ_N_KINDS
};
static const fc_kind fz_kinds[FZ_N_KINDS] = {
    {"elementwise", 8}, {"broadcast", 2}, {"reduce", 3}, {"transpose", 2}, {"reshape", 2}, {"dot", 3},
    {"dynamic-slice", 2}, {"sort", 2}, {"cumulative", 2}, {"slice", 1}, {"pad", 1}, {"concatenate", 1},
    {"reverse", 1}, {"reduce-window", 1}, {"argmax", 1}, {"topk", 1}, {"rng", 1}, {"convolution", 1},
    {"while", 2}, {"gather", 1},
};

#define FZ_MAX_VALS 128
#define FZ_MAX_STEPS 12
#define FZ_MAX_D FC_MAX_D     /* GST_FUZZ_DEVICES may ask for up to this many; the default draws 1 to 16 */
#define FZ_MAX_PARAMS 8
#define FZ_NUMEL_CAP 384
#define FZ_MAX_RANK 4
#define FZ_MAX_ANNOT 4
#define FZ_TAME 4.0           /* operands of products and sums are brought below this magnitude first */

typedef struct fz {
    gs_ctx *ctx;
    gs_graph *g;
    uint64_t rng;
    int64_t D;
    fc_val vals[FZ_MAX_VALS];
    int n;
    int n_params, n_annot, steps;
    int max_annot, annot_odds; /* at most max_annot annotations, each value 1 in annot_odds */
} fz;

static gs_shape fz_shape(const fz *z, int i) { return gs_value_shape(z->vals[i].v); }
static gs_dtype fz_dtype(const fz *z, int i) { return gs_value_shape(z->vals[i].v).dtype; }

/* Appends v with what is known about it; returns its index, or -1 (the context's error says why). */
static int fz_push(fz *z, gs_value *v, fc_val info) { return fc_push(z->vals, &z->n, FZ_MAX_VALS, v, info); }

/* An elementwise result from operand knowledge: one more rounding where the operands may differ. */
static fc_val fz_elem(gs_dtype t, bool repro, bool dy, int f, int e, double mag, double err) {
    fc_val r;
    memset(&r, 0, sizeof r);
    r.repro = repro;
    r.dy = dy && repro;
    r.f = f;
    r.e = e;
    r.mag = mag;
    r.err = repro ? 0 : err + fc_ulp(t, mag);
    return r;
}

/* ---- picking operands ---- */
enum { FZ_P_FLOAT = 1, FZ_P_S32 = 2, FZ_P_F32 = 4, FZ_P_RANK1 = 8, FZ_P_RANK2 = 16, FZ_P_REPRO = 32, FZ_P_NUM = 64 };

static bool fz_ok(const fz *z, int i, int flags) {
    gs_shape s = fz_shape(z, i);
    if (s.dtype == GS_TUPLE) return false;
    if ((flags & FZ_P_NUM) && s.dtype == GS_PRED) return false;
    if ((flags & (FZ_P_FLOAT | FZ_P_S32 | FZ_P_F32))) {
        bool any = ((flags & FZ_P_FLOAT) && fc_isfloat(s.dtype)) || ((flags & FZ_P_S32) && s.dtype == GS_S32) ||
                   ((flags & FZ_P_F32) && s.dtype == GS_F32);
        if (!any) return false;
    }
    if ((flags & FZ_P_RANK1) && s.rank < 1) return false;
    if ((flags & FZ_P_RANK2) && s.rank < 2) return false;
    if ((flags & FZ_P_REPRO) && !z->vals[i].repro) return false;
    return true;
}

/* A value satisfying flags, preferring recent ones (so steps chain); -1 if none. */
static int fz_pick(fz *z, int flags) {
    int t, i;
    for (t = 0; t < 24; t++) {
        int lo = fc_one_in(&z->rng, 2) ? (z->n > 3 ? z->n - 3 : 0) : 0;
        i = (int)fc_int(&z->rng, lo, z->n - 1);
        if (fz_ok(z, i, flags)) return i;
    }
    for (i = z->n - 1; i >= 0; i--)
        if (fz_ok(z, i, flags)) return i;
    return -1;
}

/* ---- shardings ---- */
/* A random sharding of a value of shape sh over all D devices. */
static const gs_sharding *fz_sharding(fz *z, gs_shape sh) {
    int64_t tiles[GS_MAX_RANK + 1], rep = 1, rest = z->D, p, dims[GS_MAX_RANK + 2], devs[FZ_MAX_D];
    int d, n_dims, kind;
    gs_subgroup sub = GS_SUBGROUP_REPLICATED;
    if (z->D > 1 && fc_one_in(&z->rng, 24)) return gs_sharding_maximal(z->ctx, fc_int(&z->rng, 0, z->D - 1));
    if (sh.rank == 0 || z->D == 1 || fc_one_in(&z->rng, 10)) return gs_sharding_replicated(z->ctx);
    kind = (int)fc_int(&z->rng, 0, 3);
    if (kind == 3) {
        /* a mesh of one or two axes; each tensor dim takes one unused axis or none; leftover axes replicate */
        const char *names[2] = {"x", "y"};
        int64_t sizes[2], mdevs[FZ_MAX_D];
        int map[GS_MAX_RANK], n_axes = 1, used[2] = {0, 0};
        const gs_mesh *m;
        sizes[0] = z->D;
        if (z->D >= 4 && fc_one_in(&z->rng, 2)) {
            int64_t a;
            for (a = 2; a < z->D; a++)
                if (z->D % a == 0 && fc_one_in(&z->rng, 2)) break;
            if (a < z->D) {
                n_axes = 2;
                sizes[0] = a;
                sizes[1] = z->D / a;
            }
        }
        for (d = 0; d < z->D; d++) mdevs[d] = d;
        if (fc_one_in(&z->rng, 2)) fc_shuffle(&z->rng, mdevs, z->D);
        m = gs_mesh_new(z->ctx, n_axes, names, sizes, mdevs);
        for (d = 0; d < sh.rank; d++) {
            int a = (int)fc_int(&z->rng, -1, n_axes - 1);
            if (a >= 0 && used[a]) a = -1;
            if (a >= 0) used[a] = 1;
            map[d] = a;
        }
        return m ? gs_mesh_sharding_dims(z->ctx, m, sh.rank, map) : NULL;
    }
    /* spread D's prime factors over the dims and the replication group */
    for (d = 0; d < sh.rank; d++) tiles[d] = 1;
    for (p = 2; rest > 1; p++)
        while (rest % p == 0) {
            int to = (int)fc_int(&z->rng, 0, sh.rank);
            rest /= p;
            if (to == sh.rank) rep *= p;
            else tiles[to] *= p;
        }
    n_dims = sh.rank;
    for (d = 0; d < sh.rank; d++) dims[d] = tiles[d];
    if (rep > 1) dims[n_dims++] = rep;
    if (kind == 0) return gs_sharding_tiled(z->ctx, n_dims, dims, NULL, rep > 1, &sub);
    if (kind == 1) {
        for (d = 0; d < z->D; d++) devs[d] = d;
        fc_shuffle(&z->rng, devs, z->D);
        return gs_sharding_tiled(z->ctx, n_dims, dims, devs, rep > 1, &sub);
    }
    {
        /* iota: arange(D).reshape(r).transpose(perm) with r a random factorisation of D */
        int64_t r[4], left = z->D;
        int perm[4], nr = 0, i;
        int64_t pa[4];
        while (left > 1 && nr < 3) {
            int64_t a;
            for (a = 2; a <= left; a++)
                if (left % a == 0 && (a == left || fc_one_in(&z->rng, 2))) break;
            r[nr++] = a;
            left /= a;
        }
        if (left > 1) r[nr - 1] *= left;
        if (nr == 0) r[nr++] = 1;
        for (i = 0; i < nr; i++) pa[i] = i;
        fc_shuffle(&z->rng, pa, nr);
        for (i = 0; i < nr; i++) perm[i] = (int)pa[i];
        return gs_sharding_iota(z->ctx, n_dims, dims, nr, r, perm, rep > 1, &sub);
    }
}

/* Maybe annotates value i with a random sharding (the annotated value replaces it in the pool). */
static void fz_maybe_annotate(fz *z, int i) {
    gs_value *a;
    if (i < 0 || z->n_annot >= z->max_annot || fz_shape(z, i).dtype == GS_TUPLE || !fc_one_in(&z->rng, z->annot_odds)) return;
    /* some annotations leave dims open for propagation to refine (XLA's unspecified_dims) */
    if (fc_one_in(&z->rng, 6) && fz_shape(z, i).rank > 0)
        a = gs_annotate_open(z->g, z->vals[i].v, fz_sharding(z, fz_shape(z, i)),
                             (uint32_t)fc_int(&z->rng, 1, (1 << fz_shape(z, i).rank) - 1));
    else
        a = gs_annotate_sharding(z->g, z->vals[i].v, fz_sharding(z, fz_shape(z, i)));
    if (a) {
        z->vals[i].v = a;
        z->n_annot++;
    }
}

/* ---- leaves ---- */
static int fz_param(fz *z, gs_shape s) {
    gs_value *p;
    if (z->n_params >= FZ_MAX_PARAMS) return -1;
    p = gs_parameter(z->g, -1, s, NULL);
    if (p && z->n_annot < z->max_annot && fc_one_in(&z->rng, z->annot_odds)) {
        gs_value_set_sharding(p, fz_sharding(z, s));
        z->n_annot++;
    }
    z->n_params++;
    return fz_push(z, p, fc_input_info(s.dtype));
}

static gs_shape fz_random_shape(fz *z, gs_dtype t, int min_rank) {
    int64_t dims[GS_MAX_RANK], numel = 1;
    int r = (int)fc_int(&z->rng, min_rank, 3), d;
    for (d = 0; d < r; d++) {
        dims[d] = fc_one_in(&z->rng, 4) ? fc_int(&z->rng, 8, 12) : fc_int(&z->rng, 1, 7);
        if (numel * dims[d] > 192) dims[d] = 1;
        numel *= dims[d];
    }
    return gs_shape_make(t, r, dims);
}

/* A dyadic constant k/8 with |k/8| <= 2, broadcast to shape s. */
static int fz_const(fz *z, gs_shape s) {
    double c = (double)fc_int(&z->rng, -16, 16) / 8;
    if (s.dtype == GS_S32) c = (double)fc_int(&z->rng, -8, 8);
    return fz_push(z, gs_constant_splat(z->g, s, c), fc_const_info(s.dtype, c));
}

/* Another operand of exactly shape s: an existing value, a new parameter, or a constant. */
static int fz_same_shape(fz *z, gs_shape s, int not_this) {
    int i, start = (int)fc_int(&z->rng, 0, z->n - 1), k;
    if (!fc_one_in(&z->rng, 4))
        for (k = 0; k < z->n; k++) {
            gs_shape t;
            i = (start + k) % z->n;
            t = fz_shape(z, i);
            if (i != not_this && gs_shape_equal(&t, &s)) return i;
        }
    if (z->n_params < FZ_MAX_PARAMS && !fc_one_in(&z->rng, 3) && (s.dtype == GS_F32 || s.dtype == GS_S32)) return fz_param(z, s);
    if (s.dtype == GS_BF16) {
        gs_shape f = s;
        f.dtype = GS_F32;
        i = fz_const(z, f);
        if (i < 0) return -1;
        return fz_push(z, gs_convert(z->g, z->vals[i].v, GS_BF16), z->vals[i]);
    }
    return fz_const(z, s);
}

/* Value i, brought below magnitude lim by a clamp (keeps exactness) or a tanh. */
static int fz_tame(fz *z, int i, double lim) {
    gs_dtype t;
    fc_val in;
    if (i < 0 || z->vals[i].mag <= lim) return i;
    t = fz_dtype(z, i);
    in = z->vals[i];
    if (t == GS_S32 || fc_one_in(&z->rng, 2)) {
        gs_value *lo = gs_scalar(z->g, t, -lim), *hi = gs_scalar(z->g, t, lim);
        fc_val r = in;   /* clamp is 1-Lipschitz and rounds nothing */
        r.mag = lim;
        r.e = FC_MAXI(fc_e_of(lim), in.e < fc_e_of(lim) ? in.e : fc_e_of(lim));
        return fz_push(z, gs_clamp(z->g, lo, in.v, hi), r);
    }
    return fz_push(z, gs_unary(z->g, GS_OP_TANH, in.v), fz_elem(t, in.repro, false, 0, 0, 1, in.err));
}

/* ---- steps; each returns the new value's index, -1 on a builder error, -2 when it does not apply ---- */
static int fz_step_unary(fz *z) {
    static const gs_op fops[] = {GS_OP_NEGATE, GS_OP_ABS, GS_OP_TANH, GS_OP_LOGISTIC, GS_OP_EXP, GS_OP_FLOOR, GS_OP_CEIL, GS_OP_SIGN};
    int i = fz_pick(z, FZ_P_FLOAT | FZ_P_S32);
    gs_op op;
    fc_val x;
    gs_dtype t;
    if (i < 0) return -2;
    t = fz_dtype(z, i);
    if (t == GS_S32) {
        op = fc_one_in(&z->rng, 2) ? GS_OP_NEGATE : GS_OP_ABS;
        return fz_push(z, gs_unary(z->g, op, z->vals[i].v), fz_elem(t, true, false, 0, 0, z->vals[i].mag, 0));
    }
    op = fops[fc_int(&z->rng, 0, (int64_t)(sizeof fops / sizeof fops[0]) - 1)];
    if ((op == GS_OP_FLOOR || op == GS_OP_CEIL || op == GS_OP_SIGN) && !z->vals[i].repro) op = GS_OP_TANH;
    if (op == GS_OP_EXP) i = fz_tame(z, i, FZ_TAME);
    if (i < 0) return -1;
    x = z->vals[i];
    switch (op) {
    case GS_OP_NEGATE: case GS_OP_ABS:
        return fz_push(z, gs_unary(z->g, op, x.v), fz_elem(t, x.repro, x.dy, x.f, x.e, x.mag, x.err));
    case GS_OP_FLOOR: case GS_OP_CEIL:   /* integers: exact while they fit the mantissa */
        return fz_push(z, gs_unary(z->g, op, x.v), fz_elem(t, true, true, 0, fc_e_of(x.mag + 1), x.mag + 1, 0));
    case GS_OP_SIGN:
        return fz_push(z, gs_unary(z->g, op, x.v), fz_elem(t, true, true, 0, 0, 1, 0));
    case GS_OP_TANH:
        return fz_push(z, gs_unary(z->g, op, x.v), fz_elem(t, x.repro, false, 0, 0, 1, x.err));
    case GS_OP_LOGISTIC:
        return fz_push(z, gs_unary(z->g, op, x.v), fz_elem(t, x.repro, false, 0, 0, 1, x.err / 4));
    default: {   /* exp */
        double m = exp(x.mag);
        return fz_push(z, gs_unary(z->g, op, x.v), fz_elem(t, x.repro, false, 0, 0, m, m * x.err + fc_ulp(t, m)));
    }
    }
}

static int fz_step_binary(fz *z) {
    int i = fz_pick(z, FZ_P_FLOAT | FZ_P_S32), j, k = (int)fc_int(&z->rng, 0, 5);
    gs_dtype t;
    gs_op op;
    fc_val a, b;
    if (i < 0) return -2;
    t = fz_dtype(z, i);
    if (t == GS_S32 && k == 5) k = 0;
    op = k == 0 ? GS_OP_ADD : k == 1 ? GS_OP_SUBTRACT : k == 2 ? GS_OP_MULTIPLY : k == 3 ? GS_OP_MAXIMUM : k == 4 ? GS_OP_MINIMUM : GS_OP_DIVIDE;
    if (op == GS_OP_MULTIPLY) i = fz_tame(z, i, 16);
    if (i < 0) return -1;
    j = fz_same_shape(z, fz_shape(z, i), i);
    if (op == GS_OP_MULTIPLY) j = fz_tame(z, j, 16);
    if (j < 0) return -1;
    a = z->vals[i];
    if (op == GS_OP_DIVIDE) {
        /* a / (|b| + 1): the denominator stays >= 1 */
        int one, ab;
        gs_shape s = fz_shape(z, j);
        b = z->vals[j];
        ab = fz_push(z, gs_unary(z->g, GS_OP_ABS, b.v), b);
        if (ab < 0) return -1;
        one = fz_push(z, gs_constant_splat(z->g, s, 1.0), fz_elem(t, true, true, 0, 0, 1, 0));
        if (one < 0) return -1;
        b = z->vals[ab];
        j = fz_push(z, gs_add(z->g, b.v, z->vals[one].v),
                    fz_elem(t, b.repro, b.dy, b.f, b.e + 1, b.mag + 1, b.err));
        if (j < 0) return -1;
        b = z->vals[j];
        return fz_push(z, gs_binary(z->g, op, a.v, b.v), fz_elem(t, a.repro && b.repro, false, 0, 0, a.mag, a.err + a.mag * b.err));
    }
    b = z->vals[j];
    if (t == GS_S32) {
        double m = op == GS_OP_MULTIPLY ? a.mag * b.mag : op == GS_OP_ADD || op == GS_OP_SUBTRACT ? a.mag + b.mag : FC_MAXD(a.mag, b.mag);
        return fz_push(z, gs_binary(z->g, op, a.v, b.v), fz_elem(t, true, false, 0, 0, FC_MIND(m, 2147483648.0), 0));
    }
    switch (op) {
    case GS_OP_ADD: case GS_OP_SUBTRACT:
        return fz_push(z, gs_binary(z->g, op, a.v, b.v),
                       fz_elem(t, a.repro && b.repro, a.dy && b.dy, FC_MAXI(a.f, b.f), FC_MAXI(a.e, b.e) + 1, a.mag + b.mag, a.err + b.err));
    case GS_OP_MULTIPLY:
        return fz_push(z, gs_binary(z->g, op, a.v, b.v),
                       fz_elem(t, a.repro && b.repro, a.dy && b.dy, a.f + b.f, a.e + b.e, a.mag * b.mag,
                               a.mag * b.err + b.mag * a.err + a.err * b.err));
    default:
        return fz_push(z, gs_binary(z->g, op, a.v, b.v),
                       fz_elem(t, a.repro && b.repro, a.dy && b.dy, FC_MAXI(a.f, b.f), FC_MAXI(a.e, b.e), FC_MAXD(a.mag, b.mag),
                               FC_MAXD(a.err, b.err)));
    }
}

/* A reproducible pred of shape s: compare two reproducible values, or an iota with a constant. */
static int fz_pred(fz *z, gs_shape s) {
    gs_cmp dir = (gs_cmp)fc_int(&z->rng, GS_CMP_EQ, GS_CMP_GE);
    int i, j;
    fc_val info;
    memset(&info, 0, sizeof info);
    info.repro = true;
    for (i = z->n - 1; i >= 0; i--) {
        gs_shape t = fz_shape(z, i);
        if (t.dtype != GS_PRED && t.dtype != GS_TUPLE && t.rank == s.rank && z->vals[i].repro && fc_one_in(&z->rng, 2)) {
            int d;
            bool same = true;
            for (d = 0; d < s.rank; d++) same = same && t.dims[d] == s.dims[d];
            if (!same) continue;
            j = fz_same_shape(z, t, i);
            if (j < 0) return -1;
            if (!z->vals[j].repro) continue;
            return fz_push(z, gs_compare(z->g, z->vals[i].v, z->vals[j].v, dir), info);
        }
    }
    if (s.rank == 0) {
        int a = fz_push(z, gs_scalar(z->g, GS_S32, (double)fc_int(&z->rng, 0, 3)), info);
        int b = a < 0 ? -1 : fz_push(z, gs_scalar(z->g, GS_S32, (double)fc_int(&z->rng, 0, 3)), info);
        if (b < 0) return -1;
        return fz_push(z, gs_compare(z->g, z->vals[a].v, z->vals[b].v, dir), info);
    }
    {
        gs_shape is = s;
        int it, c;
        fc_val ii;
        memset(&ii, 0, sizeof ii);
        ii.repro = true;
        ii.mag = 8;
        is.dtype = GS_S32;
        it = fz_push(z, gs_iota(z->g, is, s.rank ? fc_int(&z->rng, 0, s.rank - 1) : 0), ii);
        if (it < 0) return -1;
        c = fz_push(z, gs_constant_splat(z->g, is, (double)fc_int(&z->rng, 0, 4)), ii);
        if (c < 0) return -1;
        return fz_push(z, gs_compare(z->g, z->vals[it].v, z->vals[c].v, dir), info);
    }
}

static int fz_step_select(fz *z) {
    int i = fz_pick(z, FZ_P_FLOAT | FZ_P_S32), j, p;
    gs_shape s;
    fc_val a, b;
    if (i < 0) return -2;
    s = fz_shape(z, i);
    p = fz_pred(z, s);
    if (p < 0) return -1;
    j = fz_same_shape(z, s, i);
    if (j < 0) return -1;
    a = z->vals[i];
    b = z->vals[j];
    return fz_push(z, gs_select(z->g, z->vals[p].v, a.v, b.v),
                   fz_elem(s.dtype, a.repro && b.repro, a.dy && b.dy, FC_MAXI(a.f, b.f), FC_MAXI(a.e, b.e),
                           FC_MAXD(a.mag, b.mag), FC_MAXD(a.err, b.err)));
}

static int fz_step_convert(fz *z) {
    int i = fz_pick(z, 0);
    fc_val x, r;
    gs_dtype t, to;
    if (i < 0) return -2;
    x = z->vals[i];
    t = fz_dtype(z, i);
    memset(&r, 0, sizeof r);
    if (t == GS_PRED) {
        to = fc_one_in(&z->rng, 2) ? GS_F32 : GS_S32;
        r.repro = r.dy = true;
        r.mag = 1;
    } else if (t == GS_S32) {
        to = GS_F32;
        r.repro = true;
        r.mag = x.mag;
        r.dy = x.mag < 16777216.0;
        r.e = fc_e_of(x.mag);
    } else if (t == GS_BF16) {
        to = GS_F32;
        r = x;
    } else if (x.repro && fc_one_in(&z->rng, 2)) {
        to = GS_S32;
        r.repro = true;
        r.mag = x.mag;
    } else {
        to = GS_BF16;   /* rounding to bf16 is deterministic: reproducible stays reproducible */
        r = fz_elem(GS_BF16, x.repro, x.dy, x.f, x.e, x.mag, x.err);
    }
    return fz_push(z, gs_convert(z->g, x.v, to), r);
}

static int fz_step_clamp(fz *z) {
    int i = fz_pick(z, FZ_P_FLOAT | FZ_P_S32);
    gs_dtype t;
    double c;
    fc_val x, r;
    if (i < 0) return -2;
    t = fz_dtype(z, i);
    x = z->vals[i];
    c = (double)fc_int(&z->rng, 1, 16) / (t == GS_S32 ? 1 : 8);
    r = x;   /* |clamp(-c, x, c)| <= min(|x|, c); 1-Lipschitz, no rounding; the bounds are multiples of 1/8 */
    r.mag = FC_MIND(c, x.mag);
    r.f = FC_MAXI(x.f, t == GS_S32 ? 0 : 3);
    return fz_push(z, gs_clamp(z->g, gs_scalar(z->g, t, -c), x.v, gs_scalar(z->g, t, c)), r);
}

static int fz_step_elementwise(fz *z) {
    switch (fc_int(&z->rng, 0, 5)) {
    case 0: return fz_step_unary(z);
    case 1: case 2: return fz_step_binary(z);
    case 3: return fz_step_select(z);
    case 4: return fz_step_convert(z);
    default: return fz_step_clamp(z);
    }
}

static int fz_step_broadcast(fz *z) {
    int i = fz_pick(z, 0), r, d, k, add;
    gs_shape s, o;
    int64_t dims[GS_MAX_RANK], numel;
    if (i < 0) return -2;
    s = fz_shape(z, i);
    if (s.rank >= FZ_MAX_RANK) return -2;
    add = (int)fc_int(&z->rng, 1, FZ_MAX_RANK - s.rank < 2 ? FZ_MAX_RANK - s.rank : 2);
    r = s.rank + add;
    /* choose which output dims the operand's dims go to (increasing) */
    {
        int64_t pos[GS_MAX_RANK];
        for (d = 0; d < r; d++) pos[d] = d;
        fc_shuffle(&z->rng, pos, r);
        for (d = 0; d < s.rank; d++) dims[d] = pos[d];
        for (d = 1; d < s.rank; d++)
            for (k = d; k > 0 && dims[k] < dims[k - 1]; k--) {
                int64_t t = dims[k];
                dims[k] = dims[k - 1];
                dims[k - 1] = t;
            }
    }
    o.dtype = s.dtype;
    o.rank = r;
    numel = gs_shape_numel(&s);
    for (d = 0; d < r; d++) o.dims[d] = 0;
    for (d = 0; d < s.rank; d++) o.dims[dims[d]] = s.dims[d];
    for (d = 0; d < r; d++)
        if (o.dims[d] == 0) {
            o.dims[d] = fc_int(&z->rng, 1, 6);
            if (numel * o.dims[d] > FZ_NUMEL_CAP) o.dims[d] = 1;
            numel *= o.dims[d];
        }
    return fz_push(z, gs_broadcast(z->g, z->vals[i].v, o, dims), z->vals[i]);
}

static int fz_step_reduce(fz *z) {
    int i = fz_pick(z, FZ_P_FLOAT | FZ_P_S32 | FZ_P_RANK1), k = (int)fc_int(&z->rng, 0, 2), d, nd = 0;
    gs_reduce_kind kind = k == 0 ? GS_REDUCE_SUM : k == 1 ? GS_REDUCE_MAX : GS_REDUCE_MIN;
    int64_t dims[GS_MAX_RANK], n = 1;
    gs_shape s;
    gs_dtype t;
    double init;
    fc_val x;
    if (i < 0) return -2;
    if (kind == GS_REDUCE_SUM) i = fz_tame(z, i, FZ_TAME);
    if (i < 0) return -1;
    s = fz_shape(z, i);
    t = s.dtype;
    for (d = 0; d < s.rank; d++)
        if (fc_one_in(&z->rng, 2)) dims[nd++] = d;
    if (nd == 0) dims[nd++] = fc_int(&z->rng, 0, s.rank - 1);
    for (d = 0; d < nd; d++) n *= s.dims[dims[d]];
    x = z->vals[i];
    if (kind == GS_REDUCE_SUM) init = 0;
    else if (t == GS_S32) init = kind == GS_REDUCE_MAX ? -2147483648.0 : 2147483647.0;
    else init = kind == GS_REDUCE_MAX ? -HUGE_VAL : HUGE_VAL;
    {
        gs_value *r = gs_reduce(z->g, x.v, gs_scalar(z->g, t, init), kind, nd, dims);
        if (kind != GS_REDUCE_SUM) return fz_push(z, r, x);
        if (t == GS_S32) return fz_push(z, r, fz_elem(t, true, false, 0, 0, FC_MIND(x.mag * (double)n, 2147483648.0), 0));
        return fz_push(z, r, fc_sum(t, n, x));
    }
}

static int fz_step_transpose(fz *z) {
    int i = fz_pick(z, FZ_P_RANK2), d;
    int64_t perm[GS_MAX_RANK];
    gs_shape s;
    if (i < 0) return -2;
    s = fz_shape(z, i);
    for (d = 0; d < s.rank; d++) perm[d] = d;
    fc_shuffle(&z->rng, perm, s.rank);
    return fz_push(z, gs_transpose(z->g, z->vals[i].v, perm), z->vals[i]);
}

static int fz_step_reshape(fz *z) {
    int i = fz_pick(z, 0), d, r = 0, k, mode;
    gs_shape s;
    int64_t dims[GS_MAX_RANK];
    if (i < 0) return -2;
    s = fz_shape(z, i);
    mode = (int)fc_int(&z->rng, 0, 3);
    if (mode == 0 && s.rank >= 1 && s.rank < FZ_MAX_RANK) {
        /* split a dim of composite size */
        int at = (int)fc_int(&z->rng, 0, s.rank - 1);
        int64_t a;
        for (k = 0; k < s.rank; k++) {
            int dd = (at + k) % s.rank;
            for (a = 2; a < s.dims[dd]; a++)
                if (s.dims[dd] % a == 0) break;
            if (a < s.dims[dd]) {
                r = fc_split_dim(s, dd, a, dims);
                return fz_push(z, gs_reshape(z->g, z->vals[i].v, r, dims), z->vals[i]);
            }
        }
        mode = 1;
    }
    if (mode <= 1 && s.rank >= 2) {
        /* merge two adjacent dims */
        r = fc_merge_dims(s, (int)fc_int(&z->rng, 0, s.rank - 2), dims);
        return fz_push(z, gs_reshape(z->g, z->vals[i].v, r, dims), z->vals[i]);
    }
    if (mode == 2 && s.rank < FZ_MAX_RANK) {
        /* insert a unit dim */
        int at = (int)fc_int(&z->rng, 0, s.rank);
        for (d = 0; d <= s.rank; d++) {
            if (d == at) dims[r++] = 1;
            if (d < s.rank) dims[r++] = s.dims[d];
        }
        return fz_push(z, gs_reshape(z->g, z->vals[i].v, r, dims), z->vals[i]);
    }
    /* drop the unit dims, or flatten */
    for (d = 0; d < s.rank; d++)
        if (s.dims[d] != 1) dims[r++] = s.dims[d];
    if (r == s.rank) {
        if (s.rank < 2) return -2;
        r = 1;
        dims[0] = gs_shape_numel(&s);
    }
    return fz_push(z, gs_reshape(z->g, z->vals[i].v, r, dims), z->vals[i]);
}

static int fz_step_dot(fz *z) {
    int i = fz_pick(z, FZ_P_F32 | FZ_P_RANK1), j, d, nb = 0, nc = 0, nlf = 0, nrf, rr = 0, no = 0;
    int role[GS_MAX_RANK];    /* 0 batch, 1 contracting, 2 free */
    int64_t rdims[GS_MAX_RANK], rpos[GS_MAX_RANK], K = 1, numel = 1;
    gs_shape s, rs;
    gs_dot_dims dd;
    fc_val a, b, term;
    if (i < 0) return -2;
    i = fz_tame(z, i, FZ_TAME);
    if (i < 0) return -1;
    s = fz_shape(z, i);
    memset(&dd, 0, sizeof dd);
    for (d = 0; d < s.rank; d++) {
        int64_t x = fc_int(&z->rng, 0, 9);
        role[d] = x < 2 ? 0 : x < 6 ? 1 : 2;
        if (role[d] == 0) nb++;
        else if (role[d] == 1) {
            nc++;
            K *= s.dims[d];
        } else {
            nlf++;
            numel *= s.dims[d];
        }
        if (role[d] == 0) numel *= s.dims[d];
    }
    nrf = (int)fc_int(&z->rng, 0, 2);
    if (nb + nc + nrf > FZ_MAX_RANK) nrf = FZ_MAX_RANK - nb - nc;
    if (nrf < 0 || nb + nlf + nrf > FZ_MAX_RANK + 1) return -2;
    /* the rhs: batch and contracting dims in a random order, then free dims */
    for (d = 0; d < nb + nc + nrf; d++) rpos[d] = d;
    fc_shuffle(&z->rng, rpos, nb + nc + nrf);
    {
        int bi = 0, ci = 0;
        for (d = 0; d < s.rank; d++) {
            if (role[d] == 0) {
                rdims[rpos[rr]] = s.dims[d];
                dd.lhs_batch[bi] = d;
                dd.rhs_batch[bi++] = rpos[rr++];
            } else if (role[d] == 1) {
                rdims[rpos[rr]] = s.dims[d];
                dd.lhs_contract[ci] = d;
                dd.rhs_contract[ci++] = rpos[rr++];
            }
        }
        for (d = 0; d < nrf; d++) {
            int64_t x = fc_int(&z->rng, 1, 6);
            if (numel * x > FZ_NUMEL_CAP) x = 1;
            numel *= x;
            rdims[rpos[rr++]] = x;
        }
        dd.n_batch = nb;
        dd.n_contract = nc;
    }
    rs = gs_shape_make(GS_F32, rr, rdims);
    j = fz_same_shape(z, rs, -1);
    j = fz_tame(z, j, FZ_TAME);
    if (j < 0) return -1;
    a = z->vals[i];
    b = z->vals[j];
    term = fc_prod(GS_F32, a, b);
    no = nb + nlf + nrf;
    if (fc_one_in(&z->rng, 2) || no < 2) return fz_push(z, gs_dot(z->g, a.v, b.v, &dd), fc_sum(GS_F32, K, term));
    {
        /* the same contraction as an einsum with the output dims in a random order */
        char spec[64], lhs[GS_MAX_RANK + 1], rhs[GS_MAX_RANK + 1], out[2 * GS_MAX_RANK + 1];
        int64_t order[2 * GS_MAX_RANK];
        int n_out = 0;
        char next = 'a';
        for (d = 0; d < s.rank; d++) lhs[d] = next++;
        lhs[s.rank] = 0;
        for (d = 0; d < rr; d++) rhs[d] = 0;
        for (d = 0; d < nb; d++) rhs[dd.rhs_batch[d]] = lhs[dd.lhs_batch[d]];
        for (d = 0; d < nc; d++) rhs[dd.rhs_contract[d]] = lhs[dd.lhs_contract[d]];
        for (d = 0; d < rr; d++)
            if (!rhs[d]) rhs[d] = next++;
        rhs[rr] = 0;
        for (d = 0; d < s.rank; d++)
            if (role[d] != 1) out[n_out++] = lhs[d];
        for (d = 0; d < rr; d++) {
            int c, free = 1;
            for (c = 0; c < s.rank; c++)
                if (lhs[c] == rhs[d]) free = 0;
            if (free) out[n_out++] = rhs[d];
        }
        for (d = 0; d < n_out; d++) order[d] = d;
        fc_shuffle(&z->rng, order, n_out);
        {
            char o2[2 * GS_MAX_RANK + 1];
            for (d = 0; d < n_out; d++) o2[d] = out[order[d]];
            o2[n_out] = 0;
            snprintf(spec, sizeof spec, "%s,%s->%s", lhs, rhs, o2);
        }
        return fz_push(z, gs_einsum(z->g, spec, a.v, b.v), fc_sum(GS_F32, K, term));
    }
}

/* An s32 scalar start index for a dim of size n sliced to size k: a constant (sometimes out of range, which
   dynamic-slice clamps) or computed from the program's values. */
static int fz_start(fz *z, int64_t n, int64_t k) {
    fc_val info;
    int c = (int)fc_int(&z->rng, 0, 3);
    memset(&info, 0, sizeof info);
    info.repro = true;
    info.mag = 64;
    if (c == 0) return fz_push(z, gs_scalar(z->g, GS_S32, (double)fc_int(&z->rng, -1, n - k + 1)), info);
    if (c == 1 && z->n_params < FZ_MAX_PARAMS) return fz_param(z, gs_shape_scalar(GS_S32));
    {
        /* reduce an existing s32 (or reproducible float, converted) value to a scalar */
        int i = fz_pick(z, FZ_P_S32 | FZ_P_FLOAT | FZ_P_REPRO), d;
        int64_t dims[GS_MAX_RANK];
        gs_shape s;
        gs_value *v;
        if (i < 0) return fz_push(z, gs_scalar(z->g, GS_S32, (double)fc_int(&z->rng, 0, n - k)), info);
        s = fz_shape(z, i);
        v = z->vals[i].v;
        if (s.dtype != GS_S32) {
            v = gs_convert(z->g, v, GS_S32);
            s.dtype = GS_S32;
        }
        for (d = 0; d < s.rank; d++) dims[d] = d;
        if (s.rank > 0) v = gs_reduce(z->g, v, gs_scalar(z->g, GS_S32, -2147483648.0), GS_REDUCE_MAX, s.rank, dims);
        return fz_push(z, v, info);
    }
}

static int fz_step_dynamic_slice(fz *z) {
    int i = fz_pick(z, FZ_P_RANK1), d;
    gs_shape s;
    int64_t sizes[GS_MAX_RANK];
    gs_value *starts[GS_MAX_RANK];
    if (i < 0) return -2;
    s = fz_shape(z, i);
    for (d = 0; d < s.rank; d++) {
        int st;
        sizes[d] = fc_int(&z->rng, 1, s.dims[d]);
        st = fz_start(z, s.dims[d], sizes[d]);
        if (st < 0) return -1;
        starts[d] = z->vals[st].v;
    }
    return fz_push(z, gs_dynamic_slice(z->g, z->vals[i].v, starts, sizes), z->vals[i]);
}

static int fz_step_sort(fz *z) {
    int i = fz_pick(z, FZ_P_FLOAT | FZ_P_S32 | FZ_P_RANK1);
    int64_t dim;
    bool desc = fc_one_in(&z->rng, 2);
    fc_val idx;
    gs_value *t;
    int a;
    if (i < 0) return -2;
    dim = fc_int(&z->rng, 0, fz_shape(z, i).rank - 1);
    if (!z->vals[i].repro || fc_one_in(&z->rng, 3)) return fz_push(z, gs_sort(z->g, 1, &z->vals[i].v, dim, desc), z->vals[i]);
    t = gs_sort_with_indices(z->g, z->vals[i].v, dim, desc);
    a = fz_push(z, gs_get_tuple_element(z->g, t, 0), z->vals[i]);
    if (a < 0) return -1;
    memset(&idx, 0, sizeof idx);
    idx.repro = true;
    idx.mag = 8;
    if (fc_one_in(&z->rng, 2)) return a;
    return fz_push(z, gs_get_tuple_element(z->g, t, 1), idx);
}

static int fz_step_cumulative(fz *z) {
    int i = fz_pick(z, FZ_P_FLOAT | FZ_P_S32 | FZ_P_RANK1);
    bool sum = fc_one_in(&z->rng, 2), rev = fc_one_in(&z->rng, 3);
    int64_t dim;
    gs_shape s;
    fc_val x;
    if (i < 0) return -2;
    if (sum) i = fz_tame(z, i, FZ_TAME);
    if (i < 0) return -1;
    s = fz_shape(z, i);
    dim = fc_int(&z->rng, 0, s.rank - 1);
    x = z->vals[i];
    {
        gs_value *r = gs_cumulative(z->g, x.v, sum ? GS_REDUCE_SUM : GS_REDUCE_MAX, dim, rev);
        if (!sum) return fz_push(z, r, x);
        if (s.dtype == GS_S32) return fz_push(z, r, fz_elem(GS_S32, true, false, 0, 0, 2147483648.0, 0));
        return fz_push(z, r, fc_sum(s.dtype, s.dims[dim], x));
    }
}

/* ---- data movement and windowed ops ---- */
static int fz_step_slice(fz *z) {
    int i = fz_pick(z, FZ_P_RANK1), d;
    int64_t st[GS_MAX_RANK], lim[GS_MAX_RANK], str[GS_MAX_RANK];
    gs_shape s;
    if (i < 0) return -2;
    s = fz_shape(z, i);
    for (d = 0; d < s.rank; d++) {
        st[d] = fc_int(&z->rng, 0, s.dims[d] - 1);
        lim[d] = fc_int(&z->rng, st[d] + 1, s.dims[d]);
        str[d] = fc_int(&z->rng, 1, 3);
    }
    return fz_push(z, gs_slice(z->g, z->vals[i].v, st, lim, str), z->vals[i]);
}

static int fz_step_pad(fz *z) {
    int i = fz_pick(z, FZ_P_RANK1 | FZ_P_NUM), c, d;
    int64_t lo[GS_MAX_RANK], hi[GS_MAX_RANK], in[GS_MAX_RANK], numel = 1;
    gs_shape s;
    fc_val x;
    if (i < 0) return -2;
    s = fz_shape(z, i);
    for (d = 0; d < s.rank; d++) {
        /* negative padding crops; interior padding spreads the elements */
        lo[d] = fc_int(&z->rng, -(s.dims[d] - 1) / 2, 3);
        hi[d] = fc_int(&z->rng, -(s.dims[d] - 1) / 2, 3);
        in[d] = fc_one_in(&z->rng, 3) ? fc_int(&z->rng, 1, 2) : 0;
        {
            int64_t n = s.dims[d] + (s.dims[d] - 1) * in[d] + lo[d] + hi[d];
            if (n < 1) hi[d] += 1 - n, n = 1;
            numel *= n;
        }
    }
    if (numel > FZ_NUMEL_CAP) return -2;
    s.rank = 0;
    c = fz_const(z, s);
    if (c < 0) return -1;
    x = z->vals[i];
    return fz_push(z, gs_pad(z->g, x.v, z->vals[c].v, lo, hi, in), fc_either(x, z->vals[c]));
}

static int fz_step_concatenate(fz *z) {
    int i = fz_pick(z, FZ_P_RANK1 | FZ_P_NUM), j, d;
    gs_shape s, t;
    gs_value *xs[2];
    fc_val a, b;
    if (i < 0) return -2;
    s = fz_shape(z, i);
    d = (int)fc_int(&z->rng, 0, s.rank - 1);
    t = s;
    t.dims[d] = fc_int(&z->rng, 1, 6);
    if (gs_shape_numel(&s) + gs_shape_numel(&t) > FZ_NUMEL_CAP) return -2;
    j = fz_same_shape(z, t, i);
    if (j < 0) return -1;
    a = z->vals[i];
    b = z->vals[j];
    xs[0] = a.v;
    xs[1] = b.v;
    if (fc_one_in(&z->rng, 2)) {
        xs[0] = b.v;
        xs[1] = a.v;
    }
    return fz_push(z, gs_concatenate(z->g, 2, xs, d), fc_either(a, b));
}

static int fz_step_reverse(fz *z) {
    int i = fz_pick(z, FZ_P_RANK1), d, n = 0;
    int64_t dims[GS_MAX_RANK];
    gs_shape s;
    if (i < 0) return -2;
    s = fz_shape(z, i);
    for (d = 0; d < s.rank; d++)
        if (fc_one_in(&z->rng, 2)) dims[n++] = d;
    if (n == 0) dims[n++] = fc_int(&z->rng, 0, s.rank - 1);
    return fz_push(z, gs_reverse(z->g, z->vals[i].v, n, dims), z->vals[i]);
}

static int fz_step_reduce_window(fz *z) {
    int i = fz_pick(z, FZ_P_FLOAT | FZ_P_S32 | FZ_P_RANK1), d;
    bool sum = fc_one_in(&z->rng, 2);
    gs_window_dim w[GS_MAX_RANK];
    int64_t n = 1;
    gs_shape s;
    gs_dtype t;
    fc_val x;
    double init;
    if (i < 0) return -2;
    if (sum) i = fz_tame(z, i, FZ_TAME);
    if (i < 0) return -1;
    s = fz_shape(z, i);
    t = s.dtype;
    for (d = 0; d < s.rank; d++) {
        w[d] = gs_window_default();
        if (fc_one_in(&z->rng, 2)) continue;
        w[d].size = fc_int(&z->rng, 1, 3);
        w[d].stride = fc_int(&z->rng, 1, 2);
        w[d].pad_lo = fc_int(&z->rng, 0, w[d].size - 1);
        w[d].pad_hi = fc_int(&z->rng, 0, w[d].size - 1);
        if (fc_one_in(&z->rng, 6)) w[d].window_dilation = 2;
        if (fc_one_in(&z->rng, 6)) w[d].base_dilation = 2;
        /* the window must fit the padded, dilated base */
        if ((s.dims[d] - 1) * w[d].base_dilation + 1 + w[d].pad_lo + w[d].pad_hi < (w[d].size - 1) * w[d].window_dilation + 1)
            w[d] = gs_window_default();
        n *= w[d].size;
    }
    x = z->vals[i];
    if (sum) init = 0;
    else init = t == GS_S32 ? -2147483648.0 : -HUGE_VAL;
    {
        gs_value *r = gs_reduce_window(z->g, x.v, gs_scalar(z->g, t, init), sum ? GS_REDUCE_SUM : GS_REDUCE_MAX, w);
        if (!sum) return fz_push(z, r, x);
        if (t == GS_S32) return fz_push(z, r, fz_elem(t, true, false, 0, 0, FC_MIND(x.mag * (double)n, 2147483648.0), 0));
        return fz_push(z, r, fc_sum(t, n, x));
    }
}

/* argmax/argmin: an index jumps with a tiny change of the values, so only of reproducible values */
static int fz_step_argmax(fz *z) {
    int i = fz_pick(z, FZ_P_FLOAT | FZ_P_S32 | FZ_P_RANK1 | FZ_P_REPRO);
    fc_val r;
    int64_t dim;
    if (i < 0) return -2;
    dim = fc_int(&z->rng, 0, fz_shape(z, i).rank - 1);
    memset(&r, 0, sizeof r);
    r.repro = true;
    r.mag = (double)fz_shape(z, i).dims[dim];
    return fz_push(z, fc_one_in(&z->rng, 2) ? gs_argmax(z->g, z->vals[i].v, dim) : gs_argmin(z->g, z->vals[i].v, dim), r);
}

/* top-k along the last dim: the values (continuous), and the indices when the values are reproducible */
static int fz_step_topk(fz *z) {
    int i = fz_pick(z, FZ_P_FLOAT | FZ_P_S32 | FZ_P_RANK1), a;
    gs_shape s;
    gs_value *t;
    fc_val idx;
    if (i < 0) return -2;
    s = fz_shape(z, i);
    t = gs_topk(z->g, z->vals[i].v, fc_int(&z->rng, 1, s.dims[s.rank - 1]), fc_one_in(&z->rng, 3) ? false : true);
    a = fz_push(z, gs_get_tuple_element(z->g, t, 0), z->vals[i]);
    if (a < 0 || !z->vals[i].repro || fc_one_in(&z->rng, 2)) return a;
    memset(&idx, 0, sizeof idx);
    idx.repro = true;
    idx.mag = (double)s.dims[s.rank - 1];
    return fz_push(z, gs_get_tuple_element(z->g, t, 1), idx);
}

/* uniform random numbers: element i is a function of (seed, i) only, so reproducible on any layout */
static int fz_step_rng(fz *z) {
    gs_dtype t = fc_one_in(&z->rng, 3) ? GS_S32 : GS_F32;
    gs_shape s = fz_random_shape(z, t, 1);
    fc_val r;
    double lo = t == GS_S32 ? (double)fc_int(&z->rng, -8, 0) : -2, hi = t == GS_S32 ? (double)fc_int(&z->rng, 1, 8) : 2;
    memset(&r, 0, sizeof r);
    r.repro = true;
    r.mag = 8;
    return fz_push(z, gs_rng_uniform(z->g, gs_scalar(z->g, t, lo), gs_scalar(z->g, t, hi), s, fc_next(&z->rng)), r);
}

/* a 1-D convolution b0f_0io->b0f: input [B, W, C], kernel [K, C, O] */
static int fz_step_convolution(fz *z) {
    int i = fz_pick(z, FZ_P_F32), k;
    gs_shape s, ks;
    gs_conv_config cfg;
    int64_t kd[3], K = 1;
    fc_val a, b, term;
    if (i < 0 || fz_shape(z, i).rank != 3) return -2;
    i = fz_tame(z, i, FZ_TAME);
    if (i < 0) return -1;
    s = fz_shape(z, i);
    memset(&cfg, 0, sizeof cfg);
    if (gs_conv_dims_from_labels("b0f_0io->b0f", &cfg.dims) != GS_OK) return -2;
    cfg.window[0] = gs_window_default();
    cfg.window[0].size = fc_int(&z->rng, 1, 3);
    cfg.window[0].stride = fc_int(&z->rng, 1, 2);
    cfg.window[0].pad_lo = fc_int(&z->rng, 0, 1);
    cfg.window[0].pad_hi = fc_int(&z->rng, 0, 1);
    if (s.dims[1] + cfg.window[0].pad_lo + cfg.window[0].pad_hi < cfg.window[0].size) return -2;
    kd[0] = cfg.window[0].size;
    kd[1] = s.dims[2];
    kd[2] = fc_int(&z->rng, 1, 4);
    ks = gs_shape_make(GS_F32, 3, kd);
    k = fz_same_shape(z, ks, -1);
    k = fz_tame(z, k, FZ_TAME);
    if (k < 0) return -1;
    a = z->vals[i];
    b = z->vals[k];
    K = kd[0] * kd[1];
    term = fc_prod(GS_F32, a, b);
    return fz_push(z, gs_convolution(z->g, a.v, b.v, &cfg), fc_sum(GS_F32, K, term));
}

/* ---- while loops ----
   state (i, x): the body updates x with 1 to 3 shape-preserving micro-steps (a few of them move data between
   shards or need a reduction across them, and the body may annotate x), and i += 1; the condition is i < n. */
enum { FZ_W_TANH, FZ_W_HALF, FZ_W_MAXC, FZ_W_REVERSE, FZ_W_ROTATE, FZ_W_SORT, FZ_W_CUMMAX, FZ_W_ADDMAX, FZ_W_CUMSUM,
       FZ_W_ANNOTATE, FZ_W_COUNT };

/* What one micro-step does to what is known about x. */
static fc_val fz_w_info(int m, gs_shape s, int64_t n_dim, fc_val x) {
    gs_dtype t = s.dtype;
    switch (m) {
    case FZ_W_TANH: return fz_elem(t, x.repro, false, 0, 0, 1, x.err);
    case FZ_W_HALF: return fz_elem(t, x.repro, x.dy, x.f + 1, x.e, x.mag / 2, x.err / 2);
    case FZ_W_MAXC: return fz_elem(t, x.repro, x.dy, FC_MAXI(x.f, 3), FC_MAXI(x.e, 1), FC_MAXD(x.mag, 1), x.err);
    case FZ_W_ADDMAX: {
        fc_val r = fz_elem(t, x.repro, x.dy, x.f, x.e + 1, 2 * x.mag, 2 * x.err);
        if (t == GS_S32) r.mag = FC_MIND(r.mag, 2147483648.0);
        return r;
    }
    case FZ_W_CUMSUM:
        if (t == GS_S32) return fz_elem(t, true, false, 0, 0, FC_MIND(x.mag * (double)n_dim, 2147483648.0), 0);
        return fc_sum(t, n_dim, x);
    default: return x;   /* data movement, sort, cummax, annotation */
    }
}

static int fz_step_while(fz *z) {
    int i = fz_pick(z, FZ_P_FLOAT | FZ_P_S32 | FZ_P_RANK1), k, n_micro, iters, it;
    int micro[3];
    int64_t dims_of[3];
    const gs_sharding *ann[3];
    gs_shape s, st[2];
    gs_graph *body, *cond;
    gs_value *p, *ci, *x, *init, *w, *outs[2], *el[2];
    fc_val info;
    char name[48];
    if (i < 0) return -2;
    if (fz_dtype(z, i) != GS_S32) i = fz_tame(z, i, FZ_TAME);
    if (i < 0) return -1;
    s = fz_shape(z, i);
    n_micro = (int)fc_int(&z->rng, 1, 3);
    iters = (int)fc_int(&z->rng, 0, 3);
    for (k = 0; k < n_micro; k++) {
        int m = (int)fc_int(&z->rng, 0, FZ_W_COUNT - 1);
        if (s.dtype == GS_S32 && (m == FZ_W_TANH || m == FZ_W_HALF)) m = FZ_W_REVERSE;
        micro[k] = m;
        dims_of[k] = fc_int(&z->rng, 0, s.rank - 1);
        ann[k] = m == FZ_W_ANNOTATE ? fz_sharding(z, s) : NULL;
    }
    st[0] = gs_shape_scalar(GS_S32);
    st[1] = s;
    snprintf(name, sizeof name, "body.%d", z->steps);
    body = gs_graph_new(z->ctx, name);
    snprintf(name, sizeof name, "cond.%d", z->steps);
    cond = gs_graph_new(z->ctx, name);
    /* the body */
    p = gs_parameter_tuple(body, 0, 2, st, "state");
    ci = gs_get_tuple_element(body, p, 0);
    x = gs_get_tuple_element(body, p, 1);
    for (k = 0; k < n_micro; k++) {
        int64_t d = dims_of[k], n = s.dims[d];
        gs_dtype t = s.dtype;
        switch (micro[k]) {
        case FZ_W_TANH: x = gs_unary(body, GS_OP_TANH, x); break;
        case FZ_W_HALF: x = gs_mul(body, x, gs_constant_splat(body, s, 0.5)); break;
        case FZ_W_MAXC: x = gs_max(body, x, gs_constant_splat(body, s, t == GS_S32 ? 1.0 : 0.125)); break;
        case FZ_W_REVERSE: x = gs_reverse(body, x, 1, &d); break;
        case FZ_W_ROTATE:
            if (n >= 2) {
                int64_t a0[GS_MAX_RANK], a1[GS_MAX_RANK], b0[GS_MAX_RANK], b1[GS_MAX_RANK], q;
                gs_value *parts[2];
                for (q = 0; q < s.rank; q++) {
                    a0[q] = b0[q] = 0;
                    a1[q] = b1[q] = s.dims[q];
                }
                a0[d] = 1;
                b1[d] = 1;
                parts[0] = gs_slice(body, x, a0, a1, NULL);
                parts[1] = gs_slice(body, x, b0, b1, NULL);
                x = gs_concatenate(body, 2, parts, d);
            }
            break;
        case FZ_W_SORT: x = gs_sort(body, 1, &x, d, false); break;
        case FZ_W_CUMMAX: x = gs_cumulative(body, x, GS_REDUCE_MAX, d, false); break;
        case FZ_W_ADDMAX: {
            int64_t keep[GS_MAX_RANK], q, r = 0;
            gs_value *m = gs_reduce(body, x, gs_scalar(body, t, t == GS_S32 ? -2147483648.0 : -HUGE_VAL), GS_REDUCE_MAX, 1, &d);
            for (q = 0; q < s.rank; q++)
                if (q != d) keep[r++] = q;
            x = gs_add(body, x, gs_broadcast(body, m, s, keep));
            break;
        }
        case FZ_W_CUMSUM: x = gs_cumulative(body, x, GS_REDUCE_SUM, d, false); break;
        default: x = gs_annotate_sharding(body, x, ann[k]); break;
        }
    }
    outs[0] = gs_add(body, ci, gs_scalar(body, GS_S32, 1));
    outs[1] = x;
    gs_graph_set_root(body, gs_tuple(body, 2, outs));
    /* the condition */
    p = gs_parameter_tuple(cond, 0, 2, st, "state");
    gs_graph_set_root(cond, gs_compare(cond, gs_get_tuple_element(cond, p, 0), gs_scalar(cond, GS_S32, iters), GS_CMP_LT));
    /* the loop in the program */
    el[0] = gs_scalar(z->g, GS_S32, 0);
    el[1] = z->vals[i].v;
    init = gs_tuple(z->g, 2, el);
    w = gs_while(z->g, cond, body, init);
    info = z->vals[i];
    for (it = 0; it < iters; it++)
        for (k = 0; k < n_micro; k++) info = fz_w_info(micro[k], s, s.dims[dims_of[k]], info);
    return fz_push(z, gs_get_tuple_element(z->g, w, 1), info);
}

/* ---- gather and scatter (rows picked or updated by s32 indices, out of range ones clamped or skipped as XLA
   does) ---- */
/* A sharding of shape sh over all D devices that splits only dims in mask (the rest of D replicates), with
   iota, shuffled or transposed device orders: steers values to the partitioner's pass-through strategies. */
static const gs_sharding *fz_split_only(fz *z, gs_shape sh, uint32_t mask) {
    int64_t dims[GS_MAX_RANK + 1], rest = z->D, p, rep = 1, devs[FZ_MAX_D];
    int d, n = 0, cand[GS_MAX_RANK], n_dims;
    gs_subgroup sub = GS_SUBGROUP_REPLICATED;
    for (d = 0; d < sh.rank; d++) {
        dims[d] = 1;
        if ((mask >> d) & 1u) cand[n++] = d;
    }
    if (n == 0 || z->D == 1) return gs_sharding_replicated(z->ctx);
    for (p = 2; rest > 1; p++)
        while (rest % p == 0) {
            int to = (int)fc_int(&z->rng, 0, n);   /* n: the replication group */
            rest /= p;
            if (to == n) rep *= p;
            else dims[cand[to]] *= p;
        }
    n_dims = sh.rank;
    if (rep > 1) dims[n_dims++] = rep;
    for (d = 0; d < z->D; d++) devs[d] = d;
    if (fc_one_in(&z->rng, 3)) {
        fc_shuffle(&z->rng, devs, z->D);
        return gs_sharding_tiled(z->ctx, n_dims, dims, devs, rep > 1, &sub);
    }
    if (rep > 1 && fc_one_in(&z->rng, 2)) {
        /* the replication axis major in the device order: [R, tiles] transposed */
        int64_t r[2];
        int perm[2] = {1, 0};
        r[0] = rep;
        r[1] = z->D / rep;
        return gs_sharding_iota(z->ctx, n_dims, dims, 2, r, perm, true, &sub);
    }
    return gs_sharding_tiled(z->ctx, n_dims, dims, NULL, rep > 1, &sub);
}

/* value i annotated with fz_split_only(mask) (one time in two), replacing it in the pool */
static void fz_steer(fz *z, int i, uint32_t mask) {
    gs_value *a;
    if (i < 0 || !fc_one_in(&z->rng, 2)) return;
    a = gs_annotate_sharding(z->g, z->vals[i].v, fz_split_only(z, fz_shape(z, i), mask));
    if (a) z->vals[i].v = a;
}

/* Gather from x along dim 0 (collapsed), sometimes also indexing a second dim d2 (sliced whole, so its start
   clamps to 0, or partly), with the index vector dim last, first or implicit and one or two batch dims; or
   scatter into x the same way (the start along d2, when indexed, skips the whole update unless it is 0); the first
   index component is sometimes an iota along the first batch dim (the parallel case). The
   operand, indices and updates are often steered to shardings the pass-through strategies keep, and to splits
   along the indexed dims sliced one wide (gather) or the scatter dims of the updates (scatter). */
static int fz_step_gather(fz *z) {
    int i = fz_pick(z, FZ_P_FLOAT | FZ_P_S32 | FZ_P_RANK1), ix, d, nvec, ivd, nb, k;
    gs_shape s, is;
    int64_t m = fc_int(&z->rng, 1, 6), m2 = 1, idims[3], d2 = -1, w2 = 0, nidx;
    gs_value *idx;
    fc_val x, r;
    uint32_t ix_batch = 0;
    bool par;
    if (i < 0) return -2;
    s = fz_shape(z, i);
    if (s.rank >= 2 && fc_one_in(&z->rng, 3)) {
        d2 = fc_int(&z->rng, 1, s.rank - 1);
        w2 = fc_one_in(&z->rng, 2) ? s.dims[d2] : fc_int(&z->rng, 1, s.dims[d2]);
    }
    nvec = d2 >= 0 ? 2 : 1;
    nb = fc_one_in(&z->rng, 4) ? 2 : 1;
    if (nb == 2) m2 = fc_int(&z->rng, 1, 3);
    /* one time in three the first index component is an iota along the first batch dim, as long as x's dim 0
       (XLA's parallel gather/scatter: row k of the result comes from, or goes to, row k of x) */
    par = fc_one_in(&z->rng, 3);
    if (par) m = s.dims[0];
    if (gs_shape_numel(&s) / s.dims[0] * m * m2 > FZ_NUMEL_CAP) return -2;
    /* indices: batch dims [m] or [m, m2], the index vector dim last, first, or implicit (nvec 1 only) */
    k = (int)fc_int(&z->rng, 0, nvec == 1 ? 2 : 1);
    ivd = k == 0 ? nb : k == 1 ? 0 : nb;
    {
        int q = 0;
        if (k == 1) idims[q++] = nvec;
        idims[q++] = m;
        if (nb == 2) idims[q++] = m2;
        if (k == 0) idims[q++] = nvec;
        is = gs_shape_make(GS_S32, q, idims);
        for (d = 0; d < q; d++)
            if (d != ivd) ix_batch |= 1u << d;
    }
    nidx = gs_shape_numel(&is);
    {
        /* indices: a parameter (s32 inputs are in [-8, 8]) or a constant table */
        int32_t tab[256];
        fc_val ii;
        if (nidx > (int64_t)(sizeof tab / sizeof tab[0])) return -2;   /* (a parallel gather's m is x's dim 0) */
        memset(&ii, 0, sizeof ii);
        ii.repro = true;
        ii.mag = 8;
        for (d = 0; d < nidx; d++) tab[d] = (int32_t)fc_int(&z->rng, -1, s.dims[0]);
        if (par) {
            gs_shape ps = is;   /* the iota component: one wide along the index vector dim */
            gs_value *pieces[2];
            if (ivd < is.rank) ps.dims[ivd] = 1;
            pieces[0] = gs_iota(z->g, ps, k == 1 ? 1 : 0);
            pieces[1] = gs_constant(z->g, ps, tab);
            ii.mag = (double)s.dims[0];
            ix = fz_push(z, nvec == 2 ? gs_concatenate(z->g, 2, pieces, ivd) : pieces[0], ii);
        } else {
            ix = z->n_params < FZ_MAX_PARAMS && fc_one_in(&z->rng, 2) ? fz_param(z, is)
                                                                      : fz_push(z, gs_constant(z->g, is, tab), ii);
        }
    }
    if (ix < 0) return -1;
    fz_steer(z, ix, ix_batch);
    idx = z->vals[ix].v;
    if (fc_one_in(&z->rng, 2)) {
        /* gather: offset dims 1.. of x follow the batch dims */
        gs_gather_dims gd;
        uint32_t pass = 0;
        memset(&gd, 0, sizeof gd);
        for (d = 1; d < s.rank; d++) gd.offset_dims[gd.n_offset_dims++] = nb + d - 1;
        gd.n_collapsed_slice_dims = 1;
        gd.collapsed_slice_dims[0] = 0;
        gd.n_start_index_map = nvec;
        gd.start_index_map[0] = 0;
        if (nvec == 2) gd.start_index_map[1] = d2;
        gd.index_vector_dim = ivd;
        gd.slice_sizes[0] = 1;
        for (d = 1; d < s.rank; d++) gd.slice_sizes[d] = d == d2 ? w2 : s.dims[d];
        for (d = 1; d < s.rank; d++)
            if (gd.slice_sizes[d] == s.dims[d]) pass |= 1u << d;
        /* half the time the indexed dims sliced one wide may be split too (masked local gathers + all-reduce) */
        if (fc_one_in(&z->rng, 2)) pass |= 1u | (d2 >= 0 && w2 == 1 ? 1u << d2 : 0);
        fz_steer(z, i, pass);
        x = z->vals[i];
        return fz_push(z, gs_gather(z->g, x.v, idx, &gd), x);
    }
    {
        /* scatter updates [batch dims, rest of x] into x: replace (later updates win), add, max or min */
        gs_scatter_dims sd;
        gs_shape us;
        int u, kk = (int)fc_int(&z->rng, 0, 3);
        uint32_t pass = 0, upass = 0;
        gs_reduce_kind comb = kk == 0 ? GS_REDUCE_REPLACE : kk == 1 ? GS_REDUCE_SUM
                            : kk == 2 ? GS_REDUCE_MAX : GS_REDUCE_MIN;
        int64_t mult = m * m2;
        us.dtype = s.dtype;
        us.rank = s.rank - 1 + nb;
        us.dims[0] = m;
        if (nb == 2) us.dims[1] = m2;
        for (d = 1; d < s.rank; d++) {
            /* a window along d2 covers it whole or partly */
            us.dims[nb + d - 1] = d == d2 ? w2 : s.dims[d];
            if (us.dims[nb + d - 1] == s.dims[d]) {
                pass |= 1u << d;
                upass |= 1u << (nb + d - 1);
            }
        }
        if (gs_shape_numel(&us) > FZ_NUMEL_CAP) return -2;
        fz_steer(z, i, pass);
        if (comb == GS_REDUCE_SUM) {
            i = fz_tame(z, i, FZ_TAME);
            if (i < 0) return -1;
        }
        x = z->vals[i];
        u = fz_same_shape(z, us, -1);
        if (comb == GS_REDUCE_SUM) u = fz_tame(z, u, FZ_TAME);
        if (u < 0) return -1;
        /* half the time the updates may be split along their scatter dims too (index pass-through) */
        if (fc_one_in(&z->rng, 2)) upass |= nb == 2 ? 3u : 1u;
        fz_steer(z, u, upass);
        memset(&sd, 0, sizeof sd);
        for (d = 1; d < s.rank; d++) sd.update_window_dims[sd.n_update_window_dims++] = nb + d - 1;
        sd.n_inserted_window_dims = 1;
        sd.inserted_window_dims[0] = 0;
        sd.n_scatter_dims_to_operand_dims = nvec;
        sd.scatter_dims_to_operand_dims[0] = 0;
        if (nvec == 2) sd.scatter_dims_to_operand_dims[1] = d2;
        sd.index_vector_dim = ivd;
        r = fc_either(x, z->vals[u]);
        if (comb == GS_REDUCE_SUM) {
            /* each element adds at most m * m2 updates to its value, in a fixed order on both sides */
            fc_val t = r;
            if (s.dtype == GS_S32) r = fz_elem(GS_S32, true, false, 0, 0, FC_MIND((double)(mult + 1) * t.mag, 2147483648.0), 0);
            else r = fc_sum(s.dtype, mult + 1, t);
        }
        return fz_push(z, gs_scatter(z->g, x.v, idx, z->vals[u].v, &sd, comb), r);
    }
}

/* ---- one program ---- */
/* Builds the program of seed in ctx (see fc_build_fn): the partitioner's options are drawn too, and one program
   in 16 runs on a threaded runtime. */
static bool fz_build(gs_ctx *ctx, uint64_t seed, unsigned ops, int64_t only_D, int max_steps, fc_program *out,
                     const char **why) {
    fz z;
    int k, n_steps, n_out = 1, tries;
    gs_value *outs[5];
    uint64_t in_rng;
    memset(&z, 0, sizeof z);
    memset(out, 0, sizeof *out);
    z.ctx = ctx;
    z.rng = seed;
    z.D = only_D > 0 ? only_D : fc_int(&z.rng, 1, 16);
    out->D = z.D;
    out->pd.num_devices = z.D;
    out->pd.windowed_einsum_bytes = fc_one_in(&z.rng, 2) ? 1 : 0;   /* 1: every eligible dot becomes a loop */
    out->pd.all_gather_as_all_reduce = fc_one_in(&z.rng, 4);
    out->threaded = fc_one_in(&z.rng, 16);
    {   /* the loop's form, from bits of the seed apart from the program's draws */
        uint64_t lf = (seed ^ 0x5bd1e995u) * 0x9e3779b97f4a7c15ull;
        out->pd.windowed_einsum_unroll = ((lf >> 40) & 1u) != 0;
        out->pd.windowed_einsum_bidirectional = ((lf >> 41) & 1u) != 0;
    }
    snprintf(out->desc, sizeof out->desc, "%lld devices%s, windowed_einsum_bytes %lld%s%s%s", (long long)z.D,
             out->threaded ? " (threaded)" : "", (long long)out->pd.windowed_einsum_bytes,
             out->pd.windowed_einsum_unroll ? " unrolled" : "", out->pd.windowed_einsum_bidirectional ? " bidirectional" : "",
             out->pd.all_gather_as_all_reduce ? ", all_gather_as_all_reduce" : "");
    in_rng = fc_next(&z.rng);
    /* most programs have a few annotations; one in eight has one on every value (many reshards) */
    z.max_annot = fc_one_in(&z.rng, 8) ? FZ_MAX_VALS : FZ_MAX_ANNOT;
    z.annot_odds = z.max_annot > FZ_MAX_ANNOT ? 1 : 2;
    z.g = gs_graph_new(ctx, "fuzz");
    gs_graph_set_num_partitions(z.g, z.D);
    for (k = (int)fc_int(&z.rng, 1, 2); k > 0; k--)
        if (fz_param(&z, fz_random_shape(&z, fc_one_in(&z.rng, 4) ? GS_S32 : GS_F32, fc_one_in(&z.rng, 6) ? 0 : 1)) < 0) break;
    n_steps = (int)fc_int(&z.rng, 2, FZ_MAX_STEPS);
    for (z.steps = 0; z.steps < n_steps && (max_steps < 0 || z.steps < max_steps) && !gs_ctx_error(ctx); z.steps++) {
        int r = -2;
        for (tries = 0; tries < 8 && r == -2; tries++) {
            switch (fc_draw_kind(&z.rng, fz_kinds, FZ_N_KINDS, ops)) {
            case FZ_ELEM: r = fz_step_elementwise(&z); break;
            case FZ_BCAST: r = fz_step_broadcast(&z); break;
            case FZ_REDUCE: r = fz_step_reduce(&z); break;
            case FZ_TRANSPOSE: r = fz_step_transpose(&z); break;
            case FZ_RESHAPE: r = fz_step_reshape(&z); break;
            case FZ_DOT: r = fz_step_dot(&z); break;
            case FZ_DSLICE: r = fz_step_dynamic_slice(&z); break;
            case FZ_SORT: r = fz_step_sort(&z); break;
            case FZ_CUM: r = fz_step_cumulative(&z); break;
            case FZ_SLICE: r = fz_step_slice(&z); break;
            case FZ_PAD: r = fz_step_pad(&z); break;
            case FZ_CONCAT: r = fz_step_concatenate(&z); break;
            case FZ_REVERSE: r = fz_step_reverse(&z); break;
            case FZ_RWINDOW: r = fz_step_reduce_window(&z); break;
            case FZ_ARG: r = fz_step_argmax(&z); break;
            case FZ_TOPK: r = fz_step_topk(&z); break;
            case FZ_RNG: r = fz_step_rng(&z); break;
            case FZ_CONV: r = fz_step_convolution(&z); break;
            case FZ_WHILE: r = fz_step_while(&z); break;
            default: r = fz_step_gather(&z); break;
            }
        }
        if (r == -1) break;
        if (r >= 0) fz_maybe_annotate(&z, r);
    }
    out->n_steps = z.steps;
    if (gs_ctx_error(ctx) || z.n == 0) {
        *why = gs_ctx_error(ctx) ? gs_ctx_error_msg(ctx) : "no values";
        return false;
    }
    /* outputs: the last value, then (newest first) up to three other computed values nothing reads, so that
       every step is live; and sometimes one more value at random */
    outs[0] = z.vals[z.n - 1].v;
    if (max_steps < 0) {
        int i, j, q;
        for (i = z.n - 2; i >= 0 && n_out < 4; i--) {
            gs_value *v = z.vals[i].v;
            gs_op op = gs_value_op(v);
            bool read = false;
            if (op == GS_OP_PARAMETER || op == GS_OP_CONSTANT || op == GS_OP_IOTA || gs_value_shape(v).dtype == GS_TUPLE) continue;
            for (j = 0; j < gs_graph_num_values(z.g) && !read; j++) {
                gs_value *u = gs_graph_value(z.g, j);
                for (q = 0; q < gs_value_num_operands(u); q++) read = read || gs_value_operand(u, q) == v;
            }
            for (j = 0; j < n_out; j++) read = read || outs[j] == v;
            if (!read) outs[n_out++] = v;
        }
        if (n_out < 5 && fc_one_in(&z.rng, 3)) {
            bool dup = false;
            i = (int)fc_int(&z.rng, 0, z.n - 1);
            for (j = 0; j < n_out; j++) dup = dup || outs[j] == z.vals[i].v;
            if (!dup && fz_shape(&z, i).dtype != GS_TUPLE) outs[n_out++] = z.vals[i].v;
        }
    }
    return fc_finish(z.g, n_out, outs, z.vals, z.n, in_rng, out, why);
}

/* the SPMD program's text must parse back the same; the summary line only */
static const fc_fuzzer fz_fuzzer = {"FUZZ", "spmd_fuzz", "OPS", fz_kinds, FZ_N_KINDS, 2000, FZ_MAX_D, true, false,
                                    fz_build, "spmd fuzz", "programs", "SPMD text errors"};

static void test_spmd_fuzz(void) {
    fc_totals T;
    fc_run(&fz_fuzzer, &T);
}

void suite_spmd_fuzz(void) { RUN(test_spmd_fuzz); }
