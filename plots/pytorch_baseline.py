"""The seeds' own PyTorch formulations, measured on the same sizes as the C lessons.

    python3 plots/pytorch_baseline.py --lesson 1 --size forum [--csv docs/results/cpu/pytorch.csv] [--compare build/lesson1]
    python3 plots/pytorch_baseline.py --lesson 3 --sweeps plots/sweeps.txt --csv docs/results/cpu/lesson3.csv \
        --runs docs/results/cpu/lesson3_runs.csv --device "AMD EPYC"      (what `make bench` runs)
    python3 plots/pytorch_baseline.py --lesson 0 --check-naive       (every lesson's C naive against PyTorch's peak)

The formulations, one per seed: 1 matmul (naive) vs einsum (best); 2 the pairwise log-space tree vs the forward
algorithm; 3 einsum('ijk,mnk->ijmn').max(-1).values.sum(1) vs the same per chunk of i under checkpoint (the
thread's chunk+checkpoint answer); 4 the seed's Python-loop cell with its sampled latent vs the same loop with the
input projection hoisted into one GEMM and checkpointed segments of sqrt(T) steps; 5 the seed's chunked linear
cross-entropy (grad_weight += mm(g.t(), x_chunk).float()) vs grad_weight.addmm_ of the chunk's operands in fp32.
With --sweeps it runs every point of the lesson's sweeps (plots/sweeps.txt) where the C naive / cpu run, and
appends rows to the lesson's CSV (--csv) and every timed run to --runs (the spread).

For each lesson it runs the forum's formulation (impl=pytorch-naive) and the fixed one (impl=pytorch-best),
forward and backward, and reports:
  - time: the median of --repeat runs after one warm-up run (a first run that touches fresh memory is not a sample);
  - memory: the true peak of forward + backward, every tensor counted (inputs, upstream gradient, temporaries,
    outputs, gradients; plots/torch_peak): on a GPU torch.cuda.max_memory_allocated after
    reset_peak_memory_stats; on the CPU build/libpeak_alloc.so, preloaded into this process (the script re-runs
    itself with LD_PRELOAD), counts the bytes of every block c10's CPU allocator hands out.
With --size, lesson 5 also runs pytorch-fp32: F.cross_entropy(x @ W.T) in plain float32 autograd (x and W held in
float32), what a user writes without the seed's bf16 chunks.
With --compare BINARY it also runs the C lesson (same size, same thread count) in the same invocation and prints
the time ratio of the C 'cpu' implementation to each fixed formulation (pytorch-best, and lesson 5's pytorch-fp32),
so both sides are measured on one machine in one run.

It prints which BLAS torch runs on (Debian's python3-torch falls back to the reference BLAS unless OpenBLAS is
installed: 10x slower) and sets torch's thread count to the C code's (OPENBLAS_NUM_THREADS, else all cores).
With --check-naive it runs the forum's formulation at small and medium (lesson 1: forum) and compares its measured
peak with the C naive's predicted one (build/lessonN --predict): they agree within 2%, or the difference is
explained to the byte by named terms (EXPLAIN), or it exits 1.
Rows are appended to --csv in the lessons' CSV format. Without torch it says so and exits 0 (it is optional).
"""
import argparse
import csv
import os
import statistics
import subprocess
import sys
import time

from torch_peak import PeakMeter, ensure_preloaded

SIZES = {
    1: {"tiny": dict(B=3, G=2, K=4, N=5), "small": dict(B=512, G=8, K=64, N=64), "forum": dict(B=8192, G=8, K=64, N=64)},
    2: {"tiny": dict(n=2, t=1, v=5, c=3), "small": dict(n=10, t=1, v=6, c=40), "medium": dict(n=100, t=1, v=40, c=100)},
    3: {"tiny": dict(I=2, J=3, M=2, N=4, K=3), "small": dict(I=20, J=20, M=25, N=19, K=25),
        "medium": dict(I=32, J=256, M=32, N=256, K=128)},
    4: {"tiny": dict(T=3, Bt=2, X=3, H=4), "small": dict(T=64, Bt=16, X=32, H=64), "medium": dict(T=256, Bt=32, X=128, H=256)},
    5: {"tiny": dict(N=4, H=3, V=7), "small": dict(N=256, H=128, V=4096), "medium": dict(N=2048, H=256, V=32768)},
}
# The C lessons' forum sizes that only a GPU holds (the CPU run would be killed for memory): --size forum on a GPU
GPU_SIZES = {2: {"forum": dict(n=500, t=1, v=40, c=200)},
             3: {"forum": dict(I=300, J=2000, M=315, N=1990, K=256)},
             5: {"forum": dict(N=8192, H=4096, V=128256)}}
DIM_ORDER = {1: "B G K N", 2: "n t v c", 3: "I J M N K", 4: "T Bt X H", 5: "N H V"}
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


def lesson1_forms(torch, d):
    B, G, K, N = d["B"], d["G"], d["K"], d["N"]
    x = torch.randn(B, G * K, requires_grad=True)
    W = (torch.randn(G, K, N) / K ** 0.5).requires_grad_()
    dout = torch.randn(B, G, N)
    naive = lambda: torch.matmul(x.view(B, G, 1, K), W).view(B, G, N)  # the forum's broadcast matmul
    best = lambda: torch.einsum("bgk,gkn->bgn", x.view(B, G, K), W)  # the forum's einsum
    return [x, W], dout, {"pytorch-naive": naive, "pytorch-best": best}


def logchain_forward(torch, x, bulk, p0):
    """lesson 2's fix: the alpha recursion, (n,c).(c,c) per step (plots/anchors.py compiles it and checks it)"""
    alpha = torch.log(p0) + x[:, :, 0]
    for i in range(x.shape[2] - 1):
        m = alpha.max(-1, keepdim=True).values
        alpha = x[:, :, i + 1] + m + torch.log(torch.einsum("ntj,tjk->ntk", torch.exp(alpha - m), bulk[0, :, i]))
    return torch.logsumexp(alpha, -1)


def lesson2_forms(torch, d):
    n, t, v, c = d["n"], d["t"], d["v"], d["c"]
    x = (torch.randn(n, t, v, c) - 2).requires_grad_()
    bulk = torch.empty(1, t, v - 1, c, c).uniform_(1e-3, 1).requires_grad_()
    p0 = torch.empty(1, t, c).uniform_(1e-3, 1).requires_grad_()
    dout = torch.randn(n, t)
    forward_algorithm = lambda: logchain_forward(torch, x, bulk, p0)

    def level(M):  # one level of the forum's mulstack; a function, as in the thread, so its locals die on return
        P = M.shape[2] // 2
        a, b = M[:, :, 0:2 * P:2], M[:, :, 1:2 * P:2]
        b1, b2 = a.max(-1, keepdim=True).values, b.max(-2, keepdim=True).values
        s1, s2 = torch.exp(a - b1).clamp_min(1e-10), torch.exp(b - b2).clamp_min(1e-10)
        r = b1 + b2 + torch.log(s1 @ s2)
        return torch.cat([r, M[:, :, 2 * P:]], 2) if M.shape[2] % 2 else r

    def tree():  # the forum's pairwise tree of log-space (c,c) products (odd levels carried up)
        M = x[:, :, :-1, :, None] + torch.log(bulk)  # (n,t,v-1,c,c)
        while M.shape[2] > 1:
            M = level(M)
        f = M[:, :, 0] + x[:, :, -1, None, :]
        return torch.logsumexp(torch.log(p0) + torch.logsumexp(f, -1), -1)

    return [x, bulk, p0], dout, {"pytorch-naive": tree, "pytorch-best": forward_algorithm}


def lesson3_forms(torch, d):
    I, J, M, N, K = d["I"], d["J"], d["M"], d["N"], d["K"]
    a = torch.randn(I, J, K, requires_grad=True)
    b = torch.randn(M, N, K, requires_grad=True)
    dout = torch.randn(I, M)
    from torch.utils.checkpoint import checkpoint
    naive = lambda: torch.einsum("ijk,mnk->ijmn", a, b).max(-1).values.sum(1)  # the forum's line
    maxsim = lambda ac, bc: torch.einsum("ijk,mnk->ijmn", ac, bc).max(-1).values.sum(1)

    def chunked():  # the thread's answer: a chunk of i at a time, recomputed in backward
        step = max(1, I // 8)
        return torch.cat([checkpoint(maxsim, a[i:i + step], b, use_reentrant=False) for i in range(0, I, step)])

    return [a, b], dout, {"pytorch-naive": naive, "pytorch-best": chunked}


def gru_inputs(torch, d):
    """lesson 4's inputs: x, eps (T, Bt, X|H), then the leaves h0, W_enc, W_ih, W_zh, and dout (T, Bt, H)"""
    T, Bt, X, H = d["T"], d["Bt"], d["X"], d["H"]
    x, eps = torch.randn(T, Bt, X), torch.randn(T, Bt, H)
    h0 = (torch.randn(Bt, H) * 0.5).requires_grad_()
    W_enc = (torch.randn(H, 2 * H) / H ** 0.5 / 2).requires_grad_()
    W_ih = (torch.randn(X, 3 * H) / X ** 0.5).requires_grad_()
    W_zh = (torch.randn(H, 3 * H) / H ** 0.5).requires_grad_()
    return x, eps, [h0, W_enc, W_ih, W_zh], torch.randn(T, Bt, H)


def gru_cell(torch, hidden, x_results, e, W_enc, W_zh):
    """the seed's step: sampled latent, then a GRU-like update"""
    mean_, z = torch.mm(hidden, W_enc).chunk(2, 1)
    z = mean_ + e * torch.exp(0.5 * z)
    z_results = torch.mm(z, W_zh)
    r, u, n = x_results.chunk(3, 1)
    z_r, z_z, z_n = z_results.chunk(3, 1)
    u = torch.sigmoid(u + z_z)
    n = torch.tanh(n + torch.sigmoid(r + z_r) * z_n)
    return n + torch.mul(u, hidden - n)


def gru_seed_loop(torch, x, eps, h0, W_enc, W_ih, W_zh, cell=None):
    """torch.mm(x, W_ih) inside the loop, every step's tensors kept by autograd; cell: the step (a compiled one)"""
    cell = cell or (lambda *a: gru_cell(torch, *a))
    hidden, outputs = h0, []
    for i in range(x.shape[0]):
        hidden = cell(hidden, torch.mm(x[i], W_ih), eps[i], W_enc, W_zh)
        outputs.append(hidden)
    return torch.stack(outputs)


def lesson4_forms(torch, d):
    T, Bt, X, H = d["T"], d["Bt"], d["X"], d["H"]
    x, eps, (h0, W_enc, W_ih, W_zh), dout = gru_inputs(torch, d)
    from torch.utils.checkpoint import checkpoint
    cell = lambda hidden, x_results, e: gru_cell(torch, hidden, x_results, e, W_enc, W_zh)
    seed_loop = lambda: gru_seed_loop(torch, x, eps, h0, W_enc, W_ih, W_zh)

    def segment(hidden, xr, e):
        outs = []
        for i in range(xr.shape[0]):
            hidden = cell(hidden, xr[i], e[i])
            outs.append(hidden)
        return torch.stack(outs)

    def hoisted_checkpointed():  # one input GEMM for all steps; segments of sqrt(T) steps recomputed in backward
        xr = torch.mm(x.reshape(T * Bt, X), W_ih).view(T, Bt, 3 * H)
        k, hidden, outs = max(1, round(T ** 0.5)), h0, []
        for xs, es in zip(xr.split(k), eps.split(k)):  # split: backward joins the segments' gradients once, where
            seg = checkpoint(segment, hidden, xs, es, use_reentrant=False)  # xr[s0:s0+k] makes a zero xr per segment
            outs.append(seg)
            hidden = seg[-1]
        return torch.cat(outs)

    def checkpointed():  # lesson-4.md §6's fix: the seed's loop in segments of sqrt(T) steps, x W_ih inside them
        k, hidden, outs = max(1, round(T ** 0.5)), h0, []
        for xs, es in zip(x.split(k), eps.split(k)):
            seg = checkpoint(lambda hd, xa, ea: gru_seed_loop(torch, xa, ea, hd, W_enc, W_ih, W_zh), hidden, xs, es,
                             use_reentrant=False)
            outs.append(seg)
            hidden = seg[-1]
        return torch.cat(outs)

    def offloaded():  # the thread's answer: every saved tensor moved to host memory (pinned), back for backward
        with torch.autograd.graph.save_on_cpu(pin_memory=True):
            return seed_loop()

    forms = {"pytorch-naive": seed_loop, "pytorch-best": hoisted_checkpointed}
    if torch.cuda.is_available():  # the next GPU report's rows; on the CPU offloading moves nothing anywhere
        forms.update({"pytorch-ckpt": checkpointed, "pytorch-offload": offloaded})
    return [h0, W_enc, W_ih, W_zh], dout, forms


class Manual:
    """Lesson 5's seed computes its gradients inside forward (no autograd graph): forward returns them, and
    backward scales them by the upstream dloss, as the seed's autograd.Function does."""

    def __init__(self, fwd, outs):
        self.fwd, self.outs = fwd, outs


def lesson5_forms(torch, d):
    N, H, V = d["N"], d["H"], d["V"]
    x = torch.randn(N, H).to(torch.bfloat16)
    W = (torch.randn(V, H) / H ** 0.5).to(torch.bfloat16)
    target = torch.randint(0, V, (N,), device=x.device)
    inc = -(-V // H)
    chunk = 1 << max(0, (-(-N // inc) - 1).bit_length())  # the seed's next_power_of_2(ceil(N / ceil(V / H)))

    def loop(accumulate):
        grad_weight = torch.zeros(V, H, dtype=torch.float32)
        grad_input = torch.empty(N, H, dtype=torch.bfloat16)
        loss = torch.zeros((), dtype=torch.float32)
        for s0 in range(0, N, chunk):
            xc, tc = x[s0:s0 + chunk], target[s0:s0 + chunk]
            logits = (xc @ W.t()).float()
            p = torch.softmax(logits, -1)
            loss += -(torch.log(p.gather(1, tc[:, None]))).sum()
            p[torch.arange(p.shape[0], device=p.device), tc] -= 1
            g = (p / N).to(torch.bfloat16)
            grad_input[s0:s0 + chunk] = g @ W
            accumulate(grad_weight, g, xc)
        return loss / N, grad_input, grad_weight

    def seed(gw, g, xc):
        gw += torch.mm(g.t(), xc).float()  # bf16 [V,H] product and its fp32 copy, both alive

    def addmm(gw, g, xc):
        gw.addmm_(g.t().float(), xc.float())  # into the fp32 gradient; fp32 copies of the chunk's operands only

    return [x, W], torch.ones((), device=x.device), {"pytorch-naive": Manual(lambda: loop(seed), 3),
                                    "pytorch-best": Manual(lambda: loop(addmm), 3)}


def lesson5_fp32_forms(torch, d):
    """The same loss as plain float32 autograd, x and W held in float32: what a PyTorch user writes without the
    seed's bf16 chunking (F.cross_entropy(x @ W.T)). Its own inputs (twice the bf16 bytes), so it is a point of
    its own: the float32 copies never count in the other forms' peaks."""
    N, H, V = d["N"], d["H"], d["V"]
    x = torch.randn(N, H).to(torch.bfloat16).float().requires_grad_()
    W = (torch.randn(V, H) / H ** 0.5).to(torch.bfloat16).float().requires_grad_()
    target = torch.randint(0, V, (N,), device=x.device)
    return [x, W], torch.ones((), device=x.device), {
        "pytorch-fp32": lambda: torch.nn.functional.cross_entropy(x @ W.t(), target)}


def measure(torch, meter, inputs, dout, fn, repeat):
    """Forward + backward repeat + 1 times (the first a warm-up); every run's peak (PeakMeter: all tensors live
    from the forward's start to the backward's end, inputs and the upstream gradient included) must be the same."""
    fwd, bwd, peaks, lives = [], [], [], []
    for r in range(repeat + 1):
        for p in inputs:
            p.grad = None  # the gradients are this run's allocations, as in the C lessons
        meter.reset()
        t0 = time.perf_counter()
        out = fn.fwd() if isinstance(fn, Manual) else fn()
        meter.sync()  # a GPU runs the launches after the call returns: the clock stops when they are done
        t1 = time.perf_counter()
        lives.append(meter.live())  # forward_live_bytes: every tensor live now, the inputs and dout included
        if isinstance(fn, Manual):  # forward computed the gradients: backward scales them by dout
            grads = [o * dout for o in out[1:]]
        else:
            out.backward(dout)
        meter.sync()
        t2 = time.perf_counter()
        peaks.append(meter.peak())
        out = grads = None
        if r == 0:  # warm-up
            continue
        fwd.append((t1 - t0) * 1e3)
        bwd.append((t2 - t1) * 1e3)
    return fwd, bwd, max(peaks), max(lives)


def print_matmul_rates(torch, d):
    """Lesson 5's forms differ in what their GEMMs run on: float32 matmuls go to the BLAS (OpenBLAS here), bf16 ones
    to oneDNN, which uses the CPU's bf16 dot-product instructions (avx512_bf16) where it has them, as the C cpu
    does (its header's "bf16 products:" line says which path it took). Both rates, on the lesson's logits product."""
    x, w = torch.randn(d["N"], d["H"]), torch.randn(d["H"], d["V"])
    rates = []
    for dt in (torch.float32, torch.bfloat16):
        a, b = x.to(dt), w.to(dt)
        a @ b
        t0 = time.perf_counter()
        for _ in range(3):
            a @ b
        rates.append(2 * d["N"] * d["H"] * d["V"] * 3 / (time.perf_counter() - t0) / 1e9)
    flags = open("/proc/cpuinfo").read()
    print(f"torch matmul [N,H]x[H,V] on {torch.get_num_threads()} thread(s): float32 {rates[0]:.0f} GFLOP/s (the BLAS), "
          f"bf16 {rates[1]:.0f} GFLOP/s (oneDNN; CPU avx512_bf16: {'yes' if 'avx512_bf16' in flags else 'no'}). "
          f"pytorch-best runs bf16 matmuls; pytorch-fp32 float32 ones")


def run_c_lesson(binary, size, repeat, threads):
    """Median forward+backward ms of the C lesson's cpu implementation over repeat runs (its own CSV rows), on
    torch's thread count (OPENBLAS_NUM_THREADS)."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "c.csv")
        for _ in range(repeat):
            out = subprocess.run([binary, "--size", size, "--impl", "cpu", "--csv", path], capture_output=True, text=True,
                                 env=dict(os.environ, OPENBLAS_NUM_THREADS=str(threads)))
            if out.returncode != 0:
                sys.exit(f"{binary} failed:\n{out.stdout}{out.stderr}")
        with open(path, newline="") as f:
            return statistics.median(float(r["forward_ms"]) + float(r["backward_ms"]) for r in csv.DictReader(f))


FORMS = {1: lesson1_forms, 2: lesson2_forms, 3: lesson3_forms, 4: lesson4_forms, 5: lesson5_forms}
# Formulations beyond the seed's two, each with its own inputs, run with --size only (not in the sweeps' CSVs):
# --compare prints the C cpu's ratio to each of them too.
EXTRA_FORMS = {5: lesson5_fp32_forms}


def form_builders(lesson):
    """The lesson's form builders, each drawing its own inputs: the seed's two forms, then the extra ones."""
    return [FORMS[lesson]] + ([EXTRA_FORMS[lesson]] if lesson in EXTRA_FORMS else [])


def form_names(torch, lesson):
    """Every formulation --size runs for the lesson."""
    return [name for build in form_builders(lesson) for name in build(torch, SIZES[lesson]["tiny"])[2]]


def sweep_points(path, lesson):
    """(sweep, dims, impls) for the points of the lesson's sweeps in plots/sweeps.txt (those in torch=, when the
    sweep lists some) where the C naive (for pytorch-naive) or cpu (for pytorch-best) runs. Sweeps over a lesson
    option or with a variant are the C code's own knobs and have no PyTorch counterpart here."""
    for line in open(path):
        line = line.split("#")[0].strip()
        f = dict(t.split("=", 1) for t in line.split()) if line else {}
        if f.get("lesson") != str(lesson) or "sweep" not in f or "variant" in f or f["axis"].startswith("--"):
            continue
        base = dict(kv.split("=") for kv in f["dims"].split(","))
        limits = {}
        for r in f["run"].split(","):
            impl, _, mx = r.partition("<=")
            limits[impl] = int(mx) if mx else None
        only = {int(v) for v in f["torch"].split(",")} if "torch" in f else None
        for v in f["values"].split(","):
            if only is not None and int(v) not in only:
                continue
            d = {k: int(x) for k, x in base.items()}
            d[f["axis"]] = int(v)
            runs = [t for t, c in (("pytorch-naive", "naive"), ("pytorch-best", "cpu"))
                    if c in limits and (limits[c] is None or int(v) <= limits[c])]
            yield f["sweep"], d, runs


def append_csv(path, header, rows):
    new = not os.path.exists(path) or os.path.getsize(path) == 0
    with open(path, "a", newline="") as f:
        w = csv.writer(f)
        if new:
            w.writerow(header)
        w.writerows(rows)


def run_point(torch, lesson, d, impls, repeat):
    """[(impl, forward ms list, backward ms list, peak bytes, bytes live after forward)] for one point. The meter
    starts before the inputs are drawn, so the peak counts them, the upstream gradient, every temporary, the
    outputs and the gradients: what the C tracker counts."""
    rows = []
    for build in form_builders(lesson):
        if not set(build(torch, SIZES[lesson]["tiny"])[2]) & set(impls):
            continue  # none of its forms asked for (the sweeps run the seed's two): draw no inputs at this size
        meter = PeakMeter(torch)
        torch.manual_seed(1234)
        try:
            inputs, dout, forms = build(torch, d)
        except torch.cuda.OutOfMemoryError as e:  # on a GPU only: a CPU run this large is killed, not told
            print(f"  {', '.join(impls)}: the inputs do not fit: {str(e).splitlines()[0]}")
            continue
        for impl in [i for i in impls if i in forms]:
            try:
                rows.append((impl, *measure(torch, meter, inputs, dout, forms[impl], repeat)))
            except torch.cuda.OutOfMemoryError as e:  # the forum's failure, reproduced: say so, write no row
                print(f"  {impl}: out of memory, as the forum reports: {str(e).splitlines()[0]}", flush=True)
                torch.cuda.empty_cache()
        inputs = dout = forms = None  # this builder's inputs die before the next one's are drawn
        torch.cuda.empty_cache() if torch.cuda.is_available() else None
    return rows


def run_anchors(torch, lesson, d, repeat):
    """plots/anchors.py's rows for the lesson: each validated against its float64 reference at a small size, then
    measured at d as run_point measures the seed's forms. Prints one line a row ("anchor NAME: ..."): skipped with
    the reason where it cannot run here, FAIL with the error or the validation's figures; returns the measured
    rows, run_point's shape."""
    import anchors
    rows = []
    for build in anchors.ANCHORS.get(lesson, []):
        name = anchors.ROW_NAMES[build]
        try:
            torch.manual_seed(4321)
            err, tol = anchors.validate(torch, build, anchors.VALIDATION_SIZE[lesson])
            if not err <= tol:
                print(f"anchor {name}: FAIL: max rel err {err:.2e} against float64 at "
                      f"{dims_text(lesson, anchors.VALIDATION_SIZE[lesson])}, above {tol:.1e}", flush=True)
                continue
            print(f"anchor {name}: valid: max rel err {err:.2e} against float64 at "
                  f"{dims_text(lesson, anchors.VALIDATION_SIZE[lesson])} (tolerance {tol:.1e})", flush=True)
            meter = PeakMeter(torch)
            torch.manual_seed(1234)
            inputs, dout, forms, _ = build(torch, d)
            rows.append((name, *measure(torch, meter, inputs, dout, forms[name], repeat)))
        except anchors.Unavailable as e:
            print(f"anchor {name}: skipped: {e}", flush=True)
        except torch.cuda.OutOfMemoryError as e:
            print(f"anchor {name}: out of memory: {str(e).splitlines()[0]}", flush=True)
        except Exception as e:  # the anchor's own failure: reported, and the other rows go on
            print(f"anchor {name}: FAIL: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", flush=True)
        inputs = dout = forms = None
        torch.cuda.empty_cache() if torch.cuda.is_available() else None
    return rows


def dims_text(lesson, d):
    return ",".join(f"{n}={d[n]}" for n in DIM_ORDER[lesson].split())


NAIVE_CHECK_SIZES = {1: ("small", "forum"), 2: ("small", "medium"), 3: ("small", "medium"), 4: ("small", "medium"),
                     5: ("small", "medium")}  # lesson 1 has no medium: forum is its next size up
NAIVE_TOLERANCE = 0.02  # issue 17: the C naive's formula and PyTorch's allocator agree within 2%


def c_naive_peak(lesson, size):
    """The C naive's peak from its memory formula (build/lessonN --predict; the formula == tracker is tested)."""
    import tempfile
    binary = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", f"lesson{lesson}")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "p.csv")
        out = subprocess.run([binary, "--size", size, "--impl", "naive", "--predict", "--csv", path],
                             capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"{binary} --predict failed:\n{out.stdout}{out.stderr}")
        with open(path, newline="") as f:
            return int(next(csv.DictReader(f))["peak_bytes"])


def c_label_bytes(lesson, size, label):
    """Bytes of the C naive's first allocation labelled `label` (from its --timeline), for the explanations."""
    import tempfile
    binary = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", f"lesson{lesson}")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "t.csv")
        subprocess.run([binary, "--size", size, "--impl", "naive", "--timeline", path], capture_output=True, check=True)
        with open(path, newline="") as f:
            return next(int(r["bytes"]) for r in csv.DictReader(f) if r["event"] == "alloc" and r["label"] == label)


def dout_bytes(lesson, d):
    """The upstream gradient: PyTorch's measurement makes it before forward, the C naive at backward's start."""
    return 4 * (d["n"] * d["t"] if lesson == 2 else d["I"] * d["M"])


def explain_lesson5(size, d):
    """Where PyTorch's formulation of the seed and the C naive differ at the peak (inside the last chunk's
    grad_weight += mm(g.t(), x_chunk).float()), byte by byte."""
    N, V, c = d["N"], d["V"], 1 << max(0, (-(-d["N"] // -(-d["V"] // d["H"])) - 1).bit_length())
    return [(4 * N, "target int64 (torch.randint) where the C input is int32"),
            (4 * c * V, "logits.float(): f32 [c, V] (the seed's Triton kernel reads the bf16 logits in place)"),
            (4 * c * V, "softmax p: f32 [c, V] (in the kernel's registers)"),
            (-4 * N, "the C naive's per-row losses loss_1d [N] f32 (PyTorch sums into a scalar)"),
            (-c_label_bytes(5, size, "CPU GEMM f32 scratch (chunk-sized)"),
             "the C naive's CPU GEMM f32 scratch (PyTorch's bf16 GEMM holds no such buffer at this point)"),
            (8, "the loss scalar and dloss, which PyTorch's measurement makes before the loop (C: after it)")]


EXPLAIN = {  # lesson -> fn(size, dims): [(bytes PyTorch has beyond the C naive at the peak, why)]
    2: lambda size, d: [(dout_bytes(2, d), "dout: made before forward here, at backward's start in C; the peak is "
                                           "in forward")],
    3: lambda size, d: [(dout_bytes(3, d), "dout: made before forward here, at backward's start in C (at small the "
                                           "peak is in forward; at medium in backward, where both hold it)")],
    5: explain_lesson5,
}


def check_naive(torch, lessons):
    """PyTorch's measured peak for the forum's formulation against the C naive's predicted peak, every lesson at
    small and medium: agreement within NAIVE_TOLERANCE, or the difference explained to the byte (EXPLAIN: the
    named terms must add up to it exactly). 1 (FAIL) when neither holds."""
    failed = 0
    print(f"{'lesson':6} {'size':6} {'C naive (formula)':>18} {'PyTorch naive (measured)':>25} {'difference':>12}")
    for lesson in lessons:
        for size in NAIVE_CHECK_SIZES[lesson]:
            c = c_naive_peak(lesson, size)
            (_, _, _, t, _), = run_point(torch, lesson, SIZES[lesson][size], ["pytorch-naive"], 0)
            rel = (t - c) / c
            terms = EXPLAIN[lesson](size, SIZES[lesson][size]) if lesson in EXPLAIN else []
            explained = bool(terms) and sum(b for b, _ in terms) == t - c
            ok = abs(rel) <= NAIVE_TOLERANCE or explained
            failed += not ok
            print(f"{lesson:6} {size:6} {c:18,d} {t:25,d} {t - c:+12,d} ({100 * rel:+.2f}%)"
                  f"{'  explained to the byte:' if explained else ''}{'' if ok else '  FAIL'}", flush=True)
            for b, why in terms if explained else []:
                print(f"{'':14} {b:+14,d}  {why}")
    print("check-naive: " + ("FAILED" if failed else f"every naive within {100 * NAIVE_TOLERANCE:g}% of PyTorch's "
                             "peak or explained to the byte"))
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lesson", type=int, choices=[0] + sorted(SIZES), required=True)
    ap.add_argument("--size", default="small")
    ap.add_argument("--sweeps", help="plots/sweeps.txt: run every point of the lesson's sweeps instead of --size")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--csv")
    ap.add_argument("--runs", help="append every timed run here (lesson,impl,size,dims,run,forward_ms,backward_ms,device)")
    ap.add_argument("--device", default="cpu", help="the device column's name for this machine (the CPU model)")
    ap.add_argument("--threads", type=int, help="torch threads (default: OPENBLAS_NUM_THREADS, else all cores)")
    ap.add_argument("--compare", metavar="BINARY", help="the C lesson binary to time in the same run")
    ap.add_argument("--anchors", action="store_true",
                    help="with --size: also plots/anchors.py's rows (Liger-Kernel, Cut Cross-Entropy, flash-maxsim, "
                         "nn.GRU, torch.compile), each validated against float64 first")
    ap.add_argument("--only-anchors", action="store_true", help="--anchors without the seed's own forms")
    ap.add_argument("--check-naive", action="store_true",
                    help="the C naive's predicted peak against PyTorch's measured peak, at small and medium "
                         "(--lesson 0: every lesson); exit 1 when one differs by more than 2%%")
    a = ap.parse_args()
    a.anchors = a.anchors or a.only_anchors
    if a.anchors and (a.sweeps or a.lesson == 0):
        sys.exit("pytorch_baseline: --anchors runs with --lesson N --size S only")
    import importlib.util
    if importlib.util.find_spec("torch") is None:
        print("pytorch_baseline: torch is not installed (apt-get install python3-torch, then run with /usr/bin/python3)")
        return 0
    ensure_preloaded()  # before torch loads: re-runs this script with build/libpeak_alloc.so preloaded
    import torch
    if a.check_naive:
        return check_naive(torch, [a.lesson] if a.lesson else sorted(SIZES))
    if a.lesson == 0:
        sys.exit("pytorch_baseline: --lesson 0 (every lesson) is for --check-naive only")
    on_gpu = torch.cuda.is_available()
    if on_gpu:
        for lesson, sizes in GPU_SIZES.items():
            SIZES[lesson].update(sizes)
    if not a.sweeps and a.size not in SIZES[a.lesson]:
        gpu_only = a.size in GPU_SIZES.get(a.lesson, {})
        sys.exit(f"pytorch_baseline: lesson {a.lesson} has no size {a.size} here ({', '.join(SIZES[a.lesson])})"
                 + ("; it runs on a GPU only" if gpu_only else ""))
    threads = a.threads or int(os.environ.get("OPENBLAS_NUM_THREADS", os.cpu_count()))
    torch.set_num_threads(threads)
    if on_gpu:  # every tensor the forms make lands on the GPU; the peak is the caching allocator's
        if hasattr(torch, "set_default_device"):  # torch >= 2.0; set_default_tensor_type is deprecated there
            torch.set_default_device("cuda")
        else:
            torch.set_default_tensor_type(torch.cuda.FloatTensor)
        print(f"GPU: {torch.cuda.get_device_name()}; float32 matmuls in TF32: "
              f"{torch.backends.cuda.matmul.allow_tf32} (torch's default: full float32)")
    torch.mm(torch.randn(64, 64), torch.randn(64, 64))  # map the BLAS before asking which one it is
    blas = blas_in_use()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads (the C code's: {threads}), BLAS: {blas}")
    if not on_gpu and "openblas" not in blas.lower() and "mkl" not in blas.lower():
        print("pytorch_baseline: WARNING: torch is not on an optimized BLAS (install libopenblas0): its times "
              "are not comparable")
    device = torch.cuda.get_device_name() if on_gpu else a.device
    points = list(sweep_points(a.sweeps, a.lesson)) if a.sweeps else [("size", SIZES[a.lesson][a.size], form_names(torch, a.lesson))]
    size_col = "custom" if a.sweeps else a.size
    csv_rows, run_rows, all_rows = [], [], []
    t_start = time.perf_counter()
    for k, (sweep, d, impls) in enumerate(points):
        if a.only_anchors:
            impls = []
        if not impls and not a.anchors:
            continue
        dims = ",".join(f"{n}={d[n]}" for n in DIM_ORDER[a.lesson].split())
        t0 = time.perf_counter()
        rows = run_point(torch, a.lesson, d, impls, a.repeat) if impls else []
        if a.anchors:
            rows += run_anchors(torch, a.lesson, d, a.repeat)
        for impl, f, b, mem, live in rows:
            fm, bm = statistics.median(f), statistics.median(b)
            all_rows.append((impl, fm, bm, mem))
            csv_rows.append([a.lesson, impl, size_col, dims, mem, live, "", f"{fm:.4f}", f"{bm:.4f}", "", device])
            run_rows += [[a.lesson, impl, size_col, dims, r + 1, f"{x:.4f}", f"{y:.4f}", device]
                         for r, (x, y) in enumerate(zip(f, b))]
            print(f"  lesson {a.lesson} {sweep} {dims:28} {impl:14} peak "
                  f"{mem:>14,d} B  forward {fm:9.2f} ms  backward {bm:9.2f} ms  (median of {a.repeat}, "
                  f"point {time.perf_counter() - t0:.1f} s, elapsed {time.perf_counter() - t_start:.0f} s, "
                  f"{k + 1}/{len(points)})", flush=True)
    if a.compare and not a.sweeps and a.lesson == 5:
        print_matmul_rates(torch, SIZES[5][a.size])
    if a.compare and not a.sweeps:
        c_ms = run_c_lesson(a.compare, a.size, a.repeat, threads)
        for impl, f, b, _ in all_rows:
            if impl != "pytorch-naive":
                print(f"C cpu forward+backward {c_ms:.2f} ms (median of {a.repeat} runs) vs {impl} {f + b:.2f} ms: "
                      f"ratio C/torch {c_ms / (f + b):.2f}")
    if a.csv:
        append_csv(a.csv, CSV_HEADER, csv_rows)
    if a.runs:
        append_csv(a.runs, ["lesson", "impl", "size", "dims", "run", "forward_ms", "backward_ms", "device"], run_rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
