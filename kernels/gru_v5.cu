/* gru_v5.cu - lesson 4, cuda-v5: v4's forward, and backward's step loop as one persistent cooperative kernel.
 * Changed from v4: backward walks t = T-1 .. 0 in one grid (three phases a step, two grid.syncs), each block
 * keeping its units' rows of W_zh and W_enc in shared memory and its columns of dW_zh as running sums. */
#include <cooperative_groups.h>

#include "gru_cell_math.h"
#include "gru_lanes.h"
#include "gru_launch.h"

#include "runtime/cublas_rowmajor.h"
#include "runtime/cuda_check.h"
#include "runtime/cuda_track.h"
#include "runtime/launch.h"

/* v4's forward (kernels/gru_v4.cu): this version's forward */
void gru4_forward(const gru_dims *d, const float *x, const float *h0, const float *eps, const float *W_enc,
                  const float *W_ih, const float *W_zh, float *out, gru_fused_ws *ws);

/* Backward through time is a chain like forward: step t needs the carry dh of step t + 1. v2 runs a step as a
 * gate kernel, two GEMMs and a reparameterisation kernel plus a GEMM for dW_zh, each a launch on the chain.
 * Here one grid walks t = T-1 .. 0. Block g owns the hidden units J = [j0, j0 + nj) (gru_block_units) and
 * keeps W_zh's and W_enc's rows J in shared memory (a row of W_zh is what dz[:, j] needs: dz = [da_r da_u
 * dzn] W_zh^T), and its columns of dW_zh as sums that grow over the steps:
 *   phase A  the gates' backward for J (dh[:, J] is the block's own carry); dW_zh[:, {r,u,n} J] += z^T da  ->
 *   grid.sync
 *   phase B  dz[:, J] = da W_zh[J, :]^T over all 3H of every row (8 lanes a (row, unit)); dlv = dz e / 2   ->
 *   grid.sync
 *   phase C  dh[:, J] += [dz dlv] W_enc[J, :]^T over all 2H (the carry into step t - 1)
 * A step reads the whole rows that other blocks wrote in the phase before, so it has v4's two grid.syncs;
 * dh[:, J] is read and written by block g alone. The saved rows end as v1's ([da_r da_u dzn da_n dz dlv] per
 * step), so dW_ih, dx and dW_enc are v1's products over all T steps after the kernel; the three that sum T Bt
 * rows into a few output tiles have their rows split by hand (split_k_atb below), their partials in dx before
 * dx is written. The arithmetic is gru_cell_math.h's
 * (gru_gate_backward, gru_reparam_backward). --checkpoint is refused, as for v3 and v4.
 * Its target and the model's figures: docs/lesson-4.md, section 4. */

#define SW GRU_SAVED_PER_ROW                        /* floats saved per (row, unit) and step */
#define ITEMS_PER_PASS (GRU4_THREADS / GRU4_LANES)  /* (i, j) a block works on at once */

/* sum over k < n (k = s, s + GRU4_LANES, ...) of a[k] w[k], summed over the lane group; every lane of the
 * warp calls */
__device__ static inline float gru5_dot(bool mine, const float *a, const float *w, int n, int s)
{
    float v = 0.0f;
    if (mine)
        for (int k = s; k < n; k += GRU4_LANES) v += a[k] * w[k];
    return gru_group_sum(v);
}

__global__ void gru5_backward_kernel(int T, int B, int H, const float *h0, const float *W_enc,
                                     const float *W_zh, const float *out, const float *dout, float *dh,
                                     float *S, float *dW_zh)
{
    /* h0 (B, H); W_enc (H, 2H); W_zh (H, 3H); out (T, B, H); dout (T, B, H); dh (B, H) the carry, dh0 at the
     * end; S (T, B, 6H) the saved rows [r u n zn z e], their gradients [da_r da_u dzn da_n dz dlv] at the
     * end; dW_zh (H, 3H) */
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    int j0, nj;
    gru_block_units(H, (int)gridDim.x, (int)blockIdx.x, &j0, &nj);
    long long ZP = gru_row_words(3LL * H), EP = gru_row_words(2LL * H);
    DYNAMIC_SHARED(float, smem);
    float *sZh = smem;              /* (nj, ZP): row c = W_zh[j0 + c, :] */
    float *sEnc = sZh + nj * ZP;    /* (nj, EP): row c = W_enc[j0 + c, :] */
    /* (3 nj, H): row p nj + c = dW_zh[:, p H + j0 + c], summed over the steps */
    float *acc = sEnc + nj * EP;
    float *sda = acc + 3 * nj * H;  /* (B nj, 3): this step's da_r, da_u, dzn of item e = i nj + c */
    int tid = threadIdx.x, s = tid % GRU4_LANES, sums = 3 * nj * H; /* shared-memory indices fit an int */
    long long BH = (long long)B * H;
    int items = B * nj; /* < B H < 2^31: cuda_gru_unfit */
    for (long long e = tid; e < nj * 3LL * H; e += GRU4_THREADS)
        sZh[e / (3 * H) * ZP + e % (3 * H)] = W_zh[(j0 + e / (3 * H)) * 3LL * H + e % (3 * H)];
    for (long long e = tid; e < nj * 2LL * H; e += GRU4_THREADS)
        sEnc[e / (2 * H) * EP + e % (2 * H)] = W_enc[(j0 + e / (2 * H)) * 2LL * H + e % (2 * H)];
    for (int q = tid; q < sums; q += GRU4_THREADS) acc[q] = 0.0f;
    for (int e = tid; e < items; e += GRU4_THREADS) dh[(long long)(e / nj) * H + j0 + e % nj] = 0.0f;
    __syncthreads();

    for (int t = T - 1; t >= 0; t--) {
        const float *h = t ? out + (t - 1) * BH : h0; /* (B, H): the h this step read */
        float *St = S + (long long)t * B * SW * H;   /* (B, 6H) */
        for (int e = tid; e < items; e += GRU4_THREADS) {
            long long i = e / nj;
            int j = j0 + e % nj;
            float *row = St + i * SW * H;
            gru_gates g = {row[j], row[H + j], row[2 * H + j], row[3 * H + j]};
            gru_gate_grads o;
            dh[i * H + j] = gru_gate_backward(dh[i * H + j] + dout[t * BH + i * H + j], h[i * H + j], g, &o);
            row[j] = sda[e * 3] = o.da_r;
            row[H + j] = sda[e * 3 + 1] = o.da_u;
            row[2 * H + j] = sda[e * 3 + 2] = o.dzn;
            row[3 * H + j] = o.da_n;
        }
        __syncthreads(); /* the block's da are in sda before its dW_zh sums read them */
        /* thread k: dW_zh[k, {r,u,n} J] += sum over rows i of z[i, k] da[i, :], 8 sums at a time in
         * registers, each z[i, k] loaded once for them */
        for (int k = tid; k < H; k += GRU4_THREADS)
            for (int r0 = 0; r0 < 3 * nj; r0 += 8) {
                float a[8];
                /* sum r = p nj + c reads sda[(i nj + c) 3 + p]: its offset in row i's 3 nj values */
                int at[8];
                UNROLL for (int u = 0; u < 8; u++) {
                    int r = r0 + u < 3 * nj ? r0 + u : 0;
                    a[u] = r0 + u < 3 * nj ? acc[r * H + k] : 0.0f;
                    at[u] = r % nj * 3 + r / nj;
                }
                for (int i = 0; i < B; i++) {
                    float zk = St[(long long)i * SW * H + 4 * H + k];
                    const float *di = sda + i * nj * 3;
                    UNROLL for (int u = 0; u < 8; u++) a[u] += zk * di[at[u]];
                }
                UNROLL for (int u = 0; u < 8; u++)
                    if (r0 + u < 3 * nj) acc[(r0 + u) * H + k] = a[u];
            }
        /* every unit's da is in St, and every block has read z, before phase B writes dz over it */
        grid.sync();
        for (int base = 0; base < items; base += ITEMS_PER_PASS) {
            int e = base + tid / GRU4_LANES;
            bool mine = e < items;
            long long i = mine ? e / nj : 0;
            int c = mine ? e % nj : 0;
            float dz = gru5_dot(mine, St + i * SW * H, sZh + c * ZP, 3 * H, s);
            if (mine && s == 0) {
                float *row = St + i * SW * H;
                row[5 * H + j0 + c] = gru_reparam_backward(dz, row[5 * H + j0 + c]);
                row[4 * H + j0 + c] = dz;
            }
        }
        grid.sync(); /* every unit's dz and dlv are in St before phase C reads whole rows of them */
        for (int base = 0; base < items; base += ITEMS_PER_PASS) {
            int e = base + tid / GRU4_LANES;
            bool mine = e < items;
            long long i = mine ? e / nj : 0;
            int c = mine ? e % nj : 0;
            float v = gru5_dot(mine, St + i * SW * H + 4 * H, sEnc + c * EP, 2 * H, s);
            if (mine && s == 0) dh[i * H + j0 + c] += v;
        }
        __syncthreads(); /* the carry dh[:, J] complete before the next step's gates read it */
    }
    for (int q = tid; q < sums; q += GRU4_THREADS) {
        int r = q / H, k = q % H;
        dW_zh[(long long)k * 3 * H + (r / nj) * H + j0 + r % nj] = acc[q];
    }
}

/* ---- launchers ----------------------------------------------------------------------------------------- */

static size_t gru5_smem(const gru_dims *d, long long G)
{
    long long H = (long long)d->H;
    size_t nj = (size_t)((d->H + G - 1) / G);
    return sizeof(float) * nj *
           (size_t)(gru_row_words(3 * H) + gru_row_words(2 * H) + 3 * H + 3 * (long long)d->B);
}

/* v4's rule: the largest grid of at most ceil(H / GRU4_UNITS) blocks, up to GRU4_MAX_PER_SM per SM
 * (gru_plan_cooperative, kernels/gru_v3.cu) */
static gru_coop_plan gru5_plan_for(const gru_dims *d)
{
    long long most = ((long long)d->H + GRU4_UNITS - 1) / GRU4_UNITS;
    return gru_plan_cooperative(
        (const void *)gru5_backward_kernel, GRU4_THREADS, most, GRU4_MAX_PER_SM, gru5_smem, d,
        "a block's rows of W_zh and W_enc, its dW_zh sums and its da (about 4 ceil(H/G) (8H + "
        "3Bt) bytes) do not fit its shared memory for any grid the device holds at once");
}

extern "C" const char *gru5_unfit(const gru_dims *d, const gru_opts *o)
{
    const char *why = gru4_unfit(d, o);
    if (why) return why;
    if (3 * d->H > INT_MAX) return "3H past int";
    return gru5_plan_for(d).why;
}

/* --- the weight gradients' long sums, split by hand
 * ----------------------------------------------------------- dW_ih = X^T [da_r da_u | da_n] and dW_enc =
 * Hprev^T [dz dlv] sum over K = T Bt rows into a few output tiles: at lesson 4's medium size 2 to 8 tiles of
 * 128 x 128, so a GEMM that gives each tile its whole K works on 2 to 8 SMs (lesson 1's dW, a strided batch
 * of 8 such tiles, is far from the GPU's rate: docs/lesson-4.md section 4). Split by hand instead: one
 * strided-batched GEMM writes a partial (m, n) per slice of rows, one more GEMM the rows past S equal slices,
 * and gru5_split_sum_kernel adds them in slice order (deterministic, no atomics) into the gradient. The
 * partials cost no memory: they live in dx (T Bt X floats), which the last two GEMMs write, so until then its
 * bytes are free. That bounds the slices: their partials must fit it. */
#define SPLIT_BLOCKS 128       /* (tile, slice) pairs aimed at: about one wave of a large GPU's SMs */
#define SPLIT_MIN_ROWS 256     /* rows a slice sums at least: a tile's loads stay pipelined along its K */
#define SPLIT_SUM_THREADS 256

extern "C" size_t gru5_split_partials(size_t slices, size_t rows) { return slices + (rows % slices != 0); }

extern "C" size_t gru5_split_slices(size_t m, size_t n, size_t rows, size_t cap)
{
    size_t tiles = ((m + 127) / 128) * ((n + 127) / 128), s = SPLIT_BLOCKS / tiles;
    if (s > rows / SPLIT_MIN_ROWS) s = rows / SPLIT_MIN_ROWS;
    while (s > 1 && gru5_split_partials(s, rows) * m * n > cap) s--;
    return s > 1 ? s : 1;
}

/* acc + the slices' values at one element, slice 0 first: part points at slice 0's, stride floats apart */
HD float gru5_split_sum(const float *part, long long stride, int slices, float acc)
{
    for (int q = 0; q < slices; q++) acc += part[q * stride];
    return acc;
}

/* One pass over the partials, just written by the GEMM. */
__global__ void gru5_split_sum_kernel(int m, int n, int slices, const float *part, float beta, float *C,
                                      int ldc)
{
    /* part (slices, m, n), C (m, n; ldc) */
    long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x, mn = (long long)m * n;
    if (e >= mn) return;
    long long i = e / n, j = e % n;
    float acc = beta == 0.0f ? 0.0f : beta * C[i * ldc + j];
    C[i * ldc + j] = gru5_split_sum(part + e, mn, slices, acc);
}

/* C (m, n; ldc) = beta C + A^T B, A (rows, m; lda), B (rows, n; ldb), the rows cut into gru5_split_slices'
 * slices; part: cap floats of free device memory for the partials (slices, m, n) */
static void split_k_atb(int m, int n, size_t rows, const float *A, int lda, const float *B, int ldb,
                        float beta, float *C, int ldc, float *part, size_t cap)
{
    cublasHandle_t h = (cublasHandle_t)cublas_handle();
    size_t s = gru5_split_slices((size_t)m, (size_t)n, rows, cap);
    if (s == 1) {
        ROWMAJOR_SGEMM_STRIDED_BATCHED(h, 1, 0, m, n, (int)rows, 1.0f, A, lda, 0LL, B, ldb, 0LL, beta, C, ldc,
                                       0LL, 1);
        return;
    }
    long long L = (long long)(rows / s), left = (long long)rows - (long long)s * L, mn = (long long)m * n;
    ROWMAJOR_SGEMM_STRIDED_BATCHED(h, 1, 0, m, n, (int)L, 1.0f, A, lda, L * lda, B, ldb, L * ldb, 0.0f, part,
                                   n, mn, (int)s);
    if (left)
        ROWMAJOR_SGEMM_STRIDED_BATCHED(h, 1, 0, m, n, (int)left, 1.0f, A + s * L * lda, lda, 0LL,
                                       B + s * L * ldb, ldb, 0LL, 0.0f, part + s * mn, n, 0LL, 1);
    LAUNCH(gru5_split_sum_kernel, (unsigned)((mn + SPLIT_SUM_THREADS - 1) / SPLIT_SUM_THREADS),
           SPLIT_SUM_THREADS, 0)
    (m, n, (int)s + (left != 0), part, beta, C, ldc);
    CUDA_CHECK_LAST();
}

void gru5_backward_steps(const gru_dims *d, const float *x, const float *h0, const float *eps,
                         const float *W_enc, const float *W_ih, const float *W_zh, const float *out,
                         const float *dout, gru_fused_ws *ws, gru_grads *g)
{
    (void)eps;
    gru_coop_plan p = gru5_plan_for(d);
    CUDA_CHECK(LAUNCH_COOPERATIVE(gru5_backward_kernel, p.blocks, GRU4_THREADS, p.smem)(
        (int)d->T, (int)d->B, (int)d->H, h0, W_enc, W_zh, out, dout, g->dh0, ws->S, g->dW_zh));
    /* the saved rows now hold [da_r da_u dzn da_n dz dlv] per step and row (S (T Bt, 6H)): v1's GEMMs over
     * them, the three long sums split (above) with their partials in dx (T Bt, X), which the last two
     * write */
    int B = (int)d->B, X = (int)d->X, H = (int)d->H, ld = SW * H;
    size_t R = d->T * d->B, cap = R * d->X;
    split_k_atb(X, 2 * H, R, x, X, ws->S, ld, 0.0f, g->dW_ih, 3 * H, g->dx, cap);          /* dW_ih[:, r u] */
    /* dW_ih[:, n] */
    split_k_atb(X, H, R, x, X, ws->S + 3 * H, ld, 0.0f, g->dW_ih + 2 * H, 3 * H, g->dx, cap);
    cublasHandle_t h = (cublasHandle_t)cublas_handle();
    /* dW_enc (H, 2H) = h0^T [dz dlv]_0 + out[0 .. T-2]^T [dz dlv]_1..T-1 */
    ROWMAJOR_SGEMM_STRIDED_BATCHED(h, 1, 0, H, 2 * H, B, 1.0f, h0, H, 0LL, ws->S + 4 * H, ld, 0LL, 0.0f,
                                   g->dW_enc, 2 * H, 0LL, 1);
    if (R > d->B)
        split_k_atb(H, 2 * H, R - d->B, out, H, ws->S + (size_t)B * ld + 4 * H, ld, 1.0f, g->dW_enc, 2 * H,
                    g->dx, cap);
    /* dx (T Bt, X) = [da_r da_u] W_ih[:, r u]^T + da_n W_ih[:, n]^T: the partials are dead */
    ROWMAJOR_SGEMM_STRIDED_BATCHED(h, 0, 1, (int)R, X, 2 * H, 1.0f, ws->S, ld, 0LL, W_ih, 3 * H, 0LL, 0.0f,
                                   g->dx, X, 0LL, 1);
    ROWMAJOR_SGEMM_STRIDED_BATCHED(h, 0, 1, (int)R, X, H, 1.0f, ws->S + 3 * H, ld, 0LL, W_ih + 2 * H, 3 * H,
                                   0LL, 1.0f, g->dx, X, 0LL, 1);
}

/* ---- device memory: the arena, out and the gradients (gru_launch.h) around this version's launchers ---- */

extern "C" float *cuda_gru_forward_v5(const gru_dims *d, const gru_opts *o, const float *x, const float *h0,
                                      const float *eps, const float *W_enc, const float *W_ih,
                                      const float *W_zh, void **arena_out, gru_fused_ws *ws)
{
    *arena_out = gru_dev_arena(d, o, 1, ws);
    float *out = gru_dev_out(d);
    gru4_forward(d, x, h0, eps, W_enc, W_ih, W_zh, out, ws);
    return out;
}

extern "C" void cuda_gru_backward_v5(const gru_dims *d, const gru_opts *o, const float *x, const float *h0,
                                     const float *eps, const float *W_enc, const float *W_ih,
                                     const float *W_zh, const float *out, const float *dout, void *arena_mem,
                                     gru_fused_ws *ws, gru_grads *g)
{
    (void)o;
    gru_dev_grads(d, g);
    gru5_backward_steps(d, x, h0, eps, W_enc, W_ih, W_zh, out, dout, ws, g);
    dev_free(arena_mem);
}
