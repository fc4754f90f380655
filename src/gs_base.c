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
    *out = ctx;
    return GS_OK;
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

/* ---- dtypes ---- */
GS_API size_t gs_dtype_size(gs_dtype t) {
    switch (t) {
    case GS_F32: case GS_S32: case GS_U32: return 4;
    case GS_BF16: return 2;
    case GS_PRED: return 1;
    default: return 0;
    }
}

GS__FN size_t gs__compute_size(gs_dtype t) {
    switch (t) {
    case GS_F32: case GS_BF16: case GS_S32: case GS_U32: return 4;
    case GS_PRED: return 1;
    default: return 0;
    }
}

GS_API const char *gs_dtype_name(gs_dtype t) {
    switch (t) {
    case GS_F32: return "f32";
    case GS_BF16: return "bf16";
    case GS_S32: return "s32";
    case GS_U32: return "u32";
    case GS_PRED: return "pred";
    case GS_TUPLE: return "tuple";
    default: return "invalid";
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
    default: return "invalid";
    }
}
