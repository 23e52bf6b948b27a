/* maxsim_pair_loads.h - cuda-v9's fragment loads in PTX's layout: a's four elements in one 16-byte shared load,
 * b's in two 8-byte ones.
 *
 * In PTX's mma.m16n8k8 fragments (PTX ISA, "Matrix Fragments for mma.m16n8k8", .tf32) lane l = 4g + t holds a's
 * elements (row g, column t), (g + 8, t), (g, t + 4), (g + 8, t + 4) as x[0] .. x[3] of a WMMA m16n16k8 fragment,
 * and b's (column g, row t), (g, t + 4), (g + 8, t), (g + 8, t + 4). A product sums over K, so K may be relabelled
 * within each 8 columns, the same way for a and b: here logical column t + 4c of a k step is its column 2t + c
 * in memory. Then a lane's b elements of one column of b are 2 adjacent floats of its row in the stage (one
 * 8-byte load per fragment column: 2 a fragment), and, with a[i]'s rows g and g + 8 of every 16 stored
 * interleaved (element k of row g at 2k, of row g + 8 at 2k + 1, of one 2 * lda-float row), a lane's 4 a
 * elements are 4 adjacent floats in x[]'s order: one 16-byte load. Nothing but the registers and the staging of
 * a changes; the products summed are the same. This needs WMMA's registers in PTX's order, which CUDA leaves
 * unspecified: ms9_unfit checks it on the device first (kernels/maxsim_v9.cu). Banks: a stage's rows 8 words off
 * a multiple of 32 (pipe_block's PAD = 8), so a half-warp's 8-byte loads cover 4 rows of 8 words, every bank
 * once; a's paired rows 16 off, so a quarter-warp's 16-byte loads cover 2 rows of 16 words. Same products, same
 * rounding as shared_loads. CUDA sources only, after maxsim_pipeline.h. */
#ifndef KERNELS_MAXSIM_PAIR_LOADS_H
#define KERNELS_MAXSIM_PAIR_LOADS_H

#include "maxsim_pipeline.h"

/* Each load and the registers it fills on one line: nvcc gives the load the line of the registers' first use, the
 * emulator the line of the dereference, and the time model matches the two line by line. */
__device__ static void load4(a_frag &f, const float *p)
{
    float4 v = *(const float4 *)p; f.x[0] = v.x, f.x[1] = v.y, f.x[2] = v.z, f.x[3] = v.w;
}
__device__ static void load2_tf32(float &x0, float &x1, const float *p)
{
    float2 v = *(const float2 *)p; x0 = wmma::__float_to_tf32(v.x), x1 = wmma::__float_to_tf32(v.y);
}

/* (x, y, z, w) each rounded to TF32 */
__device__ static float4 tf32x4(float x, float y, float z, float w)
{
    return make_float4(wmma::__float_to_tf32(x), wmma::__float_to_tf32(y), wmma::__float_to_tf32(z),
                       wmma::__float_to_tf32(w));
}

struct pair_loads {
    int a, b; /* lane 4g + t's first elements: a's paired row g, column 4t; a stage's row g, column 2t */

    template <class B> __device__ void learn(float *, int lda)
    {
        static_assert(a_frag::num_elements == 4 && b_frag::num_elements == 4, "m16n16k8 tf32: 4 elements a lane");
        static_assert(B::ldb % 32 == 8, "a stage's rows 8 words off a multiple of 32");
        static_assert(B::lda % 16 == 8, "a's paired rows (2 lda floats) 16 words off a multiple of 32");
        int g = threadIdx.x % 32 / 4, t = threadIdx.x % 4;
        a = g * 2 * lda + 4 * t;
        b = g * B::ldb + 2 * t;
    }

    /* sA [MS4_TJ / 2][2 lda]: paired row 8p + g (p = r / 16, g = r % 8 for a[i]'s row j0 + r) holds rows 16p + g
     * and 16p + g + 8 interleaved, columns 0 .. KP, rounded to TF32; zeros past J and K. ai is a[i] (J, K). */
    template <class B>
    __device__ void load_a(const float *ai, int J, int K, int KP, int lda, int j0, float *sA) const
    {
        if (K % 4 == 0) {
            for (int e = threadIdx.x; e < MS4_TJ / 2 * (KP / 4); e += B::threads) {
                int p = e / (KP / 4), k = e % (KP / 4) * 4, j = j0 + p / 8 * 16 + p % 8;
                float4 lo = {0.0f, 0.0f, 0.0f, 0.0f}, hi = lo;
                if (j < J && k < K) lo = *(const float4 *)(ai + (long long)j * K + k);
                if (j + 8 < J && k < K) hi = *(const float4 *)(ai + (long long)(j + 8) * K + k);
                *(float4 *)(sA + p * 2 * lda + 2 * k) = tf32x4(lo.x, hi.x, lo.y, hi.y);
                *(float4 *)(sA + p * 2 * lda + 2 * k + 4) = tf32x4(lo.z, hi.z, lo.w, hi.w);
            }
        } else {
            for (int e = threadIdx.x; e < MS4_TJ * KP; e += B::threads) {
                int r = e / KP, k = e % KP, j = j0 + r;
                sA[(r / 16 * 8 + r % 8) * 2 * lda + 2 * k + r % 16 / 8] =
                    wmma::__float_to_tf32(j < J && k < K ? ai[(long long)j * K + k] : 0.0f);
            }
        }
    }

    template <class B>
    __device__ void stage(const float *sA, int lda, int k0, const float *s, int wr, int wc,
                          acc_frag (&c)[B::rows / 16][4]) const
    {
        constexpr int WX = B::rows / 16, LDB = B::ldb, LDA = B::lda;
        static_assert(LDA > 0, "a's rows a fixed number of floats apart: offsets are immediates");
        a_frag fa;
        b_frag fb[4];
        const float *rows_a = sA + wr / 2 * 2 * LDA + 2 * k0 + a, *rows_b = s + wc * LDB + b;
        UNROLL for (int kk = 0; kk < B::tk; kk += 8) {
            UNROLL for (int y = 0; y < 4; y++) {
                load2_tf32(fb[y].x[0], fb[y].x[1], rows_b + 16 * y * LDB + kk);       /* column g of the fragment */
                load2_tf32(fb[y].x[2], fb[y].x[3], rows_b + (16 * y + 8) * LDB + kk); /* column g + 8 */
            }
            UNROLL for (int x = 0; x < WX; x++) {
                load4(fa, rows_a + 8 * x * 2 * LDA + 2 * kk); /* rows g, g + 8 of fragment x */
                UNROLL for (int y = 0; y < 4; y++) wmma::mma_sync(c[x][y], fa, fb[y], c[x][y]);
            }
        }
        (void)lda;
    }
};

template <> struct loads_stage_a<pair_loads> { static constexpr bool value = true; };

#endif
