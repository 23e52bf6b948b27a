/* bmm_broadcast.h - lesson 1, naive: torch.matmul's broadcasting path, in C.
 *
 * For x viewed (B, G, 1, K) and W (G, K, N), matmul broadcasts the batch dimensions to (B, G), expands W to
 * (B, G, K, N) (a view with stride 0 over B), reshapes it to (B*G, K, N) for bmm — which needs a real copy,
 * because an expanded view is not contiguous — and calls bmm. bmm saves both operands for backward, so the
 * copy, B times the size of W, stays alive until backward has run.
 */
#ifndef NAIVE_BMM_BROADCAST_H
#define NAIVE_BMM_BROADCAST_H

#include "../kernels/bmm_problem.h"

typedef struct {
    float *W_expanded; /* (B*G, K, N): W copied B times, saved for backward; backward frees it */
} naive_bmm_saved;

/* Allocates and returns out (B, G, N); allocates saved->W_expanded. */
float *naive_bmm_forward(const bmm_dims *d, const float *x, const float *W, naive_bmm_saved *saved);

/* Allocates *dx (B, G*K) and *dW (G, K, N). Computes, like autograd: bmm's two input gradients (the weight's
 * is (B*G, K, N), as large as the copy), frees the saved copy, then reduces the expanded gradient over B (the
 * backward of expand) and frees it. */
void naive_bmm_backward(const bmm_dims *d, const float *x, naive_bmm_saved *saved, const float *dout,
                        float **dx, float **dW);

/* Frees what forward saved without running backward (a graph dropped before backward; the gradient checks
 * evaluate the forward pass alone). */
void naive_bmm_discard(naive_bmm_saved *saved);

/* 4 bytes per element:
 *   forward_live = x + W + W_expanded + out
 *   peak         = forward_live + dout + dx + dW_expanded   (reached at the end of bmm's backward, before the
 *                  saved copy is released; dW (G*K*N) is allocated after that release, when live is lower) */
bmm_memory naive_bmm_memory(const bmm_dims *d);

#endif
