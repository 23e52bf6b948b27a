/* launch.h - the one way this project launches a kernel, and declares dynamic shared memory.
 *
 *   LAUNCH(kernel, grid, block, smem_bytes)(arg0, arg1, ...);
 *   CUDA_CHECK_LAST();
 *
 * It is exactly  kernel<<<grid, block, smem_bytes, cuda_launch_stream()>>>(args...). cuda_launch_stream()
 * (cuda_track.cu) counts the launch for "launches per pass" and answers the stream: the legacy default
 * stream, or the capture stream while a CUDA Graph is being captured (cuda_capture_begin). A build that runs
 * kernels some other way (the CPU emulator of the tests) defines LAUNCH and DYNAMIC_SHARED in its own
 * cuda_runtime.h, found first on its include path; no source is rewritten for either build.
 *
 *   DYNAMIC_SHARED(float, buf);   // inside a kernel: float *buf, smem_bytes long, 128-byte aligned (the
 *                                 // strictest of its uses: WMMA tiles need 32, a swizzled tile row 128)
 *
 *   CUDA_CHECK(LAUNCH_COOPERATIVE(kernel, grid, block, smem_bytes)(arg0, arg1, ...));
 *
 * is cudaLaunchCooperativeKernel(kernel, grid, block, {&arg0, &arg1, ...}, smem_bytes, cuda_launch_stream()):
 * every block resident at once, so the kernel may call cooperative_groups::this_grid().sync(). It returns the
 * launch's error (a grid larger than the device holds at once: cudaErrorCooperativeLaunchTooLarge).
 */
#ifndef KERNELS_LAUNCH_H
#define KERNELS_LAUNCH_H

extern "C" cudaStream_t cuda_launch_stream(void);

#ifndef LAUNCH
#define LAUNCH(kernel, grid, block, smem) kernel<<<(grid), (block), (smem), cuda_launch_stream()>>>
/* the arguments converted to the kernel's parameter types (as <<<>>> does), then passed by address */
template <class... P> struct cooperative_launch {
    void (*kernel)(P...);
    dim3 grid, block;
    size_t smem;
    cudaError_t operator()(P... a) const
    {
        void *args[] = {(void *)&a..., nullptr};
        return cudaLaunchCooperativeKernel((const void *)kernel, grid, block, args, smem,
                                           cuda_launch_stream());
    }
};
template <class... P> static inline cooperative_launch<P...>
make_cooperative_launch(void (*k)(P...), dim3 grid, dim3 block, size_t smem)
{
    return cooperative_launch<P...>{k, grid, block, smem};
}
#define LAUNCH_COOPERATIVE(kernel, grid, block, smem)                                                        \
    make_cooperative_launch((kernel), dim3(grid), dim3(block), (smem))
#define DYNAMIC_SHARED(T, name)                                  \
    extern __shared__ __align__(128) unsigned char name##_raw_[]; \
    T *name = (T *)name##_raw_
#endif

#endif
