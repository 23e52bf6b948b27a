#!/bin/sh
# predict_lessons.sh - `make predict`: every CUDA version of every lesson predicted on GPU by the emulator's time
# model (EMU_PREDICT) at the small, medium and forum presets a lesson has, as docs/results/emu/predicted_<gpu>.csv.
# A MODEL, not a measurement (tests/cuda_emu/README.md "The time model"). Each run is a dry run of the model's
# kind (EMU_DRY=3: address-only memory, only the model's sampled pass runs), one version at a time; one over
# PREDICT_TIMEOUT seconds is
# written with an empty prediction and its note, never left out. PREDICT_SIZES: the presets (default all three);
# PREDICT_LESSONS: the lessons (default 1-5); PREDICT_IMPLS: the versions (default all, e.g. "cuda-v4 cuda-v5");
# the rows of the other lessons, versions and sizes in an existing OUT_CSV are kept.
# A size whose blocks' own loops are too long to emulate (lesson 3's J x N per (i, m), lesson 5's V x H) runs
# with those dimensions at two reduced values each, every count recorded (EMU_MODEL_RECORD) and extrapolated to
# the size's (build/emu/predict_extrapolate; tests/cuda_emu/README.md "Sizes too long to run"); the CSV's note
# says so. If the reduced runs launch different sequences, the size runs directly; if one of them fails or passes
# PREDICT_TIMEOUT, the row is left empty and its note names that run (a direct run would take longer still).
# PREDICT_JOBS rows run side by side (default 2, this machine's cores): each row is its own processes and scratch
# files, so a row's prediction is the same whichever rows run beside it; only a timeout depends on the load.
#   usage: predict_lessons.sh BIN_DIR GPU SASS_FILE OUT_CSV
#          predict_lessons.sh --row BIN_DIR GPU SASS_FILE ROW_DIR LESSON SIZE VERSION (one row, run by the above)
set -u
# the GPU's fragments in PTX's mma register order (bf16: two adjacent elements per register): the emulator's layout
# keeps it, the path a GPU runs
export EMU_WMMA_PAIRS=1 EMU_WMMA_PTX=1
# lesson 4's medium cuda-v4 and cuda-v5 run about 300 s each here beside a loaded machine's other work: a limit
# the load can reach would make a row's result depend on what else runs
timeout_s=${PREDICT_TIMEOUT:-900}

# --row: one (lesson, size, version) predicted, its CSV line in ROW_DIR/L-SIZE-VERSION.csv, its log line on stdout
if [ "${1:-}" = --row ]; then
  bin=$2 gpu=$3 sass=$4 rows=$5 l=$6 size=$7 v=$8
  tmp=$(mktemp) || exit 1
  rec=$(mktemp -d) || exit 1
  trap 'rm -rf "$tmp" "$rec"' EXIT
  . "$(dirname "$0")/predict_reduce.sh"
  # reduce_of LESSON SIZE VERSION: the reduced dimensions (predict_reduce.sh)
  spec=$(reduce_of "$l" "$size" "$v") note="" rc=""
  start=$(date +%s)
  if [ -n "$spec" ]; then
    full=$("$bin/lesson$l" --help | sed -n "s/^ *$size  *\([A-Za-z]*=[^ ]*\).*/\1/p" | head -n 1)
    extrapolate "$l" "$size" "$v" "$spec" "$(full_of "$spec" "$full")" > "$tmp" 2>&1
    rc=$?
    case $rc in
      0) note="extrapolated: $(sed -n 's/.*extrapolated (\(.*\)): a MODEL.*/\1/p' "$tmp")"
         echo "size $size: $full (predicted from reduced runs)" >> "$tmp" ;;
      2) note="not predicted: $(grep -m 1 '^reduced run' "$tmp" | tr , ' ')"
         echo "size $size: $full (a reduced run failed)" >> "$tmp" ;;
      *) rc="" ;; # not extrapolable (different launch sequences): the size runs directly
    esac
  fi
  if [ -z "$rc" ]; then
    EMU_PREDICT="$gpu" EMU_DRY=3 EMU_SASS=$sass timeout "$timeout_s" "$bin/lesson$l" --size "$size" --impl "$v" \
      > "$tmp" 2>&1
    rc=$?
  fi
  took=$(( $(date +%s) - start ))
  dims=$(sed -n "s/^size $size: \([^ ]*\) .*/\1/p" "$tmp" | head -n 1)
  line=$(grep "^  $v  *predicted " "$tmp")
  csv="$rows/$l-$size-$v.csv"
  if [ -z "$line" ]; then
    why="PREDICT_TIMEOUT=$timeout_s"
    [ $rc = 134 ] || [ $rc = 137 ] && why="out of memory: a block's own accesses at this size"
    [ $rc = 2 ] || note="not predicted: exit $rc after ${took} s ($why)"
    echo "lesson$l --size $size ($dims) $v: $note"
    echo "$l,$v,$size,\"$dims\",$gpu,,,,,,,$note" > "$csv"
    exit 0
  fi
  echo "lesson$l --size $size ($dims) ${took} s: $line" | sed 's/:   */: /'
  echo "$line" | sed -n 's/^ *\([^ ]*\)  *predicted  *\([0-9.]*\) ms forward + backward  limiter \(.*\) (\([0-9]*\)% of the time)  \([0-9.]*\)% of the roofline  \[\([0-9]*\) launches .*, \([0-9]*\) cuBLAS calls\]$/\1 \2 \4 \5 \6 \7 \3/p' |
    awk -v l="$l" -v s="$size" -v d="$dims" -v g="$gpu" '{ lim = $7; for (i = 8; i <= NF; i++) lim = lim " " $i
      printf "%s,%s,%s,\"%s\",%s,%s,%s,%.2f,%.4f,%s,%s,%s\n", l, $1, s, d, g, $2, lim, $3 / 100, $4 / 100, $5, $6, n }' \
    n="$note" > "$csv"
  exit 0
fi

bin=$1 gpu=$2 sass=$3 out=$4
rows=$(mktemp -d) || exit 1
trap 'rm -rf "$rows"' EXIT
echo "lesson,impl,size,dims,gpu,predicted_ms,limiter,limiter_share,roofline_fraction,launches,cublas_calls,note" > "$out.tmp"
lessons=${PREDICT_LESSONS:-1 2 3 4 5} impls=${PREDICT_IMPLS:-}
[ -f "$out" ] && awk -F, -v keep=" $lessons " -v only=" $impls " -v sizes=" ${PREDICT_SIZES:-} " \
  'NR > 1 && (index(keep, " " $1 " ") == 0 || (only != "  " && index(only, " " $2 " ") == 0) ||
              (sizes != "  " && index(sizes, " " $3 " ") == 0))' "$out" >> "$out.tmp"
# the rows to run, largest size first (the long runs start first, the short ones fill in beside the last of them)
for size in ${PREDICT_SIZES:-forum medium small}; do
  for l in $lessons; do
    "$bin/lesson$l" --help | grep -q "^ *$size " || continue
    for v in $("$bin/lesson$l" --help | sed -n 's/^ *\(cuda-v[0-9]*\) .*/\1/p'); do
      [ -z "$impls" ] || echo " $impls " | grep -q " $v " || continue
      echo "$l $size $v"
    done
  done
done | xargs -L 1 -P "${PREDICT_JOBS:-2}" "$0" --row "$bin" "$gpu" "$sass" "$rows"
cat "$rows"/*.csv >> "$out.tmp" 2> /dev/null
# one order whatever was kept: lesson, version, then small, medium, forum (the tables list the rows so)
{ head -n 1 "$out.tmp"
  tail -n +2 "$out.tmp" | awk -F, '{ v = $2; sub(/^cuda-v/, "", v); z = $3 == "small" ? 0 : $3 == "medium" ? 1 : 2
                                     printf "%d %d %d %d\t%s\n", $1, v, z, NR, $0 }' | sort -n -k1,1 -k2,2 -k3,3 -k4,4 |
    cut -f 2-; } > "$out.sorted" && mv "$out.sorted" "$out" && rm -f "$out.tmp"
echo "predict: wrote $out (a MODEL of $gpu, not a measurement)"
