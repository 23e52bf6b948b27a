/* cublas_rowmajor.h - cublasSgemmStridedBatched with row-major arguments, the same as
 * sgemm_cpu_strided_batched. The argument mapping is gemm_layout.h's (tested on the CPU); this only passes it
 * on. CUDA-only. */
#ifndef KERNELS_CUBLAS_ROWMAJOR_H
#define KERNELS_CUBLAS_ROWMAJOR_H

#include "cuda_check.h"
#include "cuda_track.h"
#include "gemm_layout.h"

static inline void cublas_rowmajor_sgemm_strided_batched(cublasHandle_t h, int transA, int transB, int M,
                                                         int N, int K, float alpha, const float *A, int lda,
                                                         long long strideA, const float *B, int ldb,
                                                         long long strideB, float beta, float *C, int ldc,
                                                         long long strideC, int batch, const char *file,
                                                         int line)
{
    cuda_count_launch(); /* one cuBLAS call: one launch in "launches per pass" */
    colmajor_gemm g = rowmajor_as_colmajor(transA, transB, M, N, K, A, lda, strideA, B, ldb, strideB);
    cublas_check_(cublasSgemmStridedBatched(h, g.transa ? CUBLAS_OP_T : CUBLAS_OP_N,
                                            g.transb ? CUBLAS_OP_T : CUBLAS_OP_N, g.m, g.n, g.k, &alpha, g.A,
                                            g.lda, g.strideA, g.B, g.ldb, g.strideB, &beta, C, ldc, strideC,
                                            batch),
                  "cublasSgemmStridedBatched", file, line);
}

/* The call site's file:line goes into the error message. */
#define ROWMAJOR_SGEMM_STRIDED_BATCHED(h, ...) \
    cublas_rowmajor_sgemm_strided_batched((h), __VA_ARGS__, __FILE__, __LINE__)

#endif
