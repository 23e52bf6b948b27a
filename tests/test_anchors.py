"""plots/anchors.py's validation, on the CPU: every row's float64 reference and tolerance checked where a GPU is not
needed to run the row's own arithmetic, and a planted wrong row refused.

    /usr/bin/python3 tests/test_anchors.py       (tests/python_checks.sh runs it where torch imports)

The Triton rows (liger-flce, cce, flash-maxsim) need a GPU; their references are lesson 5's and lesson 3's, which
the rows run here check: torch.compile stood in by the identity where this torch has none (the reference is the
same uncompiled arithmetic), nn.GRU on the CPU for cudnn-gru (its float64 reference is the GRU's documented update
written out, so a gate in the wrong order fails). Each must pass; the planted rows must fail.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "plots"))
import torch  # noqa: E402

import anchors  # noqa: E402

failed = 0


def check(what, ok, detail):
    global failed
    print(f"{'ok  ' if ok else 'FAIL'} {what}: {detail}")
    failed += not ok


if not hasattr(torch, "compile"):
    torch.compile = lambda f: f  # the rows' arithmetic without the compiler: their references are what is tested
anchors.needs_gpu = lambda torch_, what: None  # nn.GRU runs on the CPU as well

for lesson, builds in sorted(anchors.ANCHORS.items()):
    for build in builds:
        if build in (anchors.liger_flce, anchors.cce, anchors.flash_maxsim):
            continue  # Triton: a GPU only
        torch.manual_seed(7)
        err, tol = anchors.validate(torch, build, anchors.VALIDATION_SIZE[lesson])
        check(f"lesson {lesson} {anchors.ROW_NAMES[build]}", err <= tol, f"max rel err {err:.2e}, tolerance {tol:.1e}")

# planted: a GRU reference with r and z swapped, and lesson 3's row with a mean where the seed takes a max
swapped = anchors.gru_reference


def gru_rz_swapped(torch_, leaves, x, T):
    h, w_ih, w_hh, b_ih, b_hh = leaves
    perm = lambda w: torch_.cat([w.chunk(3, 0)[1], w.chunk(3, 0)[0], w.chunk(3, 0)[2]], 0)
    return swapped(torch_, [h, perm(w_ih), perm(w_hh), perm(b_ih), perm(b_hh)], x, T)


anchors.gru_reference = gru_rz_swapped
torch.manual_seed(7)
err, tol = anchors.validate(torch, anchors.cudnn_gru, anchors.VALIDATION_SIZE[4])
check("planted: cudnn-gru against a reference with r and z swapped", err > tol, f"max rel err {err:.2e} > {tol:.1e}")
anchors.gru_reference = swapped


def maxsim_mean(torch_, d):
    leaves, dout, forms, ref = anchors.maxsim_loop(torch_, d)
    a, b = leaves
    mean = lambda: torch_.stack([torch_.einsum("jk,mnk->jmn", a[i], b).mean(-1).sum(0) for i in range(a.shape[0])])
    return leaves, dout, {"pytorch-chunked": mean}, ref


torch.manual_seed(7)
err, tol = anchors.validate(torch, maxsim_mean, anchors.VALIDATION_SIZE[3], tol=anchors.FLOAT32_TOLERANCE)
check("planted: lesson 3's loop with a mean for the max", err > tol, f"max rel err {err:.2e} > {tol:.1e}")

print(f"test_anchors: {'all passed' if not failed else f'{failed} FAILED'}")
sys.exit(1 if failed else 0)
