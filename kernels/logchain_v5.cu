/* logchain_v5.cu - lesson 2, cuda-v5: v4's persistent walk, rebuilt so that a step issues little besides its
 * multiply-adds and its rows of P are on their way long before they are used. Changed from v4: a cp.async
 * ring of P's rows per warp, no clamps in the walk, one thread per state between walks, a transposing
 * shuffle reduction in the backward, and a tiled dp0 kernel. */
#include "logchain_math.h"
#include "logchain_device.h"
#include "logchain_problem.h"

#include <cuda_pipeline_primitives.h>
#include <stdio.h>

#include "runtime/cublas_rowmajor.h"
#include "runtime/cuda_check.h"
#include "runtime/cuda_fit.h"
#include "runtime/cuda_track.h"
#include "runtime/launch.h"

/* v4's counts (docs/lesson-2.md) show its forward issuing more integer than FP32 instructions, and every warp
 * waiting for L2 a few rows of P_i at a time. v5 keeps v4's split of the work: a block owns LC5_ROWS rows (b,
 * s) and walks all v - 1 steps; LC5_WARPS warps take P_i's rows j = warp + LC5_WARPS u in turn. It changes
 * four things:
 *   - each warp copies its own next rows of P into a ring of LC5_AHEAD slots in shared memory (cp.async), 7
 *     rows
 *     ahead of the one it multiplies, and the ring runs on across steps (P does not depend on the recursion),
 *     so
 *     the next step's first rows arrive while this one finishes. The ring is the warp's own: no block barrier
 *     per row, one __syncwarp;
 *   - no clamps or selects in the walk: a lane keeps the states k = 4 lane + 128 h + e (16-byte loads of a
 *     row),
 *     its test k < c made once; a warp's rows stop at c for the whole warp;
 *   - between walks, one thread per state: thread k finishes state k of all LC5_ROWS rows (no e / c), and a
 *     state's LC5_ROWS weights are one 16-byte word, so a walk reads row j's weights in one broadcast load;
 *   - the backward sums a row's LC5_ROWS outputs over the lanes in one transposing reduction, 5 shuffles (v4:
 *     6 for a row's 4 outputs over 4 rows j at once, with a select per element on the way in).
 * And dp0, a sum over the n rows that v2's kernel walks one thread per state, by 32 x 32 threads per block.
 *   lc5_forward_kernel   alpha_0 .. alpha_{v-1} and log Z, one launch
 *   lc5_backward_kernel  beta, dx written over alpha, and each step's dbulk operands U_i, W_i; then v4's
 *                        strided-batched GEMM dbulk_{s,i} = U^T W over every (s, i), and lc5_dp0_kernel
 * Its target and the time model's figures: docs/lesson-2.md. What bounds it: the walks are bound by the SM's
 * memory pipe, since each element of P_i serves only 4 multiply-adds (4 rows a block) and passes the pipe
 * three times (L1, into shared memory, out of it), and the dbulk GEMM alone takes a quarter of the pass by
 * the model's cuBLAS. The arithmetic is logchain_math.h's. */

static_assert(LC5_ROWS == 4, "a state's rows are the 4 floats of a float4");
static_assert(LC5_MAX_C == LC5_BLOCK, "between walks a thread owns one state");
static_assert(LC5_MAX_C == LC4_MAX_C && LC5_ROWS == LC4_ROWS, "v4's fit check and grid are v5's");
static_assert(LC5_AHEAD >= 2, "a ring: the row in use and at least one on its way");

/* c rounded up to whole 16-byte words: the row stride of the ring's slots and of the per-row buffers */
__host__ __device__ static inline int lc5_stride(int c) { return (c + 3) / 4 * 4; }

struct lc5_max {
    __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct lc5_add {
    __device__ float operator()(float a, float b) const { return a + b; }
};

/* Lane l ends with the reduction over the warp of v[l / (32 / N)]: each exchange halves the values a lane
 * keeps, N - 1 shuffles while there are two or more, then one per remaining halving. */
template <int N, class Op> __device__ static inline float lc5_lanes_reduce(float (&v)[N], int lane, Op op)
{
    int off = 16;
    for (int h = N / 2; h >= 1; h /= 2, off /= 2) {
        bool up = lane & off;
        for (int i = 0; i < h; i++) {
            float keep = up ? v[i + h] : v[i], give = up ? v[i] : v[i + h];
            v[i] = op(keep, __shfl_xor_sync(0xffffffffu, give, off));
        }
    }
    for (; off > 0; off /= 2) v[0] = op(v[0], __shfl_xor_sync(0xffffffffu, v[0], off));
    return v[0];
}

/* out[r] = the reduction of v[r] over the block's threads, in every thread: in the warp, then the warps'
 * partials through red (LC5_WARPS float4). One barrier inside; red may be written again after the caller's
 * next barrier. */
template <class Op> __device__ static inline void
lc5_block_reduce(const float (&v)[LC5_ROWS], float4 *red, int warp, int lane, Op op, float (&out)[LC5_ROWS])
{
    float w[LC5_ROWS] = {v[0], v[1], v[2], v[3]};
    float r = lc5_lanes_reduce(w, lane, op);
    if (lane % 8 == 0) ((float *)&red[warp])[lane / 8] = r;
    __syncthreads();
    float4 p = red[0];
    out[0] = p.x, out[1] = p.y, out[2] = p.z, out[3] = p.w;
    for (int i = 1; i < LC5_WARPS; i++) {
        p = red[i];
        out[0] = op(out[0], p.x), out[1] = op(out[1], p.y), out[2] = op(out[2], p.z),
        out[3] = op(out[3], p.w);
    }
}

/* A warp's rows of P in the order its pass reads them: step after step (0 up or v-2 down), in a step its rows
 * j = warp + LC5_WARPS u, u < rows. Row g of that order is copied by cp.async into slot g % LC5_AHEAD of the
 * warp's own ring, LC5_AHEAD - 1 rows ahead of its use. A slot is a row padded to lc5_stride(c) floats, the
 * pad zero. Every lane commits one group per row it asks for, copied or not, so "the newest LC5_AHEAD - 2
 * groups may be pending" means the same row in every lane. Cursors are pointers moved by constant strides: no
 * division. */
struct lc5_ring {
    float *base, *end;        /* (LC5_AHEAD, cs) this warp's slots */
    /* the slot of the next row to use; of the next row to copy (the one used before) */
    float *use, *fill;
    const float *src;         /* the next row to copy */
    long long row_stride;     /* LC5_WARPS c: from a warp's row to its next in P_i */
    /* from a step's last row to the next step's first: +-c^2 - (rows - 1) row_stride */
    long long step_jump;
    int cs, rows, lane, c;
    int left_in_step, steps;  /* the rows still to copy in the step being copied, and the steps (with it) */
    bool in[LC5_KH];          /* lane's 16-byte word h starts below c */

    __device__ lc5_ring(float *ring, const float *Ps, int c_, int v, int backward, int warp, int lane_)
    {
        c = c_, lane = lane_, cs = lc5_stride(c);
        base = ring + (long long)warp * LC5_AHEAD * cs, end = base + LC5_AHEAD * cs, use = fill = base;
        rows = c > warp ? (c - warp + LC5_WARPS - 1) / LC5_WARPS : 0;
        row_stride = (long long)LC5_WARPS * c;
        step_jump = (backward ? -1LL : 1LL) * c * c - (rows - 1) * row_stride;
        src = Ps + (backward ? (long long)(v - 2) * c * c : 0) + (long long)warp * c;
        left_in_step = rows, steps = rows > 0 ? v - 1 : 0;
        for (int h = 0; h < LC5_KH; h++) in[h] = 4 * lane + 128 * h < c;
        for (float *slot = base; slot < end; slot += cs)
            if (c + lane < cs) slot[c + lane] = 0.0f;
        for (int d = 0; d < LC5_AHEAD - 1; d++) copy();
    }
    /* the next row to copy into slot `fill`, if the pass has one; then this lane's group for it */
    __device__ void copy()
    {
        if (steps > 0) {
            if (c % 4 == 0) { /* P's rows and the slots 16-byte aligned: a lane's two words */
                for (int h = 0; h < LC5_KH; h++)
                    if (in[h])
                        __pipeline_memcpy_async(fill + 4 * lane + 128 * h, src + 4 * lane + 128 * h, 16);
            } else {
                for (int e = lane; e < c; e += 32) __pipeline_memcpy_async(fill + e, src + e, 4);
            }
            if (--left_in_step > 0) src += row_stride; /* src stays inside P */
            else if (--steps > 0) left_in_step = rows, src += step_jump;
        }
        __pipeline_commit();
        fill = fill + cs == end ? base : fill + cs;
    }
    /* the next row of the pass, landed and visible to the whole warp; the slot of the row before it (every
     * lane is done with it) takes the row LC5_AHEAD - 1 further on */
    __device__ const float *next()
    {
        __pipeline_wait_prior(LC5_AHEAD - 2);
        __syncwarp();
        copy();
        const float *row = use;
        use = use + cs == end ? base : use + cs;
        return row;
    }
};

/* lane's 16-byte words of a padded row (4 lane + 128 h), 0 where they start past c */
__device__ static inline void lc5_row_words(const float *row, const bool (&in)[LC5_KH], int lane,
                                            float4 (&p)[LC5_KH])
{
    for (int h = 0; h < LC5_KH; h++)
        p[h] = in[h] ? *(const float4 *)(row + 4 * lane + 128 * h) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
}

/* Block (bx, s) owns rows b = bx LC5_ROWS + r, r < LC5_ROWS, of chain position s; in the walk lane owns the
 * states 4 lane + 128 h + e, between walks thread k owns state k of all rows. Rows past n compute on -inf and
 * store nothing, so every thread meets every barrier. */
__global__ void lc5_forward_kernel(int n, int c, int t, int v, const float *x, const float *bulk,
                                   const float *p0, float *alpha, float *out)
{
    /* x, alpha (n, t, v, c); bulk (1, t, v-1, c, c); p0 (1, t, c); out (n, t) */
    DYNAMIC_SHARED(float4, smem);
    int cs = lc5_stride(c);
    /* (c) state j's weights exp(alpha_i - m_i), one float per row */
    float4 *sW = smem;
    float4 *sRed = sW + c;                        /* (LC5_WARPS) the warps' maxima, then sums */
    /* (LC5_WARPS, LC5_ROWS, cs) each warp's share of the sums */
    float *sPart = (float *)(sRed + LC5_WARPS);
    float *sRing = sPart + LC5_WARPS * LC5_ROWS * cs; /* (LC5_WARPS, LC5_AHEAD, cs) the warps' rings */
    int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, s = blockIdx.y, k = tid;
    /* ld: x's and alpha's b stride */
    long long b0 = (long long)blockIdx.x * LC5_ROWS, ld = (long long)t * v * c;
    const float *xs = x + (b0 * t + s) * v * c + k;  /* row r's x_i[k] at xs + r ld + i c */
    float *as = alpha + (b0 * t + s) * v * c + k;
    const float *Ps = bulk + (long long)s * (v - 1) * c * c; /* P_i at Ps + i c^2 */
    /* k < c and row b0 + r < n: this thread stores */
    bool mine[LC5_ROWS];
    for (int r = 0; r < LC5_ROWS; r++) mine[r] = k < c && b0 + r < n;
    lc5_ring ring(sRing, Ps, c, v, 0, warp, lane); /* step 0's first rows start now */
    const bool(&in)[LC5_KH] = ring.in;

    float a[LC5_ROWS], m[LC5_ROWS], w[LC5_ROWS];
    for (int r = 0; r < LC5_ROWS; r++) {
        a[r] = -INFINITY;
        if (mine[r]) {
            a[r] = logf(p0[(long long)s * c + k]) + xs[r * ld];
            as[r * ld] = a[r];
        }
    }
    lc5_block_reduce(a, sRed, warp, lane, lc5_max(), m);
    for (int r = 0; r < LC5_ROWS; r++) w[r] = lc_weight(a[r], m[r]);
    if (k < c) sW[k] = make_float4(w[0], w[1], w[2], w[3]);
    __syncthreads();

    for (int i = 0; i < v - 1; i++) {
        float xn[LC5_ROWS]; /* x_{i+1}[k], loaded now, used after the walk */
        for (int r = 0; r < LC5_ROWS; r++) xn[r] = mine[r] ? xs[r * ld + (long long)(i + 1) * c] : 0.0f;

        float acc[LC5_ROWS][LC5_KH][4] = {}; /* S[r][4 lane + 128 h + e], this warp's rows j only */
        for (int u = 0; u < ring.rows; u++) {
            float4 p[LC5_KH];
            lc5_row_words(ring.next(), in, lane, p);
            float4 wj = sW[warp + LC5_WARPS * u]; /* one word for the whole warp */
            float wr[LC5_ROWS] = {wj.x, wj.y, wj.z, wj.w};
            for (int r = 0; r < LC5_ROWS; r++)
                for (int h = 0; h < LC5_KH; h++) {
                    acc[r][h][0] += wr[r] * p[h].x;
                    acc[r][h][1] += wr[r] * p[h].y;
                    acc[r][h][2] += wr[r] * p[h].z;
                    acc[r][h][3] += wr[r] * p[h].w;
                }
        }
        for (int r = 0; r < LC5_ROWS; r++)
            for (int h = 0; h < LC5_KH; h++)
                if (in[h])
                    *(float4 *)(sPart + (warp * LC5_ROWS + r) * cs + 4 * lane + 128 * h) =
                        make_float4(acc[r][h][0], acc[r][h][1], acc[r][h][2], acc[r][h][3]);
        __syncthreads(); /* every warp's share is in, and every read of sW is done */

        if (k < c)
            for (int r = 0; r < LC5_ROWS; r++) {
                float S = 0.0f;
                for (int wp = 0; wp < LC5_WARPS; wp++) S += sPart[(wp * LC5_ROWS + r) * cs + k];
                a[r] = -INFINITY;
                if (mine[r]) {
                    a[r] = lc_finish(xn[r], m[r], S);
                    as[r * ld + (long long)(i + 1) * c] = a[r];
                }
            }
        lc5_block_reduce(a, sRed, warp, lane, lc5_max(), m);
        for (int r = 0; r < LC5_ROWS; r++) w[r] = lc_weight(a[r], m[r]);
        if (k < c) sW[k] = make_float4(w[0], w[1], w[2], w[3]);
        __syncthreads();
    }
    __pipeline_wait_prior(0);

    float sum[LC5_ROWS];
    for (int r = 0; r < LC5_ROWS; r++) w[r] = k < c ? w[r] : 0.0f;
    lc5_block_reduce(w, sRed, warp, lane, lc5_add(), sum);
    if (tid == 0)
        for (int r = 0; r < LC5_ROWS; r++)
            if (b0 + r < n) out[(b0 + r) * t + s] = lc_finish(0.0f, m[r], sum[r]);
}

/* Rows as in lc5_forward_kernel. Step i (v-2 down to 0) finishes variable i+1 (dx_{i+1} over alpha_{i+1}),
 * writes U_i = dout exp(alpha_i + mw - log Z) and W_i = exp(x_{i+1} + beta_{i+1} - mw) for the GEMM, then
 * walks beta_i = mw + log(P_i W_i): a lane multiplies its states of W_i into each of its rows j of P_i, and
 * one reduction over the lanes leaves the sum for chain row r in lanes 8 r .. 8 r + 7. */
__global__ void lc5_backward_kernel(int n, int c, int t, int v, const float *x, const float *bulk,
                                    const float *dout, const float *out, float *alpha, float *U, float *W)
{
    /* x, alpha (n, t, v, c): alpha in, dx out; dout, out (n, t); U, W (t, v-1, n, c): step (s, i)'s (n, c)
     * operand at (s (v-1) + i) n c */
    DYNAMIC_SHARED(float4, smem);
    int cs = lc5_stride(c);
    float4 *sB = smem;                    /* (c) beta_i of state j, one float per row */
    float4 *sRed = sB + c;                /* (LC5_WARPS) the warps' maxima */
    float4 *sGZ = sRed + LC5_WARPS;       /* (2) dout, log Z of the rows */
    float *sW = (float *)(sGZ + 2);       /* (LC5_ROWS, cs) W_i, the pad zero */
    float *sRing = sW + LC5_ROWS * cs;    /* (LC5_WARPS, LC5_AHEAD, cs) the warps' rings */
    int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, s = blockIdx.y, k = tid;
    long long b0 = (long long)blockIdx.x * LC5_ROWS, ld = (long long)t * v * c, nc = (long long)n * c;
    const float *xs = x + (b0 * t + s) * v * c + k;
    float *as = alpha + (b0 * t + s) * v * c + k;
    const float *Ps = bulk + (long long)s * (v - 1) * c * c;
    bool mine[LC5_ROWS];
    for (int r = 0; r < LC5_ROWS; r++) mine[r] = k < c && b0 + r < n;
    lc5_ring ring(sRing, Ps, c, v, 1, warp, lane); /* step v-2's first rows start now */
    const bool(&in)[LC5_KH] = ring.in;

    if (tid < LC5_ROWS) {
        int ok = b0 + tid < n;
        ((float *)&sGZ[0])[tid] = ok ? dout[(b0 + tid) * t + s] : 0.0f;
        ((float *)&sGZ[1])[tid] = ok ? out[(b0 + tid) * t + s] : 0.0f;
    }
    for (int e = c + tid; e < cs; e += LC5_BLOCK)
        for (int r = 0; r < LC5_ROWS; r++) sW[r * cs + e] = 0.0f;
    __syncthreads();
    float4 g4 = sGZ[0], z4 = sGZ[1];
    float G[LC5_ROWS] = {g4.x, g4.y, g4.z, g4.w}, Z[LC5_ROWS] = {z4.x, z4.y, z4.z, z4.w};
    float al1[LC5_ROWS], x1[LC5_ROWS], bt[LC5_ROWS]; /* alpha_{i+1}[k], x_{i+1}[k], beta_{i+1}[k] */
    for (int r = 0; r < LC5_ROWS; r++) {
        long long last = (long long)(v - 1) * c;
        al1[r] = mine[r] ? as[r * ld + last] : 0.0f;
        x1[r] = mine[r] ? xs[r * ld + last] : 0.0f;
        bt[r] = 0.0f; /* beta_{v-1} = 0 */
    }

    for (int i = v - 2; i >= 0; i--) {
        long long a1 = (long long)(i + 1) * c, a0 = (long long)i * c;
        float al0[LC5_ROWS], x0[LC5_ROWS]; /* alpha_i[k] for U_i now, both for step i - 1 */
        for (int r = 0; r < LC5_ROWS; r++) {
            al0[r] = mine[r] ? as[r * ld + a0] : 0.0f;
            x0[r] = mine[r] ? xs[r * ld + a0] : 0.0f;
        }
        float g[LC5_ROWS], mw[LC5_ROWS];
        for (int r = 0; r < LC5_ROWS; r++) {
            g[r] = -INFINITY;
            if (mine[r]) {
                g[r] = x1[r] + bt[r];
                as[r * ld + a1] = G[r] * lc_posterior(al1[r], bt[r], Z[r]); /* dx_{i+1} */
            }
        }
        lc5_block_reduce(g, sRed, warp, lane, lc5_max(), mw);
        long long step = ((long long)s * (v - 1) + i) * nc + b0 * c + k; /* row b0, state k of U_i, W_i */
        if (k < c)
            for (int r = 0; r < LC5_ROWS; r++) {
                float wk = 0.0f;
                if (mine[r]) {
                    wk = lc_weight(g[r], mw[r]);
                    W[step + r * c] = wk;
                    U[step + r * c] = G[r] * lc_transition_term(al0[r], mw[r], Z[r]);
                }
                sW[r * cs + k] = wk;
            }
        __syncthreads(); /* W_i is in; sB's last reader was before the reduction's barrier */

        float4 wr[LC5_ROWS][LC5_KH]; /* W_i[r][4 lane + 128 h + e] */
        for (int r = 0; r < LC5_ROWS; r++) lc5_row_words(sW + r * cs, in, lane, wr[r]);
        int r_lane = lane / 8; /* the chain row whose sum lc5_lanes_reduce leaves in this lane */
        float mw_lane = r_lane == 0 ? mw[0] : r_lane == 1 ? mw[1] : r_lane == 2 ? mw[2] : mw[3];
        for (int u = 0; u < ring.rows; u++) {
            float4 p[LC5_KH];
            lc5_row_words(ring.next(), in, lane, p);
            float part[LC5_ROWS] = {}; /* this lane's share of sum_k P_i[j][k] W_i[r][k] */
            for (int r = 0; r < LC5_ROWS; r++)
                for (int h = 0; h < LC5_KH; h++) { /* one chain of multiply-adds per r */
                    part[r] += wr[r][h].x * p[h].x;
                    part[r] += wr[r][h].y * p[h].y;
                    part[r] += wr[r][h].z * p[h].z;
                    part[r] += wr[r][h].w * p[h].w;
                }
            float S = lc5_lanes_reduce(part, lane, lc5_add());
            if (lane % 8 == 0) ((float *)&sB[warp + LC5_WARPS * u])[r_lane] = lc_finish(0.0f, mw_lane, S);
        }
        __syncthreads(); /* beta_i is in, and every read of sW is done */

        if (k < c) {
            float4 b = sB[k];
            bt[0] = b.x, bt[1] = b.y, bt[2] = b.z, bt[3] = b.w;
        }
        for (int r = 0; r < LC5_ROWS; r++) al1[r] = al0[r], x1[r] = x0[r];
    }
    __pipeline_wait_prior(0);
    for (int r = 0; r < LC5_ROWS; r++)
        if (mine[r]) as[r * ld] = G[r] * lc_posterior(al1[r], bt[r], Z[r]); /* dx_0 */
}

/* dp0[s, k] = sum_b dx[b, s, 0, k] / p0[s, k]. Block (32, LC5_DP0_ROWS) covers 32 states: thread (x, y) sums
 * the rows b = y, y + LC5_DP0_ROWS, ... of state 32 blockIdx.x + x (independent loads, a warp's 128 bytes
 * each), and row y = 0 adds up the column of partial sums. */
__global__ void lc5_dp0_kernel(int n, int c, int t, int v, const float *dx, const float *p0, float *dp0)
{
    /* dx (n, t, v, c); p0, dp0 (1, t, c) */
    __shared__ float part[LC5_DP0_ROWS][33];
    int x = threadIdx.x, y = threadIdx.y, k = blockIdx.x * 32 + x, s = blockIdx.y;
    float acc = 0.0f;
    if (k < c)
        for (long long b = y; b < n; b += LC5_DP0_ROWS) acc += dx[((b * t + s) * v) * c + k];
    part[y][x] = acc;
    __syncthreads();
    if (y == 0 && k < c) {
        float sum = 0.0f;
        for (int i = 0; i < LC5_DP0_ROWS; i++) sum += part[i][x];
        dp0[(long long)s * c + k] = sum / p0[(long long)s * c + k];
    }
}

/* ---- launchers ----------------------------------------------------------------------------------------- */

static dim3 lc5_grid(const lc_dims *d)
{
    return dim3((unsigned)((d->n + LC5_ROWS - 1) / LC5_ROWS), (unsigned)d->t);
}

/* dynamic shared memory of each kernel, in bytes: the rings, LC5_WARPS x LC5_AHEAD padded rows of P, are most
 * of it (51,200 bytes at c = 200), past the 48 KiB a kernel gets without opting in */
static size_t lc5_ring_floats(size_t c) { return (size_t)LC5_WARPS * LC5_AHEAD * (size_t)lc5_stride((int)c); }
static size_t lc5_forward_smem(size_t c)
{
    size_t cs = (size_t)lc5_stride((int)c);
    return sizeof(float4) * (c + LC5_WARPS) +
           sizeof(float) * (LC5_WARPS * LC5_ROWS * cs + lc5_ring_floats(c));
}
static size_t lc5_backward_smem(size_t c)
{
    size_t cs = (size_t)lc5_stride((int)c);
    return sizeof(float4) * (c + LC5_WARPS + 2) + sizeof(float) * (LC5_ROWS * cs + lc5_ring_floats(c));
}

/* NULL when this GPU fits both ring kernels at this c (kernels/runtime/cuda_fit.h), else why not (cuda-v4
 * runs) */
extern "C" const char *lc5_unfit(const lc_dims *d)
{
    const cuda_launch_need needs[] = {
        {(const void *)lc5_forward_kernel, LC5_BLOCK, lc5_forward_smem(d->c), 80, 0},
        {(const void *)lc5_backward_kernel, LC5_BLOCK, lc5_backward_smem(d->c), 80, 0}};
    return cuda_fit(needs, 2);
}

/* 1 launch. alpha (n,t,v,c), out (n,t) allocated by the caller. */
static void lc5_forward(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                        float *out)
{
    int smem = (int)lc5_forward_smem(d->c); /* <= the opt-in: lc5_unfit */
    CUDA_CHECK(cudaFuncSetAttribute(lc5_forward_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    LAUNCH(lc5_forward_kernel, lc5_grid(d), LC5_BLOCK, smem)
    ((int)d->n, (int)d->c, (int)d->t, (int)d->v, x, bulk, p0, alpha, out);
    CUDA_CHECK_LAST();
}

/* 3 launches: the kernel, the dbulk GEMM, dp0. dx = alpha, written over it; U, W: (t, v-1, n, c) scratch. */
static void lc5_backward(const lc_dims *d, const float *x, const float *bulk, const float *p0, float *alpha,
                         const float *out, const float *dout, float *dbulk, float *dp0, float *U, float *W)
{
    int n = (int)d->n, c = (int)d->c, t = (int)d->t, v = (int)d->v, smem = (int)lc5_backward_smem(d->c);
    long long nc = (long long)n * c, C2 = (long long)c * c;
    CUDA_CHECK(cudaFuncSetAttribute(lc5_backward_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    LAUNCH(lc5_backward_kernel, lc5_grid(d), LC5_BLOCK, smem)(n, c, t, v, x, bulk, dout, out, alpha, U, W);
    CUDA_CHECK_LAST();
    /* dbulk_{s,i} (c, c) = U_{s,i}^T (c, n) . W_{s,i} (n, c), every (s, i) at once: the batch is the inner
     * dim */
    ROWMAJOR_SGEMM_STRIDED_BATCHED((cublasHandle_t)cublas_handle(), 1, 0, c, c, n, 1.0f, U, c, nc, W, c, nc,
                                   0.0f, dbulk, c, C2, t * (v - 1));
    LAUNCH(lc5_dp0_kernel, dim3((unsigned)((c + 31) / 32), (unsigned)t), dim3(32, LC5_DP0_ROWS), 0)
    (n, c, t, v, alpha, p0, dp0);
    CUDA_CHECK_LAST();
}

/* ---- device memory: the buffers around this version's launchers (logchain_device.h); the caller attaches
 * the cuBLAS workspace where the version uses cuBLAS (the session does: uses_cublas) --------------------- */

extern "C" float *cuda_lc_forward_v5(const lc_dims *d, const float *x, const float *bulk, const float *p0,
                                     float **alpha_out)
{
    float *out = lc_dev_forward_out(d, alpha_out);
    lc5_forward(d, x, bulk, p0, *alpha_out, out);
    return out;
}

/* the backward kernel writes dx over alpha and every step's GEMM operands U, W */
extern "C" void cuda_lc_backward_v5(const lc_dims *d, const float *x, const float *bulk, const float *p0,
                                    float *alpha, const float *out, const float *dout, float **dx,
                                    float **dbulk, float **dp0)
{
    lc_dev_grads(d, alpha, dx, dbulk, dp0);
    lc_operands o = lc_dev_step_operands(d);
    lc5_backward(d, x, bulk, p0, alpha, out, dout, *dbulk, *dp0, o.U, o.W);
    lc_dev_operands_free(o);
}
