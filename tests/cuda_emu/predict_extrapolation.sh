#!/bin/sh
# predict_extrapolation.sh - the check of make predict's route for sizes too long to emulate: at a size where both
# run, each version's prediction extrapolated from reduced runs (predict_reduce.sh) against its direct run; fails
# when they differ by more than 5%.
#   usage: predict_extrapolation.sh BIN_DIR GPU SASS_FILE "LESSON:SIZE:DIMS:VERSIONS:SPEC ..."
#   e.g.   "3:medium::cuda-v3,cuda-v4:J=64:128"  "5:small:H=256:cuda-v4:V=1024:2048,H=64:128"
set -u
bin=$1 gpu=$2 sass=$3 runs=$4
export EMU_WMMA_PAIRS=1 EMU_WMMA_PTX=1 # as make predict (predict_lessons.sh): the path a GPU runs
timeout_s=${PREDICT_TIMEOUT:-600}
rec=$(mktemp -d) || exit 1
trap 'rm -rf "$rec"' EXIT
. "$(dirname "$0")/predict_reduce.sh"
status=0
for r in $runs; do
  l=$(echo "$r" | cut -d: -f1) size=$(echo "$r" | cut -d: -f2) dims=$(echo "$r" | cut -d: -f3)
  versions=$(echo "$r" | cut -d: -f4) spec=$(echo "$r" | cut -d: -f5-)
  preset=$("$bin/lesson$l" --help | sed -n "s/^ *$size  *\([A-Za-z]*=[^ ]*\).*/\1/p" | head -n 1)
  for d in $(echo "$dims" | tr , ' '); do preset=$(echo "$preset" | sed "s/\(^\|,\)${d%%=*}=[0-9]*/\1$d/"); done
  for v in $(echo "$versions" | tr , ' '); do
    ms=$(EMU_PREDICT="$gpu" EMU_DRY=3 EMU_SASS=$sass "$bin/lesson$l" --size "$size" ${dims:+--dims "$dims"} --impl "$v" \
         2>&1 | awk -v v="$v" '$1 == v && $2 == "predicted" { print $3 }')
    ex=$(extrapolate "$l" "$size" "$v" "$spec" "$(full_of "$spec" "$preset")" "$dims" 2>&1 |
         awk -v v="$v" '$1 == v && $2 == "predicted" { print $3 }')
    if [ -z "$ms" ] || [ -z "$ex" ]; then echo "lesson$l $preset $v: no prediction"; status=1; continue; fi
    echo "$ex $ms" | awk -v n="lesson$l $preset $v from $spec" '{ d = $1 / $2 - 1; printf "%s: extrapolated %.4f ms, direct %.4f ms: %+.1f%%%s\n", n, $1, $2, 100 * d, (d > 0.05 || d < -0.05) ? "  OVER 5%" : ""; exit (d > 0.05 || d < -0.05) }' || status=1
  done
done
exit $status
