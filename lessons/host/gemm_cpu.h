/* gemm_cpu.h - the project's CPU GEMMs, row-major, with the same arguments as the GPU wrapper
 * (cublas_rowmajor.h), so a lesson's CPU and CUDA code read line for line alike.
 *
 *   C = alpha * op(A) * op(B) + beta * C      op(X) = X or X^T
 *   op(A) is (M, K), op(B) is (K, N), C is (M, N); lda/ldb/ldc are row strides in elements.
 *   A stored (M, K) if !transA else (K, M); B stored (K, N) if !transB else (N, K).
 *
 * beta == 0 means C is written, never read: a poisoned (NaN) C does not leak into the result, exactly the
 * BLAS convention. Accumulation is in float, as cuBLAS's SGEMM does (the summation order is the provider's).
 *
 * The provider follows a fixed rule from what oneDNN reports of the CPU and from the product's shape
 * (gemm_cpu.c writes it down with the measurements behind it): oneDNN's sgemm for every float32 product, and
 * where oneDNN runs below AVX-512, OpenBLAS for a product with a dimension <= 32. Each provider the rule
 * names is checked on an exactly representable product first; its rate is measured for the time estimates and
 * decides nothing, so the same binary on the same CPU takes the same provider in every run.
 * GEMM_CPU_PROVIDER=openblas|onednn|onednn-matmul forces one. Threads: gemm_cpu_set_threads (--threads), else
 * OPENBLAS_NUM_THREADS, else OMP_NUM_THREADS, else the cores available, for both libraries.
 *
 * The strided-batched form runs `batch` independent products, matrix b at A + b*strideA, B + b*strideB,
 * C + b*strideC: the view trick lesson 1 uses to multiply G groups without copying anything.
 */
#ifndef KERNELS_GEMM_CPU_H
#define KERNELS_GEMM_CPU_H

#include <stddef.h>

#include "../../kernels/runtime/bf16.h"

#ifdef __cplusplus
extern "C" {
#endif

void sgemm_cpu(int transA, int transB, size_t M, size_t N, size_t K, float alpha, const float *A, size_t lda,
               const float *B, size_t ldb, float beta, float *C, size_t ldc);

void sgemm_cpu_strided_batched(int transA, int transB, size_t M, size_t N, size_t K, float alpha,
                               const float *A, size_t lda, size_t strideA, const float *B, size_t ldb,
                               size_t strideB, float beta, float *C, size_t ldc, size_t strideC,
                               size_t batch);

/* bf16 A and B, float32 accumulation and C (alpha = 1), on the CPU's bf16 dot-product instructions through
 * oneDNN's matmul: only where gemm_cpu_bf16_native() says so (a caller converts to float32 and calls
 * sgemm_cpu elsewhere). The products of two bf16 values are exact in float32, so this is sgemm_cpu's
 * arithmetic on the same values, in another summation order. */
int gemm_cpu_bf16_native(void);
void gemm_cpu_bf16(int transA, int transB, size_t M, size_t N, size_t K, const bf16 *A, size_t lda,
                   const bf16 *B, size_t ldb, float beta, float *C, size_t ldc);
/* One line for a lesson's header: which path bf16 products take here and why. */
const char *gemm_cpu_bf16_about(void);

/* Double precision, for the float64 references: always OpenBLAS's cblas_dgemm (no other provider has one). */
void dgemm_cpu(int transA, int transB, size_t M, size_t N, size_t K, double alpha, const double *A,
               size_t lda, const double *B, size_t ldb, double beta, double *C, size_t ldc);

/* Both libraries' thread count (n > 0), before or after the first product. */
void gemm_cpu_set_threads(int n);
int gemm_cpu_cores_available(void); /* the CPUs this process may run on */
/* OpenMP's and OpenBLAS's workers busy-wait after each call unless told otherwise when the libraries load,
 * before main: main calls this first. Where OMP_WAIT_POLICY or OPENBLAS_THREAD_TIMEOUT is unset it sets
 * PASSIVE and 4 (sleep at once) and executes the program again, once (not under a debugger, nor a tool that
 * injects itself through LD_PRELOAD or CUDA_INJECTION64_PATH: one program image there). It returns only where
 * it did not re-execute. */
void gemm_cpu_exec_with_sleeping_workers(char **argv);

/* For the lesson header: the provider, the rule's reason, the thread count and its source, and what idle
 * workers do - the same text in every run on one machine. gemm_cpu_rates: the measured rates (the time
 * estimates' divisor, nothing chosen by them) and the CPU time idle workers used in a short pause after the
 * warm-up calls. */
int gemm_cpu_threads(void);
const char *gemm_cpu_library(void);
const char *gemm_cpu_rates(void);
/* Forces a provider by its GEMM_CPU_PROVIDER name (the tests run every one): 0, or -1 for an unknown name or
 * one that cannot run here. */
int gemm_cpu_use(const char *provider);
/* The choice, one small GEMM per provider in use (the libraries' thread start-up and buffer mapping happen
 * before anything is timed), the bf16 decision and the rates line. */
void gemm_cpu_warm_up(void);
/* The provider a float32 product of this shape runs on ("onednn", "onednn-matmul" or "openblas"). */
const char *gemm_cpu_provider_name(size_t M, size_t N, size_t K);
/* Multiply-adds per second of the chosen provider on the timing GEMM (256^3, 512^3 above four threads),
 * measured once: what the lessons' time estimates divide by. */
double gemm_cpu_fmas_per_second(void);

/* The share of the provider's peak an implementation reaches on its own GEMM shapes: record_begin, run it
 * once, record_end (record_again and record_end around each further run: the figures become the mean per
 * run); then gemm_cpu_peak_seconds() replays each distinct shape it called alone, with warm operands, and
 * returns the sum over its calls of the best time per shape (0 when it made none), emptying the record. With
 * GEMM_CPU_PROFILE set, the recorded calls are timed too and one line on stderr, labelled, compares their
 * time inside the layer with the replay on this provider and on oneDNN's float32 sgemm. */
void gemm_cpu_record_begin(void);
void gemm_cpu_record_again(void);
void gemm_cpu_record_end(void);
double gemm_cpu_peak_seconds(const char *label);

#ifdef __cplusplus
}
#endif

#endif
