/* gemm_matmul.h - oneDNN matmul primitives behind the CPU GEMM layer (gemm_cpu.c), one per shape, cached.
 *
 * Row-major, the arguments of sgemm_cpu: C (M, N) f32 = alpha op(A) op(B) + beta C, lda/ldb/ldc row strides
 * in elements, A stored (M, K) or (K, M) when transA, B stored (K, N) or (N, K) when transB. The operands are
 * float32 (GEMM_MM_F32) or bfloat16 (GEMM_MM_BF16: bf16 inputs, float32 accumulation and output, the
 * arithmetic of PyTorch's CPU bf16 matmul, which is this library). Creating a primitive JIT-compiles its
 * kernel, about a millisecond: it is done once per distinct shape, then the cached one runs (a small table,
 * least recently used out). beta == 0 means C is written, never read.
 */
#ifndef KERNELS_GEMM_MATMUL_H
#define KERNELS_GEMM_MATMUL_H

#include <stddef.h>

typedef enum { GEMM_MM_F32, GEMM_MM_BF16 } gemm_mm_type;

/* 0 when done; -1 when oneDNN has no implementation for it here (bf16 on a CPU without AVX-512). */
int gemm_matmul(gemm_mm_type t, int transA, int transB, size_t M, size_t N, size_t K, float alpha,
                const void *A, size_t lda, const void *B, size_t ldb, float beta, float *C, size_t ldc);

/* oneDNN's name of the kernel it picks for a 256^3 product of type t with these transposes, row strides
 * padded by `pad` elements and this beta ("brg:avx512_core_bf16", "gemm:jit", ...; "ref:any" is its plain C
 * reference loop), or NULL when it has none. */
const char *gemm_matmul_kernel(gemm_mm_type t, int transA, int transB, size_t pad, float beta);

/* The instruction set oneDNN dispatches to here ("avx2", "avx512_core_bf16", ...; DNNL_MAX_CPU_ISA caps
 * it). */
const char *gemm_onednn_isa(void);

#endif
