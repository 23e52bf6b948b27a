#!/usr/bin/env bash
# plots/bench.sh - `make bench`: every sweep of plots/sweeps.txt, on every implementation this machine has.
#
#   plots/bench.sh [LESSON ...]          (default: every lesson in plots/sweeps.txt whose binary is built)
#   env: BIN=build  BENCH_DIR=docs/results/<machine>  REPEAT=5  TORCH_PYTHON=<python with torch, or none>
#        SWEEPS=plots/sweeps.txt  MEM_LIMIT=<bytes, 4G, ...: --mem-limit for every run>
#
# Per lesson it writes, under BENCH_DIR (replacing what a previous bench wrote for that lesson):
#   lessonN.csv           the lessons' CSV (lesson,impl,size,dims,peak_bytes,...,device,gemm_share): one row per point and
#                         implementation, times = the median of REPEAT runs after one warm-up run; rows with
#                         device "predicted" are the memory formula of a point that did not run (over the memory
#                         limit, above the sweep's limit for that implementation, or the forum's size); rows
#                         from plots/pytorch_baseline.py (impl pytorch-naive, pytorch-best) when torch imports
#   lessonN_runs.csv      every timed run (lesson,impl,size,dims,run,forward_ms,backward_ms,device): the spread
#   lessonN_timeline.csv  the --timeline of naive and cpu at the lesson's timeline size
#   bench_log.tsv         seconds each point took: the next bench's estimate of the time remaining
# The binaries write "cpu" in the device column; here host rows get the CPU's model name (/proc/cpuinfo), so
# a results directory says what it was measured on. Every number comes from the lesson binaries (or torch):
# this script only chooses the points, runs them and moves rows.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${BIN:-build}
REPEAT=${REPEAT:-5}
SWEEPS=${SWEEPS:-plots/sweeps.txt}
MEM_LIMIT=${MEM_LIMIT:-}  # passed as --mem-limit (default: the binary's, half the RAM)
CPU_MODEL=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo 2>/dev/null | head -1 | tr -d ',"')
CPU_MODEL=${CPU_MODEL:-cpu}
THREADS=${OPENBLAS_NUM_THREADS:-$(nproc)}

# --- which lessons, which implementations ------------------------------------------------------------------
lessons_in_table() { sed -n 's/^lesson=\([0-9]*\) .*/\1/p' "$SWEEPS" | sort -un; }
# BENCH_LESSONS: the Makefile's lesson list (`make bench` passes it); a lesson with no line in the sweeps gets
# one point, every implementation at its default size
if [ $# -gt 0 ]; then LESSONS=("$@"); elif [ -n "${BENCH_LESSONS:-}" ]; then read -ra LESSONS <<<"$BENCH_LESSONS"
else mapfile -t LESSONS < <(lessons_in_table); fi

# cuda runs where the lesson binary can run it (a CUDA build and a device): ask lesson 1 at its tiny size
HAVE_CUDA=0
GPU_NAME=
if [ -x "$BIN/lesson1" ] && "$BIN/lesson1" --size tiny --impl cuda >/dev/null 2>&1; then
    HAVE_CUDA=1
    GPU_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
    GPU_NAME=${GPU_NAME:-a CUDA device}
fi
if [ -z "${BENCH_DIR:-}" ]; then
    if [ $HAVE_CUDA = 1 ]; then
        BENCH_DIR=docs/results/$(printf '%s' "$GPU_NAME" | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9-')
        [ "$BENCH_DIR" = docs/results/ ] && BENCH_DIR=docs/results/gpu
    else
        BENCH_DIR=docs/results/cpu
    fi
fi
mkdir -p "$BENCH_DIR"

if [ -z "${TORCH_PYTHON+x}" ]; then
    TORCH_PYTHON=none
    for py in python3 /usr/bin/python3; do
        if command -v "$py" >/dev/null && "$py" -c 'import torch' 2>/dev/null; then TORCH_PYTHON=$py; break; fi
    done
fi

# field KEY LINE: the value of KEY=... in a sweeps.txt line (empty when absent)
field() { local t; for t in $2; do [ "${t%%=*}" = "$1" ] && { printf '%s' "${t#*=}"; return; }; done; true; }

# --- the plan: one entry per (lesson, sweep, value, implementation), then the lesson's forum size, timeline
# and PyTorch baseline. entry: lesson|sweep|axis|value|dims|opts|variant|impl|mode
# (mode: run, predict, timeline, torch)
PLAN=()
for L in "${LESSONS[@]}"; do
    if [ ! -x "$BIN/lesson$L" ]; then echo "bench: $BIN/lesson$L is not built: lesson $L skipped"; continue; fi
    forum= timeline= impls=
    while read -r line; do
        [ "$(field lesson "$line")" = "$L" ] || continue
        sweep=$(field sweep "$line")
        if [ -z "$sweep" ]; then
            forum=$(field forum "$line"); timeline=$(field timeline "$line")
            continue
        fi
        axis=$(field axis "$line"); dims=$(field dims "$line"); opts=$(field opts "$line")
        variant=$(field variant "$line")
        IFS=, read -ra values <<<"$(field values "$line")"
        IFS=, read -ra runs <<<"$(field run "$line")"
        # the implementations that run at a point share one process (inputs and float64 reference made once)
        for v in "${values[@]}"; do
            run= pred=
            for r in "${runs[@]}"; do
                impl=${r%%<=*}; max=
                [ "$impl" != "$r" ] && max=${r#*<=}
                [ "$impl" = cuda ] && [ $HAVE_CUDA = 0 ] && continue
                [[ ",$impls," == *",$impl,"* ]] || impls=${impls:+$impls,}$impl
                if [ -n "$max" ] && [ "$v" -gt "$max" ]; then pred=${pred:+$pred,}$impl; else run=${run:+$run,}$impl; fi
            done
            [ -n "$run" ] && PLAN+=("$L|$sweep|$axis|$v|$dims|$opts|$variant|$run|run")
            [ -n "$pred" ] && PLAN+=("$L|$sweep|$axis|$v|$dims|$opts|$variant|$pred|predict")
        done
    done < <(grep -v '^[[:space:]]*#' "$SWEEPS" | grep .)
    if [ -z "$impls" ] && [ -z "$forum" ]; then PLAN+=("$L|default|size|default|||||run"); continue; fi
    [ -n "$forum" ] && PLAN+=("$L|forum|size|$forum||||$impls|predict")
    [ -n "$timeline" ] && PLAN+=("$L|timeline|size|$timeline||||naive,cpu|timeline")
    [ "$TORCH_PYTHON" != none ] && PLAN+=("$L|torch|||||||torch")
done

# --- estimates from the last bench on this machine (seconds per point) -------------------------------------
declare -A EST=()
LOG=$BENCH_DIR/bench_log.tsv
if [ -f "$LOG" ]; then
    while IFS=$'\t' read -r key secs; do EST[$key]=$secs; done <"$LOG"
fi
key_of() { local IFS='|'; set -- $1; echo "$1|$2|$4|$8${7:+-$7}|$9"; }
estimate() { local k; k=$(key_of "$1"); echo "${EST[$k]:-}"; }
TOTAL_EST=0; UNKNOWN=0
for e in "${PLAN[@]}"; do
    s=$(estimate "$e")
    if [ -n "$s" ]; then TOTAL_EST=$(awk -v a="$TOTAL_EST" -v b="$s" 'BEGIN{print a+b}'); else UNKNOWN=$((UNKNOWN + 1)); fi
done

echo "bench: ${#PLAN[@]} points, lessons ${LESSONS[*]}, $REPEAT timed runs (median) after one warm-up each"
echo "bench: host $CPU_MODEL, $THREADS BLAS threads; CUDA: $([ $HAVE_CUDA = 1 ] && echo "$GPU_NAME" || echo none)"
echo "bench: PyTorch baseline: $([ "$TORCH_PYTHON" = none ] && echo "skipped (no python with torch)" || echo "$TORCH_PYTHON")"
echo "bench: writing $BENCH_DIR/lessonN{,_runs,_timeline}.csv"
if [ -n "${BENCH_PLAN_ONLY:-}" ]; then printf 'plan: %s\n' "${PLAN[@]}"; exit 0; fi # what would run, nothing run

# --- rows: the binary's CSV rows into the lesson's file, names made exact ---------------------------------
# size := "chunk=V" for an option axis; impl := impl-variant; device "cpu" := the CPU model
move_rows() { # tmp dest variant optaxis value
    [ -s "$1" ] || { rm -f "$1"; return 0; }
    [ -s "$2" ] || head -1 "$1" >"$2"
    tail -n +2 "$1" | awk -v variant="$3" -v optaxis="$4" -v value="$5" -v cpu="$CPU_MODEL" -F, '
        { out = $0
          if (variant != "") sub("^[0-9]+," $2 ",", $1 "," $2 "-" variant ",", out)
          if (optaxis != "") { n = split(out, f, ","); f[3] = optaxis "=" value; out = f[1]; for (i = 2; i <= n; i++) out = out "," f[i] }
          # device: the last field of a _runs row, the one before gemm_share in a lesson row
          n = split(out, f, ","); k = f[n] == "cpu" ? n : (f[n - 1] == "cpu" ? n - 1 : 0)
          if (k) { f[k] = cpu; out = f[1]; for (i = 2; i <= n; i++) out = out "," f[i] }
          print out }' >>"$2"
    rm -f "$1"
}

START=$(date +%s.%N)
DONE_EST=0
: >"$LOG.new"
for L in "${LESSONS[@]}"; do
    [ -x "$BIN/lesson$L" ] || continue
    rm -f "$BENCH_DIR/lesson$L.csv" "$BENCH_DIR/lesson${L}_runs.csv" "$BENCH_DIR/lesson${L}_timeline.csv"
done

FAILED=0
i=0
for e in "${PLAN[@]}"; do
    i=$((i + 1))
    IFS='|' read -r L sweep axis v dims opts variant impl mode <<<"$e"
    args=() optaxis=
    case $mode in
    timeline) args=(--size "$v" --impl "$impl" --timeline "$BENCH_DIR/lesson${L}_timeline.csv")
              what="timeline $v"; shown=$impl ;;
    torch) what="PyTorch"; shown="pytorch-*" ;;
    *) if [ "$sweep" = forum ]; then
           args=(--size "$v" --impl "$impl"); what="forum ($v)"; shown=$impl
       elif [ "$sweep" = default ]; then
           what="default size"; shown=all
       else
           if [[ "$axis" == --* ]]; then
               args+=(--dims "$dims" "$axis=$v"); optaxis=${axis#--}; what="$optaxis=$v"
           else
               args+=(--dims "$axis=$v,$dims"); what="$axis=$v"
           fi
           [ -n "$opts" ] && { IFS=, read -ra o <<<"$opts"; args+=("${o[@]}"); }
           args+=(--impl "$impl")
           shown=$impl${variant:+-$variant}
       fi ;;
    esac
    tmp=$BENCH_DIR/.tmp.$$; rm -f "$tmp.csv" "$tmp.runs"
    t0=$(date +%s.%N)
    status=ok
    case $mode in
    run)
        rc=0
        "$BIN/lesson$L" "${args[@]}" ${MEM_LIMIT:+--mem-limit "$MEM_LIMIT"} --repeat "$REPEAT" --times "$tmp.runs" \
            --csv "$tmp.csv" >"$tmp.out" 2>&1 || rc=$?
        # an implementation the binary skipped, its predicted peak over the memory limit or its estimated time
        # over --time-limit: recorded as predicted
        over=$(awk '$2 == "skipped:" && /exceeds --mem-limit|over --time-limit/ {printf "%s%s", sep, $1; sep = ","}' "$tmp.out")
        if [ $rc != 0 ] && ! { [ -n "$over" ] && ! [ -s "$tmp.csv" ] && [ "$over" = "$impl" ]; }; then
            status=FAILED; FAILED=$((FAILED + 1))
            echo "bench: $BIN/lesson$L ${args[*]} failed:"; tail -20 "$tmp.out"
        fi
        if [ -n "$over" ]; then
            move_rows "$tmp.csv" "$BENCH_DIR/lesson$L.csv" "$variant" "$optaxis" "$v"
            move_rows "$tmp.runs" "$BENCH_DIR/lesson${L}_runs.csv" "$variant" "$optaxis" "$v"
            for k in "${!args[@]}"; do [ "${args[$k]}" = --impl ] && args[k + 1]=$over; done
            mode=predict; [ "$status" = ok ] && status="$over over a limit:"
        fi ;;
    timeline)
        "$BIN/lesson$L" "${args[@]}" >"$tmp.out" 2>&1 || { status=FAILED; FAILED=$((FAILED + 1)); tail -20 "$tmp.out"; }
        [ "$status" = ok ] && status=timeline ;;
    torch)
        OPENBLAS_NUM_THREADS=$THREADS "$TORCH_PYTHON" plots/pytorch_baseline.py --lesson "$L" --sweeps "$SWEEPS" \
            --repeat "$REPEAT" --csv "$BENCH_DIR/lesson$L.csv" --runs "$BENCH_DIR/lesson${L}_runs.csv" \
            --device "$CPU_MODEL" --threads "$THREADS" | sed 's/^/    /' || { status=FAILED; FAILED=$((FAILED + 1)); }
        [ "$status" = ok ] && status=done ;;
    esac
    if [ "$mode" = predict ]; then
        rm -f "$tmp.csv" "$tmp.runs"
        "$BIN/lesson$L" "${args[@]}" --predict --csv "$tmp.csv" >"$tmp.out" 2>&1 || { status=FAILED; FAILED=$((FAILED + 1)); tail -5 "$tmp.out"; }
        case $status in ok) status=predicted ;; *over*) status="$status predicted" ;; esac
    fi
    move_rows "$tmp.csv" "$BENCH_DIR/lesson$L.csv" "$variant" "$optaxis" "$v"
    move_rows "$tmp.runs" "$BENCH_DIR/lesson${L}_runs.csv" "$variant" "$optaxis" "$v"
    rm -f "$tmp.out"
    now=$(date +%s.%N)
    secs=$(awk -v a="$t0" -v b="$now" 'BEGIN{printf "%.1f", b - a}')
    printf '%s\t%s\n' "$(key_of "$e")" "$secs" >>"$LOG.new"
    s=$(estimate "$e"); DONE_EST=$(awk -v a="$DONE_EST" -v b="${s:-$secs}" 'BEGIN{print a+b}')
    # remaining: the last bench's seconds for the points left, scaled by how fast this run goes against it
    left=$(awk -v tot="$TOTAL_EST" -v done="$DONE_EST" -v el="$now" -v st="$START" -v n="${#PLAN[@]}" -v i="$i" \
               -v unk="$UNKNOWN" 'BEGIN { e = el - st
                 if (unk == 0 && tot > 0 && done > 0) r = (tot - done) * e / done; else r = e / i * (n - i)
                 if (r < 0) r = 0; printf "%d:%02d", r / 60, r % 60 }')
    elapsed=$(awk -v a="$START" -v b="$now" 'BEGIN{e = b - a; printf "%d:%02d", e / 60, e % 60}')
    printf '[%3d/%d] lesson %s  %-10s %-16s %-12s %6ss  elapsed %s  remaining ~%s\n' "$i" "${#PLAN[@]}" "$L" \
        "$what" "$shown" "$([ "$status" = ok ] && echo "median of $REPEAT" || echo "$status")" "$secs" "$elapsed" "$left"
done

# this run's seconds replace the last bench's for the same points; the other points' estimates stay
awk -F'\t' 'NR == FNR { seen[$1] = 1; print; next } !($1 in seen)' "$LOG.new" "$LOG" 2>/dev/null >"$LOG.merged" ||
    cp "$LOG.new" "$LOG.merged"
mv "$LOG.merged" "$LOG"; rm -f "$LOG.new"
rm -f "$BENCH_DIR"/.tmp.*
total=$(awk -v a="$START" -v b="$(date +%s.%N)" 'BEGIN{e = b - a; printf "%d:%02d", e / 60, e % 60}')
echo "bench: done in $total (min:s); results in $BENCH_DIR"
if [ $FAILED -gt 0 ]; then echo "bench: $FAILED point(s) FAILED (see above)"; exit 1; fi
