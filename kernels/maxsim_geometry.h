/* maxsim_geometry.h - tile sizes of lesson 3's fused kernels, read by the CUDA code and by the C side (the fit
 * check and the memory formulas), so the two can never disagree.
 */
#ifndef KERNELS_MAXSIM_GEOMETRY_H
#define KERNELS_MAXSIM_GEOMETRY_H

/* CPU (optimized/maxsim_fused.c): one scores tile is MS_CPU_ROWS rows of a (pairs (i, j)) against up to
 * MS_CPU_COLS rows of b (pairs (m, n)): 256 x 512 floats = 512 KiB, the only trace of the 4-D tensor. */
#define MS_CPU_ROWS 256
#define MS_CPU_COLS 512

/* CUDA tiled kernel (kernels/maxsim_kernels.cu, v2): one block per (i, m) computes the [J, N] slab
 * a[i] . b[m]^T in MS_TJ x MS_TN tiles, MS_TK columns of K at a time through shared memory; each thread owns an
 * MS_RJ x MS_RN register tile. */
#define MS_TJ 64
#define MS_TN 64
#define MS_TK 16
#define MS_RJ 4
#define MS_RN 4
#define MS_THREADS ((MS_TJ / MS_RJ) * (MS_TN / MS_RN)) /* 256 */

/* CUDA tensor-core kernel (kernels/maxsim_kernels_v3.cu): one block of 4 warps per (i, m) computes the [J, N]
 * slab in MS3_TJ x MS3_TN score tiles, K in steps of MS3_TK staged in shared memory rows padded by MS3_PAD
 * floats; each warp owns a 32 x 32 quarter of the tile as 2 x 2 WMMA m16n16k8 fragments. */
#define MS3_TJ 64
#define MS3_TN 64
#define MS3_TK 32
#define MS3_PAD 4
#define MS3_THREADS 128

/* cuda-v1 and the backward kernels: threads per block. */
#define MS_SIMPLE_THREADS 128
/* --deterministic's scan: threads per block (one block per m). The scatter: one warp per m, 8 warps per block,
 * so a block's 8 warps read arg[r, m0 .. m0+8) -- 32 bytes, one sector when M % 8 == 0 -- for the same rows. */
#define MS_SCAN_THREADS 256
#define MS_SCATTER_WARPS 8

#endif
