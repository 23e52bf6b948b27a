#!/usr/bin/env bash
# The Python checks `make test` runs beside the Check suites (BIN: the lesson binaries' directory, default build):
#   tests/test_snapshot.py     every lesson's --snapshot replays to its --timeline, peak and the caching allocator's
#                              rules (python3 only); PyTorch >= 2.1's _memory_viz reads them where one has it
#   tests/test_gpu_tools.py    the tools that read a lent GPU's files for the docs print what the files hold
#   tests/test_retired.py      docs/results/retired.csv's rule per results file in its readers; every measured row
#                              not retired has today's peak formula (cuda_order.py --peaks; needs a build with the
#                              CUDA versions: BIN, else build/emu; skipped without)
#   tests/test_compare_npy.py  plots/compare_npy.py judges by the lessons' rule (needs numpy: python3, else
#                              /usr/bin/python3; skipped without)
#   tests/test_bench_plots.py  `make plots` with no CSVs changes nothing; another results folder draws into its own
#                              (needs matplotlib, found the same way)
#   tests/test_peak_alloc.py   the preloaded CPU peak counter sees every tensor (needs torch; skipped without)
#   tests/test_anchors.py      plots/anchors.py's float64 references and tolerances, a planted wrong row refused (torch)
# The torch python: TORCH_PYTHON, else /usr/bin/python3 (Debian's python3-torch, on the system OpenBLAS like the
# C code), else python3, the first that imports torch. Exits non-zero when a check fails.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build}
if ! command -v python3 >/dev/null; then
    echo "python_checks: no python3: the snapshot and PyTorch checks are skipped"
    exit 0
fi
python3 tests/test_snapshot.py "$BIN"
python3 tests/test_gpu_tools.py
python3 tests/test_retired.py "$BIN"
# $1 a module, $2 the check: run by the first of python3, /usr/bin/python3 that imports it, else skipped
with_module() {
    for c in python3 /usr/bin/python3; do
        if command -v "$c" >/dev/null && "$c" -c "import $1" 2>/dev/null; then "$c" "$2"; return; fi
    done
    echo "python_checks: no python with $1: $2 skipped"
}
with_module numpy tests/test_compare_npy.py
with_module matplotlib tests/test_bench_plots.py
py=${TORCH_PYTHON:-}
if [ -z "$py" ]; then
    for c in /usr/bin/python3 python3; do
        if command -v "$c" >/dev/null && "$c" -c 'import torch' 2>/dev/null; then py=$c; break; fi
    done
fi
if [ -z "$py" ] || [ "$py" = none ]; then
    echo "python_checks: no python with torch: tests/test_peak_alloc.py and tests/test_anchors.py skipped"
    exit 0
fi
"$py" tests/test_peak_alloc.py
"$py" tests/test_anchors.py
