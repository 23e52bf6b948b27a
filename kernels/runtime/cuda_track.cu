/* cuda_track.cu - tracked device memory, cuBLAS handle and workspace, event timers. */
#include "cuda_check.h"
#include "cuda_track.h"
#include "timer.h"
#include "track.h"

#include <errno.h> /* program_invocation_short_name (g++ defines _GNU_SOURCE), for the messages */
#include <stdint.h>
#include <string.h>
/* A build with its own memory checker (its cuda_runtime.h) defines this to name the buffer in its messages
 * and not take the poison fill as a write. */
#ifndef DEVICE_ALLOC_NOTE
#define DEVICE_ALLOC_NOTE(p, bytes, label) ((void)0)
#endif

/* The one skip is "this machine has no GPU": cudaErrorNoDevice, or cudaErrorInsufficientDriver with driver
 * version 0, which means no NVIDIA driver is installed at all (what the CUDA runtime answers on a machine
 * without a GPU). Any other discovery error -- an installed driver too old for this runtime, a broken install
 * -- fails loudly with both versions. CUDA_REQUIRE_DEVICE=1 (for GPU CI runners) turns the skip into a
 * failure. */
extern "C" int cuda_device_count(const char **why)
{
    int n = 0, drv = 0, rt = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    (void)cudaDriverGetVersion(&drv);
    (void)cudaRuntimeGetVersion(&rt);
    int no_gpu = e == cudaErrorNoDevice || (e == cudaErrorInsufficientDriver && drv == 0) || (!e && n == 0);
    const char *require = getenv("CUDA_REQUIRE_DEVICE");
    if (e != cudaSuccess && (!no_gpu || (require && atoi(require)))) {
        fprintf(stderr,
                "error: CUDA device discovery failed: %s (%s); driver supports CUDA %d.%d (0.0: no driver "
                "installed), runtime is CUDA %d.%d%s\n",
                cudaGetErrorName(e), cudaGetErrorString(e), drv / 1000, drv % 1000 / 10, rt / 1000,
                rt % 1000 / 10, no_gpu ? "; CUDA_REQUIRE_DEVICE is set" : "");
        exit(4);
    }
    if (no_gpu) {
        if (why)
            *why = e == cudaErrorInsufficientDriver ? "no NVIDIA driver installed"
                   : e                              ? cudaGetErrorString(e)
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

/* TRACK_POISON=0 leaves device allocations unfilled: compute-sanitizer's initcheck takes the 0xFF fill for a
 * write, so with it on, a kernel reading memory nothing wrote goes unseen (tests/gpu/gpu_report.sh sets it
 * for initcheck). */
static int dev_poison(void)
{
    const char *env = getenv("TRACK_POISON");
    return track_poison() && !(env && !atoi(env));
}

/* cuda_echo_* (cuda_track.h): the warm-up's allocations in order; parked: freed by dev_free, not by
 * cudaFree */
static struct {
    void *p;
    size_t bytes;
    int parked;
} echo[CUDA_ECHO_MAX];
static int echo_mode, echo_n, echo_next; /* mode 0 off, 1 recording, 2 replaying */

extern "C" void cuda_echo_record(size_t peak)
{
    cuda_echo_end();
    size_t free_bytes = 0, total = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
    /* the parked warm-up and the timed run side by side: twice the peak */
    echo_mode = peak <= free_bytes / 2;
}

extern "C" void cuda_echo_replay(void)
{
    if (echo_mode != 1) return; /* nothing recorded: the timed run allocates afresh and captures again */
    echo_mode = 2;
    echo_next = 0;
}

extern "C" void cuda_echo_end(void)
{
    for (int i = 0; i < echo_n; i++)
        if (echo[i].parked) CUDA_CHECK(cudaFree(echo[i].p));
    echo_mode = echo_n = echo_next = 0;
}

/* The recorded buffer for this replayed dev_alloc, or NULL (sizes differ: the rerun took another path) */
static void *echo_take(size_t bytes)
{
    if (echo_mode != 2 || echo_next >= echo_n) return NULL;
    int k = echo_next++;
    if (!echo[k].parked || echo[k].bytes != bytes) return NULL;
    echo[k].parked = 0;
    return echo[k].p;
}

static int echo_park(void *p)
{
    if (echo_mode != 1) return 0;
    for (int i = 0; i < echo_n; i++)
        if (echo[i].p == p && !echo[i].parked) return echo[i].parked = 1;
    return 0;
}

extern "C" void *dev_alloc_at(size_t bytes, const char *label, const char *file, int line)
{
    void *p = NULL;
    /* Finish queued work first, so the clock below counts the allocator and the poison fill, not kernels. */
    CUDA_CHECK(cudaDeviceSynchronize());
    double t0 = host_time_ms();
    /* cudaMalloc(0) may return NULL; ask for one byte so the pointer is unique and trackable. */
    cudaError_t e = (p = echo_take(bytes ? bytes : 1)) ? cudaSuccess : cudaMalloc(&p, bytes ? bytes : 1);
    if (e == cudaSuccess && echo_mode == 1 && echo_n < CUDA_ECHO_MAX)
        echo[echo_n++] = {p, bytes ? bytes : 1, 0};
    if (e != cudaSuccess) {
        fprintf(stderr, "%s: cudaMalloc of %zu bytes for '%s' failed: %s (%s)\n",
                program_invocation_short_name, bytes, label ? label : "(unlabelled)", cudaGetErrorName(e),
                cudaGetErrorString(e));
        exit(3);
    }
    if (dev_poison()) CUDA_CHECK(cudaMemset(p, 0xFF, bytes));
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

extern "C" void dev_relabel(void *p, const char *label) { track_relabel(MEM_DEVICE, p, label); }

extern "C" void dev_free(void *p)
{
    if (!p) return;
    track_unregister(MEM_DEVICE, p);
    CUDA_CHECK(cudaDeviceSynchronize());
    double t0 = host_time_ms();
    if (!echo_park(p)) CUDA_CHECK(cudaFree(p));
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
        /* cublasCreate allocates its own default workspace, which dev_alloc never sees: measure it as the
         * drop in free device memory across the call (exact when nothing else allocates meanwhile, as
         * here) */
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

/* ---- launches per pass and CUDA Graph capture ---------------------------------------------------------- */

static unsigned long long launches;
/* created once, non-blocking; like the cuBLAS handle, kept for the process */
static cudaStream_t capture_stream;
static int capturing, capture_cublas;

extern "C" unsigned long long cuda_launch_count(void) { return launches; }
extern "C" void cuda_count_launch(void) { launches += !capturing; }

/* LAUNCH's stream (launch.h): the capture stream while capturing, else the legacy default stream. */
extern "C" cudaStream_t cuda_launch_stream(void)
{
    cuda_count_launch();
    return capturing ? capture_stream : (cudaStream_t)0;
}

/* Points the cuBLAS handle at stream s; cublasSetStream drops a user workspace, so the tracked one is set
 * again. */
static void cublas_on_stream(cudaStream_t s)
{
    cublasHandle_t h = (cublasHandle_t)cublas_handle();
    CUBLAS_CHECK(cublasSetStream(h, s));
    if (workspace) CUBLAS_CHECK(cublasSetWorkspace(h, workspace, CUBLAS_WORKSPACE_BYTES));
}

static double graph_setup_ms;                    /* capture + instantiate, summed over the process */
static unsigned long long graph_captures, graph_replays;
static double capture_t0;

/* One launch of an instantiated graph on the capture stream; returns when it has finished (the stream is
 * non-blocking: work issued later on the default stream would not wait for the graph). */
static void graph_launch(cuda_graph_cache *c)
{
    cuda_count_launch();
    CUDA_CHECK(cudaGraphLaunch((cudaGraphExec_t)c->exec, capture_stream));
    CUDA_CHECK(cudaStreamSynchronize(capture_stream));
}

extern "C" void cuda_capture_begin(int uses_cublas)
{
    if (capturing) {
        fprintf(stderr, "error: cuda_capture_begin: a capture is already in progress\n");
        exit(4);
    }
    if (!capture_stream) CUDA_CHECK(cudaStreamCreateWithFlags(&capture_stream, cudaStreamNonBlocking));
    /* the buffers' poison fills and uploads are done before the graph runs */
    CUDA_CHECK(cudaDeviceSynchronize());
    /* from here to the instantiation: the set-up a replay does not repeat */
    capture_t0 = host_time_ms();
    if (uses_cublas) cublas_on_stream(capture_stream);
    capture_cublas = uses_cublas;
    CUDA_CHECK(cudaStreamBeginCapture(capture_stream, cudaStreamCaptureModeGlobal));
    capturing = 1;
}

/* The key a graph is replayed under: the caller's words (shape, every buffer the steps touch) and the cuBLAS
 * workspace, whose address the captured GEMMs hold too. */
static int graph_key(uintptr_t *out, const uintptr_t *key, int nkey)
{
    if (nkey < 0 || nkey + 1 > CUDA_GRAPH_KEY_WORDS) {
        fprintf(stderr, "error: a CUDA graph key of %d words (at most %d)\n", nkey, CUDA_GRAPH_KEY_WORDS - 1);
        exit(4);
    }
    for (int i = 0; i < nkey; i++) out[i] = key[i];
    out[nkey] = (uintptr_t)workspace;
    return nkey + 1;
}

extern "C" int cuda_graph_replay(cuda_graph_cache *c, const uintptr_t *key, int nkey)
{
    uintptr_t k[CUDA_GRAPH_KEY_WORDS];
    int n = graph_key(k, key, nkey);
    if (!c->exec || c->nkey != n || memcmp(c->key, k, (size_t)n * sizeof *k) != 0) return 0;
    graph_launch(c);
    graph_replays++;
    return 1;
}

extern "C" void cuda_graph_keep(cuda_graph_cache *c, const uintptr_t *key, int nkey)
{
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    capturing = 0;
    CUDA_CHECK(cudaStreamEndCapture(capture_stream, &graph));
    if (capture_cublas) cublas_on_stream((cudaStream_t)0);
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    graph_setup_ms += host_time_ms() - capture_t0;
    graph_captures++;
    if (c->exec) CUDA_CHECK(cudaGraphExecDestroy((cudaGraphExec_t)c->exec)); /* captured over other buffers */
    if (c->graph) CUDA_CHECK(cudaGraphDestroy((cudaGraph_t)c->graph));
    c->graph = graph;
    c->exec = exec;
    c->nkey = graph_key(c->key, key, nkey);
    graph_launch(c);
}

extern "C" double cuda_graph_setup_ms(void) { return graph_setup_ms; }
extern "C" unsigned long long cuda_graph_captures(void) { return graph_captures; }
extern "C" unsigned long long cuda_graph_replays(void) { return graph_replays; }
