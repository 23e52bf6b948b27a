/* logchain_geometry.h - lesson 2's launch geometry, read by the kernels (.cu) and by the C fit check
 * (cuda_lc_dims_fit in optimized/logchain_forward.c), so the two never disagree. Plain C. */
#ifndef KERNELS_LOGCHAIN_GEOMETRY_H
#define KERNELS_LOGCHAIN_GEOMETRY_H

/* v1 */
#define LC1_TILE 32      /* j and k tile: one warp spans a tile row */
#define LC1_ROWS 8       /* batch rows per block in log_vecmat_kernel; blockDim = (LC1_TILE, LC1_ROWS) */
#define LC1_EW_BLOCK 256 /* elementwise kernels (alpha_init, posterior, logz: 8 warps) */
#define LC1_DP0_BLOCK 128

/* v2: one warp per row (b, s); LC2_ROWS warps per block; grid (ceil(n / LC2_ROWS), t) */
#define LC2_ROWS 8
#define LC2_BLOCK (32 * LC2_ROWS)
#define LC2_DP0_BLOCK 128 /* dp0: grid (ceil(c / LC2_DP0_BLOCK), t) */

#define LC_MAX_GRID_X 2147483647LL
#define LC_MAX_GRID_YZ 65535LL

#endif
