/* gru_v4.cu - lesson 4, cuda-v4: v3's persistent forward with every thread of a block at work in every step.
 * Changed from v3: 8 lanes share one (row, unit) and sum with shuffles, x_t W_ih moves to phase 1, and a
 * block holds 2 units or more. Backward is v2's graph. */
#include <cooperative_groups.h>

#include "gru_cell_math.h"
#include "gru_lanes.h"
#include "gru_launch.h"

#include "runtime/cuda_check.h"
#include "runtime/cuda_track.h"
#include "runtime/launch.h"

/* v2's backward (kernels/gru_v2.cu): this version's backward */
void gru2_backward_steps(const gru_dims *d, const float *x, const float *h0, const float *eps,
                         const float *W_enc, const float *W_ih, const float *W_zh, const float *out,
                         const float *dout, gru_fused_ws *ws, gru_grads *g);

/* v3 gives each (row i, unit j) of a block's slice to one thread, which walks its dot products alone: 2H + X
 * terms a step, one after another, on the B nj threads that have an (i, j) (32 of 256 at the medium size),
 * and a warp's load of h reads 32 rows, one word each. v4 keeps v3's split of the hidden units over the
 * blocks, their weight slices in shared memory, the two grid.syncs a step and the saved rows, and changes who
 * does what:
 *   - GRU4_LANES = 8 lanes share one (i, j): lane s takes the terms k = s, s + 8, ..., and 3 shuffles sum
 *     them. A
 *     warp holds 4 (i, j) at once, so its load of h reads 4 rows' 8 consecutive words.
 *   - x_t W_ih, which needs no z, moves to phase 1 beside h W_enc, kept in shared memory until phase 2.
 *   - a block holds GRU4_UNITS = 2 units or more, so at the medium size one block per SM reads h, x_t and z
 *     once
 *     a step for its 2 units (v3 ran 256 blocks of one unit, 2 per SM).
 *   phase 1  z[:, J], e[:, J] from h W_enc[:, J] and eps; xa = x_t W_ih[:, J] (to shared)   -> grid.sync
 *   phase 2  z W_zh[:, J], the gates with xa -> h_new[:, J] = out[t]                       -> grid.sync
 * The arithmetic is gru_cell_math.h's (gru_reparam, gru_gate_forward), the functions the CPU calls; the sums
 * run in another order than v3's, so the two agree to rounding, not bit for bit. Backward is v2's graph.
 * Its target and the model's figures: docs/lesson-4.md, section 4. */

static_assert(GRU4_THREADS % 32 == 0 && 32 % GRU4_LANES == 0, "whole warps, lane groups inside a warp");

#define SW GRU_SAVED_PER_ROW                        /* floats saved per (row, unit) and step */
#define ITEMS_PER_PASS (GRU4_THREADS / GRU4_LANES)  /* (i, j) a block works on at once */

__global__ void gru4_forward_kernel(int T, int B, int X, int H, const float *x, const float *h0,
                                    const float *eps, const float *W_enc, const float *W_ih,
                                    const float *W_zh, float *out, float *S)
{
    /* x (T, B, X); h0 (B, H); eps (T, B, H); W_enc (H, 2H); W_ih (X, 3H); W_zh (H, 3H); out (T, B, H);
     * S (T, B, 6H) the saved rows [r u n zn z e] */
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    int j0, nj;
    gru_block_units(H, (int)gridDim.x, (int)blockIdx.x, &j0, &nj);
    long long HP = gru_row_words(H), XP = gru_row_words(X);
    DYNAMIC_SHARED(float, smem);
    /* (2 nj, HP): row m nj + c = W_enc[:, m H + j0 + c], m = mean, lv */
    float *sEnc = smem;
    /* (3 nj, HP): row p nj + c = W_zh[:, p H + j0 + c], p = r, u, n */
    float *sZh = sEnc + 2 * nj * HP;
    float *sIh = sZh + 3 * nj * HP;           /* (3 nj, XP): row p nj + c = W_ih[:, p H + j0 + c] */
    /* (B nj, 3): x_t W_ih of item e = i nj + c, from phase 1 to 2 */
    float *xa = sIh + 3 * nj * XP;
    int tid = threadIdx.x, s = tid % GRU4_LANES;
    long long BH = (long long)B * H, items = (long long)B * nj;
    /* once: each unit's columns, k fastest (a warp writes 32 consecutive words of a row) */
    for (long long e = tid; e < 2LL * nj * H; e += GRU4_THREADS) {
        long long r = e / H, k = e % H;
        sEnc[r * HP + k] = W_enc[k * 2 * H + (r / nj) * H + j0 + r % nj];
    }
    for (long long e = tid; e < 3LL * nj * H; e += GRU4_THREADS) {
        long long r = e / H, k = e % H;
        sZh[r * HP + k] = W_zh[k * 3 * H + (r / nj) * H + j0 + r % nj];
    }
    for (long long e = tid; e < 3LL * nj * X; e += GRU4_THREADS) {
        long long r = e / X, k = e % X;
        sIh[r * XP + k] = W_ih[k * 3 * H + (r / nj) * H + j0 + r % nj];
    }
    __syncthreads();

    for (int t = 0; t < T; t++) {
        const float *h = t ? out + (t - 1) * BH : h0; /* (B, H) */
        float *St = S + (long long)t * B * SW * H;   /* (B, 6H) */
        /* every lane of the block runs every pass (the shuffles need whole warps); a lane past the items adds
         * 0s */
        for (long long base = 0; base < items; base += ITEMS_PER_PASS) {
            long long e = base + tid / GRU4_LANES;
            bool mine = e < items;
            long long i = mine ? e / nj : 0;
            int c = mine ? (int)(e % nj) : 0;
            float mean = 0.0f, lv = 0.0f, a[3] = {0.0f, 0.0f, 0.0f};
            if (mine) {
                const float *hi = h + i * H, *xt = x + ((long long)t * B + i) * X;
                const float *wm = sEnc + c * HP, *wl = sEnc + (nj + c) * HP;
                for (int k = s; k < H; k += GRU4_LANES) {
                    mean += hi[k] * wm[k];
                    lv += hi[k] * wl[k];
                }
                for (int k = s; k < X; k += GRU4_LANES)
                    for (int p = 0; p < 3; p++) a[p] += xt[k] * sIh[(p * nj + c) * XP + k];
            }
            mean = gru_group_sum(mean), lv = gru_group_sum(lv);
            for (int p = 0; p < 3; p++) a[p] = gru_group_sum(a[p]);
            if (mine && s == 0) {
                int j = j0 + c;
                float *row = St + i * SW * H;
                row[4 * H + j] = gru_reparam(mean, lv, eps[t * BH + i * H + j], &row[5 * H + j]);
                for (int p = 0; p < 3; p++) xa[e * 3 + p] = a[p]; /* read back by this thread in phase 2 */
            }
        }
        grid.sync(); /* every unit's z is in St before any block reads a whole row of it */
        for (long long base = 0; base < items; base += ITEMS_PER_PASS) {
            long long e = base + tid / GRU4_LANES;
            bool mine = e < items;
            long long i = mine ? e / nj : 0;
            int c = mine ? (int)(e % nj) : 0;
            float b[3] = {0.0f, 0.0f, 0.0f}; /* z W_zh at r, u, n */
            if (mine) {
                const float *z = St + i * SW * H + 4 * H;
                for (int k = s; k < H; k += GRU4_LANES)
                    for (int p = 0; p < 3; p++) b[p] += z[k] * sZh[(p * nj + c) * HP + k];
            }
            for (int p = 0; p < 3; p++) b[p] = gru_group_sum(b[p]);
            if (mine && s == 0) {
                int j = j0 + c;
                gru_gates g;
                out[t * BH + i * H + j] = gru_gate_forward(xa[e * 3], xa[e * 3 + 1], xa[e * 3 + 2], b[0],
                                                           b[1], b[2], h[i * H + j], &g);
                float *row = St + i * SW * H;
                row[j] = g.r;
                row[H + j] = g.u;
                row[2 * H + j] = g.n;
                row[3 * H + j] = g.zn;
            }
        }
        grid.sync(); /* out[t] complete before the next step reads all of it */
    }
}

/* ---- launchers ----------------------------------------------------------------------------------------- */

static size_t gru4_smem(const gru_dims *d, long long G)
{
    size_t nj = (size_t)((d->H + G - 1) / G), HP = (size_t)gru_row_words((long long)d->H);
    return sizeof(float) * nj * (5 * HP + 3 * (size_t)gru_row_words((long long)d->X) + 3 * d->B);
}

/* v4's rule: the largest grid of at most ceil(H / GRU4_UNITS) blocks, up to GRU4_MAX_PER_SM per SM
 * (gru_plan_cooperative, kernels/gru_v3.cu) */
static gru_coop_plan gru4_plan_for(const gru_dims *d)
{
    long long most = ((long long)d->H + GRU4_UNITS - 1) / GRU4_UNITS;
    return gru_plan_cooperative(
        (const void *)gru4_forward_kernel, GRU4_THREADS, most, GRU4_MAX_PER_SM, gru4_smem, d,
        "a block's slice of W_enc, W_zh, W_ih and its x_t W_ih (about 4 ceil(H/G) (5H + 3X + "
        "3Bt) bytes) does not fit its shared memory for any grid the device holds at once");
}

extern "C" const char *gru4_unfit(const gru_dims *d, const gru_opts *o)
{
    if (o->checkpoint && o->checkpoint < d->T) return "cuda-v4 saves every step: --checkpoint 0 only";
    if (d->H > INT_MAX || d->X > INT_MAX || d->B > INT_MAX || d->T > INT_MAX) return "T, Bt, X or H past int";
    return gru4_plan_for(d).why;
}

void gru4_forward(const gru_dims *d, const float *x, const float *h0, const float *eps, const float *W_enc,
                  const float *W_ih, const float *W_zh, float *out, gru_fused_ws *ws)
{
    gru_coop_plan p = gru4_plan_for(d);
    CUDA_CHECK(LAUNCH_COOPERATIVE(gru4_forward_kernel, p.blocks, GRU4_THREADS, p.smem)(
        (int)d->T, (int)d->B, (int)d->X, (int)d->H, x, h0, eps, W_enc, W_ih, W_zh, out, ws->S));
}

/* ---- device memory: the arena, out and the gradients (gru_launch.h) around this version's launchers ---- */

extern "C" float *cuda_gru_forward_v4(const gru_dims *d, const gru_opts *o, const float *x, const float *h0,
                                      const float *eps, const float *W_enc, const float *W_ih,
                                      const float *W_zh, void **arena_out, gru_fused_ws *ws)
{
    *arena_out = gru_dev_arena(d, o, 1, ws);
    float *out = gru_dev_out(d);
    gru4_forward(d, x, h0, eps, W_enc, W_ih, W_zh, out, ws);
    return out;
}

extern "C" void cuda_gru_backward_v4(const gru_dims *d, const gru_opts *o, const float *x, const float *h0,
                                     const float *eps, const float *W_enc, const float *W_ih,
                                     const float *W_zh, const float *out, const float *dout, void *arena_mem,
                                     gru_fused_ws *ws, gru_grads *g)
{
    (void)o;
    gru_dev_grads(d, g);
    gru2_backward_steps(d, x, h0, eps, W_enc, W_ih, W_zh, out, dout, ws, g);
    dev_free(arena_mem);
}
