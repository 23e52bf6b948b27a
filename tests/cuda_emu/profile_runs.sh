#!/usr/bin/env bash
# profile_runs.sh - the runs of `make emu-profile`, two at a time (the emulator runs a lesson on one core; the
# machine has two, and in CI this step ends its lane alone): a run starts when either of the two ends. Each run is
# one line of stdin:
#     LESSON CSV ARGS...          e.g. "lesson3 docs/results/emu/lesson3_profile.csv --size small --impl cuda-v1"
# run as  EMU_ONE_PASS=1 EMU_PROFILE=1 EMU_PROFILE_CSV=CSV BIN/LESSON ARGS...  (the caller exports
# EMU_PROFILE_TARGETS), its output kept in BIN/LESSON.<n>.profile.out and shown, last 40 lines, if it fails:
# a version's validation against the float64 reference, its memory formula, or a kernel's stated design.
#   usage: profile_runs.sh BIN < RUNS        exit 1 if any run failed
set -u
bin=$1
n=0 status=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# finish_one: waits for whichever run ends first, shows why it failed (bash 5.1's wait -n -p names it)
declare -A run_of
running=0
finish_one() {
  local pid rc=0
  wait -n -p pid || rc=$?
  [ $rc = 0 ] || { cat "$tmp/${run_of[$pid]}.why"; status=1; }
  running=$((running - 1))
}

while read -r lesson csv args; do
  [ -n "$lesson" ] || continue
  n=$((n + 1))
  out=$bin/$lesson.$n.profile.out
  echo "== $bin/$lesson $args (profile: $csv)"
  # shellcheck disable=SC2086
  (EMU_ONE_PASS=1 EMU_PROFILE=1 EMU_PROFILE_CSV=$csv "./$bin/$lesson" $args >"$out" 2>&1 ||
    { tail -n 40 "$out"; echo "emu-profile: $lesson $args failed (a version's validation or its design)"; exit 1; }) \
    </dev/null >"$tmp/$n.why" 2>&1 &
  run_of[$!]=$n
  running=$((running + 1))
  [ $running -lt 2 ] || finish_one
done
while [ $running -gt 0 ]; do finish_one; done
exit $status
