/* planted_limits.cu - TEST-ONLY: limits that bite only at a large size, for the dry run, and the dynamic
 * shared-memory opt-in (see planted.h). */
#include "../../kernels/runtime/cuda_check.h"
#include "../../kernels/runtime/cuda_fit.h"
#include "../../kernels/runtime/launch.h"
#include "planted.h"

/* out (n,): out[i] = 1 */
__global__ void fill_int_index(float *out, long long n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x; /* PLANTED: above 2^31 - 1 the index wraps negative */
    if (i < n) out[i] = 1.0f;
}

/* out (n,): out[i] = 1, the index in 64 bits */
__global__ void fill_wide_index(float *out, long long n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 1.0f;
}

/* out (n,) as rows of 2^16 elements: grid.x covers a row in 256-element blocks, grid.y the rows */
__global__ void fill_rows(float *out, long long n)
{
    long long i = ((long long)blockIdx.y << 16) + (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 1.0f;
}

extern "C" int planted_fill(int bug, long long n)
{
    float *d;
    CUDA_CHECK(cudaMalloc((void **)&d, (size_t)n * sizeof(float)));
    unsigned blocks = (unsigned)((n + 255) / 256);
    if (bug == 1) LAUNCH(fill_int_index, blocks, 256, 0)(d, n);
    /* PLANTED: rows = n / 2^16 in grid.y, whose limit is 65535: past 2^32 elements the grid overflows */
    else if (bug == 2) LAUNCH(fill_rows, dim3(256, (unsigned)((n + 65535) >> 16)), 256, 0)(d, n);
    else LAUNCH(fill_wide_index, blocks, 256, 0)(d, n);
    int err = (int)cudaGetLastError();
    CUDA_CHECK(cudaFree(d));
    return err;
}

/* out (blockDim,): out[t] = in[t] + in[t + blockDim] + ... over in (n,), one block striding over all of it. A
 * thread's loop runs n / blockDim times: a dry run runs its first and last two (the skip emu_loops.cc adds). */
__global__ void sum_stride_int(const float *in, long long n, float *out)
{
    float s = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) { /* PLANTED: past 2^31 - 1, i + blockDim wraps negative */
        s += in[i];
    }
    out[threadIdx.x] = s;
}

/* the same, the index in 64 bits */
__global__ void sum_stride_wide(const float *in, long long n, float *out)
{
    float s = 0.0f;
    for (long long i = threadIdx.x; i < n; i += blockDim.x) {
        s += in[i];
    }
    out[threadIdx.x] = s;
}

extern "C" int planted_stride_sum(int bug, long long n)
{
    float *in, *out;
    CUDA_CHECK(cudaMalloc((void **)&in, (size_t)n * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&out, 32 * sizeof(float)));
    CUDA_CHECK(cudaMemset(in, 0, (size_t)n * sizeof(float))); /* moves nothing in a dry run */
    if (bug) LAUNCH(sum_stride_int, 1, 32, 0)(in, n, out);
    else LAUNCH(sum_stride_wide, 1, 32, 0)(in, n, out);
    int err = (int)cudaGetLastError();
    CUDA_CHECK(cudaFree(in));
    CUDA_CHECK(cudaFree(out));
    return err;
}

/* one float of dynamic shared memory per thread and then some: out[t] = t through shared memory */
__global__ void smem_echo(float *out)
{
    DYNAMIC_SHARED(float, s);
    s[threadIdx.x] = (float)threadIdx.x;
    __syncthreads(); /* a thread reads what another wrote */
    out[threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}

extern "C" int planted_optin_limit(void)
{
    int optin = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
    return optin;
}

extern "C" int planted_smem(int optin_bytes, size_t smem)
{
    float *d;
    CUDA_CHECK(cudaMalloc((void **)&d, 64 * sizeof(float)));
    int err = 0;
    if (optin_bytes) err = (int)cudaFuncSetAttribute(smem_echo, cudaFuncAttributeMaxDynamicSharedMemorySize, optin_bytes);
    if (!err) {
        LAUNCH(smem_echo, 1, 64, smem)(d);
        err = (int)cudaGetLastError();
    }
    (void)cudaGetLastError();
    CUDA_CHECK(cudaFree(d));
    return err;
}

/* out (blockDim,): out[t] = t, one block of `threads` (what a kernel's registers per thread allow, emu_resources) */
__global__ void echo_threads(float *out) { out[threadIdx.x] = (float)threadIdx.x; }

extern "C" int planted_block(unsigned threads)
{
    float *d;
    CUDA_CHECK(cudaMalloc((void **)&d, threads * sizeof(float)));
    LAUNCH(echo_threads, 1, threads, 0)(d);
    int err = (int)cudaGetLastError();
    CUDA_CHECK(cudaFree(d));
    return err;
}

/* A version's launch done right: its fit check first (kernels/runtime/cuda_fit.h), the launch only where it fits.
 * Returns the launch's error, or -1 with the reason in *why when the check skipped it. */
extern "C" int planted_fitted_smem(size_t smem, const char **why)
{
    const cuda_launch_need need = {(const void *)smem_echo, 64, smem, 80, 0};
    if ((*why = cuda_fit(&need, 1))) return -1;
    return planted_smem((int)smem, smem);
}

/* the emulated device's compute capability, major * 10 + minor, and the device's name */
extern "C" int planted_device_cc(char *name, size_t len)
{
    cudaDeviceProp p;
    CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
    snprintf(name, len, "%s", p.name);
    return p.major * 10 + p.minor;
}

/* out[0] = the double at in + offset (floats): an 8-byte load, which a GPU makes only at an 8-byte aligned address
 * (a float4 would show the same on a GPU, but g++ splits its load into four 4-byte ones, which the emulator then
 * sees: tests/cuda_emu/README.md) */
__global__ void load_double(const float *in, int offset, float *out)
{
    double v = *(const double *)(in + offset); /* PLANTED: offset 1 is 4 bytes past an 8-byte boundary */
    out[0] = (float)v;
}

extern "C" int planted_vector_load(int offset)
{
    float *d;
    CUDA_CHECK(cudaMalloc((void **)&d, 16 * sizeof(float)));
    CUDA_CHECK(cudaMemset(d, 0, 16 * sizeof(float)));
    LAUNCH(load_double, 1, 1, 0)(d, offset, d + 12);
    int err = (int)cudaGetLastError();
    CUDA_CHECK(cudaFree(d));
    return err;
}
