/* logchain_kernels.h - lesson 2's device kernels, declared for the host code that launches them
 * (optimized/logchain_forward.cu). v1: logchain_kernels.cu; v2: logchain_kernels_v2.cu. CUDA-only. */
#ifndef KERNELS_LOGCHAIN_KERNELS_H
#define KERNELS_LOGCHAIN_KERNELS_H

#include <cuda_runtime.h>

/* v1: log-space throughout, no cuBLAS */
__global__ void alpha_init_kernel(int n, int c, const float *x0, long long ld, const float *p0s, float *alpha0);
__global__ void log_vecmat_kernel(int n, int c, const float *in, long long ld_in, const float *add_in,
                                  long long ld_add_in, const float *P, int transP, const float *add_out,
                                  long long ld_add_out, float *out, long long ld_out);
__global__ void logz_kernel(int n, int c, const float *alpha_last, long long ld, float *out, long long ld_out);
__global__ void posterior_kernel(int n, int c, const float *alpha_i, long long ld, const float *beta_i,
                                 const float *dout, const float *logz, long long ld_r, float *dx_i);
__global__ void dbulk_kernel(int n, int c, const float *alpha_i, const float *x_next, long long ld,
                             const float *beta_next, const float *dout, const float *logz, long long ld_r,
                             float *dbulk_i);
__global__ void dp0_kernel(int n, int c, const float *dx0, long long ld, const float *p0s, float *dp0s);

/* v2: row-wise kernels around cuBLAS GEMMs (see logchain_kernels_v2.cu) */
__global__ void lc2_fwd_weights_kernel(int n, int c, int t, int v, int i, const float *x, const float *p0,
                                       const float *S, float *m, float *alpha, float *W, float *out);
__global__ void lc2_bwd_weights_kernel(int n, int c, int t, int v, int i, const float *x, const float *dout,
                                       const float *out, float *mb, float *alpha, float *W, float *SU);
__global__ void lc2_dx0_kernel(int n, int c, int t, int v, const float *dout, const float *out, const float *mb,
                               const float *S, float *alpha);
__global__ void lc2_dp0_kernel(int n, int c, int t, int v, const float *dx, const float *p0, float *dp0);

#endif
