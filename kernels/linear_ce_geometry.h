/* linear_ce_geometry.h - launch constants of lesson 5's kernels, read by the .cu files and the C fit check. */
#ifndef KERNELS_LINEAR_CE_GEOMETRY_H
#define KERNELS_LINEAR_CE_GEOMETRY_H

#define LCE_ROW_THREADS 256  /* one block per row of logits; 8 warps */
#define LCE_WARP 32
#define LCE_SCALE_THREADS 256 /* elementwise kernels */

/* cuda-v2 (kernels/linear_ce_kernels_v2.cu), the Cut Cross-Entropy way: no logits buffer at all.
 *   forward   one block of LCE2_THREADS per row; thread i takes logits v = i, i + LCE2_THREADS, ...
 *   dx        one block per row; logits in blocks of LCE2_THREADS (one per thread), then the block adds that
 *             block's g . W into an fp32 accumulator of H floats in dynamic shared memory
 *   dW        one block per tile of LCE2_TILE_V vocabulary rows (it alone writes them: no atomics), looping over
 *             the rows of x in tiles of LCE2_TILE_N; the g tile [LCE2_TILE_N, LCE2_TILE_V] lives in shared memory */
#define LCE2_THREADS 128
#define LCE2_TILE_V 32
#define LCE2_TILE_N 32
/* dynamic shared memory a block may use without opting in (sm_80 and sm_90 alike); the dx kernel needs 4 H bytes */
#define LCE2_SMEM_LIMIT (48 * 1024)
#define LCE2_DX_SMEM_BYTES(H) ((size_t)(H) * sizeof(float))

#endif
