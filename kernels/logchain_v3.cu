/* logchain_v3.cu - lesson 2, cuda-v3: v2's step loops captured into one CUDA Graph per pass.
 *
 * v2 makes 1 + 2 (v-1) launches per forward and 3 (v-1) + 2 per backward, each a few microseconds of CPU and
 * driver work for a small row kernel or GEMM: for a long chain the launches cost more than the work. Once
 * every buffer exists the steps are recorded (stream capture) and launched as one graph: the same kernels and
 * GEMMs in the same order, the same results and memory (the graph has no memory nodes), 1 launch per pass. */
#include "logchain_math.h"

#include "logchain_problem.h"
#include "runtime/cuda_track.h"

/* v2's steps (kernels/logchain_v2.cu) */
void lc2_forward_steps(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                       float *out, float *W, float *S, float *m);
void lc2_backward_steps(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                        const float *out, const float *dout, float *dbulk, float *dp0, float *W, float *SU,
                        float *mb);

void lc3_forward(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha, float *out,
                 float *W, float *S, float *m)
{
    cuda_capture_begin(1);
    lc2_forward_steps(d, x, bulk, p0, alpha, out, W, S, m);
    cuda_capture_end_launch_once();
}

void lc3_backward(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                  const float *out, const float *dout, float *dbulk, float *dp0, float *W, float *SU, float *mb)
{
    cuda_capture_begin(1);
    lc2_backward_steps(d, x, bulk, p0, alpha, out, dout, dbulk, dp0, W, SU, mb);
    cuda_capture_end_launch_once();
}
