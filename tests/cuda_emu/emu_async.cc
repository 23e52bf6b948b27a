/* emu_async.cc - TEST-ONLY: cp.async -- asynchronous copies from global to shared memory -- and cuda::barrier
 * (include/emu_async.h; the shims include/cuda_pipeline.h, include/cuda/barrier, include/cuda/pipeline).
 *
 * What NVIDIA documents (Programming Guide, "Asynchronous Data Copies" and the pipeline primitives interface;
 * libcu++'s cuda::memcpy_async, cuda::barrier, cuda::pipeline), and what is done here:
 *   - __pipeline_memcpy_async(dst, src, size, zfill): dst in shared memory, src in global memory, size 4, 8 or
 *     16 and both pointers aligned to it, zfill <= size: size - zfill bytes are copied, the rest zeroed. A copy
 *     with other arguments fails the launch (cudaErrorMisalignedAddress, cudaErrorInvalidValue).
 *   - The copies of a thread join its current batch; __pipeline_commit closes the batch; __pipeline_wait_prior(N)
 *     returns once every batch but the newest N is complete. Until then the destination's content is undefined:
 *     here it holds poison from the issue on and the data arrives at the wait. The wait is per thread: other
 *     threads see the data only after a __syncthreads (racecheck otherwise). __syncthreads itself waits for no copy.
 *   - cuda::memcpy_async(dst, src, size, barrier): the copy is bound to the barrier's current phase, which does
 *     not complete before the copy; here it lands when the phase completes (the last expected arrival).
 *   - The source is read when the copy is issued (the hardware may read it any time before completion).
 * The eyes see the source read and the destination write at the issue (the profile and the time model count
 * them there: asynchronous traffic), the destination as unwritten until the landing (initcheck names the copy),
 * and the landing as a write by the issuing thread. */
#include "emu_eyes.h"
#include "emu_sched.h"
#include "include/emu_async.h"

#include <deque>
#include <stdarg.h>
#include <stdio.h>
#include <map>
#include <string.h>
#include <string>
#include <vector>

namespace emu {

struct pending_copy {
    char *dst;
    std::string data; /* what lands: the source bytes read at the issue, then the zero fill */
    void *pc;
    unsigned tid;
};
typedef std::vector<pending_copy> group;
struct thread_copies {
    group open;                 /* the current batch, not committed yet */
    std::deque<group> committed; /* oldest first */
};

static std::vector<thread_copies> &threads = *new std::vector<thread_copies>;
static std::map<const barrier_state *, group> &bound = *new std::map<const barrier_state *, group>;
static size_t block_threads;
static const uint64_t BARRIER_MAGIC = 0x6261727269657221ull;

static int used; /* the running block made an asynchronous copy: its state is cleared at the next block */

void async_block_begin(size_t nthreads)
{
    if (used) threads.clear(), bound.clear(), used = 0; /* blocks without cp.async cost nothing here */
    block_threads = nthreads;
    hopper_block_begin(nthreads);
}

static thread_copies &mine(unsigned tid)
{
    if (threads.size() != block_threads) threads.resize(block_threads);
    used = 1;
    return threads[tid];
}

/* A broken precondition fails the launch and ends the calling thread there (its next copy would fail again). */
static void __attribute__((noreturn, format(printf, 2, 3))) fail_here(cudaError_t e, const char *fmt, ...)
{
    char buf[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    block_fail(e, "%s", buf);
    abandon_thread();
}

static unsigned my_tid(void) { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }

static void land(const pending_copy &c)
{
    memcpy(c.dst, c.data.data(), c.data.size());
    eyes_async_land((uintptr_t)c.dst, (unsigned)c.data.size(), c.pc, c.tid);
}

/* the pending copy covering byte p, for initcheck's message (NULL if none) */
void *async_pending_site(uintptr_t p)
{
    auto covers = [p](const group &g) -> void * {
        for (const pending_copy &c : g)
            if (p >= (uintptr_t)c.dst && p < (uintptr_t)c.dst + c.data.size()) return c.pc;
        return NULL;
    };
    void *pc;
    for (const thread_copies &t : threads) {
        if ((pc = covers(t.open))) return pc;
        for (const group &g : t.committed)
            if ((pc = covers(g))) return pc;
    }
    for (auto &kv : bound)
        if ((pc = covers(kv.second))) return pc;
    return NULL;
}

void async_copy(void *dst, const void *src, size_t bytes, size_t src_bytes, size_t align, int any_size, void *bar,
                void *pc)
{
    uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;
    unsigned tid = my_tid();
    if (!any_size && bytes != 4 && bytes != 8 && bytes != 16)
        return fail_here(cudaErrorInvalidValue, "cp.async at %s: thread %u copies %zu bytes (4, 8 or 16 only)",
                          source_line(pc), tid, bytes);
    if (src_bytes > bytes)
        return fail_here(cudaErrorInvalidValue, "cp.async at %s: thread %u zero-fills more than the %zu bytes "
                          "it copies", source_line(pc), tid, bytes);
    if (align == 0 || (align & (align - 1)) || d % align || s % align)
        return fail_here(cudaErrorMisalignedAddress, "cp.async at %s: thread %u copies %zu bytes from %p to %p: "
                          "both must be aligned to %zu bytes", source_line(pc), tid, bytes, src, dst, align);
    if (!eyes_shared_span(d, bytes))
        return fail_here(cudaErrorIllegalAddress, "cp.async at %s: thread %u: destination %p (%zu bytes) is not "
                          "the block's shared memory", source_line(pc), tid, dst, bytes);
    if (src_bytes && !find_alloc(src, src_bytes))
        return fail_here(cudaErrorIllegalAddress, "cp.async at %s: thread %u: source %p (%zu bytes) is not "
                          "inside one device allocation", source_line(pc), tid, src, src_bytes);
    barrier_state *b = (barrier_state *)bar;
    if (b && b->magic != BARRIER_MAGIC)
        return fail_here(cudaErrorIllegalInstruction, "cuda::memcpy_async at %s: thread %u: the barrier was not "
                          "initialised (init)", source_line(pc), tid);
    eyes_async_issue(d, s, (unsigned)bytes, (unsigned)src_bytes, pc);
    pending_copy c{(char *)dst, std::string(bytes, '\0'), pc, tid};
    memcpy(&c.data[0], src, src_bytes);
    memset(dst, 0xFF, bytes); /* poison until it lands */
    if (b) bound[b].push_back(c), used = 1;
    else mine(tid).open.push_back(c);
}

void async_commit(void)
{
    thread_copies &t = mine(my_tid());
    t.committed.push_back(group());
    t.committed.back().swap(t.open);
}

void async_wait_prior(size_t n)
{
    thread_copies &t = mine(my_tid());
    while (t.committed.size() > n) {
        for (const pending_copy &c : t.committed.front()) land(c);
        t.committed.pop_front();
    }
}

void async_wait_head(void)
{
    thread_copies &t = mine(my_tid());
    if (t.committed.empty()) return;
    for (const pending_copy &c : t.committed.front()) land(c);
    t.committed.front().clear(); /* landed: the stage stays the head until released */
}

void async_release_head(void)
{
    thread_copies &t = mine(my_tid());
    if (!t.committed.empty()) t.committed.pop_front();
}

void barrier_init(barrier_state *b, int64_t expected, void *pc)
{
    if (expected < 0 || expected > (int64_t)1 << 20)
        return fail_here(cudaErrorInvalidValue, "cuda::barrier init at %s: expected count %lld", source_line(pc),
                          (long long)expected);
    b->expected = b->pending = expected, b->phase = 0, b->magic = BARRIER_MAGIC;
    if (used) bound.erase(b);
}

uint64_t barrier_arrive(barrier_state *b, int64_t n, int drop, void *pc)
{
    if (b->magic != BARRIER_MAGIC) {
        fail_here(cudaErrorIllegalInstruction, "cuda::barrier at %s: thread %u arrives at a barrier that was not "
                   "initialised (init)", source_line(pc), my_tid());
    }
    if (n < 1 || n > b->pending) {
        fail_here(cudaErrorIllegalInstruction, "cuda::barrier at %s: thread %u arrives %lld times with %lld "
                   "arrivals left in the phase", source_line(pc), my_tid(), (long long)n, (long long)b->pending);
    }
    uint64_t token = b->phase;
    int64_t expected = b->expected;
    b->pending -= n;
    if (drop) b->expected -= n;
    if (b->pending == 0) {
        auto it = bound.find(b);
        if (it != bound.end()) {
            for (const pending_copy &c : it->second) land(c);
            bound.erase(it);
        }
        if ((size_t)expected == block_threads) eyes_barrier(); /* every thread arrived: the block is ordered */
        b->phase++, b->pending = b->expected;
    }
    return token;
}

int barrier_passed(const void *b, uint64_t token)
{
    if (hopper_token(token)) return hopper_passed(b, token); /* an mbarrier or a wgmma.wait_group */
    return ((const barrier_state *)b)->phase != token;
}

void barrier_wait(barrier_state *b, uint64_t token, void *pc)
{
    if (b->phase != token) return;
    park_on_barrier(b, token, pc);
}

} /* namespace emu */
