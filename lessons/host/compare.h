/* compare.h - how this project decides two buffers agree.
 *
 * One rule everywhere: element i passes when |x_i - ref_i| <= atol + rtol * |ref_i|. A NaN in either buffer
 * fails (poisoned outputs are NaN, so an unwritten element can never pass). Each caller states its atol and
 * rtol and writes down why.
 *
 * The lesson tables print one summary number, "max rel err": max_i |x_i - ref_i| / max_i |ref_i|, the largest
 * error relative to the reference's largest magnitude. Unlike a per-element ratio it does not explode where
 * the reference crosses zero, and for sums of products it is the scale at which rounding errors live.
 */
#ifndef KERNELS_COMPARE_H
#define KERNELS_COMPARE_H

#include <stddef.h>
#include "../../kernels/runtime/dtype.h"

typedef struct {
    size_t n;          /* elements compared */
    size_t failures;   /* elements outside atol + rtol*|ref| (NaNs included) */
    size_t worst;      /* index of the largest |x - ref| (first NaN if any) */
    double max_abs;    /* max |x - ref|; NAN if any NaN was seen */
    double max_ref;    /* max |ref| */
    double max_rel;    /* max_abs / max_ref (max_abs if max_ref == 0) */
} compare_result;

compare_result compare_buffers(const void *x, dtype tx, const void *ref, dtype tref, size_t n, double atol,
                               double rtol);
/* Just the summary number, for tables. */
double max_rel_err(const void *x, dtype tx, const void *ref, dtype tref, size_t n);

#endif
