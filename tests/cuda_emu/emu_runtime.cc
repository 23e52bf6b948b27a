/* emu_runtime.cc - TEST-ONLY: the CUDA runtime calls this project makes, as synchronous host operations with
 * NVIDIA's exact prototypes (the declarations come from cuda_runtime_api.h, so a mismatch does not compile).
 *
 * Device memory is host memory from malloc, registered so that copies, kernels and the cuBLAS shim can check
 * that every pointer they touch lies in a live allocation. Without ASan each allocation has RZ bytes of red
 * zone either side, filled with a pattern and checked after every launch; under ASan the red zones are
 * ASan's own (exact-size malloc), so an out-of-bounds access is reported with its source line. */
#include "emu_dry.h"
#include "emu_eyes.h"
#include "emu_internal.h"
#include "include/emu_api.h"

#include <map>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__SANITIZE_ADDRESS__)
static const size_t RZ = 0;
#else
static const size_t RZ = 256;
#endif
static const unsigned char RZ_FILL = 0xA5;

static std::map<uintptr_t, emu::alloc_info> allocs; /* by base address */
static size_t live_bytes;
static cudaError_t last_error = cudaSuccess;
static char last_msg[2048];

namespace emu {

const alloc_info *find_alloc(const void *p, size_t bytes)
{
    uintptr_t u = (uintptr_t)p;
    auto it = allocs.upper_bound(u);
    if (it == allocs.begin()) return NULL;
    --it;
    const alloc_info &a = it->second;
    if (u + bytes > it->first + a.bytes || (bytes > 0 && u >= it->first + a.bytes)) return NULL;
    return &a;
}

static int zone_ok(const unsigned char *z, size_t n, size_t *bad)
{
    for (size_t i = 0; i < n; i++)
        if (z[i] != RZ_FILL) { *bad = i; return 0; }
    return 1;
}

/* One allocation's red zones; a damaged zone is described, then refilled so that one bug is reported once. */
static int zones_ok(const alloc_info &a, char *msg, size_t cap)
{
    size_t bad;
    if (!zone_ok((unsigned char *)a.base - RZ, RZ, &bad))
        snprintf(msg, cap, "write %zu bytes before the start of a %zu-byte device allocation", RZ - bad, a.bytes);
    else if (!zone_ok((unsigned char *)a.base + a.bytes, RZ, &bad))
        snprintf(msg, cap, "write at byte %zu of a %zu-byte device allocation (%zu past its end)", a.bytes + bad,
                 a.bytes, bad);
    else return 1;
    memset(a.base - RZ, RZ_FILL, RZ);
    memset(a.base + a.bytes, RZ_FILL, RZ);
    return 0;
}

void alloc_span(uintptr_t *lo, uintptr_t *hi)
{
    *lo = *hi = 0;
    if (allocs.empty()) return;
    *lo = allocs.begin()->first;
    const alloc_info &last = allocs.rbegin()->second;
    *hi = (uintptr_t)last.base + last.bytes;
}

int redzones_intact(char *msg, size_t cap)
{
    for (auto &kv : allocs)
        if (!zones_ok(kv.second, msg, cap)) return 0;
    return 1;
}

cudaError_t fail(cudaError_t err, const char *fmt, ...)
{
    char buf[sizeof last_msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "cuda-emu: %s\n", buf);
    if (last_error == cudaSuccess) {
        last_error = err;
        snprintf(last_msg, sizeof last_msg, "%s", buf);
    }
    return err;
}

int launch_error_pending(void) { return last_error != cudaSuccess; }

counters stats;

extern "C" unsigned long long emu_blocks_run(void) { return stats.blocks; }

static void print_stats(void)
{
    fprintf(stderr, "cuda-emu stats: %llu kernel launches, %llu blocks, %llu threads, %llu fiber resumes (first "
            "pass); %llu cuBLAS GEMM calls, %.3g GEMM flops\n", stats.launches, stats.blocks, stats.threads,
            stats.resumes, stats.gemm_calls, (double)stats.gemm_flops);
    print_occupancy(); /* with EMU_PTXAS */
}

__attribute__((constructor)) static void stats_at_exit(void)
{
    const char *e = getenv("EMU_STATS");
    if (e && atoi(e)) atexit(print_stats);
}

} /* namespace emu */

extern "C" const char *emu_last_error_message(void) { return last_msg; }
extern "C" void emu_clear_error(void) { last_error = cudaSuccess; last_msg[0] = 0; }

/* EMU_DRY=1: address space only, committed by what the kernels write (emu_dry.cc); an H200's memory at most. */
static cudaError_t dry_malloc(void **devPtr, size_t size)
{
    char *p = size <= emu::dry_total_mem() - live_bytes ? (char *)emu::dry_reserve(size) : NULL;
    if (!p) return emu::fail(cudaErrorMemoryAllocation, "dry run: cudaMalloc(%zu bytes) with %zu live: over the "
                             "%zu bytes of the largest GPU modelled", size, live_bytes, emu::dry_total_mem());
    allocs[(uintptr_t)p] = emu::alloc_info{p, size, __builtin_return_address(0), "", NULL, NULL}; /* no shadow: dry */
    live_bytes += size;
    *devPtr = p;
    return cudaSuccess;
}

extern "C" void emu_label_alloc(const void *p, const char *label)
{
    auto it = allocs.find((uintptr_t)p);
    if (it != allocs.end()) snprintf(it->second.label, sizeof it->second.label, "%s", label ? label : "");
}

cudaError_t cudaMalloc(void **devPtr, size_t size)
{
    if (!devPtr) return cudaErrorInvalidValue;
    if (emu::capture_refuses("cudaMalloc")) return cudaErrorStreamCaptureUnsupported;
    if (emu::dry()) return dry_malloc(devPtr, size);
    void *mem = NULL; /* cudaMalloc's 256-byte alignment (RZ is a multiple of 256) */
    if (posix_memalign(&mem, 256, size + 2 * RZ ? size + 2 * RZ : 1)) return cudaErrorMemoryAllocation;
    unsigned char *raw = (unsigned char *)mem;
    memset(raw, RZ_FILL, RZ);
    memset(raw + RZ + size, RZ_FILL, RZ);
    char *p = (char *)raw + RZ;
    emu::alloc_info &a = allocs[(uintptr_t)p];
    a = emu::alloc_info{p, size, __builtin_return_address(0), "", NULL, NULL};
    emu::eyes_alloc(a);
    live_bytes += size;
    *devPtr = p;
    return cudaSuccess;
}

cudaError_t cudaFree(void *devPtr)
{
    if (!devPtr) return cudaSuccess;
    if (emu::capture_refuses("cudaFree")) return cudaErrorStreamCaptureUnsupported;
    auto it = allocs.find((uintptr_t)devPtr);
    if (it == allocs.end()) return emu::fail(cudaErrorInvalidValue, "cudaFree(%p): not a live device allocation", devPtr);
    live_bytes -= it->second.bytes;
    if (emu::dry()) {
        emu::dry_release(devPtr, it->second.bytes);
        allocs.erase(it);
        return cudaSuccess;
    }
    char msg[256];
    int ok = emu::zones_ok(it->second, msg, sizeof msg);
    emu::eyes_free(it->second);
    free((char *)devPtr - RZ);
    allocs.erase(it);
    return ok ? cudaSuccess : emu::fail(cudaErrorIllegalAddress, "found at cudaFree: out-of-bounds %s", msg);
}

static cudaError_t dev_range(const void *p, size_t n, const char *what)
{
    if (emu::find_alloc(p, n)) return cudaSuccess;
    return emu::fail(cudaErrorInvalidValue, "%s: [%p, +%zu bytes) is not inside one live device allocation", what, p, n);
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    cudaError_t e = cudaSuccess;
    if (emu::capture_refuses("cudaMemcpy")) return cudaErrorStreamCaptureImplicit;
    if (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice) e = dev_range(dst, count, "cudaMemcpy dst");
    if (e == cudaSuccess && (kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice))
        e = dev_range(src, count, "cudaMemcpy src");
    if (e != cudaSuccess) return e;
    if (count && !emu::dry()) memmove(dst, src, count); /* dry: the ranges are checked, no byte moves */
    if (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice) emu::eyes_host_wrote(dst, count);
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t)
{
    return cudaMemcpy(dst, src, count, kind);
}

cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
    if (emu::capture_refuses("cudaMemset")) return cudaErrorStreamCaptureImplicit;
    cudaError_t e = dev_range(devPtr, count, "cudaMemset");
    if (e != cudaSuccess || !count) return e;
    if (!emu::dry()) memset(devPtr, value, count);
    emu::eyes_host_wrote(devPtr, count);
    return e;
}

cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t) { return cudaMemset(devPtr, value, count); }

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
    /* Only cudaMalloc takes device memory here: the cuBLAS shim allocates none, so "untracked" reads 0. */
    size_t all = emu::dry() ? emu::dry_total_mem() : emu::TOTAL_MEM;
    if (free_bytes) *free_bytes = all - live_bytes;
    if (total) *total = all;
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void)
{
    if (emu::capture_refuses("cudaDeviceSynchronize")) return cudaErrorStreamCaptureUnsupported;
    return last_error; /* launches are synchronous: a pending error */
}
cudaError_t cudaGetLastError(void) { cudaError_t e = last_error; last_error = cudaSuccess; return e; }
cudaError_t cudaPeekAtLastError(void) { return last_error; }
