/* planted_cublas.cu - TEST-ONLY: a row-major GEMM through column-major cuBLAS, right and wrong (planted.h). */
#include "../../kernels/cuda_check.h"
#include "planted.h"

extern "C" int planted_gemm(int bug, const float *A, const float *B, float *C, int M, int N, int K)
{
    float *dA, *dB, *dC;
    CUDA_CHECK(cudaMalloc((void **)&dA, (size_t)M * K * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&dB, (size_t)K * N * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&dC, (size_t)M * N * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dA, A, (size_t)M * K * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dB, B, (size_t)K * N * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dC, 0xFF, (size_t)M * N * sizeof(float))); /* NaN: beta = 0 must not read it */
    cublasHandle_t h;
    CUBLAS_CHECK(cublasCreate(&h));
    float one = 1.0f, zero = 0.0f;
    int lda = bug == 1 ? M : bug == 2 ? 2 * K : K; /* PLANTED (1, 2): row-major A (M x K) has row stride K */
    /* column-major C^T (N x M) = B^T (N x K; ld N) . A^T (K x M; ld K): see kernels/gemm_layout.h */
    cublasStatus_t s = cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, dB, N, dA, lda, &zero, dC, N);
    (void)cudaGetLastError();
    CUDA_CHECK(cudaMemcpy(C, dC, (size_t)M * N * sizeof(float), cudaMemcpyDeviceToHost));
    CUBLAS_CHECK(cublasDestroy(h));
    CUDA_CHECK(cudaFree(dA));
    CUDA_CHECK(cudaFree(dB));
    CUDA_CHECK(cudaFree(dC));
    return (int)s;
}
