/* launch.h - the one way this project launches a kernel, and declares dynamic shared memory.
 *
 *   LAUNCH(kernel, grid, block, smem_bytes)(arg0, arg1, ...);
 *   CUDA_CHECK_LAST();
 *
 * Under nvcc it is exactly  kernel<<<grid, block, smem_bytes>>>(args...). Under the CPU emulator (g++ with
 * -DCUDA_EMU, tests/cuda_emu/) it calls the emulator's launcher, which runs every thread of every block as a
 * fiber and reports errors through cudaGetLastError(). No source is rewritten for either build.
 *
 *   DYNAMIC_SHARED(float, buf);   // inside a kernel: float *buf, smem_bytes long, 16-byte aligned
 */
#ifndef KERNELS_LAUNCH_H
#define KERNELS_LAUNCH_H

#ifdef CUDA_EMU
#include "../../tests/cuda_emu/include/emu_launch.h"
#define LAUNCH(kernel, grid, block, smem) \
    ::emu::make_launcher((kernel), #kernel, dim3(grid), dim3(block), (size_t)(smem), __FILE__, __LINE__)
#define DYNAMIC_SHARED(T, name) T *name = (T *)::emu::dynamic_smem()
#else
#define LAUNCH(kernel, grid, block, smem) kernel<<<(grid), (block), (smem)>>>
#define DYNAMIC_SHARED(T, name)                            \
    extern __shared__ __align__(16) unsigned char name##_raw_[]; \
    T *name = (T *)name##_raw_
#endif

#endif
