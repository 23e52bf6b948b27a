/* linear_ce_cce.cu - lesson 5, cuda-v2 on the GPU: device memory around the kernels of kernels/linear_ce_v2.cu
 * (no cuBLAS, no logits buffer; linear_ce_cce.h has the dataflow). */
#include "linear_ce_cce.h"

#include "../kernels/linear_ce_math.h"
#include "../kernels/runtime/cuda_check.h"
#include "../kernels/runtime/cuda_track.h"
#include "track.h"

extern "C" float *cuda_cce_forward_with(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target,
                                        cce_lce_saved *saved, cce_forward_launch launch)
{
    int N = (int)d->N, V = (int)d->V, H = (int)d->H;
    saved->x = x;
    saved->W = W;
    saved->target = target;
    saved->lse = (float *)dev_alloc_array(d->N, DT_F32, "lse [N] f32 (saved)");
    size_t bytes = cuda_cce_workspace_bytes(d);
    arena a;
    cuda_cce_workspace w;
    arena_init(&a, dev_alloc(bytes, "workspace: row losses [N] f32 + scale"), bytes);
    cuda_cce_carve(&a, d, &w);
    lce_launch_mean_scale(N, target, w.scale);
    launch(N, V, H, x, W, target, saved->lse, w.row_loss);
    float *loss = (float *)dev_alloc_array(1, DT_F32, "loss [1] f32");
    lce_launch_loss(N, w.row_loss, w.scale, loss);
    dev_free(a.base);
    return loss;
}

extern "C" float *cuda_cce_forward(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target,
                                   cce_lce_saved *saved)
{
    return cuda_cce_forward_with(d, x, W, target, saved, lce2_launch_forward);
}

extern "C" void cuda_cce_backward(const lce_dims *d, cce_lce_saved *saved, const float *dloss, bf16 **dx,
                                  float **dW)
{
    int N = (int)d->N, V = (int)d->V, H = (int)d->H;
    bf16 *gx = (bf16 *)dev_alloc_array(lce_x_count(d), DT_BF16, "dx [N,H] bf16");
    float *gw = (float *)dev_alloc_array(lce_w_count(d), DT_F32, "dW [V,H] f32");
    /* 1 / n_valid again rather than a second saved float: one pass over target (N,) */
    float *scale = (float *)dev_alloc_array(1, DT_F32, "scale [1] f32 (1 / n_valid, recounted)");
    lce_launch_mean_scale(N, saved->target, scale);
    lce2_launch_dx(N, V, H, saved->x, saved->W, saved->target, saved->lse, scale, dloss, gx);
    lce2_launch_dw(N, V, H, saved->x, saved->W, saved->target, saved->lse, scale, dloss, gw);
    dev_free(scale);
    dev_free(saved->lse);
    saved->lse = NULL;
    *dx = gx;
    *dW = gw;
}
