/* gs_base.c - arena, allocator glue, errors, logging, text buffers, dtype helpers */
#include "gs_internal.h"

GS_API const char *gs_version(void) { return GS_VERSION_STRING; }

GS_API const char *gs_result_str(gs_result r) {
    switch (r) {
    case GS_OK: return "ok";
    case GS_ERR_INVALID_ARG: return "invalid argument";
    case GS_ERR_OUT_OF_MEMORY: return "out of memory";
    case GS_ERR_SHAPE: return "shape error";
    case GS_ERR_SHARDING: return "sharding error";
    case GS_ERR_UNSUPPORTED: return "unsupported";
    case GS_ERR_THREAD: return "thread error";
    case GS_ERR_PARSE: return "parse error";
    case GS_ERR_IO: return "i/o error";
    }
    return "unknown result";
}

/* ---- heap via the allocator hook ---- */
GS__FN void *gs__raw_alloc(const gs_allocator *a, size_t size) {
    if (a->alloc) return a->alloc(size, a->user);
    return GSHARD_MALLOC(size);
}
GS__FN void gs__raw_free(const gs_allocator *a, void *p) {
    if (!p) return;
    if (a->free) a->free(p, a->user);
    else GSHARD_FREE(p);
}

GS__FN void *gs__malloc(gs_ctx *ctx, size_t size) {
    void *p = gs__raw_alloc(&ctx->allocator, size ? size : 1);
    if (!p) gs__err(ctx, GS_ERR_OUT_OF_MEMORY, "out of memory allocating %zu bytes", size);
    return p;
}
GS__FN void gs__free(gs_ctx *ctx, void *p) { gs__raw_free(&ctx->allocator, p); }

/* ---- errors and logging ---- */
GS__FN void gs__vlog(gs_ctx *ctx, gs_log_level level, gs_result code, const char *fmt, va_list ap) {
    char msg[GS__ERRMSG_CAP];
    if (!ctx->logger.fn) return;
    vsnprintf(msg, sizeof msg, fmt, ap);
    ctx->logger.fn(level, code, msg, ctx->logger.user);
}

GS__FN void gs__log(gs_ctx *ctx, gs_log_level level, gs_result code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    gs__vlog(ctx, level, code, fmt, ap);
    va_end(ap);
}

GS__FN gs_result gs__err(gs_ctx *ctx, gs_result code, const char *fmt, ...) {
    va_list ap;
    if (ctx->err == GS_OK) {
        ctx->err = code;
        va_start(ap, fmt);
        vsnprintf(ctx->errmsg, sizeof ctx->errmsg, fmt, ap);
        va_end(ap);
        if (ctx->logger.fn) ctx->logger.fn(GS_LOG_ERROR, code, ctx->errmsg, ctx->logger.user);
    }
    return code;
}

/* Puts a prefix (e.g. the instruction's name) in front of the pending error message; the code stays. */
GS__FN gs_result gs__err_prefix(gs_ctx *ctx, const char *fmt, ...) {
    char pre[256];
    size_t np, nm;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    np = strlen(pre);
    nm = strlen(ctx->errmsg);
    if (np + nm >= GS__ERRMSG_CAP) nm = GS__ERRMSG_CAP - 1 - np;
    memmove(ctx->errmsg + np, ctx->errmsg, nm);
    memcpy(ctx->errmsg, pre, np);
    ctx->errmsg[np + nm] = 0;
    return ctx->err;
}

GS_API gs_result gs_ctx_error(const gs_ctx *ctx) { return ctx ? ctx->err : GS_ERR_INVALID_ARG; }
GS_API const char *gs_ctx_error_msg(const gs_ctx *ctx) {
    if (!ctx) return "no context";
    return ctx->err == GS_OK ? "" : ctx->errmsg;
}
GS_API void gs_ctx_clear_error(gs_ctx *ctx) {
    if (!ctx) return;
    ctx->err = GS_OK;
    ctx->errmsg[0] = 0;
}

/* ---- context and arena ---- */
GS_API gs_result gs_ctx_create(const gs_ctx_desc *desc, gs_ctx **out) {
    gs_allocator a;
    gs_ctx *ctx;
    if (!out) return GS_ERR_INVALID_ARG;
    *out = NULL;
    GS__ZERO(a);
    if (desc) a = desc->allocator;
    if ((a.alloc == NULL) != (a.free == NULL)) return GS_ERR_INVALID_ARG; /* both or neither */
    ctx = (gs_ctx *)gs__raw_alloc(&a, sizeof(gs_ctx));
    if (!ctx) return GS_ERR_OUT_OF_MEMORY;
    memset(ctx, 0, sizeof *ctx);
    ctx->allocator = a;
    if (desc) ctx->logger = desc->logger;
    { /* a GSHARD_ISA the kernels cannot honour (gs_gemm.c): a path they lack is a warning, no path an error */
        char msg[160];
        int w = gs__gemm_isa_warning(msg, sizeof msg);
        if (w && ctx->logger.fn)
            gs__log(ctx, w == 2 ? GS_LOG_ERROR : GS_LOG_WARN, w == 2 ? GS_ERR_INVALID_ARG : GS_OK, "%s", msg);
        if (w == 2) {
            gs__raw_free(&a, ctx);
            return GS_ERR_INVALID_ARG;
        }
    }
    *out = ctx;
    return GS_OK;
}

GS_API gs_result gs_isa_path(const char **path, char *msg, size_t cap) {
    char buf[160];
    int w = gs__gemm_isa_warning(buf, sizeof buf);
    if (path) *path = gs__gemm_isa_name(gs__gemm_isa());
    if (msg && cap > 0) snprintf(msg, cap, "%s", w ? buf : "");
    return w == 2 ? GS_ERR_INVALID_ARG : GS_OK;
}

GS_API void gs_ctx_destroy(gs_ctx *ctx) {
    gs__chunk *c, *n;
    int i;
    if (!ctx) return;
    for (i = 0; i < (int)stbds_arrlen(ctx->graphs); i++) {
        gs_graph *g = ctx->graphs[i];
        stbds_arrfree(g->values);
        stbds_arrfree(g->params);
        stbds_shfree(g->names);
        stbds_arrfree(g->conflicts);
    }
    stbds_arrfree(ctx->graphs);
    stbds_shfree(ctx->sh_intern);
    for (c = ctx->chunks; c; c = n) {
        n = c->next;
        gs__raw_free(&ctx->allocator, c);
    }
    gs__raw_free(&ctx->allocator, ctx);
}

/* ---- checked size arithmetic (see gs_internal.h) ---- */
GS__FN bool gs__mul64(int64_t a, int64_t b, int64_t *out) {
    if (a != 0 && b != 0) {
        if (a > 0 ? (b > 0 ? a > INT64_MAX / b : b < INT64_MIN / a)
                  : (b > 0 ? a < INT64_MIN / b : b < INT64_MAX / a))
            return false;
    }
    *out = a * b;
    return true;
}

GS__FN bool gs__add64(int64_t a, int64_t b, int64_t *out) {
    if (b > 0 ? a > INT64_MAX - b : a < INT64_MIN - b) return false;
    *out = a + b;
    return true;
}

GS__FN int64_t gs__prod64(int n, const int64_t *d) {
    int64_t p = 1;
    int i;
    for (i = 0; i < n; i++)
        if (d[i] < 0 || !gs__mul64(p, d[i], &p)) return -1;
    return p;
}

#define GS__CHUNK_HDR ((sizeof(gs__chunk) + 15) & ~(size_t)15)

GS__FN void *gs__arena_alloc(gs_ctx *ctx, size_t size) {
    gs__chunk *c = ctx->chunks;
    size_t need = (size + 15) & ~(size_t)15;
    void *p;
    if (need < size) { /* overflow */
        gs__err(ctx, GS_ERR_OUT_OF_MEMORY, "arena: allocation of %zu bytes is too large", size);
        return NULL;
    }
    if (!c || c->size - c->used < need) {
        size_t csize = need > GS__CHUNK_MIN ? need : GS__CHUNK_MIN;
        if (csize + GS__CHUNK_HDR < csize) {
            gs__err(ctx, GS_ERR_OUT_OF_MEMORY, "arena: allocation of %zu bytes is too large", size);
            return NULL;
        }
        c = (gs__chunk *)gs__raw_alloc(&ctx->allocator, GS__CHUNK_HDR + csize);
        if (!c) {
            gs__err(ctx, GS_ERR_OUT_OF_MEMORY, "out of memory growing the arena by %zu bytes", csize);
            return NULL;
        }
        c->size = csize;
        c->used = 0;
        /* a big one-off chunk goes behind the current one so the current keeps filling */
        if (ctx->chunks && need > GS__CHUNK_MIN) {
            c->next = ctx->chunks->next;
            ctx->chunks->next = c;
        } else {
            c->next = ctx->chunks;
            ctx->chunks = c;
        }
    }
    p = (char *)c + GS__CHUNK_HDR + c->used;
    c->used += need;
    memset(p, 0, size);
    return p;
}

GS__FN void *gs__arena_dup(gs_ctx *ctx, const void *p, size_t size) {
    void *d;
    if (!p) return NULL;
    d = gs__arena_alloc(ctx, size ? size : 1);
    if (d && size) memcpy(d, p, size);
    return d;
}

GS__FN char *gs__arena_strdup(gs_ctx *ctx, const char *s) {
    if (!s) return NULL;
    return (char *)gs__arena_dup(ctx, s, strlen(s) + 1);
}

GS__FN char *gs__arena_printf(gs_ctx *ctx, const char *fmt, ...) {
    va_list ap;
    int n;
    char *p;
    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return NULL;
    p = (char *)gs__arena_alloc(ctx, (size_t)n + 1);
    if (!p) return NULL;
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

/* ---- text buffer ---- */
GS__FN void gs__sb_init(gs__sb *sb, gs_ctx *ctx) {
    memset(sb, 0, sizeof *sb);
    sb->ctx = ctx;
}

GS__FN bool gs__sb_reserve(gs__sb *sb, size_t extra) {
    size_t cap;
    char *nb;
    if (sb->oom) return false;
    if (sb->len + extra + 1 <= sb->cap) return true;
    cap = sb->cap ? sb->cap : 256;
    while (cap < sb->len + extra + 1) cap *= 2;
    nb = (char *)gs__malloc(sb->ctx, cap);
    if (!nb) {
        sb->oom = true;
        return false;
    }
    if (sb->len) memcpy(nb, sb->buf, sb->len);
    nb[sb->len] = 0;
    gs__free(sb->ctx, sb->buf);
    sb->buf = nb;
    sb->cap = cap;
    return true;
}

GS__FN void gs__sb_put(gs__sb *sb, const char *s, size_t n) {
    if (!gs__sb_reserve(sb, n)) return;
    memcpy(sb->buf + sb->len, s, n);
    sb->len += n;
    sb->buf[sb->len] = 0;
}

GS__FN void gs__sb_puts(gs__sb *sb, const char *s) { gs__sb_put(sb, s, strlen(s)); }

GS__FN void gs__sb_printf(gs__sb *sb, const char *fmt, ...) {
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !gs__sb_reserve(sb, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb->len += (size_t)n;
}

/* Moves the text into ctx's arena and frees the buffer; NULL (with the error set) when anything ran out of memory. */
GS__FN char *gs__sb_finish(gs__sb *sb, const char *who) {
    char *out = NULL;
    if (sb->oom) gs__err(sb->ctx, GS_ERR_OUT_OF_MEMORY, "out of memory in %s", who);
    else out = gs__arena_strdup(sb->ctx, sb->buf ? sb->buf : "");
    gs__sb_free(sb);
    return out;
}

GS__FN void gs__sb_free(gs__sb *sb) {
    gs__free(sb->ctx, sb->buf);
    sb->buf = NULL;
    sb->len = sb->cap = 0;
}

/* ---- dtypes ----
   One table: name, storage and compute bytes, class, bit width, and for floats the format (exponent and
   mantissa bits, bias, and how inf/NaN/-0 are encoded). Compute format (the interpreter's buffers): every
   real float narrower than f64 is a float holding a value of the type, f64 a double, integers their C type
   (s2/s4 as int8_t, u2/u4 as uint8_t, holding the value), pred uint8_t 0/1, complex two floats or doubles. */
static const gs__dtinfo gs__dtinfo_tab[GS_DTYPE_COUNT] = {
    /* name, size, csize, cls, bits, ebits, mbits, bias, fkind */
    {"invalid", 0, 0, GS__DC_NONE, 0, 0, 0, 0, 0},
    {"f32", 4, 4, GS__DC_FLOAT, 32, 8, 23, 127, GS__FK_IEEE},
    {"bf16", 2, 4, GS__DC_FLOAT, 16, 8, 7, 127, GS__FK_IEEE},
    {"s32", 4, 4, GS__DC_SINT, 32, 0, 0, 0, 0},
    {"u32", 4, 4, GS__DC_UINT, 32, 0, 0, 0, 0},
    {"pred", 1, 1, GS__DC_PRED, 1, 0, 0, 0, 0},
    {"tuple", 0, 0, GS__DC_NONE, 0, 0, 0, 0, 0},
    {"s8", 1, 1, GS__DC_SINT, 8, 0, 0, 0, 0},
    {"s16", 2, 2, GS__DC_SINT, 16, 0, 0, 0, 0},
    {"s64", 8, 8, GS__DC_SINT, 64, 0, 0, 0, 0},
    {"u8", 1, 1, GS__DC_UINT, 8, 0, 0, 0, 0},
    {"u16", 2, 2, GS__DC_UINT, 16, 0, 0, 0, 0},
    {"u64", 8, 8, GS__DC_UINT, 64, 0, 0, 0, 0},
    {"f16", 2, 4, GS__DC_FLOAT, 16, 5, 10, 15, GS__FK_IEEE},
    {"f64", 8, 8, GS__DC_FLOAT, 64, 11, 52, 1023, GS__FK_IEEE},
    {"s2", 1, 1, GS__DC_SINT, 2, 0, 0, 0, 0},
    {"s4", 1, 1, GS__DC_SINT, 4, 0, 0, 0, 0},
    {"u2", 1, 1, GS__DC_UINT, 2, 0, 0, 0, 0},
    {"u4", 1, 1, GS__DC_UINT, 4, 0, 0, 0, 0},
    {"f8e5m2", 1, 4, GS__DC_FLOAT, 8, 5, 2, 15, GS__FK_IEEE},
    {"f8e4m3fn", 1, 4, GS__DC_FLOAT, 8, 4, 3, 7, GS__FK_FN},
    {"f8e4m3", 1, 4, GS__DC_FLOAT, 8, 4, 3, 7, GS__FK_IEEE},
    {"f8e4m3fnuz", 1, 4, GS__DC_FLOAT, 8, 4, 3, 8, GS__FK_FNUZ},
    {"f8e4m3b11fnuz", 1, 4, GS__DC_FLOAT, 8, 4, 3, 11, GS__FK_FNUZ},
    {"f8e5m2fnuz", 1, 4, GS__DC_FLOAT, 8, 5, 2, 16, GS__FK_FNUZ},
    {"f8e3m4", 1, 4, GS__DC_FLOAT, 8, 3, 4, 3, GS__FK_IEEE},
    {"f4e2m1fn", 1, 4, GS__DC_FLOAT, 4, 2, 1, 1, GS__FK_MX},
    {"f8e8m0fnu", 1, 4, GS__DC_FLOAT, 8, 8, 0, 127, GS__FK_E8M0},
    {"c64", 8, 8, GS__DC_COMPLEX, 64, 0, 0, 0, 0},
    {"c128", 16, 16, GS__DC_COMPLEX, 128, 0, 0, 0, 0},
    {"token", 0, 1, GS__DC_TOKEN, 0, 0, 0, 0, 0},
};

GS__FN const gs__dtinfo *gs__dt(gs_dtype t) {
    return &gs__dtinfo_tab[(int)t >= 0 && t < GS_DTYPE_COUNT ? t : GS_DTYPE_INVALID];
}

GS_API size_t gs_dtype_size(gs_dtype t) { return gs__dt(t)->size; }
GS__FN size_t gs__compute_size(gs_dtype t) { return gs__dt(t)->csize; }
GS_API const char *gs_dtype_name(gs_dtype t) { return gs__dt(t)->name; }

GS_API gs_dtype gs_dtype_from_name(const char *name) {
    return name ? gs__dtype_from_text(name, strlen(name)) : GS_DTYPE_INVALID;
}

/* The array dtype spelled by the n characters at s ("tuple" and "invalid" are not element types). */
GS__FN gs_dtype gs__dtype_from_text(const char *s, size_t n) {
    int t;
    for (t = 1; t < GS_DTYPE_COUNT; t++)
        if (t != GS_TUPLE && strlen(gs__dtinfo_tab[t].name) == n && memcmp(gs__dtinfo_tab[t].name, s, n) == 0)
            return (gs_dtype)t;
    return GS_DTYPE_INVALID;
}

GS__FN bool gs__is_float(gs_dtype t) { return gs__dt(t)->cls == GS__DC_FLOAT; }
GS__FN bool gs__is_fc(gs_dtype t) { return gs__dt(t)->cls == GS__DC_FLOAT && t != GS_F64; }
GS__FN bool gs__is_int(gs_dtype t) { return gs__dt(t)->cls == GS__DC_SINT || gs__dt(t)->cls == GS__DC_UINT; }
GS__FN bool gs__is_signed(gs_dtype t) { return gs__dt(t)->cls == GS__DC_SINT; }
GS__FN bool gs__is_complex(gs_dtype t) { return gs__dt(t)->cls == GS__DC_COMPLEX; }
GS__FN bool gs__is_array_dtype(gs_dtype t) { return t > GS_DTYPE_INVALID && t < GS_DTYPE_COUNT && t != GS_TUPLE; }
/* a type with numbers in it (not pred, not token) */
GS__FN bool gs__is_numeric(gs_dtype t) { return gs__is_float(t) || gs__is_int(t) || gs__is_complex(t); }

/* ---- narrow float formats ---- */
/* The largest finite value of real float type t. */
GS__FN double gs__fp_max(gs_dtype t) {
    const gs__dtinfo *d = gs__dt(t);
    int emax = (1 << d->ebits) - 1 - d->bias;
    if (t == GS_F64) return DBL_MAX;
    if (d->fkind == GS__FK_E8M0) return ldexp(1.0, 127);
    if (d->fkind == GS__FK_IEEE) emax--;
    return ldexp(2.0 - ldexp(1.0, -d->mbits) * (d->fkind == GS__FK_FN ? 2.0 : 1.0), emax);
}

/* Rounds x to the nearest value of float type t (ties to even; overflow as the format says: inf for the
   IEEE-like types, NaN for the fn/fnuz types, the largest finite value for f4e2m1fn) and returns its bits. */
GS__FN uint32_t gs__fp_encode(gs_dtype t, double x) {
    const gs__dtinfo *d = gs__dt(t);
    int m = d->mbits, emin = 1 - d->bias, e;
    uint32_t sign = 0, expmask = ((1u << d->ebits) - 1u) << m, nan;
    double a, q, r, maxv = gs__fp_max(t);
    if (t == GS_F32) { float f = (float)x; uint32_t u; memcpy(&u, &f, 4); return u; }
    if (d->fkind == GS__FK_E8M0) {   /* powers of two 2^-127 .. 2^127; nearest (ties up), no sign, no zero */
        if (x != x || x < 0.0) return 0xFFu;
        if (x <= ldexp(1.0, -127)) return 0;
        e = (int)floor(log2(x));
        if (x >= ldexp(1.5, e)) e++;
        return e > 127 ? 0xFFu : (uint32_t)(e + 127);
    }
    if (signbit(x)) sign = 1u << (d->ebits + m);
    switch (d->fkind) {
    case GS__FK_IEEE: {   /* a quiet NaN keeping the sign and the top bits of the payload (as bf16's does) */
        float f = (float)x;
        uint32_t u;
        memcpy(&u, &f, 4);
        nan = sign | expmask | (1u << (m - 1)) | ((u & 0x007fffffu) >> (23 - m));
        break;
    }
    case GS__FK_FN: nan = sign | expmask | ((1u << m) - 1u); break;
    case GS__FK_FNUZ: nan = 0x80u; break;
    default: nan = 1u << (d->ebits + m); break;   /* mx: NaN converts to the -0 pattern (as ml_dtypes does) */
    }
    if (x != x) return nan;
    a = fabs(x);
    if (a > maxv * 2.0) {   /* huge values (and inf) need no rounding */
        r = a;
    } else {
        if (a < ldexp(1.0, emin)) {
            q = ldexp(1.0, emin - m);
        } else {
            (void)frexp(a, &e);
            q = ldexp(1.0, e - 1 - m);
        }
        r = nearbyint(a / q) * q;
    }
    if (r > maxv) {
        if (d->fkind == GS__FK_IEEE) return sign | expmask;
        if (d->fkind == GS__FK_MX) r = maxv;
        else return nan;
    }
    if (r == 0.0) return d->fkind == GS__FK_FNUZ ? 0u : sign;
    if (r < ldexp(1.0, emin)) return sign | (uint32_t)(r / ldexp(1.0, emin - m));
    (void)frexp(r, &e);
    e -= 1;
    return sign | ((uint32_t)(e + d->bias) << m) | (uint32_t)((ldexp(r, -e) - 1.0) * ldexp(1.0, m));
}

/* The value of the bit pattern b of float type t (f32 and narrower). */
GS__FN double gs__fp_decode(gs_dtype t, uint32_t b) {
    const gs__dtinfo *d = gs__dt(t);
    int m = d->mbits;
    uint32_t ef = (b >> m) & ((1u << d->ebits) - 1u), mf = b & ((1u << m) - 1u);
    bool neg = ((b >> (d->ebits + m)) & 1u) != 0;
    double v;
    if (t == GS_F32) { float f; memcpy(&f, &b, 4); return f; }
    if (d->fkind == GS__FK_E8M0) return b == 0xFFu ? (double)NAN : ldexp(1.0, (int)b - 127);
    switch (d->fkind) {
    case GS__FK_IEEE:
        if (ef == (1u << d->ebits) - 1u) {
            /* inf, or the NaN of f32 with the same sign and payload, so that decode(encode(x)) keeps the bits */
            uint32_t u = (neg ? 0x80000000u : 0u) | 0x7f800000u | (mf << (23 - m));
            float f;
            if (!mf) return neg ? -(double)INFINITY : (double)INFINITY;
            memcpy(&f, &u, 4);
            return f;
        }
        break;
    case GS__FK_FN:
        if (ef == (1u << d->ebits) - 1u && mf == (1u << m) - 1u) return neg ? -(double)NAN : (double)NAN;
        break;
    case GS__FK_FNUZ:
        if (b == 0x80u) return (double)NAN;
        break;
    default: break;
    }
    v = ef == 0 ? ldexp((double)mf, 1 - d->bias - m) : ldexp(1.0 + ldexp((double)mf, -m), (int)ef - d->bias);
    return neg ? -v : v;
}

/* x rounded to float type t, as a float (every type narrower than f64 is exact in f32). */
GS__FN float gs__fp_round(gs_dtype t, double x) {
    if (t == GS_F32) return (float)x;
    return (float)gs__fp_decode(t, gs__fp_encode(t, x));
}

/* Rounds n compute-format floats to type t in place (nothing for f32). */
GS__FN void gs__round_dt(gs_dtype t, float *x, int64_t n) {
    int64_t i;
    if (t == GS_BF16) gs__round_bf16(x, n);
    else if (gs__is_fc(t) && t != GS_F32)
        for (i = 0; i < n; i++) x[i] = gs__fp_round(t, x[i]);
}

/* v wrapped to integer type t (two's complement, sign-extended for signed types), as 64 bits. */
GS__FN uint64_t gs__int_wrap(gs_dtype t, uint64_t v) {
    int b = gs__dt(t)->bits;
    if (b >= 64) return v;
    v &= (((uint64_t)1) << b) - 1u;
    if (gs__is_signed(t) && (v >> (b - 1)) & 1u) v |= ~((((uint64_t)1) << b) - 1u);
    return v;
}

/* ---- compute-format elements: loads and stores through 64-bit integers and doubles ---- */
GS__FN uint64_t gs__ld_i(gs_dtype t, const void *p, int64_t i) {
    switch (t) {
    case GS_S8: case GS_S2: case GS_S4: return (uint64_t)(int64_t)((const int8_t *)p)[i];
    case GS_S16: return (uint64_t)(int64_t)((const int16_t *)p)[i];
    case GS_S32: return (uint64_t)(int64_t)((const int32_t *)p)[i];
    case GS_S64: return (uint64_t)((const int64_t *)p)[i];
    case GS_U8: case GS_U2: case GS_U4: case GS_PRED: return ((const uint8_t *)p)[i];
    case GS_U16: return ((const uint16_t *)p)[i];
    case GS_U32: return ((const uint32_t *)p)[i];
    case GS_U64: return ((const uint64_t *)p)[i];
    default: return 0;
    }
}

GS__FN void gs__st_i(gs_dtype t, void *p, int64_t i, uint64_t v) {
    v = gs__int_wrap(t, v);
    switch (gs__dt(t)->csize) {
    case 1: ((uint8_t *)p)[i] = (uint8_t)(t == GS_PRED ? v != 0 : v); break;
    case 2: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case 4: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case 8: ((uint64_t *)p)[i] = v; break;
    default: break;
    }
}

/* A real float element as a double (complex: the real part; integers and pred: their value). */
GS__FN double gs__ld_f(gs_dtype t, const void *p, int64_t i) {
    if (gs__is_fc(t)) return ((const float *)p)[i];
    if (t == GS_F64) return ((const double *)p)[i];
    if (t == GS_C64) return ((const float *)p)[2 * i];
    if (t == GS_C128) return ((const double *)p)[2 * i];
    if (gs__is_signed(t)) return (double)(int64_t)gs__ld_i(t, p, i);
    return (double)gs__ld_i(t, p, i);
}

/* Stores x rounded to float type t. */
GS__FN void gs__st_f(gs_dtype t, void *p, int64_t i, double x) {
    if (t == GS_F64) ((double *)p)[i] = x;
    else if (gs__is_fc(t)) ((float *)p)[i] = gs__fp_round(t, x);
}

/* XLA's float -> integer convert: NaN gives 0, otherwise truncation toward zero saturating at the type's
   range. */
GS__FN uint64_t gs__f2i(gs_dtype t, double x) {
    int b = gs__dt(t)->bits;
    if (x != x) return 0;
    if (gs__is_signed(t)) {
        double hi = ldexp(1.0, b - 1);   /* 2^(b-1): the first value above the range */
        if (x >= hi) return (uint64_t)(b >= 64 ? INT64_MAX : (int64_t)hi - 1);
        if (x <= -hi) return (uint64_t)(b >= 64 ? INT64_MIN : -(int64_t)hi);
        return (uint64_t)(int64_t)x;
    } else {
        double hi = ldexp(1.0, b);
        if (x <= 0.0) return 0;
        if (x >= hi) return b >= 64 ? UINT64_MAX : (uint64_t)hi - 1u;
        return (uint64_t)x;
    }
}

/* Element i of compute-format data of type t set to x converted as XLA's convert from f64 does (floats
   rounded to nearest even, integers by gs__f2i, pred x != 0, complex (x, 0)). */
GS__FN void gs__set_elem(gs_dtype t, void *p, int64_t i, double x) {
    if (gs__is_float(t)) gs__st_f(t, p, i, x);
    else if (t == GS_PRED) ((uint8_t *)p)[i] = (uint8_t)(x != 0.0);
    else if (gs__is_int(t)) gs__st_i(t, p, i, gs__f2i(t, x));
    else if (t == GS_C64) { ((float *)p)[2 * i] = (float)x; ((float *)p)[2 * i + 1] = 0.0f; }
    else if (t == GS_C128) { ((double *)p)[2 * i] = x; ((double *)p)[2 * i + 1] = 0.0; }
}

GS_API double gs_dtype_get(gs_dtype t, const void *data, int64_t i) {
    unsigned char one[16];
    if (!data || !gs__is_array_dtype(t) || t == GS_TOKEN || i < 0) return 0.0;
    gs__to_compute(t, one, (const unsigned char *)data + (size_t)i * gs__dt(t)->size, 1);
    return gs__ld_f(t, one, 0);
}

/* ---- storage format <-> compute format ---- */
GS__FN bool gs__fmt_differs(gs_dtype t) {
    return t == GS_PRED || (gs__is_fc(t) && t != GS_F32) || t == GS_S2 || t == GS_S4 || t == GS_U2 || t == GS_U4;
}

/* n elements of type t from storage format (src) to compute format (dst); pred is normalised to 0/1 and
   the 2/4-bit integers are wrapped to their width. */
GS__FN void gs__to_compute(gs_dtype t, void *dst, const void *src, int64_t n) {
    int64_t i;
    if (n <= 0) return;
    if (t == GS_BF16) {
        for (i = 0; i < n; i++) ((float *)dst)[i] = gs_bf16_to_f32(((const uint16_t *)src)[i]);
    } else if (t == GS_F16) {
        for (i = 0; i < n; i++) ((float *)dst)[i] = (float)gs__fp_decode(t, ((const uint16_t *)src)[i]);
    } else if (gs__is_fc(t) && t != GS_F32) {
        uint32_t mask = (1u << gs__dt(t)->bits) - 1u;
        for (i = 0; i < n; i++) ((float *)dst)[i] = (float)gs__fp_decode(t, ((const uint8_t *)src)[i] & mask);
    } else if (gs__fmt_differs(t)) {
        for (i = 0; i < n; i++) gs__st_i(t, dst, i, ((const uint8_t *)src)[i]);
    } else {
        memcpy(dst, src, (size_t)n * gs__dt(t)->size);
    }
}

GS__FN void gs__to_storage(gs_dtype t, void *dst, const void *src, int64_t n) {
    int64_t i;
    if (n <= 0) return;
    if (t == GS_BF16) {
        for (i = 0; i < n; i++) ((uint16_t *)dst)[i] = gs_f32_to_bf16(((const float *)src)[i]);
    } else if (t == GS_F16) {
        for (i = 0; i < n; i++) ((uint16_t *)dst)[i] = (uint16_t)gs__fp_encode(t, ((const float *)src)[i]);
    } else if (gs__is_fc(t) && t != GS_F32) {
        for (i = 0; i < n; i++) ((uint8_t *)dst)[i] = (uint8_t)gs__fp_encode(t, ((const float *)src)[i]);
    } else {
        memcpy(dst, src, (size_t)n * gs__dt(t)->size);
    }
}

GS_API uint16_t gs_f32_to_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu)) return (uint16_t)((u >> 16) | 0x0040u); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

GS_API float gs_bf16_to_f32(uint16_t b) {
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

GS_API const char *gs_reduce_kind_name(gs_reduce_kind k) {
    switch (k) {
    case GS_REDUCE_SUM: return "sum";
    case GS_REDUCE_PROD: return "prod";
    case GS_REDUCE_MAX: return "max";
    case GS_REDUCE_MIN: return "min";
    case GS_REDUCE_AND: return "and";
    case GS_REDUCE_OR: return "or";
    case GS_REDUCE_REPLACE: return "replace";
    case GS_REDUCE_CUSTOM: return "custom";
    default: return "invalid";
    }
}
