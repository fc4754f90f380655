/* gs_hlo_text.c - HLO text: the canonical printer and the parser of a documented subset of XLA's HLO text
   syntax (docs/hlo_text.md). The printer reads gs_value fields; the parser builds graphs only through the
   public builders, so a parsed instruction is checked exactly like a built one. */
#include "gs_internal.h"

/* =========================================================================================================
   Shared helpers
   ========================================================================================================= */

/* "f32[4,8]" into buf (truncated to cap) */
GS__FN void gs__hlo_shape_str(const gs_shape *s, char *buf, size_t cap) {
    size_t n;
    int i;
    if (cap == 0) return;
    snprintf(buf, cap, "%s[", gs_dtype_name(s->dtype));
    for (i = 0; i < s->rank; i++) {
        n = strlen(buf);
        snprintf(buf + n, cap - n, i ? ",%lld" : "%lld", (long long)s->dims[i]);
    }
    n = strlen(buf);
    snprintf(buf + n, cap - n, "]");
}

/* Appends the tuple at tree[*pos] (leaves from *leaf on) to buf: "(f32[4], (s32[], pred[]))". A NULL tree is
   a flat tuple of n leaves. */
GS__FN void gs__hlo_tuple_str(const gs_shape *leaves, int n, const int *tree, int *pos, int *leaf, char *buf, size_t cap) {
    char one[128];
    int k, kids = tree ? tree[(*pos)++] : n;
    size_t len = strlen(buf);
    snprintf(buf + len, cap - len, "(");
    for (k = 0; k < kids; k++) {
        len = strlen(buf);
        if (k) snprintf(buf + len, cap - len, ", ");
        if (tree && tree[*pos] >= 0) {
            gs__hlo_tuple_str(leaves, n, tree, pos, leaf, buf, cap);
            continue;
        }
        if (tree) (*pos)++;
        gs__hlo_shape_str(&leaves[(*leaf)++], one, sizeof one);
        len = strlen(buf);
        snprintf(buf + len, cap - len, "%s", one);
    }
    len = strlen(buf);
    snprintf(buf + len, cap - len, ")");
}

/* a value's shape, tuples as "(f32[4], s32[4])" */
GS__FN void gs__hlo_vshape_str(const gs_value *v, char *buf, size_t cap) {
    int pos = 0, leaf = 0;
    if (v->shape.dtype != GS_TUPLE) {
        gs__hlo_shape_str(&v->shape, buf, cap);
        return;
    }
    if (cap == 0) return;
    buf[0] = 0;
    gs__hlo_tuple_str(v->tuple, v->n_tuple, v->tree, &pos, &leaf, buf, cap);
}

/* x rounded to real float type t, as a double */
GS__FN double gs__hlo_round_real(gs_dtype t, double x) { return t == GS_F64 ? x : (double)gs__fp_round(t, x); }

/* Shortest "%.Ng" that reads back to the same value of float type t (x is a value of t). */
GS__FN void gs__hlo_fmt_real(char *buf, size_t cap, gs_dtype t, double x) {
    int p;
    if (x != x) {
        snprintf(buf, cap, "nan");
        return;
    }
    if (x > DBL_MAX || x < -DBL_MAX) {
        snprintf(buf, cap, x > 0 ? "inf" : "-inf");
        return;
    }
    if (x > -9007199254740992.0 && x < 9007199254740992.0 && x == floor(x)) {
        snprintf(buf, cap, "%.0f", x);   /* integers as integers: 300, not 3e+02 */
        return;
    }
    for (p = 1; p <= 17; p++) {
        double back;
        snprintf(buf, cap, "%.*g", p, x);
        back = gs__hlo_round_real(t, strtod(buf, NULL));
        if (back == x) return;
    }
    snprintf(buf, cap, "%.17g", x);
}

static const char *const gs__hlo_cmp_names[] = {"", "EQ", "NE", "LT", "LE", "GT", "GE"};
static const char *const gs__hlo_cmp_type_names[] = {"", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"};

/* the binary op a reducer's ROOT applies for each kind (REPLACE has none) */
GS__FN gs_op gs__hlo_reduce_op(gs_reduce_kind k) {
    switch (k) {
    case GS_REDUCE_SUM: return GS_OP_ADD;
    case GS_REDUCE_PROD: return GS_OP_MULTIPLY;
    case GS_REDUCE_MAX: return GS_OP_MAXIMUM;
    case GS_REDUCE_MIN: return GS_OP_MINIMUM;
    case GS_REDUCE_AND: return GS_OP_AND;
    case GS_REDUCE_OR: return GS_OP_OR;
    default: return GS_OP_INVALID;
    }
}

GS__FN bool gs__hlo_uses_reducer(gs_op op) {
    return op == GS_OP_REDUCE || op == GS_OP_REDUCE_WINDOW || op == GS_OP_ALL_REDUCE || op == GS_OP_SELECT_AND_SCATTER ||
           op == GS_OP_REDUCE_SCATTER || op == GS_OP_SCATTER || (op >= GS_OP_CUMSUM && op <= GS_OP_CUMMIN);
}

/* the reduction of a scan (cumsum, cumprod, cummax, cummin) */
GS__FN gs_reduce_kind gs__hlo_scan_kind(gs_op op) {
    return op == GS_OP_CUMSUM ? GS_REDUCE_SUM : op == GS_OP_CUMPROD ? GS_REDUCE_PROD : op == GS_OP_CUMMAX ? GS_REDUCE_MAX
                                                                                                      : GS_REDUCE_MIN;
}

/* the identity of a reduction over dtype t, as literal text */
GS__FN void gs__hlo_identity_text(gs_reduce_kind k, gs_dtype t, char *buf, size_t cap) {
    int bits = gs__is_int(t) ? atoi(gs_dtype_name(t) + 1) : 0;
    bool hi = k == GS_REDUCE_MIN;
    if (k == GS_REDUCE_SUM || k == GS_REDUCE_PROD) {
        snprintf(buf, cap, "%s", t == GS_PRED ? (k == GS_REDUCE_SUM ? "false" : "true") : (k == GS_REDUCE_SUM ? "0" : "1"));
    } else if (t == GS_PRED) {
        snprintf(buf, cap, "%s", hi ? "true" : "false");
    } else if (!gs__is_int(t)) {
        snprintf(buf, cap, "%s", hi ? "inf" : "-inf");
    } else if (gs__is_signed(t)) {
        uint64_t m = ((uint64_t)1 << (bits - 1)) - 1;
        if (hi) snprintf(buf, cap, "%llu", (unsigned long long)m);
        else snprintf(buf, cap, "-%llu", (unsigned long long)m + 1);
    } else {
        snprintf(buf, cap, "%llu", hi ? (unsigned long long)(bits == 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1) : 0ull);
    }
}

/* =========================================================================================================
   Printer
   ========================================================================================================= */

typedef struct gs__pr_comp { const gs_graph *g; const char *name; } gs__pr_comp;
typedef struct gs__pr_red { gs_reduce_kind kind; gs_dtype dtype; const char *name; } gs__pr_red;
typedef struct gs__pr_cmp { const gs_value *sort; const char *name; } gs__pr_cmp;   /* one sort using it */

typedef struct gs__printer {
    gs_ctx *ctx;
    gs__sb sb;
    gs__pr_comp *comps;   /* stb_ds: sub-computations in print order, the entry last */
    gs__pr_red *reds;     /* stb_ds: reducers in order of first use */
    gs__pr_cmp *cmps;     /* stb_ds: sort comparators in order of first use */
    bool oom;
    gs__pr_comment_fn comment;   /* optional: writes comment lines above each instruction */
    void *comment_user;
    int64_t channel;      /* the last channel_id given (each collective gets the next one) */
    bool ext;             /* keep the extensions argmax/argmin and rng's shard form (gs_hlo_print_extensions) */
} gs__printer;

/* printer-only reducer kinds: the value-and-index reducers of argmax / argmin printed in standard form */
#define GS__PR_ARGMAX ((gs_reduce_kind)(GS_REDUCE_COUNT + 1))
#define GS__PR_ARGMIN ((gs_reduce_kind)(GS_REDUCE_COUNT + 2))

GS__FN bool gs__pr_name_used(const gs__printer *pr, const char *name) {
    int i;
    for (i = 0; i < (int)stbds_arrlen(pr->comps); i++)
        if (pr->comps[i].name && strcmp(pr->comps[i].name, name) == 0) return true;
    for (i = 0; i < (int)stbds_arrlen(pr->reds); i++)
        if (pr->reds[i].name && strcmp(pr->reds[i].name, name) == 0) return true;
    for (i = 0; i < (int)stbds_arrlen(pr->cmps); i++)
        if (pr->cmps[i].name && strcmp(pr->cmps[i].name, name) == 0) return true;
    return false;
}

/* base, or base.1, base.2, ... whichever is not yet a computation name (arena string) */
GS__FN const char *gs__pr_unique(gs__printer *pr, const char *base) {
    const char *name = base;
    int k = 0;
    while (name && gs__pr_name_used(pr, name)) name = gs__arena_printf(pr->ctx, "%s.%d", base, ++k);
    if (!name) pr->oom = true;
    return name;
}

/* while conditions and bodies, conditional branches, comparators and select/scatter computations, depth first,
   so every computation is printed before its users */
GS__FN void gs__pr_collect(gs__printer *pr, const gs_graph *g) {
    gs__pr_comp c;
    int i;
    for (i = 0; i < (int)stbds_arrlen(pr->comps); i++)
        if (pr->comps[i].g == g) return;
    c.g = g;
    c.name = NULL;   /* named later */
    stbds_arrput(pr->comps, c);
    for (i = 0; i < (int)stbds_arrlen(g->values); i++) {
        const gs_value *v = g->values[i];
        int k;
        if (v->reducer) gs__pr_collect(pr, v->reducer);
        if (v->op == GS_OP_CONDITIONAL)
            for (k = 0; k < v->n_branches; k++) gs__pr_collect(pr, v->branches[k]);
        if (v->op != GS_OP_WHILE && v->op != GS_OP_SORT && v->op != GS_OP_SELECT_AND_SCATTER) continue;
        if (v->cond) gs__pr_collect(pr, v->cond);
        if (v->body) gs__pr_collect(pr, v->body);
    }
    /* move g behind everything it called */
    for (i = 0; i < (int)stbds_arrlen(pr->comps); i++) {
        if (pr->comps[i].g == g) {
            stbds_arrdel(pr->comps, i);
            break;
        }
    }
    stbds_arrput(pr->comps, c);
}

GS__FN const char *gs__pr_comp_name(const gs__printer *pr, const gs_graph *g) {
    int i;
    for (i = 0; i < (int)stbds_arrlen(pr->comps); i++)
        if (pr->comps[i].g == g) return pr->comps[i].name;
    return "?";
}

GS__FN gs_dtype gs__pr_operand_dtype(const gs_value *v, int i) {
    if (i < v->n_operands && v->operands[i]) return v->operands[i]->shape.dtype;
    return v->shape.dtype;
}

GS__FN const char *gs__pr_reducer(gs__printer *pr, gs_reduce_kind kind, gs_dtype dt) {
    int i;
    gs__pr_red r;
    for (i = 0; i < (int)stbds_arrlen(pr->reds); i++)
        if (pr->reds[i].kind == kind && pr->reds[i].dtype == dt) return pr->reds[i].name;
    r.kind = kind;
    r.dtype = dt;
    r.name = NULL;
    {
        const char *base = gs__arena_printf(pr->ctx, "%s.%s", kind == GS__PR_ARGMAX ? "argmax" : kind == GS__PR_ARGMIN ? "argmin"
                                            : gs_reduce_kind_name(kind), gs_dtype_name(dt));
        if (!base) {
            pr->oom = true;
            return "?";
        }
        r.name = gs__pr_unique(pr, base);
    }
    if (!r.name) return "?";
    stbds_arrput(pr->reds, r);
    return r.name;
}

/* the to_apply= of v: its reducer computation, or the one the printer writes for its kind */
GS__FN const char *gs__pr_vreducer(gs__printer *pr, const gs_value *v) {
    if (v->reduce == GS_REDUCE_CUSTOM && v->reducer) return gs__pr_comp_name(pr, v->reducer);
    return gs__pr_reducer(pr, v->reduce, gs__pr_operand_dtype(v, 0));
}

GS__FN bool gs__pr_same_comparator(const gs_value *a, const gs_value *b) {
    int i;
    if (a->flag != b->flag || a->n_operands != b->n_operands) return false;
    for (i = 0; i < a->n_operands; i++)
        if (gs__pr_operand_dtype(a, i) != gs__pr_operand_dtype(b, i)) return false;
    return true;
}

GS__FN const char *gs__pr_comparator(gs__printer *pr, const gs_value *sort) {
    int i;
    gs__pr_cmp c;
    gs__sb nb;
    for (i = 0; i < (int)stbds_arrlen(pr->cmps); i++)
        if (gs__pr_same_comparator(pr->cmps[i].sort, sort)) return pr->cmps[i].name;
    gs__sb_init(&nb, pr->ctx);
    gs__sb_puts(&nb, sort->flag ? "compare.gt" : "compare.lt");
    for (i = 0; i < sort->n_operands; i++) gs__sb_printf(&nb, ".%s", gs_dtype_name(gs__pr_operand_dtype(sort, i)));
    c.sort = sort;
    c.name = NULL;
    if (!nb.oom && nb.buf) {
        const char *base = gs__arena_strdup(pr->ctx, nb.buf);
        if (base) c.name = gs__pr_unique(pr, base);
    }
    gs__sb_free(&nb);
    if (!c.name) {
        pr->oom = true;
        return "?";
    }
    stbds_arrput(pr->cmps, c);
    return c.name;
}

GS__FN void gs__pr_ints(gs__sb *sb, const int64_t *a, int n) {
    int i;
    gs__sb_put(sb, "{", 1);
    for (i = 0; i < n; i++) gs__sb_printf(sb, i ? ",%lld" : "%lld", (long long)a[i]);
    gs__sb_put(sb, "}", 1);
}

GS__FN void gs__pr_shape(gs__sb *sb, const gs_shape *s) {
    char buf[16 + GS_MAX_RANK * 21];
    gs__hlo_shape_str(s, buf, sizeof buf);
    gs__sb_puts(sb, buf);
}

/* the tuple at tree[*pos] (leaves from *leaf on); a NULL tree is a flat tuple of n leaves */
GS__FN void gs__pr_tuple_shape(gs__sb *sb, const gs_shape *leaves, int n, const int *tree, int *pos, int *leaf) {
    int k, kids = tree ? tree[(*pos)++] : n;
    gs__sb_put(sb, "(", 1);
    for (k = 0; k < kids; k++) {
        if (k) gs__sb_puts(sb, ", ");
        if (tree && tree[*pos] >= 0) {
            gs__pr_tuple_shape(sb, leaves, n, tree, pos, leaf);
            continue;
        }
        if (tree) (*pos)++;
        gs__pr_shape(sb, &leaves[(*leaf)++]);
    }
    gs__sb_put(sb, ")", 1);
}

GS__FN void gs__pr_value_shape(gs__sb *sb, const gs_value *v) {
    int pos = 0, leaf = 0;
    if (v->shape.dtype != GS_TUPLE) {
        gs__pr_shape(sb, &v->shape);
        return;
    }
    gs__pr_tuple_shape(sb, v->tuple, v->n_tuple, v->tree, &pos, &leaf);
}

/* element i of storage-format data (complex as "(re, im)", as XLA prints it) */
GS__FN void gs__pr_elem(gs__sb *sb, gs_dtype dt, const void *data, int64_t i) {
    char buf[48];
    unsigned char one[16];
    gs__to_compute(dt, one, (const unsigned char *)data + (size_t)i * gs_dtype_size(dt), 1);
    if (gs__is_float(dt)) {
        gs__hlo_fmt_real(buf, sizeof buf, dt, gs__ld_f(dt, one, 0));
        gs__sb_puts(sb, buf);
    } else if (gs__is_complex(dt)) {
        gs_dtype part = dt == GS_C64 ? GS_F32 : GS_F64;
        gs__hlo_fmt_real(buf, sizeof buf, part, gs__ld_f(part, one, 0));
        gs__sb_printf(sb, "(%s, ", buf);
        gs__hlo_fmt_real(buf, sizeof buf, part, gs__ld_f(part, one, 1));
        gs__sb_printf(sb, "%s)", buf);
    } else if (dt == GS_PRED) {
        gs__sb_puts(sb, one[0] ? "true" : "false");
    } else if (gs__is_signed(dt)) {
        gs__sb_printf(sb, "%lld", (long long)(int64_t)gs__ld_i(dt, one, 0));
    } else {
        gs__sb_printf(sb, "%llu", (unsigned long long)gs__ld_i(dt, one, 0));
    }
}

/* nested braces of a dense literal, dims d.. starting at element *pos */
GS__FN void gs__pr_dense(gs__sb *sb, const gs_shape *s, const void *data, int d, int64_t *pos) {
    int64_t i;
    gs__sb_put(sb, "{", 1);
    for (i = 0; i < s->dims[d]; i++) {
        if (i) gs__sb_puts(sb, ", ");
        if (d == s->rank - 1) gs__pr_elem(sb, s->dtype, data, (*pos)++);
        else gs__pr_dense(sb, s, data, d + 1, pos);
    }
    gs__sb_put(sb, "}", 1);
}

/* rev: n reversal flags (a convolution's rhs_reversal) or NULL */
GS__FN void gs__pr_window(gs__sb *sb, const gs_window_dim *w, int n, const bool *rev) {
    int i;
    bool stride = false, pad = false, lhs = false, rhs = false, rv = false;
    for (i = 0; i < n; i++) {
        if (w[i].stride != 1) stride = true;
        if (w[i].pad_lo != 0 || w[i].pad_hi != 0) pad = true;
        if (w[i].base_dilation != 1) lhs = true;
        if (w[i].window_dilation != 1) rhs = true;
        if (rev && rev[i]) rv = true;
    }
    gs__sb_puts(sb, "{");
    if (n > 0) {
        gs__sb_puts(sb, "size=");
        for (i = 0; i < n; i++) gs__sb_printf(sb, i ? "x%lld" : "%lld", (long long)w[i].size);
    }
    if (stride) {
        gs__sb_puts(sb, " stride=");
        for (i = 0; i < n; i++) gs__sb_printf(sb, i ? "x%lld" : "%lld", (long long)w[i].stride);
    }
    if (pad) {
        gs__sb_puts(sb, " pad=");
        for (i = 0; i < n; i++)
            gs__sb_printf(sb, i ? "x%lld_%lld" : "%lld_%lld", (long long)w[i].pad_lo, (long long)w[i].pad_hi);
    }
    if (lhs) {
        gs__sb_puts(sb, " lhs_dilate=");
        for (i = 0; i < n; i++) gs__sb_printf(sb, i ? "x%lld" : "%lld", (long long)w[i].base_dilation);
    }
    if (rhs) {
        gs__sb_puts(sb, " rhs_dilate=");
        for (i = 0; i < n; i++) gs__sb_printf(sb, i ? "x%lld" : "%lld", (long long)w[i].window_dilation);
    }
    if (rv) {
        gs__sb_puts(sb, " rhs_reversal=");
        for (i = 0; i < n; i++) gs__sb_printf(sb, i ? "x%d" : "%d", rev[i] ? 1 : 0);
    }
    gs__sb_puts(sb, "}");
}

GS__FN void gs__pr_groups(gs__sb *sb, const gs_replica_groups *rg) {
    int64_t i, j;
    int k;
    bool ident = true;
    if (rg->n_groups <= 0) {
        gs__sb_puts(sb, "{}");
        return;
    }
    if (rg->ids || rg->iota_rank <= 0) {
        gs__sb_puts(sb, "{");
        for (i = 0; i < rg->n_groups; i++) {
            gs__sb_puts(sb, i ? ",{" : "{");
            for (j = 0; j < rg->group_size; j++)
                gs__sb_printf(sb, j ? ",%lld" : "%lld",
                              (long long)(rg->ids ? rg->ids[i * rg->group_size + j] : i * rg->group_size + j));
            gs__sb_puts(sb, "}");
        }
        gs__sb_puts(sb, "}");
        return;
    }
    gs__sb_printf(sb, "[%lld,%lld]<=[", (long long)rg->n_groups, (long long)rg->group_size);
    for (k = 0; k < rg->iota_rank; k++) {
        gs__sb_printf(sb, k ? ",%lld" : "%lld", (long long)rg->iota_dims[k]);
        if (rg->iota_perm[k] != k) ident = false;
    }
    gs__sb_puts(sb, "]");
    if (!ident) {
        gs__sb_puts(sb, "T(");
        for (k = 0; k < rg->iota_rank; k++) gs__sb_printf(sb, k ? ",%d" : "%d", rg->iota_perm[k]);
        gs__sb_puts(sb, ")");
    }
}

/* the group size of a collective ("{}" groups: all partitions) */
GS__FN int64_t gs__pr_group_size(const gs_value *v) {
    if (v->coll.groups.n_groups > 0) return v->coll.groups.group_size;
    return v->graph && v->graph->num_partitions > 1 ? v->graph->num_partitions : 1;
}

/* XLA reads a collective without channel_id as one across replicas: every collective here is across the
   partitions, so each gets a channel_id of its own (numbered in print order, which keeps printing stable)
   and explicit groups; all-reduce, all-gather and reduce-scatter say use_global_device_ids=true (with one
   replica a global device id is the partition id). */
GS__FN void gs__pr_coll(gs__printer *pr, const gs_value *v, bool groups) {
    gs__sb *sb = &pr->sb;
    gs__sb_printf(sb, ", channel_id=%lld", (long long)++pr->channel);
    if (!groups) return;
    gs__sb_puts(sb, ", replica_groups=");
    if (v->coll.groups.n_groups > 0) {
        gs__pr_groups(sb, &v->coll.groups);
    } else {
        int64_t i, n = gs__pr_group_size(v);
        gs__sb_puts(sb, "{{");
        for (i = 0; i < n; i++) gs__sb_printf(sb, i ? ",%lld" : "%lld", (long long)i);
        gs__sb_puts(sb, "}}");
    }
    if (v->op != GS_OP_ALL_TO_ALL && v->op != GS_OP_RAGGED_ALL_TO_ALL) gs__sb_puts(sb, ", use_global_device_ids=true");
}

/* the attributes of data movement, elementwise, reduction and windowed ops */
/* a dot's dimension numbers as XLA prints them (batch dims only when there are some) */
GS__FN void gs__pr_dot_dims(gs__sb *sb, const gs_dot_dims *d) {
    if (d->n_batch > 0) {
        gs__sb_puts(sb, ", lhs_batch_dims=");
        gs__pr_ints(sb, d->lhs_batch, d->n_batch);
    }
    gs__sb_puts(sb, ", lhs_contracting_dims=");
    gs__pr_ints(sb, d->lhs_contract, d->n_contract);
    if (d->n_batch > 0) {
        gs__sb_puts(sb, ", rhs_batch_dims=");
        gs__pr_ints(sb, d->rhs_batch, d->n_batch);
    }
    gs__sb_puts(sb, ", rhs_contracting_dims=");
    gs__pr_ints(sb, d->rhs_contract, d->n_contract);
}

/* ragged-dot: the dot's dims, then lhs_ragged_dims and rhs_group_dims when not empty (XLA's
   RaggedDotDimensionNumbersToString) */
GS__FN void gs__pr_ragged_dims(gs__sb *sb, const gs_ragged_dot_dims *d) {
    gs__pr_dot_dims(sb, &d->dot);
    if (d->n_lhs_ragged > 0) {
        gs__sb_puts(sb, ", lhs_ragged_dims=");
        gs__pr_ints(sb, d->lhs_ragged, d->n_lhs_ragged);
    }
    if (d->n_rhs_group > 0) {
        gs__sb_puts(sb, ", rhs_group_dims=");
        gs__pr_ints(sb, d->rhs_group, d->n_rhs_group);
    }
}

GS__FN void gs__pr_attrs_compute(gs__printer *pr, const gs_value *v) {
    gs__sb *sb = &pr->sb;
    int i, rank = v->n_operands > 0 && v->operands[0] ? v->operands[0]->shape.rank : v->shape.rank;
    switch (v->op) {
    case GS_OP_IOTA: gs__sb_printf(sb, ", iota_dimension=%lld", (long long)v->dim); break;
    case GS_OP_BROADCAST:
    case GS_OP_TRANSPOSE:
    case GS_OP_REVERSE:
        gs__sb_puts(sb, ", dimensions=");
        gs__pr_ints(sb, v->dims, v->n_dims);
        break;
    case GS_OP_SLICE:
        gs__sb_puts(sb, ", slice={");
        for (i = 0; i < rank; i++) {
            gs__sb_printf(sb, "%s[%lld:%lld", i ? ", " : "", (long long)v->start[i], (long long)v->limit[i]);
            if (v->stride && v->stride[i] != 1) gs__sb_printf(sb, ":%lld", (long long)v->stride[i]);
            gs__sb_puts(sb, "]");
        }
        gs__sb_puts(sb, "}");
        break;
    case GS_OP_DYNAMIC_SLICE:
        gs__sb_puts(sb, ", dynamic_slice_sizes=");
        gs__pr_ints(sb, v->sizes, v->shape.rank);
        break;
    case GS_OP_PAD: {
        bool interior = false;
        for (i = 0; i < rank; i++)
            if (v->interior && v->interior[i] != 0) interior = true;
        gs__sb_puts(sb, ", padding=");
        if (rank == 0) gs__sb_puts(sb, "{}");
        for (i = 0; i < rank; i++) {
            gs__sb_printf(sb, i ? "x%lld_%lld" : "%lld_%lld", (long long)v->lo[i], (long long)v->hi[i]);
            if (interior) gs__sb_printf(sb, "_%lld", (long long)v->interior[i]);
        }
        break;
    }
    case GS_OP_CONCATENATE:
    case GS_OP_ARGMAX:
    case GS_OP_ARGMIN:
        gs__sb_printf(sb, ", dimensions={%lld}", (long long)v->dim);
        break;
    case GS_OP_COMPARE: {
        gs_dtype t = v->operands[0]->shape.dtype;
        gs_cmp_type def = (gs__is_float(t) || gs__is_complex(t)) ? GS_CMP_TYPE_FLOAT
                          : gs__is_signed(t) ? GS_CMP_TYPE_SIGNED : GS_CMP_TYPE_UNSIGNED;
        gs__sb_printf(sb, ", direction=%s",
                      v->cmp > GS_CMP_INVALID && v->cmp < GS_CMP_COUNT ? gs__hlo_cmp_names[v->cmp] : "?");
        if (v->cmp_type != def && v->cmp_type > GS_CMP_TYPE_DEFAULT && v->cmp_type < GS_CMP_TYPE_COUNT)
            gs__sb_printf(sb, ", type=%s", gs__hlo_cmp_type_names[v->cmp_type]);
        break;
    }
    case GS_OP_REDUCE:
        gs__sb_puts(sb, ", dimensions=");
        gs__pr_ints(sb, v->dims, v->n_dims);
        gs__sb_printf(sb, ", to_apply=%s", gs__pr_vreducer(pr, v));
        break;
    case GS_OP_DOT:
        if (v->dot) gs__pr_dot_dims(sb, v->dot);
        break;
    case GS_OP_CONVOLUTION: {
        const gs_conv_config *c = v->conv;
        char labels[3 * (GS_MAX_RANK + 2) + 8];
        if (!c) break;
        if (c->dims.n_spatial > 0) {
            gs__sb_puts(sb, ", window=");
            gs__pr_window(sb, c->window, c->dims.n_spatial, c->reversal);
        }
        if (gs_conv_dims_to_labels(&c->dims, labels, sizeof labels) < 0) strcpy(labels, "?");
        gs__sb_printf(sb, ", dim_labels=%s", labels);
        if (c->feature_group_count > 1)
            gs__sb_printf(sb, ", feature_group_count=%lld", (long long)c->feature_group_count);
        if (c->batch_group_count > 1) gs__sb_printf(sb, ", batch_group_count=%lld", (long long)c->batch_group_count);
        break;
    }
    case GS_OP_REDUCE_WINDOW:
        gs__sb_puts(sb, ", window=");
        if (v->window) gs__pr_window(sb, v->window, rank, NULL);
        else gs__sb_puts(sb, "{}");
        gs__sb_printf(sb, ", to_apply=%s", gs__pr_vreducer(pr, v));
        break;
    default: break;
    }
}

/* the attributes of indexing, sorting, random, collective, custom-call and control ops */
GS__FN void gs__pr_attrs(gs__printer *pr, const gs_value *v) {
    gs__sb *sb = &pr->sb;
    int rank = v->n_operands > 0 && v->operands[0] ? v->operands[0]->shape.rank : v->shape.rank;
    if (v->op == GS_OP_COPY && v->barrier) {
        gs__sb_printf(sb, ", custom_call_target=\"%s\"", v->barrier == 1 ? "ShardBarrierFrom" : "ShardBarrierTo");
        return;
    }
    if (v->op < GS_OP_GATHER) {
        gs__pr_attrs_compute(pr, v);
        return;
    }
    switch (v->op) {
    case GS_OP_GATHER: {
        const gs_gather_dims *d = v->gather;
        if (!d) break;
        gs__sb_puts(sb, ", offset_dims=");
        gs__pr_ints(sb, d->offset_dims, d->n_offset_dims);
        gs__sb_puts(sb, ", collapsed_slice_dims=");
        gs__pr_ints(sb, d->collapsed_slice_dims, d->n_collapsed_slice_dims);
        gs__sb_puts(sb, ", start_index_map=");
        gs__pr_ints(sb, d->start_index_map, d->n_start_index_map);
        if (d->n_operand_batching_dims > 0) {
            gs__sb_puts(sb, ", operand_batching_dims=");
            gs__pr_ints(sb, d->operand_batching_dims, d->n_operand_batching_dims);
            gs__sb_puts(sb, ", start_indices_batching_dims=");
            gs__pr_ints(sb, d->start_indices_batching_dims, d->n_operand_batching_dims);
        }
        gs__sb_printf(sb, ", index_vector_dim=%lld, slice_sizes=", (long long)d->index_vector_dim);
        gs__pr_ints(sb, d->slice_sizes, rank);
        break;
    }
    case GS_OP_SCATTER: {
        const gs_scatter_dims *d = v->scatter;
        if (!d) break;
        gs__sb_puts(sb, ", update_window_dims=");
        gs__pr_ints(sb, d->update_window_dims, d->n_update_window_dims);
        gs__sb_puts(sb, ", inserted_window_dims=");
        gs__pr_ints(sb, d->inserted_window_dims, d->n_inserted_window_dims);
        gs__sb_puts(sb, ", scatter_dims_to_operand_dims=");
        gs__pr_ints(sb, d->scatter_dims_to_operand_dims, d->n_scatter_dims_to_operand_dims);
        if (d->n_input_batching_dims > 0) {
            gs__sb_puts(sb, ", input_batching_dims=");
            gs__pr_ints(sb, d->input_batching_dims, d->n_input_batching_dims);
            gs__sb_puts(sb, ", scatter_indices_batching_dims=");
            gs__pr_ints(sb, d->scatter_indices_batching_dims, d->n_input_batching_dims);
        }
        gs__sb_printf(sb, ", index_vector_dim=%lld", (long long)d->index_vector_dim);
        gs__sb_printf(sb, ", to_apply=%s", gs__pr_vreducer(pr, v));
        break;
    }
    case GS_OP_SORT:
        gs__sb_printf(sb, ", dimensions={%lld}, is_stable=true, to_apply=%s", (long long)v->dim,
                      v->cond ? gs__pr_comp_name(pr, v->cond) : gs__pr_comparator(pr, v));
        break;
    case GS_OP_TOPK: gs__sb_printf(sb, ", k=%lld, largest=%s", (long long)v->dim, v->flag ? "true" : "false"); break;
    case GS_OP_RNG:
        gs__sb_printf(sb, ", distribution=rng_uniform, seed=%llu", (unsigned long long)v->seed);
        if (v->rng_full) {
            gs__sb_puts(sb, ", full_shape=");
            gs__pr_shape(sb, v->rng_full);
        }
        break;
    case GS_OP_REDUCE_PRECISION:
        gs__sb_printf(sb, ", exponent_bits=%d, mantissa_bits=%d", v->rp_exp, v->rp_mant);
        break;
    case GS_OP_BATCH_NORM_TRAINING: case GS_OP_BATCH_NORM_INFERENCE: case GS_OP_BATCH_NORM_GRAD: {
        char eb[48];
        gs__hlo_fmt_real(eb, sizeof eb, GS_F32, (double)v->bn_epsilon);
        gs__sb_printf(sb, ", epsilon=%s, feature_index=%lld", eb, (long long)v->dim);
        break;
    }
    case GS_OP_CHOLESKY: gs__sb_printf(sb, ", lower=%s", v->la_lower ? "true" : "false"); break;
    case GS_OP_RAGGED_DOT:
        if (v->ragged) gs__pr_ragged_dims(sb, v->ragged);
        break;
    case GS_OP_SELECT_AND_SCATTER:
        gs__sb_puts(sb, ", window=");
        if (v->window) gs__pr_window(sb, v->window, rank, NULL);
        gs__sb_printf(sb, ", select=%s, scatter=%s", gs__pr_comp_name(pr, v->cond),
                      gs__pr_vreducer(pr, v));
        break;
    case GS_OP_FFT: {
        static const char *const tnames[] = {"?", "FFT", "IFFT", "RFFT", "IRFFT"};
        gs__sb_printf(sb, ", fft_type=%s, fft_length=", tnames[v->fft_type >= 1 && v->fft_type <= 4 ? v->fft_type : 0]);
        gs__pr_ints(sb, v->fft_len, v->fft_n);
        break;
    }
    case GS_OP_TRIANGULAR_SOLVE:
        gs__sb_printf(sb, ", left_side=%s, lower=%s, unit_diagonal=%s, transpose_a=%s", v->la_left ? "true" : "false",
                      v->la_lower ? "true" : "false", v->la_unit ? "true" : "false",
                      v->la_trans == GS_TRANSPOSE_A_TRANSPOSE ? "TRANSPOSE" : v->la_trans == GS_TRANSPOSE_A_ADJOINT ? "ADJOINT" : "NO_TRANSPOSE");
        break;
    case GS_OP_RNG_BIT_GENERATOR:
        gs__sb_printf(sb, ", algorithm=%s", v->rng_alg == GS_RNG_THREE_FRY ? "rng_three_fry" : v->rng_alg == GS_RNG_PHILOX ? "rng_philox" : "rng_default");
        break;
    case GS_OP_ALL_REDUCE:
        gs__pr_coll(pr, v, true);
        gs__sb_printf(sb, ", to_apply=%s", gs__pr_vreducer(pr, v));
        break;
    case GS_OP_ALL_GATHER:
    case GS_OP_REDUCE_SCATTER:
        gs__pr_coll(pr, v, true);
        gs__sb_printf(sb, ", dimensions={%lld}", (long long)v->dim);
        if (v->op == GS_OP_REDUCE_SCATTER)
            gs__sb_printf(sb, ", to_apply=%s", gs__pr_vreducer(pr, v));
        break;
    case GS_OP_ALL_TO_ALL:   /* split != concat is printed as four instructions (gs__pr_all_to_all) */
        gs__pr_coll(pr, v, true);
        gs__sb_printf(sb, ", dimensions={%lld}", (long long)v->split_dim);
        break;
    case GS_OP_RAGGED_ALL_TO_ALL:
        gs__pr_coll(pr, v, true);
        if (v->flag) gs__sb_printf(sb, ", dimensions={%lld}", (long long)v->dim);
        break;
    case GS_OP_COLLECTIVE_PERMUTE: {
        int64_t k;
        gs__pr_coll(pr, v, false);
        gs__sb_puts(sb, ", source_target_pairs={");
        for (k = 0; k < v->n_pairs; k++)
            gs__sb_printf(sb, "%s{%lld,%lld}", k ? "," : "", (long long)v->pairs[2 * k], (long long)v->pairs[2 * k + 1]);
        gs__sb_puts(sb, "}");
        break;
    }
    case GS_OP_ANNOTATE: gs__sb_puts(sb, ", custom_call_target=\"Sharding\""); break;
    case GS_OP_TO_MANUAL: gs__sb_puts(sb, ", custom_call_target=\"SPMDFullToShardShape\""); break;
    case GS_OP_TO_FULL: gs__sb_puts(sb, ", custom_call_target=\"SPMDShardToFullShape\""); break;
    case GS_OP_GET_TUPLE_ELEMENT: gs__sb_printf(sb, ", index=%lld", (long long)v->index); break;
    case GS_OP_WHILE:
        gs__sb_printf(sb, ", condition=%s, body=%s", gs__pr_comp_name(pr, v->cond), gs__pr_comp_name(pr, v->body));
        break;
    case GS_OP_CONDITIONAL: {
        int k;
        if (v->operands[0]->shape.dtype == GS_PRED) {
            gs__sb_printf(sb, ", true_computation=%s", gs__pr_comp_name(pr, v->branches[0]));
            gs__sb_printf(sb, ", false_computation=%s", gs__pr_comp_name(pr, v->branches[1]));
            break;
        }
        gs__sb_puts(sb, ", branch_computations={");
        for (k = 0; k < v->n_branches; k++) gs__sb_printf(sb, "%s%s", k ? ", " : "", gs__pr_comp_name(pr, v->branches[k]));
        gs__sb_puts(sb, "}");
        break;
    }
    default: break;
    }
}

/* "  NAME = SHAPE " of a helper instruction printed in place of one value */
GS__FN void gs__pr_lhs(gs__sb *sb, const char *name, const char *suffix, const gs_shape *s) {
    gs__sb_printf(sb, "  %s%s = ", name, suffix);
    gs__pr_shape(sb, s);
    gs__sb_put(sb, " ", 1);
}

/* XLA's all-to-all splits and concatenates along one dimension. With split dim s != concat dim c (x of
   shape S, n devices in a group) it is printed as XLA's partitioner writes it:
     NAME.split = reshape(x)          S with dim s as (n, S[s]/n)
     NAME.a2a   = all-to-all(..), dimensions={s}   dim s now counts the source device
     NAME.t     = transpose(..)       that dim moved in front of dim c
     NAME       = reshape(..)         (n, S[c]) merged: the blocks in source order along c
   Only the last line is left to the caller (a reshape of NAME.t). */
GS__FN void gs__pr_all_to_all(gs__printer *pr, const gs_value *v) {
    gs__sb *sb = &pr->sb;
    const gs_shape *xs = &v->operands[0]->shape;
    int r = xs->rank, s = (int)v->split_dim, c = (int)v->concat_dim, i, k = 0, cpos;
    int64_t n = gs__pr_group_size(v), perm[GS_MAX_RANK + 1];
    gs_shape a = *xs, t;
    a.rank = r + 1;
    for (i = r; i > s; i--) a.dims[i] = xs->dims[i - 1];
    a.dims[s] = n;
    a.dims[s + 1] = n > 0 ? xs->dims[s] / n : 0;
    gs__pr_lhs(sb, v->name, ".split", &a);
    gs__sb_printf(sb, "reshape(%s)\n", v->operands[0]->name);
    gs__pr_lhs(sb, v->name, ".a2a", &a);
    gs__sb_printf(sb, "all-to-all(%s.split)", v->name);
    gs__pr_coll(pr, v, true);
    gs__sb_printf(sb, ", dimensions={%d}\n", s);
    cpos = c < s ? c : c + 1;
    for (i = 0; i <= r; i++) {
        if (i == cpos) perm[k++] = s;
        if (i != s) perm[k++] = i;
    }
    t = a;
    for (i = 0; i <= r; i++) t.dims[i] = a.dims[perm[i]];
    gs__pr_lhs(sb, v->name, ".t", &t);
    gs__sb_printf(sb, "transpose(%s.a2a), dimensions=", v->name);
    gs__pr_ints(sb, perm, r + 1);
    gs__sb_put(sb, "\n", 1);
}

GS__FN void gs__pr_value_tail(gs__printer *pr, const gs_value *v);

/* v is a helper of argmax's standard form read back (dead, named "<a>.iota", "<a>.init" or "<a>.iinit" for
   the argmax a at most 3 values on): printed as the argmax printed it, without a sharding, so that the text
   stays the same through propagation */
GS__FN bool gs__pr_argmax_helper(const gs__printer *pr, const gs_value *v) {
    static const char *const suf[] = {".iota", ".init", ".iinit"};
    int k, j;
    if (pr->ext || !v->name || !v->graph || v->op == GS_OP_ARGMAX || v->op == GS_OP_ARGMIN) return false;
    for (k = 1; k <= 3 && v->id + k < (int)stbds_arrlen(v->graph->values); k++) {
        const gs_value *a = v->graph->values[v->id + k];
        size_t n = a->name ? strlen(a->name) : 0;
        if (a->op != GS_OP_ARGMAX && a->op != GS_OP_ARGMIN) continue;
        for (j = 0; j < 3; j++)
            if (n && strncmp(v->name, a->name, n) == 0 && strcmp(v->name + n, suf[j]) == 0 && j == 3 - k) return true;
    }
    return false;
}

/* the value before v is named "<v>.<suffix>" (the helper a standard-form print of v wrote, read back) */
GS__FN bool gs__pr_helper_before(const gs_value *v, int back, const char *suffix) {
    const gs_value *h;
    size_t n = strlen(v->name);
    if (v->id < back) return false;
    h = v->graph->values[v->id - back];
    return h->name && strncmp(h->name, v->name, n) == 0 && strcmp(h->name + n, suffix) == 0;
}

/* argmax(x), dimensions={d} in standard HLO: the variadic reduce of (x, iota along d) from (the lowest value, 0)
   with the value-and-index reducer, element 1 of its result. The helpers keep v's name with a suffix; when v
   was read back from this form they are the three values before it, printed already. */
GS__FN void gs__pr_argmax_std(gs__printer *pr, const gs_value *v, bool root) {
    gs__sb *sb = &pr->sb;
    const gs_value *x = v->operands[0];
    gs_shape s0 = x->shape, io = x->shape;
    char lit[40];
    bool have = gs__pr_helper_before(v, 3, ".iota") && gs__pr_helper_before(v, 2, ".init") && gs__pr_helper_before(v, 1, ".iinit");
    gs_reduce_kind k = v->op == GS_OP_ARGMAX ? GS__PR_ARGMAX : GS__PR_ARGMIN;
    s0.rank = 0;
    io.dtype = GS_S32;
    if (!have) {
        gs__pr_lhs(sb, v->name, ".iota", &io);
        gs__sb_printf(sb, "iota(), iota_dimension=%lld\n", (long long)v->dim);
        gs__hlo_identity_text(v->op == GS_OP_ARGMAX ? GS_REDUCE_MAX : GS_REDUCE_MIN, x->shape.dtype, lit, sizeof lit);
        gs__pr_lhs(sb, v->name, ".init", &s0);
        gs__sb_printf(sb, "constant(%s)\n", lit);
        s0.dtype = GS_S32;
        gs__pr_lhs(sb, v->name, ".iinit", &s0);
        gs__sb_puts(sb, "constant(0)\n");
    }
    gs__sb_printf(sb, "  %s.r = (", v->name);
    s0 = v->shape;
    s0.dtype = x->shape.dtype;
    gs__pr_shape(sb, &s0);
    gs__sb_puts(sb, ", ");
    gs__pr_shape(sb, &v->shape);
    gs__sb_printf(sb, ") reduce(%s, %s.iota, %s.init, %s.iinit), dimensions={%lld}, to_apply=%s\n", x->name, v->name, v->name,
                  v->name, (long long)v->dim, gs__pr_reducer(pr, k, x->shape.dtype));
    gs__sb_puts(sb, root ? "  ROOT " : "  ");
    gs__sb_printf(sb, "%s = ", v->name);
    gs__pr_shape(sb, &v->shape);
    gs__sb_printf(sb, " get-tuple-element(%s.r), index=1", v->name);
}

/* rng's shard form in standard HLO: the rng of the whole shape, padded by the shard's size on the high side
   (so no start is clamped), dynamic-sliced at the offsets */
GS__FN void gs__pr_rng_std(gs__printer *pr, const gs_value *v, bool root) {
    gs__sb *sb = &pr->sb;
    gs_shape s0 = v->shape, ps = *v->rng_full;
    int d;
    gs__pr_lhs(sb, v->name, ".full", v->rng_full);
    gs__sb_printf(sb, "rng(%s, %s), distribution=rng_uniform, seed=%llu\n", v->operands[0]->name, v->operands[1]->name,
                  (unsigned long long)v->seed);
    s0.rank = 0;
    gs__pr_lhs(sb, v->name, ".zero", &s0);
    gs__sb_puts(sb, "constant(0)\n");
    for (d = 0; d < ps.rank; d++) ps.dims[d] += v->shape.dims[d];
    gs__pr_lhs(sb, v->name, ".padded", &ps);
    gs__sb_printf(sb, "pad(%s.full, %s.zero), padding=", v->name, v->name);
    for (d = 0; d < ps.rank; d++) gs__sb_printf(sb, "%s0_%lld", d ? "x" : "", (long long)v->shape.dims[d]);
    gs__sb_puts(sb, "\n");
    gs__sb_puts(sb, root ? "  ROOT " : "  ");
    gs__sb_printf(sb, "%s = ", v->name);
    gs__pr_shape(sb, &v->shape);
    gs__sb_printf(sb, " dynamic-slice(%s.padded", v->name);
    for (d = 2; d < v->n_operands; d++) gs__sb_printf(sb, ", %s", v->operands[d]->name);
    gs__sb_puts(sb, "), dynamic_slice_sizes={");
    for (d = 0; d < v->shape.rank; d++) gs__sb_printf(sb, "%s%lld", d ? "," : "", (long long)v->shape.dims[d]);
    gs__sb_puts(sb, "}");
}

/* Result k of a variadic reduce, reduce-window or scatter whose reducer mixes the components: the variadic op
   as "<v>.v" (XLA's operand order; no sharding: its users are the get-tuple-elements), then element k of it. Read
   back, the op's one get-tuple-element user makes it result k alone again (gs__bi_variadic). */
GS__FN void gs__pr_variadic_std(gs__printer *pr, const gs_value *v, bool root) {
    gs__sb *sb = &pr->sb;
    int n = v->red_n, b = gs__red_base(v), j;
    gs__sb_printf(sb, "  %s.v = (", v->name);
    for (j = 0; j < n; j++) {
        gs_shape s = v->shape;
        s.dtype = v->operands[b + j]->shape.dtype;
        if (j) gs__sb_puts(sb, ", ");
        gs__pr_shape(sb, &s);
    }
    gs__sb_printf(sb, ") %s(", gs_op_name(v->op));
    for (j = 0; j < 2 * n; j++) {
        if (j == n && v->op == GS_OP_SCATTER) gs__sb_printf(sb, ", %s", v->operands[1]->name);
        gs__sb_printf(sb, "%s%s", j ? ", " : "", v->operands[b + j]->name);
    }
    gs__sb_put(sb, ")", 1);
    gs__pr_attrs(pr, v);
    gs__sb_puts(sb, root ? "\n  ROOT " : "\n  ");
    gs__sb_printf(sb, "%s = ", v->name);
    gs__pr_shape(sb, &v->shape);
    gs__sb_printf(sb, " get-tuple-element(%s.v), index=%d", v->name, v->red_k);
}

GS__FN void gs__pr_value(gs__printer *pr, const gs_value *v, bool root) {
    gs__sb *sb = &pr->sb;
    int i;
    bool std_arg = !pr->ext && (v->op == GS_OP_ARGMAX || v->op == GS_OP_ARGMIN);
    bool std_rng = !pr->ext && v->op == GS_OP_RNG && v->rng_full;
    bool a2a = v->op == GS_OP_ALL_TO_ALL && v->split_dim != v->concat_dim;
    bool splat = v->op == GS_OP_CONSTANT && v->data && v->splat && v->shape.rank > 0;
    bool scan = v->op >= GS_OP_CUMSUM && v->op <= GS_OP_CUMMIN;
    if (a2a) gs__pr_all_to_all(pr, v);
    if (scan) {   /* XLA has no scan op: the reduce-window of the whole prefix (or suffix) */
        char lit[32];
        gs_shape s0 = v->shape;
        s0.rank = 0;
        gs__hlo_identity_text(gs__hlo_scan_kind(v->op), v->shape.dtype, lit, sizeof lit);
        gs__pr_lhs(sb, v->name, ".init", &s0);
        gs__sb_printf(sb, "constant(%s)%s\n", lit, v->sharding ? ", sharding={replicated}" : "");
    }
    if (splat) {   /* XLA reads a literal for every element: a scalar constant, broadcast */
        gs_shape s0 = v->shape;
        s0.rank = 0;
        gs__pr_lhs(sb, v->name, ".scalar", &s0);
        gs__sb_puts(sb, "constant(");
        gs__pr_elem(sb, v->shape.dtype, v->data, 0);
        gs__sb_puts(sb, v->sharding ? "), sharding={replicated}\n" : ")\n");
    }
    if (std_arg || std_rng || v->red_n > 0) {
        if (std_arg) gs__pr_argmax_std(pr, v, root);
        else if (std_rng) gs__pr_rng_std(pr, v, root);
        else gs__pr_variadic_std(pr, v, root);
        gs__pr_value_tail(pr, v);
        return;
    }
    gs__sb_puts(sb, root ? "  ROOT " : "  ");
    gs__sb_puts(sb, v->name ? v->name : "_");
    gs__sb_puts(sb, " = ");
    gs__pr_value_shape(sb, v);
    gs__sb_put(sb, " ", 1);
    if (a2a) {
        gs__sb_printf(sb, "reshape(%s.t)", v->name);
    } else if (splat) {
        gs__sb_printf(sb, "broadcast(%s.scalar), dimensions={}", v->name);
    } else if (scan) {
        gs_window_dim w[GS_MAX_RANK];
        int64_t n = v->shape.dims[v->dim] > 0 ? v->shape.dims[v->dim] : 1;
        for (i = 0; i < v->shape.rank; i++) w[i] = gs_window_default();
        w[v->dim].size = n;
        if (v->flag) w[v->dim].pad_hi = n - 1;
        else w[v->dim].pad_lo = n - 1;
        gs__sb_printf(sb, "reduce-window(%s, %s.init), window=", v->operands[0]->name, v->name);
        gs__pr_window(sb, w, v->shape.rank, NULL);
        gs__sb_printf(sb, ", to_apply=%s", gs__pr_reducer(pr, gs__hlo_scan_kind(v->op), v->shape.dtype));
    } else {
        gs__sb_puts(sb, v->op == GS_OP_OPAQUE && v->opaque ? v->opaque : v->barrier && v->op == GS_OP_COPY ? "custom-call" : gs_op_name(v->op));
        gs__sb_put(sb, "(", 1);
        if (v->op == GS_OP_PARAMETER) {
            gs__sb_printf(sb, "%lld", (long long)v->index);
        } else if (v->op == GS_OP_CONSTANT) {
            if (v->data && v->shape.rank == 0) {
                gs__pr_elem(sb, v->shape.dtype, v->data, 0);
            } else if (v->data) {
                int64_t pos = 0;
                gs__pr_dense(sb, &v->shape, v->data, 0, &pos);
            } else {
                gs__sb_puts(sb, "{...}");
            }
        } else {
            for (i = 0; i < v->n_operands; i++) {
                if (i) gs__sb_puts(sb, ", ");
                gs__sb_puts(sb, v->operands[i] && v->operands[i]->name ? v->operands[i]->name : "_");
            }
        }
        gs__sb_put(sb, ")", 1);
        gs__pr_attrs(pr, v);
    }
    gs__pr_value_tail(pr, v);
}

/* sharding, kept attributes and the end of the line */
GS__FN void gs__pr_value_tail(gs__printer *pr, const gs_value *v) {
    gs__sb *sb = &pr->sb;
    if (v->sharding && !gs__pr_argmax_helper(pr, v) && !(v->op == GS_OP_OPAQUE && v->text_attrs &&
                                                         strstr(v->text_attrs, ", sharding="))) {   /* kept as written */
        gs__sb_puts(sb, ", sharding=");
        if (v->open_text && v->sharding == v->open_sh) gs__sb_puts(sb, v->open_text);   /* {?} as written */
        else gs__nt_print_sharding(sb, pr->ctx, v->sharding, v);
    }
    if ((v->op == GS_OP_ANNOTATE || v->op == GS_OP_TO_MANUAL || v->op == GS_OP_TO_FULL) && v->open_dims &&
        !(v->open_text && v->sharding == v->open_sh)) {
        int d, k = 0;
        gs__sb_puts(sb, ", backend_config=\"unspecified_dims=[");
        for (d = 0; d < 32; d++)
            if (v->open_dims & (1u << d)) gs__sb_printf(sb, "%s%d", k++ ? "," : "", d);
        gs__sb_puts(sb, "]\"");
    }
    if (v->text_attrs) gs__sb_puts(sb, v->text_attrs);
    gs__sb_put(sb, "\n", 1);
}

/* Registers every reducer and comparator the printed graphs use (first-use order), without output. */
GS__FN void gs__pr_scan_called(gs__printer *pr) {
    int c, i;
    for (c = 0; c < (int)stbds_arrlen(pr->comps); c++) {
        const gs_graph *g = pr->comps[c].g;
        for (i = 0; i < (int)stbds_arrlen(g->values); i++) {
            const gs_value *v = g->values[i];
            if (v->op >= GS_OP_CUMSUM && v->op <= GS_OP_CUMMIN) gs__pr_reducer(pr, gs__hlo_scan_kind(v->op), gs__pr_operand_dtype(v, 0));
            else if (gs__hlo_uses_reducer(v->op)) gs__pr_vreducer(pr, v);
            else if (v->op == GS_OP_SORT && !v->cond) gs__pr_comparator(pr, v);
            else if ((v->op == GS_OP_ARGMAX || v->op == GS_OP_ARGMIN) && !pr->ext)
                gs__pr_reducer(pr, v->op == GS_OP_ARGMAX ? GS__PR_ARGMAX : GS__PR_ARGMIN, gs__pr_operand_dtype(v, 0));
        }
    }
}

/* argmax's reducer: (a, ai) is kept over (b, bi) when a is better, when a is NaN and b is not, or when they tie
   (equal, or both NaN) and ai < bi: a total order, so any reduction order gives the first best element, NaN
   first (gs_argmax) */
GS__FN void gs__pr_argmax_body(gs__printer *pr, const gs__pr_red *r) {
    const char *dt = gs_dtype_name(r->dtype);
    gs__sb_printf(&pr->sb, "%s {\n  a = %s[] parameter(0)\n  ai = s32[] parameter(1)\n  b = %s[] parameter(2)\n"
                  "  bi = s32[] parameter(3)\n  better = pred[] compare(a, b), direction=%s\n"
                  "  an = pred[] compare(a, a), direction=NE\n  bn = pred[] compare(b, b), direction=NE\n"
                  "  bnum = pred[] not(bn)\n  nan = pred[] and(an, bnum)\n  both = pred[] and(an, bn)\n"
                  "  eq = pred[] compare(a, b), direction=EQ\n  same = pred[] or(eq, both)\n"
                  "  first = pred[] compare(ai, bi), direction=LT\n  tie = pred[] and(same, first)\n"
                  "  k0 = pred[] or(better, nan)\n  keep = pred[] or(k0, tie)\n  v = %s[] select(keep, a, b)\n"
                  "  i = s32[] select(keep, ai, bi)\n  ROOT r = (%s[], s32[]) tuple(v, i)\n}\n",
                  r->name, dt, dt, r->kind == GS__PR_ARGMAX ? "GT" : "LT", dt, dt);
}

GS__FN void gs__pr_reducer_body(gs__printer *pr, const gs__pr_red *r) {
    gs__sb *sb = &pr->sb;
    const char *dt = gs_dtype_name(r->dtype);
    if (r->kind == GS__PR_ARGMAX || r->kind == GS__PR_ARGMIN) {
        gs__pr_argmax_body(pr, r);
        return;
    }
    gs__sb_printf(sb, "%s {\n  x = %s[] parameter(0)\n", r->name, dt);
    if (r->kind == GS_REDUCE_REPLACE) {
        gs__sb_printf(sb, "  ROOT y = %s[] parameter(1)\n}\n", dt);
    } else {
        gs__sb_printf(sb, "  y = %s[] parameter(1)\n  ROOT r = %s[] %s(x, y)\n}\n", dt, dt,
                      gs_op_name(gs__hlo_reduce_op(r->kind)));
    }
}

GS__FN void gs__pr_comparator_body(gs__printer *pr, const gs__pr_cmp *c) {
    gs__sb *sb = &pr->sb;
    int i;
    gs__sb_printf(sb, "%s {\n", c->name);
    for (i = 0; i < 2 * c->sort->n_operands; i++)
        gs__sb_printf(sb, "  p%d = %s[] parameter(%d)\n", i, gs_dtype_name(gs__pr_operand_dtype(c->sort, i / 2)), i);
    gs__sb_printf(sb, "  ROOT r = pred[] compare(p0, p1), direction=%s\n}\n", c->sort->flag ? "GT" : "LT");
}

GS__FN void gs__pr_graph(gs__printer *pr, const gs__pr_comp *c, bool entry) {
    gs__sb *sb = &pr->sb;
    const gs_graph *g = c->g;
    int i;
    gs__sb_printf(sb, "%s%s {\n", entry ? "ENTRY " : "", c->name);
    for (i = 0; i < (int)stbds_arrlen(g->values); i++) {
        if (pr->comment) pr->comment(sb, g->values[i], pr->comment_user);
        gs__pr_value(pr, g->values[i], g->values[i] == g->root);
    }
    gs__sb_puts(sb, "}\n");
}

GS_API const char *gs_hlo_module_name(const gs_graph *entry) {
    if (!entry) return NULL;
    if (entry->module_name) return entry->module_name;
    return entry->name ? entry->name : "module";
}

GS_API int64_t gs_hlo_num_partitions(const gs_graph *entry) {
    if (!entry || entry->num_partitions <= 0) return 1;
    return entry->num_partitions;
}

GS_API const char *gs_hlo_print(gs_graph *entry) { return gs__hlo_print_ex(entry, NULL, NULL); }

GS_API void gs_hlo_print_extensions(gs_ctx *ctx, bool on) {
    if (ctx) ctx->hlo_extensions = on;
}

GS__FN const char *gs__hlo_print_ex(gs_graph *entry, gs__pr_comment_fn comment, void *user) {
    gs__printer pr;
    const char *out = NULL;
    int i, n;
    if (!entry) return NULL;
    memset(&pr, 0, sizeof pr);
    pr.ctx = entry->ctx;
    pr.ext = entry->ctx->hlo_extensions;
    pr.comment = comment;
    pr.comment_user = user;
    gs__sb_init(&pr.sb, pr.ctx);
    gs__pr_collect(&pr, entry);
    n = (int)stbds_arrlen(pr.comps);
    /* names: the entry keeps its own, then the sub-computations in print order, then reducers and
       comparators (all made unique so the text reads back into the same structure) */
    pr.comps[n - 1].name = gs__pr_unique(&pr, entry->name ? entry->name : "main");
    for (i = 0; i < n - 1; i++) {
        const gs_graph *g = pr.comps[i].g;
        const char *base = g->name ? g->name : gs__arena_printf(pr.ctx, "computation.%d", g->id);
        pr.comps[i].name = base ? gs__pr_unique(&pr, base) : NULL;
        if (!pr.comps[i].name) pr.oom = true;
    }
    gs__pr_scan_called(&pr);
    gs__sb_printf(&pr.sb, "HloModule %s", gs_hlo_module_name(entry));
    if (gs_hlo_num_partitions(entry) != 1)
        gs__sb_printf(&pr.sb, ", num_partitions=%lld", (long long)gs_hlo_num_partitions(entry));
    gs__nt_print_header(&pr.sb, pr.ctx);
    gs__sb_puts(&pr.sb, "\n");
    for (i = 0; i < (int)stbds_arrlen(pr.reds); i++) {
        gs__sb_puts(&pr.sb, "\n");
        gs__pr_reducer_body(&pr, &pr.reds[i]);
    }
    for (i = 0; i < (int)stbds_arrlen(pr.cmps); i++) {
        gs__sb_puts(&pr.sb, "\n");
        gs__pr_comparator_body(&pr, &pr.cmps[i]);
    }
    for (i = 0; i < n; i++) {
        gs__sb_puts(&pr.sb, "\n");
        gs__pr_graph(&pr, &pr.comps[i], i == n - 1);
    }
    if (!pr.sb.oom && !pr.oom && pr.sb.buf) out = gs__arena_strdup(pr.ctx, pr.sb.buf);
    else gs__err(pr.ctx, GS_ERR_OUT_OF_MEMORY, "gs_hlo_print: out of memory");
    gs__sb_free(&pr.sb);
    stbds_arrfree(pr.comps);
    stbds_arrfree(pr.reds);
    stbds_arrfree(pr.cmps);
    return out;
}

/* =========================================================================================================
   Parser. Two passes: the text is first read into a syntax tree (computations, instructions, operands,
   attributes as spans of the text), then graphs are built from it: instructions in dependency order
   (any textual order is accepted), while conditions and bodies on first use, reducer and comparator
   computations recognised by shape and never built.
   ========================================================================================================= */

/* a cursor over the text (or over one attribute value: end is then the value's end) */
typedef struct gs__cur {
    const char *p, *end;
    int line, col;
} gs__cur;

/* an array's layout as written: minor_to_major (n = 0: none written, the default), and whether anything
   follows the ':' (tiles T(..), memory space S(..), ...) */
#define GS__MAX_TILINGS 4     /* tiling levels T(..)(..) of one layout */
#define GS__MAX_TILE_RANK 8   /* dims of one tile (a tile may have more dims than the array) */
typedef struct gs__layout {
    int n;
    int64_t m2m[GS_MAX_RANK];
    bool tiled;
    int8_t n_tilings, tile_n[GS__MAX_TILINGS];   /* T(8,128)(2,1): 2 tilings of 2 dims each */
    int32_t tile[GS__MAX_TILINGS][GS__MAX_TILE_RANK];
} gs__layout;

/* a declared shape: an array, or a tuple whose leaves are P->elems[first .. first + n) (nested: its structure
   in P->trees) */
typedef struct gs__pshape {
    bool tuple;
    gs_shape s;
    gs__layout lay;           /* arrays */
    int first, n;             /* the leaves: P->elems[first .. first + n) */
    int tfirst, n_tree;       /* a nested tuple's structure (gs_value_tuple_tree): P->trees[tfirst ..), or n_tree 0 */
    gs__cur at;
} gs__pshape;

typedef struct gs__pattr {
    bool used;          /* read by the builder (an attribute nothing reads is an error, or known harmless) */
    const char *name;   /* arena */
    gs__cur at;         /* where the name starts */
    gs__cur val;        /* the value: [val.p, val.end) */
} gs__pattr;

typedef struct gs__poperand {
    const char *name;   /* arena, without '%' */
    gs__cur at;
    bool typed;
    gs__pshape type;
    int inst;           /* resolved instruction index, -1 before */
} gs__poperand;

typedef struct gs__pinst {
    const char *name;
    gs__cur at;         /* the name */
    bool root;
    gs__pshape type;
    const char *opcode;
    gs__cur op_at;
    gs_op op;
    bool shape_omitted; /* "x = add(a, b)": the shape is what the op infers */
    int lowered;        /* GS_OP_INVALID op: 1 + index in gs__hlo_lowered (an opcode the parser lowers) */
    gs__cur args;       /* parameter/constant: the text between the parentheses */
    int first_op, n_ops, first_attr, n_attrs;
    gs_value *value;
    int state;          /* 0 unvisited, 1 in progress, 2 built */
} gs__pinst;

typedef struct gs__pmap { char *key; int value; } gs__pmap;

typedef struct gs__pcomp {
    const char *name;
    gs__cur at;
    bool entry;
    int first_inst, n_inst, root;
    gs__pmap *names;    /* stb_ds string map: instruction name -> index in P->insts */
    gs_graph *graph;
    int state;          /* 0 not built, 1 building, 2 built */
    int red_state;      /* 0 not analysed, 1 reducer, 2 not a reducer */
    gs_reduce_kind red_kind;
    gs_dtype red_dtype;
    gs_value **args;    /* while inlined (fusion, call): the values its parameters stand for, else NULL */
    int n_args;
    const char *prefix; /* while inlined: the caller's instruction name, prefixed to the names inside */
} gs__pcomp;

typedef struct gs__parser {
    gs_ctx *ctx;
    const char *tend;   /* end of the whole text */
    gs__cur c;
    gs__pcomp *comps;
    gs__pinst *insts;
    gs__poperand *ops;
    gs__pattr *attrs;
    gs_shape *elems;
    int *trees;               /* stb_ds: nested tuple structures (gs__pshape.tfirst) */
    gs__pmap *comp_names;
    int *stack;
    gs_value **vals;
    int64_t *ids;
    const char *module_name;
    int64_t num_partitions;
    const gs_mesh *mesh;      /* mesh={X=4,Y=2} in the header: sharding={X, _} reads over it */
    int depth;
    int red_k, red_n;   /* building component red_k of a variadic reduce/scatter over red_n operands (red_n 0: not) */
    gs_value **red_xs;  /* then: the variadic op's operands (reduce: n inputs, n inits; scatter: n operands, the
                           indices, n updates) */
    bool red_var;       /* gs__reducer_attr found the variadic reducer to mix its components (gs__set_reducer) */
    const gs__pinst *red_in;   /* an instruction whose to_apply= gs__reducer_attr found to be a reducer computation
                                  (kind custom): gs__set_reducer builds it once the value is (operands are then
                                  read; building another computation reuses P->vals) */
} gs__parser;

#define GS__HLO_MAX_NESTING 200   /* bracket nesting inside one value */
#define GS__HLO_MAX_CALL_DEPTH 64 /* while loops nested in while bodies */

/* ---- characters and the cursor ---- */
GS__FN bool gs__hlo_alpha(int ch) { return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'); }
GS__FN bool gs__hlo_digit(int ch) { return ch >= '0' && ch <= '9'; }
GS__FN bool gs__hlo_space(int ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v'; }
GS__FN bool gs__hlo_name_start(int ch) { return gs__hlo_alpha(ch) || ch == '_'; }
GS__FN bool gs__hlo_name_char(int ch) { return gs__hlo_alpha(ch) || gs__hlo_digit(ch) || ch == '_' || ch == '.' || ch == '-'; }

GS__FN int gs__cur_peek(const gs__cur *c) { return c->p < c->end ? (unsigned char)*c->p : -1; }
GS__FN int gs__cur_peek_at(const gs__cur *c, size_t k) {
    return (size_t)(c->end - c->p) > k ? (unsigned char)c->p[k] : -1;
}
GS__FN void gs__cur_adv(gs__cur *c) {
    if (c->p >= c->end) return;
    if (*c->p == '\n') {
        c->line++;
        c->col = 1;
    } else {
        c->col++;
    }
    c->p++;
}
GS__FN bool gs__cur_eof(const gs__cur *c) { return c->p >= c->end; }

/* ---- errors ---- */
GS__FN void gs__hlo_describe(const gs__parser *P, const gs__cur *c, char *buf, size_t cap) {
    const char *p = c->p;
    int ch;
    if (p >= c->end) {
        snprintf(buf, cap, "%s", c->end >= P->tend ? "end of input" : "end of value");
        return;
    }
    ch = (unsigned char)*p;
    if (gs__hlo_name_char(ch) || ch == '%' || ch == '+') {
        size_t n = 0;
        while (p + n < c->end && n < 40 &&
               (gs__hlo_name_char((unsigned char)p[n]) || p[n] == '%' || p[n] == '+'))
            n++;
        snprintf(buf, cap, "'%.*s%s'", (int)n, p,
                 (p + n < c->end && gs__hlo_name_char((unsigned char)p[n])) ? "..." : "");
    } else if (ch == '"') {
        snprintf(buf, cap, "a string");
    } else if (ch > 0x20 && ch < 0x7f) {
        snprintf(buf, cap, "'%c'", ch);
    } else {
        snprintf(buf, cap, "byte 0x%02x", ch);
    }
}

GS__FN bool gs__perr(gs__parser *P, const gs__cur *at, gs_result code, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
GS__FN bool gs__perr(gs__parser *P, const gs__cur *at, gs_result code, const char *fmt, ...) {
    char msg[GS__ERRMSG_CAP];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    gs__err(P->ctx, code, "line %d, column %d: %s", at->line, at->col, msg);
    return false;
}

/* "expected WHAT, found <token at c>" */
GS__FN bool gs__pexpect(gs__parser *P, const gs__cur *c, const char *what) {
    char found[64];
    gs__hlo_describe(P, c, found, sizeof found);
    return gs__perr(P, c, GS_ERR_PARSE, "expected %s, found %s", what, found);
}

/* ---- lexing ---- */
GS__FN bool gs__skip_ws(gs__parser *P, gs__cur *c) {
    for (;;) {
        int ch = gs__cur_peek(c);
        if (ch >= 0 && gs__hlo_space(ch)) {
            gs__cur_adv(c);
        } else if (ch == '/' && gs__cur_peek_at(c, 1) == '*') {
            gs__cur start = *c;
            gs__cur_adv(c);
            gs__cur_adv(c);
            while (!gs__cur_eof(c) && !(gs__cur_peek(c) == '*' && gs__cur_peek_at(c, 1) == '/')) gs__cur_adv(c);
            if (gs__cur_eof(c)) return gs__perr(P, &start, GS_ERR_PARSE, "unterminated comment");
            gs__cur_adv(c);
            gs__cur_adv(c);
        } else if (ch == '/' && gs__cur_peek_at(c, 1) == '/') {
            while (!gs__cur_eof(c) && gs__cur_peek(c) != '\n') gs__cur_adv(c);
        } else {
            return true;
        }
    }
}

/* skips whitespace, then consumes ch if it is next */
GS__FN bool gs__accept(gs__parser *P, gs__cur *c, int ch, bool *ok) {
    if (!gs__skip_ws(P, c)) {
        *ok = false;
        return false;
    }
    if (gs__cur_peek(c) == ch) {
        gs__cur_adv(c);
        return true;
    }
    return false;
}

GS__FN bool gs__expect_ch(gs__parser *P, gs__cur *c, int ch) {
    char what[8];
    if (!gs__skip_ws(P, c)) return false;
    if (gs__cur_peek(c) == ch) {
        gs__cur_adv(c);
        return true;
    }
    snprintf(what, sizeof what, "'%c'", ch);
    return gs__pexpect(P, c, what);
}

/* a copy of [p, p+n) in the arena */
GS__FN const char *gs__pstr(gs__parser *P, const char *p, size_t n) {
    char *s = (char *)gs__arena_alloc(P->ctx, n + 1);
    if (!s) return NULL;
    memcpy(s, p, n);
    s[n] = 0;
    return s;
}

/* a name: optional '%', then [A-Za-z_][A-Za-z0-9_.-]* (arena copy without the '%') */
GS__FN bool gs__read_name(gs__parser *P, gs__cur *c, const char *what, const char **out, gs__cur *at) {
    const char *start;
    if (!gs__skip_ws(P, c)) return false;
    if (at) *at = *c;
    if (gs__cur_peek(c) == '%' && gs__hlo_name_start(gs__cur_peek_at(c, 1))) gs__cur_adv(c);
    if (!gs__hlo_name_start(gs__cur_peek(c))) return gs__pexpect(P, at ? at : c, what);
    start = c->p;
    while (gs__hlo_name_char(gs__cur_peek(c))) gs__cur_adv(c);
    *out = gs__pstr(P, start, (size_t)(c->p - start));
    return *out != NULL;
}

/* true if the word at c (after whitespace) is exactly w; the cursor is not moved */
GS__FN bool gs__peek_word(gs__cur c, const char *w) {
    size_t n = strlen(w);
    while (!gs__cur_eof(&c) && gs__hlo_space(gs__cur_peek(&c))) gs__cur_adv(&c);
    if ((size_t)(c.end - c.p) < n || memcmp(c.p, w, n) != 0) return false;
    return !gs__hlo_name_char(gs__cur_peek_at(&c, n));
}

GS__FN bool gs__read_int(gs__parser *P, gs__cur *c, int64_t *out, const char *what) {
    bool neg = false;
    uint64_t v = 0;
    gs__cur at;
    if (!gs__skip_ws(P, c)) return false;
    at = *c;
    if (gs__cur_peek(c) == '-' || gs__cur_peek(c) == '+') {
        neg = gs__cur_peek(c) == '-';
        gs__cur_adv(c);
    }
    if (!gs__hlo_digit(gs__cur_peek(c))) return gs__pexpect(P, &at, what);
    while (gs__hlo_digit(gs__cur_peek(c))) {
        uint64_t d = (uint64_t)(gs__cur_peek(c) - '0');
        if (v > ((uint64_t)INT64_MAX - d) / 10) return gs__perr(P, &at, GS_ERR_PARSE, "integer out of range");
        v = v * 10 + d;
        gs__cur_adv(c);
    }
    if (gs__hlo_name_char(gs__cur_peek(c))) return gs__pexpect(P, &at, what);
    *out = neg ? -(int64_t)v : (int64_t)v;
    return true;
}

/* skips a bracketed group starting at '(' '[' or '{' (strings and comments inside are skipped whole) */
GS__FN bool gs__skip_string(gs__parser *P, gs__cur *c) {
    gs__cur at = *c;
    gs__cur_adv(c);
    while (!gs__cur_eof(c) && gs__cur_peek(c) != '"') {
        if (gs__cur_peek(c) == '\\') gs__cur_adv(c);
        gs__cur_adv(c);
    }
    if (gs__cur_eof(c)) return gs__perr(P, &at, GS_ERR_PARSE, "unterminated string");
    gs__cur_adv(c);
    return true;
}

GS__FN bool gs__skip_balanced(gs__parser *P, gs__cur *c) {
    char want[GS__HLO_MAX_NESTING];
    gs__cur opens[GS__HLO_MAX_NESTING];
    int depth = 0;
    for (;;) {
        int ch = gs__cur_peek(c);
        if (ch < 0) {
            char what[40];
            snprintf(what, sizeof what, "'%c' to close the '%c' at line %d", want[depth - 1],
                     want[depth - 1] == '}' ? '{' : want[depth - 1] == ')' ? '(' : '[', opens[depth - 1].line);
            return gs__pexpect(P, c, what);
        }
        if (ch == '(' || ch == '[' || ch == '{') {
            if (depth == GS__HLO_MAX_NESTING) return gs__perr(P, c, GS_ERR_PARSE, "brackets nested too deeply");
            want[depth] = (char)(ch == '(' ? ')' : ch == '[' ? ']' : '}');
            opens[depth++] = *c;
            gs__cur_adv(c);
        } else if (ch == ')' || ch == ']' || ch == '}') {
            if (depth == 0 || ch != want[depth - 1]) {
                char what[8];
                if (depth == 0) return gs__pexpect(P, c, "an opening bracket");
                snprintf(what, sizeof what, "'%c'", want[depth - 1]);
                return gs__pexpect(P, c, what);
            }
            gs__cur_adv(c);
            if (--depth == 0) return true;
        } else if (ch == '"') {
            if (!gs__skip_string(P, c)) return false;
        } else if (ch == '/' && (gs__cur_peek_at(c, 1) == '*' || gs__cur_peek_at(c, 1) == '/')) {
            if (!gs__skip_ws(P, c)) return false;
        } else {
            gs__cur_adv(c);
        }
    }
}

/* ---- shapes ---- */
/* the tiles of a layout, "T(8,128)(2,1)" (at the 'T'); positive sizes only (XLA's combined dims '*' are not read) */
GS__FN bool gs__parse_tiles(gs__parser *P, gs__cur *c, gs__layout *l) {
    gs__cur_adv(c);
    while (gs__cur_peek(c) == '(') {
        gs__cur at = *c;
        int k = l->n_tilings, n = 0;
        bool ok = true;
        if (k == GS__MAX_TILINGS) return gs__perr(P, &at, GS_ERR_UNSUPPORTED, "more than %d tilings in one layout", GS__MAX_TILINGS);
        gs__cur_adv(c);
        for (;;) {
            int64_t t;
            gs__cur tat;
            if (!gs__skip_ws(P, c)) return false;
            tat = *c;
            if (gs__cur_peek(c) == '*')
                return gs__perr(P, &tat, GS_ERR_UNSUPPORTED, "combined tile dimensions ('*') are not supported");
            if (!gs__read_int(P, c, &t, "a tile size")) return false;
            if (t < 1 || t > INT32_MAX) return gs__pexpect(P, &tat, "a tile size >= 1");
            if (n == GS__MAX_TILE_RANK) return gs__perr(P, &tat, GS_ERR_UNSUPPORTED, "a tile of more than %d dimensions", GS__MAX_TILE_RANK);
            l->tile[k][n++] = (int32_t)t;
            if (gs__accept(P, c, ')', &ok)) break;
            if (!ok || !gs__expect_ch(P, c, ',')) return false;
        }
        l->tile_n[k] = (int8_t)n;
        l->n_tilings = (int8_t)(k + 1);
    }
    return true;
}

/* "{1,0}" or "{1,0:T(8,128)S(1)}" after an array shape; lay may be NULL */
GS__FN bool gs__parse_layout(gs__parser *P, gs__cur *c, const gs_shape *s, gs__layout *lay) {
    gs__layout l;
    gs__cur at = *c;
    bool ok = true;
    memset(&l, 0, sizeof l);
    gs__cur_adv(c);
    if (!gs__accept(P, c, '}', &ok)) {
        if (!ok) return false;
        for (;;) {
            int64_t d;
            if (!gs__skip_ws(P, c)) return false;
            if (gs__cur_peek(c) == ':') {
                gs__cur_adv(c);
                l.tiled = true;
                while (!gs__cur_eof(c) && gs__cur_peek(c) != '}') {
                    if (gs__cur_peek(c) == 'T' && c->p + 1 < c->end && c->p[1] == '(') {
                        if (!gs__parse_tiles(P, c, &l)) return false;
                    } else if (gs__cur_peek(c) == '(' || gs__cur_peek(c) == '[' || gs__cur_peek(c) == '{') {
                        if (!gs__skip_balanced(P, c)) return false;
                    } else {
                        gs__cur_adv(c);
                    }
                }
                if (!gs__expect_ch(P, c, '}')) return false;
                break;
            }
            if (!gs__read_int(P, c, &d, "a dimension number")) return false;
            if (d < 0 || d >= s->rank || l.n == s->rank)
                return gs__perr(P, &at, GS_ERR_PARSE, "layout is not a permutation of the %d dimensions", s->rank);
            l.m2m[l.n++] = d;
            if (gs__accept(P, c, '}', &ok)) break;
            if (!ok) return false;
            if (gs__cur_peek(c) != ':' && !gs__expect_ch(P, c, ',')) return false;
        }
    }
    if (l.n != 0 && l.n != s->rank)
        return gs__perr(P, &at, GS_ERR_PARSE, "layout names %d of the %d dimensions", l.n, s->rank);
    if (lay) *lay = l;
    return true;
}

GS__FN bool gs__parse_array_shape(gs__parser *P, gs__cur *c, gs_shape *s, gs__layout *lay) {
    const char *what = "an element type (pred, s8..s64, u8..u64, f16, bf16, f32, f64, c64, c128, f8*, token, ...)";
    gs__cur at;
    const char *start;
    size_t n;
    bool ok = true;
    if (!gs__skip_ws(P, c)) return false;
    at = *c;
    memset(s, 0, sizeof *s);
    start = c->p;
    while (gs__hlo_alpha(gs__cur_peek(c)) || gs__hlo_digit(gs__cur_peek(c))) gs__cur_adv(c);
    n = (size_t)(c->p - start);
    s->dtype = gs__dtype_from_text(start, n);
    if (s->dtype == GS_DTYPE_INVALID || gs__cur_peek(c) != '[') {
        *c = at;
        return gs__pexpect(P, &at, what);
    }
    gs__cur_adv(c);
    if (gs__accept(P, c, ']', &ok)) {
        /* scalar */
    } else {
        if (!ok) return false;
        for (;;) {
            int64_t d;
            gs__cur dat;
            if (!gs__skip_ws(P, c)) return false;
            dat = *c;
            if (gs__cur_peek(c) == '<' || gs__cur_peek(c) == '?')
                return gs__perr(P, &dat, GS_ERR_UNSUPPORTED, "dynamic dimensions are not supported");
            if (!gs__read_int(P, c, &d, "a dimension size")) return false;
            if (d < 0) return gs__pexpect(P, &dat, "a dimension size >= 0");
            if (s->rank == GS_MAX_RANK)
                return gs__perr(P, &dat, GS_ERR_PARSE, "rank above GS_MAX_RANK (%d)", GS_MAX_RANK);
            s->dims[s->rank++] = d;
            if (gs__accept(P, c, ']', &ok)) break;
            if (!ok) return false;
            if (!gs__expect_ch(P, c, ',')) return false;
        }
    }
    if (s->dtype == GS_TOKEN && s->rank != 0) return gs__perr(P, &at, GS_ERR_PARSE, "a token has no dims: token[]");
    /* a layout ({1,0} or {1,0:T(8,128)}) follows the ']' directly; only bitcast reads it */
    if (lay) memset(lay, 0, sizeof *lay);
    if (gs__cur_peek(c) == '{') return gs__parse_layout(P, c, s, lay);
    return true;
}

/* The elements of a tuple shape after its '(' up to its ')': leaves appended to P->elems, the preorder
   structure to P->trees (its node first: the child count is filled in at the end). */
GS__FN bool gs__parse_tuple_elems(gs__parser *P, gs__cur *c, int depth, int *nested) {
    bool ok = true;
    int node = (int)stbds_arrlen(P->trees), kids = 0;
    if (depth > 64) return gs__perr(P, c, GS_ERR_PARSE, "tuple shapes nested more than 64 deep");
    stbds_arrput(P->trees, 0);
    if (!gs__accept(P, c, ')', &ok)) {
        if (!ok) return false;
        for (;;) {
            if (!gs__skip_ws(P, c)) return false;
            if (gs__cur_peek(c) == '(') {
                gs__cur_adv(c);
                *nested = 1;
                if (!gs__parse_tuple_elems(P, c, depth + 1, nested)) return false;
            } else {
                gs_shape e;
                if (!gs__parse_array_shape(P, c, &e, NULL)) return false;
                stbds_arrput(P->elems, e);
                stbds_arrput(P->trees, -1);
            }
            kids++;
            if (gs__accept(P, c, ')', &ok)) break;
            if (!ok) return false;
            if (!gs__skip_ws(P, c)) return false;
            if (gs__cur_peek(c) != ',') return gs__pexpect(P, c, "',' or ')'");
            gs__cur_adv(c);
        }
    }
    P->trees[node] = kids;
    return true;
}

GS__FN bool gs__parse_shape(gs__parser *P, gs__cur *c, gs__pshape *out) {
    int nested = 0;
    memset(out, 0, sizeof *out);
    if (!gs__skip_ws(P, c)) return false;
    out->at = *c;
    if (gs__cur_peek(c) != '(') return gs__parse_array_shape(P, c, &out->s, &out->lay);
    gs__cur_adv(c);
    out->tuple = true;
    out->s.dtype = GS_TUPLE;
    out->first = (int)stbds_arrlen(P->elems);
    out->tfirst = (int)stbds_arrlen(P->trees);
    if (!gs__parse_tuple_elems(P, c, 0, &nested)) return false;
    out->n = (int)stbds_arrlen(P->elems) - out->first;
    out->n_tree = nested ? (int)stbds_arrlen(P->trees) - out->tfirst : 0;
    if (!nested) stbds_arrsetlen(P->trees, out->tfirst);
    return true;
}

/* ---- the syntax tree ---- */

/* an attribute value: a bracketed group, a string, or a bare word (brackets inside a word are skipped
   whole, so "[2,4]<=[4,2]T(1,0)" is one value) */
GS__FN bool gs__parse_attr_value(gs__parser *P, gs__cur *c, gs__cur *val) {
    int ch;
    if (!gs__skip_ws(P, c)) return false;
    *val = *c;
    ch = gs__cur_peek(c);
    if (ch == '{') {
        if (!gs__skip_balanced(P, c)) return false;
    } else if (ch == '"') {
        if (!gs__skip_string(P, c)) return false;
    } else {
        for (;;) {
            ch = gs__cur_peek(c);
            if (ch < 0 || ch == ',' || ch == '}' || ch == ')' || ch == ']' || gs__hlo_space(ch)) break;
            if (ch == '(' || ch == '[' || ch == '{') {
                if (!gs__skip_balanced(P, c)) return false;
            } else if (ch == '"') {
                if (!gs__skip_string(P, c)) return false;
            } else {
                gs__cur_adv(c);
            }
        }
        if (c->p == val->p) return gs__pexpect(P, c, "an attribute value");
    }
    val->end = c->p;
    return true;
}

/* ", name=value" repeated; pushes to P->attrs */
GS__FN bool gs__parse_attrs(gs__parser *P, gs__cur *c, int *first, int *count) {
    bool ok = true;
    *first = (int)stbds_arrlen(P->attrs);
    *count = 0;
    while (gs__accept(P, c, ',', &ok)) {
        gs__pattr a;
        const char *start;
        int k;
        if (!gs__skip_ws(P, c)) return false;
        a.at = *c;
        if (!gs__hlo_name_start(gs__cur_peek(c))) return gs__pexpect(P, c, "an attribute name");
        start = c->p;
        while (gs__hlo_name_char(gs__cur_peek(c))) gs__cur_adv(c);
        a.name = gs__pstr(P, start, (size_t)(c->p - start));
        if (!a.name) return false;
        for (k = *first; k < *first + *count; k++)
            if (strcmp(P->attrs[k].name, a.name) == 0)
                return gs__perr(P, &a.at, GS_ERR_PARSE, "duplicate attribute '%s'", a.name);
        if (!gs__expect_ch(P, c, '=')) return false;
        if (!gs__parse_attr_value(P, c, &a.val)) return false;
        a.used = false;
        stbds_arrput(P->attrs, a);
        (*count)++;
    }
    return ok;
}

/* Opcodes the parser lowers to other ops while building (they have no gs_op): name, builder. */
#define GS__HLO_LOWERED(X) \
    X("fusion", gs__bl_call) \
    X("call", gs__bl_call) \
    X("bitcast", gs__bl_bitcast) \
    X("opt-barrier", gs__bl_identity) \
    X("collective-broadcast", gs__bl_collective_broadcast) \
    X("all-reduce-start", gs__bl_async_start) \
    X("all-gather-start", gs__bl_async_start) \
    X("collective-permute-start", gs__bl_async_start) \
    X("copy-start", gs__bl_async_start) \
    X("all-to-all-start", gs__bl_async_start) \
    X("all-reduce-done", gs__bl_async_done) \
    X("all-gather-done", gs__bl_async_done) \
    X("collective-permute-done", gs__bl_async_done) \
    X("copy-done", gs__bl_async_done) \
    X("all-to-all-done", gs__bl_async_done) \
    X("async-start", gs__bl_async_call) \
    X("call-start", gs__bl_async_call) \
    X("async-update", gs__bl_identity) \
    X("call-update", gs__bl_identity) \
    X("async-done", gs__bl_async_done) \
    X("call-done", gs__bl_async_done) \
    X("after-all", gs__bl_opaque) \
    X("infeed", gs__bl_opaque) \
    X("outfeed", gs__bl_opaque) \
    X("send", gs__bl_opaque) \
    X("send-done", gs__bl_opaque) \
    X("recv", gs__bl_opaque) \
    X("recv-done", gs__bl_opaque)

GS__FN int gs__hlo_lowered_opcode(const char *name) {
    static const char *const names[] = {
#define GS__X_NAME(s, fn) s,
        GS__HLO_LOWERED(GS__X_NAME)
#undef GS__X_NAME
    };
    int i;
    for (i = 0; i < GS__COUNTOF(names); i++)
        if (strcmp(names[i], name) == 0) return i + 1;
    return 0;
}

/* XLA's opcodes (hlo_opcode.h spellings), for "did you mean" and for telling an opcode gshard.h does not
   read from a misspelt one */
static const char *const gs__xla_opcodes[] = {
    "abs", "add", "add-dependency", "after-all", "all-gather", "all-gather-done", "all-gather-start",
    "all-reduce", "all-reduce-done", "all-reduce-start", "all-to-all", "and", "async-done", "async-start",
    "async-update", "atan2", "batch-norm-grad", "batch-norm-inference", "batch-norm-training", "bitcast",
    "bitcast-convert", "broadcast", "call", "cbrt", "ceil", "cholesky", "clamp", "collective-broadcast",
    "collective-permute", "collective-permute-done", "collective-permute-start", "compare", "complex",
    "concatenate", "conditional", "constant", "convert", "convolution", "copy", "copy-done", "copy-start",
    "cosine", "count-leading-zeros", "custom-call", "divide", "domain", "dot", "dynamic-reshape",
    "dynamic-slice", "dynamic-update-slice", "erf", "exponential", "exponential-minus-one", "fft", "floor",
    "fusion", "gather", "get-dimension-size", "get-tuple-element", "imag", "infeed", "iota", "is-finite", "log",
    "log-plus-one", "logistic", "map", "maximum", "minimum", "multiply", "negate", "not", "opt-barrier", "or",
    "outfeed", "pad", "parameter", "partition-id", "popcnt", "power", "ragged-all-to-all", "ragged-dot", "real",
    "recv", "recv-done", "reduce", "reduce-precision", "reduce-scatter", "reduce-window", "remainder",
    "replica-id", "reshape", "reverse", "rng", "rng-bit-generator", "rng-get-and-update-state",
    "round-nearest-afz", "round-nearest-even", "rsqrt", "scatter", "select", "select-and-scatter", "send",
    "send-done", "set-dimension-size", "shift-left", "shift-right-arithmetic", "shift-right-logical", "sign",
    "sine", "slice", "sort", "sqrt", "stochastic-convert", "subtract", "tan", "tanh", "topk", "transpose",
    "triangular-solve", "tuple", "while", "xor"};

/* edit distance of two short strings (insert, delete, substitute, transpose adjacent), capped at 9 */
GS__FN int gs__edit_distance(const char *a, const char *b) {
    int la = (int)strlen(a), lb = (int)strlen(b), i, j;
    int d[33][33];
    if (la > 32 || lb > 32) return 9;
    for (i = 0; i <= la; i++) d[i][0] = i;
    for (j = 0; j <= lb; j++) d[0][j] = j;
    for (i = 1; i <= la; i++) {
        for (j = 1; j <= lb; j++) {
            int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[la][lb] > 9 ? 9 : d[la][lb];
}

/* the closest of names[0..n) to name if it is close (at most a third of the letters differ), else NULL */
GS__FN const char *gs__closest(const char *name, const char *const *names, int n) {
    const char *best = NULL;
    int i, bd = 9, limit = (int)strlen(name) / 3;
    if (limit < 1) limit = 1;
    for (i = 0; i < n; i++) {
        int dd = gs__edit_distance(name, names[i]);
        if (dd < bd) {
            bd = dd;
            best = names[i];
        }
    }
    return bd <= limit ? best : NULL;
}

GS__FN bool gs__unknown_opcode(gs__parser *P, const gs__cur *at, const char *name) {
    const char *near;
    int i;
    for (i = 0; i < GS__COUNTOF(gs__xla_opcodes); i++)
        if (strcmp(gs__xla_opcodes[i], name) == 0)
            return gs__perr(P, at, GS_ERR_UNSUPPORTED, "opcode '%s' is not supported", name);
    near = gs__closest(name, gs__xla_opcodes, GS__COUNTOF(gs__xla_opcodes));
    if (near) return gs__perr(P, at, GS_ERR_PARSE, "unknown opcode '%s' (did you mean '%s'?)", name, near);
    return gs__perr(P, at, GS_ERR_PARSE, "unknown opcode '%s'", name);
}

GS__FN gs_op gs__hlo_opcode(const char *name) {
    int op;
    for (op = 1; op < GS_OP_COUNT; op++)
        if (strcmp(gs_op_name((gs_op)op), name) == 0) return (gs_op)op;
    return GS_OP_INVALID;
}

GS__FN bool gs__parse_operand(gs__parser *P, gs__cur *c, gs__poperand *o) {
    memset(o, 0, sizeof *o);
    o->inst = -1;
    if (!gs__skip_ws(P, c)) return false;
    if (gs__cur_peek(c) == '(') {
        o->typed = true;
        if (!gs__parse_shape(P, c, &o->type)) return false;
    } else if (gs__hlo_alpha(gs__cur_peek(c))) {
        /* "f32[4]{0} %a": a word followed directly by '[' is a dtype */
        gs__cur look = *c;
        while (gs__hlo_alpha(gs__cur_peek(&look)) || gs__hlo_digit(gs__cur_peek(&look))) gs__cur_adv(&look);
        if (gs__cur_peek(&look) == '[') {
            o->typed = true;
            if (!gs__parse_shape(P, c, &o->type)) return false;
        }
    }
    return gs__read_name(P, c, "an operand name", &o->name, &o->at);
}

GS__FN bool gs__parse_instruction(gs__parser *P, gs__cur *c, gs__pcomp *comp) {
    gs__pinst in;
    bool ok = true;
    memset(&in, 0, sizeof in);
    if (!gs__read_name(P, c, "an instruction name", &in.name, &in.at)) return false;
    if (strcmp(in.name, "ROOT") == 0) {
        gs__cur look = *c;
        if (!gs__skip_ws(P, &look)) return false;
        if (gs__cur_peek(&look) != '=') {
            gs__cur kw = in.at;
            if (comp->root >= 0) return gs__perr(P, &kw, GS_ERR_PARSE, "a second ROOT in computation '%s'", comp->name);
            in.root = true;
            if (!gs__read_name(P, c, "an instruction name", &in.name, &in.at)) return false;
        }
    }
    if (stbds_shgeti(comp->names, (char *)in.name) >= 0)
        return gs__perr(P, &in.at, GS_ERR_PARSE, "duplicate instruction name '%s'", in.name);
    if (!gs__expect_ch(P, c, '=')) return false;
    if (!gs__skip_ws(P, c)) return false;
    {   /* "t = tuple(a, b)": XLA lets the shape it infers be left out */
        gs__cur look = *c;
        while (gs__hlo_name_char(gs__cur_peek(&look))) gs__cur_adv(&look);
        in.shape_omitted = look.p != c->p && gs__cur_peek(&look) == '(';
    }
    if (in.shape_omitted) in.type.at = *c;
    else if (!gs__parse_shape(P, c, &in.type)) return false;
    if (!gs__skip_ws(P, c)) return false;
    in.op_at = *c;
    {
        const char *start = c->p;
        if (!gs__hlo_name_start(gs__cur_peek(c))) return gs__pexpect(P, c, "an opcode");
        while (gs__hlo_name_char(gs__cur_peek(c))) gs__cur_adv(c);
        in.opcode = gs__pstr(P, start, (size_t)(c->p - start));
        if (!in.opcode) return false;
    }
    in.op = gs__hlo_opcode(in.opcode);
    if (in.op == GS_OP_INVALID && (in.lowered = gs__hlo_lowered_opcode(in.opcode)) == 0)
        return gs__unknown_opcode(P, &in.op_at, in.opcode);
    if (!gs__skip_ws(P, c)) return false;
    if (gs__cur_peek(c) != '(') return gs__pexpect(P, c, "'('");
    in.first_op = (int)stbds_arrlen(P->ops);
    if (in.op == GS_OP_PARAMETER || in.op == GS_OP_CONSTANT) {
        gs__cur open = *c;
        if (!gs__skip_balanced(P, c)) return false;
        in.args = open;
        gs__cur_adv(&in.args);
        in.args.end = c->p - 1;
    } else {
        gs__cur_adv(c);
        if (!gs__accept(P, c, ')', &ok)) {
            if (!ok) return false;
            for (;;) {
                gs__poperand o;
                if (!gs__parse_operand(P, c, &o)) return false;
                stbds_arrput(P->ops, o);
                in.n_ops++;
                if (gs__accept(P, c, ')', &ok)) break;
                if (!ok) return false;
                if (gs__cur_peek(c) != ',') return gs__pexpect(P, c, "',' or ')'");
                gs__cur_adv(c);
            }
        }
    }
    if (!gs__parse_attrs(P, c, &in.first_attr, &in.n_attrs)) return false;
    if (in.root) comp->root = (int)stbds_arrlen(P->insts);
    stbds_shput(comp->names, (char *)in.name, (int)stbds_arrlen(P->insts));
    stbds_arrput(P->insts, in);
    comp->n_inst++;
    return true;
}

GS__FN bool gs__parse_computation(gs__parser *P, gs__cur *c) {
    gs__pcomp comp;
    bool ok = true;
    memset(&comp, 0, sizeof comp);
    comp.root = -1;
    if (!gs__read_name(P, c, "a computation name", &comp.name, &comp.at)) return false;
    if (strcmp(comp.name, "ENTRY") == 0) {
        gs__cur look = *c;
        if (!gs__skip_ws(P, &look)) return false;
        if (gs__cur_peek(&look) == '%' || gs__hlo_name_start(gs__cur_peek(&look))) {
            comp.entry = true;
            if (!gs__read_name(P, c, "a computation name", &comp.name, &comp.at)) return false;
        }
    }
    if (stbds_shgeti(P->comp_names, (char *)comp.name) >= 0)
        return gs__perr(P, &comp.at, GS_ERR_PARSE, "duplicate computation name '%s'", comp.name);
    /* an optional signature "(x: f32[4], y: f32[4]) -> f32[4]": the parameters say the same */
    if (!gs__skip_ws(P, c)) return false;
    if (gs__cur_peek(c) == '(') {
        if (!gs__skip_balanced(P, c)) return false;
        if (!gs__skip_ws(P, c)) return false;
        if (gs__cur_peek(c) == '-' && gs__cur_peek_at(c, 1) == '>') {
            gs__pshape ret;
            gs__cur_adv(c);
            gs__cur_adv(c);
            if (!gs__parse_shape(P, c, &ret)) return false;
        }
    }
    if (!gs__expect_ch(P, c, '{')) return false;
    comp.first_inst = (int)stbds_arrlen(P->insts);
    for (;;) {
        if (gs__accept(P, c, '}', &ok)) break;
        if (!ok || !gs__parse_instruction(P, c, &comp)) {
            stbds_shfree(comp.names);
            return false;
        }
    }
    {   /* "}, execution_thread="main"": XLA's thread of the computation, which changes nothing here */
        int first, n, k;
        if (!gs__parse_attrs(P, c, &first, &n)) {
            stbds_shfree(comp.names);
            return false;
        }
        for (k = first; k < first + n; k++)
            if (strcmp(P->attrs[k].name, "execution_thread") != 0) {
                stbds_shfree(comp.names);
                return gs__perr(P, &P->attrs[k].at, GS_ERR_PARSE, "unknown computation attribute '%s'", P->attrs[k].name);
            }
        stbds_arrsetlen(P->attrs, first);
    }
    if (comp.n_inst == 0) {
        stbds_shfree(comp.names);
        return gs__perr(P, &comp.at, GS_ERR_PARSE, "computation '%s' has no instructions", comp.name);
    }
    if (comp.root < 0) comp.root = comp.first_inst + comp.n_inst - 1;   /* XLA: the last one */
    stbds_shput(P->comp_names, (char *)comp.name, (int)stbds_arrlen(P->comps));
    stbds_arrput(P->comps, comp);
    return true;
}

GS__FN bool gs__in_list(const char *name, const char *const *list, int n) {
    int i;
    for (i = 0; i < n; i++)
        if (strcmp(list[i], name) == 0) return true;
    return false;
}

/* module attributes that change nothing gshard.h computes (layouts, aliasing and donation, scheduling,
   propagation options, annotations); besides these only num_partitions and replica_count=1 are read */
static const char *const gs__module_attrs[] = {
    "entry_computation_layout", "is_scheduled", "input_output_alias", "buffer_donor", "alias_passthrough_params",
    "allow_spmd_sharding_propagation_to_output", "allow_spmd_sharding_propagation_to_parameters",
    "frontend_attributes", "spmd_output_sharding", "spmd_parameters_shardings", "num_partitions", "replica_count"};

GS__FN bool gs__attr_int(gs__parser *P, const gs__pattr *a, int64_t *out);
GS__FN bool gs__builder_failed(gs__parser *P, const gs__cur *at);

GS__FN bool gs__parse_module(gs__parser *P) {
    gs__cur *c = &P->c;
    int i, entry = -1;
    if (!gs__skip_ws(P, c)) return false;
    if (gs__peek_word(*c, "HloModule")) {
        int first, n;
        bool np_given = false;
        gs__cur mesh_at = *c;   /* where mesh={...} is, for the error */
        for (i = 0; i < 9; i++) gs__cur_adv(c);
        if (!gs__read_name(P, c, "a module name", &P->module_name, NULL)) return false;
        if (!gs__parse_attrs(P, c, &first, &n)) return false;
        for (i = first; i < first + n; i++) {
            const gs__pattr *a = &P->attrs[i];
            if (strcmp(a->name, "num_partitions") == 0) {
                np_given = true;
                if (!gs__attr_int(P, a, &P->num_partitions)) return false;
                if (P->num_partitions < 1) return gs__pexpect(P, &a->val, "num_partitions >= 1");
            } else if (strcmp(a->name, "mesh") == 0) {
                const char *t = gs__pstr(P, a->val.p, (size_t)(a->val.end - a->val.p));
                if (!t) return false;
                if (!(P->mesh = gs_mesh_parse(P->ctx, t))) return gs__builder_failed(P, &a->val);
                mesh_at = a->val;
            } else if (strcmp(a->name, "replica_count") == 0) {
                int64_t r;
                if (!gs__attr_int(P, a, &r)) return false;
                if (r != 1) return gs__perr(P, &a->val, GS_ERR_UNSUPPORTED, "replica_count=%lld: only one replica is supported (partitions are the devices)", (long long)r);
            } else if (!gs__in_list(a->name, gs__module_attrs, GS__COUNTOF(gs__module_attrs))) {
                const char *near = gs__closest(a->name, gs__module_attrs, GS__COUNTOF(gs__module_attrs));
                return gs__perr(P, &a->at, GS_ERR_PARSE, "unknown module attribute '%s'%s%s%s", a->name,
                                near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
            }
        }
        stbds_arrsetlen(P->attrs, first);
        /* the mesh's devices are the partitions: num_partitions when it is not given, else they must agree */
        if (P->mesh && !np_given) P->num_partitions = gs_mesh_num_devices(P->mesh);
        if (P->mesh && gs_mesh_num_devices(P->mesh) != P->num_partitions)
            return gs__perr(P, &mesh_at, GS_ERR_PARSE, "mesh={...} has %lld devices but num_partitions=%lld",
                            (long long)gs_mesh_num_devices(P->mesh), (long long)P->num_partitions);
    }
    for (;;) {
        if (!gs__skip_ws(P, c)) return false;
        if (gs__cur_eof(c)) break;
        if (!gs__parse_computation(P, c)) return false;
    }
    for (i = 0; i < (int)stbds_arrlen(P->comps); i++) {
        if (!P->comps[i].entry) continue;
        if (entry >= 0)
            return gs__perr(P, &P->comps[i].at, GS_ERR_PARSE, "a second ENTRY computation '%s'", P->comps[i].name);
        entry = i;
    }
    if (entry < 0) return gs__pexpect(P, c, "an ENTRY computation");
    return true;
}

/* ---- attribute values ---- */
GS__FN gs__pattr *gs__attr(gs__parser *P, const gs__pinst *in, const char *name) {
    int k;
    for (k = in->first_attr; k < in->first_attr + in->n_attrs; k++) {
        if (strcmp(P->attrs[k].name, name) == 0) {
            P->attrs[k].used = true;
            return &P->attrs[k];
        }
    }
    return NULL;
}

GS__FN gs__pattr *gs__need_attr(gs__parser *P, const gs__pinst *in, const char *name) {
    gs__pattr *a = gs__attr(P, in, name);
    if (!a) gs__perr(P, &in->op_at, GS_ERR_PARSE, "%s '%s' needs the attribute %s=", in->opcode, in->name, name);
    return a;
}

/* nothing but whitespace may remain in the value */
GS__FN bool gs__val_end(gs__parser *P, gs__cur *c) {
    if (!gs__skip_ws(P, c)) return false;
    if (!gs__cur_eof(c)) return gs__pexpect(P, c, "the end of the value");
    return true;
}

GS__FN bool gs__attr_int(gs__parser *P, const gs__pattr *a, int64_t *out) {
    gs__cur v = a->val;
    return gs__read_int(P, &v, out, "an integer") && gs__val_end(P, &v);
}

/* an unsigned 64-bit integer value (decimal digits only) */
GS__FN bool gs__attr_u64(gs__parser *P, const gs__pattr *a, uint64_t *out, const char *what) {
    gs__cur c = a->val;
    uint64_t v = 0;
    gs__cur at;
    if (!gs__skip_ws(P, &c)) return false;
    at = c;
    if (!gs__hlo_digit(gs__cur_peek(&c))) return gs__pexpect(P, &at, what);
    while (gs__hlo_digit(gs__cur_peek(&c))) {
        uint64_t d = (uint64_t)(gs__cur_peek(&c) - '0');
        if (v > (UINT64_MAX - d) / 10) return gs__perr(P, &at, GS_ERR_PARSE, "integer out of range (above 2^64-1)");
        v = v * 10 + d;
        gs__cur_adv(&c);
    }
    if (gs__hlo_name_char(gs__cur_peek(&c))) return gs__pexpect(P, &at, what);
    if (!gs__val_end(P, &c)) return false;
    *out = v;
    return true;
}

GS__FN bool gs__attr_bool(gs__parser *P, const gs__pattr *a, bool *out) {
    if (gs__peek_word(a->val, "true")) *out = true;
    else if (gs__peek_word(a->val, "false")) *out = false;
    else return gs__pexpect(P, &a->val, "true or false");
    {
        gs__cur v = a->val;
        while (gs__hlo_alpha(gs__cur_peek(&v))) gs__cur_adv(&v);
        return gs__val_end(P, &v);
    }
}

/* a bare word or a string, into buf without quotes */
GS__FN bool gs__attr_word(gs__parser *P, const gs__pattr *a, char *buf, size_t cap) {
    const char *p = a->val.p;
    size_t n = (size_t)(a->val.end - a->val.p);
    if (n >= 2 && p[0] == '"' && p[n - 1] == '"') {
        p++;
        n -= 2;
    }
    if (n >= cap) return gs__perr(P, &a->val, GS_ERR_PARSE, "value of %s is too long", a->name);
    memcpy(buf, p, n);
    buf[n] = 0;
    return true;
}

/* backend_config="unspecified_dims=[0,2]" on a Sharding custom-call (the dims propagation may refine), or on the
   SPMDFullToShardShape / SPMDShardToFullShape after one (refined with it when both name the same dims) */
GS__FN bool gs__unspecified_dims(gs__parser *P, const gs__pattr *a, gs_value *v) {
    char buf[256];
    const char *p;
    uint32_t open = 0;
    if (!gs__attr_word(P, a, buf, sizeof buf)) return false;
    p = strstr(buf, "unspecified_dims=[");
    if (!p) return true; /* another backend config: nothing for us */
    p += strlen("unspecified_dims=[");
    while (*p && *p != ']') {
        long d;
        char *end;
        while (*p == ' ' || *p == ',') p++;
        if (*p == ']') break;
        d = strtol(p, &end, 10);
        if (end == p || d < 0 || d >= v->shape.rank || d >= 32)
            return gs__perr(P, &a->val, GS_ERR_PARSE, "unspecified_dims: bad dim for rank %d", v->shape.rank);
        open |= 1u << d;
        p = end;
    }
    if (*p != ']') return gs__perr(P, &a->val, GS_ERR_PARSE, "unspecified_dims: expected ']'");
    v->open_dims = open;
    v->open_text = NULL;   /* printed as unspecified_dims, with the sharding's tile assignment */
    return true;
}

/* "{1,0}" or "{}" */
GS__FN bool gs__read_int_list(gs__parser *P, gs__cur *c, int64_t *out, int cap, int *n) {
    bool ok = true;
    *n = 0;
    if (!gs__expect_ch(P, c, '{')) return false;
    if (gs__accept(P, c, '}', &ok)) return true;
    if (!ok) return false;
    for (;;) {
        int64_t x;
        gs__cur at;
        if (!gs__skip_ws(P, c)) return false;
        at = *c;
        if (!gs__read_int(P, c, &x, "an integer")) return false;
        if (*n == cap) return gs__perr(P, &at, GS_ERR_PARSE, "more than %d entries", cap);
        out[(*n)++] = x;
        if (gs__accept(P, c, '}', &ok)) return true;
        if (!ok) return false;
        if (gs__cur_peek(c) != ',') return gs__pexpect(P, c, "',' or '}'");
        gs__cur_adv(c);
    }
}

GS__FN bool gs__attr_ints(gs__parser *P, const gs__pattr *a, int64_t *out, int cap, int *n) {
    gs__cur v = a->val;
    return gs__read_int_list(P, &v, out, cap, n) && gs__val_end(P, &v);
}

/* an optional list attribute: absent means empty */
GS__FN bool gs__opt_ints(gs__parser *P, const gs__pinst *in, const char *name, int64_t *out, int *n) {
    gs__pattr *a = gs__attr(P, in, name);
    *n = 0;
    return !a || gs__attr_ints(P, a, out, GS_MAX_RANK, n);
}

/* dimensions={d}: exactly one entry */
GS__FN bool gs__attr_one_dim(gs__parser *P, const gs__pinst *in, const char *name, int64_t *d) {
    int64_t dims[GS_MAX_RANK];
    int n;
    gs__pattr *a = gs__need_attr(P, in, name);
    if (!a || !gs__attr_ints(P, a, dims, GS_MAX_RANK, &n)) return false;
    if (n != 1) return gs__perr(P, &a->val, GS_ERR_PARSE, "expected one dimension in %s=, found %d", name, n);
    *d = dims[0];
    return true;
}

/* an integer with no check of what follows (for "3x3", "0_1") */
GS__FN bool gs__read_int_raw(gs__parser *P, gs__cur *c, int64_t *out, const char *what) {
    bool neg = false;
    uint64_t v = 0;
    gs__cur at = *c;
    if (gs__cur_peek(c) == '-') {
        neg = true;
        gs__cur_adv(c);
    }
    if (!gs__hlo_digit(gs__cur_peek(c))) return gs__pexpect(P, &at, what);
    while (gs__hlo_digit(gs__cur_peek(c))) {
        uint64_t d = (uint64_t)(gs__cur_peek(c) - '0');
        if (v > ((uint64_t)INT64_MAX - d) / 10) return gs__perr(P, &at, GS_ERR_PARSE, "integer out of range");
        v = v * 10 + d;
        gs__cur_adv(c);
    }
    *out = neg ? -(int64_t)v : (int64_t)v;
    return true;
}

/* n integers separated by 'x' ("3x3"); each entry may be followed by '_'-joined extra integers
   (per = 1, 2 or 3 numbers per entry: "3", "0_1", "0_1_2"); per_min..per_max numbers per entry */
GS__FN bool gs__read_xlist(gs__parser *P, gs__cur *c, int n, int per_min, int per_max, int64_t (*out)[3],
                           const char *field) {
    int i, j;
    gs__cur at = *c;
    for (i = 0;; i++) {
        if (i == n) {
            return gs__perr(P, &at, GS_ERR_PARSE, "%s has more than %d entr%s (one per dimension)", field, n,
                            n == 1 ? "y" : "ies");
        }
        out[i][1] = out[i][2] = 0;
        for (j = 0;; j++) {
            if (!gs__read_int_raw(P, c, &out[i][j], "an integer")) return false;
            if (gs__cur_peek(c) != '_') break;
            if (j + 1 == per_max) return gs__pexpect(P, c, "'x' or the end of the value");
            gs__cur_adv(c);
        }
        if (j + 1 < per_min) return gs__pexpect(P, c, "'_'");
        if (gs__cur_peek(c) != 'x') break;
        gs__cur_adv(c);
    }
    if (i + 1 != n)
        return gs__perr(P, &at, GS_ERR_PARSE, "%s has %d entr%s, expected %d (one per dimension)", field, i + 1,
                        i == 0 ? "y" : "ies", n);
    return true;
}

/* window={size=3x3 stride=2x2 pad=1_1x0_0 lhs_dilate=2x1 rhs_dilate=1x2}, n dims */
/* window={...}; rev (n entries, may be NULL: then rhs_reversal is refused) receives rhs_reversal */
GS__FN bool gs__attr_window(gs__parser *P, const gs__pattr *a, gs_window_dim *w, int n, bool *rev) {
    gs__cur v = a->val;
    int64_t vals[GS_MAX_RANK][3];
    bool seen_size = false, ok = true;
    int i;
    for (i = 0; i < n; i++) {
        w[i] = gs_window_default();
        if (rev) rev[i] = false;
    }
    if (!gs__expect_ch(P, &v, '{')) return false;
    for (;;) {
        gs__cur at;
        const char *start;
        size_t len;
        if (gs__accept(P, &v, '}', &ok)) break;
        if (!ok) return false;
        at = v;
        start = v.p;
        while (gs__hlo_alpha(gs__cur_peek(&v)) || gs__cur_peek(&v) == '_') gs__cur_adv(&v);
        len = (size_t)(v.p - start);
        if (len == 0) return gs__pexpect(P, &at, "a window field (size, stride, pad, lhs_dilate, rhs_dilate)");
        if (gs__cur_peek(&v) != '=') return gs__pexpect(P, &v, "'='");
        gs__cur_adv(&v);
#define GS__WF(s) (len == sizeof(s) - 1 && memcmp(start, s, len) == 0)
        if (n == 0) return gs__perr(P, &at, GS_ERR_PARSE, "this window has no dimensions");
        if (GS__WF("pad")) {
            if (!gs__read_xlist(P, &v, n, 2, 2, vals, "pad")) return false;
            for (i = 0; i < n; i++) {
                w[i].pad_lo = vals[i][0];
                w[i].pad_hi = vals[i][1];
            }
        } else if (GS__WF("size") || GS__WF("stride") || GS__WF("lhs_dilate") || GS__WF("rhs_dilate") ||
                   GS__WF("rhs_reversal")) {
            if (!gs__read_xlist(P, &v, n, 1, 1, vals, GS__WF("size") ? "size" : "window field")) return false;
            for (i = 0; i < n; i++) {
                if (GS__WF("size")) w[i].size = vals[i][0];
                else if (GS__WF("stride")) w[i].stride = vals[i][0];
                else if (GS__WF("lhs_dilate")) w[i].base_dilation = vals[i][0];
                else if (GS__WF("rhs_dilate")) w[i].window_dilation = vals[i][0];
                else if (rev && (vals[i][0] == 0 || vals[i][0] == 1)) rev[i] = vals[i][0] == 1;
                else if (rev) return gs__pexpect(P, &at, "rhs_reversal entries 0 or 1");
                else if (vals[i][0] != 0)
                    return gs__perr(P, &at, GS_ERR_UNSUPPORTED, "window rhs_reversal is only valid on a convolution");
            }
            if (GS__WF("size")) seen_size = true;
        } else {
            return gs__pexpect(P, &at, "a window field (size, stride, pad, lhs_dilate, rhs_dilate)");
        }
#undef GS__WF
        if (gs__cur_peek(&v) >= 0 && !gs__hlo_space(gs__cur_peek(&v)) && gs__cur_peek(&v) != '}')
            return gs__pexpect(P, &v, "a space or '}'");
    }
    if (n > 0 && !seen_size) return gs__perr(P, &a->val, GS_ERR_PARSE, "the window needs size=");
    return gs__val_end(P, &v);
}

/* replica_groups: "{}", "{{0,1},{2,3}}", "[2,4]<=[8]", "[2,4]<=[4,2]T(1,0)"; list ids go to P->ids */
GS__FN bool gs__attr_groups(gs__parser *P, const gs__pattr *a, gs_replica_groups *rg) {
    gs__cur v = a->val;
    bool ok = true;
    int k;
    memset(rg, 0, sizeof *rg);
    stbds_arrsetlen(P->ids, 0);
    if (!gs__skip_ws(P, &v)) return false;
    if (gs__cur_peek(&v) == '[') {
        int64_t prod = 1, dims2[2], n_ids;
        int n2 = 0;
        bool seen[GS_MAX_RANK];
        gs__cur_adv(&v);
        for (;;) {
            if (n2 == 2) return gs__pexpect(P, &v, "']' (the iota form is [groups,size]<=[dims])");
            if (!gs__read_int(P, &v, &dims2[n2++], "an integer")) return false;
            if (gs__accept(P, &v, ']', &ok)) break;
            if (!ok || !gs__expect_ch(P, &v, ',')) return false;
        }
        if (n2 != 2) return gs__pexpect(P, &v, "',' (the iota form is [groups,size]<=[dims])");
        if (!gs__skip_ws(P, &v)) return false;
        if (gs__cur_peek(&v) != '<' || gs__cur_peek_at(&v, 1) != '=') return gs__pexpect(P, &v, "'<='");
        gs__cur_adv(&v);
        gs__cur_adv(&v);
        if (!gs__expect_ch(P, &v, '[')) return false;
        for (;;) {
            int64_t d;
            gs__cur at;
            if (!gs__skip_ws(P, &v)) return false;
            at = v;
            if (!gs__read_int(P, &v, &d, "an integer")) return false;
            if (d < 1) return gs__pexpect(P, &at, "a dimension >= 1");
            if (rg->iota_rank == GS_MAX_RANK) return gs__perr(P, &at, GS_ERR_PARSE, "more than %d iota dimensions", GS_MAX_RANK);
            rg->iota_dims[rg->iota_rank++] = d;
            if (!gs__mul64(prod, d, &prod)) return gs__perr(P, &at, GS_ERR_PARSE, "iota size overflows int64");
            if (gs__accept(P, &v, ']', &ok)) break;
            if (!ok || !gs__expect_ch(P, &v, ',')) return false;
        }
        for (k = 0; k < rg->iota_rank; k++) rg->iota_perm[k] = k;
        if (!gs__skip_ws(P, &v)) return false;
        if (gs__cur_peek(&v) == 'T') {
            int64_t perm[GS_MAX_RANK];
            int np;
            gs__cur at;
            gs__cur_adv(&v);
            if (!gs__expect_ch(P, &v, '(')) return false;
            at = v;
            np = 0;
            memset(seen, 0, sizeof seen);
            for (;;) {
                if (np == rg->iota_rank) return gs__pexpect(P, &v, "')'");
                if (!gs__read_int(P, &v, &perm[np], "an integer")) return false;
                if (perm[np] < 0 || perm[np] >= rg->iota_rank || seen[perm[np]])
                    return gs__perr(P, &at, GS_ERR_PARSE, "T(...) must be a permutation of 0..%d", rg->iota_rank - 1);
                seen[perm[np]] = true;
                rg->iota_perm[np] = (int)perm[np];
                np++;
                if (gs__accept(P, &v, ')', &ok)) break;
                if (!ok || !gs__expect_ch(P, &v, ',')) return false;
            }
            if (np != rg->iota_rank)
                return gs__perr(P, &at, GS_ERR_PARSE, "T(...) must be a permutation of 0..%d", rg->iota_rank - 1);
        }
        if (dims2[0] < 1 || dims2[1] < 1 || !gs__mul64(dims2[0], dims2[1], &n_ids) || n_ids != prod)
            return gs__perr(P, &a->val, GS_ERR_PARSE,
                            "replica groups [%lld,%lld] do not have the %lld ids of the iota", (long long)dims2[0],
                            (long long)dims2[1], (long long)prod);
        rg->n_groups = dims2[0];
        rg->group_size = dims2[1];
        return gs__val_end(P, &v);
    }
    if (!gs__expect_ch(P, &v, '{')) return false;
    if (gs__accept(P, &v, '}', &ok)) return gs__val_end(P, &v);
    if (!ok) return false;
    for (;;) {
        int64_t row[1];
        int64_t count = 0;
        gs__cur at;
        if (!gs__skip_ws(P, &v)) return false;
        at = v;
        if (!gs__expect_ch(P, &v, '{')) return false;
        if (!gs__accept(P, &v, '}', &ok)) {
            if (!ok) return false;
            for (;;) {
                if (!gs__read_int(P, &v, &row[0], "a partition id")) return false;
                stbds_arrput(P->ids, row[0]);
                count++;
                if (gs__accept(P, &v, '}', &ok)) break;
                if (!ok || !gs__expect_ch(P, &v, ',')) return false;
            }
        }
        if (count == 0) return gs__perr(P, &at, GS_ERR_PARSE, "an empty replica group");
        if (rg->n_groups == 0) rg->group_size = count;
        else if (count != rg->group_size)
            return gs__perr(P, &at, GS_ERR_PARSE, "replica group of %lld ids; the first group has %lld (all must be equal)",
                            (long long)count, (long long)rg->group_size);
        rg->n_groups++;
        if (gs__accept(P, &v, '}', &ok)) break;
        if (!ok || !gs__expect_ch(P, &v, ',')) return false;
    }
    rg->ids = P->ids;
    return gs__val_end(P, &v);
}

GS__FN bool gs__coll_desc(gs__parser *P, const gs__pinst *in, gs_collective_desc *cd) {
    gs__pattr *a;
    memset(cd, 0, sizeof *cd);
    if ((a = gs__attr(P, in, "replica_groups")) != NULL && !gs__attr_groups(P, a, &cd->groups)) return false;
    if ((a = gs__attr(P, in, "channel_id")) != NULL && !gs__attr_int(P, a, &cd->channel_id)) return false;
    if ((a = gs__attr(P, in, "use_global_device_ids")) != NULL && !gs__attr_bool(P, a, &cd->use_global_device_ids))
        return false;
    return true;
}

/* ---- constants ---- */

/* One real number of float type t from buf (nan, inf), rounded to t; false if buf is not a number. */
GS__FN bool gs__parse_real(const char *buf, gs_dtype t, double *out) {
    char *endp;
    double d;
    if (strcmp(buf, "nan") == 0 || strcmp(buf, "-nan") == 0 || strcmp(buf, "+nan") == 0) d = (double)NAN;
    else if (strcmp(buf, "inf") == 0 || strcmp(buf, "+inf") == 0) d = (double)INFINITY;
    else if (strcmp(buf, "-inf") == 0) d = -(double)INFINITY;
    else if (strcmp(buf, "true") == 0 || strcmp(buf, "false") == 0) return false;
    else {
        d = strtod(buf, &endp);
        if (*endp != 0 || endp == buf) return false;
    }
    *out = gs__hlo_round_real(t, d);
    return true;
}

/* One number token (letters, digits, '.', '-', '+') into buf. */
GS__FN bool gs__parse_numtok(gs__parser *P, gs__cur *c, char *buf, size_t cap) {
    const char *start;
    size_t n;
    gs__cur at;
    if (!gs__skip_ws(P, c)) return false;
    at = *c;
    start = c->p;
    while (gs__hlo_alpha(gs__cur_peek(c)) || gs__hlo_digit(gs__cur_peek(c)) || gs__cur_peek(c) == '.' ||
           gs__cur_peek(c) == '-' || gs__cur_peek(c) == '+')
        gs__cur_adv(c);
    n = (size_t)(c->p - start);
    if (n == 0 || n >= cap) return gs__pexpect(P, &at, "a number");
    memcpy(buf, start, n);
    buf[n] = 0;
    return true;
}

/* An integer literal of type dt (range-checked) as 64 bits. */
GS__FN bool gs__parse_int_lit(gs__parser *P, const gs__cur *at, const char *buf, gs_dtype dt, uint64_t *out) {
    char *endp;
    int bits = gs__dt(dt)->bits;
    errno = 0;
    if (gs__is_signed(dt)) {
        long long x = strtoll(buf, &endp, 10);
        long long hi = bits >= 64 ? LLONG_MAX : (long long)((((uint64_t)1) << (bits - 1)) - 1u), lo = -hi - 1;
        if (*endp != 0 || endp == buf) return gs__pexpect(P, at, "an integer");
        if (errno == ERANGE || x < lo || x > hi)
            return gs__perr(P, at, GS_ERR_PARSE, "%s is out of range for %s", buf, gs_dtype_name(dt));
        *out = (uint64_t)x;
    } else {
        unsigned long long x;
        uint64_t hi = bits >= 64 ? UINT64_MAX : (((uint64_t)1) << bits) - 1u;
        if (buf[0] == '-') {
            if (strtoll(buf, &endp, 10) != 0 || *endp != 0) 
                return gs__perr(P, at, GS_ERR_PARSE, "%s is out of range for %s", buf, gs_dtype_name(dt));
        }
        x = strtoull(buf, &endp, 10);
        if (*endp != 0 || endp == buf) return gs__pexpect(P, at, "an integer");
        if (errno == ERANGE || (uint64_t)x > hi)
            return gs__perr(P, at, GS_ERR_PARSE, "%s is out of range for %s", buf, gs_dtype_name(dt));
        *out = (uint64_t)x;
    }
    return true;
}

/* one literal element into data[i] (storage format) and *value (exactly representable in the dtype; for
   64-bit integers the nearest double, for complex the real part) */
GS__FN bool gs__parse_elem(gs__parser *P, gs__cur *c, gs_dtype dt, void *data, int64_t i, double *value) {
    char buf[72];
    unsigned char one[16];
    gs__cur at;
    if (!gs__skip_ws(P, c)) return false;
    at = *c;
    if (gs__cur_peek(c) == '.' && gs__cur_peek_at(c, 1) == '.')
        return gs__perr(P, &at, GS_ERR_PARSE,
                        "the constant's literal was elided ({...}); print the HLO with its large constants");
    memset(one, 0, sizeof one);
    if (gs__is_complex(dt)) {   /* (re, im) */
        gs_dtype part = dt == GS_C64 ? GS_F32 : GS_F64;
        double re, im;
        gs__cur pat;
        if (!gs__expect_ch(P, c, '(')) return false;
        pat = *c;
        if (!gs__parse_numtok(P, c, buf, sizeof buf)) return false;
        if (!gs__parse_real(buf, part, &re)) return gs__pexpect(P, &pat, "a number");
        if (!gs__expect_ch(P, c, ',')) return false;
        if (!gs__skip_ws(P, c)) return false;
        pat = *c;
        if (!gs__parse_numtok(P, c, buf, sizeof buf)) return false;
        if (!gs__parse_real(buf, part, &im)) return gs__pexpect(P, &pat, "a number");
        if (!gs__expect_ch(P, c, ')')) return false;
        if (dt == GS_C64) {
            float f[2];
            f[0] = (float)re;
            f[1] = (float)im;
            memcpy(one, f, sizeof f);
        } else {
            memcpy(one, &re, 8);
            memcpy(one + 8, &im, 8);
        }
        *value = re;
    } else {
        if (!gs__parse_numtok(P, c, buf, sizeof buf)) return false;
        if (gs__is_float(dt)) {
            if (!gs__parse_real(buf, dt, value)) return gs__pexpect(P, &at, "a number");
            gs__st_f(dt, one, 0, *value);
        } else if (dt == GS_PRED) {
            if (strcmp(buf, "true") == 0 || strcmp(buf, "1") == 0) one[0] = 1;
            else if (strcmp(buf, "false") == 0 || strcmp(buf, "0") == 0) one[0] = 0;
            else return gs__pexpect(P, &at, "true or false");
            *value = one[0];
        } else if (gs__is_int(dt)) {
            uint64_t x = 0;
            if (!gs__parse_int_lit(P, &at, buf, dt, &x)) return false;
            gs__st_i(dt, one, 0, x);
            *value = gs__is_signed(dt) ? (double)(int64_t)x : (double)x;
        } else {
            return gs__perr(P, &at, GS_ERR_PARSE, "a constant of type %s", gs_dtype_name(dt));
        }
    }
    if (data) gs__to_storage(dt, (unsigned char *)data + (size_t)i * gs_dtype_size(dt), one, 1);
    return true;
}

GS__FN bool gs__parse_dense(gs__parser *P, gs__cur *c, const gs_shape *s, int d, void *data, int64_t *pos) {
    int64_t i;
    bool ok = true;
    double unused;
    if (!gs__skip_ws(P, c)) return false;
    if (gs__cur_peek(c) == '.' && gs__cur_peek_at(c, 1) == '.')
        return gs__perr(P, c, GS_ERR_PARSE, "the constant's literal was elided ({...}); print the HLO with its large constants");
    if (!gs__expect_ch(P, c, '{')) return false;
    for (i = 0;; i++) {
        gs__cur at;
        if (!gs__skip_ws(P, c)) return false;
        at = *c;
        if (gs__accept(P, c, '}', &ok)) {
            if (i != s->dims[d])
                return gs__perr(P, &at, GS_ERR_PARSE, "constant dimension %d has %lld elements, expected %lld", d,
                                (long long)i, (long long)s->dims[d]);
            return true;
        }
        if (!ok) return false;
        if (i > 0 && !gs__expect_ch(P, c, ',')) return false;
        if (!gs__skip_ws(P, c)) return false;
        at = *c;
        if (i == s->dims[d])
            return gs__perr(P, &at, GS_ERR_PARSE, "constant dimension %d has more than %lld elements", d,
                            (long long)s->dims[d]);
        if (d == s->rank - 1) {
            if (!gs__parse_elem(P, c, s->dtype, data, (*pos)++, &unused)) return false;
        } else if (!gs__parse_dense(P, c, s, d + 1, data, pos)) {
            return false;
        }
    }
}

GS__FN bool gs__build_constant(gs__parser *P, gs_graph *g, const gs__pinst *in, gs_value **out) {
    gs__cur c = in->args;
    const gs_shape *s = &in->type.s;
    int64_t numel = gs_shape_numel(s), pos = 0;
    double value;
    void *data;
    if (!gs__skip_ws(P, &c)) return false;
    if (gs__cur_peek(&c) != '{') {
        /* a scalar literal: the constant itself, or (extension) a splat of a non-scalar shape */
        unsigned char one[16];
        if (!gs__parse_elem(P, &c, s->dtype, one, 0, &value) || !gs__val_end(P, &c)) return false;
        *out = s->rank == 0 ? gs_constant(g, *s, one) : gs_constant_splat(g, *s, value);
        return true;
    }
    if (s->rank == 0) return gs__pexpect(P, &c, "a scalar literal");
    {   /* XLA prints a large literal as {...}: a constant whose value is unknown */
        gs__cur e = c;
        bool ok = true;
        gs__cur_adv(&e);
        if (!gs__skip_ws(P, &e)) return false;
        if (gs__cur_peek(&e) == '.' && gs__cur_peek_at(&e, 1) == '.' && gs__cur_peek_at(&e, 2) == '.') {
            gs__cur_adv(&e);
            gs__cur_adv(&e);
            gs__cur_adv(&e);
            if (!gs__skip_ws(P, &e)) return false;
            if (!gs__accept(P, &e, '}', &ok)) return ok ? gs__pexpect(P, &e, "'}' after {...") : false;
            if (!gs__val_end(P, &e)) return false;
            *out = gs__constant_elided(g, *s);
            return true;
        }
    }
    {
        gs__cur dots = c;
        while (!gs__cur_eof(&dots) && !(gs__cur_peek(&dots) == '.' && gs__cur_peek_at(&dots, 1) == '.')) gs__cur_adv(&dots);
        if (!gs__cur_eof(&dots))
            return gs__perr(P, &dots, GS_ERR_PARSE,
                            "the constant's literal was elided ({...}); print the HLO with its large constants");
    }
    if (numel > (int64_t)(c.end - c.p)) return gs__perr(P, &c, GS_ERR_PARSE, "the literal has fewer than %lld elements", (long long)numel);
    data = gs__malloc(P->ctx, (size_t)numel * gs_dtype_size(s->dtype));
    if (!data) return false;
    if (!gs__parse_dense(P, &c, s, 0, data, &pos) || !gs__val_end(P, &c)) {
        gs__free(P->ctx, data);
        return false;
    }
    *out = gs_constant(g, *s, data);
    gs__free(P->ctx, data);
    return true;
}

/* ---- called computations ---- */
GS__FN int gs__called(gs__parser *P, const gs__pattr *a) {
    const char *name;
    gs__cur v = a->val, at;
    ptrdiff_t j;
    if (!gs__read_name(P, &v, "a computation name", &name, &at) || !gs__val_end(P, &v)) return -1;
    j = stbds_shgeti(P->comp_names, (char *)name);
    if (j < 0) {
        gs__perr(P, &at, GS_ERR_PARSE, "unknown computation '%s'", name);
        return -1;
    }
    return P->comp_names[j].value;
}

/* parameter(N): N without reporting errors (reducers are recognised by shape) */
GS__FN bool gs__quiet_param(const gs__pinst *in, int64_t *num) {
    gs__cur c = in->args;
    int64_t v = 0;
    bool any = false;
    if (in->op != GS_OP_PARAMETER) return false;
    while (!gs__cur_eof(&c) && gs__hlo_space(gs__cur_peek(&c))) gs__cur_adv(&c);
    while (gs__hlo_digit(gs__cur_peek(&c)) && v < 1000000) {
        v = v * 10 + (gs__cur_peek(&c) - '0');
        any = true;
        gs__cur_adv(&c);
    }
    while (!gs__cur_eof(&c) && gs__hlo_space(gs__cur_peek(&c))) gs__cur_adv(&c);
    *num = v;
    return any && gs__cur_eof(&c);
}

GS__FN bool gs__is_scalar_type(const gs__pshape *t) { return !t->tuple && t->s.rank == 0; }

/* the instruction an operand of `in` names inside comp, or -1 */
GS__FN int gs__quiet_operand(const gs__parser *P, gs__pcomp *comp, const gs__pinst *in, int k) {
    ptrdiff_t j;
    if (k >= in->n_ops) return -1;
    j = stbds_shgeti(comp->names, (char *)P->ops[in->first_op + k].name);
    return j < 0 ? -1 : comp->names[j].value;
}

GS__FN void gs__analyse_reducer(gs__parser *P, gs__pcomp *comp) {
    int i, params[2] = {-1, -1};
    const gs__pinst *root = &P->insts[comp->root];
    gs_reduce_kind kind = GS_REDUCE_INVALID;
    comp->red_state = 2;
    for (i = comp->first_inst; i < comp->first_inst + comp->n_inst; i++) {
        const gs__pinst *in = &P->insts[i];
        int64_t num;
        if (in->op != GS_OP_PARAMETER) continue;   /* the root, or dead (the root's operands are checked below) */
        if (!gs__quiet_param(in, &num) || num > 1 || params[num] >= 0 || !gs__is_scalar_type(&in->type)) return;
        params[num] = i;
    }
    if (params[0] < 0 || params[1] < 0) return;
    if (P->insts[params[0]].type.s.dtype != P->insts[params[1]].type.s.dtype) return;
    if (comp->root == params[1]) {
        kind = GS_REDUCE_REPLACE;
    } else {
        int a = gs__quiet_operand(P, comp, root, 0), b = gs__quiet_operand(P, comp, root, 1);
        int k;
        for (k = GS_REDUCE_SUM; k <= GS_REDUCE_OR; k++)
            if (gs__hlo_reduce_op((gs_reduce_kind)k) == root->op) kind = (gs_reduce_kind)k;
        /* the root's shape may be left out (it is the parameters') */
        if (kind == GS_REDUCE_INVALID || root->n_ops != 2 || !(root->shape_omitted || gs__is_scalar_type(&root->type)))
            return;
        if (!root->shape_omitted && root->type.s.dtype != P->insts[params[0]].type.s.dtype) return;
        if (!((a == params[0] && b == params[1]) || (a == params[1] && b == params[0]))) return;
    }
    comp->red_state = 1;
    comp->red_kind = kind;
    comp->red_dtype = P->insts[params[0]].type.s.dtype;
}

/* to_apply= of a reduction over elements of dtype dt */
/* Component k of a variadic reducer over n operands: 2n scalar parameters and ROOT tuple(e_0, ..,
   e_n-1) with e_k = op(parameter(k), parameter(n+k)) (either order; op add, multiply, maximum, minimum, and,
   or) or e_k = parameter(n+k) (replace). Such a reducer combines every component on its own, so the
   variadic op is n ops of one operand each. *kind stays GS_REDUCE_INVALID (no error) for any other form. */
GS__FN bool gs__tuple_reducer(gs__parser *P, const gs__pattr *a, const gs__pcomp *comp, gs_dtype dt, gs_reduce_kind *kind) {
    const gs__pinst *root = &P->insts[comp->root], *e;
    int n = P->red_n, k = P->red_k, ie = -1, lhs = -1, rhs = -1, r;
    int64_t nl = -1, nr = -1;
    *kind = GS_REDUCE_INVALID;
    if (root->op == GS_OP_TUPLE && root->n_ops == n && (ie = gs__quiet_operand(P, (gs__pcomp *)comp, root, k)) >= 0) {
        e = &P->insts[ie];
        if (gs__quiet_param(e, &nl) && nl == n + k && gs__is_scalar_type(&e->type)) {
            *kind = GS_REDUCE_REPLACE;
        } else {
            lhs = gs__quiet_operand(P, (gs__pcomp *)comp, e, 0);
            rhs = gs__quiet_operand(P, (gs__pcomp *)comp, e, 1);
            for (r = GS_REDUCE_SUM; r <= GS_REDUCE_OR; r++)
                if (gs__hlo_reduce_op((gs_reduce_kind)r) == e->op && e->n_ops == 2 && lhs >= 0 && rhs >= 0 &&
                    gs__quiet_param(&P->insts[lhs], &nl) && gs__quiet_param(&P->insts[rhs], &nr) &&
                    ((nl == k && nr == n + k) || (nl == n + k && nr == k)) && gs__is_scalar_type(&P->insts[lhs].type) &&
                    (e->shape_omitted || gs__is_scalar_type(&e->type)))
                    *kind = (gs_reduce_kind)r;
        }
    }
    if (*kind == GS_REDUCE_INVALID) return true;   /* a reducer that mixes the components (gs__reducer_attr) */
    {   /* the component's element type */
        gs_dtype pt = P->insts[ie].type.s.dtype;
        if (*kind != GS_REDUCE_REPLACE) pt = P->insts[lhs].type.s.dtype;
        if (pt != dt && !(gs__is_float(pt) && gs__is_float(dt)))
            return gs__perr(P, &a->val, GS_ERR_PARSE, "reducer '%s' component %d works on %s, but operand %d is %s", comp->name, k,
                            gs_dtype_name(pt), k, gs_dtype_name(dt));
    }
    return true;
}

GS__FN bool gs__reducer_attr(gs__parser *P, const gs__pinst *in, const char *attr, gs_dtype dt, gs_reduce_kind *kind);
GS__FN bool gs__called_graph(gs__parser *P, const gs__pinst *in, const char *attr, gs_graph **out);
/* v, just built from kind gs__reducer gave: with the reducer computation it found instead (NULL, the error set, on
   failure) */
GS__FN gs_value *gs__set_reducer(gs__parser *P, gs_value *v) {
    const gs__pinst *in = P->red_in;
    gs_graph *r = NULL;
    bool var = P->red_var;
    int n = P->red_n;
    P->red_in = NULL;
    P->red_var = false;
    if (!v || !in) return v;
    if (!gs__called_graph(P, in, "to_apply", &r)) return NULL;
    if (var)   /* component red_k of a reducer that mixes the components: the whole variadic op's operands too */
        return gs_value_set_variadic_reducer(v, r, n, P->red_k, P->red_xs,
                                             P->red_xs + (v->op == GS_OP_SCATTER ? n + 1 : n)) == GS_OK ? v : NULL;
    return gs_value_set_reducer(v, r) == GS_OK ? v : NULL;
}
GS__FN bool gs__reducer(gs__parser *P, const gs__pinst *in, gs_dtype dt, gs_reduce_kind *kind) {
    return gs__reducer_attr(P, in, "to_apply", dt, kind);
}

/* the reducer that attribute attr (to_apply=, select-and-scatter's scatter=) names */
GS__FN bool gs__reducer_attr(gs__parser *P, const gs__pinst *in, const char *attr, gs_dtype dt, gs_reduce_kind *kind) {
    gs__pattr *a = gs__need_attr(P, in, attr);
    gs__pcomp *comp;
    int ci;
    P->red_in = NULL;
    P->red_var = false;
    if (!a || (ci = gs__called(P, a)) < 0) return false;
    comp = &P->comps[ci];
    if (P->red_n > 0) {
        if (!gs__tuple_reducer(P, a, comp, dt, kind)) return false;
        if (*kind == GS_REDUCE_INVALID) {   /* mixes the components: evaluated as a computation (gs__set_reducer) */
            if (in->op != GS_OP_REDUCE && in->op != GS_OP_REDUCE_WINDOW && in->op != GS_OP_SCATTER)
                return gs__perr(P, &a->val, GS_ERR_UNSUPPORTED, "%s '%s' over %d operands: reducer '%s' is not one per "
                                "operand (ROOT tuple(e_0, .., e_%d), e_k of parameter(k) and parameter(%d+k) only)",
                                in->opcode, in->name, P->red_n, comp->name, P->red_n - 1, P->red_n);
            if (P->red_n > GS__MAX_VARIADIC)
                return gs__perr(P, &a->val, GS_ERR_UNSUPPORTED, "%s '%s' over %d operands with the reducer '%s' that mixes "
                                "them (at most %d operands)", in->opcode, in->name, P->red_n, comp->name, GS__MAX_VARIADIC);
            P->red_in = in;
            P->red_var = true;
            *kind = GS_REDUCE_SUM;
            return true;
        }
        if (*kind == GS_REDUCE_REPLACE && in->op != GS_OP_SCATTER)
            return gs__perr(P, &a->val, GS_ERR_UNSUPPORTED, "reducer '%s' replaces: only valid for scatter", comp->name);
        return true;
    }
    if (comp->red_state == 0) gs__analyse_reducer(P, comp);
    if (comp->red_state != 1) {
        /* any other reducer is built as a computation and evaluated per combination (gs_value_set_reducer); the
           kind the builder sees until then is one valid for every reducible type */
        if (in->op == GS_OP_SELECT_AND_SCATTER)
            return gs__perr(P, &a->val, GS_ERR_UNSUPPORTED, "select-and-scatter with the reducer computation '%s' (only "
                            "ROOT add/multiply/maximum/minimum/and/or of the two parameters)", comp->name);
        P->red_in = in;
        *kind = GS_REDUCE_SUM;
        return true;
    }
    /* XLA accepts a float reducer over another float type (an f32 add on bf16 data): the same reduction */
    if (comp->red_dtype != dt && !(gs__is_float(comp->red_dtype) && gs__is_float(dt)))
        return gs__perr(P, &a->val, GS_ERR_PARSE, "reducer '%s' works on %s, but %s '%s' reduces %s", comp->name,
                        gs_dtype_name(comp->red_dtype), in->opcode, in->name, gs_dtype_name(dt));
    if (comp->red_kind == GS_REDUCE_REPLACE && in->op != GS_OP_SCATTER)
        return gs__perr(P, &a->val, GS_ERR_UNSUPPORTED, "reducer '%s' (ROOT parameter(1)) is only valid for scatter",
                        comp->name);
    *kind = comp->red_kind;
    return true;
}

/* A comparator key: compare(parameter(2j), parameter(2j+1)) (either order) with LT or GT: operand j,
   ascending or descending. Returns j, or -1. */
GS__FN int gs__cmp_key(gs__parser *P, gs__pcomp *comp, const gs__pinst *e, bool eq, bool *desc) {
    int l, r;
    int64_t nl = -1, nr = -1;
    gs__pattr *dir;
    if (e->op != GS_OP_COMPARE || e->n_ops != 2) return -1;
    l = gs__quiet_operand(P, comp, e, 0);
    r = gs__quiet_operand(P, comp, e, 1);
    dir = gs__attr(P, e, "direction");
    if (l < 0 || r < 0 || !dir || !gs__quiet_param(&P->insts[l], &nl) || !gs__quiet_param(&P->insts[r], &nr) ||
        nl / 2 != nr / 2 || nl == nr)
        return -1;
    if (eq) return gs__peek_word(dir->val, "EQ") ? (int)(nl / 2) : -1;
    if (!gs__peek_word(dir->val, "LT") && !gs__peek_word(dir->val, "GT")) return -1;
    *desc = gs__peek_word(dir->val, "GT") != (nl % 2 == 1);
    return (int)(nl / 2);
}

/* Is sort's to_apply lexicographic over operands (*lex)? ROOT a key compare (above), or
   select(compare(key j) EQ, <the rest>, <key j compare>): keys[0] most significant. Parameters 2j and
   2j+1 are scalars of operand j's type; other instructions that nothing uses are allowed. Any other
   comparator is built as a computation (gs_sort_custom). */
GS__FN bool gs__lex_comparator(gs__parser *P, const gs__pinst *in, int n, gs_value *const *xs, int *keys, bool *descs,
                               int *nkeys, bool *lex) {
    gs__pattr *a = gs__need_attr(P, in, "to_apply");
    gs__pcomp *comp;
    int ci, i, e, np = 0;
    bool ok = true;
    *nkeys = 0;
    if (!a || (ci = gs__called(P, a)) < 0) return false;
    comp = &P->comps[ci];
    for (i = comp->first_inst; ok && i < comp->first_inst + comp->n_inst; i++) {
        const gs__pinst *p = &P->insts[i];
        int64_t num;
        if (p->op != GS_OP_PARAMETER) continue;
        np++;
        if (!gs__quiet_param(p, &num) || num >= 2 * n || !gs__is_scalar_type(&p->type) || p->type.s.dtype != xs[num / 2]->shape.dtype)
            ok = false;
    }
    if (np != 2 * n) ok = false;   /* gs_sort_custom says what is wrong */
    for (e = comp->root; ok && e >= 0 && *nkeys <= n;) {
        const gs__pinst *x = &P->insts[e];
        int j = gs__cmp_key(P, comp, x, false, &descs[*nkeys]), c, f;
        bool d2;
        if (j >= 0) {
            keys[(*nkeys)++] = j;
            break;
        }
        ok = x->op == GS_OP_SELECT && x->n_ops == 3 && (c = gs__quiet_operand(P, comp, x, 0)) >= 0 &&
             (f = gs__quiet_operand(P, comp, x, 2)) >= 0 && (j = gs__cmp_key(P, comp, &P->insts[c], true, &d2)) >= 0 &&
             gs__cmp_key(P, comp, &P->insts[f], false, &descs[*nkeys]) == j;
        if (ok) keys[(*nkeys)++] = j;
        e = ok ? gs__quiet_operand(P, comp, x, 1) : -1;
    }
    *lex = ok && *nkeys > 0 && *nkeys <= n;
    return true;
}

/* sort(x_0..x_n-1) with a lexicographic comparator: one stable sort per key, least significant first, each
   ordering every operand by that key */
GS__FN gs_value *gs__sort_lex(gs_graph *g, int n, gs_value *const *xs, int64_t d, const int *keys, const bool *descs, int nkeys) {
    gs_value *cur[64], *ord[64], *t;
    int k, i, m;
    if (n > 64) {
        gs__err(g->ctx, GS_ERR_UNSUPPORTED, "sort: more than 64 operands");
        return NULL;
    }
    if (nkeys == 1 && keys[0] == 0) return gs_sort(g, n, xs, d, descs[0]);
    for (i = 0; i < n; i++) cur[i] = xs[i];
    for (k = nkeys - 1; k >= 0; k--) {
        ord[0] = cur[keys[k]];
        for (i = 0, m = 1; i < n; i++)
            if (i != keys[k]) ord[m++] = cur[i];
        t = gs_sort(g, n, ord, d, descs[k]);
        if (n == 1) {
            cur[0] = t;
            continue;
        }
        cur[keys[k]] = gs_get_tuple_element(g, t, 0);
        for (i = 0, m = 1; i < n; i++)
            if (i != keys[k]) cur[i] = gs_get_tuple_element(g, t, m++);
    }
    return n == 1 ? cur[0] : gs_tuple(g, n, cur);
}

GS__FN bool gs__build_comp(gs__parser *P, int ci);
GS__FN bool gs__inline_comp(gs__parser *P, const gs__pattr *a, gs_graph *g, const char *prefix, gs_value **args,
                            int n_args, gs_value **out);

GS__FN bool gs__called_comp(gs__parser *P, const gs__pattr *a, gs_graph **out) {
    int ci;
    bool ok;
    if ((ci = gs__called(P, a)) < 0) return false;
    if (P->comps[ci].state == 1)
        return gs__perr(P, &a->val, GS_ERR_PARSE, "computation '%s' calls itself", P->comps[ci].name);
    if (P->comps[ci].entry)
        return gs__perr(P, &a->val, GS_ERR_PARSE, "the ENTRY computation '%s' cannot be called", P->comps[ci].name);
    if (P->depth >= GS__HLO_MAX_CALL_DEPTH)
        return gs__perr(P, &a->val, GS_ERR_UNSUPPORTED, "while loops nested more than %d deep", GS__HLO_MAX_CALL_DEPTH);
    P->depth++;
    ok = gs__build_comp(P, ci);
    P->depth--;
    *out = P->comps[ci].graph;
    return ok;
}

GS__FN bool gs__called_graph(gs__parser *P, const gs__pinst *in, const char *attr, gs_graph **out) {
    gs__pattr *a = gs__need_attr(P, in, attr);
    return a && gs__called_comp(P, a, out);
}

/* ---- instructions ---- */

/* A builder returned NULL: its message (which names the instruction as written, see gs_ctx.next_name),
   prefixed with the position. */
GS__FN bool gs__builder_failed(gs__parser *P, const gs__cur *at) {
    char msg[GS__ERRMSG_CAP];
    gs_result code = gs_ctx_error(P->ctx);
    /* already positioned (a computation the instruction calls, built on the way, failed) */
    if (code != GS_OK && strncmp(gs_ctx_error_msg(P->ctx), "line ", 5) == 0) return false;
    snprintf(msg, sizeof msg, "%s", code != GS_OK ? gs_ctx_error_msg(P->ctx) : "the builder failed");
    gs_ctx_clear_error(P->ctx);
    return gs__perr(P, at, code == GS_ERR_OUT_OF_MEMORY ? code : GS_ERR_PARSE, "%s", msg);
}

GS__FN void gs__pshape_str(const gs__parser *P, const gs__pshape *t, char *buf, size_t cap) {
    int pos = 0, leaf = 0;
    if (!t->tuple) {
        gs__hlo_shape_str(&t->s, buf, cap);
        return;
    }
    if (cap == 0) return;
    buf[0] = 0;
    gs__hlo_tuple_str(P->elems + t->first, t->n, t->n_tree ? P->trees + t->tfirst : NULL, &pos, &leaf, buf, cap);
}

GS__FN bool gs__pshape_matches(const gs__parser *P, const gs__pshape *t, const gs_value *v) {
    int i;
    if (!t->tuple) return v->shape.dtype != GS_TUPLE && gs_shape_equal(&t->s, &v->shape);
    if (v->shape.dtype != GS_TUPLE || v->n_tuple != t->n || v->n_tree != t->n_tree) return false;
    for (i = 0; i < t->n; i++)
        if (!gs_shape_equal(&P->elems[t->first + i], &v->tuple[i])) return false;
    for (i = 0; i < t->n_tree; i++)
        if (P->trees[t->tfirst + i] != v->tree[i]) return false;
    return true;
}

GS__FN bool gs__shape_mismatch(gs__parser *P, const gs__cur *at, const char *what, const char *name,
                               const gs__pshape *t, const gs_value *v) {
    char want[256], got[256];
    gs__pshape_str(P, t, want, sizeof want);
    gs__hlo_vshape_str(v, got, sizeof got);
    return gs__perr(P, at, GS_ERR_PARSE, "%s '%s' is declared %s but is %s", what, name, want, got);
}

/* a new value equal to x (copy; element by element for a tuple), so the instruction can take its own name */
GS__FN gs_value *gs__identity(gs_graph *g, gs_value *x) {
    gs_value *parts[64];
    int i, n;
    if (!x || x->shape.dtype != GS_TUPLE) return gs_copy(g, x);
    n = x->tree ? x->tree[0] : x->n_tuple;   /* the top-level elements (a nested tuple's are not its leaves) */
    if (n > 64) {
        gs__err(g->ctx, GS_ERR_UNSUPPORTED, "a tuple of %d elements passed through unchanged (at most 64)", n);
        return NULL;
    }
    for (i = 0; i < n; i++) parts[i] = gs_get_tuple_element(g, x, i);
    return gs_tuple(g, n, parts);
}

/* true if attribute name of in is the string or word w */
GS__FN bool gs__attr_is(gs__parser *P, const gs__pinst *in, const char *name, const char *w) {
    gs__pattr *a = gs__attr(P, in, name);
    size_t n = strlen(w);
    const char *p;
    ptrdiff_t len;
    if (!a) return false;
    p = a->val.p;
    len = a->val.end - a->val.p;
    if (len >= 2 && p[0] == '"') {
        p++;
        len -= 2;
    }
    return (size_t)len == n && memcmp(p, w, n) == 0;
}

/* ---- a few values of a JSON backend_config (escaped inside a string or written bare) ---- */

/* the text after "key": in s (quotes escaped or not), or NULL */
GS__FN const char *gs__json_find(const char *s, const char *end, const char *key) {
    size_t n = strlen(key);
    const char *p;
    for (p = s; p + n < end; p++) {
        const char *q;
        if (memcmp(p, key, n) != 0 || p == s || (p[-1] != '"')) continue;
        q = p + n;
        if (q < end && *q == '\\') q++;
        if (q < end && *q == '"') q++;
        else continue;
        if (q < end && *q == ':') return q + 1;
    }
    return NULL;
}

/* skips quotes, escapes and spaces */
GS__FN const char *gs__json_skip(const char *p, const char *end) {
    while (p < end && (*p == '"' || *p == '\\' || *p == ' ')) p++;
    return p;
}

/* a number (possibly quoted); false if absent or not a number */
GS__FN bool gs__json_num(const char *s, const char *end, const char *key, double *out) {
    const char *p = gs__json_find(s, end, key);
    char buf[64];
    size_t k = 0;
    char *e;
    if (!p) return false;
    p = gs__json_skip(p, end);
    while (p < end && k + 1 < sizeof buf && (strchr("+-.eE", *p) || gs__hlo_digit((unsigned char)*p))) buf[k++] = *p++;
    buf[k] = 0;
    *out = strtod(buf, &e);
    return k > 0 && *e == 0;
}

/* an array of integers (each possibly quoted): "key":["1","2"]; false if absent or malformed */
GS__FN bool gs__json_ints(const char *s, const char *end, const char *key, int64_t *out, int cap, int *n) {
    const char *p = gs__json_find(s, end, key);
    *n = 0;
    if (!p) return false;
    p = gs__json_skip(p, end);
    if (p >= end || *p != '[') return false;
    p++;
    for (;;) {
        int64_t v = 0;
        bool neg = false, any = false;
        p = gs__json_skip(p, end);
        if (p < end && *p == ']') return true;
        if (p < end && *p == '-') {
            neg = true;
            p++;
        }
        while (p < end && gs__hlo_digit((unsigned char)*p) && v < 1000000) {
            v = v * 10 + (*p++ - '0');
            any = true;
        }
        if (!any || *n == cap) return false;
        out[(*n)++] = neg ? -v : v;
        p = gs__json_skip(p, end);
        if (p < end && *p == ',') p++;
        else if (!(p < end && *p == ']')) return false;
    }
}

/* a string value: "key":"VALUE" (VALUE without quotes) */
GS__FN bool gs__json_word(const char *s, const char *end, const char *key, char *buf, size_t cap) {
    const char *p = gs__json_find(s, end, key);
    size_t k = 0;
    if (!p) return false;
    p = gs__json_skip(p, end);
    while (p < end && k + 1 < cap && *p != '"' && *p != '\\' && *p != ',' && *p != '}') buf[k++] = *p++;
    buf[k] = 0;
    return k > 0;
}

/* What one instruction's builder sees: its operands (xs, n; x = xs[0]) and declared shape (ds). The
   family builders below set v, or return false with an error reported. */
typedef struct gs__bi {
    gs__parser *P;
    gs__pcomp *comp;
    gs__pinst *in;
    gs_graph *g;
    gs_value **xs, *x, *v;
    int n;
    const gs_shape *ds;
    const char *name;   /* the value's name (see gs__inst_name) */
    bool collapsed;     /* v stands for the instruction's element 1, not its declared tuple (argmax's standard form) */
} gs__bi;

/* Every value of type `from` is exactly a value of type `to` (a widening convert). */
GS__FN bool gs__hlo_widens(gs_dtype from, gs_dtype to) {
    const gs__dtinfo *a = gs__dt(from), *b = gs__dt(to);
    if (from == to) return true;
    if (gs__is_float(from) && gs__is_float(to))
        return a->ebits <= b->ebits && a->mbits <= b->mbits && a->fkind != GS__FK_E8M0 && b->fkind != GS__FK_E8M0;
    if (gs__is_int(from) && gs__is_float(to)) return a->bits <= b->mbits + 1;
    if (gs__is_int(from) && gs__is_int(to))
        return gs__is_signed(from) == gs__is_signed(to) ? a->bits <= b->bits : !gs__is_signed(from) && a->bits < b->bits;
    return false;
}

/* dot (ragged dot when rd is given) of l and r */
GS__FN gs_value *gs__dot_of(gs__bi *b, gs_value *l, gs_value *r, const gs_dot_dims *dd, const gs_ragged_dot_dims *rd) {
    return rd ? gs_ragged_dot(b->g, l, r, b->xs[2], rd) : gs_dot(b->g, l, r, dd);
}

/* dot or ragged dot whose declared element type differs from its operands' (XLA's preferred element type, e.g.
   f8 x f8 -> bf16): operands that widen exactly to it are converted first, so the products and sums are those of
   the declared type; otherwise the dot runs in the operands' type and its result is converted. */
GS__FN gs_value *gs__dot_as(gs__parser *P, gs__bi *b, const gs_dot_dims *dd, const gs_ragged_dot_dims *rd) {
    gs_value *l = b->xs[0], *r = b->xs[1];
    gs_dtype rt = b->in->shape_omitted || b->in->type.tuple ? l->shape.dtype : b->ds->dtype;
    const char *name = P->ctx->next_name;
    if ((l->shape.dtype == rt && r->shape.dtype == rt) || !gs__is_numeric(rt)) return gs__dot_of(b, l, r, dd, rd);
    P->ctx->next_name = NULL;
    if (gs__hlo_widens(l->shape.dtype, rt) && gs__hlo_widens(r->shape.dtype, rt)) {
        if (l->shape.dtype != rt) l = gs_convert(b->g, l, rt);
        if (r->shape.dtype != rt) r = gs_convert(b->g, r, rt);
        P->ctx->next_name = name;
        return gs__dot_of(b, l, r, dd, rd);
    }
    if (l->shape.dtype != r->shape.dtype) {
        gs__err(P->ctx, GS_ERR_UNSUPPORTED, "%s %s: %s x %s -> %s (the operands do not widen exactly to the result "
                "type) is not supported", rd ? "ragged-dot" : "dot", b->in->name, gs_dtype_name(l->shape.dtype),
                gs_dtype_name(r->shape.dtype), gs_dtype_name(rt));
        return NULL;
    }
    l = gs__dot_of(b, l, r, dd, rd);
    P->ctx->next_name = name;
    return gs_convert(b->g, l, rt);
}

/* ragged-dot(lhs, rhs, group_sizes), lhs_batch_dims=, rhs_batch_dims=, lhs_contracting_dims=,
   rhs_contracting_dims=, lhs_ragged_dims=, rhs_group_dims= (each optional, as XLA's parser has them) */
GS__FN bool gs__bi_ragged_dot(gs__bi *b) {
    gs__parser *P = b->P;
    gs__pinst *in = b->in;
    gs_ragged_dot_dims rd;
    gs_dot_dims *dd = &rd.dot;
    int nb2, nc2;
    char bl[96], br[96];
    memset(&rd, 0, sizeof rd);
    if (!gs__opt_ints(P, in, "lhs_batch_dims", dd->lhs_batch, &dd->n_batch) ||
        !gs__opt_ints(P, in, "rhs_batch_dims", dd->rhs_batch, &nb2) ||
        !gs__opt_ints(P, in, "lhs_contracting_dims", dd->lhs_contract, &dd->n_contract) ||
        !gs__opt_ints(P, in, "rhs_contracting_dims", dd->rhs_contract, &nc2) ||
        !gs__opt_ints(P, in, "lhs_ragged_dims", rd.lhs_ragged, &rd.n_lhs_ragged) ||
        !gs__opt_ints(P, in, "rhs_group_dims", rd.rhs_group, &rd.n_rhs_group))
        return false;
    if (dd->n_contract != nc2 || dd->n_batch != nb2)
        return gs__perr(P, &in->op_at, GS_ERR_SHAPE, "ragged-dot %s: Cannot infer shape for dot operation: %s <dot> %s. %s",
                        in->name, gs__shape_str(&b->xs[0]->shape, bl, sizeof bl), gs__shape_str(&b->xs[1]->shape, br, sizeof br),
                        dd->n_contract != nc2 ? "Must specify the same number of contracting dimensions for lhs and rhs."
                                              : "Must the same number of batch dimensions for lhs and rhs.");
    b->v = gs__dot_as(P, b, NULL, &rd);
    return true;
}

GS__FN bool gs__bi_unsupported(gs__bi *b) {
    b->P->ctx->next_name = NULL;
    return gs__perr(b->P, &b->in->op_at, GS_ERR_UNSUPPORTED, "opcode '%s' is not supported", b->in->opcode);
}

/* select-and-scatter(operand, source, init), window=, select=COMP, scatter=REDUCER */
GS__FN bool gs__bi_select_scatter(gs__bi *b) {
    gs__parser *P = b->P;
    gs__pinst *in = b->in;
    gs_value *x = b->x;
    gs__pattr *a;
    gs_window_dim w[GS_MAX_RANK];
    gs_graph *sel = NULL;
    gs_value *ys[3];
    gs_reduce_kind kind = GS_REDUCE_INVALID;
    int k;
    if (!(a = gs__need_attr(P, in, "window")) || !gs__attr_window(P, a, w, x->shape.rank, NULL)) return false;
    if (!gs__reducer_attr(P, in, "scatter", x->shape.dtype, &kind) || !gs__called_graph(P, in, "select", &sel)) return false;
    for (k = 0; k < 3; k++) ys[k] = P->insts[P->ops[in->first_op + k].inst].value;   /* P->vals may have grown */
    P->ctx->next_name = b->name;
    b->v = gs_select_and_scatter(b->g, ys[0], ys[1], ys[2], w, sel, kind);
    return true;
}

/* fft(x), fft_type=FFT|IFFT|RFFT|IRFFT, fft_length={..} */
GS__FN bool gs__bi_fft(gs__bi *b) {
    gs__parser *P = b->P;
    gs__pinst *in = b->in;
    gs_value *x = b->x;
    gs__pattr *a;
    static const char *const tnames[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
    int64_t len[GS_MAX_RANK];
    int nl = 0, ti, t = 0;
    if (!(a = gs__need_attr(P, in, "fft_type"))) return false;
    for (ti = 0; ti < 4; ti++)
        if (gs__peek_word(a->val, tnames[ti]) && a->val.end - a->val.p == (ptrdiff_t)strlen(tnames[ti])) t = ti + 1;
    if (!t) return gs__pexpect(P, &a->val, "FFT, IFFT, RFFT or IRFFT");
    if (!gs__need_attr(P, in, "fft_length") || !gs__opt_ints(P, in, "fft_length", len, &nl)) return false;
    if (nl < 1 || nl > 3)
        return gs__perr(P, &gs__attr(P, in, "fft_length")->val, GS_ERR_PARSE, "fft_length needs 1 to 3 entries, found %d", nl);
    b->v = gs_fft(b->g, x, (gs_fft_type)t, nl, len);
    return true;
}

/* parameter, constant, iota, partition-id and the ops that move or reshape data */
GS__FN bool gs__bi_layout(gs__bi *b) {
    gs__parser *P = b->P;
    gs__pinst *in = b->in;
    gs_graph *g = b->g;
    gs_value **xs = b->xs, *x = b->x, *v = NULL;
    const gs_shape *ds = b->ds;
    gs__pattr *a;
    int n = b->n, cnt;
    int64_t dims[GS_MAX_RANK], d = 0;
    gs_op op = in->op;
    switch (op) {
    case GS_OP_PARAMETER: {
        gs__cur c = in->args;
        int64_t num;
        while (!gs__cur_eof(&c) && gs__hlo_space(gs__cur_peek(&c))) gs__cur_adv(&c);
        if (!gs__hlo_digit(gs__cur_peek(&c)))   /* digits only: "-0" is not a parameter number */
            return gs__pexpect(P, &c, "a parameter number >= 0");
        if (!gs__read_int(P, &c, &num, "a parameter number") || !gs__val_end(P, &c)) return false;
        if (b->comp->prefix) {   /* inlined: the caller's operand */
            if (num >= b->comp->n_args)
                return gs__perr(P, &in->args, GS_ERR_PARSE, "parameter(%lld) of '%s', which is called with %d operand%s",
                                (long long)num, b->comp->name, b->comp->n_args, b->comp->n_args == 1 ? "" : "s");
            v = b->comp->args[num];
            break;
        }
        if (in->type.tuple)
            v = gs_parameter_tuple_nested(g, num, in->type.n, P->elems + in->type.first, in->type.n_tree,
                                          in->type.n_tree ? P->trees + in->type.tfirst : NULL, in->name);
        else v = gs_parameter(g, num, *ds, in->name);
        break;
    }
    case GS_OP_CONSTANT:
        if (!gs__build_constant(P, g, in, &v)) return false;
        break;
    case GS_OP_IOTA:
        if (!(a = gs__need_attr(P, in, "iota_dimension")) || !gs__attr_int(P, a, &d)) return false;
        v = gs_iota(g, *ds, d);
        break;
    case GS_OP_PARTITION_ID: v = gs_partition_id(g); break;
    case GS_OP_REPLICA_ID: v = gs_replica_id(g); break;
    case GS_OP_SINE: case GS_OP_COSINE: case GS_OP_TAN: case GS_OP_EXPM1: case GS_OP_LOG1P: case GS_OP_CBRT:
    case GS_OP_ERF: case GS_OP_IS_FINITE: case GS_OP_POPCNT: case GS_OP_CLZ: case GS_OP_REAL: case GS_OP_IMAG:
        v = gs_unary(g, op, x);
        break;
    case GS_OP_ATAN2: case GS_OP_SHIFT_LEFT: case GS_OP_SHIFT_RIGHT_LOGICAL: case GS_OP_SHIFT_RIGHT_ARITHMETIC:
    case GS_OP_COMPLEX:
        v = gs_binary(g, op, xs[0], xs[1]);
        break;
    case GS_OP_REDUCE_PRECISION: {
        int64_t e, m;
        gs__pattr *ea = gs__need_attr(P, in, "exponent_bits"), *ma = ea ? gs__need_attr(P, in, "mantissa_bits") : NULL;
        if (!ma || !gs__attr_int(P, ea, &e) || !gs__attr_int(P, ma, &m)) return false;
        if (e < 1 || e > 64 || m < 0 || m > 64)
            return gs__perr(P, &ea->val, GS_ERR_PARSE, "exponent_bits=%lld, mantissa_bits=%lld: out of range", (long long)e,
                            (long long)m);
        v = gs_reduce_precision(g, x, (int)e, (int)m);
        break;
    }
    case GS_OP_BITCAST_CONVERT: v = gs_bitcast_convert(g, x, ds->dtype); break;
    case GS_OP_SELECT_AND_SCATTER: return gs__bi_select_scatter(b);
    case GS_OP_FFT: return gs__bi_fft(b);
    case GS_OP_CHOLESKY: case GS_OP_TRIANGULAR_SOLVE: {
        static const char *const names[] = {"lower", "left_side", "unit_diagonal"};
        static const char *const tnames[] = {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"};
        bool f[3] = {false, false, false};
        int ai, tr = 0;
        for (ai = 0; ai < (op == GS_OP_CHOLESKY ? 1 : 3); ai++)
            if ((a = gs__attr(P, in, names[ai])) != NULL && !gs__attr_bool(P, a, &f[ai])) return false;
        if (op == GS_OP_CHOLESKY) {
            v = gs_cholesky(g, x, f[0]);
            break;
        }
        if ((a = gs__attr(P, in, "transpose_a")) != NULL) {
            for (tr = -1, ai = 0; ai < 3; ai++)
                if (gs__peek_word(a->val, tnames[ai]) && a->val.end - a->val.p == (ptrdiff_t)strlen(tnames[ai])) tr = ai;
            if (tr < 0) return gs__pexpect(P, &a->val, "NO_TRANSPOSE, TRANSPOSE or ADJOINT");
        }
        v = gs_triangular_solve(g, xs[0], xs[1], f[1], f[0], f[2], (gs_transpose_a)tr);
        break;
    }
    case GS_OP_BATCH_NORM_TRAINING: case GS_OP_BATCH_NORM_INFERENCE: case GS_OP_BATCH_NORM_GRAD: {
        gs__pattr *ea = gs__need_attr(P, in, "epsilon"), *fa = ea ? gs__need_attr(P, in, "feature_index") : NULL;
        char eb[64];
        char *endp;
        double eps;
        size_t el;
        if (!fa || !gs__attr_int(P, fa, &d)) return false;
        el = (size_t)(ea->val.end - ea->val.p);
        if (el == 0 || el >= sizeof eb) return gs__pexpect(P, &ea->val, "a number");
        memcpy(eb, ea->val.p, el);
        eb[el] = 0;
        eps = strtod(eb, &endp);
        if (*endp != 0) return gs__pexpect(P, &ea->val, "a number");
        if (op == GS_OP_BATCH_NORM_TRAINING) v = gs_batch_norm_training(g, xs[0], xs[1], xs[2], (float)eps, d);
        else if (op == GS_OP_BATCH_NORM_INFERENCE) v = gs_batch_norm_inference(g, xs[0], xs[1], xs[2], xs[3], xs[4], (float)eps, d);
        else v = gs_batch_norm_grad(g, xs[0], xs[1], xs[2], xs[3], xs[4], (float)eps, d);
        break;
    }
    case GS_OP_RNG_BIT_GENERATOR: {
        static const char *const algs[] = {"rng_default", "rng_three_fry", "rng_philox"};
        int alg = -1, ai;
        if (!(a = gs__need_attr(P, in, "algorithm"))) return false;
        for (ai = 0; ai < 3; ai++)
            if (gs__peek_word(a->val, algs[ai]) && a->val.end - a->val.p == (ptrdiff_t)strlen(algs[ai])) alg = ai;
        if (alg < 0) return gs__pexpect(P, &a->val, "an algorithm (rng_default, rng_three_fry or rng_philox)");
        if (in->type.tuple && (in->type.n != 2 || in->type.n_tree))
            return gs__perr(P, &in->type.at, GS_ERR_PARSE, "rng-bit-generator '%s' needs a (state, bits) tuple shape or the bits' shape", in->name);
        if (in->type.tuple) v = gs_rng_bit_generator(g, x, P->elems[in->type.first + 1], (gs_rng_algorithm)alg);
        else v = gs__rng_bits_only(g, x, in->type.s, (gs_rng_algorithm)alg);
        break;
    }
    case GS_OP_BROADCAST:
    case GS_OP_TRANSPOSE:
        if (!(a = gs__need_attr(P, in, "dimensions")) || !gs__attr_ints(P, a, dims, GS_MAX_RANK, &cnt)) return false;
        if (cnt != x->shape.rank)
            return gs__perr(P, &a->val, GS_ERR_PARSE, "expected %d dimensions (the operand's rank), found %d",
                            x->shape.rank, cnt);
        v = op == GS_OP_BROADCAST ? gs_broadcast(g, x, *ds, dims) : gs_transpose(g, x, dims);
        break;
    case GS_OP_RESHAPE: v = gs_reshape(g, x, ds->rank, ds->dims); break;
    case GS_OP_SLICE: {
        int64_t lo[GS_MAX_RANK], hi[GS_MAX_RANK], st[GS_MAX_RANK];
        gs__cur c;
        bool ok = true;
        if (!(a = gs__need_attr(P, in, "slice"))) return false;
        c = a->val;
        cnt = 0;
        if (!gs__expect_ch(P, &c, '{')) return false;
        if (!gs__accept(P, &c, '}', &ok)) {
            if (!ok) return false;
            for (;;) {
                gs__cur at;
                if (!gs__skip_ws(P, &c)) return false;
                at = c;
                if (cnt == x->shape.rank)
                    return gs__perr(P, &at, GS_ERR_PARSE, "more slice ranges than the operand's rank (%d)", x->shape.rank);
                st[cnt] = 1;
                if (!gs__expect_ch(P, &c, '[') || !gs__read_int(P, &c, &lo[cnt], "an integer") ||
                    !gs__expect_ch(P, &c, ':') || !gs__read_int(P, &c, &hi[cnt], "an integer"))
                    return false;
                if (gs__accept(P, &c, ':', &ok) && !gs__read_int(P, &c, &st[cnt], "an integer")) return false;
                if (!ok || !gs__expect_ch(P, &c, ']')) return false;
                cnt++;
                if (gs__accept(P, &c, '}', &ok)) break;
                if (!ok || !gs__expect_ch(P, &c, ',')) return false;
            }
        }
        if (!gs__val_end(P, &c)) return false;
        if (cnt != x->shape.rank)
            return gs__perr(P, &a->val, GS_ERR_PARSE, "expected %d slice ranges (the operand's rank), found %d",
                            x->shape.rank, cnt);
        v = gs_slice(g, x, lo, hi, st);
        break;
    }
    case GS_OP_DYNAMIC_SLICE:
        if (!(a = gs__need_attr(P, in, "dynamic_slice_sizes")) || !gs__attr_ints(P, a, dims, GS_MAX_RANK, &cnt))
            return false;
        if (n - 1 != x->shape.rank || cnt != x->shape.rank)
            return gs__perr(P, &in->op_at, GS_ERR_PARSE,
                            "dynamic-slice of a rank-%d operand needs %d start indices and %d sizes, found %d and %d",
                            x->shape.rank, x->shape.rank, x->shape.rank, n - 1, cnt);
        v = gs_dynamic_slice(g, x, xs + 1, dims);
        break;
    case GS_OP_DYNAMIC_UPDATE_SLICE:
        if (n - 2 != x->shape.rank)
            return gs__perr(P, &in->op_at, GS_ERR_PARSE,
                            "dynamic-update-slice of a rank-%d operand needs %d start indices, found %d",
                            x->shape.rank, x->shape.rank, n - 2);
        v = gs_dynamic_update_slice(g, x, xs[1], xs + 2);
        break;
    case GS_OP_PAD: {
        int64_t lo[GS_MAX_RANK], hi[GS_MAX_RANK], inner[GS_MAX_RANK], vals[GS_MAX_RANK][3];
        gs__cur c;
        int r = x->shape.rank, i;
        if (!(a = gs__need_attr(P, in, "padding"))) return false;
        c = a->val;
        if (r == 0) {
            if (!gs__expect_ch(P, &c, '{') || !gs__expect_ch(P, &c, '}') || !gs__val_end(P, &c)) return false;
        } else if (!gs__read_xlist(P, &c, r, 2, 3, vals, "padding") || !gs__val_end(P, &c)) {
            return false;
        }
        for (i = 0; i < r; i++) {
            lo[i] = vals[i][0];
            hi[i] = vals[i][1];
            inner[i] = vals[i][2];
        }
        v = gs_pad(g, x, xs[1], lo, hi, inner);
        break;
    }
    case GS_OP_CONCATENATE:
        if (!gs__attr_one_dim(P, in, "dimensions", &d)) return false;
        v = gs_concatenate(g, n, xs, d);
        break;
    case GS_OP_REVERSE:
        if (!(a = gs__need_attr(P, in, "dimensions")) || !gs__attr_ints(P, a, dims, GS_MAX_RANK, &cnt)) return false;
        v = gs_reverse(g, x, cnt, dims);
        break;
    case GS_OP_CONVERT: v = gs_convert(g, x, ds->dtype); break;
    case GS_OP_COPY:
        if (x->shape.dtype == GS_TUPLE) P->ctx->next_name = NULL;   /* several values; the last takes the name */
        v = gs__identity(g, x);
        break;
    default: return gs__bi_unsupported(b);
    }
    b->v = v;
    return true;
}

/* elementwise ops, reductions, dot, convolution, reduce-window */
GS__FN bool gs__bi_math(gs__bi *b) {
    gs__parser *P = b->P;
    gs__pinst *in = b->in;
    gs_graph *g = b->g;
    gs_value **xs = b->xs, *x = b->x, *v = NULL;
    gs__pattr *a;
    int cnt;
    int64_t dims[GS_MAX_RANK], d = 0;
    gs_op op = in->op;
    gs_reduce_kind kind = GS_REDUCE_INVALID;
    switch (op) {
    case GS_OP_NEGATE: case GS_OP_ABS: case GS_OP_EXP: case GS_OP_LOG: case GS_OP_TANH: case GS_OP_LOGISTIC:
    case GS_OP_SQRT: case GS_OP_RSQRT: case GS_OP_FLOOR: case GS_OP_CEIL: case GS_OP_SIGN: case GS_OP_NOT:
        v = gs_unary(g, op, x);
        break;
    case GS_OP_ADD: case GS_OP_SUBTRACT: case GS_OP_MULTIPLY: case GS_OP_DIVIDE: case GS_OP_REMAINDER:
    case GS_OP_MAXIMUM: case GS_OP_MINIMUM: case GS_OP_POWER: case GS_OP_AND: case GS_OP_OR: case GS_OP_XOR:
        v = gs_binary(g, op, xs[0], xs[1]);
        break;
    case GS_OP_COMPARE: {
        int c2;
        gs_cmp cmp = GS_CMP_INVALID;
        gs_cmp_type ctype = GS_CMP_TYPE_DEFAULT;
        if (!(a = gs__need_attr(P, in, "direction"))) return false;
        for (c2 = GS_CMP_EQ; c2 < GS_CMP_COUNT; c2++)
            if (gs__peek_word(a->val, gs__hlo_cmp_names[c2]) && a->val.end - a->val.p == 2) cmp = (gs_cmp)c2;
        if (cmp == GS_CMP_INVALID) return gs__pexpect(P, &a->val, "a direction (EQ, NE, LT, LE, GT or GE)");
        if ((a = gs__attr(P, in, "type")) != NULL) {
            for (c2 = GS_CMP_TYPE_FLOAT; c2 < GS_CMP_TYPE_COUNT; c2++)
                if (gs__peek_word(a->val, gs__hlo_cmp_type_names[c2]) &&
                    a->val.end - a->val.p == (ptrdiff_t)strlen(gs__hlo_cmp_type_names[c2]))
                    ctype = (gs_cmp_type)c2;
            if (ctype == GS_CMP_TYPE_DEFAULT)
                return gs__pexpect(P, &a->val, "a comparison type (FLOAT, TOTALORDER, SIGNED or UNSIGNED)");
        }
        v = gs_compare_typed(g, xs[0], xs[1], cmp, ctype);
        break;
    }
    case GS_OP_SELECT: v = gs_select(g, xs[0], xs[1], xs[2]); break;
    case GS_OP_CLAMP: v = gs_clamp(g, xs[0], xs[1], xs[2]); break;
    case GS_OP_REDUCE:
        if (!(a = gs__need_attr(P, in, "dimensions")) || !gs__attr_ints(P, a, dims, GS_MAX_RANK, &cnt)) return false;
        if (!gs__reducer(P, in, x->shape.dtype, &kind)) return false;
        v = gs__set_reducer(P, gs_reduce(g, x, xs[1], kind, cnt, dims));
        break;
    case GS_OP_ARGMAX:
    case GS_OP_ARGMIN:
        if (!gs__attr_one_dim(P, in, "dimensions", &d)) return false;
        v = op == GS_OP_ARGMAX ? gs_argmax(g, x, d) : gs_argmin(g, x, d);
        break;
    case GS_OP_DOT: {
        gs_dot_dims dd;
        int nb2, nc2;
        memset(&dd, 0, sizeof dd);
        if (!gs__opt_ints(P, in, "lhs_batch_dims", dd.lhs_batch, &dd.n_batch) ||
            !gs__opt_ints(P, in, "rhs_batch_dims", dd.rhs_batch, &nb2) ||
            !gs__opt_ints(P, in, "lhs_contracting_dims", dd.lhs_contract, &dd.n_contract) ||
            !gs__opt_ints(P, in, "rhs_contracting_dims", dd.rhs_contract, &nc2))
            return false;
        if (dd.n_batch != nb2 || dd.n_contract != nc2)
            return gs__perr(P, &in->op_at, GS_ERR_PARSE,
                            "dot needs as many lhs as rhs batch dims (%d, %d) and contracting dims (%d, %d)",
                            dd.n_batch, nb2, dd.n_contract, nc2);
        v = gs__dot_as(P, b, &dd, NULL);
        break;
    }
    case GS_OP_CONVOLUTION: {
        gs_conv_config cfg;
        char labels[128];
        bool rev[GS_MAX_RANK];
        int i;
        memset(&cfg, 0, sizeof cfg);
        if (!(a = gs__need_attr(P, in, "dim_labels")) || !gs__attr_word(P, a, labels, sizeof labels)) return false;
        if (gs_conv_dims_from_labels(labels, &cfg.dims) != GS_OK)
            return gs__perr(P, &a->val, GS_ERR_PARSE, "expected dim_labels like b01f_01io->b01f, found '%s'", labels);
        if ((a = gs__attr(P, in, "window")) != NULL) {
            if (!gs__attr_window(P, a, cfg.window, cfg.dims.n_spatial, rev)) return false;
        } else if (cfg.dims.n_spatial > 0) {
            return gs__need_attr(P, in, "window") != NULL;
        }
        cfg.feature_group_count = cfg.batch_group_count = 1;
        if ((a = gs__attr(P, in, "feature_group_count")) != NULL && !gs__attr_int(P, a, &cfg.feature_group_count))
            return false;
        if ((a = gs__attr(P, in, "batch_group_count")) != NULL && !gs__attr_int(P, a, &cfg.batch_group_count))
            return false;
        for (i = 0; i < cfg.dims.n_spatial; i++) cfg.reversal[i] = rev[i];
        v = gs_convolution(g, xs[0], xs[1], &cfg);
        break;
    }
    case GS_OP_REDUCE_WINDOW: {
        gs_window_dim w[GS_MAX_RANK];
        if (!(a = gs__need_attr(P, in, "window")) || !gs__attr_window(P, a, w, x->shape.rank, NULL)) return false;
        if (!gs__reducer(P, in, x->shape.dtype, &kind)) return false;
        v = gs__set_reducer(P, gs_reduce_window(g, x, xs[1], kind, w));
        break;
    }
    default: return gs__bi_unsupported(b);
    }
    b->v = v;
    return true;
}

/* gather, scatter, sort, topk, the cumulative ops, rng */
GS__FN bool gs__bi_index(gs__bi *b) {
    gs__parser *P = b->P;
    gs__pinst *in = b->in;
    gs_graph *g = b->g;
    gs_value **xs = b->xs, *x = b->x, *v = NULL;
    const gs_shape *ds = b->ds;
    gs__pattr *a;
    int n = b->n, cnt;
    int64_t d = 0;
    gs_op op = in->op;
    gs_reduce_kind kind = GS_REDUCE_INVALID;
    switch (op) {
    case GS_OP_GATHER: {
        gs_gather_dims gd;
        int nb2;
        memset(&gd, 0, sizeof gd);
        if (!gs__opt_ints(P, in, "offset_dims", gd.offset_dims, &gd.n_offset_dims) ||
            !gs__opt_ints(P, in, "collapsed_slice_dims", gd.collapsed_slice_dims, &gd.n_collapsed_slice_dims) ||
            !gs__opt_ints(P, in, "start_index_map", gd.start_index_map, &gd.n_start_index_map) ||
            !gs__opt_ints(P, in, "operand_batching_dims", gd.operand_batching_dims, &gd.n_operand_batching_dims) ||
            !gs__opt_ints(P, in, "start_indices_batching_dims", gd.start_indices_batching_dims, &nb2))
            return false;
        if (nb2 != gd.n_operand_batching_dims)
            return gs__perr(P, &in->op_at, GS_ERR_PARSE,
                            "gather needs as many operand_batching_dims as start_indices_batching_dims (%d, %d)",
                            gd.n_operand_batching_dims, nb2);
        if (!(a = gs__need_attr(P, in, "index_vector_dim")) || !gs__attr_int(P, a, &gd.index_vector_dim)) return false;
        if (!(a = gs__need_attr(P, in, "slice_sizes")) || !gs__attr_ints(P, a, gd.slice_sizes, GS_MAX_RANK, &cnt))
            return false;
        if (cnt != x->shape.rank)
            return gs__perr(P, &a->val, GS_ERR_PARSE, "expected %d slice sizes (the operand's rank), found %d",
                            x->shape.rank, cnt);
        v = gs_gather(g, xs[0], xs[1], &gd);
        break;
    }
    case GS_OP_SCATTER: {
        gs_scatter_dims sd;
        int nb2;
        memset(&sd, 0, sizeof sd);
        if (!gs__opt_ints(P, in, "update_window_dims", sd.update_window_dims, &sd.n_update_window_dims) ||
            !gs__opt_ints(P, in, "inserted_window_dims", sd.inserted_window_dims, &sd.n_inserted_window_dims) ||
            !gs__opt_ints(P, in, "scatter_dims_to_operand_dims", sd.scatter_dims_to_operand_dims,
                          &sd.n_scatter_dims_to_operand_dims) ||
            !gs__opt_ints(P, in, "input_batching_dims", sd.input_batching_dims, &sd.n_input_batching_dims) ||
            !gs__opt_ints(P, in, "scatter_indices_batching_dims", sd.scatter_indices_batching_dims, &nb2))
            return false;
        if (nb2 != sd.n_input_batching_dims)
            return gs__perr(P, &in->op_at, GS_ERR_PARSE,
                            "scatter needs as many input_batching_dims as scatter_indices_batching_dims (%d, %d)",
                            sd.n_input_batching_dims, nb2);
        if (!(a = gs__need_attr(P, in, "index_vector_dim")) || !gs__attr_int(P, a, &sd.index_vector_dim)) return false;
        if (!gs__reducer(P, in, x->shape.dtype, &kind)) return false;
        v = gs__set_reducer(P, gs_scatter(g, xs[0], xs[1], xs[2], &sd, kind));
        break;
    }
    case GS_OP_SORT: {
        int keys[64], nkeys, k;
        bool descs[65], lex;
        gs_graph *cmp = NULL;
        gs_value *ys[64];
        if (n > 64) return gs__perr(P, &in->op_at, GS_ERR_UNSUPPORTED, "sort of more than 64 operands");
        if (!gs__attr_one_dim(P, in, "dimensions", &d) || !gs__lex_comparator(P, in, n, xs, keys, descs, &nkeys, &lex))
            return false;
        if (lex) {
            if (!(nkeys == 1 && keys[0] == 0)) P->ctx->next_name = NULL;   /* several values; the last takes the name */
            v = gs__sort_lex(g, n, xs, d, keys, descs, nkeys);
            break;
        }
        if (!gs__called_graph(P, in, "to_apply", &cmp)) return false;
        for (k = 0; k < n; k++) ys[k] = P->insts[P->ops[in->first_op + k].inst].value;   /* P->vals may have grown */
        P->ctx->next_name = b->name;
        v = gs_sort_custom(g, n, ys, d, cmp);
        break;
    }
    case GS_OP_TOPK: {
        bool largest = true;
        if (!(a = gs__need_attr(P, in, "k")) || !gs__attr_int(P, a, &d)) return false;
        if ((a = gs__attr(P, in, "largest")) != NULL && !gs__attr_bool(P, a, &largest)) return false;
        v = gs_topk(g, x, d, largest);
        break;
    }
    case GS_OP_CUMSUM:
    case GS_OP_CUMPROD:
    case GS_OP_CUMMAX:
    case GS_OP_CUMMIN: {
        bool rev = false;
        if (!gs__attr_one_dim(P, in, "dimensions", &d)) return false;
        if ((a = gs__attr(P, in, "reverse")) != NULL && !gs__attr_bool(P, a, &rev)) return false;
        kind = op == GS_OP_CUMSUM ? GS_REDUCE_SUM : op == GS_OP_CUMPROD ? GS_REDUCE_PROD
             : op == GS_OP_CUMMAX ? GS_REDUCE_MAX : GS_REDUCE_MIN;
        v = gs_cumulative(g, x, kind, d, rev);
        break;
    }
    case GS_OP_RNG: {
        uint64_t seed = 0;
        gs__pattr *fa = gs__attr(P, in, "full_shape");
        if (!(a = gs__need_attr(P, in, "distribution"))) return false;
        if (!gs__peek_word(a->val, "rng_uniform") || a->val.end - a->val.p != 11) {
            if (gs__peek_word(a->val, "rng_normal"))
                return gs__perr(P, &a->val, GS_ERR_UNSUPPORTED, "rng distribution rng_normal is not supported");
            return gs__pexpect(P, &a->val, "rng_uniform");
        }
        if ((a = gs__attr(P, in, "seed")) != NULL && !gs__attr_u64(P, a, &seed, "a seed (0 to 2^64-1)")) return false;
        if (fa) {
            /* the shard form: lo, hi, one offset per dim of the full shape */
            gs_shape full;
            gs__cur c = fa->val;
            if (!gs__parse_array_shape(P, &c, &full, NULL) || !gs__val_end(P, &c)) return false;
            if (n != 2 + full.rank)
                return gs__perr(P, &in->op_at, GS_ERR_PARSE, "rng '%s' with full_shape of rank %d takes %d operands (lo, hi and %d offsets), found %d",
                                in->name, full.rank, 2 + full.rank, full.rank, n);
            v = gs_rng_uniform_shard(g, xs[0], xs[1], *ds, full, xs + 2, seed);
        } else {
            if (n != 2)
                return gs__perr(P, &in->op_at, GS_ERR_PARSE, "rng '%s' takes 2 operands (lo, hi) without full_shape=, found %d",
                                in->name, n);
            v = gs_rng_uniform(g, xs[0], xs[1], *ds, seed);
        }
        break;
    }
    default: return gs__bi_unsupported(b);
    }
    b->v = v;
    return true;
}

/* collectives, custom-calls, tuples and while */
/* An op gshard.h reads and prints but cannot run: a custom-call whose target has no public meaning here
   (any target not listed in docs/hlo_text.md), after-all, infeed, outfeed, send, recv and their -done
   forms. It keeps the declared shape and every attribute as written; evaluation refuses it by name, the
   partitioner computes it replicated with a warning, propagation gives it nothing. */
GS__FN bool gs__bl_opaque(gs__bi *b) {
    gs__parser *P = b->P;
    static const char *const calls[] = {"to_apply", "called_computations", "calls"};
    gs_value *v;
    int i;
    char target[256];
    bool cc = strcmp(b->in->opcode, "custom-call") == 0;
    for (i = 0; i < GS__COUNTOF(calls); i++) {
        gs__pattr *a = gs__attr(P, b->in, calls[i]);
        if (a) return gs__perr(P, &a->at, GS_ERR_UNSUPPORTED, "%s '%s' calls a computation (%s=): not supported for an op gshard.h cannot run",
                               b->in->opcode, b->in->name, calls[i]);
    }
    if (cc && !gs__attr_word(P, gs__attr(P, b->in, "custom_call_target"), target, sizeof target)) return false;
    if (b->in->shape_omitted && strcmp(b->in->opcode, "after-all") != 0)
        return gs__perr(P, &b->in->op_at, GS_ERR_PARSE, "%s '%s' needs its shape written (it is not inferred)", b->in->opcode,
                        b->in->name);
    P->ctx->next_name = NULL;
    v = gs__value_new(b->g, GS_OP_OPAQUE, b->n, b->xs);
    if (!v) return false;
    v->opaque = b->in->opcode;
    v->target = cc ? gs__pstr(P, target, strlen(target)) : NULL;
    if (b->in->shape_omitted) {
        memset(&v->opaque_shape, 0, sizeof v->opaque_shape);
        v->opaque_shape.dtype = GS_TOKEN;
    } else if (b->in->type.tuple) {
        memset(&v->opaque_shape, 0, sizeof v->opaque_shape);
        v->opaque_shape.dtype = GS_TUPLE;
        v->opaque_n = b->in->type.n;
        v->opaque_tuple = (const gs_shape *)gs__arena_dup(P->ctx, P->elems + b->in->type.first,
                                                          sizeof(gs_shape) * (size_t)(b->in->type.n ? b->in->type.n : 1));
        if (!v->opaque_tuple) return false;
        if (b->in->type.n_tree) {   /* nested, e.g. infeed's ((data...), token[]) */
            v->opaque_ntree = b->in->type.n_tree;
            v->opaque_tree = (const int *)gs__arena_dup(P->ctx, P->trees + b->in->type.tfirst, sizeof(int) * (size_t)b->in->type.n_tree);
            if (!v->opaque_tree) return false;
        }
    } else {
        v->opaque_shape = b->in->type.s;
    }
    b->v = gs__finish(v);
    return true;
}

/* custom-call targets whose result is their operand (markers for other compilers' passes; each is
   documented in docs/hlo_text.md with its source) */
static const char *const gs__identity_targets[] = {
    "ShardBarrierFrom", "ShardBarrierTo", "MoveToHost", "MoveToDevice", "PinToDevice", "LayoutConstraint",
    "annotate_device_placement", "AwsNeuronTransferWithStaticRing", "xla.sdy.FuncResultSharding",
    "xla.sdy.ShardingConstraint", "xla.sdy.PropagationBarrier"};

/* __cublas$gemm(a, b [, c]): alpha * dot(a, b) [+ beta * c] with backend_config's dot_dimension_numbers
   (XLA's GPU gemm rewriter); epilogues other than DEFAULT are refused by name */
GS__FN bool gs__bi_gemm(gs__bi *b, const gs__pattr *target) {
    gs__parser *P = b->P;
    gs__pattr *bc = gs__need_attr(P, b->in, "backend_config");
    const char *s, *e;
    gs_dot_dims dd;
    double alpha = 1, alpha_im = 0, beta = 0;
    char epi[32];
    int nb2, nc2;
    gs_value *v;
    if (!bc) return false;
    s = bc->val.p;
    e = bc->val.end;
    if (b->n < 2 || b->n > 3)
        return gs__perr(P, &b->in->op_at, GS_ERR_PARSE, "__cublas$gemm takes 2 or 3 operands, found %d", b->n);
    memset(&dd, 0, sizeof dd);
    if (!gs__json_ints(s, e, "lhs_contracting_dimensions", dd.lhs_contract, GS_MAX_RANK, &dd.n_contract) ||
        !gs__json_ints(s, e, "rhs_contracting_dimensions", dd.rhs_contract, GS_MAX_RANK, &nc2) ||
        !gs__json_ints(s, e, "lhs_batch_dimensions", dd.lhs_batch, GS_MAX_RANK, &dd.n_batch) ||
        !gs__json_ints(s, e, "rhs_batch_dimensions", dd.rhs_batch, GS_MAX_RANK, &nb2) || nb2 != dd.n_batch ||
        nc2 != dd.n_contract)
        return gs__perr(P, &bc->val, GS_ERR_PARSE, "__cublas$gemm: backend_config has no usable dot_dimension_numbers");
    (void)gs__json_num(s, e, "alpha_real", &alpha);
    (void)gs__json_num(s, e, "alpha_imag", &alpha_im);
    (void)gs__json_num(s, e, "beta", &beta);
    if (gs__json_word(s, e, "epilogue", epi, sizeof epi) && strcmp(epi, "DEFAULT") != 0)
        return gs__perr(P, &bc->val, GS_ERR_UNSUPPORTED, "__cublas$gemm epilogue %s is not supported", epi);
    if (alpha_im != 0) return gs__perr(P, &bc->val, GS_ERR_UNSUPPORTED, "__cublas$gemm with a complex alpha is not supported");
    if (beta != 0 && b->n != 3)
        return gs__perr(P, &bc->val, GS_ERR_PARSE, "__cublas$gemm with beta=%g needs a third operand", beta);
    if (b->in->type.tuple && !(b->in->type.n == 2 && P->elems[b->in->type.first + 1].dtype == GS_S8 &&
                                P->elems[b->in->type.first + 1].rank == 1))
        return gs__perr(P, &target->val, GS_ERR_PARSE, "__cublas$gemm: expected a result or (result, s8[workspace bytes])");
    P->ctx->next_name = NULL;
    v = gs_dot(b->g, b->xs[0], b->xs[1], &dd);
    if (v && !b->in->type.tuple && v->shape.dtype != b->ds->dtype) v = gs_convert(b->g, v, b->ds->dtype);
    if (v && b->in->type.tuple && v->shape.dtype != P->elems[b->in->type.first].dtype)
        v = gs_convert(b->g, v, P->elems[b->in->type.first].dtype);
    if (v && alpha != 1) v = gs_binary(b->g, GS_OP_MULTIPLY, v, gs_constant_splat(b->g, v->shape, alpha));
    if (v && b->n == 3 && beta != 0) {
        gs_value *c = b->xs[2];
        if (beta != 1) c = gs_binary(b->g, GS_OP_MULTIPLY, c, gs_constant_splat(b->g, c->shape, beta));
        v = gs_binary(b->g, GS_OP_ADD, v, c);
    }
    if (v && b->in->type.tuple) {   /* the workspace is scratch space: zeros */
        gs_value *parts[2];
        parts[0] = v;
        parts[1] = gs_constant_splat(b->g, P->elems[b->in->type.first + 1], 0);
        v = gs_tuple(b->g, 2, parts);
    }
    b->v = v;
    return true;
}

/* TopK(x) -> (values, s32 indices) along the last dim, k from the result shape; the comparator
   (called_computations={c} or to_apply=c) must be compare(parameter(0), parameter(1)) with direction GT
   (largest first) or LT; without one, largest first (XLA's TopK custom-call, the sort-based top-k of the
   TPU and GPU backends) */
GS__FN bool gs__bi_topk_call(gs__bi *b, const gs__pattr *ta) {
    gs__parser *P = b->P;
    gs__pattr *a = gs__attr(P, b->in, "called_computations"), *dir;
    gs__cur v;
    const char *name;
    ptrdiff_t j;
    const gs__pcomp *comp;
    const gs__pinst *root;
    int lhs, rhs;
    int64_t nl = -1, nr = -1;
    bool gt;
    (void)ta;
    if (!b->in->type.tuple || b->in->type.n != 2 || b->x->shape.rank == 0)
        return gs__perr(P, &b->in->type.at, GS_ERR_PARSE, "TopK '%s' needs a (values, indices) tuple shape", b->in->name);
    if (!a && !(a = gs__attr(P, b->in, "to_apply"))) {   /* no comparator: largest first */
        b->v = gs_topk(b->g, b->x, P->elems[b->in->type.first].dims[b->x->shape.rank - 1], true);
        return true;
    }
    v = a->val;
    if (gs__cur_peek(&v) == '{') gs__cur_adv(&v);
    if (!gs__read_name(P, &v, "a computation name", &name, NULL)) return false;
    j = stbds_shgeti(P->comp_names, (char *)name);
    if (j < 0) return gs__perr(P, &a->val, GS_ERR_PARSE, "unknown computation '%s'", name);
    comp = &P->comps[P->comp_names[j].value];
    root = &P->insts[comp->root];
    lhs = gs__quiet_operand(P, (gs__pcomp *)comp, root, 0);
    rhs = gs__quiet_operand(P, (gs__pcomp *)comp, root, 1);
    dir = gs__attr(P, root, "direction");
    gt = dir && gs__peek_word(dir->val, "GT");
    if (root->op != GS_OP_COMPARE || lhs < 0 || rhs < 0 || !gs__quiet_param(&P->insts[lhs], &nl) ||
        !gs__quiet_param(&P->insts[rhs], &nr) || !((nl == 0 && nr == 1) || (nl == 1 && nr == 0)) ||
        !(gt || (dir && gs__peek_word(dir->val, "LT"))))
        return gs__perr(P, &a->val, GS_ERR_UNSUPPORTED,
                        "unsupported TopK comparator '%s' (expected ROOT compare(parameter(0), parameter(1)), direction=GT or LT)",
                        comp->name);
    b->v = gs_topk(b->g, b->x, P->elems[b->in->type.first].dims[b->x->shape.rank - 1], gt == (nl == 0));
    return true;
}

/* "key=12" in backend_config text [s, e) as one integer (false: absent or not an integer) */
GS__FN bool gs__bi_kv_int(const char *s, const char *e, const char *key, int64_t *out) {
    size_t n = strlen(key);
    const char *p;
    for (p = s; p + n < e; p++) {
        if ((p == s || p[-1] == ',' || p[-1] == '"') && memcmp(p, key, n) == 0 && p[n] == '=') {
            int64_t x = 0, sg = 1;
            p += n + 1;
            if (p < e && *p == '-') { sg = -1; p++; }
            if (p >= e || *p < '0' || *p > '9') return false;
            while (p < e && *p >= '0' && *p <= '9' && x < ((int64_t)1 << 50)) x = x * 10 + (*p++ - '0');
            *out = sg * x;
            return p >= e || *p < '0' || *p > '9';   /* false: too many digits */
        }
    }
    return false;
}

/* "key=[1,2]" in backend_config text as up to max integers (false: absent or malformed) */
GS__FN bool gs__bi_kv_ints(const char *s, const char *e, const char *key, int64_t *out, int max, int *n_out) {
    size_t n = strlen(key);
    const char *p;
    for (p = s; p + n + 1 < e; p++) {
        if ((p == s || p[-1] == ',' || p[-1] == '"') && memcmp(p, key, n) == 0 && p[n] == '=' && p[n + 1] == '[') {
            int k = 0;
            p += n + 2;
            while (p < e && *p != ']') {
                int64_t x = 0, sg = 1;
                if (*p == '-') { sg = -1; p++; }
                if (k >= max || p >= e || *p < '0' || *p > '9') return false;
                while (p < e && *p >= '0' && *p <= '9' && x < ((int64_t)1 << 50)) x = x * 10 + (*p++ - '0');
                if (p < e && *p >= '0' && *p <= '9') return false;   /* too many digits */
                out[k++] = sg * x;
                if (p < e && *p == ',') p++;
            }
            *n_out = k;
            return p < e;
        }
    }
    return false;
}

/* x rotated right by a along dim (out[i] = x[(i - a) mod n]) */
GS__FN gs_value *gs__bi_rotate(gs_graph *g, gs_value *x, int dim, int64_t a) {
    int64_t n = x->shape.dims[dim], st[GS_MAX_RANK] = {0}, lim[GS_MAX_RANK];
    gs_value *parts[2];
    int d;
    a = ((a % n) + n) % n;
    if (a == 0) return gs_copy(g, x);
    for (d = 0; d < x->shape.rank; d++) lim[d] = x->shape.dims[d];
    st[dim] = n - a;
    parts[0] = gs_slice(g, x, st, lim, NULL);
    st[dim] = 0;
    lim[dim] = n - a;
    parts[1] = gs_slice(g, x, st, lim, NULL);
    return gs_concatenate(g, 2, parts, dim);
}

/* XLA's partitioner-internal ops, as the standard ops they stand for (backend_config "dimension=D,..."):
   _SPMDInternalOp_RotateRight (amount=A): out[i] = x[(i - A) mod n] along D;
   _SPMDInternalOp_MultiRotate (left_amount=L, right_amount=R): a tuple of L + R + 1 arrays, element k
     x rotated right by k - L (left by L first, unrotated at k = L);
   _SPMDInternalOp_MultiSlice (amount=A, start_indices, limit_indices, strides): a tuple of A + 1 slices,
     slice k moved k elements along D;
   _SPMDInternalOp_Wrap (left_amount=L, right_amount=R): x[n-L:] ++ x ++ x[:R] along D.
   Returns false (with the parse error set) when not one of them, or its attributes do not fit. */
GS__FN bool gs__bi_spmd_internal(gs__bi *b, const char *target, bool *handled) {
    static const char *const names[4] = {"_SPMDInternalOp_RotateRight", "_SPMDInternalOp_MultiRotate",
                                         "_SPMDInternalOp_MultiSlice", "_SPMDInternalOp_Wrap"};
    gs__parser *P = b->P;
    gs__pattr *bc;
    gs_value *parts[64];
    int64_t dim = -1, a = 0, l = 0, r = 0;
    int k = 0, op;
    const char *s, *e;
    *handled = false;
    for (op = 0; op < 4 && strcmp(target, names[op]) != 0; op++) {}
    if (op == 4) return true;
    *handled = true;
    if (!(bc = gs__need_attr(P, b->in, "backend_config"))) return false;
    s = bc->val.p;
    e = bc->val.end;
    if (b->n != 1 || !gs__bi_kv_int(s, e, "dimension", &dim) || dim < 0 || dim >= b->x->shape.rank ||
        (op == 0 && (!gs__bi_kv_int(s, e, "amount", &a) || a < 0)) ||
        ((op == 1 || op == 3) && (!gs__bi_kv_int(s, e, "left_amount", &l) || !gs__bi_kv_int(s, e, "right_amount", &r) ||
                                  l < 0 || r < 0 || l + r + 1 > 64)) ||
        (op == 2 && (!gs__bi_kv_int(s, e, "amount", &a) || a < 0 || a + 1 > 64)))
        return gs__perr(P, &bc->val, GS_ERR_PARSE, "%s: expected one operand and backend_config with dimension=D (< rank)%s",
                        target, op == 0 ? ", amount=A >= 0" : op == 2 ? ", amount=A (0..63), start_indices, limit_indices, strides"
                                                                      : ", left_amount=L, right_amount=R >= 0");
    P->ctx->next_name = NULL;
    if (op == 0) {
        b->v = gs__bi_rotate(b->g, b->x, (int)dim, a);
        return true;
    }
    if (op == 3) {
        int64_t n = b->x->shape.dims[dim], st[GS_MAX_RANK] = {0}, lim[GS_MAX_RANK];
        int d;
        if (l > n || r > n) return gs__perr(P, &bc->val, GS_ERR_PARSE, "%s: wraps %lld and %lld elements of a dim of %lld",
                                            target, (long long)l, (long long)r, (long long)n);
        for (d = 0; d < b->x->shape.rank; d++) lim[d] = b->x->shape.dims[d];
        st[dim] = n - l;
        if (l) parts[k++] = gs_slice(b->g, b->x, st, lim, NULL);
        parts[k++] = b->x;
        st[dim] = 0;
        lim[dim] = r;
        if (r) parts[k++] = gs_slice(b->g, b->x, st, lim, NULL);
        b->v = k == 1 ? gs_copy(b->g, b->x) : gs_concatenate(b->g, k, parts, dim);
        return true;
    }
    if (op == 1) {
        for (k = 0; k <= l + r; k++) parts[k] = gs__bi_rotate(b->g, b->x, (int)dim, k - l);
    } else {
        int64_t st[GS_MAX_RANK], lim[GS_MAX_RANK], str[GS_MAX_RANK];
        int n1, n2, n3;
        if (!gs__bi_kv_ints(s, e, "start_indices", st, GS_MAX_RANK, &n1) ||
            !gs__bi_kv_ints(s, e, "limit_indices", lim, GS_MAX_RANK, &n2) ||
            !gs__bi_kv_ints(s, e, "strides", str, GS_MAX_RANK, &n3) || n1 != b->x->shape.rank || n2 != n1 || n3 != n1)
            return gs__perr(P, &bc->val, GS_ERR_PARSE, "%s: start_indices, limit_indices and strides need %d entries each",
                            target, b->x->shape.rank);
        for (k = 0; k <= a; k++) {
            parts[k] = gs_slice(b->g, b->x, st, lim, str);
            st[dim]++;
            lim[dim]++;
        }
    }
    b->v = gs_tuple(b->g, k, parts);
    return true;
}

/* a custom-call target other than the sharding ones */
GS__FN bool gs__bi_custom(gs__bi *b, const char *target, const gs__pattr *ta) {
    int i;
    if (strcmp(target, "__cublas$gemm") == 0) return gs__bi_gemm(b, ta);
    if (strcmp(target, "TopK") == 0) return gs__bi_topk_call(b, ta);
    {
        bool handled, ok = gs__bi_spmd_internal(b, target, &handled);
        if (handled) return ok;
    }
    for (i = 0; i < GS__COUNTOF(gs__identity_targets); i++) {
        if (strcmp(target, gs__identity_targets[i]) != 0) continue;
        b->P->ctx->next_name = NULL;
        b->v = gs__identity(b->g, b->x);
        /* an array through a sharding barrier: a copy that propagation does not cross in one direction */
        if (b->v && strncmp(target, "ShardBarrier", 12) == 0) {
            int k;
            if (b->v->op == GS_OP_COPY) b->v->barrier = target[12] == 'F' ? 1 : 2;
            else   /* a tuple: each element's get-tuple-element is the barrier (printed as itself) */
                for (k = 0; k < b->v->n_operands; k++) b->v->operands[k]->barrier = target[12] == 'F' ? 1 : 2;
        }
        return true;
    }
    return gs__bl_opaque(b);
}

/* all-reduce, all-gather, reduce-scatter, all-to-all of one operand x */
GS__FN bool gs__bi_collective(gs__bi *b, gs_value *x, gs_value **out) {
    gs__parser *P = b->P;
    gs__pinst *in = b->in;
    gs_graph *g = b->g;
    gs_value *v = NULL;
    int64_t d = 0;
    gs_op op = in->op;
    gs_reduce_kind kind = GS_REDUCE_INVALID;
    gs_collective_desc cd;
    if (!gs__coll_desc(P, in, &cd)) return false;
    if (op == GS_OP_ALL_REDUCE || op == GS_OP_REDUCE_SCATTER) {
        if (!gs__reducer(P, in, x->shape.dtype, &kind)) return false;
    }
    if (op == GS_OP_ALL_REDUCE) {
        v = gs__set_reducer(P, gs_all_reduce(g, x, kind, &cd));
    } else if (op == GS_OP_ALL_TO_ALL) {
        int64_t split, concat;
        gs__pattr *sa = gs__attr(P, in, "split_dimension"), *ca = gs__attr(P, in, "concat_dimension");
        if (sa || ca) {
            if (!sa) return gs__need_attr(P, in, "split_dimension") != NULL;
            if (!ca) return gs__need_attr(P, in, "concat_dimension") != NULL;
            if (!gs__attr_int(P, sa, &split) || !gs__attr_int(P, ca, &concat)) return false;
        } else {
            if (!gs__attr(P, in, "dimensions"))
                return gs__perr(P, &in->op_at, GS_ERR_UNSUPPORTED,
                                "all-to-all without dimensions= (the tuple form) is not supported");
            if (!gs__attr_one_dim(P, in, "dimensions", &split)) return false;
            concat = split;
        }
        v = gs_all_to_all(g, x, split, concat, &cd);
    } else {
        if (!gs__attr_one_dim(P, in, "dimensions", &d)) return false;
        if (x->shape.rank == 0 && cd.groups.group_size == 1)   /* a scalar in a variadic form, groups of one */
            v = gs_copy(g, x);
        else
            v = op == GS_OP_ALL_GATHER ? gs_all_gather(g, x, d, &cd) : gs__set_reducer(P, gs_reduce_scatter(g, x, kind, d, &cd));
    }
    *out = v;
    return true;
}

/* the variadic form (n operands, a tuple of n results) is n collectives and a tuple, the same as XLA's
   combined collectives compute */
GS__FN bool gs__bi_collectives(gs__bi *b) {
    gs_value **parts, **xs;
    int k;
    if (b->n == 1) return gs__bi_collective(b, b->x, &b->v);
    /* the operands kept aside: a reducer computation built for the first component reuses P->vals */
    parts = (gs_value **)gs__arena_alloc(b->P->ctx, 2 * sizeof(gs_value *) * (size_t)b->n);
    if (!parts) return false;
    xs = parts + b->n;
    memcpy(xs, b->xs, sizeof(gs_value *) * (size_t)b->n);
    for (k = 0; k < b->n; k++) {
        if (!(b->P->ctx->next_name = gs__arena_printf(b->P->ctx, "%s.%d", b->name, k))) return false;
        if (!gs__bi_collective(b, xs[k], &parts[k])) return false;
        if (!parts[k]) return gs__builder_failed(b->P, &b->in->at);
        parts[k]->auto_name = true;   /* made up here: a later instruction of the text may take the name */
    }
    b->P->ctx->next_name = NULL;
    b->v = gs_tuple(b->g, b->n, parts);
    return true;
}

GS__FN bool gs__collapsed_variadic(const gs__pinst *in);
GS__FN bool gs__bi_comm(gs__bi *b) {
    gs__parser *P = b->P;
    gs__pinst *in = b->in;
    gs_graph *g = b->g;
    gs_value **xs = b->xs, *x = b->x, *v = NULL;
    const gs_shape *ds = b->ds;
    gs__pattr *a;
    int n = b->n;
    int64_t d = 0;
    gs_op op = in->op;
    switch (op) {
    case GS_OP_ALL_REDUCE:
    case GS_OP_ALL_GATHER:
    case GS_OP_REDUCE_SCATTER:
    case GS_OP_ALL_TO_ALL:
        return gs__bi_collectives(b);
    case GS_OP_COLLECTIVE_PERMUTE: {
        int64_t channel = 0;
        gs__cur c;
        bool ok = true;
        if ((a = gs__attr(P, in, "channel_id")) != NULL && !gs__attr_int(P, a, &channel)) return false;
        if (!(a = gs__need_attr(P, in, "source_target_pairs"))) return false;
        stbds_arrsetlen(P->ids, 0);
        c = a->val;
        if (!gs__expect_ch(P, &c, '{')) return false;
        if (!gs__accept(P, &c, '}', &ok)) {
            if (!ok) return false;
            for (;;) {
                int64_t st[2];
                if (!gs__expect_ch(P, &c, '{') || !gs__read_int(P, &c, &st[0], "a partition id") ||
                    !gs__expect_ch(P, &c, ',') || !gs__read_int(P, &c, &st[1], "a partition id") ||
                    !gs__expect_ch(P, &c, '}'))
                    return false;
                stbds_arrput(P->ids, st[0]);
                stbds_arrput(P->ids, st[1]);
                if (gs__accept(P, &c, '}', &ok)) break;
                if (!ok || !gs__expect_ch(P, &c, ',')) return false;
            }
        }
        if (!gs__val_end(P, &c)) return false;
        v = gs_collective_permute(g, x, (int64_t)stbds_arrlen(P->ids) / 2, P->ids, channel);
        break;
    }
    case GS_OP_ANNOTATE:
    case GS_OP_TO_MANUAL:
    case GS_OP_TO_FULL: {
        char target[64];
        const char *sh = NULL;
        gs__pattr *sa = gs__attr(P, in, "sharding");
        if (!(a = gs__need_attr(P, in, "custom_call_target")) || !gs__attr_word(P, a, target, sizeof target))
            return false;
        uint32_t open = 0;
        const gs_sharding *ms = NULL;   /* a mesh spec's sharding (sharding={X, _}) */
        if (sa && !(sh = gs__pstr(P, sa->val.p, (size_t)(sa->val.end - sa->val.p)))) return false;
        if (sh && x && gs__nt_is_spec(sh)) {
            if (!(ms = gs__nt_value_sharding(P->ctx, P->mesh, sh, x, &open))) return gs__builder_failed(P, &sa->at);
            if (!(sh = gs_sharding_to_text(P->ctx, ms))) return false;
            if (open && strcmp(target, "Sharding") != 0)
                return gs__perr(P, &sa->at, GS_ERR_PARSE, "'?' (an open dim) only on a Sharding annotation");
        }
        if (strcmp(target, "Sharding") == 0) {
            gs__pattr *bc = gs__attr(P, in, "backend_config");
            if (in->type.tuple)
                return gs__perr(P, &in->type.at, GS_ERR_PARSE, "%s '%s' needs an array shape, not a tuple",
                                in->opcode, in->name);
            if (!sa) return gs__need_attr(P, in, "sharding") != NULL;
            v = ms && open ? gs_annotate_open(g, x, ms, open) : gs_annotate(g, x, sh);
            if (v && bc && !gs__unspecified_dims(P, bc, v)) return false;
        } else if (strcmp(target, "SPMDFullToShardShape") == 0 || strcmp(target, "SPMDShardToFullShape") == 0) {
            if (in->type.tuple)
                return gs__perr(P, &in->type.at, GS_ERR_PARSE, "%s '%s' needs an array shape, not a tuple",
                                in->opcode, in->name);
            gs__pattr *bc = gs__attr(P, in, "backend_config");
            v = target[4] == 'F' ? gs_to_manual(g, x, *ds, sh) : gs_to_full(g, x, *ds, sh);
            if (v && bc && !gs__unspecified_dims(P, bc, v)) return false;
        } else {
            return gs__bi_custom(b, target, a);
        }
        break;
    }
    case GS_OP_TUPLE: v = gs_tuple(g, n, xs); break;
    case GS_OP_GET_TUPLE_ELEMENT:
        if (!(a = gs__need_attr(P, in, "index")) || !gs__attr_int(P, a, &d)) return false;
        if ((x->op == GS_OP_ARGMAX || x->op == GS_OP_ARGMIN) && P->insts[P->ops[in->first_op].inst].op == GS_OP_REDUCE && d == 1) {
            P->ctx->next_name = NULL;
            v = x;   /* element 1 of argmax's standard form (gs__argmax_std_form): the argmax itself, renamed */
            break;
        }
        if (x->shape.dtype != GS_TUPLE && gs__collapsed_variadic(&P->insts[P->ops[in->first_op].inst])) {
            P->ctx->next_name = NULL;
            v = x;   /* the one result of a variadic op its one get-tuple-element uses (gs__bi_variadic) */
            break;
        }
        v = gs_get_tuple_element(g, x, d);
        break;
    case GS_OP_WHILE: {
        gs_graph *cond = NULL, *body = NULL;
        if (!gs__called_graph(P, in, "condition", &cond) || !gs__called_graph(P, in, "body", &body)) return false;
        /* building them may have grown P->vals: re-read the operand */
        x = P->insts[P->ops[in->first_op].inst].value;
        P->ctx->next_name = b->name; /* building cond and body used it up */
        v = gs_while(g, cond, body, x);
        break;
    }
    default: return gs__bi_unsupported(b);
    }
    b->v = v;
    return true;
}

/* conditional(pred, t_arg, f_arg), true_computation=T, false_computation=F, or
   conditional(index, arg0, .., argN-1), branch_computations={B0, .., BN-1}: the op itself, each branch its own
   graph (only the taken one runs) */
GS__FN bool gs__bi_conditional(gs__bi *b) {
    gs__parser *P = b->P;
    gs__pattr *ta = gs__attr(P, b->in, "true_computation"), *fa = gs__attr(P, b->in, "false_computation");
    gs__pattr *ba = gs__attr(P, b->in, "branch_computations");
    gs__pattr *one = NULL;
    gs_graph **branches;
    gs_value **xs;
    int n = 0, k;
    bool ok = true;
    if (b->n < 1) return gs__perr(P, &b->in->op_at, GS_ERR_PARSE, "conditional needs a predicate or branch index");
    if (ta || fa) {
        if (!ta || !fa || ba) return gs__perr(P, &b->in->op_at, GS_ERR_PARSE, "conditional needs true_computation= and false_computation= (or branch_computations=)");
        stbds_arrput(one, *ta);
        stbds_arrput(one, *fa);
        n = 2;
    } else if (ba) {   /* {B0, B1, ...}: each name becomes a one-name attribute value */
        gs__cur c = ba->val;
        if (!gs__expect_ch(P, &c, '{')) return false;
        for (;;) {
            gs__pattr a1 = *ba;
            const char *nm;
            gs__cur at;
            if (!gs__read_name(P, &c, "a computation name", &nm, &at)) { ok = false; break; }
            a1.val = at;
            a1.val.end = c.p;
            stbds_arrput(one, a1);
            n++;
            if (gs__accept(P, &c, '}', &ok)) break;
            if (!ok || !gs__expect_ch(P, &c, ',')) { ok = false; break; }
        }
        if (!ok || !gs__val_end(P, &c)) {
            stbds_arrfree(one);
            return false;
        }
    } else {
        return gs__need_attr(P, b->in, "branch_computations") != NULL;
    }
    if (b->n != n + 1) {
        stbds_arrfree(one);
        return gs__perr(P, &b->in->op_at, GS_ERR_PARSE, "conditional with %d branch%s takes %d operands, found %d", n,
                        n == 1 ? "" : "es", n + 1, b->n);
    }
    if (b->x->shape.rank != 0 || (ta ? b->x->shape.dtype != GS_PRED : b->x->shape.dtype != GS_S32)) {
        stbds_arrfree(one);
        return gs__perr(P, &P->ops[b->in->first_op].at, GS_ERR_PARSE, "conditional '%s' needs a %s scalar first operand, found %s",
                        b->in->name, ta ? "pred[]" : "s32[]", b->x->shape.dtype == GS_TUPLE ? "a tuple" : gs_dtype_name(b->x->shape.dtype));
    }
    branches = (gs_graph **)gs__arena_alloc(P->ctx, sizeof(gs_graph *) * (size_t)n);
    xs = (gs_value **)gs__arena_alloc(P->ctx, sizeof(gs_value *) * (size_t)(n + 1));
    for (k = 0; ok && branches && xs && k < n; k++) ok = gs__called_comp(P, &one[k], &branches[k]);
    stbds_arrfree(one);
    if (!ok || !branches || !xs) return false;
    /* building the branches may have grown P->vals: re-read the operands */
    for (k = 0; k <= n; k++) xs[k] = P->insts[P->ops[b->in->first_op + k].inst].value;
    P->ctx->next_name = b->name;   /* building the branches used it up */
    b->v = gs_conditional(b->g, xs[0], n, branches, xs + 1);
    return true;
}

/* ragged-all-to-all(input, output, input_offsets, send_sizes, output_offsets, recv_sizes) with replica_groups= and
   channel_id= (XLA's parser reads no use_global_device_ids for it). dimensions={d}, one entry, is taken and not
   used by XLA's parser; it is kept here and printed back. */
GS__FN bool gs__bi_ragged_a2a(gs__bi *b) {
    gs__parser *P = b->P;
    gs__pattr *a;
    gs_collective_desc cd;
    int64_t d = 0;
    bool dims = gs__attr(P, b->in, "dimensions") != NULL;
    memset(&cd, 0, sizeof cd);
    if ((a = gs__attr(P, b->in, "replica_groups")) != NULL && !gs__attr_groups(P, a, &cd.groups)) return false;
    if ((a = gs__attr(P, b->in, "channel_id")) != NULL && !gs__attr_int(P, a, &cd.channel_id)) return false;
    if (dims && !gs__attr_one_dim(P, b->in, "dimensions", &d)) return false;
    b->v = gs_ragged_all_to_all(b->g, b->xs, &cd);
    if (b->v && dims) {
        b->v->flag = true;
        b->v->dim = d;
    }
    return true;
}

/* the family builder of an op (GS_OP_LIST order: the families are contiguous ranges) */
GS__FN bool gs__bi_family(gs__bi *b) {
    gs_op op = b->in->op;
    if (op <= GS_OP_COPY) return gs__bi_layout(b);
    if (op <= GS_OP_REDUCE_WINDOW) return gs__bi_math(b);
    if (op <= GS_OP_RNG) return gs__bi_index(b);
    if (op <= GS_OP_WHILE) return gs__bi_comm(b);
    /* the numeric ops of XLA's full set, with the leaves (their cases live in gs__bi_layout) */
    if (op >= GS_OP_SINE && op <= GS_OP_SELECT_AND_SCATTER) return gs__bi_layout(b);
    if (op == GS_OP_CONDITIONAL) return gs__bi_conditional(b);
    if (op == GS_OP_RAGGED_DOT) return gs__bi_ragged_dot(b);
    if (op == GS_OP_RAGGED_ALL_TO_ALL) return gs__bi_ragged_a2a(b);
    return gs__bi_unsupported(b);
}

/* The value-and-index reducer of an arg-max or arg-min (JAX's argmax, XLA tests' minmax_func): parameters
   (v_acc, i_acc, v, i), ROOT tuple(select(C, v_acc, v), select(C, i_acc, i)) (or both with the branches
   swapped) where C contains a compare of v_acc and v with GT/GE or LT/LE (ties and NaN terms beside it).
   Returns 1 for arg-max, -1 for arg-min, 0 when the computation is not of this form. */
GS__FN int gs__argmax_reducer(gs__parser *P, const gs__pcomp *comp) {
    const gs__pinst *root = &P->insts[comp->root], *sv, *si;
    int isv, isi, c, a, bb, ai, bi, stack[16], top = 0, seen = 0, dir = 0;
    int64_t na = -1, nb = -1, nai = -1, nbi = -1;
    gs__pcomp *cm = (gs__pcomp *)comp;
    if (root->op != GS_OP_TUPLE || root->n_ops != 2) return 0;
    if ((isv = gs__quiet_operand(P, cm, root, 0)) < 0 || (isi = gs__quiet_operand(P, cm, root, 1)) < 0) return 0;
    sv = &P->insts[isv];
    si = &P->insts[isi];
    if (sv->op != GS_OP_SELECT || si->op != GS_OP_SELECT) return 0;
    c = gs__quiet_operand(P, cm, sv, 0);
    a = gs__quiet_operand(P, cm, sv, 1);
    bb = gs__quiet_operand(P, cm, sv, 2);
    ai = gs__quiet_operand(P, cm, si, 1);
    bi = gs__quiet_operand(P, cm, si, 2);
    if (c < 0 || c != gs__quiet_operand(P, cm, si, 0) || a < 0 || bb < 0 || ai < 0 || bi < 0) return 0;
    if (!gs__quiet_param(&P->insts[a], &na) || !gs__quiet_param(&P->insts[bb], &nb) ||
        !gs__quiet_param(&P->insts[ai], &nai) || !gs__quiet_param(&P->insts[bi], &nbi))
        return 0;
    if (!((na == 0 && nb == 2 && nai == 1 && nbi == 3) || (na == 2 && nb == 0 && nai == 3 && nbi == 1))) return 0;
    /* the ordering compare of the two values inside C */
    stack[top++] = c;
    while (top > 0 && seen++ < 64 && dir == 0) {
        const gs__pinst *e = &P->insts[stack[--top]];
        int k;
        if (e->op == GS_OP_COMPARE && e->n_ops == 2) {
            int l = gs__quiet_operand(P, cm, e, 0), r = gs__quiet_operand(P, cm, e, 1);
            int64_t nl = -1, nr = -1;
            gs__pattr *d = gs__attr(P, e, "direction");
            if (l >= 0 && r >= 0 && d && gs__quiet_param(&P->insts[l], &nl) && gs__quiet_param(&P->insts[r], &nr) &&
                ((nl == 0 && nr == 2) || (nl == 2 && nr == 0))) {
                bool larger = gs__peek_word(d->val, "GT") || gs__peek_word(d->val, "GE");
                bool smaller = gs__peek_word(d->val, "LT") || gs__peek_word(d->val, "LE");
                if (larger || smaller) dir = (larger != (nl == 2)) ? 1 : -1;   /* 1: C holds when v_acc is larger */
            }
        }
        for (k = 0; k < e->n_ops && top < 16; k++) {
            int o = gs__quiet_operand(P, cm, e, k);
            if (o >= 0) stack[top++] = o;
        }
    }
    if (dir == 0) return 0;
    return na == 0 ? dir : -dir;   /* C keeps v_acc: max when C means "v_acc larger" */
}

/* Is reduce b argmax's standard form as the printer writes it (gs__pr_argmax_std)? idx an s32 iota along d of
   x's shape, the initial value the lowest (argmax) or highest value of x's type, the initial index 0, and the
   reduce's one user get-tuple-element index=1. Then the reduce is the argmax and that user is its name. */
GS__FN bool gs__argmax_std_form(gs__bi *b, int64_t d, int dir) {
    gs__parser *P = b->P;
    const gs_value *x = b->xs[0], *io = b->xs[1], *iv = b->xs[2], *ii = b->xs[3];
    int self = (int)(b->in - P->insts), users = 0, i, k, last = -1;
    char want[40];
    gs__sb sb;
    bool same;
    if (io->op != GS_OP_IOTA || io->dim != d || io->shape.dtype != GS_S32 || io->shape.rank != x->shape.rank ||
        memcmp(io->shape.dims, x->shape.dims, sizeof(int64_t) * (size_t)x->shape.rank) != 0 || b->in->root)
        return false;
    if (iv->op != GS_OP_CONSTANT || !iv->data || iv->shape.rank != 0 || iv->shape.dtype != x->shape.dtype ||
        ii->op != GS_OP_CONSTANT || !ii->data || ii->shape.rank != 0 || ii->shape.dtype != GS_S32 || *(const int32_t *)ii->data != 0)
        return false;
    for (i = b->comp->first_inst; i < b->comp->first_inst + b->comp->n_inst; i++)
        for (k = 0; k < P->insts[i].n_ops; k++)
            if (P->ops[P->insts[i].first_op + k].inst == self) {
                users++;
                last = i;
            }
    if (users != 1 || P->insts[last].op != GS_OP_GET_TUPLE_ELEMENT) return false;
    {
        gs__pattr *a = gs__attr(P, &P->insts[last], "index");
        int64_t idx = -1;
        if (!a || !gs__attr_int(P, a, &idx) || idx != 1) {
            gs_ctx_clear_error(P->ctx);
            return false;
        }
    }
    gs__hlo_identity_text(dir > 0 ? GS_REDUCE_MAX : GS_REDUCE_MIN, x->shape.dtype, want, sizeof want);
    gs__sb_init(&sb, P->ctx);
    gs__pr_elem(&sb, iv->shape.dtype, iv->data, 0);
    same = !sb.oom && sb.buf && strcmp(sb.buf, want) == 0;
    gs__sb_free(&sb);
    return same;
}

/* reduce(x, idx, init_x, init_idx), dimensions={d} with an arg-max/min reducer: (the best value, the idx
   element at its first position), the initial pair when the initial value beats every element */
GS__FN int gs__bi_argmax_reduce(gs__bi *b) {
    gs__parser *P = b->P;
    gs__pattr *a = gs__attr(P, b->in, "to_apply");
    gs_value *x = b->xs[0], *idx = b->xs[1], *iv = b->xs[2], *ii = b->xs[3], *best, *pos, *io, *pb, *lowest, *at, *win, *parts[2];
    gs_graph *g = b->g;
    gs_shape s32 = x->shape, sidx = idx->shape;
    int64_t d, keep[GS_MAX_RANK], none[1];
    int ci, dir, r = x->shape.rank, i, k = 0;
    gs_reduce_kind kind;
    if (b->n != 4 || !a || (ci = gs__called(P, a)) < 0 || (dir = gs__argmax_reducer(P, &P->comps[ci])) == 0) {
        gs_ctx_clear_error(P->ctx);
        return 0;
    }
    if (!gs__attr_one_dim(P, b->in, "dimensions", &d)) return -1;
    sidx.dtype = x->shape.dtype;
    if (d < 0 || d >= r || !gs_shape_equal(&x->shape, &sidx) || !gs__is_int(idx->shape.dtype))
        return gs__perr(P, &b->in->op_at, GS_ERR_PARSE, "arg-max reduce '%s': values and indices of one shape (integer indices) over one dim", b->in->name) ? 1 : -1;
    sidx.dtype = idx->shape.dtype;
    if (gs__argmax_std_form(b, d, dir)) {   /* the name is the reduce's until its get-tuple-element renames it */
        b->v = dir > 0 ? gs_argmax(g, x, d) : gs_argmin(g, x, d);
        b->collapsed = true;
        return b->v ? 1 : (gs__builder_failed(P, &b->in->at), -1);
    }
    kind = dir > 0 ? GS_REDUCE_MAX : GS_REDUCE_MIN;
    for (i = 0; i < r; i++)
        if (i != d) keep[k++] = i;
    s32.dtype = GS_S32;
    P->ctx->next_name = NULL;
    parts[0] = gs_reduce(g, x, iv, kind, 1, &d);
    best = gs_reduce(g, x, gs_scalar(g, x->shape.dtype, dir > 0 ? -INFINITY : INFINITY), kind, 1, &d);
    if (!gs__is_float(x->shape.dtype)) best = parts[0];   /* no infinity: the elements win (an integer initial
                                                            value is the type's extreme in JAX's arg-max) */
    pos = dir > 0 ? gs_argmax(g, x, d) : gs_argmin(g, x, d);
    io = gs_iota(g, s32, d);
    pb = gs_broadcast(g, pos, s32, keep);
    lowest = gs_scalar(g, sidx.dtype, gs__is_signed(sidx.dtype) ? -ldexp(1.0, 8 * (int)gs_dtype_size(sidx.dtype) - 1) : 0);
    at = gs_select(g, gs_compare(g, io, pb, GS_CMP_EQ), idx, gs_broadcast(g, lowest, sidx, none));
    at = gs_reduce(g, at, lowest, GS_REDUCE_MAX, 1, &d);
    /* the elements win unless the initial value is strictly better (a NaN among them wins) */
    pb = best ? gs_broadcast(g, iv, best->shape, none) : NULL;
    win = gs_binary(g, GS_OP_OR, gs_compare(g, best, pb, dir > 0 ? GS_CMP_GE : GS_CMP_LE), gs_compare(g, best, best, GS_CMP_NE));
    parts[1] = gs_select(g, win, at, at ? gs_broadcast(g, ii, at->shape, none) : NULL);
    b->v = gs_tuple(g, 2, parts);
    return b->v ? 1 : (gs__builder_failed(P, &b->in->at), -1);
}

/* reduce(x_0..x_n-1, init_0..init_n-1), reduce-window likewise, scatter(op_0..op_n-1, indices,
   upd_0..upd_n-1) with a reducer whose components are independent (gs__tuple_reducer): one op per
   component ("<name>.k") and their tuple */
/* a variadic reduce, reduce-window or scatter built as the one result its one get-tuple-element uses */
GS__FN bool gs__collapsed_variadic(const gs__pinst *in) {
    return ((in->op == GS_OP_REDUCE || in->op == GS_OP_REDUCE_WINDOW) && in->n_ops > 2) ||
           (in->op == GS_OP_SCATTER && in->n_ops > 3);
}

/* the index of b's one user when that is a get-tuple-element (b not the root), else -1 */
GS__FN int gs__single_gte_user(gs__bi *b) {
    gs__parser *P = b->P;
    int self = (int)(b->in - P->insts), users = 0, i, k, last = -1;
    int64_t idx = -1;
    gs__pattr *a;
    if (b->in->root) return -1;
    for (i = b->comp->first_inst; i < b->comp->first_inst + b->comp->n_inst; i++)
        for (k = 0; k < P->insts[i].n_ops; k++)
            if (P->ops[P->insts[i].first_op + k].inst == self) {
                users++;
                last = i;
            }
    if (users != 1 || P->insts[last].op != GS_OP_GET_TUPLE_ELEMENT || !(a = gs__attr(P, &P->insts[last], "index")))
        return -1;
    if (!gs__attr_int(P, a, &idx) || idx < 0 || idx > INT32_MAX) {
        gs_ctx_clear_error(P->ctx);
        return -1;
    }
    return (int)idx;
}

GS__FN bool gs__bi_variadic(gs__bi *b) {
    gs__parser *P = b->P;
    bool scatter = b->in->op == GS_OP_SCATTER;
    int n = scatter ? (b->n - 1) / 2 : b->n / 2, k, i, only;
    gs_value **parts, *args[3];
    if (b->in->op == GS_OP_REDUCE && b->n == 4 && (k = gs__bi_argmax_reduce(b)) != 0) return k > 0;
    if ((scatter ? 2 * n + 1 : 2 * n) != b->n || n < 1)
        return gs__perr(P, &b->in->op_at, GS_ERR_PARSE, "%s takes %s, found %d operands", b->in->opcode,
                        scatter ? "n operands, the indices and n updates" : "n operands and n initial values", b->n);
    parts = (gs_value **)gs__arena_alloc(P->ctx, sizeof(gs_value *) * (size_t)n);
    /* b->xs lives in P->vals, which building the reducer computation reuses */
    P->red_xs = (gs_value **)gs__arena_dup(P->ctx, b->xs, sizeof(gs_value *) * (size_t)b->n);
    if (!parts || !P->red_xs) return false;
    /* used only through one get-tuple-element, with a reducer that mixes the components: that result alone
       (gs__pr_variadic_std's form read back). The used result is built first to see which. */
    if ((only = gs__single_gte_user(b)) >= n) only = -1;
    for (i = 0; i < n; i++) {
        gs__bi c = *b;
        k = only >= 0 ? (only + i) % n : i;
        args[0] = P->red_xs[k];
        args[1] = scatter ? P->red_xs[n] : P->red_xs[n + k];
        args[2] = scatter ? P->red_xs[n + 1 + k] : NULL;
        c.xs = args;
        c.x = args[0];
        c.n = scatter ? 3 : 2;
        P->red_k = k;
        P->red_n = n;
        if (!(P->ctx->next_name = gs__arena_printf(P->ctx, "%s.%d", b->name, k))) return false;
        if (!gs__bi_family(&c)) return false;
        P->red_n = 0;
        if (!(parts[k] = c.v)) return gs__builder_failed(P, &b->in->at);
        parts[k]->auto_name = true;   /* made up here: a later instruction of the text may take the name */
        if (only >= 0 && parts[k]->red_n > 0) {   /* the get-tuple-element renames it */
            P->ctx->next_name = NULL;
            b->v = parts[k];
            b->collapsed = true;
            return true;
        }
    }
    P->ctx->next_name = NULL;
    b->v = gs_tuple(b->g, n, parts);
    return true;
}


/* ---- opcodes lowered while parsing ---- */

/* fusion(operands), kind=kLoop|kInput|kOutput|kCustom, calls=C; call(operands), to_apply=C */
GS__FN bool gs__bl_call(gs__bi *b) {
    gs__parser *P = b->P;
    bool fusion = strcmp(b->in->opcode, "fusion") == 0;
    gs__pattr *a = gs__need_attr(P, b->in, fusion ? "calls" : "to_apply");
    gs_value **args;
    int before = (int)stbds_arrlen(b->g->values);
    if (!a) return false;
    if (fusion) {
        gs__pattr *k = gs__need_attr(P, b->in, "kind");
        if (!k) return false;
        if (!(gs__peek_word(k->val, "kLoop") || gs__peek_word(k->val, "kInput") || gs__peek_word(k->val, "kOutput") ||
              gs__peek_word(k->val, "kCustom")))
            return gs__pexpect(P, &k->val, "a fusion kind (kLoop, kInput, kOutput or kCustom)");
    }
    args = (gs_value **)gs__arena_dup(P->ctx, b->xs, sizeof(gs_value *) * (size_t)(b->n > 0 ? b->n : 1));
    if (!args) return false;
    P->ctx->next_name = NULL;
    if (!gs__inline_comp(P, a, b->g, b->name, args, b->n, &b->v)) return false;
    if (b->v && b->v->id < before) b->v = gs__identity(b->g, b->v);   /* the root is a parameter */
    if (b->v) b->v->text_attrs = NULL;   /* the caller's metadata and the like replace the root's */
    return true;
}

/* opt-barrier(x): x (it only orders XLA's scheduling); one operand, an array or a tuple */
GS__FN bool gs__bl_identity(gs__bi *b) {
    if (b->n != 1)
        return gs__perr(b->P, &b->in->op_at, GS_ERR_PARSE, "%s takes 1 operand, found %d", b->in->opcode, b->n);
    b->P->ctx->next_name = NULL;
    b->v = gs__identity(b->g, b->x);
    return true;
}

/* major-to-minor order of a layout (the default when none was written) */
GS__FN void gs__layout_major(const gs__layout *l, int rank, int64_t *order) {
    int i;
    for (i = 0; i < rank; i++) order[i] = l->n ? l->m2m[rank - 1 - i] : i;
}

/* The tiled layout's memory position of the element at physical index idx (the shape's dims in major-to-minor
   order, pdims): XLA's tiled layout, each tiling applied in turn to the most minor dims of the previous shape
   (a tile with more dims than the shape pads it with leading dims of 1): index (.., e) in (.., d) becomes
   (.., e / t, e % t) in (.., ceil(d / t), t), the tile dims moved after all the others. */
GS__FN int64_t gs__tiled_offset(const gs__layout *l, int rank, const int64_t *pdims, const int64_t *idx) {
    int64_t d[GS__MAX_TILINGS * GS__MAX_TILE_RANK + GS_MAX_RANK], e[GS__MAX_TILINGS * GS__MAX_TILE_RANK + GS_MAX_RANK];
    int64_t nd[GS__MAX_TILINGS * GS__MAX_TILE_RANK + GS_MAX_RANK], ne[GS__MAX_TILINGS * GS__MAX_TILE_RANK + GS_MAX_RANK];
    int n = rank, k, i, m, lead;
    int64_t off = 0;
    for (i = 0; i < rank; i++) {
        d[i] = pdims[i];
        e[i] = idx[i];
    }
    for (k = 0; k < l->n_tilings; k++) {
        m = l->tile_n[k];
        if (m > n) {   /* pad with leading dims of 1 */
            memmove(d + (m - n), d, (size_t)n * sizeof d[0]);
            memmove(e + (m - n), e, (size_t)n * sizeof e[0]);
            for (i = 0; i < m - n; i++) d[i] = 1, e[i] = 0;
            n = m;
        }
        lead = n - m;
        for (i = 0; i < lead; i++) nd[i] = d[i], ne[i] = e[i];
        for (i = 0; i < m; i++) {
            int64_t t = l->tile[k][i];
            nd[lead + i] = (d[lead + i] + t - 1) / t;
            ne[lead + i] = e[lead + i] / t;
            nd[n + i] = t;
            ne[n + i] = e[lead + i] % t;
        }
        n += m;
        memcpy(d, nd, (size_t)n * sizeof d[0]);
        memcpy(e, ne, (size_t)n * sizeof e[0]);
    }
    for (i = 0; i < n; i++) off = off * d[i] + e[i];
    return off;
}

/* bitcast between layouts with tiles: exact when every element keeps its memory position as if neither layout
   were tiled (both walked in their physical order), which makes it the minor_to_major bitcast below; any
   other tiled bitcast moves elements within tiles (or reads padding) and is refused. */
GS__FN bool gs__tiled_bitcast_plain(const gs_shape *xs, const gs__layout *xl, const gs_shape *ys, const gs__layout *yl) {
    int64_t xo[GS_MAX_RANK], yo[GS_MAX_RANK], xd[GS_MAX_RANK], yd[GS_MAX_RANK], xi[GS_MAX_RANK], yi[GS_MAX_RANK];
    int64_t n = gs_shape_numel(xs), k;
    int i;
    if (n != gs_shape_numel(ys)) return false;
    gs__layout_major(xl, xs->rank, xo);
    gs__layout_major(yl, ys->rank, yo);
    for (i = 0; i < xs->rank; i++) xd[i] = xs->dims[xo[i]], xi[i] = 0;
    for (i = 0; i < ys->rank; i++) yd[i] = ys->dims[yo[i]], yi[i] = 0;
    for (k = 0; k < n; k++) {
        if (gs__tiled_offset(xl, xs->rank, xd, xi) != gs__tiled_offset(yl, ys->rank, yd, yi)) return false;
        for (i = xs->rank - 1; i >= 0 && ++xi[i] == xd[i]; i--) xi[i] = 0;
        for (i = ys->rank - 1; i >= 0 && ++yi[i] == yd[i]; i--) yi[i] = 0;
    }
    return true;
}

/* bitcast(x): the same bytes seen with another shape and layout. Element i of the result in its layout's
   physical order is element i of x in x's physical order: transpose x to its physical order, reshape, and
   transpose back from the result's physical order. */
GS__FN bool gs__bl_bitcast(gs__bi *b) {
    gs__parser *P = b->P;
    const gs__pinst *src;
    int64_t in_order[GS_MAX_RANK], out_order[GS_MAX_RANK], phys[GS_MAX_RANK], back[GS_MAX_RANK];
    int i, r;
    bool ident = true, same;
    gs_value *v;
    if (b->n != 1) return gs__perr(P, &b->in->op_at, GS_ERR_PARSE, "bitcast takes 1 operand, found %d", b->n);
    src = &P->insts[P->ops[b->in->first_op].inst];
    if (b->in->type.tuple || b->x->shape.dtype == GS_TUPLE)
        return gs__perr(P, &b->in->op_at, GS_ERR_UNSUPPORTED, "bitcast of a tuple is not supported");
    if (b->x->shape.dtype != b->ds->dtype)
        return gs__perr(P, &b->in->type.at, GS_ERR_PARSE, "bitcast '%s' changes the element type (%s to %s): that is bitcast-convert",
                        b->in->name, gs_dtype_name(b->x->shape.dtype), gs_dtype_name(b->ds->dtype));
    if ((src->type.lay.n_tilings || b->in->type.lay.n_tilings) &&
        !gs__tiled_bitcast_plain(&b->x->shape, &src->type.lay, b->ds, &b->in->type.lay))
        return gs__perr(P, &b->in->op_at, GS_ERR_UNSUPPORTED,
                        "bitcast '%s' between tiled layouts moves elements within their tiles (or onto padding); only a "
                        "bitcast that keeps every element where the untiled layouts put it is supported", b->in->name);
    P->ctx->next_name = NULL;
    v = b->x;
    gs__layout_major(&src->type.lay, v->shape.rank, in_order);
    for (i = 0; i < v->shape.rank; i++) ident = ident && in_order[i] == i;
    if (!ident) v = gs_transpose(b->g, v, in_order);
    r = b->ds->rank;
    gs__layout_major(&b->in->type.lay, r, out_order);
    ident = true;
    for (i = 0; i < r; i++) {
        phys[i] = b->ds->dims[out_order[i]];
        back[out_order[i]] = i;
        ident = ident && out_order[i] == i;
    }
    same = v->shape.rank == r;
    for (i = 0; same && i < r; i++) same = v->shape.dims[i] == phys[i];
    if (!same) v = gs_reshape(b->g, v, r, phys);
    if (!ident) v = gs_transpose(b->g, v, back);
    b->v = v == b->x ? gs_copy(b->g, v) : v;   /* the instruction needs a value of its own */
    return true;
}

/* collective-broadcast(x), replica_groups=G: every member of a group gets the operand of the group's first
   member (XLA's root). Read as: x as a block of one along a new leading dim, all-gathered over the group,
   and the first block kept (exact for every value). */
GS__FN bool gs__bl_collective_broadcast(gs__bi *b) {
    gs_collective_desc cd;
    int64_t dims[GS_MAX_RANK], lo[GS_MAX_RANK], hi[GS_MAX_RANK], st[GS_MAX_RANK];
    gs_value *v;
    int i, r;
    if (b->n != 1) return gs__perr(b->P, &b->in->op_at, GS_ERR_PARSE, "collective-broadcast takes 1 operand, found %d", b->n);
    if (!gs__coll_desc(b->P, b->in, &cd)) return false;
    r = b->x->shape.rank;
    if (r + 1 > GS_MAX_RANK) return gs__perr(b->P, &b->in->op_at, GS_ERR_UNSUPPORTED, "collective-broadcast of rank GS_MAX_RANK");
    dims[0] = 1;
    for (i = 0; i < r; i++) dims[i + 1] = b->x->shape.dims[i];
    b->P->ctx->next_name = NULL;
    v = gs_all_gather(b->g, gs_reshape(b->g, b->x, r + 1, dims), 0, &cd);
    for (i = 0; i <= r; i++) {
        lo[i] = 0;
        hi[i] = i == 0 ? 1 : dims[i];
        st[i] = 1;
    }
    v = gs_slice(b->g, v, lo, hi, st);
    b->v = gs_reshape(b->g, v, r, b->x->shape.dims);
    return true;
}

/* X-start(operands): the op X itself; when the start's shape is XLA's tuple (operands, result, u32[]
   contexts...), that tuple, with zeros for the contexts. X-done(start): the result. The pair is the op:
   gshard.h runs it when it is reached. */
GS__FN bool gs__bl_async_start(gs__bi *b) {
    static const char *const bases[] = {"all-reduce", "all-gather", "collective-permute", "copy", "all-to-all"};
    static const gs_op ops[] = {GS_OP_ALL_REDUCE, GS_OP_ALL_GATHER, GS_OP_COLLECTIVE_PERMUTE, GS_OP_COPY, GS_OP_ALL_TO_ALL};
    gs__parser *P = b->P;
    gs_value *parts[64];
    int i, k, n = 0, want = b->in->type.tuple ? b->in->type.n : 0;
    bool ok;
    for (i = 0; i < GS__COUNTOF(bases); i++)
        if (strncmp(b->in->opcode, bases[i], strlen(bases[i])) == 0 && strcmp(b->in->opcode + strlen(bases[i]), "-start") == 0) break;
    if (i == GS__COUNTOF(bases)) return gs__bi_unsupported(b);
    if (b->n < 1 || (ops[i] != GS_OP_ALL_REDUCE && b->n != 1))
        return gs__perr(P, &b->in->op_at, GS_ERR_PARSE, "%s takes %s1 operand, found %d", b->in->opcode,
                        ops[i] == GS_OP_ALL_REDUCE ? "at least " : "", b->n);
    /* the all-reduce-start of several operands, or an array-shaped start: the op's own result */
    if (ops[i] == GS_OP_ALL_REDUCE || !b->in->type.tuple) {
        b->in->op = ops[i];
        ok = gs__bi_family(b);
        b->in->op = GS_OP_INVALID;
        return ok;
    }
    if (b->in->type.n_tree && ops[i] == GS_OP_ALL_TO_ALL) {   /* ((operand), result), as XLA prints it */
        gs_value *ot;
        P->ctx->next_name = NULL;
        ot = gs_tuple(b->g, 1, &b->x);
        b->in->op = ops[i];
        ok = gs__bi_family(b);
        b->in->op = GS_OP_INVALID;
        if (!ok) return false;
        parts[0] = ot;
        parts[1] = b->v;
        b->v = gs_tuple(b->g, 2, parts);
        return true;
    }
    if (want < 2 || want > 64)
        return gs__perr(P, &b->in->type.at, GS_ERR_PARSE, "%s '%s': expected the shape (operand, result, contexts...)",
                        b->in->opcode, b->in->name);
    parts[n++] = b->x;
    P->ctx->next_name = NULL;
    b->in->op = ops[i];
    ok = gs__bi_family(b);
    b->in->op = GS_OP_INVALID;
    if (!ok) return false;
    parts[n++] = b->v;
    for (k = n; k < want; k++) {
        const gs_shape *e = &P->elems[b->in->type.first + k];
        if (e->rank != 0) return gs__perr(P, &b->in->type.at, GS_ERR_PARSE, "%s '%s': a context element must be a scalar", b->in->opcode, b->in->name);
        parts[n++] = gs_scalar(b->g, e->dtype, 0);
    }
    b->v = gs_tuple(b->g, n, parts);
    return true;
}

/* async-start(operands), calls=C, and XLA's short form call-start(operands), to_apply=C: C inlined on the
   operands, the value XLA's tuple ((operands), result, contexts...) with zeros for the scalar contexts;
   async-update passes it on and async-done (call-done) takes the result. The wrapped computation runs where
   the start is reached (gshard.h overlaps nothing), so the three are one op, as the collective pairs are. */
GS__FN bool gs__bl_async_call(gs__bi *b) {
    gs__parser *P = b->P;
    bool sugar = strcmp(b->in->opcode, "call-start") == 0;
    gs__pattr *a = gs__need_attr(P, b->in, sugar ? "to_apply" : "calls");
    gs_value **args, *parts[64], *r = NULL;
    int k, n = 2, leaves, before = (int)stbds_arrlen(b->g->values);
    if (!a) return false;
    if (!b->in->type.tuple || b->in->shape_omitted)
        return gs__perr(P, &b->in->type.at, GS_ERR_PARSE, "%s '%s' needs its shape written: ((operands), result, contexts...)",
                        b->in->opcode, b->in->name);
    args = (gs_value **)gs__arena_dup(P->ctx, b->xs, sizeof(gs_value *) * (size_t)(b->n > 0 ? b->n : 1));
    if (!args) return false;
    P->ctx->next_name = NULL;
    if (!gs__inline_comp(P, a, b->g, b->name, args, b->n, &r)) return false;
    if (r && r->id < before) r = gs__identity(b->g, r);   /* the computation returns a parameter */
    if (!(parts[0] = gs_tuple(b->g, b->n, args)) || !(parts[1] = r)) return gs__builder_failed(P, &b->in->at);
    /* the contexts: the declared leaves after the operands' and the result's */
    leaves = b->in->type.n - (parts[0]->shape.dtype == GS_TUPLE ? parts[0]->n_tuple : 1) -
             (r->shape.dtype == GS_TUPLE ? r->n_tuple : 1);
    if (leaves < 0 || leaves > 62)
        return gs__perr(P, &b->in->type.at, GS_ERR_PARSE, "%s '%s': expected the shape ((operands), result, contexts...)",
                        b->in->opcode, b->in->name);
    for (k = b->in->type.n - leaves; k < b->in->type.n; k++) {
        const gs_shape *e = &P->elems[b->in->type.first + k];
        if (e->rank != 0 || e->dtype == GS_TUPLE)
            return gs__perr(P, &b->in->type.at, GS_ERR_UNSUPPORTED, "%s '%s': a context element that is not a scalar",
                            b->in->opcode, b->in->name);
        parts[n++] = gs_scalar(b->g, e->dtype, 0);
    }
    b->v = gs_tuple(b->g, n, parts);
    return true;
}

GS__FN bool gs__bl_async_done(gs__bi *b) {
    const gs__pinst *src;
    if (b->n != 1) return gs__perr(b->P, &b->in->op_at, GS_ERR_PARSE, "%s takes 1 operand, found %d", b->in->opcode, b->n);
    src = &b->P->insts[b->P->ops[b->in->first_op].inst];
    b->P->ctx->next_name = NULL;
    if (strcmp(src->opcode, "all-reduce-start") != 0 && src->type.tuple && b->x->shape.dtype == GS_TUPLE && b->x->n_tuple >= 2)
        b->v = gs__identity(b->g, gs_get_tuple_element(b->g, b->x, 1));
    else
        b->v = gs__identity(b->g, b->x);
    return true;
}

/* the builder of a lowered opcode */
GS__FN bool gs__bi_lowered(gs__bi *b) {
    static bool (*const fns[])(gs__bi *) = {
#define GS__X_FN(s, fn) fn,
        GS__HLO_LOWERED(GS__X_FN)
#undef GS__X_FN
    };
    return fns[b->in->lowered - 1](b);
}

/* the name of an instruction's value: as written, or "<caller>.<name>" inside an inlined computation (with
   ".N" added if that is taken) */
GS__FN const char *gs__inst_name(gs__parser *P, const gs__pcomp *comp, const gs__pinst *in) {
    const char *nm;
    int k;
    if (!comp->prefix) return in->name;
    nm = gs__arena_printf(P->ctx, "%s.%s", comp->prefix, in->name);
    for (k = 1; nm && gs_graph_find(comp->graph, nm); k++)
        nm = gs__arena_printf(P->ctx, "%s.%s.%d", comp->prefix, in->name, k);
    return nm;
}

/* A value the parser made without a name of the text (a step of a lowered op: "reshape.12") may hold a
   name the text uses later: it moves to a fresh one. */
GS__FN bool gs__free_name(gs__parser *P, gs_graph *g, const gs_value *v, const char *name) {
    gs_value *other = gs_graph_find(g, name);
    const char *fresh;
    int k;
    if (!other || other == v || !other->auto_name) return true;
    for (k = 1;; k++) {
        if (!(fresh = gs__arena_printf(P->ctx, "%s.x%d", name, k))) return false;
        if (!gs_graph_find(g, fresh)) break;
    }
    if (gs_value_set_name(other, fresh) != GS_OK) return false;
    other->auto_name = true;
    return true;
}

/* Attributes that change nothing gshard.h computes, kept on the value and printed back */
static const char *const gs__kept_attrs[] = {"metadata", "frontend_attributes", "backend_config", "statistics"};

/* Attributes that change nothing gshard.h computes and are not printed back: scheduling and layout hints,
   promises (sorted or unique indices, a stable sort: gshard.h's sort is stable), numeric precision requests
   (the interpreter computes at least as precisely), and the bookkeeping of other compilers' passes */
static const char *const gs__harmless_attrs[] = {
    "control-predecessors", "original_value", "result_accuracy", "operand_precision", "algorithm",
    "indices_are_sorted", "unique_indices", "is_stable", "constrain_layout", "api_version",
    "custom_call_has_side_effect", "output_to_operand_aliasing", "operand_layout_constraints", "schedule",
    "custom_call_schedule", "padding_type", "parameter_replication", "is_cross_program_prefetch",
    "cross_program_prefetch_index", "execution_thread", "async_execution_thread", "precision_config", "origin",
    "outer_dimension_partitions", "sharding"};

/* every attribute XLA's parser knows (for "did you mean" and for "does not apply to") */
static const char *const gs__xla_attrs[] = {
    "algorithm", "api_version", "backend_config", "batch_group_count", "body", "branch_computations",
    "calls", "channel_id", "collapsed_slice_dims", "comparison_type", "concat_dimension", "condition",
    "constrain_layout", "control-predecessors", "custom_call_has_side_effect", "custom_call_schedule",
    "custom_call_target", "dim_labels", "dimensions", "direction", "distribution", "dynamic_slice_sizes",
    "epsilon", "exponent_bits", "false_computation", "feature_group_count", "feature_index", "fft_length",
    "fft_type", "frontend_attributes", "full_shape", "index", "index_vector_dim", "indices_are_sorted",
    "infeed_config", "input_batching_dims", "inserted_window_dims", "iota_dimension", "is_host_transfer",
    "is_stable", "k", "kind", "largest", "lhs_batch_dims", "lhs_contracting_dims", "lhs_ragged_dims",
    "mantissa_bits", "metadata", "offset_dims", "operand_batching_dims", "operand_layout_constraints",
    "operand_precision", "original_value", "outfeed_config", "outfeed_shape", "output_to_operand_aliasing",
    "padding", "padding_type", "parameter_replication", "replica_groups", "result_accuracy", "reverse",
    "rhs_batch_dims", "rhs_contracting_dims", "rhs_group_dims", "rng_algorithm", "scatter_dimension",
    "scatter_dims_to_operand_dims", "scatter_indices_batching_dims", "schedule", "seed", "sharding", "slice",
    "slice_sizes", "source_target_pairs", "split_count", "split_dimension", "start_index_map",
    "start_indices_batching_dims", "statistics", "to_apply", "true_computation", "type", "unique_indices",
    "update_window_dims", "use_global_device_ids", "window", "left_side", "lower", "transpose_a",
    "unit_diagonal", "dot_dimension_numbers", "called_computations", "select", "scatter", "precision_config",
    "origin", "outer_dimension_partitions", "async_execution_thread"};

/* Every attribute of in was read by its builder, or is known harmless; the kept ones go to v->text_attrs.
   Anything else is an error naming it: an attribute nothing reads must never be dropped silently. */
GS__FN bool gs__check_attrs(gs__parser *P, const gs__pinst *in, gs_value *v, bool keep) {
    gs__sb sb;
    int k;
    gs__sb_init(&sb, P->ctx);
    for (k = in->first_attr; k < in->first_attr + in->n_attrs; k++) {
        const gs__pattr *a = &P->attrs[k];
        if (v->op == GS_OP_OPAQUE && keep) {   /* printed back exactly as written */
            if (strcmp(a->name, "sharding") != 0)
                gs__sb_printf(&sb, ", %s=%.*s", a->name, (int)(a->val.end - a->val.p), a->val.p);
            continue;
        }
        if (a->used || gs__in_list(a->name, gs__harmless_attrs, GS__COUNTOF(gs__harmless_attrs))) continue;
        if (gs__in_list(a->name, gs__kept_attrs, GS__COUNTOF(gs__kept_attrs))) {
            if (keep) gs__sb_printf(&sb, ", %s=%.*s", a->name, (int)(a->val.end - a->val.p), a->val.p);
            continue;
        }
        gs__sb_free(&sb);
        if (gs__in_list(a->name, gs__xla_attrs, GS__COUNTOF(gs__xla_attrs)))
            return gs__perr(P, &a->at, GS_ERR_UNSUPPORTED, "attribute '%s' is not read on %s '%s'", a->name,
                            in->opcode, in->name);
        {
            const char *near = gs__closest(a->name, gs__xla_attrs, GS__COUNTOF(gs__xla_attrs));
            if (near)
                return gs__perr(P, &a->at, GS_ERR_PARSE, "unknown attribute '%s' (did you mean '%s'?)", a->name, near);
            return gs__perr(P, &a->at, GS_ERR_PARSE, "unknown attribute '%s'", a->name);
        }
    }
    if (sb.oom) {
        gs__sb_free(&sb);
        return gs__perr(P, &in->at, GS_ERR_OUT_OF_MEMORY, "out of memory");
    }
    if (sb.buf && keep) v->text_attrs = gs__arena_printf(P->ctx, "%s%s", sb.buf, v->text_attrs ? v->text_attrs : "");
    gs__sb_free(&sb);
    return true;
}

/* An attribute XLA's parser does not know is an error before anything the builder found (a misspelt
   lhs_ragged_dims= reads as a typo, not as a ragged dot without ragged dims); false with it reported. */
GS__FN bool gs__unknown_attr(gs__parser *P, const gs__pinst *in) {
    int k;
    for (k = in->first_attr; k < in->first_attr + in->n_attrs; k++) {
        const gs__pattr *a = &P->attrs[k];
        const char *near;
        if (gs__in_list(a->name, gs__xla_attrs, GS__COUNTOF(gs__xla_attrs)) ||
            gs__in_list(a->name, gs__harmless_attrs, GS__COUNTOF(gs__harmless_attrs)) ||
            gs__in_list(a->name, gs__kept_attrs, GS__COUNTOF(gs__kept_attrs)))
            continue;
        gs_ctx_clear_error(P->ctx);
        near = gs__closest(a->name, gs__xla_attrs, GS__COUNTOF(gs__xla_attrs));
        if (near) return gs__perr(P, &a->at, GS_ERR_PARSE, "unknown attribute '%s' (did you mean '%s'?)", a->name, near);
        return gs__perr(P, &a->at, GS_ERR_PARSE, "unknown attribute '%s'", a->name);
    }
    return true;
}

/* true if a sharding's text is the tuple form "{{...}, {...}}" */
GS__FN bool gs__tuple_sharding_text(const char *s) {
    while (*s == ' ') s++;
    if (*s == '{') s++;
    while (*s == ' ') s++;
    return *s == '{' || *s == '}';
}

/* XLA reads one array sharding on a tuple-shaped instruction as that sharding on every element */
GS__FN const char *gs__spread_sharding(gs__parser *P, const char *sh, int n) {
    gs__sb sb;
    int i;
    gs__sb_init(&sb, P->ctx);
    gs__sb_puts(&sb, "{");
    for (i = 0; i < n; i++) gs__sb_printf(&sb, "%s%s", i ? ", " : "", sh);
    gs__sb_puts(&sb, "}");
    return gs__sb_finish(&sb, "gs_hlo_parse");
}

/* Opcodes whose declared type must be the one they compute even under XLA's mixed precision (they only move or
   reinterpret data: the HLO verifier's list) */
static const char *const gs__exact_type_ops[] = {
    "bitcast", "call", "conditional", "constant", "copy-done", "copy-start", "custom-call", "get-tuple-element",
    "infeed", "outfeed", "opt-barrier", "parameter", "recv", "recv-done", "send", "send-done", "tuple", "while"};

/* v, built for instruction in, is not of its declared shape. XLA's mixed precision (its verifier with
   allow_mixed_precision, as the TPU pipeline runs it after BFloat16Propagation and BFloat16ConversionFolding) lets
   an array instruction declare another floating-point type than it computes: the value is the op's, converted to
   the declared type (FloatNormalization rewrites it so: the op in the computed type, then a convert). Returns the
   convert (v keeps the name "<name>.wide"), or NULL with the shape error. */
GS__FN gs_value *gs__mixed_precision(gs__parser *P, gs__pcomp *comp, const gs__pinst *in, gs_value *v, const char *name) {
    const gs_shape *ds = &in->type.s;
    gs_value *c;
    size_t i;
    bool exact = false;
    for (i = 0; i < GS__COUNTOF(gs__exact_type_ops); i++) exact = exact || strcmp(in->opcode, gs__exact_type_ops[i]) == 0;
    if (exact || in->type.tuple || v->shape.dtype == GS_TUPLE || !gs__is_float(ds->dtype) || !gs__is_float(v->shape.dtype) ||
        ds->rank != v->shape.rank || memcmp(ds->dims, v->shape.dims, sizeof(int64_t) * (size_t)ds->rank) != 0) {
        gs__shape_mismatch(P, &in->type.at, in->opcode, in->name, &in->type, v);
        return NULL;
    }
    name = gs__arena_printf(P->ctx, "%s.wide", name);
    if (!name || !gs__free_name(P, comp->graph, v, name) || gs_value_set_name(v, name) != GS_OK) return NULL;
    v->auto_name = true;   /* made up here: a later instruction of the text may take the name */
    if (!(c = gs_convert(comp->graph, v, ds->dtype))) gs__builder_failed(P, &in->at);
    return c;
}

/* XLA's mixed precision in the operands: the floating-point operands of one op in several floating-point types
   (an f32 and a bf16) are computed in the widest of them (FloatNormalization converts the others so), each other
   one converted to it. Not for ops that only move data (gs__exact_type_ops), those whose operands may have types
   of their own (sort, collectives, variadic reduce, reduce-window and scatter), nor dot, which reads operand
   types that widen exactly to its result itself. */
GS__FN bool gs__mixed_inputs(gs__parser *P, gs__pcomp *comp, const gs__pinst *in, gs_value **xs, int n) {
    gs_op op = in->op;
    gs_dtype w = GS_DTYPE_INVALID;
    bool mixed = false;
    size_t i;
    int k;
    if (n < 2 || in->lowered || op == GS_OP_SORT || op == GS_OP_DOT ||
        (op >= GS_OP_ALL_REDUCE && op <= GS_OP_COLLECTIVE_PERMUTE) ||
        ((op == GS_OP_REDUCE || op == GS_OP_REDUCE_WINDOW) && n > 2) || (op == GS_OP_SCATTER && n > 3))
        return true;
    for (i = 0; i < GS__COUNTOF(gs__exact_type_ops); i++)
        if (strcmp(in->opcode, gs__exact_type_ops[i]) == 0) return true;
    for (k = 0; k < n; k++) {
        gs_dtype t = xs[k] ? xs[k]->shape.dtype : GS_DTYPE_INVALID;
        if (!xs[k] || t == GS_TUPLE || !gs__is_float(t) || t == w) continue;
        if (w != GS_DTYPE_INVALID) {
            mixed = true;
            if (gs_dtype_size(t) == gs_dtype_size(w)) t = GS_F32;   /* bf16 and f16: f32 holds both */
            else if (gs_dtype_size(t) < gs_dtype_size(w)) t = w;
        }
        w = t;
    }
    for (k = 0; mixed && k < n; k++)
        if (xs[k] && xs[k]->shape.dtype != GS_TUPLE && gs__is_float(xs[k]->shape.dtype) && xs[k]->shape.dtype != w) {
            P->ctx->next_name = NULL;
            if (!(xs[k] = gs_convert(comp->graph, xs[k], w))) return gs__builder_failed(P, &in->at);
        }
    return true;
}

GS__FN bool gs__build_inst(gs__parser *P, gs__pcomp *comp, gs__pinst *in) {
    gs_value *v, **xs;
    gs__pattr *a;
    int n = in->n_ops, k;
    gs_op op = in->op;
    bool inlined_param = comp->prefix && op == GS_OP_PARAMETER;
    gs__bi b;

    stbds_arrsetlen(P->vals, n);
    xs = P->vals;
    for (k = 0; k < n; k++) {
        const gs__poperand *o = &P->ops[in->first_op + k];
        xs[k] = P->insts[o->inst].value;
        if (o->typed && !gs__pshape_matches(P, &o->type, xs[k]))
            return gs__shape_mismatch(P, &o->type.at, "operand", o->name, &o->type, xs[k]);
    }
    if (!in->lowered) {
        int arity = gs_op_arity(op), least = 0;
        if (op == GS_OP_DYNAMIC_SLICE || op == GS_OP_CONCATENATE || op == GS_OP_SORT) least = 1;
        if (op == GS_OP_ANNOTATE) {   /* custom-call: the sharding targets and markers take one operand */
            static const char *const one[] = {"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape"};
            bool unary = false;
            int t;
            for (t = 0; t < GS__COUNTOF(one); t++) unary = unary || gs__attr_is(P, in, "custom_call_target", one[t]);
            for (t = 0; t < GS__COUNTOF(gs__identity_targets); t++)
                unary = unary || gs__attr_is(P, in, "custom_call_target", gs__identity_targets[t]);
            arity = -1;
            if (unary && n != 1)
                return gs__perr(P, &in->op_at, GS_ERR_PARSE, "custom-call '%s' takes 1 operand here, found %d", in->name, n);
        }
        if (op == GS_OP_REDUCE || op == GS_OP_REDUCE_WINDOW || op == GS_OP_SCATTER) {   /* variadic forms */
            least = arity;
            arity = -1;
        }
        if (op >= GS_OP_ALL_REDUCE && op <= GS_OP_ALL_TO_ALL) {   /* and their variadic forms */
            arity = -1;
            least = 1;
        }
        if (op == GS_OP_DYNAMIC_UPDATE_SLICE || op == GS_OP_RNG) least = 2;
        if ((arity >= 0 && n != arity) || n < least)
            return gs__perr(P, &in->op_at, GS_ERR_PARSE, "%s takes %s%d operand%s, found %d", in->opcode,
                            arity < 0 ? "at least " : "", arity < 0 ? least : arity,
                            (arity < 0 ? least : arity) == 1 ? "" : "s", n);
    }
    if (!gs__mixed_inputs(P, comp, in, xs, n)) return false;
    if (in->shape_omitted && (op == GS_OP_PARAMETER || op == GS_OP_CONSTANT || op == GS_OP_IOTA || op == GS_OP_BROADCAST ||
                              op == GS_OP_RESHAPE || op == GS_OP_CONVERT || op == GS_OP_RNG || op == GS_OP_ANNOTATE ||
                              op == GS_OP_BITCAST_CONVERT || op == GS_OP_RNG_BIT_GENERATOR ||
                              in->lowered == gs__hlo_lowered_opcode("bitcast")))
        return gs__perr(P, &in->op_at, GS_ERR_PARSE, "%s '%s' needs its shape written (it is not inferred)", in->opcode,
                        in->name);
    if (in->type.tuple && (op == GS_OP_CONSTANT || op == GS_OP_IOTA || op == GS_OP_BROADCAST ||
                           op == GS_OP_RESHAPE || op == GS_OP_CONVERT || op == GS_OP_RNG))
        return gs__perr(P, &in->type.at, GS_ERR_PARSE, "%s '%s' needs an array shape, not a tuple", in->opcode,
                        in->name);

    memset(&b, 0, sizeof b);
    b.P = P;
    b.comp = comp;
    b.in = in;
    b.g = comp->graph;
    b.xs = xs;
    b.x = n > 0 ? xs[0] : NULL;
    b.n = n;
    b.ds = &in->type.s;
    if (!(b.name = gs__inst_name(P, comp, in)) || !gs__free_name(P, comp->graph, NULL, b.name)) return false;
    P->ctx->next_name = b.name; /* the builder below names its value (and its errors) as the text does */
    P->red_n = 0;
    if (!(in->lowered ? gs__bi_lowered(&b)
                      : ((op == GS_OP_REDUCE || op == GS_OP_REDUCE_WINDOW) && n > 2) || (op == GS_OP_SCATTER && n > 3)
                            ? gs__bi_variadic(&b)
                            : gs__bi_family(&b)))
        return false;
    v = b.v;
    P->ctx->next_name = NULL; /* unused when the builder failed before making a value */
    if (!v) return gs__unknown_attr(P, in) && gs__builder_failed(P, &in->at);
    if (!in->shape_omitted && !b.collapsed && !gs__pshape_matches(P, &in->type, v) &&
        !(v = gs__mixed_precision(P, comp, in, v, b.name)))
        return false;
    if (op != GS_OP_PARAMETER && (!gs__free_name(P, comp->graph, v, b.name) || gs_value_set_name(v, b.name) != GS_OK))
        return gs__builder_failed(P, &in->at);
    if (op != GS_OP_PARAMETER && comp->prefix) v->auto_name = true;   /* "<caller>.<name>" is made up too */
    /* a LayoutConstraint custom-call (read as a copy) keeps its sharding, as XLA's partitioner honours it */
    if (!inlined_param &&
        ((op != GS_OP_ANNOTATE && op != GS_OP_TO_MANUAL && op != GS_OP_TO_FULL) ||
         (v->op == GS_OP_COPY && gs__attr_is(P, in, "custom_call_target", "LayoutConstraint"))) &&
        (a = gs__attr(P, in, "sharding")) != NULL) {
        const char *sh = gs__pstr(P, a->val.p, (size_t)(a->val.end - a->val.p));
        if (!sh) return false;
        if (gs__nt_is_spec(sh)) {   /* sharding={X, _} over the header's mesh */
            uint32_t open = 0;
            const gs_sharding *ms = gs__nt_value_sharding(P->ctx, P->mesh, sh, v, &open);
            if (!ms) return gs__builder_failed(P, &a->at);
            if (open) return gs__perr(P, &a->at, GS_ERR_PARSE, "'?' (an open dim) only on a Sharding annotation");
            if (gs_value_set_sharding(v, ms) != GS_OK) return gs__builder_failed(P, &a->at);
        } else if (v->shape.dtype == GS_TUPLE && v->n_tuple > 0 && !gs__tuple_sharding_text(sh) &&
                   !(sh = gs__spread_sharding(P, sh, v->n_tuple))) {
            return false;
        } else if (gs_value_set_sharding_text(v, sh) != GS_OK) {
            /* an opaque op's sharding may describe what it reads (outfeed): kept as written, not used */
            if (v->op != GS_OP_OPAQUE) return gs__builder_failed(P, &a->at);
            gs_ctx_clear_error(P->ctx);
            if (!(v->text_attrs = gs__arena_printf(P->ctx, "%s, sharding=%s", v->text_attrs ? v->text_attrs : "", sh))) return false;
            if (!(v->kept_sharding = gs_sharding_parse(P->ctx, sh))) gs_ctx_clear_error(P->ctx);
        }
        /* a variadic op built as one op per component and their tuple: each component keeps its element */
        if (op != GS_OP_TUPLE && v->op == GS_OP_TUPLE && v->sharding && v->sharding->kind == GS_SHARDING_TUPLE) {
            int e;
            for (e = 0; e < v->n_operands && e < v->sharding->n_elems; e++)
                if (v->operands[e]->shape.dtype != GS_TUPLE && !v->operands[e]->sharding_user &&
                    gs_value_set_sharding(v->operands[e], v->sharding->elems[e]) != GS_OK)
                    return gs__builder_failed(P, &a->at);
        }
    }
    if (!gs__check_attrs(P, in, v, !inlined_param)) return false;
    in->value = v;
    return true;
}

/* Builds the instructions of comp into comp->graph (its own graph, or the caller's while inlined). */
GS__FN bool gs__build_body(gs__parser *P, gs__pcomp *comp) {
    int i, k, base;
    for (i = comp->first_inst; i < comp->first_inst + comp->n_inst; i++) {
        gs__pinst *in = &P->insts[i];
        in->state = 0;
        in->value = NULL;
        for (k = 0; k < in->n_ops; k++) {
            gs__poperand *o = &P->ops[in->first_op + k];
            ptrdiff_t j = stbds_shgeti(comp->names, (char *)o->name);
            if (j < 0) return gs__perr(P, &o->at, GS_ERR_PARSE, "unknown operand '%s'", o->name);
            o->inst = comp->names[j].value;
        }
    }
    /* depth-first over operands with an explicit stack (any textual order; a cycle is an error) */
    base = (int)stbds_arrlen(P->stack);
    for (i = comp->first_inst; i < comp->first_inst + comp->n_inst; i++) {
        if (P->insts[i].state != 0) continue;
        stbds_arrput(P->stack, i);
        while ((int)stbds_arrlen(P->stack) > base) {
            int t = P->stack[stbds_arrlen(P->stack) - 1];
            gs__pinst *in = &P->insts[t];
            if (in->state == 2) {
                (void)stbds_arrpop(P->stack);
            } else if (in->state == 0) {
                in->state = 1;
                for (k = in->n_ops - 1; k >= 0; k--) {
                    const gs__poperand *o = &P->ops[in->first_op + k];
                    int dep = o->inst;
                    if (P->insts[dep].state == 1)
                        return gs__perr(P, &o->at, GS_ERR_PARSE, "'%s' depends on itself (a cycle through '%s')",
                                        o->name, in->name);
                    if (P->insts[dep].state == 0) stbds_arrput(P->stack, dep);
                }
            } else {
                if (!gs__build_inst(P, comp, in)) return false;
                in->state = 2;
                (void)stbds_arrpop(P->stack);
            }
        }
    }
    return true;
}

GS__FN bool gs__build_comp(gs__parser *P, int ci) {
    gs__pcomp *comp = &P->comps[ci];
    if (comp->state == 2) return true;
    comp->state = 1;
    comp->graph = gs_graph_new(P->ctx, comp->name);
    if (!comp->graph) return gs__builder_failed(P, &comp->at);
    comp->graph->num_partitions = P->num_partitions;   /* "{}" replica groups mean all of them, in every graph */
    comp->graph->mesh = P->mesh;
    if (!gs__build_body(P, comp)) return false;
    if (gs_graph_set_root(comp->graph, P->insts[comp->root].value) != GS_OK)
        return gs__builder_failed(P, &P->insts[comp->root].at);
    comp->state = 2;
    return true;
}

/* fusion, call (and async-start): the called computation's instructions are built into g, its parameters
   standing for args; *out is its root. Inlining gives every later pass the called computation's exact
   semantics; the printed module shows the inlined instructions (named "<caller>.<name>"). */
GS__FN bool gs__inline_comp(gs__parser *P, const gs__pattr *a, gs_graph *g, const char *prefix,
                            gs_value **args, int n_args, gs_value **out) {
    int ci = gs__called(P, a);
    gs__pcomp *comp;
    gs_graph *saved;
    bool ok;
    if (ci < 0) return false;
    comp = &P->comps[ci];
    if (comp->state == 1 || comp->prefix)
        return gs__perr(P, &a->val, GS_ERR_PARSE, "computation '%s' calls itself", comp->name);
    if (comp->entry)
        return gs__perr(P, &a->val, GS_ERR_PARSE, "the ENTRY computation '%s' cannot be called", comp->name);
    if (P->depth >= GS__HLO_MAX_CALL_DEPTH)
        return gs__perr(P, &a->val, GS_ERR_UNSUPPORTED, "calls nested more than %d deep", GS__HLO_MAX_CALL_DEPTH);
    saved = comp->graph;
    comp->graph = g;
    comp->args = args;
    comp->n_args = n_args;
    comp->prefix = prefix;
    P->depth++;
    ok = gs__build_body(P, comp);
    P->depth--;
    *out = ok ? P->insts[comp->root].value : NULL;
    comp->graph = saved;
    comp->args = NULL;
    comp->n_args = 0;
    comp->prefix = NULL;
    return ok;
}

GS__FN void gs__parser_free(gs__parser *P) {
    int i;
    for (i = 0; i < (int)stbds_arrlen(P->comps); i++) stbds_shfree(P->comps[i].names);
    stbds_arrfree(P->comps);
    stbds_arrfree(P->insts);
    stbds_arrfree(P->ops);
    stbds_arrfree(P->attrs);
    stbds_arrfree(P->elems);
    stbds_arrfree(P->trees);
    stbds_shfree(P->comp_names);
    stbds_arrfree(P->stack);
    stbds_arrfree(P->vals);
    stbds_arrfree(P->ids);
}

GS_API gs_result gs_hlo_parse(gs_ctx *ctx, const char *text, size_t len, gs_graph **entry) {
    gs__parser P;
    bool ok;
    int i;
    if (!ctx) return GS_ERR_INVALID_ARG;
    if (entry) *entry = NULL;
    if (ctx->err != GS_OK) return ctx->err;
    if (!entry || (!text && len > 0))
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_hlo_parse: %s is NULL", entry ? "text" : "entry");
    while (len > 0 && text[len - 1] == '\0') len--;   /* a C string's terminator passed in len */
    {   /* a NUL inside the text: kept attribute text is printed as a C string, so it could not be read back */
        const char *nul = len ? (const char *)memchr(text, 0, len) : NULL;
        if (nul) {
            int line = 1, col = 1;
            const char *q;
            for (q = text; q < nul; q++, col++)
                if (*q == '\n') line++, col = 0;
            return gs__err(ctx, GS_ERR_PARSE, "line %d, column %d: a NUL byte in the text", line, col);
        }
    }
    memset(&P, 0, sizeof P);
    P.ctx = ctx;
    P.c.p = text ? text : "";
    P.c.end = P.c.p + len;
    P.tend = P.c.end;
    P.c.line = P.c.col = 1;
    P.num_partitions = 1;
    ok = gs__parse_module(&P);
    for (i = 0; ok && i < (int)stbds_arrlen(P.comps); i++) {
        if (!P.comps[i].entry) continue;
        ok = gs__build_comp(&P, i);
        if (ok) {
            gs_graph *g = P.comps[i].graph;
            g->module_name = P.module_name ? P.module_name : g->name;
            ok = gs_graph_set_num_partitions(g, P.num_partitions) == GS_OK;
            *entry = g;
        }
    }
    gs__parser_free(&P);
    if (!ok) {
        if (ctx->err == GS_OK) gs__err(ctx, GS_ERR_PARSE, "gs_hlo_parse: failed");
        return ctx->err;
    }
    return GS_OK;
}

/* =========================================================================================================
   gs_hlo_stats: what a module uses, read line by line without parsing it
   ========================================================================================================= */

typedef struct gs__stat { const char *name; int64_t count; bool known; } gs__stat;

/* the first occurrence of the string w in [p, p + n), or NULL */
GS__FN const char *gs__memmem(const char *p, size_t n, const char *w) {
    size_t k = strlen(w), i;
    for (i = 0; i + k <= n; i++)
        if (memcmp(p + i, w, k) == 0) return p + i;
    return NULL;
}

typedef struct gs__stats {
    gs_ctx *ctx;
    gs__stat *cat[5];     /* stb_ds: opcodes, element types, attributes, custom-call targets, sharding forms */
    bool oom;
} gs__stats;

/* attributes some builder reads (besides the kept and harmless ones) */
static const char *const gs__read_attrs[] = {
    "backend_config", "batch_group_count", "body", "calls", "channel_id", "collapsed_slice_dims", "concat_dimension",
    "condition", "custom_call_target", "dim_labels", "dimensions", "direction", "distribution", "dynamic_slice_sizes",
    "feature_group_count", "full_shape", "index", "index_vector_dim", "input_batching_dims", "inserted_window_dims",
    "iota_dimension", "k", "kind", "largest", "lhs_batch_dims", "lhs_contracting_dims", "lhs_ragged_dims", "offset_dims",
    "operand_batching_dims", "padding", "replica_groups", "reverse", "rhs_batch_dims", "rhs_contracting_dims",
    "rhs_group_dims", "scatter_dims_to_operand_dims", "scatter_indices_batching_dims", "seed", "sharding", "slice", "slice_sizes",
    "source_target_pairs", "split_dimension", "start_index_map", "start_indices_batching_dims", "to_apply", "type",
    "update_window_dims", "use_global_device_ids", "window"};

GS__FN void gs__stat_add(gs__stats *st, int cat, const char *p, size_t n, bool known) {
    int i;
    gs__stat s;
    for (i = 0; i < (int)stbds_arrlen(st->cat[cat]); i++) {
        if (strlen(st->cat[cat][i].name) == n && memcmp(st->cat[cat][i].name, p, n) == 0) {
            st->cat[cat][i].count++;
            return;
        }
    }
    s.name = gs__arena_printf(st->ctx, "%.*s", (int)n, p);
    if (!s.name) {
        st->oom = true;
        return;
    }
    s.count = 1;
    s.known = known;
    stbds_arrput(st->cat[cat], s);
}

GS__FN bool gs__stat_word_in(const char *p, size_t n, const char *const *list, int count) {
    int i;
    for (i = 0; i < count; i++)
        if (strlen(list[i]) == n && memcmp(list[i], p, n) == 0) return true;
    return false;
}

/* the end of a balanced group starting at p (one of ( [ { "), or e */
GS__FN const char *gs__stat_skip(const char *p, const char *e) {
    int depth = 0;
    for (; p < e; p++) {
        if (*p == '"') {
            for (p++; p < e && *p != '"'; p++)
                if (*p == '\\') p++;
            if (depth == 0) return p + 1;
        } else if (*p == '(' || *p == '[' || *p == '{') {
            depth++;
        } else if (*p == ')' || *p == ']' || *p == '}') {
            if (--depth <= 0) return p + 1;
        }
    }
    return e;
}

/* a sharding={...} value: its form */
GS__FN void gs__stat_sharding(gs__stats *st, const char *p, const char *e) {
    static const char *const forms[] = {"replicated", "maximal", "manual", "tiled", "tiled, partly replicated",
                                        "tiled, last_tile_dims", "tuple", "named mesh", "unreduced", "other"};
    static const bool known[] = {true, true, true, true, true, true, true, true, true, false};
    int f = 9;
    size_t n = (size_t)(e - p);
#define GS__HAS(w) (gs__memmem(p, n, w) != NULL)
    if (n >= 2 && p[1] == '{') f = 6;
    else if (GS__HAS("mesh[")) f = 7;
    else if (GS__HAS("unreduced")) f = 8;
    else if (GS__HAS("last_tile_dims")) f = 5;
    else if (GS__HAS("last_tile_dim_replicate")) f = 4;
    else if (GS__HAS("devices=")) f = 3;
    else if (GS__HAS("replicated")) f = 0;
    else if (GS__HAS("maximal")) f = 1;
    else if (GS__HAS("manual")) f = 2;
#undef GS__HAS
    gs__stat_add(st, 4, forms[f], strlen(forms[f]), known[f]);
}

/* element types in [p, e): a word directly followed by '[' (quoted strings skipped) */
GS__FN void gs__stat_types(gs__stats *st, const char *p, const char *e) {
    const char *w;
    for (w = p; w < e; w++) {
        const char *b = w;
        bool type = false;
        int t;
        if (*w == '"') {
            w = gs__stat_skip(w, e) - 1;
            continue;
        }
        if (!gs__hlo_alpha((unsigned char)*w) || (w > p && (gs__hlo_name_char((unsigned char)w[-1]) || w[-1] == '\''))) continue;
        while (w < e && (gs__hlo_alpha((unsigned char)*w) || gs__hlo_digit((unsigned char)*w))) w++;
        if (w >= e || *w != '[' || (w - b == 4 && memcmp(b, "mesh", 4) == 0)) continue;
        for (t = 1; t < GS_DTYPE_COUNT; t++)
            if (strlen(gs_dtype_name((gs_dtype)t)) == (size_t)(w - b) && memcmp(gs_dtype_name((gs_dtype)t), b, (size_t)(w - b)) == 0)
                type = true;
        gs__stat_add(st, 1, b, (size_t)(w - b), type);
    }
}

/* one instruction line: "name = shape opcode(operands), attr=value, ..." */
GS__FN void gs__stat_line(gs__stats *st, const char *p, const char *e) {
    const char *q, *w;
    for (q = p; q + 1 < e && !(q[0] == '=' && q[-1] == ' '); q++) {}
    if (q + 1 >= e) return;
    /* the opcode: the first word followed by '(' after the shape */
    for (w = q + 1; w < e && *w == ' '; w++) {}
    if (w < e && *w == '(') w = gs__stat_skip(w, e);
    else
        while (w < e && *w != ' ' && *w != '(') w++;
    while (w < e && *w == ' ') w++;
    {
        const char *b = w;
        while (w < e && gs__hlo_name_char((unsigned char)*w)) w++;
        if (w == b || w >= e || *w != '(') return;
        {
            char op[64];
            size_t n = (size_t)(w - b) < sizeof op - 1 ? (size_t)(w - b) : sizeof op - 1;
            memcpy(op, b, n);
            op[n] = 0;
            gs__stat_add(st, 0, b, (size_t)(w - b), gs__hlo_opcode(op) != GS_OP_INVALID || gs__hlo_lowered_opcode(op) != 0);
        }
    }
    w = gs__stat_skip(w, e);
    gs__stat_types(st, q, w);
    /* attributes at the top level: ", name=value" */
    while (w < e) {
        const char *b, *ne;
        while (w < e && (*w == ',' || *w == ' ')) w++;
        b = w;
        while (w < e && gs__hlo_name_char((unsigned char)*w)) w++;
        ne = w;
        if (w >= e || *w != '=' || ne == b) break;
        w++;
        {
            size_t n = (size_t)(ne - b);
            const char *v = w;
            bool known = gs__stat_word_in(b, n, gs__read_attrs, GS__COUNTOF(gs__read_attrs)) ||
                         gs__stat_word_in(b, n, gs__kept_attrs, GS__COUNTOF(gs__kept_attrs)) ||
                         gs__stat_word_in(b, n, gs__harmless_attrs, GS__COUNTOF(gs__harmless_attrs));
            while (w < e && *w != ',') w = (*w == '{' || *w == '(' || *w == '[' || *w == '"') ? gs__stat_skip(w, e) : w + 1;
            gs__stat_add(st, 2, b, n, known);
            if (n == 18 && memcmp(b, "custom_call_target", 18) == 0 && w - v >= 2) {
                int i;
                bool k = false;
                const char *t = v[0] == '"' ? v + 1 : v;
                size_t tn = (size_t)(w - t) - (v[0] == '"' ? 1 : 0);
                static const char *const own[] = {"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "__cublas$gemm", "TopK",
                                                  "_SPMDInternalOp_RotateRight", "_SPMDInternalOp_MultiRotate",
                                                  "_SPMDInternalOp_MultiSlice", "_SPMDInternalOp_Wrap"};
                k = gs__stat_word_in(t, tn, own, GS__COUNTOF(own));
                for (i = 0; i < GS__COUNTOF(gs__identity_targets); i++)
                    if (strlen(gs__identity_targets[i]) == tn && memcmp(gs__identity_targets[i], t, tn) == 0) k = true;
                gs__stat_add(st, 3, t, tn, k);
            }
            if (n == 8 && memcmp(b, "sharding", 8) == 0) gs__stat_sharding(st, v, w);
        }
    }
}

GS__FN int gs__stat_cmp(const void *a, const void *b) {
    const gs__stat *x = (const gs__stat *)a, *y = (const gs__stat *)b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return strcmp(x->name, y->name);
}

GS_API int gs_hlo_stats(gs_ctx *ctx, const char *text, size_t len, const char **report) {
    static const char *const titles[5] = {"opcodes", "element types", "attributes", "custom-call targets", "sharding forms"};
    gs__stats st;
    gs__sb sb;
    const char *p = text, *e = text + len;
    int c, i, rc = 0, lines = 0;
    if (!ctx || !report || (!text && len)) {
        if (ctx) gs__err(ctx, GS_ERR_INVALID_ARG, "gs_hlo_stats: %s is NULL", report ? "text" : "report");
        return 2;
    }
    *report = NULL;
    memset(&st, 0, sizeof st);
    st.ctx = ctx;
    while (p < e) {
        const char *nl = (const char *)memchr(p, '\n', (size_t)(e - p));
        const char *end = nl ? nl : e;
        const char *s = p;
        while (s < end && (*s == ' ' || *s == '\t')) s++;
        if (end - s > 4 && memcmp(s, "ROOT ", 5) == 0) s += 5;
        if (s < end && (*s == '%' || gs__hlo_name_start((unsigned char)*s)) && gs__memmem(s, (size_t)(end - s), " = ")) {
            gs__stat_line(&st, s, end);
            lines++;
        }
        p = nl ? nl + 1 : e;
    }
    gs__sb_init(&sb, ctx);
    for (c = 0; c < 5; c++) {
        int n = (int)stbds_arrlen(st.cat[c]);
        if (n > 1) qsort(st.cat[c], (size_t)n, sizeof(gs__stat), gs__stat_cmp);
        gs__sb_printf(&sb, "%s (%d):", titles[c], n);
        for (i = 0; i < n; i++) {
            gs__sb_printf(&sb, "%s %s%s %lld", i ? "," : "", st.cat[c][i].known ? "" : "!", st.cat[c][i].name,
                          (long long)st.cat[c][i].count);
            if (!st.cat[c][i].known) rc = 1;
        }
        gs__sb_puts(&sb, "\n");
        stbds_arrfree(st.cat[c]);
    }
    if (lines == 0) {
        gs__sb_puts(&sb, "no HLO instruction found\n");
        rc = 2;
    } else {
        gs__sb_puts(&sb, rc ? "! marks what gshard.h does not understand\n" : "gshard.h understands everything used\n");
    }
    *report = gs__sb_finish(&sb, "gs_hlo_stats");
    if (!*report || st.oom) return 2;
    return rc;
}
