#!/bin/sh
# model_record.sh - `make model-record`: the time model's counts of every (lesson, version, size) a GPU report
# measured (docs/results/nvidia-*/, its results.csv and its subfolders'; the rows docs/results/retired.csv names
# for their file's folder left out), recorded once (EMU_MODEL_RECORD) so that model_fit.cc fits the constants with no emulation. Direct runs
# as make predict's (EMU_DRY=3); a size too long to run from reduced runs (predict_reduce.sh), its extrapolated
# counts written as the record (predict_extrapolate --record-out). OUT_DIR/lesson<L>_<version>_<size>.rec, and
# OUT_DIR/index.csv: how each was made and what the model predicted then. An existing record is kept (delete it
# to record again). Counts are the GPU's only through its SMs, caches and occupancy, which H100 and H200 share.
# MODEL_LESSONS: the lessons recorded (default all; two calls on disjoint lessons may run side by side).
#   usage: model_record.sh BIN_DIR GPU SASS_FILE OUT_DIR "RESULTS_DIR ..."
set -u
bin=$1 gpu=$2 sass=$3 out=$4 reports=$5
export EMU_WMMA_PAIRS=1 EMU_WMMA_PTX=1 # as make predict: the path a GPU runs
timeout_s=${PREDICT_TIMEOUT:-900}
rec=$(mktemp -d) || exit 1
tmp=$(mktemp) || exit 1
trap 'rm -rf "$rec" "$tmp"' EXIT
. "$(dirname "$0")/predict_reduce.sh"
mkdir -p "$out"
[ -f "$out/index.csv" ] || echo "lesson,impl,size,dims,route,gpu,predicted_ms" > "$out/index.csv"
retired=docs/results/retired.csv
# a row is left out where retired.csv names its lesson, version and its file's folder under docs/results/
# (nvidia-h200 for the top-level results.csv, nvidia-h200/issue27-report for a subfolder's)
rows=$(for d in $reports; do
  for f in "$d/results.csv" "$d"/*/results.csv; do
    [ -f "$f" ] || continue
    r=$(basename "$d")${f#"$d"} r=${r%/results.csv}
    { awk -F, -v r="$r" 'NR > 1 && $3 == r { print "R," $1 "," $2 }' "$retired"
      sed 's/"[^"]*"/dims/' "$f" | awk 'NR > 1'; } |
      awk -F, '$1 == "R" { gone[$2 "," $3] = 1; next } !(($1 "," $2) in gone) && $8 != "" { print $1 ":" $2 ":" $3 }'
  done
done | sort -u)
status=0
for row in $rows; do
  l=${row%%:*} v=${row#*:} v=${v%%:*} size=${row##*:}
  f="$out/lesson${l}_${v}_${size}.rec"
  [ -s "$f" ] && continue
  echo " ${MODEL_LESSONS:-$l} " | grep -q " $l " || continue
  "$bin/lesson$l" --help | grep -q "^ *$v " || { echo "lesson$l $v: not in the code today (retired.csv?)"; continue; }
  full=$("$bin/lesson$l" --help | sed -n "s/^ *$size  *\([A-Za-z]*=[^ ]*\).*/\1/p" | head -n 1)
  spec=$(reduce_of "$l" "$size" "$v") start=$(date +%s)
  if [ -n "$spec" ]; then
    record_out=$f extrapolate "$l" "$size" "$v" "$spec" "$(full_of "$spec" "$full")" > "$tmp" 2>&1
    rc=$? route="extrapolated from $spec"
  else
    EMU_PREDICT="$gpu" EMU_DRY=3 EMU_SASS=$sass EMU_MODEL_RECORD=$f timeout "$timeout_s" "$bin/lesson$l" --size "$size" \
      --impl "$v" > "$tmp" 2>&1
    rc=$? route=direct
  fi
  ms=$(awk -v v="$v" '$1 == v && $2 == "predicted" { print $3 }' "$tmp")
  if [ $rc != 0 ] || [ -z "$ms" ] || [ ! -s "$f" ]; then
    echo "lesson$l $v $size: not recorded (exit $rc): $(tail -n 2 "$tmp" | tr '\n' ' ')"; rm -f "$f"; status=1; continue
  fi
  echo "$l,$v,$size,\"$full\",\"$route\",$gpu,$ms" >> "$out/index.csv"
  echo "lesson$l $v $size ($route): $ms ms on $gpu, $(( $(date +%s) - start )) s"
done
exit $status
