/* gru_eager.h - lesson 4, naive: the forum's step loop as an eager autograd framework runs it, in C.
 *
 * Every op of every step allocates its result (17 allocations per step, forward_op list in gru_eager.c), and
 * what each op's backward needs stays alive until backward reaches it. Per step that is 10H floats per row:
 *     e1    (B,H)   exp(lv/2): exp's backward multiplies by its result; mul(eps, e1) saved it too
 *     z     (B,H)   the latent: mm(z, W_zh) saves its left operand for dW_zh
 *     zres  (B,3H)  z W_zh, kept WHOLE: mul(sr, zn) saved the view zn, and a view keeps its base alive
 *     u     (B,H)   sigmoid's result (sigmoid' = u(1-u)), also saved by mul(u, h - n)
 *     sr    (B,H)   sigmoid's result, also saved by mul(sr, zn)
 *     n     (B,H)   tanh's result (tanh' = 1 - n^2)
 *     d     (B,H)   h - n, saved by mul(u, d)
 *     h_t   (B,H)   the new hidden: saved by the next step's mm(h, W_enc), and held in the outputs list
 * plus out = stack(outputs) (T,B,H), a copy. Temporaries nobody saves (pd, 0.5 lv, eps e1, x W_ih, the sums
 * before each activation, sr zn, u d) are freed as soon as Python would drop them.
 * Backward runs the steps in reverse, each op's gradient in its own allocation, freeing saved tensors as
 * their node runs. Weight gradients accumulate like autograd's input buffers: the first step's gradient
 * becomes the buffer, later ones are temporaries added into it. dx_t stays allocated until all T have arrived
 * (unbind's backward stacks them), then dx = stack(dx_t) is one more copy.
 */
#ifndef NAIVE_GRU_EAGER_H
#define NAIVE_GRU_EAGER_H

#include "../kernels/gru_problem.h"
#include "../kernels/runtime/mem_formula.h"

/* What autograd keeps for one step (see above); gx is the step's dx_t, held by unbind's backward. */
typedef struct {
    float *e1, *z, *zres, *u, *sr, *n, *d, *h; /* (B,H) each, zres (B,3H) */
    float *gx;                                  /* (B,X), during backward */
} gru_eager_step;

typedef struct {
    gru_eager_step *steps; /* (T) the autograd graph: one tracked allocation */
} gru_eager_saved;

/* Returns out (T,B,H); fills sv. All pointers are host, row-major: x (T,B,X), h0 (B,H), eps (T,B,H),
 * W_enc (H,2H), W_ih (X,3H), W_zh (H,3H). */
float *naive_gru_forward(const gru_dims *d, const float *x, const float *h0, const float *eps,
                         const float *W_enc, const float *W_ih, const float *W_zh, gru_eager_saved *sv,
                         const gru_probe *probe);
/* dout (T,B,H). Allocates the five gradients into g and frees everything forward saved. */
void naive_gru_backward(const gru_dims *d, const float *x, const float *h0, const float *eps,
                        const float *W_enc, const float *W_ih, const float *W_zh, const float *dout,
                        gru_eager_saved *sv, gru_grads *g, const gru_probe *probe);

/* The tracker's view of one forward + backward, inputs and dout included (derivation in docs/lesson-4.md). */
mem_formula naive_gru_memory(const gru_dims *d);
/* bytes autograd keeps per step (10 B H floats) */
size_t naive_gru_kept_per_step(const gru_dims *d);

#endif
