/* cuda_runtime.h - TEST-ONLY shim, first on the include path of the emulation build (make EMU=1).
 *
 * Takes NVIDIA's own runtime declarations (cuda_runtime_api.h: every prototype, type and error code is theirs)
 * after defining the execution-space keywords for a host compiler:
 *   __global__ __device__ __host__  -> nothing: kernels and device functions are ordinary C++ functions
 *   __shared__                      -> static, in the section emu_shared: blocks run one at a time, so static
 *                                      storage is per-block storage; the section's bounds (__start_emu_shared,
 *                                      __stop_emu_shared) tell the access hooks which addresses are shared
 * The runtime functions themselves (cudaMalloc, cudaMemcpy, events, ...) are defined in emu_runtime.cc as
 * synchronous host operations. libcudart is never linked. Kernel-side built-ins are in emu_kernel.h. */
#ifndef CUDA_EMU_CUDA_RUNTIME_H
#define CUDA_EMU_CUDA_RUNTIME_H

#ifndef CUDA_EMU
#error "tests/cuda_emu/include is the CPU emulator's shim: build with -DCUDA_EMU (make EMU=1)"
#endif
#ifndef __cplusplus
#error "the emulation build compiles .cu files as C++ (g++ -x c++)"
#endif

#define __global__
#define __device__
#define __host__
#define __shared__ __attribute__((section("emu_shared"))) static
#define __forceinline__ inline
#define __launch_bounds__(...)

#include <cuda_runtime_api.h>

#include "emu_kernel.h"

/* cuda_runtime.h's C++ overload: a kernel (a function here) for the runtime's const void * (emu_dry.cc records
 * the opt-in per kernel) */
template <class T> static inline cudaError_t cudaFuncSetAttribute(T *func, enum cudaFuncAttribute attr, int value)
{
    return ::cudaFuncSetAttribute(reinterpret_cast<const void *>(func), attr, value);
}

#endif
