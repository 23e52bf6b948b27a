/* emu_launch.cc - TEST-ONLY: one kernel launch under the emulator.
 *
 *  1. the configuration is checked against an sm_90 device's limits (cudaErrorInvalidConfiguration);
 *  2. every pointer argument must lie in a live device allocation (a host pointer is an illegal address);
 *  3. the grid runs twice: threads in order and blocks in order, then threads reversed and blocks shuffled,
 *     from the same starting memory. Both must leave the same bytes in every allocation the kernel can reach:
 *     a missing barrier or a race between threads shows up as a mismatch (set EMU_ONE_PASS=1 to skip);
 *  4. the red zones of every allocation are checked (an out-of-bounds write without ASan).
 * Any failure is recorded for cudaGetLastError(); the process goes on. */
#include "emu_dry.h"
#include "emu_eyes.h"
#include "emu_model.h"
#include "emu_sched.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

namespace emu {

static std::vector<unsigned char> smem; /* dynamic shared memory of the running launch: one slot per resident block */
static size_t smem_stride, smem_slot;  /* a slot's bytes (a multiple of 128), the running block's slot */
int float_atomics;

/* Float atomics add in a different order in each pass: the two results may differ by rounding. Compared as
 * 32-bit floats: |a - b| <= 1e-4 max(|a|, |b|) + 1e-6 max|allocation| (bytes equal always pass). Returns the
 * first word offset that fails, or (size_t)-1. */
static size_t first_mismatch(const unsigned char *x, const unsigned char *y, size_t bytes, int tolerant)
{
    if (!tolerant) {
        for (size_t i = 0; i < bytes; i++)
            if (x[i] != y[i]) return i & ~(size_t)3;
        return (size_t)-1;
    }
    float big = 0.0f;
    for (size_t i = 0; i + 4 <= bytes; i += 4) {
        float a;
        memcpy(&a, x + i, 4);
        if (fabsf(a) > big && fabsf(a) < INFINITY) big = fabsf(a);
    }
    for (size_t i = 0; i + 4 <= bytes; i += 4) {
        float a, b;
        memcpy(&a, x + i, 4);
        memcpy(&b, y + i, 4);
        if (memcmp(x + i, y + i, 4) && !(fabsf(a - b) <= 1e-4f * fmaxf(fabsf(a), fabsf(b)) + 1e-6f * big)) return i;
    }
    return memcmp(x + (bytes & ~(size_t)3), y + (bytes & ~(size_t)3), bytes & 3) ? bytes & ~(size_t)3 : (size_t)-1;
}

/* 128-byte aligned, as a GPU's shared memory window is: wmma tiles there need 32 (mma.h) */
void *dynamic_smem(void)
{
    return (void *)((((uintptr_t)smem.data() + 127) & ~(uintptr_t)127) + smem_slot * smem_stride);
}

/* NaN-filled slots (uninitialised memory is not zero), 128-byte aligned, for `slots` resident blocks */
static void smem_alloc(size_t bytes, size_t slots)
{
    smem_stride = (bytes + 16 + 127) / 128 * 128, smem_slot = 0;
    smem.assign(smem_stride * slots + 127, 0xFF);
}

static void shuffle(std::vector<size_t> &order, uint64_t s)
{
    for (size_t i = order.size(); i > 1; i--) { /* Fisher-Yates with a fixed seed: the same order every run */
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        size_t j = s % i, tmp = order[i - 1];
        order[i - 1] = order[j], order[j] = tmp;
    }
}

static void set_block_idx(const launch_cfg &cfg, size_t b)
{
    blockIdx.x = (unsigned)(b % cfg.grid.x);
    blockIdx.y = (unsigned)(b / cfg.grid.x % cfg.grid.y);
    blockIdx.z = (unsigned)(b / ((size_t)cfg.grid.x * cfg.grid.y));
}

/* A dry run (EMU_DRY=1) runs the boundary blocks only; mode 3 runs what the time model asks for. */
static int boundary_blocks_only(void) { return dry() && dry() != 3; }

/* A cooperative launch: every block resident at once. Each runs until all its threads wait at grid.sync() (or
 * end); once every block waits, all are released: the segments between two grid.syncs run block by block, in
 * order (pass 0) or in a new shuffled order per segment (pass 1). Each block keeps its own fibers, dynamic shared
 * memory slot and copy of the static __shared__ section; for the detectors a grid.sync orders every access
 * before it against every access after it, as a launch boundary does. A block that ends while others wait at a
 * grid.sync would deadlock a GPU: the launch fails. A dry run runs the boundary blocks only, as for any launch
 * (emu_dry.cc), and a grid.sync there waits for those: its values are meaningless, the indices at the grid's ends
 * are what it checks. */
static int run_grid_coop(const launch_cfg &cfg, size_t nb_grid, int pass)
{
    uintptr_t lo, hi;
    static_smem_range(&lo, &hi);
    std::vector<size_t> ids; /* slot -> block index */
    if (boundary_blocks_only()) ids = dry_blocks(cfg.grid);
    else
        for (size_t i = 0; i < nb_grid; i++) ids.push_back(i);
    size_t nb = ids.size();
    std::vector<std::vector<unsigned char>> statics(nb, std::vector<unsigned char>((const unsigned char *)lo,
                                                                                    (const unsigned char *)hi));
    std::vector<int> state(nb, 0); /* 0 not started, 1 ended, 2 waiting at a grid.sync */
    if (W.model) model_blocks(cfg); /* every block runs; the model records its sample (emu_model.cc) */
    coop_begin(nb);
    eyes_coop_begin(nb);
    int ok = 1;
    for (uint64_t segment = 0; ok; segment++) {
        std::vector<size_t> order;
        for (size_t i = 0; i < nb; i++) order.push_back(i);
        if (pass) shuffle(order, 0x9E3779B97F4A7C15ull ^ nb ^ (segment * 0xD1B54A32D192ED03ull));
        for (size_t b : order) {
            set_block_idx(cfg, ids[b]);
            smem_slot = b;
            if (hi > lo) memcpy((void *)lo, statics[b].data(), hi - lo);
            if (state[b] == 2) eyes_block_resume(b, dynamic_smem(), cfg.smem);
            else if (!pass) stats.blocks++, stats.threads += (unsigned long long)cfg.block.x * cfg.block.y * cfg.block.z;
            int r = coop_run(b, state[b] == 0, pass);
            if (hi > lo) memcpy(statics[b].data(), (const void *)lo, hi - lo);
            if (r == 0) { ok = 0; break; }
            if (r == 2) eyes_block_park(b);
            state[b] = r;
        }
        if (!ok) break;
        size_t ended = 0, waiting = 0, first_ended = 0, first_waiting = 0;
        for (size_t b = 0; b < nb; b++) {
            if (state[b] == 1 && !ended++) first_ended = b;
            if (state[b] == 2 && !waiting++) first_waiting = b;
        }
        if (!waiting) break;
        if (ended) {
            set_block_idx(cfg, ids[first_ended]);
            char where[300];
            snprintf(where, sizeof where, "%s", coop_where(first_waiting));
            block_fail(cudaErrorLaunchFailure, "grid.sync: this block ended while %zu of the %s %zu blocks wait "
                       "(block %zu: %s): every block must reach every grid.sync, or the grid deadlocks", waiting,
                       nb < nb_grid ? "dry run's" : "grid's", nb, ids[first_waiting], where);
            ok = 0;
            break;
        }
        eyes_grid_sync();
        coop_release();
    }
    coop_end();
    smem_slot = 0;
    return ok;
}

/* Every block of the grid once, in order (pass 0) or in a shuffled order (pass 1); 0 if the launch failed. */
static int run_grid(const launch_cfg &cfg, void (*body)(void *), void *ctx, int pass)
{
    set_launch(cfg, body, ctx, pass);
    blockDim = cfg.block, gridDim = cfg.grid;
    size_t nb = (size_t)cfg.grid.x * cfg.grid.y * cfg.grid.z;
    if (cfg.cooperative) {
        int ok = run_grid_coop(cfg, nb, pass);
        eyes_grid_end();
        return ok;
    }
    std::vector<size_t> order;
    if (boundary_blocks_only()) order = dry_blocks(cfg.grid); /* once each (emu_dry.cc) */
    else if (W.model || (pass && model_on())) order = model_blocks(cfg); /* emu_model.cc: all, or a sample */
    else
        for (size_t i = 0; i < nb; i++) order.push_back(i);
    if (pass) shuffle(order, 0x9E3779B97F4A7C15ull ^ nb);
    for (size_t b : order) {
        set_block_idx(cfg, b);
        if (!pass) stats.blocks++, stats.threads += (unsigned long long)cfg.block.x * cfg.block.y * cfg.block.z;
        if (!run_block(pass)) return eyes_grid_end(), 0;
    }
    eyes_grid_end();
    return 1;
}


static int config_ok(const launch_cfg &c)
{
    size_t threads = (size_t)c.block.x * c.block.y * c.block.z;
    const char *why = NULL;
    if (!c.grid.x || !c.grid.y || !c.grid.z || !threads) why = "a zero grid or block dimension";
    else if (c.block.x > 1024 || c.block.y > 1024 || c.block.z > 64 || threads > 1024) why = "block too large";
    else if (c.grid.x > 2147483647u || c.grid.y > 65535 || c.grid.z > 65535) why = "grid too large";
    else if (c.smem > max_dynamic_smem(c.kernel))
        why = c.smem > optin_dyn_smem() ? "more dynamic shared memory than a block may have on this device"
              : max_dynamic_smem(c.kernel) > DEFAULT_DYN_SMEM ? "more dynamic shared memory than the kernel's "
                                                                "cudaFuncSetAttribute opt-in"
                                                              : "more than 48 KiB of dynamic shared memory without "
                                                                "cudaFuncSetAttribute(kernel, cudaFuncAttribute"
                                                                "MaxDynamicSharedMemorySize, bytes) first";
    if (!why) return 1;
    fail(cudaErrorInvalidConfiguration, "kernel %s (launched at %s:%d): invalid configuration: %s (grid %u,%u,%u "
         "block %u,%u,%u, %zu bytes shared)", c.name, c.file, c.line, why, c.grid.x, c.grid.y, c.grid.z, c.block.x,
         c.block.y, c.block.z, c.smem);
    return 0;
}

/* cudaLaunchCooperativeKernel's documented precondition: the whole grid resident at once, i.e. at most
 * cudaOccupancyMaxActiveBlocksPerMultiprocessor x multiProcessorCount blocks (cudaErrorCooperativeLaunchTooLarge). */
static int coop_ok(const launch_cfg &c)
{
    if (!c.cooperative) return 1;
    int per_sm = 0, attr = 0;
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    cudaDeviceGetAttribute(&attr, cudaDevAttrCooperativeLaunch, 0);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, c.kernel, (int)(c.block.x * c.block.y * c.block.z), c.smem);
    size_t blocks = (size_t)c.grid.x * c.grid.y * c.grid.z, fit = (size_t)per_sm * p.multiProcessorCount;
    if (attr && blocks <= fit) return 1;
    fail(cudaErrorCooperativeLaunchTooLarge, "kernel %s (launched at %s:%d): cooperative launch of %zu blocks, but "
         "only %zu can be resident at once (%d per SM x %d SMs: cudaOccupancyMaxActiveBlocksPerMultiprocessor x "
         "multiProcessorCount)", c.name, c.file, c.line, blocks, fit, per_sm, p.multiProcessorCount);
    return 0;
}

/* A dry run: the boundary blocks once, on address-only memory; no snapshot, no red zones (guard pages instead). */
static void dry_launch(const launch_cfg &cfg, void (*body)(void *), void *ctx)
{
    if (dry() == 2 || (dry() == 3 && !model_window_on())) return; /* 2: the configuration only; 3: only the model's runs */
    smem_alloc(cfg.smem, cfg.cooperative ? (size_t)cfg.grid.x * cfg.grid.y * cfg.grid.z : 1);
    static sigjmp_buf back; /* a fault in the kernel comes back here (emu_dry.cc) */
    if (sigsetjmp(back, 1)) fail(cudaErrorIllegalAddress, "%s", dry_fault_message());
    else {
        dry_running(&cfg, &back);
        run_grid(cfg, body, ctx, 0);
    }
    dry_running(NULL, NULL);
}

struct region {
    const alloc_info *a;
    std::vector<unsigned char> before, first;
};

void launch(const launch_cfg &cfg, void (*body)(void *), void *ctx, void *const *ptrs, int nptrs)
{
    if (!config_ok(cfg) || !resources_ok(cfg) || !coop_ok(cfg)) return;
    stats.launches++;
    std::vector<region> regs;
    for (int i = 0; i < nptrs; i++) {
        if (!ptrs[i]) continue;
        const alloc_info *a = find_alloc(ptrs[i], 0);
        if (!a) {
            fail(cudaErrorIllegalAddress, "kernel %s (launched at %s:%d): pointer argument %p is not in any live "
                 "device allocation (a host pointer, or freed)", cfg.name, cfg.file, cfg.line, ptrs[i]);
            return;
        }
        int seen = 0;
        for (const region &r : regs) seen |= r.a == a;
        if (!seen) regs.push_back(region{a, {}, {}});
    }
    if (model_window_reuse(cfg)) return; /* a sampled model window has seen this configuration: predicted again */
    if (dry()) {
        dry_launch(cfg, body, ctx);
        return;
    }
    static int one_pass_env = -1;
    if (one_pass_env < 0) one_pass_env = getenv("EMU_ONE_PASS") && atoi(getenv("EMU_ONE_PASS"));
    int one_pass = one_pass_env || model_window_one_pass();
    for (region &r : regs)
        if (!one_pass) r.before.assign(r.a->base, r.a->base + r.a->bytes);
    float_atomics = 0;
    for (int pass = 0; pass < (one_pass ? 1 : 2); pass++) {
        smem_alloc(cfg.smem, cfg.cooperative ? (size_t)cfg.grid.x * cfg.grid.y * cfg.grid.z : 1);
        if (pass == 1)
            for (region &r : regs) {
                r.first.assign(r.a->base, r.a->base + r.a->bytes);
                memcpy(r.a->base, r.before.data(), r.a->bytes);
            }
        if (!run_grid(cfg, body, ctx, pass)) return;
        char msg[256];
        if (!redzones_intact(msg, sizeof msg)) {
            fail(cudaErrorIllegalAddress, "kernel %s (launched at %s:%d): out-of-bounds %s", cfg.name, cfg.file,
                 cfg.line, msg);
            return;
        }
    }
    for (region &r : regs) {
        if (one_pass) continue;
        size_t off = first_mismatch(r.first.data(), (const unsigned char *)r.a->base, r.a->bytes, float_atomics);
        if (off == (size_t)-1) continue;
        float x = 0.0f, y = 0.0f;
        memcpy(&x, &r.first[off], 4);
        memcpy(&y, r.a->base + off, 4);
        fail(cudaErrorLaunchFailure, "kernel %s (launched at %s:%d): the result depends on the order threads and "
             "blocks run in (a missing __syncthreads/__syncwarp, or a race): byte %zu of a %zu-byte allocation is "
             "%g (as float) with threads in order and %g with threads reversed and blocks shuffled", cfg.name,
             cfg.file, cfg.line, off, r.a->bytes, (double)x, (double)y);
        return;
    }
}

} /* namespace emu */
