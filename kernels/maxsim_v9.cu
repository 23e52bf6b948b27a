/* maxsim_v9.cu - lesson 3, cuda-v9: v8 with its fragments loaded two elements at a time and one (max, argmax)
 * per row a lane holds, both in PTX's fragment layout.
 *
 * v8 is bound by one warp's path through a stage: 256 tensor-core instructions, and beside them 128 shared loads
 * of 4 bytes, the b fragments' rounding and, at 255 registers, spilled offsets reloaded every stage. Its fold
 * keeps a (max, argmax) per fragment slot: 64 registers of its 255. Where WMMA's registers hold PTX's
 * mma.m16n8k8 layout, a lane's 8 slots of a fragment are 2 rows, so the fold needs 16 (kernels/maxsim_row_fold.h),
 * and a lane's a and b elements pair up along K, so each pair is one 8-byte load once K is relabelled within each
 * 8 columns (kernels/maxsim_pair_loads.h): 64 loads a stage instead of 128. The block, the pipeline and the walk
 * are v8's, with rows 8 words off a multiple of 32 for the 8-byte loads: a[i]'s 128 rows 264 floats apart, 2
 * stages of 256 rows of 40: 217,088 bytes of shared memory (sm_90 only). CUDA leaves WMMA's register order
 * unspecified: ms9_unfit runs ms_fragment_layout_probe once and refuses v9 where the order is not PTX's.
 * Design target: >= 50% of the H100's TF32 tensor-core roofline by the time model at the forum size. */
#include "maxsim_launch.h"
#include "maxsim_pair_loads.h"
#include "maxsim_pipeline.h"
#include "maxsim_row_fold.h"
#include "maxsim_row_walk.h"

#include "runtime/cuda_check.h"
#include "runtime/cuda_fit.h"
#include "runtime/cuda_track.h"

#include <stdint.h>
#include <stdio.h>

typedef pipe_block<4, 4, MS8_TK, MS8_STAGES, MS9_LDA, MS9_PAD> v9_block; /* v8's shape, rows for 8-byte loads */
static_assert(v9_block::tn == MS8_TN && v9_block::ldb == MS8_TK + MS9_PAD, "MS9_SMEM_BYTES");

/* Designed for: loads >= 80% of each 32-byte sector used, stores >= 12.5% (arg[i, :, m] is a column, stride M, as
 * in v3), shared memory <= 4 wavefronts per request (a's 16-byte fragment loads: a quarter-warp's cover 2 paired
 * rows 16 words mod 32 apart, every bank once, 4 wavefronts a warp, the least 512 bytes take; b's 8-byte ones: 2;
 * the profile sees a float4 as four 4-byte requests, each 4-way: also 4; the one load of pipe_fragment_positions'
 * unpadded 16 x 16 tile per block: 4-way).
 * Today: loads 78% (K = 25 here: the 4-byte copies, each row's 25 floats mid-sector). */
__global__ void ms_forward_v9(int I, int J, int M, int N, int K, const float *a, const float *b, float *out, int *arg)
{
    pipe_forward<4, row_fold<4>, pair_loads, v9_block, row_walk<v9_block>>(I, J, M, N, K, a, b, out, arg);
}

/* One warp loads an a, a b and an accumulator fragment from a tile of their own element indices and counts, per
 * lane, the registers that do not hold PTX's mma.m16n8k8 element (the layouts maxsim_pair_loads.h and
 * maxsim_row_fold.h rely on) into wrong[lane].
 * Designed for: no global loads, stores >= 80% of each 32-byte sector used, shared memory <= 4 wavefronts per
 * request (the 16 x 16 tile unpadded, once). */
__global__ void ms_fragment_layout_probe(int *wrong)
{
    __shared__ __align__(32) float tile[256];
    for (int e = threadIdx.x; e < 256; e += 32) tile[e] = (float)e;
    __syncthreads(); /* the tile is complete before the warp loads it */
    a_frag fa;
    b_frag fb;
    acc_frag fc;
    wmma::load_matrix_sync(fa, tile, 8);                       /* 16 x 8 row-major: (row, k) holds 8 row + k */
    wmma::load_matrix_sync(fb, tile, 8);                       /* 8 x 16 column-major: (k, col) holds 8 col + k */
    wmma::load_matrix_sync(fc, tile, 16, wmma::mem_row_major); /* 16 x 16: (row, col) holds 16 row + col */
    int g = threadIdx.x / 4, t = threadIdx.x % 4, bad = 0;
    UNROLL for (int q = 0; q < 4; q++) {
        bad += fa.x[q] != (float)(8 * (g + 8 * (q % 2)) + t + 4 * (q / 2));
        bad += fb.x[q] != (float)(8 * (g + 8 * (q / 2)) + t + 4 * (q % 2));
    }
    UNROLL for (int q = 0; q < 8; q++)
        bad += fc.x[q] != (float)(16 * (g + 8 * (q / 2 % 2)) + 8 * (q / 4) + 2 * t + q % 2);
    wrong[threadIdx.x] = bad;
}

/* 1 when this build's WMMA tf32 fragments hold PTX's layout (asked once: it is the compiler's, fixed) */
static int ptx_layout(void)
{
    static int known = -1;
    if (known < 0) {
        int wrong[32] = {0}, sum = 0; /* (the emulator's dry run moves no bytes: there the probe passes) */
        int *d = (int *)dev_alloc_array(32, DT_I32, "cuda-v9 layout probe [32] int32");
        LAUNCH(ms_fragment_layout_probe, 1, 32, 0)(d);
        CUDA_CHECK_LAST();
        dev_download(wrong, d, sizeof wrong);
        dev_free(d);
        for (int l = 0; l < 32; l++) sum += wrong[l];
        known = sum == 0;
    }
    return known;
}

extern "C" const char *ms9_unfit(const ms_dims *d)
{
    if (d->K > 256)
        return "K above 256: cuda-v9 keeps a[i]'s 128 rows of K floats in shared memory (cuda-v3 runs any K)";
    if (((long long)d->N + MS8_TN) * (long long)d->K > INT32_MAX)
        return "(N + 256) * K above 2^31 - 1: cuda-v9's copies index b[m] in int (cuda-v3 runs any size)";
    const cuda_launch_need need = {(const void *)ms_forward_v9, v9_block::threads, MS9_SMEM_BYTES, 80, 0};
    const char *why = cuda_fit(&need, 1);
    if (why) return why;
    if (!ptx_layout())
        return "cuda-v9 loads WMMA's tf32 fragments as PTX's mma.m16n8k8 registers, and this build's are in another "
               "order (the emulator draws one unless EMU_WMMA_PTX=1); cuda-v8 learns its layout and runs";
    return NULL;
}

void ms9_forward(const ms_dims *d, const float *a, const float *b, float *out, int *arg)
{
    int I = (int)d->I, J = (int)d->J, M = (int)d->M, N = (int)d->N, K = (int)d->K;
    /* ms9_unfit checked the device's limits (cuda_fit) and the fragment layout */
    CUDA_CHECK(cudaFuncSetAttribute(ms_forward_v9, cudaFuncAttributeMaxDynamicSharedMemorySize, MS9_SMEM_BYTES));
    LAUNCH(ms_forward_v9, I * M, v9_block::threads, MS9_SMEM_BYTES)(I, J, M, N, K, a, b, out, arg);
    CUDA_CHECK_LAST();
}
