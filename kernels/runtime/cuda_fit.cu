/* cuda_fit.cu - the one fit check of every CUDA version (cuda_fit.h says what it compares). */
#include "cuda_check.h"
#include "cuda_fit.h"
#include "cuda_track.h"

#include <stdio.h>
#include <string.h>

/* the reasons live in a small ring, so a caller may hold a few at once (the `cuda` alias's pick, the row) */
static char *reason_buffer(void)
{
    static char ring[8][320];
    static int next;
    return ring[next++ % 8];
}

/* 101376 -> "101,376" */
static const char *grouped(long long v, char *buf)
{
    char digits[32];
    int n = snprintf(digits, sizeof digits, "%lld", v < 0 ? -v : v), o = 0;
    if (v < 0) buf[o++] = '-';
    for (const char *d = digits; *d; d++) {
        if (d != digits && (n - (d - digits)) % 3 == 0) buf[o++] = ',';
        buf[o++] = *d;
    }
    buf[o] = 0;
    return buf;
}

/* read at every call (a few per run): what a test's emulated device reports may change between two checks */
extern "C" const cuda_device_info *cuda_device_info_get(void)
{
    static cuda_device_info info;
    if (cuda_device_count(NULL) == 0) return NULL; /* it reports a broken setup itself and exits */
    cudaDeviceProp p;
    CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
    snprintf(info.name, sizeof info.name, "%s", p.name);
    info.cc = p.major * 10 + p.minor;
    info.sms = p.multiProcessorCount;
    info.smem_optin = p.sharedMemPerBlockOptin;
    info.smem_per_sm = p.sharedMemPerMultiprocessor;
    info.total_mem = p.totalGlobalMem;
    info.regs_per_block = p.regsPerBlock;
    return &info;
}

static const char *fit_one(const cuda_launch_need *need, const cuda_device_info *dev)
{
    char a[32], b[32], c[32];
    char *why = reason_buffer();
    if (dev->cc < need->min_cc) {
        snprintf(why, 320, "needs compute capability %d.%d, this GPU has %d.%d", need->min_cc / 10,
                 need->min_cc % 10, dev->cc / 10, dev->cc % 10);
        return why;
    }
    cudaFuncAttributes attr;
    CUDA_CHECK(cudaFuncGetAttributes(&attr, need->kernel));
    size_t smem = need->dyn_smem + attr.sharedSizeBytes;
    if (smem > dev->smem_optin) {
        snprintf(why, 320, "needs %s bytes of shared memory per block, this GPU allows %s",
                 grouped((long long)smem, a), grouped((long long)dev->smem_optin, b));
        return why;
    }
    if (need->threads > attr.maxThreadsPerBlock) {
        snprintf(why, 320, "needs %s threads per block at %d registers each, this GPU runs at most %s (%s "
                 "registers per block)", grouped(need->threads, a), attr.numRegs,
                 grouped(attr.maxThreadsPerBlock, b), grouped(dev->regs_per_block, c));
        return why;
    }
    if (need->coop_blocks > 0) {
        int per_sm = 0;
        if (need->dyn_smem > 48u << 10)
            CUDA_CHECK(cudaFuncSetAttribute(need->kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            (int)need->dyn_smem));
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, need->kernel, need->threads,
                                                                 need->dyn_smem));
        long long resident = (long long)per_sm * dev->sms;
        if (need->coop_blocks > resident) {
            snprintf(why, 320, "needs %s blocks resident at once (a cooperative grid), this GPU holds %s (%d "
                     "per SM x %d SMs)", grouped(need->coop_blocks, a), grouped(resident, b), per_sm,
                     dev->sms);
            return why;
        }
    }
    return NULL;
}

extern "C" const char *cuda_fit(const cuda_launch_need *needs, int n)
{
    const cuda_device_info *dev = cuda_device_info_get();
    if (!dev) return "no CUDA device to check the launch against";
    for (int i = 0; i < n; i++) {
        const char *why = fit_one(&needs[i], dev);
        if (why) return why;
    }
    return NULL;
}
