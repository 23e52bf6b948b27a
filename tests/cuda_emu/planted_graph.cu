/* planted_graph.cu - TEST-ONLY: stream capture and graph replay (emu_graph.cc), right and wrong (planted.h). */
#include "../../kernels/runtime/cuda_check.h"
#include "../../kernels/runtime/launch.h"
#include "planted.h"

#define PLANTED_WS 4096 /* a cuBLAS workspace for the 1x1 GEMM */

__global__ void graph_scale(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * in[i];
}

__global__ void graph_add_one(float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) out[i] += 1.0f; /* PLANTED (bug 2 only launches it): i == n writes past the end */
}

/* What goes into the capture: the scale kernel, then +1 (bug 2), a GEMM out[0] = in[0]^2 (bugs 3 and 5; h has
 * a workspace set before the capture), or a planted illegal call. */
static void captured_work(int bug, cudaStream_t s, cublasHandle_t h, void *ws, const float *d_in, float *d_out, int n)
{
    LAUNCH(graph_scale, (n + 255) / 256, 256, 0)(d_in, d_out, n);
    if (bug == 1) {
        void *p = NULL; /* PLANTED: an allocation inside the capture */
        (void)cudaMalloc(&p, 64);
    } else if (bug == 2) {
        LAUNCH(graph_add_one, (n + 255) / 256, 256, 0)(d_out, n);
    } else if (bug == 3 || bug == 5) {
        CUBLAS_CHECK(cublasSetStream(h, s)); /* resets the workspace to cuBLAS's pool ... */
        if (bug == 5) CUBLAS_CHECK(cublasSetWorkspace(h, ws, PLANTED_WS)); /* PLANTED (3): ... and none is set again */
        float one = 1.0f, zero = 0.0f;
        (void)cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &one, d_in, 1, d_in, 1, &zero, d_out, 1);
    }
}

extern "C" int planted_graph(int bug, const float *in, float *out, int n, float *before_launch)
{
    float *d_in, *d_out;
    size_t bytes = (size_t)n * sizeof(float);
    CUDA_CHECK(cudaMalloc((void **)&d_in, bytes));
    CUDA_CHECK(cudaMalloc((void **)&d_out, bytes));
    CUDA_CHECK(cudaMemcpy(d_in, in, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_out, 0, bytes));
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    void *ws;
    cublasHandle_t h;
    CUDA_CHECK(cudaMalloc(&ws, PLANTED_WS));
    CUBLAS_CHECK(cublasCreate(&h));
    CUBLAS_CHECK(cublasSetWorkspace(h, ws, PLANTED_WS));
    cudaGraph_t g = NULL;
    cudaGraphExec_t e = NULL;
    int err = (int)cudaStreamBeginCapture(bug == 4 ? (cudaStream_t)0 : s, cudaStreamCaptureModeGlobal);
    if (!err) {
        captured_work(bug, s, h, ws, d_in, d_out, n);
        err = (int)cudaStreamEndCapture(s, &g);
    }
    if (!err) { /* nothing ran yet: d_out still holds the memset's zeros */
        CUDA_CHECK(cudaMemcpy(before_launch, d_out, bytes, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaGraphInstantiate(&e, g, 0));
        CUDA_CHECK(cudaGraphLaunch(e, s));
        err = (int)cudaStreamSynchronize(s);
    }
    (void)cudaGetLastError();
    if (!err) CUDA_CHECK(cudaMemcpy(out, d_out, bytes, cudaMemcpyDeviceToHost));
    if (e) CUDA_CHECK(cudaGraphExecDestroy(e));
    if (g) CUDA_CHECK(cudaGraphDestroy(g));
    CUDA_CHECK(cudaStreamDestroy(s));
    CUBLAS_CHECK(cublasDestroy(h));
    CUDA_CHECK(cudaFree(ws));
    CUDA_CHECK(cudaFree(d_in));
    (void)cudaFree(d_out); /* after bug 2 it reports the damaged red zone too */
    (void)cudaGetLastError();
    return err;
}
