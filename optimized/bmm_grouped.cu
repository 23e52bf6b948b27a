/* bmm_grouped.cu - lesson 1's grouped GEMM on the GPU: three cublasSgemmStridedBatched calls, the same
 * (pointer, leading dimension, group stride) triples as bmm_grouped.c. No kernel of our own is needed: the
 * strides express the grouping, and cuBLAS reduces over B inside dW's GEMM. */
#include "bmm_grouped.h"

#include "../kernels/runtime/cublas_rowmajor.h"
#include "../kernels/runtime/cuda_track.h"

extern "C" float *cuda_bmm_forward(const bmm_dims *d, const float *x, const float *W)
{
    int B = (int)d->B, G = (int)d->G, K = (int)d->K, N = (int)d->N;
    cublasHandle_t h = (cublasHandle_t)cublas_handle();
    float *out = (float *)dev_alloc_array(bmm_out_count(d), DT_F32, "out (B,G,N)"); /* (B, G, N) */
    /* out_g (B, N; ld G*N) = x_g (B, K; ld G*K) . W_g (K, N; ld N) */
    ROWMAJOR_SGEMM_STRIDED_BATCHED(h, 0, 0, B, N, K, 1.0f, x, G * K, K, W, N, (long long)K * N, 0.0f, out, G * N,
                                   N, G);
    return out;
}

extern "C" void cuda_bmm_backward(const bmm_dims *d, const float *x, const float *W, const float *dout,
                                  float **dx, float **dW)
{
    int B = (int)d->B, G = (int)d->G, K = (int)d->K, N = (int)d->N;
    cublasHandle_t h = (cublasHandle_t)cublas_handle();
    float *gx = (float *)dev_alloc_array(bmm_x_count(d), DT_F32, "dx (B,G*K)"); /* (B, G*K) */
    float *gW = (float *)dev_alloc_array(bmm_w_count(d), DT_F32, "dW (G,K,N)"); /* (G, K, N) */
    /* dx_g (B, K; ld G*K) = dout_g (B, N; ld G*N) . W_g^T */
    ROWMAJOR_SGEMM_STRIDED_BATCHED(h, 0, 1, B, K, N, 1.0f, dout, G * N, N, W, N, (long long)K * N, 0.0f, gx, G * K,
                                   K, G);
    /* dW_g (K, N) = x_g^T . dout_g, reduced over B inside the GEMM */
    ROWMAJOR_SGEMM_STRIDED_BATCHED(h, 1, 0, K, N, B, 1.0f, x, G * K, K, dout, G * N, N, 0.0f, gW, N,
                                   (long long)K * N, G);
    *dx = gx;
    *dW = gW;
}
