/* gshard.c - the command-line driver: every stage of gshard.h reachable from the shell.

     gshard print FILE                  parse, verify and print canonical HLO text
     gshard eval FILE [io options]      run the ENTRY computation with the reference interpreter
     gshard cost FILE --chip NAME --mesh AxB[xC] [--json]
                                        per-instruction TPU cost of an SPMD program, and totals
     gshard partition FILE --devices D [--explain]
                                        the SPMD program every device runs, and the partitioner's warnings
     gshard run FILE --devices D [io options] [--check]
                                        partition, run on D emulated devices, gather the outputs; --check
                                        compares them with the reference interpreter
     gshard run --spmd FILE --devices D [io options]
                                        run an SPMD program on D emulated devices (the runtime)

   Build: cc -std=c99 -O2 tools/gshard.c -o gshard -lpthread -lm   (from the repository root; make builds build/gshard)
   Exit status: 0 ok, 1 check mismatch (`run --check`), 2 usage, parse, validation or i/o error.

   Built with mpicc and -DGSHARD_MPI (make mpi: build/gshard-mpi), `mpirun -np R gshard-mpi run ...` spreads the
   D devices over R ranks (docs/distributed.md): every rank parses and partitions the program and makes its own
   devices' inputs, rank 0 prints and writes the outputs, and every rank exits with the same status. */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#  define _POSIX_C_SOURCE 200809L   /* mkdir */
#endif
#ifndef GSHARD_EXTERNAL_IMPL   /* the Makefile links gshard_impl.c instead */
#define GSHARD_IMPLEMENTATION
#endif
#include "../gshard.h"

#if defined(GSHARD_MPI)
#  include <mpi.h>
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#ifdef _WIN32
#  include <direct.h>
#  define GSHARD_MKDIR(p) _mkdir(p)
#else
#  include <sys/stat.h>
#  include <dirent.h>   /* exercise list */
#  define GSHARD_MKDIR(p) mkdir(p, 0777)
#endif

#define EXIT_OK 0
#define EXIT_MISMATCH 1 /* `gshard run --check` finds a difference */
#define EXIT_ERROR 2

static const char usage_text[] =
    "usage: gshard <command> [options]\n"
    "\n"
    "commands:\n"
    "  print FILE               parse and verify an HLO module, print it in canonical form\n"
    "  stats FILE               what an HLO file uses (opcodes, element types, attributes, custom-call\n"
    "                           targets, sharding forms) with counts, '!' marking what gshard.h does not\n"
    "                           understand; reads files that do not parse; exit 0 all understood, 1 not,\n"
    "                           2 not HLO text\n"
    "  eval FILE [io options]   run the ENTRY computation with the reference interpreter (one device)\n"
    "  propagate FILE --devices D [--explain] [--show NAME [--svg FILE.svg]]\n"
    "                           give every instruction a sharding (XLA's propagation) and print the module\n"
    "                           with sharding={...} everywhere; --explain adds a comment per instruction\n"
    "                           saying where its sharding came from (annotation, rule, direction, level),\n"
    "                           marks where the sharding changes (RESHARD) and lists conflicts;\n"
    "                           --show NAME draws which device holds which tile of that value (repeatable;\n"
    "                           with --svg, one value drawn as an SVG picture for slides)\n"
    "  cost FILE --chip NAME --mesh AxB[xC] [cost options]\n"
    "                           per-instruction cost (FLOPs, HBM bytes, ICI bytes, time, bound) of an SPMD\n"
    "                           program on a TPU slice, as a comment above each instruction of its HLO\n"
    "                           text, and totals\n"
    "  partition FILE --devices D [--explain] [--chip NAME] [--strategy INSTR=NAME]\n"
    "                           propagate shardings and partition: print the SPMD program (HLO text with\n"
    "                           partition-id, dynamic-slices and collectives) that each of the D devices\n"
    "                           runs; --explain puts a comment before each group of instructions naming the\n"
    "                           source instruction and the strategy chosen (for a dot or convolution, every\n"
    "                           strategy weighed with its bytes and estimated time), and one before each\n"
    "                           collective saying why it is there, its bytes and time and the annotation\n"
    "                           that would remove it. Dot strategies are chosen by estimated time on the\n"
    "                           chip --chip (default v5e); --strategy INSTR=NAME forces one (repeatable;\n"
    "                           NAME as --explain lists them). Reshards that had to replicate a whole\n"
    "                           tensor are reported on stderr as 'warning: ...'\n";
static const char usage_text_run[] =
    "  run FILE --devices D [io options] [--check [--rtol X] [--atol Y]] [--lockstep | --workers W] [--stats]\n"
    "      [--watchdog SECONDS] [--trace FILE.json] [--chip NAME] [--strategy INSTR=NAME]\n"
    "                           propagate, partition and run the SPMD program on D emulated devices\n"
    "                           (1..4096) over W threads (default: one per device up to the processors;\n"
    "                           --lockstep: all in one thread, one instruction at a time); inputs are\n"
    "                           scattered by their shardings and the outputs gathered\n"
    "                           into global arrays, written as eval writes them. --check also runs FILE on\n"
    "                           the reference interpreter and compares every output element\n"
    "                           (|got - want| <= atol + rtol * |want|; default per output: 1e-5 and 1e-5 plus\n"
    "                           1e-5 * its root-mean-square for f32, 2^-6 for anything computed through bf16,\n"
    "                           2^-9 through f16; integers and pred exactly; a manual region runs once per\n"
    "                           device; --rtol/--atol replace both defaults, the one not given being\n"
    "                           1e-5; --rtol 0 --atol 0: exact equality, NaN matching NaN); on a mismatch\n"
    "                           it names the first instruction that differs,\n"
    "                           the device, the element, and both values, and exits with status 1.\n"
    "                           (--stats: per-device peak memory and per-collective traffic; --watchdog:\n"
    "                           how long a device may wait at a collective before the run fails naming\n"
    "                           the devices that never arrived; fractions allowed, 0 = forever, default 60;\n"
    "                           --trace: Chrome trace-event JSON of the run, a track per device, a span per\n"
    "                           instruction, collectives with bytes and groups: chrome://tracing, Perfetto)\n"
    ;
static const char usage_text1[] =
    "  run [--spmd] FILE --devices D --shapes-only [--trip-count NAME=N] [--mesh AxB] [--json]\n"
    "                           no data: per-device peak memory (and where), bytes per collective and mesh axes\n"
    "  model, plan               whole-model accounting and the parallelism planner ('gshard model --help')\n"
    "  exercise list | check FILE | strip FILE [--dir DIR]\n"
    "                           the course (exercises/): list it; check a copy of an exercise (found by its\n"
    "                           first line, exit 0 solved, 1 not yet, 2 error); print FILE without shardings\n"
    "  run --spmd FILE --devices D [io options] [--lockstep | --workers W] [--stats] [--watchdog S]\n"
    "                           FILE is already an SPMD program: run it on D emulated devices,\n"
    "                           every device gets the same inputs, and each device's outputs are written\n";
static const char usage_text_notation[] =
    "  notation EXPR --mesh X=4,Y=2 [--sizes I=512,J=1024] [--dtype bf16] [--chip v5e]\n"
    "                           the book's notation: builds A[I_X, J] * B[J, K_Y] -> C[I_X, K_Y] (or a reshard\n"
    "                           A[I_X, J] -> A[I, J_X], or one array), partitions it and prints the SPMD\n"
    "                           program and, as // lines, each collective with its bytes and time on the chip\n"
    "                           (default v5e, its torus shaped like the mesh) and the total; dims default to\n"
    "                           1024, I_{XY} splits I over X and Y, C[I, K]{U_X} leaves C unreduced over X\n"
    "\n";
/* (several strings: C99 compilers need only support string literals of 4095 characters) */
static const char usage_text2[] =
    "  mpirun -np R gshard-mpi run [--spmd] FILE --devices D [the options of run] [--fast-reduce]\n"
    "                           the same on R MPI ranks (D a multiple of R; --workers per rank);\n"
    "                           --fast-reduce: all-reduces over all devices by MPI_Allreduce (not bit-stable)\n"
    "\n"
    "partitioner options (partition, run):\n"
    "  --xla-option NAME=VALUE  one of XLA's SpmdPartitionerOptions by its field name (repeatable), e.g.\n"
    "                           threshold_for_windowed_einsum_mib=0, bidirectional_windowed_einsum=true,\n"
    "                           partial_windowed_einsum=true, choose_faster_windowed_einsum_over_mem=true,\n"
    "                           conv_halo_exchange_always_on_lhs=false (--explain says which form was built);\n"
    "                           an unknown name is an error (docs/xla_differences.md lists each one)\n"
    "  --xla-compat             XLA's policy for the entry computation: unannotated parameters and root\n"
    "                           are replicated instead of chosen by propagation\n"
    "\n";
static const char usage_text3[] =
    "io options (eval, run):\n"
    "  --input NAME_OR_INDEX=PATH.npy\n"
    "                           value of a parameter, by name or number (repeatable); a tuple parameter\n"
    "                           takes one file per leaf, NAME_OR_INDEX[I]=PATH.npy (nested tuples\n"
    "                           flattened in order)\n"
    "  --seed N                 inputs without --input are filled by the deterministic generator\n"
    "                           gs_fill_random(shape, N, k) for input buffer k: the parameter number,\n"
    "                           or counting each leaf of a tuple parameter (default N = 0)\n"
    "  --output-dir DIR         write the outputs as DIR/out0.npy, DIR/out1.npy, ... (DIR is created);\n"
    "                           run --spmd writes DIR/dev<d>_out<k>.npy; without it a summary of each\n"
    "                           output is printed\n"
    "  --npy-raw                write bf16, the 8/4-bit floats and 2/4-bit integers as their bits in a\n"
    "                           same-size unsigned type ('<u2', '|u1') instead of the nearest wider NumPy\n"
    "                           type ('<f4', '<f2', '|i1')\n"
    "\n"
    "cost options:\n"
    "  --chip NAME              v2, v3, v4p, v5e, v5p, v6e, h100, h800 or b200 (any case, 'tpu' prefix allowed)\n"
    "  --chip-file FILE         a chip from `key = value` lines (gs_chip's field names; 'base = v5e' first)\n"
    "  --mesh AxB[xC]           the logical device mesh; its size must equal the program's num_partitions\n"
    "                           (--mesh 1 is one chip). Partition id d is device d, row-major over the mesh\n"
    "  --torus AxB[xC]          the physical slice the mesh is laid onto (default: the mesh's shape)\n"
    "  --device-order LIST      comma-separated: device d sits on physical chip LIST[d] (chips row-major over\n"
    "                           the torus); default 0,1,2,... A permutation of 0..D-1\n"
    "  --wrap auto|all|none     wraparound links: the chip's rule (default), every axis, or none\n"
    "  --trace FILE.json        also write the estimated timeline per device as Chrome trace-event JSON\n"
    "                           (compute/HBM and ICI tracks, overlapped as the model assumes)\n"
    "  --json                   print JSON instead of the annotated HLO text:\n"
    "                           {\"instructions\": [{\"name\", \"opcode\", \"flops\", \"hbm_bytes\", \"ici_bytes\",\n"
    "                           \"seconds\", \"bound\", ...}, ...], \"totals\": {\"seconds_serial\",\n"
    "                           \"seconds_overlapped\", \"peak_hbm_bytes\", ...}, ...}; bound is one of\n"
    "                           compute, hbm, ici, latency, none; per device, seconds in seconds, bytes in\n"
    "                           bytes (docs/cost.md has the full schema)\n"
    "\n"
    "FILE '-' reads standard input. Tensor files are NumPy .npy (bool, integer, float and complex types; bf16\n"
    "and f8e8m0fnu travel as f4, the other 8/4-bit floats as f2, 2/4-bit integers as i1/u1).\n"
    "  --help                   this text\n"
    "  --version                the version of gshard.h\n"
    "\n"
    "notation and output options (print, propagate, partition):\n"
    "  --notation               write shardings as {X, _} over the mesh (mesh={X=4,Y=2} in the module header or\n"
    "                           --mesh), the tile string where no order of mesh axes gives the devices' order;\n"
    "                           the output reads back. HLO input always accepts mesh={...} in the header and\n"
    "                           sharding={X, _} / {(X,Y), _} on instructions\n"
    "  --mesh X=4,Y=2           the mesh for --notation (overrides the header's)\n"
    "  --extensions             print argmax/argmin and rng's shard form (full_shape=) in gshard.h's own\n"
    "                           spelling; by default they print as standard XLA HLO (a variadic reduce with a\n"
    "                           value-and-index reducer; the whole rng, padded and dynamic-sliced)\n"
    "\n"
    "exit status: 0 ok, 1 check mismatch, 2 bad usage, parse, validation or i/o error (message on stderr)\n";

static void print_usage(FILE *f) {
    fputs(usage_text, f);
    fputs(usage_text_run, f);
    fputs(usage_text_notation, f);
    fputs(usage_text1, f);
    fputs(usage_text2, f);
    fputs(usage_text3, f);
}

static int usage_error(const char *fmt, const char *arg) {
    fputs("gshard: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\n(try 'gshard --help')\n", stderr);
    return EXIT_ERROR;
}

/* ---- "did you mean": a mistyped command or option is answered with the closest known one ---- */
static const char *const cli_commands[] = {"print", "stats", "eval", "propagate", "partition", "run", "cost", "model",
                                           "plan", "notation", "exercise", "help", "version", NULL};
static const char *const cli_top_options[] = {"--help", "--version", NULL};

/* The options command cmd accepts (as parse_options and parse_cost_options read them). */
static const char *const *cli_options(const char *cmd) {
    static const char *const print_o[] = {"--notation", "--mesh", "--extensions", "--help", NULL};
    static const char *const eval_o[] = {"--input", "--seed", "--output-dir", "--npy-raw", "--help", NULL};
    static const char *const prop_o[] = {"--devices", "--explain", "--show", "--svg", "--notation", "--mesh", "--extensions", "--help", NULL};
    static const char *const part_o[] = {"--devices", "--explain", "--notation", "--mesh", "--chip", "--strategy", "--extensions",
                                         "--xla-option", "--xla-compat", "--help", NULL};
    static const char *const notation_o[] = {"--mesh", "--sizes", "--dtype", "--chip", "--help", NULL};
    static const char *const run_o[] = {"--devices", "--input", "--seed", "--output-dir", "--npy-raw", "--check", "--rtol", "--atol",
                                        "--lockstep", "--workers", "--stats", "--spmd", "--shapes-only", "--trip-count",
                                        "--mesh", "--json", "--watchdog", "--trace", "--fast-reduce", "--chip", "--strategy",
                                        "--xla-option", "--xla-compat", "--help", NULL};
    static const char *const cost_o[] = {"--chip", "--chip-file", "--mesh", "--torus", "--device-order", "--wrap", "--json",
                                         "--trace", "--help", NULL};
    /* model and plan (parse_model_options) */
    static const char *const model_o[] = {"--preset", "--layers", "--d-model", "--d-ff", "--heads", "--kv-heads", "--head-dim",
                                          "--vocab", "--experts", "--top-k", "--name", "--plain-mlp", "--tied", "--chip",
                                          "--chip-file", "--train", "--prefill", "--decode", "--batch", "--seq", "--mesh",
                                          "--param-bytes", "--kv-bytes", "--act-bytes", "--grad-bytes", "--optimizer-bytes",
                                          "--math", "--efficiency", "--no-attention-flops", "--causal", "--grad-accum",
                                          "--remat", "--microbatches", "--price", "--json", "--help", NULL};
    static const char *const plan_o[] = {"--preset", "--layers", "--d-model", "--d-ff", "--heads", "--kv-heads", "--head-dim",
                                         "--vocab", "--experts", "--top-k", "--name", "--plain-mlp", "--tied", "--chip",
                                         "--chip-file", "--train", "--prefill", "--decode", "--batch", "--seq", "--devices",
                                         "--top", "--sweep", "--emit-hlo", "--emit-rank", "--emit-layers", "--emit-scale",
                                         "--emit-dtype", "--emit-devices", "--param-bytes", "--kv-bytes", "--act-bytes",
                                         "--grad-bytes", "--optimizer-bytes", "--math", "--efficiency", "--no-attention-flops",
                                         "--causal", "--grad-accum", "--remat", "--microbatches", "--price", "--json", "--help", NULL};
    static const char *const exercise_o[] = {"--dir", "--help", NULL};
    if (strcmp(cmd, "model") == 0) return model_o;
    if (strcmp(cmd, "exercise") == 0) return exercise_o;
    if (strcmp(cmd, "plan") == 0) return plan_o;
    if (strcmp(cmd, "eval") == 0) return eval_o;
    if (strcmp(cmd, "propagate") == 0) return prop_o;
    if (strcmp(cmd, "partition") == 0) return part_o;
    if (strcmp(cmd, "run") == 0) return run_o;
    if (strcmp(cmd, "cost") == 0) return cost_o;
    if (strcmp(cmd, "notation") == 0) return notation_o;
    return print_o;
}

/* Levenshtein distance between a and b (at most n characters of a count, b is one of ours and short). */
static size_t edit_distance(const char *a, size_t n, const char *b) {
    size_t row[64], lb = strlen(b), i, j;
    if (n > 63 || lb > 63) return 64;
    for (j = 0; j <= lb; j++) row[j] = j;
    for (i = 1; i <= n; i++) {
        size_t diag = row[0];   /* the previous row's [j - 1] */
        row[0] = i;
        for (j = 1; j <= lb; j++) {
            size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[lb];
}

/* The known word closest to w (an option's "=VALUE" ignored) when it is near enough to be a typo: at most two
   edits, and fewer than half of w's characters. NULL otherwise. */
static const char *closest_word(const char *w, const char *const *known) {
    const char *best = NULL, *eq = w[0] == '-' ? strchr(w, '=') : NULL;
    size_t n = eq ? (size_t)(eq - w) : strlen(w), bd = 3;
    int k;
    for (k = 0; known[k]; k++) {
        size_t d = edit_distance(w, n, known[k]);
        if (d < bd) {
            bd = d;
            best = known[k];
        }
    }
    return best && 2 * bd < n ? best : NULL;
}

/* "gshard CMD: unknown WHAT 'W'; did you mean 'X'?" (the suggestion only when one is close) */
static int unknown_word(const char *cmd, const char *what, const char *w, const char *const *known) {
    const char *guess = closest_word(w, known);
    fprintf(stderr, "gshard%s%s: unknown %s '%s'", cmd ? " " : "", cmd ? cmd : "", what, w);
    if (guess) fprintf(stderr, "; did you mean '%s'?", guess);
    fputs("\n(try 'gshard --help')\n", stderr);
    return EXIT_ERROR;
}

/* ---- library messages as a shell user reads them ----
   The library prefixes its messages with the C function that failed ("gs_partition: ...", "gs_split(x): ...")
   for C callers. The CLI's user called no function: a message segment that starts with such a name loses it
   (keeping what its parentheses name). Longer messages than the buffer are shown as they are. */
static const char *user_msg(const char *m) {
    static char buf[8192];
    size_t n = 0;
    const char *p = m;
    if (!m) return "";
    while (*p) {
        bool seg = p == m || (p - m >= 2 && p[-1] == ' ' && (p[-2] == ':' || p[-2] == ';'));
        if (seg && strncmp(p, "gs_", 3) == 0) {
            const char *q = p + 3, *in = NULL, *in_end = NULL;
            while ((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '_') q++;
            if (*q == '(' && (in_end = strchr(q, ')')) != NULL) {
                in = q + 1;
                q = in_end + 1;
            }
            if (q[0] == ':' && q[1] == ' ') {
                if (in && in < in_end) {   /* "gs_split(x): " -> "x: " */
                    size_t k = (size_t)(in_end - in);
                    if (n + k + 2 >= sizeof buf) return m;
                    memcpy(buf + n, in, k);
                    n += k;
                    buf[n++] = ':';
                    buf[n++] = ' ';
                }
                p = q + 2;
                continue;
            }
        }
        if (n + 1 >= sizeof buf) return m;
        buf[n++] = *p++;
    }
    buf[n] = 0;
    return buf;
}

/* ---- reading the module text ---- */
static char *read_all(FILE *f, size_t *len) {
    size_t cap = 1 << 16, n = 0, got;
    char *buf = (char *)malloc(cap), *nb;
    if (!buf) return NULL;
    for (;;) {
        if (cap - n < 4096) {
            if (cap > ((size_t)-1) / 2) {
                free(buf);
                return NULL;
            }
            nb = (char *)realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                return NULL;
            }
            buf = nb;
            cap *= 2;
        }
        got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

static const char *shown_name(const char *path) { return strcmp(path, "-") == 0 ? "<stdin>" : path; }

/* Parses and verifies FILE into ctx. Prints the error and returns false on failure. */
static bool load_module(gs_ctx *ctx, const char *path, gs_graph **entry) {
    const char *shown = shown_name(path);
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    char *text;
    size_t len = 0;
    gs_result r;
    if (!f) {
        fprintf(stderr, "%s: cannot open: %s\n", shown, strerror(errno));
        return false;
    }
    text = read_all(f, &len);
    if (f != stdin) fclose(f);
    if (!text) {
        fprintf(stderr, "%s: cannot read the file\n", shown);
        return false;
    }
    r = gs_hlo_parse(ctx, text, len, entry);
    free(text);
    if (r == GS_OK) r = gs_graph_verify(*entry);
    if (r != GS_OK) {
        const char *msg = user_msg(gs_ctx_error_msg(ctx));
        fprintf(stderr, "%s: %s\n", shown, *msg ? msg : gs_result_str(r));
        return false;
    }
    return true;
}

/* ---- formatting ---- */
static void format_shape(const gs_shape *s, char *buf, size_t cap) {
    size_t n = 0;
    int d;
    n += (size_t)snprintf(buf, cap, "%s[", gs_dtype_name(s->dtype));
    for (d = 0; d < s->rank && n < cap; d++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", d ? "," : "", (long long)s->dims[d]);
    if (n < cap) snprintf(buf + n, cap - n, "]");
}

/* element i of storage-format data as a double */
static double element(const gs_shape *s, const void *data, int64_t i) { return gs_dtype_get(s->dtype, data, i); }

#define SUMMARY_VALUES 8

static void print_summary(const char *label, const gs_shape *s, const void *data) {
    char sh[256];
    int64_t n = gs_shape_numel(s), i, nan = 0;
    double mn = HUGE_VAL, mx = -HUGE_VAL, sum = 0.0;
    format_shape(s, sh, sizeof sh);
    printf("%s: %s\n", label, sh);
    if (n == 0) {
        printf("  (no elements)\n");
        return;
    }
    printf("  [");
    for (i = 0; i < n && i < SUMMARY_VALUES; i++) printf("%s%.6g", i ? ", " : "", element(s, data, i));
    printf("%s]\n", n > SUMMARY_VALUES ? ", ..." : "");
    for (i = 0; i < n; i++) {
        double x = element(s, data, i);
        if (x != x) {
            nan++;
            continue;
        }
        if (x < mn) mn = x;
        if (x > mx) mx = x;
        sum += x;
    }
    if (nan == n) {
        printf("  all %lld values are NaN\n", (long long)n);
        return;
    }
    printf("  min %.6g  max %.6g  mean %.6g", mn, mx, sum / (double)(n - nan));
    if (nan) printf("  (%lld NaN not counted)", (long long)nan);
    printf("\n");
}

/* ---- commands ---- */
typedef struct input_spec {
    const char *key;  /* parameter name or number */
    const char *path;
} input_spec;

typedef struct options {
    const char *file;
    input_spec *inputs;
    int n_inputs;
    unsigned long long seed;
    const char *output_dir;
    bool npy_raw;             /* --npy-raw */
    long long devices;        /* --devices (propagate, run); 0 = not given */
    bool explain;             /* --explain */
    const char **show;        /* --show NAME (repeatable): print the layout of that instruction */
    int n_show;
    const char **xla_opts;    /* partition, run: --xla-option NAME=VALUE (repeatable; the second half of show) */
    int n_xla_opts;
    bool xla_compat;          /* partition, run: --xla-compat */
    bool spmd, lockstep, stats;   /* run */
    long long workers;        /* run --workers; 0 = the runtime's default */
    bool check;               /* run --check */
    double rtol, atol;        /* run --check tolerances (as given; see check_tolerances) */
    bool rtol_given, atol_given;
    double watchdog;          /* run --watchdog SECONDS (0 disables it); < 0: not given (the runtime's 60 s) */
    bool shapes_only, json;   /* run --shapes-only [--json] */
    bool fast_reduce;         /* run --fast-reduce (gshard-mpi) */
    const char *shapes_mesh;  /* run --shapes-only --mesh AxB */
    const char *trip_spec[16];/* run --shapes-only --trip-count NAME=N */
    bool notation;            /* print, propagate, partition --notation */
    const char *notation_mesh;/* --mesh for --notation */
    bool extensions;          /* --extensions: print argmax/argmin and rng's shard form as gshard.h's extensions */
    int n_trip;
    const char *trace;        /* run --trace FILE.json */
    const char *svg;          /* propagate --svg FILE.svg (of the --show values) */
    const char *chip;         /* partition, run: --chip NAME (dot strategies' times) */
    gs_partition_strategy strategies[16];   /* partition, run: --strategy INSTR=NAME */
    char strategy_instr[16][256];           /* their INSTR parts */
    int n_strategies;
} options;

static bool is_digits(const char *s) {
    if (!*s) return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9') return false;
    return true;
}

static bool parse_seed(const char *s, unsigned long long *out) {
    char *end = NULL;
    if (!is_digits(s)) return false;
    errno = 0;
    *out = strtoull(s, &end, 10);
    return errno == 0 && end && *end == 0;
}

/* Option value: "--opt=value" or "--opt value". Returns NULL (after a message) if missing. */
static const char *option_value(int argc, char **argv, int *i, const char *name) {
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (a[n] == '=') return a + n + 1;
    if (*i + 1 >= argc) {
        usage_error("option %s needs a value", name);
        return NULL;
    }
    *i += 1;
    return argv[*i];
}

static bool option_is(const char *arg, const char *name) {
    size_t n = strlen(name);
    return strncmp(arg, name, n) == 0 && (arg[n] == 0 || arg[n] == '=');
}

/* Parses argv[2..] of print/eval/propagate/run. Returns -1 to go on, or an exit code. */
static int parse_options(const char *cmd, bool io, int argc, char **argv, options *o) {
    bool prop = strcmp(cmd, "propagate") == 0;
    bool part = strcmp(cmd, "partition") == 0;
    bool run = strcmp(cmd, "run") == 0;
    int i;
    bool no_more_options = false;
    for (i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!no_more_options && a[0] == '-' && a[1] != 0) {
            const char *v;
            if (strcmp(a, "--") == 0) {
                no_more_options = true;
            } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
                print_usage(stdout);
                return EXIT_OK;
            } else if (io && option_is(a, "--input")) {
                const char *eq;
                if (!(v = option_value(argc, argv, &i, "--input"))) return EXIT_ERROR;
                eq = strchr(v, '=');
                if (!eq || eq == v || eq[1] == 0)
                    return usage_error("--input wants NAME_OR_INDEX=PATH.npy, not '%s'", v);
                o->inputs[o->n_inputs].key = v;
                o->inputs[o->n_inputs].path = eq + 1;
                o->n_inputs++;
            } else if (io && option_is(a, "--seed")) {
                if (!(v = option_value(argc, argv, &i, "--seed"))) return EXIT_ERROR;
                if (!parse_seed(v, &o->seed))
                    return usage_error("--seed wants a non-negative integer below 2^64, not '%s'", v);
            } else if (io && option_is(a, "--npy-raw")) {
                o->npy_raw = true;
            } else if (io && option_is(a, "--output-dir")) {
                if (!(v = option_value(argc, argv, &i, "--output-dir"))) return EXIT_ERROR;
                if (!*v) return usage_error("%s: empty output directory", "--output-dir");
                o->output_dir = v;
            } else if (((prop || part || run) && option_is(a, "--devices")) || (run && option_is(a, "--workers"))) {
                bool dev = option_is(a, "--devices");
                const char *name = dev ? "--devices" : "--workers";
                unsigned long long d;
                unsigned long long most = run ? GS_RUNTIME_MAX_DEVICES : (1ull << 31);
                if (!(v = option_value(argc, argv, &i, name))) return EXIT_ERROR;
                if (!parse_seed(v, &d) || d < 1 || d > most) {
                    fprintf(stderr, "gshard %s: %s wants a count from 1 to %llu, not '%s'\n(try 'gshard --help')\n", cmd,
                            name, most, v);
                    return EXIT_ERROR;
                }
                if (dev) o->devices = (long long)d;
                else o->workers = (long long)d;
            } else if ((part || run) && option_is(a, "--chip")) {
                if (!(v = option_value(argc, argv, &i, "--chip"))) return EXIT_ERROR;
                o->chip = v;
            } else if ((part || run) && option_is(a, "--strategy")) {
                const char *eq;
                if (!(v = option_value(argc, argv, &i, "--strategy"))) return EXIT_ERROR;
                eq = strchr(v, '=');
                if (!eq || eq == v || eq[1] == 0)
                    return usage_error("--strategy wants INSTRUCTION=NAME (the names --explain lists), not '%s'", v);
                if (o->n_strategies == 16) return usage_error("%s: at most 16 --strategy options", cmd);
                if (eq - v >= (ptrdiff_t)sizeof o->strategy_instr[0])
                    return usage_error("--strategy: instruction name '%s' is too long", v);
                memcpy(o->strategy_instr[o->n_strategies], v, (size_t)(eq - v));
                o->strategy_instr[o->n_strategies][eq - v] = 0;
                o->strategies[o->n_strategies].instruction = o->strategy_instr[o->n_strategies];
                o->strategies[o->n_strategies].strategy = eq + 1;
                o->n_strategies++;
            } else if ((part || run) && option_is(a, "--xla-option")) {
                if (!(v = option_value(argc, argv, &i, "--xla-option"))) return EXIT_ERROR;
                if (!strchr(v, '=') || v[0] == '=')
                    return usage_error("--xla-option wants NAME=VALUE (a field of XLA's SpmdPartitionerOptions), not '%s'", v);
                o->xla_opts[o->n_xla_opts++] = v;
            } else if ((part || run) && strcmp(a, "--xla-compat") == 0) {
                o->xla_compat = true;
            } else if ((prop || part) && strcmp(a, "--explain") == 0) {
                o->explain = true;
            } else if ((prop || part || strcmp(cmd, "print") == 0) && strcmp(a, "--notation") == 0) {
                o->notation = true;
            } else if ((prop || part || strcmp(cmd, "print") == 0) && strcmp(a, "--extensions") == 0) {
                o->extensions = true;
            } else if ((prop || part || strcmp(cmd, "print") == 0) && option_is(a, "--mesh")) {
                if (!(v = option_value(argc, argv, &i, "--mesh"))) return EXIT_ERROR;
                o->notation_mesh = v;
            } else if ((run && option_is(a, "--trace")) || (prop && option_is(a, "--svg"))) {
                if (!(v = option_value(argc, argv, &i, run ? "--trace" : "--svg"))) return EXIT_ERROR;
                if (!*v) return usage_error("%s: empty file name", run ? "--trace" : "--svg");
                if (run) o->trace = v;
                else o->svg = v;
            } else if (prop && option_is(a, "--show")) {
                if (!(v = option_value(argc, argv, &i, "--show"))) return EXIT_ERROR;
                o->show[o->n_show++] = v;
            } else if (run && strcmp(a, "--spmd") == 0) {
                o->spmd = true;
            } else if (run && strcmp(a, "--lockstep") == 0) {
                o->lockstep = true;
            } else if (run && strcmp(a, "--stats") == 0) {
                o->stats = true;
            } else if (run && strcmp(a, "--shapes-only") == 0) {
                o->shapes_only = true;
            } else if (run && strcmp(a, "--json") == 0) {
                o->json = true;
            } else if (run && option_is(a, "--mesh")) {
                if (!(v = option_value(argc, argv, &i, "--mesh"))) return EXIT_ERROR;
                o->shapes_mesh = v;
            } else if (run && option_is(a, "--trip-count")) {
                if (!(v = option_value(argc, argv, &i, "--trip-count"))) return EXIT_ERROR;
                if (o->n_trip == 16) return usage_error("run: at most 16 %s options", "--trip-count");
                o->trip_spec[o->n_trip++] = v;
            } else if (run && strcmp(a, "--fast-reduce") == 0) {
                o->fast_reduce = true;
            } else if (run && strcmp(a, "--check") == 0) {
                o->check = true;
            } else if (run && (option_is(a, "--rtol") || option_is(a, "--atol") || option_is(a, "--watchdog"))) {
                const char *name = option_is(a, "--rtol") ? "--rtol" : option_is(a, "--atol") ? "--atol" : "--watchdog";
                bool wd = name[2] == 'w';
                char *end = NULL;
                double x;
                if (!(v = option_value(argc, argv, &i, name))) return EXIT_ERROR;
                x = strtod(v, &end);
                /* the watchdog is held in milliseconds by an int64: at most about 292 million years */
                if (!*v || !end || *end || !(x >= 0.0) || x > (wd ? 9e12 : 1e300)) {
                    fprintf(stderr, "gshard run: %s wants a number >= 0%s, not '%s'\n(try 'gshard --help')\n", name,
                            wd ? " of seconds (fractions allowed, 0 disables it)" : "", v);
                    return EXIT_ERROR;
                }
                if (wd) o->watchdog = x;
                else if (name[2] == 'r') {
                    o->rtol = x;
                    o->rtol_given = true;
                } else {
                    o->atol = x;
                    o->atol_given = true;
                }
            } else {
                return unknown_word(cmd, "option", a, cli_options(cmd));
            }
            continue;
        }
        if (o->file) {
            fprintf(stderr, "gshard %s: one FILE only ('%s' and '%s' given)\n(try 'gshard --help')\n", cmd, o->file, a);
            return EXIT_ERROR;
        }
        o->file = a;
    }
    if (!o->file) {
        fprintf(stderr, "gshard %s: FILE is missing (use '-' for standard input)\n(try 'gshard --help')\n", cmd);
        return EXIT_ERROR;
    }
    if ((prop || part) && o->devices == 0) return usage_error("%s: --devices D is required", cmd);
    if (o->notation_mesh && !o->notation) return usage_error("%s: --mesh X=4,Y=2 is the mesh of --notation", cmd);
    if (run && o->spmd && o->check) return usage_error("run --spmd: %s compares a partitioned program with its source; "
                                                       "give the unpartitioned FILE without --spmd", "--check");
    if (run && o->spmd && (o->n_xla_opts || o->xla_compat))
        return usage_error("run: %s apply when FILE is partitioned here (not with --spmd)",
                           "--xla-option and --xla-compat");
    if (run && !o->check && (o->rtol_given || o->atol_given)) return usage_error("run: %s only apply with --check", "--rtol/--atol");
    if (run && o->lockstep && o->workers) return usage_error("run: %s runs every device in one thread; --workers does not apply",
                                                             "--lockstep");
    if (run && !o->shapes_only && (o->json || o->shapes_mesh || o->n_trip))
        return usage_error("run: %s only apply with --shapes-only", "--json, --mesh and --trip-count");
    if (prop && o->svg && o->n_show != 1) return usage_error("propagate: %s draws one value: give exactly one --show NAME", "--svg");
    if (run && o->trace && (o->shapes_only || o->spmd))
        return usage_error("run: %s records a run of FILE's partitioned program (not --shapes-only or --spmd)", "--trace");
#if defined(GSHARD_MPI)
    if (run && o->trace) return usage_error("run: %s records the devices of one process; gshard-mpi does not write it", "--trace");
#else
    if (run && o->fast_reduce) return usage_error("run: %s applies to gshard-mpi (devices on MPI ranks) only", "--fast-reduce");
#endif
    if (run && o->shapes_only && (o->check || o->n_inputs || o->output_dir || o->stats))
        return usage_error("run: %s runs without data: no --check, --input, --output-dir or --stats", "--shapes-only");
    return -1;
}

/* gs_runtime_desc.watchdog_ms for --watchdog: not given 0 (the runtime's default), 0 s -1 (none), else at
   least 1 ms so that a tiny fraction does not turn into the default */
static int64_t watchdog_ms(const options *o) {
    double ms;
    if (o->watchdog < 0) return 0;
    if (o->watchdog == 0) return -1;
    ms = o->watchdog * 1000.0 + 0.5;
    return ms < 1.0 ? 1 : (int64_t)ms;
}

/* prints a module's text (ending in a newline); NULL text is the error in ctx */
static int put_module_text(gs_ctx *ctx, const options *o, const char *text) {
    size_t n;
    if (!text) {
        fprintf(stderr, "%s: cannot print: %s\n", shown_name(o->file), user_msg(gs_ctx_error_msg(ctx)));
        return EXIT_ERROR;
    }
    n = strlen(text);
    fputs(text, stdout);
    if (n == 0 || text[n - 1] != '\n') fputc('\n', stdout);
    return EXIT_OK;
}

/* --notation: shardings print as {X, _} over --mesh or the header's mesh={...}; false after a message */
static bool set_notation(gs_ctx *ctx, const options *o, gs_graph *entry, long long devices) {
    const gs_mesh *m;
    gs_hlo_print_extensions(ctx, o->extensions);
    if (!o->notation) return true;
    m = o->notation_mesh ? gs_mesh_parse(ctx, o->notation_mesh) : gs_hlo_mesh(entry);
    if (!m) {
        if (o->notation_mesh) fprintf(stderr, "gshard: --mesh: %s\n", user_msg(gs_ctx_error_msg(ctx)));
        else fprintf(stderr, "%s: --notation needs a mesh: mesh={X=4,Y=2} in the module header, or --mesh X=4,Y=2\n",
                     shown_name(o->file));
        return false;
    }
    if (devices > 1 && gs_mesh_num_devices(m) != devices) {
        fprintf(stderr, "%s: the mesh %s has %lld devices, the program %lld\n", shown_name(o->file),
                gs_mesh_to_text(ctx, m), (long long)gs_mesh_num_devices(m), devices);
        return false;
    }
    gs_ctx_set_notation_mesh(ctx, m);
    return true;
}

/* Writes text (NULL: the error in ctx, what names it) to path. False after a message. */
static bool write_text_file(gs_ctx *ctx, const char *path, const char *text, const char *what) {
    FILE *f;
    bool ok;
    if (!text) {
        fprintf(stderr, "gshard: %s: %s\n", what, user_msg(gs_ctx_error_msg(ctx)));
        return false;
    }
    if (!(f = fopen(path, "wb"))) {
        fprintf(stderr, "gshard: cannot write %s: %s\n", path, strerror(errno));
        return false;
    }
    ok = fputs(text, f) >= 0;
    ok = fclose(f) == 0 && ok;
    if (!ok) fprintf(stderr, "gshard: error writing %s\n", path);
    return ok;
}

static int cmd_print(gs_ctx *ctx, const options *o) {
    gs_graph *entry = NULL;
    if (!load_module(ctx, o->file, &entry) || !set_notation(ctx, o, entry, (long long)gs_hlo_num_partitions(entry)))
        return EXIT_ERROR;
    return put_module_text(ctx, o, gs_hlo_print(entry));
}

/* propagate: shardings for every instruction, printed as HLO text (with --explain, where each came from) */
static int cmd_propagate(gs_ctx *ctx, const options *o) {
    gs_graph *entry = NULL;
    gs_propagate_desc desc;
    const char *text;
    int i, k;
    if (!load_module(ctx, o->file, &entry) || !set_notation(ctx, o, entry, o->devices)) return EXIT_ERROR;
    if (gs_hlo_num_partitions(entry) != 1 && gs_hlo_num_partitions(entry) != o->devices) {
        fprintf(stderr, "%s: the module says num_partitions=%lld but --devices is %lld\n", shown_name(o->file),
                (long long)gs_hlo_num_partitions(entry), o->devices);
        return EXIT_ERROR;
    }
    memset(&desc, 0, sizeof desc);
    desc.num_devices = o->devices;
    if (gs_graph_set_num_partitions(entry, o->devices) != GS_OK || gs_propagate(entry, &desc) != GS_OK ||
        !(text = gs_propagate_explain(entry, o->explain))) {
        fprintf(stderr, "%s: %s\n", shown_name(o->file), user_msg(gs_ctx_error_msg(ctx)));
        return EXIT_ERROR;
    }
    fputs(text, stdout);
    for (i = 0; i < o->n_show; i++) {
        gs_value *v = gs_graph_find(entry, o->show[i]);
        const char *vis = NULL;
        if (!v) {
            fprintf(stderr, "%s: --show: no instruction named '%s' in the entry computation\n", shown_name(o->file), o->show[i]);
            return EXIT_ERROR;
        }
        /* a tuple value shows each element */
        for (k = 0; k < (gs_value_tuple_size(v) > 0 ? gs_value_tuple_size(v) : 1); k++) {
            bool tuple = gs_value_tuple_size(v) > 0;
            const gs_sharding *s = tuple ? gs_sharding_tuple_elem(gs_value_sharding(v), k) : gs_value_sharding(v);
            vis = gs_sharding_visualize(ctx, s, tuple ? gs_value_tuple_shape(v, k) : gs_value_shape(v));
            if (!vis) break;
            if (tuple) printf("\n%s, element %d: %s", o->show[i], k, vis);
            else printf("\n%s: %s", o->show[i], vis);
        }
        if (!vis) {
            fprintf(stderr, "%s: --show %s: %s\n", shown_name(o->file), o->show[i], user_msg(gs_ctx_error_msg(ctx)));
            return EXIT_ERROR;
        }
        if (o->svg && gs_value_tuple_size(v) > 0) {
            fprintf(stderr, "%s: --svg: %s is a tuple; draw one of its elements (a get-tuple-element)\n", shown_name(o->file),
                    o->show[i]);
            return EXIT_ERROR;
        }
        if (o->svg && !write_text_file(ctx, o->svg, gs_sharding_svg(ctx, gs_value_sharding(v), gs_value_shape(v), o->devices,
                                                                   gs_hlo_mesh(entry), o->show[i]), "--svg"))
            return EXIT_ERROR;
    }
    return EXIT_OK;
}

/* Finds the parameter an --input key names: a parameter name first, then a parameter number. */
static int find_param(gs_graph *g, const char *key, size_t keylen) {
    int np = gs_graph_num_params(g), i;
    char num[32];
    for (i = 0; i < np; i++) {
        const char *name = gs_value_name(gs_graph_param(g, i));
        if (name && strlen(name) == keylen && strncmp(name, key, keylen) == 0) return i;
    }
    if (keylen < sizeof num) {
        memcpy(num, key, keylen);
        num[keylen] = 0;
        if (is_digits(num)) {
            unsigned long long idx = strtoull(num, NULL, 10);
            if (idx < (unsigned long long)np) return (int)idx;
        }
    }
    return -1;
}

/* Input buffers: one per array parameter and one per leaf of a tuple parameter (nested tuples flattened in
   order), in parameter order, as gs_eval and the runtime take them. */
static int param_leaves(gs_graph *g, int p) {
    gs_value *v = gs_graph_param(g, p);
    return v && gs_value_shape(v).dtype == GS_TUPLE ? gs_value_tuple_size(v) : 1;
}
static int num_buffers(gs_graph *g) {
    int np = gs_graph_num_params(g), i, n = 0;
    for (i = 0; i < np; i++) n += param_leaves(g, i);
    return n;
}
static int first_buffer(gs_graph *g, int p) {
    int i, n = 0;
    for (i = 0; i < p; i++) n += param_leaves(g, i);
    return n;
}
static gs_shape buffer_shape(gs_graph *g, int p, int leaf) {
    gs_value *v = gs_graph_param(g, p);
    return gs_value_shape(v).dtype == GS_TUPLE ? gs_value_tuple_shape(v, leaf) : gs_value_shape(v);
}

static void list_params(gs_graph *g) {
    int np = gs_graph_num_params(g), i, j;
    char sh[256];
    fprintf(stderr, "parameters of the entry computation:\n");
    for (i = 0; i < np; i++) {
        gs_value *p = gs_graph_param(g, i);
        gs_shape s = gs_value_shape(p);
        if (s.dtype != GS_TUPLE) {
            format_shape(&s, sh, sizeof sh);
            fprintf(stderr, "  %d  %s  %s\n", i, gs_value_name(p), sh);
            continue;
        }
        fprintf(stderr, "  %d  %s  a tuple of %d arrays:\n", i, gs_value_name(p), param_leaves(g, i));
        for (j = 0; j < param_leaves(g, i); j++) {
            s = gs_value_tuple_shape(p, j);
            format_shape(&s, sh, sizeof sh);
            fprintf(stderr, "       %s[%d]  %s\n", gs_value_name(p), j, sh);
        }
    }
}

/* The buffer an --input key names: NAME_OR_INDEX for an array parameter, NAME_OR_INDEX[I] for leaf I of a
   tuple parameter. Prints the problem and returns -1 when it names none. */
static int find_buffer(gs_graph *entry, const char *key, size_t keylen) {
    size_t plen = keylen;
    long leaf = -1;
    int p;
    if (keylen > 2 && key[keylen - 1] == ']') {
        const char *lb = key + keylen - 2;
        while (lb > key && *lb >= '0' && *lb <= '9') lb--;
        if (*lb == '[' && lb + 1 < key + keylen - 1) {
            plen = (size_t)(lb - key);
            leaf = strtol(lb + 1, NULL, 10);
        }
    }
    if ((p = find_param(entry, key, keylen)) >= 0) leaf = -1;   /* a name that itself ends in [..] */
    else p = find_param(entry, key, plen);
    if (p < 0) {
        fprintf(stderr, "gshard: --input %.*s: no parameter has that name or number\n", (int)keylen, key);
        list_params(entry);
        return -1;
    }
    if (gs_value_shape(gs_graph_param(entry, p)).dtype == GS_TUPLE) {
        if (leaf < 0 || leaf >= param_leaves(entry, p)) {
            fprintf(stderr, "gshard: --input %.*s: parameter %d (%s) is a tuple of %d arrays: give each as %s[I]=FILE, "
                    "I = 0..%d (nested tuples flattened in order)\n", (int)keylen, key, p,
                    gs_value_name(gs_graph_param(entry, p)), param_leaves(entry, p), gs_value_name(gs_graph_param(entry, p)),
                    param_leaves(entry, p) - 1);
            list_params(entry);
            return -1;
        }
        return first_buffer(entry, p) + (int)leaf;
    }
    if (leaf >= 0) {
        fprintf(stderr, "gshard: --input %.*s: parameter %d is an array, not a tuple\n", (int)keylen, key, p);
        return -1;
    }
    return first_buffer(entry, p);
}

/* The --input file of every input buffer of entry (paths[b], NULL for the generator's). Prints the problem and
   returns false when a key names no buffer, or one twice. */
static bool input_paths(const options *o, gs_graph *entry, const char **paths) {
    int np = gs_graph_num_params(entry), i;
    for (i = 0; i < np; i++) {
        if (!gs_graph_param(entry, i)) {
            fprintf(stderr, "%s: the entry computation has no parameter %d\n", shown_name(o->file), i);
            return false;
        }
    }
    for (i = 0; i < o->n_inputs; i++) {
        const input_spec *in = &o->inputs[i];
        size_t keylen = (size_t)(strchr(in->key, '=') - in->key);
        int b = find_buffer(entry, in->key, keylen);
        if (b < 0) return false;
        if (paths[b]) {
            fprintf(stderr, "gshard: --input %.*s: that input is given twice\n", (int)keylen, in->key);
            return false;
        }
        paths[b] = in->path;
    }
    return true;
}

/* The parameter of input buffer b. */
static int param_of_buffer(gs_graph *entry, int b) {
    int p;
    for (p = 0; first_buffer(entry, p + 1) <= b; p++) {}
    return p;
}

/* Fills inputs[k] for every input buffer of entry (num_buffers): from --input files (from_npy[k] set; free
   with gs_free_data), the others from the generator (malloc; buffer k from stream k, which is the parameter
   number when no parameter is a tuple). Prints the problem and returns false on failure; what was filled
   stays for the caller to free. */
static bool load_inputs(gs_ctx *ctx, const options *o, gs_graph *entry, void **inputs, bool *from_npy) {
    int nb = num_buffers(entry), i, j, k;
    const char **paths = (const char **)calloc((size_t)nb + 1, sizeof(char *));
    bool ok = paths && input_paths(o, entry, paths);
    if (!paths) fprintf(stderr, "gshard: out of memory\n");
    /* inputs given as files */
    for (k = 0; ok && k < nb; k++) {
        int p = param_of_buffer(entry, k);
        gs_shape want, got;
        char sa[256], sb[256];
        if (!paths[k]) continue;
        want = buffer_shape(entry, p, k - first_buffer(entry, p));
        if (gs_npy_read(ctx, paths[k], want.dtype, &got, &inputs[k]) != GS_OK) {
            fprintf(stderr, "gshard: %s\n", user_msg(gs_ctx_error_msg(ctx)));
            ok = false;
            break;
        }
        from_npy[k] = true;
        if (!gs_shape_equal(&got, &want)) {
            format_shape(&got, sa, sizeof sa);
            format_shape(&want, sb, sizeof sb);
            if (param_leaves(entry, p) > 1 || gs_value_shape(gs_graph_param(entry, p)).dtype == GS_TUPLE)
                fprintf(stderr, "gshard: %s holds %s but leaf %d of parameter %d (%s) is %s\n", paths[k], sa,
                        k - first_buffer(entry, p), p, gs_value_name(gs_graph_param(entry, p)), sb);
            else
                fprintf(stderr, "gshard: %s holds %s but parameter %d (%s) is %s\n", paths[k], sa, p,
                        gs_value_name(gs_graph_param(entry, p)), sb);
            ok = false;
        }
    }
    free((void *)paths);
    /* the rest from the generator */
    for (i = 0, k = 0; ok && i < gs_graph_num_params(entry); i++)
        for (j = 0; j < param_leaves(entry, i); j++, k++) {
            gs_shape s;
            if (inputs[k]) continue;
            s = buffer_shape(entry, i, j);
            inputs[k] = malloc(gs_shape_bytes(&s) ? gs_shape_bytes(&s) : 1);
            if (!inputs[k]) {
                fprintf(stderr, "gshard: out of memory for parameter %d\n", i);
                return false;
            }
            gs_fill_random(s, (uint64_t)o->seed, k, inputs[k]);
        }
    return ok;
}

/* The global outputs of entry: DIR/out<k>.npy with --output-dir, else a summary of each on stdout. */
static bool write_outputs(gs_ctx *ctx, const options *o, gs_graph *entry, void *const *outputs) {
    int no = gs_graph_num_outputs(entry), i;
    char path[4096];
    if (o->output_dir) {
        if (GSHARD_MKDIR(o->output_dir) != 0 && errno != EEXIST) {
            fprintf(stderr, "gshard: cannot create directory %s: %s\n", o->output_dir, strerror(errno));
            return false;
        }
        for (i = 0; i < no; i++) {
            int n = snprintf(path, sizeof path, "%s/out%d.npy", o->output_dir, i);
            if (n < 0 || (size_t)n >= sizeof path) {
                fprintf(stderr, "gshard: output path too long\n");
                return false;
            }
            if (gs_npy_write_ex(ctx, path, gs_graph_output_shape(entry, i), outputs[i], o->npy_raw ? GS_NPY_RAW : 0) != GS_OK) {
                fprintf(stderr, "gshard: %s\n", user_msg(gs_ctx_error_msg(ctx)));
                return false;
            }
        }
    } else {
        for (i = 0; i < no; i++) {
            gs_shape s = gs_graph_output_shape(entry, i);
            char label[32];
            snprintf(label, sizeof label, "out%d", i);
            print_summary(label, &s, outputs[i]);
        }
    }
    return true;
}

static int cmd_eval(gs_ctx *ctx, const options *o) {
    gs_graph *entry = NULL;
    int np = 0, no = 0, i, rc = EXIT_ERROR;
    void **inputs = NULL, **outputs = NULL;
    bool *from_npy = NULL;
    gs_result r;

    if (!load_module(ctx, o->file, &entry)) return EXIT_ERROR;
    np = num_buffers(entry);
    no = gs_graph_num_outputs(entry);
    inputs = (void **)calloc((size_t)np + 1, sizeof(void *));
    from_npy = (bool *)calloc((size_t)np + 1, sizeof(bool));
    outputs = (void **)calloc((size_t)no + 1, sizeof(void *));
    if (!inputs || !from_npy || !outputs) {
        fprintf(stderr, "gshard: out of memory\n");
        goto done;
    }
    if (!load_inputs(ctx, o, entry, inputs, from_npy)) goto done;
    for (i = 0; i < no; i++) {
        gs_shape s = gs_graph_output_shape(entry, i);
        outputs[i] = malloc(gs_shape_bytes(&s) ? gs_shape_bytes(&s) : 1);
        if (!outputs[i]) {
            fprintf(stderr, "gshard: out of memory for output %d\n", i);
            goto done;
        }
    }
    r = gs_eval(entry, (const void *const *)inputs, (void *const *)outputs);
    if (r != GS_OK) {
        fprintf(stderr, "%s: %s\n", shown_name(o->file), user_msg(gs_ctx_error_msg(ctx)));
        goto done;
    }
    if (!write_outputs(ctx, o, entry, outputs)) goto done;
    rc = EXIT_OK;
done:
    for (i = 0; inputs && i < np; i++) {
        if (from_npy[i]) gs_free_data(ctx, inputs[i]);
        else free(inputs[i]);
    }
    for (i = 0; outputs && i < no; i++) free(outputs[i]);
    free(inputs);
    free(from_npy);
    free(outputs);
    return rc;
}

/* ---- cost ---- */
/* --chip-file FILE: a chip from `key = value` lines (gs_chip_parse); false after a message */
static bool load_chip_file(gs_ctx *ctx, const char *path, gs_chip *out) {
    size_t len = 0;
    FILE *f = fopen(path, "rb");
    char *text = f ? read_all(f, &len) : NULL;
    bool ok;
    if (f) fclose(f);
    if (!text) {
        fprintf(stderr, "gshard: cannot read chip file %s\n", path);
        return false;
    }
    ok = gs_chip_parse(ctx, text, out) == GS_OK;
    if (!ok) fprintf(stderr, "%s: %s\n", path, gs_ctx_error_msg(ctx));
    free(text);
    return ok;
}

typedef struct cost_options {
    const char *file, *chip, *chip_file, *mesh, *torus, *order, *trace;
    gs_wrap_mode wrap;
    bool json;
} cost_options;

/* Parses argv[2..] of cost. Returns -1 to go on, or an exit code. */
static int parse_cost_options(int argc, char **argv, cost_options *o) {
    int i;
    bool no_more_options = false;
    for (i = 2; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!no_more_options && a[0] == '-' && a[1] != 0) {
            if (strcmp(a, "--") == 0) {
                no_more_options = true;
            } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
                print_usage(stdout);
                return EXIT_OK;
            } else if (strcmp(a, "--json") == 0) {
                o->json = true;
            } else if (option_is(a, "--chip")) {
                if (!(v = option_value(argc, argv, &i, "--chip"))) return EXIT_ERROR;
                o->chip = v;
            } else if (option_is(a, "--chip-file")) {
                if (!(v = option_value(argc, argv, &i, "--chip-file"))) return EXIT_ERROR;
                o->chip_file = v;
            } else if (option_is(a, "--mesh")) {
                if (!(v = option_value(argc, argv, &i, "--mesh"))) return EXIT_ERROR;
                o->mesh = v;
            } else if (option_is(a, "--torus")) {
                if (!(v = option_value(argc, argv, &i, "--torus"))) return EXIT_ERROR;
                o->torus = v;
            } else if (option_is(a, "--trace")) {
                if (!(v = option_value(argc, argv, &i, "--trace"))) return EXIT_ERROR;
                if (!*v) return usage_error("%s: empty file name", "--trace");
                o->trace = v;
            } else if (option_is(a, "--device-order")) {
                if (!(v = option_value(argc, argv, &i, "--device-order"))) return EXIT_ERROR;
                o->order = v;
            } else if (option_is(a, "--wrap")) {
                if (!(v = option_value(argc, argv, &i, "--wrap"))) return EXIT_ERROR;
                if (strcmp(v, "auto") == 0) o->wrap = GS_WRAP_AUTO;
                else if (strcmp(v, "all") == 0) o->wrap = GS_WRAP_ALL;
                else if (strcmp(v, "none") == 0) o->wrap = GS_WRAP_NONE;
                else return usage_error("--wrap wants auto, all or none, not '%s'", v);
            } else {
                return unknown_word("cost", "option", a, cli_options("cost"));
            }
            continue;
        }
        if (o->file) {
            fprintf(stderr, "gshard cost: one FILE only ('%s' and '%s' given)\n(try 'gshard --help')\n", o->file, a);
            return EXIT_ERROR;
        }
        o->file = a;
    }
    if (!o->file) return usage_error("cost: FILE is missing (use '-' for standard input)%s", "");
    if (!o->chip == !o->chip_file)
        return usage_error("cost: --chip NAME is required (v2, v3, v4p, v5e, v5p, v6e, h100, h800, b200), or --chip-file FILE "
                           "instead%s", "");
    if (!o->mesh) return usage_error("cost: --mesh AxB[xC] is required (--mesh 1 for a single chip)%s", "");
    return -1;
}

/* "0,2,1,3" -> n entries (heap); false after a message */
static bool parse_device_order(const char *text, int64_t n, int64_t **out) {
    const char *p = text;
    int64_t k = 0, *v = (int64_t *)malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
    *out = NULL;
    if (!v) {
        fprintf(stderr, "gshard: out of memory\n");
        return false;
    }
    for (;;) {
        long long x = 0;
        if (*p < '0' || *p > '9') {
            fprintf(stderr, "gshard cost: --device-order '%s': expected a chip number at '%s'\n", text, *p ? p : "the end");
            free(v);
            return false;
        }
        while (*p >= '0' && *p <= '9') {
            x = x * 10 + (*p - '0');
            if (x > (1LL << 40)) break;
            p++;
        }
        if (k == n) {
            fprintf(stderr, "gshard cost: --device-order has more than the mesh's %lld devices\n", (long long)n);
            free(v);
            return false;
        }
        v[k++] = (int64_t)x;
        if (*p == 0) break;
        if (*p != ',') {
            fprintf(stderr, "gshard cost: --device-order '%s': expected ',' at '%s'\n", text, p);
            free(v);
            return false;
        }
        p++;
    }
    if (k != n) {
        fprintf(stderr, "gshard cost: --device-order has %lld entries but the mesh has %lld devices\n", (long long)k,
                (long long)n);
        free(v);
        return false;
    }
    *out = v;
    return true;
}

static int cmd_cost(int argc, char **argv) {
    cost_options o;
    gs_chip file_chip;
    gs_ctx *ctx = NULL;
    gs_graph *entry = NULL;
    gs_topology_desc td;
    gs_topology *topo = NULL;
    gs_cost_report *rep = NULL;
    int64_t *order = NULL, n = 1;
    const char *text;
    int rc, i;

    memset(&o, 0, sizeof o);
    rc = parse_cost_options(argc, argv, &o);
    if (rc >= 0) return rc;
    if (gs_ctx_create(NULL, &ctx) != GS_OK) {
        fprintf(stderr, "gshard: cannot create a context\n");
        return EXIT_ERROR;
    }
    rc = EXIT_ERROR;
    memset(&td, 0, sizeof td);
    if (o.chip_file) {
        if (!load_chip_file(ctx, o.chip_file, &file_chip)) goto done;
        td.chip = &file_chip;
    }
    if ((!o.chip_file && gs_chip_lookup(ctx, o.chip, &td.chip) != GS_OK) ||
        gs_cost_parse_dims(ctx, o.mesh, &td.mesh_rank, td.mesh) != GS_OK ||
        (o.torus && gs_cost_parse_dims(ctx, o.torus, &td.torus_rank, td.torus) != GS_OK)) {
        fprintf(stderr, "gshard cost: %s\n", user_msg(gs_ctx_error_msg(ctx)));
        goto done;
    }
    for (i = 0; i < td.mesh_rank; i++) n *= td.mesh[i];
    if (o.order) {
        if (!parse_device_order(o.order, n, &order)) goto done;
        td.device_order = order;
    }
    td.wrap = o.wrap;
    if (gs_topology_create(ctx, &td, &topo) != GS_OK) {
        fprintf(stderr, "gshard cost: %s\n", user_msg(gs_ctx_error_msg(ctx)));
        goto done;
    }
    if (!load_module(ctx, o.file, &entry)) goto done;
    if (gs_cost_program(entry, topo, &rep) != GS_OK) {
        fprintf(stderr, "%s: %s\n", shown_name(o.file), user_msg(gs_ctx_error_msg(ctx)));
        goto done;
    }
    if (o.trace && !write_text_file(ctx, o.trace, gs_cost_report_trace_json(rep), "--trace")) goto done;
    text = o.json ? gs_cost_report_json(rep) : gs_cost_report_text(rep);
    if (!text) {
        fprintf(stderr, "gshard cost: %s\n", user_msg(gs_ctx_error_msg(ctx)));
        goto done;
    }
    fputs(text, stdout);
    for (i = 0; i < gs_cost_report_num_warnings(rep); i++)
        fprintf(stderr, "gshard cost: warning: %s\n", user_msg(gs_cost_report_warning(rep, i)));
    rc = EXIT_OK;
done:
    free(order);
    gs_ctx_destroy(ctx);
    if (rc == EXIT_OK && (fflush(stdout) != 0 || ferror(stdout))) {
        fprintf(stderr, "gshard: error writing standard output\n");
        rc = EXIT_ERROR;
    }
    return rc;
}

/* run --check's tolerances: with --rtol or --atol given, those (the other 1e-5), *given set: they apply as
   they are, both 0 meaning exact equality; neither given: 0, 0 and *given false (each output's default). */
static void check_tolerances(const options *o, double *rtol, double *atol, bool *given) {
    *given = o->rtol_given || o->atol_given;
    *rtol = o->rtol_given ? o->rtol : *given ? 1e-5 : 0.0;
    *atol = o->atol_given ? o->atol : *given ? 1e-5 : 0.0;
}

/* ---- gshard-mpi: the devices on MPI ranks (docs/distributed.md) ---- */
#if defined(GSHARD_MPI)
static int mpi_rank = 0, mpi_ranks = 1;
static bool mpi_failed_run;   /* a run failed between the ranks: the job ends with MPI_Abort */

/* The runtime's desc on the ranks (gshard_main checked that D is a multiple of R). */
static void mpi_desc(const options *o, gs_runtime_desc *desc) {
    static MPI_Comm world;
    world = MPI_COMM_WORLD;
    desc->comm = &world;
    desc->fast_reduce = o->fast_reduce;
}

/* run --check on ranks: rank 0 compares the gathered outputs with the source's reference, by the rules and default
   tolerances of gs_partition_check (gs_partition_check_gathered). The copies of replicated tiles were compared
   bit for bit while gathering (check_replicas). */
static int mpi_check(gs_ctx *ctx, const options *o, gs_graph *spmd, void *const *inputs, void *const *outputs) {
    gs_check_desc cd;
    gs_check_report rep;
    memset(&cd, 0, sizeof cd);
    check_tolerances(o, &cd.rtol, &cd.atol, &cd.tolerances_given);
    if (gs_partition_check_gathered(spmd, &cd, (const void *const *)inputs, (const void *const *)outputs, &rep) != GS_OK) {
        fprintf(stderr, "%s: check: %s\n", shown_name(o->file), user_msg(gs_ctx_error_msg(ctx)));
        return EXIT_ERROR;
    }
    if (!rep.ok) {
        fprintf(stderr, "%s: check: %s (run build/gshard run --check on one machine to find the first instruction "
                "that differs)\n", shown_name(o->file), user_msg(rep.message));
        return EXIT_MISMATCH;
    }
    printf("check: ok, %lld elements match the reference (max |got - want| %.3g)\n", (long long)rep.n_compared,
           rep.max_abs_err);
    return EXIT_OK;
}

/* run on ranks: the tiles of every input this rank's devices hold (gs_runtime_run_tiles), tiles[d * nb + k],
   each read from its --input file by offset (gs_npy_read_region) or generated (gs_fill_random_region, the
   same values as the whole array's): a rank never holds more of an input than its devices' parts, once per
   distinct part (a replicated input once per rank). owned[d * nb + k] marks the buffers to free. Every rank
   then learns whether all of them succeeded (the failing rank printed why), so that no rank goes on into the
   run alone. */
static bool mpi_load_tiles(gs_ctx *ctx, const options *o, gs_graph *entry, gs_runtime *rt, const gs_shape *in_shapes,
                           const gs_sharding *const *in_sh, void **tiles, bool *owned) {
    int nb = num_buffers(entry), k, ok, all = 0;
    int64_t lo, hi, d, e, i;
    const char **paths = (const char **)calloc((size_t)nb + 1, sizeof(char *));
    ok = tiles && owned && paths && input_paths(o, entry, paths);   /* a failure still joins the vote below */
    if (!paths) fprintf(stderr, "gshard: out of memory\n");
    gs_runtime_local_devices(rt, &lo, &hi);
    for (k = 0; ok && k < nb; k++)
        for (d = lo; ok && d < hi; d++) {
            const gs_sharding *s = in_sh[k] && gs_sharding_get_kind(in_sh[k]) != GS_SHARDING_MANUAL ? in_sh[k] : NULL;
            int64_t off[GS_MAX_RANK], lim[GS_MAX_RANK], cnt[GS_MAX_RANK], n = 1, eo[GS_MAX_RANK], el[GS_MAX_RANK];
            gs_shape gl = in_shapes[k];
            size_t bytes;
            for (i = 0; i < gl.rank; i++) {
                off[i] = 0;
                lim[i] = gl.dims[i];
            }
            if (s && !gs_sharding_device_region(s, gl, d, off, lim)) continue;   /* holds nothing */
            for (i = 0; i < gl.rank; i++) n *= (cnt[i] = lim[i] - off[i]);
            if (n <= 0) continue;
            for (e = lo; e < d && !tiles[d * nb + k]; e++) {   /* the same part on an earlier device of this rank */
                bool same = tiles[e * nb + k] != NULL && (!s || gs_sharding_device_region(s, gl, e, eo, el));
                for (i = 0; same && s && i < gl.rank; i++) same = eo[i] == off[i] && el[i] == lim[i];
                if (same) tiles[d * nb + k] = tiles[e * nb + k];
            }
            if (tiles[d * nb + k]) continue;
            bytes = (size_t)n * gs_dtype_size(gl.dtype);
            if (!(tiles[d * nb + k] = malloc(bytes))) {
                fprintf(stderr, "gshard: rank %d: out of memory for the tile of input %d of device %lld\n", mpi_rank, k,
                        (long long)d);
                ok = false;
                break;
            }
            owned[d * nb + k] = true;
            if (!paths[k]) {
                gs_fill_random_region(gl, (uint64_t)o->seed, k, off, cnt, tiles[d * nb + k]);
            } else if (gs_npy_read_region(ctx, paths[k], gl, off, cnt, tiles[d * nb + k]) != GS_OK) {
                int p = param_of_buffer(entry, k);
                fprintf(stderr, "gshard: rank %d: parameter %d (%s): %s\n", mpi_rank, p,
                        gs_value_name(gs_graph_param(entry, p)), user_msg(gs_ctx_error_msg(ctx)));
                ok = false;
            }
        }
    free((void *)paths);
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all != 0;
}

/* run --spmd on ranks: rank 0 receives every other rank's device outputs (storage format) into outputs. */
static bool mpi_collect(gs_graph *entry, long long D, void **outputs) {
    int no = gs_graph_num_outputs(entry), i;
    long long L = D / mpi_ranks, d;
    for (d = L; d < D; d++)
        for (i = 0; i < no; i++) {
            gs_shape s = gs_graph_output_shape(entry, i);
            size_t n = gs_shape_bytes(&s);
            if (n > (size_t)INT_MAX) {
                fprintf(stderr, "gshard-mpi: output %d (%zu bytes) is over 2 GiB\n", i, n);
                return false;
            }
            if (mpi_rank == 0 && MPI_Recv(outputs[d * no + i], (int)n, MPI_BYTE, (int)(d / L), 7, MPI_COMM_WORLD,
                                          MPI_STATUS_IGNORE) != MPI_SUCCESS)
                return false;
            if (mpi_rank == d / L && MPI_Send(outputs[d * no + i], (int)n, MPI_BYTE, 0, 7, MPI_COMM_WORLD) != MPI_SUCCESS)
                return false;
        }
    return true;
}

/* The end of the job: every rank exits with the highest status of all. After a failed run the ranks wait a
   second for each other (so that each prints the failure it was told of), then MPI_Abort ends the job: the
   failed collective may have left messages that MPI_Finalize would wait for. */
static int mpi_finish(int rc) {
    int all = rc;
    if (!mpi_failed_run) {
        MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        MPI_Finalize();
        return all;
    }
    {
        MPI_Request req;
        double t0 = MPI_Wtime();
        int flag = 0;
        fflush(stdout);
        fflush(stderr);
        MPI_Iallreduce(&rc, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &req);
        while (!flag && MPI_Wtime() - t0 < 1.0) MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        MPI_Abort(MPI_COMM_WORLD, all > rc ? all : rc);
    }
    return rc;
}
#endif

/* --stats: the runtime's accounting of its last run */
static void print_stats(const gs_runtime *rt) {
    gs_runtime_stats st;
    long long d;
    int i;
    if (gs_runtime_get_stats(rt, &st) != GS_OK) return;
    if (gs_runtime_get_mode(rt) == GS_RUNTIME_LOCKSTEP)
        printf("stats: %lld devices (lockstep), %.6f s\n", (long long)st.num_devices, st.seconds);
    else if (gs_runtime_num_ranks(rt) > 1)
        printf("stats: %lld devices on %d ranks (threaded, %lld workers per rank), %.6f s on rank 0\n",
               (long long)st.num_devices, gs_runtime_num_ranks(rt), (long long)gs_runtime_num_workers(rt), st.seconds);
    else
        printf("stats: %lld devices (threaded, %lld workers), %.6f s\n", (long long)st.num_devices,
               (long long)gs_runtime_num_workers(rt), st.seconds);
    for (d = 0; d < st.num_devices; d++)
        printf("  device %lld: peak %lld bytes (parameters %lld)\n", d, (long long)st.peak_bytes[d],
               (long long)st.param_bytes[d]);
    for (i = 0; i < st.n_collectives; i++) {
        const gs_runtime_collective_stats *c = &st.collectives[i];
        char ran[48];
        if (c->count == 1) snprintf(ran, sizeof ran, "once");
        else snprintf(ran, sizeof ran, "%lld times", (long long)c->count);
        char net[64] = "";
        if (gs_runtime_num_ranks(rt) > 1) snprintf(net, sizeof net, "; %lld between ranks", (long long)c->rank_bytes_sent);
        printf("  %s %s: groups of %lld, ran %s per device, %lld bytes sent and %lld received in all "
               "(at most %lld sent by one device%s)\n",
               gs_op_name(c->op), gs_value_name(c->instruction), (long long)c->group_size, ran,
               (long long)c->bytes_sent, (long long)c->bytes_received, (long long)c->max_device_sent, net);
    }
}

/* Loads FILE and partitions it for o->devices devices (shardings propagated first); the partitioner's
   warnings go to stderr. Prints the problem and returns false on failure. */
static bool partition_module(gs_ctx *ctx, const options *o, gs_graph **entry, gs_graph **spmd) {
    gs_partition_desc desc;
    int i;
    if (!load_module(ctx, o->file, entry) || !set_notation(ctx, o, *entry, o->devices)) return false;
    if (gs_hlo_num_partitions(*entry) != 1 && gs_hlo_num_partitions(*entry) != o->devices) {
        fprintf(stderr, "%s: the module says num_partitions=%lld but --devices is %lld\n", shown_name(o->file),
                (long long)gs_hlo_num_partitions(*entry), o->devices);
        return false;
    }
    memset(&desc, 0, sizeof desc);
    desc.num_devices = o->devices;
    if (o->chip && gs_chip_lookup(ctx, o->chip, &desc.chip) != GS_OK) {
        fprintf(stderr, "gshard: --chip: %s\n", user_msg(gs_ctx_error_msg(ctx)));
        return false;
    }
    desc.n_strategies = o->n_strategies;
    desc.strategies = o->strategies;
    desc.xla_compat = o->xla_compat;
    for (i = 0; i < o->n_xla_opts; i++) {
        char name[128];
        const char *eq = strchr(o->xla_opts[i], '=');
        size_t n = (size_t)(eq - o->xla_opts[i]);
        if (n >= sizeof name) n = sizeof name - 1;
        memcpy(name, o->xla_opts[i], n);
        name[n] = 0;
        if (gs_partition_xla_option(ctx, &desc, name, eq + 1) != GS_OK) {
            fprintf(stderr, "gshard: --xla-option: %s\n(try 'gshard --help')\n", gs_ctx_error_msg(ctx));
            return false;
        }
    }
    if (gs_graph_set_num_partitions(*entry, o->devices) != GS_OK || gs_partition(*entry, &desc, spmd) != GS_OK) {
        fprintf(stderr, "%s: %s\n", shown_name(o->file), user_msg(gs_ctx_error_msg(ctx)));
        return false;
    }
    for (i = 0; i < gs_partition_num_warnings(*spmd); i++)
        fprintf(stderr, "%s: warning: %s\n", shown_name(o->file), user_msg(gs_partition_warning(*spmd, i)));
    return true;
}

/* partition: the SPMD program as HLO text */
static int cmd_partition(gs_ctx *ctx, const options *o) {
    gs_graph *entry = NULL, *spmd = NULL;
    if (!partition_module(ctx, o, &entry, &spmd)) return EXIT_ERROR;
    return put_module_text(ctx, o, gs_partition_print(spmd, o->explain));
}

/* run (without --spmd): partition, run on D devices with global inputs and outputs, optionally check */
/* run --shapes-only: the partitioned program on D virtual devices without data */
static int cmd_run_shapes(gs_ctx *ctx, const options *o) {
    gs_graph *entry = NULL, *spmd = NULL;
    gs_shapes_desc sd;
    gs_shapes_report *rep = NULL;
    const char *names[16];
    int64_t counts[16];
    const char *text;
    int i;
    char buf[16][128];
    if (o->devices < 1) {
        fprintf(stderr, "gshard run: --devices D is missing\n(try 'gshard --help')\n");
        return EXIT_ERROR;
    }
    memset(&sd, 0, sizeof sd);
    sd.num_devices = o->devices;
    for (i = 0; i < o->n_trip; i++) {
        char *eq, *end = NULL;
        long long n;
        if (strlen(o->trip_spec[i]) >= sizeof buf[i] || !(eq = strchr(strcpy(buf[i], o->trip_spec[i]), '=')) || eq == buf[i])
            return usage_error("--trip-count '%s' is not NAME=N", o->trip_spec[i]);
        *eq = 0;
        errno = 0;
        n = strtoll(eq + 1, &end, 10);
        if (!eq[1] || *end || errno || n < 0) return usage_error("--trip-count '%s': N must be a whole number >= 0", o->trip_spec[i]);
        names[i] = buf[i];
        counts[i] = (int64_t)n;
    }
    sd.n_trip_counts = o->n_trip;
    sd.trip_names = names;
    sd.trip_counts = counts;
    if (o->shapes_mesh && gs_cost_parse_dims(ctx, o->shapes_mesh, &sd.mesh_rank, sd.mesh) != GS_OK) {
        fprintf(stderr, "gshard run: --mesh: %s\n", gs_ctx_error_msg(ctx));
        return EXIT_ERROR;
    }
    if (o->spmd) {   /* FILE is already an SPMD program */
        if (!load_module(ctx, o->file, &spmd)) return EXIT_ERROR;
        if (gs_graph_num_partitions(spmd) <= 1 && gs_graph_set_num_partitions(spmd, o->devices) != GS_OK) {
            fprintf(stderr, "%s: %s\n", shown_name(o->file), gs_ctx_error_msg(ctx));
            return EXIT_ERROR;
        }
    } else if (!partition_module(ctx, o, &entry, &spmd)) {
        return EXIT_ERROR;
    }
    if (gs_shapes_run(spmd, &sd, &rep) != GS_OK) {
        fprintf(stderr, "%s: %s\n", shown_name(o->file), gs_ctx_error_msg(ctx));
        return EXIT_ERROR;
    }
    text = o->json ? gs_shapes_json(rep) : gs_shapes_text(rep);
    if (!text) {
        fprintf(stderr, "gshard run: %s\n", gs_ctx_error_msg(ctx));
        return EXIT_ERROR;
    }
    fputs(text, stdout);
    return EXIT_OK;
}

#if defined(GSHARD_MPI)
/* run on ranks, after gs_runtime_create: each rank's input tiles (mpi_load_tiles), the run, and on rank 0 the
   outputs, --stats and --check (the one place that reads or generates the whole inputs: the reference
   interpreter runs the source program on them). */
static int mpi_run(gs_ctx *ctx, const options *o, gs_graph *entry, gs_graph *spmd, gs_runtime *rt,
                   const gs_shape *in_shapes, const gs_sharding *const *in_sh, const gs_shape *out_shapes,
                   const gs_sharding *const *out_sh, void **outputs) {
    int nb = num_buffers(entry), k, rc = EXIT_ERROR;
    size_t n = (size_t)o->devices * (size_t)nb + 1;
    void **tiles = (void **)calloc(n, sizeof(void *)), **inputs = NULL;
    bool *owned = (bool *)calloc(n, sizeof(bool)), *from_npy = NULL;
    size_t i;
    if (!tiles || !owned) fprintf(stderr, "gshard: out of memory\n");
    if (!mpi_load_tiles(ctx, o, entry, rt, in_shapes, in_sh, tiles, owned)) goto done;
    if (gs_runtime_run_tiles(rt, spmd, in_shapes, in_sh, (const void *const *)tiles, out_shapes, out_sh,
                             (void *const *)outputs) != GS_OK) {
        fprintf(stderr, "%s: %s\n", shown_name(o->file), user_msg(gs_ctx_error_msg(ctx)));
        mpi_failed_run = true;
        goto done;
    }
    for (i = 0; i < n; i++)   /* the tiles are done with before the reference needs the whole inputs */
        if (owned[i]) free(tiles[i]);
    memset(owned, 0, n * sizeof(bool));
    if (o->trace && !write_text_file(ctx, o->trace, gs_runtime_trace_json(rt), "--trace")) goto done;
    rc = EXIT_OK;
    if (mpi_rank != 0) goto done;
    if (!write_outputs(ctx, o, entry, outputs)) rc = EXIT_ERROR;
    if (rc == EXIT_OK && o->stats) print_stats(rt);
    if (rc == EXIT_OK && o->check) {
        inputs = (void **)calloc((size_t)nb + 1, sizeof(void *));
        from_npy = (bool *)calloc((size_t)nb + 1, sizeof(bool));
        if (!inputs || !from_npy) fprintf(stderr, "gshard: out of memory\n");
        if (!inputs || !from_npy || !load_inputs(ctx, o, entry, inputs, from_npy)) rc = EXIT_ERROR;
        else rc = mpi_check(ctx, o, spmd, inputs, outputs);
    }
done:
    for (i = 0; owned && i < n; i++)
        if (owned[i]) free(tiles[i]);
    for (k = 0; inputs && from_npy && k < nb; k++) {
        if (from_npy[k]) gs_free_data(ctx, inputs[k]);
        else free(inputs[k]);
    }
    free(tiles);
    free(owned);
    free(inputs);
    free(from_npy);
    return rc;
}
#endif

static int cmd_run(gs_ctx *ctx, const options *o) {
    gs_graph *entry = NULL, *spmd = NULL;
    gs_runtime *rt = NULL;
    gs_runtime_desc desc;
    int np = 0, no = 0, i, rc = EXIT_ERROR;
    void **inputs = NULL, **outputs = NULL;
    bool *from_npy = NULL;
    gs_shape *in_shapes = NULL, *out_shapes = NULL;
    const gs_sharding **in_sh = NULL, **out_sh = NULL;

    if (o->devices < 1) {
        fprintf(stderr, "gshard run: --devices D is missing\n(try 'gshard --help')\n");
        return EXIT_ERROR;
    }
    if (!partition_module(ctx, o, &entry, &spmd)) return EXIT_ERROR;
    np = num_buffers(entry);
    no = gs_graph_num_outputs(entry);
    inputs = (void **)calloc((size_t)np + 1, sizeof(void *));
    from_npy = (bool *)calloc((size_t)np + 1, sizeof(bool));
    outputs = (void **)calloc((size_t)no + 1, sizeof(void *));
    in_shapes = (gs_shape *)calloc((size_t)np + 1, sizeof(gs_shape));
    out_shapes = (gs_shape *)calloc((size_t)no + 1, sizeof(gs_shape));
    in_sh = (const gs_sharding **)calloc((size_t)np + 1, sizeof(gs_sharding *));
    out_sh = (const gs_sharding **)calloc((size_t)no + 1, sizeof(gs_sharding *));
    if (!inputs || !from_npy || !outputs || !in_shapes || !out_shapes || !in_sh || !out_sh) {
        fprintf(stderr, "gshard: out of memory\n");
        goto done;
    }
#if !defined(GSHARD_MPI)   /* on ranks each rank reads or generates only its devices' tiles (mpi_run) */
    if (!load_inputs(ctx, o, entry, inputs, from_npy)) goto done;
#endif
    {
        int p, j, k = 0;
        for (p = 0; p < gs_graph_num_params(entry); p++)
            for (j = 0; j < param_leaves(entry, p); j++, k++) {
                in_shapes[k] = buffer_shape(entry, p, j);
                in_sh[k] = gs_partition_param_sharding(spmd, k);
            }
    }
    for (i = 0; i < no; i++) {
        out_shapes[i] = gs_graph_output_shape(entry, i);
        out_sh[i] = gs_partition_output_sharding(spmd, i);
#if defined(GSHARD_MPI)
        if (mpi_rank != 0) continue;   /* gathered on rank 0 only */
#endif
        outputs[i] = malloc(gs_shape_bytes(&out_shapes[i]) ? gs_shape_bytes(&out_shapes[i]) : 1);
        if (!outputs[i]) {
            fprintf(stderr, "gshard: out of memory for output %d\n", i);
            goto done;
        }
    }
    memset(&desc, 0, sizeof desc);
    desc.num_devices = o->devices;
    desc.mode = o->lockstep ? GS_RUNTIME_LOCKSTEP : GS_RUNTIME_MODE_DEFAULT;
    desc.workers = o->workers;
    desc.watchdog_ms = watchdog_ms(o);
#if defined(GSHARD_MPI)
    mpi_desc(o, &desc);
    desc.check_replicas = o->check;   /* --check: every copy of a replicated tile is compared while gathering */
#endif
    if (gs_runtime_create(ctx, &desc, &rt) != GS_OK || (o->trace && gs_runtime_set_trace(rt, true) != GS_OK)) {
        fprintf(stderr, "gshard: %s\n", user_msg(gs_ctx_error_msg(ctx)));
        goto done;
    }
#if defined(GSHARD_MPI)
    rc = mpi_run(ctx, o, entry, spmd, rt, in_shapes, in_sh, out_shapes, out_sh, outputs);
    goto done;
#endif
    if (gs_runtime_run_global(rt, spmd, in_shapes, in_sh, (const void *const *)inputs, out_shapes, out_sh,
                              (void *const *)outputs) != GS_OK) {
        fprintf(stderr, "%s: %s\n", shown_name(o->file), user_msg(gs_ctx_error_msg(ctx)));
        goto done;
    }
    if (o->trace && !write_text_file(ctx, o->trace, gs_runtime_trace_json(rt), "--trace")) goto done;
    if (!write_outputs(ctx, o, entry, outputs)) goto done;
    if (o->stats) print_stats(rt);
    rc = EXIT_OK;
    if (o->check) {
        gs_check_desc cd;
        gs_check_report rep;
        memset(&cd, 0, sizeof cd);
        check_tolerances(o, &cd.rtol, &cd.atol, &cd.tolerances_given);
        cd.locate = true;
        if (gs_partition_check(spmd, rt, &cd, (const void *const *)inputs, &rep) != GS_OK) {
            fprintf(stderr, "%s: check: %s\n", shown_name(o->file), user_msg(gs_ctx_error_msg(ctx)));
            rc = EXIT_ERROR;
        } else if (!rep.ok) {
            fprintf(stderr, "%s: check: %s\n", shown_name(o->file), user_msg(rep.message));
            rc = EXIT_MISMATCH;
        } else {
            printf("check: ok, %lld elements match the reference (max |got - want| %.3g)\n", (long long)rep.n_compared,
                   rep.max_abs_err);
        }
    }
done:
    gs_runtime_destroy(rt);
    for (i = 0; inputs && i < np; i++) {
        if (from_npy[i]) gs_free_data(ctx, inputs[i]);
        else free(inputs[i]);
    }
    for (i = 0; outputs && i < no; i++) free(outputs[i]);
    free(inputs);
    free(from_npy);
    free(outputs);
    free(in_shapes);
    free(out_shapes);
    free((void *)in_sh);
    free((void *)out_sh);
    return rc;
}

/* run --spmd: FILE is an SPMD program; every device gets the same inputs, each writes its own outputs. */
static int cmd_run_spmd(gs_ctx *ctx, const options *o) {
    gs_graph *entry = NULL;
    gs_runtime *rt = NULL;
    gs_runtime_desc desc;
    int np = 0, no = 0, i, rc = EXIT_ERROR;
    long long d, D = o->devices;
    void **inputs = NULL, **outputs = NULL;
    bool *from_npy = NULL;
    const void **dev_in = NULL;
    char path[4096];

    if (D < 1) {
        fprintf(stderr, "gshard run: --devices D is missing\n(try 'gshard --help')\n");
        return EXIT_ERROR;
    }
    if (!load_module(ctx, o->file, &entry)) return EXIT_ERROR;
    np = num_buffers(entry);
    no = gs_graph_num_outputs(entry);
    inputs = (void **)calloc((size_t)np + 1, sizeof(void *));
    from_npy = (bool *)calloc((size_t)np + 1, sizeof(bool));
    dev_in = (const void **)calloc((size_t)D * (size_t)np + 1, sizeof(void *));
    outputs = (void **)calloc((size_t)D * (size_t)no + 1, sizeof(void *));
    if (!inputs || !from_npy || !dev_in || !outputs) {
        fprintf(stderr, "gshard: out of memory\n");
        goto done;
    }
    if (!load_inputs(ctx, o, entry, inputs, from_npy)) goto done;
    for (d = 0; d < D; d++) {
        for (i = 0; i < np; i++) dev_in[d * np + i] = inputs[i];   /* the same inputs on every device */
#if defined(GSHARD_MPI)
        if (mpi_rank != 0 && d / (D / mpi_ranks) != mpi_rank) continue;   /* rank 0 collects every device's */
#endif
        for (i = 0; i < no; i++) {
            gs_shape s = gs_graph_output_shape(entry, i);
            outputs[d * no + i] = malloc(gs_shape_bytes(&s) ? gs_shape_bytes(&s) : 1);
            if (!outputs[d * no + i]) {
                fprintf(stderr, "gshard: out of memory for the outputs of device %lld\n", d);
                goto done;
            }
        }
    }
    memset(&desc, 0, sizeof desc);
    desc.num_devices = D;
    desc.mode = o->lockstep ? GS_RUNTIME_LOCKSTEP : GS_RUNTIME_MODE_DEFAULT;
    desc.workers = o->workers;
    desc.watchdog_ms = watchdog_ms(o);
#if defined(GSHARD_MPI)
    mpi_desc(o, &desc);
#endif
    if (gs_runtime_create(ctx, &desc, &rt) != GS_OK) {
        fprintf(stderr, "gshard: %s\n", user_msg(gs_ctx_error_msg(ctx)));
        goto done;
    }
    if (gs_runtime_run(rt, entry, dev_in, outputs) != GS_OK) {
        fprintf(stderr, "%s: %s\n", shown_name(o->file), user_msg(gs_ctx_error_msg(ctx)));
#if defined(GSHARD_MPI)
        mpi_failed_run = true;
#endif
        goto done;
    }
#if defined(GSHARD_MPI)
    if (!mpi_collect(entry, D, outputs)) {
        fprintf(stderr, "gshard-mpi: collecting the outputs on rank 0 failed\n");
        goto done;
    }
    if (mpi_rank != 0) {
        rc = EXIT_OK;
        goto done;
    }
#endif
    if (o->output_dir) {
        if (GSHARD_MKDIR(o->output_dir) != 0 && errno != EEXIST) {
            fprintf(stderr, "gshard: cannot create directory %s: %s\n", o->output_dir, strerror(errno));
            goto done;
        }
        for (d = 0; d < D; d++)
            for (i = 0; i < no; i++) {
                int n = snprintf(path, sizeof path, "%s/dev%lld_out%d.npy", o->output_dir, d, i);
                if (n < 0 || (size_t)n >= sizeof path) {
                    fprintf(stderr, "gshard: output path too long\n");
                    goto done;
                }
                if (gs_npy_write_ex(ctx, path, gs_graph_output_shape(entry, i), outputs[d * no + i],
                                    o->npy_raw ? GS_NPY_RAW : 0) != GS_OK) {
                    fprintf(stderr, "gshard: %s\n", user_msg(gs_ctx_error_msg(ctx)));
                    goto done;
                }
            }
    } else {
        for (d = 0; d < D; d++)
            for (i = 0; i < no; i++) {
                gs_shape s = gs_graph_output_shape(entry, i);
                char label[64];
                snprintf(label, sizeof label, "dev%lld_out%d", d, i);
                print_summary(label, &s, outputs[d * no + i]);
            }
    }
    if (o->stats) print_stats(rt);
    rc = EXIT_OK;
done:
    gs_runtime_destroy(rt);
    for (i = 0; inputs && i < np; i++) {
        if (from_npy[i]) gs_free_data(ctx, inputs[i]);
        else free(inputs[i]);
    }
    for (d = 0; outputs && d < D * no; d++) free(outputs[d]);
    free(inputs);
    free(from_npy);
    free((void *)dev_in);
    free(outputs);
    return rc;
}

/* gshard stats FILE: a report of what FILE uses, even when it does not parse */
static int cmd_stats(int argc, char **argv) {
    FILE *f;
    char *text;
    size_t len = 0;
    gs_ctx *ctx = NULL;
    const char *report = NULL;
    int rc;
    if (argc != 3) return usage_error("stats takes one FILE%s", "");
    f = strcmp(argv[2], "-") == 0 ? stdin : fopen(argv[2], "rb");
    if (!f) {
        fprintf(stderr, "gshard: cannot open %s\n", argv[2]);
        return EXIT_ERROR;
    }
    text = read_all(f, &len);
    if (f != stdin) fclose(f);
    if (!text) {
        fprintf(stderr, "gshard: cannot read %s\n", shown_name(argv[2]));
        return EXIT_ERROR;
    }
    if (gs_ctx_create(NULL, &ctx) != GS_OK) {
        free(text);
        return EXIT_ERROR;
    }
    rc = gs_hlo_stats(ctx, text, len, &report);
    if (report) fputs(report, stdout);
    else fprintf(stderr, "gshard: %s\n", gs_ctx_error_msg(ctx));
    gs_ctx_destroy(ctx);
    free(text);
    return rc;
}

/* ---- gshard model / gshard plan: whole-model accounting and the planner ---- */
static const char model_usage_text[] =
    "usage: gshard model (--preset NAME | model flags) [run options] [--json]\n"
    "       gshard plan (--preset NAME | model flags) --chip C --devices N --batch B --seq T\n"
    "                   --train|--prefill|--decode [run options] [--top K] [--sweep LIST] [--json]\n"
    "\n"
    "model: parameters (by part), FLOPs per token (training 6N + attention, inference), KV-cache bytes per\n"
    "  token; with --chip also memory per chip and the step time of the run described by the run options.\n"
    "plan: every mesh of N chips over data, fsdp, tensor, sequence, expert, pipeline (train) and tensor2d\n"
    "  (prefill, decode) ways, ranked by step time under the HBM limit; exit 0 with the ranking, 1 when\n"
    "  nothing fits (the smallest shortfall first, \"fits\": false in JSON).\n"
    "\n"
    "model flags: --preset gpt3-175b|llama2-7b|llama2-13b|llama2-70b|llama3-8b|llama3-70b|llama3-405b|gemma-7b|\n"
    "  mixtral-8x7b, or --layers L --d-model D --d-ff F --heads N [--kv-heads K] [--head-dim H] --vocab V\n"
    "  [--plain-mlp] [--tied] [--experts E --top-k k] [--name NAME] (flags after --preset override it)\n"
    "run options: --chip NAME | --chip-file FILE (`key = value` lines, gs_chip's field names)\n"
    "  --train | --prefill | --decode      the phase (default train)\n"
    "  --batch B                           sequences (default 1)\n"
    "  --seq T                             tokens per sequence; decode: the KV length (default 4096)\n"
    "  --mesh ROLE=N[,ROLE=N:dcn...]       model: the parallelism axes, roles data, fsdp, tensor, sequence,\n"
    "                                      expert, pipeline, tensor2d; ':dcn' puts an axis across slices\n"
    "  --param-bytes X --kv-bytes X --act-bytes X --grad-bytes X --optimizer-bytes X\n"
    "                                      bytes per element (defaults 2, 2, 2, 0, 8)\n"
    "  --math bf16|int8|fp8  --efficiency F (fraction of peak FLOPs)  --no-attention-flops\n"
    "  --remat none|block|matmuls|N (N D-vectors per token and layer)  --microbatches M  --price DOLLARS\n"
    "  --causal                            halve training/prefill attention FLOPs for the causal mask (the\n"
    "                                      book counts the full T*S)\n"
    "  --grad-accum A                      train in A micro-steps of batch/A (plan: tried by itself when a\n"
    "                                      batch does not fit)\n"
    "plan: --devices N; --top K rows (default 10); --sweep devices=A..B[,chips=C1,C2] prints the best layout\n"
    "  for each power of two from A to B on each chip; --emit-hlo FILE writes the best layout (or the one\n"
    "  ranked --emit-rank R) as an annotated HLO module of the model's forward pass at reduced size\n"
    "  (--emit-layers L, default 2; dims / --emit-scale K, default d_model/64; --emit-dtype f32|bf16,\n"
    "  default f32; at most --emit-devices N devices, default 16) that 'gshard run FILE --devices D\n"
    "  --check' proves\n";

typedef struct model_options {
    gs_model_desc m;
    gs_run_desc run;
    gs_chip chip_file;
    bool have_model, have_chip, json;
    int64_t devices, top, emit_rank;
    const char *mesh, *sweep, *emit;
    gs_emit_desc emit_desc;
} model_options;

static bool parse_i64_arg(const char *s, int64_t lo, int64_t hi, int64_t *out) {
    char *end = NULL;
    long long v;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (!*s || *end || errno || v < lo || v > hi) return false;
    *out = (int64_t)v;
    return true;
}

static bool parse_f64_arg(const char *s, double *out) {
    char *end = NULL;
    double v = strtod(s, &end);
    if (!*s || *end || !(v >= 0.0) || v > 1e30) return false;
    *out = v;
    return true;
}

/* "tensor=8,fsdp=16,data=2:dcn" into run axes */
static bool parse_run_mesh(const char *text, gs_run_desc *run) {
    static const char *const names[] = {"", "data", "fsdp", "tensor", "sequence", "expert", "pipeline", "tensor2d"};
    char buf[256], *tok, *next;
    if (strlen(text) >= sizeof buf) return false;
    strcpy(buf, text);
    run->n_axes = 0;
    for (tok = buf; tok; tok = next) {
        char *eq, *colon;
        next = strchr(tok, ',');
        if (next) *next++ = 0;
        eq = strchr(tok, '=');
        int r;
        if (!eq || run->n_axes == GS_MODEL_MAX_AXES) return false;
        *eq = 0;
        colon = strchr(eq + 1, ':');
        if (colon) {
            if (strcmp(colon + 1, "dcn") != 0) return false;
            *colon = 0;
            run->axes[run->n_axes].dcn = true;
        }
        for (r = 1; r < 8; r++)
            if (strcmp(tok, names[r]) == 0) break;
        if (r == 8 || !parse_i64_arg(eq + 1, 1, 1000000, &run->axes[run->n_axes].size)) return false;
        run->axes[run->n_axes].role = (gs_role)r;
        run->n_axes++;
    }
    return run->n_axes > 0;
}

static int parse_model_options(gs_ctx *ctx, bool plan, int argc, char **argv, model_options *o) {
    int i;
    o->run.batch = 1;
    o->run.seq = 4096;
    o->top = 10;
    for (i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int64_t iv = 0;
        double dv = 0.0;
        bool ok = true;
#define MODEL_I64(flag, field, lo, hi) else if (strcmp(a, flag) == 0) { ok = v && parse_i64_arg(v, lo, hi, &iv); if (ok) field = iv; i++; }
#define MODEL_F64(flag, field) else if (strcmp(a, flag) == 0) { ok = v && parse_f64_arg(v, &dv); if (ok) field = dv; i++; }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(model_usage_text, stdout);
            return EXIT_OK;
        } else if (strcmp(a, "--json") == 0) {
            o->json = true;
        } else if (strcmp(a, "--preset") == 0) {
            const gs_model_desc *p = NULL;
            if (!v) return usage_error("%s needs a value", a);
            if (gs_model_preset_lookup(ctx, v, &p) != GS_OK) {
                fprintf(stderr, "gshard: %s\n", gs_ctx_error_msg(ctx));
                return EXIT_ERROR;
            }
            o->m = *p;
            o->have_model = true;
            i++;
        }
        MODEL_I64("--layers", o->m.layers, 1, 1000000)
        MODEL_I64("--d-model", o->m.d_model, 1, 100000000)
        MODEL_I64("--d-ff", o->m.d_ff, 1, 100000000)
        MODEL_I64("--heads", o->m.heads, 1, 1000000)
        MODEL_I64("--kv-heads", o->m.kv_heads, 1, 1000000)
        MODEL_I64("--head-dim", o->m.head_dim, 1, 1000000)
        MODEL_I64("--vocab", o->m.vocab, 1, 100000000)
        MODEL_I64("--experts", o->m.experts, 0, 1000000)
        MODEL_I64("--top-k", o->m.top_k, 0, 1000000)
        MODEL_I64("--batch", o->run.batch, 1, 1000000000000LL)
        MODEL_I64("--seq", o->run.seq, 1, 1000000000000LL)
        MODEL_I64("--microbatches", o->run.microbatches, 1, 1000000)
        MODEL_I64("--grad-accum", o->run.grad_accum, 1, 1000000)
        MODEL_I64("--devices", o->devices, 1, 1000000)
        MODEL_I64("--top", o->top, 1, 1000000)
        MODEL_I64("--emit-rank", o->emit_rank, 1, 1000000)
        MODEL_I64("--emit-layers", o->emit_desc.layers, 1, 256)
        MODEL_I64("--emit-scale", o->emit_desc.scale, 1, 100000000)
        MODEL_I64("--emit-devices", o->emit_desc.max_devices, 1, 4096)
        MODEL_F64("--param-bytes", o->run.param_bytes)
        MODEL_F64("--kv-bytes", o->run.kv_bytes)
        MODEL_F64("--act-bytes", o->run.act_bytes)
        MODEL_F64("--grad-bytes", o->run.grad_bytes)
        MODEL_F64("--optimizer-bytes", o->run.optimizer_bytes)
        MODEL_F64("--efficiency", o->run.efficiency)
        MODEL_F64("--price", o->run.price_per_hour)
        else if (strcmp(a, "--name") == 0 && v) { o->m.name = v; i++; }
        else if (strcmp(a, "--plain-mlp") == 0) o->m.mlp = GS_MLP_PLAIN;
        else if (strcmp(a, "--tied") == 0) o->m.tied_embeddings = true;
        else if (strcmp(a, "--no-attention-flops") == 0) o->run.no_attention_flops = true;
        else if (strcmp(a, "--causal") == 0) o->run.causal = true;
        else if (strcmp(a, "--train") == 0) o->run.phase = GS_PHASE_TRAIN;
        else if (strcmp(a, "--prefill") == 0) o->run.phase = GS_PHASE_PREFILL;
        else if (strcmp(a, "--decode") == 0) o->run.phase = GS_PHASE_DECODE;
        else if (strcmp(a, "--chip") == 0 && v) {
            if (gs_chip_lookup(ctx, v, &o->run.chip) != GS_OK) {
                fprintf(stderr, "gshard: %s\n", gs_ctx_error_msg(ctx));
                return EXIT_ERROR;
            }
            o->have_chip = true;
            i++;
        } else if (strcmp(a, "--chip-file") == 0 && v) {
            if (!load_chip_file(ctx, v, &o->chip_file)) return EXIT_ERROR;
            o->run.chip = &o->chip_file;
            o->have_chip = true;
            i++;
        } else if (strcmp(a, "--math") == 0 && v) {
            if (strcmp(v, "bf16") == 0) o->run.math = GS_MATH_BF16;
            else if (strcmp(v, "int8") == 0) o->run.math = GS_MATH_INT8;
            else if (strcmp(v, "fp8") == 0) o->run.math = GS_MATH_FP8;
            else return usage_error("--math '%s' is not bf16, int8 or fp8", v);
            i++;
        } else if (strcmp(a, "--remat") == 0 && v) {
            if (strcmp(v, "none") == 0) o->run.remat = GS_REMAT_NONE;
            else if (strcmp(v, "block") == 0) o->run.remat = GS_REMAT_BLOCK;
            else if (strcmp(v, "matmuls") == 0) o->run.remat = GS_REMAT_MATMULS;
            else if (parse_f64_arg(v, &dv) && dv > 0.0) {
                o->run.remat = GS_REMAT_CHECKPOINTS;
                o->run.checkpoints = dv;
            } else return usage_error("--remat '%s' is not none, block, matmuls or a number", v);
            i++;
        } else if (strcmp(a, "--mesh") == 0 && v && !plan) {
            if (!parse_run_mesh(v, &o->run)) return usage_error("--mesh '%s' is not like tensor=8,fsdp=16,data=2:dcn", v);
            o->mesh = v;
            i++;
        } else if (strcmp(a, "--sweep") == 0 && v && plan) {
            o->sweep = v;
            i++;
        } else if (strcmp(a, "--emit-hlo") == 0 && v && plan) {
            o->emit = v;
            i++;
        } else if (strcmp(a, "--emit-dtype") == 0 && v && plan) {
            o->emit_desc.dtype = gs_dtype_from_name(v);
            if (o->emit_desc.dtype != GS_F32 && o->emit_desc.dtype != GS_BF16)
                return usage_error("--emit-dtype '%s' is not f32 or bf16", v);
            i++;
        } else {
            const char *const *known = cli_options(plan ? "plan" : "model");
            int k;
            if (a[0] != '-') return usage_error("unexpected argument '%s'", a);
            for (k = 0; known[k]; k++)
                if (strcmp(known[k], a) == 0) return usage_error("%s needs a value", a);
            return unknown_word(plan ? "plan" : "model", "option", a, known);
        }
        if (!ok) return usage_error("bad or missing value for %s", a);
#undef MODEL_I64
#undef MODEL_F64
        if (strncmp(a, "--layers", 8) == 0 || strcmp(a, "--d-model") == 0 || strcmp(a, "--heads") == 0 ||
            strcmp(a, "--vocab") == 0 || strcmp(a, "--d-ff") == 0)
            o->have_model = true;
    }
    if (!o->have_model) return usage_error("%s needs --preset NAME or the model flags (--layers ...)", plan ? "plan" : "model");
    if (!o->m.name) o->m.name = "custom";
    if (plan && (!o->have_chip || (!o->devices && !o->sweep)))
        return usage_error("%s needs --chip and --devices (or --sweep)", "plan");
    if (o->mesh && !o->have_chip) return usage_error("%s needs --chip", "--mesh");
    return -1;
}

static int finish_output(int rc) {
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "gshard: error writing standard output\n");
        return EXIT_ERROR;
    }
    return rc;
}

static int cmd_model(int argc, char **argv) {
    model_options o;
    gs_ctx *ctx = NULL;
    const char *text;
    gs_model_counts c;
    gs_model_step st;
    int rc;
    memset(&o, 0, sizeof o);
    if (gs_ctx_create(NULL, &ctx) != GS_OK) return EXIT_ERROR;
    rc = parse_model_options(ctx, false, argc, argv, &o);
    if (rc >= 0) goto done;
    rc = EXIT_ERROR;
    if (o.json) {
        text = gs_model_json(ctx, &o.m, o.run.seq, o.have_chip ? &o.run : NULL);
        if (!text) {
            fprintf(stderr, "gshard model: %s\n", gs_ctx_error_msg(ctx));
            goto done;
        }
        fputs(text, stdout);
        rc = EXIT_OK;
        goto done;
    }
    if (gs_model_count(ctx, &o.m, o.run.seq, &c) != GS_OK ||
        (o.have_chip && gs_model_step_cost(ctx, &o.m, &o.run, &st) != GS_OK)) {
        fprintf(stderr, "gshard model: %s\n", gs_ctx_error_msg(ctx));
        goto done;
    }
    printf("%s: %.4g parameters (embedding %.4g, output %.4g, attention %.4g, mlp %.4g, router %.4g, norms %.4g)\n",
           o.m.name, c.params, c.params_embed, c.params_unembed, c.params_attn, c.params_mlp, c.params_router, c.params_norm);
    printf("  active per token %.4g; attention share of layer weights %.3f\n", c.params_active, c.attn_fraction_params);
    printf("  FLOPs per token at seq %lld: training %.4g (6N = %.4g), inference %.4g (attention %.4g)\n",
           (long long)o.run.seq, c.flops_train, 6.0 * c.params_matmul, c.flops_fwd, c.attn_flops_fwd);
    printf("  KV cache per token: %.4g elements, %.4g bytes\n", c.kv_elems,
           c.kv_elems * (o.run.kv_bytes > 0 ? o.run.kv_bytes : 2.0));
    if (o.have_chip) {
        printf("  %s on %lld x %s, batch %lld x seq %lld:\n", gs_phase_name(o.run.phase), (long long)st.devices,
               o.run.chip->name, (long long)o.run.batch, (long long)o.run.seq);
        printf("    memory per chip %.4g GB of %.4g (params %.4g, grads %.4g, optimizer %.4g, activations %.4g, KV %.4g)%s\n",
               st.mem.total / 1e9, st.mem.capacity / 1e9, st.mem.params / 1e9, st.mem.grads / 1e9, st.mem.optimizer / 1e9,
               st.mem.activations / 1e9, st.mem.kv_cache / 1e9, st.mem.fits ? "" : "  DOES NOT FIT");
        printf("    step %.6g s, %s-bound (math %.4g, HBM %.4g, KV %.4g, ICI %.4g, DCN %.4g, bubble %.4g s)\n", st.seconds,
               gs_bound_name(st.bound), st.t_math, st.t_hbm, st.t_kv, st.t_ici, st.t_dcn, st.t_bubble);
        printf("    MFU %.3f, %.6g tokens/s (%.6g per chip), $%.4g per million tokens\n", st.mfu, st.tokens_per_s,
               st.tokens_per_s_per_chip, st.cost_per_mtok);
        printf("    B_crit %.4g tokens per chip; tensor ways before ICI-bound %.4g (decode, HBM-bound: %.4g)\n", st.b_crit,
               st.tensor_max, st.tensor_max_decode);
    }
    rc = EXIT_OK;
done:
    gs_ctx_destroy(ctx);
    return finish_output(rc);
}

/* --sweep devices=A..B[,chips=C1,C2]: the best layout per device count (powers of two) and chip */
static int plan_sweep(gs_ctx *ctx, model_options *o) {
    char buf[256], *chips = NULL, *p;
    int64_t lo = 0, hi = 0, d;
    int any_fit = 0;
    if (strlen(o->sweep) >= sizeof buf || strncmp(o->sweep, "devices=", 8) != 0)
        return usage_error("--sweep '%s' is not like devices=8..8192[,chips=v5e,v5p]", o->sweep);
    strcpy(buf, o->sweep + 8);
    if ((p = strstr(buf, ",chips=")) != NULL) {
        *p = 0;
        chips = p + 7;
    }
    p = strstr(buf, "..");
    if (!p) return usage_error("--sweep '%s' is not like devices=8..8192[,chips=v5e,v5p]", o->sweep);
    *p = 0;
    if (!parse_i64_arg(buf, 1, 1000000, &lo) || !parse_i64_arg(p + 2, lo, 1000000, &hi))
        return usage_error("--sweep '%s': bad device range", o->sweep);
    if (o->json) printf("[");
    for (;;) {
        char *next = chips ? chips + strcspn(chips, ",:") : NULL;
        if (next && !*next) next = NULL;
        if (next) *next = 0;
        if (chips && gs_chip_lookup(ctx, chips, &o->run.chip) != GS_OK) {
            fprintf(stderr, "gshard plan: %s\n", gs_ctx_error_msg(ctx));
            return EXIT_ERROR;
        }
        for (d = lo; d <= hi; d *= 2) {
            gs_plan *plan = NULL;
            if (gs_model_plan(ctx, &o->m, &o->run, d, &plan) != GS_OK) {
                if (!o->json) printf("%s %6lld chips: %s\n", o->run.chip->name, (long long)d, gs_ctx_error_msg(ctx));
                gs_ctx_clear_error(ctx);
                continue;
            }
            any_fit |= gs_plan_fits(plan);
            if (o->json) {
                const char *t = gs_plan_json(plan, 1);
                if (!t) return EXIT_ERROR;
                printf("%s{\"chip\": \"%s\", \"devices\": %lld, \"plan\": %s}", any_fit > 1 ? "," : "", o->run.chip->name,
                       (long long)d, t);
                any_fit |= 2;
            } else {
                const gs_model_step *s = gs_plan_step(plan, 0);
                printf("%s %6lld chips: %s %.4g ms, %s-bound, MFU %.3f, %.4g GB/chip\n", o->run.chip->name, (long long)d,
                       gs_plan_fits(plan) ? "fits," : "DOES NOT FIT,", s->seconds * 1e3, gs_bound_name(s->bound), s->mfu,
                       s->mem.total / 1e9);
            }
            if (d > hi / 2) break;
        }
        if (!next) break;
        chips = next + 1;
    }
    if (o->json) printf("]\n");
    return (any_fit & 1) ? EXIT_OK : EXIT_MISMATCH;
}

static int cmd_plan(int argc, char **argv) {
    model_options o;
    gs_ctx *ctx = NULL;
    gs_plan *plan = NULL;
    const char *text;
    int rc;
    memset(&o, 0, sizeof o);
    if (gs_ctx_create(NULL, &ctx) != GS_OK) return EXIT_ERROR;
    rc = parse_model_options(ctx, true, argc, argv, &o);
    if (rc >= 0) goto done;
    if (o.sweep) {
        rc = plan_sweep(ctx, &o);
        goto done;
    }
    rc = EXIT_ERROR;
    if (gs_model_plan(ctx, &o.m, &o.run, o.devices, &plan) != GS_OK) {
        fprintf(stderr, "gshard plan: %s\n", gs_ctx_error_msg(ctx));
        goto done;
    }
    text = o.json ? gs_plan_json(plan, (int)o.top) : gs_plan_text(plan, (int)o.top);
    if (!text) {
        fprintf(stderr, "gshard plan: %s\n", gs_ctx_error_msg(ctx));
        goto done;
    }
    fputs(text, stdout);
    rc = gs_plan_fits(plan) ? EXIT_OK : EXIT_MISMATCH;
    if (o.emit) {
        int64_t dev = 0, scale = 0, rank = o.emit_rank ? o.emit_rank : 1;
        const char *hlo = rank <= gs_plan_num_candidates(plan) ? gs_plan_emit_hlo_ex(plan, (int)rank - 1, &o.emit_desc, &dev, &scale)
                                                               : NULL;
        FILE *f = hlo ? fopen(o.emit, "w") : NULL;
        bool bad = !f;
        if (f) {
            bad = fputs(hlo, f) < 0;
            bad = fclose(f) != 0 || bad;
        }
        if (!hlo && rank > gs_plan_num_candidates(plan)) {
            fprintf(stderr, "gshard plan: --emit-rank %lld but only %d candidates\n", (long long)rank, gs_plan_num_candidates(plan));
            rc = EXIT_ERROR;
        } else if (bad) {
            fprintf(stderr, "gshard plan: cannot write %s%s%s\n", o.emit, hlo ? "" : ": ", hlo ? "" : gs_ctx_error_msg(ctx));
            rc = EXIT_ERROR;
        } else {
            fprintf(stderr, "gshard plan: wrote %s (dims / %lld); check it with: gshard run %s --devices %lld --check%s\n", o.emit,
                    (long long)scale, o.emit, (long long)dev,
                    o.emit_desc.dtype == GS_BF16 ? " --rtol 2e-2 --atol 2e-2" : "");
        }
    }
done:
    gs_ctx_destroy(ctx);
    return finish_output(rc);
}

/* ---- notation: the book's expressions ---- */
typedef struct notation_options {
    const char *expr, *mesh, *sizes, *dtype, *chip;
} notation_options;

static int parse_notation_options(int argc, char **argv, notation_options *o) {
    int i;
    bool no_more_options = false;
    for (i = 2; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!no_more_options && a[0] == '-' && a[1] != 0) {
            const char *const names[] = {"--mesh", "--sizes", "--dtype", "--chip"};
            const char **slots[4];
            int k;
            slots[0] = &o->mesh;
            slots[1] = &o->sizes;
            slots[2] = &o->dtype;
            slots[3] = &o->chip;
            if (strcmp(a, "--") == 0) {
                no_more_options = true;
                continue;
            }
            if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
                print_usage(stdout);
                return EXIT_OK;
            }
            for (k = 0; k < 4 && !option_is(a, names[k]); k++) {}
            if (k == 4) return unknown_word("notation", "option", a, cli_options("notation"));
            if (!(v = option_value(argc, argv, &i, names[k]))) return EXIT_ERROR;
            *slots[k] = v;
            continue;
        }
        if (o->expr) {
            fprintf(stderr, "gshard notation: one EXPR only ('%s' and '%s' given; quote the expression)\n"
                            "(try 'gshard --help')\n", o->expr, a);
            return EXIT_ERROR;
        }
        o->expr = a;
    }
    if (!o->expr) return usage_error("notation: EXPR is missing, e.g. 'A[I_X, J] * B[J, K_Y] -> C[I_X, K_Y]'%s", "");
    if (!o->mesh) return usage_error("notation: --mesh is required, e.g. --mesh X=4,Y=2%s", "");
    return -1;
}

/* --sizes I=512,J=1024: names and sizes (heap arrays the caller frees); false after a message */
static bool parse_sizes(const char *text, int *n, const char ***names, int64_t **sizes) {
    size_t len = strlen(text), cap = 1, k;
    const char *p = text;
    char *copy;
    for (k = 0; k < len; k++) cap += text[k] == ',';
    *names = (const char **)calloc(cap, sizeof(char *));
    *sizes = (int64_t *)calloc(cap, sizeof(int64_t));
    copy = (char *)malloc(len + 1);
    *n = 0;
    if (!*names || !*sizes || !copy) {
        free(copy);
        fprintf(stderr, "gshard: out of memory\n");
        return false;
    }
    memcpy(copy, text, len + 1);
    (*names)[0] = copy;   /* the first name is the copy's start: freed through it */
    for (p = copy;;) {
        char *eq = strchr(p, '='), *comma = strchr(p, ','), *end = NULL;
        long long v;
        if (comma) *comma = 0;
        if (!eq || eq == p || (comma && eq > comma)) {
            fprintf(stderr, "gshard notation: --sizes wants NAME=SIZE,... (e.g. I=512,J=1024), not '%s'\n", text);
            return false;
        }
        *eq = 0;
        errno = 0;
        v = strtoll(eq + 1, &end, 10);
        if (errno || !end || *end || end == eq + 1 || v < 1) {
            fprintf(stderr, "gshard notation: --sizes: %s wants a positive size, not '%s'\n", p, eq + 1);
            return false;
        }
        (*names)[*n] = p;
        (*sizes)[(*n)++] = (int64_t)v;
        if (!comma) break;
        p = comma + 1;
    }
    return true;
}

static int cmd_notation(int argc, char **argv) {
    notation_options o;
    gs_ctx *ctx = NULL;
    gs_notation_desc d;
    gs_notation *n = NULL;
    gs_topology_desc td;
    gs_topology *topo = NULL;
    const char **names = NULL, *text = NULL;
    char *names_buf = NULL;
    int64_t *sizes = NULL;
    int rc, col = 0, i;
    memset(&o, 0, sizeof o);
    if ((rc = parse_notation_options(argc, argv, &o)) >= 0) return rc;
    if (gs_ctx_create(NULL, &ctx) != GS_OK) {
        fprintf(stderr, "gshard: cannot create a context\n");
        return EXIT_ERROR;
    }
    rc = EXIT_ERROR;
    memset(&d, 0, sizeof d);
    memset(&td, 0, sizeof td);
    if (o.sizes) {
        bool ok = parse_sizes(o.sizes, &d.n_sizes, &names, &sizes);
        names_buf = names ? (char *)names[0] : NULL;
        if (!ok) goto done;
        d.size_names = names;
        d.sizes = sizes;
    }
    if (o.dtype && (d.dtype = gs_dtype_from_name(o.dtype)) == GS_DTYPE_INVALID) {
        fprintf(stderr, "gshard notation: --dtype: unknown element type '%s' (bf16, f32, s8, ...)\n", o.dtype);
        goto done;
    }
    if (!(d.mesh = gs_mesh_parse(ctx, o.mesh))) {
        fprintf(stderr, "gshard notation: --mesh: %s\n", user_msg(gs_ctx_error_msg(ctx)));
        goto done;
    }
    if (gs_notation_build(ctx, o.expr, &d, &n, &col) != GS_OK) {
        const char *msg = user_msg(gs_ctx_error_msg(ctx));
        fprintf(stderr, "gshard notation: %s\n", msg);
        if (col > 0) fprintf(stderr, "  %s\n  %*s^\n", o.expr, col - 1, "");
        goto done;
    }
    if (gs_chip_lookup(ctx, o.chip ? o.chip : "v5e", &td.chip) != GS_OK) {
        fprintf(stderr, "gshard notation: --chip: %s\n", user_msg(gs_ctx_error_msg(ctx)));
        goto done;
    }
    td.mesh_rank = gs_mesh_num_axes(d.mesh);
    if (td.mesh_rank > GS_COST_MAX_AXES) {
        fprintf(stderr, "gshard notation: the cost model lays out meshes of at most %d axes on a torus\n", GS_COST_MAX_AXES);
        goto done;
    }
    for (i = 0; i < td.mesh_rank; i++) td.mesh[i] = gs_mesh_axis_size(d.mesh, i);
    if (gs_topology_create(ctx, &td, &topo) != GS_OK || !(text = gs_notation_report(n, topo))) {
        fprintf(stderr, "gshard notation: %s\n", user_msg(gs_ctx_error_msg(ctx)));
        goto done;
    }
    fputs(text, stdout);
    rc = EXIT_OK;
done:
    free(names_buf);
    free((void *)names);
    free(sizes);
    gs_ctx_destroy(ctx);
    return finish_output(rc);
}

#ifndef _WIN32
#include "gshard_exercise.c"
#else
static int cmd_exercise(int argc, char **argv) {
    (void)argc, (void)argv;
    fprintf(stderr, "gshard exercise: the course's checker needs POSIX directories (not built on Windows)\n");
    return EXIT_ERROR;
}
#endif

static int gshard_main(int argc, char **argv) {
    const char *cmd;
    options o;
    gs_ctx *ctx = NULL;
    int rc;

    if (argc < 2) {
        print_usage(stderr);
        return EXIT_ERROR;
    }
    cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        print_usage(stdout);
        return EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("gshard %s\n", gs_version());
        return EXIT_OK;
    }
    { /* GSHARD_ISA (the kernels' instruction set): no such set is an error, one this CPU lacks a warning */
        char why[160];
        if (gs_isa_path(NULL, why, sizeof why) != GS_OK) {
            fprintf(stderr, "gshard: %s\n", why);
            return EXIT_ERROR;
        }
        if (why[0]) fprintf(stderr, "gshard: warning: %s\n", why);
    }
    if (strcmp(cmd, "cost") == 0) return cmd_cost(argc, argv);
    if (strcmp(cmd, "stats") == 0) return cmd_stats(argc, argv);
    if (strcmp(cmd, "model") == 0) return cmd_model(argc, argv);
    if (strcmp(cmd, "plan") == 0) return cmd_plan(argc, argv);
    if (strcmp(cmd, "notation") == 0) return cmd_notation(argc, argv);
    if (strcmp(cmd, "exercise") == 0) return cmd_exercise(argc, argv);
    if (strcmp(cmd, "print") != 0 && strcmp(cmd, "eval") != 0 && strcmp(cmd, "propagate") != 0 &&
        strcmp(cmd, "partition") != 0 && strcmp(cmd, "run") != 0) {
        if (cmd[0] == '-') return unknown_word(NULL, "option", cmd, cli_top_options);
        return unknown_word(NULL, "command", cmd, cli_commands);
    }

    memset(&o, 0, sizeof o);
    o.watchdog = -1;
    o.inputs = (input_spec *)calloc((size_t)argc, sizeof(input_spec));
    o.show = (const char **)calloc((size_t)argc * 2, sizeof(const char *));
    o.xla_opts = o.show + argc;
    if (!o.inputs || !o.show) {
        fprintf(stderr, "gshard: out of memory\n");
        free(o.inputs);
        free((void *)o.show);
        return EXIT_ERROR;
    }
    rc = parse_options(cmd, strcmp(cmd, "eval") == 0 || strcmp(cmd, "run") == 0, argc, argv, &o);
    if (rc >= 0) {
        free(o.inputs);
        free((void *)o.show);
        return rc;
    }
#if defined(GSHARD_MPI)
    if (strcmp(cmd, "run") == 0 && !o.shapes_only && o.devices % mpi_ranks != 0) {
        if (mpi_rank == 0)
            fprintf(stderr, "gshard-mpi run: --devices %lld is not a multiple of the %d ranks\n", o.devices, mpi_ranks);
        free(o.inputs);
        free((void *)o.show);
        return EXIT_ERROR;
    }
#endif
    if (gs_ctx_create(NULL, &ctx) != GS_OK) {
        fprintf(stderr, "gshard: cannot create a context\n");
        free(o.inputs);
        free((void *)o.show);
        return EXIT_ERROR;
    }
    if (strcmp(cmd, "print") == 0) rc = cmd_print(ctx, &o);
    else if (strcmp(cmd, "propagate") == 0) rc = cmd_propagate(ctx, &o);
    else if (strcmp(cmd, "eval") == 0) rc = cmd_eval(ctx, &o);
    else if (strcmp(cmd, "partition") == 0) rc = cmd_partition(ctx, &o);
    else if (o.shapes_only) rc = cmd_run_shapes(ctx, &o);
    else if (o.spmd) rc = cmd_run_spmd(ctx, &o);
    else rc = cmd_run(ctx, &o);
    gs_ctx_destroy(ctx);
    free(o.inputs);
    free((void *)o.show);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "gshard: error writing standard output\n");
        return EXIT_ERROR;
    }
    return rc;
}

int main(int argc, char **argv) {
#if defined(GSHARD_MPI)
    int level = 0;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &level) != MPI_SUCCESS) {
        fprintf(stderr, "gshard-mpi: MPI_Init_thread failed\n");
        return EXIT_ERROR;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mpi_ranks);
    /* rank 0 prints; the others' standard output goes nowhere (their errors still reach standard error) */
    if (mpi_rank != 0 && !freopen("/dev/null", "w", stdout)) {
        fprintf(stderr, "gshard-mpi: rank %d cannot silence its standard output\n", mpi_rank);
        MPI_Abort(MPI_COMM_WORLD, EXIT_ERROR);
    }
    if (level < MPI_THREAD_SERIALIZED) {
        fprintf(stderr, "gshard-mpi: this MPI library does not offer MPI_THREAD_SERIALIZED\n");
        MPI_Abort(MPI_COMM_WORLD, EXIT_ERROR);
    }
    return mpi_finish(gshard_main(argc, argv));
#else
    return gshard_main(argc, argv);
#endif
}
