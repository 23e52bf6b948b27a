#!/usr/bin/env python3
"""A lesson's CUDA versions as one table: the idea, the peak and the time each GPU measured, the file it is in.

    python3 docs/tools/versions_table.py LESSON [BIN]     (BIN: the build directory, default build)

Everything printed comes from a file or a program, so a doc that pastes it (docs/generated.txt) cannot go stale:
- the idea in one line (the --help text's first clause), and which version `cuda` runs: `BIN/lessonN --help` (its
  .cuda_order);
- peak bytes and forward + backward ms: the first row found for the version at the lesson's forum size (lesson 4:
  medium) in each GPU report, docs/results/<gpu>/results.csv, then its subfolders' results.csv (the rule of
  docs/tools/cuda_order.py and tests/cuda_emu/predict_table.sh);
- the anchor: the fastest PyTorch form measured on the same GPU (the forum's own or pytorch-best, named on the
  anchor line), docs/results/<gpu>/pytorch/pytorch.csv;
- a version that ran at that size but was killed before its first timed pass: the report's summary.txt TIMEOUT
  line ("exit 124"), shown as "> N s" (the longest budget it was given on that GPU), never as "not run".
"vs earlier" is the fastest of the versions above's time over this one's (above 1: faster), "vs anchor" the
anchor's time over this one's, both on the last GPU that measured the version, named beside each ratio.
"""
import csv
import os
import re
import subprocess
import sys

from cuda_order import RESULTS, gpu_reports, read_csv, report_of, retired, version  # beside this file

FORUM = {1: "forum", 2: "forum", 3: "forum", 4: "medium", 5: "forum"}


def help_text(bin_dir, lesson):
    prog = os.path.join(bin_dir, f"lesson{lesson}")
    return subprocess.run([prog, "--help"], stdout=subprocess.PIPE, text=True, check=True).stdout


def first_clause(about):
    """A version's idea in one line: its --help text up to the first ': ' or '; ' (the text's own headline; the
    details after it stay in --help)."""
    return re.split(r": |; ", about, maxsplit=1)[0].strip()


def ideas(text):
    """{version: the --help line's idea, its first clause} and the alias's order, from `lessonN --help`."""
    out = {int(m.group(1)): first_clause(m.group(2)) for m in re.finditer(r"^ +cuda-v(\d+) +(.+)$", text, re.M)}
    m = re.search(r"cuda +\= cuda-v(\d+), an alias: of the versions fastest first \(([v\d ]+)\)", text)
    order = [int(x[1:]) for x in m.group(2).split()] if m else []
    return out, order


def measured(lesson, size):
    """{gpu: {version: (ms, peak bytes, path)}}, the first row found in each report, less the rows
    docs/results/retired.csv sets aside in that results file's folder (code since rebuilt under the same name, or
    removed)."""
    out, gone = {}, retired()
    for gpu, paths in gpu_reports().items():
        seen = out.setdefault(gpu, {})
        for p in paths:
            report = report_of(p)
            for r in read_csv(p):
                v = version(r["impl"])
                if r["lesson"] != str(lesson) or r["size"] != size or v is None or v in seen:
                    continue
                if (r["lesson"], r["impl"], report) in gone:
                    continue
                if r.get("forward_ms") and r.get("backward_ms"):
                    seen[v] = (float(r["forward_ms"]) + float(r["backward_ms"]), int(r["peak_bytes"]), p)
    return {g: m for g, m in out.items() if m}


def timeouts(lesson, size):
    """{gpu: {version: seconds}}: versions a report started at size and killed at its time limit (summary.txt's
    "TIMEOUT ... lessonL cuda-vN --size SIZE (exit 124, S s of ..." or "(exit 124 at S s)"), the longest budget
    given on that GPU, less the retired rows (the summary.txt beside a results.csv is that file's report). A version
    "not started" there did not run."""
    out, gone = {}, retired()
    line = re.compile(r"^TIMEOUT +\w+ +lesson(\d+) (cuda-v\d+) --size (\w+) \(exit 124(?:,| at) (\d+) s")
    for gpu, paths in gpu_reports().items():
        for p in paths:
            report = report_of(p)
            summary = os.path.join(os.path.dirname(p), "summary.txt")
            if not os.path.isfile(summary):
                continue
            with open(summary) as f:
                for m in filter(None, (line.match(t) for t in f)):
                    if m.group(1) != str(lesson) or m.group(3) != size or (m.group(1), m.group(2), report) in gone:
                        continue
                    v, secs = version(m.group(2)), int(m.group(4))
                    seen = out.setdefault(gpu, {})
                    seen[v] = max(seen.get(v, 0), secs)
    return out


def anchors(lesson, size):
    """{gpu: (ms, peak, path, form)}: the fastest PyTorch form (pytorch-*) each GPU measured."""
    out = {}
    for d in sorted(os.listdir(RESULTS)):
        p = os.path.join(RESULTS, d, "pytorch", "pytorch.csv")
        if not d.startswith("nvidia-") or not os.path.isfile(p):
            continue
        gpu = next((g for g, paths in gpu_reports().items() if paths and paths[0].startswith(os.path.join(RESULTS, d)
                                                                                              + os.sep)), d)
        for r in read_csv(p):
            if r["lesson"] == str(lesson) and r["size"] == size and r["impl"].startswith("pytorch-") \
                    and r["forward_ms"]:
                ms = float(r["forward_ms"]) + float(r["backward_ms"])
                if gpu not in out or ms < out[gpu][0]:
                    out[gpu] = (ms, int(r["peak_bytes"]), p, r["impl"])
    return out


def ms_cell(meas, late, v):
    """One GPU's time for version v: its ms, "> N s" where it timed out, "-" where it did not run there."""
    return "%.3f" % meas[v][0] if v in meas else "> %d s" % late[v] if v in late else "-"


def main():
    if len(sys.argv) not in (2, 3) or not sys.argv[1].isdigit() or int(sys.argv[1]) not in FORUM:
        sys.exit(__doc__)
    lesson, bin_dir = int(sys.argv[1]), sys.argv[2] if len(sys.argv) == 3 else "build"
    size = FORUM[lesson]
    idea, order = ideas(help_text(bin_dir, lesson))
    meas, anchor, late = measured(lesson, size), anchors(lesson, size), timeouts(lesson, size)
    late = {g: {v: s for v, s in t.items() if v not in meas.get(g, {})} for g, t in late.items()}
    gpus = sorted(set(meas) | {g for g, t in late.items() if t})
    meas = {g: meas.get(g, {}) for g in gpus}
    print(f"lesson {lesson} at the {size} size: forward + backward ms and peak bytes as each GPU measured them")
    print(f"{'version':<8} {'peak bytes':>13}" + "".join(f" {g + ' ms':>9}" for g in gpus)
          + f" {'vs earlier':>11} {'vs anchor':>11}  the idea (build/lesson{lesson} --help has the rest)")
    earlier = []
    for v in sorted(idea):
        last = next((meas[g][v] for g in reversed(gpus) if v in meas[g]), None)
        gpu = next((g for g in reversed(gpus) if v in meas[g]), None)
        killed = any(v in late.get(g, {}) for g in gpus)
        cells = f"{'cuda-v%d' % v:<8} {'{:,}'.format(last[1]) if last else 'timed out' if killed else 'not run':>13}"
        cells += "".join(f" {ms_cell(meas[g], late.get(g, {}), v):>9}" for g in gpus)
        best = min((meas[gpu][e][0] for e in earlier if e in meas[gpu]), default=None) if last else None
        vs_prev = f"{best / last[0]:.2f}x {gpu}" if best else "-"
        vs_anchor = f"{anchor[gpu][0] / last[0]:.2f}x {gpu}" if last and gpu in anchor else "-"
        print(f"{cells} {vs_prev:>11} {vs_anchor:>11}  {idea[v]}")
        earlier.append(v)
    if anchor:
        forms = {}  # form -> the GPUs it is the fastest on, in the table's order
        for g in (g for g in gpus if g in anchor):
            forms.setdefault(anchor[g][3], []).append(g)
        said = []
        for f, gs in forms.items():
            peaks = " / ".join(sorted({f"{anchor[g][1]:,}" for g in gs}))
            said.append(f + (" (the forum's code)" if f == "pytorch-naive" else "") + ", "
                        + ", ".join(f"{g} {anchor[g][0]:.3f} ms" for g in gs) + f", peak {peaks} bytes")
        print("anchor: the fastest PyTorch form each GPU measured (docs/results/<gpu>/pytorch/pytorch.csv): "
              + "; ".join(said))
    for g in gpus:
        dirs = sorted({os.path.relpath(m[2], RESULTS).split(os.sep)[0] for m in meas[g].values()})
        line = f"ran on the {g}: {' '.join('v%d' % v for v in sorted(meas[g]))} (docs/results/{', '.join(dirs)}/)"
        if late.get(g):
            line += f"; {' '.join('v%d' % v for v in sorted(late[g]))} also ran, killed at its time limit (summary.txt)"
        print(line)
    unrun = [v for v in sorted(idea) if not any(v in m for m in meas.values())
             and not any(v in t for t in late.values())]
    if unrun:
        print(f"no GPU has run {' '.join('v%d' % v for v in unrun)}")
    if order:
        untimed = [v for v in order if not any(v in m for m in meas.values())]
        how = f"predicted fastest first, no GPU has timed {' '.join('v%d' % v for v in untimed)};" if untimed \
            else "fastest first,"
        print(f"`cuda` runs cuda-v{order[0]}: it tries {' '.join('v%d' % v for v in order)} ({how} "
              "docs/tools/cuda_order.py) and runs the first that fits the problem and the device")
    return 0


if __name__ == "__main__":
    sys.exit(main())
