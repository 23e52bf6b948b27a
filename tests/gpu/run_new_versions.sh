#!/usr/bin/env bash
# the new versions (issue 27) on the GPU: small validated, memcheck + racecheck at tiny, forum beside the previous best
set -u
H=$(cd "$(dirname "$0")" && pwd); D=${1:?out dir}
mkdir -p "$H/u" && tar -xJf "$H/payload.tar.xz" -C "$H/u"; B=$H/u/bin
export CUDA_REQUIRE_DEVICE=1
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
NEW="2:cuda-v4 2:cuda-v5 3:cuda-v4 4:cuda-v3 4:cuda-v4 4:cuda-v5 5:cuda-v4"
row() { echo "$*" | tee -a "$D/summary.txt"; }
for lv in $NEW; do L=${lv%%:*} v=${lv#*:}
  for tool in memcheck racecheck; do
    ( t0=$(date +%s); timeout 60 "$CS" --tool $tool --error-exitcode 9 "$B/lesson$L" --size tiny --impl $v > "$D/san_${tool}_$L.txt" 2>&1; rc=$?
      echo "$( [ $rc = 0 ] && echo PASS || echo FAIL) $tool lesson$L $v tiny (exit $rc, $(( $(date +%s) - t0 )) s)" >> "$D/sanrows.txt" ) &
  done
done
for lv in $NEW; do L=${lv%%:*} v=${lv#*:}
  t0=$(date +%s); timeout 40 "$B/lesson$L" --size small --impl $v --csv "$D/results.csv" >> "$D/small.log" 2>&1; rc=$?
  row "$( [ $rc = 0 ] && echo PASS || echo FAIL) small lesson$L $v (exit $rc, $(( $(date +%s) - t0 )) s)"
done
wait; cat "$D/sanrows.txt" >> "$D/summary.txt"; cat "$D/sanrows.txt"; cat "$D"/san_*.txt > "$D/sanitize.log"; rm -f "$D"/san_*.txt "$D/sanrows.txt"
for run in "2 forum cuda-v3,cuda-v4,cuda-v5" "5 forum cuda-v1,cuda-v4" "4 medium cuda-v2,cuda-v3,cuda-v4,cuda-v5" "3 forum cuda-v3,cuda-v4"; do
  set -- $run
  t0=$(date +%s); timeout 70 "$B/lesson$1" --size $2 --impl $3 --csv "$D/results.csv" >> "$D/forum.log" 2>&1; rc=$?
  row "$( [ $rc = 0 ] && echo PASS || ([ $rc = 124 ] && echo TIMEOUT || echo FAIL)) forum lesson$1 --size $2 --impl $3 (exit $rc, $(( $(date +%s) - t0 )) s)"
done
python3 - "$D/results.csv" <<'PY' | tee -a "$D/summary.txt"
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(f'lesson{r["lesson"]} {r["impl"]:8} {r["size"]:7} fwd {r["forward_ms"]:>10} bwd {r["backward_ms"]:>10} ms  err {r["max_rel_err"] or "-":>13} peak {r["peak_bytes"]}')
PY
