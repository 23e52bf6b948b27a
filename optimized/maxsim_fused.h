/* maxsim_fused.h - lesson 3, optimized: MaxSim with the max over n fused into the GEMM, so the 4-D scores
 * tensor [I, J, M, N] never exists.
 *
 * CPU (maxsim_fused.c): tiles of rows of a (pairs (i, j)) against blocks of rows of b (pairs (m, n)). Each
 * tile's scores [rows, cols] are computed by a small GEMM into one reused scratch buffer and reduced at once
 * to a running max and argmax per (i, j, m); out[i, m] accumulates the maxima over j. What is kept for
 * backward:
 *   saved mode      arg [I, J, M] int32 (4 bytes per (i, j, m), half of torch's int64 indices)
 *   --recompute     nothing: backward runs the same tiles again to find the argmax (the checkpointing
 *                   answer to the forum's question, without ever holding a chunk's 4-D slab either)
 * Backward needs only the argmax:
 *   da[i, j, :] = sum_m dout[i, m] * b[m, arg[i, j, m], :]                              (gather)
 *   db[m, n, :] = sum over (i, j) with arg[i, j, m] == n of dout[i, m] * a[i, j, :]     (scatter-add)
 * Both modes walk the tiles in the same order and add the same terms in the same order, so recompute and
 * saved give bitwise-equal gradients (a test asserts it).
 * The CUDA versions: optimized/maxsim_cuda.h. */
#ifndef OPTIMIZED_MAXSIM_FUSED_H
#define OPTIMIZED_MAXSIM_FUSED_H

#include <stdint.h>
#include "../kernels/maxsim_problem.h"
#include "../kernels/runtime/mem_formula.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int32_t *arg;  /* [I, J, M] argmax over n, or NULL when recompute */
    int recompute;
} cpu_ms_saved;

/* Allocates and returns out [I, M]; a [I, J, K], b [M, N, K]. recompute: keep nothing for backward. */
float *cpu_ms_forward(const ms_dims *d, const float *a, const float *b, int recompute, cpu_ms_saved *saved);
/* Allocates *da [I, J, K], *db [M, N, K] from dout [I, M]; frees what forward saved. */
void cpu_ms_backward(const ms_dims *d, const float *a, const float *b, cpu_ms_saved *saved, const float *dout,
                     float **da, float **db);
mem_formula cpu_ms_memory(const ms_dims *d, int recompute);
/* Bytes of the one scratch block (scores tile, running max and argmax). */
size_t cpu_ms_scratch_bytes(const ms_dims *d);
/* Multiply-adds of forward + backward (the session's time estimate divides it by the measured GEMM rate). */
double cpu_ms_work(const ms_dims *d, int recompute);

#ifdef __cplusplus
}
#endif

#endif
