/* logchain_v1.cu - lesson 2, cuda-v1: the recursions in log space, our kernels only, no cuBLAS: every step a
 * log-space (n x c) . (c x c) product with an online logsumexp, chain positions looped on the host. */
#include "logchain_math.h"
#include "logchain_device.h"
#include "logchain_problem.h"

#include "runtime/cuda_check.h"
#include "runtime/cuda_track.h"
#include "runtime/launch.h"

/* Every step is a log-space (n x c) . (c x c) product, log_vecmat_kernel: each block owns 8 rows x 32 columns
 * and walks j in tiles of 32 staged in shared memory, with an online logsumexp (a running row maximum,
 * partial sums rescaled when it grows), so no exponential overflows and no (n, c, c) tensor exists. Backward
 * runs the same kernel on P^T for beta; dbulk_kernel reduces the batch inside the kernel, 32 rows at a time.
 * Chain positions s are looped on the host: t (v + 1) launches forward, t (3v - 1) backward.
 * Kernels in data-flow order: alpha_init, log_vecmat, logz (forward); posterior, dbulk, dp0 (backward).
 * The arithmetic is logchain_math.h, the functions the CPU version calls. */

#define TILE LC1_TILE
#define ROWS LC1_ROWS
static_assert(TILE == 32,
              "log_vecmat_kernel loads one log input per thread: blockDim.x must equal the j tile");
static_assert(TILE % ROWS == 0, "the transition tile is loaded ROWS rows at a time");

__global__ void alpha_init_kernel(int n, int c, const float *x0, long long ld, const float *p0s,
                                  float *alpha0)
{
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (long long)n * c) return;
    long long b = idx / c;
    int j = (int)(idx % c);
    alpha0[b * ld + j] = logf(p0s[j]) + x0[b * ld + j];
}

__global__ void log_vecmat_kernel(int n, int c, const float *in, long long ld_in, const float *add_in,
                                  long long ld_add_in, const float *P, int transP, const float *add_out,
                                  long long ld_add_out, float *out, long long ld_out)
{
    /* P'(j0 + jj, k0 + kk); +1 column: transposed writes hit distinct banks */
    __shared__ float sP[TILE][TILE + 1];
    __shared__ float sA[ROWS][TILE];     /* the rows' log inputs for this j tile, then their weights */
    int tx = threadIdx.x, ty = threadIdx.y;
    int k0 = blockIdx.x * TILE, k = k0 + tx;
    long long b = (long long)blockIdx.y * ROWS + ty;
    float M = -INFINITY, acc = 0.0f; /* running max of row b's inputs, and sum_j exp(in - M) P'(j, k) */

    for (int j0 = 0; j0 < c; j0 += TILE) {
        int j = j0 + tx;
        float a = -INFINITY; /* out-of-range j weighs exp(-inf) = 0 */
        if (b < n && j < c) {
            a = in[b * ld_in + j];
            if (add_in) a += add_in[b * ld_add_in + j];
        }
        sA[ty][tx] = a;
        if (!transP) {
            for (int jj = ty; jj < TILE; jj += ROWS) /* coalesced along k */
                sP[jj][tx] = (j0 + jj < c && k < c) ? P[(size_t)(j0 + jj) * c + k] : 0.0f;
        } else {
            /* P'(j, k) = P[k][j]: coalesced along j, stored transposed */
            for (int kk = ty; kk < TILE; kk += ROWS)
                sP[tx][kk] = (j < c && k0 + kk < c) ? P[(size_t)(k0 + kk) * c + j] : 0.0f;
        }
        __syncthreads();

        float mt = -INFINITY;
        for (int jj = 0; jj < TILE; jj++) mt = fmaxf(mt, sA[ty][jj]);
        float Mn = fmaxf(M, mt);
        /* sync again: every thread of the row must read the log values before they are overwritten by
         * weights */
        __syncthreads();
        sA[ty][tx] = Mn == -INFINITY ? 0.0f : lc_weight(a, Mn); /* rows past n are all -inf: weight 0 */
        acc *= lc_rescale(M, Mn);
        M = Mn;
        __syncthreads();
        for (int jj = 0; jj < TILE; jj++) acc += sA[ty][jj] * sP[jj][tx];
        /* and before the next tile's loads overwrite sA and sP that slower threads may still read */
        __syncthreads();
    }
    if (b < n && k < c) out[b * ld_out + k] = lc_finish(add_out ? add_out[b * ld_add_out + k] : 0.0f, M, acc);
}

__global__ void logz_kernel(int n, int c, const float *alpha_last, long long ld, float *out, long long ld_out)
{
    long long b = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (b >= n) return; /* whole warps exit together: b is uniform across a warp */
    float m = -INFINITY, s = 0.0f;
    for (int k = lane; k < c; k += 32) {
        float a = alpha_last[b * ld + k], mn = fmaxf(m, a);
        s = s * lc_rescale(m, mn) + lc_weight(a, mn);
        m = mn;
    }
    for (int off = 16; off > 0; off /= 2) { /* merge (m, s) pairs across the warp */
        float m2 = __shfl_down_sync(0xffffffffu, m, off), s2 = __shfl_down_sync(0xffffffffu, s, off);
        float mn = fmaxf(m, m2);
        s = s * lc_rescale(m, mn) + s2 * lc_rescale(m2, mn);
        m = mn;
    }
    if (lane == 0) out[b * ld_out] = lc_finish(0.0f, m, s);
}

__global__ void posterior_kernel(int n, int c, const float *alpha_i, long long ld, const float *beta_i,
                                 const float *dout, const float *logz, long long ld_r, float *dx_i)
{
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (long long)n * c) return;
    long long b = idx / c;
    int j = (int)(idx % c);
    float beta = beta_i ? beta_i[b * c + j] : 0.0f; /* beta_{v-1} = 0 */
    dx_i[b * ld + j] = dout[b * ld_r] * lc_posterior(alpha_i[b * ld + j], beta, logz[b * ld_r]);
}

__global__ void dbulk_kernel(int n, int c, const float *alpha_i, const float *x_next, long long ld,
                             const float *beta_next, const float *dout, const float *logz, long long ld_r,
                             float *dbulk_i)
{
    __shared__ float sA[TILE][TILE + 1]; /* [bb][jj] alpha_i[b, j] - log Z_b */
    __shared__ float sG[TILE][TILE + 1]; /* [bb][kk] x_{i+1}[b, k] + beta_{i+1}[b, k] */
    __shared__ float sD[TILE];           /* dout_b */
    int tx = threadIdx.x, ty = threadIdx.y;
    int j0 = blockIdx.y * TILE, k0 = blockIdx.x * TILE;
    float acc[TILE / ROWS] = {0.0f}; /* rows j0 + ty + ROWS*q */

    for (long long b0 = 0; b0 < n; b0 += TILE) {
        for (int bb = ty; bb < TILE; bb += ROWS) {
            long long b = b0 + bb;
            int j = j0 + tx, k = k0 + tx;
            /* values first, then one plain store per tile (a store inside each arm of a ?: would be two) */
            float a = (b < n && j < c) ? alpha_i[b * ld + j] - logz[b * ld_r] : -INFINITY;
            float g = (b < n && k < c) ? x_next[b * ld + k] + beta_next[b * c + k] : -INFINITY;
            sA[bb][tx] = a;
            sG[bb][tx] = g;
            if (tx == 0) sD[bb] = b < n ? dout[b * ld_r] : 0.0f;
        }
        __syncthreads();
        for (int bb = 0; bb < TILE; bb++)
            for (int q = 0; q < TILE / ROWS; q++)
                acc[q] += sD[bb] * lc_transition_term(sA[bb][ty + ROWS * q], sG[bb][tx], 0.0f);
        __syncthreads();
    }
    for (int q = 0; q < TILE / ROWS; q++) {
        int j = j0 + ty + ROWS * q, k = k0 + tx;
        if (j < c && k < c) dbulk_i[(size_t)j * c + k] = acc[q];
    }
}

__global__ void dp0_kernel(int n, int c, const float *dx0, long long ld, const float *p0s, float *dp0s)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= c) return;
    float acc = 0.0f;
    for (long long b = 0; b < n; b++) {
        acc += dx0[b * ld + j];
    }
    dp0s[j] = acc / p0s[j];
}

/* ---- launchers ----------------------------------------------------------------------------------------- */

static unsigned blocks_for(long long count, int per_block)
{
    return (unsigned)((count + per_block - 1) / per_block);
}

static void log_vecmat(int n, int c, const float *in, long long ld_in, const float *add_in,
                       long long ld_add_in, const float *P, int transP, const float *add_out,
                       long long ld_add_out, float *out, long long ld_out)
{
    dim3 grid(blocks_for(c, LC1_TILE), blocks_for(n, LC1_ROWS)), block(LC1_TILE, LC1_ROWS);
    LAUNCH(log_vecmat_kernel, grid, block, 0)
    (n, c, in, ld_in, add_in, ld_add_in, P, transP, add_out, ld_add_out, out, ld_out);
    CUDA_CHECK_LAST();
}

static void lc1_forward(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                        float *out)
{
    int n = (int)d->n, c = (int)d->c;
    size_t t = d->t, v = d->v, V1 = v - 1, C2 = d->c * d->c;
    long long ld = (long long)(t * v * d->c); /* row stride of x and alpha over b */
    for (size_t s = 0; s < t; s++) {
        const float *xs = x + s * v * d->c; /* x[b, s, i, :] = xs + b*ld + i*c */
        float *as = alpha + s * v * d->c;
        LAUNCH(alpha_init_kernel, blocks_for((long long)n * c, LC1_EW_BLOCK), LC1_EW_BLOCK, 0)
        (n, c, xs, ld, p0 + s * d->c, as);
        CUDA_CHECK_LAST();
        for (size_t i = 0; i < V1; i++) {
            log_vecmat(n, c, as + i * d->c, ld, NULL, 0, bulk + (s * V1 + i) * C2, 0, xs + (i + 1) * d->c, ld,
                       as + (i + 1) * d->c, ld);
        }
        LAUNCH(logz_kernel, blocks_for((long long)n * 32, LC1_EW_BLOCK), LC1_EW_BLOCK, 0)
        (n, c, as + V1 * d->c, ld, out + s, (long long)t);
        CUDA_CHECK_LAST();
    }
}

/* dx is alpha's buffer: posterior_kernel reads alpha_i[b, j] and writes dx_i[b, j] from the same thread,
 * after dbulk_kernel for step i has read alpha_i (same stream, in order). bcur, bnext: (n, c) beta
 * ping-pong. */
static void lc1_backward(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                         const float *out, const float *dout, float *dbulk, float *dp0, float *bcur,
                         float *bnext)
{
    int n = (int)d->n, c = (int)d->c;
    size_t t = d->t, v = d->v, V1 = v - 1, C2 = d->c * d->c;
    long long ld = (long long)(t * v * d->c), ldr = (long long)t;
    float *dx = alpha;
    unsigned pb = blocks_for((long long)n * c, LC1_EW_BLOCK);
    dim3 tgrid(blocks_for(c, LC1_TILE), blocks_for(c, LC1_TILE)), tblock(LC1_TILE, LC1_ROWS);

    for (size_t s = 0; s < t; s++) {
        const float *xs = x + s * v * d->c, *as = alpha + s * v * d->c;
        float *dxs = dx + s * v * d->c;
        CUDA_CHECK(cudaMemset(bcur, 0, d->n * d->c * sizeof(float))); /* beta_{v-1} = 0 */
        LAUNCH(posterior_kernel, pb, LC1_EW_BLOCK, 0)
        (n, c, as + V1 * d->c, ld, NULL, dout + s, out + s, ldr, dxs + V1 * d->c);
        CUDA_CHECK_LAST();
        for (size_t i = V1; i-- > 0;) {
            LAUNCH(dbulk_kernel, tgrid, tblock, 0)
            (n, c, as + i * d->c, xs + (i + 1) * d->c, ld, bcur, dout + s, out + s, ldr,
             dbulk + (s * V1 + i) * C2);
            CUDA_CHECK_LAST();
            log_vecmat(n, c, bcur, c, xs + (i + 1) * d->c, ld, bulk + (s * V1 + i) * C2, 1, NULL, 0, bnext,
                       c);
            LAUNCH(posterior_kernel, pb, LC1_EW_BLOCK, 0)
            (n, c, as + i * d->c, ld, bnext, dout + s, out + s, ldr, dxs + i * d->c);
            CUDA_CHECK_LAST();
            float *tmp = bcur;
            bcur = bnext;
            bnext = tmp;
        }
        LAUNCH(dp0_kernel, blocks_for(c, LC1_DP0_BLOCK), LC1_DP0_BLOCK, 0)
        (n, c, dxs, ld, p0 + s * d->c, dp0 + s * d->c);
        CUDA_CHECK_LAST();
    }
}

/* ---- device memory: the buffers around this version's launchers (logchain_device.h); the caller attaches
 * the cuBLAS workspace where the version uses cuBLAS (the session does: uses_cublas) --------------------- */

extern "C" float *cuda_lc_forward_v1(const lc_dims *d, const float *x, const float *bulk, const float *p0,
                                     float **alpha_out)
{
    float *out = lc_dev_forward_out(d, alpha_out);
    lc1_forward(d, x, bulk, p0, *alpha_out, out);
    return out;
}

extern "C" void cuda_lc_backward_v1(const lc_dims *d, const float *x, const float *bulk, const float *p0,
                                    float *alpha, const float *out, const float *dout, float **dx,
                                    float **dbulk, float **dp0)
{
    lc_dev_grads(d, alpha, dx, dbulk, dp0);
    float *bcur = (float *)dev_alloc_array(d->n * d->c, DT_F32, "backward: beta_{i+1} (n,c)");
    float *bnext = (float *)dev_alloc_array(d->n * d->c, DT_F32, "backward: beta_i (n,c)");
    lc1_backward(d, x, bulk, p0, alpha, out, dout, *dbulk, *dp0, bcur, bnext);
    dev_free(bcur);
    dev_free(bnext);
}
