"""The seeds' own PyTorch formulations, measured on the same sizes as the C lessons.

    python3 plots/pytorch_baseline.py --lesson 1 --size forum [--csv docs/results/cpu/pytorch.csv] [--compare build/lesson1]

For each lesson it runs the forum's formulation (impl=pytorch-naive) and the fixed one (impl=pytorch-best),
forward and backward, and reports:
  - time: the median of --repeat runs after one warm-up run (a first run that touches fresh memory is not a sample);
  - memory: on a GPU, torch.cuda.max_memory_allocated; on the CPU, the bytes autograd saves for backward
    (saved-tensor hooks, each storage counted once) plus the inputs and outputs, labelled "saved+io" in the device
    column, since the CPU allocator has no exact peak counter.
With --compare BINARY it also runs the C lesson (same size, same thread count) in the same invocation and prints
the time ratio of the C 'cpu' implementation to pytorch-best, so both are measured on one machine in one run.

It prints which BLAS torch runs on (Debian's python3-torch falls back to the reference BLAS unless OpenBLAS is
installed: 10x slower) and sets torch's thread count to the C code's (OPENBLAS_NUM_THREADS, else all cores).
Rows are appended to --csv in the lessons' CSV format. Without torch it says so and exits 0 (it is optional).
"""
import argparse
import csv
import os
import statistics
import subprocess
import sys
import time

SIZES = {
    1: {"tiny": dict(B=3, G=2, K=4, N=5), "small": dict(B=512, G=8, K=64, N=64), "forum": dict(B=8192, G=8, K=64, N=64)},
    2: {"tiny": dict(n=2, t=1, v=5, c=3), "small": dict(n=10, t=1, v=6, c=40), "medium": dict(n=100, t=1, v=40, c=100)},
}
CSV_HEADER = ["lesson", "impl", "size", "dims", "peak_bytes", "forward_live_bytes", "allocs", "forward_ms",
              "backward_ms", "max_rel_err", "device"]


def blas_in_use():
    """The BLAS shared object this process has mapped (after torch ran a matmul)."""
    libs = set()
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if "blas" in os.path.basename(path).lower():
                libs.add(os.path.realpath(path))
    return ", ".join(sorted(libs)) or "none mapped (torch's own kernels)"


class SavedBytes:
    """Counts the bytes autograd saves for backward, each storage once (saved-tensor hooks)."""

    def __init__(self, torch):
        self.torch, self.seen, self.bytes = torch, set(), 0

    def pack(self, t):
        key = (t.untyped_storage().data_ptr() if hasattr(t, "untyped_storage") else t.storage().data_ptr())
        if key not in self.seen:
            self.seen.add(key)
            self.bytes += t.untyped_storage().nbytes() if hasattr(t, "untyped_storage") else t.storage().nbytes()
        return t

    def hooks(self):
        return self.torch.autograd.graph.saved_tensors_hooks(self.pack, lambda t: t)


def lesson1_forms(torch, d):
    B, G, K, N = d["B"], d["G"], d["K"], d["N"]
    x = torch.randn(B, G * K, requires_grad=True)
    W = (torch.randn(G, K, N) / K ** 0.5).requires_grad_()
    dout = torch.randn(B, G, N)
    naive = lambda: torch.matmul(x.view(B, G, 1, K), W).view(B, G, N)  # the forum's broadcast matmul
    best = lambda: torch.einsum("bgk,gkn->bgn", x.view(B, G, K), W)  # the forum's einsum
    return [x, W], dout, {"pytorch-naive": naive, "pytorch-best": best}


def lesson2_forms(torch, d):
    n, t, v, c = d["n"], d["t"], d["v"], d["c"]
    x = (torch.randn(n, t, v, c) - 2).requires_grad_()
    bulk = torch.empty(1, t, v - 1, c, c).uniform_(1e-3, 1).requires_grad_()
    p0 = torch.empty(1, t, c).uniform_(1e-3, 1).requires_grad_()
    dout = torch.randn(n, t)

    def forward_algorithm():  # the fix: alpha recursion, (n,c).(c,c) per step
        alpha = torch.log(p0) + x[:, :, 0]
        for i in range(v - 1):
            m = alpha.max(-1, keepdim=True).values
            alpha = x[:, :, i + 1] + m + torch.log(torch.einsum("ntj,tjk->ntk", torch.exp(alpha - m), bulk[0, :, i]))
        return torch.logsumexp(alpha, -1)

    def tree():  # the forum's pairwise tree of log-space (c,c) products (odd levels carried up)
        M = x[:, :, :-1, :, None] + torch.log(bulk)  # (n,t,v-1,c,c)
        while M.shape[2] > 1:
            P = M.shape[2] // 2
            a, b = M[:, :, 0:2 * P:2], M[:, :, 1:2 * P:2]
            b1, b2 = a.max(-1, keepdim=True).values, b.max(-2, keepdim=True).values
            s1, s2 = torch.exp(a - b1).clamp_min(1e-10), torch.exp(b - b2).clamp_min(1e-10)
            r = b1 + b2 + torch.log(s1 @ s2)
            M = torch.cat([r, M[:, :, 2 * P:]], 2) if M.shape[2] % 2 else r
        f = M[:, :, 0] + x[:, :, -1, None, :]
        return torch.logsumexp(torch.log(p0) + torch.logsumexp(f, -1), -1)

    return [x, bulk, p0], dout, {"pytorch-naive": tree, "pytorch-best": forward_algorithm}


def measure(torch, inputs, dout, fn, repeat):
    fwd, bwd, saved_bytes, out_bytes = [], [], 0, 0
    for r in range(repeat + 1):
        for p in inputs:
            p.grad = None
        sb = SavedBytes(torch)
        t0 = time.perf_counter()
        with sb.hooks():
            out = fn()
        t1 = time.perf_counter()
        out.backward(dout)
        t2 = time.perf_counter()
        if r == 0:  # warm-up
            saved_bytes, out_bytes = sb.bytes, out.numel() * out.element_size()
            continue
        fwd.append((t1 - t0) * 1e3)
        bwd.append((t2 - t1) * 1e3)
    in_bytes = sum(p.numel() * p.element_size() for p in inputs)
    return statistics.median(fwd), statistics.median(bwd), saved_bytes + out_bytes + in_bytes


def run_c_lesson(binary, size, repeat):
    """Median forward+backward ms of the C lesson's cpu implementation over repeat runs (its own CSV rows)."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "c.csv")
        for _ in range(repeat):
            out = subprocess.run([binary, "--size", size, "--impl", "cpu", "--csv", path], capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit(f"{binary} failed:\n{out.stdout}{out.stderr}")
        with open(path, newline="") as f:
            return statistics.median(float(r["forward_ms"]) + float(r["backward_ms"]) for r in csv.DictReader(f))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lesson", type=int, choices=sorted(SIZES), required=True)
    ap.add_argument("--size", default="small")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--csv")
    ap.add_argument("--compare", metavar="BINARY", help="the C lesson binary to time in the same run")
    a = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("pytorch_baseline: torch is not installed (apt-get install python3-torch, then run with /usr/bin/python3)")
        return 0
    if a.size not in SIZES[a.lesson]:
        sys.exit(f"pytorch_baseline: lesson {a.lesson} has no size {a.size} here ({', '.join(SIZES[a.lesson])})")
    threads = int(os.environ.get("OPENBLAS_NUM_THREADS", os.cpu_count()))
    torch.set_num_threads(threads)
    torch.manual_seed(1234)
    d = SIZES[a.lesson][a.size]
    inputs, dout, forms = (lesson1_forms if a.lesson == 1 else lesson2_forms)(torch, d)
    rows = []
    for impl, fn in forms.items():
        f, b, mem = measure(torch, inputs, dout, fn, a.repeat)
        rows.append((impl, f, b, mem))
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, BLAS: {blas_in_use()}")
    print(f"lesson {a.lesson} size {a.size}: " + ",".join(f"{k}={v}" for k, v in d.items()))
    print(f"{'impl':14} {'saved+io bytes':>16} {'forward ms':>11} {'backward ms':>12}   (median of {a.repeat})")
    for impl, f, b, mem in rows:
        print(f"{impl:14} {mem:16,d} {f:11.2f} {b:12.2f}")
    if a.compare:
        c_ms = run_c_lesson(a.compare, a.size, a.repeat)
        best = next(f + b for impl, f, b, _ in rows if impl == "pytorch-best")
        print(f"C cpu forward+backward {c_ms:.2f} ms (median of {a.repeat} runs) vs pytorch-best {best:.2f} ms: "
              f"ratio C/torch {c_ms / best:.2f}")
    if a.csv:
        new = not os.path.exists(a.csv) or os.path.getsize(a.csv) == 0
        with open(a.csv, "a", newline="") as f:
            w = csv.writer(f)
            if new:
                w.writerow(CSV_HEADER)
            dims = ",".join(f"{k}={v}" for k, v in d.items())
            for impl, fw, bw, mem in rows:
                w.writerow([a.lesson, impl, a.size, dims, mem, mem, "", f"{fw:.4f}", f"{bw:.4f}", "", "cpu saved+io"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
