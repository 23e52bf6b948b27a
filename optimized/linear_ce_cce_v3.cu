/* linear_ce_cce_v3.cu - lesson 5, cuda-v3 on the GPU: device memory around the WMMA kernels of
 * kernels/linear_ce_v3.cu (no cuBLAS, no logits buffer; linear_ce_cce_v3.h has the dataflow). */
#include "linear_ce_cce_v3.h"

#include "../kernels/runtime/cuda_check.h"
#include "../kernels/runtime/cuda_track.h"
#include "../kernels/linear_ce_math.h"
#include "track.h"

static cce3_filter_stats last_filter; /* what the last backward's filter skipped; read by the lesson's epilogue */

extern "C" cce3_filter_stats cuda_cce3_last_filter(void) { return last_filter; }

extern "C" float *cuda_cce3_forward(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target,
                                    cce_lce_saved *saved)
{
    return cuda_cce_forward_with(d, x, W, target, saved, lce3_launch_forward);
}

static void read_filter_stats(const lce_dims *d, int filter, const unsigned *skipped /* (2,) device */)
{
    unsigned h[2];
    CUDA_CHECK(cudaMemcpy(h, skipped, sizeof h, cudaMemcpyDeviceToHost));
    last_filter.filter = filter;
    last_filter.tiles = (unsigned long long)((d->N + LCE3_TILE_N - 1) / LCE3_TILE_N) *
                        ((d->V + LCE3_TILE_V - 1) / LCE3_TILE_V);
    last_filter.skipped_dx = h[0];
    last_filter.skipped_dw = h[1];
}

extern "C" void cuda_cce3_backward(const lce_dims *d, int filter, cce_lce_saved *saved, const float *dloss,
                                   bf16 **dx, float **dW)
{
    int N = (int)d->N, V = (int)d->V, H = (int)d->H;
    bf16 *gx = (bf16 *)dev_alloc_array(lce_x_count(d), DT_BF16, "dx [N,H] bf16");
    float *gw = (float *)dev_alloc_array(lce_w_count(d), DT_F32, "dW [V,H] f32");
    size_t bytes = cuda_cce3_workspace_bytes(d);
    arena a;
    cuda_cce3_workspace w;
    arena_init(&a, dev_alloc(bytes, "workspace: dx_acc [N,H] f32 + scale + skipped tiles"), bytes);
    cuda_cce3_carve(&a, d, &w);
    CUDA_CHECK(cudaMemset(w.skipped, 0, 2 * sizeof *w.skipped));
    /* 1 / n_valid again rather than a second saved float: one pass over target (N,) */
    lce_launch_mean_scale(N, saved->target, w.scale);
    lce3_launch_dx(N, V, H, saved->x, saved->W, saved->target, saved->lse, w.scale, dloss, filter, w.dx_acc, gx,
                   &w.skipped[0]);
    lce3_launch_dw(N, V, H, saved->x, saved->W, saved->target, saved->lse, w.scale, dloss, filter, gw,
                   &w.skipped[1]);
    read_filter_stats(d, filter, w.skipped);
    dev_free(a.base);
    dev_free(saved->lse);
    saved->lse = NULL;
    *dx = gx;
    *dW = gw;
}
