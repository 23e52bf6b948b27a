/* gru_fused.cu - lesson 4 on the GPU: device memory and the choice of version. Every device buffer of the
 * step loop comes from one dev_alloc'ed arena carved before it (gru_fused_carve, the CPU's own carving code):
 * no cudaMalloc inside the loop. The launches are kernels/gru_v1.cu (cuda-v1), kernels/gru_v2.cu (cuda-v2,
 * the same loop as one CUDA Graph, captured once per shape and buffers and replayed), kernels/gru_v3.cu
 * (cuda-v3, the forward loop as one persistent cooperative kernel over the same arena; backward cuda-v2's)
 * and kernels/gru_v4.cu (cuda-v4, the same with every thread of a block at work in a step) and
 * kernels/gru_v5.cu (cuda-v5: v4's forward, backward's step loop as one persistent cooperative kernel
 * too). */
extern "C" {
#include "gru_fused.h"

#include "arena.h"
#include "../kernels/runtime/cuda_track.h"
}
#include "../kernels/gru_launch.h"

extern "C" float *cuda_gru_forward(const gru_dims *d, const gru_opts *o, const float *x, const float *h0,
                                   const float *eps, const float *W_enc, const float *W_ih, const float *W_zh,
                                   void **arena_out, gru_fused_ws *ws, int version)
{
    int persistent = version >= 3; /* x_t W_ih and the step's GEMMs inside the kernel: the saved rows alone */
    size_t bytes = persistent ? gru_saved_arena_bytes(d) : gru_fused_arena_bytes(d, o);
    void *mem = dev_alloc(bytes, persistent ? "arena: saved rows (T,B,6H)"
                                            : "arena: saved rows (cap,B,6H) + xp block + scratch");
    arena a;
    arena_init(&a, mem, bytes);
    if (persistent)
        gru_saved_carve(d, &a, ws);
    else
        gru_fused_carve(d, o, &a, ws);
    float *out =
        (float *)dev_alloc_array(gru_seq_count(d), DT_F32, "out (T,B,H) = every h: also what backward reads");
    if (version == 4 || version == 5)
        gru4_forward(d, x, h0, eps, W_enc, W_ih, W_zh, out, ws);
    else if (version == 3)
        gru3_forward(d, x, h0, eps, W_enc, W_ih, W_zh, out, ws);
    else if (version == 2)
        gru2_forward(d, x, h0, eps, W_enc, W_ih, W_zh, out, ws);
    else
        gru1_forward_range(d, x, h0, eps, W_enc, W_ih, W_zh, out, 0, 0, d->T, ws);
    *arena_out = mem;
    return out;
}

extern "C" void cuda_gru_backward(const gru_dims *d, const gru_opts *o, const float *x, const float *h0,
                                  const float *eps, const float *W_enc, const float *W_ih, const float *W_zh,
                                  const float *out, const float *dout, void *arena_mem, gru_fused_ws *ws,
                                  gru_grads *g, int version)
{
    (void)o;
    size_t BH = gru_h0_count(d);
    g->dx = (float *)dev_alloc_array(gru_x_count(d), DT_F32, "dx (T,B,X)");
    g->dh0 = (float *)dev_alloc_array(BH, DT_F32, "dh0 (B,H): the running dh carry, h0's at the end");
    g->dW_enc = (float *)dev_alloc_array(gru_wenc_count(d), DT_F32, "dW_enc (H,2H)");
    g->dW_ih = (float *)dev_alloc_array(gru_wih_count(d), DT_F32, "dW_ih (X,3H)");
    g->dW_zh = (float *)dev_alloc_array(gru_wzh_count(d), DT_F32, "dW_zh (H,3H)");
    (version == 5 ? gru5_backward_steps : version >= 2 ? gru2_backward_steps : gru1_backward_steps)(
        d, x, h0, eps, W_enc, W_ih, W_zh, out, dout, ws, g);
    dev_free(arena_mem);
}
