/* emu_hazard.cc - TEST-ONLY: the hazard and initcheck detectors, fed with every watched access (emu_access.cc).
 *
 * Shared memory (racecheck, as compute-sanitizer's): per byte, the last writer and up to two readers of the
 * current phase -- a phase runs from one __syncthreads (or the block's start) to the next. Two accesses to one
 * byte in the same phase by different threads, at least one a write and neither atomic, are a hazard, unless
 * both threads are lanes of one warp and a warp operation (__syncwarp, a shuffle, a vote) of that warp came in
 * between. This sees races whose two outcomes coincide, which the two-pass comparison cannot.
 *
 * Global memory, within one launch: per byte, the block that last wrote it and a block that read it. A byte
 * written by one block and read or written by another is a hazard whatever order the blocks run in (no grid
 * synchronisation exists between them), unless the access is atomic. compute-sanitizer has no such check.
 *
 * initcheck: a byte of a device allocation read by a kernel before a copy, memset, cuBLAS output or kernel
 * wrote it (dev_alloc's NaN poison fill does not count: emu_mark_uninit), and a byte of shared memory read
 * before any thread of the block wrote it. Atomics read too: an atomicAdd on unwritten memory is reported.
 *
 * Only the first report of a launch is made: it fails the launch (block_fail -> cudaGetLastError). */
#include "emu_eyes.h"
#include "emu_model.h"
#include "emu_sched.h"
#include "include/emu_api.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

namespace emu {

/* 12 bytes per byte of device memory (the initcheck bit included), read on every watched access and written only when something changes;
 * the threads and source lines of the last writer and reader live in a side array (global_site) written only
 * when the owner changes, so blocks re-reading what was read before write nothing. */
struct global_cell {
    uint32_t stamp;          /* INITIALISED | W.launch_serial when the cell was last touched; older: empty */
    uint32_t wblock, rblock; /* linear block + 1 of the last writer / a reader; 0: none. rblock's top bit: a
                                block other than rblock read it too */
};
struct global_site {
    void *wpc, *rpc;
    uint16_t wtid, rtid;
};
static const uint32_t MORE_READERS = 0x80000000u, INITIALISED = 0x80000000u;

struct shared_who {
    uint32_t phase; /* W.phase of the access; another phase: ordered by a barrier */
    uint16_t wsync; /* the warp's count of warp operations at the access (mod 2^16) */
    uint16_t tid;
};

struct shared_cell {
    uint32_t written; /* W.block_serial of the last write: "written in this block" */
    shared_who w, r[2];
};

struct shared_site {
    void *w, *r[2];
};

static std::vector<shared_cell> scells[SM_REGIONS];
static std::vector<shared_site> ssites[SM_REGIONS];
static std::vector<uint16_t> warp_syncs; /* per warp of the running block */
static int reported;                     /* one report per launch */

/* ---- naming ------------------------------------------------------------------------------------------- */

static void block_name(uint32_t linear, char *out, size_t cap)
{
    snprintf(out, cap, "(%u,%u,%u)", linear % gridDim.x, linear / gridDim.x % gridDim.y,
             linear / (gridDim.x * gridDim.y));
}

static const char *kind_word(int kind) { return kind == ACC_WRITE ? "writes" : kind == ACC_READ ? "reads" : "atomically updates"; }

static void shared_name(int region, uintptr_t addr, size_t off, char *out, size_t cap)
{
    char sym[160] = "";
    if (region != SM_DYNAMIC) static_symbol(addr, sym, sizeof sym);
    if (sym[0]) snprintf(out, cap, "__shared__ %s", sym);
    else snprintf(out, cap, "%s shared memory +%zu", region != SM_DYNAMIC ? "static" : "dynamic", off);
}

static void report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void report(const char *fmt, ...)
{
    if (reported) return;
    reported = 1;
    char buf[1500];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    block_fail(cudaErrorLaunchFailure, "%s", buf);
}

/* ---- events ------------------------------------------------------------------------------------------- */

void eyes_block_begin(size_t nthreads)
{
    W.block_serial++, W.phase++;
    W.block_linear = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    warp_syncs.assign((nthreads + 31) / 32 + 1, 0);
    eyes_dynamic_smem(dynamic_smem(), W.cfg ? W.cfg->smem : 0);
}

/* A cooperative launch's blocks that wait at a grid.sync: their shared-memory shadows, swapped out and in */
struct block_shadow {
    std::vector<shared_cell> cells[SM_REGIONS];
    std::vector<shared_site> sites[SM_REGIONS];
    std::vector<uint16_t> warp_syncs;
    uint32_t serial;
};
static std::vector<block_shadow> shadows;

void eyes_coop_begin(size_t nblocks) { shadows.assign(nblocks, block_shadow()); }

static void swap_shadow(block_shadow &b)
{
    for (int r = 0; r < SM_REGIONS; r++) scells[r].swap(b.cells[r]), ssites[r].swap(b.sites[r]);
    warp_syncs.swap(b.warp_syncs);
}

void eyes_block_park(size_t slot)
{
    if (W.model) model_block_park();
    swap_shadow(shadows[slot]);
    shadows[slot].serial = W.block_serial;
}

void eyes_block_resume(size_t slot, void *dyn, size_t bytes)
{
    swap_shadow(shadows[slot]);
    W.block_serial = shadows[slot].serial, W.phase++;
    W.block_linear = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    eyes_dynamic_smem(dyn, bytes);
}

/* Global cells stamped with an older serial read as empty: what blocks did before the grid.sync is ordered */
void eyes_grid_sync(void) { W.launch_serial++, W.phase++; }

void eyes_barrier(void)
{
    W.phase++;
    if (W.model) model_barrier();
}
void eyes_warp_sync(size_t warp)
{
    if (warp < warp_syncs.size()) warp_syncs[warp]++;
}

void eyes_alloc(alloc_info &a)
{
    a.cells = NULL, a.sites = NULL;
#if !defined(__SANITIZE_ADDRESS__) /* not instrumented: nothing to track */
    a.cells = (global_cell *)calloc(a.bytes ? a.bytes : 1, sizeof(global_cell)); /* pages committed when used */
    a.sites = (global_site *)calloc(a.bytes ? a.bytes : 1, sizeof(global_site));
    if (!a.cells || !a.sites) { perror("cuda-emu: hazard shadow"); abort(); }
#endif
}

void eyes_free(alloc_info &a)
{
    free(a.cells);
    free(a.sites);
    a.cells = NULL, a.sites = NULL;
}

void set_initialised(const void *p, size_t bytes, int on)
{
    const alloc_info *a = find_alloc(p, bytes);
    if (!a || !a->cells) return;
    global_cell *c = a->cells + ((const char *)p - a->base);
    for (size_t i = 0; i < bytes; i++) c[i].stamp = on ? c[i].stamp | INITIALISED : c[i].stamp & ~INITIALISED;
}

void eyes_host_wrote(const void *p, size_t bytes) { set_initialised(p, bytes, 1); }

void hazard_new_launch(void) { reported = 0; }

/* ---- shared memory -------------------------------------------------------------------------------------- */

/* Was `who` another thread's access in this phase, not ordered by a warp operation since? */
static int unordered(const shared_who &who, unsigned tid)
{
    if (who.phase != W.phase || who.tid == tid) return 0;
    size_t warp = tid / 32;
    return who.tid / 32 != warp || warp_syncs[warp] == who.wsync;
}

static void shared_race(const access &a, int region, size_t off, const shared_who &other, void *other_pc,
                        const char *what)
{
    char where[200], me[48], them[48];
    shared_name(region, a.addr, off, where, sizeof where);
    thread_name(a.tid, me, sizeof me);
    thread_name(other.tid, them, sizeof them);
    report("shared-memory race (racecheck): thread %s %s %u bytes of %s at %s; thread %s %s it at %s, with no "
           "__syncthreads between them%s", me, kind_word(a.kind), a.size, where, source_line(a.pc), them, what,
           source_line(other_pc), other.tid / 32 == a.tid / 32 ? " and no __syncwarp (same warp)" : "");
}

static void shared_uninit(const access &a, int region, size_t off)
{
    char where[200], me[48];
    shared_name(region, a.addr, off, where, sizeof where);
    thread_name(a.tid, me, sizeof me);
    void *copy = async_pending_site(a.addr);
    if (copy)
        report("shared memory read before its cp.async landed: thread %s reads %u bytes of %s at %s, which the "
               "asynchronous copy issued at %s has not written yet (no wait for its batch or barrier phase before "
               "this read, or no __syncthreads after that wait)", me, a.size, where, source_line(a.pc),
               source_line(copy));
    else
        report("uninitialised shared memory read (initcheck): thread %s reads %u bytes of %s at %s, which no "
               "thread of this block wrote", me, a.size, where, source_line(a.pc));
}

void hazard_shared_unwritten(int region, size_t off, size_t bytes)
{
    std::vector<shared_cell> &cells = scells[region];
    for (size_t i = off; i < off + bytes && i < cells.size(); i++) cells[i].written = 0;
}

/* One byte of a shared access; 0 once something was reported. */
static int shared_byte(shared_cell &c, shared_site &site, const access &a, int region, size_t off)
{
    shared_who me{W.phase, warp_syncs[a.tid / 32], (uint16_t)a.tid};
    if (a.kind != ACC_WRITE && c.written != W.block_serial) return shared_uninit(a, region, off), 0;
    if (a.kind == ACC_ATOMIC) return c.written = W.block_serial, 1;
    if (unordered(c.w, a.tid)) return shared_race(a, region, off, c.w, site.w, "wrote"), 0;
    if (a.kind == ACC_READ) {
        int slot = c.r[0].phase != W.phase || c.r[0].tid == a.tid ? 0 : 1;
        if (c.r[slot].phase != me.phase || c.r[slot].tid != me.tid || c.r[slot].wsync != me.wsync)
            c.r[slot] = me, site.r[slot] = a.pc;
        return 1;
    }
    for (int s = 0; s < 2; s++)
        if (unordered(c.r[s], a.tid)) return shared_race(a, region, off, c.r[s], site.r[s], "read"), 0;
    c.w = me, site.w = a.pc, c.written = W.block_serial;
    return 1;
}

void hazard_shared(const access &a, int region, size_t off, size_t region_bytes)
{
    std::vector<shared_cell> &cells = scells[region];
    if (cells.size() < region_bytes) cells.resize(region_bytes, shared_cell()), ssites[region].resize(region_bytes);
    size_t end = off + a.size < region_bytes ? off + a.size : region_bytes;
    for (size_t i = off; i < end; i++)
        if (!shared_byte(cells[i], ssites[region][i], a, region, off)) return;
}

/* ---- global memory -------------------------------------------------------------------------------------- */

/* other_block: linear + 1 of the other party, or 0 when only "another block read it" is known */
static void global_hazard(const access &a, const alloc_info *al, size_t off, uint32_t other_block, unsigned other_tid,
                          void *other_pc, const char *what, int more)
{
    char name[200], me[48], blk[48], other[200];
    alloc_name(al, name, sizeof name);
    thread_name(a.tid, me, sizeof me);
    block_name(W.block_linear, blk, sizeof blk);
    if (other_block) {
        char them[48], oblk[48];
        thread_name(other_tid, them, sizeof them);
        block_name(other_block - 1, oblk, sizeof oblk);
        snprintf(other, sizeof other, "thread %s of block %s %s it at %s", them, oblk, what, source_line(other_pc));
    } else {
        snprintf(other, sizeof other, "another block read it too (this block's read was at %s)", source_line(other_pc));
    }
    report("global-memory hazard between blocks: thread %s of block %s %s %u bytes at byte %zu of %s at %s; %s in the "
           "same launch%s, not atomically: the result depends on which block runs first", me, blk, kind_word(a.kind),
           a.size, off, name, source_line(a.pc), other, more ? " (and other blocks read it too)" : "");
}

static void global_uninit(const access &a, const alloc_info *al, size_t off)
{
    char name[200], me[48], blk[48];
    alloc_name(al, name, sizeof name);
    thread_name(a.tid, me, sizeof me);
    block_name(W.block_linear, blk, sizeof blk);
    report("uninitialised device memory read (initcheck): thread %s of block %s %s %u bytes at byte %zu of %s at "
           "%s: no cudaMemcpy, cudaMemset, cuBLAS call or kernel wrote them since the allocation (a NaN poison fill "
           "does not count)", me, blk, a.kind == ACC_ATOMIC ? "atomically updates" : "reads", a.size, off, name,
           source_line(a.pc));
}

/* One byte of a plain access by this block; 0 once a hazard was reported. */
static int global_byte(global_cell &c, global_site &site, const access &a, const alloc_info *al, size_t off)
{
    uint32_t me = W.block_linear + 1, reader = c.rblock & ~MORE_READERS, more = c.rblock & MORE_READERS;
    if ((c.stamp & ~INITIALISED) != W.launch_serial)
        c = global_cell{(c.stamp & INITIALISED) | W.launch_serial, 0, 0}, reader = more = 0;
    if (c.wblock && c.wblock != me) return global_hazard(a, al, off, c.wblock, site.wtid, site.wpc, "wrote", 0), 0;
    if (a.kind == ACC_READ) {
        if (reader == me || more) return 1; /* nothing new: this block read it already, or two blocks did */
        c.rblock = me | (reader ? MORE_READERS : 0), site.rtid = (uint16_t)a.tid, site.rpc = a.pc;
        return 1;
    }
    if (reader && (reader != me || more))
        return global_hazard(a, al, off, reader != me ? reader : 0, site.rtid, site.rpc, "read", reader != me && more), 0;
    if (c.wblock != me) c.wblock = me, site.wtid = (uint16_t)a.tid, site.wpc = a.pc;
    return 1;
}

void hazard_global(const access &a, const alloc_info *al)
{
    size_t off = a.addr - (uintptr_t)al->base;
    global_cell *c = al->cells + off;
    if (a.kind != ACC_WRITE)
        for (unsigned i = 0; i < a.size; i++)
            if (!(c[i].stamp & INITIALISED)) return global_uninit(a, al, off);
    for (unsigned i = 0; i < a.size; i++) {
        if (a.kind != ACC_READ) c[i].stamp |= INITIALISED;
        if (a.kind != ACC_ATOMIC && !global_byte(c[i], al->sites[off + i], a, al, off)) return;
    }
}

} /* namespace emu */

extern "C" void emu_mark_uninit(const void *p, size_t bytes) { emu::set_initialised(p, bytes, 0); }
