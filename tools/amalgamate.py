#!/usr/bin/env python3
"""Builds gshard.h from src/ (deterministic). Usage:
  python3 tools/amalgamate.py            write gshard.h
  python3 tools/amalgamate.py --check    exit 1 if gshard.h differs from what src/ gives
  python3 tools/amalgamate.py --line -o build/gshard_dev.h   with #line directives (developers only)
"""
import hashlib, os, re, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src")
# Implementation files in pipeline order (docs/design.md section 1), each a section of gshard.h: (file, section name,
# one-line summary for the table of contents). Files not present are skipped.
SECTIONS = [
    ("gs_base.c", "base", "arena, allocator glue, errors, logging, text buffers, dtype helpers"),
    ("gs_ir.c", "IR", "shapes, graphs, builders with shape inference, the verifier, einsum"),
    ("gs_hlo_text.c", "HLO text", "the canonical printer and the parser of XLA's HLO text"),
    ("gs_sharding.c", "sharding", "shardings, tile assignments, tile math, meshes, annotations, the sharding algebra"),
    ("gs_propagate.c", "propagation", "sharding propagation (XLA ShardingPropagation), forward and backward"),
    ("gs_spmd_core.c", "partitioner - core", "tile views, partition-id tables, masks, collectives, the reshard planner"),
    ("gs_spmd_dot.c", "partitioner - dot strategies", "dot and convolution strategies, the windowed einsum loop"),
    ("gs_spmd_window.c", "partitioner - windowed inputs", "halo regions: slice, pad, reduce-window, concat, reverse, "
     "conv, reshape"),
    ("gs_spmd_ops.c", "partitioner - rules", "every other rule, the dispatcher gs__sp_op, the walk over a computation"),
    ("gs_spmd.c", "partitioner - driver", "gs_partition, what it records on the SPMD program, printing"),
    ("gs_gemm.c", "interpreter - gemm", "the f32 matrix-multiply kernel"),
    ("gs_simd.c", "interpreter - vector kernels", "elementwise and reduction kernels per instruction set"),
    ("gs_interp_window.c", "interpreter - windowed kernels", "matmul, convolution and reduce-window kernels"),
    ("gs_interp.c", "interpreter", "the reference interpreter: one device, global arrays, XLA semantics"),
    ("gs_npy.c", "interpreter - npy", "NumPy .npy files and the deterministic input generator"),
    ("gs_thread.c", "runtime - threads", "atomics, clock, mutex, worker pool, the barrier"),
    ("gs_runtime.c", "runtime", "D emulated devices, the collective engine, scatter and gather of global arrays"),
    ("gs_mpi.c", "runtime - ranks", "the link between MPI ranks (GSHARD_MPI builds only)"),
    ("gs_spmd_check.c", "check", "the partitioned-vs-reference check"),
    ("gs_cost.c", "cost", "the TPU cost model: chips, roofline, ICI collectives, topologies"),
    ("gs_model.c", "cost - whole models", "Transformer accounting, step times, memory per chip, the planner"),
    ("gs_shapes.c", "shapes-only runs", "the runtime's accounting of an SPMD program from shapes alone"),
    ("gs_notation.c", "notation", "the book's sharding notation both ways; expressions built, partitioned, costed"),
    ("gs_trace.c", "pictures", "trace-event JSON of a run and of the cost model's timeline, SVG of a sharding"),
]
IMPL_FILES = [f for f, _, _ in SECTIONS]
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def read(name):
    with open(os.path.join(SRC, name), encoding="utf-8") as f:
        return f.read()


def src_sha256():
    """The hash the Makefile recomputes with coreutils to decide whether gshard.h is stale:
    LC_ALL=C sha256sum src/* tools/amalgamate.py | sha256sum (sorted paths, "HEX  path" lines)."""
    paths = ["src/" + n for n in sorted(os.listdir(SRC)) if os.path.isfile(os.path.join(SRC, n))]
    lines = ""
    for p in paths + ["tools/amalgamate.py"]:
        with open(os.path.join(ROOT, p), "rb") as f:
            lines += "%s  %s\n" % (hashlib.sha256(f.read()).hexdigest(), p)
    return hashlib.sha256(lines.encode()).hexdigest()


def version():
    m = re.search(r'#define GS_VERSION_STRING "([^"]+)"', read("gs_api.h"))
    return m.group(1)


def inline(name, seen, line_dirs, out):
    """Appends file `name` with local includes inlined at their first use; a *.inc fragment (compiled once per
    instance, e.g. the GEMM kernels per instruction set) is inlined at every use."""
    text = read(name)
    if line_dirs:
        out.append('#line 1 "src/%s"' % name)
    for i, line in enumerate(text.split("\n")):
        m = INCLUDE_RE.match(line)
        if m and os.path.exists(os.path.join(SRC, m.group(1))):
            inc = m.group(1)
            if inc in seen:
                out.append("/* #include \"%s\" (already inlined) */" % inc)
            else:
                if not inc.endswith(".inc"):
                    seen.add(inc)
                out.append("/* ==== begin src/%s ==== */" % inc)
                inline(inc, seen, line_dirs, out)
                out.append("/* ==== end src/%s ==== */" % inc)
                if line_dirs:
                    out.append('#line %d "src/%s"' % (i + 2, name))
            continue
        out.append(line)


def marker(f):
    """The greppable marker line of a section: /* === SECTION: name (src/file) === */"""
    return "/* === SECTION: %s (src/%s) === */" % (next(n for g, n, _ in SECTIONS if g == f), f)


def contents():
    """The table of contents at the top of gshard.h: one line per section, in file order."""
    rows = [("public API", "gs_api.h", "types, enums, the op list, every public function")]
    rows += [(n, f, d) for f, n, d in SECTIONS if os.path.exists(os.path.join(SRC, f))]
    w = max(len(n) for n, _, _ in rows)
    out = ["/* Contents (generated by tools/amalgamate.py). Each section starts with a comment line",
           "   `=== SECTION: <name> (src/<file>) ===`: grep \"SECTION: <name>\" to jump to it."]
    out += ["     %-*s  %s" % (w, n, d) for n, _, d in rows]
    out.append("   Everything after the public API is inside #ifdef GSHARD_IMPLEMENTATION; the private types come first. */")
    return out


def build(line_dirs=False):
    out = []
    doc = read("gs_doc.h").replace("@VERSION@", version()).replace("@SRC_SHA256@", src_sha256())
    out.append(doc.rstrip("\n"))
    out.append("")
    out.extend(contents())
    out.append("")
    seen = {"gs_api.h"}
    out.append("/* === SECTION: public API (src/gs_api.h) === */")
    out.append("/* ==== begin src/gs_api.h (public section) ==== */")
    inline("gs_api.h", seen, line_dirs, out)
    out.append("/* ==== end src/gs_api.h ==== */")
    out.append("")
    out.append("#ifdef GSHARD_IMPLEMENTATION")
    out.append("#ifndef GSHARD_IMPLEMENTATION_INCLUDED")
    out.append("#define GSHARD_IMPLEMENTATION_INCLUDED")
    files = [f for f in IMPL_FILES if os.path.exists(os.path.join(SRC, f))]
    unlisted = sorted(set(f for f in os.listdir(SRC) if f.endswith(".c")) - set(IMPL_FILES))
    if unlisted:
        raise SystemExit("amalgamate.py: add src/%s to SECTIONS (its place in the pipeline)" % unlisted[0])
    for f in files:
        out.append("")
        out.append(marker(f))
        out.append("/* ==== begin src/%s ==== */" % f)
        inline(f, seen, line_dirs, out)
        out.append("/* ==== end src/%s ==== */" % f)
    out.append("")
    out.append("#if defined(GS__OWN_TYPEOF)")
    out.append("#  undef typeof")
    out.append("#  undef GS__OWN_TYPEOF")
    out.append("#endif")
    out.append("#endif /* GSHARD_IMPLEMENTATION_INCLUDED */")
    out.append("#endif /* GSHARD_IMPLEMENTATION */")
    out.append("")
    out.append("/*")
    out.append(read("gs_license.txt").rstrip("\n"))
    out.append("*/")
    text = "\n".join(l.rstrip() for l in out) + "\n"
    return text


def main(argv):
    check = "--check" in argv
    line_dirs = "--line" in argv
    dest = os.path.join(ROOT, "gshard.h")
    if "-o" in argv:
        dest = argv[argv.index("-o") + 1]
    if check and line_dirs:
        print("amalgamate.py: --check and --line do not go together", file=sys.stderr)
        return 2
    text = build(line_dirs)
    if check:
        try:
            with open(dest, encoding="utf-8") as f:
                cur = f.read()
        except OSError:
            cur = None
        if cur != text:
            print("gshard.h is stale: run python3 tools/amalgamate.py", file=sys.stderr)
            return 1
        print("gshard.h is up to date")
        return 0
    os.makedirs(os.path.dirname(os.path.abspath(dest)), exist_ok=True)
    with open(dest, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
