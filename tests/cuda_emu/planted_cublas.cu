/* planted_cublas.cu - TEST-ONLY: a row-major GEMM through column-major cuBLAS, right and wrong (planted.h). */
#include "../../kernels/runtime/cuda_check.h"
#include "planted.h"

#include <string.h>

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
    /* column-major C^T (N x M) = B^T (N x K; ld N) . A^T (K x M; ld K): see kernels/runtime/gemm_layout.h */
    cublasStatus_t s = cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, dB, N, dA, lda, &zero, dC, N);
    (void)cudaGetLastError();
    CUDA_CHECK(cudaMemcpy(C, dC, (size_t)M * N * sizeof(float), cudaMemcpyDeviceToHost));
    CUBLAS_CHECK(cublasDestroy(h));
    CUDA_CHECK(cudaFree(dA));
    CUDA_CHECK(cudaFree(dB));
    CUDA_CHECK(cudaFree(dC));
    return (int)s;
}

static unsigned short to_bf16(float f) /* truncation: the test's values are exact in bf16 */
{
    unsigned int u;
    memcpy(&u, &f, 4);
    return (unsigned short)(u >> 16);
}

extern "C" int planted_gemm_ex(int types_ok, const float *A, const float *B, float *C, int M, int N, int K)
{
    unsigned short hA[64 * 64], hB[64 * 64];
    for (int i = 0; i < M * K; i++) hA[i] = to_bf16(A[i]);
    for (int i = 0; i < K * N; i++) hB[i] = to_bf16(B[i]);
    void *dA, *dB;
    float *dC;
    CUDA_CHECK(cudaMalloc(&dA, (size_t)M * K * 2));
    CUDA_CHECK(cudaMalloc(&dB, (size_t)K * N * 2));
    CUDA_CHECK(cudaMalloc((void **)&dC, (size_t)2 * M * N * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dA, hA, (size_t)M * K * 2, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dB, hB, (size_t)K * N * 2, cudaMemcpyHostToDevice));
    cublasHandle_t h;
    CUBLAS_CHECK(cublasCreate(&h));
    float one = 1.0f, zero = 0.0f;
    cudaDataType ct = types_ok ? CUDA_R_32F : CUDA_R_16F;
    cublasStatus_t s = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, dB, CUDA_R_16BF, N, dA, CUDA_R_16BF,
                                    K, &zero, dC, ct, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    if (s == CUBLAS_STATUS_SUCCESS) /* the same product twice more, as batch entries 0 and 1 (C stride M N) */
        s = cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, dB, CUDA_R_16BF, N, 0, dA,
                                       CUDA_R_16BF, K, 0, &zero, dC, CUDA_R_32F, N, (long long)M * N, 2,
                                       CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    CUDA_CHECK(cudaMemcpy(C, dC, (size_t)2 * M * N * sizeof(float), cudaMemcpyDeviceToHost));
    CUBLAS_CHECK(cublasDestroy(h));
    CUDA_CHECK(cudaFree(dA));
    CUDA_CHECK(cudaFree(dB));
    CUDA_CHECK(cudaFree(dC));
    return (int)s;
}
