/* gemm_layout.h - how a row-major GEMM is handed to column-major cuBLAS, as plain C so the CPU tests check
 * it.
 *
 * A row-major (r x c) matrix with row stride ld is, read column-major, its transpose (c x r) with leading
 * dimension ld. So the row-major product C = op(A) op(B) is the column-major product C^T = op(B)^T op(A)^T:
 * swap the two operands, swap M with N, and keep each operand's own transpose flag. No data moves.
 * cublas_rowmajor.h feeds these arguments to cublasSgemmStridedBatched; test_runtime.c feeds them to a
 * column-major reference GEMM and checks the result against sgemm_cpu_strided_batched.
 */
#ifndef KERNELS_GEMM_LAYOUT_H
#define KERNELS_GEMM_LAYOUT_H

typedef struct {
    int transa, transb; /* 1 = transpose (CUBLAS_OP_T) */
    int m, n, k;
    const float *A;     /* column-major first operand */
    int lda;
    long long strideA;
    const float *B;     /* column-major second operand */
    int ldb;
    long long strideB;
} colmajor_gemm;

static inline colmajor_gemm rowmajor_as_colmajor(int transA, int transB, int M, int N, int K, const float *A,
                                                 int lda, long long strideA, const float *B, int ldb,
                                                 long long strideB)
{
    colmajor_gemm g;
    g.transa = transB;
    g.transb = transA;
    g.m = N;
    g.n = M;
    g.k = K;
    g.A = B;
    g.lda = ldb;
    g.strideA = strideB;
    g.B = A;
    g.ldb = lda;
    g.strideB = strideA;
    return g;
}

#endif
