#!/usr/bin/env python3
"""The order in which a lesson's `cuda` alias tries its CUDA versions, from the time model and the GPU reports.

    python3 docs/tools/cuda_order.py LESSON          the order and the figures it rests on (docs/generated.txt)
    python3 docs/tools/cuda_order.py --check BIN     the rule on made-up figures, then every lesson's
                                                     `BIN/lessonN --help` lists its order, then --peaks, or exit 1
    python3 docs/tools/cuda_order.py --peaks BIN     every measured row not retired has the peak bytes of today's
                                                     memory formula (BIN/lessonN --predict), and every row of
                                                     retired.csv sets a row aside, or exit 1
    python3 docs/tools/cuda_order.py --retired L     the measured rows the rule sets aside (retired.csv)

docs/results/retired.csv (lesson,impl,report,why) names the measured rows of code that has since left the tree, so a
version name reused by newer code is never credited with the old code's times. Its `report` is one results file's
folder under docs/results/: `nvidia-h200` for that GPU's top-level results.csv alone, `nvidia-h200/issue27-report`
for the subfolder's; never a whole GPU, so a report in a new folder, measuring the code of its day, is read. Every
tool that reads the GPU reports applies it so (this file, versions_table.py, out_of_sample.py,
plots/gpu_vs_pytorch.py, tests/cuda_emu/model_record.sh, predict_compare.sh, predict_table.sh, model_fit.cc). A row
whose peak bytes differ from today's formula for its version at its dims measured other code: --peaks fails until
retired.csv names it (tests/test_retired.py, run by `make test`, runs --peaks and plants both faults).

The rule (the issue's: the model's fastest, unless a GPU measured otherwise):
1. The model's order: each version's predicted forward + backward ms on the H100 at the forum size (lesson 4: its
   largest preset, medium), docs/results/emu/predicted_h100.csv (`make predict`); a version without a prediction
   goes last; equal predictions by version number.
2. The measured versions keep the places the model gives them as a set, and are re-ordered among themselves where
   the GPUs agree: two versions go in their measured order when every GPU that measured both ranks them so (a GPU
   report's forward_ms + backward_ms, docs/results/<gpu>/results.csv, then its subfolders' results.csv for
   versions measured later: the first row found, as tests/cuda_emu/predict_table.sh shows them; not the rows
   docs/results/retired.csv names for their file's folder: code since rebuilt under the same name, or removed). Where the GPUs
   disagree, or one pass on each settles nothing, the model's order stands.
3. A version built for one architecture alone (its file includes hopper_ptx.h: sm_90a, compute capability 9.0)
   goes last until a GPU has timed it: where it can run, no GPU has run it yet, and `cuda` should not start there.
The lesson then runs the first version in that order that fits the problem and the device (lessons/runner/lesson.h,
lesson_cuda_pick): lesson 3's v4 and v5 take K <= 256.
"""
import csv
import functools
import os
import re
import subprocess
import sys
import tempfile

RESULTS = "docs/results"
MODEL = os.path.join(RESULTS, "emu", "predicted_h100.csv")
LESSONS = (1, 2, 3, 4, 5)


def version(impl):
    m = re.fullmatch(r"cuda-v(\d+)", impl)
    return int(m.group(1)) if m else None


def forum_size(rows, lesson):
    """The forum preset, or medium where the model has no forum rows for the lesson (lesson 4)."""
    return "forum" if any(r["lesson"] == str(lesson) and r["size"] == "forum" for r in rows) else "medium"


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def gpu_reports():
    """{gpu label: [results.csv paths, the report's own first, then its subfolders' in name order]}."""
    out = {}
    for d in sorted(os.listdir(RESULTS)):
        top = os.path.join(RESULTS, d)
        if not d.startswith("nvidia-") or not os.path.isdir(top):
            continue
        m = re.search(r"[a-z]\d{2,3}", d[len("nvidia-"):])
        label = m.group(0).upper() if m else d
        paths = [os.path.join(top, "results.csv")]
        paths += [os.path.join(top, s, "results.csv") for s in sorted(os.listdir(top))
                  if os.path.isdir(os.path.join(top, s))]
        out[label] = [p for p in paths if os.path.isfile(p)]
    return out


def report_of(path):
    """The report a results file belongs to, as retired.csv's `report` column names it: the folder under
    docs/results/ that holds the file (nvidia-h200 for that GPU's top-level results.csv, nvidia-h200/issue27-report
    for a subfolder's)."""
    return os.path.relpath(os.path.dirname(path), RESULTS).replace(os.sep, "/")


def retired():
    """{(lesson, impl, report)}: rows docs/results/retired.csv says a report measured of code no longer in the tree
    (a version since rebuilt under the same name, or removed). `report` is one results file's folder (report_of),
    never a whole GPU: a later report in a new folder measures the code of its day and is never set aside by an
    older row of the same name."""
    path = os.path.join(RESULTS, "retired.csv")
    return {(r["lesson"], r["impl"], r["report"]) for r in read_csv(path)} if os.path.isfile(path) else set()


def measured(lesson, size, dims):
    """{gpu: {version: ms}}: forward + backward of the first row found for the lesson at size, with the model's
    dims (a run with --dims over the preset keeps its size's name), less the retired rows."""
    out, gone = {}, retired()
    for gpu, paths in gpu_reports().items():
        seen = out.setdefault(gpu, {})
        for p in paths:
            report = report_of(p)
            for r in read_csv(p):
                v = version(r["impl"])
                if r["lesson"] != str(lesson) or r["size"] != size or r["dims"] not in dims or v is None or v in seen:
                    continue
                if (r["lesson"], r["impl"], report) in gone:
                    continue
                if r.get("forward_ms") and r.get("backward_ms"):
                    seen[v] = float(r["forward_ms"]) + float(r["backward_ms"])
    return {g: m for g, m in out.items() if m}


def lesson_versions(lesson):
    """the CUDA versions lessons/lessonN.c defines (its LESSON_CUDA_VERSION rows)"""
    path = f"lessons/lesson{lesson}.c"
    text = open(path, encoding="utf-8").read() if os.path.isfile(path) else ""
    return [int(v) for v in re.findall(r"LESSON_CUDA_VERSION\((\d+)\)", text)]


OPS = {1: "bmm", 2: "logchain", 3: "maxsim", 4: "gru", 5: "linear_ce"}


def one_arch_versions(lesson):
    """the versions whose file includes hopper_ptx.h: sm_90a code, run on compute capability 9.0 alone"""
    out = set()
    for v in lesson_versions(lesson):
        path = f"kernels/{OPS[lesson]}_v{v}.cu"
        if os.path.isfile(path) and "<hopper_ptx.h>" in open(path, encoding="utf-8").read():
            out.add(v)
    return out


def order(lesson):
    """(size, [versions fastest first], {version: model ms or None}, {gpu: {version: ms}}, [notes])."""
    rows = read_csv(MODEL)
    size = forum_size(rows, lesson)
    model, dims = {v: None for v in lesson_versions(lesson)}, set()  # a version not predicted yet: last
    for r in rows:
        v = version(r["impl"])
        if r["lesson"] == str(lesson) and r["size"] == size and v is not None:
            model[v] = float(r["predicted_ms"]) if r["predicted_ms"] else None
            dims.add(r["dims"])
    meas = measured(lesson, size, dims)
    return (size,) + rank(model, meas, one_arch_versions(lesson))


def rank(model, meas, one_arch=()):
    """The rule on {version: predicted ms or None} and {gpu: {version: measured ms}}: (order, model, meas, notes).
    one_arch: the versions built for one GPU architecture alone (sm_90a); until a GPU has timed one, it goes after
    every other version, so `cuda` never picks on the model's word code that no GPU has run where it can."""
    model = dict(model)
    for m in meas.values():
        for v in m:
            model.setdefault(v, None)
    untried = {v for v in one_arch if not any(v in m for m in meas.values())}

    def model_key(v):
        return (v in untried, model[v] is None, model[v] or 0.0, v)

    by_model = sorted(model, key=model_key)

    def agreed(a, b):
        """-1 or 1 where every GPU that measured both ranks a before or after b; 0 where none did or they differ."""
        signs = {(m[a] > m[b]) - (m[a] < m[b]) for m in meas.values() if a in m and b in m}
        return signs.pop() if len(signs) == 1 and 0 not in signs else 0

    def cmp(a, b):
        s = agreed(a, b)
        return s if s else (model_key(a) > model_key(b)) - (model_key(a) < model_key(b))

    timed = [v for v in by_model if any(v in m for m in meas.values())]
    slots = iter(sorted(timed, key=functools.cmp_to_key(cmp)))
    result = [next(slots) if v in timed else v for v in by_model]

    notes = []
    for i, a in enumerate(timed):
        for b in timed[i + 1:]:
            both = {g: m for g, m in meas.items() if a in m and b in m}
            if not both:
                continue
            ratios = ", ".join(f"{both[g][a] / both[g][b]:.2f} on the {g}" for g in both)
            said = f"cuda-v{a}/cuda-v{b} measured {ratios}"
            if model[a] is not None and model[b] is not None:
                said += f"; the model's ratio {model[a] / model[b]:.2f}"
            if agreed(a, b) == 0 and len(both) > 1:
                notes.append(f"the GPUs disagree, the model's order stands: {said}")
            elif agreed(a, b) != 0 and (agreed(a, b) < 0) != (model_key(a) < model_key(b)):
                off = ", ".join(f"{(both[g][a] / both[g][b]) / (model[a] / model[b]):.1f}x on the {g}" for g in both) \
                    if model[a] is not None and model[b] is not None else "no prediction"
                notes.append(f"the GPUs overrule the model: {said} (the model's ratio off by {off})")
    return result, model, meas, notes


def self_test():
    """The rule on made-up figures, each case a way it could go wrong."""
    cases = [  # (model, measured, expected order)
        ({1: 3.0, 2: 1.0, 3: None, 4: 1.0}, {}, [2, 4, 1, 3]),       # no GPU: the model; ties by number; none last
        ({1: 1.0, 2: 2.0}, {"A": {1: 5.0, 2: 3.0}}, [2, 1]),          # one GPU overrules the model
        ({1: 1.0, 2: 2.0}, {"A": {1: 5.0, 2: 3.0}, "B": {1: 3.0, 2: 5.0}}, [1, 2]),  # GPUs disagree: the model
        ({1: 1.0, 2: 2.0}, {"A": {1: 5.0, 2: 3.0}, "B": {2: 1.0}}, [2, 1]),  # B did not measure both: A decides
        ({1: 1.0, 2: 2.0, 3: 3.0}, {"A": {1: 9.0, 3: 1.0}}, [3, 2, 1]),  # the unmeasured v2 keeps its place
        ({1: 1.0, 2: 2.0}, {"A": {1: 4.0, 2: 4.0}}, [1, 2]),          # a measured tie settles nothing
        ({1: 3.0, 2: 2.0, 3: 1.0}, {}, [2, 1, 3], {3}),               # one architecture's, untimed: last
        ({1: 3.0, 2: 2.0, 3: 1.0}, {"A": {2: 5.0, 3: 1.0}}, [3, 2, 1], {3}),  # timed: the rule as for any
    ]
    bad = 0
    for model, meas, want, *one_arch in cases:
        got = rank(model, meas, *one_arch)[0]
        if got != want:
            print(f"cuda_order.py --self-test: model {model}, measured {meas}: {got}, expected {want}", file=sys.stderr)
            bad = 1
    return bad


def show(lesson):
    size, result, model, meas, notes = order(lesson)
    gpus = sorted(meas)
    print(f"lesson {lesson} at the {size} size: forward + backward, ms")
    head = f"{'version':<9} {'H100 model':>12}" + "".join(f" {g + ' measured':>14}" for g in gpus)
    print(head)
    for v in result:
        cells = f"{'cuda-v%d' % v:<9} {('%.3f' % model[v]) if model[v] is not None else '-':>12}"
        cells += "".join(f" {('%.3f' % meas[g][v]) if v in meas[g] else '-':>14}" for g in gpus)
        print(cells)
    print(f"cuda tries, fastest first: {' '.join('v%d' % v for v in result)}")
    for n in notes:
        print(n)
    if not any(n.startswith("the GPUs") for n in notes):
        print("every pair of versions a GPU measured is in the model's order" if any(meas.values())
              else "no GPU has measured these versions: the model's order")


def show_retired(lesson):
    """The rows docs/results/retired.csv sets aside for the lesson: what the replaced code measured."""
    gone = retired()
    print(f"lesson {lesson}: measured rows of code that has left the tree (docs/results/retired.csv), ms")
    print(f"{'version':<9} {'size':<7} {'forward':>10} {'backward':>10} {'pass':>10}  device, file")
    for gpu, paths in sorted(gpu_reports().items()):
        for path in paths:
            report = report_of(path)
            for r in read_csv(path):
                if (r["lesson"], r["impl"], report) in gone and r["lesson"] == str(lesson) and \
                        r.get("forward_ms") and r.get("backward_ms"):
                    f, b = float(r["forward_ms"]), float(r["backward_ms"])
                    print(f"{r['impl']:<9} {r['size']:<7} {f:>10.3f} {b:>10.3f} {f + b:>10.3f}  "
                          f"{r['device']}, {os.path.relpath(path)}")


def peak_problems(bin_dir):
    """What --peaks finds wrong, one line each ([] when none); None where bin_dir's build has no CUDA versions (a
    CPU-only build: the formulas of the cuda versions are not in it). A measured row not retired must have today's
    peak for its version at its dims (`lessonL --size S --dims D --impl V --predict --csv`, the formula the
    tracker is tested equal to); a version no longer in the code must be retired; a retired.csv row must name a
    results file that holds a row of its lesson and version."""
    gone, helps, problems, held = retired(), {}, [], set()
    want = {}  # (lesson, size, dims) -> {(path, impl, measured peak)}
    for paths in gpu_reports().values():
        for p in paths:
            for r in read_csv(p):
                held.add((r["lesson"], r["impl"], report_of(p)))
                if r.get("peak_bytes") and (r["lesson"], r["impl"], report_of(p)) not in gone:
                    want.setdefault((r["lesson"], r["size"], r["dims"]), set()).add(
                        (os.path.relpath(p), r["impl"], int(r["peak_bytes"])))
    for lesson, impl, report in sorted(gone - held):
        problems.append(f"retired.csv: lesson {lesson} {impl} {report}: {os.path.join(RESULTS, report)}/results.csv "
                        "holds no such row")
    for (lesson, size, dims), rows in sorted(want.items()):
        prog = os.path.join(bin_dir, f"lesson{lesson}")
        if lesson not in helps:
            helps[lesson] = subprocess.run([prog, "--help"], stdout=subprocess.PIPE, text=True, check=True).stdout
        have = set(re.findall(r"^ +(cuda-v\d+) ", helps[lesson], re.M))
        if not have:
            return None
        impls = sorted({impl for _, impl, _ in rows if impl in have})
        today = {}
        if impls:
            with tempfile.TemporaryDirectory() as tmp:
                out = os.path.join(tmp, "predict.csv")
                subprocess.run([prog, "--size", size, "--dims", dims, "--impl", ",".join(impls), "--predict", "--csv",
                                out], stdout=subprocess.DEVNULL, check=True)
                today = {r["impl"]: int(r["peak_bytes"]) for r in read_csv(out)}
        for path, impl, peak in sorted(rows):
            if impl not in have:
                problems.append(f"{path}: lesson {lesson} {impl} {size}: not in the code today, not retired "
                                f"(docs/results/retired.csv)")
            elif today.get(impl) != peak:
                problems.append(f"{path}: lesson {lesson} {impl} {size} ({dims}) measured a peak of {peak:,} bytes, "
                                f"today's formula gives {today.get(impl, 0):,}: other code; retire the row "
                                f"(docs/results/retired.csv, report {report_of(path)})")
    return problems


def check_peaks(bin_dir):
    problems = peak_problems(bin_dir)
    if problems is None:
        print(f"cuda_order.py --peaks: {bin_dir} has no CUDA versions (a CPU-only build): the peaks not checked")
        return 0
    for p in problems:
        print(f"cuda_order.py --peaks: {p}", file=sys.stderr)
    if not problems:
        print("cuda_order.py --peaks: every measured row not retired has its version's peak by today's formula")
    return 1 if problems else 0


def check(bin_dir):
    bad = 0
    for lesson in LESSONS:
        prog = os.path.join(bin_dir, f"lesson{lesson}")
        text = subprocess.run([prog, "--help"], stdout=subprocess.PIPE, text=True, check=True).stdout
        m = re.search(r"cuda +\= cuda-v\d+, an alias: of the versions fastest first \(([v\d ]+)\)", text)
        listed = [int(x[1:]) for x in m.group(1).split()] if m else None
        want = order(lesson)[1]
        if listed != want:
            print(f"cuda_order.py: {prog} --help lists {listed}, the model and the GPU reports give {want}: "
                  f"set .cuda_order in lessons/lesson{lesson}.c", file=sys.stderr)
            bad = 1
    if not bad:
        print("cuda_order.py: every lesson's cuda tries its versions in the order the model and the GPU reports give")
    return check_peaks(bin_dir) or bad


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        sys.exit(self_test() or check(sys.argv[2]))
    if len(sys.argv) == 3 and sys.argv[1] == "--peaks":
        sys.exit(check_peaks(sys.argv[2]))
    if len(sys.argv) == 3 and sys.argv[1] == "--retired" and sys.argv[2].isdigit():
        show_retired(int(sys.argv[2]))
        sys.exit(0)
    if len(sys.argv) == 2 and sys.argv[1].isdigit() and int(sys.argv[1]) in LESSONS:
        show(int(sys.argv[1]))
        sys.exit(0)
    sys.exit(__doc__)
