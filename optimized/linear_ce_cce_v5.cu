/* linear_ce_cce_v5.cu - lesson 5, cuda-v5 on the GPU: device memory around the kernels of kernels/linear_ce_v5.cu
 * (no cuBLAS, no logits buffer; linear_ce_cce_v5.h has the dataflow). */
#include "linear_ce_cce_v5.h"

#include "../kernels/runtime/cuda_check.h"
#include "../kernels/runtime/cuda_track.h"
#include "track.h"

static cce3_filter_stats last_filter; /* what the last backward's filter skipped; read by the lesson's epilogue */

extern "C" cce3_filter_stats cuda_cce5_last_filter(void) { return last_filter; }

/* v4's forward (its workspace, mean scale and loss) around v5's kernels */
extern "C" float *cuda_cce5_forward(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target,
                                    cce_lce_saved *saved)
{
    return cuda_cce4_forward_with(d, x, W, target, saved, lce5_launch_forward);
}

extern "C" void cuda_cce5_backward(const lce_dims *d, int filter, cce_lce_saved *saved, const float *dloss,
                                   bf16 **dx, float **dW)
{
    int N = (int)d->N, V = (int)d->V, H = (int)d->H, ldg = (int)lce5_chunk_cols(V), ldn = (int)cuda_cce5_ldn(d);
    bf16 *gx = (bf16 *)dev_alloc_array(lce_x_count(d), DT_BF16, "dx [N,H] bf16");
    float *gw = (float *)dev_alloc_array(lce_w_count(d), DT_F32, "dW [V,H] f32");
    arena a;
    cuda_cce5_backward_workspace w;
    size_t bytes = ARENA_BYTES(a, cuda_cce5_carve_backward(&a, d, &w));
    arena_init(&a,
               dev_alloc(bytes, "workspace: G and G^T [N,8192] bf16 + W^T chunk [H,8192] + x^T [H,N] + tile flags + "
                                "dx_acc [N,H] f32 + scale + count"),
               bytes);
    cuda_cce5_carve_backward(&a, d, &w);
    CUDA_CHECK(cudaMemset(w.skipped, 0, sizeof *w.skipped));
    lce_launch_mean_scale(N, saved->target, w.scale);
    lce5_launch_transpose(N, H, N, saved->x, H, w.xt, ldn);
    for (long long c0 = 0; c0 < V; c0 += ldg) { /* the chunks in order: dx's fp32 sums meet in a fixed order */
        int vc = (int)(V - c0 < ldg ? V - c0 : ldg);
        lce5_launch_backward_chunk(N, V, H, (int)c0, vc, ldg, ldn, saved->x, w.xt, saved->W, saved->target,
                                   saved->lse, w.scale, dloss, filter, w.G, w.Gt, w.Wt, w.skip, w.skipped, c0 == 0,
                                   c0 + ldg >= V, w.dx_acc, gx, gw);
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
