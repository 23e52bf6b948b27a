/* logchain_forward.h - lesson 2, optimized: the forward algorithm (alpha recursion) and its backward (beta).
 * The chain p0^T D_0 P_0 D_1 ... P_{v-2} D_{v-1} 1 starts with a vector. Multiplied from the left, every step
 * is vector x matrix: O(c^2) per row and step, O(n v c^2) in all, and the only state worth keeping is the
 * running vector, alpha_i = log(p0^T D_0 P_0 ... D_i) (a (c,) vector per row). The forum's tree multiplies
 * matrices by matrices: O(n v c^3), with (n, t, v-1, c, c) tensors at every level.
 *   alpha_0[j]     = log p0[j] + x_0[j]
 *   alpha_{i+1}[k] = x_{i+1}[k] + log sum_j exp(alpha_i[j]) P_i[j, k]
 *   out            = log Z = log sum_k exp(alpha_{v-1}[k])
 *   beta_{v-1}[k]  = 0,   beta_i[j] = log sum_k P_i[j, k] exp(x_{i+1}[k] + beta_{i+1}[k])
 *   dx_i[j]        = dout * exp(alpha_i[j] + beta_i[j] - log Z)                       (posterior marginal)
 *   dbulk_i[j, k]  = sum_b dout_b * exp(alpha_i[j] + x_{i+1}[k] + beta_{i+1}[k] - log Z_b)  (xi / P)
 *   dp0[j]         = sum_b dout_b * exp(alpha_0[j] + beta_0[j] - log Z_b) / p0[j]
 * Each log-space step runs as  m + log( exp(a - m) . P )  with m the row maximum (kernels/logchain_math.h),
 * so on the CPU it is one (n x c) . (c x c) GEMM per step and chain position s, on weights in (0, 1]. The
 * transition gradient U^T W is a GEMM whose inner dimension is the batch: no (n, c, c) tensor ever exists. */
#ifndef OPTIMIZED_LOGCHAIN_FORWARD_H
#define OPTIMIZED_LOGCHAIN_FORWARD_H

#include "../kernels/logchain_problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* CPU. forward allocates and returns out (n,t) and *alpha (n,t,v,c), saved for backward. Its scratch, freed
 * before it returns: weights (n,c), sums (n,c), row maxima (n). */
float *cpu_lc_forward(const lc_dims *d, const float *x, const float *bulk, const float *p0, float **alpha);

/* Allocates *dbulk (1,t,v-1,c,c) and *dp0 (1,t,c); *dx (n,t,v,c) is alpha's buffer, overwritten in place as
 * the beta recursion walks back (alpha_i is dead once dx_i is written), so the caller frees *dx and not
 * alpha. Scratch for its duration: beta (n,c), weights W (n,c), U (n,c), sums (n,c), two row-max vectors
 * (n). */
void cpu_lc_backward(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                     const float *out, const float *dout, float **dx, float **dbulk, float **dp0);

/* 4 bytes per element, R = n*t rows:
 *   forward_live = x + bulk + p0 + alpha + out
 *   peak         = forward_live + dout + dbulk + dp0 + (4 n c + 2 n) backward scratch   (dx reuses alpha)
 *                  (the forward's scratch, 2 n c + n, is smaller and gone before backward) */
lc_memory cpu_lc_memory(const lc_dims *d);
/* x + bulk + p0 in bytes: every version's inputs */
size_t lc_inputs_bytes(const lc_dims *d);

/* CUDA (built when HAVE_CUDA): cuda-vN's forward and backward, in kernels/logchain_vN.cu, with the CPU
 * functions' contract: device pointers from dev_alloc, the same shapes, *dx is alpha's buffer. A version that
 * uses cuBLAS (v2 to v5) needs the tracked workspace attached around forward + backward, as the session does
 * for uses_cublas. lc5_unfit: NULL, or why this device's opt-in shared memory cannot hold v5's rings. */
float *cuda_lc_forward_v1(const lc_dims *d, const float *x, const float *bulk, const float *p0,
                          float **alpha);
void cuda_lc_backward_v1(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                         const float *out, const float *dout, float **dx, float **dbulk, float **dp0);
float *cuda_lc_forward_v2(const lc_dims *d, const float *x, const float *bulk, const float *p0,
                          float **alpha);
void cuda_lc_backward_v2(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                         const float *out, const float *dout, float **dx, float **dbulk, float **dp0);
float *cuda_lc_forward_v3(const lc_dims *d, const float *x, const float *bulk, const float *p0,
                          float **alpha);
void cuda_lc_backward_v3(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                         const float *out, const float *dout, float **dx, float **dbulk, float **dp0);
float *cuda_lc_forward_v4(const lc_dims *d, const float *x, const float *bulk, const float *p0,
                          float **alpha);
void cuda_lc_backward_v4(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                         const float *out, const float *dout, float **dx, float **dbulk, float **dp0);
float *cuda_lc_forward_v5(const lc_dims *d, const float *x, const float *bulk, const float *p0,
                          float **alpha);
void cuda_lc_backward_v5(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                         const float *out, const float *dout, float **dx, float **dbulk, float **dp0);
const char *lc5_unfit(const lc_dims *d);

/* Device bytes, R = n*t rows, 4 bytes per element; inputs = x + bulk + p0; dx reuses alpha in both.
 * v2, v3: forward_live = inputs + alpha + out + cuBLAS workspace (CUBLAS_WORKSPACE_BYTES)
 *     peak         = forward_live + dout + dbulk + dp0 + scratch 2 R c + R
 *                    (forward's scratch W, S, m has the same size and is freed before dout exists)
 * v1: forward_live = inputs + alpha + out
 *     peak         = forward_live + dout + dbulk + dp0 + beta ping-pong 2 (n,c)   (no cuBLAS) */
lc_memory cuda_lc_memory_v2(const lc_dims *d);
lc_memory cuda_lc_memory_v1(const lc_dims *d);
/* v4: forward_live = v2's; peak = forward_live + dout + dbulk + dp0 + U, W 2 t (v-1) n c */
lc_memory cuda_lc_memory_v4(const lc_dims *d);

/* 1 if n, t, v, c and the grid dimensions fit the kernels' int arithmetic and launch limits
 * (kernels/logchain_math.h). */
int cuda_lc_dims_fit_v2(const lc_dims *d);
int cuda_lc_dims_fit_v1(const lc_dims *d);
int cuda_lc_dims_fit_v4(const lc_dims *d);

#ifdef __cplusplus
}
#endif

#endif
