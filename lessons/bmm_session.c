/* bmm_session.c - measured runs of lesson 1's implementations, host and device. */
#include "bmm_session.h"

#include "../kernels/timer.h"
#include "../kernels/track.h"
#include "../naive/bmm_broadcast.h"
#include "../optimized/bmm_grouped.h"
#include "tensor_copy.h"
#ifdef HAVE_CUDA
#include "../kernels/cuda_track.h"
#endif

#include <stdio.h>
#include <string.h>

const char *bmm_impl_name(bmm_impl impl)
{
    static const char *names[] = {"naive", "cpu", "cuda"};
    return names[impl];
}

bmm_memory bmm_predict(bmm_impl impl, const bmm_dims *d)
{
    switch (impl) {
    case BMM_NAIVE: return naive_bmm_memory(d);
    case BMM_CPU: return cpu_bmm_memory(d);
    case BMM_CUDA: return cuda_bmm_memory(d);
    }
    return cpu_bmm_memory(d);
}

static void run_host(bmm_impl impl, const bmm_dims *d, const bmm_inputs *in, bmm_outputs *res, impl_row *row)
{
    size_t nx = bmm_x_count(d), nw = bmm_w_count(d), nout = bmm_out_count(d);
    track_scope scope;
    track_scope_begin(&scope);

    float *x = host_copy(in->x, nx, DT_F32, "x (B,G*K) input");
    float *W = host_copy(in->W, nw, DT_F32, "W (G,K,N) input");
    naive_bmm_saved saved = {NULL};
    float *out, *dx, *dW;

    double t0 = host_time_ms();
    out = impl == BMM_NAIVE ? naive_bmm_forward(d, x, W, &saved) : cpu_bmm_forward(d, x, W);
    double t1 = host_time_ms();
    row->forward_live_bytes = track_scope_read(&scope, MEM_HOST).live_bytes;

    float *dout = host_copy(in->dout, nout, DT_F32, "dout (B,G,N) upstream gradient");
    double t2 = host_time_ms();
    if (impl == BMM_NAIVE) naive_bmm_backward(d, x, &saved, dout, &dx, &dW);
    else cpu_bmm_backward(d, x, W, dout, &dx, &dW);
    double t3 = host_time_ms();

    mem_counters c = track_scope_read(&scope, MEM_HOST);
    row->peak_bytes = c.peak_bytes;
    row->allocs = c.allocs;
    row->forward_ms = t1 - t0;
    row->backward_ms = t3 - t2;
    snprintf(row->device, sizeof row->device, "cpu");

    memcpy(res->out, out, nout * sizeof(float));
    memcpy(res->dx, dx, nx * sizeof(float));
    memcpy(res->dW, dW, nw * sizeof(float));
    host_free(x);
    host_free(W);
    host_free(out);
    host_free(dout);
    host_free(dx);
    host_free(dW);
}

#ifdef HAVE_CUDA
static void run_cuda_once(const bmm_dims *d, const bmm_inputs *in, bmm_outputs *res, impl_row *row)
{
    size_t nx = bmm_x_count(d), nw = bmm_w_count(d), nout = bmm_out_count(d);
    track_scope scope;
    track_scope_begin(&scope);

    float *x = dev_copy(in->x, nx, DT_F32, "x (B,G*K) input");
    float *W = dev_copy(in->W, nw, DT_F32, "W (G,K,N) input");
    cublas_workspace_attach();
    float *dx, *dW;

    gpu_timer_begin();
    float *out = cuda_bmm_forward(d, x, W);
    row->forward_ms = gpu_timer_end_ms();
    row->forward_live_bytes = track_scope_read(&scope, MEM_DEVICE).live_bytes;

    float *dout = dev_copy(in->dout, nout, DT_F32, "dout (B,G,N) upstream gradient");
    gpu_timer_begin();
    cuda_bmm_backward(d, x, W, dout, &dx, &dW);
    row->backward_ms = gpu_timer_end_ms();

    mem_counters c = track_scope_read(&scope, MEM_DEVICE);
    row->peak_bytes = c.peak_bytes;
    row->allocs = c.allocs;
    snprintf(row->device, sizeof row->device, "%s", cuda_device_name());

    dev_download(res->out, out, nout * sizeof(float));
    dev_download(res->dx, dx, nx * sizeof(float));
    dev_download(res->dW, dW, nw * sizeof(float));
    cublas_workspace_detach();
    dev_free(x);
    dev_free(W);
    dev_free(out);
    dev_free(dout);
    dev_free(dx);
    dev_free(dW);
}
#endif

void bmm_run(bmm_impl impl, const bmm_dims *d, const bmm_inputs *in, bmm_outputs *res, impl_row *row,
             int print_labels)
{
    bmm_memory m = bmm_predict(impl, d);
    row->impl = bmm_impl_name(impl);
    row->predicted_peak = m.peak;
    row->predicted_forward_live = m.forward_live;
    if (impl == BMM_CUDA) {
#ifdef HAVE_CUDA
        /* The first run pays for cuBLAS's kernel selection and module loading; time the second. */
        run_cuda_once(d, in, res, row);
        run_cuda_once(d, in, res, row);
#endif
    } else {
        run_host(impl, d, in, res, row);
    }
    row->ran = 1;
    if (print_labels) {
        printf("  %s: memory by tensor (%s)\n", row->impl, impl == BMM_CUDA ? "device" : "host");
        track_print_labels(stdout, impl == BMM_CUDA ? MEM_DEVICE : MEM_HOST);
    }
}
