/* gs_notation.c - the book's sharding notation, both ways: meshes as text, shardings as A[I_X, J] and {X, _},
   and expressions (A[I_X, J] * B[J, K_Y] -> C[I_X, K_Y]) built into a program, partitioned and costed. */
#include "gs_internal.h"

/* =========================================================================================================
   Meshes as text
   ========================================================================================================= */
GS__FN bool gs__nt_word_char(int c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

GS_API const gs_mesh *gs_mesh_parse(gs_ctx *ctx, const char *text) {
    const char *names[GS_MAX_IOTA_RANK];
    char buf[GS_MAX_IOTA_RANK][64];
    int64_t sizes[GS_MAX_IOTA_RANK];
    int n = 0;
    bool brace = false;
    const char *p = text;
    if (!ctx || ctx->err) return NULL;
    if (!text) {
        gs__err(ctx, GS_ERR_INVALID_ARG, "gs_mesh_parse: no text");
        return NULL;
    }
#define GS__MP_FAIL(what) do { gs__err(ctx, GS_ERR_PARSE, "gs_mesh_parse: \"%s\", column %d: expected %s", text, \
                                       (int)(p - text) + 1, what); return NULL; } while (0)
    while (*p == ' ') p++;
    if (*p == '{') { brace = true; p++; }
    for (;;) {
        const char *w;
        int64_t v = 0;
        while (*p == ' ') p++;
        w = p;
        while (gs__nt_word_char((unsigned char)*p)) p++;
        if (p == w || (*w >= '0' && *w <= '9')) GS__MP_FAIL("an axis name (a letter, then letters, digits or '_')");
        if (n == GS_MAX_IOTA_RANK) GS__MP_FAIL("at most 16 axes");
        if ((size_t)(p - w) >= sizeof buf[n]) GS__MP_FAIL("a name under 64 characters");
        memcpy(buf[n], w, (size_t)(p - w));
        buf[n][p - w] = 0;
        while (*p == ' ') p++;
        if (*p != '=' && *p != ':') GS__MP_FAIL("'=' and the axis size");
        p++;
        while (*p == ' ') p++;
        if (!(*p >= '0' && *p <= '9')) GS__MP_FAIL("the axis size (a positive integer)");
        while (*p >= '0' && *p <= '9') {
            v = v * 10 + (*p++ - '0');
            if (v > ((int64_t)1 << 31)) GS__MP_FAIL("an axis size up to 2^31");
        }
        if (v < 1) GS__MP_FAIL("an axis size >= 1");
        names[n] = buf[n];
        sizes[n++] = v;
        while (*p == ' ') p++;
        if (*p == ',') { p++; continue; }
        if (brace && *p == '}') { p++; while (*p == ' ') p++; brace = false; }
        if (brace) GS__MP_FAIL("',' or '}'");
        if (*p) GS__MP_FAIL("',' or the end");
        break;
    }
#undef GS__MP_FAIL
    return gs_mesh_new(ctx, n, names, sizes, NULL);
}

GS_API const char *gs_mesh_to_text(gs_ctx *ctx, const gs_mesh *m) {
    gs__sb sb;
    int i;
    if (!ctx || ctx->err) return NULL;
    if (!m) {
        gs__err(ctx, GS_ERR_INVALID_ARG, "gs_mesh_to_text: no mesh");
        return NULL;
    }
    gs__sb_init(&sb, ctx);
    for (i = 0; i < m->n_axes; i++) gs__sb_printf(&sb, "%s%s=%lld", i ? "," : "", m->names[i], (long long)m->sizes[i]);
    return gs__sb_finish(&sb, "gs_mesh_to_text");
}

/* =========================================================================================================
   Shardings -> axes: which mesh axes, in which order, split each dim
   ========================================================================================================= */
typedef struct gs__nt_assign {
    int rank;
    int n_of[GS_MAX_RANK];
    int axes[GS_MAX_RANK][GS_MAX_IOTA_RANK];
} gs__nt_assign;

typedef struct gs__nt_search {
    gs_ctx *ctx;
    const gs_sharding *s;
    const gs_mesh *m;
    int64_t want[GS_MAX_RANK];
    bool used[GS_MAX_IOTA_RANK];
    gs__nt_assign cur;
    long budget;               /* search steps left: a mesh of many small axes gives up instead of taking forever */
} gs__nt_search;

/* the candidate in S->cur: the unused axes (of size > 1) must hold exactly the replication */
GS__FN bool gs__nt_try(gs__nt_search *S) {
    int64_t rest = 1;
    int a;
    const gs_sharding *c;
    for (a = 0; a < S->m->n_axes; a++)
        if (!S->used[a]) rest *= S->m->sizes[a];
    if (rest != gs_sharding_replication(S->s)) return false;
    c = gs__mesh_build(S->ctx, S->m, S->cur.rank, S->cur.n_of, S->cur.axes, "gs_sharding_to_spec");
    if (!c) {
        gs_ctx_clear_error(S->ctx);
        return false;
    }
    return gs_sharding_equal(c, S->s);
}

/* dim d still needs `left` more tiles from unused axes (appended in order, major first) */
GS__FN bool gs__nt_dfs(gs__nt_search *S, int d, int64_t left) {
    int a;
    if (--S->budget < 0) return false;
    if (d == S->cur.rank) return gs__nt_try(S);
    if (left == 1) return d + 1 == S->cur.rank ? gs__nt_try(S) : gs__nt_dfs(S, d + 1, S->want[d + 1]);
    for (a = 0; a < S->m->n_axes; a++) {
        int64_t k = S->m->sizes[a];
        if (S->used[a] || k == 1 || left % k != 0) continue;
        S->used[a] = true;
        S->cur.axes[d][S->cur.n_of[d]++] = a;
        if (gs__nt_dfs(S, d, left / k)) return true;
        S->cur.n_of[d]--;
        S->used[a] = false;
    }
    return false;
}

/* true and *out filled when some assignment of m's axes to dims reproduces s (replicated: no axes) */
GS__FN bool gs__nt_axes_of(gs_ctx *ctx, const gs_sharding *s, const gs_mesh *m, int rank, gs__nt_assign *out) {
    gs__nt_search S;
    int d;
    bool ok;
    if (!s || !m || rank < 0 || rank > GS_MAX_RANK || ctx->err) return false;
    memset(out, 0, sizeof *out);
    out->rank = rank;
    if (s->kind == GS_SHARDING_REPLICATED) return true;
    if (s->kind != GS_SHARDING_TILED || gs_sharding_rank(s) != rank || gs_sharding_manual_group(s) != 1 ||
        gs_sharding_num_devices(s) != m->total)
        return false;
    memset(&S, 0, sizeof S);
    S.ctx = ctx;
    S.s = s;
    S.m = m;
    S.cur.rank = rank;
    S.budget = 100000;
    for (d = 0; d < rank; d++) S.want[d] = gs_sharding_tiles(s, d);
    ok = rank == 0 ? gs__nt_try(&S) : gs__nt_dfs(&S, 0, S.want[0]);
    if (ok) *out = S.cur;
    return ok;
}

/* an axis list: "X" alone, else "{XY}" when every name is one character, else "{data,model}" */
GS__FN void gs__nt_put_axes(gs__sb *sb, const gs_mesh *m, int n, const int *axes, bool book) {
    int k;
    bool short_names = true;
    for (k = 0; k < n; k++)
        if (strlen(m->names[axes[k]]) != 1) short_names = false;
    if (!book) {   /* spec form: X or (X,Y) */
        if (n > 1) gs__sb_puts(sb, "(");
        for (k = 0; k < n; k++) gs__sb_printf(sb, "%s%s", k ? "," : "", m->names[axes[k]]);
        if (n > 1) gs__sb_puts(sb, ")");
        return;
    }
    if (n == 1 && short_names) {
        gs__sb_puts(sb, m->names[axes[0]]);
        return;
    }
    gs__sb_puts(sb, "{");
    for (k = 0; k < n; k++) gs__sb_printf(sb, "%s%s", k && !short_names ? "," : "", m->names[axes[k]]);
    gs__sb_puts(sb, "}");
}

GS__FN void gs__nt_put_spec(gs__sb *sb, const gs_mesh *m, const gs__nt_assign *as) {
    int d;
    gs__sb_puts(sb, "{");
    for (d = 0; d < as->rank; d++) {
        if (d) gs__sb_puts(sb, ", ");
        if (as->n_of[d] == 0) gs__sb_puts(sb, "_");
        else gs__nt_put_axes(sb, m, as->n_of[d], as->axes[d], false);
    }
    gs__sb_puts(sb, "}");
}

GS_API const char *gs_sharding_to_spec(gs_ctx *ctx, const gs_sharding *s, const gs_mesh *m, int rank) {
    gs__nt_assign as;
    gs__sb sb;
    if (!ctx || ctx->err) return NULL;
    if (!s || !m || rank < 0 || rank > GS_MAX_RANK) {
        gs__err(ctx, GS_ERR_INVALID_ARG, "gs_sharding_to_spec: bad arguments");
        return NULL;
    }
    if (rank == 0 && s->kind == GS_SHARDING_REPLICATED) return gs__arena_strdup(ctx, "{replicated}");
    if (!gs__nt_axes_of(ctx, s, m, rank, &as)) return NULL;
    gs__sb_init(&sb, ctx);
    gs__nt_put_spec(&sb, m, &as);
    return gs__sb_finish(&sb, "gs_sharding_to_spec");
}

GS__FN void gs__nt_put_array(gs__sb *sb, const gs_mesh *m, const char *name, const char *const *dim_names,
                             const gs__nt_assign *as) {
    int d;
    gs__sb_printf(sb, "%s[", name);
    for (d = 0; d < as->rank; d++) {
        if (d) gs__sb_puts(sb, ", ");
        if (dim_names) gs__sb_puts(sb, dim_names[d]);
        else gs__sb_printf(sb, "%c", "IJKLMNOP"[d]);
        if (as->n_of[d] == 0) continue;
        gs__sb_puts(sb, "_");
        gs__nt_put_axes(sb, m, as->n_of[d], as->axes[d], true);
    }
    gs__sb_puts(sb, "]");
}

GS_API const char *gs_sharding_to_notation(gs_ctx *ctx, const gs_sharding *s, const gs_mesh *m, const char *name,
                                           int rank, const char *const *dim_names) {
    gs__nt_assign as;
    gs__sb sb;
    if (!ctx || ctx->err) return NULL;
    if (!s || !m || !name || rank < 0 || rank > GS_MAX_RANK) {
        gs__err(ctx, GS_ERR_INVALID_ARG, "gs_sharding_to_notation: bad arguments");
        return NULL;
    }
    if (!gs__nt_axes_of(ctx, s, m, rank, &as)) return NULL;
    gs__sb_init(&sb, ctx);
    gs__nt_put_array(&sb, m, name, dim_names, &as);
    return gs__sb_finish(&sb, "gs_sharding_to_notation");
}

/* =========================================================================================================
   Printing and reading {X, _} in HLO text
   ========================================================================================================= */
GS_API void gs_ctx_set_notation_mesh(gs_ctx *ctx, const gs_mesh *m) {
    if (ctx) ctx->notation_mesh = m;
}

GS_API const gs_mesh *gs_hlo_mesh(const gs_graph *entry) { return entry ? entry->mesh : NULL; }

/* s of a value with shape v (tuples element by element): {X, _} when the ctx has a notation mesh and some axis
   order expresses it, else XLA's text */
GS__FN void gs__nt_print_sharding(gs__sb *sb, gs_ctx *ctx, const gs_sharding *s, const gs_value *v) {
    const gs_mesh *m = ctx->notation_mesh;
    gs__nt_assign as;
    if (m && s && v && s->kind == GS_SHARDING_TUPLE && v->shape.dtype == GS_TUPLE && s->n_elems == v->n_tuple &&
        !v->tree) {
        int i;
        gs__sb_puts(sb, "{");
        for (i = 0; i < s->n_elems; i++) {
            if (i) gs__sb_puts(sb, ", ");
            if (s->elems[i]->kind != GS_SHARDING_REPLICATED && gs__nt_axes_of(ctx, s->elems[i], m, v->tuple[i].rank, &as))
                gs__nt_put_spec(sb, m, &as);
            else gs__sh_print(sb, s->elems[i]);
        }
        gs__sb_puts(sb, "}");
        return;
    }
    if (m && s && v && v->shape.dtype != GS_TUPLE && s->kind != GS_SHARDING_REPLICATED &&
        gs__nt_axes_of(ctx, s, m, v->shape.rank, &as)) {
        gs__nt_put_spec(sb, m, &as);
        return;
    }
    gs__sh_print(sb, s);
}

GS__FN const char *gs__nt_sharding_text(gs_ctx *ctx, const gs_sharding *s, const gs_value *v) {
    gs__sb sb;
    gs__sb_init(&sb, ctx);
    gs__nt_print_sharding(&sb, ctx, s, v);
    return gs__sb_finish(&sb, "gs_partition_print");
}

GS__FN void gs__nt_print_header(gs__sb *sb, gs_ctx *ctx) {
    const gs_mesh *m = ctx->notation_mesh;
    int i;
    if (!m) return;
    gs__sb_puts(sb, ", mesh={");
    for (i = 0; i < m->n_axes; i++) gs__sb_printf(sb, "%s%s=%lld", i ? "," : "", m->names[i], (long long)m->sizes[i]);
    gs__sb_puts(sb, "}");
}

/* XLA's words that open a sharding's text; anything else inside {...} is a mesh spec */
static const char *const gs__nt_xla_words[] = {"replicated", "manual", "unknown", "maximal", "devices",
                                               "last_tile_dim_replicate", "last_tile_dims", "shard_as", "shard_like",
                                               "metadata", "mesh", "unreduced"};

/* text is "{...}" whose first word is not one of XLA's: "{X, _}", "{(X,Y), ?}", "{_}"; a tuple "{{..}, {..}}"
   counts when one of its elements does */
GS__FN bool gs__nt_is_spec(const char *text) {
    const char *p = text, *w;
    int i, depth = 0;
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++;   /* XLA's text may break lines anywhere */
    if (*p != '{') return false;
    p++;
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++;
    if (*p == '{') {   /* a tuple: any element */
        for (; *p; p++) {
            if (*p == '{') {
                depth++;
                if (depth == 1 && gs__nt_is_spec(p)) return true;
            } else if (*p == '}') {
                depth--;
            }
        }
        return false;
    }
    if (*p == '}') return false;   /* "{}" */
    w = p;
    while (gs__nt_word_char((unsigned char)*p)) p++;
    for (i = 0; i < GS__COUNTOF(gs__nt_xla_words); i++)
        if (strlen(gs__nt_xla_words[i]) == (size_t)(p - w) && strncmp(w, gs__nt_xla_words[i], (size_t)(p - w)) == 0)
            return false;
    return true;
}

/* One array's {X, _} (or XLA text) for a value of rank `rank`: the sharding and its open dims. */
GS__FN const gs_sharding *gs__nt_one(gs_ctx *ctx, const gs_mesh *m, const char *text, size_t n, int rank,
                                     uint32_t *open) {
    char *inner;
    const gs_sharding *s;
    *open = 0;
    if (!(inner = (char *)gs__arena_alloc(ctx, n + 1))) return NULL;
    memcpy(inner, text, n);
    if (!gs__nt_is_spec(inner)) return gs_sharding_parse(ctx, inner);
    if (!m) {
        gs__err(ctx, GS_ERR_SHARDING, "sharding=%s names mesh axes, but the module header declares no mesh "
                "(HloModule name, mesh={X=4,Y=2})", inner);
        return NULL;
    }
    while (n > 0 && inner[n - 1] == ' ') n--;
    if (n < 2 || inner[n - 1] != '}') {
        gs__err(ctx, GS_ERR_SHARDING, "sharding=%s: expected '}' at the end", inner);
        return NULL;
    }
    inner[n - 1] = 0;
    s = gs_mesh_sharding(ctx, m, rank, strchr(inner, '{') + 1, open);
    return s;
}

/* The sharding a sharding={...} attribute gives value v when the text is a mesh spec (gs__nt_is_spec), read over
   mesh m (NULL: an error naming the missing header). Tuples element by element (flat tuples only). */
GS__FN const gs_sharding *gs__nt_value_sharding(gs_ctx *ctx, const gs_mesh *m, const char *text, const gs_value *v,
                                                uint32_t *open) {
    const gs_sharding *elems[64];
    const char *p = text, *start = NULL;
    int n = 0, depth = 0;
    uint32_t o;
    if (v->shape.dtype != GS_TUPLE) return gs__nt_one(ctx, m, text, strlen(text), v->shape.rank, open);
    *open = 0;
    if (v->tree || v->n_tuple > 64) {
        gs__err(ctx, GS_ERR_SHARDING, "%s: a mesh sharding of a nested or long tuple: write the tile strings",
                v->name ? v->name : "value");
        return NULL;
    }
    for (; *p; p++) {
        if (*p == '{' && ++depth == 2) start = p;
        if (*p == '}' && depth-- == 2) {
            if (n == v->n_tuple) break;
            elems[n] = gs__nt_one(ctx, m, start, (size_t)(p - start + 1), v->tuple[n].rank, &o);
            if (!elems[n]) return NULL;
            if (o) {
                gs__err(ctx, GS_ERR_SHARDING, "%s: '?' (open dims) only on a Sharding annotation", v->name);
                return NULL;
            }
            n++;
        }
    }
    if (n != v->n_tuple || depth != 0) {
        gs__err(ctx, GS_ERR_SHARDING, "sharding=%s: %d elements for a tuple of %d", text, n, v->n_tuple);
        return NULL;
    }
    return gs_sharding_tuple(ctx, n, elems);
}

/* =========================================================================================================
   Expressions
   ========================================================================================================= */
#define GS__NT_NAME 32

typedef struct gs__nt_array {
    char name[GS__NT_NAME];
    int rank;
    char dims[GS_MAX_RANK][GS__NT_NAME];
    const char *dim_ptrs[GS_MAX_RANK];
    gs__nt_assign as;
    int n_unreduced;                      /* {U_X}: axes the result is not summed over */
    int unreduced[GS_MAX_IOTA_RANK];
    const gs_sharding *sharding;
    int64_t shape[GS_MAX_RANK];
} gs__nt_array;

enum { GS__NT_ARRAY = 1, GS__NT_RESHARD, GS__NT_CONTRACT };

struct gs_notation {
    gs_ctx *ctx;
    const gs_mesh *mesh;
    const char *expr;
    int kind;
    int n_arrays;                         /* 1, 2 (reshard: before and after) or 3 (A, B, C) */
    gs__nt_array arr[3];
    gs_dtype dtype;
    gs_graph *source, *spmd;
};

typedef struct gs__nt_parser {
    gs_ctx *ctx;
    const gs_mesh *m;
    const char *text, *p;
    int *col;
} gs__nt_parser;

GS__FN bool gs__nt_fail(gs__nt_parser *P, const char *at, const char *fmt, const char *arg) {
    char what[240];
    snprintf(what, sizeof what, fmt, arg);
    if (P->col) *P->col = (int)(at - P->text) + 1;
    gs__err(P->ctx, GS_ERR_PARSE, "gs_notation_build: column %d: %s", (int)(at - P->text) + 1, what);
    return false;
}

GS__FN void gs__nt_ws(gs__nt_parser *P) {
    while (*P->p == ' ' || *P->p == '\t') P->p++;
}

/* a name of letters and digits (no '_': it separates a dim from its axes) */
GS__FN bool gs__nt_name(gs__nt_parser *P, char *out, const char *what) {
    const char *w = P->p;
    gs__nt_ws(P);
    w = P->p;
    if (!((*w >= 'a' && *w <= 'z') || (*w >= 'A' && *w <= 'Z'))) return gs__nt_fail(P, w, "expected %s", what);
    while ((*P->p >= 'a' && *P->p <= 'z') || (*P->p >= 'A' && *P->p <= 'Z') || (*P->p >= '0' && *P->p <= '9')) P->p++;
    if (P->p - w >= GS__NT_NAME) return gs__nt_fail(P, w, "%s: a name under 32 characters", what);
    memcpy(out, w, (size_t)(P->p - w));
    out[P->p - w] = 0;
    return true;
}

/* the mesh axis whose name is at P->p: the longest that matches (inside braces: "{XY}" is X then Y) */
GS__FN int gs__nt_axis_at(const gs__nt_parser *P, bool whole_word, size_t *len) {
    int a, best = -1;
    size_t bl = 0, n;
    for (a = 0; a < P->m->n_axes; a++) {
        n = strlen(P->m->names[a]);
        if (strncmp(P->p, P->m->names[a], n) != 0 || n <= bl) continue;
        if (whole_word && gs__nt_word_char((unsigned char)P->p[n])) continue;
        best = a;
        bl = n;
    }
    *len = bl;
    return best;
}

/* after '_': one axis "X", or several "{XY}" / "{X,Y}" (major first) */
GS__FN bool gs__nt_axes(gs__nt_parser *P, int *n_out, int *axes, uint32_t *used) {
    size_t len;
    int a;
    *n_out = 0;
    if (*P->p != '{') {
        const char *w = P->p;
        a = gs__nt_axis_at(P, true, &len);
        if (a < 0) {
            while (gs__nt_word_char((unsigned char)*P->p)) P->p++;
            P->p = w;
            return gs__nt_fail(P, w, "expected a mesh axis after '_' (%s; several go in braces: I_{XY})",
                               gs_mesh_to_text(P->ctx, P->m) ? gs_mesh_to_text(P->ctx, P->m) : "");
        }
        if (*used & (1u << a)) return gs__nt_fail(P, w, "mesh axis %s splits two dims of one array", P->m->names[a]);
        *used |= 1u << a;
        axes[(*n_out)++] = a;
        P->p += len;
        return true;
    }
    P->p++;
    for (;;) {
        const char *w;
        gs__nt_ws(P);
        w = P->p;
        if (*P->p == '}' && *n_out > 0) { P->p++; return true; }
        if (*P->p == ',' && *n_out > 0) { P->p++; continue; }
        a = gs__nt_axis_at(P, false, &len);
        if (a < 0) return gs__nt_fail(P, w, "expected a mesh axis or '}' (the mesh is %s)", gs_mesh_to_text(P->ctx, P->m));
        if (*used & (1u << a)) return gs__nt_fail(P, w, "mesh axis %s is used twice in one array", P->m->names[a]);
        *used |= 1u << a;
        axes[(*n_out)++] = a;
        P->p += len;
    }
}

/* NAME[D1_X, D2, ...] with an optional {U_X} */
GS__FN bool gs__nt_array_parse(gs__nt_parser *P, gs__nt_array *A) {
    uint32_t used = 0;
    int d;
    memset(A, 0, sizeof *A);
    if (!gs__nt_name(P, A->name, "an array name (A[I_X, J])")) return false;
    gs__nt_ws(P);
    if (*P->p != '[') return gs__nt_fail(P, P->p, "expected '[' after the array name %s", A->name);
    P->p++;
    for (;;) {
        const char *at;
        gs__nt_ws(P);
        at = P->p;
        if (A->rank == GS_MAX_RANK) return gs__nt_fail(P, at, "more dims than %s allows", "GS_MAX_RANK");
        if (!gs__nt_name(P, A->dims[A->rank], "a dim name (I, J, K, ...)")) return false;
        for (d = 0; d < A->rank; d++)
            if (strcmp(A->dims[d], A->dims[A->rank]) == 0) return gs__nt_fail(P, at, "dim %s appears twice in one array", A->dims[d]);
        if (*P->p == '_') {
            P->p++;
            if (!gs__nt_axes(P, &A->as.n_of[A->rank], A->as.axes[A->rank], &used)) return false;
        }
        A->dim_ptrs[A->rank] = A->dims[A->rank];
        A->rank++;
        gs__nt_ws(P);
        if (*P->p == ',') { P->p++; continue; }
        if (*P->p == ']') { P->p++; break; }
        return gs__nt_fail(P, P->p, "expected ',' or ']'%s", "");
    }
    A->as.rank = A->rank;
    gs__nt_ws(P);
    if (*P->p == '{') {   /* {U_X}: unreduced over X */
        const char *at = P->p;
        uint32_t uused = 0;
        P->p++;
        gs__nt_ws(P);
        if (P->p[0] != 'U' || P->p[1] != '_') return gs__nt_fail(P, P->p, "expected U_ (an unreduced result: {U_X})%s", "");
        P->p += 2;
        if (!gs__nt_axes(P, &A->n_unreduced, A->unreduced, &uused)) return false;
        if (uused & used) return gs__nt_fail(P, at, "an axis both splits a dim and is unreduced%s", "");
        gs__nt_ws(P);
        if (*P->p != '}') return gs__nt_fail(P, P->p, "expected '}'%s", "");
        P->p++;
    }
    return true;
}

/* the whole expression: ARRAY, ARRAY -> ARRAY, or ARRAY * ARRAY -> ARRAY */
GS__FN bool gs__nt_parse(gs__nt_parser *P, gs_notation *N) {
    const char *second = NULL, *result;
    if (!gs__nt_array_parse(P, &N->arr[0])) return false;
    N->n_arrays = 1;
    N->kind = GS__NT_ARRAY;
    gs__nt_ws(P);
    if (*P->p == '*') {
        P->p++;
        gs__nt_ws(P);
        second = P->p;
        if (!gs__nt_array_parse(P, &N->arr[1])) return false;
        N->n_arrays = 2;
        gs__nt_ws(P);
        if (P->p[0] != '-' || P->p[1] != '>') return gs__nt_fail(P, P->p, "expected '->' and the result C[...]%s", "");
    }
    if (P->p[0] == '-' && P->p[1] == '>') {
        P->p += 2;
        gs__nt_ws(P);
        result = P->p;
        if (!gs__nt_array_parse(P, &N->arr[N->n_arrays])) return false;
        N->n_arrays++;
        N->kind = second ? GS__NT_CONTRACT : GS__NT_RESHARD;
        if (N->kind == GS__NT_RESHARD) {
            const gs__nt_array *a = &N->arr[0], *b = &N->arr[1];
            int d;
            if (strcmp(a->name, b->name) != 0) {
                char msg[200];
                snprintf(msg, sizeof msg, "a reshard names one array on both sides (%s[..] -> %s[..]); a contraction "
                         "is A[..] * B[..] -> C[..]", a->name, a->name);
                return gs__nt_fail(P, result, "%s", msg);
            }
            if (a->rank != b->rank) return gs__nt_fail(P, result, "%s has another rank on the right", a->name);
            for (d = 0; d < a->rank; d++)
                if (strcmp(a->dims[d], b->dims[d]) != 0)
                    return gs__nt_fail(P, result, "a reshard keeps the dims in order (dim %s differs)", a->dims[d]);
        }
    } else if (N->arr[0].n_unreduced) {
        return gs__nt_fail(P, P->text, "{U_..} marks a result (after '->')%s", "");
    }
    if (N->kind != GS__NT_CONTRACT) {
        int i;
        for (i = 0; i < N->n_arrays; i++)
            if (N->arr[i].n_unreduced) return gs__nt_fail(P, P->text, "only a contraction's result can be unreduced%s", "");
    } else if (N->arr[0].n_unreduced || N->arr[1].n_unreduced) {
        return gs__nt_fail(P, second, "only the result can be unreduced%s", "");
    }
    gs__nt_ws(P);
    if (*P->p) return gs__nt_fail(P, P->p, "unexpected text after the expression%s", "");
    return true;
}

/* dim sizes: desc's list, else 1024; each listed name must name a dim of the expression */
GS__FN gs_result gs__nt_sizes(gs_notation *N, const gs_notation_desc *desc) {
    int i, k, d;
    for (i = 0; i < desc->n_sizes; i++) {
        bool found = false;
        if (!desc->size_names || !desc->sizes || !desc->size_names[i])
            return gs__err(N->ctx, GS_ERR_INVALID_ARG, "gs_notation_build: size %d has no name or value", i);
        if (desc->sizes[i] < 1)
            return gs__err(N->ctx, GS_ERR_INVALID_ARG, "gs_notation_build: dim %s has size %lld (>= 1 needed)",
                           desc->size_names[i], (long long)desc->sizes[i]);
        for (k = 0; k < N->n_arrays; k++)
            for (d = 0; d < N->arr[k].rank; d++)
                if (strcmp(N->arr[k].dims[d], desc->size_names[i]) == 0) found = true;
        if (!found)
            return gs__err(N->ctx, GS_ERR_INVALID_ARG, "gs_notation_build: a size is given for %s, which no array has",
                           desc->size_names[i]);
    }
    for (k = 0; k < N->n_arrays; k++)
        for (d = 0; d < N->arr[k].rank; d++) {
            N->arr[k].shape[d] = 1024;
            for (i = 0; i < desc->n_sizes; i++)
                if (strcmp(N->arr[k].dims[d], desc->size_names[i]) == 0) N->arr[k].shape[d] = desc->sizes[i];
        }
    return GS_OK;
}

/* the position of dim `name` in array A, or -1 */
GS__FN int gs__nt_dim(const gs__nt_array *A, const char *name) {
    int d;
    for (d = 0; d < A->rank; d++)
        if (strcmp(A->dims[d], name) == 0) return d;
    return -1;
}

GS__FN bool gs__nt_same_axes(const gs__nt_assign *a, int da, const gs__nt_assign *b, int db) {
    return a->n_of[da] == b->n_of[db] && memcmp(a->axes[da], b->axes[db], sizeof(int) * (size_t)a->n_of[da]) == 0;
}

/* a parameter for array A with its sharding; with split >= 0, dim `split` reshaped into [u, S/u] with u's axes
   on the new dim (an unreduced contraction's operand) */
GS__FN gs_value *gs__nt_param(gs_notation *N, gs_graph *g, int index, gs__nt_array *A, int split, int64_t u) {
    gs_value *x = gs_parameter(g, index, gs_shape_make(N->dtype, A->rank, A->shape), A->name);
    gs__nt_assign as = A->as;
    int64_t dims[GS_MAX_RANK];
    int d;
    if (!x || gs_value_set_sharding(x, A->sharding) != GS_OK) return NULL;
    if (split < 0) return x;
    if (A->rank == GS_MAX_RANK) {
        gs__err(N->ctx, GS_ERR_UNSUPPORTED, "gs_notation_build: %s has %d dims: no room for the unreduced dim", A->name,
                A->rank);
        return NULL;
    }
    for (d = 0; d <= A->rank; d++) {
        int from = d <= split ? d : d - 1;
        dims[d] = d == split ? u : d == split + 1 ? A->shape[split] / u : A->shape[from];
        as.n_of[d] = d == split ? A->as.n_of[split] : d == split + 1 ? 0 : A->as.n_of[from];
        memcpy(as.axes[d], A->as.axes[d == split ? split : from], sizeof as.axes[d]);
    }
    x = gs_reshape(g, x, A->rank + 1, dims);
    return gs_annotate_sharding(g, x, gs__mesh_build(N->ctx, N->mesh, A->rank + 1, as.n_of, as.axes, "gs_notation_build"));
}

/* the contracted dim whose split the unreduced axes keep, or -1 with the error set */
GS__FN int gs__nt_unreduced_dim(gs_notation *N, const gs__nt_array *A, const gs__nt_array *B, const gs__nt_array *C) {
    int d, found = -1;
    for (d = 0; d < A->rank; d++) {
        int db = gs__nt_dim(B, A->dims[d]);
        if (db < 0 || gs__nt_dim(C, A->dims[d]) >= 0 || A->as.n_of[d] == 0) continue;
        if (found >= 0 || !gs__nt_same_axes(&A->as, d, &B->as, db) || A->as.n_of[d] != C->n_unreduced ||
            memcmp(A->as.axes[d], C->unreduced, sizeof(int) * (size_t)C->n_unreduced) != 0) {
            gs__err(N->ctx, GS_ERR_UNSUPPORTED, "gs_notation_build: {U_..} is built when exactly one contracted dim is "
                    "split, the same way in both operands, over exactly the unreduced axes");
            return -1;
        }
        found = d;
    }
    if (found < 0) {
        gs__err(N->ctx, GS_ERR_UNSUPPORTED, "gs_notation_build: %s is unreduced, but no contracted dim is split over "
                "those axes", C->name);
        return -1;
    }
    return found;
}

/* A * B -> C: checks the dims, builds dot (and a transpose into C's order), sets C's sharding */
GS__FN gs_value *gs__nt_contract(gs_notation *N, gs_graph *g) {
    gs__nt_array *A = &N->arr[0], *B = &N->arr[1], *C = &N->arr[2];
    gs_dot_dims dd;
    const char *natural[GS_MAX_RANK + 1];
    int64_t perm[GS_MAX_RANK + 1], u = 1;
    int d, k, n = 0, ua = -1, ub = -1, shift;
    gs_value *a, *b, *y;
    bool ident = true;
    memset(&dd, 0, sizeof dd);
    for (d = 0; d < C->rank; d++)
        if (gs__nt_dim(A, C->dims[d]) < 0 && gs__nt_dim(B, C->dims[d]) < 0) {
            gs__err(N->ctx, GS_ERR_SHAPE, "gs_notation_build: %s's dim %s is in neither %s nor %s", C->name, C->dims[d],
                    A->name, B->name);
            return NULL;
        }
    for (k = 0; k < 2; k++) {
        const gs__nt_array *X = k ? B : A, *Y = k ? A : B;
        for (d = 0; d < X->rank; d++)
            if (gs__nt_dim(Y, X->dims[d]) < 0 && gs__nt_dim(C, X->dims[d]) < 0) {
                gs__err(N->ctx, GS_ERR_SHAPE, "gs_notation_build: %s's dim %s is in neither %s nor %s: summing one "
                        "operand's dim is not a contraction", X->name, X->dims[d], Y->name, C->name);
                return NULL;
            }
    }
    if (C->n_unreduced) {
        if ((ua = gs__nt_unreduced_dim(N, A, B, C)) < 0) return NULL;
        ub = gs__nt_dim(B, A->dims[ua]);
        for (k = 0; k < C->n_unreduced; k++) u *= N->mesh->sizes[C->unreduced[k]];
        if (A->shape[ua] % u != 0) {
            gs__err(N->ctx, GS_ERR_UNSUPPORTED, "gs_notation_build: unreduced over %lld devices needs %s (%lld) to be a "
                    "multiple of it", (long long)u, A->dims[ua], (long long)A->shape[ua]);
            return NULL;
        }
        dd.lhs_batch[0] = ua;
        dd.rhs_batch[0] = ub;
        dd.n_batch = 1;
        natural[n++] = "U";
    }
    a = gs__nt_param(N, g, 0, A, ua, u);
    b = gs__nt_param(N, g, 1, B, ub, u);
    /* with an unreduced split, dims after it in each operand move one place right */
    for (d = 0; d < A->rank; d++) {
        int db = gs__nt_dim(B, A->dims[d]), sa = ua >= 0 && d >= ua ? 1 : 0, sb = ub >= 0 && db >= ub ? 1 : 0;
        if (db < 0) continue;
        if (gs__nt_dim(C, A->dims[d]) >= 0) {
            dd.lhs_batch[dd.n_batch] = d + sa;
            dd.rhs_batch[dd.n_batch++] = db + sb;
            natural[n++] = A->dims[d];
        } else {
            dd.lhs_contract[dd.n_contract] = d + sa;
            dd.rhs_contract[dd.n_contract++] = db + sb;
        }
    }
    for (k = 0; k < 2; k++) {
        const gs__nt_array *X = k ? B : A, *Y = k ? A : B;
        for (d = 0; d < X->rank; d++)
            if (gs__nt_dim(Y, X->dims[d]) < 0) natural[n++] = X->dims[d];
    }
    y = gs_dot(g, a, b, &dd);
    shift = C->n_unreduced ? 1 : 0;
    perm[0] = 0;
    for (d = 0; d < C->rank; d++) {
        for (k = shift; k < n; k++)
            if (strcmp(natural[k], C->dims[d]) == 0) perm[d + shift] = k;
        if (perm[d + shift] != d + shift) ident = false;
    }
    if (!ident) y = gs_transpose(g, y, perm);
    if (y && gs_value_set_sharding(y, C->sharding) != GS_OK) return NULL;
    return y;
}

/* each array's sharding over the mesh (a result unreduced over axes U gets a leading dim U split over them) */
GS__FN gs_result gs__nt_shardings(gs_notation *N) {
    int k;
    for (k = 0; k < N->n_arrays; k++) {
        gs__nt_array *A = &N->arr[k];
        if (A->n_unreduced) {
            gs__nt_assign as;
            memset(&as, 0, sizeof as);
            as.n_of[0] = A->n_unreduced;
            memcpy(as.axes[0], A->unreduced, sizeof(int) * (size_t)A->n_unreduced);
            if (A->rank == GS_MAX_RANK)
                return gs__err(N->ctx, GS_ERR_UNSUPPORTED, "gs_notation_build: no room for %s's unreduced dim", A->name);
            memcpy(as.n_of + 1, A->as.n_of, sizeof(int) * (size_t)A->rank);
            memcpy(as.axes + 1, A->as.axes, sizeof(as.axes[0]) * (size_t)A->rank);
            A->sharding = gs__mesh_build(N->ctx, N->mesh, A->rank + 1, as.n_of, as.axes, "gs_notation_build");
        } else {
            A->sharding = gs__mesh_build(N->ctx, N->mesh, A->rank, A->as.n_of, A->as.axes, "gs_notation_build");
        }
        if (!A->sharding) return N->ctx->err;
    }
    return GS_OK;
}

GS__FN gs_result gs__nt_program(gs_notation *N) {
    gs_graph *g = gs_graph_new(N->ctx, "notation");
    gs_value *y = NULL;
    gs_partition_desc pd;
    gs_result r;
    if (!g || gs_graph_set_num_partitions(g, N->mesh->total) != GS_OK) return N->ctx->err;
    if (N->kind == GS__NT_CONTRACT) {
        y = gs__nt_contract(N, g);
    } else {
        y = gs__nt_param(N, g, 0, &N->arr[0], -1, 1);
        if (N->kind == GS__NT_RESHARD) y = gs_annotate_sharding(g, y, N->arr[1].sharding);
        else y = gs_copy(g, y);   /* the parameter's shard, returned */
        if (y && gs_value_set_sharding(y, N->arr[N->n_arrays - 1].sharding) != GS_OK) return N->ctx->err;
    }
    if (!y || gs_graph_set_root(g, y) != GS_OK) return N->ctx->err ? N->ctx->err : GS_ERR_INVALID_ARG;
    N->source = g;
    memset(&pd, 0, sizeof pd);
    pd.num_devices = N->mesh->total;
    pd.windowed_einsum_bytes = -1;   /* the book's cases: one collective, not a loop of permutes */
    r = gs_partition(g, &pd, &N->spmd);
    return r;
}

GS_API gs_result gs_notation_build(gs_ctx *ctx, const char *expr, const gs_notation_desc *desc, gs_notation **out,
                                   int *error_column) {
    gs_notation *N;
    gs__nt_parser P;
    gs_result r;
    if (error_column) *error_column = 0;
    if (out) *out = NULL;
    if (!ctx) return GS_ERR_INVALID_ARG;
    if (ctx->err) return ctx->err;
    if (!expr || !desc || !desc->mesh || !out || desc->n_sizes < 0)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_notation_build: an expression, a desc with a mesh and out are needed");
    if (!(N = (gs_notation *)gs__arena_alloc(ctx, sizeof *N))) return ctx->err;
    N->ctx = ctx;
    N->mesh = desc->mesh;
    N->dtype = desc->dtype ? desc->dtype : GS_BF16;
    if (!gs__is_array_dtype(N->dtype) || N->dtype == GS_TOKEN)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_notation_build: %s is not an array element type", gs_dtype_name(N->dtype));
    if (!(N->expr = gs__arena_strdup(ctx, expr))) return ctx->err;
    memset(&P, 0, sizeof P);
    P.ctx = ctx;
    P.m = desc->mesh;
    P.text = P.p = expr;
    P.col = error_column;
    if (!gs__nt_parse(&P, N)) return ctx->err;
    if ((r = gs__nt_sizes(N, desc)) != GS_OK || (r = gs__nt_shardings(N)) != GS_OK || (r = gs__nt_program(N)) != GS_OK)
        return r;
    *out = N;
    return GS_OK;
}

GS_API gs_graph *gs_notation_source(const gs_notation *n) { return n ? n->source : NULL; }
GS_API gs_graph *gs_notation_spmd(const gs_notation *n) { return n ? n->spmd : NULL; }

/* =========================================================================================================
   Collectives in the book's words
   ========================================================================================================= */
/* the array a collective moves: up its first operands to a parameter (A, B) or the dot (the result) */
GS__FN const char *gs__nt_moved(const gs_notation *N, const gs_value *v) {
    const gs_value *x = v->n_operands > 0 ? v->operands[0] : NULL;
    while (x) {
        if (x->op == GS_OP_PARAMETER) return x->index >= 0 && x->index < 2 ? N->arr[x->index].name : x->name;
        if (x->op == GS_OP_DOT) return N->arr[N->n_arrays - 1].name;
        x = x->n_operands > 0 ? x->operands[0] : NULL;
    }
    return v->name;
}

/* the mesh axes along which the devices of ids[0..n) differ, as "X" or "XY" (or "data,model") */
GS__FN const char *gs__nt_group_axes(const gs_notation *N, int64_t n, const int64_t *ids) {
    const gs_mesh *m = N->mesh;
    int64_t c0[GS_MAX_IOTA_RANK], c[GS_MAX_IOTA_RANK], i;
    int a, axes[GS_MAX_IOTA_RANK], na = 0;
    bool varies[GS_MAX_IOTA_RANK];
    gs__sb sb;
    memset(varies, 0, sizeof varies);
    for (i = 0; i < n; i++) {
        int64_t pos = gs__ta_pos(&m->ta, ids[i]);
        if (pos < 0) continue;
        gs__unravel(m->n_axes, m->sizes, pos, i == 0 ? c0 : c);
        for (a = 0; i > 0 && a < m->n_axes; a++)
            if (c[a] != c0[a]) varies[a] = true;
    }
    for (a = 0; a < m->n_axes; a++)
        if (varies[a]) axes[na++] = a;
    gs__sb_init(&sb, N->ctx);
    if (na == 0) gs__sb_puts(&sb, "one device");
    else if (na == 1) gs__sb_puts(&sb, m->names[axes[0]]);
    else gs__nt_put_axes(&sb, m, na, axes, true);
    return gs__sb_finish(&sb, "gs_notation_comms");
}

GS__FN gs_result gs__nt_comm_row(gs_notation *N, const gs_cost_row *row, gs_notation_comm *c) {
    const gs_value *v = row->value;
    double in = (double)gs_shape_bytes(&v->operands[0]->shape), out = (double)gs_shape_bytes(&v->shape);
    memset(c, 0, sizeof *c);
    c->value = v;
    c->seconds = row->t_ici;
    c->array = gs__nt_moved(N, v);
    if (v->op == GS_OP_COLLECTIVE_PERMUTE) {
        int64_t ids[2];
        c->kind = GS_COLLECTIVE_PERMUTE;
        c->bytes = in;
        ids[0] = v->n_pairs > 0 ? v->pairs[0] : 0;
        ids[1] = v->n_pairs > 0 ? v->pairs[1] : 0;
        c->axes = gs__nt_group_axes(N, 2, ids);
    } else {
        int64_t ng = 0, gsz = 0;
        const int64_t *ids = NULL;
        gs_result r = gs__groups_expand(N->ctx, &v->coll.groups, N->mesh->total, &ng, &gsz, &ids);
        if (r != GS_OK) return r;
        c->axes = gs__nt_group_axes(N, gsz, ids);
        gs__free(N->ctx, (void *)ids);
        switch (v->op) {
        case GS_OP_ALL_GATHER: c->kind = GS_COLLECTIVE_ALL_GATHER; c->bytes = out; break;
        case GS_OP_REDUCE_SCATTER: c->kind = GS_COLLECTIVE_REDUCE_SCATTER; c->bytes = in; break;
        case GS_OP_ALL_REDUCE: c->kind = GS_COLLECTIVE_ALL_REDUCE; c->bytes = in; break;
        case GS_OP_RAGGED_ALL_TO_ALL: c->kind = GS_COLLECTIVE_ALL_TO_ALL; c->bytes = (double)gsz * out; break;   /* bound */
        default: c->kind = GS_COLLECTIVE_ALL_TO_ALL; c->bytes = (double)gsz * in; break;
        }
    }
    return c->axes ? GS_OK : N->ctx->err;
}

GS_API gs_result gs_notation_comms(gs_notation *n, const gs_topology *t, gs_notation_comm **rows, int *n_rows) {
    gs_cost_report *rep = NULL;
    gs_result r;
    int i, k = 0, nr;
    if (!n || !t || !rows || !n_rows) return n ? gs__err(n->ctx, GS_ERR_INVALID_ARG, "gs_notation_comms: bad arguments")
                                               : GS_ERR_INVALID_ARG;
    *rows = NULL;
    *n_rows = 0;
    if ((r = gs_cost_program(n->spmd, t, &rep)) != GS_OK) return r;
    nr = gs_cost_report_num_rows(rep);
    if (!(*rows = (gs_notation_comm *)gs__arena_alloc(n->ctx, sizeof(gs_notation_comm) * (size_t)(nr + 1)))) return n->ctx->err;
    for (i = 0; i < nr; i++) {
        const gs_cost_row *row = gs_cost_report_row(rep, i);
        if (!gs__cm_is_collective(row->value->op)) continue;
        if ((r = gs__nt_comm_row(n, row, &(*rows)[k])) != GS_OK) return r;
        k++;
    }
    *n_rows = k;
    return GS_OK;
}

/* "2 MiB", "512 KiB", "96 B" */
GS__FN void gs__nt_put_bytes(gs__sb *sb, double b) {
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (b >= 1024.0 && u < 4) {
        b /= 1024.0;
        u++;
    }
    gs__sb_printf(sb, "%.3g %s", b, unit[u]);
}

/* "46.6 µs", "1.2 ms", "3.4 s" */
GS__FN void gs__nt_put_time(gs__sb *sb, double s) {
    if (s < 1e-3) gs__sb_printf(sb, "%.3g \xC2\xB5s", s * 1e6);
    else if (s < 1.0) gs__sb_printf(sb, "%.3g ms", s * 1e3);
    else gs__sb_printf(sb, "%.3g s", s);
}

static const char *const gs__nt_kind_words[] = {"?", "AllGather", "ReduceScatter", "AllReduce", "AllToAll",
                                                "CollectivePermute"};

/* the `//` lines: the expression and sizes, each array per device */
GS__FN void gs__nt_put_arrays(gs__sb *sb, gs_notation *N) {
    int k, d, j;
    gs__sb_printf(sb, "// %s\n// mesh %s (%lld devices), %s", N->expr, gs_mesh_to_text(N->ctx, N->mesh),
                  (long long)N->mesh->total, gs_dtype_name(N->dtype));
    for (k = 0; k < N->n_arrays; k++)   /* each dim name once, in order of first appearance */
        for (d = 0; d < N->arr[k].rank; d++) {
            bool seen = false;
            for (j = 0; j < k && !seen; j++) seen = gs__nt_dim(&N->arr[j], N->arr[k].dims[d]) >= 0;
            for (j = 0; j < d && !seen; j++) seen = strcmp(N->arr[k].dims[j], N->arr[k].dims[d]) == 0;
            if (!seen) gs__sb_printf(sb, ", %s=%lld", N->arr[k].dims[d], (long long)N->arr[k].shape[d]);
        }
    gs__sb_puts(sb, "\n// per device:");
    for (k = 0; k < N->n_arrays; k++) {
        const gs__nt_array *A = &N->arr[k];
        gs_shape full = gs_shape_make(N->dtype, A->rank, A->shape), shard;
        char buf[96];
        if (A->n_unreduced) {
            full.rank = A->rank + 1;
            full.dims[0] = gs_sharding_tiles(A->sharding, 0);
            for (d = 0; d < A->rank; d++) full.dims[d + 1] = A->shape[d];
        }
        if (gs_sharding_shard_shape(N->ctx, A->sharding, full, &shard) != GS_OK) return;
        gs__shape_str(&shard, buf, sizeof buf);
        gs__sb_printf(sb, "%s %s%s %s", k ? "," : "", N->kind == GS__NT_RESHARD ? (k ? "after" : "before") : "",
                      N->kind == GS__NT_RESHARD ? "" : A->name, buf);
        if (A->n_unreduced) gs__sb_puts(sb, " (its partial sum: dim 0 is U)");
    }
    gs__sb_puts(sb, "\n");
}

/* the time of everything but the collectives (the local dot, copies, slices), one after another */
GS__FN gs_result gs__nt_put_local(gs__sb *sb, gs_notation *n, const gs_topology *t, const char *chip) {
    gs_cost_report *rep = NULL;
    double secs = 0.0, t_math = 0.0, t_hbm = 0.0;
    int i;
    gs_result r = gs_cost_program(n->spmd, t, &rep);
    if (r != GS_OK) return r;
    for (i = 0; i < gs_cost_report_num_rows(rep); i++) {
        const gs_cost_row *row = gs_cost_report_row(rep, i);
        if (row->parent >= 0 || gs__cm_is_collective(row->value->op)) continue;
        secs += row->seconds;
        t_math += row->t_math;
        t_hbm += row->t_hbm;
    }
    if (secs <= 0.0) {
        gs__sb_puts(sb, "// local work: none\n");
        return GS_OK;
    }
    gs__sb_puts(sb, "// local work (every other instruction): ");
    gs__nt_put_time(sb, secs);
    gs__sb_printf(sb, " on %s, %s\n", chip, t_math >= t_hbm ? "compute-bound" : "HBM-bound");
    return GS_OK;
}

GS_API const char *gs_notation_report(gs_notation *n, const gs_topology *t) {
    gs_notation_comm *rows = NULL;
    int n_rows = 0, i, k;
    const char *prog;
    const char *chip;
    double secs = 0.0, bytes = 0.0;
    int64_t dims[GS_COST_MAX_AXES];
    bool wrap[GS_COST_MAX_AXES];
    int tr;
    gs__sb sb;
    if (!n || !t) return NULL;
    if (gs_notation_comms(n, t, &rows, &n_rows) != GS_OK || !(prog = gs_partition_print(n->spmd, false))) return NULL;
    chip = gs_topology_chip(t)->name;
    gs__sb_init(&sb, n->ctx);
    gs__sb_puts(&sb, prog);
    gs__nt_put_arrays(&sb, n);
    if (n_rows == 0) gs__sb_puts(&sb, "// no collective: every device computes its own shard\n");
    if (gs__nt_put_local(&sb, n, t, chip) != GS_OK) {
        gs__sb_free(&sb);
        return NULL;
    }
    for (i = 0; i < n_rows; i++) {
        const gs_notation_comm *c = &rows[i];
        gs__sb_printf(&sb, "// %s %s over %s: ", gs__nt_kind_words[c->kind], c->array, c->axes);
        gs__nt_put_bytes(&sb, c->bytes);
        gs__sb_puts(&sb, ", ");
        gs__nt_put_time(&sb, c->seconds);
        gs__sb_printf(&sb, " on %s\n", chip);
        secs += c->seconds;
        bytes += c->bytes;
    }
    tr = gs_topology_torus(t, dims, wrap);
    gs__sb_printf(&sb, "// total: %d collective%s, ", n_rows, n_rows == 1 ? "" : "s");
    gs__nt_put_bytes(&sb, bytes);
    gs__sb_puts(&sb, ", ");
    gs__nt_put_time(&sb, secs);
    gs__sb_printf(&sb, " on %s (torus ", chip);
    for (i = 0, k = 0; i < tr; i++) {
        gs__sb_printf(&sb, "%s%lld", i ? "x" : "", (long long)dims[i]);
        k += wrap[i];
    }
    if (k == 0 || k == tr) {
        gs__sb_puts(&sb, k ? ", wraparound on every axis" : ", no wraparound");
    } else {
        gs__sb_puts(&sb, ", wraparound on axis");
        for (i = 0; i < tr; i++)
            if (wrap[i]) gs__sb_printf(&sb, " %d", i);
    }
    gs__sb_puts(&sb, ")\n");
    return gs__sb_finish(&sb, "gs_notation_report");
}
