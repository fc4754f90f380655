/* gs_interp.c - the reference interpreter: one device, global arrays, XLA semantics.
 *
 * Compute format (gs__buf): f32, bf16, f16 and the 8/4-bit floats are float (a value already rounded to its
 * type), f64 double, integers their C type (s2/s4 int8_t, u2/u4 uint8_t, holding the value), pred uint8_t
 * holding 0 or 1, c64/c128 pairs of float/double (gs_base.c has the table). gs_eval converts the caller's
 * storage format (bf16 and f16 as uint16, the 8-bit floats as their byte) to compute format and back. Every op
 * that makes a new narrow float value rounds it to nearest even at once; reductions, scans and scatter
 * combiners round after every combining step (the reducer is a computation in that type), while dot
 * accumulates in f32 and rounds the final sums. f32, bf16, s32, u32 and pred have their own loops; the other
 * types go through the generic path below (64-bit integers wrapped to the width, doubles rounded once).
 *
 * Values and buffers. An array value owns one buffer; a tuple value (tuple, while, sort of several operands,
 * topk, a tuple-shaped parameter) is n_tuple buffers, one per element (tuples are flat). Buffers are never
 * written after they are made, so values that only pass data through (parameter, get-tuple-element, tuple,
 * reshape, copy, annotations, single-partition collectives, a while loop that runs zero times) share their
 * operand's buffer; a buffer is freed right after the last instruction that reads it. Instructions the root
 * does not depend on are not evaluated.
 *
 * Evaluation is a stepper (gs__ev_step): a stack of frames, one per graph being evaluated (the entry graph,
 * then the condition or body of each while loop being run), and one step runs one instruction of the
 * innermost frame or one loop transition. gs__eval_graph (and so gs_eval) loops over it; the SPMD runtime
 * advances one stepper per device, in turn in lockstep mode. A collective hook that answers GS__PENDING
 * pauses the stepper at the collective until its result has been filled in.
 *
 * gs__eval_graph's params are flattened: parameter 0's buffers come first (one for an array parameter,
 * n_tuple consecutive ones for a tuple-shaped parameter), then parameter 1's, and so on. Its results are the
 * root's buffers (n_tuple of them for a tuple root, else one); each is freshly allocated with gs__malloc.
 * gs_eval uses the same flattening for its inputs: a tuple-shaped entry parameter takes n_tuple consecutive
 * input pointers.
 *
 * Semantics worth spelling out (XLA's, where XLA defines them):
 * - Integer division by zero gives -1 (s32) or all ones (u32); remainder by zero gives the dividend;
 *   INT_MIN / -1 = INT_MIN and INT_MIN % -1 = 0; integer arithmetic wraps. Float remainder is C's fmod.
 * - maximum/minimum propagate NaN (the first NaN operand); max(+0, -0) = +0 and min(+0, -0) = -0 in either
 *   operand order, so reductions give the same bits in any order.
 * - Integer power: exponentiation by squaring (wrapping); a negative exponent gives 1 for base 1 and 0 for
 *   any other base, -1 included (XLA's evaluator and emitters).
 * - convert float -> integer: NaN -> 0, truncation toward zero, saturating at the type's range (negative
 *   values give 0 for u32); anything -> pred is x != 0; s32 <-> u32 wraps.
 * - reduce combines result = init (op) x0 (op) x1 ... over the reduced elements in increasing row-major order.
 * - sort is stable; NaN sorts after every number in ascending order and before them in descending order;
 *   -0 and +0 compare equal. topk takes the first k of that order (NaN counts as the largest value).
 * - scatter applies updates in increasing row-major order of the scatter index space; an update whose whole
 *   window does not fit in the operand is skipped.
 * - rng: element i (row-major over the result shape) uses bits = gs__rng_bits(seed, i) (formula at the
 *   function). Floats: u = (bits >> 40) / 2^24 in [0, 1), r = lo + (hi - lo) * u computed in double and
 *   rounded to the result type; a result that rounds up to hi becomes the largest representable value below
 *   hi. Integers: lo + bits % (hi - lo). When hi <= lo (or a bound is NaN) every element is lo.
 *   The shard form takes i as the row-major index, in full_shape, of offsets + (the element's multi-index),
 *   so a block computes exactly its part of the full array; elements outside the full array hold lo.
 * - One partition, no collective hook: collectives whose groups all have size 1 are identities (a group of
 *   more than one partition needs the hook). collective-permute copies the operand when the pair
 *   (partition, partition) is present, gives zeros when no pair targets this partition, and needs the hook
 *   otherwise.
 * - Manual-region boundaries show device 0's view on the reference device: to_manual takes the block at
 *   offset 0 of each dim (the shard shape is the result shape); to_full places the operand at offset 0 of a
 *   zero array of the full shape.
 */
#include "gs_internal.h"

/* ---------------------------------------------------------------------------------------------------------
   Utilities: shapes, strided copies, scalar semantics
   ------------------------------------------------------------------------------------------------------- */

GS__FN float gs__ip_rbf(float x) { return gs__vk_rbf(x); }

/* A transposed 2-D slab of 4-byte elements, in 16 x 16 tiles: D[a * dsa + b] = S[a + b * ssb]. Row by row the
   reads would stride through a new cache line per element; within a tile the 16 lines read are reused. */
GS__FN void gs__ip_xcopy_tiles(uint32_t *D, const uint32_t *S, int64_t na, int64_t nb, int64_t dsa, int64_t ssb) {
    int64_t a0, b0, a, b;
    for (a0 = 0; a0 < na; a0 += 16)
        for (b0 = 0; b0 < nb; b0 += 16) {
            int64_t a1 = GS__MIN(na, a0 + 16), b1 = GS__MIN(nb, b0 + 16);
            for (a = a0; a < a1; a++)
                for (b = b0; b < b1; b++) D[a * dsa + b] = S[a + b * ssb];
        }
}

/* The next index of dims [0, n) in row-major order, moving a destination and a source offset by their strides;
   false after the last (idx is back at zero). */
GS__FN bool gs__ip_xstep(int n, const int64_t *dims, int64_t *idx, int64_t *doff, const int64_t *dstr, int64_t *soff,
                         const int64_t *sstr) {
    int d;
    for (d = n - 1; d >= 0; d--) {
        idx[d]++;
        *doff += dstr[d];
        *soff += sstr[d];
        if (idx[d] < dims[d]) return true;
        *doff -= dstr[d] * dims[d];
        *soff -= sstr[d] * dims[d];
        idx[d] = 0;
    }
    return false;
}

/* dst[doff + sum idx*dstr] = src[soff + sum idx*sstr] for every idx < dims (offsets and strides in elements;
   es is the element size in bytes). */
GS__FN void gs__ip_xcopy(size_t es, int rank, const int64_t *dims, void *dst, int64_t doff, const int64_t *dstr,
                      const void *src, int64_t soff, const int64_t *sstr) {
    int64_t idx[GS_MAX_RANK];
    int64_t n_in, dsi, ssi;
    int d;
    for (d = 0; d < rank; d++)
        if (dims[d] <= 0) return;
    if (rank == 0) {
        memcpy((char *)dst + doff * (int64_t)es, (const char *)src + soff * (int64_t)es, es);
        return;
    }
    if (es == 4 && rank >= 2 && dstr[rank - 1] == 1 && sstr[rank - 2] == 1 && sstr[rank - 1] > 16 && dims[rank - 2] >= 16 &&
        dims[rank - 1] >= 16) {
        /* the last two dims are a transpose: tiles of them, for every index of the dims before */
        memset(idx, 0, sizeof idx);
        for (;;) {
            gs__ip_xcopy_tiles((uint32_t *)dst + doff, (const uint32_t *)src + soff, dims[rank - 2], dims[rank - 1],
                               dstr[rank - 2], sstr[rank - 1]);
            if (!gs__ip_xstep(rank - 2, dims, idx, &doff, dstr, &soff, sstr)) return;
        }
    }
    n_in = dims[rank - 1];
    dsi = dstr[rank - 1];
    ssi = sstr[rank - 1];
    memset(idx, 0, sizeof idx);
    for (;;) {
        int64_t i, dp = doff, sp = soff;
        if (dsi == 1 && ssi == 1) {
            memcpy((char *)dst + dp * (int64_t)es, (const char *)src + sp * (int64_t)es, (size_t)n_in * es);
        } else if (es == 4) {
            uint32_t *D = (uint32_t *)dst;
            const uint32_t *S = (const uint32_t *)src;
            for (i = 0; i < n_in; i++, dp += dsi, sp += ssi) D[dp] = S[sp];
        } else if (es == 1) {
            uint8_t *D = (uint8_t *)dst;
            const uint8_t *S = (const uint8_t *)src;
            for (i = 0; i < n_in; i++, dp += dsi, sp += ssi) D[dp] = S[sp];
        } else {
            for (i = 0; i < n_in; i++, dp += dsi, sp += ssi)
                memcpy((char *)dst + dp * (int64_t)es, (const char *)src + sp * (int64_t)es, es);
        }
        if (!gs__ip_xstep(rank - 1, dims, idx, &doff, dstr, &soff, sstr)) return;
    }
}

/* An odometer over `dims` that tracks a position with arbitrary strides. */
typedef struct gs__ip_odo {
    int rank;
    int64_t dims[GS_MAX_RANK], idx[GS_MAX_RANK], st[GS_MAX_RANK];
    int64_t pos;
} gs__ip_odo;

GS__FN void gs__ip_odo_init(gs__ip_odo *o, int rank, const int64_t *dims, const int64_t *st) {
    int d;
    memset(o, 0, sizeof *o);
    o->rank = rank;
    for (d = 0; d < rank; d++) {
        o->dims[d] = dims[d];
        o->st[d] = st ? st[d] : 0;
    }
}

/* Advances to the next index in row-major order; returns false after the last one. */
GS__FN bool gs__ip_odo_next(gs__ip_odo *o) {
    int d;
    for (d = o->rank - 1; d >= 0; d--) {
        o->idx[d]++;
        o->pos += o->st[d];
        if (o->idx[d] < o->dims[d]) return true;
        o->pos -= o->st[d] * o->dims[d];
        o->idx[d] = 0;
    }
    return false;
}

GS__FN void gs__ip_fill(void *data, size_t es, int64_t n, const void *val) {
    int64_t i;
    if (es == 4) {
        uint32_t v, *p = (uint32_t *)data;
        memcpy(&v, val, 4);
        for (i = 0; i < n; i++) p[i] = v;
    } else if (es == 1) {
        memset(data, *(const uint8_t *)val, (size_t)n);
    } else {
        for (i = 0; i < n; i++) memcpy((char *)data + (size_t)i * es, val, es);
    }
}

/* Reads element i of an integer (s32/u32) buffer as int64. */
GS__FN int64_t gs__ip_get_index(const gs__buf *b, int64_t i) {
    if (b->shape.dtype == GS_U32) return (int64_t)((const uint32_t *)b->data)[i];
    if (b->shape.dtype == GS_S32) return (int64_t)((const int32_t *)b->data)[i];
    if (b->shape.dtype == GS_U64 && gs__ld_i(GS_U64, b->data, i) > (uint64_t)INT64_MAX) return INT64_MAX;
    return (int64_t)gs__ld_i(b->shape.dtype, b->data, i);
}

GS__FN int64_t gs__ip_clamp64(int64_t x, int64_t lo, int64_t hi) {
    if (hi < lo) hi = lo;
    return x < lo ? lo : (x > hi ? hi : x);
}

GS__FN int32_t gs__ip_s32(uint32_t u) { return (int32_t)u; }   /* two's complement wrap */

GS__FN uint64_t gs__ip_upow64(uint64_t base, uint64_t e) {
    uint64_t r = 1;
    while (e) {
        if (e & 1u) r *= base;
        base *= base;
        e >>= 1;
    }
    return r;
}

/* products wrap modulo 2^64, so the low 32 bits are the 32-bit power */
GS__FN uint32_t gs__ip_upow(uint32_t base, uint32_t e) { return (uint32_t)gs__ip_upow64(base, e); }

/* XLA: a negative exponent gives 1 for base 1 and 0 for every other base (-1 included) */
GS__FN int32_t gs__ip_spow(int32_t base, int32_t e) {
    if (e < 0) return base == 1 ? 1 : 0;
    return gs__ip_s32(gs__ip_upow((uint32_t)base, (uint32_t)e));
}

GS__FN int32_t gs__ip_f2s(float x) {
    if (gs__ip_isnan(x)) return 0;
    if (x >= 2147483648.0f) return INT32_MAX;
    if (x <= -2147483648.0f) return INT32_MIN;
    return (int32_t)x;
}

GS__FN uint32_t gs__ip_f2u(float x) {
    if (gs__ip_isnan(x) || x <= 0.0f) return 0;
    if (x >= 4294967296.0f) return UINT32_MAX;
    return (uint32_t)x;
}

/* Scalar combiners for reductions, scans and scatter. */
GS__FN float gs__ip_comb_f(gs_reduce_kind k, float a, float b, bool bf) {
    float r;
    switch (k) {
    case GS_REDUCE_SUM: r = a + b; break;
    case GS_REDUCE_PROD: r = a * b; break;
    case GS_REDUCE_MAX: return gs__ip_fmax(a, b);
    case GS_REDUCE_MIN: return gs__ip_fmin(a, b);
    case GS_REDUCE_REPLACE: return b;
    default: return a;
    }
    return bf ? gs__ip_rbf(r) : r;
}

GS__FN int32_t gs__ip_comb_s(gs_reduce_kind k, int32_t a, int32_t b) {
    switch (k) {
    case GS_REDUCE_SUM: return gs__ip_s32((uint32_t)a + (uint32_t)b);
    case GS_REDUCE_PROD: return gs__ip_s32((uint32_t)a * (uint32_t)b);
    case GS_REDUCE_MAX: return a > b ? a : b;
    case GS_REDUCE_MIN: return a < b ? a : b;
    case GS_REDUCE_AND: return a & b;
    case GS_REDUCE_OR: return a | b;
    case GS_REDUCE_REPLACE: return b;
    default: return a;
    }
}

GS__FN uint32_t gs__ip_comb_u(gs_reduce_kind k, uint32_t a, uint32_t b) {
    switch (k) {
    case GS_REDUCE_SUM: return a + b;
    case GS_REDUCE_PROD: return a * b;
    case GS_REDUCE_MAX: return a > b ? a : b;
    case GS_REDUCE_MIN: return a < b ? a : b;
    case GS_REDUCE_AND: return a & b;
    case GS_REDUCE_OR: return a | b;
    case GS_REDUCE_REPLACE: return b;
    default: return a;
    }
}

/* pred: sum/or/max are logical or, prod/and/min logical and */
GS__FN uint8_t gs__ip_comb_p(gs_reduce_kind k, uint8_t a, uint8_t b) {
    switch (k) {
    case GS_REDUCE_SUM: case GS_REDUCE_OR: case GS_REDUCE_MAX: return (uint8_t)(a | b);
    case GS_REDUCE_PROD: case GS_REDUCE_AND: case GS_REDUCE_MIN: return (uint8_t)(a & b);
    case GS_REDUCE_REPLACE: return b;
    default: return a;
    }
}

/* ---- the generic slow path: any element type, through 64-bit integers and doubles ----
   The types that existed first (f32, bf16, s32, u32, pred) keep their own loops; every other type goes
   through these. Integers compute in 64 bits and wrap to their width (exact), real floats compute in double
   and round once to their type (exact for add/subtract/multiply/divide/sqrt of f32 and narrower inputs). */
GS__FN bool gs__ip_fast(gs_dtype t) { return t == GS_F32 || t == GS_BF16 || t == GS_S32 || t == GS_U32 || t == GS_PRED; }

GS__FN double gs__ip_dmax(double a, double b) {
    if (a != a) return a;
    if (b != b) return b;
    if (a == b) return signbit(a) ? b : a;
    return a > b ? a : b;
}

GS__FN double gs__ip_dmin(double a, double b) {
    if (a != a) return a;
    if (b != b) return b;
    if (a == b) return signbit(a) ? a : b;
    return a < b ? a : b;
}


/* integer binary op at the width of t (a, b already wrapped to t); false: not an integer op */
GS__FN bool gs__ip_ibin(gs_dtype t, gs_op op, uint64_t a, uint64_t b, uint64_t *y) {
    bool sg = gs__is_signed(t);
    int64_t sa = (int64_t)a, sb = (int64_t)b;
    uint64_t smin = gs__int_wrap(t, ((uint64_t)1) << (gs__dt(t)->bits - 1));
    switch (op) {
    case GS_OP_ADD: *y = a + b; break;
    case GS_OP_SUBTRACT: *y = a - b; break;
    case GS_OP_MULTIPLY: *y = a * b; break;
    case GS_OP_DIVIDE:   /* x / 0 = -1 (all ones); INT_MIN / -1 = INT_MIN */
        if (b == 0) *y = ~(uint64_t)0;
        else if (sg && a == smin && sb == -1) *y = a;
        else *y = sg ? (uint64_t)(sa / sb) : a / b;
        break;
    case GS_OP_REMAINDER:   /* x % 0 = x; INT_MIN % -1 = 0 */
        if (b == 0) *y = a;
        else if (sg && a == smin && sb == -1) *y = 0;
        else *y = sg ? (uint64_t)(sa % sb) : a % b;
        break;
    case GS_OP_MAXIMUM: *y = (sg ? sa > sb : a > b) ? a : b; break;
    case GS_OP_MINIMUM: *y = (sg ? sa < sb : a < b) ? a : b; break;
    case GS_OP_POWER:
        if (sg && sb < 0) *y = sa == 1 ? 1u : 0u;
        else *y = gs__ip_upow64(a, b);
        break;
    case GS_OP_AND: *y = a & b; break;
    case GS_OP_OR: *y = a | b; break;
    case GS_OP_XOR: *y = a ^ b; break;
    default: return false;
    }
    *y = gs__int_wrap(t, *y);
    return true;
}

/* real float binary op in double; false: not a float op */
GS__FN bool gs__ip_fbin(gs_op op, double a, double b, double *y) {
    switch (op) {
    case GS_OP_ADD: *y = a + b; break;
    case GS_OP_SUBTRACT: *y = a - b; break;
    case GS_OP_MULTIPLY: *y = a * b; break;
    case GS_OP_DIVIDE: *y = a / b; break;
    case GS_OP_REMAINDER: *y = fmod(a, b); break;
    case GS_OP_MAXIMUM: *y = gs__ip_dmax(a, b); break;
    case GS_OP_MINIMUM: *y = gs__ip_dmin(a, b); break;
    case GS_OP_POWER: *y = pow(a, b); break;
    default: return false;
    }
    return true;
}

GS__FN bool gs__ip_funary(gs_op op, double x, double *y) {
    switch (op) {
    case GS_OP_NEGATE: *y = -x; break;
    case GS_OP_ABS: *y = fabs(x); break;
    case GS_OP_EXP: *y = exp(x); break;
    case GS_OP_LOG: *y = log(x); break;
    case GS_OP_TANH: *y = tanh(x); break;
    case GS_OP_LOGISTIC: *y = 1.0 / (1.0 + exp(-x)); break;
    case GS_OP_SQRT: *y = sqrt(x); break;
    case GS_OP_RSQRT: *y = 1.0 / sqrt(x); break;
    case GS_OP_FLOOR: *y = floor(x); break;
    case GS_OP_CEIL: *y = ceil(x); break;
    case GS_OP_SIGN: *y = (x != x || x == 0.0) ? x : (x > 0.0 ? 1.0 : -1.0); break;
    default: return false;
    }
    return true;
}

GS__FN bool gs__ip_iunary(gs_dtype t, gs_op op, uint64_t a, uint64_t *y) {
    bool sg = gs__is_signed(t);
    switch (op) {
    case GS_OP_NEGATE: *y = 0u - a; break;
    case GS_OP_ABS: *y = (sg && (int64_t)a < 0) ? 0u - a : a; break;
    case GS_OP_SIGN: *y = sg ? (uint64_t)(int64_t)(((int64_t)a > 0) - ((int64_t)a < 0)) : (uint64_t)(a != 0); break;
    case GS_OP_NOT: *y = ~a; break;
    default: return false;
    }
    *y = gs__int_wrap(t, *y);
    return true;
}

/* complex (re, im) element i of a c64/c128 buffer */
GS__FN void gs__ip_ldc(gs_dtype t, const void *p, int64_t i, double *re, double *im) {
    if (t == GS_C64) {
        *re = ((const float *)p)[2 * i];
        *im = ((const float *)p)[2 * i + 1];
    } else {
        *re = ((const double *)p)[2 * i];
        *im = ((const double *)p)[2 * i + 1];
    }
}

GS__FN void gs__ip_stc(gs_dtype t, void *p, int64_t i, double re, double im) {
    if (t == GS_C64) {
        ((float *)p)[2 * i] = (float)re;
        ((float *)p)[2 * i + 1] = (float)im;
    } else {
        ((double *)p)[2 * i] = re;
        ((double *)p)[2 * i + 1] = im;
    }
}

GS__FN bool gs__ip_cbin(gs_op op, double ar, double ai, double br, double bi, double *yr, double *yi) {
    switch (op) {
    case GS_OP_ADD: *yr = ar + br; *yi = ai + bi; break;
    case GS_OP_SUBTRACT: *yr = ar - br; *yi = ai - bi; break;
    case GS_OP_MULTIPLY: *yr = ar * br - ai * bi; *yi = ar * bi + ai * br; break;
    case GS_OP_DIVIDE: {
        double d = br * br + bi * bi;
        *yr = (ar * br + ai * bi) / d;
        *yi = (ai * br - ar * bi) / d;
        break;
    }
    default: return false;
    }
    return true;
}

/* y[iy] = a[ia] op b[ib] for any element type (compute format); false: op not defined on t */
GS__FN bool gs__ip_gbin(gs_dtype t, gs_op op, const void *a, int64_t ia, const void *b, int64_t ib, void *y, int64_t iy) {
    if (gs__is_float(t)) {
        double r;
        if (!gs__ip_fbin(op, gs__ld_f(t, a, ia), gs__ld_f(t, b, ib), &r)) return false;
        gs__st_f(t, y, iy, r);
    } else if (gs__is_int(t) || t == GS_PRED) {
        uint64_t r, x = gs__ld_i(t, a, ia), z = gs__ld_i(t, b, ib);
        if (t == GS_PRED) {
            if (op == GS_OP_AND || op == GS_OP_MINIMUM) r = x & z;
            else if (op == GS_OP_OR || op == GS_OP_MAXIMUM) r = x | z;
            else if (op == GS_OP_XOR) r = x ^ z;
            else return false;
        } else if (!gs__ip_ibin(t, op, x, z, &r)) {
            return false;
        }
        gs__st_i(t, y, iy, r);
    } else if (gs__is_complex(t)) {
        double ar, ai, br, bi, yr, yi;
        gs__ip_ldc(t, a, ia, &ar, &ai);
        gs__ip_ldc(t, b, ib, &br, &bi);
        if (!gs__ip_cbin(op, ar, ai, br, bi, &yr, &yi)) return false;
        gs__ip_stc(t, y, iy, yr, yi);
    } else {
        return false;
    }
    return true;
}

GS__FN bool gs__ip_gunary(gs_dtype t, gs_op op, const void *a, int64_t i, void *y) {
    if (gs__is_float(t)) {
        double r;
        if (!gs__ip_funary(op, gs__ld_f(t, a, i), &r)) return false;
        gs__st_f(t, y, i, r);
    } else if (gs__is_int(t)) {
        uint64_t r;
        if (!gs__ip_iunary(t, op, gs__ld_i(t, a, i), &r)) return false;
        gs__st_i(t, y, i, r);
    } else if (t == GS_PRED) {
        if (op != GS_OP_NOT) return false;
        ((uint8_t *)y)[i] = (uint8_t)!((const uint8_t *)a)[i];
    } else if (gs__is_complex(t)) {
        double re, im;
        if (op != GS_OP_NEGATE) return false;
        gs__ip_ldc(t, a, i, &re, &im);
        gs__ip_stc(t, y, i, -re, -im);
    } else {
        return false;
    }
    return true;
}

/* Orders element ia of a against element ib of b: *lt, *eq, and whether they are unordered (a NaN). */
GS__FN void gs__ip_gorder(gs_dtype t, gs_cmp_type ct, const void *a, int64_t ia, const void *b, int64_t ib, int *lt,
                          int *eq, int *un) {
    *un = 0;
    if (gs__is_float(t)) {
        double x = gs__ld_f(t, a, ia), z = gs__ld_f(t, b, ib);
        if (ct == GS_CMP_TYPE_TOTALORDER) {   /* order the bit patterns of the (exactly widened) doubles */
            uint64_t ux, uz;
            memcpy(&ux, &x, 8);
            memcpy(&uz, &z, 8);
            ux = (ux >> 63) ? ~ux : (ux | ((uint64_t)1 << 63));
            uz = (uz >> 63) ? ~uz : (uz | ((uint64_t)1 << 63));
            *lt = ux < uz;
            *eq = ux == uz;
        } else {
            *lt = x < z;
            *eq = x == z;
            *un = x != x || z != z;
        }
    } else if (gs__is_complex(t)) {
        double ar, ai, br, bi;
        gs__ip_ldc(t, a, ia, &ar, &ai);
        gs__ip_ldc(t, b, ib, &br, &bi);
        *lt = 0;
        *eq = ar == br && ai == bi;
    } else {
        uint64_t x = gs__ld_i(t, a, ia), z = gs__ld_i(t, b, ib);
        int nb = gs__dt(t)->bits;
        uint64_t mask = nb >= 64 ? ~(uint64_t)0 : (((uint64_t)1) << nb) - 1u;
        if (ct == GS_CMP_TYPE_SIGNED) *lt = (int64_t)x < (int64_t)z;
        else *lt = (x & mask) < (z & mask);
        *eq = x == z;
    }
}

/* y[iy] = y[iy] (kind) a[ia]: the combiner of reductions, scans and scatter for any element type */
GS__FN void gs__ip_gcomb(gs_dtype t, gs_reduce_kind k, void *y, int64_t iy, const void *a, int64_t ia) {
    static const gs_op ops[] = {GS_OP_INVALID, GS_OP_ADD, GS_OP_MULTIPLY, GS_OP_MAXIMUM, GS_OP_MINIMUM, GS_OP_AND, GS_OP_OR};
    size_t es = gs__compute_size(t);
    if (k == GS_REDUCE_REPLACE) {
        memcpy((char *)y + iy * (int64_t)es, (const char *)a + ia * (int64_t)es, es);
        return;
    }
    if (k <= GS_REDUCE_INVALID || k > GS_REDUCE_OR) return;
    if (gs__is_complex(t) && (k == GS_REDUCE_MAX || k == GS_REDUCE_MIN)) return;
    (void)gs__ip_gbin(t, ops[k], y, iy, a, ia, y, iy);
}

/* Rejects a reduction kind that does not apply to the dtype (and/or on floats, replace outside scatter). */
GS__FN gs_result gs__ip_check_kind(gs_ctx *ctx, const gs_value *v, gs_dtype t, gs_reduce_kind k, bool allow_replace) {
    bool ok = k >= GS_REDUCE_SUM && k <= GS_REDUCE_OR;
    if (k == GS_REDUCE_REPLACE) ok = allow_replace;
    if (ok && (gs__is_float(t) || gs__is_complex(t)) && (k == GS_REDUCE_AND || k == GS_REDUCE_OR)) ok = false;
    if (ok && gs__is_complex(t) && (k == GS_REDUCE_MAX || k == GS_REDUCE_MIN)) ok = false;
    if (ok && !gs__is_numeric(t) && t != GS_PRED) ok = false;
    if (!ok)
        return gs__err(ctx, GS_ERR_UNSUPPORTED, "%s %s: reduction '%s' is not supported on %s", gs_op_name(v->op),
                       v->name, gs_reduce_kind_name(k), gs_dtype_name(t));
    return GS_OK;
}

/* ---------------------------------------------------------------------------------------------------------
   Evaluation state: slots (one per array value or tuple element) and the buffers they share
   ------------------------------------------------------------------------------------------------------- */
enum { GS__IP_BLK_NONE = 0, GS__IP_BLK_OWNED, GS__IP_BLK_EXTERNAL, GS__IP_BLK_GONE, GS__IP_BLK_TAKEN };

typedef struct gs__ip_slot {
    gs__buf buf;
    int64_t blk;              /* the slot that made the buffer (its owner), -1 when unset */
} gs__ip_slot;

typedef struct gs__ip_st {
    gs__exec *ex;
    gs_ctx *ctx;
    gs_graph *g;
    int n_values;
    int64_t *first;           /* value id -> its first slot */
    int *last_use;            /* value id -> position of its last reader (INT_MAX for the root) */
    uint8_t *live;            /* value id -> the root depends on it */
    int64_t n_slots;
    gs__ip_slot *slots;
    int *refs;                /* per owner slot: number of slots that share its buffer */
    uint8_t *bstate;          /* per owner slot: GS__IP_BLK_* */
    const gs__buf *params;
    int64_t *param_first;     /* parameter number -> its first buffer in params */
    int n_params;
} gs__ip_st;

GS__FN int gs__ip_nslots(const gs_value *v) { return v->shape.dtype == GS_TUPLE ? v->n_tuple : 1; }

GS__FN const gs_shape *gs__ip_slot_shape(const gs_value *v, int j) {
    return v->shape.dtype == GS_TUPLE ? &v->tuple[j] : &v->shape;
}

/* The buffer of array operand k of v. */
GS__FN gs__buf *gs__ip_opbuf(gs__ip_st *st, const gs_value *v, int k) {
    return &st->slots[st->first[v->operands[k]->id]].buf;
}

/* Accounting of value buffers (gs__exec.live_bytes / peak_bytes), in storage bytes. */
GS__FN void gs__ip_count(gs__exec *ex, const gs_shape *s, int sign) {
    int64_t b = (int64_t)gs_shape_bytes(s);
    ex->live_bytes += sign > 0 ? b : -b;
    if (ex->live_bytes > ex->peak_bytes) ex->peak_bytes = ex->live_bytes;
}

/* Allocates a fresh buffer for slot j of v. */
GS__FN gs__buf *gs__ip_new_out(gs__ip_st *st, const gs_value *v, int j) {
    int64_t s = st->first[v->id] + j;
    const gs_shape *shape = gs__ip_slot_shape(v, j);
    int64_t n = gs__numel(shape);
    size_t es = gs__compute_size(shape->dtype);
    void *p;
    if (n < 0 || es == 0 || (uint64_t)n > (uint64_t)(SIZE_MAX / 8)) {
        gs__err(st->ctx, GS_ERR_SHAPE, "%s %s: cannot allocate a result of this shape", gs_op_name(v->op), v->name);
        return NULL;
    }
    p = gs__malloc(st->ctx, (size_t)n * es);
    if (!p) return NULL;
    st->slots[s].buf.shape = *shape;
    st->slots[s].buf.data = p;
    st->slots[s].blk = s;
    st->refs[s] = 1;
    st->bstate[s] = GS__IP_BLK_OWNED;
    gs__ip_count(st->ex, shape, 1);
    return &st->slots[s].buf;
}

/* Slot j of v shares the buffer of slot `src` (shape taken from v). */
GS__FN void gs__ip_alias(gs__ip_st *st, const gs_value *v, int j, int64_t src) {
    int64_t s = st->first[v->id] + j;
    st->slots[s].buf.shape = *gs__ip_slot_shape(v, j);
    st->slots[s].buf.data = st->slots[src].buf.data;
    st->slots[s].blk = st->slots[src].blk;
    st->refs[st->slots[s].blk]++;
}

/* Slot j of v takes ownership of `data` (allocated with gs__malloc). */
GS__FN void gs__ip_adopt(gs__ip_st *st, const gs_value *v, int j, void *data) {
    int64_t s = st->first[v->id] + j;
    st->slots[s].buf.shape = *gs__ip_slot_shape(v, j);
    st->slots[s].buf.data = data;
    st->slots[s].blk = s;
    st->refs[s] = 1;
    st->bstate[s] = GS__IP_BLK_OWNED;
}

GS__FN void gs__ip_release(gs__ip_st *st, const gs_value *v) {
    int j, n = gs__ip_nslots(v);
    for (j = 0; j < n; j++) {
        gs__ip_slot *sl = &st->slots[st->first[v->id] + j];
        int64_t b = sl->blk;
        if (b < 0) continue;
        sl->blk = -1;
        if (--st->refs[b] == 0 && st->bstate[b] == GS__IP_BLK_OWNED) {
            gs__ip_count(st->ex, &st->slots[b].buf.shape, -1);
            gs__free(st->ctx, st->slots[b].buf.data);
            st->bstate[b] = GS__IP_BLK_GONE;
        }
    }
}

/* ---------------------------------------------------------------------------------------------------------
   Leaves
   ------------------------------------------------------------------------------------------------------- */
GS__FN gs_result gs__ip_constant(gs_ctx *ctx, const gs_value *v, gs__buf *out) {
    int64_t i, n = gs__numel(&out->shape);
    size_t ss = gs_dtype_size(out->shape.dtype);
    if (!v->data)
        return gs__err(ctx, GS_ERR_UNSUPPORTED, "constant %s: its value was elided ({...}) in the HLO text it was read "
                       "from, so it cannot be evaluated (print the HLO with its large constants)", v->name);
    for (i = 0; i < n; i++) {
        const char *src = (const char *)v->data + (v->splat ? 0 : (size_t)i * ss);
        switch (out->shape.dtype) {
        case GS_F32: case GS_S32: case GS_U32: memcpy((char *)out->data + i * 4, src, 4); break;
        case GS_BF16: {
            uint16_t b;
            memcpy(&b, src, 2);
            ((float *)out->data)[i] = gs_bf16_to_f32(b);
            break;
        }
        case GS_PRED: ((uint8_t *)out->data)[i] = (uint8_t)(*(const uint8_t *)src != 0); break;
        default:
            if (!gs__is_array_dtype(out->shape.dtype))
                return gs__err(ctx, GS_ERR_UNSUPPORTED, "constant %s: bad dtype", v->name);
            gs__to_compute(out->shape.dtype, (char *)out->data + (size_t)i * gs__compute_size(out->shape.dtype), src, 1);
            break;
        }
    }
    return GS_OK;
}

GS__FN gs_result gs__ip_iota(gs_ctx *ctx, const gs_value *v, gs__buf *out) {
    gs__ip_odo o;
    int64_t i, n = gs__numel(&out->shape);
    int64_t dim = v->dim;
    if (out->shape.rank == 0 || dim < 0 || dim >= out->shape.rank)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "iota %s: iota dimension %lld out of range", v->name, (long long)dim);
    if (n == 0) return GS_OK;
    gs__ip_odo_init(&o, out->shape.rank, out->shape.dims, NULL);
    for (i = 0; i < n; i++, gs__ip_odo_next(&o)) {
        int64_t k = o.idx[dim];
        switch (out->shape.dtype) {
        case GS_F32: ((float *)out->data)[i] = (float)k; break;
        case GS_BF16: ((float *)out->data)[i] = gs__ip_rbf((float)k); break;
        case GS_S32: ((int32_t *)out->data)[i] = (int32_t)k; break;
        case GS_U32: ((uint32_t *)out->data)[i] = (uint32_t)k; break;
        case GS_PRED: ((uint8_t *)out->data)[i] = (uint8_t)(k != 0); break;
        default:
            if (!gs__is_numeric(out->shape.dtype)) return gs__err(ctx, GS_ERR_UNSUPPORTED, "iota %s: bad dtype", v->name);
            gs__set_elem(out->shape.dtype, out->data, i, (double)k);
            break;
        }
    }
    return GS_OK;
}

/* splitmix64's finaliser applied to seed * 0x9E3779B97F4A7C15 + i + 1 (all arithmetic mod 2^64). */
GS__FN uint64_t gs__rng_bits(uint64_t seed, uint64_t i) {
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + i + 1u;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* the largest bf16 value below h (h a bf16 value, not NaN, not -inf) */
GS__FN float gs__ip_bf16_below(float h) {
    uint16_t b = gs_f32_to_bf16(h);
    if (h > 0.0f) b = (uint16_t)(b - 1u);
    else if (h < 0.0f) b = (uint16_t)(b + 1u);
    else b = 0x8001u;
    return gs_bf16_to_f32(b);
}

/* rng, plain and shard form. offs: the rank offsets of the shard form (NULL for the plain form, whose full
   array is the result itself). Element l of out is element offs + l of the full array, whose row-major
   index g picks the bits gs__rng_bits(seed, g); an element outside the full array holds lo. */
GS__FN gs_result gs__ip_rng(gs_ctx *ctx, const gs_value *v, const gs__buf *lo, const gs__buf *hi, const int64_t *offs,
                            gs__buf *out) {
    const gs_shape *full = v->rng_full && offs ? v->rng_full : &out->shape;
    int64_t i, n = gs__numel(&out->shape), base = 0, fst[GS_MAX_RANK], vlo[GS_MAX_RANK], vhi[GS_MAX_RANK];
    gs_dtype t = out->shape.dtype;
    int d, r = out->shape.rank;
    bool any = true;
    gs__ip_odo o;
    float fl = 0.0f, fh = 0.0f;
    int64_t il = 0, ih = 0;
    if (lo->shape.dtype != t || hi->shape.dtype != t || gs__numel(&lo->shape) != 1 ||
        gs__numel(&hi->shape) != 1)
        return gs__err(ctx, GS_ERR_SHAPE, "rng %s: lo and hi must be scalars of the result dtype", v->name);
    if (full->rank != r || full->dtype != t)
        return gs__err(ctx, GS_ERR_SHAPE, "rng %s: the full shape differs from the result in rank or dtype", v->name);
    if (!gs__is_float(t) && t != GS_S32 && t != GS_U32)
        return gs__err(ctx, GS_ERR_UNSUPPORTED, "rng %s: dtype %s is not supported", v->name, gs_dtype_name(t));
    if (n == 0) return GS_OK;
    /* local index range [vlo, vhi) of the elements inside the full array, per dim; offsets are s32, so
       nothing below overflows: base is only formed when every dim has an element inside, and then
       |offs[d]| <= full dim */
    gs__strides(full, fst);
    for (d = 0; d < r; d++) {
        int64_t off = offs ? offs[d] : 0;
        vlo[d] = off < 0 ? -off : 0;
        vhi[d] = full->dims[d] - off < out->shape.dims[d] ? full->dims[d] - off : out->shape.dims[d];
        if (vlo[d] >= vhi[d]) any = false;
    }
    if (any)
        for (d = 0; d < r; d++) base += (offs ? offs[d] : 0) * fst[d];
    if (gs__is_float(t)) {
        fl = ((const float *)lo->data)[0];
        fh = ((const float *)hi->data)[0];
    } else {
        il = gs__ip_get_index(lo, 0);
        ih = gs__ip_get_index(hi, 0);
    }
    gs__ip_odo_init(&o, r, out->shape.dims, fst);
    for (i = 0; i < n; i++, gs__ip_odo_next(&o)) {
        bool in = any;
        uint64_t bits = 0;
        for (d = 0; d < r && in; d++) in = o.idx[d] >= vlo[d] && o.idx[d] < vhi[d];
        if (in) bits = gs__rng_bits(v->seed, (uint64_t)(base + o.pos));
        if (gs__is_float(t)) {
            float f = fl;
            if (in && fh > fl) {
                bool bf = t == GS_BF16;
                double u = (double)(bits >> 40) * (1.0 / 16777216.0);
                double x = (double)fl + ((double)fh - (double)fl) * u;
                f = (float)x;
                if (bf) f = gs__ip_rbf(f);
                if (f >= fh) f = bf ? gs__ip_bf16_below(fh) : nextafterf(fh, -INFINITY);
                if (f < fl) f = fl;
            }
            ((float *)out->data)[i] = f;
        } else {
            int64_t x = il;
            if (in && ih > il) x = il + (int64_t)(bits % (uint64_t)(ih - il));
            if (t == GS_S32) ((int32_t *)out->data)[i] = (int32_t)x;
            else ((uint32_t *)out->data)[i] = (uint32_t)x;
        }
    }
    return GS_OK;
}

/* ---------------------------------------------------------------------------------------------------------
   Data movement
   ------------------------------------------------------------------------------------------------------- */
GS__FN gs_result gs__ip_broadcast(gs_ctx *ctx, const gs_value *v, const gs__buf *x, gs__buf *out) {
    int64_t ist[GS_MAX_RANK], ost[GS_MAX_RANK], sst[GS_MAX_RANK];
    int i, r = out->shape.rank;
    if (v->n_dims != x->shape.rank)
        return gs__err(ctx, GS_ERR_SHAPE, "broadcast %s: %d dims for an operand of rank %d", v->name, v->n_dims,
                       x->shape.rank);
    gs__strides(&x->shape, ist);
    gs__strides(&out->shape, ost);
    for (i = 0; i < r; i++) sst[i] = 0;
    for (i = 0; i < x->shape.rank; i++) {
        int64_t od = v->dims[i];
        if (od < 0 || od >= r || (x->shape.dims[i] != out->shape.dims[od] && x->shape.dims[i] != 1))
            return gs__err(ctx, GS_ERR_SHAPE, "broadcast %s: operand dim %d does not fit output dim %lld", v->name,
                           i, (long long)od);
        sst[od] = x->shape.dims[i] == 1 ? 0 : ist[i];
    }
    gs__ip_xcopy(gs__compute_size(out->shape.dtype), r, out->shape.dims, out->data, 0, ost, x->data, 0, sst);
    return GS_OK;
}

GS__FN gs_result gs__ip_transpose(gs_ctx *ctx, const gs_value *v, const gs__buf *x, gs__buf *out) {
    int64_t ist[GS_MAX_RANK], ost[GS_MAX_RANK], sst[GS_MAX_RANK];
    int i, r = out->shape.rank;
    if (v->n_dims != r || x->shape.rank != r)
        return gs__err(ctx, GS_ERR_SHAPE, "transpose %s: permutation rank does not match", v->name);
    gs__strides(&x->shape, ist);
    gs__strides(&out->shape, ost);
    for (i = 0; i < r; i++) {
        int64_t p = v->dims[i];
        if (p < 0 || p >= r || x->shape.dims[p] != out->shape.dims[i])
            return gs__err(ctx, GS_ERR_SHAPE, "transpose %s: bad permutation", v->name);
        sst[i] = ist[p];
    }
    gs__ip_xcopy(gs__compute_size(out->shape.dtype), r, out->shape.dims, out->data, 0, ost, x->data, 0, sst);
    return GS_OK;
}

GS__FN gs_result gs__ip_slice(gs_ctx *ctx, const gs_value *v, const gs__buf *x, gs__buf *out) {
    int64_t ist[GS_MAX_RANK], ost[GS_MAX_RANK], sst[GS_MAX_RANK], off = 0;
    int i, r = out->shape.rank;
    gs__strides(&x->shape, ist);
    gs__strides(&out->shape, ost);
    for (i = 0; i < r; i++) {
        int64_t s = v->start[i], str = v->stride ? v->stride[i] : 1;
        if (str < 1 || s < 0 || (out->shape.dims[i] > 0 && s + (out->shape.dims[i] - 1) * str >= x->shape.dims[i]))
            return gs__err(ctx, GS_ERR_SHAPE, "slice %s: dim %d out of range", v->name, i);
        off += s * ist[i];
        sst[i] = str * ist[i];
    }
    gs__ip_xcopy(gs__compute_size(out->shape.dtype), r, out->shape.dims, out->data, 0, ost, x->data, off, sst);
    return GS_OK;
}

/* Reads the clamped start index of dim d: operand `first_start + d`, clamped to [0, xdim - size]. */
GS__FN int64_t gs__ip_start_index(gs__ip_st *st, const gs_value *v, int first_start, int d, int64_t xdim,
                                  int64_t size) {
    const gs__buf *b = gs__ip_opbuf(st, v, first_start + d);
    return gs__ip_clamp64(gs__ip_get_index(b, 0), 0, xdim - size);
}

GS__FN gs_result gs__ip_check_starts(gs__ip_st *st, const gs_value *v, int first_start, int rank) {
    int d;
    if (v->n_operands != first_start + rank)
        return gs__err(st->ctx, GS_ERR_SHAPE, "%s %s: expected %d start indices", gs_op_name(v->op), v->name, rank);
    for (d = 0; d < rank; d++) {
        const gs__buf *b = gs__ip_opbuf(st, v, first_start + d);
        if ((b->shape.dtype != GS_S32 && b->shape.dtype != GS_U32) || gs__numel(&b->shape) != 1)
            return gs__err(st->ctx, GS_ERR_SHAPE, "%s %s: start index %d must be an integer scalar",
                           gs_op_name(v->op), v->name, d);
    }
    return GS_OK;
}

GS__FN gs_result gs__ip_dynamic_slice(gs__ip_st *st, const gs_value *v, gs__buf *out) {
    const gs__buf *x = gs__ip_opbuf(st, v, 0);
    int64_t ist[GS_MAX_RANK], ost[GS_MAX_RANK], off = 0;
    int d, r = x->shape.rank;
    gs_result res = gs__ip_check_starts(st, v, 1, r);
    if (res) return res;
    if (out->shape.rank != r) return gs__err(st->ctx, GS_ERR_SHAPE, "dynamic-slice %s: rank mismatch", v->name);
    gs__strides(&x->shape, ist);
    gs__strides(&out->shape, ost);
    for (d = 0; d < r; d++) {
        if (out->shape.dims[d] > x->shape.dims[d])
            return gs__err(st->ctx, GS_ERR_SHAPE, "dynamic-slice %s: slice larger than the operand", v->name);
        off += gs__ip_start_index(st, v, 1, d, x->shape.dims[d], out->shape.dims[d]) * ist[d];
    }
    gs__ip_xcopy(gs__compute_size(out->shape.dtype), r, out->shape.dims, out->data, 0, ost, x->data, off, ist);
    return GS_OK;
}

GS__FN gs_result gs__ip_dynamic_update_slice(gs__ip_st *st, const gs_value *v, gs__buf *out) {
    const gs__buf *x = gs__ip_opbuf(st, v, 0), *u = gs__ip_opbuf(st, v, 1);
    int64_t xst[GS_MAX_RANK], ust[GS_MAX_RANK], off = 0;
    int d, r = x->shape.rank;
    size_t es = gs__compute_size(out->shape.dtype);
    gs_result res = gs__ip_check_starts(st, v, 2, r);
    if (res) return res;
    if (u->shape.rank != r || u->shape.dtype != x->shape.dtype || !gs_shape_equal(&x->shape, &out->shape))
        return gs__err(st->ctx, GS_ERR_SHAPE, "dynamic-update-slice %s: shape mismatch", v->name);
    gs__strides(&x->shape, xst);
    gs__strides(&u->shape, ust);
    for (d = 0; d < r; d++) {
        if (u->shape.dims[d] > x->shape.dims[d])
            return gs__err(st->ctx, GS_ERR_SHAPE, "dynamic-update-slice %s: update larger than the operand",
                           v->name);
        off += gs__ip_start_index(st, v, 2, d, x->shape.dims[d], u->shape.dims[d]) * xst[d];
    }
    memcpy(out->data, x->data, (size_t)gs__numel(&x->shape) * es);
    gs__ip_xcopy(es, r, u->shape.dims, out->data, off, xst, u->data, 0, ust);
    return GS_OK;
}

GS__FN gs_result gs__ip_pad(gs_ctx *ctx, const gs_value *v, const gs__buf *x, const gs__buf *pv, gs__buf *out) {
    int64_t ist[GS_MAX_RANK], ost[GS_MAX_RANK], cnt[GS_MAX_RANK], dstr[GS_MAX_RANK];
    int64_t soff = 0, doff = 0;
    int d, r = x->shape.rank;
    size_t es = gs__compute_size(out->shape.dtype);
    if (out->shape.rank != r || pv->shape.dtype != x->shape.dtype || gs__numel(&pv->shape) != 1)
        return gs__err(ctx, GS_ERR_SHAPE, "pad %s: bad operands", v->name);
    gs__ip_fill(out->data, es, gs__numel(&out->shape), pv->data);
    gs__strides(&x->shape, ist);
    gs__strides(&out->shape, ost);
    for (d = 0; d < r; d++) {
        int64_t lo = v->lo[d], in = v->interior ? v->interior[d] : 0, s, n = x->shape.dims[d];
        int64_t od = out->shape.dims[d], i0, i1;
        if (in < 0) return gs__err(ctx, GS_ERR_SHAPE, "pad %s: negative interior padding", v->name);
        s = in + 1;
        if (od != lo + v->hi[d] + n + (n > 0 ? (n - 1) * in : 0))
            return gs__err(ctx, GS_ERR_SHAPE, "pad %s: output dim %d does not match the padding", v->name, d);
        /* input elements i with 0 <= lo + i*s < od */
        i0 = lo >= 0 ? 0 : (-lo + s - 1) / s;
        i1 = od - 1 - lo < 0 ? -1 : (od - 1 - lo) / s;
        if (i1 > n - 1) i1 = n - 1;
        cnt[d] = i1 - i0 + 1;
        if (cnt[d] <= 0) return GS_OK;   /* nothing of x survives */
        soff += i0 * ist[d];
        doff += (lo + i0 * s) * ost[d];
        dstr[d] = s * ost[d];
    }
    gs__ip_xcopy(es, r, cnt, out->data, doff, dstr, x->data, soff, ist);
    return GS_OK;
}

GS__FN gs_result gs__ip_concatenate(gs__ip_st *st, const gs_value *v, gs__buf *out) {
    int64_t ost[GS_MAX_RANK], ist[GS_MAX_RANK], at = 0;
    int k, r = out->shape.rank;
    size_t es = gs__compute_size(out->shape.dtype);
    if (v->dim < 0 || v->dim >= r) return gs__err(st->ctx, GS_ERR_SHAPE, "concatenate %s: bad dim", v->name);
    gs__strides(&out->shape, ost);
    for (k = 0; k < v->n_operands; k++) {
        const gs__buf *x = gs__ip_opbuf(st, v, k);
        int d;
        if (x->shape.rank != r || x->shape.dtype != out->shape.dtype)
            return gs__err(st->ctx, GS_ERR_SHAPE, "concatenate %s: operand %d does not fit", v->name, k);
        for (d = 0; d < r; d++)
            if (d != v->dim && x->shape.dims[d] != out->shape.dims[d])
                return gs__err(st->ctx, GS_ERR_SHAPE, "concatenate %s: operand %d does not fit", v->name, k);
        if (at + x->shape.dims[v->dim] > out->shape.dims[v->dim])
            return gs__err(st->ctx, GS_ERR_SHAPE, "concatenate %s: operands are too large", v->name);
        gs__strides(&x->shape, ist);
        gs__ip_xcopy(es, r, x->shape.dims, out->data, at * ost[v->dim], ost, x->data, 0, ist);
        at += x->shape.dims[v->dim];
    }
    if (at != out->shape.dims[v->dim]) return gs__err(st->ctx, GS_ERR_SHAPE, "concatenate %s: size mismatch", v->name);
    return GS_OK;
}

GS__FN gs_result gs__ip_reverse(gs_ctx *ctx, const gs_value *v, const gs__buf *x, gs__buf *out) {
    int64_t ist[GS_MAX_RANK], sst[GS_MAX_RANK], off = 0;
    int i, r = x->shape.rank;
    gs__strides(&x->shape, ist);
    for (i = 0; i < r; i++) sst[i] = ist[i];
    for (i = 0; i < v->n_dims; i++) {
        int64_t d = v->dims[i];
        if (d < 0 || d >= r) return gs__err(ctx, GS_ERR_SHAPE, "reverse %s: dim out of range", v->name);
        if (sst[d] < 0) continue;   /* listed twice */
        if (x->shape.dims[d] > 0) off += (x->shape.dims[d] - 1) * ist[d];
        sst[d] = -ist[d];
    }
    gs__ip_xcopy(gs__compute_size(out->shape.dtype), r, x->shape.dims, out->data, 0, ist, x->data, off, sst);
    return GS_OK;
}

/* ---------------------------------------------------------------------------------------------------------
   Elementwise
   ------------------------------------------------------------------------------------------------------- */
GS__FN float gs__ip_unary_f(gs_op op, float x) {
    switch (op) {
    case GS_OP_NEGATE: return -x;
    case GS_OP_ABS: return fabsf(x);
    case GS_OP_EXP: return expf(x);
    case GS_OP_LOG: return logf(x);
    case GS_OP_TANH: return tanhf(x);
    case GS_OP_LOGISTIC: return 1.0f / (1.0f + expf(-x));
    case GS_OP_SQRT: return sqrtf(x);
    case GS_OP_RSQRT: return 1.0f / sqrtf(x);
    case GS_OP_FLOOR: return floorf(x);
    case GS_OP_CEIL: return ceilf(x);
    case GS_OP_SIGN:
        if (gs__ip_isnan(x) || x == 0.0f) return x;
        return x > 0.0f ? 1.0f : -1.0f;
    default: return x;
    }
}

GS__FN gs_result gs__ip_unary(gs_ctx *ctx, const gs_value *v, const gs__buf *x, gs__buf *out) {
    int64_t i, n = gs__numel(&out->shape);
    gs_dtype t = x->shape.dtype;
    gs_op op = v->op;
    if (t != out->shape.dtype || gs__numel(&x->shape) != n)
        return gs__err(ctx, GS_ERR_SHAPE, "%s %s: operand and result shapes differ", gs_op_name(op), v->name);
    if (gs__is_fc(t)) {
        const float *a = (const float *)x->data;
        float *y = (float *)out->data;
        if (op == GS_OP_NOT) goto unsupported;
        if (op == GS_OP_NEGATE)   /* a plain loop the compiler vectorises */
            for (i = 0; i < n; i++) y[i] = -a[i];
        else
            for (i = 0; i < n; i++) y[i] = gs__ip_unary_f(op, a[i]);
        gs__round_dt(t, y, n);
    } else if (!gs__ip_fast(t)) {
        for (i = 0; i < n; i++)
            if (!gs__ip_gunary(t, op, x->data, i, out->data)) goto unsupported;
    } else if (t == GS_S32) {
        const int32_t *a = (const int32_t *)x->data;
        int32_t *y = (int32_t *)out->data;
        for (i = 0; i < n; i++) {
            int32_t e = a[i];
            switch (op) {
            case GS_OP_NEGATE: y[i] = gs__ip_s32(0u - (uint32_t)e); break;
            case GS_OP_ABS: y[i] = e < 0 ? gs__ip_s32(0u - (uint32_t)e) : e; break;
            case GS_OP_SIGN: y[i] = (e > 0) - (e < 0); break;
            case GS_OP_NOT: y[i] = ~e; break;
            default: goto unsupported;
            }
        }
    } else if (t == GS_U32) {
        const uint32_t *a = (const uint32_t *)x->data;
        uint32_t *y = (uint32_t *)out->data;
        for (i = 0; i < n; i++) {
            uint32_t e = a[i];
            switch (op) {
            case GS_OP_NEGATE: y[i] = 0u - e; break;
            case GS_OP_ABS: y[i] = e; break;
            case GS_OP_SIGN: y[i] = e != 0; break;
            case GS_OP_NOT: y[i] = ~e; break;
            default: goto unsupported;
            }
        }
    } else if (t == GS_PRED) {
        const uint8_t *a = (const uint8_t *)x->data;
        uint8_t *y = (uint8_t *)out->data;
        if (op != GS_OP_NOT) goto unsupported;
        for (i = 0; i < n; i++) y[i] = (uint8_t)!a[i];
    } else {
        goto unsupported;
    }
    return GS_OK;
unsupported:
    return gs__err(ctx, GS_ERR_UNSUPPORTED, "%s %s: not supported on %s", gs_op_name(op), v->name, gs_dtype_name(t));
}

GS__FN float gs__ip_binary_f(gs_op op, float a, float b) {
    switch (op) {
    case GS_OP_ADD: return a + b;
    case GS_OP_SUBTRACT: return a - b;
    case GS_OP_MULTIPLY: return a * b;
    case GS_OP_DIVIDE: return a / b;
    case GS_OP_REMAINDER: return fmodf(a, b);
    case GS_OP_MAXIMUM: return gs__ip_fmax(a, b);
    case GS_OP_MINIMUM: return gs__ip_fmin(a, b);
    case GS_OP_POWER: return powf(a, b);
    default: return 0.0f;
    }
}

GS__FN int32_t gs__ip_binary_s(gs_op op, int32_t a, int32_t b) {
    uint32_t ua = (uint32_t)a, ub = (uint32_t)b;
    switch (op) {
    case GS_OP_ADD: return gs__ip_s32(ua + ub);
    case GS_OP_SUBTRACT: return gs__ip_s32(ua - ub);
    case GS_OP_MULTIPLY: return gs__ip_s32(ua * ub);
    case GS_OP_DIVIDE:
        if (b == 0) return -1;
        if (a == INT32_MIN && b == -1) return INT32_MIN;
        return a / b;
    case GS_OP_REMAINDER:
        if (b == 0) return a;
        if (a == INT32_MIN && b == -1) return 0;
        return a % b;
    case GS_OP_MAXIMUM: return a > b ? a : b;
    case GS_OP_MINIMUM: return a < b ? a : b;
    case GS_OP_POWER: return gs__ip_spow(a, b);
    case GS_OP_AND: return a & b;
    case GS_OP_OR: return a | b;
    case GS_OP_XOR: return a ^ b;
    default: return 0;
    }
}

GS__FN uint32_t gs__ip_binary_u(gs_op op, uint32_t a, uint32_t b) {
    switch (op) {
    case GS_OP_ADD: return a + b;
    case GS_OP_SUBTRACT: return a - b;
    case GS_OP_MULTIPLY: return a * b;
    case GS_OP_DIVIDE: return b == 0 ? UINT32_MAX : a / b;
    case GS_OP_REMAINDER: return b == 0 ? a : a % b;
    case GS_OP_MAXIMUM: return a > b ? a : b;
    case GS_OP_MINIMUM: return a < b ? a : b;
    case GS_OP_POWER: return gs__ip_upow(a, b);
    case GS_OP_AND: return a & b;
    case GS_OP_OR: return a | b;
    case GS_OP_XOR: return a ^ b;
    default: return 0;
    }
}

GS__FN gs_result gs__ip_binary(gs_ctx *ctx, const gs_value *v, const gs__buf *x, const gs__buf *z, gs__buf *out) {
    int64_t i, n = gs__numel(&out->shape);
    gs_dtype t = x->shape.dtype;
    gs_op op = v->op;
    bool logical = op == GS_OP_AND || op == GS_OP_OR || op == GS_OP_XOR;
    if (t != z->shape.dtype || t != out->shape.dtype || gs__numel(&x->shape) != n || gs__numel(&z->shape) != n)
        return gs__err(ctx, GS_ERR_SHAPE, "%s %s: operand and result shapes differ", gs_op_name(op), v->name);
    if (gs__is_fc(t)) {
        const float *a = (const float *)x->data, *b = (const float *)z->data;
        float *y = (float *)out->data;
        if (logical) goto unsupported;
        /* the common ops in loops of their own, without a switch per element (the same expressions: the same bits) */
        switch (op) { /* the common ops on the vector kernels (gs_simd.c: the same bits on every path) */
        case GS_OP_ADD: gs__vk_binary(gs__gemm_isa(), GS__VK_ADD, a, b, y, n); break;
        case GS_OP_SUBTRACT: gs__vk_binary(gs__gemm_isa(), GS__VK_SUB, a, b, y, n); break;
        case GS_OP_MULTIPLY: gs__vk_binary(gs__gemm_isa(), GS__VK_MUL, a, b, y, n); break;
        case GS_OP_DIVIDE: gs__vk_binary(gs__gemm_isa(), GS__VK_DIV, a, b, y, n); break;
        case GS_OP_MAXIMUM: gs__vk_binary(gs__gemm_isa(), GS__VK_MAX, a, b, y, n); break;
        case GS_OP_MINIMUM: gs__vk_binary(gs__gemm_isa(), GS__VK_MIN, a, b, y, n); break;
        default: for (i = 0; i < n; i++) y[i] = gs__ip_binary_f(op, a[i], b[i]); break;
        }
        gs__round_dt(t, y, n);
    } else if (!gs__ip_fast(t)) {
        for (i = 0; i < n; i++)
            if (!gs__ip_gbin(t, op, x->data, i, z->data, i, out->data, i)) goto unsupported;
    } else if (t == GS_S32) {
        const int32_t *a = (const int32_t *)x->data, *b = (const int32_t *)z->data;
        int32_t *y = (int32_t *)out->data;
        for (i = 0; i < n; i++) y[i] = gs__ip_binary_s(op, a[i], b[i]);
    } else if (t == GS_U32) {
        const uint32_t *a = (const uint32_t *)x->data, *b = (const uint32_t *)z->data;
        uint32_t *y = (uint32_t *)out->data;
        for (i = 0; i < n; i++) y[i] = gs__ip_binary_u(op, a[i], b[i]);
    } else if (t == GS_PRED) {
        const uint8_t *a = (const uint8_t *)x->data, *b = (const uint8_t *)z->data;
        uint8_t *y = (uint8_t *)out->data;
        if (!logical && op != GS_OP_MAXIMUM && op != GS_OP_MINIMUM) goto unsupported;
        for (i = 0; i < n; i++) {
            switch (op) {
            case GS_OP_AND: case GS_OP_MINIMUM: y[i] = (uint8_t)(a[i] & b[i]); break;
            case GS_OP_OR: case GS_OP_MAXIMUM: y[i] = (uint8_t)(a[i] | b[i]); break;
            default: y[i] = (uint8_t)(a[i] ^ b[i]); break;
            }
        }
    } else {
        goto unsupported;
    }
    return GS_OK;
unsupported:
    return gs__err(ctx, GS_ERR_UNSUPPORTED, "%s %s: not supported on %s", gs_op_name(op), v->name, gs_dtype_name(t));
}

GS__FN uint8_t gs__ip_cmp_result(gs_cmp c, int lt, int eq, int unordered) {
    if (unordered) return (uint8_t)(c == GS_CMP_NE);
    switch (c) {
    case GS_CMP_EQ: return (uint8_t)eq;
    case GS_CMP_NE: return (uint8_t)!eq;
    case GS_CMP_LT: return (uint8_t)lt;
    case GS_CMP_LE: return (uint8_t)(lt || eq);
    case GS_CMP_GT: return (uint8_t)(!lt && !eq);
    case GS_CMP_GE: return (uint8_t)!lt;
    default: return 0;
    }
}

GS__FN gs_result gs__ip_compare(gs_ctx *ctx, const gs_value *v, const gs__buf *x, const gs__buf *z, gs__buf *out) {
    int64_t i, n = gs__numel(&out->shape);
    gs_dtype t = x->shape.dtype;
    uint8_t *y = (uint8_t *)out->data;
    gs_cmp c = v->cmp;
    if (c <= GS_CMP_INVALID || c >= GS_CMP_COUNT)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "compare %s: bad direction", v->name);
    if (t != z->shape.dtype || out->shape.dtype != GS_PRED || gs__numel(&x->shape) != n ||
        gs__numel(&z->shape) != n)
        return gs__err(ctx, GS_ERR_SHAPE, "compare %s: operand and result shapes differ", v->name);
    /* floats in IEEE order and 32-bit integers: one plain loop per direction (C's comparisons are the rule
       below: with a NaN only NE holds) */
#define GS__CMP_LOOPS(T)                                                                                      \
    do {                                                                                                      \
        const T *A = (const T *)x->data, *B = (const T *)z->data;                                             \
        switch (c) {                                                                                          \
        case GS_CMP_EQ: for (i = 0; i < n; i++) y[i] = (uint8_t)(A[i] == B[i]); break;                        \
        case GS_CMP_NE: for (i = 0; i < n; i++) y[i] = (uint8_t)(A[i] != B[i]); break;                        \
        case GS_CMP_LT: for (i = 0; i < n; i++) y[i] = (uint8_t)(A[i] < B[i]); break;                         \
        case GS_CMP_LE: for (i = 0; i < n; i++) y[i] = (uint8_t)(A[i] <= B[i]); break;                        \
        case GS_CMP_GT: for (i = 0; i < n; i++) y[i] = (uint8_t)(A[i] > B[i]); break;                         \
        default: for (i = 0; i < n; i++) y[i] = (uint8_t)(A[i] >= B[i]); break;                               \
        }                                                                                                     \
    } while (0)
    if (gs__is_fc(t) && v->cmp_type != GS_CMP_TYPE_TOTALORDER) { /* the vector kernels: the same bits */
        static const int code[GS_CMP_COUNT] = {0, GS__VK_EQ, GS__VK_NE, GS__VK_LT, GS__VK_LE, GS__VK_GT, GS__VK_GE};
        gs__vk_compare(gs__gemm_isa(), code[c], (const float *)x->data, (const float *)z->data, y, n);
        return GS_OK;
    }
    if (t == GS_S32 || t == GS_U32) {
        if (v->cmp_type == GS_CMP_TYPE_SIGNED) GS__CMP_LOOPS(int32_t);
        else GS__CMP_LOOPS(uint32_t);
        return GS_OK;
    }
#undef GS__CMP_LOOPS
    for (i = 0; i < n; i++) {
        switch (t) {
        case GS_F32: case GS_BF16: {
            float a = ((const float *)x->data)[i], b = ((const float *)z->data)[i];
            if (v->cmp_type == GS_CMP_TYPE_TOTALORDER) {
                /* order the bit patterns: flip all bits of negatives, the sign bit of positives */
                uint32_t ua, ub;
                memcpy(&ua, &a, 4);
                memcpy(&ub, &b, 4);
                ua = (ua & 0x80000000u) ? ~ua : (ua | 0x80000000u);
                ub = (ub & 0x80000000u) ? ~ub : (ub | 0x80000000u);
                y[i] = gs__ip_cmp_result(c, ua < ub, ua == ub, 0);
            } else {
                y[i] = gs__ip_cmp_result(c, a < b, a == b, gs__ip_isnan(a) || gs__ip_isnan(b));
            }
            break;
        }
        case GS_S32: case GS_U32: {
            uint32_t ua = ((const uint32_t *)x->data)[i], ub = ((const uint32_t *)z->data)[i];
            if (v->cmp_type == GS_CMP_TYPE_SIGNED) { /* compare as two's complement */
                ua ^= 0x80000000u;
                ub ^= 0x80000000u;
            }
            y[i] = gs__ip_cmp_result(c, ua < ub, ua == ub, 0);
            break;
        }
        case GS_PRED: {
            uint8_t a = ((const uint8_t *)x->data)[i], b = ((const uint8_t *)z->data)[i];
            y[i] = gs__ip_cmp_result(c, a < b, a == b, 0);
            break;
        }
        default: {
            int lt, eq, un;
            if (!gs__is_numeric(t) || (gs__is_complex(t) && c != GS_CMP_EQ && c != GS_CMP_NE))
                return gs__err(ctx, GS_ERR_UNSUPPORTED, "compare %s: this direction is not supported on %s", v->name,
                               gs_dtype_name(t));
            gs__ip_gorder(t, v->cmp_type, x->data, i, z->data, i, &lt, &eq, &un);
            y[i] = gs__ip_cmp_result(c, lt, eq, un);
            break;
        }
        }
    }
    return GS_OK;
}

GS__FN gs_result gs__ip_select(gs_ctx *ctx, const gs_value *v, const gs__buf *p, const gs__buf *a, const gs__buf *b,
                              gs__buf *out) {
    int64_t i, n = gs__numel(&out->shape), np = gs__numel(&p->shape);
    const uint8_t *pp = (const uint8_t *)p->data;
    if (p->shape.dtype != GS_PRED || (np != n && np != 1) || !gs_shape_equal(&a->shape, &out->shape) ||
        !gs_shape_equal(&b->shape, &out->shape))
        return gs__err(ctx, GS_ERR_SHAPE, "select %s: operand shapes do not fit", v->name);
    if (np == 1 && n > 0) { /* one predicate: one operand, whole */
        memmove(out->data, (pp[0] ? a : b)->data, (size_t)n * gs__compute_size(out->shape.dtype));
    } else if (gs__compute_size(out->shape.dtype) == 4) { /* any 4-byte bits, on the vector kernels */
        gs__vk_select(gs__gemm_isa(), pp, (const float *)a->data, (const float *)b->data, (float *)out->data, n);
    } else if (gs__compute_size(out->shape.dtype) == 1) {
        const uint8_t *A = (const uint8_t *)a->data, *B = (const uint8_t *)b->data;
        uint8_t *Y = (uint8_t *)out->data;
        for (i = 0; i < n; i++) Y[i] = pp[i] ? A[i] : B[i];
    } else {
        size_t es = gs__compute_size(out->shape.dtype);
        for (i = 0; i < n; i++)
            memcpy((char *)out->data + (size_t)i * es, (const char *)(pp[i] ? a : b)->data + (size_t)i * es, es);
    }
    return GS_OK;
}

/* clamp(lo, x, hi) = min(max(x, lo), hi); lo and hi are scalars or x's shape */
GS__FN gs_result gs__ip_clamp(gs_ctx *ctx, const gs_value *v, const gs__buf *lo, const gs__buf *x, const gs__buf *hi,
                             gs__buf *out) {
    int64_t i, n = gs__numel(&out->shape), nl = gs__numel(&lo->shape), nh = gs__numel(&hi->shape);
    gs_dtype t = x->shape.dtype;
    if (lo->shape.dtype != t || hi->shape.dtype != t || !gs_shape_equal(&x->shape, &out->shape) ||
        (nl != 1 && nl != n) || (nh != 1 && nh != n))
        return gs__err(ctx, GS_ERR_SHAPE, "clamp %s: operand shapes do not fit", v->name);
    for (i = 0; i < n; i++) {
        int64_t il = nl == 1 ? 0 : i, ih = nh == 1 ? 0 : i;
        switch (t) {
        case GS_F32: case GS_BF16: {
            float e = gs__ip_fmax(((const float *)x->data)[i], ((const float *)lo->data)[il]);
            ((float *)out->data)[i] = gs__ip_fmin(e, ((const float *)hi->data)[ih]);
            break;
        }
        case GS_S32: {
            int32_t e = ((const int32_t *)x->data)[i], l = ((const int32_t *)lo->data)[il];
            int32_t h = ((const int32_t *)hi->data)[ih];
            e = e > l ? e : l;
            ((int32_t *)out->data)[i] = e < h ? e : h;
            break;
        }
        case GS_U32: {
            uint32_t e = ((const uint32_t *)x->data)[i], l = ((const uint32_t *)lo->data)[il];
            uint32_t h = ((const uint32_t *)hi->data)[ih];
            e = e > l ? e : l;
            ((uint32_t *)out->data)[i] = e < h ? e : h;
            break;
        }
        case GS_PRED: {
            uint8_t e = ((const uint8_t *)x->data)[i];
            e = (uint8_t)((e | ((const uint8_t *)lo->data)[il]) & ((const uint8_t *)hi->data)[ih]);
            ((uint8_t *)out->data)[i] = e;
            break;
        }
        default:
            if (!gs__is_numeric(t) || gs__is_complex(t) ||
                !gs__ip_gbin(t, GS_OP_MAXIMUM, x->data, i, lo->data, il, out->data, i) ||
                !gs__ip_gbin(t, GS_OP_MINIMUM, out->data, i, hi->data, ih, out->data, i))
                return gs__err(ctx, GS_ERR_UNSUPPORTED, "clamp %s: not supported on %s", v->name, gs_dtype_name(t));
            break;
        }
    }
    return GS_OK;
}

/* |v| as a double that rounds to any format of at most 51 significant bits exactly as v itself would: the
   bits shifted out are ORed into the lowest kept bit (sticky), so no tie is made or lost. */
GS__FN double gs__ip_u64_sticky(uint64_t v) {
    int k = 0;
    while ((v >> k) >= ((uint64_t)1 << 53)) k++;
    if (k == 0) return (double)v;
    return ldexp((double)((v >> k) | ((v & ((((uint64_t)1) << k) - 1u)) != 0)), k);
}

/* An integer of type t (as 64 bits) converted to real float type to, rounded once. */
GS__FN void gs__ip_int_to_float(gs_dtype t, uint64_t x, gs_dtype to, void *y, int64_t i) {
    bool neg = gs__is_signed(t) && (int64_t)x < 0;
    uint64_t mag = neg ? 0u - x : x;
    double d;
    if (to == GS_F64 || to == GS_F32) {   /* C's conversions round once */
        if (to == GS_F64) ((double *)y)[i] = neg ? (double)(int64_t)x : (double)x;
        else ((float *)y)[i] = neg ? (float)(int64_t)x : (float)x;
        return;
    }
    d = gs__ip_u64_sticky(mag);
    gs__st_f(to, y, i, neg ? -d : d);
}

/* convert between any two element types (XLA: floats round to nearest even; float -> integer truncates,
   saturates, NaN -> 0; integer -> integer wraps; -> pred is x != 0; real -> complex (x, 0); c64 <-> c128) */
GS__FN gs_result gs__ip_convert_gen(gs_ctx *ctx, const gs_value *v, const gs__buf *x, gs__buf *out) {
    int64_t i, n = gs__numel(&out->shape);
    gs_dtype from = x->shape.dtype, to = out->shape.dtype;
    bool fc = gs__is_complex(from), tc = gs__is_complex(to);
    if (!gs__is_array_dtype(from) || !gs__is_array_dtype(to) || from == GS_TOKEN || to == GS_TOKEN || (fc && !tc))
        return gs__err(ctx, GS_ERR_UNSUPPORTED, "convert %s: %s -> %s is not supported", v->name, gs_dtype_name(from),
                       gs_dtype_name(to));
    for (i = 0; i < n; i++) {
        if (fc) {
            double re, im;
            gs__ip_ldc(from, x->data, i, &re, &im);
            gs__ip_stc(to, out->data, i, re, im);
        } else if (gs__is_float(from)) {
            gs__set_elem(to, out->data, i, gs__ld_f(from, x->data, i));
        } else {   /* integers and pred */
            uint64_t u = gs__ld_i(from, x->data, i);
            if (gs__is_int(to)) gs__st_i(to, out->data, i, u);
            else if (to == GS_PRED) ((uint8_t *)out->data)[i] = (uint8_t)(u != 0);
            else if (gs__is_float(to)) gs__ip_int_to_float(from, u, to, out->data, i);
            else gs__ip_stc(to, out->data, i, gs__is_signed(from) ? (double)(int64_t)u : (double)u, 0.0);
        }
    }
    return GS_OK;
}

GS__FN gs_result gs__ip_convert(gs_ctx *ctx, const gs_value *v, const gs__buf *x, gs__buf *out) {
    int64_t i, n = gs__numel(&out->shape);
    gs_dtype from = x->shape.dtype, to = out->shape.dtype;
    if (gs__numel(&x->shape) != n) return gs__err(ctx, GS_ERR_SHAPE, "convert %s: shape mismatch", v->name);
    if (!gs__ip_fast(from) || !gs__ip_fast(to)) return gs__ip_convert_gen(ctx, v, x, out);
    if ((from == GS_F32 || from == GS_BF16) && to == GS_BF16) { /* the vector kernels: the same bits */
        gs__vk_round_bf16(gs__gemm_isa(), (const float *)x->data, (float *)out->data, n);
        return GS_OK;
    }
    if ((from == GS_F32 || from == GS_BF16) && to == GS_F32) { /* bf16 values are f32 values */
        if (n > 0) memmove(out->data, x->data, (size_t)n * sizeof(float));
        return GS_OK;
    }
    for (i = 0; i < n; i++) {
        double d = 0.0;     /* integer and pred sources, exactly */
        float f = 0.0f;
        bool is_f = gs__is_float(from);
        switch (from) {
        case GS_F32: case GS_BF16: f = ((const float *)x->data)[i]; break;
        case GS_S32: d = (double)((const int32_t *)x->data)[i]; break;
        case GS_U32: d = (double)((const uint32_t *)x->data)[i]; break;
        case GS_PRED: d = (double)((const uint8_t *)x->data)[i]; break;
        default: return gs__err(ctx, GS_ERR_UNSUPPORTED, "convert %s: bad source dtype", v->name);
        }
        switch (to) {
        case GS_F32: ((float *)out->data)[i] = is_f ? f : (float)d; break;
        case GS_BF16: ((float *)out->data)[i] = gs__ip_rbf(is_f ? f : (float)d); break;
        case GS_S32:
            if (is_f) ((int32_t *)out->data)[i] = gs__ip_f2s(f);
            else if (from == GS_U32) ((int32_t *)out->data)[i] = gs__ip_s32(((const uint32_t *)x->data)[i]);
            else ((int32_t *)out->data)[i] = (int32_t)d;
            break;
        case GS_U32:
            if (is_f) ((uint32_t *)out->data)[i] = gs__ip_f2u(f);
            else if (from == GS_S32) ((uint32_t *)out->data)[i] = (uint32_t)((const int32_t *)x->data)[i];
            else ((uint32_t *)out->data)[i] = (uint32_t)d;
            break;
        case GS_PRED: ((uint8_t *)out->data)[i] = (uint8_t)(is_f ? f != 0.0f : d != 0.0); break;
        default: return gs__err(ctx, GS_ERR_UNSUPPORTED, "convert %s: bad result dtype", v->name);
        }
    }
    return GS_OK;
}

/* XLA's reduce-precision on the bits of a float with se exponent and sm mantissa bits (f32 or f64 layout):
   round the mantissa to m bits (nearest even, a carry may raise the exponent), then send exponents above the
   e-bit range to inf and those at or below its smallest normal exponent to signed zero. */
GS__FN uint64_t gs__ip_rp_bits(uint64_t x, int se, int sm, int e, int m) {
    if (m < sm) {
        uint64_t last = (uint64_t)1 << (sm - m);
        uint64_t bias = (last >> 1) - 1u + ((x & last) >> (sm - m));
        x = (x + bias) & ~(last - 1u);
    }
    if (e < se) {
        uint64_t sign = x & ((uint64_t)1 << (se + sm)), expmask = (((uint64_t)1 << se) - 1u) << sm;
        int64_t sbias = ((int64_t)1 << (se - 1)) - 1, rbias = ((int64_t)1 << (e - 1)) - 1;
        uint64_t xe = x & expmask;
        if (xe > (uint64_t)(sbias + rbias) << sm) x = sign | expmask;
        else if (xe <= (uint64_t)(sbias - rbias) << sm) x = sign;
    }
    return x;
}

GS__FN double gs__ip_reduce_precision(gs_dtype t, double d, int e, int m) {
    if (d != d) return m > 0 ? d : (double)INFINITY;   /* NaN stays NaN; with no mantissa it becomes inf */
    if (t == GS_F64) {
        uint64_t u;
        memcpy(&u, &d, 8);
        u = gs__ip_rp_bits(u, 11, 52, e, m);
        memcpy(&d, &u, 8);
        return d;
    } else {   /* the float's value in f32 layout (exact for every type computed as float) */
        float f = (float)d;
        uint32_t u;
        memcpy(&u, &f, 4);
        u = (uint32_t)gs__ip_rp_bits(u, 8, 23, e, m);
        memcpy(&f, &u, 4);
        return f;
    }
}

/* The unary ops added with XLA's full opcode set: transcendental functions (computed in double, rounded once
   to the type), is-finite, popcnt, count-leading-zeros, real, imag and reduce-precision. */
GS__FN gs_result gs__ip_unary_ext(gs_ctx *ctx, const gs_value *v, const gs__buf *x, gs__buf *out) {
    int64_t i, n = gs__numel(&out->shape);
    gs_dtype t = x->shape.dtype, to = out->shape.dtype;
    int w = gs__dt(t)->bits;
    uint64_t mask = w >= 64 ? ~(uint64_t)0 : (((uint64_t)1) << w) - 1u;
    if (gs__numel(&x->shape) != n) return gs__err(ctx, GS_ERR_SHAPE, "%s %s: shape mismatch", gs_op_name(v->op), v->name);
    for (i = 0; i < n; i++) {
        double d = 0.0, r;
        if (gs__is_float(t)) d = gs__ld_f(t, x->data, i);
        switch (v->op) {
        case GS_OP_SINE: r = sin(d); break;
        case GS_OP_COSINE: r = cos(d); break;
        case GS_OP_TAN: r = tan(d); break;
        case GS_OP_EXPM1: r = expm1(d); break;
        case GS_OP_LOG1P: r = log1p(d); break;
        case GS_OP_CBRT: r = cbrt(d); break;
        case GS_OP_ERF: r = erf(d); break;
        case GS_OP_REDUCE_PRECISION: r = gs__ip_reduce_precision(t, d, v->rp_exp, v->rp_mant); break;
        case GS_OP_IS_FINITE:
            ((uint8_t *)out->data)[i] = (uint8_t)(d == d && d - d == 0.0);
            continue;
        case GS_OP_POPCNT: case GS_OP_CLZ: {
            uint64_t u = gs__ld_i(t, x->data, i) & mask, c = 0;
            if (v->op == GS_OP_POPCNT) {
                for (; u; u &= u - 1u) c++;
            } else {
                int b = w;
                while (b > 0 && !((u >> (b - 1)) & 1u)) b--;
                c = (uint64_t)(w - b);
            }
            gs__st_i(to, out->data, i, c);
            continue;
        }
        case GS_OP_REAL: case GS_OP_IMAG:
            if (gs__is_complex(t)) {
                double re, im;
                gs__ip_ldc(t, x->data, i, &re, &im);
                r = v->op == GS_OP_REAL ? re : im;
            } else {
                r = v->op == GS_OP_REAL ? d : 0.0;
            }
            break;
        default: return gs__err(ctx, GS_ERR_UNSUPPORTED, "%s %s: not supported", gs_op_name(v->op), v->name);
        }
        gs__st_f(to, out->data, i, r);
    }
    return GS_OK;
}

/* atan2, the shifts (XLA: the amount is unsigned; an amount >= the width gives 0, or the sign for an
   arithmetic right shift, which reads the operand as signed at its width) and complex. */
GS__FN gs_result gs__ip_binary_ext(gs_ctx *ctx, const gs_value *v, const gs__buf *x, const gs__buf *z, gs__buf *out) {
    int64_t i, n = gs__numel(&out->shape);
    gs_dtype t = x->shape.dtype;
    int w = gs__dt(t)->bits;
    uint64_t mask = w >= 64 ? ~(uint64_t)0 : (((uint64_t)1) << w) - 1u;
    if (gs__numel(&x->shape) != n || gs__numel(&z->shape) != n || z->shape.dtype != t)
        return gs__err(ctx, GS_ERR_SHAPE, "%s %s: operand shapes differ", gs_op_name(v->op), v->name);
    for (i = 0; i < n; i++) {
        if (v->op == GS_OP_ATAN2) {
            gs__st_f(t, out->data, i, atan2(gs__ld_f(t, x->data, i), gs__ld_f(t, z->data, i)));
        } else if (v->op == GS_OP_COMPLEX) {
            gs__ip_stc(out->shape.dtype, out->data, i, gs__ld_f(t, x->data, i), gs__ld_f(t, z->data, i));
        } else {
            uint64_t a = gs__ld_i(t, x->data, i) & mask, amt = gs__ld_i(t, z->data, i) & mask, r;
            bool neg = ((a >> (w - 1)) & 1u) != 0;
            if (v->op == GS_OP_SHIFT_LEFT) r = amt >= (uint64_t)w ? 0u : a << amt;
            else if (v->op == GS_OP_SHIFT_RIGHT_LOGICAL) r = amt >= (uint64_t)w ? 0u : a >> amt;
            else if (amt >= (uint64_t)w) r = neg ? ~(uint64_t)0 : 0u;
            else r = neg ? ~(~(a | ~mask) >> amt) : a >> amt;   /* sign bits shifted in from the width's top */
            gs__st_i(t, out->data, i, r);
        }
    }
    return GS_OK;
}

/* bitcast-convert: x's storage bytes read as the result type */
GS__FN gs_result gs__ip_bitcast_convert(gs_ctx *ctx, const gs_value *v, const gs__buf *x, gs__buf *out) {
    int64_t nx = gs__numel(&x->shape), no = gs__numel(&out->shape);
    size_t bx = (size_t)nx * gs_dtype_size(x->shape.dtype), bo = (size_t)no * gs_dtype_size(out->shape.dtype);
    void *tmp;
    if (bx != bo || (gs_dtype_size(x->shape.dtype) == 0) != (gs_dtype_size(out->shape.dtype) == 0))
        return gs__err(ctx, GS_ERR_SHAPE, "bitcast-convert %s: %zu bytes cannot become %zu", v->name, bx, bo);
    tmp = gs__malloc(ctx, bx + 1);
    if (!tmp) return GS_ERR_OUT_OF_MEMORY;
    gs__to_storage(x->shape.dtype, tmp, x->data, nx);
    gs__to_compute(out->shape.dtype, out->data, tmp, no);
    gs__free(ctx, tmp);
    return GS_OK;
}

/* ---------------------------------------------------------------------------------------------------------
   rng-bit-generator: XLA's Threefry-2x32 and Philox-4x32 bit generators
   ------------------------------------------------------------------------------------------------------- */
GS__FN uint32_t gs__rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

/* Threefry-2x32 with 20 rounds (Random123; the key schedule adds the parity constant 0x1BD11BDA) */
GS__FN void gs__threefry2x32(const uint32_t key[2], uint32_t x[2]) {
    static const int rot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
    uint32_t ks[3];
    int i, r;
    ks[0] = key[0];
    ks[1] = key[1];
    ks[2] = 0x1BD11BDAu ^ key[0] ^ key[1];
    x[0] += ks[0];
    x[1] += ks[1];
    for (i = 0; i < 5; i++) {   /* five groups of four rounds, each followed by a key injection */
        for (r = 0; r < 4; r++) {
            x[0] += x[1];
            x[1] = gs__rotl32(x[1], rot[(i % 2) * 4 + r]);
            x[1] ^= x[0];
        }
        x[0] += ks[(i + 1) % 3];
        x[1] += ks[(i + 2) % 3] + (uint32_t)(i + 1);
    }
}

/* Philox-4x32 with 10 rounds (Random123's multipliers and Weyl key increments) */
GS__FN void gs__philox4x32(const uint32_t key_in[2], uint32_t x[4]) {
    uint32_t k0 = key_in[0], k1 = key_in[1];
    int r;
    for (r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)x[0] * 0xD2511F53u, p1 = (uint64_t)x[2] * 0xCD9E8D57u;
        uint32_t y0 = (uint32_t)(p1 >> 32) ^ x[1] ^ k0, y1 = (uint32_t)p1, y2 = (uint32_t)(p0 >> 32) ^ x[3] ^ k1,
                 y3 = (uint32_t)p0;
        x[0] = y0;
        x[1] = y1;
        x[2] = y2;
        x[3] = y3;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
}

/* (new state, bits) as XLA's expansion computes them; *st is u64[2] or u64[3], bits has out's shape */
GS__FN gs_result gs__ip_rng_bits(gs_ctx *ctx, const gs_value *v, const gs__buf *st, gs__buf *nst, gs__buf *out) {
    const uint64_t *s = (const uint64_t *)st->data;
    uint64_t *ns = (uint64_t *)nst->data;
    int64_t i, n = gs__numel(&out->shape), ns_len = st->shape.dims[0];
    int w = gs__dt(out->shape.dtype)->bits;
    uint32_t key[2];
    key[0] = (uint32_t)s[0];
    key[1] = (uint32_t)(s[0] >> 32);
    memcpy(ns, s, (size_t)ns_len * 8);
    if (v->rng_alg == GS_RNG_THREE_FRY) {
        /* 32-bit (and 16-bit) elements: blocks i < half give element i from word 0 and element half + i from
           word 1; 64-bit elements: block i gives element i (word 0 the low half) */
        int64_t blocks = w == 64 ? n : (n + 1) / 2;
        for (i = 0; i < blocks; i++) {
            uint64_t c = s[1] + (uint64_t)i;
            uint32_t x[2];
            x[0] = (uint32_t)c;
            x[1] = (uint32_t)(c >> 32);
            gs__threefry2x32(key, x);
            if (w == 64) {
                gs__st_i(out->shape.dtype, out->data, i, (uint64_t)x[0] | ((uint64_t)x[1] << 32));
            } else {
                gs__st_i(out->shape.dtype, out->data, i, x[0]);
                if (blocks + i < n) gs__st_i(out->shape.dtype, out->data, blocks + i, x[1]);
            }
        }
        ns[1] = s[1] + (uint64_t)blocks;
    } else {   /* Philox (and the default): four words per 128-bit counter value, elements in word order */
        uint64_t lo = s[1], hi = ns_len > 2 ? s[2] : 0;
        int64_t per = w == 64 ? 2 : 4, blocks = (n + per - 1) / per, b;
        for (b = 0; b < blocks; b++) {
            uint64_t clo = lo + (uint64_t)b, chi = hi + (clo < lo ? 1u : 0u);
            uint32_t x[4];
            int k;
            x[0] = (uint32_t)clo;
            x[1] = (uint32_t)(clo >> 32);
            x[2] = (uint32_t)chi;
            x[3] = (uint32_t)(chi >> 32);
            gs__philox4x32(key, x);
            for (k = 0; k < per && b * per + k < n; k++) {
                uint64_t e = w == 64 ? ((uint64_t)x[2 * k] | ((uint64_t)x[2 * k + 1] << 32)) : x[k];
                gs__st_i(out->shape.dtype, out->data, b * per + k, e);
            }
        }
        ns[1] = lo + (uint64_t)blocks;
        if (ns_len > 2) ns[2] = hi + (ns[1] < lo ? 1u : 0u);
    }
    (void)ctx;
    return GS_OK;
}

/* ---------------------------------------------------------------------------------------------------------
   batch-norm-training, -inference, -grad (XLA's definitions; statistics in double, two passes)
   ------------------------------------------------------------------------------------------------------- */
GS__FN gs_result gs__ip_batch_norm(gs_ctx *ctx, const gs_value *v, const gs__buf *const *in, gs__buf *const *out) {
    const gs__buf *x = in[0];
    gs_dtype t = x->shape.dtype;
    int64_t outer = 1, F = 1, inner = 1, o, c, i, N;
    double eps = (double)v->bn_epsilon;
    int d;
    if (v->dim < 0 || v->dim >= x->shape.rank) return gs__err(ctx, GS_ERR_SHAPE, "%s %s: bad feature_index", gs_op_name(v->op), v->name);
    for (d = 0; d < x->shape.rank; d++) {
        if (d < v->dim) outer *= x->shape.dims[d];
        else if (d == v->dim) F = x->shape.dims[d];
        else inner *= x->shape.dims[d];
    }
    N = outer * inner;
    for (c = 0; c < F; c++) {
        double mean = 0.0, var = 0.0, scale = gs__ld_f(t, in[1]->data, c), rs, s1 = 0.0, s2 = 0.0;
        if (v->op == GS_OP_BATCH_NORM_TRAINING) {
            for (o = 0; o < outer; o++)
                for (i = 0; i < inner; i++) mean += gs__ld_f(t, x->data, (o * F + c) * inner + i);
            mean = N ? mean / (double)N : 0.0;
            for (o = 0; o < outer; o++)
                for (i = 0; i < inner; i++) {
                    double e = gs__ld_f(t, x->data, (o * F + c) * inner + i) - mean;
                    var += e * e;
                }
            var = N ? var / (double)N : 0.0;
            gs__st_f(t, out[1]->data, c, mean);
            gs__st_f(t, out[2]->data, c, var);
        } else {
            mean = gs__ld_f(t, in[v->op == GS_OP_BATCH_NORM_GRAD ? 2 : 3]->data, c);
            var = gs__ld_f(t, in[v->op == GS_OP_BATCH_NORM_GRAD ? 3 : 4]->data, c);
        }
        rs = 1.0 / sqrt(var + eps);
        if (v->op == GS_OP_BATCH_NORM_GRAD) {   /* s1 = sum(dy), s2 = sum(dy * (x - mean)) */
            for (o = 0; o < outer; o++)
                for (i = 0; i < inner; i++) {
                    int64_t k = (o * F + c) * inner + i;
                    double dy = gs__ld_f(t, in[4]->data, k);
                    s1 += dy;
                    s2 += dy * (gs__ld_f(t, x->data, k) - mean);
                }
            gs__st_f(t, out[1]->data, c, s2 * rs);
            gs__st_f(t, out[2]->data, c, s1);
        }
        for (o = 0; o < outer; o++)
            for (i = 0; i < inner; i++) {
                int64_t k = (o * F + c) * inner + i;
                double e = gs__ld_f(t, x->data, k) - mean, y;
                if (v->op == GS_OP_BATCH_NORM_GRAD)
                    y = scale * rs * (gs__ld_f(t, in[4]->data, k) - s1 / (double)N - e * s2 / ((double)N * (var + eps)));
                else
                    y = e * scale * rs + gs__ld_f(t, in[2]->data, c);
                gs__st_f(t, out[0]->data, k, y);
            }
    }
    return GS_OK;
}

/* ---------------------------------------------------------------------------------------------------------
   cholesky and triangular-solve (per batch matrix, in double)
   ------------------------------------------------------------------------------------------------------- */
GS__FN gs_result gs__ip_linalg(gs_ctx *ctx, const gs_value *v, const gs__buf *a, const gs__buf *b, gs__buf *out) {
    gs_dtype t = a->shape.dtype;
    int r = a->shape.rank;
    int64_t m = a->shape.dims[r - 1], batch = 1, bi, i, j, k, nv = 0, vlen = m;
    double *A, *X;
    for (i = 0; i < r - 2; i++) batch *= a->shape.dims[i];
    if (v->op == GS_OP_TRIANGULAR_SOLVE) nv = v->la_left ? b->shape.dims[r - 1] : b->shape.dims[r - 2];
    A = (double *)gs__malloc(ctx, (size_t)(m * m + m + 1) * sizeof(double));
    if (!A) return GS_ERR_OUT_OF_MEMORY;
    X = A + m * m;
    for (bi = 0; bi < batch; bi++) {
        int64_t base = bi * m * m;
        if (v->op == GS_OP_CHOLESKY) {   /* L (lower) or U = L^T of the triangle read */
            for (i = 0; i < m * m; i++) A[i] = 0.0;
            for (j = 0; j < m; j++) {
                for (i = j; i < m; i++) {   /* column j of L: A[i][j] */
                    double s = gs__ld_f(t, a->data, base + (v->la_lower ? i * m + j : j * m + i));
                    for (k = 0; k < j; k++) s -= A[i * m + k] * A[j * m + k];
                    A[i * m + j] = i == j ? sqrt(s) : s / A[j * m + j];
                }
            }
            for (i = 0; i < m; i++)
                for (j = 0; j < m; j++)
                    gs__st_f(t, out->data, base + i * m + j, v->la_lower ? A[i * m + j] : A[j * m + i]);
            continue;
        }
        {   /* M = op(tri(a)) for left_side, its transpose otherwise; each vector (a column of b, or a row) solved */
            bool tr = v->la_trans != GS_TRANSPOSE_A_NO, lower = v->la_lower ? !tr : tr;
            if (!v->la_left) lower = !lower;
            for (i = 0; i < m; i++)
                for (j = 0; j < m; j++) {
                    bool in_tri = v->la_lower ? j <= i : j >= i;
                    double e = i == j && v->la_unit ? 1.0 : in_tri ? gs__ld_f(t, a->data, base + i * m + j) : 0.0;
                    bool flip = tr != !v->la_left;   /* M = tri^T when exactly one of transpose_a, right side */
                    A[flip ? j * m + i : i * m + j] = e;
                }
            for (k = 0; k < nv; k++) {
                int64_t bb = bi * m * nv, stride = v->la_left ? nv : 1, first = v->la_left ? k : k * m;
                for (i = 0; i < vlen; i++) X[i] = gs__ld_f(t, b->data, bb + first + i * stride);
                for (i = 0; i < m; i++) {
                    int64_t row = lower ? i : m - 1 - i;
                    double s = X[row];
                    for (j = 0; j < m; j++)
                        if (lower ? j < row : j > row) s -= A[row * m + j] * X[j];
                    X[row] = s / A[row * m + row];
                }
                for (i = 0; i < vlen; i++) gs__st_f(t, out->data, bb + first + i * stride, X[i]);
            }
        }
    }
    gs__free(ctx, A);
    return GS_OK;
}

/* ---------------------------------------------------------------------------------------------------------
   Reductions and scans
   ------------------------------------------------------------------------------------------------------- */
/* An f32 or bf16 reduction whose reduced dims form one block, on the vector kernels (gs_simd.c): x as
   [outer, L] with the minor dims reduced, or [outer, L, inner] with minor dims kept (dims of size 1 belong to
   either side). y holds init. Returns false (and does nothing) for other kinds and layouts. */
GS__FN bool gs__ip_reduce_vk(const gs__buf *x, const bool *red, gs_reduce_kind kind, float *y) {
    int64_t size[3] = {1, 1, 1}; /* the groups of consecutive dims: kept, reduced, kept */
    int d, g = 0, vk;
    switch (kind) {
    case GS_REDUCE_SUM: vk = GS__VK_RSUM; break;
    case GS_REDUCE_PROD: vk = GS__VK_RPROD; break;
    case GS_REDUCE_MAX: vk = GS__VK_RMAX; break;
    case GS_REDUCE_MIN: vk = GS__VK_RMIN; break;
    default: return false;
    }
    for (d = 0; d < x->shape.rank; d++) {
        int64_t e = x->shape.dims[d];
        if (e == 1) continue;
        if (g == 0 && red[d]) g = 1;
        else if (g == 1 && !red[d]) g = 2;
        else if (g == 2 && red[d]) return false;
        size[g] *= e;
    }
    if (size[2] == 1)
        gs__vk_reduce_rows(gs__gemm_isa(), vk, x->shape.dtype == GS_BF16, (const float *)x->data, size[0], size[1],
                           y[0], y);
    else
        gs__vk_reduce_cols(gs__gemm_isa(), vk, x->shape.dtype == GS_BF16, (const float *)x->data, size[0], size[1],
                           size[2], y);
    return true;
}

GS__FN gs_result gs__ip_reduce(gs_ctx *ctx, const gs_value *v, const gs__buf *x, const gs__buf *init, gs__buf *out,
                              gs__ip_fn *fn) {
    int64_t ost[GS_MAX_RANK], sst[GS_MAX_RANK];
    bool red[GS_MAX_RANK];
    gs__ip_odo o;
    int d, k, r = x->shape.rank;
    int64_t i, n = gs__numel(&x->shape), no = gs__numel(&out->shape);
    gs_dtype t = x->shape.dtype;
    gs_reduce_kind kind = v->reduce;
    gs_result res = fn ? GS_OK : gs__ip_check_kind(ctx, v, t, kind, false);
    if (res) return res;
    if (init->shape.dtype != t || gs__numel(&init->shape) != 1 || out->shape.dtype != t)
        return gs__err(ctx, GS_ERR_SHAPE, "reduce %s: init must be a scalar of the operand dtype", v->name);
    for (d = 0; d < r; d++) red[d] = false;
    for (k = 0; k < v->n_dims; k++) {
        if (v->dims[k] < 0 || v->dims[k] >= r) return gs__err(ctx, GS_ERR_SHAPE, "reduce %s: bad dim", v->name);
        red[v->dims[k]] = true;
    }
    gs__strides(&out->shape, ost);
    for (d = 0, k = 0; d < r; d++) {
        if (red[d]) {
            sst[d] = 0;
        } else {
            if (k >= out->shape.rank || out->shape.dims[k] != x->shape.dims[d])
                return gs__err(ctx, GS_ERR_SHAPE, "reduce %s: result shape does not match", v->name);
            sst[d] = ost[k++];
        }
    }
    if (k != out->shape.rank) return gs__err(ctx, GS_ERR_SHAPE, "reduce %s: result shape does not match", v->name);
    gs__ip_fill(out->data, gs__compute_size(t), no, init->data);
    if (n == 0) return GS_OK;
    if (!fn && gs__is_fc(t) && gs__ip_reduce_vk(x, red, kind, (float *)out->data)) return GS_OK;
    /* row-major traversal of x visits each output's reduced elements in increasing linear order */
    gs__ip_odo_init(&o, r, x->shape.dims, sst);
    if (fn) {   /* a reducer computation: acc = reducer(acc, x[i]) from init, the reduced elements in that order */
        for (i = 0; i < n && res == GS_OK; i++, gs__ip_odo_next(&o)) res = gs__reducer_fold(fn, t, out->data, o.pos, x->data, i);
        return res;
    }
    switch (t) {
    case GS_F32: case GS_BF16: {
        const float *a = (const float *)x->data;
        float *y = (float *)out->data;
        bool bf = t == GS_BF16;
        for (i = 0; i < n; i++, gs__ip_odo_next(&o)) y[o.pos] = gs__ip_comb_f(kind, y[o.pos], a[i], bf);
        break;
    }
    case GS_S32: {
        const int32_t *a = (const int32_t *)x->data;
        int32_t *y = (int32_t *)out->data;
        for (i = 0; i < n; i++, gs__ip_odo_next(&o)) y[o.pos] = gs__ip_comb_s(kind, y[o.pos], a[i]);
        break;
    }
    case GS_U32: {
        const uint32_t *a = (const uint32_t *)x->data;
        uint32_t *y = (uint32_t *)out->data;
        for (i = 0; i < n; i++, gs__ip_odo_next(&o)) y[o.pos] = gs__ip_comb_u(kind, y[o.pos], a[i]);
        break;
    }
    case GS_PRED: {
        const uint8_t *a = (const uint8_t *)x->data;
        uint8_t *y = (uint8_t *)out->data;
        for (i = 0; i < n; i++, gs__ip_odo_next(&o)) y[o.pos] = gs__ip_comb_p(kind, y[o.pos], a[i]);
        break;
    }
    default:
        for (i = 0; i < n; i++, gs__ip_odo_next(&o)) gs__ip_gcomb(t, kind, out->data, o.pos, x->data, i);
        break;
    }
    return GS_OK;
}

/* Splits a shape at dim into (outer, n, inner). */
GS__FN void gs__ip_split_at(const gs_shape *s, int64_t dim, int64_t *outer, int64_t *n, int64_t *inner) {
    int d;
    *outer = 1;
    *inner = 1;
    for (d = 0; d < dim; d++) *outer *= s->dims[d];
    for (d = (int)dim + 1; d < s->rank; d++) *inner *= s->dims[d];
    *n = s->dims[dim];
}

/* a sorts strictly before b by value (ties are false). desc: larger first. NaN is the largest value. */
GS__FN bool gs__ip_before_f(float a, float b, bool desc) {
    bool na = gs__ip_isnan(a), nb = gs__ip_isnan(b);
    if (na || nb) return desc ? (na && !nb) : (!na && nb);
    return desc ? a > b : a < b;
}

GS__FN gs_result gs__ip_argminmax(gs_ctx *ctx, const gs_value *v, const gs__buf *x, gs__buf *out) {
    int64_t outer, n, inner, o, i, k;
    gs_dtype t = x->shape.dtype;
    bool is_max = v->op == GS_OP_ARGMAX;
    int32_t *y = (int32_t *)out->data;
    if (v->dim < 0 || v->dim >= x->shape.rank || out->shape.dtype != GS_S32)
        return gs__err(ctx, GS_ERR_SHAPE, "%s %s: bad dim or result type", gs_op_name(v->op), v->name);
    gs__ip_split_at(&x->shape, v->dim, &outer, &n, &inner);
    if (gs__numel(&out->shape) != outer * inner)
        return gs__err(ctx, GS_ERR_SHAPE, "%s %s: result shape does not match", gs_op_name(v->op), v->name);
    for (o = 0; o < outer; o++) {
        for (i = 0; i < inner; i++) {
            int64_t base = o * n * inner + i, best = 0;
            for (k = 1; k < n; k++) {
                int64_t p = base + k * inner, q = base + best * inner;
                bool better;
                switch (t) {
                case GS_F32: case GS_BF16: {
                    float a = ((const float *)x->data)[p], b = ((const float *)x->data)[q];
                    /* NaN wins (the first one); otherwise strictly better */
                    if (gs__ip_isnan(b)) better = false;
                    else if (gs__ip_isnan(a)) better = true;
                    else better = is_max ? a > b : a < b;
                    break;
                }
                case GS_S32: {
                    int32_t a = ((const int32_t *)x->data)[p], b = ((const int32_t *)x->data)[q];
                    better = is_max ? a > b : a < b;
                    break;
                }
                case GS_U32: {
                    uint32_t a = ((const uint32_t *)x->data)[p], b = ((const uint32_t *)x->data)[q];
                    better = is_max ? a > b : a < b;
                    break;
                }
                case GS_PRED: {
                    uint8_t a = ((const uint8_t *)x->data)[p], b = ((const uint8_t *)x->data)[q];
                    better = is_max ? a > b : a < b;
                    break;
                }
                default: {
                    int lt, eq, un, gt, e2, u2;
                    if (!gs__is_numeric(t) || gs__is_complex(t))
                        return gs__err(ctx, GS_ERR_UNSUPPORTED, "%s %s: bad dtype", gs_op_name(v->op), v->name);
                    gs__ip_gorder(t, gs__is_signed(t) ? GS_CMP_TYPE_SIGNED : GS_CMP_TYPE_FLOAT, x->data, p, x->data, q, &lt, &eq, &un);
                    gs__ip_gorder(t, gs__is_signed(t) ? GS_CMP_TYPE_SIGNED : GS_CMP_TYPE_FLOAT, x->data, q, x->data, p, &gt, &e2, &u2);
                    /* NaN wins (the first one); otherwise strictly better */
                    if (gs__ld_f(t, x->data, q) != gs__ld_f(t, x->data, q)) better = false;
                    else if (gs__ld_f(t, x->data, p) != gs__ld_f(t, x->data, p)) better = true;
                    else better = is_max ? gt : lt;
                    break;
                }
                }
                if (better) best = k;
            }
            y[o * inner + i] = (int32_t)best;
        }
    }
    return GS_OK;
}

GS__FN gs_result gs__ip_cumulative(gs_ctx *ctx, const gs_value *v, const gs__buf *x, gs__buf *out) {
    int64_t outer, n, inner, o, i, k;
    gs_dtype t = x->shape.dtype;
    gs_reduce_kind kind;
    bool rev = v->flag, bf = t == GS_BF16;
    gs_result res;
    switch (v->op) {
    case GS_OP_CUMSUM: kind = GS_REDUCE_SUM; break;
    case GS_OP_CUMPROD: kind = GS_REDUCE_PROD; break;
    case GS_OP_CUMMAX: kind = GS_REDUCE_MAX; break;
    default: kind = GS_REDUCE_MIN; break;
    }
    res = gs__ip_check_kind(ctx, v, t, kind, false);
    if (res) return res;
    if (v->dim < 0 || v->dim >= x->shape.rank || !gs_shape_equal(&x->shape, &out->shape))
        return gs__err(ctx, GS_ERR_SHAPE, "%s %s: bad dim or result shape", gs_op_name(v->op), v->name);
    gs__ip_split_at(&x->shape, v->dim, &outer, &n, &inner);
    for (o = 0; o < outer; o++) {
        for (i = 0; i < inner; i++) {
            int64_t base = o * n * inner + i;
            for (k = 0; k < n; k++) {
                int64_t kk = rev ? n - 1 - k : k;
                int64_t p = base + kk * inner, q = base + (rev ? kk + 1 : kk - 1) * inner;
                switch (t) {
                case GS_F32: case GS_BF16: {
                    float *y = (float *)out->data;
                    const float *a = (const float *)x->data;
                    y[p] = k == 0 ? a[p] : gs__ip_comb_f(kind, y[q], a[p], bf);
                    break;
                }
                case GS_S32: {
                    int32_t *y = (int32_t *)out->data;
                    const int32_t *a = (const int32_t *)x->data;
                    y[p] = k == 0 ? a[p] : gs__ip_comb_s(kind, y[q], a[p]);
                    break;
                }
                case GS_U32: {
                    uint32_t *y = (uint32_t *)out->data;
                    const uint32_t *a = (const uint32_t *)x->data;
                    y[p] = k == 0 ? a[p] : gs__ip_comb_u(kind, y[q], a[p]);
                    break;
                }
                case GS_PRED: {
                    uint8_t *y = (uint8_t *)out->data;
                    const uint8_t *a = (const uint8_t *)x->data;
                    y[p] = k == 0 ? a[p] : gs__ip_comb_p(kind, y[q], a[p]);
                    break;
                }
                default: {
                    size_t es = gs__compute_size(t);
                    if (k == 0) memcpy((char *)out->data + (size_t)p * es, (const char *)x->data + (size_t)p * es, es);
                    else {
                        memcpy((char *)out->data + (size_t)p * es, (const char *)out->data + (size_t)q * es, es);
                        gs__ip_gcomb(t, kind, out->data, p, x->data, p);
                    }
                    break;
                }
                }
            }
        }
    }
    return GS_OK;
}

/* ---------------------------------------------------------------------------------------------------------
   fft: one axis at a time over a complex double copy of each batch element's transform block
   ------------------------------------------------------------------------------------------------------- */
/* The DFT of n complex values re[0], im[0], re[s], ... in place: y_k = sum_j x_j e^{sign 2 pi i j k / n}
   (radix 2 when n is a power of two, else the direct sum); tw holds e^{sign 2 pi i m / n}, m < n; tmp 2n. */
GS__FN void gs__ip_dft(double *x, int64_t n, int64_t s, const double *tw, double *tmp) {
    int64_t j, k, m;
    for (j = 0; j < n; j++) {
        tmp[2 * j] = x[2 * j * s];
        tmp[2 * j + 1] = x[2 * j * s + 1];
    }
    if (n > 1 && (n & (n - 1)) == 0) {
        int64_t len;
        for (j = 1, k = 0; j < n; j++) {   /* bit reversal */
            int64_t bit = n >> 1;
            for (; k & bit; bit >>= 1) k ^= bit;
            k ^= bit;
            if (j < k) {
                double a = tmp[2 * j], b = tmp[2 * j + 1];
                tmp[2 * j] = tmp[2 * k];
                tmp[2 * j + 1] = tmp[2 * k + 1];
                tmp[2 * k] = a;
                tmp[2 * k + 1] = b;
            }
        }
        for (len = 2; len <= n; len <<= 1)
            for (j = 0; j < n; j += len)
                for (k = 0; k < len / 2; k++) {
                    const double *w = &tw[2 * (k * (n / len))];
                    double *u = &tmp[2 * (j + k)], *t = &tmp[2 * (j + k + len / 2)];
                    double vr = t[0] * w[0] - t[1] * w[1], vi = t[0] * w[1] + t[1] * w[0];
                    t[0] = u[0] - vr;
                    t[1] = u[1] - vi;
                    u[0] += vr;
                    u[1] += vi;
                }
        for (j = 0; j < n; j++) {
            x[2 * j * s] = tmp[2 * j];
            x[2 * j * s + 1] = tmp[2 * j + 1];
        }
        return;
    }
    for (k = 0; k < n; k++) {
        double yr = 0, yi = 0;
        for (j = 0, m = 0; j < n; j++, m = (m + k) % n) {
            yr += tmp[2 * j] * tw[2 * m] - tmp[2 * j + 1] * tw[2 * m + 1];
            yi += tmp[2 * j] * tw[2 * m + 1] + tmp[2 * j + 1] * tw[2 * m];
        }
        x[2 * k * s] = yr;
        x[2 * k * s + 1] = yi;
    }
}

/* x[B.., N1.., Nn] -> out: the transform of each batch element's block (an IRFFT's Hermitian half extended
   first: X[k] = conj(X[-k]) for the last index above N/2, every index taken modulo its length) */
GS__FN gs_result gs__ip_fft(gs_ctx *ctx, const gs_value *v, const gs__buf *x, gs__buf *out) {
    int n = v->fft_n, r = x->shape.rank, t = v->fft_type, a;
    int64_t L = 1, maxn = 1, B, b, e, lin = 1, lout = 1, hl;
    double *w, *tw, *tmp;
    bool inv = t == GS_FFT_IFFT || t == GS_FFT_IRFFT;
    if (n < 1 || n > 3 || n > r) return gs__err(ctx, GS_ERR_SHAPE, "fft %s: bad fft_length", v->name);
    for (a = 0; a < n; a++) {
        L *= v->fft_len[a];
        maxn = GS__MAX(maxn, v->fft_len[a]);
        lin *= x->shape.dims[r - n + a];
        lout *= out->shape.dims[r - n + a];
    }
    hl = v->fft_len[n - 1] / 2 + 1;
    B = L ? gs__numel(&x->shape) / (lin ? lin : 1) : 0;
    if (L == 0 || B == 0) return GS_OK;
    w = (double *)gs__malloc(ctx, (size_t)(2 * L + 4 * maxn) * sizeof(double));
    if (!w) return GS_ERR_OUT_OF_MEMORY;
    tw = w + 2 * L;
    tmp = tw + 2 * maxn;
    for (b = 0; b < B; b++) {
        int64_t stride = 1;
        for (e = 0; e < L; e++) {   /* load: e indexes the full N1 x .. x Nn block */
            int64_t last = e % v->fft_len[n - 1], rest = e / v->fft_len[n - 1];
            double re = 0, im = 0;
            if (t == GS_FFT_RFFT) {
                re = gs__ld_f(x->shape.dtype, x->data, b * lin + e);
            } else if (t != GS_FFT_IRFFT) {
                gs__ip_ldc(x->shape.dtype, x->data, b * lin + e, &re, &im);
            } else {
                int64_t src = 0, m = 1, q = rest;
                bool mirror = last >= hl;
                for (a = n - 2; a >= 0; a--) {   /* the leading indices, negated when mirrored */
                    int64_t len = v->fft_len[a], ia = q % len;
                    q /= len;
                    if (mirror) ia = (len - ia) % len;
                    src += ia * m;
                    m *= len;
                }
                src = src * hl + (mirror ? v->fft_len[n - 1] - last : last);
                gs__ip_ldc(x->shape.dtype, x->data, b * lin + src, &re, &im);
                if (mirror) im = -im;
            }
            w[2 * e] = re;
            w[2 * e + 1] = im;
        }
        for (a = n - 1; a >= 0; a--) {   /* each axis: lines of len values, stride apart */
            int64_t len = v->fft_len[a], m, line, inner = stride;
            const double pi2 = 6.283185307179586476925286766559;
            for (m = 0; m < len; m++) {
                tw[2 * m] = cos(pi2 * (double)m / (double)len);
                tw[2 * m + 1] = (inv ? 1.0 : -1.0) * sin(pi2 * (double)m / (double)len);
            }
            for (line = 0; line < L / len; line++) {
                int64_t lo = line % inner, hi = line / inner;
                gs__ip_dft(w + 2 * (hi * len * inner + lo), len, inner, tw, tmp);
            }
            stride *= len;
        }
        for (e = 0; e < lout; e++) {   /* store */
            int64_t src = e;
            if (t == GS_FFT_RFFT) src = (e / hl) * v->fft_len[n - 1] + e % hl;
            if (t == GS_FFT_IRFFT) gs__st_f(out->shape.dtype, out->data, b * lout + e, w[2 * src] / (double)L);
            else if (inv) gs__ip_stc(out->shape.dtype, out->data, b * lout + e, w[2 * src] / (double)L, w[2 * src + 1] / (double)L);
            else gs__ip_stc(out->shape.dtype, out->data, b * lout + e, w[2 * src], w[2 * src + 1]);
        }
    }
    gs__free(ctx, w);
    return GS_OK;
}

/* ---------------------------------------------------------------------------------------------------------
   Sort and top-k: a stable merge sort of positions along one line
   ------------------------------------------------------------------------------------------------------- */
struct gs__ip_fn {
    gs__ip_st st;             /* every slot's buffer is a cell */
    double *cells;            /* 16 bytes per slot */
    gs__buf *pbufs;           /* the parameters' shapes (gs__ip_st_init wants them) */
    struct gs__ip_var *var;   /* a variadic reducer's state (gs__ip_custom_reduction), or NULL */
};
/* A variadic reducer folded by a one-operand kernel: the kernel folds element ia of its input into element iy of
   its result (component k's accumulator); every other component j keeps its accumulator acc[j] (the result's
   shape) and its input in[j] at the same positions, and the reducer combines all n at once. */
typedef struct gs__ip_var {
    int n, k;
    void **acc;               /* n; acc[k] unused (the kernel's result) */
    const void **in;          /* n: the inputs (scatter: the updates) in compute format */
    const void **args;        /* 2n */
    void **outs;              /* n */
    size_t *es;               /* n: compute-format element sizes */
} gs__ip_var;
GS__FN gs_result gs__ip_fn_init(gs__ip_fn *f, gs__exec *ex, gs_graph *g);
GS__FN gs_result gs__ip_fn_call(gs__ip_fn *f, const void *const *args, void *const *outs);
GS__FN void gs__ip_fn_free(gs__ip_fn *f);

typedef struct gs__ip_sortkey {
    const gs__buf *key;
    int64_t base, stride;
    bool desc;
    /* with a comparator computation (sort's cond): the elements of every operand go to its parameters */
    gs__ip_fn *cmp;
    int nx;
    const gs__buf *const *xs;
    const void **args;        /* 2 nx: the comparator's arguments */
    gs_result err;            /* the first failure of the comparator; later comparisons are skipped */
} gs__ip_sortkey;


/* XLA's sort comparator: comparator(a's elements, b's elements) is true when a goes first */
GS__FN bool gs__ip_cmp_before(gs__ip_sortkey *s, int64_t pa, int64_t pb) {
    int j;
    uint8_t r = 0;
    void *out = &r;
    if (s->err) return false;
    for (j = 0; j < s->nx; j++) {
        size_t es = gs__compute_size(s->xs[j]->shape.dtype);
        s->args[2 * j] = (const char *)s->xs[j]->data + pa * (int64_t)es;
        s->args[2 * j + 1] = (const char *)s->xs[j]->data + pb * (int64_t)es;
    }
    s->err = gs__ip_fn_call(s->cmp, s->args, &out);
    return s->err == GS_OK && r != 0;
}

GS__FN bool gs__ip_key_before(gs__ip_sortkey *s, int64_t a, int64_t b) {
    int64_t pa = s->base + a * s->stride, pb = s->base + b * s->stride;
    if (s->cmp) return gs__ip_cmp_before(s, pa, pb);
    switch (s->key->shape.dtype) {
    case GS_F32: case GS_BF16:
        return gs__ip_before_f(((const float *)s->key->data)[pa], ((const float *)s->key->data)[pb], s->desc);
    case GS_S32: {
        int32_t x = ((const int32_t *)s->key->data)[pa], y = ((const int32_t *)s->key->data)[pb];
        return s->desc ? x > y : x < y;
    }
    case GS_U32: {
        uint32_t x = ((const uint32_t *)s->key->data)[pa], y = ((const uint32_t *)s->key->data)[pb];
        return s->desc ? x > y : x < y;
    }
    case GS_PRED: {
        uint8_t x = ((const uint8_t *)s->key->data)[pa], y = ((const uint8_t *)s->key->data)[pb];
        return s->desc ? x > y : x < y;
    }
    default: {
        gs_dtype t = s->key->shape.dtype;
        int lt, eq, un;
        if (gs__is_float(t)) {
            double x = gs__ld_f(t, s->key->data, pa), y = gs__ld_f(t, s->key->data, pb);
            bool nx = x != x, ny = y != y;
            if (nx || ny) return s->desc ? (nx && !ny) : (!nx && ny);
            return s->desc ? x > y : x < y;
        }
        if (s->desc) gs__ip_gorder(t, gs__is_signed(t) ? GS_CMP_TYPE_SIGNED : GS_CMP_TYPE_UNSIGNED, s->key->data, pb,
                                   s->key->data, pa, &lt, &eq, &un);
        else gs__ip_gorder(t, gs__is_signed(t) ? GS_CMP_TYPE_SIGNED : GS_CMP_TYPE_UNSIGNED, s->key->data, pa,
                           s->key->data, pb, &lt, &eq, &un);
        return lt != 0;
    }
    }
}

/* Sorts perm[0..n) (stable) with tmp[0..n) as scratch. */
GS__FN void gs__ip_merge_sort(gs__ip_sortkey *s, int64_t *perm, int64_t *tmp, int64_t n) {
    int64_t width, i;
    int64_t *src = perm, *dst = tmp;
    for (width = 1; width < n; width *= 2) {
        for (i = 0; i < n; i += 2 * width) {
            int64_t lo = i, mid = GS__MIN(i + width, n), hi = GS__MIN(i + 2 * width, n);
            int64_t a = lo, b = mid, k = lo;
            while (a < mid && b < hi) {
                if (gs__ip_key_before(s, src[b], src[a])) dst[k++] = src[b++];
                else dst[k++] = src[a++];
            }
            while (a < mid) dst[k++] = src[a++];
            while (b < hi) dst[k++] = src[b++];
        }
        {
            int64_t *sw = src;
            src = dst;
            dst = sw;
        }
    }
    if (src != perm) memcpy(perm, src, (size_t)n * sizeof(int64_t));
}

/* Sorts lines of xs[0..nx) along dim keyed by xs[0]; writes the first `keep` of each line to outs (shape with
   dims[dim] = keep); idx_out (s32, optional) receives the original positions. */
GS__FN gs_result gs__ip_sort_lines(gs__exec *ex, const gs_value *v, int nx, const gs__buf *const *xs, int64_t dim,
                                bool desc, int64_t keep, gs__buf *const *outs, gs__buf *idx_out) {
    gs_ctx *ctx = ex->ctx;
    int64_t outer, n, inner, o, i, k;
    int64_t *perm, *tmp;
    int j;
    gs__ip_sortkey sk;
    const void *args[128];
    gs__ip_fn fn;
    gs__ip_split_at(&xs[0]->shape, dim, &outer, &n, &inner);
    if (keep > n) return gs__err(ctx, GS_ERR_SHAPE, "%s %s: k is larger than the dim", gs_op_name(v->op), v->name);
    memset(&sk, 0, sizeof sk);
    memset(&fn, 0, sizeof fn);
    if (v->op == GS_OP_SORT && v->cond) {
        gs_result r;
        if (nx > 64) return gs__err(ctx, GS_ERR_UNSUPPORTED, "sort %s: more than 64 operands", v->name);
        if ((r = gs__ip_fn_init(&fn, ex, v->cond)) != GS_OK) return r;
        sk.cmp = &fn;
        sk.nx = nx;
        sk.xs = xs;
        sk.args = args;
    }
    perm = (int64_t *)gs__malloc(ctx, (size_t)(2 * n + 1) * sizeof(int64_t));
    if (!perm) {
        gs__ip_fn_free(&fn);
        return GS_ERR_OUT_OF_MEMORY;
    }
    tmp = perm + n;
    sk.key = xs[0];
    sk.stride = inner;
    sk.desc = desc;
    for (o = 0; o < outer; o++) {
        for (i = 0; i < inner; i++) {
            sk.base = o * n * inner + i;
            for (k = 0; k < n; k++) perm[k] = k;
            gs__ip_merge_sort(&sk, perm, tmp, n);
            if (sk.err) {
                gs__free(ctx, perm);
                gs__ip_fn_free(&fn);
                return gs__err_prefix(ctx, "sort %s: comparator '%s': ", v->name, v->cond->name);
            }
            for (j = 0; j < nx; j++) {
                size_t es = gs__compute_size(xs[j]->shape.dtype);
                for (k = 0; k < keep; k++)
                    memcpy((char *)outs[j]->data + ((o * keep + k) * inner + i) * (int64_t)es,
                           (const char *)xs[j]->data + (sk.base + perm[k] * inner) * (int64_t)es, es);
            }
            if (idx_out)
                for (k = 0; k < keep; k++) ((int32_t *)idx_out->data)[(o * keep + k) * inner + i] = (int32_t)perm[k];
        }
    }
    gs__free(ctx, perm);
    gs__ip_fn_free(&fn);
    return GS_OK;
}

/* select-and-scatter: out = init; per source element (a window position), the window's element that select
   keeps (the first valid one, replaced by a later w when select(chosen, w) is false) gets scatter(out, source) */
GS__FN gs_result gs__ip_select_and_scatter(gs__ip_st *st, const gs_value *v, gs__buf *out) {
    const gs__buf *x = gs__ip_opbuf(st, v, 0), *src = gs__ip_opbuf(st, v, 1), *init = gs__ip_opbuf(st, v, 2);
    gs_dtype t = x->shape.dtype;
    size_t es = gs__compute_size(t);
    int r = x->shape.rank, i;
    int64_t n = gs__numel(&out->shape), ns = gs__numel(&src->shape), e, w, wtot = 1;
    int64_t oi[GS_MAX_RANK], wi[GS_MAX_RANK], xstr[GS_MAX_RANK];
    gs__ip_fn fn;
    gs_result res;
    if (!v->window || !v->cond || src->shape.rank != r)
        return gs__err(st->ctx, GS_ERR_SHAPE, "select-and-scatter %s: bad window or select", v->name);
    for (e = 0; e < n; e++) memcpy((char *)out->data + e * (int64_t)es, init->data, es);
    if (ns == 0 || n == 0) return GS_OK;
    for (i = r - 1, w = 1; i >= 0; i--) {
        xstr[i] = w;
        w *= x->shape.dims[i];
        wtot *= v->window[i].size;
        oi[i] = 0;
    }
    if ((res = gs__ip_fn_init(&fn, st->ex, v->cond)) != GS_OK) return res;
    for (e = 0; e < ns && res == GS_OK; e++) {
        int64_t sel = -1;
        for (i = 0; i < r; i++) wi[i] = 0;
        for (w = 0; w < wtot && res == GS_OK; w++) {
            int64_t p = 0;
            bool ok = true;
            for (i = 0; i < r && ok; i++) {
                const gs_window_dim *d = &v->window[i];
                int64_t q = oi[i] * d->stride + wi[i] * d->window_dilation - d->pad_lo;
                if (q < 0 || q % d->base_dilation != 0 || q / d->base_dilation >= x->shape.dims[i]) ok = false;
                else p += q / d->base_dilation * xstr[i];
            }
            if (ok && sel < 0) {
                sel = p;
            } else if (ok) {
                uint8_t keep = 0;
                void *o = &keep;
                const void *args[2];
                args[0] = (const char *)x->data + sel * (int64_t)es;
                args[1] = (const char *)x->data + p * (int64_t)es;
                res = gs__ip_fn_call(&fn, args, &o);
                if (!keep) sel = p;
            }
            for (i = r - 1; i >= 0; i--) {
                if (++wi[i] < v->window[i].size) break;
                wi[i] = 0;
            }
        }
        if (sel >= 0 && res == GS_OK) gs__ip_gcomb(t, v->reduce, out->data, sel, src->data, e);
        for (i = r - 1; i >= 0; i--) {
            if (++oi[i] < src->shape.dims[i]) break;
            oi[i] = 0;
        }
    }
    gs__ip_fn_free(&fn);
    if (res) return gs__err_prefix(st->ctx, "select-and-scatter %s: select '%s': ", v->name, v->cond->name);
    return GS_OK;
}

/* ---------------------------------------------------------------------------------------------------------
   Dot (dot_general): operands transposed to [batch, M, K] x [batch, K, N], then the batched gemm
   ------------------------------------------------------------------------------------------------------- */
/* Copies x with its dims permuted by perm into a fresh contiguous buffer, or returns x->data itself when perm
   is the identity (*owned tells which). */
GS__FN void *gs__ip_permuted(gs_ctx *ctx, const gs__buf *x, const int *perm, bool *owned) {
    int64_t ist[GS_MAX_RANK], sst[GS_MAX_RANK], dims[GS_MAX_RANK], dst[GS_MAX_RANK];
    gs_shape ps;
    int d, r = x->shape.rank;
    bool ident = true;
    size_t es = gs__compute_size(x->shape.dtype);
    void *p;
    *owned = false;
    for (d = 0; d < r; d++)
        if (perm[d] != d) ident = false;
    if (ident) return x->data;
    gs__strides(&x->shape, ist);
    ps = x->shape;
    for (d = 0; d < r; d++) {
        dims[d] = x->shape.dims[perm[d]];
        sst[d] = ist[perm[d]];
        ps.dims[d] = dims[d];
    }
    gs__strides(&ps, dst);
    p = gs__malloc(ctx, (size_t)gs__numel(&ps) * es);
    if (!p) return NULL;
    gs__ip_xcopy(es, r, dims, p, 0, dst, x->data, 0, sst);
    *owned = true;
    return p;
}

/* C[b] = A[b] x B[b] ([M, K] x [K, N]) for any numeric types: integers accumulate in 64 bits (wrapping, exact at
   the result's width), real floats in double, complex in double pairs; one rounding to the result type. */
GS__FN void gs__ip_dot_gen(gs_dtype t, gs_dtype to, int64_t B, int64_t M, int64_t N, int64_t K, const void *A,
                           const void *Bm, void *C) {
    int64_t bb, m, n, k;
    for (bb = 0; bb < B; bb++)
        for (m = 0; m < M; m++)
            for (n = 0; n < N; n++) {
                int64_t ia = (bb * M + m) * K, ib = bb * K * N + n, ic = (bb * M + m) * N + n;
                if (gs__is_complex(t)) {
                    double sr = 0.0, si = 0.0, ar, ai, br, bi;
                    for (k = 0; k < K; k++) {
                        gs__ip_ldc(t, A, ia + k, &ar, &ai);
                        gs__ip_ldc(t, Bm, ib + k * N, &br, &bi);
                        sr += ar * br - ai * bi;
                        si += ar * bi + ai * br;
                    }
                    gs__ip_stc(to, C, ic, sr, si);
                } else if (gs__is_int(to) && gs__is_int(t)) {
                    uint64_t acc = 0;
                    for (k = 0; k < K; k++) acc += gs__ld_i(t, A, ia + k) * gs__ld_i(t, Bm, ib + k * N);
                    gs__st_i(to, C, ic, acc);
                } else {
                    double acc = 0.0;
                    for (k = 0; k < K; k++) acc += gs__ld_f(t, A, ia + k) * gs__ld_f(t, Bm, ib + k * N);
                    gs__set_elem(to, C, ic, acc);
                }
            }
}

GS__FN gs_result gs__ip_dot(gs_ctx *ctx, const gs_value *v, const gs__buf *a, const gs__buf *b, gs__buf *out) {
    const gs_dot_dims *dd = v->dot;
    int pa[GS_MAX_RANK], pb[GS_MAX_RANK];
    bool ua[GS_MAX_RANK], ub[GS_MAX_RANK], oa = false, ob = false;
    int i, ka = 0, kb = 0, ra = a->shape.rank, rb = b->shape.rank;
    int64_t B = 1, M = 1, N = 1, K = 1;
    gs_dtype t = a->shape.dtype;
    void *A = NULL, *Bm = NULL;
    gs_result res = GS_OK;
    if (!dd || dd->n_batch < 0 || dd->n_contract < 0 || dd->n_batch + dd->n_contract > GS__MIN(ra, rb))
        return gs__err(ctx, GS_ERR_SHAPE, "dot %s: bad dimension numbers", v->name);
    for (i = 0; i < GS_MAX_RANK; i++) ua[i] = ub[i] = false;
#define GS__DOT_TAKE(used, p, k, r, dimv)                                                    \
    do {                                                                                       \
        int64_t dv_ = (dimv);                                                                  \
        if (dv_ < 0 || dv_ >= (r) || used[dv_])                                                \
            return gs__err(ctx, GS_ERR_SHAPE, "dot %s: bad dimension numbers", v->name);       \
        used[dv_] = true;                                                                      \
        p[k++] = (int)dv_;                                                                     \
    } while (0)
    for (i = 0; i < dd->n_batch; i++) {
        GS__DOT_TAKE(ua, pa, ka, ra, dd->lhs_batch[i]);
        GS__DOT_TAKE(ub, pb, kb, rb, dd->rhs_batch[i]);
        if (a->shape.dims[dd->lhs_batch[i]] != b->shape.dims[dd->rhs_batch[i]])
            return gs__err(ctx, GS_ERR_SHAPE, "dot %s: batch dims differ", v->name);
        B *= a->shape.dims[dd->lhs_batch[i]];
    }
    for (i = 0; i < dd->n_contract; i++) {
        if (dd->lhs_contract[i] < 0 || dd->lhs_contract[i] >= ra || dd->rhs_contract[i] < 0 ||
            dd->rhs_contract[i] >= rb || a->shape.dims[dd->lhs_contract[i]] != b->shape.dims[dd->rhs_contract[i]])
            return gs__err(ctx, GS_ERR_SHAPE, "dot %s: contracting dims differ", v->name);
        K *= a->shape.dims[dd->lhs_contract[i]];
    }
    /* lhs: batch, free (increasing), contract */
    for (i = 0; i < ra; i++) {
        bool c = false;
        int j;
        for (j = 0; j < dd->n_contract; j++)
            if (dd->lhs_contract[j] == i) c = true;
        if (!ua[i] && !c) {
            M *= a->shape.dims[i];
            GS__DOT_TAKE(ua, pa, ka, ra, i);
        }
    }
    for (i = 0; i < dd->n_contract; i++) GS__DOT_TAKE(ua, pa, ka, ra, dd->lhs_contract[i]);
    /* rhs: batch, contract, free (increasing) */
    for (i = 0; i < dd->n_contract; i++) GS__DOT_TAKE(ub, pb, kb, rb, dd->rhs_contract[i]);
    for (i = 0; i < rb; i++) {
        if (!ub[i]) {
            N *= b->shape.dims[i];
            GS__DOT_TAKE(ub, pb, kb, rb, i);
        }
    }
#undef GS__DOT_TAKE
    if (b->shape.dtype != t || B * M * N != gs__numel(&out->shape))
        return gs__err(ctx, GS_ERR_SHAPE, "dot %s: operand and result shapes do not fit", v->name);
    if (!gs__is_numeric(t) || !gs__is_numeric(out->shape.dtype) || (gs__is_complex(t) != gs__is_complex(out->shape.dtype)))
        return gs__err(ctx, GS_ERR_UNSUPPORTED, "dot %s: %s -> %s is not supported", v->name, gs_dtype_name(t),
                       gs_dtype_name(out->shape.dtype));
    if (B * M * N == 0) return GS_OK;
    A = gs__ip_permuted(ctx, a, pa, &oa);
    if (!A) return GS_ERR_OUT_OF_MEMORY;
    Bm = gs__ip_permuted(ctx, b, pb, &ob);
    if (!Bm) {
        res = GS_ERR_OUT_OF_MEMORY;
        goto done;
    }
    if (gs__is_fc(t) && gs__is_fc(out->shape.dtype)) {
        float *C = (float *)out->data;
        if (K == 0) memset(C, 0, (size_t)(B * M * N) * sizeof(float));
        else res = gs__k_matmul(ctx, B, M, N, K, (const float *)A, (const float *)Bm, C, 0);
        if (res == GS_OK) gs__round_dt(out->shape.dtype, C, B * M * N);
    } else if (!((t == GS_S32 || t == GS_U32) && out->shape.dtype == t)) {
        gs__ip_dot_gen(t, out->shape.dtype, B, M, N, K, A, Bm, out->data);
    } else {
        /* exact, wrapping integer products */
        const uint32_t *IA = (const uint32_t *)A, *IB = (const uint32_t *)Bm;
        uint32_t *C = (uint32_t *)out->data;
        int64_t bb, m, k, n;
        memset(C, 0, (size_t)(B * M * N) * sizeof(uint32_t));
        for (bb = 0; bb < B; bb++)
            for (m = 0; m < M; m++) {
                uint32_t *crow = C + (bb * M + m) * N;
                for (k = 0; k < K; k++) {
                    uint32_t av = IA[(bb * M + m) * K + k];
                    const uint32_t *brow = IB + (bb * K + k) * N;
                    for (n = 0; n < N; n++) crow[n] += av * brow[n];
                }
            }
    }
done:
    if (oa) gs__free(ctx, A);
    if (ob) gs__free(ctx, Bm);
    return res;
}

/* ---------------------------------------------------------------------------------------------------------
   Ragged dot (XLA's HloEvaluator semantics, group sizes read as s64): operands transposed to lhs [B, M, K] and
   rhs [G, B, K, N] (non-contracting mode) or [B, K, N], then per group the dot's own kernels, so the products
   and sums are exactly a dot's
   ------------------------------------------------------------------------------------------------------- */
/* the s64 group size i of group_sizes row `row` (a [g] operand is the same row for every prefix) */
GS__FN int64_t gs__ip_gsz(const gs__buf *gz, int64_t row, int64_t i) {
    int64_t G = gz->shape.dims[gz->shape.rank - 1];
    return (int64_t)gs__ld_i(gz->shape.dtype, gz->data, (gz->shape.rank > 1 ? row * G : 0) + i);
}

/* C[M,N] = A[M,K] x B[K,N] in t (the dot's kernels), element offsets into the compute-format buffers */
GS__FN gs_result gs__ip_gemm_at(gs_ctx *ctx, gs_dtype t, int64_t M, int64_t N, int64_t K, const void *A, int64_t ia,
                                const void *Bm, int64_t ib, void *C, int64_t ic) {
    size_t es = gs__compute_size(t);
    const char *a = (const char *)A + (size_t)ia * es, *b = (const char *)Bm + (size_t)ib * es;
    char *c = (char *)C + (size_t)ic * es;
    if (M <= 0 || N <= 0) return GS_OK;
    if (gs__is_fc(t)) return gs__k_matmul(ctx, 1, M, N, K, (const float *)a, (const float *)b, (float *)c, 0);
    gs__ip_dot_gen(t, t, 1, M, N, K, a, b, c);
    return GS_OK;
}

/* operand x's dims in the order lists[0..n) then the dims in none of them, increasing (perm), and the extents
   of the n lists and the rest (ext[0..n]) */
GS__FN void gs__ip_rd_perm(const gs_shape *x, int n, const int64_t *const *lists, const int *counts, int *perm,
                           int64_t *ext) {
    bool used[GS_MAX_RANK];
    int d, l, k = 0, i;
    for (d = 0; d < x->rank; d++) used[d] = false;
    for (l = 0; l <= n; l++) ext[l] = 1;
    for (l = 0; l < n; l++)
        for (i = 0; i < counts[l]; i++) {
            perm[k++] = (int)lists[l][i];
            used[lists[l][i]] = true;
            ext[l] *= x->dims[lists[l][i]];
        }
    for (d = 0; d < x->rank; d++)
        if (!used[d]) {
            perm[k++] = d;
            ext[n] *= x->dims[d];
        }
}

/* non-contracting mode: row r of lhs row block (b, x) belongs to the first group whose running total exceeds r,
   i.e. group i holds rows [max(0, totals before i), total through i); rows in no group stay 0 */
GS__FN gs_result gs__ip_rd_rows(gs_ctx *ctx, const gs_value *v, const gs__rdinfo *I, const void *A, const void *Bm,
                                const gs__buf *a, const gs__buf *gz, gs__buf *out, int64_t B, int64_t M, int64_t N,
                                int64_t K) {
    int64_t X = 1, Mr = a->shape.dims[I->ragged], Y, G = gz->shape.dims[gz->shape.rank - 1], bb, xx, i;
    int k;
    gs_dtype t = a->shape.dtype;
    gs_result res = GS_OK;
    for (k = v->ragged->dot.n_batch; k < I->n_pre; k++) X *= a->shape.dims[I->pre[k]];
    Y = X * Mr != 0 ? M / (X * Mr) : 0;
    for (bb = 0; bb < B; bb++)
        for (xx = 0; xx < X; xx++) {
            uint64_t run = 0;
            int64_t lo = 0, row0 = (bb * X + xx) * Mr;
            for (i = 0; i < G && res == GS_OK; i++) {
                int64_t hi;
                run += (uint64_t)gs__ip_gsz(gz, bb * X + xx, i);
                hi = (int64_t)run;
                if (hi > Mr) hi = Mr;
                if (hi > lo) {
                    res = gs__ip_gemm_at(ctx, t, (hi - lo) * Y, N, K, A, (row0 + lo) * Y * K, Bm, (i * B + bb) * K * N,
                                         out->data, (row0 + lo) * Y * N);
                    lo = hi;
                }
            }
        }
    return res;
}

/* contracting mode: group i of batch b sums the ragged dim over [total before i, total through i), clamped to
   the dim; the rest of K is zeroed in copies of both operands (so no inf or NaN outside the range reaches the
   sum) and the batched dot runs once per group into out[i] */
GS__FN gs_result gs__ip_rd_cols(gs_ctx *ctx, const gs_value *v, const gs__rdinfo *I, const void *A, const void *Bm,
                                const gs__buf *a, const gs__buf *gz, gs__buf *out, int64_t B, int64_t M, int64_t N,
                                int64_t K) {
    const gs_dot_dims *dd = &v->ragged->dot;
    int64_t Kx = 1, Kr = a->shape.dims[I->ragged], Ky = 1, G = gz->shape.dims[gz->shape.rank - 1], i, bb, kx, kr, j;
    size_t es = gs__compute_size(a->shape.dtype);
    char *Am = (char *)gs__malloc(ctx, (size_t)(B * M * K) * es), *Bz = (char *)gs__malloc(ctx, (size_t)(B * K * N) * es);
    gs_result res = GS_OK;
    int k;
    if (!Am || !Bz) res = GS_ERR_OUT_OF_MEMORY;
    for (k = 0; k < I->pos; k++) Kx *= a->shape.dims[dd->lhs_contract[k]];
    Ky = Kx * Kr != 0 ? K / (Kx * Kr) : 0;
    for (i = 0; i < G && res == GS_OK; i++) {
        memcpy(Am, A, (size_t)(B * M * K) * es);
        memcpy(Bz, Bm, (size_t)(B * K * N) * es);
        for (bb = 0; bb < B; bb++)
            for (kx = 0; kx < Kx; kx++) {
                uint64_t run = 0;
                int64_t lo, hi;
                for (j = 0; j < i; j++) run += (uint64_t)gs__ip_gsz(gz, bb * Kx + kx, j);
                lo = (int64_t)run;
                hi = (int64_t)(run + (uint64_t)gs__ip_gsz(gz, bb * Kx + kx, i));
                lo = GS__MAX(0, GS__MIN(lo, Kr));
                hi = GS__MAX(0, GS__MIN(hi, Kr));
                for (kr = 0; kr < Kr; kr++) {
                    int64_t m, kk = (kx * Kr + kr) * Ky;
                    if (kr >= lo && kr < hi) continue;
                    for (m = 0; m < M; m++) memset(Am + (size_t)((bb * M + m) * K + kk) * es, 0, (size_t)Ky * es);
                    memset(Bz + (size_t)((bb * K + kk) * N) * es, 0, (size_t)(Ky * N) * es);
                }
            }
        for (bb = 0; bb < B && res == GS_OK; bb++)
            res = gs__ip_gemm_at(ctx, a->shape.dtype, M, N, K, Am, bb * M * K, Bz, bb * K * N, out->data, (i * B + bb) * M * N);
    }
    gs__free(ctx, Am);
    gs__free(ctx, Bz);
    return res;
}

/* batch mode: the dot, then the batches at or past the groups' total zeroed */
GS__FN gs_result gs__ip_rd_batch(gs_ctx *ctx, const gs_value *v, const gs__rdinfo *I, const gs__buf *a, const gs__buf *b,
                                 const gs__buf *gz, gs__buf *out) {
    const gs_dot_dims *dd = &v->ragged->dot;
    gs_value dv = *v;
    int64_t Bx = 1, Br = a->shape.dims[I->ragged], By = 1, rest, G = gz->shape.dims[gz->shape.rank - 1], bx, br, i;
    size_t es = gs__compute_size(out->shape.dtype);
    int k;
    gs_result res;
    dv.dot = (gs_dot_dims *)dd;
    if ((res = gs__ip_dot(ctx, &dv, a, b, out)) != GS_OK) return res;
    for (k = 0; k < dd->n_batch; k++)
        if (k < I->pos) Bx *= a->shape.dims[dd->lhs_batch[k]];
        else if (k > I->pos) By *= a->shape.dims[dd->lhs_batch[k]];
    rest = Bx * Br * By != 0 ? gs__numel(&out->shape) / (Bx * Br * By) : 0;
    for (bx = 0; bx < Bx; bx++) {
        uint64_t run = 0;
        int64_t total;
        for (i = 0; i < G; i++) run += (uint64_t)gs__ip_gsz(gz, bx, i);
        total = GS__MAX(0, (int64_t)run);
        for (br = total; br < Br; br++)
            memset((char *)out->data + (size_t)((bx * Br + br) * By * rest) * es, 0, (size_t)(By * rest) * es);
    }
    return GS_OK;
}

GS__FN gs_result gs__ip_ragged_dot(gs_ctx *ctx, const gs_value *v, const gs__buf *a, const gs__buf *b, const gs__buf *gz,
                                   gs__buf *out) {
    const gs_ragged_dot_dims *rd = v->ragged;
    const gs_dot_dims *dd = &rd->dot;
    const int64_t *ll[2], *rl[3];
    int lc[2], rc[3], pa[GS_MAX_RANK], pb[GS_MAX_RANK];
    int64_t le[3], re[4], B, M, N, K;
    gs__rdinfo I;
    bool oa = false, ob = false, nc;
    void *A = NULL, *Bm = NULL;
    gs_result res = GS_OK;
    int mode = rd ? gs__ragged_info(rd, a->shape.rank, &I) : -1;
    if (mode < 0 || !gs__is_numeric(a->shape.dtype) || out->shape.dtype != a->shape.dtype || !gs__is_int(gz->shape.dtype))
        return gs__err(ctx, GS_ERR_SHAPE, "ragged-dot %s: bad dimension numbers or types", v->name);
    if (mode == GS__RD_BATCH) return gs__ip_rd_batch(ctx, v, &I, a, b, gz, out);
    nc = mode == GS__RD_NONCONTRACT;
    ll[0] = dd->lhs_batch;
    lc[0] = dd->n_batch;
    ll[1] = dd->lhs_contract;
    lc[1] = dd->n_contract;
    /* lhs: batch, contracting, free -> rotated below to batch, free, contracting */
    gs__ip_rd_perm(&a->shape, 2, ll, lc, pa, le);
    {
        int tmp[GS_MAX_RANK], k, n = 0, nfree = a->shape.rank - dd->n_batch - dd->n_contract;
        for (k = 0; k < dd->n_batch; k++) tmp[n++] = pa[k];
        for (k = 0; k < nfree; k++) tmp[n++] = pa[dd->n_batch + dd->n_contract + k];
        for (k = 0; k < dd->n_contract; k++) tmp[n++] = pa[dd->n_batch + k];
        memcpy(pa, tmp, sizeof(int) * (size_t)a->shape.rank);
    }
    rl[0] = rd->rhs_group;
    rc[0] = nc ? 1 : 0;
    rl[1] = dd->rhs_batch;
    rc[1] = dd->n_batch;
    rl[2] = dd->rhs_contract;
    rc[2] = dd->n_contract;
    gs__ip_rd_perm(&b->shape, 3, rl, rc, pb, re);
    B = le[0];
    K = le[1];
    M = le[2];
    N = re[3];
    memset(out->data, 0, (size_t)gs__numel(&out->shape) * gs__compute_size(out->shape.dtype));
    if (B * M * N == 0) return GS_OK;
    A = gs__ip_permuted(ctx, a, pa, &oa);
    Bm = A ? gs__ip_permuted(ctx, b, pb, &ob) : NULL;
    if (!A || !Bm) res = GS_ERR_OUT_OF_MEMORY;
    else if (nc) res = gs__ip_rd_rows(ctx, v, &I, A, Bm, a, gz, out, B, M, N, K);
    else res = gs__ip_rd_cols(ctx, v, &I, A, Bm, a, gz, out, B, M, N, K);
    if (res == GS_OK && gs__is_fc(out->shape.dtype)) gs__round_dt(out->shape.dtype, (float *)out->data, gs__numel(&out->shape));
    if (oa) gs__free(ctx, A);
    if (ob) gs__free(ctx, Bm);
    return res;
}

/* ---------------------------------------------------------------------------------------------------------
   Gather and scatter (XLA dimension numbers, with batching dims)
   ------------------------------------------------------------------------------------------------------- */
GS__FN bool gs__ip_in_list(int64_t x, int n, const int64_t *list) {
    int i;
    for (i = 0; i < n; i++)
        if (list[i] == x) return true;
    return false;
}

GS__FN gs_result gs__ip_gather(gs_ctx *ctx, const gs_value *v, const gs__buf *op, const gs__buf *ix, gs__buf *out) {
    const gs_gather_dims *gd = v->gather;
    int64_t ost[GS_MAX_RANK], ist[GS_MAX_RANK], yst[GS_MAX_RANK];
    int64_t cdims[GS_MAX_RANK], csrc[GS_MAX_RANK], cdst[GS_MAX_RANK], bdims[GS_MAX_RANK];
    int batch_out[GS_MAX_RANK], batch_ix[GS_MAX_RANK], off_op[GS_MAX_RANK];
    int orank = op->shape.rank, irank = ix->shape.rank, yrank = out->shape.rank;
    int nb = 0, nbi = 0, noff = 0, d, k;
    int64_t ivd, nvec;
    size_t es = gs__compute_size(out->shape.dtype);
    gs__ip_odo it;
    if (!gd) return gs__err(ctx, GS_ERR_SHAPE, "gather %s: no dimension numbers", v->name);
    ivd = gd->index_vector_dim;
    if (!gs__is_int(ix->shape.dtype) || ivd < 0 || ivd > irank ||
        out->shape.dtype != op->shape.dtype)
        return gs__err(ctx, GS_ERR_SHAPE, "gather %s: bad indices", v->name);
    nvec = ivd < irank ? ix->shape.dims[ivd] : 1;
    if (gd->n_start_index_map != nvec || gd->n_operand_batching_dims < 0 || gd->n_offset_dims < 0)
        return gs__err(ctx, GS_ERR_SHAPE, "gather %s: start_index_map does not match the index vector", v->name);
    for (d = 0; d < yrank; d++)
        if (!gs__ip_in_list(d, gd->n_offset_dims, gd->offset_dims)) batch_out[nb++] = d;
    for (d = 0; d < irank; d++)
        if (d != ivd) batch_ix[nbi++] = d;
    for (d = 0; d < orank; d++)
        if (!gs__ip_in_list(d, gd->n_collapsed_slice_dims, gd->collapsed_slice_dims) &&
            !gs__ip_in_list(d, gd->n_operand_batching_dims, gd->operand_batching_dims))
            off_op[noff++] = d;
    if (nb != nbi || noff != gd->n_offset_dims)
        return gs__err(ctx, GS_ERR_SHAPE, "gather %s: dimension numbers do not fit the shapes", v->name);
    for (k = 0; k < nvec; k++)
        if (gd->start_index_map[k] < 0 || gd->start_index_map[k] >= orank)
            return gs__err(ctx, GS_ERR_SHAPE, "gather %s: start_index_map out of range", v->name);
    for (d = 0; d < orank; d++)
        if (gd->slice_sizes[d] < 0 || gd->slice_sizes[d] > op->shape.dims[d])
            return gs__err(ctx, GS_ERR_SHAPE, "gather %s: slice size out of range", v->name);
    gs__strides(&op->shape, ost);
    gs__strides(&ix->shape, ist);
    gs__strides(&out->shape, yst);
    for (k = 0; k < noff; k++) {
        int64_t od = gd->offset_dims[k];
        if (od < 0 || od >= yrank || out->shape.dims[od] != gd->slice_sizes[off_op[k]])
            return gs__err(ctx, GS_ERR_SHAPE, "gather %s: offset dims do not fit the slice sizes", v->name);
        cdims[k] = gd->slice_sizes[off_op[k]];
        csrc[k] = ost[off_op[k]];
        cdst[k] = yst[od];
    }
    for (k = 0; k < nb; k++) {
        if (out->shape.dims[batch_out[k]] != ix->shape.dims[batch_ix[k]])
            return gs__err(ctx, GS_ERR_SHAPE, "gather %s: batch dims do not fit the indices", v->name);
        bdims[k] = ix->shape.dims[batch_ix[k]];
    }
    for (k = 0; k < gd->n_operand_batching_dims; k++) {
        int64_t od = gd->operand_batching_dims[k], sd = gd->start_indices_batching_dims[k];
        if (od < 0 || od >= orank || sd < 0 || sd >= irank || sd == ivd || ix->shape.dims[sd] != op->shape.dims[od])
            return gs__err(ctx, GS_ERR_SHAPE, "gather %s: batching dims do not fit", v->name);
    }
    for (k = 0; k < nb; k++)
        if (bdims[k] == 0) return GS_OK;
    gs__ip_odo_init(&it, nb, bdims, NULL);
    do {
        int64_t sin[GS_MAX_RANK], ibase = 0, soff = 0, doff = 0;
        for (d = 0; d < orank; d++) sin[d] = 0;
        for (k = 0; k < nb; k++) {
            ibase += it.idx[k] * ist[batch_ix[k]];
            doff += it.idx[k] * yst[batch_out[k]];
        }
        for (k = 0; k < nvec; k++) {
            int64_t dd = gd->start_index_map[k];
            int64_t val = gs__ip_get_index(ix, ibase + (ivd < irank ? k * ist[ivd] : 0));
            sin[dd] = gs__ip_clamp64(val, 0, op->shape.dims[dd] - gd->slice_sizes[dd]);
        }
        for (k = 0; k < gd->n_operand_batching_dims; k++) {
            int64_t sd = gd->start_indices_batching_dims[k];
            int j;
            for (j = 0; j < nb; j++)
                if (batch_ix[j] == sd) sin[gd->operand_batching_dims[k]] = it.idx[j];
        }
        for (d = 0; d < orank; d++) soff += sin[d] * ost[d];
        gs__ip_xcopy(es, noff, cdims, out->data, doff, cdst, op->data, soff, csrc);
    } while (gs__ip_odo_next(&it));
    return GS_OK;
}

GS__FN void gs__ip_combine_at(gs_dtype t, gs_reduce_kind k, void *dst, int64_t di, const void *src, int64_t si) {
    switch (t) {
    case GS_F32: case GS_BF16: {
        float *D = (float *)dst;
        D[di] = gs__ip_comb_f(k, D[di], ((const float *)src)[si], t == GS_BF16);
        break;
    }
    case GS_S32: {
        int32_t *D = (int32_t *)dst;
        D[di] = gs__ip_comb_s(k, D[di], ((const int32_t *)src)[si]);
        break;
    }
    case GS_U32: {
        uint32_t *D = (uint32_t *)dst;
        D[di] = gs__ip_comb_u(k, D[di], ((const uint32_t *)src)[si]);
        break;
    }
    case GS_PRED: {
        uint8_t *D = (uint8_t *)dst;
        D[di] = gs__ip_comb_p(k, D[di], ((const uint8_t *)src)[si]);
        break;
    }
    default: gs__ip_gcomb(t, k, dst, di, src, si); break;
    }
}

GS__FN gs_result gs__ip_scatter(gs_ctx *ctx, const gs_value *v, const gs__buf *op, const gs__buf *ix,
                               const gs__buf *up, gs__buf *out, gs__ip_fn *fn) {
    const gs_scatter_dims *sd = v->scatter;
    int64_t ost[GS_MAX_RANK], ist[GS_MAX_RANK], ust[GS_MAX_RANK];
    int64_t wsz[GS_MAX_RANK], gdims[GS_MAX_RANK], wdims[GS_MAX_RANK], wost[GS_MAX_RANK], wust[GS_MAX_RANK];
    int upd_sc[GS_MAX_RANK], sc_ix[GS_MAX_RANK], win_op[GS_MAX_RANK];
    int orank = op->shape.rank, irank = ix->shape.rank, urank = up->shape.rank;
    int nsc = 0, nsi = 0, nwin = 0, d, k;
    int64_t ivd, nvec;
    gs_dtype t = op->shape.dtype;
    gs_reduce_kind kind = v->reduce;
    size_t es = gs__compute_size(t);
    gs__ip_odo it;
    gs_result res;
    if (!sd) return gs__err(ctx, GS_ERR_SHAPE, "scatter %s: no dimension numbers", v->name);
    res = fn ? GS_OK : gs__ip_check_kind(ctx, v, t, kind, true);
    if (res) return res;
    ivd = sd->index_vector_dim;
    if (!gs__is_int(ix->shape.dtype) || ivd < 0 || ivd > irank ||
        up->shape.dtype != t || !gs_shape_equal(&op->shape, &out->shape))
        return gs__err(ctx, GS_ERR_SHAPE, "scatter %s: operand shapes do not fit", v->name);
    nvec = ivd < irank ? ix->shape.dims[ivd] : 1;
    if (sd->n_scatter_dims_to_operand_dims != nvec)
        return gs__err(ctx, GS_ERR_SHAPE, "scatter %s: scatter_dims_to_operand_dims does not match", v->name);
    for (k = 0; k < nvec; k++)
        if (sd->scatter_dims_to_operand_dims[k] < 0 || sd->scatter_dims_to_operand_dims[k] >= orank)
            return gs__err(ctx, GS_ERR_SHAPE, "scatter %s: scatter_dims_to_operand_dims out of range", v->name);
    for (d = 0; d < urank; d++)
        if (!gs__ip_in_list(d, sd->n_update_window_dims, sd->update_window_dims)) upd_sc[nsc++] = d;
    for (d = 0; d < irank; d++)
        if (d != ivd) sc_ix[nsi++] = d;
    for (d = 0; d < orank; d++) {
        wsz[d] = 1;
        if (!gs__ip_in_list(d, sd->n_inserted_window_dims, sd->inserted_window_dims) &&
            !gs__ip_in_list(d, sd->n_input_batching_dims, sd->input_batching_dims))
            win_op[nwin++] = d;
    }
    if (nsc != nsi || nwin != sd->n_update_window_dims)
        return gs__err(ctx, GS_ERR_SHAPE, "scatter %s: dimension numbers do not fit the shapes", v->name);
    gs__strides(&op->shape, ost);
    gs__strides(&ix->shape, ist);
    gs__strides(&up->shape, ust);
    for (k = 0; k < nwin; k++) {
        int64_t ud = sd->update_window_dims[k];
        if (ud < 0 || ud >= urank) return gs__err(ctx, GS_ERR_SHAPE, "scatter %s: bad update_window_dims", v->name);
        wsz[win_op[k]] = up->shape.dims[ud];
        wdims[k] = up->shape.dims[ud];
        wost[k] = ost[win_op[k]];
        wust[k] = ust[ud];
    }
    for (k = 0; k < nsc; k++) {
        if (up->shape.dims[upd_sc[k]] != ix->shape.dims[sc_ix[k]])
            return gs__err(ctx, GS_ERR_SHAPE, "scatter %s: update scatter dims do not fit the indices", v->name);
        gdims[k] = up->shape.dims[upd_sc[k]];
    }
    for (k = 0; k < sd->n_input_batching_dims; k++) {
        int64_t od = sd->input_batching_dims[k], xd = sd->scatter_indices_batching_dims[k];
        if (od < 0 || od >= orank || xd < 0 || xd >= irank || xd == ivd || ix->shape.dims[xd] != op->shape.dims[od])
            return gs__err(ctx, GS_ERR_SHAPE, "scatter %s: batching dims do not fit", v->name);
    }
    memcpy(out->data, op->data, (size_t)gs__numel(&op->shape) * es);
    for (k = 0; k < nsc; k++)
        if (gdims[k] == 0) return GS_OK;
    for (k = 0; k < nwin; k++)
        if (wdims[k] == 0) return GS_OK;
    gs__ip_odo_init(&it, nsc, gdims, NULL);
    do {
        int64_t sin[GS_MAX_RANK], ibase = 0, ubase = 0, obase = 0;
        bool fits = true;
        gs__ip_odo w;
        for (d = 0; d < orank; d++) sin[d] = 0;
        for (k = 0; k < nsc; k++) {
            ibase += it.idx[k] * ist[sc_ix[k]];
            ubase += it.idx[k] * ust[upd_sc[k]];
        }
        for (k = 0; k < nvec; k++)
            sin[sd->scatter_dims_to_operand_dims[k]] = gs__ip_get_index(ix, ibase + (ivd < irank ? k * ist[ivd] : 0));
        for (k = 0; k < sd->n_input_batching_dims; k++) {
            int j;
            for (j = 0; j < nsc; j++)
                if (sc_ix[j] == sd->scatter_indices_batching_dims[k]) sin[sd->input_batching_dims[k]] = it.idx[j];
        }
        for (d = 0; d < orank; d++) {
            if (sin[d] < 0 || sin[d] + wsz[d] > op->shape.dims[d]) fits = false;
            obase += sin[d] * ost[d];
        }
        if (!fits) continue;   /* the whole window is skipped */
        if (kind == GS_REDUCE_REPLACE) {
            gs__ip_xcopy(es, nwin, wdims, out->data, obase, wost, up->data, ubase, wust);
            continue;
        }
        /* walk the window with the odometer tracking the operand position; the update position follows */
        gs__ip_odo_init(&w, nwin, wdims, wost);
        do {
            int64_t upos = ubase;
            for (k = 0; k < nwin; k++) upos += w.idx[k] * wust[k];
            if (fn) res = gs__reducer_fold(fn, t, out->data, obase + w.pos, up->data, upos);
            else gs__ip_combine_at(t, kind, out->data, obase + w.pos, up->data, upos);
        } while (res == GS_OK && gs__ip_odo_next(&w));
    } while (res == GS_OK && gs__ip_odo_next(&it));
    return res;
}

/* ---------------------------------------------------------------------------------------------------------
   Collectives
   ------------------------------------------------------------------------------------------------------- */
/* Single-partition semantics (no hook): 1 = identity, 0 = zeros; or an error. */
GS__FN gs_result gs__ip_collective_local(gs__ip_st *st, const gs_value *v, int *identity) {
    gs__exec *ex = st->ex;
    *identity = 1;
    if (v->op == GS_OP_COLLECTIVE_PERMUTE) {
        int64_t i;
        bool self = false, other = false;
        for (i = 0; i < v->n_pairs; i++) {
            int64_t s = v->pairs[2 * i], t = v->pairs[2 * i + 1];
            if (s < 0 || s >= ex->num_partitions || t < 0 || t >= ex->num_partitions)
                return gs__err(st->ctx, GS_ERR_INVALID_ARG,
                               "collective-permute %s: pair (%lld,%lld) is outside %lld partitions", v->name,
                               (long long)s, (long long)t, (long long)ex->num_partitions);
            if (t == ex->partition_id) {
                if (s == t) self = true;
                else other = true;
            }
        }
        if (other)
            return gs__err(st->ctx, GS_ERR_UNSUPPORTED,
                           "collective-permute %s: receives from another partition, which needs a runtime", v->name);
        *identity = self ? 1 : 0;
        return GS_OK;
    } else {
        int64_t ng = 0, gsz = 0;
        const int64_t *ids = NULL;
        gs_result r = gs__groups_expand(st->ctx, &v->coll.groups, ex->num_partitions, &ng, &gsz, &ids);
        if (r) return r;
        gs__free(st->ctx, (void *)ids);
        if (gsz != 1)
            return gs__err(st->ctx, GS_ERR_UNSUPPORTED,
                           "%s %s: groups of %lld partitions need a runtime (the interpreter runs one partition)",
                           gs_op_name(v->op), v->name, (long long)gsz);
        return GS_OK;
    }
}

GS__FN gs_result gs__ip_eval_collective(gs__ip_st *st, const gs_value *v) {
    const gs__buf *x = gs__ip_opbuf(st, v, 0);
    gs__buf *out;
    int identity;
    gs_result r;
    if (st->ex->collective) {
        out = gs__ip_new_out(st, v, 0);
        if (!out) return GS_ERR_OUT_OF_MEMORY;
        r = st->ex->collective(st->ex, v, x, out);
        if (r == GS__PENDING) return r;   /* the stepper pauses here */
        if (r && st->ctx->err == GS_OK)
            gs__err(st->ctx, r, "%s %s: the collective failed", gs_op_name(v->op), v->name);
        return r;
    }
    r = gs__ip_collective_local(st, v, &identity);
    if (r) return r;
    if (identity) {
        if (!gs_shape_equal(&x->shape, &v->shape))
            return gs__err(st->ctx, GS_ERR_SHAPE, "%s %s: result shape differs from the operand's on one partition",
                           gs_op_name(v->op), v->name);
        gs__ip_alias(st, v, 0, st->first[v->operands[0]->id]);
        return GS_OK;
    }
    out = gs__ip_new_out(st, v, 0);
    if (!out) return GS_ERR_OUT_OF_MEMORY;
    memset(out->data, 0, (size_t)gs__numel(&out->shape) * gs__compute_size(out->shape.dtype));
    return GS_OK;
}

/* ragged-all-to-all v: its K updates (the metadata's elements, row-major), rows of row_bytes (compute format),
   N input rows and M output rows */
GS__FN void gs__ra2a_geom_of(const gs_value *v, gs__ra2a_geom *g) {
    const gs_shape *in = &v->operands[0]->shape;
    int d;
    memset(g, 0, sizeof *g);
    g->K = gs__numel(&v->operands[2]->shape);
    g->N = in->dims[0];
    g->M = v->shape.dims[0];
    g->row_bytes = (int64_t)gs__compute_size(in->dtype);
    for (d = 1; d < in->rank; d++) g->row_bytes *= in->dims[d];
}

/* Operands 2..5 of a ragged-all-to-all (ops[0..6)) as int64, K each, into meta[4 * K]. */
GS__FN void gs__ra2a_meta(const gs__buf *ops, int64_t K, int64_t *meta) {
    int k;
    int64_t i;
    for (k = 0; k < 4; k++)
        for (i = 0; i < K; i++) meta[k * K + i] = gs__ip_get_index(&ops[2 + k], i);
}

/* the one source of the interpreter's ragged-all-to-all */
GS__FN gs__ra2a_src gs__ip_ra2a_self(const void *at, int64_t j) {
    (void)j;
    return *(const gs__ra2a_src *)at;
}

/* Receiver r of a group of G (member j: device ids[j], its input rows and metadata src(at, j)) takes the rows every
   member sends it: update u (of U = K/G) of member j is entry r*U + u of j's metadata, written at that entry's
   output offset; the receiver's recv_sizes[j*U + u] must say the same size. Every update is checked before any
   is written (out NULL: check only); false, with a message naming the device and the operand in msg, when one
   reads outside the sender's input, writes outside the receiver's output or disagrees in size. */
GS__FN bool gs__ra2a_receive(const gs_value *v, const gs__ra2a_geom *g, int64_t G, int64_t r,
                             gs__ra2a_src (*src)(const void *at, int64_t j), const void *at, const int64_t *ids, char *out,
                             char *msg, size_t cap) {
    static const char *const names[4] = {"input_offsets", "send_sizes", "output_offsets", "recv_sizes"};
    int64_t U = G > 0 ? g->K / G : 0, j, u, pass;
    const int64_t *mine = src(at, r).meta;
    for (pass = 0; pass < 2; pass++)
        for (j = 0; j < G; j++)
            for (u = 0; u < U; u++) {
                const gs__ra2a_src sj = src(at, j);
                const int64_t *m = sj.meta, i = r * U + u, want = mine[3 * g->K + j * U + u];
                int64_t io = m[i], n = m[g->K + i], oo = m[2 * g->K + i];
                const char *bad = NULL;
                int which = 0;
                int64_t val = 0;
                if (pass == 1) {
                    if (out && n > 0)
                        memcpy(out + oo * g->row_bytes, sj.in + io * g->row_bytes, (size_t)(n * g->row_bytes));
                    continue;
                }
                if (io < 0) bad = "is negative", which = 0, val = io;
                else if (n < 0) bad = "is negative", which = 1, val = n;
                else if (oo < 0) bad = "is negative", which = 2, val = oo;
                if (bad) {
                    if (msg)
                        snprintf(msg, cap, "ragged-all-to-all %s: device %lld's %s[%lld] = %lld %s", v->name,
                                 (long long)ids[j], names[which], (long long)i, (long long)val, bad);
                    return false;
                }
                if (n > g->N - io) {
                    if (msg)
                        snprintf(msg, cap, "ragged-all-to-all %s: device %lld sends device %lld rows [%lld, %lld) of its input "
                                 "(input_offsets[%lld] = %lld, send_sizes[%lld] = %lld), which has %lld rows", v->name,
                                 (long long)ids[j], (long long)ids[r], (long long)io, (long long)(io + n), (long long)i,
                                 (long long)io, (long long)i, (long long)n, (long long)g->N);
                    return false;
                }
                if (n > g->M - oo) {
                    if (msg)
                        snprintf(msg, cap, "ragged-all-to-all %s: device %lld writes rows [%lld, %lld) of device %lld's output "
                                 "(output_offsets[%lld] = %lld, send_sizes[%lld] = %lld), which has %lld rows", v->name,
                                 (long long)ids[j], (long long)oo, (long long)(oo + n), (long long)ids[r], (long long)i,
                                 (long long)oo, (long long)i, (long long)n, (long long)g->M);
                    return false;
                }
                if (n != want) {
                    if (msg)
                        snprintf(msg, cap, "ragged-all-to-all %s: device %lld's recv_sizes[%lld] = %lld, but device %lld sends it "
                                 "send_sizes[%lld] = %lld rows", v->name, (long long)ids[r], (long long)(j * U + u),
                                 (long long)want, (long long)ids[j], (long long)i, (long long)n);
                    return false;
                }
            }
    return true;
}

/* ragged-all-to-all: with a runtime, the hook gets the six operands (ops[0..6)); alone, every group must be this
   partition only (a group of one: the updates are this device's own, XLA's degenerate case) */
GS__FN gs_result gs__ip_eval_ragged(gs__ip_st *st, const gs_value *v) {
    gs__buf ops[6], *out;
    gs__ra2a_geom g;
    gs__ra2a_src src;
    int64_t *meta, id = st->ex->partition_id;
    int k, identity;
    char msg[512];
    gs_result r;
    bool ok;
    for (k = 0; k < 6; k++) ops[k] = *gs__ip_opbuf(st, v, k);
    if (!(out = gs__ip_new_out(st, v, 0))) return GS_ERR_OUT_OF_MEMORY;
    if (st->ex->collective) {
        r = st->ex->collective(st->ex, v, ops, out);
        if (r && r != GS__PENDING && st->ctx->err == GS_OK)
            gs__err(st->ctx, r, "%s %s: the collective failed", gs_op_name(v->op), v->name);
        return r;
    }
    if ((r = gs__ip_collective_local(st, v, &identity)) != GS_OK) return r;
    gs__ra2a_geom_of(v, &g);
    if (g.M * g.row_bytes > 0) memcpy(out->data, ops[1].data, (size_t)(g.M * g.row_bytes));
    if (!(meta = (int64_t *)gs__malloc(st->ctx, sizeof(int64_t) * (size_t)(4 * g.K + 1)))) return GS_ERR_OUT_OF_MEMORY;
    gs__ra2a_meta(ops, g.K, meta);
    src.in = (const char *)ops[0].data;
    src.meta = meta;
    ok = gs__ra2a_receive(v, &g, 1, 0, gs__ip_ra2a_self, &src, &id, (char *)out->data, msg, sizeof msg);
    gs__free(st->ctx, meta);
    return ok ? GS_OK : gs__err(st->ctx, GS_ERR_INVALID_ARG, "%s", msg);
}

/* ---------------------------------------------------------------------------------------------------------
   One instruction
   ------------------------------------------------------------------------------------------------------- */
/* A parameter's slots take the caller's buffers. */
GS__FN gs_result gs__ip_eval_param(gs__ip_st *st, gs_value *v) {
    gs_ctx *ctx = st->ctx;
    int j;
    int64_t p = v->index, base;
    if (p < 0 || p >= st->n_params)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "parameter %s: number %lld has no input", v->name, (long long)p);
    base = st->param_first[p];
    for (j = 0; j < gs__ip_nslots(v); j++) {
        int64_t s = st->first[v->id] + j;
        const gs__buf *pb = &st->params[base + j];
        if (!gs_shape_equal(&pb->shape, gs__ip_slot_shape(v, j)) ||
            (!pb->data && gs__numel(&pb->shape) > 0))
            return gs__err(ctx, GS_ERR_SHAPE, "parameter %s: the input buffer does not have the parameter's shape",
                           v->name);
        st->slots[s].buf = *pb;
        st->slots[s].blk = s;
        st->refs[s] = 1;
        st->bstate[s] = GS__IP_BLK_EXTERNAL;
    }
    return GS_OK;
}

/* Values that share their operand's buffer (tuple, get-tuple-element, reshape, copy, annotations, a convert to
   the same type); *done is false for any other op. */
GS__FN gs_result gs__ip_eval_alias(gs__ip_st *st, gs_value *v, bool *done) {
    gs_ctx *ctx = st->ctx;
    int k;
    *done = true;
    switch (v->op) {
    case GS_OP_TUPLE: {   /* the operands' leaves, in order */
        int j = 0, e;
        for (k = 0; k < v->n_operands; k++)
            for (e = 0; e < gs__ip_nslots(v->operands[k]); e++, j++) {
                if (j >= gs__ip_nslots(v)) return gs__err(ctx, GS_ERR_SHAPE, "tuple %s: element count mismatch", v->name);
                gs__ip_alias(st, v, j, st->first[v->operands[k]->id] + e);
            }
        if (j != gs__ip_nslots(v)) return gs__err(ctx, GS_ERR_SHAPE, "tuple %s: element count mismatch", v->name);
        return GS_OK;
    }
    case GS_OP_GET_TUPLE_ELEMENT: {   /* the leaves of element index */
        const gs_value *t = v->operands[0];
        int first, n, node;
        if (t->shape.dtype != GS_TUPLE || !gs__tuple_child(t, v->index, &first, &n, &node) || n != gs__ip_nslots(v))
            return gs__err(ctx, GS_ERR_SHAPE, "get-tuple-element %s: index %lld out of range", v->name,
                           (long long)v->index);
        for (k = 0; k < n; k++) gs__ip_alias(st, v, k, st->first[t->id] + first + k);
        return GS_OK;
    }
    case GS_OP_RESHAPE: case GS_OP_COPY: case GS_OP_ANNOTATE: {
        const gs__buf *x = gs__ip_opbuf(st, v, 0);
        if (x->shape.dtype != v->shape.dtype || gs__numel(&x->shape) != gs__numel(&v->shape))
            return gs__err(ctx, GS_ERR_SHAPE, "%s %s: element count or dtype differs", gs_op_name(v->op), v->name);
        gs__ip_alias(st, v, 0, st->first[v->operands[0]->id]);
        return GS_OK;
    }
    case GS_OP_CONVERT:
        if (gs__ip_opbuf(st, v, 0)->shape.dtype == v->shape.dtype) {
            gs__ip_alias(st, v, 0, st->first[v->operands[0]->id]);
            return GS_OK;
        }
        break;
    default:
        break;
    }
    *done = false;
    return GS_OK;
}

/* sort and top-k: tuple-valued kernels */
GS__FN gs_result gs__ip_eval_sort(gs__ip_st *st, gs_value *v) {
    gs_ctx *ctx = st->ctx;
    int j, k;
    gs__buf *outs[64];
    const gs__buf *xs[64];
    int n_out = gs__ip_nslots(v);
    int nx = v->op == GS_OP_SORT ? v->n_operands : 1;
    if (nx > 64)
        return gs__err(ctx, GS_ERR_UNSUPPORTED, "sort %s: more than 64 operands are not supported", v->name);
    if (nx < 1 || (v->op == GS_OP_SORT && n_out != nx) || (v->op == GS_OP_TOPK && n_out != 2))
        return gs__err(ctx, GS_ERR_SHAPE, "%s %s: bad result arity", gs_op_name(v->op), v->name);
    for (k = 0; k < nx; k++) {
        xs[k] = gs__ip_opbuf(st, v, k);
        if (gs__numel(&xs[k]->shape) != gs__numel(&xs[0]->shape) || xs[k]->shape.rank != xs[0]->shape.rank)
            return gs__err(ctx, GS_ERR_SHAPE, "sort %s: operands differ in shape", v->name);
    }
    for (j = 0; j < n_out; j++) {
        outs[j] = gs__ip_new_out(st, v, j);
        if (!outs[j]) return GS_ERR_OUT_OF_MEMORY;
    }
    if (v->op == GS_OP_SORT) {
        if (v->dim < 0 || v->dim >= xs[0]->shape.rank)
            return gs__err(ctx, GS_ERR_SHAPE, "sort %s: bad dim", v->name);
        for (j = 0; j < nx; j++)
            if (!gs_shape_equal(&outs[j]->shape, &xs[j]->shape))
                return gs__err(ctx, GS_ERR_SHAPE, "sort %s: result shape differs", v->name);
        return gs__ip_sort_lines(st->ex, v, nx, xs, v->dim, v->flag, xs[0]->shape.rank ? xs[0]->shape.dims[v->dim] : 0,
                              outs, NULL);
    } else {
        int r = xs[0]->shape.rank;
        if (r < 1 || outs[0]->shape.rank != r || outs[1]->shape.dtype != GS_S32 ||
            outs[0]->shape.dtype != xs[0]->shape.dtype || outs[0]->shape.dims[r - 1] != v->dim ||
            gs__numel(&outs[1]->shape) != gs__numel(&outs[0]->shape) || v->dim < 0)
            return gs__err(ctx, GS_ERR_SHAPE, "topk %s: result shapes do not fit", v->name);
        return gs__ip_sort_lines(st->ex, v, 1, xs, r - 1, v->flag, v->dim, outs, outs[1]);
    }
}

/* An array-valued op into its freshly allocated result buffer. */
GS__FN gs_result gs__ip_custom_reduction(gs__ip_st *st, gs_value *v, gs__buf *out);
GS__FN gs_result gs__ip_eval_array(gs__ip_st *st, gs_value *v, gs__buf *out) {
    gs_ctx *ctx = st->ctx;
    int k;
#define GS__IN(k) gs__ip_opbuf(st, v, k)
    if (v->reduce == GS_REDUCE_CUSTOM && (v->op == GS_OP_REDUCE || v->op == GS_OP_REDUCE_WINDOW || v->op == GS_OP_SCATTER))
        return gs__ip_custom_reduction(st, v, out);
    switch (v->op) {
    case GS_OP_CONSTANT: return gs__ip_constant(ctx, v, out);
    case GS_OP_IOTA: return gs__ip_iota(ctx, v, out);
    case GS_OP_PARTITION_ID:
        if (out->shape.dtype != GS_U32 || out->shape.rank != 0)
            return gs__err(ctx, GS_ERR_SHAPE, "partition-id %s: must be u32[]", v->name);
        ((uint32_t *)out->data)[0] = (uint32_t)st->ex->partition_id;
        return GS_OK;
    case GS_OP_BROADCAST: return gs__ip_broadcast(ctx, v, GS__IN(0), out);
    case GS_OP_TRANSPOSE: return gs__ip_transpose(ctx, v, GS__IN(0), out);
    case GS_OP_SLICE: return gs__ip_slice(ctx, v, GS__IN(0), out);
    case GS_OP_DYNAMIC_SLICE: return gs__ip_dynamic_slice(st, v, out);
    case GS_OP_DYNAMIC_UPDATE_SLICE: return gs__ip_dynamic_update_slice(st, v, out);
    case GS_OP_PAD: return gs__ip_pad(ctx, v, GS__IN(0), GS__IN(1), out);
    case GS_OP_CONCATENATE: return gs__ip_concatenate(st, v, out);
    case GS_OP_REVERSE: return gs__ip_reverse(ctx, v, GS__IN(0), out);
    case GS_OP_CONVERT: return gs__ip_convert(ctx, v, GS__IN(0), out);
    case GS_OP_NEGATE: case GS_OP_ABS: case GS_OP_EXP: case GS_OP_LOG: case GS_OP_TANH: case GS_OP_LOGISTIC:
    case GS_OP_SQRT: case GS_OP_RSQRT: case GS_OP_FLOOR: case GS_OP_CEIL: case GS_OP_SIGN: case GS_OP_NOT:
        return gs__ip_unary(ctx, v, GS__IN(0), out);
    case GS_OP_ADD: case GS_OP_SUBTRACT: case GS_OP_MULTIPLY: case GS_OP_DIVIDE: case GS_OP_REMAINDER:
    case GS_OP_MAXIMUM: case GS_OP_MINIMUM: case GS_OP_POWER: case GS_OP_AND: case GS_OP_OR: case GS_OP_XOR:
        return gs__ip_binary(ctx, v, GS__IN(0), GS__IN(1), out);
    case GS_OP_COMPARE: return gs__ip_compare(ctx, v, GS__IN(0), GS__IN(1), out);
    case GS_OP_SELECT: return gs__ip_select(ctx, v, GS__IN(0), GS__IN(1), GS__IN(2), out);
    case GS_OP_CLAMP: return gs__ip_clamp(ctx, v, GS__IN(0), GS__IN(1), GS__IN(2), out);
    case GS_OP_REDUCE: return gs__ip_reduce(ctx, v, GS__IN(0), GS__IN(1), out, NULL);
    case GS_OP_ARGMAX: case GS_OP_ARGMIN: return gs__ip_argminmax(ctx, v, GS__IN(0), out);
    case GS_OP_DOT: return gs__ip_dot(ctx, v, GS__IN(0), GS__IN(1), out);
    case GS_OP_RAGGED_DOT: return gs__ip_ragged_dot(ctx, v, GS__IN(0), GS__IN(1), GS__IN(2), out);
    case GS_OP_CONVOLUTION:
        if (!v->conv) return gs__err(ctx, GS_ERR_SHAPE, "convolution %s: no configuration", v->name);
        return gs__k_convolution(ctx, v, GS__IN(0), GS__IN(1), out);
    case GS_OP_REDUCE_WINDOW:
        if (!v->window) return gs__err(ctx, GS_ERR_SHAPE, "reduce-window %s: no window", v->name);
        return gs__k_reduce_window(ctx, v, GS__IN(0), GS__IN(1), out);
    case GS_OP_GATHER: return gs__ip_gather(ctx, v, GS__IN(0), GS__IN(1), out);
    case GS_OP_SCATTER: return gs__ip_scatter(ctx, v, GS__IN(0), GS__IN(1), GS__IN(2), out, NULL);
    case GS_OP_CUMSUM: case GS_OP_CUMPROD: case GS_OP_CUMMAX: case GS_OP_CUMMIN:
        return gs__ip_cumulative(ctx, v, GS__IN(0), out);
    case GS_OP_RNG: {
        int64_t offs[GS_MAX_RANK];
        if (v->rng_full) {
            if (v->n_operands != 2 + out->shape.rank)
                return gs__err(ctx, GS_ERR_SHAPE, "rng %s: needs one offset per result dim", v->name);
            for (k = 0; k < out->shape.rank; k++) {
                const gs__buf *b = GS__IN(2 + k);
                if (gs__numel(&b->shape) != 1 || !gs__is_int(b->shape.dtype))
                    return gs__err(ctx, GS_ERR_SHAPE, "rng %s: offset %d is not an integer scalar", v->name, k);
                offs[k] = gs__ip_get_index(b, 0);
            }
        }
        return gs__ip_rng(ctx, v, GS__IN(0), GS__IN(1), v->rng_full ? offs : NULL, out);
    }
    case GS_OP_REPLICA_ID:   /* one replica */
        if (out->shape.dtype != GS_U32 || out->shape.rank != 0)
            return gs__err(ctx, GS_ERR_SHAPE, "replica-id %s: must be u32[]", v->name);
        ((uint32_t *)out->data)[0] = 0;
        return GS_OK;
    case GS_OP_SINE: case GS_OP_COSINE: case GS_OP_TAN: case GS_OP_EXPM1: case GS_OP_LOG1P: case GS_OP_CBRT:
    case GS_OP_ERF: case GS_OP_IS_FINITE: case GS_OP_POPCNT: case GS_OP_CLZ: case GS_OP_REAL: case GS_OP_IMAG:
    case GS_OP_REDUCE_PRECISION:
        return gs__ip_unary_ext(ctx, v, GS__IN(0), out);
    case GS_OP_ATAN2: case GS_OP_SHIFT_LEFT: case GS_OP_SHIFT_RIGHT_LOGICAL: case GS_OP_SHIFT_RIGHT_ARITHMETIC:
    case GS_OP_COMPLEX:
        return gs__ip_binary_ext(ctx, v, GS__IN(0), GS__IN(1), out);
    case GS_OP_BITCAST_CONVERT: return gs__ip_bitcast_convert(ctx, v, GS__IN(0), out);
    case GS_OP_CHOLESKY: return gs__ip_linalg(ctx, v, GS__IN(0), NULL, out);
    case GS_OP_FFT: return gs__ip_fft(ctx, v, GS__IN(0), out);
    case GS_OP_SELECT_AND_SCATTER: return gs__ip_select_and_scatter(st, v, out);
    case GS_OP_TRIANGULAR_SOLVE: return gs__ip_linalg(ctx, v, GS__IN(0), GS__IN(1), out);
    case GS_OP_TO_MANUAL: case GS_OP_TO_FULL: {
        /* one device holds the whole array: its block is all of it. A smaller block is one device's part of a
           region that runs on every device, which one evaluation cannot stand for (taking device 0's block
           and zeros elsewhere gave wrong values) */
        const gs__buf *x = GS__IN(0);
        char a[96], b[96];
        if (!gs_shape_equal(&x->shape, &out->shape))
            return gs__err(ctx, GS_ERR_UNSUPPORTED, "%s %s: the manual region's per-device block is %s of %s; the "
                           "interpreter runs one device, and the region runs on every device with its own block (run "
                           "the program on devices: gshard run --devices D, whose --check reference runs each manual "
                           "region once per device)", gs_op_name(v->op), v->name,
                           gs__shape_str(v->op == GS_OP_TO_MANUAL ? &out->shape : &x->shape, a, sizeof a),
                           gs__shape_str(v->op == GS_OP_TO_MANUAL ? &x->shape : &out->shape, b, sizeof b));
        memcpy(out->data, x->data, (size_t)gs__numel(&out->shape) * gs__compute_size(out->shape.dtype));
        return GS_OK;
    }
    default:
        return gs__err(ctx, GS_ERR_UNSUPPORTED, "%s %s: the interpreter does not support this op",
                       gs_op_name(v->op), v->name);
    }
#undef GS__IN
}

GS__FN gs_result gs__ip_eval_value(gs__ip_st *st, gs_value *v) {
    gs_ctx *ctx = st->ctx;
    gs__buf *out = NULL;
    gs_result r;
    bool done;
    int k;
    for (k = 0; k < v->n_operands; k++) {
        const gs_value *o = v->operands[k];
        if (!o) return gs__err(ctx, GS_ERR_INVALID_ARG, "%s %s: missing operand %d", gs_op_name(v->op), v->name, k);
        if (o->shape.dtype == GS_TUPLE && v->op != GS_OP_GET_TUPLE_ELEMENT && v->op != GS_OP_WHILE && v->op != GS_OP_TUPLE &&
            v->op != GS_OP_CONDITIONAL)
            return gs__err(ctx, GS_ERR_SHAPE, "%s %s: operand %d is a tuple", gs_op_name(v->op), v->name, k);
    }
    switch (v->op) {
    case GS_OP_PARAMETER: return gs__ip_eval_param(st, v);
    case GS_OP_ALL_REDUCE: case GS_OP_ALL_GATHER: case GS_OP_REDUCE_SCATTER: case GS_OP_ALL_TO_ALL:
    case GS_OP_COLLECTIVE_PERMUTE:
        return gs__ip_eval_collective(st, v);
    case GS_OP_RAGGED_ALL_TO_ALL: return gs__ip_eval_ragged(st, v);
    case GS_OP_WHILE: case GS_OP_CONDITIONAL:   /* the stepper runs them (gs__ev_loop_start, gs__ev_branch_start) */
        return gs__err(ctx, GS_ERR_INVALID_ARG, "%s %s: evaluated outside the stepper", gs_op_name(v->op), v->name);
    case GS_OP_OPAQUE:
        if (v->target)
            return gs__err(ctx, GS_ERR_UNSUPPORTED, "custom-call %s: target \"%s\" is opaque to gshard.h (read and printed, never evaluated)",
                           v->name, v->target);
        return gs__err(ctx, GS_ERR_UNSUPPORTED, "%s %s: cannot run here (read and printed only)", v->opaque ? v->opaque : "op", v->name);
    case GS_OP_SORT: case GS_OP_TOPK: return gs__ip_eval_sort(st, v);
    case GS_OP_RNG_BIT_GENERATOR: {
        gs__buf *ns, *bits, tmp;
        uint64_t scratch[3];
        if (v->flag) {   /* bits alone: the new state goes to scratch */
            const gs__buf *sb = gs__ip_opbuf(st, v, 0);
            if (gs__numel(&sb->shape) > 3) return gs__err(ctx, GS_ERR_SHAPE, "rng-bit-generator %s: bad state", v->name);
            if (!(bits = gs__ip_new_out(st, v, 0))) return GS_ERR_OUT_OF_MEMORY;
            tmp.shape = sb->shape;
            tmp.data = scratch;
            return gs__ip_rng_bits(ctx, v, sb, &tmp, bits);
        }
        ns = gs__ip_new_out(st, v, 0);
        bits = ns ? gs__ip_new_out(st, v, 1) : NULL;
        if (!bits) return GS_ERR_OUT_OF_MEMORY;
        return gs__ip_rng_bits(ctx, v, gs__ip_opbuf(st, v, 0), ns, bits);
    }
    case GS_OP_BATCH_NORM_TRAINING: case GS_OP_BATCH_NORM_GRAD: case GS_OP_BATCH_NORM_INFERENCE: {
        const gs__buf *in[5];
        gs__buf *outs[3];
        int nout = v->op == GS_OP_BATCH_NORM_INFERENCE ? 1 : 3;
        for (k = 0; k < v->n_operands && k < 5; k++) in[k] = gs__ip_opbuf(st, v, k);
        for (k = 0; k < nout; k++)
            if (!(outs[k] = gs__ip_new_out(st, v, k))) return GS_ERR_OUT_OF_MEMORY;
        return gs__ip_batch_norm(ctx, v, in, outs);
    }
    default: break;
    }
    r = gs__ip_eval_alias(st, v, &done);
    if (done) return r;
    if (v->shape.dtype == GS_TUPLE)
        return gs__err(ctx, GS_ERR_UNSUPPORTED, "%s %s: tuple result not supported", gs_op_name(v->op), v->name);
    out = gs__ip_new_out(st, v, 0);
    if (!out) return GS_ERR_OUT_OF_MEMORY;
    return gs__ip_eval_array(st, v, out);
}

/* ---------------------------------------------------------------------------------------------------------
   Graphs: the state of one graph's evaluation (slots, liveness), and how its results are handed over
   ------------------------------------------------------------------------------------------------------- */
GS__FN void gs__ip_st_free(gs__ip_st *st) {
    int64_t s;
    gs_ctx *ctx = st->ctx;
    if (!ctx) return;
    if (st->bstate)
        for (s = 0; s < st->n_slots; s++)
            if (st->bstate[s] == GS__IP_BLK_OWNED) {
                gs__ip_count(st->ex, &st->slots[s].buf.shape, -1);
                gs__free(ctx, st->slots[s].buf.data);
            }
    gs__free(ctx, st->first);
    gs__free(ctx, st->last_use);
    gs__free(ctx, st->live);
    gs__free(ctx, st->slots);
    gs__free(ctx, st->refs);
    gs__free(ctx, st->bstate);
    gs__free(ctx, st->param_first);
    memset(st, 0, sizeof *st);
}

/* Sets up the evaluation of g: slots, what the root depends on, where each value is read for the last time.
   On failure st holds nothing (it is freed). */
GS__FN gs_result gs__ip_st_init(gs__ip_st *st, gs__exec *ex, gs_graph *g, const gs__buf *params) {
    gs_ctx *ctx = ex->ctx;
    gs_value *root;
    int i, k, n;
    int64_t s, total = 0;
    gs_result r = GS_OK;
    memset(st, 0, sizeof *st);
    if (!g) return gs__err(ctx, GS_ERR_INVALID_ARG, "eval: no graph");
    root = g->root;
    if (!root || root->graph != g) return gs__err(ctx, GS_ERR_INVALID_ARG, "eval %s: the graph has no root", g->name);
    st->ex = ex;
    st->ctx = ctx;
    st->g = g;
    st->params = params;
    n = (int)stbds_arrlen(g->values);
    st->n_values = n;
    st->n_params = (int)stbds_arrlen(g->params);
    st->first = (int64_t *)gs__malloc(ctx, (size_t)(n + 1) * sizeof(int64_t));
    st->last_use = (int *)gs__malloc(ctx, (size_t)(n + 1) * sizeof(int));
    st->live = (uint8_t *)gs__malloc(ctx, (size_t)(n + 1));
    st->param_first = (int64_t *)gs__malloc(ctx, (size_t)(st->n_params + 1) * sizeof(int64_t));
    if (!st->first || !st->last_use || !st->live || !st->param_first) {
        r = GS_ERR_OUT_OF_MEMORY;
        goto fail;
    }
    for (i = 0; i < st->n_params; i++) {
        const gs_value *p = g->params[i];
        if (!p) {
            r = gs__err(ctx, GS_ERR_INVALID_ARG, "eval %s: parameter %d is missing", g->name, i);
            goto fail;
        }
        st->param_first[i] = total;
        total += gs__ip_nslots(p);
    }
    if (total > 0 && !params) {
        r = gs__err(ctx, GS_ERR_INVALID_ARG, "eval %s: no parameter buffers", g->name);
        goto fail;
    }
    total = 0;
    for (i = 0; i < n; i++) {
        gs_value *v = g->values[i];
        if (v->id != i || v->graph != g) {
            r = gs__err(ctx, GS_ERR_INVALID_ARG, "eval %s: instruction %d is out of place", g->name, i);
            goto fail;
        }
        st->first[i] = total;
        total += gs__ip_nslots(v);
        st->live[i] = 0;
        st->last_use[i] = -1;
    }
    st->first[n] = total;
    st->n_slots = total;
    st->slots = (gs__ip_slot *)gs__malloc(ctx, (size_t)(total + 1) * sizeof(gs__ip_slot));
    st->refs = (int *)gs__malloc(ctx, (size_t)(total + 1) * sizeof(int));
    st->bstate = (uint8_t *)gs__malloc(ctx, (size_t)(total + 1));
    if (!st->slots || !st->refs || !st->bstate) {
        if (st->bstate) memset(st->bstate, GS__IP_BLK_NONE, (size_t)(total + 1));   /* gs__ip_st_free reads it */
        r = GS_ERR_OUT_OF_MEMORY;
        goto fail;
    }
    for (s = 0; s < total; s++) {
        memset(&st->slots[s], 0, sizeof st->slots[s]);
        st->slots[s].blk = -1;
        st->refs[s] = 0;
        st->bstate[s] = GS__IP_BLK_NONE;
    }
    st->live[root->id] = 1;
    for (i = n - 1; i >= 0; i--) {
        gs_value *v = g->values[i];
        if (!st->live[i]) continue;
        for (k = 0; k < v->n_operands; k++) {
            const gs_value *o = v->operands[k];
            if (!o || o->graph != g || o->id >= i) {
                r = gs__err(ctx, GS_ERR_INVALID_ARG, "eval %s: %s reads a value that is not before it", g->name,
                            v->name);
                goto fail;
            }
            st->live[o->id] = 1;
        }
    }
    for (i = 0; i < n; i++) {
        gs_value *v = g->values[i];
        if (!st->live[i]) continue;
        for (k = 0; k < v->n_operands; k++) st->last_use[v->operands[k]->id] = i;
    }
    st->last_use[root->id] = INT_MAX;
    return GS_OK;
fail:
    gs__ip_st_free(st);
    return r;
}

/* Releases the operands of instruction i whose last reader it is. */
GS__FN void gs__ip_after(gs__ip_st *st, int i) {
    const gs_value *v = st->g->values[i];
    int k;
    for (k = 0; k < v->n_operands; k++) {
        const gs_value *o = v->operands[k];
        if (st->last_use[o->id] == i) {
            gs__ip_release(st, o);
            st->last_use[o->id] = -2;   /* released (an operand may appear twice) */
        }
    }
}

/* Hands the root's buffers over to results: a buffer that is not ours (a parameter) or that an earlier result
   already took is copied. Copies are made first so that a failure leaves nothing half handed over. */
GS__FN gs_result gs__ip_finish(gs__ip_st *st, gs__buf *results) {
    gs_ctx *ctx = st->ctx;
    const gs_value *root = st->g->root;
    int k, n_out = gs__ip_nslots(root);
    uint8_t *took = (uint8_t *)gs__malloc(ctx, (size_t)n_out + 1);
    gs_result r = GS_OK;
    if (!took) return GS_ERR_OUT_OF_MEMORY;
    for (k = 0; k < n_out; k++) {
        gs__ip_slot *sl = &st->slots[st->first[root->id] + k];
        int64_t b = sl->blk;
        results[k].shape = sl->buf.shape;
        results[k].data = NULL;
        took[k] = 0;
        if (b >= 0 && st->bstate[b] == GS__IP_BLK_OWNED) {
            st->bstate[b] = GS__IP_BLK_TAKEN;
            took[k] = 1;
        }
    }
    for (k = 0; k < n_out && r == GS_OK; k++) {
        gs__ip_slot *sl = &st->slots[st->first[root->id] + k];
        size_t bytes = (size_t)gs__numel(&sl->buf.shape) * gs__compute_size(sl->buf.shape.dtype);
        if (took[k]) continue;
        results[k].data = gs__malloc(ctx, bytes);
        if (!results[k].data) {
            r = GS_ERR_OUT_OF_MEMORY;
        } else {
            gs__ip_count(st->ex, &sl->buf.shape, 1);
            if (bytes) memcpy(results[k].data, sl->buf.data, bytes);
        }
    }
    for (k = 0; k < n_out; k++) {
        gs__ip_slot *sl = &st->slots[st->first[root->id] + k];
        if (r) {
            if (!took[k] && results[k].data) {
                gs__ip_count(st->ex, &sl->buf.shape, -1);
                gs__free(ctx, results[k].data);
            } else if (took[k]) {
                st->bstate[sl->blk] = GS__IP_BLK_OWNED;   /* freed by gs__ip_st_free */
            }
            results[k].data = NULL;
        } else if (took[k]) {
            results[k].data = sl->buf.data;
            st->bstate[sl->blk] = GS__IP_BLK_GONE;
        }
    }
    gs__free(ctx, took);
    return r;
}

/* A called scalar computation (a sort comparator, a reducer) set up once and run many times: every value is a
   rank-0 array with a fixed 16-byte cell, so a call allocates nothing; constants are evaluated once. */
GS__FN void gs__ip_fn_free(gs__ip_fn *f) {
    if (!f->st.ctx) return;
    if (f->st.bstate) memset(f->st.bstate, GS__IP_BLK_NONE, (size_t)f->st.n_slots);   /* the cells are not theirs */
    gs__free(f->st.ctx, f->cells);
    gs__free(f->st.ctx, f->pbufs);
    gs__ip_st_free(&f->st);
    memset(f, 0, sizeof *f);
}

GS__FN gs_result gs__ip_fn_init(gs__ip_fn *f, gs__exec *ex, gs_graph *g) {
    gs_ctx *ctx = ex->ctx;
    int i, np = g ? (int)stbds_arrlen(g->params) : 0;
    int64_t s;
    gs_result r;
    memset(f, 0, sizeof *f);
    f->pbufs = (gs__buf *)gs__malloc(ctx, (size_t)(np + 1) * sizeof(gs__buf));
    if (!f->pbufs) return GS_ERR_OUT_OF_MEMORY;
    memset(f->pbufs, 0, (size_t)(np + 1) * sizeof(gs__buf));
    r = gs__ip_st_init(&f->st, ex, g, f->pbufs);
    if (r) {
        gs__free(ctx, f->pbufs);
        f->pbufs = NULL;
        return r;
    }
    f->cells = (double *)gs__malloc(ctx, (size_t)(2 * f->st.n_slots + 2) * sizeof(double));
    if (!f->cells) {
        gs__ip_fn_free(f);
        return GS_ERR_OUT_OF_MEMORY;
    }
    memset(f->cells, 0, (size_t)(2 * f->st.n_slots + 2) * sizeof(double));
    for (i = 0; i < f->st.n_values; i++) {
        gs_value *v = g->values[i];
        bool tuple_root = v == g->root && v->op == GS_OP_TUPLE;
        int j;
        if (!f->st.live[i]) continue;
        if ((v->shape.dtype == GS_TUPLE && !tuple_root) || (v->shape.dtype != GS_TUPLE && v->shape.rank != 0) ||
            v->op == GS_OP_GET_TUPLE_ELEMENT) {
            r = gs__err(ctx, GS_ERR_UNSUPPORTED, "computation %s: %s %s is not a scalar (a called scalar computation "
                        "works on scalars only)", g->name, gs_op_name(v->op), v->name);
            break;
        }
        for (j = 0; j < gs__ip_nslots(v); j++) {
            s = f->st.first[i] + j;
            f->st.slots[s].buf.shape = *gs__ip_slot_shape(v, j);
            f->st.slots[s].buf.data = &f->cells[2 * s];
            f->st.slots[s].blk = s;
            f->st.bstate[s] = GS__IP_BLK_EXTERNAL;
        }
        if (v->op == GS_OP_PARAMETER) f->pbufs[v->index].shape = v->shape;
        if (v->op == GS_OP_CONSTANT) r = gs__ip_eval_array(&f->st, v, &f->st.slots[f->st.first[i]].buf);
        if (r) break;
    }
    if (r) gs__ip_fn_free(f);
    return r;
}

/* args[p]: parameter p's element in compute format; outs[k]: where the root's leaf k goes */
GS__FN gs_result gs__ip_fn_call(gs__ip_fn *f, const void *const *args, void *const *outs) {
    gs__ip_st *st = &f->st;
    int i, k;
    gs_result r = GS_OK;
    for (i = 0; i < st->n_values && r == GS_OK; i++) {
        gs_value *v = st->g->values[i];
        gs__buf *out = &st->slots[st->first[i]].buf;
        if (!st->live[i] || v->op == GS_OP_CONSTANT) continue;
        switch (v->op) {
        case GS_OP_PARAMETER: memcpy(out->data, args[v->index], gs__compute_size(v->shape.dtype)); break;
        case GS_OP_TUPLE:
            for (k = 0; k < v->n_operands; k++) memcpy(st->slots[st->first[i] + k].buf.data, gs__ip_opbuf(st, v, k)->data, 16);
            break;
        case GS_OP_RESHAPE: case GS_OP_COPY: case GS_OP_ANNOTATE: memcpy(out->data, gs__ip_opbuf(st, v, 0)->data, 16); break;
        default: r = gs__ip_eval_array(st, v, out); break;
        }
    }
    for (k = 0; r == GS_OK && k < gs__ip_nslots(st->g->root); k++) {
        const gs__buf *b = &st->slots[st->first[st->g->root->id] + k].buf;
        memcpy(outs[k], b->data, gs__compute_size(b->shape.dtype));
    }
    return r;
}

GS__FN gs_result gs__reducer_new(gs__exec *ex, gs_graph *reducer, gs__ip_fn **out) {
    gs__ip_fn *f = (gs__ip_fn *)gs__malloc(ex->ctx, sizeof *f);
    gs_result r;
    *out = NULL;
    if (!f) return gs__err(ex->ctx, GS_ERR_OUT_OF_MEMORY, "reducer '%s': out of memory", reducer->name);
    if ((r = gs__ip_fn_init(f, ex, reducer)) != GS_OK) {
        gs__free(ex->ctx, f);
        return r;
    }
    *out = f;
    return GS_OK;
}

GS__FN void gs__reducer_free(gs_ctx *ctx, gs__ip_fn *f) {
    if (!f) return;
    gs__ip_fn_free(f);
    gs__free(ctx, f);
}

GS__FN gs_result gs__reducer_apply(gs__ip_fn *f, gs_dtype t, void *d, int64_t di, const void *a, int64_t ai,
                                   const void *b, int64_t bi) {
    int64_t es = (int64_t)gs__compute_size(t);
    const void *args[2];
    void *outs[1];
    args[0] = (const char *)a + ai * es;
    args[1] = (const char *)b + bi * es;
    outs[0] = (char *)d + di * es;   /* written after both arguments are read */
    return gs__ip_fn_call(f, args, outs);
}

GS__FN gs_result gs__reducer_fold(gs__ip_fn *f, gs_dtype t, void *y, int64_t iy, const void *a, int64_t ia) {
    gs__ip_var *w = f->var;
    int j;
    if (!w) return gs__reducer_apply(f, t, y, iy, y, iy, a, ia);
    for (j = 0; j < w->n; j++) {
        char *acc = j == w->k ? (char *)y : (char *)w->acc[j];
        w->args[j] = w->outs[j] = acc + (size_t)iy * w->es[j];   /* written after every argument is read */
        w->args[w->n + j] = (const char *)w->in[j] + (size_t)ia * w->es[j];
    }
    return gs__ip_fn_call(f, w->args, w->outs);
}

/* reduce-window with a reducer computation: out = init everywhere, then per output element its window positions
   in row-major order, each that lands on an input element (not padding, not a base-dilation hole) folded in:
   the order of gs__k_reduce_window */
GS__FN gs_result gs__ip_reduce_window_fn(gs_ctx *ctx, const gs_value *v, const gs__buf *x, const gs__buf *init,
                                         gs__buf *out, gs__ip_fn *fn) {
    int r = x->shape.rank, d;
    int64_t xst[GS_MAX_RANK], wdims[GS_MAX_RANK], at = 0;
    gs__ip_odo o, w;
    gs_dtype t = x->shape.dtype;
    gs_result res = GS_OK;
    if (!v->window || out->shape.rank != r || out->shape.dtype != t || init->shape.dtype != t)
        return gs__err(ctx, GS_ERR_SHAPE, "reduce-window %s: operand, init and result shapes do not fit", v->name);
    for (d = 0; d < r; d++) {
        const gs_window_dim *wd = &v->window[d];
        if (wd->size < 1 || wd->stride < 1 || wd->base_dilation < 1 || wd->window_dilation < 1 ||
            gs__window_out(wd, x->shape.dims[d]) != out->shape.dims[d])
            return gs__err(ctx, GS_ERR_SHAPE, "reduce-window %s: the window does not give the result's dim %d", v->name, d);
        wdims[d] = v->window[d].size;
    }
    gs__ip_fill(out->data, gs__compute_size(t), gs__numel(&out->shape), init->data);
    if (gs__numel(&out->shape) == 0 || gs__numel(&x->shape) == 0) return GS_OK;
    gs__strides(&x->shape, xst);
    gs__ip_odo_init(&o, r, out->shape.dims, NULL);
    do {
        gs__ip_odo_init(&w, r, wdims, NULL);
        do {
            int64_t pos = 0;
            for (d = 0; d < r; d++) {
                const gs_window_dim *wd = &v->window[d];
                int64_t p = o.idx[d] * wd->stride + w.idx[d] * wd->window_dilation - wd->pad_lo;
                if (p < 0 || p % wd->base_dilation != 0 || p / wd->base_dilation >= x->shape.dims[d]) break;
                pos += p / wd->base_dilation * xst[d];
            }
            if (d == r) res = gs__reducer_fold(fn, t, out->data, at, x->data, pos);
        } while (res == GS_OK && gs__ip_odo_next(&w));
        at++;
    } while (res == GS_OK && gs__ip_odo_next(&o));
    return res;
}

GS__FN void gs__ip_var_free(gs_ctx *ctx, gs__ip_var *w) {
    int j;
    if (!w) return;
    for (j = 0; w->acc && j < w->n; j++) gs__free(ctx, w->acc[j]);
    gs__free(ctx, w->acc);
    gs__free(ctx, (void *)w->in);
    gs__free(ctx, (void *)w->args);
    gs__free(ctx, w->outs);
    gs__free(ctx, w->es);
    gs__free(ctx, w);
}

/* the state of v's variadic reducer: every other component's accumulator starts as its init everywhere (scatter:
   its operand), and its input is its operand (scatter: its updates) */
GS__FN gs_result gs__ip_var_new(gs__ip_st *st, const gs_value *v, const gs__buf *out, gs__ip_var **res) {
    gs_ctx *ctx = st->ctx;
    int n = v->red_n, b = gs__red_base(v), j;
    int64_t no = gs__numel(&out->shape);
    gs__ip_var *w = (gs__ip_var *)gs__malloc(ctx, sizeof *w);
    *res = w;
    if (!w) return gs__err(ctx, GS_ERR_OUT_OF_MEMORY, "%s: out of memory", v->name);
    memset(w, 0, sizeof *w);
    w->n = n;
    w->k = v->red_k;
    w->acc = (void **)gs__malloc(ctx, sizeof(void *) * (size_t)n);
    w->in = (const void **)gs__malloc(ctx, sizeof(void *) * (size_t)n);
    w->args = (const void **)gs__malloc(ctx, sizeof(void *) * (size_t)(2 * n));
    w->outs = (void **)gs__malloc(ctx, sizeof(void *) * (size_t)n);
    w->es = (size_t *)gs__malloc(ctx, sizeof(size_t) * (size_t)n);
    if (!w->acc || !w->in || !w->args || !w->outs || !w->es) return gs__err(ctx, GS_ERR_OUT_OF_MEMORY, "%s: out of memory", v->name);
    memset(w->acc, 0, sizeof(void *) * (size_t)n);
    for (j = 0; j < n; j++) {
        const gs__buf *x = gs__ip_opbuf(st, v, b + j), *i = gs__ip_opbuf(st, v, b + n + j);
        w->es[j] = gs__compute_size(x->shape.dtype);
        w->in[j] = v->op == GS_OP_SCATTER ? i->data : x->data;
        if (j == v->red_k) continue;
        if (!(w->acc[j] = gs__malloc(ctx, w->es[j] * (size_t)(no > 0 ? no : 1))))
            return gs__err(ctx, GS_ERR_OUT_OF_MEMORY, "%s: out of memory", v->name);
        if (v->op == GS_OP_SCATTER) memcpy(w->acc[j], x->data, w->es[j] * (size_t)no);
        else gs__ip_fill(w->acc[j], w->es[j], no, i->data);
    }
    return GS_OK;
}

/* reduce, reduce-window and scatter with a reducer computation (all-reduce and reduce-scatter: the runtime) */
GS__FN gs_result gs__ip_custom_reduction(gs__ip_st *st, gs_value *v, gs__buf *out) {
    gs__ip_fn *fn;
    gs_result r = gs__reducer_new(st->ex, v->reducer, &fn);
    if (r) return gs__err_prefix(st->ctx, "%s %s: reducer '%s': ", gs_op_name(v->op), v->name, v->reducer->name);
    if (v->red_n > 0 && (r = gs__ip_var_new(st, v, out, &fn->var)) != GS_OK) {
        gs__ip_var_free(st->ctx, fn->var);
        gs__reducer_free(st->ctx, fn);
        return r;
    }
    if (v->op == GS_OP_REDUCE) r = gs__ip_reduce(st->ctx, v, gs__ip_opbuf(st, v, 0), gs__ip_opbuf(st, v, 1), out, fn);
    else if (v->op == GS_OP_SCATTER)
        r = gs__ip_scatter(st->ctx, v, gs__ip_opbuf(st, v, 0), gs__ip_opbuf(st, v, 1), gs__ip_opbuf(st, v, 2), out, fn);
    else r = gs__ip_reduce_window_fn(st->ctx, v, gs__ip_opbuf(st, v, 0), gs__ip_opbuf(st, v, 1), out, fn);
    gs__ip_var_free(st->ctx, fn->var);
    fn->var = NULL;
    gs__reducer_free(st->ctx, fn);
    if (r) return gs__err_prefix(st->ctx, "%s %s: reducer '%s': ", gs_op_name(v->op), v->name, v->reducer->name);
    return GS_OK;
}

/* ---------------------------------------------------------------------------------------------------------
   The stepper. A stack of frames, one per graph being evaluated: the entry graph at the bottom, then the
   condition or body of the while loop its current instruction runs, and so on. A frame whose current
   instruction is a while holds the loop state: the current state buffers, the next state (the body's
   results) and the condition's predicate.
   ------------------------------------------------------------------------------------------------------- */

enum { GS__EV_LOOP_NONE = 0, GS__EV_LOOP_COND, GS__EV_LOOP_BODY, GS__EV_BRANCH };

typedef struct gs__ev_frame {
    gs__ip_st st;
    int pc;                   /* the current instruction */
    bool paused;              /* pc is a collective waiting for its result */
    gs__buf *results;         /* where this graph's results go */
    int loop;                 /* GS__EV_LOOP_*: pc is a while loop whose condition or body runs above;
                                 GS__EV_BRANCH: pc is a conditional whose taken branch runs above */
    int n_state;              /* loop state buffers */
    gs__buf *state;           /* 2 * n_state + 1: current state, next state, predicate; a conditional: the branch's
                                 argument buffers (borrowed), then its n_state results */
    bool owned;               /* the current state buffers belong to the loop (else: the init operand's) */
    int64_t iter;             /* completed body iterations */
} gs__ev_frame;

struct gs__ev {
    gs__exec *ex;
    gs__ev_frame *frames;     /* cap entries, depth used; the array grows (frames hold no pointers into it) */
    int depth, cap;
};

GS__FN void gs__ev_free_state(gs__exec *ex, gs__ev_frame *f) {
    int j;
    if (!f->state) return;
    if (f->owned)
        for (j = 0; j < f->n_state; j++) {
            if (f->state[j].data) gs__ip_count(ex, &f->state[j].shape, -1);
            gs__free(ex->ctx, f->state[j].data);
        }
    gs__free(ex->ctx, f->state);
    f->state = NULL;
    f->loop = GS__EV_LOOP_NONE;
    f->owned = false;
}

GS__FN void gs__ev_free(gs__ev *ev) {
    gs_ctx *ctx;
    if (!ev) return;
    ctx = ev->ex->ctx;
    while (ev->depth > 0) {
        gs__ev_frame *f = &ev->frames[--ev->depth];
        gs__ip_st_free(&f->st);
        gs__ev_free_state(ev->ex, f);
    }
    gs__free(ctx, ev->frames);
    gs__free(ctx, ev);
}

/* Pushes a frame evaluating g on params, its results going to results. */
GS__FN gs_result gs__ev_push(gs__ev *ev, gs_graph *g, const gs__buf *params, gs__buf *results) {
    gs__ev_frame *f;
    gs_result r;
    if (ev->depth >= GS__EV_MAX_DEPTH)
        return gs__err(ev->ex->ctx, GS_ERR_UNSUPPORTED, "eval %s: while loops nested more than %d deep",
                       g ? g->name : "?", GS__EV_MAX_DEPTH - 1);
    if (ev->depth == ev->cap) {
        int cap = ev->cap ? 2 * ev->cap : 4;
        gs__ev_frame *nf = (gs__ev_frame *)gs__malloc(ev->ex->ctx, sizeof(gs__ev_frame) * (size_t)cap);
        if (!nf) return GS_ERR_OUT_OF_MEMORY;
        if (ev->depth) memcpy(nf, ev->frames, sizeof(gs__ev_frame) * (size_t)ev->depth);
        gs__free(ev->ex->ctx, ev->frames);
        ev->frames = nf;
        ev->cap = cap;
    }
    f = &ev->frames[ev->depth];
    memset(f, 0, sizeof *f);
    r = gs__ip_st_init(&f->st, ev->ex, g, params);
    if (r) return r;
    f->results = results;
    ev->depth++;
    return GS_OK;
}

GS__FN gs_result gs__ev_new(gs__exec *ex, gs_graph *g, const gs__buf *params, gs__buf *results, gs__ev **out) {
    gs__ev *ev;
    gs_result r;
    *out = NULL;
    if (!ex || !ex->ctx) return GS_ERR_INVALID_ARG;
    ev = (gs__ev *)gs__malloc(ex->ctx, sizeof *ev);
    if (!ev) return GS_ERR_OUT_OF_MEMORY;
    memset(ev, 0, sizeof *ev);
    ev->ex = ex;
    r = gs__ev_push(ev, g, params, results);
    if (r) {
        gs__ev_free(ev);
        return r;
    }
    *out = ev;
    return GS_OK;
}

/* The instruction at f's pc is complete: show it to the observer (entry frame only), release what it was the
   last reader of, move on. */
GS__FN gs_result gs__ev_next(gs__ev *ev, gs__ev_frame *f) {
    if (ev->ex->observe && f == ev->frames) {
        const gs_value *v = f->st.g->values[f->pc];
        int j;
        for (j = 0; j < gs__ip_nslots(v); j++) {
            gs_result r = ev->ex->observe(ev->ex, v, j, &f->st.slots[f->st.first[v->id] + j].buf);
            if (r) return r;
        }
    }
    gs__ip_after(&f->st, f->pc);
    f->pc++;
    return GS_OK;
}

/* Starts the while loop v at the top frame: the state is init's buffers; the condition runs first. */
GS__FN gs_result gs__ev_loop_start(gs__ev *ev, gs__ev_frame *f, const gs_value *v) {
    gs_ctx *ctx = ev->ex->ctx;
    const gs_value *init = v->operands[0];
    int j, n = gs__ip_nslots(v);
    if (!v->cond || !v->body || gs__ip_nslots(init) != n)
        return gs__err(ctx, GS_ERR_SHAPE, "while %s: missing condition or body", v->name);
    if (stbds_arrlen(v->cond->params) != 1 || stbds_arrlen(v->body->params) != 1)
        return gs__err(ctx, GS_ERR_SHAPE, "while %s: condition and body take exactly one parameter", v->name);
    f->state = (gs__buf *)gs__malloc(ctx, (size_t)(2 * n + 1) * sizeof(gs__buf));
    if (!f->state) return GS_ERR_OUT_OF_MEMORY;
    memset(f->state, 0, (size_t)(2 * n + 1) * sizeof(gs__buf));
    f->n_state = n;
    for (j = 0; j < n; j++) f->state[j] = f->st.slots[f->st.first[init->id] + j].buf;
    f->owned = false;
    f->iter = 0;
    f->loop = GS__EV_LOOP_COND;
    return gs__ev_push(ev, v->cond, f->state, f->state + 2 * n);
}

/* Starts the conditional v at the top frame: reads its selector and runs the taken branch alone (pred true:
   branch 0; an s32 index outside [0, n) takes the last branch, as XLA does). */
GS__FN gs_result gs__ev_branch_start(gs__ev *ev, gs__ev_frame *f, const gs_value *v) {
    gs_ctx *ctx = ev->ex->ctx;
    const gs__buf *sel;
    const gs_value *arg;
    int j, k, na, n = gs__ip_nslots(v);
    int64_t idx;
    if (v->n_branches < 1 || v->n_operands != v->n_branches + 1)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "conditional %s: needs a selector and one argument per branch", v->name);
    sel = &f->st.slots[f->st.first[v->operands[0]->id]].buf;
    if (sel->shape.dtype == GS_PRED && gs__numel(&sel->shape) == 1) idx = ((const uint8_t *)sel->data)[0] ? 0 : 1;
    else if (sel->shape.dtype == GS_S32 && gs__numel(&sel->shape) == 1) idx = ((const int32_t *)sel->data)[0];
    else return gs__err(ctx, GS_ERR_SHAPE, "conditional %s: the selector must be pred[] or s32[]", v->name);
    k = idx < 0 || idx >= v->n_branches ? v->n_branches - 1 : (int)idx;
    arg = v->operands[k + 1];
    na = gs__ip_nslots(arg);
    if (!v->branches[k] || stbds_arrlen(v->branches[k]->params) != 1)
        return gs__err(ctx, GS_ERR_SHAPE, "conditional %s: branch %d takes exactly one parameter", v->name, k);
    f->state = (gs__buf *)gs__malloc(ctx, (size_t)(na + n + 1) * sizeof(gs__buf));
    if (!f->state) return GS_ERR_OUT_OF_MEMORY;
    memset(f->state, 0, (size_t)(na + n + 1) * sizeof(gs__buf));
    for (j = 0; j < na; j++) f->state[j] = f->st.slots[f->st.first[arg->id] + j].buf;
    f->n_state = na;   /* borrowed: gs__ev_free_state frees none of them (owned stays false) */
    f->owned = false;
    f->iter = 0;
    f->loop = GS__EV_BRANCH;
    return gs__ev_push(ev, v->branches[k], f->state, f->state + na);
}

/* The taken branch of the conditional at frame f has finished: its results are the conditional's. */
GS__FN gs_result gs__ev_branch_done(gs__ev *ev, gs__ev_frame *f) {
    const gs_value *v = f->st.g->values[f->pc];
    int j, n = gs__ip_nslots(v);
    gs__buf *res = f->state + f->n_state;
    for (j = 0; j < n; j++) {
        if (!gs_shape_equal(&res[j].shape, gs__ip_slot_shape(v, j))) {
            for (j = 0; j < n; j++) {
                gs__ip_count(ev->ex, &res[j].shape, -1);
                gs__free(ev->ex->ctx, res[j].data);
                res[j].data = NULL;
            }
            return gs__err(ev->ex->ctx, GS_ERR_SHAPE, "conditional %s: a branch returns another shape", v->name);
        }
    }
    for (j = 0; j < n; j++) gs__ip_adopt(&f->st, v, j, res[j].data);
    gs__ev_free_state(ev->ex, f);
    return gs__ev_next(ev, f);
}

/* The condition or body of the loop at frame fi has finished: decide what runs next. */
GS__FN gs_result gs__ev_loop_next(gs__ev *ev, int fi) {
    gs__ev_frame *f = &ev->frames[fi];
    gs__exec *ex = ev->ex;
    gs_ctx *ctx = ex->ctx;
    const gs_value *v = f->st.g->values[f->pc];
    int j, n = f->n_state;
    gs__buf *cur = f->state, *next = f->state + n, *pred = f->state + 2 * n;
    if (f->loop == GS__EV_BRANCH) return gs__ev_branch_done(ev, f);
    if (f->loop == GS__EV_LOOP_COND) {
        uint8_t go = (pred->shape.dtype == GS_PRED && gs__numel(&pred->shape) == 1) ? ((uint8_t *)pred->data)[0] : 2;
        gs__ip_count(ex, &pred->shape, -1);
        gs__free(ctx, pred->data);
        pred->data = NULL;
        if (go == 2) return gs__err(ctx, GS_ERR_SHAPE, "while %s: the condition must return pred[]", v->name);
        if (go) {
            for (j = 0; j < n; j++) next[j].data = NULL;
            f->loop = GS__EV_LOOP_BODY;
            return gs__ev_push(ev, v->body, cur, next);
        }
        /* the loop is over: its value is the current state */
        for (j = 0; j < n; j++) {
            if (f->owned) gs__ip_adopt(&f->st, v, j, cur[j].data);
            else gs__ip_alias(&f->st, v, j, f->st.first[v->operands[0]->id] + j);
        }
        f->owned = false;   /* the buffers belong to the while's slots now */
        gs__ev_free_state(ex, f);
        return gs__ev_next(ev, f);
    }
    for (j = 0; j < n; j++) {
        if (!gs_shape_equal(&next[j].shape, gs__ip_slot_shape(v, j))) {
            for (j = 0; j < n; j++) {
                gs__ip_count(ex, &next[j].shape, -1);
                gs__free(ctx, next[j].data);
                next[j].data = NULL;
            }
            return gs__err(ctx, GS_ERR_SHAPE, "while %s: the body changes the state shape", v->name);
        }
    }
    if (f->owned)
        for (j = 0; j < n; j++) {
            gs__ip_count(ex, &cur[j].shape, -1);
            gs__free(ctx, cur[j].data);
        }
    for (j = 0; j < n; j++) {
        cur[j] = next[j];
        next[j].data = NULL;
    }
    f->owned = true;
    f->iter++;
    f->loop = GS__EV_LOOP_COND;
    return gs__ev_push(ev, v->cond, cur, pred);
}

GS__FN gs_result gs__ev_step(gs__ev *ev, int *status) {
    gs__ev_frame *f;
    gs__ip_st *st;
    gs_value *v;
    gs_ctx *ctx = ev->ex->ctx;
    gs_result r;
    *status = GS__EV_RAN;
    if (ev->depth == 0) {
        *status = GS__EV_DONE;
        return GS_OK;
    }
    f = &ev->frames[ev->depth - 1];
    st = &f->st;
    if (f->paused) {   /* the collective's result has been filled in */
        f->paused = false;
        return gs__ev_next(ev, f);
    }
    while (f->pc < st->n_values && !st->live[f->pc]) f->pc++;   /* the root does not need it */
    if (f->pc == st->n_values) {
        r = gs__ip_finish(st, f->results);
        gs__ip_st_free(st);
        ev->depth--;
        if (r) return r;
        if (ev->depth == 0) {
            *status = GS__EV_DONE;
            return GS_OK;
        }
        return gs__ev_loop_next(ev, ev->depth - 1);
    }
    v = st->g->values[f->pc];
    if (v->op == GS_OP_WHILE) {
        if (v->n_operands != 1 || !v->operands[0])
            return gs__err(ctx, GS_ERR_INVALID_ARG, "while %s: needs one operand", v->name);
        r = gs__ev_loop_start(ev, f, v);
    } else if (v->op == GS_OP_CONDITIONAL) {
        r = gs__ev_branch_start(ev, f, v);
    } else {
        r = gs__ip_eval_value(st, v);
        if (r == GS__PENDING) {
            f->paused = true;
            *status = GS__EV_PAUSED;
            return GS_OK;
        }
        if (!r) return gs__ev_next(ev, f);
    }
    if (r && ctx->err == GS_OK) gs__err(ctx, r, "%s %s: evaluation failed", gs_op_name(v->op), v->name);
    return r;
}

GS__FN int gs__ev_loops(const gs__ev *ev, const gs_value **whiles, int64_t *iters, int cap) {
    int i, n = 0;
    for (i = 0; i < ev->depth; i++) {
        const gs__ev_frame *f = &ev->frames[i];
        if (f->loop == GS__EV_LOOP_NONE || f->loop == GS__EV_BRANCH) continue;
        if (n < cap) {
            whiles[n] = f->st.g->values[f->pc];
            iters[n] = f->iter;
        }
        n++;
    }
    return n;
}

GS__FN const gs_value *gs__ev_current(const gs__ev *ev) {
    int i;
    if (!ev) return NULL;
    /* a frame that has run its last instruction is about to return: the place is its caller's (the while),
       not "the end of the program" */
    for (i = ev->depth - 1; i >= 0; i--) {
        const gs__ev_frame *f = &ev->frames[i];
        if (f->pc < f->st.n_values) return f->st.g->values[f->pc];
    }
    return NULL;
}

GS__FN gs_result gs__eval_graph(gs__exec *ex, gs_graph *g, const gs__buf *params, gs__buf *results) {
    gs__ev *ev = NULL;
    int status = GS__EV_RAN;
    gs_result r = gs__ev_new(ex, g, params, results, &ev);
    while (r == GS_OK && status == GS__EV_RAN) r = gs__ev_step(ev, &status);
    if (r == GS_OK && status == GS__EV_PAUSED)
        r = gs__err(ex->ctx, GS_ERR_INVALID_ARG, "eval: a collective hook answered 'pending' to a whole-graph evaluation");
    gs__ev_free(ev);
    return r;
}

/* ---------------------------------------------------------------------------------------------------------
   The public entry point: storage format in and out
   ------------------------------------------------------------------------------------------------------- */
GS_API gs_result gs_eval(gs_graph *g, const void *const *inputs, void *const *outputs) {
    gs_ctx *ctx;
    gs__exec ex;
    gs__buf *in = NULL, *res = NULL;
    uint8_t *owned = NULL;
    int i, j, np, n_out, n_in = 0, k;
    gs_value *root;
    gs_result r;
    if (!g) return GS_ERR_INVALID_ARG;
    ctx = g->ctx;
    root = g->root;
    if (!root) return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_eval %s: the graph has no root", g->name);
    r = gs__verify_once(g);
    if (r) return r;
    np = (int)stbds_arrlen(g->params);
    for (i = 0; i < np; i++) {
        if (!g->params[i]) return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_eval %s: parameter %d is missing", g->name, i);
        n_in += gs__ip_nslots(g->params[i]);
    }
    n_out = gs__ip_nslots(root);
    if (n_in > 0 && !inputs)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_eval %s: inputs is NULL but the graph has %d parameter buffers",
                       g->name, n_in);
    if (n_out > 0 && !outputs)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_eval %s: outputs is NULL but the graph has %d outputs", g->name,
                       n_out);
    for (i = 0, k = 0; i < np; i++) {
        const gs_value *p = g->params[i];
        for (j = 0; j < gs__ip_nslots(p); j++, k++)
            if (!inputs[k] && gs__numel(gs__ip_slot_shape(p, j)) > 0)
                return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_eval %s: input %d (parameter %s) is NULL", g->name, k,
                               p->name);
    }
    for (k = 0; k < n_out; k++)
        if (!outputs[k] && gs__numel(gs__ip_slot_shape(root, k)) > 0)
            return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_eval %s: output %d is NULL", g->name, k);

    in = (gs__buf *)gs__malloc(ctx, (size_t)(n_in + 1) * sizeof(gs__buf));
    owned = (uint8_t *)gs__malloc(ctx, (size_t)(n_in + 1));
    res = (gs__buf *)gs__malloc(ctx, (size_t)(n_out + 1) * sizeof(gs__buf));
    if (owned) memset(owned, 0, (size_t)(n_in + 1)); /* the cleanup below reads it */
    if (!in || !owned || !res) {
        r = GS_ERR_OUT_OF_MEMORY;
        goto done;
    }
    /* storage -> compute: f32/s32/u32 are used in place; bf16 widens to float; pred is normalised to 0/1 */
    for (i = 0, k = 0; i < np; i++) {
        const gs_value *p = g->params[i];
        for (j = 0; j < gs__ip_nslots(p); j++, k++) {
            const gs_shape *sh = gs__ip_slot_shape(p, j);
            int64_t n = gs__numel(sh);
            in[k].shape = *sh;
            in[k].data = (void *)(uintptr_t)inputs[k];
            if (gs__fmt_differs(sh->dtype)) {
                void *d = gs__malloc(ctx, (size_t)n * gs__compute_size(sh->dtype) + 1);
                if (!d) {
                    r = GS_ERR_OUT_OF_MEMORY;
                    goto done;
                }
                gs__to_compute(sh->dtype, d, inputs[k], n);
                in[k].data = d;
                owned[k] = 1;
            }
        }
    }
    memset(&ex, 0, sizeof ex);
    ex.ctx = ctx;
    ex.partition_id = 0;
    ex.num_partitions = 1;
    r = gs__eval_graph(&ex, g, in, res);
    if (r) goto done;
    /* compute -> storage */
    for (k = 0; k < n_out; k++) {
        gs__to_storage(res[k].shape.dtype, outputs[k], res[k].data, gs__numel(&res[k].shape));
        gs__free(ctx, res[k].data);
    }
done:
    if (in && owned)
        for (k = 0; k < n_in; k++)
            if (owned[k]) gs__free(ctx, in[k].data);
    gs__free(ctx, in);
    gs__free(ctx, owned);
    gs__free(ctx, res);
    return r;
}
