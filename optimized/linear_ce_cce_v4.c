/* linear_ce_cce_v4.c - cuda-v4's workspace layouts, memory formula and fit check in plain C, so the driver predicts
 * them without a GPU (see linear_ce_cce_v4.h; docs/lesson-5.md derives the formula). */
#include "linear_ce_cce_v4.h"

#include <limits.h>

void cuda_cce4_carve_forward(arena *a, const lce_dims *d, cuda_cce4_forward_workspace *w)
{
    w->part = arena_take(a, size_mul(2 * d->N, (size_t)lce4_tiles((long long)d->V)), DT_F32, "part");
    w->z_target = arena_take(a, d->N, DT_F32, "z_target");
    w->row_loss = arena_take(a, d->N, DT_F32, "row_loss");
    w->scale = arena_take(a, 1, DT_F32, "scale");
}

size_t cuda_cce4_chunks(const lce_dims *d)
{
    size_t cols = (size_t)lce4_chunk_cols((long long)d->V);
    return (d->V + cols - 1) / cols;
}

void cuda_cce4_carve_backward(arena *a, const lce_dims *d, cuda_cce4_backward_workspace *w)
{
    size_t cols = (size_t)lce4_chunk_cols((long long)d->V);
    w->G = arena_take(a, size_mul(d->N, cols), DT_BF16, "G");
    w->skip = arena_take(a, size_mul((size_t)lce4_tiles((long long)d->N), cols / LCE4_TILE), DT_I32, "skip");
    w->dx_acc = cuda_cce4_chunks(d) > 1 ? arena_take(a, lce_x_count(d), DT_F32, "dx_acc") : NULL;
    w->scale = arena_take(a, 1, DT_F32, "scale");
    w->skipped = arena_take(a, 1, DT_I32, "skipped");
}

/* Forward: lse (4N), its workspace, then loss (4); the workspace is freed.
 * Backward: dloss (4) arrives, then dx (2NH), dW (4VH) and the workspace; the workspace and lse are freed last. */
mem_formula cuda_cce4_memory(const lce_dims *d)
{
    arena a;
    cuda_cce4_forward_workspace fw;
    cuda_cce4_backward_workspace bw;
    mem_formula m;
    m.forward_live = size_add(size_add(lce_input_bytes(d), size_mul(4, d->N)), 4);
    size_t fwd = size_add(m.forward_live, ARENA_BYTES(a, cuda_cce4_carve_forward(&a, d, &fw)));
    size_t bwd = size_add(size_add(m.forward_live, 4),
                          size_add(lce_grad_bytes(d), ARENA_BYTES(a, cuda_cce4_carve_backward(&a, d, &bw))));
    m.peak = fwd > bwd ? fwd : bwd;
    m.allocs = 10; /* x W target | lse workspace loss | dloss | dx dW workspace */
    return m;
}

const char *cuda_cce4_unfit(const lce_dims *d)
{
    /* the kernels take int dimensions and step tile by tile: room for one more tile below INT_MAX */
    if (d->N > INT_MAX - LCE4_TILE || d->H > INT_MAX - LCE4_TILE || d->V > INT_MAX - LCE4_TILE)
        return "N, H or V above INT_MAX - 128: the kernels' int arguments and tile loops";
    long long tn = lce4_tiles((long long)d->N), th = lce4_tiles((long long)d->H), tv = lce4_tiles((long long)d->V);
    long long tc = lce4_tiles(lce4_chunk_cols((long long)d->V));
    if (tn > INT_MAX / tv || tn > INT_MAX / th || tc > INT_MAX / th)
        return "more than 2^31 - 1 tiles of [128, 128] in one grid (N/128 x V/128, N/128 x H/128 or 64 x H/128)";
    return NULL;
}
