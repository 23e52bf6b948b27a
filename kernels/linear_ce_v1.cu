/* linear_ce_v1.cu - lesson 5, cuda-v1: the CPU's fused chunk loop on the GPU. Per chunk of rows: logits
 * (rows, V) f32 = x_c . W^T by cuBLAS; one row kernel (a block per row, online logsumexp) writes the loss and
 * the gradient (softmax - onehot) * scale over the row as bf16, in place; grad_input = g . W and
 * grad_weight += g^T x_c by cuBLAS (beta = 1: no (V, H) temporary, no chunk's part rounded to bf16).
 * Backward multiplies the saved gradients by dloss. Arithmetic: linear_ce.h. */
#include "linear_ce.h"

#include "runtime/cuda_check.h"
#include "runtime/cuda_track.h"
#include "runtime/launch.h"

static_assert(CUBLAS_WORKSPACE_BYTES == CUBLAS_WORKSPACE_BYTES_C,
              "the C formula's cuBLAS workspace is the real one");

static_assert(LCE_ROW_THREADS % LCE_WARP == 0 && LCE_ROW_THREADS / LCE_WARP <= LCE_WARP,
              "the block merge reads one partial per warp into a single warp");

static unsigned blocks_for(long long n, int per) { return (unsigned)((n + per - 1) / per); }

__global__ void lce_mean_scale_kernel(long long N, const int32_t *target /* (N,) */, float *scale /* (1,) */)
{
    __shared__ unsigned long long part[LCE_SCALE_THREADS];
    unsigned long long n = 0;
    for (long long i = threadIdx.x; i < N; i += blockDim.x) {
        n += target[i] != LCE_IGNORE;
    }
    part[threadIdx.x] = n;
    __syncthreads(); /* every partial written before the tree reads it */
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if ((int)threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads(); /* this level done before the next reads it */
    }
    if (threadIdx.x == 0) scale[0] = part[0] ? 1.0f / (float)part[0] : 0.0f;
}

/* (m, s) of the whole block, returned to every thread */
__device__ lce_lse_acc block_lse(lce_lse_acc a)
{
    __shared__ float sm[LCE_ROW_THREADS / LCE_WARP], ss[LCE_ROW_THREADS / LCE_WARP];
    int lane = threadIdx.x % LCE_WARP, warp = threadIdx.x / LCE_WARP, nw = blockDim.x / LCE_WARP;
    a = lce_warp_lse(a);
    if (lane == 0) { sm[warp] = a.m; ss[warp] = a.s; }
    __syncthreads(); /* the warps' partials are in shared memory */
    lce_lse_acc t = lce_lse_init();
    for (int w = 0; w < nw; w++) {
        lce_lse_acc b;
        b.m = sm[w];
        b.s = ss[w];
        t = lce_lse_merge(t, b); /* every thread merges the same partials in the same order: same result */
    }
    return t;
}

__global__ void lce_rows_kernel(int V, float *z /* (rows, V) f32 -> (rows, 2V) bf16 */,
                                const int32_t *target /* (rows,) */, const float *scale /* (1,) */,
                                float *row_loss /* (rows,) */)
{
    long long r = blockIdx.x;
    float *zr = z + r * V;    /* (V,) f32 logits of this row */
    bf16 *gr = (bf16 *)zr;    /* (V,) bf16 gradient, over the first half of the same bytes */
    int t = target[r], tid = threadIdx.x, B = blockDim.x;
    if (t == LCE_IGNORE) { /* uniform across the block: nothing to read, zeros to write */
        for (int v = tid; v < V; v += B) {
            gr[v] = 0;
        }
        if (tid == 0) row_loss[r] = 0.0f;
        return;
    }
    lce_lse_acc a = lce_lse_init();
    for (int v = tid; v < V; v += B) {
        a = lce_lse_add(a, zr[v]);
    }
    float lse = lce_lse_finish(block_lse(a)), zt = zr[t], sc = scale[0];
    if (tid == 0) row_loss[r] = lce_row_loss(lse, zt);
    /* In place: in step k the block writes bf16 [kB, kB+B), i.e. the bytes of floats [kB/2, kB/2 + B/2),
     * which were read in step k/2 <= k. The barrier between each step's reads and writes orders the k = 0
     * case, and every earlier step finished its reads at an earlier barrier. zt was read before the first
     * barrier. */
    for (int base = 0; base < V; base += B) {
        int v = base + tid;
        float zv = v < V ? zr[v] : 0.0f;
        __syncthreads();
        if (v < V) gr[v] = bf16_from_f32(lce_grad(zv, lse, v == t, sc));
    }
}

__global__ void lce_loss_kernel(long long N, const float *row_loss /* (N,) */, const float *scale /* (1,) */,
                                float *loss /* (1,) */)
{
    __shared__ double part[LCE_SCALE_THREADS];
    double s = 0.0;
    for (long long i = threadIdx.x; i < N; i += blockDim.x) {
        s += row_loss[i];
    }
    part[threadIdx.x] = s;
    __syncthreads(); /* every partial written before the tree reads it */
    for (int k = blockDim.x / 2; k > 0; k /= 2) {
        if ((int)threadIdx.x < k) part[threadIdx.x] += part[threadIdx.x + k];
        __syncthreads(); /* this level done before the next reads it */
    }
    if (threadIdx.x == 0) loss[0] = (float)(part[0] * (double)scale[0]);
}

__global__ void lce_scale_bf16_kernel(long long n, bf16 *p /* (n,) */, const float *g /* (1,) */)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = bf16_from_f32(bf16_to_f32(p[i]) * g[0]);
}

__global__ void lce_scale_f32_kernel(long long n, float *p /* (n,) */, const float *g /* (1,) */)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] *= g[0];
}

void lce_launch_mean_scale(long long N, const int32_t *target, float *scale)
{
    LAUNCH(lce_mean_scale_kernel, 1, LCE_SCALE_THREADS, 0)(N, target, scale);
    CUDA_CHECK_LAST();
}

static void lce_launch_rows(int rows, int V, float *z, const int32_t *target, const float *scale,
                            float *row_loss)
{
    LAUNCH(lce_rows_kernel, rows, LCE_ROW_THREADS, 0)(V, z, target, scale, row_loss);
    CUDA_CHECK_LAST();
}

void lce_launch_loss(long long N, const float *row_loss, const float *scale, float *loss)
{
    LAUNCH(lce_loss_kernel, 1, LCE_SCALE_THREADS, 0)(N, row_loss, scale, loss);
    CUDA_CHECK_LAST();
}

static void lce_launch_scale_bf16(long long n, bf16 *p, const float *g)
{
    if (n == 0) return;
    LAUNCH(lce_scale_bf16_kernel, blocks_for(n, LCE_SCALE_THREADS), LCE_SCALE_THREADS, 0)(n, p, g);
    CUDA_CHECK_LAST();
}

static void lce_launch_scale_f32(long long n, float *p, const float *g)
{
    if (n == 0) return;
    LAUNCH(lce_scale_f32_kernel, blocks_for(n, LCE_SCALE_THREADS), LCE_SCALE_THREADS, 0)(n, p, g);
    CUDA_CHECK_LAST();
}

/* Row-major C (M, N) = alpha op(A) op(B) + beta C with any cuBLAS data types, as column-major C^T = op(B)^T
 * op(A)^T (kernels/runtime/gemm_layout.h's mapping): the operands swap, M and N swap, each keeps its own
 * transpose flag. */
static void gemm_ex_rowmajor(int transA, int transB, int M, int N, int K, const void *A, cudaDataType ta,
                             int lda, const void *B, cudaDataType tb, int ldb, float beta, void *C,
                             cudaDataType tc, int ldc)
{
    float alpha = 1.0f;
    cublasHandle_t h = (cublasHandle_t)cublas_handle();
    cuda_count_launch(); /* one cuBLAS call: one launch in "launches per pass" */
    CUBLAS_CHECK(cublasGemmEx(h, transB ? CUBLAS_OP_T : CUBLAS_OP_N, transA ? CUBLAS_OP_T : CUBLAS_OP_N, N, M,
                              K, &alpha, B, tb, ldb, A, ta, lda, &beta, C, tc, ldc, CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT));
}

static void lce1_chunk(const lce_dims *d, size_t k, const bf16 *x, const bf16 *W, const int32_t *target,
                       float *logits, const float *scale, float *row_loss, bf16 *grad_input,
                       float *grad_weight)
{
    size_t start = k * d->chunk;
    int rows = (int)lce_chunk_rows(d, k), H = (int)d->H, V = (int)d->V;
    const bf16 *xc = x + start * d->H; /* (rows, H) */
    /* logits (rows, V) f32 = xc (rows, H) . W^T; W stored (V, H) = (N, K): transB */
    gemm_ex_rowmajor(0, 1, rows, V, H, xc, CUDA_R_16BF, H, W, CUDA_R_16BF, H, 0.0f, logits, CUDA_R_32F, V);
    lce_launch_rows(rows, V, logits, target + start, scale, row_loss + start);
    const bf16 *g = (const bf16 *)logits; /* (rows, V) bf16, row stride 2V */
    /* grad_input rows (rows, H) bf16 = g (rows, V) . W (V, H); f32 accumulation, rounded once on the store */
    gemm_ex_rowmajor(0, 0, rows, H, V, g, CUDA_R_16BF, 2 * V, W, CUDA_R_16BF, H, 0.0f,
                     grad_input + start * d->H, CUDA_R_16BF, H);
    /* grad_weight (V, H) f32 = 1 * grad_weight + g^T (V, rows) . xc (rows, H); g stored (rows, V) = (K, M):
     * transA */
    gemm_ex_rowmajor(1, 0, V, H, rows, g, CUDA_R_16BF, 2 * V, xc, CUDA_R_16BF, H, 1.0f, grad_weight,
                     CUDA_R_32F, H);
}

extern "C" float *lce1_forward(const lce_dims *dims, const bf16 *x, const bf16 *W, const int32_t *target,
                                   lce1_saved *saved)
{
    lce_dims dc = lce_cuda_dims(dims); /* the traffic model's chunk (linear_ce.h), or --chunk */
    const lce_dims *d = &dc;
    saved->grad_weight = (float *)dev_alloc_array(lce_w_count(d), DT_F32, "grad_weight [V,H] f32 (saved)");
    saved->grad_input = (bf16 *)dev_alloc_array(lce_x_count(d), DT_BF16, "grad_input [N,H] bf16 (saved)");
    /* beta = 1 adds onto zeros */
    CUDA_CHECK(cudaMemset(saved->grad_weight, 0, lce_w_count(d) * sizeof(float)));
    size_t bytes = lce1_workspace_bytes(d);
    arena a;
    lce1_workspace w;
    arena_init(&a, dev_alloc(bytes, "workspace: logits [c,V] f32 + row losses"), bytes);
    lce1_carve(&a, d, &w);
    lce_launch_mean_scale((long long)d->N, target, w.scale);
    for (size_t k = 0; k < lce_chunks(d); k++) {
        lce1_chunk(d, k, x, W, target, w.logits, w.scale, w.row_loss, saved->grad_input, saved->grad_weight);
    }
    float *loss = (float *)dev_alloc_array(1, DT_F32, "loss [1] f32");
    lce_launch_loss((long long)d->N, w.row_loss, w.scale, loss);
    dev_free(a.base);
    return loss;
}

extern "C" void lce1_backward(const lce_dims *d, lce1_saved *saved, const float *dloss, bf16 **dx,
                                  float **dW)
{
    lce_launch_scale_bf16((long long)lce_x_count(d), saved->grad_input, dloss);
    lce_launch_scale_f32((long long)lce_w_count(d), saved->grad_weight, dloss);
    dev_relabel(saved->grad_input, "dx [N,H] bf16 (grad_input, scaled)");
    dev_relabel(saved->grad_weight, "dW [V,H] f32 (grad_weight, scaled)");
    *dx = saved->grad_input;
    *dW = saved->grad_weight;
    saved->grad_input = NULL;
    saved->grad_weight = NULL;
}
