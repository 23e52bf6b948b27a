/* cuda_fit.h - does a CUDA version fit the GPU this process runs on? One check that every version's fit check
 * calls before its first launch, so a version that does not fit is skipped with its reason instead of
 * failing:
 *
 *   const cuda_launch_need needs[] = {{(const void *)my_kernel, 256, smem_bytes, 80, 0}};
 *   const char *why = cuda_fit(needs, 1);   // NULL: it fits; else "needs 163,840 bytes of shared memory per
 *                                           // block, this GPU allows 101,376"
 *
 * It compares each launch with what the device reports: its compute capability, dynamic + static shared
 * memory against cudaDevAttrMaxSharedMemoryPerBlockOptin, threads against the kernel's own limit at its
 * register count (cudaFuncGetAttributes: registers x threads within the block's register file), and a
 * cooperative grid against cudaOccupancyMaxActiveBlocksPerMultiprocessor x multiProcessorCount. The reason
 * names the limit and both figures; the lesson prints it as "cuda-v7  skipped: needs ..." and `cuda` takes
 * the next version that fits. CUDA_VISIBLE_DEVICES chooses the device, as for every CUDA program: the check
 * asks device 0 of what it sees.
 *
 * Built only when CUDA is on (HAVE_CUDA); callable from C. */
#ifndef KERNELS_CUDA_FIT_H
#define KERNELS_CUDA_FIT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cuda_launch_need {
    const void *kernel;      /* the __global__ function: its registers and static shared memory */
    int threads;             /* per block */
    size_t dyn_smem;         /* dynamic shared memory per block, bytes */
    int min_cc;              /* the least compute capability, major * 10 + minor (80: sm_80) */
    long long coop_blocks;   /* a cooperative grid: blocks that must all be resident at once; 0 otherwise */
} cuda_launch_need;

/* NULL when every launch fits device 0; else the first reason (a static buffer, valid for 8 more calls) */
const char *cuda_fit(const cuda_launch_need *needs, int n);

/* What device 0 reports (a static struct, filled again at each call); NULL without a device. */
typedef struct cuda_device_info {
    char name[256];
    int cc;                  /* major * 10 + minor */
    int sms;
    size_t smem_optin;       /* dynamic shared memory a block may opt in to */
    size_t smem_per_sm;
    size_t total_mem;
    int regs_per_block;
} cuda_device_info;
const cuda_device_info *cuda_device_info_get(void);

#ifdef __cplusplus
}
#endif

#endif
