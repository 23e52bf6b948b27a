#!/bin/sh
# predict_lessons.sh - `make predict`: every CUDA version of every lesson predicted on GPU by the emulator's time
# model (--gpu-model) at the small, medium and forum presets a lesson has, as docs/results/emu/predicted_<gpu>.csv.
# A MODEL, not a measurement (tests/cuda_emu/README.md "The time model"). Each run is a dry run of the model's
# kind (EMU_DRY=3: address-only memory, only the model's sampled pass runs), one version at a time; one over
# PREDICT_TIMEOUT seconds is
# written with an empty prediction and its note, never left out. PREDICT_SIZES: the presets (default all three);
# PREDICT_LESSONS: the lessons (default 1-5).
#   usage: predict_lessons.sh BIN_DIR GPU SASS_FILE OUT_CSV
set -u
bin=$1 gpu=$2 sass=$3 out=$4
timeout_s=${PREDICT_TIMEOUT:-120}
tmp=$(mktemp) || exit 1
trap 'rm -f "$tmp"' EXIT
echo "lesson,impl,size,dims,gpu,predicted_ms,limiter,limiter_share,roofline_fraction,launches,cublas_calls,note" > "$out.tmp"
status=0
for l in ${PREDICT_LESSONS:-1 2 3 4 5}; do
  impl=$("$bin/lesson$l" --help | sed -n 's/^ *\(cuda-v[0-9]*\) .*/\1/p' | paste -sd, -)
  for size in ${PREDICT_SIZES:-small medium forum}; do
    "$bin/lesson$l" --help | grep -q "^ *$size " || continue
    for v in $(echo "$impl" | tr , ' '); do
      start=$(date +%s)
      EMU_DRY=3 EMU_SASS=$sass timeout "$timeout_s" "$bin/lesson$l" --size "$size" --impl "$v" --gpu-model "$gpu" \
        > "$tmp" 2>&1
      rc=$? took=$(( $(date +%s) - start ))
      dims=$(sed -n "s/^size $size: \([^ ]*\) .*/\1/p" "$tmp" | head -n 1)
      line=$(grep "^  $v  *predicted " "$tmp")
      if [ -z "$line" ]; then
        note="not predicted: exit $rc after ${took} s (PREDICT_TIMEOUT=$timeout_s)"
        echo "lesson$l --size $size ($dims) $v: $note"
        echo "$l,$v,$size,\"$dims\",$gpu,,,,,,,$note" >> "$out.tmp"
        continue
      fi
      echo "lesson$l --size $size ($dims) ${took} s: $line" | sed 's/:   */: /'
      echo "$line" | sed -n 's/^ *\([^ ]*\)  *predicted  *\([0-9.]*\) ms forward + backward  limiter \(.*\) (\([0-9]*\)% of the time)  \([0-9.]*\)% of the roofline  \[\([0-9]*\) launches .*, \([0-9]*\) cuBLAS calls\]$/\1 \2 \4 \5 \6 \7 \3/p' |
        awk -v l="$l" -v s="$size" -v d="$dims" -v g="$gpu" '{ lim = $7; for (i = 8; i <= NF; i++) lim = lim " " $i
          printf "%s,%s,%s,\"%s\",%s,%s,%s,%.2f,%.4f,%s,%s,\n", l, $1, s, d, g, $2, lim, $3 / 100, $4 / 100, $5, $6 }' >> "$out.tmp"
    done
  done
done
mv "$out.tmp" "$out"
echo "predict: wrote $out (a MODEL of $gpu, not a measurement)"
exit $status
