/* planted_memory.cu - TEST-ONLY: memory errors and a bad launch (see planted.h). */
#include "../../kernels/runtime/cuda_check.h"
#include "../../kernels/runtime/launch.h"
#include "planted.h"

__global__ void scale_ok(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * in[i];
}

__global__ void scale_off_by_one(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) out[i] = 2.0f; /* PLANTED: i == n writes one element past the end */
    if (i < n) out[i] = 2.0f * in[i];
}

extern "C" int planted_scale(int bug, const float *in, float *out, int n)
{
    float *d_in, *d_out;
    size_t bytes = (size_t)n * sizeof(float);
    CUDA_CHECK(cudaMalloc((void **)&d_in, bytes));
    CUDA_CHECK(cudaMalloc((void **)&d_out, bytes));
    CUDA_CHECK(cudaMemcpy(d_in, in, bytes, cudaMemcpyHostToDevice));
    if (bug == 1) LAUNCH(scale_off_by_one, (n + 255) / 256, 256, 0)(d_in, d_out, n);
    else if (bug == 2) LAUNCH(scale_ok, (n + 255) / 256, 256, 0)(d_in, out, n); /* PLANTED: host pointer */
    else if (bug == 3) LAUNCH(scale_ok, 1, 2048, 0)(d_in, d_out, n);            /* PLANTED: block > 1024 */
    else LAUNCH(scale_ok, (n + 255) / 256, 256, 0)(d_in, d_out, n);
    int err = (int)cudaGetLastError();
    if (bug != 2) CUDA_CHECK(cudaMemcpy(out, d_out, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_in));
    cudaError_t e = cudaFree(d_out); /* after an out-of-bounds write, cudaFree reports the damaged red zone too */
    (void)e;
    (void)cudaGetLastError();
    return err;
}
