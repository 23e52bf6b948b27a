#!/bin/sh
# predict_compare.sh - the time model against a GPU's measurements: every (lesson, version, size) that both the
# GPU report's results.csv (docs/results/<gpu>/, forward_ms + backward_ms) and the model's predicted CSV (make
# predict) hold, printed side by side with predicted / measured; then the worst and the median factor. MEASURED_CSV
# may be several files in one argument ("a.csv b.csv"): a (lesson, version, size) takes the first file's figure.
#   usage: predict_compare.sh PREDICTED_CSV MEASURED_CSV [OUT_CSV]
set -u
pred=$1 meas=$2 out=${3:-}
# the dims column is quoted and holds commas: blank it out before splitting on commas
strip() { sed 's/"[^"]*"/dims/' "$1"; }
strip "$pred" | awk -F, 'NR > 1 && $6 != "" { print "P", $1, $2, $3, $6, $7 }' > /tmp/predict_compare.$$
# a report's rows of code no longer in the tree (docs/results/retired.csv: a version since rebuilt under its name,
# or removed) are left out: the report is the file's folder under docs/results/ (nvidia-h200 for the top-level
# results.csv, nvidia-h200/issue27-report for a subfolder's)
retired=$(dirname "$pred")/../retired.csv
for f in $meas; do
  r=$(echo "$f" | sed -n 's|.*results/\(.*\)/results\.csv$|\1|p')
  { [ -f "$retired" ] && awk -F, -v r="$r" 'NR > 1 && $3 == r { print "R," $1 "," $2 }' "$retired"
    strip "$f" | awk 'NR > 1'; } | awk -F, '$1 == "R" { gone[$2 "," $3] = 1; next }
    !(($1 "," $2) in gone) && $8 != "" { printf "M %s %s %s %.4f %s\n", $1, $2, $3, $8 + $9, $11 }' \
    >> /tmp/predict_compare.$$
done
awk -v out="$out" '
  $1 == "P" { p[$2 " " $3 " " $4] = $5; lim[$2 " " $3 " " $4] = $6; next }
  $1 == "M" && !(($2 " " $3 " " $4) in m) { m[$2 " " $3 " " $4] = $5 }
  END {
    if (out != "") print "lesson,impl,size,measured_ms,predicted_ms,predicted_over_measured" > out
    printf "%-8s %-8s %-7s %12s %12s %10s\n", "lesson", "impl", "size", "measured ms", "model ms", "model/meas"
    n = 0
    for (k in m) if (k in p) {
      split(k, f, " "); r = p[k] / m[k]; rs[++n] = r
      printf "%-8s %-8s %-7s %12.4f %12.4f %10.2f\n", "lesson" f[1], f[2], f[3], m[k], p[k], r
      if (out != "") printf "%s,%s,%s,%.4f,%.4f,%.3f\n", f[1], f[2], f[3], m[k], p[k], r >> out
    }
    if (!n) { print "no (lesson, version, size) in both"; exit 1 }
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (rs[j] < rs[i]) { t = rs[i]; rs[i] = rs[j]; rs[j] = t }
    worst = 1; for (i = 1; i <= n; i++) { e = rs[i] > 1 ? rs[i] : 1 / rs[i]; if (e > worst) worst = e }
    printf "%d compared: model/measured from %.2f to %.2f, median %.2f; worst factor x%.1f\n", n, rs[1], rs[n],
           rs[int((n + 1) / 2)], worst
  }' /tmp/predict_compare.$$
status=$?
rm -f /tmp/predict_compare.$$
exit $status
