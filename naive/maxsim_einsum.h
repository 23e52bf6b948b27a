/* maxsim_einsum.h - lesson 3, naive: the forum's einsum('ijk,mnk->ijmn', a, b).max(-1).values.sum(1), in C,
 * with the backward autograd runs for it.
 *
 * Forward, op by op, and what each op leaves alive:
 *   scores = einsum(...)        [I, J, M, N] f32   one GEMM, a [I*J, K] . b[M*N, K]^T; a temporary
 *   values, indices = max(-1)   [I, J, M] f32, [I, J, M] int64; MaxBackward saves the int64 indices
 *   out = values.sum(1)         [I, M] f32; SumBackward saves only a shape
 * scores dies when max returns (no backward needs it: einsum's saves a and b, which the caller holds anyway),
 * values when sum returns. What stays until backward: the int64 indices (8 bytes per (i, j, m)).
 *
 * Backward, node by node:
 *   SumBackward  dout [I, M] expanded over J: a view, no memory
 *   MaxBackward  dscores = zeros [I, J, M, N] f32, dout scattered at the indices; then the indices are freed
 *   BmmBackward  da = dscores . b (GEMM over M*N), db = dscores^T . a (GEMM over I*J); then dscores is freed
 * so the backward re-creates a full-size 4-D tensor even though only one element in N is non-zero.
 */
#ifndef NAIVE_MAXSIM_EINSUM_H
#define NAIVE_MAXSIM_EINSUM_H

#include <stdint.h>
#include "../kernels/maxsim_problem.h"
#include "../kernels/runtime/mem_formula.h"

typedef struct {
    int64_t *idx; /* [I, J, M] max(-1).indices, int64 as torch returns them */
} naive_ms_saved;

/* Allocates and returns out [I, M]; fills saved. a [I, J, K], b [M, N, K]. */
float *naive_ms_forward(const ms_dims *d, const float *a, const float *b, naive_ms_saved *saved);

/* Allocates *da [I, J, K] and *db [M, N, K] from dout [I, M]; frees what forward saved. */
void naive_ms_backward(const ms_dims *d, const float *a, const float *b, naive_ms_saved *saved,
                       const float *dout, float **da, float **db);

/* Exact bytes, inputs a, b and the upstream dout included (derivation in docs/lesson-3.md). */
mem_formula naive_ms_memory(const ms_dims *d);

#endif
