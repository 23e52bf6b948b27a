# tests/cuda_emu/emu.mk - the emulation build (TEST-ONLY): the project's .cu files compiled by g++ against the
# shims in tests/cuda_emu/include and linked with the CPU emulator and the cuBLAS shim over OpenBLAS. Included
# by the Makefile. EMU=1 switches the whole build into this mode (objects in build/obj/<mode>-emu, binaries in
# build/emu/); `make test-emu` builds it and runs every CUDA test and each lesson's --impl cuda, tiny and small.
EMU_DIR      := tests/cuda_emu
EMU_CUDA_INC ?= $(patsubst %/cuda_runtime_api.h,%,$(firstword $(wildcard \
                $(patsubst %/bin/nvcc,%,$(NVCC))/include/cuda_runtime_api.h /usr/local/cuda/include/cuda_runtime_api.h)))
EMU_SRC      := $(EMU_DIR)/emu_sched.cc $(EMU_DIR)/emu_warp.cc $(EMU_DIR)/emu_launch.cc $(EMU_DIR)/emu_runtime.cc \
                $(EMU_DIR)/emu_device.cc $(EMU_DIR)/cublas_shim.cc $(EMU_DIR)/emu_graph.cc $(EMU_DIR)/emu_dry.cc \
                $(EMU_DIR)/emu_resources.cc $(EMU_DIR)/emu_access.cc $(EMU_DIR)/emu_hazard.cc \
                $(EMU_DIR)/emu_symbols.cc $(EMU_DIR)/emu_profile.cc $(EMU_DIR)/emu_profile_report.cc \
                $(EMU_DIR)/emu_profile_design.cc $(EMU_DIR)/emu_model.cc $(EMU_DIR)/emu_model_record.cc \
                $(EMU_DIR)/emu_sass.cc $(EMU_DIR)/emu_gpu.cc \
                $(EMU_DIR)/emu_async.cc $(EMU_DIR)/emu_ptx.cc $(EMU_DIR)/emu_hopper.cc
EMU_PLANTED  := $(wildcard $(EMU_DIR)/planted_*.cu)
EMU_FMA      ?= 0
EMU_COUNT    ?= 0
EMU_BIN      := build/emu$(if $(filter 1,$(EMU_FMA)),-fma,)$(if $(filter 1,$(EMU_COUNT)),-count,)$(if $(filter 1,$(SANITIZE)),-san,)

ifeq ($(EMU),1)
ifeq ($(EMU_CUDA_INC),)
$(error EMU=1 needs NVIDIA's headers (cuda_runtime_api.h, cublas_api.h): install the CUDA toolkit or set EMU_CUDA_INC)
endif
CXX          := g++
EMU_INC      := -I$(EMU_DIR)/include -isystem $(EMU_CUDA_INC)
EMU_SAN      :=
ifeq ($(SANITIZE),1)
# -O1 here (the C objects keep -O2): at -O2, g++ with ASan + UBSan spends minutes on the fully unrolled fragment
# fragment loops of the mma.sync kernels, seconds at -O1; the same code is instrumented at either level
EMU_SAN      := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -O1
endif
# The eyes (emu_eyes.h): the .cu objects only get GCC's ThreadSanitizer instrumentation, whose __tsan_* calls
# emu_access.cc answers (libtsan is never linked). tsan and asan do not combine: under SANITIZE=1 the .cu
# objects keep ASan and the detectors and the profile see nothing (README).
EMU_WATCH    := $(if $(filter 1,$(SANITIZE)),,-fsanitize=thread --param tsan-instrument-func-entry-exit=0)
# EMU_COUNT=1 (make predict's build, build/emu-count): the .cu objects also call __sanitizer_cov_trace_pc at the
# start of every basic block, which the time model counts while it observes a launch (emu_model.cc): how often code
# that moves no memory runs. Its own build because the calls cost the emulator about a third of its speed.
EMU_COUNT_FLAGS := -fsanitize-coverage=trace-pc
# EMU_FMA=1: the .cu objects contract a*b+c into FMA as nvcc does (its own build: build/emu-fma)
EMU_FMA_FLAGS := $(if $(filter 1,$(EMU_FMA)),-ffp-contract=fast -mfma,)
EMU_CXXFLAGS := -std=c++17 $(OPT) $(HOST_INC) -Wall -Wextra -Wshadow $(if $(filter 1,$(WERROR)),-Werror,) -MMD -MP -DHAVE_CUDA -DCUDA_EMU $(EMU_INC) $(EMU_SAN)
CFLAGS       += -DHAVE_CUDA -DCUDA_EMU $(EMU_INC)
LDLIBS       += -lopenblas -lstdc++
EMU_OBJ      := $(patsubst %.cc,$(OBJ)/%.o,$(EMU_SRC))
RUNTIME_OBJ  += $(EMU_OBJ)
# the session's hooks (lessons/runner/device_hooks.h): the emulator's dry run, emulated-device mark and time
# model (EMU_PREDICT=GPU), linked in place of the product's none (lessons/runner/device_hooks.c)
SESSION_OBJ  := $(filter-out %/lessons/runner/device_hooks.o,$(SESSION_OBJ)) $(OBJ)/$(EMU_DIR)/lesson_model.o

# The .cu files are compiled from a mirror of the sources in which every loop with a data-sized range carries the
# dry run's loop skip (emu_loops.cc, a build tool; line numbers and file names are the originals': #line for
# __FILE__, -fdebug-prefix-map for the debug info), so no source holds a line for the emulator. One run rewrites them all; an unchanged output keeps its timestamp.
EMU_LOOPS_SRC := $(wildcard kernels/*.cu kernels/*.h kernels/runtime/*.h kernels/runtime/*.cu optimized/*.cu optimized/*.h tests/gpu/*.cu) \
                 $(EMU_PLANTED) $(EMU_DIR)/planted.h
EMU_LOOPS_DIR := $(OBJ)/loops
$(OBJ)/emu_loops: $(EMU_DIR)/emu_loops.cc
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -O1 -Wall -Wextra -Wshadow $(if $(filter 1,$(WERROR)),-Werror,) -o $@ $<
$(EMU_LOOPS_DIR)/.stamp: $(EMU_LOOPS_SRC) $(OBJ)/emu_loops $(EMU_DIR)/emu.mk
	@$(OBJ)/emu_loops $(EMU_LOOPS_DIR) $(EMU_LOOPS_SRC) && touch $@

# nvcc includes cuda_runtime.h in every .cu before its first line; -include does the same with the shim
$(CU_OBJ)/%.cu.o: %.cu $(EMU_LOOPS_DIR)/.stamp
	@mkdir -p $(dir $@)
	$(CXX) -x c++ $(EMU_CXXFLAGS) $(EMU_WATCH) $(EMU_FMA_FLAGS) $(if $(filter 1,$(EMU_COUNT)),$(EMU_COUNT_FLAGS),) \
	  -fdebug-prefix-map=$(EMU_LOOPS_DIR)/= \
	  -include cuda_runtime.h -c -o $@ $(EMU_LOOPS_DIR)/$<

# the peer kernels (predict-peers) are compiled as they are: the dry run's loop rewriting is for the lessons' sources
$(CU_OBJ)/$(EMU_DIR)/peers/%.cu.o: $(EMU_DIR)/peers/%.cu
	@mkdir -p $(dir $@)
	$(CXX) -x c++ $(EMU_CXXFLAGS) $(EMU_WATCH) $(EMU_FMA_FLAGS) $(EMU_COUNT_FLAGS) -include cuda_runtime.h -c -o $@ $<

$(OBJ)/$(EMU_DIR)/%.o: $(EMU_DIR)/%.cc
	@mkdir -p $(dir $@)
	$(CXX) $(EMU_CXXFLAGS) -c -o $@ $<

$(BIN)/test_emu: $(OBJ)/$(EMU_DIR)/test_emu.o $(OBJ)/$(EMU_DIR)/test_emu_sync.o $(OBJ)/$(EMU_DIR)/test_emu_graph.o $(OBJ)/$(EMU_DIR)/test_emu_limits.o $(OBJ)/$(EMU_DIR)/test_emu_eyes.o $(OBJ)/$(EMU_DIR)/test_emu_async.o $(OBJ)/$(EMU_DIR)/test_emu_mma.o $(OBJ)/$(EMU_DIR)/test_emu_hopper.o $(OBJ)/$(EMU_DIR)/test_emu_model.o $(patsubst %.cu,$(CU_OBJ)/%.cu.o,$(EMU_PLANTED)) $(RUNTIME_OBJ) \
                 $(BIN)/.mode-$(MODE)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(CHECK_LIBS) $(LDLIBS)

$(OBJ)/$(EMU_DIR)/%.o: $(EMU_DIR)/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) -c -o $@ $<

# the peer's kernels are compiled from ../shared at build time (never copied here)
$(CU_OBJ)/$(EMU_DIR)/peers/sgemm_launch.cu.o: EMU_CXXFLAGS += -I$(PEERS)/src -Wno-shadow -Wno-unused-parameter -Wno-sign-compare
$(BIN)/predict_peers: $(OBJ)/$(EMU_DIR)/peers/predict_peers.o $(CU_OBJ)/$(EMU_DIR)/peers/sgemm_launch.cu.o $(RUNTIME_OBJ) \
                      $(BIN)/.mode-$(MODE)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LDLIBS)
# a prediction at a size too long to emulate, from records of reduced runs (make predict)
$(BIN)/predict_extrapolate: $(OBJ)/$(EMU_DIR)/predict_extrapolate.o $(RUNTIME_OBJ) $(BIN)/.mode-$(MODE)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LDLIBS)
# the model's cuBLAS figure for given products (predict_table.sh: lesson 5's versions beside their products)
$(BIN)/predict_gemm: $(OBJ)/$(EMU_DIR)/predict_gemm.o $(RUNTIME_OBJ) $(BIN)/.mode-$(MODE)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LDLIBS)
endif

# ---- the GPU time model (emu_model.cc, emu_sass.cc, emu_gpu.cc; README "The time model") ----------------
# nvcc's SASS of the peer's kernels for each modelled GPU's architecture, with its line table (nvdisasm -gi: with the inlining chains) and
# ptxas's registers and shared memory appended. nvdisasm is not in every CUDA install (not in this one): if no
# nvdisasm is on PATH, `make nvdisasm` fetches NVIDIA's PyPI wheel nvidia-cuda-nvdisasm into build/tools.
PEERS        ?= ../shared/peers/sgemm_cuda
NVDISASM     ?= $(or $(shell command -v nvdisasm 2>/dev/null),build/tools/nvdisasm)
GPU          ?= A6000
SIZES        ?= 4096
PEERS_MAX_ERROR ?= 1.5
# the kernels predicted (0: cuBLAS; all twelve are validated first); kernel 12 (cp.async) has no published figure
PEERS_KERNELS ?= 0 1 2 3 4 5 6 7 8 9 10 11 12
gpu_arch      = $(if $(filter A100,$(1)),sm_80,$(if $(filter H100 H200,$(1)),sm_90,sm_86))
build/tools/nvdisasm:
	@mkdir -p build/tools/wheel
	python3 -m pip download --quiet --no-deps --dest build/tools/wheel nvidia-cuda-nvdisasm
	python3 -m zipfile -e build/tools/wheel/nvidia_cuda_nvdisasm-*.whl build/tools/wheel/x
	cp "$$(find build/tools/wheel/x -name nvdisasm -type f | head -n 1)" $@ && chmod +x $@
build/peers/sgemm_%.sass: $(EMU_DIR)/peers/sgemm_launch.cu $(EMU_DIR)/peers/sgemm_launch.h | $(NVDISASM)
	@test -n "$(NVCC)" || { echo "the time model needs nvcc (SASS of the kernels)"; exit 1; }
	@mkdir -p build/peers
	$(NVCC) -std=c++17 -O3 -lineinfo -cubin -arch=$* -Xptxas -v -I$(PEERS)/src -o build/peers/sgemm_$*.cubin $< \
	  2> build/peers/sgemm_$*.ptxas
	$(NVDISASM) -hex -gi -c build/peers/sgemm_$*.cubin > $@.tmp && cat build/peers/sgemm_$*.ptxas >> $@.tmp && mv $@.tmp $@

# The project's own kernels, the same way, for EMU_GPU_MODEL runs of the lessons:
#   make sass-kernels GPU=H100 && EMU_GPU_MODEL=H100 EMU_SASS=build/sass/kernels_sm_90.sass build/emu/lesson3 ...
# prints, at exit, each kernel's launches and predicted time on that GPU (a model, labelled so). The headers are
# prerequisites too: a kernel whose code lives in a header (lesson 3's pipeline) changes with it, and a SASS listing
# older than the emulated code gives the model another kernel's blocks. A file that includes <hopper_ptx.h> is
# built for sm_90a in the sm_90 listing: its wgmma and TMA exist only there (elsewhere its wrappers trap).
SASS_CU := $(wildcard kernels/*.cu optimized/*.cu)
.PHONY: sass-kernels
sass-kernels: build/sass/kernels_$(call gpu_arch,$(GPU)).sass
build/sass/kernels_%.sass: $(SASS_CU) $(wildcard kernels/*.h kernels/runtime/*.h optimized/*.h) | $(NVDISASM)
	@test -n "$(NVCC)" || { echo "the time model needs nvcc (SASS of the kernels)"; exit 1; }
	@mkdir -p build/sass && rm -f $@.tmp
	@for f in $(SASS_CU); do o=build/sass/$$(basename $$f .cu)_$*; a=$*; \
	  if [ $* = sm_90 ] && grep -q '<hopper_ptx.h>' $$f; then a=sm_90a; fi; echo "nvcc -cubin -arch=$$a $$f"; \
	  $(NVCC) -std=c++17 -O2 -DHAVE_CUDA -Ikernels/runtime/ptx $(HOST_INC) -lineinfo -cubin -arch=$$a -Xptxas -v -o $$o.cubin $$f 2> $$o.ptxas || exit 1; \
	  $(NVDISASM) -hex -gi -c $$o.cubin >> $@.tmp && cat $$o.ptxas >> $@.tmp || exit 1; done
	@mv $@.tmp $@

# SGEMM_CUDA's kernels 1-12 checked against a CPU GEMM, then predicted at each side in SIZES on GPU, with
# cuBLAS; fails when a kernel misses its published A6000 figure at 4096 by more than PEERS_MAX_ERROR.
.PHONY: predict-peers
predict-peers: check-deps
	$(MAKE) EMU=1 build/emu/predict_peers build/peers/sgemm_$(call gpu_arch,$(GPU)).sass
	@mkdir -p docs/results/emu
	EMU_ONE_PASS=1 EMU_BARRIER_BY_ID=1 EMU_SASS=build/peers/sgemm_$(call gpu_arch,$(GPU)).sass build/emu/predict_peers --sizes "$(SIZES)" \
	  --gpu $(GPU) --readme $(PEERS)/README.md --csv docs/results/emu/peers_sgemm.csv --max-error $(PEERS_MAX_ERROR) \
	  --kernels "$(PEERS_KERNELS)"


# Every CUDA version of every lesson predicted on PREDICT_GPU by the time model (EMU_PREDICT) at its small, medium
# and forum presets: docs/results/emu/predicted_<gpu>.csv (tests/cuda_emu/predict_lessons.sh; a model, not a
# measurement). PREDICT_TIMEOUT: seconds per lesson and size (a run over it is written with its note; default 900).
# PREDICT_JOBS: rows run side by side (default 2).
PREDICT_GPU ?= H100
.PHONY: predict
predict: check-deps
	$(MAKE) EMU=1 EMU_COUNT=1 emu-build build/emu-count/predict_extrapolate
	$(MAKE) sass-kernels GPU=$(PREDICT_GPU)
	@mkdir -p docs/results/emu
	tests/cuda_emu/predict_lessons.sh build/emu-count $(PREDICT_GPU) build/sass/kernels_$(call gpu_arch,$(PREDICT_GPU)).sass \
	  docs/results/emu/predicted_$(shell echo $(PREDICT_GPU) | tr A-Z a-z).csv

# The route make predict takes for sizes too long to emulate (reduced runs, extrapolated) against a direct run at
# sizes where both run: fails when one differs by more than 5% (tests/cuda_emu/predict_extrapolation.sh).
PREDICT_CHECKS ?= 3:small::cuda-v1:J=4:8,N=4:8 3:medium::cuda-v2:J=64:128,N=64:128 3:medium::cuda-v3:J=64:128 \
                  3:medium:J=512:cuda-v4:J=64:128 3:medium:J=512:cuda-v5:J=128:256 \
                  5:small::cuda-v2:V=1024:2048 5:small:H=512:cuda-v3:V=512:1024,H=128:256 \
                  5:small:H=1024:cuda-v4:V=512:1024,H=256:512
.PHONY: predict-check
predict-check: check-deps model-cv-check
	$(MAKE) EMU=1 EMU_COUNT=1 emu-build build/emu-count/predict_extrapolate
	$(MAKE) sass-kernels GPU=$(PREDICT_GPU)
	tests/cuda_emu/predict_extrapolation.sh build/emu-count $(PREDICT_GPU) \
	  build/sass/kernels_$(call gpu_arch,$(PREDICT_GPU)).sass "$(PREDICT_CHECKS)"

# The constants fitted on the GPUs (README "Fitted on the GPUs"). model-record: the model's counts of every
# (lesson, version, size) a GPU report measured (tests/cuda_emu/model_record.sh; retired.csv's rows left out) and of
# SGEMM_CUDA's kernels at 4096 on the A6000 (predict_peers --record), each written once into MODEL_RECORDS (delete
# a record to make it again: the emulator runs only for the missing ones). model-cv: the constants fitted on them
# (--no-small: on the forum and medium rows; a small pass of a few launches is mostly a fixed cost per pass the model
# has no term for, and fitted it drives the launch overhead past what lesson 4's medium passes allow),
# each lesson predicted by a fit without it (tests/cuda_emu/model_fit.cc, no emulation, seconds), as
# docs/results/emu/model_cv.csv and the README's table; model-cv-check fails when that CSV is stale.
MODEL_RECORDS ?= docs/results/emu/records
MODEL_REPORTS ?= docs/results/nvidia-h200 docs/results/nvidia-h100-80gb-hbm3
MODEL_FIT_ARGS = --records $(MODEL_RECORDS) --reports "$(MODEL_REPORTS)" --retired docs/results/retired.csv \
                 --peers docs/results/emu/peers_sgemm.csv --csv docs/results/emu/model_cv.csv --no-small
.PHONY: model-record model-cv model-cv-check
model-record: check-deps
	$(MAKE) EMU=1 EMU_COUNT=1 emu-build build/emu-count/predict_extrapolate build/emu-count/predict_peers
	$(MAKE) sass-kernels GPU=H100
	$(MAKE) build/peers/sgemm_sm_86.sass
	tests/cuda_emu/model_record.sh build/emu-count H100 build/sass/kernels_sm_90.sass $(MODEL_RECORDS) "$(MODEL_REPORTS)"
	test -s $(MODEL_RECORDS)/sgemm_11_4096.rec || EMU_ONE_PASS=1 EMU_BARRIER_BY_ID=1 EMU_SASS=build/peers/sgemm_sm_86.sass \
	  build/emu-count/predict_peers --sizes 4096 --gpu A6000 --validate 0 --kernels "0 1 2 3 4 5 6 7 8 9 10 11" \
	  --record $(MODEL_RECORDS)
# the fit needs the formula only (emu_gpu.cc) and the record's fields: no emulator, no EMU=1
build/tools/model_fit: $(EMU_DIR)/model_fit.cc $(EMU_DIR)/emu_gpu.cc $(EMU_DIR)/emu_model_record.cc $(EMU_DIR)/emu_model.h
	@mkdir -p $(dir $@)
	g++ -std=c++17 -O2 -Wall -Wextra -Wshadow -Werror -DHAVE_CUDA -DCUDA_EMU -I$(EMU_DIR)/include \
	  -isystem $(or $(EMU_CUDA_INC),/usr/local/cuda/include) -o $@ $(filter %.cc,$^)
model-cv: build/tools/model_fit
	build/tools/model_fit $(MODEL_FIT_ARGS)
	$(PYTHON) docs/tools/paste_output.py --table docs/generated.txt --only tests/cuda_emu/README.md:model-cv
model-cv-check: build/tools/model_fit
	build/tools/model_fit $(MODEL_FIT_ARGS) --check > /dev/null
# model-breakdown: where each lesson row's held-out prediction goes (cuBLAS, launches, each kernel's limiter,
# the marginal of its barriers, global-load waits and issue paths) and the rows that pull barrier_clk up
.PHONY: model-breakdown
model-breakdown: build/tools/model_fit
	build/tools/model_fit $(subst --csv docs/results/emu/model_cv.csv,,$(MODEL_FIT_ARGS)) --breakdown

# The model against the GPU report's measurements (docs/results/<gpu>/results.csv, then its subfolders'): every
# (lesson, version, size) in both, predicted / measured, as docs/results/emu/predicted_vs_<gpu>.csv. make predict
# PREDICT_GPU=H200 first.
GPU_RESULTS ?= docs/results/nvidia-h200
.PHONY: predict-compare
predict-compare:
	tests/cuda_emu/predict_compare.sh docs/results/emu/predicted_$(shell echo $(PREDICT_GPU) | tr A-Z a-z).csv \
	  "$(wildcard $(GPU_RESULTS)/results.csv) $(sort $(wildcard $(GPU_RESULTS)/*/results.csv))" \
	  docs/results/emu/predicted_vs_$(notdir $(GPU_RESULTS)).csv

# Every CUDA test, the planted-bug suite, and every CUDA version of each lesson (cuda-v1, cuda-v2, ...: read from
# its --help, so a new version row joins) at tiny and small, on the CPU.
# SANITIZE=1 runs the same under ASan+UBSan. EMU_SIZES: the lesson sizes to run (small ones: it is slow).
# EMU_SMALL_ARGS5: lesson 5's "small" here, V cut from 4096 to 512 as in emu-profile: still 8 to 16 vocabulary
# tiles per block row of every version and the same N and H, at an eighth of the emulated work.
# EMU_SUITES: the Check suites run first (CI's FMA run leaves out test_emu, the emulator's own suite: its planted
# kernels test the detectors, which that run switches off, not the lessons' rounding).
EMU_SIZES ?= tiny small
EMU_SMALL_ARGS5 ?= --size small --dims V=512
EMU_SUITES ?= test_cuda test_emu
# EMU_PAIRED_CASES: test_cuda's cases of kernels that load a bf16 WMMA fragment's registers as words where the
# layout pairs adjacent elements, run once more with EMU_WMMA_PAIRS=1 so that both paths run (none today).
EMU_PAIRED_CASES ?=
# EMU_PTX_CASES: test_cuda's cases of kernels that run only where WMMA's fragments hold PTX's register order, run
# once more with EMU_WMMA_PTX=1 (none today: mma.sync's fragments are PTX's by definition).
EMU_PTX_CASES ?=
.PHONY: test-emu
test-emu: check-deps
	$(MAKE) EMU=1 EMU_FMA=$(EMU_FMA) emu-build
	@export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1; status=0; b=$(EMU_BIN); \
	for t in $(EMU_SUITES); do echo "== $$b/$$t"; t0=$$(date +%s); ./$$b/$$t || status=1; \
	  echo "== $$b/$$t: $$(( $$(date +%s) - t0 )) s"; done; \
	case " $(EMU_SUITES) " in *" test_cuda "*) for c in $(EMU_PAIRED_CASES); do \
	  echo "== EMU_WMMA_PAIRS=1 CK_RUN_CASE=$$c $$b/test_cuda"; \
	  EMU_WMMA_PAIRS=1 CK_RUN_CASE=$$c ./$$b/test_cuda || status=1; done; \
	  for c in $(EMU_PTX_CASES); do echo "== EMU_WMMA_PTX=1 CK_RUN_CASE=$$c $$b/test_cuda"; \
	  EMU_WMMA_PTX=1 CK_RUN_CASE=$$c ./$$b/test_cuda || status=1; done;; esac; \
	for l in $(notdir $(LESSONS)); do impl=$$(./$$b/$$l --help | sed -n 's/^ *\(cuda-v[0-9]*\) .*/\1/p' | paste -sd,); \
	  for s in $(EMU_SIZES); do args="--size $$s"; [ $$l/$$s = lesson5/small ] && args="$(EMU_SMALL_ARGS5)"; \
	  echo "== $$b/$$l $$args --impl $$impl"; t0=$$(date +%s); \
	  ./$$b/$$l $$args --impl $$impl || status=1; echo "== $$b/$$l $$args: $$(( $$(date +%s) - t0 )) s"; \
	  done; done; \
	echo "== tests/cuda_emu/predict_smoke.sh $$b"; tests/cuda_emu/predict_smoke.sh $$b || status=1; \
	if [ $$status -ne 0 ]; then echo "make test-emu: FAILED"; else echo "make test-emu: all passed"; fi; exit $$status

.PHONY: emu-build
emu-build: # a recipe, not prerequisites: $(LESSONS) is complete only once the Makefile has been read
	@$(MAKE) --no-print-directory $(addprefix $(BIN)/,$(EMU_SUITES)) $(LESSONS)

# The dry run (emu_dry.cc): each lesson's CUDA versions at their forum size and at the largest dimensions the
# CLI accepts, address-only memory, boundary blocks only. SANITIZE=1 adds UBSan's signed-overflow check to the
# host and device code, and the plain build's lessons (build/emu), where they exist, answer the bisection's probes
# (dry_run.sh's PROBE_BIN). DRY_TIMEOUT: seconds per run (a run over it is listed as not checked).
.PHONY: dry-run
dry-run: check-deps
	$(MAKE) EMU=1 emu-build
	tests/cuda_emu/dry_run.sh $(EMU_BIN) $(if $(filter 1,$(SANITIZE)),build/emu)

# Every lesson as the 99 KB GPUs most learners own would run it (tests/cuda_emu/gpu_profiles.sh): under
# EMU_GPU=RTX4090 and EMU_GPU=L4, every cuda-vN at tiny and `cuda` at the forum size in the dry run end in PASS or a
# skip line with its reason, never a CUDA error; then README.md's table of which version runs on which GPU must be
# what the fit checks say (GPU_FIT_UPDATE=1 rewrites it). EMU_GPUS: the profiles (emu_gpu.cc's table).
EMU_GPUS ?= RTX4090 L4
.PHONY: emu-gpus
emu-gpus: check-deps
	$(MAKE) EMU=1 emu-build
	tests/cuda_emu/gpu_profiles.sh $(EMU_BIN) $(EMU_GPUS)
	tests/cuda_emu/gpu_fit_table.sh $(EMU_BIN) README.md

# nvcc's own account of every kernel (registers, spills, static shared memory) for sm_80 and sm_90, read by the
# emulator with EMU_PTXAS=build/ptxas.txt (emu_resources.cc): launch limits and occupancy. Needs nvcc; slow
# (one nvcc per .cu); headers are not dependencies here: `rm build/ptxas.txt` after changing one.
PTXAS_CU := $(wildcard kernels/*.cu optimized/*.cu)
.PHONY: ptxas
ptxas: build/ptxas.txt
build/ptxas.txt: $(PTXAS_CU)
	@test -n "$(NVCC)" || { echo "make ptxas: nvcc not found"; exit 1; }
	@mkdir -p build && rm -f $@.tmp
	@for f in $(PTXAS_CU); do echo "nvcc -Xptxas -v $$f"; $(NVCC) -std=c++17 -O2 -DHAVE_CUDA -Ikernels/runtime/ptx $(HOST_INC) \
	  -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -Xptxas -v -c -o /dev/null $$f \
	  2>>$@.tmp || exit 1; done
	@mv $@.tmp $@

# The product's inline PTX (kernels/runtime/ptx/mma_ptx.h) through nvcc and ptxas for sm_80 and sm_90: the kernel
# that test_emu runs against the emulator's <mma_ptx.h> (planted_mma.cu), compiled against the product's. Then
# hopper_ptx.h's the same way (planted_hopper.cu, and the time model's planted_hopper_model.cu): for sm_90a,
# where ptxas assembles every wrapper, and for sm_80 and sm_90, where the guarded wrappers compile to traps.
PTX_CHECK_FLAGS := -std=c++17 -O2 -DHAVE_CUDA -Ikernels/runtime/ptx -Xcompiler -Wall,-Wextra,-Wshadow,-Werror \
                   -Werror all-warnings
.PHONY: ptx-check
ptx-check:
	@test -n "$(NVCC)" || { echo "make ptx-check: nvcc not found"; exit 1; }
	@mkdir -p build/ptx-check
	@for a in sm_80 sm_90; do echo "nvcc -arch=$$a -c $(EMU_DIR)/planted_mma.cu"; \
	  $(NVCC) $(PTX_CHECK_FLAGS) -arch=$$a -c -o build/ptx-check/planted_mma_$$a.o $(EMU_DIR)/planted_mma.cu \
	  || exit 1; done
	@for f in planted_hopper planted_hopper_model; do for a in 90a 80 90; do \
	  echo "nvcc -gencode arch=compute_$$a,code=sm_$$a -c $(EMU_DIR)/$$f.cu"; \
	  $(NVCC) $(PTX_CHECK_FLAGS) -gencode arch=compute_$$a,code=sm_$$a -c \
	  -o build/ptx-check/$${f}_sm_$$a.o $(EMU_DIR)/$$f.cu || exit 1; done; done

# The memory-efficiency profile of every lesson's CUDA implementations at EMU_PROFILE_SIZE (lesson 5 at
# EMU_PROFILE_ARGS5: its kernels take minutes here, so the arguments can be cut down), one pass (EMU_ONE_PASS=1), as
# docs/results/emu/lessonN_profile.csv, plus lesson 3 with --deterministic (its bucket kernels) as
# lesson3_deterministic_profile.csv. Each kernel is held to the "Designed for:" / "Today:" statements of its entry
# in tests/cuda_emu/design_targets.txt, or else of its header comment in kernels/*.cu (emu_profile_design.cc): a
# miss, a kernel without a statement, or a kernel of kernels/*.cu
# that no run launched fails, and so does a run whose validation fails (the lesson's own check of each version
# against its float64 reference: CI's test-emu leaves the small size to this step).
EMU_PROFILE_SIZE ?= small
EMU_PROFILE_ARGS5 ?= --size small --dims V=512
EMU_PROFILE_ARGS3D ?= --size $(EMU_PROFILE_SIZE) --impl cuda-v3 --deterministic
# EMU_WMMA_PAIRS=1 EMU_WMMA_PTX=1: WMMA fragments in PTX's register order, the path a GPU takes.
# the version files with kernels of their own (bmm_v1, logchain_v3 and gru_v2 have none: cuBLAS calls, a graph)
EMU_PROFILE_SOURCES := $(shell grep -l '^__global__' $(wildcard kernels/*.cu))
.PHONY: emu-profile
emu-profile: check-deps
	$(MAKE) EMU=1 emu-build
	@mkdir -p docs/results/emu; status=0; b=$(EMU_BIN); d=docs/results/emu; \
	for l in $(notdir $(LESSONS)); do impl=$$(./$$b/$$l --help | sed -n 's/^ *\(cuda-v[0-9]*\) .*/\1/p' | paste -sd,); \
	  args="--size $(EMU_PROFILE_SIZE)"; [ $$l = lesson5 ] && args="$(EMU_PROFILE_ARGS5)"; \
	  echo "$$l $$d/$${l}_profile.csv $$args --impl $$impl"; \
	done >$$b/profile_runs.txt; \
	echo "lesson3 $$d/lesson3_deterministic_profile.csv $(EMU_PROFILE_ARGS3D)" >>$$b/profile_runs.txt; \
	csvs=$$(awk '{ print $$2 }' $$b/profile_runs.txt); \
	EMU_WMMA_PAIRS=1 EMU_WMMA_PTX=1 EMU_PROFILE_TARGETS="$(EMU_PROFILE_SOURCES)" EMU_PROFILE_DESIGNS=$(EMU_DIR)/design_targets.txt tests/cuda_emu/profile_runs.sh $$b <$$b/profile_runs.txt || status=1; \
	for k in $$(sed -n 's/^__global__ [^(]*[^A-Za-z0-9_(]\([A-Za-z0-9_][A-Za-z0-9_]*\) *(.*/\1/p' \
	  $(EMU_PROFILE_SOURCES)); do cat $$csvs | grep -q "^$$k,(kernel)," || \
	  { echo "emu-profile: $$k (kernels/) was launched by none of the runs above"; status=1; }; \
	done; \
	if [ $$status -ne 0 ]; then echo "make emu-profile: FAILED"; \
	else echo "make emu-profile: every kernel meets its stated design (or its stated Today figure)"; fi; \
	exit $$status
