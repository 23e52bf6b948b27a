/* planted_warp.cu - TEST-ONLY: warp shuffles, right and wrong (see planted.h). */
#include "../../kernels/runtime/cuda_check.h"
#include "../../kernels/runtime/launch.h"
#include "planted.h"

__global__ void warp_sum_ok(const float *in, float *sums, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0xffffffffu, v, off);
    if (i < n && threadIdx.x % 32 == 0) sums[i / 32] = v;
}

__global__ void warp_sum_skips_last(const float *in, float *sums, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    for (int off = 16; off > 1; off /= 2) v += __shfl_down_sync(0xffffffffu, v, off); /* PLANTED: off > 1 */
    if (i < n && threadIdx.x % 32 == 0) sums[i / 32] = v;
}

/* Lanes 0-15 sum their 16 values; lanes 16-31 contribute nothing. */
__global__ void half_warp_sum_reads_outside(const float *in, float *sums, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x % 32;
    if (lane >= 16) return;
    float v = i < n ? in[i] : 0.0f;
    /* PLANTED: offsets start at 16, so lane 0 reads lane 16, which is not in the mask */
    for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0x0000ffffu, v, off);
    if (i < n && lane == 0) sums[i / 32] = v;
}

__global__ void half_warp_sum_ok(const float *in, float *sums, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x % 32;
    if (lane >= 16) return;
    float v = i < n ? in[i] : 0.0f;
    /* width 16: lane + off never leaves lanes 0-15 */
    for (int off = 8; off > 0; off /= 2) v += __shfl_down_sync(0x0000ffffu, v, off, 16);
    if (i < n && lane == 0) sums[i / 32] = v;
}

extern "C" int planted_warp_sum(int bug, const float *in, float *sums, int n)
{
    float *d_in, *d_sums;
    CUDA_CHECK(cudaMalloc((void **)&d_in, (size_t)n * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&d_sums, (size_t)n / 32 * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_in, in, (size_t)n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_sums, 0, (size_t)n / 32 * sizeof(float)));
    switch (bug) { /* one LAUNCH per kernel, so that the error message names it */
    case 0: LAUNCH(warp_sum_ok, (n + 127) / 128, 128, 0)(d_in, d_sums, n); break;
    case 1: LAUNCH(warp_sum_skips_last, (n + 127) / 128, 128, 0)(d_in, d_sums, n); break;
    case 2: LAUNCH(half_warp_sum_reads_outside, (n + 127) / 128, 128, 0)(d_in, d_sums, n); break;
    case 3: LAUNCH(half_warp_sum_ok, (n + 127) / 128, 128, 0)(d_in, d_sums, n); break;
    }
    int err = (int)cudaGetLastError();
    CUDA_CHECK(cudaMemcpy(sums, d_sums, (size_t)n / 32 * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_sums));
    return err;
}

/* Not a bug: every warp operation once, so the test can check the emulator's rules against CUDA's.
 * res (32 lanes x 7 per block of 64): shfl idx 5 width 8, up 3 width 8, down 3 width 8, xor 9 width 32,
 * xor 2 width 4, ballot(v odd), any/all packed as any + 2 all over lanes whose value is < 40. */
__global__ void warp_semantics(const int *in, int *res)
{
    int t = threadIdx.x, v = in[t];
    int *r = res + t * 7;
    r[0] = __shfl_sync(0xffffffffu, v, 5, 8);
    r[1] = __shfl_up_sync(0xffffffffu, v, 3, 8);
    r[2] = __shfl_down_sync(0xffffffffu, v, 3, 8);
    r[3] = __shfl_xor_sync(0xffffffffu, v, 9);
    r[4] = __shfl_xor_sync(0xffffffffu, v, 2, 4);
    r[5] = (int)__ballot_sync(0xffffffffu, v & 1);
    __syncwarp();
    r[6] = __any_sync(0xffffffffu, v < 40) + 2 * __all_sync(0xffffffffu, v < 40);
}

extern "C" int planted_warp_semantics(const int *in, int *res)
{
    int *d_in, *d_res;
    CUDA_CHECK(cudaMalloc((void **)&d_in, 64 * sizeof(int)));
    CUDA_CHECK(cudaMalloc((void **)&d_res, 64 * 7 * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_in, in, 64 * sizeof(int), cudaMemcpyHostToDevice));
    LAUNCH(warp_semantics, 1, 64, 0)(d_in, d_res);
    int err = (int)cudaGetLastError();
    CUDA_CHECK(cudaMemcpy(res, d_res, 64 * 7 * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_res));
    return err;
}
