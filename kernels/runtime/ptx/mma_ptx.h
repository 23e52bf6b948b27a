/* mma_ptx.h - the tensor-core instructions of sm_80 and later as small __device__ wrappers over inline PTX:
 * mma.sync (bf16, f16 and tf32 operands, float accumulators), ldmatrix (x1/x2/x4, optionally transposed),
 * cp.async.cg 16-byte copies with their commit and wait groups, cvt.rna.tf32.f32, and max.NaN.f32 (an
 * epilogue's max on the accumulators that NaN cannot slip past).
 *
 * A kernel writes `#include <mma_ptx.h>`: nvcc finds this file through -Ikernels/runtime/ptx (Makefile).
 * This directory holds the PTX headers only (this one, hopper_ptx.h), so that include path brings nothing
 * else. Why the angle brackets: the CPU emulator (tests/cuda_emu, test-only) has its own <mma_ptx.h> earlier
 * on its include path, with the same functions executed by the same documented semantics, exactly as it
 * answers <mma.h> and <cuda_pipeline.h>; so this file holds only what nvcc compiles, and no kernel holds a
 * line for the emulator.
 *
 * Every instruction here is .sync.aligned: all 32 lanes of the warp execute the same one (same qualifiers),
 * none exited, and under a branch only one the whole warp takes alike (PTX ISA, "Warp Level Matrix
 * Multiply-Accumulate Instructions: mma" and "ldmatrix": otherwise undefined).
 *
 * Lane ownership (PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type", "Matrix Fragments
 * for mma.m16n8k8" (.tf32), "Warp-level matrix load instruction: ldmatrix"). With lane = %laneid,
 *     g = lane / 4  (groupID)     t = lane % 4  (threadID_in_group)
 * m16n8k16, .bf16 or .f16: each 32-bit register holds two 16-bit elements, the lower-numbered column (A) or
 * row (B) in the low half:
 *     A (16 x 16, row):  a[0] = A[g    ][2t, 2t+1]    a[1] = A[g + 8][2t, 2t+1]
 *                        a[2] = A[g    ][2t+8, 2t+9]  a[3] = A[g + 8][2t+8, 2t+9]
 *     B (16 x 8, col):   b[0] = B[2t, 2t+1  ][g]      b[1] = B[2t+8, 2t+9][g]
 * m16n8k8, .tf32: one element per register:
 *     A (16 x 8, row):   a[0] = A[g][t]   a[1] = A[g + 8][t]   a[2] = A[g][t + 4]   a[3] = A[g + 8][t + 4]
 *     B (8 x 8, col):    b[0] = B[t][g]   b[1] = B[t + 4][g]
 * C and D (16 x 8, .f32), both shapes:
 *                        c[0], c[1] = C[g][2t], C[g][2t+1]     c[2], c[3] = C[g + 8][2t], C[g + 8][2t+1]
 * ldmatrix.m8n8.b16 loads .x1/.x2/.x4 8 x 8 matrices of 16-bit elements, each row 16 contiguous bytes of
 * shared memory at an address that is 16-byte aligned. Lane 8i + r supplies the address of row r of matrix i
 * (lanes 0-7 for .x1, 0-15 for .x2, all 32 for .x4; the other lanes' addresses are not used). Register i of
 * lane l receives from matrix i:  M[g][2t, 2t+1] (row g, two adjacent elements), or with .trans  M[2t][g],
 * M[2t+1][g]. So ldmatrix.x4 of A's four 8 x 8 quarters (rows 0-7 and 8-15, columns 0-7, then 8-15) gives
 * a[0..3] above; ldmatrix.x2 of B stored N-major (B^T's rows, K contiguous) gives b[0..1], and
 * ldmatrix.x2.trans of B stored K-major (row k holds n = 0..7) gives them too. The same loads serve tf32
 * operands as pairs of b16 halves: a 16-byte row is 4 floats, and register i of lane l is float t of row g,
 * which is a[i] (or b[i]) above.
 *
 * cp.async.cg.shared.global 16 bytes: both addresses 16-byte aligned, the destination in shared memory, the
 * source in global memory (PTX ISA, "Data Movement and Conversion Instructions: cp.async"). Copies join the
 * thread's current group; cp.async.commit_group closes it; cp.async.wait_group N waits until at most the
 * newest N committed groups of the thread are pending. The data is visible to the issuing thread after the
 * wait, to others only after a barrier that follows it.
 *
 * Numerics: products of bf16 or f16 (8- and 11-bit significands) and of tf32 (11 bits) are exact in fp32, and
 * each D element adds C and the k products in fp32; the hardware's order and internal rounding of that sum
 * are not documented, so compare tensor-core results with a tolerance. PTX documents no rounding for a tf32
 * operand register that holds a plain float: the tensor core reads its top 19 bits (truncation; the emulator
 * does the same). To round, convert with f32_to_tf32 first (cvt.rna: to nearest, ties away from zero). */
#ifndef KERNELS_RUNTIME_MMA_PTX_H
#define KERNELS_RUNTIME_MMA_PTX_H

#include <stdint.h>

namespace mma_ptx_detail {
/* the 32-bit .shared state-space address PTX's operands take, from a generic pointer into shared memory (the
 * wrappers' own step: kernels pass pointers, which is all the emulator's header takes too) */
__device__ __forceinline__ uint32_t shared_address(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}
} /* namespace mma_ptx_detail */

/* D = A . B + C, m16n8k16, bf16 operands (two per register), fp32 accumulators; d may be c */
__device__ __forceinline__ void mma_bf16_m16n8k16(float (&d)[4], const uint32_t (&a)[4],
                                                  const uint32_t (&b)[2], const float (&c)[4])
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
                   "f"(c[2]), "f"(c[3]));
}

/* the same with f16 operands */
__device__ __forceinline__ void mma_f16_m16n8k16(float (&d)[4], const uint32_t (&a)[4],
                                                 const uint32_t (&b)[2], const float (&c)[4])
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
                   "f"(c[2]), "f"(c[3]));
}

/* D = A . B + C, m16n8k8, tf32 operands (one per register: a float's bits), fp32 accumulators */
__device__ __forceinline__ void mma_tf32_m16n8k8(float (&d)[4], const uint32_t (&a)[4],
                                                 const uint32_t (&b)[2], const float (&c)[4])
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
                   "f"(c[2]), "f"(c[3]));
}

/* cvt.rna.tf32.f32: x rounded to tf32 (to nearest, ties away from zero), the bits mma_tf32_m16n8k8 takes */
__device__ __forceinline__ uint32_t f32_to_tf32(float x)
{
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
}

/* max.NaN.f32 (sm_80): the larger of x and y, or a canonical NaN when either is NaN; fmaxf returns the other
 * operand, so a fold that must see NaN would need a second compare per element */
__device__ __forceinline__ float fmax_nan(float x, float y)
{
    float r;
    asm("max.NaN.f32 %0, %1, %2;\n" : "=f"(r) : "f"(x), "f"(y));
    return r;
}

/* ldmatrix: row points into shared memory at this lane's row address (see the top of the file) */
__device__ __forceinline__ void ldmatrix_x1(uint32_t &r0, const void *row)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n"
                 : "=r"(r0)
                 : "r"(mma_ptx_detail::shared_address(row))
                 : "memory");
}

__device__ __forceinline__ void ldmatrix_x2(uint32_t &r0, uint32_t &r1, const void *row)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(r0), "=r"(r1)
                 : "r"(mma_ptx_detail::shared_address(row))
                 : "memory");
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t &r0, uint32_t &r1, uint32_t &r2, uint32_t &r3,
                                            const void *row)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(mma_ptx_detail::shared_address(row))
                 : "memory");
}

__device__ __forceinline__ void ldmatrix_x1_trans(uint32_t &r0, const void *row)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\n"
                 : "=r"(r0)
                 : "r"(mma_ptx_detail::shared_address(row))
                 : "memory");
}

__device__ __forceinline__ void ldmatrix_x2_trans(uint32_t &r0, uint32_t &r1, const void *row)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(r0), "=r"(r1)
                 : "r"(mma_ptx_detail::shared_address(row))
                 : "memory");
}

__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t &r0, uint32_t &r1, uint32_t &r2, uint32_t &r3,
                                                  const void *row)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(mma_ptx_detail::shared_address(row))
                 : "memory");
}

/* cp.async.cg: 16 bytes from global src to shared dst, cached in L2 only (not L1: read from shared) */
__device__ __forceinline__ void cp_async_16(void *dst, const void *src)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n"
                 :
                 : "r"(mma_ptx_detail::shared_address(dst)), "l"(src)
                 : "memory");
}

__device__ __forceinline__ void cp_async_commit(void)
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/* every committed group of this thread but the newest N has landed (N is an immediate in PTX) */
template <int N> __device__ __forceinline__ void cp_async_wait(void)
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

#endif
