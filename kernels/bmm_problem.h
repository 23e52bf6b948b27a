/* bmm_problem.h - lesson 1's problem: a grouped (block-diagonal) linear layer.
 *
 *   x    (B, G*K)   input, viewed (B, G, 1, K) by the forum's code
 *   W    (G, K, N)  one K x N weight per group
 *   out  (B, G, N)  out[b, g, :] = x[b, g, :] . W[g]
 *   dout (B, G, N)  upstream gradient; the loss is sum(out * dout), so dL/dout = dout
 *   dx   (B, G*K)   dx[b, g, :] = dout[b, g, :] . W[g]^T
 *   dW   (G, K, N)  dW[g] = sum_b x[b, g, :]^T dout[b, g, :]
 *
 * Forum size: B=8192, G=8, K=N=64.
 */
#ifndef KERNELS_BMM_PROBLEM_H
#define KERNELS_BMM_PROBLEM_H

#include <stddef.h>
#include "runtime/mem_formula.h"

typedef struct {
    size_t B, G, K, N;
} bmm_dims;

/* Element counts; saturate at SIZE_MAX on overflow (see size_math.h). */
static inline size_t bmm_x_count(const bmm_dims *d) { return size_mul(size_mul(d->B, d->G), d->K); }
static inline size_t bmm_w_count(const bmm_dims *d) { return size_mul(size_mul(d->G, d->K), d->N); }
static inline size_t bmm_out_count(const bmm_dims *d) { return size_mul(size_mul(d->B, d->G), d->N); }
static inline size_t bmm_w_expanded_count(const bmm_dims *d) { return size_mul(d->B, bmm_w_count(d)); }

typedef mem_formula bmm_memory;

#endif
