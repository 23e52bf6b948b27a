/* linear_ce_cce_v5.h - lesson 5, cuda-v5: v4 with every product K-contiguous in both operands and its fragments
 * filled by 32-bit shared-memory loads (kernels/linear_ce_v5.cu says what it changes over v4).
 *
 * Dataflow and memory: v4's (linear_ce_cce_v4.h), forward's workspace the same; backward's one workspace block
 * adds, beside G (N, ldg) bf16:
 *     Gt  (ldg, ldn) bf16   G^T, ldn = N rounded up to 8 (16-byte rows): dW's rows of K
 *     Wt  (H, ldg) bf16     the chunk's rows of W transposed, zero past the chunk: dx's rows of K
 *     xt  (H, ldn) bf16     x^T, written once per backward: dW's other operand
 * and ldg = min(8192, V rounded up to 256): whole [128, 256] tiles.
 * Nothing of size (N, V) exists: G and Gt are (N, 8192) at most.
 */
#ifndef OPTIMIZED_LINEAR_CE_CCE_V5_H
#define OPTIMIZED_LINEAR_CE_CCE_V5_H

#include <stdint.h>
#include "linear_ce_cce_v4.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Device pointers. Allocates and returns loss (1,) f32; fills saved (lse allocated here). */
float *cuda_cce5_forward(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target,
                         cce_lce_saved *saved);
/* Allocates *dx (N, H) bf16 and *dW (V, H) f32 from the recomputed logit tiles; frees saved->lse. */
void cuda_cce5_backward(const lce_dims *d, int filter, cce_lce_saved *saved, const float *dloss, bf16 **dx,
                        float **dW);

/* backward's workspace, one dev_alloc block */
typedef struct {
    bf16 *G;           /* (N, ldg) bf16 one chunk's (softmax - onehot) * dloss / n_valid */
    bf16 *Gt;          /* (ldg, ldn) bf16 G^T */
    bf16 *Wt;          /* (H, ldg) bf16 the chunk's W^T, zero past the chunk's last row */
    bf16 *xt;          /* (H, ldn) bf16 x^T */
    int *skip;         /* (ceil(N / 128), ldg / 128) i32 1 where the filter drops the chunk's tile */
    float *dx_acc;     /* (N, H) f32 dx summed over the chunks; NULL with one chunk */
    float *scale;      /* (1,) f32 1 / n_valid, recounted */
    unsigned *skipped; /* (1,) u32 tiles the filter dropped */
} cuda_cce5_backward_workspace;
long long cuda_cce5_ldn(const lce_dims *d); /* Gt's and xt's row stride: N rounded up to 8 */
size_t cuda_cce5_chunks(const lce_dims *d); /* vocabulary chunks of backward (of up to 8192 rows, as v4's) */
void cuda_cce5_carve_backward(arena *a, const lce_dims *d, cuda_cce5_backward_workspace *w);
mem_formula cuda_cce5_memory(const lce_dims *d);
/* NULL when the dimensions fit the kernels (int arguments, 1-D grids of tiles), else why not */
const char *cuda_cce5_unfit(const lce_dims *d);
/* NULL when this GPU fits every launch of cuda-v5 (kernels/linear_ce_v5.cu, CUDA builds only) */
const char *lce5_device_unfit(void);

/* What the filter did in the last cuda_cce5_backward (as cuda_cce4_last_filter) */
cce3_filter_stats cuda_cce5_last_filter(void);

#ifdef __cplusplus
}
#endif

#endif
