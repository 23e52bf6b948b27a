#!/usr/bin/env python3
"""bench_plots.py - every figure and table of `make bench`, generic over the lessons in plots/sweeps.txt.

    python3 plots/bench_plots.py [--results docs/results/cpu] [--sweeps plots/sweeps.txt] [--out docs/img]
                                 [--readme README.md]

From whatever CSVs exist under --results (lessonN.csv, lessonN_runs.csv, lessonN_timeline.csv, written by
plots/bench.sh; none at all is an error that draws and changes nothing) it draws, per lesson:
  lessonN_memory.png    peak bytes against the sweep's axis, log scales (MiB below half a GiB); measured points
                        filled, predicted ones (device "predicted": the memory formula, not run) hollow; the
                        memory of real GPUs (16, 24, 80 GiB) where the data comes within a decade of it; the
                        forum's size as a star where its other dimensions are the sweep's (else said in the
                        title); PyTorch rows overlaid (their true peak, every tensor counted: plots/torch_peak on
                        the CPU, max_memory_allocated on a GPU); legends under the axes
  lessonN_time.png      forward + backward ms: the median of the timed runs, the bar from the fastest to the
                        slowest run; slope guides where plots/sweeps.txt names a doc's growth rate, the measured
                        slope fitted and printed beside it
  lessonN_memory_S.png, lessonN_time_S.png   instead, one pair per sweep S, when a lesson has more than one
  lessonN_timeline.png  live bytes over one forward and backward, stacked by buffer label (the 15 with the most
                        area, the rest gray "other"; a label in both panels one color), naive beside cpu in one
                        unit, the forward/backward boundary and the peak marked
and overview_memory_saved.png (naive peak / cpu peak per lesson), the table between <!-- results:begin --> and
<!-- results:end --> in --readme, and each sweep's table in its lesson doc (doc= in plots/sweeps.txt).
Nothing here computes a measurement: every number is read from the CSVs the lesson binaries and
plots/pytorch_baseline.py wrote.
"""
import argparse
import csv
import math
import os
import re
import statistics
import sys
import textwrap
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

GIB = 2 ** 30
GPU_LINES = ((16, "16 GiB (V100, T4)"), (24, "24 GiB (RTX 3090/4090)"), (80, "80 GiB (A100, H100)"))
COLORS = {"naive": "tab:red", "cpu": "tab:blue", "cuda": "tab:green", "pytorch-naive": "tab:orange",
          "pytorch-best": "tab:purple"}
MARKERS = {"naive": "o", "cpu": "s", "cuda": "^", "pytorch-naive": "X", "pytorch-best": "P"}
EXTRA_COLORS = ["tab:cyan", "tab:olive", "tab:brown", "tab:pink", "tab:gray"]


# --- the sweep table ------------------------------------------------------------------------------------------
def read_sweeps(path):
    """lessons: {N: {"timeline": size, "forum": size, "sweeps": {name: {...}}}} in file order."""
    lessons = {}
    for raw in open(path):
        line = raw.split("#")[0].strip()
        if not line:
            continue
        f = dict(t.split("=", 1) for t in line.split())
        L = lessons.setdefault(int(f["lesson"]), {"timeline": None, "forum": None, "sweeps": {}})
        if "sweep" not in f:
            L["timeline"], L["forum"] = f.get("timeline"), f.get("forum")
            continue
        s = L["sweeps"].setdefault(f["sweep"], {"axis": f["axis"], "base": parse_dims(f["dims"]), "slopes": [],
                                                "doc": None, "values": []})
        s["values"] = sorted(set(s["values"]) | {int(v) for v in f["values"].split(",")})
        for g in filter(None, f.get("slope", "").split(",")):
            impl, what, k = g.split(":")
            s["slopes"].append((impl, what, float(k)))
        if "doc" in f:
            s["doc"] = f["doc"]
    return lessons


def fmt_dims(d):
    return ",".join(f"{k}={v}" for k, v in d.items())


def parse_dims(s):
    return {k: int(v) for k, v in (kv.split("=") for kv in s.split(","))}


# --- the CSVs -------------------------------------------------------------------------------------------------
def num(s, kind=float):
    return kind(s) if s not in ("", None) else None


def load_csv(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r["dims"] = parse_dims(r["dims"])
        for k in ("peak_bytes", "forward_live_bytes", "allocs"):
            r[k] = num(r.get(k), int)
        for k in ("forward_ms", "backward_ms", "max_rel_err", "gemm_share"):  # gemm_share: None where absent
            r[k] = num(r.get(k))
        r["predicted"] = r["device"] == "predicted"
    return rows


def point_key(r):
    return (r["impl"], r["size"], tuple(sorted(r["dims"].items())), r["device"])


def attach_runs(rows, runs):
    """Each measured row gets the forward+backward ms of every timed run: median and spread."""
    by = defaultdict(list)
    for r in runs:
        by[point_key(r)].append(float(r["forward_ms"]) + float(r["backward_ms"]))
    for r in rows:
        totals = by.get(point_key(r))
        if r["predicted"] or r["forward_ms"] is None:
            r["total"] = r["lo"] = r["hi"] = None
            r["nruns"] = 0
        elif totals:
            r["total"], r["lo"], r["hi"], r["nruns"] = statistics.median(totals), min(totals), max(totals), len(totals)
        else:
            r["total"] = r["lo"] = r["hi"] = r["forward_ms"] + r["backward_ms"]
            r["nruns"] = 1


def sweep_rows(rows, sweep):
    """(x, row) of one sweep: the held dimensions equal, x = the axis value (a dimension, or for a lesson option
    the value the bench wrote into the size column as "name=value"). The forum's predicted rows are drawn as
    their own marker, not as a point of a sweep they happen to cross."""
    axis, base = sweep["axis"], sweep["base"]
    out = []
    for r in rows:
        if r.get("forum") or any(r["dims"].get(k) != v for k, v in base.items()):
            continue
        if axis.startswith("--"):
            name = axis[2:] + "="
            if not r["size"].startswith(name):
                continue
            out.append((int(r["size"][len(name):]), r))
        elif axis in r["dims"] and "=" not in r["size"]:
            out.append((r["dims"][axis], r))
    return sorted(out, key=lambda t: t[0])


def series_of(pts):
    """{impl: [(x, row)]}; a series' device (CPU model, GPU name) is its measured rows'."""
    ser = defaultdict(list)
    for x, r in pts:
        ser[r["impl"]].append((x, r))
    return dict(sorted(ser.items(), key=lambda kv: (list(COLORS).index(kv[0]) if kv[0] in COLORS else 9, kv[0])))


def style(impl, k):
    color = COLORS.get(impl) or EXTRA_COLORS[k % len(EXTRA_COLORS)]
    marker = MARKERS.get(impl) or MARKERS.get(impl.split("-")[0], "D")
    return color, marker, ("--" if impl.startswith("pytorch") else "-")


def series_label(impl, pts):
    devs = sorted({r["device"] for _, r in pts if not r["predicted"]})
    return f"{impl} ({', '.join(devs)})" if devs else f"{impl} (predicted only)"


def fit_slope(pts):
    """Least-squares slope of log y against log x over the upper half of the x range (at least 3 points, where
    the fixed costs no longer dominate); None with fewer than 3 points."""
    pts = sorted(pts)
    if len(pts) < 3:
        return None
    pts = pts[max(0, min(len(pts) - 3, len(pts) // 2 - 1)):]
    lx = [math.log(x) for x, _ in pts]
    ly = [math.log(y) for _, y in pts]
    mx, my = statistics.fmean(lx), statistics.fmean(ly)
    den = sum((a - mx) ** 2 for a in lx)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / den if den else None


def log_x(ax, values):
    """Log scale (base 2) when the values span a decade or so; ticks as plain numbers."""
    if values and max(values) / min(values) >= 8:
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))


# --- memory and time panels -----------------------------------------------------------------------------------
def gib_ticks(ax):
    """Plain tick labels (0.01, 0.5, 2) on a log axis instead of 10^k or 6x10^1."""
    fmt = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.4g}")
    ax.yaxis.set_major_formatter(fmt)
    ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    lo, hi = ax.get_ylim()
    if hi / lo < 100:  # within two decades a log axis has one or two major ticks: label 1, 2 and 5 of each
        ax.yaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1, 2, 5)))


def legend_below(ax, ncol=2):
    """The legend under the axes, where it covers no data."""
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=ncol, frameon=False)


def memory_panel(ax, lesson, name, sweep, pts, forum_rows, notes):
    ser = series_of(pts)
    ymax, ymin = 0, float("inf")
    # GiB where the sweep reaches half a GiB (the GPUs' memory is drawn then), MiB below: no 0.005 GiB ticks
    on_axis = [(impl, r) for impl, r in forum_rows if sweep["axis"] in r["dims"]
               and all(r["dims"].get(k) == v for k, v in sweep["base"].items())]
    most = max([r["peak_bytes"] for _, r in pts] + [r["peak_bytes"] for _, r in on_axis])
    scale, unit = (GIB, "GiB") if most >= GIB / 2 else (2 ** 20, "MiB")
    for k, (impl, sp) in enumerate(ser.items()):
        color, marker, ls = style(impl, k)
        meas = [(x, r["peak_bytes"] / scale) for x, r in sp if not r["predicted"]]
        pred = [(x, r["peak_bytes"] / scale) for x, r in sp if r["predicted"]]
        lab = series_label(impl, sp)
        if meas:
            ax.plot(*zip(*meas), color=color, marker=marker, linestyle=ls, label=lab)
        if pred:
            line = sorted(meas[-1:] + pred)
            ax.plot(*zip(*line), color=color, linestyle=":", linewidth=1)
            ax.plot(*zip(*pred), color=color, marker=marker, linestyle="none", markerfacecolor="none",
                    label=None if meas else lab)
        ys = [y for _, y in meas + pred]
        ymax, ymin = max([ymax] + ys), min([ymin] + ys)
        for si, what, k_doc in sweep["slopes"]:
            if si == impl and what == "peak":
                slope_guide(ax, meas, k_doc, color, f"lesson {lesson} {name}: {impl} peak", notes)
    axis = sweep["axis"].lstrip("-")
    # the forum's point belongs on this axis only where its other dimensions are the sweep's held ones (on_axis)
    for impl, r in on_axis:
        color, marker, _ = style(impl, 0)
        ax.plot([r["dims"][sweep["axis"]]], [r["peak_bytes"] / scale], marker="*", markersize=13, color=color,
                markerfacecolor="none", linestyle="none",
                label=f"forum's size, {impl}: {r['peak_bytes'] / GIB:,.2f} GiB, predicted")
        ymax = max(ymax, r["peak_bytes"] / scale)
    forum_x = {r["dims"][sweep["axis"]] for _, r in on_axis}
    for fx in forum_x:
        ax.axvline(fx, color="black", linestyle="-.", linewidth=0.8)
        ax.annotate(f"forum {axis}={fx}", (fx, 1), xycoords=("data", "axes fraction"), xytext=(3, -12),
                    textcoords="offset points", fontsize=7)
    ax.set_yscale("log")
    top = ymax * 3
    # the GPUs' memory where the data reaches within a decade of it; otherwise the lines would only add empty decades
    shown = [(gib * GIB / scale, text) for gib, text in GPU_LINES if ymax * scale * 10 >= gib * GIB]
    if shown:
        top = max(top, shown[-1][0] * 2)
    for i, (gib, text) in enumerate(shown):
        ax.axhline(gib, color="gray", linewidth=0.8, linestyle="--")
        below = i == 0 and len(shown) > 1  # 16 and 24 GiB are close on a log axis: 16's label under its line
        ax.annotate(text, (0, gib), xycoords=("axes fraction", "data"), xytext=(3, -9 if below else 2),
                    textcoords="offset points", fontsize=7, color="dimgray")
    bottom = ymin / 3 if ymax / ymin > 3 else ymin / 2
    ax.set_ylim(bottom=bottom, top=top if ymax / ymin > 3 else ymax * 2)
    gib_ticks(ax)
    log_x(ax, sweep["values"] + list(forum_x))
    held = ", ".join(f"{k}={v}" for k, v in sweep["base"].items())
    ax.set_xlabel(f"{axis}   ({held})")
    ax.set_ylabel(f"peak {unit} (tracked bytes; hollow = predicted, not run)")
    ax.set_title(f"lesson {lesson}: peak memory vs {axis}", fontsize=10)
    if not forum_rows:
        note = "no forum size: the thread gives no dimensions"
    elif not on_axis:
        r = forum_rows[0][1]
        peaks = ", ".join(f"{impl} {rr['peak_bytes'] / GIB:,.2f} GiB" for impl, rr in forum_rows)
        note = (f"the forum's size ({fmt_dims(r['dims'])}; predicted: {peaks}) is not on this sweep: "
                "its other dimensions differ")
    else:
        note = None
    if note:
        ax.set_title(f"lesson {lesson}: peak memory vs {axis}\n" + textwrap.fill(note, 95), fontsize=8)
    ax.grid(True, which="both", alpha=0.25)
    legend_below(ax)


def slope_guide(ax, meas, k_doc, color, what, notes):
    """The doc's growth rate k as a dotted guide through the last measured point; the fitted slope beside it."""
    m = fit_slope(meas)
    if m is None:
        return
    x1, y1 = meas[-1]
    x0 = meas[0][0]
    differs = abs(m - k_doc) > 0.2
    ax.plot([x0, x1], [y1 * (x0 / x1) ** k_doc, y1], color=color, linestyle=(0, (1, 3)), linewidth=1.2,
            label=f"x^{k_doc:g} guide (the doc's rate); measured fit x^{m:.2f}" + (" (differs)" if differs else ""))
    text = f"{what}: measured slope {m:.2f}, doc says {k_doc:g}" + (" - they DIFFER" if differs else "")
    notes.append((what, m, k_doc, differs, text))


def time_panel(ax, lesson, name, sweep, pts, notes):
    ser = series_of(pts)
    for k, (impl, sp) in enumerate(ser.items()):
        color, marker, ls = style(impl, k)
        meas = [(x, r) for x, r in sp if r["total"] is not None and r["total"] > 0]
        if not meas:
            continue
        xs = [x for x, _ in meas]
        ys = [r["total"] for _, r in meas]
        err = [[r["total"] - r["lo"] for _, r in meas], [r["hi"] - r["total"] for _, r in meas]]
        n = min(r["nruns"] for _, r in meas)
        ax.errorbar(xs, ys, yerr=err, color=color, marker=marker, linestyle=ls, capsize=3,
                    label=f"{series_label(impl, sp)}, median of {n}")
        for si, what, k_doc in sweep["slopes"]:
            if si == impl and what == "time":
                slope_guide(ax, list(zip(xs, ys)), k_doc, color, f"lesson {lesson} {name}: {impl} time", notes)
    axis = sweep["axis"].lstrip("-")
    ax.set_yscale("log")
    log_x(ax, sweep["values"])
    held = ", ".join(f"{k}={v}" for k, v in sweep["base"].items())
    ax.set_xlabel(f"{axis}   ({held})")
    ax.set_ylabel("forward + backward ms (bar: fastest to slowest run)")
    ax.set_title(f"lesson {lesson}: time vs {axis}", fontsize=10)
    ax.grid(True, which="both", alpha=0.25)
    gib_ticks(ax)
    legend_below(ax)


def save(fig, path, written):
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    written.append(path)
    print("wrote", path)


def lesson_figures(lesson, spec, rows, out, written, notes):
    forum_rows = [(r["impl"], r) for r in rows if r["forum"]]
    sweeps = [(name, s, sweep_rows(rows, s)) for name, s in spec["sweeps"].items()]
    for name, s, pts in sweeps:
        if not pts:
            print(f"lesson {lesson} sweep {name}: no rows in the CSV match it (held dims {fmt_dims(s['base'])}): "
                  "re-run `make bench`")
    sweeps = [t for t in sweeps if t[2]]
    if not sweeps:
        return
    # one figure per sweep, as the docs show them (lessonN_KIND.png for a lesson of one sweep,
    # lessonN_KIND_S.png for each sweep S of a lesson with several)
    for kind in ("memory", "time"):
        for name, s, pts in sweeps:
            fig, ax = plt.subplots(figsize=(7.5, 6))
            if kind == "memory":
                memory_panel(ax, lesson, name, s, pts, forum_rows, notes)
            else:
                time_panel(ax, lesson, name, s, pts, notes)
            suffix = f"_{name.lower()}" if len(sweeps) > 1 else ""
            save(fig, os.path.join(out, f"lesson{lesson}_{kind}{suffix}.png"), written)


# --- timeline -------------------------------------------------------------------------------------------------
def timeline_series(events, top=15):
    """Per event index, live bytes by label (host or device, whichever the run used); the labels with the most
    area (bytes x events) kept, the rest summed as "other". Returns xs, {label: ys}, mark_x, totals."""
    live = defaultdict(int)
    frames, mark_x, peak_by = [], None, defaultdict(int)
    for e in events:
        b = int(e["bytes"] or 0)
        if e["event"] == "mark":
            mark_x = len(frames)
            continue
        if e["event"] == "alloc":
            live[e["label"]] += b
        elif e["event"] == "free":
            live[e["label"]] -= b
        elif e["event"] == "relabel":
            old, _, new = e["label"].partition(" -> ")
            live[old] -= b
            live[new] += b
        frames.append(dict(live))
        for k, v in live.items():
            peak_by[k] += v  # area: what the eye sees of a label
    keep = sorted(peak_by, key=lambda k: -peak_by[k])[:top]
    ys = {k: [f.get(k, 0) for f in frames] for k in keep}
    ys["other"] = [sum(v for k, v in f.items() if k not in keep) for f in frames]
    if not any(ys["other"]):
        del ys["other"]
    totals = [sum(f.values()) for f in frames]
    return list(range(len(frames))), ys, mark_x, totals


def timeline_figure(lesson, path, out, written):
    with open(path, newline="") as f:
        events = list(csv.DictReader(f))
    impls = list(dict.fromkeys(e["impl"] for e in events))
    if not impls:
        return
    fig, axes = plt.subplots(1, len(impls), figsize=(7.5 * len(impls), 6.5), squeeze=False)
    data = {impl: timeline_series([e for e in events if e["impl"] == impl]) for impl in impls}
    # a label in several panels (an input, a gradient) keeps one color in all of them and takes the palette's first
    # colors; each panel's own labels take the next ones, so no two labels of one panel share a color (tab10
    # without its gray, then Dark2: 17 hues for the 15 labels a panel shows); gray is "other"
    palette = [c for i, c in enumerate(plt.get_cmap("tab10").colors) if i != 7] + list(plt.get_cmap("Dark2").colors)
    seen = defaultdict(int)
    for d in data.values():
        for k in d[1]:
            seen[k] += 1
    shared = [k for k in dict.fromkeys(k for d in data.values() for k in d[1]) if seen[k] > 1 and k != "other"]
    panel_colors = {}
    for impl in impls:
        own = [k for k in data[impl][1] if k not in shared and k != "other"]
        panel_colors[impl] = {k: palette[i % len(palette)] for i, k in enumerate(shared + own)}
        panel_colors[impl]["other"] = "lightgray"
    # one unit for every panel of the figure: the largest run's
    most = max(max(d[3]) for d in data.values() if d[3])
    scale, unit = (2 ** 20, "MiB") if most >= 2 ** 20 else (2 ** 10, "KiB")
    for ax, impl in zip(axes[0], impls):
        xs, ys, mark_x, totals = data[impl]
        if not xs:
            continue
        ax.stackplot(xs, *[[v / scale for v in y] for y in ys.values()], labels=list(ys), step="post", alpha=0.9,
                     colors=[panel_colors[impl][k] for k in ys])
        if mark_x is not None:
            ax.axvline(mark_x, color="black", linestyle="--", linewidth=1)
            # each word over its own part of the run; a part too narrow for its word gets it beside the line
            for text, lo, hi, side in (("forward", 0, mark_x, "right"), ("backward", mark_x, len(xs), "left")):
                narrow = (hi - lo) < 0.15 * len(xs)
                if narrow:  # "backward ->" ending at the line, "<- forward" starting at it
                    text = f"{text} \u2192" if side == "left" else f"\u2190 {text}"
                ax.annotate(text, (mark_x if narrow else (lo + hi) / 2, 1), xycoords=("data", "axes fraction"),
                            xytext=((-4 if side == "left" else 4) if narrow else 0, -12),
                            textcoords="offset points", fontsize=8,
                            ha=("right" if side == "left" else "left") if narrow else "center")
        p = max(range(len(totals)), key=lambda i: totals[i])
        right = p > 0.6 * len(xs)
        ax.annotate(f"peak {totals[p] / scale:,.2f} {unit} ({totals[p]:,} bytes)", (p, totals[p] / scale),
                    xytext=(-10 if right else 10, 10), textcoords="offset points", fontsize=8,
                    ha="right" if right else "left", arrowprops={"arrowstyle": "->"})
        ax.set_ylim(top=max(totals) / scale * 1.25)
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        ax.set_xlabel("allocation event (alloc, free, relabel) in order")
        ax.set_ylabel(f"live {unit} (the run's own buffers; each panel its own scale)")
        ax.set_title(f"lesson {lesson} {impl}: live memory by buffer over forward + backward", fontsize=10)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2, frameon=False)
        ax.grid(True, alpha=0.25)
    save(fig, os.path.join(out, f"lesson{lesson}_timeline.png"), written)


# --- overview and tables --------------------------------------------------------------------------------------
def headline(spec, rows):
    """The largest point of the lesson's first sweep where naive and cpu both ran, and the forum rows."""
    best = None
    for name, s in spec["sweeps"].items():
        pts = sweep_rows(rows, s)
        meas = defaultdict(dict)
        for x, r in pts:
            if not r["predicted"] and r["impl"] in ("naive", "cpu"):
                meas[x][r["impl"]] = r
        both = [x for x in meas if len(meas[x]) == 2]
        if both:
            x = max(both)
            best = (name, s, x, meas[x]["naive"], meas[x]["cpu"], {r["impl"]: r for xx, r in pts if xx == x})
            break
    forum = {r["impl"]: r for r in rows if r["forum"]}
    return best, forum


def torch_point(spec, rows):
    """PyTorch naive / best bytes at the largest point of the first sweep where both ran, and that point."""
    for name, s in spec["sweeps"].items():
        by = defaultdict(dict)
        for x, r in sweep_rows(rows, s):
            if r["impl"] in ("pytorch-naive", "pytorch-best"):
                by[x][r["impl"]] = r
        both = [x for x in by if len(by[x]) == 2]
        if both:
            x = max(both)
            n, b = by[x]["pytorch-naive"], by[x]["pytorch-best"]
            return f"{n['peak_bytes']:,} / {b['peak_bytes']:,} ({s['axis'].lstrip('-')}={x})"
    return "-"


def overview(lessons, data, out, written):
    labels, measured, forum = [], [], []
    for lesson, spec in lessons.items():
        rows = data.get(lesson)
        if not rows:
            continue
        best, fr = headline(spec, rows)
        if not best:
            continue
        labels.append(f"lesson {lesson}\n{best[1]['axis'].lstrip('-')}={best[2]}")
        measured.append(best[3]["peak_bytes"] / best[4]["peak_bytes"])
        forum.append(fr["naive"]["peak_bytes"] / fr["cpu"]["peak_bytes"] if "naive" in fr and "cpu" in fr else None)
        labels[-1] += "" if forum[-1] else "\n(no forum size:\nthe thread gives none)"
    if not labels:
        return
    fig, ax = plt.subplots(figsize=(8, 4.8))
    xs = range(len(labels))
    b1 = ax.bar([x - 0.2 for x in xs], measured, 0.4, color="tab:blue", label="largest size both ran (measured)")
    fx = [x + 0.2 for x, v in zip(xs, forum) if v]
    b2 = ax.bar(fx, [v for v in forum if v], 0.4, color="white", edgecolor="tab:blue", hatch="//",
                label="forum size (predicted by the formulas)")
    for bars in (b1, b2):
        for bar in bars:
            ax.annotate(f"{bar.get_height():,.1f}x", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                        ha="center", va="bottom", fontsize=8)
    ax.axhline(1, color="black", linewidth=0.8)
    ax.set_xticks(list(xs))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("naive peak / cpu peak (tracked bytes)")
    ax.set_title("Memory saved per lesson: naive peak / optimized (cpu) peak", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", which="both", alpha=0.25)
    save(fig, os.path.join(out, "overview_memory_saved.png"), written)


def fmt_ms(r):
    if r is None or r.get("total") is None:
        return "-"
    return f"{r['total']:,.1f} ({r['lo']:,.1f}-{r['hi']:,.1f})"


def readme_table(lessons, data):
    lines, machines = [], set()
    for lesson, spec in lessons.items():
        rows = data.get(lesson)
        if not rows:
            lines.append(f"| {lesson} | no results yet (`make bench`) | | | | | | | |")
            continue
        best, fr = headline(spec, rows)
        if not best:
            continue
        name, s, x, n, c, at = best
        dims = fmt_dims(n["dims"]) + (f", {n['size']}" if s["axis"].startswith("--") else "")
        torch_col = torch_point(spec, rows)
        forum_col = (f"{fr['naive']['peak_bytes']:,} / {fr['cpu']['peak_bytes']:,}"
                     if "naive" in fr and "cpu" in fr else "-")
        lines.append(f"| {lesson} | {dims} | {n['peak_bytes']:,} | {c['peak_bytes']:,} | "
                     f"{n['peak_bytes'] / c['peak_bytes']:,.1f}x | {fmt_ms(n)} | {fmt_ms(c)} | {torch_col} | "
                     f"{forum_col} |")
        machines |= {r["device"] for r in (n, c) if r.get("total") is not None}
    on = f" on {' / '.join(sorted(machines))}" if machines else ""  # times from another machine do not compare
    return "\n".join([f"| lesson | point (largest where both ran) | naive peak | cpu peak | saved | naive ms{on} | "
                      f"cpu ms{on} | PyTorch naive / best peak | forum size: naive / cpu peak (predicted) |",
                      "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"] + lines)


def sweep_table(sweep, pts):
    axis = sweep["axis"].lstrip("-")
    lines = [f"| impl | device | {axis} | peak bytes | live after forward | allocs | forward+backward ms, median "
             "(fastest-slowest) |", "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for impl, sp in series_of(pts).items():
        for x, r in sp:
            allocs = r["allocs"] if r["allocs"] is not None else "-"
            live = f"{r['forward_live_bytes']:,}" if r["forward_live_bytes"] is not None else "-"  # not measured
            lines.append(f"| {impl} | {r['device']} | {x} | {r['peak_bytes']:,} | {live} | "
                         f"{allocs} | {fmt_ms(r)} |")
    return "\n".join(lines)


def replace_between(path, marker, body, source):
    begin, end = f"<!-- {marker}:begin -->", f"<!-- {marker}:end -->"
    if not os.path.exists(path):
        print(f"{path}: missing; table {marker} not written")
        return
    text = open(path).read()
    if begin not in text or end not in text:
        print(f"{path}: no {begin} ... {end} markers; table not written")
        return
    new = f"{begin}\n_Generated by plots/bench_plots.py from `{source}`; `make bench && make plots` redoes it._\n\n{body}\n{end}"
    text = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: new, text, flags=re.S)
    open(path, "w").write(text)
    print("updated", path, marker)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", default="docs/results/cpu", help="the bench's results directory")
    ap.add_argument("--sweeps", default="plots/sweeps.txt")
    ap.add_argument("--out", default="docs/img")
    ap.add_argument("--readme", default="README.md", help="file with <!-- results:begin/end --> markers")
    ap.add_argument("--no-docs", action="store_true", help="draw figures only; leave README and docs alone")
    a = ap.parse_args()
    lessons = read_sweeps(a.sweeps)
    found = [n for n in lessons if os.path.exists(os.path.join(a.results, f"lesson{n}.csv"))]
    if not found:  # a mistyped folder must not turn the README's table into "no results yet" rows
        print(f"bench_plots: no lessonN.csv under {a.results} (run `make bench`, or name the folder that has "
              "them): nothing drawn, no table changed", file=sys.stderr)
        return 1
    os.makedirs(a.out, exist_ok=True)
    written, notes, data = [], [], {}
    for lesson, spec in lessons.items():
        rows = load_csv(os.path.join(a.results, f"lesson{lesson}.csv"))
        if not rows:
            print(f"lesson {lesson}: no {a.results}/lesson{lesson}.csv (run `make bench`): no figures")
            continue
        attach_runs(rows, load_csv(os.path.join(a.results, f"lesson{lesson}_runs.csv")))
        for r in rows:
            r["forum"] = r["predicted"] and spec["forum"] is not None and r["size"] == spec["forum"]
        data[lesson] = rows
        lesson_figures(lesson, spec, rows, a.out, written, notes)
        tl = os.path.join(a.results, f"lesson{lesson}_timeline.csv")
        if os.path.exists(tl):
            timeline_figure(lesson, tl, a.out, written)
        if not a.no_docs:
            for name, s in spec["sweeps"].items():
                if s["doc"]:
                    doc, marker = s["doc"].split(":")
                    replace_between(doc, marker, sweep_table(s, sweep_rows(rows, s)),
                                    f"{a.results}/lesson{lesson}.csv")
    overview(lessons, data, a.out, written)
    if not a.no_docs:
        replace_between(a.readme, "results", readme_table(lessons, data), f"{a.results}/lessonN.csv")
    print("\nGrowth rates (the docs' claims against a least-squares fit of the measured points):")
    for n in notes or [(0, 0, 0, 0, "(none: no sweep with a slope= claim has 3 measured points)")]:
        print("  " + n[4])
    if not a.no_docs and notes:
        rows = ["| what | doc's exponent | measured (least squares, upper half of the sweep) | |",
                "| --- | ---: | ---: | --- |"]
        rows += [f"| {w} | {k:g} | {m:.2f} | {'**differs**' if d else 'agrees'} |" for w, m, k, d, _ in notes]
        replace_between(os.path.join(os.path.dirname(a.readme) or ".", "docs", "README.md"), "slopes",
                        "\n".join(rows), f"{a.results}/lessonN.csv")
    print(f"\n{len(written)} figures in {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
