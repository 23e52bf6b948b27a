/* emu_sched.h - TEST-ONLY: the scheduler's internals, shared by emu_sched.cc, emu_warp.cc and emu_launch.cc. */
#ifndef CUDA_EMU_SCHED_H
#define CUDA_EMU_SCHED_H

#include "emu_internal.h"
#include "include/emu_launch.h"

#include <stdint.h>
#include <ucontext.h>
#include <vector>

namespace emu {

/* T_BARRIER: a cuda::barrier wait; T_GRID: at a grid.sync() */
enum thread_state { T_READY, T_SYNC, T_WARP, T_DONE, T_BARRIER, T_GRID };

struct fiber {
    ucontext_t ctx; /* the portable switch */
    void *sp;       /* the x86-64 switch: saved stack pointer */
    char *stack;
    uint3 tid;
    int state;            /* thread_state */
    const char *file;     /* where it waits */
    int line;
    int kind;             /* warp_kind, when state == T_WARP */
    unsigned mask;
    uint64_t value;       /* what this lane contributes */
    uint64_t result;      /* what it gets back */
    int arg, width;
    const void *bar;      /* T_BARRIER: the barrier, the phase waited for, the wait's call site */
    uint64_t token;
    void *pc;
};

struct launch_state {
    const launch_cfg *cfg;
    int pass; /* 0: threads in order, blocks in order; 1: threads reversed, blocks shuffled */
};

/* Releases every warp operation whose mask has fully arrived: 1 if any was, 0 if none, -1 on an error. */
int resolve_warps(std::vector<fiber> &f);
/* Fails the launch from inside a block: the message names the kernel, the block and the pass. */
void block_fail(cudaError_t e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *kind_name(int k);
/* "threads 0-31: waiting at __syncthreads f.cu:12; threads 32-63: exited" (emu_warp.cc) */
void describe_states(const std::vector<fiber> &fibers, char *out, size_t cap);
/* The launch that the next run_block calls belong to, and the thread body. */
void set_launch(const launch_cfg &cfg, void (*body)(void *), void *ctx, int pass);
/* Runs the block blockIdx with blockDim threads (reversed: resumed in reverse order); 0 if it failed. */
int run_block(int reversed);
/* cp.async and cuda::barrier (emu_async.cc): per-block state, the parked wait, its release */
void async_block_begin(size_t nthreads);
/* After block_fail from inside a thread: leaves it for good (the launch has failed; the scheduler stops). */
void abandon_thread(void) __attribute__((noreturn));
void park_on_barrier(const void *bar, uint64_t token, void *pc);
int barrier_passed(const void *bar, uint64_t token);
void *async_pending_site(uintptr_t p); /* the call site of a copy not landed that covers byte p, or NULL */
/* The Hopper layer (emu_hopper.cc): its per-block state; a __syncthreads released; whether a thread parked at
 * an mbarrier or a wgmma.wait_group (a token with bit 62 or 63 set, hopper_token 1 or 2) may go on; what the
 * parked threads wait for, when none can (the deadlock message). */
void hopper_block_begin(size_t nthreads);
void hopper_barrier(void);
int hopper_passed(const void *bar, uint64_t token);
int hopper_token(uint64_t token);
void hopper_stuck(char *out, size_t cap);

/* A cooperative launch (cudaLaunchCooperativeKernel): every block resident at once, each with its own threads,
 * stacks and shared memory, parked at grid.sync() until every block of the grid has arrived (emu_launch.cc).
 * coop_begin makes room for nblocks; coop_run starts (first) or resumes block slot and runs it until it ends
 * (1), parks every thread at a grid.sync (2) or fails (0). coop_release readies every parked thread. */
void coop_begin(size_t nblocks);
int coop_run(size_t slot, int first, int reversed);
void coop_release(void);
void coop_end(void);
/* "grid.sync at f.cu:12" of a parked slot, for messages */
const char *coop_where(size_t slot);

} /* namespace emu */

#endif
