/* linear_ce_cce_v3.h - lesson 5, cuda-v3: Cut Cross-Entropy on tensor cores (bf16 WMMA logit tiles, online
 * logsumexp per row, logits recomputed in backward; kernels/linear_ce_v3.cu says what it adds over v2).
 *
 * Dataflow and memory, beside v2 (linear_ce_cce.h), whose forward workspace and saved state it shares:
 *     forward   lse (N,) f32 saved; forward's workspace (row losses, 1/n_valid) freed before it returns
 *     backward  dx (N, H) bf16, dW (V, H) f32, and one workspace block: dx_acc (N, H) f32 (dx summed in fp32 by
 *               the block that owns the rows, rounded once), 1/n_valid recounted, two skipped-tile counters
 * Nothing of size (N, V) or (V, H) exists beyond W and dW. filter != 0 (the lesson's --filter) turns on CCE's
 * gradient filter in backward; cuda_cce3_last_filter() reports what the last backward skipped.
 */
#ifndef OPTIMIZED_LINEAR_CE_CCE_V3_H
#define OPTIMIZED_LINEAR_CE_CCE_V3_H

#include <stdint.h>
#include "linear_ce_cce.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Device pointers. Allocates and returns loss (1,) f32; fills saved (lse allocated here). */
float *cuda_cce3_forward(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target,
                         cce_lce_saved *saved);
/* Allocates *dx (N, H) bf16 and *dW (V, H) f32 from the recomputed logit tiles; frees saved->lse. */
void cuda_cce3_backward(const lce_dims *d, int filter, cce_lce_saved *saved, const float *dloss, bf16 **dx,
                        float **dW);

/* backward's workspace, one dev_alloc block freed before backward returns */
typedef struct {
    float *dx_acc;     /* (N, H) f32 dx summed over V-tiles; rows owned by one block each */
    float *scale;      /* (1,) f32 1 / n_valid, recounted */
    unsigned *skipped; /* (2,) u32 tiles skipped by the filter: [0] in the dx kernel, [1] in the dW kernel */
} cuda_cce3_workspace;
void cuda_cce3_carve(arena *a, const lce_dims *d, cuda_cce3_workspace *w);
size_t cuda_cce3_workspace_bytes(const lce_dims *d);
mem_formula cuda_cce3_memory(const lce_dims *d);
/* NULL when the dimensions fit the kernels (int indexing, grid), else why not */
const char *cuda_cce3_unfit(const lce_dims *d);

/* What the filter did in the last cuda_cce3_backward: logit tiles per gradient kernel and those skipped. */
typedef struct {
    int filter;                 /* the run's filter argument */
    unsigned long long tiles;   /* ceil(N / 32) * ceil(V / 64) per kernel */
    unsigned skipped_dx, skipped_dw;
} cce3_filter_stats;
cce3_filter_stats cuda_cce3_last_filter(void);

#ifdef __cplusplus
}
#endif

#endif
