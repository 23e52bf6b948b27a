/* linear_ce_gemm.h - lesson 5's bf16 GEMMs on the CPU, one panel of W's rows at a time.
 *
 * On a GPU, cublasGemmEx reads bf16 operands and multiplies them on tensor cores with float32 accumulation;
 * the seed's PyTorch does the same on the CPU through oneDNN's bf16 matmul. Where the CPU has bf16
 * dot-product instructions (AVX512_BF16; gemm_cpu_bf16_native()), the products here are that very call on the
 * bf16 tensors in place. Elsewhere each product converts its bf16 operands to float32 (exactly: a bf16 value
 * is a float32 with the low 16 bits zero) and runs sgemm_cpu, which also accumulates in float32. Either way
 * the product of two bf16 values is exact in float32 and the sums are float32 ones: the numbers differ from
 * the GPU's only in the order of the additions inside the reduction (and, on the bf16 instructions, in
 * flushing float32 subnormals, below 2^-126, to zero).
 *
 * Converting all of W (V, H) to float32 would be a (V, H) f32 temporary, the very thing lesson 5 removes, so
 * W is converted LCE_VPANEL rows at a time into a panel the caller owns, (vb, H). The vocabulary index v of
 * every product below lies in the panel [v0, v0 + vb). The float32 scratch is allocated on both paths (the
 * memory formulas are one), and only written on the float32 one.
 *
 * Layouts (row-major): x (rows, H) bf16 and xf its f32 copy; W (V, H) bf16; g (rows, V) bf16 with row stride
 * ldg elements; gp (rows, vb) f32; wp (vb, H) f32.
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

/* One block's operands for the panel products: the bf16 tensors and their float32 scratch copies. */
typedef struct {
    const bf16 *x;  /* (rows, H) the block's inputs */
    float *xf;      /* (rows, H) their f32 copy (lce_x_block) */
    const bf16 *W;  /* (V, H) */
    const bf16 *g;  /* (rows, V) the block's bf16 gradient, row stride ldg; NULL before the row pass */
    size_t ldg;
    float *gp, *wp; /* (rows, vb), (vb, H) f32 copies of a panel's g and W */
    size_t rows, H;
} lce_operands;

/* xf <- x, where the products run in float32 (nothing to do on the bf16 instructions). */
void lce_x_block(const lce_operands *o);

/* out[:, 0:vb] (rows, vb) f32, row stride ldo = x (rows, H) . W[v0:v0+vb, :]^T. */
void lce_logits_panel(const lce_operands *o, size_t v0, size_t vb, float *out, size_t ldo);

/* gp (rows, vb) <- g[:, v0:v0+vb] and, with_w, wp (vb, H) <- W[v0:v0+vb, :], where the products run in
 * float32. */
void lce_grad_panel(const lce_operands *o, size_t v0, size_t vb, int with_w);

/* dxc (rows, H) f32 = beta * dxc + g[:, v0:v0+vb] (rows, vb) . W[v0:v0+vb, :] (vb, H): the panel's share of
 * the input gradient. */
void lce_dx_panel(const lce_operands *o, size_t v0, size_t vb, float beta, float *dxc);

/* out (vb, H) f32, row stride H = beta * out + g[:, v0:v0+vb]^T (vb, rows) . x (rows, H): the panel's rows of
 * the weight gradient. beta = 1 accumulates into out in place. */
void lce_dw_panel(const lce_operands *o, size_t v0, size_t vb, float beta, float *out);

/* 1 / (rows whose target is not LCE_IGNORE): the mean's scale, folded into every gradient element; 0 when
 * every row is ignored (the loss and every gradient are then 0, as Liger's kernel gives; F.cross_entropy says
 * NaN). */
float lce_mean_scale(const int32_t *target, size_t N);
/* Backward of both CPU implementations, as Liger's: the gradients forward saved (dloss-free) are scaled by
 * the upstream dloss in place (grad_input stays bf16, so dx is rounded once more) and handed over as dx and
 * dW; the saved pointers are cleared. */
void lce_scale_saved_gradients(const lce_dims *d, float dloss, bf16 **grad_input, float **grad_weight,
                               bf16 **dx, float **dW);

#endif
