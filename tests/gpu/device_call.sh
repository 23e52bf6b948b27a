#!/usr/bin/env bash
# tests/gpu/device_call.sh OUT - one lent-GPU call, everything in it that needs the GPU, from what travels with the
# working tree (build/gpu-bundle, build/libpeak_alloc.so); nothing is compiled there. What changed since the last
# report comes first, so a call cut short loses the least: four parts, each archived into OUT as soon as it ends.
#
#   report.tgz    tests/gpu/gpu_report.sh (steps preflight small sanitize forum) on the versions no GPU has run,
#                 each beside the measured version it improves on: lesson 3 cuda-v4, v5 and v6 beside v3, lesson
#                 5 cuda-v4 and v5 beside v1 (GPU_REPORT_IMPLS below); their predictions were committed before
#                 this call (docs/results/emu/predicted_h100.csv, predicted_h200.csv). For docs/results/<gpu>/new/
#   anchors.tgz   the report's anchors step (Liger-Kernel, Cut Cross-Entropy, flash-maxsim, nn.GRU, torch.compile
#                 at each lesson's forum size), from the wheels the bundle carries
#   pytorch.tgz   plots/pytorch_baseline.py: the seeds' PyTorch forms at the forum sizes (lesson 4 at medium, with
#                 its checkpointed and offloaded forms), each form's own measured peak, live bytes after forward
#                 and median times
#   stalls.tgz    ncu's warp-state, scheduler and pipe sections on the new versions' forward kernels, if time is
#                 left
#
# Budgets (seconds, inside one call of 600): report 300, anchors 150, pytorch 100, stalls what is left of 590.
# The bundle is unpacked by the report into build/gpu-bundle/unpacked (a later call that carries
# build/gpu-bundle again replaces it: unpack the payload yourself there).
set -uo pipefail
OUT=${1:?usage: $0 OUT}
cd "$(dirname "$0")/../.."
T0=$(date +%s)
left() { echo $((590 - ($(date +%s) - T0))); }
W=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv >"$W/nvidia-smi.txt" 2>&1

# 1. the new versions, beside what they improve on
IMPLS="3:cuda-v3,cuda-v4,cuda-v5,cuda-v6 5:cuda-v1,cuda-v4,cuda-v5"
GPU_REPORT_STEPS="preflight small sanitize forum" GPU_REPORT_IMPLS=$IMPLS GPU_REPORT_DIR=$W/report \
    timeout --kill-after=5 300 bash build/gpu-bundle/gpu-report.sh >"$W/report.out" 2>&1
echo "report exit $?" >>"$W/report.out"
mkdir -p "$W/report" && cp "$W/report.out" "$W/nvidia-smi.txt" "$W/report/"
tar -czf "$OUT/report.tgz" -C "$W" report
tail -5 "$W/report.out"

# 2. the anchors on the same GPU (the report's step alone; the preflight installs their wheels)
secs=$(($(left) - 205))
[ "$secs" -gt 150 ] && secs=150
if [ "$secs" -gt 30 ]; then
    GPU_REPORT_STEPS="preflight anchors" GPU_REPORT_DIR=$W/anchors \
        timeout --kill-after=5 "$secs" bash build/gpu-bundle/gpu-report.sh >"$W/anchors.out" 2>&1
    echo "anchors exit $?" >>"$W/anchors.out"
else
    mkdir -p "$W/anchors" && echo "anchors: no time left" >"$W/anchors.out"
fi
mkdir -p "$W/anchors" && cp "$W/anchors.out" "$W/anchors/"
tar -czf "$OUT/anchors.tgz" -C "$W" anchors

# 3. PyTorch's own forms on the same GPU
mkdir -p "$W/pytorch"
export PYTHONUNBUFFERED=1 LD_PRELOAD=
for ls in 4:medium 5:forum 2:forum 1:forum 3:forum; do
    l=${ls%%:*} s=${ls#*:} secs=$(($(left) - 95))
    [ "$secs" -gt 5 ] || { echo "lesson $l: no time left" >>"$W/pytorch/pytorch.log"; continue; }
    [ "$secs" -gt 30 ] && secs=30
    echo "== lesson $l --size $s (at most $secs s)" >>"$W/pytorch/pytorch.log"
    timeout --kill-after=3 "$secs" python3 plots/pytorch_baseline.py --lesson "$l" --size "$s" --repeat 3 \
        --csv "$W/pytorch/pytorch.csv" >>"$W/pytorch/pytorch.log" 2>&1
    echo "exit $?" >>"$W/pytorch/pytorch.log"
done
tar -czf "$OUT/pytorch.tgz" -C "$W" pytorch
grep -v '^ *$' "$W/pytorch/pytorch.log" | tail -20

# 4. where the new versions' warps wait
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
stall lesson3_v6_forward 25 '^ms_forward_v6' 3 --size medium --dims K=256 --impl cuda-v6
stall lesson3_v5_forward 25 '^ms_forward_v5' 3 --size medium --dims K=256 --impl cuda-v5
stall lesson3_v4_forward 25 '^ms_forward_v4' 3 --size medium --dims K=256 --impl cuda-v4
stall lesson5_v5_forward 20 '^lce5_' 5 --size medium --impl cuda-v5
stall lesson5_v4_forward 20 '^lce4_forward_kernel$' 5 --size medium --impl cuda-v4
tar -czf "$OUT/stalls.tgz" -C "$W" stalls
echo "device_call: $(($(date +%s) - T0)) s"
