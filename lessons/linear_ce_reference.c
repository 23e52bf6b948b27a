/* linear_ce_reference.c - lesson 5's float64 reference (see linear_ce_reference.h). */
#include "linear_ce_reference.h"

#include <math.h>
#include <string.h>

#include "rng.h"
#include "track.h"
#include "blas_reference.h"

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

/* Rows per block: the block's logits (rows, V) in double stay at most LCE_REF_LOGIT_BYTES. */
static size_t block_rows(const lce_dims *d)
{
    size_t rows = LCE_REF_LOGIT_BYTES / size_mul(d->V, sizeof(double));
    return rows ? rows : 1;
}

/* z (rb, V) = xd (rb, H) . Wd^T; Wd stored (V, H) = (N, K): transB */
static void block_logits(const lce_dims *d, const double *xd, const double *Wd, size_t rb, double *z)
{
    ref_dgemm(REF_N, REF_T, rb, d->V, d->H, xd, d->H, Wd, d->H, 0.0, z, d->V);
}

/* In place, row by row: z becomes g = dloss (softmax - onehot) / n_valid (0 on ignored rows); returns the
 * loss sum */
static double block_grad(const lce_dims *d, const int32_t *target, size_t rb, double gscale, double *z)
{
    size_t V = d->V;
    double loss = 0.0;
    for (size_t r = 0; r < rb; r++) {
        double *zr = z + r * V;
        int32_t t = target[r];
        if (t == LCE_IGNORE) {
            memset(zr, 0, V * sizeof *zr);
            continue;
        }
        double m = zr[0], sum = 0.0, zt = zr[t];
        for (size_t v = 1; v < V; v++) m = zr[v] > m ? zr[v] : m;
        for (size_t v = 0; v < V; v++) sum += (zr[v] = exp(zr[v] - m)); /* one exp per logit, kept for g */
        loss += m + log(sum) - zt;
        for (size_t v = 0; v < V; v++) zr[v] = (zr[v] / sum - (v == (size_t)t ? 1.0 : 0.0)) * gscale;
    }
    return loss;
}

/* x rows [r0, r0 + rb) in double (bf16 is exact in double) */
static void block_x(const lce_dims *d, const bf16 *x, size_t r0, size_t rb, double *xd)
{
    for (size_t i = 0; i < rb * d->H; i++) xd[i] = bf16_to_f32(x[r0 * d->H + i]);
}

/* dx rows (rb, H) = g (rb, V) . Wd (V, H); dW (V, H) += g^T (V, rb) . xd (rb, H), g stored (rb, V): transA;
 * the sum over the block's rows happens inside the GEMM, in double. */
static void block_backward(const lce_dims *d, const double *g, const double *xd, const double *Wd, size_t rb,
                           double *dx_rows, double *dW)
{
    size_t H = d->H, V = d->V;
    ref_dgemm(REF_N, REF_N, rb, H, V, g, V, Wd, H, 0.0, dx_rows, H);
    ref_dgemm(REF_T, REF_N, V, H, rb, g, V, xd, H, 1.0, dW, H);
}

void lce_reference(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target, double dloss,
                   double *loss, double *dx, double *dW)
{
    size_t N = d->N, H = d->H, V = d->V, nv = count_valid(target, N), RB = block_rows(d);
    double *Wd = host_alloc_array(lce_w_count(d), DT_F64, "reference: W (V,H) f64");
    double *xd = host_alloc_array(size_mul(RB, H), DT_F64, "reference: x rows (rows,H) f64");
    double *z = host_alloc_array(size_mul(RB, V), DT_F64, "reference: logits rows (rows,V) f64");
    for (size_t i = 0; i < lce_w_count(d); i++) Wd[i] = bf16_to_f32(W[i]);
    memset(dW, 0, lce_w_count(d) * sizeof *dW);
    double gscale = nv ? dloss / (double)nv : 0.0, sum = 0.0;
    for (size_t r0 = 0; r0 < N; r0 += RB) {
        size_t rb = N - r0 < RB ? N - r0 : RB;
        block_x(d, x, r0, rb, xd);
        block_logits(d, xd, Wd, rb, z);
        sum += block_grad(d, target + r0, rb, gscale, z);
        block_backward(d, z, xd, Wd, rb, dx + r0 * H, dW);
    }
    loss[0] = nv ? sum / (double)nv : 0.0;
    host_free(Wd);
    host_free(xd);
    host_free(z);
}

double lce_reference_loss_f64(const lce_dims *d, const double *x, const double *W, const int32_t *target)
{
    size_t N = d->N, V = d->V, nv = count_valid(target, N), RB = block_rows(d);
    double *z = host_alloc_array(size_mul(RB, V), DT_F64, "reference: logits rows (rows,V) f64");
    double sum = 0.0;
    for (size_t r0 = 0; r0 < N; r0 += RB) {
        size_t rb = N - r0 < RB ? N - r0 : RB;
        block_logits(d, x + r0 * d->H, W, rb, z);
        for (size_t r = 0; r < rb; r++)
            if (target[r0 + r] != LCE_IGNORE) sum += lse_f64(z + r * V, V) - z[r * V + target[r0 + r]];
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
