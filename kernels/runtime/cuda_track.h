/* cuda_track.h - the device side of the runtime, callable from C: device discovery, the tracked device
 * allocator (the twin of host_alloc), copies, the cuBLAS handle with a tracked workspace, and event timers.
 *
 * Built only when CUDA is on (HAVE_CUDA). Nothing here aborts when there is no GPU: cuda_device_count()
 * answers 0 and the lessons skip their CUDA implementation with a message. (Under make EMU=1 the same file
 * runs on the CPU emulator in tests/cuda_emu.)
 */
#ifndef KERNELS_CUDA_TRACK_H
#define KERNELS_CUDA_TRACK_H

#include <stddef.h>
#include "dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Devices usable by this process; 0 only when the machine has no GPU: cudaErrorNoDevice, or no NVIDIA driver
 * installed at all (cudaErrorInsufficientDriver with driver version 0); the reason goes to *why if non-NULL.
 * Any other discovery error (e.g. a driver too old for the runtime) is a broken GPU setup, not a skip: it
 * prints the error with the driver and runtime versions and exits with status 4. So does a skip when the
 * environment sets CUDA_REQUIRE_DEVICE=1 (GPU CI runners). */
int cuda_device_count(const char **why);
const char *cuda_device_name(void); /* e.g. "NVIDIA H100 80GB HBM3"; "none" without a device */

/* Tracked cudaMalloc / cudaFree (MEM_DEVICE in track.h). Poisoned with 0xFF bytes like host_alloc. */
void *dev_alloc(size_t bytes, const char *label);
void *dev_alloc_array(size_t count, dtype t, const char *label);
void dev_free(void *p);
void dev_upload(void *dst_dev, const void *src_host, size_t bytes);
void dev_download(void *dst_host, const void *src_dev, size_t bytes);
void dev_synchronize(void);

/* cuBLAS: one handle for the process, created on first use (its small internal state is cuBLAS's own and not
 * tracked). Its workspace is explicit: attach allocates CUBLAS_WORKSPACE_BYTES through dev_alloc under the
 * label "cuBLAS workspace" and hands it to cublasSetWorkspace, so the tracker counts it; detach frees it.
 * 32 MiB is the size NVIDIA documents for Hopper (4 MiB suffices on older GPUs); one size everywhere keeps the
 * memory formula the same on every device. */
#define CUBLAS_WORKSPACE_BYTES ((size_t)32 << 20)
void *cublas_handle(void); /* a cublasHandle_t, as void* for C callers */
/* Device bytes cublasCreate allocated for itself (its default workspace), measured with cudaMemGetInfo around
 * the call: memory the tracker cannot see, for the lesson's "untracked" line. 0 before the handle exists, and
 * 0 under the CPU emulator (its cuBLAS shim allocates no device memory). */
size_t cublas_untracked_bytes(void);
void cublas_workspace_attach(void);
void cublas_workspace_detach(void);

/* Event timer on the default stream: begin records a start event, end records a stop event, waits for it and
 * returns the elapsed milliseconds. */
void gpu_timer_begin(void);
double gpu_timer_end_ms(void);

#ifdef __cplusplus
}
#endif

#endif
