/* logchain_reference.c - forward-backward in double, the n chains of one position s at a time.
 *
 * Rows r = b*t + s (b < n) share the transition matrices P_s, so each step of the recursions is one product
 * of the n rows' weights (n, c) with P_{s,i} (c, c) through cblas_dgemm; the shifts, logs and exps around it
 * are plain double loops. Named steps: alpha forward, log Z, then beta backward with dx and dbulk on the way.
 */
#include "logchain_reference.h"

#include "track.h"
#include "blas_reference.h"

#include <math.h>
#include <string.h>

/* One position s: its n chains' state, all (n, ...) row-major in double. */
typedef struct {
    const lc_dims *d;
    size_t s;
    const float *x, *dout; /* the lesson's full tensors (n,t,v,c), (n,t) */
    const double *P;       /* P_s (v-1, c, c) */
    double *alpha;         /* (n, v, c) log forward messages */
    double *beta;          /* (n, c) log backward message of the current step */
    double *w;             /* (n, c) exp-shifted weights fed to the GEMM */
    double *acc;           /* (n, c) the GEMM's result */
    double *shift;         /* (n) each row's max, so exp never overflows */
    double *lz;            /* (n) log Z of each chain */
} lc_group;

static size_t row_of(const lc_group *g, size_t b) { return b * g->d->t + g->s; }
static const float *x_at(const lc_group *g, size_t b, size_t i)
{
    return g->x + (row_of(g, b) * g->d->v + i) * g->d->c;
}

/* w[b, :] = exp(src[b, :] - max), shift[b] = that max; src row b at src + b * ld */
static void shifted_exp(const lc_group *g, const double *src, size_t ld)
{
    size_t c = g->d->c;
    for (size_t b = 0; b < g->d->n; b++) {
        double m = -INFINITY;
        for (size_t j = 0; j < c; j++) m = fmax(m, src[b * ld + j]);
        for (size_t j = 0; j < c; j++) g->w[b * c + j] = exp(src[b * ld + j] - m);
        g->shift[b] = m;
    }
}

/* alpha[b, 0] = log p0_s + x[b, 0]; alpha[b, i+1, k] = x[b, i+1, k] + log sum_j exp(alpha[b, i, j]) P_s[i, j,
 * k] */
static void alpha_forward(lc_group *g, const float *p0)
{
    size_t n = g->d->n, v = g->d->v, c = g->d->c;
    for (size_t b = 0; b < n; b++)
        for (size_t j = 0; j < c; j++)
            g->alpha[b * v * c + j] = log((double)p0[g->s * c + j]) + x_at(g, b, 0)[j];
    for (size_t i = 0; i + 1 < v; i++) {
        shifted_exp(g, g->alpha + i * c, v * c);
        /* acc (n, c) = w (n, c) . P_s[i] (c, c): the sum over the previous state j inside the GEMM */
        ref_dgemm(REF_N, REF_N, n, c, c, g->w, c, g->P + i * c * c, c, 0.0, g->acc, c);
        for (size_t b = 0; b < n; b++)
            for (size_t k = 0; k < c; k++)
                g->alpha[(b * v + i + 1) * c + k] =
                    x_at(g, b, i + 1)[k] + g->shift[b] + log(g->acc[b * c + k]);
    }
}

/* lz[b] = log sum_k exp(alpha[b, v-1, k]), written to out; dx's last step is the final softmax times dout */
static void log_z(lc_group *g, double *out, double *dx)
{
    size_t n = g->d->n, v = g->d->v, c = g->d->c;
    for (size_t b = 0; b < n; b++) {
        const double *a = g->alpha + (b * v + v - 1) * c;
        double m = -INFINITY, z = 0.0;
        for (size_t k = 0; k < c; k++) m = fmax(m, a[k]);
        for (size_t k = 0; k < c; k++) z += exp(a[k] - m);
        g->lz[b] = m + log(z);
        out[row_of(g, b)] = g->lz[b];
        double *dxl = dx + (row_of(g, b) * v + v - 1) * c;
        for (size_t k = 0; k < c; k++) {
            g->beta[b * c + k] = 0.0;
            dxl[k] = g->dout[row_of(g, b)] * exp(a[k] - g->lz[b]);
        }
    }
}

/* Step i of the beta recursion: w = exp(x[i+1] + beta - shift) (n, c); dbulk_{s,i} += u^T w with
 * u[b, j] = dout_b exp(alpha[b, i, j] + shift_b - lz_b); beta[b, j] = shift_b + log (w P_s[i]^T)[b, j];
 * dx[b, i, j] = dout_b exp(alpha[b, i, j] + beta[b, j] - lz_b). */
static void beta_step(lc_group *g, size_t i, double *dx, double *dbulk_si)
{
    size_t n = g->d->n, v = g->d->v, c = g->d->c;
    for (size_t b = 0; b < n; b++)
        for (size_t k = 0; k < c; k++) g->acc[b * c + k] = x_at(g, b, i + 1)[k] + g->beta[b * c + k];
    shifted_exp(g, g->acc, c);
    for (size_t b = 0; b < n; b++) /* acc becomes u (n, c) */
        for (size_t j = 0; j < c; j++)
            g->acc[b * c + j] =
                g->dout[row_of(g, b)] * exp(g->alpha[(b * v + i) * c + j] + g->shift[b] - g->lz[b]);
    /* dbulk (c, c) += u^T (c, n) . w (n, c): the sum over the n chains inside the GEMM; u stored (n, c):
     * transA */
    ref_dgemm(REF_T, REF_N, c, c, n, g->acc, c, g->w, c, 1.0, dbulk_si, c);
    /* acc (n, c) = w (n, c) . P_s[i]^T: the sum over the next state k; P stored (j, k) = (N, K): transB */
    ref_dgemm(REF_N, REF_T, n, c, c, g->w, c, g->P + i * c * c, c, 0.0, g->acc, c);
    for (size_t b = 0; b < n; b++) {
        double *dxi = dx + (row_of(g, b) * v + i) * c;
        for (size_t j = 0; j < c; j++) {
            g->beta[b * c + j] = g->shift[b] + log(g->acc[b * c + j]);
            dxi[j] =
                g->dout[row_of(g, b)] * exp(g->alpha[(b * v + i) * c + j] + g->beta[b * c + j] - g->lz[b]);
        }
    }
}

/* dp0[s, j] = sum_b dx[b, 0, j] / p0[s, j]: x[b, 0] enters log Z exactly as log p0 does */
static void dp0_of(const lc_group *g, const double *dx, const float *p0, double *dp0)
{
    size_t c = g->d->c;
    for (size_t j = 0; j < c; j++) {
        double sum = 0.0;
        for (size_t b = 0; b < g->d->n; b++) sum += dx[row_of(g, b) * g->d->v * c + j];
        dp0[g->s * c + j] = sum / p0[g->s * c + j];
    }
}

static void alloc_result(const lc_dims *d, lc_ref_result *res)
{
    res->out = host_alloc_array(lc_out_count(d), DT_F64, "reference: out (n,t) f64");
    res->dx = host_alloc_array(lc_x_count(d), DT_F64, "reference: dx (n,t,v,c) f64");
    res->dbulk = host_alloc_array(lc_bulk_count(d), DT_F64, "reference: dbulk (1,t,v-1,c,c) f64");
    res->dp0 = host_alloc_array(lc_p0_count(d), DT_F64, "reference: dp0 (1,t,c) f64");
    memset(res->dbulk, 0, lc_bulk_count(d) * sizeof(double));
}

void lc_reference(const lc_dims *d, const float *x, const float *bulk, const float *p0, const float *dout,
                  lc_ref_result *res)
{
    size_t n = d->n, c = d->c, V1 = d->v - 1, C2 = c * c;
    alloc_result(d, res);
    double *P = ref_f64_copy(bulk, lc_bulk_count(d), 0, "reference: bulk (1,t,v-1,c,c) f64");
    lc_group g = {.d = d, .x = x, .dout = dout};
    g.alpha = host_alloc_array(size_mul(size_mul(n, d->v), c), DT_F64,
                               "reference: alpha of one position (n,v,c) f64");
    g.beta = host_alloc_array(n * c, DT_F64, "reference: beta (n,c) f64");
    g.w = host_alloc_array(n * c, DT_F64, "reference: weights (n,c) f64");
    g.acc = host_alloc_array(n * c, DT_F64, "reference: products (n,c) f64");
    g.shift = host_alloc_array(2 * n, DT_F64, "reference: shifts and log Z (2n) f64");
    g.lz = g.shift + n;
    for (size_t s = 0; s < d->t; s++) {
        g.s = s;
        g.P = P + s * V1 * C2;
        alpha_forward(&g, p0);
        log_z(&g, res->out, res->dx);
        for (size_t i = V1; i-- > 0;) beta_step(&g, i, res->dx, res->dbulk + (s * V1 + i) * C2);
        dp0_of(&g, res->dx, p0, res->dp0);
    }
    host_free(P);
    host_free(g.alpha);
    host_free(g.beta);
    host_free(g.w);
    host_free(g.acc);
    host_free(g.shift);
}

void lc_reference_free(lc_ref_result *res)
{
    host_free(res->out);
    host_free(res->dx);
    host_free(res->dbulk);
    host_free(res->dp0);
    res->out = res->dx = res->dbulk = res->dp0 = NULL;
}
