#!/usr/bin/env bash
# doctest.sh - the documentation runs as written (`make doctest`; in CI, not in `make test`):
#   - every fenced block tagged ```sh in README.md and docs/*.md is run as one bash script (set -e, pipefail)
#     from the repository root, after `make` built build/gshard. Blocks that install packages, fuzz for
#     minutes, run valgrind or need files the reader brings are tagged ```sh-norun instead and skipped; other
#     fences (```c, untagged transcripts) are not run;
#   - a ```sh block followed (blank lines aside) by an ```output block must print exactly that text on stdout;
#     `bash tests/doctest.sh --update` rewrites the output blocks with what the commands print now;
#   - every relative link [text](path) in those files resolves to a file or directory of the repository.
# Files a block creates in the repository (untracked, not ignored) are removed afterwards.
# Prints one line per block and per broken link; exits 1 if any fails.
# Usage: bash tests/doctest.sh [-v | --update]   (DOCTEST_FILES="docs/tour.md" limits it to those files)
set -u
cd "$(dirname "$0")/.." || exit 2
VERBOSE=0
UPDATE=0
[ "${1:-}" = "-v" ] && VERBOSE=1
[ "${1:-}" = "--update" ] && UPDATE=1
T=$(mktemp -d "${TMPDIR:-/tmp}/gshard_doctest.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
DOCS=${DOCTEST_FILES:-"README.md $(ls docs/*.md)"}   # DOCTEST_FILES="docs/tour.md": only those
failed=0
blocks=0

for f in $DOCS; do
    # ---- relative links: [text](target), target without a scheme, anchor dropped, relative to the file ----
    dir=$(dirname "$f")
    while IFS=: read -r line target; do
        [ -z "$target" ] && continue
        case $target in http://* | https://* | mailto:* | \#*) continue ;; esac
        path=${target%%#*}
        if [ ! -e "$dir/$path" ]; then
            printf 'doctest: %s:%s: broken link %s\n' "$f" "$line" "$target"
            failed=$((failed + 1))
        fi
    done < <(awk '/^```/{fence = !fence; next} !fence {
                      s = $0
                      while (match(s, /\]\([^) ]+\)/)) {
                          print NR ":" substr(s, RSTART + 2, RLENGTH - 3)
                          s = substr(s, RSTART + RLENGTH)
                      }
                  }' "$f")

    # ---- ```sh blocks, each into its own script named after the file and the line of its fence ----
    # an ```output block right after one gets the name of its script plus .expected
    awk -v out="$T/$(echo "$f" | tr / +)" '
        /^```sh$/ && !fence { fence = 1; n++; file = out "." NR ".sh"; printf "" > file; next }
        /^```output$/ && !fence && pending != "" { fence = 3; expf = pending ".expected"; printf "" > expf; pending = ""; next }
        /^```/ {
            if (fence == 1) { close(file); pending = file; fence = 0; next }
            if (fence == 3) { close(expf); fence = 0; next }
            fence = fence ? 0 : 2; pending = ""; next
        }
        fence == 1 { print > file; next }
        fence == 3 { print > expf; next }
        !fence && NF > 0 { pending = "" }' "$f"
done

if ! make --no-print-directory all >"$T/make.log" 2>&1; then
    echo "doctest: make failed:"
    tail -20 "$T/make.log"
    exit 1
fi

# a block that failed: its script and the end of its log
block_failed() {
    printf 'doctest: %-20s line %-4s FAILED\n' "$doc" "$line"
    sed 's/^/    | /' "$s"
    tail -15 "$s.log" | sed 's/^/    /'
    failed=$((failed + 1))
}

before=$(git ls-files --others --exclude-standard 2>/dev/null | sort)
for s in $(printf '%s\n' "$T"/*.sh | sort -V); do
    [ -e "$s" ] || continue
    base=${s##*/}
    doc=$(echo "${base%.*.sh}" | tr + /)
    line=$(echo "$base" | awk -F. '{print $(NF-1)}')
    blocks=$((blocks + 1))
    if [ -e "$s.expected" ]; then   # stdout compared with the output block, stderr kept for a failure
        if bash -e -o pipefail "$s" >"$s.out" 2>"$s.log"; then
            if [ $UPDATE = 1 ]; then
                cp "$s.out" "$s.expected"
            elif ! diff -u "$s.expected" "$s.out" >"$s.log"; then
                printf 'doctest: %-20s line %-4s FAILED (its output differs from the output block: - doc, + now)\n' "$doc" "$line"
                head -40 "$s.log" | sed 's/^/    /'
                failed=$((failed + 1))
                continue
            fi
            printf 'doctest: %-20s line %-4s ok (output checked)\n' "$doc" "$line"
            continue
        fi
        block_failed
    elif bash -e -o pipefail "$s" >"$s.log" 2>&1; then
        printf 'doctest: %-20s line %-4s ok\n' "$doc" "$line"
        [ $VERBOSE = 1 ] && sed 's/^/    | /' "$s"
    else
        block_failed
    fi
done
after=$(git ls-files --others --exclude-standard 2>/dev/null | sort)
# --update: each doc's output blocks replaced, in order, by its scripts' current outputs
if [ $UPDATE = 1 ] && [ $failed -eq 0 ]; then
    for f in $DOCS; do
        python3 - "$f" "$T/$(echo "$f" | tr / +)" <<'PYEOF'
import glob, re, sys
doc, prefix = sys.argv[1], sys.argv[2]
lines = open(doc, encoding="utf-8").read().split("\n")
outs = {}
for e in glob.glob(glob.escape(prefix) + ".*.sh.expected"):
    outs[int(e[len(prefix) + 1:].split(".")[0])] = open(e, encoding="utf-8").read()
res, i, last_sh = [], 0, None
while i < len(lines):
    ln = lines[i]
    if ln == "```output" and last_sh in outs:
        res.append(ln)
        j = i + 1
        while lines[j] != "```":
            j += 1
        body = outs[last_sh]
        res.extend(body[:-1].split("\n") if body.endswith("\n") else ([body] if body else []))
        res.append("```")
        i, last_sh = j + 1, None
        continue
    if ln == "```sh":
        last_sh = i + 1
        j = i + 1
        while lines[j] != "```":
            j += 1
        res.extend(lines[i:j + 1])
        i = j + 1
        continue
    if ln.strip():
        last_sh = None
    res.append(ln)
    i += 1
open(doc, "w", encoding="utf-8").write("\n".join(res))
PYEOF
    done
    echo "doctest: output blocks updated"
fi
comm -13 <(echo "$before") <(echo "$after") | while read -r new; do [ -n "$new" ] && rm -rf -- "$new"; done

if [ $failed -ne 0 ]; then
    echo "doctest: $failed failed ($blocks blocks run)"
    exit 1
fi
echo "doctest: $blocks blocks ran, every relative link resolves"
