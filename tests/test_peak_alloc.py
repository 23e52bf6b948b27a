"""The preloaded peak counter (plots/torch_peak) seen from PyTorch: every tensor storage, temporaries included.

    /usr/bin/python3 tests/test_peak_alloc.py      (re-runs itself with build/libpeak_alloc.so preloaded)

Known sequences of CPU tensors, with the bytes each must add: the same sequence the C test
(tests/test_peak_alloc.c) drives through posix_memalign directly, then a temporary that no Python name holds
(what a saved-tensor count cannot see). Exits 1 on the first disagreement; 0 with a note when torch is missing.
"""
import importlib.util
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "plots"))
from torch_peak import PeakMeter, ensure_preloaded  # noqa: E402


def expect(what, got, want):
    print(f"{what}: {got:,} bytes (want {want:,})")
    if got != want:
        sys.exit(f"test_peak_alloc.py: FAIL: {what}")


def main():
    if importlib.util.find_spec("torch") is None:
        print("test_peak_alloc.py: torch is not importable: skipped")
        return 0
    ensure_preloaded()
    import torch
    torch.set_num_threads(1)
    meter = PeakMeter(torch)  # counting starts here
    a = torch.empty(250)      # 1,000 bytes of float32
    b = torch.empty(160)      # 640
    expect("live after a, b", meter.live(), 1640)
    del a
    c = torch.empty(75)       # 300
    expect("live after freeing a, then c", meter.live(), 940)
    expect("peak", meter.peak(), 1640)
    del b, c
    x = torch.randn(1000, 1000)  # 4,000,000
    meter.reset()
    s = (x * x).sum()         # x * x is a 4,000,000-byte temporary no name holds; s is 4 bytes
    expect("peak of (x * x).sum(): x, the temporary and s at once", meter.peak(), 8_000_000 + s.element_size())
    expect("live after it (x and s)", meter.live(), 4_000_000 + s.element_size())
    print("test_peak_alloc.py: every tensor allocation counted, temporaries included")
    return 0


if __name__ == "__main__":
    sys.exit(main())
