#!/usr/bin/env bash
# tests/gpu/gpu_report.sh - every figure one GPU can give this repository, in one command of under 9 minutes on
# an H100, from binaries built elsewhere (it never compiles):
#
#   bash build/gpu-bundle/gpu-report.sh     a bundle (make gpu-bundle) on a machine that can build nothing
#   make gpu-report                         this checkout's build/ (make builds it first, CUDA on)
#   GPU_REHEARSAL=1 ...                     the same route here, on the CPU emulator (make gpu-rehearsal)
#
# Steps (each run its own process under its own timeout; a timeout is a TIMEOUT row, never a lost lesson):
#   preflight  the binaries are there, their libraries load, nvidia-smi names the GPU and driver, the driver is
#              new enough for the bundle's CUDA runtime; "no GPU" only when there is none
#   small      test_cuda (CUDA_REQUIRE_DEVICE=1), then each CUDA version of each lesson at small, validated
#              against its float64 reference
#   sanitize   compute-sanitizer memcheck, racecheck, initcheck (TRACK_POISON=0: dev_alloc's fill would count
#              as a write) and synccheck, each version at tiny, several at once; and planted_initcheck, which
#              initcheck must catch
#   forum      each version at its forum size, or the largest preset whose formula (--predict) fits in 90% of
#              the GPU's memory and whose predicted pass (docs/results/emu/predicted_<h100|h200>.csv, make predict)
#              leaves its two passes (warm-up, timed) inside the run's budget, one process each, timed on the GPU
#   profile    ncu on every project kernel at the size of docs/results/emu's profiles, the same kernel names and
#              columns, the emulated rows beside the measured ones
#   anchors    plots/anchors.py's rows (Liger-Kernel, Cut Cross-Entropy, flash-maxsim, nn.GRU, torch.compile) at
#              each lesson's forum size, each validated against float64 first; their wheels, carried in the
#              bundle, installed by the preflight into a scratch target (pip --no-index --no-deps --target)
# Results: GPU_REPORT_DIR, else docs/results/<gpu-name>/ under the current directory, as 10 files: summary.txt
# (every step PASS, FAIL or TIMEOUT), preflight.log, small.log, sanitize.log, forum.log, results.csv (the
# lessons' --csv rows), profile.csv, profile.log, anchors.log, anchors.csv (pytorch_baseline.py's CSV rows). Exit 1 when any step failed or timed out.
#
# GPU_REHEARSAL=1: the emulation build instead (tiny sizes everywhere, the emulator's detectors standing in for
# compute-sanitizer: every run has all of them on, the tool name only labels it; the emulator's profile standing
# in for ncu; no nvidia-smi). GPU_REPORT_STEPS and GPU_REPORT_LESSONS (numbers)
# limit the steps and lessons (the rehearsal's negative checks use them); GPU_REPORT_IMPLS ("2:cuda-v4,cuda-v5
# 4:cuda-v5": lessons and their versions) limits both, for a call that measures a few new versions beside their
# predecessors (the profile then compares only the kernels those versions ran);
# GPU_REPORT_JOBS (6; 2 rehearsing) runs that many sanitizer runs at once; GPU_REPORT_SCALE=2 doubles every
# budget. The step budgets in seconds (small 60, sanitize 100, forum 220, profile 90 + 30 for the kernels its
# first ncu pass missed) and the probe's 30 add up to 530: under 9 minutes whatever hangs; the anchors' 90 a
# lesson (four lessons: 360) come on top, so where a device call allows 10 minutes, run them in a call of their
# own (GPU_REPORT_STEPS="preflight anchors"). On an H200 the report without the anchors took 249 s with the
# forum step's time spent (docs/results/nvidia-h200/summary.txt).
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REHEARSAL=${GPU_REHEARSAL:-0}
SCALE=${GPU_REPORT_SCALE:-1}
JOBS=${GPU_REPORT_JOBS:-$([ "$REHEARSAL" = 1 ] && echo 2 || echo 6)}
STEPS=${GPU_REPORT_STEPS:-preflight small sanitize forum profile anchors}
START=$(date +%s)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gpu-report.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
ROWS=$TMP/rows
: >"$ROWS"

say() { echo "gpu-report: $*"; }
elapsed() { echo $(($(date +%s) - START)); }
budget() { echo $(($1 * SCALE)); }
row() { printf '%-8s %-9s %s\n' "$1" "$2" "$3" >>"$ROWS"; say "$1 $2 $3"; } # STATUS STEP WHAT

# ---- where the binaries are: a bundle (payload.tar.xz beside this script) or a checkout ---------------------
if [ -f "$HERE/payload.tar.xz" ]; then
    ROOT=$HERE/unpacked
    if ! { mkdir -p "$ROOT" 2>/dev/null && [ -w "$ROOT" ]; }; then ROOT=$TMP/unpacked; mkdir -p "$ROOT"; fi
    if [ ! -f "$ROOT/MANIFEST" ] || [ "$HERE/payload.tar.xz" -nt "$ROOT/MANIFEST" ]; then
        rm -rf "${ROOT:?}"/* && tar -xJf "$HERE/payload.tar.xz" -C "$ROOT" ||
            { echo "gpu-report: FAIL the bundle's payload.tar.xz does not unpack into $ROOT"; exit 1; }
    fi
    BIN=$ROOT/bin
    INPUTS=$ROOT/inputs
    PLOTS=$ROOT/plots WHEELS=$ROOT/wheels
    BUNDLE_MODE=$(sed -n 's/^mode: //p' "$ROOT/MANIFEST")
    BINS=$(sed -n 's/^binaries: //p' "$ROOT/MANIFEST")
    CUDA_RT=$(sed -n 's/^cuda runtime: //p' "$ROOT/MANIFEST")
    if [ "$BUNDLE_MODE" = emu ] && [ "$REHEARSAL" != 1 ]; then
        echo "gpu-report: FAIL this is the emulation bundle (make EMU=1 gpu-bundle): it only rehearses, with GPU_REHEARSAL=1"
        exit 1
    fi
    if [ "$BUNDLE_MODE" = native ] && [ "$REHEARSAL" = 1 ]; then
        echo "gpu-report: FAIL GPU_REHEARSAL=1 with the native bundle: rehearse with make gpu-rehearsal (build/gpu-bundle-emu)"
        exit 1
    fi
else
    REPO=$(cd "$HERE/../.." && pwd)
    BIN=${BIN:-$REPO/build$([ "$REHEARSAL" = 1 ] && echo /emu)}
    INPUTS=$REPO
    PLOTS=$REPO/plots WHEELS=$REPO/build/anchor-wheels # make gpu-bundle fetches them there (ANCHOR_WHEELS)
    BINS="$(cd "$REPO" && ls lessons/lesson[0-9]*.c | sed 's|lessons/\(lesson[0-9]*\)\.c|\1|' | sort -V | tr '\n' ' ')"
    BINS="$BINS test_cuda planted_initcheck"
    CUDA_RT=$(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\),.*/\1/p')
fi
LESSONS=$(for b in $BINS; do case $b in lesson[0-9]*) echo "${b#lesson}" ;; esac; done | tr '\n' ' ')
LESSONS=${GPU_REPORT_LESSONS:-$LESSONS}
IMPLS=${GPU_REPORT_IMPLS:-}
[ -n "$IMPLS" ] && LESSONS=$(for lv in $IMPLS; do echo "${lv%%:*}"; done | tr '\n' ' ')

if [ "$REHEARSAL" = 1 ]; then
    SMALL=tiny TINY=tiny FORUM_SIZES=tiny PROFILE_SIZE=tiny
else
    SMALL=small TINY=tiny FORUM_SIZES="forum large medium small" PROFILE_SIZE=small
fi

# ---- helpers --------------------------------------------------------------------------------------------------
have() { [ -x "$BIN/$1" ]; }
# impls N: the lesson's CUDA versions (cuda-v1, cuda-v2, ...) from its --help, those GPU_REPORT_IMPLS names if set
all_impls() { "$BIN/lesson$1" --help 2>/dev/null | sed -n 's/^ *\(cuda-v[0-9]*\) .*/\1/p'; }
impls() {
    local want=
    for lv in $IMPLS; do [ "${lv%%:*}" = "$1" ] && want=",${lv#*:},"; done
    all_impls "$1" | while read -r v; do [ -z "$IMPLS" ] || [ "${want#*,"$v",}" != "$want" ] && echo "$v"; done
}
# presets N: the lesson's size presets, in --help's order
presets() { "$BIN/lesson$1" --help 2>/dev/null | awk '/^  --size/ {f = 1; next} /^  --/ {f = 0} f && NF >= 2 {print $1}'; }

# job NAME SECS EXPECT LOG CMD...: one process under its own timeout, its output appended to LOG under a header;
# EXPECT ok (exit 0 passes) or caught (a non-zero exit that names an uninitialised read passes: the planted bug)
job() {
    local name=$1 secs=$2 expect=$3 log=$4 rc=0 t0 status
    shift 4
    t0=$(date +%s)
    timeout --kill-after=5 "$secs" "$@" >"$log.part" 2>&1 || rc=$?
    local took=$(($(date +%s) - t0))
    if [ $rc = 124 ] || [ $rc = 137 ]; then status=TIMEOUT
    elif [ "$expect" = caught ]; then # non-zero, and for the reason planted: an uninitialised read
        [ $rc != 0 ] && grep -qiE 'uninitiali[sz]ed' "$log.part" && status=PASS || status=FAIL
    else [ $rc = 0 ] && status=PASS || status=FAIL; fi
    { echo "==== $name: $status (exit $rc, $took s of $secs s): $*"; cat "$log.part"; echo; } >"$log.done"
    rm -f "$log.part"
    echo "$status|$name|exit $rc, $took s of $secs s" >"$log.row"
}

# A step's jobs: queued with qjob, run GPU_REPORT_JOBS at a time (parallel=1) or one by one, each with
# min(its budget, what is left of the step's); a job the step had no time left for is a TIMEOUT row too.
QUEUE=()
qjob() { QUEUE+=("$(printf '%q ' "$@")"); }
run_queue() { # STEP LOGFILE STEP_SECONDS PARALLEL
    local step=$1 out=$2 step_secs=$3 end=$(($(elapsed) + $3)) par=$4 i=0
    mkdir -p "$TMP/$step"
    for q in "${QUEUE[@]}"; do
        i=$((i + 1))
        eval "set -- $q" # NAME SECS EXPECT CMD...
        local name=$1 secs=$2 expect=$3 left=$((end - $(elapsed)))
        shift 3
        local log=$TMP/$step/$(printf '%03d' $i)
        if [ $left -lt 3 ]; then
            echo "TIMEOUT|$name|not started: the step's $step_secs s were spent" >"$log.row"
            echo "==== $name: TIMEOUT (not started: the step's time was spent)" >"$log.done"
            continue
        fi
        [ "$secs" -gt "$left" ] && secs=$left
        if [ "$par" = 1 ]; then
            while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
            job "$name" "$secs" "$expect" "$log" "$@" &
        else
            job "$name" "$secs" "$expect" "$log" "$@"
        fi
    done
    wait
    for r in "$TMP/$step"/*.row; do
        [ -f "$r" ] || continue
        IFS='|' read -r st nm detail <"$r"
        row "$st" "$step" "$nm ($detail)"
    done
    cat "$TMP/$step"/*.done >>"$out" 2>/dev/null
    QUEUE=()
}

# ---- the anchors (plots/anchors.py): their wheels installed into a scratch target, then each lesson's rows ------
# The python that holds torch: the GPU image's python3; rehearsing, TORCH_PYTHON or the first that imports torch
SITE=$TMP/site
torch_python() {
    local c
    for c in ${TORCH_PYTHON:-} python3 /usr/bin/python3; do
        [ "$c" = none ] && return 1
        command -v "$c" >/dev/null 2>&1 && "$c" -c 'import torch' 2>/dev/null && { echo "$c"; return 0; }
    done
    return 1
}
anchors_install() { # in the preflight: a failure is a FAIL row, and the rest of the report goes on
    local py whl n=0
    py=$(torch_python) || { row NOTE preflight "anchors: no python with torch here: their rows are not run"; return; }
    for whl in "$WHEELS"/*.whl; do [ -f "$whl" ] && n=$((n + 1)); done
    if [ $n = 0 ]; then row NOTE preflight "anchors: no wheels carried (make gpu-bundle packs them; ANCHOR_WHEELS=0 did not)"; return; fi
    local pip=$py # pure-Python wheels: any python's pip can lay them into the target
    "$pip" -m pip --version >/dev/null 2>&1 || pip=python3
    if ! "$pip" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$SITE" "$WHEELS"/*.whl \
        >"$TMP/pip" 2>&1; then
        row FAIL preflight "anchors: pip install --no-index --no-deps --target failed: $(tail -1 "$TMP/pip")"
        return
    fi
    row NOTE preflight "anchors: $n wheels installed into a scratch target (pip install --no-index --no-deps --target): $(cd "$WHEELS" && ls *.whl | tr '\n' ' ')"
    local mod err
    for mod in $(sed 's/#.*//' "$PLOTS/anchors.txt" | awk '$1 ~ /==/ && $1 !~ /^image/ {print $2}'); do
        if err=$(PYTHONPATH=$SITE "$py" -c "import $mod" 2>&1); then
            row PASS preflight "anchors: import $mod"
        elif [ "$REHEARSAL" = 1 ]; then # no GPU, no Triton here: the route is rehearsed up to the import
            row NOTE preflight "anchors: import $mod fails here (rehearsal, no GPU): $(echo "$err" | tail -1)"
        else
            row FAIL preflight "anchors: import $mod: $(echo "$err" | tail -1)"
        fi
    done
}
step_anchors() { # each lesson's anchors at its forum size (lesson 4: medium; rehearsed: tiny), one process each
    local py L size rc line
    py=$(torch_python) || { row NOTE anchors "not run: no python with torch"; return; }
    for L in $LESSONS; do
        grep -q "^    $L: \[" "$PLOTS/anchors.py" || continue
        size=forum
        [ "$L" = 4 ] && size=medium
        [ "$REHEARSAL" = 1 ] && size=tiny
        echo "== lesson $L --size $size --only-anchors" >>"$OUT/anchors.log"
        PYTHONPATH=$SITE:$PLOTS timeout --kill-after=5 "$(budget 90)" "$py" "$PLOTS/pytorch_baseline.py" --lesson "$L" \
            --size "$size" --only-anchors --repeat 3 --csv "$OUT/anchors.csv" >"$TMP/anchors" 2>&1
        rc=$?
        cat "$TMP/anchors" >>"$OUT/anchors.log"
        [ $rc = 124 ] || [ $rc = 137 ] && row TIMEOUT anchors "lesson$L --size $size: over $(budget 90) s"
        [ $rc = 0 ] || [ $rc = 124 ] || [ $rc = 137 ] || row FAIL anchors "lesson$L --size $size: exit $rc: $(tail -1 "$TMP/anchors")"
        grep '^anchor ' "$TMP/anchors" | while read -r line; do
            case $line in
            *": FAIL"*) row FAIL anchors "lesson$L $line" ;;
            *": skipped: GPU only"*) [ "$REHEARSAL" = 1 ] && row NOTE anchors "lesson$L $line" || row FAIL anchors "lesson$L $line" ;;
            *) row NOTE anchors "lesson$L $line" ;;
            esac
        done
        grep "^  lesson $L " "$TMP/anchors" | sed 's/  (median of.*//; s/^ *//' | while read -r line; do
            row PASS anchors "$line"
        done
    done
}

# ---- preflight ----------------------------------------------------------------------------------------------
GPU_NAME= GPU_MIB=
FATAL=
preflight() {
    local log=$OUT/preflight.log
    {
        echo "bin: $BIN"
        [ -f "${ROOT:-/nonexistent}/MANIFEST" ] && cat "$ROOT/MANIFEST"
    } >>"$log"
    local missing=0
    for b in $BINS; do
        have "$b" && continue
        row FAIL preflight "$b: missing binary $BIN/$b (make gpu-bundle, or make STATIC_CHECK=1 test-build)"
        missing=1
    done
    [ -d "$BIN" ] || FATAL="no binaries: $BIN does not exist"
    # libraries: the bundle's own (rpath $ORIGIN/../lib) and the machine's CUDA runtime, cuBLAS and driver
    local nf=
    for b in $BINS; do have "$b" && nf="$nf $(ldd "$BIN/$b" 2>&1 | awk '/not found/ {print $1}')"; done
    if [ -n "${nf// /}" ] && [ "$REHEARSAL" != 1 ]; then # the CUDA libraries may live elsewhere on the machine
        local d
        for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
                 "$(python3 -c 'import nvidia.cublas as m, os; print(os.path.dirname(m.__file__) + "/lib")' 2>/dev/null)"; do
            [ -n "$d" ] && [ -d "$d" ] && export LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
        done
        echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}" >>"$log"
    fi
    for b in $BINS; do
        have "$b" || continue
        ldd "$BIN/$b" >"$TMP/ldd" 2>&1
        echo "== ldd $b" >>"$log"; cat "$TMP/ldd" >>"$log"
        local bad; bad=$(awk '/not found/ {printf "%s%s", s, $1; s = ", "}' "$TMP/ldd")
        if [ -n "$bad" ]; then row FAIL preflight "$b: cannot load $bad (missing library)"; FATAL="a library is missing"; fi
        if [ "${b#lesson}" != "$b" ] && ! "$BIN/$b" --help >/dev/null 2>"$TMP/err"; then
            row FAIL preflight "$b: does not start: $(head -1 "$TMP/err")"; FATAL="a binary does not start"
        fi
    done
    if [ "$REHEARSAL" = 1 ]; then
        GPU_NAME="emulated (CPU)" GPU_MIB=${GPU_REHEARSAL_MIB:-81559}
        echo "rehearsal: the CPU emulator stands in for the GPU ($GPU_MIB MiB assumed for the size choice)" >>"$log"
    elif ! command -v nvidia-smi >/dev/null 2>&1 && ! ls /dev/nvidia[0-9]* >/dev/null 2>&1; then
        row FAIL preflight "no GPU: nvidia-smi is not installed and there is no /dev/nvidia0"; FATAL="no GPU"
    elif ! nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader,nounits >"$TMP/smi" 2>&1; then
        row FAIL preflight "nvidia-smi fails (driver not loaded or broken): $(head -1 "$TMP/smi")"; FATAL="no driver"
    else
        IFS=',' read -r GPU_NAME drv GPU_MIB <"$TMP/smi"
        GPU_NAME=$(echo "$GPU_NAME" | sed 's/^ *//; s/ *$//') drv=${drv// /} GPU_MIB=${GPU_MIB// /}
        local cuda; cuda=$(nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p' | head -1)
        echo "GPU: $GPU_NAME, driver $drv (CUDA $cuda), $GPU_MIB MiB; bundle's CUDA runtime: ${CUDA_RT:-?}" >>"$log"
        if [ -n "$cuda" ] && [ -n "$CUDA_RT" ] &&
           [ "$(printf '%s\n%s\n' "$CUDA_RT" "$cuda" | sort -V | head -1)" != "$CUDA_RT" ]; then
            row FAIL preflight "driver $drv supports CUDA $cuda, older than the binaries' CUDA runtime $CUDA_RT: update the driver"
            FATAL="driver too old"
        fi
    fi
    if [ -z "$FATAL" ] && have lesson1; then # the runtime's own view: names a too-old driver or a broken install
        if ! CUDA_REQUIRE_DEVICE=1 timeout 30 "$BIN/lesson1" --size tiny --impl "$(all_impls 1 | head -1)" >"$TMP/probe" 2>&1; then
            row FAIL preflight "lesson1 on the device: $(grep -m1 -i 'error' "$TMP/probe" || tail -1 "$TMP/probe")"
            FATAL="the probe run (lesson1 at tiny on the device) failed"
        fi
        cat "$TMP/probe" >>"$log"
        # the limits every version's fit check compares with (kernels/runtime/cuda_fit.h), as the lesson printed them
        grep -q '^GPU:' "$TMP/probe" && row NOTE preflight "$(grep -m1 '^GPU:' "$TMP/probe" | sed 's/^GPU: //')"
    fi
    anchors_install
    [ -z "$FATAL" ] && [ $missing = 0 ] && row PASS preflight "$GPU_NAME: every binary there, every library loads"
    [ -z "$FATAL" ]
}

# ---- small: test_cuda, and every version validated at small --------------------------------------------------
step_small() {
    if have test_cuda; then # the rehearsal runs one suite: make test-emu runs them all under the emulator
        local suite=()
        [ "$REHEARSAL" = 1 ] && suite=(CK_RUN_SUITE="${GPU_REHEARSAL_SUITE:-cuda-lesson1}")
        qjob "test_cuda ${suite[*]}" "$(budget 90)" ok env CUDA_REQUIRE_DEVICE=1 CK_FORK=no "${suite[@]}" "$BIN/test_cuda"
    fi
    for L in $LESSONS; do
        have "lesson$L" || { row FAIL small "lesson$L: missing binary"; continue; }
        # rehearsed, small is tiny, whose H = 3 is no whole 16-byte row: lesson 5's cuda-v5 (TMA) needs H % 8 == 0
        local extra=()
        [ "$L" = 5 ] && [ "$REHEARSAL" = 1 ] && extra=(--dims H=8)
        for v in $(impls "$L"); do
            qjob "lesson$L $v --size $SMALL ${extra[*]}" "$(budget 60)" ok env CUDA_REQUIRE_DEVICE=1 "$BIN/lesson$L" \
                --size "$SMALL" "${extra[@]}" --impl "$v" --csv "$OUT/results.csv"
        done
    done
    run_queue small "$OUT/small.log" "$(budget 60)" 0 # one at a time: they append to results.csv
}

# ---- sanitize: four tools, every version at tiny, each its own process ---------------------------------------
step_sanitize() {
    local cs=
    if [ "$REHEARSAL" != 1 ]; then
        cs=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
        [ -n "$cs" ] || { row FAIL sanitize "compute-sanitizer not found (it comes with the CUDA toolkit)"; return; }
    fi
    local tool
    for tool in memcheck racecheck initcheck synccheck; do
        local pre=(env CUDA_REQUIRE_DEVICE=1)
        [ $tool = initcheck ] && pre+=(TRACK_POISON=0)
        [ -n "$cs" ] && pre+=("$cs" --tool "$tool" --error-exitcode 9)
        for L in $LESSONS; do
            have "lesson$L" || continue
            # rehearsed, a tool is no tool (the emulator's detectors are on in every run, and the small step ran
            # each version already): each lesson's first version walks the route
            local extra=() # tiny's H = 3 is no whole 16-byte row: lesson 5's cuda-v5 (TMA) needs H % 8 == 0
            [ "$L" = 5 ] && extra=(--dims H=8)
            for v in $(impls "$L" | if [ "$REHEARSAL" = 1 ]; then head -n 1; else cat; fi); do
                qjob "$tool lesson$L $v --size $TINY ${extra[*]}" "$(budget 60)" ok "${pre[@]}" "$BIN/lesson$L" \
                    --size "$TINY" "${extra[@]}" --impl "$v"
            done
        done
    done
    if have planted_initcheck; then # initcheck must see a read of memory nothing wrote (the poison switch)
        local pre=(env TRACK_POISON=0)
        [ -n "$cs" ] && pre+=("$cs" --tool initcheck --error-exitcode 9)
        qjob "initcheck catches planted_initcheck's unwritten read" "$(budget 30)" caught "${pre[@]}" "$BIN/planted_initcheck"
    else
        row FAIL sanitize "planted_initcheck: missing binary"
    fi
    run_queue sanitize "$OUT/sanitize.log" "$(budget 100)" 1
}

# ---- forum: every version at its forum size or the largest that fits, one process each -----------------------
# The model's predictions for this GPU (make predict), when the bundle or checkout has them: a size whose predicted
# pass, run twice (warm-up and timed), would not end inside the run's budget is passed over for the next one; a
# size the model could not predict (the CSV's time left empty: over its own limit) too, when a smaller one has a
# prediction. Without the file, memory alone decides.
PREDICTED=
case "$GPU_NAME" in
    *H100*) PREDICTED=$INPUTS/docs/results/emu/predicted_h100.csv ;;
    *H200*) PREDICTED=$INPUTS/docs/results/emu/predicted_h200.csv ;;
esac
# too_long L V SIZE SECS: 0 (true) when the model's pass for it times two exceeds SECS, or it has no time there
too_long() {
    [ -n "$PREDICTED" ] && [ -f "$PREDICTED" ] || return 1
    sed 's/"[^"]*"/dims/' "$PREDICTED" | awk -F, -v l="$1" -v v="$2" -v s="$3" -v secs="$4" '
        NR > 1 && $1 == l && $2 == v && $3 == s { found = 1; long = ($6 == "" || 2 * $6 / 1000 > secs) }
        END { exit !(found && long) }'
}
# fit L V: the first of FORUM_SIZES the lesson has whose predicted peak fits in 90% of the GPU's memory and whose
# predicted time fits the run's budget (the last size that fits in memory if none does)
fit() {
    local L=$1 v=$2 s limit=$((GPU_MIB * 1048576 / 10 * 9)) have_sizes fallback=
    have_sizes=$(presets "$L")
    for s in $FORUM_SIZES; do
        echo "$have_sizes" | grep -qx "$s" || continue
        rm -f "$TMP/predict.csv"
        "$BIN/lesson$L" --size "$s" --impl "$v" --predict --csv "$TMP/predict.csv" >/dev/null 2>&1 || continue
        local peak; peak=$(awk -F, 'NR == 2 {print $(NF - 7)}' "$TMP/predict.csv")
        [ -n "$peak" ] && [ "$peak" -le "$limit" ] || continue
        fallback=$s
        too_long "$L" "$v" "$s" "$(budget 60)" && continue
        echo "$s"
        return
    done
    echo "$fallback"
}
step_forum() {
    for L in $LESSONS; do
        have "lesson$L" || continue
        # rehearsed, the forum size is tiny, which the small step ran already: each lesson's first version walks
        # the route (the size choice, the CSV, the NOTE rows)
        for v in $(impls "$L" | if [ "$REHEARSAL" = 1 ]; then head -n 1; else cat; fi); do
            local s; s=$(fit "$L" "$v")
            if [ -z "$s" ]; then row FAIL forum "lesson$L $v: no preset of ($FORUM_SIZES) fits in the GPU's memory"; continue; fi
            qjob "lesson$L $v --size $s" "$(budget 60)" ok env CUDA_REQUIRE_DEVICE=1 "$BIN/lesson$L" --size "$s" \
                --impl "$v" --csv "$TMP/forum.csv"
        done
    done
    run_queue forum "$OUT/forum.log" "$(budget 220)" 0 # one at a time: timings
    # each lesson's versions side by side (forward + backward ms of the timed pass): what a graph saves, for one
    [ -f "$TMP/forum.csv" ] || return
    if [ -s "$OUT/results.csv" ]; then tail -n +2 "$TMP/forum.csv" >>"$OUT/results.csv"; else cp "$TMP/forum.csv" "$OUT/results.csv"; fi
    python3 - "$TMP/forum.csv" >"$TMP/times" 2>/dev/null <<'PY'
import csv, sys
from collections import defaultdict
t = defaultdict(list)
for r in csv.DictReader(open(sys.argv[1])):
    t[(r["lesson"], r["size"])].append(f'{r["impl"]} {float(r["forward_ms"]) + float(r["backward_ms"]):.3f}')
for (lesson, size), v in sorted(t.items()):
    print(f"lesson{lesson} --size {size}: ms per pass (forward + backward): {', '.join(v)}")
PY
    while read -r line; do row NOTE forum "$line"; done <"$TMP/times"
    # the graph versions: did the timed pass replay (buffers where the capture saw them) or capture again?
    grep -o 'CUDA graphs, [^:]*: capture + instantiate [0-9.]* ms[^;]*; the timed pass [a-z ]*' "$OUT/forum.log" |
        while read -r line; do row NOTE forum "$line"; done
}

# ---- profile: ncu (or the emulator's profile) on every project kernel ----------------------------------------
step_profile() {
    local ncu= refs=() kernels
    [ "$REHEARSAL" = 1 ] || { ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1); }
    [ "$REHEARSAL" = 1 ] || [ -n "$ncu" ] || { row FAIL profile "ncu not found (Nsight Compute)"; return; }
    refs=("$INPUTS"/docs/results/emu/lesson*_profile.csv)
    [ -f "${refs[0]}" ] || { row FAIL profile "no emulated profiles in $INPUTS/docs/results/emu to compare with"; return; }
    kernels=$(cat "${refs[@]}" | awk -F, 'NR > 1 && $2 == "(kernel)" {print $1}' | sort -u | paste -sd'|')
    mkdir -p "$TMP/prof"
    for L in $LESSONS; do
        have "lesson$L" || continue
        local args=(--size "$PROFILE_SIZE") # as make emu-profile ran them (tests/cuda_emu/emu.mk)
        [ "$L" = 5 ] && [ "$REHEARSAL" != 1 ] && args+=(--dims V=512)
        [ "$L" = 5 ] && [ "$REHEARSAL" = 1 ] && args+=(--dims H=8) # as the small step: cuda-v5 needs H % 8 == 0
        # lesson 4's cuda-v5 splits its weight-gradient sums past 512 rows (T Bt), as small has; tiny's 6 rows would
        # leave its sum kernel unrun in the rehearsal
        [ "$L" = 4 ] && [ "$REHEARSAL" = 1 ] && args+=(--dims T=256)
        local runs; runs=$(impls "$L") # and the last with --deterministic where the lesson has it (lesson 3)
        "$BIN/lesson$L" --help 2>/dev/null | grep -- '--deterministic' >/dev/null && runs="$runs $(impls "$L" | tail -1):det"
        for run in $runs; do
            local v=${run%:det} more=()
            [ "$run" != "$v" ] && more=(--deterministic)
            local out=$TMP/prof/lesson${L}_${run/:/_}.csv
            if [ "$REHEARSAL" = 1 ]; then
                qjob "profile lesson$L $v ${args[*]} ${more[*]}" "$(budget 60)" ok env EMU_PROFILE=1 EMU_ONE_PASS=1 \
                    EMU_PROFILE_CSV="$out" "$BIN/lesson$L" "${args[@]}" --impl "$v" "${more[@]}"
            else
                qjob "ncu lesson$L $v ${args[*]} ${more[*]}" "$(budget 40)" ok "$ncu" --csv --page raw \
                    --print-kernel-base function --kernel-name "regex:^($kernels)\$" --launch-count 60 \
                    --metrics "$NCU_METRICS" --log-file "$out" "$BIN/lesson$L" "${args[@]}" --impl "$v" "${more[@]}"
            fi
        done
    done
    run_queue profile "$OUT/profile.log" "$(budget 90)" 0
    # --launch-count counts the filtered launches in order, so a kernel that first runs after 60 others (lesson 4's
    # backward kernels: 60 launches are a few of its forward steps) is never reached: a second pass per lesson
    # profiles only the kernels its emulated profile has and the first pass did not measure
    if [ "$REHEARSAL" != 1 ] && [ -z "$IMPLS" ]; then
        for L in $LESSONS; do
            local ref="$INPUTS/docs/results/emu/lesson${L}_profile.csv" k missing=
            [ -f "$ref" ] || continue
            for k in $(awk -F, 'NR > 1 && $2 == "(kernel)" {print $1}' "$ref" | sort -u); do
                grep -qs "\"$k\"" "$TMP"/prof/lesson"${L}"_*.csv || missing=${missing:+$missing|}$k
            done
            [ -n "$missing" ] || continue
            for v in $(impls "$L"); do
                qjob "ncu lesson$L $v --size $PROFILE_SIZE, kernels the first pass missed: $missing" "$(budget 30)" ok \
                    "$ncu" --csv --page raw --print-kernel-base function --kernel-name "regex:^($missing)\$" \
                    --launch-count 12 --metrics "$NCU_METRICS" --log-file "$TMP/prof/lesson${L}_${v}_late.csv" \
                    "$BIN/lesson$L" --size "$PROFILE_SIZE" --impl "$v"
            done
        done
        [ ${#QUEUE[@]} -gt 0 ] && run_queue profile "$OUT/profile.log" "$(budget 30)" 0
    fi
    local part=()
    [ -n "$IMPLS" ] && part=(--partial) # versions left out: their kernels are not missing
    if python3 "$PROFILE_ROWS" --out "$OUT/profile.csv" --reference "${refs[@]}" "${part[@]}" \
        --measured "$TMP"/prof/*.csv --source "$([ "$REHEARSAL" = 1 ] && echo emulator-rehearsal || echo ncu)" \
        >>"$OUT/profile.log" 2>&1; then
        row PASS profile "profile.csv: $(tail -1 "$OUT/profile.log")"
    else
        row FAIL profile "profile.csv could not be written: $(tail -1 "$OUT/profile.log")"
    fi
}
NCU_METRICS=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,\
l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,\
l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,\
lts__t_requests_srcunit_tex.sum,lts__t_sectors_srcunit_tex.sum,\
l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed_op_shared_ld.sum,\
smsp__inst_executed_op_shared_st.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,\
smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct,smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct
PROFILE_ROWS=$([ -f "$HERE/profile_rows.py" ] && echo "$HERE/profile_rows.py" || echo "${ROOT:-$HERE}/profile_rows.py")

# ---- the run ----------------------------------------------------------------------------------------------------
# GPU_REPORT_DIR, or docs/results/<gpu-name>: the name is known after preflight, so the files gather in a scratch
# folder first; the ten names are cleared in the final folder, nothing else there is touched
REPORT_FILES="summary.txt preflight.log small.log sanitize.log forum.log results.csv profile.csv profile.log anchors.log anchors.csv"
OUT=$TMP/out
FINAL=${GPU_REPORT_DIR:-}
mkdir -p "$OUT"
: >"$OUT/preflight.log"
ok=1
preflight || ok=0
if [ -z "$FINAL" ]; then
    FINAL=docs/results/$(printf '%s' "${GPU_NAME:-no-gpu}" | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9-' | sed 's/--*/-/g; s/-$//')
fi
for s in small sanitize forum profile anchors; do
    case " $STEPS " in *" $s "*) ;; *) continue ;; esac
    if [ $ok = 0 ]; then row FAIL "$s" "not run: preflight failed ($FATAL)"; continue; fi
    say "step $s (at $(elapsed) s)"
    : >>"$OUT/$s.log" 2>/dev/null
    "step_$s"
done
case " $STEPS " in *" preflight small sanitize forum profile anchors "*) ;; *) row NOTE steps "only: $STEPS (GPU_REPORT_STEPS)" ;; esac
[ -n "$IMPLS" ] && row NOTE versions "only: $IMPLS (GPU_REPORT_IMPLS)"

{
    echo "gpu-report: ${GPU_NAME:-no GPU}$([ "$REHEARSAL" = 1 ] && echo ' (GPU_REHEARSAL=1: the CPU emulator, tiny sizes)'), $(elapsed) s, binaries in $BIN"
    [ -f "${ROOT:-/nonexistent}/MANIFEST" ] && sed -n 's/^\(commit\|built\|mode\|cuda runtime\): /  bundle \1: /p' "$ROOT/MANIFEST"
    cat "$ROWS"
    n_fail=$(grep -c '^FAIL\|^TIMEOUT' "$ROWS")
    n_pass=$(grep -c '^PASS' "$ROWS")
    echo "gpu-report: $n_pass PASS, $n_fail FAIL or TIMEOUT"
} >"$OUT/summary.txt"
for f in $REPORT_FILES; do
    [ -f "$OUT/$f" ] || : >"$OUT/$f" # the same ten files whatever ran: an empty one says its step did not
done
mkdir -p "$FINAL"
for f in $REPORT_FILES; do rm -f "${FINAL:?}/$f"; done
cp "$OUT"/* "$FINAL"/
echo
cat "$FINAL/summary.txt"
say "results in $FINAL ($(ls "$FINAL" | wc -l) files)"
grep -q '^PASS' "$ROWS" && ! grep -q '^FAIL\|^TIMEOUT' "$ROWS"
