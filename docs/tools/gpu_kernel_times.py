#!/usr/bin/env python3
"""Where one pass's GPU time goes: each kernel's measured time, from ncu's gpu__time_duration of every launch.

    python3 docs/tools/gpu_kernel_times.py LESSON     the lesson's files (docs/results/<gpu>/*/kernels_lessonN_*.txt)

The files are ncu's raw page as CSV (tests/gpu/issue27_followup.sh: --clock-control none, so the card's own clock;
ncu runs the launches one at a time, so the sum can differ from the timed pass by the overlap it removes). The
lesson runs twice under ncu (a warm-up pass and the timed one): a kernel's ms per pass is its sum over both over 2.
cuBLAS's kernels count under their own names.
"""
import csv
import glob
import io
import os
import re
import sys

RESULTS = "docs/results"


def read_ncu_raw(path):
    """[(kernel name, ns)] of every profiled launch, in launch order."""
    with open(path, errors="replace") as f:
        lines = f.read().splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None:
        sys.exit(f"gpu_kernel_times.py: {path}: no ncu CSV in it")
    rows = list(csv.reader(io.StringIO("\n".join(l for l in lines[start:] if l.startswith('"')))))
    head, units = rows[0], rows[1]
    k, t = head.index("Kernel Name"), head.index("gpu__time_duration.sum")
    scale = {"ns": 1e-6, "us": 1e-3, "usecond": 1e-3, "ms": 1.0, "msecond": 1.0, "nsecond": 1e-6}[units[t]]
    return [(r[k], float(r[t].replace(",", "")) * scale) for r in rows[2:]]


def table(path, passes=2):
    launches = read_ncu_raw(path)
    order, ms, n = [], {}, {}
    for name, t in launches:
        if name not in ms:
            order.append(name)
            ms[name], n[name] = 0.0, 0
        ms[name] += t
        n[name] += 1
    total = sum(ms.values())
    m = re.search(r"kernels_lesson(\d+)_(v\d+)", path)
    gpu = os.path.basename(os.path.dirname(os.path.dirname(path)))
    print(f"lesson {m.group(1)} cuda-{m.group(2)}, {gpu} ({os.path.relpath(path)}): ms per pass, {passes} passes / {passes}")
    print(f"  {'kernel':58} {'launches':>8} {'ms':>9} {'share':>6}")
    for name in sorted(order, key=lambda x: -ms[x]):
        print(f"  {name[:58]:58} {n[name] // passes:8d} {ms[name] / passes:9.3f} {ms[name] / total:6.1%}")
    print(f"  {'all':58} {len(launches) // passes:8d} {total / passes:9.3f}")


def main():
    if len(sys.argv) != 2 or not sys.argv[1].isdigit():
        sys.exit(__doc__)
    paths = sorted(glob.glob(os.path.join(RESULTS, "nvidia-*", "*", f"kernels_lesson{sys.argv[1]}_*.txt")))
    if not paths:
        sys.exit(f"gpu_kernel_times.py: no kernels_lesson{sys.argv[1]}_*.txt under {RESULTS}/nvidia-*/")
    for p in paths:
        table(p)


if __name__ == "__main__":
    main()
