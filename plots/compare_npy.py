#!/usr/bin/env python3
"""Compare your gradient with a lesson's by the rule the lessons validate with.

    ./build/lesson1 --size tiny --impl cpu --dump /tmp/l1          # the lesson's inputs and gradients as .npy
    ... run your own model on /tmp/l1/input.*.npy, np.save("my_dW.npy", W.grad.numpy()) ...
    python3 plots/compare_npy.py my_dW.npy /tmp/l1/cpu.dW.npy --rtol 1e-4 --atol 1e-6

The lessons' max rel err is max |x - ref| / max |ref| over the whole tensor: one rounding error is judged against
the tensor's scale, not against its own element, so an element near zero cannot fail a correct float32 gradient.
Here the arrays agree when max |yours - lesson| <= atol + rtol * max |lesson| (a NaN agrees only with a NaN at the
same place). Prints that error, relative to max |lesson|, and the element where the difference is largest - the
one that decides; exits 1 when it is over the bound, 2 on unreadable or mismatched files. Choose rtol from the
lesson's own tolerance line (printed under its table) and atol for a tensor that is all zeros.
"""
import argparse
import sys

import numpy as np


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("yours")
    ap.add_argument("lesson")
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--atol", type=float, default=1e-6)
    a = ap.parse_args()
    try:
        y, r = np.load(a.yours).astype(np.float64), np.load(a.lesson).astype(np.float64)
    except (OSError, ValueError) as e:
        print(f"compare_npy: {e}", file=sys.stderr)
        sys.exit(2)
    if y.shape != r.shape:
        print(f"compare_npy: shapes differ: yours {y.shape}, the lesson's {r.shape}", file=sys.stderr)
        sys.exit(2)
    if not y.size:
        print("0 elements: nothing to compare")
        sys.exit(0)
    both_nan = np.isnan(y) & np.isnan(r)
    with np.errstate(invalid="ignore"):
        diff = np.where(both_nan, 0.0, np.abs(y - r))
    diff = np.where(np.isnan(diff), np.inf, diff)  # a NaN on one side only: as far off as can be
    scale = float(np.max(np.where(np.isnan(r), 0.0, np.abs(r))))
    worst = np.unravel_index(int(np.argmax(diff)), diff.shape)
    err, bound = float(diff[worst]), a.atol + a.rtol * scale
    rel = err / scale if scale > 0 else (0.0 if err == 0 else np.inf)
    print(f"max |yours - lesson| = {err:.3g}, {rel:.3g} of max |lesson| = {scale:.6g}: "
          f"{'within' if err <= bound else 'OVER'} {a.atol:g} + {a.rtol:g}*max|lesson| = {bound:.3g}; "
          f"largest difference at {tuple(int(i) for i in worst)}: yours {y[worst]:.9g}, the lesson's {r[worst]:.9g}")
    sys.exit(0 if err <= bound else 1)


if __name__ == "__main__":
    main()
