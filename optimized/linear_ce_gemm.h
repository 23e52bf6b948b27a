/* linear_ce_gemm.h - lesson 5's bf16 GEMMs on the CPU, one panel of W's rows at a time.
 *
 * On a GPU, cublasGemmEx reads bf16 operands and multiplies them on tensor cores with float32 accumulation. The
 * CPU has no bf16 arithmetic, so each product here converts its bf16 operands to float32 (exactly: a bf16 value
 * is a float32 with the low 16 bits zero) and runs sgemm_cpu, which also accumulates in float32. The numbers
 * differ from the GPU's only in the order of the additions inside the reduction.
 *
 * Converting all of W (V, H) to float32 would be a (V, H) f32 temporary, the very thing lesson 5 removes, so W
 * is converted LCE_VPANEL rows at a time into a panel the caller owns, (vb, H). The
 * vocabulary index v of every product below lies in the panel [v0, v0 + vb).
 *
 * Layouts (row-major): xf (rows, H) f32; W (V, H) bf16; g (rows, V) bf16 with row stride ldg elements;
 * gp (rows, vb) f32.
 */
#ifndef OPTIMIZED_LINEAR_CE_GEMM_H
#define OPTIMIZED_LINEAR_CE_GEMM_H

#include <stddef.h>
#include <stdint.h>
#include "../kernels/runtime/bf16.h"
#include "../kernels/linear_ce_problem.h"

/* dst (rows, cols) f32, row stride ldd  <-  src (rows, cols) bf16, row stride lds. Exact. */
void lce_bf16_to_f32(float *dst, size_t ldd, const bf16 *src, size_t lds, size_t rows, size_t cols);
/* dst (rows, cols) bf16  <-  src f32, rounded to nearest even. */
void lce_f32_to_bf16(bf16 *dst, size_t ldd, const float *src, size_t lds, size_t rows, size_t cols);

/* out[:, 0:vb] (rows, vb) f32, row stride ldo = xf (rows, H) . W[v0:v0+vb, :]^T. wp: (vb, H) scratch. */
void lce_logits_panel(const float *xf, size_t rows, size_t H, const bf16 *W, size_t v0, size_t vb, float *wp,
                      float *out, size_t ldo);

/* Converts the panel's operands: gp (rows, vb) <- g[:, v0:v0+vb]; wp (vb, H) <- W[v0:v0+vb, :]. */
void lce_grad_panel(const bf16 *g, size_t ldg, size_t rows, const bf16 *W, size_t H, size_t v0, size_t vb,
                    float *gp, float *wp);

/* dxc (rows, H) f32 = beta * dxc + gp (rows, vb) . wp (vb, H): the panel's share of the input gradient. */
void lce_dx_panel(const float *gp, const float *wp, size_t rows, size_t vb, size_t H, float beta, float *dxc);

/* out (vb, H) f32, row stride H = beta * out + gp^T (vb, rows) . xf (rows, H): the panel's rows of the weight
 * gradient. beta = 1 accumulates into out in place. */
void lce_dw_panel(const float *gp, const float *xf, size_t rows, size_t vb, size_t H, float beta, float *out);

/* 1 / (rows whose target is not LCE_IGNORE): the mean's scale, folded into every gradient element; 0 when every
 * row is ignored (the loss and every gradient are then 0, as Liger's kernel gives; F.cross_entropy says NaN). */
float lce_mean_scale(const int32_t *target, size_t N);
/* Backward of both CPU implementations, as Liger's: the gradients forward saved (dloss-free) are scaled by the
 * upstream dloss in place (grad_input stays bf16, so dx is rounded once more) and handed over as dx and dW; the
 * saved pointers are cleared. */
void lce_scale_saved_gradients(const lce_dims *d, float dloss, bf16 **grad_input, float **grad_weight, bf16 **dx,
                               float **dW);

#endif
