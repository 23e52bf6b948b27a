/* bmm_grouped.h - lesson 1, optimized: the same product as G strided GEMMs, no copy, no expansion.
 *
 * Group g's operands are views into the original buffers: x_g is (B, K) at x + g*K with row stride G*K,
 * W_g is (K, N) at W + g*K*N, out_g is (B, N) at out + g*N with row stride G*N. A strided-batched GEMM takes
 * exactly these (pointer, leading dimension, stride between groups) triples, so nothing is copied:
 *
 *   out_g = x_g W_g        dx_g = dout_g W_g^T        dW_g = x_g^T dout_g
 *
 * This is what the forum's einsum('bij,abj->abi') runs. The CPU and CUDA versions make the same three calls.
 */
#ifndef OPTIMIZED_BMM_GROUPED_H
#define OPTIMIZED_BMM_GROUPED_H

#include "../kernels/bmm_problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* CPU. forward allocates and returns out (B, G, N); backward allocates *dx (B, G*K) and *dW (G, K, N). */
float *cpu_bmm_forward(const bmm_dims *d, const float *x, const float *W);
void cpu_bmm_backward(const bmm_dims *d, const float *x, const float *W, const float *dout, float **dx,
                      float **dW);

/* 4 bytes per element:
 *   forward_live = x + W + out
 *   peak         = forward_live + dout + dx + dW */
bmm_memory cpu_bmm_memory(const bmm_dims *d);

/* CUDA (built when HAVE_CUDA). All pointers are device pointers from dev_alloc; same shapes as above. The
 * caller attaches the cuBLAS workspace (cuda_track.h) before forward and detaches it after backward. */
float *cuda_bmm_forward(const bmm_dims *d, const float *x, const float *W);
void cuda_bmm_backward(const bmm_dims *d, const float *x, const float *W, const float *dout, float **dx,
                       float **dW);

/* Device bytes: cpu_bmm_memory + the cuBLAS workspace (CUBLAS_WORKSPACE_BYTES) in both quantities. */
bmm_memory cuda_bmm_memory(const bmm_dims *d);

/* 1 if every leading dimension and stride of the three GEMMs fits cuBLAS's int arguments. */
int cuda_bmm_dims_fit(const bmm_dims *d);

#ifdef __cplusplus
}
#endif

#endif
