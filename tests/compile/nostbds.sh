#!/usr/bin/env bash
# nostbds.sh OUT - an implementation TU compiled where no stb_ds.h can be found (the compiler's own include
# dirs mirrored without stb_ds.h and stb/, gshard.h copied away from any stb_ds.h beside it) must fail with the
# #error that names the fix, and the compiler must stop there: at most that error and the missing include.
set -u
out=$1
cc=${CC:-cc}
mkdir -p "$out"
args=-nostdinc
i=0
for d in $(echo | $cc -E -Wp,-v -x c - 2>&1 >/dev/null | sed -n 's/^ \(\/.*\)$/\1/p'); do
    m=$out/inc$i
    i=$((i + 1))
    mkdir -p "$m"
    for f in "$d"/*; do
        case ${f##*/} in stb | stb_ds.h) continue ;; esac
        ln -sf "$f" "$m/"
    done
    args="$args -isystem $m"
done
cp gshard.h "$out/gshard.h"
printf '#define GSHARD_IMPLEMENTATION\n#include "gshard.h"\nint main(void) { return 0; }\n' >"$out/t.c"
if $cc -std=c99 $args -c "$out/t.c" -o "$out/t.o" 2>"$out/err.txt"; then
    echo "compiled although no stb_ds.h can be found"
    exit 1
fi
cat "$out/err.txt"
n=$(grep -Ec "(error|warning):" "$out/err.txt")
grep -q 'gshard.h needs stb_ds.h' "$out/err.txt" && [ "$n" -le 2 ]
