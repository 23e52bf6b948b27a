/* gru_v2.cu - lesson 4, cuda-v2: v1's step loops captured into a CUDA Graph once per shape, then replayed.
 * Changed from v1: the same kernels and GEMMs in the same order, recorded once and launched as one graph,
 * 1 launch a pass instead of about five a time step. */
#include "gru_launch.h"

#include "runtime/cuda_track.h"


/* v1's loops (kernels/gru_v1.cu), captured here */
void gru1_forward_range(const gru_dims *d, const float *x, const float *h0, const float *eps,
                        const float *W_enc, const float *W_ih, const float *W_zh, float *out, int recompute,
                        size_t t0, size_t t1, gru_fused_ws *ws);
void gru1_backward_steps(const gru_dims *d, const float *x, const float *h0, const float *eps,
                         const float *W_enc, const float *W_ih, const float *W_zh, const float *out,
                         const float *dout, gru_fused_ws *ws, gru_grads *g);

/* v1 makes about five launches per time step (two GEMMs and the cell kernels), each a few microseconds of CPU
 * and driver work for little device work at small B and H: over T steps the launches dominate. Once the arena
 * is carved and the gradients allocated, the loop is recorded (stream capture) and launched as one graph: the
 * same kernels and GEMMs in the same order, the same results and memory, 1 launch per forward and backward.
 * The graph is kept per call site (cuda_graph_cache, cuda_track.h) and replayed while the shape and every
 * buffer address repeat (the arena's carved buffers included); a pass with other buffers captures anew. */

#define NKEY(k) ((int)(sizeof(k) / sizeof *(k)))

void gru2_forward(const gru_dims *d, const float *x, const float *h0, const float *eps, const float *W_enc,
                  const float *W_ih, const float *W_zh, float *out, gru_fused_ws *ws)
{
    static cuda_graph_cache forward_graph; /* one per shape and set of buffers: replayed while they repeat */
    const uintptr_t key[] = {
        (uintptr_t)d->T, (uintptr_t)d->B,  (uintptr_t)d->X,   (uintptr_t)d->H,   ws->cap,
        ws->P,           (uintptr_t)ws->S, (uintptr_t)ws->xp, (uintptr_t)ws->zp, (uintptr_t)ws->hs,
        (uintptr_t)out,  (uintptr_t)x,     (uintptr_t)h0,     (uintptr_t)eps,    (uintptr_t)W_enc,
        (uintptr_t)W_ih, (uintptr_t)W_zh};
    if (cuda_graph_replay(&forward_graph, key, NKEY(key))) return;
    cuda_capture_begin(1);
    gru1_forward_range(d, x, h0, eps, W_enc, W_ih, W_zh, out, 0, 0, d->T, ws);
    cuda_graph_keep(&forward_graph, key, NKEY(key));
}

void gru2_backward_steps(const gru_dims *d, const float *x, const float *h0, const float *eps,
                         const float *W_enc, const float *W_ih, const float *W_zh, const float *out,
                         const float *dout, gru_fused_ws *ws, gru_grads *g)
{
    static cuda_graph_cache backward_graph;
    const uintptr_t key[] = {(uintptr_t)d->T,
                             (uintptr_t)d->B,
                             (uintptr_t)d->X,
                             (uintptr_t)d->H,
                             ws->cap,
                             ws->P,
                             (uintptr_t)ws->S,
                             (uintptr_t)ws->xp,
                             (uintptr_t)ws->zp,
                             (uintptr_t)ws->hs,
                             (uintptr_t)out,
                             (uintptr_t)dout,
                             (uintptr_t)x,
                             (uintptr_t)h0,
                             (uintptr_t)eps,
                             (uintptr_t)W_enc,
                             (uintptr_t)W_ih,
                             (uintptr_t)W_zh,
                             (uintptr_t)g->dx,
                             (uintptr_t)g->dh0,
                             (uintptr_t)g->dW_enc,
                             (uintptr_t)g->dW_ih,
                             (uintptr_t)g->dW_zh};
    if (cuda_graph_replay(&backward_graph, key, NKEY(key))) return;
    cuda_capture_begin(1);
    gru1_backward_steps(d, x, h0, eps, W_enc, W_ih, W_zh, out, dout, ws, g);
    cuda_graph_keep(&backward_graph, key, NKEY(key));
}

/* ---- device memory: the arena, out and the gradients (gru_launch.h) around this version's launchers ---- */

extern "C" float *cuda_gru_forward_v2(const gru_dims *d, const gru_opts *o, const float *x, const float *h0,
                                      const float *eps, const float *W_enc, const float *W_ih,
                                      const float *W_zh, void **arena_out, gru_fused_ws *ws)
{
    *arena_out = gru_dev_arena(d, o, 0, ws);
    float *out = gru_dev_out(d);
    gru2_forward(d, x, h0, eps, W_enc, W_ih, W_zh, out, ws);
    return out;
}

extern "C" void cuda_gru_backward_v2(const gru_dims *d, const gru_opts *o, const float *x, const float *h0,
                                     const float *eps, const float *W_enc, const float *W_ih,
                                     const float *W_zh, const float *out, const float *dout, void *arena_mem,
                                     gru_fused_ws *ws, gru_grads *g)
{
    (void)o;
    gru_dev_grads(d, g);
    gru2_backward_steps(d, x, h0, eps, W_enc, W_ih, W_zh, out, dout, ws, g);
    dev_free(arena_mem);
}
