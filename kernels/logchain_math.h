/* logchain_math.h - lesson 2's device side: the arithmetic of the recursions, shared by the CPU code and the
 * CUDA kernels (HD), and the kernels' launch geometry.
 *
 * Every step of the forward algorithm is a log-space vector x matrix product:
 *     out[k] = add[k] + log sum_j exp(a[j]) P[j, k]
 * computed as  add[k] + m + log sum_j exp(a[j] - m) P[j, k]  with m >= max_j a[j]: the exponentials are in
 * (0, 1], P is in (0, 1), so the sum neither overflows nor (for the largest term) underflows. This is the
 * logsumexp over j of a[j] + log P[j, k] without taking the log of P at all: valid because P is positive and
 * finite (a general log-semiring matrix with -inf entries would need log P and a per-element online max).
 *
 * The GPU kernel reads j in tiles and keeps a running maximum (an online logsumexp, as flash attention does):
 * when a tile raises the maximum from m_old to m_new, the partial sums are multiplied by exp(m_old - m_new).
 */
#ifndef KERNELS_LOGCHAIN_MATH_H
#define KERNELS_LOGCHAIN_MATH_H

#include <math.h>
#include "runtime/hd.h"

/* exp(a - m), the weight of a log value a under the shift m (m is the running max, so the result is in (0,
 * 1]) */
HD float lc_weight(float a, float m) { return expf(a - m); }

/* The step's log result from the shifted sum s = sum_j exp(a[j] - m) P[j, k]. */
HD float lc_finish(float add, float m, float s) { return add + m + logf(s); }

/* Factor that rescales partial sums taken under the old max when the max grows (0 when nothing was
 * summed). */
HD float lc_rescale(float m_old, float m_new) { return m_old == -INFINITY ? 0.0f : expf(m_old - m_new); }

/* Posterior marginal exp(alpha + beta - log Z): the probability that a path passes through this state. */
HD float lc_posterior(float alpha, float beta, float logz) { return expf(alpha + beta - logz); }

/* One term of the transition gradient: exp(alpha_i[j] + x_{i+1}[k] + beta_{i+1}[k] - log Z), i.e. the
 * expected count of the transition j -> k divided by P[j, k] (the P of the path weight cancels against
 * d/dP). */
HD float lc_transition_term(float alpha_j, float g_k, float logz) { return expf(alpha_j + g_k - logz); }

/* ---- launch geometry: read by the kernels and by the C fit check (cuda_lc_dims_fit_v2), so they never
 * disagree */
/* v1 */
#define LC1_TILE 32      /* j and k tile: one warp spans a tile row */
#define LC1_ROWS 8       /* batch rows per block in log_vecmat_kernel; blockDim = (LC1_TILE, LC1_ROWS) */
#define LC1_EW_BLOCK 256 /* elementwise kernels (alpha_init, posterior, logz: 8 warps) */
#define LC1_DP0_BLOCK 128

/* v2: one warp per row (b, s); LC2_ROWS warps per block; grid (ceil(n / LC2_ROWS), t) */
#define LC2_ROWS 8
#define LC2_BLOCK (32 * LC2_ROWS)
#define LC2_DP0_BLOCK 128 /* dp0: grid (ceil(c / LC2_DP0_BLOCK), t) */

/* v4: one persistent block per LC4_ROWS rows (b, s) walks the whole chain; grid (ceil(n / LC4_ROWS), t). A
 * lane owns the states k = lane + 32 q, q < LC4_KQ, so c <= LC4_MAX_C; the block's LC4_WARPS warps split each
 * step's sum over j (forward) or its outputs j (backward). */
#define LC4_ROWS 4
#define LC4_WARPS 8
#define LC4_BLOCK (32 * LC4_WARPS)
#define LC4_KQ 8
#define LC4_JU 4 /* forward: rows of P_i a warp loads before it uses them */
#define LC4_MAX_C (32 * LC4_KQ)
#define LC4_DP0_BLOCK 128

/* v5: v4's split (a block of LC5_WARPS warps owns LC5_ROWS rows, the warps take P_i's rows j in turn); a lane
 * keeps the states k = 4 lane + 128 h + e, h < LC5_KH, e < 4 (16-byte loads); each warp's next rows of P in
 * its own ring of LC5_AHEAD rows in shared memory, filled by cp.async; between walks one thread per state k
 * (so c <= LC5_BLOCK = LC5_MAX_C) */
#define LC5_ROWS 4 /* = the floats of a 16-byte word: a state's LC5_ROWS values are one shared-memory load */
#define LC5_WARPS 8
#define LC5_BLOCK (32 * LC5_WARPS)
#define LC5_KH 2
#define LC5_MAX_C (128 * LC5_KH)
#define LC5_AHEAD 8 /* ring slots per warp: the row in use and 7 on their way */
#define LC5_DP0_ROWS 32 /* dp0: a block of 32 states x LC5_DP0_ROWS row strides */

#define LC_MAX_GRID_X 2147483647LL
#define LC_MAX_GRID_YZ 65535LL

#endif
