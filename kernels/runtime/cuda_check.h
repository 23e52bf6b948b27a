/* cuda_check.h - every CUDA and cuBLAS call goes through one of these. On failure they print the call, the
 * error's name and file:line, and exit(4): a lesson never carries on with a broken device state.
 * CUDA-only (included from .cu files). */
#ifndef KERNELS_CUDA_CHECK_H
#define KERNELS_CUDA_CHECK_H

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define CUDA_CHECK(call) cuda_check_((call), #call, __FILE__, __LINE__)
#define CUBLAS_CHECK(call) cublas_check_((call), #call, __FILE__, __LINE__)
/* after a kernel launch: launch errors are reported at the launch, not at the next synchronising call */
#define CUDA_CHECK_LAST() cuda_check_(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)

static inline void cuda_check_(cudaError_t e, const char *call, const char *file, int line)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "CUDA error %s (%s) in %s at %s:%d\n", cudaGetErrorName(e), cudaGetErrorString(e),
                call, file, line);
        exit(4);
    }
}

static inline void cublas_check_(cublasStatus_t s, const char *call, const char *file, int line)
{
    if (s != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "cuBLAS error %s (%s) in %s at %s:%d\n", cublasGetStatusName(s),
                cublasGetStatusString(s), call, file, line);
        exit(4);
    }
}

#endif
