/* gs_runtime.c - the SPMD runtime: D emulated devices running one program, the collective engine, scatter and
 * gather of global arrays, poisoned padding, accounting. The public contract is in gs_api_runtime.h.
 *
 * Structure.
 * - A collective plan (gs__cplan) is everything static about one collective on D devices: shapes, expanded
 *   replica groups, each device's group and rank, collective-permute's source of each device. Plans are made
 *   and checked before a run starts (one per collective instruction reachable from the entry graph), so bad
 *   groups or shapes are reported before any thread moves.
 * - The engine (gs__coll_piece) computes a piece of one device's share of a collective, given every device's
 *   operand and result buffer: its own result for all-gather, reduce-scatter, all-to-all and
 *   collective-permute, and the slice r of G (cut at 64-byte lines) of every member's result for all-reduce
 *   (member r reduces its slice of all the inputs, in group order, and writes it into every member's result:
 *   each input is read once and each output written once in total). Every result element has one writer and
 *   its value is the same left fold however the shares are cut, so both modes, any cut into pieces, and the
 *   direct gs_runtime_collective call (which runs the D shares on min(D, processors) workers) give the same
 *   bits. Sums of f32/s32/u32 run as one pass over 64-byte lines of all members at once; large results
 *   (16 MiB or more written in all) use streaming stores.
 * - Each device evaluates the program with a gs__ev (the interpreter's stepper) and its own gs__exec
 *   (partition-id, a private context for its errors, accounting counters). At a collective the interpreter
 *   calls the runtime's hook, which publishes the device's post (what it is at) and buffers and answers
 *   GS__PENDING: the stepper pauses there. The devices are dealt to W workers in contiguous runs (threaded:
 *   W threads of a pool, by default one per device up to the number of processors; lockstep: W = 1, the
 *   calling thread). A worker gives each of its devices a turn in a round (lockstep: one instruction;
 *   threaded: until it pauses, or for a time slice when it computes long, so that the watchdog sees the others
 *   waiting) until every one has reached a rendezvous. Then the rendezvous (gs__rt_rendezvous): the worker
 *   checks that its devices' posts agree, meets the other workers at barrier A, checks the W boundaries
 *   between workers (every worker checks the same ones, so all reach the same verdict before anyone touches
 *   another device's buffers), runs its equal run of the D * S pieces of the collective, and meets them again
 *   at barrier B (after which inputs may be freed and outputs read). A device that finishes the program
 *   posts "done" and takes part in one more rendezvous, so a device that ends while others wait at a
 *   collective is a mismatch, not a hang. With D devices on more threads than processors every barrier round
 *   costs a scheduler round trip; with W <= processors the barrier can spin, so a small collective inside a
 *   program costs about what it costs alone.
 * - A failure is recorded once (the first cause wins: a device's own error, a mismatch, a watchdog timeout),
 *   raises the shared abort flag (which ends every barrier wait and every device's step loop), and is turned
 *   into one message after all devices have stopped.
 */

#include "gs_thread.h"

#define GS__RT_SIG 8            /* enclosing while loops compared at a rendezvous (deeper ones: count only) */
#define GS__RT_BLOCK 4096       /* elements per reduction block (stays in L1/L2 while members are added) */
#define GS__RT_STACK ((size_t)1 << 20)   /* worker thread stack */
#define GS__RT_CHUNK ((size_t)64 << 10)   /* large all-gather: operand bytes copied to every member before the next */
#define GS__RT_WATCHDOG_MS 60000
#define GS__RT_SLICE_US 1000    /* threaded: a device's longest turn before its worker's other devices move */
/* A collective whose operands and results (over every device) reach this size writes its results with
   streaming (non-temporal) stores where the CPU has them: they would not stay in the caches anyway, and
   ordinary stores would first read every destination line. Below it (a last-level cache's worth), ordinary
   stores leave the results in the cache, which is faster. */
#define GS__RT_STREAM_BYTES ((int64_t)32 << 20)
/* all-gather results up to this size (per device) are filled by their sources (see gs__coll_piece) */
#define GS__RT_PUSH_BYTES ((int64_t)1 << 20)

#if defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2)
#  include <emmintrin.h>
#  define GS__RT_HAVE_STREAM 1
#endif

/* ---------------------------------------------------------------------------------------------------------
   Formats and poison
   ------------------------------------------------------------------------------------------------------- */
enum { GS__FMT_STORAGE = 0, GS__FMT_COMPUTE = 1 };

GS__FN size_t gs__rt_esize(gs_dtype t, int fmt) {
    return fmt == GS__FMT_COMPUTE ? gs__compute_size(t) : gs_dtype_size(t);
}

/* n elements from src to dst, converting between formats (bf16: uint16 <-> float; pred: normalised to 0/1
   on the way to compute format). */
GS__FN void gs__rt_convert(gs_dtype t, void *dst, int dfmt, const void *src, int sfmt, int64_t n) {
    if (dfmt == GS__FMT_COMPUTE && sfmt == GS__FMT_STORAGE) {
        gs__to_compute(t, dst, src, n);
    } else if (dfmt == GS__FMT_STORAGE && sfmt == GS__FMT_COMPUTE) {
        gs__to_storage(t, dst, src, n);
    } else if (n > 0) {
        memcpy(dst, src, (size_t)n * gs__rt_esize(t, dfmt));
    }
}

/* Fills n elements with the poison of t (NaN, INT32_MIN, 0xDEADBEEF, 1), or zeros when poison is false. */
GS__FN void gs__rt_poison(gs_dtype t, void *dst, int fmt, int64_t n, bool poison) {
    int64_t i;
    if (n <= 0) return;
    if (!poison) {
        memset(dst, 0, (size_t)n * gs__rt_esize(t, fmt));
        return;
    }
    switch (t) {
    case GS_F32: case GS_BF16:
        if (t == GS_BF16 && fmt == GS__FMT_STORAGE) {
            for (i = 0; i < n; i++) ((uint16_t *)dst)[i] = 0x7FC0u;
        } else {
            uint32_t nan = 0x7FC00000u;
            for (i = 0; i < n; i++) memcpy((char *)dst + 4 * i, &nan, 4);
        }
        break;
    case GS_S32: for (i = 0; i < n; i++) ((int32_t *)dst)[i] = INT32_MIN; break;
    case GS_U32: for (i = 0; i < n; i++) ((uint32_t *)dst)[i] = 0xDEADBEEFu; break;
    case GS_PRED: memset(dst, 1, (size_t)n); break;
    default:
        for (i = 0; i < n; i++) {
            unsigned char one[16];
            if (gs__is_int(t)) {
                gs__st_i(t, dst, i, 0xA5A5A5A5A5A5A5A5ull);   /* integers: the same bytes in both formats */
            } else if (gs__is_float(t) || gs__is_complex(t)) {
                double nan = (double)NAN;
                if (gs__is_complex(t)) gs__ip_stc(t, one, 0, nan, nan);
                else gs__st_f(t, one, 0, nan);
                if (fmt == GS__FMT_STORAGE) gs__to_storage(t, (char *)dst + (size_t)i * gs_dtype_size(t), one, 1);
                else memcpy((char *)dst + (size_t)i * gs__compute_size(t), one, gs__compute_size(t));
            } else {
                memset((char *)dst + (size_t)i * gs__rt_esize(t, fmt), 0, gs__rt_esize(t, fmt));
            }
        }
        break;
    }
}

/* Copies the box count[] from src (shape sdims, at soff[]) to dst (shape ddims, at doff[]), converting
   formats. Rank 0 is one element. */
GS__FN void gs__rt_copy_box(gs_dtype t, int rank, const int64_t *count, void *dst, int dfmt, const int64_t *ddims,
                            const int64_t *doff, const void *src, int sfmt, const int64_t *sdims,
                            const int64_t *soff) {
    int64_t idx[GS_MAX_RANK], dst_st[GS_MAX_RANK], src_st[GS_MAX_RANK];
    size_t des = gs__rt_esize(t, dfmt), ses = gs__rt_esize(t, sfmt);
    int d;
    int64_t row;
    if (rank == 0) {
        gs__rt_convert(t, dst, dfmt, src, sfmt, 1);
        return;
    }
    for (d = 0; d < rank; d++)
        if (count[d] <= 0) return;
    dst_st[rank - 1] = src_st[rank - 1] = 1;
    for (d = rank - 2; d >= 0; d--) {
        dst_st[d] = dst_st[d + 1] * ddims[d + 1];
        src_st[d] = src_st[d + 1] * sdims[d + 1];
    }
    row = count[rank - 1];
    memset(idx, 0, sizeof idx);
    for (;;) {
        int64_t dp = 0, sp = 0;
        for (d = 0; d < rank; d++) {
            dp += (doff[d] + idx[d]) * dst_st[d];
            sp += (soff[d] + idx[d]) * src_st[d];
        }
        gs__rt_convert(t, (char *)dst + dp * (int64_t)des, dfmt, (const char *)src + sp * (int64_t)ses, sfmt, row);
        for (d = rank - 2; d >= 0; d--) {
            if (++idx[d] < count[d]) break;
            idx[d] = 0;
        }
        if (d < 0) return;
    }
}

/* ---------------------------------------------------------------------------------------------------------
   Collective plans
   ------------------------------------------------------------------------------------------------------- */
typedef struct gs__cplan {
    const gs_value *v;        /* the instruction, or NULL (a direct gs_runtime_collective) */
    gs_op op;
    gs_reduce_kind kind;
    gs_dtype dtype;
    gs_shape in, out;         /* every device's operand and result */
    int64_t dim, split_dim, concat_dim;
    int64_t D, n_groups, G;
    int64_t *ids;             /* n_groups * G device ids, group-major (heap) */
    int64_t *group_of;        /* D: the group of each device */
    int64_t *rank_of;         /* D: its position in the group */
    int64_t *src_of;          /* collective-permute, D: the device it receives from, or -1 */
    int64_t *dst_of;          /* collective-permute, D: the device it sends to, or -1 */
    gs__ra2a_geom ra;         /* ragged-all-to-all: its operand `in` is u8[ra_meta + 32 K], a device's input rows */
    int64_t ra_meta;          /* (padded to 8 bytes) then its metadata as int64 (gs__rt_ragged_post) */
} gs__cplan;

GS__FN void gs__cplan_free(gs_ctx *ctx, gs__cplan *p) {
    gs__free(ctx, p->ids);
    gs__free(ctx, p->group_of);
    gs__free(ctx, p->rank_of);
    gs__free(ctx, p->src_of);
    gs__free(ctx, p->dst_of);
    memset(p, 0, sizeof *p);
}

/* A private context: the runtime's allocator, no logger, its own sticky error. */
GS__FN void gs__rt_scratch_ctx(const gs_ctx *parent, gs_ctx *c) {
    memset(c, 0, sizeof *c);
    c->allocator = parent->allocator;
}

/* The checks and result shape of a grouped collective once its groups are known (p->G): reductions defined on the
   type, dims in range and divisible by the group size. */
GS__FN gs_result gs__cplan_check_op(gs_ctx *ctx, const char *who, const gs_collective_spec *spec, const gs_value *v,
                                    gs__cplan *p) {
    const gs_shape *x = &spec->shape;
    if (spec->op == GS_OP_ALL_REDUCE || spec->op == GS_OP_REDUCE_SCATTER) {
        bool ok = spec->reduce >= GS_REDUCE_SUM && spec->reduce <= GS_REDUCE_OR;
        if (ok && (spec->reduce == GS_REDUCE_AND || spec->reduce == GS_REDUCE_OR) &&
            (gs__is_float(x->dtype) || gs__is_complex(x->dtype)))
            ok = false;
        if (ok && gs__is_complex(x->dtype) && (spec->reduce == GS_REDUCE_MAX || spec->reduce == GS_REDUCE_MIN))
            ok = false;
        if (!gs__is_numeric(x->dtype) && x->dtype != GS_PRED) ok = false;
        if (spec->reduce == GS_REDUCE_CUSTOM) ok = v && v->reducer;   /* an instruction's reducer computation */
        if (!ok) {
            return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: reduction '%s' is not defined on %s", who,
                           gs_reduce_kind_name(spec->reduce), gs_dtype_name(x->dtype));
        }
    }
    if (spec->op == GS_OP_ALL_GATHER || spec->op == GS_OP_REDUCE_SCATTER) {
        if (x->rank == 0 || spec->dim < 0 || spec->dim >= x->rank) {
            return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: dimension %lld is out of range for rank %d", who,
                           (long long)spec->dim, x->rank);
        }
        if (spec->op == GS_OP_ALL_GATHER) {
            p->out.dims[spec->dim] *= p->G;
        } else {
            if (x->dims[spec->dim] % p->G != 0) {
                return gs__err(ctx, GS_ERR_SHAPE, "%s: dim %lld (%lld) does not divide into groups of %lld", who,
                               (long long)spec->dim, (long long)x->dims[spec->dim], (long long)p->G);
            }
            p->out.dims[spec->dim] /= p->G;
        }
    }
    if (spec->op == GS_OP_ALL_TO_ALL) {
        if (x->rank == 0 || spec->split_dim < 0 || spec->split_dim >= x->rank || spec->concat_dim < 0 ||
            spec->concat_dim >= x->rank) {
            return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: split/concat dims %lld/%lld are out of range for rank %d",
                           who, (long long)spec->split_dim, (long long)spec->concat_dim, x->rank);
        }
        if (x->dims[spec->split_dim] % p->G != 0) {
            return gs__err(ctx, GS_ERR_SHAPE, "%s: split dim %lld (%lld) does not divide into groups of %lld", who,
                           (long long)spec->split_dim, (long long)x->dims[spec->split_dim], (long long)p->G);
        }
        p->out.dims[spec->split_dim] /= p->G;
        p->out.dims[spec->concat_dim] *= p->G;
    }
    if (spec->op == GS_OP_RAGGED_ALL_TO_ALL && p->ra.K % p->G != 0) {
        return gs__err(ctx, GS_ERR_SHAPE, "%s: %lld offsets/sizes do not divide into groups of %lld", who, (long long)p->ra.K,
                       (long long)p->G);
    }
    return GS_OK;
}

/* Builds and checks the plan of collective `spec` on D devices. v (may be NULL) names it in messages and
   gives the declared result shape to check. Errors go to ctx. */
GS__FN gs_result gs__cplan_init(gs_ctx *ctx, int64_t D, const gs_collective_spec *spec, const gs_value *v,
                                gs__cplan *p) {
    char who[256];
    gs_ctx tmp;
    const gs_shape *x = &spec->shape;
    int64_t i, g, n;
    const int64_t *ids = NULL;
    gs_result r;
    memset(p, 0, sizeof *p);
    if (v) snprintf(who, sizeof who, "%s %s", gs_op_name(spec->op), v->name);
    else snprintf(who, sizeof who, "gs_runtime_collective (%s)", gs_op_name(spec->op));
    if (spec->op == GS_OP_RAGGED_ALL_TO_ALL && !v)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_runtime_collective: ragged-all-to-all runs only as an instruction "
                       "(its six operands do not fit a gs_collective_spec)");
    if (spec->op != GS_OP_ALL_REDUCE && spec->op != GS_OP_ALL_GATHER && spec->op != GS_OP_REDUCE_SCATTER &&
        spec->op != GS_OP_ALL_TO_ALL && spec->op != GS_OP_COLLECTIVE_PERMUTE && spec->op != GS_OP_RAGGED_ALL_TO_ALL)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_runtime_collective: op %d is not a collective", (int)spec->op);
    if (x->rank < 0 || x->rank > GS_MAX_RANK || gs_dtype_size(x->dtype) == 0 || x->dtype == GS_TUPLE)
        return gs__err(ctx, GS_ERR_SHAPE, "%s: the operand is not an array", who);
    for (i = 0; i < x->rank; i++)
        if (x->dims[i] < 0) return gs__err(ctx, GS_ERR_SHAPE, "%s: negative operand dim %lld", who, (long long)i);
    p->v = v;
    p->op = spec->op;
    p->kind = spec->reduce;
    p->dtype = x->dtype;
    p->in = *x;
    p->out = *x;
    p->D = D;
    p->dim = spec->dim;
    p->split_dim = spec->split_dim;
    p->concat_dim = spec->concat_dim;
    if (spec->op == GS_OP_RAGGED_ALL_TO_ALL) {
        /* the operand a device posts: its input rows and metadata packed (what another rank receives) */
        gs__ra2a_geom_of(v, &p->ra);
        p->ra_meta = (p->ra.N * p->ra.row_bytes + 7) / 8 * 8;
        memset(&p->in, 0, sizeof p->in);
        p->in.dtype = p->dtype = GS_U8;
        p->in.rank = 1;
        p->in.dims[0] = p->ra_meta + 32 * p->ra.K;
        p->out = v->shape;
    }
    if (spec->op == GS_OP_COLLECTIVE_PERMUTE) {
        p->n_groups = D;
        p->G = 1;
        p->src_of = (int64_t *)gs__malloc(ctx, sizeof(int64_t) * (size_t)D);
        p->dst_of = (int64_t *)gs__malloc(ctx, sizeof(int64_t) * (size_t)D);
        if (!p->src_of || !p->dst_of) {
            gs__cplan_free(ctx, p);
            return GS_ERR_OUT_OF_MEMORY;
        }
        for (i = 0; i < D; i++) p->src_of[i] = p->dst_of[i] = -1;
        if (spec->n_pairs < 0 || (spec->n_pairs > 0 && !spec->pairs)) {
            gs__cplan_free(ctx, p);
            return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: bad source-target pair list", who);
        }
        for (i = 0; i < spec->n_pairs; i++) {
            int64_t s = spec->pairs[2 * i], t = spec->pairs[2 * i + 1];
            if (s < 0 || s >= D || t < 0 || t >= D) {
                gs__cplan_free(ctx, p);
                return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: pair {%lld,%lld} names a device outside 0..%lld", who,
                               (long long)s, (long long)t, (long long)(D - 1));
            }
            if (p->src_of[t] >= 0) {
                gs__cplan_free(ctx, p);
                return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: device %lld is the target of two pairs", who, (long long)t);
            }
            if (p->dst_of[s] >= 0) {
                gs__cplan_free(ctx, p);
                return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: device %lld is the source of two pairs", who, (long long)s);
            }
            p->src_of[t] = s;
            p->dst_of[s] = t;
        }
    } else {
        gs__rt_scratch_ctx(ctx, &tmp);
        r = gs__groups_expand(&tmp, &spec->groups, D, &p->n_groups, &p->G, &ids);
        if (r) {
            gs__cplan_free(ctx, p);
            return gs__err(ctx, r, "%s: %s (the runtime has %lld devices)", who, gs_ctx_error_msg(&tmp), (long long)D);
        }
        p->ids = (int64_t *)ids;
        if (p->n_groups * p->G != D) {
            n = p->n_groups * p->G;
            gs__cplan_free(ctx, p);
            return gs__err(ctx, GS_ERR_INVALID_ARG,
                           "%s: the replica groups cover %lld of the %lld devices (each device must be in exactly one group)",
                           who, (long long)n, (long long)D);
        }
        p->group_of = (int64_t *)gs__malloc(ctx, sizeof(int64_t) * (size_t)D);
        p->rank_of = (int64_t *)gs__malloc(ctx, sizeof(int64_t) * (size_t)D);
        if (!p->group_of || !p->rank_of) {
            gs__cplan_free(ctx, p);
            return GS_ERR_OUT_OF_MEMORY;
        }
        for (g = 0; g < p->n_groups; g++)
            for (i = 0; i < p->G; i++) {
                p->group_of[p->ids[g * p->G + i]] = g;
                p->rank_of[p->ids[g * p->G + i]] = i;
            }
        if ((r = gs__cplan_check_op(ctx, who, spec, v, p)) != GS_OK) {
            gs__cplan_free(ctx, p);
            return r;
        }
    }
    if (v && !gs_shape_equal(&p->out, &v->shape)) {
        char a[128], b[128];
        int k;
        size_t la = 0, lb = 0;
        la += (size_t)snprintf(a, sizeof a, "%s[", gs_dtype_name(p->out.dtype));
        lb += (size_t)snprintf(b, sizeof b, "%s[", gs_dtype_name(v->shape.dtype));
        for (k = 0; k < p->out.rank && la < sizeof a; k++)
            la += (size_t)snprintf(a + la, sizeof a - la, "%s%lld", k ? "," : "", (long long)p->out.dims[k]);
        for (k = 0; k < v->shape.rank && lb < sizeof b; k++)
            lb += (size_t)snprintf(b + lb, sizeof b - lb, "%s%lld", k ? "," : "", (long long)v->shape.dims[k]);
        gs__cplan_free(ctx, p);
        return gs__err(ctx, GS_ERR_SHAPE, "%s: on %lld devices the result is %s] but the instruction says %s]", who,
                       (long long)D, a, b);
    }
    return GS_OK;
}

/* The spec of a collective instruction. */
GS__FN gs_collective_spec gs__cplan_spec_of(const gs_value *v) {
    gs_collective_spec s;
    memset(&s, 0, sizeof s);
    s.op = v->op;
    s.shape = v->operands[0]->shape;
    s.reduce = v->reduce;
    s.dim = v->dim;
    s.split_dim = v->split_dim;
    s.concat_dim = v->concat_dim;
    s.groups = v->coll.groups;
    s.n_pairs = v->n_pairs;
    s.pairs = v->pairs;
    return s;
}

/* Direct-exchange bytes device d sends and receives in one execution (see gs_api_runtime.h). */
GS__FN void gs__cplan_bytes(const gs__cplan *p, int64_t d, int64_t *sent, int64_t *recv) {
    int64_t n = (int64_t)gs_shape_bytes(&p->in), G = p->G;
    switch (p->op) {
    case GS_OP_ALL_REDUCE: case GS_OP_ALL_GATHER: *sent = *recv = (G - 1) * n; break;
    case GS_OP_REDUCE_SCATTER: case GS_OP_ALL_TO_ALL: *sent = *recv = (G - 1) * (n / G); break;
    case GS_OP_COLLECTIVE_PERMUTE:
        *sent = p->dst_of[d] >= 0 && p->dst_of[d] != d ? n : 0;
        *recv = p->src_of[d] >= 0 && p->src_of[d] != d ? n : 0;
        break;
    default: *sent = *recv = 0; break;
    }
}

/* ---------------------------------------------------------------------------------------------------------
   The engine: a piece of one device's share of a collective. in[d] / out[d] are every device's operand and
   result (compute format). Reductions are left folds in group order: x_g0 (op) x_g1 (op) ... (bf16: rounded
   after every step, as the interpreter's reducers do).
   ------------------------------------------------------------------------------------------------------- */
#if defined(GS__RT_HAVE_STREAM)
/* Sums of 32-bit lanes: f32 (IEEE, lane by lane exactly as the scalar a + b) or two's-complement integers. */
GS__FN __m128i gs__rt_vadd(bool f32, __m128i a, __m128i b) {
    return f32 ? _mm_castps_si128(_mm_add_ps(_mm_castsi128_ps(a), _mm_castsi128_ps(b))) : _mm_add_epi32(a, b);
}
#endif

/* d[i] = a[i] + b[i] on f32 or on 32-bit two's-complement integers (s32 sums wrap exactly like u32 sums); d may
   be a. With SSE2 four lanes at a time (compilers leave this loop scalar at -O2). */
GS__FN void gs__rt_add32(bool f32, void *d, const void *a, const void *b, int64_t n) {
    int64_t i = 0;
#if defined(GS__RT_HAVE_STREAM)
    for (; i + 4 <= n; i += 4)
        _mm_storeu_si128((__m128i *)d + i / 4, gs__rt_vadd(f32, _mm_loadu_si128((const __m128i *)a + i / 4),
                                                           _mm_loadu_si128((const __m128i *)b + i / 4)));
#endif
    if (f32)
        for (; i < n; i++) ((float *)d)[i] = ((const float *)a)[i] + ((const float *)b)[i];
    else
        for (; i < n; i++) ((uint32_t *)d)[i] = ((const uint32_t *)a)[i] + ((const uint32_t *)b)[i];
}

/* d[i] = a[i] (k) b[i]; d may be a (not b). fn: the reducer computation of kind custom (one per worker); its
   first failure is kept in *err and the rest of the fold is skipped. */
GS__FN void gs__rt_fold(gs_dtype t, gs_reduce_kind k, void *d, const void *a, const void *b, int64_t n, gs__ip_fn *fn,
                        gs_result *err) {
    int64_t i;
    if (k == GS_REDUCE_CUSTOM) {
        for (i = 0; i < n && fn && *err == GS_OK; i++) *err = gs__reducer_apply(fn, t, d, i, a, i, b, i);
        if (!fn && *err == GS_OK) *err = GS_ERR_INVALID_ARG;
        return;
    }
    switch (t) {
    case GS_F32: case GS_BF16: {
        float *D = (float *)d;
        const float *A = (const float *)a, *B = (const float *)b;
        if (k == GS_REDUCE_SUM && t == GS_F32) {
            gs__rt_add32(true, d, a, b, n);
        } else {
            bool bf = t == GS_BF16;
            for (i = 0; i < n; i++) D[i] = gs__ip_comb_f(k, A[i], B[i], bf);
        }
        break;
    }
    case GS_S32: case GS_U32:
        if (k == GS_REDUCE_SUM) {
            gs__rt_add32(false, d, a, b, n);
        } else if (t == GS_S32) {
            for (i = 0; i < n; i++)
                ((int32_t *)d)[i] = gs__ip_comb_s(k, ((const int32_t *)a)[i], ((const int32_t *)b)[i]);
        } else {
            for (i = 0; i < n; i++)
                ((uint32_t *)d)[i] = gs__ip_comb_u(k, ((const uint32_t *)a)[i], ((const uint32_t *)b)[i]);
        }
        break;
    case GS_PRED:
        for (i = 0; i < n; i++) ((uint8_t *)d)[i] = gs__ip_comb_p(k, ((const uint8_t *)a)[i], ((const uint8_t *)b)[i]);
        break;
    default: {   /* every other type through the interpreter's generic combiner, in the same order */
        size_t es = gs__compute_size(t);
        if (d != a && n > 0) memcpy(d, a, (size_t)n * es);
        for (i = 0; i < n; i++) gs__ip_gcomb(t, k, d, i, b, i);
        break;
    }
    }
}

/* n bytes from src to dst, with streaming stores when `stream` (and the CPU has them); the caller ends its
   share with gs__rt_stream_fence before the results are published. */
GS__FN void gs__rt_put(void *dst, const void *src, size_t n, bool stream) {
#if defined(GS__RT_HAVE_STREAM)
    if (stream && n >= 256) {
        /* ordinary stores up to a 64-byte line boundary: a streamed line must be written whole, or the
           write-combining buffers flush partial lines (several times slower when many streams are open) */
        size_t head = (64 - ((uintptr_t)dst & 63)) & 63, i;
        char *d = (char *)dst;
        const char *s = (const char *)src;
        if (head) memcpy(d, s, head);
        d += head;
        s += head;
        n -= head;
        /* a whole 64-byte line per step: the write-combining buffer is filled and released at once */
        for (i = 0; i + 64 <= n; i += 64) {
            __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
            __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 16));
            __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 32));
            __m128i e = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 48));
            _mm_stream_si128((__m128i *)(void *)(d + i), a);
            _mm_stream_si128((__m128i *)(void *)(d + i + 16), b);
            _mm_stream_si128((__m128i *)(void *)(d + i + 32), c);
            _mm_stream_si128((__m128i *)(void *)(d + i + 48), e);
        }
        for (; i + 16 <= n; i += 16)
            _mm_stream_si128((__m128i *)(void *)(d + i), _mm_loadu_si128((const __m128i *)(const void *)(s + i)));
        if (n > i) memcpy(d + i, s + i, n - i);
        return;
    }
#else
    (void)stream;
#endif
    memcpy(dst, src, n);
}

GS__FN void gs__rt_stream_fence(bool stream) {
#if defined(GS__RT_HAVE_STREAM)
    if (stream) _mm_sfence();
#else
    (void)stream;
#endif
}

/* dst[0, n) = reduction over the members of elements [off, off + n) of their inputs. */
GS__FN void gs__rt_reduce_run(const gs__cplan *p, const int64_t *mem, const void *const *in, int64_t off, void *dst,
                              int64_t n, gs__ip_fn *fn, gs_result *err) {
    size_t es = gs__compute_size(p->dtype);
    int64_t j;
    const char *x0 = (const char *)in[mem[0]] + off * (int64_t)es;
    if (p->G == 1) {
        memcpy(dst, x0, (size_t)n * es);
        return;
    }
    gs__rt_fold(p->dtype, p->kind, dst, x0, (const char *)in[mem[1]] + off * (int64_t)es, n, fn, err);
    for (j = 2; j < p->G; j++)
        gs__rt_fold(p->dtype, p->kind, dst, dst, (const char *)in[mem[j]] + off * (int64_t)es, n, fn, err);
}

#if defined(GS__RT_HAVE_STREAM)

GS__FN void gs__rt_vstore(void *d, __m128i v, bool stream) {
    if (stream) _mm_stream_si128((__m128i *)d, v);
    else _mm_storeu_si128((__m128i *)d, v);
}

/* The sum (f32, s32, u32) over the members `mem` of elements [off, off + n) of their inputs, written to
   out[dst[j]] at element doff for j < n_dst, in one pass: every 64-byte line of each input is read once,
   the members are added in registers in group order, and the line is stored to every destination. All the
   input and output streams then advance together, which the hardware prefetchers follow far better than one
   block of one input at a time (on the development machine twice the bandwidth at 16 MiB). */
GS__FN void gs__rt_sum_lines(const gs__cplan *p, const int64_t *mem, const void *const *in, int64_t off,
                             void *const *out, const int64_t *dst, int64_t n_dst, int64_t doff, int64_t n, bool stream) {
    bool f32 = p->dtype == GS_F32;
    int64_t G = p->G, i = 0, g, j, head = 0;
    if (stream) {
        /* scalar elements until the first destination reaches a 64-byte line: each line is then streamed
           whole (partial lines make the write-combining buffers flush early: with 8 destinations four times
           slower). A destination at another offset within its lines gets ordinary stores. */
        uintptr_t a0 = (uintptr_t)((char *)out[dst[0]] + doff * 4);
        if ((a0 & 3) == 0) head = GS__MIN(n, (int64_t)(((64 - (a0 & 63)) & 63) / 4));
    }
    for (;;) {
        /* the scalar part: the head, then the tail */
        for (; i < head; i++) {
            const char *x = (const char *)in[mem[0]] + (off + i) * 4;
            if (f32) {
                float s;
                memcpy(&s, x, 4);
                for (g = 1; g < G; g++) {
                    float y;
                    memcpy(&y, (const char *)in[mem[g]] + (off + i) * 4, 4);
                    s += y;
                }
                for (j = 0; j < n_dst; j++) memcpy((char *)out[dst[j]] + (doff + i) * 4, &s, 4);
            } else {
                uint32_t s;
                memcpy(&s, x, 4);
                for (g = 1; g < G; g++) {
                    uint32_t y;
                    memcpy(&y, (const char *)in[mem[g]] + (off + i) * 4, 4);
                    s += y;
                }
                for (j = 0; j < n_dst; j++) memcpy((char *)out[dst[j]] + (doff + i) * 4, &s, 4);
            }
        }
        if (i >= n) break;
        for (; i + 16 <= n; i += 16) {
            const char *x = (const char *)in[mem[0]] + (off + i) * 4;
            __m128i v0 = _mm_loadu_si128((const __m128i *)(const void *)x);
            __m128i v1 = _mm_loadu_si128((const __m128i *)(const void *)(x + 16));
            __m128i v2 = _mm_loadu_si128((const __m128i *)(const void *)(x + 32));
            __m128i v3 = _mm_loadu_si128((const __m128i *)(const void *)(x + 48));
            for (g = 1; g < G; g++) {
                x = (const char *)in[mem[g]] + (off + i) * 4;
                v0 = gs__rt_vadd(f32, v0, _mm_loadu_si128((const __m128i *)(const void *)x));
                v1 = gs__rt_vadd(f32, v1, _mm_loadu_si128((const __m128i *)(const void *)(x + 16)));
                v2 = gs__rt_vadd(f32, v2, _mm_loadu_si128((const __m128i *)(const void *)(x + 32)));
                v3 = gs__rt_vadd(f32, v3, _mm_loadu_si128((const __m128i *)(const void *)(x + 48)));
            }
            for (j = 0; j < n_dst; j++) {
                char *d = (char *)out[dst[j]] + (doff + i) * 4;
                bool st = stream && ((uintptr_t)d & 63) == 0;
                gs__rt_vstore(d, v0, st);
                gs__rt_vstore(d + 16, v1, st);
                gs__rt_vstore(d + 32, v2, st);
                gs__rt_vstore(d + 48, v3, st);
            }
        }
        head = n;
    }
    gs__rt_stream_fence(stream);
}
#endif

/* The reduction over the members `mem` of elements [off, off + n) of their inputs, written to out[dst[j]] at
   element doff for j < n_dst (all-reduce: every member at the same offset; reduce-scatter: one result). */
GS__FN void gs__rt_reduce_to(const gs__cplan *p, const int64_t *mem, const void *const *in, int64_t off,
                             void *const *out, const int64_t *dst, int64_t n_dst, int64_t doff, int64_t n, bool stream,
                             gs__ip_fn *fn, gs_result *err) {
    size_t es = gs__compute_size(p->dtype);
    int64_t a, j, blk = GS__RT_BLOCK * 4 / (int64_t)es;   /* elements per block */
    uint64_t acc[GS__RT_BLOCK / 2];   /* one block (GS__RT_BLOCK * 4 bytes), kept in L1 while the members are added */
#if defined(GS__RT_HAVE_STREAM)
    /* from memory, one pass over all members; from the caches (no streaming), the block loop below is faster
       (its folds are plain vectorised loops) */
    if (stream && p->kind == GS_REDUCE_SUM && p->G > 1 &&
        (p->dtype == GS_F32 || p->dtype == GS_S32 || p->dtype == GS_U32)) {
        gs__rt_sum_lines(p, mem, in, off, out, dst, n_dst, doff, n, stream);
        return;
    }
#endif
    for (a = 0; a < n; a += blk) {
        int64_t m = GS__MIN(blk, n - a);
        /* without streaming the first destination is the accumulator (one copy less) */
        char *first = (char *)out[dst[0]] + (doff + a) * (int64_t)es, *sum = stream ? (char *)acc : first;
        gs__rt_reduce_run(p, mem, in, off + a, sum, m, fn, err);
        for (j = stream ? 0 : 1; j < n_dst; j++)
            gs__rt_put((char *)out[dst[j]] + (doff + a) * (int64_t)es, sum, (size_t)m * es, stream);
    }
    gs__rt_stream_fence(stream);
}

/* elements of dims [from, rank) */
GS__FN int64_t gs__rt_inner(const gs_shape *s, int from) {
    int64_t n = 1;
    int d;
    for (d = from; d < s->rank; d++) n *= s->dims[d];
    return n;
}

/* [lo, hi): piece k of S of [0, n), cut at multiples of `granule` (64-byte lines of 4-byte elements: two
   threads never write parts of one line). */
GS__FN void gs__rt_split(int64_t n, int64_t k, int64_t S, int64_t granule, int64_t *lo, int64_t *hi) {
    int64_t nb = (n + granule - 1) / granule;
    *lo = GS__MIN(n, (nb / S * k + GS__MIN(k, nb % S)) * granule);
    *hi = GS__MIN(n, (nb / S * (k + 1) + GS__MIN(k + 1, nb % S)) * granule);
}

/* A box copy as gs__ip_xcopy, with streaming stores for contiguous rows when `stream`. */
GS__FN void gs__rt_box(size_t es, int rank, const int64_t *dims, void *dst, int64_t doff, const int64_t *dstr,
                       const void *src, int64_t soff, const int64_t *sstr, bool stream) {
    int64_t idx[GS_MAX_RANK];
    int d;
    if (!stream || rank == 0 || dstr[rank - 1] != 1 || sstr[rank - 1] != 1) {
        gs__ip_xcopy(es, rank, dims, dst, doff, dstr, src, soff, sstr);
        return;
    }
    for (d = 0; d < rank; d++)
        if (dims[d] <= 0) return;
    memset(idx, 0, sizeof idx);
    for (;;) {
        gs__rt_put((char *)dst + doff * (int64_t)es, (const char *)src + soff * (int64_t)es,
                   (size_t)dims[rank - 1] * es, true);
        if (!gs__ip_xstep(rank - 1, dims, idx, &doff, dstr, &soff, sstr)) return;
    }
}

/* All-to-all: piece k of S of device t's result, in (..., G*s @split, ..., c @concat, ...) -> out (..., s @split,
   ..., G*c @concat, ...): piece r of member j's operand (along split) lands at position j (along concat). The G
   boxes are cut along their first dimension longer than 1 (d0) into G * piece[d0] rows, and the pieces take
   runs of rows. With `src` (ranks) member j's piece comes from where kind[j] says: 0 its operand in[], 1 src[j]
   (the piece alone, packed), 2 nowhere (it was received in place). */
GS__FN void gs__rt_a2a_piece(const gs__cplan *p, int64_t t, int64_t k, int64_t S, const void *const *in,
                             void *const *out, const void *const *src, const uint8_t *kind, bool stream) {
    size_t es = gs__compute_size(p->dtype);
    const int64_t *mem = p->ids + p->group_of[t] * p->G;
    int64_t G = p->G, r = p->rank_of[t], ist[GS_MAX_RANK], ost[GS_MAX_RANK], pst[GS_MAX_RANK], piece[GS_MAX_RANK];
    int64_t sub[GS_MAX_RANK], R, row, j, lo, hi, q, run;
    int d, d0 = 0, rank = p->in.rank;
    gs_shape ps = p->in;
    gs__strides(&p->in, ist);
    gs__strides(&p->out, ost);
    memset(piece, 0, sizeof piece);
    for (d = 0; d < rank; d++) piece[d] = p->in.dims[d];
    piece[p->split_dim] /= G;
    ps.dims[p->split_dim] = piece[p->split_dim];
    gs__strides(&ps, pst);
    while (d0 < rank - 1 && piece[d0] == 1) d0++;
    R = piece[d0];
    gs__rt_split(G * R, k, S, 1, &lo, &hi);
    if (hi <= lo) return;
    j = lo / R;
    row = lo % R;
    for (q = lo; q < hi; q += run, j++, row = 0) {
        int64_t doff = j * piece[p->concat_dim] * ost[p->concat_dim] + row * ost[d0];
        run = GS__MIN(R - row, hi - q);
        memcpy(sub, piece, sizeof sub);
        sub[d0] = run;
        if (!src || kind[j] == 0)
            gs__rt_box(es, rank, sub, out[t], doff, ost, in[mem[j]], r * piece[p->split_dim] * ist[p->split_dim] + row * ist[d0],
                       ist, stream);
        else if (kind[j] == 1)
            gs__rt_box(es, rank, sub, out[t], doff, ost, src[j], row * pst[d0], pst, stream);
    }
    gs__rt_stream_fence(stream);
}

/* ragged-all-to-all: where member j of a group finds its posted operand (gs__rt_ragged_post: input rows, then the
   metadata at ra_meta) */
typedef struct gs__rt_ra2a_at {
    const gs__cplan *p;
    const int64_t *mem;
    const void *const *in;
} gs__rt_ra2a_at;
GS__FN gs__ra2a_src gs__rt_ra2a_src(const void *at, int64_t j) {
    const gs__rt_ra2a_at *a = (const gs__rt_ra2a_at *)at;
    gs__ra2a_src s;
    s.in = (const char *)a->in[a->mem[j]];
    s.meta = (const int64_t *)(const void *)(s.in + a->p->ra_meta);
    return s;
}

/* Checks (out NULL) or makes device t's ragged-all-to-all result; msg as gs__ra2a_receive. */
GS__FN bool gs__rt_ragged_recv(const gs__cplan *p, int64_t t, const void *const *in, void *out, char *msg, size_t cap) {
    gs__rt_ra2a_at at;
    at.p = p;
    at.mem = p->ids + p->group_of[t] * p->G;
    at.in = in;
    return gs__ra2a_receive(p->v, &p->ra, p->G, p->rank_of[t], gs__rt_ra2a_src, &at, at.mem, (char *)out, msg, cap);
}

/* Piece k of S of device t's share of a collective (the pieces of all devices, in any order and on any
   threads, make up the whole collective; every result element is written by exactly one piece, and its value
   does not depend on how the work is cut). With `own` (ranks: the other members' results live in other
   processes) device t's pieces write t's result only, all of it: all-reduce folds every element of its
   members' inputs (the same fold in group order), all-gather copies every block from its members. */
GS__FN void gs__coll_piece(const gs__cplan *p, int64_t t, int64_t k, int64_t S, const void *const *in,
                           void *const *out, bool own, gs__ip_fn *fn, gs_result *err) {
    size_t es = gs__compute_size(p->dtype);
    int64_t G = p->G, j, lo, hi, q, run;
    bool stream = ((int64_t)gs_shape_bytes(&p->in) + (int64_t)gs_shape_bytes(&p->out)) * p->D >= GS__RT_STREAM_BYTES;
    switch (p->op) {
    case GS_OP_ALL_REDUCE: {
        /* in (n) on every member -> out (n) on every member. Member r reduces the slice [a, b) of every input
           and writes it into every member's result. */
        const int64_t *mem = p->ids + p->group_of[t] * G;
        int64_t a, b;
        if (own) {
            gs__rt_split(gs__numel(&p->in), k, S, 16, &lo, &hi);
            if (hi > lo) gs__rt_reduce_to(p, mem, in, lo, out, &t, 1, lo, hi - lo, stream, fn, err);
            break;
        }
        gs__rt_split(gs__numel(&p->in), p->rank_of[t], G, 16, &a, &b);
        gs__rt_split(b - a, k, S, 16, &lo, &hi);
        if (hi > lo) gs__rt_reduce_to(p, mem, in, a + lo, out, mem, G, a + lo, hi - lo, stream, fn, err);
        break;
    }
    case GS_OP_REDUCE_SCATTER: {
        /* in (outer, G*c) -> out (outer, c), c = (in.dims[dim] / G) * the dims after dim: member r's result is
           block r of the reduction */
        const int64_t *mem = p->ids + p->group_of[t] * G;
        int64_t r = p->rank_of[t], o, a;
        int64_t outer = gs__numel(&p->in) / GS__MAX(gs__rt_inner(&p->in, (int)p->dim), 1);
        int64_t c = gs__rt_inner(&p->out, (int)p->dim);
        if (gs__numel(&p->in) == 0 || c == 0) break;
        gs__rt_split(outer * c, k, S, 16, &lo, &hi);
        if (hi <= lo) break;
        o = lo / c;
        a = lo % c;
        for (q = lo; q < hi; q += run, o++, a = 0) {
            run = GS__MIN(c - a, hi - q);
            gs__rt_reduce_to(p, mem, in, (o * G + r) * c + a, out, &t, 1, q, run, stream, fn, err);
        }
        break;
    }
    case GS_OP_ALL_GATHER: {
        /* in (outer, c) -> out (outer, G*c): block j of every row comes from member j */
        const int64_t *mem = p->ids + p->group_of[t] * G;
        int64_t r = p->rank_of[t], c = gs__rt_inner(&p->in, (int)p->dim), o, a, rem;
        if (c == 0) break;
        if (own || (!stream && (int64_t)gs_shape_bytes(&p->out) > GS__RT_PUSH_BYTES)) {
            /* results that outgrow the private caches: device t fills its own result, one long copy per block */
            gs__rt_split(gs__numel(&p->out), k, S, 16, &lo, &hi);
            if (hi <= lo) break;
            o = lo / (G * c);
            rem = lo % (G * c);
            j = rem / c;
            a = rem % c;
            for (q = lo; q < hi; q += run, a = 0) {
                const char *from = (const char *)in[mem[j]] + (o * c + a) * (int64_t)es;
                run = GS__MIN(c - a, hi - q);
                if (from != (char *)out[t] + q * (int64_t)es)   /* else received in place (ranks) */
                    memcpy((char *)out[t] + q * (int64_t)es, from, (size_t)run * es);
                if (++j == G) {
                    j = 0;
                    o++;
                }
            }
            break;
        }
        /* from memory, or small: member r writes its operand into block r of every member's result,
           GS__RT_CHUNK bytes at a time so that the G copies after the first read it from the cache: each
           operand is read once instead of G times */
        gs__rt_split(gs__numel(&p->in), k, S, 16, &lo, &hi);
        if (hi <= lo) break;
        o = lo / c;
        a = lo % c;
        for (q = lo; q < hi; q += run) {
            run = GS__MIN(GS__MIN(c - a, hi - q), (int64_t)(GS__RT_CHUNK / es));
            for (j = 0; j < G; j++)
                gs__rt_put((char *)out[mem[j]] + ((o * G + r) * c + a) * (int64_t)es, (const char *)in[t] + q * (int64_t)es,
                           (size_t)run * es, stream);
            if ((a += run) == c) {
                a = 0;
                o++;
            }
        }
        gs__rt_stream_fence(stream);
        break;
    }
    case GS_OP_ALL_TO_ALL: gs__rt_a2a_piece(p, t, k, S, in, out, NULL, NULL, stream); break;
    case GS_OP_RAGGED_ALL_TO_ALL:
        /* device t's result (holding its output operand) takes the rows its members send it: piece 0 does it all (the
           updates are data; each was checked at the rendezvous, and is checked again here before anything is written) */
        if (k == 0) (void)gs__rt_ragged_recv(p, t, in, out[t], NULL, 0);
        break;
    case GS_OP_COLLECTIVE_PERMUTE: {
        /* in (shape) -> out (shape): the source's operand, or zeros */
        gs__rt_split(gs__numel(&p->in), k, S, 16, &lo, &hi);
        if (hi <= lo) break;
        if (p->src_of[t] >= 0 && in[p->src_of[t]] == out[t]) break;   /* received in place (ranks) */
        if (p->src_of[t] >= 0)
            gs__rt_put((char *)out[t] + lo * (int64_t)es, (const char *)in[p->src_of[t]] + lo * (int64_t)es,
                       (size_t)(hi - lo) * es, stream);
        else
            memset((char *)out[t] + lo * (int64_t)es, 0, (size_t)(hi - lo) * es);
        gs__rt_stream_fence(stream);
        break;
    }
    default: break;
    }
}

/* ---------------------------------------------------------------------------------------------------------
   Devices and the runtime
   ------------------------------------------------------------------------------------------------------- */
enum { GS__POST_NONE = 0, GS__POST_COLL, GS__POST_DONE };

/* What a device announces at a rendezvous: the collective (and the loop iterations it is in), or "done". */
typedef struct gs__post {
    int kind;
    const gs_value *v;
    gs_shape in_shape;
    int n_loops;
    const gs_value *loops[GS__RT_SIG];
    int64_t iters[GS__RT_SIG];
} gs__post;

enum { GS__DEV_RUNNING = 0, GS__DEV_PAUSED, GS__DEV_DONE, GS__DEV_FAILED, GS__DEV_STOPPED };
enum { GS__FAIL_NONE = 0, GS__FAIL_DEVICE, GS__FAIL_MISMATCH, GS__FAIL_TIMEOUT, GS__FAIL_NET, GS__FAIL_REMOTE };

typedef struct gs__dev {
    gs_runtime *rt;
    int64_t id;
    gs_ctx ctx;               /* private: this device's errors; allocations use the runtime's allocator */
    gs__exec ex;
    gs__ev *ev;
    gs__buf *params;          /* n_in compute-format parameter buffers */
    uint8_t *owned;           /* params[k].data was allocated for this run */
    gs__buf *results;         /* n_out compute-format results */
    bool have_results;        /* the evaluation finished: results[] are this device's to free */
    bool live;                /* begun and not yet ended (gs__rt_dev_end) */
    int state;
    const gs_value *where;    /* the instruction it was at when it stopped */
    gs__post post;
    int64_t arrivals;         /* rendezvous reached */
    int64_t *cstat;           /* 3 per plan: executions, bytes sent, bytes received */
    int64_t param_bytes, peak;
    int64_t tr_last, tr_coll;  /* tracing: when its current instruction began, when it reached the collective
                                  it waits at (-1: none), microseconds since the run began */
    char *ra_buf;             /* ragged-all-to-all: the operand it posts (input rows and metadata packed) */
    size_t ra_cap;
} gs__dev;

struct gs_runtime {
    gs_ctx *ctx;
    int64_t D;
    int64_t d_lo, d_hi;       /* the devices this process runs (all of them without ranks) */
    bool own;                 /* ranks: a device's pieces of a collective write its own result only */
#if defined(GSHARD_MPI)
    gs__net *net;             /* the link between ranks, or NULL */
    bool fast_reduce, fast_done;   /* fast_done: the results were made in the rank-level step */
    int net_code;             /* GS__FAIL_NET / _REMOTE: the code and the message */
    char net_msg[1024];
    uint8_t *rbuf;            /* staging: operands and pieces received from other ranks, pieces packed for them */
    size_t rbuf_cap;
    gs__net_xfer *xs;         /* the transfers of the current rendezvous */
    int n_xs, cap_xs;
    uint8_t *need;            /* D + 2R: scratch of a rendezvous (devices, late ranks, the ranks of a group) */
    bool ar_net;              /* the current all-reduce has groups across ranks (gs__rt_net_ar) */
    bool ra_net;              /* the current ragged-all-to-all has members on other ranks (gs__rt_net_ragged) */
    const void **nsrc;        /* reduce-scatter, all-to-all: L * G, where local device t's piece of member j is */
    uint8_t *nkind;           /* L * G: 0 member j's operand (ins), 1 nsrc (received, packed), 2 received in place */
    size_t nsrc_cap;
#endif
    gs_runtime_mode mode;
    int64_t watchdog_us;      /* < 0: none */
    bool no_poison, check_replicas;
    gs__dev *devs;
    int64_t workers;          /* threads of the pool (threaded), 1 in lockstep mode */
#if !defined(GSHARD_NO_THREADS)
    gs__pool pool;
    bool pool_up;
#endif
    /* the current run */
    gs__barrier bar;
    int abort;                /* atomic: the run is ending */
    int failure;              /* atomic: GS__FAIL_*, the first cause */
    int64_t fail_dev;         /* the device that failed or saw the problem (written by the CAS winner) */
    int64_t fail_wait_ms;
    const void **ins;         /* D: operands at the current rendezvous */
    void **outs;              /* D: results */
    gs__cplan *plans;         /* the program's collectives, in program order */
    int n_plans;
    gs_graph *g;
    int n_in, n_out;
    gs_shape *in_shapes, *out_shapes;   /* parameter buffers and outputs of g */
    const void *const *st_inputs;       /* D * n_in storage-format inputs, or NULL */
    const gs__buf *c_inputs;            /* D * n_in compute-format inputs, or NULL */
    void *const *st_outputs;            /* D * n_out storage-format outputs, or NULL (results kept) */
    /* `lanes` workers take part (a run: each drives a contiguous run of the devices), and each runs an equal
       contiguous run of the D * pieces pieces of a collective; a direct collective repeats one `repeat` times */
    const gs__cplan *direct;
    int64_t repeat, lanes, pieces;
    int cpus;                 /* online processors, at creation */
    /* an observer installed on every device's evaluation (gs__runtime_observe), or NULL */
    gs_result (*observe)(gs__exec *ex, const gs_value *v, int j, const gs__buf *buf);
    void *observe_user;
    /* tracing (gs_runtime_set_trace): per device up to tr_cap spans of the last run, tr_n[d] of them filled */
    bool trace;
    gs_runtime_span *tr;
    int64_t *tr_n, tr_cap, tr_t0;
    /* accounting of the last successful run */
    bool have_stats;
    int64_t *peak, *pbytes;
    gs_runtime_collective_stats *cstats;
    int n_cstats;
    int64_t coll_count, bytes_sent;
    int64_t *net_cstat;       /* per plan: bytes this rank sent other ranks for it (rank_bytes_sent), during a run */
    double seconds;
};

GS_API int64_t gs_runtime_num_devices(const gs_runtime *rt) { return rt ? rt->D : 0; }
GS__FN gs_ctx *gs__rt_ctx(const gs_runtime *rt) { return rt->ctx; }
GS_API int64_t gs_runtime_num_workers(const gs_runtime *rt) { return rt ? rt->workers : 0; }
GS_API int gs_runtime_rank(const gs_runtime *rt) {
#if defined(GSHARD_MPI)
    if (rt && rt->net) return gs__net_rank(rt->net);
#endif
    (void)rt;
    return 0;
}
GS_API void gs_runtime_local_devices(const gs_runtime *rt, int64_t *first, int64_t *end) {
    if (first) *first = rt ? rt->d_lo : 0;
    if (end) *end = rt ? rt->d_hi : 0;
}
GS_API int gs_runtime_num_ranks(const gs_runtime *rt) {
#if defined(GSHARD_MPI)
    if (rt && rt->net) return gs__net_size(rt->net);
#endif
    (void)rt;
    return 1;
}

GS__FN void gs__runtime_observe(gs_runtime *rt, gs_result (*fn)(gs__exec *ex, const gs_value *v, int j, const gs__buf *buf),
                                void *user) {
    rt->observe = fn;
    rt->observe_user = fn ? user : NULL;
}
GS_API gs_runtime_mode gs_runtime_get_mode(const gs_runtime *rt) { return rt ? rt->mode : GS_RUNTIME_MODE_DEFAULT; }

GS__FN void gs__rt_free_plans(gs_runtime *rt) {
    int i;
    for (i = 0; i < rt->n_plans; i++) gs__cplan_free(rt->ctx, &rt->plans[i]);
    gs__free(rt->ctx, rt->plans);
    rt->plans = NULL;
    rt->n_plans = 0;
}

GS_API void gs_runtime_destroy(gs_runtime *rt) {
    gs_ctx *ctx;
    if (!rt) return;
    ctx = rt->ctx;
#if !defined(GSHARD_NO_THREADS)
    if (rt->pool_up) gs__pool_stop(&rt->pool);
#endif
    gs__rt_free_plans(rt);
#if defined(GSHARD_MPI)
    gs__net_close(ctx, rt->net);
    gs__free(ctx, rt->rbuf);
    gs__free(ctx, rt->xs);
    gs__free(ctx, rt->need);
    gs__free(ctx, (void *)rt->nsrc);
    gs__free(ctx, rt->nkind);
#endif
    gs__free(ctx, rt->devs);
    gs__free(ctx, (void *)rt->ins);
    gs__free(ctx, rt->outs);
    gs__free(ctx, rt->peak);
    gs__free(ctx, rt->pbytes);
    gs__free(ctx, rt->cstats);
    gs__free(ctx, rt->in_shapes);
    gs__free(ctx, rt->out_shapes);
    gs__free(ctx, rt->tr);
    gs__free(ctx, rt->tr_n);
    gs__free(ctx, rt);
}

GS_API gs_result gs_runtime_create(gs_ctx *ctx, const gs_runtime_desc *desc, gs_runtime **out) {
    gs_runtime *rt;
    int64_t D, d;
    if (!out) return ctx ? gs__err(ctx, GS_ERR_INVALID_ARG, "gs_runtime_create: out is NULL") : GS_ERR_INVALID_ARG;
    *out = NULL;
    if (!ctx) return GS_ERR_INVALID_ARG;
    if (!desc) return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_runtime_create: desc is NULL (it gives num_devices)");
    D = desc->num_devices;
    if (D < 1 || D > GS_RUNTIME_MAX_DEVICES)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_runtime_create: %lld devices (the runtime takes 1 to %d)",
                       (long long)D, GS_RUNTIME_MAX_DEVICES);
    if (desc->mode < GS_RUNTIME_MODE_DEFAULT || desc->mode > GS_RUNTIME_LOCKSTEP)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_runtime_create: unknown mode %d", (int)desc->mode);
    if (desc->workers < 0 || desc->workers > D)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_runtime_create: %lld workers for %lld devices (0 = automatic, else 1 to D)",
                       (long long)desc->workers, (long long)D);
#if defined(GSHARD_NO_THREADS)
    if (desc->mode == GS_RUNTIME_THREADED)
        return gs__err(ctx, GS_ERR_UNSUPPORTED, "gs_runtime_create: threaded mode, but gshard.h was built with GSHARD_NO_THREADS");
#endif
    rt = (gs_runtime *)gs__malloc(ctx, sizeof *rt);
    if (!rt) return GS_ERR_OUT_OF_MEMORY;
    memset(rt, 0, sizeof *rt);
    rt->ctx = ctx;
    rt->D = D;
    rt->d_lo = 0;
    rt->d_hi = D;
    if (desc->comm) {
#if defined(GSHARD_MPI)
        gs_result r = gs__net_open(ctx, desc->comm, &rt->net);
        int64_t R = rt->net ? gs__net_size(rt->net) : 1;
        if (!r && D % R != 0)
            r = gs__err(ctx, GS_ERR_INVALID_ARG, "gs_runtime_create: %lld devices on %lld ranks (D must be a multiple of the ranks)",
                        (long long)D, (long long)R);
        if (r) {
            gs_runtime_destroy(rt);
            return r;
        }
        rt->d_lo = D / R * gs__net_rank(rt->net);
        rt->d_hi = rt->d_lo + D / R;
        rt->need = (uint8_t *)gs__malloc(ctx, (size_t)(D + 2 * R));
        if (!rt->need) {
            gs_runtime_destroy(rt);
            return GS_ERR_OUT_OF_MEMORY;
        }
        rt->own = true;
        rt->fast_reduce = desc->fast_reduce;
#else
        gs__free(ctx, rt);
        return gs__err(ctx, GS_ERR_UNSUPPORTED, "gs_runtime_create: desc.comm is set but gshard.h was built without GSHARD_MPI");
#endif
    }
#if defined(GSHARD_NO_THREADS)
    rt->mode = GS_RUNTIME_LOCKSTEP;
#else
    rt->mode = desc->mode == GS_RUNTIME_LOCKSTEP ? GS_RUNTIME_LOCKSTEP : GS_RUNTIME_THREADED;
#endif
    rt->watchdog_us = desc->watchdog_ms == 0 ? (int64_t)GS__RT_WATCHDOG_MS * 1000
                      : desc->watchdog_ms < 0 ? -1 : desc->watchdog_ms * 1000;
    rt->cpus = gs__cpu_count();
    rt->workers = rt->mode == GS_RUNTIME_LOCKSTEP ? 1 : desc->workers > 0 ? desc->workers
                                                                          : GS__MIN(rt->d_hi - rt->d_lo, (int64_t)rt->cpus);
    if (rt->workers > rt->d_hi - rt->d_lo) {
        int64_t L = rt->d_hi - rt->d_lo;
        gs_runtime_destroy(rt);
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_runtime_create: %lld workers for the %lld devices of each rank",
                       (long long)desc->workers, (long long)L);
    }
    rt->no_poison = desc->no_poison;
    rt->check_replicas = desc->check_replicas;
    rt->devs = (gs__dev *)gs__malloc(ctx, sizeof(gs__dev) * (size_t)D);
    rt->ins = (const void **)gs__malloc(ctx, sizeof(void *) * (size_t)D);
    rt->outs = (void **)gs__malloc(ctx, sizeof(void *) * (size_t)D);
    rt->peak = (int64_t *)gs__malloc(ctx, sizeof(int64_t) * (size_t)D);
    rt->pbytes = (int64_t *)gs__malloc(ctx, sizeof(int64_t) * (size_t)D);
    if (!rt->devs || !rt->ins || !rt->outs || !rt->peak || !rt->pbytes) {
        gs_runtime_destroy(rt);
        return GS_ERR_OUT_OF_MEMORY;
    }
    memset(rt->devs, 0, sizeof(gs__dev) * (size_t)D);
    for (d = 0; d < D; d++) {
        rt->devs[d].rt = rt;
        rt->devs[d].id = d;
    }
#if !defined(GSHARD_NO_THREADS)
    if (rt->mode == GS_RUNTIME_THREADED) {
        gs_result r = gs__pool_start(ctx, &rt->pool, (int)rt->workers, GS__RT_STACK);
        if (r) {
            gs_runtime_destroy(rt);
            return r;
        }
        rt->pool_up = true;
    }
#endif
    *out = rt;
    return GS_OK;
}

/* ---------------------------------------------------------------------------------------------------------
   Rendezvous
   ------------------------------------------------------------------------------------------------------- */
GS__FN bool gs__post_match(const gs__post *a, const gs__post *b) {
    int i;
    if (a->kind != b->kind) return false;
    if (a->kind != GS__POST_COLL) return true;
    if (a->v != b->v || a->n_loops != b->n_loops || !gs_shape_equal(&a->in_shape, &b->in_shape)) return false;
    for (i = 0; i < a->n_loops && i < GS__RT_SIG; i++)
        if (a->loops[i] != b->loops[i] || a->iters[i] != b->iters[i]) return false;
    return true;
}

/* "all-reduce ar.1 (iteration 2 of while w)" or "the end of the program" */
GS__FN void gs__post_describe(const gs__post *p, char *buf, size_t cap) {
    size_t n;
    int i;
    if (p->kind == GS__POST_DONE) {
        snprintf(buf, cap, "the end of the program");
        return;
    }
    if (p->kind != GS__POST_COLL || !p->v) {
        snprintf(buf, cap, "no rendezvous");
        return;
    }
    n = (size_t)snprintf(buf, cap, "%s %s", gs_op_name(p->v->op), p->v->name);
    for (i = 0; i < p->n_loops && i < GS__RT_SIG && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s iteration %lld of while %s", i ? "," : " (in", (long long)p->iters[i],
                              p->loops[i]->name);
    if (p->n_loops > 0 && n < cap) snprintf(buf + n, cap - n, ")");
}

/* Records the first cause of failure and raises the abort flag. */
GS__FN void gs__rt_fail(gs_runtime *rt, int cause, int64_t dev, int64_t waited_ms) {
    int none = GS__FAIL_NONE;
    if (GS__CAS(&rt->failure, &none, cause)) {
        rt->fail_dev = dev;
        rt->fail_wait_ms = waited_ms;
    }
    gs__barrier_abort(&rt->bar);
}

GS__FN void gs__rt_post(gs__dev *dev, int kind, const gs_value *v, const gs__buf *in) {
    gs__post *p = &dev->post;
    p->kind = kind;
    p->v = v;
    p->n_loops = 0;
    if (kind == GS__POST_COLL) {
        p->in_shape = in->shape;
        p->n_loops = gs__ev_loops(dev->ev, p->loops, p->iters, GS__RT_SIG);
    }
}

/* The plan of collective instruction v (plans are few; a linear scan costs less than the rendezvous). */
GS__FN const gs__cplan *gs__rt_plan_of(const gs_runtime *rt, const gs_value *v, int *index) {
    int i;
    for (i = 0; i < rt->n_plans; i++)
        if (rt->plans[i].v == v) {
            *index = i;
            return &rt->plans[i];
        }
    return NULL;
}

/* The bytes device d's ragged-all-to-all sent to and received from the other members: its send_sizes of updates for
   them and its recv_sizes of theirs, in rows (its own posted metadata, `packed`). */
GS__FN void gs__rt_ragged_bytes(const gs__cplan *p, int64_t d, const char *packed, int64_t *sent, int64_t *recv) {
    const int64_t *m = (const int64_t *)(const void *)(packed + p->ra_meta);
    int64_t K = p->ra.K, U = K / p->G, r = p->rank_of[d], i, rows_s = 0, rows_r = 0;
    for (i = 0; i < K; i++) {
        if (i / U == r) continue;
        rows_s += m[K + i];
        rows_r += m[3 * K + i];
    }
    *sent = rows_s * p->ra.row_bytes;
    *recv = rows_r * p->ra.row_bytes;
}

GS__FN void gs__rt_count(gs__dev *dev, const gs__cplan *p, int index) {
    int64_t s, r;
    if (p->op == GS_OP_RAGGED_ALL_TO_ALL) gs__rt_ragged_bytes(p, dev->id, dev->ra_buf, &s, &r);
    else gs__cplan_bytes(p, dev->id, &s, &r);
    dev->cstat[3 * index] += 1;
    dev->cstat[3 * index + 1] += s;
    dev->cstat[3 * index + 2] += r;
}

/* Waits for the other workers (nothing to wait for with one); on an abort or a timeout returns false (after
   recording a timeout, in the name of `dev`, a device of this worker). */
GS__FN bool gs__rt_barrier(gs_runtime *rt, const gs__dev *dev) {
#if !defined(GSHARD_NO_THREADS)
    int64_t waited = 0;
    int r;
    if (rt->lanes == 1) return true;
    r = gs__barrier_wait(&rt->bar, rt->watchdog_us, &waited);
    if (r == GS__BARRIER_OK) return true;
    if (r == GS__BARRIER_TIMEOUT) gs__rt_fail(rt, GS__FAIL_TIMEOUT, dev->id, rt->watchdog_us / 1000);
    return false;
#else
    (void)rt;
    (void)dev;
    return true;
#endif
}

/* ragged-all-to-all at the hook (ops: its six operands): the result starts as the output operand; the device posts
   its input rows and metadata packed in one buffer (the plan's operand, which other ranks receive whole) */
GS__FN gs_result gs__rt_ragged_post(gs__dev *dev, const gs_value *v, const gs__buf *ops, gs__buf *out) {
    gs_runtime *rt = dev->rt;
    int index = 0;
    const gs__cplan *p = gs__rt_plan_of(rt, v, &index);
    gs__buf packed;
    size_t need;
    if (!p) return gs__err(&dev->ctx, GS_ERR_INVALID_ARG, "%s %s: no plan for this collective", gs_op_name(v->op), v->name);
    need = (size_t)p->in.dims[0];
    if (need > dev->ra_cap) {
        gs__free(rt->ctx, dev->ra_buf);
        dev->ra_cap = 0;
        if (!(dev->ra_buf = (char *)gs__malloc(&dev->ctx, need + 8))) return GS_ERR_OUT_OF_MEMORY;
        dev->ra_cap = need;
    }
    if (p->ra.N * p->ra.row_bytes > 0) memcpy(dev->ra_buf, ops[0].data, (size_t)(p->ra.N * p->ra.row_bytes));
    gs__ra2a_meta(ops, p->ra.K, (int64_t *)(void *)(dev->ra_buf + p->ra_meta));
    if (p->ra.M * p->ra.row_bytes > 0) memcpy(out->data, ops[1].data, (size_t)(p->ra.M * p->ra.row_bytes));
    packed.shape = p->in;
    packed.data = dev->ra_buf;
    gs__rt_post(dev, GS__POST_COLL, v, &packed);
    if (rt->tr) dev->tr_coll = gs__now_us() - rt->tr_t0;
    rt->ins[dev->id] = dev->ra_buf;
    rt->outs[dev->id] = out->data;
    return GS__PENDING;
}

/* The interpreter's collective hook: publish the post and the buffers, and pause (the worker runs the
   rendezvous once all its devices have arrived; the next step completes the instruction). */
GS__FN gs_result gs__rt_hook(gs__exec *ex, const gs_value *v, const gs__buf *in, gs__buf *out) {
    gs__dev *dev = (gs__dev *)ex->user;
    gs_runtime *rt = dev->rt;
    if (v->op == GS_OP_RAGGED_ALL_TO_ALL) return gs__rt_ragged_post(dev, v, in, out);
    gs__rt_post(dev, GS__POST_COLL, v, in);
    if (rt->tr) dev->tr_coll = gs__now_us() - rt->tr_t0;
    rt->ins[dev->id] = in->data;
    rt->outs[dev->id] = out->data;
    return GS__PENDING;
}

/* The evaluator's observer while tracing: the instruction v is complete on this device. Its span began when
   the device reached it as a collective (the wait for the others included), else when the device's previous
   instruction ended or its turn began (in lockstep mode other devices run in between). Then the observer
   installed by gs__runtime_observe, if any. */
GS__FN gs_result gs__rt_trace_observe(gs__exec *ex, const gs_value *v, int j, const gs__buf *buf) {
    gs__dev *dev = (gs__dev *)ex->user;
    gs_runtime *rt = dev->rt;
    if (j == 0 && rt->tr_n[dev->id] < rt->tr_cap) {
        int64_t now = gs__now_us() - rt->tr_t0;
        gs_runtime_span *sp = &rt->tr[dev->id * rt->tr_cap + rt->tr_n[dev->id]++];
        sp->instruction = v;
        sp->start = (double)(dev->tr_coll >= 0 ? dev->tr_coll : dev->tr_last) * 1e-6;
        sp->end = (double)now * 1e-6;
        dev->tr_last = now;
        dev->tr_coll = -1;
    }
    return rt->observe ? rt->observe(ex, v, j, buf) : GS_OK;
}

GS_API gs_result gs_runtime_set_trace(gs_runtime *rt, bool on) {
    if (!rt) return GS_ERR_INVALID_ARG;
    rt->trace = on;
    return GS_OK;
}

GS_API int64_t gs_runtime_trace_count(const gs_runtime *rt, int64_t device) {
    if (!rt || !rt->tr || device < 0 || device >= rt->D) return 0;
    return rt->tr_n[device];
}

GS_API const gs_runtime_span *gs_runtime_trace_span(const gs_runtime *rt, int64_t device, int64_t i) {
    if (i < 0 || i >= gs_runtime_trace_count(rt, device)) return NULL;
    return &rt->tr[device * rt->tr_cap + i];
}

/* The span buffers of a traced run: one span per instruction of the entry computation and device. */
GS__FN gs_result gs__rt_trace_begin(gs_runtime *rt) {
    gs__free(rt->ctx, rt->tr);
    gs__free(rt->ctx, rt->tr_n);
    rt->tr = NULL;
    rt->tr_n = NULL;
    if (!rt->trace) return GS_OK;
    rt->tr_cap = gs_graph_num_values(rt->g) + 1;
    rt->tr = (gs_runtime_span *)gs__malloc(rt->ctx, sizeof(gs_runtime_span) * (size_t)(rt->tr_cap * rt->D));
    rt->tr_n = (int64_t *)gs__malloc(rt->ctx, sizeof(int64_t) * (size_t)rt->D);
    if (!rt->tr || !rt->tr_n) {
        gs__free(rt->ctx, rt->tr);
        gs__free(rt->ctx, rt->tr_n);
        rt->tr = NULL;
        rt->tr_n = NULL;
        return GS_ERR_OUT_OF_MEMORY;
    }
    memset(rt->tr_n, 0, sizeof(int64_t) * (size_t)rt->D);
    rt->tr_t0 = gs__now_us();
    return GS_OK;
}

#if defined(GSHARD_MPI)
/* ---------------------------------------------------------------------------------------------------------
   Between ranks: at a rendezvous the rank's first worker compares its post with every other rank's, then
   moves the operands its devices need (every member's of their groups; collective-permute: the source's) and
   sends the ones other ranks need. Device d lives on rank d / (D / R).
   ------------------------------------------------------------------------------------------------------- */
#define GS__RT_SIGN (4 + GS__RT_SIG)

/* A post in numbers another process reads the same way: kind, plan index, operand elements, loop iterations. */
GS__FN void gs__rt_sign(const gs_runtime *rt, const gs__post *p, int64_t *s) {
    int i, index = -1;
    memset(s, 0, sizeof(int64_t) * GS__RT_SIGN);
    s[0] = p->kind;
    if (p->kind == GS__POST_COLL && p->v) gs__rt_plan_of(rt, p->v, &index);
    s[1] = index;
    s[2] = p->kind == GS__POST_COLL ? gs__numel(&p->in_shape) : 0;
    s[3] = p->n_loops;
    for (i = 0; i < p->n_loops && i < GS__RT_SIG; i++) s[4 + i] = p->iters[i];
}

GS__FN void gs__rt_sign_text(const gs_runtime *rt, const int64_t *s, char *buf, size_t cap) {
    size_t n;
    int i;
    if (s[0] == GS__POST_DONE || s[1] < 0 || s[1] >= rt->n_plans) {
        snprintf(buf, cap, "%s", s[0] == GS__POST_DONE ? "the end of the program" : "an unknown rendezvous");
        return;
    }
    n = (size_t)snprintf(buf, cap, "%s %s", gs_op_name(rt->plans[s[1]].v->op), rt->plans[s[1]].v->name);
    for (i = 0; i < s[3] && i < GS__RT_SIG && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? ", " : " (loop iterations ", (long long)s[4 + i]);
    if (s[3] > 0 && n < cap) snprintf(buf + n, cap - n, ")");
}

/* Records a failure found between ranks (or told by another rank: REMOTE) with its message. */
GS__FN void gs__rt_net_fail(gs_runtime *rt, int cause, int code, const char *msg) {
    int none = GS__FAIL_NONE;
    if (GS__CAS(&rt->failure, &none, cause)) {
        rt->fail_dev = rt->d_lo;
        rt->net_code = code;
        snprintf(rt->net_msg, sizeof rt->net_msg, "%s", msg);
    }
    gs__barrier_abort(&rt->bar);
}

/* The outcome rc of a wait that did not end well, as the run's failure. late (R): ranks that never arrived. */
GS__FN void gs__rt_net_failed(gs_runtime *rt, int rc, int code, const char *msg, const uint8_t *late, const char *at) {
    int64_t R = gs__net_size(rt->net), L = rt->D / R, r;
    char buf[768];
    size_t n = 0;
    if (rc == GS__NET_ABORT) return;   /* a local failure, already recorded */
    if (rc != GS__NET_TIMEOUT) {
        gs__rt_net_fail(rt, rc == GS__NET_REMOTE ? GS__FAIL_REMOTE : GS__FAIL_NET, code, msg);
        return;
    }
    buf[0] = 0;
    for (r = 0; r < R && n < sizeof buf; r++)
        if (late && late[r])
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%srank %lld (devices %lld-%lld)", n ? ", " : "", (long long)r,
                                  (long long)(r * L), (long long)(r * L + L - 1));
    {
        char text[1024];
        snprintf(text, sizeof text, "watchdog: rank %d (devices %lld-%lld) waited %lld ms at %s; %s never arrived",
                 gs__net_rank(rt->net), (long long)rt->d_lo, (long long)(rt->d_hi - 1), (long long)(rt->watchdog_us / 1000),
                 at, n ? buf : "another rank");
        gs__rt_net_fail(rt, GS__FAIL_NET, GS_ERR_THREAD, text);
    }
}

/* Does rank s hold a device that needs device d's whole operand for plan p (all-reduce, all-gather,
   collective-permute)? */
GS__FN bool gs__rt_rank_needs(const gs_runtime *rt, const gs__cplan *p, int64_t s, int64_t d) {
    int64_t L = rt->d_hi - rt->d_lo, j;
    if (p->op == GS_OP_COLLECTIVE_PERMUTE) return p->dst_of[d] >= 0 && p->dst_of[d] / L == s;
    for (j = 0; j < p->G; j++)
        if (p->ids[p->group_of[d] * p->G + j] / L == s) return true;
    return false;
}

/* --fast-reduce applies to plan p: an all-reduce over one group of all devices, in a type and operation MPI has */
GS__FN bool gs__rt_net_fast_ok(const gs_runtime *rt, const gs__cplan *p) {
    return rt->fast_reduce && p->op == GS_OP_ALL_REDUCE && p->n_groups == 1 &&
           (p->dtype == GS_F32 || p->dtype == GS_F64 || p->dtype == GS_S32 || p->dtype == GS_U32) &&
           (p->kind == GS_REDUCE_SUM || p->kind == GS_REDUCE_PROD || p->kind == GS_REDUCE_MAX || p->kind == GS_REDUCE_MIN) &&
           gs__numel(&p->in) <= INT_MAX;
}

/* --fast-reduce (gs__rt_net_fast_ok): folds the local operands into the first local result, MPI_Allreduce folds
   the ranks, and the other local results are copies. false after recording a failure. */
GS__FN bool gs__rt_net_fast(gs_runtime *rt, const gs__cplan *p, const char *at) {
    int64_t n = gs__numel(&p->in), d;
    size_t bytes = (size_t)n * gs__compute_size(p->dtype);
    void *acc = rt->outs[rt->d_lo];
    int code = 0, rc;
    char msg[1024];
    gs_result folded = GS_OK;   /* the kinds taken here cannot fail */
    memcpy(acc, rt->ins[rt->d_lo], bytes);
    for (d = rt->d_lo + 1; d < rt->d_hi; d++) gs__rt_fold(p->dtype, p->kind, acc, acc, rt->ins[d], n, NULL, &folded);
    rc = gs__net_allreduce(rt->net, p->dtype, p->kind, acc, n, rt->watchdog_us, &rt->abort, &code, msg, sizeof msg);
    if (rc != GS__NET_OK) {
        gs__rt_net_failed(rt, rc, code, msg, NULL, at);
        return false;
    }
    for (d = rt->d_lo + 1; d < rt->d_hi; d++) memcpy(rt->outs[d], acc, bytes);
    rt->fast_done = true;
    return true;
}

/* base + off bytes (base itself for off 0: a zero-size buffer may be NULL) */
GS__FN char *gs__rt_at(const void *base, int64_t off) {
    return off != 0 ? (char *)(uintptr_t)base + off : (char *)(uintptr_t)base;
}

/* Appends a transfer to rt->xs (filling pass only). false: out of memory. */
GS__FN bool gs__rt_xs_push(gs_runtime *rt, bool fill, int64_t peer, int64_t tag, void *buf, int64_t bytes) {
    gs__net_xfer x;
    if (!fill) return true;
    if (rt->n_xs == rt->cap_xs) {
        int cap = rt->cap_xs ? 2 * rt->cap_xs : 64;
        gs__net_xfer *xs = (gs__net_xfer *)gs__malloc(rt->ctx, sizeof(gs__net_xfer) * (size_t)cap);
        if (!xs) return false;
        if (rt->n_xs) memcpy(xs, rt->xs, sizeof(gs__net_xfer) * (size_t)rt->n_xs);
        gs__free(rt->ctx, rt->xs);
        rt->xs = xs;
        rt->cap_xs = cap;
    }
    x.peer = (int)peer;
    x.tag = (int)tag;
    x.buf = buf;
    x.bytes = bytes;
    rt->xs[rt->n_xs++] = x;
    return true;
}

/* The layout of the pieces of reduce-scatter and all-to-all: the box of block r of member j's operand and of
   position j in a result. Block r of an operand is the rows o of c elements at (o * G + r) * c (reduce-scatter);
   all-to-all's piece is the box `piece` at r along split of the operand, at j along concat of the result. */
typedef struct gs__rt_pieces {
    size_t es;
    int64_t n;                          /* elements of a piece */
    int64_t outer, c;                   /* reduce-scatter: rows and row length of a block */
    int64_t piece[GS_MAX_RANK], ist[GS_MAX_RANK], ost[GS_MAX_RANK], pst[GS_MAX_RANK];
    bool send_whole, recv_whole;        /* a piece is one contiguous run of the operand / of the result */
} gs__rt_pieces;

GS__FN void gs__rt_pieces_of(const gs__cplan *p, gs__rt_pieces *x) {
    int d;
    gs_shape ps = p->in;
    memset(x, 0, sizeof *x);
    x->es = gs__compute_size(p->dtype);
    x->n = gs__numel(&p->in) / p->G;
    if (p->op == GS_OP_REDUCE_SCATTER) {
        x->c = gs__rt_inner(&p->out, (int)p->dim);
        x->outer = x->c ? x->n / x->c : 0;
        x->send_whole = x->outer <= 1;
        return;
    }
    for (d = 0; d < p->in.rank; d++) x->piece[d] = p->in.dims[d];
    x->piece[p->split_dim] /= p->G;
    ps.dims[p->split_dim] = x->piece[p->split_dim];
    gs__strides(&p->in, x->ist);
    gs__strides(&p->out, x->ost);
    gs__strides(&ps, x->pst);
    x->send_whole = x->recv_whole = true;
    for (d = 0; d < (int)p->split_dim; d++)
        if (p->in.dims[d] != 1) x->send_whole = false;
    for (d = 0; d < (int)p->concat_dim; d++)
        if (p->out.dims[d] != 1) x->recv_whole = false;
}

/* Block (reduce-scatter) or piece (all-to-all) r of operand `in`, packed into dst. */
GS__FN void gs__rt_pack(const gs__cplan *p, const gs__rt_pieces *x, int64_t r, const void *in, void *dst) {
    int64_t o;
    if (p->op == GS_OP_REDUCE_SCATTER) {
        for (o = 0; o < x->outer; o++)
            memcpy((char *)dst + o * x->c * (int64_t)x->es, (const char *)in + (o * p->G + r) * x->c * (int64_t)x->es,
                   (size_t)x->c * x->es);
        return;
    }
    gs__ip_xcopy(x->es, p->in.rank, x->piece, dst, 0, x->pst, in, r * x->piece[p->split_dim] * x->ist[p->split_dim], x->ist);
}

/* All-reduce between ranks: the ranks holding members of group g split [0, n) into slices, in rank order at
   16-element lines; rank's slice into lo, hi (empty when it holds none). rt->need + D + R marks those ranks. */
GS__FN void gs__rt_ar_slice(const gs_runtime *rt, const gs__cplan *p, int64_t g, int64_t rank, int64_t *lo, int64_t *hi) {
    int64_t R = gs__net_size(rt->net), L = rt->D / R, j, r, Q = 0, idx = 0;
    uint8_t *mark = rt->need + rt->D + R;
    memset(mark, 0, (size_t)R);
    for (j = 0; j < p->G; j++) mark[p->ids[g * p->G + j] / L] = 1;
    for (r = 0; r < R; r++) {
        if (r == rank) idx = Q;
        Q += mark[r];
    }
    *lo = *hi = 0;
    if (mark[rank]) gs__rt_split(gs__numel(&p->in), idx, Q, 16, lo, hi);
}

/* dst[0, n) = the fold over the G members of src[j][0, n), left to right in group order (the engine's fold,
   gs__rt_reduce_run), a block at a time. */
GS__FN void gs__rt_fold_srcs(const gs__cplan *p, const void *const *src, void *dst, int64_t n, gs__ip_fn *fn,
                             gs_result *err) {
    size_t es = gs__compute_size(p->dtype);
    int64_t blk = GS__RT_BLOCK * 4 / (int64_t)es, a, j;
    for (a = 0; a < n; a += blk) {
        int64_t m = GS__MIN(blk, n - a);
        char *d = (char *)dst + a * (int64_t)es;
        if (p->G == 1) {
            memcpy(d, (const char *)src[0] + a * (int64_t)es, (size_t)m * es);
            continue;
        }
        gs__rt_fold(p->dtype, p->kind, d, (const char *)src[0] + a * (int64_t)es, (const char *)src[1] + a * (int64_t)es, m,
                    fn, err);
        for (j = 2; j < p->G; j++) gs__rt_fold(p->dtype, p->kind, d, d, (const char *)src[j] + a * (int64_t)es, m, fn, err);
    }
}

/* The sends of plan p from the local devices (the filling pass packs the pieces that are not contiguous, into
   rbuf at *at). Reduce-scatter and all-to-all send each remote member t its block / piece alone, in group
   order (the receiver expects them in that order: MPI keeps messages of one source and tag in order). */
GS__FN bool gs__rt_net_sends(gs_runtime *rt, const gs__cplan *p, const gs__rt_pieces *x, bool fill, size_t *at) {
    int64_t D = rt->D, R = gs__net_size(rt->net), L = D / R, me = gs__net_rank(rt->net), d, s, j;
    size_t bytes = (size_t)gs__numel(&p->in) * x->es, pb = (size_t)x->n * x->es;
    for (d = rt->d_lo; d < rt->d_hi; d++) {
        if (p->op == GS_OP_ALL_REDUCE) {   /* to each other rank of the group, its slice */
            int64_t lo, hi;
            for (s = 0; s < R; s++) {
                gs__rt_ar_slice(rt, p, p->group_of[d], s, &lo, &hi);
                if (s != me && rt->need[D + R + s] &&
                    !gs__rt_xs_push(rt, fill, s, GS__NET_TAG_DATA + d, gs__rt_at(rt->ins[d], lo * (int64_t)x->es),
                                    (hi - lo) * (int64_t)x->es))
                    return false;
            }
            continue;
        }
        if (p->op == GS_OP_RAGGED_ALL_TO_ALL) {   /* its metadata; the rows it sends follow (gs__rt_net_ragged) */
            for (s = 0; s < R; s++)
                if (s != me && gs__rt_rank_needs(rt, p, s, d) &&
                    !gs__rt_xs_push(rt, fill, s, GS__NET_TAG_DATA + d, gs__rt_at(rt->ins[d], p->ra_meta),
                                    (int64_t)bytes - p->ra_meta))
                    return false;
            continue;
        }
        if (p->op != GS_OP_REDUCE_SCATTER && p->op != GS_OP_ALL_TO_ALL) {
            for (s = 0; s < R; s++)
                if (s != me && gs__rt_rank_needs(rt, p, s, d) &&
                    !gs__rt_xs_push(rt, fill, s, GS__NET_TAG_DATA + d, (void *)(uintptr_t)rt->ins[d], (int64_t)bytes))
                    return false;
            continue;
        }
        for (j = 0; j < p->G; j++) {
            int64_t t = p->ids[p->group_of[d] * p->G + j];
            char *buf;
            if (t / L == me) continue;
            if (x->send_whole) {
                int64_t off = p->op == GS_OP_REDUCE_SCATTER ? j * x->c : j * x->piece[p->split_dim] * x->ist[p->split_dim];
                buf = gs__rt_at(rt->ins[d], off * (int64_t)x->es);
            } else {
                buf = fill ? (char *)rt->rbuf + *at : NULL;
                if (fill) gs__rt_pack(p, x, j, rt->ins[d], buf);
                *at += pb;
            }
            if (!gs__rt_xs_push(rt, fill, t / L, GS__NET_TAG_DATA + d, buf, (int64_t)pb)) return false;
        }
    }
    return true;
}

/* The receives of plan p for the local devices, into rbuf at *at or in place; ins[] (whole operands) or
   nsrc / nkind (pieces) say where each lands. */
GS__FN bool gs__rt_net_recvs(gs_runtime *rt, const gs__cplan *p, const gs__rt_pieces *x, bool fill, size_t *at) {
    int64_t D = rt->D, R = gs__net_size(rt->net), L = D / R, me = gs__net_rank(rt->net), G = p->G, m, j, t;
    size_t bytes = (size_t)gs__numel(&p->in) * x->es, pb = (size_t)x->n * x->es;
    uint8_t *need = rt->need;
    bool pieces = p->op == GS_OP_REDUCE_SCATTER || p->op == GS_OP_ALL_TO_ALL;
    memset(need, 0, (size_t)D);
    for (t = rt->d_lo; t < rt->d_hi; t++) {
        if (p->op == GS_OP_COLLECTIVE_PERMUTE) {
            if (p->src_of[t] >= 0) need[p->src_of[t]] = 1;
            continue;
        }
        for (j = 0; j < G; j++) need[p->ids[p->group_of[t] * G + j]] = 1;
    }
    for (m = 0; m < D; m++) {
        const int64_t *mem = p->group_of ? p->ids + p->group_of[m] * G : NULL;
        char *buf = NULL;
        if (!need[m] || m / L == me) continue;
        if (pieces) {   /* one piece for each local member of m's group, in group order */
            for (j = 0; j < G; j++) {
                int64_t u = (mem[j] - rt->d_lo) * G + p->rank_of[m];
                if (mem[j] / L != me) continue;
                if (p->op == GS_OP_ALL_TO_ALL && x->recv_whole) {
                    buf = gs__rt_at(rt->outs[mem[j]], p->rank_of[m] * x->piece[p->concat_dim] * x->ost[p->concat_dim] *
                                                          (int64_t)x->es);
                } else {
                    buf = fill ? (char *)rt->rbuf + *at : NULL;
                    *at += pb;
                }
                if (fill) {
                    rt->nsrc[u] = buf;
                    rt->nkind[u] = p->op == GS_OP_ALL_TO_ALL && x->recv_whole ? 2 : 1;
                }
                if (!gs__rt_xs_push(rt, fill, m / L, GS__NET_TAG_DATA + m, buf, (int64_t)pb)) return false;
            }
            continue;
        }
        if (p->op == GS_OP_ALL_REDUCE) {   /* this rank's slice of m's operand */
            int64_t lo, hi;
            gs__rt_ar_slice(rt, p, p->group_of[m], me, &lo, &hi);
            buf = fill ? (char *)rt->rbuf + *at : NULL;
            *at += (size_t)(hi - lo) * x->es;
            if (fill) rt->ins[m] = buf;
            if (!gs__rt_xs_push(rt, fill, m / L, GS__NET_TAG_DATA + m, buf, (hi - lo) * (int64_t)x->es)) return false;
            continue;
        }
        if (p->op == GS_OP_COLLECTIVE_PERMUTE) {
            buf = (char *)rt->outs[p->dst_of[m]];   /* straight into its target's result (each source has one target) */
        } else if (p->op == GS_OP_ALL_GATHER && x->outer <= 1) {
            for (j = 0; mem[j] / L != me; j++) {}   /* into block rank_of[m] of the first local member's result */
            buf = gs__rt_at(rt->outs[mem[j]], p->rank_of[m] * (int64_t)bytes);
        } else {
            buf = fill ? (char *)rt->rbuf + *at : NULL;
            *at += bytes;
        }
        if (fill) rt->ins[m] = buf;
        if (p->op == GS_OP_RAGGED_ALL_TO_ALL) {   /* room for m's whole input; its metadata now, rows later */
            if (!gs__rt_xs_push(rt, fill, m / L, GS__NET_TAG_DATA + m, fill ? buf + p->ra_meta : NULL,
                                (int64_t)bytes - p->ra_meta))
                return false;
            continue;
        }
        if (!gs__rt_xs_push(rt, fill, m / L, GS__NET_TAG_DATA + m, buf, (int64_t)bytes)) return false;
    }
    return true;
}

/* Starts the transfers of plan p's operands (after the posts already started): sends of what other ranks need
   from the local devices, receives of what the local devices need from other ranks. Whole operands for
   all-reduce and all-gather (one copy per rank, however many local devices need it; all-gather's lands in
   place in a local result when the block is contiguous there), the source's into the target's result for
   collective-permute, and for reduce-scatter and all-to-all only the 1/G block each device needs. false after
   recording a failure. */
GS__FN bool gs__rt_net_data(gs_runtime *rt, const gs__cplan *p, const char *at) {
    int64_t L = rt->d_hi - rt->d_lo, G = p->G;
    gs__rt_pieces x;
    size_t staging = 0, n_nsrc = (size_t)(L * G), i;
    int code = 0, rc, n_send;
    char msg[1024];
    memset(&x, 0, sizeof x);
    x.es = gs__compute_size(p->dtype);
    if (p->op == GS_OP_REDUCE_SCATTER || p->op == GS_OP_ALL_TO_ALL) gs__rt_pieces_of(p, &x);
    if (p->op == GS_OP_ALL_GATHER) {
        x.c = gs__rt_inner(&p->in, (int)p->dim);
        x.outer = x.c ? gs__numel(&p->in) / x.c : 0;
    }
    rt->n_xs = 0;
    rt->ar_net = rt->ra_net = false;
    /* pass 1 sizes the staging, pass 2 fills the transfers */
    if (!gs__rt_net_sends(rt, p, &x, false, &staging) || !gs__rt_net_recvs(rt, p, &x, false, &staging)) goto oom;
    if (staging > rt->rbuf_cap) {
        gs__free(rt->ctx, rt->rbuf);
        rt->rbuf_cap = 0;
        if (!(rt->rbuf = (uint8_t *)gs__malloc(rt->ctx, staging))) goto oom;
        rt->rbuf_cap = staging;
    }
    if (p->op != GS_OP_ALL_GATHER && p->op != GS_OP_COLLECTIVE_PERMUTE && n_nsrc > rt->nsrc_cap) {
        gs__free(rt->ctx, (void *)rt->nsrc);
        gs__free(rt->ctx, rt->nkind);
        rt->nsrc_cap = 0;
        rt->nsrc = (const void **)gs__malloc(rt->ctx, sizeof(void *) * n_nsrc);
        rt->nkind = (uint8_t *)gs__malloc(rt->ctx, n_nsrc);
        if (!rt->nsrc || !rt->nkind) goto oom;
        rt->nsrc_cap = n_nsrc;
    }
    if (p->op == GS_OP_REDUCE_SCATTER || p->op == GS_OP_ALL_TO_ALL)
        for (i = 0; i < n_nsrc; i++) rt->nkind[i] = 0;
    staging = 0;
    if (!gs__rt_net_sends(rt, p, &x, true, &staging)) goto oom;
    n_send = rt->n_xs;
    if (!gs__rt_net_recvs(rt, p, &x, true, &staging)) goto oom;
    rt->ar_net = p->op == GS_OP_ALL_REDUCE && rt->n_xs > 0;
    rt->ra_net = p->op == GS_OP_RAGGED_ALL_TO_ALL && rt->n_xs > 0;
    rc = gs__net_start(rt->net, rt->xs, n_send, false, &code, msg, sizeof msg);
    if (rc == GS__NET_OK) rc = gs__net_start(rt->net, rt->xs + n_send, rt->n_xs - n_send, true, &code, msg, sizeof msg);
    if (rc != GS__NET_OK) gs__rt_net_failed(rt, rc, code, msg, NULL, at);
    return rc == GS__NET_OK;
oom:
    gs__rt_net_fail(rt, GS__FAIL_NET, GS_ERR_OUT_OF_MEMORY, "out of memory for the transfers between ranks");
    return false;
}

/* Waits for every transfer started (posts and operands). false after recording a failure. */
GS__FN bool gs__rt_net_wait_all(gs_runtime *rt, const char *at) {
    int code = 0, rc;
    char msg[1024];
    rc = gs__net_finish(rt->net, -1, rt->watchdog_us, &rt->abort, rt->need + rt->D, &code, msg, sizeof msg);
    if (rc != GS__NET_OK) gs__rt_net_failed(rt, rc, code, msg, rt->need + rt->D, at);
    return rc == GS__NET_OK;
}

/* Starts rt->xs[0, n_send) (sends) and the rest (receives) and waits for all of them. false after recording a
   failure. */
GS__FN bool gs__rt_net_exchange(gs_runtime *rt, int n_send, const char *at) {
    int code = 0, rc;
    char msg[1024];
    rc = gs__net_start(rt->net, rt->xs, n_send, false, &code, msg, sizeof msg);
    if (rc == GS__NET_OK) rc = gs__net_start(rt->net, rt->xs + n_send, rt->n_xs - n_send, true, &code, msg, sizeof msg);
    if (rc == GS__NET_OK) rc = gs__net_finish(rt->net, -1, rt->watchdog_us, &rt->abort, rt->need + rt->D, &code, msg, sizeof msg);
    if (rc != GS__NET_OK) gs__rt_net_failed(rt, rc, code, msg, rt->need + rt->D, at);
    return rc == GS__NET_OK;
}

/* The first local member of group g (in group order), or -1. */
GS__FN int64_t gs__rt_first_local(const gs_runtime *rt, const gs__cplan *p, int64_t g) {
    int64_t j;
    for (j = 0; j < p->G; j++)
        if (p->ids[g * p->G + j] >= rt->d_lo && p->ids[g * p->G + j] < rt->d_hi) return p->ids[g * p->G + j];
    return -1;
}

/* All-reduce between ranks (rt->ar_net), after this rank's slice of every remote member's operand has come
   (gs__rt_net_data): for each group with members here, this rank folds its slice over every member, in group
   order, into the first local member's result, sends it to the group's other ranks and receives theirs into the
   same result, which the other local members copy. Each rank folds 1/Q of the elements (Q ranks in the group)
   and receives (Q - 1)/Q of an operand twice; every element is still one left fold in group order. The results
   are made here (fast_done). false after recording a failure. */
GS__FN bool gs__rt_net_ar(gs_runtime *rt, const gs__cplan *p, const char *at) {
    int64_t R = gs__net_size(rt->net), L = rt->D / R, me = gs__net_rank(rt->net), G = p->G, t, t0, j, s, lo, hi, a, b;
    size_t es = gs__compute_size(p->dtype), bytes = (size_t)gs__numel(&p->in) * es;
    int n_send = 0, pass;
    gs__ip_fn *fn = NULL;   /* a reducer computation's instance, made with the first local device's evaluator */
    gs_result err = GS_OK;
    if (p->kind == GS_REDUCE_CUSTOM) err = gs__reducer_new(&rt->devs[rt->d_lo].ex, p->v->reducer, &fn);
    rt->n_xs = 0;
    for (pass = 0; pass < 2 && err == GS_OK; pass++) {   /* 0: fold and send, 1: receive */
        if (pass == 1) n_send = rt->n_xs;
        for (t = rt->d_lo; t < rt->d_hi; t++) {
            int64_t g = p->group_of[t];
            const int64_t *mem = p->ids + g * G;
            if (gs__rt_first_local(rt, p, g) != t) continue;
            gs__rt_ar_slice(rt, p, g, me, &lo, &hi);
            if (pass == 0) {
                for (j = 0; j < G; j++)
                    rt->nsrc[j] = mem[j] / L == me ? gs__rt_at(rt->ins[mem[j]], lo * (int64_t)es) : rt->ins[mem[j]];
                gs__rt_fold_srcs(p, rt->nsrc, gs__rt_at(rt->outs[t], lo * (int64_t)es), hi - lo, fn, &err);
            }
            for (s = 0; s < R; s++) {
                gs__rt_ar_slice(rt, p, g, s, &a, &b);
                if (s == me || !rt->need[rt->D + R + s]) continue;
                if (pass == 1) lo = a, hi = b;
                if (!gs__rt_xs_push(rt, true, s, GS__NET_TAG_DATA + rt->D + g, gs__rt_at(rt->outs[t], lo * (int64_t)es),
                                    (hi - lo) * (int64_t)es)) {
                    err = GS_ERR_OUT_OF_MEMORY;
                    break;
                }
            }
        }
    }
    gs__reducer_free(&rt->devs[rt->d_lo].ctx, fn);
    if (err) {
        gs__rt_net_fail(rt, GS__FAIL_NET, err, err == GS_ERR_OUT_OF_MEMORY ? "out of memory for the transfers between ranks"
                                                                       : rt->devs[rt->d_lo].ctx.errmsg);
        return false;
    }
    if (!gs__rt_net_exchange(rt, n_send, at)) return false;
    for (t = rt->d_lo; t < rt->d_hi; t++)
        if ((t0 = gs__rt_first_local(rt, p, p->group_of[t])) != t) memcpy(rt->outs[t], rt->outs[t0], bytes);
    rt->fast_done = true;
    return true;
}

/* runs [a, b) by their start */
GS__FN int gs__rt_run_cmp(const void *x, const void *y) {
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

/* The rows of sender m's input (of N) that the members of its group on rank s read: its updates to each of them
   (update i goes to member i / U), clamped to the input (an update out of range fails in gs__ra2a_receive on the
   rank of the device receiving it, before any row is read, and the others stop on its notice), merged into
   disjoint runs in increasing order, iv[2k] to iv[2k + 1]. meta: m's input_offsets and send_sizes (K each). iv
   has room for 2 K. Returns the number of runs. Sender and receiver compute the same runs from the same
   metadata. */
GS__FN int64_t gs__rt_ragged_runs(const gs_runtime *rt, const gs__cplan *p, int64_t m, const int64_t *meta, int64_t s,
                                  int64_t *iv) {
    int64_t L = rt->d_hi - rt->d_lo, K = p->ra.K, U = K / p->G, N = p->ra.N, n = 0, j, i, a, b, k, q;
    const int64_t *mem = p->ids + p->group_of[m] * p->G;
    for (j = 0; j < p->G; j++) {
        if (mem[j] / L != s) continue;
        for (i = j * U; i < (j + 1) * U; i++) {
            if (meta[K + i] <= 0) continue;
            a = GS__MAX(0, GS__MIN(meta[i], N));
            b = meta[K + i] > N - a ? N : a + meta[K + i];
            if (b <= a) continue;
            iv[2 * n] = a;
            iv[2 * n + 1] = b;
            n++;
        }
    }
    qsort(iv, (size_t)n, 2 * sizeof(int64_t), gs__rt_run_cmp);
    for (k = 0, q = 0; k < n; k++) {   /* merge overlapping and touching runs */
        if (q > 0 && iv[2 * k] <= iv[2 * (q - 1) + 1]) {
            iv[2 * (q - 1) + 1] = GS__MAX(iv[2 * (q - 1) + 1], iv[2 * k + 1]);
            continue;
        }
        iv[2 * q] = iv[2 * k];
        iv[2 * q + 1] = iv[2 * k + 1];
        q++;
    }
    return q;
}

/* Ragged-all-to-all between ranks (rt->ra_net), after every remote member's metadata has come (gs__rt_net_data
   put it into room for the member's whole input): each local device sends each other rank only the rows its
   members there read (gs__rt_ragged_runs on its own metadata), straight from its input; each remote member's runs
   for this rank land at their offsets in that room, where gs__ra2a_receive reads them. false after recording a
   failure. */
GS__FN bool gs__rt_net_ragged(gs_runtime *rt, const gs__cplan *p, const char *at) {
    int64_t R = gs__net_size(rt->net), L = rt->D / R, me = gs__net_rank(rt->net), rb = p->ra.row_bytes, d, s, k, n;
    int64_t *iv = (int64_t *)gs__malloc(rt->ctx, sizeof(int64_t) * (size_t)(2 * p->ra.K + 2));
    int n_send;
    bool ok = iv != NULL;
    rt->n_xs = 0;
    for (d = rt->d_lo; ok && d < rt->d_hi; d++)
        for (s = 0; ok && s < R; s++) {
            if (s == me) continue;
            n = gs__rt_ragged_runs(rt, p, d, (const int64_t *)(const void *)gs__rt_at(rt->ins[d], p->ra_meta), s, iv);
            for (k = 0; ok && k < n; k++)
                ok = gs__rt_xs_push(rt, true, s, GS__NET_TAG_DATA + d, gs__rt_at(rt->ins[d], iv[2 * k] * rb),
                                    (iv[2 * k + 1] - iv[2 * k]) * rb);
        }
    n_send = rt->n_xs;
    for (d = 0; ok && d < rt->D; d++) {
        if (d / L == me || gs__rt_first_local(rt, p, p->group_of[d]) < 0) continue;
        n = gs__rt_ragged_runs(rt, p, d, (const int64_t *)(const void *)gs__rt_at(rt->ins[d], p->ra_meta), me, iv);
        for (k = 0; ok && k < n; k++)
            ok = gs__rt_xs_push(rt, true, d / L, GS__NET_TAG_DATA + d, gs__rt_at(rt->ins[d], iv[2 * k] * rb),
                                (iv[2 * k + 1] - iv[2 * k]) * rb);
    }
    gs__free(rt->ctx, iv);
    if (!ok) {
        gs__rt_net_fail(rt, GS__FAIL_NET, GS_ERR_OUT_OF_MEMORY, "out of memory for the transfers between ranks");
        return false;
    }
    if (!gs__rt_net_exchange(rt, n_send, at)) return false;
    return true;
}

/* The rank-level step of a rendezvous (the first worker; the others wait). The posts (what each rank is at)
   and the collective's operands travel in one round: both are started, the posts are waited for and compared
   (ranks at different collectives fail here, before their operands are used), then the operands are waited
   for. With fast_reduce an applicable all-reduce is done by MPI after the posts. */
GS__FN bool gs__rt_net_step(gs_runtime *rt, const gs__post *me, const gs__cplan *p) {
    int64_t R = gs__net_size(rt->net), L = rt->D / R, my = gs__net_rank(rt->net), r;
    int64_t mine[GS__RT_SIGN], *all = (int64_t *)gs__malloc(rt->ctx, sizeof(int64_t) * GS__RT_SIGN * (size_t)R + 1);
    uint8_t *late = rt->need + rt->D;
    int rc = GS__NET_OK, code = 0, mark;
    int64_t sent0 = 0;
    char msg[1024], a[384], b[384];
    bool ok = false, fast = p && gs__rt_net_fast_ok(rt, p);
    rt->fast_done = false;
    gs__rt_sign(rt, me, mine);
    gs__rt_sign_text(rt, mine, a, sizeof a);
    if (!all) {
        gs__rt_net_fail(rt, GS__FAIL_NET, GS_ERR_OUT_OF_MEMORY, "out of memory at a rendezvous between ranks");
        return false;
    }
    rt->n_xs = 0;
    for (r = 0; r < R && rc == GS__NET_OK; r++)
        if (r != my) {
            gs__net_xfer x = {(int)r, GS__NET_TAG_POST, all + r * GS__RT_SIGN, (int64_t)sizeof mine};
            gs__net_xfer y = {(int)r, GS__NET_TAG_POST, mine, (int64_t)sizeof mine};
            rc = gs__net_start(rt->net, &x, 1, true, &code, msg, sizeof msg);
            if (rc == GS__NET_OK) rc = gs__net_start(rt->net, &y, 1, false, &code, msg, sizeof msg);
        }
    if (rc != GS__NET_OK) {
        gs__rt_net_failed(rt, rc, code, msg, NULL, a);
        goto done;
    }
    mark = gs__net_started(rt->net);
    sent0 = gs__net_sent(rt->net);
    if (p && !fast && !gs__rt_net_data(rt, p, a)) goto done;
    rc = gs__net_finish(rt->net, mark, rt->watchdog_us, &rt->abort, late, &code, msg, sizeof msg);
    if (rc != GS__NET_OK) {
        gs__rt_net_failed(rt, rc, code, msg, late, a);
        goto done;
    }
    for (r = 0; r < R; r++)
        if (r != my && memcmp(all + r * GS__RT_SIGN, mine, sizeof mine) != 0) {
            int64_t lo = GS__MIN(r, my), hi = GS__MAX(r, my);
            gs__rt_sign_text(rt, lo == my ? mine : all + lo * GS__RT_SIGN, a, sizeof a);
            gs__rt_sign_text(rt, hi == my ? mine : all + hi * GS__RT_SIGN, b, sizeof b);
            snprintf(msg, sizeof msg, "collective mismatch: rank %lld (device %lld) is at %s but rank %lld (device %lld) is at %s",
                     (long long)lo, (long long)(lo * L), a, (long long)hi, (long long)(hi * L), b);
            gs__rt_net_fail(rt, GS__FAIL_NET, GS_ERR_INVALID_ARG, msg);
            goto done;
        }
    ok = gs__rt_net_wait_all(rt, a) && (!fast || gs__rt_net_fast(rt, p, a)) && (fast || !p || !rt->ar_net || gs__rt_net_ar(rt, p, a)) &&
         (!p || !rt->ra_net || gs__rt_net_ragged(rt, p, a));
    if (GS__LOAD(&rt->abort)) ok = false;
    if (p && rt->net_cstat && p >= rt->plans && p < rt->plans + rt->n_plans)
        rt->net_cstat[p - rt->plans] += gs__net_sent(rt->net) - sent0;
done:
    gs__free(rt->ctx, all);
    return ok;
}

/* A piece of local device t's share of plan p on ranks. Reduce-scatter and all-to-all read the pieces of
   remote members where gs__rt_net_data put them (nsrc / nkind); the rest is the engine's own mode. */
GS__FN void gs__rt_net_piece(gs_runtime *rt, const gs__cplan *p, int64_t t, int64_t k, int64_t S, gs__ip_fn *fn,
                             gs_result *err) {
    const void *const *src;
    const uint8_t *kind;
    gs__rt_pieces x;
    int64_t G = p->G, r, blk, lo, hi, q, run, o, a, b, j;
    const int64_t *mem;
    if (p->op != GS_OP_REDUCE_SCATTER && p->op != GS_OP_ALL_TO_ALL) {
        gs__coll_piece(p, t, k, S, rt->ins, rt->outs, true, fn, err);
        return;
    }
    src = rt->nsrc + (t - rt->d_lo) * G;
    kind = rt->nkind + (t - rt->d_lo) * G;
    if (p->op == GS_OP_ALL_TO_ALL) {
        gs__rt_a2a_piece(p, t, k, S, rt->ins, rt->outs, src, kind, false);
        return;
    }
    r = p->rank_of[t];
    /* reduce-scatter: element i of row o of t's result folds element i of row o of block r of every member, in
       group order, as the engine does (the local members' from their operands, rows of G * c; the remote
       members' as received, rows of c), a block of elements at a time */
    gs__rt_pieces_of(p, &x);
    if (x.n == 0) return;
    mem = p->ids + p->group_of[t] * G;
    blk = GS__RT_BLOCK * 4 / (int64_t)x.es;
    gs__rt_split(x.n, k, S, 16, &lo, &hi);
    for (q = lo, o = lo / x.c, a = lo % x.c; q < hi; q += run, o++, a = 0) {
        run = GS__MIN(x.c - a, hi - q);
        for (b = 0; b < run; b += blk) {
            int64_t m = GS__MIN(blk, run - b);
            char *dst = (char *)rt->outs[t] + (q + b) * (int64_t)x.es;
            const char *x0 = NULL;
            for (j = 0; j < G; j++) {
                const char *y = kind[j] ? (const char *)src[j] + (o * x.c + a + b) * (int64_t)x.es
                                        : (const char *)rt->ins[mem[j]] + ((o * G + r) * x.c + a + b) * (int64_t)x.es;
                if (G == 1) memcpy(dst, y, (size_t)m * x.es);
                else if (j == 0) x0 = y;
                else gs__rt_fold(p->dtype, p->kind, dst, j == 1 ? x0 : dst, y, m, fn, err);
            }
        }
    }
}
#endif /* GSHARD_MPI */

/* ---------------------------------------------------------------------------------------------------------
   One device's run
   ------------------------------------------------------------------------------------------------------- */
GS__FN void gs__rt_dev_release(gs__dev *dev) {
    gs_runtime *rt = dev->rt;
    int k;
    gs__ev_free(dev->ev);
    dev->ev = NULL;
    if (dev->params && dev->owned)
        for (k = 0; k < rt->n_in; k++)
            if (dev->owned[k]) gs__free(rt->ctx, dev->params[k].data);
    gs__free(rt->ctx, dev->params);
    gs__free(rt->ctx, dev->owned);
    gs__free(rt->ctx, dev->ra_buf);
    dev->params = NULL;
    dev->owned = NULL;
    dev->ra_buf = NULL;
    dev->ra_cap = 0;
}

/* Frees the results (after they were copied out, or when the run failed). */
GS__FN void gs__rt_dev_free_results(gs__dev *dev) {
    gs_runtime *rt = dev->rt;
    int k;
    if (!dev->results) return;
    if (dev->have_results)
        for (k = 0; k < rt->n_out; k++) gs__free(rt->ctx, dev->results[k].data);
    dev->have_results = false;
    gs__free(rt->ctx, dev->results);
    dev->results = NULL;
}

/* Sets up device d: its context, exec, parameters (compute format) and evaluator. */
GS__FN gs_result gs__rt_dev_begin(gs_runtime *rt, gs__dev *dev) {
    int64_t d = dev->id;
    int k;
    gs_result r;
    gs__rt_scratch_ctx(rt->ctx, &dev->ctx);
    memset(&dev->ex, 0, sizeof dev->ex);
    memset(&dev->post, 0, sizeof dev->post);
    dev->ex.ctx = &dev->ctx;
    dev->ex.partition_id = d;
    dev->ex.num_partitions = rt->D;
    dev->ex.user = dev;
    dev->ex.observe = rt->tr ? gs__rt_trace_observe : rt->observe;
    dev->ex.observe_user = rt->observe_user;
    dev->tr_coll = -1;
    dev->ex.collective = gs__rt_hook;
    dev->state = GS__DEV_RUNNING;
    dev->live = true;
    dev->have_results = false;
    dev->where = NULL;
    dev->ev = NULL;
    dev->param_bytes = 0;
    dev->peak = 0;
    dev->params = (gs__buf *)gs__malloc(&dev->ctx, sizeof(gs__buf) * (size_t)(rt->n_in + 1));
    dev->owned = (uint8_t *)gs__malloc(&dev->ctx, (size_t)rt->n_in + 1);
    dev->results = (gs__buf *)gs__malloc(&dev->ctx, sizeof(gs__buf) * (size_t)(rt->n_out + 1));
    if (dev->owned) memset(dev->owned, 0, (size_t)rt->n_in + 1);
    if (dev->results) memset(dev->results, 0, sizeof(gs__buf) * (size_t)(rt->n_out + 1));
    if (!dev->params || !dev->owned || !dev->results) return GS_ERR_OUT_OF_MEMORY;
    for (k = 0; k < rt->n_in; k++) {
        const gs_shape *s = &rt->in_shapes[k];
        dev->param_bytes += (int64_t)gs_shape_bytes(s);
        if (rt->c_inputs) {
            dev->params[k] = rt->c_inputs[d * rt->n_in + k];
            continue;
        }
        dev->params[k].shape = *s;
        dev->params[k].data = (void *)(uintptr_t)rt->st_inputs[d * rt->n_in + k];
        if (gs__fmt_differs(s->dtype)) {
            int64_t n = gs__numel(s);
            void *c = gs__malloc(&dev->ctx, (size_t)n * gs__compute_size(s->dtype) + 1);
            if (!c) return GS_ERR_OUT_OF_MEMORY;
            gs__rt_convert(s->dtype, c, GS__FMT_COMPUTE, rt->st_inputs[d * rt->n_in + k], GS__FMT_STORAGE, n);
            dev->params[k].data = c;
            dev->owned[k] = 1;
        }
    }
    r = gs__ev_new(&dev->ex, rt->g, dev->params, dev->results, &dev->ev);
    return r;
}

/* Writes the results to the caller's storage-format outputs, if the run has them. */
GS__FN void gs__rt_dev_outputs(gs_runtime *rt, gs__dev *dev) {
    int k;
    if (!rt->st_outputs) return;
    for (k = 0; k < rt->n_out; k++)
        gs__rt_convert(rt->out_shapes[k].dtype, rt->st_outputs[dev->id * rt->n_out + k], GS__FMT_STORAGE,
                       dev->results[k].data, GS__FMT_COMPUTE, gs__numel(&rt->out_shapes[k]));
}

/* The end of a device's run: where it stopped, its peak, its parameters and evaluator freed (once). */
GS__FN void gs__rt_dev_end(gs_runtime *rt, gs__dev *dev) {
    if (!dev->live) return;
    dev->live = false;
    dev->where = gs__ev_current(dev->ev);
    dev->peak = dev->param_bytes + dev->ex.peak_bytes;
    if (dev->state == GS__DEV_DONE) gs__rt_dev_outputs(rt, dev);
    gs__rt_dev_release(dev);
}

GS__FN void gs__rt_dev_failed(gs_runtime *rt, gs__dev *dev, gs_result r) {
    if (dev->ctx.err == GS_OK) gs__err(&dev->ctx, r, "%s", gs_result_str(r));
    dev->state = GS__DEV_FAILED;
    gs__rt_fail(rt, GS__FAIL_DEVICE, dev->id, 0);
}

/* ---------------------------------------------------------------------------------------------------------
   A worker: its devices [d0, d1), their turns and their rendezvous
   ------------------------------------------------------------------------------------------------------- */
/* Worker w's devices, and their rendezvous when all of them have arrived (see the top of this file). Returns
   false when the run ends (a mismatch, a failure, an abort, a timeout) and true after a collective or after
   the final "done" rendezvous. */
GS__FN bool gs__rt_rendezvous(gs_runtime *rt, int64_t w, int64_t d0, int64_t d1) {
    int64_t L = rt->d_hi - rt->d_lo, W = rt->lanes, S = rt->pieces, U = L * rt->pieces, d, v, u;
    const gs__post *me = &rt->devs[d0].post;
    const gs__cplan *p;
    int index = 0;
    /* this worker's devices agree (their posts are final: nobody else writes them) */
    for (d = d0; d + 1 < d1; d++)
        if (!gs__post_match(&rt->devs[d].post, &rt->devs[d + 1].post)) {
            gs__rt_fail(rt, GS__FAIL_MISMATCH, d, 0);
            return false;
        }
    if (W > 1) {
        /* a worker that failed before arriving has raised the abort flag, seen here after the barrier */
        if (!gs__rt_barrier(rt, &rt->devs[d0]) || GS__LOAD(&rt->abort)) return false;
        for (v = 0; v < W; v++) {   /* the boundaries between workers: the same checks on every worker */
            int64_t b = L * v / W, a = rt->d_lo + (b + L - 1) % L;
            if (!gs__post_match(&rt->devs[a].post, &rt->devs[rt->d_lo + b].post)) {
                gs__rt_fail(rt, GS__FAIL_MISMATCH, a, 0);
                return false;
            }
        }
    }
    p = me->kind == GS__POST_COLL ? gs__rt_plan_of(rt, me->v, &index) : NULL;
#if defined(GSHARD_MPI)
    if (rt->net && (me->kind == GS__POST_DONE || p)) {
        /* the first worker meets the other ranks; the others wait for it (it is watched by the watchdog) */
        if (w == 0 && !gs__rt_net_step(rt, me, p)) return false;
        if (W > 1) {
            int64_t waited = 0;
            if (gs__barrier_wait(&rt->bar, -1, &waited) != GS__BARRIER_OK) return false;
        }
        if (GS__LOAD(&rt->abort)) return false;
    }
#endif
    if (me->kind == GS__POST_DONE) return true;   /* posts are not written again: no second barrier */
    if (!p) {
        gs__rt_dev_failed(rt, &rt->devs[d0], gs__err(&rt->devs[d0].ctx, GS_ERR_INVALID_ARG, "%s %s: no plan for this collective",
                                                       gs_op_name(me->v->op), me->v->name));
        return false;
    }
    if (p->op == GS_OP_RAGGED_ALL_TO_ALL) {
        /* the updates are data: each of this worker's devices checks what it receives before anyone writes (a
           piece that would not fit writes nothing either) */
        char msg[768];
        for (d = d0; d < d1; d++)
            if (!gs__rt_ragged_recv(p, d, rt->ins, NULL, msg, sizeof msg)) {
                gs__rt_dev_failed(rt, &rt->devs[d], gs__err(&rt->devs[d].ctx, GS_ERR_INVALID_ARG, "%s", msg));
                return false;
            }
    }
#if defined(GSHARD_MPI)
    if (rt->fast_done) U = 0;   /* MPI did it */
#endif
    {
        /* a reducer computation: one instance for this worker's pieces, made with its first device's evaluator */
        gs__ip_fn *fn = NULL;
        gs_result err = GS_OK;
        if (p->kind == GS_REDUCE_CUSTOM && U * (w + 1) / W > U * w / W)
            err = gs__reducer_new(&rt->devs[d0].ex, p->v->reducer, &fn);
        for (u = U * w / W; err == GS_OK && u < U * (w + 1) / W; u++) {
#if defined(GSHARD_MPI)
            if (rt->net) {
                gs__rt_net_piece(rt, p, rt->d_lo + u / S, u % S, S, fn, &err);
                continue;
            }
#endif
            gs__coll_piece(p, rt->d_lo + u / S, u % S, S, rt->ins, rt->outs, rt->own, fn, &err);
        }
        gs__reducer_free(&rt->devs[d0].ctx, fn);
        if (err) {
            gs__rt_dev_failed(rt, &rt->devs[d0], gs__err_prefix(&rt->devs[d0].ctx, "%s %s: reducer '%s': ", gs_op_name(p->v->op),
                                                                  p->v->name, p->v->reducer->name));
            return false;
        }
    }
    if (!gs__rt_barrier(rt, &rt->devs[d0])) return false;
    for (d = d0; d < d1; d++) {
        gs__rt_count(&rt->devs[d], p, index);
        rt->devs[d].state = GS__DEV_RUNNING;   /* the next step completes the instruction */
    }
    return true;
}

/* Device dev's turn: steps until it reaches a rendezvous (a collective: paused; or the end: done), or for one
   instruction (lockstep), or for about GS__RT_SLICE_US (threaded: so that a device that computes for long
   lets the others of its worker arrive, and the watchdog sees them waiting). Returns false when the run ends. */
GS__FN bool gs__rt_turn(gs_runtime *rt, gs__dev *dev) {
    int64_t n, t0 = rt->mode == GS_RUNTIME_LOCKSTEP ? 0 : gs__now_us();
    if (rt->tr) dev->tr_last = gs__now_us() - rt->tr_t0;
    for (n = 1;; n++) {
        int status;
        gs_result r = gs__ev_step(dev->ev, &status);
        if (r) {
            gs__rt_dev_failed(rt, dev, r);
            return false;
        }
        if (status == GS__EV_PAUSED) {
            dev->state = GS__DEV_PAUSED;
            dev->arrivals++;
            return true;
        }
        if (status == GS__EV_DONE) {
            dev->state = GS__DEV_DONE;
            dev->have_results = true;
            gs__rt_post(dev, GS__POST_DONE, NULL, NULL);
            dev->arrivals++;
            return true;
        }
        if (GS__LOAD(&rt->abort)) return false;
        if (rt->mode == GS_RUNTIME_LOCKSTEP) return true;
        if ((n & 63) == 0 && gs__now_us() - t0 > GS__RT_SLICE_US) return true;
    }
}

/* Worker w runs its devices to the end of the program (or of the run). */
GS__FN void gs__rt_drive(gs_runtime *rt, int64_t w) {
    int64_t L = rt->d_hi - rt->d_lo, d0 = rt->d_lo + L * w / rt->lanes, d1 = rt->d_lo + L * (w + 1) / rt->lanes, d;
    int64_t since = -1, waiter = 0;   /* when the first of its devices reached the current rendezvous, and which */
    for (d = d0; d < d1; d++) {
        gs_result r = gs__rt_dev_begin(rt, &rt->devs[d]);
        if (r) {
            gs__rt_dev_failed(rt, &rt->devs[d], r);
            goto end;
        }
    }
    for (;;) {
        int64_t arrived = 0;
        for (d = d0; d < d1; d++) {
            gs__dev *dev = &rt->devs[d];
            if (dev->state == GS__DEV_RUNNING && !gs__rt_turn(rt, dev)) goto end;
            if (dev->state == GS__DEV_RUNNING) continue;
            arrived++;
            if (since < 0 && rt->watchdog_us >= 0) {
                since = gs__now_us();
                waiter = d;
            }
        }
        if (arrived == d1 - d0) {
            if (!gs__rt_rendezvous(rt, w, d0, d1)) goto end;
            if (rt->devs[d0].post.kind == GS__POST_DONE) break;
            since = -1;
        } else if (since >= 0 && gs__now_us() - since > rt->watchdog_us) {
            /* the report names the waiting device; the late ones are found by their arrival counts */
            gs__rt_fail(rt, GS__FAIL_TIMEOUT, waiter, (gs__now_us() - since) / 1000);
            goto end;
        }
    }
end:
    /* after a failure, another worker may still be running its pieces of a collective on these devices'
       buffers (it passed barrier A before the failure): they are ended after every worker has stopped */
    if (GS__LOAD(&rt->abort)) return;
    for (d = d0; d < d1; d++) gs__rt_dev_end(rt, &rt->devs[d]);
}

#if !defined(GSHARD_NO_THREADS)
/* A pool worker's job: its devices run the program, or it runs its share of a direct collective. */
GS__FN void gs__rt_job(void *arg, int worker) {
    gs_runtime *rt = (gs_runtime *)arg;
    int64_t i, u, S = rt->pieces, U = rt->D * rt->pieces;
    int64_t u0 = U * worker / rt->lanes, u1 = U * (worker + 1) / rt->lanes;
    gs_result err = GS_OK;   /* direct collectives have no reducer computation */
    if (!rt->direct) {
        gs__rt_drive(rt, worker);
        return;
    }
    /* one barrier per repetition: the buffers stay the same and every output element has one writer, so
       "everyone finished repetition i" is also "the inputs of repetition i + 1 are ready"; the pool's join ends
       the last one */
    for (i = 0; i < rt->repeat; i++) {
        if (i > 0 && !gs__rt_barrier(rt, &rt->devs[0])) return;
        for (u = u0; u < u1; u++) gs__coll_piece(rt->direct, u / S, u % S, S, rt->ins, rt->outs, false, NULL, &err);
    }
}
#endif

/* ---------------------------------------------------------------------------------------------------------
   A run
   ------------------------------------------------------------------------------------------------------- */
/* Plans for every collective instruction of g and of the loops and conditionals it contains (each graph once). */
GS__FN gs_result gs__rt_collect(gs_runtime *rt, gs_graph *g, gs_graph ***seen, int *n_seen, int *cap_seen,
                                int *cap_plans, int depth) {
    int i, k;
    if (depth > GS__EV_MAX_DEPTH) return gs__err(rt->ctx, GS_ERR_UNSUPPORTED, "gs_runtime_run: loops nested too deep");
    for (k = 0; k < *n_seen; k++)
        if ((*seen)[k] == g) return GS_OK;
    if (*n_seen == *cap_seen) {
        int cap = *cap_seen ? 2 * *cap_seen : 8;
        gs_graph **ns = (gs_graph **)gs__malloc(rt->ctx, sizeof(gs_graph *) * (size_t)cap);
        if (!ns) return GS_ERR_OUT_OF_MEMORY;
        if (*n_seen) memcpy(ns, *seen, sizeof(gs_graph *) * (size_t)*n_seen);
        gs__free(rt->ctx, *seen);
        *seen = ns;
        *cap_seen = cap;
    }
    (*seen)[(*n_seen)++] = g;
    for (i = 0; i < (int)stbds_arrlen(g->values); i++) {
        gs_value *v = g->values[i];
        gs_result r;
        if (gs__n_subgraphs(v)) {   /* a while's condition and body, a conditional's branches */
            int j;
            for (j = 0; j < gs__n_subgraphs(v); j++) {
                if (!gs__subgraph(v, j))
                    return gs__err(rt->ctx, GS_ERR_INVALID_ARG, "%s %s: a called computation is missing", gs_op_name(v->op), v->name);
                if ((r = gs__rt_collect(rt, gs__subgraph(v, j), seen, n_seen, cap_seen, cap_plans, depth + 1)) != GS_OK) return r;
            }
            continue;
        }
        if (v->op != GS_OP_ALL_REDUCE && v->op != GS_OP_ALL_GATHER && v->op != GS_OP_REDUCE_SCATTER &&
            v->op != GS_OP_ALL_TO_ALL && v->op != GS_OP_COLLECTIVE_PERMUTE && v->op != GS_OP_RAGGED_ALL_TO_ALL)
            continue;
        if ((v->n_operands != 1 && v->op != GS_OP_RAGGED_ALL_TO_ALL) || !v->operands[0])
            return gs__err(rt->ctx, GS_ERR_INVALID_ARG, "%s %s: needs one operand", gs_op_name(v->op), v->name);
        if (rt->n_plans == *cap_plans) {
            int cap = *cap_plans ? 2 * *cap_plans : 8;
            gs__cplan *np = (gs__cplan *)gs__malloc(rt->ctx, sizeof(gs__cplan) * (size_t)cap);
            if (!np) return GS_ERR_OUT_OF_MEMORY;
            if (rt->n_plans) memcpy(np, rt->plans, sizeof(gs__cplan) * (size_t)rt->n_plans);
            gs__free(rt->ctx, rt->plans);
            rt->plans = np;
            *cap_plans = cap;
        }
        {
            gs_collective_spec spec = gs__cplan_spec_of(v);
            r = gs__cplan_init(rt->ctx, rt->D, &spec, v, &rt->plans[rt->n_plans]);
            if (r) return r;
            rt->n_plans++;
        }
    }
    return GS_OK;
}

/* Checks g for a run and fills the run's shapes and plans. */
GS__FN gs_result gs__rt_prepare(gs_runtime *rt, gs_graph *g) {
    gs_ctx *ctx = rt->ctx;
    int np, i, j, k;
    gs_graph **seen = NULL;
    int n_seen = 0, cap_seen = 0, cap_plans = 0;
    gs_result r;
    if (g->ctx != ctx) return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_runtime_run: graph %s belongs to another context", g->name);
    r = gs__verify_once(g);
    if (r) return r;
    if (g->num_partitions != 1 && g->num_partitions != rt->D)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_runtime_run: %s is written for %lld partitions but the runtime has %lld devices",
                       g->name, (long long)g->num_partitions, (long long)rt->D);
    gs__rt_free_plans(rt);
    gs__free(ctx, rt->in_shapes);
    gs__free(ctx, rt->out_shapes);
    rt->in_shapes = rt->out_shapes = NULL;
    np = (int)stbds_arrlen(g->params);
    rt->n_in = 0;
    for (i = 0; i < np; i++) rt->n_in += g->params[i]->shape.dtype == GS_TUPLE ? g->params[i]->n_tuple : 1;
    rt->n_out = gs_graph_num_outputs(g);
    rt->in_shapes = (gs_shape *)gs__malloc(ctx, sizeof(gs_shape) * (size_t)(rt->n_in + 1));
    rt->out_shapes = (gs_shape *)gs__malloc(ctx, sizeof(gs_shape) * (size_t)(rt->n_out + 1));
    if (!rt->in_shapes || !rt->out_shapes) return GS_ERR_OUT_OF_MEMORY;
    for (i = 0, k = 0; i < np; i++) {
        const gs_value *p = g->params[i];
        if (p->shape.dtype == GS_TUPLE)
            for (j = 0; j < p->n_tuple; j++) rt->in_shapes[k++] = p->tuple[j];
        else
            rt->in_shapes[k++] = p->shape;
    }
    for (k = 0; k < rt->n_out; k++) rt->out_shapes[k] = gs_graph_output_shape(g, k);
    r = gs__rt_collect(rt, g, &seen, &n_seen, &cap_seen, &cap_plans, 0);
    gs__free(ctx, seen);
    if (r) gs__rt_free_plans(rt);
    rt->g = g;
    return r;
}

/* One message for the first cause of failure, in rt's context. */
GS__FN gs_result gs__rt_report(gs_runtime *rt) {
    int64_t d, D = rt->D, lo = rt->d_lo, hi = rt->d_hi;
    char a[512], b[512];
    switch (rt->failure) {
#if defined(GSHARD_MPI)
    case GS__FAIL_NET:
    case GS__FAIL_REMOTE: return gs__err(rt->ctx, rt->net_code ? (gs_result)rt->net_code : GS_ERR_THREAD, "%s", rt->net_msg);
#endif
    case GS__FAIL_DEVICE:
        for (d = 0; d < D; d++) {
            gs__dev *dev = &rt->devs[d];
            if (dev->state == GS__DEV_FAILED) {
                /* the device's own message may not name the instruction (out of memory does not) */
                const gs_value *w = dev->where;
                const char *msg = dev->ctx.err ? dev->ctx.errmsg : "failed";
                if (w && !strstr(msg, w->name))
                    return gs__err(rt->ctx, dev->ctx.err ? dev->ctx.err : GS_ERR_INVALID_ARG, "device %lld, at %s %s: %s",
                                   (long long)d, gs_op_name(w->op), w->name, msg);
                return gs__err(rt->ctx, dev->ctx.err ? dev->ctx.err : GS_ERR_INVALID_ARG, "device %lld: %s", (long long)d, msg);
            }
        }
        return gs__err(rt->ctx, GS_ERR_THREAD, "gs_runtime_run: a device failed");
    case GS__FAIL_MISMATCH:
        /* the pair that was found to differ (fail_dev and the next device): both had posted then, while a scan
           from device 0 could meet a device of another worker that had not arrived yet and name it instead */
        if (rt->fail_dev >= lo && rt->fail_dev < hi) {
            int64_t e = lo + (rt->fail_dev + 1 - lo) % (hi - lo), f = rt->fail_dev;
            if (e < f) {   /* the lower device first */
                f = e;
                e = rt->fail_dev;
            }
            gs__post_describe(&rt->devs[f].post, a, sizeof a);
            gs__post_describe(&rt->devs[e].post, b, sizeof b);
            return gs__err(rt->ctx, GS_ERR_INVALID_ARG, "collective mismatch: device %lld is at %s but device %lld is at %s",
                           (long long)f, a, (long long)e, b);
        }
        return gs__err(rt->ctx, GS_ERR_INVALID_ARG, "collective mismatch between devices");
    case GS__FAIL_TIMEOUT: {
        int64_t most = 0, late = -1, n_late = 0;
        size_t n = 0;
        for (d = lo; d < hi; d++)
            if (rt->devs[d].arrivals > most) most = rt->devs[d].arrivals;
        /* every device that did not arrive is named (the first 8), not only the first */
        for (d = lo; d < hi; d++)
            if (rt->devs[d].arrivals < most) {
                if (late < 0) late = d;
                if (n_late < 8 && n < sizeof b)
                    n += (size_t)snprintf(b + n, sizeof b - n, "%s%lld", n_late ? ", " : "", (long long)d);
                n_late++;
            }
        if (n_late > 8 && n < sizeof b) snprintf(b + n, sizeof b - n, " and %lld more", (long long)(n_late - 8));
        if (late >= 0) {
            const gs_value *w = rt->devs[late].where;
            gs__post_describe(&rt->devs[rt->fail_dev].post, a, sizeof a);
            return gs__err(rt->ctx, GS_ERR_THREAD,
                           "watchdog: device %lld waited %lld ms at %s; device%s %s never arrived (device %lld was at %s %s)",
                           (long long)rt->fail_dev, (long long)rt->fail_wait_ms, a, n_late > 1 ? "s" : "", b,
                           (long long)late, w ? gs_op_name(w->op) : "the end", w ? w->name : "of the program");
        }
        return gs__err(rt->ctx, GS_ERR_THREAD, "watchdog: device %lld waited %lld ms at a rendezvous", (long long)rt->fail_dev,
                       (long long)rt->fail_wait_ms);
    }
    default: return GS_OK;
    }
}

/* Totals for gs_runtime_get_stats. */
GS__FN gs_result gs__rt_stats(gs_runtime *rt, int64_t *cstat_all, double seconds) {
    int i;
    int64_t d;
    gs__free(rt->ctx, rt->cstats);
    rt->cstats = NULL;
    rt->n_cstats = 0;
    rt->have_stats = false;
    if (rt->n_plans) {
        rt->cstats = (gs_runtime_collective_stats *)gs__malloc(rt->ctx, sizeof(gs_runtime_collective_stats) * (size_t)rt->n_plans);
        if (!rt->cstats) return GS_ERR_OUT_OF_MEMORY;
        memset(rt->cstats, 0, sizeof(gs_runtime_collective_stats) * (size_t)rt->n_plans);
    }
    rt->coll_count = rt->bytes_sent = 0;
    for (i = 0; i < rt->n_plans; i++) {
        gs_runtime_collective_stats *c = &rt->cstats[i];
        const gs__cplan *p = &rt->plans[i];
        c->instruction = p->v;
        c->op = p->op;
        c->group_size = p->G;
        /* ragged-all-to-all: its input (p->in is the packed rows and metadata a device posts) */
        c->operand_bytes = (int64_t)gs_shape_bytes(p->op == GS_OP_RAGGED_ALL_TO_ALL ? &p->v->operands[0]->shape : &p->in);
        c->result_bytes = (int64_t)gs_shape_bytes(&p->out);
        c->count = cstat_all[3 * i];
        c->rank_bytes_sent = cstat_all[3 * (size_t)rt->n_plans * (size_t)rt->D + (size_t)i];
        for (d = 0; d < rt->D; d++) {
            const int64_t *cs = cstat_all + 3 * ((size_t)d * (size_t)rt->n_plans + (size_t)i);
            c->bytes_sent += cs[1];
            c->bytes_received += cs[2];
            if (cs[1] > c->max_device_sent) c->max_device_sent = cs[1];
            if (cs[2] > c->max_device_received) c->max_device_received = cs[2];
        }
        rt->coll_count += c->count;
        rt->bytes_sent += c->bytes_sent;
    }
    rt->n_cstats = rt->n_plans;
    for (d = 0; d < rt->D; d++) {
        rt->peak[d] = rt->devs[d].peak;
        rt->pbytes[d] = rt->devs[d].param_bytes;
    }
    rt->seconds = seconds;
    rt->have_stats = true;
    return GS_OK;
}

#if defined(GSHARD_MPI)
/* The accounting summed over the ranks (each counted its own devices; the others' entries are zero). */
GS__FN gs_result gs__rt_net_totals(gs_runtime *rt, int64_t *cstat_all, size_t n) {
    int64_t d, D = rt->D;
    int64_t *x = (int64_t *)gs__malloc(rt->ctx, sizeof(int64_t) * (n + 2 * (size_t)D));
    if (!x) return GS_ERR_OUT_OF_MEMORY;
    memcpy(x, cstat_all, sizeof(int64_t) * n);
    for (d = 0; d < D; d++) {
        x[n + (size_t)d] = rt->devs[d].peak;
        x[n + (size_t)(D + d)] = rt->devs[d].param_bytes;
    }
    if (!gs__net_sum(rt->net, x, (int64_t)(n + 2 * (size_t)D))) {
        gs__free(rt->ctx, x);
        return gs__err(rt->ctx, GS_ERR_THREAD, "gs_runtime_run: summing the accounting over the ranks failed");
    }
    memcpy(cstat_all, x, sizeof(int64_t) * n);
    for (d = 0; d < D; d++) {
        rt->devs[d].peak = x[n + (size_t)d];
        rt->devs[d].param_bytes = x[n + (size_t)(D + d)];
    }
    gs__free(rt->ctx, x);
    return GS_OK;
}
#endif

/* Frees every device's results. */
GS__FN void gs__rt_free_results(gs_runtime *rt) {
    int64_t d;
    for (d = 0; d < rt->D; d++) gs__rt_dev_free_results(&rt->devs[d]);
}

/* `lanes` workers take part in what comes next; each device's share of a collective is cut into
   lanes / gcd(L, lanes) pieces (L: the devices of this process), so that every worker gets an equal count. */
GS__FN void gs__rt_lanes(gs_runtime *rt, int64_t lanes) {
    int64_t a = rt->d_hi - rt->d_lo, b = lanes;
    while (b) {
        int64_t c = a % b;
        a = b;
        b = c;
    }
    rt->lanes = lanes;
    rt->pieces = lanes / a;
}

/* Runs the prepared program (gs__rt_prepare) with storage-format inputs st_in or compute-format inputs c_in.
   With st_out the results are written there and freed; without, they stay in each device's results for the
   caller (free them with gs__rt_free_results). */
GS__FN gs_result gs__rt_go(gs_runtime *rt, const void *const *st_in, const gs__buf *c_in, void *const *st_out) {
    gs_ctx *ctx = rt->ctx;
    int64_t d, t0 = gs__now_us();
    int64_t *cstat_all;
    size_t per = (size_t)3 * (size_t)rt->n_plans;
    gs_result r = GS_OK;
#if defined(GSHARD_MPI)
    if (rt->net && gs__net_broken(rt->net))
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_runtime_run: an earlier run failed between the ranks; the runtime "
                       "cannot run again (end the job)");
#endif
    /* every device's counters, then this rank's bytes between ranks per plan */
    cstat_all = (int64_t *)gs__malloc(ctx, sizeof(int64_t) * (per * (size_t)rt->D + (size_t)rt->n_plans + 1));
    if (!cstat_all || gs__rt_trace_begin(rt) != GS_OK) {
        gs__free(ctx, cstat_all);
        return gs__err(ctx, GS_ERR_OUT_OF_MEMORY, "gs_runtime_run: out of memory");
    }
    memset(cstat_all, 0, sizeof(int64_t) * (per * (size_t)rt->D + (size_t)rt->n_plans + 1));
    gs__rt_lanes(rt, rt->workers);
    if (!gs__barrier_init(&rt->bar, (int)rt->lanes, &rt->abort, rt->cpus)) {
        gs__free(ctx, cstat_all);
        return gs__err(ctx, GS_ERR_THREAD, "gs_runtime_run: cannot create a barrier");
    }
    rt->net_cstat = cstat_all + per * (size_t)rt->D;
    rt->abort = 0;
    rt->failure = GS__FAIL_NONE;
    rt->fail_dev = 0;
    rt->fail_wait_ms = 0;
    rt->direct = NULL;
    rt->st_inputs = st_in;
    rt->c_inputs = c_in;
    rt->st_outputs = st_out;
    for (d = 0; d < rt->D; d++) {
        rt->devs[d].cstat = cstat_all + per * (size_t)d;
        rt->devs[d].arrivals = 0;
        rt->devs[d].state = GS__DEV_RUNNING;
        rt->devs[d].have_results = false;
        rt->devs[d].live = false;
        rt->devs[d].results = NULL;
        rt->devs[d].peak = rt->devs[d].param_bytes = 0;
        memset(&rt->devs[d].post, 0, sizeof rt->devs[d].post);
    }
#if !defined(GSHARD_NO_THREADS)
    if (rt->mode == GS_RUNTIME_THREADED) gs__pool_run(&rt->pool, gs__rt_job, rt);
    else gs__rt_drive(rt, 0);
#else
    gs__rt_drive(rt, 0);
#endif
    gs__barrier_destroy(&rt->bar);
    if (rt->failure != GS__FAIL_NONE) {
        for (d = 0; d < rt->D; d++) {
            gs__dev *dev = &rt->devs[d];
            if (dev->state != GS__DEV_FAILED) dev->state = GS__DEV_STOPPED;
            gs__rt_dev_end(rt, dev);
        }
        r = gs__rt_report(rt);
#if defined(GSHARD_MPI)
        if (rt->net && rt->failure != GS__FAIL_REMOTE) {
            if (rt->failure != GS__FAIL_NET) gs__err_prefix(ctx, "rank %d: ", gs__net_rank(rt->net));
            gs__net_tell(rt->net, (int)r, gs_ctx_error_msg(ctx));
        }
#endif
        gs__rt_free_results(rt);
    } else {
#if defined(GSHARD_MPI)
        if (rt->net) r = gs__rt_net_totals(rt, cstat_all, per * (size_t)rt->D + (size_t)rt->n_plans);
        if (!r)
#endif
        r = gs__rt_stats(rt, cstat_all, (double)(gs__now_us() - t0) * 1e-6);
        if (r) gs__rt_free_results(rt);
        else if (st_out) gs__rt_free_results(rt);
    }
    for (d = 0; d < rt->D; d++) rt->devs[d].cstat = NULL;
    rt->net_cstat = NULL;
    gs__free(ctx, cstat_all);
    gs__rt_free_plans(rt);
    return r;
}

GS_API gs_result gs_runtime_run(gs_runtime *rt, gs_graph *g, const void *const *inputs, void *const *outputs) {
    gs_ctx *ctx;
    gs_result r;
    int64_t d;
    int k;
    if (!rt) return GS_ERR_INVALID_ARG;
    ctx = rt->ctx;
    rt->have_stats = false;
    if (!g) return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_runtime_run: graph is NULL");
    r = gs__rt_prepare(rt, g);
    if (r) return r;
    if (rt->n_in > 0 && !inputs) {
        gs__rt_free_plans(rt);
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_runtime_run: inputs is NULL but %s has %d parameter buffers", g->name, rt->n_in);
    }
    if (rt->n_out > 0 && !outputs) {
        gs__rt_free_plans(rt);
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_runtime_run: outputs is NULL but %s has %d outputs", g->name, rt->n_out);
    }
    for (d = rt->d_lo; d < rt->d_hi; d++) {
        for (k = 0; k < rt->n_in; k++)
            if (!inputs[d * rt->n_in + k] && gs__numel(&rt->in_shapes[k]) > 0) {
                gs__rt_free_plans(rt);
                return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_runtime_run: input %d of device %lld is NULL", k, (long long)d);
            }
        for (k = 0; k < rt->n_out; k++)
            if (!outputs[d * rt->n_out + k] && gs__numel(&rt->out_shapes[k]) > 0) {
                gs__rt_free_plans(rt);
                return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_runtime_run: output %d of device %lld is NULL", k, (long long)d);
            }
    }
    return gs__rt_go(rt, inputs, NULL, outputs);
}

/* ---------------------------------------------------------------------------------------------------------
   Global arrays: scatter into padded shards, gather back
   ------------------------------------------------------------------------------------------------------- */
/* Checks that s (NULL: replicated) can lay out an array of shape global on this runtime; *shard receives
   the per-device shard shape. */
GS__FN gs_result gs__rt_layout(gs_runtime *rt, const gs_sharding *s, gs_shape global, gs_shape *shard, const char *who) {
    gs_ctx *ctx = rt->ctx;
    gs_sharding_kind k;
    int d;
    if (global.rank < 0 || global.rank > GS_MAX_RANK || gs_dtype_size(global.dtype) == 0)
        return gs__err(ctx, GS_ERR_SHAPE, "%s: the global shape is not an array shape", who);
    for (d = 0; d < global.rank; d++)
        if (global.dims[d] < 0) return gs__err(ctx, GS_ERR_SHAPE, "%s: negative dim %d in the global shape", who, d);
    *shard = global;
    if (!s) return GS_OK;
    k = gs_sharding_get_kind(s);
    if (k == GS_SHARDING_TUPLE || k == GS_SHARDING_UNKNOWN || k == GS_SHARDING_MANUAL)
        return gs__err(ctx, GS_ERR_SHARDING, "%s: a %s sharding cannot lay out an array", who,
                       k == GS_SHARDING_TUPLE ? "tuple" : k == GS_SHARDING_UNKNOWN ? "unknown" : "manual");
    if (k == GS_SHARDING_UNREDUCED) return GS_OK;   /* every device a whole-size summand */
    if (gs_sharding_validate(ctx, s, global, rt->D) != GS_OK) return ctx->err;
    return gs_sharding_shard_shape(ctx, s, global, shard);
}

/* Zeroes the box cnt at offset 0 of dst (shape dims, format fmt); zero bytes are 0 in every type. */
GS__FN void gs__rt_zero_box(gs_dtype t, int fmt, int rank, const int64_t *cnt, void *dst, const int64_t *dims) {
    int64_t idx[GS_MAX_RANK], p;
    size_t es = gs__rt_esize(t, fmt);
    int d;
    for (d = 0; d < rank; d++)
        if (cnt[d] <= 0) return;
    if (rank == 0) {
        memset(dst, 0, es);
        return;
    }
    memset(idx, 0, sizeof idx);
    for (;;) {
        for (p = 0, d = 0; d < rank; d++) p = p * dims[d] + idx[d];
        memset((char *)dst + (size_t)p * es, 0, (size_t)cnt[rank - 1] * es);
        for (d = rank - 2; d >= 0; d--) {
            if (++idx[d] < cnt[d]) break;
            idx[d] = 0;
        }
        if (d < 0) return;
    }
}

/* Device d's shard of the global array src (format sfmt) into dst (format dfmt, shape shard). */
GS__FN void gs__rt_shard_one(gs_runtime *rt, const gs_sharding *s, gs_shape global, gs_shape shard, const void *src,
                             int sfmt, void *dst, int dfmt, int64_t d) {
    int64_t off[GS_MAX_RANK], lim[GS_MAX_RANK], cnt[GS_MAX_RANK], zero[GS_MAX_RANK];
    bool has = true, full = true;
    int i;
    for (i = 0; i < global.rank; i++) {
        off[i] = 0;
        lim[i] = global.dims[i];
        zero[i] = 0;
    }
    if (s) has = gs_sharding_device_region(s, global, d, off, lim);
    for (i = 0; i < global.rank; i++) {
        cnt[i] = has ? lim[i] - off[i] : 0;
        if (cnt[i] != shard.dims[i]) full = false;
    }
    if (!has || !full) gs__rt_poison(shard.dtype, dst, dfmt, gs__numel(&shard), !rt->no_poison);
    if (has && gs__sh_unreduced_coord(s, d) > 0) {
        /* unreduced: the first device of each unreduced group holds the value, the others zero (the sum is
           the value exactly); the zeros cover the device's region, its padding keeps the poison */
        gs__rt_zero_box(global.dtype, dfmt, global.rank, cnt, dst, shard.dims);
        return;
    }
    if (has) gs__rt_copy_box(global.dtype, global.rank, cnt, dst, dfmt, shard.dims, zero, src, sfmt, global.dims, off);
}

/* Index of the first difference between two boxes of cnt at offset 0 of arrays of shape dims, or -1. */
GS__FN int64_t gs__rt_box_diff(gs_dtype t, int fmt, int rank, const int64_t *cnt, const int64_t *dims, const void *a,
                               const void *b) {
    int64_t idx[GS_MAX_RANK], st[GS_MAX_RANK], row, seen = 0, i;
    size_t es = gs__rt_esize(t, fmt);
    int d;
    if (rank == 0) return memcmp(a, b, es) ? 0 : -1;
    for (d = 0; d < rank; d++)
        if (cnt[d] <= 0) return -1;
    st[rank - 1] = 1;
    for (d = rank - 2; d >= 0; d--) st[d] = st[d + 1] * dims[d + 1];
    row = cnt[rank - 1];
    memset(idx, 0, sizeof idx);
    for (;;) {
        int64_t p = 0;
        for (d = 0; d < rank; d++) p += idx[d] * st[d];
        if (memcmp((const char *)a + p * (int64_t)es, (const char *)b + p * (int64_t)es, (size_t)row * es) != 0) {
            for (i = 0; i < row; i++)
                if (memcmp((const char *)a + (p + i) * (int64_t)es, (const char *)b + (p + i) * (int64_t)es, es) != 0)
                    return seen + i;
        }
        seen += row;
        for (d = rank - 2; d >= 0; d--) {
            if (++idx[d] < cnt[d]) break;
            idx[d] = 0;
        }
        if (d < 0) return -1;
    }
}

/* The region (off, cnt) of the global array that device d holds, and the number of its tile (0 untiled);
   false when it holds nothing. */
GS__FN bool gs__rt_tile_of(const gs_sharding *s, gs_shape global, int64_t d, int64_t *off, int64_t *cnt, int64_t *tile) {
    int64_t tdims[GS_MAX_TILE_RANK], idx[GS_MAX_TILE_RANK], lim[GS_MAX_RANK];
    int i;
    *tile = 0;
    for (i = 0; i < global.rank; i++) {
        off[i] = 0;
        lim[i] = global.dims[i];
    }
    if (s && !gs_sharding_device_region(s, global, d, off, lim)) return false;
    for (i = 0; i < global.rank; i++) {
        cnt[i] = lim[i] - off[i];
        if (cnt[i] <= 0) return false;
    }
    if (s && gs_sharding_get_kind(s) == GS_SHARDING_TILED) {
        gs_sharding_tile_shape(s, tdims, NULL);
        gs_sharding_device_index(s, d, idx);
        for (i = 0; i < global.rank; i++) *tile = *tile * tdims[i] + idx[i];
    }
    return true;
}

/* need[d] (D entries) = 1 for the devices whose shard gathering reads: the lowest-numbered holder of each
   tile, and with check_replicas every holder. false: out of memory. */
GS__FN bool gs__rt_gather_needs(gs_runtime *rt, const gs_sharding *s, gs_shape global, uint8_t *need) {
    int64_t off[GS_MAX_RANK], cnt[GS_MAX_RANK], n_tiles = 1, d, tile;
    uint8_t *seen;
    if (s && gs_sharding_get_kind(s) == GS_SHARDING_TILED) n_tiles = gs_sharding_num_tiles(s);
    seen = (uint8_t *)gs__malloc(rt->ctx, (size_t)n_tiles);
    if (!seen) return false;
    memset(seen, 0, (size_t)n_tiles);
    for (d = 0; d < rt->D; d++) {
        need[d] = 0;
        if (!gs__rt_tile_of(s, global, d, off, cnt, &tile)) continue;
        need[d] = !seen[tile] || rt->check_replicas || gs__sh_has_unreduced(s);   /* unreduced: every summand */
        seen[tile] = 1;
    }
    gs__free(rt->ctx, seen);
    return true;
}

/* dst (the global array, storage format) += the box cnt at offset 0 of shard src (format sfmt), placed at off: an
   unreduced output's next summand, added in device order */
GS__FN gs_result gs__rt_add_box(gs_runtime *rt, gs_shape global, gs_shape shard, const int64_t *cnt, const int64_t *off,
                                const void *src, int sfmt, void *dst) {
    int64_t n = 1, i, zero[GS_MAX_RANK];
    size_t cs = gs__compute_size(global.dtype);
    char *a, *b;
    int d;
    for (d = 0; d < global.rank; d++) {
        n *= cnt[d];
        zero[d] = 0;
    }
    a = (char *)gs__malloc(rt->ctx, cs * (size_t)(n + 1));
    b = (char *)gs__malloc(rt->ctx, cs * (size_t)(n + 1));
    if (!a || !b) {
        gs__free(rt->ctx, a);
        gs__free(rt->ctx, b);
        return GS_ERR_OUT_OF_MEMORY;
    }
    /* both boxes in compute format, summed, and written back */
    gs__rt_copy_box(global.dtype, global.rank, cnt, a, GS__FMT_COMPUTE, cnt, zero, dst, GS__FMT_STORAGE, global.dims, off);
    gs__rt_copy_box(global.dtype, global.rank, cnt, b, GS__FMT_COMPUTE, cnt, zero, src, sfmt, shard.dims, zero);
    for (i = 0; i < n; i++) gs__ip_gcomb(global.dtype, GS_REDUCE_SUM, a, i, b, i);
    gs__rt_copy_box(global.dtype, global.rank, cnt, dst, GS__FMT_STORAGE, global.dims, off, a, GS__FMT_COMPUTE, cnt, zero);
    gs__free(rt->ctx, a);
    gs__free(rt->ctx, b);
    return GS_OK;
}

/* Gathers the global array dst (storage format) from every device's shard srcs[d] (format sfmt). */
GS__FN gs_result gs__rt_gather_one(gs_runtime *rt, const gs_sharding *s, gs_shape global, gs_shape shard,
                                   const void *const *srcs, int sfmt, void *dst, const char *who) {
    gs_ctx *ctx = rt->ctx;
    int64_t off[GS_MAX_RANK], cnt[GS_MAX_RANK];
    int64_t n_tiles = 1, d, *owner;
    int rank = global.rank, i;
    if (s && gs_sharding_get_kind(s) == GS_SHARDING_TILED) n_tiles = gs_sharding_num_tiles(s);
    owner = (int64_t *)gs__malloc(ctx, sizeof(int64_t) * (size_t)n_tiles);
    if (!owner) return GS_ERR_OUT_OF_MEMORY;
    for (i = 0; i < n_tiles; i++) owner[i] = -1;
    for (d = 0; d < rt->D; d++) {
        int64_t tile = 0;
        if (!gs__rt_tile_of(s, global, d, off, cnt, &tile)) continue;
        if (owner[tile] < 0) {
            int64_t zero[GS_MAX_RANK];
            owner[tile] = d;
            for (i = 0; i < rank; i++) zero[i] = 0;
            if (!srcs[d]) {
                gs__free(ctx, owner);
                return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: the shard of device %lld is NULL", who, (long long)d);
            }
            gs__rt_copy_box(global.dtype, rank, cnt, dst, GS__FMT_STORAGE, global.dims, off, srcs[d], sfmt, shard.dims, zero);
        } else if (gs__sh_has_unreduced(s)) {
            if (!gs__sh_same_sum(s, owner[tile], d)) continue;   /* a replica of the owner's group's summands */
            if (!srcs[d]) {
                gs__free(ctx, owner);
                return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: the shard of device %lld is NULL", who, (long long)d);
            }
            if (gs__rt_add_box(rt, global, shard, cnt, off, srcs[d], sfmt, dst) != GS_OK) {
                gs__free(ctx, owner);
                return GS_ERR_OUT_OF_MEMORY;
            }
        } else if (rt->check_replicas) {
            int64_t at;
            if (!srcs[d]) {
                gs__free(ctx, owner);
                return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: the shard of device %lld is NULL", who, (long long)d);
            }
            at = gs__rt_box_diff(global.dtype, sfmt, rank, cnt, shard.dims, srcs[owner[tile]], srcs[d]);
            if (at >= 0) {
                int64_t o = owner[tile];
                gs__free(ctx, owner);
                return gs__err(ctx, GS_ERR_SHARDING,
                               "%s: devices %lld and %lld hold different copies of the same tile (element %lld of the tile "
                               "differs)", who, (long long)o, (long long)d, (long long)at);
            }
        }
    }
    gs__free(ctx, owner);
    return GS_OK;
}

#if defined(GSHARD_MPI)
/* Output k of the last run gathered on rank 0 into dst (storage format): every rank sends rank 0 the results
   gathering reads (gs__rt_gather_needs) of its devices, in device order. Other ranks leave dst alone. */
GS__FN gs_result gs__rt_net_gather(gs_runtime *rt, const gs_sharding *s, gs_shape global, int k, void *dst,
                                   const char *who) {
    gs_ctx *ctx = rt->ctx;
    int64_t D = rt->D, L = rt->d_hi - rt->d_lo, d, slots = 0;
    int me = gs__net_rank(rt->net), n_send = 0, n_recv = 0, code = 0, rc;
    size_t bytes = (size_t)gs__numel(&rt->out_shapes[k]) * gs__compute_size(rt->out_shapes[k].dtype);
    uint8_t *need = (uint8_t *)gs__malloc(ctx, (size_t)D), *buf = NULL;
    const void **srcs = (const void **)gs__malloc(ctx, sizeof(void *) * (size_t)D);
    gs__net_xfer *xs = (gs__net_xfer *)gs__malloc(ctx, sizeof(gs__net_xfer) * (size_t)D);
    gs_result r = GS_OK;
    char msg[1024];
    if (!need || !srcs || !xs || !gs__rt_gather_needs(rt, s, global, need)) {
        r = GS_ERR_OUT_OF_MEMORY;
        goto done;
    }
    for (d = 0; d < D; d++) {
        srcs[d] = d >= rt->d_lo && d < rt->d_hi ? rt->devs[d].results[k].data : NULL;
        if (need[d] && d / L != me && me == 0) slots++;
    }
    if (slots && !(buf = (uint8_t *)gs__malloc(ctx, (size_t)slots * bytes))) {
        r = GS_ERR_OUT_OF_MEMORY;
        goto done;
    }
    for (d = 0, slots = 0; d < D; d++) {
        gs__net_xfer x = {0, GS__NET_TAG_GATHER, NULL, (int64_t)bytes};
        if (!need[d]) continue;
        if (me != 0 && d / L == me) {
            x.buf = (void *)(uintptr_t)srcs[d];
            xs[n_send++] = x;
        } else if (me == 0 && d / L != 0) {
            x.peer = (int)(d / L);
            x.buf = buf + (size_t)slots++ * bytes;
            srcs[d] = x.buf;
            xs[n_recv++] = x;
        }
    }
    rc = gs__net_move(rt->net, me ? xs : NULL, n_send, me ? NULL : xs, n_recv, rt->watchdog_us, NULL, NULL, &code, msg,
                      sizeof msg);
    if (rc != GS__NET_OK) r = gs__err(ctx, code ? (gs_result)code : GS_ERR_THREAD, "%s: %s", who,
                                      rc == GS__NET_TIMEOUT ? "gathering on rank 0 timed out" : msg);
    else if (me == 0) r = gs__rt_gather_one(rt, s, global, rt->out_shapes[k], srcs, GS__FMT_COMPUTE, dst, who);
done:
    gs__free(ctx, need);
    gs__free(ctx, (void *)srcs);
    gs__free(ctx, xs);
    gs__free(ctx, buf);
    return r;
}
#endif

GS_API gs_result gs_runtime_scatter(gs_runtime *rt, const gs_sharding *s, gs_shape global, const void *data,
                                    void *const *shards) {
    gs_shape shard;
    int64_t d;
    gs_result r;
    if (!rt) return GS_ERR_INVALID_ARG;
    r = gs__rt_layout(rt, s, global, &shard, "gs_runtime_scatter");
    if (r) return r;
    if (!shards) return gs__err(rt->ctx, GS_ERR_INVALID_ARG, "gs_runtime_scatter: shards is NULL");
    if (!data && gs__numel(&global) > 0) return gs__err(rt->ctx, GS_ERR_INVALID_ARG, "gs_runtime_scatter: data is NULL");
    for (d = 0; d < rt->D; d++)
        if (!shards[d] && gs__numel(&shard) > 0)
            return gs__err(rt->ctx, GS_ERR_INVALID_ARG, "gs_runtime_scatter: shard %lld is NULL", (long long)d);
    for (d = 0; d < rt->D; d++)
        gs__rt_shard_one(rt, s, global, shard, data, GS__FMT_STORAGE, shards[d], GS__FMT_STORAGE, d);
    return GS_OK;
}

GS_API gs_result gs_runtime_gather(gs_runtime *rt, const gs_sharding *s, gs_shape global, const void *const *shards,
                                   void *data) {
    gs_shape shard;
    gs_result r;
    if (!rt) return GS_ERR_INVALID_ARG;
    r = gs__rt_layout(rt, s, global, &shard, "gs_runtime_gather");
    if (r) return r;
    if (!shards) return gs__err(rt->ctx, GS_ERR_INVALID_ARG, "gs_runtime_gather: shards is NULL");
    if (!data && gs__numel(&global) > 0) return gs__err(rt->ctx, GS_ERR_INVALID_ARG, "gs_runtime_gather: data is NULL");
    return gs__rt_gather_one(rt, s, global, shard, shards, GS__FMT_STORAGE, data, "gs_runtime_gather");
}

/* The sharding that lays out input or output i of a global run: NULL for replicated and {manual} (every
   device's whole array; an output is device 0's). */
GS__FN const gs_sharding *gs__rt_global_sharding(const gs_sharding *const *shardings, int i) {
    const gs_sharding *s = shardings ? shardings[i] : NULL;
    return s && gs_sharding_get_kind(s) == GS_SHARDING_MANUAL ? NULL : s;
}

/* Checks the arrays of run_global (in_data: global inputs) or run_tiles (tiles: in_data holds D * n_in
   tiles) against the prepared program: every global shape splits into the program's shards, and the data
   pointers are there (tiles: those of this process's devices that hold a non-empty tile; outputs: rank 0's). */
GS__FN gs_result gs__rt_global_check(gs_runtime *rt, gs_graph *g, const gs_shape *in_shapes,
                                     const gs_sharding *const *in_shardings, const void *const *in_data,
                                     bool tiles, const gs_shape *out_shapes,
                                     const gs_sharding *const *out_shardings, void *const *outputs, const char *fn) {
    gs_ctx *ctx = rt->ctx;
    gs_shape shard;
    char who[96], a[128], b[128], c[128];
    int k, n_in = rt->n_in;
    gs_result r = GS_OK;
    if ((n_in > 0 && (!in_shapes || !in_data)) || (rt->n_out > 0 && (!out_shapes || !outputs)))
        return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: %s needs %d input and %d output arrays (shapes and data)", fn, g->name,
                       n_in, rt->n_out);
    for (k = 0; !r && k < n_in + rt->n_out; k++) {
        bool in = k < n_in;
        int i = in ? k : k - n_in;
        const gs_sharding *s = gs__rt_global_sharding(in ? in_shardings : out_shardings, i);
        gs_shape gl = in ? in_shapes[i] : out_shapes[i];
        const gs_shape *want = in ? &rt->in_shapes[i] : &rt->out_shapes[i];
        int64_t d, off[GS_MAX_RANK], cnt[GS_MAX_RANK], tile;
        snprintf(who, sizeof who, "%s: %s %d", fn, in ? "input" : "output", i);
        r = gs__rt_layout(rt, s, gl, &shard, who);
        if (!r && !gs_shape_equal(&shard, want)) {
            gs__shape_str(&gl, a, sizeof a);
            gs__shape_str(&shard, b, sizeof b);
            gs__shape_str(want, c, sizeof c);
            r = gs__err(ctx, GS_ERR_SHAPE, "%s: %s is split into %s shards, but the program's %s %d is %s", who, a, b,
                        in ? "parameter buffer" : "output", i, c);
        }
        if (r || gs__numel(&gl) == 0) continue;
        if (!in && !outputs[i] && gs_runtime_rank(rt) == 0) r = gs__err(ctx, GS_ERR_INVALID_ARG, "%s: the data pointer is NULL", who);
        if (in && !tiles && !in_data[i]) r = gs__err(ctx, GS_ERR_INVALID_ARG, "%s: the data pointer is NULL", who);
        for (d = rt->d_lo; in && tiles && !r && d < rt->d_hi; d++)
            if (!in_data[d * n_in + i] && gs__rt_tile_of(s, gl, d, off, cnt, &tile))
                r = gs__err(ctx, GS_ERR_INVALID_ARG, "%s: the tile of device %lld is NULL", who, (long long)d);
    }
    return r;
}

/* Device d's parameter buffer k in compute format (c_in[d * n_in + k]; owned[] set when allocated here) from
   the global array in_data[k], or with tiles from the device's tile in_data[d * n_in + k] (its region of the
   global array, dense). A buffer that another local device already has (a replicated input, or the same tile pointer for
   the same region) is shared; a tile that is the whole shard, already in compute format, is used as it is. */
GS__FN gs_result gs__rt_global_param(gs_runtime *rt, const gs_shape *in_shapes, const gs_sharding *const *in_shardings,
                                     const void *const *in_data, bool tiles, int k, int64_t d, gs__buf *c_in,
                                     uint8_t *owned) {
    int n_in = rt->n_in, i, rank = in_shapes[k].rank;
    const gs_sharding *s = gs__rt_global_sharding(in_shardings, k);
    const gs_shape *shard = &rt->in_shapes[k];
    int64_t off[GS_MAX_RANK], cnt[GS_MAX_RANK], e, zero[GS_MAX_RANK];
    bool has = true, full = true, zeroed;
    const void *src;
    gs__buf *cb = &c_in[d * n_in + k];
    cb->shape = *shard;
    if (!tiles) {
        if (!s || gs_sharding_get_kind(s) == GS_SHARDING_REPLICATED) {
            if (d > rt->d_lo) {   /* converted once and shared: parameters are never written */
                cb->data = c_in[rt->d_lo * n_in + k].data;
                return GS_OK;
            }
        }
        cb->data = gs__malloc(rt->ctx, (size_t)gs__numel(shard) * gs__compute_size(shard->dtype) + 1);
        if (!cb->data) return GS_ERR_OUT_OF_MEMORY;
        owned[d * n_in + k] = 1;
        gs__rt_shard_one(rt, s, in_shapes[k], *shard, in_data[k], GS__FMT_STORAGE, cb->data, GS__FMT_COMPUTE, d);
        return GS_OK;
    }
    for (i = 0; i < rank; i++) {
        off[i] = 0;
        cnt[i] = in_shapes[k].dims[i];
        zero[i] = 0;
    }
    if (s) has = gs_sharding_device_region(s, in_shapes[k], d, off, cnt);
    for (i = 0; i < rank; i++) {
        cnt[i] = has ? cnt[i] - off[i] : 0;
        if (cnt[i] != shard->dims[i]) full = false;
    }
    src = in_data[d * n_in + k];
    /* unreduced: as run_global, the first device of each unreduced group holds the value, the others zero */
    zeroed = has && gs__sh_unreduced_coord(s, d) > 0;
    for (e = rt->d_lo; e < d && !zeroed; e++) {   /* another local device with the same tile */
        int64_t eo[GS_MAX_RANK], el[GS_MAX_RANK];
        bool same = in_data[e * n_in + k] == src;
        if (same && s) {
            bool eh = gs_sharding_device_region(s, in_shapes[k], e, eo, el);
            same = eh == has;
            for (i = 0; same && has && i < rank; i++) same = eo[i] == off[i] && el[i] - eo[i] == cnt[i];
        }
        if (same) {
            cb->data = c_in[e * n_in + k].data;
            return GS_OK;
        }
    }
    if (full && has && !zeroed && !gs__fmt_differs(shard->dtype)) {
        cb->data = (void *)(uintptr_t)src;
        return GS_OK;
    }
    cb->data = gs__malloc(rt->ctx, (size_t)gs__numel(shard) * gs__compute_size(shard->dtype) + 1);
    if (!cb->data) return GS_ERR_OUT_OF_MEMORY;
    owned[d * n_in + k] = 1;
    if (!has || !full) gs__rt_poison(shard->dtype, cb->data, GS__FMT_COMPUTE, gs__numel(shard), !rt->no_poison);
    if (zeroed) gs__rt_zero_box(shard->dtype, GS__FMT_COMPUTE, rank, cnt, cb->data, shard->dims);
    else if (has) gs__rt_copy_box(shard->dtype, rank, cnt, cb->data, GS__FMT_COMPUTE, shard->dims, zero, src, GS__FMT_STORAGE, cnt, zero);
    return GS_OK;
}

/* Gathers every output of the last run (its results still held by the devices) into outputs (rank 0 only on
   ranks), then frees the results. */
GS__FN gs_result gs__rt_global_outputs(gs_runtime *rt, const gs_shape *out_shapes, const gs_sharding *const *out_shardings,
                                       void *const *outputs, const char *fn) {
    gs_ctx *ctx = rt->ctx;
    const void **srcs = (const void **)gs__malloc(ctx, sizeof(void *) * (size_t)rt->D);
    gs_result r = srcs ? GS_OK : GS_ERR_OUT_OF_MEMORY;
    char who[96];
    int64_t d;
    int k;
    for (k = 0; r == GS_OK && k < rt->n_out; k++) {
        const gs_sharding *s = gs__rt_global_sharding(out_shardings, k);
        snprintf(who, sizeof who, "%s: output %d", fn, k);
#if defined(GSHARD_MPI)
        if (rt->net) {
            r = gs__rt_net_gather(rt, s, out_shapes[k], k, outputs[k], who);
            continue;
        }
#endif
        for (d = 0; d < rt->D; d++) srcs[d] = rt->devs[d].results[k].data;
        r = gs__rt_gather_one(rt, s, out_shapes[k], rt->out_shapes[k], srcs, GS__FMT_COMPUTE, outputs[k], who);
    }
    gs__free(ctx, (void *)srcs);
    gs__rt_free_results(rt);
    if (r) rt->have_stats = false;
    return r;
}

/* run_global (in_data: the global inputs) and run_tiles (tiles: in_data holds the devices' tiles) */
GS__FN gs_result gs__rt_run_arrays(gs_runtime *rt, gs_graph *g, const gs_shape *in_shapes,
                                   const gs_sharding *const *in_shardings, const void *const *in_data, bool tiles,
                                   const gs_shape *out_shapes,
                                   const gs_sharding *const *out_shardings, void *const *outputs, const char *fn) {
    gs_ctx *ctx;
    gs__buf *c_in = NULL;
    uint8_t *owned = NULL;
    size_t n_bufs;
    int64_t d;
    int k;
    gs_result r;
    if (!rt) return GS_ERR_INVALID_ARG;
    ctx = rt->ctx;
    rt->have_stats = false;
    if (!g) return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: graph is NULL", fn);
    r = gs__rt_prepare(rt, g);
    if (r) return r;
    r = gs__rt_global_check(rt, g, in_shapes, in_shardings, in_data, tiles, out_shapes, out_shardings, outputs, fn);
    if (r) {
        gs__rt_free_plans(rt);
        return r;
    }
    n_bufs = (size_t)rt->D * (size_t)rt->n_in + 1;
    c_in = (gs__buf *)gs__malloc(ctx, sizeof(gs__buf) * n_bufs);
    owned = (uint8_t *)gs__malloc(ctx, n_bufs);
    if (!c_in || !owned) {
        r = GS_ERR_OUT_OF_MEMORY;
        goto done;
    }
    /* zeroed before anything can fail, so the cleanup below frees only buffers this call allocated */
    memset(c_in, 0, sizeof(gs__buf) * n_bufs);
    memset(owned, 0, n_bufs);
    for (k = 0; !r && k < rt->n_in; k++)
        for (d = rt->d_lo; !r && d < rt->d_hi; d++)   /* this process's devices */
            r = gs__rt_global_param(rt, in_shapes, in_shardings, in_data, tiles, k, d, c_in, owned);
    if (!r) r = gs__rt_go(rt, NULL, c_in, NULL);
    if (!r) r = gs__rt_global_outputs(rt, out_shapes, out_shardings, outputs, fn);
done:
    for (d = 0; owned && d < (int64_t)n_bufs - 1; d++)
        if (owned[d]) gs__free(ctx, c_in[d].data);
    gs__free(ctx, c_in);
    gs__free(ctx, owned);
    if (r && rt->plans) gs__rt_free_plans(rt);
    return r;
}

GS_API gs_result gs_runtime_run_global(gs_runtime *rt, gs_graph *g, const gs_shape *in_shapes,
                                       const gs_sharding *const *in_shardings, const void *const *inputs,
                                       const gs_shape *out_shapes, const gs_sharding *const *out_shardings,
                                       void *const *outputs) {
    return gs__rt_run_arrays(rt, g, in_shapes, in_shardings, inputs, false, out_shapes, out_shardings, outputs,
                             "gs_runtime_run_global");
}

GS_API gs_result gs_runtime_run_tiles(gs_runtime *rt, gs_graph *g, const gs_shape *in_shapes,
                                      const gs_sharding *const *in_shardings, const void *const *tiles,
                                      const gs_shape *out_shapes, const gs_sharding *const *out_shardings,
                                      void *const *outputs) {
    return gs__rt_run_arrays(rt, g, in_shapes, in_shardings, tiles, true, out_shapes, out_shardings, outputs,
                             "gs_runtime_run_tiles");
}

/* ---------------------------------------------------------------------------------------------------------
   The engine on its own
   ------------------------------------------------------------------------------------------------------- */
GS_API gs_result gs_runtime_collective_shape(gs_runtime *rt, const gs_collective_spec *spec, gs_shape *out) {
    gs__cplan p;
    gs_result r;
    if (!rt) return GS_ERR_INVALID_ARG;
    if (!spec || !out) return gs__err(rt->ctx, GS_ERR_INVALID_ARG, "gs_runtime_collective_shape: NULL argument");
    r = gs__cplan_init(rt->ctx, rt->D, spec, NULL, &p);
    if (r) return r;
    *out = p.out;
    gs__cplan_free(rt->ctx, &p);
    return GS_OK;
}

#if defined(GSHARD_MPI)
/* gs_runtime_collective on ranks: the local devices' buffers only, in the calling thread; every rank makes the
   same call (no posts are compared). */
GS__FN gs_result gs__rt_net_collective(gs_runtime *rt, const gs__cplan *p, const void *const *in, void *const *out,
                                       int64_t repeat) {
    gs_ctx *ctx = rt->ctx;
    int64_t d, i, n_in = gs__numel(&p->in), n_out = gs__numel(&p->out);
    bool convert = gs__fmt_differs(p->dtype);
    gs_result r = GS_OK;
    if (gs__net_broken(rt->net))
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_runtime_collective: an earlier run failed between the ranks");
    for (d = rt->d_lo; d < rt->d_hi; d++)
        if ((!in[d] && n_in > 0) || (!out[d] && n_out > 0))
            return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_runtime_collective: the buffer of device %lld is NULL", (long long)d);
    if (!gs__barrier_init(&rt->bar, 1, &rt->abort, rt->cpus)) return gs__err(ctx, GS_ERR_THREAD, "gs_runtime_collective: cannot create a barrier");
    rt->abort = 0;
    rt->failure = GS__FAIL_NONE;
    for (d = rt->d_lo; d < rt->d_hi; d++) {
        rt->ins[d] = in[d];
        rt->outs[d] = out[d];
        if (!convert) continue;
        rt->ins[d] = gs__malloc(ctx, (size_t)n_in * gs__compute_size(p->dtype) + 1);
        rt->outs[d] = gs__malloc(ctx, (size_t)n_out * gs__compute_size(p->dtype) + 1);
        if (!rt->ins[d] || !rt->outs[d]) r = GS_ERR_OUT_OF_MEMORY;
        else gs__rt_convert(p->dtype, (void *)(uintptr_t)rt->ins[d], GS__FMT_COMPUTE, in[d], GS__FMT_STORAGE, n_in);
    }
    for (i = 0; r == GS_OK && i < repeat; i++) {
        const char *at = "gs_runtime_collective";
        rt->fast_done = false;
        if (gs__rt_net_fast_ok(rt, p) ? !gs__rt_net_fast(rt, p, at)
                                      : !gs__rt_net_data(rt, p, at) || !gs__rt_net_wait_all(rt, at) ||
                                            (rt->ar_net && !gs__rt_net_ar(rt, p, at)))
            break;
        if (rt->failure) break;
        if (!rt->fast_done)
            for (d = rt->d_lo; d < rt->d_hi; d++) gs__rt_net_piece(rt, p, d, 0, 1, NULL, &r);
    }
    if (r == GS_OK && rt->failure) {
        r = gs__rt_report(rt);
        if (rt->failure != GS__FAIL_REMOTE) gs__net_tell(rt->net, (int)r, gs_ctx_error_msg(ctx));
    }
    for (d = rt->d_lo; convert && d < rt->d_hi; d++) {
        if (r == GS_OK) gs__rt_convert(p->dtype, out[d], GS__FMT_STORAGE, rt->outs[d], GS__FMT_COMPUTE, n_out);
        gs__free(ctx, (void *)(uintptr_t)rt->ins[d]);
        gs__free(ctx, rt->outs[d]);
    }
    gs__barrier_destroy(&rt->bar);
    return r;
}
#endif

GS_API gs_result gs_runtime_collective(gs_runtime *rt, const gs_collective_spec *spec, const void *const *in,
                                       void *const *out, int64_t repeat) {
    gs_ctx *ctx;
    gs__cplan p;
    int64_t d, i, D, n_in, n_out;
    bool convert;
    gs_result r = GS_OK;
    if (!rt) return GS_ERR_INVALID_ARG;
    ctx = rt->ctx;
    D = rt->D;
    if (!spec || !in || !out) return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_runtime_collective: NULL argument");
    if (repeat < 1) return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_runtime_collective: repeat %lld < 1", (long long)repeat);
    r = gs__cplan_init(ctx, D, spec, NULL, &p);
    if (r) return r;
#if defined(GSHARD_MPI)
    if (rt->net) {
        r = gs__rt_net_collective(rt, &p, in, out, repeat);
        gs__cplan_free(ctx, &p);
        return r;
    }
#endif
    n_in = gs__numel(&p.in);
    n_out = gs__numel(&p.out);
    for (d = 0; d < D; d++)
        if ((!in[d] && n_in > 0) || (!out[d] && n_out > 0)) {
            gs__cplan_free(ctx, &p);
            return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_runtime_collective: the buffer of device %lld is NULL", (long long)d);
        }
    convert = gs__fmt_differs(p.dtype);
    for (d = 0; d < D; d++) {
        rt->ins[d] = in[d];
        rt->outs[d] = out[d];
    }
    if (convert) {   /* the engine works in compute format */
        for (d = 0; d < D; d++) rt->ins[d] = rt->outs[d] = NULL;
        for (d = 0; d < D && r == GS_OK; d++) {
            void *ci = gs__malloc(ctx, (size_t)n_in * gs__compute_size(p.dtype) + 1);
            void *co = gs__malloc(ctx, (size_t)n_out * gs__compute_size(p.dtype) + 1);
            rt->ins[d] = ci;
            rt->outs[d] = co;
            if (!ci || !co) r = GS_ERR_OUT_OF_MEMORY;
            else gs__rt_convert(p.dtype, ci, GS__FMT_COMPUTE, in[d], GS__FMT_STORAGE, n_in);
        }
    }
    if (r == GS_OK) {
#if !defined(GSHARD_NO_THREADS)
        if (rt->mode == GS_RUNTIME_THREADED) {
            /* no program runs here: no more workers than processors, each taking an equal run of pieces, so
               that the barrier can spin */
            gs__rt_lanes(rt, GS__MIN(rt->workers, (int64_t)rt->cpus));
            if (!gs__barrier_init(&rt->bar, (int)rt->lanes, &rt->abort, rt->cpus)) {
                r = gs__err(ctx, GS_ERR_THREAD, "gs_runtime_collective: cannot create a barrier");
            } else {
                rt->abort = 0;
                rt->failure = GS__FAIL_NONE;
                rt->direct = &p;
                rt->repeat = repeat;
                for (d = 0; d < D; d++) rt->devs[d].arrivals = 0;
                gs__pool_run_n(&rt->pool, gs__rt_job, rt, (int)rt->lanes);
                rt->direct = NULL;
                gs__barrier_destroy(&rt->bar);
                if (rt->failure) r = gs__rt_report(rt);
            }
        } else
#endif
        {
            for (i = 0; i < repeat; i++)
                for (d = 0; d < D; d++) gs__coll_piece(&p, d, 0, 1, rt->ins, rt->outs, false, NULL, &r);
        }
    }
    if (convert) {
        for (d = 0; d < D; d++) {
            if (r == GS_OK) gs__rt_convert(p.dtype, out[d], GS__FMT_STORAGE, rt->outs[d], GS__FMT_COMPUTE, n_out);
            gs__free(ctx, (void *)rt->ins[d]);
            gs__free(ctx, rt->outs[d]);
        }
    }
    gs__cplan_free(ctx, &p);
    return r;
}

/* ---------------------------------------------------------------------------------------------------------
   Accounting
   ------------------------------------------------------------------------------------------------------- */
GS_API gs_result gs_runtime_get_stats(const gs_runtime *rt, gs_runtime_stats *out) {
    int64_t d;
    if (!rt || !out) return GS_ERR_INVALID_ARG;
    memset(out, 0, sizeof *out);
    if (!rt->have_stats) return GS_ERR_INVALID_ARG;
    out->num_devices = rt->D;
    out->peak_bytes = rt->peak;
    out->param_bytes = rt->pbytes;
    for (d = 0; d < rt->D; d++)
        if (rt->peak[d] > out->max_peak_bytes) out->max_peak_bytes = rt->peak[d];
    out->n_collectives = rt->n_cstats;
    out->collectives = rt->cstats;
    out->collective_count = rt->coll_count;
    out->bytes_sent = rt->bytes_sent;
    out->seconds = rt->seconds;
    return GS_OK;
}
