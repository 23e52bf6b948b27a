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

/* cuda-v3 (kernels/linear_ce_kernels_v3.cu), Cut Cross-Entropy on tensor cores: every logit is computed as part
 * of a [LCE3_TILE_N, LCE3_TILE_V] tile by bf16 WMMA (m16n16k16, fp32 accumulators), H staged through shared
 * memory LCE3_TILE_K columns at a time with 16-byte loads.
 *   forward   one block per row block; it walks every V-tile with an online logsumexp per row
 *   dx        one block per row block (it alone owns those rows of the fp32 dx workspace)
 *   dW        one block per V-tile (it alone owns those rows of dW)
 * The gradient updates dx += G W and dW += G^T x go LCE3_SLAB_H columns of H at a time. */
#define LCE3_WARPS 4
#define LCE3_THREADS (LCE3_WARPS * LCE_WARP)
#define LCE3_WMMA 16    /* the m, n and k of one bf16 WMMA fragment */
#define LCE3_TILE_N 32  /* rows of x per logit tile: 2 fragments */
#define LCE3_TILE_V 64  /* vocabulary rows per logit tile: 4 fragments, one column of fragments per warp */
#define LCE3_TILE_K 64  /* H columns staged per step of the logit GEMM: 4 k-steps; rows of 128 bytes */
#define LCE3_SLAB_H 64  /* H columns of dx or dW updated per step: 4 fragments */
#define LCE3_PAIR 2     /* logit tiles whose G feeds one pass over the fp32 accumulator (halves its traffic) */
/* shared rows padded by 16 bytes (8 bf16, 4 floats): rows stay 32-byte aligned for WMMA at 16-row steps and the
 * same 16 bytes of 8 consecutive rows (what a fragment load reads at once) fall in 8 different bank groups */
#define LCE3_PAD_BF16 8
#define LCE3_PAD_F32 4
#define LCE3_ROW_LANES (LCE3_THREADS / LCE3_TILE_N) /* threads per row in the row passes (4, one warp's quad) */

#endif
