/* logchain_cuda_memory.c - lesson 2's CUDA versions' device bytes and fit checks, computed without nvcc or a
 * device (--predict, the tests). v3 has v2's, v5 v4's (and its own shared-memory check on the device). */
#include "logchain_forward.h"

#include "../kernels/runtime/cuda_track.h" /* CUBLAS_WORKSPACE_BYTES; declarations only, no CUDA needed */
#include "../kernels/logchain_math.h"
#include <limits.h>

/* CUDA v1 keeps alpha and out in device memory, like the CPU, and needs only two (n, c) beta buffers during
 * backward (its kernels compute exponentials where the CPU stages weights for its GEMMs). No cuBLAS. */
lc_memory cuda_lc_memory_v1(const lc_dims *d)
{
    size_t F = 4, nc = size_mul(d->n, d->c);
    size_t xb = size_mul(F, lc_x_count(d)), ob = size_mul(F, lc_out_count(d));
    /* dx reuses alpha, as on the CPU */
    size_t grads = size_mul(F, size_add(lc_bulk_count(d), lc_p0_count(d)));
    lc_memory m = {0, 0, 0};
    m.forward_live = size_add(size_add(lc_inputs_bytes(d), xb), ob);
    m.peak = size_add(size_add(m.forward_live, ob), size_add(grads, size_mul(F, size_mul(2, nc))));
    return m;
}

/* CUDA v2: the tracked cuBLAS workspace from the start of forward to the end of backward; scratch for all t
 * chain positions at once: forward W, S (t,n,c) and m (t,n); backward W, U/S (t,n,c) and mb (t,n). */
lc_memory cuda_lc_memory_v2(const lc_dims *d)
{
    size_t F = 4, tnc = size_mul(lc_rows(d), d->c);
    size_t xb = size_mul(F, lc_x_count(d)), ob = size_mul(F, lc_out_count(d));
    size_t grads = size_mul(F, size_add(lc_bulk_count(d), lc_p0_count(d))); /* dx reuses alpha */
    size_t scratch = size_mul(F, size_add(size_mul(2, tnc), lc_rows(d)));  /* the same in both passes */
    lc_memory m = {0, 0, 0};
    m.forward_live = size_add(size_add(size_add(lc_inputs_bytes(d), xb), ob), CUBLAS_WORKSPACE_BYTES);
    m.peak = size_add(size_add(m.forward_live, ob), size_add(grads, scratch)); /* + dout */
    return m;
}

/* CUDA v4: v2's forward (the workspace is attached for backward's GEMM); backward's scratch is every step's
 * GEMM operands U and W, (t,v-1,n,c) each, allocated after dbulk and dp0. */
lc_memory cuda_lc_memory_v4(const lc_dims *d)
{
    size_t F = 4, steps = size_mul(size_mul(d->t, d->v - 1), size_mul(d->n, d->c));
    size_t xb = size_mul(F, lc_x_count(d)), ob = size_mul(F, lc_out_count(d));
    size_t grads = size_mul(F, size_add(lc_bulk_count(d), lc_p0_count(d))); /* dx reuses alpha */
    lc_memory m = {0, 0, 0};
    m.forward_live = size_add(size_add(size_add(lc_inputs_bytes(d), xb), ob), CUBLAS_WORKSPACE_BYTES);
    /* + dout */
    m.peak = size_add(size_add(m.forward_live, ob), size_add(grads, size_mul(F, size_mul(2, steps))));
    return m;
}

/* Kernels index rows and columns with int. v1 launches ceil(c/LC1_TILE) x ceil(n/LC1_ROWS) blocks and 1-D
 * grids of ceil(n*c/LC1_EW_BLOCK) and ceil(n*32/LC1_EW_BLOCK); v2 launches ceil(n/LC2_ROWS) x t blocks and
 * passes n*c, c*c, (v-1)*c*c as cuBLAS strides and t as the batch count (int). */
int cuda_lc_dims_fit_v1(const lc_dims *d)
{
    return d->n <= INT_MAX && d->c <= INT_MAX && (d->n + LC1_ROWS - 1) / LC1_ROWS <= LC_MAX_GRID_YZ &&
           (d->c + LC1_TILE - 1) / LC1_TILE <= LC_MAX_GRID_YZ && lc_x_count(d) < ((size_t)1 << 62) &&
           size_mul(d->n, d->c) / LC1_EW_BLOCK < LC_MAX_GRID_X &&
           size_mul(d->n, 32) / LC1_EW_BLOCK < LC_MAX_GRID_X;
}

/* v4: a lane keeps LC4_KQ states (c <= LC4_MAX_C); grid ceil(n/LC4_ROWS) x t; the GEMM's batch t (v-1) is an
 * int */
int cuda_lc_dims_fit_v4(const lc_dims *d)
{
    return d->c <= LC4_MAX_C && d->n <= INT_MAX && d->v <= INT_MAX && d->t <= LC_MAX_GRID_YZ &&
           size_mul(d->t, d->v - 1) <= INT_MAX && lc_x_count(d) < ((size_t)1 << 62) &&
           size_mul(size_mul(d->t, d->v), size_mul(d->n, d->c)) < ((size_t)1 << 62);
}

int cuda_lc_dims_fit_v2(const lc_dims *d)
{
    return d->n <= INT_MAX && d->c <= INT_MAX && d->v <= INT_MAX && d->t <= LC_MAX_GRID_YZ &&
           (d->n + LC2_ROWS - 1) / LC2_ROWS <= LC_MAX_GRID_X &&
           (d->c + LC2_DP0_BLOCK - 1) / LC2_DP0_BLOCK <= LC_MAX_GRID_X && lc_x_count(d) < ((size_t)1 << 62) &&
           size_mul(lc_rows(d), d->c) < ((size_t)1 << 62);
}
