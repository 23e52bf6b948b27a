/* gru_v2.cu - lesson 4, cuda-v2: v1's step loops captured into one CUDA Graph per pass.
 *
 * v1 makes about five launches per time step (two GEMMs and the cell kernels), each a few microseconds of CPU
 * and driver work for little device work at small B and H: over T steps the launches dominate. Once the arena
 * is carved and the gradients allocated, the loop is recorded (stream capture) and launched as one graph: the
 * same kernels and GEMMs in the same order, the same results and memory, 1 launch per forward and backward. */
extern "C" {
#include "../optimized/gru_fused.h"
}
#include "runtime/cuda_track.h"

/* v1's loops (kernels/gru_v1.cu) */
void gru1_forward_range(const gru_dims *d, const float *x, const float *h0, const float *eps, const float *W_enc,
                        const float *W_ih, const float *W_zh, float *out, int recompute, size_t t0, size_t t1,
                        gru_fused_ws *ws);
void gru1_backward_steps(const gru_dims *d, const float *x, const float *h0, const float *eps, const float *W_enc,
                         const float *W_ih, const float *W_zh, const float *out, const float *dout,
                         gru_fused_ws *ws, gru_grads *g);

void gru2_forward(const gru_dims *d, const float *x, const float *h0, const float *eps, const float *W_enc,
                  const float *W_ih, const float *W_zh, float *out, gru_fused_ws *ws)
{
    cuda_capture_begin(1);
    gru1_forward_range(d, x, h0, eps, W_enc, W_ih, W_zh, out, 0, 0, d->T, ws);
    cuda_capture_end_launch_once();
}

void gru2_backward_steps(const gru_dims *d, const float *x, const float *h0, const float *eps, const float *W_enc,
                         const float *W_ih, const float *W_zh, const float *out, const float *dout,
                         gru_fused_ws *ws, gru_grads *g)
{
    cuda_capture_begin(1);
    gru1_backward_steps(d, x, h0, eps, W_enc, W_ih, W_zh, out, dout, ws, g);
    cuda_capture_end_launch_once();
}
