/* gru_launch.h - lesson 4's CUDA launchers (kernels/gru_vN.cu), called by optimized/gru_fused.cu, which
 * carves ws from its arena and allocates the gradients; v2 replays v1's loops. Device pointers; CUDA sources
 * only. */
#ifndef KERNELS_GRU_LAUNCH_H
#define KERNELS_GRU_LAUNCH_H

extern "C" {
#include "../optimized/gru_fused.h"
}

/* cuda-v1: steps [t0, t1) of forward; recompute = 1: h goes to ws->hs (backward's checkpoint replay), else to
 * out */
void gru1_forward_range(const gru_dims *d, const float *x, const float *h0, const float *eps,
                        const float *W_enc, const float *W_ih, const float *W_zh, float *out, int recompute,
                        size_t t0, size_t t1, gru_fused_ws *ws);
void gru1_backward_steps(const gru_dims *d, const float *x, const float *h0, const float *eps,
                         const float *W_enc, const float *W_ih, const float *W_zh, const float *out,
                         const float *dout, gru_fused_ws *ws, gru_grads *g);
/* cuda-v2: v1's loops as one CUDA Graph per shape and set of buffers */
void gru2_forward(const gru_dims *d, const float *x, const float *h0, const float *eps, const float *W_enc,
                  const float *W_ih, const float *W_zh, float *out, gru_fused_ws *ws);
void gru2_backward_steps(const gru_dims *d, const float *x, const float *h0, const float *eps,
                         const float *W_enc, const float *W_ih, const float *W_zh, const float *out,
                         const float *dout, gru_fused_ws *ws, gru_grads *g);
/* cuda-v3 to v5's grid (kernels/gru_v3.cu): the largest of at most `most` blocks, up to max_per_sm per SM,
 * whose dynamic shared memory smem_of(d, G) fits a block and whose blocks are all resident at once
 * (cudaLaunchCooperativeKernel's precondition); sets kernel's shared-memory opt-in on the way. why: NULL, or
 * no device, no cooperative launch, or too_big */
typedef struct {
    int blocks;      /* G */
    size_t smem;     /* dynamic shared memory per block */
    const char *why; /* NULL, or why no grid fits */
} gru_coop_plan;
gru_coop_plan gru_plan_cooperative(const void *kernel, int threads, long long most, int max_per_sm,
                                   size_t (*smem_of)(const gru_dims *d, long long G), const gru_dims *d,
                                   const char *too_big);
/* cuda-v3: the forward loop as one persistent cooperative kernel (backward: v2's) */
void gru3_forward(const gru_dims *d, const float *x, const float *h0, const float *eps, const float *W_enc,
                  const float *W_ih, const float *W_zh, float *out, gru_fused_ws *ws);
/* cuda-v4: v3's persistent kernel with 8 lanes per (row, unit) and x_t W_ih in phase 1 (backward: v2's) */
void gru4_forward(const gru_dims *d, const float *x, const float *h0, const float *eps, const float *W_enc,
                  const float *W_ih, const float *W_zh, float *out, gru_fused_ws *ws);
/* cuda-v5: v4's forward; backward's step loop as one persistent cooperative kernel, then v1's weight GEMMs
 * with the long sums over T Bt rows split by hand */
void gru5_backward_steps(const gru_dims *d, const float *x, const float *h0, const float *eps,
                         const float *W_enc, const float *W_ih, const float *W_zh, const float *out,
                         const float *dout, gru_fused_ws *ws, gru_grads *g);

#endif
