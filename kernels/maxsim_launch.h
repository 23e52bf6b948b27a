/* maxsim_launch.h - lesson 3's CUDA launchers (kernels/maxsim_vN.cu), called by optimized/maxsim_fused.cu, which
 * owns the device memory. a [I,J,K], b [M,N,K], out [I,M], arg [I,J,M] int32: device pointers; CUDA sources only. */
#ifndef KERNELS_MAXSIM_LAUNCH_H
#define KERNELS_MAXSIM_LAUNCH_H

#include "maxsim_problem.h"

/* forward of each version: out may be NULL (recompute), arg may be NULL (--recompute forward) */
void ms1_forward(const ms_dims *d, const float *a, const float *b, float *out, int *arg);
void ms2_forward(const ms_dims *d, const float *a, const float *b, float *out, int *arg);
void ms3_forward(const ms_dims *d, const float *a, const float *b, float *out, int *arg);
void ms4_forward(const ms_dims *d, const float *a, const float *b, float *out, int *arg);
/* f16: the operands rounded to fp16, else bf16 */
void ms5_forward(const ms_dims *d, const float *a, const float *b, int f16, float *out, int *arg);
/* backward, every version (kernels/maxsim_v1.cu): da [I,J,K]; db [M,N,K] by atomics, or by buckets with
 * start [M,N+1] and list [M,I*J] int32 scratch. */
void ms_backward_da(const ms_dims *d, const float *b, const float *dout, const int *arg, float *da);
void ms_backward_db_atomic(const ms_dims *d, const float *a, const float *dout, const int *arg, float *db);
void ms_backward_db_buckets(const ms_dims *d, const float *a, const float *dout, const int *arg, int *start,
                            int *list, float *db);

#endif
