/* bmm_reference.h - lesson 1 in double precision, the yardstick for the float32 implementations.
 *
 * Besides each value it returns the sum of the absolute values of the terms that make it up
 * (e.g. out_abs[b,g,n] = sum_k |x[b,g,k] W[g,k,n]|). The classic bound for a float32 dot product of length L
 * computed by recursive summation is |fl(s) - s| <= gamma_L * sum |terms|, gamma_L = L*u/(1 - L*u),
 * u = 2^-24 (Higham, Accuracy and Stability of Numerical Algorithms, 3.1). The tests use that bound per
 * element as the tolerance: proven, not tuned, and still a million times smaller than any indexing bug.
 *
 * The products run through cblas_dgemm (blas_reference.h), on the values and on their magnitudes: double
 * accumulation in the library's order, whose own error (about L * 2^-53 relative) is 2^29 times below the
 * bound.
 */
#ifndef LESSONS_BMM_REFERENCE_H
#define LESSONS_BMM_REFERENCE_H

#include "../kernels/bmm_problem.h"

typedef struct {
    double *out, *out_abs; /* (B, G, N) */
    double *dx, *dx_abs;   /* (B, G*K) */
    double *dW, *dW_abs;   /* (G, K, N) */
} bmm_reference_result;

/* Allocates the result buffers (tracked, label "reference ...") and fills them. */
void bmm_reference(const bmm_dims *d, const float *x, const float *W, const float *dout,
                   bmm_reference_result *r);
void bmm_reference_free(bmm_reference_result *r);

/* gamma_L for float32 */
double gamma_f32(size_t L);

/* Number of elements of a (float) that violate |a - ref| <= gamma_L * abs (+ a denormal-sized floor). */
size_t bmm_count_outside_bound(const float *a, const double *ref, const double *abs, size_t n, size_t L);

#endif
