/* linear_ce_cce_v5.c - cuda-v5's backward workspace, memory formula and fit check in plain C, so the driver
 * predicts them without a GPU (see linear_ce_cce_v5.h; docs/lesson-5.md derives the formula). Forward's
 * workspace is v4's. */
#include "linear_ce_cce_v5.h"

#include <limits.h>

long long cuda_cce5_ldn(const lce_dims *d) { return ((long long)d->N + 7) / 8 * 8; }

size_t cuda_cce5_chunks(const lce_dims *d)
{
    size_t cols = (size_t)lce5_chunk_cols((long long)d->V);
    return (d->V + cols - 1) / cols;
}

void cuda_cce5_carve_backward(arena *a, const lce_dims *d, cuda_cce5_backward_workspace *w)
{
    size_t cols = (size_t)lce5_chunk_cols((long long)d->V), ldn = (size_t)cuda_cce5_ldn(d);
    w->G = arena_take(a, size_mul(d->N, cols), DT_BF16, "G");
    w->Gt = arena_take(a, size_mul(cols, ldn), DT_BF16, "Gt");
    w->Wt = arena_take(a, size_mul(d->H, cols), DT_BF16, "Wt");
    w->xt = arena_take(a, size_mul(d->H, ldn), DT_BF16, "xt");
    w->skip = arena_take(a, size_mul((size_t)lce4_tiles((long long)d->N), cols / LCE4_TILE), DT_I32, "skip");
    w->dx_acc = cuda_cce5_chunks(d) > 1 ? arena_take(a, lce_x_count(d), DT_F32, "dx_acc") : NULL;
    w->scale = arena_take(a, 1, DT_F32, "scale");
    w->skipped = arena_take(a, 1, DT_I32, "skipped");
}

/* v4's order of allocations: forward lse (4N), v4's forward workspace, loss (4), the workspace freed; backward
 * dloss (4), dx (2NH), dW (4VH) and this workspace, freed last with lse. */
mem_formula cuda_cce5_memory(const lce_dims *d)
{
    arena a;
    cuda_cce4_forward_workspace fw;
    cuda_cce5_backward_workspace bw;
    mem_formula m;
    m.forward_live = size_add(size_add(lce_input_bytes(d), size_mul(4, d->N)), 4);
    size_t fwd = size_add(m.forward_live, ARENA_BYTES(a, cuda_cce4_carve_forward(&a, d, &fw)));
    size_t bwd = size_add(size_add(m.forward_live, 4),
                          size_add(lce_grad_bytes(d), ARENA_BYTES(a, cuda_cce5_carve_backward(&a, d, &bw))));
    m.peak = fwd > bwd ? fwd : bwd;
    m.allocs = 10; /* x W target | lse workspace loss | dloss | dx dW workspace */
    return m;
}

const char *cuda_cce5_unfit(const lce_dims *d)
{
    const char *why = cuda_cce4_unfit(d);
    if (why) return why;
    /* the transposes' grids: 32 x 32 tiles of x (N x H) and of a chunk of W (8192 x H) */
    long long tn = ((long long)d->N + 31) / 32, th = ((long long)d->H + 31) / 32;
    if (tn > INT_MAX / th || lce5_chunk_cols((long long)d->V) / 32 > INT_MAX / th || lce4_tiles((long long)d->N) >
        INT_MAX / lce5_tiles_n((long long)d->V))
        return "more than 2^31 - 1 tiles of [32, 32] in a transpose's grid (N/32 x H/32)";
    if (cuda_cce5_ldn(d) > INT_MAX) return "N rounded up to 8 above INT_MAX: G^T's row stride";
    return NULL;
}
