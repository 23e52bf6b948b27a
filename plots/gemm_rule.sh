#!/usr/bin/env bash
# gemm_rule.sh [OUT] - the measurements behind the CPU GEMM layer's provider rule (lessons/host/gemm_cpu.c):
# lessons 2 and 4 at medium, cpu on one thread, each product on oneDNN's sgemm, on OpenBLAS, and by the rule, on
# this CPU and capped to AVX2 (DNNL_MAX_CPU_ISA=AVX2 OPENBLAS_CORETYPE=Haswell); each line is the CPU time of
# cpu's GEMMs inside the layer per run (GEMM_CPU_PROFILE=1, --repeat 3), the figure the rule compares. Then what
# idle library threads cost on 2 threads: lesson 1 tiny with the wait settings the lessons set, and with the
# libraries' defaults (GEMM_CPU_REEXECUTED=1: the program is not re-executed). Last, ten runs of build/lesson5
# --size medium --impl cpu (the issue's check): their distinct CPU GEMMs lines, counted, and the rates. Writes OUT (default
# docs/results/cpu/gemm_rule.txt) with the load average at the start and the end. Needs the release binaries.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/results/cpu/gemm_rule.txt}
tmp=$(mktemp)
avx2="DNNL_MAX_CPU_ISA=AVX2 OPENBLAS_CORETYPE=Haswell"
{
  echo "# plots/gemm_rule.sh: build/lessonN --size medium --impl cpu --threads 1 --repeat 3, GEMM_CPU_PROFILE=1"
  echo "# $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
  for cap in own avx2; do
    for l in 2 4; do
      for p in onednn openblas rule; do
        envs=""
        [ $cap = avx2 ] && envs="$avx2"
        [ $p = rule ] || envs="$envs GEMM_CPU_PROVIDER=$p"
        line=$(env $envs GEMM_CPU_PROFILE=1 build/lesson$l --size medium --impl cpu --threads 1 --repeat 3 2>&1 |
               grep '^gemm_cpu profile' | tail -1 | sed 's/^gemm_cpu profile: cpu: //; s/; the same shapes alone.*//')
        echo "$cap lesson $l ${p}: $line"
      done
    done
  done
  for how in "sleeping workers (the lessons' setting)#" "the libraries' defaults#GEMM_CPU_REEXECUTED=1"; do
    IFS='#' read -r label envs <<<"$how"
    for run in 1 2 3; do
      idle=$(env $envs build/lesson1 --size tiny --impl cpu --threads 2 2>&1 | grep -o 'idle workers used [0-9.]* CPU ms')
      echo "2 threads, $label, run $run: $idle over a 10 ms pause"
    done
  done
  tmpd=$(mktemp -d)
  for run in 1 2 3 4 5 6 7 8 9 10; do build/lesson5 --size medium --impl cpu > "$tmpd/$run.txt" 2>&1; done
  echo "ten runs of build/lesson5 --size medium --impl cpu, their CPU GEMMs lines (count, line):"
  grep -h '^CPU GEMMs:' "$tmpd"/*.txt | sort | uniq -c
  echo "their rates lines:"
  grep -h '^CPU GEMM rates' "$tmpd"/*.txt | sed 's/^CPU GEMM rates (measured, for the time estimates; they choose nothing): /  /'
  echo "their load warnings: $(cat "$tmpd"/*.txt | grep -c '^warning: load average') of 10"
  rm -r "$tmpd"
  echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$tmp"
mv "$tmp" "$out"
cat "$out"
