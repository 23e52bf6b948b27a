/* gru_kernels.cu - lesson 4's fused cell passes as CUDA kernels. One thread per (row i, unit j) of the
 * (B, H) hidden state; the arithmetic is kernels/gru_cell_math.h, the same functions the CPU calls. Layouts
 * as in optimized/gru_fused.c: a step's saved rows St (B, 6H) = [r u n zn z e], row stride 6H.
 *   gru_reparam_fwd_kernel   z, e from pd (B, 2H)
 *   gru_gate_fwd_kernel      h_new from xp (B, 3H), zp (B, 3H), h; saves r u n zn
 *   gru_gate_bwd_kernel      [r u n zn] -> [da_r da_u dzn da_n]; dh <- (dh + dout) u
 *   gru_reparam_bwd_kernel   e -> dlv = dz e / 2
 *   gru_fill_kernel          dh = 0 before the first backward step
 * No shared memory and no synchronisation: each element is independent. */
#include "gru_kernels.h"

#include "gru_cell_math.h"

#define SW 6

/* Designed for: loads >= 80% of each 32-byte sector used, stores >= 80% (consecutive threads, consecutive elements),
 * no shared memory. */
__global__ void gru_reparam_fwd_kernel(int B, int H, const float *pd, const float *eps_t, float *St)
{
    /* pd (B, 2H), eps_t (B, H), St (B, 6H) */
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (long long)B * H) return;
    long long i = idx / H, j = idx % H;
    float *row = St + i * SW * H;
    row[4 * H + j] = gru_reparam(pd[i * 2 * H + j], pd[i * 2 * H + H + j], eps_t[i * H + j], &row[5 * H + j]);
}

/* Designed for: loads >= 80% of each 32-byte sector used, stores >= 80% (consecutive threads, consecutive elements),
 * no shared memory. */
__global__ void gru_gate_fwd_kernel(int B, int H, const float *xp_t, const float *zp, const float *h, float *hnew,
                                    float *St)
{
    /* xp_t (B, 3H), zp (B, 3H), h (B, H), hnew (B, H), St (B, 6H) */
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (long long)B * H) return;
    long long i = idx / H, j = idx % H;
    const float *a = xp_t + i * 3 * H, *b = zp + i * 3 * H;
    float *row = St + i * SW * H;
    gru_gates s;
    hnew[idx] = gru_gate_forward(a[j], a[H + j], a[2 * H + j], b[j], b[H + j], b[2 * H + j], h[idx], &s);
    row[j] = s.r;
    row[H + j] = s.u;
    row[2 * H + j] = s.n;
    row[3 * H + j] = s.zn;
}

/* Designed for: loads >= 80% of each 32-byte sector used, stores >= 80% (consecutive threads, consecutive elements),
 * no shared memory. */
__global__ void gru_gate_bwd_kernel(int B, int H, const float *dout_t, const float *h, float *dh, float *St)
{
    /* dout_t (B, H), h (B, H) the old h, dh (B, H) in/out, St (B, 6H) */
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (long long)B * H) return;
    long long i = idx / H, j = idx % H;
    float *row = St + i * SW * H;
    gru_gates s = {row[j], row[H + j], row[2 * H + j], row[3 * H + j]};
    gru_gate_grads o;
    dh[idx] = gru_gate_backward(dh[idx] + dout_t[idx], h[idx], s, &o);
    row[j] = o.da_r;
    row[H + j] = o.da_u;
    row[2 * H + j] = o.dzn;
    row[3 * H + j] = o.da_n;
}

/* Designed for: loads >= 80% of each 32-byte sector used, stores >= 80% (consecutive threads, consecutive elements),
 * no shared memory. */
__global__ void gru_reparam_bwd_kernel(int B, int H, float *St)
{
    /* St (B, 6H): column 4H holds dz, 5H holds e, which becomes dlv */
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (long long)B * H) return;
    long long i = idx / H, j = idx % H;
    float *row = St + i * SW * H;
    row[5 * H + j] = gru_reparam_backward(row[4 * H + j], row[5 * H + j]);
}

/* Designed for: no global loads, stores >= 80% (consecutive threads, consecutive elements), no shared memory. */
__global__ void gru_fill_kernel(long long n, float v, float *p)
{
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < n) p[idx] = v;
}
