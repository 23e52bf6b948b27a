/* linear_ce_fused.c - lesson 5's fused chunk loop on the CPU (see linear_ce_fused.h).
 *
 * One tracked workspace, carved once: the chunk's f32 logits (which become its bf16 gradient) and the float32
 * conversion panels of the CPU GEMMs (kernels/linear_ce_gemm.h). Nothing is allocated inside the chunk loop.
 */
#include "linear_ce_fused.h"

#include <limits.h>
#include <string.h>

#include "../kernels/runtime/arena.h"
#include "../kernels/linear_ce_gemm.h"
#include "../kernels/linear_ce_math.h"
#include "../kernels/runtime/track.h"

typedef struct {
    float *logits; /* (chunk, V) f32; after the row pass, row r holds its bf16 gradient in its first half */
    float *xf;     /* (chunk, H) the chunk's x rows in f32 */
    float *wp;     /* (vb, H) a panel of W in f32 */
    float *gp;     /* (chunk, vb) a panel of the gradient in f32 */
    float *dxc;    /* (chunk, H) g . W, accumulated over the panels */
} cpu_workspace;

static void carve(arena *a, const lce_dims *d, cpu_workspace *w)
{
    size_t c = d->chunk, vb = lce_vpanel(d);
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

/* g[v] as bf16 at byte 2v of the row: it lands on float v/2, which the loop has already read (v/2 <= v), so the
 * row is rewritten in place in one forward sweep. memcpy: a byte store, legal over float storage. */
static void put_grad(float *row, size_t v, float g)
{
    bf16 h = bf16_from_f32(g);
    memcpy((char *)row + v * sizeof h, &h, sizeof h);
}

double cpu_lce_rows(float *z, const int32_t *target, size_t rows, size_t V, float scale)
{
    double loss = 0.0;
    for (size_t r = 0; r < rows; r++) {
        float *zr = z + r * V; /* (V,) f32 logits, becoming (V,) bf16 gradient */
        int32_t t = target[r];
        if (t == LCE_IGNORE) {
            memset(zr, 0, V * sizeof(bf16));
            continue;
        }
        lce_lse_acc acc = lce_lse_init();
        for (size_t v = 0; v < V; v++) acc = lce_lse_add(acc, zr[v]);
        float lse = lce_lse_finish(acc);
        loss += lce_row_loss(lse, zr[t]);
        for (size_t v = 0; v < V; v++) {
            float zv = zr[v];
            put_grad(zr, v, lce_grad(zv, lse, (size_t)t == v, scale));
        }
    }
    return loss;
}

/* One chunk: logits, the row pass, then per W panel the dx share and the in-place dW accumulation. */
static double cpu_chunk(const lce_dims *d, size_t k, const bf16 *x, const bf16 *W, const int32_t *target,
                        float scale, const cpu_workspace *w, fused_lce_saved *sv)
{
    size_t start = k * d->chunk, rows = lce_chunk_rows(d, k), H = d->H, V = d->V, vb = lce_vpanel(d);
    lce_bf16_to_f32(w->xf, H, x + start * H, H, rows, H);
    for (size_t v0 = 0; v0 < V; v0 += vb) { /* logits (rows, V) f32, row stride V */
        size_t n = V - v0 < vb ? V - v0 : vb;
        lce_logits_panel(w->xf, rows, H, W, v0, n, w->wp, w->logits + v0, V);
    }
    double loss = cpu_lce_rows(w->logits, target + start, rows, V, scale);
    const bf16 *g = (const bf16 *)w->logits; /* (rows, V) bf16, row stride 2V */
    for (size_t v0 = 0; v0 < V; v0 += vb) {
        size_t n = V - v0 < vb ? V - v0 : vb;
        lce_grad_panel(g, 2 * V, rows, W, H, v0, n, w->gp, w->wp);
        lce_dx_panel(w->gp, w->wp, rows, n, H, v0 ? 1.0f : 0.0f, w->dxc);
        lce_dw_panel(w->gp, w->xf, rows, n, H, 1.0f, sv->grad_weight + v0 * H); /* beta = 1: in place */
    }
    lce_f32_to_bf16(sv->grad_input + start * H, H, w->dxc, H, rows, H);
    return loss;
}

float *cpu_lce_forward(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target,
                       fused_lce_saved *saved)
{
    saved->grad_weight = host_alloc_array(lce_w_count(d), DT_F32, "grad_weight [V,H] f32 (saved)");
    saved->grad_input = host_alloc_array(lce_x_count(d), DT_BF16, "grad_input [N,H] bf16 (saved)");
    memset(saved->grad_weight, 0, lce_w_count(d) * sizeof(float)); /* the first chunk accumulates onto zeros */
    arena a;
    cpu_workspace w;
    size_t bytes = cpu_lce_workspace_bytes(d);
    arena_init(&a, host_alloc(bytes, "workspace: logits [c,V] f32 + panels"), bytes);
    carve(&a, d, &w);
    float scale = lce_mean_scale(target, d->N);
    double sum = 0.0;
    for (size_t k = 0; k < lce_chunks(d); k++) sum += cpu_chunk(d, k, x, W, target, scale, &w, saved);
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

/* --- the CUDA version's workspace and formula (plain C: the driver predicts without a GPU) ------------------ */

void cuda_lce_carve(arena *a, const lce_dims *d, cuda_lce_workspace *w)
{
    w->logits = arena_take(a, size_mul(d->chunk, d->V), DT_F32, "logits");
    w->row_loss = arena_take(a, d->N, DT_F32, "row_loss");
    w->scale = arena_take(a, 1, DT_F32, "scale");
}

size_t cuda_lce_workspace_bytes(const lce_dims *d)
{
    arena a;
    cuda_lce_workspace w;
    return ARENA_BYTES(a, cuda_lce_carve(&a, d, &w));
}

mem_formula cuda_lce_memory(const lce_dims *d)
{
    size_t inputs = lce_input_bytes(d), grads = lce_grad_bytes(d);
    size_t base = size_add(size_add(inputs, grads), CUBLAS_WORKSPACE_BYTES_C);
    mem_formula m;
    m.forward_live = size_add(base, 4);                                      /* + loss */
    m.peak = size_add(size_add(base, cuda_lce_workspace_bytes(d)), 4);       /* loss written from the workspace */
    if (size_add(m.forward_live, 4) > m.peak) m.peak = size_add(m.forward_live, 4); /* + dloss */
    /* x W target | cuBLAS workspace | grad_weight grad_input workspace | loss | dloss */
    m.allocs = 9;
    return m;
}

const char *cuda_lce_unfit(const lce_dims *d)
{
    if (size_mul(2, d->V) > INT_MAX || d->H > INT_MAX || d->chunk > INT_MAX)
        return "2V, H or the chunk exceeds cuBLAS's int arguments (and the row kernel's grid)";
    return NULL;
}
