/* blas_reference.h - what every float64 reference shares: double-precision GEMM (dgemm_cpu: OpenBLAS's
 * cblas_dgemm) and tracked float64 copies of float32 inputs.
 *
 * The references check the float32 implementations, so they share no code path with them beyond the GEMM
 * layer: no sgemm_cpu, no lesson math header; only dgemm_cpu, which accumulates in double. Every temporary
 * is a tracked host allocation labelled "reference: ...": it never enters an implementation's row (the
 * reference runs after every implementation), and `track_report_live` sees a leak.
 *
 *   C (M, N) = op(A) (M, K) . op(B) (K, N) + beta C, row-major; lda/ldb/ldc are row strides in elements;
 *   A stored (M, K) if !transA else (K, M); B stored (K, N) if !transB else (N, K).
 */
#ifndef LESSONS_BLAS_REFERENCE_H
#define LESSONS_BLAS_REFERENCE_H

#include <stddef.h>

#include "gemm_cpu.h"
#include "track.h"

enum { REF_N = 0, REF_T = 1 }; /* op(X) = X, or X^T */

static inline void ref_dgemm(int transA, int transB, size_t M, size_t N, size_t K, const double *A,
                             size_t lda, const double *B, size_t ldb, double beta, double *C, size_t ldc)
{
    dgemm_cpu(transA, transB, M, N, K, 1.0, A, lda, B, ldb, beta, C, ldc);
}

/* A tracked float64 copy of src (n floats), |src| when absolute is set (the terms' magnitudes for error
 * bounds). */
static inline double *ref_f64_copy(const float *src, size_t n, int absolute, const char *label)
{
    double *d = host_alloc_array(n, DT_F64, label);
    for (size_t i = 0; i < n; i++) d[i] = absolute && src[i] < 0 ? -(double)src[i] : (double)src[i];
    return d;
}

#endif
