#!/usr/bin/env bash
# bench/gpu_report.sh - `make gpu-report`: what one GPU can tell this repository, in one call of under 10 minutes,
# from binaries built elsewhere (no compiler needed here):
#
#   make STATIC_CHECK=1 test-build          # on the build machine: Check linked statically into the tests
#   (copy build/test_cuda and build/lesson1..5 to the GPU machine, beside a checkout of the same commit)
#   make gpu-report                         # on the GPU machine: never rebuilds
#
# Steps, each with its own time budget (seconds, GPU_REPORT_SCALE=2 doubles them all), in this order:
#   preflight  the binaries exist, their shared libraries resolve (ldd), test_cuda has Check linked in
#   tests      build/test_cuda with CUDA_REQUIRE_DEVICE=1 (a missing GPU is then a failure, not a skip)     90
#   sanitize   compute-sanitizer memcheck, racecheck, initcheck, synccheck over every lesson's CUDA versions
#              at size small (the versions are read from each binary's --help)                              180
#   forum      each lesson's CUDA versions at its forum size, --mem-limit = 90% of the GPU's memory; a version
#              over it runs at medium instead, and the log says so                                          80
#   bench      bench/run.sh, lesson by lesson, over the sweeps of bench/sweeps.txt restricted to their cuda
#              runs (device rows timed by CUDA events in the session), REPEAT=3                              120
#   torch      plots/pytorch_baseline.py on the GPU (torch.cuda.max_memory_allocated) at the sweeps' torch=
#              points, when a python with torch (CUDA) is here                                                45
#   figures    plots/bench_plots.py --no-docs into <results>/img, when matplotlib imports                       25
# Results: docs/results/<gpu-name>/, or GPU_REPORT_DIR (gpu_report.txt, the logs, lessonN.csv, img/). A step that cannot run
# (no GPU, no compute-sanitizer, no torch, out of time) is listed under SKIPPED with the reason. Without a GPU
# only the CPU-side steps run (preflight, test_cuda's no-device path, the forum formulas by --predict) and the
# script exits 0. Exit 1 when a test, a sanitizer or a lesson failed.
set -uo pipefail
cd "$(dirname "$0")/.."

BIN=${BIN:-build}
SCALE=${GPU_REPORT_SCALE:-1}
START=$(date +%s)
SKIPPED=() FAILED=() PASSED=()
LESSON_NS=$(ls "$BIN"/lesson[0-9] 2>/dev/null | sed 's/.*lesson//' | sort -n | tr '\n' ' ')

say() { echo "gpu-report: $*"; }
skip() { SKIPPED+=("$1"); say "SKIPPED $1"; }
budget() { echo $(($1 * SCALE)); }
elapsed() { echo $(($(date +%s) - START)); }
# impls N: the lesson's CUDA versions cuda-v1, cuda-v2, ..., from its --help (the alias "cuda" left out)
impls() { "$BIN/lesson$1" --help 2>/dev/null | awk '/^  --impl/ {f = 1; next} /^  --/ {f = 0} f && $1 ~ /^cuda-v[0-9]+$/ {print $1}'; }
# forum_size N: "forum", or the lesson's largest preset when it has no forum size (lesson 4)
forum_size() {
    "$BIN/lesson$1" --help 2>/dev/null | awk '/^  --size/ {f = 1; next} /^  --/ {f = 0} f {s = $1} f && $1 == "forum" {print; exit}
        END {if (s != "") print s}' | awk '{print $1; exit}'
}
# run_logged LOG SECONDS CMD...: runs CMD under timeout, output to LOG; the exit status, 124 on timeout
run_logged() { local log=$1 secs=$2; shift 2; timeout --kill-after=5 "$secs" "$@" >"$log" 2>&1; }

# ---- preflight -------------------------------------------------------------------------------------------
preflight() {
    local missing=()
    for b in test_cuda $(printf 'lesson%s ' $LESSON_NS); do [ -x "$BIN/$b" ] || missing+=("$b"); done
    if [ -z "$LESSON_NS" ] || [ ${#missing[@]} -gt 0 ]; then
        say "missing binaries in $BIN/: ${missing[*]:-lesson1..5} (make STATIC_CHECK=1 test-build, here or elsewhere)"
    fi
    for b in "$BIN"/test_cuda "$BIN"/lesson[0-9]; do
        [ -x "$b" ] || continue
        local nf; nf=$(ldd "$b" 2>/dev/null | awk '/not found/ {print $1}' | tr '\n' ' ')
        [ -n "$nf" ] && { say "$b: shared libraries not found here: $nf"; FAILED+=("preflight: $b needs $nf"); }
    done
    if [ -x "$BIN/test_cuda" ] && ldd "$BIN/test_cuda" 2>/dev/null | grep -q 'libcheck'; then
        say "$BIN/test_cuda links libcheck dynamically: build it with make STATIC_CHECK=1 test-build to carry it"
    fi
    [ -x "$BIN/test_cuda" ] && PASSED+=("preflight")
}

# ---- the device ------------------------------------------------------------------------------------------
GPU=0 GPU_NAME= GPU_BYTES=
detect_gpu() {
    [ -x "$BIN/lesson1" ] || return
    CUDA_REQUIRE_DEVICE=1 timeout 30 "$BIN/lesson1" --size tiny --impl cuda >/dev/null 2>&1 || return
    GPU=1
    GPU_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
    GPU_NAME=${GPU_NAME:-gpu}
    local mib; mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits 2>/dev/null | head -1)
    [ -n "$mib" ] && GPU_BYTES=$((mib * 1048576 / 10 * 9))
}

# ---- steps -----------------------------------------------------------------------------------------------
step_tests() {
    local log=$OUT/test_cuda.log rc=0
    CUDA_REQUIRE_DEVICE=1 run_logged "$log" "$(budget 90)" "$BIN/test_cuda" || rc=$?
    tail -3 "$log"
    case $rc in 0) PASSED+=("test_cuda") ;; 124|137) skip "test_cuda: out of its $(budget 90) s (see $log)" ;;
    *) FAILED+=("test_cuda (exit $rc, $log)") ;; esac
}

step_sanitize() {
    local cs; cs=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer \
        /usr/local/cuda/compute-sanitizer/compute-sanitizer 2>/dev/null | head -1)
    [ -n "$cs" ] || { skip "compute-sanitizer: not installed on this machine (it comes with the CUDA toolkit)"; return; }
    local end=$(($(elapsed) + $(budget 180))) n=0 bad=0 late=()
    for tool in memcheck racecheck initcheck synccheck; do
        for L in $LESSON_NS; do
            for impl in $(impls "$L"); do
                local left=$((end - $(elapsed)))
                if [ $left -lt 5 ]; then late+=("$tool:lesson$L:$impl"); continue; fi
                local log=$OUT/sanitize_${tool}_lesson${L}_${impl}.log rc=0
                run_logged "$log" "$left" "$cs" --tool "$tool" --error-exitcode 9 "$BIN/lesson$L" --size small \
                    --impl "$impl" || rc=$?
                n=$((n + 1))
                case $rc in 0) ;; 124|137) late+=("$tool:lesson$L:$impl (timed out)") ;;
                *) bad=$((bad + 1)); FAILED+=("$tool lesson$L $impl (exit $rc, $log)") ;; esac
            done
        done
    done
    say "compute-sanitizer: $n runs, $bad with errors"
    [ $bad = 0 ] && [ $n -gt 0 ] && PASSED+=("compute-sanitizer ($n runs)")
    [ ${#late[@]} -gt 0 ] && skip "compute-sanitizer, out of its $(budget 180) s: ${late[*]}"
}

# forum_one L: the lesson's CUDA versions at forum; those over the GPU's memory again at medium
forum_one() {
    local L=$1 secs=$2 list log=$OUT/forum_lesson$1.txt rc=0 size
    list=$(impls "$L" | paste -sd, -)
    [ -n "$list" ] || return 0
    size=$(forum_size "$L")
    [ "$size" = forum ] || say "lesson $L has no forum size: its largest preset, $size, instead"
    run_logged "$log" "$secs" "$BIN/lesson$L" --size "$size" --impl "$list" ${GPU_BYTES:+--mem-limit "$GPU_BYTES"} \
        --csv "$OUT/forum.csv" || rc=$?
    local over; over=$(awk '$2 == "skipped:" && /exceeds --mem-limit/ {printf "%s%s", s, $1; s = ","}' "$log")
    case $rc in 0) ;; 124|137) skip "lesson $L at $size: out of its $secs s ($log)"; return ;;
    *) [ -n "$over" ] || { FAILED+=("lesson $L forum (exit $rc, $log)"); return; } ;; esac
    PASSED+=("lesson $L at $size: $(grep -c '^cuda' "$log") rows")
    if [ -n "$over" ]; then
        say "lesson $L: $over over the GPU's memory at forum: run at medium instead (forum_lesson${L}_medium.txt)"
        run_logged "$OUT/forum_lesson${L}_medium.txt" "$secs" "$BIN/lesson$L" --size medium --impl "$over" \
            --csv "$OUT/forum.csv" || FAILED+=("lesson $L medium for $over")
    fi
}

step_forum() { # the step's seconds shared by the lessons left: what one does not use, the next ones may
    local n end=$(($(elapsed) + $(budget 80)))
    n=$(echo $LESSON_NS | wc -w)
    for L in $LESSON_NS; do
        local secs=$(((end - $(elapsed)) / n))
        n=$((n - 1))
        if [ $secs -lt 5 ]; then skip "lesson $L at forum: out of the step's $(budget 80) s"; continue; fi
        forum_one "$L" "$secs"
    done
}

# The sweeps with only their cuda runs (and no CPU timeline): the bench's GPU rows in minutes, not the CPU's hour.
gpu_sweeps() {
    awk '/^[[:space:]]*#/ || !NF {next}
         { out = ""; keep = 1
           for (i = 1; i <= NF; i++) {
             if ($i ~ /^timeline=/) continue
             if ($i ~ /^run=/) { n = split(substr($i, 5), r, ","); s = ""
               for (j = 1; j <= n; j++) if (r[j] ~ /^cuda/) s = s (s == "" ? "" : ",") r[j]
               if (s == "") keep = 0; $i = "run=" s }
             out = out (out == "" ? "" : " ") $i }
           if (keep) print out }' bench/sweeps.txt
}

step_bench() { # lesson by lesson, so that one slow lesson cannot take every other lesson's rows
    gpu_sweeps >"$OUT/sweeps_gpu.txt"
    local n end=$(($(elapsed) + $(budget 120)))
    n=$(echo $LESSON_NS | wc -w)
    for L in $LESSON_NS; do
        local secs=$(((end - $(elapsed)) / n)) rc=0 log=$OUT/bench_lesson$L.log
        n=$((n - 1))
        if [ $secs -lt 5 ]; then skip "bench lesson $L: out of the step's $(budget 120) s"; continue; fi
        BIN=$BIN BENCH_DIR=$OUT REPEAT=3 TORCH_PYTHON=none SWEEPS=$OUT/sweeps_gpu.txt \
            run_logged "$log" "$secs" bench/run.sh "$L" || rc=$?
        case $rc in 0) PASSED+=("bench lesson $L (cuda rows, median of 3)") ;;
        124|137) skip "bench lesson $L: out of its $secs s: the rows written so far are in $OUT/lesson$L.csv" ;;
        *) FAILED+=("bench lesson $L (exit $rc, $log)") ;; esac
    done
}

step_torch() {
    local py=
    for p in python3 /usr/bin/python3; do
        command -v "$p" >/dev/null && "$p" -c 'import torch, sys; sys.exit(not torch.cuda.is_available())' \
            2>/dev/null && { py=$p; break; }
    done
    [ -n "$py" ] || { skip "PyTorch GPU baseline: no python here imports torch with CUDA"; return; }
    local end=$(($(elapsed) + $(budget 45)))
    for L in $LESSON_NS; do
        local left=$((end - $(elapsed)))
        [ $left -ge 5 ] || { skip "PyTorch GPU baseline, lesson $L: out of its $(budget 45) s"; continue; }
        local rc=0
        run_logged "$OUT/torch_lesson$L.log" "$left" "$py" plots/pytorch_baseline.py --lesson "$L" \
            --sweeps "$OUT/sweeps_gpu.txt" --repeat 3 --csv "$OUT/lesson$L.csv" --runs "$OUT/lesson${L}_runs.csv" || rc=$?
        case $rc in 0) PASSED+=("PyTorch GPU baseline, lesson $L") ;;
        124|137) skip "PyTorch GPU baseline, lesson $L: out of its $left s ($OUT/torch_lesson$L.log)" ;;
        *) FAILED+=("PyTorch GPU baseline, lesson $L (exit $rc, $OUT/torch_lesson$L.log)") ;; esac
    done
}

step_figures() {
    python3 -c 'import matplotlib' 2>/dev/null || { skip "figures: matplotlib does not import here (draw them \
later with: python3 plots/bench_plots.py --results $OUT --out $OUT/img --no-docs)"; return; }
    run_logged "$OUT/figures.log" "$(budget 25)" python3 plots/bench_plots.py --results "$OUT" --out "$OUT/img" \
        --no-docs && PASSED+=("figures ($OUT/img)") || FAILED+=("figures ($OUT/figures.log)")
}

# ---- without a GPU: the CPU-side steps -------------------------------------------------------------------
cpu_side() {
    if [ -x "$BIN/test_cuda" ]; then
        local rc=0 out
        out=$(timeout 60 "$BIN/test_cuda" 2>&1) || rc=$?
        echo "$out" | tail -2
        [ $rc = 0 ] && PASSED+=("test_cuda without a device (skips, exit 0)") || FAILED+=("test_cuda without a device (exit $rc)")
    fi
    for L in $LESSON_NS; do
        local list; list=$(impls "$L" | paste -sd, -)
        [ -n "$list" ] || continue
        local size; size=$(forum_size "$L")
        timeout 60 "$BIN/lesson$L" --size "$size" --impl "$list" --predict >/dev/null 2>&1 &&
            PASSED+=("lesson $L: the CUDA versions' formulas at $size (--predict)") ||
            FAILED+=("lesson $L --predict at $size")
    done
    for s in "test_cuda with CUDA_REQUIRE_DEVICE=1" "compute-sanitizer memcheck, racecheck, initcheck, synccheck" \
             "each lesson's CUDA versions at forum size" "bench sweeps, cuda rows (CUDA events)" \
             "PyTorch GPU baseline (torch.cuda.max_memory_allocated)" "figures of the GPU results"; do
        skip "$s: no CUDA device here"
    done
}

summary() {
    echo
    say "done in $(elapsed) s${GPU_NAME:+ on $GPU_NAME}"
    for p in "${PASSED[@]}"; do echo "  passed:  $p"; done
    for s in "${SKIPPED[@]}"; do echo "  SKIPPED: $s"; done
    for f in "${FAILED[@]}"; do echo "  FAILED:  $f"; done
}

preflight
detect_gpu
if [ $GPU = 0 ]; then
    say "no CUDA device usable by $BIN/lesson1: running the CPU-side steps only"
    cpu_side
    summary
    [ ${#FAILED[@]} = 0 ]
    exit $?
fi
OUT=${GPU_REPORT_DIR:-docs/results/$(printf '%s' "$GPU_NAME" | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9-')}
mkdir -p "$OUT"
say "$GPU_NAME, ${GPU_BYTES:-?} bytes usable (90%); results in $OUT"
step_tests
step_sanitize
step_forum
step_bench
step_torch
step_figures
summary | tee "$OUT/gpu_report.txt"
[ ${#FAILED[@]} = 0 ]
