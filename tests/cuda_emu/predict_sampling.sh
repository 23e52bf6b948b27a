#!/bin/sh
# predict_sampling.sh - the lessons' sampling check: each CUDA version's EMU_PREDICT prediction with the model's
# sample of blocks (and a configuration seen once predicted again) against every block of every launch
# (EMU_MODEL_SAMPLE=0), at one size where both run; fails when they differ by more than 5%.
#   usage: predict_sampling.sh BIN_DIR GPU SASS_FILE "LESSON:SIZE ..."
set -u
bin=$1 gpu=$2 sass=$3 runs=$4
status=0
for r in $runs; do
  l=${r%%:*} size=${r#*:}
  impl=$("$bin/lesson$l" --help | sed -n 's/^ *\(cuda-v[0-9]*\) .*/\1/p' | paste -sd, -)
  s=$(EMU_PREDICT="$gpu" EMU_DRY=3 EMU_SASS=$sass "$bin/lesson$l" --size "$size" --impl "$impl" 2>&1 | grep "^  cuda-v[0-9]*  *predicted")
  a=$(EMU_MODEL_SAMPLE=0 EMU_PREDICT="$gpu" EMU_DRY=3 EMU_SASS=$sass "$bin/lesson$l" --size "$size" --impl "$impl" 2>&1 |
      grep "^  cuda-v[0-9]*  *predicted")
  for v in $(echo "$impl" | tr , ' '); do
    ms=$(echo "$s" | awk -v v="$v" '$1 == v { print $3 }') all=$(echo "$a" | awk -v v="$v" '$1 == v { print $3 }')
    if [ -z "$ms" ] || [ -z "$all" ]; then echo "lesson$l $size $v: no prediction"; status=1; continue; fi
    echo "$ms $all" | awk -v n="lesson$l $size $v" '{ d = $1 / $2 - 1; printf "%s: sampled %.4f ms, every block %.4f ms: %+.1f%%%s\n", n, $1, $2, 100 * d, (d > 0.05 || d < -0.05) ? "  OVER 5%" : ""; exit (d > 0.05 || d < -0.05) }' || status=1
  done
done
exit $status
