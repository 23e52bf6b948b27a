/* linear_ce_chunked.c - lesson 5, naive: the seed's chunk loop with its temporaries (declared, with the
 * seed's code line by line, in kernels/linear_ce.h).
 *
 * Every tensor the PyTorch code creates is a tracked allocation here, created and freed where Python creates
 * and drops it. The float32 conversion scratch of the CPU GEMMs (optimized/linear_ce_fused.c) is one
 * chunk-sized block that a GPU would not need; its bytes are in the formula and labelled as such.
 */
#include "../kernels/linear_ce.h"

#include <string.h>

#include "arena.h"
#include "track.h"

typedef struct {
    float *xf;  /* (chunk, H) the chunk's x rows in f32 */
    float *wp;  /* (vb, H) a panel of W in f32 */
    float *gp;  /* (chunk, vb) a panel of the chunk's gradient in f32 */
    float *op;  /* (chunk, vb) a panel of logits before rounding to bf16 */
    float *dxc; /* (chunk, H) grad_logits @ W before rounding to bf16 */
    float *ep;  /* (vb, H) a panel of grad_logits^T @ x before rounding to bf16 */
} naive_scratch;

static void carve(arena *a, const lce_dims *d, naive_scratch *s)
{
    size_t c = d->chunk, vb = lce_vpanel(d);
    s->xf = arena_take(a, c * d->H, DT_F32, "xf");
    s->wp = arena_take(a, vb * d->H, DT_F32, "wp");
    s->gp = arena_take(a, c * vb, DT_F32, "gp");
    s->op = arena_take(a, c * vb, DT_F32, "op");
    s->dxc = arena_take(a, c * d->H, DT_F32, "dxc");
    s->ep = arena_take(a, vb * d->H, DT_F32, "ep");
}

size_t naive_lce_scratch_bytes(const lce_dims *d)
{
    arena a;
    naive_scratch s;
    return ARENA_BYTES(a, carve(&a, d, &s));
}

/* Liger's cross_entropy_kernel on one chunk of bf16 logits z (rows, V): per row the logsumexp in float32, the
 * row's loss (already divided by n_valid), then the gradient written over z in bf16. */
static void naive_ce_rows(bf16 *z, const int32_t *target, size_t rows, size_t V, float scale,
                          float *loss_rows)
{
    for (size_t r = 0; r < rows; r++) {
        bf16 *zr = z + r * V; /* (V,) */
        int32_t t = target[r];
        loss_rows[r] = 0.0f;
        if (t == LCE_IGNORE) {
            memset(zr, 0, V * sizeof *zr);
            continue;
        }
        lce_lse_acc acc = lce_lse_init();
        for (size_t v = 0; v < V; v++) acc = lce_lse_add(acc, bf16_to_f32(zr[v]));
        float lse = lce_lse_finish(acc);
        loss_rows[r] = lce_row_loss(lse, bf16_to_f32(zr[t])) * scale;
        for (size_t v = 0; v < V; v++)
            zr[v] = bf16_from_f32(lce_grad(bf16_to_f32(zr[v]), lse, (size_t)t == v, scale));
    }
}

/* logits_chunk = x_chunk @ W^T: (rows, V) bf16, a new tensor */
static bf16 *chunk_logits(const lce_dims *d, const lce_operands *o, const naive_scratch *s)
{
    size_t V = d->V, vb = lce_vpanel(d), rows = o->rows;
    bf16 *logits = host_alloc_array(rows * V, DT_BF16, "logits_chunk [c,V] bf16 (then grad)");
    for (size_t v0 = 0; v0 < V; v0 += vb) {
        size_t n = V - v0 < vb ? V - v0 : vb;
        lce_logits_panel(o, v0, n, s->op, n);
        lce_f32_to_bf16(logits + v0, V, s->op, n, rows, n); /* the mm's bf16 output */
    }
    return logits;
}

/* grad_input[chunk] = grad_logits_chunk @ W: a (rows, H) bf16 product, copied into grad_input's rows */
static void chunk_grad_input(const lce_dims *d, const lce_operands *o, const naive_scratch *s, bf16 *gi_rows)
{
    size_t V = d->V, H = d->H, vb = lce_vpanel(d), rows = o->rows;
    bf16 *prod = host_alloc_array(rows * H, DT_BF16, "g @ W [c,H] bf16 (mm output)");
    for (size_t v0 = 0; v0 < V; v0 += vb) {
        size_t n = V - v0 < vb ? V - v0 : vb;
        lce_grad_panel(o, v0, n, 1);
        lce_dx_panel(o, v0, n, v0 ? 1.0f : 0.0f, s->dxc);
    }
    lce_f32_to_bf16(prod, H, s->dxc, H, rows, H);
    memcpy(gi_rows, prod, rows * H * sizeof *prod);
    host_free(prod);
}

/* grad_weight += torch.mm(grad_logits_chunk.t(), x_chunk).float(): three passes over (V, H) */
static void chunk_grad_weight(const lce_dims *d, const lce_operands *o, const naive_scratch *s, float *gw)
{
    size_t V = d->V, H = d->H, vb = lce_vpanel(d), VH = V * H;
    bf16 *prod = host_alloc_array(VH, DT_BF16, "mm(g^T, x_chunk) [V,H] bf16");
    for (size_t v0 = 0; v0 < V; v0 += vb) { /* pass 1: the product, rounded to bf16 */
        size_t n = V - v0 < vb ? V - v0 : vb;
        lce_grad_panel(o, v0, n, 0);
        lce_dw_panel(o, v0, n, 0.0f, s->ep);
        lce_f32_to_bf16(prod + v0 * H, H, s->ep, H, n, H);
    }
    float *prodf = host_alloc_array(VH, DT_F32, "mm(...).float() [V,H] f32");
    for (size_t i = 0; i < VH; i++) prodf[i] = bf16_to_f32(prod[i]); /* pass 2: .float() */
    host_free(prod); /* the bf16 temporary dies once .float() has returned */
    for (size_t i = 0; i < VH; i++) gw[i] += prodf[i];               /* pass 3: += */
    host_free(prodf);
}

static void naive_chunk(const lce_dims *d, size_t k, const bf16 *x, const bf16 *W, const int32_t *target,
                        float scale, const naive_scratch *s, naive_lce_saved *sv, float *loss_1d)
{
    size_t start = k * d->chunk, rows = lce_chunk_rows(d, k), H = d->H;
    lce_operands o = {
        .x = x + start * H, .xf = s->xf, .W = W, .gp = s->gp, .wp = s->wp, .rows = rows, .H = H};
    lce_x_block(&o);
    bf16 *logits = chunk_logits(d, &o, s);
    naive_ce_rows(logits, target + start, rows, d->V, scale, loss_1d + start);
    o.g = logits; /* (rows, V) bf16: the gradient, written over the logits */
    o.ldg = d->V;
    chunk_grad_input(d, &o, s, sv->grad_input + start * H);
    chunk_grad_weight(d, &o, s, sv->grad_weight);
    host_free(logits);
}

float *naive_lce_forward(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target,
                         naive_lce_saved *saved)
{
    size_t N = d->N;
    saved->grad_weight = host_alloc_array(lce_w_count(d), DT_F32, "grad_weight [V,H] f32 (saved)");
    saved->grad_input = host_alloc_array(lce_x_count(d), DT_BF16, "grad_input [N,H] bf16 (saved)");
    float *loss_1d = host_alloc_array(N, DT_F32, "loss_1d [N] f32");
    memset(saved->grad_weight, 0, lce_w_count(d) * sizeof(float));
    memset(saved->grad_input, 0, lce_x_count(d) * sizeof(bf16));
    memset(loss_1d, 0, N * sizeof(float));

    arena a;
    naive_scratch s;
    size_t bytes = naive_lce_scratch_bytes(d);
    arena_init(&a, host_alloc(bytes, "CPU GEMM f32 scratch (chunk-sized)"), bytes);
    carve(&a, d, &s);
    float scale = lce_mean_scale(target, N);
    for (size_t k = 0; k < lce_chunks(d); k++) naive_chunk(d, k, x, W, target, scale, &s, saved, loss_1d);
    host_free(a.base);

    float *loss = host_alloc_array(1, DT_F32, "loss [1] f32");
    double sum = 0.0; /* torch.sum(loss_1d) */
    for (size_t i = 0; i < N; i++) sum += loss_1d[i];
    loss[0] = (float)sum;
    host_free(loss_1d);
    return loss;
}

/* Liger's backward: element_mul_kernel(grad_input, grad_output) and the same on grad_weight, in place. */
void naive_lce_backward(const lce_dims *d, naive_lce_saved *saved, const float *dloss, bf16 **dx, float **dW)
{
    lce_scale_saved_gradients(d, dloss[0], &saved->grad_input, &saved->grad_weight, dx, dW);
}

/* The inputs: x (N,H) bf16, W (V,H) bf16, target (N,) int32. */
mem_formula naive_lce_memory(const lce_dims *d)
{
    size_t VH = lce_w_count(d), c = d->chunk;
    /* in the loop: inputs, grad_weight 4VH, grad_input 2NH, loss_1d 4N, the scratch */
    size_t loop = size_add(
        size_add(lce_input_bytes(d), size_mul(4, VH)),
        size_add(size_mul(2, lce_x_count(d)), size_add(size_mul(4, d->N), naive_lce_scratch_bytes(d))));
    /* the first (longest) chunk: its logits 2cV, then either the grad_input product 2cH or the bf16 product
     * and its f32 copy, 6VH, together */
    size_t dxs = size_mul(2, size_mul(c, d->H)), dws = size_mul(6, VH);
    size_t chunk_peak = size_add(loop, size_add(size_mul(2, size_mul(c, d->V)), dxs > dws ? dxs : dws));
    mem_formula m;
    m.forward_live =
        size_add(size_add(lce_input_bytes(d), size_mul(4, VH)), size_add(size_mul(2, lce_x_count(d)), 4));
    size_t tail = size_add(m.forward_live, size_mul(4, d->N)); /* loss and loss_1d together */
    size_t bwd = size_add(m.forward_live, 4);                  /* + dloss */
    m.peak = chunk_peak > tail ? chunk_peak : tail;
    if (bwd > m.peak) m.peak = bwd;
    /* x W target | grad_weight grad_input loss_1d scratch | 4 per chunk | loss | dloss */
    m.allocs = size_add(9, size_mul(4, lce_chunks(d)));
    return m;
}
