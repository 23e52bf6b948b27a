/* planted_mma.cu - TEST-ONLY: mma.sync, ldmatrix and cp.async through kernels/runtime/ptx/mma_ptx.h, right
 * and wrong (see planted.h). The same file compiles with nvcc against the product header (make ptx-check).
 *   mma_tile:  one warp, C (16 x 8) = A (16 x 32) . B (32 x 8), each lane loading its fragment registers
 *              from global memory as the PTX ISA lays them out (the product header's top comment), and
 *              storing C so.
 *   mma_block: C (M x N) = A (M x K) . B, one 64 x 64 tile per block of four warps (each 32 x 32), each
 *              k-tile of 32 bytes per row copied to shared memory by cp.async and read by ldmatrix. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma_ptx.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernels/runtime/cuda_check.h"
#include "../../kernels/runtime/launch.h"
#include "planted.h"

#define TILE_K 32 /* the tile kernel's K: two m16n8k16 steps, four m16n8k8 */

enum operand { OP_BF16, OP_F16, OP_TF32 };

/* two adjacent 16-bit elements as one register, the lower index in the low half (the PTX ISA's packing) */
__device__ uint32_t pair(const uint16_t *p, int stride) { return (uint32_t)p[0] | (uint32_t)p[stride] << 16; }

__device__ float bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

__device__ uint32_t tf32_operand(float x, int convert)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    return convert ? f32_to_tf32(x) : u;
}

/* A: 16 x TILE_K, B: TILE_K x 8, both row-major, 16-bit bits (bf16 or f16) or floats (tf32) */
__global__ void mma_tile(const void *A, const void *B, float *C, int op, int variant)
{
    int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    float c[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    uint32_t a[4], b[2];
    if (op == OP_TF32) {
        const float *fa = (const float *)A, *fb = (const float *)B;
        int convert = variant != MMA_TILE_TF32_RAW;
        for (int k = 0; k < TILE_K; k += 8) {
            a[0] = tf32_operand(fa[g * TILE_K + k + t], convert);
            a[1] = tf32_operand(fa[(g + 8) * TILE_K + k + t], convert);
            a[2] = tf32_operand(fa[g * TILE_K + k + t + 4], convert);
            a[3] = tf32_operand(fa[(g + 8) * TILE_K + k + t + 4], convert);
            b[0] = tf32_operand(fb[(k + t) * 8 + g], convert);
            b[1] = tf32_operand(fb[(k + t + 4) * 8 + g], convert);
            mma_tf32_m16n8k8(c, a, b, c);
        }
    } else {
        const uint16_t *ha = (const uint16_t *)A, *hb = (const uint16_t *)B;
        for (int k = 0; k < TILE_K; k += 16) {
            if (variant == MMA_TILE_LDMATRIX_GLOBAL) /* PLANTED: ldmatrix's rows in global memory */
                ldmatrix_x4(a[0], a[1], a[2], a[3], ha + (lane % 16) * TILE_K + k + lane / 16 * 8);
            else {
                a[0] = pair(ha + g * TILE_K + k + 2 * t, 1);
                a[1] = pair(ha + (g + 8) * TILE_K + k + 2 * t, 1);
                a[2] = pair(ha + g * TILE_K + k + 2 * t + 8, 1);
                a[3] = pair(ha + (g + 8) * TILE_K + k + 2 * t + 8, 1);
            }
            b[0] = pair(hb + (k + 2 * t) * 8 + g, 8), b[1] = pair(hb + (k + 2 * t + 8) * 8 + g, 8);
            if (variant == MMA_TILE_HALF_WARP && lane >= 16) return; /* PLANTED: half the warp leaves */
            if (op == OP_BF16 && !(variant == MMA_TILE_MIXED && lane >= 16)) /* PLANTED (MIXED) */
                mma_bf16_m16n8k16(c, a, b, c);
            else
                mma_f16_m16n8k16(c, a, b, c);
        }
    }
    if (variant == MMA_TILE_WRONG_LANES) g = lane % 8, t = lane / 8; /* PLANTED: groupID and thread swapped */
    C[g * 8 + 2 * t] = c[0], C[g * 8 + 2 * t + 1] = c[1];
    C[(g + 8) * 8 + 2 * t] = c[2], C[(g + 8) * 8 + 2 * t + 1] = c[3];
}

#define BLOCK_TILE 64 /* a block's C tile is 64 x 64, a warp's 32 x 32 */
#define ROW_BYTES 32  /* one k-tile of A (and of B^T): 16 16-bit elements or 8 floats per row */

/* NUM 8 x 8 matrices per ldmatrix, count of them in all: register regs[q] gets matrix q, whose row r is at
 * row(q, r); lane 8i + r supplies row r of the instruction's matrix i */
template <int NUM, int TRANS, class Row> __device__ void load_matrices(uint32_t *regs, int count, Row row)
{
    int lane = threadIdx.x % 32;
    for (int q0 = 0; q0 < count; q0 += NUM) {
        const void *p = row(q0 + lane / 8 % NUM, lane % 8);
        uint32_t *r = regs + q0;
        if (NUM == 1 && TRANS) ldmatrix_x1_trans(r[0], p);
        if (NUM == 1 && !TRANS) ldmatrix_x1(r[0], p);
        if (NUM == 2 && TRANS) ldmatrix_x2_trans(r[0], r[1], p);
        if (NUM == 2 && !TRANS) ldmatrix_x2(r[0], r[1], p);
        if (NUM == 4 && TRANS) ldmatrix_x4_trans(r[0], r[1], r[2], r[3], p);
        if (NUM == 4 && !TRANS) ldmatrix_x4(r[0], r[1], r[2], r[3], p);
    }
}

/* A: M x K row-major; B: K x N row-major when TRANS (read by ldmatrix .trans), else B^T: N x K row-major.
 * Elements of 2 bytes (bf16, f16) or 4 (tf32: floats, B^T only, converted by cvt.rna after the load). bug: 0
 * correct, MMA_BLOCK_MISALIGNED, MMA_BLOCK_NO_WAIT or MMA_BLOCK_CP_MISALIGNED. */
template <int OP, int NUM, int TRANS>
__global__ void mma_block(const char *A, const char *B, float *C, int N, int K, int bug)
{
    __shared__ __align__(128) char As[BLOCK_TILE * ROW_BYTES], Bs[BLOCK_TILE * ROW_BYTES];
    enum { ES = OP == OP_TF32 ? 4 : 2, KT = ROW_BYTES / ES }; /* element size; elements per k-tile */
    int tid = threadIdx.x, lane = tid % 32, w = tid / 32, g = lane / 4, t = lane % 4;
    int m0 = blockIdx.y * BLOCK_TILE, n0 = blockIdx.x * BLOCK_TILE, wm = w / 2 * 32, wn = w % 2 * 32;
    float acc[2][4][4] = {};
    for (int k0 = 0; k0 < K; k0 += KT) {
        /* 128 threads, 128 16-byte chunks per operand tile */
        int shift = bug == MMA_BLOCK_CP_MISALIGNED ? 8 : 0; /* PLANTED: 8 bytes off 16-byte alignment */
        char *to = bug == MMA_BLOCK_CP_TO_GLOBAL ? (char *)C : As; /* PLANTED: a global destination */
        cp_async_16(to + tid * 16, A + (size_t)(m0 + tid / 2) * K * ES + k0 * ES + tid % 2 * 16 + shift);
        if (TRANS) /* 16 rows of k, 128 bytes of n each */
            cp_async_16(Bs + tid * 16, B + (size_t)(k0 + tid / 8) * N * ES + n0 * ES + tid % 8 * 16);
        else
            cp_async_16(Bs + tid * 16, B + (size_t)(n0 + tid / 2) * K * ES + k0 * ES + tid % 2 * 16);
        cp_async_commit();
        if (bug != MMA_BLOCK_NO_WAIT) cp_async_wait<0>(); /* PLANTED (NO_WAIT): read before the copy landed */
        __syncthreads();
        uint32_t a[2][4], b[4][2];
        int off = bug == MMA_BLOCK_MISALIGNED ? 8 : 0; /* PLANTED: rows 8 bytes off 16-byte alignment */
        for (int mi = 0; mi < 2; mi++) /* matrix q: rows (q % 2) * 8, bytes (q / 2) * 16 of A's 16 x k-tile */
            load_matrices<NUM, 0>(a[mi], 4, [&](int q, int r) {
                return (const void *)(As + (wm + 16 * mi + q % 2 * 8 + r) * ROW_BYTES + q / 2 * 16 + off);
            });
        if (TRANS) /* matrix q = 2 ni + j: k rows 8j.., n columns wn + 8 ni.. */
            load_matrices<NUM, 1>(b[0], 8, [&](int q, int r) {
                return (const void *)(Bs + (q % 2 * 8 + r) * (BLOCK_TILE * ES) + (wn + q / 2 * 8) * ES);
            });
        else /* matrix q = 2 ni + j: n rows wn + 8 ni.., bytes 16 j of the k-tile */
            load_matrices<NUM, 0>(b[0], 8, [&](int q, int r) {
                return (const void *)(Bs + (wn + q / 2 * 8 + r) * ROW_BYTES + q % 2 * 16);
            });
        for (int mi = 0; mi < 2; mi++)
            for (int ni = 0; ni < 4; ni++) {
                if (OP == OP_TF32) {
                    uint32_t ta[4], tb[2];
                    for (int i = 0; i < 4; i++) ta[i] = tf32_operand(bits_float(a[mi][i]), 1);
                    for (int i = 0; i < 2; i++) tb[i] = tf32_operand(bits_float(b[ni][i]), 1);
                    mma_tf32_m16n8k8(acc[mi][ni], ta, tb, acc[mi][ni]);
                } else if (OP == OP_BF16)
                    mma_bf16_m16n8k16(acc[mi][ni], a[mi], b[ni], acc[mi][ni]);
                else
                    mma_f16_m16n8k16(acc[mi][ni], a[mi], b[ni], acc[mi][ni]);
            }
        __syncthreads(); /* the next k-tile's copies overwrite As and Bs */
    }
    for (int mi = 0; mi < 2; mi++)
        for (int ni = 0; ni < 4; ni++) {
            float *row0 = C + (size_t)(m0 + wm + 16 * mi + g) * N + n0 + wn + 8 * ni + 2 * t;
            row0[0] = acc[mi][ni][0], row0[1] = acc[mi][ni][1];
            row0[8 * N] = acc[mi][ni][2], row0[8 * N + 1] = acc[mi][ni][3];
        }
}

/* the operands as the device stores them: 16-bit bits (round to nearest even) or the floats themselves */
static void *upload_operand(const float *h, size_t n, int op)
{
    size_t es = op == OP_TF32 ? 4 : 2;
    char *tmp = (char *)malloc(n * es);
    void *d;
    for (size_t i = 0; i < n; i++) {
        uint16_t bits = 0;
        if (op == OP_BF16) {
            __nv_bfloat16 v = __float2bfloat16_rn(h[i]);
            memcpy(&bits, &v, 2);
        }
        if (op == OP_F16) {
            __half v = __float2half_rn(h[i]);
            memcpy(&bits, &v, 2);
        }
        if (op == OP_TF32)
            memcpy(tmp + 4 * i, h + i, 4);
        else
            memcpy(tmp + 2 * i, &bits, 2);
    }
    CUDA_CHECK(cudaMalloc(&d, n * es));
    CUDA_CHECK(cudaMemcpy(d, tmp, n * es, cudaMemcpyHostToDevice));
    free(tmp);
    return d;
}

static float *poisoned_output(size_t n)
{
    float *d;
    CUDA_CHECK(cudaMalloc((void **)&d, n * sizeof(float)));
    /* NaN: an element the kernel does not write stays so */
    CUDA_CHECK(cudaMemset(d, 0xff, n * sizeof(float)));
    return d;
}

int planted_mma_tile(int variant, const float *A, const float *B, float *C)
{
    int tf32 = variant == MMA_TILE_TF32 || variant == MMA_TILE_TF32_RAW;
    int op = variant == MMA_TILE_F16 ? OP_F16 : tf32 ? OP_TF32 : OP_BF16;
    void *dA = upload_operand(A, 16 * TILE_K, op), *dB = upload_operand(B, TILE_K * 8, op);
    float *dC = poisoned_output(16 * 8);
    LAUNCH(mma_tile, 1, 32, 0)(dA, dB, dC, op, variant);
    int err = (int)cudaGetLastError();
    CUDA_CHECK(cudaMemcpy(C, dC, 16 * 8 * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(dA)), CUDA_CHECK(cudaFree(dB)), CUDA_CHECK(cudaFree(dC));
    return err;
}

template <int OP, int NUM, int TRANS>
static void launch_block(dim3 grid, const char *A, const char *B, float *C, int N, int K, int bug)
{
    void (*mma_block_instance)(const char *, const char *, float *, int, int, int) =
        mma_block<OP, NUM, TRANS>;
    LAUNCH(mma_block_instance, grid, 128, 0)(A, B, C, N, K, bug); /* a name without commas for the macro */
}

int planted_mma_block(int variant, int bug, const float *A, const float *B, float *C, int M, int N, int K)
{
    static const int ops[] = {OP_BF16, OP_F16, OP_BF16, OP_F16, OP_BF16, OP_F16, OP_TF32};
    int op = ops[variant], trans = variant <= MMA_BLOCK_X1_TRANS;
    float *Bt = (float *)malloc((size_t)K * N * sizeof(float));
    for (int k = 0; k < K; k++)
        for (int n = 0; n < N; n++) Bt[(size_t)n * K + k] = B[(size_t)k * N + n];
    void *dA = upload_operand(A, (size_t)M * K, op), *dB = upload_operand(trans ? B : Bt, (size_t)K * N, op);
    free(Bt);
    float *dC = poisoned_output((size_t)M * N);
    dim3 grid(N / BLOCK_TILE, M / BLOCK_TILE);
    const char *a = (const char *)dA, *b = (const char *)dB;
    switch (variant) {
    case MMA_BLOCK_X4_TRANS:
        launch_block<OP_BF16, 4, 1>(grid, a, b, dC, N, K, bug);
        break;
    case MMA_BLOCK_X2_TRANS:
        launch_block<OP_F16, 2, 1>(grid, a, b, dC, N, K, bug);
        break;
    case MMA_BLOCK_X1_TRANS:
        launch_block<OP_BF16, 1, 1>(grid, a, b, dC, N, K, bug);
        break;
    case MMA_BLOCK_X4:
        launch_block<OP_F16, 4, 0>(grid, a, b, dC, N, K, bug);
        break;
    case MMA_BLOCK_X2:
        launch_block<OP_BF16, 2, 0>(grid, a, b, dC, N, K, bug);
        break;
    case MMA_BLOCK_X1:
        launch_block<OP_F16, 1, 0>(grid, a, b, dC, N, K, bug);
        break;
    default:
        launch_block<OP_TF32, 4, 0>(grid, a, b, dC, N, K, bug);
        break;
    }
    int err = (int)cudaGetLastError();
    CUDA_CHECK(cudaMemcpy(C, dC, (size_t)M * N * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(dA)), CUDA_CHECK(cudaFree(dB)), CUDA_CHECK(cudaFree(dC));
    return err;
}
