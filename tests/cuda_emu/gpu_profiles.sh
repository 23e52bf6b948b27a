#!/usr/bin/env bash
# gpu_profiles.sh BIN [GPU...] - every lesson as a smaller GPU would run it: under EMU_GPU=NAME (the emulated
# device reports that GPU of the time model's table and its launch limits hold, tests/cuda_emu/README.md), each
# lesson's every cuda-vN and its `cuda` at tiny, validated, then `cuda` at the forum size (lesson 4: medium) in the dry
# run. Each must end in PASS, a version that does not fit skipped with its reason, never a CUDA error.
# BIN: a directory of emulation-build lessons (build/emu). GPU: the profiles (default RTX4090 L4: 99 KB of shared
# memory per block, as most learners' GPUs).
set -u
bin=${1:-build/emu}
shift || true
gpus=${*:-RTX4090 L4}
mem=141000000000
status=0

check() { # gpu, label, exit status, output: one line of report
  local g=$1 what=$2 rc=$3 out=$4 note skipped
  skipped=$(echo "$out" | grep -c "^cuda[-v0-9]* *skipped" || true)
  note="ok, $skipped skipped"
  if [ "$rc" -ne 0 ] || echo "$out" | grep -q "CUDA error\|cuBLAS error\|cuda-emu:\|runtime error"; then
    note="FAILED (exit $rc)"
    status=1
  fi
  printf "  %-8s %-58s %s\n" "$g" "$what" "$note"
  if [ "${note#FAILED}" != "$note" ]; then
    echo "$out" | grep -m 6 "CUDA error\|cuBLAS error\|cuda-emu:\|runtime error\|FAIL" | sed 's/^/      /'
  fi
  echo "$out" | grep "^cuda[-v0-9]* *skipped" | sed 's/^/      /'
  return 0
}

for g in $gpus; do
  for l in 1 2 3 4 5; do
    versions=$("$bin/lesson$l" --help | sed -n 's/^ *\(cuda-v[0-9]*\) .*/\1/p' | paste -sd,)
    out=$(EMU_GPU=$g "$bin/lesson$l" --size tiny --impl "$versions" 2>&1)
    check "$g" "lesson$l --size tiny --impl $versions" $? "$out"
    out=$(EMU_GPU=$g "$bin/lesson$l" --size tiny --impl cuda 2>&1)
    rc=$?
    picked=$(echo "$out" | sed -n 's/^  cuda *= \(cuda-v[0-9]*\).*/\1/p' | head -n 1)
    check "$g" "lesson$l --size tiny --impl cuda (${picked:-?})" $rc "$out"
    size=forum
    [ $l = 4 ] && size=medium
    out=$(EMU_DRY=1 EMU_GPU=$g timeout 60 "$bin/lesson$l" --size $size --impl cuda --mem-limit $mem 2>&1)
    rc=$?
    picked=$(echo "$out" | sed -n 's/^  cuda *= \(cuda-v[0-9]*\).*/\1/p' | head -n 1)
    check "$g" "lesson$l --size $size --impl cuda (dry run: ${picked:-?})" $rc "$out"
  done
done
[ $status -eq 0 ] && echo "gpu profiles: no failure" || echo "gpu profiles: FAILED"
exit $status
