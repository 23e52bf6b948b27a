/* linear_ce_geometry.h - launch constants of lesson 5's kernels, read by the .cu files and the C fit check. */
#ifndef KERNELS_LINEAR_CE_GEOMETRY_H
#define KERNELS_LINEAR_CE_GEOMETRY_H

#define LCE_ROW_THREADS 256  /* one block per row of logits; 8 warps */
#define LCE_WARP 32
#define LCE_SCALE_THREADS 256 /* elementwise kernels */

#endif
