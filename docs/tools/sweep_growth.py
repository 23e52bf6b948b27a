#!/usr/bin/env python3
"""A lesson's sweep from its CSV, each implementation's time and GEMM share along the swept axis, and the growth
rate the points give, so a doc's paragraph on how time grows argues from the committed data.

    python3 docs/tools/sweep_growth.py LESSON AXIS [K=V,...]   e.g. 2 c v=40,n=100   (docs/results/cpu/lessonN.csv)

The rows kept are the lesson's own implementations' measured ones (device not `predicted`) whose dims hold every K=V given; the exponent is the
least-squares slope of log(forward + backward ms) against log(AXIS) over the upper half of the range, the rule of
plots/bench_plots.py's slope table (docs/README.md). gemm_share: the GEMMs' multiply-adds at the machine's measured
GEMM rate, over the time (docs/README.md, the CSV's columns); above 1 the GEMMs ran faster than that rate.
"""
import csv
import math
import statistics
import sys

CSV = "docs/results/cpu/lesson{}.csv"


def dims(text):
    return dict(kv.split("=") for kv in text.split(","))


def fit_slope(pts):
    """plots/bench_plots.py's fit: the upper half of the x range, at least 3 points."""
    pts = sorted(pts)
    if len(pts) < 3:
        return None
    pts = pts[max(0, min(len(pts) - 3, len(pts) // 2 - 1)):]
    lx, ly = [math.log(x) for x, _ in pts], [math.log(y) for _, y in pts]
    mx, my = statistics.fmean(lx), statistics.fmean(ly)
    den = sum((a - mx) ** 2 for a in lx)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / den if den else None


def main():
    if len(sys.argv) not in (3, 4) or not sys.argv[1].isdigit():
        sys.exit(__doc__)
    lesson, axis = sys.argv[1], sys.argv[2]
    fixed = dims(sys.argv[3]) if len(sys.argv) == 4 else {}
    path = CSV.format(lesson)
    rows = [r for r in csv.DictReader(open(path, newline="")) if r["device"] != "predicted" and r["forward_ms"]]
    rows = [r for r in rows if axis in dims(r["dims"]) and all(dims(r["dims"]).get(k) == v for k, v in fixed.items())]
    print(f"lesson {lesson}, {path}: time and GEMM share against {axis}"
          + (f" ({', '.join(f'{k}={v}' for k, v in fixed.items())})" if fixed else ""))
    for impl in sorted({r["impl"] for r in rows if not r["impl"].startswith("pytorch")}, key=lambda i: (i != "naive", i)):
        pts = sorted((int(dims(r["dims"])[axis]), float(r["forward_ms"]) + float(r["backward_ms"]),
                      r.get("gemm_share") or "") for r in rows if r["impl"] == impl)
        print(f"  {impl:<6} {axis:>5} " + " ".join(f"{x:>7}" for x, _, _ in pts))
        print(f"  {'':<6} {'ms':>5} " + " ".join(f"{y:>7.1f}" for _, y, _ in pts))
        print(f"  {'':<6} {'gemm':>5} " + " ".join(f"{float(g):>7.3f}" if g else f"{'-':>7}" for _, _, g in pts))
        k = fit_slope([(x, y) for x, y, _ in pts])
        print(f"  {impl}: time grows as {axis}^{k:.2f} (least squares, upper half of the sweep)" if k is not None
              else f"  {impl}: too few points for a growth rate")
    return 0


if __name__ == "__main__":
    sys.exit(main())
