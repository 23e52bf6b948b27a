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
void *dev_alloc_at(size_t bytes, const char *label, const char *file, int line);
void *dev_alloc_array_at(size_t count, dtype t, const char *label, const char *file, int line);
/* As host_alloc: the macros pass the calling file and line on for --snapshot's frames. */
#define dev_alloc(bytes, label) dev_alloc_at((bytes), (label), __FILE__, __LINE__)
#define dev_alloc_array(count, t, label) dev_alloc_array_at((count), (t), (label), __FILE__, __LINE__)
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

/* Launches per pass, counted by the host code itself (so the same on a GPU and under the emulator): every kernel
 * launch (LAUNCH, launch.h), every cuBLAS GEMM call (cublas_rowmajor.h, lesson 5's gemm_ex) and every graph
 * launch is one. Work recorded into a graph while capturing is not counted: the graph's launch is, once. */
unsigned long long cuda_launch_count(void);
void cuda_count_launch(void); /* called by the launch sites above; not counted while capturing */

/* A CUDA Graph by stream capture, for a fixed-shape step loop whose buffers already exist:
 *   cuda_capture_begin(uses_cublas);  ...the loop's LAUNCH and cuBLAS calls, recorded, not run...
 *   cuda_graph *g = cuda_capture_end();   cuda_graph_launch(g);   cuda_graph_free(g);
 * Capture runs on a private non-blocking stream (the legacy default stream cannot be captured): LAUNCH and the
 * cuBLAS handle use it until cuda_capture_end. No allocation, copy or synchronisation may happen in between (a
 * GPU refuses them; so does the emulator). With uses_cublas the handle is pointed at the stream and, because
 * cublasSetStream resets the workspace to cuBLAS's own pool, the tracked workspace is set again, so cuBLAS
 * allocates nothing while capturing. The graph holds no memory nodes: all its device memory is dev_alloc'ed. */
typedef struct cuda_graph cuda_graph;
void cuda_capture_begin(int uses_cublas);
cuda_graph *cuda_capture_end(void);
void cuda_graph_launch(cuda_graph *g); /* one launch on the capture stream; returns when it has finished */
void cuda_graph_free(cuda_graph *g);
/* end + launch + free: what a pass does, since each pass has new buffers and so captures anew (a training loop
 * with fixed buffers would capture once and call cuda_graph_launch every step) */
void cuda_capture_end_launch_once(void);

#ifdef __cplusplus
}
#endif

#endif
