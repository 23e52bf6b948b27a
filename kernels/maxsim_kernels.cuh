/* maxsim_kernels.cuh - lesson 3's CUDA kernels (kernels/maxsim_kernels.cu), declared for the host code in
 * optimized/maxsim_fused.cu. Row r = i*J + j of a [I*J, K], row c = m*N + n of b [M*N, K]; arg is [I*J, M]. */
#ifndef KERNELS_MAXSIM_KERNELS_CUH
#define KERNELS_MAXSIM_KERNELS_CUH

/* v1: one thread per (i, m); out may be NULL (backward's recompute), arg may be NULL (--recompute forward). */
__global__ void ms_forward_v1(int I, int J, int M, int N, int K, const float *a, const float *b, float *out,
                              int *arg);
/* v2: one block of MS_THREADS per (i, m), blockIdx.x = i*M + m; shared-memory tiles, max/argmax epilogue. */
__global__ void ms_forward_v2(int I, int J, int M, int N, int K, const float *a, const float *b, float *out,
                              int *arg);
/* v3: one block of MS3_THREADS per (m, i), blockIdx.x = m*I + i (i inner); TF32 WMMA score tiles, max/argmax
 * epilogue on the tile in shared memory (kernels/maxsim_kernels_v3.cu). */
__global__ void ms_forward_v3(int I, int J, int M, int N, int K, const float *a, const float *b, float *out,
                              int *arg);
/* da[r, :] = sum_m dout[i, m] b[m, arg[r, m], :]; one block per row r, every element written. */
__global__ void ms_da_kernel(int J, int M, int N, int K, const float *b, const float *dout, const int *arg,
                             float *da);
/* db[m, arg[r, m], :] += dout[i, m] a[r, :] by atomicAdd (db zeroed first); one block per row r. */
__global__ void ms_db_atomic_kernel(int J, int M, int N, int K, const float *a, const float *dout, const int *arg,
                                    float *db);
/* --deterministic: a stable counting sort of the rows by arg[., m], per m, in three parallel steps.
 * start [M, N+1] (zeroed first) ends as bucket n's rows list[m, start[m,n] .. start[m,n+1]), r ascending. */
/* 1: start[m, n+1] = how many rows have arg[r, m] == n; one thread per element of arg [R, M]. */
__global__ void ms_bucket_count_kernel(long long RM, int M, int N, const int *arg, int *start);
/* 2: one block of MS_SCAN_THREADS per m: start[m, 1..N] exclusive-scanned (bucket n begins at start[m, n+1]). */
__global__ void ms_bucket_scan_kernel(int N, int *start);
/* 3: one warp per m: rows into list [M, R], 32 at a time, stable; start[m, n+1] ends as bucket n's end. */
__global__ void ms_bucket_scatter_kernel(int R, int M, int N, const int *arg, int *start, int *list);
/* One block per (m, n): db[m, n, :] = sum over the bucket's rows, ascending, of dout[i, m] a[r, :]. */
__global__ void ms_db_bucket_kernel(int J, int M, int N, int K, int R, const float *a, const float *dout,
                                    const int *start, const int *list, float *db);

#endif
