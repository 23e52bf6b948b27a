/* linear_ce_fused.c - lesson 5's fused chunk loop on the CPU (see linear_ce_fused.h).
 *
 * One tracked workspace, carved once: one block's f32 logits (which become its bf16 gradient) and the float32
 * conversion panels of the CPU GEMMs (optimized/linear_ce_gemm.h). Nothing is allocated inside the block loop.
 * A block is k of the seed's chunks, k = ceil(LCE_CPU_GEMM_ROWS / chunk) (linear_ce_fused.h).
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

/* One block of rows [start, start + rows): logits, the row pass, then per W panel the dx share and the in-place
 * dW accumulation. */
static double cpu_block(const lce_dims *d, size_t start, size_t rows, const bf16 *x, const bf16 *W,
                        const int32_t *target, float scale, const cpu_workspace *w, fused_lce_saved *sv)
{
    size_t H = d->H, V = d->V, vb = lce_vpanel(d);
    lce_operands o = {.x = x + start * H, .xf = w->xf, .W = W, .gp = w->gp, .wp = w->wp, .rows = rows, .H = H};
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
    memset(saved->grad_weight, 0, lce_w_count(d) * sizeof(float)); /* the first block accumulates onto zeros */
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

lce_dims lce_cuda_dims(const lce_dims *d)
{
    lce_dims c = *d;
    if (d->cuda_chunk) c.chunk = d->cuda_chunk;
    return c;
}

mem_formula cuda_lce_memory(const lce_dims *dims)
{
    lce_dims dc = lce_cuda_dims(dims);
    const lce_dims *d = &dc;
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

const char *cuda_lce_unfit(const lce_dims *dims)
{
    lce_dims dc = lce_cuda_dims(dims);
    const lce_dims *d = &dc;
    if (size_mul(2, d->V) > INT_MAX || d->H > INT_MAX || d->chunk > INT_MAX)
        return "2V, H or the chunk exceeds cuBLAS's int arguments (and the row kernel's grid)";
    return NULL;
}

/* --- the CUDA version's chunk: the traffic model (linear_ce_fused.h) --------------------------------------- */

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
    c.ms = (double)full * one.ms, c.bytes = (double)full * one.bytes, c.dw_rmw_bytes = (double)full * one.dw_rmw_bytes;
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
    lce_chunk_cost c = lce_chunk_model(d->N, d->H, d->V, dc.chunk), one = lce_chunk_model(d->N, d->H, d->V, d->N);
    size_t seed_rows = lce_default_chunk(d->N, d->H, d->V) < d->N ? lce_default_chunk(d->N, d->H, d->V) : d->N;
    lce_chunk_cost seed = lce_chunk_model(d->N, d->H, d->V, seed_rows);
    if (dc.chunk == lce_model_chunk(d->N, d->H, d->V))
        fprintf(f, "cuda: chunk = %zu rows, the smallest within %.0f%% of the modeled time of one chunk of all N rows\n",
                dc.chunk, 100.0 * LCE_CHUNK_SLACK);
    else
        fprintf(f, "cuda: chunk = %zu rows (--chunk; the traffic model would take %zu)\n", dc.chunk,
                lce_model_chunk(d->N, d->H, d->V));
    fprintf(f, "  (modeled on an H100 as a roofline of each GEMM and the row pass: %.3g ms; one chunk %.3g ms; the\n"
               "  seed's %zu rows %.3g ms). dW's read-modify-write 2*V*H*4 B per chunk is %.1f%% of the modeled\n"
               "  traffic at this size; the logits buffer chunk*V*4 = %.1f MiB\n",
            c.ms, one.ms, seed_rows, seed.ms, 100.0 * c.dw_rmw_bytes / c.bytes, c.logits_bytes / 1048576.0);
}
