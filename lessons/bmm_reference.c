#include "bmm_reference.h"

#include "track.h"
#include "blas_reference.h"

#include <math.h>

double gamma_f32(size_t L)
{
    double u = ldexp(1.0, -24), Lu = (double)L * u;
    return Lu / (1.0 - Lu);
}

/* The three products of one pass, group by group, on strided views (no copy per group):
 *   out[:, g] (B, N) = x[:, g] (B, K) . W_g (K, N)      x row stride G*K, out row stride G*N
 *   dx[:, g]  (B, K) = dout[:, g] (B, N) . W_g^T        W_g stored (K, N): transB
 *   dW_g      (K, N) = x[:, g]^T (K, B) . dout[:, g]    x[:, g] stored (B, K): transA; the sum over B is the
 *             GEMM's
 * Called once on the values and once on their magnitudes (|x|, |W|, |dout|), which gives sum |terms|. */
static void bmm_products(const bmm_dims *d, const double *x, const double *W, const double *dout, double *out,
                         double *dx, double *dW)
{
    size_t B = d->B, G = d->G, K = d->K, N = d->N;
    for (size_t g = 0; g < G; g++) {
        const double *xg = x + g * K, *Wg = W + g * K * N, *dg = dout + g * N;
        ref_dgemm(REF_N, REF_N, B, N, K, xg, G * K, Wg, N, 0.0, out + g * N, G * N);
        ref_dgemm(REF_N, REF_T, B, K, N, dg, G * N, Wg, N, 0.0, dx + g * K, G * K);
        ref_dgemm(REF_T, REF_N, K, N, B, xg, G * K, dg, G * N, 0.0, dW + g * K * N, N);
    }
}

/* The inputs in double (each float is exact in double), as values (absolute = 0) or magnitudes (1). */
static void bmm_products_of(const bmm_dims *d, const float *x, const float *W, const float *dout,
                            int absolute, double *out, double *dx, double *dW)
{
    double *xd = ref_f64_copy(x, bmm_x_count(d), absolute, "reference: x (B,G*K) f64");
    double *Wd = ref_f64_copy(W, bmm_w_count(d), absolute, "reference: W (G,K,N) f64");
    double *dd = ref_f64_copy(dout, bmm_out_count(d), absolute, "reference: dout (B,G*N) f64");
    bmm_products(d, xd, Wd, dd, out, dx, dW);
    host_free(xd);
    host_free(Wd);
    host_free(dd);
}

void bmm_reference(const bmm_dims *d, const float *x, const float *W, const float *dout,
                   bmm_reference_result *r)
{
    r->out = host_alloc_array(bmm_out_count(d), DT_F64, "reference out");
    r->out_abs = host_alloc_array(bmm_out_count(d), DT_F64, "reference out_abs");
    r->dx = host_alloc_array(bmm_x_count(d), DT_F64, "reference dx");
    r->dx_abs = host_alloc_array(bmm_x_count(d), DT_F64, "reference dx_abs");
    r->dW = host_alloc_array(bmm_w_count(d), DT_F64, "reference dW");
    r->dW_abs = host_alloc_array(bmm_w_count(d), DT_F64, "reference dW_abs");
    bmm_products_of(d, x, W, dout, 0, r->out, r->dx, r->dW);
    bmm_products_of(d, x, W, dout, 1, r->out_abs, r->dx_abs, r->dW_abs);
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
