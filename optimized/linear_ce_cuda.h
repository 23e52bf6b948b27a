/* linear_ce_cuda.h - lesson 5's CUDA versions as C sees them: each version's entry points (kernels/
 * linear_ce_vN.cu) and its workspace layout, memory formula and size check
 * (optimized/linear_ce_cuda_memory.c, plain C: the driver predicts them without nvcc). Pointers are device
 * pointers; forward allocates and returns loss (1,) f32 and fills the saved state, backward allocates (v2-v4)
 * or hands over (v1) *dx (N, H) bf16 and *dW (V, H) f32. */
#ifndef OPTIMIZED_LINEAR_CE_CUDA_H
#define OPTIMIZED_LINEAR_CE_CUDA_H

#include <stdint.h>
#include <stdio.h>
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

/* ---- cuda-v1: cuBLAS GEMMs and a fused row kernel per chunk of rows (kernels/linear_ce_v1.cu) -----------
 * forward   grad_weight (V, H) f32 and grad_input (N, H) bf16 computed and kept; one workspace block:
 *           logits (chunk, V) f32 (row r's bf16 gradient written over its first half), row losses (N,),
 *           1/n_valid; cuBLAS's own workspace beside it
 * backward  both gradients times dloss in place, handed over as dx and dW */
typedef struct {
    float *grad_weight; /* (V, H) f32 */
    bf16 *grad_input;   /* (N, H) bf16 */
} lce1_saved;
float *lce1_forward(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target, lce1_saved *s);
void lce1_backward(const lce_dims *d, lce1_saved *s, const float *dloss, bf16 **dx, float **dW);
typedef struct {
    /* (chunk, V) f32 logits; the row kernel writes row r's bf16 gradient over its first half */
    float *logits;
    float *row_loss; /* (N,) f32 each row's loss (0 for ignored rows), summed at the end */
    float *scale;    /* (1,) f32 1 / n_valid, counted on the device */
} lce1_workspace;
void lce1_carve(arena *a, const lce_dims *d, lce1_workspace *w);
size_t lce1_workspace_bytes(const lce_dims *d);
mem_formula lce1_memory(const lce_dims *d);
const char *lce1_unfit(const lce_dims *d); /* NULL when the sizes fit cuBLAS's int arguments and the grid */
/* d with chunk = d->cuda_chunk (when set): what v1, its workspace and its formula run with */
lce_dims lce_cuda_dims(const lce_dims *d);
/* cuda_track.h's CUBLAS_WORKSPACE_BYTES, restated so the C formula needs no CUDA header (a static_assert in
 * kernels/linear_ce_v1.cu holds them equal) */
#define CUBLAS_WORKSPACE_BYTES_C ((size_t)32 << 20)

/* v1's chunk, chosen by a model of its traffic. Per chunk of c rows the loop runs three GEMMs of 2 c V H
 * flops each and one row pass; each is timed as max(flops / F, bytes / B), a roofline:
 *     logits   reads W (2VH) and x_c (2cH), writes the f32 logits (4cV)
 *     row pass reads the logits (4cV), writes the bf16 gradient over them (2cV)
 *     dx       reads g (2cV) and W (2VH), writes dx_c (2cH)
 *     dW       reads g (2cV) and x_c (2cH), and reads + writes the f32 dW: 2 V H 4 bytes, whatever c is
 * The logits traffic sums to 14 N V bytes for any c; W's reads and dW's read-modify-write are paid once per
 * chunk, so small chunks multiply them. The choice: the smallest chunk (a power of two, or N) whose modeled
 * time is within LCE_CHUNK_SLACK of one chunk of all N rows. F and B: the dense bf16 tensor rate and the DRAM
 * bandwidth of the GPU the report targets (docs/lesson-5.md). */
#define LCE_MODEL_FLOPS 989e12  /* flop/s, bf16 tensor cores, dense */
#define LCE_MODEL_BYTES 3.35e12 /* byte/s, DRAM */
#define LCE_CHUNK_SLACK 0.05
typedef struct {
    double ms;           /* modeled time of the chunk loop (forward: logits, rows, dx, dW) */
    double bytes;        /* its DRAM traffic */
    double dw_rmw_bytes; /* of which dW's read-modify-write: chunks * 2 V H 4 */
    double logits_bytes; /* the logits buffer: c V 4 */
} lce_chunk_cost;
lce_chunk_cost lce_chunk_model(size_t N, size_t H, size_t V, size_t chunk);
size_t lce_model_chunk(size_t N, size_t H, size_t V);
void lce_print_chunk_choice(const lce_dims *d, FILE *f); /* the chosen chunk and the model's figures */

/* ---- cuda-v2: Cut Cross-Entropy, no logits buffer, scalar dots (kernels/linear_ce_v2.cu) ----------------
 * forward   lse (N,) saved; workspace: row losses (N,), 1/n_valid; freed before forward returns
 * backward  dx, dW and 1/n_valid recounted (1,); lse and it freed last */
float *lce2_forward(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target,
                    lce_cuda_saved *s);
void lce2_backward(const lce_dims *d, lce_cuda_saved *s, const float *dloss, bf16 **dx, float **dW);
typedef struct {
    float *row_loss; /* (N,) f32 each row's loss (0 for ignored rows), summed into the loss */
    float *scale;    /* (1,) f32 1 / n_valid */
} lce2_forward_workspace;
void lce2_carve_forward(arena *a, const lce_dims *d, lce2_forward_workspace *w);
mem_formula lce2_memory(const lce_dims *d);
const char *lce2_unfit(const lce_dims *d); /* int indexing, the grid, the dx kernel's shared memory */

/* ---- cuda-v3: Cut Cross-Entropy on WMMA tensor cores (kernels/linear_ce_v3.cu) --------------------------
 * forward   v2's: lse (N,) saved, the same workspace
 * backward  one workspace block: dx_acc (N, H) f32 (dx summed by the block owning the rows, rounded once),
 *           1/n_valid recounted, two skipped-tile counters; freed with lse before backward returns */
float *lce3_forward(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target,
                    lce_cuda_saved *s);
void lce3_backward(const lce_dims *d, int filter, lce_cuda_saved *s, const float *dloss, bf16 **dx,
                   float **dW);
typedef struct {
    float *dx_acc;     /* (N, H) f32 dx summed over V-tiles; rows owned by one block each */
    float *scale;      /* (1,) f32 1 / n_valid, recounted */
    unsigned *skipped; /* (2,) u32 tiles skipped by the filter: [0] in the dx kernel, [1] in the dW kernel */
} lce3_backward_workspace;
void lce3_carve_backward(arena *a, const lce_dims *d, lce3_backward_workspace *w);
mem_formula lce3_memory(const lce_dims *d);
const char *lce3_unfit(const lce_dims *d); /* int indices and tile loops */
/* what --filter did in the last lce3_backward: [32, 64] logit tiles per gradient kernel, those skipped */
typedef struct {
    int filter;
    unsigned long long tiles; /* ceil(N / 32) * ceil(V / 64) per kernel */
    unsigned skipped_dx, skipped_dw;
} lce3_filter_count;
lce3_filter_count lce3_last_filter(void);

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
