/* logchain_problem.h - lesson 2's problem: the log-likelihood of a chain of matrices (an HMM forward pass).
 *
 *   x     (n, t, v, c)        log-scale diagonal values: D_i = diag(exp(x[b, s, i, :]))
 *   bulk  (1, t, v-1, c, c)   transition matrices P_i, entries in (0, 1)
 *   p0    (1, t, c)           initial weights, entries in (0, 1)
 *   out   (n, t)              out[b, s] = log( p0[s]^T D_0 P_0 D_1 P_1 ... P_{v-2} D_{v-1} 1 )
 *   dout  (n, t)              upstream gradient; the loss is sum(out * dout), so dL/dout = dout
 *   dx    (n, t, v, c)        dout * posterior marginals
 *   dbulk (1, t, v-1, c, c)   expected transition counts (weighted by dout, summed over n) divided by P
 *   dp0   (1, t, c)           dout-weighted posterior of the first variable, summed over n, divided by p0
 *
 * The forum's first example is n=10, t=1, v=6, c=40; it ran out of memory at n=500, t=1, v=40, c=200.
 * v >= 2: with v = 1 there is no matrix in the chain and the forum's code fails (the drivers refuse it).
 */
#ifndef KERNELS_LOGCHAIN_PROBLEM_H
#define KERNELS_LOGCHAIN_PROBLEM_H

#include <stddef.h>
#include "runtime/mem_formula.h"

typedef struct {
    size_t n, t, v, c;
} lc_dims;

/* Element counts; saturate at SIZE_MAX on overflow (see size_math.h). v >= 1 is assumed (v-1 matrices). */
static inline size_t lc_rows(const lc_dims *d) { return size_mul(d->n, d->t); } /* independent chains */
static inline size_t lc_x_count(const lc_dims *d) { return size_mul(size_mul(lc_rows(d), d->v), d->c); }
static inline size_t lc_bulk_count(const lc_dims *d)
{
    return size_mul(size_mul(d->t, d->v - 1), size_mul(d->c, d->c));
}
static inline size_t lc_p0_count(const lc_dims *d) { return size_mul(d->t, d->c); }
static inline size_t lc_out_count(const lc_dims *d) { return lc_rows(d); }

typedef mem_formula lc_memory;

#endif
