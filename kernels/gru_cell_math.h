/* gru_cell_math.h - lesson 4's shared device side: the arithmetic of one element of the cell, forward and
 * backward, shared by the CPU (optimized/gru_fused.c) and the CUDA kernels (kernels/gru_v1.cu), and the
 * launch geometry. One call handles one (row, j) element of the hidden state; the GEMMs around it
 * are the caller's.
 *
 * Forward (gru_gate_forward): the inputs are the three pre-activations of x (xr, xu, xn), of z (zr, zu, zn)
 * and the old h. It returns the new h and the four values backward needs: r, u, n and zn.
 * Why these: dn = g (1 - u), du = g (h - n), dh_direct = g u need u and n (h is the previous output, kept
 * anyway); d(pre-tanh) = dn (1 - n^2) needs n; dzn = d(pre-tanh) r and dr = d(pre-tanh) zn need r and zn;
 * the sigmoid derivatives s(1 - s) need r and u. Pre-activations are never needed: sigma' and tanh' are
 * written in terms of the outputs.
 */
#ifndef KERNELS_GRU_CELL_MATH_H
#define KERNELS_GRU_CELL_MATH_H

#include "runtime/hd.h"
#include <math.h>

HD float gru_sigmoid(float a) { return 1.0f / (1.0f + expf(-a)); }

/* z = mean + eps exp(lv/2); e = eps exp(lv/2) is saved: dlv = dz e / 2 needs nothing else. */
HD float gru_reparam(float mean, float lv, float eps, float *e)
{
    *e = eps * expf(0.5f * lv);
    return mean + *e;
}

/* dlv from dz and the saved e (dmean = dz) */
HD float gru_reparam_backward(float dz, float e) { return 0.5f * dz * e; }

typedef struct {
    float r, u, n, zn; /* saved for backward */
} gru_gates;

HD float gru_gate_forward(float xr, float xu, float xn, float zr, float zu, float zn, float h, gru_gates *s)
{
    s->r = gru_sigmoid(xr + zr);
    s->u = gru_sigmoid(xu + zu);
    s->n = tanhf(xn + s->r * zn);
    s->zn = zn;
    return s->n + s->u * (h - s->n);
}

/* The gradients of one element's pre-activations: da_r, da_u feed both x W_ih and z W_zh; da_n feeds xn
 * directly and zn through r (dzn = da_n r). */
typedef struct {
    float da_r, da_u, da_n, dzn;
} gru_gate_grads;

/* g: gradient of the new h (dout_t + what step t+1 sent back); h: the old h. Returns dh_direct = g u, the
 * part of the old h's gradient that goes straight through the interpolation. */
HD float gru_gate_backward(float g, float h, gru_gates s, gru_gate_grads *o)
{
    float dn = g * (1.0f - s.u);
    float du = g * (h - s.n);
    o->da_n = dn * (1.0f - s.n * s.n);
    o->dzn = o->da_n * s.r;
    o->da_r = o->da_n * s.zn * s.r * (1.0f - s.r);
    o->da_u = du * s.u * (1.0f - s.u);
    return g * s.u;
}

/* ---- launch geometry, read by the kernels and by the C fit check (cuda_gru_unfit) */
#define GRU_THREADS 256 /* one thread per (row, hidden unit) element; 8 warps per block */
/* grid = ceil(B*H / GRU_THREADS) blocks in x: B*H must stay below 2^31 (cuda_gru_unfit checks int range) */
/* v3: one persistent cooperative block per slice of hidden units, up to GRU3_MAX_PER_SM blocks per SM */
#define GRU3_THREADS 256
#define GRU3_MAX_PER_SM 8
/* v4: as v3, with GRU4_LANES lanes per (row, unit), each taking every GRU4_LANES-th term of its dot products,
 * and blocks of at least GRU4_UNITS units (a block reads h, x_t and z once a step for all of them) */
#define GRU4_THREADS 512
#define GRU4_LANES 8
#define GRU4_UNITS 2
#define GRU4_MAX_PER_SM 4

/* v4, v5: block g of G owns the hidden units [j0, j0 + nj) */
HD void gru_block_units(int H, int G, int g, int *j0, int *nj)
{
    *j0 = (int)((long long)g * H / G);
    *nj = (int)((long long)(g + 1) * H / G) - *j0;
}

/* v4, v5: words per unit's row of a weight slice in shared memory: n rounded up to 8 more than a multiple of
 * 32, so the 4 lane groups of a warp, at 4 consecutive units, read 4 x 8 consecutive words in 32 different
 * banks */
HD long long gru_row_words(long long n) { return n + ((8 - n % 32) + 32) % 32; }

#endif
