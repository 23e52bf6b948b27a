/* gemm_record.h - the GEMM shapes one implementation calls, and the provider's best time on each of them.
 *
 * While recording, gemm_cpu.c notes every product (float32 or bf16, transposes, M, N, K, the row strides,
 * beta = 0 or not) with a count. gemm_record_replay then runs each distinct shape alone through the same
 * provider, on operands of its own with the same strides (warm, as far as they fit the caches), takes the
 * best per-call time of a few samples and returns the sum over the recorded calls: how long the
 * implementation's GEMMs would take at the provider's peak on those very shapes. Its time divided by this is
 * the README's GEMM share. */
#ifndef KERNELS_GEMM_RECORD_H
#define KERNELS_GEMM_RECORD_H

#include <stddef.h>

/* begin empties the record and starts it for one run; again adds one more run of the same implementation to
 * it. Every figure below is per run: the sums over the recorded runs divided by their number. */
void gemm_record_begin(void);
void gemm_record_again(void);
void gemm_record_end(void);
/* Counts `calls` products of this shape when recording, and the seconds they took inside the layer (0 when
 * gemm_record_timing() said not to time them); nothing otherwise. */
void gemm_record_call(int is_bf16, int transA, int transB, size_t M, size_t N, size_t K, size_t lda,
                      size_t ldb, size_t ldc, float beta, size_t calls, double seconds);
/* 1 while recording with GEMM_CPU_PROFILE set: the layer then times each call (two clock reads). */
int gemm_record_timing(void);
double gemm_record_layer_seconds(void);
size_t gemm_record_calls(void);
int gemm_record_shapes(void);
void gemm_record_clear(void);
/* The i-th distinct shape recorded (0 <= i < gemm_record_shapes()). */
void gemm_record_shape(int i, int *is_bf16, int *transA, int *transB, size_t *M, size_t *N, size_t *K,
                       size_t *lda, size_t *ldb, size_t *ldc, float *beta);

/* How replay runs one product: the layer's own entry points (bf16 operands are bf16 arrays). */
typedef void gemm_replay_fn(int is_bf16, int transA, int transB, size_t M, size_t N, size_t K, float alpha,
                            const void *A, size_t lda, const void *B, size_t ldb, float beta, float *C,
                            size_t ldc);
/* Seconds per run: sum over the recorded calls of the best time of their shape; 0 when none was recorded. The
 * record stays (gemm_record_clear empties it), so a second provider can replay the same shapes. */
double gemm_record_replay(gemm_replay_fn *run);

#endif
