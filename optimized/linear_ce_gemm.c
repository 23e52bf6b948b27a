/* linear_ce_gemm.c - lesson 5's bf16 GEMMs on the CPU (see linear_ce_gemm.h): on the bf16 instructions, or a
 * converted panel through sgemm_cpu. */
#include "linear_ce_gemm.h"

#include "gemm_cpu.h"
#include "track.h"
#include "../kernels/linear_ce_problem.h"

/* Conversions run in blocks of a fixed CVT_BLOCK elements: a loop with a constant trip count is what -O2's
 * cheap vectoriser turns into SIMD shifts (a plain loop over cols stays scalar, and at medium the conversions
 * were a third of cpu's time). */
enum { CVT_BLOCK = 16 };

static void bf16_row_to_f32(float *dst, const bf16 *src, size_t n)
{
    size_t j = 0;
    for (; j + CVT_BLOCK <= n; j += CVT_BLOCK)
        for (size_t k = 0; k < CVT_BLOCK; k++) dst[j + k] = bf16_to_f32(src[j + k]);
    for (; j < n; j++) dst[j] = bf16_to_f32(src[j]);
}

void lce_bf16_to_f32(float *dst, size_t ldd, const bf16 *src, size_t lds, size_t rows, size_t cols)
{
    for (size_t i = 0; i < rows; i++) bf16_row_to_f32(dst + i * ldd, src + i * lds, cols);
}

void lce_f32_to_bf16(bf16 *dst, size_t ldd, const float *src, size_t lds, size_t rows, size_t cols)
{
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++) dst[i * ldd + j] = bf16_from_f32(src[i * lds + j]);
}

void lce_x_block(const lce_operands *o)
{
    if (!gemm_cpu_bf16_native()) lce_bf16_to_f32(o->xf, o->H, o->x, o->H, o->rows, o->H);
}

void lce_logits_panel(const lce_operands *o, size_t v0, size_t vb, float *out, size_t ldo)
{
    size_t rows = o->rows, H = o->H;
    const bf16 *Wp = o->W + v0 * H; /* (vb, H) */
    /* out (rows, vb) = x (rows, H) . Wp^T (H, vb); K = H, Wp stored (N, K): transB */
    if (gemm_cpu_bf16_native()) {
        gemm_cpu_bf16(0, 1, rows, vb, H, o->x, H, Wp, H, 0.0f, out, ldo);
        return;
    }
    lce_bf16_to_f32(o->wp, H, Wp, H, vb, H);
    sgemm_cpu(0, 1, rows, vb, H, 1.0f, o->xf, H, o->wp, H, 0.0f, out, ldo);
}

void lce_grad_panel(const lce_operands *o, size_t v0, size_t vb, int with_w)
{
    if (gemm_cpu_bf16_native()) return;
    lce_bf16_to_f32(o->gp, vb, o->g + v0, o->ldg, o->rows, vb);        /* gp (rows, vb) */
    if (with_w) lce_bf16_to_f32(o->wp, o->H, o->W + v0 * o->H, o->H, vb, o->H); /* wp (vb, H) */
}

void lce_dx_panel(const lce_operands *o, size_t v0, size_t vb, float beta, float *dxc)
{
    size_t rows = o->rows, H = o->H;
    /* dxc (rows, H) = beta dxc + g_panel (rows, vb) . W_panel (vb, H); K = vb, the panel's share of the sum
     * over V */
    if (gemm_cpu_bf16_native())
        gemm_cpu_bf16(0, 0, rows, H, vb, o->g + v0, o->ldg, o->W + v0 * H, H, beta, dxc, H);
    else sgemm_cpu(0, 0, rows, H, vb, 1.0f, o->gp, vb, o->wp, H, beta, dxc, H);
}

void lce_dw_panel(const lce_operands *o, size_t v0, size_t vb, float beta, float *out)
{
    size_t rows = o->rows, H = o->H;
    /* out (vb, H) = beta out + g_panel^T (vb, rows) . x (rows, H); g_panel is stored (rows, vb) = (K, M):
     * transA. The sum over the block's rows happens inside the GEMM's reduction, in float32. */
    if (gemm_cpu_bf16_native()) gemm_cpu_bf16(1, 0, vb, H, rows, o->g + v0, o->ldg, o->x, H, beta, out, H);
    else sgemm_cpu(1, 0, vb, H, rows, 1.0f, o->gp, vb, o->xf, H, beta, out, H);
}

float lce_mean_scale(const int32_t *target, size_t N)
{
    size_t n = 0;
    for (size_t i = 0; i < N; i++) n += target[i] != LCE_IGNORE;
    return n ? 1.0f / (float)n : 0.0f;
}

void lce_scale_saved_gradients(const lce_dims *d, float dloss, bf16 **grad_input, float **grad_weight,
                               bf16 **dx, float **dW)
{
    bf16 *gi = *grad_input; /* (N, H) */
    float *gw = *grad_weight; /* (V, H) */
    for (size_t i = 0; i < lce_x_count(d); i++) gi[i] = bf16_from_f32(bf16_to_f32(gi[i]) * dloss);
    for (size_t i = 0; i < lce_w_count(d); i++) gw[i] *= dloss;
    track_relabel(MEM_HOST, gi, "dx [N,H] bf16 (grad_input, scaled)");
    track_relabel(MEM_HOST, gw, "dW [V,H] f32 (grad_weight, scaled)");
    *dx = gi;
    *dW = gw;
    *grad_input = NULL;
    *grad_weight = NULL;
}
