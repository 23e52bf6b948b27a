/* linear_ce_reference.c - lesson 5's float64 reference (see linear_ce_reference.h). */
#include "linear_ce_reference.h"

#include <math.h>
#include <string.h>

#include "../kernels/runtime/rng.h"
#include "../kernels/runtime/track.h"

static size_t count_valid(const int32_t *target, size_t N)
{
    size_t n = 0;
    for (size_t i = 0; i < N; i++) n += target[i] != LCE_IGNORE;
    return n;
}

/* log sum exp of z (V,), max-shifted */
static double lse_f64(const double *z, size_t V)
{
    double m = -INFINITY, s = 0.0;
    for (size_t v = 0; v < V; v++) m = fmax(m, z[v]);
    for (size_t v = 0; v < V; v++) s += exp(z[v] - m);
    return m + log(s);
}

/* z (rb, V) = xd (rb, H) . Wd^T, then g (in place) = dloss (softmax - onehot) / n_valid; returns the rows' loss */
static double block_grad(const lce_dims *d, const double *xd, const double *Wd, const int32_t *target, size_t rb,
                         double gscale, double *z)
{
    size_t H = d->H, V = d->V;
    double loss = 0.0;
    for (size_t v = 0; v < V; v++)
        for (size_t r = 0; r < rb; r++) {
            double acc = 0.0;
            for (size_t h = 0; h < H; h++) acc += xd[r * H + h] * Wd[v * H + h];
            z[r * V + v] = acc;
        }
    for (size_t r = 0; r < rb; r++) {
        double *zr = z + r * V;
        int32_t t = target[r];
        if (t == LCE_IGNORE) {
            memset(zr, 0, V * sizeof *zr);
            continue;
        }
        double lse = lse_f64(zr, V);
        loss += lse - zr[t];
        for (size_t v = 0; v < V; v++) zr[v] = (exp(zr[v] - lse) - (v == (size_t)t ? 1.0 : 0.0)) * gscale;
    }
    return loss;
}

void lce_reference(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target, double dloss,
                   double *loss, double *dx, double *dW)
{
    size_t N = d->N, H = d->H, V = d->V, nv = count_valid(target, N);
    double *Wd = host_alloc_array(lce_w_count(d), DT_F64, "reference: W f64");
    double *xd = host_alloc_array(LCE_REF_ROWS * H, DT_F64, "reference: x rows f64");
    double *z = host_alloc_array(LCE_REF_ROWS * V, DT_F64, "reference: logits rows f64");
    for (size_t i = 0; i < lce_w_count(d); i++) Wd[i] = bf16_to_f32(W[i]);
    memset(dx, 0, lce_x_count(d) * sizeof *dx);
    memset(dW, 0, lce_w_count(d) * sizeof *dW);
    double gscale = nv ? dloss / (double)nv : 0.0, sum = 0.0;
    for (size_t r0 = 0; r0 < N; r0 += LCE_REF_ROWS) {
        size_t rb = N - r0 < LCE_REF_ROWS ? N - r0 : LCE_REF_ROWS;
        for (size_t i = 0; i < rb * H; i++) xd[i] = bf16_to_f32(x[r0 * H + i]);
        sum += block_grad(d, xd, Wd, target + r0, rb, gscale, z);
        for (size_t v = 0; v < V; v++) /* dx += g W, dW += g^T x, with W's row v in cache for the block */
            for (size_t r = 0; r < rb; r++) {
                double g = z[r * V + v];
                double *dxr = dx + (r0 + r) * H, *dwv = dW + v * H;
                const double *wv = Wd + v * H, *xr = xd + r * H;
                for (size_t h = 0; h < H; h++) {
                    dxr[h] += g * wv[h];
                    dwv[h] += g * xr[h];
                }
            }
    }
    loss[0] = nv ? sum / (double)nv : 0.0;
    host_free(Wd);
    host_free(xd);
    host_free(z);
}

double lce_reference_loss_f64(const lce_dims *d, const double *x, const double *W, const int32_t *target)
{
    size_t N = d->N, H = d->H, V = d->V, nv = count_valid(target, N);
    double *z = host_alloc_array(V, DT_F64, "reference: one row of logits f64");
    double sum = 0.0;
    for (size_t n = 0; n < N; n++) {
        if (target[n] == LCE_IGNORE) continue;
        for (size_t v = 0; v < V; v++) {
            double acc = 0.0;
            for (size_t h = 0; h < H; h++) acc += x[n * H + h] * W[v * H + h];
            z[v] = acc;
        }
        sum += lse_f64(z, V) - z[target[n]];
    }
    host_free(z);
    return nv ? sum / (double)nv : 0.0;
}

void lce_fill(const lce_dims *d, uint64_t seed, bf16 *x, bf16 *W, int32_t *target, float *dloss)
{
    rng r;
    rng_seed(&r, seed);
    double ws = 2.0 / sqrt((double)d->H);
    for (size_t i = 0; i < lce_x_count(d); i++) x[i] = bf16_from_f32((float)rng_normal(&r));
    for (size_t i = 0; i < lce_w_count(d); i++) W[i] = bf16_from_f32((float)(ws * rng_normal(&r)));
    for (size_t n = 0; n < d->N; n++) {
        int ignore = rng_uniform(&r) < 1.0 / 16.0;
        int32_t t = (int32_t)(rng_u64(&r) % d->V);
        target[n] = ignore ? LCE_IGNORE : t;
    }
    if (d->N >= 2) {
        target[1] = LCE_IGNORE;
        if (target[0] == LCE_IGNORE) target[0] = 0; /* never all ignored */
    }
    dloss[0] = (float)(0.5 + rng_uniform(&r));
}
