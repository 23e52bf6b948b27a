# GPU memory lessons - build, run, test, benchmark, plot.
#
#   make              build every lesson into build/ (CUDA versions too when nvcc is found)
#   make lesson-1     build and run lesson 1 at its default size
#   make test         install Check if missing (apt, as root), build and run every test suite
#   make bench-1      size sweep of lesson 1 -> $(BENCH_DIR)/lesson1_sweep.csv
#   make bench-2      v and c sweeps of lesson 2 -> $(BENCH_DIR)/lesson2_sweep_v.csv, lesson2_sweep_c.csv
#   make plots        draw docs/img/*.png from the sweep CSVs (installs matplotlib if missing)
#   make docs         re-run the lessons and paste their output into docs/lesson-N.md
#   make debug        -O0 -g3 build for gdb (same as DEBUG=1)
#   make CUDA=0       force the CPU-only build        make SANITIZE=1   AddressSanitizer + UBSan (CPU build)
#   make test-emu     the CUDA code on the CPU (tests/cuda_emu/, test-only): EMU=1 build into build/emu/
#   make clean

# ---- toolchain -------------------------------------------------------------------------------------------
CC       := gcc
NVCC     ?= $(shell command -v nvcc 2>/dev/null || { test -x /usr/local/cuda/bin/nvcc && echo /usr/local/cuda/bin/nvcc; })
CUDA     ?= $(if $(NVCC),1,0)
DEBUG    ?= 0
SANITIZE ?= 0
PYTHON   ?= python3
BENCH_DIR ?= docs/results/cpu

EMU      ?= 0
# [emu hook] EMU=1: the CUDA sources compiled by g++ against tests/cuda_emu's shims (see tests/cuda_emu/emu.mk)
ifeq ($(SANITIZE)$(EMU),10)
CUDA := 0
endif
ifeq ($(EMU),1)
CUDA := 1
endif
BIN      := build$(if $(filter 1,$(EMU)),/emu,)

MODE     := $(if $(filter 1,$(DEBUG)),debug,release)$(if $(filter 1,$(SANITIZE)),-san,)$(if $(filter 1,$(CUDA)),-cuda,)$(if $(filter 1,$(EMU)),-emu,)
OBJ      := build/obj/$(MODE)
OPT      := $(if $(filter 1,$(DEBUG)),-O0 -g3,-O2 -g)
CFLAGS   := -std=c11 $(OPT) -Wall -Wextra -MMD -MP
LDLIBS   := -lm
ifeq ($(SANITIZE),1)
CFLAGS   += -fsanitize=address,undefined -fno-omit-frame-pointer
LDFLAGS  += -fsanitize=address,undefined
endif

ifeq ($(CUDA)$(EMU),10) # [emu hook] nvcc only outside the emulation build
CUDA_HOME := $(patsubst %/bin/nvcc,%,$(NVCC))
CFLAGS    += -DHAVE_CUDA -I$(CUDA_HOME)/include
# sm_80 (A100) and sm_90 (H100/H200) as machine code, plus compute_90 PTX so newer GPUs can JIT it.
NVCCFLAGS := -std=c++17 $(if $(filter 1,$(DEBUG)),-O0 -g -G,-O2 -g -lineinfo) -DHAVE_CUDA \
             -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
             -gencode arch=compute_90,code=compute_90 -Xcompiler -Wall,-Wextra -MMD -MP
LDLIBS    += -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcublas -lcudart_static -ldl -lrt -lpthread -lstdc++
endif

# ---- sources ---------------------------------------------------------------------------------------------
RUNTIME_C  := kernels/dtype.c kernels/track.c kernels/arena.c kernels/rng.c kernels/timer.c kernels/compare.c \
              kernels/gradcheck.c kernels/gemm_cpu.c lessons/cli.c lessons/report.c lessons/npy.c lessons/impl_gate.c lessons/tensor_copy.c
RUNTIME_CU := kernels/cuda_track.cu

L1_C  := naive/bmm_broadcast.c optimized/bmm_grouped.c lessons/bmm_session.c
L1_CU := optimized/bmm_grouped.cu

objs = $(patsubst %.c,$(OBJ)/%.o,$(filter %.c,$(1))) \
       $(if $(filter 1,$(CUDA)),$(patsubst %.cu,$(OBJ)/%.cu.o,$(filter %.cu,$(1))))

RUNTIME_OBJ := $(call objs,$(RUNTIME_C) $(RUNTIME_CU))
L1_OBJ      := $(call objs,$(L1_C) $(L1_CU))

LESSONS := $(BIN)/lesson1

# Lesson 2 (log-space matrix chain). Its sources are listed here; the block is active once lessons/lesson2.c exists.
L2_C  := naive/logchain_tree.c optimized/logchain_forward.c lessons/logchain_session.c lessons/logchain_reference.c
L2_CU := optimized/logchain_forward.cu kernels/logchain_kernels.cu kernels/logchain_kernels_v2.cu # [emu branch] kernels moved to kernels/
ifneq ($(wildcard lessons/lesson2.c),)
L2_OBJ  := $(call objs,$(L2_C) $(L2_CU))
LESSONS += $(BIN)/lesson2
endif

# ---- Check (tests) ---------------------------------------------------------------------------------------
# STATIC_CHECK=1 links Check and subunit statically, for test binaries carried to a machine without them.
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
ifeq ($(STATIC_CHECK),1)
CHECK_LIBS := -Wl,-Bstatic -lcheck -lsubunit -Wl,-Bdynamic -lrt -lm -pthread
else
CHECK_LIBS := $(or $(shell pkg-config --libs check 2>/dev/null),-lcheck -lsubunit -lrt -lm -pthread)
endif
TESTS := $(BIN)/test_runtime $(BIN)/test_lesson1
ifneq ($(wildcard lessons/lesson2.c),)
TESTS += $(BIN)/test_lesson2
endif
ifeq ($(CUDA),1)
TESTS += $(BIN)/test_cuda
endif

include tests/cuda_emu/emu.mk # [emu hook] EMU_* variables, the g++ rule for .cu, test-emu

# ---- top-level targets -----------------------------------------------------------------------------------
.PHONY: all lessons lesson-1 lesson-2 bench-2 docs test test-build check-deps bench-1 plots plot-deps debug clean cuda-status
.DEFAULT_GOAL := all

all: cuda-status $(LESSONS)
lessons: $(LESSONS)

cuda-status:
ifeq ($(CUDA),1)
	@echo "CUDA build: nvcc at $(NVCC) (sm_80, sm_90); the CUDA implementations are linked in"
else
	@echo "CPU-only build: $(if $(NVCC),CUDA=0 given,nvcc not found on PATH or in /usr/local/cuda); the 'cuda' implementations are left out"
endif

lesson-1: all
	./$(BIN)/lesson1

lesson-2: all
	./$(BIN)/lesson2

debug:
	$(MAKE) DEBUG=1 all test-build

test: check-deps
	$(MAKE) test-build
	@status=0; for t in $(TESTS); do echo "== $$t"; ./$$t || status=1; done; \
	if [ $$status -ne 0 ]; then echo "make test: some suites FAILED"; else echo "make test: all suites passed"; fi; \
	exit $$status

test-build: cuda-status $(TESTS) $(LESSONS)

check-deps:
	@if ! pkg-config --exists check 2>/dev/null && ! test -f /usr/include/check.h; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "Check (libcheck) is missing: installing it with apt-get"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq check pkg-config || exit 1; \
	  else \
	    echo "Check (libcheck) is missing. Install it with:  sudo apt-get install -y check pkg-config"; exit 1; \
	  fi; \
	fi

BENCH_B := 256 512 1024 2048 4096 8192 16384
bench-1: all
	@mkdir -p $(BENCH_DIR)
	rm -f $(BENCH_DIR)/lesson1_sweep.csv
	@for b in $(BENCH_B); do \
	  ./$(BIN)/lesson1 --dims B=$$b,G=8,K=64,N=64 --csv $(BENCH_DIR)/lesson1_sweep.csv > /dev/null || exit 1; \
	  echo "B=$$b done"; done
	@echo "wrote $(BENCH_DIR)/lesson1_sweep.csv"

# Lesson 2: memory and time against the chain length v and the hidden size c (n=100, t=1). naive runs up to the
# sizes where its O(n v c^3) tree takes under a minute on 2 cores; cpu (and cuda on a GPU) continue beyond.
BENCH2_V       := 4 8 16 32 64 128
BENCH2_V_LARGE := 256 512
BENCH2_C       := 16 32 64 128
BENCH2_C_LARGE := 256 512
bench-2: all
	@mkdir -p $(BENCH_DIR)
	rm -f $(BENCH_DIR)/lesson2_sweep_v.csv $(BENCH_DIR)/lesson2_sweep_c.csv
	@for v in $(BENCH2_V); do \
	  ./$(BIN)/lesson2 --dims n=100,t=1,v=$$v,c=64 --csv $(BENCH_DIR)/lesson2_sweep_v.csv > /dev/null || exit 1; \
	  echo "v=$$v done"; done
	@for v in $(BENCH2_V_LARGE); do \
	  ./$(BIN)/lesson2 --dims n=100,t=1,v=$$v,c=64 --impl cpu,cuda --csv $(BENCH_DIR)/lesson2_sweep_v.csv > /dev/null || exit 1; \
	  echo "v=$$v done (cpu, cuda)"; done
	@for c in $(BENCH2_C); do \
	  ./$(BIN)/lesson2 --dims n=100,t=1,v=40,c=$$c --csv $(BENCH_DIR)/lesson2_sweep_c.csv > /dev/null || exit 1; \
	  echo "c=$$c done"; done
	@for c in $(BENCH2_C_LARGE); do \
	  ./$(BIN)/lesson2 --dims n=100,t=1,v=40,c=$$c --impl cpu,cuda --csv $(BENCH_DIR)/lesson2_sweep_c.csv > /dev/null || exit 1; \
	  echo "c=$$c done (cpu, cuda)"; done
	@echo "wrote $(BENCH_DIR)/lesson2_sweep_v.csv and $(BENCH_DIR)/lesson2_sweep_c.csv"

plot-deps:
	@$(PYTHON) -c 'import matplotlib' 2>/dev/null || { \
	  echo "matplotlib is missing: trying pip, then apt"; \
	  $(PYTHON) -m pip install --quiet matplotlib 2>/dev/null || \
	  { [ "$$(id -u)" = 0 ] && apt-get update -qq && apt-get install -y -qq python3-matplotlib; } || \
	  { echo "could not install matplotlib. Install it with:  python3 -m pip install matplotlib"; exit 1; }; }

plots: plot-deps
	$(PYTHON) plots/plot_lesson1.py --csv $(BENCH_DIR)/lesson1_sweep.csv --out docs/img --doc docs/lesson-1.md
	$(PYTHON) plots/plot_lesson2.py --csv $(BENCH_DIR)/lesson2_sweep_v.csv --csv $(BENCH_DIR)/lesson2_sweep_c.csv --out docs/img --doc docs/lesson-2.md

# Re-run each lesson at the size its doc shows and paste the output into the doc (between markers).
docs: all plot-deps
	$(PYTHON) plots/paste_output.py docs/lesson-1.md lesson1-forum -- ./$(BIN)/lesson1 --size forum
	$(PYTHON) plots/paste_output.py docs/lesson-2.md lesson2-medium -- ./$(BIN)/lesson2 --size medium
	$(PYTHON) plots/paste_output.py docs/lesson-2.md lesson2-forum -- ./$(BIN)/lesson2 --size forum

clean:
	rm -rf build

# ---- rules -----------------------------------------------------------------------------------------------
$(BIN)/lesson1: $(OBJ)/lessons/lesson1.o $(L1_OBJ) $(RUNTIME_OBJ) $(BIN)/.mode-$(MODE)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LDLIBS)

$(BIN)/lesson2: $(OBJ)/lessons/lesson2.o $(L2_OBJ) $(RUNTIME_OBJ) $(BIN)/.mode-$(MODE)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LDLIBS)

$(BIN)/test_lesson2: $(OBJ)/tests/test_lesson2.o $(OBJ)/tests/cli_harness.o $(OBJ)/tests/logchain_bruteforce.o $(L2_OBJ) $(RUNTIME_OBJ) $(BIN)/.mode-$(MODE)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(CHECK_LIBS) $(LDLIBS)

$(BIN)/test_runtime: $(OBJ)/tests/test_runtime.o $(RUNTIME_OBJ) $(BIN)/.mode-$(MODE)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(CHECK_LIBS) $(LDLIBS)

$(BIN)/test_lesson1: $(OBJ)/tests/test_lesson1.o $(OBJ)/tests/bmm_reference.o $(OBJ)/tests/cli_harness.o $(L1_OBJ) $(RUNTIME_OBJ) $(BIN)/.mode-$(MODE)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(CHECK_LIBS) $(LDLIBS)

CUDA_TEST_OBJ := $(OBJ)/tests/test_cuda.o $(OBJ)/tests/cuda_lesson1.o $(OBJ)/tests/bmm_reference.o \
                 $(if $(wildcard tests/cuda_lesson2.c),$(OBJ)/tests/cuda_lesson2.o $(L2_OBJ))
$(BIN)/test_cuda: $(CUDA_TEST_OBJ) $(L1_OBJ) $(RUNTIME_OBJ) $(BIN)/.mode-$(MODE)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(CHECK_LIBS) $(LDLIBS)

# The binaries land in build/ whatever the mode; this stamp relinks them when the mode changes.
$(BIN)/.mode-$(MODE):
	@mkdir -p $(BIN) && rm -f $(BIN)/.mode-* && touch $@

$(OBJ)/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) -c -o $@ $<

$(OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

ifneq ($(EMU),1) # [emu hook] emu.mk compiles .cu with g++
$(OBJ)/%.cu.o: %.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -c -o $@ $<
endif

-include $(shell find build/obj/$(MODE) -name '*.d' 2>/dev/null)
