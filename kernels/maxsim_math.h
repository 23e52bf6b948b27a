/* maxsim_math.h - the arithmetic lesson 3's CPU and CUDA implementations share (HD: host and device).
 *
 * The max rule lives here, once (ms_better), and every implementation -- naive, cpu, cuda-v1, v2, v3 and the
 * float64 reference -- picks its argmax through it. It is PyTorch's rule for max(dim) (checked with torch 1.13
 * on this machine: x.max(-1) of [1, nan, 3, nan] is (nan, 1); of [inf, 2, inf, nan] is (nan, 3); of four -inf is
 * (-inf, 0)):
 *   - a NaN score wins over any number, so NaN propagates to out with its index; among NaNs the lowest n wins;
 *   - among equal maxima (+-Inf included) the lowest n wins.
 * It is a total order on (value, n) -- NaN above everything -- so merging partial results in any order gives
 * the same winner, and a running best may start from (-Inf, 0): column 0 is real and its own candidate is never
 * below that seed. PyTorch's CUDA max does not promise which index it returns among ties; this lesson does.
 */
#ifndef KERNELS_MAXSIM_MATH_H
#define KERNELS_MAXSIM_MATH_H

#include "runtime/dry_skip.h"
#include "runtime/hd.h"

/* 1 when score v at column n beats the running best bv at column bn. double, so the float64 reference calls
 * the same function; float scores convert exactly. (x != x) is isnan without <math.h> on either side. */
HD int ms_better(double v, long long n, double bv, long long bn)
{
    int vnan = v != v, bnan = bv != bv;
    if (vnan || bnan) return vnan && (!bnan || n < bn);
    return v > bv || (v == bv && n < bn);
}

/* The kernels' inner loops: a score plainly below the best (no NaN on either side) is decided by one float
 * compare; anything else goes to the rule. Same answers as ms_better, without a float-to-double conversion
 * per score on the GPU. */
HD int ms_better_f(float v, int n, float bv, int bn) { return !(v < bv) && ms_better(v, n, bv, bn); }

/* <x, y> over K, accumulated in float in the order k = 0 .. K-1 (cuda-v1 and the CPU's tail loops). */
HD float ms_dot(const float *x, const float *y, long long K)
{
    float s = 0.0f;
    for (long long k = 0; k < K; k++) {
        EMU_DRY_SKIP(k, 0, K, 1); /* K terms per dot: a dry run runs the boundary ones (dry_skip.h) */
        s += x[k] * y[k];
    }
    return s;
}

/* g[0..K) += w * x[0..K): one term of the gather (da) or the scatter (db). */
HD void ms_axpy(float w, const float *x, float *g, long long K)
{
    for (long long k = 0; k < K; k++) g[k] += w * x[k];
}

#endif
