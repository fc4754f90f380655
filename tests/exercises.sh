#!/usr/bin/env bash
# make exercises: for every exercises/NN_name.hlo, its reference solution (exercises/solutions/NN_name.hlo)
# solves it (gshard exercise check exits 0), the solution with every sharding removed does not (exit 1), and
# the starting file as given does not (exit 1). Each check runs from a scratch directory on a copy, the way a
# student's copy is checked. Usage: tests/exercises.sh [path/to/gshard]
set -u
G=$(cd "$(dirname "${1:-build/gshard}")" && pwd)/$(basename "${1:-build/gshard}")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
n=0 bad=0
expect() {   # expect CODE LABEL FILE
    local want=$1 label=$2 file=$3 rc
    (cd "$TMP" && GSHARD_EXERCISES="$ROOT/exercises" "$G" exercise check "$file" >"$TMP/out" 2>&1)
    rc=$?
    if [ "$rc" != "$want" ]; then
        echo "FAIL $label: exit $rc, expected $want" >&2
        sed 's/^/    /' "$TMP/out" >&2
        bad=$((bad + 1))
    fi
}
for start in "$ROOT"/exercises/[0-9]*.hlo; do
    name=$(basename "$start" .hlo)
    sol="$ROOT/exercises/solutions/$name.hlo"
    n=$((n + 1))
    if [ ! -f "$sol" ]; then
        echo "FAIL $name: no solution in exercises/solutions/" >&2
        bad=$((bad + 1))
        continue
    fi
    cp "$start" "$TMP/start.hlo" && expect 1 "$name (starting file)" start.hlo
    cp "$sol" "$TMP/mine.hlo" && expect 0 "$name (solution)" mine.hlo
    # (a program given without any sharding, a single chip's, has nothing to remove)
    "$G" exercise strip "$sol" >"$TMP/bare.hlo"
    if ! cmp -s "$sol" "$TMP/bare.hlo"; then
        expect 1 "$name (solution without shardings)" bare.hlo
    fi
done
if [ "$bad" -ne 0 ]; then
    echo "exercises: $bad of $((3 * n)) checks failed" >&2
    exit 1
fi
echo "exercises: $n, every solution solves its exercise (exit 0), every starting file and every solution without its shardings does not (exit 1)"
