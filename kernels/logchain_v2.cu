/* logchain_v2.cu - lesson 2, cuda-v2: the CPU version's factorisation on the GPU.
 * Changed from v1: each step is m + log(exp(a - m) . P), its products cuBLAS GEMMs over every chain
 * position at once; our kernels keep the row-wise O(n c) work, one warp per row. */
#include "logchain_math.h"
#include "logchain_device.h"
#include "logchain_problem.h"

#include "runtime/cublas_rowmajor.h"
#include "runtime/cuda_check.h"
#include "runtime/cuda_track.h"
#include "runtime/launch.h"
#include "runtime/warp_reduce.h"

/* v1 evaluates O(n c^2) exponentials per step. Here each step is  m + log(exp(a - m) . P)  (logchain_math.h):
 * the (n x c) . (c x c) products and the transition gradient U^T W are cuBLAS GEMMs, every chain position s
 * at once (strided batched, batch = t), and what is left for our kernels is row-wise, O(n c) exps per step:
 * one warp per row (b, s), LC2_ROWS rows per block, grid (ceil(n / LC2_ROWS), t); a row's max is a shuffle
 * reduction, no shared memory. Scratch is (t, n, c), row (s, b) at (s * n + b) * c: one GEMM batch entry per
 * s.
 *   lc2_fwd_weights_kernel  alpha_{i+1} = x_{i+1} + m + log S; then m = max alpha, W = exp(alpha - m)
 *   lc2_bwd_weights_kernel  beta_{i+1}, dx_{i+1} over alpha_{i+1}; then W and U for step i's GEMMs
 *   lc2_dx0_kernel, lc2_dp0_kernel  step 0's finish, dp0 = sum_b dx_0 / p0 */

static_assert(LC2_BLOCK == 32 * LC2_ROWS, "one warp per row: the block is LC2_ROWS whole warps");

/* The row this warp owns: b (batch), s (chain position); whole warps leave together when b >= n. */
struct lc2_row {
    int b, s, lane;
};
__device__ static inline lc2_row lc2_this_row(void)
{
    lc2_row r;
    r.b = blockIdx.x * LC2_ROWS + threadIdx.x / 32;
    r.s = blockIdx.y;
    r.lane = threadIdx.x % 32;
    return r;
}

/* S, W: (t, n, c) scratch; m: (t, n) row shifts. i: the variable alpha_i being produced (0: from p0).
 * out: (n, t), written when i == v - 1. */
__global__ void lc2_fwd_weights_kernel(int n, int c, int t, int v, int i, const float *x, const float *p0,
                                       const float *S, float *m, float *alpha, float *W, float *out)
{
    lc2_row r = lc2_this_row();
    if (r.b >= n) return;
    long long row = (long long)r.s * n + r.b;
    long long a0 = (((long long)r.b * t + r.s) * v + i) * c; /* alpha_i and x_i of row (b, s) */
    /* every lane reads it before lane 0 rewrites it */
    float m_old = i ? m[row] : 0.0f;
    float mx = -INFINITY;
    for (int j = r.lane; j < c; j += 32) {
        float a =
            i ? lc_finish(x[a0 + j], m_old, S[row * c + j]) : logf(p0[(long long)r.s * c + j]) + x[a0 + j];
        alpha[a0 + j] = a;
        mx = fmaxf(mx, a);
    }
    mx = warp_max(mx); /* the shuffles also order every lane's alpha writes before the reads below */
    float sum = 0.0f;
    for (int j = r.lane; j < c; j += 32) {
        float w = lc_weight(alpha[a0 + j], mx);
        W[row * c + j] = w;
        sum += w;
    }
    if (i == v - 1) {
        sum = warp_sum(sum);
        if (r.lane == 0) out[(long long)r.b * t + r.s] = lc_finish(0.0f, mx, sum);
    } else if (r.lane == 0) {
        m[row] = mx;
    }
}

/* Finishes step i+1 (if i + 1 < v - 1: beta_{i+1} from S and mb; else beta_{v-1} = 0), writes dx_{i+1} over
 * alpha_{i+1}, and prepares step i's GEMM operands W and U. S and U share a buffer: S is read, then U
 * written, element by element by the same lane. */
__global__ void lc2_bwd_weights_kernel(int n, int c, int t, int v, int i, const float *x, const float *dout,
                                       const float *out, float *mb, float *alpha, float *W, float *SU)
{
    lc2_row r = lc2_this_row();
    if (r.b >= n) return;
    long long row = (long long)r.s * n + r.b, rs = (long long)r.b * t + r.s;
    long long a1 = (rs * v + i + 1) * c, a0 = (rs * v + i) * c; /* variable i+1, variable i */
    int last = i + 1 == v - 1;
    float mb_old = last ? 0.0f : mb[row], lz = out[rs], g = dout[rs];
    float mw = -INFINITY, ma = -INFINITY;
    for (int j = r.lane; j < c; j += 32) {
        float beta = last ? 0.0f : lc_finish(0.0f, mb_old, SU[row * c + j]);
        float w = x[a1 + j] + beta;
        alpha[a1 + j] = g * lc_posterior(alpha[a1 + j], beta, lz); /* dx_{i+1} */
        W[row * c + j] = w;
        mw = fmaxf(mw, w);
        ma = fmaxf(ma, alpha[a0 + j]);
    }
    mw = warp_max(mw);
    ma = warp_max(ma);
    float scale = g * lc_transition_term(ma, mw, lz);
    for (int j = r.lane; j < c; j += 32) {
        W[row * c + j] = lc_weight(W[row * c + j], mw);
        SU[row * c + j] = scale * lc_weight(alpha[a0 + j], ma);
    }
    if (r.lane == 0) mb[row] = mw;
}

/* Step 0's finish: beta_0 = mb + log S, dx_0 = dout posterior over alpha_0. Elementwise within the row. */
__global__ void lc2_dx0_kernel(int n, int c, int t, int v, const float *dout, const float *out,
                               const float *mb, const float *S, float *alpha)
{
    lc2_row r = lc2_this_row();
    if (r.b >= n) return;
    long long row = (long long)r.s * n + r.b, rs = (long long)r.b * t + r.s, a0 = rs * v * c;
    float m = mb[row], lz = out[rs], g = dout[rs];
    for (int j = r.lane; j < c; j += 32)
        alpha[a0 + j] = g * lc_posterior(alpha[a0 + j], lc_finish(0.0f, m, S[row * c + j]), lz);
}

/* dp0[s, j] = sum_b dx[b, s, 0, j] / p0[s, j] */
__global__ void lc2_dp0_kernel(int n, int c, int t, int v, const float *dx, const float *p0, float *dp0)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x, s = blockIdx.y;
    if (j >= c) return;
    float acc = 0.0f;
    for (long long b = 0; b < n; b++) {
        acc += dx[((b * t + s) * v) * c + j];
    }
    dp0[(long long)s * c + j] = acc / p0[(long long)s * c + j];
}

/* ---- launchers ----------------------------------------------------------------------------------------- */

static unsigned blocks_for(long long count, int per_block)
{
    return (unsigned)((count + per_block - 1) / per_block);
}

static dim3 lc2_grid(const lc_dims *d) { return dim3(blocks_for((long long)d->n, LC2_ROWS), (unsigned)d->t); }

/* dp0 (1, t, c) from dx (n, t, v, c): one launch (cuda-v4 calls it too) */
void lc2_dp0(const lc_dims *d, const float *dx, const float *p0, float *dp0)
{
    int n = (int)d->n, c = (int)d->c, t = (int)d->t, v = (int)d->v;
    LAUNCH(lc2_dp0_kernel, dim3(blocks_for(c, LC2_DP0_BLOCK), (unsigned)t), LC2_DP0_BLOCK, 0)
    (n, c, t, v, dx, p0, dp0);
    CUDA_CHECK_LAST();
}

/* Every buffer already allocated: 1 + 2 (v-1) launches (cuda-v3 captures them into one graph). */
void lc2_forward_steps(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                       float *out, float *W, float *S, float *m)
{
    int n = (int)d->n, c = (int)d->c, t = (int)d->t, v = (int)d->v, V1 = v - 1;
    long long nc = (long long)n * c, C2 = (long long)c * c;
    cublasHandle_t h = (cublasHandle_t)cublas_handle();
    LAUNCH(lc2_fwd_weights_kernel, lc2_grid(d), LC2_BLOCK, 0)(n, c, t, v, 0, x, p0, S, m, alpha, W, out);
    CUDA_CHECK_LAST();
    for (int i = 0; i < V1; i++) {
        /* S_s (n, c; ld c) = W_s (n, c; ld c) . P_{s,i} (c, c; ld c), for every chain position s at once */
        ROWMAJOR_SGEMM_STRIDED_BATCHED(h, 0, 0, n, c, c, 1.0f, W, c, nc, bulk + i * C2, c, V1 * C2, 0.0f, S,
                                       c, nc, t);
        LAUNCH(lc2_fwd_weights_kernel, lc2_grid(d), LC2_BLOCK, 0)
        (n, c, t, v, i + 1, x, p0, S, m, alpha, W, out);
        CUDA_CHECK_LAST();
    }
}

/* 3 (v-1) + 2 launches. dx = alpha, written over it step by step. */
void lc2_backward_steps(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                        const float *out, const float *dout, float *dbulk, float *dp0, float *W, float *SU,
                        float *mb)
{
    int n = (int)d->n, c = (int)d->c, t = (int)d->t, v = (int)d->v, V1 = v - 1;
    long long nc = (long long)n * c, C2 = (long long)c * c;
    cublasHandle_t h = (cublasHandle_t)cublas_handle();
    float *dx = alpha;
    for (int i = V1 - 1; i >= 0; i--) {
        LAUNCH(lc2_bwd_weights_kernel, lc2_grid(d), LC2_BLOCK, 0)
        (n, c, t, v, i, x, dout, out, mb, alpha, W, SU);
        CUDA_CHECK_LAST();
        /* dbulk_{s,i} (c, c) = U_s^T (c, n; U_s is (n, c) ld c) . W_s (n, c; ld c): the batch is the inner
         * dim */
        ROWMAJOR_SGEMM_STRIDED_BATCHED(h, 1, 0, c, c, n, 1.0f, SU, c, nc, W, c, nc, 0.0f, dbulk + i * C2, c,
                                       V1 * C2, t);
        /* S_s (n, c) = W_s (n, c) . P_{s,i}^T, into U's buffer (U is dead once dbulk_i is computed) */
        ROWMAJOR_SGEMM_STRIDED_BATCHED(h, 0, 1, n, c, c, 1.0f, W, c, nc, bulk + i * C2, c, V1 * C2, 0.0f, SU,
                                       c, nc, t);
    }
    LAUNCH(lc2_dx0_kernel, lc2_grid(d), LC2_BLOCK, 0)(n, c, t, v, dout, out, mb, SU, alpha);
    CUDA_CHECK_LAST();
    lc2_dp0(d, dx, p0, dp0);
}

/* ---- device memory: the buffers around this version's launchers (logchain_device.h); the caller attaches
 * the cuBLAS workspace where the version uses cuBLAS (the session does: uses_cublas) --------------------- */

extern "C" float *cuda_lc_forward_v2(const lc_dims *d, const float *x, const float *bulk, const float *p0,
                                     float **alpha_out)
{
    float *out = lc_dev_forward_out(d, alpha_out);
    lc_scratch s = lc_dev_step_scratch(d, 0);
    lc2_forward_steps(d, x, bulk, p0, *alpha_out, out, s.W, s.S, s.m);
    lc_dev_scratch_free(s);
    return out;
}

extern "C" void cuda_lc_backward_v2(const lc_dims *d, const float *x, const float *bulk, const float *p0,
                                    float *alpha, const float *out, const float *dout, float **dx,
                                    float **dbulk, float **dp0)
{
    lc_dev_grads(d, alpha, dx, dbulk, dp0);
    lc_scratch s = lc_dev_step_scratch(d, 1);
    lc2_backward_steps(d, x, bulk, p0, alpha, out, dout, *dbulk, *dp0, s.W, s.S, s.m);
    lc_dev_scratch_free(s);
}
