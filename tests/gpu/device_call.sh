#!/usr/bin/env bash
# tests/gpu/device_call.sh OUT - one lent-GPU call, everything in it that needs the GPU, from what travels with the
# working tree (build/gpu-bundle, build/libpeak_alloc.so); nothing is compiled there. Three parts, each archived
# into OUT as soon as it ends, so a part cut off by the call's limit loses only itself:
#
#   report.tgz    tests/gpu/gpu_report.sh from the bundle on issue 27's new versions and the ones they improve on
#                 (GPU_REPORT_IMPLS below; the other versions were measured on both GPUs already): its eight files,
#                 for docs/results/<gpu>/issue27/
#   stalls.tgz    ncu's warp-state, scheduler and pipe sections on the kernels issues 27 and 48 move: lesson 3
#                 cuda-v4's forward at the forum's K = 256 (mma.sync TF32 from a cp.async ring), lesson 5
#                 cuda-v4's forward and dx kernels (mma.sync bf16), the persistent kernels whose gap to the 3x target the docs
#                 give from the model alone (lesson 2 cuda-v4's forward and cuda-v5's two walks at the forum size,
#                 lesson 4 cuda-v3's and cuda-v4's forward and cuda-v5's backward at medium: the measured reason), then lesson 3 cuda-v5's forward (v4 on 16-bit operands, if time
#                 is left); and for lesson 3 cuda-v4's forward, every
#                 SASS instruction's executed count
#                 (ncu's source page), to set beside the time model's basic-block executions (EMU_MODEL_DEBUG=3 at
#                 the same size)
#   pytorch.tgz   plots/pytorch_baseline.py on the GPU: the seeds' PyTorch forms at the C lessons' forum sizes
#                 (lesson 4 at medium: it has no forum size), each form's own measured peak and median times
#
# Budgets (seconds): report 520 (its steps' own budgets add up to 500; it takes about half), stalls 170 + 25 (a stall that finds no time left says so), pytorch what is left
# of 590 (the H100's was taken already), inside one call of 600. The bundle
# is unpacked by the report into build/gpu-bundle/unpacked (a later call that carries build/gpu-bundle again
# replaces it: unpack the payload yourself there).
set -uo pipefail
OUT=${1:?usage: $0 OUT}
cd "$(dirname "$0")/../.."
T0=$(date +%s)
left() { echo $((590 - ($(date +%s) - T0))); }
W=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv >"$W/nvidia-smi.txt" 2>&1

# 1. the report
IMPLS="2:cuda-v3,cuda-v4,cuda-v5 3:cuda-v3,cuda-v4,cuda-v5 4:cuda-v2,cuda-v3,cuda-v4,cuda-v5"
IMPLS="$IMPLS 5:cuda-v1,cuda-v4"
GPU_REPORT_IMPLS=$IMPLS GPU_REPORT_DIR=$W/report timeout --kill-after=5 520 bash build/gpu-bundle/gpu-report.sh \
    >"$W/report.out" 2>&1
echo "report exit $?" >>"$W/report.out"
mkdir -p "$W/report" && cp "$W/report.out" "$W/nvidia-smi.txt" "$W/report/"
tar -czf "$OUT/report.tgz" -C "$W" report
tail -5 "$W/report.out"

# 2. where the two slowest kernels' warps wait
B=build/gpu-bundle/unpacked/bin
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
mkdir -p "$W/stalls"
SECTIONS=(--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats
          --section Occupancy --section LaunchStats --section InstructionStats)
stall() { # NAME SECS KERNEL_REGEX LESSON ARGS...
    local name=$1 secs=$2 k=$3 l=$4
    shift 4
    [ "$(left)" -gt "$secs" ] || { echo "$name: no time left" >"$W/stalls/$name.txt"; return; }
    timeout --kill-after=5 "$secs" "$NCU" "${SECTIONS[@]}" --kernel-name "regex:$k" --launch-count 1 \
        "$B/lesson$l" "$@" >"$W/stalls/$name.txt" 2>&1
    echo "exit $?" >>"$W/stalls/$name.txt"
}
stall lesson3_v4_forward 25 '^ms_forward_v4$' 3 --size medium --dims K=256 --impl cuda-v4
stall lesson5_v4_forward 20 '^lce4_forward_kernel$' 5 --size medium --impl cuda-v4
stall lesson5_v4_dx 20 '^lce4_dx_kernel$' 5 --size medium --impl cuda-v4
stall lesson2_v4_forward 20 '^lc4_forward_kernel$' 2 --size forum --impl cuda-v4
stall lesson2_v5_forward 20 '^lc5_forward_kernel$' 2 --size forum --impl cuda-v5
stall lesson2_v5_backward 20 '^lc5_backward_kernel$' 2 --size forum --impl cuda-v5
stall lesson4_v3_forward 20 '^gru3_forward_kernel$' 4 --size medium --impl cuda-v3
stall lesson4_v4_forward 20 '^gru4_forward_kernel$' 4 --size medium --impl cuda-v4
stall lesson4_v5_backward 20 '^gru5_backward_kernel$' 4 --size medium --impl cuda-v5
if [ "$(left)" -gt 30 ]; then
    timeout --kill-after=5 25 "$NCU" --section SourceCounters --kernel-name 'regex:^ms_forward_v4$' --launch-count 1 \
        --page source --print-source sass --csv "$B/lesson3" --size medium --impl cuda-v4 \
        >"$W/stalls/lesson3_v4_forward_sass_counts.csv" 2>&1
    echo "exit $?" >>"$W/stalls/lesson3_v4_forward_sass_counts.csv"
fi
stall lesson3_v5_forward 25 '^ms_forward_v5$' 3 --size medium --dims K=256 --impl cuda-v5
tar -czf "$OUT/stalls.tgz" -C "$W" stalls

# 3. PyTorch on the same GPU
mkdir -p "$W/pytorch"
export PYTHONUNBUFFERED=1 LD_PRELOAD=
for ls in 3:forum 2:forum 1:forum 5:forum 4:medium; do
    l=${ls%%:*} s=${ls#*:} secs=$(($(left) - 3))
    [ "$secs" -gt 5 ] || { echo "lesson $l: no time left" >>"$W/pytorch/pytorch.log"; continue; }
    [ "$secs" -gt 40 ] && secs=40
    echo "== lesson $l --size $s (at most $secs s)" >>"$W/pytorch/pytorch.log"
    timeout --kill-after=3 "$secs" python3 plots/pytorch_baseline.py --lesson "$l" --size "$s" --repeat 3 \
        --csv "$W/pytorch/pytorch.csv" >>"$W/pytorch/pytorch.log" 2>&1
    echo "exit $?" >>"$W/pytorch/pytorch.log"
done
tar -czf "$OUT/pytorch.tgz" -C "$W" pytorch
cat "$W/pytorch/pytorch.log" | grep -v '^ *$' | tail -30
echo "device_call: $(($(date +%s) - T0)) s"
