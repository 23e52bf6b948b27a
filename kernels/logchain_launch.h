/* logchain_launch.h - lesson 2's CUDA launchers (kernels/logchain_vN.cu), called by
 * optimized/logchain_forward.cu, which allocates their buffers; v3 replays v2's steps. Every pointer is a
 * device pointer; CUDA sources only. */
#ifndef KERNELS_LOGCHAIN_LAUNCH_H
#define KERNELS_LOGCHAIN_LAUNCH_H

#include "logchain_problem.h"

/* cuda-v1: bcur, bnext (n, c) are backward's two beta rows */
void lc1_forward(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                 float *out);
void lc1_backward(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                  const float *out, const float *dout, float *dbulk, float *dp0, float *bcur, float *bnext);
/* cuda-v2: W, S (t, n, c) scratch, m (t, n) row shifts; backward: W, SU (t, n, c), mb (t, n) */
void lc2_forward_steps(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                       float *out, float *W, float *S, float *m);
void lc2_backward_steps(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                        const float *out, const float *dout, float *dbulk, float *dp0, float *W, float *SU,
                        float *mb);
/* cuda-v3: v2's steps as one CUDA Graph, the same buffers */
void lc3_forward(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                 float *out, float *W, float *S, float *m);
void lc3_backward(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                  const float *out, const float *dout, float *dbulk, float *dp0, float *W, float *SU,
                  float *mb);
/* cuda-v4: one persistent kernel per pass; U, W (t, v-1, n, c) every step's dbulk operands */
void lc4_forward(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                 float *out);
void lc4_backward(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                  const float *out, const float *dout, float *dbulk, float *dp0, float *U, float *W);
/* cuda-v5: v4's walk with each warp's rows of P copied ahead (cp.async) into shared memory, one thread per
 * state between walks; v4's buffers */
void lc5_forward(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                 float *out);
void lc5_backward(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                  const float *out, const float *dout, float *dbulk, float *dp0, float *U, float *W);
/* v2's dp0 = sum_b dx_0 / p0, shared with v4 */
void lc2_dp0(const lc_dims *d, const float *dx, const float *p0, float *dp0);

#endif
