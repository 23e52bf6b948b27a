/* linear_ce_v2.cu - lesson 5, cuda-v2: no logits buffer (the Cut Cross-Entropy way). Changed from v1: each
 * logit x[n] . W[v] is a scalar dot in a register, used and dropped; forward saves only each row's logsumexp;
 * backward recomputes every logit: dx by one block per row (an fp32 accumulator [H] in shared memory), dW by
 * one block per LCE2_TILE_V vocabulary rows, each element written by one thread in a fixed order (the same
 * bits every run, no atomics). No cuBLAS, no tensor cores: simple, not fast. */
#include "linear_ce.h"

#include "runtime/cuda_check.h"
#include "runtime/cuda_track.h"
#include "runtime/launch.h"

static_assert(LCE2_THREADS % LCE_WARP == 0 && LCE2_THREADS / LCE_WARP <= LCE_WARP,
              "the block merge reads one partial per warp into a single warp");
static_assert(LCE2_TILE_N * LCE2_TILE_V * sizeof(float) + LCE2_THREADS * sizeof(float) <= LCE2_SMEM_LIMIT,
              "the dW kernel's g tile fits the static shared memory of a block");

/* (m, s) of the whole block, returned to every thread; called once per kernel (its shared arrays are
 * reused) */
static __device__ lce_lse_acc lce2_block_lse(lce_lse_acc a)
{
    __shared__ float sm[LCE2_THREADS / LCE_WARP], ss[LCE2_THREADS / LCE_WARP];
    int lane = threadIdx.x % LCE_WARP, warp = threadIdx.x / LCE_WARP;
    a = lce_warp_lse(a);
    if (lane == 0) { sm[warp] = a.m; ss[warp] = a.s; }
    __syncthreads(); /* the warps' partials are in shared memory before any thread merges them */
    lce_lse_acc t = lce_lse_init();
    for (int w = 0; w < LCE2_THREADS / LCE_WARP; w++) {
        lce_lse_acc b;
        b.m = sm[w];
        b.s = ss[w];
        t = lce_lse_merge(t, b); /* every thread merges the same partials in the same order: same result */
    }
    return t;
}

__global__ void lce2_forward_kernel(int V, int H, const bf16 *x /* (N, H) */, const bf16 *W /* (V, H) */,
                                    const int32_t *target /* (N,) */, float *lse /* (N,) */,
                                    float *row_loss /* (N,) */)
{
    long long n = blockIdx.x;
    int t = target[n], tid = threadIdx.x;
    if (t == LCE_IGNORE) { /* uniform across the block: no barrier is skipped by only some threads */
        if (tid == 0) { lse[n] = 0.0f; row_loss[n] = 0.0f; }
        return;
    }
    const bf16 *xn = x + n * H; /* (H,) */
    lce_lse_acc a = lce_lse_init();
    /* 64-bit counters here and below: V (and N) may be up to 2^31 - 1, where v + LCE2_THREADS would wrap */
    for (long long v = tid; v < V; v += LCE2_THREADS) {
        a = lce_lse_add(a, lce_dot_bf16(xn, W + v * H, H));
    }
    float l = lce_lse_finish(lce2_block_lse(a));
    if (tid == 0) { /* the target logit once more: the same dot in the same order, so the same float */
        lse[n] = l;
        row_loss[n] = lce_row_loss(l, lce_dot_bf16(xn, W + (long long)t * H, H));
    }
}

__global__ void lce2_dx_kernel(int V, int H, const bf16 *x /* (N, H) */, const bf16 *W /* (V, H) */,
                               const int32_t *target /* (N,) */, const float *lse /* (N,) */,
                               const float *scale /* (1,) */, const float *dloss /* (1,) */,
                               bf16 *dx /* (N, H) */)
{
    __shared__ float g[LCE2_THREADS]; /* this block of the row's gradient, g[j] for v = v0 + j */
    DYNAMIC_SHARED(float, acc);       /* (H,) the row's dx in fp32; acc[h] is only touched by thread h % B */
    long long n = blockIdx.x;
    int t = target[n], tid = threadIdx.x;
    bf16 *dxn = dx + n * H;
    if (t == LCE_IGNORE) { /* uniform across the block */
        for (int h = tid; h < H; h += LCE2_THREADS) dxn[h] = 0;
        return;
    }
    const bf16 *xn = x + n * H;
    float sc = scale[0] * dloss[0], ln = lse[n];
    for (int h = tid; h < H; h += LCE2_THREADS) acc[h] = 0.0f;
    for (long long v0 = 0; v0 < V; v0 += LCE2_THREADS) {
        long long v = v0 + tid;
        int nb = V - v0 < LCE2_THREADS ? (int)(V - v0) : LCE2_THREADS;
        g[tid] = v < V ? lce_grad(lce_dot_bf16(xn, W + v * H, H), ln, v == t, sc) : 0.0f;
        __syncthreads(); /* all nb gradients of this block are in g before any thread reads them all */
        for (int h = tid; h < H; h += LCE2_THREADS) {
            float s = acc[h];
            for (int j = 0; j < nb; j++) s += g[j] * bf16_to_f32(W[(v0 + j) * H + h]);
            acc[h] = s;
        }
        __syncthreads(); /* every thread is done reading g before the next block's gradients overwrite it */
    }
    for (int h = tid; h < H; h += LCE2_THREADS) dxn[h] = bf16_from_f32(acc[h]); /* rounded once */
}

__global__ void lce2_dw_kernel(int N, int V, int H, const bf16 *x /* (N, H) */, const bf16 *W /* (V, H) */,
                               const int32_t *target /* (N,) */, const float *lse /* (N,) */,
                               const float *scale /* (1,) */, const float *dloss /* (1,) */,
                               float *dW /* (V, H) */)
{
    __shared__ float g[LCE2_TILE_N][LCE2_TILE_V]; /* g[i][j] for row n0 + i, vocabulary row v0 + j */
    int v0 = blockIdx.x * LCE2_TILE_V, tid = threadIdx.x;
    int nv = V - v0 < LCE2_TILE_V ? V - v0 : LCE2_TILE_V;
    float sc = scale[0] * dloss[0];
    float *dWt = dW + (long long)v0 * H; /* (nv, H) rows owned by this block */
    /* element e = j H + h of the tile always belongs to thread e % B, here and in the accumulation below, so
     * the zeroing needs no barrier */
    for (long long e = tid; e < (long long)nv * H; e += LCE2_THREADS) dWt[e] = 0.0f;
    for (long long n0 = 0; n0 < N; n0 += LCE2_TILE_N) { /* 64 bits: N + LCE2_TILE_N may pass 2^31 - 1 */
        int nn = N - n0 < LCE2_TILE_N ? (int)(N - n0) : LCE2_TILE_N;
        for (int e = tid; e < LCE2_TILE_N * LCE2_TILE_V; e += LCE2_THREADS) {
            int i = e / LCE2_TILE_V, j = e % LCE2_TILE_V;
            long long n = n0 + i;
            float gv = 0.0f; /* rows past N, vocabulary rows past V and ignored rows add nothing */
            if (i < nn && j < nv && target[n] != LCE_IGNORE) {
                float z = lce_dot_bf16(x + n * H, W + (long long)(v0 + j) * H, H);
                gv = lce_grad(z, lse[n], v0 + j == target[n], sc);
            }
            g[i][j] = gv;
        }
        __syncthreads(); /* the whole g tile is written before any thread reads a column of it */
        for (long long e = tid; e < (long long)nv * H; e += LCE2_THREADS) {
            int j = (int)(e / H), h = (int)(e % H);
            float s = 0.0f;
            for (int i = 0; i < nn; i++) s += g[i][j] * bf16_to_f32(x[(n0 + i) * H + h]);
            dWt[e] += s; /* beta = 1 style: this row tile added onto the earlier ones, in fp32 */
        }
        __syncthreads(); /* every thread is done reading g before the next row tile overwrites it */
    }
}

static void lce2_launch_forward(int N, int V, int H, const bf16 *x, const bf16 *W, const int32_t *target,
                                float *lse, float *row_loss)
{
    LAUNCH(lce2_forward_kernel, N, LCE2_THREADS, 0)(V, H, x, W, target, lse, row_loss);
    CUDA_CHECK_LAST();
}

static void lce2_launch_dx(int N, int V, int H, const bf16 *x, const bf16 *W, const int32_t *target,
                           const float *lse, const float *scale, const float *dloss, bf16 *dx)
{
    LAUNCH(lce2_dx_kernel, N, LCE2_THREADS, LCE2_DX_SMEM_BYTES(H))(V, H, x, W, target, lse, scale, dloss, dx);
    CUDA_CHECK_LAST();
}

static void lce2_launch_dw(int N, int V, int H, const bf16 *x, const bf16 *W, const int32_t *target,
                           const float *lse, const float *scale, const float *dloss, float *dW)
{
    /* V + 63 may pass 2^31 - 1 */
    unsigned tiles = (unsigned)(((long long)V + LCE2_TILE_V - 1) / LCE2_TILE_V);
    LAUNCH(lce2_dw_kernel, tiles, LCE2_THREADS, 0)(N, V, H, x, W, target, lse, scale, dloss, dW);
    CUDA_CHECK_LAST();
}

extern "C" float *lce2_forward(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target,
                               lce_cuda_saved *saved)
{
    int N = (int)d->N, V = (int)d->V, H = (int)d->H;
    saved->x = x;
    saved->W = W;
    saved->target = target;
    saved->lse = (float *)dev_alloc_array(d->N, DT_F32, "lse [N] f32 (saved)");
    arena a;
    lce2_forward_workspace w;
    size_t bytes = ARENA_BYTES(a, lce2_carve_forward(&a, d, &w));
    arena_init(&a, dev_alloc(bytes, "workspace: row losses [N] f32 + scale"), bytes);
    lce2_carve_forward(&a, d, &w);
    lce_launch_mean_scale(N, target, w.scale);
    lce2_launch_forward(N, V, H, x, W, target, saved->lse, w.row_loss);
    float *loss = (float *)dev_alloc_array(1, DT_F32, "loss [1] f32");
    lce_launch_loss(N, w.row_loss, w.scale, loss);
    dev_free(a.base);
    return loss;
}

extern "C" void lce2_backward(const lce_dims *d, lce_cuda_saved *saved, const float *dloss, bf16 **dx,
                              float **dW)
{
    int N = (int)d->N, V = (int)d->V, H = (int)d->H;
    bf16 *gx = (bf16 *)dev_alloc_array(lce_x_count(d), DT_BF16, "dx [N,H] bf16");
    float *gw = (float *)dev_alloc_array(lce_w_count(d), DT_F32, "dW [V,H] f32");
    /* 1 / n_valid again rather than a second saved float: one pass over target (N,) */
    float *scale = (float *)dev_alloc_array(1, DT_F32, "scale [1] f32 (1 / n_valid, recounted)");
    lce_launch_mean_scale(N, saved->target, scale);
    lce2_launch_dx(N, V, H, saved->x, saved->W, saved->target, saved->lse, scale, dloss, gx);
    lce2_launch_dw(N, V, H, saved->x, saved->W, saved->target, saved->lse, scale, dloss, gw);
    dev_free(scale);
    dev_free(saved->lse);
    saved->lse = NULL;
    *dx = gx;
    *dW = gw;
}
