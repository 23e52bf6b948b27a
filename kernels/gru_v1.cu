/* gru_v1.cu - lesson 4, cuda-v1: optimized/gru_fused.c line for line, cuBLAS for the GEMMs, our kernels for
 * the fused cell passes: one thread per (row i, unit j), no shared memory, no synchronisation. */
#include "gru_cell_math.h"

#include "gru_launch.h"

#include "runtime/cublas_rowmajor.h"
#include "runtime/cuda_check.h"
#include "runtime/cuda_track.h"
#include "runtime/launch.h"

/* One thread per (row i, unit j) of the (B, H) hidden state; the arithmetic is gru_cell_math.h, the functions
 * the CPU calls. A step's saved rows St (B, 6H) = [r u n zn z e], row stride 6H, live in the arena that
 * this file's cuda_gru_forward_v1 carves before the loop, so no allocation happens inside it. No shared
 * memory and no synchronisation: each element is independent.
 *   gru_reparam_fwd_kernel   z, e from pd (B, 2H)        gru_gate_bwd_kernel     [r u n zn] -> [da_r da_u dzn
 *                            da_n]
 *   gru_gate_fwd_kernel      h_new; saves r u n zn       gru_reparam_bwd_kernel  e -> dlv = dz e / 2
 *   gru_fill_kernel          dh = 0 before the first backward step */

static_assert(GRU_THREADS % 32 == 0, "blocks are whole warps");

#define SW GRU_SAVED_PER_ROW /* floats saved per (row, unit) and step */

__global__ void gru_reparam_fwd_kernel(int B, int H, const float *pd, const float *eps_t, float *St)
{
    /* pd (B, 2H), eps_t (B, H), St (B, 6H) */
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (long long)B * H) return;
    long long i = idx / H, j = idx % H;
    float *row = St + i * SW * H;
    row[4 * H + j] = gru_reparam(pd[i * 2 * H + j], pd[i * 2 * H + H + j], eps_t[i * H + j], &row[5 * H + j]);
}

__global__ void gru_gate_fwd_kernel(int B, int H, const float *xp_t, const float *zp, const float *h,
                                    float *hnew, float *St)
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

__global__ void gru_reparam_bwd_kernel(int B, int H, float *St)
{
    /* St (B, 6H): column 4H holds dz, 5H holds e, which becomes dlv */
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (long long)B * H) return;
    long long i = idx / H, j = idx % H;
    float *row = St + i * SW * H;
    row[5 * H + j] = gru_reparam_backward(row[4 * H + j], row[5 * H + j]);
}

__global__ void gru_fill_kernel(long long n, float v, float *p)
{
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < n) p[idx] = v;
}

/* ---- launchers ----------------------------------------------------------------------------------------- */

/* C (M, N) = alpha op(A) op(B) + beta C, row-major, one matrix (gemm_cpu.h's arguments) */
static void gemm(int tA, int tB, size_t M, size_t N, size_t K, const float *A, size_t lda, const float *Bm,
                 size_t ldb, float beta, float *C, size_t ldc)
{
    cublasHandle_t h = (cublasHandle_t)cublas_handle();
    ROWMAJOR_SGEMM_STRIDED_BATCHED(h, tA, tB, (int)M, (int)N, (int)K, 1.0f, A, (int)lda, 0LL, Bm, (int)ldb,
                                   0LL, beta, C, (int)ldc, 0LL, 1);
}

static unsigned grid_of(size_t n) { return (unsigned)((n + GRU_THREADS - 1) / GRU_THREADS); }

static float *saved_row(const gru_dims *d, const gru_fused_ws *ws, size_t t)
{
    return ws->S + (t % ws->cap) * d->B * SW * d->H;
}

void gru1_forward_range(const gru_dims *d, const float *x, const float *h0, const float *eps,
                        const float *W_enc, const float *W_ih, const float *W_zh, float *out, int recompute,
                        size_t t0, size_t t1, gru_fused_ws *ws)
{
    size_t B = d->B, X = d->X, H = d->H, BH = B * H;
    int iB = (int)B, iH = (int)H;
    for (size_t tb = t0; tb < t1; tb += ws->P) {
        size_t nb = t1 - tb < ws->P ? t1 - tb : ws->P;
        /* xp (nb*B, 3H) = x[tb .. tb+nb) (nb*B, X) . W_ih (X, 3H) */
        gemm(0, 0, nb * B, 3 * H, X, x + tb * B * X, X, W_ih, 3 * H, 0.0f, ws->xp, 3 * H);
        for (size_t k = 0; k < nb; k++) {
            size_t t = tb + k;
            const float *h = t ? out + (t - 1) * BH : h0;
            float *St = saved_row(d, ws, t);
            gemm(0, 0, B, 2 * H, H, h, H, W_enc, 2 * H, 0.0f, ws->zp, 2 * H); /* pd (B, 2H) */
            LAUNCH(gru_reparam_fwd_kernel, grid_of(BH), GRU_THREADS, 0)(iB, iH, ws->zp, eps + t * BH, St);
            CUDA_CHECK_LAST();
            /* z W_zh (B, 3H) */
            gemm(0, 0, B, 3 * H, H, St + 4 * H, SW * H, W_zh, 3 * H, 0.0f, ws->zp, 3 * H);
            LAUNCH(gru_gate_fwd_kernel, grid_of(BH), GRU_THREADS, 0)
            (iB, iH, ws->xp + k * B * 3 * H, ws->zp, h, recompute ? ws->hs : out + t * BH, St);
            CUDA_CHECK_LAST();
        }
    }
}

static void step_backward(const gru_dims *d, size_t t, const float *h0, const float *W_enc, const float *W_zh,
                          const float *out, const float *dout, float *dh, gru_fused_ws *ws, float *dW_zh)
{
    size_t B = d->B, H = d->H, BH = B * H;
    float *St = saved_row(d, ws, t);
    LAUNCH(gru_gate_bwd_kernel, grid_of(BH), GRU_THREADS, 0)((int)B, (int)H, dout + t * BH,
                                                             t ? out + (t - 1) * BH : h0, dh, St);
    CUDA_CHECK_LAST();
    gemm(1, 0, H, 3 * H, B, St + 4 * H, SW * H, St, SW * H, t == d->T - 1 ? 0.0f : 1.0f, dW_zh, 3 * H);
    gemm(0, 1, B, H, 3 * H, St, SW * H, W_zh, 3 * H, 0.0f, St + 4 * H, SW * H); /* dz */
    LAUNCH(gru_reparam_bwd_kernel, grid_of(BH), GRU_THREADS, 0)((int)B, (int)H, St);
    CUDA_CHECK_LAST();
    gemm(0, 1, B, H, 2 * H, St + 4 * H, SW * H, W_enc, 2 * H, 1.0f, dh, H); /* dh += dPD W_enc^T */
}

/* after backward's steps t0..t1-1, their dW_ih, dx and dW_enc as GEMMs over the segment's saved gradient rows
 * (beta 0: the first segment written, 1: added) */
static void gru1_segment_weight_grads(const gru_dims *d, size_t t0, size_t t1, const float *x,
                                      const float *h0, const float *W_ih, const float *out,
                                      const gru_fused_ws *ws, float beta, gru_grads *g)
{
    size_t B = d->B, X = d->X, H = d->H, R = (t1 - t0) * B, ld = SW * H;
    const float *Sg = saved_row(d, ws, t0), *xs = x + t0 * B * X;
    gemm(1, 0, X, 2 * H, R, xs, X, Sg, ld, beta, g->dW_ih, 3 * H);
    gemm(1, 0, X, H, R, xs, X, Sg + 3 * H, ld, beta, g->dW_ih + 2 * H, 3 * H);
    gemm(0, 1, R, X, 2 * H, Sg, ld, W_ih, 3 * H, 0.0f, g->dx + t0 * B * X, X);
    gemm(0, 1, R, X, H, Sg + 3 * H, ld, W_ih + 2 * H, 3 * H, 1.0f, g->dx + t0 * B * X, X);
    size_t skip = 0;
    if (t0 == 0) {
        gemm(1, 0, H, 2 * H, B, h0, H, Sg + 4 * H, ld, beta, g->dW_enc, 2 * H);
        skip = 1;
        beta = 1.0f;
    }
    if (t1 - t0 > skip)
        gemm(1, 0, H, 2 * H, R - skip * B, out + (t0 + skip - 1) * B * H, H, Sg + skip * B * ld + 4 * H, ld,
             beta, g->dW_enc, 2 * H);
}

/* Backward, the gradients allocated: segments last to first, each recomputed when checkpointing. */
void gru1_backward_steps(const gru_dims *d, const float *x, const float *h0, const float *eps,
                         const float *W_enc, const float *W_ih, const float *W_zh, const float *out,
                         const float *dout, gru_fused_ws *ws, gru_grads *g)
{
    size_t T = d->T, L = ws->cap, nseg = (T + L - 1) / L, BH = gru_h0_count(d);
    LAUNCH(gru_fill_kernel, grid_of(BH), GRU_THREADS, 0)((long long)BH, 0.0f, g->dh0);
    CUDA_CHECK_LAST();
    for (size_t s = nseg; s-- > 0;) {
        size_t t0 = s * L, t1 = t0 + L < T ? t0 + L : T;
        if (L < T) gru1_forward_range(d, x, h0, eps, W_enc, W_ih, W_zh, (float *)out, 1, t0, t1, ws);
        for (size_t t = t1; t-- > t0;) {
            step_backward(d, t, h0, W_enc, W_zh, out, dout, g->dh0, ws, g->dW_zh);
        }
        gru1_segment_weight_grads(d, t0, t1, x, h0, W_ih, out, ws, s == nseg - 1 ? 0.0f : 1.0f, g);
    }
}

/* ---- device memory: the arena, out and the gradients (gru_launch.h) around this version's launchers ---- */

extern "C" float *cuda_gru_forward_v1(const gru_dims *d, const gru_opts *o, const float *x, const float *h0,
                                      const float *eps, const float *W_enc, const float *W_ih,
                                      const float *W_zh, void **arena_out, gru_fused_ws *ws)
{
    *arena_out = gru_dev_arena(d, o, 0, ws);
    float *out = gru_dev_out(d);
    gru1_forward_range(d, x, h0, eps, W_enc, W_ih, W_zh, out, 0, 0, d->T, ws);
    return out;
}

extern "C" void cuda_gru_backward_v1(const gru_dims *d, const gru_opts *o, const float *x, const float *h0,
                                     const float *eps, const float *W_enc, const float *W_ih,
                                     const float *W_zh, const float *out, const float *dout, void *arena_mem,
                                     gru_fused_ws *ws, gru_grads *g)
{
    (void)o;
    gru_dev_grads(d, g);
    gru1_backward_steps(d, x, h0, eps, W_enc, W_ih, W_zh, out, dout, ws, g);
    dev_free(arena_mem);
}
