#!/usr/bin/env bash
# fresh_clone.sh - what a new user gets: the committed tree cloned into a temporary directory, python3 hidden from
# PATH (only the tools of PATH minus python), then `make demo` and `make test` must pass there. This shows
# gshard.h is not regenerated on a clone (the checkout leaves src/ newer than gshard.h); then touching src/ must
# keep gshard.h as it is, and changing a source must ask for python3. Tests HEAD: commit first.
# Usage: bash tests/fresh_clone.sh [-k] (-k: keep the clone and print its path)
set -euo pipefail
cd "$(dirname "$0")/.."
KEEP=0
[ "${1:-}" = "-k" ] && KEEP=1
T=$(mktemp -d "${TMPDIR:-/tmp}/gshard_clone.XXXXXX")
[ $KEEP = 1 ] || trap 'rm -rf "$T"' EXIT
git clone -q "$PWD" "$T/gshard"
# a PATH without python: every program of the current PATH linked into one directory, python* left out
mkdir -p "$T/bin"
IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do
    [ -d "$d" ] || continue
    for f in "$d"/*; do
        n=${f##*/}
        case $n in python*) continue ;; esac
        [ -x "$f" ] && [ ! -e "$T/bin/$n" ] && ln -s "$f" "$T/bin/$n"
    done
done
cd "$T/gshard"
if PATH="$T/bin" command -v python3 >/dev/null 2>&1; then echo "fresh_clone: python3 still on PATH" >&2; exit 1; fi
echo "fresh_clone: $T/gshard, PATH without python3"
PATH="$T/bin" make demo
PATH="$T/bin" make test
# timestamps alone never regenerate gshard.h; a real change to src/ asks for python3
touch src/* tools/amalgamate.py
PATH="$T/bin" make --no-print-directory -q gshard.h || { echo "fresh_clone: touching src/ made gshard.h stale" >&2; exit 1; }
echo "/* a change */" >>src/gs_base.c
if PATH="$T/bin" make --no-print-directory gshard.h 2>"$T/regen.err"; then
    echo "fresh_clone: a changed src/ did not ask to regenerate gshard.h" >&2
    exit 1
fi
grep -q "python3 is needed" "$T/regen.err" || { cat "$T/regen.err" >&2; exit 1; }
git checkout -q src/gs_base.c
echo "fresh_clone: ok (touching src/ keeps gshard.h; changing it asks for python3)"
[ $KEEP = 1 ] && echo "fresh_clone: kept $T"
exit 0
