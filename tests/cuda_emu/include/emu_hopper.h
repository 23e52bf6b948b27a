/* emu_hopper.h - TEST-ONLY: what include/hopper_ptx.h (the shim of kernels/runtime/ptx/hopper_ptx.h) shares
 * with emu_hopper.cc, which holds the state: the block's mbarriers, its TMA copies in flight and landed, each
 * warpgroup's wgmma operations, each thread's wgmma-groups and the generic-proxy writes not yet fenced. Every
 * call is made from the kernel's thread, with the kernel's call site (file, line) for messages; a broken
 * precondition fails the launch and ends the calling thread. */
#ifndef CUDA_EMU_HOPPER_H
#define CUDA_EMU_HOPPER_H

#include <stddef.h>
#include <stdint.h>

namespace emu {
namespace hopper {

enum wgmma_type { WG_BF16, WG_F16, WG_TF32 };

void mbar_init(uint64_t *bar, uint32_t count, const char *file, int line);
void mbar_arrive(uint64_t *bar, uint32_t tx_bytes, int expect_tx, const char *file, int line);
/* parks until the phase of parity `parity` has completed, then returns 1 (a try_wait that waited) */
int mbar_try_wait(uint64_t *bar, uint32_t parity, const char *file, int line);
void fence_proxy_async(const char *file, int line);
void tma_load_2d(void *dst, const void *map, int c0, int c1, uint64_t *bar, const char *file, int line);
/* called at start-up by each .cu that includes <hopper_ptx.h>: the eyes report the program's shared-memory
 * writes to the layer, so that one before the block's first Hopper instruction is seen too */
int linked(void);
void desc_tile(const void *tile); /* wgmma_desc's tile: the descriptors' window addresses are decoded near it */
void wgmma_fence(const char *file, int line);
void wgmma_commit(const char *file, int line);
void wgmma_wait(int n, const char *file, int line);
/* trans: bit 0 A M-major (imm-trans-a), bit 1 B N-major (imm-trans-b); 0 both K-major */
void wgmma(int type, int n, float *d, uint64_t a, uint64_t b, int scale_d, int trans, const char *name,
           const char *file, int line);
void setmaxnreg(int inc, int n, const char *file, int line);
/* the emulated shared-memory window address of a pointer into the block's shared memory (its low 18 bits:
 * a descriptor keeps bits 4-17, so the alignment a descriptor sees is the pointer's own) */
inline uint32_t window(const void *p) { return (uint32_t)((uintptr_t)p & 0x3ffffu); }

} /* namespace hopper */
} /* namespace emu */

#endif
