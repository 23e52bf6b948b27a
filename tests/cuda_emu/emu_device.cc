/* emu_device.cc - TEST-ONLY: device discovery, properties, versions, events, streams and error names under the
 * CPU emulator (NVIDIA's prototypes from cuda_runtime_api.h). The one device is named "emulated (CPU)":
 * the session (lessons/runner/session.c) sees the name and marks the row's timings as meaningless. */
#include "emu_dry.h"
#include "emu_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* EMU_DEVICE_ERROR=no-device|no-driver|driver makes device discovery fail the way a machine without a GPU (or with a
 * too-old driver) does, so the skip and fail paths of cuda_track.cu run in CI too. */
cudaError_t cudaGetDeviceCount(int *count)
{
    const char *e = getenv("EMU_DEVICE_ERROR");
    *count = 0;
    if (e && !strcmp(e, "no-device")) return emu::fail(cudaErrorNoDevice, "EMU_DEVICE_ERROR=no-device");
    if (e && (!strcmp(e, "driver") || !strcmp(e, "no-driver")))
        return emu::fail(cudaErrorInsufficientDriver, "EMU_DEVICE_ERROR=%s", e);
    *count = 1;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int *device) { *device = 0; return cudaSuccess; }
cudaError_t cudaSetDevice(int device) { return device == 0 ? cudaSuccess : cudaErrorInvalidDevice; }
cudaError_t cudaDriverGetVersion(int *v)
{
    const char *e = getenv("EMU_DEVICE_ERROR"); /* no-driver: what the runtime says when libcuda is absent */
    *v = e && !strcmp(e, "no-driver") ? 0 : CUDART_VERSION;
    return cudaSuccess;
}
cudaError_t cudaRuntimeGetVersion(int *v) { *v = CUDART_VERSION; return cudaSuccess; }

namespace emu {
const device_profile *selected_profile(void)
{
    static device_profile p;
    static char last[64];
    const char *e = getenv("EMU_GPU");
    if (!e || !*e) return NULL;
    if (strcmp(e, last) != 0) {
        if (!gpu_profile(gpu_index(e), &p)) {
            fprintf(stderr, "cuda-emu: EMU_GPU=%s: unknown GPU (%s)\n", e, gpu_names());
            exit(2);
        }
        snprintf(last, sizeof last, "%s", e);
    }
    return &p;
}
} /* namespace emu */

/* Without EMU_GPU: an sm_90 with sm_90's limits. With it, that GPU's figures. Either way one SM outside a dry run
 * (a cooperative launch's every block runs as fibers at once), the GPU's own count in a dry run (boundary blocks
 * only), so a persistent kernel's grid is planned there as on the GPU. */
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int device)
{
    if (device != 0) return cudaErrorInvalidDevice;
    const emu::device_profile *g = emu::selected_profile();
    memset(p, 0, sizeof *p);
    /* the session marks the timings of an emulated device as meaningless */
    if (g) snprintf(p->name, sizeof p->name, "emulated %s (CPU)", g->name);
    else snprintf(p->name, sizeof p->name, "emulated (CPU)");
    p->totalGlobalMem = g && emu::dry() ? g->mem_bytes : emu::TOTAL_MEM;
    p->sharedMemPerBlock = 48 << 10;
    p->warpSize = 32;
    p->maxThreadsPerBlock = 1024;
    p->maxThreadsDim[0] = 1024, p->maxThreadsDim[1] = 1024, p->maxThreadsDim[2] = 64;
    p->maxGridSize[0] = 2147483647, p->maxGridSize[1] = 65535, p->maxGridSize[2] = 65535;
    p->major = g ? g->cc / 10 : 9;
    p->minor = g ? g->cc % 10 : 0;
    p->multiProcessorCount = emu::dry() ? (g ? g->sms : 132) : 1;
    p->maxThreadsPerMultiProcessor = g ? g->threads_per_sm : 2048;
    p->maxBlocksPerMultiProcessor = g ? g->blocks_per_sm : 32;
    p->sharedMemPerMultiprocessor = g ? g->smem_per_sm : 233472; /* sm_90: 228 KiB */
    p->sharedMemPerBlockOptin = emu::optin_dyn_smem(); /* the opt-in limit the launch checks (emu_dry.h) */
    p->regsPerBlock = 65536;
    p->regsPerMultiprocessor = g ? g->regs_per_sm : 65536;
    p->l2CacheSize = (int)(g ? g->l2_bytes : 50000000);
    p->cooperativeLaunch = 1;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    if (device != 0) return cudaErrorInvalidDevice;
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    switch (attr) {
    case cudaDevAttrMultiProcessorCount: *value = p.multiProcessorCount; return cudaSuccess;
    case cudaDevAttrCooperativeLaunch: *value = p.cooperativeLaunch; return cudaSuccess;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = (int)p.sharedMemPerBlockOptin; return cudaSuccess;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *value = (int)p.sharedMemPerMultiprocessor; return cudaSuccess;
    case cudaDevAttrComputeCapabilityMajor: *value = p.major; return cudaSuccess;
    case cudaDevAttrComputeCapabilityMinor: *value = p.minor; return cudaSuccess;
    case cudaDevAttrMaxThreadsPerBlock: *value = p.maxThreadsPerBlock; return cudaSuccess;
    case cudaDevAttrMaxRegistersPerBlock: *value = p.regsPerBlock; return cudaSuccess;
    case cudaDevAttrL2CacheSize: *value = p.l2CacheSize; return cudaSuccess;
    default: return emu::fail(cudaErrorInvalidValue, "cudaDeviceGetAttribute: attribute %d is not emulated", (int)attr);
    }
}

/* A kernel's registers and static shared memory are nvcc's to know: here 0 (EMU_PTXAS's report is checked at the
 * launch instead, emu_resources.cc), so a block of up to 1024 threads; the dynamic opt-in as set. */
cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func)
{
    if (!attr || !func) return emu::fail(cudaErrorInvalidDeviceFunction, "cudaFuncGetAttributes: NULL kernel");
    memset(attr, 0, sizeof *attr);
    attr->maxThreadsPerBlock = 1024;
    attr->maxDynamicSharedSizeBytes = (int)emu::max_dynamic_smem(func);
    attr->ptxVersion = attr->binaryVersion = 90;
    return cudaSuccess;
}

/* The blocks of blockSize threads and dynSmem bytes one SM holds at once: the thread, block and shared-memory
 * limits of the emulated SM (registers and static shared memory are not known here: emu_resources.cc checks
 * them at launch when EMU_PTXAS names ptxas's report). */
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *num, const void *func, int blockSize, size_t dynSmem)
{
    (void)func;
    if (!num || blockSize <= 0 || blockSize > 1024) return cudaErrorInvalidValue;
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    size_t warps = ((size_t)blockSize + 31) / 32, b = (size_t)p.maxBlocksPerMultiProcessor;
    size_t by_threads = (size_t)p.maxThreadsPerMultiProcessor / (warps * 32);
    size_t by_smem = p.sharedMemPerMultiprocessor / (dynSmem + 1024); /* 1 KiB per block reserved (sm_80+) */
    if (by_threads < b) b = by_threads;
    if (by_smem < b) b = by_smem;
    *num = (int)b;
    return cudaSuccess;
}

/* Events hold a host timestamp; streams are names only (everything is synchronous). */
struct CUevent_st { double ms; };
struct CUstream_st { int unused; };

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

cudaError_t cudaEventCreate(cudaEvent_t *event) { *event = new CUevent_st{0.0}; return cudaSuccess; }
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int) { return cudaEventCreate(event); }
cudaError_t cudaEventDestroy(cudaEvent_t event) { delete event; return cudaSuccess; }
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t) { event->ms = now_ms(); return cudaSuccess; }
cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    *ms = (float)(end->ms - start->ms);
    return cudaSuccess;
}
cudaError_t cudaStreamCreate(cudaStream_t *s) { *s = new CUstream_st{0}; return cudaSuccess; }
cudaError_t cudaStreamDestroy(cudaStream_t s) { delete s; return cudaSuccess; }
cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaPeekAtLastError(); }

const char *cudaGetErrorName(cudaError_t e)
{
    switch (e) {
#define N(x) case x: return #x;
        N(cudaSuccess) N(cudaErrorInvalidValue) N(cudaErrorMemoryAllocation) N(cudaErrorInvalidConfiguration)
        N(cudaErrorNoDevice) N(cudaErrorInsufficientDriver) N(cudaErrorInvalidDevice) N(cudaErrorLaunchFailure)
        N(cudaErrorIllegalAddress) N(cudaErrorIllegalInstruction) N(cudaErrorMisalignedAddress)
#undef N
    default: return "cudaErrorUnknown";
    }
}

const char *cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInsufficientDriver: return "CUDA driver version is insufficient for CUDA runtime version";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorIllegalInstruction: return "an illegal instruction was encountered";
    default: return "unknown error";
    }
}
