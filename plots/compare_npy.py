#!/usr/bin/env python3
"""Compare your gradient with a lesson's, element by element, with the rule the lessons use.

    ./build/lesson1 --size tiny --impl cpu --dump /tmp/l1          # the lesson's inputs and gradients as .npy
    ... run your own model on /tmp/l1/input.*.npy, np.save("my_dW.npy", W.grad.numpy()) ...
    python3 plots/compare_npy.py my_dW.npy /tmp/l1/cpu.dW.npy --rtol 1e-4 --atol 1e-6

Element i passes when |yours_i - lesson_i| <= atol + rtol * |lesson_i| (NaN passes only against NaN at the same
place). Prints how many fail and the worst element; exits 1 if any fails, 2 on unreadable or mismatched files.
Choose rtol from the lesson's own tolerance line (printed under its table) and atol from the gradient's scale.
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
    both_nan = np.isnan(y) & np.isnan(r)
    with np.errstate(invalid="ignore"):
        err = np.where(both_nan, 0.0, np.abs(y - r))
        bad = ~(err <= a.atol + a.rtol * np.abs(r))
    worst = np.unravel_index(np.nanargmax(np.where(np.isnan(err), np.inf, err)), err.shape) if err.size else ()
    print(f"{bad.sum()} of {err.size} elements outside {a.atol:g} + {a.rtol:g}*|lesson|"
          + (f"; worst at {tuple(int(i) for i in worst)}: yours {y[worst]:.9g}, the lesson's {r[worst]:.9g}"
             if err.size else ""))
    sys.exit(1 if bad.any() else 0)


if __name__ == "__main__":
    main()
