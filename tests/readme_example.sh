#!/usr/bin/env bash
# readme_example.sh - the C example of README.md (the fenced block between its "readme-example: begin" and
# "readme-example: end" markers) is extracted, compiled with -Werror and run; it must print its comparison with
# the reference interpreter and exit 0. `make test` runs it when README.md or gshard.h changed (a stamp).
set -u
cd "$(dirname "$0")/.." || exit 2
OUT=$(mktemp -d "${TMPDIR:-/tmp}/gshard_readme.XXXXXX") || exit 2
trap 'rm -rf "$OUT"' EXIT
awk '/readme-example: end/{on=0} on && !/^```/{print} /readme-example: begin/{on=1}' README.md >"$OUT/mlp_spmd.c"
if ! grep -q gs_partition "$OUT/mlp_spmd.c"; then
    echo "readme example: no C block between the readme-example markers of README.md"
    exit 1
fi
CC_=${CC:-cc}
if $CC_ -std=c99 -Wall -Wextra -Wpedantic -Wshadow -Werror -O0 -I. "$OUT/mlp_spmd.c" -o "$OUT/mlp_spmd" -lpthread -lm \
        >"$OUT/log" 2>&1 && "$OUT/mlp_spmd" >"$OUT/out" 2>&1 && grep -q 'vs reference' "$OUT/out"; then
    echo "readme example: $(grep 'vs reference' "$OUT/out")"
    exit 0
fi
echo "readme example: FAILED"
cat "$OUT/log" "$OUT/out" 2>/dev/null | tail -30
exit 1
