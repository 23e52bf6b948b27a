/* maxsim_cuda.h - lesson 3's CUDA versions as C sees them: each version's forward and backward
 * (kernels/maxsim_vN.cu) and the memory formula and fit checks (optimized/maxsim_cuda_memory.c, plain C: the
 * driver predicts them without nvcc). Pointers are device pointers: a [I,J,K], b [M,N,K]. Forward allocates
 * and returns out [I,M] and, unless recompute, saves the int32 argmax [I,J,M]; backward allocates *da [I,J,K]
 * and *db [M,N,K] from dout [I,M] (db by atomics, or by buckets when deterministic) and frees the argmax. */
#ifndef OPTIMIZED_MAXSIM_CUDA_H
#define OPTIMIZED_MAXSIM_CUDA_H

#include <stdint.h>
#include "../kernels/maxsim_problem.h"
#include "../kernels/runtime/mem_formula.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int32_t *arg; /* [I, J, M] on the device, or NULL when recompute */
    int recompute, deterministic, f16; /* f16: cuda-v5's operands fp16, not bf16 */
} cuda_ms_saved;

float *ms1_forward(const ms_dims *d, const float *a, const float *b, int recompute, int deterministic,
                   cuda_ms_saved *s);
void ms1_backward(const ms_dims *d, const float *a, const float *b, cuda_ms_saved *s, const float *dout,
                  float **da, float **db);
/* v1's gradients from the argmax arg [I,J,M] (freed here): the backward of every version */
void ms1_grads(const ms_dims *d, const float *a, const float *b, int deterministic, int *arg,
               const float *dout, float **da, float **db);
float *ms2_forward(const ms_dims *d, const float *a, const float *b, int recompute, int deterministic,
                   cuda_ms_saved *s);
void ms2_backward(const ms_dims *d, const float *a, const float *b, cuda_ms_saved *s, const float *dout,
                  float **da, float **db);
float *ms3_forward(const ms_dims *d, const float *a, const float *b, int recompute, int deterministic,
                   cuda_ms_saved *s);
void ms3_backward(const ms_dims *d, const float *a, const float *b, cuda_ms_saved *s, const float *dout,
                  float **da, float **db);
float *ms4_forward(const ms_dims *d, const float *a, const float *b, int recompute, int deterministic,
                   cuda_ms_saved *s);
void ms4_backward(const ms_dims *d, const float *a, const float *b, cuda_ms_saved *s, const float *dout,
                  float **da, float **db);
/* f16: the operands rounded to fp16, else bf16 */
float *ms5_forward(const ms_dims *d, const float *a, const float *b, int recompute, int deterministic,
                   int f16, cuda_ms_saved *s);
void ms5_backward(const ms_dims *d, const float *a, const float *b, cuda_ms_saved *s, const float *dout,
                  float **da, float **db);

/* Device bytes (no cuBLAS: the kernels are our own); staged16: cuda-v5's 16-bit copies of a and b. */
mem_formula cuda_ms_memory(const ms_dims *d, int recompute, int deterministic, int staged16);
/* NULL when the problem fits the kernels' int32 argmax and grid limits, else why not. */
const char *cuda_ms_unfit(const ms_dims *d);
/* cuda-v4 and v5: cuda_ms_unfit, and K <= 256 (a[i]'s resident rows of K beside the pipeline). */
const char *cuda_ms4_unfit(const ms_dims *d);
/* cuda-v4, v5 (CUDA builds only): K <= 256 and the launch within the device's limits (cuda_fit.h) */
const char *ms4_unfit(const ms_dims *d);
const char *ms5_unfit(const ms_dims *d);

#ifdef __cplusplus
}
#endif

#endif
