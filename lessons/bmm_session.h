/* bmm_session.h - runs one lesson-1 implementation the way the lesson measures it.
 *
 * A session starts a tracker scope, allocates the implementation's own copy of the inputs (as a user's
 * x and W would be), runs forward, reads live bytes, allocates dout, runs backward, reads the peak, copies the
 * results out to the caller's host buffers and frees everything. The lesson driver and the tests both use it,
 * so the numbers the tests assert are the numbers the table prints.
 */
#ifndef LESSONS_BMM_SESSION_H
#define LESSONS_BMM_SESSION_H

#include "../kernels/bmm_problem.h"
#include "report.h"

typedef enum { BMM_NAIVE = 0, BMM_CPU = 1, BMM_CUDA = 2 } bmm_impl;

typedef struct {
    const float *x;    /* (B, G*K) */
    const float *W;    /* (G, K, N) */
    const float *dout; /* (B, G, N) */
} bmm_inputs;          /* host buffers */

typedef struct {
    float *out; /* (B, G, N) */
    float *dx;  /* (B, G*K) */
    float *dW;  /* (G, K, N) */
} bmm_outputs;  /* host buffers the caller allocated; every element is overwritten */

const char *bmm_impl_name(bmm_impl impl);
bmm_memory bmm_predict(bmm_impl impl, const bmm_dims *d);

/* Runs impl and fills the measured fields of row (peak, forward_live, allocs, times, device) and its
 * predictions. CUDA: the caller has checked that a device exists. If print_labels, prints the per-tensor
 * memory breakdown of the run to stdout. */
void bmm_run(bmm_impl impl, const bmm_dims *d, const bmm_inputs *in, bmm_outputs *res, impl_row *row,
             int print_labels);

#endif
