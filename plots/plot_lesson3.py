#!/usr/bin/env python3
"""plot_lesson3.py - lesson 3's memory and time against N and against J (naive, cpu, cpu --recompute; cuda
rows join when a GPU sweep exists). Reads the sweep CSVs the lesson binary wrote with --csv (recompute rows are
renamed cpu-recompute by the sweep) and writes docs/img/lesson3_{memory,time}_{n,j}.png."""
import argparse
import csv
import os

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

STYLE = {"naive": "o-", "cpu": "s-", "cpu-recompute": "^--", "cuda": "d-", "cuda-v1": "v:"}


def load(path):
    rows = []
    with open(path) as f:
        for r in csv.DictReader(f):
            dims = dict(kv.split("=") for kv in r["dims"].split(","))
            r["dims"] = {k: int(v) for k, v in dims.items()}
            rows.append(r)
    return rows


def panel(rows, var, value, ylabel, title, out):
    fig, ax = plt.subplots(figsize=(6, 4))
    for impl in STYLE:
        pts = sorted((r["dims"][var], value(r)) for r in rows if r["impl"] == impl)
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], STYLE[impl], label=impl)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(var)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv-n", required=True)
    ap.add_argument("--csv-j", required=True)
    ap.add_argument("--out", default="docs/img")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for var, path in (("N", a.csv_n), ("J", a.csv_j)):
        rows = load(path)
        fixed = ", ".join(f"{k}={v}" for k, v in rows[0]["dims"].items() if k != var)
        panel(rows, var, lambda r: int(r["peak_bytes"]) / 2**20, "peak MiB (tracked, host)",
              f"lesson 3 peak memory vs {var} ({fixed})", os.path.join(a.out, f"lesson3_memory_{var.lower()}.png"))
        panel(rows, var, lambda r: float(r["forward_ms"]) + float(r["backward_ms"]), "forward + backward ms",
              f"lesson 3 time vs {var} ({fixed})", os.path.join(a.out, f"lesson3_time_{var.lower()}.png"))


if __name__ == "__main__":
    main()
