#!/usr/bin/env python3
"""How fast cuBLAS ran lesson 1's dW, a sum over many rows into a few output tiles, on the GPUs that measured it.

    python3 docs/tools/bmm_dw_rate.py

Lesson 1's cuda-v1 (kernels/bmm_v1.cu) is three strided-batched SGEMMs: forward out_g = x_g W_g (B x N over K),
backward dx_g = dout_g W_g^T (B x K over N) and dW_g = x_g^T dout_g (K x N over B), each for G groups. At the forum
size (B = 8192, K = N = 64) the three have the same multiply-adds, 2 B K N G FLOP each; forward and dx also have the
same shape (B rows of 64 outputs over 64 terms). So backward - forward is the dW GEMM's time, to the noise of one
timed pass: G tiles of 64 x 64, each summing B = 8,192 rows. Had cuBLAS split that sum over the SMs, it would run
near the other two's rate. The GPU reports (docs/results/<gpu>/results.csv and their subfolders', the first row
found, as cuda_order.py reads them) give forward_ms and backward_ms.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cuda_order import gpu_reports, read_csv  # noqa: E402


def main():
    rows = []
    for gpu, paths in sorted(gpu_reports().items()):
        for p in paths:
            r = next((r for r in read_csv(p) if r["lesson"] == "1" and r["impl"] == "cuda-v1" and r["size"] == "forum"
                      and r.get("backward_ms")), None)
            if r:
                rows.append((gpu, r))
                break
    if not rows:
        sys.exit("bmm_dw_rate: no GPU report has lesson 1 cuda-v1 at the forum size")
    sm_peak = 2 * 128 * 1.98  # GFLOP/s: one GH100 SM's 128 FP32 lanes at the 1.98 GHz boost clock (H100, H200)
    print("lesson 1 cuda-v1 at the forum size, measured; dW = backward - forward (dx has forward's shape and FLOP)")
    print("gpu    dims                  GFLOP/GEMM  forward ms  backward ms   dW ms  forward TFLOP/s  dW TFLOP/s"
          "  dW per tile GFLOP/s")
    for gpu, r in rows:
        d = {k: int(v) for k, v in (kv.split("=") for kv in r["dims"].split(","))}
        gflop = 2.0 * d["B"] * d["K"] * d["N"] * d["G"] / 1e9
        fwd, bwd = float(r["forward_ms"]), float(r["backward_ms"])
        dw = bwd - fwd
        per_tile = gflop / dw * 1000.0 / d["G"]
        print("%-6s %-21s %10.3f %11.4f %12.4f %7.4f %16.2f %11.2f %8.0f (%.0f%% of an SM)"
              % (gpu, r["dims"], gflop, fwd, bwd, dw, gflop / fwd, gflop / dw, per_tile, 100.0 * per_tile / sm_peak))
    print("dW is %d tiles of %d x %d, each summing %d rows: its rate is about what %d SMs give at half of one SM's FP32"
          % (d["G"], d["K"], d["N"], d["B"], d["G"]))
    print("peak (%.0f GFLOP/s), as if each tile's whole sum ran on one SM; split over the 132 SMs it could not be this slow"
          % sm_peak)

if __name__ == "__main__":
    main()
