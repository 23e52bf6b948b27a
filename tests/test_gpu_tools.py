#!/usr/bin/env python3
"""The tools that read a lent GPU's files for the docs (docs/tools/gpu_times.py, gpu_kernel_times.py, gpu_stalls.py,
tests/cuda_emu/predict_table.sh's measured lines, versions_table.py; and sweep_growth.py, the CPU sweep's), run on
the committed files: each must print the figures
those files hold, worked out here from the raw CSVs by a second route (the docs quote the tools' lines).

    python3 tests/test_gpu_tools.py          (from the repository root; tests/python_checks.sh runs it)
"""
import csv
import gzip
import io
import statistics
import subprocess
import sys

H200 = "docs/results/nvidia-h200"
FOLLOWUP = H200 + "/issue27-followup"
failures = []
checks = [0]


def out(*cmd):
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


def expect(what, text, needle):
    checks[0] += 1
    if needle not in text:
        failures.append(f"{what}: expected {needle!r} in:\n{text}")


def times_medians():
    """(lesson, impl) -> median forward + backward ms of the follow-up's timed runs, from times.csv directly."""
    runs = {}
    for r in csv.DictReader(open(FOLLOWUP + "/times.csv")):
        runs.setdefault((r["lesson"], r["impl"]), []).append(float(r["forward_ms"]) + float(r["backward_ms"]))
    return {k: statistics.median(v) for k, v in runs.items()}


def kernel_ms(path, name):
    """The summed gpu__time_duration (ms) of a kernel's launches over the file's two passes, halved."""
    lines = open(path).read().splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith('"ID"'))
    rows = list(csv.reader(io.StringIO("\n".join(l for l in lines[start:] if l.startswith('"')))))
    k, t = rows[0].index("Kernel Name"), rows[0].index("gpu__time_duration.sum")
    assert rows[1][t] in ("ns", "nsecond"), rows[1][t]
    return sum(float(r[t].replace(",", "")) for r in rows[2:] if r[k] == name) / 2e6


def barrier_share(path):
    """stall_barrier's share of all stall samples in a source-page CSV."""
    text = gzip.open(path, "rt").read().splitlines()
    start = next(i for i, l in enumerate(text) if l.startswith('"Address"'))
    rows = list(csv.reader(io.StringIO("\n".join(l for l in text[start:] if l.startswith('"')))))
    head = rows[0]
    cols = [i for i, c in enumerate(head) if c.startswith("stall_") and "Not Issued" not in c]
    b = head.index("stall_barrier")
    num = lambda s: float(s.replace(",", "")) if s not in ("", "-") else 0.0  # noqa: E731
    total = sum(num(r[i]) for r in rows[1:] for i in cols)
    return sum(num(r[b]) for r in rows[1:]) / total


def main():
    med = times_medians()
    t2 = out("python3", "docs/tools/gpu_times.py", "2")
    expect("gpu_times.py 2", t2, f"{med[('2', 'cuda-v5')]:10.3f}")
    t4 = out("python3", "docs/tools/gpu_times.py", "4")
    expect("gpu_times.py 4", t4, f"{med[('4', 'cuda-v4')]:10.3f}")

    k4 = out("python3", "docs/tools/gpu_kernel_times.py", "4")
    expect("gpu_kernel_times.py 4", k4, f"{kernel_ms(FOLLOWUP + '/kernels_lesson4_v5.txt', 'gru5_backward_kernel'):9.3f}")
    k5 = out("python3", "docs/tools/gpu_kernel_times.py", "5")
    expect("gpu_kernel_times.py 5", k5, f"{kernel_ms(FOLLOWUP + '/kernels_lesson5_v5.txt', 'lce5_dx_kernel'):9.3f}")

    path = FOLLOWUP + "/sampling_lesson4_v5_backward.txt.gz"
    s4 = out("python3", "docs/tools/gpu_stalls.py", path)
    expect("gpu_stalls.py (samples)", s4, f"barrier {barrier_share(path):.0%}")
    d4 = out("python3", "docs/tools/gpu_stalls.py", H200 + "/stalls/lesson4_v5_backward.txt")
    expect("gpu_stalls.py (details)", d4, "active warps per scheduler 4.00 warp")
    expect("gpu_stalls.py (details)", d4, "40.5% of the 17.1 cycles between two issues: waiting for sibling warps")

    # predict_table's measured line: the H200's roofline share = the model's share x model ms / measured ms
    pred = {(r["lesson"], r["impl"], r["size"]): r for r in csv.DictReader(open("docs/results/emu/predicted_h200.csv"))}
    p = pred[("3", "cuda-v3", "forum")]
    measured = next(float(r["forward_ms"]) + float(r["backward_ms"]) for path in (H200 + "/results.csv",
                    H200 + "/issue27-followup/results.csv") for r in csv.DictReader(open(path))
                    if (r["lesson"], r["impl"], r["size"]) == ("3", "cuda-v3", "forum"))
    share = 100 * float(p["roofline_fraction"]) * float(p["predicted_ms"]) / measured
    t3 = out("sh", "tests/cuda_emu/predict_table.sh", "3")
    expect("predict_table.sh 3", t3, f"H200 {share:5.1f}% of the roofline")

    # versions_table: the H200's cuda-v5 of lesson 2 as the first row found (the report's own file, then its
    # subfolders'), and which version `cuda` runs as lessons/lesson2.c's .cuda_order says (needs build/lesson2)
    import os
    import re
    if os.path.exists("build/lesson2"):
        rows = [r for path in (H200 + "/results.csv", H200 + "/issue27-followup/results.csv")
                for r in csv.DictReader(open(path)) if (r["lesson"], r["impl"], r["size"]) == ("2", "cuda-v5", "forum")]
        v2 = out("python3", "docs/tools/versions_table.py", "2")
        expect("versions_table.py 2", v2, f"{float(rows[0]['forward_ms']) + float(rows[0]['backward_ms']):9.3f}")
        first = re.search(r"\.cuda_order = \{(\d+)", open("lessons/lesson2.c").read()).group(1)
        expect("versions_table.py 2", v2, f"`cuda` runs cuda-v{first}:")
    # sweep_growth: the cpu's forward + backward at c = 512 of lesson 2's c sweep, from the CSV directly
    r = next(r for r in csv.DictReader(open("docs/results/cpu/lesson2.csv"))
             if r["impl"] == "cpu" and r["dims"] == "n=100,t=1,v=40,c=512" and r["device"] != "predicted")
    g2 = out("python3", "docs/tools/sweep_growth.py", "2", "c", "v=40,n=100")
    expect("sweep_growth.py 2 c", g2, f"{float(r['forward_ms']) + float(r['backward_ms']):7.1f}")

    for f in failures:
        print("test_gpu_tools: FAIL " + f, file=sys.stderr)
    print(f"test_gpu_tools: {checks[0] - len(failures)} of {checks[0]} checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
