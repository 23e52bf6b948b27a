/* linear_ce_cce_v3.c - cuda-v3's backward workspace layout, memory formula and fit check in plain C, so the driver
 * predicts them without a GPU (see linear_ce_cce_v3.h; docs/lesson-5.md derives the formula). */
#include "linear_ce_cce_v3.h"

#include <limits.h>

#include "../kernels/linear_ce_math.h"

void cuda_cce3_carve(arena *a, const lce_dims *d, cuda_cce3_workspace *w)
{
    w->dx_acc = arena_take(a, lce_x_count(d), DT_F32, "dx_acc");
    w->scale = arena_take(a, 1, DT_F32, "scale");
    w->skipped = arena_take(a, 2, DT_I32, "skipped");
}

size_t cuda_cce3_workspace_bytes(const lce_dims *d)
{
    arena a;
    cuda_cce3_workspace w;
    arena_plan(&a);
    cuda_cce3_carve(&a, d, &w);
    return a.used;
}

/* Forward is v2's: lse (4N), its workspace, then loss (4); the workspace is freed.
 * Backward: dloss (4) arrives, then dx (2NH), dW (4VH) and the workspace (dx_acc 4NH, scale, counters); the
 * workspace and lse are freed last. */
mem_formula cuda_cce3_memory(const lce_dims *d)
{
    mem_formula v2 = cuda_cce_memory(d), m;
    m.forward_live = v2.forward_live;
    size_t fwd = size_add(m.forward_live, cuda_cce_workspace_bytes(d));
    size_t bwd = size_add(size_add(m.forward_live, 4), size_add(lce_grad_bytes(d), cuda_cce3_workspace_bytes(d)));
    m.peak = fwd > bwd ? fwd : bwd;
    m.allocs = 10; /* x W target | lse workspace loss | dloss | dx dW workspace */
    return m;
}

const char *cuda_cce3_unfit(const lce_dims *d)
{
    /* the tile loops step v0 and n0 past the last tile: room for one more tile below INT_MAX */
    if (d->N > INT_MAX - LCE3_TILE_V || d->H > INT_MAX - LCE3_TILE_V || d->V > INT_MAX - LCE3_TILE_V)
        return "N, H or V above INT_MAX - 64: the kernels' int indices and tile loops";
    return NULL;
}
