/* sgemm_launch.h - TEST-ONLY: launch SGEMM_CUDA's kernel 1-12 as its runner.cu does (sgemm_launch.cu). */
#ifndef SGEMM_LAUNCH_H
#define SGEMM_LAUNCH_H
#ifdef __cplusplus
extern "C" {
#endif
/* C[M, N] = alpha A[M, K] B[K, N] + beta C, row-major device arrays */
void sgemm_peer_launch(int kernel, int M, int N, int K, float alpha, float *A, float *B, float beta, float *C);
#ifdef __cplusplus
}
#endif
#endif
