/* bmm_v1.cu - lesson 1, cuda-v1: the grouped product as three strided-batched cuBLAS GEMMs, no kernel of
 * ours: the CPU version's three calls (optimized/bmm_grouped.c) on views into the original buffers. */
#include "bmm_problem.h"

#include "runtime/cublas_rowmajor.h"
#include "runtime/cuda_track.h"

/* Group g's operands are views into the original buffers: x_g is (B, K) at x + g*K with row stride G*K, W_g
 * is (K, N) at W + g*K*N, out_g is (B, N) at out + g*N with row stride G*N. cublasSgemmStridedBatched takes
 * exactly these (pointer, leading dimension, stride between groups) triples, so nothing is copied or
 * expanded, and dW's GEMM reduces over B itself. The same three calls as the CPU version
 * (optimized/bmm_grouped.c). */

/* out (B, G, N) = x (B, G*K) . W (G, K, N) group by group */
static void bmm1_forward(const bmm_dims *d, const float *x, const float *W, float *out)
{
    int B = (int)d->B, G = (int)d->G, K = (int)d->K, N = (int)d->N;
    cublasHandle_t h = (cublasHandle_t)cublas_handle();
    /* out_g (B, N; ld G*N) = x_g (B, K; ld G*K) . W_g (K, N; ld N) */
    ROWMAJOR_SGEMM_STRIDED_BATCHED(h, 0, 0, B, N, K, 1.0f, x, G * K, K, W, N, (long long)K * N, 0.0f, out,
                                   G * N, N, G);
}

/* dx (B, G*K) = dout . W^T and dW (G, K, N) = x^T . dout, group by group */
static void bmm1_backward(const bmm_dims *d, const float *x, const float *W, const float *dout, float *dx,
                          float *dW)
{
    int B = (int)d->B, G = (int)d->G, K = (int)d->K, N = (int)d->N;
    cublasHandle_t h = (cublasHandle_t)cublas_handle();
    /* dx_g (B, K; ld G*K) = dout_g (B, N; ld G*N) . W_g^T */
    ROWMAJOR_SGEMM_STRIDED_BATCHED(h, 0, 1, B, K, N, 1.0f, dout, G * N, N, W, N, (long long)K * N, 0.0f, dx,
                                   G * K, K, G);
    /* dW_g (K, N) = x_g^T . dout_g, reduced over B inside the GEMM */
    ROWMAJOR_SGEMM_STRIDED_BATCHED(h, 1, 0, K, N, B, 1.0f, x, G * K, K, dout, G * N, N, 0.0f, dW, N,
                                   (long long)K * N, G);
}

/* ---- device memory: out in forward, dx and dW in backward; the caller attaches the cuBLAS workspace ---- */

extern "C" float *cuda_bmm_forward(const bmm_dims *d, const float *x, const float *W)
{
    float *out = (float *)dev_alloc_array(bmm_out_count(d), DT_F32, "out (B,G,N)"); /* (B, G, N) */
    bmm1_forward(d, x, W, out);
    return out;
}

extern "C" void cuda_bmm_backward(const bmm_dims *d, const float *x, const float *W, const float *dout,
                                  float **dx, float **dW)
{
    float *gx = (float *)dev_alloc_array(bmm_x_count(d), DT_F32, "dx (B,G*K)"); /* (B, G*K) */
    float *gW = (float *)dev_alloc_array(bmm_w_count(d), DT_F32, "dW (G,K,N)"); /* (G, K, N) */
    bmm1_backward(d, x, W, dout, gx, gW);
    *dx = gx;
    *dW = gW;
}
