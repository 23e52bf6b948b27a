/* linear_ce_rows.h - lesson 5's CPU row pass over a block's float32 logits: per row the logsumexp, the row's
 * loss and the gradient scale * (softmax - onehot) written over the row as bf16, vectorised for the
 * instruction set the CPU reports (AVX-512F, else AVX2 with FMA, else plain C; optimized/linear_ce_rows.c).
 * Every path gives the float64 reference's gradient within one bf16 rounding (u = 2^-8 relative) plus 1e-6,
 * and the loss within float32 sums (tests/test_lesson5.c checks each path this CPU can run).
 */
#ifndef OPTIMIZED_LINEAR_CE_ROWS_H
#define OPTIMIZED_LINEAR_CE_ROWS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LCE_ROWS_ENV "LCE_CPU_ROWS" /* avx512, avx2 or c: that path (tests/gemm_paths.sh forces each) */

/* The one pass over a block's f32 logits z (rows, V): returns the sum of the counted rows' losses (not yet
 * divided by n_valid) and leaves row r's gradient as bf16 at (bf16 *)(z + r * V), i.e. row stride 2V. A row
 * whose target is LCE_IGNORE gets a zero gradient and adds nothing. */
double cpu_lce_rows(float *z, const int32_t *target, size_t rows, size_t V, float scale);
/* "avx512 (the widest this CPU has: ...)" or "avx2 (forced: LCE_CPU_ROWS)": for lesson 5's header. */
const char *cpu_lce_rows_about(void);
/* 1 when this CPU runs the path "avx512", "avx2" or "c"; use: every later pass takes it (0), or -1. */
int cpu_lce_rows_can(const char *name);
int cpu_lce_rows_use(const char *name);

#ifdef __cplusplus
}
#endif

#endif
