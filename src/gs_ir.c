/* gs_ir.c - shapes, graphs, builders with shape inference, the verifier, einsum */
#include "gs_internal.h"

/* ---------------------------------------------------------------------------------------------------------
   op tables
   ------------------------------------------------------------------------------------------------------- */
static const char *const gs__op_names[] = {
    "invalid",
#define GS__X_NAME(e, s, n) s,
    GS_OP_LIST(GS__X_NAME)
#undef GS__X_NAME
};
static const int gs__op_arity[] = {
    0,
#define GS__X_ARITY(e, s, n) n,
    GS_OP_LIST(GS__X_ARITY)
#undef GS__X_ARITY
};
typedef char gs__op_table_check[(sizeof(gs__op_names) / sizeof(gs__op_names[0]) == GS_OP_COUNT) ? 1 : -1];
typedef char gs__op_arity_check[(sizeof(gs__op_arity) / sizeof(gs__op_arity[0]) == GS_OP_COUNT) ? 1 : -1];

GS_API const char *gs_op_name(gs_op op) {
    if ((int)op <= 0 || (int)op >= GS_OP_COUNT) return "invalid";
    return gs__op_names[op];
}
GS_API int gs_op_arity(gs_op op) {
    if ((int)op <= 0 || (int)op >= GS_OP_COUNT) return 0;
    return gs__op_arity[op];
}

/* the name used in messages and generated value names: custom-calls get a distinct word */
GS__FN const char *gs__op_word(gs_op op) {
    switch (op) {
    case GS_OP_ANNOTATE: return "sharding";
    case GS_OP_TO_MANUAL: return "to-manual";
    case GS_OP_TO_FULL: return "to-full";
    default: return gs_op_name(op);
    }
}

/* ---------------------------------------------------------------------------------------------------------
   shapes
   ------------------------------------------------------------------------------------------------------- */
GS_API gs_shape gs_shape_make(gs_dtype dtype, int rank, const int64_t *dims) {
    gs_shape s;
    int i;
    GS__ZERO(s);
    s.dtype = dtype;
    s.rank = rank;
    if (rank < 0 || rank > GS_MAX_RANK) {
        s.rank = -1; /* invalid: every builder rejects it */
        return s;
    }
    for (i = 0; i < rank; i++) s.dims[i] = dims ? dims[i] : 0;
    return s;
}

GS_API gs_shape gs_shape_scalar(gs_dtype dtype) { return gs_shape_make(dtype, 0, NULL); }

GS__FN int64_t gs__numel(const gs_shape *s) {
    int64_t n = 1;
    int i;
    for (i = 0; i < s->rank; i++) n *= s->dims[i];
    return n;
}
/* Any shape may come here (the IR's own are checked to hold at most 2^50 elements): checked arithmetic. */
GS_API int64_t gs_shape_numel(const gs_shape *s) {
    if (!s) return 0;
    if (s->rank < 0 || s->rank > GS_MAX_RANK) return -1;
    return gs__prod64(s->rank, s->dims);
}
GS_API size_t gs_shape_bytes(const gs_shape *s) {
    int64_t n = gs_shape_numel(s), b;
    if (!s || n < 0 || !gs__mul64(n, (int64_t)gs_dtype_size(s->dtype), &b) || (uint64_t)b > (uint64_t)SIZE_MAX) return 0;
    return (size_t)b;
}

GS_API bool gs_shape_equal(const gs_shape *a, const gs_shape *b) {
    int i;
    if (a->dtype != b->dtype || a->rank != b->rank) return false;
    for (i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return false;
    return true;
}

GS__FN void gs__strides(const gs_shape *s, int64_t *strides) {
    int64_t st = 1;
    int i;
    for (i = s->rank - 1; i >= 0; i--) {
        strides[i] = st;
        st *= s->dims[i];
    }
}


/* "f32[4,8]" into buf */
GS__FN const char *gs__shape_str(const gs_shape *s, char *buf, size_t cap) {
    size_t n;
    int i;
    n = (size_t)snprintf(buf, cap, "%s[", gs_dtype_name(s->dtype));
    for (i = 0; i < s->rank && n < cap; i++) n += (size_t)snprintf(buf + n, cap - n, i ? ",%lld" : "%lld", (long long)s->dims[i]);
    if (n < cap) snprintf(buf + n, cap - n, "]");
    return buf;
}

/* Checks a user-given array shape: valid dtype, rank, non-negative dims, no numel overflow. */
GS__FN gs_result gs__check_shape(gs_ctx *ctx, const char *who, const gs_shape *s) {
    int i;
    int64_t n = 1;
    if (!gs__is_array_dtype(s->dtype)) return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: invalid dtype %d", who, (int)s->dtype);
    if (s->rank < 0 || s->rank > GS_MAX_RANK)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: rank %d is outside [0, %d] (GS_MAX_RANK)", who, s->rank, GS_MAX_RANK);
    if (s->dtype == GS_TOKEN && s->rank != 0)
        return gs__err(ctx, GS_ERR_SHAPE, "%s: a token has no dims (token[]), not rank %d", who, s->rank);
    for (i = 0; i < s->rank; i++) {
        if (s->dims[i] < 0) return gs__err(ctx, GS_ERR_SHAPE, "%s: dim %d is negative (%lld)", who, i, (long long)s->dims[i]);
        if (!gs__mul64(n, s->dims[i], &n) || n > ((int64_t)1 << 50))
            return gs__err(ctx, GS_ERR_SHAPE, "%s: shape has more than 2^50 elements", who);
    }
    return GS_OK;
}

/* ---------------------------------------------------------------------------------------------------------
   graphs
   ------------------------------------------------------------------------------------------------------- */
GS_API gs_graph *gs_graph_new(gs_ctx *ctx, const char *name) {
    gs_graph *g;
    if (!ctx) return NULL;
    if (ctx->err) return NULL;
    g = (gs_graph *)gs__arena_alloc(ctx, sizeof(gs_graph));
    if (!g) return NULL;
    g->ctx = ctx;
    g->name = gs__arena_strdup(ctx, name && name[0] ? name : "main");
    if (!g->name) return NULL;
    g->id = (int)stbds_arrlen(ctx->graphs);
    g->num_partitions = 1;
    stbds_arrput(ctx->graphs, g);
    return g;
}

GS_API gs_ctx *gs_graph_ctx(const gs_graph *g) { return g ? g->ctx : NULL; }
GS_API const char *gs_graph_name(const gs_graph *g) { return g ? g->name : NULL; }
GS_API gs_value *gs_graph_root(const gs_graph *g) { return g ? g->root : NULL; }
GS_API int gs_graph_num_params(const gs_graph *g) { return g ? (int)stbds_arrlen(g->params) : 0; }
GS_API gs_value *gs_graph_param(const gs_graph *g, int i) {
    if (!g || i < 0 || i >= (int)stbds_arrlen(g->params)) return NULL;
    return g->params[i];
}
GS_API int gs_graph_num_values(const gs_graph *g) { return g ? (int)stbds_arrlen(g->values) : 0; }
GS_API gs_value *gs_graph_value(const gs_graph *g, int i) {
    if (!g || i < 0 || i >= (int)stbds_arrlen(g->values)) return NULL;
    return g->values[i];
}

GS_API gs_result gs_graph_set_num_partitions(gs_graph *g, int64_t n) {
    if (!g) return GS_ERR_INVALID_ARG;
    if (n < 1) return gs__err(g->ctx, GS_ERR_INVALID_ARG, "gs_graph_set_num_partitions: %lld is not >= 1", (long long)n);
    g->num_partitions = n;
    return GS_OK;
}
GS_API int64_t gs_graph_num_partitions(const gs_graph *g) { return g ? g->num_partitions : 0; }

GS_API gs_value *gs_graph_find(const gs_graph *g, const char *name) {
    gs_graph *mg = (gs_graph *)g; /* stb_ds lookups write the map variable */
    char *key;
    ptrdiff_t i;
    if (!g || !name || !g->names) return NULL;
    key = (char *)name;
    i = stbds_shgeti(mg->names, key);
    return i < 0 ? NULL : mg->names[i].value;
}

GS_API gs_result gs_graph_set_root(gs_graph *g, gs_value *root) {
    if (!g) return GS_ERR_INVALID_ARG;
    if (g->ctx->err) return g->ctx->err;
    if (!root) return gs__err(g->ctx, GS_ERR_INVALID_ARG, "gs_graph_set_root (%s): root is NULL", g->name);
    if (root->graph != g)
        return gs__err(g->ctx, GS_ERR_INVALID_ARG, "gs_graph_set_root (%s): %s belongs to graph %s", g->name, root->name,
                       root->graph->name);
    g->root = root;
    return GS_OK;
}

GS_API gs_result gs_graph_set_outputs(gs_graph *g, int n, gs_value *const *outs) {
    gs_value *t;
    if (!g) return GS_ERR_INVALID_ARG;
    if (g->ctx->err) return g->ctx->err;
    if (n < 1 || !outs) return gs__err(g->ctx, GS_ERR_INVALID_ARG, "gs_graph_set_outputs (%s): need at least one output", g->name);
    if (n == 1) return gs_graph_set_root(g, outs[0]);
    t = gs_tuple(g, n, outs);
    if (!t) return g->ctx->err;
    return gs_graph_set_root(g, t);
}

GS_API int gs_graph_num_outputs(const gs_graph *g) {
    if (!g || !g->root) return 0;
    return g->root->shape.dtype == GS_TUPLE ? g->root->n_tuple : 1;
}

GS_API gs_shape gs_graph_output_shape(const gs_graph *g, int i) {
    gs_shape s;
    GS__ZERO(s);
    if (!g || !g->root || i < 0 || i >= gs_graph_num_outputs(g)) return s;
    return g->root->shape.dtype == GS_TUPLE ? g->root->tuple[i] : g->root->shape;
}

/* ---------------------------------------------------------------------------------------------------------
   values
   ------------------------------------------------------------------------------------------------------- */
GS_API gs_op gs_value_op(const gs_value *v) { return v ? v->op : GS_OP_INVALID; }
GS_API const char *gs_value_name(const gs_value *v) { return v ? v->name : NULL; }
GS_API int gs_value_num_called(const gs_value *v) { return v ? gs__n_subgraphs(v) : 0; }
GS_API gs_graph *gs_value_called(const gs_value *v, int k) { return v ? gs__subgraph(v, k) : NULL; }
GS_API gs_shape gs_value_shape(const gs_value *v) {
    gs_shape s;
    if (v) return v->shape;
    GS__ZERO(s);
    return s;
}
GS_API int gs_value_num_operands(const gs_value *v) { return v ? v->n_operands : 0; }
GS_API gs_value *gs_value_operand(const gs_value *v, int i) {
    if (!v || i < 0 || i >= v->n_operands) return NULL;
    return v->operands[i];
}
GS_API int gs_value_tuple_size(const gs_value *v) { return v && v->shape.dtype == GS_TUPLE ? v->n_tuple : 0; }
GS_API int gs_value_tuple_arity(const gs_value *v) { return gs__tuple_arity(v); }
GS_API int gs_value_tuple_element_leaves(const gs_value *v, int i, int *first_leaf) {
    int first, n, node;
    if (!v || !gs__tuple_child(v, i, &first, &n, &node)) return 0;
    if (first_leaf) *first_leaf = first;
    return n;
}
GS_API const int *gs_value_tuple_tree(const gs_value *v, int *n) {
    if (n) *n = v ? v->n_tree : 0;
    return v ? v->tree : NULL;
}
GS_API gs_shape gs_value_tuple_shape(const gs_value *v, int i) {
    gs_shape s;
    if (v && v->shape.dtype == GS_TUPLE && i >= 0 && i < v->n_tuple) return v->tuple[i];
    GS__ZERO(s);
    return s;
}
GS_API int gs_value_id(const gs_value *v) { return v ? v->id : -1; }

GS__FN bool gs__valid_name(const char *s) {
    const char *p;
    if (!s || !*s) return false;
    for (p = s; *p; p++) {
        char c = *p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
              c == '-'))
            return false;
    }
    return !(s[0] >= '0' && s[0] <= '9');
}

GS_API gs_result gs_value_set_name(gs_value *v, const char *name) {
    gs_graph *g;
    char *key;
    if (!v) return GS_ERR_INVALID_ARG;
    g = v->graph;
    if (!gs__valid_name(name))
        return gs__err(g->ctx, GS_ERR_INVALID_ARG, "gs_value_set_name: '%s' is not a valid name (letters, digits, '_', '.', '-'; not starting with a digit)",
                       name ? name : "(null)");
    if (v->name && strcmp(v->name, name) == 0) return GS_OK;
    if (gs_graph_find(g, name))
        return gs__err(g->ctx, GS_ERR_INVALID_ARG, "gs_value_set_name: name '%s' is already used in graph %s", name, g->name);
    key = gs__arena_strdup(g->ctx, name);
    if (!key) return GS_ERR_OUT_OF_MEMORY;
    if (v->name) {
        char *old = (char *)v->name;
        (void)stbds_shdel(g->names, old);
    }
    v->name = key;
    v->auto_name = false;
    stbds_shput(g->names, key, v);
    return GS_OK;
}

/* Allocates a value (not yet in the graph). Returns NULL quietly if a previous error is pending or an
   operand is NULL; records an error if an operand belongs to another graph. */
GS__FN gs_value *gs__value_new(gs_graph *g, gs_op op, int n_operands, gs_value *const *operands) {
    gs_ctx *ctx;
    gs_value *v;
    int i;
    if (!g) return NULL;
    ctx = g->ctx;
    if (ctx->err) return NULL;
    if (n_operands < 0) {
        gs__err(ctx, GS_ERR_INVALID_ARG, "gs_%s: negative operand count", gs__op_word(op));
        return NULL;
    }
    if (n_operands > 0 && !operands) {
        gs__err(ctx, GS_ERR_INVALID_ARG, "gs_%s: operand list is NULL", gs__op_word(op));
        return NULL;
    }
    for (i = 0; i < n_operands; i++) {
        if (!operands[i]) return NULL; /* an earlier builder failed */
        if (operands[i]->graph != g) {
            gs__err(ctx, GS_ERR_INVALID_ARG, "gs_%s: operand %d (%s) belongs to graph %s, not %s", gs__op_word(op), i,
                    operands[i]->name, operands[i]->graph->name, g->name);
            return NULL;
        }
    }
    v = (gs_value *)gs__arena_alloc(ctx, sizeof(gs_value));
    if (!v) return NULL;
    v->op = op;
    v->graph = g;
    v->id = -1;
    v->n_operands = n_operands;
    if (n_operands) {
        v->operands = (gs_value **)gs__arena_dup(ctx, operands, sizeof(gs_value *) * (size_t)n_operands);
        if (!v->operands) return NULL;
    }
    if (ctx->next_name) {
        v->name = gs__arena_strdup(ctx, ctx->next_name);
        ctx->next_name = NULL;
        v->auto_name = false;
    } else {
        v->name = gs__arena_printf(ctx, "%s.%lld", gs__op_word(op), (long long)ctx->next_auto_name);
        v->auto_name = true;
    }
    if (!v->name) return NULL;
    return v;
}

GS__FN int64_t *gs__dup_dims(gs_ctx *ctx, const int64_t *d, int n) {
    if (n <= 0) return (int64_t *)gs__arena_alloc(ctx, sizeof(int64_t)); /* non-NULL, unused */
    return (int64_t *)gs__arena_dup(ctx, d, sizeof(int64_t) * (size_t)n);
}

/* ---------------------------------------------------------------------------------------------------------
   shape inference: computes v->shape (and v->tuple) from operands and attributes, or records an error
   ------------------------------------------------------------------------------------------------------- */
#define GS__FAIL(code, ...) return gs__err(ctx, code, __VA_ARGS__)
#define GS__WHO gs__op_word(v->op), v->name

GS__FN gs_result gs__dims_unique(gs_ctx *ctx, const gs_value *v, const char *what, const int64_t *d, int n, int rank) {
    int i, j;
    for (i = 0; i < n; i++) {
        if (d[i] < 0 || d[i] >= rank)
            GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: %s[%d] = %lld is out of range for rank %d", GS__WHO, what, i, (long long)d[i], rank);
        for (j = 0; j < i; j++)
            if (d[j] == d[i]) GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: %s repeats dim %lld", GS__WHO, what, (long long)d[i]);
    }
    return GS_OK;
}

GS__FN gs_result gs__need_array(gs_ctx *ctx, const gs_value *v, int i) {
    if (v->operands[i]->shape.dtype == GS_TUPLE)
        GS__FAIL(GS_ERR_SHAPE, "%s %s: operand %d (%s) is a tuple; an array is needed", GS__WHO, i, v->operands[i]->name);
    return GS_OK;
}

GS__FN gs_result gs__need_scalar(gs_ctx *ctx, const gs_value *v, int i, gs_dtype dt) {
    const gs_shape *s = &v->operands[i]->shape;
    char b[96];
    if (s->dtype == GS_TUPLE || s->rank != 0 || (dt != GS_DTYPE_INVALID && s->dtype != dt))
        GS__FAIL(GS_ERR_SHAPE, "%s %s: operand %d (%s) must be a %s scalar, not %s", GS__WHO, i, v->operands[i]->name,
                 dt ? gs_dtype_name(dt) : "", gs__shape_str(s, b, sizeof b));
    return GS_OK;
}

GS__FN gs_result gs__need_index_scalars(gs_ctx *ctx, const gs_value *v, int first, int n) {
    int i;
    gs_dtype t = GS_DTYPE_INVALID;
    for (i = first; i < first + n; i++) {
        const gs_shape *s = &v->operands[i]->shape;
        if (s->dtype == GS_TUPLE || s->rank != 0 || !gs__is_int(s->dtype))
            GS__FAIL(GS_ERR_SHAPE, "%s %s: start index operand %d (%s) must be an s32 or u32 scalar", GS__WHO, i,
                     v->operands[i]->name);
        if (t && s->dtype != t) GS__FAIL(GS_ERR_SHAPE, "%s %s: start indices mix s32 and u32", GS__WHO);
        t = s->dtype;
    }
    return GS_OK;
}

GS__FN bool gs__reduce_kind_ok(gs_reduce_kind k, gs_dtype t, bool allow_replace) {
    switch (k) {
    case GS_REDUCE_SUM: case GS_REDUCE_PROD: return gs__is_numeric(t) || t == GS_PRED;
    case GS_REDUCE_MAX: case GS_REDUCE_MIN: return (gs__is_numeric(t) && !gs__is_complex(t)) || t == GS_PRED;
    case GS_REDUCE_AND: case GS_REDUCE_OR: return t == GS_PRED || gs__is_int(t);
    case GS_REDUCE_REPLACE: return allow_replace;
    case GS_REDUCE_CUSTOM: return true;   /* its computation is checked by gs_value_set_reducer */
    default: return false;
    }
}

/* Output size of one window dim: floor((dilated_in + lo + hi - dilated_window) / stride) + 1, or 0 when the
   window does not fit (or the window is invalid), or -1 when the arithmetic overflows int64. */
GS__FN int64_t gs__window_out(const gs_window_dim *w, int64_t in) {
    int64_t din = 0, dwin, span;
    if (w->size <= 0 || w->stride <= 0) return 0;
    if ((in > 0 && (!gs__mul64(in - 1, w->base_dilation, &din) || !gs__add64(din, 1, &din))) ||
        !gs__mul64(w->size - 1, w->window_dilation, &dwin) || !gs__add64(dwin, 1, &dwin) ||
        !gs__add64(din, w->pad_lo, &span) || !gs__add64(span, w->pad_hi, &span) || !gs__add64(span, -dwin, &span))
        return -1;
    if (span < 0) return 0;
    return span / w->stride + 1;
}

/* the window output sizes of dims (each from gs__window_out): -1 is an overflow */
GS__FN gs_result gs__check_window_out(gs_ctx *ctx, const gs_value *v, int n, const int64_t *dims) {
    int i;
    for (i = 0; i < n; i++)
        if (dims[i] < 0) GS__FAIL(GS_ERR_SHAPE, "%s %s: the window arithmetic of dim %d overflows int64", GS__WHO, i);
    return GS_OK;
}

GS__FN gs_result gs__check_window(gs_ctx *ctx, const gs_value *v, const gs_window_dim *w, int n) {
    int i;
    for (i = 0; i < n; i++) {
        if (w[i].size < 1 || w[i].stride < 1 || w[i].base_dilation < 1 || w[i].window_dilation < 1)
            GS__FAIL(GS_ERR_INVALID_ARG,
                     "%s %s: window dim %d needs size, stride, base and window dilation >= 1 (got size=%lld stride=%lld lhs_dilate=%lld rhs_dilate=%lld)",
                     GS__WHO, i, (long long)w[i].size, (long long)w[i].stride, (long long)w[i].base_dilation,
                     (long long)w[i].window_dilation);
        if (w[i].pad_lo < -((int64_t)1 << 40) || w[i].pad_hi < -((int64_t)1 << 40) || w[i].pad_lo > ((int64_t)1 << 40) ||
            w[i].pad_hi > ((int64_t)1 << 40) || w[i].size > ((int64_t)1 << 40) || w[i].stride > ((int64_t)1 << 40) ||
            w[i].base_dilation > ((int64_t)1 << 20) || w[i].window_dilation > ((int64_t)1 << 20))
            GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: window dim %d has an absurd value", GS__WHO, i);
    }
    return GS_OK;
}

GS__FN gs_result gs__check_groups(gs_ctx *ctx, const gs_value *v, const gs_replica_groups *rg) {
    int64_t n, i, j;
    if (rg->n_groups < 0 || rg->group_size < 0)
        GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: negative replica group count or size", GS__WHO);
    if (rg->n_groups == 0) return GS_OK;
    if (rg->group_size < 1) GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: replica groups must not be empty", GS__WHO);
    if (rg->n_groups > ((int64_t)1 << 24) || rg->group_size > ((int64_t)1 << 24) ||
        rg->n_groups * rg->group_size > ((int64_t)1 << 24))
        GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: too many replica group members", GS__WHO);
    n = rg->n_groups * rg->group_size;
    if (rg->ids) {
        for (i = 0; i < n; i++) {
            if (rg->ids[i] < 0) GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: replica group member %lld is negative", GS__WHO, (long long)rg->ids[i]);
            for (j = 0; j < i; j++)
                if (rg->ids[j] == rg->ids[i])
                    GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: partition %lld appears twice in replica_groups", GS__WHO, (long long)rg->ids[i]);
        }
    } else {
        int64_t prod = 1;
        int seen[GS_MAX_RANK];
        if (rg->iota_rank < 1 || rg->iota_rank > GS_MAX_RANK)
            GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: replica groups have neither ids nor an iota form", GS__WHO);
        memset(seen, 0, sizeof seen);
        for (i = 0; i < rg->iota_rank; i++) {
            if (rg->iota_dims[i] < 1) GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: iota replica group dims must be >= 1", GS__WHO);
            prod *= rg->iota_dims[i];
            if (rg->iota_perm[i] < 0 || rg->iota_perm[i] >= rg->iota_rank || seen[rg->iota_perm[i]]++)
                GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: iota replica group transpose is not a permutation", GS__WHO);
        }
        if (prod != n)
            GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: iota replica groups [%lld,%lld] do not match the %lld devices of the reshape",
                     GS__WHO, (long long)rg->n_groups, (long long)rg->group_size, (long long)prod);
    }
    return GS_OK;
}

/* the group size a collective works with: explicit, or every partition of the graph */
GS__FN int64_t gs__group_size(const gs_value *v) {
    const gs_replica_groups *rg = &v->coll.groups;
    return rg->n_groups == 0 ? v->graph->num_partitions : rg->group_size;
}

GS__FN gs_result gs__groups_expand(gs_ctx *ctx, const gs_replica_groups *rg, int64_t num_partitions, int64_t *n_groups,
                                   int64_t *group_size, const int64_t **ids) {
    int64_t n, i, *out;
    char *seen;
    if (num_partitions < 1) return gs__err(ctx, GS_ERR_INVALID_ARG, "replica groups: %lld partitions", (long long)num_partitions);
    if (rg->n_groups == 0) {
        out = (int64_t *)gs__malloc(ctx, sizeof(int64_t) * (size_t)num_partitions);
        if (!out) return GS_ERR_OUT_OF_MEMORY;
        for (i = 0; i < num_partitions; i++) out[i] = i;
        *n_groups = 1;
        *group_size = num_partitions;
        *ids = out;
        return GS_OK;
    }
    n = rg->n_groups * rg->group_size;
    out = (int64_t *)gs__malloc(ctx, sizeof(int64_t) * (size_t)(n ? n : 1));
    if (!out) return GS_ERR_OUT_OF_MEMORY;
    if (rg->ids) {
        memcpy(out, rg->ids, sizeof(int64_t) * (size_t)n);
    } else {
        /* out[k] = the k-th element (row-major) of transpose(iota(dims), perm) */
        int r = rg->iota_rank, d;
        int64_t tdims[GS_MAX_RANK], istr[GS_MAX_RANK], idx[GS_MAX_RANK];
        gs_shape s = gs_shape_make(GS_S32, r, rg->iota_dims);
        gs__strides(&s, istr);
        for (d = 0; d < r; d++) {
            tdims[d] = rg->iota_dims[rg->iota_perm[d]];
            idx[d] = 0;
        }
        for (i = 0; i < n; i++) {
            int64_t src = 0;
            for (d = 0; d < r; d++) src += idx[d] * istr[rg->iota_perm[d]];
            out[i] = src;
            for (d = r - 1; d >= 0; d--) {
                if (++idx[d] < tdims[d]) break;
                idx[d] = 0;
            }
        }
    }
    seen = (char *)gs__malloc(ctx, (size_t)num_partitions);
    if (!seen) {
        gs__free(ctx, out);
        return GS_ERR_OUT_OF_MEMORY;
    }
    memset(seen, 0, (size_t)num_partitions);
    for (i = 0; i < n; i++) {
        int64_t id = out[i];
        if (id < 0 || id >= num_partitions) {
            gs__free(ctx, seen);
            gs__free(ctx, out);
            return gs__err(ctx, GS_ERR_INVALID_ARG, "replica groups: partition %lld is out of range for %lld partitions",
                           (long long)id, (long long)num_partitions);
        }
        if (seen[id]++) {
            gs__free(ctx, seen);
            gs__free(ctx, out);
            return gs__err(ctx, GS_ERR_INVALID_ARG, "replica groups: partition %lld appears twice", (long long)id);
        }
    }
    gs__free(ctx, seen);
    *n_groups = rg->n_groups;
    *group_size = rg->group_size;
    *ids = out;
    return GS_OK;
}

/* The node count of the subtree at tree[pos] (its leaves added to *leaves). */
GS__FN int gs__tt_span(const int *tree, int n_tree, int pos, int *leaves) {
    int k, n = 1, kids;
    if (pos >= n_tree) return 0;
    kids = tree[pos];
    if (kids < 0) {
        (*leaves)++;
        return 1;
    }
    for (k = 0; k < kids; k++) n += gs__tt_span(tree, n_tree, pos + n, leaves);
    return n;
}

GS__FN int gs__tuple_arity(const gs_value *v) {
    if (!v || v->shape.dtype != GS_TUPLE) return 0;
    return v->tree ? v->tree[0] : v->n_tuple;
}

GS__FN bool gs__tuple_child(const gs_value *v, int64_t i, int *first_leaf, int *n_leaves, int *node) {
    int k, pos = 1, leaves = 0;
    if (i < 0 || i >= gs__tuple_arity(v)) return false;
    if (!v->tree) {
        *first_leaf = (int)i;
        *n_leaves = 1;
        *node = -1;
        return true;
    }
    for (k = 0; k < i; k++) pos += gs__tt_span(v->tree, v->n_tree, pos, &leaves);
    *first_leaf = leaves;
    *node = pos;
    *n_leaves = 0;
    (void)gs__tt_span(v->tree, v->n_tree, pos, n_leaves);
    return true;
}

GS__FN bool gs__vshape_equal(const gs_value *a, const gs_value *b) {
    int i;
    if (a->shape.dtype != b->shape.dtype) return false;
    if (a->shape.dtype != GS_TUPLE) return gs_shape_equal(&a->shape, &b->shape);
    if (a->n_tuple != b->n_tuple || a->n_tree != b->n_tree || (!a->tree) != (!b->tree)) return false;
    for (i = 0; i < a->n_tuple; i++)
        if (!gs_shape_equal(&a->tuple[i], &b->tuple[i])) return false;
    for (i = 0; i < a->n_tree; i++)
        if (a->tree[i] != b->tree[i]) return false;
    return true;
}

/* Tuple of v's operands (arrays or tuples): the leaves concatenated; the structure kept when any operand is a
   tuple. */
GS__FN gs_result gs__infer_tuple(gs_ctx *ctx, gs_value *v) {
    int i, j, nl = 0, nt = 1, at = 0, lt = 0;
    gs_shape *ts = NULL;
    int *tree = NULL;
    bool nested = false;
    for (i = 0; i < v->n_operands; i++) {
        const gs_value *o = v->operands[i];
        if (o->shape.dtype == GS_TUPLE) {
            nested = true;
            nl += o->n_tuple;
            nt += o->tree ? o->n_tree : o->n_tuple + 1;
        } else {
            nl++;
            nt++;
        }
    }
    if (nl > 0 && !(ts = (gs_shape *)gs__arena_alloc(ctx, sizeof(gs_shape) * (size_t)nl))) return ctx->err;
    if (nested && !(tree = (int *)gs__arena_alloc(ctx, sizeof(int) * (size_t)nt))) return ctx->err;
    if (tree) tree[at++] = v->n_operands;
    for (i = 0; i < v->n_operands; i++) {
        const gs_value *o = v->operands[i];
        if (o->shape.dtype != GS_TUPLE) {
            ts[lt++] = o->shape;
            if (tree) tree[at++] = -1;
            continue;
        }
        for (j = 0; j < o->n_tuple; j++) ts[lt++] = o->tuple[j];
        if (o->tree) {
            for (j = 0; j < o->n_tree; j++) tree[at++] = o->tree[j];
        } else {
            tree[at++] = o->n_tuple;
            for (j = 0; j < o->n_tuple; j++) tree[at++] = -1;
        }
    }
    v->tuple = ts;
    v->n_tuple = nl;
    v->tree = tree;
    v->n_tree = tree ? nt : 0;
    GS__ZERO(v->shape);
    v->shape.dtype = GS_TUPLE;
    return GS_OK;
}

/* get-tuple-element: top-level element index of a tuple (an array, or a tuple of its leaves) */
GS__FN gs_result gs__infer_gte(gs_ctx *ctx, gs_value *v) {
    const gs_value *t = v->operands[0];
    int first, n, node, i, k;
    if (t->shape.dtype != GS_TUPLE) GS__FAIL(GS_ERR_SHAPE, "%s %s: operand %s is not a tuple", GS__WHO, t->name);
    if (!gs__tuple_child(t, v->index, &first, &n, &node))
        GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: index %lld is out of range for a %d-tuple", GS__WHO, (long long)v->index, gs__tuple_arity(t));
    v->tree = NULL;
    v->n_tree = 0;
    if (node < 0 || t->tree[node] < 0) {
        v->shape = t->tuple[first];
        v->n_tuple = 0;
        v->tuple = NULL;
        return GS_OK;
    }
    GS__ZERO(v->shape);
    v->shape.dtype = GS_TUPLE;
    v->n_tuple = n;
    v->tuple = t->tuple + first;
    {   /* keep the subtree only when it is nested itself */
        int leaves = 0, span = gs__tt_span(t->tree, t->n_tree, node, &leaves);
        for (i = node + 1, k = 0; i < node + span; i++) k += t->tree[i] >= 0;
        if (k > 0) {
            v->tree = t->tree + node;
            v->n_tree = span;
        }
    }
    return GS_OK;
}

GS__FN gs_result gs__infer_gather(gs_ctx *ctx, gs_value *v) {
    const gs_shape *op = &v->operands[0]->shape, *ix = &v->operands[1]->shape;
    const gs_gather_dims *d = v->gather;
    int64_t ivd = d->index_vector_dim, nidx, bdims[GS_MAX_RANK];
    int nb = 0, i, j, k, out_rank, nofs = 0;
    int64_t ofs_sizes[GS_MAX_RANK];
    if (!gs__is_int(ix->dtype)) GS__FAIL(GS_ERR_SHAPE, "%s %s: indices must be s32 or u32", GS__WHO);
    if (ivd < 0 || ivd > ix->rank)
        GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: index_vector_dim %lld is out of range [0, %d]", GS__WHO, (long long)ivd, ix->rank);
    nidx = ivd == ix->rank ? 1 : ix->dims[ivd];
    if (d->n_start_index_map != nidx)
        GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: start_index_map has %d entries but the index vector has %lld", GS__WHO,
                 d->n_start_index_map, (long long)nidx);
    if (d->n_offset_dims < 0 || d->n_collapsed_slice_dims < 0 || d->n_operand_batching_dims < 0 ||
        d->n_offset_dims > GS_MAX_RANK || d->n_collapsed_slice_dims > GS_MAX_RANK || d->n_operand_batching_dims > GS_MAX_RANK ||
        d->n_start_index_map > GS_MAX_RANK)
        GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: bad dimension-number counts", GS__WHO);
    if (gs__dims_unique(ctx, v, "start_index_map", d->start_index_map, d->n_start_index_map, op->rank)) return ctx->err;
    if (gs__dims_unique(ctx, v, "collapsed_slice_dims", d->collapsed_slice_dims, d->n_collapsed_slice_dims, op->rank)) return ctx->err;
    if (gs__dims_unique(ctx, v, "operand_batching_dims", d->operand_batching_dims, d->n_operand_batching_dims, op->rank)) return ctx->err;
    for (i = 0; i < d->n_collapsed_slice_dims; i++)
        for (j = 0; j < d->n_operand_batching_dims; j++)
            if (d->collapsed_slice_dims[i] == d->operand_batching_dims[j])
                GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: dim %lld is both collapsed and a batching dim", GS__WHO, (long long)d->collapsed_slice_dims[i]);
    for (i = 0; i < d->n_start_index_map; i++)
        for (j = 0; j < d->n_operand_batching_dims; j++)
            if (d->start_index_map[i] == d->operand_batching_dims[j])
                GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: dim %lld is both in start_index_map and a batching dim", GS__WHO, (long long)d->start_index_map[i]);
    for (i = 0; i < op->rank; i++) {
        if (d->slice_sizes[i] < 0 || d->slice_sizes[i] > op->dims[i])
            GS__FAIL(GS_ERR_SHAPE, "%s %s: slice_sizes[%d] = %lld is outside [0, %lld]", GS__WHO, i, (long long)d->slice_sizes[i],
                     (long long)op->dims[i]);
    }
    for (i = 0; i < d->n_collapsed_slice_dims; i++)
        if (d->slice_sizes[d->collapsed_slice_dims[i]] != 1)
            GS__FAIL(GS_ERR_SHAPE, "%s %s: collapsed dim %lld has slice size %lld (must be 1)", GS__WHO,
                     (long long)d->collapsed_slice_dims[i], (long long)d->slice_sizes[d->collapsed_slice_dims[i]]);
    for (i = 0; i < d->n_operand_batching_dims; i++)
        if (d->slice_sizes[d->operand_batching_dims[i]] != 1)
            GS__FAIL(GS_ERR_SHAPE, "%s %s: batching dim %lld has slice size %lld (must be 1)", GS__WHO,
                     (long long)d->operand_batching_dims[i], (long long)d->slice_sizes[d->operand_batching_dims[i]]);
    for (i = 0; i < op->rank; i++) {
        bool skip = false;
        for (j = 0; j < d->n_collapsed_slice_dims; j++) skip = skip || d->collapsed_slice_dims[j] == i;
        for (j = 0; j < d->n_operand_batching_dims; j++) skip = skip || d->operand_batching_dims[j] == i;
        if (!skip) ofs_sizes[nofs++] = d->slice_sizes[i];
    }
    if (nofs != d->n_offset_dims)
        GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: offset_dims has %d entries but %d operand dims are neither collapsed nor batching",
                 GS__WHO, d->n_offset_dims, nofs);
    for (i = 0; i < ix->rank; i++)
        if (i != ivd) bdims[nb++] = ix->dims[i];
    /* batching dims pair operand dims with index (batch) dims of equal size */
    for (i = 0; i < d->n_operand_batching_dims; i++) {
        int64_t sd = d->start_indices_batching_dims[i];
        if (sd < 0 || sd >= ix->rank || sd == ivd)
            GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: start_indices_batching_dims[%d] = %lld is not an index batch dim", GS__WHO, i, (long long)sd);
        for (j = 0; j < i; j++)
            if (d->start_indices_batching_dims[j] == sd) GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: start_indices_batching_dims repeats %lld", GS__WHO, (long long)sd);
        if (ix->dims[sd] != op->dims[d->operand_batching_dims[i]])
            GS__FAIL(GS_ERR_SHAPE, "%s %s: batching dims differ in size (%lld vs %lld)", GS__WHO, (long long)ix->dims[sd],
                     (long long)op->dims[d->operand_batching_dims[i]]);
    }
    out_rank = nb + d->n_offset_dims;
    if (out_rank > GS_MAX_RANK) GS__FAIL(GS_ERR_SHAPE, "%s %s: result rank %d exceeds GS_MAX_RANK", GS__WHO, out_rank);
    for (i = 0; i < d->n_offset_dims; i++) {
        if (d->offset_dims[i] < 0 || d->offset_dims[i] >= out_rank || (i > 0 && d->offset_dims[i] <= d->offset_dims[i - 1]))
            GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: offset_dims must be increasing and within the result rank %d", GS__WHO, out_rank);
    }
    v->shape.dtype = op->dtype;
    v->shape.rank = out_rank;
    for (i = 0, j = 0, k = 0; i < out_rank; i++) {
        if (j < d->n_offset_dims && d->offset_dims[j] == i) v->shape.dims[i] = ofs_sizes[j++];
        else v->shape.dims[i] = bdims[k++];
    }
    return GS_OK;
}

GS__FN gs_result gs__infer_scatter(gs_ctx *ctx, gs_value *v) {
    const gs_shape *op = &v->operands[0]->shape, *ix = &v->operands[1]->shape, *up = &v->operands[2]->shape;
    const gs_scatter_dims *d = v->scatter;
    int64_t ivd = d->index_vector_dim, nidx, sdims[GS_MAX_RANK], wsizes[GS_MAX_RANK];
    int ns = 0, nw = 0, i, j;
    if (!gs__is_int(ix->dtype)) GS__FAIL(GS_ERR_SHAPE, "%s %s: indices must be s32 or u32", GS__WHO);
    if (up->dtype != op->dtype) GS__FAIL(GS_ERR_SHAPE, "%s %s: updates dtype differs from the operand's", GS__WHO);
    if (ivd < 0 || ivd > ix->rank)
        GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: index_vector_dim %lld is out of range [0, %d]", GS__WHO, (long long)ivd, ix->rank);
    if (d->n_update_window_dims < 0 || d->n_inserted_window_dims < 0 || d->n_input_batching_dims < 0 ||
        d->n_update_window_dims > GS_MAX_RANK || d->n_inserted_window_dims > GS_MAX_RANK ||
        d->n_input_batching_dims > GS_MAX_RANK || d->n_scatter_dims_to_operand_dims > GS_MAX_RANK)
        GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: bad dimension-number counts", GS__WHO);
    nidx = ivd == ix->rank ? 1 : ix->dims[ivd];
    if (d->n_scatter_dims_to_operand_dims != nidx)
        GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: scatter_dims_to_operand_dims has %d entries but the index vector has %lld", GS__WHO,
                 d->n_scatter_dims_to_operand_dims, (long long)nidx);
    if (gs__dims_unique(ctx, v, "scatter_dims_to_operand_dims", d->scatter_dims_to_operand_dims, d->n_scatter_dims_to_operand_dims, op->rank)) return ctx->err;
    if (gs__dims_unique(ctx, v, "inserted_window_dims", d->inserted_window_dims, d->n_inserted_window_dims, op->rank)) return ctx->err;
    if (gs__dims_unique(ctx, v, "input_batching_dims", d->input_batching_dims, d->n_input_batching_dims, op->rank)) return ctx->err;
    if (gs__dims_unique(ctx, v, "update_window_dims", d->update_window_dims, d->n_update_window_dims, up->rank)) return ctx->err;
    for (i = 1; i < d->n_update_window_dims; i++)
        if (d->update_window_dims[i] <= d->update_window_dims[i - 1])
            GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: update_window_dims must be increasing", GS__WHO);
    if (d->n_update_window_dims + d->n_inserted_window_dims + d->n_input_batching_dims != op->rank)
        GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: update_window_dims (%d) + inserted_window_dims (%d) + input_batching_dims (%d) must equal the operand rank %d",
                 GS__WHO, d->n_update_window_dims, d->n_inserted_window_dims, d->n_input_batching_dims, op->rank);
    for (i = 0; i < d->n_inserted_window_dims; i++)
        for (j = 0; j < d->n_input_batching_dims; j++)
            if (d->inserted_window_dims[i] == d->input_batching_dims[j])
                GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: dim %lld is both inserted and batching", GS__WHO, (long long)d->inserted_window_dims[i]);
    for (i = 0; i < ix->rank; i++)
        if (i != ivd) sdims[ns++] = ix->dims[i];
    if (up->rank != ns + d->n_update_window_dims)
        GS__FAIL(GS_ERR_SHAPE, "%s %s: updates rank %d must be %d scatter dims + %d window dims", GS__WHO, up->rank, ns,
                 d->n_update_window_dims);
    /* window sizes: operand dims that are neither inserted nor batching, in order */
    for (i = 0; i < op->rank; i++) {
        bool skip = false;
        for (j = 0; j < d->n_inserted_window_dims; j++) skip = skip || d->inserted_window_dims[j] == i;
        for (j = 0; j < d->n_input_batching_dims; j++) skip = skip || d->input_batching_dims[j] == i;
        if (!skip) wsizes[nw++] = op->dims[i];
    }
    for (i = 0, j = 0; i < up->rank; i++) {
        bool is_w = false;
        int w;
        for (w = 0; w < d->n_update_window_dims; w++)
            if (d->update_window_dims[w] == i) {
                is_w = true;
                break;
            }
        if (is_w) {
            if (up->dims[i] > wsizes[w])
                GS__FAIL(GS_ERR_SHAPE, "%s %s: update window dim %d (%lld) exceeds the operand's %lld", GS__WHO, i,
                         (long long)up->dims[i], (long long)wsizes[w]);
        } else {
            if (up->dims[i] != sdims[j])
                GS__FAIL(GS_ERR_SHAPE, "%s %s: update scatter dim %d (%lld) differs from the indices' %lld", GS__WHO, i,
                         (long long)up->dims[i], (long long)sdims[j]);
            j++;
        }
    }
    for (i = 0; i < d->n_input_batching_dims; i++) {
        int64_t sd = d->scatter_indices_batching_dims[i];
        if (sd < 0 || sd >= ix->rank || sd == ivd)
            GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: scatter_indices_batching_dims[%d] = %lld is not an index batch dim", GS__WHO, i, (long long)sd);
        if (ix->dims[sd] != op->dims[d->input_batching_dims[i]])
            GS__FAIL(GS_ERR_SHAPE, "%s %s: batching dims differ in size", GS__WHO);
    }
    if (!gs__reduce_kind_ok(v->reduce, op->dtype, true))
        GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: combiner %s is not valid for %s", GS__WHO, gs_reduce_kind_name(v->reduce), gs_dtype_name(op->dtype));
    v->shape = *op;
    return GS_OK;
}

GS__FN gs_result gs__infer_conv(gs_ctx *ctx, gs_value *v) {
    const gs_shape *in = &v->operands[0]->shape, *ke = &v->operands[1]->shape;
    const gs_conv_config *c = v->conv;
    const gs_conv_dims *d = &c->dims;
    int64_t fgc = c->feature_group_count ? c->feature_group_count : 1;
    int64_t bgc = c->batch_group_count ? c->batch_group_count : 1;
    int64_t tmp[GS_MAX_RANK];
    int ns = d->n_spatial, r = ns + 2, i;
    if (in->dtype != ke->dtype || in->dtype == GS_PRED) GS__FAIL(GS_ERR_SHAPE, "%s %s: input and kernel need one numeric dtype", GS__WHO);
    if (ns < 0 || r > GS_MAX_RANK) GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: %d spatial dims", GS__WHO, ns);
    if (in->rank != r || ke->rank != r)
        GS__FAIL(GS_ERR_SHAPE, "%s %s: with %d spatial dims input and kernel need rank %d (got %d and %d)", GS__WHO, ns, r, in->rank, ke->rank);
    tmp[0] = d->input_batch; tmp[1] = d->input_feature;
    for (i = 0; i < ns; i++) tmp[2 + i] = d->input_spatial[i];
    if (gs__dims_unique(ctx, v, "input dimension numbers", tmp, r, r)) return ctx->err;
    tmp[0] = d->kernel_input_feature; tmp[1] = d->kernel_output_feature;
    for (i = 0; i < ns; i++) tmp[2 + i] = d->kernel_spatial[i];
    if (gs__dims_unique(ctx, v, "kernel dimension numbers", tmp, r, r)) return ctx->err;
    tmp[0] = d->output_batch; tmp[1] = d->output_feature;
    for (i = 0; i < ns; i++) tmp[2 + i] = d->output_spatial[i];
    if (gs__dims_unique(ctx, v, "output dimension numbers", tmp, r, r)) return ctx->err;
    if (gs__check_window(ctx, v, c->window, ns)) return ctx->err;
    if (fgc < 1 || bgc < 1) GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: group counts must be >= 1", GS__WHO);
    if (fgc > 1 && bgc > 1) GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: feature_group_count and batch_group_count cannot both exceed 1", GS__WHO);
    if (in->dims[d->input_feature] % fgc != 0)
        GS__FAIL(GS_ERR_SHAPE, "%s %s: input features %lld are not divisible by feature_group_count %lld", GS__WHO,
                 (long long)in->dims[d->input_feature], (long long)fgc);
    if (ke->dims[d->kernel_input_feature] * fgc != in->dims[d->input_feature])
        GS__FAIL(GS_ERR_SHAPE, "%s %s: kernel input features %lld x feature_group_count %lld != input features %lld", GS__WHO,
                 (long long)ke->dims[d->kernel_input_feature], (long long)fgc, (long long)in->dims[d->input_feature]);
    if (ke->dims[d->kernel_output_feature] % fgc != 0)
        GS__FAIL(GS_ERR_SHAPE, "%s %s: kernel output features %lld are not divisible by feature_group_count %lld", GS__WHO,
                 (long long)ke->dims[d->kernel_output_feature], (long long)fgc);
    if (in->dims[d->input_batch] % bgc != 0)
        GS__FAIL(GS_ERR_SHAPE, "%s %s: input batch %lld is not divisible by batch_group_count %lld", GS__WHO,
                 (long long)in->dims[d->input_batch], (long long)bgc);
    if (ke->dims[d->kernel_output_feature] % bgc != 0)
        GS__FAIL(GS_ERR_SHAPE, "%s %s: kernel output features %lld are not divisible by batch_group_count %lld", GS__WHO,
                 (long long)ke->dims[d->kernel_output_feature], (long long)bgc);
    for (i = 0; i < ns; i++)
        if (c->window[i].size != ke->dims[d->kernel_spatial[i]])
            GS__FAIL(GS_ERR_SHAPE, "%s %s: window size %lld of spatial dim %d differs from the kernel's %lld", GS__WHO,
                     (long long)c->window[i].size, i, (long long)ke->dims[d->kernel_spatial[i]]);
    v->shape.dtype = in->dtype;
    v->shape.rank = r;
    v->shape.dims[d->output_batch] = in->dims[d->input_batch] / bgc;
    v->shape.dims[d->output_feature] = ke->dims[d->kernel_output_feature];
    for (i = 0; i < ns; i++) v->shape.dims[d->output_spatial[i]] = gs__window_out(&c->window[i], in->dims[d->input_spatial[i]]);
    return gs__check_window_out(ctx, v, r, v->shape.dims);
}

/* XLA's dot-as-convolution classification (see gs_internal.h); a spatial dim that fits several kinds takes the
   first of batch, contracting, lhs-free, rhs-free */
GS__FN int gs__conv_dot_kinds(const gs_value *v, gs__cdk *kind) {
    const gs_conv_config *c = v->conv;
    int i, n = 0;
    for (i = 0; i < c->dims.n_spatial; i++) {
        const gs_window_dim *w = &c->window[i];
        int64_t L = v->operands[0]->shape.dims[c->dims.input_spatial[i]];
        int64_t R = v->operands[1]->shape.dims[c->dims.kernel_spatial[i]];
        bool rev = c->reversal[i], nopad = w->pad_lo == 0 && w->pad_hi == 0, plain = w->stride == 1 &&
             w->window_dilation == 1 && w->base_dilation == 1;
        int64_t m1 = L - 1 > 1 ? L - 1 : 1;
        if ((w->size == L && w->base_dilation == L && nopad && !rev &&
             ((w->stride == m1 && w->window_dilation == 1) || (w->window_dilation == m1 && w->stride == 1))) ||
            (w->size == L && w->pad_lo == L - 1 && w->pad_hi == L - 1 && rev && w->window_dilation == 1 &&
             w->stride == L && w->base_dilation == L - 1))
            kind[i] = GS__CDK_BATCH;
        else if (w->size == L && w->base_dilation == 1 && w->window_dilation == 1 && nopad && !rev)
            kind[i] = GS__CDK_CONTRACT;
        else if (plain && R == 1 && w->size == 1 && nopad && !rev)
            kind[i] = GS__CDK_LHS_FREE;
        else if (plain && L == 1 && w->size == R && w->pad_lo == R - 1 && w->pad_hi == R - 1 && rev)
            kind[i] = GS__CDK_RHS_FREE;
        else
            kind[i] = GS__CDK_CONV, n++;
    }
    return n;
}

GS__FN gs_window_dim gs__conv_dot_window(const gs_window_dim *w, bool *rev, gs__cdk k, int64_t n, int64_t m) {
    gs_window_dim r = gs_window_default();
    switch (k) {
    case GS__CDK_BATCH:   /* out[j] = lhs[j] * rhs[j]: window n, lhs_dilate n, stride n - 1 (at least 1) */
        r.size = n;
        r.base_dilation = n;
        r.stride = n - 1 > 1 ? n - 1 : 1;
        *rev = false;
        return r;
    case GS__CDK_CONTRACT:   /* one window over the whole input */
        r.size = n;
        r.stride = w->stride;
        *rev = false;
        return r;
    case GS__CDK_RHS_FREE:   /* out[j] = lhs[0] * rhs[j] */
        r.size = m;
        r.pad_lo = r.pad_hi = m - 1;
        *rev = true;
        return r;
    default: return *w;
    }
}

/* parameter, constant, iota, partition-id, replica-id */
GS__FN gs_result gs__infer_leaf(gs_ctx *ctx, gs_value *v, gs_shape *s) {
    int i;
    switch (v->op) {
    case GS_OP_OPAQUE:   /* the shape is the one written */
        *s = v->opaque_shape;
        if (s->dtype == GS_TUPLE) {
            v->n_tuple = v->opaque_n;
            v->tuple = (gs_shape *)v->opaque_tuple;
            v->n_tree = v->opaque_ntree;
            v->tree = v->opaque_tree;
            for (i = 0; i < v->n_tuple; i++)
                if (gs__check_shape(ctx, v->name, &v->tuple[i])) return ctx->err;
            return GS_OK;
        }
        return gs__check_shape(ctx, v->name, s);
    case GS_OP_PARAMETER:
        if (s->dtype == GS_TUPLE) {
            for (i = 0; i < v->n_tuple; i++)
                if (gs__check_shape(ctx, v->name, &v->tuple[i])) return ctx->err;
            return GS_OK;
        }
        return gs__check_shape(ctx, v->name, s);
    case GS_OP_CONSTANT:
        return gs__check_shape(ctx, v->name, s);
    case GS_OP_IOTA:
        if (gs__check_shape(ctx, v->name, s)) return ctx->err;
        if (s->rank == 0 || v->dim < 0 || v->dim >= s->rank)
            GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: iota_dimension %lld is out of range for rank %d", GS__WHO, (long long)v->dim, s->rank);
        if (s->dtype == GS_PRED) GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: iota of pred", GS__WHO);
        return GS_OK;
    case GS_OP_PARTITION_ID:
        *s = gs_shape_scalar(GS_U32);
        return GS_OK;
    case GS_OP_REPLICA_ID:
        *s = gs_shape_scalar(GS_U32);
        return GS_OK;
    default: break;
    }
    GS__FAIL(GS_ERR_INVALID_ARG, "invalid op %d", (int)v->op);
}

/* data movement: broadcast .. reverse */
GS__FN gs_result gs__infer_move(gs_ctx *ctx, gs_value *v, gs_shape *s, const gs_shape *x) {
    char b1[96], b2[96];
    int i, j;
    switch (v->op) {
    case GS_OP_BROADCAST:
        if (gs__check_shape(ctx, v->name, s)) return ctx->err;
        if (v->n_dims != x->rank)
            GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: dimensions has %d entries for an operand of rank %d", GS__WHO, v->n_dims, x->rank);
        if (gs__dims_unique(ctx, v, "dimensions", v->dims, v->n_dims, s->rank)) return ctx->err;
        for (i = 0; i < x->rank; i++) {
            if (i > 0 && v->dims[i] <= v->dims[i - 1])
                GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: dimensions must be increasing", GS__WHO);
            if (x->dims[i] != s->dims[v->dims[i]])
                GS__FAIL(GS_ERR_SHAPE, "%s %s: operand dim %d (%lld) != output dim %lld (%lld)", GS__WHO, i, (long long)x->dims[i],
                         (long long)v->dims[i], (long long)s->dims[v->dims[i]]);
        }
        if (s->dtype != x->dtype) GS__FAIL(GS_ERR_SHAPE, "%s %s: broadcast cannot change the dtype", GS__WHO);
        return GS_OK;
    case GS_OP_RESHAPE:
        if (gs__check_shape(ctx, v->name, s)) return ctx->err;
        if (gs__numel(s) != gs__numel(x))
            GS__FAIL(GS_ERR_SHAPE, "%s %s: cannot reshape %s to %s (element counts differ)", GS__WHO, gs__shape_str(x, b1, sizeof b1),
                     gs__shape_str(s, b2, sizeof b2));
        s->dtype = x->dtype;
        return GS_OK;
    case GS_OP_TRANSPOSE:
        if (v->n_dims != x->rank) GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: permutation has %d entries for rank %d", GS__WHO, v->n_dims, x->rank);
        if (gs__dims_unique(ctx, v, "permutation", v->dims, v->n_dims, x->rank)) return ctx->err;
        s->dtype = x->dtype;
        s->rank = x->rank;
        for (i = 0; i < x->rank; i++) s->dims[i] = x->dims[v->dims[i]];
        return GS_OK;
    case GS_OP_SLICE:
        *s = *x;
        for (i = 0; i < x->rank; i++) {
            if (v->stride[i] < 1) GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: stride %lld in dim %d must be >= 1", GS__WHO, (long long)v->stride[i], i);
            if (v->start[i] < 0 || v->start[i] > v->limit[i] || v->limit[i] > x->dims[i])
                GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: dim %d slice [%lld:%lld] is not within [0, %lld]", GS__WHO, i,
                         (long long)v->start[i], (long long)v->limit[i], (long long)x->dims[i]);
            /* ceil((limit - start) / stride), written so a stride near INT64_MAX cannot overflow */
            s->dims[i] = v->limit[i] > v->start[i] ? (v->limit[i] - v->start[i] - 1) / v->stride[i] + 1 : 0;
        }
        return GS_OK;
    case GS_OP_DYNAMIC_SLICE:
        if (v->n_operands != x->rank + 1)
            GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: needs %d start indices for rank %d, got %d", GS__WHO, x->rank, x->rank, v->n_operands - 1);
        if (gs__need_index_scalars(ctx, v, 1, x->rank)) return ctx->err;
        *s = *x;
        for (i = 0; i < x->rank; i++) {
            if (v->sizes[i] < 0 || v->sizes[i] > x->dims[i])
                GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: slice size %lld in dim %d is outside [0, %lld]", GS__WHO, (long long)v->sizes[i], i,
                         (long long)x->dims[i]);
            s->dims[i] = v->sizes[i];
        }
        return GS_OK;
    case GS_OP_DYNAMIC_UPDATE_SLICE: {
        const gs_shape *u;
        if (v->n_operands < 2) GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: needs an operand and an update", GS__WHO);
        u = &v->operands[1]->shape;
        if (v->n_operands != x->rank + 2)
            GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: needs %d start indices for rank %d, got %d", GS__WHO, x->rank, x->rank, v->n_operands - 2);
        if (u->rank != x->rank || u->dtype != x->dtype)
            GS__FAIL(GS_ERR_SHAPE, "%s %s: update %s does not match operand %s in rank and dtype", GS__WHO, gs__shape_str(u, b1, sizeof b1),
                     gs__shape_str(x, b2, sizeof b2));
        for (i = 0; i < x->rank; i++)
            if (u->dims[i] > x->dims[i])
                GS__FAIL(GS_ERR_SHAPE, "%s %s: update dim %d (%lld) exceeds operand dim (%lld)", GS__WHO, i, (long long)u->dims[i], (long long)x->dims[i]);
        if (gs__need_index_scalars(ctx, v, 2, x->rank)) return ctx->err;
        *s = *x;
        return GS_OK;
    }
    case GS_OP_PAD:
        if (gs__need_scalar(ctx, v, 1, x->dtype)) return ctx->err;
        *s = *x;
        for (i = 0; i < x->rank; i++) {
            int64_t n;
            if (v->interior[i] < 0) GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: interior padding %lld in dim %d is negative", GS__WHO, (long long)v->interior[i], i);
            if (v->lo[i] > ((int64_t)1 << 40) || v->hi[i] > ((int64_t)1 << 40) || v->interior[i] > ((int64_t)1 << 40) ||
                v->lo[i] < -((int64_t)1 << 40) || v->hi[i] < -((int64_t)1 << 40))
                GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: padding in dim %d is absurdly large", GS__WHO, i);
            /* lo + hi + dims + (dims - 1) * interior, each step checked (dims up to 2^50, interior up to 2^40) */
            if (!gs__mul64(x->dims[i] > 0 ? x->dims[i] - 1 : 0, v->interior[i], &n) || !gs__add64(n, x->dims[i], &n) ||
                !gs__add64(n, v->lo[i] + v->hi[i], &n))
                GS__FAIL(GS_ERR_SHAPE, "%s %s: padding %lld_%lld_%lld makes dim %d overflow int64", GS__WHO, (long long)v->lo[i],
                         (long long)v->hi[i], (long long)v->interior[i], i);
            if (n < 0)
                GS__FAIL(GS_ERR_SHAPE, "%s %s: padding %lld_%lld_%lld makes dim %d negative (%lld)", GS__WHO, (long long)v->lo[i],
                         (long long)v->hi[i], (long long)v->interior[i], i, (long long)n);
            s->dims[i] = n;
        }
        return gs__check_shape(ctx, v->name, s);
    case GS_OP_CONCATENATE:
        if (v->n_operands < 1) GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: needs at least one operand", GS__WHO);
        if (x->rank == 0 || v->dim < 0 || v->dim >= x->rank)
            GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: dimension %lld is out of range for rank %d", GS__WHO, (long long)v->dim, x->rank);
        *s = *x;
        for (i = 1; i < v->n_operands; i++) {
            const gs_shape *y = &v->operands[i]->shape;
            if (y->rank != x->rank || y->dtype != x->dtype)
                GS__FAIL(GS_ERR_SHAPE, "%s %s: operand %d %s does not match operand 0 %s", GS__WHO, i, gs__shape_str(y, b1, sizeof b1),
                         gs__shape_str(x, b2, sizeof b2));
            for (j = 0; j < x->rank; j++)
                if (j != v->dim && y->dims[j] != x->dims[j])
                    GS__FAIL(GS_ERR_SHAPE, "%s %s: operand %d dim %d (%lld) != operand 0's (%lld)", GS__WHO, i, j, (long long)y->dims[j],
                             (long long)x->dims[j]);
            if (!gs__add64(s->dims[v->dim], y->dims[v->dim], &s->dims[v->dim]))
                GS__FAIL(GS_ERR_SHAPE, "%s %s: the concatenated dim %lld overflows int64", GS__WHO, (long long)v->dim);
        }
        return gs__check_shape(ctx, v->name, s);
    case GS_OP_REVERSE:
        if (gs__dims_unique(ctx, v, "dimensions", v->dims, v->n_dims, x->rank)) return ctx->err;
        *s = *x;
        return GS_OK;
    default: break;
    }
    GS__FAIL(GS_ERR_INVALID_ARG, "invalid op %d", (int)v->op);
}

/* batch-norm-*: x real float, the [F] operands of x's type, dy of x's shape; training and grad give (x's shape,
   [F], [F]), inference x's shape */
GS__FN gs_result gs__infer_batch_norm(gs_ctx *ctx, gs_value *v) {
    const gs_shape *x = &v->operands[0]->shape;
    gs_shape f;
    gs_shape *ts;
    char b1[96];
    int i;
    if (!gs__is_float(x->dtype)) GS__FAIL(GS_ERR_SHAPE, "%s %s: needs a real floating-point operand, got %s", GS__WHO, gs_dtype_name(x->dtype));
    if (v->dim < 0 || v->dim >= x->rank)
        GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: feature_index %lld is out of range for rank %d", GS__WHO, (long long)v->dim, x->rank);
    if (!(v->bn_epsilon >= 0.0f)) GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: epsilon must be >= 0", GS__WHO);
    f = gs_shape_make(x->dtype, 1, &x->dims[v->dim]);
    for (i = 1; i < v->n_operands; i++) {
        const gs_shape *o = &v->operands[i]->shape;
        const gs_shape *want = (v->op == GS_OP_BATCH_NORM_GRAD && i == 4) ? x : &f;
        if (!gs_shape_equal(o, want))
            GS__FAIL(GS_ERR_SHAPE, "%s %s: operand %d must be %s, not %s", GS__WHO, i, gs__shape_str(want, b1, sizeof b1),
                     gs_dtype_name(o->dtype));
    }
    v->tree = NULL;
    v->n_tree = 0;
    if (v->op == GS_OP_BATCH_NORM_INFERENCE) {
        v->shape = *x;
        v->n_tuple = 0;
        v->tuple = NULL;
        return GS_OK;
    }
    if (!(ts = (gs_shape *)gs__arena_alloc(ctx, 3 * sizeof(gs_shape)))) return ctx->err;
    ts[0] = *x;
    ts[1] = f;
    ts[2] = f;
    v->tuple = ts;
    v->n_tuple = 3;
    GS__ZERO(v->shape);
    v->shape.dtype = GS_TUPLE;
    return GS_OK;
}

/* cholesky a[..., n, n] -> a's shape; triangular-solve a[..., m, m], b[..., m, n] (left) or [..., n, m] -> b's shape */
/* select-and-scatter: source has the window positions' shape, init is a scalar, the result is operand's shape */
GS__FN gs_result gs__infer_select_scatter(gs_ctx *ctx, gs_value *v) {
    const gs_shape *x = &v->operands[0]->shape, *src = &v->operands[1]->shape;
    int i;
    if (gs__need_scalar(ctx, v, 2, x->dtype)) return ctx->err;
    if (!gs__reduce_kind_ok(v->reduce, x->dtype, false))
        GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: scatter reduction %s is not valid for %s", GS__WHO, gs_reduce_kind_name(v->reduce), gs_dtype_name(x->dtype));
    if (gs__check_window(ctx, v, v->window, x->rank)) return ctx->err;
    if (src->dtype != x->dtype || src->rank != x->rank)
        GS__FAIL(GS_ERR_SHAPE, "%s %s: source must have the operand's type and rank", GS__WHO);
    for (i = 0; i < x->rank; i++)
        if (src->dims[i] != gs__window_out(&v->window[i], x->dims[i]))
            GS__FAIL(GS_ERR_SHAPE, "%s %s: source dim %d is %lld, the windows give %lld", GS__WHO, i, (long long)src->dims[i],
                     (long long)gs__window_out(&v->window[i], x->dims[i]));
    v->shape = *x;
    return GS_OK;
}

/* fft (XLA's ShapeInference::InferFftShape): the last fft_n dims are fft_length (IRFFT's last: N/2 + 1) */
GS__FN gs_result gs__infer_fft(gs_ctx *ctx, gs_value *v) {
    const gs_shape *x = &v->operands[0]->shape;
    int n = v->fft_n, r = x->rank, t = v->fft_type, i;
    bool real_in = t == GS_FFT_RFFT, real_out = t == GS_FFT_IRFFT;
    if (t < GS_FFT_FFT || t > GS_FFT_IRFFT) GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: invalid fft_type %d", GS__WHO, t);
    if (n < 1 || n > 3 || n > r)
        GS__FAIL(GS_ERR_SHAPE, "%s %s: fft_length needs 1 to 3 entries, at most the operand's rank %d (got %d)", GS__WHO, r, n);
    if (real_in ? (x->dtype != GS_F32 && x->dtype != GS_F64) : (x->dtype != GS_C64 && x->dtype != GS_C128))
        GS__FAIL(GS_ERR_SHAPE, "%s %s: %s needs a%s operand, got %s", GS__WHO, t == GS_FFT_FFT ? "FFT" : t == GS_FFT_IFFT ? "IFFT" : real_in ? "RFFT" : "IRFFT",
                 real_in ? "n f32 or f64" : " c64 or c128", gs_dtype_name(x->dtype));
    v->shape = *x;
    for (i = 0; i < n; i++) {
        int64_t want = v->fft_len[i], d = r - n + i;
        if (want < 0) GS__FAIL(GS_ERR_SHAPE, "%s %s: negative fft_length", GS__WHO);
        if (real_out && i == n - 1) want = want / 2 + 1;
        if (x->dims[d] != want)
            GS__FAIL(GS_ERR_SHAPE, "%s %s: operand dim %d is %lld, fft_length asks for %lld", GS__WHO, (int)d, (long long)x->dims[d], (long long)want);
    }
    if (real_in) {
        v->shape.dtype = x->dtype == GS_F32 ? GS_C64 : GS_C128;
        v->shape.dims[r - 1] = v->fft_len[n - 1] / 2 + 1;
    } else if (real_out) {
        v->shape.dtype = x->dtype == GS_C64 ? GS_F32 : GS_F64;
        v->shape.dims[r - 1] = v->fft_len[n - 1];
    }
    return GS_OK;
}

GS__FN gs_result gs__infer_linalg(gs_ctx *ctx, gs_value *v) {
    const gs_shape *a = &v->operands[0]->shape;
    int r = a->rank, i;
    if (!gs__is_float(a->dtype)) GS__FAIL(GS_ERR_SHAPE, "%s %s: needs a real floating-point operand, got %s", GS__WHO, gs_dtype_name(a->dtype));
    if (r < 2 || a->dims[r - 1] != a->dims[r - 2]) GS__FAIL(GS_ERR_SHAPE, "%s %s: a must be [..., n, n]", GS__WHO);
    v->shape = *a;
    if (v->op == GS_OP_TRIANGULAR_SOLVE) {
        const gs_shape *b = &v->operands[1]->shape;
        if (v->la_trans > GS_TRANSPOSE_A_ADJOINT) GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: invalid transpose_a", GS__WHO);
        if (b->dtype != a->dtype || b->rank != r) GS__FAIL(GS_ERR_SHAPE, "%s %s: b must have a's type and rank", GS__WHO);
        for (i = 0; i < r - 2; i++)
            if (b->dims[i] != a->dims[i]) GS__FAIL(GS_ERR_SHAPE, "%s %s: batch dim %d differs", GS__WHO, i);
        if (b->dims[v->la_left ? r - 2 : r - 1] != a->dims[r - 1])
            GS__FAIL(GS_ERR_SHAPE, "%s %s: b's %s dim must be %lld", GS__WHO, v->la_left ? "second-to-last" : "last", (long long)a->dims[r - 1]);
        v->shape = *b;
    }
    return GS_OK;
}

/* rng-bit-generator: (state, bits) with the bits' shape the builder recorded */
GS__FN gs_result gs__infer_rng_bits(gs_ctx *ctx, gs_value *v) {
    const gs_shape *st = &v->operands[0]->shape;
    gs_shape *ts;
    int w;
    if (v->rng_alg < GS_RNG_DEFAULT || v->rng_alg > GS_RNG_PHILOX)
        GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: invalid algorithm %d", GS__WHO, v->rng_alg);
    if (st->dtype != GS_U64 || st->rank != 1 || st->dims[0] < 2 || st->dims[0] > (v->rng_alg == GS_RNG_THREE_FRY ? 2 : 3))
        GS__FAIL(GS_ERR_SHAPE, "%s %s: the state must be u64[2]%s", GS__WHO, v->rng_alg == GS_RNG_THREE_FRY ? "" : " or u64[3]");
    if (!v->rbg_shape) GS__FAIL(GS_ERR_SHAPE, "%s %s: no shape for the bits", GS__WHO);
    w = gs__dt(v->rbg_shape->dtype)->bits;
    if (!gs__is_int(v->rbg_shape->dtype) || (w != 16 && w != 32 && w != 64))
        GS__FAIL(GS_ERR_UNSUPPORTED, "%s %s: bits of type %s are not supported (16-, 32- or 64-bit integers)", GS__WHO,
                 gs_dtype_name(v->rbg_shape->dtype));
    if (v->flag) {   /* the bits alone (XLA also reads this form) */
        v->shape = *v->rbg_shape;
        v->n_tuple = 0;
        v->tuple = NULL;
        v->tree = NULL;
        v->n_tree = 0;
        return GS_OK;
    }
    if (!(ts = (gs_shape *)gs__arena_alloc(ctx, 2 * sizeof(gs_shape)))) return ctx->err;
    ts[0] = *st;
    ts[1] = *v->rbg_shape;
    v->tuple = ts;
    v->n_tuple = 2;
    v->tree = NULL;
    v->n_tree = 0;
    GS__ZERO(v->shape);
    v->shape.dtype = GS_TUPLE;
    return GS_OK;
}

/* bitcast-convert: equal widths keep the shape; a narrower type adds a minor dim, a wider one removes it */
GS__FN gs_result gs__infer_bitcast(gs_ctx *ctx, gs_value *v, gs_shape *s, const gs_shape *x) {
    gs_dtype to = s->dtype;
    int wx = gs__dt(x->dtype)->bits, wt = gs__dt(to)->bits;
    if (x->dtype == GS_PRED) wx = 8;
    if (to == GS_PRED) wt = 8;
    if (!gs__is_array_dtype(to) || to == GS_TOKEN || x->dtype == GS_TOKEN)
        GS__FAIL(GS_ERR_SHAPE, "%s %s: cannot bitcast %s to %s", GS__WHO, gs_dtype_name(x->dtype), gs_dtype_name(to));
    if (wx != wt && (wx < 8 || wt < 8))
        GS__FAIL(GS_ERR_UNSUPPORTED, "%s %s: %s -> %s changes the width of a sub-byte type", GS__WHO, gs_dtype_name(x->dtype), gs_dtype_name(to));
    *s = *x;
    s->dtype = to;
    if (wx > wt) {
        if (x->rank == GS_MAX_RANK) GS__FAIL(GS_ERR_SHAPE, "%s %s: the result would exceed GS_MAX_RANK", GS__WHO);
        s->dims[s->rank++] = wx / wt;
    } else if (wx < wt) {
        if (x->rank == 0 || x->dims[x->rank - 1] != wt / wx)
            GS__FAIL(GS_ERR_SHAPE, "%s %s: %s -> %s needs a minor dim of %d", GS__WHO, gs_dtype_name(x->dtype), gs_dtype_name(to), wt / wx);
        s->rank--;
    }
    return GS_OK;
}

/* convert, copy, the elementwise ops, select, clamp, reduce-precision, bitcast-convert */
GS__FN gs_result gs__infer_elementwise(gs_ctx *ctx, gs_value *v, gs_shape *s, const gs_shape *x) {
    char b1[96], b2[96];
    int i;
    switch (v->op) {
    case GS_OP_CONVERT: {
        gs_dtype to = s->dtype;
        if (!gs__is_array_dtype(to)) GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: invalid target dtype", GS__WHO);
        if (to == GS_TOKEN || x->dtype == GS_TOKEN || (gs__is_complex(x->dtype) && !gs__is_complex(to)))
            GS__FAIL(GS_ERR_SHAPE, "%s %s: cannot convert %s to %s%s", GS__WHO, gs_dtype_name(x->dtype), gs_dtype_name(to),
                     gs__is_complex(x->dtype) ? " (take real or imag first)" : "");
        *s = *x;
        s->dtype = to;
        return GS_OK;
    }
    case GS_OP_COPY:
    case GS_OP_ANNOTATE:
        *s = *x;
        return GS_OK;
    case GS_OP_NEGATE: case GS_OP_ABS: case GS_OP_SIGN:
        if (!gs__is_numeric(x->dtype)) GS__FAIL(GS_ERR_SHAPE, "%s %s: not defined for %s", GS__WHO, gs_dtype_name(x->dtype));
        if (v->op != GS_OP_NEGATE && gs__is_complex(x->dtype))
            GS__FAIL(GS_ERR_UNSUPPORTED, "%s %s: not supported on %s", GS__WHO, gs_dtype_name(x->dtype));
        *s = *x;
        return GS_OK;
    case GS_OP_EXP: case GS_OP_LOG: case GS_OP_TANH: case GS_OP_LOGISTIC: case GS_OP_SQRT: case GS_OP_RSQRT:
    case GS_OP_FLOOR: case GS_OP_CEIL:
        if (!gs__is_float(x->dtype)) GS__FAIL(GS_ERR_SHAPE, "%s %s: needs a floating-point operand, got %s", GS__WHO, gs_dtype_name(x->dtype));
        *s = *x;
        return GS_OK;
    case GS_OP_NOT:
        if (!gs__is_int(x->dtype) && x->dtype != GS_PRED) GS__FAIL(GS_ERR_SHAPE, "%s %s: needs a pred or integer operand", GS__WHO);
        *s = *x;
        return GS_OK;
    case GS_OP_ADD: case GS_OP_SUBTRACT: case GS_OP_MULTIPLY: case GS_OP_DIVIDE: case GS_OP_REMAINDER:
    case GS_OP_MAXIMUM: case GS_OP_MINIMUM: case GS_OP_POWER: case GS_OP_AND: case GS_OP_OR: case GS_OP_XOR:
    case GS_OP_COMPARE: {
        const gs_shape *y = &v->operands[1]->shape;
        if (!gs_shape_equal(x, y))
            GS__FAIL(GS_ERR_SHAPE, "%s %s: operand shapes differ: %s vs %s (broadcast explicitly)", GS__WHO, gs__shape_str(x, b1, sizeof b1),
                     gs__shape_str(y, b2, sizeof b2));
        if ((v->op == GS_OP_AND || v->op == GS_OP_OR || v->op == GS_OP_XOR) && !gs__is_int(x->dtype) && x->dtype != GS_PRED)
            GS__FAIL(GS_ERR_SHAPE, "%s %s: needs pred or integer operands", GS__WHO);
        if (x->dtype == GS_TOKEN) GS__FAIL(GS_ERR_SHAPE, "%s %s: not defined for token", GS__WHO);
        if (gs__is_complex(x->dtype) && v->op != GS_OP_ADD && v->op != GS_OP_SUBTRACT && v->op != GS_OP_MULTIPLY &&
            v->op != GS_OP_DIVIDE && v->op != GS_OP_COMPARE)
            GS__FAIL(GS_ERR_UNSUPPORTED, "%s %s: not supported on %s", GS__WHO, gs_dtype_name(x->dtype));
        if (v->op != GS_OP_AND && v->op != GS_OP_OR && v->op != GS_OP_XOR && v->op != GS_OP_COMPARE &&
            v->op != GS_OP_MAXIMUM && v->op != GS_OP_MINIMUM && x->dtype == GS_PRED)
            GS__FAIL(GS_ERR_SHAPE, "%s %s: arithmetic on pred", GS__WHO);
        *s = *x;
        if (v->op == GS_OP_COMPARE) {
            bool fl = gs__is_float(x->dtype) || gs__is_complex(x->dtype);
            gs_cmp_type def = fl ? GS_CMP_TYPE_FLOAT : gs__is_signed(x->dtype) ? GS_CMP_TYPE_SIGNED : GS_CMP_TYPE_UNSIGNED;
            if (v->cmp <= GS_CMP_INVALID || v->cmp >= GS_CMP_COUNT) GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: invalid direction", GS__WHO);
            if (v->cmp_type == GS_CMP_TYPE_DEFAULT) v->cmp_type = def;
            if (v->cmp_type < GS_CMP_TYPE_FLOAT || v->cmp_type >= GS_CMP_TYPE_COUNT)
                GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: invalid comparison type %d", GS__WHO, (int)v->cmp_type);
            if (fl != (v->cmp_type == GS_CMP_TYPE_FLOAT || v->cmp_type == GS_CMP_TYPE_TOTALORDER) ||
                (x->dtype == GS_PRED && v->cmp_type != GS_CMP_TYPE_UNSIGNED))
                GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: comparison type %s does not fit %s", GS__WHO,
                         v->cmp_type == GS_CMP_TYPE_FLOAT ? "FLOAT" : v->cmp_type == GS_CMP_TYPE_TOTALORDER ? "TOTALORDER"
                         : v->cmp_type == GS_CMP_TYPE_SIGNED ? "SIGNED" : "UNSIGNED", gs_dtype_name(x->dtype));
            s->dtype = GS_PRED;
        }
        return GS_OK;
    }
    case GS_OP_SELECT: {
        const gs_shape *a = &v->operands[1]->shape, *bb = &v->operands[2]->shape;
        if (x->dtype != GS_PRED) GS__FAIL(GS_ERR_SHAPE, "%s %s: the predicate must be pred, not %s", GS__WHO, gs_dtype_name(x->dtype));
        if (!gs_shape_equal(a, bb))
            GS__FAIL(GS_ERR_SHAPE, "%s %s: branch shapes differ: %s vs %s", GS__WHO, gs__shape_str(a, b1, sizeof b1), gs__shape_str(bb, b2, sizeof b2));
        if (x->rank != 0) {
            gs_shape p = *a;
            p.dtype = GS_PRED;
            if (!gs_shape_equal(x, &p))
                GS__FAIL(GS_ERR_SHAPE, "%s %s: predicate %s must be a scalar or match %s", GS__WHO, gs__shape_str(x, b1, sizeof b1),
                         gs__shape_str(a, b2, sizeof b2));
        }
        *s = *a;
        return GS_OK;
    }
    case GS_OP_CLAMP: {
        const gs_shape *xx = &v->operands[1]->shape, *hi = &v->operands[2]->shape;
        for (i = 0; i < 3; i += 2) {
            const gs_shape *bound = i == 0 ? x : hi;
            if (bound->dtype != xx->dtype || (bound->rank != 0 && !gs_shape_equal(bound, xx)))
                GS__FAIL(GS_ERR_SHAPE, "%s %s: bound %s must be a scalar or match %s", GS__WHO, gs__shape_str(bound, b1, sizeof b1),
                         gs__shape_str(xx, b2, sizeof b2));
        }
        if (xx->dtype == GS_PRED || !gs__is_numeric(xx->dtype) || gs__is_complex(xx->dtype))
            GS__FAIL(GS_ERR_SHAPE, "%s %s: clamp of %s", GS__WHO, gs_dtype_name(xx->dtype));
        *s = *xx;
        return GS_OK;
    }
    case GS_OP_SINE: case GS_OP_COSINE: case GS_OP_TAN: case GS_OP_EXPM1: case GS_OP_LOG1P: case GS_OP_CBRT:
    case GS_OP_ERF: case GS_OP_IS_FINITE: case GS_OP_REDUCE_PRECISION:
        if (!gs__is_float(x->dtype)) GS__FAIL(GS_ERR_SHAPE, "%s %s: needs a real floating-point operand, got %s", GS__WHO, gs_dtype_name(x->dtype));
        if (v->op == GS_OP_REDUCE_PRECISION && (v->rp_exp < 1 || v->rp_mant < 0))
            GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: exponent_bits %d must be >= 1 and mantissa_bits %d >= 0", GS__WHO, v->rp_exp, v->rp_mant);
        *s = *x;
        if (v->op == GS_OP_IS_FINITE) s->dtype = GS_PRED;
        return GS_OK;
    case GS_OP_POPCNT: case GS_OP_CLZ:
        if (!gs__is_int(x->dtype)) GS__FAIL(GS_ERR_SHAPE, "%s %s: needs an integer operand, got %s", GS__WHO, gs_dtype_name(x->dtype));
        *s = *x;
        return GS_OK;
    case GS_OP_REAL: case GS_OP_IMAG:
        if (!gs__is_float(x->dtype) && !gs__is_complex(x->dtype))
            GS__FAIL(GS_ERR_SHAPE, "%s %s: needs a complex or real floating-point operand, got %s", GS__WHO, gs_dtype_name(x->dtype));
        *s = *x;
        if (gs__is_complex(x->dtype)) s->dtype = x->dtype == GS_C64 ? GS_F32 : GS_F64;
        return GS_OK;
    case GS_OP_ATAN2: case GS_OP_SHIFT_LEFT: case GS_OP_SHIFT_RIGHT_LOGICAL: case GS_OP_SHIFT_RIGHT_ARITHMETIC: case GS_OP_COMPLEX: {
        const gs_shape *y = &v->operands[1]->shape;
        bool fl = v->op == GS_OP_ATAN2 || v->op == GS_OP_COMPLEX;
        if (!gs_shape_equal(x, y))
            GS__FAIL(GS_ERR_SHAPE, "%s %s: operand shapes differ: %s vs %s (broadcast explicitly)", GS__WHO, gs__shape_str(x, b1, sizeof b1),
                     gs__shape_str(y, b2, sizeof b2));
        if (fl ? !gs__is_float(x->dtype) : !gs__is_int(x->dtype))
            GS__FAIL(GS_ERR_SHAPE, "%s %s: needs %s operands, got %s", GS__WHO, fl ? "real floating-point" : "integer", gs_dtype_name(x->dtype));
        *s = *x;
        if (v->op == GS_OP_COMPLEX) {
            if (x->dtype != GS_F32 && x->dtype != GS_F64) GS__FAIL(GS_ERR_SHAPE, "%s %s: needs f32 or f64 operands, got %s", GS__WHO, gs_dtype_name(x->dtype));
            s->dtype = x->dtype == GS_F32 ? GS_C64 : GS_C128;
        }
        return GS_OK;
    }
    case GS_OP_BITCAST_CONVERT: return gs__infer_bitcast(ctx, v, s, x);
    default: break;
    }
    GS__FAIL(GS_ERR_INVALID_ARG, "invalid op %d", (int)v->op);
}

/* reductions, dot, convolution, windows, gather/scatter, sort, top-k, scans */
GS__FN gs_result gs__infer_reduce(gs_ctx *ctx, gs_value *v, gs_shape *s, const gs_shape *x) {
    char b1[96], b2[96];
    int i, j;
    switch (v->op) {
    case GS_OP_REDUCE:
        if (gs__need_scalar(ctx, v, 1, x->dtype)) return ctx->err;
        if (!gs__reduce_kind_ok(v->reduce, x->dtype, false))
            GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: reduction %s is not valid for %s", GS__WHO, gs_reduce_kind_name(v->reduce), gs_dtype_name(x->dtype));
        if (gs__dims_unique(ctx, v, "dimensions", v->dims, v->n_dims, x->rank)) return ctx->err;
        s->dtype = x->dtype;
        s->rank = 0;
        for (i = 0; i < x->rank; i++) {
            bool red = false;
            for (j = 0; j < v->n_dims; j++) red = red || v->dims[j] == i;
            if (!red) s->dims[s->rank++] = x->dims[i];
        }
        return GS_OK;
    case GS_OP_ARGMAX: case GS_OP_ARGMIN:
        if (x->rank == 0 || v->dim < 0 || v->dim >= x->rank)
            GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: dim %lld is out of range for rank %d", GS__WHO, (long long)v->dim, x->rank);
        if (!gs__is_numeric(x->dtype) || gs__is_complex(x->dtype))
            GS__FAIL(GS_ERR_SHAPE, "%s %s: not defined for %s", GS__WHO, gs_dtype_name(x->dtype));
        s->dtype = GS_S32;
        s->rank = 0;
        for (i = 0; i < x->rank; i++)
            if (i != v->dim) s->dims[s->rank++] = x->dims[i];
        return GS_OK;
    case GS_OP_DOT: {
        const gs_shape *y = &v->operands[1]->shape;
        const gs_dot_dims *d = v->dot;
        int64_t all_l[2 * GS_MAX_RANK], all_r[2 * GS_MAX_RANK];
        if (x->dtype != y->dtype || !gs__is_numeric(x->dtype))
            GS__FAIL(GS_ERR_SHAPE, "%s %s: operands need one numeric dtype (%s vs %s)", GS__WHO, gs_dtype_name(x->dtype), gs_dtype_name(y->dtype));
        if (d->n_batch < 0 || d->n_contract < 0 || d->n_batch + d->n_contract > x->rank || d->n_batch + d->n_contract > y->rank)
            GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: %d batch + %d contracting dims do not fit ranks %d and %d", GS__WHO, d->n_batch, d->n_contract,
                     x->rank, y->rank);
        for (i = 0; i < d->n_batch; i++) { all_l[i] = d->lhs_batch[i]; all_r[i] = d->rhs_batch[i]; }
        for (i = 0; i < d->n_contract; i++) { all_l[d->n_batch + i] = d->lhs_contract[i]; all_r[d->n_batch + i] = d->rhs_contract[i]; }
        if (gs__dims_unique(ctx, v, "lhs batch+contracting dims", all_l, d->n_batch + d->n_contract, x->rank)) return ctx->err;
        if (gs__dims_unique(ctx, v, "rhs batch+contracting dims", all_r, d->n_batch + d->n_contract, y->rank)) return ctx->err;
        for (i = 0; i < d->n_batch; i++)
            if (x->dims[d->lhs_batch[i]] != y->dims[d->rhs_batch[i]])
                GS__FAIL(GS_ERR_SHAPE, "%s %s: lhs batch dim %lld (%lld) != rhs batch dim %lld (%lld)", GS__WHO, (long long)d->lhs_batch[i],
                         (long long)x->dims[d->lhs_batch[i]], (long long)d->rhs_batch[i], (long long)y->dims[d->rhs_batch[i]]);
        for (i = 0; i < d->n_contract; i++)
            if (x->dims[d->lhs_contract[i]] != y->dims[d->rhs_contract[i]])
                GS__FAIL(GS_ERR_SHAPE, "%s %s: lhs contracting dim %lld (%lld) != rhs contracting dim %lld (%lld)", GS__WHO,
                         (long long)d->lhs_contract[i], (long long)x->dims[d->lhs_contract[i]], (long long)d->rhs_contract[i],
                         (long long)y->dims[d->rhs_contract[i]]);
        s->dtype = x->dtype;
        s->rank = 0;
        for (i = 0; i < d->n_batch; i++) s->dims[s->rank++] = x->dims[d->lhs_batch[i]];
        for (j = 0; j < 2; j++) {
            const gs_shape *o = j ? y : x;
            const int64_t *al = j ? all_r : all_l;
            for (i = 0; i < o->rank; i++) {
                int k;
                bool used = false;
                for (k = 0; k < d->n_batch + d->n_contract; k++) used = used || al[k] == i;
                if (!used) {
                    if (s->rank >= GS_MAX_RANK) GS__FAIL(GS_ERR_SHAPE, "%s %s: result rank exceeds GS_MAX_RANK", GS__WHO);
                    s->dims[s->rank++] = o->dims[i];
                }
            }
        }
        return GS_OK;
    }
    case GS_OP_CONVOLUTION:
        return gs__infer_conv(ctx, v);
    case GS_OP_REDUCE_WINDOW:
        if (gs__need_scalar(ctx, v, 1, x->dtype)) return ctx->err;
        if (!gs__reduce_kind_ok(v->reduce, x->dtype, false))
            GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: reduction %s is not valid for %s", GS__WHO, gs_reduce_kind_name(v->reduce), gs_dtype_name(x->dtype));
        if (gs__check_window(ctx, v, v->window, x->rank)) return ctx->err;
        *s = *x;
        for (i = 0; i < x->rank; i++) s->dims[i] = gs__window_out(&v->window[i], x->dims[i]);
        return gs__check_window_out(ctx, v, x->rank, s->dims);
    case GS_OP_GATHER:
        return gs__infer_gather(ctx, v);
    case GS_OP_SCATTER:
        return gs__infer_scatter(ctx, v);
    case GS_OP_SORT: {
        gs_shape *ts;
        if (v->n_operands < 1) GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: needs at least one operand", GS__WHO);
        if (x->rank == 0 || v->dim < 0 || v->dim >= x->rank)
            GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: dimension %lld is out of range for rank %d", GS__WHO, (long long)v->dim, x->rank);
        for (i = 1; i < v->n_operands; i++) {
            const gs_shape *y = &v->operands[i]->shape;
            if (y->rank != x->rank || memcmp(y->dims, x->dims, sizeof(int64_t) * (size_t)x->rank) != 0)
                GS__FAIL(GS_ERR_SHAPE, "%s %s: operand %d %s has other dims than operand 0 %s", GS__WHO, i, gs__shape_str(y, b1, sizeof b1),
                         gs__shape_str(x, b2, sizeof b2));
        }
        if (v->n_operands == 1) {
            *s = *x;
            return GS_OK;
        }
        ts = (gs_shape *)gs__arena_alloc(ctx, sizeof(gs_shape) * (size_t)v->n_operands);
        if (!ts) return ctx->err;
        for (i = 0; i < v->n_operands; i++) ts[i] = v->operands[i]->shape;
        v->tuple = ts;
        v->n_tuple = v->n_operands;
        GS__ZERO(*s);
        s->dtype = GS_TUPLE;
        return GS_OK;
    }
    case GS_OP_TOPK: {
        gs_shape *ts;
        if (x->rank == 0) GS__FAIL(GS_ERR_SHAPE, "%s %s: needs rank >= 1", GS__WHO);
        if (x->dtype == GS_PRED) GS__FAIL(GS_ERR_SHAPE, "%s %s: not defined for pred", GS__WHO);
        if (v->dim < 0 || v->dim > x->dims[x->rank - 1])
            GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: k = %lld is outside [0, %lld]", GS__WHO, (long long)v->dim, (long long)x->dims[x->rank - 1]);
        ts = (gs_shape *)gs__arena_alloc(ctx, sizeof(gs_shape) * 2);
        if (!ts) return ctx->err;
        ts[0] = *x;
        ts[0].dims[x->rank - 1] = v->dim;
        ts[1] = ts[0];
        ts[1].dtype = GS_S32;
        v->tuple = ts;
        v->n_tuple = 2;
        GS__ZERO(*s);
        s->dtype = GS_TUPLE;
        return GS_OK;
    }
    case GS_OP_CUMSUM: case GS_OP_CUMPROD: case GS_OP_CUMMAX: case GS_OP_CUMMIN:
        if (x->rank == 0 || v->dim < 0 || v->dim >= x->rank)
            GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: dimension %lld is out of range for rank %d", GS__WHO, (long long)v->dim, x->rank);
        if (x->dtype == GS_PRED) GS__FAIL(GS_ERR_SHAPE, "%s %s: not defined for pred", GS__WHO);
        *s = *x;
        return GS_OK;
    default: break;
    }
    GS__FAIL(GS_ERR_INVALID_ARG, "invalid op %d", (int)v->op);
}

/* rng, collectives, manual-region boundaries, tuples, while */
GS__FN int gs__n_subgraphs(const gs_value *v) {
    if (v->op == GS_OP_WHILE) return 2;
    if (v->op == GS_OP_CONDITIONAL) return v->n_branches;
    return 0;
}

GS__FN gs_graph *gs__subgraph(const gs_value *v, int k) {
    if (v->op == GS_OP_WHILE) return k == 0 ? v->cond : k == 1 ? v->body : NULL;
    if (v->op == GS_OP_CONDITIONAL) return k >= 0 && k < v->n_branches ? v->branches[k] : NULL;
    return NULL;
}

/* ---- ragged-dot ---- */
/* The mode of ragged dot d over an lhs of rank lr and the lhs dims group_sizes' prefix dims stand for (XLA's
   InferRaggedDotOpShape): -1 when d has not exactly one ragged dim in range. */
GS__FN int gs__ragged_info(const gs_ragged_dot_dims *d, int lr, gs__rdinfo *I) {
    const gs_dot_dims *dd = &d->dot;
    int i;
    memset(I, 0, sizeof *I);
    if (d->n_lhs_ragged != 1 || d->lhs_ragged[0] < 0 || d->lhs_ragged[0] >= lr) return -1;
    I->ragged = (int)d->lhs_ragged[0];
    I->mode = GS__RD_NONCONTRACT;
    for (i = 0; i < dd->n_batch; i++)
        if (dd->lhs_batch[i] == I->ragged) { I->mode = GS__RD_BATCH; I->pos = i; }
    for (i = 0; i < dd->n_contract; i++)
        if (dd->lhs_contract[i] == I->ragged) { I->mode = GS__RD_CONTRACT; I->pos = i; }
    if (I->mode == GS__RD_BATCH) {
        for (i = 0; i < I->pos; i++) I->pre[I->n_pre++] = dd->lhs_batch[i];
        return I->mode;
    }
    for (i = 0; i < dd->n_batch; i++) I->pre[I->n_pre++] = dd->lhs_batch[i];
    if (I->mode == GS__RD_CONTRACT) {
        for (i = 0; i < I->pos; i++) I->pre[I->n_pre++] = dd->lhs_contract[i];
        return I->mode;
    }
    for (i = 0; i < I->ragged; i++) {
        int k;
        bool used = false;
        for (k = 0; k < dd->n_batch; k++) used = used || dd->lhs_batch[k] == i;
        for (k = 0; k < dd->n_contract; k++) used = used || dd->lhs_contract[k] == i;
        if (!used) I->pre[I->n_pre++] = i;
    }
    return I->mode;
}

/* the "dims out of range / not unique" checks of XLA's ValidateDotDimensionNumbers */
GS__FN bool gs__ragged_dims_ok(const gs_dot_dims *d, int lr, int rr, bool *unique) {
    int i, j;
    int64_t l[2 * GS_MAX_RANK], r[2 * GS_MAX_RANK];
    int n = d->n_contract + d->n_batch;
    *unique = true;
    for (i = 0; i < d->n_contract; i++) { l[i] = d->lhs_contract[i]; r[i] = d->rhs_contract[i]; }
    for (i = 0; i < d->n_batch; i++) { l[d->n_contract + i] = d->lhs_batch[i]; r[d->n_contract + i] = d->rhs_batch[i]; }
    for (i = 0; i < n; i++)
        if (l[i] < 0 || l[i] >= lr || r[i] < 0 || r[i] >= rr) return false;
    for (i = 0; i < n; i++)
        for (j = 0; j < i; j++)
            if (l[i] == l[j] || r[i] == r[j]) *unique = false;
    return true;
}

/* ragged-dot(lhs, rhs, group_sizes): XLA's checks and messages (shape_inference.cc InferRaggedDotOpShape), then
   the result [g (contracting mode)] + batch dims + lhs free dims + rhs free dims but the group dim */
GS__FN gs_result gs__infer_ragged_dot(gs_ctx *ctx, gs_value *v, gs_shape *s) {
    const gs_shape *x = &v->operands[0]->shape, *y = &v->operands[1]->shape, *gz = &v->operands[2]->shape;
    const gs_ragged_dot_dims *rd = v->ragged;
    const gs_dot_dims *d = &rd->dot;
    char bl[96], br[96], head[300];
    gs__rdinfo I;
    int i, j, mode;
    int64_t g;
    bool unique;
    if (x->dtype != y->dtype || !gs__is_numeric(x->dtype))
        GS__FAIL(GS_ERR_SHAPE, "%s %s: lhs and rhs need one numeric dtype (%s vs %s)", GS__WHO, gs_dtype_name(x->dtype),
                 gs_dtype_name(y->dtype));
    if (!gs__is_int(gz->dtype) || gz->rank < 1)
        GS__FAIL(GS_ERR_SHAPE, "%s %s: group_sizes must be an integer array of rank >= 1, not %s", GS__WHO,
                 gs__shape_str(gz, bl, sizeof bl));
    if (d->n_batch < 0 || d->n_contract < 0 || d->n_batch + d->n_contract > GS_MAX_RANK || rd->n_lhs_ragged < 0 ||
        rd->n_lhs_ragged > GS_MAX_RANK || rd->n_rhs_group < 0 || rd->n_rhs_group > GS_MAX_RANK)
        GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: bad dimension number counts", GS__WHO);
    if (!gs__ragged_dims_ok(d, x->rank, y->rank, &unique))
        GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: A dimension number is out of range in Dot", GS__WHO);
    if (!unique) GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: A dimension number is not unique in Dot", GS__WHO);
    snprintf(head, sizeof head, "%s %s: Cannot infer shape for dot operation: %s <dot> %s.", GS__WHO,
             gs__shape_str(x, bl, sizeof bl), gs__shape_str(y, br, sizeof br));
    for (i = 0; i < d->n_contract; i++)
        if (x->dims[d->lhs_contract[i]] != y->dims[d->rhs_contract[i]])
            GS__FAIL(GS_ERR_SHAPE, "%s Contracting dimension sizes are not compatible.", head);
    for (i = 0; i < d->n_batch; i++)
        if (x->dims[d->lhs_batch[i]] != y->dims[d->rhs_batch[i]])
            GS__FAIL(GS_ERR_SHAPE, "%s Batch dimension sizes are not compatible.", head);
    snprintf(head, sizeof head, "%s %s: Cannot infer shape for ragged dot operation: %s <ragged_dot> %s.", GS__WHO, bl, br);
    if (rd->n_lhs_ragged != 1) GS__FAIL(GS_ERR_SHAPE, "%s There must be exactly one ragged dimension in the lhs.", head);
    mode = gs__ragged_info(rd, x->rank, &I);
    if (mode < 0)
        GS__FAIL(GS_ERR_SHAPE, "%s lhs ragged dimension %lld is out of range [0, %d)", head, (long long)rd->lhs_ragged[0], x->rank);
    if (gz->rank != 1) {
        if (gz->rank != I.n_pre + 1)
            GS__FAIL(GS_ERR_SHAPE, "%s expected group_sizes to have rank %d, got %d", head, I.n_pre + 1, gz->rank);
        for (i = 0; i < I.n_pre; i++)
            if (gz->dims[i] != x->dims[I.pre[i]]) {
                gs__sb sb;
                gs__sb_init(&sb, ctx);
                for (j = 0; j < I.n_pre; j++) gs__sb_printf(&sb, "%s%lld", j ? ", " : "", (long long)x->dims[I.pre[j]]);
                gs__sb_printf(&sb, ", %lld], got [", (long long)gz->dims[gz->rank - 1]);
                for (j = 0; j < gz->rank; j++) gs__sb_printf(&sb, "%s%lld", j ? ", " : "", (long long)gz->dims[j]);
                gs__err(ctx, GS_ERR_SHAPE, "%s group_sizes is expected to have shape [%s]", head, sb.oom ? "?" : sb.buf);
                gs__sb_free(&sb);
                return ctx->err;
            }
    }
    g = gz->dims[gz->rank - 1];
    for (i = 0; i < rd->n_rhs_group; i++) {
        int64_t r = rd->rhs_group[i];
        if (r < 0 || r >= y->rank) GS__FAIL(GS_ERR_SHAPE, "%s rhs group dimension %lld is out of range [0, %d)", head, (long long)r, y->rank);
        for (j = 0; j < d->n_batch; j++)
            if (d->rhs_batch[j] == r) GS__FAIL(GS_ERR_SHAPE, "%s rhs group dimension cannot be a batch or contracting dimension", head);
        for (j = 0; j < d->n_contract; j++)
            if (d->rhs_contract[j] == r) GS__FAIL(GS_ERR_SHAPE, "%s rhs group dimension cannot be a batch or contracting dimension", head);
    }
    if (mode != GS__RD_NONCONTRACT && rd->n_rhs_group != 0)
        GS__FAIL(GS_ERR_SHAPE, "%s There must be zero group dimensions in the rhs when the ragged dimension is batch or contracting.", head);
    if (mode == GS__RD_NONCONTRACT && rd->n_rhs_group != 1)
        GS__FAIL(GS_ERR_SHAPE, "%s There must be exactly one group dimension in the rhs when the lhs ragged dimension is non-contracting.", head);
    if (mode == GS__RD_NONCONTRACT && y->dims[rd->rhs_group[0]] != g)
        GS__FAIL(GS_ERR_SHAPE, "%s rhs group dimension is expected to have size=%lld, got %lld", head, (long long)g,
                 (long long)y->dims[rd->rhs_group[0]]);
    s->dtype = x->dtype;
    s->rank = 0;
    if (mode == GS__RD_CONTRACT) s->dims[s->rank++] = g;
    for (i = 0; i < d->n_batch; i++) s->dims[s->rank++] = x->dims[d->lhs_batch[i]];
    for (j = 0; j < 2; j++) {
        const gs_shape *o = j ? y : x;
        for (i = 0; i < o->rank; i++) {
            int k;
            bool used = j && mode == GS__RD_NONCONTRACT && rd->rhs_group[0] == i;
            for (k = 0; k < d->n_batch; k++) used = used || (j ? d->rhs_batch[k] : d->lhs_batch[k]) == i;
            for (k = 0; k < d->n_contract; k++) used = used || (j ? d->rhs_contract[k] : d->lhs_contract[k]) == i;
            if (used) continue;
            if (s->rank >= GS_MAX_RANK) GS__FAIL(GS_ERR_SHAPE, "%s %s: result rank exceeds GS_MAX_RANK", GS__WHO);
            s->dims[s->rank++] = o->dims[i];
        }
    }
    return GS_OK;
}

/* conditional(selector, arg0, .., argN-1): selector pred[] with 2 branches or s32[] with N >= 1; branch k takes
   one parameter of arg k's shape; every branch returns the same shape, the conditional's */
/* ragged-all-to-all(input[N, rest], output[M, rest], input_offsets, send_sizes, output_offsets, recv_sizes) ->
   output's shape. XLA's verifier: the four metadata operands have one shape, of rank 1 or 2; the result is the
   output operand's shape. Beyond it (XLA's runtimes copy rows of the output's row length from the input): input and
   output share the element type and the dims after the first, and the metadata is integer; K (the metadata's
   element count) is a multiple of the group size when the group is known. */
GS__FN gs_result gs__infer_ragged_a2a(gs_ctx *ctx, gs_value *v, gs_shape *s) {
    static const char *const what[6] = {"input", "output", "input_offsets", "send_sizes", "output_offsets", "recv_sizes"};
    const gs_shape *in = &v->operands[0]->shape, *out = &v->operands[1]->shape, *m = &v->operands[2]->shape;
    char b1[96], b2[96];
    int i;
    int64_t K, gsz;
    if (gs__check_groups(ctx, v, &v->coll.groups)) return ctx->err;
    if (in->rank < 1 || out->rank < 1)
        GS__FAIL(GS_ERR_SHAPE, "%s %s: the %s (%s) needs a ragged dim 0 (rank >= 1)", GS__WHO, in->rank < 1 ? what[0] : what[1],
                 gs__shape_str(in->rank < 1 ? in : out, b1, sizeof b1));
    if (in->dtype != out->dtype || in->rank != out->rank)
        GS__FAIL(GS_ERR_SHAPE, "%s %s: input %s and output %s differ in %s", GS__WHO, gs__shape_str(in, b1, sizeof b1),
                 gs__shape_str(out, b2, sizeof b2), in->dtype != out->dtype ? "element type" : "rank");
    for (i = 1; i < in->rank; i++)
        if (in->dims[i] != out->dims[i])
            GS__FAIL(GS_ERR_SHAPE, "%s %s: input %s and output %s differ in dim %d (only dim 0 is ragged)", GS__WHO,
                     gs__shape_str(in, b1, sizeof b1), gs__shape_str(out, b2, sizeof b2), i);
    for (i = 2; i < 6; i++) {
        const gs_shape *o = &v->operands[i]->shape;
        if (o->rank != 1 && o->rank != 2)
            GS__FAIL(GS_ERR_SHAPE, "%s %s: operand %d (%s, %s) must be rank 1 or 2, not %s", GS__WHO, i, what[i],
                     v->operands[i]->name, gs__shape_str(o, b1, sizeof b1));
        if (!gs__is_int(o->dtype))
            GS__FAIL(GS_ERR_SHAPE, "%s %s: operand %d (%s, %s) must be integer, not %s", GS__WHO, i, what[i],
                     v->operands[i]->name, gs__shape_str(o, b1, sizeof b1));
        if (!gs_shape_equal(o, m))
            GS__FAIL(GS_ERR_SHAPE, "%s %s: operands 2 (input_offsets, %s) and %d (%s, %s) have different shapes", GS__WHO,
                     gs__shape_str(m, b1, sizeof b1), i, what[i], gs__shape_str(o, b2, sizeof b2));
    }
    K = gs__numel(m);
    gsz = gs__group_size(v);
    if (gsz > 0 && K % gsz != 0)
        GS__FAIL(GS_ERR_SHAPE, "%s %s: %lld offsets/sizes do not divide into the %lld members of a group", GS__WHO,
                 (long long)K, (long long)gsz);
    *s = *out;
    return GS_OK;
}

GS__FN gs_result gs__infer_conditional(gs_ctx *ctx, gs_value *v) {
    const gs_value *sel = v->n_operands ? v->operands[0] : NULL, *root0 = NULL;
    int k, n = v->n_branches;
    if (n < 1 || !v->branches) GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: needs at least one branch", GS__WHO);
    if (v->n_operands != n + 1)
        GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: %d branches take %d operands (the selector and one argument each), got %d",
                 GS__WHO, n, n + 1, v->n_operands);
    if (sel->shape.rank != 0 || (sel->shape.dtype != GS_PRED && sel->shape.dtype != GS_S32))
        GS__FAIL(GS_ERR_SHAPE, "%s %s: the selector must be pred[] or s32[]", GS__WHO);
    if (sel->shape.dtype == GS_PRED && n != 2)
        GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: a pred selector takes 2 branches (true, false), got %d", GS__WHO, n);
    for (k = 0; k < n; k++) {
        const gs_graph *b = v->branches[k];
        const gs_value *p, *root;
        if (!b || b->ctx != ctx) GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: branch %d is missing or from another context", GS__WHO, k);
        if (b == v->graph) GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: branch %d is the enclosing graph", GS__WHO, k);
        if (stbds_arrlen(b->params) != 1 || !b->params[0])
            GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: branch %s must have exactly one parameter", GS__WHO, b->name);
        p = b->params[0];
        if (!gs__vshape_equal(p, v->operands[k + 1]))
            GS__FAIL(GS_ERR_SHAPE, "%s %s: branch %s's parameter shape differs from its argument %s", GS__WHO, b->name,
                     v->operands[k + 1]->name);
        if (!(root = b->root)) GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: branch %s has no root", GS__WHO, b->name);
        if (root0 && !gs__vshape_equal(root, root0))
            GS__FAIL(GS_ERR_SHAPE, "%s %s: branch %s returns a different shape than branch %s", GS__WHO, b->name,
                     v->branches[0]->name);
        if (!root0) root0 = root;
    }
    v->shape = root0->shape;
    v->n_tuple = root0->n_tuple;
    v->tuple = root0->tuple;
    v->tree = root0->tree;
    v->n_tree = root0->n_tree;
    return GS_OK;
}

GS__FN gs_result gs__infer_other(gs_ctx *ctx, gs_value *v, gs_shape *s, const gs_shape *x) {
    char b1[96], b2[96];
    int i;
    switch (v->op) {
    case GS_OP_RNG: {
        const gs_shape *f = v->rng_full;   /* the shard form: s is the shard, f the full array */
        if (f) {
            char who[160];
            snprintf(who, sizeof who, "%s %s: full_shape", GS__WHO);
            if (gs__check_shape(ctx, who, f)) return ctx->err;
        }
        if (!f && v->n_operands != 2) GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: takes 2 operands (lo, hi), got %d", GS__WHO, v->n_operands);
        if (f && v->n_operands != 2 + f->rank)
            GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: needs lo, hi and %d offsets (the rank of full_shape %s), got %d operands", GS__WHO,
                     f->rank, gs__shape_str(f, b1, sizeof b1), v->n_operands);
        if (gs__check_shape(ctx, v->name, s)) return ctx->err;
        if (s->dtype == GS_PRED) GS__FAIL(GS_ERR_SHAPE, "%s %s: random pred is not supported (compare a uniform instead)", GS__WHO);
        if (gs__need_scalar(ctx, v, 0, s->dtype) || gs__need_scalar(ctx, v, 1, s->dtype)) return ctx->err;
        if (!f) return GS_OK;
        if (f->dtype != s->dtype || f->rank != s->rank)
            GS__FAIL(GS_ERR_SHAPE, "%s %s: shard shape %s and full_shape %s differ in %s", GS__WHO, gs__shape_str(s, b1, sizeof b1),
                     gs__shape_str(f, b2, sizeof b2), f->dtype != s->dtype ? "dtype" : "rank");
        for (i = 0; i < s->rank; i++)
            if (s->dims[i] > f->dims[i])
                GS__FAIL(GS_ERR_SHAPE, "%s %s: shard dim %d (%lld) is larger than the full dim (%lld)", GS__WHO, i, (long long)s->dims[i],
                         (long long)f->dims[i]);
        for (i = 2; i < v->n_operands; i++) {
            const gs_shape *o = &v->operands[i]->shape;
            if (o->rank != 0 || o->dtype != GS_S32)
                GS__FAIL(GS_ERR_SHAPE, "%s %s: offset operand %d (%s) must be an s32 scalar, not %s", GS__WHO, i, v->operands[i]->name,
                         gs__shape_str(o, b1, sizeof b1));
        }
        return GS_OK;
    }
    case GS_OP_ALL_REDUCE: case GS_OP_ALL_GATHER: case GS_OP_REDUCE_SCATTER: case GS_OP_ALL_TO_ALL: {
        int64_t gsz;
        if (gs__check_groups(ctx, v, &v->coll.groups)) return ctx->err;
        gsz = gs__group_size(v);
        *s = *x;
        if (v->op == GS_OP_ALL_REDUCE || v->op == GS_OP_REDUCE_SCATTER) {
            if (!gs__reduce_kind_ok(v->reduce, x->dtype, false))
                GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: reduction %s is not valid for %s", GS__WHO, gs_reduce_kind_name(v->reduce), gs_dtype_name(x->dtype));
        }
        if (v->op == GS_OP_ALL_GATHER || v->op == GS_OP_REDUCE_SCATTER) {
            if (x->rank == 0 || v->dim < 0 || v->dim >= x->rank)
                GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: dimension %lld is out of range for rank %d", GS__WHO, (long long)v->dim, x->rank);
            if (v->op == GS_OP_ALL_GATHER) s->dims[v->dim] *= gsz;
            else {
                if (x->dims[v->dim] % gsz != 0)
                    GS__FAIL(GS_ERR_SHAPE, "%s %s: dim %lld (%lld) is not divisible by the group size %lld", GS__WHO, (long long)v->dim,
                             (long long)x->dims[v->dim], (long long)gsz);
                s->dims[v->dim] /= gsz;
            }
        }
        if (v->op == GS_OP_ALL_TO_ALL) {
            if (x->rank == 0 || v->split_dim < 0 || v->split_dim >= x->rank || v->concat_dim < 0 || v->concat_dim >= x->rank)
                GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: split/concat dims %lld/%lld are out of range for rank %d", GS__WHO,
                         (long long)v->split_dim, (long long)v->concat_dim, x->rank);
            if (x->dims[v->split_dim] % gsz != 0)
                GS__FAIL(GS_ERR_SHAPE, "%s %s: split dim %lld (%lld) is not divisible by the group size %lld", GS__WHO, (long long)v->split_dim,
                         (long long)x->dims[v->split_dim], (long long)gsz);
            s->dims[v->split_dim] /= gsz;
            s->dims[v->concat_dim] *= gsz;
        }
        return gs__check_shape(ctx, v->name, s);
    }
    case GS_OP_COLLECTIVE_PERMUTE: {
        int64_t p, q;
        if (v->n_pairs < 0) GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: negative pair count", GS__WHO);
        for (p = 0; p < v->n_pairs; p++) {
            if (v->pairs[2 * p] < 0 || v->pairs[2 * p + 1] < 0)
                GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: pair {%lld,%lld} has a negative id", GS__WHO, (long long)v->pairs[2 * p], (long long)v->pairs[2 * p + 1]);
            for (q = 0; q < p; q++) {
                if (v->pairs[2 * q] == v->pairs[2 * p])
                    GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: source %lld appears in two pairs", GS__WHO, (long long)v->pairs[2 * p]);
                if (v->pairs[2 * q + 1] == v->pairs[2 * p + 1])
                    GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: target %lld appears in two pairs", GS__WHO, (long long)v->pairs[2 * p + 1]);
            }
        }
        *s = *x;
        return GS_OK;
    }
    case GS_OP_TO_MANUAL: case GS_OP_TO_FULL:
        if (gs__check_shape(ctx, v->name, s)) return ctx->err;
        if (s->rank != x->rank || s->dtype != x->dtype)
            GS__FAIL(GS_ERR_SHAPE, "%s %s: %s must keep the rank and dtype of %s", GS__WHO, gs__shape_str(s, b1, sizeof b1), gs__shape_str(x, b2, sizeof b2));
        for (i = 0; i < s->rank; i++) {
            int64_t shard = v->op == GS_OP_TO_MANUAL ? s->dims[i] : x->dims[i];
            int64_t full = v->op == GS_OP_TO_MANUAL ? x->dims[i] : s->dims[i];
            if (shard > full)
                GS__FAIL(GS_ERR_SHAPE, "%s %s: shard dim %d (%lld) is larger than the full dim (%lld)", GS__WHO, i, (long long)shard, (long long)full);
        }
        return GS_OK;
    case GS_OP_TUPLE: return gs__infer_tuple(ctx, v);
    case GS_OP_GET_TUPLE_ELEMENT: return gs__infer_gte(ctx, v);
    case GS_OP_WHILE: {
        const gs_value *init = v->operands[0];
        gs_graph *gr[2];
        gr[0] = v->cond;
        gr[1] = v->body;
        for (i = 0; i < 2; i++) {
            const gs_value *p, *root;
            const char *what = i ? "body" : "condition";
            if (!gr[i] || gr[i]->ctx != ctx) GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: %s graph is missing or from another context", GS__WHO, what);
            if (gr[i] == v->graph) GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: %s graph is the enclosing graph", GS__WHO, what);
            if (stbds_arrlen(gr[i]->params) != 1 || !gr[i]->params[0])
                GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: %s graph %s must have exactly one parameter", GS__WHO, what, gr[i]->name);
            p = gr[i]->params[0];
            if (!gs__vshape_equal(p, init))
                GS__FAIL(GS_ERR_SHAPE, "%s %s: the %s's parameter shape differs from the initial state", GS__WHO, what);
            root = gr[i]->root;
            if (!root) GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: %s graph %s has no root", GS__WHO, what, gr[i]->name);
            if (i == 0) {
                if (root->shape.dtype != GS_PRED || root->shape.rank != 0)
                    GS__FAIL(GS_ERR_SHAPE, "%s %s: condition %s must return pred[]", GS__WHO, gr[i]->name);
            } else if (!gs__vshape_equal(root, init)) {
                GS__FAIL(GS_ERR_SHAPE, "%s %s: body %s returns a different shape than the state", GS__WHO, gr[i]->name);
            }
        }
        v->shape = init->shape;
        v->n_tuple = init->n_tuple;
        v->tuple = init->tuple;
        v->tree = init->tree;
        v->n_tree = init->n_tree;
        return GS_OK;
    }
    default: break;
    }
    GS__FAIL(GS_ERR_INVALID_ARG, "invalid op %d", (int)v->op);
}

GS__FN gs_result gs__check_variadic(gs_ctx *ctx, const gs_value *v, const char *who);
GS__FN gs_result gs__infer(gs_ctx *ctx, gs_value *v) {
    gs_shape *s = &v->shape;
    const gs_shape *x = v->n_operands ? &v->operands[0]->shape : NULL;
    int i;
    int arity = gs_op_arity(v->op);
    if (arity >= 0 && v->n_operands != arity + (v->red_n > 0 ? 2 * v->red_n : 0))
        GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: takes %d operands, got %d", GS__WHO, arity, v->n_operands);
    if (v->reduce == GS_REDUCE_CUSTOM && !v->reducer)
        GS__FAIL(GS_ERR_INVALID_ARG, "%s %s: reduction 'custom' needs its computation (gs_value_set_reducer)", GS__WHO);
    if (v->red_n > 0 && gs__check_variadic(ctx, v, "variadic reducer") != GS_OK) return ctx->err;
    /* operands are arrays except for tuple, get-tuple-element and while */
    if (v->op != GS_OP_GET_TUPLE_ELEMENT && v->op != GS_OP_WHILE && v->op != GS_OP_TUPLE && v->op != GS_OP_OPAQUE &&
        v->op != GS_OP_CONDITIONAL)
        for (i = 0; i < v->n_operands; i++)
            if (gs__need_array(ctx, v, i)) return ctx->err;
    switch (v->op) {
    case GS_OP_PARAMETER: case GS_OP_CONSTANT: case GS_OP_IOTA: case GS_OP_PARTITION_ID: case GS_OP_REPLICA_ID:
    case GS_OP_OPAQUE:
        return gs__infer_leaf(ctx, v, s);
    case GS_OP_BROADCAST: case GS_OP_RESHAPE: case GS_OP_TRANSPOSE: case GS_OP_SLICE: case GS_OP_DYNAMIC_SLICE:
    case GS_OP_DYNAMIC_UPDATE_SLICE: case GS_OP_PAD: case GS_OP_CONCATENATE: case GS_OP_REVERSE:
        return gs__infer_move(ctx, v, s, x);
    case GS_OP_REDUCE: case GS_OP_ARGMAX: case GS_OP_ARGMIN: case GS_OP_DOT: case GS_OP_CONVOLUTION: case GS_OP_REDUCE_WINDOW:
    case GS_OP_GATHER: case GS_OP_SCATTER: case GS_OP_SORT: case GS_OP_TOPK: case GS_OP_CUMSUM: case GS_OP_CUMPROD:
    case GS_OP_CUMMAX: case GS_OP_CUMMIN:
        return gs__infer_reduce(ctx, v, s, x);
    case GS_OP_RNG_BIT_GENERATOR: return gs__infer_rng_bits(ctx, v);
    case GS_OP_BATCH_NORM_TRAINING: case GS_OP_BATCH_NORM_INFERENCE: case GS_OP_BATCH_NORM_GRAD:
        return gs__infer_batch_norm(ctx, v);
    case GS_OP_CHOLESKY: case GS_OP_TRIANGULAR_SOLVE: return gs__infer_linalg(ctx, v);
    case GS_OP_FFT: return gs__infer_fft(ctx, v);
    case GS_OP_SELECT_AND_SCATTER: return gs__infer_select_scatter(ctx, v);
    case GS_OP_CONDITIONAL: return gs__infer_conditional(ctx, v);
    case GS_OP_RAGGED_DOT: return gs__infer_ragged_dot(ctx, v, s);
    case GS_OP_RAGGED_ALL_TO_ALL: return gs__infer_ragged_a2a(ctx, v, s);
    case GS_OP_RNG: case GS_OP_ALL_REDUCE: case GS_OP_ALL_GATHER: case GS_OP_REDUCE_SCATTER: case GS_OP_ALL_TO_ALL:
    case GS_OP_COLLECTIVE_PERMUTE: case GS_OP_TO_MANUAL: case GS_OP_TO_FULL: case GS_OP_TUPLE: case GS_OP_GET_TUPLE_ELEMENT:
    case GS_OP_WHILE:
        return gs__infer_other(ctx, v, s, x);
    default:
        if (v->op > GS_OP_INVALID && v->op < GS_OP_COUNT) return gs__infer_elementwise(ctx, v, s, x);
        break;
    }
    GS__FAIL(GS_ERR_INVALID_ARG, "invalid op %d", (int)v->op);
}

/* Infers v's shape and appends it to its graph; NULL on error. */
GS__FN gs_value *gs__finish(gs_value *v) {
    gs_graph *g;
    gs_ctx *ctx;
    char *key;
    if (!v) return NULL;
    g = v->graph;
    ctx = g->ctx;
    if (ctx->err) return NULL;
    if (gs__infer(ctx, v) != GS_OK) return NULL;
    if (v->op == GS_OP_PARAMETER) {
        while ((int64_t)stbds_arrlen(g->params) <= v->index) stbds_arrput(g->params, (gs_value *)NULL);
        if (g->params[v->index]) {
            gs__err(ctx, GS_ERR_INVALID_ARG, "gs_parameter: graph %s already has parameter %lld (%s)", g->name, (long long)v->index,
                    g->params[v->index]->name);
            return NULL;
        }
        g->params[v->index] = v;
    }
    /* a generated name may collide with one the user chose: take the next free number */
    while (v->auto_name && gs_graph_find(g, v->name)) {
        ctx->next_auto_name++;
        v->name = gs__arena_printf(ctx, "%s.%lld", gs__op_word(v->op), (long long)ctx->next_auto_name);
        if (!v->name) return NULL;
    }
    if (gs_graph_find(g, v->name)) {
        gs__err(ctx, GS_ERR_INVALID_ARG, "graph %s already has a value named '%s'", g->name, v->name);
        return NULL;
    }
    key = (char *)v->name;
    stbds_shput(g->names, key, v);
    ctx->next_auto_name++;
    v->id = (int)stbds_arrlen(g->values);
    stbds_arrput(g->values, v);
    return v;
}

/* ---------------------------------------------------------------------------------------------------------
   builders
   ------------------------------------------------------------------------------------------------------- */
GS__FN gs_value *gs__param_common(gs_graph *g, int64_t index, const char *name) {
    gs_value *v = gs__value_new(g, GS_OP_PARAMETER, 0, NULL);
    if (!v) return NULL;
    if (index < 0) {
        index = 0;
        while (index < (int64_t)stbds_arrlen(g->params) && g->params[index]) index++;
    }
    if (index > 100000) {
        gs__err(g->ctx, GS_ERR_INVALID_ARG, "gs_parameter: index %lld is too large", (long long)index);
        return NULL;
    }
    v->index = index;
    if (name) {
        if (!gs__valid_name(name)) {
            gs__err(g->ctx, GS_ERR_INVALID_ARG, "gs_parameter: '%s' is not a valid name", name);
            return NULL;
        }
        v->name = gs__arena_strdup(g->ctx, name);
        if (!v->name) return NULL;
        v->auto_name = false;
    }
    return v;
}

GS_API gs_value *gs_parameter(gs_graph *g, int64_t index, gs_shape shape, const char *name) {
    gs_value *v = gs__param_common(g, index, name);
    if (!v) return NULL;
    v->shape = shape;
    return gs__finish(v);
}

GS_API gs_value *gs_parameter_tuple(gs_graph *g, int64_t index, int n, const gs_shape *shapes, const char *name) {
    return gs_parameter_tuple_nested(g, index, n, shapes, 0, NULL, name);
}

GS_API gs_value *gs_parameter_tuple_nested(gs_graph *g, int64_t index, int n, const gs_shape *shapes, int n_tree,
                                           const int *tree, const char *name) {
    gs_value *v = gs__param_common(g, index, name);
    int leaves = 0, i, nested = 0;
    if (!v) return NULL;
    if (n < 0 || (n > 0 && !shapes)) {
        gs__err(g->ctx, GS_ERR_INVALID_ARG, "gs_parameter_tuple: bad element list");
        return NULL;
    }
    if (tree) {   /* a well-formed preorder structure with exactly n leaves */
        for (i = 0; i < n_tree; i++) {
            if (tree[i] < -1) break;
            if (i > 0 && tree[i] >= 0) nested = 1;
        }
        if (n_tree < 1 || tree[0] < 0 || i < n_tree || gs__tt_span(tree, n_tree, 0, &leaves) != n_tree || leaves != n) {
            gs__err(g->ctx, GS_ERR_INVALID_ARG, "gs_parameter_tuple_nested: the structure does not fit %d leaves", n);
            return NULL;
        }
        if (nested) {
            v->tree = (const int *)gs__arena_dup(g->ctx, tree, sizeof(int) * (size_t)n_tree);
            if (!v->tree) return NULL;
            v->n_tree = n_tree;
        }
    }
    v->n_tuple = n;
    v->tuple = (gs_shape *)gs__arena_dup(g->ctx, shapes, sizeof(gs_shape) * (size_t)n);
    if (n && !v->tuple) return NULL;
    GS__ZERO(v->shape);
    v->shape.dtype = GS_TUPLE;
    return gs__finish(v);
}

/* x converted to dtype t (XLA's convert from f64: see gs__set_elem), in storage format at dst */
GS__FN void gs__store_elem(gs_dtype t, void *dst, double x) {
    unsigned char one[16];
    memset(one, 0, sizeof one);
    gs__set_elem(t, one, 0, x);
    gs__to_storage(t, dst, one, 1);
}

GS_API gs_value *gs_constant(gs_graph *g, gs_shape shape, const void *data) {
    gs_value *v = gs__value_new(g, GS_OP_CONSTANT, 0, NULL);
    size_t bytes;
    if (!v) return NULL;
    if (gs__check_shape(g->ctx, "gs_constant", &shape)) return NULL;
    bytes = gs_shape_bytes(&shape);
    if (!data && bytes) {
        gs__err(g->ctx, GS_ERR_INVALID_ARG, "gs_constant: data is NULL");
        return NULL;
    }
    v->shape = shape;
    v->data = gs__arena_alloc(g->ctx, bytes ? bytes : 1);
    if (!v->data) return NULL;
    if (bytes) memcpy(v->data, data, bytes);
    if (shape.dtype == GS_PRED) { /* normalise to 0/1 */
        size_t i;
        for (i = 0; i < bytes; i++) ((uint8_t *)v->data)[i] = ((uint8_t *)v->data)[i] != 0;
    }
    return gs__finish(v);
}

/* a constant whose literal the HLO text left out ({...}): data stays NULL; printed back as {...}, refused by the
   interpreter by name, partitioned and costed from its shape */
GS__FN gs_value *gs__constant_elided(gs_graph *g, gs_shape shape) {
    gs_value *v = gs__value_new(g, GS_OP_CONSTANT, 0, NULL);
    if (!v) return NULL;
    if (gs__check_shape(g->ctx, "constant", &shape)) return NULL;
    v->shape = shape;
    return gs__finish(v);
}

GS_API gs_value *gs_constant_splat(gs_graph *g, gs_shape shape, double value) {
    gs_value *v = gs__value_new(g, GS_OP_CONSTANT, 0, NULL);
    if (!v) return NULL;
    if (gs__check_shape(g->ctx, "gs_constant_splat", &shape)) return NULL;
    v->shape = shape;
    v->splat = true;
    v->data = gs__arena_alloc(g->ctx, 16);
    if (!v->data) return NULL;
    gs__store_elem(shape.dtype, v->data, value);
    return gs__finish(v);
}

GS_API gs_value *gs_scalar(gs_graph *g, gs_dtype dtype, double value) {
    return gs_constant_splat(g, gs_shape_scalar(dtype), value);
}

GS_API gs_value *gs_iota(gs_graph *g, gs_shape shape, int64_t iota_dim) {
    gs_value *v = gs__value_new(g, GS_OP_IOTA, 0, NULL);
    if (!v) return NULL;
    v->shape = shape;
    v->dim = iota_dim;
    return gs__finish(v);
}

GS_API gs_value *gs_partition_id(gs_graph *g) { return gs__finish(gs__value_new(g, GS_OP_PARTITION_ID, 0, NULL)); }

GS__FN bool gs__rank_ok(gs_ctx *ctx, const char *who, int rank) {
    if (rank < 0 || rank > GS_MAX_RANK) {
        gs__err(ctx, GS_ERR_INVALID_ARG, "%s: rank %d is outside [0, %d]", who, rank, GS_MAX_RANK);
        return false;
    }
    return true;
}

GS__FN bool gs__dims_given(gs_ctx *ctx, const char *who, const void *p, int n) {
    if (n > 0 && !p) {
        gs__err(ctx, GS_ERR_INVALID_ARG, "%s: a dims array is NULL", who);
        return false;
    }
    return true;
}

GS_API gs_value *gs_broadcast(gs_graph *g, gs_value *x, gs_shape shape, const int64_t *dims) {
    gs_value *v = gs__value_new(g, GS_OP_BROADCAST, 1, &x);
    if (!v) return NULL;
    if (x->shape.dtype != GS_TUPLE && !gs__dims_given(g->ctx, "gs_broadcast", dims, x->shape.rank)) return NULL;
    v->shape = shape;
    v->n_dims = x->shape.dtype == GS_TUPLE ? 0 : x->shape.rank;
    v->dims = gs__dup_dims(g->ctx, dims, v->n_dims);
    if (!v->dims) return NULL;
    return gs__finish(v);
}

GS_API gs_value *gs_broadcast_in_dim(gs_graph *g, gs_value *x, int rank, const int64_t *out_dims, const int64_t *dims) {
    gs_shape s;
    if (!g || !x) return NULL;
    if (!gs__rank_ok(g->ctx, "gs_broadcast_in_dim", rank) || !gs__dims_given(g->ctx, "gs_broadcast_in_dim", out_dims, rank)) return NULL;
    s = gs_shape_make(x->shape.dtype, rank, out_dims);
    return gs_broadcast(g, x, s, dims);
}

GS_API gs_value *gs_reshape(gs_graph *g, gs_value *x, int rank, const int64_t *dims) {
    gs_value *v = gs__value_new(g, GS_OP_RESHAPE, 1, &x);
    if (!v) return NULL;
    if (!gs__rank_ok(g->ctx, "gs_reshape", rank) || !gs__dims_given(g->ctx, "gs_reshape", dims, rank)) return NULL;
    v->shape = gs_shape_make(x->shape.dtype == GS_TUPLE ? GS_F32 : x->shape.dtype, rank, dims);
    return gs__finish(v);
}

GS_API gs_value *gs_transpose(gs_graph *g, gs_value *x, const int64_t *perm) {
    gs_value *v = gs__value_new(g, GS_OP_TRANSPOSE, 1, &x);
    if (!v) return NULL;
    v->n_dims = x->shape.dtype == GS_TUPLE ? 0 : x->shape.rank;
    if (!gs__dims_given(g->ctx, "gs_transpose", perm, v->n_dims)) return NULL;
    v->dims = gs__dup_dims(g->ctx, perm, v->n_dims);
    if (!v->dims) return NULL;
    return gs__finish(v);
}

GS_API gs_value *gs_slice(gs_graph *g, gs_value *x, const int64_t *start, const int64_t *limit, const int64_t *stride) {
    gs_value *v = gs__value_new(g, GS_OP_SLICE, 1, &x);
    int r, i;
    if (!v) return NULL;
    r = x->shape.dtype == GS_TUPLE ? 0 : x->shape.rank;
    if (!gs__dims_given(g->ctx, "gs_slice", start, r) || !gs__dims_given(g->ctx, "gs_slice", limit, r)) return NULL;
    v->start = gs__dup_dims(g->ctx, start, r);
    v->limit = gs__dup_dims(g->ctx, limit, r);
    v->stride = (int64_t *)gs__arena_alloc(g->ctx, sizeof(int64_t) * (size_t)(r ? r : 1));
    if (!v->start || !v->limit || !v->stride) return NULL;
    for (i = 0; i < r; i++) v->stride[i] = stride ? stride[i] : 1;
    return gs__finish(v);
}

GS_API gs_value *gs_dynamic_slice(gs_graph *g, gs_value *x, gs_value *const *start, const int64_t *sizes) {
    gs_value *ops[GS_MAX_RANK + 1];
    gs_value *v;
    int r, i;
    if (!g || !x) return NULL;
    r = x->shape.dtype == GS_TUPLE ? 0 : x->shape.rank;
    if (!gs__dims_given(g->ctx, "gs_dynamic_slice", start, r) || !gs__dims_given(g->ctx, "gs_dynamic_slice", sizes, r)) return NULL;
    ops[0] = x;
    for (i = 0; i < r; i++) ops[i + 1] = start[i];
    v = gs__value_new(g, GS_OP_DYNAMIC_SLICE, r + 1, ops);
    if (!v) return NULL;
    v->sizes = gs__dup_dims(g->ctx, sizes, r);
    if (!v->sizes) return NULL;
    return gs__finish(v);
}

GS_API gs_value *gs_dynamic_update_slice(gs_graph *g, gs_value *x, gs_value *update, gs_value *const *start) {
    gs_value *ops[GS_MAX_RANK + 2];
    int r, i;
    if (!g || !x || !update) return NULL;
    r = x->shape.dtype == GS_TUPLE ? 0 : x->shape.rank;
    if (!gs__dims_given(g->ctx, "gs_dynamic_update_slice", start, r)) return NULL;
    ops[0] = x;
    ops[1] = update;
    for (i = 0; i < r; i++) ops[i + 2] = start[i];
    return gs__finish(gs__value_new(g, GS_OP_DYNAMIC_UPDATE_SLICE, r + 2, ops));
}

GS_API gs_value *gs_pad(gs_graph *g, gs_value *x, gs_value *pad_value, const int64_t *lo, const int64_t *hi,
                        const int64_t *interior) {
    gs_value *ops[2];
    gs_value *v;
    int r, i;
    ops[0] = x;
    ops[1] = pad_value;
    v = gs__value_new(g, GS_OP_PAD, 2, ops);
    if (!v) return NULL;
    r = x->shape.dtype == GS_TUPLE ? 0 : x->shape.rank;
    if (!gs__dims_given(g->ctx, "gs_pad", lo, r) || !gs__dims_given(g->ctx, "gs_pad", hi, r)) return NULL;
    v->lo = gs__dup_dims(g->ctx, lo, r);
    v->hi = gs__dup_dims(g->ctx, hi, r);
    v->interior = (int64_t *)gs__arena_alloc(g->ctx, sizeof(int64_t) * (size_t)(r ? r : 1));
    if (!v->lo || !v->hi || !v->interior) return NULL;
    for (i = 0; i < r; i++) v->interior[i] = interior ? interior[i] : 0;
    return gs__finish(v);
}

GS_API gs_value *gs_concatenate(gs_graph *g, int n, gs_value *const *xs, int64_t dim) {
    gs_value *v = gs__value_new(g, GS_OP_CONCATENATE, n, xs);
    if (!v) return NULL;
    v->dim = dim;
    return gs__finish(v);
}

GS_API gs_value *gs_reverse(gs_graph *g, gs_value *x, int n_dims, const int64_t *dims) {
    gs_value *v = gs__value_new(g, GS_OP_REVERSE, 1, &x);
    if (!v) return NULL;
    if (n_dims < 0 || n_dims > GS_MAX_RANK || !gs__dims_given(g->ctx, "gs_reverse", dims, n_dims)) {
        gs__err(g->ctx, GS_ERR_INVALID_ARG, "gs_reverse: bad dims list (%d entries)", n_dims);
        return NULL;
    }
    v->n_dims = n_dims;
    v->dims = gs__dup_dims(g->ctx, dims, n_dims);
    if (!v->dims) return NULL;
    return gs__finish(v);
}

GS_API gs_value *gs_convert(gs_graph *g, gs_value *x, gs_dtype to) {
    gs_value *v = gs__value_new(g, GS_OP_CONVERT, 1, &x);
    if (!v) return NULL;
    v->shape.dtype = to;
    return gs__finish(v);
}

GS_API gs_value *gs_copy(gs_graph *g, gs_value *x) { return gs__finish(gs__value_new(g, GS_OP_COPY, 1, &x)); }

GS_API gs_value *gs_unary(gs_graph *g, gs_op op, gs_value *x) {
    if (!g) return NULL;
    if (!((op >= GS_OP_NEGATE && op <= GS_OP_NOT) || (op >= GS_OP_SINE && op <= GS_OP_IMAG))) {
        if (!g->ctx->err) gs__err(g->ctx, GS_ERR_INVALID_ARG, "gs_unary: %s is not a unary elementwise op", gs_op_name(op));
        return NULL;
    }
    return gs__finish(gs__value_new(g, op, 1, &x));
}

GS_API gs_value *gs_binary(gs_graph *g, gs_op op, gs_value *a, gs_value *b) {
    gs_value *ops[2];
    if (!g) return NULL;
    if (!((op >= GS_OP_ADD && op <= GS_OP_XOR) || (op >= GS_OP_ATAN2 && op <= GS_OP_COMPLEX))) {
        if (!g->ctx->err) gs__err(g->ctx, GS_ERR_INVALID_ARG, "gs_binary: %s is not a binary elementwise op", gs_op_name(op));
        return NULL;
    }
    ops[0] = a;
    ops[1] = b;
    return gs__finish(gs__value_new(g, op, 2, ops));
}

GS_API gs_value *gs_reduce_precision(gs_graph *g, gs_value *x, int exponent_bits, int mantissa_bits) {
    gs_value *v = gs__value_new(g, GS_OP_REDUCE_PRECISION, 1, &x);
    if (!v) return NULL;
    v->rp_exp = exponent_bits;
    v->rp_mant = mantissa_bits;
    return gs__finish(v);
}

GS_API gs_value *gs_bitcast_convert(gs_graph *g, gs_value *x, gs_dtype to) {
    gs_value *v = gs__value_new(g, GS_OP_BITCAST_CONVERT, 1, &x);
    if (!v) return NULL;
    v->shape.dtype = to;
    return gs__finish(v);
}

GS_API gs_value *gs_replica_id(gs_graph *g) { return gs__finish(gs__value_new(g, GS_OP_REPLICA_ID, 0, NULL)); }

GS_API gs_value *gs_fft(gs_graph *g, gs_value *x, gs_fft_type type, int n, const int64_t *fft_length) {
    gs_value *v = gs__value_new(g, GS_OP_FFT, 1, &x);
    int i;
    if (!v) return NULL;
    v->fft_type = (int)type;
    v->fft_n = n;
    for (i = 0; i < n && i < 3 && fft_length; i++) v->fft_len[i] = fft_length[i];
    if (n > 0 && !fft_length) v->fft_n = -1;
    return gs__finish(v);
}

GS_API gs_value *gs_select_and_scatter(gs_graph *g, gs_value *operand, gs_value *source, gs_value *init,
                                       const gs_window_dim *window, gs_graph *select, gs_reduce_kind scatter) {
    gs_value *xs[3], *v;
    gs_dtype pdt[2], pred = GS_PRED;
    if (!g || !operand || !source || !init) return NULL;
    xs[0] = operand;
    xs[1] = source;
    xs[2] = init;
    pdt[0] = pdt[1] = operand->shape.dtype;
    if (!window || operand->shape.dtype == GS_TUPLE) {
        gs__err(g->ctx, GS_ERR_INVALID_ARG, "gs_select_and_scatter: %s", window ? "a tuple operand" : "no window");
        return NULL;
    }
    if (!gs__check_scalar_comp(g->ctx, "select-and-scatter select", select, 2, pdt, 1, &pred)) return NULL;
    v = gs__value_new(g, GS_OP_SELECT_AND_SCATTER, 3, xs);
    if (!v) return NULL;
    v->window = (gs_window_dim *)gs__arena_dup(g->ctx, window, sizeof(gs_window_dim) * (size_t)(operand->shape.rank ? operand->shape.rank : 1));
    if (!v->window) return NULL;
    v->cond = select;
    v->reduce = scatter;
    return gs__finish(v);
}

GS_API gs_value *gs_cholesky(gs_graph *g, gs_value *a, bool lower) {
    gs_value *v = gs__value_new(g, GS_OP_CHOLESKY, 1, &a);
    if (!v) return NULL;
    v->la_lower = lower;
    return gs__finish(v);
}

GS_API gs_value *gs_triangular_solve(gs_graph *g, gs_value *a, gs_value *b, bool left_side, bool lower,
                                     bool unit_diagonal, gs_transpose_a transpose_a) {
    gs_value *xs[2], *v;
    xs[0] = a;
    xs[1] = b;
    v = gs__value_new(g, GS_OP_TRIANGULAR_SOLVE, 2, xs);
    if (!v) return NULL;
    v->la_left = left_side;
    v->la_lower = lower;
    v->la_unit = unit_diagonal;
    v->la_trans = (uint8_t)transpose_a;
    if ((int)transpose_a < 0 || transpose_a > GS_TRANSPOSE_A_ADJOINT) v->la_trans = 255;
    return gs__finish(v);
}

/* the operands in order: training (x, scale, offset), inference (+ mean, variance), grad (x, scale, mean,
   variance, grad_output) */
GS__FN gs_value *gs__batch_norm(gs_graph *g, gs_op op, gs_value *x0, gs_value *x1, gs_value *x2, gs_value *x3,
                                gs_value *x4, float epsilon, int64_t fi) {
    gs_value *xs[5], *v;
    xs[0] = x0;
    xs[1] = x1;
    xs[2] = x2;
    xs[3] = x3;
    xs[4] = x4;
    v = gs__value_new(g, op, op == GS_OP_BATCH_NORM_TRAINING ? 3 : 5, xs);
    if (!v) return NULL;
    v->bn_epsilon = epsilon;
    v->dim = fi;
    return gs__finish(v);
}

GS_API gs_value *gs_batch_norm_training(gs_graph *g, gs_value *x, gs_value *scale, gs_value *offset, float epsilon,
                                        int64_t feature_index) {
    return gs__batch_norm(g, GS_OP_BATCH_NORM_TRAINING, x, scale, offset, NULL, NULL, epsilon, feature_index);
}

GS_API gs_value *gs_batch_norm_inference(gs_graph *g, gs_value *x, gs_value *scale, gs_value *offset, gs_value *mean,
                                         gs_value *variance, float epsilon, int64_t feature_index) {
    return gs__batch_norm(g, GS_OP_BATCH_NORM_INFERENCE, x, scale, offset, mean, variance, epsilon, feature_index);
}

GS_API gs_value *gs_batch_norm_grad(gs_graph *g, gs_value *x, gs_value *scale, gs_value *mean, gs_value *variance,
                                    gs_value *grad_output, float epsilon, int64_t feature_index) {
    return gs__batch_norm(g, GS_OP_BATCH_NORM_GRAD, x, scale, mean, variance, grad_output, epsilon, feature_index);
}

/* the form whose result is the bits alone (no new state) */
GS__FN gs_value *gs__rng_bits_only(gs_graph *g, gs_value *state, gs_shape shape, gs_rng_algorithm algorithm) {
    gs_value *v = gs__value_new(g, GS_OP_RNG_BIT_GENERATOR, 1, &state);
    if (!v) return NULL;
    if (gs__check_shape(g->ctx, "rng-bit-generator", &shape)) return NULL;
    v->rbg_shape = (const gs_shape *)gs__arena_dup(g->ctx, &shape, sizeof shape);
    if (!v->rbg_shape) return NULL;
    v->rng_alg = (int)algorithm;
    v->flag = true;
    return gs__finish(v);
}

GS_API gs_value *gs_rng_bit_generator(gs_graph *g, gs_value *state, gs_shape shape, gs_rng_algorithm algorithm) {
    gs_value *v = gs__value_new(g, GS_OP_RNG_BIT_GENERATOR, 1, &state);
    if (!v) return NULL;
    if (gs__check_shape(g->ctx, "gs_rng_bit_generator", &shape)) return NULL;
    v->rbg_shape = (const gs_shape *)gs__arena_dup(g->ctx, &shape, sizeof shape);
    if (!v->rbg_shape) return NULL;
    v->rng_alg = (int)algorithm;
    return gs__finish(v);
}

GS_API gs_value *gs_neg(gs_graph *g, gs_value *x) { return gs_unary(g, GS_OP_NEGATE, x); }
GS_API gs_value *gs_exp(gs_graph *g, gs_value *x) { return gs_unary(g, GS_OP_EXP, x); }
GS_API gs_value *gs_add(gs_graph *g, gs_value *a, gs_value *b) { return gs_binary(g, GS_OP_ADD, a, b); }
GS_API gs_value *gs_sub(gs_graph *g, gs_value *a, gs_value *b) { return gs_binary(g, GS_OP_SUBTRACT, a, b); }
GS_API gs_value *gs_mul(gs_graph *g, gs_value *a, gs_value *b) { return gs_binary(g, GS_OP_MULTIPLY, a, b); }
GS_API gs_value *gs_div(gs_graph *g, gs_value *a, gs_value *b) { return gs_binary(g, GS_OP_DIVIDE, a, b); }
GS_API gs_value *gs_max(gs_graph *g, gs_value *a, gs_value *b) { return gs_binary(g, GS_OP_MAXIMUM, a, b); }
GS_API gs_value *gs_min(gs_graph *g, gs_value *a, gs_value *b) { return gs_binary(g, GS_OP_MINIMUM, a, b); }

GS_API gs_value *gs_compare_typed(gs_graph *g, gs_value *a, gs_value *b, gs_cmp dir, gs_cmp_type type) {
    gs_value *ops[2];
    gs_value *v;
    ops[0] = a;
    ops[1] = b;
    v = gs__value_new(g, GS_OP_COMPARE, 2, ops);
    if (!v) return NULL;
    v->cmp = dir;
    v->cmp_type = type;
    return gs__finish(v);
}

GS_API gs_value *gs_compare(gs_graph *g, gs_value *a, gs_value *b, gs_cmp dir) {
    return gs_compare_typed(g, a, b, dir, GS_CMP_TYPE_DEFAULT);
}

GS_API gs_value *gs_select(gs_graph *g, gs_value *pred, gs_value *on_true, gs_value *on_false) {
    gs_value *ops[3];
    ops[0] = pred;
    ops[1] = on_true;
    ops[2] = on_false;
    return gs__finish(gs__value_new(g, GS_OP_SELECT, 3, ops));
}

GS_API gs_value *gs_clamp(gs_graph *g, gs_value *lo, gs_value *x, gs_value *hi) {
    gs_value *ops[3];
    ops[0] = lo;
    ops[1] = x;
    ops[2] = hi;
    return gs__finish(gs__value_new(g, GS_OP_CLAMP, 3, ops));
}

GS_API gs_value *gs_reduce(gs_graph *g, gs_value *x, gs_value *init, gs_reduce_kind kind, int n_dims, const int64_t *dims) {
    gs_value *ops[2];
    gs_value *v;
    ops[0] = x;
    ops[1] = init;
    v = gs__value_new(g, GS_OP_REDUCE, 2, ops);
    if (!v) return NULL;
    if (n_dims < 0 || n_dims > GS_MAX_RANK || !gs__dims_given(g->ctx, "gs_reduce", dims, n_dims)) {
        gs__err(g->ctx, GS_ERR_INVALID_ARG, "gs_reduce: bad dims list (%d entries)", n_dims);
        return NULL;
    }
    v->reduce = kind;
    v->n_dims = n_dims;
    v->dims = gs__dup_dims(g->ctx, dims, n_dims);
    if (!v->dims) return NULL;
    return gs__finish(v);
}

GS__FN gs_value *gs__dim_op(gs_graph *g, gs_op op, gs_value *x, int64_t dim) {
    gs_value *v = gs__value_new(g, op, 1, &x);
    if (!v) return NULL;
    v->dim = dim;
    return gs__finish(v);
}

GS_API gs_value *gs_argmax(gs_graph *g, gs_value *x, int64_t dim) { return gs__dim_op(g, GS_OP_ARGMAX, x, dim); }
GS_API gs_value *gs_argmin(gs_graph *g, gs_value *x, int64_t dim) { return gs__dim_op(g, GS_OP_ARGMIN, x, dim); }

GS_API gs_value *gs_dot(gs_graph *g, gs_value *lhs, gs_value *rhs, const gs_dot_dims *dims) {
    gs_value *ops[2];
    gs_value *v;
    ops[0] = lhs;
    ops[1] = rhs;
    v = gs__value_new(g, GS_OP_DOT, 2, ops);
    if (!v) return NULL;
    if (!dims) {
        gs__err(g->ctx, GS_ERR_INVALID_ARG, "gs_dot: dimension numbers are NULL");
        return NULL;
    }
    v->dot = (gs_dot_dims *)gs__arena_dup(g->ctx, dims, sizeof *dims);
    if (!v->dot) return NULL;
    return gs__finish(v);
}

GS_API gs_value *gs_ragged_dot(gs_graph *g, gs_value *lhs, gs_value *rhs, gs_value *group_sizes,
                               const gs_ragged_dot_dims *dims) {
    gs_value *ops[3], *v;
    ops[0] = lhs;
    ops[1] = rhs;
    ops[2] = group_sizes;
    v = gs__value_new(g, GS_OP_RAGGED_DOT, 3, ops);
    if (!v) return NULL;
    if (!dims) {
        gs__err(g->ctx, GS_ERR_INVALID_ARG, "gs_ragged_dot: dimension numbers are NULL");
        return NULL;
    }
    v->ragged = (gs_ragged_dot_dims *)gs__arena_dup(g->ctx, dims, sizeof *dims);
    if (!v->ragged) return NULL;
    return gs__finish(v);
}

GS_API gs_value *gs_einsum(gs_graph *g, const char *spec, gs_value *lhs, gs_value *rhs) {
    const char *arrow, *comma, *p;
    char in[2][GS_MAX_RANK + 1], out[2 * GS_MAX_RANK + 1], dotorder[2 * GS_MAX_RANK + 1];
    int nin[2] = {0, 0}, nout = 0, ndot = 0, i, j, k;
    gs_dot_dims d;
    gs_value *ops[2], *res;
    gs_ctx *ctx;
    if (!g) return NULL;
    ctx = g->ctx;
    if (ctx->err || !lhs || !rhs) return NULL;
    if (!spec) {
        gs__err(ctx, GS_ERR_INVALID_ARG, "gs_einsum: spec is NULL");
        return NULL;
    }
    arrow = strstr(spec, "->");
    comma = strchr(spec, ',');
    if (!arrow || !comma || comma > arrow || strchr(comma + 1, ',') || strstr(arrow + 2, "->")) {
        gs__err(ctx, GS_ERR_INVALID_ARG, "gs_einsum: '%s' is not of the form \"lhs,rhs->out\" (e.g. \"GSM,ME->GSE\")", spec);
        return NULL;
    }
    ops[0] = lhs;
    ops[1] = rhs;
    /* parse the three letter lists */
    for (p = spec; *p; p++) {
        int which = p < comma ? 0 : p < arrow ? 1 : 2;
        char c = *p;
        if (p == comma || p == arrow || p == arrow + 1 || c == ' ') continue;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) {
            gs__err(ctx, GS_ERR_INVALID_ARG, "gs_einsum: '%s': character '%c' at %d is not a letter", spec, c, (int)(p - spec));
            return NULL;
        }
        if (which < 2) {
            for (j = 0; j < nin[which]; j++)
                if (in[which][j] == c) {
                    gs__err(ctx, GS_ERR_INVALID_ARG, "gs_einsum: '%s': letter '%c' repeats in the %s operand (diagonals are not supported)", spec, c,
                            which ? "rhs" : "lhs");
                    return NULL;
                }
            if (nin[which] >= GS_MAX_RANK) {
                gs__err(ctx, GS_ERR_INVALID_ARG, "gs_einsum: '%s': too many letters", spec);
                return NULL;
            }
            in[which][nin[which]++] = c;
        } else {
            for (j = 0; j < nout; j++)
                if (out[j] == c) {
                    gs__err(ctx, GS_ERR_INVALID_ARG, "gs_einsum: '%s': letter '%c' repeats in the output", spec, c);
                    return NULL;
                }
            if (nout >= 2 * GS_MAX_RANK) {
                gs__err(ctx, GS_ERR_INVALID_ARG, "gs_einsum: '%s': too many letters", spec);
                return NULL;
            }
            out[nout++] = c;
        }
    }
    for (i = 0; i < 2; i++) {
        if (ops[i]->shape.dtype == GS_TUPLE || nin[i] != ops[i]->shape.rank) {
            gs__err(ctx, GS_ERR_SHAPE, "gs_einsum: '%s': the %s operand %s has rank %d but the spec names %d dims", spec, i ? "rhs" : "lhs",
                    ops[i]->name, ops[i]->shape.rank, nin[i]);
            return NULL;
        }
    }
    memset(&d, 0, sizeof d);
    /* output letters must come from an input; classify */
    for (j = 0; j < nout; j++) {
        int pl = -1, pr = -1;
        for (k = 0; k < nin[0]; k++) if (in[0][k] == out[j]) pl = k;
        for (k = 0; k < nin[1]; k++) if (in[1][k] == out[j]) pr = k;
        if (pl < 0 && pr < 0) {
            gs__err(ctx, GS_ERR_INVALID_ARG, "gs_einsum: '%s': output letter '%c' is in neither input", spec, out[j]);
            return NULL;
        }
        if (pl >= 0 && pr >= 0) {
            d.lhs_batch[d.n_batch] = pl;
            d.rhs_batch[d.n_batch] = pr;
            d.n_batch++;
            dotorder[ndot++] = out[j];
        }
    }
    for (i = 0; i < 2; i++)
        for (k = 0; k < nin[i]; k++) {
            char c = in[i][k];
            bool in_other = false, in_out = false;
            for (j = 0; j < nin[1 - i]; j++) in_other = in_other || in[1 - i][j] == c;
            for (j = 0; j < nout; j++) in_out = in_out || out[j] == c;
            if (!in_other && !in_out) {
                gs__err(ctx, GS_ERR_INVALID_ARG, "gs_einsum: '%s': letter '%c' appears only in the %s operand and not in the output (reduce it first with gs_reduce)",
                        spec, c, i ? "rhs" : "lhs");
                return NULL;
            }
            if (i == 0 && in_other && !in_out) {
                int pr = 0;
                for (j = 0; j < nin[1]; j++) if (in[1][j] == c) pr = j;
                d.lhs_contract[d.n_contract] = k;
                d.rhs_contract[d.n_contract] = pr;
                d.n_contract++;
            }
        }
    /* dot's output order: batch letters (output order), lhs free, rhs free */
    for (i = 0; i < 2; i++)
        for (k = 0; k < nin[i]; k++) {
            char c = in[i][k];
            bool in_other = false;
            for (j = 0; j < nin[1 - i]; j++) in_other = in_other || in[1 - i][j] == c;
            if (!in_other) dotorder[ndot++] = c;
        }
    if (ndot != nout) { /* cannot happen after the checks above */
        gs__err(ctx, GS_ERR_INVALID_ARG, "gs_einsum: '%s': inconsistent spec", spec);
        return NULL;
    }
    res = gs_dot(g, lhs, rhs, &d);
    if (!res) return NULL;
    if (memcmp(dotorder, out, (size_t)nout) != 0) {
        int64_t perm[2 * GS_MAX_RANK];
        for (j = 0; j < nout; j++)
            for (k = 0; k < ndot; k++)
                if (dotorder[k] == out[j]) perm[j] = k;
        res = gs_transpose(g, res, perm);
    }
    return res;
}

GS_API gs_window_dim gs_window_default(void) {
    gs_window_dim w;
    w.size = 1;
    w.stride = 1;
    w.pad_lo = 0;
    w.pad_hi = 0;
    w.base_dilation = 1;
    w.window_dilation = 1;
    return w;
}

GS_API gs_value *gs_convolution(gs_graph *g, gs_value *input, gs_value *kernel, const gs_conv_config *cfg) {
    gs_value *ops[2];
    gs_value *v;
    ops[0] = input;
    ops[1] = kernel;
    v = gs__value_new(g, GS_OP_CONVOLUTION, 2, ops);
    if (!v) return NULL;
    if (!cfg) {
        gs__err(g->ctx, GS_ERR_INVALID_ARG, "gs_convolution: config is NULL");
        return NULL;
    }
    v->conv = (gs_conv_config *)gs__arena_dup(g->ctx, cfg, sizeof *cfg);
    if (!v->conv) return NULL;
    if (!v->conv->feature_group_count) v->conv->feature_group_count = 1;
    if (!v->conv->batch_group_count) v->conv->batch_group_count = 1;
    return gs__finish(v);
}

GS_API gs_value *gs_reduce_window(gs_graph *g, gs_value *x, gs_value *init, gs_reduce_kind kind, const gs_window_dim *window) {
    gs_value *ops[2];
    gs_value *v;
    int r;
    ops[0] = x;
    ops[1] = init;
    v = gs__value_new(g, GS_OP_REDUCE_WINDOW, 2, ops);
    if (!v) return NULL;
    r = x->shape.dtype == GS_TUPLE ? 0 : x->shape.rank;
    if (!gs__dims_given(g->ctx, "gs_reduce_window", window, r)) return NULL;
    v->reduce = kind;
    v->window = (gs_window_dim *)gs__arena_dup(g->ctx, window, sizeof(gs_window_dim) * (size_t)(r ? r : 1));
    if (r == 0) v->window = (gs_window_dim *)gs__arena_alloc(g->ctx, sizeof(gs_window_dim));
    if (!v->window) return NULL;
    return gs__finish(v);
}

GS_API gs_value *gs_gather(gs_graph *g, gs_value *operand, gs_value *indices, const gs_gather_dims *dims) {
    gs_value *ops[2];
    gs_value *v;
    ops[0] = operand;
    ops[1] = indices;
    v = gs__value_new(g, GS_OP_GATHER, 2, ops);
    if (!v) return NULL;
    if (!dims) {
        gs__err(g->ctx, GS_ERR_INVALID_ARG, "gs_gather: dimension numbers are NULL");
        return NULL;
    }
    v->gather = (gs_gather_dims *)gs__arena_dup(g->ctx, dims, sizeof *dims);
    if (!v->gather) return NULL;
    return gs__finish(v);
}

GS_API gs_value *gs_scatter(gs_graph *g, gs_value *operand, gs_value *indices, gs_value *updates, const gs_scatter_dims *dims,
                            gs_reduce_kind combiner) {
    gs_value *ops[3];
    gs_value *v;
    ops[0] = operand;
    ops[1] = indices;
    ops[2] = updates;
    v = gs__value_new(g, GS_OP_SCATTER, 3, ops);
    if (!v) return NULL;
    if (!dims) {
        gs__err(g->ctx, GS_ERR_INVALID_ARG, "gs_scatter: dimension numbers are NULL");
        return NULL;
    }
    v->scatter = (gs_scatter_dims *)gs__arena_dup(g->ctx, dims, sizeof *dims);
    if (!v->scatter) return NULL;
    v->reduce = combiner;
    return gs__finish(v);
}

GS_API gs_value *gs_sort(gs_graph *g, int n, gs_value *const *xs, int64_t dim, bool descending) {
    gs_value *v = gs__value_new(g, GS_OP_SORT, n, xs);
    if (!v) return NULL;
    v->dim = dim;
    v->flag = descending;
    return gs__finish(v);
}

/* A called scalar computation (sort comparator, reducer): n_params rank-0 parameters of the given types and a
   rank-0 root of type root_dt (GS_TUPLE: a tuple of n_root rank-0 leaves of types root_dts), nothing that needs
   the stepper or other devices. */
#define GS__CSC_FAIL(...) do { gs__err(ctx, __VA_ARGS__); return false; } while (0)
GS__FN bool gs__check_scalar_comp(gs_ctx *ctx, const char *who, const gs_graph *c, int n_params, const gs_dtype *pdt,
                                  int n_root, const gs_dtype *rdt) {
    int i;
    const gs_value *r;
    if (!c || !c->root) GS__CSC_FAIL(GS_ERR_INVALID_ARG, "%s: the computation has no root", who);
    if ((int)stbds_arrlen(c->params) != n_params)
        GS__CSC_FAIL(GS_ERR_INVALID_ARG, "%s: computation '%s' has %d parameters, expected %d", who, c->name,
                       (int)stbds_arrlen(c->params), n_params);
    for (i = 0; i < n_params; i++) {
        const gs_value *p = c->params[i];
        if (!p || p->shape.dtype != pdt[i] || p->shape.rank != 0)
            GS__CSC_FAIL(GS_ERR_SHAPE, "%s: parameter %d of computation '%s' must be %s[]", who, i, c->name,
                           gs_dtype_name(pdt[i]));
    }
    for (i = 0; i < (int)stbds_arrlen(c->values); i++) {
        const gs_value *v = c->values[i];
        if (v->op == GS_OP_WHILE || v->op == GS_OP_CONDITIONAL || (v->op >= GS_OP_ALL_REDUCE && v->op <= GS_OP_COLLECTIVE_PERMUTE) ||
            v->op == GS_OP_RAGGED_ALL_TO_ALL ||
            v->op == GS_OP_OPAQUE || v->op == GS_OP_PARTITION_ID || v->op == GS_OP_REPLICA_ID || v->op == GS_OP_RNG ||
            v->op == GS_OP_SORT || v->op == GS_OP_TOPK)
            GS__CSC_FAIL(GS_ERR_UNSUPPORTED, "%s: computation '%s' uses %s %s, which a called scalar computation cannot run",
                           who, c->name, gs_op_name(v->op), v->name);
    }
    r = c->root;
    if (n_root == 1 && r->shape.dtype == rdt[0] && r->shape.rank == 0) return true;
    if (n_root > 1 && r->shape.dtype == GS_TUPLE && r->n_tuple == n_root && !r->tree) {
        for (i = 0; i < n_root; i++)
            if (r->tuple[i].dtype != rdt[i] || r->tuple[i].rank != 0) break;
        if (i == n_root) return true;
    }
    GS__CSC_FAIL(GS_ERR_SHAPE, "%s: computation '%s' must return %s%s[]%s", who, c->name, n_root > 1 ? "a tuple of " : "",
                   gs_dtype_name(rdt[0]), n_root > 1 ? " scalars of the operand types" : "");
}
#undef GS__CSC_FAIL

GS_API gs_value *gs_sort_custom(gs_graph *g, int n, gs_value *const *xs, int64_t dim, gs_graph *comparator) {
    gs_dtype pdt[128], pred = GS_PRED;
    int i;
    if (!g) return NULL;
    if (n < 1 || n > 64 || !xs) {
        gs__err(g->ctx, GS_ERR_INVALID_ARG, "gs_sort_custom: %d operands (1 to 64 are supported)", n);
        return NULL;
    }
    for (i = 0; i < n; i++) {
        if (!xs[i]) return NULL;
        pdt[2 * i] = pdt[2 * i + 1] = xs[i]->shape.dtype;
    }
    if (!gs__check_scalar_comp(g->ctx, "sort comparator", comparator, 2 * n, pdt, 1, &pred)) return NULL;
    {
        gs_value *v = gs__value_new(g, GS_OP_SORT, n, xs);
        if (!v) return NULL;
        v->dim = dim;
        v->cond = comparator;
        return gs__finish(v);
    }
}

GS_API gs_result gs_value_set_reducer(gs_value *v, gs_graph *reducer) {
    gs_ctx *ctx;
    gs_dtype dt[2];
    if (!v) return GS_ERR_INVALID_ARG;
    ctx = v->graph->ctx;
    if (v->op != GS_OP_REDUCE && v->op != GS_OP_REDUCE_WINDOW && v->op != GS_OP_SCATTER && v->op != GS_OP_ALL_REDUCE &&
        v->op != GS_OP_REDUCE_SCATTER)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_value_set_reducer: %s %s takes no reducer", gs_op_name(v->op), v->name);
    if (v->n_operands < 1 || v->shape.dtype == GS_TUPLE || v->operands[0]->shape.dtype == GS_TUPLE ||
        (v->op == GS_OP_REDUCE ? v->n_operands != 2 : v->op == GS_OP_SCATTER ? v->n_operands != 3 :
         v->op == GS_OP_REDUCE_WINDOW ? v->n_operands != 2 : v->n_operands != 1))
        return gs__err(ctx, GS_ERR_UNSUPPORTED, "gs_value_set_reducer: %s %s: a reducer computation needs one array operand",
                       gs_op_name(v->op), v->name);
    dt[0] = dt[1] = v->operands[0]->shape.dtype;
    if (!gs__check_scalar_comp(ctx, "reducer", reducer, 2, dt, 1, dt)) return ctx->err;
    v->reduce = GS_REDUCE_CUSTOM;
    v->reducer = reducer;
    return GS_OK;
}

GS__FN int gs__red_base(const gs_value *v) { return v->op == GS_OP_SCATTER ? 3 : 2; }

/* v's variadic operands against its own: input j has the dims of input k (v's operand 0), init or update j
   those of operand 1 (scatter: 2); the reducer takes them and returns them as the variadic op's element types */
GS__FN gs_result gs__check_variadic(gs_ctx *ctx, const gs_value *v, const char *who) {
    gs_dtype pdt[2 * GS__MAX_VARIADIC];
    int n = v->red_n, k = v->red_k, b = gs__red_base(v), j, h;
    char b1[96], b2[96];
    if (n < 2 || n > GS__MAX_VARIADIC || k < 0 || k >= n || v->n_operands != b + 2 * n)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: %s %s: component %d of %d operands (2 to %d)", who, gs_op_name(v->op),
                       v->name, k, n, GS__MAX_VARIADIC);
    if (v->operands[b + k] != v->operands[0] || v->operands[b + n + k] != v->operands[b - 1])
        return gs__err(ctx, GS_ERR_INVALID_ARG, "%s: %s %s: variadic operand %d is not the op's own operand", who,
                       gs_op_name(v->op), v->name, k);
    for (h = 0; h < 2; h++)
        for (j = 0; j < n; j++) {
            const gs_shape *a = &v->operands[b + h * n + j]->shape, *own = &v->operands[h ? b - 1 : 0]->shape;
            if (a->rank != own->rank || memcmp(a->dims, own->dims, sizeof(int64_t) * (size_t)a->rank) != 0)
                return gs__err(ctx, GS_ERR_SHAPE, "%s: %s %s: %s %d %s has other dims than %s %d %s", who, gs_op_name(v->op),
                               v->name, h ? (v->op == GS_OP_SCATTER ? "update" : "init") : "operand", j,
                               gs__shape_str(a, b1, sizeof b1), h ? (v->op == GS_OP_SCATTER ? "update" : "init") : "operand", k,
                               gs__shape_str(own, b2, sizeof b2));
            if (v->operands[b + n + j]->shape.dtype != v->operands[b + j]->shape.dtype)
                return gs__err(ctx, GS_ERR_SHAPE, "%s: %s %s: %s %d is %s, operand %d %s", who, gs_op_name(v->op), v->name,
                               v->op == GS_OP_SCATTER ? "update" : "init", j,
                               gs_dtype_name(v->operands[b + n + j]->shape.dtype), j,
                               gs_dtype_name(v->operands[b + j]->shape.dtype));
            pdt[j] = pdt[n + j] = v->operands[b + j]->shape.dtype;
        }
    if (!gs__check_scalar_comp(ctx, "reducer", v->reducer, 2 * n, pdt, n, pdt))
        return gs__err_prefix(ctx, "%s: %s %s: ", who, gs_op_name(v->op), v->name);
    return GS_OK;
}

GS_API gs_result gs_value_set_variadic_reducer(gs_value *v, gs_graph *reducer, int n, int k, gs_value *const *xs,
                                               gs_value *const *inits) {
    gs_ctx *ctx;
    gs_value **ops;
    int b, j;
    gs_result r;
    if (!v) return GS_ERR_INVALID_ARG;
    ctx = v->graph->ctx;
    if (v->op != GS_OP_REDUCE && v->op != GS_OP_REDUCE_WINDOW && v->op != GS_OP_SCATTER)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_value_set_variadic_reducer: %s %s takes no variadic reducer",
                       gs_op_name(v->op), v->name);
    if (v->red_n > 0)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_value_set_variadic_reducer: %s %s has one already", gs_op_name(v->op), v->name);
    if (n < 2 || n > GS__MAX_VARIADIC || k < 0 || k >= n || !xs || !inits || !reducer)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_value_set_variadic_reducer: %s %s: component %d of %d operands (2 to %d, "
                       "with the operands, inits or updates and the reducer)", gs_op_name(v->op), v->name, k, n, GS__MAX_VARIADIC);
    b = gs__red_base(v);
    for (j = 0; j < n; j++)
        if (!xs[j] || !inits[j] || xs[j]->graph != v->graph || inits[j]->graph != v->graph || xs[j]->id >= v->id ||
            inits[j]->id >= v->id)
            return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_value_set_variadic_reducer: %s %s: operand %d is missing or not an "
                           "earlier value of its graph", gs_op_name(v->op), v->name, j);
    if (!(ops = (gs_value **)gs__arena_alloc(ctx, sizeof(gs_value *) * (size_t)(b + 2 * n)))) return ctx->err;
    memcpy(ops, v->operands, sizeof(gs_value *) * (size_t)b);
    memcpy(ops + b, xs, sizeof(gs_value *) * (size_t)n);
    memcpy(ops + b + n, inits, sizeof(gs_value *) * (size_t)n);
    {
        gs_value t = *v;   /* checked on a copy: v is unchanged on failure */
        t.operands = ops;
        t.n_operands = b + 2 * n;
        t.red_n = n;
        t.red_k = k;
        t.reduce = GS_REDUCE_CUSTOM;
        t.reducer = reducer;
        if ((r = gs__check_variadic(ctx, &t, "gs_value_set_variadic_reducer")) != GS_OK) return r;
    }
    v->operands = ops;
    v->n_operands = b + 2 * n;
    v->red_n = n;
    v->red_k = k;
    v->reduce = GS_REDUCE_CUSTOM;
    v->reducer = reducer;
    return GS_OK;
}

GS_API gs_value *gs_sort_with_indices(gs_graph *g, gs_value *x, int64_t dim, bool descending) {
    gs_value *ops[2];
    gs_shape s;
    if (!g || !x) return NULL;
    if (x->shape.dtype == GS_TUPLE || dim < 0 || dim >= x->shape.rank) {
        if (!g->ctx->err) gs__err(g->ctx, GS_ERR_INVALID_ARG, "gs_sort_with_indices: dim %lld is out of range for %s", (long long)dim, x->name);
        return NULL;
    }
    s = x->shape;
    s.dtype = GS_S32;
    ops[0] = x;
    ops[1] = gs_iota(g, s, dim);
    return gs_sort(g, 2, ops, dim, descending);
}

GS_API gs_value *gs_topk(gs_graph *g, gs_value *x, int64_t k, bool largest) {
    gs_value *v = gs__value_new(g, GS_OP_TOPK, 1, &x);
    if (!v) return NULL;
    v->dim = k;
    v->flag = largest;
    return gs__finish(v);
}

GS_API gs_value *gs_cumulative(gs_graph *g, gs_value *x, gs_reduce_kind kind, int64_t dim, bool reverse) {
    gs_op op;
    gs_value *v;
    switch (kind) {
    case GS_REDUCE_SUM: op = GS_OP_CUMSUM; break;
    case GS_REDUCE_PROD: op = GS_OP_CUMPROD; break;
    case GS_REDUCE_MAX: op = GS_OP_CUMMAX; break;
    case GS_REDUCE_MIN: op = GS_OP_CUMMIN; break;
    default:
        if (g && !g->ctx->err) gs__err(g->ctx, GS_ERR_INVALID_ARG, "gs_cumulative: kind %s is not sum, prod, max or min", gs_reduce_kind_name(kind));
        return NULL;
    }
    v = gs__value_new(g, op, 1, &x);
    if (!v) return NULL;
    v->dim = dim;
    v->flag = reverse;
    v->reduce = kind;
    return gs__finish(v);
}

GS_API gs_value *gs_rng_uniform(gs_graph *g, gs_value *lo, gs_value *hi, gs_shape shape, uint64_t seed) {
    gs_value *ops[2];
    gs_value *v;
    ops[0] = lo;
    ops[1] = hi;
    v = gs__value_new(g, GS_OP_RNG, 2, ops);
    if (!v) return NULL;
    v->shape = shape;
    v->seed = seed;
    return gs__finish(v);
}

GS_API gs_value *gs_rng_uniform_shard(gs_graph *g, gs_value *lo, gs_value *hi, gs_shape shard_shape,
                                      gs_shape full_shape, gs_value *const *offsets, uint64_t seed) {
    gs_value *ops[GS_MAX_RANK + 2];
    gs_value *v;
    gs_shape *full;
    int i;
    if (!g || g->ctx->err) return NULL;
    if (full_shape.rank < 0 || full_shape.rank > GS_MAX_RANK) {
        gs__err(g->ctx, GS_ERR_INVALID_ARG, "gs_rng_uniform_shard: full_shape rank %d is outside [0, %d] (GS_MAX_RANK)",
                full_shape.rank, GS_MAX_RANK);
        return NULL;
    }
    if (full_shape.rank > 0 && !offsets) {
        gs__err(g->ctx, GS_ERR_INVALID_ARG, "gs_rng_uniform_shard: offsets is NULL (full_shape has rank %d)", full_shape.rank);
        return NULL;
    }
    ops[0] = lo;
    ops[1] = hi;
    for (i = 0; i < full_shape.rank; i++) ops[i + 2] = offsets[i];
    v = gs__value_new(g, GS_OP_RNG, full_shape.rank + 2, ops);
    if (!v) return NULL;
    full = (gs_shape *)gs__arena_dup(g->ctx, &full_shape, sizeof full_shape);
    if (!full) return NULL;
    v->shape = shard_shape;
    v->rng_full = full;
    v->seed = seed;
    return gs__finish(v);
}

/* a collective of n operands with its groups (copied into the arena) */
GS__FN gs_value *gs__collective_n(gs_graph *g, gs_op op, int n, gs_value *const *xs, const gs_collective_desc *cd) {
    gs_value *v = gs__value_new(g, op, n, xs);
    if (!v) return NULL;
    if (cd) {
        v->coll = *cd;
        if (cd->groups.ids && cd->groups.n_groups > 0 && cd->groups.group_size > 0) {
            if (cd->groups.n_groups > ((int64_t)1 << 24) || cd->groups.group_size > ((int64_t)1 << 24) ||
                cd->groups.n_groups * cd->groups.group_size > ((int64_t)1 << 24)) {
                gs__err(g->ctx, GS_ERR_INVALID_ARG, "gs_%s: too many replica group members", gs_op_name(op));
                return NULL;
            }
            v->coll.groups.ids = (const int64_t *)gs__arena_dup(
                g->ctx, cd->groups.ids, sizeof(int64_t) * (size_t)(cd->groups.n_groups * cd->groups.group_size));
            if (!v->coll.groups.ids) return NULL;
        } else if (!cd->groups.ids && cd->groups.iota_rank == 0 && cd->groups.n_groups != 0) {
            gs__err(g->ctx, GS_ERR_INVALID_ARG, "gs_%s: %lld replica groups but no ids and no iota form", gs_op_name(op),
                    (long long)cd->groups.n_groups);
            return NULL;
        }
    }
    return v;
}

GS__FN gs_value *gs__collective(gs_graph *g, gs_op op, gs_value *x, const gs_collective_desc *cd) {
    return gs__collective_n(g, op, 1, &x, cd);
}

GS_API gs_value *gs_all_reduce(gs_graph *g, gs_value *x, gs_reduce_kind kind, const gs_collective_desc *cd) {
    gs_value *v = gs__collective(g, GS_OP_ALL_REDUCE, x, cd);
    if (!v) return NULL;
    v->reduce = kind;
    return gs__finish(v);
}

GS_API gs_value *gs_all_gather(gs_graph *g, gs_value *x, int64_t dim, const gs_collective_desc *cd) {
    gs_value *v = gs__collective(g, GS_OP_ALL_GATHER, x, cd);
    if (!v) return NULL;
    v->dim = dim;
    return gs__finish(v);
}

GS_API gs_value *gs_reduce_scatter(gs_graph *g, gs_value *x, gs_reduce_kind kind, int64_t dim, const gs_collective_desc *cd) {
    gs_value *v = gs__collective(g, GS_OP_REDUCE_SCATTER, x, cd);
    if (!v) return NULL;
    v->reduce = kind;
    v->dim = dim;
    return gs__finish(v);
}

GS_API gs_value *gs_all_to_all(gs_graph *g, gs_value *x, int64_t split_dim, int64_t concat_dim, const gs_collective_desc *cd) {
    gs_value *v = gs__collective(g, GS_OP_ALL_TO_ALL, x, cd);
    if (!v) return NULL;
    v->split_dim = split_dim;
    v->concat_dim = concat_dim;
    return gs__finish(v);
}

GS_API gs_value *gs_ragged_all_to_all(gs_graph *g, gs_value *const operands[6], const gs_collective_desc *cd) {
    return gs__finish(gs__collective_n(g, GS_OP_RAGGED_ALL_TO_ALL, 6, operands, cd));
}

GS_API gs_value *gs_collective_permute(gs_graph *g, gs_value *x, int64_t n_pairs, const int64_t *pairs, int64_t channel_id) {
    gs_value *v = gs__value_new(g, GS_OP_COLLECTIVE_PERMUTE, 1, &x);
    if (!v) return NULL;
    if (n_pairs < 0 || n_pairs > ((int64_t)1 << 24) || (n_pairs > 0 && !pairs)) {
        gs__err(g->ctx, GS_ERR_INVALID_ARG, "gs_collective_permute: bad pair list (%lld pairs)", (long long)n_pairs);
        return NULL;
    }
    v->n_pairs = n_pairs;
    v->pairs = n_pairs ? (int64_t *)gs__arena_dup(g->ctx, pairs, sizeof(int64_t) * 2 * (size_t)n_pairs)
                       : (int64_t *)gs__arena_alloc(g->ctx, sizeof(int64_t));
    if (!v->pairs) return NULL;
    v->coll.channel_id = channel_id;
    return gs__finish(v);
}

GS_API gs_value *gs_tuple(gs_graph *g, int n, gs_value *const *xs) { return gs__finish(gs__value_new(g, GS_OP_TUPLE, n, xs)); }

GS_API gs_value *gs_get_tuple_element(gs_graph *g, gs_value *t, int64_t index) {
    gs_value *v = gs__value_new(g, GS_OP_GET_TUPLE_ELEMENT, 1, &t);
    if (!v) return NULL;
    v->index = index;
    return gs__finish(v);
}

GS_API gs_value *gs_while(gs_graph *g, gs_graph *cond, gs_graph *body, gs_value *init) {
    gs_value *v = gs__value_new(g, GS_OP_WHILE, 1, &init);
    if (!v) return NULL;
    v->cond = cond;
    v->body = body;
    return gs__finish(v);
}

GS_API gs_value *gs_conditional(gs_graph *g, gs_value *selector, int n_branches, gs_graph *const *branches,
                                gs_value *const *args) {
    gs_value *ops[65], **xs = ops, *v;
    int k;
    if (!g || g->ctx->err) return NULL;
    if (n_branches < 1 || !branches || !args) {
        gs__err(g->ctx, GS_ERR_INVALID_ARG, "gs_conditional: needs at least one branch, and the branches and arguments");
        return NULL;
    }
    if (n_branches >= 64) {
        xs = (gs_value **)gs__arena_alloc(g->ctx, sizeof(gs_value *) * (size_t)(n_branches + 1));
        if (!xs) return NULL;
    }
    xs[0] = selector;
    for (k = 0; k < n_branches; k++) xs[k + 1] = args[k];
    if (!(v = gs__value_new(g, GS_OP_CONDITIONAL, n_branches + 1, xs))) return NULL;
    v->n_branches = n_branches;
    v->branches = (gs_graph **)gs__arena_dup(g->ctx, branches, sizeof(gs_graph *) * (size_t)n_branches);
    if (!v->branches) return NULL;
    return gs__finish(v);
}

/* ---------------------------------------------------------------------------------------------------------
   convolution dim labels ("b01f_01io->b01f")
   ------------------------------------------------------------------------------------------------------- */
GS_API gs_result gs_conv_dims_from_labels(const char *labels, gs_conv_dims *out) {
    const char *parts[3], *us, *ar;
    size_t lens[3];
    int p, i, ns = -1;
    const char *letters[3] = {"bf", "io", "bf"};
    if (!labels || !out) return GS_ERR_INVALID_ARG;
    memset(out, 0, sizeof *out);
    us = strchr(labels, '_');
    ar = strstr(labels, "->");
    if (!us || !ar || us > ar) return GS_ERR_INVALID_ARG;
    parts[0] = labels; lens[0] = (size_t)(us - labels);
    parts[1] = us + 1; lens[1] = (size_t)(ar - us - 1);
    parts[2] = ar + 2; lens[2] = strlen(ar + 2);
    for (p = 0; p < 3; p++) {
        int64_t a = -1, b = -1, sp[GS_MAX_RANK];
        int nsp = 0;
        if (lens[p] < 2 || lens[p] > GS_MAX_RANK) return GS_ERR_INVALID_ARG;
        for (i = 0; i < GS_MAX_RANK; i++) sp[i] = -1;
        for (i = 0; i < (int)lens[p]; i++) {
            char c = parts[p][i];
            if (c == letters[p][0]) {
                if (a >= 0) return GS_ERR_INVALID_ARG;
                a = i;
            } else if (c == letters[p][1]) {
                if (b >= 0) return GS_ERR_INVALID_ARG;
                b = i;
            } else if (c >= '0' && c <= '9') {
                int k = c - '0';
                if (k >= GS_MAX_RANK || sp[k] >= 0) return GS_ERR_INVALID_ARG;
                sp[k] = i;
                nsp++;
            } else {
                return GS_ERR_INVALID_ARG;
            }
        }
        if (a < 0 || b < 0) return GS_ERR_INVALID_ARG;
        for (i = 0; i < nsp; i++)
            if (sp[i] < 0) return GS_ERR_INVALID_ARG; /* spatial digits must be 0..n-1 */
        if (ns >= 0 && nsp != ns) return GS_ERR_INVALID_ARG;
        ns = nsp;
        for (i = 0; i < nsp; i++) {
            if (p == 0) out->input_spatial[i] = sp[i];
            else if (p == 1) out->kernel_spatial[i] = sp[i];
            else out->output_spatial[i] = sp[i];
        }
        if (p == 0) { out->input_batch = a; out->input_feature = b; }
        else if (p == 1) { out->kernel_input_feature = a; out->kernel_output_feature = b; }
        else { out->output_batch = a; out->output_feature = b; }
    }
    out->n_spatial = ns;
    return GS_OK;
}

GS_API int gs_conv_dims_to_labels(const gs_conv_dims *d, char *buf, size_t cap) {
    char part[3][GS_MAX_RANK + 1];
    int p, i, r, n;
    if (!d || !buf || d->n_spatial < 0 || d->n_spatial + 2 > GS_MAX_RANK || d->n_spatial > 10) return -1;
    r = d->n_spatial + 2;
    for (p = 0; p < 3; p++) {
        int64_t a = p == 0 ? d->input_batch : p == 1 ? d->kernel_input_feature : d->output_batch;
        int64_t b = p == 0 ? d->input_feature : p == 1 ? d->kernel_output_feature : d->output_feature;
        const int64_t *sp = p == 0 ? d->input_spatial : p == 1 ? d->kernel_spatial : d->output_spatial;
        const char *letters = p == 0 ? "bf" : p == 1 ? "io" : "bf";
        memset(part[p], 0, sizeof part[p]);
        if (a < 0 || a >= r || b < 0 || b >= r) return -1;
        part[p][a] = letters[0];
        if (part[p][b]) return -1;
        part[p][b] = letters[1];
        for (i = 0; i < d->n_spatial; i++) {
            if (sp[i] < 0 || sp[i] >= r || part[p][sp[i]]) return -1;
            part[p][sp[i]] = (char)('0' + i);
        }
    }
    n = snprintf(buf, cap, "%s_%s->%s", part[0], part[1], part[2]);
    if (n < 0 || (size_t)n >= cap) return -1;
    return n;
}

/* ---------------------------------------------------------------------------------------------------------
   verifier
   ------------------------------------------------------------------------------------------------------- */
GS_API gs_result gs_graph_verify(gs_graph *g) {
    gs_ctx *ctx;
    int i, j, n;
    if (!g) return GS_ERR_INVALID_ARG;
    ctx = g->ctx;
    if (ctx->err) return ctx->err;
    if (!g->root) return gs__err(ctx, GS_ERR_INVALID_ARG, "graph %s has no root", g->name);
    for (i = 0; i < (int)stbds_arrlen(g->params); i++)
        if (!g->params[i]) return gs__err(ctx, GS_ERR_INVALID_ARG, "graph %s: parameter %d is missing (parameters must be numbered 0..n-1)", g->name, i);
    n = (int)stbds_arrlen(g->values);
    for (i = 0; i < n; i++) {
        gs_value *v = g->values[i];
        gs_value copy;
        if (v->id != i) return gs__err(ctx, GS_ERR_INVALID_ARG, "graph %s: %s has a stale position", g->name, v->name);
        for (j = 0; j < v->n_operands; j++) {
            gs_value *o = v->operands[j];
            if (o->graph != g || o->id < 0 || o->id >= i)
                return gs__err(ctx, GS_ERR_INVALID_ARG, "graph %s: %s uses %s before it is defined", g->name, v->name, o->name);
        }
        copy = *v;
        if (v->op != GS_OP_PARAMETER && v->op != GS_OP_CONSTANT && v->op != GS_OP_IOTA && v->op != GS_OP_RESHAPE &&
            v->op != GS_OP_BROADCAST && v->op != GS_OP_RNG && v->op != GS_OP_TO_MANUAL && v->op != GS_OP_TO_FULL &&
            v->op != GS_OP_CONVERT && v->op != GS_OP_BITCAST_CONVERT) {
            GS__ZERO(copy.shape);
            copy.n_tuple = 0;
            copy.tuple = NULL;
            copy.n_tree = 0;
            copy.tree = NULL;
        }
        if (gs__infer(ctx, &copy) != GS_OK) return ctx->err;
        if (!gs__vshape_equal(&copy, v))
            return gs__err(ctx, GS_ERR_SHAPE, "graph %s: %s has a shape that its operands do not give", g->name, v->name);
        for (j = 0; j < gs__n_subgraphs(v); j++)
            if (gs_graph_verify(gs__subgraph(v, j)) != GS_OK) return ctx->err;
    }
    return GS_OK;
}

GS__FN gs_result gs__verify_once(gs_graph *g) {
    gs_result r;
    if (g->ctx->err) return g->ctx->err;
    if (g->verified_root && g->verified_root == g->root && g->verified_n == (int)stbds_arrlen(g->values)) return GS_OK;
    r = gs_graph_verify(g);
    if (r == GS_OK) {
        g->verified_root = g->root;
        g->verified_n = (int)stbds_arrlen(g->values);
    }
    return r;
}
