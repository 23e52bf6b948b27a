/* logchain_session.h - runs one lesson-2 implementation the way the lesson measures it.
 *
 * Like bmm_session: start a tracker scope, copy the inputs in (x, bulk, p0, as a user's tensors would be),
 * run forward, read live bytes (inputs included, dout not yet allocated), allocate dout, run backward, read
 * the peak, copy the results out to the caller's host buffers and free everything. The driver and the tests
 * both use it, so the numbers the tests assert are the numbers the table prints.
 */
#ifndef LESSONS_LOGCHAIN_SESSION_H
#define LESSONS_LOGCHAIN_SESSION_H

#include "../kernels/logchain_problem.h"
#include "report.h"

typedef enum { LC_NAIVE = 0, LC_CPU = 1, LC_CUDA = 2 } lc_impl;

typedef struct {
    const float *x;    /* (n,t,v,c) */
    const float *bulk; /* (1,t,v-1,c,c) */
    const float *p0;   /* (1,t,c) */
    const float *dout; /* (n,t) */
} lc_inputs;           /* host buffers */

typedef struct {
    float *out;   /* (n,t) */
    float *dx;    /* (n,t,v,c) */
    float *dbulk; /* (1,t,v-1,c,c) */
    float *dp0;   /* (1,t,c) */
} lc_outputs;     /* host buffers the caller allocated; every element is overwritten */

const char *lc_impl_name(lc_impl impl);
lc_memory lc_predict(lc_impl impl, const lc_dims *d);

/* Runs impl and fills the measured fields of row and its predictions. CUDA: the caller has checked that a
 * device exists. If print_labels, prints the per-tensor memory breakdown of the run to stdout. */
void lc_run(lc_impl impl, const lc_dims *d, const lc_inputs *in, lc_outputs *res, impl_row *row,
            int print_labels);

#endif
