/* planted_wmma.cu - TEST-ONLY: nvcuda::wmma, right and wrong (see planted.h). One warp, one 16 x 16 tile:
 * C = C0 + A . B with A, B, C0 and C 16 x 16 row-major floats, in the variants of planted_wmma_variant. */
#include <mma.h>

#include "../../kernels/runtime/cuda_check.h"
#include "../../kernels/runtime/launch.h"
#include "planted.h"

using namespace nvcuda;

#define T16 16 /* the tile's side; A, B, C0, C are T16 x T16 */

typedef wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc_tf32;

/* c = C0 + A . B, tf32 m16n16k8, A (row stride ldm) and B row_major, two k-steps of 8;
 * convert: x[i] = __float_to_tf32(x[i]) after each load */
__device__ void tf32_product(acc_tf32 &c, const float *A, const float *B, const float *C0, int convert, int ldm)
{
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> b;
    wmma::load_matrix_sync(c, C0, T16, wmma::mem_row_major);
    for (int k = 0; k < T16; k += 8) {
        wmma::load_matrix_sync(a, A + k, ldm);
        wmma::load_matrix_sync(b, B + k * T16, T16);
        for (int i = 0; convert && i < a.num_elements; i++) a.x[i] = wmma::__float_to_tf32(a.x[i]);
        for (int i = 0; convert && i < b.num_elements; i++) b.x[i] = wmma::__float_to_tf32(b.x[i]);
        wmma::mma_sync(c, a, b, c);
    }
}

/* shift and ldm: where A's tile starts and its row stride (the preconditions' tests move them) */
__global__ void wmma_tf32(const float *A, const float *B, const float *C0, float *C, int convert, int shift, int ldm)
{
    acc_tf32 c;
    tf32_product(c, A + shift, B, C0, convert, ldm);
    wmma::store_matrix_sync(C, c, T16, wmma::mem_row_major);
}

/* the same product from transposed copies: At = A^T, Bt = B^T, C0t = C0^T read column-major; C written
 * column-major into Ct (= C^T) */
__global__ void wmma_tf32_col_major(const float *At, const float *Bt, const float *C0t, float *Ct)
{
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::col_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> c;
    wmma::load_matrix_sync(c, C0t, T16, wmma::mem_col_major);
    for (int k = 0; k < T16; k += 8) {
        wmma::load_matrix_sync(a, At + k * T16, T16); /* A(r, k..k+7) = At(k.., r): column r of A's tile */
        wmma::load_matrix_sync(b, Bt + k, T16);
        wmma::mma_sync(c, a, b, c);
    }
    wmma::store_matrix_sync(Ct, c, T16, wmma::mem_col_major);
}

/* bf16 m16n16k16: A row_major, B col_major (read from Bt = B^T), one step. ldm: A's row stride. */
__global__ void wmma_bf16(const __nv_bfloat16 *A, const __nv_bfloat16 *Bt, const float *C0, float *C, int ldm)
{
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
    wmma::fill_fragment(c, 0.0f);
    wmma::load_matrix_sync(a, A, ldm);
    wmma::load_matrix_sync(b, Bt, T16);
    wmma::mma_sync(c, a, b, c);
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> c0;
    wmma::load_matrix_sync(c0, C0, T16, wmma::mem_row_major);
    for (int i = 0; i < c.num_elements; i++) c.x[i] += c0.x[i]; /* same fragment type: same layout */
    wmma::store_matrix_sync(C, c, T16, wmma::mem_row_major);
}

/* PLANTED: writes the accumulator by the layout an sm_80 is said to use (lane / 4 the row, two n-halves),
 * which no document promises; the emulator scrambles it. */
__global__ void wmma_assumes_layout(const float *A, const float *B, const float *C0, float *C)
{
    acc_tf32 c;
    tf32_product(c, A, B, C0, 1, T16);
    int lane = threadIdx.x % 32;
    for (int i = 0; i < c.num_elements; i++) {
        int row = lane / 4 + 8 * (i % 4 / 2), col = i / 4 * 8 + 2 * (lane % 4) + i % 2;
        C[row * T16 + col] = c.x[i];
    }
}

/* PLANTED: half the warp leaves before the load */
__global__ void wmma_half_warp(const float *A, float *C)
{
    if (threadIdx.x >= 16) return;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> c;
    wmma::load_matrix_sync(c, A, T16, wmma::mem_row_major);
    wmma::store_matrix_sync(C, c, T16, wmma::mem_row_major);
}

/* PLANTED: each lane passes its own pointer (odd lanes one row further) */
__global__ void wmma_lane_pointers(const float *A, float *C)
{
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> c;
    wmma::load_matrix_sync(c, A + threadIdx.x % 2 * T16, T16, wmma::mem_row_major);
    wmma::store_matrix_sync(C, c, T16, wmma::mem_row_major);
}

static float *upload(const float *h, size_t n)
{
    float *d;
    CUDA_CHECK(cudaMalloc((void **)&d, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice));
    return d;
}

static __nv_bfloat16 *upload_bf16(const float *h, size_t n)
{
    __nv_bfloat16 tmp[T16 * 24], *d;
    for (size_t i = 0; i < n; i++) tmp[i] = __float2bfloat16(h[i]);
    CUDA_CHECK(cudaMalloc((void **)&d, n * sizeof(*d)));
    CUDA_CHECK(cudaMemcpy(d, tmp, n * sizeof(*d), cudaMemcpyHostToDevice));
    return d;
}

static void transpose16(const float *x, float *t)
{
    for (int r = 0; r < T16; r++)
        for (int c = 0; c < T16; c++) t[c * T16 + r] = x[r * T16 + c];
}

/* the col-major variant: transposed inputs in, C^T out, C returned row-major */
static int launch_col_major(const float *A, const float *B, const float *C0, float *C)
{
    float At[T16 * T16], Bt[T16 * T16], C0t[T16 * T16], Ct[T16 * T16];
    transpose16(A, At), transpose16(B, Bt), transpose16(C0, C0t);
    float *dA = upload(At, T16 * T16), *dB = upload(Bt, T16 * T16), *dC0 = upload(C0t, T16 * T16);
    float *dC = upload(C0t, T16 * T16);
    LAUNCH(wmma_tf32_col_major, 1, 32, 0)(dA, dB, dC0, dC);
    int err = (int)cudaGetLastError();
    CUDA_CHECK(cudaMemcpy(Ct, dC, sizeof Ct, cudaMemcpyDeviceToHost));
    transpose16(Ct, C);
    CUDA_CHECK(cudaFree(dA)), CUDA_CHECK(cudaFree(dB)), CUDA_CHECK(cudaFree(dC0)), CUDA_CHECK(cudaFree(dC));
    return err;
}

static int launch_bf16(const float *A, const float *B, const float *C0, float *dC, int ldm)
{
    float Bt[T16 * T16], Aw[T16 * 24] = {0};
    transpose16(B, Bt);
    for (int r = 0; r < T16; r++)
        for (int c = 0; c < T16; c++) Aw[r * ldm + c] = A[r * T16 + c];
    __nv_bfloat16 *dA = upload_bf16(Aw, T16 * 24), *dB = upload_bf16(Bt, T16 * T16);
    float *dC0 = upload(C0, T16 * T16);
    LAUNCH(wmma_bf16, 1, 32, 0)(dA, dB, dC0, dC, ldm);
    int err = (int)cudaGetLastError();
    CUDA_CHECK(cudaFree(dA)), CUDA_CHECK(cudaFree(dB)), CUDA_CHECK(cudaFree(dC0));
    return err;
}

/* the row-major variants on device copies (A padded to 24 columns so that ldm 18 stays inside) */
static int launch_row_major(int v, const float *A, const float *B, const float *C0, float *dC)
{
    float Aw[T16 * 24] = {0};
    int ldm = v == WMMA_BAD_LDM ? 18 : T16;
    for (int r = 0; r < T16; r++)
        for (int c = 0; c < T16; c++) Aw[r * ldm + c] = A[r * T16 + c];
    float *dA = upload(Aw, T16 * 24), *dB = upload(B, T16 * T16), *dC0 = upload(C0, T16 * T16);
    switch (v) { /* one LAUNCH per kernel, so that the error message names it */
    case WMMA_TF32: LAUNCH(wmma_tf32, 1, 32, 0)(dA, dB, dC0, dC, 1, 0, T16); break;
    case WMMA_TF32_RAW: LAUNCH(wmma_tf32, 1, 32, 0)(dA, dB, dC0, dC, 0, 0, T16); break;
    case WMMA_MISALIGNED: LAUNCH(wmma_tf32, 1, 32, 0)(dA, dB, dC0, dC, 1, 1, T16); break;
    case WMMA_BAD_LDM: LAUNCH(wmma_tf32, 1, 32, 0)(dA, dB, dC0, dC, 1, 0, 18); break;
    case WMMA_ASSUMES_LAYOUT: LAUNCH(wmma_assumes_layout, 1, 32, 0)(dA, dB, dC0, dC); break;
    case WMMA_HALF_WARP: LAUNCH(wmma_half_warp, 1, 32, 0)(dC0, dC); break;
    case WMMA_LANE_POINTERS: LAUNCH(wmma_lane_pointers, 1, 32, 0)(dA, dC); break;
    }
    int err = (int)cudaGetLastError();
    CUDA_CHECK(cudaFree(dA)), CUDA_CHECK(cudaFree(dB)), CUDA_CHECK(cudaFree(dC0));
    return err;
}

extern "C" int planted_wmma(int variant, const float *A, const float *B, const float *C0, float *C)
{
    if (variant == WMMA_TF32_COL_MAJOR) return launch_col_major(A, B, C0, C);
    float *dC = upload(C0, T16 * T16); /* C starts as C0: a variant that fails leaves it so */
    int err = variant == WMMA_BF16 ? launch_bf16(A, B, C0, dC, T16)
              : variant == WMMA_BF16_BAD_LDM ? launch_bf16(A, B, C0, dC, 12)
                                             : launch_row_major(variant, A, B, C0, dC);
    CUDA_CHECK(cudaMemcpy(C, dC, T16 * T16 * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(dC));
    return err;
}
