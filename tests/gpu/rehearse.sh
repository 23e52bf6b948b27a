#!/usr/bin/env bash
# tests/gpu/rehearse.sh BUNDLE_DIR - the GPU route rehearsed here (make gpu-rehearsal, CI): the emulation bundle
# (make EMU=1 gpu-bundle) run by its own gpu-report.sh with GPU_REHEARSAL=1 must pass and write the ten files
# a GPU run writes; then four broken routes must fail, each for its own reason (seconds each):
# a bundle with a binary removed, a bundle with a broken library, a checkout with no build/ at all, and (in the
# preflight's probe run) a cuBLAS whose products are wrong, which lesson 1's validation must catch.
set -uo pipefail
[ $# = 1 ] || { echo "usage: $0 BUNDLE_DIR" >&2; exit 2; }
bundle=$1
out=${GPU_REPORT_DIR:-build/gpu-rehearsal}
t0=$(date +%s)
status=0
FILES="anchors.csv anchors.log forum.log preflight.log profile.csv profile.log results.csv sanitize.log small.log summary.txt"

# the emulated GPU holds PTX's fragment register order (EMU_WMMA_PTX=1; tests/cuda_emu/include/mma.h), the layout
# a GPU holds
export EMU_WMMA_PAIRS=1 EMU_WMMA_PTX=1
echo "== rehearsal: GPU_REHEARSAL=1 bash $bundle/gpu-report.sh"
rm -rf "$out"
if ! GPU_REHEARSAL=1 GPU_REPORT_DIR=$out GPU_REPORT_JOBS=${GPU_REPORT_JOBS:-2} GPU_REPORT_SCALE=${GPU_REPORT_SCALE:-2} bash "$bundle/gpu-report.sh" >"$out.log" 2>&1; then
    grep -E '^(FAIL|TIMEOUT)' "$out/summary.txt" 2>/dev/null || tail -20 "$out.log"
    echo "rehearse: the rehearsal failed (full output: $out.log)"
    status=1
fi
tail -1 "$out/summary.txt" 2>/dev/null
if [ "$(ls "$out" 2>/dev/null | tr '\n' ' ')" != "$FILES " ]; then
    echo "rehearse: $out holds [$(ls "$out" 2>/dev/null | tr '\n' ' ')], not the ten files [$FILES]"
    status=1
fi

# grid_sync_cost, which a GPU call runs beside the report (tests/gpu/issue27_followup.sh): it runs and measures the
# grid the emulated device holds
if ! "$bundle/unpacked/bin/grid_sync_cost" 8 >"$out.sync" 2>&1 || ! grep -q '^ *[0-9]* x [0-9]* .*[0-9.]$' "$out.sync"; then
    cat "$out.sync"; echo "rehearse: grid_sync_cost did not measure a grid"; status=1
else
    echo "rehearse: grid_sync_cost runs: $(tail -1 "$out.sync")"
fi

# broken CASE WHY EXPECT CMD...: the report must exit non-zero and its output must say EXPECT
broken() {
    local case=$1 expect=$2 log
    shift 2
    log=$(mktemp)
    if "$@" >"$log" 2>&1; then
        echo "rehearse: $case: the report PASSED (it must fail)"; status=1
    elif ! grep -q -- "$expect" "$log"; then
        echo "rehearse: $case: failed, but without saying \"$expect\":"; tail -5 "$log"; status=1
    else
        echo "rehearse: $case: fails as it must: $(grep -m1 -- "$expect" "$log")"
    fi
    rm -f "$log"
}
copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
cp -a "$bundle" "$copy/no-binary" # the rehearsal unpacked it: break the unpacked tree, newer than the payload
rm -f "$copy/no-binary/unpacked/bin/lesson3"
touch "$copy/no-binary/unpacked/MANIFEST"
broken "a bundle without bin/lesson3" "lesson3: missing binary" \
    env GPU_REHEARSAL=1 GPU_REPORT_STEPS=preflight GPU_REPORT_DIR="$copy/r1" bash "$copy/no-binary/gpu-report.sh"
cp -a "$bundle" "$copy/bad-lib"
lib=$(ls "$copy/bad-lib/unpacked/lib" | head -1)
echo "not a library" >"$copy/bad-lib/unpacked/lib/$lib"
touch "$copy/bad-lib/unpacked/MANIFEST"
broken "a bundle whose lib/$lib is broken" "$lib" \
    env GPU_REHEARSAL=1 GPU_REPORT_STEPS=preflight GPU_REPORT_DIR="$copy/r2" bash "$copy/bad-lib/gpu-report.sh"
broken "lesson 1 with a cuBLAS that computes wrong products (EMU_CUBLAS_WRONG=1)" "FAILED validation against float64" \
    env EMU_CUBLAS_WRONG=1 GPU_REHEARSAL=1 GPU_REPORT_STEPS="preflight small" GPU_REPORT_LESSONS=1 \
    GPU_REPORT_DIR="$copy/r4" bash "$bundle/gpu-report.sh"
broken "a checkout without build/" "missing binary" \
    env GPU_REHEARSAL=1 BIN="$copy/no-build" GPU_REPORT_STEPS=preflight GPU_REPORT_DIR="$copy/r3" tests/gpu/gpu_report.sh

echo "rehearse: $(( $(date +%s) - t0 )) s; results in $out"
[ $status = 0 ] && echo "rehearse: the route holds" || echo "rehearse: FAILED"
exit $status
