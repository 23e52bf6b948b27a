/* planted_hopper_model.cu - TEST-ONLY: two sm_90a kernels for the time model's tests (test_emu_model.c),
 * each bound by one resource on an H100 by construction:
 *   wgmma_loop: one warpgroup per block, A (64 x 64) and B (256 x 64) in shared memory (128-byte swizzle),
 *               then reps groups of 4 wgmma m64n256k16 (bf16, or m64n256k8 tf32 on the same bytes) on them:
 *               tensor work only, a few hundred bytes of global memory per block.
 *   tma_stream: one warp per block streams its slab of a [rows, cols] bf16 tensor in boxes of 128 rows x 64
 *               columns (no swizzle) through a 4-stage mbarrier ring, lane l reading row l of each box: the
 *               boxes' bytes, read once, are the work. cols need not be a multiple of 64 (the TMA fills
 *               zeros). */
#include <hopper_ptx.h>
#include <stdint.h>

#include "../../kernels/runtime/cuda_check.h"
#include "../../kernels/runtime/launch.h"
#include "../../kernels/runtime/tma_map.h"
#include "planted.h"

#define ROW 128   /* bytes of a 128-byte-swizzled row */
#define ATOM 1024 /* the swizzle atom */
#define BOX_ROWS 128
#define BOX_COLS 64
#define STAGES 4

__device__ static char *align_atom(char *p)
{
    return (char *)(((uintptr_t)p + ATOM - 1) & ~(uintptr_t)(ATOM - 1));
}

/* out[block * 128 + thread]: the sum of the thread's accumulators (something the group's result decides) */
template <int TF32> __global__ void wgmma_loop(float *out, int reps)
{
    DYNAMIC_SHARED(char, raw);
    char *As = align_atom(raw), *Bs = As + 64 * ROW;
    int lt = threadIdx.x;
    for (int i = lt; i < (64 + 256) * ROW / 4; i += 128) /* 0x3f80 in each half: 1.0 in bf16 */
        ((uint32_t *)As)[i] = 0x3f803f80u;
    fence_proxy_async();
    __syncthreads();
    float d[128];
    for (int j = 0; j < 128; j++) d[j] = 0.0f;
    for (int r = 0; r < reps; r++) {
        wgmma_fence();
        for (int k = 0; k < 4; k++) { /* the 4 slices of K in one swizzled row: 32 bytes each */
            uint64_t da = wgmma_desc(As + 32 * k, 16, ATOM, WGMMA_SWIZZLE_128B);
            uint64_t db = wgmma_desc(Bs + 32 * k, 16, ATOM, WGMMA_SWIZZLE_128B);
            if constexpr (TF32) wgmma_tf32_m64n256k8(d, da, db, 1);
            else wgmma_bf16_m64n256k16(d, da, db, 1);
        }
        wgmma_commit();
        wgmma_wait<0>();
    }
    float s = 0.0f;
    for (int j = 0; j < 128; j++) s += d[j];
    out[blockIdx.x * 128 + lt] = s;
}

int planted_hopper_wgmma_loop(int blocks, int reps, int tf32, float *out)
{
    float *d_out;
    size_t smem = ATOM + (64 + 256) * ROW;
    CUDA_CHECK(cudaMalloc((void **)&d_out, (size_t)blocks * 128 * sizeof(float)));
    void (*kernel)(float *, int) = tf32 ? wgmma_loop<1> : wgmma_loop<0>;
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    LAUNCH(kernel, blocks, 128, smem)(d_out, reps);
    int err = (int)cudaGetLastError();
    CUDA_CHECK(cudaMemcpy(out, d_out, (size_t)blocks * 128 * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_out));
    return err;
}

/* Block b streams rows [b * rows_per_block, (b + 1) * rows_per_block), every column tile of them; thread 0
 * keeps STAGES boxes in flight. out[block * 32 + lane]: the lane's sum of column 0 of its row of every box.
 */
__global__ void tma_stream(const __grid_constant__ CUtensorMap map, float *out, int rows_per_block, int cols)
{
    enum { BOX_BYTES = BOX_ROWS * BOX_COLS * 2 };
    DYNAMIC_SHARED(char, raw);
    char *ring = align_atom(raw);
    uint64_t *full = (uint64_t *)(ring + STAGES * BOX_BYTES);
    int lane = threadIdx.x, tiles = (cols + BOX_COLS - 1) / BOX_COLS;
    int boxes = rows_per_block / BOX_ROWS * tiles;
    int row0 = blockIdx.x * rows_per_block;
    if (lane == 0) {
        for (int s = 0; s < STAGES; s++) mbarrier_init(&full[s], 1);
        fence_proxy_async();
        for (int t = 0; t < STAGES && t < boxes; t++) {
            mbarrier_arrive_expect_tx(&full[t], BOX_BYTES);
            tma_load_2d(ring + t * BOX_BYTES, &map, t % tiles * BOX_COLS, row0 + t / tiles * BOX_ROWS,
                        &full[t]);
        }
    }
    __syncwarp();
    float acc = 0.0f;
    for (int t = 0; t < boxes; t++) {
        int s = t % STAGES;
        mbarrier_wait_parity(&full[s], (t / STAGES) & 1);
        uint16_t bits = *(const uint16_t *)(ring + s * BOX_BYTES + lane * BOX_COLS * 2);
        acc += (float)bits;
        __syncwarp();
        int next = t + STAGES;
        if (lane == 0 && next < boxes) {
            mbarrier_arrive_expect_tx(&full[s], BOX_BYTES);
            tma_load_2d(ring + s * BOX_BYTES, &map, next % tiles * BOX_COLS, row0 + next / tiles * BOX_ROWS,
                        &full[s]);
        }
    }
    out[blockIdx.x * 32 + lane] = acc;
}

int planted_hopper_tma_stream(int rows, int cols, int blocks, float *out)
{
    void *src;
    float *d_out;
    size_t bytes = (size_t)rows * cols * 2, smem = ATOM + STAGES * BOX_ROWS * BOX_COLS * 2 + STAGES * 8;
    CUDA_CHECK(cudaMalloc(&src, bytes));
    CUDA_CHECK(cudaMemset(src, 0x3f, bytes));
    CUDA_CHECK(cudaMalloc((void **)&d_out, (size_t)blocks * 32 * sizeof(float)));
    CUtensorMap map = tma_map_2d(src, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, rows, cols, cols, BOX_ROWS,
                                 BOX_COLS, CU_TENSOR_MAP_SWIZZLE_NONE);
    CUDA_CHECK(cudaFuncSetAttribute(tma_stream, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    LAUNCH(tma_stream, blocks, 32, smem)(map, d_out, rows / blocks, cols);
    int err = (int)cudaGetLastError();
    CUDA_CHECK(cudaMemcpy(out, d_out, (size_t)blocks * 32 * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(src)), CUDA_CHECK(cudaFree(d_out));
    return err;
}
