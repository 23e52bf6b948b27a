/* planted_grid.cu - TEST-ONLY: grid-wide synchronisation in a cooperative launch, right and wrong (planted.h). */
#include <cooperative_groups.h>

#include "../../kernels/runtime/cuda_check.h"
#include "../../kernels/runtime/launch.h"
#include "planted.h"

#define COOP_BLOCK 64

/* out[i] = stage of the next block's element + 3 in[i], the latter kept in this block's static and dynamic shared
 * memory across the grid.sync (each resident block has its own) */
__global__ void neighbour_ok(const float *in, float *stage, float *out)
{
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    __shared__ float mine[COOP_BLOCK];
    DYNAMIC_SHARED(float, twice); /* COOP_BLOCK floats */
    int t = threadIdx.x, b = blockIdx.x, i = b * COOP_BLOCK + t, next = (b + 1) % (int)gridDim.x;
    mine[t] = in[i];
    twice[t] = 2.0f * in[i];
    stage[i] = in[i] + 1.0f;
    grid.sync(); /* every block's stage is written before any block reads its neighbour's */
    out[i] = stage[next * COOP_BLOCK + t] + mine[t] + twice[t];
}

__global__ void neighbour_no_grid_sync(const float *in, float *stage, float *out)
{
    __shared__ float mine[COOP_BLOCK];
    DYNAMIC_SHARED(float, twice);
    int t = threadIdx.x, b = blockIdx.x, i = b * COOP_BLOCK + t, next = (b + 1) % (int)gridDim.x;
    mine[t] = in[i];
    twice[t] = 2.0f * in[i];
    stage[i] = in[i] + 1.0f;
    /* PLANTED: no grid.sync: block b reads block b+1's stage, which that block may not have written yet */
    out[i] = stage[next * COOP_BLOCK + t] + mine[t] + twice[t];
}

__global__ void neighbour_early_exit(const float *in, float *stage, float *out)
{
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    int t = threadIdx.x, b = blockIdx.x, i = b * COOP_BLOCK + t, next = (b + 1) % (int)gridDim.x;
    stage[i] = in[i] + 1.0f;
    if (b == 0) return; /* PLANTED: block 0 leaves; the others wait at the grid.sync for ever */
    grid.sync();
    out[i] = stage[next * COOP_BLOCK + t];
}

extern "C" int planted_grid_sync(int bug, const float *in, float *out, int blocks)
{
    float *d_in, *d_stage, *d_out;
    size_t n = (size_t)blocks * COOP_BLOCK, bytes = n * sizeof(float), smem = COOP_BLOCK * sizeof(float);
    CUDA_CHECK(cudaMalloc((void **)&d_in, bytes));
    CUDA_CHECK(cudaMalloc((void **)&d_stage, bytes));
    CUDA_CHECK(cudaMalloc((void **)&d_out, bytes));
    CUDA_CHECK(cudaMemcpy(d_in, in, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_out, 0, bytes));
    int err = 0;
    switch (bug) { /* one launch per kernel, so that the error message names it */
    case 0: err = LAUNCH_COOPERATIVE(neighbour_ok, blocks, COOP_BLOCK, smem)(d_in, d_stage, d_out); break;
    case 1: err = LAUNCH_COOPERATIVE(neighbour_no_grid_sync, blocks, COOP_BLOCK, smem)(d_in, d_stage, d_out); break;
    case 2: err = LAUNCH_COOPERATIVE(neighbour_early_exit, blocks, COOP_BLOCK, 0)(d_in, d_stage, d_out); break;
    case 3:
        LAUNCH(neighbour_ok, blocks, COOP_BLOCK, smem)(d_in, d_stage, d_out);
        err = (int)cudaGetLastError();
        break;
    }
    if (!err) err = (int)cudaDeviceSynchronize();
    CUDA_CHECK(cudaMemcpy(out, d_out, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_stage));
    CUDA_CHECK(cudaFree(d_out));
    return err;
}
