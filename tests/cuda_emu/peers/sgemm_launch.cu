/* sgemm_launch.cu - TEST-ONLY: siboehm/SGEMM_CUDA's kernels 1-12 (../shared/peers/sgemm_cuda, MIT, compiled
 * from there at build time, never copied here), each launched with the grid, block and template parameters its
 * src/runner.cu gives for the RTX A6000. Compiled twice: by g++ into the emulation build (predict_peers runs them)
 * and by nvcc -cubin for sm_80/86/90, whose SASS and line table the time model reads (tests/cuda_emu/emu_sass.cc).
 * C = alpha A B + beta C, row-major, A: [M, K], B: [K, N], C: [M, N]. */
#include "kernels/1_naive.cuh"
#include "kernels/2_kernel_global_mem_coalesce.cuh"
#include "kernels/3_kernel_shared_mem_blocking.cuh"
#include "kernels/4_kernel_1D_blocktiling.cuh"
#include "kernels/5_kernel_2D_blocktiling.cuh"
#include "kernels/6_kernel_vectorize.cuh"
#include "kernels/7_kernel_resolve_bank_conflicts.cuh"
#include "kernels/8_kernel_bank_extra_col.cuh"
#include "kernels/9_kernel_autotuned.cuh"
#include "kernels/10_kernel_warptiling.cuh"
#include "kernels/11_kernel_double_buffering.cuh"
#include "kernels/12_kernel_double_buffering.cuh"

#include "../../../kernels/runtime/launch.h"
#include "sgemm_launch.h"

/* runner.cu's tile choice for kernels 5-8: 128 x 128 tiles when M and N are both at least 128, else 64 x 64 */
#define TILED(kernel, BM, BN) \
    LAUNCH((kernel<BM, BN, 8, 8, 8>), dim3(CEIL_DIV(N, BN), CEIL_DIV(M, BM)), dim3((BM * BN) / 64), 0)

extern "C" void sgemm_peer_launch(int kernel, int M, int N, int K, float alpha, float *A, float *B, float beta,
                                  float *C)
{
    switch (kernel) {
    case 1: LAUNCH(sgemm_naive, dim3(CEIL_DIV(M, 32), CEIL_DIV(N, 32)), dim3(32, 32), 0)(M, N, K, alpha, A, B, beta, C); break;
    case 2:
        LAUNCH(sgemm_global_mem_coalesce<32>, dim3(CEIL_DIV(M, 32), CEIL_DIV(N, 32)), dim3(32 * 32), 0)
        (M, N, K, alpha, A, B, beta, C);
        break;
    case 3:
        LAUNCH(sgemm_shared_mem_block<32>, dim3(CEIL_DIV(M, 32), CEIL_DIV(N, 32)), dim3(32 * 32), 0)
        (M, N, K, alpha, A, B, beta, C);
        break;
    case 4:
        LAUNCH((sgemm1DBlocktiling<64, 64, 8, 8>), dim3(CEIL_DIV(N, 64), CEIL_DIV(M, 64)), dim3(64 * 64 / 8), 0)
        (M, N, K, alpha, A, B, beta, C);
        break;
    case 5:
        if (M >= 128 && N >= 128) TILED(sgemm2DBlocktiling, 128, 128)(M, N, K, alpha, A, B, beta, C);
        else TILED(sgemm2DBlocktiling, 64, 64)(M, N, K, alpha, A, B, beta, C);
        break;
    case 6:
        if (M >= 128 && N >= 128) TILED(sgemmVectorize, 128, 128)(M, N, K, alpha, A, B, beta, C);
        else TILED(sgemmVectorize, 64, 64)(M, N, K, alpha, A, B, beta, C);
        break;
    case 7:
        if (M >= 128 && N >= 128) TILED(sgemmResolveBankConflicts, 128, 128)(M, N, K, alpha, A, B, beta, C);
        else TILED(sgemmResolveBankConflicts, 64, 64)(M, N, K, alpha, A, B, beta, C);
        break;
    case 8:
        if (M >= 128 && N >= 128) TILED(sgemmResolveBankExtraCol, 128, 128)(M, N, K, alpha, A, B, beta, C);
        else TILED(sgemmResolveBankExtraCol, 64, 64)(M, N, K, alpha, A, B, beta, C);
        break;
    case 9: /* A6000: BK 16, TM = TN = 8, BM = BN = 128, K9_NUM_THREADS threads */
        LAUNCH((sgemmAutotuned<128, 128, 16, 8, 8>), dim3(CEIL_DIV(N, 128), CEIL_DIV(M, 128)), dim3(K9_NUM_THREADS), 0)
        (M, N, K, alpha, A, B, beta, C);
        break;
    case 10: /* A6000: 128 threads, BN = BM = 128, BK 16, WN = WM = 64, WNITER 4, TN 4, TM 8 */
        LAUNCH((sgemmWarptiling<128, 128, 16, 64, 64, 4, 8, 4, 128>), dim3(CEIL_DIV(N, 128), CEIL_DIV(M, 128)),
               dim3(128), 0)
        (M, N, K, alpha, A, B, beta, C);
        break;
    case 11: /* A6000: 256 threads, BN 256, BM 128, BK 16, WN 32, WM 128, WNITER 1, TN = TM = 8 */
        LAUNCH((sgemmDoubleBuffering<128, 256, 16, 128, 32, 1, 8, 8, 256>), dim3(CEIL_DIV(N, 256), CEIL_DIV(M, 128)),
               dim3(256), 0)
        (M, N, K, alpha, A, B, beta, C);
        break;
    case 12: /* A6000: 128 threads, BN = BM = 128, BK 16, WN = WM = 64, WNITER 4, TN 4, TM 8; cp.async by cuda::barrier */
        LAUNCH((runSgemmDoubleBuffering2<128, 128, 16, 64, 64, 4, 8, 4, 128>), dim3(CEIL_DIV(N, 128), CEIL_DIV(M, 128)),
               dim3(128), 0)
        (M, N, K, alpha, A, B, beta, C);
        break;
    }
}
