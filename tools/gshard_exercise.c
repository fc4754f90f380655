/* gshard_exercise.c - the course's checker: `gshard exercise list | check FILE | strip FILE`.
   Included by tools/gshard.c (one translation unit; it uses that file's load_module, read_all and user_msg).

   An exercise is exercises/NN_name.hlo. Its first line is `// exercise: NN_name`; the comment lines before
   the HloModule line form its header, where a line `// KEY: VALUE` with one of the keys below is data for
   this checker and every other comment line is prose for the student:
     chapter, topic          what `exercise list` shows
     kind                    annotate, predict or fix
     devices                 D, the devices the program is partitioned for and run on
     chip, mesh, torus       the cost model's chip and the logical mesh (and physical slice) of the D devices
     goal                    one requirement of an annotate or fix exercise (repeatable), see ex_goal_check
     predict                 `NAME = QUANTITY [unit U]`: a number the student predicts (repeatable), computed
                             here from the program with the cost model, see ex_quantity
     tolerance               relative tolerance of the predictions (default 5%)
     hint                    shown when the file does not solve the exercise yet (repeatable)
   `exercise check FILE` reads FILE's first line, loads the exercise's own file from the exercises directory
   (never solutions/), and verifies: (1) FILE is the exercise's program with shardings added or changed and
   nothing else (a predict exercise: the program exactly as given, answers added as `// answer: NAME =
   VALUE [unit]` lines); (2) every goal, measured on FILE partitioned for D devices, costed on the chip and
   mesh, and run without data for the memory; (3) every prediction within the tolerance; (4) once all that
   holds, the partitioned FILE run on D emulated devices matches the reference interpreter on the
   exercise's program (`run --check`). Exit 0 solved, 1 not yet (what is wrong and the hints), 2 error. */

#define EX_MAX_LINES 16
#define EX_LINE 256

typedef struct ex_spec {
    char name[EX_LINE], chapter[EX_LINE], topic[EX_LINE], kind[EX_LINE], chip[EX_LINE], mesh[EX_LINE], torus[EX_LINE];
    long long devices;
    double tol;   /* fraction */
    char goals[EX_MAX_LINES][EX_LINE], predicts[EX_MAX_LINES][EX_LINE], hints[EX_MAX_LINES][EX_LINE];
    int n_goals, n_predicts, n_hints;
} ex_spec;

/* what one check measured of a file */
typedef struct ex_measure {
    gs_graph *entry, *spmd;
    gs_cost_report *cost;
    gs_shapes_report *shapes;
    const gs_chip *chip;
} ex_measure;

/* ---- small text helpers ---- */
static char *ex_read_path(const char *path) {
    FILE *f = fopen(path, "rb");
    size_t len = 0;
    char *text;
    if (!f) return NULL;
    text = read_all(f, &len);
    fclose(f);
    return text;
}

/* copies the trimmed [b, e) into out (cap bytes); false when it does not fit */
static bool ex_copy_trim(char *out, size_t cap, const char *b, const char *e) {
    while (b < e && (*b == ' ' || *b == '\t')) b++;
    while (e > b && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) e--;
    if ((size_t)(e - b) >= cap) return false;
    memcpy(out, b, (size_t)(e - b));
    out[e - b] = 0;
    return true;
}

/* The exercise name on FILE's first line (`// exercise: NAME`), or false. */
static bool ex_tag(const char *text, char *name, size_t cap) {
    const char *p = text, *e;
    static const char tag[] = "// exercise:";
    if (strncmp(p, tag, sizeof tag - 1) != 0) return false;
    p += sizeof tag - 1;
    e = p + strcspn(p, "\n");
    if (!ex_copy_trim(name, cap, p, e) || !name[0]) return false;
    for (p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_')) return false;
    return true;
}

/* ---- the exercise's header ---- */
/* Parses the header of an exercise file (path names it in messages). False after a message. */
static bool ex_parse_header(const char *text, const char *path, ex_spec *s) {
    static const char *const keys[] = {"exercise", "chapter", "topic", "kind", "devices", "chip", "mesh", "torus",
                                       "goal", "predict", "tolerance", "hint", NULL};
    const char *p = text;
    int line = 0;
    memset(s, 0, sizeof *s);
    s->tol = 0.05;
    while (*p == '/' && p[1] == '/') {
        const char *e = p + strcspn(p, "\n"), *colon;
        int k;
        line++;
        for (k = 0; keys[k]; k++) {
            size_t n = strlen(keys[k]);
            if (strncmp(p + 3, keys[k], n) == 0 && p[2] == ' ' && p[3 + n] == ':') break;
        }
        if (keys[k]) {
            char v[EX_LINE];
            colon = p + 3 + strlen(keys[k]) + 1;
            if (!ex_copy_trim(v, sizeof v, colon, e) || !v[0]) {
                fprintf(stderr, "%s:%d: '%s:' needs a value of at most %d characters\n", path, line, keys[k], EX_LINE - 1);
                return false;
            }
            switch (k) {
            case 0: snprintf(s->name, sizeof s->name, "%s", v); break;
            case 1: snprintf(s->chapter, sizeof s->chapter, "%s", v); break;
            case 2: snprintf(s->topic, sizeof s->topic, "%s", v); break;
            case 3: snprintf(s->kind, sizeof s->kind, "%s", v); break;
            case 4: s->devices = strtoll(v, NULL, 10); break;
            case 5: snprintf(s->chip, sizeof s->chip, "%s", v); break;
            case 6: snprintf(s->mesh, sizeof s->mesh, "%s", v); break;
            case 7: snprintf(s->torus, sizeof s->torus, "%s", v); break;
            case 10: s->tol = strtod(v, NULL) / (strchr(v, '%') ? 100.0 : 1.0); break;
            default: {
                char(*list)[EX_LINE] = k == 8 ? s->goals : k == 9 ? s->predicts : s->hints;
                int *n = k == 8 ? &s->n_goals : k == 9 ? &s->n_predicts : &s->n_hints;
                if (*n == EX_MAX_LINES) {
                    fprintf(stderr, "%s:%d: at most %d '%s:' lines\n", path, line, EX_MAX_LINES, keys[k]);
                    return false;
                }
                memcpy(list[(*n)++], v, sizeof v);
            }
            }
        }
        p = *e ? e + 1 : e;
    }
    if (!s->name[0] || !s->chapter[0] || !s->topic[0] || s->devices < 1 || !s->chip[0] || !s->mesh[0] ||
        !(s->tol > 0 && s->tol < 1) ||
        (strcmp(s->kind, "annotate") != 0 && strcmp(s->kind, "predict") != 0 && strcmp(s->kind, "fix") != 0)) {
        fprintf(stderr, "%s: the header needs exercise, chapter, topic, kind (annotate, predict or fix), devices, chip "
                        "and mesh (and a tolerance between 0 and 100%%)\n", path);
        return false;
    }
    if ((strcmp(s->kind, "predict") == 0) != (s->n_predicts > 0) || (s->n_goals == 0 && s->n_predicts == 0)) {
        fprintf(stderr, "%s: a predict exercise has 'predict:' lines, the others 'goal:' lines\n", path);
        return false;
    }
    return true;
}

/* ---- where the exercises are ---- */
#ifndef GSHARD_EXERCISES_DIR
#define GSHARD_EXERCISES_DIR ""
#endif
static char ex_argv0[4096];
static const char *ex_builtin_dir(void) { return GSHARD_EXERCISES_DIR; }

/* Candidate i (0..6) of the exercises directory: --dir, $GSHARD_EXERCISES, the directory built in,
   ./exercises, and beside the program (../exercises, ../../exercises, ../share/gshard/exercises). False
   when candidate i does not apply; -1 past the last. A directory the user named (--dir or the environment)
   is the only one looked at. */
static int ex_candidate(int i, const char *dir_opt, char *out, size_t cap) {
    const char *env = getenv("GSHARD_EXERCISES");
    static const char *const rel[] = {"/../exercises", "/../../exercises", "/../share/gshard/exercises"};
    const char *slash = strrchr(ex_argv0, '/');
    if (i > 6 || (i > 0 && dir_opt) || (i > 1 && env && *env)) return -1;
    if (i == 0 && dir_opt) snprintf(out, cap, "%s", dir_opt);
    else if (i == 1 && env && *env) snprintf(out, cap, "%s", env);
    else if (i == 2 && *ex_builtin_dir()) snprintf(out, cap, "%s", ex_builtin_dir());
    else if (i == 3) snprintf(out, cap, "exercises");
    else if (i >= 4 && slash) snprintf(out, cap, "%.*s%s", (int)(slash - ex_argv0), ex_argv0, rel[i - 4]);
    else return 0;
    return 1;
}

/* DIR/NAME.hlo of the first candidate directory holding it, into out. */
static bool ex_find(const char *dir_opt, const char *name, char *out, size_t cap) {
    char dir[4096];
    int i, r;
    for (i = 0; (r = ex_candidate(i, dir_opt, dir, sizeof dir)) >= 0; i++) {
        FILE *f;
        if (r == 0) continue;
        snprintf(out, cap, "%.3900s/%.64s.hlo", dir, name);
        if ((f = fopen(out, "rb")) != NULL) {
            fclose(f);
            return true;
        }
    }
    return false;
}

/* ---- structure: the program with every sharding removed ---- */
/* Removes every `, sharding={...}` (balanced braces) outside comments, and the module line's `, mesh={...}` and
   `, num_partitions=N` (which say how the program is split, not what it computes). Returns malloc'd text or
   NULL. */
static char *ex_strip(const char *text) {
    size_t n = strlen(text), o = 0;
    char *out = (char *)malloc(n + 1);
    const char *p = text;
    bool line_start = true;
    if (!out) return NULL;
    while (*p) {
        if (line_start) {
            const char *q = p;
            while (*q == ' ' || *q == '\t') q++;
            if (q[0] == '/' && q[1] == '/') {   /* a comment line stays as it is */
                size_t k = strcspn(p, "\n");
                memcpy(out + o, p, k);
                o += k;
                p += k;
                continue;
            }
        }
        line_start = *p == '\n';
        if (*p == ',' && strncmp(p + 1 + strspn(p + 1, " "), "num_partitions=", 15) == 0) {
            const char *q = p + 1 + strspn(p + 1, " ") + 15;
            p = q + strspn(q, "0123456789");
            continue;
        }
        if (*p == ',' && (strncmp(p + 1 + strspn(p + 1, " "), "sharding={", 10) == 0 ||
                          strncmp(p + 1 + strspn(p + 1, " "), "mesh={", 6) == 0)) {
            const char *q = p + 1 + strspn(p + 1, " ");
            int depth = 0;
            q += strcspn(q, "{");
            do {
                if (*q == '{') depth++;
                else if (*q == '}') depth--;
                q++;
            } while (*q && depth > 0);
            p = q;
            continue;
        }
        out[o++] = *p++;
    }
    out[o] = 0;
    return out;
}

/* The canonical text of a module (gs_hlo_print), malloc'd; NULL after a message naming path. */
static char *ex_canonical(const char *text, const char *path) {
    gs_ctx *ctx = NULL;
    gs_graph *g = NULL;
    const char *printed = NULL;
    char *copy = NULL;
    if (gs_ctx_create(NULL, &ctx) != GS_OK) return NULL;
    if (gs_hlo_parse(ctx, text, strlen(text), &g) == GS_OK && gs_graph_verify(g) == GS_OK) printed = gs_hlo_print(g);
    if (printed && (copy = (char *)malloc(strlen(printed) + 1)) != NULL) memcpy(copy, printed, strlen(printed) + 1);
    if (!printed) fprintf(stderr, "%s: %s\n", path, user_msg(gs_ctx_error_msg(ctx)));
    gs_ctx_destroy(ctx);
    return copy;
}

/* 1 when a and b (canonical texts) are equal, else 0 with the first differing line of `mine` printed;
   -1 on an error */
static int ex_same_program(const char *mine, const char *theirs, const char *what) {
    const char *a = mine, *b = theirs;
    int line = 1;
    if (!mine || !theirs) return -1;
    while (*a && *a == *b) {
        if (*a == '\n') line++;
        a++, b++;
    }
    if (!*a && !*b) return 1;
    while (a > mine && a[-1] != '\n') a--;
    while (b > theirs && b[-1] != '\n') b--;
    printf("  not yet: %s; the first difference (line %d of the canonical text, `gshard print`):\n"
           "    yours:    %.*s\n    exercise: %.*s\n",
           what, line, (int)strcspn(a, "\n"), a, (int)strcspn(b, "\n"), b);
    return 0;
}

/* ---- numbers with units ---- */
typedef enum ex_dim { EX_NONE, EX_TIME, EX_BYTES, EX_FLOPS } ex_dim;
static const struct {
    const char *name;
    double scale;
    ex_dim dim;
} ex_units[] = {{"s", 1, EX_TIME},        {"ms", 1e-3, EX_TIME},          {"us", 1e-6, EX_TIME},
                {"\xc2\xb5s", 1e-6, EX_TIME}, {"ns", 1e-9, EX_TIME},      {"B", 1, EX_BYTES},
                {"kB", 1e3, EX_BYTES},    {"MB", 1e6, EX_BYTES},          {"GB", 1e9, EX_BYTES},
                {"KiB", 1024.0, EX_BYTES}, {"MiB", 1048576.0, EX_BYTES},  {"GiB", 1073741824.0, EX_BYTES},
                {"FLOP", 1, EX_FLOPS},    {"FLOPs", 1, EX_FLOPS},         {"kFLOP", 1e3, EX_FLOPS},
                {"MFLOP", 1e6, EX_FLOPS}, {"GFLOP", 1e9, EX_FLOPS},       {"TFLOP", 1e12, EX_FLOPS}};
static const char *const ex_dim_names[] = {"a plain number", "a time", "bytes", "FLOPs"};

/* "12.5 us" -> value in base units (s, B, FLOP) and its dimension; a bare number has dim EX_NONE. */
static bool ex_number(const char *text, double *value, ex_dim *dim) {
    char *end = NULL;
    size_t i;
    double x = strtod(text, &end);
    if (end == text || !isfinite(x)) return false;
    while (*end == ' ') end++;
    *dim = EX_NONE;
    *value = x;
    if (!*end) return true;
    for (i = 0; i < sizeof ex_units / sizeof ex_units[0]; i++) {
        if (strcmp(end, ex_units[i].name) == 0) {
            *value = x * ex_units[i].scale;
            *dim = ex_units[i].dim;
            return true;
        }
    }
    return false;
}

/* v (base units) written in the unit of spec ("10.5 MB" -> "35.3 MB"); a bare spec gives a bare number */
static const char *ex_in_unit(double v, const char *spec, char *buf, size_t cap) {
    char *end = NULL;
    size_t i;
    (void)strtod(spec, &end);
    while (end && *end == ' ') end++;
    for (i = 0; end && *end && i < sizeof ex_units / sizeof ex_units[0]; i++)
        if (strcmp(end, ex_units[i].name) == 0) {
            snprintf(buf, cap, "%.4g %s", v / ex_units[i].scale, ex_units[i].name);
            return buf;
        }
    snprintf(buf, cap, "%.10g", v);
    return buf;
}

/* ---- measuring a file ---- */
static bool ex_is_collective(const char *op) {
    return strcmp(op, "all-reduce") == 0 || strcmp(op, "all-gather") == 0 || strcmp(op, "reduce-scatter") == 0 ||
           strcmp(op, "all-to-all") == 0 || strcmp(op, "collective-permute") == 0;
}

static const char *ex_row_op(const gs_cost_row *row) { return gs_op_name(gs_value_op(row->value)); }

/* Partitions entry for s->devices devices, costs the SPMD program on the chip and mesh and runs it without
   data. False after a message. */
static bool ex_measure_file(gs_ctx *ctx, gs_graph *entry, const ex_spec *s, const char *path, ex_measure *m) {
    gs_partition_desc pd;
    gs_topology_desc td;
    gs_topology *topo = NULL;
    gs_shapes_desc sd;
    int i;
    memset(m, 0, sizeof *m);
    m->entry = entry;
    memset(&pd, 0, sizeof pd);
    memset(&td, 0, sizeof td);
    memset(&sd, 0, sizeof sd);
    pd.num_devices = s->devices;
    if (gs_hlo_num_partitions(entry) != 1 && gs_hlo_num_partitions(entry) != s->devices) {
        fprintf(stderr, "%s: the module says num_partitions=%lld but the exercise has %lld devices\n", path,
                (long long)gs_hlo_num_partitions(entry), s->devices);
        return false;
    }
    if (gs_graph_set_num_partitions(entry, s->devices) != GS_OK || gs_partition(entry, &pd, &m->spmd) != GS_OK ||
        gs_chip_lookup(ctx, s->chip, &td.chip) != GS_OK ||
        gs_cost_parse_dims(ctx, s->mesh, &td.mesh_rank, td.mesh) != GS_OK ||
        (s->torus[0] && gs_cost_parse_dims(ctx, s->torus, &td.torus_rank, td.torus) != GS_OK) ||
        gs_topology_create(ctx, &td, &topo) != GS_OK || gs_cost_program(m->spmd, topo, &m->cost) != GS_OK) {
        fprintf(stderr, "%s: %s\n", path, user_msg(gs_ctx_error_msg(ctx)));
        return false;
    }
    m->chip = gs_topology_chip(topo);
    sd.num_devices = s->devices;
    if (gs_shapes_run(m->spmd, &sd, &m->shapes) != GS_OK) {
        fprintf(stderr, "%s: %s\n", path, user_msg(gs_ctx_error_msg(ctx)));
        return false;
    }
    for (i = 0; i < gs_partition_num_warnings(m->spmd); i++)
        printf("  partitioner: %s\n", user_msg(gs_partition_warning(m->spmd, i)));
    return true;
}

/* Sum of one field over the entry rows whose opcode is op ("all": every row; "collectives": the five
   collective opcodes); *count gets how many rows matched. field: 0 seconds, 1 ICI bytes, 2 HBM bytes,
   3 FLOPs. Loop bodies count through their while row. */
static double ex_rows(const ex_measure *m, const char *op, int field, int *count) {
    int i, n = gs_cost_report_num_rows(m->cost);
    double sum = 0;
    *count = 0;
    for (i = 0; i < n; i++) {
        const gs_cost_row *row = gs_cost_report_row(m->cost, i);
        const char *name = ex_row_op(row);
        if (row->parent >= 0) continue;
        if (strcmp(op, "all") != 0 && strcmp(op, name) != 0 &&
            !(strcmp(op, "collectives") == 0 && ex_is_collective(name)))
            continue;
        (*count)++;
        sum += field == 0 ? row->seconds : field == 1 ? row->ici_bytes : field == 2 ? row->hbm_bytes : row->flops;
    }
    return sum;
}

static int64_t ex_peak(const ex_measure *m) {
    int64_t d, peak = 0;
    for (d = 0; d < gs_shapes_num_devices(m->shapes); d++)
        if (gs_shapes_peak_bytes(m->shapes, d) > peak) peak = gs_shapes_peak_bytes(m->shapes, d);
    return peak;
}

/* The most bytes one device sends in one execution of one collective (the cost model's ICI bytes). */
static double ex_max_collective(const ex_measure *m, const char **which) {
    int i, n = gs_cost_report_num_rows(m->cost);
    double most = 0;
    *which = NULL;
    for (i = 0; i < n; i++) {
        const gs_cost_row *row = gs_cost_report_row(m->cost, i);
        if (!ex_is_collective(ex_row_op(row)) || row->ici_bytes < most) continue;
        most = row->ici_bytes;
        *which = gs_value_name(row->value);
    }
    return most;
}

/* A predicted quantity: "time OP", "ici-bytes OP", "hbm-bytes OP", "flops OP", "intensity OP", "count OP"
   (OP an opcode, "collectives" or "all"), "peak-bytes", "total-time", "overlapped-time", "chip-intensity",
   "critical-batch". False for an unknown quantity. */
static bool ex_quantity(gs_ctx *ctx, const ex_measure *m, const char *q, double *value, ex_dim *dim) {
    static const char *const per_op[] = {"time ", "ici-bytes ", "hbm-bytes ", "flops ", "intensity ", "count "};
    static const ex_dim per_op_dim[] = {EX_TIME, EX_BYTES, EX_BYTES, EX_FLOPS, EX_NONE, EX_NONE};
    gs_cost_totals t = gs_cost_report_totals(m->cost);
    int k, count;
    for (k = 0; k < 6; k++) {
        size_t n = strlen(per_op[k]);
        if (strncmp(q, per_op[k], n) != 0) continue;
        *dim = per_op_dim[k];
        if (k == 4) {
            double hbm = ex_rows(m, q + n, 2, &count);
            *value = hbm > 0 ? ex_rows(m, q + n, 3, &count) / hbm : 0;
        } else {
            *value = ex_rows(m, q + n, k < 4 ? k : 0, &count);
            if (k == 5) *value = count;
        }
        return k == 5 || count > 0;
    }
    *dim = EX_NONE;
    if (strcmp(q, "peak-bytes") == 0) *value = (double)ex_peak(m), *dim = EX_BYTES;
    else if (strcmp(q, "total-time") == 0) *value = t.seconds_serial, *dim = EX_TIME;
    else if (strcmp(q, "overlapped-time") == 0) *value = t.seconds_overlapped, *dim = EX_TIME;
    else if (strcmp(q, "chip-intensity") == 0) *value = gs_chip_intensity(m->chip, GS_MATH_BF16);
    else if (strcmp(q, "critical-batch") == 0) return gs_cost_critical_batch(ctx, m->chip, 2.0, GS_MATH_BF16, value) == GS_OK;
    else return false;
    return true;
}

/* "split NAME DIM N": instruction NAME of the program (its sharding after propagation) cuts dimension DIM
   into N tiles. 1 read (ok set, what written), -1 malformed. */
static int ex_split_goal(const ex_measure *m, const char *arg, char *what, size_t cap, bool *ok) {
    char name[128];
    long long dim = -1, n = 0;
    gs_value *v;
    const gs_sharding *sh;
    int64_t got = 1;
    if (sscanf(arg, "%127s %lld %lld", name, &dim, &n) != 3 || dim < 0 || n < 1 || !(v = gs_graph_find(m->entry, name)))
        return -1;
    sh = gs_value_sharding(v);
    if (sh && gs_sharding_get_kind(sh) == GS_SHARDING_TILED && dim < gs_sharding_rank(sh))
        got = gs_sharding_tiles(sh, (int)dim);
    *ok = got == n;
    snprintf(what, cap, "%s is split into %lld tiles along dimension %lld (it is split into %lld)", name, n, dim,
             (long long)got);
    return 1;
}

/* One goal line: "no-collectives", "forbid OP", "require OP", "max-collective-bytes SIZE" (the most one
   device sends in one collective), "max-ici-bytes SIZE", "max-peak-bytes SIZE", "max-param-bytes SIZE",
   "max-time TIME" (nothing overlapped), "max-flops N" (per device), "max-collectives N", "split NAME DIM N"
   (NAME's dimension DIM in N tiles), "no-warnings". Prints "ok" or "not yet" with what was measured.
   Returns 1 met, 0 not, -1 malformed. */
static int ex_goal_check(const ex_measure *m, const char *goal) {
    gs_cost_totals t = gs_cost_report_totals(m->cost);
    double limit = 0, got;
    ex_dim dim = EX_NONE;
    int count, r;
    const char *arg = strchr(goal, ' '), *which = NULL;
    bool ok;
    char what[EX_LINE], got_text[64];
    if (strncmp(goal, "max-", 4) == 0 && (!arg || !ex_number(arg + 1, &limit, &dim))) return -1;
    if (strcmp(goal, "no-collectives") == 0) {
        ex_rows(m, "collectives", 0, &count);
        ok = count == 0;
        snprintf(what, sizeof what, "no collective (the SPMD program has %d)", count);
    } else if ((strncmp(goal, "forbid ", 7) == 0 || strncmp(goal, "require ", 8) == 0) && arg) {
        ex_rows(m, arg + 1, 0, &count);
        ok = goal[0] == 'f' ? count == 0 : count > 0;
        snprintf(what, sizeof what, "%s %s (the SPMD program has %d)", goal[0] == 'f' ? "no" : "at least one", arg + 1, count);
    } else if (strncmp(goal, "max-collective-bytes ", 21) == 0 && dim == EX_BYTES) {
        got = ex_max_collective(m, &which);
        ok = got <= limit;
        snprintf(what, sizeof what, "no collective sends more than %s per device (the largest, %s, sends %s)", arg + 1,
                 which ? which : "none", ex_in_unit(got, arg + 1, got_text, sizeof got_text));
    } else if (strncmp(goal, "max-ici-bytes ", 14) == 0 && dim == EX_BYTES) {
        ok = t.ici_bytes <= limit;
        snprintf(what, sizeof what, "at most %s sent over ICI per device (measured %s)", arg + 1,
                 ex_in_unit(t.ici_bytes, arg + 1, got_text, sizeof got_text));
    } else if (strncmp(goal, "max-peak-bytes ", 15) == 0 && dim == EX_BYTES) {
        ok = (double)ex_peak(m) <= limit;
        snprintf(what, sizeof what, "at most %s of live buffers per device (measured peak %s)", arg + 1,
                 ex_in_unit((double)ex_peak(m), arg + 1, got_text, sizeof got_text));
    } else if (strncmp(goal, "max-param-bytes ", 16) == 0 && dim == EX_BYTES) {
        ok = (double)gs_shapes_param_bytes(m->shapes) <= limit;
        snprintf(what, sizeof what, "parameters take at most %s per device (measured %s)", arg + 1,
                 ex_in_unit((double)gs_shapes_param_bytes(m->shapes), arg + 1, got_text, sizeof got_text));
    } else if (strncmp(goal, "max-time ", 9) == 0 && dim == EX_TIME) {
        ok = t.seconds_serial <= limit;
        snprintf(what, sizeof what, "estimated time at most %s (measured %s, nothing overlapped)", arg + 1,
                 ex_in_unit(t.seconds_serial, arg + 1, got_text, sizeof got_text));
    } else if (strncmp(goal, "max-flops ", 10) == 0 && (dim == EX_FLOPS || dim == EX_NONE)) {
        ok = t.flops <= limit;
        snprintf(what, sizeof what, "at most %s%s per device (measured %s%s)", arg + 1, dim == EX_NONE ? " FLOPs" : "",
                 ex_in_unit(t.flops, arg + 1, got_text, sizeof got_text), dim == EX_NONE ? " FLOPs" : "");
    } else if (strncmp(goal, "max-collectives ", 16) == 0 && dim == EX_NONE) {
        ex_rows(m, "collectives", 0, &count);
        ok = count <= limit;
        snprintf(what, sizeof what, "at most %s collective%s (the SPMD program has %d)", arg + 1, limit == 1 ? "" : "s",
                 count);
    } else if (strncmp(goal, "split ", 6) == 0) {
        r = ex_split_goal(m, arg + 1, what, sizeof what, &ok);
        if (r < 0) return -1;
    } else if (strcmp(goal, "no-warnings") == 0) {
        count = gs_partition_num_warnings(m->spmd);
        ok = count == 0;
        snprintf(what, sizeof what, "no reshard replicates a whole tensor (the partitioner warned %d time%s)", count,
                 count == 1 ? "" : "s");
    } else {
        return -1;
    }
    printf("  %s: %s\n", ok ? "ok" : "not yet", what);
    return ok ? 1 : 0;
}

/* ---- predictions ---- */
/* The student's `// answer: NAME = VALUE [unit]` line for name in text: 1 found (value in base units), 0 none,
   -1 unreadable (a message printed). */
static int ex_answer(const char *text, const char *name, double *value, ex_dim *dim) {
    const char *p = text;
    size_t n = strlen(name);
    while ((p = strstr(p, "// answer:")) != NULL) {
        const char *q = p + 10, *e = p + strcspn(p, "\n"), *b = p;
        char v[EX_LINE];
        while (b > text && (b[-1] == ' ' || b[-1] == '\t')) b--;
        p = e;
        if (b > text && b[-1] != '\n') continue;   /* only a line of its own (not text quoting one) */
        while (*q == ' ') q++;
        if (strncmp(q, name, n) != 0 || (q[n] != ' ' && q[n] != '=')) continue;
        q += n;
        while (*q == ' ') q++;
        if (*q != '=' || !ex_copy_trim(v, sizeof v, q + 1, e) || !ex_number(v, value, dim)) {
            printf("  not yet: cannot read your answer line for %s; write `// answer: %s = NUMBER UNIT`\n", name, name);
            return -1;
        }
        return 1;
    }
    return 0;
}

static const char *ex_unit_name(ex_dim dim, const char *want) {
    size_t i;
    for (i = 0; i < sizeof ex_units / sizeof ex_units[0]; i++)
        if (ex_units[i].dim == dim && (!want || strcmp(ex_units[i].name, want) == 0)) return ex_units[i].name;
    return "";
}

/* One `predict:` line against the student's answer. 1 within tolerance, 0 not, -1 malformed. */
static int ex_predict_check(gs_ctx *ctx, const ex_measure *m, const ex_spec *s, const char *line, const char *text) {
    char name[64], q[EX_LINE], unit[16] = "";
    const char *eq = strchr(line, '='), *u;
    double want, got, scale = 1;
    ex_dim wdim, gdim;
    size_t i;
    int r;
    if (!eq || !ex_copy_trim(name, sizeof name, line, eq) || !name[0]) return -1;
    u = strstr(eq, " unit ");
    if (!ex_copy_trim(q, sizeof q, eq + 1, u ? u : eq + strlen(eq))) return -1;
    if (u && !ex_copy_trim(unit, sizeof unit, u + 6, u + strlen(u))) return -1;
    if (!ex_quantity(ctx, m, q, &want, &wdim)) return -1;
    for (i = 0; unit[0] && i < sizeof ex_units / sizeof ex_units[0]; i++)
        if (strcmp(ex_units[i].name, unit) == 0) scale = ex_units[i].scale;
    r = ex_answer(text, name, &got, &gdim);
    if (r < 0) return 0;
    if (r == 0) {
        printf("  not yet: no answer for %s (add a line `// answer: %s = VALUE%s%s`)\n", name, name, unit[0] ? " " : "",
               unit);
        return 0;
    }
    if (gdim == EX_NONE && wdim != EX_NONE) got *= scale, gdim = wdim;   /* a bare number is in the stated unit */
    if (gdim != wdim) {
        printf("  not yet: %s is %s, and your answer is %s\n", name, ex_dim_names[wdim], ex_dim_names[gdim]);
        return 0;
    }
    if (fabs(got - want) <= s->tol * fabs(want)) {
        printf("  ok: %s = %.4g%s%s is within %.3g%% of the cost model's value\n", name, got / scale, wdim ? " " : "",
               ex_unit_name(wdim, unit[0] ? unit : NULL), s->tol * 100);
        return 1;
    }
    printf("  not yet: %s = %.4g%s%s is too %s (more than %.3g%% off)\n", name, got / scale, wdim ? " " : "",
           ex_unit_name(wdim, unit[0] ? unit : NULL), got > want ? "high" : "low", s->tol * 100);
    return 0;
}

/* ---- the run on emulated devices ---- */
/* Runs the partitioned program on D devices with generated inputs and compares it with the reference
   interpreter on the source. 1 match, 0 mismatch (printed), -1 error (printed). */
static int ex_run_check(gs_ctx *ctx, gs_graph *entry, const ex_measure *m, long long devices) {
    int np = gs_graph_num_params(entry), i, rc = -1;
    void **inputs = (void **)calloc((size_t)np + 1, sizeof(void *));
    gs_runtime_desc rd;
    gs_runtime *rt = NULL;
    gs_check_desc cd;
    gs_check_report rep;
    if (!inputs) return -1;
    for (i = 0; i < np; i++) {
        gs_shape sh = gs_value_shape(gs_graph_param(entry, i));
        if (sh.dtype == GS_TUPLE || !(inputs[i] = malloc(gs_shape_bytes(&sh) ? gs_shape_bytes(&sh) : 1))) goto done;
        gs_fill_random(sh, 0, i, inputs[i]);
    }
    memset(&rd, 0, sizeof rd);
    rd.num_devices = devices;
    rd.mode = GS_RUNTIME_LOCKSTEP;   /* every device in this thread: the same bits as threads, less waiting */
    memset(&cd, 0, sizeof cd);
    cd.rtol = 1e-4;   /* f32 sums added in another order differ in their last bits; near 0 (a sum of large */
    cd.atol = 1e-2;   /* terms that cancel) the difference is absolute */
    if (gs_runtime_create(ctx, &rd, &rt) != GS_OK ||
        gs_partition_check(m->spmd, rt, &cd, (const void *const *)inputs, &rep) != GS_OK) {
        printf("  not yet: the partitioned program does not run: %s\n", user_msg(gs_ctx_error_msg(ctx)));
        rc = 0;
    } else if (!rep.ok) {
        printf("  not yet: run --check: %s\n", user_msg(rep.message));
        rc = 0;
    } else {
        printf("  ok: run --check on %lld emulated devices: %lld elements match the reference interpreter on the "
               "exercise's program (--rtol 1e-4 --atol 1e-2)\n", devices, (long long)rep.n_compared);
        rc = 1;
    }
done:
    gs_runtime_destroy(rt);
    for (i = 0; i < np; i++) free(inputs[i]);
    free(inputs);
    if (rc < 0) printf("  cannot run the program: out of memory or a tuple parameter\n");
    return rc;
}

/* ---- exercise check ---- */
/* Step (1): FILE is the exercise's program. 1 yes, 0 no (printed), -1 error. */
static int ex_check_structure(const ex_spec *s, const char *mine, const char *orig, const char *path, const char *opath) {
    bool predict = strcmp(s->kind, "predict") == 0;
    char *a = predict ? NULL : ex_strip(mine), *b = predict ? NULL : ex_strip(orig);
    char *ca = ex_canonical(predict ? mine : a, path), *cb = ca ? ex_canonical(predict ? orig : b, opath) : NULL;
    int r = ex_same_program(ca, cb,
                            predict ? "the program must stay exactly as given (shardings included); only your "
                                      "`// answer:` lines are added"
                                    : "only shardings may change: the instructions, shapes and names must stay the "
                                      "exercise's (`gshard exercise strip FILE` shows your program without them)");
    if (r == 1) printf("  ok: %s\n", predict ? "the program is the exercise's, unchanged" :
                                               "the program is the exercise's, with your shardings");
    free(a), free(b), free(ca), free(cb);
    return r;
}

/* Steps (2)-(4) on a parsed FILE. 1 all met, 0 not, -1 error. */
static int ex_check_program(gs_ctx *ctx, const ex_spec *s, gs_graph *entry, const char *text, const char *path,
                            const char *opath) {
    ex_measure m;
    int i, met = 1, r;
    if (!ex_measure_file(ctx, entry, s, path, &m)) return -1;
    for (i = 0; i < s->n_goals; i++) {
        if ((r = ex_goal_check(&m, s->goals[i])) < 0) {
            fprintf(stderr, "%s: cannot read the goal '%s'\n", opath, s->goals[i]);
            return -1;
        }
        if (!r) met = 0;
    }
    for (i = 0; i < s->n_predicts; i++) {
        if ((r = ex_predict_check(ctx, &m, s, s->predicts[i], text)) < 0) {
            fprintf(stderr, "%s: cannot read the prediction '%s'\n", opath, s->predicts[i]);
            return -1;
        }
        if (!r) met = 0;
    }
    if (!met) {
        printf("  (run --check is done once the goals are met)\n");
        return 0;
    }
    return ex_run_check(ctx, entry, &m, s->devices);
}

static int ex_check(const char *path, const char *dir_opt) {
    char name[64], opath[4096];
    char *text = ex_read_path(path), *orig = NULL;
    ex_spec s;
    gs_ctx *ctx = NULL;
    gs_graph *entry = NULL;
    int r = -1, i;
    if (!text) {
        fprintf(stderr, "gshard exercise: cannot read %s: %s\n", path, strerror(errno));
        return EXIT_ERROR;
    }
    if (!ex_tag(text, name, sizeof name)) {
        fprintf(stderr, "%s: the first line must be the exercise's tag, `// exercise: NN_name` (as in its starting file)\n",
                path);
        goto done;
    }
    if (!ex_find(dir_opt, name, opath, sizeof opath)) {
        fprintf(stderr, "%s: no exercise '%s' found (looked for %s.hlo in --dir, $GSHARD_EXERCISES, %s, ./exercises "
                        "and beside the program; `gshard exercise list` shows the course)\n",
                path, name, name, *ex_builtin_dir() ? ex_builtin_dir() : "the built-in directory");
        goto done;
    }
    if (!(orig = ex_read_path(opath)) || !ex_parse_header(orig, opath, &s)) {
        if (!orig) fprintf(stderr, "%s: cannot read the file\n", opath);
        goto done;
    }
    printf("exercise %s (chapter %s: %s), %s, %lld device%s, %s mesh %s\n", s.name, s.chapter, s.topic, s.kind, s.devices,
           s.devices == 1 ? "" : "s", s.chip, s.mesh);
    r = ex_check_structure(&s, text, orig, path, opath);
    if (r == 1) {
        if (gs_ctx_create(NULL, &ctx) != GS_OK) r = -1;
        else if (!load_module(ctx, path, &entry)) r = -1;
        else r = ex_check_program(ctx, &s, entry, text, path, opath);
    }
    if (r == 1) {
        printf("solved: %s\n", s.name);
    } else if (r == 0) {
        printf("not solved yet\n");
        for (i = 0; i < s.n_hints; i++) printf("hint: %s\n", s.hints[i]);
    }
done:
    gs_ctx_destroy(ctx);
    free(text);
    free(orig);
    return r == 1 ? EXIT_OK : r == 0 ? EXIT_MISMATCH : EXIT_ERROR;
}

/* ---- exercise list ---- */
static int ex_name_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int ex_list(const char *dir_opt) {
    char dir[4096], path[4200];
    char *names[256];
    int n = 0, i, r, rc = EXIT_OK;
    DIR *d = NULL;
    struct dirent *e;
    for (i = 0; !d && (r = ex_candidate(i, dir_opt, dir, sizeof dir)) >= 0; i++)
        if (r == 1) d = opendir(dir);
    if (!d) {
        fprintf(stderr, "gshard exercise: no exercises directory found (give --dir DIR or set GSHARD_EXERCISES)\n");
        return EXIT_ERROR;
    }
    while ((e = readdir(d)) != NULL && n < 256) {
        size_t k = strlen(e->d_name);
        if (k < 5 || strcmp(e->d_name + k - 4, ".hlo") != 0 || !(names[n] = (char *)malloc(k + 1))) continue;
        memcpy(names[n++], e->d_name, k + 1);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], ex_name_cmp);
    printf("%-28s %-8s %-9s %s\n", "exercise", "chapter", "kind", "topic");
    for (i = 0; i < n; i++) {
        char *text;
        ex_spec s;
        snprintf(path, sizeof path, "%.3900s/%.200s", dir, names[i]);
        text = ex_read_path(path);
        if (text && ex_parse_header(text, path, &s)) printf("%-28s %-8s %-9s %s\n", s.name, s.chapter, s.kind, s.topic);
        else rc = EXIT_ERROR;
        free(text);
        free(names[i]);
    }
    printf("%d exercises in %s; `gshard exercise check FILE` checks your copy of one\n", n, dir);
    return rc;
}

/* ---- exercise strip: the program without its shardings (a fresh start) ---- */
static int ex_strip_cmd(const char *path) {
    char *text = ex_read_path(path), *out;
    if (!text) {
        fprintf(stderr, "gshard exercise: cannot read %s: %s\n", path, strerror(errno));
        return EXIT_ERROR;
    }
    out = ex_strip(text);
    free(text);
    if (!out) return EXIT_ERROR;
    fputs(out, stdout);
    free(out);
    return EXIT_OK;
}

static int cmd_exercise(int argc, char **argv) {
    const char *sub = argc > 2 ? argv[2] : "", *file = NULL, *dir = NULL;
    int i;
    static const char *const subs[] = {"list", "check", "strip", NULL};
    snprintf(ex_argv0, sizeof ex_argv0, "%s", argv[0]);
    if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0) {
        print_usage(stdout);
        return EXIT_OK;
    }
    if (strcmp(sub, "list") != 0 && strcmp(sub, "check") != 0 && strcmp(sub, "strip") != 0)
        return *sub ? unknown_word("exercise", "subcommand", sub, subs)
                    : usage_error("exercise: list, check FILE or strip FILE%s", "");
    for (i = 3; i < argc; i++) {
        if (option_is(argv[i], "--dir")) {
            if (!(dir = option_value(argc, argv, &i, "--dir"))) return EXIT_ERROR;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return unknown_word("exercise", "option", argv[i], cli_options("exercise"));
        } else if (file || sub[0] == 'l') {
            return usage_error("exercise: unexpected argument '%s'", argv[i]);
        } else {
            file = argv[i];
        }
    }
    if (sub[0] == 'l') return ex_list(dir);
    if (!file) return usage_error("exercise %s: FILE is missing", sub);
    return sub[0] == 'c' ? ex_check(file, dir) : ex_strip_cmd(file);
}
