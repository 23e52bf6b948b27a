"""`make plots` changes nothing when it finds no CSVs, and another results folder's figures go to their own folder.

    python3 tests/test_bench_plots.py      (make test runs it through tests/python_checks.sh; needs matplotlib)

  - plots/bench_plots.py over a folder with no lessonN.csv exits non-zero, creates no --out folder and leaves the
    --readme file byte for byte (it used to write "no results yet" rows into the README's table);
  - over a folder with one lesson's CSV it draws that lesson's figures into --out;
  - `make -n plots` sends docs/results/cpu's figures to docs/img with the README's table, and
    BENCH_DIR=docs/results/<gpu> to docs/results/<gpu>/img with the README and docs left alone (--no-docs).
Exits 1 on the first disagreement.
"""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
PLOTS = os.path.join(ROOT, "plots", "bench_plots.py")


def fail(msg):
    print(f"test_bench_plots: FAIL: {msg}")
    sys.exit(1)


def main():
    with tempfile.TemporaryDirectory() as d:
        readme = os.path.join(d, "README.md")
        shutil.copy(os.path.join(ROOT, "README.md"), readme)
        before = open(readme, "rb").read()
        empty, out = os.path.join(d, "empty"), os.path.join(d, "img")
        os.makedirs(empty)
        p = subprocess.run([sys.executable, PLOTS, "--results", empty, "--out", out, "--readme", readme],
                           capture_output=True, text=True, cwd=ROOT)
        if (p.returncode == 0 or "no lessonN.csv" not in p.stderr or os.path.exists(out)
                or open(readme, "rb").read() != before):
            fail(f"no CSVs: exit {p.returncode}, --out made: {os.path.exists(out)}, README changed: "
                 f"{open(readme, 'rb').read() != before}; {p.stdout[-300:]} {p.stderr[-300:]}")
        print(f"test_bench_plots: ok: no CSVs: exit {p.returncode}, nothing written: {p.stderr.strip()}")
        one = os.path.join(d, "one")
        os.makedirs(one)
        shutil.copy(os.path.join(ROOT, "docs", "results", "cpu", "lesson1.csv"), one)
        p = subprocess.run([sys.executable, PLOTS, "--results", one, "--out", out, "--no-docs"], capture_output=True,
                           text=True, cwd=ROOT)
        if p.returncode != 0 or not os.path.exists(os.path.join(out, "lesson1_memory.png")):
            fail(f"lesson1.csv alone: exit {p.returncode}, figures {os.listdir(out) if os.path.exists(out) else []}; "
                 f"{p.stderr[-300:]}")
        print(f"test_bench_plots: ok: lesson1.csv alone draws {sorted(os.listdir(out))}")
    for bench_dir, want in (("", "--results docs/results/cpu --out docs/img --readme README.md"),
                            ("docs/results/nvidia-h200",
                             "--results docs/results/nvidia-h200 --out docs/results/nvidia-h200/img --no-docs")):
        p = subprocess.run(["make", "-n", "plots", f"BENCH_DIR={bench_dir}"], capture_output=True, text=True,
                           cwd=ROOT)
        line = [x for x in p.stdout.splitlines() if "bench_plots.py" in x]
        if not line or not line[0].rstrip().endswith(want):
            fail(f"make -n plots BENCH_DIR={bench_dir}: {line}, expected it to end with: {want}")
        print(f"test_bench_plots: ok: make plots BENCH_DIR={bench_dir}: {want}")
    print("test_bench_plots: no CSVs changes nothing; each results folder draws into its own")


if __name__ == "__main__":
    main()
