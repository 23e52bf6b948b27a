/* linear_ce_cce.c - cuda-v2's workspace layout, memory formula and fit check in plain C, so the driver predicts
 * them without a GPU (see linear_ce_cce.h; docs/lesson-5.md derives the formula). */
#include "linear_ce_cce.h"

#include <limits.h>

#include "../kernels/linear_ce_math.h"

void cuda_cce_carve(arena *a, const lce_dims *d, cuda_cce_workspace *w)
{
    w->row_loss = arena_take(a, d->N, DT_F32, "row_loss");
    w->scale = arena_take(a, 1, DT_F32, "scale");
}

size_t cuda_cce_workspace_bytes(const lce_dims *d)
{
    arena a;
    cuda_cce_workspace w;
    return ARENA_BYTES(a, cuda_cce_carve(&a, d, &w));
}

/* Forward: lse (4N), the workspace, then loss (4) while the workspace is alive; the workspace is freed.
 * Backward: dloss (4) arrives, then dx (2NH), dW (4VH) and the recounted scale (4); lse and scale are freed last. */
mem_formula cuda_cce_memory(const lce_dims *d)
{
    size_t inputs = lce_input_bytes(d), grads = lce_grad_bytes(d);
    size_t lse = size_mul(4, d->N);
    mem_formula m;
    m.forward_live = size_add(size_add(inputs, lse), 4);                           /* + loss */
    size_t fwd = size_add(m.forward_live, cuda_cce_workspace_bytes(d));
    size_t bwd = size_add(size_add(m.forward_live, 4), size_add(grads, 4));         /* + dloss, + scale */
    m.peak = fwd > bwd ? fwd : bwd;
    m.allocs = 10; /* x W target | lse workspace loss | dloss | dx dW scale */
    return m;
}

const char *cuda_cce_unfit(const lce_dims *d)
{
    if (d->N > INT_MAX || d->H > INT_MAX) return "N or H exceeds the kernels' int arguments (and the grid)";
    if (size_add(LCE2_DX_SMEM_BYTES(d->H), LCE2_THREADS * sizeof(float)) > LCE2_SMEM_LIMIT)
        return "H above 12160: the dx kernel's fp32 accumulator [H] and its gradient block exceed 48 KiB of shared "
               "memory";
    return NULL;
}
