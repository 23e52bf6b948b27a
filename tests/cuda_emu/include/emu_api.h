/* emu_api.h - TEST-ONLY: what a C test asks the CPU emulator (tests/cuda_emu/test_emu.c). */
#ifndef CUDA_EMU_API_H
#define CUDA_EMU_API_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The message recorded with the last error (cudaGetLastError clears the code, not the message); "" if none. */
const char *emu_last_error_message(void);
/* Clears the recorded error and message. */
void emu_clear_error(void);
/* 1 under EMU_DRY=1: the dry run (emu_dry.cc), where device memory is address space and nothing is computed. */
int emu_dry(void);
/* Sets the dry-run mode as EMU_DRY would (0 off, 1 boundary blocks, 2 configurations only): for tests. */
void emu_set_dry(int mode);

/* Names a device allocation in the detectors' messages (dev_alloc passes its label). */
void emu_label_alloc(const void *p, const char *label);
/* [p, p + bytes) of a device allocation counts as never written again (initcheck): dev_alloc calls it after its
 * NaN poison fill, which is a host-side cudaMemset that compute-sanitizer would take as initialisation -- here
 * a kernel that reads a poisoned byte nothing wrote is still reported. */
void emu_mark_uninit(const void *p, size_t bytes);

/* The memory-efficiency profile of one kernel so far (EMU_PROFILE=1 or emu_profile_enable). Efficiencies are
 * requested bytes / (32-byte sectors * 32) over all its global loads (stores); bank_ways is the largest shared
 * memory wavefronts-per-request of any of its source lines. -1 where the kernel made no such access. Returns
 * 0 if the kernel never ran while profiling. */
typedef struct {
    double load_efficiency, store_efficiency, bank_ways;
    unsigned long long launches;
} emu_kernel_profile;
void emu_profile_enable(int on);
int emu_profile_kernel(const char *kernel, emu_kernel_profile *out);

#ifdef __cplusplus
}
#endif

#endif
