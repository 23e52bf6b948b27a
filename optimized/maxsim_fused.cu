/* maxsim_fused.cu - lesson 3 on the GPU: device memory and the choice of version. The kernels and their launches
 * are kernels/maxsim_v1.cu (v1 and the backward every version uses), maxsim_v2.cu .. maxsim_v5.cu.
 *
 * Forward: v1 .. v5 writes out [I, M] and, unless --recompute, the int32 argmax [I, J, M]. Backward: with
 * --recompute the forward kernel runs again into a transient argmax (out not written); then da by gather, db
 * by atomics or (--deterministic) by buckets (a stable counting sort of the rows by argmax). No cuBLAS.
 */
#include "maxsim_fused.h"

#include "../kernels/maxsim_launch.h"
#include "../kernels/maxsim_math.h"
#include "../kernels/runtime/cuda_track.h"

/* out may be NULL (recompute), arg may be NULL (--recompute forward). a [I,J,K], b [M,N,K] device. */
static void launch_forward(const ms_dims *d, const float *a, const float *b, ms_cuda_version v, int f16, float *out,
                           int *arg)
{
    if (v == MS_CUDA_V1)
        ms1_forward(d, a, b, out, arg);
    else if (v == MS_CUDA_V2)
        ms2_forward(d, a, b, out, arg);
    else if (v == MS_CUDA_V3)
        ms3_forward(d, a, b, out, arg);
    else if (v == MS_CUDA_V4)
        ms4_forward(d, a, b, out, arg);
    else
        ms5_forward(d, a, b, f16, out, arg);
}

extern "C" float *cuda_ms_forward(const ms_dims *d, const float *a, const float *b, ms_cuda_version v, int recompute,
                                  int deterministic, int f16, cuda_ms_saved *saved)
{
    float *out = (float *)dev_alloc_array(ms_out_count(d), DT_F32, "out [I,M] f32"); /* [I, M] */
    int *arg = recompute ? NULL : (int *)dev_alloc_array(ms_arg_count(d), DT_I32, "arg [I,J,M] int32 (saved for backward)");
    launch_forward(d, a, b, v, f16, out, arg);
    saved->arg = (int32_t *)arg;
    saved->recompute = recompute;
    saved->deterministic = deterministic;
    saved->f16 = f16;
    saved->version = v;
    return out;
}

/* db [M, N, K] in bucket order: rows sorted by argmax per m, each (m, n) summed by one block in row order. */
static void db_buckets(const ms_dims *d, const float *a, const float *dout, const int *arg, float *gb)
{
    int *start = (int *)dev_alloc_array(size_mul(d->M, d->N + 1), DT_I32, "buckets: start [M,N+1] int32");
    int *list = (int *)dev_alloc_array(ms_arg_count(d), DT_I32, "buckets: rows by argmax [M,I*J] int32");
    ms_backward_db_buckets(d, a, dout, arg, start, list, gb);
    dev_free(list);
    dev_free(start);
}

extern "C" void cuda_ms_backward(const ms_dims *d, const float *a, const float *b, cuda_ms_saved *saved,
                                 const float *dout, float **da, float **db)
{
    int *arg = (int *)saved->arg; /* [I, J, M] */
    if (!arg) {
        arg = (int *)dev_alloc_array(ms_arg_count(d), DT_I32, "arg [I,J,M] int32 (recomputed in backward)");
        launch_forward(d, a, b, saved->version, saved->f16, NULL, arg);
    }
    float *ga = (float *)dev_alloc_array(ms_a_count(d), DT_F32, "da [I,J,K] f32"); /* [I, J, K] */
    float *gb = (float *)dev_alloc_array(ms_b_count(d), DT_F32, "db [M,N,K] f32"); /* [M, N, K] */
    ms_backward_da(d, b, dout, arg, ga);
    if (saved->deterministic) {
        db_buckets(d, a, dout, arg, gb);
    } else {
        ms_backward_db_atomic(d, a, dout, arg, gb);
    }
    dev_free(arg);
    saved->arg = NULL;
    *da = ga;
    *db = gb;
}
