/* planted_eyes.cu - TEST-ONLY: bugs that the two-pass comparison cannot see, for the access-hook detectors
 * (emu_hazard.cc), and access patterns for the profile's thresholds (emu_profile.cc); see planted.h. Inputs
 * are small integers, so every sum is exact in any order and both passes agree bit for bit: only the
 * detectors can fail these launches. */
#include "../../kernels/runtime/cuda_check.h"
#include "../../kernels/runtime/cuda_track.h"
#include "../../kernels/runtime/launch.h"
#include "planted.h"

#define EYES_BLOCK 64

/* out[b] = sum of block b's inputs, every thread adding into one shared float */
__global__ void shared_sum_atomic(const float *in, float *out, int n)
{
    __shared__ float total;
    if (threadIdx.x == 0) total = 0.0f;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&total, in[i]);
    __syncthreads();
    if (threadIdx.x == 0) out[blockIdx.x] = total;
}

__global__ void shared_sum_plain(const float *in, float *out, int n)
{
    __shared__ float total;
    if (threadIdx.x == 0) total = 0.0f;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) total += in[i]; /* PLANTED: a plain read-modify-write by every thread of the block */
    __syncthreads();
    if (threadIdx.x == 0) out[blockIdx.x] = total;
}

/* *sum += the block's inputs, once per block (thread 0) */
__global__ void global_sum_atomic(const float *in, float *sum, int n)
{
    if (threadIdx.x != 0) return;
    float s = 0.0f;
    for (int j = 0; j < (int)blockDim.x && blockIdx.x * blockDim.x + j < (unsigned)n; j++) s += in[blockIdx.x * blockDim.x + j];
    atomicAdd(sum, s);
}

__global__ void global_sum_plain(const float *in, float *sum, int n)
{
    if (threadIdx.x != 0) return;
    float s = 0.0f;
    for (int j = 0; j < (int)blockDim.x && blockIdx.x * blockDim.x + j < (unsigned)n; j++) s += in[blockIdx.x * blockDim.x + j];
    *sum += s; /* PLANTED: every block's thread 0 reads and writes the same address */
}

/* out[b] = sum over the first `slots` warp sums of block b (the block has EYES_BLOCK / 32 warps) */
__global__ void warp_sums_merge(const float *in, float *out, int slots)
{
    __shared__ float part[8];
    float v = in[blockIdx.x * blockDim.x + threadIdx.x];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x != 0) return;
    float s = 0.0f;
    for (int w = 0; w < slots; w++) s += part[w]; /* PLANTED when slots > warps: part[w] nobody wrote */
    out[blockIdx.x] = s;
}

/* acc[i] += in[i] */
__global__ void accumulate(const float *in, float *acc, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) acc[i] += in[i];
}

extern "C" int planted_block_sum(int bug, const float *in, float *out, int n)
{
    float *d_in, *d_out;
    int blocks = (n + EYES_BLOCK - 1) / EYES_BLOCK;
    size_t bytes = (size_t)n * sizeof(float), out_bytes = (size_t)blocks * sizeof(float);
    CUDA_CHECK(cudaMalloc((void **)&d_in, bytes));
    CUDA_CHECK(cudaMalloc((void **)&d_out, out_bytes));
    CUDA_CHECK(cudaMemcpy(d_in, in, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_out, 0, out_bytes));
    switch (bug) {
    case 0: LAUNCH(shared_sum_atomic, blocks, EYES_BLOCK, 0)(d_in, d_out, n); break;
    case 1: LAUNCH(shared_sum_plain, blocks, EYES_BLOCK, 0)(d_in, d_out, n); break;
    case 2: LAUNCH(global_sum_atomic, blocks, EYES_BLOCK, 0)(d_in, d_out, n); break;
    case 3: LAUNCH(global_sum_plain, blocks, EYES_BLOCK, 0)(d_in, d_out, n); break;
    case 4: LAUNCH(warp_sums_merge, blocks, EYES_BLOCK, 0)(d_in, d_out, EYES_BLOCK / 32); break;
    case 5: LAUNCH(warp_sums_merge, blocks, EYES_BLOCK, 0)(d_in, d_out, 4); break;
    }
    int err = (int)cudaGetLastError();
    CUDA_CHECK(cudaMemcpy(out, d_out, bug == 2 || bug == 3 ? sizeof(float) : out_bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    return err;
}

extern "C" int planted_accumulate(int bug, const float *in, float *out, int n)
{
    float *d_in, *d_acc;
    size_t bytes = (size_t)n * sizeof(float);
    CUDA_CHECK(cudaMalloc((void **)&d_in, bytes));
    if (bug == 2) d_acc = (float *)dev_alloc(bytes, "planted accumulator"); /* NaN-poisoned, never written */
    else CUDA_CHECK(cudaMalloc((void **)&d_acc, bytes));
    CUDA_CHECK(cudaMemcpy(d_in, in, bytes, cudaMemcpyHostToDevice));
    if (bug == 0) CUDA_CHECK(cudaMemset(d_acc, 0, bytes)); /* bug 1: PLANTED, the accumulator is never zeroed */
    LAUNCH(accumulate, (n + EYES_BLOCK - 1) / EYES_BLOCK, EYES_BLOCK, 0)(d_in, d_acc, n);
    int err = (int)cudaGetLastError();
    CUDA_CHECK(cudaMemcpy(out, d_acc, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_in));
    if (bug == 2) dev_free(d_acc);
    else CUDA_CHECK(cudaFree(d_acc));
    return err;
}

/* The profile's thresholds: 32 threads copy 32 floats, coalesced or one per 128 bytes; a shared-memory
 * round trip with a stride of one word (conflict-free) or 32 words (every lane in bank 0: 32-way). */
__global__ void load_coalesced(const float *in, float *out) { out[threadIdx.x] = in[threadIdx.x]; }

__global__ void load_strided(const float *in, float *out)
{
    out[threadIdx.x] = in[threadIdx.x * 32]; /* PLANTED: each lane its own 32-byte sector */
}

__global__ void smem_conflict_free(const float *in, float *out)
{
    __shared__ float s[32 * 32];
    s[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = s[31 - threadIdx.x];
}

__global__ void smem_conflict32(const float *in, float *out)
{
    __shared__ float s[32 * 32];
    s[threadIdx.x * 32] = in[threadIdx.x]; /* PLANTED: 32 words of bank 0 */
    __syncthreads();
    out[threadIdx.x] = s[(31 - threadIdx.x) * 32];
}

extern "C" int planted_pattern(int bug, const float *in, float *out)
{
    float *d_in, *d_out;
    CUDA_CHECK(cudaMalloc((void **)&d_in, 32 * 32 * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&d_out, 32 * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_in, in, 32 * 32 * sizeof(float), cudaMemcpyHostToDevice));
    switch (bug) {
    case 0: LAUNCH(load_coalesced, 1, 32, 0)(d_in, d_out); break;
    case 1: LAUNCH(load_strided, 1, 32, 0)(d_in, d_out); break;
    case 2: LAUNCH(smem_conflict_free, 1, 32, 0)(d_in, d_out); break;
    case 3: LAUNCH(smem_conflict32, 1, 32, 0)(d_in, d_out); break;
    }
    int err = (int)cudaGetLastError();
    CUDA_CHECK(cudaMemcpy(out, d_out, 32 * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    return err;
}
