/* linear_ce_fused.c - lesson 5's fused chunk loop on the CPU (see linear_ce_fused.h).
 *
 * One tracked workspace, carved once: one block's f32 logits (which become its bf16 gradient) and the float32
 * conversion panels of the CPU GEMMs (optimized/linear_ce_gemm.h). Nothing is allocated inside the block
 * loop. A block is k of the seed's chunks, k = ceil(LCE_CPU_GEMM_ROWS / chunk) (linear_ce_fused.h).
 */
#include "linear_ce_fused.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#include "arena.h"
#include "linear_ce_gemm.h"
#include "../kernels/linear_ce_math.h"
#include "track.h"

typedef struct {
    float *logits; /* (block, V) f32; after the row pass, row r holds its bf16 gradient in its first half */
    float *xf;     /* (block, H) the block's x rows in f32 */
    float *wp;     /* (vb, H) a panel of W in f32 */
    float *gp;     /* (block, vb) a panel of the gradient in f32 */
    float *dxc;    /* (block, H) g . W, accumulated over the panels */
} cpu_workspace;

size_t cpu_lce_block_rows(const lce_dims *d)
{
    size_t k = (LCE_CPU_GEMM_ROWS + d->chunk - 1) / d->chunk, rows = size_mul(k, d->chunk);
    return rows < d->N ? rows : d->N;
}

static void carve(arena *a, const lce_dims *d, cpu_workspace *w)
{
    size_t c = cpu_lce_block_rows(d), vb = lce_vpanel(d);
    w->logits = arena_take(a, size_mul(c, d->V), DT_F32, "logits");
    w->xf = arena_take(a, c * d->H, DT_F32, "xf");
    w->wp = arena_take(a, vb * d->H, DT_F32, "wp");
    w->gp = arena_take(a, c * vb, DT_F32, "gp");
    w->dxc = arena_take(a, c * d->H, DT_F32, "dxc");
}

size_t cpu_lce_workspace_bytes(const lce_dims *d)
{
    arena a;
    cpu_workspace w;
    return ARENA_BYTES(a, carve(&a, d, &w));
}

/* One block of rows [start, start + rows): logits, the row pass, then per W panel the dx share and the
 * in-place dW accumulation. */
static double cpu_block(const lce_dims *d, size_t start, size_t rows, const bf16 *x, const bf16 *W,
                        const int32_t *target, float scale, const cpu_workspace *w, fused_lce_saved *sv)
{
    size_t H = d->H, V = d->V, vb = lce_vpanel(d);
    lce_operands o = {
        .x = x + start * H, .xf = w->xf, .W = W, .gp = w->gp, .wp = w->wp, .rows = rows, .H = H};
    lce_x_block(&o);
    for (size_t v0 = 0; v0 < V; v0 += vb) { /* logits (rows, V) f32, row stride V */
        size_t n = V - v0 < vb ? V - v0 : vb;
        lce_logits_panel(&o, v0, n, w->logits + v0, V);
    }
    double loss = cpu_lce_rows(w->logits, target + start, rows, V, scale);
    o.g = (const bf16 *)w->logits; /* (rows, V) bf16, row stride 2V */
    o.ldg = 2 * V;
    for (size_t v0 = 0; v0 < V; v0 += vb) {
        size_t n = V - v0 < vb ? V - v0 : vb;
        lce_grad_panel(&o, v0, n, 1);
        lce_dx_panel(&o, v0, n, v0 ? 1.0f : 0.0f, w->dxc);
        lce_dw_panel(&o, v0, n, 1.0f, sv->grad_weight + v0 * H); /* beta = 1: in place */
    }
    lce_f32_to_bf16(sv->grad_input + start * H, H, w->dxc, H, rows, H);
    return loss;
}

float *cpu_lce_forward(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target,
                       fused_lce_saved *saved)
{
    saved->grad_weight = host_alloc_array(lce_w_count(d), DT_F32, "grad_weight [V,H] f32 (saved)");
    saved->grad_input = host_alloc_array(lce_x_count(d), DT_BF16, "grad_input [N,H] bf16 (saved)");
    /* the first block accumulates onto zeros */
    memset(saved->grad_weight, 0, lce_w_count(d) * sizeof(float));
    arena a;
    cpu_workspace w;
    size_t bytes = cpu_lce_workspace_bytes(d);
    arena_init(&a, host_alloc(bytes, "workspace: logits [block,V] f32 + panels"), bytes);
    carve(&a, d, &w);
    float scale = lce_mean_scale(target, d->N);
    double sum = 0.0;
    size_t B = cpu_lce_block_rows(d);
    for (size_t start = 0; start < d->N; start += B)
        sum += cpu_block(d, start, d->N - start < B ? d->N - start : B, x, W, target, scale, &w, saved);
    host_free(a.base);
    float *loss = host_alloc_array(1, DT_F32, "loss [1] f32");
    loss[0] = (float)(sum * scale);
    return loss;
}

void cpu_lce_backward(const lce_dims *d, fused_lce_saved *saved, const float *dloss, bf16 **dx, float **dW)
{
    lce_scale_saved_gradients(d, dloss[0], &saved->grad_input, &saved->grad_weight, dx, dW);
}

mem_formula cpu_lce_memory(const lce_dims *d)
{
    size_t inputs = lce_input_bytes(d), grads = lce_grad_bytes(d);
    mem_formula m;
    size_t loop = size_add(size_add(inputs, grads), cpu_lce_workspace_bytes(d)); /* workspace, then loss */
    m.forward_live = size_add(size_add(inputs, grads), 4);
    m.peak = size_add(m.forward_live, 4) > loop ? size_add(m.forward_live, 4) : loop;
    m.allocs = 8; /* x W target | grad_weight grad_input workspace | loss | dloss */
    return m;
}
