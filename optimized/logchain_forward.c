/* logchain_forward.c - lesson 2's forward algorithm and its beta recursion on the CPU.
 *
 * Layouts: row r = b*t + s. For one chain position s and variable i, the n rows of alpha (or x) are
 * alpha + ((b*t + s)*v + i)*c, b = 0..n-1: a strided (n x c) matrix with row stride t*v*c, which is what the
 * GEMMs below take. Scratch buffers are compact (n x c), row stride c.
 */
#include "logchain_forward.h"

#include "../kernels/runtime/gemm_cpu.h"
#include "../kernels/logchain_math.h"
#include "../kernels/runtime/track.h"

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
                    as[b * ld + (i + 1) * c + k] = lc_finish(xs[b * ld + (i + 1) * c + k], mx[b], S[b * c + k]);
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

void cpu_lc_backward(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                     const float *out, const float *dout, float **dx_out, float **dbulk_out, float **dp0_out)
{
    size_t n = d->n, t = d->t, v = d->v, c = d->c, C2 = c * c, V1 = v - 1, ld = t * v * c;
    /* dx is written over the saved alphas: step i reads alpha_i for the last time when it writes dx_i (dbulk_i
     * and beta_i have used it by then, and step i-1 needs alpha_{i-1}, not alpha_i). The buffer changes role;
     * no (n,t,v,c) gradient is allocated. */
    float *dx = alpha;
    track_relabel(MEM_HOST, dx, "dx (n,t,v,c) written over alpha");
    float *dbulk = falloc(lc_bulk_count(d), "dbulk (1,t,v-1,c,c)");
    float *dp0 = falloc(lc_p0_count(d), "dp0 (1,t,c)");
    float *beta = falloc(n * c, "bwd scratch: beta_i (n,c)");
    float *W = falloc(n * c, "bwd scratch: W = exp(x + beta - max) (n,c)");
    float *U = falloc(n * c, "bwd scratch: U = dout exp(alpha - log Z) (n,c)");
    float *S = falloc(n * c, "bwd scratch: sums W . P^T (n,c)");
    float *ma = falloc(n, "bwd scratch: alpha row maxima (n)");
    float *mb = falloc(n, "bwd scratch: x + beta row maxima (n)");

    for (size_t s = 0; s < t; s++) {
        const float *xs = x + s * v * c;
        const float *as = alpha + s * v * c; /* alpha_i, until dx_i replaces it */
        float *dxs = dx + s * v * c;
        /* beta_{v-1} = 0: the last variable's posterior is softmax(alpha_{v-1}) */
        for (size_t b = 0; b < n; b++) {
            float lz = out[b * t + s], g = dout[b * t + s];
            for (size_t k = 0; k < c; k++) {
                beta[b * c + k] = 0.0f;
                dxs[b * ld + V1 * c + k] = g * lc_posterior(as[b * ld + V1 * c + k], 0.0f, lz);
            }
        }
        for (size_t ii = V1; ii-- > 0;) { /* i = v-2 .. 0, beta holds beta_{i+1} */
            const float *P = bulk + (s * V1 + ii) * C2;
            for (size_t b = 0; b < n; b++) {
                const float *xn = xs + b * ld + (ii + 1) * c, *a = as + b * ld + ii * c;
                float *w = W + b * c, *u = U + b * c;
                for (size_t k = 0; k < c; k++) w[k] = xn[k] + beta[b * c + k];
                mb[b] = vmax(w, c);
                for (size_t k = 0; k < c; k++) w[k] = lc_weight(w[k], mb[b]);
                ma[b] = vmax(a, c);
                /* U[b, j] W[b, k] = dout_b exp(alpha_i[j] + x_{i+1}[k] + beta_{i+1}[k] - log Z_b); the scale
                 * exp(ma + mb - log Z) is at most 1 / P[argmax] (log Z includes that path), so it is finite. */
                float scale = dout[b * t + s] * lc_transition_term(ma[b], mb[b], out[b * t + s]);
                for (size_t j = 0; j < c; j++) u[j] = scale * lc_weight(a[j], ma[b]);
            }
            /* dbulk_i (c, c) = U^T (c, n) . W (n, c): the batch is the GEMM's inner dimension */
            sgemm_cpu(1, 0, c, c, n, 1.0f, U, c, W, c, 0.0f, dbulk + (s * V1 + ii) * C2, c);
            /* beta_i = mb + log(W . P_i^T) */
            sgemm_cpu(0, 1, n, c, c, 1.0f, W, c, P, c, 0.0f, S, c);
            for (size_t b = 0; b < n; b++) {
                float lz = out[b * t + s], g = dout[b * t + s];
                for (size_t j = 0; j < c; j++) {
                    float bj = lc_finish(0.0f, mb[b], S[b * c + j]);
                    beta[b * c + j] = bj;
                    dxs[b * ld + ii * c + j] = g * lc_posterior(as[b * ld + ii * c + j], bj, lz);
                }
            }
        }
        /* dp0 = sum over the batch of dout * posterior(first variable) / p0 = sum_b dx[b, s, 0, :] / p0 */
        for (size_t j = 0; j < c; j++) {
            float acc = 0.0f;
            for (size_t b = 0; b < n; b++) acc += dxs[b * ld + j];
            dp0[s * c + j] = acc / p0[s * c + j];
        }
    }
    host_free(beta);
    host_free(W);
    host_free(U);
    host_free(S);
    host_free(ma);
    host_free(mb);
    *dx_out = dx; /* alpha's storage: the saved tensor lives on as the gradient */
    *dbulk_out = dbulk;
    *dp0_out = dp0;
}

static size_t inputs_bytes(const lc_dims *d)
{
    return size_mul(4, size_add(size_add(lc_x_count(d), lc_bulk_count(d)), lc_p0_count(d)));
}

lc_memory cpu_lc_memory(const lc_dims *d)
{
    size_t F = 4, nc = size_mul(d->n, d->c);
    size_t xb = size_mul(F, lc_x_count(d)), ob = size_mul(F, lc_out_count(d));
    size_t grads = size_mul(F, size_add(lc_bulk_count(d), lc_p0_count(d))); /* dbulk, dp0; dx reuses alpha */
    lc_memory m = {0, 0, 0};
    m.forward_live = size_add(size_add(inputs_bytes(d), xb), ob); /* + alpha + out */
    size_t fwd_peak = size_add(m.forward_live, size_mul(F, size_add(size_mul(2, nc), d->n)));
    size_t bwd_peak = size_add(size_add(m.forward_live, ob), /* + dout */
                               size_add(grads, size_mul(F, size_add(size_mul(4, nc), size_mul(2, d->n)))));
    m.peak = fwd_peak > bwd_peak ? fwd_peak : bwd_peak;
    return m;
}

#include "../kernels/runtime/cuda_track.h" /* CUBLAS_WORKSPACE_BYTES; declarations only, no CUDA needed */
#include "../kernels/logchain_geometry.h"
#include <limits.h>

/* CUDA v1 keeps alpha and out in device memory, like the CPU, and needs only two (n, c) beta buffers during
 * backward (its kernels compute exponentials where the CPU stages weights for its GEMMs). No cuBLAS. */
lc_memory cuda_lc_memory_v1(const lc_dims *d)
{
    size_t F = 4, nc = size_mul(d->n, d->c);
    size_t xb = size_mul(F, lc_x_count(d)), ob = size_mul(F, lc_out_count(d));
    size_t grads = size_mul(F, size_add(lc_bulk_count(d), lc_p0_count(d))); /* dx reuses alpha, as on the CPU */
    lc_memory m = {0, 0, 0};
    m.forward_live = size_add(size_add(inputs_bytes(d), xb), ob);
    m.peak = size_add(size_add(m.forward_live, ob), size_add(grads, size_mul(F, size_mul(2, nc))));
    return m;
}

/* CUDA v2: the tracked cuBLAS workspace from the start of forward to the end of backward; scratch for all t
 * chain positions at once: forward W, S (t,n,c) and m (t,n); backward W, U/S (t,n,c) and mb (t,n). */
lc_memory cuda_lc_memory(const lc_dims *d)
{
    size_t F = 4, tnc = size_mul(lc_rows(d), d->c);
    size_t xb = size_mul(F, lc_x_count(d)), ob = size_mul(F, lc_out_count(d));
    size_t grads = size_mul(F, size_add(lc_bulk_count(d), lc_p0_count(d))); /* dx reuses alpha */
    size_t scratch = size_mul(F, size_add(size_mul(2, tnc), lc_rows(d)));  /* the same in both passes */
    lc_memory m = {0, 0, 0};
    m.forward_live = size_add(size_add(size_add(inputs_bytes(d), xb), ob), CUBLAS_WORKSPACE_BYTES);
    m.peak = size_add(size_add(m.forward_live, ob), size_add(grads, scratch)); /* + dout */
    return m;
}

/* Kernels index rows and columns with int. v1 launches ceil(c/LC1_TILE) x ceil(n/LC1_ROWS) blocks and 1-D
 * grids of ceil(n*c/LC1_EW_BLOCK) and ceil(n*32/LC1_EW_BLOCK); v2 launches ceil(n/LC2_ROWS) x t blocks and
 * passes n*c, c*c, (v-1)*c*c as cuBLAS strides and t as the batch count (int). */
int cuda_lc_dims_fit_v1(const lc_dims *d)
{
    return d->n <= INT_MAX && d->c <= INT_MAX && (d->n + LC1_ROWS - 1) / LC1_ROWS <= LC_MAX_GRID_YZ &&
           (d->c + LC1_TILE - 1) / LC1_TILE <= LC_MAX_GRID_YZ && lc_x_count(d) < ((size_t)1 << 62) &&
           size_mul(d->n, d->c) / LC1_EW_BLOCK < LC_MAX_GRID_X && size_mul(d->n, 32) / LC1_EW_BLOCK < LC_MAX_GRID_X;
}

int cuda_lc_dims_fit(const lc_dims *d)
{
    return d->n <= INT_MAX && d->c <= INT_MAX && d->v <= INT_MAX && d->t <= LC_MAX_GRID_YZ &&
           (d->n + LC2_ROWS - 1) / LC2_ROWS <= LC_MAX_GRID_X && (d->c + LC2_DP0_BLOCK - 1) / LC2_DP0_BLOCK <= LC_MAX_GRID_X &&
           lc_x_count(d) < ((size_t)1 << 62) && size_mul(lc_rows(d), d->c) < ((size_t)1 << 62);
}
