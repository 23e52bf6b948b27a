#!/usr/bin/env python3
"""docs/results/retired.csv's rule, as the tools that read the GPU reports apply it: a row names the results file it
sets aside by that file's folder (nvidia-h200 for the GPU's top-level results.csv, nvidia-h200/issue27-report for a
subfolder's), never a whole GPU, so a later report in a new folder is read. Then `cuda_order.py --peaks` on the
committed reports, and on made-up ones where it must fail: a row not retired whose peak bytes are not today's
formula's (lesson 4 cuda-v3 at medium before commit af9de55: 122,617,856 bytes, today 120,913,920), a version no
longer in the code, a retired.csv row that sets nothing aside.

    python3 tests/test_retired.py [BIN]     (from the repository root; tests/python_checks.sh runs it; BIN: a build
                                             with the CUDA versions, default build, else build/emu)
"""
import contextlib
import io
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "docs", "tools"))
import cuda_order  # noqa: E402
import lesson4_step_cost  # noqa: E402
import versions_table  # noqa: E402

HEAD = "lesson,impl,size,dims,peak_bytes,forward_live_bytes,allocs,forward_ms,backward_ms,max_rel_err,device,gemm_share\n"
MEDIUM = '"T=256,Bt=32,X=128,H=256"'
failures = []


def row(impl, peak, fwd, bwd="5.0", lesson="4", size="medium", dims=MEDIUM):
    return f"{lesson},{impl},{size},{dims},{peak},0,15,{fwd},{bwd},,NVIDIA H200,\n"


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def expect(what, got, want):
    if got != want:
        failures.append(f"{what}: {got!r}, expected {want!r}")


def problems(bin_dir):
    return cuda_order.peak_problems(bin_dir) or []


def cuda_bin():
    for b in sys.argv[1:2] + ["build", "build/emu"]:  # a CPU-only build has no CUDA versions: the emulator's has
        b = os.path.join(ROOT, b)
        if os.path.isfile(os.path.join(b, "lesson4")):
            text = subprocess.run([os.path.join(b, "lesson4"), "--help"], stdout=subprocess.PIPE, text=True).stdout
            if "cuda-v3 " in text:
                return b
    return None


def made_up(bin_dir, tmp):
    """A GPU with the old cuda-v3 row in its top-level results.csv and today's in a later subfolder."""
    gpu = os.path.join(tmp, "docs", "results", "nvidia-h200")
    write(os.path.join(gpu, "results.csv"), HEAD + row("cuda-v3", 122617856, "10.0") + row("cuda-v2", 122617856, "4.0"))
    write(os.path.join(gpu, "later", "results.csv"), HEAD + row("cuda-v3", 120913920, "20.0"))
    retired = os.path.join(tmp, "docs", "results", "retired.csv")
    os.chdir(tmp)

    write(retired, "lesson,impl,report,why\n")
    got = problems(bin_dir)
    expect("not retired, the old peak: one problem", len(got), 1)
    expect("the problem names the file and both peaks",
           bool(got) and all(s in got[0] for s in ("nvidia-h200/results.csv", "122,617,856", "120,913,920")), True)

    write(retired, "lesson,impl,report,why\n4,cuda-v3,nvidia-h200,old code\n")
    expect("retired by its file's folder: no problem", problems(bin_dir), [])
    expect("cuda_order.measured reads the later folder's row, not the retired one",
           cuda_order.measured(4, "medium", {MEDIUM.strip('"')}), {"H200": {2: 9.0, 3: 25.0}})
    expect("versions_table.measured likewise", versions_table.measured(4, "medium").get("H200", {}).get(3, (None, None))[:2], (25.0, 120913920))
    expect("lesson4_step_cost likewise", lesson4_step_cost.rows_by_gpu().get("H200", {}).get("medium", (None, None))[1], 20.0)
    write(os.path.join(tmp, "docs", "results", "emu", "p.csv"),
          "lesson,impl,size,dims,gpu,predicted_ms,limiter\n" + f"4,cuda-v3,medium,{MEDIUM},H200,50.0,fp32\n")
    shell = subprocess.run(["sh", os.path.join(ROOT, "tests", "cuda_emu", "predict_compare.sh"), "docs/results/emu/p.csv",
                            "docs/results/nvidia-h200/results.csv docs/results/nvidia-h200/later/results.csv"],
                           stdout=subprocess.PIPE, text=True)
    expect("predict_compare.sh compares today's row (25 ms), not the retired one (15 ms)",
           "25.0000" in shell.stdout and "15.0000" not in shell.stdout, True)

    write(retired, "lesson,impl,report,why\n4,cuda-v3,nvidia-h200/later,the wrong file\n")
    got = problems(bin_dir)
    expect("the wrong file retired: the old row is still found", any("nvidia-h200/results.csv" in p for p in got), True)
    expect("... and cuda_order.measured drops today's row",
           cuda_order.measured(4, "medium", {MEDIUM.strip('"')}), {"H200": {2: 9.0, 3: 15.0}})

    write(retired, "lesson,impl,report,why\n4,cuda-v3,nvidia-h200,old code\n4,cuda-v1,nvidia-h200,nothing\n")
    got = problems(bin_dir)
    expect("a retired.csv row that sets nothing aside", [p for p in got if "holds no such row" in p] != [], True)

    write(retired, "lesson,impl,report,why\n4,cuda-v3,nvidia-h200,old code\n")
    write(os.path.join(gpu, "later", "results.csv"), HEAD + row("cuda-v3", 120913920, "20.0") +
          row("cuda-v9", 120913920, "1.0"))
    got = problems(bin_dir)
    expect("a version not in the code today, not retired", any("cuda-v9" in p and "not in the code" in p for p in got),
           True)


def main():
    bin_dir = cuda_bin()
    os.chdir(ROOT)
    if bin_dir is None:
        print("test_retired: no build with lesson 4's CUDA versions (build, build/emu): the peaks not checked")
    else:
        got = cuda_order.peak_problems(bin_dir)
        expect("the committed reports: every row not retired has today's peak, every retired.csv row a row", got, [])
        with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(io.StringIO()):
            try:
                made_up(bin_dir, tmp)
            finally:
                os.chdir(ROOT)
    for f in failures:
        print("test_retired:", f, file=sys.stderr)
    if failures:
        return 1
    print("test_retired: retired.csv's rule per results file holds in the readers, and --peaks finds what it must")
    return 0


if __name__ == "__main__":
    sys.exit(main())
