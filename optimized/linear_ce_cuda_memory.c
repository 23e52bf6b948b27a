/* linear_ce_cuda_memory.c - lesson 5's CUDA versions' workspace layouts, memory formulas and size checks in
 * plain C (linear_ce_cuda.h; docs/lesson-5.md derives each formula). The .cu files carve their device memory
 * with these same functions, so the formula and the layout cannot disagree. */
#include "linear_ce_cuda.h"

#include <limits.h>

#include "../kernels/linear_ce_math.h"

/* ---- cuda-v4 ---------------------------------------------------------------------------------------------
 */
void lce4_carve_forward(arena *a, const lce_dims *d, lce4_forward_workspace *w)
{
    w->part = arena_take(a, size_mul(2 * d->N, (size_t)lce4_tiles((long long)d->V)), DT_F32, "part");
    w->z_target = arena_take(a, d->N, DT_F32, "z_target");
    w->row_loss = arena_take(a, d->N, DT_F32, "row_loss");
    w->scale = arena_take(a, 1, DT_F32, "scale");
}

size_t lce4_chunks(const lce_dims *d)
{
    size_t cols = (size_t)lce4_chunk_cols((long long)d->V);
    return (d->V + cols - 1) / cols;
}

void lce4_carve_backward(arena *a, const lce_dims *d, lce4_backward_workspace *w)
{
    size_t cols = (size_t)lce4_chunk_cols((long long)d->V), tn = (size_t)lce4_tiles((long long)d->N);
    size_t tc = cols / LCE4_TILE_M;
    w->G = arena_take(a, size_mul(d->N, cols), DT_BF16, "G");
    w->skip = arena_take(a, size_mul(tn, tc), DT_I32, "skip");
    w->dx_tiles = arena_take(a, size_mul(tn, tc), DT_I32, "dx_tiles");
    w->dx_count = arena_take(a, tn, DT_I32, "dx_count");
    w->dw_tiles = arena_take(a, size_mul(tc, tn), DT_I32, "dw_tiles");
    w->dw_count = arena_take(a, tc, DT_I32, "dw_count");
    w->dx_acc = lce4_chunks(d) > 1 ? arena_take(a, lce_x_count(d), DT_F32, "dx_acc") : NULL;
    w->scale = arena_take(a, 1, DT_F32, "scale");
    w->skipped = arena_take(a, 1, DT_I32, "skipped");
}

/* Forward: lse (4N), its workspace, then loss (4); the workspace is freed.
 * Backward: dloss (4), then dx (2NH), dW (4VH) and the workspace; the workspace and lse are freed last. */
mem_formula lce4_memory(const lce_dims *d)
{
    arena a;
    lce4_forward_workspace fw;
    lce4_backward_workspace bw;
    mem_formula m;
    m.forward_live = size_add(size_add(lce_input_bytes(d), size_mul(4, d->N)), 4);
    size_t fwd = size_add(m.forward_live, ARENA_BYTES(a, lce4_carve_forward(&a, d, &fw)));
    size_t bwd = size_add(size_add(m.forward_live, 4),
                          size_add(lce_grad_bytes(d), ARENA_BYTES(a, lce4_carve_backward(&a, d, &bw))));
    m.peak = fwd > bwd ? fwd : bwd;
    m.allocs = 10; /* x W target | lse workspace loss | dloss | dx dW workspace */
    return m;
}

const char *lce4_unfit(const lce_dims *d)
{
    /* the kernels take int dimensions and step a tile at a time: room for one more tile below INT_MAX */
    if (d->N > INT_MAX - LCE4_TILE_N || d->H > INT_MAX - LCE4_TILE_N || d->V > INT_MAX - LCE4_TILE_N)
        return "N, H or V above INT_MAX - 256: the kernels' int arguments and tile loops";
    long long tn = lce4_tiles((long long)d->N), th = lce4_tiles_n((long long)d->H);
    long long tv = lce4_tiles_n((long long)d->V), tc = lce4_tiles(lce4_chunk_cols((long long)d->V));
    if (tn > INT_MAX / tv || tn > INT_MAX / th || tc > INT_MAX / th)
        return "more than 2^31 - 1 tiles of [128, 256] in a grid (N/128 x V/256, N/128 x H/256, 64 x H/256)";
    return NULL;
}
