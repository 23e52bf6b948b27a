/* maxsim_shared_loads.h - cuda-v7's fragment loads: plain shared-memory loads at offsets learned once per block.
 *
 * nvcc compiles wmma::load_matrix_sync on a shared tile to per-element loads through a generic pointer, each with
 * a 64-bit address computation. Which tile
 * element a lane's x[q] holds is unspecified, but fixed for the fragment type: so each lane loads, once, an a and
 * a b fragment from tiles holding their own element indices, keeps the offset of its x[q] in sA and in a stage,
 * and from then on fills x[q] with an ordinary load from shared memory, which nvcc addresses in 32 bits from the
 * shared window, the fragment's own offset an immediate. Same products, same rounding as wmma_loads. CUDA sources
 * only, after maxsim_pipeline.h. */
#ifndef KERNELS_MAXSIM_SHARED_LOADS_H
#define KERNELS_MAXSIM_SHARED_LOADS_H

#include "maxsim_pipeline.h"

struct shared_loads {
    int a[4]; /* lane's x[q] of an a fragment: at sA[first + a[q]] (row * lda + column) */
    int b[4]; /* of a b fragment: at s[first + b[q]] (stage row n * B::ldb + column k) */

    /* scratch [128] = 0 .. 127: as a 16 x 8 row-major tile (ldm 8) element (r, k) holds 8r + k, as an 8 x 16
     * column-major one (ldm 8) element (k, n) holds 8n + k; exact in float */
    template <class B> __device__ void learn(float *scratch, int lda)
    {
        constexpr int T = B::threads;
        static_assert(a_frag::num_elements == 4 && b_frag::num_elements == 4, "m16n16k8 tf32: 4 elements a lane");
        for (int e = threadIdx.x; e < 128; e += T) scratch[e] = (float)e;
        __syncthreads(); /* the tile is complete before any warp loads it */
        a_frag fa;
        b_frag fb;
        wmma::load_matrix_sync(fa, scratch, 8);
        wmma::load_matrix_sync(fb, scratch, 8);
        UNROLL for (int q = 0; q < 4; q++) {
            int ea = (int)fa.x[q], eb = (int)fb.x[q];
            a[q] = ea / 8 * lda + ea % 8;
            b[q] = eb / 8 * B::ldb + eb % 8;
        }
        __syncthreads(); /* every warp has loaded it before the pipeline overwrites the scratch */
    }

    template <class B>
    __device__ void stage(const float *sA, int lda, int k0, const float *s, int wr, int wc,
                          acc_frag (&c)[B::rows / 16][4]) const
    {
        constexpr int WX = B::rows / 16, LDB = B::ldb;
        a_frag fa;
        b_frag fb[4];
        const float *rows_a = sA + wr * lda + k0, *rows_b = s + wc * LDB;
        UNROLL for (int kk = 0; kk < B::tk; kk += 8) {
            UNROLL for (int y = 0; y < 4; y++)
                UNROLL for (int q = 0; q < 4; q++) fb[y].x[q] = wmma::__float_to_tf32(rows_b[16 * y * LDB + kk + b[q]]);
            UNROLL for (int x = 0; x < WX; x++) {
                UNROLL for (int q = 0; q < 4; q++) fa.x[q] = rows_a[16 * x * lda + kk + a[q]];
                UNROLL for (int y = 0; y < 4; y++) wmma::mma_sync(c[x][y], fa, fb[y], c[x][y]);
            }
        }
    }
};

#endif
