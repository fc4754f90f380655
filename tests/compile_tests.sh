#!/usr/bin/env bash
# compile_tests.sh - compile-only tests of gshard.h (run by `make test` before the suite).
#   - the header in a declarations-only TU and an implementation TU, linked and run, as C99, C11, gnu99
#     (gcc, clang) and C++11, C++17 (g++, clang++), with -Wall -Wextra -Wpedantic -Wshadow -Werror;
#   - GSHARD_STATIC in two TUs that each compile the implementation, linked together;
#   - the stb_ds scenarios (README.md, "Troubleshooting build"), including the two documented failures and their fix;
#   - the example in gshard.h's top comment, built and run; a missing stb_ds.h stops at one #error.
# `make test` runs it only when gshard.h, this script or tests/compile/ changed (a stamp).
# Prints one line per scenario; exits 1 if any fails. A compiler that is not installed is skipped.
# Usage: bash tests/compile_tests.sh [-v]   (-v: show the commands)
set -u
cd "$(dirname "$0")/.." || exit 2
T=tests/compile
OUT=$(mktemp -d "${TMPDIR:-/tmp}/gshard_compile.XXXXXX") || exit 2
trap 'rm -rf "$OUT"' EXIT
VERBOSE=0
[ "${1:-}" = "-v" ] && VERBOSE=1
WARN="-Wall -Wextra -Wpedantic -Wshadow -Werror"
LIBS="-lpthread -lm"
JOBS=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)

# run NAME CMD...: runs a shell command line, logs it to $OUT/NAME.log, status in $OUT/NAME.rc
run() {
    local name=$1; shift
    { echo "+ $*"; bash -c "$*"; } >"$OUT/$name.log" 2>&1
    echo $? >"$OUT/$name.rc"
}

# ---- scenarios: NAME, DESCRIPTION, EXPECT (pass, skip or fail:REGEX), COMMAND; fields split by $SEP ----
SEP=$'\x1f'
SCEN=()
add() { SCEN+=("$1$SEP$2$SEP$3$SEP$4"); }

matrix() { # compiler-kind std driver
    local cc=$1 std=$2 lang=$3 tag="$1-$2" x=""
    command -v "$cc" >/dev/null 2>&1 || { add "$tag" "$cc -std=$std" skip ""; return; }
    [ "$lang" = c++ ] && x="-x c++"
    local o="$OUT/$tag"
    add "$tag" "$cc -std=$std: declarations TU + implementation TU, linked, run" pass \
        "mkdir -p $o && $cc -std=$std $WARN -O0 $x -c $T/use.c -o $o/use.o && \
         $cc -std=$std $WARN -O0 $x -c $T/impl.c -o $o/impl.o && \
         $cc -o $o/prog $o/use.o $o/impl.o $LIBS && $o/prog"
}
for s in c99 c11 gnu99; do matrix gcc $s c; matrix clang $s c; done
for s in c++11 c++17; do matrix g++ $s c++; matrix clang++ $s c++; done

# Under GSHARD_STATIC every public function is static; GS_API marks them unused so -Wall stays quiet.
static_case() {
    local cc=$1 std=$2 x=$3 tag="static-$1"
    command -v "$cc" >/dev/null 2>&1 || { add "$tag" "GSHARD_STATIC ($cc)" skip ""; return; }
    local o="$OUT/$tag"
    add "$tag" "$cc -std=$std: GSHARD_STATIC, two TUs each with the implementation" pass \
        "mkdir -p $o && $cc -std=$std $WARN -O0 $x -c $T/static_a.c -o $o/a.o && \
         $cc -std=$std $WARN -O0 $x -c $T/static_b.c -o $o/b.o && $cc -o $o/prog $o/a.o $o/b.o $LIBS && $o/prog"
}
static_case gcc c99 ""
static_case clang c99 ""
static_case g++ c++11 "-x c++"

# stb_ds policy (gcc, strict C99: the hardest mode for stb_ds's hash maps)
SC="gcc -std=c99 $WARN -O0"
command -v gcc >/dev/null 2>&1 || SC="cc -std=c99 $WARN -O0"
o="$OUT/stbds"
add stbds-user-first "stb_ds: user's STB_DS_IMPLEMENTATION earlier in the same TU" pass \
    "mkdir -p $o && $SC $T/stbds_user_first.c -o $o/first $LIBS && $o/first"
add stbds-lib-impl "stb_ds: gshard emits the impl, user code in the same TU uses it" pass \
    "mkdir -p $o && $SC $T/stbds_lib_impl.c -o $o/lib $LIBS && $o/lib"
add stbds-separate "stb_ds: gshard's impl TU + a separate user TU using stb_ds" pass \
    "mkdir -p $o/sep && $SC -c $T/stbds_gshard_impl.c -o $o/sep/g.o && $SC -c $T/stbds_user_main.c -o $o/sep/u.o && \
     $SC -o $o/sep/prog $o/sep/g.o $o/sep/u.o $LIBS && $o/sep/prog"
add stbds-two-impls "stb_ds: gshard's impl + user's stb_ds impl.c: link error (expected)" \
    "fail:multiple definition|duplicate symbol" \
    "mkdir -p $o/two && $SC -c $T/stbds_gshard_impl.c -o $o/two/g.o && $SC -c $T/stbds_user_impl.c -o $o/two/u.o && \
     $SC -o $o/two/prog $o/two/g.o $o/two/u.o $LIBS"
add stbds-opt-out "stb_ds: GSHARD_NO_STB_DS_IMPLEMENTATION + user's stb_ds impl.c" pass \
    "mkdir -p $o/opt && $SC -c $T/stbds_gshard_optout.c -o $o/opt/g.o && $SC -c $T/stbds_user_impl.c -o $o/opt/u.o && \
     $SC -o $o/opt/prog $o/opt/g.o $o/opt/u.o $LIBS && $o/opt/prog"
add stbds-user-later "stb_ds: user's impl after gshard's in one TU: redefinition (expected)" \
    "fail:redefinition" \
    "mkdir -p $o && $SC -c $T/stbds_user_later.c -o $o/later.o"
add stbds-user-later-opt-out "stb_ds: the same TU with GSHARD_NO_STB_DS_IMPLEMENTATION" pass \
    "mkdir -p $o && $SC -DGSHARD_NO_STB_DS_IMPLEMENTATION $T/stbds_user_later.c -o $o/later $LIBS && $o/later"

# GSHARD_NO_THREADS: no pthread dependency (linked with -lm only); the runtime runs in lockstep
o="$OUT/nothreads"
add nothreads-c "GSHARD_NO_THREADS (gcc -std=c99, no -lpthread): lockstep runtime" pass \
    "mkdir -p $o && $SC $T/nothreads.c -o $o/c -lm && $o/c"
if command -v g++ >/dev/null 2>&1; then
    add nothreads-cxx "GSHARD_NO_THREADS (g++ -std=c++11, no -lpthread): lockstep runtime" pass \
        "mkdir -p $o && g++ -std=c++11 $WARN -O0 -x c++ $T/nothreads.c -o $o/cxx -lm && $o/cxx"
fi

# the example in gshard.h's top comment must compile as written and print tanh(1)
o="$OUT/doc"
add doc-example "the example in gshard.h's top comment builds with -Werror and prints tanh(1)" pass \
    "mkdir -p $o && awk '/^       #include <stdio.h>/{on=1} /^   Build:/{on=0} on' gshard.h | cut -c8- > $o/doc.c && \
     ${SC%% *} -std=c99 $WARN -O0 -I. $o/doc.c -o $o/doc $LIBS && $o/doc | grep -q 'out\[0\] = 0.761594'"

# without stb_ds.h: the #error naming the fix, and the compiler stops (no pages of follow-on errors)
add no-stbds "without stb_ds.h: one #error naming the fix, then the compiler stops" pass \
    "bash $T/nostbds.sh $OUT/nostbds"

# ---- run them, JOBS at a time ----
running=0
for sc in "${SCEN[@]}"; do
    IFS=$SEP read -r name desc expect cmd <<<"$sc"
    [ "$expect" = skip ] && continue
    run "$name" "$cmd" &
    running=$((running + 1))
    if [ "$running" -ge "$JOBS" ]; then wait -n 2>/dev/null || true; running=$((running - 1)); fi
done
wait

failed=0
for sc in "${SCEN[@]}"; do
    IFS=$SEP read -r name desc expect cmd <<<"$sc"
    if [ "$expect" = skip ]; then
        printf 'compile: %-68s skipped (compiler not installed)\n' "$desc"
        continue
    fi
    rc=$(cat "$OUT/$name.rc" 2>/dev/null || echo 99)
    ok=0
    if [ "$expect" = pass ]; then
        [ "$rc" = 0 ] && ok=1
    else
        pat=${expect#fail:}
        [ "$rc" != 0 ] && grep -Eq "$pat" "$OUT/$name.log" && ok=1
    fi
    if [ $ok = 1 ]; then
        printf 'compile: %-68s ok\n' "$desc"
        [ $VERBOSE = 1 ] && head -1 "$OUT/$name.log"
    else
        printf 'compile: %-68s FAILED\n' "$desc"
        sed 's/^/    /' "$OUT/$name.log" | head -25
        failed=$((failed + 1))
    fi
done
if [ $failed -ne 0 ]; then
    echo "compile tests: $failed failed"
    exit 1
fi
exit 0
