/* emu_async.h - TEST-ONLY: asynchronous global -> shared copies (cp.async) on the CPU emulator, the part the shims
 * share (include/cuda_pipeline.h, include/cuda/barrier, include/cuda/pipeline); the state is emu_async.cc's.
 *
 * A copy is checked when it is issued (destination in the block's shared memory, source in a device allocation,
 * both aligned to the copy's size, the size one cp.async takes), its source is read then, and its destination is
 * filled with poison (0xFF bytes: NaN in float and bf16, -1 in integers). Its data lands only when the thread
 * waits for it: __pipeline_wait_prior / pipeline consumer_wait for its group, or the completion of the barrier
 * phase it was bound to. A read of the destination before that sees poison (and initcheck reports it). */
#ifndef CUDA_EMU_ASYNC_H
#define CUDA_EMU_ASYNC_H

#include <stddef.h>
#include <stdint.h>

namespace emu {

/* One copy of the calling thread: bytes in {4, 8, 16} (the cp.async sizes) unless any_size (cuda::memcpy_async
 * with a plain size, which the library splits into such copies: align is then the alignment it was promised);
 * src_bytes <= bytes are read from src, the rest is zero-filled. bar: the barrier whose current phase it is bound
 * to, or NULL for the thread's current (uncommitted) group. pc: the call site in the kernel. */
void async_copy(void *dst, const void *src, size_t bytes, size_t src_bytes, size_t align, int any_size, void *bar,
                void *pc);
void async_commit(void);               /* closes the thread's current group (an empty group is a group) */
void async_wait_prior(size_t n);       /* lands every committed group of the thread but the newest n */
void async_wait_head(void);            /* cuda::pipeline: lands the oldest committed group not released */
void async_release_head(void);         /* cuda::pipeline: the oldest group is done with */

/* cuda::barrier's state lives in the barrier object (shared memory), handled only here: none of its accesses
 * is instrumented, so they are not taken for the kernel's own shared-memory traffic. */
struct barrier_state {
    int64_t expected;   /* arrivals per phase */
    int64_t pending;    /* arrivals still missing in the current phase */
    uint64_t phase;
    uint64_t magic;     /* set by init: arriving at a barrier never initialised fails the launch */
};
void barrier_init(barrier_state *b, int64_t expected, void *pc);
/* Arrives n times; returns the token (the phase arrived at). The phase completes at the last arrival: the copies
 * bound to it land, and a barrier of the whole block orders the block's accesses as __syncthreads does. */
uint64_t barrier_arrive(barrier_state *b, int64_t n, int drop, void *pc);
void barrier_wait(barrier_state *b, uint64_t token, void *pc); /* parks until token's phase has completed */

} /* namespace emu */

#endif
