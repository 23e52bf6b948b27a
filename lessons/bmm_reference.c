#include "bmm_reference.h"

#include "../kernels/runtime/track.h"

#include <math.h>

double gamma_f32(size_t L)
{
    double u = ldexp(1.0, -24), Lu = (double)L * u;
    return Lu / (1.0 - Lu);
}

void bmm_reference(const bmm_dims *d, const float *x, const float *W, const float *dout, bmm_reference_result *r)
{
    size_t B = d->B, G = d->G, K = d->K, N = d->N;
    r->out = host_alloc_array(bmm_out_count(d), DT_F64, "reference out");
    r->out_abs = host_alloc_array(bmm_out_count(d), DT_F64, "reference out_abs");
    r->dx = host_alloc_array(bmm_x_count(d), DT_F64, "reference dx");
    r->dx_abs = host_alloc_array(bmm_x_count(d), DT_F64, "reference dx_abs");
    r->dW = host_alloc_array(bmm_w_count(d), DT_F64, "reference dW");
    r->dW_abs = host_alloc_array(bmm_w_count(d), DT_F64, "reference dW_abs");

    for (size_t b = 0; b < B; b++)
        for (size_t g = 0; g < G; g++) {
            const float *xr = x + (b * G + g) * K, *Wg = W + g * K * N, *dr = dout + (b * G + g) * N;
            for (size_t n = 0; n < N; n++) { /* out[b,g,n] = sum_k x[b,g,k] W[g,k,n] */
                double s = 0, a = 0;
                for (size_t k = 0; k < K; k++) {
                    double t = (double)xr[k] * Wg[k * N + n];
                    s += t;
                    a += fabs(t);
                }
                r->out[(b * G + g) * N + n] = s;
                r->out_abs[(b * G + g) * N + n] = a;
            }
            for (size_t k = 0; k < K; k++) { /* dx[b,g,k] = sum_n dout[b,g,n] W[g,k,n] */
                double s = 0, a = 0;
                for (size_t n = 0; n < N; n++) {
                    double t = (double)dr[n] * Wg[k * N + n];
                    s += t;
                    a += fabs(t);
                }
                r->dx[(b * G + g) * K + k] = s;
                r->dx_abs[(b * G + g) * K + k] = a;
            }
        }
    for (size_t g = 0; g < G; g++) /* dW[g,k,n] = sum_b x[b,g,k] dout[b,g,n] */
        for (size_t k = 0; k < K; k++)
            for (size_t n = 0; n < N; n++) {
                double s = 0, a = 0;
                for (size_t b = 0; b < B; b++) {
                    double t = (double)x[(b * G + g) * K + k] * dout[(b * G + g) * N + n];
                    s += t;
                    a += fabs(t);
                }
                r->dW[(g * K + k) * N + n] = s;
                r->dW_abs[(g * K + k) * N + n] = a;
            }
}

void bmm_reference_free(bmm_reference_result *r)
{
    host_free(r->out);
    host_free(r->out_abs);
    host_free(r->dx);
    host_free(r->dx_abs);
    host_free(r->dW);
    host_free(r->dW_abs);
}

size_t bmm_count_outside_bound(const float *a, const double *ref, const double *abs, size_t n, size_t L)
{
    /* L + 1: each term is a rounded product (one more u) before the L-term sum. The floor covers sums whose
     * terms are all denormal-small, where the relative bound does not hold. */
    double g = gamma_f32(L + 1);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        double err = fabs((double)a[i] - ref[i]);
        if (!(err <= g * abs[i] + 1e-30)) bad++;
    }
    return bad;
}
