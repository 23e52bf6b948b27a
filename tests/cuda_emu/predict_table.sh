#!/bin/sh
# predict_table.sh - the table a lesson doc's versions section shows (docs/generated.txt pastes it): each CUDA
# version's predicted time at the forum size (lesson 4: its largest preset, medium) on the H100 and the H200 (make predict), the limiter and the share of
# the roofline, the H100's and the H200's measured times where a GPU report has one (docs/results/nvidia-h100-80gb-hbm3/
# results.csv, then followup/results.csv; docs/results/nvidia-h200/results.csv, then new_versions/results.csv for the
# versions measured after it; a version with no prediction yet gets a row too), and
# the model's error on its calibration set (docs/results/emu/peers_sgemm.csv, make predict-peers). A "*" marks a
# prediction extrapolated from runs at reduced sizes (the CSV's note; tests/cuda_emu/README.md). "vs previous": the
# predicted effect of each version against the one before it; then each version's --help line (what it changes).
#   usage: predict_table.sh LESSON [RESULTS_DIR]
set -u
l=$1 d=${2:-docs/results}
h100=$d/emu/predicted_h100.csv h200=$d/emu/predicted_h200.csv peers=$d/emu/peers_sgemm.csv
# a GPU's results: the report's own, then its subfolders' (sorted)
results() { echo "$1/results.csv"; ls "$1"/*/results.csv 2>/dev/null | sort; }
# a results file's rows less those docs/results/retired.csv says its report measured of code no longer in the tree
# (a version since rebuilt under the same name, or removed): $1 the file; its report is the file's folder under
# $d (nvidia-h200 for the top-level results.csv, nvidia-h200/issue27-report for a subfolder's)
measured() {
  [ -f "$1" ] || return 0
  r=${1#"$d"/} r=${r%/results.csv}
  { [ -f "$d/retired.csv" ] && awk -F, -v r="$r" 'NR > 1 && $3 == r { print "R", $1, $2 }' "$d/retired.csv"
    sed 's/"[^"]*"/dims/' "$1"; } | awk -F, '$0 ~ /^R / { split($0, w, " "); gone[w[2] "," w[3]] = 1; next }
                                           !(($1 "," $2) in gone)'
}
# the forum's size: the forum preset, or the largest a lesson has (lesson 4: medium)
size=forum
grep -q "^$l,[^,]*,forum," "$h100" 2>/dev/null || size=medium
strip() { [ -f "$1" ] && sed 's/"[^"]*"/dims/' "$1"; }
{
  strip "$h100" | awk -F, -v l="$l" -v s="$size" 'NR > 1 && $1 == l && $3 == s { print "A", $2, ($6 == "" ? "-" : $6), $8, $9, $7 }'
  strip "$h100" | awk -F, -v l="$l" -v s="$size" 'NR > 1 && $1 == l && $3 == s && $12 ~ /^extrapolated/ { print "E", $2, $12 }'
  strip "$h100" | awk -F, -v l="$l" -v s="$size" 'NR > 1 && $1 == l && $3 == s && $12 ~ /exit (134|137)/ { print "O", $2 }'
  strip "$h200" | awk -F, -v l="$l" -v s="$size" 'NR > 1 && $1 == l && $3 == s { print "B", $2, ($6 == "" ? "-" : $6), $9 }'
  for m in $(results "$d/nvidia-h200"); do
    measured "$m" | awk -F, -v l="$l" -v s="$size" 'NR > 1 && $1 == l && $3 == s && $8 != "" { printf "C %s %.17g\n", $2, $8 + $9 }'
  done
  for m in $(results "$d/nvidia-h100-80gb-hbm3"); do
    measured "$m" | awk -F, -v l="$l" -v s="$size" 'NR > 1 && $1 == l && $3 == s && $8 != "" { printf "F %s %.17g\n", $2, $8 + $9 }'
  done
  strip "$peers" | awk -F, 'NR > 1 && $5 != "" { r = $4 / $5; print "D", (r > 1 ? r : 1 / r), $1 }'
} | awk '
  $1 == "A" { n++; v[n] = $2; a[$2] = $3; sh[$2] = $4; rf[$2] = $5; lim[$2] = $6; for (i = 7; i <= NF; i++) lim[$2] = lim[$2] " " $i }
  $1 == "B" { b[$2] = $3; rb[$2] = $4 }
  $1 == "C" && !($2 in c) { c[$2] = sprintf("%.3f", $3); if (!($2 in a)) { n++; v[n] = $2; a[$2] = "-"; late[$2] = 1 } }
  $1 == "F" && !($2 in f) { f[$2] = sprintf("%.3f", $3); if (!($2 in a)) { n++; v[n] = $2; a[$2] = "-"; late[$2] = 1 } }
  $1 == "D" { k++; if ($2 > worst) { worst = $2; wk = $3 } }
  $1 == "O" { oom[$2] = 1 }
  $1 == "E" { x = $2; $1 = ""; $2 = ""; sub(/^ *extrapolated: */, ""); ex[x] = $0 }
  END {
    if (!n) { print "no prediction at this size yet (make predict)"; exit 0 }
    printf "%-8s %14s %13s  %-40s %9s %14s %14s %14s\n", "version", "H100 model ms", "vs previous", "limiter (share of the time)", "H100 roof", "H100 measured", "H200 model ms", "H200 measured"
    for (i = 1; i <= n; i++) { x = v[i]; p = i > 1 ? v[i - 1] : ""
      eff = (p == "" || a[x] == "-" || a[p] == "-" || a[x] + 0 <= 0) ? "-" : (a[p] / a[x] > 0.995 && a[p] / a[x] < 1.005) ? "same" : a[p] / a[x] >= 1 ? sprintf("%.2fx faster", a[p] / a[x]) : sprintf("%.2fx slower", a[x] / a[p])
      printf "%-8s %14s %13s  %-40s %9s %14s %14s %14s\n", x, a[x] ((x in ex) ? "*" : ""), eff, (x in late) ? "not predicted (newer than make predict)" : a[x] == "-" ? ((x in oom) ? "not predicted (out of memory)" : "not predicted (over the time limit)") : lim[x] " (" sprintf("%.0f%%", 100 * sh[x]) ")",
             a[x] == "-" ? "-" : sprintf("%.1f%%", 100 * rf[x]), (x in f) ? f[x] : "-", (x in b) ? b[x] : "-", (x in c) ? c[x] : "-" }
    # measured: the bound the model gives the work (its roofline share times its time) over the measured time, and
    # the error of the model on that version (model ms / measured ms)
    for (i = 1; i <= n; i++) { x = v[i]; line = ""
      if ((x in f) && a[x] != "-" && rf[x] != "") line = line sprintf("  H100 %5.1f%% of the roofline (model/measured %.2f)", 100 * rf[x] * a[x] / f[x], a[x] / f[x])
      if ((x in c) && (x in b) && b[x] != "-" && rb[x] != "") line = line sprintf("  H200 %5.1f%% of the roofline (model/measured %.2f)", 100 * rb[x] * b[x] / c[x], b[x] / c[x])
      if (line != "") { if (!said++) print "measured: the bound the model gives the work (roofline share x model ms) over the measured ms, and the error of the model"; printf "  %-8s%s\n", x, line } }
    for (i = 1; i <= n; i++) if (v[i] in ex) printf "* %s: predicted from runs with %s (README \"Sizes too long to run\")\n", v[i], ex[v[i]]
    printf "a MODEL (tests/cuda_emu/README.md), not a measurement; its error on the calibration set: worst x%.2f (kernel %s)\n", worst, wk
    printf "over the %d published RTX A6000 figures of SGEMM_CUDA at 4096 (make predict-peers)\n", k
  }'
# the model's cross-validated error on this lesson (make model-cv): its measured rows at the forum's and
# medium size predicted by constants fitted on the other lessons and SGEMM_CUDA's figures, never this lesson's
cv=$d/emu/model_cv.csv
[ -f "$cv" ] && awk -F, -v l="$l" 'NR > 1 && $1 == l && $7 == 1 && $4 != "small" {
    r = $6 / $5; n++; e[n] = r > 1 ? r : 1 / r; w += e[n] <= 1.5; sz[$4] = 1; g[$3] = 1 }
  END { if (!n) exit
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
          if (e[j] < e[i]) { t = e[i]; e[i] = e[j]; e[j] = t }
        m = n % 2 ? e[(n + 1) / 2] : (e[n / 2] + e[n / 2 + 1]) / 2
        sizes = ("forum" in sz) ? "forum" : ""; if ("medium" in sz) sizes = sizes (sizes != "" ? ", " : "") "medium"
        gpus = ("H100" in g) ? "H100" : ""; if ("H200" in g) gpus = gpus (gpus != "" ? ", " : "") "H200"
        printf "its cross-validated error on this lesson: median x%.2f, %d of %d measured rows (%s;", m, w, n, sizes
        printf "\n%s) within 1.5x, predicted by constants fitted without this lesson", gpus
        printf " (docs/results/emu/\nmodel_cv.csv, make model-cv); the model ms above use the constants of"
        printf " today (emu_gpu.cc)\n" }' "$cv"
# lesson 5: its versions against the same four products through cuBLAS, by the model (the target of its CCE-shaped
# versions: within 1.3x of that); needs the emulation build's predict_gemm
pg=${EMU_BIN:-build/emu}/predict_gemm
if [ "$l" = 5 ] && [ -x "$pg" ]; then
  dims=$(awk -F'"' -v s="$size" '$1 ~ "^5,[^,]*," s "," { print $2; exit }' "$h100")
  N=$(echo "$dims" | sed -n 's/.*N=\([0-9]*\).*/\1/p') H=$(echo "$dims" | sed -n 's/.*H=\([0-9]*\).*/\1/p')
  V=$(echo "$dims" | sed -n 's/.*V=\([0-9]*\).*/\1/p')
  if [ -n "$N" ] && [ -n "$H" ] && [ -n "$V" ]; then
    ms=$("$pg" H100 "$N,$V,$H" "$N,$V,$H" "$N,$H,$V" "$V,$H,$N" | sed -n 's/^\([0-9.]*\) ms in all.*/\1/p')
    printf "the same four products through cuBLAS (logits in forward and in backward, dx, dW), by the model's cuBLAS\n"
    printf "efficiency: %s ms on the H100 (tests/cuda_emu/predict_gemm.cc); each version's model time / that (the\n" "$ms"
    printf "target of the versions with no cuBLAS call: within 1.3x):\n"
    strip "$h100" | awk -F, -v s="$size" -v g="$ms" 'NR > 1 && $1 == 5 && $3 == s && $6 != "" {
      printf "  %s %.2fx%s\n", $2, $6 / g, ($11 == 0 && $6 / g <= 1.3 ? " (within 1.3x)" : "") }'
    # measured, the nearest to those products on a GPU is cuda-v1 (cuBLAS's products and its row kernels)
    for m in $(results "$d/nvidia-h200"); do measured "$m"; done | awk -F, -v s="$size" '
      $1 == 5 && $3 == s && $8 != "" && !(($2) in t) { t[$2] = $8 + $9 }
      END { if (!("cuda-v1" in t)) exit
            printf "measured on the H200, each version / cuda-v1 (cuBLAS products and row kernels, %.3f ms):\n", t["cuda-v1"]
            for (i = 2; i < 100; i++) if (("cuda-v" i) in t) printf "  cuda-v%d %.3f ms, %.2fx\n", i, t["cuda-v" i], t["cuda-v" i] / t["cuda-v1"] }'
  fi
fi
# what each version changes: its line of the lesson's --help (the build's, where there is one)
if [ -x "${BIN:-build}/lesson$l" ]; then
  echo "what each version changes (build/lesson$l --help):"
  "${BIN:-build}/lesson$l" --help | sed -n 's/^ *\(cuda-v[0-9]*\)  *\(.*\)/  \1  \2/p'
fi
