/* logchain_v3.cu - lesson 2, cuda-v3: v2's step loops captured into a CUDA Graph once per shape, then
 * replayed. Changed from v2: the same kernels and GEMMs in the same order, recorded once, 1 launch a pass. */
#include "logchain_math.h"

#include "logchain_problem.h"
#include "runtime/cuda_track.h"

/* v2's step loops (kernels/logchain_v2.cu), captured here */
void lc2_forward_steps(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                       float *out, float *W, float *S, float *m);
void lc2_backward_steps(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                        const float *out, const float *dout, float *dbulk, float *dp0, float *W, float *SU,
                        float *mb);

/* v2 makes 1 + 2 (v-1) launches per forward and 3 (v-1) + 2 per backward, each a few microseconds of CPU and
 * driver work for a small row kernel or GEMM: for a long chain the launches cost more than the work. Once
 * every buffer exists the steps are recorded (stream capture) and launched as one graph: the same kernels and
 * GEMMs in the same order, the same results and memory (the graph has no memory nodes), 1 launch per pass.
 * The graph is kept per call site (cuda_graph_cache, cuda_track.h) and replayed while the shape and every
 * buffer address repeat; a pass with other buffers captures anew. */

#define NKEY(k) ((int)(sizeof(k) / sizeof *(k)))

static void lc3_forward(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                        float *out, float *W, float *S, float *m)
{
    static cuda_graph_cache forward_graph; /* one per shape and set of buffers: replayed while they repeat */
    const uintptr_t key[] = {(uintptr_t)d->n, (uintptr_t)d->t, (uintptr_t)d->v, (uintptr_t)d->c, (uintptr_t)x,
                             (uintptr_t)bulk, (uintptr_t)p0, (uintptr_t)alpha, (uintptr_t)out, (uintptr_t)W,
                             (uintptr_t)S, (uintptr_t)m};
    if (cuda_graph_replay(&forward_graph, key, NKEY(key))) return;
    cuda_capture_begin(1);
    lc2_forward_steps(d, x, bulk, p0, alpha, out, W, S, m);
    cuda_graph_keep(&forward_graph, key, NKEY(key));
}

static void lc3_backward(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                         const float *out, const float *dout, float *dbulk, float *dp0, float *W, float *SU,
                         float *mb)
{
    static cuda_graph_cache backward_graph;
    const uintptr_t key[] = {(uintptr_t)d->n, (uintptr_t)d->t, (uintptr_t)d->v,  (uintptr_t)d->c,
                             (uintptr_t)x,    (uintptr_t)bulk, (uintptr_t)p0,    (uintptr_t)alpha,
                             (uintptr_t)out,  (uintptr_t)dout, (uintptr_t)dbulk, (uintptr_t)dp0,
                             (uintptr_t)W,    (uintptr_t)SU,   (uintptr_t)mb};
    if (cuda_graph_replay(&backward_graph, key, NKEY(key))) return;
    cuda_capture_begin(1);
    lc2_backward_steps(d, x, bulk, p0, alpha, out, dout, dbulk, dp0, W, SU, mb);
    cuda_graph_keep(&backward_graph, key, NKEY(key));
}

/* ---- device memory: the buffers this version allocates around its launchers; the caller attaches the cuBLAS
 * workspace (the session does: uses_cublas)
 * ----------------------------------------------------------------- */
/* v2's buffers: the graph replays v2's steps on them */

extern "C" float *cuda_lc_forward_v3(const lc_dims *d, const float *x, const float *bulk, const float *p0,
                                     float **alpha_out)
{
    float *alpha = (float *)dev_alloc_array(lc_x_count(d), DT_F32, "alpha (n,t,v,c) saved for backward");
    float *out = (float *)dev_alloc_array(lc_out_count(d), DT_F32, "out (n,t)");
    float *W =
        (float *)dev_alloc_array(d->t * d->n * d->c, DT_F32, "fwd scratch: W = exp(alpha - m) (t,n,c)");
    float *S = (float *)dev_alloc_array(d->t * d->n * d->c, DT_F32, "fwd scratch: S = W . P (t,n,c)");
    float *m = (float *)dev_alloc_array(d->t * d->n, DT_F32, "fwd scratch: row maxima m (t,n)");
    lc3_forward(d, x, bulk, p0, alpha, out, W, S, m);
    dev_free(W);
    dev_free(S);
    dev_free(m);
    *alpha_out = alpha;
    return out;
}

extern "C" void cuda_lc_backward_v3(const lc_dims *d, const float *x, const float *bulk, const float *p0,
                                    float *alpha, const float *out, const float *dout, float **dx_out,
                                    float **dbulk_out, float **dp0_out)
{
    float *dx = alpha; /* written over alpha, step by step, as on the CPU (cpu_lc_backward) */
    dev_relabel(dx, "dx (n,t,v,c) written over alpha");
    float *dbulk = (float *)dev_alloc_array(lc_bulk_count(d), DT_F32, "dbulk (1,t,v-1,c,c)");
    float *dp0 = (float *)dev_alloc_array(lc_p0_count(d), DT_F32, "dp0 (1,t,c)");
    float *W =
        (float *)dev_alloc_array(d->t * d->n * d->c, DT_F32, "bwd scratch: W = exp(x + beta - mb) (t,n,c)");
    float *SU =
        (float *)dev_alloc_array(d->t * d->n * d->c, DT_F32, "bwd scratch: U, then S = W . P^T (t,n,c)");
    float *mb = (float *)dev_alloc_array(d->t * d->n, DT_F32, "bwd scratch: row maxima mb (t,n)");
    lc3_backward(d, x, bulk, p0, alpha, out, dout, dbulk, dp0, W, SU, mb);
    dev_free(W);
    dev_free(SU);
    dev_free(mb);
    *dx_out = dx;
    *dbulk_out = dbulk;
    *dp0_out = dp0;
}
