/* cublas_rowmajor.h - cublasSgemmStridedBatched with row-major arguments, the same as sgemm_cpu_strided_batched.
 *
 * cuBLAS is column-major. A row-major (r x c) matrix with row stride ld is, read column-major, its transpose
 * (c x r) with leading dimension ld. So the row-major product C = op(A) op(B) is computed as the column-major
 * product C^T = op(B)^T op(A)^T: swap the operands and swap M with N; each operand keeps its own trans flag.
 * No data moves; only the description changes. CUDA-only.
 */
#ifndef KERNELS_CUBLAS_ROWMAJOR_H
#define KERNELS_CUBLAS_ROWMAJOR_H

#include "cuda_check.h"

static inline void cublas_rowmajor_sgemm_strided_batched(cublasHandle_t h, int transA, int transB, int M, int N,
                                                         int K, float alpha, const float *A, int lda,
                                                         long long strideA, const float *B, int ldb,
                                                         long long strideB, float beta, float *C, int ldc,
                                                         long long strideC, int batch, const char *file,
                                                         int line)
{
    cublas_check_(cublasSgemmStridedBatched(h, transB ? CUBLAS_OP_T : CUBLAS_OP_N, transA ? CUBLAS_OP_T : CUBLAS_OP_N,
                                            N, M, K, &alpha, B, ldb, strideB, A, lda, strideA, &beta, C, ldc,
                                            strideC, batch),
                  "cublasSgemmStridedBatched", file, line);
}

/* The call site's file:line goes into the error message. */
#define ROWMAJOR_SGEMM_STRIDED_BATCHED(h, ...) \
    cublas_rowmajor_sgemm_strided_batched((h), __VA_ARGS__, __FILE__, __LINE__)

#endif
