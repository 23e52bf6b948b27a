/* logchain_tree.h - lesson 2, naive: the forum's pairwise tree of log-space matrix products, in C.
 *
 * The forum materialises M_i = x_i[:, None] + log P_i for every batch row, a (n, t, v-1, c, c) tensor, then
 * multiplies neighbours pairwise, level by level, until one (c, c) matrix per row is left. Each pair product
 * is done in probability space with a max shift:
 *     b1 = max over columns of M_a (row maxima),  b2 = max over rows of M_b (column maxima)
 *     s1 = clamp(exp(M_a - b1), 1e-10),  s2 = clamp(exp(M_b - b2), 1e-10)
 *     r  = b1 + b2 + log(s1 @ s2)
 * Each of those lines is a torch op, and autograd keeps what each op's backward needs until backward runs.
 * Per level with m matrices, m/2 pair products (rounded down), what stays alive until backward (the list the
 * doc explains; the tracker's labels use the same symbols):
 *     idx1, idx2   (n,t,m/2,c) int64   torch.max's argmax indices (MaxBackward scatters into them)
 *     e1, e2       (n,t,m/2,c,c) f32   exp's result (ExpBackward: grad * result; ClampMin's mask reads it
 *     too)
 *     s1, s2       (n,t,m/2,c,c) f32   the clamped operands of the matmul (MmBackward needs both)
 *     mul          (n,t,m/2,c,c) f32   the product, the input of log (LogBackward: grad / input)
 * and at the end f = last + x[v-1] (n,t,c,c), g = logsumexp(f) (n,t,c), h = log p0 + g (n,t,c) for the two
 * logsumexp nodes. Temporaries that no backward needs (M itself, the shifted d = M - b, b1 + b2, log(mul),
 * the level results) are freed as soon as Python would drop them.
 *
 * Odd levels: the forum pads with torch.zeros, which in log space is the all-ones matrix J (exp(0) = 1), not
 * the identity, so the chain silently becomes ... M_last J. This implementation carries the odd matrix to the
 * next level instead (LC_ODD_CARRY); LC_ODD_ZERO_PAD reproduces the forum's padding, forward only, so a test
 * can show the difference.
 */
#ifndef NAIVE_LOGCHAIN_TREE_H
#define NAIVE_LOGCHAIN_TREE_H

#include <stdint.h>
#include "../kernels/logchain_problem.h"

#define LC_MAX_LEVELS 64 /* ceil(log2(v-1)) levels; v-1 < 2^63 */

typedef enum { LC_ODD_CARRY = 0, LC_ODD_ZERO_PAD = 1 } lc_odd_mode;

typedef struct {
    int levels;                  /* number of tree levels */
    size_t m[LC_MAX_LEVELS];     /* matrices entering level l (m[0] = v-1) */
    /* level l's saved tensors, with m = m[l] */
    int64_t *idx1[LC_MAX_LEVELS], *idx2[LC_MAX_LEVELS]; /* (n,t,m/2,c) argmax of each row / column */
    float *e1[LC_MAX_LEVELS], *e2[LC_MAX_LEVELS];       /* (n,t,m/2,c,c) exp(M - b) */
    float *s1[LC_MAX_LEVELS], *s2[LC_MAX_LEVELS];       /* (n,t,m/2,c,c) clamp(e, 1e-10) */
    float *mul[LC_MAX_LEVELS];                          /* (n,t,m/2,c,c) s1 @ s2 */
    float *f;                    /* (n,t,c,c) last level + x[:, :, v-1, None, :] */
    float *g;                    /* (n,t,c) logsumexp(f, -1) */
    float *h;                    /* (n,t,c) log p0 + g */
    int zero_pad;                /* forward ran with LC_ODD_ZERO_PAD: no backward */
} naive_lc_saved;

/* Allocates and returns out (n, t); fills saved. x (n,t,v,c), bulk (1,t,v-1,c,c), p0 (1,t,c). v >= 2. */
float *naive_lc_forward(const lc_dims *d, const float *x, const float *bulk, const float *p0, lc_odd_mode odd,
                        naive_lc_saved *saved);

/* Allocates *dx (n,t,v,c), *dbulk (1,t,v-1,c,c), *dp0 (1,t,c) and frees everything saved (autograd releases a
 * node's saved tensors when the node runs). out (n,t) is the forward's result, dout (n,t). */
void naive_lc_backward(const lc_dims *d, const float *x, const float *bulk, const float *p0, const float *out,
                       naive_lc_saved *saved, const float *dout, float **dx, float **dbulk, float **dp0);

/* Frees what a forward saved when no backward will run (the zero-pad demonstration). */
void naive_lc_release(naive_lc_saved *saved);

/* Exact bytes, inputs and dout included (LC_ODD_CARRY), in closed form (N = n t, Q = 4 N c^2, I the inputs):
 *   forward_live = I + (v-2)(5Q + 16 N c) + Q + 8 N c + 4 N
 *   peak         = I + (v-2)(5Q + 16 N c) + 8 N c + max(5Q, 3Q + 4 N v c + 8 N + 4 t c)     (v >= 3)
 * derived in the comment above its definition and in docs/lesson-2.md §4. The tracker measures the code; the
 * tests assert formula == tracker, and formula == a tensor-by-tensor walk of the dataflow at many sizes
 * (tests/logchain_memory_walk.c). */
lc_memory naive_lc_memory(const lc_dims *d);

#endif
