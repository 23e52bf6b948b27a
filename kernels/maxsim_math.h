/* maxsim_math.h - the arithmetic lesson 3's CPU and CUDA implementations share (HD: host and device).
 *
 * The tie rule lives here, once: among equal maxima the lowest n wins. Every implementation scans or merges
 * candidates through ms_better, so naive, cpu, cuda-v1 and the tiled cuda kernel pick the same argmax even when
 * two scores are exactly equal, in whatever order a kernel happens to visit the candidates (the rule is a total
 * order on (value, n), so merging partial results in any order gives the same winner). PyTorch's CPU max also
 * returns the first index; its CUDA kernel does not promise which one (the doc says so).
 */
#ifndef KERNELS_MAXSIM_MATH_H
#define KERNELS_MAXSIM_MATH_H

#include "runtime/hd.h"

/* 1 when score v at column n beats the running best bv at column bn: greater, or equal with a lower n. */
HD int ms_better(float v, long long n, float bv, long long bn) { return v > bv || (v == bv && n < bn); }

/* <x, y> over K, accumulated in float in the order k = 0 .. K-1 (cuda-v1 and the CPU's tail loops). */
HD float ms_dot(const float *x, const float *y, long long K)
{
    float s = 0.0f;
    for (long long k = 0; k < K; k++) s += x[k] * y[k];
    return s;
}

/* g[0..K) += w * x[0..K): one term of the gather (da) or the scatter (db). */
HD void ms_axpy(float w, const float *x, float *g, long long K)
{
    for (long long k = 0; k < K; k++) g[k] += w * x[k];
}

#endif
