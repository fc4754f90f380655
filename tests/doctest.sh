#!/usr/bin/env bash
# doctest.sh - the documentation runs as written (`make doctest`; in CI, not in `make test`):
#   - every fenced block tagged ```sh in README.md and docs/*.md is run as one bash script (set -e, pipefail)
#     from the repository root, after `make` built build/gshard. Blocks that install packages, fuzz for
#     minutes, run valgrind or need files the reader brings are tagged ```sh-norun instead and skipped; other
#     fences (```c, untagged transcripts) are not run;
#   - every relative link [text](path) in those files resolves to a file or directory of the repository.
# Files a block creates in the repository (untracked, not ignored) are removed afterwards.
# Prints one line per block and per broken link; exits 1 if any fails. Usage: bash tests/doctest.sh [-v]
set -u
cd "$(dirname "$0")/.." || exit 2
VERBOSE=0
[ "${1:-}" = "-v" ] && VERBOSE=1
T=$(mktemp -d "${TMPDIR:-/tmp}/gshard_doctest.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
DOCS="README.md $(ls docs/*.md)"
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
    awk -v out="$T/$(echo "$f" | tr / +)" '
        /^```sh$/ && !fence { fence = 1; n++; file = out "." NR ".sh"; printf "" > file; next }
        /^```/ { if (fence == 1) close(file); fence = fence ? 0 : 2; next }
        fence == 1 { print > file }' "$f"
done

if ! make --no-print-directory all >"$T/make.log" 2>&1; then
    echo "doctest: make failed:"
    tail -20 "$T/make.log"
    exit 1
fi

before=$(git ls-files --others --exclude-standard 2>/dev/null | sort)
for s in $(printf '%s\n' "$T"/*.sh | sort -V); do
    [ -e "$s" ] || continue
    base=${s##*/}
    doc=$(echo "${base%.*.sh}" | tr + /)
    line=$(echo "$base" | awk -F. '{print $(NF-1)}')
    blocks=$((blocks + 1))
    if bash -e -o pipefail "$s" >"$s.log" 2>&1; then
        printf 'doctest: %-20s line %-4s ok\n' "$doc" "$line"
        [ $VERBOSE = 1 ] && sed 's/^/    | /' "$s"
    else
        printf 'doctest: %-20s line %-4s FAILED\n' "$doc" "$line"
        sed 's/^/    | /' "$s"
        tail -15 "$s.log" | sed 's/^/    /'
        failed=$((failed + 1))
    fi
done
after=$(git ls-files --others --exclude-standard 2>/dev/null | sort)
comm -13 <(echo "$before") <(echo "$after") | while read -r new; do [ -n "$new" ] && rm -rf -- "$new"; done

if [ $failed -ne 0 ]; then
    echo "doctest: $failed failed ($blocks blocks run)"
    exit 1
fi
echo "doctest: $blocks blocks ran, every relative link resolves"
