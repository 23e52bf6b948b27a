#!/usr/bin/env bash
# tests/gpu/issue27_followup.sh OUT - the second lent-GPU call after tests/gpu/device_call.sh, from the same bundle
# (build/gpu-bundle, carried): what the first call's single timed pass per version and its section summaries
# could not settle. Three parts, archived together into OUT/followup.tgz as they end:
#
#   times     each lesson's issue-27 versions in one process, --repeat 7 (--times: every timed run, the spread),
#             so that two versions are compared on one machine, one input set, and more than one pass each
#   kernels   ncu's gpu__time_duration of every kernel one pass launches (cuBLAS's too) for the newest version
#             of lessons 2, 4 and 5 at the forum size (lesson 4: medium): where each pass's time goes
#   sampling  ncu's warp-stall sampling per SASS instruction (the source page as CSV) of the kernels that hold
#             most of lessons 2 and 4's time, at the card's own clock (--clock-control none)
#
#   sync      grid_sync_cost: what one grid.sync costs with no work between, at lesson 4's grids (a third call)
#   sampling5 the same sampling for lesson 5 cuda-v4's forward and dx kernels at medium (the third call)
#   scaling2  lesson 2 cuda-v5 at the forum's shape with n = 250, 500, 1000 and 2000 rows (63 to 500 blocks of 4
#             rows on 132 SMs): does a second block per SM cost time? (scaling_*.csv, read by no tool that orders;
#             prepared for a later call: no machine was lent for it on 2026-11-28)
#
# FOLLOWUP_PARTS names the parts to run (default "times kernels sampling"; the third call ran "sync sampling5").
# Budget: 330 s in all, each run under its own timeout; a run that finds no time left says so.
set -uo pipefail
OUT=${1:?usage: $0 OUT}
cd "$(dirname "$0")/../.."
T0=$(date +%s)
left() { echo $((330 - ($(date +%s) - T0))); }
W=$(mktemp -d)/followup
mkdir -p "$W"
U=build/gpu-bundle/unpacked
[ -x "$U/bin/lesson1" ] || { mkdir -p "$U" && tar -xJf build/gpu-bundle/payload.tar.xz -C "$U"; }
B=$U/bin
export CUDA_REQUIRE_DEVICE=1
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv >"$W/nvidia-smi.txt" 2>&1

# run NAME SECS CMD...: one process under its own timeout, its output in W/NAME.txt with its exit status
run() {
    local name=$1 secs=$2
    shift 2
    [ "$(left)" -gt "$secs" ] || { echo "$name: no time left" | tee "$W/$name.txt"; return; }
    timeout --kill-after=5 "$secs" "$@" >"$W/$name.txt" 2>&1
    echo "exit $? after $(($(date +%s) - T0)) s" | tee -a "$W/$name.txt"
}

PARTS=" ${FOLLOWUP_PARTS:-times kernels sampling} "
part() { case $PARTS in *" $1 "*) return 0 ;; esac; return 1; }

# 0. what a grid.sync costs
if part sync; then
    run grid_sync_cost 30 "$B/grid_sync_cost"
    run grid_sync_cost_16384 60 "$B/grid_sync_cost" 16384
    tar -czf "$OUT/followup.tgz" -C "$(dirname "$W")" followup
fi

# 1. repeated timings, one process per lesson
part times && {
run times_lesson2 40 "$B/lesson2" --size forum --impl cuda-v3,cuda-v4,cuda-v5 --repeat 7 \
    --csv "$W/results.csv" --times "$W/times.csv"
run times_lesson4 60 "$B/lesson4" --size medium --impl cuda-v2,cuda-v3,cuda-v4,cuda-v5 --repeat 7 \
    --csv "$W/results.csv" --times "$W/times.csv"
run times_lesson5 70 "$B/lesson5" --size forum --impl cuda-v1,cuda-v4 --repeat 5 \
    --csv "$W/results.csv" --times "$W/times.csv"
run times_lesson3 70 "$B/lesson3" --size forum --impl cuda-v3,cuda-v4,cuda-v5 --repeat 3 \
    --csv "$W/results.csv" --times "$W/times.csv"
tar -czf "$OUT/followup.tgz" -C "$(dirname "$W")" followup
}

# 2. every kernel's time in one pass (--repeat 1: one run, no warm-up; ncu serialises the launches)
kern() { # NAME SECS LESSON ARGS...
    local name=$1 secs=$2 l=$3
    shift 3
    run "$name" "$secs" "$NCU" --clock-control none --metrics gpu__time_duration.sum --csv --page raw \
        --print-kernel-base function "$B/lesson$l" "$@"
}
part kernels && {
kern kernels_lesson2_v5 30 2 --size forum --impl cuda-v5
kern kernels_lesson4_v5 40 4 --size medium --impl cuda-v5
kern kernels_lesson5_v4 60 5 --size forum --impl cuda-v4
tar -czf "$OUT/followup.tgz" -C "$(dirname "$W")" followup
}

# 3. warp-stall sampling per SASS instruction
sample() { # NAME SECS KERNEL LESSON ARGS...
    local name=$1 secs=$2 k=$3 l=$4
    shift 4
    run "$name" "$secs" "$NCU" --clock-control none --section SourceCounters --section WarpStateStats \
        --kernel-name "regex:^$k\$" --launch-count 1 --page source --print-source sass --csv "$B/lesson$l" "$@"
}
part sampling && {
sample sampling_lesson4_v5_backward 45 gru5_backward_kernel 4 --size medium --impl cuda-v5
sample sampling_lesson4_v4_forward 45 gru4_forward_kernel 4 --size medium --impl cuda-v5
sample sampling_lesson2_v5_forward 35 lc5_forward_kernel 2 --size forum --impl cuda-v5
sample sampling_lesson2_v5_backward 35 lc5_backward_kernel 2 --size forum --impl cuda-v5
tar -czf "$OUT/followup.tgz" -C "$(dirname "$W")" followup
}
part scaling2 && {
for n in 250 500 1000 2000; do
    run scaling_lesson2_n$n 25 "$B/lesson2" --size forum --dims n=$n --impl cuda-v5 --repeat 5 \
        --csv "$W/scaling_results.csv" --times "$W/scaling_times.csv"
done
tar -czf "$OUT/followup.tgz" -C "$(dirname "$W")" followup
}
part sampling5 && {
sample sampling_lesson5_v4_forward 40 lce4_forward_kernel 5 --size medium --impl cuda-v4
sample sampling_lesson5_v4_dx 40 lce4_dx_kernel 5 --size medium --impl cuda-v4
tar -czf "$OUT/followup.tgz" -C "$(dirname "$W")" followup
}
grep -h "exit\|no time" "$W"/*.txt | tail -12
echo "issue27_followup: $(($(date +%s) - T0)) s"
