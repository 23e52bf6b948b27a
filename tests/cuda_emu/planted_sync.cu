/* planted_sync.cu - TEST-ONLY: block barriers, right and wrong (see planted.h). */
#include "../../kernels/runtime/cuda_check.h"
#include "../../kernels/runtime/launch.h"
#include "planted.h"

#define BLOCK 256

__global__ void reverse_ok(const float *in, float *out, int n)
{
    DYNAMIC_SHARED(float, s); /* BLOCK floats, sized at the launch (the other kernels use static shared memory) */
    int t = threadIdx.x, i = blockIdx.x * BLOCK + t, j = blockIdx.x * BLOCK + (BLOCK - 1 - t);
    s[t] = i < n ? in[i] : 0.0f;
    __syncthreads(); /* every element of s is written before any thread reads its mirror */
    if (j < n) out[j] = s[t];
}

__global__ void reverse_no_sync(const float *in, float *out, int n)
{
    __shared__ float s[BLOCK];
    int t = threadIdx.x, i = blockIdx.x * BLOCK + t;
    s[BLOCK - 1 - t] = i < n ? in[i] : 0.0f;
    /* PLANTED: no __syncthreads: thread t reads s[t], which thread BLOCK-1-t writes */
    if (i < n) out[i] = s[t];
}

__global__ void reverse_divergent_sync(const float *in, float *out, int n)
{
    __shared__ float s[BLOCK];
    int t = threadIdx.x, i = blockIdx.x * BLOCK + t, j = blockIdx.x * BLOCK + (BLOCK - 1 - t);
    s[t] = i < n ? in[i] : 0.0f;
    if (t < BLOCK / 2) __syncthreads(); /* PLANTED: half the block never arrives */
    if (j < n) out[j] = s[t];
}

__global__ void reverse_exit_before_sync(const float *in, float *out, int n)
{
    __shared__ float s[BLOCK];
    int t = threadIdx.x, i = blockIdx.x * BLOCK + t, j = blockIdx.x * BLOCK + (BLOCK - 1 - t);
    if (i >= n) return; /* PLANTED: the last block's tail leaves before the barrier */
    s[t] = in[i];
    __syncthreads();
    if (j < n) out[j] = s[t];
}

extern "C" int planted_reverse(int bug, const float *in, float *out, int n)
{
    float *d_in, *d_out;
    size_t bytes = (size_t)n * sizeof(float);
    CUDA_CHECK(cudaMalloc((void **)&d_in, bytes));
    CUDA_CHECK(cudaMalloc((void **)&d_out, bytes));
    CUDA_CHECK(cudaMemcpy(d_in, in, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_out, 0, bytes));
    unsigned grid = (unsigned)((n + BLOCK - 1) / BLOCK);
    switch (bug) { /* one LAUNCH per kernel, so that the error message names it */
    case 0: LAUNCH(reverse_ok, grid, BLOCK, BLOCK * sizeof(float))(d_in, d_out, n); break;
    case 1: LAUNCH(reverse_no_sync, grid, BLOCK, 0)(d_in, d_out, n); break;
    case 2: LAUNCH(reverse_divergent_sync, grid, BLOCK, 0)(d_in, d_out, n); break;
    case 3: LAUNCH(reverse_exit_before_sync, grid, BLOCK, 0)(d_in, d_out, n); break;
    }
    int err = (int)cudaGetLastError();
    CUDA_CHECK(cudaMemcpy(out, d_out, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    return err;
}
