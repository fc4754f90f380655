#!/usr/bin/env bash
# package.sh - the packaging of gshard.h, end to end (run by .ci/run; needs cmake and pkg-config):
#   make install PREFIX=P: the header, the CLI, pkg-config module gshard and CMake config land under P; a
#     consumer builds with `pkg-config --cflags --libs gshard` and with find_package(gshard); make uninstall
#     removes every file;
#   cmake: a consumer builds the source tree by add_subdirectory; `cmake --install` of the source tree and a
#     consumer by find_package.
# Prints one line per step; exits 1 on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
T=$(mktemp -d "${TMPDIR:-/tmp}/gshard_package.XXXXXX")
trap 'rm -rf "$T"' EXIT
C=$ROOT/tests/package
step() { printf 'package: %s\n' "$*"; }

step "make install PREFIX=$T/prefix"
make --no-print-directory install PREFIX="$T/prefix" >"$T/install.log"
for f in include/gshard.h bin/gshard share/pkgconfig/gshard.pc share/cmake/gshard/gshardConfig.cmake \
         share/cmake/gshard/gshardConfigVersion.cmake; do
    [ -f "$T/prefix/$f" ] || { echo "package: $f was not installed" >&2; exit 1; }
done
"$T/prefix/bin/gshard" --version | grep -q "$(sed -n 's/^#define GS_VERSION_STRING "\(.*\)"/\1/p' gshard.h)"

step "pkg-config --cflags --libs gshard: build and run a consumer"
export PKG_CONFIG_PATH="$T/prefix/share/pkgconfig"
[ "$(pkg-config --modversion gshard)" = "$(sed -n 's/^#define GS_VERSION_STRING "\(.*\)"/\1/p' gshard.h)" ]
# shellcheck disable=SC2046
cc -std=c99 -O0 -Wall -Wextra -Werror "$C/consumer.c" -o "$T/pc_consumer" $(pkg-config --cflags --libs gshard)
"$T/pc_consumer"

step "find_package(gshard) of the make install"
cmake -S "$C" -B "$T/b_make" -DCMAKE_PREFIX_PATH="$T/prefix" >"$T/cmake1.log"
cmake --build "$T/b_make" >>"$T/cmake1.log"
"$T/b_make/consumer"

step "make uninstall removes every installed file"
make --no-print-directory uninstall PREFIX="$T/prefix" >/dev/null
left=$(find "$T/prefix" -type f | wc -l)
[ "$left" = 0 ] || { echo "package: make uninstall left $left files" >&2; find "$T/prefix" -type f >&2; exit 1; }

step "add_subdirectory(gshard) of the source tree"
cmake -S "$C" -B "$T/b_sub" -DGSHARD_SOURCE_DIR="$ROOT" >"$T/cmake2.log"
cmake --build "$T/b_sub" >>"$T/cmake2.log"
"$T/b_sub/consumer"

step "cmake --install of the source tree, then find_package(gshard)"
cmake -S "$ROOT" -B "$T/b_top" -DCMAKE_BUILD_TYPE=Release >"$T/cmake3.log"
cmake --build "$T/b_top" >>"$T/cmake3.log"
cmake --install "$T/b_top" --prefix "$T/cprefix" >>"$T/cmake3.log"
"$T/cprefix/bin/gshard" --version >/dev/null
cmake -S "$C" -B "$T/b_inst" -DCMAKE_PREFIX_PATH="$T/cprefix" >"$T/cmake4.log"
cmake --build "$T/b_inst" >>"$T/cmake4.log"
"$T/b_inst/consumer"
PKG_CONFIG_PATH="$T/cprefix/share/pkgconfig" pkg-config --cflags gshard | grep -q "$T/cprefix/share/pkgconfig/../../include"
step "ok"
