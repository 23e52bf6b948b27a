/* logchain_v3.cu - lesson 2, cuda-v3: v2's step loops captured into a CUDA Graph once per shape, then
 * replayed. Changed from v2: the same kernels and GEMMs in the same order, recorded once, 1 launch a pass. */
#include "logchain_math.h"

#include "logchain_device.h"
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

/* ---- device memory: the buffers around this version's launchers (logchain_device.h); the caller attaches
 * the cuBLAS workspace where the version uses cuBLAS (the session does: uses_cublas) --------------------- */

extern "C" float *cuda_lc_forward_v3(const lc_dims *d, const float *x, const float *bulk, const float *p0,
                                     float **alpha_out)
{
    float *out = lc_dev_forward_out(d, alpha_out);
    lc_scratch s = lc_dev_step_scratch(d, 0);
    lc3_forward(d, x, bulk, p0, *alpha_out, out, s.W, s.S, s.m);
    lc_dev_scratch_free(s);
    return out;
}

extern "C" void cuda_lc_backward_v3(const lc_dims *d, const float *x, const float *bulk, const float *p0,
                                    float *alpha, const float *out, const float *dout, float **dx,
                                    float **dbulk, float **dp0)
{
    lc_dev_grads(d, alpha, dx, dbulk, dp0);
    lc_scratch s = lc_dev_step_scratch(d, 1);
    lc3_backward(d, x, bulk, p0, alpha, out, dout, *dbulk, *dp0, s.W, s.S, s.m);
    lc_dev_scratch_free(s);
}
