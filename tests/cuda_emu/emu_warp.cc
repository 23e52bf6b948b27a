/* emu_warp.cc - TEST-ONLY: warp operations, computed once every lane of the mask has arrived, from the values
 * the lanes saved. CUDA's rules (Programming Guide, "Warp Shuffle Functions" and "Warp Vote Functions"):
 *   - the mask must include the calling lane, and every lane of the mask must execute the same operation
 *     with the same mask (here: before any of them continues);
 *   - width is a power of two <= 32; the warp splits into groups of width lanes;
 *   - __shfl_sync reads lane (srcLane mod width) of the caller's group; __shfl_up/down_sync return the
 *     caller's own value when lane -/+ delta leaves the group; __shfl_xor_sync may read earlier groups, and a
 *     later group gives the caller's own value;
 *   - reading a lane that is not in the mask is undefined: an error here.
 * nvcuda::wmma's load_matrix_sync, store_matrix_sync and mma_sync (include/mma.h) are warp operations too
 * (W_WMMA): the whole warp, the same arguments in every lane ("Warp Matrix Functions"). So are mma.sync and
 * ldmatrix (W_PTX, include/mma_ptx.h): .aligned, the whole warp executing the same instruction (PTX ISA). */
#include "emu_eyes.h"
#include "emu_sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

namespace emu {

const char *kind_name(int k)
{
    static const char *names[] = {"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync",
                                  "__ballot_sync", "__any_sync", "__all_sync", "__syncwarp", "nvcuda::wmma",
                                  "mma.sync/ldmatrix"};
    return k >= 0 && k < W_KINDS ? names[k] : "?";
}

/* "threads 0-31: waiting at __syncthreads f.cu:12; threads 32-63: exited": consecutive equal states merged */
void describe_states(const std::vector<fiber> &fibers, char *out, size_t cap)
{
    size_t len = 0, n = fibers.size();
    out[0] = 0;
    for (size_t i = 0; i < n && len + 1 < cap;) {
        size_t j = i + 1;
        const fiber &a = fibers[i];
        while (j < n && fibers[j].state == a.state && fibers[j].line == a.line && fibers[j].file == a.file &&
               (a.state != T_WARP || fibers[j].kind == a.kind))
            j++;
        char what[200];
        if (a.state == T_DONE) snprintf(what, sizeof what, "exited");
        else if (a.state == T_SYNC) snprintf(what, sizeof what, "waiting at __syncthreads %s:%d", a.file, a.line);
        else if (a.state == T_GRID) snprintf(what, sizeof what, "waiting at grid.sync %s:%d", a.file, a.line);
        else if (a.state == T_BARRIER)
            snprintf(what, sizeof what, "waiting at %s %s", hopper_token(a.token) == 1 ? "mbarrier.try_wait"
                     : hopper_token(a.token) == 2 ? "wgmma.wait_group" : "cuda::barrier", source_line(a.pc));
        else if (a.state == T_WARP)
            snprintf(what, sizeof what, "waiting at %s %s:%d (mask 0x%08x)", kind_name(a.kind), a.file, a.line, a.mask);
        else snprintf(what, sizeof what, "runnable");
        len += snprintf(out + len, cap - len, "%sthreads %zu-%zu: %s", i ? "; " : "", i, j - 1, what);
        i = j;
    }
}


static int source_lane(const fiber &f, int lane)
{
    int w = f.width, g0 = lane & ~(w - 1), d = f.arg;
    switch (f.kind) {
    case W_SHFL_IDX: return g0 + ((d % w) + w) % w;
    case W_SHFL_UP: return lane - d < g0 ? lane : lane - d;
    case W_SHFL_DOWN: return (lane - g0) + d >= w ? lane : lane + d;
    case W_SHFL_XOR: { int s = lane ^ d; return s >= g0 + w ? lane : s; }
    default: return lane;
    }
}

uint64_t wmma_seed(void)
{
    static uint64_t seed;
    static int drawn;
    if (!drawn) {
        const char *e = getenv("EMU_WMMA_SEED");
        seed = e && *e ? strtoull(e, NULL, 0) : (uint64_t)time(NULL) * 1000003u ^ (uint64_t)getpid() << 32;
        drawn = 1;
    }
    return seed;
}

static int env_is_one(const char *name)
{
    const char *e = getenv(name);
    return e && atoi(e) == 1;
}

int wmma_pairs(void)
{
    static int pairs = env_is_one("EMU_WMMA_PAIRS");
    return pairs;
}

int wmma_ptx(void)
{
    static int ptx = env_is_one("EMU_WMMA_PTX");
    return ptx;
}

/* A WMMA operation of warp w, every lane arrived: the same request in each lane, the Guide's preconditions
 * (mptr 256-bit aligned, ldm a multiple of 16 bytes), a tile inside its device allocation (shared memory is
 * not checked here), then the warp's computation. */
static int release_wmma(std::vector<fiber> &f, size_t w)
{
    warp_collective *lanes[32];
    for (int l = 0; l < 32; l++) lanes[l] = (warp_collective *)(uintptr_t)f[w * 32 + l].value;
    const warp_collective &a = *lanes[0];
    const fiber &f0 = f[w * 32];
    for (int l = 1; l < 32; l++) {
        const warp_collective &b = *lanes[l];
        if (f0.kind == W_PTX && b.run != a.run) {
            const fiber &fl = f[w * 32 + l];
            block_fail(cudaErrorIllegalInstruction, "%s at %s:%d: warp %zu lane %d executes %s at %s:%d: .aligned "
                       "needs the same instruction in every lane", a.name, f0.file, f0.line, w, l, b.name, fl.file,
                       fl.line);
            return -1;
        }
        if (b.run != a.run || b.mem != a.mem || b.ldm != a.ldm || b.layout != a.layout) {
            block_fail(cudaErrorIllegalInstruction, "%s at %s:%d: warp %zu lane %d passes (mptr %p, ldm %u, layout %d) "
                       "or other fragment types, lane 0 (mptr %p, ldm %u, layout %d): every lane must pass the same",
                       b.name, f0.file, f0.line, w, l, b.mem, b.ldm, b.layout, a.mem, a.ldm, a.layout);
            return -1;
        }
    }
    if (a.mem && (uintptr_t)a.mem % 32) {
        block_fail(cudaErrorMisalignedAddress, "%s at %s:%d: warp %zu: mptr %p is not 256-bit (32-byte) aligned",
                   a.name, f0.file, f0.line, w, a.mem);
        return -1;
    }
    if (a.mem && a.ldm * a.elem % 16) {
        block_fail(cudaErrorMisalignedAddress, "%s at %s:%d: warp %zu: ldm %u is not a multiple of %zu (%zu-byte "
                   "elements: rows or columns must start 16 bytes apart)", a.name, f0.file, f0.line, w, a.ldm,
                   16 / a.elem, a.elem);
        return -1;
    }
    if (a.mem && find_alloc(a.mem, 1) && !find_alloc(a.mem, a.extent)) {
        block_fail(cudaErrorIllegalAddress, "%s at %s:%d: warp %zu %s a tile of %zu bytes (ldm %u) at %p, past the end "
                   "of its device allocation", a.name, f0.file, f0.line, w, a.writes ? "writes" : "reads", a.extent,
                   a.ldm, a.mem);
        return -1;
    }
    if (a.check && a.check(lanes, f0.file, f0.line, w) < 0) return -1;
    eyes_collective_begin((unsigned)(w * 32), site_pc(f0.file, f0.line));
    a.run(lanes);
    eyes_collective_end();
    return 1;
}

/* Checks that warp w's lanes of one mask have all arrived at the same operation; computes and releases them. */
static int release(std::vector<fiber> &f, size_t w, int lane0)
{
    size_t n = f.size();
    const fiber &a = f[w * 32 + lane0];
    unsigned m = a.mask;
    if (!(m >> lane0 & 1u)) {
        block_fail(cudaErrorIllegalInstruction, "%s at %s:%d: warp %zu lane %d calls it with mask 0x%08x, which "
                   "does not include the calling lane", kind_name(a.kind), a.file, a.line, w, lane0, m);
        return -1;
    }
    for (int l = 0; l < 32; l++) {
        if (!(m >> l & 1u)) continue;
        size_t t = w * 32 + l;
        if (t >= n) {
            block_fail(cudaErrorIllegalInstruction, "%s at %s:%d: mask 0x%08x names lane %d of warp %zu, which does "
                       "not exist (the block has %zu threads)", kind_name(a.kind), a.file, a.line, m, l, w, n);
            return -1;
        }
        if (f[t].state == T_DONE) {
            block_fail(cudaErrorIllegalInstruction, "%s at %s:%d: lane %d of mask 0x%08x (warp %zu) has exited",
                       kind_name(a.kind), a.file, a.line, l, m, w);
            return -1;
        }
        if (f[t].state != T_WARP) return 0; /* still running, or at a barrier: decided later */
        if (f[t].kind != a.kind || f[t].mask != m || f[t].width != a.width) {
            block_fail(cudaErrorIllegalInstruction, "warp %zu: lane %d waits at %s %s:%d (mask 0x%08x) while lane %d "
                       "waits at %s %s:%d (mask 0x%08x)", w, lane0, kind_name(a.kind), a.file, a.line, m, l,
                       kind_name(f[t].kind), f[t].file, f[t].line, f[t].mask);
            return -1;
        }
    }
    int wd = a.width;
    if (wd < 1 || wd > 32 || (wd & (wd - 1))) {
        block_fail(cudaErrorIllegalInstruction, "%s at %s:%d: width %d is not a power of two in [1, 32]",
                   kind_name(a.kind), a.file, a.line, wd);
        return -1;
    }
    if (a.kind == W_WMMA || a.kind == W_PTX) {
        if (m != 0xffffffffu) {
            block_fail(cudaErrorIllegalInstruction, "%s at %s:%d: mask 0x%08x, not the whole warp", kind_name(a.kind),
                       a.file, a.line, m);
            return -1;
        }
        if (release_wmma(f, w) < 0) return -1;
        for (int l = 0; l < 32; l++) f[w * 32 + l].state = T_READY;
        return 1;
    }
    unsigned ballot = 0;
    for (int l = 0; l < 32; l++)
        if (m >> l & 1u && f[w * 32 + l].value) ballot |= 1u << l;
    for (int l = 0; l < 32; l++) {
        if (!(m >> l & 1u)) continue;
        fiber &me = f[w * 32 + l];
        int src = source_lane(me, l);
        if (src != l && !(m >> src & 1u)) {
            block_fail(cudaErrorIllegalInstruction, "%s at %s:%d: lane %d of warp %zu reads lane %d, which is not in "
                       "mask 0x%08x (undefined result)", kind_name(a.kind), me.file, me.line, l, w, src, m);
            return -1;
        }
        switch (a.kind) {
        case W_BALLOT: me.result = ballot; break;
        case W_ANY: me.result = ballot != 0; break;
        case W_ALL: me.result = ballot == m; break;
        case W_SYNCWARP: me.result = 0; break;
        default: me.result = f[w * 32 + src].value;
        }
    }
    for (int l = 0; l < 32; l++)
        if (m >> l & 1u) f[w * 32 + l].state = T_READY;
    eyes_warp_sync(w); /* the lanes' accesses before and after are ordered (racecheck) */
    return 1;
}

int resolve_warps(std::vector<fiber> &f)
{
    int any = 0;
    for (size_t t = 0; t < f.size(); t++) {
        if (f[t].state != T_WARP) continue;
        int r = release(f, t / 32, (int)(t % 32));
        if (r < 0) return -1;
        any |= r;
    }
    return any;
}

} /* namespace emu */
