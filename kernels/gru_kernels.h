/* gru_kernels.h - declarations of lesson 4's kernels (gru_kernels.cu); CUDA only. */
#ifndef KERNELS_GRU_KERNELS_H
#define KERNELS_GRU_KERNELS_H
#include "gru_geometry.h"
static_assert(GRU_THREADS % 32 == 0, "blocks are whole warps");
__global__ void gru_reparam_fwd_kernel(int B, int H, const float *pd, const float *eps_t, float *St);
__global__ void gru_gate_fwd_kernel(int B, int H, const float *xp_t, const float *zp, const float *h, float *hnew,
                                    float *St);
__global__ void gru_gate_bwd_kernel(int B, int H, const float *dout_t, const float *h, float *dh, float *St);
__global__ void gru_reparam_bwd_kernel(int B, int H, float *St);
__global__ void gru_fill_kernel(long long n, float v, float *p);
#endif
