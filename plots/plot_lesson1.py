#!/usr/bin/env python3
"""Lesson 1 plots: peak memory and time against the batch size B, one line per implementation.

Reads the CSV that `make bench-1` writes, draws docs/img/lesson1_memory.png and docs/img/lesson1_time.png, and,
with --doc, regenerates the table between <!-- lesson1-sweep:begin --> and <!-- lesson1-sweep:end --> so the doc
never drifts from the data.

    python3 plots/plot_lesson1.py --csv docs/results/cpu/lesson1_sweep.csv --out docs/img --doc docs/lesson-1.md
"""
import argparse
import os

import plot_common as pc

XLABEL = "batch size B  (G=8, K=N=64)"


def note_forum_figure(ax, impl, pts):
    """Point at the forum's 1,107,427,328 bytes where the sweep has B=8192."""
    if impl != "naive":
        return
    for b, r in pts:
        if b == 8192:
            ax.annotate(f"{r['forward_live_bytes']:,} B\n(the forum's figure)", (b, r["forward_live_bytes"] / 2**20),
                        textcoords="offset points", xytext=(-150, 10), fontsize=8, arrowprops={"arrowstyle": "->"})


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--csv", action="append", required=True, help="sweep CSV (repeat to overlay machines)")
    ap.add_argument("--out", default="docs/img", help="directory for the PNG files")
    ap.add_argument("--doc", help="markdown file whose lesson1-sweep table to regenerate")
    a = ap.parse_args()
    ser = pc.series(pc.load_rows(a.csv, 1), "B")
    pc.panel(ser, os.path.join(a.out, "lesson1_memory.png"), "Lesson 1: memory of x(B,G,1,K) @ W(G,K,N)", XLABEL,
             "MiB (tracked, exact)", ("peak_bytes", "peak"), ("forward_live_bytes", "live after forward"),
             scale=1 / 2**20, annotate=note_forum_figure)
    pc.panel(ser, os.path.join(a.out, "lesson1_time.png"), "Lesson 1: time", XLABEL, "milliseconds (one run)",
             ("forward_ms", "forward"), ("backward_ms", "backward"))
    if a.doc:
        pc.update_doc(a.doc, "lesson1-sweep", pc.markdown_table(ser, "B"), ", ".join(a.csv))


if __name__ == "__main__":
    main()
