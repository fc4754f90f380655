/* gs_shapes.c - shapes-only runs: the runtime's buffer accounting and collective traffic of an SPMD program
   on D virtual devices, computed from shapes alone (no data, no threads), so it scales to thousands of
   devices. The walk mirrors the reference interpreter's evaluator (gs_interp.c: slots, shared buffers,
   release after the last reader, the while stepper) with byte counts in place of buffers. */
#include "gs_internal.h"

typedef struct gs__so_blk {
    int64_t bytes;
    int refs;
    uint8_t state;   /* GS__SO_* */
} gs__so_blk;
enum { GS__SO_NONE = 0, GS__SO_OWNED, GS__SO_EXTERNAL, GS__SO_GONE, GS__SO_TAKEN };

typedef struct gs__so_frame {
    gs_graph *g;
    int n;
    int64_t *first;      /* value id -> first slot */
    int64_t *blk;        /* slot -> owner slot (-1 unset) */
    gs__so_blk *b;       /* per slot (used when the slot owns a buffer) */
    int *last_use;
    uint8_t *live;
} gs__so_frame;

typedef struct gs__so_coll {
    const gs_value *v;
    int64_t count;
} gs__so_coll;

struct gs_shapes_report {
    gs_ctx *ctx;
    int64_t D;
    int64_t param_bytes, peak;
    const gs_value *peak_at;
    const char *peak_path;
    double *sent;                 /* per device */
    int n_coll;
    gs_shapes_collective *coll;
    int mesh_rank;
    int64_t mesh[GS_COST_MAX_AXES];
};

typedef struct gs__so {
    gs_ctx *ctx;
    const gs_shapes_desc *desc;
    int64_t live, peak;
    const gs_value *peak_at;
    char path[256], peak_path[256];
    gs__so_coll *coll;       /* stb_ds array: collective executions, in first-seen order */
    int64_t depth;   /* executions of the graph being walked (loop trip counts multiplied) */
} gs__so;

GS__FN int gs__so_nslots(const gs_value *v) { return v->shape.dtype == GS_TUPLE ? v->n_tuple : 1; }
GS__FN const gs_shape *gs__so_slot_shape(const gs_value *v, int j) {
    return v->shape.dtype == GS_TUPLE ? &v->tuple[j] : &v->shape;
}

GS__FN void gs__so_count(gs__so *S, int64_t bytes, const gs_value *at) {
    S->live += bytes;
    if (S->live > S->peak) {
        S->peak = S->live;
        S->peak_at = at;
        memcpy(S->peak_path, S->path, sizeof S->path);
    }
}

GS__FN void gs__so_frame_free(gs_ctx *ctx, gs__so_frame *f) {
    gs__free(ctx, f->first);
    gs__free(ctx, f->blk);
    gs__free(ctx, f->b);
    gs__free(ctx, f->last_use);
    gs__free(ctx, f->live);
    memset(f, 0, sizeof *f);
}

GS__FN gs_result gs__so_frame_init(gs__so *S, gs_graph *g, gs__so_frame *f) {
    int64_t total = 0, s;
    int i, k;
    memset(f, 0, sizeof *f);
    f->g = g;
    f->n = (int)stbds_arrlen(g->values);
    if (!g->root) return gs__err(S->ctx, GS_ERR_INVALID_ARG, "shapes-only: graph %s has no root", g->name);
    f->first = (int64_t *)gs__malloc(S->ctx, sizeof(int64_t) * (size_t)(f->n + 1));
    f->last_use = (int *)gs__malloc(S->ctx, sizeof(int) * (size_t)(f->n + 1));
    f->live = (uint8_t *)gs__malloc(S->ctx, (size_t)(f->n + 1));
    if (!f->first || !f->last_use || !f->live) return GS_ERR_OUT_OF_MEMORY;
    for (i = 0; i < f->n; i++) {
        f->first[i] = total;
        total += gs__so_nslots(g->values[i]);
        f->live[i] = 0;
        f->last_use[i] = -1;
    }
    f->first[f->n] = total;
    f->blk = (int64_t *)gs__malloc(S->ctx, sizeof(int64_t) * (size_t)(total + 1));
    f->b = (gs__so_blk *)gs__malloc(S->ctx, sizeof(gs__so_blk) * (size_t)(total + 1));
    if (!f->blk || !f->b) return GS_ERR_OUT_OF_MEMORY;
    for (s = 0; s <= total; s++) {
        f->blk[s] = -1;
        memset(&f->b[s], 0, sizeof f->b[s]);
    }
    if (g->root->graph != g) return gs__err(S->ctx, GS_ERR_INVALID_ARG, "shapes-only: graph %s has no root", g->name);
    f->live[g->root->id] = 1;
    for (i = f->n - 1; i >= 0; i--) {
        const gs_value *v = g->values[i];
        if (!f->live[i]) continue;
        for (k = 0; k < v->n_operands; k++) {
            const gs_value *o = v->operands[k];
            if (!o || o->graph != g || o->id >= i)
                return gs__err(S->ctx, GS_ERR_INVALID_ARG, "shapes-only: %s: %s reads a value that is not before it", g->name,
                               v->name ? v->name : "?");
            f->live[o->id] = 1;
        }
        if ((v->op == GS_OP_WHILE && v->n_operands != 1) ||
            (v->op == GS_OP_GET_TUPLE_ELEMENT &&
             (v->n_operands != 1 || v->index < 0 || v->index >= gs__so_nslots(v->operands[0]))) ||
            (v->op == GS_OP_TUPLE && (v->shape.dtype != GS_TUPLE || v->n_tuple != v->n_operands)) ||
            ((v->op == GS_OP_RESHAPE || v->op == GS_OP_COPY || v->op == GS_OP_ANNOTATE || v->op == GS_OP_CONVERT ||
              gs__cm_is_collective(v->op)) && v->n_operands < 1))
            return gs__err(S->ctx, GS_ERR_SHAPE, "shapes-only: %s %s: operands do not fit the op", gs_op_name(v->op),
                           v->name ? v->name : "?");
    }
    for (i = 0; i < f->n; i++) {
        const gs_value *v = g->values[i];
        if (!f->live[i]) continue;
        for (k = 0; k < v->n_operands; k++) f->last_use[v->operands[k]->id] = i;
    }
    f->last_use[g->root->id] = INT_MAX;
    return GS_OK;
}

GS__FN void gs__so_new(gs__so *S, gs__so_frame *f, const gs_value *v, int j) {
    int64_t s = f->first[v->id] + j;
    f->blk[s] = s;
    f->b[s].bytes = (int64_t)gs_shape_bytes(gs__so_slot_shape(v, j));
    f->b[s].refs = 1;
    f->b[s].state = GS__SO_OWNED;
    gs__so_count(S, f->b[s].bytes, v);
}

GS__FN void gs__so_alias(gs__so_frame *f, const gs_value *v, int j, int64_t src) {
    int64_t s = f->first[v->id] + j;
    f->blk[s] = f->blk[src];
    if (f->blk[s] >= 0) f->b[f->blk[s]].refs++;
}

GS__FN void gs__so_release(gs__so *S, gs__so_frame *f, const gs_value *v) {
    int j;
    for (j = 0; j < gs__so_nslots(v); j++) {
        int64_t s = f->first[v->id] + j, b = f->blk[s];
        if (b < 0) continue;
        f->blk[s] = -1;
        if (--f->b[b].refs == 0 && f->b[b].state == GS__SO_OWNED) {
            gs__so_count(S, -f->b[b].bytes, v);
            f->b[b].state = GS__SO_GONE;
        }
    }
}

GS__FN gs_result gs__so_graph(gs__so *S, gs_graph *g, const int64_t *param_bytes, int64_t *results);

/* the loop state and what the frame's while slots end up holding */
GS__FN gs_result gs__so_while(gs__so *S, gs__so_frame *f, const gs_value *v) {
    const gs_value *init = v->operands[0];
    int n = gs__so_nslots(v), j;
    int64_t trips = -1, k, runs, w0 = S->depth;
    int64_t *cur, *next, pred = 0;
    bool owned = false;
    size_t plen = strlen(S->path);
    gs_result r = GS_OK;
    const gs_shapes_desc *d = S->desc;
    if (!v->cond || !v->body || gs__so_nslots(init) != n)
        return gs__err(S->ctx, GS_ERR_SHAPE, "while %s: missing condition or body", v->name);
    for (j = 0; j < d->n_trip_counts; j++)
        if (d->trip_names && d->trip_names[j] && v->name && strcmp(d->trip_names[j], v->name) == 0) trips = d->trip_counts[j];
    if (trips < 0 && !gs__cm_trip_count(v, &trips))
        return gs__err(S->ctx, GS_ERR_UNSUPPORTED, "shapes-only: while %s has no static trip count (give one: "
                       "--trip-count %s=N)", v->name, v->name);
    if (trips < 0) return gs__err(S->ctx, GS_ERR_INVALID_ARG, "shapes-only: while %s: trip count %lld is negative", v->name,
                                  (long long)trips);
    cur = (int64_t *)gs__malloc(S->ctx, sizeof(int64_t) * (size_t)(2 * n + 1));
    if (!cur) return GS_ERR_OUT_OF_MEMORY;
    next = cur + n;
    for (j = 0; j < n; j++) {
        int64_t b = f->blk[f->first[init->id] + j];
        cur[j] = b >= 0 ? f->b[b].bytes : (int64_t)gs_shape_bytes(gs__so_slot_shape(init, j));
    }
    snprintf(S->path + plen, sizeof S->path - plen, "%s%s", plen ? "/" : "", v->name ? v->name : "while");
    /* Iterations after the second repeat the second's pattern exactly (the state is owned from then on), so
       the memory walk runs at most two; collectives are weighted by the real count. */
    runs = trips < 2 ? trips : 2;
    for (k = 0; k <= runs && r == GS_OK; k++) {
        int64_t weight_cond = k < runs ? 1 : trips + 1 - runs, weight_body = k == runs - 1 ? trips - runs + 1 : 1;
        size_t l2 = strlen(S->path);
        /* the condition: its predicate is counted when made and freed after the test */
        snprintf(S->path + l2, sizeof S->path - l2, "/condition");
        S->depth = w0 * weight_cond;
        r = gs__so_graph(S, v->cond, cur, &pred);
        S->path[l2] = 0;
        if (r != GS_OK) break;
        gs__so_count(S, -pred, v);
        if (k == runs) break;
        snprintf(S->path + l2, sizeof S->path - l2, "/body");
        S->depth = w0 * weight_body;
        r = gs__so_graph(S, v->body, cur, next);
        S->path[l2] = 0;
        if (r != GS_OK) break;
        if (owned)
            for (j = 0; j < n; j++) gs__so_count(S, -cur[j], v);
        for (j = 0; j < n; j++) cur[j] = next[j];
        owned = true;
    }
    S->path[plen] = 0;
    S->depth = w0;
    if (r == GS_OK) {
        for (j = 0; j < n; j++) {
            int64_t s = f->first[v->id] + j;
            if (owned) {
                f->blk[s] = s;
                f->b[s].bytes = cur[j];
                f->b[s].refs = 1;
                f->b[s].state = GS__SO_OWNED;
            } else {
                gs__so_alias(f, v, j, f->first[init->id] + j);
            }
        }
    }
    gs__free(S->ctx, cur);
    return r;
}

/* One evaluation of g with parameter slots of the given bytes (not counted: they belong to the caller).
   results receives the root's slot bytes, now counted and owned by the caller. */
GS__FN gs_result gs__so_graph(gs__so *S, gs_graph *g, const int64_t *param_bytes, int64_t *results) {
    gs__so_frame f;
    int64_t weight = S->depth > 0 ? S->depth : 1, pbase = 0;
    int64_t *pfirst = NULL;
    int i, j, k, np = (int)stbds_arrlen(g->params);
    gs_result r = gs__so_frame_init(S, g, &f);
    if (r == GS_OK) {
        pfirst = (int64_t *)gs__malloc(S->ctx, sizeof(int64_t) * (size_t)(np + 1));
        if (!pfirst) r = GS_ERR_OUT_OF_MEMORY;
        for (i = 0; r == GS_OK && i < np; i++) {
            if (!g->params[i]) {
                r = gs__err(S->ctx, GS_ERR_INVALID_ARG, "shapes-only: %s: parameter %d is missing", g->name, i);
                break;
            }
            pfirst[i] = pbase;
            pbase += gs__so_nslots(g->params[i]);
        }
    }
    for (i = 0; r == GS_OK && i < f.n; i++) {
        gs_value *v = g->values[i];
        if (!f.live[i]) continue;
        switch (v->op) {
        case GS_OP_PARAMETER:
            if (v->index < 0 || v->index >= np) {
                r = gs__err(S->ctx, GS_ERR_INVALID_ARG, "parameter %s: number %lld has no input", v->name, (long long)v->index);
                break;
            }
            for (j = 0; j < gs__so_nslots(v); j++) {
                int64_t s = f.first[i] + j;
                f.blk[s] = s;
                f.b[s].bytes = param_bytes[pfirst[v->index] + j];
                f.b[s].refs = 1;
                f.b[s].state = GS__SO_EXTERNAL;
            }
            break;
        case GS_OP_TUPLE:
            for (k = 0; k < v->n_operands; k++) gs__so_alias(&f, v, k, f.first[v->operands[k]->id]);
            break;
        case GS_OP_GET_TUPLE_ELEMENT:
            gs__so_alias(&f, v, 0, f.first[v->operands[0]->id] + v->index);
            break;
        case GS_OP_RESHAPE: case GS_OP_COPY: case GS_OP_ANNOTATE:
            gs__so_alias(&f, v, 0, f.first[v->operands[0]->id]);
            break;
        case GS_OP_CONVERT:
            if (v->operands[0]->shape.dtype == v->shape.dtype) gs__so_alias(&f, v, 0, f.first[v->operands[0]->id]);
            else gs__so_new(S, &f, v, 0);
            break;
        case GS_OP_WHILE:
            r = gs__so_while(S, &f, v);
            break;
        case GS_OP_CONDITIONAL:   /* which branch runs is known only with the data */
            r = gs__err(S->ctx, GS_ERR_UNSUPPORTED, "shapes-only: conditional %s: the branch it runs depends on the data "
                        "(run it with data: gs_runtime_run)", v->name ? v->name : "?");
            break;
        default:
            if (gs__cm_is_collective(v->op)) {
                gs__so_coll c;
                c.v = v;
                c.count = weight;
                stbds_arrput(S->coll, c);
            }
            for (j = 0; j < gs__so_nslots(v); j++) gs__so_new(S, &f, v, j);
            break;
        }
        /* release what this instruction read last */
        for (k = 0; r == GS_OK && k < v->n_operands; k++) {
            const gs_value *o = v->operands[k];
            if (f.last_use[o->id] == i) {
                gs__so_release(S, &f, o);
                f.last_use[o->id] = -2;
            }
        }
    }
    if (r == GS_OK) {
        /* hand the root over: an owned buffer is taken, any other (a parameter's) is copied */
        const gs_value *root = g->root;
        for (j = 0; j < gs__so_nslots(root); j++) {
            int64_t b = f.blk[f.first[root->id] + j];
            int64_t bytes = (int64_t)gs_shape_bytes(gs__so_slot_shape(root, j));
            if (b >= 0 && f.b[b].state == GS__SO_OWNED) {
                f.b[b].state = GS__SO_TAKEN;
                results[j] = f.b[b].bytes;
            } else {
                gs__so_count(S, bytes, root);
                results[j] = bytes;
            }
        }
        /* and free what the frame still owns */
        for (i = 0; i < f.n; i++)
            for (j = 0; j < gs__so_nslots(g->values[i]); j++) {
                int64_t s = f.first[i] + j;
                if (f.b[s].state == GS__SO_OWNED) {
                    gs__so_count(S, -f.b[s].bytes, g->values[i]);
                    f.b[s].state = GS__SO_GONE;
                }
            }
    }
    gs__free(S->ctx, pfirst);
    gs__so_frame_free(S->ctx, &f);
    return r;
}

/* which mesh axes the members of one group differ along */
GS__FN unsigned gs__so_axes(const gs_shapes_desc *d, int64_t n, const int64_t *ids) {
    unsigned axes = 0;
    int64_t i, c0[GS_COST_MAX_AXES], c[GS_COST_MAX_AXES];
    int a;
    if (d->mesh_rank <= 0 || n <= 1) return 0;
    for (i = 0; i < n; i++) {
        int64_t x = ids[i];
        for (a = d->mesh_rank - 1; a >= 0; a--) {
            c[a] = x % d->mesh[a];
            x /= d->mesh[a];
        }
        if (i == 0) memcpy(c0, c, sizeof c);
        for (a = 0; a < d->mesh_rank; a++)
            if (c[a] != c0[a]) axes |= 1u << a;
    }
    return axes;
}

GS__FN gs_result gs__so_traffic(gs__so *S, gs_shapes_report *rep) {
    int n = (int)stbds_arrlen(S->coll), i, m = 0;
    int64_t D = rep->D;
    double *dev = (double *)gs__malloc(S->ctx, sizeof(double) * (size_t)D);
    rep->coll = (gs_shapes_collective *)gs__arena_alloc(S->ctx, sizeof(gs_shapes_collective) * (size_t)(n + 1));
    rep->sent = (double *)gs__arena_alloc(S->ctx, sizeof(double) * (size_t)D);
    if (!dev || !rep->coll || !rep->sent) {
        gs__free(S->ctx, dev);
        return GS_ERR_OUT_OF_MEMORY;
    }
    for (i = 0; i < n; i++) {
        const gs_value *v = S->coll[i].v;
        double nb = (double)gs_shape_bytes(&v->operands[0]->shape), cnt = (double)S->coll[i].count;
        gs_shapes_collective *c = NULL;
        int64_t d, g;
        int j;
        for (j = 0; j < m; j++)
            if (rep->coll[j].instruction == v) c = &rep->coll[j];
        if (!c) {
            c = &rep->coll[m++];
            c->instruction = v;
        }
        c->count += S->coll[i].count;
        for (d = 0; d < D; d++) dev[d] = 0.0;
        if (v->op == GS_OP_COLLECTIVE_PERMUTE) {
            int64_t k;
            c->group_size = 2;
            for (k = 0; k < v->n_pairs; k++) {
                int64_t s = v->pairs[2 * k], t = v->pairs[2 * k + 1];
                if (s < 0 || s >= D || t < 0 || t >= D)
                    return gs__err(S->ctx, GS_ERR_INVALID_ARG, "collective-permute %s: pair %lld,%lld is outside %lld devices",
                                   v->name, (long long)s, (long long)t, (long long)D);
                if (s != t) dev[s] += nb;
                if (s != t && rep->mesh_rank > 0) {
                    int64_t ids[2];
                    ids[0] = s;
                    ids[1] = t;
                    c->axes |= gs__so_axes(S->desc, 2, ids);
                }
            }
        } else {
            int64_t ng = 0, gsz = 0;
            const int64_t *ids = NULL;
            double per;
            gs_result r = gs__groups_expand(S->ctx, &v->coll.groups, D, &ng, &gsz, &ids);
            if (r != GS_OK) {
                gs__free(S->ctx, dev);
                return gs__err_prefix(S->ctx, "%s %s: ", gs_op_name(v->op), v->name);
            }
            c->group_size = gsz;
            if (v->op == GS_OP_RAGGED_ALL_TO_ALL) nb = (double)gs_shape_bytes(&v->shape);   /* bound: the whole output */
            per = v->op == GS_OP_ALL_REDUCE || v->op == GS_OP_ALL_GATHER ? (double)(gsz - 1) * nb
                                                                          : (double)(gsz - 1) * nb / (double)gsz;
            for (g = 0; g < ng; g++) {
                for (j = 0; j < gsz; j++) {
                    int64_t id = ids[g * gsz + j];
                    if (id >= 0 && id < D) dev[id] += per;
                }
                c->axes |= gs__so_axes(S->desc, gsz, ids + g * gsz);
            }
            gs__free(S->ctx, (void *)ids);
        }
        for (d = 0; d < D; d++) {
            double b = dev[d] * cnt;
            c->bytes_sent += b;
            rep->sent[d] += b;
            if (b > c->max_device_bytes) c->max_device_bytes = b;
        }
    }
    rep->n_coll = m;
    gs__free(S->ctx, dev);
    return GS_OK;
}

GS_API gs_result gs_shapes_run(gs_graph *spmd, const gs_shapes_desc *desc, gs_shapes_report **out) {
    gs_ctx *ctx;
    gs__so S;
    gs_shapes_report *rep;
    int64_t *params = NULL, *results = NULL, np_slots = 0, D;
    int i, j, np;
    gs_result r;
    if (!spmd) return GS_ERR_INVALID_ARG;
    ctx = spmd->ctx;
    if (!out || !desc) return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_shapes_run: desc or out is NULL");
    *out = NULL;
    D = desc->num_devices;
    if (D < 1 || D > GS_SHAPES_MAX_DEVICES)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_shapes_run: num_devices %lld is not 1..%d", (long long)D,
                       GS_SHAPES_MAX_DEVICES);
    if (gs_graph_num_partitions(spmd) > 1 && gs_graph_num_partitions(spmd) != D)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_shapes_run: the program is written for %lld partitions, not %lld",
                       (long long)gs_graph_num_partitions(spmd), (long long)D);
    if (desc->mesh_rank < 0 || desc->mesh_rank > GS_COST_MAX_AXES)
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_shapes_run: mesh_rank %d is not 0..%d", desc->mesh_rank, GS_COST_MAX_AXES);
    if (desc->mesh_rank > 0) {
        int64_t prod = 1;
        for (i = 0; i < desc->mesh_rank; i++) {
            if (desc->mesh[i] < 1) return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_shapes_run: mesh axis %d is < 1", i);
            prod *= desc->mesh[i];
        }
        if (prod != D)
            return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_shapes_run: the mesh has %lld devices, not %lld", (long long)prod,
                           (long long)D);
    }
    if (desc->n_trip_counts < 0 || (desc->n_trip_counts > 0 && (!desc->trip_names || !desc->trip_counts)))
        return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_shapes_run: bad trip count list");
    memset(&S, 0, sizeof S);
    S.ctx = ctx;
    S.desc = desc;
    S.depth = 1;
    np = (int)stbds_arrlen(spmd->params);
    for (i = 0; i < np; i++) np_slots += spmd->params[i] ? gs__so_nslots(spmd->params[i]) : 0;
    params = (int64_t *)gs__malloc(ctx, sizeof(int64_t) * (size_t)(np_slots + 1));
    results = spmd->root ? (int64_t *)gs__malloc(ctx, sizeof(int64_t) * (size_t)(gs__so_nslots(spmd->root) + 1)) : NULL;
    rep = (gs_shapes_report *)gs__arena_alloc(ctx, sizeof *rep);
    if (!params || !results || !rep) {
        gs__free(ctx, params);
        gs__free(ctx, results);
        if (!spmd->root) return gs__err(ctx, GS_ERR_INVALID_ARG, "gs_shapes_run: the graph has no root");
        return GS_ERR_OUT_OF_MEMORY;
    }
    rep->ctx = ctx;
    rep->D = D;
    np_slots = 0;
    for (i = 0; i < np; i++) {
        if (!spmd->params[i]) continue;
        for (j = 0; j < gs__so_nslots(spmd->params[i]); j++) {
            params[np_slots] = (int64_t)gs_shape_bytes(gs__so_slot_shape(spmd->params[i], j));
            rep->param_bytes += params[np_slots++];
        }
    }
    r = gs__so_graph(&S, spmd, params, results);
    if (r == GS_OK) {
        rep->peak = rep->param_bytes + S.peak;
        rep->peak_at = S.peak_at;
        rep->peak_path = gs__arena_strdup(ctx, S.peak_path);
        rep->mesh_rank = desc->mesh_rank;
        memcpy(rep->mesh, desc->mesh, sizeof rep->mesh);
        r = gs__so_traffic(&S, rep);
        if (r == GS_OK && !rep->peak_path) r = GS_ERR_OUT_OF_MEMORY;
    }
    stbds_arrfree(S.coll);
    gs__free(ctx, params);
    gs__free(ctx, results);
    if (r != GS_OK) return r;
    *out = rep;
    return GS_OK;
}

GS_API int64_t gs_shapes_num_devices(const gs_shapes_report *r) { return r ? r->D : 0; }
GS_API int64_t gs_shapes_param_bytes(const gs_shapes_report *r) { return r ? r->param_bytes : 0; }
GS_API int64_t gs_shapes_peak_bytes(const gs_shapes_report *r, int64_t d) { return r && d >= 0 && d < r->D ? r->peak : 0; }
GS_API const gs_value *gs_shapes_peak_instruction(const gs_shapes_report *r, int64_t d) {
    return r && d >= 0 && d < r->D ? r->peak_at : NULL;
}
GS_API const char *gs_shapes_peak_path(const gs_shapes_report *r, int64_t d) {
    return r && d >= 0 && d < r->D ? r->peak_path : NULL;
}
GS_API double gs_shapes_bytes_sent(const gs_shapes_report *r, int64_t d) { return r && d >= 0 && d < r->D ? r->sent[d] : 0.0; }
GS_API int gs_shapes_num_collectives(const gs_shapes_report *r) { return r ? r->n_coll : 0; }
GS_API const gs_shapes_collective *gs_shapes_collective_at(const gs_shapes_report *r, int i) {
    return r && i >= 0 && i < r->n_coll ? &r->coll[i] : NULL;
}
GS_API double gs_shapes_axes_bytes(const gs_shapes_report *r, unsigned axes) {
    double t = 0.0;
    int i;
    if (!r) return 0.0;
    for (i = 0; i < r->n_coll; i++)
        if (r->coll[i].axes == axes) t += r->coll[i].bytes_sent;
    return t;
}

GS__FN void gs__so_axes_text(gs__sb *sb, const gs_shapes_report *r, unsigned axes) {
    int a, first = 1;
    if (r->mesh_rank == 0) {
        gs__sb_puts(sb, "-");
        return;
    }
    if (!axes) gs__sb_puts(sb, "none");
    for (a = 0; a < r->mesh_rank; a++)
        if (axes & (1u << a)) {
            gs__sb_printf(sb, "%s%d", first ? "" : ",", a);
            first = 0;
        }
}

/* the totals over devices, and a string builder for a report */
GS__FN void gs__so_begin(const gs_shapes_report *r, gs__sb *sb, double *total, double *max_dev, int64_t *argmax) {
    int64_t d;
    *total = 0.0;
    *max_dev = -1.0;
    *argmax = 0;
    for (d = 0; d < r->D; d++) {
        *total += r->sent[d];
        if (r->sent[d] > *max_dev) {
            *max_dev = r->sent[d];
            *argmax = d;
        }
    }
    gs__sb_init(sb, r->ctx);
}

GS_API const char *gs_shapes_text(gs_shapes_report *r) {
    gs__sb sb;
    double total, maxd;
    int64_t arg;
    int i;
    if (!r) return NULL;
    gs__so_begin(r, &sb, &total, &maxd, &arg);
    gs__sb_printf(&sb, "shapes-only: %lld devices, one program: every device peaks at %lld bytes (parameters %lld) at %s%s%s\n",
                  (long long)r->D, (long long)r->peak, (long long)r->param_bytes, r->peak_path && *r->peak_path ? r->peak_path : "",
                  r->peak_path && *r->peak_path ? "/" : "", r->peak_at && r->peak_at->name ? r->peak_at->name : "(parameters)");
    gs__sb_printf(&sb, "  bytes sent: %.0f in all, at most %.0f by one device (device %lld)\n", total, maxd, (long long)arg);
    for (i = 0; i < r->n_coll; i++) {
        const gs_shapes_collective *c = &r->coll[i];
        gs__sb_printf(&sb, "  %s %s: groups of %lld, mesh axes ", gs_op_name(c->instruction->op), c->instruction->name,
                      (long long)c->group_size);
        gs__so_axes_text(&sb, r, c->axes);
        if (c->count == 1) gs__sb_puts(&sb, ", ran once per device");
        else gs__sb_printf(&sb, ", ran %lld times per device", (long long)c->count);
        gs__sb_printf(&sb, ", %.0f bytes sent in all (at most %.0f by one device)\n", c->bytes_sent, c->max_device_bytes);
    }
    return gs__sb_finish(&sb, "gs_shapes_text");
}

GS_API const char *gs_shapes_json(gs_shapes_report *r) {
    gs__sb sb;
    double total, maxd;
    int64_t arg;
    int i;
    if (!r) return NULL;
    gs__so_begin(r, &sb, &total, &maxd, &arg);
    gs__sb_printf(&sb, "{\"devices\": %lld, \"param_bytes\": %lld, \"peak_bytes\": %lld, \"peak_instruction\": ", (long long)r->D,
                  (long long)r->param_bytes, (long long)r->peak);
    gs__cm_json_str(&sb, r->peak_at && r->peak_at->name ? r->peak_at->name : "");
    gs__sb_puts(&sb, ", \"peak_path\": ");
    gs__cm_json_str(&sb, r->peak_path ? r->peak_path : "");
    gs__sb_puts(&sb, ", \"bytes_sent\": ");
    gs__cm_json_num(&sb, total);
    gs__sb_puts(&sb, ", \"max_device_bytes_sent\": ");
    gs__cm_json_num(&sb, maxd);
    gs__sb_puts(&sb, ", \"collectives\": [");
    for (i = 0; i < r->n_coll; i++) {
        const gs_shapes_collective *c = &r->coll[i];
        gs__sb_puts(&sb, i ? ", {\"name\": " : "{\"name\": ");
        gs__cm_json_str(&sb, c->instruction->name);
        gs__sb_puts(&sb, ", \"opcode\": ");
        gs__cm_json_str(&sb, gs_op_name(c->instruction->op));
        gs__sb_printf(&sb, ", \"group_size\": %lld, \"count\": %lld, \"mesh_axes\": [", (long long)c->group_size,
                      (long long)c->count);
        {
            int a, first = 1;
            for (a = 0; a < r->mesh_rank; a++)
                if (c->axes & (1u << a)) {
                    gs__sb_printf(&sb, "%s%d", first ? "" : ", ", a);
                    first = 0;
                }
        }
        gs__sb_puts(&sb, "], \"bytes_sent\": ");
        gs__cm_json_num(&sb, c->bytes_sent);
        gs__sb_puts(&sb, ", \"max_device_bytes\": ");
        gs__cm_json_num(&sb, c->max_device_bytes);
        gs__sb_puts(&sb, "}");
    }
    gs__sb_puts(&sb, "]}\n");
    return gs__sb_finish(&sb, "gs_shapes_json");
}
