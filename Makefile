# gshard.h build.
#   make demo        the GShard MoE layer (examples/moe_layer.c): partitioned for 8 emulated devices, run with
#                    poisoned padding and checked against the reference interpreter
#   make demo-mlp    the MLP example: the CLI on examples/mlp.hlo, then examples/mlp.c
#   make test        compile tests + the test suite (the last line is "N passed, N failed")
#   make sanitize    the test suite (and the CLI it drives) under ASan + UBSan
#   make valgrind    the test suite (and the CLI it drives) under valgrind
#   make tsan        ThreadSanitizer over the runtime tests (every test whose name contains "runtime")
#   make fuzz        the differential fuzzer's long run: 100000 random partitioned programs checked against the
#                    reference interpreter (GST_FUZZ_COUNT=N, GST_FUZZ_SEED=S; see tests/test_spmd_fuzz.c)
#   make fuzz-window the windowed-op fuzzer's long run: 100000 cases of reduce-window, convolution, slice, pad,
#                    concatenate, reverse and reshape along split dims (GST_WFUZZ_COUNT=N, GST_WFUZZ_SEED=S,
#                    GST_WFUZZ_KINDS=list; see tests/test_spmd_window.c)
#   make examples    build and run every examples/*.c, one cc command each
#   make bench       benchmarks (-O3 -march=native); they never gate CI
# Variables: CC, CXX, CFLAGS (default -O2 -g), WERROR (default -Werror; `make WERROR=` to relax).
CC      ?= cc
CXX     ?= c++
CFLAGS  ?= -O2 -g
WERROR  ?= -Werror
WARN    := -std=c99 -Wall -Wextra -Wpedantic -Wshadow $(WERROR)
LDLIBS  := -lpthread -lm
BUILD   := build
SANFLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

SRC_FILES  := $(wildcard src/*.c src/*.h src/*.txt)
# tests/standalone/*.c have their own main (see `make test-gemm`)
TEST_SRCS  := $(wildcard tests/*.c)
TEST_OBJS  := $(patsubst tests/%.c,$(BUILD)/obj/%.o,$(TEST_SRCS))
EXAMPLES   := $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))
# bench/mpi_baseline.c needs mpicc: bench/run_mpi_baseline.sh builds and runs it
BENCHES    := $(patsubst bench/%.c,$(BUILD)/bench/%,$(filter-out bench/mpi_baseline.c,$(wildcard bench/*.c)))

# bench_dot compares against OpenBLAS when its header and library are installed (libopenblas-dev)
CBLAS_H    := $(firstword $(wildcard /usr/include/*/cblas.h /usr/include/cblas.h))
OPENBLAS   := $(firstword $(wildcard /usr/lib/*/libopenblas.so /usr/lib/libopenblas.so /usr/lib64/libopenblas.so))
CBLAS_FLAGS := $(if $(and $(CBLAS_H),$(OPENBLAS)),-DHAVE_CBLAS -lopenblas)

.PHONY: all test demo demo-mlp sanitize valgrind tsan fuzz fuzz-window bench examples compile-tests test-gemm clean amalgamate \
        check-amalgamation stbds check-src

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

# ---- the header ----
gshard.h: $(SRC_FILES) tools/amalgamate.py
	python3 tools/amalgamate.py

amalgamate: gshard.h

check-amalgamation:
	python3 tools/amalgamate.py --check

# every src/*.c compiles on its own (an editor's language server reads them one by one); a call with no prototype
# in sight is an error. Static functions declared in a private header and defined in another file draw "used but
# never defined" warnings here, so the compiler's output is shown only for a file that fails.
check-src: | stbds
	@fail=0; for f in src/*.c; do \
	  if out=$$($(CC) -fsyntax-only -std=c99 -Wall -Wextra -Werror=implicit-function-declaration -Werror=int-conversion \
	             $$f 2>&1); then echo "$$f: ok"; else echo "$$out" | grep -E 'error' >&2; echo "$$f: FAILED" >&2; fail=1; fi; \
	done; exit $$fail

# ---- the CLI and the test suite ----
$(BUILD)/gshard: gshard.h tools/gshard.c | stbds
	@mkdir -p $(BUILD)
	$(CC) $(WARN) $(CFLAGS) -o $@ tools/gshard.c $(LDLIBS)

$(BUILD)/obj/%.o: tests/%.c gshard.h tests/test.h | stbds
	@mkdir -p $(BUILD)/obj
	$(CC) $(WARN) $(CFLAGS) -c -o $@ $<

# the MoE tests build the layer with the examples' model builder
$(BUILD)/obj/test_moe.o $(BUILD)/asan/gshard_tests $(BUILD)/tsan/gshard_tests: examples/moe_model.h
# the two differential fuzzers share their generator helpers and runner
$(BUILD)/obj/test_spmd_fuzz.o $(BUILD)/obj/test_spmd_window.o $(BUILD)/asan/gshard_tests $(BUILD)/tsan/gshard_tests: \
    tests/fuzz_common.h
# the halo and gather cases share their case runner
$(BUILD)/obj/test_spmd_halo.o $(BUILD)/obj/test_spmd_gather.o $(BUILD)/asan/gshard_tests $(BUILD)/tsan/gshard_tests: \
    tests/spmd_case.h

$(BUILD)/gshard_tests: $(TEST_OBJS)
	$(CC) $(CFLAGS) -o $@ $(TEST_OBJS) $(LDLIBS)

compile-tests: gshard.h | stbds
	@bash tests/compile_tests.sh

# The compile tests run first so that the runner's "N passed, N failed" stays the last line.
test: $(BUILD)/gshard_tests $(BUILD)/gshard compile-tests
	./$(BUILD)/gshard_tests

# ---- sanitizers and valgrind (the suite runs the CLI it was built with: GST_GSHARD, GST_CLI_WRAPPER) ----
$(BUILD)/asan/gshard_tests: gshard.h $(TEST_SRCS) tests/test.h | stbds
	@mkdir -p $(BUILD)/asan
	$(CC) $(WARN) $(SANFLAGS) -o $@ $(TEST_SRCS) $(LDLIBS)

$(BUILD)/asan/gshard: gshard.h tools/gshard.c | stbds
	@mkdir -p $(BUILD)/asan
	$(CC) $(WARN) $(SANFLAGS) -o $@ tools/gshard.c $(LDLIBS)

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
	$(CC) $(WARN) $(TSANFLAGS) -o $@ $(TEST_SRCS) $(LDLIBS)

tsan: $(BUILD)/tsan/gshard_tests
	TSAN_OPTIONS="halt_on_error=1 exitcode=66" ./$(BUILD)/tsan/gshard_tests runtime

# ---- the differential fuzzer, long run (make test runs 2000 programs of it) ----
fuzz: $(BUILD)/gshard_tests
	GST_FUZZ_COUNT=$${GST_FUZZ_COUNT:-100000} ./$(BUILD)/gshard_tests spmd_fuzz

# ---- the windowed-op fuzzer, long run (make test runs 3000 cases of it) ----
fuzz-window: $(BUILD)/gshard_tests
	GST_WFUZZ_COUNT=$${GST_WFUZZ_COUNT:-100000} ./$(BUILD)/gshard_tests spmd_window_fuzz

# the standalone GEMM check (randomised shapes against a naive loop)
test-gemm: gshard.h | stbds
	@mkdir -p $(BUILD)
	$(CC) $(WARN) $(CFLAGS) -DTEST_USE_GSHARD_H -I. -o $(BUILD)/test_gemm tests/standalone/test_gemm.c $(LDLIBS)
	./$(BUILD)/test_gemm

# ---- examples, demo, benchmarks ----
$(BUILD)/examples/%: examples/%.c gshard.h | stbds
	@mkdir -p $(BUILD)/examples
	$(CC) -std=c99 -O2 -Wall -Wextra $(WERROR) -o $@ $< -lpthread -lm

$(BUILD)/examples/moe_layer: examples/moe_model.h

examples: $(EXAMPLES)
	@for e in $(EXAMPLES); do \
	  if ./$$e >/dev/null; then echo "$$e: ok"; else echo "$$e: FAILED" >&2; exit 1; fi; done

demo: gshard.h | stbds
	@mkdir -p $(BUILD)
	$(CC) -std=c99 -O2 examples/moe_layer.c -o $(BUILD)/moe_layer -lpthread -lm
	./$(BUILD)/moe_layer

demo-mlp: $(BUILD)/gshard | stbds
	./$(BUILD)/gshard eval examples/mlp.hlo --seed 1
	$(CC) -std=c99 -O2 examples/mlp.c -o $(BUILD)/mlp -lpthread -lm
	./$(BUILD)/mlp

$(BUILD)/bench/%: bench/%.c gshard.h | stbds
	@mkdir -p $(BUILD)/bench
	$(CC) -std=c99 -O3 -march=native -I. -o $@ $< $(if $(filter bench_dot,$*),$(CBLAS_FLAGS)) $(LDLIBS)

$(BUILD)/bench/bench_partition: examples/moe_model.h

bench: $(BENCHES)
	@for b in $(BENCHES); do echo "== $$b"; ./$$b || exit 1; done

clean:
	rm -rf $(BUILD)
