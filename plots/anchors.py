"""The anchors: what a learner would compare each lesson with, run and measured as plots/pytorch_baseline.py runs
the seeds' own forms (the median of repeated forward + backward after a warm-up; the peak of every tensor from the
inputs to the gradients, torch.cuda.max_memory_allocated after reset_peak_memory_stats on a GPU).

    python3 plots/pytorch_baseline.py --lesson 5 --size forum --anchors [--csv ...]

Each row is one function below, named in ANCHORS (the row names are a contract: tools read them):
  lesson 5  liger-flce      Liger-Kernel's LigerFusedLinearCrossEntropyLoss, bf16 (the code the seed is an issue on)
            cce             Cut Cross-Entropy's linear_cross_entropy, its defaults: reduction "mean" and
                            filter_eps="high" (gradient entries below bf16's resolution skipped, as the lesson's
                            --filter does)
            torch-compile   torch.compile of F.cross_entropy(x @ W.T), bf16 x and W
  lesson 3  flash-maxsim    flash-maxsim's flash_maxsim_batched_train (forward and backward; fp16 inside its kernels)
            pytorch-chunked the seed's own loop over i: one [J, M, N] block of scores at a time, kept by nothing
  lesson 4  cudnn-gru       nn.GRU on the same T, batch, X and H: PyTorch's fused GRU (cuDNN on a GPU), a different
                            cell (no sampled latent), the built-in reference the forum compares memory with
            torch-compile   the seed's cell compiled by torch.compile, the loop as the seed writes it
  lesson 2  torch-compile   the forward algorithm compiled by torch.compile

A builder returns (inputs, dout, {name: fn}, ref): the leaves whose gradients the run makes, the upstream gradient,
the row, and ref(leaves) computing the same function in float64 on the CPU from float64 copies of the leaves, which
validate() compares the row with first (forward output and every gradient, max |x - ref| <= tol * max |ref|).
A row that cannot run here raises Unavailable with the reason (no GPU for a Triton or cuDNN row, a torch without
torch.compile, a package that does not import); the caller prints it and goes on.
"""
import importlib

from pytorch_baseline import gru_cell, gru_inputs, gru_seed_loop, lesson2_forms, lesson3_forms, logchain_forward


class Unavailable(Exception):
    """The row cannot run on this machine: the message says why."""


def needs_gpu(torch, what):
    if not torch.cuda.is_available():
        raise Unavailable(f"GPU only ({what})")


def needs_compile(torch):
    if not hasattr(torch, "compile"):
        raise Unavailable(f"torch {torch.__version__} has no torch.compile (PyTorch 2.0 and later)")


def imported(module):
    try:
        return importlib.import_module(module)
    except Exception as e:  # an ImportError, or a package that fails while importing (no Triton, no GPU)
        raise Unavailable(f"import {module} failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")


# ---- lesson 5: the loss over V classes, mean over the N rows, from bf16 x (N, H) and W (V, H) ---------------------
def lce_inputs(torch, d):
    N, H, V = d["N"], d["H"], d["V"]
    x = torch.randn(N, H).to(torch.bfloat16).requires_grad_()
    W = (torch.randn(V, H) / H ** 0.5).to(torch.bfloat16).requires_grad_()
    target = torch.randint(0, V, (N,), device=x.device)
    ref = lambda leaves: torch.nn.functional.cross_entropy(leaves[0] @ leaves[1].t(), target.cpu())
    return [x, W], target, torch.ones((), device=x.device), ref


def liger_flce(torch, d):
    needs_gpu(torch, "Liger-Kernel's Triton kernels")
    loss = imported("liger_kernel.transformers").LigerFusedLinearCrossEntropyLoss()
    (x, W), target, dout, ref = lce_inputs(torch, d)
    return [x, W], dout, {"liger-flce": lambda: loss(W, x, target)}, ref


def cce(torch, d):
    needs_gpu(torch, "Cut Cross-Entropy's Triton kernels")
    lce = imported("cut_cross_entropy").linear_cross_entropy
    (x, W), target, dout, ref = lce_inputs(torch, d)
    return [x, W], dout, {"cce": lambda: lce(x, W, target)}, ref


def lce_compiled(torch, d):
    needs_compile(torch)
    (x, W), target, dout, ref = lce_inputs(torch, d)
    f = torch.compile(lambda: torch.nn.functional.cross_entropy(x @ W.t(), target))
    return [x, W], dout, {"torch-compile": f}, ref


# ---- lesson 3: out[i, m] = sum_j max_n <a[i, j], b[m, n]>, a (I, J, K), b (M, N, K) float32 ------------------------
def maxsim_ref(torch):
    return lambda leaves: torch.einsum("ijk,mnk->ijmn", leaves[0], leaves[1]).max(-1).values.sum(1)


def flash_maxsim(torch, d):
    needs_gpu(torch, "flash-maxsim's Triton kernels")
    train = imported("flash_maxsim").flash_maxsim_batched_train
    (a, b), dout, _ = lesson3_forms(torch, d)
    return [a, b], dout, {"flash-maxsim": lambda: train(a, b)}, maxsim_ref(torch)


def maxsim_loop(torch, d):
    (a, b), dout, _ = lesson3_forms(torch, d)

    def loop():  # the seed's loop: a [J, M, N] block for one i, its max taken at once; backward keeps the indices
        return torch.stack([torch.einsum("jk,mnk->jmn", a[i], b).max(-1).values.sum(0) for i in range(a.shape[0])])

    return [a, b], dout, {"pytorch-chunked": loop}, maxsim_ref(torch)


# ---- lesson 4: T steps over (Bt, X) inputs with a hidden state of H ----------------------------------------------
def gru_reference(torch, leaves, x, T):
    """nn.GRU's documented update (gates r, z, n in that order of its weights), written out in float64"""
    h, w_ih, w_hh, b_ih, b_hh = leaves
    h, outs = h[0], []
    for t in range(T):
        gi, gh = x[t] @ w_ih.t() + b_ih, h @ w_hh.t() + b_hh
        ir, iz, in_ = gi.chunk(3, 1)
        hr, hz, hn = gh.chunk(3, 1)
        r, z = torch.sigmoid(ir + hr), torch.sigmoid(iz + hz)
        n = torch.tanh(in_ + r * hn)
        h = (1 - z) * n + z * h
        outs.append(h)
    return torch.stack(outs)


def cudnn_gru(torch, d):
    needs_gpu(torch, "cuDNN's fused GRU")
    T, Bt, X, H = d["T"], d["Bt"], d["X"], d["H"]
    gru = torch.nn.GRU(X, H)
    x, dout = torch.randn(T, Bt, X), torch.randn(T, Bt, H)
    h0 = (torch.randn(1, Bt, H) * 0.5).requires_grad_()
    leaves = [h0, gru.weight_ih_l0, gru.weight_hh_l0, gru.bias_ih_l0, gru.bias_hh_l0]
    ref = lambda l64: gru_reference(torch, l64, x.double().cpu(), T)
    return leaves, dout, {"cudnn-gru": lambda: gru(x, h0)[0]}, ref


def gru_compiled(torch, d):
    needs_compile(torch)
    x, eps, leaves, dout = gru_inputs(torch, d)
    cell = torch.compile(lambda *a: gru_cell(torch, *a))
    loop = lambda: gru_seed_loop(torch, x, eps, *leaves, cell=cell)
    ref = lambda l64: gru_seed_loop(torch, x.double().cpu(), eps.double().cpu(), *l64)
    return leaves, dout, {"torch-compile": loop}, ref


# ---- lesson 2: the forward algorithm over v steps of c states ----------------------------------------------------
def logchain_compiled(torch, d):
    needs_compile(torch)
    leaves, dout, _ = lesson2_forms(torch, d)
    f = torch.compile(lambda: logchain_forward(torch, *leaves))
    return leaves, dout, {"torch-compile": f}, lambda l64: logchain_forward(torch, *l64)


ANCHORS = {
    5: [liger_flce, cce, lce_compiled],
    3: [flash_maxsim, maxsim_loop],
    4: [cudnn_gru, gru_compiled],
    2: [logchain_compiled],
}
ROW_NAMES = {liger_flce: "liger-flce", cce: "cce", lce_compiled: "torch-compile", flash_maxsim: "flash-maxsim",
             maxsim_loop: "pytorch-chunked", cudnn_gru: "cudnn-gru", gru_compiled: "torch-compile",
             logchain_compiled: "torch-compile"}

# validate()'s tolerances, relative to max |ref| of each tensor: bf16 operands (lesson 5; flash-maxsim's fp16
# tiles) hold 8 (11) significant bits, so a product rounded once errs by u = 2^-8 (2^-11) of its size and sums in
# float32 add little: 4u leaves room for the loss's and the gradients' second rounding (the lesson's own bound for
# its CUDA versions is 2u). float32 rows (lessons 2 to 4): the float32 sums of a few hundred terms err near 1e-6;
# 1e-4 is the lessons' own bound. A row whose argmax differs from float64's (lesson 3) moves a whole gradient term:
# the inputs are drawn at random, so at the validation's small size two scores within fp16's resolution of each
# other are rare, and such a flip shows as an error of order 1, which fails.
TOLERANCE = {liger_flce: 2 ** -6, cce: 2 ** -6, lce_compiled: 2 ** -6, flash_maxsim: 2 ** -9}
FLOAT32_TOLERANCE = 1e-4
VALIDATION_SIZE = {5: dict(N=256, H=128, V=4096), 3: dict(I=8, J=16, M=8, N=32, K=64),
                   4: dict(T=16, Bt=8, X=32, H=64), 2: dict(n=10, t=1, v=6, c=40)}


def validate(torch, build, d, tol=None):
    """(worst relative error over the output and every gradient, the tolerance) of the row built at size d against
    its float64 reference on the CPU"""
    leaves, dout, forms, ref = build(torch, d)
    (fn,) = forms.values()
    out = fn()
    out.backward(dout)
    l64 = [p.detach().double().cpu().requires_grad_() for p in leaves]
    r = ref(l64)
    r.backward(dout.double().cpu())
    worst = 0.0
    for got, want in [(out, r)] + [(p.grad, q.grad) for p, q in zip(leaves, l64)]:
        got, want = got.detach().double().cpu(), want.detach()
        if not torch.isfinite(got).all():
            return float("inf"), tol
        scale = want.abs().max().item() or 1.0
        worst = max(worst, (got - want).abs().max().item() / scale)
    return worst, tol if tol is not None else TOLERANCE.get(build, FLOAT32_TOLERANCE)
