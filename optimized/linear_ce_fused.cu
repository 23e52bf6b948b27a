/* linear_ce_fused.cu - lesson 5's fused chunk loop on the GPU: three cublasGemmEx calls and one row kernel per
 * chunk (see linear_ce_fused.h for the dataflow, kernels/linear_ce_kernels.cu for the kernels).
 * See docs/lesson-5.md.
 *
 * Every GEMM reads bf16 operands and accumulates in float32 (CUBLAS_COMPUTE_32F). The weight gradient's GEMM
 * has C = grad_weight itself, f32, with beta = 1: cuBLAS reads C, adds the chunk's product and writes it back in
 * the same kernel, so no (V, H) temporary exists and the chunk's contribution is never rounded to bf16.
 */
#include "linear_ce_fused.h"

#include "../kernels/runtime/cuda_check.h"
#include "../kernels/runtime/cuda_track.h"
#include "../kernels/runtime/dry_skip.h"
#include "../kernels/linear_ce_kernels.h"
#include "../kernels/runtime/track.h"

static_assert(CUBLAS_WORKSPACE_BYTES == CUBLAS_WORKSPACE_BYTES_C, "the C formula's cuBLAS workspace is the real one");

/* Row-major C (M, N) = alpha op(A) op(B) + beta C with any cuBLAS data types, as column-major C^T = op(B)^T op(A)^T
 * (kernels/runtime/gemm_layout.h's mapping): the operands swap, M and N swap, each keeps its own transpose flag. */
static void gemm_ex_rowmajor(int transA, int transB, int M, int N, int K, const void *A, cudaDataType ta, int lda,
                             const void *B, cudaDataType tb, int ldb, float beta, void *C, cudaDataType tc, int ldc)
{
    float alpha = 1.0f;
    cublasHandle_t h = (cublasHandle_t)cublas_handle();
    cuda_count_launch(); /* one cuBLAS call: one launch in "launches per pass" */
    CUBLAS_CHECK(cublasGemmEx(h, transB ? CUBLAS_OP_T : CUBLAS_OP_N, transA ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K,
                              &alpha, B, tb, ldb, A, ta, lda, &beta, C, tc, ldc, CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT));
}

/* One chunk: rows [start, start + rows). */
static void cuda_chunk(const lce_dims *d, size_t k, const bf16 *x, const bf16 *W, const int32_t *target,
                       const cuda_lce_workspace *w, fused_lce_saved *sv)
{
    size_t start = k * d->chunk;
    int rows = (int)lce_chunk_rows(d, k), H = (int)d->H, V = (int)d->V;
    const bf16 *xc = x + start * d->H; /* (rows, H) */
    /* logits (rows, V) f32 = xc (rows, H) . W^T; W stored (V, H) = (N, K): transB */
    gemm_ex_rowmajor(0, 1, rows, V, H, xc, CUDA_R_16BF, H, W, CUDA_R_16BF, H, 0.0f, w->logits, CUDA_R_32F, V);
    lce_launch_rows(rows, V, w->logits, target + start, w->scale, w->row_loss + start);
    const bf16 *g = (const bf16 *)w->logits; /* (rows, V) bf16, row stride 2V */
    /* grad_input rows (rows, H) bf16 = g (rows, V) . W (V, H); f32 accumulation, rounded once on the store */
    gemm_ex_rowmajor(0, 0, rows, H, V, g, CUDA_R_16BF, 2 * V, W, CUDA_R_16BF, H, 0.0f, sv->grad_input + start * d->H,
                     CUDA_R_16BF, H);
    /* grad_weight (V, H) f32 = 1 * grad_weight + g^T (V, rows) . xc (rows, H); g stored (rows, V) = (K, M): transA */
    gemm_ex_rowmajor(1, 0, V, H, rows, g, CUDA_R_16BF, 2 * V, xc, CUDA_R_16BF, H, 1.0f, sv->grad_weight, CUDA_R_32F,
                     H);
}

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
        EMU_DRY_SKIP(k, 0, (long long)lce_chunks(d), 1); /* a dry run launches the boundary chunks only */
        cuda_chunk(d, k, x, W, target, &w, saved);
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
