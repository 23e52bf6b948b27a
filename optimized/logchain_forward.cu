/* logchain_forward.cu - lesson 2 on the GPU: allocations, launches and cuBLAS calls of both versions.
 * The kernels are kernels/logchain_kernels.cu (v1) and kernels/logchain_kernels_v2.cu (v2); their launch
 * geometry is kernels/logchain_geometry.h, which cuda_lc_dims_fit (logchain_forward.c) reads too.
 *
 *   v1  cuda_lc_forward_v1 / cuda_lc_backward_v1: log-space kernels only. Per chain position s and step:
 *       one log_vecmat launch (forward), dbulk + log_vecmat + posterior (backward); s looped on the host.
 *   v2  cuda_lc_forward / cuda_lc_backward: the CPU version's factorisation. Per step, for all s at once:
 *       one strided-batched GEMM + one row kernel (forward); two GEMMs + one row kernel (backward).
 *   v3  cuda_lc_forward_graph / cuda_lc_backward_graph: v2's step loops captured into a CUDA Graph once per
 *       shape and buffers, then replayed as one launch: 1 per forward and per backward instead of 2 v - 1 and
 *       3 v - 1, the same memory (the graph has no memory nodes).
 * Every launch is LAUNCH(...) + CUDA_CHECK_LAST() (kernels/runtime/launch.h), so the CPU emulator runs this file.
 */
#include "logchain_forward.h"

#include "../kernels/runtime/cublas_rowmajor.h"
#include "../kernels/runtime/cuda_check.h"
#include "../kernels/runtime/cuda_track.h"
#include "../kernels/runtime/dry_skip.h"
#include "../kernels/runtime/launch.h"
#include "../kernels/logchain_geometry.h"
#include "../kernels/logchain_kernels.h"
#include "../kernels/runtime/track.h"

/* ---- v1 ------------------------------------------------------------------------------------------------ */

static unsigned blocks_for(long long count, int per_block) { return (unsigned)((count + per_block - 1) / per_block); }

static void log_vecmat(int n, int c, const float *in, long long ld_in, const float *add_in, long long ld_add_in,
                       const float *P, int transP, const float *add_out, long long ld_add_out, float *out,
                       long long ld_out)
{
    dim3 grid(blocks_for(c, LC1_TILE), blocks_for(n, LC1_ROWS)), block(LC1_TILE, LC1_ROWS);
    LAUNCH(log_vecmat_kernel, grid, block, 0)(n, c, in, ld_in, add_in, ld_add_in, P, transP, add_out, ld_add_out, out,
                                       ld_out);
    CUDA_CHECK_LAST();
}

extern "C" float *cuda_lc_forward_v1(const lc_dims *d, const float *x, const float *bulk, const float *p0,
                                  float **alpha_out)
{
    int n = (int)d->n, c = (int)d->c;
    size_t t = d->t, v = d->v, V1 = v - 1, C2 = d->c * d->c;
    long long ld = (long long)(t * v * d->c); /* row stride of x and alpha over b */
    float *alpha = (float *)dev_alloc_array(lc_x_count(d), DT_F32, "alpha (n,t,v,c) saved for backward");
    float *out = (float *)dev_alloc_array(lc_out_count(d), DT_F32, "out (n,t)");
    for (size_t s = 0; s < t; s++) {
        EMU_DRY_SKIP(s, 0, t, 1); /* t (v+1) launches: a dry run launches the boundary steps' (dry_skip.h) */
        const float *xs = x + s * v * d->c; /* x[b, s, i, :] = xs + b*ld + i*c */
        float *as = alpha + s * v * d->c;
        LAUNCH(alpha_init_kernel, blocks_for((long long)n * c, LC1_EW_BLOCK), LC1_EW_BLOCK, 0)(n, c, xs, ld, p0 + s * d->c, as);
        CUDA_CHECK_LAST();
        for (size_t i = 0; i < V1; i++) {
            EMU_DRY_SKIP(i, 0, V1, 1);
            log_vecmat(n, c, as + i * d->c, ld, NULL, 0, bulk + (s * V1 + i) * C2, 0, xs + (i + 1) * d->c, ld,
                       as + (i + 1) * d->c, ld);
        }
        LAUNCH(logz_kernel, blocks_for((long long)n * 32, LC1_EW_BLOCK), LC1_EW_BLOCK, 0)(n, c, as + V1 * d->c, ld, out + s, (long long)t);
        CUDA_CHECK_LAST();
    }
    *alpha_out = alpha;
    return out;
}

extern "C" void cuda_lc_backward_v1(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                                 const float *out, const float *dout, float **dx_out, float **dbulk_out,
                                 float **dp0_out)
{
    int n = (int)d->n, c = (int)d->c;
    size_t t = d->t, v = d->v, V1 = v - 1, C2 = d->c * d->c;
    long long ld = (long long)(t * v * d->c), ldr = (long long)t;
    /* dx overwrites alpha in place (see cpu_lc_backward): posterior_kernel reads alpha_i[b, j] and writes
     * dx_i[b, j] from the same thread, after dbulk_kernel for step i has read alpha_i (same stream, in order). */
    float *dx = alpha;
    track_relabel(MEM_DEVICE, dx, "dx (n,t,v,c) written over alpha");
    float *dbulk = (float *)dev_alloc_array(lc_bulk_count(d), DT_F32, "dbulk (1,t,v-1,c,c)");
    float *dp0 = (float *)dev_alloc_array(lc_p0_count(d), DT_F32, "dp0 (1,t,c)");
    float *bcur = (float *)dev_alloc_array(d->n * d->c, DT_F32, "backward: beta_{i+1} (n,c)");
    float *bnext = (float *)dev_alloc_array(d->n * d->c, DT_F32, "backward: beta_i (n,c)");
    unsigned pb = blocks_for((long long)n * c, LC1_EW_BLOCK);
    dim3 tgrid(blocks_for(c, LC1_TILE), blocks_for(c, LC1_TILE)), tblock(LC1_TILE, LC1_ROWS);

    for (size_t s = 0; s < t; s++) {
        EMU_DRY_SKIP(s, 0, t, 1); /* t (3v - 1) launches: a dry run launches the boundary steps' (dry_skip.h) */
        const float *xs = x + s * v * d->c, *as = alpha + s * v * d->c;
        float *dxs = dx + s * v * d->c;
        CUDA_CHECK(cudaMemset(bcur, 0, d->n * d->c * sizeof(float))); /* beta_{v-1} = 0 */
        LAUNCH(posterior_kernel, pb, LC1_EW_BLOCK, 0)(n, c, as + V1 * d->c, ld, NULL, dout + s, out + s, ldr, dxs + V1 * d->c);
        CUDA_CHECK_LAST();
        for (size_t i = V1; i-- > 0;) {
            EMU_DRY_SKIP(i, (long long)V1 - 1, -1, -1);
            LAUNCH(dbulk_kernel, tgrid, tblock, 0)(n, c, as + i * d->c, xs + (i + 1) * d->c, ld, bcur, dout + s, out + s,
                                            ldr, dbulk + (s * V1 + i) * C2);
            CUDA_CHECK_LAST();
            log_vecmat(n, c, bcur, c, xs + (i + 1) * d->c, ld, bulk + (s * V1 + i) * C2, 1, NULL, 0, bnext, c);
            LAUNCH(posterior_kernel, pb, LC1_EW_BLOCK, 0)(n, c, as + i * d->c, ld, bnext, dout + s, out + s, ldr, dxs + i * d->c);
            CUDA_CHECK_LAST();
            float *tmp = bcur;
            bcur = bnext;
            bnext = tmp;
        }
        LAUNCH(dp0_kernel, blocks_for(c, LC1_DP0_BLOCK), LC1_DP0_BLOCK, 0)(n, c, dxs, ld, p0 + s * d->c, dp0 + s * d->c);
        CUDA_CHECK_LAST();
    }
    dev_free(bcur);
    dev_free(bnext);
    *dx_out = dx; /* alpha's storage */
    *dbulk_out = dbulk;
    *dp0_out = dp0;
}

/* ---- v2 ------------------------------------------------------------------------------------------------ */

static dim3 lc2_grid(const lc_dims *d) { return dim3(blocks_for((long long)d->n, LC2_ROWS), (unsigned)d->t); }

/* v2's forward steps, every buffer already allocated: 1 + 2 (v-1) launches, or one graph (see below). */
static void lc2_forward_steps(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                              float *out, float *W, float *S, float *m)
{
    int n = (int)d->n, c = (int)d->c, t = (int)d->t, v = (int)d->v, V1 = v - 1;
    long long nc = (long long)n * c, C2 = (long long)c * c;
    cublasHandle_t h = (cublasHandle_t)cublas_handle();
    LAUNCH(lc2_fwd_weights_kernel, lc2_grid(d), LC2_BLOCK, 0)(n, c, t, v, 0, x, p0, S, m, alpha, W, out);
    CUDA_CHECK_LAST();
    for (int i = 0; i < V1; i++) {
        EMU_DRY_SKIP(i, 0, V1, 1); /* 2 (v-1) launches: a dry run launches the boundary steps' (dry_skip.h) */
        /* S_s (n, c; ld c) = W_s (n, c; ld c) . P_{s,i} (c, c; ld c), for every chain position s at once */
        ROWMAJOR_SGEMM_STRIDED_BATCHED(h, 0, 0, n, c, c, 1.0f, W, c, nc, bulk + i * C2, c, V1 * C2, 0.0f, S, c,
                                       nc, t);
        LAUNCH(lc2_fwd_weights_kernel, lc2_grid(d), LC2_BLOCK, 0)(n, c, t, v, i + 1, x, p0, S, m, alpha, W, out);
        CUDA_CHECK_LAST();
    }
}

/* graph = 1: the steps are captured into a CUDA Graph once per shape and buffers, then replayed: one launch per
 * pass instead of 1 + 2 (v-1), the same kernels and GEMMs in the same order (cuda_track.h). */
static float *lc2_forward(const lc_dims *d, const float *x, const float *bulk, const float *p0, float **alpha_out,
                          int graph)
{
    float *alpha = (float *)dev_alloc_array(lc_x_count(d), DT_F32, "alpha (n,t,v,c) saved for backward");
    float *out = (float *)dev_alloc_array(lc_out_count(d), DT_F32, "out (n,t)");
    float *W = (float *)dev_alloc_array(d->t * d->n * d->c, DT_F32, "fwd scratch: W = exp(alpha - m) (t,n,c)");
    float *S = (float *)dev_alloc_array(d->t * d->n * d->c, DT_F32, "fwd scratch: S = W . P (t,n,c)");
    float *m = (float *)dev_alloc_array(d->t * d->n, DT_F32, "fwd scratch: row maxima m (t,n)");
    static cuda_graph_cache forward_graph; /* one per shape and set of buffers: replayed while they repeat */
    const uintptr_t key[] = {(uintptr_t)d->n, (uintptr_t)d->t, (uintptr_t)d->v, (uintptr_t)d->c, (uintptr_t)x,
                             (uintptr_t)bulk, (uintptr_t)p0, (uintptr_t)alpha, (uintptr_t)out, (uintptr_t)W,
                             (uintptr_t)S, (uintptr_t)m};
    if (!graph || !cuda_graph_replay(&forward_graph, key, (int)(sizeof key / sizeof *key))) {
        if (graph) cuda_capture_begin(1);
        lc2_forward_steps(d, x, bulk, p0, alpha, out, W, S, m);
        if (graph) cuda_graph_keep(&forward_graph, key, (int)(sizeof key / sizeof *key));
    }
    dev_free(W);
    dev_free(S);
    dev_free(m);
    *alpha_out = alpha;
    return out;
}

/* v2's backward steps: 3 (v-1) + 2 launches, or one graph. dx = alpha, written over it step by step. */
static void lc2_backward_steps(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                               const float *out, const float *dout, float *dbulk, float *dp0, float *W, float *SU,
                               float *mb)
{
    int n = (int)d->n, c = (int)d->c, t = (int)d->t, v = (int)d->v, V1 = v - 1;
    long long nc = (long long)n * c, C2 = (long long)c * c;
    cublasHandle_t h = (cublasHandle_t)cublas_handle();
    float *dx = alpha;
    for (int i = V1 - 1; i >= 0; i--) {
        EMU_DRY_SKIP(i, V1 - 1, -1, -1); /* 3 (v-1) launches: a dry run launches the boundary steps' */
        LAUNCH(lc2_bwd_weights_kernel, lc2_grid(d), LC2_BLOCK, 0)(n, c, t, v, i, x, dout, out, mb, alpha, W, SU);
        CUDA_CHECK_LAST();
        /* dbulk_{s,i} (c, c) = U_s^T (c, n; U_s is (n, c) ld c) . W_s (n, c; ld c): the batch is the inner dim */
        ROWMAJOR_SGEMM_STRIDED_BATCHED(h, 1, 0, c, c, n, 1.0f, SU, c, nc, W, c, nc, 0.0f, dbulk + i * C2, c,
                                       V1 * C2, t);
        /* S_s (n, c) = W_s (n, c) . P_{s,i}^T, into U's buffer (U is dead once dbulk_i is computed) */
        ROWMAJOR_SGEMM_STRIDED_BATCHED(h, 0, 1, n, c, c, 1.0f, W, c, nc, bulk + i * C2, c, V1 * C2, 0.0f, SU, c,
                                       nc, t);
    }
    LAUNCH(lc2_dx0_kernel, lc2_grid(d), LC2_BLOCK, 0)(n, c, t, v, dout, out, mb, SU, alpha);
    CUDA_CHECK_LAST();
    LAUNCH(lc2_dp0_kernel, dim3(blocks_for(c, LC2_DP0_BLOCK), (unsigned)t), LC2_DP0_BLOCK, 0)(n, c, t, v, dx, p0,
                                                                                              dp0);
    CUDA_CHECK_LAST();
}

static void lc2_backward(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                         const float *out, const float *dout, float **dx_out, float **dbulk_out, float **dp0_out,
                         int graph)
{
    float *dx = alpha; /* written over alpha, step by step, as on the CPU */
    track_relabel(MEM_DEVICE, dx, "dx (n,t,v,c) written over alpha");
    float *dbulk = (float *)dev_alloc_array(lc_bulk_count(d), DT_F32, "dbulk (1,t,v-1,c,c)");
    float *dp0 = (float *)dev_alloc_array(lc_p0_count(d), DT_F32, "dp0 (1,t,c)");
    float *W = (float *)dev_alloc_array(d->t * d->n * d->c, DT_F32, "bwd scratch: W = exp(x + beta - mb) (t,n,c)");
    float *SU = (float *)dev_alloc_array(d->t * d->n * d->c, DT_F32, "bwd scratch: U, then S = W . P^T (t,n,c)");
    float *mb = (float *)dev_alloc_array(d->t * d->n, DT_F32, "bwd scratch: row maxima mb (t,n)");
    static cuda_graph_cache backward_graph;
    const uintptr_t key[] = {(uintptr_t)d->n, (uintptr_t)d->t, (uintptr_t)d->v, (uintptr_t)d->c, (uintptr_t)x,
                             (uintptr_t)bulk, (uintptr_t)p0, (uintptr_t)alpha, (uintptr_t)out, (uintptr_t)dout,
                             (uintptr_t)dbulk, (uintptr_t)dp0, (uintptr_t)W, (uintptr_t)SU, (uintptr_t)mb};
    if (!graph || !cuda_graph_replay(&backward_graph, key, (int)(sizeof key / sizeof *key))) {
        if (graph) cuda_capture_begin(1);
        lc2_backward_steps(d, x, bulk, p0, alpha, out, dout, dbulk, dp0, W, SU, mb);
        if (graph) cuda_graph_keep(&backward_graph, key, (int)(sizeof key / sizeof *key));
    }
    dev_free(W);
    dev_free(SU);
    dev_free(mb);
    *dx_out = dx;
    *dbulk_out = dbulk;
    *dp0_out = dp0;
}

/* The caller attaches the tracked cuBLAS workspace around each pair (the session does: uses_cublas). */
extern "C" float *cuda_lc_forward(const lc_dims *d, const float *x, const float *bulk, const float *p0,
                                  float **alpha_out)
{
    return lc2_forward(d, x, bulk, p0, alpha_out, 0);
}

extern "C" void cuda_lc_backward(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                                 const float *out, const float *dout, float **dx, float **dbulk, float **dp0)
{
    lc2_backward(d, x, bulk, p0, alpha, out, dout, dx, dbulk, dp0, 0);
}

extern "C" float *cuda_lc_forward_graph(const lc_dims *d, const float *x, const float *bulk, const float *p0,
                                        float **alpha_out)
{
    return lc2_forward(d, x, bulk, p0, alpha_out, 1);
}

extern "C" void cuda_lc_backward_graph(const lc_dims *d, const float *x, const float *bulk, const float *p0,
                                       float *alpha, const float *out, const float *dout, float **dx, float **dbulk,
                                       float **dp0)
{
    lc2_backward(d, x, bulk, p0, alpha, out, dout, dx, dbulk, dp0, 1);
}
