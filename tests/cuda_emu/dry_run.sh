#!/usr/bin/env bash
# dry_run.sh BIN - every lesson's CUDA versions at their forum size and at the largest dimensions the CLI accepts,
# in the emulator's dry run (EMU_DRY=1, tests/cuda_emu/emu_dry.cc): launch configurations, cuBLAS extents and
# the index arithmetic of the boundary blocks and, inside them and on the host, of the boundary iterations of
# every loop with a data-sized range (the skip the emulation build adds: emu_loops.cc), at sizes no test can
# afford, without doing the work. BIN: a directory of emulation-build lessons (build/emu; build/emu-san, SANITIZE=1's, adds UBSan's signed-overflow
# check to host and device). PROBE_BIN (optional): another such directory whose lessons answer the bisection's
# probes below (a probe runs the host's checks only, the same source in either build, and the plain build
# starts several times faster than ASan's), while every reported run uses BIN.
#   usage: dry_run.sh BIN [PROBE_BIN]
# "The largest dimensions the CLI accepts", per dimension: the CLI takes 1 .. 2^31-1 for each; with the other
# dimensions at the tiny preset, the largest value (found by bisection) for which the lesson runs the version:
# above it the driver refuses (exit 2), or the version is skipped with its reason (its predicted peak over an
# H200's 141 GB, the --mem-limit below, or its unfit check), so no launch happens. A version that cannot handle a
# size must refuse it that way; a launch error, a UBSan report or a fault at the largest accepted size fails.
set -u
bin=${1:-build/emu}
probe_bin=${2:-$bin}
[ -x "$probe_bin/lesson1" ] || probe_bin=$bin
mem=141000000000
int_max=2147483647
timeout=${DRY_TIMEOUT:-15} # seconds per run. Every run takes well under a second today: the loops that scale
                            # with a dimension (a kernel's J x N dot products, lesson 2's v and t launch steps,
                            # lesson 4's T) run their boundary iterations only. A loop left uninstrumented at 1e9
                            # would not finish: such a run is listed as "not checked" and fails
status=0
unchecked=0

# lesson | versions (each run alone; ALL: every cuda-vN of its --help) | its forum size (or the largest preset) |
# dimension names | extra flags
table=(
  "1|ALL|forum|B G K N|"
  "2|ALL|forum|n t v c|"
  "3|ALL|forum|I J M N K|"
  "3|cuda-v3|forum|I J M N K|--deterministic"
  "4|ALL|medium|T Bt X H|"
  "5|ALL|forum|N H V|"
  "5|cuda-v5|forum|N H V|--size small" # v5 takes H % 8 == 0 only: tiny's H = 3 is refused, small's 128 is not
)
maxima=${DRY_MAXIMA:-1} # 0: the forum sizes only (the maxima's bisection takes minutes)

# 0 when the lesson accepts dimension $3=$4 for version $2 (no exit 2, no "skipped" in the table): a run of the
# host code with EMU_DRY=2, which checks every launch's configuration and runs no block. The refusals come
# before the first launch, within milliseconds, so a run still going after 2 s was accepted. A failure counts
# as accepted, so the bisection climbs to it and the final run reports it. GEMM_CPU_PROVIDER=openblas: no CPU GEMM
# runs here, and naming the provider skips the start-up race of providers (45 ms a probe instead of 155 under
# ASan; a bisection makes 31 probes per dimension).
accepted() {
  local out
  out=$(GEMM_CPU_PROVIDER=openblas EMU_DRY=2 timeout 2 "$probe_bin/lesson$1" --impl "$2" --mem-limit $mem --size tiny \
        --dims "$3=$4" $5 2>&1)
  [ $? -ne 2 ] && ! echo "$out" | grep -q "^$2 *skipped"
}

# The maxima found last time (dry_maxima.txt: "lesson version dimension value [extra flags]"), each tried first with
# two probes: accepted at the value and refused one above it (or the value is 2^31-1) make it the largest, as the
# bisection would have found (both assume the acceptance falls once as the dimension grows); otherwise the bisection
# runs (31 probes) and its value is printed, to be written back with DRY_MAXIMA_UPDATE=1. About 3,400 probes a run
# without the file, 220 with it.
maxima_file=$(dirname "$0")/dry_maxima.txt
declare -A hint=()
if [ -f "$maxima_file" ]; then
  while read -r hl hv hd hn hx; do
    case "$hl" in ''|'#'*) continue;; esac
    hint["$hl|$hv|$hd|$hx"]=$hn
  done <"$maxima_file"
fi
found=() # this run's maxima, in the file's format
stale=0

# the largest value of dimension $3 in 1 .. 2^31-1 that the lesson accepts for version $2 (0: none)
largest() {
  local lo=0 hi=$int_max mid h=${hint["lesson$1|$2|$3|$4"]:-}
  if [ -n "$h" ] && { [ "$h" -eq 0 ] || accepted "$1" "$2" "$3" "$h" "$4"; } &&
     { [ "$h" -eq $int_max ] || ! accepted "$1" "$2" "$3" $((h + 1)) "$4"; }; then
    echo "$h"
    return
  fi
  while [ $lo -lt $hi ]; do
    mid=$(( (lo + hi + 1) / 2 ))
    if accepted "$1" "$2" "$3" $mid "$4"; then lo=$mid; else hi=$((mid - 1)); fi
  done
  echo $lo
}

run() { # lesson, version, arguments...: one dry run, one line of report
  local l=$1 v=$2
  shift 2
  local out rc start=$(date +%s%N)
  out=$(EMU_DRY=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 timeout $timeout "$bin/lesson$l" --impl "$v" \
        --mem-limit $mem "$@" 2>&1)
  rc=$?
  local ms=$(( ($(date +%s%N) - start) / 1000000 )) note=ok
  if echo "$out" | grep -q "^$v *skipped"; then note=$(echo "$out" | grep -m 1 "^$v *skipped" | sed "s/^$v *//")
  elif [ $rc -eq 124 ]; then note="not checked: over ${timeout} s (DRY_TIMEOUT)"; unchecked=$((unchecked + 1))
  elif [ $rc -eq 2 ]; then note="refused (exit 2): $(echo "$out" | tail -n 1)"
  elif [ $rc -ne 0 ] || echo "$out" | grep -q "cuda-emu:\|runtime error\|AddressSanitizer"; then
    note="FAILED (exit $rc)"
    status=1
  fi
  printf "  lesson%s %-8s %-44s %6d ms  %s\n" "$l" "$v" "$*" $ms "$note"
  [ "$note" = "FAILED (exit $rc)" ] && echo "$out" | grep -m 6 "cuda-emu:\|runtime error\|AddressSanitizer\|SUMMARY" | \
    sed 's/^/      /'
  return 0
}

for row in "${table[@]}"; do
  IFS='|' read -r l versions size dims extra <<<"$row"
  [ "$versions" = ALL ] && versions=$("$bin/lesson$l" --help | sed -n 's/^ *\(cuda-v[0-9]*\) .*/\1/p')
  [ -n "$versions" ] || { echo "dry run: lesson$l --help names no cuda-vN version"; status=1; }
  for v in $versions; do
    run "$l" "$v" --size "$size" $extra
    [ "$maxima" = 1 ] || continue
    for d in $dims; do
      n=$(largest "$l" "$v" "$d" "$extra")
      found+=("lesson$l $v $d $n${extra:+ $extra}")
      if [ "${hint["lesson$l|$v|$d|$extra"]:-}" != "$n" ]; then
        stale=$((stale + 1))
        echo "  (lesson$l $v $d: the largest accepted is $n, ${maxima_file} says ${hint["lesson$l|$v|$d|$extra"]:-nothing})"
      fi
      [ "$n" -gt 0 ] && run "$l" "$v" --size tiny --dims "$d=$n" $extra
    done
  done
done
if [ "$maxima" = 1 ] && [ $stale -gt 0 ]; then
  if [ "${DRY_MAXIMA_UPDATE:-0}" = 1 ]; then
    { echo "# dry_run.sh's maxima: lesson version dimension largest-accepted [extra flags]; DRY_MAXIMA_UPDATE=1 writes it"
      printf '%s\n' "${found[@]}"; } >"$maxima_file"
    echo "dry run: $stale maxima differed from the file: ${maxima_file} rewritten"
  else
    echo "dry run: $stale maxima differ from ${maxima_file} (bisected instead): DRY_MAXIMA_UPDATE=1 rewrites it"
  fi
fi
# a run over the time limit fails too: every loop with a data-sized range is skipped to its ends, so one that is
# still running is a loop the build did not instrument (emu_loops.cc), and what it would reach goes unchecked
[ $unchecked -gt 0 ] && echo "dry run: $unchecked run(s) not checked within ${timeout} s (listed above)" && status=1
[ $status -eq 0 ] && echo "dry run: no failure" || echo "dry run: FAILED"
exit $status
