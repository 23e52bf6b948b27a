#include "gradcheck.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

gradcheck_result gradcheck(gradcheck_loss_fn loss, void *ctx, void *param, dtype tp, const void *analytic,
                           dtype ta, size_t n, size_t stride, double h, double atol, double rtol)
{
    gradcheck_result r;
    memset(&r, 0, sizeof r);
    size_t es = dtype_size(tp);
    unsigned char saved[8];
    for (size_t i = 0; i < n; i += stride ? stride : 1) {
        unsigned char *slot = (unsigned char *)param + i * es;
        memcpy(saved, slot, es);
        double p0 = dtype_load(param, tp, i);

        dtype_store(param, tp, i, p0 + h);
        double p_plus = dtype_load(param, tp, i);
        double l_plus = loss(ctx);
        dtype_store(param, tp, i, p0 - h);
        double p_minus = dtype_load(param, tp, i);
        double l_minus = loss(ctx);
        memcpy(slot, saved, es); /* restore exactly */

        double numeric = (l_plus - l_minus) / (p_plus - p_minus);
        double a = dtype_load(analytic, ta, i);
        double d = fabs(a - numeric);
        r.checked++;
        if (!(d <= atol + rtol * fabs(numeric)) && r.failed++ == 0) r.first_failed = i;
        if (r.checked == 1 || d > r.max_abs_err || isnan(d)) {
            r.max_abs_err = d;
            r.worst = i;
            r.worst_analytic = a;
            r.worst_numeric = numeric;
        }
    }
    return r;
}

const char *gradcheck_message(const gradcheck_result *r, const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s: %zu of %zu elements off (the first at index %zu); worst at index %zu: analytic (backward) "
             "%g, numeric (central difference) %g", name, r->failed, r->checked, r->failed ? r->first_failed : 0,
             r->worst, r->worst_analytic, r->worst_numeric);
    return buf;
}
