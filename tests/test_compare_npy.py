"""plots/compare_npy.py judges by the lessons' rule, max |x - ref| <= atol + rtol * max |ref|, and names the element
that decides.

    python3 tests/test_compare_npy.py        (make test runs it through tests/python_checks.sh; needs numpy)

  - a float32 gradient off by rounding, whose elements near zero are far off relative to themselves, agrees
    (an element-wise rule refuses it: the lesson 1 dW case of issue 53);
  - an error over the bound exits 1 and prints the index of the largest difference, which is over the bound;
  - a NaN agrees only with a NaN at the same place; different shapes exit 2.
Exits 1 on the first disagreement.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
TOOL = os.path.join(ROOT, "plots", "compare_npy.py")


def run(yours, lesson, *flags):
    with tempfile.TemporaryDirectory() as d:
        paths = [os.path.join(d, "yours.npy"), os.path.join(d, "lesson.npy")]
        np.save(paths[0], yours)
        np.save(paths[1], lesson)
        p = subprocess.run([sys.executable, TOOL, *paths, *flags], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def expect(what, got, want_rc, want_text):
    rc, out = got
    if rc != want_rc or want_text not in out:
        print(f"test_compare_npy: FAIL: {what}: exit {rc} (expected {want_rc}), output: {out.strip()}")
        sys.exit(1)
    print(f"test_compare_npy: ok: {what}: {out.strip()}")


def main():
    rng = np.random.default_rng(53)
    ref = rng.standard_normal((64, 512))
    ref[0, :51] = rng.standard_normal(51) * 1e-6  # elements near zero, as a real gradient has
    mine = (ref * (1 + rng.standard_normal(ref.shape) * 2 ** -24)).astype(np.float32)  # float32 rounding
    mine[0, :51] += 2e-6  # far off relative to those elements, nothing against the tensor's scale
    expect("a float32 gradient with elements near zero", run(mine, ref, "--rtol", "1e-4", "--atol", "1e-6"), 0,
           "within")
    off = ref.copy()
    off[3, 7] += 1e-2 * np.abs(ref).max()  # 1% of the scale: over rtol 1e-4
    off[5, 9] += 1e-7  # small: not the one that decides
    expect("an error over the bound, named where it is", run(off, ref, "--rtol", "1e-4"), 1,
           "OVER 1e-06 + 0.0001*max|lesson|")
    expect("the decisive element", run(off, ref, "--rtol", "1e-4"), 1, "largest difference at (3, 7)")
    nan_ref = ref.copy()
    nan_ref[1, 1] = np.nan
    expect("NaN against NaN", run(nan_ref, nan_ref), 0, "within")
    expect("NaN against a number", run(nan_ref, ref), 1, "largest difference at (1, 1)")
    expect("different shapes", run(ref[:2], ref), 2, "shapes differ")
    print("test_compare_npy: compare_npy.py judges by max |x - ref| against max |ref|")


if __name__ == "__main__":
    main()
