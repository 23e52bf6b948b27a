/* gru_fused.cu - lesson 4, optimized, CUDA: optimized/gru_fused.c line for line, with cuBLAS for the GEMMs and
 * the kernels of kernels/gru_kernels.cu for the fused cell passes. Every device buffer comes from one dev_alloc'ed
 * arena carved before the loop (gru_fused_carve, the CPU's own carving code): no cudaMalloc inside it.
 * tests/cuda_lesson4.c runs it on a GPU or under the CPU emulation build.
 */
extern "C" {
#include "gru_fused.h"

#include "../kernels/runtime/arena.h"
#include "../kernels/runtime/cuda_track.h"
#include "../kernels/runtime/track.h"
}
#include "../kernels/runtime/dry_skip.h"
#include "../kernels/runtime/cublas_rowmajor.h"
#include "../kernels/gru_kernels.h"
#include "../kernels/runtime/launch.h"

#define SW GRU_SAVED_PER_ROW

/* C (M, N) = alpha op(A) op(B) + beta C, row-major, one matrix (gemm_cpu.h's arguments) */
static void gemm(int tA, int tB, size_t M, size_t N, size_t K, const float *A, size_t lda, const float *Bm,
                 size_t ldb, float beta, float *C, size_t ldc)
{
    cublasHandle_t h = (cublasHandle_t)cublas_handle();
    ROWMAJOR_SGEMM_STRIDED_BATCHED(h, tA, tB, (int)M, (int)N, (int)K, 1.0f, A, (int)lda, 0LL, Bm, (int)ldb, 0LL, beta,
                                   C, (int)ldc, 0LL, 1);
}

static unsigned grid_of(size_t n) { return (unsigned)((n + GRU_THREADS - 1) / GRU_THREADS); }

static float *saved_row(const gru_dims *d, const gru_fused_ws *ws, size_t t)
{
    return ws->S + (t % ws->cap) * d->B * SW * d->H;
}

static void forward_range(const gru_dims *d, const float *x, const float *h0, const float *eps, const float *W_enc,
                          const float *W_ih, const float *W_zh, float *out, int recompute, size_t t0, size_t t1,
                          gru_fused_ws *ws)
{
    size_t B = d->B, X = d->X, H = d->H, BH = B * H;
    int iB = (int)B, iH = (int)H;
    /* launches per step: a dry run launches the boundary blocks' and steps' only (dry_skip.h) */
    for (size_t tb = t0; tb < t1; tb += ws->P) {
        EMU_DRY_SKIP(tb, (long long)t0, (long long)t1, (long long)ws->P);
        size_t nb = t1 - tb < ws->P ? t1 - tb : ws->P;
        /* xp (nb*B, 3H) = x[tb .. tb+nb) (nb*B, X) . W_ih (X, 3H) */
        gemm(0, 0, nb * B, 3 * H, X, x + tb * B * X, X, W_ih, 3 * H, 0.0f, ws->xp, 3 * H);
        for (size_t k = 0; k < nb; k++) {
            EMU_DRY_SKIP(k, 0, (long long)nb, 1);
            size_t t = tb + k;
            const float *h = t ? out + (t - 1) * BH : h0;
            float *St = saved_row(d, ws, t);
            gemm(0, 0, B, 2 * H, H, h, H, W_enc, 2 * H, 0.0f, ws->zp, 2 * H); /* pd (B, 2H) */
            LAUNCH(gru_reparam_fwd_kernel, grid_of(BH), GRU_THREADS, 0)(iB, iH, ws->zp, eps + t * BH, St);
            CUDA_CHECK_LAST();
            gemm(0, 0, B, 3 * H, H, St + 4 * H, SW * H, W_zh, 3 * H, 0.0f, ws->zp, 3 * H); /* z W_zh (B, 3H) */
            LAUNCH(gru_gate_fwd_kernel, grid_of(BH), GRU_THREADS, 0)(iB, iH, ws->xp + k * B * 3 * H, ws->zp, h,
                                                                     recompute ? ws->hs : out + t * BH, St);
            CUDA_CHECK_LAST();
        }
    }
}

/* graph = 1: the step loop, its buffers carved, is captured into a CUDA Graph once per shape and buffers, then
 * replayed (cuda_track.h): one launch per forward instead of about 5 per step; the same kernels and GEMMs. */
static float *gru_forward(const gru_dims *d, const gru_opts *o, const float *x, const float *h0, const float *eps,
                          const float *W_enc, const float *W_ih, const float *W_zh, void **arena_out,
                          gru_fused_ws *ws, int graph)
{
    size_t bytes = gru_fused_arena_bytes(d, o);
    void *mem = dev_alloc(bytes, "arena: saved rows (cap,B,6H) + xp block + scratch");
    arena a;
    arena_init(&a, mem, bytes);
    gru_fused_carve(d, o, &a, ws);
    float *out = (float *)dev_alloc_array(gru_seq_count(d), DT_F32, "out (T,B,H) = every h: also what backward reads");
    static cuda_graph_cache forward_graph; /* one per shape and set of buffers: replayed while they repeat */
    const uintptr_t key[] = {(uintptr_t)d->T, (uintptr_t)d->B, (uintptr_t)d->X, (uintptr_t)d->H, ws->cap, ws->P,
                             (uintptr_t)mem, (uintptr_t)out, (uintptr_t)x, (uintptr_t)h0, (uintptr_t)eps,
                             (uintptr_t)W_enc, (uintptr_t)W_ih, (uintptr_t)W_zh};
    if (!graph || !cuda_graph_replay(&forward_graph, key, (int)(sizeof key / sizeof *key))) {
        if (graph) cuda_capture_begin(1);
        forward_range(d, x, h0, eps, W_enc, W_ih, W_zh, out, 0, 0, d->T, ws);
        if (graph) cuda_graph_keep(&forward_graph, key, (int)(sizeof key / sizeof *key));
    }
    *arena_out = mem;
    return out;
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

static void segment_weight_grads(const gru_dims *d, size_t t0, size_t t1, const float *x, const float *h0,
                                 const float *W_ih, const float *out, const gru_fused_ws *ws, float beta,
                                 gru_grads *g)
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
        gemm(1, 0, H, 2 * H, R - skip * B, out + (t0 + skip - 1) * B * H, H, Sg + skip * B * ld + 4 * H, ld, beta,
             g->dW_enc, 2 * H);
}

/* Backward's launches, the gradients allocated: segments last to first, each recomputed when checkpointing. */
static void backward_steps(const gru_dims *d, const float *x, const float *h0, const float *eps, const float *W_enc,
                           const float *W_ih, const float *W_zh, const float *out, const float *dout,
                           gru_fused_ws *ws, gru_grads *g)
{
    size_t T = d->T, L = ws->cap, nseg = (T + L - 1) / L, BH = gru_h0_count(d);
    LAUNCH(gru_fill_kernel, grid_of(BH), GRU_THREADS, 0)((long long)BH, 0.0f, g->dh0);
    CUDA_CHECK_LAST();
    for (size_t s = nseg; s-- > 0;) {
        EMU_DRY_SKIP(s, (long long)nseg - 1, -1, -1); /* launches per step: a dry run launches the boundary */
        size_t t0 = s * L, t1 = t0 + L < T ? t0 + L : T;  /* segments' and steps' only (dry_skip.h) */
        if (L < T) forward_range(d, x, h0, eps, W_enc, W_ih, W_zh, (float *)out, 1, t0, t1, ws);
        for (size_t t = t1; t-- > t0;) {
            EMU_DRY_SKIP(t, (long long)t1 - 1, (long long)t0 - 1, -1);
            step_backward(d, t, h0, W_enc, W_zh, out, dout, g->dh0, ws, g->dW_zh);
        }
        segment_weight_grads(d, t0, t1, x, h0, W_ih, out, ws, s == nseg - 1 ? 0.0f : 1.0f, g);
    }
}

static void gru_backward(const gru_dims *d, const float *x, const float *h0, const float *eps, const float *W_enc,
                         const float *W_ih, const float *W_zh, const float *out, const float *dout, void *arena_mem,
                         gru_fused_ws *ws, gru_grads *g, int graph)
{
    size_t BH = gru_h0_count(d);
    g->dx = (float *)dev_alloc_array(gru_x_count(d), DT_F32, "dx (T,B,X)");
    g->dh0 = (float *)dev_alloc_array(BH, DT_F32, "dh0 (B,H): the running dh carry, h0's at the end");
    g->dW_enc = (float *)dev_alloc_array(gru_wenc_count(d), DT_F32, "dW_enc (H,2H)");
    g->dW_ih = (float *)dev_alloc_array(gru_wih_count(d), DT_F32, "dW_ih (X,3H)");
    g->dW_zh = (float *)dev_alloc_array(gru_wzh_count(d), DT_F32, "dW_zh (H,3H)");
    static cuda_graph_cache backward_graph;
    const uintptr_t key[] = {(uintptr_t)d->T, (uintptr_t)d->B, (uintptr_t)d->X, (uintptr_t)d->H, ws->cap, ws->P,
                             (uintptr_t)arena_mem, (uintptr_t)out, (uintptr_t)dout, (uintptr_t)x, (uintptr_t)h0,
                             (uintptr_t)eps, (uintptr_t)W_enc, (uintptr_t)W_ih, (uintptr_t)W_zh, (uintptr_t)g->dx,
                             (uintptr_t)g->dh0, (uintptr_t)g->dW_enc, (uintptr_t)g->dW_ih, (uintptr_t)g->dW_zh};
    if (!graph || !cuda_graph_replay(&backward_graph, key, (int)(sizeof key / sizeof *key))) {
        if (graph) cuda_capture_begin(1);
        backward_steps(d, x, h0, eps, W_enc, W_ih, W_zh, out, dout, ws, g);
        if (graph) cuda_graph_keep(&backward_graph, key, (int)(sizeof key / sizeof *key));
    }
    dev_free(arena_mem);
}

extern "C" float *cuda_gru_forward(const gru_dims *d, const gru_opts *o, const float *x, const float *h0,
                                   const float *eps, const float *W_enc, const float *W_ih, const float *W_zh,
                                   void **arena_out, gru_fused_ws *ws, int graph)
{
    return gru_forward(d, o, x, h0, eps, W_enc, W_ih, W_zh, arena_out, ws, graph);
}

extern "C" void cuda_gru_backward(const gru_dims *d, const gru_opts *o, const float *x, const float *h0,
                                  const float *eps, const float *W_enc, const float *W_ih, const float *W_zh,
                                  const float *out, const float *dout, void *arena_mem, gru_fused_ws *ws,
                                  gru_grads *g, int graph)
{
    (void)o;
    gru_backward(d, x, h0, eps, W_enc, W_ih, W_zh, out, dout, arena_mem, ws, g, graph);
}
