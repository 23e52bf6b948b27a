/* maxsim_row_walk.h - cuda-v8's walk through the stages (pipe_forward's Walk policy): each thread's rows of b
 * fixed, counters where strided_walk divides, and a quarter-warp's 16-byte stores in eight different rows.
 *
 * strided_walk (v4-v7) derives every stage's n tile, columns and buffer from its number (an integer division by
 * kc at each stage, about 25 instructions), and pipe_issue walks a stage's 16-byte pieces with a loop nvcc cannot
 * count (its start is threadIdx.x), computing each piece's row and 64-bit address afresh and letting a
 * quarter-warp store two rows' pieces 20 words apart, two of them in the same banks. Here a stage's rows are
 * 32 floats of K, 128 bytes, and thread (warp w, lane l) copies piece l % 8 of rows r = 4w + l / 8 + ROWS c
 * (c = 0 .. PASSES - 1; for v8's 256 threads and 256 rows, ROWS = 32 and 8 passes): a warp reads 4 rows' 128-byte
 * segments, a line each, and a quarter-warp writes one row's 128 bytes, every bank once. Where a stage is
 * follows from counters that step once per stage. K % 4 != 0 (4-byte copies, only the tests' odd K) keeps
 * pipe_issue. CUDA sources only, after maxsim_pipeline.h. */
#ifndef KERNELS_MAXSIM_ROW_WALK_H
#define KERNELS_MAXSIM_ROW_WALK_H

#include "maxsim_pipeline.h"

template <class B> struct row_walk {
    static constexpr int ROWS = B::threads / 8; /* rows one pass of the block copies: 4 per warp */
    static constexpr int PASSES = B::tn / ROWS;  /* a stage's passes */
    static constexpr int STAGE = B::stage;
    static_assert(B::tk == 32 && B::tn % ROWS == 0, "a warp copies 4 rows of 8 pieces of 16 bytes");
    /* the copies' next stage; this thread's first row r of a stage and its piece's column kk are fixed */
    int pk;           /* its k step in its n tile, 0 .. kc - 1 */
    int pbuf;         /* its buffer */
    int n_left;       /* N - (its n tile's first row + r): pass c's row is real when c * ROWS < n_left */
    int k_left;       /* K - (its first column + kk): the piece is real when > 0 */
    int dst;          /* r * B::ldb + kk: the piece's offset in a stage (pass c's: + c * ROWS * B::ldb) */
    const float *src; /* the piece's first float in b[m] (pass c's: + c * ROWS * K, an int: ms8_unfit keeps
                       * (N + B::tn) * K below 2^31) */
    float *stages;    /* the first buffer */
    /* the multiplies' stage */
    int ck, cbuf, cn0; /* its k step, its buffer, its n tile's first row of b */

    __device__ void start(const float *bm, int N, int K, float *buffers)
    {
        int r = threadIdx.x / 8, kk = threadIdx.x % 8 * 4;
        pk = 0, pbuf = 0, n_left = N - r, k_left = K - kk, dst = r * B::ldb + kk, src = bm + r * K + kk;
        stages = buffers, ck = 0, cbuf = 0, cn0 = 0;
    }
    /* s is unused: the copies follow their own buffer */
    __device__ void issue(const float *bm, int N, int K, int kc, int p, float *)
    {
        float *stage = stages + pbuf * STAGE;
        if (K % 4 == 0) {
            UNROLL for (int c = 0; c < PASSES; c++) { /* past N or K: no bytes read, 16 zeros (zfill) */
                bool real = k_left > 0 && n_left > c * ROWS;
                __pipeline_memcpy_async(stage + dst + c * ROWS * B::ldb, real ? src + c * ROWS * K : bm, 16, real ? 0 : 16);
            }
        } else {
            pipe_issue<B::threads, B::tn, B::tk, B::ldb>(bm, N, K, p / kc * B::tn, p % kc * B::tk, stage); /* odd K */
        }
        k_left -= B::tk, src += B::tk;
        if (++pk == kc) pk = 0, k_left += kc * B::tk, n_left -= B::tn, src += B::tn * K - kc * B::tk;
        pbuf = pbuf == B::stages - 1 ? 0 : pbuf + 1;
    }
    __device__ int k0(int, int) const { return ck * B::tk; }
    __device__ int buffer(int) const { return cbuf; }
    __device__ bool tile_end(int, int kc) const { return ck == kc - 1; }
    __device__ int n0(int, int) const { return cn0; }
    __device__ void next(int kc)
    {
        if (++ck == kc) ck = 0, cn0 += B::tn;
        cbuf = cbuf == B::stages - 1 ? 0 : cbuf + 1;
    }
};

#endif
