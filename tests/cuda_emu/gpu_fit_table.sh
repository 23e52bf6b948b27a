#!/usr/bin/env bash
# gpu_fit_table.sh BIN [README] - which GPU each CUDA version runs on, as the versions' own fit checks say
# (kernels/runtime/cuda_fit.h): every cuda-vN of every lesson at its forum size (lesson 4: medium) in the dry run
# under EMU_GPU=NAME for each GPU of the time model's table, a markdown table of "runs" or the skip reason's
# figure. With README: the table between its "gpu-fit" markers must be this one (exit 1 if not); GPU_FIT_UPDATE=1
# writes it there instead.
set -u
bin=${1:-build/emu}
readme=${2:-}
gpus="A100 H100 RTX4090 L4 RTX5090 A6000"
mem=141000000000
table=$(mktemp)
trap 'rm -f "$table"' EXIT
{
  printf '| version |'
  for g in $gpus; do printf ' %s |' "$g"; done
  printf '\n| --- |'
  for g in $gpus; do printf ' --- |'; done
  printf '\n'
  for l in 1 2 3 4 5; do
    size=forum
    [ $l = 4 ] && size=medium
    versions=$("$bin/lesson$l" --help | sed -n 's/^ *\(cuda-v[0-9]*\) .*/\1/p' | paste -sd,)
    declare -A cell=()
    for g in $gpus; do
      out=$(EMU_DRY=2 EMU_GPU=$g "$bin/lesson$l" --size $size --impl "$versions" --mem-limit $mem 2>&1)
      for v in ${versions//,/ }; do
        why=$(echo "$out" | sed -n "s/^$v *skipped: //p" | head -n 1)
        if [ -z "$why" ]; then cell[$v,$g]=runs
        elif echo "$why" | grep -q "bytes of shared memory per block"; then
          cell[$v,$g]="needs $(echo "$why" | sed -n 's/^needs \([0-9,]*\) bytes of shared memory.*/\1/p') B shared"
        else cell[$v,$g]="skipped"
        fi
      done
    done
    for v in ${versions//,/ }; do
      printf '| lesson %s %s |' "$l" "$v"
      for g in $gpus; do printf ' %s |' "${cell[$v,$g]}"; done
      printf '\n'
    done
    unset cell
  done
} >"$table"
[ -n "$readme" ] || { cat "$table"; exit 0; }
current=$(sed -n '/<!-- gpu-fit:begin -->/,/<!-- gpu-fit:end -->/p' "$readme" | sed '1d;$d')
if [ "$current" = "$(cat "$table")" ]; then echo "gpu fit table: $readme is current"; exit 0; fi
if [ "${GPU_FIT_UPDATE:-0}" = 1 ]; then
  awk -v t="$table" '/<!-- gpu-fit:begin -->/ { print; while ((getline l < t) > 0) print l; skip = 1; next }
                     /<!-- gpu-fit:end -->/ { skip = 0 } !skip' "$readme" >"$readme.tmp" && mv "$readme.tmp" "$readme"
  echo "gpu fit table: $readme rewritten"
  exit 0
fi
echo "gpu fit table: $readme's table differs from the fit checks' (GPU_FIT_UPDATE=1 make emu-gpus rewrites it):"
diff <(echo "$current") "$table"
exit 1
