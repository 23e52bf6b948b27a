/* logchain_v4.cu - lesson 2, cuda-v4: the chain as one persistent kernel per pass.
 * Changed from v3: a block owns LC4_ROWS rows (b, s) and walks all v - 1 steps itself, the rows' state in
 * shared memory; dbulk's operands are written out and summed by one strided-batched GEMM. */
#include "logchain_math.h"
#include "logchain_device.h"
#include "logchain_problem.h"

#include "runtime/cublas_rowmajor.h"
#include "runtime/cuda_check.h"
#include "runtime/cuda_track.h"
#include "runtime/launch.h"
#include "runtime/warp_reduce.h"

/* v2's dp0 = sum_b dx_0 / p0 (kernels/logchain_v2.cu) */
void lc2_dp0(const lc_dims *d, const float *dx, const float *p0, float *dp0);

/* v3 still runs 2v - 1 small launches per forward (a GEMM over all n rows, then a row kernel, per step), each
 * filling a few SMs and each waiting for the last. But rows (b, s) are independent: a block that owns
 * LC4_ROWS rows can walk all v - 1 steps itself, keeping the rows' state in shared memory and never leaving
 * the kernel. Per step it streams P_i (c, c) from L2 once for its rows: LC4_WARPS warps split the sum over j,
 * a lane owns the states k = lane + 32 q in registers, and the warps' shares meet in shared memory.
 *   lc4_forward_kernel   alpha_0 .. alpha_{v-1} and log Z, one launch
 *   lc4_backward_kernel  beta, dx written over alpha, and each step's dbulk operands U_i, W_i; then one
 *                        strided-batched GEMM dbulk_{s,i} = U^T W over every (s, i) and v2's dp0 kernel
 * dbulk sums over all n rows, which no block owns: the kernel writes the operands (2 t (v-1) n c floats, the
 * price of one launch) and cuBLAS reduces them, as v2 does step by step.
 * Its target and the time model's figures: docs/lesson-2.md. What holds it back is issue and latency: one
 * block of 8 warps per SM, every warp waiting for its rows of P_i from L2 in the same phase of the step,
 * nothing left to hide the wait; and per warp more integer instructions than FP32 ones (docs/lesson-2.md, the
 * model's counts). The arithmetic is logchain_math.h's. */

static_assert(LC4_ROWS <= LC4_WARPS, "one warp per row computes a row's maximum");
static_assert(LC4_MAX_C == 32 * LC4_KQ, "a lane owns LC4_KQ states, 32 lanes apart");


__device__ static inline int lc4_clamp(int i, int last) { return i < last ? i : last; }

/* row (c): log values in, weights exp(a - m) out, m = the row's maximum; one warp, each lane its own
 * elements */
__device__ static inline void lc4_row_weights(float *row, int c, int lane, float *m)
{
    float mx = -INFINITY;
    for (int k = lane; k < c; k += 32) mx = fmaxf(mx, row[k]);
    mx = warp_max(mx);
    for (int k = lane; k < c; k += 32) row[k] = lc_weight(row[k], mx);
    if (lane == 0) *m = mx;
}

/* The four sums over the warp of a[0..3] in 6 shuffles instead of 4 x 5: each exchange halves the outputs a
 * lane keeps. Lane l ends with the sum of output lc4_quad_of(l). */
__device__ static inline int lc4_quad_of(int lane) { return 2 * (lane >> 4 & 1) + (lane >> 3 & 1); }
__device__ static inline float lc4_quad_sum(const float *a, int lane)
{
    int hi = lane & 16, mid = lane & 8;
    float k0 = hi ? a[2] : a[0], k1 = hi ? a[3] : a[1];
    k0 += __shfl_xor_sync(0xffffffffu, hi ? a[0] : a[2], 16);
    k1 += __shfl_xor_sync(0xffffffffu, hi ? a[1] : a[3], 16);
    float k = mid ? k1 : k0;
    k += __shfl_xor_sync(0xffffffffu, mid ? k0 : k1, 8);
    for (int off = 4; off > 0; off /= 2) k += __shfl_xor_sync(0xffffffffu, k, off);
    return k;
}

/* Block (bx, s) owns rows b = bx LC4_ROWS + r, r < LC4_ROWS, of chain position s; rows past n compute on -inf
 * and store nothing, so every thread meets every barrier. */
__global__ void lc4_forward_kernel(int n, int c, int t, int v, const float *x, const float *bulk,
                                   const float *p0, float *alpha, float *out)
{
    /* x, alpha (n, t, v, c); bulk (1, t, v-1, c, c); p0 (1, t, c); out (n, t) */
    DYNAMIC_SHARED(float, smem);
    /* (LC4_ROWS, c) alpha_i, then its weights exp(alpha_i - m_i) */
    float *sW = smem;
    /* (LC4_WARPS, LC4_ROWS, c) each warp's share of the sum over j */
    float *sPart = sW + LC4_ROWS * c;
    float *sM = sPart + LC4_WARPS * LC4_ROWS * c; /* (LC4_ROWS) m_i, the rows' maxima */
    int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, s = blockIdx.y;
    /* ld: x's and alpha's b stride */
    long long b0 = (long long)blockIdx.x * LC4_ROWS, ld = (long long)t * v * c;
    const float *xs = x + (b0 * t + s) * v * c;   /* row r's x_i at xs + r ld + i c */
    float *as = alpha + (b0 * t + s) * v * c;
    const float *Ps = bulk + (long long)s * (v - 1) * c * c; /* P_i at Ps + i c^2 */

    for (int e = tid; e < LC4_ROWS * c; e += LC4_BLOCK) {
        int r = e / c, k = e % c;
        float a = -INFINITY;
        if (b0 + r < n) {
            a = logf(p0[(long long)s * c + k]) + xs[r * ld + k];
            as[r * ld + k] = a;
        }
        sW[e] = a;
    }
    __syncthreads();
    if (warp < LC4_ROWS) lc4_row_weights(sW + warp * c, c, lane, &sM[warp]);
    __syncthreads();

    for (int i = 0; i < v - 1; i++) {
        const float *P = Ps + (long long)i * c * c;
        float acc[LC4_ROWS][LC4_KQ] = {{0.0f}}; /* S[r][lane + 32 q], this warp's j only */
        for (int j0 = warp; j0 < c; j0 += LC4_JU * LC4_WARPS) {
            /* LC4_JU rows of P_i, all LC4_JU x LC4_KQ loads in flight at once: a warp waits for L2 once per
             * LC4_JU rows. States past c read P[j][c-1] (a sector the warp reads anyway) into accumulators
             * that are never stored; rows past c read row c-1, zeroed */
            float p[LC4_JU][LC4_KQ];
            for (int u = 0; u < LC4_JU; u++) {
                int j = j0 + u * LC4_WARPS;
                const float *Pj = P + (long long)lc4_clamp(j, c - 1) * c;
                for (int q = 0; q < LC4_KQ; q++) {
                    float pv = Pj[lc4_clamp(lane + 32 * q, c - 1)];
                    p[u][q] = j < c ? pv : 0.0f;
                }
            }
            for (int u = 0; u < LC4_JU; u++)
                for (int r = 0; r < LC4_ROWS; r++) {
                    /* one word for the whole warp */
                    float w = sW[r * c + lc4_clamp(j0 + u * LC4_WARPS, c - 1)];
                    for (int q = 0; q < LC4_KQ; q++) acc[r][q] += w * p[u][q];
                }
        }
        /* q outer: a warp's k-th store is one q, one row */
        for (int q = 0; q < LC4_KQ && lane + 32 * q < c; q++)
            for (int r = 0; r < LC4_ROWS; r++) sPart[(warp * LC4_ROWS + r) * c + lane + 32 * q] = acc[r][q];
        __syncthreads(); /* every warp's share is in, and every read of sW is done */
        for (int e = tid; e < LC4_ROWS * c; e += LC4_BLOCK) {
            int r = e / c, k = e % c;
            float S = 0.0f;
            for (int w = 0; w < LC4_WARPS; w++) S += sPart[(w * LC4_ROWS + r) * c + k];
            float a = -INFINITY;
            if (b0 + r < n) {
                a = lc_finish(xs[r * ld + (long long)(i + 1) * c + k], sM[r], S);
                as[r * ld + (long long)(i + 1) * c + k] = a;
            }
            sW[e] = a;
        }
        __syncthreads();
        if (warp < LC4_ROWS) lc4_row_weights(sW + warp * c, c, lane, &sM[warp]);
        __syncthreads();
    }
    if (warp < LC4_ROWS && b0 + warp < n) {
        float sum = 0.0f;
        for (int k = lane; k < c; k += 32) sum += sW[warp * c + k];
        sum = warp_sum(sum);
        if (lane == 0) out[(b0 + warp) * t + s] = lc_finish(0.0f, sM[warp], sum);
    }
}

/* Rows as in lc4_forward_kernel. Step i (v-2 down to 0) finishes variable i+1 (dx_{i+1} over alpha_{i+1}),
 * writes U_i = dout exp(alpha_i + mw - log Z) and W_i = exp(x_{i+1} + beta_{i+1} - mw) for the GEMM, then
 * beta_i = mw + log(P_i W_i): warp and lanes over P_i's row j and its k (coalesced), four rows j per quad
 * sum. */
__global__ void lc4_backward_kernel(int n, int c, int t, int v, const float *x, const float *bulk,
                                    const float *dout, const float *out, float *alpha, float *U, float *W)
{
    /* x, alpha (n, t, v, c): alpha in, dx out; dout, out (n, t); U, W (t, v-1, n, c): step (s, i)'s (n, c)
     * operand at (s (v-1) + i) n c */
    DYNAMIC_SHARED(float, smem);
    float *sB = smem;                 /* (LC4_ROWS, c) beta_{i+1}, then beta_i */
    float *sW = sB + LC4_ROWS * c;    /* (LC4_ROWS, c) x_{i+1} + beta_{i+1}, then W_i */
    float *sM = sW + LC4_ROWS * c;    /* (LC4_ROWS) mw, the maxima of x_{i+1} + beta_{i+1} */
    float *sG = sM + LC4_ROWS;        /* (LC4_ROWS) dout */
    float *sZ = sG + LC4_ROWS;        /* (LC4_ROWS) log Z */
    int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, s = blockIdx.y;
    long long b0 = (long long)blockIdx.x * LC4_ROWS, ld = (long long)t * v * c, nc = (long long)n * c;
    const float *xs = x + (b0 * t + s) * v * c;
    float *as = alpha + (b0 * t + s) * v * c;
    const float *Ps = bulk + (long long)s * (v - 1) * c * c;

    if (tid < LC4_ROWS) {
        int ok = b0 + tid < n;
        sG[tid] = ok ? dout[(b0 + tid) * t + s] : 0.0f;
        sZ[tid] = ok ? out[(b0 + tid) * t + s] : 0.0f;
    }
    for (int e = tid; e < LC4_ROWS * c; e += LC4_BLOCK) sB[e] = 0.0f; /* beta_{v-1} = 0 */
    __syncthreads();

    for (int i = v - 2; i >= 0; i--) {
        long long a1 = (long long)(i + 1) * c, a0 = (long long)i * c;
        for (int e = tid; e < LC4_ROWS * c; e += LC4_BLOCK) {
            int r = e / c, k = e % c;
            float w = -INFINITY;
            if (b0 + r < n) {
                w = xs[r * ld + a1 + k] + sB[e];
                as[r * ld + a1 + k] = sG[r] * lc_posterior(as[r * ld + a1 + k], sB[e], sZ[r]); /* dx_{i+1} */
            }
            sW[e] = w;
        }
        __syncthreads();
        if (warp < LC4_ROWS) lc4_row_weights(sW + warp * c, c, lane, &sM[warp]);
        __syncthreads();
        long long step = ((long long)s * (v - 1) + i) * nc + b0 * c; /* row b0 of U_i, W_i */
        for (int e = tid; e < LC4_ROWS * c; e += LC4_BLOCK) {
            int r = e / c, k = e % c;
            if (b0 + r < n) {
                W[step + e] = sW[e];
                U[step + e] = sG[r] * lc_transition_term(as[r * ld + a0 + k], sM[r], sZ[r]);
            }
        }
        /* beta_i[r][j] = mw_r + log sum_k P_i[j][k] W_i[r][k]; sB's last reader was the first loop (barrier
         * since) */
        const float *P = Ps + (long long)i * c * c;
        float wr[LC4_ROWS][LC4_KQ]; /* W_i[r][lane + 32 q] */
        for (int q = 0; q < LC4_KQ; q++)
            for (int r = 0; r < LC4_ROWS; r++)
                wr[r][q] = lane + 32 * q < c ? sW[r * c + lane + 32 * q] : 0.0f;
        for (int j0 = 4 * warp; j0 < c; j0 += 4 * LC4_WARPS) {
            float part[LC4_ROWS][4] = {{0.0f}};
            for (int jj = 0; jj < 4; jj++) {
                /* rows past c and states past c read P's last row or column (no sector more); the states'
                 * products are zeroed, the rows' sums never stored */
                const float *Pj = P + (long long)lc4_clamp(j0 + jj, c - 1) * c;
                float p[LC4_KQ];
                for (int q = 0; q < LC4_KQ; q++) p[q] = Pj[lc4_clamp(lane + 32 * q, c - 1)];
                for (int q = 0; q < LC4_KQ; q++) {
                    float pq = lane + 32 * q < c ? p[q] : 0.0f;
                    for (int r = 0; r < LC4_ROWS; r++) part[r][jj] += wr[r][q] * pq;
                }
            }
            int j = j0 + lc4_quad_of(lane);
            for (int r = 0; r < LC4_ROWS; r++) {
                float S = lc4_quad_sum(part[r], lane);
                if ((lane & 7) == 0 && j < c) sB[r * c + j] = lc_finish(0.0f, sM[r], S);
            }
        }
        __syncthreads();
    }
    for (int e = tid; e < LC4_ROWS * c; e += LC4_BLOCK) {
        int r = e / c, k = e % c;
        if (b0 + r < n) as[r * ld + k] = sG[r] * lc_posterior(as[r * ld + k], sB[e], sZ[r]); /* dx_0 */
    }
}

/* ---- launchers ----------------------------------------------------------------------------------------- */

static dim3 lc4_grid(const lc_dims *d)
{
    return dim3((unsigned)((d->n + LC4_ROWS - 1) / LC4_ROWS), (unsigned)d->t);
}

/* dynamic shared memory of each kernel, in bytes (c <= LC4_MAX_C keeps both under 48 KiB) */
static size_t lc4_forward_smem(size_t c)
{
    return sizeof(float) * (LC4_ROWS * c * (1 + LC4_WARPS) + LC4_ROWS);
}
static size_t lc4_backward_smem(size_t c) { return sizeof(float) * (2 * LC4_ROWS * c + 3 * LC4_ROWS); }

/* 1 launch. alpha (n,t,v,c), out (n,t) allocated by the caller. */
static void lc4_forward(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                        float *out)
{
    LAUNCH(lc4_forward_kernel, lc4_grid(d), LC4_BLOCK, lc4_forward_smem(d->c))
    ((int)d->n, (int)d->c, (int)d->t, (int)d->v, x, bulk, p0, alpha, out);
    CUDA_CHECK_LAST();
}

/* 3 launches: the kernel, the dbulk GEMM, dp0. dx = alpha, written over it; U, W: (t, v-1, n, c) scratch. */
static void lc4_backward(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                         const float *out, const float *dout, float *dbulk, float *dp0, float *U, float *W)
{
    int n = (int)d->n, c = (int)d->c;
    long long nc = (long long)n * c, C2 = (long long)c * c;
    LAUNCH(lc4_backward_kernel, lc4_grid(d), LC4_BLOCK, lc4_backward_smem(d->c))
    (n, c, (int)d->t, (int)d->v, x, bulk, dout, out, alpha, U, W);
    CUDA_CHECK_LAST();
    /* dbulk_{s,i} (c, c) = U_{s,i}^T (c, n) . W_{s,i} (n, c), every (s, i) at once: the batch is the inner
     * dim */
    ROWMAJOR_SGEMM_STRIDED_BATCHED((cublasHandle_t)cublas_handle(), 1, 0, c, c, n, 1.0f, U, c, nc, W, c, nc,
                                   0.0f, dbulk, c, C2, (int)(d->t * (d->v - 1)));
    lc2_dp0(d, alpha, p0, dp0);
}

/* ---- device memory: the buffers around this version's launchers (logchain_device.h); the caller attaches
 * the cuBLAS workspace where the version uses cuBLAS (the session does: uses_cublas) --------------------- */

extern "C" float *cuda_lc_forward_v4(const lc_dims *d, const float *x, const float *bulk, const float *p0,
                                     float **alpha_out)
{
    float *out = lc_dev_forward_out(d, alpha_out);
    lc4_forward(d, x, bulk, p0, *alpha_out, out);
    return out;
}

/* the backward kernel writes dx over alpha and every step's GEMM operands U, W */
extern "C" void cuda_lc_backward_v4(const lc_dims *d, const float *x, const float *bulk, const float *p0,
                                    float *alpha, const float *out, const float *dout, float **dx,
                                    float **dbulk, float **dp0)
{
    lc_dev_grads(d, alpha, dx, dbulk, dp0);
    lc_operands o = lc_dev_step_operands(d);
    lc4_backward(d, x, bulk, p0, alpha, out, dout, *dbulk, *dp0, o.U, o.W);
    lc_dev_operands_free(o);
}
