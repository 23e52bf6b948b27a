/* linear_ce_cuda.h - lesson 5's CUDA versions as C sees them: each version's entry points (kernels/
 * linear_ce_vN.cu) and its workspace layout, memory formula and size check
 * (optimized/linear_ce_cuda_memory.c, plain C: the driver predicts them without nvcc). Pointers are device
 * pointers; forward allocates and returns loss (1,) f32 and fills the saved state, backward allocates *dx (N,
 * H) bf16 and *dW (V, H) f32. / */
#ifndef OPTIMIZED_LINEAR_CE_CUDA_H
#define OPTIMIZED_LINEAR_CE_CUDA_H

#include <stdint.h>
#include "../kernels/linear_ce_problem.h"
#include "../kernels/runtime/bf16.h"
#include "../kernels/runtime/mem_formula.h"

#ifdef __cplusplus
extern "C" {
#endif
#include "arena.h" /* a C header without its own extern "C" */

/* what forward saves: the inputs by reference and each row's logsumexp (N,) f32 (0 for an ignored row) */
typedef struct {
    const bf16 *x;
    const bf16 *W;
    const int32_t *target;
    float *lse;
} lce_cuda_saved;

/* what --filter did in the last backward: the [128, 128] tiles of G and how many it skipped */
typedef struct {
    int filter;
    unsigned long long tiles;
    unsigned skipped;
} lce_filter_count;

/* ---- cuda-v4: mma.sync Cut Cross-Entropy (kernels/linear_ce_v4.cu) --------------------------------------
 * forward   lse (N,) saved; workspace: each (row, 128-column tile)'s partial (max, sum exp)
 *           (2, ceil(V / 128), N), z[target] (N,), row losses (N,), 1/n_valid; freed before forward returns
 * backward  per vocabulary chunk of ldg = min(8192, V rounded up to 256) columns: G (N, ldg) bf16,
 *           the filter's flags per [128, 128] tile and their compacted lists (kept vocabulary tiles
 *           per row tile, kept row tiles per vocabulary tile); dx_acc (N, H) f32 when V takes more
 *           than one chunk; 1/n_valid; a count of the tiles skipped */
float *lce4_forward(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target,
                    lce_cuda_saved *s);
void lce4_backward(const lce_dims *d, int filter, lce_cuda_saved *s, const float *dloss, bf16 **dx,
                   float **dW);
lce_filter_count lce4_last_filter(void);
const char *lce4_device_unfit(void); /* NULL when this GPU fits every launch (CUDA builds only) */

typedef struct {
    float *part;     /* (2, ceil(V / 128), N) f32: the tiles' maxima, then their sums of exp */
    float *z_target; /* (N,) f32 */
    float *row_loss; /* (N,) f32 */
    float *scale;    /* (1,) f32 */
} lce4_forward_workspace;
typedef struct {
    bf16 *G;           /* (N, ldg) bf16: (softmax - onehot) * dloss / n_valid of one chunk */
    int *skip;         /* (ceil(N / 128), ldg / 128) i32: 1 where the filter drops the tile */
    int *dx_tiles;     /* (ceil(N / 128), ldg / 128) i32: row tile i's kept vocabulary tiles, in order */
    int *dx_count;     /* (ceil(N / 128),) i32 */
    int *dw_tiles;     /* (ldg / 128, ceil(N / 128)) i32: vocabulary tile j's kept row tiles, in order */
    int *dw_count;     /* (ldg / 128,) i32 */
    float *dx_acc;     /* (N, H) f32 dx summed over the chunks; NULL with one chunk */
    float *scale;      /* (1,) f32 */
    unsigned *skipped; /* (1,) u32 */
} lce4_backward_workspace;
void lce4_carve_forward(arena *a, const lce_dims *d, lce4_forward_workspace *w);
void lce4_carve_backward(arena *a, const lce_dims *d, lce4_backward_workspace *w);
size_t lce4_chunks(const lce_dims *d);
mem_formula lce4_memory(const lce_dims *d);
const char *lce4_unfit(const lce_dims *d); /* NULL when the sizes fit the kernels' int arguments and grids */

#ifdef __cplusplus
}
#endif

#endif
