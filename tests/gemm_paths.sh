#!/usr/bin/env bash
# gemm_paths.sh - every lesson's CPU versions, validated against float64, on each CPU GEMM path a machine may
# take (lessons/host/gemm_cpu.c's rule), and each run saying which one it took, why, and that idle workers
# sleep. The first setting is a CPU without AVX-512, emulated by capping both libraries (DNNL_MAX_CPU_ISA=AVX2: oneDNN's kernels and no bf16 instructions;
# OPENBLAS_CORETYPE=Haswell: OpenBLAS's AVX2 kernels); then each provider forced, then lesson 5's float32 path
# by choice, lesson 5's plain C row pass, then this CPU's own path uncapped (lesson 5 on bf16 instructions where
# /proc/cpuinfo lists avx512_bf16, which oneDNN's avx512_core_bf16 kernels need, and its row pass on AVX-512F
# where listed). The AVX2 cap holds lesson 5's row pass to its AVX2 path too (LCE_CPU_ROWS=avx2). Size small,
# one thread; every lesson is validated against float64 with its stated tolerance on each path.
# Usage: tests/gemm_paths.sh [BIN] (default build); LESSONS="1 2 ..." (default: the Makefile's list).
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build}
lessons=${LESSONS:-1 2 3 4 5}
avx2="DNNL_MAX_CPU_ISA=AVX2 OPENBLAS_CORETYPE=Haswell LCE_CPU_ROWS=avx2"
# with the instructions, the bf16 kernel is found and runs (a rule: no timing decides it)
own_bf16="float32 copies, then the float32 GEMM (oneDNN at"
grep -qw avx512_bf16 /proc/cpuinfo 2>/dev/null && own_bf16="oneDNN bf16 matmul (brg:avx512_core_bf16), by rule"
# with AMX's bf16 tiles as well, oneDNN takes those where the kernel grants them to the process (either is right)
grep -qw amx_bf16 /proc/cpuinfo 2>/dev/null &&
  own_bf16="$own_bf16|oneDNN bf16 matmul (brg:avx512_core_amx_bf16), by rule"
# lesson 5's row pass on its own: the widest path /proc/cpuinfo lists (optimized/linear_ce_fused.c)
own_rows="c (the widest"
grep -qw avx2 /proc/cpuinfo 2>/dev/null && grep -qw fma /proc/cpuinfo && own_rows="avx2 (the widest"
grep -qw avx512f /proc/cpuinfo 2>/dev/null && own_rows="avx512 (the widest"
# setting # what the "CPU GEMMs:" line must say (grep) # what lesson 5's bf16 line must say (alternatives: |)
#   # what lesson 5's row-pass line must say
settings=(
  "$avx2#^oneDNN .* sgemm (avx2), OpenBLAS .* (Haswell kernels) for a product with a dimension <= 32, by rule#float32 copies, then the float32 GEMM (oneDNN at avx2#avx2 (forced"
  "$avx2 GEMM_CPU_PROVIDER=openblas#^OpenBLAS .*(Haswell kernels), forced#float32 copies#avx2 (forced"
  "$avx2 GEMM_CPU_PROVIDER=onednn#^oneDNN .* sgemm (avx2), forced#float32 copies#avx2 (forced"
  "$avx2 GEMM_CPU_PROVIDER=onednn-matmul#^oneDNN .* matmul (.*, avx2), forced#float32 copies#avx2 (forced"
  "GEMM_CPU_BF16=0#, by rule (oneDNN at#float32 copies, then the float32 GEMM (GEMM_CPU_BF16=0)#$own_rows"
  "LCE_CPU_ROWS=c#, by rule (oneDNN at#$own_bf16#c (forced"
  "#, by rule (oneDNN at#$own_bf16#$own_rows"
)
status=0
t0=$(date +%s)
for s in "${settings[@]}"; do
  IFS='#' read -r envs want_gemm want_bf16 want_rows <<<"$s"
  for l in $lessons; do
    out=$(env $envs OPENBLAS_NUM_THREADS=1 "$bin/lesson$l" --size small --impl naive,cpu 2>&1)
    rc=$?
    line=$(grep -m1 '^CPU GEMMs:' <<<"$out" | sed 's/^CPU GEMMs: //')
    bad=""
    [ $rc -eq 0 ] || bad="exit status $rc"
    grep -q "$want_gemm" <<<"$line" || bad="${bad:+$bad; }the GEMM line does not say '$want_gemm'"
    grep -q "1 thread (OPENBLAS_NUM_THREADS=1); workers sleep between calls" <<<"$line" ||
      bad="${bad:+$bad; }the GEMM line does not say '1 thread (OPENBLAS_NUM_THREADS=1); workers sleep between calls'"
    if [ "$l" = 5 ]; then
      IFS='|' read -ra alts <<<"$want_bf16"
      found=0
      for a in "${alts[@]}"; do grep -qF "bf16 products: $a" <<<"$out" && found=1; done
      [ $found = 1 ] || bad="${bad:+$bad; }no 'bf16 products: $want_bf16' line"
      grep -qF "cpu: row pass (max, exp and sum, bf16 gradient): $want_rows" <<<"$out" ||
        bad="${bad:+$bad; }no 'row pass ...: $want_rows' line"
    fi
    where=${envs:-"this CPU's own path"}
    if [ -n "$bad" ]; then
      status=1
      echo "gemm_paths: FAIL lesson $l under $where: $bad"
      echo "$out" | tail -20
    else
      echo "gemm_paths: lesson $l under $where: validated; $line"
    fi
  done
done
echo "gemm_paths: $([ $status = 0 ] && echo "every lesson validated on every path" || echo FAILED) in $(( $(date +%s) - t0 )) s"
exit $status
