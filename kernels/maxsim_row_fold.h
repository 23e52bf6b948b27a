/* maxsim_row_fold.h - cuda-v9's fold: one running (max, argmax) per row a lane holds, not per element slot.
 *
 * In PTX's accumulator layout (PTX ISA, "Matrix Fragments for mma.m16n8k8") lane 4g + t holds, of a 16 x 16
 * fragment, rows g and g + 8, columns 2t, 2t + 1, 2t + 8, 2t + 9: x[0], x[1], x[4], x[5] in row g, x[2], x[3],
 * x[6], x[7] in row g + 8. So a lane's 8 slots of each fragment are 2 rows, and its 4 fragments of a row group
 * 16 scores of each: one (max, argmax) per row (WX x 2 of them) where v5-v8 keep one per slot (WX x 8), and the
 * 48 registers that frees are what the 8-byte loads need. Visited in increasing column order, a later score
 * wins only if greater, or NaN over a number (ms_later_wins), as in ordered_fold. The merge: the 4 lanes of a row
 * by shuffles, then the warps that share rows through shared memory, by ms_better_f (a total order: any merge
 * order gives the rule's winner). Needs WMMA's registers in PTX's order (ms9_unfit checks). CUDA sources only,
 * after maxsim_pipeline.h. */
#ifndef KERNELS_MAXSIM_ROW_FOLD_H
#define KERNELS_MAXSIM_ROW_FOLD_H

#include "maxsim_pipeline.h"

template <int WX> struct row_fold {
    float best[WX][2]; /* per row group x and row half h (row 16x + 8h + g of the warp's): the best score */
    int n[WX][2];      /* its column less 2t (t = lane % 4), added once per j tile by columns() */

    /* x[q]'s column in its fragment, less 2t */
    __device__ static constexpr int column(int q) { return 8 * (q / 4) + q % 2; }

    __device__ void init(int wc)
    {
        UNROLL for (int x = 0; x < WX; x++)
            UNROLL for (int h = 0; h < 2; h++) best[x][h] = -INFINITY, n[x][h] = wc; /* the row's lowest column */
    }
    /* the warp's finished scores (columns n0 .. n0+64), then clears them; EDGE: columns past N are checked */
    template <bool EDGE> __device__ void fold_tile(acc_frag (&c)[WX][4], int n0, int N)
    {
        int left = N - n0 - 2 * (threadIdx.x % 4); /* x[q] of fragment y is real when 16y + column(q) < left */
        UNROLL for (int x = 0; x < WX; x++)
            UNROLL for (int y = 0; y < 4; y++) {
                UNROLL for (int e = 0; e < 4; e++) /* columns 16y + 2t + 0, 1, 8, 9: increasing */
                    UNROLL for (int h = 0; h < 2; h++) {
                        int q = e / 2 * 4 + 2 * h + e % 2;
                        float v = c[x][y].x[q];
                        int keep = ms_later_wins(v, best[x][h]) & (!EDGE | (16 * y + column(q) < left));
                        best[x][h] = keep ? v : best[x][h];
                        n[x][h] = keep ? n0 + 16 * y + column(q) : n[x][h];
                    }
                wmma::fill_fragment(c[x][y], 0.0f);
            }
    }
    __device__ void fold(acc_frag (&c)[WX][4], const unsigned (&)[2], int n0, int N)
    {
        if (n0 + 64 <= N) /* uniform across the warp */
            fold_tile<false>(c, n0, N);
        else
            fold_tile<true>(c, n0, N);
    }
    __device__ void columns(const unsigned (&)[2])
    {
        UNROLL for (int x = 0; x < WX; x++)
            UNROLL for (int h = 0; h < 2; h++) n[x][h] += 2 * (threadIdx.x % 4);
    }
    /* a row's 4 lanes by shuffles; lane t = 0 of each writes the warp's (max, argmax) of the row to mv/mn
     * [COLS][MS4_TJ] (side wc / 64); then thread r < MS4_TJ merges row r's COLS sides into rowmax[r] and arg */
    template <int COLS>
    __device__ void merge(int wr, int wc, float *mv, int *mn, float *rowmax, int *argrow, int J, int j0, int M)
    {
        int lane = threadIdx.x % 32, side = wc / 64;
        UNROLL for (int x = 0; x < WX; x++)
            UNROLL for (int h = 0; h < 2; h++) {
                float v = best[x][h];
                int bn = n[x][h];
                UNROLL for (int d = 1; d < 4; d *= 2) {
                    float ov = __shfl_xor_sync(0xffffffffu, v, d);
                    int on = __shfl_xor_sync(0xffffffffu, bn, d);
                    if (ms_better_f(ov, on, v, bn)) v = ov, bn = on;
                }
                if (lane % 4 == 0) {
                    int r = wr + 16 * x + 8 * h + lane / 4;
                    mv[side * MS4_TJ + r] = v, mn[side * MS4_TJ + r] = bn;
                }
            }
        __syncthreads(); /* every side's rows are written before a thread merges them */
        int r = threadIdx.x;
        if (r >= MS4_TJ) return; /* a thread per row */
        float v = mv[r];
        int bn = mn[r];
        UNROLL for (int s = 1; s < COLS; s++)
            if (ms_better_f(mv[s * MS4_TJ + r], mn[s * MS4_TJ + r], v, bn))
                v = mv[s * MS4_TJ + r], bn = mn[s * MS4_TJ + r];
        rowmax[r] = v;
        if (argrow && j0 + r < J) argrow[(long long)(j0 + r) * M] = bn;
    }
};

template <int WX> struct fold_merges<row_fold<WX>> { static constexpr bool value = true; };

#endif
