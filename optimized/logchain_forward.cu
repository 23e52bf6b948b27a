/* logchain_forward.cu - lesson 2 on the GPU: device memory and the choice of version. Each version's kernels
 * and launches are kernels/logchain_vN.cu; here its buffers are allocated, in the order the memory formulas
 * (logchain_forward.c) count them, and freed.
 *   v1  cuda_lc_forward_v1 / cuda_lc_backward_v1        log-space kernels only (kernels/logchain_v1.cu)
 *   v2  cuda_lc_forward / cuda_lc_backward              row kernels around cuBLAS GEMMs
 *       (kernels/logchain_v2.cu)
 *   v3  cuda_lc_forward_graph / cuda_lc_backward_graph  v2's steps as one CUDA Graph (kernels/logchain_v3.cu)
 *   v4  cuda_lc_forward_v4 / cuda_lc_backward_v4        one persistent kernel per pass
 *       (kernels/logchain_v4.cu) */
#include "logchain_forward.h"

#include "../kernels/logchain_launch.h"
#include "../kernels/logchain_math.h"
#include "../kernels/runtime/cuda_track.h"
#include "track.h"

typedef void lc_forward_fn(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                           float *out);

/* v1 and v4: the forward needs no scratch, only alpha (saved for backward) and out */
static float *forward_into_alpha(lc_forward_fn *forward, const lc_dims *d, const float *x, const float *bulk,
                                 const float *p0, float **alpha_out)
{
    float *alpha = (float *)dev_alloc_array(lc_x_count(d), DT_F32, "alpha (n,t,v,c) saved for backward");
    float *out = (float *)dev_alloc_array(lc_out_count(d), DT_F32, "out (n,t)");
    forward(d, x, bulk, p0, alpha, out);
    *alpha_out = alpha;
    return out;
}

extern "C" float *cuda_lc_forward_v1(const lc_dims *d, const float *x, const float *bulk, const float *p0,
                                     float **alpha_out)
{
    return forward_into_alpha(lc1_forward, d, x, bulk, p0, alpha_out);
}

extern "C" void cuda_lc_backward_v1(const lc_dims *d, const float *x, const float *bulk, const float *p0,
                                    float *alpha, const float *out, const float *dout, float **dx_out,
                                    float **dbulk_out, float **dp0_out)
{
    float *dx = alpha; /* written over alpha, step by step, as on the CPU (cpu_lc_backward) */
    track_relabel(MEM_DEVICE, dx, "dx (n,t,v,c) written over alpha");
    float *dbulk = (float *)dev_alloc_array(lc_bulk_count(d), DT_F32, "dbulk (1,t,v-1,c,c)");
    float *dp0 = (float *)dev_alloc_array(lc_p0_count(d), DT_F32, "dp0 (1,t,c)");
    float *bcur = (float *)dev_alloc_array(d->n * d->c, DT_F32, "backward: beta_{i+1} (n,c)");
    float *bnext = (float *)dev_alloc_array(d->n * d->c, DT_F32, "backward: beta_i (n,c)");
    lc1_backward(d, x, bulk, p0, alpha, out, dout, dbulk, dp0, bcur, bnext);
    dev_free(bcur);
    dev_free(bnext);
    *dx_out = dx;
    *dbulk_out = dbulk;
    *dp0_out = dp0;
}

/* v2 (graph = 0) and v3 (graph = 1) share their buffers and their kernels */
static float *lc2_forward(const lc_dims *d, const float *x, const float *bulk, const float *p0,
                          float **alpha_out, int graph)
{
    float *alpha = (float *)dev_alloc_array(lc_x_count(d), DT_F32, "alpha (n,t,v,c) saved for backward");
    float *out = (float *)dev_alloc_array(lc_out_count(d), DT_F32, "out (n,t)");
    float *W =
        (float *)dev_alloc_array(d->t * d->n * d->c, DT_F32, "fwd scratch: W = exp(alpha - m) (t,n,c)");
    float *S = (float *)dev_alloc_array(d->t * d->n * d->c, DT_F32, "fwd scratch: S = W . P (t,n,c)");
    float *m = (float *)dev_alloc_array(d->t * d->n, DT_F32, "fwd scratch: row maxima m (t,n)");
    (graph ? lc3_forward : lc2_forward_steps)(d, x, bulk, p0, alpha, out, W, S, m);
    dev_free(W);
    dev_free(S);
    dev_free(m);
    *alpha_out = alpha;
    return out;
}

static void lc2_backward(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                         const float *out, const float *dout, float **dx_out, float **dbulk_out,
                         float **dp0_out, int graph)
{
    float *dx = alpha; /* written over alpha, step by step, as on the CPU */
    track_relabel(MEM_DEVICE, dx, "dx (n,t,v,c) written over alpha");
    float *dbulk = (float *)dev_alloc_array(lc_bulk_count(d), DT_F32, "dbulk (1,t,v-1,c,c)");
    float *dp0 = (float *)dev_alloc_array(lc_p0_count(d), DT_F32, "dp0 (1,t,c)");
    float *W =
        (float *)dev_alloc_array(d->t * d->n * d->c, DT_F32, "bwd scratch: W = exp(x + beta - mb) (t,n,c)");
    float *SU =
        (float *)dev_alloc_array(d->t * d->n * d->c, DT_F32, "bwd scratch: U, then S = W . P^T (t,n,c)");
    float *mb = (float *)dev_alloc_array(d->t * d->n, DT_F32, "bwd scratch: row maxima mb (t,n)");
    (graph ? lc3_backward : lc2_backward_steps)(d, x, bulk, p0, alpha, out, dout, dbulk, dp0, W, SU, mb);
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

extern "C" void cuda_lc_backward(const lc_dims *d, const float *x, const float *bulk, const float *p0,
                                 float *alpha, const float *out, const float *dout, float **dx, float **dbulk,
                                 float **dp0)
{
    lc2_backward(d, x, bulk, p0, alpha, out, dout, dx, dbulk, dp0, 0);
}

extern "C" float *cuda_lc_forward_graph(const lc_dims *d, const float *x, const float *bulk, const float *p0,
                                        float **alpha_out)
{
    return lc2_forward(d, x, bulk, p0, alpha_out, 1);
}

extern "C" void cuda_lc_backward_graph(const lc_dims *d, const float *x, const float *bulk, const float *p0,
                                       float *alpha, const float *out, const float *dout, float **dx,
                                       float **dbulk, float **dp0)
{
    lc2_backward(d, x, bulk, p0, alpha, out, dout, dx, dbulk, dp0, 1);
}

extern "C" float *cuda_lc_forward_v4(const lc_dims *d, const float *x, const float *bulk, const float *p0,
                                     float **alpha_out)
{
    return forward_into_alpha(lc4_forward, d, x, bulk, p0, alpha_out);
}

typedef void (*lc_walk_backward_fn)(const lc_dims *, const float *, const float *, const float *, float *,
                                    const float *, const float *, float *, float *, float *, float *);

/* v4's and v5's backward: their kernel writes dx over alpha and every step's GEMM operands U, W */
static void backward_walk(lc_walk_backward_fn backward, const lc_dims *d, const float *x, const float *bulk,
                          const float *p0, float *alpha, const float *out, const float *dout, float **dx_out,
                          float **dbulk_out, float **dp0_out)
{
    float *dx = alpha; /* written over alpha, step by step, as on the CPU */
    track_relabel(MEM_DEVICE, dx, "dx (n,t,v,c) written over alpha");
    size_t steps = size_mul(size_mul(d->t, d->v - 1), size_mul(d->n, d->c));
    float *dbulk = (float *)dev_alloc_array(lc_bulk_count(d), DT_F32, "dbulk (1,t,v-1,c,c)");
    float *dp0 = (float *)dev_alloc_array(lc_p0_count(d), DT_F32, "dp0 (1,t,c)");
    float *U = (float *)dev_alloc_array(steps, DT_F32, "bwd: U = dout exp(alpha_i + mw - log Z) (t,v-1,n,c)");
    float *W = (float *)dev_alloc_array(steps, DT_F32, "bwd: W = exp(x_{i+1} + beta_{i+1} - mw) (t,v-1,n,c)");
    backward(d, x, bulk, p0, alpha, out, dout, dbulk, dp0, U, W);
    dev_free(U);
    dev_free(W);
    *dx_out = dx;
    *dbulk_out = dbulk;
    *dp0_out = dp0;
}

extern "C" void cuda_lc_backward_v4(const lc_dims *d, const float *x, const float *bulk, const float *p0,
                                    float *alpha, const float *out, const float *dout, float **dx_out,
                                    float **dbulk_out, float **dp0_out)
{
    backward_walk(lc4_backward, d, x, bulk, p0, alpha, out, dout, dx_out, dbulk_out, dp0_out);
}

extern "C" float *cuda_lc_forward_v5(const lc_dims *d, const float *x, const float *bulk, const float *p0,
                                     float **alpha_out)
{
    return forward_into_alpha(lc5_forward, d, x, bulk, p0, alpha_out);
}

extern "C" void cuda_lc_backward_v5(const lc_dims *d, const float *x, const float *bulk, const float *p0,
                                    float *alpha, const float *out, const float *dout, float **dx_out,
                                    float **dbulk_out, float **dp0_out)
{
    backward_walk(lc5_backward, d, x, bulk, p0, alpha, out, dout, dx_out, dbulk_out, dp0_out);
}
