/* maxsim_v1.cu - lesson 3, cuda-v1: the fused forward at its simplest, and the backward every version uses.
 * One thread per (i, m) loops over j, n and k, keeping a running (max, argmax) per j and summing the maxima:
 * the [I, J, M, N] scores never exist. Backward: da by a gather; db by atomicAdd, or (--deterministic) by a
 * stable counting sort of the rows into buckets by argmax, each (m, n) summed in row order (reproducible).
 * Rows: r = i*J + j of a [I*J, K], c = m*N + n of b [M*N, K]; arg is [I*J, M]. */
#include "maxsim.h"

#include "runtime/cuda_check.h"
#include "runtime/cuda_track.h"
#include "runtime/launch.h"

#include <math.h>

static_assert(MS_SCAN_THREADS % 32 == 0, "the scan adds whole warps' totals");

static int blocks_for(long long n, int threads) { return (int)((n + threads - 1) / threads); }

__global__ void ms_forward_v1(int I, int J, int M, int N, int K, const float *a, const float *b, float *out,
                              int *arg)
{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (long long)I * M) return;
    int i = (int)(t / M), m = (int)(t % M);
    float sum = 0.0f;
    for (int j = 0; j < J; j++) {
        const float *ar = a + ((long long)i * J + j) * K;          /* a[i, j, :], (K,) */
        const float *bm = b + (long long)m * N * K;                /* b[m], (N, K) */
        float best = ms_dot(ar, bm, K);
        int bn = 0;
        for (int n = 1; n < N; n++) {
            float s = ms_dot(ar, bm + (long long)n * K, K);
            if (ms_better_f(s, n, best, bn)) best = s, bn = n;
        }
        sum += best; /* j ascending, as the CPU sums */
        if (arg) arg[((long long)i * J + j) * M + m] = bn;
    }
    if (out) out[t] = sum;
}

__global__ void ms_da_kernel(int J, int M, int N, int K, const float *b, const float *dout, const int *arg,
                             float *da)
{
    long long r = blockIdx.x;
    const float *w = dout + (r / J) * M; /* dout[i, :], (M,) */
    for (int k = threadIdx.x; k < K; k += blockDim.x) {
        float s = 0.0f;                                /* the boundary ones */
        for (int m = 0; m < M; m++) {
            s += w[m] * b[((long long)m * N + arg[r * M + m]) * K + k];
        }
        da[r * K + k] = s;
    }
}

__global__ void ms_db_atomic_kernel(int J, int M, int N, int K, const float *a, const float *dout,
                                    const int *arg, float *db)
{
    long long r = blockIdx.x;
    const float *w = dout + (r / J) * M;
    for (int k = threadIdx.x; k < K; k += blockDim.x) {
        for (int m = 0; m < M; m++) {
            atomicAdd(&db[((long long)m * N + arg[r * M + m]) * K + k], w[m] * a[r * K + k]);
        }
    }
}

__global__ void ms_bucket_count_kernel(long long RM, int M, int N, const int *arg, int *start)
{
    /* element (r, m) of arg [R, M]: coalesced */
    long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= RM) return;
    int m = (int)(e % M);
    atomicAdd(&start[(long long)m * (N + 1) + arg[e] + 1], 1); /* integer counts: the same in any order */
}

__global__ void ms_bucket_scan_kernel(int N, int *start)
{
    __shared__ int warp_total[MS_SCAN_THREADS / 32];
    int *c = start + (long long)blockIdx.x * (N + 1) + 1; /* counts of buckets 0 .. N-1, (N,) */
    int lane = threadIdx.x % 32, w = threadIdx.x / 32, carry = 0;
    for (int n0 = 0; n0 < N; n0 += MS_SCAN_THREADS) {
        int n = n0 + threadIdx.x, x = n < N ? c[n] : 0, incl = x;
        for (int off = 1; off < 32; off *= 2) { /* inclusive scan inside the warp */
            int y = __shfl_up_sync(0xffffffffu, incl, off);
            if (lane >= off) incl += y;
        }
        if (lane == 31) warp_total[w] = incl;
        __syncthreads(); /* every warp's total is written before any thread adds them up */
        int before = 0, total = 0;
        for (int k = 0; k < MS_SCAN_THREADS / 32; k++)
            before += k < w ? warp_total[k] : 0, total += warp_total[k];
        if (n < N) c[n] = carry + before + incl - x; /* exclusive: where bucket n begins */
        carry += total;
        __syncthreads(); /* every thread has read warp_total before the next chunk rewrites it */
    }
}

/* Lanes before this one (and all lanes) of the warp whose bucket n equals this lane's: 32 shuffles. */
__device__ static void same_bucket(int n, int lane, int *before, int *same)
{
    *before = 0, *same = 0;
    for (int s = 0; s < 32; s++) {
        int ns = __shfl_sync(0xffffffffu, n, s);
        *same += ns == n;
        *before += ns == n && s < lane;
    }
}

__global__ void ms_bucket_scatter_kernel(int R, int M, int N, const int *arg, int *start, int *list)
{
    int m = blockIdx.x * MS_SCATTER_WARPS + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (m >= M) return; /* whole warps: the block is MS_SCATTER_WARPS * 32 threads */
    int *cur = start + (long long)m * (N + 1) + 1; /* (N,): bucket n's next free place */
    int *li = list + (long long)m * R;             /* (R,) */
    for (long long r0 = 0; r0 < R; r0 += 32) { /* 64 bits: R = I J may be 2^31 - 2, where r0 + 32 wraps */
        long long r = r0 + lane;
        int n = r < R ? arg[r * M + m] : -1, before, same;
        same_bucket(n, lane, &before, &same);
        int base = n >= 0 ? cur[n] : 0;
        __syncwarp(); /* every lane has read its cursor before the last lane of its bucket moves it */
        if (n >= 0) {
            li[base + before] = (int)r; /* r ascending within the bucket: stable */
            if (before == same - 1) cur[n] = base + same;
        }
        __syncwarp(); /* the cursors have moved before the next 32 rows read them */
    }
}

__global__ void ms_db_bucket_kernel(int J, int M, int N, int K, int R, const float *a, const float *dout,
                                    const int *start, const int *list, float *db)
{
    int m = blockIdx.x / N, n = blockIdx.x % N;
    const int *st = start + (long long)m * (N + 1), *li = list + (long long)m * R;
    for (int k = threadIdx.x; k < K; k += blockDim.x) {
        float s = 0.0f;
        for (int p = st[n]; p < st[n + 1]; p++)
            s += dout[(long long)(li[p] / J) * M + m] * a[(long long)li[p] * K + k];
        db[(long long)blockIdx.x * K + k] = s;
    }
}

/* ---- launchers, device memory ------------------------------------------------------------------------ */

/* out may be NULL (recompute), arg may be NULL (--recompute forward) */
static void launch_forward(const ms_dims *d, const float *a, const float *b, float *out, int *arg)
{
    int I = (int)d->I, J = (int)d->J, M = (int)d->M, N = (int)d->N, K = (int)d->K;
    LAUNCH(ms_forward_v1, blocks_for((long long)I * M, MS_SIMPLE_THREADS), MS_SIMPLE_THREADS, 0)(
        I, J, M, N, K, a, b, out, arg);
    CUDA_CHECK_LAST();
}

static void backward_da(const ms_dims *d, const float *b, const float *dout, const int *arg, float *da)
{
    int J = (int)d->J, M = (int)d->M, N = (int)d->N, K = (int)d->K, R = (int)ms_rows(d);
    LAUNCH(ms_da_kernel, R, MS_SIMPLE_THREADS, 0)(J, M, N, K, b, dout, arg, da);
    CUDA_CHECK_LAST();
}

static void backward_db_atomic(const ms_dims *d, const float *a, const float *dout, const int *arg, float *db)
{
    int J = (int)d->J, M = (int)d->M, N = (int)d->N, K = (int)d->K, R = (int)ms_rows(d);
    CUDA_CHECK(cudaMemset(db, 0, ms_b_count(d) * sizeof(float)));
    LAUNCH(ms_db_atomic_kernel, R, MS_SIMPLE_THREADS, 0)(J, M, N, K, a, dout, arg, db);
    CUDA_CHECK_LAST();
}

/* db [M, N, K] in bucket order: rows sorted by argmax per m (start [M,N+1] and list [M,I*J] int32, freed
 * here), each (m, n) summed by one block in row order */
static void backward_db_buckets(const ms_dims *d, const float *a, const float *dout, const int *arg,
                                float *db)
{
    int J = (int)d->J, M = (int)d->M, N = (int)d->N, K = (int)d->K, R = (int)ms_rows(d);
    long long RM = (long long)ms_arg_count(d);
    int *start = (int *)dev_alloc_array(size_mul(d->M, d->N + 1), DT_I32, "buckets: start [M,N+1] int32");
    int *list = (int *)dev_alloc_array(ms_arg_count(d), DT_I32, "buckets: rows by argmax [M,I*J] int32");
    CUDA_CHECK(cudaMemset(start, 0, size_mul(d->M, d->N + 1) * sizeof(int)));
    LAUNCH(ms_bucket_count_kernel, blocks_for(RM, MS_SIMPLE_THREADS), MS_SIMPLE_THREADS, 0)(RM, M, N, arg,
                                                                                            start);
    CUDA_CHECK_LAST();
    LAUNCH(ms_bucket_scan_kernel, M, MS_SCAN_THREADS, 0)(N, start);
    CUDA_CHECK_LAST();
    LAUNCH(ms_bucket_scatter_kernel, blocks_for(M, MS_SCATTER_WARPS), MS_SCATTER_WARPS * 32, 0)(R, M, N, arg,
                                                                                                start, list);
    CUDA_CHECK_LAST();
    LAUNCH(ms_db_bucket_kernel, M * N, MS_SIMPLE_THREADS, 0)(J, M, N, K, R, a, dout, start, list, db);
    CUDA_CHECK_LAST();
    dev_free(list);
    dev_free(start);
}

extern "C" float *ms1_forward(const ms_dims *d, const float *a, const float *b, int recompute,
                              int deterministic, cuda_ms_saved *s)
{
    float *out = (float *)dev_alloc_array(ms_out_count(d), DT_F32, "out [I,M] f32"); /* [I, M] */
    int *arg =
        recompute ? NULL
                  : (int *)dev_alloc_array(ms_arg_count(d), DT_I32, "arg [I,J,M] int32 (saved for backward)");
    launch_forward(d, a, b, out, arg);
    s->arg = (int32_t *)arg, s->recompute = recompute, s->deterministic = deterministic, s->f16 = 0;
    return out;
}

extern "C" void ms1_grads(const ms_dims *d, const float *a, const float *b, int deterministic, int *arg,
                          const float *dout, float **da, float **db)
{
    float *ga = (float *)dev_alloc_array(ms_a_count(d), DT_F32, "da [I,J,K] f32"); /* [I, J, K] */
    float *gb = (float *)dev_alloc_array(ms_b_count(d), DT_F32, "db [M,N,K] f32"); /* [M, N, K] */
    backward_da(d, b, dout, arg, ga);
    if (deterministic)
        backward_db_buckets(d, a, dout, arg, gb);
    else
        backward_db_atomic(d, a, dout, arg, gb);
    dev_free(arg);
    *da = ga;
    *db = gb;
}

/* with --recompute the forward kernel runs again into a transient argmax (out not written) */
extern "C" void ms1_backward(const ms_dims *d, const float *a, const float *b, cuda_ms_saved *s,
                             const float *dout, float **da, float **db)
{
    int *arg = (int *)s->arg; /* [I, J, M] */
    if (!arg) {
        arg = (int *)dev_alloc_array(ms_arg_count(d), DT_I32, "arg [I,J,M] int32 (recomputed in backward)");
        launch_forward(d, a, b, NULL, arg);
    }
    s->arg = NULL;
    ms1_grads(d, a, b, s->deterministic, arg, dout, da, db);
}
