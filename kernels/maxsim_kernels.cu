/* maxsim_kernels.cu - lesson 3's kernels, numbered from simple to tiled (declared in maxsim_kernels.cuh).
 *
 * tests/cuda_lesson3.c validates each version against the float64 reference on a GPU or the CPU emulation build.
 *
 *   v1  ms_forward_v1   one thread per (i, m): loops j, n, k. No reuse: every a and b row is read from global
 *                       memory J*N times over. Simple, and the reference point for v2.
 *   v2  ms_forward_v2   one block per (i, m) computes the [J, N] slab a[i] . b[m]^T as a GEMM would: 64 x 64
 *                       output tiles, K in steps of 16 staged in shared memory, a 4 x 4 register tile per
 *                       thread. The epilogue never stores the tile: each thread folds its scores into a running
 *                       (max, argmax) per row, the 16 threads sharing a row merge by warp shuffles, and the block
 *                       sums the row maxima over j in order. Nothing of size [J, N] leaves the block.
 *   v3                  kernels/maxsim_kernels_v3.cu: the score tiles on tensor cores (TF32 WMMA).
 *   backward            da by a gather (deterministic); db by atomicAdd, or (--deterministic) by a stable counting
 *                       sort of the rows into buckets by argmax -- a parallel histogram (integer atomics), a scan
 *                       per m, a warp per m scattering 32 rows at a time in row order -- then one block per
 *                       (m, n) summing its bucket in row order: the same sum, bitwise reproducible.
 * The max rule (NaN wins, then the lowest n) and the per-term arithmetic are kernels/maxsim_math.h, shared with
 * the CPU; every running argmax starts at a real column (n = 0), so arg is always a valid index.
 */
#include "maxsim_geometry.h"
#include "maxsim_kernels.cuh"
#include "maxsim_math.h"
#include "runtime/dry_skip.h"

#include <math.h>

static_assert(MS_THREADS == 256, "v2's loads assume 256 threads: 64x16 tile elements = 4 per thread");
static_assert(MS_TN / MS_RN == 16, "a row's 16 partial argmaxes merge with shuffles inside half a warp");
static_assert((MS_TJ * MS_TK) % MS_THREADS == 0 && (MS_TN * MS_TK) % MS_THREADS == 0, "tiles load evenly");
static_assert(MS_SCAN_THREADS % 32 == 0, "the scan adds whole warps' totals");

/* v2's shared tiles are [MS_TK][MS_TJ + MS_PAD]. load_tiles' warp stores 2 columns x 16 rows; with rows of 64
 * floats the 16 words of a column all sit in one bank (a 16-way conflict). A row of 66 floats moves each row 2
 * banks on: one column covers the 16 even offsets, the next the 16 odd ones, 32 banks (conflict-free). nvcc reads
 * the tiles one float at a time here, so the rows need no 16-byte alignment (a pad of 4 would keep it, at 2-way). */
#define MS_PAD 2

/* Designed for: loads >= 80% of each 32-byte sector used, stores >= 80%, no shared memory.
 * Today: loads 29% (a warp's lanes are consecutive m: each reads its own row of b[m], 32 sectors for 32 floats; only
 * a's broadcast is cheap), stores 68% (a warp's 32 m span two i when M = 25: its arg stores fall in two runs, each
 * starting mid-sector). */
__global__ void ms_forward_v1(int I, int J, int M, int N, int K, const float *a, const float *b, float *out, int *arg)
{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (long long)I * M) return;
    int i = (int)(t / M), m = (int)(t % M);
    float sum = 0.0f;
    for (int j = 0; j < J; j++) {
        EMU_DRY_SKIP(j, 0, J, 1); /* J x N dot products per thread: a dry run runs the boundary ones */
        const float *ar = a + ((long long)i * J + j) * K;          /* a[i, j, :], (K,) */
        const float *bm = b + (long long)m * N * K;                /* b[m], (N, K) */
        float best = ms_dot(ar, bm, K);
        int bn = 0;
        for (int n = 1; n < N; n++) {
            EMU_DRY_SKIP(n, 1, N, 1);
            float s = ms_dot(ar, bm + (long long)n * K, K);
            if (ms_better_f(s, n, best, bn)) best = s, bn = n;
        }
        sum += best; /* j ascending, as the CPU sums */
        if (arg) arg[((long long)i * J + j) * M + m] = bn;
    }
    if (out) out[t] = sum;
}

/* Stage a[i, j0 .. j0+64, k0 .. k0+16) as sA[kk][jj] and b[m, n0 .. n0+64, k0 ..) as sB[kk][nn]; zeros outside. */
__device__ static void load_tiles(const float *ai, const float *bm, int J, int N, int K, int j0, int n0, int k0,
                                  float (*sA)[MS_TJ + MS_PAD], float (*sB)[MS_TN + MS_PAD])
{
    for (int e = threadIdx.x; e < MS_TJ * MS_TK; e += MS_THREADS) {
        int jj = e / MS_TK, kk = e % MS_TK, j = j0 + jj, k = k0 + kk; /* consecutive threads: consecutive k */
        sA[kk][jj] = (j < J && k < K) ? ai[(long long)j * K + k] : 0.0f;
    }
    for (int e = threadIdx.x; e < MS_TN * MS_TK; e += MS_THREADS) {
        int nn = e / MS_TK, kk = e % MS_TK, n = n0 + nn, k = k0 + kk;
        sB[kk][nn] = (n < N && k < K) ? bm[(long long)n * K + k] : 0.0f;
    }
}

/* The 16 threads of a row group (same ty, tx = 0..15: 16 consecutive lanes) merge their (max, argmax). The rule
 * is a total order, so the merge order does not change the winner. Every lane of the warp takes part. */
__device__ static void merge_row(float *best, int *bn)
{
    for (int off = MS_TN / MS_RN / 2; off > 0; off /= 2) {
        float ov = __shfl_xor_sync(0xffffffffu, *best, off);
        int on = __shfl_xor_sync(0xffffffffu, *bn, off);
        if (ms_better_f(ov, on, *best, *bn)) *best = ov, *bn = on;
    }
}

/* One 64-row j tile: its [64, N] scores reduced to 64 (max, argmax), written to rowmax and (if kept) arg. */
__device__ static void j_tile(const float *ai, const float *bm, int J, int N, int K, int j0,
                              float (*sA)[MS_TJ + MS_PAD], float (*sB)[MS_TN + MS_PAD], float *rowmax, int *argrow,
                              int M)
{
    int tx = threadIdx.x % (MS_TN / MS_RN), ty = threadIdx.x / (MS_TN / MS_RN);
    float best[MS_RJ];
    int bn[MS_RJ];
    for (int rj = 0; rj < MS_RJ; rj++) best[rj] = -INFINITY, bn[rj] = 0; /* a real column: see ms_better */
    for (int n0 = 0; n0 < N; n0 += MS_TN) {
        /* the block's J/64 x N/64 x K/16 tile steps: a dry run runs the boundary ones of each loop (block-uniform
         * trip counts: the barriers stay matched; kernels/runtime/dry_skip.h) */
        EMU_DRY_SKIP(n0, 0, N, MS_TN);
        float acc[MS_RJ][MS_RN] = {{0.0f}};
        for (int k0 = 0; k0 < K; k0 += MS_TK) {
            EMU_DRY_SKIP(k0, 0, K, MS_TK);
            load_tiles(ai, bm, J, N, K, j0, n0, k0, sA, sB);
            __syncthreads(); /* the tiles are complete before anyone reads them */
            for (int kk = 0; kk < MS_TK; kk++)
                for (int rj = 0; rj < MS_RJ; rj++)
                    for (int rn = 0; rn < MS_RN; rn++)
                        acc[rj][rn] += sA[kk][ty * MS_RJ + rj] * sB[kk][tx * MS_RN + rn];
            __syncthreads(); /* everyone is done reading before the next k step overwrites the tiles */
        }
        for (int rj = 0; rj < MS_RJ; rj++)
            for (int rn = 0; rn < MS_RN; rn++) {
                int n = n0 + tx * MS_RN + rn;
                if (n < N && ms_better_f(acc[rj][rn], n, best[rj], bn[rj])) best[rj] = acc[rj][rn], bn[rj] = n;
            }
    }
    for (int rj = 0; rj < MS_RJ; rj++) {
        merge_row(&best[rj], &bn[rj]);
        int jj = ty * MS_RJ + rj;
        if (tx == 0) {
            rowmax[jj] = best[rj];
            if (argrow && j0 + jj < J) argrow[(long long)(j0 + jj) * M] = bn[rj];
        }
    }
}

/* Designed for: loads >= 80% of each 32-byte sector used (16 lanes read 16 consecutive floats of a row), stores >=
 * 12.5% (a block owns one (i, m): arg[i, :, m] is a column, stride M, one int per sector; out one float), shared
 * memory <= 2 wavefronts per request (load_tiles' stores into the padded tiles are conflict-free; the register
 * tile's reads of sB are 2-way).
 * Today: loads 64% (the profile's K = 25: each row's 16-float k step starts mid-sector, 3 sectors for 2). */
__global__ void ms_forward_v2(int I, int J, int M, int N, int K, const float *a, const float *b, float *out, int *arg)
{
    __shared__ float sA[MS_TK][MS_TJ + MS_PAD], sB[MS_TK][MS_TN + MS_PAD], rowmax[MS_TJ];
    int i = blockIdx.x / M, m = blockIdx.x % M;
    const float *ai = a + (long long)i * J * K, *bm = b + (long long)m * N * K; /* a[i] (J, K), b[m] (N, K) */
    int *argrow = arg ? arg + (long long)i * J * M + m : 0;                       /* arg[i, :, m], stride M */
    float sum = 0.0f;
    (void)I;
    for (int j0 = 0; j0 < J; j0 += MS_TJ) {
        EMU_DRY_SKIP(j0, 0, J, MS_TJ); /* see j_tile */
        j_tile(ai, bm, J, N, K, j0, sA, sB, rowmax, argrow, M);
        __syncthreads(); /* rowmax is complete */
        if (threadIdx.x == 0)
            for (int jj = 0; jj < MS_TJ && j0 + jj < J; jj++) sum += rowmax[jj]; /* j ascending, as the CPU */
        __syncthreads(); /* thread 0 has read rowmax before the next tile rewrites it */
    }
    if (threadIdx.x == 0 && out) out[blockIdx.x] = sum;
}

/* Designed for: loads >= 80% of each 32-byte sector used (a block's threads read consecutive k of one b row; arg and
 * dout are broadcasts), stores >= 80%, no shared memory.
 * Today: stores 78% (the profile's K = 25: each 100-byte row starts mid-sector and touches 4 sectors of da). */
__global__ void ms_da_kernel(int J, int M, int N, int K, const float *b, const float *dout, const int *arg, float *da)
{
    long long r = blockIdx.x;
    const float *w = dout + (r / J) * M; /* dout[i, :], (M,) */
    for (int k = threadIdx.x; k < K; k += blockDim.x) {
        EMU_DRY_SKIP(k, threadIdx.x, K, blockDim.x); /* K / blockDim x M terms per thread: a dry run runs */
        float s = 0.0f;                                /* the boundary ones */
        for (int m = 0; m < M; m++) {
            EMU_DRY_SKIP(m, 0, M, 1);
            s += w[m] * b[((long long)m * N + arg[r * M + m]) * K + k];
        }
        da[r * K + k] = s;
    }
}

/* Designed for: loads >= 80% of each 32-byte sector used, no global stores (db is summed by atomicAdd, which the
 * profile does not count), no shared memory. */
__global__ void ms_db_atomic_kernel(int J, int M, int N, int K, const float *a, const float *dout, const int *arg,
                                    float *db)
{
    long long r = blockIdx.x;
    const float *w = dout + (r / J) * M;
    for (int k = threadIdx.x; k < K; k += blockDim.x) {
        EMU_DRY_SKIP(k, threadIdx.x, K, blockDim.x); /* as in ms_da_kernel */
        for (int m = 0; m < M; m++) {
            EMU_DRY_SKIP(m, 0, M, 1);
            atomicAdd(&db[((long long)m * N + arg[r * M + m]) * K + k], w[m] * a[r * K + k]);
        }
    }
}

/* Designed for: loads >= 80% of each 32-byte sector used, no global stores (the counts are atomicAdds, not counted),
 * no shared memory. */
__global__ void ms_bucket_count_kernel(long long RM, int M, int N, const int *arg, int *start)
{
    long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; /* element (r, m) of arg [R, M]: coalesced */
    if (e >= RM) return;
    int m = (int)(e % M);
    atomicAdd(&start[(long long)m * (N + 1) + arg[e] + 1], 1); /* integer counts: the same in any order */
}

/* Designed for: loads >= 80% of each 32-byte sector used, stores >= 80%, shared memory <= 1 wavefront per request (no
 * bank conflict: one total per warp, read by all as a broadcast).
 * Today: loads 79%, stores 79% (the profile's N = 19: a row of 19 counts, 76 bytes, starts mid-sector and touches 3
 * sectors). */
__global__ void ms_bucket_scan_kernel(int N, int *start)
{
    __shared__ int warp_total[MS_SCAN_THREADS / 32];
    int *c = start + (long long)blockIdx.x * (N + 1) + 1; /* counts of buckets 0 .. N-1, (N,) */
    int lane = threadIdx.x % 32, w = threadIdx.x / 32, carry = 0;
    for (int n0 = 0; n0 < N; n0 += MS_SCAN_THREADS) {
        EMU_DRY_SKIP(n0, 0, N, MS_SCAN_THREADS); /* N / 256 chunks: a dry run runs the boundary ones */
        int n = n0 + threadIdx.x, x = n < N ? c[n] : 0, incl = x;
        for (int off = 1; off < 32; off *= 2) { /* inclusive scan inside the warp */
            int y = __shfl_up_sync(0xffffffffu, incl, off);
            if (lane >= off) incl += y;
        }
        if (lane == 31) warp_total[w] = incl;
        __syncthreads(); /* every warp's total is written before any thread adds them up */
        int before = 0, total = 0;
        for (int k = 0; k < MS_SCAN_THREADS / 32; k++) before += k < w ? warp_total[k] : 0, total += warp_total[k];
        if (n < N) c[n] = carry + before + incl - x; /* exclusive: where bucket n begins */
        carry += total;
        __syncthreads(); /* every thread has read warp_total before the next chunk rewrites it */
    }
}

/* Lanes before this one (and all lanes) of the warp whose bucket n equals this lane's: 32 shuffles. */
__device__ static void same_bucket(int n, int lane, int *before, int *same)
{
    *before = 0, *same = 0;
    for (int s = 0; s < 32; s++) {
        int ns = __shfl_sync(0xffffffffu, n, s);
        *same += ns == n;
        *before += ns == n && s < lane;
    }
}

/* Designed for: loads >= 20% (a warp per m reads arg[r, m] down a column: one int per sector, stride M; the cursors
 * it reads share sectors), stores >= 25% (a scatter: each row lands in its argmax's bucket), no shared memory. */
__global__ void ms_bucket_scatter_kernel(int R, int M, int N, const int *arg, int *start, int *list)
{
    int m = blockIdx.x * MS_SCATTER_WARPS + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (m >= M) return; /* whole warps: the block is MS_SCATTER_WARPS * 32 threads */
    int *cur = start + (long long)m * (N + 1) + 1; /* (N,): bucket n's next free place */
    int *li = list + (long long)m * R;             /* (R,) */
    for (long long r0 = 0; r0 < R; r0 += 32) { /* 64 bits: R = I J may be 2^31 - 2, where r0 + 32 wraps */
        EMU_DRY_SKIP(r0, 0, R, 32);            /* R / 32 steps: a dry run runs the boundary ones */
        long long r = r0 + lane;
        int n = r < R ? arg[r * M + m] : -1, before, same;
        same_bucket(n, lane, &before, &same);
        int base = n >= 0 ? cur[n] : 0;
        __syncwarp(); /* every lane has read its cursor before the last lane of its bucket moves it */
        if (n >= 0) {
            li[base + before] = (int)r; /* r ascending within the bucket: stable */
            if (before == same - 1) cur[n] = base + same;
        }
        __syncwarp(); /* the cursors have moved before the next 32 rows read them */
    }
}

/* Designed for: loads >= 80% of each 32-byte sector used, stores >= 80%, no shared memory.
 * Today: stores 78% (the profile's K = 25: each 100-byte row starts mid-sector and touches 4 sectors of db). */
__global__ void ms_db_bucket_kernel(int J, int M, int N, int K, int R, const float *a, const float *dout,
                                    const int *start, const int *list, float *db)
{
    int m = blockIdx.x / N, n = blockIdx.x % N;
    const int *st = start + (long long)m * (N + 1), *li = list + (long long)m * R;
    for (int k = threadIdx.x; k < K; k += blockDim.x) {
        EMU_DRY_SKIP(k, threadIdx.x, K, blockDim.x); /* K / blockDim steps: a dry run runs the boundary ones */
        float s = 0.0f;
        for (int p = st[n]; p < st[n + 1]; p++) s += dout[(long long)(li[p] / J) * M + m] * a[(long long)li[p] * K + k];
        db[(long long)blockIdx.x * K + k] = s;
    }
}
