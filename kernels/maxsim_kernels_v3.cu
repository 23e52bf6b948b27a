/* maxsim_kernels_v3.cu - lesson 3, version 3: the [J, N] score slab on tensor cores (declared in
 * maxsim_kernels.cuh). NOT RUN ON A GPU here: compiled with nvcc for sm_80 and sm_90, run under the CPU emulator.
 *
 * What it adds over v2 (ms_forward_v2, FP32 FMAs in a 4 x 4 register tile per thread):
 *   - the scores of a 64 x 64 tile come from WMMA m16n16k8 TF32 fragments, 2 x 2 per warp, float accumulators;
 *   - the epilogue works on the accumulator tile: each warp stores its fragments to a padded shared-memory
 *     tile (the fragment's own element order is unspecified, so nothing reads x[] directly), then every thread
 *     folds half a row into a running (max, argmax) kept across the n tiles, and the two halves merge once;
 *   - global loads are 16 bytes (float4) when K % 4 == 0, eight lanes per 128-byte row segment; shared rows
 *     are padded by 4 floats, so those float4 stores are conflict-free, and the epilogue's reads rotate their
 *     column by the lane (bank (5 lane + s) mod 32: conflict-free) -- v2's staging, unpadded, had 16-way ones;
 *   - block order m outer, i inner (blockIdx.x = m*I + i): the I blocks that read b[m] run one after another,
 *     so b[m] (N*K*4 bytes, 2 MB at the forum size) stays in L2 while a[i] streams.
 *
 * Numerics: operands are rounded to TF32 (10 mantissa bits, __float_to_tf32, nearest) on their way into shared
 * memory; products are exact and summed in float. The lesson's inputs are on a 1/8 grid, exact in TF32, so the
 * scores here equal v2's and the CPU's bit for bit (every partial sum is a small multiple of 1/64). On real data
 * each operand carries a relative rounding error up to 2^-11, so a score differs from FP32's by ~2^-11 of
 * sum |a_k b_k|, and an argmax can flip between two columns whose scores are that close (the max itself moves
 * by no more than that; the gradient moves to the other column).
 *
 * Efficiency it is designed for, and what the emulator's memory profile measures (EMU_PROFILE=1 of the emu-eyes
 * branch, f538222, merged into a scratch checkout; build/emu/lesson3 --size small --dims I=2,J=64,M=2,N=128,K=64
 * --impl cuda-v2,cuda-v3). No GPU has run it.
 *   - epilogue reads of the score tile (v3_fold): conflict-free by design; measured 1.00 wavefronts/request;
 *   - the halves' merge (rowmax, rowarg): measured 1.00;
 *   - staging (v3_stage), designed: a warp's float4 load is 4 whole 128-byte row segments (16 sectors for 512
 *     bytes, efficiency 1.0 when K % 32 == 0) and its float4 store 4 wavefronts for 512 bytes, the minimum for
 *     16-byte stores (each quarter warp writes 32 consecutive words). Measured: global load 0.250, shared store
 *     4.00 -- because g++ splits each 16-byte access of the emulation build into four 4-byte ones, which the
 *     profile sees as four requests 16 bytes apart (128 bytes over 16 sectors; 4-way banks). Under nvcc each is
 *     one LDG.128 / STS.128; the figures above are the design's until a profile sees 16-byte accesses whole.
 *     (v2's staging stores measured 16.00, a 16-way conflict, until its rows were padded: 1.00.) K % 4 != 0:
 *     4-byte loads;
 *   - arg's store is strided by M (arg is [I, J, M]; a block owns one m): 1/M of a sector, 0.125 from M = 8;
 *     one int per 2 N K flops, so it does not matter;
 *   - the WMMA fragment loads and stores (ldm 36 and 68 floats, the usual 4-float skew) run inside the
 *     emulator's shim, whose accesses say nothing about the hardware's: unmeasured;
 *   - the roofline: per 64 x 64 tile and K-step the block moves (64 + 64) x 32 x 4 bytes from L2 for
 *     2 x 64 x 64 x 32 flops, 16 flops per byte, so the kernel is bound by L2 bandwidth, not by the tensor cores,
 *     at 16 x (L2 bytes/s); larger tiles (128 x 128, 32 flops per byte) would be the next version.
 *   - nvcc 13 -Xptxas -v: 128 registers (sm_80), 108 (sm_90), 36,352 bytes of static shared memory, no spills.
 */
#include <mma.h>

#include "maxsim_geometry.h"
#include "maxsim_kernels.cuh"
#include "maxsim_math.h"
#include "runtime/dry_skip.h"

#include <math.h>

using namespace nvcuda;

#define LDS (MS3_TK + MS3_PAD) /* staged rows of a and b: 36 floats */
#define LDC (MS3_TN + MS3_PAD) /* the score tile's rows: 68 floats */

static_assert(MS3_THREADS == 128 && MS3_TJ == 64 && MS3_TN == 64, "4 warps, each a 32 x 32 quarter of the tile");
static_assert(MS3_TK % 8 == 0 && MS3_TK % 4 == 0, "k steps of 8 (m16n16k8), float4 staging");
static_assert(LDS % 4 == 0 && LDC % 4 == 0, "WMMA ldm: a multiple of 16 bytes");
static_assert((16 * LDS * 4) % 32 == 0 && (16 * LDC * 4) % 32 == 0, "every fragment pointer 32-byte aligned");
static_assert(LDS % 32 == 4, "a 4-float skew: 8 lanes' float4 stores of one row hit 32 distinct banks");
static_assert(MS3_THREADS == 2 * MS3_TJ, "two threads per row in the epilogue");

/* x rows [r0, r0+64) and columns [k0, k0+32) -> s[rr * LDS + kk], rounded to tf32; zeros outside rows x K.
 * x is (rows, K). When K % 4 == 0 every row segment is 16-byte aligned: float4 loads and stores. */
__device__ static void v3_stage(const float *x, int rows, int K, int r0, int k0, float *s)
{
    if (K % 4 == 0) {
        for (int e = threadIdx.x; e < MS3_TJ * MS3_TK / 4; e += MS3_THREADS) {
            int rr = e / (MS3_TK / 4), kk = e % (MS3_TK / 4) * 4, r = r0 + rr, k = k0 + kk;
            float4 v = {0.0f, 0.0f, 0.0f, 0.0f};
            if (r < rows && k < K) v = *(const float4 *)(x + (long long)r * K + k);
            float4 t = {wmma::__float_to_tf32(v.x), wmma::__float_to_tf32(v.y), wmma::__float_to_tf32(v.z),
                        wmma::__float_to_tf32(v.w)};
            *(float4 *)(s + rr * LDS + kk) = t;
        }
    } else {
        for (int e = threadIdx.x; e < MS3_TJ * MS3_TK; e += MS3_THREADS) {
            int rr = e / MS3_TK, kk = e % MS3_TK, r = r0 + rr, k = k0 + kk;
            s[rr * LDS + kk] = wmma::__float_to_tf32(r < rows && k < K ? x[(long long)r * K + k] : 0.0f);
        }
    }
}

/* sC [64][LDC] = a[i, j0 .. j0+64) . b[m, n0 .. n0+64)^T over all K (zeros past J, N, K). Warp w owns rows
 * 32 (w / 2) .. +32 and columns 32 (w % 2) .. +32 of the tile. */
__device__ static void v3_scores(const float *ai, const float *bm, int J, int N, int K, int j0, int n0, float *sA,
                                 float *sB, float *sC)
{
    int w = threadIdx.x / 32, wr = w / 2 * 32, wc = w % 2 * 32;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> c[2][2];
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa[2];
    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> fb[2]; /* sB[n][k] */
    for (int x = 0; x < 2; x++)
        for (int y = 0; y < 2; y++) wmma::fill_fragment(c[x][y], 0.0f);
    for (int k0 = 0; k0 < K; k0 += MS3_TK) {
        EMU_DRY_SKIP(k0, 0, K, MS3_TK); /* J/64 x N/64 x K/32 tile steps per block: a dry run runs the boundary */
        v3_stage(ai, J, K, j0, k0, sA);
        v3_stage(bm, N, K, n0, k0, sB);
        __syncthreads(); /* the staged tiles are complete before any warp loads a fragment */
        for (int kk = 0; kk < MS3_TK; kk += 8) {
            for (int x = 0; x < 2; x++) wmma::load_matrix_sync(fa[x], sA + (wr + 16 * x) * LDS + kk, LDS);
            for (int y = 0; y < 2; y++) wmma::load_matrix_sync(fb[y], sB + (wc + 16 * y) * LDS + kk, LDS);
            for (int x = 0; x < 2; x++)
                for (int y = 0; y < 2; y++) wmma::mma_sync(c[x][y], fa[x], fb[y], c[x][y]);
        }
        __syncthreads(); /* every warp has loaded its fragments before the next k step restages */
    }
    for (int x = 0; x < 2; x++)
        for (int y = 0; y < 2; y++)
            wmma::store_matrix_sync(sC + (wr + 16 * x) * LDC + wc + 16 * y, c[x][y], LDC, wmma::mem_row_major);
    __syncthreads(); /* the score tile is complete before the epilogue reads it */
}

/* Thread t folds row t % 64, columns 32 (t / 64) .. +32 of the score tile into (best, bn). The column order
 * rotates with the lane (conflict-free reads); the rule is a total order, so the order does not matter. */
__device__ static void v3_fold(const float *sC, int n0, int N, float *best, int *bn)
{
    int row = threadIdx.x % MS3_TJ, side = threadIdx.x / MS3_TJ, lane = threadIdx.x % 32;
    for (int s = 0; s < 32; s++) {
        int col = side * 32 + (s + lane) % 32, n = n0 + col;
        float v = sC[row * LDC + col];
        if (n < N && ms_better_f(v, n, *best, *bn)) *best = v, *bn = n;
    }
}

/* One 64-row j tile against all of b[m]: each row's (max, argmax) into rowmax and (if kept) arg. */
__device__ static void v3_j_tile(const float *ai, const float *bm, int J, int N, int K, int j0, float *sA,
                                 float *sB, float *sC, float *rowmax, int *rowarg, int *argrow, int M)
{
    float best = -INFINITY;
    int bn = 0; /* a real column: see ms_better */
    for (int n0 = 0; n0 < N; n0 += MS3_TN) {
        EMU_DRY_SKIP(n0, 0, N, MS3_TN); /* as in v3_scores (block-uniform: the barriers stay matched) */
        v3_scores(ai, bm, J, N, K, j0, n0, sA, sB, sC);
        v3_fold(sC, n0, N, &best, &bn);
        __syncthreads(); /* the tile is read before the next n tile's scores overwrite it */
    }
    int row = threadIdx.x % MS3_TJ;
    if (threadIdx.x >= MS3_TJ) rowmax[row] = best, rowarg[row] = bn;
    __syncthreads(); /* the second halves are in shared memory */
    if (threadIdx.x < MS3_TJ) {
        if (ms_better_f(rowmax[row], rowarg[row], best, bn)) best = rowmax[row], bn = rowarg[row];
        rowmax[row] = best;
        if (argrow && j0 + row < J) argrow[(long long)(j0 + row) * M] = bn;
    }
    __syncthreads(); /* rowmax holds the merged maxima */
}

/* Designed for: loads >= 80% of each 32-byte sector used, stores >= 12.5% (arg[i, :, m] is a column, stride M, as in
 * v2), shared memory <= 1 wavefront per request (no bank conflict: rows padded by 4 floats, the epilogue's reads
 * rotated by lane).
 * Today: loads 78% (the profile's K = 25: each 100-byte row starts mid-sector and touches 4 sectors of a; K % 4 != 0,
 * so the 4-byte path). */
__global__ void ms_forward_v3(int I, int J, int M, int N, int K, const float *a, const float *b, float *out, int *arg)
{
    __shared__ __align__(32) float sA[MS3_TJ * LDS], sB[MS3_TN * LDS], sC[MS3_TJ * LDC];
    __shared__ float rowmax[MS3_TJ];
    __shared__ int rowarg[MS3_TJ];
    int m = blockIdx.x / I, i = blockIdx.x % I;                                  /* i inner: b[m] stays in L2 */
    const float *ai = a + (long long)i * J * K, *bm = b + (long long)m * N * K; /* a[i] (J, K), b[m] (N, K) */
    int *argrow = arg ? arg + (long long)i * J * M + m : 0;                       /* arg[i, :, m], stride M */
    float sum = 0.0f;
    for (int j0 = 0; j0 < J; j0 += MS3_TJ) {
        EMU_DRY_SKIP(j0, 0, J, MS3_TJ); /* as in v3_scores */
        v3_j_tile(ai, bm, J, N, K, j0, sA, sB, sC, rowmax, rowarg, argrow, M);
        if (threadIdx.x == 0)
            for (int jj = 0; jj < MS3_TJ && j0 + jj < J; jj++) sum += rowmax[jj]; /* j ascending, as the CPU */
        __syncthreads(); /* thread 0 has read rowmax before the next j tile rewrites it */
    }
    if (threadIdx.x == 0 && out) out[(long long)i * M + m] = sum;
}
