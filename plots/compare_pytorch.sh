#!/usr/bin/env bash
# compare_pytorch.sh [OUT] - each lesson's C `cpu` against PyTorch's fixed formulations, one thread, both timed
# in one run of plots/pytorch_baseline.py --compare (lesson 1 at forum size, the others at medium, the sizes
# issue 17 names). Then the C cpu once more with GEMM_CPU_PROFILE=1: the GEMM provider it chose, lesson 5's bf16
# path, and its GEMMs' CPU time against the same shapes replayed alone on the provider and on oneDNN float32.
# Writes OUT (default docs/results/cpu/cpu_vs_pytorch.txt) with the machine's load at its start and end: the
# ratios are what to read, the absolute times move with the load. Needs torch (/usr/bin/python3 with Debian's
# python3-torch) and the release binaries (make). Beside them, plots/anchors.py's rows that run on a CPU
# (pytorch-chunked; torch-compile where the torch has it) in the same run; the Triton and cuDNN rows say they are
# GPU-only.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/results/cpu/cpu_vs_pytorch.txt}
py=${TORCH_PYTHON:-/usr/bin/python3}
"$py" -c 'import torch' 2>/dev/null || { echo "compare_pytorch: torch is not importable by $py"; exit 1; }
tmp=$(mktemp)
{
  echo "# plots/compare_pytorch.sh: OPENBLAS_NUM_THREADS=1, plots/pytorch_baseline.py --compare build/lessonN --repeat 5"
  echo "# $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
  for l in 1 2 3 4 5; do
    size=medium; [ $l = 1 ] && size=forum
    echo "## lesson $l, $size"
    OPENBLAS_NUM_THREADS=1 "$py" plots/pytorch_baseline.py --lesson $l --size $size --repeat 5 \
      --compare build/lesson$l --anchors \
      | grep -v "^torch [0-9]\|WARNING" | sed 's/ (median of 5, point .*)$//'
    OPENBLAS_NUM_THREADS=1 GEMM_CPU_PROFILE=1 build/lesson$l --size $size --impl cpu --repeat 3 2>&1 \
      | grep '^CPU GEMMs:\|^CPU GEMM rates\|bf16 products:\|^gemm_cpu profile:'
  done
  echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$tmp"
mv "$tmp" "$out"
cat "$out"
