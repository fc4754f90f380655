/* test_course.c - what students see: the trace files (`run --trace`, `cost --trace`) checked against the
   trace-event format's documented fields for the MoE layer at D = 8, the SVG of a sharding, and the exit
   codes of `gshard exercise check` (0 solved, 1 not yet, 2 error) on files placed outside the course.
   The trace-event format ("Trace Event Format", the JSON Object Format chrome://tracing and Perfetto read):
   an object with a "traceEvents" array; every event has "name", "ph" (phase), "pid", "tid"; a complete event
   (ph "X") has "ts" and "dur" in microseconds and may have "cat" and "args"; a metadata event (ph "M")
   named "process_name" or "thread_name" carries args.name. displayTimeUnit is "ms" or "ns". */
#if !defined(_POSIX_C_SOURCE)
#  define _POSIX_C_SOURCE 200809L /* mkdtemp */
#endif
#include "test.h"
#include <ctype.h>
#include <stdlib.h>
#include <unistd.h>

/* ---- a small JSON reader, independent of the library's writer ---- */
typedef enum { JS_NULL, JS_BOOL, JS_NUM, JS_STR, JS_ARR, JS_OBJ } js_kind;
typedef struct js {
    js_kind kind;
    double num;
    char *str;             /* JS_STR: the value; members of an object: the key */
    struct js *kids;       /* JS_ARR, JS_OBJ: n values (an object's each with its key in str of a key node) */
    char **keys;
    int n;
} js;

typedef struct { const char *p; bool bad; } js_in;

static void js_ws(js_in *in) {
    while (*in->p == ' ' || *in->p == '\n' || *in->p == '\t' || *in->p == '\r') in->p++;
}

static char *js_string(js_in *in) {
    size_t n = 0, cap = 16;
    char *s = (char *)malloc(cap);
    if (*in->p != '"' || !s) {
        in->bad = true;
        free(s);
        return NULL;
    }
    in->p++;
    while (*in->p && *in->p != '"') {
        char c = *in->p++;
        if ((unsigned char)c < 0x20) in->bad = true;
        if (c == '\\') {
            c = *in->p++;
            if (c == 'u') {
                int k;
                for (k = 0; k < 4; k++)
                    if (!isxdigit((unsigned char)*in->p++)) in->bad = true;
                c = '?';
            } else if (!strchr("\"\\/bfnrt", c) || !c) {
                in->bad = true;
                break;
            }
        }
        if (n + 2 > cap && !(s = (char *)realloc(s, cap *= 2))) return NULL;
        s[n++] = c;
    }
    if (*in->p != '"') in->bad = true;
    else in->p++;
    s[n] = 0;
    return s;
}

static void js_value(js_in *in, js *v, int depth);

static void js_push(js *v, js_in *in, char *key, int depth) {
    js *kids = (js *)realloc(v->kids, sizeof(js) * (size_t)(v->n + 1));
    char **keys = (char **)realloc(v->keys, sizeof(char *) * (size_t)(v->n + 1));
    if (kids) v->kids = kids;
    if (keys) v->keys = keys;
    if (!kids || !keys) {
        in->bad = true;
        free(key);
        return;
    }
    memset(&v->kids[v->n], 0, sizeof(js));
    v->keys[v->n] = key;
    js_value(in, &v->kids[v->n++], depth + 1);
}

static void js_value(js_in *in, js *v, int depth) {
    js_ws(in);
    memset(v, 0, sizeof *v);
    if (depth > 64) {
        in->bad = true;
    } else if (*in->p == '{' || *in->p == '[') {
        bool obj = *in->p == '{';
        v->kind = obj ? JS_OBJ : JS_ARR;
        in->p++;
        js_ws(in);
        if (*in->p == (obj ? '}' : ']')) {
            in->p++;
            return;
        }
        while (!in->bad) {
            char *key = NULL;
            js_ws(in);
            if (obj) {
                key = js_string(in);
                js_ws(in);
                if (*in->p++ != ':') in->bad = true;
            }
            js_push(v, in, key, depth);
            js_ws(in);
            if (*in->p == ',') in->p++;
            else if (*in->p == (obj ? '}' : ']')) {
                in->p++;
                return;
            } else in->bad = true;
        }
    } else if (*in->p == '"') {
        v->kind = JS_STR;
        v->str = js_string(in);
    } else if (strncmp(in->p, "true", 4) == 0 || strncmp(in->p, "false", 5) == 0) {
        v->kind = JS_BOOL;
        v->num = *in->p == 't';
        in->p += *in->p == 't' ? 4 : 5;
    } else if (strncmp(in->p, "null", 4) == 0) {
        in->p += 4;
    } else {
        char *end = NULL;
        v->kind = JS_NUM;
        v->num = strtod(in->p, &end);
        if (end == in->p) in->bad = true;
        else in->p = end;
    }
}

static void js_free(js *v) {
    int i;
    for (i = 0; i < v->n; i++) {
        js_free(&v->kids[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->kids);
    free(v->keys);
    free(v->str);
}

static const js *js_get(const js *o, const char *key) {
    int i;
    if (!o || o->kind != JS_OBJ) return NULL;
    for (i = 0; i < o->n; i++)
        if (o->keys[i] && strcmp(o->keys[i], key) == 0) return &o->kids[i];
    return NULL;
}

static bool js_is_int(const js *v) { return v && v->kind == JS_NUM && v->num == floor(v->num) && v->num >= 0; }

static bool is_collective_name(const char *op) {
    static const char *const names[] = {"all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute"};
    int i;
    for (i = 0; i < 5; i++)
        if (strcmp(op, names[i]) == 0) return true;
    return false;
}

/* writes text to dir/name */
static void put_file(const char *dir, const char *name, const char *text) {
    char path[512];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

/* ---- the trace-event checks ---- */
typedef struct trace_facts {
    int64_t spans[8], collectives[8];   /* complete events per device, of which collectives */
    double end[8];                       /* the latest ts + dur per device */
} trace_facts;

/* A collective's args: group_size and groups that partition 0..D-1 (or permute pairs of devices). */
static void check_groups(const js *args, int64_t D) {
    const js *gs = js_get(args, "groups"), *size = js_get(args, "group_size"), *pairs = js_get(args, "pairs");
    int seen[8] = {0}, i, k;
    if (pairs) {
        CHECK(pairs->kind == JS_ARR);
        for (i = 0; pairs->kind == JS_ARR && i < pairs->n; i++)
            CHECK(pairs->kids[i].kind == JS_ARR && pairs->kids[i].n == 2 && js_is_int(&pairs->kids[i].kids[0]) &&
                  pairs->kids[i].kids[0].num < (double)D && js_is_int(&pairs->kids[i].kids[1]) && pairs->kids[i].kids[1].num < (double)D);
        return;
    }
    CHECK(js_is_int(size) && size->num >= 1 && gs && gs->kind == JS_ARR);
    if (!size || !gs || gs->kind != JS_ARR) return;
    CHECK_EQ_INT(gs->n * (int64_t)size->num, D);
    for (i = 0; i < gs->n; i++) {
        CHECK(gs->kids[i].kind == JS_ARR && gs->kids[i].n == (int)size->num);
        for (k = 0; k < gs->kids[i].n; k++) {
            const js *id = &gs->kids[i].kids[k];
            CHECK(js_is_int(id) && id->num < (double)D);
            if (js_is_int(id) && id->num < (double)D) seen[(int)id->num]++;
        }
    }
    for (i = 0; i < D; i++) CHECK_EQ_INT(seen[i], 1);
}

/* One event: the documented fields with their types; complete events in time order on their track. */
static void check_event(const js *e, int64_t D, int n_tracks, double last_end[8][2], trace_facts *f, bool named[8][3]) {
    const js *name = js_get(e, "name"), *ph = js_get(e, "ph"), *pid = js_get(e, "pid"), *tid = js_get(e, "tid");
    const js *args = js_get(e, "args");
    int p, t;
    CHECK(e->kind == JS_OBJ && name && name->kind == JS_STR && name->str[0] && ph && ph->kind == JS_STR);
    CHECK(js_is_int(pid) && pid->num < (double)D && js_is_int(tid) && tid->num < n_tracks);
    if (!ph || ph->kind != JS_STR || !js_is_int(pid) || pid->num >= (double)D || !js_is_int(tid) || tid->num >= n_tracks) return;
    p = (int)pid->num;
    t = (int)tid->num;
    if (strcmp(ph->str, "M") == 0) {
        const js *an = js_get(args, "name");
        CHECK(strcmp(name->str, "process_name") == 0 || strcmp(name->str, "thread_name") == 0);
        CHECK(an && an->kind == JS_STR && an->str[0]);
        named[p][strcmp(name->str, "process_name") == 0 ? 2 : t] = true;
    } else {
        const js *ts = js_get(e, "ts"), *dur = js_get(e, "dur"), *cat = js_get(e, "cat"), *op = js_get(args, "opcode");
        bool coll;
        CHECK_MSG(strcmp(ph->str, "X") == 0, "phase '%s'", ph->str);
        CHECK(ts && ts->kind == JS_NUM && ts->num >= 0 && dur && dur->kind == JS_NUM && dur->num >= 0);
        CHECK(cat && cat->kind == JS_STR && args && args->kind == JS_OBJ && op && op->kind == JS_STR);
        if (!ts || !dur || !cat || cat->kind != JS_STR || !op || op->kind != JS_STR) return;
        CHECK_MSG(ts->num + 1e-6 >= last_end[p][t], "%s on device %d starts at %g before the track's previous span ends (%g)",
                  name->str, p, ts->num, last_end[p][t]);
        last_end[p][t] = ts->num + dur->num;
        if (last_end[p][t] > f->end[p]) f->end[p] = last_end[p][t];
        CHECK(named[p][2] && named[p][t]);   /* the track was named before its first span */
        coll = strcmp(cat->str, "collective") == 0 || strcmp(cat->str, "ICI") == 0;
        CHECK_EQ_INT(coll, is_collective_name(op->str));
        f->spans[p]++;
        if (!coll) return;
        f->collectives[p]++;
        check_groups(args, D);
        CHECK(js_is_int(js_get(args, "operand_bytes")) || js_is_int(js_get(args, "ici_bytes")));
    }
}

/* Parses text and checks it as a trace of D devices with n_tracks tracks each. */
static bool check_trace(const char *text, int64_t D, int n_tracks, trace_facts *f) {
    js root;
    js_in in;
    const js *ev, *unit;
    double last_end[8][2];
    bool named[8][3];
    int i;
    memset(f, 0, sizeof *f);
    memset(last_end, 0, sizeof last_end);
    memset(named, 0, sizeof named);
    in.p = text;
    in.bad = false;
    js_value(&in, &root, 0);
    js_ws(&in);
    CHECK_MSG(!in.bad && *in.p == 0, "not JSON near '%.40s'", in.p);
    ev = js_get(&root, "traceEvents");
    unit = js_get(&root, "displayTimeUnit");
    CHECK(root.kind == JS_OBJ && ev && ev->kind == JS_ARR);
    CHECK(!unit || (unit->kind == JS_STR && (strcmp(unit->str, "ms") == 0 || strcmp(unit->str, "ns") == 0)));
    for (i = 0; ev && ev->kind == JS_ARR && i < ev->n; i++) check_event(&ev->kids[i], D, n_tracks, last_end, f, named);
    for (i = 0; i < D; i++) CHECK_MSG(f->spans[i] > 0 && named[i][2], "device %d has no named track with spans", i);
    js_free(&root);
    return !in.bad;
}

static gs_graph *load_moe(gs_ctx *ctx) {
    static char text[1 << 16];
    gs_graph *g = NULL;
    size_t n = gst_read_file("examples/moe_layer.hlo", text, sizeof text);
    CHECK(n > 0);
    CHECK_OK(gs_hlo_parse(ctx, text, n, &g));
    return g;
}

/* Runs the MoE layer at D = 8 with tracing: every device has a span per entry instruction the runtime ran,
   the collectives among them with their bytes and groups. */
static void test_runtime_trace_moe(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = load_moe(ctx), *spmd = NULL;
    gs_partition_desc pd;
    gs_runtime_desc rd;
    gs_runtime *rt = NULL;
    gs_check_desc cd;
    gs_check_report rep;
    trace_facts f;
    void *inputs[4];
    int i, n_coll = 0;
    int64_t d;
    memset(&pd, 0, sizeof pd);
    pd.num_devices = 8;
    CHECK_OK(gs_partition(g, &pd, &spmd));
    for (i = 0; i < gs_graph_num_values(spmd); i++)
        n_coll += is_collective_name(gs_op_name(gs_value_op(gs_graph_value(spmd, i))));
    CHECK(n_coll >= 3);   /* the aux loss's all-reduce, dispatch and combine */
    for (i = 0; i < 4; i++) {
        gs_shape s = gs_value_shape(gs_graph_param(g, i));
        inputs[i] = malloc(gs_shape_bytes(&s));
        gs_fill_random(s, 3, i, inputs[i]);
    }
    memset(&rd, 0, sizeof rd);
    rd.num_devices = 8;
    rd.mode = GS_RUNTIME_LOCKSTEP;
    CHECK_OK(gs_runtime_create(ctx, &rd, &rt));
    CHECK(gs_runtime_trace_json(rt) == NULL && strstr(gs_ctx_error_msg(ctx), "no traced run"));
    gs_ctx_clear_error(ctx);
    CHECK_OK(gs_runtime_set_trace(rt, true));
    memset(&cd, 0, sizeof cd);
    CHECK_OK(gs_partition_check(spmd, rt, &cd, (const void *const *)inputs, &rep));
    CHECK(rep.ok);
    for (d = 0; d < 8; d++) {
        CHECK(gs_runtime_trace_count(rt, d) > 0 && gs_runtime_trace_count(rt, d) <= gs_graph_num_values(spmd));
        CHECK(gs_runtime_trace_span(rt, d, gs_runtime_trace_count(rt, d)) == NULL);
    }
    if (check_trace(gs_runtime_trace_json(rt), 8, 1, &f))
        for (d = 0; d < 8; d++) {
            CHECK_EQ_INT(f.spans[d], gs_runtime_trace_count(rt, d));
            CHECK_EQ_INT(f.collectives[d], n_coll);
        }
    gs_runtime_destroy(rt);
    for (i = 0; i < 4; i++) free(inputs[i]);
    gs_ctx_destroy(ctx);
}

/* The cost model's timeline of the same program: two tracks per device whose later end is the report's
   overlapped time, one span per entry instruction that takes time. */
static void test_cost_trace_moe(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = load_moe(ctx), *spmd = NULL;
    gs_partition_desc pd;
    gs_topology_desc td;
    gs_topology *topo = NULL;
    gs_cost_report *rep = NULL;
    trace_facts f;
    int i, timed = 0;
    int64_t d;
    memset(&pd, 0, sizeof pd);
    pd.num_devices = 8;
    CHECK_OK(gs_partition(g, &pd, &spmd));
    memset(&td, 0, sizeof td);
    CHECK_OK(gs_chip_lookup(ctx, "v5e", &td.chip));
    td.mesh_rank = 1;
    td.mesh[0] = 8;
    CHECK_OK(gs_topology_create(ctx, &td, &topo));
    CHECK_OK(gs_cost_program(spmd, topo, &rep));
    for (i = 0; i < gs_cost_report_num_rows(rep); i++)
        timed += gs_cost_report_row(rep, i)->parent < 0 && gs_cost_report_row(rep, i)->seconds > 0;
    if (check_trace(gs_cost_report_trace_json(rep), 8, 2, &f))
        for (d = 0; d < 8; d++) {
            CHECK_EQ_INT(f.spans[d], timed);
            CHECK_REL(f.end[d], gs_cost_report_totals(rep).seconds_overlapped * 1e6, 1e-6);
        }
    gs_ctx_destroy(ctx);
}

static char tmp[256];

/* The same through the CLI: the files it writes are valid traces. */
static void test_cli_traces(void) {
    static char text[1 << 20];
    char path[512];
    trace_facts f;
    CHECK_EQ_INT(gst_cli(tmp, "run examples/moe_layer.hlo --devices 8 --trace %s/run.json --check", tmp), 0);
    snprintf(path, sizeof path, "%s/run.json", tmp);
    CHECK(gst_read_file(path, text, sizeof text) > 0 && check_trace(text, 8, 1, &f));
    CHECK_EQ_INT(gst_cli(tmp, "partition examples/moe_layer.hlo --devices 8"), 0);
    put_file(tmp, "moe_spmd.hlo", gst_cli_out);
    CHECK_EQ_INT(gst_cli(tmp, "cost %s/moe_spmd.hlo --chip v5e --mesh 8 --trace %s/cost.json", tmp, tmp), 0);
    snprintf(path, sizeof path, "%s/cost.json", tmp);
    CHECK(gst_read_file(path, text, sizeof text) > 0 && check_trace(text, 8, 2, &f));
    CHECK_EQ_INT(gst_cli(tmp, "run examples/moe_layer.hlo --devices 8 --trace %s/no/such/dir/t.json", tmp), 2);
    CHECK(strstr(gst_cli_err, "cannot write") != NULL);
    CHECK_EQ_INT(gst_cli(tmp, "run examples/moe_layer.hlo --devices 8 --shapes-only --trace %s/t.json", tmp), 2);
    /* --svg draws the one --show value */
    CHECK_EQ_INT(gst_cli(tmp, "propagate examples/moe_layer.hlo --devices 8 --show logits --svg %s/l.svg", tmp), 0);
    snprintf(path, sizeof path, "%s/l.svg", tmp);
    CHECK(gst_read_file(path, text, sizeof text) > 0 && strncmp(text, "<svg ", 5) == 0 && strstr(text, "logits"));
    CHECK_EQ_INT(gst_cli(tmp, "propagate examples/moe_layer.hlo --devices 8 --svg %s/l.svg", tmp), 2);
}

/* counts non-overlapping occurrences of needle */
static int count_of(const char *hay, const char *needle) {
    int n = 0;
    while ((hay = strstr(hay, needle)) != NULL) n++, hay += strlen(needle);
    return n;
}

/* An f32[8,16] split [2,4] over 8 devices: 8 tiles with their regions, 8 devices each in its tile's colour. */
static void test_sharding_svg(void) {
    gs_ctx *ctx = gst_ctx();
    int64_t dims[2] = {8, 16}, tiles[2] = {2, 4}, all = 8;
    gs_shape s = gs_shape_make(GS_F32, 2, dims);
    const gs_sharding *sh = gs_sharding_iota(ctx, 2, tiles, 1, &all, NULL, 0, NULL);
    const gs_sharding *two[2];
    const char *svg = gs_sharding_svg(ctx, sh, s, 8, "x<y");
    CHECK(svg && strncmp(svg, "<svg ", 5) == 0 && strstr(svg, "</svg>"));
    if (!svg) return;
    CHECK(strstr(svg, "x&lt;y") != NULL);
    CHECK_EQ_INT(count_of(svg, "<rect "), 1 + 8 + 8);   /* background, tiles, devices */
    CHECK_EQ_INT(count_of(svg, "<text"), count_of(svg, "</text>"));
    CHECK(strstr(svg, ">[0:4, 0:4]<") && strstr(svg, ">[4:8, 12:16]<"));
    /* device 6 holds tile (1, 2), linear tile 6, hue 6 * 137 mod 360 = 102: that colour fills the tile and the
       device, and no other box (the 8 hues differ) */
    CHECK(strstr(svg, ">d6<") != NULL);
    CHECK_EQ_INT(count_of(svg, "fill=\"hsl(102,65%,62%)\""), 2);
    two[0] = two[1] = sh;
    CHECK(gs_sharding_svg(ctx, gs_sharding_tuple(ctx, 2, two), s, 8, NULL) == NULL);
    gs_ctx_clear_error(ctx);
    CHECK(gs_sharding_svg(ctx, sh, s, 4, NULL) == NULL);   /* the sharding names devices 0..7 */
    gs_ctx_clear_error(ctx);
    gs_ctx_destroy(ctx);
}

/* gshard exercise check: 0 solved, 1 not yet (with what is wrong), 2 error; a copy anywhere is checked. */
static void test_exercise_check_codes(void) {
    char path[512];
    FILE *f;
    CHECK_EQ_INT(gst_cli(tmp, "exercise list"), 0);
    CHECK(strstr(gst_cli_out, "08_matmul_case1") && strstr(gst_cli_out, "exercises in"));
    CHECK_EQ_INT(gst_cli(tmp, "exercise check %s/missing.hlo", tmp), 2);
    snprintf(path, sizeof path, "%s/untagged.hlo", tmp);
    f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) {
        fputs("HloModule m\nENTRY e {\n  ROOT x = f32[2] parameter(0)\n}\n", f);
        fclose(f);
    }
    CHECK_EQ_INT(gst_cli(tmp, "exercise check %s", path), 2);
    CHECK(strstr(gst_cli_err, "// exercise: NN_name") != NULL);
    snprintf(path, sizeof path, "%s/unknown.hlo", tmp);
    f = fopen(path, "wb");
    if (f) {
        fputs("// exercise: 99_no_such_thing\nHloModule m\nENTRY e {\n  ROOT x = f32[2] parameter(0)\n}\n", f);
        fclose(f);
    }
    CHECK_EQ_INT(gst_cli(tmp, "exercise check %s", path), 2);
    CHECK(strstr(gst_cli_err, "no exercise '99_no_such_thing'") != NULL);
    /* the starting file copied elsewhere: not yet, with the goals it misses */
    CHECK_EQ_INT(gst_cli(tmp, "exercise strip exercises/solutions/08_matmul_case1.hlo"), 0);
    put_file(tmp, "mine.hlo", gst_cli_out);
    CHECK_EQ_INT(gst_cli(tmp, "exercise check %s/mine.hlo", tmp), 1);
    CHECK(strstr(gst_cli_out, "not yet: at most 268435456") && strstr(gst_cli_out, "hint:"));
    /* the solution copied elsewhere: solved, run --check included */
    CHECK_EQ_INT(gst_cli(tmp, "exercise check exercises/solutions/08_matmul_case1.hlo"), 0);
    CHECK(strstr(gst_cli_out, "ok: run --check on 8 emulated devices") && strstr(gst_cli_out, "solved: 08_matmul_case1"));
    /* a predict exercise without its answers */
    CHECK_EQ_INT(gst_cli(tmp, "exercise check exercises/12_allgather_v4p.hlo"), 1);
    CHECK(strstr(gst_cli_out, "no answer for T_gather"));
}

void suite_course(void) {
    char cmd[512];
    snprintf(tmp, sizeof tmp, "%s/gshard_course_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmp)) snprintf(tmp, sizeof tmp, ".");
    RUN(test_runtime_trace_moe);
    RUN(test_cost_trace_moe);
    RUN(test_sharding_svg);
    if (access(gst_gshard_bin(), X_OK) == 0) {
        RUN(test_cli_traces);
        RUN(test_exercise_check_codes);
    }
    if (strcmp(tmp, ".") != 0) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
        if (system(cmd) != 0) fprintf(stderr, "suite_course: could not remove %s\n", tmp);
    }
}
