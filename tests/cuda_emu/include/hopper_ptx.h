/* hopper_ptx.h - TEST-ONLY shim: kernels/runtime/ptx/hopper_ptx.h (mbarrier, fence.proxy.async, the TMA's 2-D
 * tiled load, wgmma, setmaxnreg) on the CPU emulator. A kernel's `#include <hopper_ptx.h>` finds this file first
 * in the emulation build, as <mma_ptx.h> finds include/mma_ptx.h; nvcc finds the product's. The functions and
 * their signatures are the product's; each trailing file/line argument is this file's own, defaulted to the call
 * site for messages. The product header's top comment is the semantics; emu_hopper.cc executes it and lists
 * what it checks. Here every target is sm_90a: HOPPER_PTX_SM90A is 1. */
#ifndef CUDA_EMU_HOPPER_PTX_H
#define CUDA_EMU_HOPPER_PTX_H

#include <cuda.h>
#include <stdint.h>

#include "emu_hopper.h"
#include "emu_kernel.h"

#define HOPPER_PTX_SM90A 1
static const int emu_hopper_linked __attribute__((unused)) = emu::hopper::linked();
#define EMU_PTX_SITE const char *file = __builtin_FILE(), int line = __builtin_LINE()

inline void mbarrier_init(uint64_t *bar, uint32_t count, EMU_PTX_SITE)
{
    emu::hopper::mbar_init(bar, count, file, line);
}

inline void mbarrier_arrive(uint64_t *bar, EMU_PTX_SITE) { emu::hopper::mbar_arrive(bar, 0, 0, file, line); }

inline void mbarrier_arrive_expect_tx(uint64_t *bar, uint32_t bytes, EMU_PTX_SITE)
{
    emu::hopper::mbar_arrive(bar, bytes, 1, file, line);
}

inline bool mbarrier_try_wait_parity(uint64_t *bar, uint32_t parity, EMU_PTX_SITE)
{
    return emu::hopper::mbar_try_wait(bar, parity, file, line) != 0;
}

inline void mbarrier_wait_parity(uint64_t *bar, uint32_t parity, EMU_PTX_SITE)
{
    while (!mbarrier_try_wait_parity(bar, parity, file, line)) {
    }
}

inline void fence_proxy_async(EMU_PTX_SITE) { emu::hopper::fence_proxy_async(file, line); }

inline void tma_load_2d(void *dst, const CUtensorMap *map, int c0, int c1, uint64_t *bar, EMU_PTX_SITE)
{
    emu::hopper::tma_load_2d(dst, map, c0, c1, bar, file, line);
}

enum wgmma_swizzle {
    WGMMA_SWIZZLE_NONE = 0,
    WGMMA_SWIZZLE_128B = 1,
    WGMMA_SWIZZLE_64B = 2,
    WGMMA_SWIZZLE_32B = 3
};

/* the product's encoder, the shared address being the emulator's window address (emu_hopper.h) */
inline uint64_t wgmma_desc(const void *tile, uint32_t lbo_bytes, uint32_t sbo_bytes, int swizzle)
{
    emu::hopper::desc_tile(tile);
    uint64_t addr = (emu::hopper::window(tile) & 0x3ffffu) >> 4;
    return addr | (uint64_t)(lbo_bytes >> 4 & 0x3fffu) << 16 | (uint64_t)(sbo_bytes >> 4 & 0x3fffu) << 32 |
           (uint64_t)(swizzle & 3) << 62;
}

inline void wgmma_fence(EMU_PTX_SITE) { emu::hopper::wgmma_fence(file, line); }
inline void wgmma_commit(EMU_PTX_SITE) { emu::hopper::wgmma_commit(file, line); }
template <int N> inline void wgmma_wait(EMU_PTX_SITE)
{
    static_assert(N >= 0 && N <= 7, "wgmma.wait_group takes an immediate in [0, 7]");
    emu::hopper::wgmma_wait(N, file, line);
}

template <int N> inline void setmaxnreg_inc(EMU_PTX_SITE)
{
    static_assert(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg takes a multiple of 8 in [24, 256]");
    emu::hopper::setmaxnreg(1, N, file, line);
}

template <int N> inline void setmaxnreg_dec(EMU_PTX_SITE)
{
    static_assert(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg takes a multiple of 8 in [24, 256]");
    emu::hopper::setmaxnreg(0, N, file, line);
}

inline void wgmma_bf16_m64n64k16(float (&d)[32], uint64_t a, uint64_t b, int scale_d, EMU_PTX_SITE)
{
    emu::hopper::wgmma(emu::hopper::WG_BF16, 64, d, a, b, scale_d, 0, "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16", file, line);
}

inline void wgmma_bf16_m64n128k16(float (&d)[64], uint64_t a, uint64_t b, int scale_d, EMU_PTX_SITE)
{
    emu::hopper::wgmma(emu::hopper::WG_BF16, 128, d, a, b, scale_d, 0, "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16", file, line);
}

inline void wgmma_bf16_m64n256k16(float (&d)[128], uint64_t a, uint64_t b, int scale_d, EMU_PTX_SITE)
{
    emu::hopper::wgmma(emu::hopper::WG_BF16, 256, d, a, b, scale_d, 0, "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16", file, line);
}

inline void wgmma_f16_m64n64k16(float (&d)[32], uint64_t a, uint64_t b, int scale_d, EMU_PTX_SITE)
{
    emu::hopper::wgmma(emu::hopper::WG_F16, 64, d, a, b, scale_d, 0, "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16", file, line);
}

inline void wgmma_f16_m64n128k16(float (&d)[64], uint64_t a, uint64_t b, int scale_d, EMU_PTX_SITE)
{
    emu::hopper::wgmma(emu::hopper::WG_F16, 128, d, a, b, scale_d, 0, "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16", file, line);
}

inline void wgmma_f16_m64n256k16(float (&d)[128], uint64_t a, uint64_t b, int scale_d, EMU_PTX_SITE)
{
    emu::hopper::wgmma(emu::hopper::WG_F16, 256, d, a, b, scale_d, 0, "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16", file, line);
}

inline void wgmma_tf32_m64n64k8(float (&d)[32], uint64_t a, uint64_t b, int scale_d, EMU_PTX_SITE)
{
    emu::hopper::wgmma(emu::hopper::WG_TF32, 64, d, a, b, scale_d, 0, "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32", file, line);
}

inline void wgmma_tf32_m64n128k8(float (&d)[64], uint64_t a, uint64_t b, int scale_d, EMU_PTX_SITE)
{
    emu::hopper::wgmma(emu::hopper::WG_TF32, 128, d, a, b, scale_d, 0, "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32", file, line);
}

inline void wgmma_tf32_m64n256k8(float (&d)[128], uint64_t a, uint64_t b, int scale_d, EMU_PTX_SITE)
{
    emu::hopper::wgmma(emu::hopper::WG_TF32, 256, d, a, b, scale_d, 0, "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32", file, line);
}
/* imm-trans-a (bit 0) and imm-trans-b (bit 1): the MN-major operands */
template <int TRANS_A, int TRANS_B>
inline void wgmma_bf16_m64n64k16_t(float (&d)[32], uint64_t a, uint64_t b, int scale_d, EMU_PTX_SITE)
{
    static_assert((TRANS_A == 0 || TRANS_A == 1) && (TRANS_B == 0 || TRANS_B == 1), "imm-trans is 0 or 1");
    emu::hopper::wgmma(emu::hopper::WG_BF16, 64, d, a, b, scale_d, TRANS_A | TRANS_B << 1,
                       "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16", file, line);
}

template <int TRANS_A, int TRANS_B>
inline void wgmma_bf16_m64n128k16_t(float (&d)[64], uint64_t a, uint64_t b, int scale_d, EMU_PTX_SITE)
{
    static_assert((TRANS_A == 0 || TRANS_A == 1) && (TRANS_B == 0 || TRANS_B == 1), "imm-trans is 0 or 1");
    emu::hopper::wgmma(emu::hopper::WG_BF16, 128, d, a, b, scale_d, TRANS_A | TRANS_B << 1,
                       "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16", file, line);
}

template <int TRANS_A, int TRANS_B>
inline void wgmma_bf16_m64n256k16_t(float (&d)[128], uint64_t a, uint64_t b, int scale_d, EMU_PTX_SITE)
{
    static_assert((TRANS_A == 0 || TRANS_A == 1) && (TRANS_B == 0 || TRANS_B == 1), "imm-trans is 0 or 1");
    emu::hopper::wgmma(emu::hopper::WG_BF16, 256, d, a, b, scale_d, TRANS_A | TRANS_B << 1,
                       "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16", file, line);
}

template <int TRANS_A, int TRANS_B>
inline void wgmma_f16_m64n64k16_t(float (&d)[32], uint64_t a, uint64_t b, int scale_d, EMU_PTX_SITE)
{
    static_assert((TRANS_A == 0 || TRANS_A == 1) && (TRANS_B == 0 || TRANS_B == 1), "imm-trans is 0 or 1");
    emu::hopper::wgmma(emu::hopper::WG_F16, 64, d, a, b, scale_d, TRANS_A | TRANS_B << 1,
                       "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16", file, line);
}

template <int TRANS_A, int TRANS_B>
inline void wgmma_f16_m64n128k16_t(float (&d)[64], uint64_t a, uint64_t b, int scale_d, EMU_PTX_SITE)
{
    static_assert((TRANS_A == 0 || TRANS_A == 1) && (TRANS_B == 0 || TRANS_B == 1), "imm-trans is 0 or 1");
    emu::hopper::wgmma(emu::hopper::WG_F16, 128, d, a, b, scale_d, TRANS_A | TRANS_B << 1,
                       "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16", file, line);
}

template <int TRANS_A, int TRANS_B>
inline void wgmma_f16_m64n256k16_t(float (&d)[128], uint64_t a, uint64_t b, int scale_d, EMU_PTX_SITE)
{
    static_assert((TRANS_A == 0 || TRANS_A == 1) && (TRANS_B == 0 || TRANS_B == 1), "imm-trans is 0 or 1");
    emu::hopper::wgmma(emu::hopper::WG_F16, 256, d, a, b, scale_d, TRANS_A | TRANS_B << 1,
                       "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16", file, line);
}
#undef EMU_PTX_SITE

#endif
