/* gru_geometry.h - lesson 4's launch constants, read by the kernels (.cu) and by the C fit check. */
#ifndef KERNELS_GRU_GEOMETRY_H
#define KERNELS_GRU_GEOMETRY_H
#define GRU_THREADS 256 /* one thread per (row, hidden unit) element; 8 warps per block */
/* grid = ceil(B*H / GRU_THREADS) blocks in x: B*H must stay below 2^31 (cuda_gru_unfit checks int range) */
#endif
