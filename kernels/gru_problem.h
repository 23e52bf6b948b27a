/* gru_problem.h - lesson 4's problem: a GRU cell with a sampled latent, run in a step loop.
 *
 * Per step t, with hidden h (B,H), input x_t (B,X) and noise eps_t (B,H):
 *     pd = h W_enc                    W_enc (H,2H)   mean, lv = pd[:, :H], pd[:, H:]
 *     z  = mean + eps_t * exp(lv/2)                  (the reparameterisation)
 *     xr, xu, xn = split(x_t W_ih)    W_ih (X,3H)    columns [r | u | n], the forum's chunk(3) order
 *     zr, zu, zn = split(z W_zh)      W_zh (H,3H)
 *     r = sigma(xr + zr),  u = sigma(xu + zu),  n = tanh(xn + r * zn),  h <- n + u * (h - n)
 * out[t] = h after step t. Loss = sum(out * dout); gradients for x, h0, W_enc, W_ih, W_zh (eps has none).
 * B is the Bt (batch); the CLI names it Bt.
 */
#ifndef KERNELS_GRU_PROBLEM_H
#define KERNELS_GRU_PROBLEM_H

#include <stddef.h>
#include "runtime/size_math.h"

typedef struct {
    size_t T; /* steps */
    size_t B; /* batch rows */
    size_t X; /* input features */
    size_t H; /* hidden size */
} gru_dims;

/* Where a step loop is: the probe is called after every step, so the lesson can sample the tracker's live
 * bytes step by step (the generic session only reads them at forward/backward boundaries). */
typedef enum { GRU_FWD_BEGIN = 0, GRU_FWD_STEP = 1, GRU_BWD_STEP = 2, GRU_BWD_END = 3 } gru_phase;
typedef struct {
    void (*fn)(void *ctx, gru_phase phase, size_t t);
    void *ctx;
} gru_probe;

static inline void gru_probe_call(const gru_probe *p, gru_phase phase, size_t t)
{
    if (p && p->fn) p->fn(p->ctx, phase, t);
}

/* The five gradients every implementation's backward allocates and returns (host or device pointers). */
typedef struct {
    float *dx;     /* (T,B,X) */
    float *dh0;    /* (B,H) */
    float *dW_enc; /* (H,2H) */
    float *dW_ih;  /* (X,3H) */
    float *dW_zh;  /* (H,3H) */
} gru_grads;

static inline size_t gru_x_count(const gru_dims *d) { return size_mul(size_mul(d->T, d->B), d->X); }
static inline size_t gru_h0_count(const gru_dims *d) { return size_mul(d->B, d->H); }
/* eps, out, dout */
static inline size_t gru_seq_count(const gru_dims *d) { return size_mul(size_mul(d->T, d->B), d->H); }
static inline size_t gru_wenc_count(const gru_dims *d) { return size_mul(d->H, size_mul(2, d->H)); }
static inline size_t gru_wih_count(const gru_dims *d) { return size_mul(d->X, size_mul(3, d->H)); }
static inline size_t gru_wzh_count(const gru_dims *d) { return size_mul(d->H, size_mul(3, d->H)); }

/* bytes of the six inputs (x, h0, eps, W_enc, W_ih, W_zh) and of the five gradients (dx, dh0, dW_*) */
static inline size_t gru_input_bytes(const gru_dims *d)
{
    size_t n = size_add(size_add(gru_x_count(d), gru_h0_count(d)), gru_seq_count(d));
    n = size_add(n, size_add(size_add(gru_wenc_count(d), gru_wih_count(d)), gru_wzh_count(d)));
    return size_mul(4, n);
}
static inline size_t gru_grad_bytes(const gru_dims *d)
{
    size_t n = size_add(gru_x_count(d), gru_h0_count(d));
    n = size_add(n, size_add(size_add(gru_wenc_count(d), gru_wih_count(d)), gru_wzh_count(d)));
    return size_mul(4, n);
}

#endif
