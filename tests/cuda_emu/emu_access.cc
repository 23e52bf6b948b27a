/* emu_access.cc - TEST-ONLY: every load and store of device code, delivered to the detectors.
 *
 * emu.mk compiles the .cu objects (never the emulator's own files, never host C) with
 *   g++ -fsanitize=thread --param tsan-instrument-func-entry-exit=0
 * which makes GCC call __tsan_read4(addr) before a 4-byte load, __tsan_write8(addr) before an 8-byte store, and
 * so on. libtsan is never linked: the entry points are defined here. Each one returns at once unless a launch's
 * first pass is running and the address lies in a device allocation or in the running block's shared memory
 * (the static __shared__ variables, which the shim places in the section emu_shared, or the dynamic buffer).
 * __builtin_return_address(0) is the instrumented access itself: its source line is resolved only when a
 * message or the profile needs it. Atomics (include/emu_kernel.h) are not instrumented; they call
 * emu_atomic_access with their call site. */
#include "emu_dry.h"
#include "emu_eyes.h"
#include "emu_model.h"
#include "emu_sched.h"

#include <stdlib.h>

/* The linker's bounds of the section emu_shared; weak: a program without any __shared__ variable has none. */
extern "C" char __start_emu_shared[] __attribute__((weak));
extern "C" char __stop_emu_shared[] __attribute__((weak));

namespace emu {

watch_state W;
static uintptr_t dev_lo, dev_hi;         /* every live allocation lies in [dev_lo, dev_hi) */
static uintptr_t sm_lo[SM_REGIONS], sm_hi[SM_REGIONS];
static const int RECENT = 4;
static const alloc_info *recent[RECENT]; /* most accesses hit one of the last few allocations hit */

void static_smem_range(uintptr_t *lo, uintptr_t *hi)
{
    *lo = (uintptr_t)__start_emu_shared, *hi = (uintptr_t)__stop_emu_shared;
}

void eyes_pass(const launch_cfg &cfg, int pass)
{
    static int off = -1; /* EMU_WATCH=0 turns the detectors off (to time them, or to bisect) */
    if (off < 0) off = getenv("EMU_WATCH") && !atoi(getenv("EMU_WATCH"));
#if defined(__SANITIZE_ADDRESS__)
    W.on = 0; /* the ASan build is not instrumented (tsan and asan do not combine): nothing to watch */
#else
    /* a dry run's memory is address space only: no shadow to watch; the time model watches with the detectors off */
    W.on = pass == 0 && (!off || model_on()) && (!dry() || (dry() == 3 && model_on())); /* 3: the model's dry run */
#endif
    W.detect = W.on && !off && !model_on(); /* the model's runs are for counting (validate without it) */
    W.cfg = &cfg;
    if (pass == 0) W.launch_serial++, hazard_new_launch(), profile_new_launch(cfg);
    alloc_span(&dev_lo, &dev_hi);
    static_smem_range(&sm_lo[SM_STATIC], &sm_hi[SM_STATIC]);
    template_smem_range(&sm_lo[SM_TEMPLATE], &sm_hi[SM_TEMPLATE]);
    for (const alloc_info *&r : recent) r = NULL;
    W.profile = W.detect && profile_on();
    W.model = W.on && model_on();
    if (W.model) model_new_launch(cfg);
}

void eyes_grid_end(void)
{
    if (W.model) model_grid_end();
    W.on = 0, W.profile = 0, W.detect = 0, W.model = 0;
}

void eyes_block_end(void)
{
    if (W.profile) profile_block_end();
    if (W.model) model_block_end();
}

/* The running block's dynamic shared memory (emu_launch.cc may move it between passes). */
void eyes_dynamic_smem(void *p, size_t bytes)
{
    sm_lo[SM_DYNAMIC] = (uintptr_t)p, sm_hi[SM_DYNAMIC] = (uintptr_t)p + bytes;
}

static unsigned linear_tid(void)
{
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

static const alloc_info *alloc_of(uintptr_t p, unsigned n)
{
    for (const alloc_info *a : recent)
        if (a && p >= (uintptr_t)a->base && p + n <= (uintptr_t)a->base + a->bytes) return a;
    const alloc_info *a = find_alloc((const void *)p, n);
    if (!a) return NULL; /* a red zone or a gap (the red-zone check reports out-of-bounds writes) */
    for (int i = RECENT - 1; i > 0; i--) recent[i] = recent[i - 1];
    return recent[0] = a;
}

static void on_access_by(uintptr_t p, unsigned n, int kind, void *pc, unsigned tid)
{
    access a{p, n, kind, pc, tid};
    for (int r = 0; r < SM_REGIONS; r++)
        if (p >= sm_lo[r] && p < sm_hi[r] && (r != SM_TEMPLATE || template_smem_contains(p))) {
            if (W.detect) hazard_shared(a, r, p - sm_lo[r], sm_hi[r] - sm_lo[r]);
            if (hopper_linked && kind == ACC_WRITE) hopper_shared_write(p, n, tid, pc);
            if (W.profile) profile_access(a, 1);
            if (W.model) model_access(a, 1);
            return;
        }
    if (p < dev_lo || p >= dev_hi) return;
    const alloc_info *al = alloc_of(p, n);
    if (!al) return;
    if (W.detect) hazard_global(a, al);
    if (W.profile) profile_access(a, 0);
    if (W.model) model_access(a, 0);
}

static struct {
    int on;
    unsigned first_tid, lane;
    void *pc;
} collective;

void eyes_collective_begin(unsigned first_tid, void *pc) { collective.on = 1, collective.first_tid = first_tid, collective.lane = 0, collective.pc = pc; }
void eyes_collective_end(void) { collective.on = 0; }
void collective_lane(int lane) { collective.lane = (unsigned)lane; }

static void on_access(uintptr_t p, unsigned n, int kind, void *pc)
{
    if (collective.on) on_access_by(p, n, kind, collective.pc, collective.first_tid + collective.lane);
    else on_access_by(p, n, kind, pc, linear_tid());
}

static int shared_region(uintptr_t p, size_t bytes)
{
    for (int r = 0; r < SM_REGIONS; r++)
        if (p >= sm_lo[r] && p + bytes <= sm_hi[r] && (r != SM_TEMPLATE || template_smem_contains(p))) return r;
    return -1;
}

int eyes_shared_span(uintptr_t p, size_t bytes) { return shared_region(p, bytes) >= 0; }

uintptr_t eyes_shared_from_window(uint32_t off)
{
    static const int order[] = {SM_DYNAMIC, SM_STATIC, SM_TEMPLATE}; /* the Hopper kernels' tiles: dynamic */
    for (int r : order) {
        if (sm_lo[r] == sm_hi[r]) continue;
        uintptr_t p = (sm_lo[r] & ~(uintptr_t)0x3ffff) | off;
        if (p < sm_lo[r]) p += 0x40000;
        if (p < sm_hi[r] && shared_region(p, 1) >= 0) return p;
    }
    return 0;
}

void eyes_async_issue(uintptr_t dst, uintptr_t src, unsigned bytes, unsigned src_bytes, void *pc)
{
    if (!W.on) return;
    if (src_bytes) on_access(src, src_bytes, ACC_READ, pc);
    on_access(dst, bytes, ACC_WRITE, pc);
    int r = shared_region(dst, bytes);
    if (W.detect && r >= 0) hazard_shared_unwritten(r, dst - sm_lo[r], bytes);
}

void eyes_async_land(uintptr_t dst, unsigned bytes, void *pc, unsigned tid)
{
    if (!W.detect) return; /* the profile and the model counted the copy at its issue */
    int r = shared_region(dst, bytes);
    if (r >= 0) hazard_shared(access{dst, bytes, ACC_WRITE, pc, tid}, r, dst - sm_lo[r], sm_hi[r] - sm_lo[r]);
}

/* A GPU load or store of n bytes needs an address aligned to n (the CUDA C++ Programming Guide, "Device Memory
 * Accesses": sizes 1, 2, 4, 8 or 16 bytes, naturally aligned, else the access faults with a misaligned address).
 * g++ instruments an access it knows to be naturally aligned (a float4, a double, an int) with __tsan_readN and
 * one it does not (a packed struct, a memcpy) with __tsan_unaligned_readN, so only the first kind is held to it:
 * in shared memory or a device allocation, a misaligned one fails the launch. */
static void check_aligned(uintptr_t p, unsigned n, void *pc)
{
    if (!(p & (n - 1))) return;
    int shared = shared_region(p, n) >= 0;
    if (!shared && (p < dev_lo || p >= dev_hi)) return;
    block_fail(cudaErrorMisalignedAddress, "misaligned access at %s: thread %u accesses %u bytes of %s memory at %p, "
               "which is not %u-byte aligned", source_line(pc), linear_tid(), n, shared ? "shared" : "global",
               (void *)p, n);
    abandon_thread();
}

} /* namespace emu */

#define HOOK_ALIGNED(p, n, k)                                                                \
    do {                                                                                     \
        if (__builtin_expect(emu::W.on, 0)) {                                                \
            emu::check_aligned((uintptr_t)(p), (n), __builtin_return_address(0));           \
            emu::on_access((uintptr_t)(p), (n), (k), __builtin_return_address(0));          \
        }                                                                                    \
    } while (0)

#define HOOK(p, n, k)                                                                        \
    do {                                                                                     \
        if (__builtin_expect(emu::W.on, 0))                                                  \
            emu::on_access((uintptr_t)(p), (n), (k), __builtin_return_address(0));          \
    } while (0)

extern "C" {
void __tsan_init(void) {}
void __tsan_func_entry(void *) {}
void __tsan_func_exit(void) {}
void __tsan_vptr_update(void **, void *) {}
void __tsan_vptr_read(void **) {}

#define EMU_TSAN_SIZE(n)                                                                      \
    void __tsan_read##n(void *p) { HOOK_ALIGNED(p, n, emu::ACC_READ); }                       \
    void __tsan_write##n(void *p) { HOOK_ALIGNED(p, n, emu::ACC_WRITE); }                     \
    void __tsan_unaligned_read##n(void *p) { HOOK(p, n, emu::ACC_READ); }                     \
    void __tsan_unaligned_write##n(void *p) { HOOK(p, n, emu::ACC_WRITE); }                   \
    void __tsan_volatile_read##n(void *p) { HOOK(p, n, emu::ACC_READ); }                      \
    void __tsan_volatile_write##n(void *p) { HOOK(p, n, emu::ACC_WRITE); }
EMU_TSAN_SIZE(1)
EMU_TSAN_SIZE(2)
EMU_TSAN_SIZE(4)
EMU_TSAN_SIZE(8)
EMU_TSAN_SIZE(16)

void __tsan_read_range(void *p, unsigned long n) { HOOK(p, (unsigned)n, emu::ACC_READ); }
void __tsan_write_range(void *p, unsigned long n) { HOOK(p, (unsigned)n, emu::ACC_WRITE); }

/* include/emu_kernel.h's atomics: pc is the atomic's call site in the kernel */
void emu_atomic_access(void *p, unsigned n, void *pc)
{
    if (emu::W.on) emu::on_access((uintptr_t)p, n, emu::ACC_ATOMIC, pc);
}
}
