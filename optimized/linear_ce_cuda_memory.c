/* linear_ce_cuda_memory.c - lesson 5's CUDA versions' workspace layouts, memory formulas and size checks in
 * plain C (linear_ce.h; docs/lesson-5.md derives each formula). The .cu files carve their device memory
 * with these same functions, so the formula and the layout cannot disagree. */
#include "../kernels/linear_ce.h"

#include <limits.h>

/* ---- cuda-v1 ---------------------------------------------------------------------------------------------
 */
void lce1_carve(arena *a, const lce_dims *d, lce1_workspace *w)
{
    w->logits = arena_take(a, size_mul(d->chunk, d->V), DT_F32, "logits");
    w->row_loss = arena_take(a, d->N, DT_F32, "row_loss");
    w->scale = arena_take(a, 1, DT_F32, "scale");
}

size_t lce1_workspace_bytes(const lce_dims *d)
{
    arena a;
    lce1_workspace w;
    return ARENA_BYTES(a, lce1_carve(&a, d, &w));
}

lce_dims lce_cuda_dims(const lce_dims *d)
{
    lce_dims c = *d;
    if (d->cuda_chunk) c.chunk = d->cuda_chunk;
    return c;
}

mem_formula lce1_memory(const lce_dims *dims)
{
    lce_dims dc = lce_cuda_dims(dims);
    const lce_dims *d = &dc;
    size_t inputs = lce_input_bytes(d), grads = lce_grad_bytes(d);
    size_t base = size_add(size_add(inputs, grads), CUBLAS_WORKSPACE_BYTES_C);
    mem_formula m;
    m.forward_live = size_add(base, 4);                                      /* + loss */
    m.peak = size_add(size_add(base, lce1_workspace_bytes(d)), 4);       /* loss written from the workspace */
    if (size_add(m.forward_live, 4) > m.peak) m.peak = size_add(m.forward_live, 4); /* + dloss */
    /* x W target | cuBLAS workspace | grad_weight grad_input workspace | loss | dloss */
    m.allocs = 9;
    return m;
}

const char *lce1_unfit(const lce_dims *dims)
{
    lce_dims dc = lce_cuda_dims(dims);
    const lce_dims *d = &dc;
    if (size_mul(2, d->V) > INT_MAX || d->H > INT_MAX || d->chunk > INT_MAX)
        return "2V, H or the chunk exceeds cuBLAS's int arguments (and the row kernel's grid)";
    return NULL;
}

/* v1's chunk: the traffic model (linear_ce.h) */

static double roofline_ms(double flops, double bytes)
{
    double math = flops / LCE_MODEL_FLOPS, mem = bytes / LCE_MODEL_BYTES;
    return 1e3 * (math > mem ? math : mem);
}

/* One chunk of r rows: adds its time, traffic and dW read-modify-write to *c. */
static void model_one_chunk(double r, double H, double V, lce_chunk_cost *c)
{
    double gemm = 2.0 * r * V * H, rmw = 2.0 * V * H * 4.0;
    double logits = 2 * V * H + 2 * r * H + 4 * r * V, rows = 6 * r * V;
    double dx = 2 * r * V + 2 * V * H + 2 * r * H, dw = 2 * r * V + 2 * r * H + rmw;
    c->ms += roofline_ms(gemm, logits) + roofline_ms(0, rows) + roofline_ms(gemm, dx) + roofline_ms(gemm, dw);
    c->bytes += logits + rows + dx + dw;
    c->dw_rmw_bytes += rmw;
}

lce_chunk_cost lce_chunk_model(size_t N, size_t H, size_t V, size_t chunk)
{
    lce_chunk_cost c = {0, 0, 0, 4.0 * (double)chunk * (double)V};
    size_t full = N / chunk, rest = N % chunk;
    lce_chunk_cost one = {0, 0, 0, 0};
    model_one_chunk((double)chunk, (double)H, (double)V, &one);
    c.ms = (double)full * one.ms, c.bytes = (double)full * one.bytes,
    c.dw_rmw_bytes = (double)full * one.dw_rmw_bytes;
    if (rest) model_one_chunk((double)rest, (double)H, (double)V, &c);
    return c;
}

size_t lce_model_chunk(size_t N, size_t H, size_t V)
{
    double best = lce_chunk_model(N, H, V, N).ms * (1.0 + LCE_CHUNK_SLACK);
    for (size_t c = 1; c < N; c *= 2)
        if (lce_chunk_model(N, H, V, c).ms <= best) return c;
    return N;
}

void lce_print_chunk_choice(const lce_dims *d, FILE *f)
{
    lce_dims dc = lce_cuda_dims(d);
    lce_chunk_cost c = lce_chunk_model(d->N, d->H, d->V, dc.chunk),
                   one = lce_chunk_model(d->N, d->H, d->V, d->N);
    size_t seed_rows =
        lce_default_chunk(d->N, d->H, d->V) < d->N ? lce_default_chunk(d->N, d->H, d->V) : d->N;
    lce_chunk_cost seed = lce_chunk_model(d->N, d->H, d->V, seed_rows);
    if (dc.chunk == lce_model_chunk(d->N, d->H, d->V))
        fprintf(f,
                "cuda: chunk = %zu rows, the smallest within %.0f%% of the modeled time of one chunk of all "
                "N rows\n",
                dc.chunk, 100.0 * LCE_CHUNK_SLACK);
    else
        fprintf(f, "cuda: chunk = %zu rows (--chunk; the traffic model would take %zu)\n", dc.chunk,
                lce_model_chunk(d->N, d->H, d->V));
    fprintf(
        f,
        "  (modeled on an H100 as a roofline of each GEMM and the row pass: %.3g ms; one chunk %.3g ms; the\n"
        "  seed's %zu rows %.3g ms). dW's read-modify-write 2*V*H*4 B per chunk is %.1f%% of the modeled\n"
        "  traffic at this size; the logits buffer chunk*V*4 = %.1f MiB\n",
        c.ms, one.ms, seed_rows, seed.ms, 100.0 * c.dw_rmw_bytes / c.bytes, c.logits_bytes / 1048576.0);
}

/* ---- cuda-v2 ---------------------------------------------------------------------------------------------
 */
void lce2_carve_forward(arena *a, const lce_dims *d, lce2_forward_workspace *w)
{
    w->row_loss = arena_take(a, d->N, DT_F32, "row_loss");
    w->scale = arena_take(a, 1, DT_F32, "scale");
}

/* Forward: lse (4N), the workspace, then loss (4) while the workspace is alive; the workspace is freed.
 * Backward: dloss (4), then dx (2NH), dW (4VH) and the recounted scale (4); lse and scale are freed last. */
mem_formula lce2_memory(const lce_dims *d)
{
    arena a;
    lce2_forward_workspace w;
    mem_formula m;
    m.forward_live = size_add(size_add(lce_input_bytes(d), size_mul(4, d->N)), 4); /* + loss */
    size_t fwd = size_add(m.forward_live, ARENA_BYTES(a, lce2_carve_forward(&a, d, &w)));
    size_t bwd = size_add(size_add(m.forward_live, 4), size_add(lce_grad_bytes(d), 4)); /* + dloss, + scale */
    m.peak = fwd > bwd ? fwd : bwd;
    m.allocs = 10; /* x W target | lse workspace loss | dloss | dx dW scale */
    return m;
}

const char *lce2_unfit(const lce_dims *d)
{
    if (d->N > INT_MAX || d->H > INT_MAX) return "N or H exceeds the kernels' int arguments (and the grid)";
    if (size_add(LCE2_DX_SMEM_BYTES(d->H), LCE2_THREADS * sizeof(float)) > LCE2_SMEM_LIMIT)
        return "H above 12160: the dx kernel's fp32 accumulator [H] and its gradient block exceed 48 KiB of "
               "shared memory";
    return NULL;
}

/* ---- cuda-v3 ---------------------------------------------------------------------------------------------
 */
void lce3_carve_backward(arena *a, const lce_dims *d, lce3_backward_workspace *w)
{
    w->dx_acc = arena_take(a, lce_x_count(d), DT_F32, "dx_acc");
    w->scale = arena_take(a, 1, DT_F32, "scale");
    w->skipped = arena_take(a, 2, DT_I32, "skipped");
}

/* Forward is v2's: lse (4N), its workspace, then loss (4); the workspace is freed.
 * Backward: dloss (4), then dx (2NH), dW (4VH) and the workspace (dx_acc 4NH, scale, counters); the
 * workspace and lse are freed last. */
mem_formula lce3_memory(const lce_dims *d)
{
    arena a;
    lce2_forward_workspace fw;
    lce3_backward_workspace bw;
    mem_formula m;
    m.forward_live = size_add(size_add(lce_input_bytes(d), size_mul(4, d->N)), 4); /* + loss */
    size_t fwd = size_add(m.forward_live, ARENA_BYTES(a, lce2_carve_forward(&a, d, &fw)));
    size_t bwd = size_add(size_add(m.forward_live, 4),
                          size_add(lce_grad_bytes(d), ARENA_BYTES(a, lce3_carve_backward(&a, d, &bw))));
    m.peak = fwd > bwd ? fwd : bwd;
    m.allocs = 10; /* x W target | lse workspace loss | dloss | dx dW workspace */
    return m;
}

const char *lce3_unfit(const lce_dims *d)
{
    /* the tile loops step v0 and n0 past the last tile: room for one more tile below INT_MAX */
    if (d->N > INT_MAX - LCE3_TILE_V || d->H > INT_MAX - LCE3_TILE_V || d->V > INT_MAX - LCE3_TILE_V)
        return "N, H or V above INT_MAX - 64: the kernels' int indices and tile loops";
    return NULL;
}

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

/* ---- cuda-v5: v4's workspace and formula (lce4_memory); the TMA's maps need rows of whole 16 bytes -------
 */
const char *lce5_unfit(const lce_dims *d)
{
    const char *why = lce4_unfit(d);
    if (why) return why;
    if (d->H % 8)
        return "H not a multiple of 8: cuda-v5's TMA copies need rows of whole 16 bytes (cuda-v4 runs any H)";
    return NULL;
}
