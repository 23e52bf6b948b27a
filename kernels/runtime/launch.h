/* launch.h - the one way this project launches a kernel, and declares dynamic shared memory.
 *
 *   LAUNCH(kernel, grid, block, smem_bytes)(arg0, arg1, ...);
 *   CUDA_CHECK_LAST();
 *
 * It is exactly  kernel<<<grid, block, smem_bytes, cuda_launch_stream()>>>(args...). cuda_launch_stream()
 * (cuda_track.cu) counts the launch for "launches per pass" and answers the stream: the legacy default stream,
 * or the capture stream while a CUDA Graph is being captured (cuda_capture_begin). A build that runs kernels
 * some other way (the CPU emulator of the tests) defines LAUNCH and DYNAMIC_SHARED in its own cuda_runtime.h,
 * found first on its include path; no source is rewritten for either build.
 *
 *   DYNAMIC_SHARED(float, buf);   // inside a kernel: float *buf, smem_bytes long, 16-byte aligned
 */
#ifndef KERNELS_LAUNCH_H
#define KERNELS_LAUNCH_H

extern "C" cudaStream_t cuda_launch_stream(void);

#ifndef LAUNCH
#define LAUNCH(kernel, grid, block, smem) kernel<<<(grid), (block), (smem), cuda_launch_stream()>>>
#define DYNAMIC_SHARED(T, name)                                  \
    extern __shared__ __align__(16) unsigned char name##_raw_[]; \
    T *name = (T *)name##_raw_
#endif

#endif
