"""Runs the PyTorch fixes the lesson docs print: their values against autograd in float64, and their memory
against the bound each doc states, measured with the CPU allocator's own bytes.

    /usr/bin/python3 docs/tools/check_doc_snippets.py [--paste]   # needs torch (Debian: apt-get install python3-torch)

Lesson 2's forward-algorithm loop, lesson 3's MaxSim autograd.Function, lesson 4's forms of the forum's loop
(checkpointed, hoisted, both) with its peak measurement and its saved-storage hook, and lesson 5's
accumulate_grad_weight are taken from docs/lesson-N.md (the python code blocks) exactly as a reader would paste them.

Values: on small random float64 inputs, outputs and gradients must match the straightforward formulation to
float64 rounding (1e-12: the same sums in another order), and lesson 2 passes torch.autograd.gradcheck.

Memory (plots/torch_peak: build/libpeak_alloc.so preloaded, every tensor allocation counted, temporaries
included; the script re-runs itself with it): each fix's measured peak must not exceed the bound its doc states,
at a size where the forum formulation, measured the same way, peaks at ten times that bound or more. Lesson 4's
block measures its forms itself (as pasted, its own PeakMeter): checkpointing must lower the forum loop's peak by
half or more, hoisting alone must raise it, both together must stay below it (what the doc says of each), and the
hook must count at least the 10H floats a step the C naive keeps, less than the loop's peak, and exactly the
doc's sum (10H a step and row, x, eps, W_enc, W_zh, one float64 scalar a step). --paste writes each lesson's measured lines into its doc between
<!-- check_doc_snippets: lessonN --> and <!-- /check_doc_snippets -->. Exits 1 on the first failure.
"""
import argparse
import gc
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "plots"))  # plots/torch_peak: the allocator counter pytorch_baseline.py uses too
from torch_peak import PeakMeter, ensure_preloaded  # noqa: E402

F32 = 4
REPORT = {}  # lesson -> the lines --paste writes into its doc


def block(lesson, k):
    """The k-th ```python block (1-based) of docs/lesson-<lesson>.md."""
    text = open(os.path.join(ROOT, "docs", f"lesson-{lesson}.md")).read()
    return re.findall(r"```python\n(.*?)```", text, re.S)[k - 1]


def snippet(lesson, k, stop=None):
    """The names the doc's block defines (the block up to `stop`, when given), run in a fresh namespace."""
    code = block(lesson, k)
    ns = {"torch": torch}
    exec(code.split(stop)[0] if stop else code, ns)
    return ns


def check(name, err, tol=1e-12):
    print(f"{name}: max |difference| {err:.3g}")
    if not err <= tol:
        sys.exit(f"{name}: the doc's snippet disagrees with autograd (tolerance {tol})")


def report(lesson, line):
    print(f"lesson {lesson}: {line}")
    REPORT.setdefault(lesson, []).append(line)


def check_bound(lesson, what, peak, bound, forum=None, need_ratio=10):
    """FAIL when the measured peak exceeds the doc's bound, or when the forum's peak is not need_ratio x it."""
    report(lesson, f"{what}: measured peak {peak:,} bytes <= stated bound {bound:,}"
                   + ("" if peak <= bound else "  FAIL"))
    if forum is not None:
        report(lesson, f"the forum's formulation, same size, same counter: {forum:,} bytes "
                       f"({forum / bound:.1f}x the bound)")
    if peak > bound:
        sys.exit(f"lesson {lesson}: {what} peaks at {peak:,} bytes, above the {bound:,} its doc states")
    if forum is not None and need_ratio and forum < need_ratio * bound:
        sys.exit(f"lesson {lesson}: the check's size is too small: the forum peaks at {forum / bound:.1f}x the "
                 f"bound, not {need_ratio}x")


def measured(meter, fn):
    """(peak bytes while fn() runs, bytes live when it started), garbage collected first. The meter counts the
    tensors made since it was created: each memory check makes its own before its inputs."""
    gc.collect()
    meter.reset()
    before = meter.live()
    fn()
    return meter.peak(), before


# ---- values ---------------------------------------------------------------------------------------------

def lesson2_values():
    forward_algorithm = snippet(2, 2)["forward_algorithm"]
    n, t, v, c = 3, 2, 5, 4
    x = (torch.randn(n, t, v, c, dtype=torch.double) - 2).requires_grad_()
    bulk = torch.rand(1, t, v - 1, c, c, dtype=torch.double).clamp_min(1e-3).requires_grad_()
    p0 = torch.rand(1, t, c, dtype=torch.double).clamp_min(1e-3).requires_grad_()

    def brute(x, bulk, p0):
        a = p0.log() + x[..., 0, :]
        for i in range(v - 1):
            a = torch.logsumexp(a[..., :, None] + bulk[0, :, i].log() + x[..., i + 1, None, :], -2)
        return torch.logsumexp(a, -1)
    check("lesson 2 log Z", (forward_algorithm(x, bulk, p0) - brute(x, bulk, p0)).abs().max().item())
    if not torch.autograd.gradcheck(forward_algorithm, (x, bulk, p0)):
        sys.exit("lesson 2: gradcheck failed")
    print("lesson 2 gradients: torch.autograd.gradcheck passed")


def lesson3_values():
    MaxSim = snippet(3, 1, "a, b = torch.randn")["MaxSim"]
    a = torch.randn(5, 3, 4, dtype=torch.double, requires_grad=True)
    b = torch.randn(3, 5, 4, dtype=torch.double, requires_grad=True)
    for chunks in ((8, 8), (2, 2)):  # one chunk, and chunks that do not divide I = 5 or M = 3
        ref = torch.einsum("ijk,mnk->ijmn", a, b).max(-1).values.sum(1)
        check(f"lesson 3 out, chunks {chunks}", (MaxSim.apply(a, b, *chunks) - ref).abs().max().item())
        dout = torch.randn(5, 3, dtype=torch.double)
        g1 = torch.autograd.grad((MaxSim.apply(a, b, *chunks) * dout).sum(), (a, b))
        g2 = torch.autograd.grad((ref * dout).sum(), (a, b))
        check(f"lesson 3 da, db, chunks {chunks}", max((p - q).abs().max().item() for p, q in zip(g1, g2)))


def gru_eager(x, h, eps, We, Wi, Wz):
    """The forum's cell, step by step (lesson 4's reference)."""
    H, outs = h.shape[1], []
    for t in range(x.shape[0]):
        pd = h @ We
        z = pd[:, :H] + eps[t] * torch.exp(pd[:, H:] / 2)
        xr, xu, xn = (x[t] @ Wi).chunk(3, 1)
        zr, zu, zn = (z @ Wz).chunk(3, 1)
        u = torch.sigmoid(xu + zu)
        nn = torch.tanh(xn + torch.sigmoid(xr + zr) * zn)
        h = nn + u * (h - nn)
        outs.append(h)
    return torch.stack(outs)


def gru_inputs(T, B, X, H, dtype, x_grad):
    x = torch.randn(T, B, X, dtype=dtype, requires_grad=x_grad)
    h0 = torch.randn(B, H, dtype=dtype, requires_grad=True)
    eps = torch.randn(T, B, H, dtype=dtype)
    ws = [(torch.randn(H, 2 * H, dtype=dtype) / H ** 0.5 / 2).requires_grad_(),
          (torch.randn(X, 3 * H, dtype=dtype) / X ** 0.5).requires_grad_(),
          (torch.randn(H, 3 * H, dtype=dtype) / H ** 0.5).requires_grad_()]
    return x, h0, eps, ws, torch.randn(T, B, H, dtype=dtype)


def lesson4_forms(ns):
    """The doc's block 1 without its setup and its measuring loop: cell, steps and the forms, over ns's inputs."""
    code = block(4, 1)
    exec(code[code.index("def cell"):code.index("forms = (")], ns)
    return ns


def lesson4_values():
    from torch.utils.checkpoint import checkpoint
    x, h0, eps, (We, Wi, Wz), dout = gru_inputs(6, 2, 3, 4, torch.double, True)
    ns = lesson4_forms({"torch": torch, "checkpoint": checkpoint, "dev": "cpu", "T": 6, "B": 2, "X": 3, "H": 4,
                        "x": x, "h0": h0, "eps": eps, "W_enc": We, "W_ih": Wi, "W_zh": Wz})
    leaves = (x, h0, We, Wi, Wz)
    want = torch.autograd.grad((gru_eager(x, h0, eps, We, Wi, Wz) * dout).sum(), leaves)
    forms = {"forum_loop": ns["forum_loop"], "hoisted": ns["hoisted"],
             "checkpointed, segments of 4 (6 = 4 + 2)": lambda: ns["checkpointed"](4),
             "hoisted_checkpointed, segments of 4": lambda: ns["hoisted_checkpointed"](4)}
    for name, form in forms.items():
        got = torch.autograd.grad((form() * dout).sum(), leaves)
        check(f"lesson 4 {name}: dx, dh0, dW_enc, dW_ih, dW_zh",
              max((p - q).abs().max().item() for p, q in zip(got, want)))


def lesson4_own_gradient():
    """Lesson 4's "check your own gradient": its commands as the doc gives them, its block 3 importing block 1's
    forms as the module lesson4_forms (as the doc has the reader save it), without its measuring loop."""
    import subprocess
    doc = open(os.path.join(ROOT, "docs", "lesson-4.md")).read()
    dump = "./build/lesson4 --size small --impl cpu --dump /tmp/l4"
    compare = ("/usr/bin/python3 plots/compare_npy.py /tmp/l4/my_dW_zh.npy /tmp/l4/cpu.dW_zh.npy --rtol 1e-4 "
               "--atol 1e-5")
    for cmd in (dump, compare):
        if cmd not in doc:
            sys.exit(f"lesson 4: the doc no longer shows `{cmd}`: update check_doc_snippets.py with it")
    if subprocess.run(dump.split(), cwd=ROOT, stdout=subprocess.DEVNULL).returncode != 0:
        sys.exit(f"lesson 4: `{dump}` failed")
    from torch.utils.checkpoint import checkpoint
    import types
    module = types.ModuleType("lesson4_forms")
    module.__dict__.update(torch=torch, checkpoint=checkpoint)
    lesson4_forms(module.__dict__)
    sys.modules["lesson4_forms"] = module
    exec(block(4, 3), {"__name__": "lesson4_doc"})
    run = subprocess.run([sys.executable] + compare.split()[1:], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    print(f"lesson 4 check your own gradient: {run.stdout.strip()}")
    if run.returncode != 0:
        sys.exit("lesson 4: the doc's own-gradient check does not agree with the lesson's dW_zh")


def lesson5_values():
    acc = snippet(5, 2)["accumulate_grad_weight"]
    V, H, c = 7, 3, 4
    g = torch.randn(c, V).to(torch.bfloat16)
    xc = torch.randn(c, H).to(torch.bfloat16)
    gw = torch.randn(V, H)
    want = gw.double() + g.double().t() @ xc.double()
    acc(gw, g, xc)
    # bf16 operands are exact in float32; the f32 GEMM of c = 4 products errs by a few float32 ulps
    check("lesson 5 grad_weight += g^T x", (gw.double() - want).abs().max().item(), 1e-5)


# ---- memory ---------------------------------------------------------------------------------------------

def lesson3_memory():
    meter = PeakMeter(torch)
    MaxSim = snippet(3, 1, "a, b = torch.randn")["MaxSim"]
    I, J, M, N, K, ci, cm = 16, 128, 64, 256, 32, 4, 4
    a = torch.randn(I, J, K, requires_grad=True)
    b = torch.randn(M, N, K, requires_grad=True)
    dout = torch.randn(I, M)
    slab = F32 * ci * J * cm * N
    ab = F32 * (I * J * K + M * N * K)  # a and b; da and db in backward
    forward = 2 * slab + (8 + F32) * ci * J * cm  # einsum's slab and max's copy; values, int64 indices
    backward = ab + 2 * F32 * ci * J * cm * K + F32 * ci * J * K + 2 * 8 * ci * J * cm  # da, db; gathers
    bound = ab + 2 * F32 * I * M + F32 * I * J * M + max(forward, backward)

    def run(form):
        a.grad = b.grad = None
        form().backward(dout)
    fix, _ = measured(meter, lambda: run(lambda: MaxSim.apply(a, b, ci, cm)))
    forum, _ = measured(meter, lambda: run(lambda: torch.einsum("ijk,mnk->ijmn", a, b).max(-1).values.sum(1)))
    check_bound(3, f"MaxSim, I={I} J={J} M={M} N={N} K={K} chunk_i={ci} chunk_m={cm}", fix, bound, forum)


def lesson4_memory():
    """The doc's block 1 as pasted (its own PeakMeter, medium size), then its hook block in the same namespace."""
    import contextlib
    import io
    ns, out = {"__name__": "__main__"}, io.StringIO()  # run as the doc's script is: the measuring loop too
    with contextlib.redirect_stdout(out):
        exec(block(4, 1), ns)
        exec(block(4, 2), ns)
    lines = out.getvalue().strip().split("\n")
    peaks = {m.group(1): int(m.group(2).replace(",", "")) for m in
             (re.match(r"(\w+) +peak ([\d,]+) bytes$", line) for line in lines) if m}
    saved = [int(m.group(1).replace(",", "")) for m in
             (re.match(r"the forum loop saves ([\d,]+) bytes", line) for line in lines) if m]
    for line in lines:
        report(4, line)
    T, B, H, forum = ns["T"], ns["B"], ns["H"], peaks.get("forum_loop", 0)
    claims = [("checkpointed", peaks.get("checkpointed", forum) * 2 <= forum, "at most half the forum loop's peak"),
              ("hoisted", peaks.get("hoisted", 0) > forum, "above the forum loop's peak"),
              ("hoisted_checkpointed", 0 < peaks.get("hoisted_checkpointed", forum) < forum,
               "below the forum loop's peak"),
              ("the hook", saved and F32 * 10 * T * B * H <= saved[0] < forum,
               "at least 10H floats a step and row, less than the forum loop's peak"),
              # the doc's sum: 10H a step and row, x, eps, W_enc (H, 2H), W_zh (H, 3H), one float64 0.5 a step
              ("the saved sum", saved and saved[0] == F32 * (10 * T * B * H + T * B * ns["X"] + T * B * H
                                                             + 2 * H * H + 3 * H * H) + 8 * T,
               "10H a step and row + x + eps + W_enc + W_zh + 8 bytes a step")]
    for what, ok, claim in claims:
        if not ok:
            sys.exit(f"lesson 4: {what} is not {claim}, as the doc says: {peaks}, saved {saved}")
    print("lesson 4: checked: checkpointed <= half of forum_loop, hoisted above it, hoisted_checkpointed below it,"
          " the saved bytes the doc's sum")


def lesson5_memory():
    meter = PeakMeter(torch)
    acc = snippet(5, 2)["accumulate_grad_weight"]
    V, H, c = 32768, 256, 16
    g = torch.randn(c, V).to(torch.bfloat16)
    xc = torch.randn(c, H).to(torch.bfloat16)
    gw = torch.zeros(V, H)
    bound = F32 * c * V + F32 * c * H

    def seed():
        gw.add_(torch.mm(g.t(), xc).float())  # the seed's line (+= in place)
    fix = (lambda peak, before: peak - before)(*measured(meter, lambda: acc(gw, g, xc)))
    forum = (lambda peak, before: peak - before)(*measured(meter, seed))
    check_bound(5, f"accumulate_grad_weight above what was live, V={V} H={H} c={c}", fix, bound, forum)


def paste():
    for lesson, lines in REPORT.items():
        path = os.path.join(ROOT, "docs", f"lesson-{lesson}.md")
        text = open(path).read()
        begin, end = f"<!-- check_doc_snippets: lesson{lesson} -->", "<!-- /check_doc_snippets -->"
        i, j = text.index(begin) + len(begin), text.index(end, text.index(begin))
        body = "\n```\n" + "\n".join(lines) + "\n```\n"
        open(path, "w").write(text[:i] + body + text[j:])
        print(f"pasted {len(lines)} lines into {os.path.relpath(path, ROOT)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--paste", action="store_true", help="write the measured lines into the docs")
    a = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    for values in (lesson2_values, lesson3_values, lesson4_values, lesson4_own_gradient, lesson5_values):
        values()
    for memory in (lesson3_memory, lesson4_memory, lesson5_memory):
        memory()
        gc.collect()
    if a.paste:
        paste()
    print("check_doc_snippets: every doc fix gives autograd's values and stays within its stated peak")
    return 0


if __name__ == "__main__":
    ensure_preloaded()  # before torch loads: re-runs this script with build/libpeak_alloc.so preloaded
    import torch
    sys.exit(main())
