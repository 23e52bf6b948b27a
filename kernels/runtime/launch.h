/* launch.h - the one way this project launches a kernel, and declares dynamic shared memory.
 *
 *   LAUNCH(kernel, grid, block, smem_bytes)(arg0, arg1, ...);
 *   CUDA_CHECK_LAST();
 *
 * Under nvcc it is exactly  kernel<<<grid, block, smem_bytes, cuda_launch_stream()>>>(args...). Under the CPU
 * emulator (g++ with -DCUDA_EMU, tests/cuda_emu/) it calls the emulator's launcher, which runs every thread of
 * every block as a fiber and reports errors through cudaGetLastError(). No source is rewritten for either build.
 * cuda_launch_stream() (cuda_track.cu) counts the launch for "launches per pass" and answers the stream: the
 * legacy default stream, or the capture stream while a CUDA Graph is being captured (cuda_capture_begin).
 *
 *   DYNAMIC_SHARED(float, buf);   // inside a kernel: float *buf, smem_bytes long, 16-byte aligned
 */
#ifndef KERNELS_LAUNCH_H
#define KERNELS_LAUNCH_H

extern "C" cudaStream_t cuda_launch_stream(void);

#ifdef CUDA_EMU
#include "../../tests/cuda_emu/include/emu_launch.h"
/* the emulator decides capture by itself (emu_graph.cc); the stream is still asked for, to count the launch */
#define LAUNCH(kernel, grid, block, smem)                                                                       \
    ((void)cuda_launch_stream(),                                                                               \
     ::emu::make_launcher((kernel), #kernel, dim3(grid), dim3(block), (size_t)(smem), __FILE__, __LINE__))
#define DYNAMIC_SHARED(T, name) T *name = (T *)::emu::dynamic_smem()
#else
#define LAUNCH(kernel, grid, block, smem) kernel<<<(grid), (block), (smem), cuda_launch_stream()>>>
#define DYNAMIC_SHARED(T, name)                            \
    extern __shared__ __align__(16) unsigned char name##_raw_[]; \
    T *name = (T *)name##_raw_
#endif

#endif
