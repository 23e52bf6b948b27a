/* gru_launch.h - what lesson 4's CUDA versions share on the host (CUDA sources only): the device arena, out
 * and the gradients they allocate alike, and the cooperative grid v3 to v5 plan their launch with
 * (gru_v3.cu). */
#ifndef KERNELS_GRU_LAUNCH_H
#define KERNELS_GRU_LAUNCH_H

extern "C" {
#include "../optimized/gru_fused.h"
#include "arena.h"
}
#include "runtime/cuda_track.h"

/* The step loop's arena, one dev_alloc carved before the loop by the CPU's own carving code, so no cudaMalloc
 * happens inside it; returned for backward to free. v1 and v2's holds the saved rows of the steps
 * --checkpoint keeps, the xp block and scratch; the persistent versions' (saved = 1: x_t W_ih and the step's
 * GEMMs run inside the kernel) the saved rows of all T steps alone. */
static inline void *gru_dev_arena(const gru_dims *d, const gru_opts *o, int saved, gru_fused_ws *ws)
{
    size_t bytes = saved ? gru_saved_arena_bytes(d) : gru_fused_arena_bytes(d, o);
    void *mem = dev_alloc(bytes, saved ? "arena: saved rows (T,B,6H)"
                                       : "arena: saved rows (cap,B,6H) + xp block + scratch");
    arena a;
    arena_init(&a, mem, bytes);
    if (saved)
        gru_saved_carve(d, &a, ws);
    else
        gru_fused_carve(d, o, &a, ws);
    return mem;
}

/* out (T,B,H): every h, also what backward reads */
static inline float *gru_dev_out(const gru_dims *d)
{
    return (float *)dev_alloc_array(gru_seq_count(d), DT_F32,
                                    "out (T,B,H) = every h: also what backward reads");
}

/* backward's gradients; dh0 is the running dh carry until the last step */
static inline void gru_dev_grads(const gru_dims *d, gru_grads *g)
{
    g->dx = (float *)dev_alloc_array(gru_x_count(d), DT_F32, "dx (T,B,X)");
    g->dh0 =
        (float *)dev_alloc_array(gru_h0_count(d), DT_F32, "dh0 (B,H): the running dh carry, h0's at the end");
    g->dW_enc = (float *)dev_alloc_array(gru_wenc_count(d), DT_F32, "dW_enc (H,2H)");
    g->dW_ih = (float *)dev_alloc_array(gru_wih_count(d), DT_F32, "dW_ih (X,3H)");
    g->dW_zh = (float *)dev_alloc_array(gru_wzh_count(d), DT_F32, "dW_zh (H,3H)");
}

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
#endif
