#!/usr/bin/env python3
"""The time model's out-of-sample errors: every GPU measurement whose prediction was committed before it.

    python3 docs/tools/out_of_sample.py            the table (tests/cuda_emu/README.md pastes it)
    python3 docs/tools/out_of_sample.py --csv      the same rows as docs/results/emu/out_of_sample.csv
    python3 docs/tools/out_of_sample.py --check    exit 1 when that CSV is not what the history gives today

The commit order is the proof. For each row of a GPU report (docs/results/<gpu>/results.csv and its subfolders'),
the commit that first added the row is found in git's history of that file; the prediction is the row of the same
lesson, version, size and dims in docs/results/emu/predicted_<h100|h200>.csv as it stood in that commit's parent.
A measurement with no such prediction (the report came first, or the version was not predicted then) is not out of
sample, and is left out. docs/results/retired.csv's rows (each names its results file's folder, as
docs/tools/cuda_order.py reads them) are kept and marked: the code measured then was what was predicted then, even
where the version's name now holds other code. The error is predicted / measured (forward +
backward ms); "x" figures are that ratio or its inverse, whichever is >= 1.
"""
import csv
import io
import os
import statistics
import subprocess
import sys

RESULTS = "docs/results"
CSV_OUT = os.path.join(RESULTS, "emu", "out_of_sample.csv")
COLUMNS = ["lesson", "impl", "gpu", "size", "dims", "measured_ms", "predicted_ms", "ratio",
           "prediction_commit", "measurement_commit", "retired"]
GPUS = {"nvidia-h100-80gb-hbm3": "h100", "nvidia-h200": "h200"}


def git(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout


def rows_at(commit, path):
    """The CSV's rows as committed in `commit` (none where the file did not exist)."""
    try:
        text = git("show", f"{commit}:{path}")
    except subprocess.CalledProcessError:
        return []
    return list(csv.DictReader(io.StringIO(text)))


def key(row):
    return (row["lesson"], row["impl"], row["size"], row["dims"])


def first_commits(path):
    """Each row's key -> the oldest commit of the file's history whose version holds it."""
    first = {}
    for commit in reversed(git("log", "--format=%H", "--", path).split()):
        for row in rows_at(commit, path):
            if row.get("forward_ms") and key(row) not in first:
                first[key(row)] = (commit, row)
    return first


def retired():
    path = os.path.join(RESULTS, "retired.csv")
    if not os.path.exists(path):
        return set()
    with open(path) as f:
        return {(r["lesson"], r["impl"], r["report"]) for r in csv.DictReader(f)}


def reports(gpu_dir):
    top = os.path.join(RESULTS, gpu_dir)
    paths = [os.path.join(top, "results.csv")]
    paths += sorted(os.path.join(top, d, "results.csv") for d in os.listdir(top)
                    if os.path.exists(os.path.join(top, d, "results.csv")))
    return [p for p in paths if os.path.exists(p)]


def table_rows():
    gone = retired()
    out = []
    for gpu_dir, short in GPUS.items():
        if not os.path.isdir(os.path.join(RESULTS, gpu_dir)):
            continue
        model = os.path.join(RESULTS, "emu", f"predicted_{short}.csv")
        seen = set()
        for path in reports(gpu_dir):
            report = os.path.relpath(os.path.dirname(path), RESULTS).replace(os.sep, "/")
            for k, (commit, row) in first_commits(path).items():
                gone_row = (row["lesson"], row["impl"], report) in gone
                if (k, gone_row) in seen:  # a retired row does not hide a later measurement of today's code
                    continue
                seen.add((k, gone_row))
                before = {key(r): r for r in rows_at(commit + "^", model)}
                pred = before.get(k)
                if not pred or not pred.get("predicted_ms"):
                    continue
                measured = float(row["forward_ms"]) + float(row["backward_ms"] or 0)
                predicted = float(pred["predicted_ms"])
                out.append({"lesson": row["lesson"], "impl": row["impl"], "gpu": short.upper(),
                            "size": row["size"], "dims": row["dims"], "measured_ms": f"{measured:.4f}",
                            "predicted_ms": f"{predicted:.3f}", "ratio": f"{predicted / measured:.3f}",
                            "prediction_commit": git("log", "-1", "--format=%h", commit + "^", "--",
                                                     model).strip(),
                            "measurement_commit": commit[:7],
                            "retired": "1" if gone_row else "0"})
    out.sort(key=lambda r: (r["lesson"], r["size"], r["gpu"], r["impl"]))
    return out


def as_csv(rows):
    f = io.StringIO()
    w = csv.DictWriter(f, COLUMNS, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return f.getvalue()


def spread(ratio):
    return ratio if ratio >= 1 else 1 / ratio


def print_table(rows):
    print("Predicted before measured (the prediction's commit precedes the report's; a MODEL against the GPU):\n")
    print("| lesson | version | GPU | size | measured ms | predicted ms | predicted / measured |"
          " prediction | report |")
    print("|---|---|---|---|---:|---:|---:|---|---|")
    for r in rows:
        name = r["impl"] + (" (retired)" if r["retired"] == "1" else "")
        print(f"| {r['lesson']} | {name} | {r['gpu']} | {r['size']} | {float(r['measured_ms']):.3f} |"
              f" {float(r['predicted_ms']):.3f} | {float(r['ratio']):.2f} | {r['prediction_commit']} |"
              f" {r['measurement_commit']} |")
    errs = [spread(float(r["ratio"])) for r in rows if r["size"] in ("forum", "medium")]
    if errs:
        within = sum(e <= 1.5 for e in errs)
        print(f"\nforum and medium rows: {len(errs)}, median error x{statistics.median(errs):.2f},"
              f" {within} within 1.5x ({100 * within / len(errs):.0f}%)")
    print("Unmeasured versions' predictions wait in docs/results/emu/predicted_h100.csv and predicted_h200.csv;"
          " the next GPU report adds their rows here.")


def main(argv):
    try:
        git("rev-parse", "--git-dir")
    except (subprocess.CalledProcessError, FileNotFoundError):
        print("out_of_sample.py: needs the git history (the commit order is the proof)", file=sys.stderr)
        return 2
    if git("rev-parse", "--is-shallow-repository").strip() == "true":
        print("out_of_sample.py: a shallow clone has no history to prove the order; skipped", file=sys.stderr)
        return 0 if "--check" in argv else 2
    rows = table_rows()
    if "--csv" in argv:
        with open(CSV_OUT, "w") as f:
            f.write(as_csv(rows))
        print(f"wrote {CSV_OUT} ({len(rows)} rows)")
    elif "--check" in argv:
        have = open(CSV_OUT).read() if os.path.exists(CSV_OUT) else ""
        if have != as_csv(rows):
            print(f"{CSV_OUT} is stale: run python3 docs/tools/out_of_sample.py --csv", file=sys.stderr)
            return 1
        print(f"{CSV_OUT}: {len(rows)} rows, as the history gives them")
    else:
        print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
