#!/usr/bin/env python3
"""Builds gshard.h from src/ (deterministic). Usage:
  python3 tools/amalgamate.py            write gshard.h
  python3 tools/amalgamate.py --check    exit 1 if gshard.h differs from what src/ gives
  python3 tools/amalgamate.py --line -o build/gshard_dev.h   with #line directives (developers only)
"""
import os, re, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src")
# Implementation files in pipeline order (DESIGN.md section 1).
IMPL_FILES = ["gs_base.c", "gs_gemm.c", "gs_ir.c", "gs_hlo_text.c", "gs_interp_window.c", "gs_interp.c", "gs_npy.c"]
OPTIONAL_IMPL = ["gs_sharding.c", "gs_propagate.c", "gs_spmd_core.c", "gs_spmd_dot.c", "gs_spmd_window.c", "gs_spmd_ops.c",
                 "gs_spmd.c", "gs_thread.c", "gs_runtime.c", "gs_spmd_check.c", "gs_cost.c"]
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def read(name):
    with open(os.path.join(SRC, name), encoding="utf-8") as f:
        return f.read()


def version():
    m = re.search(r'#define GS_VERSION_STRING "([^"]+)"', read("gs_api.h"))
    return m.group(1)


def inline(name, seen, line_dirs, out):
    """Appends file `name` with local includes inlined at their first use."""
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
                seen.add(inc)
                out.append("/* ==== begin src/%s ==== */" % inc)
                inline(inc, seen, line_dirs, out)
                out.append("/* ==== end src/%s ==== */" % inc)
                if line_dirs:
                    out.append('#line %d "src/%s"' % (i + 2, name))
            continue
        out.append(line)


def build(line_dirs=False):
    out = []
    doc = read("gs_doc.h").replace("@VERSION@", version())
    out.append(doc.rstrip("\n"))
    out.append("")
    seen = {"gs_api.h"}
    out.append("/* ==== begin src/gs_api.h (public section) ==== */")
    inline("gs_api.h", seen, line_dirs, out)
    out.append("/* ==== end src/gs_api.h ==== */")
    out.append("")
    out.append("#ifdef GSHARD_IMPLEMENTATION")
    out.append("#ifndef GSHARD_IMPLEMENTATION_INCLUDED")
    out.append("#define GSHARD_IMPLEMENTATION_INCLUDED")
    files = IMPL_FILES + [f for f in OPTIONAL_IMPL if os.path.exists(os.path.join(SRC, f))]
    for f in files:
        out.append("")
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
