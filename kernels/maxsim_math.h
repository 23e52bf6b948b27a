/* maxsim_math.h - lesson 3's shared device side: the arithmetic the CPU and CUDA code share (HD), tile sizes
 * (the CPU's and the kernels').
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

/* ms_better for a score v whose column is above the running best's (bv): a fold that visits a row's columns in
 * increasing order (cuda-v5) decides by the values alone -- a greater number, or a NaN over a number, wins; a tie
 * keeps the lower column. One compare that is true for NaN (!(v <= bv)), one that is false for it (bv == bv). */
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

/* ---- tile sizes, read by the CUDA code and by the C side (the fit check and the memory formulas) ---------- */
/* CPU (optimized/maxsim_fused.c): one scores tile is MS_CPU_ROWS rows of a (pairs (i, j)) against up to
 * MS_CPU_COLS rows of b (pairs (m, n)): 256 x 512 floats = 512 KiB, the only trace of the 4-D tensor. */
#define MS_CPU_ROWS 256
#define MS_CPU_COLS 512

/* CUDA tiled kernel (kernels/maxsim_v2.cu): one block per (i, m) computes the [J, N] slab
 * a[i] . b[m]^T in MS_TJ x MS_TN tiles, MS_TK columns of K at a time through shared memory; each thread owns an
 * MS_RJ x MS_RN register tile. */
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

/* CUDA pipelined kernel (kernels/maxsim_v4.cu): one block of 4 warps per (i, m). MS4_TJ rows of a[i] stay in
 * shared memory (all of K, padded to a multiple of MS4_TK, rows padded by MS4_PAD floats) while b[m] streams
 * through MS4_STAGES buffers of MS4_TN rows x MS4_TK columns (rows padded by MS4_PAD); each warp owns a 64 x 64
 * quarter of the MS4_TJ x MS4_TN score tile as 4 x 4 WMMA m16n16k8 fragments. */
#define MS4_TJ 128
#define MS4_TN 128
#define MS4_TK 16
#define MS4_PAD 4
#define MS4_STAGES 3
#define MS4_THREADS 128

/* K rounded up to whole k steps of the pipeline: the columns a[i]'s resident rows hold (zeros past K). */
HD long long ms4_k_padded(long long K) { return (K + MS4_TK - 1) / MS4_TK * MS4_TK; }
/* v4's dynamic shared memory in bytes: the resident rows of a[i], then the pipeline's stages (reused for the
 * final merge of the warps' row maxima). */
HD long long ms4_smem_bytes(long long K)
{
    return 4 * (MS4_TJ * (ms4_k_padded(K) + MS4_PAD) + (long long)MS4_STAGES * MS4_TN * (MS4_TK + MS4_PAD));
}

/* cuda-v8 (kernels/maxsim_v8.cu): v7's pipeline on score tiles twice as wide, MS8_TN rows of b per stage, so its
 * 8 warps each own 64 x 64 scores, and stages of MS8_TK columns (whole 128-byte rows of b per copy), MS8_STAGES
 * of them. a[i]'s rows sit MS8_LDA floats apart whatever K (K <= 256), so its shared memory is the same for every
 * K: 206,848 bytes, within sm_90's 227 KB opt-in and above sm_80's 163 KB (ms8_unfit asks the device, cuda_fit). */
#define MS8_TN 256
#define MS8_TK 32
#define MS8_STAGES 2
#define MS8_LDA (256 + MS4_PAD)
#define MS8_SMEM_BYTES (4 * (MS4_TJ * MS8_LDA + MS8_STAGES * MS8_TN * (MS8_TK + MS4_PAD)))

/* cuda-v9 (kernels/maxsim_v9.cu): v8's blocks, with 8-byte fragment loads, so rows 8 words off a multiple of 32:
 * a stage's rows MS8_TK + MS9_PAD floats apart, a[i]'s MS9_LDA. 217,088 bytes: sm_90 only, as v8. */
#define MS9_PAD 8
#define MS9_LDA (256 + MS9_PAD)
#define MS9_SMEM_BYTES (4 * (MS4_TJ * MS9_LDA + MS8_STAGES * MS8_TN * (MS8_TK + MS9_PAD)))

/* cuda-v1 and the backward kernels: threads per block. */
#define MS_SIMPLE_THREADS 128
/* --deterministic's scan: threads per block (one block per m). The scatter: one warp per m, 8 warps per block,
 * so a block's 8 warps read arg[r, m0 .. m0+8) -- 32 bytes, one sector when M % 8 == 0 -- for the same rows. */
#define MS_SCAN_THREADS 256
#define MS_SCATTER_WARPS 8

#endif
