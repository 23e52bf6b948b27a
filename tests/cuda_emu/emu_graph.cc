/* emu_graph.cc - TEST-ONLY: CUDA Graphs by stream capture, as much of them as this project uses.
 *
 *   cudaStreamBeginCapture(s, mode)  s must be a created stream (the legacy default stream cannot be captured);
 *                                    from here kernel launches (emu_launch.h) and cuBLAS calls (cublas_shim.cc)
 *                                    are recorded as closures with copied arguments instead of running
 *   cudaStreamEndCapture(s, &g)      the recorded nodes, in issue order, become the graph
 *   cudaGraphInstantiate(&e, g, 0)   copies the node list
 *   cudaGraphLaunch(e, s)            runs the nodes in order through the usual paths, so every check of a launch
 *                                    (configuration, pointers, two orders, red zones) and of a cuBLAS call holds;
 *                                    it stops at the first error, which stays pending as on a GPU
 * During a capture, what a GPU refuses in cudaStreamCaptureModeGlobal is refused here too and invalidates the
 * capture (EndCapture then fails): cudaMalloc, cudaFree, synchronous copies and memsets, cudaDeviceSynchronize,
 * a cuBLAS call on another stream, and a cuBLAS call with no user workspace (cublasSetStream resets it; cuBLAS
 * would then take workspace from its own pool, memory the tracker never sees). Async copies and memsets are not
 * captured by the emulator at all (they are refused), and the graph is a chain: no fork/join of streams. */
#include "emu_internal.h"
#include "include/emu_launch.h"

#include <stdio.h>
#include <utility>
#include <vector>

namespace {
struct node {
    const char *what; /* the kernel's or cuBLAS function's name, for messages */
    std::function<void()> run;
};
cudaStream_t capture_stream; /* non-NULL while capturing */
bool invalidated;
std::vector<node> recorded;
} // namespace

struct CUgraph_st {
    std::vector<node> nodes;
};
struct CUgraphExec_st {
    std::vector<node> nodes;
};

namespace emu {

int capturing(void) { return capture_stream != NULL; }

void capture_record(const char *what, std::function<void()> run)
{
    if (!invalidated) recorded.push_back(node{what, std::move(run)});
}

int capture_refuses(const char *call)
{
    if (!capturing()) return 0;
    invalidated = true;
    fail(cudaErrorStreamCaptureUnsupported, "%s during stream capture: not allowed in cudaStreamCaptureModeGlobal "
         "(allocate, copy and synchronise before cudaStreamBeginCapture); the capture is invalidated", call);
    return 1;
}

int capture_refuses_stream(const char *call, cudaStream_t s)
{
    if (!capturing() || s == capture_stream) return 0;
    invalidated = true;
    fail(cudaErrorStreamCaptureImplicit, "%s on stream %p while stream %p is being captured: the call would use "
         "another stream during a global-mode capture; the capture is invalidated", call, (void *)s,
         (void *)capture_stream);
    return 1;
}

} /* namespace emu */

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int) { return cudaStreamCreate(s); }

cudaError_t cudaStreamBeginCapture(cudaStream_t s, enum cudaStreamCaptureMode)
{
    if (!s) return emu::fail(cudaErrorStreamCaptureUnsupported, "cudaStreamBeginCapture: the legacy default stream "
                             "cannot be captured; create a stream");
    if (emu::capturing()) return emu::fail(cudaErrorIllegalState, "cudaStreamBeginCapture: a capture is in progress");
    capture_stream = s, invalidated = false;
    recorded.clear();
    return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *g)
{
    if (!emu::capturing() || s != capture_stream)
        return emu::fail(cudaErrorIllegalState, "cudaStreamEndCapture: stream %p is not being captured", (void *)s);
    capture_stream = NULL;
    *g = NULL;
    if (invalidated) return cudaErrorStreamCaptureInvalidated; /* the refused call already said why */
    *g = new CUgraph_st{std::move(recorded)};
    recorded.clear();
    return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *e, cudaGraph_t g, unsigned long long)
{
    if (!e || !g) return cudaErrorInvalidValue;
    *e = new CUgraphExec_st{g->nodes};
    return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t e, cudaStream_t)
{
    if (!e) return cudaErrorInvalidValue;
    if (emu::capture_refuses("cudaGraphLaunch")) return cudaErrorStreamCaptureUnsupported;
    for (const node &n : e->nodes) {
        n.run();
        if (emu::launch_error_pending()) break; /* a GPU stops the graph at a faulting node; the error is sticky */
    }
    return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t e) { delete e; return cudaSuccess; }
cudaError_t cudaGraphDestroy(cudaGraph_t g) { delete g; return cudaSuccess; }
