/* logchain_reference.h - lesson 2's reference: the forward-backward recursions in double precision.
 *
 * The same alpha/beta algebra as optimized/logchain_forward.c, written in double: each step's products of the
 * chains of one position with P go through cblas_dgemm (blas_reference.h), the shifts, logs and exps are
 * plain double loops (no float32 GEMM, no shared math helpers), so it is an independent check at every size.
 * At tiny sizes the tests also check it against the brute-force sum over all c^v paths
 * (tests/logchain_bruteforce.c). The driver's "max rel err" column and its log Z error lines are measured
 * against it.
 */
#ifndef LESSONS_LOGCHAIN_REFERENCE_H
#define LESSONS_LOGCHAIN_REFERENCE_H

#include "../kernels/logchain_problem.h"

typedef struct {
    double *out;   /* (n,t) */
    double *dx;    /* (n,t,v,c) */
    double *dbulk; /* (1,t,v-1,c,c) */
    double *dp0;   /* (1,t,c) */
} lc_ref_result;

/* Allocates the four result buffers (tracked, labelled "reference: ...") and fills them. dout (n,t). */
void lc_reference(const lc_dims *d, const float *x, const float *bulk, const float *p0, const float *dout,
                  lc_ref_result *res);
void lc_reference_free(lc_ref_result *res);

#endif
