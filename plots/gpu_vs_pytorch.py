"""Each lesson's CUDA versions beside the seeds' PyTorch forms on the same GPU, from one GPU report's files.

    python3 plots/gpu_vs_pytorch.py docs/results/nvidia-h100-80gb-hbm3

Reads RESULTS/results.csv, then its subfolders' results.csv in name order (the lessons' --csv rows: forward_ms,
backward_ms, the tracker's peak bytes; a version's first row found, as docs/tools/cuda_order.py reads them, less
the rows docs/results/retired.csv names for that file's folder: code since rebuilt under the same name, or removed) and RESULTS/pytorch/pytorch.csv (plots/pytorch_baseline.py on the same machine: its own
median times, torch.cuda.max_memory_allocated for the peak), and RESULTS/pytorch/pytorch.log for the forms that ran
out of memory, and RESULTS/anchors.csv (the report's anchors step, plots/anchors.py: Liger-Kernel, Cut
Cross-Entropy, flash-maxsim, nn.GRU, torch.compile), each with a line: the best anchor against our fastest version. Both sides count every tensor from the inputs to the gradients; both time forward + backward after a
warm-up. What differs, printed with the table: the number of timed runs (the C lessons' one timed pass, or a
follow-up's median of several, PyTorch's median of three) and the arithmetic (lesson 3's cuda-v3 and v4 multiply in TF32 and v5 in bf16 or fp16 on the tensor cores, PyTorch in
full float32, torch's default; lesson 5 has bf16 operands on both sides).
"""
import csv
import os
import re
import sys


def rows(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    ours = {}
    subfolders = sorted(s for s in os.listdir(d) if os.path.isdir(os.path.join(d, s)))
    top = os.path.basename(os.path.normpath(d))
    # retired.csv's report: a results file's folder under docs/results/ (the GPU's own name for its top-level
    # results.csv, GPU/subfolder for a subfolder's)
    gone = {(r["lesson"], r["impl"], r["report"])
            for r in rows(os.path.join(os.path.dirname(os.path.normpath(d)), "retired.csv"))}
    for report, path in [(top, os.path.join(d, "results.csv"))] + \
            [(top + "/" + s, os.path.join(d, s, "results.csv")) for s in subfolders]:
        for r in rows(path):
            if r["forward_ms"] and (r["lesson"], r["impl"], report) not in gone:
                ours.setdefault((r["lesson"], r["size"]), {}).setdefault(r["impl"], r)
    torch = rows(os.path.join(d, "pytorch", "pytorch.csv"))
    anchors = rows(os.path.join(d, "anchors.csv"))  # the report's anchors step: plots/anchors.py's rows
    oom = {}
    lesson = None
    log = os.path.join(d, "pytorch", "pytorch.log")
    for line in open(log) if os.path.exists(log) else []:
        m = re.match(r"== lesson (\d+) --size (\S+)", line)
        if m:
            lesson = m.groups()
        m = re.match(r"\s+(pytorch-\S+): out of memory, as the forum reports: .*Tried to allocate ([\d.]+ GiB)", line)
        if m and lesson:
            oom.setdefault(lesson, []).append((m.group(1), m.group(2)))
    device = torch[0]["device"] if torch else "?"
    print(f"{device}: each lesson's CUDA versions (one timed pass or a follow-up's median, the tracker's peak) beside")
    print("PyTorch's forms (median of 3 passes, torch.cuda.max_memory_allocated), forward + backward, at the size PyTorch ran")
    print(f"{'lesson':7} {'size':7} {'implementation':15} {'ms':>11} {'peak bytes':>16}")
    keys = sorted({(r["lesson"], r["size"]) for r in torch + anchors} | set(oom))
    for lesson, size in keys:
        for r in [r for r in torch if (r["lesson"], r["size"]) == (lesson, size)]:
            ms = float(r["forward_ms"]) + float(r["backward_ms"])
            print(f"{lesson:7} {size:7} {r['impl']:15} {ms:11.3f} {int(r['peak_bytes']):16,d}")
        for impl, asked in oom.get((lesson, size), []):
            print(f"{lesson:7} {size:7} {impl:15} {'-':>11} {'out of memory':>16}  (asked for {asked} more)")
        here = [r for r in anchors if (r["lesson"], r["size"]) == (lesson, size)]
        for r in here:
            ms = float(r["forward_ms"]) + float(r["backward_ms"])
            print(f"{lesson:7} {size:7} {r['impl']:15} {ms:11.3f} {int(r['peak_bytes']):16,d}  (anchor)")
        mine = ours.get((lesson, size), {})
        for impl in sorted(mine, key=lambda v: int(v.split("-v")[-1]) if "-v" in v else 0):
            r = mine[impl]
            ms = float(r["forward_ms"]) + float(r["backward_ms"])
            print(f"{lesson:7} {size:7} {impl:15} {ms:11.3f} {int(r['peak_bytes']):16,d}")
        # against the fastest PyTorch form measured (lesson 4's and 5's is the seed's own loop, not pytorch-best)
        best = sorted((r for r in torch if (r["lesson"], r["size"]) == (lesson, size) and r["forward_ms"]),
                      key=lambda r: float(r["forward_ms"]) + float(r["backward_ms"]))
        if best and mine:
            tb = float(best[0]["forward_ms"]) + float(best[0]["backward_ms"])
            fastest = min(mine, key=lambda v: float(mine[v]["forward_ms"]) + float(mine[v]["backward_ms"]))
            tf = float(mine[fastest]["forward_ms"]) + float(mine[fastest]["backward_ms"])
            print(f"{'':15} {best[0]['impl']} (PyTorch's fastest) / {fastest}: time {tb / tf:.1f}x, peak "
                  f"{int(best[0]['peak_bytes']) / int(mine[fastest]['peak_bytes']):.2f}x")
        if here and mine:
            pass_ms = lambda r: float(r["forward_ms"]) + float(r["backward_ms"])
            a = min(here, key=pass_ms)
            fastest = min(mine, key=lambda v: pass_ms(mine[v]))
            print(f"{'':15} best anchor {a['impl']} / {fastest}: time {pass_ms(a) / pass_ms(mine[fastest]):.2f}x, peak "
                  f"{int(a['peak_bytes']) / int(mine[fastest]['peak_bytes']):.2f}x")
    print("arithmetic: lesson 3's cuda-v3 and v4 in TF32 on the tensor cores (v5: bf16 or fp16), PyTorch's float32 "
          "matmuls in full float32")
    print("(torch's default); lesson 5: bf16 operands on both sides")
    return 0


if __name__ == "__main__":
    sys.exit(main())
