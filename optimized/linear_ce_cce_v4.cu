/* linear_ce_cce_v4.cu - lesson 5, cuda-v4 on the GPU: device memory around the kernels of kernels/linear_ce_v4.cu
 * (no cuBLAS, no logits buffer; linear_ce_cce_v4.h has the dataflow). */
#include "linear_ce_cce_v4.h"

#include "../kernels/runtime/cuda_check.h"
#include "../kernels/runtime/cuda_track.h"
#include "track.h"

static cce3_filter_stats last_filter; /* what the last backward's filter skipped; read by the lesson's epilogue */

extern "C" cce3_filter_stats cuda_cce4_last_filter(void) { return last_filter; }

extern "C" float *cuda_cce4_forward(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target,
                                    cce_lce_saved *saved)
{
    return cuda_cce4_forward_with(d, x, W, target, saved, lce4_launch_forward);
}

extern "C" float *cuda_cce4_forward_with(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target,
                                         cce_lce_saved *saved, lce4_forward_launcher launch)
{
    int N = (int)d->N, V = (int)d->V, H = (int)d->H;
    saved->x = x;
    saved->W = W;
    saved->target = target;
    saved->lse = (float *)dev_alloc_array(d->N, DT_F32, "lse [N] f32 (saved)");
    arena a;
    cuda_cce4_forward_workspace w;
    size_t bytes = ARENA_BYTES(a, cuda_cce4_carve_forward(&a, d, &w));
    arena_init(&a, dev_alloc(bytes, "workspace: tile partials [2,V/128,N] (max, sum exp) + z[target] + row losses + scale"),
               bytes);
    cuda_cce4_carve_forward(&a, d, &w);
    lce_launch_mean_scale(N, target, w.scale);
    launch(N, V, H, x, W, target, w.part, w.z_target, saved->lse, w.row_loss);
    float *loss = (float *)dev_alloc_array(1, DT_F32, "loss [1] f32");
    lce_launch_loss(N, w.row_loss, w.scale, loss);
    dev_free(a.base);
    return loss;
}

extern "C" void cuda_cce4_backward(const lce_dims *d, int filter, cce_lce_saved *saved, const float *dloss,
                                   bf16 **dx, float **dW)
{
    int N = (int)d->N, V = (int)d->V, H = (int)d->H, ldg = (int)lce4_chunk_cols(V);
    bf16 *gx = (bf16 *)dev_alloc_array(lce_x_count(d), DT_BF16, "dx [N,H] bf16");
    float *gw = (float *)dev_alloc_array(lce_w_count(d), DT_F32, "dW [V,H] f32");
    arena a;
    cuda_cce4_backward_workspace w;
    size_t bytes = ARENA_BYTES(a, cuda_cce4_carve_backward(&a, d, &w));
    arena_init(&a, dev_alloc(bytes, "workspace: G [N,8192] bf16 + tile flags + dx_acc [N,H] f32 + scale + count"),
               bytes);
    cuda_cce4_carve_backward(&a, d, &w);
    CUDA_CHECK(cudaMemset(w.skipped, 0, sizeof *w.skipped));
    lce_launch_mean_scale(N, saved->target, w.scale);
    for (long long c0 = 0; c0 < V; c0 += ldg) { /* the chunks in order: dx's fp32 sums meet in a fixed order */
        int vc = (int)(V - c0 < ldg ? V - c0 : ldg);
        lce4_launch_backward_chunk(N, V, H, (int)c0, vc, ldg, saved->x, saved->W, saved->target, saved->lse, w.scale,
                                   dloss, filter, w.G, w.skip, w.skipped, c0 == 0, c0 + ldg >= V, w.dx_acc, gx, gw);
    }
    unsigned skipped;
    CUDA_CHECK(cudaMemcpy(&skipped, w.skipped, sizeof skipped, cudaMemcpyDeviceToHost));
    last_filter.filter = filter;
    last_filter.tiles = (unsigned long long)lce4_tiles(N) * (unsigned long long)lce4_tiles(V);
    last_filter.skipped_dx = last_filter.skipped_dw = skipped;
    dev_free(a.base);
    dev_free(saved->lse);
    saved->lse = NULL;
    *dx = gx;
    *dW = gw;
}
