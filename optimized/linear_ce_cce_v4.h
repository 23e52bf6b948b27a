/* linear_ce_cce_v4.h - lesson 5, cuda-v4: Cut Cross-Entropy's shape, every product a [128, 128]-tile GEMM on bf16
 * tensor cores with a cp.async pipeline (kernels/linear_ce_v4.cu says what it changes over v3).
 *
 * Dataflow and memory, beside v2/v3 (linear_ce_cce.h), whose saved state it shares:
 *     forward   lse (N,) f32 saved; forward's workspace: the tiles' partial (max, sum exp) (2, ceil(V / 128), N),
 *               z[target] (N,), row losses (N,), 1/n_valid; freed before forward returns
 *     backward  dx (N, H) bf16, dW (V, H) f32, and one workspace block: G (N, ldg) bf16 for one vocabulary chunk
 *               of ldg = min(8192, V rounded up to 128) columns, the chunk's tile filter flags, dx_acc (N, H) f32
 *               when V needs more than one chunk (dx summed over chunks, rounded once), 1/n_valid, a skip counter
 * Nothing of size (N, V) exists; G is (N, 8192) at most. filter != 0 turns on CCE's gradient filter in backward.
 */
#ifndef OPTIMIZED_LINEAR_CE_CCE_V4_H
#define OPTIMIZED_LINEAR_CE_CCE_V4_H

#include <stdint.h>
#include "linear_ce_cce.h"
#include "linear_ce_cce_v3.h"
#include "../kernels/linear_ce_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Device pointers. Allocates and returns loss (1,) f32; fills saved (lse allocated here). */
float *cuda_cce4_forward(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target,
                         cce_lce_saved *saved);
/* The same forward with another launcher of the same contract (lce4_launch_forward's: partials, then their merge);
 * cuda-v5 passes its own. */
typedef void (*lce4_forward_launcher)(int N, int V, int H, const bf16 *x, const bf16 *W, const int32_t *target,
                                      float *part, float *z_target, float *lse, float *row_loss);
float *cuda_cce4_forward_with(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target,
                              cce_lce_saved *saved, lce4_forward_launcher launch);
/* Allocates *dx (N, H) bf16 and *dW (V, H) f32 from the recomputed logit tiles; frees saved->lse. */
void cuda_cce4_backward(const lce_dims *d, int filter, cce_lce_saved *saved, const float *dloss, bf16 **dx,
                        float **dW);

/* forward's workspace, one dev_alloc block */
typedef struct {
    float *part;       /* (2, ceil(V / 128), N) f32 each row's max over each vocabulary tile, then its sum of exp */
    float *z_target;   /* (N,) f32 z[n, target[n]], written by the tile that holds it */
    float *row_loss;   /* (N,) f32 */
    float *scale;      /* (1,) f32 1 / n_valid */
} cuda_cce4_forward_workspace;
/* backward's workspace, one dev_alloc block */
typedef struct {
    bf16 *G;           /* (N, ldg) bf16 one chunk's (softmax - onehot) * dloss / n_valid */
    int *skip;         /* (ceil(N / 128), ldg / 128) i32 1 where the filter drops the chunk's tile */
    float *dx_acc;     /* (N, H) f32 dx summed over the chunks; NULL with one chunk */
    float *scale;      /* (1,) f32 1 / n_valid, recounted */
    unsigned *skipped; /* (1,) u32 tiles the filter dropped */
} cuda_cce4_backward_workspace;
void cuda_cce4_carve_forward(arena *a, const lce_dims *d, cuda_cce4_forward_workspace *w);
void cuda_cce4_carve_backward(arena *a, const lce_dims *d, cuda_cce4_backward_workspace *w);
size_t cuda_cce4_chunks(const lce_dims *d); /* vocabulary chunks of backward */
mem_formula cuda_cce4_memory(const lce_dims *d);
/* NULL when the dimensions fit the kernels (int arguments, 1-D grids of tiles), else why not */
const char *cuda_cce4_unfit(const lce_dims *d);
/* NULL when this GPU fits every launch of cuda-v4 (kernels/linear_ce_v4.cu, CUDA builds only) */
const char *lce4_device_unfit(void);

/* What the filter did in the last cuda_cce4_backward: tiles ceil(N / 128) * ceil(V / 128); a tile skipped is
 * skipped by both dx and dW, so skipped_dx == skipped_dw. */
cce3_filter_stats cuda_cce4_last_filter(void);

#ifdef __cplusplus
}
#endif

#endif
