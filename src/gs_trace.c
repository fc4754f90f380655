/* gs_trace.c - pictures of a run: Chrome trace-event JSON of a runtime run and of a cost report's
   estimated timeline, and an SVG drawing of a sharding.

   The trace files follow the trace-event format's "JSON Object Format": an object whose "traceEvents" array
   holds metadata events (ph "M": process_name, thread_name, with args.name) and complete events (ph "X": name,
   cat, ts and dur in microseconds, pid, tid, args). chrome://tracing and Perfetto load them as they are. */
#include "gs_internal.h"

/* "f32[8,16]"; a tuple is "(...)" with its element count */
GS__FN void gs__tr_shape_text(const gs_shape *s, const gs_value *v, char *buf, size_t cap) {
    size_t n;
    int d;
    if (s->dtype == GS_TUPLE) {
        snprintf(buf, cap, "(tuple of %d)", v ? v->n_tuple : 0);
        return;
    }
    n = (size_t)snprintf(buf, cap, "%s[", gs_dtype_name(s->dtype));
    for (d = 0; d < s->rank && n < cap; d++) n += (size_t)snprintf(buf + n, cap - n, "%s%lld", d ? "," : "", (long long)s->dims[d]);
    if (n < cap) snprintf(buf + n, cap - n, "]");
}

/* ---- JSON pieces shared by both traces ---- */
GS__FN void gs__tr_meta(gs__sb *sb, bool *first, const char *what, int64_t pid, int64_t tid, const char *name) {
    gs__sb_printf(sb, "%s\n  {\"name\": \"%s\", \"ph\": \"M\", \"pid\": %lld, \"tid\": %lld, \"args\": {\"name\": ",
                  *first ? "" : ",", what, (long long)pid, (long long)tid);
    gs__cm_json_str(sb, name);
    gs__sb_puts(sb, "}}");
    *first = false;
}

/* Opens a complete event; the caller writes the args' members (each starting with ", ") and closes with "}}". */
GS__FN void gs__tr_span(gs__sb *sb, bool *first, const gs_value *v, const char *cat, int64_t pid, int64_t tid,
                        double ts_us, double dur_us) {
    char shape[256];
    gs__sb_printf(sb, "%s\n  {\"name\": ", *first ? "" : ",");
    gs__cm_json_str(sb, v->name);
    gs__sb_printf(sb, ", \"cat\": \"%s\", \"ph\": \"X\", \"ts\": ", cat);
    gs__cm_json_num(sb, ts_us);
    gs__sb_puts(sb, ", \"dur\": ");
    gs__cm_json_num(sb, dur_us);
    gs__sb_printf(sb, ", \"pid\": %lld, \"tid\": %lld, \"args\": {\"opcode\": ", (long long)pid, (long long)tid);
    gs__cm_json_str(sb, gs_op_name(v->op));
    gs__tr_shape_text(&v->shape, v, shape, sizeof shape);
    gs__sb_puts(sb, ", \"shape\": ");
    gs__cm_json_str(sb, shape);
    *first = false;
}

/* ", "groups": [[0,1],[2,3]]" (or the permute's "pairs") for collective v of a program on D partitions */
GS__FN void gs__tr_groups(gs__sb *sb, gs_ctx *ctx, const gs_value *v, int64_t D) {
    int64_t n_groups = 0, size = 0, g, k;
    const int64_t *ids = NULL;
    if (v->op == GS_OP_COLLECTIVE_PERMUTE) {
        gs__sb_puts(sb, ", \"pairs\": [");
        for (k = 0; k < v->n_pairs; k++)
            gs__sb_printf(sb, "%s[%lld, %lld]", k ? ", " : "", (long long)v->pairs[2 * k], (long long)v->pairs[2 * k + 1]);
        gs__sb_puts(sb, "]");
        return;
    }
    if (gs__groups_expand(ctx, &v->coll.groups, D, &n_groups, &size, &ids) != GS_OK) return;
    gs__sb_printf(sb, ", \"group_size\": %lld, \"groups\": [", (long long)size);
    for (g = 0; g < n_groups; g++) {
        gs__sb_puts(sb, g ? ", [" : "[");
        for (k = 0; k < size; k++) gs__sb_printf(sb, "%s%lld", k ? ", " : "", (long long)ids[g * size + k]);
        gs__sb_puts(sb, "]");
    }
    gs__sb_puts(sb, "]");
    gs__free(ctx, (void *)(uintptr_t)ids);
}

/* ---- the runtime's trace ---- */
GS_API const char *gs_runtime_trace_json(gs_runtime *rt) {
    gs_ctx *ctx = rt ? gs__rt_ctx(rt) : NULL;
    gs_runtime_stats st;
    gs__sb sb;
    bool first = true, traced = false;
    int64_t D, d, i;
    int c;
    if (!rt) return NULL;
    D = gs_runtime_num_devices(rt);
    for (d = 0; d < D; d++) traced = traced || gs_runtime_trace_count(rt, d) > 0;
    if (!traced || gs_runtime_get_stats(rt, &st) != GS_OK) {
        gs__err(ctx, GS_ERR_INVALID_ARG, "gs_runtime_trace_json: no traced run (gs_runtime_set_trace before the run)");
        return NULL;
    }
    gs__sb_init(&sb, ctx);
    gs__sb_puts(&sb, "{\"traceEvents\": [");
    for (d = 0; d < D; d++) {
        char name[48];
        snprintf(name, sizeof name, "device %lld", (long long)d);
        gs__tr_meta(&sb, &first, "process_name", d, 0, name);
        gs__tr_meta(&sb, &first, "thread_name", d, 0, "instructions");
        for (i = 0; i < gs_runtime_trace_count(rt, d); i++) {
            const gs_runtime_span *sp = gs_runtime_trace_span(rt, d, i);
            const gs_value *v = sp->instruction;
            bool coll = gs__cm_is_collective(v->op);
            gs__tr_span(&sb, &first, v, coll ? "collective" : "compute", d, 0, sp->start * 1e6,
                        (sp->end - sp->start) * 1e6);
            for (c = 0; coll && c < st.n_collectives; c++) {
                const gs_runtime_collective_stats *cs = &st.collectives[c];
                if (cs->instruction != v) continue;
                gs__sb_printf(&sb, ", \"operand_bytes\": %lld, \"result_bytes\": %lld, \"bytes_sent\": %lld",
                              (long long)cs->operand_bytes, (long long)cs->result_bytes, (long long)cs->bytes_sent);
                break;
            }
            if (coll) gs__tr_groups(&sb, ctx, v, D);
            gs__sb_puts(&sb, "}}");
        }
    }
    gs__sb_printf(&sb, "\n], \"displayTimeUnit\": \"ns\", \"otherData\": {\"source\": \"gshard runtime\", \"devices\": %lld, "
                       "\"seconds\": ", (long long)D);
    gs__cm_json_num(&sb, st.seconds);
    gs__sb_puts(&sb, "}}\n");
    return gs__sb_finish(&sb, "gs_runtime_trace_json");
}

/* ---- the cost model's estimated timeline ---- */
GS_API const char *gs_cost_report_trace_json(gs_cost_report *r) {
    gs_ctx *ctx;
    const gs_topology *topo;
    gs_cost_totals t;
    gs__sb sb;
    bool first = true;
    int64_t D, d;
    int i;
    if (!r) return NULL;
    ctx = gs__cm_report_ctx(r);
    topo = gs__cm_report_topo(r);
    D = gs_topology_num_devices(topo);
    t = gs_cost_report_totals(r);
    gs__sb_init(&sb, ctx);
    gs__sb_puts(&sb, "{\"traceEvents\": [");
    for (d = 0; d < D; d++) {
        char name[96];
        double clock[2] = {0, 0};   /* where the next span of each track begins, microseconds */
        snprintf(name, sizeof name, "device %lld (estimated, %s)", (long long)d, gs_topology_chip(topo)->name);
        gs__tr_meta(&sb, &first, "process_name", d, 0, name);
        gs__tr_meta(&sb, &first, "thread_name", d, 0, "compute and HBM");
        gs__tr_meta(&sb, &first, "thread_name", d, 1, "ICI");
        for (i = 0; i < gs_cost_report_num_rows(r); i++) {
            const gs_cost_row *row = gs_cost_report_row(r, i);
            int tid = gs__cm_is_collective(row->value->op) ? 1 : 0;
            if (row->parent >= 0 || row->seconds <= 0) continue;
            gs__tr_span(&sb, &first, row->value, tid ? "ICI" : row->bound == GS_BOUND_COMPUTE ? "compute" : "HBM", d, tid,
                        clock[tid], row->seconds * 1e6);
            clock[tid] += row->seconds * 1e6;
            gs__sb_puts(&sb, ", \"bound\": ");
            gs__cm_json_str(&sb, gs_bound_name(row->bound));
            gs__sb_puts(&sb, ", \"flops\": ");
            gs__cm_json_num(&sb, row->flops);
            gs__sb_puts(&sb, ", \"hbm_bytes\": ");
            gs__cm_json_num(&sb, row->hbm_bytes);
            gs__sb_puts(&sb, ", \"ici_bytes\": ");
            gs__cm_json_num(&sb, row->ici_bytes);
            gs__sb_printf(&sb, ", \"t_math_us\": %.6g, \"t_hbm_us\": %.6g, \"t_ici_us\": %.6g", row->t_math * 1e6,
                          row->t_hbm * 1e6, row->t_ici * 1e6);
            if (tid) gs__tr_groups(&sb, ctx, row->value, D);
            gs__sb_puts(&sb, "}}");
        }
    }
    gs__sb_printf(&sb, "\n], \"displayTimeUnit\": \"ns\", \"otherData\": {\"source\": \"gshard cost model\", \"devices\": "
                       "%lld, \"chip\": ", (long long)D);
    gs__cm_json_str(&sb, gs_topology_chip(topo)->name);
    gs__sb_printf(&sb, ", \"seconds_overlapped\": %.9g, \"seconds_serial\": %.9g}}\n", t.seconds_overlapped, t.seconds_serial);
    return gs__sb_finish(&sb, "gs_cost_report_trace_json");
}

/* ---- a sharding as a picture ---- */
/* The data tile (row-major over the data dims) device d holds, -1 when it holds none. */
GS__FN int64_t gs__svg_tile(const gs_sharding *s, int64_t d, int64_t num_devices) {
    int64_t idx[GS_MAX_RANK + 2], t = 0;
    int k, r;
    gs_sharding_kind kind = gs_sharding_get_kind(s);
    if (d >= num_devices) return -1;
    if (kind == GS_SHARDING_MAXIMAL) return gs_sharding_maximal_device(s) == d ? 0 : -1;
    if (kind != GS_SHARDING_TILED) return 0;
    if (!gs_sharding_device_index(s, d, idx)) return -1;
    r = gs_sharding_rank(s);
    for (k = 0; k < r; k++) t = t * gs_sharding_tiles(s, k) + idx[k];
    return t;
}

/* fill colour of tile t of n: hues spread by the golden angle, so neighbours differ */
GS__FN void gs__svg_fill(gs__sb *sb, int64_t t) {
    if (t < 0) gs__sb_puts(sb, "#eeeeee");
    else gs__sb_printf(sb, "hsl(%d,65%%,%d%%)", (int)((t * 137) % 360), 62 + (int)(t / 8 % 3) * 8);
}

/* text with &, <, > and " escaped for XML */
GS__FN void gs__svg_text(gs__sb *sb, const char *t) {
    for (; t && *t; t++) {
        if (*t == '&') gs__sb_puts(sb, "&amp;");
        else if (*t == '<') gs__sb_puts(sb, "&lt;");
        else if (*t == '>') gs__sb_puts(sb, "&gt;");
        else if (*t == '"') gs__sb_puts(sb, "&quot;");
        else gs__sb_put(sb, t, 1);
    }
}

/* a w x h box at (x, y) filled with tile's colour, with one or two centred lines of text */
GS__FN void gs__svg_cell(gs__sb *sb, int x, int y, int w, int h, int64_t tile, const char *line1, const char *line2) {
    gs__sb_printf(sb, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" stroke=\"#333\" fill=\"", x, y, w, h);
    gs__svg_fill(sb, tile);
    gs__sb_printf(sb, "\"/>\n<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", x + w / 2, y + h / 2 - (line2[0] ? 4 : -4));
    gs__svg_text(sb, line1);
    gs__sb_puts(sb, "</text>\n");
    if (!line2[0]) return;
    gs__sb_printf(sb, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"10\">", x + w / 2, y + h / 2 + 12);
    gs__svg_text(sb, line2);
    gs__sb_puts(sb, "</text>\n");
}

/* "[0:4, 8:16]": the region device d holds */
GS__FN void gs__svg_region(const gs_sharding *s, gs_shape full, int64_t d, char *buf, size_t cap) {
    int64_t off[GS_MAX_RANK], lim[GS_MAX_RANK];
    size_t n = 0;
    int k;
    buf[0] = 0;
    if (!gs_sharding_device_region(s, full, d, off, lim)) return;
    n += (size_t)snprintf(buf, cap, "[");
    for (k = 0; k < full.rank && n < cap; k++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld:%lld", k ? ", " : "", (long long)off[k], (long long)lim[k]);
    if (n < cap) snprintf(buf + n, cap - n, "]");
}

GS_API const char *gs_sharding_svg(gs_ctx *ctx, const gs_sharding *s, gs_shape full, int64_t num_devices,
                                   const char *title) {
    enum { CW = 132, CH = 54, DW = 66, DH = 44, GAP = 40, TOP = 50 };
    gs__sb sb;
    int64_t rows = 1, cols = 1, t, d, n_tiles, dcols = 1, drows, *first;
    int r, k, width, height, ax;
    if (!ctx) return NULL;
    if (!s || num_devices < 1 || num_devices > 4096 || gs_sharding_tuple_size(s) > 0 ||
        gs_sharding_validate(ctx, s, full, num_devices) != GS_OK) {
        if (gs_ctx_error(ctx) == GS_OK)
            gs__err(ctx, GS_ERR_INVALID_ARG, "gs_sharding_svg: a sharding of one array on 1 to 4096 devices");
        return NULL;
    }
    r = gs_sharding_get_kind(s) == GS_SHARDING_TILED ? gs_sharding_rank(s) : 0;
    for (k = 0; k + 1 < r; k++) rows *= gs_sharding_tiles(s, k);
    if (r > 0) cols = gs_sharding_tiles(s, r - 1);
    n_tiles = rows * cols;
    if (n_tiles > 1024) {
        gs__err(ctx, GS_ERR_INVALID_ARG, "gs_sharding_svg: %lld tiles are too many to draw", (long long)n_tiles);
        return NULL;
    }
    while (dcols * dcols < num_devices) dcols++;
    while (num_devices % dcols) dcols++;   /* the smallest divisor >= sqrt(D): a near-square grid of devices */
    drows = num_devices / dcols;
    first = (int64_t *)gs__malloc(ctx, sizeof(int64_t) * (size_t)(n_tiles + 1));
    if (!first) return NULL;
    for (t = 0; t < n_tiles; t++) first[t] = -1;
    for (d = num_devices - 1; d >= 0; d--)
        if ((t = gs__svg_tile(s, d, num_devices)) >= 0 && t < n_tiles) first[t] = d;
    ax = 20 + (int)cols * CW;
    width = ax + GAP + (int)dcols * DW + 20;
    height = TOP + 30 + (int)GS__MAX(rows * CH, drows * DH) + 20;
    gs__sb_init(&sb, ctx);
    gs__sb_printf(&sb, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" "
                       "font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n<text x=\"20\" y=\"24\" "
                       "font-size=\"15\">", width, height);
    gs__svg_text(&sb, title ? title : "");
    gs__sb_puts(&sb, " ");
    gs__svg_text(&sb, gs_sharding_to_text(ctx, s));
    gs__sb_printf(&sb, "</text>\n<text x=\"20\" y=\"%d\">the array, by tile</text>\n<text x=\"%d\" y=\"%d\">"
                       "the %lld devices (id row-major), coloured by the tile they hold</text>\n",
                  TOP + 10, ax + GAP, TOP + 10, (long long)num_devices);
    for (t = 0; t < n_tiles; t++) {
        char region[160] = "", devs[160] = "";
        size_t n = 0;
        for (d = 0; d < num_devices && n + 16 < sizeof devs; d++)
            if (gs__svg_tile(s, d, num_devices) == t) n += (size_t)snprintf(devs + n, sizeof devs - n, "%sd%lld", n ? "," : "", (long long)d);
        if (first[t] >= 0) gs__svg_region(s, full, first[t], region, sizeof region);
        gs__svg_cell(&sb, 20 + (int)(t % cols) * CW, TOP + 20 + (int)(t / cols) * CH, CW, CH, t, region, devs);
    }
    for (d = 0; d < num_devices; d++) {
        char name[32];
        snprintf(name, sizeof name, "d%lld", (long long)d);
        t = gs__svg_tile(s, d, num_devices);
        gs__svg_cell(&sb, ax + GAP + (int)(d % dcols) * DW, TOP + 20 + (int)(d / dcols) * DH, DW, DH, t, name,
                     t < 0 ? "(none)" : "");
    }
    gs__sb_puts(&sb, "</svg>\n");
    gs__free(ctx, first);
    return gs__sb_finish(&sb, "gs_sharding_svg");
}
