#!/usr/bin/env python3
"""Lesson 2 plots: peak memory and time against the chain length v and the hidden size c, one line per
implementation (cuda only when the CSV has cuda rows, i.e. the sweep ran on a GPU machine).

Reads the CSVs that `make bench-2` writes, draws docs/img/lesson2_memory_v.png, lesson2_time_v.png,
lesson2_memory_c.png and lesson2_time_c.png, and, with --doc, regenerates the tables between
<!-- lesson2-sweep-v:begin --> ... :end --> and <!-- lesson2-sweep-c:begin --> ... :end --> in the doc.

    python3 plots/plot_lesson2.py --csv docs/results/cpu/lesson2_sweep_v.csv \\
        --csv docs/results/cpu/lesson2_sweep_c.csv --out docs/img --doc docs/lesson-2.md
"""
import argparse
import os
from collections import Counter

import plot_common as pc

DIMS = ("n", "t", "v", "c")


def sweep_rows(rows, axis):
    """The rows of the sweep along `axis`: the other dims held at the setting with the most distinct values of
    `axis` (a v sweep and a c sweep can share a CSV list)."""
    fixed = lambda r: tuple(r["dims"][d] for d in DIMS if d != axis)  # noqa: E731
    counts = Counter()
    seen = set()
    for r in rows:
        key = (fixed(r), r["dims"][axis])
        if key not in seen:
            seen.add(key)
            counts[fixed(r)] += 1
    best = counts.most_common(1)[0][0]
    return [r for r in rows if fixed(r) == best], dict(zip([d for d in DIMS if d != axis], best))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--csv", action="append", required=True, help="sweep CSV (repeat: v sweep, c sweep, machines)")
    ap.add_argument("--out", default="docs/img", help="directory for the PNG files")
    ap.add_argument("--doc", help="markdown file whose lesson2-sweep-v / -c tables to regenerate")
    a = ap.parse_args()
    rows = pc.load_rows(a.csv, 2)
    for axis, what in (("v", "chain length v"), ("c", "hidden size c")):
        sel, fixed = sweep_rows(rows, axis)
        ser = pc.series(sel, axis)
        held = ", ".join(f"{k}={v}" for k, v in fixed.items())
        xlabel = f"{what}  ({held})"
        pc.panel(ser, os.path.join(a.out, f"lesson2_memory_{axis}.png"),
                 f"Lesson 2: memory vs {axis} (naive tree vs forward algorithm)", xlabel,
                 "MiB (tracked, exact)", ("peak_bytes", "peak"), ("forward_live_bytes", "live after forward"),
                 scale=1 / 2**20)
        pc.panel(ser, os.path.join(a.out, f"lesson2_time_{axis}.png"), f"Lesson 2: time vs {axis}", xlabel,
                 "milliseconds (one run)", ("forward_ms", "forward"), ("backward_ms", "backward"))
        if a.doc:
            pc.update_doc(a.doc, f"lesson2-sweep-{axis}", pc.markdown_table(ser, axis), ", ".join(a.csv))


if __name__ == "__main__":
    main()
