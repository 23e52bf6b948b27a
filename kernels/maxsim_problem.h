/* maxsim_problem.h - lesson 3's problem: ColBERT's late-interaction score (MaxSim), the forum's 4-D einsum.
 *
 *   a     [I, J, K]   I queries of J token embeddings each (the forum's first tensor)
 *   b     [M, N, K]   M documents of N token embeddings each (the second tensor)
 *   out   [I, M]      out[i, m] = sum_j max_n <a[i, j, :], b[m, n, :]>
 *   dout  [I, M]      upstream gradient; the loss is sum(out * dout), so dL/dout = dout
 *   da    [I, J, K]   da[i, j, :] = sum_m dout[i, m] * b[m, arg[i, j, m], :]        (a gather)
 *   db    [M, N, K]   db[m, n, :] = sum over (i, j) with arg[i, j, m] == n of dout[i, m] * a[i, j, :]  (a
 *         scatter)
 *   arg   [I, J, M]   the argmax over n; among equal maxima the LOWEST n wins (ms_better in maxsim_math.h)
 *
 * torch.einsum('ijk,mnk->ijmn', a, b).max(-1).values.sum(1) first builds scores [I, J, M, N]. The forum's
 * sizes, I=300, J=2000, M=315, N=1990, K=256, make that 3.76e11 floats: 1.37 TiB before autograd keeps
 * anything.
 *
 * Rows: a viewed as [I*J, K] (row r = i*J + j) and b as [M*N, K] (row c = m*N + n) make the einsum one GEMM,
 * scores[I*J, M*N] = a . b^T, whose row-major layout IS [I, J, M, N]. Every implementation indexes this way.
 */
#ifndef KERNELS_MAXSIM_PROBLEM_H
#define KERNELS_MAXSIM_PROBLEM_H

#include <stddef.h>
#include "runtime/size_math.h"

typedef struct {
    size_t I, J, M, N, K;
} ms_dims;

/* Tracker labels of the output and the gradients, the same in naive and cpu (the tables compare them by
 * label). */
#define MS_LABEL_OUT "out [I,M] f32"
#define MS_LABEL_DA "da [I,J,K] f32"
#define MS_LABEL_DB "db [M,N,K] f32"

static inline size_t ms_max_size(size_t x, size_t y) { return x > y ? x : y; } /* peaks: the larger phase */

/* Element counts; saturate at SIZE_MAX on overflow (size_math.h). */
static inline size_t ms_rows(const ms_dims *d) { return size_mul(d->I, d->J); }      /* rows of a: (i, j) */
static inline size_t ms_cols(const ms_dims *d) { return size_mul(d->M, d->N); }      /* rows of b: (m, n) */
static inline size_t ms_a_count(const ms_dims *d) { return size_mul(ms_rows(d), d->K); }
static inline size_t ms_b_count(const ms_dims *d) { return size_mul(ms_cols(d), d->K); }
static inline size_t ms_out_count(const ms_dims *d) { return size_mul(d->I, d->M); }
static inline size_t ms_arg_count(const ms_dims *d) { return size_mul(ms_rows(d), d->M); } /* [I, J, M] */
static inline size_t ms_scores_count(const ms_dims *d) { return size_mul(ms_rows(d), ms_cols(d)); }
/* Multiply-adds of the score GEMM (every implementation computes every score once per pass). */
static inline double ms_gemm_fmas(const ms_dims *d)
{
    return (double)d->I * (double)d->J * (double)d->M * (double)d->N * (double)d->K;
}

#endif
