/* emu_sched.cc - TEST-ONLY: the block scheduler. Every thread of a block is a fiber (one reused stack per
 * thread) that runs until __syncthreads, a warp operation or its end; blocks run one at a time.
 *
 * Fibers are ucontext's, switched by swapcontext -- except on x86-64, where a 12-instruction switch replaces
 * it: glibc's swapcontext makes a sigprocmask system call per switch, which made lesson 2's medium test spend
 * half its time in the kernel (sys 2.3 s of 4.9 s at v=5). Same fibers, same stacks; only the switch differs.
 *
 * When no thread can run: warp operations whose mask has fully arrived are computed from the saved values
 * and released; otherwise a __syncthreads is released if every live thread waits at that same one; anything
 * else (a thread exited or waiting elsewhere) fails the launch, listing each thread's state. */
#include "emu_eyes.h"
#include "emu_sched.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define EMU_ASAN 1
static const size_t STACK = 512 << 10;
#else
#define EMU_ASAN 0
static const size_t STACK = 128 << 10;
#endif

uint3 threadIdx, blockIdx;
dim3 blockDim, gridDim;

#if defined(__x86_64__) && !defined(EMU_UCONTEXT)
#define EMU_FAST 1
/* emu_switch(save, to): pushes the callee-saved registers, stores rsp in *save, loads `to`, pops, returns. */
extern "C" void emu_switch(void **save, void *to);
__asm__(".text\n.globl emu_switch\n.type emu_switch,@function\nemu_switch:\n"
        "pushq %rbp\npushq %rbx\npushq %r12\npushq %r13\npushq %r14\npushq %r15\n"
        "movq %rsp, (%rdi)\nmovq %rsi, %rsp\n"
        "popq %r15\npopq %r14\npopq %r13\npopq %r12\npopq %rbx\npopq %rbp\nret\n"
        ".size emu_switch,.-emu_switch\n");
#else
#define EMU_FAST 0
#endif

namespace emu {

static void *sched_sp; /* EMU_FAST: the scheduler's saved stack pointer */
static std::vector<fiber> fibers;
static char *stacks;
static size_t stacks_count;
#if EMU_ASAN
/* A fiber's stack shadow after it ends. One whose body returned left poisoned only the frames still above it
 * (trampoline's, the last switch's), within the top TOP_POISON bytes; one that did not return (abandoned, or its
 * launch failed mid-block) may have left any of the stack poisoned: deep_poison marks those stacks. Unpoisoning
 * all 512 KiB of every stack writes 64 KiB of shadow per thread: a cooperative dry run of 1,188 blocks of 256
 * threads faulted in 9 GB of shadow and took 14 s. */
static const size_t TOP_POISON = 16 << 10;
static std::vector<unsigned char> deep_poison; /* per stack */
static void unpoison_stack(size_t i)
{
    char *s = stacks + i * STACK;
    if (deep_poison[i]) ASAN_UNPOISON_MEMORY_REGION(s, STACK);
    else ASAN_UNPOISON_MEMORY_REGION(s + STACK - TOP_POISON, TOP_POISON);
}
#endif
#if !EMU_FAST
static ucontext_t sched_ctx;
#endif
static int cur;
static int failed;
static void (*body_fn)(void *);
static void *body_ctx;
#if EMU_ASAN
static const void *sched_bottom; /* the scheduler's stack, for switching back */
static size_t sched_size;
#endif

#if EMU_FAST
#define SWITCH_TO_FIBER(t) emu_switch(&sched_sp, fibers[t].sp)
#define SWITCH_TO_SCHED() emu_switch(&fibers[cur].sp, sched_sp)
#else
#define SWITCH_TO_FIBER(t) swapcontext(&sched_ctx, &fibers[t].ctx)
#define SWITCH_TO_SCHED() swapcontext(&fibers[cur].ctx, &sched_ctx)
#endif

static void to_fiber(int t)
{
#if EMU_ASAN
    void *fake = NULL;
    __sanitizer_start_switch_fiber(&fake, fibers[t].stack, STACK);
    SWITCH_TO_FIBER(t);
    __sanitizer_finish_switch_fiber(fake, NULL, NULL);
#else
    SWITCH_TO_FIBER(t);
#endif
}

static void to_scheduler(int dying)
{
#if EMU_ASAN
    void *fake = NULL;
    __sanitizer_start_switch_fiber(dying ? NULL : &fake, sched_bottom, sched_size);
    SWITCH_TO_SCHED();
    __sanitizer_finish_switch_fiber(fake, &sched_bottom, &sched_size);
#else
    (void)dying;
    SWITCH_TO_SCHED();
#endif
}

static void trampoline(void)
{
#if EMU_ASAN
    __sanitizer_finish_switch_fiber(NULL, &sched_bottom, &sched_size);
#endif
    body_fn(body_ctx);
    fibers[cur].state = T_DONE;
#if EMU_ASAN
    deep_poison[(size_t)(fibers[cur].stack - stacks) / STACK] = 0; /* its frames below here returned */
#endif
    to_scheduler(1);
    abort(); /* never resumed */
}

void syncthreads(const char *file, int line)
{
    fiber &f = fibers[cur];
    f.state = T_SYNC, f.file = file, f.line = line;
    to_scheduler(0);
}

uint64_t warp_op(warp_kind k, unsigned mask, uint64_t value, int arg, int width, const char *file, int line)
{
    fiber &f = fibers[cur];
    f.state = T_WARP, f.kind = k, f.mask = mask, f.value = value, f.arg = arg, f.width = width;
    f.file = file, f.line = line;
    to_scheduler(0);
    return fibers[cur].result;
}

void abandon_thread(void)
{
    fibers[cur].state = T_DONE;
    to_scheduler(1);
    abort(); /* never resumed */
}

void park_on_barrier(const void *bar, uint64_t token, void *pc)
{
    fiber &f = fibers[cur];
    f.state = T_BARRIER, f.bar = bar, f.token = token, f.pc = pc, f.file = NULL, f.line = 0;
    to_scheduler(0);
}

static void ensure_stacks(size_t n)
{
    if (n <= stacks_count) return;
#if EMU_ASAN
    for (size_t i = 0; i < stacks_count; i++) unpoison_stack(i); /* the addresses may be mapped again */
#endif
    if (stacks) munmap(stacks, stacks_count * STACK);
    stacks = (char *)mmap(NULL, n * STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (stacks == MAP_FAILED) { perror("cuda-emu: mmap of fiber stacks"); abort(); }
    stacks_count = n;
#if EMU_ASAN
    deep_poison.assign(n, 0);
#endif
}

static launch_state L;

/* The running block's fibers, on the stacks of slot `slot` (a cooperative launch keeps every block's). */
static void block_init(size_t slot)
{
    size_t n = (size_t)blockDim.x * blockDim.y * blockDim.z;
    fibers.assign(n, fiber());
    for (size_t t = 0; t < n; t++) {
        fiber &f = fibers[t];
        f.tid.x = (unsigned)(t % blockDim.x);
        f.tid.y = (unsigned)(t / blockDim.x % blockDim.y);
        f.tid.z = (unsigned)(t / ((size_t)blockDim.x * blockDim.y));
        f.stack = stacks + (slot * n + t) * STACK;
#if EMU_ASAN
        unpoison_stack(slot * n + t);
        deep_poison[slot * n + t] = 1; /* until its body returns */
#endif
#if EMU_FAST
        /* a stack that emu_switch "returns" into trampoline from: 6 saved registers, then its address, then
         * a null return address for trampoline itself (so rsp % 16 == 8 on entry, as after a call) */
        void **top = (void **)(f.stack + STACK);
        top[-1] = NULL;
        top[-2] = (void *)trampoline;
        for (int r = 3; r <= 8; r++) top[-r] = NULL;
        f.sp = top - 8;
#else
        getcontext(&f.ctx);
        f.ctx.uc_stack.ss_sp = f.stack;
        f.ctx.uc_stack.ss_size = STACK;
        f.ctx.uc_link = NULL;
        makecontext(&f.ctx, trampoline, 0);
#endif
    }
}

/* Runs the block's threads until all have ended (1), all wait at a grid.sync (2), or the launch failed (0). */
static int block_loop(int reversed)
{
    size_t n = fibers.size();
    for (;;) {
        for (size_t i = 0; i < n; i++) {
            int t = (int)(reversed ? n - 1 - i : i);
            if (fibers[t].state != T_READY) continue;
            cur = t;
            threadIdx = fibers[t].tid;
            stats.resumes += !L.pass;
            to_fiber(t);
            if (failed) return 0;
        }
        size_t done = 0, sync = 0, grid = 0;
        for (const fiber &f : fibers) done += f.state == T_DONE, sync += f.state == T_SYNC, grid += f.state == T_GRID;
        if (done == n) {
            eyes_block_end();
            return 1;
        }
        int released = 0;
        for (fiber &f : fibers)
            if (f.state == T_BARRIER && barrier_passed(f.bar, f.token)) f.state = T_READY, released = 1;
        if (released) continue;
        int r = resolve_warps(fibers);
        if (r < 0) return 0;
        if (r > 0) continue;
        if (grid == n) return 2; /* the whole block waits at grid.sync: the grid decides (emu_launch.cc) */
        int same_site = 1;
        const fiber *first = NULL;
        for (const fiber &f : fibers)
            if (f.state == T_SYNC) {
                if (!first) first = &f;
                else if (f.line != first->line || f.file != first->file) same_site = 0;
            }
        /* EMU_BARRIER_BY_ID=1: a GPU's bar.sync 0 counts arrivals whatever the site (PTX calls __syncthreads at
         * different sites undefined: barrier.sync.aligned; SGEMM_CUDA's kernel 11 relies on it, predict-peers) */
        static int by_id = -1;
        if (by_id < 0) by_id = getenv("EMU_BARRIER_BY_ID") && atoi(getenv("EMU_BARRIER_BY_ID"));
        if (sync == n - done && done == 0 && (same_site || by_id)) {
            for (fiber &f : fibers) f.state = T_READY;
            eyes_barrier();
            hopper_barrier();
            continue;
        }
        char states[1200], stuck[900] = "";
        describe_states(fibers, states, sizeof states);
        size_t bars = 0, hopper = 0;
        for (const fiber &f : fibers) bars += f.state == T_BARRIER, hopper += f.state == T_BARRIER && hopper_token(f.token);
        if (hopper) hopper_stuck(stuck, sizeof stuck);
        block_fail(cudaErrorLaunchFailure, "%s: not every thread of the block reached it (divergent or skipped "
                   "barrier, or a deadlocked warp operation): %s%s%s",
                   grid ? "grid.sync" : sync ? "__syncthreads" : hopper ? "mbarrier/wgmma wait" : bars ? "cuda::barrier"
                   : "warp operation", states, stuck[0] ? "; " : "", stuck);
        return 0;
    }
}

int run_block(int reversed)
{
    size_t n = (size_t)blockDim.x * blockDim.y * blockDim.z;
    ensure_stacks(n);
    block_init(0);
    eyes_block_begin(n);
    async_block_begin(n);
    int r = block_loop(reversed);
    if (r == 2) {
        block_fail(cudaErrorLaunchFailure, "grid.sync() in a launch that is not cooperative: only "
                   "cudaLaunchCooperativeKernel makes every block of the grid resident at once (a <<<>>> launch "
                   "that waits for the whole grid deadlocks)");
        return 0;
    }
    return r;
}

/* ---- cooperative launches: every block's fibers kept, one block's swapped into `fibers` at a time ---- */
static std::vector<std::vector<fiber>> parked; /* per slot */
static char where_buf[300];

void coop_begin(size_t nblocks)
{
    size_t n = (size_t)blockDim.x * blockDim.y * blockDim.z;
    ensure_stacks(n * nblocks);
    parked.assign(nblocks, std::vector<fiber>());
}

int coop_run(size_t slot, int first, int reversed)
{
    size_t n = (size_t)blockDim.x * blockDim.y * blockDim.z;
    if (first) {
        block_init(slot);
        eyes_block_begin(n);
        async_block_begin(n); /* cp.async state is not kept per block across a grid.sync */
    } else {
        fibers.swap(parked[slot]);
    }
    int r = block_loop(reversed);
    fibers.swap(parked[slot]);
    return r;
}

void coop_release(void)
{
    for (std::vector<fiber> &b : parked)
        for (fiber &f : b)
            if (f.state == T_GRID) f.state = T_READY;
}

void coop_end(void) { parked.clear(); }

const char *coop_where(size_t slot)
{
    const std::vector<fiber> &b = parked[slot];
    if (b.empty()) return "not started";
    if (b[0].state == T_DONE) return "exited";
    snprintf(where_buf, sizeof where_buf, "waiting at grid.sync %s:%d", b[0].file, b[0].line);
    return where_buf;
}

void grid_sync(const char *file, int line)
{
    fiber &f = fibers[cur];
    f.state = T_GRID, f.file = file, f.line = line;
    to_scheduler(0);
}

void set_launch(const launch_cfg &cfg, void (*body)(void *), void *ctx, int pass)
{
    L.cfg = &cfg, L.pass = pass;
    body_fn = body, body_ctx = ctx, failed = 0;
    eyes_pass(cfg, pass);
}

void block_fail(cudaError_t e, const char *fmt, ...)
{
    char buf[1800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fail(e, "kernel %s (launched at %s:%d), block (%u,%u,%u), %s pass: %s", L.cfg->name, L.cfg->file, L.cfg->line,
         blockIdx.x, blockIdx.y, blockIdx.z, L.pass ? "second (reversed threads, shuffled blocks)" : "first", buf);
    failed = 1;
}

} /* namespace emu */
