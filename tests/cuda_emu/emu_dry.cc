/* emu_dry.cc - TEST-ONLY: the dry run (EMU_DRY=1) and the per-kernel launch limits.
 *
 * A dry run executes a lesson's host code at sizes no test can afford (the forum's, the CLI's largest) without
 * doing the work, so that every limit that only bites at those sizes is checked:
 *   - device memory is address space only: cudaMalloc reserves it (mmap MAP_NORESERVE, a guard page after the
 *     end), untouched pages read as zeros and cost nothing, and only what a kernel writes is committed;
 *     cudaMemcpy/cudaMemset check their ranges and move no bytes; cuBLAS checks every argument and operand extent
 *     and computes nothing (cublas_shim.cc);
 *   - every launch configuration is checked as always (emu_launch.cc), then only its boundary blocks run: the
 *     first and the last along each grid dimension, where the indices are largest, once. An `int` offset that
 *     wraps there is reported by UBSan (SANITIZE=1 builds the .cu files with -fsanitize=undefined), an address
 *     outside every allocation lands on a guard page or in unmapped memory and is reported here (SIGSEGV) or by
 *     ASan;
 *   - a loop whose range is data-sized (the emulation build adds the skip: emu_loops.cc, cuda_runtime.h's
 *     dry_skip), in a kernel or in host code that launches per step, runs its first iteration and its last two: a 10^9-iteration loop costs three, and
 *     the indices at its end, where they are largest, are still executed;
 *   - the session fills no input, computes no reference and poisons nothing (session.c asks emu_dry()).
 * Results are meaningless (every buffer reads as zeros); the run checks limits, not numbers. EMU_DRY=2 checks
 * the configurations and the cuBLAS arguments and runs no block at all (what dry_run.sh bisects with).
 *
 * Launch limits: dynamic shared memory above 48 KiB needs cudaFuncSetAttribute(kernel,
 * cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) first, as on the GPU; the opt-ins are recorded here per
 * kernel. */
#include "emu_dry.h"
#include "emu_internal.h"

#include <map>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

namespace emu {

static int dry_mode = -1;

int dry(void)
{
    if (dry_mode < 0) dry_mode = getenv("EMU_DRY") ? atoi(getenv("EMU_DRY")) : 0;
    return dry_mode;
}

/* Guard regions of 16 GiB either side: an int offset that wraps lands up to 2^31 elements of 8 bytes away from
 * where it should, which is inside a guard, never in a neighbouring allocation. Reserved, never committed. */
static const size_t PAGE = 4096, GUARD = (size_t)16 << 30;

/* The allocation ends where the guard page starts (rounded up to cudaMalloc's 256 bytes): an index past the end
 * faults instead of reading a neighbour's bytes. */
void *dry_reserve(size_t bytes)
{
    size_t body = ((bytes ? bytes : 1) + PAGE - 1) & ~(PAGE - 1);
    if (body < bytes || body > SIZE_MAX - 2 * GUARD) return NULL;
    char *m = (char *)mmap(NULL, body + 2 * GUARD, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return NULL;
    if (mprotect(m + GUARD, body, PROT_READ | PROT_WRITE) != 0) {
        munmap(m, body + 2 * GUARD);
        return NULL;
    }
    return m + GUARD + body - ((bytes + 255) & ~(size_t)255);
}

void dry_release(void *p, size_t bytes)
{
    size_t body = ((bytes ? bytes : 1) + PAGE - 1) & ~(PAGE - 1);
    char *end = (char *)p + ((bytes + 255) & ~(size_t)255);
    munmap(end - body - GUARD, body + 2 * GUARD);
}

/* First and last index along each grid dimension, every combination, each block once, in linear order. */
std::vector<size_t> dry_blocks(const dim3 &g)
{
    std::vector<size_t> out;
    unsigned xs[2] = {0, g.x - 1}, ys[2] = {0, g.y - 1}, zs[2] = {0, g.z - 1};
    for (unsigned z : zs)
        for (unsigned y : ys)
            for (unsigned x : xs) {
                size_t b = x + (size_t)g.x * (y + (size_t)g.y * z);
                if (out.empty() || b > out.back()) out.push_back(b);
            }
    return out;
}

/* --- the launch a fault belongs to ------------------------------------------------------------------------ */

static const launch_cfg *running;
static sigjmp_buf *back;     /* where a fault in a kernel returns to (dry_launch in emu_launch.cc) */
static char fault_msg[512];

/* A fault in a kernel ends its launch with a recorded error (the abandoned block's fibers are reset by the
 * next block; what run_grid had allocated leaks); any other fault ends the process. */
__attribute__((unused)) static void on_fault(int sig, siginfo_t *si, void *) /* unused under ASan */
{
    if (running && back) {
        snprintf(fault_msg, sizeof fault_msg, "kernel %s (launched at %s:%d): dry run: block %u,%u,%u thread %u,%u,%u "
                 "touched %p, outside every device allocation (an index past the end, or one that wrapped)",
                 running->name, running->file, running->line, blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x,
                 threadIdx.y, threadIdx.z, si->si_addr);
        siglongjmp(*back, 1);
    }
    char msg[160];
    int n = snprintf(msg, sizeof msg, "cuda-emu: dry run: host code touched %p (signal %d)\n", si->si_addr, sig);
    if (n > 0) (void)!write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
    _exit(1);
}

const char *dry_fault_message(void) { return fault_msg; }

void dry_running(const launch_cfg *cfg, sigjmp_buf *jb)
{
#if !defined(__SANITIZE_ADDRESS__) /* ASan reports a fault itself, with the source line */
    static int installed;
    if (!installed++) {
        static char alt[1 << 16]; /* a fiber's stack may be what overflowed */
        stack_t ss = {};
        ss.ss_sp = alt, ss.ss_size = sizeof alt;
        sigaltstack(&ss, NULL);
        struct sigaction sa = {};
        sa.sa_sigaction = on_fault;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigaction(SIGSEGV, &sa, NULL);
        sigaction(SIGBUS, &sa, NULL);
    }
#endif
    running = cfg, back = jb;
}

/* --- cudaFuncSetAttribute(MaxDynamicSharedMemorySize), per kernel ----------------------------------------- */

static std::map<const void *, int> dyn_smem_optin;

size_t optin_dyn_smem(void)
{
    const char *e = getenv("EMU_SMEM_OPTIN");
    if (e && *e) return (size_t)strtoull(e, NULL, 10);
    const device_profile *g = selected_profile();
    return g ? g->smem_optin : SM90_OPTIN_DYN_SMEM;
}

size_t dry_total_mem(void)
{
    const device_profile *g = selected_profile();
    return g ? g->mem_bytes : DRY_TOTAL_MEM;
}

size_t max_dynamic_smem(const void *kernel)
{
    auto it = dyn_smem_optin.find(kernel);
    return it == dyn_smem_optin.end() ? DEFAULT_DYN_SMEM : (size_t)it->second;
}

} /* namespace emu */

extern "C" int emu_dry(void) { return emu::dry(); }
extern "C" void emu_set_dry(int mode) { emu::dry_mode = mode; }

cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value)
{
    if (!func) return emu::fail(cudaErrorInvalidDeviceFunction, "cudaFuncSetAttribute: NULL kernel");
    if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) {
        if (value < 0 || (size_t)value > emu::optin_dyn_smem())
            return emu::fail(cudaErrorInvalidValue, "cudaFuncSetAttribute(MaxDynamicSharedMemorySize, %d): above "
                             "the %zu bytes a block may opt in to on this device (sm_90: 232448, sm_80: 166912, sm_86/89/120: 101376)",
                             value, emu::optin_dyn_smem());
        emu::dyn_smem_optin[func] = value;
        return cudaSuccess;
    }
    if (attr == cudaFuncAttributePreferredSharedMemoryCarveout) return cudaSuccess; /* a hint */
    return emu::fail(cudaErrorInvalidValue, "cudaFuncSetAttribute: attribute %d is not emulated", (int)attr);
}
