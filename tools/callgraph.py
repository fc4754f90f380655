#!/usr/bin/env python3
"""The call graph of src/*.c by file: which file's functions call (or take the address of) which other file's.
Usage:
  python3 tools/callgraph.py                 the partitioner's file graph (src/gs_spmd*.c), and its cycles
  python3 tools/callgraph.py --all           the same over every src/*.c
  python3 tools/callgraph.py --check         exit 1 if the partitioner's file graph has a cycle
  python3 tools/callgraph.py --long N        functions longer than N lines (every src/*.c), longest first
  python3 tools/callgraph.py --calls A B     which functions of src/A call which of src/B
A function is a top-level definition `name(...) {`; its length counts the lines from its signature's first line
to its closing brace. Calls are found by name (comments and string literals removed), so a name that is only
mentioned in a macro argument or taken as a callback counts as a call too.
"""
import os, re, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src")
IDENT = re.compile(r"[A-Za-z_]\w*")
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "do", "else"}


def strip(text):
    """Comments, string and char literals blanked (newlines kept, so line numbers stay)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j]) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path):
    """[(name, first_line, last_line, body_text)] of the top-level function definitions in one file."""
    text = strip(open(path, encoding="utf-8").read())
    # preprocessor lines out, with their continuation lines (they may hold unbalanced text)
    lines, cont = text.split("\n"), False
    for k, l in enumerate(lines):
        pre = cont or l.lstrip().startswith("#")
        cont = pre and l.rstrip().endswith("\\")
        if pre:
            lines[k] = ""
    text = "\n".join(lines)
    res, depth, i, n = [], 0, 0, len(text)
    stmt_start = 0
    while i < n:
        c = text[i]
        if c == "{":
            if depth == 0:
                head = text[stmt_start:i]
                m = re.search(r"(\w+)\s*\([^;{}]*\)\s*$", head)
                is_fn = m is not None and m.group(1) not in KEYWORDS and not re.search(r"\b(struct|union|enum)\b[^(]*$", head[:m.start(1)]) \
                    and "=" not in head
                start = i
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                if is_fn:
                    first = text.count("\n", 0, stmt_start + len(head) - len(head.lstrip())) + 1
                    last = text.count("\n", 0, i) + 1
                    res.append((m.group(1), first, last, text[start:i + 1]))
                stmt_start = i + 1
        elif c == ";" and depth == 0:
            stmt_start = i + 1
        i += 1
    return res


def load(files):
    defs = {}   # name -> file
    fns = {}    # file -> [(name, first, last, body)]
    for f in files:
        fns[f] = functions(os.path.join(SRC, f))
        for name, _, _, _ in fns[f]:
            defs.setdefault(name, f)
    return defs, fns


def edges(defs, fns, files):
    """{(from_file, to_file): [(caller, callee)]} over the given files."""
    e = {}
    for f in files:
        for name, _, _, body in fns[f]:
            for callee in sorted(set(IDENT.findall(body))):
                g = defs.get(callee)
                if g and g != f and g in files:
                    e.setdefault((f, g), []).append((name, callee))
    return e


def cycles(files, e):
    """Strongly connected components with more than one file (Tarjan)."""
    adj = {f: sorted({b for (a, b) in e if a == f}) for f in files}
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in adj[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for f in files:
        if f not in index:
            visit(f)
    return out


def main(argv):
    every = sorted(f for f in os.listdir(SRC) if f.endswith(".c"))
    defs, fns = load(every)
    if "--long" in argv:
        lim = int(argv[argv.index("--long") + 1])
        rows = [(last - first + 1, f, name) for f in every for name, first, last, _ in fns[f]]
        rows = sorted((r for r in rows if r[0] > lim), key=lambda r: (-r[0], r[1], r[2]))
        for n, f, name in rows:
            print("%5d  src/%s  %s" % (n, f, name))
        print("%d functions over %d lines" % (len(rows), lim))
        return 0
    if "--calls" in argv:
        a, b = argv[argv.index("--calls") + 1:argv.index("--calls") + 3]
        for caller, callee in edges(defs, fns, every).get((a, b), []):
            print("%s -> %s" % (caller, callee))
        return 0
    files = every if "--all" in argv else [f for f in every if f.startswith("gs_spmd") and f != "gs_spmd_check.c"]
    e = edges(defs, fns, files)
    cyc = cycles(files, e)
    if "--check" not in argv:
        for (a, b) in sorted(e):
            print("%-20s -> %-20s %3d calls" % (a, b, len(e[(a, b)])))
    for c in cyc:
        print("cycle: " + " <-> ".join(c))
    if not cyc:
        print("no cycle among %d files" % len(files))
    return 1 if cyc else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
