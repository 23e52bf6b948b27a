/* cuda_pipeline.h - TEST-ONLY shim: the pipeline primitives (cp.async from global to shared memory) on the CPU
 * emulator. A .cu file's `#include <cuda_pipeline.h>` finds this file in the emulation build; nvcc finds
 * NVIDIA's. Semantics, checks and the poison before the wait: include/emu_async.h, emu_async.cc.
 *
 *   __pipeline_memcpy_async(dst_shared, src_global, size_and_align, zfill = 0)  4, 8 or 16 bytes, both aligned
 *   __pipeline_commit()                closes the thread's current batch of copies
 *   __pipeline_wait_prior(n)           every batch of the thread but the newest n has landed
 * Each is noinline so that its return address is the kernel's call site (the eyes' source line). */
#ifndef CUDA_EMU_CUDA_PIPELINE_H
#define CUDA_EMU_CUDA_PIPELINE_H

#include "emu_async.h"

__attribute__((noinline, no_sanitize_thread)) inline void
__pipeline_memcpy_async(void *__restrict__ dst_shared, const void *__restrict__ src_global, size_t size_and_align,
                        size_t zfill = 0)
{
    ::emu::async_copy(dst_shared, src_global, size_and_align, zfill <= size_and_align ? size_and_align - zfill
                      : size_and_align + 1, size_and_align, 0, NULL, __builtin_return_address(0));
}
__attribute__((noinline)) inline void __pipeline_commit(void) { ::emu::async_commit(); }
__attribute__((noinline)) inline void __pipeline_wait_prior(size_t prior) { ::emu::async_wait_prior(prior); }

#endif
