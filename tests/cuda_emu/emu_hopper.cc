/* emu_hopper.cc - TEST-ONLY: sm_90a's asynchronous layer (include/hopper_ptx.h, the shim of the product's
 * kernels/runtime/ptx/hopper_ptx.h) executed by the PTX ISA's semantics, and the tensor map's host side
 * (cuTensorMapEncodeTiled, reached through cudaGetDriverEntryPoint[ByVersion]). The product header's top
 * comment states the semantics; what is done here, and checked:
 *   - mbarrier: a table per block (address -> expected and pending arrivals, tx-count, completed phases).
 *     init needs an 8-byte-aligned shared address and a count in [1, 2^20 - 1]; an arrive on a barrier never
 *     initialised, or past its count, fails. A TMA completing on a barrier whose init was not followed by a
 *     fence.proxy.async of the initialising thread fails (the async proxy may not see the init).
 *   - try_wait.parity: true at once if the phase of that parity has completed, else the thread parks until it
 *     does (a GPU's try_wait returns false after a while and the caller loops: the same). A wait that resolves
 *     to a phase the same thread has already observed fails: a stale parity (the ring's use count off by one)
 *     passes on a GPU at once and reads a stage whose new data has not landed.
 *   - cp.async.bulk.tensor (2-D tile): the map made here, the box read from global memory at the issue with
 *     the map's strides (elements outside the tensor are zeros), laid out in shared memory with the map's
 *     swizzle, destination poisoned (0xFF) until the copy lands. It lands when a thread waits on its barrier's
 *     current phase: every copy then in flight on that barrier lands and subtracts its bytes from the tx-count.
 *     A phase whose arrivals are done and whose tx-count goes below zero fails (expect_tx smaller than what
 *     landed); one that can never complete (expect_tx larger) deadlocks, and the deadlock message says so.
 *     The destination is 128-byte aligned, 1024-byte aligned with the 128-byte swizzle (512 with 64, 256 with
 *     32), in the block's shared memory; every row read lies inside one device allocation.
 *   - wgmma: a warpgroup is the 128 threads of 4 consecutive warps (tid / 128); each thread's mma_async joins
 *     its own open group; the n-th mma_async of every thread of a warpgroup is one operation, whose shape,
 *     type and descriptors must agree. Each thread's accumulators are read at its issue and poisoned (a read
 *     before the wait sees NaN); an mma_async on the accumulators of one still in flight chains on it, as the
 *     hardware does. The operation is computed once every thread has issued it and one waits for it: the
 *     descriptors decoded (start, LBO, SBO, swizzle; base offset 0), the operands read from shared memory.
 *     Checked: wgmma.fence before a thread's first mma_async after a wait; the descriptor's reserved bits zero,
 *     the 32 bytes of K inside one swizzle row, a swizzled tile at the start of its atom (1024 bytes for 128B)
 *     and SBO a multiple of the atom; bytes read that a TMA wrote with another swizzle, or that a TMA in flight
 *     has not landed; bytes written through the generic proxy (st.shared, seen by the eyes) with no
 *     fence.proxy.async since; at each thread's wait, its accumulators still poisoned (not written in flight).
 *     An operand tile rewritten while the operation may still read it fails: a TMA into it before any thread
 *     waited, or by a thread that learned the stage was free from an mbarrier phase that a thread of the
 *     warpgroup completed before its own wait_group (the stage released while in flight).
 * Numerics as mma.sync's (include/mma_ptx.h): exact products, fp32 sums in k order, tf32 truncated to 19 bits.
 * MN-major operands (imm-trans-a/b, bf16 and f16): the descriptor's fields read by CUTLASS's canonical MN-major
 * layouts (SBO between groups of 8 k rows, LBO between atoms along M or N when swizzled); checked: the tile at
 * the start of its atom, SBO (and LBO where the operand is wider than one row of the swizzle) a multiple of the
 * atom, and no two elements of the operand at one address.
 * Blind spots: the generic-write checks need the eyes (not under ASan); base offsets, multicast, clusters and
 * TMA stores are not emulated. The time model is handed each warpgroup's wgmma (its FLOP, its operands'
 * shared-memory bytes) and each TMA box (its global rows, its bytes) exactly, as emu_model.cc's model_wgmma and
 * model_tma say. */
#include "emu_eyes.h"
#include "emu_model.h"
#include "emu_sched.h"
#include "include/emu_hopper.h"

#include <algorithm>
#include <cuda.h>
#include <cudaTypedefs.h>
#include <deque>
#include <map>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <string>
#include <unordered_map>
#include <vector>

namespace emu {

int hopper_linked; /* a .cu of the program includes <hopper_ptx.h>: the eyes report shared-memory writes here */
static int hopper_watch; /* the running block used this layer: its state is cleared at the next block */

namespace hopper {

static const uint64_t MAP_MAGIC = 0x544d412d6d617021ull;
static const uint32_t POISON = 0x7fbadbadu; /* a NaN: accumulators in flight */
static const uint64_t TOKEN_MBAR = 1ull << 62, TOKEN_WGMMA = 2ull << 62;

/* ---- the tensor map, as cuTensorMapEncodeTiled left it in the opaque 128 bytes ---- */
struct tmap {
    uint64_t magic;
    char *base;
    uint64_t dim[2], stride; /* elements; row stride in bytes */
    uint32_t box[2], elem;
    int swizzle, oob_nan;
};
static_assert(sizeof(tmap) <= sizeof(CUtensorMap), "the map fits CUtensorMap");

struct mbar {
    uint32_t expected, pending;
    int64_t tx, tx_added, tx_landed; /* the current phase's */
    int64_t phase;                   /* phases completed */
    const char *file;
    int line;
    unsigned init_tid;
    int fenced;                   /* the initialising thread ran fence.proxy.async after the init */
    std::vector<int> inflight;    /* wgmma operations unretired by a thread that arrived in this phase */
    std::vector<int> released;    /* the same, of the last completed phase */
    std::map<int, int> retired_below, released_below; /* per warpgroup: the arrivers had retired its ops under */
};

struct tma_copy {
    uint64_t *bar;
    char *dst;
    std::string data;
    int swizzle;
    const char *file;
    int line;
};
struct box {
    uintptr_t lo, hi;
    int swizzle;
    const char *file;
    int line;
};

struct op {
    int wg, type, n, trans, computed, retired; /* trans: bit 0 A M-major, bit 1 B N-major */
    uint64_t a, b;
    uintptr_t a0, b0; /* decoded start addresses */
    const char *name, *file;
    int line, issued;
    std::vector<uintptr_t> chunks; /* the 16-byte chunks of shared memory it reads */
    float *d[128];
    int chain[128], scale[128];
    std::vector<float> c, result; /* c: each thread's accumulators at its issue, 64 x n */
};

struct hthread {
    int fenced; /* wgmma.fence since the last wait_group */
    uint64_t issued;
    int last_op = -1; /* the last wgmma operation it issued */
    std::vector<int> open;
    std::deque<std::vector<int>> committed;
    std::map<const uint64_t *, int64_t> seen;                 /* the last phase it observed per barrier */
    std::map<const uint64_t *, std::vector<int>> inherited;   /* ops in flight when that phase completed */
};

struct unfenced {
    unsigned tid;
    void *pc;
    uint64_t epoch;
};

static std::unordered_map<const uint64_t *, mbar> &bars = *new std::unordered_map<const uint64_t *, mbar>;
static std::vector<tma_copy> &copies = *new std::vector<tma_copy>;
static std::vector<box> &boxes = *new std::vector<box>;
static std::vector<op> &ops = *new std::vector<op>;
static std::map<std::pair<int, uint64_t>, int> &op_of = *new std::map<std::pair<int, uint64_t>, int>;
static std::vector<hthread> &threads = *new std::vector<hthread>;
static std::unordered_map<uintptr_t, unfenced> &generic = *new std::unordered_map<uintptr_t, unfenced>;
static std::vector<uintptr_t> &encoded = *new std::vector<uintptr_t>; /* tiles wgmma_desc was given */
static uint64_t epoch; /* __syncthreads released in this block */
static size_t uncomputed; /* operations issued and not computed yet */
static size_t block_threads;
static int wgmma_sentinel;

static unsigned my_tid(void) { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }

static hthread &me(void)
{
    hopper_watch = 1;
    if (threads.size() != block_threads) threads.resize(block_threads);
    return threads[my_tid()];
}

static void __attribute__((noreturn, format(printf, 2, 3))) fail_here(cudaError_t e, const char *fmt, ...)
{
    char buf[1400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    block_fail(e, "%s", buf);
    abandon_thread();
}

static const char *swizzle_name(int s)
{
    static const char *names[] = {"no swizzle", "the 128-byte swizzle", "the 64-byte swizzle", "the 32-byte swizzle"};
    return s >= 0 && s < 4 ? names[s] : "?";
}
static unsigned span_of(int s) { return s == 1 ? 128 : s == 2 ? 64 : s == 3 ? 32 : 0; }
/* the byte address a swizzled layout stores logical address a at: 16-byte chunk bits 4.. XOR address bits 7.. */
static uintptr_t swizzled(uintptr_t a, int s)
{
    unsigned w = span_of(s);
    return w ? a ^ ((a >> 7 & (w / 16 - 1)) << 4) : a;
}

/* a smem variable's name and offset, or the address */
static const char *where(uintptr_t p)
{
    static char buf[2][120];
    static int k;
    char sym[100];
    k ^= 1;
    static_symbol(p, sym, sizeof sym);
    if (sym[0]) snprintf(buf[k], sizeof buf[k], "%s (%p)", sym, (void *)p);
    else snprintf(buf[k], sizeof buf[k], "%p", (void *)p);
    return buf[k];
}

} /* namespace hopper */

/* ---- block lifetime and the eyes' events (emu_async.cc, emu_sched.cc, emu_access.cc) ---- */
void hopper_block_begin(size_t nthreads)
{
    using namespace hopper;
    if (hopper_watch) {
        bars.clear(), copies.clear(), boxes.clear(), ops.clear(), op_of.clear(), threads.clear(), encoded.clear();
        hopper_watch = 0;
    }
    if (!generic.empty()) generic.clear();
    block_threads = nthreads, epoch = 0, uncomputed = 0;
}

void hopper_barrier(void) { hopper::epoch++; }

static int overlaps_inflight(uintptr_t lo, uintptr_t hi, const std::vector<int> &list, int only_uncomputed,
                             int *which)
{
    using namespace hopper;
    for (int id : list) {
        const op &o = ops[id];
        if (only_uncomputed && o.computed) continue;
        for (uintptr_t c : o.chunks)
            if (c + 16 > lo && c < hi) return *which = id, 1;
    }
    return 0;
}

static std::vector<int> all_uncomputed(void)
{
    std::vector<int> v;
    for (size_t i = 0; i < hopper::ops.size(); i++)
        if (!hopper::ops[i].computed) v.push_back((int)i);
    return v;
}

/* the checks of a write into [lo, hi) of shared memory by the calling thread while wgmma may read it */
static void check_not_in_flight(uintptr_t lo, uintptr_t hi, const char *what, const char *site)
{
    using namespace hopper;
    int id;
    if (uncomputed && overlaps_inflight(lo, hi, all_uncomputed(), 1, &id))
        fail_here(cudaErrorIllegalInstruction, "%s at %s: thread %u writes shared memory %s that %s issued at "
                  "%s:%d still reads (no thread of its warpgroup has passed the wgmma.wait_group that covers it)",
                  what, site, my_tid(), where(lo), ops[id].name, ops[id].file, ops[id].line);
    hthread &t = me();
    for (auto &kv : t.inherited)
        if (overlaps_inflight(lo, hi, kv.second, 0, &id))
            fail_here(cudaErrorIllegalInstruction, "%s at %s: thread %u writes shared memory %s that %s "
                      "issued at %s:%d may still read: the mbarrier at %s that told this thread the stage was "
                      "free completed its phase with an arrival by a thread that had not yet waited for that "
                      "wgmma (arrive after wgmma.wait_group, not before)", what, site, my_tid(), where(lo),
                      ops[id].name, ops[id].file, ops[id].line, where((uintptr_t)kv.first));
}

void hopper_shared_write(uintptr_t p, unsigned n, unsigned tid, void *pc)
{
    using namespace hopper;
    for (uintptr_t c = p & ~(uintptr_t)15; c < p + n; c += 16) generic[c] = unfenced{tid, pc, epoch};
    if (!ops.empty() && (uncomputed || (tid < threads.size() && !threads[tid].inherited.empty())))
        check_not_in_flight(p, p + n, "a store", source_line(pc));
}

namespace hopper {

/* ---- mbarrier ---- */
void mbar_init(uint64_t *bar, uint32_t count, const char *file, int line)
{
    unsigned tid = my_tid();
    (void)me();
    if (!eyes_shared_span((uintptr_t)bar, 8) || (uintptr_t)bar % 8)
        fail_here(cudaErrorMisalignedAddress, "mbarrier.init at %s:%d: thread %u: %p is not an 8-byte-aligned "
                  "address in the block's shared memory", file, line, tid, (void *)bar);
    if (count < 1 || count >= 1u << 20)
        fail_here(cudaErrorInvalidValue, "mbarrier.init at %s:%d: thread %u: count %u (1 to 2^20 - 1)", file, line,
                  tid, count);
    mbar &b = bars[bar];
    b = mbar();
    b.expected = b.pending = count, b.file = file, b.line = line, b.init_tid = tid;
}

static mbar &known(uint64_t *bar, const char *what, const char *file, int line)
{
    auto it = bars.find(bar);
    if (it == bars.end())
        fail_here(cudaErrorIllegalInstruction, "%s at %s:%d: thread %u uses %s, which no mbarrier.init of this "
                  "block initialised", what, file, line, my_tid(), where((uintptr_t)bar));
    return it->second;
}

static void complete_phase(mbar &b)
{
    b.phase++, b.pending = b.expected, b.tx = b.tx_added = b.tx_landed = 0;
    b.released.swap(b.inflight);
    b.inflight.clear();
    b.released_below.swap(b.retired_below);
    b.retired_below.clear();
}

/* lands every copy in flight on bar, then completes the phase if it can; 0 if that broke a precondition (from
 * the scheduler, which is no thread: the launch is failed there, no thread ended) */
static int progress(uint64_t *bar, mbar &b, int in_thread = 1)
{
    const char *last_file = "?";
    int last_line = 0;
    for (size_t i = 0; i < copies.size();) {
        if (copies[i].bar != bar) {
            i++;
            continue;
        }
        tma_copy &c = copies[i];
        memcpy(c.dst, c.data.data(), c.data.size());
        boxes.push_back(box{(uintptr_t)c.dst, (uintptr_t)c.dst + c.data.size(), c.swizzle, c.file, c.line});
        b.tx -= (int64_t)c.data.size(), b.tx_landed += (int64_t)c.data.size();
        for (uintptr_t k = (uintptr_t)c.dst; k < (uintptr_t)c.dst + c.data.size(); k += 16) generic.erase(k);
        last_file = c.file, last_line = c.line;
        copies.erase(copies.begin() + (long)i);
    }
    if (b.pending == 0 && b.tx < 0) {
        block_fail(cudaErrorIllegalInstruction, "cp.async.bulk.tensor at %s:%d: %lld bytes landed on the mbarrier "
                   "at %s in phase %lld, whose expect_tx announced %lld: the expect_tx byte count must equal the "
                   "bytes of the boxes that complete on it", last_file, last_line, (long long)b.tx_landed,
                   where((uintptr_t)bar), (long long)b.phase, (long long)b.tx_added);
        if (in_thread) abandon_thread();
        return 0;
    }
    if (b.pending == 0 && b.tx == 0) complete_phase(b);
    return 1;
}

/* the thread's operations not yet retired, in issue order: the committed groups, oldest first, then the open one */
static void unretired(const hthread &t, std::vector<int> &out)
{
    for (const std::vector<int> &g : t.committed)
        for (int id : g) out.push_back(id);
    for (int id : t.open) out.push_back(id);
}

/* wait_group retires a thread's operations in issue order, so those it has retired are every operation of its
 * warpgroup below its oldest unretired one (or, with none, up to the last it issued) */
static int retired_below(const hthread &t)
{
    if (!t.committed.empty() && !t.committed.front().empty()) return t.committed.front().front();
    if (!t.open.empty()) return t.open.front();
    return t.last_op + 1;
}

void mbar_arrive(uint64_t *bar, uint32_t tx_bytes, int expect_tx, const char *file, int line)
{
    hthread &t = me();
    mbar &b = known(bar, expect_tx ? "mbarrier.arrive.expect_tx" : "mbarrier.arrive", file, line);
    if (b.pending == 0)
        fail_here(cudaErrorIllegalInstruction, "mbarrier.arrive at %s:%d: thread %u arrives at %s in phase %lld, "
                  "whose %u arrivals have all been made (its tx-count %lld bytes is still outstanding)", file, line,
                  my_tid(), where((uintptr_t)bar), (long long)b.phase, b.expected, (long long)b.tx);
    if (expect_tx) {
        if (tx_bytes >= 1u << 20)
            fail_here(cudaErrorInvalidValue, "mbarrier.arrive.expect_tx at %s:%d: %u bytes (under 2^20)", file,
                      line, tx_bytes);
        b.tx += tx_bytes, b.tx_added += tx_bytes;
    }
    unretired(t, b.inflight);
    int wg = (int)(my_tid() / 128), below = retired_below(t);
    auto seen_wg = b.retired_below.find(wg);
    if (seen_wg == b.retired_below.end() || below < seen_wg->second) b.retired_below[wg] = below;
    b.pending--;
    if (b.pending == 0 && b.tx < 0)
        fail_here(cudaErrorIllegalInstruction, "mbarrier.arrive at %s:%d: the last arrival of phase %lld of %s finds "
                  "%lld bytes landed and %lld announced by expect_tx: the expect_tx byte count must equal the bytes "
                  "of the boxes that complete on it", file, line, (long long)b.phase, where((uintptr_t)bar),
                  (long long)b.tx_landed, (long long)b.tx_added);
    if (b.pending == 0 && b.tx == 0) complete_phase(b);
}

int mbar_try_wait(uint64_t *bar, uint32_t parity, const char *file, int line)
{
    hthread &t = me();
    if (parity > 1)
        fail_here(cudaErrorInvalidValue, "mbarrier.try_wait.parity at %s:%d: parity %u (0 or 1)", file, line, parity);
    for (;;) {
        mbar &b = known(bar, "mbarrier.try_wait.parity", file, line);
        if ((uint32_t)(b.phase & 1) != parity) {
            int64_t resolved = b.phase - 1;
            auto seen = t.seen.find(bar);
            if (seen != t.seen.end() && seen->second >= resolved)
                fail_here(cudaErrorIllegalInstruction, "mbarrier.try_wait.parity at %s:%d: thread %u waits with "
                          "parity %u on %s, which passes at once for phase %lld, a phase this thread has already "
                          "observed: a stale phase parity (the phase it means has not completed; flip the parity "
                          "each time the ring wraps)", file, line, my_tid(), parity, where((uintptr_t)bar),
                          (long long)resolved);
            t.seen[bar] = resolved;
            if (resolved == b.phase - 1 && resolved >= 0) {
                t.inherited[bar] = b.released;
                /* an operation another barrier's arrival left in flight is done for this thread once it observes
                 * a phase whose arrivers (of that operation's warpgroup) had all retired it before arriving */
                for (auto &kv : t.inherited) {
                    if (kv.first == bar) continue;
                    std::vector<int> &list = kv.second;
                    for (size_t i = list.size(); i-- > 0;) {
                        auto w = b.released_below.find(ops[(size_t)list[i]].wg);
                        if (w != b.released_below.end() && list[i] < w->second) list.erase(list.begin() + (long)i);
                    }
                }
            } else {
                t.inherited.erase(bar);
            }
            return 1;
        }
        progress(bar, b);
        if ((uint32_t)(bars[bar].phase & 1) != parity) continue;
        park_on_barrier(bar, TOKEN_MBAR | parity, site_pc(file, line));
    }
}

void fence_proxy_async(const char *file, int line)
{
    (void)file, (void)line;
    hthread &t = me();
    (void)t;
    unsigned tid = my_tid();
    for (auto it = generic.begin(); it != generic.end();)
        if (it->second.tid == tid || it->second.epoch < epoch) it = generic.erase(it);
        else ++it;
    for (auto &kv : bars)
        if (kv.second.init_tid == tid) kv.second.fenced = 1;
}

/* ---- the time model's counts (emu_model.cc's model_tma, model_wgmma; README "wgmma and TMA") ---- */
/* a box's global rows inside the tensor (what the TMA reads; the zero fill reads nothing), its bytes in
 * shared memory (all of them: complete_tx counts the whole box) */
static void model_box(const tmap &m, int c0, int c1, unsigned tid, size_t bytes)
{
    static std::vector<uintptr_t> &lo = *new std::vector<uintptr_t>, &hi = *new std::vector<uintptr_t>;
    lo.clear(), hi.clear();
    int64_t x0 = c0 < 0 ? 0 : c0, x1 = std::min((int64_t)c0 + m.box[0], (int64_t)m.dim[0]);
    for (uint32_t r = 0; r < m.box[1] && x1 > x0; r++) {
        int64_t y = (int64_t)c1 + r;
        if (y < 0 || (uint64_t)y >= m.dim[1]) continue;
        uintptr_t row = (uintptr_t)m.base + (uintptr_t)y * m.stride;
        lo.push_back(row + (uintptr_t)x0 * m.elem), hi.push_back(row + (uintptr_t)x1 * m.elem);
    }
    model_tma(tid, (double)bytes, lo.data(), hi.data(), lo.size());
}

/* a warpgroup's operation, once (its first thread's issue): 2 x 64 x N x K FLOP; A's 64 rows and B's N rows
 * of 32 bytes of K read from shared memory */
static void model_op(int type, int n)
{
    int k = type == WG_TF32 ? 8 : 16;
    model_wgmma(type == WG_TF32, 2.0 * 64.0 * n * k, (64.0 + n) * 32.0);
}

/* ---- TMA ---- */
void tma_load_2d(void *dst, const void *mapp, int c0, int c1, uint64_t *bar, const char *file, int line)
{
    (void)me();
    unsigned tid = my_tid();
    const tmap &m = *(const tmap *)mapp;
    if (m.magic != MAP_MAGIC)
        fail_here(cudaErrorIllegalInstruction, "cp.async.bulk.tensor at %s:%d: thread %u: the tensor map was not "
                  "made by cuTensorMapEncodeTiled", file, line, tid);
    size_t row = (size_t)m.box[0] * m.elem, bytes = row * m.box[1];
    uintptr_t d = (uintptr_t)dst;
    unsigned w = span_of(m.swizzle), align = w ? 8 * w : 128;
    if (!eyes_shared_span(d, bytes))
        fail_here(cudaErrorIllegalAddress, "cp.async.bulk.tensor at %s:%d: thread %u: destination %p (%zu bytes) "
                  "is not in the block's shared memory", file, line, tid, dst, bytes);
    if (d % align)
        fail_here(cudaErrorMisalignedAddress, "cp.async.bulk.tensor at %s:%d: thread %u: destination %s is not "
                  "%u-byte aligned (%s: the box must start on its swizzle atom)", file, line, tid, where(d), align,
                  w ? "a swizzled box's rows are permuted within 8-row atoms of 8 x the span" : "the TMA's unit");
    if (w && row != w)
        fail_here(cudaErrorNotSupported, "cp.async.bulk.tensor at %s:%d: a %zu-byte box row with %s: "
                  "the emulator lays out rows of exactly the span", file, line, row, swizzle_name(m.swizzle));
    mbar &b = known(bar, "cp.async.bulk.tensor", file, line);
    if (!b.fenced)
        fail_here(cudaErrorIllegalInstruction, "cp.async.bulk.tensor at %s:%d: thread %u completes on the mbarrier at "
                  "%s, initialised at %s:%d by thread %u with no fence.proxy.async after it: the init is a "
                  "generic-proxy write the TMA's complete_tx (async proxy) may not see", file, line, tid,
                  where((uintptr_t)bar), b.file, b.line, b.init_tid);
    char site[300];
    snprintf(site, sizeof site, "%s:%d", file, line);
    check_not_in_flight(d, d + bytes, "cp.async.bulk.tensor", site);
    int64_t lo = c0 < 0 ? 0 : c0, hi = (int64_t)c0 + m.box[0];
    if (hi > (int64_t)m.dim[0]) hi = (int64_t)m.dim[0];
    for (uint32_t r = 0; r < m.box[1]; r++) { /* checked before any string is made: fail_here does not unwind */
        int64_t y = (int64_t)c1 + r;
        const char *src_row = m.base + (uint64_t)y * m.stride;
        if (y >= 0 && (uint64_t)y < m.dim[1] && hi > lo && !find_alloc(src_row + lo * m.elem, (size_t)(hi - lo) * m.elem))
            fail_here(cudaErrorIllegalAddress, "cp.async.bulk.tensor at %s:%d: row %lld, columns %lld-%lld of the "
                      "tensor at %p are not inside one device allocation", file, line, (long long)y, (long long)lo,
                      (long long)hi - 1, (void *)m.base);
    }
    tma_copy c{bar, (char *)dst, std::string(bytes, '\0'), m.swizzle, file, line};
    for (uint32_t r = 0; r < m.box[1]; r++) {
        int64_t y = (int64_t)c1 + r;
        int in_rows = y >= 0 && (uint64_t)y < m.dim[1];
        const char *src_row = m.base + (uint64_t)(in_rows ? y : 0) * m.stride;
        for (uint32_t x0 = 0; x0 < m.box[0]; x0++) {
            int64_t x = (int64_t)c0 + x0;
            char *out = &c.data[swizzled(d + r * row + (size_t)x0 * m.elem, m.swizzle) - d];
            if (!in_rows || x < lo || x >= hi) {
                if (m.oob_nan) memset(out, 0xff, m.elem);
                continue;
            }
            memcpy(out, src_row + x * m.elem, m.elem);
        }
    }
    if (W.model) model_box(m, c0, c1, tid, bytes); /* the time model's count (below) */
    memset(dst, 0xff, bytes); /* poison until it lands */
    for (size_t i = 0; i < boxes.size();)
        if (boxes[i].lo < d + bytes && boxes[i].hi > d) boxes.erase(boxes.begin() + (long)i);
        else i++;
    copies.push_back(c);
}

int linked(void) { return hopper_linked = 1; }

/* ---- wgmma ---- */
void desc_tile(const void *tile)
{
    (void)me();
    uintptr_t p = (uintptr_t)tile;
    for (uintptr_t q : encoded)
        if (q == p) return;
    if (encoded.size() >= 64) encoded.erase(encoded.begin());
    encoded.push_back(p);
}

void wgmma_fence(const char *file, int line)
{
    (void)file, (void)line;
    me().fenced = 1;
}

void wgmma_commit(const char *file, int line)
{
    (void)file, (void)line;
    hthread &t = me();
    t.committed.push_back(std::vector<int>());
    t.committed.back().swap(t.open);
}

struct operand {
    uintptr_t start;
    unsigned lbo, sbo, w;
    int swizzle, mn; /* mn: stored MN-major (k rows of M or N contiguous elements; imm-trans 1) */
};

/* mn: the operand is MN-major, wide bytes along M or N (64 or n elements) */
static operand decode(uint64_t desc, const char *which, const char *name, const char *file, int line, int mn,
                      unsigned wide)
{
    operand o;
    o.mn = mn;
    uint32_t off = (uint32_t)(desc & 0x3fff) << 4;
    o.lbo = (unsigned)(desc >> 16 & 0x3fff) << 4, o.sbo = (unsigned)(desc >> 32 & 0x3fff) << 4;
    o.swizzle = (int)(desc >> 62), o.w = span_of(o.swizzle);
    unsigned tid = my_tid();
    if (desc & 0x3fff0000c000c000ull)
        fail_here(cudaErrorIllegalInstruction, "%s at %s:%d: thread %u: %s's descriptor 0x%016llx sets reserved bits "
                  "(14-15, 30-31, 46-48, 52-61)", name, file, line, tid, which, (unsigned long long)desc);
    if (desc >> 49 & 7)
        fail_here(cudaErrorNotSupported, "%s at %s:%d: %s's descriptor has base offset %d: this emulator takes 0 (each "
                  "swizzle atom at an address aligned to its size)", name, file, line, which, (int)(desc >> 49 & 7));
    o.start = 0; /* nearest above a tile the encoder saw (descriptor arithmetic moves the address), else by region */
    uint32_t best = 0x40000;
    for (uintptr_t p : encoded) {
        uint32_t delta = (off - window((const void *)p)) & 0x3ffffu;
        if (delta < best && eyes_shared_span(p + delta, 16)) best = delta, o.start = p + delta;
    }
    if (!o.start) o.start = eyes_shared_from_window(off);
    if (!o.start)
        fail_here(cudaErrorIllegalAddress, "%s at %s:%d: thread %u: %s's descriptor address 0x%05x is not in the "
                  "block's shared memory", name, file, line, tid, which, off);
    if (o.w && mn) { /* 8 k rows of o.w bytes an atom; SBO: the next 8 k, LBO: the next o.w bytes of M or N */
        if (o.start % (8 * o.w))
            fail_here(cudaErrorMisalignedAddress, "%s at %s:%d: %s's MN-major tile at %s is not aligned to the %u-byte "
                      "atom of %s (8 k rows of %u bytes of M or N; base offset 0)", name, file, line, which,
                      where(o.start), 8 * o.w, swizzle_name(o.swizzle), o.w);
        if (o.sbo == 0 || o.sbo % (8 * o.w))
            fail_here(cudaErrorIllegalInstruction, "%s at %s:%d: %s is MN-major (imm-trans 1) and its SBO %u bytes is "
                      "not a multiple of the %u-byte atom: MN-major, SBO is the offset between groups of 8 k rows",
                      name, file, line, which, o.sbo, 8 * o.w);
        if (wide > o.w && (o.lbo == 0 || o.lbo % (8 * o.w)))
            fail_here(cudaErrorIllegalInstruction, "%s at %s:%d: %s is MN-major (imm-trans 1), %u bytes wide, and its "
                      "LBO %u bytes is not a multiple of the %u-byte atom: MN-major, LBO is the offset between groups "
                      "of %u bytes of M or N", name, file, line, which, wide, o.lbo, 8 * o.w, o.w);
    } else if (o.w) {
        if (o.start % o.w + 32 > o.w)
            fail_here(cudaErrorIllegalInstruction, "%s at %s:%d: %s's start %s is %u bytes into a %u-byte swizzle row: "
                      "the instruction's 32 bytes of K must lie in one row", name, file, line, which, where(o.start),
                      (unsigned)(o.start % o.w), o.w);
        if (o.start % (8 * o.w) >= o.w)
            fail_here(cudaErrorMisalignedAddress, "%s at %s:%d: %s's tile at %s is not aligned to the %u-byte atom of "
                      "%s (base offset 0: the tile's row 0 must be the atom's row 0)", name, file, line,
                      which, where(o.start), 8 * o.w, swizzle_name(o.swizzle));
        if (o.sbo == 0 || o.sbo % (8 * o.w))
            fail_here(cudaErrorIllegalInstruction, "%s at %s:%d: %s's SBO %u bytes is not a multiple of the %u-byte "
                      "swizzle atom (8 rows of %u bytes)", name, file, line, which, o.sbo, 8 * o.w, o.w);
    } else if (o.lbo == 0 || o.sbo == 0) {
        fail_here(cudaErrorIllegalInstruction, "%s at %s:%d: %s's descriptor without swizzle has LBO %u and SBO %u: "
                  "both core-matrix strides are needed", name, file, line, which, o.lbo, o.sbo);
    }
    return o;
}

/* the byte address of element k (elem bytes) of row r (M or N) of an operand, K-major or MN-major (CUTLASS's
 * canonical layouts: swizzled, k row k % 8 of the atom at (k / 8) SBO + (bytes of r / span) LBO; without a
 * swizzle, a core matrix of 8 k rows of 16 bytes at (k / 8) LBO + (r / 8) SBO) */
static uintptr_t element(const operand &o, int r, int k, int elem)
{
    if (o.mn) {
        unsigned rb = (unsigned)(r * elem);
        if (!o.w)
            return o.start + (uintptr_t)(rb / 16) * o.sbo + (uintptr_t)(k / 8) * o.lbo + (uintptr_t)(k % 8) * 16 +
                   rb % 16;
        return swizzled(o.start + (uintptr_t)(rb / o.w) * o.lbo + (uintptr_t)(k / 8) * o.sbo +
                        (uintptr_t)(k % 8) * o.w + rb % o.w, o.swizzle);
    }
    unsigned kb = (unsigned)(k * elem);
    if (!o.w) return o.start + (uintptr_t)(r / 8) * o.sbo + (kb / 16) * o.lbo + (uintptr_t)(r % 8) * 16 + kb % 16;
    return swizzled(o.start + (uintptr_t)(r / 8) * o.sbo + (uintptr_t)(r % 8) * o.w + kb, o.swizzle);
}

static float value(uintptr_t p, int type)
{
    uint32_t u = 0;
    float f;
    if (type == WG_TF32) {
        memcpy(&u, (const void *)p, 4);
        u &= 0xffffe000u;
    } else {
        uint16_t h;
        memcpy(&h, (const void *)p, 2);
        if (type == WG_BF16) u = (uint32_t)h << 16;
        else {
            int e = h >> 10 & 31, m = h & 1023;
            f = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m | 1024), e - 25);
            return h >> 15 ? -f : f;
        }
    }
    memcpy(&f, &u, 4);
    return f;
}

static void fragment_place(int lt, int j, int *r, int *c) /* register j of warpgroup thread lt: D[r][c] */
{
    int w = lt / 32, g = lt % 32 / 4, t = lt % 4, i = j / 4, q = j % 4;
    *r = 16 * w + g + (q >= 2 ? 8 : 0), *c = 8 * i + 2 * t + (q & 1);
}

static void compute(op &o)
{
    int K = o.type == WG_TF32 ? 8 : 16, elem = o.type == WG_TF32 ? 4 : 2;
    operand A = decode(o.a, "A", o.name, o.file, o.line, o.trans & 1, 64u * elem),
            B = decode(o.b, "B", o.name, o.file, o.line, o.trans >> 1 & 1, (unsigned)o.n * elem);
    for (uintptr_t c : o.chunks) {
        for (const tma_copy &t : copies)
            if (c >= (uintptr_t)t.dst && c < (uintptr_t)t.dst + t.data.size())
                fail_here(cudaErrorIllegalInstruction, "%s at %s:%d reads shared memory %s that cp.async.bulk.tensor "
                          "issued at %s:%d has not landed: wait on its mbarrier's phase first", o.name, o.file,
                          o.line, where(c), t.file, t.line);
        auto g = generic.find(c);
        if (g != generic.end())
            fail_here(cudaErrorIllegalInstruction, "%s at %s:%d reads shared memory %s that thread %u wrote at %s "
                      "through the generic proxy with no fence.proxy.async since (wgmma's operand reads are "
                      "async-proxy accesses)", o.name, o.file, o.line, where(c), g->second.tid,
                      source_line(g->second.pc));
    }
    const operand *both[2] = {&A, &B};
    for (int which = 0; which < 2; which++) {
        const operand &p = *both[which];
        int rows = which ? o.n : 64;
        for (int r = 0; r < rows; r++) {
            uintptr_t c = element(p, r, 0, elem) & ~(uintptr_t)15;
            for (size_t i = boxes.size(); i-- > 0;)
                if (c >= boxes[i].lo && c < boxes[i].hi) {
                    if (boxes[i].swizzle != p.swizzle)
                        fail_here(cudaErrorIllegalInstruction, "%s at %s:%d: %s's descriptor says %s, but "
                                  "cp.async.bulk.tensor at %s:%d wrote its tile at %s with %s (the descriptor's "
                                  "layout must be the tensor map's)", o.name, o.file, o.line,
                                  which ? "B" : "A", swizzle_name(p.swizzle), boxes[i].file, boxes[i].line,
                                  where(boxes[i].lo), swizzle_name(boxes[i].swizzle));
                    break;
                }
        }
    }
    std::vector<float> a((size_t)64 * K), b((size_t)o.n * K);
    for (int r = 0; r < 64; r++)
        for (int k = 0; k < K; k++) a[(size_t)r * K + k] = value(element(A, r, k, elem), o.type);
    for (int n = 0; n < o.n; n++)
        for (int k = 0; k < K; k++) b[(size_t)n * K + k] = value(element(B, n, k, elem), o.type);
    o.result.assign((size_t)64 * o.n, 0.0f);
    for (int lt = 0; lt < 128; lt++)
        for (int j = 0; j < o.n / 2; j++) {
            int r, c;
            fragment_place(lt, j, &r, &c);
            float in = o.chain[lt] >= 0 ? ops[(size_t)o.chain[lt]].result[(size_t)r * o.n + c]
                                        : o.c[(size_t)r * o.n + c];
            o.result[(size_t)r * o.n + c] = o.scale[lt] ? in : 0.0f;
        }
    for (int r = 0; r < 64; r++)
        for (int n = 0; n < o.n; n++) {
            float s = o.result[(size_t)r * o.n + n];
            for (int k = 0; k < K; k++) s += a[(size_t)r * K + k] * b[(size_t)n * K + k];
            o.result[(size_t)r * o.n + n] = s;
        }
    o.computed = 1, uncomputed--;
    o.c.clear(), o.c.shrink_to_fit();
}

static int poisoned(const float *d, int n, int *bad)
{
    for (int j = 0; j < n; j++) {
        uint32_t u;
        memcpy(&u, &d[j], 4);
        if (u != POISON) return *bad = j, 0;
    }
    return 1;
}

void wgmma(int type, int n, float *d, uint64_t a, uint64_t b, int scale_d, int trans, const char *name,
           const char *file, int line)
{
    hthread &t = me();
    unsigned tid = my_tid();
    int wg = (int)(tid / 128), lt = (int)(tid % 128);
    if ((size_t)(wg + 1) * 128 > block_threads)
        fail_here(cudaErrorIllegalInstruction, "%s at %s:%d: thread %u is in warpgroup %d, which the block's %zu "
                  "threads do not fill (4 whole warps)", name, file, line, tid, wg, block_threads);
    if (!t.fenced)
        fail_here(cudaErrorIllegalInstruction, "%s at %s:%d: thread %u issues it with no wgmma.fence since its "
                  "last wgmma.wait_group (or the kernel's start): the fence orders the accumulators' accesses",
                  name, file, line, tid);
    uint64_t seq = t.issued++;
    auto key = std::make_pair(wg, seq);
    auto found = op_of.find(key);
    int id;
    if (found == op_of.end()) {
        id = (int)ops.size();
        op_of[key] = id;
        ops.push_back(op());
        uncomputed++;
        op &o = ops.back();
        o.wg = wg, o.type = type, o.n = n, o.trans = trans, o.a = a, o.b = b, o.name = name, o.file = file;
        o.line = line;
        if (W.model) model_op(type, n);
        for (int i = 0; i < 128; i++) o.chain[i] = -1, o.d[i] = NULL, o.scale[i] = 0;
        o.c.assign((size_t)64 * n, 0.0f);
        int elem = type == WG_TF32 ? 4 : 2, K = 32 / elem;
        if (trans && type == WG_TF32)
            fail_here(cudaErrorIllegalInstruction, "%s at %s:%d: imm-trans 1 with tf32: only .f16 and .bf16 take "
                      "MN-major operands", name, file, line);
        operand A = decode(a, "A", name, file, line, trans & 1, 64u * elem),
                B = decode(b, "B", name, file, line, trans >> 1 & 1, (unsigned)n * elem);
        /* every element of an MN-major operand at its own address: LBO and SBO that fold two places onto one
         * fail (K-major operands keep their own checks, in compute: a TMA box's swizzle names the error better) */
        static std::vector<uintptr_t> &at = *new std::vector<uintptr_t>; /* static: fail_here does not unwind */
        for (int which = 0; which < 2; which++) {
            const operand &p = which ? B : A;
            at.clear();
            for (int r = 0; r < (which ? n : 64); r++)
                for (int k = 0; k < K; k++) at.push_back(element(p, r, k, elem));
            std::sort(at.begin(), at.end());
            for (size_t i = 1; i < at.size() && p.mn; i++)
                if (at[i] < at[i - 1] + (uintptr_t)elem)
                    fail_here(cudaErrorIllegalInstruction, "%s at %s:%d: %s's descriptor (%s-major, LBO %u, SBO %u, "
                              "%s) places two of its elements at %s: the strides overlap the layout's atoms", name,
                              file, line, which ? "B" : "A", p.mn ? "MN" : "K", p.lbo, p.sbo,
                              swizzle_name(p.swizzle), where(at[i]));
            for (uintptr_t c : at)
                if (o.chunks.empty() || o.chunks.back() != (c & ~(uintptr_t)15))
                    o.chunks.push_back(c & ~(uintptr_t)15);
        }
        for (uintptr_t c : o.chunks)
            if (!eyes_shared_span(c, 16))
                fail_here(cudaErrorIllegalAddress, "%s at %s:%d: an operand row at %p lies outside the block's "
                          "shared memory (descriptor strides past the tile)", name, file, line, (void *)c);
    } else {
        id = found->second;
        const op &o = ops[(size_t)id];
        if (o.type != type || o.n != n || o.trans != trans || o.a != a || o.b != b)
            fail_here(cudaErrorIllegalInstruction, "%s at %s:%d: thread %u issues it with descriptors 0x%llx, 0x%llx as "
                      "the warpgroup's operation %llu, which thread %u issued at %s:%d as %s with 0x%llx, 0x%llx: "
                      ".aligned needs the same instruction and operands in every thread of the warpgroup", name, file,
                      line, tid, (unsigned long long)a, (unsigned long long)b, (unsigned long long)seq,
                      (unsigned)(wg * 128), o.file, o.line, o.name, (unsigned long long)o.a,
                      (unsigned long long)o.b);
    }
    op &o = ops[(size_t)id];
    static std::vector<int> &mine = *new std::vector<int>; /* static: a failing thread never unwinds (leaks) */
    mine.clear();
    unretired(t, mine);
    for (size_t i = mine.size(); i-- > 0;)
        if (ops[(size_t)mine[i]].d[lt] == d && ops[(size_t)mine[i]].n == n) {
            o.chain[lt] = mine[i];
            break;
        }
    int bad;
    if (o.chain[lt] >= 0 && !poisoned(d, n / 2, &bad))
        fail_here(cudaErrorIllegalInstruction, "%s at %s:%d: thread %u's accumulator d[%d] was written while %s "
                  "issued at %s:%d on the same registers was in flight (before its wgmma.wait_group)", name, file,
                  line, tid, bad, ops[(size_t)o.chain[lt]].name, ops[(size_t)o.chain[lt]].file,
                  ops[(size_t)o.chain[lt]].line);
    if (o.chain[lt] < 0)
        for (int j = 0; j < n / 2; j++) {
            int r, c;
            fragment_place(lt, j, &r, &c);
            o.c[(size_t)r * n + c] = d[j];
        }
    o.d[lt] = d, o.scale[lt] = scale_d != 0;
    for (int j = 0; j < n / 2; j++) memcpy(&d[j], &POISON, 4);
    o.issued++;
    t.open.push_back(id);
    t.last_op = id;
}

static void ensure_computed(int id, const char *file, int line)
{
    while (ops[(size_t)id].issued < 128) park_on_barrier(&wgmma_sentinel, TOKEN_WGMMA | (uint64_t)id,
                                                         site_pc(file, line));
    int wg = ops[(size_t)id].wg;
    for (size_t i = 0; i <= (size_t)id; i++)
        if (ops[i].wg == wg && !ops[i].computed) compute(ops[i]);
}

void wgmma_wait(int n, const char *file, int line)
{
    hthread &t = me();
    unsigned tid = my_tid();
    int lt = (int)(tid % 128);
    /* no heap-owning locals here: a thread parked in ensure_computed, or failing, is never unwound */
    static std::vector<int> &group = *new std::vector<int>, &later = *new std::vector<int>;
    while (t.committed.size() > (size_t)n) {
        for (size_t i = 0; i < t.committed.front().size(); i++) ensure_computed(t.committed.front()[i], file, line);
        group.assign(t.committed.front().begin(), t.committed.front().end());
        t.committed.pop_front();
        later.clear();
        unretired(t, later);
        for (int id : group) {
            op &o = ops[(size_t)id];
            int bad, chained = 0;
            for (int l : later)
                if (ops[(size_t)l].d[lt] == o.d[lt]) chained = 1;
            for (int id2 : group)
                if (id2 > id && ops[(size_t)id2].d[lt] == o.d[lt]) chained = 1;
            if (chained) continue;
            if (!poisoned(o.d[lt], o.n / 2, &bad))
                fail_here(cudaErrorIllegalInstruction, "wgmma.wait_group at %s:%d: thread %u's accumulator d[%d] of "
                          "%s issued at %s:%d was written while the operation was in flight (between the "
                          "mma_async and this wait)", file, line, tid, bad, o.name, o.file, o.line);
            for (int j = 0; j < o.n / 2; j++) {
                int r, c;
                fragment_place(lt, j, &r, &c);
                o.d[lt][j] = o.result[(size_t)r * o.n + c];
            }
        }
    }
    t.fenced = 0;
}

void setmaxnreg(int inc, int n, const char *file, int line)
{
    (void)inc;
    unsigned tid = my_tid();
    (void)me();
    if ((size_t)(tid / 128 + 1) * 128 > block_threads)
        fail_here(cudaErrorIllegalInstruction, "setmaxnreg at %s:%d: thread %u is in a warpgroup the block's %zu "
                  "threads do not fill", file, line, tid, block_threads);
    (void)n;
}

} /* namespace hopper */

/* ---- the scheduler's questions (emu_async.cc's barrier_passed, emu_sched.cc's deadlock message) ---- */
int hopper_passed(const void *bar, uint64_t token)
{
    using namespace hopper;
    if ((token >> 62) == 2) return ops[(size_t)(token & 0xffffffffu)].issued >= 128;
    uint64_t *b = (uint64_t *)bar;
    auto it = bars.find(b);
    if (it == bars.end()) return 1;
    if (!progress(b, it->second, 0)) return 0;
    return (uint32_t)(it->second.phase & 1) != (uint32_t)(token & 1);
}

int hopper_token(uint64_t token) { return (int)(token >> 62); }

void hopper_stuck(char *out, size_t cap)
{
    using namespace hopper;
    size_t len = 0;
    out[0] = 0;
    for (auto &kv : bars) {
        const mbar &b = kv.second;
        if (b.pending == b.expected && b.tx == 0) continue;
        len += (size_t)snprintf(out + len, cap - len, "%smbarrier at %s (init at %s:%d, count %u): phase %lld has %u "
                                "of its arrivals to come and a tx-count of %lld bytes outstanding (expect_tx "
                                "announced %lld, %lld landed)", len ? "; " : "", where((uintptr_t)kv.first), b.file,
                                b.line, b.expected, (long long)b.phase, b.pending, (long long)b.tx,
                                (long long)b.tx_added, (long long)b.tx_landed);
        if (len >= cap) return;
    }
    for (const op &o : ops)
        if (o.issued < 128 && len < cap)
            len += (size_t)snprintf(out + len, cap - len, "%s%s at %s:%d issued by %d of its warpgroup's 128 threads",
                                    len ? "; " : "", o.name, o.file, o.line, o.issued);
}

} /* namespace emu */

/* ---- the driver's tensor-map encoder, reached through the runtime's entry-point query ---- */
static CUresult CUDAAPI emu_tensor_map_encode_tiled(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank,
                                                    void *base, const cuuint64_t *dim, const cuuint64_t *strides,
                                                    const cuuint32_t *box, const cuuint32_t *element_strides,
                                                    CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                                    CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob)
{
    using namespace emu::hopper;
    static const int size[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
    (void)l2;
    auto bad = [](const char *why) {
        emu::fail(cudaErrorInvalidValue, "cuTensorMapEncodeTiled: %s", why);
        return CUDA_ERROR_INVALID_VALUE;
    };
    if (!map || (uintptr_t)map % 64) return bad("the CUtensorMap must be 64-byte aligned");
    if ((int)type < 0 || (int)type >= (int)(sizeof size / sizeof *size))
        return bad("a data type this emulator does not take");
    if (rank != 2) return bad("rank other than 2 is not emulated");
    if ((uintptr_t)base % 16) return bad("the global address must be 16-byte aligned");
    if (interleave != CU_TENSOR_MAP_INTERLEAVE_NONE) return bad("interleaved layouts are not emulated");
    if ((int)swizzle > (int)CU_TENSOR_MAP_SWIZZLE_128B) return bad("the 128B atom swizzles are not emulated");
    uint32_t e = (uint32_t)size[type];
    for (int i = 0; i < 2; i++) {
        if (dim[i] == 0 || dim[i] > (1ull << 32)) return bad("globalDim must be in [1, 2^32]");
        if (box[i] == 0 || box[i] > 256) return bad("boxDim must be in [1, 256]");
        if (element_strides[i] != 1) return bad("elementStrides other than 1 are not emulated");
    }
    if (strides[0] % 16 || strides[0] >= (1ull << 40) || strides[0] < dim[0] * e)
        return bad("globalStrides[0] must be a multiple of 16 below 2^40 and hold a row");
    if (box[0] * e % 16) return bad("boxDim[0] * the element size must be a multiple of 16 bytes");
    static const unsigned span[] = {0, 32, 64, 128};
    if (swizzle != CU_TENSOR_MAP_SWIZZLE_NONE && box[0] * e > span[swizzle])
        return bad("the box's inner dimension exceeds the swizzle span");
    memset(map, 0, sizeof *map);
    tmap &m = *(tmap *)map;
    m.magic = MAP_MAGIC, m.base = (char *)base, m.dim[0] = dim[0], m.dim[1] = dim[1], m.stride = strides[0];
    m.box[0] = box[0], m.box[1] = box[1], m.elem = e;
    static const int mode[] = {0, 3, 2, 1}; /* CUtensorMapSwizzle -> the descriptor's encoding */
    m.swizzle = mode[swizzle], m.oob_nan = oob == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
    return CUDA_SUCCESS;
}

static cudaError_t entry_point(const char *symbol, void **fn, enum cudaDriverEntryPointQueryResult *status)
{
    if (!symbol || !fn) return cudaErrorInvalidValue;
    if (!strcmp(symbol, "cuTensorMapEncodeTiled")) {
        *fn = (void *)(PFN_cuTensorMapEncodeTiled_v12000)emu_tensor_map_encode_tiled;
        if (status) *status = cudaDriverEntryPointSuccess;
        return cudaSuccess;
    }
    *fn = NULL;
    if (status) *status = cudaDriverEntryPointSymbolNotFound;
    return cudaSuccess;
}

extern "C" cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **fn, unsigned int version,
                                                        unsigned long long flags,
                                                        enum cudaDriverEntryPointQueryResult *status)
{
    (void)version, (void)flags;
    return entry_point(symbol, fn, status);
}

extern "C" cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **fn, unsigned long long flags,
                                               enum cudaDriverEntryPointQueryResult *status)
{
    (void)flags;
    return entry_point(symbol, fn, status);
}
