/* logchain_device.h - the device buffers lesson 2's CUDA versions allocate alike (CUDA sources only):
 * forward's alpha (saved for backward) and out, backward's dx (written over alpha), dbulk and dp0, the
 * step-loop scratch v2 and v3 share and the step operands v4 and v5 share. Every buffer is tracked
 * (dev_alloc_array). */
#ifndef KERNELS_LOGCHAIN_DEVICE_H
#define KERNELS_LOGCHAIN_DEVICE_H

#include "logchain_problem.h"
#include "runtime/cuda_track.h"

/* forward: alpha (n,t,v,c) saved for backward into *alpha; returns out (n,t) */
static inline float *lc_dev_forward_out(const lc_dims *d, float **alpha)
{
    *alpha = (float *)dev_alloc_array(lc_x_count(d), DT_F32, "alpha (n,t,v,c) saved for backward");
    return (float *)dev_alloc_array(lc_out_count(d), DT_F32, "out (n,t)");
}

/* backward: dx is alpha's buffer, written over it step by step as on the CPU (cpu_lc_backward); dbulk, dp0 */
static inline void lc_dev_grads(const lc_dims *d, float *alpha, float **dx, float **dbulk, float **dp0)
{
    *dx = alpha;
    dev_relabel(alpha, "dx (n,t,v,c) written over alpha");
    *dbulk = (float *)dev_alloc_array(lc_bulk_count(d), DT_F32, "dbulk (1,t,v-1,c,c)");
    *dp0 = (float *)dev_alloc_array(lc_p0_count(d), DT_F32, "dp0 (1,t,c)");
}

/* v2 and v3's scratch for all t chain positions at once: forward's W = exp(alpha - m), S = W . P (t,n,c) and
 * the row maxima m (t,n); backward's W = exp(x + beta - mb), SU (U, then S = W . P^T) (t,n,c) and mb (t,n) */
typedef struct {
    float *W, *S, *m;
} lc_scratch;
static inline lc_scratch lc_dev_step_scratch(const lc_dims *d, int backward)
{
    size_t rows = d->t * d->n;
    lc_scratch s;
    s.W = (float *)dev_alloc_array(rows * d->c, DT_F32,
                                   backward ? "bwd scratch: W = exp(x + beta - mb) (t,n,c)"
                                            : "fwd scratch: W = exp(alpha - m) (t,n,c)");
    s.S = (float *)dev_alloc_array(rows * d->c, DT_F32,
                                   backward ? "bwd scratch: U, then S = W . P^T (t,n,c)"
                                            : "fwd scratch: S = W . P (t,n,c)");
    s.m = (float *)dev_alloc_array(rows, DT_F32,
                                   backward ? "bwd scratch: row maxima mb (t,n)"
                                            : "fwd scratch: row maxima m (t,n)");
    return s;
}

/* v4 and v5's backward operands of every step's dbulk GEMM: U = dout exp(alpha_i + mw - log Z) and
 * W = exp(x_{i+1} + beta_{i+1} - mw), each (t,v-1,n,c) */
typedef struct {
    float *U, *W;
} lc_operands;
static inline lc_operands lc_dev_step_operands(const lc_dims *d)
{
    size_t steps = size_mul(size_mul(d->t, d->v - 1), size_mul(d->n, d->c));
    lc_operands o;
    o.U = (float *)dev_alloc_array(steps, DT_F32, "bwd: U = dout exp(alpha_i + mw - log Z) (t,v-1,n,c)");
    o.W = (float *)dev_alloc_array(steps, DT_F32, "bwd: W = exp(x_{i+1} + beta_{i+1} - mw) (t,v-1,n,c)");
    return o;
}

static inline void lc_dev_operands_free(lc_operands o)
{
    dev_free(o.U);
    dev_free(o.W);
}

static inline void lc_dev_scratch_free(lc_scratch s)
{
    dev_free(s.W);
    dev_free(s.S);
    dev_free(s.m);
}

#endif
