/* gemm_cpu.c - the project's CPU GEMM: row-major arguments handed to CBLAS (OpenBLAS).
 *
 * The lessons compare algorithms and memory, so every CPU implementation, naive and optimized alike, runs its
 * matrix products through the same optimized library: a time ratio then measures the algorithm, not the
 * quality of two hand-written loops. (A plain triple loop was 12x behind PyTorch on OpenBLAS for lesson 1.)
 * The tests keep one tiny independent reference GEMM of their own to check these arguments.
 *
 * CBLAS takes int dimensions and leading dimensions: a size beyond INT_MAX is a programming error here (the
 * lessons' fit checks refuse such dimensions first), reported with the call's sizes. */
#include "gemm_cpu.h"

#include <cblas.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "timer.h"

static int as_int(size_t v, const char *what)
{
    if (v > INT_MAX) {
        fprintf(stderr, "sgemm_cpu: %s = %zu exceeds CBLAS's int range\n", what, v);
        abort();
    }
    return (int)v;
}

void sgemm_cpu(int transA, int transB, size_t M, size_t N, size_t K, float alpha, const float *A, size_t lda,
               const float *B, size_t ldb, float beta, float *C, size_t ldc)
{
    if (M == 0 || N == 0) return;
    /* beta == 0: BLAS writes C without reading it, so a poisoned (NaN) C cannot leak into the result. */
    cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans,
                as_int(M, "M"), as_int(N, "N"), as_int(K, "K"), alpha, A, as_int(lda, "lda"), B,
                as_int(ldb, "ldb"), beta, C, as_int(ldc, "ldc"));
}

void sgemm_cpu_strided_batched(int transA, int transB, size_t M, size_t N, size_t K, float alpha,
                               const float *A, size_t lda, size_t strideA, const float *B, size_t ldb,
                               size_t strideB, float beta, float *C, size_t ldc, size_t strideC, size_t batch)
{
    for (size_t b = 0; b < batch; b++)
        sgemm_cpu(transA, transB, M, N, K, alpha, A + b * strideA, lda, B + b * strideB, ldb, beta,
                  C + b * strideC, ldc);
}

int gemm_cpu_threads(void) { return openblas_get_num_threads(); }

const char *gemm_cpu_library(void) { return "OpenBLAS (CBLAS)"; }

void gemm_cpu_warm_up(void)
{
    /* OpenBLAS starts its threads and maps its packing buffers on the first call: pay that here, once, so no
     * implementation's first GEMM is charged for it. Stack buffers: nothing to track. */
    float a[64 * 64], c[64 * 64];
    for (int i = 0; i < 64 * 64; i++) a[i] = (float)(i % 7);
    sgemm_cpu(0, 0, 64, 64, 64, 1.0f, a, 64, a, 64, 0.0f, c, 64);
}

double gemm_cpu_fmas_per_second(void)
{
    /* The best of several 512^3 GEMMs: the rate this machine reaches, not an average over whatever else it is
     * doing (a slow calibration on a loaded machine made shares above 100%); 10 runs or 200 ms, at least 3. */
    enum { S = 512 };
    static float a[S * S], c[S * S]; /* calibration buffers, not a lesson's memory */
    static double rate;
    if (rate > 0.0) return rate;
    for (int i = 0; i < S * S; i++) a[i] = (float)(i % 7) - 3.0f;
    double best = 0.0, t_start = host_time_ms();
    for (int reps = 0; reps < 10 && (reps < 3 || host_time_ms() - t_start < 200.0); reps++) {
        double t0 = host_time_ms();
        sgemm_cpu(0, 0, S, S, S, 1.0f, a, S, a, S, 0.0f, c, S);
        double ms = host_time_ms() - t0;
        if (best == 0.0 || ms < best) best = ms;
    }
    rate = (double)S * S * S / (best * 1e-3);
    return rate;
}
