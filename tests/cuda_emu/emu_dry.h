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
 * (166912 bytes) and 227 KiB on sm_90 (232448). Source: the CUDA C++ Programming Guide, "Compute Capabilities",
 * table "Technical Specifications per Compute Capability" (maximum amount of shared memory per thread block).
 * The emulated device is an sm_90 (cudaGetDeviceProperties: major 9), so its opt-in limit is sm_90's; a kernel
 * meant to fit sm_80 too states its own limit (lesson 3's MS4_SMEM_LIMIT), and EMU_SMEM_OPTIN=166912 runs the
 * device with sm_80's limit (a test of a version that asks the device, as lesson 3's cuda-v8 does). */
static const size_t DEFAULT_DYN_SMEM = (size_t)48 << 10;
static const size_t SM80_OPTIN_DYN_SMEM = 166912, SM90_OPTIN_DYN_SMEM = 232448;
size_t optin_dyn_smem(void); /* EMU_SMEM_OPTIN if set (read at every call), else sm_90's */

/* A dry run's device memory: an H200's 141 GB, the largest GPU the lessons are written for. */
static const size_t DRY_TOTAL_MEM = (size_t)141000000000ull;

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
