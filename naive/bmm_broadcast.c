/* bmm_broadcast.c - the dataflow that keeps 1,107,427,328 bytes alive at the forum's size. */
#include "bmm_broadcast.h"

#include "gemm_cpu.h"
#include "track.h"

#include <string.h>

float *naive_bmm_forward(const bmm_dims *d, const float *x, const float *W, naive_bmm_saved *saved)
{
    size_t B = d->B, G = d->G, K = d->K, N = d->N, BG = B * G, KN = K * N;

    /* expand W (G, K, N) -> (B, G, K, N) is free (stride 0 over B); reshape to (B*G, K, N) is not: the view
     * is not contiguous, so reshape copies. This buffer is the 1 GiB of the forum post. */
    float *W_expanded = host_alloc_array(bmm_w_expanded_count(d), DT_F32,
                                         "W_expanded (B*G,K,N) saved for backward");
    for (size_t b = 0; b < B; b++) memcpy(W_expanded + b * G * KN, W, G * KN * sizeof(float));

    /* x (B, G, 1, K) reshapes to (B*G, 1, K) without a copy: it is contiguous already. */
    float *out = host_alloc_array(bmm_out_count(d), DT_F32, "out (B,G,N)");

    /* bmm: B*G independent (1 x K) . (K x N) products. x_bg is (1, K), W_expanded[bg] is (K, N). */
    sgemm_cpu_strided_batched(0, 0, 1, N, K, 1.0f, x, K, K, W_expanded, N, KN, 0.0f, out, N, N, BG);

    saved->W_expanded = W_expanded;
    return out;
}

void naive_bmm_backward(const bmm_dims *d, const float *x, naive_bmm_saved *saved, const float *dout,
                        float **dx, float **dW)
{
    size_t B = d->B, G = d->G, K = d->K, N = d->N, BG = B * G, KN = K * N;

    /* bmm backward, input gradient: dx_bg (1, K) = dout_bg (1, N) . W_expanded[bg]^T */
    float *gx = host_alloc_array(bmm_x_count(d), DT_F32, "dx (B,G*K)");
    sgemm_cpu_strided_batched(0, 1, 1, K, N, 1.0f, dout, N, N, saved->W_expanded, N, KN, 0.0f, gx, K, K, BG);

    /* bmm backward, weight gradient: one (K, N) outer product per (b, g) -- as large as the copy. */
    float *dW_expanded = host_alloc_array(bmm_w_expanded_count(d), DT_F32, "dW_expanded (B*G,K,N)");
    sgemm_cpu_strided_batched(1, 0, K, N, 1, 1.0f, x, K, K, dout, N, N, 0.0f, dW_expanded, N, KN, BG);

    /* bmm's node has run: autograd releases what it saved. */
    host_free(saved->W_expanded);
    saved->W_expanded = NULL;

    /* expand backward: sum the expanded gradient over B. */
    float *gW = host_alloc_array(bmm_w_count(d), DT_F32, "dW (G,K,N)");
    memcpy(gW, dW_expanded, G * KN * sizeof(float));
    for (size_t b = 1; b < B; b++) {
        const float *src = dW_expanded + b * G * KN;
        for (size_t i = 0; i < G * KN; i++) gW[i] += src[i];
    }
    host_free(dW_expanded);

    *dx = gx;
    *dW = gW;
}

void naive_bmm_discard(naive_bmm_saved *saved)
{
    host_free(saved->W_expanded);
    saved->W_expanded = NULL;
}

bmm_memory naive_bmm_memory(const bmm_dims *d)
{
    size_t f = sizeof(float);
    size_t x = size_mul(f, bmm_x_count(d)), w = size_mul(f, bmm_w_count(d));
    size_t wexp = size_mul(f, bmm_w_expanded_count(d)), out = size_mul(f, bmm_out_count(d));
    bmm_memory m = {0, 0, 0};
    m.forward_live = size_add(size_add(x, w), size_add(wexp, out));
    /* + dout (same size as out) + dx (same as x) + dW_expanded (same as W_expanded) */
    m.peak = size_add(m.forward_live, size_add(size_add(out, x), wexp));
    m.allocs = 8; /* x, W, W_expanded, out | dout, dx, dW_expanded, dW */
    return m;
}
