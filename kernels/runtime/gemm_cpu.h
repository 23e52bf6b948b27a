/* gemm_cpu.h - single-precision matrix multiply on the CPU through CBLAS (OpenBLAS), row-major, with the same
 * arguments as the GPU wrapper (cublas_rowmajor.h), so a lesson's CPU and CUDA code read line for line alike.
 *
 *   C = alpha * op(A) * op(B) + beta * C      op(X) = X or X^T
 *   op(A) is (M, K), op(B) is (K, N), C is (M, N); lda/ldb/ldc are row strides in elements.
 *   A stored (M, K) if !transA else (K, M); B stored (K, N) if !transB else (N, K).
 *
 * beta == 0 means C is written, never read: a poisoned (NaN) C does not leak into the result, exactly the
 * BLAS convention. Accumulation is in float, as cuBLAS's SGEMM does (the summation order is the library's).
 *
 * The strided-batched form runs `batch` independent products, matrix b at A + b*strideA, B + b*strideB,
 * C + b*strideC: the view trick lesson 1 uses to multiply G groups without copying anything.
 */
#ifndef KERNELS_GEMM_CPU_H
#define KERNELS_GEMM_CPU_H

#include <stddef.h>

void sgemm_cpu(int transA, int transB, size_t M, size_t N, size_t K, float alpha, const float *A, size_t lda,
               const float *B, size_t ldb, float beta, float *C, size_t ldc);

void sgemm_cpu_strided_batched(int transA, int transB, size_t M, size_t N, size_t K, float alpha,
                               const float *A, size_t lda, size_t strideA, const float *B, size_t ldb,
                               size_t strideB, float beta, float *C, size_t ldc, size_t strideC, size_t batch);

/* For the lesson header: the library's name and how many threads it runs (OPENBLAS_NUM_THREADS sets it). */
int gemm_cpu_threads(void);
const char *gemm_cpu_library(void);
/* One small GEMM, so the library's thread start-up and buffer mapping happen before anything is timed. */
void gemm_cpu_warm_up(void);
/* Multiply-adds per second of a 256^3 GEMM on this machine, measured once (about 20 ms): what the lessons'
 * time estimates divide by. */
double gemm_cpu_fmas_per_second(void);

#endif
