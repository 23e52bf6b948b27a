/* gru_v3.cu - lesson 4, cuda-v3: the forward step loop as one persistent kernel (a cooperative launch).
 * Changed from v2: one grid stays resident for all T steps, each block keeping its hidden units' weight
 * columns in shared memory, two grid-wide synchronisations a step; backward is v2's graph unchanged. */
#include <cooperative_groups.h>

#include "gru_cell_math.h"
#include "gru_launch.h"

#include "runtime/cuda_check.h"
#include "runtime/cuda_fit.h"
#include "runtime/cuda_track.h"
#include "runtime/launch.h"

/* v2 replays v1's 4 launches per step as a graph, but each step still runs as dependent GEMMs and kernels,
 * every one a grid's launch latency on the serial path. Here one grid stays resident for all T steps: block g
 * owns the hidden units j in [g H / G, (g+1) H / G) and keeps its columns of W_enc (mean and lv), W_zh and
 * W_ih (r, u, n) in shared memory, loaded once. A step needs all of h for pd = h W_enc and all of z for z
 * W_zh, so it has two grid-wide synchronisations (cooperative_groups::this_grid().sync(), valid because the
 * launch is cooperative: every block resident at once, G <= blocks per SM x SMs, checked by gru3_plan):
 *   phase 1  z[:, J], e[:, J] from h W_enc[:, J] and eps   (saved rows' z, e)      -> grid.sync
 *   phase 2  x_t W_ih[:, J], z W_zh[:, J], the gates -> h_new[:, J] = out[t]       -> grid.sync
 * The saved rows St (B, 6H) = [r u n zn z e] are v1's, in the same arena, so backward is v2's graph
 * unchanged. The arithmetic is gru_cell_math.h's (gru_reparam, gru_gate_forward), the functions the CPU
 * calls. Its target and what the time model and the GPUs say of it: docs/lesson-4.md, section 4. */

static_assert(GRU3_THREADS % 32 == 0, "blocks are whole warps");

#define SW GRU_SAVED_PER_ROW /* floats saved per (row, unit) and step */

/* v2's backward (kernels/gru_v2.cu) */
void gru2_backward_steps(const gru_dims *d, const float *x, const float *h0, const float *eps,
                         const float *W_enc, const float *W_ih, const float *W_zh, const float *out,
                         const float *dout, gru_fused_ws *ws, gru_grads *g);

/* Block g of G: its hidden units [j0, j0 + nj) */
__host__ __device__ static inline void gru3_slice(int H, int G, int g, int *j0, int *nj)
{
    *j0 = (int)((long long)g * H / G);
    *nj = (int)((long long)(g + 1) * H / G) - *j0;
}

__global__ void gru3_forward_kernel(int T, int B, int X, int H, const float *x, const float *h0,
                                    const float *eps, const float *W_enc, const float *W_ih,
                                    const float *W_zh, float *out, float *S)
{
    /* x (T, B, X); h0 (B, H); eps (T, B, H); W_enc (H, 2H); W_ih (X, 3H); W_zh (H, 3H); out (T, B, H);
     * S (T, B, 6H) the saved rows [r u n zn z e] */
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    int j0, nj;
    gru3_slice(H, (int)gridDim.x, (int)blockIdx.x, &j0, &nj);
    DYNAMIC_SHARED(float, smem);
    float *sEnc = smem;                       /* (H, 2 nj): W_enc[k][j0 + c], then W_enc[k][H + j0 + c] */
    float *sZh = sEnc + (size_t)H * 2 * nj;   /* (H, 3 nj): W_zh[k][p H + j0 + c], p = r, u, n */
    float *sIh = sZh + (size_t)H * 3 * nj;    /* (X, 3 nj): W_ih[k][p H + j0 + c] */
    int tid = threadIdx.x;
    long long BH = (long long)B * H;
    for (long long e = tid; e < (long long)H * 2 * nj; e += GRU3_THREADS) {
        long long k = e / (2 * nj);
        int c = (int)(e % (2 * nj));
        sEnc[e] = W_enc[k * 2 * H + (c < nj ? j0 + c : H + j0 + c - nj)];
    }
    for (long long e = tid; e < (long long)H * 3 * nj; e += GRU3_THREADS) {
        long long k = e / (3 * nj);
        int p = (int)(e % (3 * nj)) / nj, c = (int)(e % nj);
        sZh[e] = W_zh[k * 3 * H + p * H + j0 + c];
    }
    for (long long e = tid; e < (long long)X * 3 * nj; e += GRU3_THREADS) {
        long long k = e / (3 * nj);
        int p = (int)(e % (3 * nj)) / nj, c = (int)(e % nj);
        sIh[e] = W_ih[k * 3 * H + p * H + j0 + c];
    }
    __syncthreads();

    for (int t = 0; t < T; t++) {
        const float *h = t ? out + (t - 1) * BH : h0; /* (B, H) */
        float *St = S + (long long)t * B * SW * H;   /* (B, 6H) */
        for (long long e = tid; e < (long long)B * nj; e += GRU3_THREADS) {
            long long i = e / nj;
            int c = (int)(e % nj), j = j0 + c;
            float mean = 0.0f, lv = 0.0f;
            for (int k = 0; k < H; k++) {
                float hk = h[i * H + k];
                mean += hk * sEnc[k * 2 * nj + c];
                lv += hk * sEnc[k * 2 * nj + nj + c];
            }
            float *row = St + i * SW * H;
            row[4 * H + j] = gru_reparam(mean, lv, eps[t * BH + i * H + j], &row[5 * H + j]);
        }
        grid.sync(); /* every unit's z is in St before any block reads a whole row of it */
        for (long long e = tid; e < (long long)B * nj; e += GRU3_THREADS) {
            long long i = e / nj;
            int c = (int)(e % nj), j = j0 + c;
            const float *xt = x + ((long long)t * B + i) * X, *z = St + i * SW * H + 4 * H;
            float a[3] = {0.0f, 0.0f, 0.0f}, b[3] = {0.0f, 0.0f, 0.0f}; /* x_t W_ih and z W_zh at r, u, n */
            for (int k = 0; k < X; k++)
                for (int p = 0; p < 3; p++) a[p] += xt[k] * sIh[k * 3 * nj + p * nj + c];
            for (int k = 0; k < H; k++)
                for (int p = 0; p < 3; p++) b[p] += z[k] * sZh[k * 3 * nj + p * nj + c];
            gru_gates s;
            out[t * BH + i * H + j] = gru_gate_forward(a[0], a[1], a[2], b[0], b[1], b[2], h[i * H + j], &s);
            float *row = St + i * SW * H;
            row[j] = s.r;
            row[H + j] = s.u;
            row[2 * H + j] = s.n;
            row[3 * H + j] = s.zn;
        }
        grid.sync(); /* out[t] complete before the next step reads all of it */
    }
}

/* ---- launchers ----------------------------------------------------------------------------------------- */

static size_t gru3_smem(const gru_dims *d, long long G)
{
    size_t nj = (size_t)((d->H + G - 1) / G);
    return sizeof(float) * nj * (5 * d->H + 3 * d->X);
}

gru_coop_plan gru_plan_cooperative(const void *kernel, int threads, long long most, int max_per_sm,
                                   size_t (*smem_of)(const gru_dims *d, long long G), const gru_dims *d,
                                   const char *too_big)
{
    static char why[480];
    gru_coop_plan p = {0, 0, NULL};
    const cuda_device_info *dev = cuda_device_info_get();
    int coop = 0;
    if (!dev) {
        p.why = "no CUDA device to plan the cooperative grid on";
        return p;
    }
    CUDA_CHECK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, 0));
    if (!coop) {
        p.why = "the device cannot launch cooperative kernels (cudaDevAttrCooperativeLaunch is 0)";
        return p;
    }
    /* the most blocks per SM first: each takes a smaller slice of the weights, so more of them fit */
    const char *last = NULL;
    for (int per = max_per_sm; per >= 1; per--) {
        long long G = (long long)dev->sms * per < most ? (long long)dev->sms * per : most;
        cuda_launch_need need = {kernel, threads, smem_of(d, G), 80, G};
        if (!(last = cuda_fit(&need, 1))) {
            p.blocks = (int)G, p.smem = need.dyn_smem;
            /* the launch's opt-in, said here though cuda_fit's occupancy query has already set it */
            if (p.smem > (48u << 10))
                CUDA_CHECK(
                    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)p.smem));
            return p;
        }
    }
    snprintf(why, sizeof why, "%s (with one block per SM it %s)", too_big, last);
    p.why = why;
    return p;
}

/* v3's grid: at most H blocks (one unit or more each), up to GRU3_MAX_PER_SM per SM */
static gru_coop_plan gru3_plan_for(const gru_dims *d)
{
    return gru_plan_cooperative(
        (const void *)gru3_forward_kernel, GRU3_THREADS, (long long)d->H, GRU3_MAX_PER_SM, gru3_smem, d,
        "a block's slice of W_enc, W_zh and W_ih (4 ceil(H/G) (5H + 3X) bytes) does not fit "
        "its shared memory for any grid the device holds at once");
}

extern "C" const char *gru3_unfit(const gru_dims *d, const gru_opts *o)
{
    if (o->checkpoint && o->checkpoint < d->T) return "cuda-v3 saves every step: --checkpoint 0 only";
    if (d->H > INT_MAX || d->X > INT_MAX || d->B > INT_MAX || d->T > INT_MAX) return "T, Bt, X or H past int";
    return gru3_plan_for(d).why;
}

void gru3_forward(const gru_dims *d, const float *x, const float *h0, const float *eps, const float *W_enc,
                  const float *W_ih, const float *W_zh, float *out, gru_fused_ws *ws)
{
    gru_coop_plan p = gru3_plan_for(d);
    CUDA_CHECK(LAUNCH_COOPERATIVE(gru3_forward_kernel, p.blocks, GRU3_THREADS, p.smem)(
        (int)d->T, (int)d->B, (int)d->X, (int)d->H, x, h0, eps, W_enc, W_ih, W_zh, out, ws->S));
}

void gru3_backward_steps(const gru_dims *d, const float *x, const float *h0, const float *eps,
                         const float *W_enc, const float *W_ih, const float *W_zh, const float *out,
                         const float *dout, gru_fused_ws *ws, gru_grads *g)
{
    gru2_backward_steps(d, x, h0, eps, W_enc, W_ih, W_zh, out, dout, ws, g);
}

/* ---- device memory: the arena, out and the gradients (gru_launch.h) around this version's launchers ---- */

extern "C" float *cuda_gru_forward_v3(const gru_dims *d, const gru_opts *o, const float *x, const float *h0,
                                      const float *eps, const float *W_enc, const float *W_ih,
                                      const float *W_zh, void **arena_out, gru_fused_ws *ws)
{
    *arena_out = gru_dev_arena(d, o, 1, ws);
    float *out = gru_dev_out(d);
    gru3_forward(d, x, h0, eps, W_enc, W_ih, W_zh, out, ws);
    return out;
}

extern "C" void cuda_gru_backward_v3(const gru_dims *d, const gru_opts *o, const float *x, const float *h0,
                                     const float *eps, const float *W_enc, const float *W_ih,
                                     const float *W_zh, const float *out, const float *dout, void *arena_mem,
                                     gru_fused_ws *ws, gru_grads *g)
{
    (void)o;
    gru_dev_grads(d, g);
    gru3_backward_steps(d, x, h0, eps, W_enc, W_ih, W_zh, out, dout, ws, g);
    dev_free(arena_mem);
}
