/* maxsim_math.h - lesson 3's shared device side: the arithmetic the CPU and CUDA code share (HD), tile sizes
 * (the CPU's and the kernels').
 *
 * The max rule lives here, once (ms_better), and every implementation -- naive, cpu, cuda-v1, v2, v3 and the
 * float64 reference -- picks its argmax through it. It is PyTorch's rule for max(dim) (checked with torch
 * 1.13 on this machine: x.max(-1) of [1, nan, 3, nan] is (nan, 1); of [inf, 2, inf, nan] is (nan, 3); of four
 * -inf is (-inf, 0)):
 *   - a NaN score wins over any number, so NaN propagates to out with its index; among NaNs the lowest n;
 *   - among equal maxima (+-Inf included) the lowest n wins.
 * It is a total order on (value, n) -- NaN above everything -- so merging partial results in any order gives
 * the same winner, and a running best may start from (-Inf, 0): column 0 is real and its own candidate is
 * never below that seed. PyTorch's CUDA max does not promise which index it returns among ties; this does.
 */
#ifndef KERNELS_MAXSIM_MATH_H
#define KERNELS_MAXSIM_MATH_H

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

/* ms_better for a score v whose column is above the running best's (bv): a fold that visits a row's columns
 * in increasing order (cuda-v4, v5) decides by the values alone -- a greater number, or a NaN over a number,
 * wins; a tie keeps the lower column. One compare true for NaN (!(v <= bv)), one false for it (bv == bv). */
HD int ms_later_wins(float v, float bv) { return !(v <= bv) & (bv == bv); } /* & : no branch */

/* <x, y> over K, accumulated in float in the order k = 0 .. K-1 (cuda-v1 and the CPU's tail loops). */
HD float ms_dot(const float *x, const float *y, long long K)
{
    float s = 0.0f;
    for (long long k = 0; k < K; k++) {
        s += x[k] * y[k];
    }
    return s;
}

/* g[0..K) += w * x[0..K): one term of the gather (da) or the scatter (db). */
HD void ms_axpy(float w, const float *x, float *g, long long K)
{
    for (long long k = 0; k < K; k++) g[k] += w * x[k];
}

/* ---- tile sizes, read by the CUDA code and by the C side (the fit check and the memory formulas) ------- */
/* CPU (optimized/maxsim_fused.c): one scores tile is MS_CPU_ROWS rows of a (pairs (i, j)) against up to
 * MS_CPU_COLS rows of b (pairs (m, n)): 256 x 512 floats = 512 KiB, the only trace of the 4-D tensor. */
#define MS_CPU_ROWS 256
#define MS_CPU_COLS 512

/* CUDA tiled kernel (kernels/maxsim_v2.cu): one block per (i, m) computes the [J, N] slab
 * a[i] . b[m]^T in MS_TJ x MS_TN tiles, MS_TK columns of K at a time through shared memory; each thread owns
 * an MS_RJ x MS_RN register tile. */
#define MS_TJ 64
#define MS_TN 64
#define MS_TK 16
#define MS_RJ 4
#define MS_RN 4
#define MS_THREADS ((MS_TJ / MS_RJ) * (MS_TN / MS_RN)) /* 256 */

/* CUDA tensor-core kernel (kernels/maxsim_v3.cu): one block of 4 warps per (i, m) computes the [J, N]
 * slab in MS3_TJ x MS3_TN score tiles, K in steps of MS3_TK staged in shared memory rows padded by MS3_PAD
 * floats; each warp owns a 32 x 32 quarter of the tile as 2 x 2 WMMA m16n16k8 fragments. */
#define MS3_TJ 64
#define MS3_TN 64
#define MS3_TK 32
#define MS3_PAD 4
#define MS3_THREADS 128

/* cuda-v1 and the backward kernels: threads per block. */
#define MS_SIMPLE_THREADS 128
/* --deterministic's scan: threads per block (one block per m). The scatter: one warp per m, 8 warps per
 * block, so a block's 8 warps read arg[r, m0 .. m0+8) (32 bytes, one sector when M % 8 == 0) of one row. */
#define MS_SCAN_THREADS 256
#define MS_SCATTER_WARPS 8

#endif
