#!/usr/bin/env bash
# outputs_whole.sh - what a lesson run leaves on disk (lessons/runner/output_file.h): every output whole or absent.
#   collision   two outputs naming one file (also spelt differently, or a --dump file) exit 2 before anything runs
#   full disk   a 64 KiB tmpfs (root; else a 64 KiB `ulimit -f` with SIGXFSZ ignored): exit 5, one message naming
#               the output, every earlier file as it was, no temporary, no dump directory
#   signals     SIGINT and SIGTERM mid-run: the signal's status (130, 143), nothing written, nothing left
#   no memory   an allocation failing under `ulimit -v` (exit 3): "lessonN:" message, nothing written or left
#   /dev/full   --csv, --times and stdout (a run and --predict): exit 5 and one message naming the output
#   stale dump  a dump into a directory an earlier run filled: the other implementations' files removed and named
# Usage: tests/outputs_whole.sh [BIN] (default: $BIN, else build). Exits non-zero when a check fails.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=$(cd "${1:-${BIN:-build}}" && pwd)
work=$(mktemp -d /tmp/outputs_whole.XXXXXX)
mounted=
cleanup() { [ -n "$mounted" ] && umount "$mounted" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
status=0
fail() { echo "outputs_whole: FAIL: $*"; status=1; }
ok() { echo "outputs_whole: ok: $*"; }

# the directory's listing, hidden files (temporaries) included
listing() { (cd "$1" && ls -A | tr '\n' ' '); }

# $1 the case, $2 the expected status, $3 text the output must hold; then the command (its output in $work/out)
expect() {
    local what=$1 want=$2 text=$3
    shift 3
    "$@" >"$work/out" 2>&1
    local rc=$?
    if [ "$rc" != "$want" ]; then fail "$what: exit $rc, expected $want: $(head -c 600 "$work/out")"; return 1; fi
    if ! grep -qF -- "$text" "$work/out"; then fail "$what: no '$text' in: $(head -c 600 "$work/out")"; return 1; fi
    return 0
}

# --- collision ---------------------------------------------------------------------------------------------
d=$work/collide && mkdir -p "$d" && cd "$d"
expect "--csv and --timeline on one path" 2 "name the same file" "$bin/lesson1" --size tiny --csv same.csv \
    --timeline same.csv && [ -z "$(listing .)" ] && ok "--csv X --timeline X: exit 2, nothing written"
[ -n "$(listing .)" ] && fail "--csv X --timeline X left: $(listing .)"
expect "--snapshot and --timeline, spelt differently" 2 "name the same file" "$bin/lesson1" --size tiny \
    --snapshot ./x --timeline "$d/x" && [ -z "$(listing .)" ] && ok "--snapshot ./x --timeline \$PWD/x: exit 2"
expect "--csv inside --dump" 2 "is a file --dump" "$bin/lesson1" --size tiny --csv dd/meta.json --dump dd &&
    [ -z "$(listing .)" ] && ok "--csv DIR/meta.json --dump DIR: exit 2, no directory made"
cd - >/dev/null

# --- full disk ---------------------------------------------------------------------------------------------
d=$work/full && mkdir -p "$d"
if mount -t tmpfs -o size=64k tmpfs "$d" 2>/dev/null; then
    mounted=$d
    limit=()
    how="a 64 KiB tmpfs"
else
    limit=(bash -c 'trap "" XFSZ; ulimit -f 64; exec "$@"' limit)
    how="ulimit -f 64"
fi
for f in timeline.csv snapshot.pickle; do echo "an earlier run's $f" >"$d/$f"; done
"$bin/lesson1" --size tiny --impl cpu --csv "$d/rows.csv" >/dev/null 2>&1 || fail "full disk: the first --csv failed"
before=$(cd "$d" && md5sum timeline.csv snapshot.pickle rows.csv)
"${limit[@]}" "$bin/lesson4" --size small --impl naive --timeline "$d/timeline.csv" --snapshot "$d/snapshot.pickle" \
    --csv "$d/rows.csv" --dump "$d/dump" >/dev/null 2>"$work/err"
rc=$?
messages=$(grep -c "failed" "$work/err")
if [ $rc != 5 ] || [ "$messages" != 1 ] || ! grep -q "writing --timeline $d/timeline.csv failed" "$work/err"; then
    fail "full disk ($how): exit $rc, $messages messages: $(cat "$work/err")"
elif [ "$(cd "$d" && md5sum timeline.csv snapshot.pickle rows.csv)" != "$before" ]; then
    fail "full disk ($how): an earlier file changed"
elif [ "$(listing "$d")" != "rows.csv snapshot.pickle timeline.csv " ]; then
    fail "full disk ($how): left $(listing "$d")"
else
    ok "full disk ($how): exit 5, one message ($(cat "$work/err")), the earlier files as they were, nothing left"
fi
rm -f "$d"/*
"${limit[@]}" "$bin/lesson2" --size small --impl naive,cpu --dump "$d/dump/sub" >/dev/null 2>"$work/err"
rc=$?
if [ $rc != 5 ] || [ "$(grep -c "writing --dump $d/dump/sub/" "$work/err")" != 1 ] || [ -n "$(listing "$d")" ]; then
    fail "full disk --dump ($how): exit $rc, left '$(listing "$d")': $(cat "$work/err")"
else
    ok "full disk --dump ($how): exit 5, one message naming the file, no .npy, no directory left"
fi
[ -n "$mounted" ] && umount "$mounted" && mounted=

# --- signals -----------------------------------------------------------------------------------------------
# lesson 2 medium's naive runs for seconds; the signal comes once the title is printed (the outputs are open).
# Job control on: a script's background job would otherwise start with SIGINT ignored (and keep ignoring it).
set -m
for sig in INT TERM; do
    d=$work/sig$sig && mkdir -p "$d"
    echo "an earlier run's timeline" >"$d/timeline.csv"
    before=$(md5sum <"$d/timeline.csv")
    "$bin/lesson2" --size medium --impl naive --timeline "$d/timeline.csv" --snapshot "$d/s.pickle" \
        --csv "$d/rows.csv" --times "$d/times.csv" --dump "$d/dump/sub" >"$d.out" 2>&1 &
    pid=$!
    for _ in $(seq 100); do grep -q "^Lesson 2" "$d.out" && break; sleep 0.1; done
    kill -$sig $pid
    wait $pid
    rc=$?
    want=$((128 + $(kill -l $sig)))
    if [ $rc != $want ]; then
        fail "SIG$sig: exit $rc, expected $want: $(cat "$d.out")"
    elif [ "$(md5sum <"$d/timeline.csv")" != "$before" ] || [ "$(listing "$d")" != "timeline.csv " ]; then
        fail "SIG$sig: left $(listing "$d") (the earlier timeline changed or a file was left)"
    else
        ok "SIG$sig mid-run: exit $rc, the earlier timeline as it was, no CSV, snapshot, temporary or dump directory"
    fi
done
set +m

# --- no memory ---------------------------------------------------------------------------------------------
# naive's W_expanded at B=65536 is 8 GiB: over a 4 GB address space, which leaves the libraries (CUDA's runtime,
# OpenBLAS's buffers: it spins where those cannot be had) room to start. timeout: a hang is a failure, not a stall.
d=$work/oom && mkdir -p "$d"
echo "an earlier run's timeline" >"$d/timeline.csv"
if grep -q __asan_init "$bin/lesson1"; then
    echo "outputs_whole: the out-of-memory case skipped: an ASan build needs the address space ulimit -v takes"
elif expect "out of memory" 3 "lesson1: out of host memory" bash -c 'ulimit -v 4000000; exec timeout 60 "$@"' oom \
    "$bin/lesson1" --dims B=65536 --impl naive --mem-limit 100G --timeline "$d/timeline.csv" --csv "$d/rows.csv" \
    --snapshot "$d/s.pickle" --dump "$d/dump"; then
    if [ "$(listing "$d")" != "timeline.csv " ] || ! grep -q "^an earlier" "$d/timeline.csv"; then
        fail "out of memory: left $(listing "$d")"
    else
        ok "out of memory: exit 3, '$(grep -o "lesson1: out of host memory[^']*" "$work/out")', nothing left"
    fi
fi

# --- /dev/full ---------------------------------------------------------------------------------------------
expect "--csv /dev/full" 5 "lesson1: writing --csv /dev/full failed: No space left on device" \
    "$bin/lesson1" --size tiny --impl cpu --csv /dev/full && ok "--csv /dev/full: exit 5, the write failure named"
expect "--times /dev/full" 5 "lesson1: writing --times /dev/full failed: No space left on device" \
    "$bin/lesson1" --size tiny --impl cpu --times /dev/full && ok "--times /dev/full: exit 5, the write failure named"
expect "--predict > /dev/full" 5 "lesson3: writing the report to stdout failed: No space left on device" \
    bash -c 'exec "$@" 2>&1 >/dev/full' full "$bin/lesson3" --size tiny --predict &&
    ok "--predict > /dev/full: exit 5, one message"
expect "a run > /dev/full" 5 "lesson1: writing the report to stdout failed: No space left on device" \
    bash -c 'exec "$@" 2>&1 >/dev/full' full "$bin/lesson1" --size tiny --impl cpu && ok "a run > /dev/full: exit 5"
[ -c /dev/full ] || fail "/dev/full is no longer a character device"

# --- stale dump --------------------------------------------------------------------------------------------
d=$work/stale && mkdir -p "$d"
"$bin/lesson1" --size tiny --impl naive,cpu --dump "$d" >/dev/null 2>&1 || fail "stale dump: the tiny dump failed"
echo "a learner's notes" >"$d/notes.txt"
if expect "stale dump" 0 "removed 3 an earlier run left that this run does not write: naive." \
    "$bin/lesson1" --size small --impl cpu --dump "$d"; then
    shape=$(head -c 128 "$d/cpu.out.npy" | tr -d '\0' | grep -ao "'shape': ([0-9, ]*)")
    if [ -n "$(ls "$d" | grep '^naive\.')" ] || [ ! -f "$d/notes.txt" ] || [ "$shape" != "'shape': (512, 8, 64)" ] ||
        ! grep -q '"impls": \["cpu"\]' "$d/meta.json"; then
        fail "stale dump: left $(listing "$d"), cpu.out $shape"
    else
        ok "stale dump: $(grep -o "wrote.*" "$work/out")"
    fi
fi

[ $status = 0 ] && echo "outputs_whole: every output whole or absent" || echo "outputs_whole: FAILED"
exit $status
