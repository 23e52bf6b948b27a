# GPU memory lessons - build, run, test, benchmark, plot.
#
#   make              build every lesson into build/ (CUDA versions too when nvcc is found); installs OpenBLAS and
#                     oneDNN if missing (apt, as root) or prints the command
#   make lesson-N     build and run lesson N at its default size
#   make test         install Check if missing (apt, as root), build and run every test suite
#   make bench        every lesson's sweeps (plots/sweeps.txt) -> docs/results/<machine>/lessonN.csv; bench-N: one
#   make plots        draw docs/img/*.png and the results tables from those CSVs (installs matplotlib if missing)
#   make docs         re-run the lessons and paste their output into docs/lesson-N.md
#   make debug        -O0 -g3 build for gdb (same as DEBUG=1); make gdb-build: the lessons alone, CPU only, into
#                     build/debug (seconds, no nvcc -G): what the docs' gdb walks use
#   make CUDA=0       force the CPU-only build        make SANITIZE=1   AddressSanitizer + UBSan (CPU build)
#   make WERROR=1     warnings are errors (CI)       make clean
#   make test-emu     the CUDA code run on the CPU emulator (tests/cuda_emu/, test-only; EMU=1 builds into build/emu/)
#   make dry-run      the emulator's dry run: every lesson's CUDA versions at the forum size and the CLI's largest
#   make ptxas        nvcc -Xptxas -v into build/ptxas.txt (EMU_PTXAS=build/ptxas.txt: register limits, occupancy)
#
# Adding a lesson is one line in the "lessons" section: $(eval $(call LESSON,N,<.c>,<.cu>,<extra test .c>)).

comma := ,

# ---- toolchain -------------------------------------------------------------------------------------------
CC       := gcc
NVCC     ?= $(shell command -v nvcc 2>/dev/null || { test -x /usr/local/cuda/bin/nvcc && echo /usr/local/cuda/bin/nvcc; })
CUDA     ?= $(if $(NVCC),1,0)
DEBUG    ?= 0
SANITIZE ?= 0
WERROR   ?= 0
PYTHON   ?= python3
BENCH_DIR ?=
BIN      ?= build
EMU      ?= 0

# [emu hook] EMU=1: the CUDA sources compiled by g++ against tests/cuda_emu's shims (tests/cuda_emu/emu.mk)
ifeq ($(SANITIZE)$(EMU),10)
CUDA := 0
endif
ifeq ($(EMU),1)
CUDA := 1
BIN  := build/emu$(if $(filter 1,$(EMU_FMA)),-fma,)$(if $(filter 1,$(EMU_COUNT)),-count,)$(if $(filter 1,$(SANITIZE)),-san,)
endif
# TOY_LESSON=1: the test build of `make test-toy-lesson` (a sixth lesson from tests/toy_lesson.c), CPU only
ifeq ($(TOY_LESSON),1)
CUDA := 0
BIN  := build/toy
endif

# BUNDLE=1: the binaries `make gpu-bundle` packs (tests/gpu/make_bundle.sh): Check linked statically, the shared
# libraries looked up beside them first ($ORIGIN/../lib, RPATH so it holds for the libraries' own needs too)
ifeq ($(BUNDLE),1)
BIN := build/bundle-$(if $(filter 1,$(EMU)),emu,native)
STATIC_CHECK := 1
LDFLAGS += -Wl,--disable-new-dtags -Wl,-rpath,'$$ORIGIN/../lib'
endif

MODE     := $(if $(filter 1,$(DEBUG)),debug,release)$(if $(filter 1,$(SANITIZE)),-san,)$(if $(filter 1,$(CUDA)),-cuda,)$(if $(filter 1,$(EMU)),-emu,)$(if $(filter 1,$(EMU_FMA)),-fma,)$(if $(filter 1,$(EMU_COUNT)),-count,)$(if $(filter 1,$(TOY_LESSON)),-toy,)
OBJ      := build/obj/$(MODE)
# [emu hook] EMU_FMA=1 and EMU_COUNT=1 change the flags of the .cu objects only: every other object is the plain
# emulation build's
CU_OBJ   := $(OBJ)
ifeq ($(EMU),1)
OBJ      := build/obj/$(subst -count,,$(subst -fma,,$(MODE)))
endif
OPT      := $(if $(filter 1,$(DEBUG)),-O0 -g3,-O2 -g)
WARN     := -Wall -Wextra -Wshadow -Wformat=2 -Wmissing-prototypes -Wpedantic -Werror=implicit-function-declaration $(if $(filter 1,$(WERROR)),-Werror,)
# the runner (lessons/runner) and the host-only runtime (lessons/host) by bare name, from any folder
HOST_INC := -Ilessons/runner -Ilessons/host
CFLAGS   := -std=c11 $(OPT) $(WARN) -MMD -MP $(HOST_INC)
# the CPU GEMM providers (lessons/host/gemm_cpu.c): OpenBLAS, and oneDNN with its OpenMP runtime
LDLIBS   := -lopenblas -ldnnl -lgomp -lm
ifeq ($(SANITIZE),1)
CFLAGS   += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS  += -fsanitize=address,undefined
endif

ifeq ($(CUDA)$(EMU),10) # [emu hook] nvcc only outside the emulation build
CUDA_HOME := $(patsubst %/bin/nvcc,%,$(NVCC))
CFLAGS    += -DHAVE_CUDA -I$(CUDA_HOME)/include
# sm_80 (A100) and sm_90 (H100/H200) as machine code, plus compute_90 PTX so newer GPUs can JIT it. A file that
# includes hopper_ptx.h gets sm_90a in place of sm_90: its wrappers are instructions there and trap elsewhere, and
# with no plain sm_90 code beside it a 9.0 GPU can only load the sm_90a code (the launchers run it on 9.0 only).
# -Ikernels/runtime/ptx: <mma_ptx.h> (the emulation build finds its own first, tests/cuda_emu/include)
NVCC_ARCH        := -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
                    -gencode arch=compute_90,code=compute_90
NVCC_ARCH_HOPPER := -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90a,code=sm_90a \
                    -gencode arch=compute_90,code=compute_90
HOPPER_CU        := $(shell grep -l '<hopper_ptx.h>' kernels/*.cu 2>/dev/null)
NVCCFLAGS := -std=c++17 $(if $(filter 1,$(DEBUG)),-O0 -g -G,-O2 -g -lineinfo) -DHAVE_CUDA -Ikernels/runtime/ptx $(HOST_INC) \
             -Xcompiler -Wall,-Wextra,-Wshadow$(if $(filter 1,$(WERROR)),$(comma)-Werror,) \
             $(if $(filter 1,$(WERROR)),-Werror all-warnings,) -MMD -MP
LDLIBS    += -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcublas -lcudart_static -ldl -lrt -lpthread -lstdc++
endif

# ---- the runtime and the generic lesson program ----------------------------------------------------------
RUNTIME_C  := kernels/runtime/dtype.c $(addprefix lessons/host/,track.c arena.c rng.c timer.c compare.c gemm_cpu.c \
              gemm_matmul.c gemm_record.c)
RUNTIME_CU := kernels/runtime/cuda_track.cu kernels/runtime/cuda_fit.cu
SESSION_C  := $(addprefix lessons/runner/,lesson.c cli.c report.c npy.c impl_gate.c tensor_copy.c session.c \
              lesson_main.c lesson_output.c snapshot.c run_estimate.c snapshot_allocator.c time_spread.c device_hooks.c \
              output_file.c)

objs = $(patsubst %.c,$(OBJ)/%.o,$(filter %.c,$(1))) \
       $(if $(filter 1,$(CUDA)),$(patsubst %.cu,$(CU_OBJ)/%.cu.o,$(filter %.cu,$(1))))

RUNTIME_OBJ := $(call objs,$(RUNTIME_C) $(RUNTIME_CU))
SESSION_OBJ := $(call objs,$(SESSION_C))

# ---- Check (tests) ---------------------------------------------------------------------------------------
# STATIC_CHECK=1 links Check and subunit statically, for test binaries carried to a machine without them.
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
ifeq ($(STATIC_CHECK),1)
CHECK_LIBS := -Wl,-Bstatic -lcheck -lsubunit -Wl,-Bdynamic -lrt -lm -pthread
else
CHECK_LIBS := $(or $(shell pkg-config --libs check 2>/dev/null),-lcheck -lsubunit -lrt -lm -pthread)
endif
TEST_LIB_OBJ := $(call objs,tests/cli_harness.c tests/lesson_testing.c tests/gradcheck.c tests/nan_testing.c tests/nan_rules.c)

include tests/cuda_emu/emu.mk # [emu hook] EMU=1 flags, the g++ rule for .cu, test_emu, test-emu

# ---- lessons ---------------------------------------------------------------------------------------------
# $(call LESSON,N,C sources,CUDA sources,extra test C sources[,definition]): lessons/lessonN.c (or the fifth
# argument) holds the definition (lessonN_def); build/lessonN is lessons/runner/lesson_program.c over it;
# tests/test_lessonN.c (when present) is its own suite and tests/cuda_lessonN.c (when present) joins
# build/test_cuda. These lines are the one list of lessons: LESSON_NS, and from it the generated
# $(LESSON_LIST_H) (X(1) X(2) ...) that tests/test_lessons.c and tests/test_cuda.c expand, the docs target and
# plots/bench.sh (BENCH_LESSONS) read them.
LESSON_NS :=
LESSON_DEF_OBJ :=
LESSON_CUDA_TEST_OBJ :=
define LESSON
LESSON_NS += $(1)
L$(1)_OBJ := $$(call objs,$(or $(5),lessons/lesson$(1).c) $(2) $(3))
LESSON_DEF_OBJ += $$(L$(1)_OBJ)
LESSON_CUDA_TEST_OBJ += $$(if $$(wildcard tests/cuda_lesson$(1).c),$$(OBJ)/tests/cuda_lesson$(1).o)
$(BIN)/lesson$(1): $$(OBJ)/lessons/runner/lesson_program_$(1).o $$(L$(1)_OBJ) $$(SESSION_OBJ) $$(RUNTIME_OBJ) $(BIN)/.mode-$$(MODE)
	$$(CC) $$(LDFLAGS) -o $$@ $$(filter %.o,$$^) $$(LDLIBS)
$$(OBJ)/lessons/runner/lesson_program_$(1).o: lessons/runner/lesson_program.c
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS) -DLESSON_DEF=lesson$(1)_def -c -o $$@ $$<
$(BIN)/test_lesson$(1): $$(OBJ)/tests/test_lesson$(1).o $$(call objs,$(4)) $$(TEST_LIB_OBJ) $$(L$(1)_OBJ) $$(SESSION_OBJ) $$(RUNTIME_OBJ) $(BIN)/.mode-$$(MODE)
	$$(CC) $$(LDFLAGS) -o $$@ $$(filter %.o,$$^) $$(CHECK_LIBS) $$(LDLIBS)
TEST_EXTRA_OBJ += $$(call objs,$(4))
lesson-$(1): # the build quiet (make -s), so that the run's first screen is the lesson's
	@echo "make lesson-$(1): building (make -s all), then ./$(BIN)/lesson$(1)"
	@$$(MAKE) -s --no-print-directory all
	./$(BIN)/lesson$(1)
.PHONY: lesson-$(1)
endef

$(eval $(call LESSON,1,naive/bmm_broadcast.c optimized/bmm_grouped.c optimized/bmm_cuda_memory.c lessons/bmm_reference.c,kernels/bmm_v1.cu,))
$(eval $(call LESSON,2,naive/logchain_tree.c optimized/logchain_forward.c optimized/logchain_cuda_memory.c lessons/logchain_reference.c,kernels/logchain_v1.cu kernels/logchain_v2.cu kernels/logchain_v3.cu kernels/logchain_v4.cu kernels/logchain_v5.cu,tests/logchain_bruteforce.c tests/logchain_memory_walk.c))
$(eval $(call LESSON,3,naive/maxsim_einsum.c optimized/maxsim_fused.c lessons/maxsim_reference.c,kernels/maxsim_v1.cu kernels/maxsim_v2.cu kernels/maxsim_v3.cu kernels/maxsim_v4.cu kernels/maxsim_v5.cu kernels/maxsim_v6.cu,))
$(eval $(call LESSON,4,naive/gru_eager.c optimized/gru_fused.c optimized/gru_cuda_memory.c lessons/gru_reference.c,kernels/gru_v1.cu kernels/gru_v2.cu kernels/gru_v3.cu kernels/gru_v4.cu kernels/gru_v5.cu,))
$(eval $(call LESSON,5,naive/linear_ce_chunked.c optimized/linear_ce_fused.c optimized/linear_ce_cuda_memory.c lessons/linear_ce_reference.c,kernels/linear_ce_v1.cu kernels/linear_ce_v2.cu kernels/linear_ce_v3.cu kernels/linear_ce_v4.cu kernels/linear_ce_v5.cu,))
ifeq ($(TOY_LESSON),1) # a sixth lesson for the done-when check (make test-toy-lesson): one line, no list edited
$(eval $(call LESSON,6,,,,tests/toy_lesson.c))
endif

# The lesson list as C: X(1) X(2) ... (rewritten only when LESSON_NS changes, so nothing rebuilds needlessly)
LESSON_LIST_H := $(OBJ)/gen/lesson_list.h
$(LESSON_LIST_H): FORCE
	@mkdir -p $(dir $@)
	@echo '$(foreach n,$(LESSON_NS),X($(n)))' >$@.tmp; cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
$(OBJ)/tests/test_lessons.o $(OBJ)/tests/test_cuda.o $(LESSON_CUDA_TEST_OBJ): $(LESSON_LIST_H)
# The commit a lesson was built from, for --version and --dump's meta.json (lessons/runner/version.h; rewritten only
# when `git describe` changes, so nothing rebuilds needlessly)
GIT_DESCRIBE_H := $(OBJ)/gen/git_describe.h
$(GIT_DESCRIBE_H): FORCE
	@mkdir -p $(dir $@)
	@echo '#define LESSON_GIT_DESCRIBE "$(shell git describe --always --dirty 2>/dev/null || echo unknown)"' >$@.tmp; \
	cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
$(OBJ)/lessons/runner/cli.o $(OBJ)/lessons/runner/lesson_output.o: $(GIT_DESCRIBE_H)
$(OBJ)/lessons/runner/cli.o $(OBJ)/lessons/runner/lesson_output.o: CFLAGS += -I$(OBJ)/gen
$(OBJ)/tests/test_lessons.o: CFLAGS += -DLESSON_BIN_DIR='"$(BIN)"'
.PHONY: FORCE
FORCE:

LESSONS := $(foreach n,$(LESSON_NS),$(BIN)/lesson$(n))
TESTS   := $(BIN)/test_runtime $(BIN)/test_lessons $(foreach n,$(LESSON_NS),$(if $(wildcard tests/test_lesson$(n).c),$(BIN)/test_lesson$(n)))
ifeq ($(CUDA),1)
TESTS   += $(BIN)/test_cuda
endif
# the preload allocator counter's own test, the Python checks (snapshots replayed; torch where it imports), and what
# a run leaves on disk (every output whole or absent: tests/outputs_whole.sh)
TESTS   += $(BIN)/test_peak_alloc tests/python_checks.sh tests/outputs_whole.sh

# ---- top-level targets -----------------------------------------------------------------------------------
.PHONY: all lessons docs check-docs gdb-build gdb-deps test test-build check-deps blas-deps bench plots plot-deps debug clean cuda-status
.DEFAULT_GOAL := all

all: blas-deps cuda-status $(LESSONS) $(BIN)/gradcheck_example
lessons: $(LESSONS)

cuda-status:
ifeq ($(CUDA),1)
	@echo "CUDA build: nvcc at $(NVCC) (sm_80, sm_90, sm_90a); the CUDA implementations are linked in"
else
	@echo "CPU-only build: $(if $(NVCC),CUDA=0 given,nvcc not found on PATH or in /usr/local/cuda); the 'cuda' implementations are left out"
endif

debug:
	$(MAKE) DEBUG=1 all test-build

test: check-deps blas-deps
	$(MAKE) test-build
	@status=0; for t in $(TESTS); do echo "== $$t"; t0=$$(date +%s); ./$$t || status=1; \
	  echo "== $$t: $$(( $$(date +%s) - t0 )) s"; done; \
	$(if $(filter 1,$(SANITIZE)),echo "== make test-toy-lesson: not under SANITIZE=1 (the lesson list's check: make test)";, \
	echo "== make test-toy-lesson"; $(MAKE) --no-print-directory test-toy-lesson || status=1;) \
	if [ $$status -ne 0 ]; then echo "make test: some suites FAILED"; else echo "make test: all suites passed"; fi; \
	exit $$status

test-build: cuda-status $(TESTS) $(LESSONS) $(BIN)/gradcheck_example

# The done-when check of the lesson list: a sixth lesson (tests/toy_lesson.c and its one LESSON line under
# TOY_LESSON=1, built apart in build/toy) joins test_lessons (definitions and binaries) and the bench plan with no
# list edited. `make test` runs it last.
.PHONY: test-toy-lesson toy-check
test-toy-lesson: check-deps blas-deps
	@$(MAKE) --no-print-directory TOY_LESSON=1 toy-check
toy-check:
	@$(MAKE) --no-print-directory $(BIN)/test_lessons $(LESSONS)
	@./$(BIN)/test_lessons >$(BIN)/test_lessons.out 2>&1; rc=$$?; cat $(BIN)/test_lessons.out; \
	grep -q '^test_lessons: .* lesson6$$' $(BIN)/test_lessons.out || \
	  { echo "make test-toy-lesson: the toy lesson did not join test_lessons"; rc=1; }; \
	BIN=$(BIN) BENCH_DIR=$(BIN)/bench BENCH_LESSONS="$(LESSON_NS)" BENCH_PLAN_ONLY=1 TORCH_PYTHON=none \
	  plots/bench.sh >$(BIN)/bench_plan.out 2>&1 || rc=1; \
	grep '^plan: 6|' $(BIN)/bench_plan.out || \
	  { cat $(BIN)/bench_plan.out; echo "make test-toy-lesson: the toy lesson is not in the bench plan"; rc=1; }; \
	if [ $$rc -ne 0 ]; then echo "make test-toy-lesson: FAILED"; else echo "make test-toy-lesson: lesson 6 joined"; fi; \
	exit $$rc

# apt-get install PACKAGE when HEADER is missing, as root; otherwise print the command. $(1) header, $(2) packages
define need_pkg
	@if ! test -f $(1); then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "$(2) missing ($(1)): installing it with apt-get"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(2) || exit 1; \
	  else \
	    echo "$(2) missing ($(1)). Install it with:  sudo apt-get install -y $(2)"; exit 1; \
	  fi; \
	fi
endef

check-deps:
	$(call need_pkg,/usr/include/check.h,check pkg-config)

blas-deps:
	$(call need_pkg,/usr/lib/x86_64-linux-gnu/libopenblas.so,libopenblas-dev)
	$(call need_pkg,/usr/include/oneapi/dnnl/dnnl.h,libdnnl-dev)

# The sweeps are data (plots/sweeps.txt); plots/bench.sh runs them on every implementation this machine has, five
# timed runs after a warm-up per point, and writes docs/results/<machine>/lessonN{,_runs,_timeline}.csv.
# BENCH_DIR unset: docs/results/cpu, or docs/results/<gpu-name> where a CUDA device runs. bench-N: lesson N only.
bench: all
	BENCH_DIR=$(BENCH_DIR) BENCH_LESSONS="$(LESSON_NS)" BIN=$(BIN) plots/bench.sh
bench-%: all
	BENCH_DIR=$(BENCH_DIR) BENCH_LESSONS="$(LESSON_NS)" BIN=$(BIN) plots/bench.sh $*

plot-deps:
	@$(PYTHON) -c 'import matplotlib' 2>/dev/null || { \
	  echo "matplotlib is missing: trying pip, then apt"; \
	  $(PYTHON) -m pip install --quiet matplotlib 2>/dev/null || \
	  { [ "$$(id -u)" = 0 ] && apt-get update -qq && apt-get install -y -qq python3-matplotlib; } || \
	  { echo "could not install matplotlib. Install it with:  python3 -m pip install matplotlib"; exit 1; }; }

# Every figure (docs/img), the README's results table and the sweep tables in the lesson docs, from the CSVs of
# docs/results/cpu. Another results folder (BENCH_DIR=docs/results/<gpu-name>) draws its figures into its own
# img/ and leaves the README and the docs (the CPU's results) alone. No lessonN.csv found: an error, nothing changed.
PLOTS_DIR := $(patsubst %/,%,$(or $(BENCH_DIR),docs/results/cpu))
plots: plot-deps
	$(PYTHON) plots/bench_plots.py --results $(PLOTS_DIR) $(if $(filter docs/results/cpu ./docs/results/cpu,	  $(PLOTS_DIR)),--out docs/img --readme README.md,--out $(PLOTS_DIR)/img --no-docs)

# Re-run each lesson at the size its doc shows and paste the output into the doc or its appendix (between markers);
# the list is docs/generated.txt, whose $$EMU lines run a lesson under the CUDA emulator (built here, into build/emu),
# and lesson 3's model counts its time model's build and nvcc's SASS (both built here; nvcc needed).
# check-docs: the ten-section shape, no figure typed by hand, the appendices and links, and every gdb walk run in gdb
# -batch against a -O0 -g3 CPU build in build/debug (docs/tools/check_docs.py, docs/tools/check_gdb_walks.py), and
# each doc's reading path against the files' line counts (docs/tools/check_reading_paths.py; --fix rewrites them),
# the docs' commands and PyTorch snippets run as pasted (docs/tools/check_doc_commands.py; check_doc_snippets.py,
# where /usr/bin/python3 has torch), and the product code's shape: no emulator names, short version headers, 110
# columns, no figures in comments (docs/tools/check_code_shape.py; docs/tools/code_shape_allow.txt lists the files
# not converted yet), and docs/results/emu/model_cv.csv against the records and the GPU reports
# (make model-cv-check).
DOC_EMU_BINS := $(sort $(patsubst EMU/%,build/emu/%,$(shell grep -o 'EMU/lesson[0-9]*' docs/generated.txt)))
docs: all test-build plot-deps build/tools/model_fit
	$(if $(DOC_EMU_BINS),$(MAKE) EMU=1 $(DOC_EMU_BINS) build/emu/predict_gemm)
	$(MAKE) EMU=1 EMU_COUNT=1 build/emu-count/lesson2 build/emu-count/lesson3
	$(MAKE) sass-kernels GPU=H100
	$(PYTHON) docs/tools/paste_output.py --table docs/generated.txt --bin $(BIN)

# gdb-build: the docs' gdb walks' build, `gdb --args build/debug/lessonN ...` (-O0 -g3, CPU only: no nvcc -G)
gdb-build:
	$(MAKE) DEBUG=1 CUDA=0 BIN=build/debug $(foreach n,$(LESSON_NS),build/debug/lesson$(n))

check-docs: gdb-deps plot-deps all gdb-build test-build
	$(PYTHON) docs/tools/check_gdb_walks.py --bin build/debug
	$(PYTHON) docs/tools/check_docs.py
	$(PYTHON) docs/tools/check_reading_paths.py
	$(PYTHON) docs/tools/check_code_shape.py
	$(PYTHON) docs/tools/cuda_order.py --check $(BIN)
	$(MAKE) --no-print-directory model-cv-check
	$(PYTHON) docs/tools/out_of_sample.py --check
	$(PYTHON) docs/tools/check_doc_commands.py
	@if /usr/bin/python3 -c 'import torch' 2>/dev/null; then /usr/bin/python3 docs/tools/check_doc_snippets.py; \
	else echo "check-docs: no /usr/bin/python3 with torch: the docs' PyTorch snippets (docs/tools/check_doc_snippets.py) not run"; fi
	@d=$$(mktemp -d) && ./$(BIN)/lesson1 --size tiny --impl naive,cpu --dump $$d/l1 >/dev/null && \
	  $(PYTHON) plots/compare_npy.py $$d/l1/naive.dW.npy $$d/l1/cpu.dW.npy && \
	  ! $(PYTHON) plots/compare_npy.py $$d/l1/cpu.dx.npy $$d/l1/cpu.dW.npy 2>/dev/null && rm -rf $$d && \
	  echo "check-docs: the --dump route (plots/compare_npy.py) agrees on equal gradients and refuses others"

gdb-deps:
	@command -v gdb >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gdb; } || { echo "gdb is missing: sudo apt-get install -y gdb"; exit 1; }

clean:
	rm -rf build

# ---- rules -----------------------------------------------------------------------------------------------
$(BIN)/test_runtime: $(BIN)/gradcheck_example $(OBJ)/tests/test_runtime.o $(OBJ)/tests/gradcheck.o $(SESSION_OBJ) $(RUNTIME_OBJ) $(BIN)/.mode-$(MODE)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(CHECK_LIBS) $(LDLIBS)

# The learner's entry point: a central-difference check of your own forward/backward (docs: "Check your own gradient").
$(BIN)/gradcheck_example: $(OBJ)/docs/examples/gradcheck_example.o $(OBJ)/tests/gradcheck.o $(RUNTIME_OBJ) $(BIN)/.mode-$(MODE)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LDLIBS)

# Every lesson's definition, table-driven: formula == tracker, validation, determinism, no leaks, gradients.
$(BIN)/test_lessons: $(OBJ)/tests/test_lessons.o $(TEST_LIB_OBJ) $(LESSON_DEF_OBJ) $(SESSION_OBJ) $(RUNTIME_OBJ) $(BIN)/.mode-$(MODE)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(CHECK_LIBS) $(LDLIBS)

$(BIN)/test_cuda: $(OBJ)/tests/test_cuda.o $(LESSON_CUDA_TEST_OBJ) $(TEST_LIB_OBJ) $(LESSON_DEF_OBJ) $(SESSION_OBJ) $(RUNTIME_OBJ) $(BIN)/.mode-$(MODE)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(CHECK_LIBS) $(LDLIBS)

# The binaries land in $(BIN) whatever the mode; this stamp relinks them when the mode changes.
$(BIN)/.mode-$(MODE):
	@mkdir -p $(BIN) && rm -f $(BIN)/.mode-* && touch $@

$(OBJ)/tests/%.o: tests/%.c | blas-deps check-deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) -I$(OBJ)/gen -c -o $@ $<

$(OBJ)/%.o: %.c | blas-deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

ifneq ($(EMU),1) # [emu hook] under EMU=1, emu.mk compiles .cu with g++
$(OBJ)/%.cu.o: %.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) $(if $(filter $<,$(HOPPER_CU)),$(NVCC_ARCH_HOPPER),$(NVCC_ARCH)) -c -o $@ $<
endif

-include $(shell find $(sort $(OBJ) $(CU_OBJ)) -name '*.d' 2>/dev/null)


# ---- PyTorch's true CPU peak (plots/torch_peak/peak_alloc.c, preloaded by plots/pytorch_baseline.py) -------
# Built without sanitizers in every mode: it replaces posix_memalign/free, which ASan replaces too. The test is
# built with -fno-builtin, or gcc drops an aligned_alloc/free pair whose block is never used.
PEAK_ALLOC_FLAGS := -std=c11 -O2 -g $(WARN) -fPIC
all: build/libpeak_alloc.so
build/libpeak_alloc.so: plots/torch_peak/peak_alloc.c
	@mkdir -p $(dir $@)
	$(CC) $(PEAK_ALLOC_FLAGS) -shared -o $@ $< -lpthread
$(BIN)/test_peak_alloc: tests/test_peak_alloc.c plots/torch_peak/peak_alloc.c tests/check_main.h
	@mkdir -p $(dir $@)
	$(CC) $(PEAK_ALLOC_FLAGS) -fno-builtin $(CHECK_CFLAGS) -o $@ tests/test_peak_alloc.c plots/torch_peak/peak_alloc.c $(CHECK_LIBS) -lpthread
test-build: build/libpeak_alloc.so
# Python checks beside the suites: --snapshot against the tracker, the CPU peak counter from torch (when present).

# Every lesson's CPU versions on each CPU GEMM path (an AVX2-only CPU emulated by capping oneDNN and OpenBLAS, each
# provider forced, lesson 5's float32 path, this CPU's own path), validated, each run saying which path it took
# (tests/gemm_paths.sh).
.PHONY: test-gemm-paths
test-gemm-paths: all
	LESSONS="$(LESSON_NS)" tests/gemm_paths.sh $(BIN)

# Why a small GEMM reaches less of the provider's rate inside lesson 2 than alone (tests/gemm_in_context.c)
.PHONY: gemm-in-context
gemm-in-context: blas-deps $(BIN)/gemm_in_context
	OPENBLAS_NUM_THREADS=1 ./$(BIN)/gemm_in_context
$(BIN)/gemm_in_context: $(OBJ)/tests/gemm_in_context.o $(RUNTIME_OBJ) $(BIN)/.mode-$(MODE)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LDLIBS)

# Each lesson's cpu against PyTorch's fixed formulations in one run each, one thread (docs/results/cpu/cpu_vs_pytorch.txt).
.PHONY: compare-pytorch
compare-pytorch: all
	plots/compare_pytorch.sh

# ---- one command for a GPU machine -------------------------------------------------------------------------
# make gpu-bundle: build/gpu-bundle/, all a GPU machine that can build nothing needs (tests/gpu/make_bundle.sh):
# every lesson, test_cuda, planted_initcheck and grid_sync_cost built for sm_80 and sm_90 (+PTX) with Check static, the shared libraries
# their ldd names (CPU GEMM libraries and theirs; not glibc, libstdc++ or CUDA's, which the machine brings), the
# report script and its inputs, packed as one .tar.xz under 40 MiB, its ldd closure checked.
# EMU=1 makes build/gpu-bundle-emu from the emulation build: the rehearsal's bundle (make gpu-rehearsal).
# make gpu-report: the report (tests/gpu/gpu_report.sh) from this checkout's build/, built first.
GPU_BUNDLE_DIR := build/gpu-bundle$(if $(filter 1,$(EMU)),-emu,)
GPU_BUNDLE_BINS := $(notdir $(LESSONS)) test_cuda planted_initcheck grid_sync_cost
.PHONY: gpu-bundle gpu-bundle-bins gpu-report gpu-rehearsal
gpu-bundle:
	$(MAKE) BUNDLE=1 EMU=$(EMU) gpu-bundle-bins
	tests/gpu/make_bundle.sh build/bundle-$(if $(filter 1,$(EMU)),emu,native) $(GPU_BUNDLE_DIR) $(GPU_BUNDLE_BINS)
gpu-bundle-bins: $(addprefix $(BIN)/,$(GPU_BUNDLE_BINS))
$(BIN)/planted_initcheck: $(CU_OBJ)/tests/gpu/planted_initcheck.cu.o $(RUNTIME_OBJ) $(BIN)/.mode-$(MODE)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LDLIBS)
# what a grid.sync costs with no work between (tests/gpu/issue27_followup.sh runs it on a lent GPU)
$(BIN)/grid_sync_cost: $(CU_OBJ)/tests/gpu/grid_sync_cost.cu.o $(RUNTIME_OBJ) $(BIN)/.mode-$(MODE)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LDLIBS)
gpu-report: $(LESSONS) $(BIN)/test_cuda $(BIN)/planted_initcheck
	BIN=$(BIN) tests/gpu/gpu_report.sh
# The route rehearsed here: the emulation bundle, unpacked and run by the same script at tiny size
gpu-rehearsal: check-deps
	$(MAKE) EMU=1 gpu-bundle
	GPU_REHEARSAL=1 GPU_REPORT_DIR=build/gpu-rehearsal tests/gpu/rehearse.sh build/gpu-bundle-emu
