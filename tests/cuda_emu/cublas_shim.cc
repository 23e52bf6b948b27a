/* cublas_shim.cc - TEST-ONLY: the cuBLAS calls this project makes, over CBLAS (OpenBLAS), column-major as
 * cuBLAS defines them. Prototypes are NVIDIA's (cublas_api.h). Argument checks are cuBLAS's documented ones
 * (cublas<t>gemm, cublasGemmEx): CUBLAS_STATUS_INVALID_VALUE when m, n, k or batchCount < 0, a transpose flag
 * is not N/T/C, lda < max(1, rows of stored A), ldb < max(1, rows of stored B), ldc < max(1, m); unsupported
 * type combinations give CUBLAS_STATUS_NOT_SUPPORTED. Beyond cuBLAS, every operand's full extent (ld, stride,
 * batch) must lie in one live device allocation, or the call fails as a GPU would: cudaErrorIllegalAddress
 * recorded, CUBLAS_STATUS_EXECUTION_FAILED returned. beta == 0 means C is not read (it may hold NaN). */
#include <cublas_v2.h>
#include "gemm_cpu.h"

#include "emu_dry.h"
#include "emu_eyes.h"
#include "emu_internal.h"
#include "emu_model.h"
#include "include/emu_launch.h" /* emu::capturing, emu::capture_record */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <functional>
#include <vector>

struct cublasContext {
    cudaStream_t stream;
    void *workspace;
    size_t workspace_bytes;
    cublasMath_t math;
};

cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
{
    if (!handle) return CUBLAS_STATUS_INVALID_VALUE;
    *handle = new cublasContext{NULL, NULL, 0, CUBLAS_DEFAULT_MATH}; /* no device memory: see cudaMemGetInfo */
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasDestroy_v2(cublasHandle_t h) { if (!h) return CUBLAS_STATUS_NOT_INITIALIZED; delete h; return CUBLAS_STATUS_SUCCESS; }
/* as documented: cublasSetStream also resets the workspace to cuBLAS's own pool (a user one must be set again) */
cublasStatus_t cublasSetStream_v2(cublasHandle_t h, cudaStream_t s) { if (!h) return CUBLAS_STATUS_NOT_INITIALIZED; h->stream = s; h->workspace = NULL, h->workspace_bytes = 0; return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t mode) { if (!h) return CUBLAS_STATUS_NOT_INITIALIZED; h->math = mode; return CUBLAS_STATUS_SUCCESS; }

cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t h, void *ws, size_t bytes)
{
    if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (ws && ((uintptr_t)ws % 256 || !emu::find_alloc(ws, bytes))) {
        fprintf(stderr, "cuda-emu: cublasSetWorkspace: %p (+%zu) is not a 256-byte aligned device buffer\n", ws, bytes);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    h->workspace = ws, h->workspace_bytes = bytes;
    return CUBLAS_STATUS_SUCCESS;
}

/* Stream capture (emu_graph.cc): a call on the captured stream with a user workspace is recorded (call holds
 * copies of its arguments and host scalars) and runs, with every check below, when the graph is launched. */
static cublasStatus_t captured(const char *fn, cublasHandle_t h, std::function<cublasStatus_t()> call)
{
    if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (emu::capture_refuses_stream(fn, h->stream)) return CUBLAS_STATUS_EXECUTION_FAILED;
    if (!h->workspace && emu::capture_refuses("a cuBLAS call without cublasSetWorkspace (cuBLAS would take untracked "
                                              "workspace from its pool; cublasSetStream resets a user workspace)"))
        return CUBLAS_STATUS_EXECUTION_FAILED;
    emu::capture_record(fn, [fn, call]() {
        cublasStatus_t s = call();
        if (s != CUBLAS_STATUS_SUCCESS) emu::fail(cudaErrorLaunchFailure, "%s failed at graph launch: %d", fn, (int)s);
    });
    return CUBLAS_STATUS_SUCCESS;
}
#define CAPTURED(fn, call)                                                                                      \
    if (emu::capturing() && alpha && beta) {                                                                   \
        float a_ = *(const float *)alpha, b_ = *(const float *)beta;                                           \
        return captured(fn, h, [=]() { return call; });                                                       \
    }

static cublasStatus_t invalid(const char *fn, const char *what, long long got, long long need)
{
    fprintf(stderr, "cuda-emu: %s: %s = %lld, must be >= %lld: CUBLAS_STATUS_INVALID_VALUE\n", fn, what, got, need);
    return CUBLAS_STATUS_INVALID_VALUE;
}

static int is_trans(cublasOperation_t op) { return op != CUBLAS_OP_N; }
static long long imax(long long a, long long b) { return a > b ? a : b; }

/* The bytes [p, p + extent) that a (rows x cols, ld) column-major operand spans, batch by batch: the first and
 * the last batch inside one allocation put every batch between them there too (the batches' addresses are
 * monotone in b), so two look-ups check any batch count (lesson 1's G at the CLI's largest is 3.7e8 batches). */
static int operand_ok(const char *fn, const char *name, const void *p, size_t es, int rows, int cols, int ld,
                      long long stride, int batch)
{
    if (!rows || !cols) return 1;
    size_t extent = ((size_t)(cols - 1) * ld + rows) * es;
    const emu::alloc_info *first = NULL;
    for (int b : {0, batch - 1}) {
        const char *q = (const char *)p + (ptrdiff_t)((long long)b * stride) * (ptrdiff_t)es;
        const emu::alloc_info *a = emu::find_alloc(q, extent);
        if (!first) first = a;
        if (!a || a != first) {
            emu::fail(cudaErrorIllegalAddress, "%s: operand %s of batch %d (%d x %d, ld %d, stride %lld) spans "
                      "[%p, +%zu bytes), which is not inside one live device allocation", fn, name, b, rows, cols,
                      ld, stride, (const void *)q, extent);
            return 0;
        }
    }
    if (!strcmp(name, "C")) { /* initcheck: the GEMM writes every batch's C */
        const char *c = (const char *)p;
        ptrdiff_t step = (ptrdiff_t)stride * (ptrdiff_t)es;
        if (batch <= (1 << 16))
            for (int b = 0; b < batch; b++) emu::eyes_host_wrote(c + b * step, extent);
        else /* more batches than a test runs (the CLI's largest): their span, gaps between batches included */
            emu::eyes_host_wrote(step >= 0 ? c : c + (ptrdiff_t)(batch - 1) * step,
                                 (size_t)(batch - 1) * (size_t)(step >= 0 ? step : -step) + extent);
    }
    return 1;
}

/* A bf16 (rows x cols, ld) operand as f32 with the same ld: bf16 is the top half of an f32, so exact. */
static const float *widen(std::vector<float> &buf, const uint16_t *p, int rows, int cols, int ld)
{
    buf.assign((size_t)cols * ld, 0.0f);
    for (int j = 0; j < cols; j++)
        for (int i = 0; i < rows; i++) {
            uint32_t u = (uint32_t)p[(size_t)j * ld + i] << 16;
            memcpy(&buf[(size_t)j * ld + i], &u, 4);
        }
    return buf.data();
}

/* EMU_CUBLAS_WRONG=1: every product's first element is off by one, so each version that calls cuBLAS must fail its
 * validation (tests/gpu/rehearse.sh checks that the GPU report says so) */
static int wrong_results(void)
{
    static int wrong = -1;
    if (wrong < 0) wrong = getenv("EMU_CUBLAS_WRONG") && !strcmp(getenv("EMU_CUBLAS_WRONG"), "1");
    return wrong;
}

/* op(A) (m x k) . op(B) (k x n) -> C (m x n), for each of batch problems; A and B are f32 or bf16. */
static cublasStatus_t gemm(const char *fn, cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                           int n, int k, const float *alpha, const void *A, cudaDataType at, int lda, long long sA,
                           const void *B, cudaDataType bt, int ldb, long long sB, const float *beta, float *C,
                           int ldc, long long sC, int batch, int c_is_scratch = 0)
{
    if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
    for (cublasOperation_t op : {ta, tb})
        if (op != CUBLAS_OP_N && op != CUBLAS_OP_T && op != CUBLAS_OP_C) return invalid(fn, "transpose flag", -1, 0);
    if (m < 0) return invalid(fn, "m", m, 0);
    if (n < 0) return invalid(fn, "n", n, 0);
    if (k < 0) return invalid(fn, "k", k, 0);
    if (batch < 0) return invalid(fn, "batchCount", batch, 0);
    int ra = is_trans(ta) ? k : m, ca = is_trans(ta) ? m : k, rb = is_trans(tb) ? n : k, cb = is_trans(tb) ? k : n;
    if (lda < imax(1, ra)) return invalid(fn, "lda", lda, imax(1, ra));
    if (ldb < imax(1, rb)) return invalid(fn, "ldb", ldb, imax(1, rb));
    if (ldc < imax(1, m)) return invalid(fn, "ldc", ldc, imax(1, m));
    if (!alpha || !beta) return CUBLAS_STATUS_INVALID_VALUE;
    if (!m || !n || !batch) return CUBLAS_STATUS_SUCCESS;
    size_t ea = at == CUDA_R_16BF ? 2 : 4, eb = bt == CUDA_R_16BF ? 2 : 4;
    int use_ab = k > 0 && *alpha != 0.0f;
    if ((use_ab && (!operand_ok(fn, "A", A, ea, ra, ca, lda, sA, batch) ||
                    !operand_ok(fn, "B", B, eb, rb, cb, ldb, sB, batch))) ||
        (!c_is_scratch && !operand_ok(fn, "C", C, 4, m, n, ldc, sC, batch)))
        return CUBLAS_STATUS_EXECUTION_FAILED;
    emu::stats.gemm_calls++;
    emu::stats.gemm_flops += 2ull * m * n * k * batch;
    /* the time model (a stated efficiency, emu_gpu.cc): bf16 operands on tensor cores, f32 ones on the FP32 lanes
     * unless the handle allows TF32 */
    emu::model_gemm(m, n, k, batch, (int)ea, at == CUDA_R_16BF || h->math == CUBLAS_TF32_TENSOR_OP_MATH);
    if (emu::dry()) return CUBLAS_STATUS_SUCCESS; /* EMU_DRY=1: every argument and extent checked, nothing computed */
    std::vector<float> fa, fb; /* bf16 operands widened to f32 (exact) */
    for (int b = 0; b < batch; b++) {
        float *c = C + b * sC;
        for (int j = 0; j < n; j++) /* C = beta C, and beta == 0 never reads C */
            for (int i = 0; i < m; i++) c[(size_t)j * ldc + i] = *beta == 0.0f ? 0.0f : *beta * c[(size_t)j * ldc + i];
        if (!use_ab) continue;
        const float *pa = (const float *)((const char *)A + b * sA * (long long)ea);
        const float *pb = (const float *)((const char *)B + b * sB * (long long)eb);
        if (at == CUDA_R_16BF) pa = widen(fa, (const uint16_t *)A + b * sA, ra, ca, lda);
        if (bt == CUDA_R_16BF) pb = widen(fb, (const uint16_t *)B + b * sB, rb, cb, ldb);
        /* column-major C (m, n) is row-major C^T (n, m) = op(B)^T op(A)^T: the project's CPU GEMM, operands swapped */
        sgemm_cpu(is_trans(tb), is_trans(ta), n, m, k, *alpha, pb, ldb, pa, lda, 1.0f, c, ldc);
        if (wrong_results()) c[0] += 1.0f; /* EMU_CUBLAS_WRONG=1: a broken library, for the GPU route's rehearsal */
    }
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                              const float *alpha, const float *A, int lda, const float *B, int ldb, const float *beta,
                              float *C, int ldc)
{
    CAPTURED("cublasSgemm", cublasSgemm_v2(h, ta, tb, m, n, k, &a_, A, lda, B, ldb, &b_, C, ldc));
    return gemm("cublasSgemm", h, ta, tb, m, n, k, alpha, A, CUDA_R_32F, lda, 0, B, CUDA_R_32F, ldb, 0, beta, C, ldc,
                0, 1);
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                         int k, const float *alpha, const float *A, int lda, long long int sA,
                                         const float *B, int ldb, long long int sB, const float *beta, float *C,
                                         int ldc, long long int sC, int batch)
{
    CAPTURED("cublasSgemmStridedBatched",
             cublasSgemmStridedBatched(h, ta, tb, m, n, k, &a_, A, lda, sA, B, ldb, sB, &b_, C, ldc, sC, batch));
    return gemm("cublasSgemmStridedBatched", h, ta, tb, m, n, k, alpha, A, CUDA_R_32F, lda, sA, B, CUDA_R_32F, ldb,
                sB, beta, C, ldc, sC, batch);
}

/* The Ex forms this project uses: A and B both CUDA_R_32F or both CUDA_R_16BF, C CUDA_R_32F, fp32 compute. */
static cublasStatus_t ex_types(const char *fn, cudaDataType at, cudaDataType bt, cudaDataType ct,
                               cublasComputeType_t comp)
{
    if (at == bt && (at == CUDA_R_32F || at == CUDA_R_16BF) && comp == CUBLAS_COMPUTE_32F &&
        (ct == CUDA_R_32F || (ct == CUDA_R_16BF && at == CUDA_R_16BF)))
        return CUBLAS_STATUS_SUCCESS;
    fprintf(stderr, "cuda-emu: %s: types A %d B %d C %d compute %d are not emulated: CUBLAS_STATUS_NOT_SUPPORTED\n",
            fn, (int)at, (int)bt, (int)ct, (int)comp);
    return CUBLAS_STATUS_NOT_SUPPORTED;
}

/* bf16 C: each problem runs on an f32 copy of C (read only when beta != 0), rounded back to nearest-even. */
static cublasStatus_t gemm_bf16_c(const char *fn, cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                                  int n, int k, const float *alpha, const void *A, cudaDataType at, int lda,
                                  long long sA, const void *B, cudaDataType bt, int ldb, long long sB,
                                  const float *beta, uint16_t *C, int ldc, long long sC, int batch)
{
    if (m > 0 && n > 0 && ldc >= m && batch > 0 && !operand_ok(fn, "C", C, 2, m, n, ldc, sC, batch))
        return CUBLAS_STATUS_EXECUTION_FAILED;
    if (emu::dry()) /* A and B checked over the whole batch, C above; nothing computed */
        return gemm(fn, h, ta, tb, m, n, k, alpha, A, at, lda, sA, B, bt, ldb, sB, beta, NULL, ldc, 0, batch, 1);
    std::vector<float> c;
    for (int b = 0; b < (batch > 0 ? batch : 1); b++) {
        uint16_t *cb = C + b * sC;
        if (m > 0 && n > 0 && ldc >= m) widen(c, cb, m, n, ldc);
        const char *pa = (const char *)A + b * sA * 2, *pb = (const char *)B + b * sB * 2;
        cublasStatus_t s = gemm(fn, h, ta, tb, m, n, k, alpha, pa, at, lda, 0, pb, bt, ldb, 0, beta, c.data(), ldc,
                                0, batch > 0 ? 1 : batch, 1);
        if (s != CUBLAS_STATUS_SUCCESS || batch <= 0 || !m || !n) return s;
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) {
                uint32_t u;
                memcpy(&u, &c[(size_t)j * ldc + i], 4);
                cb[(size_t)j * ldc + i] = (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16); /* finite values */
            }
    }
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                            const void *alpha, const void *A, cudaDataType at, int lda, const void *B,
                            cudaDataType bt, int ldb, const void *beta, void *C, cudaDataType ct, int ldc,
                            cublasComputeType_t comp, cublasGemmAlgo_t algo)
{
    CAPTURED("cublasGemmEx", cublasGemmEx(h, ta, tb, m, n, k, &a_, A, at, lda, B, bt, ldb, &b_, C, ct, ldc, comp, algo));
    cublasStatus_t s = ex_types("cublasGemmEx", at, bt, ct, comp);
    if (s != CUBLAS_STATUS_SUCCESS) return s;
    if (ct == CUDA_R_16BF)
        return gemm_bf16_c("cublasGemmEx", h, ta, tb, m, n, k, (const float *)alpha, A, at, lda, 0, B, bt, ldb, 0,
                           (const float *)beta, (uint16_t *)C, ldc, 0, 1);
    return gemm("cublasGemmEx", h, ta, tb, m, n, k, (const float *)alpha, A, at, lda, 0, B, bt, ldb, 0,
                (const float *)beta, (float *)C, ldc, 0, 1);
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                          int k, const void *alpha, const void *A, cudaDataType at, int lda,
                                          long long int sA, const void *B, cudaDataType bt, int ldb,
                                          long long int sB, const void *beta, void *C, cudaDataType ct, int ldc,
                                          long long int sC, int batch, cublasComputeType_t comp, cublasGemmAlgo_t algo)
{
    CAPTURED("cublasGemmStridedBatchedEx", cublasGemmStridedBatchedEx(h, ta, tb, m, n, k, &a_, A, at, lda, sA, B, bt,
                                                                      ldb, sB, &b_, C, ct, ldc, sC, batch, comp, algo));
    cublasStatus_t s = ex_types("cublasGemmStridedBatchedEx", at, bt, ct, comp);
    if (s != CUBLAS_STATUS_SUCCESS) return s;
    if (ct == CUDA_R_16BF)
        return gemm_bf16_c("cublasGemmStridedBatchedEx", h, ta, tb, m, n, k, (const float *)alpha, A, at, lda, sA,
                           B, bt, ldb, sB, (const float *)beta, (uint16_t *)C, ldc, sC, batch);
    return gemm("cublasGemmStridedBatchedEx", h, ta, tb, m, n, k, (const float *)alpha, A, at, lda, sA, B, bt, ldb,
                sB, (const float *)beta, (float *)C, ldc, sC, batch);
}

const char *cublasGetStatusName(cublasStatus_t s)
{
    switch (s) {
#define N(x) case x: return #x;
        N(CUBLAS_STATUS_SUCCESS) N(CUBLAS_STATUS_NOT_INITIALIZED) N(CUBLAS_STATUS_ALLOC_FAILED)
        N(CUBLAS_STATUS_INVALID_VALUE) N(CUBLAS_STATUS_ARCH_MISMATCH) N(CUBLAS_STATUS_MAPPING_ERROR)
        N(CUBLAS_STATUS_EXECUTION_FAILED) N(CUBLAS_STATUS_INTERNAL_ERROR) N(CUBLAS_STATUS_NOT_SUPPORTED)
        N(CUBLAS_STATUS_LICENSE_ERROR)
#undef N
    }
    return "<unknown>";
}

const char *cublasGetStatusString(cublasStatus_t s)
{
    switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "success";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED: return "the resource allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
    default: return "unknown error";
    }
}
