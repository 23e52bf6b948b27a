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
#define __grid_constant__

#include <cuda_runtime_api.h>

#include "emu_kernel.h"

/* cuda_runtime.h's C++ overload: a kernel (a function here) for the runtime's const void * (emu_dry.cc records
 * the opt-in per kernel) */
template <class T> static inline cudaError_t cudaFuncSetAttribute(T *func, enum cudaFuncAttribute attr, int value)
{
    return ::cudaFuncSetAttribute(reinterpret_cast<const void *>(func), attr, value);
}
template <class T>
static inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *num, T *func, int block, size_t dyn)
{
    return ::cudaOccupancyMaxActiveBlocksPerMultiprocessor(num, reinterpret_cast<const void *>(func), block, dyn);
}

/* The project's hooks (kernels/runtime/launch.h, cuda_track.cu use their own definitions when these are absent):
 * LAUNCH calls the emulator's launcher, which runs every thread of every block as a fiber and reports errors
 * through cudaGetLastError(); the stream is still asked for, to count the launch (the emulator decides capture
 * by itself, emu_graph.cc). DEVICE_ALLOC_NOTE names a device allocation in the detectors' messages and marks
 * dev_alloc's poison fill as not a write (initcheck). */
#include "emu_api.h"
#include "emu_launch.h"
extern "C" cudaStream_t cuda_launch_stream(void);
#define LAUNCH(kernel, grid, block, smem)                                                                       \
    ((void)cuda_launch_stream(),                                                                               \
     ::emu::make_launcher((kernel), #kernel, dim3(grid), dim3(block), (size_t)(smem), __FILE__, __LINE__))
#define LAUNCH_COOPERATIVE(kernel, grid, block, smem)                                                           \
    ((void)cuda_launch_stream(),                                                                               \
     ::emu::make_coop_launcher((kernel), #kernel, dim3(grid), dim3(block), (size_t)(smem), __FILE__, __LINE__))
#define DYNAMIC_SHARED(T, name) T *name = (T *)::emu::dynamic_smem()
#define DEVICE_ALLOC_NOTE(p, bytes, label) (emu_label_alloc((p), (label)), emu_mark_uninit((p), (bytes)))

/* The dry run's loop skip, which the emulation build adds to every loop whose range is data-sized (emu_loops.cc
 * writes it into the loop's condition; no source carries it). In a dry run (EMU_DRY=1, emu_dry.cc), which runs
 * only the boundary blocks of each launch, the loop runs only its boundary iterations too: the first, then (it
 * jumps from the second) the last two. Indices are largest there, so an int that wraps at the end of the loop --
 * or in its last increment -- is still executed, while a loop of 10^9 iterations costs three. [first, end) by
 * step are the values the condition sees (step < 0 counts down; end is then the first value not run). The jump
 * depends only on the bounds, so a loop with a __syncthreads inside keeps its barriers matched, and a strided
 * loop (first = threadIdx.x) takes each thread to its own last two iterations. 64-bit arithmetic, so the jump
 * itself never wraps; a target the variable cannot hold wraps as the loop's own increment would. */
namespace emu {
/* pure: it writes no memory, so a loop whose condition calls it keeps its loads hoisted as nvcc compiles them */
int dry(void) __attribute__((pure));
template <class T> inline void dry_skip(T &i, long long first, long long end, long long step)
{
    if (step == 0 || (long long)i != first + step || ::emu::dry() == 3) return; /* 3: the model's run, every loop */
    long long n = (end - first + step - (step > 0 ? 1 : -1)) / step; /* iterations */
    if (n > 3) i = (T)(first + (n - 2) * step);
}
} /* namespace emu */

#endif
