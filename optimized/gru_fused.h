/* gru_fused.h - lesson 4, optimized: the cell as a fused RNN runs it (haste, cuDNN), CPU and CUDA.
 *
 * Forward, per block of P steps: ONE GEMM projects x_t W_ih for all P steps (rows P*B). Per step: one GEMM
 * pd = h W_enc, a fused reparameterisation (z and e = eps exp(lv/2) written straight into the step's saved
 * row), one GEMM z W_zh, and one fused gate pass that writes the new h into out[t] and saves r, u, n, zn.
 * Saved per step and row: h (it is out[t], kept anyway) + 6H floats laid out [r | u | n | zn | z | e]:
 *     r, u, n   the activations' outputs: sigma' = s(1-s), tanh' = 1-n^2, dn = g(1-u), du = g(h-n)
 *     zn        dr = d(pre-tanh) zn
 *     z         dW_zh = z^T dZP
 *     e         dlv = dz e / 2 (dmean = dz)
 * Backward overwrites the same row in place as the values die: [da_r | da_u | dzn | da_n | dz | dlv], so the
 * gradients of x W_ih, z W_zh and h W_enc for every step of a segment are there for the big GEMMs after it:
 *     dW_ih = X_seg^T [da_r da_u | da_n],  dx_seg = [da_r da_u | da_n] W_ih^T,  dW_enc = Hprev_seg^T [dz dlv]
 * (two GEMMs each where the n column block is not next to r and u; beta = 1 accumulates, no temporary).
 * dW_zh needs z, which dz overwrites, so it is accumulated per step (beta = 1) before dz is written.
 * Every buffer is carved from one arena allocated before the loop: zero allocations inside it. --checkpoint
 * k: saved rows for one segment of k steps only, each segment's forward recomputed from out[t0-1] in
 * backward. */
#ifndef OPTIMIZED_GRU_FUSED_H
#define OPTIMIZED_GRU_FUSED_H

#include "../kernels/gru_problem.h"
#include "../kernels/runtime/mem_formula.h"

typedef struct {
    size_t checkpoint; /* 0: save all T steps; k >= 1: save one segment of k steps, recompute in backward */
    size_t block;      /* steps per input-projection GEMM; 0: all T at once */
} gru_opts;

#define GRU_SAVED_PER_ROW 6 /* r, u, n, zn, z, e: floats per hidden unit saved per step and row */

typedef struct {
    size_t cap; /* steps whose rows the saved buffer holds: T, or the checkpoint k */
    size_t P;   /* steps per input projection */
    float *S;   /* (cap,B,6H) saved rows, then their gradients */
    float *xp;  /* (P,B,3H) x_t W_ih for one block of steps */
    float *zp;  /* (B,3H) pd = h W_enc (first 2H columns), then z W_zh: the same scratch every step */
    float *hs;  /* (B,H) the new h while recomputing a segment (out[t] already holds it) */
} gru_fused_ws;

/* Carves ws from a; with a planning arena (base NULL) it only counts: a.used is the arena's size. */
void gru_fused_carve(const gru_dims *d, const gru_opts *o, void *arena_ptr, gru_fused_ws *ws);
size_t gru_fused_arena_bytes(const gru_dims *d, const gru_opts *o);
/* cuda-v3 to v5 compute x_t W_ih, h W_enc and z W_zh inside their kernels and refuse --checkpoint: their
 * arena is the saved rows of all T steps alone (xp, zp and hs NULL, P 0) */
void gru_saved_carve(const gru_dims *d, void *arena_ptr, gru_fused_ws *ws);
size_t gru_saved_arena_bytes(const gru_dims *d);

/* host pointers; shapes as in gru_eager.h. Allocates the arena (kept in *arena_out for backward) and out. */
float *cpu_gru_forward(const gru_dims *d, const gru_opts *o, const float *x, const float *h0,
                       const float *eps, const float *W_enc, const float *W_ih, const float *W_zh,
                       void **arena_out, gru_fused_ws *ws, const gru_probe *probe);
/* Allocates the five gradients; frees the arena. */
void cpu_gru_backward(const gru_dims *d, const gru_opts *o, const float *x, const float *h0, const float *eps,
                      const float *W_enc, const float *W_ih, const float *W_zh, const float *out,
                      const float *dout, void *arena_mem, gru_fused_ws *ws, gru_grads *g,
                      const gru_probe *probe);

#ifdef HAVE_CUDA
/* The same on the device, cuda-vN in kernels/gru_vN.cu: every pointer is device memory; the arena and out are
 * dev_alloc'ed, the GEMMs are cuBLAS's, the cell passes kernels. v1 launches the step loops; v2 captures them
 * into one CUDA Graph once per shape and buffers and replays it (cuda_track.h); v3 runs forward as one
 * persistent cooperative kernel writing the same saved rows, backward v2's; v4 the same with 8 lanes per
 * (row, unit); v5 v4's forward, backward's step loop as one persistent cooperative kernel and v1's
 * weight-gradient GEMMs after it. */
float *cuda_gru_forward_v1(const gru_dims *d, const gru_opts *o, const float *x, const float *h0,
                           const float *eps, const float *W_enc, const float *W_ih, const float *W_zh,
                           void **arena_out, gru_fused_ws *ws);
void cuda_gru_backward_v1(const gru_dims *d, const gru_opts *o, const float *x, const float *h0,
                          const float *eps, const float *W_enc, const float *W_ih, const float *W_zh,
                          const float *out, const float *dout, void *arena_mem, gru_fused_ws *ws,
                          gru_grads *g);
float *cuda_gru_forward_v2(const gru_dims *d, const gru_opts *o, const float *x, const float *h0,
                           const float *eps, const float *W_enc, const float *W_ih, const float *W_zh,
                           void **arena_out, gru_fused_ws *ws);
void cuda_gru_backward_v2(const gru_dims *d, const gru_opts *o, const float *x, const float *h0,
                          const float *eps, const float *W_enc, const float *W_ih, const float *W_zh,
                          const float *out, const float *dout, void *arena_mem, gru_fused_ws *ws,
                          gru_grads *g);
float *cuda_gru_forward_v3(const gru_dims *d, const gru_opts *o, const float *x, const float *h0,
                           const float *eps, const float *W_enc, const float *W_ih, const float *W_zh,
                           void **arena_out, gru_fused_ws *ws);
void cuda_gru_backward_v3(const gru_dims *d, const gru_opts *o, const float *x, const float *h0,
                          const float *eps, const float *W_enc, const float *W_ih, const float *W_zh,
                          const float *out, const float *dout, void *arena_mem, gru_fused_ws *ws,
                          gru_grads *g);
float *cuda_gru_forward_v4(const gru_dims *d, const gru_opts *o, const float *x, const float *h0,
                           const float *eps, const float *W_enc, const float *W_ih, const float *W_zh,
                           void **arena_out, gru_fused_ws *ws);
void cuda_gru_backward_v4(const gru_dims *d, const gru_opts *o, const float *x, const float *h0,
                          const float *eps, const float *W_enc, const float *W_ih, const float *W_zh,
                          const float *out, const float *dout, void *arena_mem, gru_fused_ws *ws,
                          gru_grads *g);
float *cuda_gru_forward_v5(const gru_dims *d, const gru_opts *o, const float *x, const float *h0,
                           const float *eps, const float *W_enc, const float *W_ih, const float *W_zh,
                           void **arena_out, gru_fused_ws *ws);
void cuda_gru_backward_v5(const gru_dims *d, const gru_opts *o, const float *x, const float *h0,
                          const float *eps, const float *W_enc, const float *W_ih, const float *W_zh,
                          const float *out, const float *dout, void *arena_mem, gru_fused_ws *ws,
                          gru_grads *g);
/* NULL when cuda-v3's cooperative grid fits the device (every block resident, each block's weight slices in
 * its shared memory) and --checkpoint is 0, else why not */
const char *gru3_unfit(const gru_dims *d, const gru_opts *o);
/* the same for cuda-v4's grid (kernels/gru_v4.cu) */
const char *gru4_unfit(const gru_dims *d, const gru_opts *o);
/* the same for cuda-v5's two grids (kernels/gru_v4.cu's forward, kernels/gru_v5.cu's backward) */
const char *gru5_unfit(const gru_dims *d, const gru_opts *o);
/* cuda-v5's split of a weight-gradient sum (m, n) over rows into slices whose partials fit cap floats (1:
 * none), and the partial matrices S slices write (one more for rows left over); kernels/gru_v5.cu */
size_t gru5_split_slices(size_t m, size_t n, size_t rows, size_t cap);
size_t gru5_split_partials(size_t slices, size_t rows);
#endif
/* NULL when cuBLAS's int dimensions and the kernels' grids hold this problem, else why not */
const char *cuda_gru_unfit(const gru_dims *d, const gru_opts *o);
/* cpu's bytes on the device, plus the tracked cuBLAS workspace (one more allocation): cuda-v1 and cuda-v2 */
mem_formula cuda_gru_memory(const gru_dims *d, const gru_opts *o);
/* cuda-v3 to v5: the same with the saved rows alone as the arena (gru_saved_carve); v5's split
 * weight-gradient sums keep their partials in dx before it is written (kernels/gru_v5.cu): no bytes more */
mem_formula cuda_gru_persistent_memory(const gru_dims *d);

/* the steps whose saved rows the arena keeps (T, or --checkpoint's K) */
size_t gru_steps_saved(const gru_dims *d, const gru_opts *o);
/* inputs + out + an arena of arena_bytes after forward; + dout + gradients at the peak; 14 allocations */
mem_formula gru_memory_of(const gru_dims *d, size_t arena_bytes);

/* The tracker's view: inputs + out + arena after forward; + dout + gradients at the peak; 14 allocations. */
mem_formula cpu_gru_memory(const gru_dims *d, const gru_opts *o);

#endif
