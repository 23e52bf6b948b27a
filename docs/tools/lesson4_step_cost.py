#!/usr/bin/env python3
"""What a step of lesson 4's cuda-v3 costs on the GPUs that measured it, and how much of it is fixed.

    python3 docs/tools/lesson4_step_cost.py

cuda-v3's forward is one cooperative kernel: per step, two grid.syncs and, on each thread with work, dot products
of H + X + H terms (h W_enc, then x_t W_ih and z W_zh). The GPU reports (docs/results/<gpu>/results.csv and their
subfolders', the first row found, as cuda_order.py reads them, less the rows docs/results/retired.csv names for
their file's folder: code since changed) give its forward time at two sizes whose dot products
differ 4x in length. Per GPU, a line through the two (us per step = fixed + terms x cost per term) splits a step's
time into a part that grows with the dot products and a fixed part, where the grid.syncs are: if they were what
costs, the fixed part would hold it.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cuda_order import gpu_reports, read_csv, report_of, retired  # noqa: E402

IMPL = "cuda-v3"


def dims_of(text):
    return {k: int(v) for k, v in (kv.split("=") for kv in text.split(","))}


def rows_by_gpu():
    """{gpu: {size: (dims, forward ms)}}, the first row found per size."""
    out, gone = {}, retired()
    for gpu, paths in gpu_reports().items():
        seen = {}
        for p in paths:
            for r in read_csv(p):
                if (r["lesson"], r["impl"], report_of(p)) in gone:
                    continue
                if r["lesson"] == "4" and r["impl"] == IMPL and r.get("forward_ms") and r["size"] not in seen:
                    seen[r["size"]] = (dims_of(r["dims"]), float(r["forward_ms"]))
        if seen:
            out[gpu] = seen
    return out


def main():
    data = rows_by_gpu()
    if not data:
        sys.exit("lesson4_step_cost: no GPU report has lesson 4 %s" % IMPL)
    print("lesson 4 %s forward, measured: per step 2 grid.syncs and dot products of 2H + X terms a thread" % IMPL)
    print("gpu    size       T     H     X  terms/step  forward ms   us/step")
    fits = []
    for gpu in sorted(data):
        pts = []
        for size in sorted(data[gpu], key=lambda s: data[gpu][s][0]["H"]):
            d, ms = data[gpu][size]
            terms = 2 * d["H"] + d["X"]
            us = ms * 1000.0 / d["T"]
            pts.append((terms, us))
            print("%-6s %-7s %5d %5d %5d %11d %11.3f %9.3f" % (gpu, size, d["T"], d["H"], d["X"], terms, ms, us))
        if len(pts) >= 2 and pts[0][0] != pts[-1][0]:
            (t0, u0), (t1, u1) = pts[0], pts[-1]
            slope = (u1 - u0) / (t1 - t0)
            fits.append((gpu, slope, u0 - slope * t0, u1))
    print("a line through each GPU's two sizes: us per step = fixed + terms x cost per term")
    for gpu, slope, fixed, largest in fits:
        print("%-6s %.1f ns a term (%.0f clocks at 1.98 GHz); fixed %+.2f us a step, %.1f%% of the larger size's step"
              % (gpu, slope * 1000.0, slope * 1980.0, fixed, 100.0 * abs(fixed) / largest))


if __name__ == "__main__":
    main()
