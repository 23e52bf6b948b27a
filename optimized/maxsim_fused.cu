/* maxsim_fused.cu - lesson 3 on the GPU: device memory and launches; the kernels are kernels/maxsim_kernels.cu.
 *
 * Forward: v1 or v2 writes out [I, M] and, unless --recompute, the int32
 * argmax [I, J, M]. Backward: with --recompute the forward kernel runs again into a transient argmax (out not
 * written); then da by gather, db by atomics or (--deterministic) by buckets. No cuBLAS, no workspace.
 */
#include "maxsim_fused.h"

#include "../kernels/runtime/cuda_check.h"
#include "../kernels/runtime/cuda_track.h"
#include "../kernels/runtime/launch.h"
#include "../kernels/maxsim_geometry.h"
#include "../kernels/maxsim_kernels.cuh"

static int blocks_for(long long n, int threads) { return (int)((n + threads - 1) / threads); }

/* out may be NULL (recompute), arg may be NULL (--recompute forward). a [I,J,K], b [M,N,K] device. */
static void launch_forward(const ms_dims *d, const float *a, const float *b, ms_cuda_version v, float *out, int *arg)
{
    int I = (int)d->I, J = (int)d->J, M = (int)d->M, N = (int)d->N, K = (int)d->K;
    if (v == MS_CUDA_V1)
        LAUNCH(ms_forward_v1, blocks_for((long long)I * M, MS_SIMPLE_THREADS), MS_SIMPLE_THREADS, 0)(I, J, M, N, K, a,
                                                                                                   b, out, arg);
    else
        LAUNCH(ms_forward_v2, I * M, MS_THREADS, 0)(I, J, M, N, K, a, b, out, arg);
    CUDA_CHECK_LAST();
}

extern "C" float *cuda_ms_forward(const ms_dims *d, const float *a, const float *b, ms_cuda_version v, int recompute,
                                  int deterministic, cuda_ms_saved *saved)
{
    float *out = (float *)dev_alloc_array(ms_out_count(d), DT_F32, "out [I,M] f32"); /* [I, M] */
    int *arg = recompute ? NULL : (int *)dev_alloc_array(ms_arg_count(d), DT_I32, "arg [I,J,M] int32 (saved for backward)");
    launch_forward(d, a, b, v, out, arg);
    saved->arg = (int32_t *)arg;
    saved->recompute = recompute;
    saved->deterministic = deterministic;
    saved->version = v;
    return out;
}

/* db [M, N, K] in bucket order: rows sorted by argmax per m, each (m, n) summed by one block in row order. */
static void db_buckets(const ms_dims *d, const float *a, const float *dout, const int *arg, float *gb)
{
    int J = (int)d->J, M = (int)d->M, N = (int)d->N, K = (int)d->K, R = (int)ms_rows(d);
    int *start = (int *)dev_alloc_array(size_mul(d->M, d->N + 1), DT_I32, "buckets: start [M,N+1] int32");
    int *list = (int *)dev_alloc_array(ms_arg_count(d), DT_I32, "buckets: rows by argmax [M,I*J] int32");
    LAUNCH(ms_bucket_kernel, blocks_for(M, MS_SIMPLE_THREADS), MS_SIMPLE_THREADS, 0)(R, M, N, arg, start, list);
    CUDA_CHECK_LAST();
    LAUNCH(ms_db_bucket_kernel, M * N, MS_SIMPLE_THREADS, 0)(J, M, N, K, R, a, dout, start, list, gb);
    CUDA_CHECK_LAST();
    dev_free(list);
    dev_free(start);
}

extern "C" void cuda_ms_backward(const ms_dims *d, const float *a, const float *b, cuda_ms_saved *saved,
                                 const float *dout, float **da, float **db)
{
    int J = (int)d->J, M = (int)d->M, N = (int)d->N, K = (int)d->K, R = (int)ms_rows(d);
    int *arg = (int *)saved->arg; /* [I, J, M] */
    if (!arg) {
        arg = (int *)dev_alloc_array(ms_arg_count(d), DT_I32, "arg [I,J,M] int32 (recomputed in backward)");
        launch_forward(d, a, b, saved->version, NULL, arg);
    }
    float *ga = (float *)dev_alloc_array(ms_a_count(d), DT_F32, "da [I,J,K] f32"); /* [I, J, K] */
    float *gb = (float *)dev_alloc_array(ms_b_count(d), DT_F32, "db [M,N,K] f32"); /* [M, N, K] */
    LAUNCH(ms_da_kernel, R, MS_SIMPLE_THREADS, 0)(J, M, N, K, b, dout, arg, ga);
    CUDA_CHECK_LAST();
    if (saved->deterministic) {
        db_buckets(d, a, dout, arg, gb);
    } else {
        CUDA_CHECK(cudaMemset(gb, 0, ms_b_count(d) * sizeof(float)));
        LAUNCH(ms_db_atomic_kernel, R, MS_SIMPLE_THREADS, 0)(J, M, N, K, a, dout, arg, gb);
        CUDA_CHECK_LAST();
    }
    dev_free(arg);
    saved->arg = NULL;
    *da = ga;
    *db = gb;
}
