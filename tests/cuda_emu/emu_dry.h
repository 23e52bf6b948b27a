/* emu_dry.h - TEST-ONLY: the dry run (EMU_DRY=1) and per-kernel launch limits, shared by the emulator's files
 * (emu_dry.cc says what a dry run does). */
#ifndef CUDA_EMU_DRY_H
#define CUDA_EMU_DRY_H

#include "include/emu_launch.h"

#include <setjmp.h>
#include <stddef.h>
#include <vector>

namespace emu {

/* Dynamic shared memory per block: 48 KiB without an opt-in; with cudaFuncSetAttribute at most 163 KiB on sm_80
 * (166912 bytes), 227 KiB on sm_90 (232448), 99 KiB on sm_86, sm_89 and sm_120 (101376). Source: the CUDA C++
 * Programming Guide, "Compute Capabilities", table "Technical Specifications per Compute Capability" (maximum
 * amount of shared memory per thread block). Without EMU_GPU the emulated device is an sm_90 (major 9), so its
 * opt-in limit is sm_90's; EMU_SMEM_OPTIN=bytes overrides the limit alone. */
static const size_t DEFAULT_DYN_SMEM = (size_t)48 << 10;
static const size_t SM80_OPTIN_DYN_SMEM = 166912, SM90_OPTIN_DYN_SMEM = 232448;
size_t optin_dyn_smem(void); /* EMU_SMEM_OPTIN if set (read at every call), else EMU_GPU's, else sm_90's */

/* EMU_GPU=NAME: the emulated device is that GPU of the time model's table (emu_gpu.cc): it reports the GPU's
 * properties (compute capability, SMs in a dry run, shared memory per block and per SM, residency, L2, memory)
 * and every launch check holds to its limits. Read at every call; an unknown name exits with the list. */
struct device_profile {
    const char *name;
    int cc, sms;
    size_t smem_optin, smem_per_sm;
    int threads_per_sm, blocks_per_sm, regs_per_sm;
    size_t l2_bytes, mem_bytes;
};
int gpu_index(const char *name);                  /* emu_gpu.cc: -1 if the table has no such GPU */
int gpu_profile(int g, device_profile *p);        /* 0 if g is out of range */
const char *gpu_names(void);                      /* "A6000, A100, ..." */
const device_profile *selected_profile(void);     /* EMU_GPU's, NULL without it */

/* A dry run's device memory: EMU_GPU's, else an H200's 141 GB, the largest GPU the lessons are written for. */
static const size_t DRY_TOTAL_MEM = (size_t)141000000000ull;
size_t dry_total_mem(void);

int dry(void);                               /* EMU_DRY: 0 off, 1 boundary blocks, 2 configurations only */
void *dry_reserve(size_t bytes);             /* address space only, a guard region after the end; NULL if refused */
void dry_release(void *p, size_t bytes);
std::vector<size_t> dry_blocks(const dim3 &grid); /* the boundary blocks a dry launch runs, linear indices */
/* The launch a fault is reported against and where it jumps back to (NULL, NULL: none); the message. */
void dry_running(const launch_cfg *cfg, sigjmp_buf *back);
const char *dry_fault_message(void);
size_t max_dynamic_smem(const void *kernel); /* what cudaFuncSetAttribute allowed this kernel, else 48 KiB */

/* emu_resources.cc (EMU_PTXAS): the kernel's registers and static shared memory against the block's limits
 * (0: failed, recorded); the occupancy table at exit. */
int resources_ok(const launch_cfg &cfg);
void print_occupancy(void);

} /* namespace emu */

#endif
