/* gemm_cpu.c - a plain, cache-friendly SGEMM: no blocking beyond loop order, on purpose. The lessons compare
 * memory and algorithms, not BLAS libraries; this is fast enough and every line can be stepped through.
 *
 * Loop order: when B is not transposed, the innermost loop runs along a row of B and a row of C (unit
 * stride, so the compiler vectorises it: c[i, :] += a[i, k] * b[k, :]); with A transposed too, k is the
 * outer loop so A is also read along its rows. When B is transposed, op(B)'s columns are B's rows, so the
 * innermost loop is a dot product along K with unit stride in both operands. Every element of C sees its K
 * terms added in the order k = 0, 1, ..., K-1. */
#include "gemm_cpu.h"

static void scale_rows(size_t M, size_t N, float beta, float *C, size_t ldc)
{
    for (size_t i = 0; i < M; i++) {
        float *c = C + i * ldc; /* row i of C, (N,) */
        if (beta == 0.0f)
            for (size_t j = 0; j < N; j++) c[j] = 0.0f;
        else if (beta != 1.0f)
            for (size_t j = 0; j < N; j++) c[j] *= beta;
    }
}

void sgemm_cpu(int transA, int transB, size_t M, size_t N, size_t K, float alpha, const float *A, size_t lda,
               const float *B, size_t ldb, float beta, float *C, size_t ldc)
{
    scale_rows(M, N, beta, C, ldc);
    if (!transB && transA) {
        /* A stored (K, M): walk it row by row (unit stride in i), adding a[k, i] * b[k, :] to c[i, :]. Row k of
         * A and row k of B are read once each; C (M, N) stays in cache for small M. */
        for (size_t k = 0; k < K; k++) {
            const float *a = A + k * lda, *b = B + k * ldb; /* a is (M,), b is (N,) */
            for (size_t i = 0; i < M; i++) {
                float s = alpha * a[i];
                float *c = C + i * ldc;
                for (size_t j = 0; j < N; j++) c[j] += s * b[j];
            }
        }
        return;
    }
    for (size_t i = 0; i < M; i++) {
        float *c = C + i * ldc; /* row i of C, (N,) */
        if (!transB) {
            const float *a = A + i * lda; /* row i of A, (K,) */
            for (size_t k = 0; k < K; k++) {
                float s = alpha * a[k];
                const float *b = B + k * ldb; /* row k of B, (N,) */
                for (size_t j = 0; j < N; j++) c[j] += s * b[j];
            }
        } else {
            for (size_t j = 0; j < N; j++) {
                const float *b = B + j * ldb; /* row j of B = column j of op(B), (K,) */
                float acc = 0.0f;
                if (!transA) {
                    const float *a = A + i * lda;
                    for (size_t k = 0; k < K; k++) acc += a[k] * b[k];
                } else {
                    for (size_t k = 0; k < K; k++) acc += A[k * lda + i] * b[k];
                }
                c[j] += alpha * acc;
            }
        }
    }
}

void sgemm_cpu_strided_batched(int transA, int transB, size_t M, size_t N, size_t K, float alpha,
                               const float *A, size_t lda, size_t strideA, const float *B, size_t ldb,
                               size_t strideB, float beta, float *C, size_t ldc, size_t strideC, size_t batch)
{
    for (size_t b = 0; b < batch; b++)
        sgemm_cpu(transA, transB, M, N, K, alpha, A + b * strideA, lda, B + b * strideB, ldb, beta,
                  C + b * strideC, ldc);
}
