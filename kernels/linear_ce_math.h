/* linear_ce_math.h - the arithmetic of one row of cross-entropy, shared by the CPU code and the CUDA kernels (HD).
 *
 * Row n has logits z[0..V-1] and a target t. With lse = log sum_v exp(z[v]):
 *     loss_n   = lse - z[t]
 *     g[v]     = (exp(z[v] - lse) - [v == t]) * scale,   scale = 1 / n_valid  (the mean's 1/n)
 * and an ignored row (t == LCE_IGNORE) has loss 0 and g = 0.
 *
 * lse is taken in one read of the row with an online logsumexp: a running maximum m and the sum s of
 * exp(z - m), rescaled by exp(m_old - m_new) whenever the maximum grows. Partial (m, s) pairs from different
 * threads merge the same way. The second read of the row writes g; nothing else is stored per row.
 */
#ifndef KERNELS_LINEAR_CE_MATH_H
#define KERNELS_LINEAR_CE_MATH_H

#include <math.h>
#include "runtime/bf16.h"
#include "runtime/dry_skip.h"
#include "runtime/hd.h"

typedef struct {
    float m; /* running maximum; -inf before the first element */
    float s; /* sum of exp(z - m) */
} lce_lse_acc;

HD lce_lse_acc lce_lse_init(void)
{
    lce_lse_acc a;
    a.m = -INFINITY;
    a.s = 0.0f;
    return a;
}

/* exp(m_old - m_new), 0 when nothing was summed under m_old yet */
HD float lce_rescale(float m_old, float m_new) { return m_old == -INFINITY ? 0.0f : expf(m_old - m_new); }

HD lce_lse_acc lce_lse_add(lce_lse_acc a, float z)
{
    float mn = fmaxf(a.m, z);
    a.s = a.s * lce_rescale(a.m, mn) + expf(z - mn);
    a.m = mn;
    return a;
}

HD lce_lse_acc lce_lse_merge(lce_lse_acc a, lce_lse_acc b)
{
    float mn = fmaxf(a.m, b.m);
    if (mn == -INFINITY) return a; /* both empty */
    a.s = a.s * lce_rescale(a.m, mn) + b.s * lce_rescale(b.m, mn);
    a.m = mn;
    return a;
}

HD float lce_lse_finish(lce_lse_acc a) { return a.m + logf(a.s); }

/* loss of one counted row: lse - z[target] */
HD float lce_row_loss(float lse, float z_target) { return lse - z_target; }

/* softmax minus the one-hot target, before any scale: the quantity Cut Cross-Entropy's filter looks at */
HD float lce_softmax_minus_onehot(float z, float lse, int is_target)
{
    return expf(z - lse) - (is_target ? 1.0f : 0.0f);
}

/* g[v] for a counted row: softmax minus the one-hot target, times the mean's scale */
HD float lce_grad(float z, float lse, int is_target, float scale)
{
    return lce_softmax_minus_onehot(z, lse, is_target) * scale;
}

/* Cut Cross-Entropy's gradient filter (cuda-v3 --filter): a tile's update of dx and dW is skipped when every
 * |softmax - onehot| of it is below LCE_FILTER_EPS. CCE's default ("auto") is the eps of the gradient's dtype over
 * 32: bf16's eps is 2^-7, so 2^-12, the unscaled value compared before dloss and 1/n_valid multiply it. Strictly
 * below: a NaN is never negligible, so a NaN row is never filtered away. */
#define LCE_FILTER_EPS (1.0f / 4096.0f)
HD int lce_grad_negligible(float softmax_minus_onehot) { return fabsf(softmax_minus_onehot) < LCE_FILTER_EPS; }

/* one logit z = a . b of two bf16 rows of length H, products and sum in fp32 (in index order: deterministic, the
 * same in forward and in backward's recomputation) */
HD float lce_dot_bf16(const bf16 *a, const bf16 *b, int H)
{
    float s = 0.0f;
    for (int h = 0; h < H; h++) {
        EMU_DRY_SKIP(h, 0, H, 1); /* H terms per logit: a dry run runs the boundary ones (dry_skip.h) */
        s += bf16_to_f32(a[h]) * bf16_to_f32(b[h]);
    }
    return s;
}

#endif
