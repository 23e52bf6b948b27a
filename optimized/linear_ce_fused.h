/* linear_ce_fused.h - lesson 5, optimized: the same chunk loop with no (V, H) temporary.
 *
 * Per chunk of rows (the seed's chunk rule, kernels/linear_ce_problem.h):
 *     logits (chunk, V) f32   = x_chunk . W^T          a GEMM with a float32 output (cublasGemmEx: bf16 A and B,
 *                                                       f32 C, compute 32F)
 *     one pass per row over the logits: online logsumexp, the row's loss, then the gradient written over the
 *     row in bf16 (row r's bf16 gradient occupies the first half of its own f32 row: row stride 2V elements)
 *     grad_input[chunk] (chunk, H) = g . W             f32 accumulation, rounded once to bf16
 *     grad_weight (V, H) f32  = 1 * grad_weight + g^T . x_chunk      beta = 1: accumulated in place
 * so the weight gradient is one pass over (V, H) per chunk and no chunk's contribution is rounded to bf16 before
 * it is added. What stays allocated: grad_weight (V, H) f32, grad_input (N, H) bf16 (saved for backward, as in the
 * seed) and one chunk-sized workspace. Backward multiplies both by dloss in place.
 */
#ifndef OPTIMIZED_LINEAR_CE_FUSED_H
#define OPTIMIZED_LINEAR_CE_FUSED_H

#include <stdint.h>
#include <stdio.h>
#include "../kernels/runtime/bf16.h"
#include "../kernels/linear_ce_problem.h"
#include "../kernels/runtime/mem_formula.h"
#include "linear_ce_rows.h"

#ifdef __cplusplus
extern "C" {
#endif
#include "arena.h" /* a C header without its own extern "C" */

typedef struct {
    float *grad_weight; /* (V, H) f32 */
    bf16 *grad_input;   /* (N, H) bf16 */
} fused_lce_saved;

/* --- CPU ------------------------------------------------------------------------------------------------ */
/* The CPU version runs k of the seed's chunks at once, k = ceil(LCE_CPU_GEMM_ROWS / chunk) (1 when the chunk is
 * already that large, as at the seed's size: chunk 256): a GEMM whose output is the (V, H) weight gradient reads
 * and writes all of it for every block of rows, so 16-row chunks (medium) made cpu a pass over 32 MB of memory per
 * 16 rows, at half of PyTorch's float32 speed; 128 rows per pass brings it to PyTorch's. The logits buffer grows
 * to (block, V) f32 for it; the memory formula counts it. Rows are independent, so the results are the same
 * up to the order of the float32 additions over rows inside the dW GEMM. */
#define LCE_CPU_GEMM_ROWS 128
size_t cpu_lce_block_rows(const lce_dims *d); /* rows per block: k * chunk, at most N */
/* Allocates and returns loss (1,) f32; fills saved. x (N, H) bf16, W (V, H) bf16, target (N,) int32. */
float *cpu_lce_forward(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target,
                       fused_lce_saved *saved);
/* Scales the saved gradients by dloss (1,) in place: *dx (N, H) bf16, *dW (V, H) f32. */
void cpu_lce_backward(const lce_dims *d, fused_lce_saved *saved, const float *dloss, bf16 **dx, float **dW);
/* The row pass between the logits and the gradient GEMMs: cpu_lce_rows (linear_ce_rows.h). */
size_t cpu_lce_workspace_bytes(const lce_dims *d);
mem_formula cpu_lce_memory(const lce_dims *d);

/* --- CUDA (optimized/linear_ce_fused.cu); device pointers --------------------------------------------------- */
float *cuda_lce_forward(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target,
                        fused_lce_saved *saved);
void cuda_lce_backward(const lce_dims *d, fused_lce_saved *saved, const float *dloss, bf16 **dx, float **dW);
/* The device workspace, carved from one dev_alloc block (lessons/host/arena.h): */
typedef struct {
    float *logits;   /* (chunk, V) f32 logits; the row kernel writes row r's bf16 gradient over its first half */
    float *row_loss; /* (N,) f32 each row's loss (0 for ignored rows), summed at the end */
    float *scale;    /* (1,) f32 1 / n_valid, counted on the device */
} cuda_lce_workspace;
void cuda_lce_carve(arena *a, const lce_dims *d, cuda_lce_workspace *w);
size_t cuda_lce_workspace_bytes(const lce_dims *d);
mem_formula cuda_lce_memory(const lce_dims *d);
/* NULL when every dimension fits cuBLAS's int arguments and the grid, else why not. */
const char *cuda_lce_unfit(const lce_dims *d);
/* d with chunk = d->cuda_chunk (when set): what the CUDA version, its workspace and its formula run with. */
lce_dims lce_cuda_dims(const lce_dims *d);

/* --- the CUDA version's chunk, chosen by a model of its traffic ------------------------------------------------
 * Per chunk of c rows the loop runs three GEMMs of 2 c V H flops each and one row pass; each is timed as
 * max(flops / F, bytes / B) (a roofline: a GEMM is as slow as the slower of its math and its DRAM traffic):
 *     logits   reads W (2VH) and x_c (2cH), writes the f32 logits (4cV)
 *     row pass reads the logits (4cV), writes the bf16 gradient over them (2cV)
 *     dx       reads g (2cV) and W (2VH), writes dx_c (2cH)
 *     dW       reads g (2cV) and x_c (2cH), and reads + writes the f32 dW: 2 V H 4 bytes, whatever c is
 * The logits traffic sums to the same 14 N V bytes for any c; W's reads and dW's read-modify-write are paid once
 * per chunk, so small chunks multiply them (and make the dW GEMM memory-bound: intensity c/4 flop/byte). The
 * model's choice: the smallest chunk (a power of two, or N) whose modeled time is within LCE_CHUNK_SLACK of one
 * chunk of all N rows: the least logits memory (c V 4 bytes) that costs at most that much time. F and B are an
 * H100 SXM's dense bf16 tensor rate and HBM3 bandwidth (the GPU this repository's report targets). */
#define LCE_MODEL_FLOPS 989e12 /* flop/s, bf16 tensor cores, dense */
#define LCE_MODEL_BYTES 3.35e12 /* byte/s, HBM3 */
#define LCE_CHUNK_SLACK 0.05
typedef struct {
    double ms;           /* modeled time of the chunk loop (forward: logits, rows, dx, dW) */
    double bytes;        /* its DRAM traffic */
    double dw_rmw_bytes; /* of which dW's read-modify-write: chunks * 2 V H 4 */
    double logits_bytes; /* the logits buffer: c V 4 */
} lce_chunk_cost;
lce_chunk_cost lce_chunk_model(size_t N, size_t H, size_t V, size_t chunk);
size_t lce_model_chunk(size_t N, size_t H, size_t V);
/* One paragraph: the chosen chunk and why (the model's figures at this size). */
void lce_print_chunk_choice(const lce_dims *d, FILE *f);

/* cuda_track.h's CUBLAS_WORKSPACE_BYTES, restated so the C formula needs no CUDA header (a test asserts equal) */
#define CUBLAS_WORKSPACE_BYTES_C ((size_t)32 << 20)

#ifdef __cplusplus
}
#endif

#endif
