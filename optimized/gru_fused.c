/* gru_fused.c - lesson 4, optimized, CPU: block input projections, per-step fused cell, one arena
 * (gru_fused.h explains what is saved and why). Row-major throughout; a step's saved row block is
 * S_t = ws->S + (t mod cap) B 6H, row i of it is [r u n zn z e] (each H wide), row stride 6H. */
#include "gru_fused.h"

#include "arena.h"
#include "gemm_cpu.h"
#include "../kernels/gru_cell_math.h"
#include "track.h"

#define SW GRU_SAVED_PER_ROW

size_t gru_steps_saved(const gru_dims *d, const gru_opts *o)
{
    return o->checkpoint && o->checkpoint < d->T ? o->checkpoint : d->T;
}

void gru_fused_carve(const gru_dims *d, const gru_opts *o, void *arena_ptr, gru_fused_ws *ws)
{
    arena *a = arena_ptr;
    size_t B = d->B, H = d->H;
    ws->cap = gru_steps_saved(d, o);
    ws->P = o->block && o->block < ws->cap ? o->block : ws->cap;
    ws->S = arena_take(a, size_mul(size_mul(ws->cap, B), size_mul(SW, H)), DT_F32, "S (cap,B,6H)");
    ws->xp = arena_take(a, size_mul(size_mul(ws->P, B), size_mul(3, H)), DT_F32, "xp (P,B,3H)");
    ws->zp = arena_take(a, size_mul(B, size_mul(3, H)), DT_F32, "zp (B,3H)");
    ws->hs = arena_take(a, size_mul(B, H), DT_F32, "hs (B,H)");
}

size_t gru_fused_arena_bytes(const gru_dims *d, const gru_opts *o)
{
    arena a;
    gru_fused_ws ws;
    return ARENA_BYTES(a, gru_fused_carve(d, o, &a, &ws));
}

void gru_saved_carve(const gru_dims *d, void *arena_ptr, gru_fused_ws *ws)
{
    arena *a = arena_ptr;
    ws->cap = d->T;
    ws->P = 0;
    ws->S = arena_take(a, size_mul(size_mul(d->T, d->B), size_mul(SW, d->H)), DT_F32, "S (T,B,6H)");
    ws->xp = ws->zp = ws->hs = NULL;
}

size_t gru_saved_arena_bytes(const gru_dims *d)
{
    arena a;
    gru_fused_ws ws;
    return ARENA_BYTES(a, gru_saved_carve(d, &a, &ws));
}

static float *saved_row(const gru_dims *d, const gru_fused_ws *ws, size_t t)
{
    return ws->S + (t % ws->cap) * d->B * SW * d->H;
}

/* z = mean + eps exp(lv/2) from pd (B,2H) in zp; writes z and e into the saved row S_t (cols 4H, 5H) */
static void reparam_forward(const gru_dims *d, const float *pd, const float *eps_t, float *St)
{
    size_t H = d->H;
    for (size_t i = 0; i < d->B; i++)
        for (size_t j = 0; j < H; j++) {
            float *row = St + i * SW * H;
            row[4 * H + j] =
                gru_reparam(pd[i * 2 * H + j], pd[i * 2 * H + H + j], eps_t[i * H + j], &row[5 * H + j]);
        }
}

/* the fused gate pass: xp_t (B,3H) ld 3H, zp (B,3H), h (B,H) -> hnew (B,H), saves r u n zn into S_t */
static void gate_forward(const gru_dims *d, const float *xp_t, const float *zp, const float *h, float *hnew,
                         float *St)
{
    size_t H = d->H;
    for (size_t i = 0; i < d->B; i++)
        for (size_t j = 0; j < H; j++) {
            const float *a = xp_t + i * 3 * H, *b = zp + i * 3 * H;
            float *row = St + i * SW * H;
            gru_gates s;
            hnew[i * H + j] = gru_gate_forward(a[j], a[H + j], a[2 * H + j], b[j], b[H + j], b[2 * H + j],
                                               h[i * H + j], &s);
            row[j] = s.r;
            row[H + j] = s.u;
            row[2 * H + j] = s.n;
            row[3 * H + j] = s.zn;
        }
}

/* Steps [t0, t1): recompute = 0 writes h into out[t]; recompute = 1 reads every h_{t-1} from out (the values
 * forward produced) and only refills the saved rows. */
static void forward_range(const gru_dims *d, const float *x, const float *h0, const float *eps,
                          const float *W_enc, const float *W_ih, const float *W_zh, float *out, int recompute,
                          size_t t0, size_t t1, gru_fused_ws *ws, const gru_probe *probe)
{
    size_t B = d->B, X = d->X, H = d->H, BH = B * H;
    for (size_t tb = t0; tb < t1; tb += ws->P) { /* blocks of P steps */
        size_t nb = t1 - tb < ws->P ? t1 - tb : ws->P;
        /* xp (nb*B, 3H) = x[tb .. tb+nb) (nb*B, X) . W_ih (X, 3H): one GEMM for nb steps */
        sgemm_cpu(0, 0, nb * B, 3 * H, X, 1.0f, x + tb * B * X, X, W_ih, 3 * H, 0.0f, ws->xp, 3 * H);
        for (size_t k = 0; k < nb; k++) {
            size_t t = tb + k;
            const float *h = t ? out + (t - 1) * BH : h0;
            float *St = saved_row(d, ws, t);
            /* pd (B, 2H) = h (B, H) . W_enc (H, 2H), into the scratch zp (ld 2H) */
            sgemm_cpu(0, 0, B, 2 * H, H, 1.0f, h, H, W_enc, 2 * H, 0.0f, ws->zp, 2 * H);
            reparam_forward(d, ws->zp, eps + t * BH, St);
            /* zp (B, 3H) = z (B, H, ld 6H: the saved row's z columns) . W_zh (H, 3H); pd is dead by now */
            sgemm_cpu(0, 0, B, 3 * H, H, 1.0f, St + 4 * H, SW * H, W_zh, 3 * H, 0.0f, ws->zp, 3 * H);
            gate_forward(d, ws->xp + k * B * 3 * H, ws->zp, h, recompute ? ws->hs : out + t * BH, St);
            if (!recompute) gru_probe_call(probe, GRU_FWD_STEP, t);
        }
    }
}

float *cpu_gru_forward(const gru_dims *d, const gru_opts *o, const float *x, const float *h0,
                       const float *eps, const float *W_enc, const float *W_ih, const float *W_zh,
                       void **arena_out, gru_fused_ws *ws, const gru_probe *probe)
{
    gru_probe_call(probe, GRU_FWD_BEGIN, 0);
    size_t bytes = gru_fused_arena_bytes(d, o);
    void *mem = host_alloc(bytes, "arena: saved rows (cap,B,6H) + xp block + scratch");
    arena a;
    arena_init(&a, mem, bytes);
    gru_fused_carve(d, o, &a, ws);
    float *out =
        host_alloc_array(gru_seq_count(d), DT_F32, "out (T,B,H) = every h: also what backward reads");
    forward_range(d, x, h0, eps, W_enc, W_ih, W_zh, out, 0, 0, d->T, ws, probe);
    *arena_out = mem;
    return out;
}

/* The fused gate backward: g = dh + dout_t; S_t's [r u n zn] become [da_r da_u dzn da_n]; dh <- g u */
static void gate_backward(const gru_dims *d, const float *dout_t, const float *h, float *dh, float *St)
{
    size_t H = d->H;
    for (size_t i = 0; i < d->B; i++)
        for (size_t j = 0; j < H; j++) {
            float *row = St + i * SW * H;
            gru_gates s = {row[j], row[H + j], row[2 * H + j], row[3 * H + j]};
            gru_gate_grads o;
            dh[i * H + j] = gru_gate_backward(dh[i * H + j] + dout_t[i * H + j], h[i * H + j], s, &o);
            row[j] = o.da_r;
            row[H + j] = o.da_u;
            row[2 * H + j] = o.dzn;
            row[3 * H + j] = o.da_n;
        }
}

/* S_t's e column becomes dlv = dz e / 2, next to dz: [dz dlv] is dPD, the gradient of pd = h W_enc */
static void reparam_backward(const gru_dims *d, float *St)
{
    size_t H = d->H;
    for (size_t i = 0; i < d->B; i++)
        for (size_t j = 0; j < H; j++) {
            float *row = St + i * SW * H;
            row[5 * H + j] = gru_reparam_backward(row[4 * H + j], row[5 * H + j]);
        }
}

/* Step t backward: dh (B,H) holds the gradient reaching h_t from step t+1; on return, h_{t-1}'s. */
static void step_backward(const gru_dims *d, size_t t, const float *h0, const float *W_enc, const float *W_zh,
                          const float *out, const float *dout, float *dh, gru_fused_ws *ws, float *dW_zh)
{
    size_t B = d->B, H = d->H, BH = B * H;
    float *St = saved_row(d, ws, t);
    gate_backward(d, dout + t * BH, t ? out + (t - 1) * BH : h0, dh, St);
    /* dW_zh (H, 3H) += z^T (H, B; z is S_t col 4H, ld 6H) . dZP (B, 3H; S_t cols 0..3H, ld 6H); z dies
     * here */
    sgemm_cpu(1, 0, H, 3 * H, B, 1.0f, St + 4 * H, SW * H, St, SW * H, t == d->T - 1 ? 0.0f : 1.0f, dW_zh,
              3 * H);
    /* dz (B, H) into S_t col 4H = dZP (B, 3H) . W_zh^T (W_zh stored (H, 3H)) */
    sgemm_cpu(0, 1, B, H, 3 * H, 1.0f, St, SW * H, W_zh, 3 * H, 0.0f, St + 4 * H, SW * H);
    reparam_backward(d, St);
    /* dh (B, H) += dPD (B, 2H; S_t cols 4H..6H) . W_enc^T (W_enc stored (H, 2H)) */
    sgemm_cpu(0, 1, B, H, 2 * H, 1.0f, St + 4 * H, SW * H, W_enc, 2 * H, 1.0f, dh, H);
}

/* After steps [t0, t1) ran backward, their rows hold [da_r da_u dzn da_n dz dlv]: the x-side and encoder
 * gradients of the whole segment are a few GEMMs with R = (t1-t0) B rows. beta = 0 for the first segment. */
static void segment_weight_grads(const gru_dims *d, size_t t0, size_t t1, const float *x, const float *h0,
                                 const float *W_ih, const float *out, const gru_fused_ws *ws, float beta,
                                 gru_grads *g)
{
    size_t B = d->B, X = d->X, H = d->H, R = (t1 - t0) * B, ld = SW * H;
    const float *Sg = saved_row(d, ws, t0), *xs = x + t0 * B * X;
    /* dW_ih[:, 0:2H] (X, 2H) += x_seg^T (X, R) . [da_r da_u] (R, 2H);  dW_ih[:, 2H:] += x_seg^T . da_n */
    sgemm_cpu(1, 0, X, 2 * H, R, 1.0f, xs, X, Sg, ld, beta, g->dW_ih, 3 * H);
    sgemm_cpu(1, 0, X, H, R, 1.0f, xs, X, Sg + 3 * H, ld, beta, g->dW_ih + 2 * H, 3 * H);
    /* dx_seg (R, X) = [da_r da_u] (R, 2H) . W_ih[:, 0:2H]^T  +  da_n (R, H) . W_ih[:, 2H:]^T */
    sgemm_cpu(0, 1, R, X, 2 * H, 1.0f, Sg, ld, W_ih, 3 * H, 0.0f, g->dx + t0 * B * X, X);
    sgemm_cpu(0, 1, R, X, H, 1.0f, Sg + 3 * H, ld, W_ih + 2 * H, 3 * H, 1.0f, g->dx + t0 * B * X, X);
    /* dW_enc (H, 2H) += Hprev^T (H, R) . [dz dlv] (R, 2H). Hprev rows are out[t0-1 .. t1-2] -- contiguous --
     * except that step 0's comes from h0. */
    size_t skip = 0;
    if (t0 == 0) {
        sgemm_cpu(1, 0, H, 2 * H, B, 1.0f, h0, H, Sg + 4 * H, ld, beta, g->dW_enc, 2 * H);
        skip = 1;
        beta = 1.0f;
    }
    if (t1 - t0 > skip)
        sgemm_cpu(1, 0, H, 2 * H, R - skip * B, 1.0f, out + (t0 + skip - 1) * B * H, H,
                  Sg + skip * B * ld + 4 * H, ld, beta, g->dW_enc, 2 * H);
}

void cpu_gru_backward(const gru_dims *d, const gru_opts *o, const float *x, const float *h0, const float *eps,
                      const float *W_enc, const float *W_ih, const float *W_zh, const float *out,
                      const float *dout, void *arena_mem, gru_fused_ws *ws, gru_grads *g,
                      const gru_probe *probe)
{
    size_t T = d->T, L = ws->cap, nseg = (T + L - 1) / L;
    g->dx = host_alloc_array(gru_x_count(d), DT_F32, "dx (T,B,X)");
    g->dh0 = host_alloc_array(gru_h0_count(d), DT_F32, "dh0 (B,H): the running dh carry, h0's at the end");
    g->dW_enc = host_alloc_array(gru_wenc_count(d), DT_F32, "dW_enc (H,2H)");
    g->dW_ih = host_alloc_array(gru_wih_count(d), DT_F32, "dW_ih (X,3H)");
    g->dW_zh = host_alloc_array(gru_wzh_count(d), DT_F32, "dW_zh (H,3H)");
    /* nothing comes back from after step T-1 */
    for (size_t i = 0; i < gru_h0_count(d); i++) g->dh0[i] = 0.0f;
    for (size_t s = nseg; s-- > 0;) {
        size_t t0 = s * L, t1 = t0 + L < T ? t0 + L : T;
        if (L < T) forward_range(d, x, h0, eps, W_enc, W_ih, W_zh, (float *)out, 1, t0, t1, ws, probe);
        for (size_t t = t1; t-- > t0;) {
            step_backward(d, t, h0, W_enc, W_zh, out, dout, g->dh0, ws, g->dW_zh);
            gru_probe_call(probe, GRU_BWD_STEP, t);
        }
        segment_weight_grads(d, t0, t1, x, h0, W_ih, out, ws, s == nseg - 1 ? 0.0f : 1.0f, g);
    }
    host_free(arena_mem);
    gru_probe_call(probe, GRU_BWD_END, 0);
    (void)o;
}

/* inputs, the arena and out after forward; + dout and the gradients at the peak */
mem_formula gru_memory_of(const gru_dims *d, size_t arena_bytes)
{
    size_t out = size_mul(4, gru_seq_count(d));
    mem_formula m;
    m.forward_live = size_add(size_add(gru_input_bytes(d), out), arena_bytes);
    m.peak = size_add(size_add(m.forward_live, out), gru_grad_bytes(d)); /* + dout (T,B,H) + the gradients */
    m.allocs = 14; /* 6 inputs, arena, out, dout, 5 gradients */
    return m;
}

mem_formula cpu_gru_memory(const gru_dims *d, const gru_opts *o)
{
    return gru_memory_of(d, gru_fused_arena_bytes(d, o));
}
