/* maxsim_ordered_fold.h - cuda-v5's and cuda-v6's fold of scores into (max, argmax): a few instructions per score.
 *
 * A slot sees its columns in increasing order (n tiles ascending, then its four fragments), so a later score wins
 * only if it is greater, or NaN over a number (ms_later_wins, maxsim_math.h: two compares), and two selects keep
 * it. The slot keeps the first column of the fragment where its best came from (n0 + 16y, the same for the whole
 * warp); the element's own column within the fragment is added once per j tile, before the merge. Only the last
 * n tile, where columns may pass N, checks them. WX: the warp tile's fragments in height (pipe_block). CUDA
 * sources only, after maxsim_pipeline.h. */
#ifndef KERNELS_MAXSIM_ORDERED_FOLD_H
#define KERNELS_MAXSIM_ORDERED_FOLD_H

#include "maxsim_pipeline.h"

/* Each slot's best score and the first column of the fragment it came from. */
template <int WX> struct ordered_fold {
    float best[WX][8];
    int n[WX][8];

    /* the first column of the slot's first fragment: where -Inf everywhere (no score wins) leaves the argmax, the
     * slot's lowest column, as the rule wants */
    __device__ void init(int wc)
    {
        UNROLL for (int x = 0; x < WX; x++)
            UNROLL for (int q = 0; q < 8; q++) best[x][q] = -INFINITY, n[x][q] = wc;
    }
    /* the warp's finished scores (columns n0 .. n0+64), then clears them for the next n tile; EDGE: some columns
     * may pass N (the last n tile), and those are checked */
    template <bool EDGE> __device__ void fold_tile(acc_frag (&c)[WX][4], const unsigned (&pos)[2], int n0, int N)
    {
        UNROLL for (int x = 0; x < WX; x++)
            UNROLL for (int y = 0; y < 4; y++) {
                UNROLL for (int q = 0; q < 8; q++) {
                    float v = c[x][y].x[q];
                    int keep = ms_later_wins(v, best[x][q]) & (!EDGE | (n0 + 16 * y + pipe_pos(pos, q) % 16 < N));
                    best[x][q] = keep ? v : best[x][q];
                    n[x][q] = keep ? n0 + 16 * y : n[x][q];
                }
                wmma::fill_fragment(c[x][y], 0.0f);
            }
    }
    __device__ void fold(acc_frag (&c)[WX][4], const unsigned (&pos)[2], int n0, int N)
    {
        if (n0 + 64 <= N) /* uniform across the warp */
            fold_tile<false>(c, pos, n0, N);
        else
            fold_tile<true>(c, pos, n0, N);
    }
    /* each slot's column: its fragment's first column plus the element's column within the fragment */
    __device__ void columns(const unsigned (&pos)[2])
    {
        UNROLL for (int x = 0; x < WX; x++)
            UNROLL for (int q = 0; q < 8; q++) n[x][q] += pipe_pos(pos, q) % 16;
    }
};

#endif
