/* emu_kernel.h - TEST-ONLY: what a kernel sees under the CPU emulator (included by the cuda_runtime.h shim).
 *
 * threadIdx/blockIdx/blockDim/gridDim are globals the scheduler sets before it resumes a thread (one thread
 * runs at a time). __syncthreads and the warp operations park the calling fiber in the scheduler
 * (emu_sched.cc), which releases them once every thread that must arrive has arrived, and computes every
 * warp result from the values the lanes saved. Errors (a divergent barrier, a lane outside the mask) end the
 * launch with a message that cudaGetLastError() reports. Atomics are plain read-modify-writes. */
#ifndef CUDA_EMU_KERNEL_H
#define CUDA_EMU_KERNEL_H

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <type_traits>

extern uint3 threadIdx, blockIdx;
extern dim3 blockDim, gridDim;
static const int warpSize = 32;

namespace emu {

enum warp_kind { W_SHFL_IDX, W_SHFL_UP, W_SHFL_DOWN, W_SHFL_XOR, W_BALLOT, W_ANY, W_ALL, W_SYNCWARP, W_WMMA, W_PTX, W_KINDS };

/* A W_WMMA lane's value points at its request (mma.h); a W_PTX lane's at its mma.sync or ldmatrix request
 * (mma_ptx.h). Every lane of the warp must ask the same: same run, mem, ldm, layout. run computes the warp's
 * operation from the 32 requests (lane order) once the preconditions hold (emu_warp.cc); check, when set, tests
 * the operation's own preconditions first and fails the launch (returning -1) when one does not hold. mem: a
 * load's or store's tile, elem its element size, extent its bytes from mem. */
struct warp_collective {
    void (*run)(warp_collective *const lanes[32]);
    const char *name;
    const void *mem;
    size_t elem, extent;
    unsigned ldm;
    int layout, writes;
    int (*check)(warp_collective *const lanes[32], const char *file, int line, size_t warp);
};

void syncthreads(const char *file, int line);
/* cooperative_groups::this_grid().sync(): parks the thread until every thread of the grid has arrived */
void grid_sync(const char *file, int line);
/* Parks the calling lane until every lane of mask has arrived at the same operation; returns its result. */
uint64_t warp_op(warp_kind k, unsigned mask, uint64_t value, int arg, int width, const char *file, int line);
/* A warp-collective operation's run (wmma load/store) moves every lane's data from one fiber: it names the lane
 * whose elements follow, so the eyes count them as that lane's accesses (warp requests, races) */
void collective_lane(int lane);

template <class T> inline T shfl(warp_kind k, const char *file, int line, unsigned mask, T var, int arg, int width)
{
    static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value, "shuffles move 4- or 8-byte values");
    uint64_t u = 0;
    memcpy(&u, &var, sizeof(T));
    u = warp_op(k, mask, u, arg, width, file, line);
    T r;
    memcpy(&r, &u, sizeof(T));
    return r;
}
template <class T> inline T shfl_idx_at(const char *f, int l, unsigned m, T v, int src, int w = 32)
{
    return shfl(W_SHFL_IDX, f, l, m, v, src, w);
}
template <class T> inline T shfl_up_at(const char *f, int l, unsigned m, T v, unsigned d, int w = 32)
{
    return shfl(W_SHFL_UP, f, l, m, v, (int)d, w);
}
template <class T> inline T shfl_down_at(const char *f, int l, unsigned m, T v, unsigned d, int w = 32)
{
    return shfl(W_SHFL_DOWN, f, l, m, v, (int)d, w);
}
template <class T> inline T shfl_xor_at(const char *f, int l, unsigned m, T v, int lane_mask, int w = 32)
{
    return shfl(W_SHFL_XOR, f, l, m, v, lane_mask, w);
}
inline unsigned vote_at(warp_kind k, const char *f, int l, unsigned m, int pred)
{
    return (unsigned)warp_op(k, m, pred != 0, 0, 32, f, l);
}
/* __syncwarp() and __syncwarp(mask): the call site first, then the optional mask, without variadic tricks */
struct syncwarp_site {
    const char *f;
    int l;
    void operator()(unsigned m = 0xffffffffu) const { (void)warp_op(W_SYNCWARP, m, 0, 0, 32, f, l); }
};

} /* namespace emu */

#define __syncthreads() ::emu::syncthreads(__FILE__, __LINE__)
#define __syncwarp ::emu::syncwarp_site{__FILE__, __LINE__}
#define __shfl_sync(...) ::emu::shfl_idx_at(__FILE__, __LINE__, __VA_ARGS__)
#define __shfl_up_sync(...) ::emu::shfl_up_at(__FILE__, __LINE__, __VA_ARGS__)
#define __shfl_down_sync(...) ::emu::shfl_down_at(__FILE__, __LINE__, __VA_ARGS__)
#define __shfl_xor_sync(...) ::emu::shfl_xor_at(__FILE__, __LINE__, __VA_ARGS__)
#define __ballot_sync(m, p) ::emu::vote_at(::emu::W_BALLOT, __FILE__, __LINE__, (m), (p))
#define __any_sync(m, p) ((int)::emu::vote_at(::emu::W_ANY, __FILE__, __LINE__, (m), (p)))
#define __all_sync(m, p) ((int)::emu::vote_at(::emu::W_ALL, __FILE__, __LINE__, (m), (p)))

/* The reinterpreting casts of CUDA's device math API (bits unchanged) */
inline float __uint_as_float(unsigned int u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}
inline unsigned int __float_as_uint(float f)
{
    unsigned int u;
    memcpy(&u, &f, 4);
    return u;
}

/* Blind spot (README): no memory model. One thread runs at a time, so every write is visible at once. */
inline void __threadfence(void) {}
inline void __threadfence_block(void) {}

/* Atomics: plain operations, returning the old value (no other thread runs in between). A floating-point
 * atomicAdd/atomicSub marks the launch: its two passes sum in different orders, so emu_launch.cc compares
 * their results with a tolerance instead of bytewise. Each one reports itself to the access hooks as an
 * atomic (emu_access.cc) with its call site, and is itself not instrumented (no_sanitize_thread): otherwise
 * its plain load and store would look like a racing read and write. noinline keeps the call site exact. */
namespace emu {
extern int float_atomics; /* set by a float atomic during the current launch */
}
extern "C" void emu_atomic_access(void *p, unsigned n, void *pc);
#define EMU_ATOMIC __attribute__((noinline, no_sanitize_thread))
#define EMU_ATOMIC_NOTE(p) emu_atomic_access((void *)(p), (unsigned)sizeof *(p), __builtin_return_address(0))
template <class T> EMU_ATOMIC T atomicAdd(T *p, T v)
{
    EMU_ATOMIC_NOTE(p);
    if (std::is_floating_point<T>::value) emu::float_atomics = 1;
    T o = *p;
    *p = o + v;
    return o;
}
template <class T> EMU_ATOMIC T atomicSub(T *p, T v)
{
    EMU_ATOMIC_NOTE(p);
    if (std::is_floating_point<T>::value) emu::float_atomics = 1;
    T o = *p;
    *p = o - v;
    return o;
}
template <class T> EMU_ATOMIC T atomicExch(T *p, T v) { EMU_ATOMIC_NOTE(p); T o = *p; *p = v; return o; }
template <class T> EMU_ATOMIC T atomicMax(T *p, T v) { EMU_ATOMIC_NOTE(p); T o = *p; *p = o < v ? v : o; return o; }
template <class T> EMU_ATOMIC T atomicMin(T *p, T v) { EMU_ATOMIC_NOTE(p); T o = *p; *p = v < o ? v : o; return o; }
template <class T> EMU_ATOMIC T atomicCAS(T *p, T cmp, T v) { EMU_ATOMIC_NOTE(p); T o = *p; if (o == cmp) *p = v; return o; }

#endif
