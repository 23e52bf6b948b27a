/* bmm_grouped.c - lesson 1's grouped GEMM on the CPU. */
#include "bmm_grouped.h"

#include "gemm_cpu.h"
#include "track.h"

float *cpu_bmm_forward(const bmm_dims *d, const float *x, const float *W)
{
    size_t B = d->B, G = d->G, K = d->K, N = d->N;
    float *out = host_alloc_array(bmm_out_count(d), DT_F32, "out (B,G,N)");
    /* out_g (B, N; ld G*N) = x_g (B, K; ld G*K) . W_g (K, N; ld N), g = 0..G-1 */
    sgemm_cpu_strided_batched(0, 0, B, N, K, 1.0f, x, G * K, K, W, N, K * N, 0.0f, out, G * N, N, G);
    return out;
}

void cpu_bmm_backward(const bmm_dims *d, const float *x, const float *W, const float *dout, float **dx,
                      float **dW)
{
    size_t B = d->B, G = d->G, K = d->K, N = d->N;
    float *gx = host_alloc_array(bmm_x_count(d), DT_F32, "dx (B,G*K)");
    float *gW = host_alloc_array(bmm_w_count(d), DT_F32, "dW (G,K,N)");
    /* dx_g (B, K; ld G*K) = dout_g (B, N; ld G*N) . W_g^T (W_g stored (K, N)) */
    sgemm_cpu_strided_batched(0, 1, B, K, N, 1.0f, dout, G * N, N, W, N, K * N, 0.0f, gx, G * K, K, G);
    /* dW_g (K, N) = x_g^T (x_g stored (B, K; ld G*K)) . dout_g (B, N; ld G*N): the sum over B happens inside
     * the GEMM's reduction, so no (B, K, N) intermediate ever exists. */
    sgemm_cpu_strided_batched(1, 0, K, N, B, 1.0f, x, G * K, K, dout, G * N, N, 0.0f, gW, N, K * N, G);
    *dx = gx;
    *dW = gW;
}

bmm_memory cpu_bmm_memory(const bmm_dims *d)
{
    size_t f = sizeof(float);
    size_t x = size_mul(f, bmm_x_count(d)), w = size_mul(f, bmm_w_count(d)),
           out = size_mul(f, bmm_out_count(d));
    bmm_memory m = {0, 0, 0};
    m.forward_live = size_add(size_add(x, w), out);
    m.peak = size_add(m.forward_live, size_add(size_add(out, x), w)); /* + dout + dx + dW */
    m.allocs = 6;                                                     /* x, W, out | dout, dx, dW */
    return m;
}
