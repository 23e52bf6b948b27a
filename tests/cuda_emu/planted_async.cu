/* planted_async.cu - TEST-ONLY: asynchronous copies to shared memory (cp.async), right and wrong (see planted.h).
 * Every kernel computes out[i] = 2 in[i] through a shared tile that each thread fills with 16-byte copies and
 * reads across threads (thread t doubles elements t, t + 64, t + 128, t + 192 of the tile), so the data must
 * have landed in every thread's part and the block must have synchronised before the read. */
#include <cuda/barrier>
#include <cuda/pipeline>
#include <cuda_pipeline.h>

#include "../../kernels/runtime/cuda_check.h"
#include "../../kernels/runtime/launch.h"
#include "planted.h"

#define ASYNC_BLOCK 64
#define ASYNC_TILE (ASYNC_BLOCK * 4) /* floats: one 16-byte copy per thread */

/* thread t's reads of a landed tile starting at element e0 of in */
__device__ void double_tile(const float *tile, float *out, long long e0, int n)
{
    for (int j = 0; j < 4; j++) {
        long long e = e0 + threadIdx.x + j * ASYNC_BLOCK;
        if (e < n) out[e] = 2.0f * tile[threadIdx.x + j * ASYNC_BLOCK];
    }
}

/* A block streams `tiles` tiles through two stages with the pipeline primitives; the last copy of the array
 * zero-fills past n. bug: 0 correct; 1 no wait before the read; 2 waits for all but the newest 2 batches (one
 * too few); 3 the copy starts one float past 16-byte alignment; 4 copies 12 bytes. */
__global__ void async_stream(const float *in, float *out, int n, int tiles, int bug)
{
    __shared__ __align__(16) float stage[2][ASYNC_TILE];
    long long first = (long long)blockIdx.x * tiles * ASYNC_TILE;
    for (int k = 0; k <= tiles; k++) {
        if (k < tiles) { /* issue tile k into stage k % 2 */
            long long e = first + (long long)k * ASYNC_TILE + threadIdx.x * 4;
            long long left = n - e;
            size_t zfill = left >= 4 ? 0 : (size_t)(4 - left) * sizeof(float);
            if (left > 0)
                __pipeline_memcpy_async(&stage[k % 2][threadIdx.x * 4], in + e + (bug == 3),
                                        bug == 4 ? 12 : 16, zfill);
        }
        __pipeline_commit(); /* one batch per step, empty at the end, so "all but the newest 1" is tile k - 1 */
        if (k == 0) continue;
        if (bug != 1) __pipeline_wait_prior(bug == 2 ? 2 : 1); /* PLANTED (bug 1, 2): tile k - 1 not waited for */
        __syncthreads();
        double_tile(stage[(k - 1) % 2], out, first + (long long)(k - 1) * ASYNC_TILE, n);
        __syncthreads(); /* the stage is read by every thread before it is filled again */
    }
}

/* One tile per block, bound to a cuda::barrier (SGEMM_CUDA's kernel 12's scheme). bug 5: correct; 6 the tile is
 * read before arrive_and_wait. n must be a multiple of ASYNC_TILE. */
__global__ void barrier_tile(const float *in, float *out, int n, int bug)
{
    __shared__ __align__(16) float tile[ASYNC_TILE];
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    if (threadIdx.x == 0) init(&bar, blockDim.x);
    __syncthreads();
    long long e0 = (long long)blockIdx.x * ASYNC_TILE;
    cuda::memcpy_async(&tile[threadIdx.x * 4], in + e0 + threadIdx.x * 4, cuda::aligned_size_t<16>(16), bar);
    if (bug != 6) bar.arrive_and_wait();
    double_tile(tile, out, e0, n);
    if (bug == 6) bar.arrive_and_wait(); /* PLANTED: after the read, which saw a phase not completed */
}

/* Two tiles per block through a thread-scope cuda::pipeline (bug 7: correct). n a multiple of ASYNC_TILE. */
__global__ void pipeline_tiles(const float *in, float *out, int n)
{
    __shared__ __align__(16) float stage[2][ASYNC_TILE];
    cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
    long long e0 = (long long)blockIdx.x * 2 * ASYNC_TILE;
    for (int k = 0; k < 2; k++) {
        pipe.producer_acquire();
        cuda::memcpy_async(&stage[k][threadIdx.x * 4], in + e0 + k * ASYNC_TILE + threadIdx.x * 4,
                           cuda::aligned_size_t<16>(16), pipe);
        pipe.producer_commit();
    }
    for (int k = 0; k < 2; k++) {
        pipe.consumer_wait();
        __syncthreads();
        double_tile(stage[k], out, e0 + k * ASYNC_TILE, n);
        pipe.consumer_release();
    }
}

extern "C" int planted_async(int bug, const float *in, float *out, int n)
{
    float *d_in, *d_out;
    size_t bytes = (size_t)n * sizeof(float);
    CUDA_CHECK(cudaMalloc((void **)&d_in, bytes));
    CUDA_CHECK(cudaMalloc((void **)&d_out, bytes));
    CUDA_CHECK(cudaMemcpy(d_in, in, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_out, 0, bytes));
    int tiles = 3;
    unsigned grid = (unsigned)((n + tiles * ASYNC_TILE - 1) / (tiles * ASYNC_TILE));
    if (bug <= 4) LAUNCH(async_stream, grid, ASYNC_BLOCK, 0)(d_in, d_out, n, tiles, bug);
    else if (bug <= 6) LAUNCH(barrier_tile, n / ASYNC_TILE, ASYNC_BLOCK, 0)(d_in, d_out, n, bug);
    else LAUNCH(pipeline_tiles, n / (2 * ASYNC_TILE), ASYNC_BLOCK, 0)(d_in, d_out, n);
    int err = (int)cudaGetLastError();
    CUDA_CHECK(cudaMemcpy(out, d_out, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    return err;
}
