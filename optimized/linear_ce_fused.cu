/* linear_ce_fused.cu - lesson 5, cuda-v1 on the GPU: device memory and the chunk loop (linear_ce_fused.h has
 * the dataflow); each chunk's GEMMs and row kernel are kernels/linear_ce_v1.cu. */
#include "linear_ce_fused.h"

#include "../kernels/linear_ce_math.h"
#include "../kernels/runtime/cuda_check.h"
#include "../kernels/runtime/cuda_track.h"
#include "track.h"

static_assert(CUBLAS_WORKSPACE_BYTES == CUBLAS_WORKSPACE_BYTES_C, "the C formula's cuBLAS workspace is the real one");

extern "C" float *cuda_lce_forward(const lce_dims *dims, const bf16 *x, const bf16 *W, const int32_t *target,
                                   fused_lce_saved *saved)
{
    lce_dims dc = lce_cuda_dims(dims); /* the traffic model's chunk (linear_ce_fused.h), or --chunk */
    const lce_dims *d = &dc;
    saved->grad_weight = (float *)dev_alloc_array(lce_w_count(d), DT_F32, "grad_weight [V,H] f32 (saved)");
    saved->grad_input = (bf16 *)dev_alloc_array(lce_x_count(d), DT_BF16, "grad_input [N,H] bf16 (saved)");
    CUDA_CHECK(cudaMemset(saved->grad_weight, 0, lce_w_count(d) * sizeof(float))); /* beta = 1 adds onto zeros */
    size_t bytes = cuda_lce_workspace_bytes(d);
    arena a;
    cuda_lce_workspace w;
    arena_init(&a, dev_alloc(bytes, "workspace: logits [c,V] f32 + row losses"), bytes);
    cuda_lce_carve(&a, d, &w);
    lce_launch_mean_scale((long long)d->N, target, w.scale);
    for (size_t k = 0; k < lce_chunks(d); k++) {
        lce1_chunk(d, k, x, W, target, w.logits, w.scale, w.row_loss, saved->grad_input, saved->grad_weight);
    }
    float *loss = (float *)dev_alloc_array(1, DT_F32, "loss [1] f32");
    lce_launch_loss((long long)d->N, w.row_loss, w.scale, loss);
    dev_free(a.base);
    return loss;
}

extern "C" void cuda_lce_backward(const lce_dims *d, fused_lce_saved *saved, const float *dloss, bf16 **dx,
                                  float **dW)
{
    lce_launch_scale_bf16((long long)lce_x_count(d), saved->grad_input, dloss);
    lce_launch_scale_f32((long long)lce_w_count(d), saved->grad_weight, dloss);
    track_relabel(MEM_DEVICE, saved->grad_input, "dx [N,H] bf16 (grad_input, scaled)");
    track_relabel(MEM_DEVICE, saved->grad_weight, "dW [V,H] f32 (grad_weight, scaled)");
    *dx = saved->grad_input;
    *dW = saved->grad_weight;
    saved->grad_input = NULL;
    saved->grad_weight = NULL;
}
