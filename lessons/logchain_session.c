/* logchain_session.c - measured runs of lesson 2's implementations, host and device. */
#include "logchain_session.h"

#include "../kernels/timer.h"
#include "../kernels/track.h"
#include "../naive/logchain_tree.h"
#include "../optimized/logchain_forward.h"
#include "tensor_copy.h"
#ifdef HAVE_CUDA
#include "../kernels/cuda_track.h"
#endif

#include <stdio.h>
#include <string.h>

const char *lc_impl_name(lc_impl impl)
{
    static const char *names[] = {"naive", "cpu", "cuda"};
    return names[impl];
}

lc_memory lc_predict(lc_impl impl, const lc_dims *d)
{
    switch (impl) {
    case LC_NAIVE: return naive_lc_memory(d);
    case LC_CPU: return cpu_lc_memory(d);
    case LC_CUDA: return cuda_lc_memory(d);
    }
    return cpu_lc_memory(d);
}

static void run_host(lc_impl impl, const lc_dims *d, const lc_inputs *in, lc_outputs *res, impl_row *row)
{
    size_t nx = lc_x_count(d), nb = lc_bulk_count(d), np = lc_p0_count(d), no = lc_out_count(d);
    track_scope scope;
    track_scope_begin(&scope);

    float *x = host_copy(in->x, nx, DT_F32, "x (n,t,v,c) input");
    float *bulk = host_copy(in->bulk, nb, DT_F32, "bulk (1,t,v-1,c,c) input");
    float *p0 = host_copy(in->p0, np, DT_F32, "p0 (1,t,c) input");
    naive_lc_saved saved;
    float *alpha = NULL, *out, *dx, *dbulk, *dp0;

    double t0 = host_time_ms();
    if (impl == LC_NAIVE) out = naive_lc_forward(d, x, bulk, p0, LC_ODD_CARRY, &saved);
    else out = cpu_lc_forward(d, x, bulk, p0, &alpha);
    double t1 = host_time_ms();
    row->forward_live_bytes = track_scope_read(&scope, MEM_HOST).live_bytes;

    float *dout = host_copy(in->dout, no, DT_F32, "dout (n,t) upstream gradient");
    double t2 = host_time_ms();
    if (impl == LC_NAIVE) naive_lc_backward(d, x, bulk, p0, out, &saved, dout, &dx, &dbulk, &dp0);
    else cpu_lc_backward(d, x, bulk, p0, alpha, out, dout, &dx, &dbulk, &dp0);
    double t3 = host_time_ms();

    mem_counters c = track_scope_read(&scope, MEM_HOST);
    row->peak_bytes = c.peak_bytes;
    row->allocs = c.allocs;
    row->forward_ms = t1 - t0;
    row->backward_ms = t3 - t2;
    snprintf(row->device, sizeof row->device, "cpu");

    memcpy(res->out, out, no * sizeof(float));
    memcpy(res->dx, dx, nx * sizeof(float));
    memcpy(res->dbulk, dbulk, nb * sizeof(float));
    memcpy(res->dp0, dp0, np * sizeof(float));
    host_free(x);
    host_free(bulk);
    host_free(p0);
    host_free(out);
    host_free(dout);
    host_free(dx);
    host_free(dbulk);
    host_free(dp0);
}

#ifdef HAVE_CUDA
static void run_cuda_once(const lc_dims *d, const lc_inputs *in, lc_outputs *res, impl_row *row)
{
    size_t nx = lc_x_count(d), nb = lc_bulk_count(d), np = lc_p0_count(d), no = lc_out_count(d);
    track_scope scope;
    track_scope_begin(&scope);

    float *x = dev_copy(in->x, nx, DT_F32, "x (n,t,v,c) input");
    float *bulk = dev_copy(in->bulk, nb, DT_F32, "bulk (1,t,v-1,c,c) input");
    float *p0 = dev_copy(in->p0, np, DT_F32, "p0 (1,t,c) input");
    float *alpha, *dx, *dbulk, *dp0;

    gpu_timer_begin();
    float *out = cuda_lc_forward(d, x, bulk, p0, &alpha);
    row->forward_ms = gpu_timer_end_ms();
    row->forward_live_bytes = track_scope_read(&scope, MEM_DEVICE).live_bytes;

    float *dout = dev_copy(in->dout, no, DT_F32, "dout (n,t) upstream gradient");
    gpu_timer_begin();
    cuda_lc_backward(d, x, bulk, p0, alpha, out, dout, &dx, &dbulk, &dp0);
    row->backward_ms = gpu_timer_end_ms();

    mem_counters c = track_scope_read(&scope, MEM_DEVICE);
    row->peak_bytes = c.peak_bytes;
    row->allocs = c.allocs;
    snprintf(row->device, sizeof row->device, "%s", cuda_device_name());

    dev_download(res->out, out, no * sizeof(float));
    dev_download(res->dx, dx, nx * sizeof(float));
    dev_download(res->dbulk, dbulk, nb * sizeof(float));
    dev_download(res->dp0, dp0, np * sizeof(float));
    dev_free(x);
    dev_free(bulk);
    dev_free(p0);
    dev_free(out);
    dev_free(dout);
    dev_free(dx);
    dev_free(dbulk);
    dev_free(dp0);
}
#endif

void lc_run(lc_impl impl, const lc_dims *d, const lc_inputs *in, lc_outputs *res, impl_row *row, int print_labels)
{
    lc_memory m = lc_predict(impl, d);
    row->impl = lc_impl_name(impl);
    row->predicted_peak = m.peak;
    row->predicted_forward_live = m.forward_live;
    if (impl == LC_CUDA) {
#ifdef HAVE_CUDA
        /* The first run pays for module loading; time the second. */
        run_cuda_once(d, in, res, row);
        run_cuda_once(d, in, res, row);
#endif
    } else {
        run_host(impl, d, in, res, row);
    }
    row->ran = 1;
    if (print_labels) {
        printf("  %s: memory by tensor (%s)\n", row->impl, impl == LC_CUDA ? "device" : "host");
        track_print_labels(stdout, impl == LC_CUDA ? MEM_DEVICE : MEM_HOST);
    }
}
