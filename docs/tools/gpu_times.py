#!/usr/bin/env python3
"""Each version's timed passes on a GPU, repeated in one process: median, fastest and slowest, forward + backward.

    python3 docs/tools/gpu_times.py LESSON     every docs/results/<gpu>/*/times.csv row of the lesson (the lessons'
                                               --times FILE: one row per timed run; tests/gpu/issue27_followup.sh)

Two versions compare on one machine when their spreads do not overlap: the spread is what one more pass could move.
"""
import csv
import glob
import os
import statistics
import sys

RESULTS = "docs/results"


def main():
    if len(sys.argv) != 2 or not sys.argv[1].isdigit():
        sys.exit(__doc__)
    lesson = sys.argv[1]
    paths = sorted(glob.glob(os.path.join(RESULTS, "nvidia-*", "*", "times.csv")))
    found = False
    for p in paths:
        runs = {}
        for r in csv.DictReader(open(p, newline="")):
            if r["lesson"] == lesson:
                runs.setdefault((r["impl"], r["size"], r["device"]), []).append(
                    (float(r["forward_ms"]), float(r["backward_ms"])))
        if not runs:
            continue
        found = True
        print(f"lesson {lesson}, {os.path.relpath(p)}: ms per pass, the runs of one process")
        print(f"  {'version':8} {'size':7} {'runs':>4} {'forward':>10} {'backward':>10} {'pass':>10} {'fastest':>10} {'slowest':>10}  device")
        for (impl, size, device), v in runs.items():
            total = [f + b for f, b in v]
            print(f"  {impl:8} {size:7} {len(v):4d} {statistics.median(f for f, _ in v):10.3f} "
                  f"{statistics.median(b for _, b in v):10.3f} {statistics.median(total):10.3f} "
                  f"{min(total):10.3f} {max(total):10.3f}  {device}")
    if not found:
        sys.exit(f"gpu_times.py: no times.csv under {RESULTS}/nvidia-*/*/ holds lesson {lesson}")


if __name__ == "__main__":
    main()
