"""PyTorch's true peak: every tensor allocation, temporaries included, on the CPU and the GPU alike.

On the GPU it is the caching allocator's own counter (torch.cuda.reset_peak_memory_stats, then
max_memory_allocated). On the CPU it is build/libpeak_alloc.so (peak_alloc.c beside this file), preloaded into
this Python process: it counts the bytes of every block c10's CPU allocator takes with posix_memalign and gives
back with free, and only those (calls from libc10's code: oneDNN's and OpenBLAS's own scratch buffers are not
tensors, and the C lessons do not count a BLAS's internals either). ensure_preloaded() re-runs the script with it
preloaded (once) when it is not.

    meter = PeakMeter(torch)   # CPU: counting starts now; tensors made before are not seen
    x = torch.randn(...)       # counted: inputs made after begin() are part of the peak, as in the C tracker
    meter.reset()              # peak := bytes live now
    ... forward + backward ...
    meter.peak()               # the most bytes live at once since reset()
"""
import ctypes
import gc
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
LIB = os.path.realpath(os.path.join(ROOT, "build", "libpeak_alloc.so"))


def ensure_preloaded():
    """Re-executes this script with LD_PRELOAD=build/libpeak_alloc.so unless it already runs with it (building
    the library with make when it is missing). Returns when preloaded, or when the library cannot be built."""
    if "libpeak_alloc" in os.environ.get("LD_PRELOAD", ""):
        return
    if not os.path.exists(LIB):
        built = subprocess.run(["make", "-s", "-C", ROOT, "build/libpeak_alloc.so"], stdout=sys.stderr).returncode == 0
        if not built:  # a GPU run needs no preload (PeakMeter reads CUDA's counters); a CPU PeakMeter will say so
            print("torch_peak: could not build build/libpeak_alloc.so: running without the CPU peak counter",
                  file=sys.stderr)
            return
    env = dict(os.environ, LD_PRELOAD=" ".join(p for p in (LIB, os.environ.get("LD_PRELOAD", "")) if p))
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


def preloaded_lib():
    """The preloaded counter's functions, or None when this process runs without it."""
    lib = ctypes.CDLL(None)
    if not hasattr(lib, "peak_alloc_peak"):
        return None
    for name in ("peak_alloc_live", "peak_alloc_peak", "peak_alloc_count"):
        getattr(lib, name).restype = ctypes.c_size_t
    return lib


class PeakMeter:
    def __init__(self, torch):
        self.torch, self.gpu = torch, torch.cuda.is_available()
        self.lib = None if self.gpu else preloaded_lib()
        if not self.gpu and self.lib is None:
            raise RuntimeError("PeakMeter: build/libpeak_alloc.so is not preloaded (call ensure_preloaded() first)")
        if self.lib:
            if not self.lib.peak_alloc_only_from(b"libc10"):
                raise RuntimeError("PeakMeter: libc10 is not loaded: import torch before making a PeakMeter")
            self.lib.peak_alloc_begin()

    def reset(self):
        """Collects garbage, then makes the bytes live now the peak to beat."""
        gc.collect()
        if self.gpu:
            self.torch.cuda.synchronize()
            self.torch.cuda.reset_peak_memory_stats()
        else:
            self.lib.peak_alloc_reset_peak()

    def sync(self):
        """Waits for the GPU's queued work (a no-op on the CPU), so a host clock read after it times that work."""
        if self.gpu:
            self.torch.cuda.synchronize()

    def peak(self):
        if self.gpu:
            self.torch.cuda.synchronize()
            return self.torch.cuda.max_memory_allocated()
        return self.lib.peak_alloc_peak()

    def live(self):
        return self.torch.cuda.memory_allocated() if self.gpu else self.lib.peak_alloc_live()
