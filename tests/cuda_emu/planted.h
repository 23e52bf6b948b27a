/* planted.h - TEST-ONLY: small kernels, each a correct version and a version with one planted bug, run on
 * the CPU emulator by test_emu.c. Each runner uploads its input, launches, downloads, and returns the
 * cudaError_t (or cublasStatus_t) it got: the test then checks the error and emu_last_error_message(). */
#ifndef CUDA_EMU_PLANTED_H
#define CUDA_EMU_PLANTED_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Reverses each 256-element block of in (n elements) into out through shared memory.
 * bug: 0 correct; 1 no __syncthreads between the write and the read; 2 __syncthreads inside `if (t < 128)`;
 *      3 early return for i >= n before the __syncthreads (n not a multiple of 256) */
int planted_reverse(int bug, const float *in, float *out, int n);

/* A cooperative launch of `blocks` blocks of 64 threads: out[i] = in[i of the next block] + 1 + 3 in[i], through a
 * global stage and each block's shared memory across a grid.sync (planted_grid.cu).
 * bug: 0 correct; 1 no grid.sync between the stage's writes and the neighbour's reads; 2 block 0 returns before
 *      the grid.sync; 3 the correct kernel in an ordinary (not cooperative) launch */
int planted_grid_sync(int bug, const float *in, float *out, int blocks);

/* Sums each warp's 32 values (n a multiple of 32) into sums[n / 32] with __shfl_down_sync.
 * bug: 0 correct; 1 the last halving step is skipped (offsets 16..2); 2 a 16-lane mask 0x0000ffff with
 *      offsets from 16, so lanes read lanes outside the mask; 3 the 16-lane sum with offsets from 8 (correct) */
int planted_warp_sum(int bug, const float *in, float *sums, int n);

/* Not a bug: one block of 64 threads runs every warp operation (see planted_warp.cu); res is (64, 7). */
int planted_warp_semantics(const int *in, int *res);

/* out[i] = 2 in[i] for i < n. bug: 0 correct; 1 the guard is i <= n (writes out[n]); 2 out is a host pointer;
 * 3 a 2048-thread block */
int planted_scale(int bug, const float *in, float *out, int n);

/* Row-major C (M x N) = A (M x K) . B (K x N) through cublasSgemm. bug: 0 correct; 1 A's leading dimension
 * passed as M (the transposed matrix's), 2 as 2K (valid for cuBLAS but past the end of A). Returns the
 * cublasStatus_t. */
int planted_gemm(int bug, const float *A, const float *B, float *C, int M, int N, int K);

/* C (M x N) = A (M x K) . B (K x N), row-major, through cublasGemmEx with A and B converted to bf16 (their
 * values must be exact in bf16), and through cublasGemmStridedBatchedEx as batch 2 of the same problem with
 * stride 0 for A and B. types_ok 0 asks for a CUDA_R_16F C: CUBLAS_STATUS_NOT_SUPPORTED. Returns the status. */
int planted_gemm_ex(int types_ok, const float *A, const float *B, float *C, int M, int N, int K);

/* One warp, nvcuda::wmma: C = C0 + A . B, all 16 x 16 row-major floats (planted_wmma.cu). Returns the
 * cudaError_t; C is left as C0 when the launch fails. */
enum planted_wmma_variant {
    WMMA_TF32,           /* tf32 m16n16k8, row-major A and B, each x[i] converted by __float_to_tf32 */
    WMMA_TF32_RAW,       /* the same without the conversion: the tensor core truncates to tf32 */
    WMMA_TF32_COL_MAJOR, /* col_major A and B, accumulator loaded and stored mem_col_major */
    WMMA_BF16,           /* bf16 m16n16k16, A row_major, B col_major; C0 added elementwise on the fragment */
    WMMA_ASSUMES_LAYOUT, /* bug: writes x[i] to C by an assumed lane layout */
    WMMA_MISALIGNED,     /* bug: A's tile 4 bytes off 32-byte alignment */
    WMMA_BAD_LDM,        /* bug: A's ldm 18 floats (not a multiple of 4) */
    WMMA_BF16_BAD_LDM,   /* bug: A's ldm 12 bf16 (not a multiple of 8) */
    WMMA_HALF_WARP,      /* bug: lanes 16-31 exit before the load */
    WMMA_LANE_POINTERS   /* bug: odd lanes pass another pointer */
};
int planted_wmma(int variant, const float *A, const float *B, const float *C0, float *C);

/* Captures out = 2 in (n elements) on a created stream into a graph and replays it; before_launch gets out as it
 * was between capture and launch (zeros: capture runs nothing). bug: 0 correct; 1 a cudaMalloc inside the capture;
 * 2 a second captured kernel writes one past the end (found at the graph launch); 3 a cuBLAS call after
 * cublasSetStream with no workspace set again; 4 capture of the legacy default stream; 5 correct: the GEMM
 * out[0] = in[0]^2 captured after the scale, the workspace set again after cublasSetStream. Returns the cudaError_t
 * of the first step that failed (begin, end capture, or the synchronisation after the launch). */
int planted_graph(int bug, const float *in, float *out, int n, float *before_launch);

/* out[i] = 1 for i < n on a fresh cudaMalloc of n floats (run it dry above a few million: n = 2^31 + 1024 is
 * 8 GiB). bug: 0 correct (64-bit index); 1 an int index, which wraps past 2^31 - 1; 2 a 2-D grid with one
 * row of 2^16 elements per grid.y, over its 65535 limit past 2^32 elements. Returns the cudaError_t. */
int planted_fill(int bug, long long n);

/* One block of 32 threads sums a fresh cudaMalloc of n floats, each thread striding by 32 (run it dry: n = 2^31 - 1
 * is 8 GiB and 2^26 iterations per thread, of which a dry run runs 3). bug: 0 correct (64-bit index); 1 an int
 * index, whose last increment wraps past 2^31 - 1 while the loop condition still holds. Returns the cudaError_t. */
int planted_stride_sum(int bug, long long n);

/* One block of 64 threads with smem bytes of dynamic shared memory, after cudaFuncSetAttribute(kernel,
 * cudaFuncAttributeMaxDynamicSharedMemorySize, optin_bytes) when optin_bytes > 0. Returns the cudaError_t. */
int planted_smem(int optin_bytes, size_t smem);
/* cudaDevAttrMaxSharedMemoryPerBlockOptin of the emulated device */
int planted_optin_limit(void);
/* planted_smem behind the fit check (cuda_fit): -1 and the reason where the device does not fit it */
int planted_fitted_smem(size_t smem, const char **why);
int planted_device_cc(char *name, size_t len);
int planted_vector_load(int offset); /* a double loaded at in + offset floats: 0 and 2 aligned, 1 not */ /* major * 10 + minor; the device's name */

/* One block of `threads` threads of the kernel echo_threads (registers per thread from EMU_PTXAS). */
int planted_block(unsigned threads);

/* Bugs only the access-hook detectors see (planted_eyes.cu); n a multiple of 64, in[] small integers, out[]
 * has n / 64 floats (one per block), or one for the global sum. bug: 0 each block's sum by shared atomicAdd;
 * 1 by a plain `+=` on a shared float (racecheck); 2 every block atomicAdd's into out[0]; 3 a plain `+=` into
 * out[0] (inter-block hazard); 4 two warp sums merged; 5 four merged, two never written (shared initcheck). */
int planted_block_sum(int bug, const float *in, float *out, int n);

/* out[i] = acc[i] + in[i] for a device accumulator: bug 0 zeroed by cudaMemset; 1 a cudaMalloc nobody wrote;
 * 2 a dev_alloc (NaN-poisoned) nobody wrote (initcheck both). */
int planted_accumulate(int bug, const float *in, float *out, int n);

/* One warp, in[32 * 32], out[32]: bug 0 coalesced loads; 1 loads 128 bytes apart; 2 a conflict-free shared
 * round trip; 3 a 32-way bank conflict. Kernels load_coalesced, load_strided, smem_conflict_free,
 * smem_conflict32 (their profile is read with emu_profile_kernel). */
int planted_pattern(int bug, const float *in, float *out);

/* out[i] = 2 in[i] through shared tiles filled by cp.async (planted_async.cu). bug: 0 pipeline primitives,
 * two stages, zero fill past n; 1 no __pipeline_wait_prior before the read; 2 wait_prior(2), one batch too few;
 * 3 a 16-byte copy from a 4-byte aligned source; 4 a 12-byte copy; 5 cuda::memcpy_async bound to a cuda::barrier,
 * arrive_and_wait; 6 the tile read before arrive_and_wait; 7 a thread-scope cuda::pipeline (5-7: n a multiple of
 * 512). Returns the cudaError_t. */
int planted_async(int bug, const float *in, float *out, int n);

/* mma.sync through kernels/runtime/ptx/mma_ptx.h (planted_mma.cu). A and B are floats, stored on the device as
 * the variant's operand type (bf16 and f16 rounded to nearest even; tf32 as the floats themselves); C is
 * poisoned (NaN) before the launch. Returns the cudaError_t.
 * planted_mma_tile: one warp, C (16 x 8) = A (16 x 32) . B (32 x 8), all row-major, fragments loaded from global
 * memory by each lane as the PTX ISA lays them out. */
enum planted_mma_tile_variant {
    MMA_TILE_BF16,           /* m16n8k16 bf16 */
    MMA_TILE_F16,            /* m16n8k16 f16 */
    MMA_TILE_TF32,           /* m16n8k8 tf32, each operand converted by cvt.rna.tf32.f32 */
    MMA_TILE_TF32_RAW,       /* the same with the floats' bits as operands: the tensor core truncates them */
    MMA_TILE_WRONG_LANES,    /* bug (bf16): C stored with groupID and threadID_in_group swapped */
    MMA_TILE_HALF_WARP,      /* bug (bf16): lanes 16-31 return before the mma.sync */
    MMA_TILE_LDMATRIX_GLOBAL, /* bug (bf16): A's fragments by ldmatrix.x4 from rows in global memory */
    MMA_TILE_MIXED            /* bug: lanes 0-15 execute the bf16 mma.sync, lanes 16-31 the f16 one */
};
int planted_mma_tile(int variant, const float *A, const float *B, float *C);
/* planted_mma_block: C (M x N) = A (M x K) . B (K x N) row-major, M and N multiples of 64, K of 32; one 64 x 64
 * tile per block of 128 threads, each k-tile copied to shared memory by cp.async (16 bytes) and read by ldmatrix;
 * the first three variants read B as stored (K x N) with ldmatrix .trans, the others B^T (transposed on the host). */
enum planted_mma_block_variant {
    MMA_BLOCK_X4_TRANS, /* bf16: A by ldmatrix.x4, B by .x4.trans */
    MMA_BLOCK_X2_TRANS, /* f16: .x2 and .x2.trans */
    MMA_BLOCK_X1_TRANS, /* bf16: .x1 and .x1.trans */
    MMA_BLOCK_X4,       /* f16: .x4, B^T by .x4 */
    MMA_BLOCK_X2,       /* bf16: .x2 */
    MMA_BLOCK_X1,       /* f16: .x1 */
    MMA_BLOCK_TF32      /* tf32 m16n8k8: floats through ldmatrix.x4 (a 16-byte row is 4 floats), cvt.rna after */
};
enum planted_mma_block_bug {
    MMA_BLOCK_CORRECT,
    MMA_BLOCK_MISALIGNED,   /* A's ldmatrix row addresses 8 bytes off 16-byte alignment */
    MMA_BLOCK_NO_WAIT,      /* no cp.async.wait_group before the __syncthreads and the ldmatrix reads */
    MMA_BLOCK_CP_MISALIGNED, /* A's cp.async sources 8 bytes off 16-byte alignment */
    MMA_BLOCK_CP_TO_GLOBAL   /* A's cp.async destinations in global memory (C) instead of shared */
};
int planted_mma_block(int variant, int bug, const float *A, const float *B, float *C, int M, int N, int K);

/* sm_90a's layer through kernels/runtime/ptx/hopper_ptx.h and kernels/runtime/tma_map.h (planted_hopper.cu). A
 * and B are floats stored on the device as the operand type (bf16 and f16 rounded to nearest even; tf32 as the
 * floats); the output is poisoned (NaN) before the launch. Returns the cudaError_t.
 * planted_hopper_tile: one warpgroup, D (64 x n) = C0 + A (64 x K) . B^T, B given as n x K, K = 16 (8 for tf32),
 * n 64, 128 or 256; the threads store the operands in shared memory 128-byte swizzled (swizzled 1) or in the
 * unswizzled core-matrix layout, then one wgmma.mma_async.
 * planted_hopper_gemm: C (M x N) = A (M x K) . B^T, B given as N x K, bf16, bn 64, 128 or 256 (the wgmma's N);
 * TMA boxes of 128 x 64 and bn x 64 into a 2-stage mbarrier ring, one consumer warpgroup. K % 8 == 0 (the TMA's
 * 16-byte row stride); M, N and K need not be multiples of the tile (the boxes' outside reads as zeros). */
enum planted_hopper_op { HOPPER_BF16, HOPPER_F16, HOPPER_TF32 };
enum planted_hopper_tile_bug {
    HOPPER_TILE_CORRECT,
    HOPPER_TILE_NO_FENCE,       /* no fence.proxy.async between the generic stores and the wgmma */
    HOPPER_TILE_NO_WGMMA_FENCE, /* no wgmma.fence before the mma_async */
    HOPPER_TILE_ACC_IN_FLIGHT   /* an accumulator register written between commit_group and wait_group */
};
int planted_hopper_tile(int op, int n, int swizzled, int bug, const float *A, const float *B, const float *C0,
                        float *D);
/* planted_hopper_tile_mn: the same with the operands of trans (bit 0 A, bit 1 B) stored MN-major (k rows of M
 * or N contiguous elements) and read so (imm-trans 1), bf16 or f16, the 128-byte swizzle */
enum planted_hopper_mn_bug {
    HOPPER_MN_CORRECT,
    HOPPER_MN_SWAPPED,  /* LBO and SBO as K-major habit has them: wrong elements, the result wrong */
    HOPPER_MN_NO_TRANS, /* the data MN-major, the instruction's imm-trans 0: the result wrong */
    HOPPER_MN_LBO_ZERO, /* LBO 0 for a 128-wide B: the emulator refuses the descriptor */
    HOPPER_MN_OVERLAP   /* LBO = SBO: two elements at one address, refused */
};
int planted_hopper_tile_mn(int op, int n, int trans, int bug, const float *A, const float *B, const float *C0,
                           float *D);
enum planted_hopper_gemm_bug {
    HOPPER_GEMM_CORRECT,
    HOPPER_GEMM_WRONG_SWIZZLE,     /* the descriptors say no swizzle; the TMA wrote the tiles 128-byte swizzled */
    HOPPER_GEMM_NO_INIT_FENCE,     /* no fence.proxy.async after mbarrier.init */
    HOPPER_GEMM_EXPECT_TX_SMALL,   /* expect_tx 2048 bytes short of the two boxes */
    HOPPER_GEMM_EXPECT_TX_LARGE,   /* expect_tx 2048 bytes over: the phase never completes */
    HOPPER_GEMM_STALE_PHASE,       /* the consumer always waits with parity 0 */
    HOPPER_GEMM_RELEASE_IN_FLIGHT, /* the stage released (empty arrive) before wgmma.wait_group */
    HOPPER_GEMM_MISALIGNED,        /* the ring's tiles 128 bytes off the 1024-byte swizzle atom */
    HOPPER_GEMM_WAIT_ONE           /* correct: one group left in flight (wait_group 1), the previous stage
                                    * released after it, so a k-tile's wgmma chains onto the one in flight */
};
int planted_hopper_gemm(int bn, int bug, const float *A, const float *B, float *C, int M, int N, int K);
/* the same, correct, with B given K x N (Bkn, row-major), loaded by TMA in 64 x 64 boxes and read N-major; with
 * a_kmajor 0 also A given K x M (row-major), read M-major (bn 128 then) */
int planted_hopper_gemm_nmajor(int bn, int a_kmajor, const float *A, const float *Bkn, float *C, int M, int N,
                               int K);

/* planted_hopper_model.cu, for the time model's tests: blocks of one warpgroup running reps groups of 4 wgmma
 * m64n256k16 bf16 (tf32: m64n256k8) on operands in shared memory, out[blocks * 128]; and blocks of one warp
 * streaming a [rows, cols] bf16 tensor (rows a multiple of 128 x blocks, cols a multiple of 8) by TMA boxes
 * of 128 x 64 through a 4-stage ring, out[blocks * 32] */
int planted_hopper_wgmma_loop(int blocks, int reps, int tf32, float *out);
int planted_hopper_tma_stream(int rows, int cols, int blocks, float *out);

#ifdef __cplusplus
}
#endif

#endif
