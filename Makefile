# gshard.h build.
#   make demo        the GShard MoE layer (examples/moe_layer.c): partitioned for 8 emulated devices, run with
#                    poisoned padding and checked against the reference interpreter
#   make demo-mlp    the MLP example: the CLI on examples/mlp.hlo, then examples/mlp.c
#   make test        compile tests, the GEMM check on every instruction-set path, the test suite (the last
#                    line is "N passed, N failed")
#   make mpi         build/gshard-mpi: the CLI with the runtime's devices on MPI ranks (needs mpicc)
#   make test-mpi    gshard-mpi on 2 and 4 ranks against the thread runtime, and its failure modes (mpirun)
#   make sanitize    the test suite (and the CLI it drives) under ASan + UBSan
#   make valgrind    the test suite (and the CLI it drives) under valgrind
#   make tsan        ThreadSanitizer over the runtime tests (every test whose name contains "runtime")
#   make fault       the allocation-failure sweep (tests/test_fault.c): every k of the MoE layer at D=8 and of
#                    tests/data/fault_mix.hlo, failing once and from k on, lockstep and one worker, plus random k
#                    over several workers, under ASan + UBSan + LSan; prints one table row per pipeline
#   make fuzz        the differential fuzzer's long run: 100000 random partitioned programs checked against the
#                    reference interpreter (GST_FUZZ_COUNT=N, GST_FUZZ_SEED=S; see tests/test_spmd_fuzz.c)
#   make fuzz-window the windowed-op fuzzer's long run: 100000 cases of reduce-window, convolution, slice, pad,
#                    concatenate, reverse and reshape along split dims (GST_WFUZZ_COUNT=N, GST_WFUZZ_SEED=S,
#                    GST_WFUZZ_KINDS=list; see tests/test_spmd_window.c)
#   make fuzz-libfuzzer  the libFuzzer targets in tests/fuzz/ (HLO pipeline, sharding and PartitionSpec text,
#                    .npy reading, cost API), each for FUZZ_SECONDS (default 60) with clang, ASan and UBSan; the
#                    corpora grow in build/fuzz/corpus/<target>, seeded by tests/fuzz/make_seeds.py
#   make exercises   the course (exercises/): every reference solution passes `gshard exercise check` (exit 0),
#                    every starting file and every solution stripped of its shardings fails it (exit 1)
#   make examples    build and run every examples/*.c (each linked with the implementation compiled once)
#   make bench       benchmarks (-O3 -march=native); they never gate CI
#   make doctest     run the ```sh blocks of README.md and docs/*.md as written; check every relative link
#   make install     PREFIX=/usr/local: gshard.h, the CLI, the pkg-config module gshard and the CMake config of
#                    gshard::gshard (see CMakeLists.txt); make uninstall removes them
#   make warnings    the implementation at -O0..-O3, -Os and -O3 -DNDEBUG with gcc and clang (C99), -O3 as
#                    C++11/17, all with -Wall -Wextra -Wpedantic -Wshadow -Werror
# Variables: CC, CXX, CFLAGS (default -O2 -g), WERROR (default -Werror; `make WERROR=` to relax).
CC      ?= cc
CXX     ?= c++
CFLAGS  ?= -O2 -g
WERROR  ?= -Werror
WARN    := -std=c99 -Wall -Wextra -Wpedantic -Wshadow $(WERROR)
LDLIBS  := -lpthread -lm
BUILD   := build
SANFLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

# tests/standalone/*.c have their own main (see `make test-gemm`)
TEST_SRCS  := $(wildcard tests/*.c)
TEST_OBJS  := $(patsubst tests/%.c,$(BUILD)/obj/%.o,$(TEST_SRCS))
EXAMPLES   := $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))
# bench/mpi_baseline.c and bench/bench_mpi.c need mpicc: bench/run_mpi_baseline.sh and bench/run_bench_mpi.sh build and run them
# bench/dot_native.c is linked into bench_dot
BENCHES    := $(patsubst bench/%.c,$(BUILD)/bench/%,$(filter-out bench/mpi_baseline.c bench/bench_mpi.c bench/dot_native.c,$(wildcard bench/*.c)))

# bench_dot compares against OpenBLAS when its header and library are installed (libopenblas-dev)
CBLAS_H    := $(firstword $(wildcard /usr/include/*/cblas.h /usr/include/cblas.h))
OPENBLAS   := $(firstword $(wildcard /usr/lib/*/libopenblas.so /usr/lib/libopenblas.so /usr/lib64/libopenblas.so))
CBLAS_FLAGS := $(if $(and $(CBLAS_H),$(OPENBLAS)),-DHAVE_CBLAS -lopenblas)

.PHONY: all test demo demo-mlp sanitize valgrind tsan fault fuzz fuzz-window fuzz-libfuzzer bench examples compile-tests \
        test-gemm test-simd exercises mpi test-mpi clean amalgamate check-amalgamation stbds check-src install uninstall doctest warnings FORCE

all: $(BUILD)/gshard $(BUILD)/gshard_tests

# ---- stb_ds.h must be findable (the Debian package, a copy next to gshard.h, or the compiler's path) ----
STBDS_HINT := gshard.h needs stb_ds.h. Install it with:  sudo apt-get install libstb-dev \
              (or copy stb_ds.h from https://github.com/nothings/stb next to gshard.h)
stbds:
	@if [ -f /usr/include/stb/stb_ds.h ] || [ -f /usr/include/stb_ds.h ] || [ -f stb_ds.h ] || \
	    printf '#include <stb_ds.h>\n' | $(CC) -E -x c - >/dev/null 2>&1; then exit 0; fi; \
	SUDO=none; \
	if command -v apt-get >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; \
	  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; fi; \
	fi; \
	if [ "$$SUDO" != none ]; then \
	  echo "stb_ds.h not found: running $${SUDO:+$$SUDO }apt-get install -y libstb-dev"; \
	  $$SUDO apt-get install -y libstb-dev || { $$SUDO apt-get update && $$SUDO apt-get install -y libstb-dev; }; \
	  if [ -f /usr/include/stb/stb_ds.h ]; then exit 0; fi; \
	fi; \
	echo "$(STBDS_HINT)" >&2; exit 1

# ---- the header: regenerated only when src/ or the amalgamator really changed ----
# gshard.h records the sha256 of what it was generated from (its line "gshard-src-sha256: HEX", the hash of
# `sha256sum src/* tools/amalgamate.py`). make compares that with coreutils, not timestamps, so a fresh clone
# (whose checkout leaves src/ newer than gshard.h) needs only a C compiler and make; python3 is needed only
# after src/ changed.
SHA256     := $(shell command -v sha256sum >/dev/null 2>&1 && echo sha256sum || echo 'shasum -a 256')
HDR_INPUTS := $(sort $(wildcard src/*)) tools/amalgamate.py
SRC_SHA    := $(shell $(SHA256) $(HDR_INPUTS) | $(SHA256) | cut -c1-64)
HDR_SHA    := $(shell sed -n 's/^ *gshard-src-sha256: \([0-9a-f]*\).*/\1/p' gshard.h 2>/dev/null | head -n 1)
ifneq ($(SRC_SHA),$(HDR_SHA))
gshard.h: FORCE
	@command -v python3 >/dev/null 2>&1 || { echo "src/ changed since gshard.h was generated: python3 is needed to regenerate it (python3 tools/amalgamate.py)" >&2; exit 1; }
	python3 tools/amalgamate.py
endif
FORCE:

amalgamate: gshard.h

check-amalgamation:
	python3 tools/amalgamate.py --check

# every src/*.c compiles on its own (an editor's language server reads them one by one), warning-free: each sees
# what the other files define through src/gs_internal.h and src/gs_spmd_internal.h
check-src: | stbds
	@fail=0; for f in src/*.c; do \
	  if $(CC) -fsyntax-only $(WARN) $$f; then echo "$$f: ok"; else echo "$$f: FAILED" >&2; fail=1; fi; \
	done; exit $$fail

# ---- the implementation, compiled once (gshard_impl.c) and linked into the CLI, tests, examples and benches;
#      their own `#define GSHARD_IMPLEMENTATION` is switched off by -DGSHARD_EXTERNAL_IMPL ----
EXT_IMPL := -DGSHARD_EXTERNAL_IMPL
IMPL_OBJ := $(BUILD)/obj/gshard_impl.o
$(IMPL_OBJ): gshard_impl.c gshard.h | stbds
	@mkdir -p $(BUILD)/obj
	$(CC) $(WARN) $(CFLAGS) -c -o $@ gshard_impl.c

# ---- the CLI and the test suite ----
# the CLI knows where the course is (gshard exercise check finds an exercise from any directory)
EX_DIR := -DGSHARD_EXERCISES_DIR='"$(CURDIR)/exercises"'
$(BUILD)/gshard: tools/gshard.c tools/gshard_exercise.c gshard.h $(IMPL_OBJ) | stbds
	@mkdir -p $(BUILD)
	$(CC) $(WARN) $(CFLAGS) $(EXT_IMPL) $(EX_DIR) -o $@ tools/gshard.c $(IMPL_OBJ) $(LDLIBS)

$(BUILD)/obj/%.o: tests/%.c gshard.h tests/test.h | stbds
	@mkdir -p $(BUILD)/obj
	$(CC) $(WARN) $(CFLAGS) -c -o $@ $<

# the MoE tests build the layer with the examples' model builder
$(BUILD)/obj/test_moe.o $(BUILD)/asan/gshard_tests $(BUILD)/tsan/gshard_tests: examples/moe_model.h
# the two differential fuzzers share their generator helpers and runner
$(BUILD)/obj/test_spmd_fuzz.o $(BUILD)/obj/test_spmd_window.o $(BUILD)/asan/gshard_tests $(BUILD)/tsan/gshard_tests: \
    tests/fuzz_common.h
# the halo and gather cases share their case runner
$(BUILD)/obj/test_spmd_halo.o $(BUILD)/obj/test_spmd_gather.o $(BUILD)/obj/test_spmd_xla.o $(BUILD)/obj/test_spmd_reshape.o $(BUILD)/obj/test_spmd_conv.o $(BUILD)/asan/gshard_tests $(BUILD)/tsan/gshard_tests: \
    tests/spmd_case.h

$(BUILD)/gshard_tests: $(TEST_OBJS) $(IMPL_OBJ)
	$(CC) $(CFLAGS) -o $@ $(TEST_OBJS) $(IMPL_OBJ) $(LDLIBS)

# The compile tests (every compiler and standard, the stb_ds scenarios) and the README's C example rerun only
# when what they compile changed: stamps record the last pass.
COMPILE_STAMP := $(BUILD)/compile_tests.ok
$(COMPILE_STAMP): gshard.h tests/compile_tests.sh $(wildcard tests/compile/*) | stbds
	@mkdir -p $(BUILD)
	@bash tests/compile_tests.sh
	@touch $@

README_STAMP := $(BUILD)/readme_example.ok
$(README_STAMP): README.md gshard.h tests/readme_example.sh | stbds
	@mkdir -p $(BUILD)
	@bash tests/readme_example.sh
	@touch $@

compile-tests: $(COMPILE_STAMP) $(README_STAMP)

# The course: rerun by make test when the CLI or an exercise changed (make exercises always runs it).
EXERCISES_STAMP := $(BUILD)/exercises.ok
$(EXERCISES_STAMP): $(BUILD)/gshard tests/exercises.sh $(wildcard exercises/*.hlo exercises/solutions/*.hlo)
	@bash tests/exercises.sh $(BUILD)/gshard
	@touch $@

exercises: $(BUILD)/gshard
	@bash tests/exercises.sh $(BUILD)/gshard

# The compile tests run first so that the runner's "N passed, N failed" stays the last line.
test: $(BUILD)/gshard_tests $(BUILD)/gshard $(COMPILE_STAMP) $(README_STAMP) $(BUILD)/test_gemm.stamp $(BUILD)/test_simd.stamp \
      $(EXERCISES_STAMP)
	./$(BUILD)/gshard_tests

# ---- sanitizers and valgrind (the suite runs the CLI it was built with: GST_GSHARD, GST_CLI_WRAPPER) ----
$(BUILD)/asan/gshard_tests: gshard.h $(TEST_SRCS) tests/test.h | stbds
	@mkdir -p $(BUILD)/asan
	$(CC) $(WARN) $(SANFLAGS) -o $@ $(TEST_SRCS) gshard_impl.c $(LDLIBS)

$(BUILD)/asan/gshard: gshard.h tools/gshard.c tools/gshard_exercise.c | stbds
	@mkdir -p $(BUILD)/asan
	$(CC) $(WARN) $(SANFLAGS) $(EX_DIR) -o $@ tools/gshard.c $(LDLIBS)

sanitize: $(BUILD)/asan/gshard_tests $(BUILD)/asan/gshard
	GST_GSHARD=$(BUILD)/asan/gshard UBSAN_OPTIONS=print_stacktrace=1 ./$(BUILD)/asan/gshard_tests

# --max-threads: the runtime tests start 512 device threads; --fair-sched: valgrind's default lock lets a busy
# thread starve a waiting one for seconds (the runtime's watchdog test would notice)
VALGRIND := valgrind -q --max-threads=1100 --fair-sched=yes --leak-check=full --show-leak-kinds=definite,indirect,possible \
            --errors-for-leak-kinds=definite,indirect,possible --error-exitcode=3
valgrind: $(BUILD)/gshard_tests $(BUILD)/gshard
	@command -v valgrind >/dev/null 2>&1 || { echo "make valgrind needs valgrind: sudo apt-get install valgrind" >&2; exit 1; }
	GST_CLI_WRAPPER="$(VALGRIND)" $(VALGRIND) ./$(BUILD)/gshard_tests

# ---- ThreadSanitizer: the runtime's threads, barriers and collectives ----
TSANFLAGS := -O1 -g -fsanitize=thread -fno-omit-frame-pointer
$(BUILD)/tsan/gshard_tests: gshard.h $(TEST_SRCS) tests/test.h | stbds
	@mkdir -p $(BUILD)/tsan
	$(CC) $(WARN) $(TSANFLAGS) -o $@ $(TEST_SRCS) gshard_impl.c $(LDLIBS)

tsan: $(BUILD)/tsan/gshard_tests
	TSAN_OPTIONS="halt_on_error=1 exitcode=66" ./$(BUILD)/tsan/gshard_tests runtime

# ---- allocation failure: every k of the fault pipelines (make test runs every 29th), under ASan + UBSan + LSan ----
fault: $(BUILD)/asan/gshard_tests
	GST_FAULT_FULL=1 UBSAN_OPTIONS=print_stacktrace=1 ./$(BUILD)/asan/gshard_tests fault

# ---- the differential fuzzer, long run (make test runs 2000 programs of it) ----
fuzz: $(BUILD)/gshard_tests
	GST_FUZZ_COUNT=$${GST_FUZZ_COUNT:-100000} ./$(BUILD)/gshard_tests spmd_fuzz

# ---- the windowed-op fuzzer, long run (make test runs 3000 cases of it) ----
fuzz-window: $(BUILD)/gshard_tests
	GST_WFUZZ_COUNT=$${GST_WFUZZ_COUNT:-100000} ./$(BUILD)/gshard_tests spmd_window_fuzz

# ---- libFuzzer targets (clang's -fsanitize=fuzzer); a crash stops the run and leaves build/fuzz/crash-* ----
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := hlo sharding npy cost
FUZZFLAGS    := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c gshard.h | stbds
	@mkdir -p $(BUILD)/fuzz
	$(FUZZ_CC) -std=c99 -Wall -Wextra $(WERROR) $(FUZZFLAGS) -o $@ $< $(LDLIBS)

fuzz-libfuzzer: $(patsubst %,$(BUILD)/fuzz/fuzz_%,$(FUZZ_TARGETS))
	python3 tests/fuzz/make_seeds.py $(BUILD)/fuzz/seeds
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(BUILD)/fuzz/corpus/$$t; echo "== fuzz_$$t for $(FUZZ_SECONDS) s"; \
	  $(BUILD)/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
	    -artifact_prefix=$(BUILD)/fuzz/ $(BUILD)/fuzz/corpus/$$t $(BUILD)/fuzz/seeds/$$t || exit 1; done

# the standalone GEMM check (randomised shapes against a naive loop)
# the GEMM kernel's own randomised check, on every instruction-set path the machine has; `make test` reruns it only
# when the binary changed (a stamp), `make test-gemm` always
$(BUILD)/test_gemm: tests/standalone/test_gemm.c gshard.h | stbds
	@mkdir -p $(BUILD)
	$(CC) $(WARN) $(CFLAGS) -DTEST_USE_GSHARD_H -I. -o $@ tests/standalone/test_gemm.c $(LDLIBS)

GEMM_RUNS = ./$(BUILD)/test_gemm && GSHARD_ISA=sse2 ./$(BUILD)/test_gemm 20 && \
            GSHARD_ISA=no-such-isa ./$(BUILD)/test_gemm 20

$(BUILD)/test_gemm.stamp: $(BUILD)/test_gemm
	$(GEMM_RUNS)
	@touch $@

test-gemm: $(BUILD)/test_gemm
	$(GEMM_RUNS)

test-simd: $(BUILD)/test_simd
	./$(BUILD)/test_simd

# the vector kernels (src/gs_simd.c): every path this machine runs against the scalar path, bit for bit
$(BUILD)/test_simd: tests/standalone/test_simd.c gshard.h | stbds
	@mkdir -p $(BUILD)
	$(CC) $(WARN) $(CFLAGS) -DTEST_USE_GSHARD_H -I. -o $@ tests/standalone/test_simd.c $(LDLIBS)

$(BUILD)/test_simd.stamp: $(BUILD)/test_simd
	./$(BUILD)/test_simd
	@touch $@

# ---- the devices on MPI ranks: build/gshard-mpi (mpicc, -DGSHARD_MPI) and its tests (docs/distributed.md) ----
MPICC ?= mpicc
MPI_HINT := needs mpicc: install Open MPI (Debian: apt-get install openmpi-bin libopenmpi-dev) or set MPICC
$(BUILD)/gshard-mpi: tools/gshard.c gshard.h | stbds
	@command -v $(MPICC) >/dev/null 2>&1 || { echo "make mpi: $(MPI_HINT)" >&2; exit 2; }
	@mkdir -p $(BUILD)
	$(MPICC) $(WARN) $(CFLAGS) -DGSHARD_MPI -o $@ tools/gshard.c $(LDLIBS)

mpi: $(BUILD)/gshard-mpi

test-mpi: $(BUILD)/gshard-mpi $(BUILD)/gshard $(BUILD)/gshard_tests
	@command -v mpirun >/dev/null 2>&1 || { echo "make test-mpi: no mpirun: install Open MPI (openmpi-bin)" >&2; exit 2; }
	bash tests/mpi/run.sh

# ---- examples, demo, benchmarks ----
$(BUILD)/examples/%: examples/%.c gshard.h $(IMPL_OBJ) | stbds
	@mkdir -p $(BUILD)/examples
	$(CC) -std=c99 -O2 -Wall -Wextra $(WERROR) $(EXT_IMPL) -o $@ $< $(IMPL_OBJ) -lpthread -lm

$(BUILD)/examples/moe_layer: examples/moe_model.h

examples: $(EXAMPLES)
	@for e in $(EXAMPLES); do \
	  if ./$$e >/dev/null; then echo "$$e: ok"; else echo "$$e: FAILED" >&2; exit 1; fi; done

demo: $(BUILD)/examples/moe_layer
	./$(BUILD)/examples/moe_layer

demo-mlp: $(BUILD)/gshard $(BUILD)/examples/mlp
	./$(BUILD)/gshard eval examples/mlp.hlo --seed 1
	./$(BUILD)/examples/mlp

BENCH_FLAGS := -std=c99 -O3 -march=native
$(BUILD)/bench/gshard_impl.o: gshard_impl.c gshard.h | stbds
	@mkdir -p $(BUILD)/bench
	$(CC) $(BENCH_FLAGS) -c -o $@ gshard_impl.c

$(BUILD)/bench/%: bench/%.c gshard.h $(BUILD)/bench/gshard_impl.o | stbds
	@mkdir -p $(BUILD)/bench
	$(CC) $(BENCH_FLAGS) $(EXT_IMPL) -I. -o $@ $< $(BUILD)/bench/gshard_impl.o $(if $(filter bench_dot,$*),$(CBLAS_FLAGS)) $(LDLIBS)

$(BUILD)/bench/bench_partition: examples/moe_model.h
$(BUILD)/bench/bench_shapes: examples/moe_model.h

# bench_dot: plain -O2 (the kernel picks its instruction set at run time) linked with the same kernel built
# -O3 -march=native (bench/dot_native.c), so one run prints the ratio of the two
GEMM_SRC := src/gs_gemm.c src/gs_gemm_kernel.inc src/gs_isa.h src/gs_simd.c src/gs_simd_kernel.inc
$(BUILD)/bench/dot_native.o: bench/dot_native.c bench/dot_native.h $(GEMM_SRC)
	@mkdir -p $(BUILD)/bench
	$(CC) $(BENCH_FLAGS) -c -o $@ bench/dot_native.c

$(BUILD)/bench/bench_dot: bench/bench_dot.c bench/dot_native.h $(GEMM_SRC) $(BUILD)/bench/dot_native.o
	@mkdir -p $(BUILD)/bench
	$(CC) -std=c99 -O2 -DBENCH_NATIVE -I. -o $@ bench/bench_dot.c $(BUILD)/bench/dot_native.o $(CBLAS_FLAGS) $(LDLIBS)

bench: $(BENCHES)
	@for b in $(BENCHES); do echo "== $$b"; ./$$b || exit 1; done

# ---- the documentation's commands run as written (not part of `make test`: it runs make demo and make test) ----
doctest:
	@bash tests/doctest.sh

# ---- every optimisation level users build at, gcc and clang, C and C++, warnings as errors ----
WARN_CCS := $(foreach c,gcc clang,$(if $(shell command -v $(c) 2>/dev/null),$(c)))
WARN_CXXS := $(foreach c,g++ clang++,$(if $(shell command -v $(c) 2>/dev/null),$(c)))
# (a comma separates the flags of one level: release builds also define NDEBUG, which turns assert off)
WARN_LEVELS := -O0 -O1 -O2 -O3 -Os -O3,-DNDEBUG
warnings: gshard.h | stbds
	@mkdir -p $(BUILD)/warnings
	@set -e; for c in $(WARN_CCS); do for o in $(WARN_LEVELS); do o=$$(echo $$o | tr , ' '); \
	  echo "$$c -std=c99 $$o"; $$c -std=c99 $$o -Wall -Wextra -Wpedantic -Wshadow -Werror -c gshard_impl.c -o $(BUILD)/warnings/o.o; done; done; \
	for c in $(WARN_CXXS); do for s in c++11 c++17; do \
	  echo "$$c -std=$$s -O3"; $$c -std=$$s -O3 -x c++ -Wall -Wextra -Wpedantic -Wshadow -Werror -c gshard_impl.c -o $(BUILD)/warnings/o.o; done; done

# ---- install: the header, the CLI, the pkg-config module gshard and the CMake config of gshard::gshard ----
#   make install PREFIX=/opt/gshard [DESTDIR=...];  make uninstall PREFIX=/opt/gshard removes the same files
PREFIX  ?= /usr/local
VERSION := $(shell sed -n 's/^\#define GS_VERSION_STRING "\(.*\)"/\1/p' gshard.h)
INSTALLED := include/gshard.h bin/gshard share/pkgconfig/gshard.pc share/cmake/gshard/gshardConfig.cmake \
             share/cmake/gshard/gshardConfigVersion.cmake
install: $(BUILD)/gshard
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/pkgconfig \
	    $(DESTDIR)$(PREFIX)/share/cmake/gshard
	install -m 644 gshard.h $(DESTDIR)$(PREFIX)/include/gshard.h
	install -m 755 $(BUILD)/gshard $(DESTDIR)$(PREFIX)/bin/gshard
	sed 's/@GSHARD_VERSION@/$(VERSION)/' cmake/gshard.pc.in > $(DESTDIR)$(PREFIX)/share/pkgconfig/gshard.pc
	install -m 644 cmake/gshardConfig.cmake $(DESTDIR)$(PREFIX)/share/cmake/gshard/gshardConfig.cmake
	sed 's/@GSHARD_VERSION@/$(VERSION)/' cmake/gshardConfigVersion.cmake.in \
	    > $(DESTDIR)$(PREFIX)/share/cmake/gshard/gshardConfigVersion.cmake
	install -d $(DESTDIR)$(PREFIX)/share/gshard/exercises
	install -m 644 exercises/README.md $(wildcard exercises/*.hlo) $(DESTDIR)$(PREFIX)/share/gshard/exercises/

uninstall:
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/,$(INSTALLED))
	-rmdir $(DESTDIR)$(PREFIX)/share/cmake/gshard 2>/dev/null
	rm -f $(DESTDIR)$(PREFIX)/share/gshard/exercises/README.md $(addprefix $(DESTDIR)$(PREFIX)/share/gshard/,$(wildcard exercises/*.hlo))
	-rmdir $(DESTDIR)$(PREFIX)/share/gshard/exercises $(DESTDIR)$(PREFIX)/share/gshard 2>/dev/null

clean:
	rm -rf $(BUILD)
