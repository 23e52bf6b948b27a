/* linear_ce_gemm.c - lesson 5's bf16 GEMMs on the CPU (see linear_ce_gemm.h): convert a panel, call sgemm_cpu. */
#include "linear_ce_gemm.h"

#include "../kernels/runtime/gemm_cpu.h"
#include "../kernels/runtime/track.h"
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

void lce_logits_panel(const float *xf, size_t rows, size_t H, const bf16 *W, size_t v0, size_t vb, float *wp,
                      float *out, size_t ldo)
{
    lce_bf16_to_f32(wp, H, W + v0 * H, H, vb, H); /* wp (vb, H) = W[v0:v0+vb, :] */
    /* out (rows, vb) = xf (rows, H) . wp^T (H, vb); K = H, wp stored (N, K): transB */
    sgemm_cpu(0, 1, rows, vb, H, 1.0f, xf, H, wp, H, 0.0f, out, ldo);
}

void lce_grad_panel(const bf16 *g, size_t ldg, size_t rows, const bf16 *W, size_t H, size_t v0, size_t vb,
                    float *gp, float *wp)
{
    lce_bf16_to_f32(gp, vb, g + v0, ldg, rows, vb);   /* gp (rows, vb) */
    lce_bf16_to_f32(wp, H, W + v0 * H, H, vb, H);     /* wp (vb, H) */
}

void lce_dx_panel(const float *gp, const float *wp, size_t rows, size_t vb, size_t H, float beta, float *dxc)
{
    /* dxc (rows, H) = beta dxc + gp (rows, vb) . wp (vb, H); K = vb, the panel's share of the sum over V */
    sgemm_cpu(0, 0, rows, H, vb, 1.0f, gp, vb, wp, H, beta, dxc, H);
}

void lce_dw_panel(const float *gp, const float *xf, size_t rows, size_t vb, size_t H, float beta, float *out)
{
    /* out (vb, H) = beta out + gp^T (vb, rows) . xf (rows, H); gp is stored (rows, vb) = (K, M): transA. The
     * sum over the chunk's rows happens inside the GEMM's reduction, in float32. */
    sgemm_cpu(1, 0, vb, H, rows, 1.0f, gp, vb, xf, H, beta, out, H);
}

float lce_mean_scale(const int32_t *target, size_t N)
{
    size_t n = 0;
    for (size_t i = 0; i < N; i++) n += target[i] != LCE_IGNORE;
    return n ? 1.0f / (float)n : 0.0f;
}

void lce_scale_saved_gradients(const lce_dims *d, float dloss, bf16 **grad_input, float **grad_weight, bf16 **dx,
                               float **dW)
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
