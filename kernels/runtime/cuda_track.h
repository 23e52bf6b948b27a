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
#include <stdint.h>
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
const char *
cuda_device_name(void); /* the device's own name (cudaGetDeviceProperties); "none" without a device */

/* Tracked cudaMalloc / cudaFree (MEM_DEVICE in track.h). Poisoned with 0xFF bytes like host_alloc, unless the
 * environment sets TRACK_POISON=0 (compute-sanitizer's initcheck counts the fill as a write). */
void *dev_alloc_at(size_t bytes, const char *label, const char *file, int line);
void *dev_alloc_array_at(size_t count, dtype t, const char *label, const char *file, int line);
/* As host_alloc: the macros pass the calling file and line on for --snapshot's frames. */
#define dev_alloc(bytes, label) dev_alloc_at((bytes), (label), __FILE__, __LINE__)
#define dev_alloc_array(count, t, label) dev_alloc_array_at((count), (t), (label), __FILE__, __LINE__)
void dev_free(void *p);
/* A device buffer's new label, for a buffer that takes another tensor's role (dx written over alpha). */
void dev_relabel(void *p, const char *label);
void dev_upload(void *dst_dev, const void *src_host, size_t bytes);
void dev_download(void *dst_host, const void *src_dev, size_t bytes);
void dev_synchronize(void);

/* cuBLAS: one handle for the process, created on first use (its small internal state is cuBLAS's own and not
 * tracked). Its workspace is explicit: attach allocates CUBLAS_WORKSPACE_BYTES through dev_alloc under the
 * label "cuBLAS workspace" and hands it to cublasSetWorkspace, so the tracker counts it; detach frees it.
 * 32 MiB is the size NVIDIA documents for Hopper (4 MiB suffices on older GPUs); one size everywhere keeps
 * the memory formula the same on every device. */
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

/* Launches per pass, counted by the host code itself (so the same on a GPU and under the emulator): every
 * kernel launch (LAUNCH, launch.h), every cuBLAS GEMM call (cublas_rowmajor.h, lesson 5's gemm_ex) and every
 * graph launch is one. Work recorded into a graph while capturing is not counted: the graph's launch is,
 * once. */
unsigned long long cuda_launch_count(void);
void cuda_count_launch(void); /* called by the launch sites above; not counted while capturing */

/* A CUDA Graph by stream capture, captured and instantiated once per shape and replayed after that:
 *   static cuda_graph_cache cache;              // one per call site, kept for the process like the cuBLAS
 *   handle
 *   const uintptr_t key[] = {shape..., every buffer the steps touch};
 *   if (!cuda_graph_replay(&cache, key, n)) {   // 1: replayed (one launch), the steps' results are there
 *       cuda_capture_begin(uses_cublas);  ...the loop's LAUNCH and cuBLAS calls, recorded, not run...
 *       cuda_graph_keep(&cache, key, n);      // instantiated, kept, launched once
 *   }
 * A graph holds the addresses it was captured over, so the key names every buffer (the cuBLAS workspace is
 * added here): a pass whose buffers moved captures again (counted, so a report can say so). Capture runs on a
 * private non-blocking stream (the legacy default stream cannot be captured): LAUNCH and the cuBLAS handle
 * use it until cuda_graph_keep. No allocation, copy or synchronisation may happen in between (a GPU refuses
 * them; so does the emulator). With uses_cublas the handle is pointed at the stream and, because
 * cublasSetStream resets the workspace to cuBLAS's own pool, the tracked workspace is set again, so cuBLAS
 * allocates nothing while capturing. The graph holds no memory nodes: all its device memory is
 * dev_alloc'ed. */
#define CUDA_GRAPH_KEY_WORDS 24
typedef struct cuda_graph_cache {
    void *graph, *exec;                   /* cudaGraph_t, cudaGraphExec_t; NULL before the first capture */
    uintptr_t key[CUDA_GRAPH_KEY_WORDS];  /* what it was captured over */
    int nkey;
} cuda_graph_cache;
int cuda_graph_replay(cuda_graph_cache *c, const uintptr_t *key, int nkey);
void cuda_capture_begin(int uses_cublas);
void cuda_graph_keep(cuda_graph_cache *c, const uintptr_t *key, int nkey);
/* The same addresses for a rerun: a graph holds the addresses it was captured over, and an allocator may hand
 * a rerun's buffers out in another order. Between cuda_echo_record and cuda_echo_replay dev_free parks its
 * buffers (at most CUDA_ECHO_MAX, the device memory kept); after cuda_echo_replay the k-th dev_alloc of the
 * same size gets the k-th recorded buffer, and cuda_echo_end frees what no dev_alloc took back. The tracker
 * sees every dev_alloc and dev_free as usual. The session uses it around a graph version's warm-up and timed
 * runs. The parked buffers stay allocated while the timed run starts, so a run may hold up to twice its peak:
 * cuda_echo_record(peak) records only where twice the run's peak fits in the device's free memory; elsewhere
 * the timed run captures again. */
#define CUDA_ECHO_MAX 256
void cuda_echo_record(size_t peak);
void cuda_echo_replay(void);
void cuda_echo_end(void);
/* Since the process began: milliseconds spent capturing and instantiating (set-up a pass's time leaves out,
 * like the allocators'), graphs captured, graphs replayed. */
double cuda_graph_setup_ms(void);
unsigned long long cuda_graph_captures(void);
unsigned long long cuda_graph_replays(void);

#ifdef __cplusplus
}
#endif

#endif
