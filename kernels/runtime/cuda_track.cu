/* cuda_track.cu - tracked device memory, cuBLAS handle and workspace, event timers. */
#include "cuda_check.h"
#include "cuda_track.h"
#include "timer.h"
#include "track.h"

#include <stdint.h>
/* A build with its own memory checker (its cuda_runtime.h) defines this to name the buffer in its messages and
 * not take the poison fill as a write. */
#ifndef DEVICE_ALLOC_NOTE
#define DEVICE_ALLOC_NOTE(p, bytes, label) ((void)0)
#endif

/* The one skip is "this machine has no GPU": cudaErrorNoDevice, or cudaErrorInsufficientDriver with driver
 * version 0, which means no NVIDIA driver is installed at all (what the CUDA runtime answers on a machine
 * without a GPU). Any other discovery error -- an installed driver too old for this runtime, a broken install --
 * fails loudly with both versions. CUDA_REQUIRE_DEVICE=1 (for GPU CI runners) turns the skip into a failure. */
extern "C" int cuda_device_count(const char **why)
{
    int n = 0, drv = 0, rt = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    (void)cudaDriverGetVersion(&drv);
    (void)cudaRuntimeGetVersion(&rt);
    int no_gpu = e == cudaErrorNoDevice || (e == cudaErrorInsufficientDriver && drv == 0) || (!e && n == 0);
    const char *require = getenv("CUDA_REQUIRE_DEVICE");
    if (e != cudaSuccess && (!no_gpu || (require && atoi(require)))) {
        fprintf(stderr, "error: CUDA device discovery failed: %s (%s); driver supports CUDA %d.%d (0.0: no driver "
                "installed), runtime is CUDA %d.%d%s\n", cudaGetErrorName(e), cudaGetErrorString(e), drv / 1000,
                drv % 1000 / 10, rt / 1000, rt % 1000 / 10, no_gpu ? "; CUDA_REQUIRE_DEVICE is set" : "");
        exit(4);
    }
    if (no_gpu) {
        if (why) *why = e == cudaErrorInsufficientDriver ? "no NVIDIA driver installed" : e ? cudaGetErrorString(e)
                                                                                            : "no CUDA device found";
        (void)cudaGetLastError(); /* clear the discovery error so later checks start clean */
        return 0;
    }
    return n;
}

extern "C" const char *cuda_device_name(void)
{
    static char name[256];
    if (cuda_device_count(NULL) == 0) return "none";
    if (!name[0]) {
        cudaDeviceProp p;
        CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
        snprintf(name, sizeof name, "%s", p.name);
    }
    return name;
}

extern "C" void *dev_alloc_at(size_t bytes, const char *label, const char *file, int line)
{
    void *p = NULL;
    /* Finish queued work first, so the clock below counts the allocator and the poison fill, not kernels. */
    CUDA_CHECK(cudaDeviceSynchronize());
    double t0 = host_time_ms();
    /* cudaMalloc(0) may return NULL; ask for one byte so the pointer is unique and trackable. */
    cudaError_t e = cudaMalloc(&p, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        fprintf(stderr, "error: cudaMalloc of %zu bytes for '%s' failed: %s (%s)\n", bytes,
                label ? label : "(unlabelled)", cudaGetErrorName(e), cudaGetErrorString(e));
        exit(3);
    }
    if (track_poison()) CUDA_CHECK(cudaMemset(p, 0xFF, bytes));
    DEVICE_ALLOC_NOTE(p, bytes, label);
    CUDA_CHECK(cudaDeviceSynchronize());
    track_add_alloc_ms(host_time_ms() - t0);
    track_set_site(file, line);
    track_register(MEM_DEVICE, p, bytes, label);
    return p;
}

extern "C" void *dev_alloc_array_at(size_t count, dtype t, const char *label, const char *file, int line)
{
    size_t es = dtype_size(t);
    if (es && count > SIZE_MAX / es) {
        fprintf(stderr, "error: %zu elements of %s for '%s' overflow size_t\n", count, dtype_name(t), label);
        exit(3);
    }
    return dev_alloc_at(count * es, label, file, line);
}

extern "C" void dev_free(void *p)
{
    if (!p) return;
    track_unregister(MEM_DEVICE, p);
    CUDA_CHECK(cudaDeviceSynchronize());
    double t0 = host_time_ms();
    CUDA_CHECK(cudaFree(p));
    track_add_alloc_ms(host_time_ms() - t0);
}

extern "C" void dev_upload(void *dst_dev, const void *src_host, size_t bytes)
{
    CUDA_CHECK(cudaMemcpy(dst_dev, src_host, bytes, cudaMemcpyHostToDevice));
}

extern "C" void dev_download(void *dst_host, const void *src_dev, size_t bytes)
{
    CUDA_CHECK(cudaMemcpy(dst_host, src_dev, bytes, cudaMemcpyDeviceToHost));
}

extern "C" void dev_synchronize(void) { CUDA_CHECK(cudaDeviceSynchronize()); }

static cublasHandle_t handle;
static void *workspace;
static size_t handle_untracked; /* device bytes cublasCreate took for itself */

extern "C" void *cublas_handle(void)
{
    if (!handle) {
        /* cublasCreate allocates its own default workspace, which dev_alloc never sees: measure it as the drop
         * in free device memory across the call (exact when nothing else allocates meanwhile, as here) */
        size_t free_before = 0, free_after = 0, total = 0;
        CUDA_CHECK(cudaMemGetInfo(&free_before, &total));
        CUBLAS_CHECK(cublasCreate(&handle));
        CUDA_CHECK(cudaMemGetInfo(&free_after, &total));
        handle_untracked = free_before > free_after ? free_before - free_after : 0;
    }
    return (void *)handle;
}

extern "C" size_t cublas_untracked_bytes(void) { return handle_untracked; }

extern "C" void cublas_workspace_attach(void)
{
    cublasHandle_t h = (cublasHandle_t)cublas_handle();
    workspace = dev_alloc(CUBLAS_WORKSPACE_BYTES, "cuBLAS workspace");
    CUBLAS_CHECK(cublasSetWorkspace(h, workspace, CUBLAS_WORKSPACE_BYTES));
}

extern "C" void cublas_workspace_detach(void)
{
    /* cuBLAS may still have work queued that uses the workspace: finish it before freeing. */
    dev_synchronize();
    CUBLAS_CHECK(cublasSetWorkspace((cublasHandle_t)cublas_handle(), NULL, 0));
    dev_free(workspace);
    workspace = NULL;
}

static cudaEvent_t ev_start, ev_stop;

extern "C" void gpu_timer_begin(void)
{
    if (!ev_start) {
        CUDA_CHECK(cudaEventCreate(&ev_start));
        CUDA_CHECK(cudaEventCreate(&ev_stop));
    }
    CUDA_CHECK(cudaEventRecord(ev_start, 0));
}

extern "C" double gpu_timer_end_ms(void)
{
    float ms = 0.0f;
    CUDA_CHECK(cudaEventRecord(ev_stop, 0));
    CUDA_CHECK(cudaEventSynchronize(ev_stop));
    CUDA_CHECK(cudaEventElapsedTime(&ms, ev_start, ev_stop));
    return ms;
}

/* ---- launches per pass and CUDA Graph capture ------------------------------------------------------------- */

static unsigned long long launches;
static cudaStream_t capture_stream; /* created once, non-blocking; like the cuBLAS handle, kept for the process */
static int capturing, capture_cublas;

struct cuda_graph {
    cudaGraph_t graph;    /* what capture recorded */
    cudaGraphExec_t exec; /* its instantiation: what cudaGraphLaunch runs */
};

extern "C" unsigned long long cuda_launch_count(void) { return launches; }
extern "C" void cuda_count_launch(void) { launches += !capturing; }

/* LAUNCH's stream (launch.h): the capture stream while capturing, else the legacy default stream. */
extern "C" cudaStream_t cuda_launch_stream(void)
{
    cuda_count_launch();
    return capturing ? capture_stream : (cudaStream_t)0;
}

/* Points the cuBLAS handle at stream s; cublasSetStream drops a user workspace, so the tracked one is set again. */
static void cublas_on_stream(cudaStream_t s)
{
    cublasHandle_t h = (cublasHandle_t)cublas_handle();
    CUBLAS_CHECK(cublasSetStream(h, s));
    if (workspace) CUBLAS_CHECK(cublasSetWorkspace(h, workspace, CUBLAS_WORKSPACE_BYTES));
}

extern "C" void cuda_capture_begin(int uses_cublas)
{
    if (capturing) {
        fprintf(stderr, "error: cuda_capture_begin: a capture is already in progress\n");
        exit(4);
    }
    if (!capture_stream) CUDA_CHECK(cudaStreamCreateWithFlags(&capture_stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaDeviceSynchronize()); /* the buffers' poison fills and uploads are done before the graph runs */
    if (uses_cublas) cublas_on_stream(capture_stream);
    capture_cublas = uses_cublas;
    CUDA_CHECK(cudaStreamBeginCapture(capture_stream, cudaStreamCaptureModeGlobal));
    capturing = 1;
}

extern "C" cuda_graph *cuda_capture_end(void)
{
    cuda_graph *g = (cuda_graph *)host_alloc(sizeof *g, "CUDA graph handles (graph, executable)");
    capturing = 0;
    CUDA_CHECK(cudaStreamEndCapture(capture_stream, &g->graph));
    if (capture_cublas) cublas_on_stream((cudaStream_t)0);
    CUDA_CHECK(cudaGraphInstantiate(&g->exec, g->graph, 0));
    return g;
}

extern "C" void cuda_graph_launch(cuda_graph *g)
{
    cuda_count_launch();
    CUDA_CHECK(cudaGraphLaunch(g->exec, capture_stream));
    /* the stream is non-blocking: work issued later on the default stream would not wait for the graph */
    CUDA_CHECK(cudaStreamSynchronize(capture_stream));
}

extern "C" void cuda_graph_free(cuda_graph *g)
{
    if (!g) return;
    CUDA_CHECK(cudaGraphExecDestroy(g->exec));
    CUDA_CHECK(cudaGraphDestroy(g->graph));
    host_free(g);
}

extern "C" void cuda_capture_end_launch_once(void)
{
    cuda_graph *g = cuda_capture_end();
    cuda_graph_launch(g);
    cuda_graph_free(g);
}
