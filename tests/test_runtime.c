/* test_runtime.c - the SPMD runtime: every collective against a sequential model written here with naive
   loops, hand-written SPMD programs against the reference interpreter on the unpartitioned computation,
   threaded against lockstep on randomised programs, mismatches and failures (errors, never hangs), poisoned
   padding, accounting, and the bad-input catalogue. */
#if !defined(_POSIX_C_SOURCE)
#  define _POSIX_C_SOURCE 200809L /* mkdtemp */
#endif
#include "test.h"
#include <stdarg.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__GNUC__) || defined(__clang__)
#  define GST_ATOMIC_ADD(p, v) __atomic_add_fetch((p), (v), __ATOMIC_SEQ_CST)
#  define GST_ATOMIC_SET(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)
#else
#  define GST_ATOMIC_ADD(p, v) (*(p) += (v))
#  define GST_ATOMIC_SET(p, v) (*(p) = (v))
#endif
#include <sys/time.h>

static double rt_now(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

/* The ways a program runs: 0 threaded on the default workers (one per device up to the processors), 1 lockstep
   (the oracle), 2 threaded with a thread per device, 3 threaded on 3 workers (uneven runs of devices; one
   per device when D < 3), 4 threaded on one worker (every device in one pool thread, turns by time slice). */
#define RT_VARIANTS 5
#define RT_LOCKSTEP_VARIANT 1
static gs_runtime_desc rt_desc_v(int64_t D, int variant) {
    static const int64_t workers[RT_VARIANTS] = {0, 0, -1, 3, 1};
    gs_runtime_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.num_devices = D;
    desc.mode = variant == RT_LOCKSTEP_VARIANT ? GS_RUNTIME_LOCKSTEP : GS_RUNTIME_THREADED;
    desc.workers = workers[variant] < 0 ? D : workers[variant] > D ? D : workers[variant];
    return desc;
}

static gs_runtime *rt_make_v(gs_ctx *ctx, int64_t D, int variant) {
    gs_runtime_desc desc = rt_desc_v(D, variant);
    gs_runtime *rt = NULL;
    if (gs_runtime_create(ctx, &desc, &rt) != GS_OK) {
        gst_failf(__FILE__, __LINE__, "gs_runtime_create(%lld, variant %d): %s", (long long)D, variant, gs_ctx_error_msg(ctx));
        return NULL;
    }
    return rt;
}

static gs_runtime *rt_make(gs_ctx *ctx, int64_t D, gs_runtime_mode mode) {
    return rt_make_v(ctx, D, mode == GS_RUNTIME_LOCKSTEP ? RT_LOCKSTEP_VARIANT : 0);
}

static gs_graph *rt_parse(gs_ctx *ctx, const char *text) {
    gs_graph *g = NULL;
    if (gs_hlo_parse(ctx, text, strlen(text), &g) != GS_OK) {
        gst_failf(__FILE__, __LINE__, "parse: %s", gs_ctx_error_msg(ctx));
        return NULL;
    }
    return g;
}

/* ---------------------------------------------------------------------------------------------------------
   The sequential model of every collective (independent of the engine: index arithmetic per element)
   ------------------------------------------------------------------------------------------------------- */
typedef struct model_groups {
    int64_t n, G;
    int64_t ids[1024];
} model_groups;

/* Expands replica groups the slow way: list as given, iota by walking the transposed array. */
static void model_expand(const gs_replica_groups *rg, int64_t D, model_groups *m) {
    int64_t i;
    if (rg->n_groups == 0) {
        m->n = 1;
        m->G = D;
        for (i = 0; i < D; i++) m->ids[i] = i;
        return;
    }
    m->n = rg->n_groups;
    m->G = rg->group_size;
    if (rg->ids) {
        for (i = 0; i < m->n * m->G; i++) m->ids[i] = rg->ids[i];
        return;
    }
    for (i = 0; i < m->n * m->G; i++) {
        /* position i of transpose(reshape(arange, dims), perm), row-major over the transposed dims */
        int64_t rem = i, t[GS_MAX_RANK], s[GS_MAX_RANK], v = 0;
        int k, r = rg->iota_rank;
        for (k = r - 1; k >= 0; k--) {
            int64_t td = rg->iota_dims[rg->iota_perm[k]];
            t[k] = rem % td;
            rem /= td;
        }
        for (k = 0; k < r; k++) s[rg->iota_perm[k]] = t[k];
        for (k = 0; k < r; k++) v = v * rg->iota_dims[k] + s[k];
        m->ids[i] = v;
    }
}

static void model_member(const model_groups *m, int64_t d, int64_t *g, int64_t *r) {
    int64_t i;
    for (i = 0; i < m->n * m->G; i++)
        if (m->ids[i] == d) {
            *g = i / m->G;
            *r = i % m->G;
            return;
        }
    *g = *r = -1;
}

static float model_bf16(float x) { return gs_bf16_to_f32(gs_f32_to_bf16(x)); }

/* element e of storage-format data as a 64-bit pattern (floats as their bits, bf16 widened) */
static void model_combine(gs_dtype t, gs_reduce_kind k, void *acc, const void *x) {
    if (t == GS_F32 || t == GS_BF16) {
        float a, b, r;
        if (t == GS_F32) {
            memcpy(&a, acc, 4);
            memcpy(&b, x, 4);
        } else {
            uint16_t ua, ub;
            memcpy(&ua, acc, 2);
            memcpy(&ub, x, 2);
            a = gs_bf16_to_f32(ua);
            b = gs_bf16_to_f32(ub);
        }
        switch (k) {
        case GS_REDUCE_SUM: r = a + b; break;
        case GS_REDUCE_PROD: r = a * b; break;
        case GS_REDUCE_MAX: r = a > b ? a : b; break;
        default: r = a < b ? a : b; break;
        }
        if (t == GS_F32) {
            memcpy(acc, &r, 4);
        } else {
            uint16_t u = gs_f32_to_bf16(model_bf16(r));
            memcpy(acc, &u, 2);
        }
    } else if (t == GS_S32) {
        int32_t a, b, r;
        memcpy(&a, acc, 4);
        memcpy(&b, x, 4);
        switch (k) {
        case GS_REDUCE_SUM: r = (int32_t)((uint32_t)a + (uint32_t)b); break;
        case GS_REDUCE_PROD: r = (int32_t)((uint32_t)a * (uint32_t)b); break;
        case GS_REDUCE_MAX: r = a > b ? a : b; break;
        case GS_REDUCE_MIN: r = a < b ? a : b; break;
        case GS_REDUCE_AND: r = a & b; break;
        default: r = a | b; break;
        }
        memcpy(acc, &r, 4);
    } else if (t == GS_U32) {
        uint32_t a, b, r;
        memcpy(&a, acc, 4);
        memcpy(&b, x, 4);
        switch (k) {
        case GS_REDUCE_SUM: r = a + b; break;
        case GS_REDUCE_PROD: r = a * b; break;
        case GS_REDUCE_MAX: r = a > b ? a : b; break;
        case GS_REDUCE_MIN: r = a < b ? a : b; break;
        case GS_REDUCE_AND: r = a & b; break;
        default: r = a | b; break;
        }
        memcpy(acc, &r, 4);
    } else {
        uint8_t a = *(uint8_t *)acc, b = *(const uint8_t *)x;
        bool orish = k == GS_REDUCE_SUM || k == GS_REDUCE_MAX || k == GS_REDUCE_OR;
        *(uint8_t *)acc = (uint8_t)(orish ? (a | b) : (a & b));
    }
}

static void model_unflat(const gs_shape *s, int64_t e, int64_t *idx) {
    int d;
    for (d = s->rank - 1; d >= 0; d--) {
        idx[d] = s->dims[d] ? e % s->dims[d] : 0;
        e = s->dims[d] ? e / s->dims[d] : 0;
    }
}

static int64_t model_flat(const gs_shape *s, const int64_t *idx) {
    int64_t e = 0;
    int d;
    for (d = 0; d < s->rank; d++) e = e * s->dims[d] + idx[d];
    return e;
}

/* out[d] for every device, storage format; returns false if the spec has no model */
static void model_run(const gs_collective_spec *sp, int64_t D, const void *const *in, void *const *out,
                      const gs_shape *oshape) {
    size_t es = gs_dtype_size(sp->shape.dtype);
    int64_t d, e, n_out = gs_shape_numel(oshape), j;
    model_groups m;
    if (sp->op != GS_OP_COLLECTIVE_PERMUTE) model_expand(&sp->groups, D, &m);
    for (d = 0; d < D; d++) {
        int64_t g = -1, r = -1;
        const int64_t *mem = NULL;
        if (sp->op != GS_OP_COLLECTIVE_PERMUTE) {
            model_member(&m, d, &g, &r);
            mem = m.ids + g * m.G;
        }
        for (e = 0; e < n_out; e++) {
            int64_t idx[GS_MAX_RANK], sidx[GS_MAX_RANK];
            char *dst = (char *)out[d] + e * (int64_t)es;
            int k;
            model_unflat(oshape, e, idx);
            for (k = 0; k < sp->shape.rank; k++) sidx[k] = idx[k];
            switch (sp->op) {
            case GS_OP_ALL_REDUCE:
                memcpy(dst, (const char *)in[mem[0]] + e * (int64_t)es, es);
                for (j = 1; j < m.G; j++) model_combine(sp->shape.dtype, sp->reduce, dst, (const char *)in[mem[j]] + e * (int64_t)es);
                break;
            case GS_OP_REDUCE_SCATTER:
                sidx[sp->dim] = idx[sp->dim] + r * oshape->dims[sp->dim];
                memcpy(dst, (const char *)in[mem[0]] + model_flat(&sp->shape, sidx) * (int64_t)es, es);
                for (j = 1; j < m.G; j++)
                    model_combine(sp->shape.dtype, sp->reduce, dst,
                                  (const char *)in[mem[j]] + model_flat(&sp->shape, sidx) * (int64_t)es);
                break;
            case GS_OP_ALL_GATHER:
                j = idx[sp->dim] / sp->shape.dims[sp->dim];
                sidx[sp->dim] = idx[sp->dim] % sp->shape.dims[sp->dim];
                memcpy(dst, (const char *)in[mem[j]] + model_flat(&sp->shape, sidx) * (int64_t)es, es);
                break;
            case GS_OP_ALL_TO_ALL: {
                int64_t piece = sp->shape.dims[sp->split_dim] / m.G;
                if (sp->split_dim == sp->concat_dim) {
                    j = idx[sp->concat_dim] / piece;
                    sidx[sp->split_dim] = r * piece + idx[sp->concat_dim] % piece;
                } else {
                    j = idx[sp->concat_dim] / sp->shape.dims[sp->concat_dim];
                    sidx[sp->concat_dim] = idx[sp->concat_dim] % sp->shape.dims[sp->concat_dim];
                    sidx[sp->split_dim] = idx[sp->split_dim] + r * piece;
                }
                memcpy(dst, (const char *)in[mem[j]] + model_flat(&sp->shape, sidx) * (int64_t)es, es);
                break;
            }
            case GS_OP_COLLECTIVE_PERMUTE: {
                int64_t src = -1;
                for (j = 0; j < sp->n_pairs; j++)
                    if (sp->pairs[2 * j + 1] == d) src = sp->pairs[2 * j];
                if (src < 0) memset(dst, 0, es);
                else memcpy(dst, (const char *)in[src] + e * (int64_t)es, es);
                break;
            }
            default: break;
            }
        }
    }
}

/* random storage-format data: floats in [-1, 1) (bf16 rounded), integers small, pred 0/1 */
static void rt_fill(uint64_t *rs, gs_shape s, void *data, bool small_ints) {
    int64_t i, n = gs_shape_numel(&s);
    for (i = 0; i < n; i++) {
        switch (s.dtype) {
        case GS_F32: {
            float f = small_ints ? (float)gst_randint(rs, -4, 4) : gst_randf(rs);
            memcpy((char *)data + 4 * i, &f, 4);
            break;
        }
        case GS_BF16: ((uint16_t *)data)[i] = gs_f32_to_bf16(gst_randf(rs)); break;
        case GS_S32: ((int32_t *)data)[i] = (int32_t)gst_randint(rs, -1000, 1000); break;
        case GS_U32: ((uint32_t *)data)[i] = (uint32_t)gst_randint(rs, 0, 100000); break;
        case GS_PRED: ((uint8_t *)data)[i] = (uint8_t)gst_randint(rs, 0, 1); break;
        default: break;
        }
    }
}

/* Random replica groups of size G over D devices: a shuffled list, an iota form, or "{}" (G = D). */
static void rt_random_groups(uint64_t *rs, int64_t D, int64_t G, gs_replica_groups *rg, int64_t *ids) {
    int64_t i, form = gst_randint(rs, 0, 2);
    memset(rg, 0, sizeof *rg);
    if (G == D && form == 0) return;   /* {} */
    rg->n_groups = D / G;
    rg->group_size = G;
    if (form == 1) {
        for (i = 0; i < D; i++) ids[i] = i;
        for (i = D - 1; i > 0; i--) {
            int64_t k = gst_randint(rs, 0, i), t = ids[i];
            ids[i] = ids[k];
            ids[k] = t;
        }
        rg->ids = ids;
        return;
    }
    /* iota: [D/G, G] <= [a, b] T(1,0) with a * b = D, or the plain [D] */
    {
        int64_t a = 1, b, c;
        for (c = 1; c <= D; c++)
            if (D % c == 0 && gst_randint(rs, 0, 1)) a = c;
        b = D / a;
        rg->iota_rank = 2;
        rg->iota_dims[0] = a;
        rg->iota_dims[1] = b;
        if (gst_randint(rs, 0, 1)) {
            rg->iota_perm[0] = 1;
            rg->iota_perm[1] = 0;
        } else {
            rg->iota_perm[0] = 0;
            rg->iota_perm[1] = 1;
        }
    }
}

static bool rt_kind_ok(gs_dtype t, gs_reduce_kind k) {
    if (k == GS_REDUCE_AND || k == GS_REDUCE_OR) return t == GS_S32 || t == GS_U32 || t == GS_PRED;
    return true;
}

/* A random valid collective spec on D devices. */
static void rt_random_spec(uint64_t *rs, int64_t D, gs_collective_spec *sp, int64_t *ids, int64_t *pairs) {
    static const gs_dtype types[] = {GS_F32, GS_BF16, GS_S32, GS_U32, GS_PRED};
    int64_t G, i;
    int d;
    memset(sp, 0, sizeof *sp);
    sp->op = (gs_op)(GS_OP_ALL_REDUCE + gst_randint(rs, 0, 4));
    sp->shape.dtype = types[gst_randint(rs, 0, 4)];
    sp->shape.rank = (int)gst_randint(rs, 1, 3);
    for (d = 0; d < sp->shape.rank; d++) sp->shape.dims[d] = gst_randint(rs, 1, 7);
    do {
        sp->reduce = (gs_reduce_kind)gst_randint(rs, GS_REDUCE_SUM, GS_REDUCE_OR);
    } while (!rt_kind_ok(sp->shape.dtype, sp->reduce));
    do {
        G = gst_randint(rs, 1, D);
    } while (D % G != 0);
    if (sp->op == GS_OP_COLLECTIVE_PERMUTE) {
        /* a random partial permutation */
        int64_t n = 0, perm[64];
        for (i = 0; i < D; i++) perm[i] = i;
        for (i = D - 1; i > 0; i--) {
            int64_t k = gst_randint(rs, 0, i), t = perm[i];
            perm[i] = perm[k];
            perm[k] = t;
        }
        for (i = 0; i < D; i++)
            if (gst_randint(rs, 0, 3)) {
                pairs[2 * n] = i;
                pairs[2 * n + 1] = perm[i];
                n++;
            }
        sp->n_pairs = n;
        sp->pairs = pairs;
        return;
    }
    rt_random_groups(rs, D, G, &sp->groups, ids);
    if (sp->op == GS_OP_ALL_GATHER || sp->op == GS_OP_REDUCE_SCATTER) sp->dim = gst_randint(rs, 0, sp->shape.rank - 1);
    if (sp->op == GS_OP_REDUCE_SCATTER) sp->shape.dims[sp->dim] = G * gst_randint(rs, 1, 3);
    if (sp->op == GS_OP_ALL_TO_ALL) {
        sp->split_dim = gst_randint(rs, 0, sp->shape.rank - 1);
        sp->concat_dim = gst_randint(rs, 0, sp->shape.rank - 1);
        sp->shape.dims[sp->split_dim] = G * gst_randint(rs, 1, 3);
    }
}

static const char *rt_op_short(gs_op op) { return gs_op_name(op); }

/* ---------------------------------------------------------------------------------------------------------
   Every collective against the model, both modes, randomised (groups as lists, iota, {}; uneven sizes)
   ------------------------------------------------------------------------------------------------------- */
static void test_runtime_collectives_vs_model(void) {
    gs_ctx *ctx = gst_ctx();
    uint64_t rs = 1234;
    int trial, mode;
    int seen[8] = {0};
    for (trial = 0; trial < 300; trial++) {
        int64_t D = gst_randint(&rs, 1, 8), d, ids[64], pairs[128];
        gs_collective_spec sp;
        gs_shape oshape;
        void *in[8], *out[8][2], *want[8];
        size_t ib, ob;
        rt_random_spec(&rs, D, &sp, ids, pairs);
        seen[sp.op - GS_OP_ALL_REDUCE]++;
        for (mode = 0; mode < 2; mode++) {
            gs_runtime *rt = rt_make_v(ctx, D, mode);
            if (!rt) return;
            if (gs_runtime_collective_shape(rt, &sp, &oshape) != GS_OK) {
                gst_failf(__FILE__, __LINE__, "trial %d: %s", trial, gs_ctx_error_msg(ctx));
                gs_runtime_destroy(rt);
                return;
            }
            ib = gs_shape_bytes(&sp.shape);
            ob = gs_shape_bytes(&oshape);
            if (mode == 0) {
                uint64_t ds = 99 + (uint64_t)trial;
                for (d = 0; d < D; d++) {
                    in[d] = malloc(ib + 1);
                    want[d] = malloc(ob + 1);
                    rt_fill(&ds, sp.shape, in[d], false);
                }
                model_run(&sp, D, (const void *const *)in, want, &oshape);
            }
            for (d = 0; d < D; d++) {
                out[d][mode] = malloc(ob + 1);
                memset(out[d][mode], 0x5A, ob);
            }
            {
                void *o[8];
                for (d = 0; d < D; d++) o[d] = out[d][mode];
                CHECK_OK(gs_runtime_collective(rt, &sp, (const void *const *)in, o, 1 + trial % 3));
            }
            for (d = 0; d < D; d++)
                CHECK_MSG(memcmp(out[d][mode], want[d], ob) == 0, "trial %d (%s, %s, D=%lld, G=%lld, mode %d): device %lld differs from the model",
                          trial, rt_op_short(sp.op), gs_dtype_name(sp.shape.dtype), (long long)D,
                          (long long)sp.groups.group_size, mode, (long long)d);
            gs_runtime_destroy(rt);
        }
        for (d = 0; d < D; d++) {
            free(in[d]);
            free(want[d]);
            free(out[d][0]);
            free(out[d][1]);
        }
    }
    for (trial = 0; trial < 5; trial++) CHECK_MSG(seen[trial] > 20, "collective kind %d tried only %d times", trial, seen[trial]);
    gs_ctx_destroy(ctx);
}

/* Collectives large enough for the streaming-store paths (operands and results of 32 MiB or more in all), on buffers whose
   16-byte alignment differs between devices, lengths that are no multiple of a cache line, a group order
   that is not device order, and 3 devices (on 2 processors the direct call cuts each share in two), in both
   modes, against naive loops written here. */
static void test_runtime_collectives_large(void) {
    gs_ctx *ctx = gst_ctx();
    int op, mode;
    int64_t order[3] = {2, 0, 1}, pairs[4] = {0, 2, 2, 1};
    for (op = 0; op < 7; op++) {
        gs_collective_spec sp;
        gs_shape os;
        char *ibase[3], *obase[3];
        void *in[3], *out[3];
        size_t ib, ob, e, ni, no;
        int64_t d;
        memset(&sp, 0, sizeof sp);
        sp.groups.n_groups = 1;
        sp.groups.group_size = 3;
        sp.groups.ids = order;
        sp.reduce = GS_REDUCE_SUM;
        switch (op) {
        case 0: case 1:   /* all-reduce, f32 and s32: 1398111 elements * 4 bytes * 2 * 3 devices > 32 MiB */
            sp.op = GS_OP_ALL_REDUCE;
            sp.shape = gs_shape_make(op == 0 ? GS_F32 : GS_S32, 1, (int64_t[]){1398111});
            break;
        case 2:   /* reduce-scatter along dim 1 of [7, 3 * 199733]: 7 rows of 199733 per member */
            sp.op = GS_OP_REDUCE_SCATTER;
            sp.dim = 1;
            sp.shape = gs_shape_make(GS_F32, 2, (int64_t[]){7, 3 * 199733});
            break;
        case 3: case 6:   /* all-gather along dim 1 of [5, 139813]; op 6: of [5, 69905] (results over 1 MiB per
                             device, but not streamed: each device fills its own result) */
            sp.op = GS_OP_ALL_GATHER;
            sp.dim = 1;
            sp.shape = gs_shape_make(GS_F32, 2, (int64_t[]){5, op == 3 ? 139813 : 69905});
            break;
        case 4:   /* all-to-all: split dim 1, concat dim 0 of [2, 3 * 233017] */
            sp.op = GS_OP_ALL_TO_ALL;
            sp.split_dim = 1;
            sp.concat_dim = 0;
            sp.shape = gs_shape_make(GS_F32, 2, (int64_t[]){2, 3 * 233017});
            break;
        case 5:   /* collective-permute 0 -> 2 -> 1; device 0 receives zeros */
            sp.op = GS_OP_COLLECTIVE_PERMUTE;
            sp.n_pairs = 2;
            sp.pairs = pairs;
            sp.shape = gs_shape_make(GS_F32, 1, (int64_t[]){1398111});
            break;
        }
        for (mode = 0; mode < 2; mode++) {
            gs_runtime *rt = rt_make_v(ctx, 3, mode);
            int bad = 0;
            if (!rt) return;
            CHECK_OK(gs_runtime_collective_shape(rt, &sp, &os));
            ib = gs_shape_bytes(&sp.shape);
            ob = gs_shape_bytes(&os);
            ni = ib / 4;
            no = ob / 4;
            if (op == 6) CHECK(ob > ((size_t)1 << 20) && (ib + ob) * 3 < ((size_t)32 << 20));
            else CHECK((ib + ob) * 3 >= ((size_t)32 << 20));
            for (d = 0; d < 3; d++) {
                /* device d's buffers start 4 * d bytes past a 16-byte boundary */
                ibase[d] = (char *)malloc(ib + 16);
                obase[d] = (char *)malloc(ob + 16);
                in[d] = ibase[d] + 4 * d;
                out[d] = obase[d] + 4 * d;
                for (e = 0; e < ni; e++) {
                    if (sp.shape.dtype == GS_S32) {
                        int32_t v = (int32_t)(e * 2654435761u + (size_t)d * 977u);   /* wraps when summed */
                        memcpy((char *)in[d] + 4 * e, &v, 4);
                    } else {
                        /* device 2 (first in group order) is large: the order of the additions shows */
                        float v = (float)((e * 7 + (size_t)d * 13) % 1001) * 0.37f + (d == 2 ? 3.0e7f : 0.0f);
                        memcpy((char *)in[d] + 4 * e, &v, 4);
                    }
                }
                memset(out[d], 0x5A, ob);
            }
            CHECK_OK(gs_runtime_collective(rt, &sp, (const void *const *)in, out, 2));
            for (d = 0; d < 3 && !bad; d++) {
                int64_t r = d == 2 ? 0 : d + 1;   /* d's position in the group {2, 0, 1} */
                for (e = 0; e < no && !bad; e++) {
                    uint32_t want, got;
                    size_t row, col, src_dev, src_e;
                    if (op <= 2) {
                        size_t at = e;
                        if (op == 2) at = (e / 199733) * (3 * 199733) + (size_t)r * 199733 + e % 199733;
                        if (sp.shape.dtype == GS_S32) {
                            uint32_t a, b, c;
                            memcpy(&a, (char *)in[2] + 4 * at, 4);
                            memcpy(&b, (char *)in[0] + 4 * at, 4);
                            memcpy(&c, (char *)in[1] + 4 * at, 4);
                            want = a + b + c;
                        } else {
                            float a, b, c, w;
                            memcpy(&a, (char *)in[2] + 4 * at, 4);
                            memcpy(&b, (char *)in[0] + 4 * at, 4);
                            memcpy(&c, (char *)in[1] + 4 * at, 4);
                            w = a + b;
                            w = w + c;
                            memcpy(&want, &w, 4);
                        }
                    } else if (op == 3 || op == 6) {   /* out [5, 3 * c]: block j of row `row` is member j's row */
                        size_t c = op == 3 ? 139813 : 69905;
                        row = e / (3 * c);
                        col = e % (3 * c);
                        src_dev = (size_t)order[col / c];
                        memcpy(&want, (char *)in[src_dev] + 4 * (row * c + col % c), 4);
                    } else if (op == 4) {   /* out [6, 233017]: rows 2j, 2j+1 are member j's piece r */
                        row = e / 233017;
                        col = e % 233017;
                        src_dev = (size_t)order[row / 2];
                        src_e = (row % 2) * (3 * 233017) + (size_t)r * 233017 + col;
                        memcpy(&want, (char *)in[src_dev] + 4 * src_e, 4);
                    } else {   /* op 5 */
                        want = 0;
                        if (d == 2) memcpy(&want, (char *)in[0] + 4 * e, 4);
                        if (d == 1) memcpy(&want, (char *)in[2] + 4 * e, 4);
                    }
                    memcpy(&got, (char *)out[d] + 4 * e, 4);
                    if (got != want) {
                        bad = 1;
                        gst_failf(__FILE__, __LINE__, "%s %s mode %d: device %lld element %zu is 0x%08x, want 0x%08x",
                                  gs_op_name(sp.op), gs_dtype_name(sp.shape.dtype), mode, (long long)d, e, got, want);
                    }
                }
            }
            for (d = 0; d < 3; d++) {
                free(ibase[d]);
                free(obase[d]);
            }
            gs_runtime_destroy(rt);
        }
    }
    gs_ctx_destroy(ctx);
}

/* Hand-picked cases the random ones may miss: iota groups with a transpose, uneven all-reduce slices
   (n not divisible by G), bf16 rounding after each step, pred and/or. */
static void test_runtime_collectives_cases(void) {
    gs_ctx *ctx = gst_ctx();
    gs_runtime *rt = rt_make(ctx, 8, GS_RUNTIME_THREADED);
    gs_collective_spec sp;
    float in[8][7], out[8][7];
    const void *ip[8];
    void *op[8];
    int d, i;
    if (!rt) return;
    for (d = 0; d < 8; d++) {
        for (i = 0; i < 7; i++) in[d][i] = (float)(d * 10 + i);
        ip[d] = in[d];
        op[d] = out[d];
    }
    /* [4,2]<=[2,4]T(1,0) = {{0,4},{1,5},{2,6},{3,7}} */
    memset(&sp, 0, sizeof sp);
    sp.op = GS_OP_ALL_REDUCE;
    sp.reduce = GS_REDUCE_SUM;
    sp.shape = gs_shape_make(GS_F32, 1, (int64_t[]){7});
    sp.groups.n_groups = 4;
    sp.groups.group_size = 2;
    sp.groups.iota_rank = 2;
    sp.groups.iota_dims[0] = 2;
    sp.groups.iota_dims[1] = 4;
    sp.groups.iota_perm[0] = 1;
    sp.groups.iota_perm[1] = 0;
    CHECK_OK(gs_runtime_collective(rt, &sp, ip, op, 1));
    for (d = 0; d < 8; d++)
        for (i = 0; i < 7; i++) CHECK_EQ_INT(out[d][i], in[d % 4][i] + in[d % 4 + 4][i]);
    /* bf16: ((a + b) rounded + c) rounded: 1 + 2^-8 + 2^-8 in bf16 is 1 + 2^-7 only with per-step rounding
       after an exact first sum; here 256 + 1 + 1: 257 rounds to 256 (ties to even), then 256 + 1 = 256 */
    {
        gs_runtime *r3 = rt_make(ctx, 3, GS_RUNTIME_LOCKSTEP);
        uint16_t b[3], o[3][1];
        const void *bp[3];
        void *bo[3];
        if (!r3) return;
        b[0] = gs_f32_to_bf16(256.0f);
        b[1] = gs_f32_to_bf16(1.0f);
        b[2] = gs_f32_to_bf16(1.0f);
        for (d = 0; d < 3; d++) {
            bp[d] = &b[d];
            bo[d] = o[d];
        }
        memset(&sp, 0, sizeof sp);
        sp.op = GS_OP_ALL_REDUCE;
        sp.reduce = GS_REDUCE_SUM;
        sp.shape = gs_shape_make(GS_BF16, 1, (int64_t[]){1});
        CHECK_OK(gs_runtime_collective(r3, &sp, bp, bo, 1));
        for (d = 0; d < 3; d++) CHECK_NEAR(gs_bf16_to_f32(o[d][0]), 256.0, 0);
        gs_runtime_destroy(r3);
    }
    /* pred and/or */
    {
        gs_runtime *r2 = rt_make(ctx, 2, GS_RUNTIME_THREADED);
        uint8_t a[2][3] = {{1, 0, 1}, {1, 1, 0}}, o[2][3];
        const void *ap[2] = {a[0], a[1]};
        void *aop[2] = {o[0], o[1]};
        if (!r2) return;
        memset(&sp, 0, sizeof sp);
        sp.op = GS_OP_ALL_REDUCE;
        sp.reduce = GS_REDUCE_AND;
        sp.shape = gs_shape_make(GS_PRED, 1, (int64_t[]){3});
        CHECK_OK(gs_runtime_collective(r2, &sp, ap, aop, 1));
        CHECK(o[0][0] == 1 && o[0][1] == 0 && o[0][2] == 0 && memcmp(o[0], o[1], 3) == 0);
        sp.reduce = GS_REDUCE_OR;
        CHECK_OK(gs_runtime_collective(r2, &sp, ap, aop, 1));
        CHECK(o[1][0] == 1 && o[1][1] == 1 && o[1][2] == 1);
        sp.reduce = GS_REDUCE_AND;
        sp.shape.dtype = GS_F32;
        CHECK(gs_runtime_collective(r2, &sp, ap, aop, 1) == GS_ERR_INVALID_ARG);
        CHECK(strstr(gs_ctx_error_msg(ctx), "not defined on f32") != NULL);
        gs_ctx_clear_error(ctx);
        gs_runtime_destroy(r2);
    }
    gs_runtime_destroy(rt);
    gs_ctx_destroy(ctx);
}

/* ---------------------------------------------------------------------------------------------------------
   Hand-written SPMD programs against the reference interpreter on the unpartitioned computation
   ------------------------------------------------------------------------------------------------------- */
/* x[8,10] . w[10,6] with the contracting dim split 4 ways (shards of 3, the last one with 2 of padding):
   each device masks its padding (iota + offset < 10), multiplies its blocks, and an all-reduce sums. */
static const char *matmul_spmd_text(bool mask) {
    return mask ?
        "HloModule mm, num_partitions=4\n"
        "sum { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
        "ENTRY main {\n"
        "  x = f32[8,3] parameter(0)\n"
        "  w = f32[3,6] parameter(1)\n"
        "  pid = u32[] partition-id()\n"
        "  offs = s32[4] constant({0, 3, 6, 9})\n"
        "  off1 = s32[1] dynamic-slice(offs, pid), dynamic_slice_sizes={1}\n"
        "  off = s32[] reshape(off1)\n"
        "  io = s32[3] iota(), iota_dimension=0\n"
        "  ob = s32[3] broadcast(off), dimensions={}\n"
        "  gi = s32[3] add(io, ob)\n"
        "  lim = s32[3] constant(10)\n"
        "  valid = pred[3] compare(gi, lim), direction=LT\n"
        "  vx = pred[8,3] broadcast(valid), dimensions={1}\n"
        "  zx = f32[8,3] constant(0)\n"
        "  xm = f32[8,3] select(vx, x, zx)\n"
        "  vw = pred[3,6] broadcast(valid), dimensions={0}\n"
        "  zw = f32[3,6] constant(0)\n"
        "  wm = f32[3,6] select(vw, w, zw)\n"
        "  d = f32[8,6] dot(xm, wm), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
        "  ROOT ar = f32[8,6] all-reduce(d), replica_groups={}, to_apply=sum\n"
        "}\n"
        :
        "HloModule mm, num_partitions=4\n"
        "sum { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
        "ENTRY main {\n"
        "  x = f32[8,3] parameter(0)\n"
        "  w = f32[3,6] parameter(1)\n"
        "  d = f32[8,6] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
        "  ROOT ar = f32[8,6] all-reduce(d), replica_groups={}, to_apply=sum\n"
        "}\n";
}

static const char *matmul_ref_text =
    "HloModule mm\n"
    "ENTRY main {\n"
    "  x = f32[8,10] parameter(0)\n"
    "  w = f32[10,6] parameter(1)\n"
    "  ROOT d = f32[8,6] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "}\n";

static void run_matmul(gs_runtime_mode mode, bool mask, bool no_poison, float *out, gs_result *res) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = rt_parse(ctx, matmul_spmd_text(mask));
    gs_runtime_desc desc;
    gs_runtime *rt = NULL;
    uint64_t rs = 5;
    static float x[80], w[60];
    int i;
    const gs_sharding *shx = gs_sharding_parse(ctx, "{devices=[1,4]0,1,2,3}");
    const gs_sharding *shw = gs_sharding_parse(ctx, "{devices=[4,1]0,1,2,3}");
    const gs_sharding *in_sh[2];
    gs_shape in_shapes[2], out_shape;
    const void *inputs[2];
    void *outputs[1];
    for (i = 0; i < 80; i++) x[i] = (float)gst_randint(&rs, -5, 5);
    for (i = 0; i < 60; i++) w[i] = (float)gst_randint(&rs, -5, 5);
    memset(&desc, 0, sizeof desc);
    desc.num_devices = 4;
    desc.mode = mode;
    desc.no_poison = no_poison;
    desc.check_replicas = true;
    if (!g || !shx || !shw || gs_runtime_create(ctx, &desc, &rt) != GS_OK) {
        gst_failf(__FILE__, __LINE__, "setup: %s", gs_ctx_error_msg(ctx));
        gs_ctx_destroy(ctx);
        *res = GS_ERR_INVALID_ARG;
        return;
    }
    in_sh[0] = shx;
    in_sh[1] = shw;
    in_shapes[0] = gs_shape_make(GS_F32, 2, (int64_t[]){8, 10});
    in_shapes[1] = gs_shape_make(GS_F32, 2, (int64_t[]){10, 6});
    out_shape = gs_shape_make(GS_F32, 2, (int64_t[]){8, 6});
    inputs[0] = x;
    inputs[1] = w;
    outputs[0] = out;
    *res = gs_runtime_run_global(rt, g, in_shapes, in_sh, inputs, &out_shape, NULL, outputs);
    if (*res != GS_OK) gst_failf(__FILE__, __LINE__, "run_global: %s", gs_ctx_error_msg(ctx));
    gs_runtime_destroy(rt);
    gs_ctx_destroy(ctx);
}

static void test_runtime_matmul_allreduce(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *ref = rt_parse(ctx, matmul_ref_text);
    static float x[80], w[60], want[48], got[48];
    uint64_t rs = 5;
    int i, nan;
    gs_result r;
    const void *in[2] = {x, w};
    void *out[1] = {want};
    for (i = 0; i < 80; i++) x[i] = (float)gst_randint(&rs, -5, 5);
    for (i = 0; i < 60; i++) w[i] = (float)gst_randint(&rs, -5, 5);
    CHECK_OK(gs_eval(ref, in, out));
    /* masked program: equal to the unpartitioned dot (small integers: every sum is exact) */
    run_matmul(GS_RUNTIME_THREADED, true, false, got, &r);
    CHECK(r == GS_OK && memcmp(got, want, sizeof want) == 0);
    run_matmul(GS_RUNTIME_LOCKSTEP, true, false, got, &r);
    CHECK(r == GS_OK && memcmp(got, want, sizeof want) == 0);
    /* without the mask, the poisoned padding reaches the result */
    run_matmul(GS_RUNTIME_THREADED, false, false, got, &r);
    for (i = 0, nan = 0; i < 48; i++) nan += got[i] != got[i];
    CHECK_EQ_INT(nan, 48);
    /* ... and with zero padding the same bug passes by luck */
    run_matmul(GS_RUNTIME_THREADED, false, true, got, &r);
    CHECK(r == GS_OK && memcmp(got, want, sizeof want) == 0);
    gs_ctx_destroy(ctx);
}

/* A ring: x sharded 4 ways by rows; every step each device passes what it holds to the next one and adds
   what it receives, in a while loop of D-1 trips. Every device ends with the sum of all shards. */
static void test_runtime_permute_ring(void) {
    static const char *spmd =
        "HloModule ring, num_partitions=4\n"
        "cond {\n"
        "  s = (s32[], f32[2,5], f32[2,5]) parameter(0)\n"
        "  i = s32[] get-tuple-element(s), index=0\n"
        "  n = s32[] constant(3)\n"
        "  ROOT c = pred[] compare(i, n), direction=LT\n"
        "}\n"
        "body {\n"
        "  s = (s32[], f32[2,5], f32[2,5]) parameter(0)\n"
        "  i = s32[] get-tuple-element(s), index=0\n"
        "  cur = f32[2,5] get-tuple-element(s), index=1\n"
        "  acc = f32[2,5] get-tuple-element(s), index=2\n"
        "  nxt = f32[2,5] collective-permute(cur), source_target_pairs={{0,1},{1,2},{2,3},{3,0}}\n"
        "  acc2 = f32[2,5] add(acc, nxt)\n"
        "  one = s32[] constant(1)\n"
        "  i2 = s32[] add(i, one)\n"
        "  ROOT t = (s32[], f32[2,5], f32[2,5]) tuple(i2, nxt, acc2)\n"
        "}\n"
        "ENTRY main {\n"
        "  x = f32[2,5] parameter(0)\n"
        "  z = s32[] constant(0)\n"
        "  t = (s32[], f32[2,5], f32[2,5]) tuple(z, x, x)\n"
        "  w = (s32[], f32[2,5], f32[2,5]) while(t), condition=cond, body=body\n"
        "  ROOT r = f32[2,5] get-tuple-element(w), index=2\n"
        "}\n";
    static const char *ref =
        "HloModule ring\n"
        "sum { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
        "ENTRY main {\n"
        "  x = f32[4,2,5] parameter(0)\n"
        "  z = f32[] constant(0)\n"
        "  ROOT r = f32[2,5] reduce(x, z), dimensions={0}, to_apply=sum\n"
        "}\n";
    int mode;
    for (mode = 0; mode < RT_VARIANTS; mode++) {
        gs_ctx *ctx = gst_ctx();
        gs_graph *g = rt_parse(ctx, spmd), *gr = rt_parse(ctx, ref);
        gs_runtime *rt = rt_make_v(ctx, 4, mode);
        static float x[40], want[10], got[4][10];
        const void *in[4];
        void *out[4];
        uint64_t rs = 77;
        int d, i;
        if (!g || !gr || !rt) return;
        for (i = 0; i < 40; i++) x[i] = (float)gst_randint(&rs, -9, 9);
        {
            const void *ri[1] = {x};
            void *ro[1] = {want};
            CHECK_OK(gs_eval(gr, ri, ro));
        }
        for (d = 0; d < 4; d++) {
            in[d] = x + 10 * d;
            out[d] = got[d];
        }
        CHECK_OK(gs_runtime_run(rt, g, in, out));
        for (d = 0; d < 4; d++) CHECK_MSG(memcmp(got[d], want, sizeof want) == 0, "mode %d device %d", mode, d);
        {
            gs_runtime_stats st;
            CHECK_OK(gs_runtime_get_stats(rt, &st));
            CHECK_EQ_INT(st.n_collectives, 1);
            CHECK_EQ_INT(st.collectives[0].count, 3);
            CHECK_EQ_INT(st.collectives[0].bytes_sent, 3 * 4 * 40);
            CHECK_EQ_INT(st.collectives[0].bytes_received, 3 * 4 * 40);
            CHECK_EQ_INT(st.collectives[0].max_device_sent, 3 * 40);
            CHECK_EQ_INT(st.collectives[0].rank_bytes_sent, 0);   /* one process: nothing between ranks */
        }
        gs_runtime_destroy(rt);
        gs_ctx_destroy(ctx);
    }
}

/* An all-to-all transpose: a[6,8] row-sharded 2 ways, all-to-all(split 1, concat 0) makes it column-sharded;
   gathered with the column sharding it is a again. A local transpose of the column shards then gives the
   row shards of a^T, compared with the interpreter's transpose. */
static void test_runtime_alltoall_transpose(void) {
    static const char *spmd =
        "HloModule a2a, num_partitions=2\n"
        "ENTRY main {\n"
        "  a = f32[3,8] parameter(0)\n"
        "  c = f32[6,4] all-to-all(a), replica_groups={{0,1}}, split_dimension=1, concat_dimension=0\n"
        "  t = f32[4,6] transpose(c), dimensions={1,0}\n"
        "  ROOT r = (f32[6,4], f32[4,6]) tuple(c, t)\n"
        "}\n";
    static const char *ref =
        "HloModule t\nENTRY main {\n  a = f32[6,8] parameter(0)\n  ROOT t = f32[8,6] transpose(a), dimensions={1,0}\n}\n";
    int mode;
    for (mode = 0; mode < RT_VARIANTS; mode++) {
        gs_ctx *ctx = gst_ctx();
        gs_graph *g = rt_parse(ctx, spmd), *gr = rt_parse(ctx, ref);
        gs_runtime *rt = rt_make_v(ctx, 2, mode);
        static float a[48], back[48], at[48], want[48];
        const gs_sharding *rows, *cols;
        gs_shape ishape, oshapes[2];
        const gs_sharding *osh[2];
        const void *in[1] = {a};
        void *out[2] = {back, at};
        int i;
        if (!g || !gr || !rt) return;
        rows = gs_sharding_parse(ctx, "{devices=[2,1]0,1}");
        cols = gs_sharding_parse(ctx, "{devices=[1,2]0,1}");
        for (i = 0; i < 48; i++) a[i] = (float)i;
        {
            const void *ri[1] = {a};
            void *ro[1] = {want};
            CHECK_OK(gs_eval(gr, ri, ro));
        }
        ishape = gs_shape_make(GS_F32, 2, (int64_t[]){6, 8});
        oshapes[0] = ishape;
        oshapes[1] = gs_shape_make(GS_F32, 2, (int64_t[]){8, 6});
        osh[0] = cols;
        osh[1] = rows;
        CHECK_OK(gs_runtime_run_global(rt, g, &ishape, &rows, in, oshapes, osh, out));
        CHECK(memcmp(back, a, sizeof a) == 0);
        CHECK(memcmp(at, want, sizeof want) == 0);
        gs_runtime_destroy(rt);
        gs_ctx_destroy(ctx);
    }
}

/* Partition-id offset tables with dynamic-slice: each device cuts its block of 3 out of a replicated x[10]
   at the offset its partition-id selects from a constant table (x is first padded to 12 so that the last
   block, which holds only x[9], starts in range), scales it, and the result is gathered with the 4-way
   sharding (the last tile is 1 element). */
static void test_runtime_offset_tables(void) {
    static const char *spmd =
        "HloModule off, num_partitions=4\n"
        "ENTRY main {\n"
        "  x = f32[10] parameter(0)\n"
        "  pid = u32[] partition-id()\n"
        "  starts = s32[4] constant({0, 3, 6, 9})\n"
        "  s1 = s32[1] dynamic-slice(starts, pid), dynamic_slice_sizes={1}\n"
        "  s = s32[] reshape(s1)\n"
        "  z = f32[2] constant(0)\n"
        "  xp = f32[12] concatenate(x, z), dimensions={0}\n"
        "  blk = f32[3] dynamic-slice(xp, s), dynamic_slice_sizes={3}\n"
        "  two = f32[3] constant(2)\n"
        "  ROOT y = f32[3] multiply(blk, two)\n"
        "}\n";
    static const char *ref =
        "HloModule r\nENTRY main {\n  x = f32[10] parameter(0)\n  two = f32[10] constant(2)\n"
        "  ROOT y = f32[10] multiply(x, two)\n}\n";
    int mode;
    for (mode = 0; mode < RT_VARIANTS; mode++) {
        gs_ctx *ctx = gst_ctx();
        gs_graph *g = rt_parse(ctx, spmd), *gr = rt_parse(ctx, ref);
        gs_runtime *rt = rt_make_v(ctx, 4, mode);
        float x[10], want[10], got[10];
        const gs_sharding *sh;
        gs_shape s10 = gs_shape_make(GS_F32, 1, (int64_t[]){10});
        const void *in[1] = {x};
        void *out[1] = {got};
        int i;
        if (!g || !gr || !rt) return;
        sh = gs_sharding_parse(ctx, "{devices=[4]0,1,2,3}");
        for (i = 0; i < 10; i++) x[i] = (float)i + 0.5f;
        {
            const void *ri[1] = {x};
            void *ro[1] = {want};
            CHECK_OK(gs_eval(gr, ri, ro));
        }
        CHECK_OK(gs_runtime_run_global(rt, g, &s10, NULL, in, &s10, &sh, out));
        CHECK(memcmp(got, want, sizeof want) == 0);
        gs_runtime_destroy(rt);
        gs_ctx_destroy(ctx);
    }
}

/* Device d's tile of the global array g (shape gl, sharding s): a naive element loop over the region
   gs_sharding_device_region gives. Returns the element count (0: the device holds nothing). */
static int64_t rt_tile_of(const gs_sharding *s, gs_shape gl, int64_t d, const void *g, void *tile) {
    int64_t off[GS_MAX_RANK], lim[GS_MAX_RANK], n = 1, e, idx[GS_MAX_RANK];
    size_t es = gs_dtype_size(gl.dtype);
    int i;
    if (!gs_sharding_device_region(s, gl, d, off, lim)) return 0;
    for (i = 0; i < gl.rank; i++) n *= lim[i] - off[i];
    for (e = 0; e < n; e++) {   /* element e of the tile: its index in the region, then in the global array */
        int64_t rest = e, at = 0;
        for (i = gl.rank - 1; i >= 0; i--) {
            idx[i] = off[i] + rest % (lim[i] - off[i]);
            rest /= lim[i] - off[i];
        }
        for (i = 0; i < gl.rank; i++) at = at * gl.dims[i] + idx[i];
        memcpy((char *)tile + e * (int64_t)es, (const char *)g + at * (int64_t)es, es);
    }
    return n;
}

/* run_tiles gives the same bits as run_global: a padded split (x: 10 over 4, its shards output whole so the
   poisoned padding shows), a replicated bf16 input (one pointer for every device, converted), a partially
   replicated s32 input (each device its own copy of the tile) and an input two devices hold nothing of (NULL
   tiles there); a missing tile of a device that holds one is an error. */
static void test_runtime_run_tiles(void) {
    static const char *spmd =
        "HloModule tiles, num_partitions=4\n"
        "ENTRY main {\n"
        "  x = f32[3] parameter(0)\n"
        "  w = bf16[2,3] parameter(1)\n"
        "  z = s32[2,2] parameter(2)\n"
        "  e = f32[1] parameter(3)\n"
        "  xc = f32[3] copy(x)\n"
        "  wf = f32[2,3] convert(w)\n"
        "  zc = s32[2,2] copy(z)\n"
        "  ec = f32[1] copy(e)\n"
        "  ROOT t = (f32[3], f32[2,3], s32[2,2], f32[1]) tuple(xc, wf, zc, ec)\n"
        "}\n";
    int mode;
    for (mode = 0; mode < RT_VARIANTS; mode++) {
        gs_ctx *ctx = gst_ctx();
        gs_graph *g = rt_parse(ctx, spmd);
        gs_runtime *rt = rt_make_v(ctx, 4, mode);
        static float x[10], ex[2], tx[4][10], te[4][2], a0[12], a1[6], a3[4], b0[12], b1[6], b3[4];
        static uint16_t w[6];
        static int32_t z[8], tz[4][8], a2[8], b2[8];
        const gs_sharding *in_sh[4], *out_sh[4];
        gs_shape in_shapes[4], out_shapes[4];
        const void *glob[4] = {x, w, z, ex}, *tiles[16];
        void *oa[4] = {a0, a1, a2, a3}, *ob[4] = {b0, b1, b2, b3};
        int64_t d;
        int i;
        if (!g || !rt) return;
        for (i = 0; i < 10; i++) x[i] = (float)i + 0.25f;
        for (i = 0; i < 6; i++) w[i] = gs_f32_to_bf16((float)i * 1.5f - 2.0f);
        for (i = 0; i < 8; i++) z[i] = 100 + i;
        ex[0] = 7.0f;
        ex[1] = 8.0f;
        in_shapes[0] = gs_shape_make(GS_F32, 1, (int64_t[]){10});
        in_shapes[1] = gs_shape_make(GS_BF16, 2, (int64_t[]){2, 3});
        in_shapes[2] = gs_shape_make(GS_S32, 2, (int64_t[]){4, 2});
        in_shapes[3] = gs_shape_make(GS_F32, 1, (int64_t[]){2});   /* e: 2 over 4, devices 2 and 3 hold nothing */
        in_sh[0] = gs_sharding_parse(ctx, "{devices=[4]0,1,2,3}");
        in_sh[1] = NULL;
        in_sh[2] = gs_sharding_parse(ctx, "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}");
        in_sh[3] = gs_sharding_parse(ctx, "{devices=[4]0,1,2,3}");
        out_shapes[0] = gs_shape_make(GS_F32, 1, (int64_t[]){12});   /* every shard whole, padding included */
        out_shapes[1] = gs_shape_make(GS_F32, 2, (int64_t[]){2, 3});
        out_shapes[2] = in_shapes[2];
        out_shapes[3] = gs_shape_make(GS_F32, 1, (int64_t[]){4});
        out_sh[0] = in_sh[0];
        out_sh[1] = NULL;
        out_sh[2] = in_sh[2];
        out_sh[3] = in_sh[0];
        for (d = 0; d < 4; d++) {
            tiles[d * 4 + 0] = rt_tile_of(in_sh[0], in_shapes[0], d, x, tx[d]) ? tx[d] : NULL;
            tiles[d * 4 + 1] = w;
            tiles[d * 4 + 2] = rt_tile_of(in_sh[2], in_shapes[2], d, z, tz[d]) ? tz[d] : NULL;
            tiles[d * 4 + 3] = rt_tile_of(in_sh[3], in_shapes[3], d, ex, te[d]) ? te[d] : NULL;
        }
        CHECK(tiles[2 * 4 + 3] == NULL && tiles[3 * 4 + 3] == NULL && tiles[1 * 4 + 3] != NULL);
        CHECK_OK(gs_runtime_run_global(rt, g, in_shapes, in_sh, glob, out_shapes, out_sh, oa));
        CHECK_OK(gs_runtime_run_tiles(rt, g, in_shapes, in_sh, tiles, out_shapes, out_sh, ob));
        CHECK(memcmp(a0, b0, sizeof a0) == 0 && memcmp(a1, b1, sizeof a1) == 0);
        CHECK(memcmp(a2, b2, sizeof a2) == 0 && memcmp(a3, b3, sizeof a3) == 0);
        /* hand-checked: device 3 holds x[9] then two poisoned elements; z comes back whole */
        CHECK_NEAR(b0[9], 9.25, 0.0);
        CHECK(b0[10] != b0[10] && b0[11] != b0[11]);
        CHECK(memcmp(b2, z, sizeof z) == 0);
        CHECK_NEAR(b1[5], 5.5, 0.0);
        CHECK_NEAR(b3[1], 8.0, 0.0);
        CHECK(b3[2] != b3[2]);
        tiles[1 * 4 + 2] = NULL;
        CHECK_ERR(gs_runtime_run_tiles(rt, g, in_shapes, in_sh, tiles, out_shapes, out_sh, ob), GS_ERR_INVALID_ARG,
                  "input 2: the tile of device 1 is NULL");
        CHECK_ERR(gs_runtime_run_tiles(rt, g, in_shapes, in_sh, NULL, out_shapes, out_sh, ob), GS_ERR_INVALID_ARG,
                  "needs 4 input and 4 output arrays");
        {
            int64_t lo = -1, hi = -1;
            gs_runtime_local_devices(rt, &lo, &hi);
            CHECK(lo == 0 && hi == 4);
        }
        gs_runtime_destroy(rt);
        gs_ctx_destroy(ctx);
    }
}

/* run_tiles of an unreduced input, as run_global: each device is given the whole value as its tile, the first
   device of each unreduced group keeps it and the others take zero, so the gathered sum is the value (not G
   times it); with a tiled unreduced subgroup, along the tiles too. */
static void test_runtime_run_tiles_unreduced(void) {
    static const char *spmd =
        "HloModule u, num_partitions=4\nENTRY main {\n  x = f32[3] parameter(0)\n  ROOT y = f32[3] copy(x)\n}\n";
    static const char *spmd2 =
        "HloModule u2, num_partitions=4\nENTRY main {\n  x = f32[2] parameter(0)\n  ROOT y = f32[2] copy(x)\n}\n";
    int mode;
    for (mode = 0; mode < RT_VARIANTS; mode++) {
        gs_ctx *ctx = gst_ctx();
        gs_graph *g = rt_parse(ctx, spmd), *g2 = rt_parse(ctx, spmd2);
        gs_runtime *rt = rt_make_v(ctx, 4, mode);
        float x[3] = {1.5f, -2.0f, 4.0f}, a[3], b[3], x4[4] = {1, 2, 3, 4}, t4[4][2], a4[4], b4[4];
        const gs_sharding *sh, *sh2;
        gs_shape s3 = gs_shape_make(GS_F32, 1, (int64_t[]){3}), s4 = gs_shape_make(GS_F32, 1, (int64_t[]){4});
        const void *glob[1] = {x}, *tiles[4] = {x, x, x, x}, *glob4[1] = {x4}, *tiles4[4];
        void *oa[1] = {a}, *ob[1] = {b}, *oa4[1] = {a4}, *ob4[1] = {b4};
        int64_t d;
        if (!g || !g2 || !rt) return;
        sh = gs_sharding_parse(ctx, "{unreduced}");
        sh2 = gs_sharding_parse(ctx, "{devices=[2,2]<=[4] last_tile_dims={unreduced}}");
        CHECK(sh && sh2);
        CHECK_OK(gs_runtime_run_global(rt, g, &s3, &sh, glob, &s3, &sh, oa));
        CHECK_OK(gs_runtime_run_tiles(rt, g, &s3, &sh, tiles, &s3, &sh, ob));
        CHECK(memcmp(a, x, sizeof x) == 0 && memcmp(b, x, sizeof x) == 0);
        for (d = 0; d < 4; d++) tiles4[d] = rt_tile_of(sh2, s4, d, x4, t4[d]) ? t4[d] : NULL;
        CHECK_OK(gs_runtime_run_global(rt, g2, &s4, &sh2, glob4, &s4, &sh2, oa4));
        CHECK_OK(gs_runtime_run_tiles(rt, g2, &s4, &sh2, tiles4, &s4, &sh2, ob4));
        CHECK(memcmp(a4, x4, sizeof x4) == 0 && memcmp(b4, x4, sizeof x4) == 0);
        gs_runtime_destroy(rt);
        gs_ctx_destroy(ctx);
    }
}

/* ---------------------------------------------------------------------------------------------------------
   Mismatches, failures, the watchdog: errors within a second, never a hang
   ------------------------------------------------------------------------------------------------------- */
/* A while loop whose trip count is partition-id + 1, with an all-reduce in the body. */
static const char *divergent_loop_text =
    "HloModule div\n"
    "sum { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
    "cond {\n"
    "  s = (s32[], f32[4]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  p = u32[] partition-id()\n"
    "  ps = s32[] convert(p)\n"
    "  ROOT c = pred[] compare(i, ps), direction=LE\n"
    "}\n"
    "body {\n"
    "  s = (s32[], f32[4]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  v = f32[4] get-tuple-element(s), index=1\n"
    "  ar = f32[4] all-reduce(v), replica_groups={}, to_apply=sum\n"
    "  one = s32[] constant(1)\n"
    "  i2 = s32[] add(i, one)\n"
    "  ROOT t = (s32[], f32[4]) tuple(i2, ar)\n"
    "}\n"
    "ENTRY main {\n"
    "  x = f32[4] parameter(0)\n"
    "  z = s32[] constant(0)\n"
    "  t = (s32[], f32[4]) tuple(z, x)\n"
    "  w = (s32[], f32[4]) while(t), condition=cond, body=body\n"
    "  ROOT r = f32[4] get-tuple-element(w), index=1\n"
    "}\n";

/* Two loops that run on device 0 only and on device 1 only, each with an all-reduce of a different shape. */
static const char *two_shapes_text =
    "HloModule shapes\n"
    "sum { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
    "c0 {\n"
    "  s = (s32[], f32[4]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  p = u32[] partition-id()\n"
    "  z = u32[] constant(0)\n"
    "  first = pred[] compare(p, z), direction=EQ\n"
    "  zi = s32[] constant(0)\n"
    "  fresh = pred[] compare(i, zi), direction=EQ\n"
    "  ROOT c = pred[] and(first, fresh)\n"
    "}\n"
    "b0 {\n"
    "  s = (s32[], f32[4]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  v = f32[4] get-tuple-element(s), index=1\n"
    "  ar4 = f32[4] all-reduce(v), replica_groups={}, to_apply=sum\n"
    "  one = s32[] constant(1)\n"
    "  i2 = s32[] add(i, one)\n"
    "  ROOT t = (s32[], f32[4]) tuple(i2, ar4)\n"
    "}\n"
    "c1 {\n"
    "  s = (s32[], f32[8]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  p = u32[] partition-id()\n"
    "  z = u32[] constant(0)\n"
    "  other = pred[] compare(p, z), direction=NE\n"
    "  zi = s32[] constant(0)\n"
    "  fresh = pred[] compare(i, zi), direction=EQ\n"
    "  ROOT c = pred[] and(other, fresh)\n"
    "}\n"
    "b1 {\n"
    "  s = (s32[], f32[8]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  v = f32[8] get-tuple-element(s), index=1\n"
    "  ar8 = f32[8] all-reduce(v), replica_groups={}, to_apply=sum\n"
    "  one = s32[] constant(1)\n"
    "  i2 = s32[] add(i, one)\n"
    "  ROOT t = (s32[], f32[8]) tuple(i2, ar8)\n"
    "}\n"
    "ENTRY main {\n"
    "  x = f32[4] parameter(0)\n"
    "  z = s32[] constant(0)\n"
    "  t0 = (s32[], f32[4]) tuple(z, x)\n"
    "  w0 = (s32[], f32[4]) while(t0), condition=c0, body=b0\n"
    "  r0 = f32[4] get-tuple-element(w0), index=1\n"
    "  x8 = f32[8] concatenate(r0, r0), dimensions={0}\n"
    "  t1 = (s32[], f32[8]) tuple(z, x8)\n"
    "  w1 = (s32[], f32[8]) while(t1), condition=c1, body=b1\n"
    "  ROOT r = f32[8] get-tuple-element(w1), index=1\n"
    "}\n";

static void expect_error(const char *text, int64_t D, int variant, int64_t watchdog_ms, gs_result code,
                         const char *needle, const char *needle2) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = rt_parse(ctx, text);
    gs_runtime_desc desc = rt_desc_v(D, variant);
    gs_runtime *rt = NULL;
    float *x, *out;
    const void **in;
    void **o;
    int64_t d, n_out = 0;
    double t0;
    gs_result r;
    if (!g) return;
    desc.watchdog_ms = watchdog_ms;
    CHECK_OK(gs_runtime_create(ctx, &desc, &rt));
    if (!rt) return;
    x = (float *)calloc(64, sizeof(float));
    out = (float *)calloc((size_t)D * 64, sizeof(float));
    in = (const void **)calloc((size_t)D, sizeof(void *));
    o = (void **)calloc((size_t)D, sizeof(void *));
    n_out = 64;
    for (d = 0; d < D; d++) {
        in[d] = x;
        o[d] = out + d * n_out;
    }
    t0 = rt_now();
    r = gs_runtime_run(rt, g, in, o);
    CHECK_MSG(rt_now() - t0 < 1.0 + (double)(watchdog_ms > 0 ? watchdog_ms : 0) / 1000.0, "took %.2f s", rt_now() - t0);
    CHECK_MSG(r == code, "D=%lld variant %d: got %s (%s), expected %s", (long long)D, variant, gs_result_str(r),
              gs_ctx_error_msg(ctx), gs_result_str(code));
    if (needle) CHECK_MSG(strstr(gs_ctx_error_msg(ctx), needle) != NULL, "message: %s", gs_ctx_error_msg(ctx));
    if (needle2) CHECK_MSG(strstr(gs_ctx_error_msg(ctx), needle2) != NULL, "message: %s", gs_ctx_error_msg(ctx));
    {
        gs_runtime_stats st;
        CHECK(gs_runtime_get_stats(rt, &st) == GS_ERR_INVALID_ARG);
    }
    gs_runtime_destroy(rt);
    free(x);
    free(out);
    free((void *)in);
    free(o);
    gs_ctx_destroy(ctx);
}

static void test_runtime_mismatch_divergent_loop(void) {
    int mode;
    for (mode = 0; mode < RT_VARIANTS; mode++) {
        /* device 0 leaves the loop after one trip; device 1 wants a second all-reduce */
        expect_error(divergent_loop_text, 2, mode, 0, GS_ERR_INVALID_ARG, "collective mismatch",
                     "device 0 is at the end of the program but device 1 is at all-reduce ar (in iteration 1 of while w)");
        expect_error(divergent_loop_text, 64, mode, 0, GS_ERR_INVALID_ARG, "collective mismatch", "all-reduce ar");
        expect_error(two_shapes_text, 2, mode, 0, GS_ERR_INVALID_ARG, "all-reduce ar4", "all-reduce ar8");
        expect_error(two_shapes_text, 64, mode, 0, GS_ERR_INVALID_ARG, "collective mismatch", "ar8");
    }
}

/* Nested loops whose iteration counts differ per device but whose total number of all-reduces is the same:
   only the loop signature tells them apart. Outer: 2 trips; inner: 1 trip on device 0, then 1; device 1:
   2 trips, then 0. */
static void test_runtime_mismatch_nested_iterations(void) {
    static const char *text =
        "HloModule nest\n"
        "sum { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
        "icond {\n"
        "  s = (s32[], s32[], f32[2]) parameter(0)\n"
        "  i = s32[] get-tuple-element(s), index=0\n"
        "  n = s32[] get-tuple-element(s), index=1\n"
        "  ROOT c = pred[] compare(i, n), direction=LT\n"
        "}\n"
        "ibody {\n"
        "  s = (s32[], s32[], f32[2]) parameter(0)\n"
        "  i = s32[] get-tuple-element(s), index=0\n"
        "  n = s32[] get-tuple-element(s), index=1\n"
        "  v = f32[2] get-tuple-element(s), index=2\n"
        "  ar = f32[2] all-reduce(v), replica_groups={}, to_apply=sum\n"
        "  one = s32[] constant(1)\n"
        "  i2 = s32[] add(i, one)\n"
        "  ROOT t = (s32[], s32[], f32[2]) tuple(i2, n, ar)\n"
        "}\n"
        "ocond {\n"
        "  s = (s32[], f32[2]) parameter(0)\n"
        "  i = s32[] get-tuple-element(s), index=0\n"
        "  two = s32[] constant(2)\n"
        "  ROOT c = pred[] compare(i, two), direction=LT\n"
        "}\n"
        "obody {\n"
        "  s = (s32[], f32[2]) parameter(0)\n"
        "  i = s32[] get-tuple-element(s), index=0\n"
        "  v = f32[2] get-tuple-element(s), index=1\n"
        "  p = u32[] partition-id()\n"
        "  ps = s32[] convert(p)\n"
        "  one = s32[] constant(1)\n"
        "  zero = s32[] constant(0)\n"
        "  first = pred[] compare(i, zero), direction=EQ\n"
        "  two = s32[] constant(2)\n"
        "  n1 = s32[] add(ps, one)\n"
        "  n2 = s32[] subtract(one, ps)\n"
        "  n = s32[] select(first, n1, n2)\n"
        "  it = (s32[], s32[], f32[2]) tuple(zero, n, v)\n"
        "  w = (s32[], s32[], f32[2]) while(it), condition=icond, body=ibody\n"
        "  r = f32[2] get-tuple-element(w), index=2\n"
        "  i2 = s32[] add(i, one)\n"
        "  ROOT t = (s32[], f32[2]) tuple(i2, r)\n"
        "}\n"
        "ENTRY main {\n"
        "  x = f32[2] parameter(0)\n"
        "  z = s32[] constant(0)\n"
        "  t = (s32[], f32[2]) tuple(z, x)\n"
        "  w = (s32[], f32[2]) while(t), condition=ocond, body=obody\n"
        "  ROOT r = f32[2] get-tuple-element(w), index=1\n"
        "}\n";
    int mode;
    for (mode = 0; mode < RT_VARIANTS; mode++)
        expect_error(text, 2, mode, 0, GS_ERR_INVALID_ARG, "collective mismatch", "iteration");
}

/* A device that computes for a very long time before a collective: the watchdog ends the run. */
static void test_runtime_watchdog(void) {
    static const char *text =
        "HloModule wd\n"
        "sum { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
        "cond {\n"
        "  s = s32[] parameter(0)\n"
        "  p = u32[] partition-id()\n"
        "  z = u32[] constant(0)\n"
        "  busy = pred[] compare(p, z), direction=EQ\n"
        "  big = s32[] constant(2000000000)\n"
        "  more = pred[] compare(s, big), direction=LT\n"
        "  ROOT c = pred[] and(busy, more)\n"
        "}\n"
        "body {\n"
        "  s = s32[] parameter(0)\n"
        "  one = s32[] constant(1)\n"
        "  ROOT t = s32[] add(s, one)\n"
        "}\n"
        "ENTRY main {\n"
        "  x = f32[4] parameter(0)\n"
        "  z = s32[] constant(0)\n"
        "  w = s32[] while(z), condition=cond, body=body\n"
        "  wf = f32[] convert(w)\n"
        "  wb = f32[4] broadcast(wf), dimensions={}\n"
        "  y = f32[4] add(x, wb)\n"
        "  ROOT ar = f32[4] all-reduce(y), replica_groups={}, to_apply=sum\n"
        "}\n";
    int mode;
    for (mode = 0; mode < RT_VARIANTS; mode++) {
        expect_error(text, 2, mode, 200, GS_ERR_THREAD, "watchdog: device 1 waited", "device 0 never arrived");
        /* device 0 shares its worker with waiting devices (except with a thread per device) */
        expect_error(text, 8, mode, 200, GS_ERR_THREAD, "watchdog: device ", "device 0 never arrived");
    }
}

/* An allocator that fails the n-th allocation from the moment it is armed (counted over all threads). */
static int fail_armed, fail_count, fail_at;
static void *failing_alloc(size_t n, void *user) {
    (void)user;
    if (GST_ATOMIC_ADD(&fail_armed, 0) && GST_ATOMIC_ADD(&fail_count, 1) == fail_at) return NULL;
    return malloc(n);
}
static void failing_free(void *p, void *user) {
    (void)user;
    free(p);
}

/* The divergent loop with the same trip count (3) everywhere. */
static const char *uniform_loop_text =
    "HloModule uni\n"
    "sum { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
    "cond {\n"
    "  s = (s32[], f32[4]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  n = s32[] constant(3)\n"
    "  ROOT c = pred[] compare(i, n), direction=LT\n"
    "}\n"
    "body {\n"
    "  s = (s32[], f32[4]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  v = f32[4] get-tuple-element(s), index=1\n"
    "  ar = f32[4] all-reduce(v), replica_groups={}, to_apply=sum\n"
    "  one = s32[] constant(1)\n"
    "  i2 = s32[] add(i, one)\n"
    "  ROOT t = (s32[], f32[4]) tuple(i2, ar)\n"
    "}\n"
    "ENTRY main {\n"
    "  x = f32[4] parameter(0)\n"
    "  z = s32[] constant(0)\n"
    "  t = (s32[], f32[4]) tuple(z, x)\n"
    "  w = (s32[], f32[4]) while(t), condition=cond, body=body\n"
    "  ROOT r = f32[4] get-tuple-element(w), index=1\n"
    "}\n";

/* A device failing mid-run (out of memory at some allocation) aborts the run on every device cleanly. */
static void test_runtime_device_failure(void) {
    int m, at, failures = 0, named = 0;
    for (m = 0; m < RT_VARIANTS; m++) {
        for (at = 1; at < 400; at++) {
            gs_ctx_desc cd;
            gs_ctx *ctx = NULL;
            gs_graph *g;
            gs_runtime *rt;
            float x[4] = {1, 2, 3, 4}, out[4][4];
            const void *in[4] = {x, x, x, x};
            void *o[4] = {out[0], out[1], out[2], out[3]};
            gs_result r;
            double t0;
            memset(&cd, 0, sizeof cd);
            cd.allocator.alloc = failing_alloc;
            cd.allocator.free = failing_free;
            GST_ATOMIC_SET(&fail_armed, 0);
            CHECK_OK(gs_ctx_create(&cd, &ctx));
            g = rt_parse(ctx, uniform_loop_text);
            rt = rt_make_v(ctx, 4, m);
            if (!g || !rt) return;
            fail_count = 0;
            fail_at = at;
            GST_ATOMIC_SET(&fail_armed, 1);
            t0 = rt_now();
            r = gs_runtime_run(rt, g, in, o);
            GST_ATOMIC_SET(&fail_armed, 0);
            CHECK(rt_now() - t0 < 1.0);
            if (r == GS_ERR_OUT_OF_MEMORY) {
                failures++;
                CHECK_MSG(strncmp(gs_ctx_error_msg(ctx), "device ", 7) == 0 || strstr(gs_ctx_error_msg(ctx), "out of memory"),
                          "message: %s", gs_ctx_error_msg(ctx));
                if (strncmp(gs_ctx_error_msg(ctx), "device ", 7) == 0 && strstr(gs_ctx_error_msg(ctx), ", at ")) named++;
            } else {
                /* the run needed fewer allocations */
                CHECK_MSG(r == GS_OK, "at %d: %s", at, gs_ctx_error_msg(ctx));
                CHECK(out[3][0] == 64 && out[0][3] == 256);
            }
            gs_runtime_destroy(rt);
            gs_ctx_destroy(ctx);
            if (r == GS_OK && m == RT_LOCKSTEP_VARIANT) break;   /* lockstep is deterministic: every later allocation is past the end */
        }
    }
    CHECK(failures > 4);
    CHECK(named > 0);   /* "device 2, at add i2: out of memory allocating ..." */
}

/* ---------------------------------------------------------------------------------------------------------
   Threaded and lockstep: identical bits on randomised collective programs
   ------------------------------------------------------------------------------------------------------- */
static gs_value *build_collective(gs_graph *g, const gs_collective_spec *sp, gs_value *x) {
    gs_collective_desc cd;
    memset(&cd, 0, sizeof cd);
    cd.groups = sp->groups;
    switch (sp->op) {
    case GS_OP_ALL_REDUCE: return gs_all_reduce(g, x, sp->reduce, &cd);
    case GS_OP_ALL_GATHER: return gs_all_gather(g, x, sp->dim, &cd);
    case GS_OP_REDUCE_SCATTER: return gs_reduce_scatter(g, x, sp->reduce, sp->dim, &cd);
    case GS_OP_ALL_TO_ALL: return gs_all_to_all(g, x, sp->split_dim, sp->concat_dim, &cd);
    default: return gs_collective_permute(g, x, sp->n_pairs, sp->pairs, 0);
    }
}

static void test_runtime_threaded_equals_lockstep(void) {
    uint64_t rs = 4242;
    int prog, programs = 0;
    for (prog = 0; prog < 220; prog++) {
        gs_ctx *ctx = gst_ctx();
        int64_t D = gst_randint(&rs, 1, 12), d, ids[3][64], pairs[3][128];
        gs_graph *g = gs_graph_new(ctx, "p");
        gs_collective_spec sp[3];
        gs_value *x, *outs[4], *cur;
        int n_coll = (int)gst_randint(&rs, 1, 3), k, n_out = 0, mode;
        void *in[12], *res[RT_VARIANTS][12 * 4];
        size_t ob[4];
        uint64_t ds = (uint64_t)prog * 7 + 1;
        bool ok = true;
        gs_graph_set_num_partitions(g, D);
        rt_random_spec(&rs, D, &sp[0], ids[0], pairs[0]);
        x = gs_parameter(g, -1, sp[0].shape, "x");
        cur = x;
        for (k = 0; k < n_coll; k++) {
            gs_value *y;
            if (k > 0) {
                /* the next collective works on the current value: redraw until its shape fits */
                int tries = 0;
                gs_shape cs = gs_value_shape(cur);
                do {
                    rt_random_spec(&rs, D, &sp[k], ids[k], pairs[k]);
                    sp[k].shape = cs;
                    tries++;
                } while (tries < 50 &&
                         (((sp[k].op == GS_OP_ALL_GATHER || sp[k].op == GS_OP_REDUCE_SCATTER) && sp[k].dim >= cs.rank) ||
                          (sp[k].op == GS_OP_ALL_TO_ALL && (sp[k].split_dim >= cs.rank || sp[k].concat_dim >= cs.rank)) ||
                          ((sp[k].op == GS_OP_REDUCE_SCATTER) &&
                           (sp[k].shape.dims[sp[k].dim] % (sp[k].groups.n_groups ? sp[k].groups.group_size : D) != 0)) ||
                          (sp[k].op == GS_OP_ALL_TO_ALL &&
                           sp[k].shape.dims[sp[k].split_dim] % (sp[k].groups.n_groups ? sp[k].groups.group_size : D) != 0) ||
                          ((sp[k].op == GS_OP_ALL_REDUCE || sp[k].op == GS_OP_REDUCE_SCATTER) &&
                           !rt_kind_ok(cs.dtype, sp[k].reduce))));
                if (tries >= 50) break;
                /* something device-dependent between collectives */
                if (cs.dtype == GS_F32 || cs.dtype == GS_BF16) {
                    gs_value *p = gs_convert(g, gs_partition_id(g), cs.dtype);
                    cur = gs_add(g, cur, gs_broadcast(g, p, cs, NULL));
                }
            }
            y = build_collective(g, &sp[k], cur);
            if (!y) {
                ok = false;
                break;
            }
            outs[n_out++] = y;
            cur = y;
        }
        if (!ok || gs_graph_set_outputs(g, n_out, outs) != GS_OK) {
            gst_failf(__FILE__, __LINE__, "program %d: %s", prog, gs_ctx_error_msg(ctx));
            gs_ctx_destroy(ctx);
            return;
        }
        for (d = 0; d < D; d++) {
            in[d] = malloc(gs_shape_bytes(&sp[0].shape) + 1);
            rt_fill(&ds, sp[0].shape, in[d], false);
        }
        for (k = 0; k < n_out; k++) {
            gs_shape s = gs_graph_output_shape(g, k);
            ob[k] = gs_shape_bytes(&s);
        }
        for (mode = 0; mode < RT_VARIANTS; mode++) {
            gs_runtime *rt = rt_make_v(ctx, D, mode);
            for (d = 0; d < D; d++)
                for (k = 0; k < n_out; k++) {
                    res[mode][d * n_out + k] = malloc(ob[k] + 1);
                    memset(res[mode][d * n_out + k], 0x11 * (mode + 1), ob[k]);
                }
            if (rt) CHECK_MSG(gs_runtime_run(rt, g, (const void *const *)in, res[mode]) == GS_OK, "program %d mode %d: %s",
                              prog, mode, gs_ctx_error_msg(ctx));
            gs_runtime_destroy(rt);
        }
        for (mode = 0; mode < RT_VARIANTS; mode++)
            for (d = 0; d < D; d++)
                for (k = 0; k < n_out; k++)
                    CHECK_MSG(memcmp(res[mode][d * n_out + k], res[RT_LOCKSTEP_VARIANT][d * n_out + k], ob[k]) == 0,
                              "program %d (D=%lld): device %lld output %d differs between variant %d and lockstep", prog,
                              (long long)D, (long long)d, k, mode);
        /* a single collective straight on x: also the model */
        if (n_out == 1) {
            void *want[12];
            gs_shape os = gs_graph_output_shape(g, 0);
            for (d = 0; d < D; d++) want[d] = malloc(ob[0] + 1);
            model_run(&sp[0], D, (const void *const *)in, want, &os);
            for (d = 0; d < D; d++) CHECK_MSG(memcmp(want[d], res[0][d], ob[0]) == 0, "program %d: device %lld vs model", prog, (long long)d);
            for (d = 0; d < D; d++) free(want[d]);
        }
        for (d = 0; d < D; d++) {
            free(in[d]);
            for (k = 0; k < n_out; k++)
                for (mode = 0; mode < RT_VARIANTS; mode++) free(res[mode][d * n_out + k]);
        }
        programs++;
        gs_ctx_destroy(ctx);
    }
    CHECK(programs >= 200);
}

/* ---------------------------------------------------------------------------------------------------------
   Poisoned padding, scatter and gather
   ------------------------------------------------------------------------------------------------------- */
static void test_runtime_scatter_poison(void) {
    gs_ctx *ctx = gst_ctx();
    gs_runtime *rt = rt_make(ctx, 4, GS_RUNTIME_THREADED);
    gs_runtime *rz;
    gs_runtime_desc desc;
    const gs_sharding *s = gs_sharding_parse(ctx, "{devices=[4,1]0,1,2,3}");
    gs_shape gf = gs_shape_make(GS_F32, 2, (int64_t[]){5, 2});
    float data[10], sh[4][4], back[10];
    int32_t idata[5], ish[4][2];
    uint32_t udata[5], ush[4][2];
    uint8_t pdata[5], psh[4][2];
    uint16_t bdata[5], bsh[4][2];
    void *shp[4] = {sh[0], sh[1], sh[2], sh[3]};
    const void *cshp[4] = {sh[0], sh[1], sh[2], sh[3]};
    const gs_sharding *s1 = gs_sharding_parse(ctx, "{devices=[4]0,1,2,3}");
    gs_shape g5;
    int i;
    if (!rt || !s || !s1) return;
    for (i = 0; i < 10; i++) data[i] = (float)i;
    /* rows of 5 split 4 ways: shards of 2 rows; device 2 holds row 4 and a row of padding, device 3 only padding */
    CHECK_OK(gs_runtime_scatter(rt, s, gf, data, shp));
    CHECK(sh[0][0] == 0 && sh[0][3] == 3 && sh[1][0] == 4 && sh[2][0] == 8 && sh[2][1] == 9);
    CHECK(sh[2][2] != sh[2][2] && sh[2][3] != sh[2][3]);
    for (i = 0; i < 4; i++) CHECK(sh[3][i] != sh[3][i]);
    memset(back, 0, sizeof back);
    CHECK_OK(gs_runtime_gather(rt, s, gf, cshp, back));
    CHECK(memcmp(back, data, sizeof data) == 0);
    /* every dtype's poison */
    g5 = gs_shape_make(GS_S32, 1, (int64_t[]){5});
    for (i = 0; i < 5; i++) {
        idata[i] = i;
        udata[i] = (uint32_t)i;
        pdata[i] = 0;
        bdata[i] = gs_f32_to_bf16((float)i);
    }
    {
        void *p[4] = {ish[0], ish[1], ish[2], ish[3]};
        CHECK_OK(gs_runtime_scatter(rt, s1, g5, idata, p));
        CHECK(ish[2][0] == 4 && ish[2][1] == INT32_MIN && ish[3][0] == INT32_MIN);
    }
    g5.dtype = GS_U32;
    {
        void *p[4] = {ush[0], ush[1], ush[2], ush[3]};
        CHECK_OK(gs_runtime_scatter(rt, s1, g5, udata, p));
        CHECK(ush[2][0] == 4 && ush[2][1] == 0xDEADBEEFu && ush[3][1] == 0xDEADBEEFu);
    }
    g5.dtype = GS_PRED;
    {
        void *p[4] = {psh[0], psh[1], psh[2], psh[3]};
        CHECK_OK(gs_runtime_scatter(rt, s1, g5, pdata, p));
        CHECK(psh[2][0] == 0 && psh[2][1] == 1 && psh[3][0] == 1);
    }
    g5.dtype = GS_BF16;
    {
        void *p[4] = {bsh[0], bsh[1], bsh[2], bsh[3]};
        float f;
        CHECK_OK(gs_runtime_scatter(rt, s1, g5, bdata, p));
        f = gs_bf16_to_f32(bsh[2][1]);
        CHECK(gs_bf16_to_f32(bsh[2][0]) == 4.0f && f != f);
    }
    /* no_poison: zeros */
    memset(&desc, 0, sizeof desc);
    desc.num_devices = 4;
    desc.no_poison = true;
    CHECK_OK(gs_runtime_create(ctx, &desc, &rz));
    g5.dtype = GS_S32;
    {
        void *p[4] = {ish[0], ish[1], ish[2], ish[3]};
        CHECK_OK(gs_runtime_scatter(rz, s1, g5, idata, p));
        CHECK(ish[2][0] == 4 && ish[2][1] == 0 && ish[3][0] == 0 && ish[3][1] == 0);
    }
    /* partial replication and a maximal sharding: each tile from the lowest device that holds it */
    {
        const gs_sharding *pr = gs_sharding_parse(ctx, "{devices=[2,2]0,1,2,3 last_tile_dim_replicate}");
        const gs_sharding *mx = gs_sharding_parse(ctx, "{maximal device=2}");
        float a[6] = {1, 2, 3, 4, 5, 6}, sh3[4][6], out[6];
        void *p[4] = {sh3[0], sh3[1], sh3[2], sh3[3]};
        const void *cp[4] = {sh3[0], sh3[1], sh3[2], sh3[3]};
        gs_shape s6 = gs_shape_make(GS_F32, 1, (int64_t[]){6});
        CHECK_OK(gs_runtime_scatter(rt, pr, s6, a, p));
        CHECK(sh3[0][0] == 1 && sh3[1][0] == 1 && sh3[2][0] == 4 && sh3[3][2] == 6);
        sh3[1][0] = 100;   /* a copy that differs: gathered from device 0 without a check */
        CHECK_OK(gs_runtime_gather(rt, pr, s6, cp, out));
        CHECK(memcmp(out, a, sizeof a) == 0);
        CHECK_OK(gs_runtime_scatter(rt, mx, s6, a, p));
        CHECK(sh3[2][5] == 6 && sh3[0][0] != sh3[0][0]);
        memset(out, 0, sizeof out);
        CHECK_OK(gs_runtime_gather(rt, mx, s6, cp, out));
        CHECK(memcmp(out, a, sizeof a) == 0);
    }
    gs_runtime_destroy(rz);
    gs_runtime_destroy(rt);
    gs_ctx_destroy(ctx);
}

/* check_replicas: a "replicated" output that is not the same everywhere is an error naming the devices. */
static void test_runtime_check_replicas(void) {
    static const char *text =
        "HloModule rep\nENTRY main {\n  x = f32[3] parameter(0)\n  p = u32[] partition-id()\n"
        "  pf = f32[] convert(p)\n  b = f32[3] broadcast(pf), dimensions={}\n  ROOT y = f32[3] add(x, b)\n}\n";
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = rt_parse(ctx, text);
    gs_runtime_desc desc;
    gs_runtime *rt = NULL;
    float x[3] = {1, 2, 3}, y[3];
    gs_shape s3 = gs_shape_make(GS_F32, 1, (int64_t[]){3});
    const void *in[1] = {x};
    void *out[1] = {y};
    if (!g) return;
    memset(&desc, 0, sizeof desc);
    desc.num_devices = 3;
    desc.check_replicas = true;
    CHECK_OK(gs_runtime_create(ctx, &desc, &rt));
    CHECK(gs_runtime_run_global(rt, g, &s3, NULL, in, &s3, NULL, out) == GS_ERR_SHARDING);
    CHECK_MSG(strstr(gs_ctx_error_msg(ctx), "devices 0 and 1 hold different copies") != NULL, "%s", gs_ctx_error_msg(ctx));
    gs_ctx_clear_error(ctx);
    gs_runtime_destroy(rt);
    desc.check_replicas = false;
    CHECK_OK(gs_runtime_create(ctx, &desc, &rt));
    CHECK_OK(gs_runtime_run_global(rt, g, &s3, NULL, in, &s3, NULL, out));
    CHECK(memcmp(x, y, sizeof x) == 0);   /* device 0's copy */
    gs_runtime_destroy(rt);
    gs_ctx_destroy(ctx);
}

/* ---------------------------------------------------------------------------------------------------------
   Accounting
   ------------------------------------------------------------------------------------------------------- */
/* h = x[8,64] (rows sharded 4 ways: shards [2,64]) . w[64,32] (replicated); s = reduce(h) over dim 1;
   all-gather of s. By hand, per device (f32):
     parameters: x shard 2*64*4 = 512, w 64*32*4 = 8192                    -> 8704 for the whole run
     dot: h [2,32] = 256 while its operands are parameters               live: h
     reduce: s [2] = 8 (h still live while reduce runs: 256 + 8)          live: h, s -> h freed
     init constant 0 (4 bytes) is live from its creation to the reduce
     all-gather: out [8] = 32 with s (8) live                             live: s, ag
   Largest simultaneous set: h + s + the init constant = 256 + 8 + 4 = 268; peak = 8704 + 268 = 8972. */
static void test_runtime_accounting(void) {
    static const char *text =
        "HloModule acc, num_partitions=4\n"
        "sum { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
        "ENTRY main {\n"
        "  x = f32[2,64] parameter(0)\n"
        "  w = f32[64,32] parameter(1)\n"
        "  h = f32[2,32] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
        "  z = f32[] constant(0)\n"
        "  s = f32[2] reduce(h, z), dimensions={1}, to_apply=sum\n"
        "  ROOT ag = f32[8] all-gather(s), replica_groups={}, dimensions={0}\n"
        "}\n";
    int m;
    for (m = 0; m < RT_VARIANTS; m++) {
        gs_ctx *ctx = gst_ctx();
        gs_graph *g = rt_parse(ctx, text);
        gs_runtime *rt = rt_make_v(ctx, 4, m);
        static float x[512], w[2048], out[8];
        gs_shape xs = gs_shape_make(GS_F32, 2, (int64_t[]){8, 64}), ws = gs_shape_make(GS_F32, 2, (int64_t[]){64, 32});
        gs_shape os = gs_shape_make(GS_F32, 1, (int64_t[]){8});
        const gs_sharding *rows, *in_sh[2];
        gs_shape in_shapes[2];
        const void *in[2] = {x, w};
        void *o[1] = {out};
        gs_runtime_stats st;
        int64_t d, hand = 8704 + 268;
        if (!g || !rt) return;
        rows = gs_sharding_parse(ctx, "{devices=[4,1]0,1,2,3}");
        in_sh[0] = rows;
        in_sh[1] = NULL;
        in_shapes[0] = xs;
        in_shapes[1] = ws;
        CHECK_OK(gs_runtime_run_global(rt, g, in_shapes, in_sh, in, &os, NULL, o));
        CHECK_OK(gs_runtime_get_stats(rt, &st));
        CHECK_EQ_INT(st.num_devices, 4);
        for (d = 0; d < 4; d++) {
            CHECK_EQ_INT(st.param_bytes[d], 8704);
            CHECK_MSG(st.peak_bytes[d] >= hand * 0.9 && st.peak_bytes[d] <= hand * 1.1, "device %lld peak %lld, by hand %lld",
                      (long long)d, (long long)st.peak_bytes[d], (long long)hand);
        }
        CHECK_EQ_INT(st.n_collectives, 1);
        CHECK(st.collectives[0].op == GS_OP_ALL_GATHER);
        CHECK(st.collectives[0].instruction == gs_graph_find(g, "ag"));
        CHECK_EQ_INT(st.collectives[0].group_size, 4);
        CHECK_EQ_INT(st.collectives[0].count, 1);
        CHECK_EQ_INT(st.collectives[0].operand_bytes, 8);
        CHECK_EQ_INT(st.collectives[0].result_bytes, 32);
        CHECK_EQ_INT(st.collectives[0].bytes_sent, 4 * 3 * 8);
        CHECK_EQ_INT(st.collectives[0].bytes_received, 4 * 3 * 8);
        CHECK_EQ_INT(st.collective_count, 1);
        CHECK(st.seconds >= 0);
        gs_runtime_destroy(rt);
        gs_ctx_destroy(ctx);
    }
}

/* ---------------------------------------------------------------------------------------------------------
   Scale: 512 devices on a machine with a few cores, in both modes
   ------------------------------------------------------------------------------------------------------- */
static void test_runtime_many_devices(void) {
    static const char *text =
        "HloModule many\n"
        "sum { a = s32[] parameter(0)\n b = s32[] parameter(1)\n ROOT s = s32[] add(a, b) }\n"
        "ENTRY main {\n"
        "  p = u32[] partition-id()\n"
        "  ps = s32[] convert(p)\n"
        "  b = s32[4] broadcast(ps), dimensions={}\n"
        "  ar = s32[4] all-reduce(b), replica_groups={}, to_apply=sum\n"
        "  g = s32[4] all-reduce(b), replica_groups=[128,4]<=[512], to_apply=sum\n"
        "  ROOT t = (s32[4], s32[4]) tuple(ar, g)\n"
        "}\n";
    int m;
    for (m = 0; m < RT_VARIANTS; m++) {
        gs_ctx *ctx = gst_ctx();
        gs_graph *g = rt_parse(ctx, text);
        gs_runtime *rt = rt_make_v(ctx, 512, m);
        static int32_t out[512][2][4];
        void *o[1024];
        int d;
        if (!g || !rt) return;
        for (d = 0; d < 512; d++) {
            o[2 * d] = out[d][0];
            o[2 * d + 1] = out[d][1];
        }
        CHECK_OK(gs_runtime_run(rt, g, NULL, o));
        for (d = 0; d < 512; d++) {
            int base = d / 4 * 4;
            CHECK(out[d][0][0] == 511 * 512 / 2 && out[d][0][3] == 511 * 512 / 2);
            CHECK(out[d][1][2] == 4 * base + 6);
        }
        gs_runtime_destroy(rt);
        gs_ctx_destroy(ctx);
    }
}

/* ---------------------------------------------------------------------------------------------------------
   The bad-input catalogue: clear errors, no crash, no leak, no hang
   ------------------------------------------------------------------------------------------------------- */
static void test_runtime_bad_inputs(void) {
    static const char *ar_text =
        "HloModule bad, num_partitions=4\n"
        "sum { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
        "ENTRY main {\n  x = f32[4] parameter(0)\n"
        "  ROOT ar = f32[4] all-reduce(x), replica_groups={{0,1},{2,3}}, to_apply=sum\n}\n";
    static const char *groups8_text =
        "HloModule bad\n"
        "sum { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
        "ENTRY main {\n  x = f32[4] parameter(0)\n"
        "  ROOT ar = f32[4] all-reduce(x), replica_groups={{0,5},{2,3}}, to_apply=sum\n}\n";
    static const char *partial_groups_text =
        "HloModule bad\n"
        "sum { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
        "ENTRY main {\n  x = f32[4] parameter(0)\n"
        "  ROOT ar = f32[4] all-reduce(x), replica_groups={{0,1}}, to_apply=sum\n}\n";
    static const char *gather_text =
        "HloModule bad\n"
        "ENTRY main {\n  x = f32[4] parameter(0)\n"
        "  ROOT ag = f32[8] all-gather(x), replica_groups={{0,1}}, dimensions={0}\n}\n";
    static const char *permute_text =
        "HloModule bad\n"
        "ENTRY main {\n  x = f32[4] parameter(0)\n"
        "  ROOT cp = f32[4] collective-permute(x), source_target_pairs={{0,1},{1,9}}\n}\n";
    gs_ctx *ctx = gst_ctx();
    gs_runtime_desc desc;
    gs_runtime *rt = NULL;
    gs_graph *g;
    float x[4] = {1, 2, 3, 4}, out[8][8];
    const void *in[8] = {x, x, x, x, x, x, x, x};
    void *o[8];
    int d;
    for (d = 0; d < 8; d++) o[d] = out[d];
    memset(&desc, 0, sizeof desc);
    /* device counts */
    CHECK(gs_runtime_create(ctx, &desc, &rt) == GS_ERR_INVALID_ARG && rt == NULL);
    CHECK(strstr(gs_ctx_error_msg(ctx), "0 devices") != NULL);
    gs_ctx_clear_error(ctx);
    desc.num_devices = GS_RUNTIME_MAX_DEVICES + 1;
    CHECK(gs_runtime_create(ctx, &desc, &rt) == GS_ERR_INVALID_ARG && rt == NULL);
    gs_ctx_clear_error(ctx);
    desc.num_devices = -3;
    CHECK(gs_runtime_create(ctx, &desc, &rt) == GS_ERR_INVALID_ARG);
    gs_ctx_clear_error(ctx);
    desc.num_devices = 4;
    desc.mode = (gs_runtime_mode)7;
    CHECK(gs_runtime_create(ctx, &desc, &rt) == GS_ERR_INVALID_ARG);
    gs_ctx_clear_error(ctx);
    desc.mode = GS_RUNTIME_MODE_DEFAULT;
    /* worker counts */
    desc.workers = 5;
    CHECK(gs_runtime_create(ctx, &desc, &rt) == GS_ERR_INVALID_ARG && rt == NULL);
    CHECK(strstr(gs_ctx_error_msg(ctx), "5 workers for 4 devices") != NULL);
    gs_ctx_clear_error(ctx);
    desc.workers = -1;
    CHECK(gs_runtime_create(ctx, &desc, &rt) == GS_ERR_INVALID_ARG && rt == NULL);
    gs_ctx_clear_error(ctx);
    desc.workers = 3;
    CHECK_OK(gs_runtime_create(ctx, &desc, &rt));
    CHECK(gs_runtime_num_workers(rt) == 3);
    CHECK(gs_runtime_rank(rt) == 0 && gs_runtime_num_ranks(rt) == 1);   /* one process */
    gs_runtime_destroy(rt);
    rt = NULL;
    desc.workers = 0;
    /* a communicator in a build without MPI: a clear refusal (the suite is built without GSHARD_MPI) */
    {
        int not_a_comm = 0;
        desc.comm = &not_a_comm;
        CHECK(gs_runtime_create(ctx, &desc, &rt) == GS_ERR_UNSUPPORTED && rt == NULL);
        CHECK(strstr(gs_ctx_error_msg(ctx), "built without GSHARD_MPI") != NULL);
        gs_ctx_clear_error(ctx);
        desc.comm = NULL;
    }
    CHECK(gs_runtime_rank(NULL) == 0 && gs_runtime_num_ranks(NULL) == 1);
    /* NULL pointers */
    CHECK(gs_runtime_create(NULL, &desc, &rt) == GS_ERR_INVALID_ARG);
    CHECK(gs_runtime_create(ctx, NULL, &rt) == GS_ERR_INVALID_ARG);
    gs_ctx_clear_error(ctx);
    CHECK(gs_runtime_create(ctx, &desc, NULL) == GS_ERR_INVALID_ARG);
    gs_ctx_clear_error(ctx);
    CHECK(gs_runtime_run(NULL, NULL, NULL, NULL) == GS_ERR_INVALID_ARG);
    CHECK(gs_runtime_run_global(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL) == GS_ERR_INVALID_ARG);
    CHECK(gs_runtime_scatter(NULL, NULL, gs_shape_scalar(GS_F32), x, o) == GS_ERR_INVALID_ARG);
    CHECK(gs_runtime_gather(NULL, NULL, gs_shape_scalar(GS_F32), in, x) == GS_ERR_INVALID_ARG);
    CHECK(gs_runtime_collective(NULL, NULL, NULL, NULL, 1) == GS_ERR_INVALID_ARG);
    CHECK(gs_runtime_collective_shape(NULL, NULL, NULL) == GS_ERR_INVALID_ARG);
    CHECK(gs_runtime_get_stats(NULL, NULL) == GS_ERR_INVALID_ARG);
    CHECK(gs_runtime_num_devices(NULL) == 0);
    gs_runtime_destroy(NULL);
    CHECK_OK(gs_runtime_create(ctx, &desc, &rt));
    if (!rt) return;
    CHECK(gs_runtime_get_mode(rt) == GS_RUNTIME_THREADED);
    CHECK(gs_runtime_num_workers(rt) >= 1 && gs_runtime_num_workers(rt) <= 4);
    CHECK(gs_runtime_num_workers(NULL) == 0);
    CHECK(gs_runtime_run(rt, NULL, in, o) == GS_ERR_INVALID_ARG);
    gs_ctx_clear_error(ctx);
    g = rt_parse(ctx, ar_text);
    if (!g) return;
    CHECK(gs_runtime_run(rt, g, NULL, o) == GS_ERR_INVALID_ARG);
    CHECK(strstr(gs_ctx_error_msg(ctx), "inputs is NULL") != NULL);
    gs_ctx_clear_error(ctx);
    CHECK(gs_runtime_run(rt, g, in, NULL) == GS_ERR_INVALID_ARG);
    gs_ctx_clear_error(ctx);
    {
        const void *in2[4] = {x, x, NULL, x};
        CHECK(gs_runtime_run(rt, g, in2, o) == GS_ERR_INVALID_ARG);
        CHECK(strstr(gs_ctx_error_msg(ctx), "input 0 of device 2 is NULL") != NULL);
        gs_ctx_clear_error(ctx);
    }
    CHECK_OK(gs_runtime_run(rt, g, in, o));
    CHECK(out[1][0] == 2 && out[3][3] == 8);
    /* a program written for another device count */
    {
        gs_runtime *r2 = rt_make(ctx, 2, GS_RUNTIME_THREADED);
        CHECK(gs_runtime_run(r2, g, in, o) == GS_ERR_INVALID_ARG);
        CHECK(strstr(gs_ctx_error_msg(ctx), "written for 4 partitions but the runtime has 2 devices") != NULL);
        gs_ctx_clear_error(ctx);
        gs_runtime_destroy(r2);
    }
    /* replica groups naming a device >= D, groups not covering every device, a result shape that does not
       fit D, collective-permute naming a device >= D */
    g = rt_parse(ctx, groups8_text);
    CHECK(g && gs_runtime_run(rt, g, in, o) == GS_ERR_INVALID_ARG);
    CHECK_MSG(strstr(gs_ctx_error_msg(ctx), "all-reduce ar: replica groups: partition 5 is out of range") != NULL, "%s", gs_ctx_error_msg(ctx));
    gs_ctx_clear_error(ctx);
    g = rt_parse(ctx, partial_groups_text);
    CHECK(g && gs_runtime_run(rt, g, in, o) == GS_ERR_INVALID_ARG);
    CHECK(strstr(gs_ctx_error_msg(ctx), "cover 2 of the 4 devices") != NULL);
    gs_ctx_clear_error(ctx);
    g = rt_parse(ctx, gather_text);
    CHECK(g && gs_runtime_run(rt, g, in, o) == GS_ERR_INVALID_ARG);   /* {0,1} covers 2 of 4 */
    gs_ctx_clear_error(ctx);
    g = rt_parse(ctx, permute_text);
    CHECK(g && gs_runtime_run(rt, g, in, o) == GS_ERR_INVALID_ARG);
    CHECK(strstr(gs_ctx_error_msg(ctx), "pair {1,9} names a device outside 0..3") != NULL);
    gs_ctx_clear_error(ctx);
    /* the direct engine: duplicate targets and sources, bad dims, wrong kinds */
    {
        gs_collective_spec sp;
        int64_t pairs[4] = {0, 1, 2, 1};
        memset(&sp, 0, sizeof sp);
        sp.op = GS_OP_COLLECTIVE_PERMUTE;
        sp.shape = gs_shape_make(GS_F32, 1, (int64_t[]){4});
        sp.n_pairs = 2;
        sp.pairs = pairs;
        CHECK(gs_runtime_collective(rt, &sp, in, o, 1) == GS_ERR_INVALID_ARG);
        CHECK(strstr(gs_ctx_error_msg(ctx), "device 1 is the target of two pairs") != NULL);
        gs_ctx_clear_error(ctx);
        pairs[2] = 0;
        pairs[3] = 2;
        CHECK(gs_runtime_collective(rt, &sp, in, o, 1) == GS_ERR_INVALID_ARG);
        CHECK(strstr(gs_ctx_error_msg(ctx), "device 0 is the source of two pairs") != NULL);
        gs_ctx_clear_error(ctx);
        sp.op = GS_OP_REDUCE_SCATTER;
        sp.reduce = GS_REDUCE_SUM;
        sp.shape = gs_shape_make(GS_F32, 1, (int64_t[]){6});
        CHECK(gs_runtime_collective(rt, &sp, in, o, 1) == GS_ERR_SHAPE);
        gs_ctx_clear_error(ctx);
        sp.dim = 3;
        CHECK(gs_runtime_collective(rt, &sp, in, o, 1) == GS_ERR_INVALID_ARG);
        gs_ctx_clear_error(ctx);
        sp.op = (gs_op)GS_OP_ADD;
        CHECK(gs_runtime_collective(rt, &sp, in, o, 1) == GS_ERR_INVALID_ARG);
        gs_ctx_clear_error(ctx);
        sp.op = GS_OP_ALL_REDUCE;
        sp.dim = 0;
        CHECK(gs_runtime_collective(rt, &sp, in, o, 0) == GS_ERR_INVALID_ARG);
        gs_ctx_clear_error(ctx);
        {
            void *o2[4] = {o[0], NULL, o[2], o[3]};
            CHECK(gs_runtime_collective(rt, &sp, in, o2, 1) == GS_ERR_INVALID_ARG);
            gs_ctx_clear_error(ctx);
        }
    }
    /* global arrays: a shape the shards do not fit, a sharding naming devices >= D, a tuple sharding */
    {
        gs_graph *ga = rt_parse(ctx, ar_text);
        gs_shape g10 = gs_shape_make(GS_F32, 1, (int64_t[]){10}), g16 = gs_shape_make(GS_F32, 1, (int64_t[]){16});
        const gs_sharding *s4 = gs_sharding_parse(ctx, "{devices=[4]0,1,2,3}");
        const gs_sharding *s8 = gs_sharding_parse(ctx, "{devices=[8]0,1,2,3,4,5,6,7}");
        float big[16] = {0}, res[16];
        const void *gi[1] = {big};
        void *go[1] = {res};
        CHECK(gs_runtime_run_global(rt, ga, &g10, &s4, gi, &g16, &s4, go) == GS_ERR_SHAPE);
        CHECK_MSG(strstr(gs_ctx_error_msg(ctx), "input 0: f32[10] is split into f32[3] shards, but the program's parameter buffer 0 is f32[4]") != NULL,
                  "%s", gs_ctx_error_msg(ctx));
        gs_ctx_clear_error(ctx);
        CHECK(gs_runtime_run_global(rt, ga, &g16, &s8, gi, &g16, &s4, go) != GS_OK);
        gs_ctx_clear_error(ctx);
        CHECK(gs_runtime_run_global(rt, ga, &g16, &s4, gi, &g16, &s4, go) == GS_OK);
        CHECK(gs_runtime_run_global(rt, ga, &g16, &s4, NULL, &g16, &s4, go) == GS_ERR_INVALID_ARG);
        gs_ctx_clear_error(ctx);
        CHECK(gs_runtime_scatter(rt, gs_sharding_manual(ctx), g16, big, o) == GS_ERR_SHARDING);
        gs_ctx_clear_error(ctx);
    }
    gs_runtime_destroy(rt);
    /* a graph from another context */
    {
        gs_ctx *other = gst_ctx();
        gs_graph *go = rt_parse(other, ar_text);
        CHECK_OK(gs_runtime_create(ctx, &desc, &rt));
        CHECK(go && gs_runtime_run(rt, go, in, o) == GS_ERR_INVALID_ARG);
        gs_ctx_clear_error(ctx);
        gs_runtime_destroy(rt);
        gs_ctx_destroy(other);
    }
    gs_ctx_destroy(ctx);
}

/* Single device, tuple parameters, bf16 and pred in and out through the per-device interface. */
static void test_runtime_formats(void) {
    static const char *text =
        "HloModule fmt\n"
        "or { a = pred[] parameter(0)\n b = pred[] parameter(1)\n ROOT s = pred[] or(a, b) }\n"
        "sum { a = bf16[] parameter(0)\n b = bf16[] parameter(1)\n ROOT s = bf16[] add(a, b) }\n"
        "ENTRY main {\n"
        "  t = (bf16[3], pred[3]) parameter(0)\n"
        "  b = bf16[3] get-tuple-element(t), index=0\n"
        "  p = pred[3] get-tuple-element(t), index=1\n"
        "  sb = bf16[3] all-reduce(b), replica_groups={}, to_apply=sum\n"
        "  sp = pred[3] all-reduce(p), replica_groups={}, to_apply=or\n"
        "  ROOT r = (bf16[3], pred[3]) tuple(sb, sp)\n"
        "}\n";
    int m;
    for (m = 0; m < RT_VARIANTS; m++) {
        gs_ctx *ctx = gst_ctx();
        gs_graph *g = rt_parse(ctx, text);
        gs_runtime *rt = rt_make_v(ctx, 3, m);
        uint16_t b[3][3], ob[3][3];
        uint8_t p[3][3], op[3][3];
        const void *in[6];
        void *out[6];
        int d, i;
        if (!g || !rt) return;
        for (d = 0; d < 3; d++) {
            for (i = 0; i < 3; i++) {
                b[d][i] = gs_f32_to_bf16((float)(d + i));
                p[d][i] = (uint8_t)(d == i ? 7 : 0);   /* any nonzero byte is true */
            }
            in[2 * d] = b[d];
            in[2 * d + 1] = p[d];
            out[2 * d] = ob[d];
            out[2 * d + 1] = op[d];
        }
        CHECK_OK(gs_runtime_run(rt, g, in, out));
        for (d = 0; d < 3; d++)
            for (i = 0; i < 3; i++) {
                CHECK(gs_bf16_to_f32(ob[d][i]) == (float)(3 * i + 3));
                CHECK(op[d][i] == 1);
            }
        gs_runtime_destroy(rt);
        gs_ctx_destroy(ctx);
    }
}

/* ---------------------------------------------------------------------------------------------------------
   The command line: gshard run --spmd (the driver is $GST_GSHARD, default ./build/gshard, run under
   $GST_CLI_WRAPPER when set)
   ------------------------------------------------------------------------------------------------------- */
static char rt_tmp[256];

static void test_runtime_cli(void) {
    char p[512], eval_line[256], *line;
    FILE *f;
    if (access(gst_gshard_bin(), X_OK) != 0) {
        CHECK_MSG(0, "%s not found: build it first (make test builds it)", gst_gshard_bin());
        return;
    }
    snprintf(rt_tmp, sizeof rt_tmp, "/tmp/gshard_rt_XXXXXX");
    if (!mkdtemp(rt_tmp)) {
        CHECK(!"mkdtemp");
        return;
    }
    /* the reference: a plain dot on the same generated inputs */
    snprintf(p, sizeof p, "%s/dot.hlo", rt_tmp);
    f = fopen(p, "wb");
    CHECK(f != NULL);
    if (!f) return;
    fputs("HloModule mm\nENTRY main {\n  x = f32[8,10] parameter(0)\n  w = f32[10,6] parameter(1)\n"
          "  ROOT y = f32[8,6] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n", f);
    fclose(f);
    CHECK_EQ_INT(gst_cli(rt_tmp, "eval %s --seed 1 --output-dir %s/ref", p, rt_tmp), 0);
    CHECK_EQ_INT(gst_cli(rt_tmp, "eval %s --seed 1", p), 0);
    line = strchr(gst_cli_out, '\n');
    snprintf(eval_line, sizeof eval_line, "%.*s", line ? (int)(strchr(line + 1, '\n') - line) : 0, line ? line : "");
    /* every device prints the same product (summaries agree to 6 digits) */
    CHECK_EQ_INT(gst_cli(rt_tmp, "run --spmd examples/spmd_matmul.hlo --devices 4 --seed 1"), 0);
    CHECK(strstr(gst_cli_out, "dev0_out0: f32[8,6]") != NULL && strstr(gst_cli_out, "dev3_out0: f32[8,6]") != NULL);
    CHECK_MSG(eval_line[0] && strstr(gst_cli_out, eval_line) != NULL, "eval printed %s", eval_line);
    CHECK_EQ_INT(gst_cli(rt_tmp, "run --spmd examples/spmd_matmul.hlo --devices 4 --seed 1 --lockstep --stats"), 0);
    CHECK(strstr(gst_cli_out, "stats: 4 devices (lockstep)") != NULL);
    CHECK(strstr(gst_cli_out, "all-reduce y: groups of 4, ran once per device") != NULL);
    CHECK_EQ_INT(gst_cli(rt_tmp, "run --spmd examples/spmd_matmul.hlo --devices 4 --seed 1 --workers 3 --stats"), 0);
    CHECK(strstr(gst_cli_out, "stats: 4 devices (threaded, 3 workers)") != NULL);
    CHECK_MSG(eval_line[0] && strstr(gst_cli_out, eval_line) != NULL, "eval printed %s", eval_line);
    /* files: dev<d>_out<k>.npy, each equal to eval's within float rounding of a different summation order */
    CHECK_EQ_INT(gst_cli(rt_tmp, "run --spmd examples/spmd_matmul.hlo --devices 4 --seed 1 --output-dir %s/run", rt_tmp), 0);
    {
        gs_ctx *ctx = gst_ctx();
        gs_shape s;
        void *ref = NULL, *dev = NULL;
        int d, i;
        snprintf(p, sizeof p, "%s/ref/out0.npy", rt_tmp);
        CHECK_OK(gs_npy_read(ctx, p, GS_F32, &s, &ref));
        for (d = 0; d < 4 && ref; d++) {
            snprintf(p, sizeof p, "%s/run/dev%d_out0.npy", rt_tmp, d);
            CHECK_OK(gs_npy_read(ctx, p, GS_F32, &s, &dev));
            if (!dev) break;
            CHECK_EQ_INT(gs_shape_numel(&s), 48);
            for (i = 0; i < 48; i++) CHECK_NEAR(((float *)dev)[i], ((float *)ref)[i], 1e-5);
            gs_free_data(ctx, dev);
            dev = NULL;
        }
        gs_free_data(ctx, ref);
        gs_ctx_destroy(ctx);
    }
    /* --input by name, the same array on every device */
    CHECK_EQ_INT(gst_cli(rt_tmp, "run --spmd examples/spmd_matmul.hlo --devices 4 --input x=%s/ref/out0.npy", rt_tmp), 2);
    CHECK(strstr(gst_cli_err, "holds f32[8,6] but parameter 0 (x) is f32[8,10]") != NULL);
    /* errors: exit 2 with a message */
    CHECK_EQ_INT(gst_cli(rt_tmp, "run --spmd examples/spmd_matmul.hlo"), 2);
    CHECK(strstr(gst_cli_err, "--devices D is missing") != NULL);
    CHECK_EQ_INT(gst_cli(rt_tmp, "run --spmd examples/spmd_matmul.hlo --devices 0"), 2);
    CHECK_EQ_INT(gst_cli(rt_tmp, "run --spmd examples/spmd_matmul.hlo --devices 5000"), 2);
    CHECK_EQ_INT(gst_cli(rt_tmp, "run --spmd examples/spmd_matmul.hlo --devices x"), 2);
    CHECK_EQ_INT(gst_cli(rt_tmp, "run --spmd examples/spmd_matmul.hlo --devices 4 --workers 0"), 2);
    CHECK(strstr(gst_cli_err, "--workers wants a count from 1 to 4096, not '0'") != NULL);
    CHECK_EQ_INT(gst_cli(rt_tmp, "run --spmd examples/spmd_matmul.hlo --devices 4 --workers 5"), 2);
    CHECK(strstr(gst_cli_err, "5 workers for 4 devices") != NULL);
    CHECK_EQ_INT(gst_cli(rt_tmp, "run --spmd examples/spmd_matmul.hlo --devices 4 --workers 2 --lockstep"), 2);
    CHECK(strstr(gst_cli_err, "--workers does not apply") != NULL);
    CHECK_EQ_INT(gst_cli(rt_tmp, "run --spmd examples/spmd_matmul.hlo --devices 2"), 2);
    CHECK(strstr(gst_cli_err, "written for 4 partitions but the runtime has 2 devices") != NULL);
    /* without --spmd FILE is partitioned: read as an unpartitioned program, it computes what eval does */
    CHECK_EQ_INT(gst_cli(rt_tmp, "run examples/spmd_matmul.hlo --devices 4 --check"), 0);
    CHECK(strstr(gst_cli_err, "has no channel_id") != NULL && strstr(gst_cli_out, "check: ok") != NULL);
    CHECK_EQ_INT(gst_cli(rt_tmp, "eval examples/spmd_matmul.hlo --devices 4"), 2);   /* --devices belongs to run */
    snprintf(p, sizeof p, "%s/div.hlo", rt_tmp);
    f = fopen(p, "wb");
    CHECK(f != NULL);
    if (!f) return;
    fputs(divergent_loop_text, f);
    fclose(f);
    CHECK_EQ_INT(gst_cli(rt_tmp, "run --spmd %s --devices 3", p), 2);
    CHECK_MSG(strstr(gst_cli_err, "collective mismatch") != NULL, "stderr: %s", gst_cli_err);
    CHECK_EQ_INT(gst_cli(rt_tmp, "run --spmd %s --devices 1 --lockstep", p), 0);
    CHECK_EQ_INT(gst_cli(rt_tmp, "--help"), 0);
    CHECK(strstr(gst_cli_out, "run --spmd FILE --devices D") != NULL);
    {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf %s", rt_tmp);
        CHECK(system(cmd) == 0);
    }
}

void suite_runtime(void) {
    RUN(test_runtime_collectives_vs_model);
    RUN(test_runtime_collectives_cases);
    RUN(test_runtime_collectives_large);
    RUN(test_runtime_matmul_allreduce);
    RUN(test_runtime_permute_ring);
    RUN(test_runtime_alltoall_transpose);
    RUN(test_runtime_offset_tables);
    RUN(test_runtime_run_tiles);
    RUN(test_runtime_run_tiles_unreduced);
    RUN(test_runtime_mismatch_divergent_loop);
    RUN(test_runtime_mismatch_nested_iterations);
    RUN(test_runtime_watchdog);
    RUN(test_runtime_device_failure);
    RUN(test_runtime_threaded_equals_lockstep);
    RUN(test_runtime_scatter_poison);
    RUN(test_runtime_check_replicas);
    RUN(test_runtime_accounting);
    RUN(test_runtime_many_devices);
    RUN(test_runtime_bad_inputs);
    RUN(test_runtime_formats);
    RUN(test_runtime_cli);
}
