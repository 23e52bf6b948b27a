#include "compare.h"
#include <math.h>

compare_result compare_buffers(const void *x, dtype tx, const void *ref, dtype tref, size_t n, double atol,
                               double rtol)
{
    compare_result r = {n, 0, 0, 0.0, 0.0, 0.0};
    int saw_nan = 0;
    for (size_t i = 0; i < n; i++) {
        double a = dtype_load(x, tx, i), b = dtype_load(ref, tref, i);
        double d = fabs(a - b);
        if (!(d <= atol + rtol * fabs(b))) r.failures++; /* written so that NaN fails */
        if (isnan(d)) {
            if (!saw_nan) r.worst = i;
            saw_nan = 1;
        } else if (!saw_nan && d > r.max_abs) {
            r.max_abs = d;
            r.worst = i;
        }
        if (fabs(b) > r.max_ref) r.max_ref = fabs(b);
    }
    if (saw_nan) r.max_abs = NAN;
    r.max_rel = r.max_ref > 0 ? r.max_abs / r.max_ref : r.max_abs;
    return r;
}

double max_rel_err(const void *x, dtype tx, const void *ref, dtype tref, size_t n)
{
    return compare_buffers(x, tx, ref, tref, n, 0.0, 0.0).max_rel;
}
