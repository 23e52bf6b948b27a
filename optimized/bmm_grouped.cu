/* bmm_grouped.cu - lesson 1 on the GPU: device memory around cuda-v1's three GEMMs (kernels/bmm_v1.cu). */
#include "bmm_grouped.h"

#include "../kernels/bmm_launch.h"
#include "../kernels/runtime/cuda_track.h"

extern "C" float *cuda_bmm_forward(const bmm_dims *d, const float *x, const float *W)
{
    float *out = (float *)dev_alloc_array(bmm_out_count(d), DT_F32, "out (B,G,N)"); /* (B, G, N) */
    bmm1_forward(d, x, W, out);
    return out;
}

extern "C" void cuda_bmm_backward(const bmm_dims *d, const float *x, const float *W, const float *dout,
                                  float **dx, float **dW)
{
    float *gx = (float *)dev_alloc_array(bmm_x_count(d), DT_F32, "dx (B,G*K)"); /* (B, G*K) */
    float *gW = (float *)dev_alloc_array(bmm_w_count(d), DT_F32, "dW (G,K,N)"); /* (G, K, N) */
    bmm1_backward(d, x, W, dout, gx, gW);
    *dx = gx;
    *dW = gW;
}
