/* logchain_reference.c - forward-backward in double, one chain (row) at a time. */
#include "logchain_reference.h"

#include "../kernels/runtime/track.h"

#include <math.h>

void lc_reference(const lc_dims *d, const float *x, const float *bulk, const float *p0, const float *dout,
                  lc_ref_result *res)
{
    size_t t = d->t, v = d->v, c = d->c, C2 = c * c, V1 = v - 1, R = lc_rows(d);
    res->out = host_alloc_array(lc_out_count(d), DT_F64, "reference: out (n,t) f64");
    res->dx = host_alloc_array(lc_x_count(d), DT_F64, "reference: dx (n,t,v,c) f64");
    res->dbulk = host_alloc_array(lc_bulk_count(d), DT_F64, "reference: dbulk (1,t,v-1,c,c) f64");
    res->dp0 = host_alloc_array(lc_p0_count(d), DT_F64, "reference: dp0 (1,t,c) f64");
    double *alpha = host_alloc_array(v * c, DT_F64, "reference: alpha of one row (v,c) f64");
    double *beta = host_alloc_array(c, DT_F64, "reference: beta (c) f64");
    double *w = host_alloc_array(c, DT_F64, "reference: weights (c) f64");
    double *acc = host_alloc_array(c, DT_F64, "reference: sums (c) f64");
    for (size_t e = 0; e < lc_bulk_count(d); e++) res->dbulk[e] = 0.0;
    for (size_t e = 0; e < lc_p0_count(d); e++) res->dp0[e] = 0.0;

    for (size_t r = 0; r < R; r++) {
        size_t s = r % t;
        const float *xr = x + r * v * c;
        const float *Ps = bulk + s * V1 * C2;
        /* alpha recursion, shifted by each step's maximum */
        for (size_t j = 0; j < c; j++) alpha[j] = log((double)p0[s * c + j]) + xr[j];
        for (size_t i = 0; i < V1; i++) {
            double m = -INFINITY;
            for (size_t j = 0; j < c; j++) m = fmax(m, alpha[i * c + j]);
            for (size_t k = 0; k < c; k++) acc[k] = 0.0;
            for (size_t j = 0; j < c; j++) {
                double wj = exp(alpha[i * c + j] - m);
                for (size_t k = 0; k < c; k++) acc[k] += wj * Ps[i * C2 + j * c + k];
            }
            for (size_t k = 0; k < c; k++) alpha[(i + 1) * c + k] = xr[(i + 1) * c + k] + m + log(acc[k]);
        }
        double m = -INFINITY, z = 0.0;
        for (size_t k = 0; k < c; k++) m = fmax(m, alpha[V1 * c + k]);
        for (size_t k = 0; k < c; k++) z += exp(alpha[V1 * c + k] - m);
        double lz = m + log(z), g = dout[r];
        res->out[r] = lz;

        /* beta recursion; dx, dbulk, dp0 on the way */
        double *dxr = res->dx + r * v * c;
        for (size_t k = 0; k < c; k++) {
            beta[k] = 0.0;
            dxr[V1 * c + k] = g * exp(alpha[V1 * c + k] - lz);
        }
        for (size_t i = V1; i-- > 0;) {
            double mb = -INFINITY;
            for (size_t k = 0; k < c; k++) {
                w[k] = xr[(i + 1) * c + k] + beta[k];
                mb = fmax(mb, w[k]);
            }
            for (size_t k = 0; k < c; k++) w[k] = exp(w[k] - mb);
            double *db = res->dbulk + (s * V1 + i) * C2;
            for (size_t j = 0; j < c; j++) {
                double u = g * exp(alpha[i * c + j] + mb - lz), sum = 0.0;
                for (size_t k = 0; k < c; k++) {
                    db[j * c + k] += u * w[k];
                    sum += Ps[i * C2 + j * c + k] * w[k];
                }
                acc[j] = mb + log(sum);
            }
            for (size_t j = 0; j < c; j++) {
                beta[j] = acc[j];
                dxr[i * c + j] = g * exp(alpha[i * c + j] + beta[j] - lz);
            }
        }
        for (size_t j = 0; j < c; j++) res->dp0[s * c + j] += dxr[j];
    }
    for (size_t e = 0; e < lc_p0_count(d); e++) res->dp0[e] /= p0[e];
    host_free(alpha);
    host_free(beta);
    host_free(w);
    host_free(acc);
}

void lc_reference_free(lc_ref_result *res)
{
    host_free(res->out);
    host_free(res->dx);
    host_free(res->dbulk);
    host_free(res->dp0);
    res->out = res->dx = res->dbulk = res->dp0 = NULL;
}
