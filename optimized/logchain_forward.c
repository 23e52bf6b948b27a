/* logchain_forward.c - lesson 2's forward algorithm and its beta recursion on the CPU.
 *
 * Layouts: row r = b*t + s. For one chain position s and variable i, the n rows of alpha (or x) are
 * alpha + ((b*t + s)*v + i)*c, b = 0..n-1: a strided (n x c) matrix with row stride t*v*c, which is what the
 * GEMMs below take. Scratch buffers are compact (n x c), row stride c.
 */
#include "logchain_forward.h"

#include "gemm_cpu.h"
#include "../kernels/logchain_math.h"
#include "track.h"

#include <math.h>

static float *falloc(size_t count, const char *label) { return host_alloc_array(count, DT_F32, label); }

/* max of a (c,) vector */
static float vmax(const float *a, size_t c)
{
    float m = a[0];
    for (size_t j = 1; j < c; j++) m = fmaxf(m, a[j]);
    return m;
}

float *cpu_lc_forward(const lc_dims *d, const float *x, const float *bulk, const float *p0, float **alpha_out)
{
    size_t n = d->n, t = d->t, v = d->v, c = d->c, C2 = c * c, V1 = v - 1, ld = t * v * c;
    float *alpha = falloc(lc_x_count(d), "alpha (n,t,v,c) saved for backward");
    float *out = falloc(lc_out_count(d), "out (n,t)");
    float *W = falloc(n * c, "fwd scratch: exp(alpha - max) (n,c)");
    float *S = falloc(n * c, "fwd scratch: sums W . P (n,c)");
    float *mx = falloc(n, "fwd scratch: row maxima (n)");

    for (size_t s = 0; s < t; s++) {
        const float *xs = x + s * v * c; /* x[b, s, i, :] = xs + b*ld + i*c */
        float *as = alpha + s * v * c;   /* same layout */
        for (size_t b = 0; b < n; b++)
            for (size_t j = 0; j < c; j++) as[b * ld + j] = logf(p0[s * c + j]) + xs[b * ld + j];

        for (size_t i = 0; i < V1; i++) {
            const float *P = bulk + (s * V1 + i) * C2; /* P_i (c, c) */
            for (size_t b = 0; b < n; b++) {
                const float *a = as + b * ld + i * c; /* alpha_i of row b, (c,) */
                mx[b] = vmax(a, c);
                for (size_t j = 0; j < c; j++) W[b * c + j] = lc_weight(a[j], mx[b]);
            }
            /* S (n, c) = W (n, c) . P_i (c, c): the whole batch's vector x matrix products in one GEMM */
            sgemm_cpu(0, 0, n, c, c, 1.0f, W, c, P, c, 0.0f, S, c);
            for (size_t b = 0; b < n; b++)
                for (size_t k = 0; k < c; k++)
                    as[b * ld + (i + 1) * c + k] =
                        lc_finish(xs[b * ld + (i + 1) * c + k], mx[b], S[b * c + k]);
        }

        for (size_t b = 0; b < n; b++) { /* log Z = logsumexp of the last alpha */
            const float *a = as + b * ld + V1 * c;
            float m = vmax(a, c), sum = 0.0f;
            for (size_t k = 0; k < c; k++) sum += lc_weight(a[k], m);
            out[b * t + s] = lc_finish(0.0f, m, sum);
        }
    }
    host_free(W);
    host_free(S);
    host_free(mx);
    *alpha_out = alpha;
    return out;
}

/* Backward's (n,c) scratch, allocated before the chains and freed after them (the formula counts it once). */
typedef struct {
    float *beta; /* beta_{i+1}, then beta_i */
    float *W, *U, *S;
    float *ma, *mb; /* row maxima of alpha_i and of x_{i+1} + beta_{i+1} */
} bwd_scratch;

static void bwd_scratch_alloc(size_t n, size_t c, bwd_scratch *w)
{
    w->beta = falloc(n * c, "bwd scratch: beta_i (n,c)");
    w->W = falloc(n * c, "bwd scratch: W = exp(x + beta - max) (n,c)");
    w->U = falloc(n * c, "bwd scratch: U = dout exp(alpha - log Z) (n,c)");
    w->S = falloc(n * c, "bwd scratch: sums W . P^T (n,c)");
    w->ma = falloc(n, "bwd scratch: alpha row maxima (n)");
    w->mb = falloc(n, "bwd scratch: x + beta row maxima (n)");
}

static void bwd_scratch_free(bwd_scratch *w)
{
    host_free(w->beta);
    host_free(w->W);
    host_free(w->U);
    host_free(w->S);
    host_free(w->ma);
    host_free(w->mb);
}

/* Chain position s of every batch row: x, alpha (becoming dx) and the row scalars log Z and dout. */
typedef struct {
    size_t n, c, ld, s, t;
    const float *xs, *as; /* x[b, s, i, :] = xs + b*ld + i*c; alpha_i alike, until dx_i replaces it */
    float *dxs;
    const float *out, *dout;
} chain_view;

/* beta_{v-1} = 0: the last variable's posterior is softmax(alpha_{v-1}) */
static void last_variable(const chain_view *v, size_t V1, bwd_scratch *w)
{
    for (size_t b = 0; b < v->n; b++) {
        float lz = v->out[b * v->t + v->s], g = v->dout[b * v->t + v->s];
        for (size_t k = 0; k < v->c; k++) {
            w->beta[b * v->c + k] = 0.0f;
            v->dxs[b * v->ld + V1 * v->c + k] = g * lc_posterior(v->as[b * v->ld + V1 * v->c + k], 0.0f, lz);
        }
    }
}

/* W = exp(x_{i+1} + beta_{i+1} - mb) and U = dout exp(alpha_i - ma) times the scale, row by row */
static void step_weights(const chain_view *v, size_t ii, bwd_scratch *w)
{
    size_t c = v->c;
    for (size_t b = 0; b < v->n; b++) {
        const float *xn = v->xs + b * v->ld + (ii + 1) * c, *a = v->as + b * v->ld + ii * c;
        float *wr = w->W + b * c, *u = w->U + b * c;
        for (size_t k = 0; k < c; k++) wr[k] = xn[k] + w->beta[b * c + k];
        w->mb[b] = vmax(wr, c);
        for (size_t k = 0; k < c; k++) wr[k] = lc_weight(wr[k], w->mb[b]);
        w->ma[b] = vmax(a, c);
        /* U[b, j] W[b, k] = dout_b exp(alpha_i[j] + x_{i+1}[k] + beta_{i+1}[k] - log Z_b); the scale
         * exp(ma + mb - log Z) is at most 1 / P[argmax] (log Z includes that path), so it is finite. */
        float scale =
            v->dout[b * v->t + v->s] * lc_transition_term(w->ma[b], w->mb[b], v->out[b * v->t + v->s]);
        for (size_t j = 0; j < c; j++) u[j] = scale * lc_weight(a[j], w->ma[b]);
    }
}

/* beta_i = mb + log S (S = W . P_i^T) and dx_i = dout * posterior(alpha_i, beta_i), row by row */
static void step_beta_dx(const chain_view *v, size_t ii, bwd_scratch *w)
{
    size_t c = v->c;
    for (size_t b = 0; b < v->n; b++) {
        float lz = v->out[b * v->t + v->s], g = v->dout[b * v->t + v->s];
        for (size_t j = 0; j < c; j++) {
            float bj = lc_finish(0.0f, w->mb[b], w->S[b * c + j]);
            w->beta[b * c + j] = bj;
            v->dxs[b * v->ld + ii * c + j] = g * lc_posterior(v->as[b * v->ld + ii * c + j], bj, lz);
        }
    }
}

/* dp0 = sum over the batch of dout * posterior(first variable) / p0 = sum_b dx[b, s, 0, :] / p0 */
static void chain_dp0(const chain_view *v, const float *p0, float *dp0)
{
    for (size_t j = 0; j < v->c; j++) {
        float acc = 0.0f;
        for (size_t b = 0; b < v->n; b++) acc += v->dxs[b * v->ld + j];
        dp0[v->s * v->c + j] = acc / p0[v->s * v->c + j];
    }
}

/* The beta recursion of chain position s, i = v-2 .. 0: dbulk_i, beta_i and dx_i from beta_{i+1}. */
static void chain_backward(const chain_view *v, const float *bulk, size_t V1, bwd_scratch *w, float *dbulk)
{
    size_t c = v->c, C2 = c * c;
    last_variable(v, V1, w);
    for (size_t ii = V1; ii-- > 0;) { /* beta holds beta_{i+1} */
        const float *P = bulk + (v->s * V1 + ii) * C2;
        step_weights(v, ii, w);
        /* dbulk_i (c, c) = U^T (c, n) . W (n, c): the batch is the GEMM's inner dimension */
        sgemm_cpu(1, 0, c, c, v->n, 1.0f, w->U, c, w->W, c, 0.0f, dbulk + (v->s * V1 + ii) * C2, c);
        sgemm_cpu(0, 1, v->n, c, c, 1.0f, w->W, c, P, c, 0.0f, w->S, c); /* S = W . P_i^T */
        step_beta_dx(v, ii, w);
    }
}

void cpu_lc_backward(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                     const float *out, const float *dout, float **dx_out, float **dbulk_out, float **dp0_out)
{
    size_t n = d->n, t = d->t, v = d->v, c = d->c, ld = t * v * c;
    /* dx is written over the saved alphas: step i reads alpha_i for the last time when it writes dx_i
     * (dbulk_i and beta_i have used it by then, and step i-1 needs alpha_{i-1}, not alpha_i). The buffer
     * changes role; no (n,t,v,c) gradient is allocated. */
    float *dx = alpha;
    track_relabel(MEM_HOST, dx, "dx (n,t,v,c) written over alpha");
    float *dbulk = falloc(lc_bulk_count(d), "dbulk (1,t,v-1,c,c)");
    float *dp0 = falloc(lc_p0_count(d), "dp0 (1,t,c)");
    bwd_scratch w;
    bwd_scratch_alloc(n, c, &w);
    for (size_t s = 0; s < t; s++) {
        chain_view cv = {n, c, ld, s, t, x + s * v * c, alpha + s * v * c, dx + s * v * c, out, dout};
        chain_backward(&cv, bulk, v - 1, &w, dbulk);
        chain_dp0(&cv, p0, dp0);
    }
    bwd_scratch_free(&w);
    *dx_out = dx; /* alpha's storage: the saved tensor lives on as the gradient */
    *dbulk_out = dbulk;
    *dp0_out = dp0;
}

size_t lc_inputs_bytes(const lc_dims *d)
{
    return size_mul(4, size_add(size_add(lc_x_count(d), lc_bulk_count(d)), lc_p0_count(d)));
}

lc_memory cpu_lc_memory(const lc_dims *d)
{
    size_t F = 4, nc = size_mul(d->n, d->c);
    size_t xb = size_mul(F, lc_x_count(d)), ob = size_mul(F, lc_out_count(d));
    size_t grads = size_mul(F, size_add(lc_bulk_count(d), lc_p0_count(d))); /* dbulk, dp0; dx reuses alpha */
    lc_memory m = {0, 0, 0};
    m.forward_live = size_add(size_add(lc_inputs_bytes(d), xb), ob); /* + alpha + out */
    size_t fwd_peak = size_add(m.forward_live, size_mul(F, size_add(size_mul(2, nc), d->n)));
    size_t bwd_peak = size_add(size_add(m.forward_live, ob), /* + dout */
                               size_add(grads, size_mul(F, size_add(size_mul(4, nc), size_mul(2, d->n)))));
    m.peak = fwd_peak > bwd_peak ? fwd_peak : bwd_peak;
    return m;
}
