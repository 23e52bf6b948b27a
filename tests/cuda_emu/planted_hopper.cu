/* planted_hopper.cu - TEST-ONLY: sm_90a's layer through kernels/runtime/ptx/hopper_ptx.h and
 * kernels/runtime/tma_map.h, right and wrong (see planted.h). The same file compiles with nvcc against the product
 * headers for sm_90a, and for sm_80 and sm_90 where the wrappers trap (make ptx-check).
 *   wgmma_tile: one warpgroup, D (64 x N) = C0 + A (64 x K) . B (K x N), K one instruction's (16, or 8 tf32),
 *               the operands stored by the threads themselves (generic proxy) in the 128-byte-swizzled or the
 *               unswizzled core-matrix layout, fenced for the async proxy, C0 in and D out through the fragment.
 *   wgmma_tile_mn: the same with A, B or both stored MN-major (imm-trans-a/b), 128-byte swizzle, bf16 or f16.
 *   (tma_gemm with BT: B given K x N, loaded as 64 x 64 boxes and read N-major; AT: A so too, M-major.)
 *   tma_gemm:   C (M x N) = A (M x K) . B^T, A and B (N x K) bf16 row-major: one 128 x BN tile per block, a
 *               producer thread loading 128 x 64 and BN x 64 boxes by TMA (128-byte swizzle) into a 2-stage ring
 *               with full/empty mbarriers, one consumer warpgroup running wgmma m64nBNk16 on them. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <hopper_ptx.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernels/runtime/cuda_check.h"
#include "../../kernels/runtime/launch.h"
#include "../../kernels/runtime/tma_map.h"
#include "planted.h"

#define ROW 128         /* bytes of a 128-byte-swizzled row: 64 bf16 */
#define ATOM 1024       /* the swizzle atom: 8 rows */
#define BM 128          /* tma_gemm's tile rows: two m64 halves */
#define BK 64           /* a k-tile: one swizzled row of bf16 */
#define STAGES 2

/* the byte offset of element k (elem bytes) of row r in a K-major tile: 128-byte swizzle (rows of 128 bytes,
 * 16-byte chunk j of row r at chunk j ^ (r % 8)), or core matrices of 8 x 16 bytes, LBO 128 along K, SBO 256 */
__device__ size_t tile_offset(int r, int k, int elem, int swizzled)
{
    size_t kb = (size_t)k * elem;
    if (!swizzled) return (size_t)(r / 8) * 256 + kb / 16 * 128 + (size_t)(r % 8) * 16 + kb % 16;
    size_t o = (size_t)(r / 8) * ATOM + (size_t)(r % 8) * ROW + kb;
    return o ^ ((o >> 7 & 7) << 4);
}

template <int N> __device__ void mma_op(float (&d)[N / 2], uint64_t a, uint64_t b, int op, int scale_d)
{
    if constexpr (N == 64) {
        if (op == HOPPER_BF16) wgmma_bf16_m64n64k16(d, a, b, scale_d);
        if (op == HOPPER_F16) wgmma_f16_m64n64k16(d, a, b, scale_d);
        if (op == HOPPER_TF32) wgmma_tf32_m64n64k8(d, a, b, scale_d);
    } else if constexpr (N == 128) {
        if (op == HOPPER_BF16) wgmma_bf16_m64n128k16(d, a, b, scale_d);
        if (op == HOPPER_F16) wgmma_f16_m64n128k16(d, a, b, scale_d);
        if (op == HOPPER_TF32) wgmma_tf32_m64n128k8(d, a, b, scale_d);
    } else {
        if (op == HOPPER_BF16) wgmma_bf16_m64n256k16(d, a, b, scale_d);
        if (op == HOPPER_F16) wgmma_f16_m64n256k16(d, a, b, scale_d);
        if (op == HOPPER_TF32) wgmma_tf32_m64n256k8(d, a, b, scale_d);
    }
}

/* register j of warpgroup thread lt holds D[*r][*c] (the product header's fragment) */
__device__ void fragment_at(int lt, int j, int *r, int *c)
{
    int w = lt / 32, g = lt % 32 / 4, t = lt % 4, i = j / 4, q = j % 4;
    *r = 16 * w + g + (q >= 2 ? 8 : 0), *c = 8 * i + 2 * t + (q & 1);
}

__device__ char *align_up(char *p, size_t a) { return (char *)(((uintptr_t)p + a - 1) & ~(uintptr_t)(a - 1)); }

/* A: 64 x K, B: N x K (B^T), row-major, elements of 2 bytes (bf16, f16) or 4 (tf32); C0, D: 64 x N floats */
template <int N>
__global__ void wgmma_tile(const char *A, const char *B, const float *C0, float *D, int op, int swizzled, int bug)
{
    DYNAMIC_SHARED(char, raw);
    char *As = align_up(raw, ATOM), *Bs = As + 64 * ROW;
    int lt = threadIdx.x, elem = op == HOPPER_TF32 ? 4 : 2, K = 32 / elem;
    for (int i = lt; i < (64 + N) * K; i += 128) { /* plain stores (st.shared): the generic proxy */
        int r = i / K, k = i % K;
        char *to = r < 64 ? As + tile_offset(r, k, elem, swizzled) : Bs + tile_offset(r - 64, k, elem, swizzled);
        const char *from = r < 64 ? A + (size_t)i * elem : B + (size_t)(i - 64 * K) * elem;
        if (elem == 4) *(uint32_t *)to = *(const uint32_t *)from;
        else *(uint16_t *)to = *(const uint16_t *)from;
    }
    if (bug != HOPPER_TILE_NO_FENCE) fence_proxy_async(); /* PLANTED (NO_FENCE): generic stores unfenced */
    __syncthreads();
    uint64_t da = swizzled ? wgmma_desc(As, 16, ATOM, WGMMA_SWIZZLE_128B) : wgmma_desc(As, 128, 256, 0);
    uint64_t db = swizzled ? wgmma_desc(Bs, 16, ATOM, WGMMA_SWIZZLE_128B) : wgmma_desc(Bs, 128, 256, 0);
    float d[N / 2];
    for (int j = 0; j < N / 2; j++) {
        int r, c;
        fragment_at(lt, j, &r, &c);
        d[j] = C0[r * N + c];
    }
    if (bug != HOPPER_TILE_NO_WGMMA_FENCE) wgmma_fence(); /* PLANTED (NO_WGMMA_FENCE) */
    mma_op<N>(d, da, db, op, 1);
    wgmma_commit();
    if (bug == HOPPER_TILE_ACC_IN_FLIGHT) d[1] = 0.0f; /* PLANTED: an accumulator written in flight */
    wgmma_wait<0>();
    for (int j = 0; j < N / 2; j++) {
        int r, c;
        fragment_at(lt, j, &r, &c);
        D[r * N + c] = d[j];
    }
}

template <int N, int TA, int TB>
__device__ void mma_op_t(float (&d)[N / 2], uint64_t a, uint64_t b, int op, int scale_d = 1)
{
    if constexpr (N == 64) {
        if (op == HOPPER_BF16) wgmma_bf16_m64n64k16_t<TA, TB>(d, a, b, scale_d);
        else wgmma_f16_m64n64k16_t<TA, TB>(d, a, b, scale_d);
    } else if constexpr (N == 128) {
        if (op == HOPPER_BF16) wgmma_bf16_m64n128k16_t<TA, TB>(d, a, b, scale_d);
        else wgmma_f16_m64n128k16_t<TA, TB>(d, a, b, scale_d);
    } else {
        if (op == HOPPER_BF16) wgmma_bf16_m64n256k16_t<TA, TB>(d, a, b, scale_d);
        else wgmma_f16_m64n256k16_t<TA, TB>(d, a, b, scale_d);
    }
}

/* the byte offset of element (mn, k) of an MN-major 128-byte-swizzled tile, K = 16: k rows of 64 elements of
 * M or N a 128-byte row, 8 k rows an atom; the two atoms of K side by side (SBO 1024), then the next 64 of M
 * or N (LBO 2048) */
__device__ size_t mn_offset(int mn, int k)
{
    size_t o = (size_t)(mn / 64) * 2 * ATOM + (size_t)(k / 8) * ATOM + (size_t)(k % 8) * ROW + (size_t)(mn % 64) * 2;
    return o ^ ((o >> 7 & 7) << 4);
}

/* wgmma_tile with A (trans bit 0) and B (bit 1) stored MN-major, bf16 or f16, the 128-byte swizzle, K = 16 */
template <int N>
__global__ void wgmma_tile_mn(const char *A, const char *B, const float *C0, float *D, int op, int trans, int bug)
{
    DYNAMIC_SHARED(char, raw);
    char *As = align_up(raw, ATOM), *Bs = As + 64 * ROW; /* room for K-major operands too */
    int lt = threadIdx.x;
    for (int i = lt; i < (64 + N) * 16; i += 128) {
        int r = i / 16, k = i % 16, mn = trans & (r < 64 ? 1 : 2);
        char *to = r < 64 ? As + (mn ? mn_offset(r, k) : tile_offset(r, k, 2, 1))
                          : Bs + (mn ? mn_offset(r - 64, k) : tile_offset(r - 64, k, 2, 1));
        *(uint16_t *)to = *(const uint16_t *)(r < 64 ? A + (size_t)i * 2 : B + (size_t)(i - 64 * 16) * 2);
    }
    fence_proxy_async();
    __syncthreads();
    uint32_t lbo = 2 * ATOM, sbo = ATOM;
    if (bug == HOPPER_MN_SWAPPED) lbo = ATOM, sbo = 2 * ATOM; /* PLANTED: K-major habits, fields swapped */
    if (bug == HOPPER_MN_LBO_ZERO) lbo = 0;                    /* PLANTED: LBO "unused", as K-major */
    if (bug == HOPPER_MN_OVERLAP) lbo = ATOM;                  /* PLANTED: the next 64 of N on the next k */
    uint64_t da = trans & 1 ? wgmma_desc(As, lbo, sbo, WGMMA_SWIZZLE_128B) : wgmma_desc(As, 16, ATOM, 1);
    uint64_t db = trans & 2 ? wgmma_desc(Bs, lbo, sbo, WGMMA_SWIZZLE_128B) : wgmma_desc(Bs, 16, ATOM, 1);
    float d[N / 2];
    for (int j = 0; j < N / 2; j++) {
        int r, c;
        fragment_at(lt, j, &r, &c);
        d[j] = C0[r * N + c];
    }
    wgmma_fence();
    int t = bug == HOPPER_MN_NO_TRANS ? 0 : trans; /* PLANTED (NO_TRANS): MN-major data, K-major flags */
    if (t == 0) mma_op_t<N, 0, 0>(d, da, db, op);
    if (t == 1) mma_op_t<N, 1, 0>(d, da, db, op);
    if (t == 2) mma_op_t<N, 0, 1>(d, da, db, op);
    if (t == 3) mma_op_t<N, 1, 1>(d, da, db, op);
    wgmma_commit();
    wgmma_wait<0>();
    for (int j = 0; j < N / 2; j++) {
        int r, c;
        fragment_at(lt, j, &r, &c);
        D[r * N + c] = d[j];
    }
}

/* Threads 0-127 consume (warpgroup 0), thread 128 produces (warpgroup 1 lends its registers to the consumers).
 * Stage s: A's 128 x 64 box, then B's BN x 64, both 1024-aligned; full[s] counts the producer's arrival and the
 * boxes' bytes, empty[s] the consumer's release. k-tile kt uses stage kt % 2 for the (kt / 2)-th time. */
template <int BN, int BT, int AT = 0>
__global__ void tma_gemm(const __grid_constant__ CUtensorMap mapA, const __grid_constant__ CUtensorMap mapB,
                         float *C, int M, int N, int K, int bug)
{
    enum { A_BYTES = BM * ROW, B_BYTES = BN * ROW, STAGE = A_BYTES + B_BYTES };
    DYNAMIC_SHARED(char, raw);
    char *tiles = align_up(raw, ATOM) + (bug == HOPPER_GEMM_MISALIGNED ? 128 : 0); /* PLANTED (MISALIGNED) */
    uint64_t *full = (uint64_t *)(tiles + STAGES * STAGE), *empty = full + STAGES;
    int tid = threadIdx.x, m0 = blockIdx.y * BM, n0 = blockIdx.x * BN, kts = (K + BK - 1) / BK;
    if (tid == 0) {
        for (int s = 0; s < STAGES; s++) mbarrier_init(&full[s], 1), mbarrier_init(&empty[s], 1);
        if (bug != HOPPER_GEMM_NO_INIT_FENCE) fence_proxy_async(); /* PLANTED (NO_INIT_FENCE) */
    }
    __syncthreads();
    if (tid >= 128) {
        setmaxnreg_dec<40>();
        if (tid != 128) return;
        uint32_t bytes = STAGE + (bug == HOPPER_GEMM_EXPECT_TX_SMALL ? -2048 : 0) /* PLANTED (both) */
                         + (bug == HOPPER_GEMM_EXPECT_TX_LARGE ? 2048 : 0);
        for (int kt = 0; kt < kts; kt++) {
            int s = kt % STAGES, use = kt / STAGES;
            mbarrier_wait_parity(&empty[s], (use & 1) ^ 1); /* a fresh barrier's "previous" phase: passes */
            char *as = tiles + s * STAGE;
            mbarrier_arrive_expect_tx(&full[s], bytes);
            if (!AT) tma_load_2d(as, &mapA, kt * BK, m0, &full[s]);
            for (int j = 0; AT && j < BM / 64; j++) /* A given K x M: boxes of 64 M x 64 K */
                tma_load_2d(as + j * 64 * ROW, &mapA, m0 + 64 * j, kt * BK, &full[s]);
            if (!BT) tma_load_2d(as + A_BYTES, &mapB, kt * BK, n0, &full[s]);
            for (int j = 0; BT && j < BN / 64; j++) /* B given K x N: boxes of 64 N x 64 K, side by side */
                tma_load_2d(as + A_BYTES + j * 64 * ROW, &mapB, n0 + 64 * j, kt * BK, &full[s]);
        }
        return;
    }
    setmaxnreg_inc<232>();
    int swizzle = bug == HOPPER_GEMM_WRONG_SWIZZLE ? WGMMA_SWIZZLE_NONE : WGMMA_SWIZZLE_128B; /* PLANTED */
    float d[2][BN / 2];
    for (int kt = 0; kt < kts; kt++) {
        int s = kt % STAGES, use = kt / STAGES;
        mbarrier_wait_parity(&full[s], bug == HOPPER_GEMM_STALE_PHASE ? 0 : use & 1); /* PLANTED (STALE) */
        const char *as = tiles + s * STAGE, *bs = as + A_BYTES;
        wgmma_fence();
        for (int k = 0; k < BK / 16; k++) {
            /* K-major B: k-slice k 32 bytes into each row; N-major B: 16 k rows = 2 atoms on, SBO the next 8 k,
             * LBO the next box of 64 N */
            uint64_t db = BT ? wgmma_desc(bs + 2 * ATOM * k, 64 * ROW, ATOM, swizzle)
                             : wgmma_desc(bs + 32 * k, 16, ATOM, swizzle);
            for (int h = 0; h < 2; h++) {
                uint64_t da = AT ? wgmma_desc(as + h * 64 * ROW + 2 * ATOM * k, 0, ATOM, swizzle) /* 64 wide */
                                 : wgmma_desc(as + h * 64 * ROW + 32 * k, 16, ATOM, swizzle);
                if (AT) mma_op_t<BN, 1, 1>(d[h], da, db, HOPPER_BF16, kt > 0 || k > 0);
                else if (BT) mma_op_t<BN, 0, 1>(d[h], da, db, HOPPER_BF16, kt > 0 || k > 0);
                else mma_op<BN>(d[h], da, db, HOPPER_BF16, kt > 0 || k > 0);
            }
        }
        wgmma_commit();
        if (bug == HOPPER_GEMM_WAIT_ONE) {
            wgmma_wait<1>(); /* k-tile kt - 1's group is done: its stage is free, kt's still reads its own */
            if (tid == 0 && kt > 0) mbarrier_arrive(&empty[(kt - 1) % STAGES]);
            continue;
        }
        if (bug == HOPPER_GEMM_RELEASE_IN_FLIGHT && tid == 0) mbarrier_arrive(&empty[s]); /* PLANTED */
        wgmma_wait<0>();
        if (bug != HOPPER_GEMM_RELEASE_IN_FLIGHT && tid == 0) mbarrier_arrive(&empty[s]); /* the stage is free */
    }
    if (bug == HOPPER_GEMM_WAIT_ONE) wgmma_wait<0>();
    for (int h = 0; h < 2; h++)
        for (int j = 0; j < BN / 2; j++) {
            int r, c;
            fragment_at(tid, j, &r, &c);
            if (m0 + 64 * h + r < M && n0 + c < N) C[(size_t)(m0 + 64 * h + r) * N + n0 + c] = d[h][j];
        }
}

/* the operands as the device stores them: 16-bit bits (round to nearest even) or the floats themselves */
static void *upload(const float *h, size_t n, int op)
{
    size_t es = op == HOPPER_TF32 ? 4 : 2;
    char *tmp = (char *)malloc(n * es);
    void *d;
    for (size_t i = 0; i < n; i++) {
        uint16_t bits = 0;
        if (op == HOPPER_BF16) {
            __nv_bfloat16 v = __float2bfloat16_rn(h[i]);
            memcpy(&bits, &v, 2);
        }
        if (op == HOPPER_F16) {
            __half v = __float2half_rn(h[i]);
            memcpy(&bits, &v, 2);
        }
        if (op == HOPPER_TF32) memcpy(tmp + 4 * i, h + i, 4);
        else memcpy(tmp + 2 * i, &bits, 2);
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
    CUDA_CHECK(cudaMemset(d, 0xff, n * sizeof(float))); /* NaN: an element not written stays so */
    return d;
}

template <int N> static void launch_tile(const void *A, const void *B, const float *C0, float *D, int op, int sw,
                                         int bug)
{
    void (*kernel)(const char *, const char *, const float *, float *, int, int, int) = wgmma_tile<N>;
    LAUNCH(kernel, 1, 128, ATOM + (64 + N) * ROW)((const char *)A, (const char *)B, C0, D, op, sw, bug);
}

int planted_hopper_tile(int op, int n, int swizzled, int bug, const float *A, const float *B, const float *C0,
                        float *D)
{
    int K = op == HOPPER_TF32 ? 8 : 16;
    void *dA = upload(A, (size_t)64 * K, op), *dB = upload(B, (size_t)n * K, op);
    float *dC0, *dD = poisoned_output((size_t)64 * n);
    CUDA_CHECK(cudaMalloc((void **)&dC0, (size_t)64 * n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dC0, C0, (size_t)64 * n * sizeof(float), cudaMemcpyHostToDevice));
    if (n == 64) launch_tile<64>(dA, dB, dC0, dD, op, swizzled, bug);
    else if (n == 128) launch_tile<128>(dA, dB, dC0, dD, op, swizzled, bug);
    else launch_tile<256>(dA, dB, dC0, dD, op, swizzled, bug);
    int err = (int)cudaGetLastError();
    CUDA_CHECK(cudaMemcpy(D, dD, (size_t)64 * n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(dA)), CUDA_CHECK(cudaFree(dB)), CUDA_CHECK(cudaFree(dC0)), CUDA_CHECK(cudaFree(dD));
    return err;
}

template <int N> static void launch_tile_mn(const void *A, const void *B, const float *C0, float *D, int op,
                                            int trans, int bug)
{
    void (*kernel)(const char *, const char *, const float *, float *, int, int, int) = wgmma_tile_mn<N>;
    LAUNCH(kernel, 1, 128, ATOM + (64 + N) * ROW)((const char *)A, (const char *)B, C0, D, op, trans, bug);
}

int planted_hopper_tile_mn(int op, int n, int trans, int bug, const float *A, const float *B, const float *C0,
                           float *D)
{
    void *dA = upload(A, (size_t)64 * 16, op), *dB = upload(B, (size_t)n * 16, op);
    float *dC0, *dD = poisoned_output((size_t)64 * n);
    CUDA_CHECK(cudaMalloc((void **)&dC0, (size_t)64 * n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dC0, C0, (size_t)64 * n * sizeof(float), cudaMemcpyHostToDevice));
    if (n == 64) launch_tile_mn<64>(dA, dB, dC0, dD, op, trans, bug);
    else if (n == 128) launch_tile_mn<128>(dA, dB, dC0, dD, op, trans, bug);
    else launch_tile_mn<256>(dA, dB, dC0, dD, op, trans, bug);
    int err = (int)cudaGetLastError();
    CUDA_CHECK(cudaMemcpy(D, dD, (size_t)64 * n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(dA)), CUDA_CHECK(cudaFree(dB)), CUDA_CHECK(cudaFree(dC0)), CUDA_CHECK(cudaFree(dD));
    return err;
}

template <int BN, int BT = 0, int AT = 0>
static void launch_gemm(const CUtensorMap &ma, const CUtensorMap &mb, float *C, int M, int N, int K, int bug)
{
    void (*kernel)(const CUtensorMap, const CUtensorMap, float *, int, int, int, int) = tma_gemm<BN, BT, AT>;
    size_t smem = ATOM + 128 + STAGES * (BM + BN) * ROW + 2 * STAGES * sizeof(uint64_t);
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    LAUNCH(kernel, grid, 256, smem)(ma, mb, C, M, N, K, bug);
}

int planted_hopper_gemm(int bn, int bug, const float *A, const float *B, float *C, int M, int N, int K)
{
    void *dA = upload(A, (size_t)M * K, HOPPER_BF16), *dB = upload(B, (size_t)N * K, HOPPER_BF16);
    float *dC = poisoned_output((size_t)M * N);
    CUtensorMap ma = tma_map_2d(dA, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, M, K, K, BM, BK,
                                CU_TENSOR_MAP_SWIZZLE_128B);
    CUtensorMap mb = tma_map_2d(dB, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, N, K, K, bn, BK,
                                CU_TENSOR_MAP_SWIZZLE_128B);
    if (bn == 64) launch_gemm<64>(ma, mb, dC, M, N, K, bug);
    else if (bn == 128) launch_gemm<128>(ma, mb, dC, M, N, K, bug);
    else launch_gemm<256>(ma, mb, dC, M, N, K, bug);
    int err = (int)cudaGetLastError();
    CUDA_CHECK(cudaMemcpy(C, dC, (size_t)M * N * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(dA)), CUDA_CHECK(cudaFree(dB)), CUDA_CHECK(cudaFree(dC));
    return err;
}

/* the same GEMM with B given K x N row-major (as dx's W[v, h] with K = v), read N-major (imm-trans-b); with
 * a_kmajor 0, A too given K x M (as dW's G^T from G[n, v], K = n), read M-major */
int planted_hopper_gemm_nmajor(int bn, int a_kmajor, const float *A, const float *Bkn, float *C, int M, int N,
                               int K)
{
    void *dA = upload(A, (size_t)M * K, HOPPER_BF16), *dB = upload(Bkn, (size_t)K * N, HOPPER_BF16);
    float *dC = poisoned_output((size_t)M * N);
    CUtensorMap ma = a_kmajor ? tma_map_2d(dA, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, M, K, K, BM, BK,
                                           CU_TENSOR_MAP_SWIZZLE_128B)
                              : tma_map_2d(dA, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, K, M, M, BK, 64,
                                           CU_TENSOR_MAP_SWIZZLE_128B);
    CUtensorMap mb = tma_map_2d(dB, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, K, N, N, BK, 64,
                                CU_TENSOR_MAP_SWIZZLE_128B);
    if (!a_kmajor) launch_gemm<128, 1, 1>(ma, mb, dC, M, N, K, HOPPER_GEMM_CORRECT);
    else if (bn == 64) launch_gemm<64, 1>(ma, mb, dC, M, N, K, HOPPER_GEMM_CORRECT);
    else if (bn == 128) launch_gemm<128, 1>(ma, mb, dC, M, N, K, HOPPER_GEMM_CORRECT);
    else launch_gemm<256, 1>(ma, mb, dC, M, N, K, HOPPER_GEMM_CORRECT);
    int err = (int)cudaGetLastError();
    CUDA_CHECK(cudaMemcpy(C, dC, (size_t)M * N * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(dA)), CUDA_CHECK(cudaFree(dB)), CUDA_CHECK(cudaFree(dC));
    return err;
}
