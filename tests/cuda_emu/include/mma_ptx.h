/* mma_ptx.h - TEST-ONLY shim: kernels/runtime/ptx/mma_ptx.h (mma.sync, ldmatrix, cp.async.cg, cvt.rna.tf32,
 * max.NaN.f32) on the CPU emulator. A kernel's `#include <mma_ptx.h>` finds this file first in the emulation build (emu.mk
 * puts tests/cuda_emu/include before everything); nvcc finds the product's through -Ikernels/runtime/ptx. The
 * functions and their signatures are the product's (a call that compiles against one and not the other is a
 * build failure in one of the two builds); each trailing file/line argument is this file's own, defaulted to
 * the call site for messages. The product header's top comment is the layout; this file executes it.
 *
 *   - mma.sync and ldmatrix are warp operations of the whole warp (W_PTX, emu_warp.cc): each lane parks until
 *     all 32 have arrived at the same instruction (.aligned); a lane that exited, waits elsewhere or executes
 *     another variant fails the launch. The result is then computed from every lane's registers as the
 *     PTX ISA lays them out (lane 4g + t owns the elements the product header lists).
 *   - ldmatrix: the row addresses of the supplying lanes must lie in the block's shared memory and be 16-byte
 *     aligned (emu_ptx.cc). The rows are read here, in instrumented code, each as the supplying lane's
 *     access: the eyes see them (racecheck, initcheck, a read before the cp.async landed, the profile).
 *   - cp_async_16 / cp_async_commit / cp_async_wait<N> are the pipeline primitives' copies (emu_async.cc): 16
 *     bytes, both addresses 16-byte aligned, destination in shared memory, source in one device allocation,
 *     the destination poison until the wait that covers its group.
 * Numerics (the same rules as the WMMA shim, include/mma.h): a tf32 operand register is truncated to its top
 * 19 bits (the tensor core ignores the low 13); f32_to_tf32 rounds to nearest, ties away from zero; bf16 and
 * f16 operands are exact in float, so are their products and tf32's (barring overflow and underflow); each D
 * element is C plus the k products summed in float in k order. The hardware's order is not documented:
 * compare with a tolerance. */
#ifndef CUDA_EMU_MMA_PTX_H
#define CUDA_EMU_MMA_PTX_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "emu_async.h"
#include "emu_kernel.h"
#include "emu_ptx.h"

namespace emu {
namespace ptx {

typedef uint32_t __attribute__((may_alias)) word; /* a 32-bit load of 16-bit data in shared memory */

inline float bf16_value(uint32_t h)
{
    uint32_t u = (h & 0xffffu) << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

inline float f16_value(uint32_t h)
{
    int e = (int)(h >> 10 & 31), m = (int)(h & 1023);
    float v = e == 0 ? ldexpf((float)m, -24)
        : e == 31    ? (m ? NAN : INFINITY)
                     : ldexpf((float)(m | 1024), e - 25);
    return h >> 15 & 1 ? -v : v;
}

inline float tf32_value(uint32_t u) /* the top 19 bits */
{
    u &= 0xffffe000u;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

enum operand_type { BF16, F16, TF32 };

inline float half_of(uint32_t reg, int j, int type)
{
    return type == BF16 ? bf16_value(reg >> 16 * j) : f16_value(reg >> 16 * j & 0xffffu);
}

/* D = A . B + C for the warp. A is 16 x K, B is K x 8 (K = 16, or 8 for tf32), from each lane's registers as
 * the PTX ISA's "Matrix Fragments for mma.m16n8k16 / m16n8k8" place them; D is written only after every
 * lane's C was read (d may be c). */
template <int type> void mma_run(warp_collective *const lanes[32])
{
    enum { K = type == TF32 ? 8 : 16 };
    float A[16][K], B[K][8], C[16][8];
    for (int l = 0; l < 32; l++) {
        const ptx_lane &p = *(const ptx_lane *)lanes[l];
        int g = l / 4, t = l % 4;
        if (type == TF32) {
            A[g][t] = tf32_value(p.a[0]), A[g + 8][t] = tf32_value(p.a[1]);
            A[g][t + 4] = tf32_value(p.a[2]), A[g + 8][t + 4] = tf32_value(p.a[3]);
            B[t][g] = tf32_value(p.b[0]), B[t + 4][g] = tf32_value(p.b[1]);
        } else {
            for (int j = 0; j < 2; j++) {
                A[g][2 * t + j] = half_of(p.a[0], j, type), A[g + 8][2 * t + j] = half_of(p.a[1], j, type);
                A[g][2 * t + 8 + j] = half_of(p.a[2], j, type);
                A[g + 8][2 * t + 8 + j] = half_of(p.a[3], j, type);
                B[2 * t + j][g] = half_of(p.b[0], j, type), B[2 * t + 8 + j][g] = half_of(p.b[1], j, type);
            }
        }
        C[g][2 * t] = p.c[0], C[g][2 * t + 1] = p.c[1];
        C[g + 8][2 * t] = p.c[2], C[g + 8][2 * t + 1] = p.c[3];
    }
    for (int r = 0; r < 16; r++)
        for (int n = 0; n < 8; n++)
            for (int k = 0; k < K; k++) C[r][n] += A[r][k] * B[k][n];
    for (int l = 0; l < 32; l++) {
        const ptx_lane &p = *(const ptx_lane *)lanes[l];
        int g = l / 4, t = l % 4;
        p.d[0] = C[g][2 * t], p.d[1] = C[g][2 * t + 1];
        p.d[2] = C[g + 8][2 * t], p.d[3] = C[g + 8][2 * t + 1];
    }
}

/* ldmatrix .xNUM[.trans]: row r of matrix i is 16 bytes at lane 8i + r's address, read as that lane's access;
 * register i of lane 4g + t gets M_i[g][2t, 2t+1], or with .trans M_i[2t][g], M_i[2t+1][g] (lower first). */
template <int NUM, int TRANS> void ldmatrix_run(warp_collective *const lanes[32])
{
    uint32_t M[NUM][8][4];
    for (int i = 0; i < NUM; i++)
        for (int r = 0; r < 8; r++) {
            const word *row = (const word *)((const ptx_lane *)lanes[8 * i + r])->row;
            collective_lane(8 * i + r);
            for (int w = 0; w < 4; w++) M[i][r][w] = row[w];
        }
    for (int l = 0; l < 32; l++) {
        const ptx_lane &p = *(const ptx_lane *)lanes[l];
        int g = l / 4, t = l % 4;
        for (int i = 0; i < NUM; i++) {
            uint32_t lo = M[i][2 * t][g / 2] >> 16 * (g % 2) & 0xffffu;
            uint32_t hi = M[i][2 * t + 1][g / 2] >> 16 * (g % 2) & 0xffffu;
            *p.r[i] = TRANS ? lo | hi << 16 : M[i][g][t];
        }
    }
}

template <int NUM, int TRANS> const char *ldmatrix_name(void)
{
    static const char *names[2][3] = {
        {"ldmatrix.sync.aligned.m8n8.x1.shared.b16", "ldmatrix.sync.aligned.m8n8.x2.shared.b16",
         "ldmatrix.sync.aligned.m8n8.x4.shared.b16"},
        {"ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16", "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16",
         "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"}};
    return names[TRANS][NUM == 4 ? 2 : NUM - 1];
}

template <int NUM, int TRANS>
void ldmatrix(uint32_t *const r[NUM], const void *row, const char *file, int line)
{
    ptx_lane me{};
    me.run = &ldmatrix_run<NUM, TRANS>, me.check = &ldmatrix_check, me.name = ldmatrix_name<NUM, TRANS>();
    me.num = NUM, me.row = row;
    for (int i = 0; i < NUM; i++) me.r[i] = r[i];
    (void)warp_op(W_PTX, 0xffffffffu, (uint64_t)(uintptr_t)(warp_collective *)&me, 0, 32, file, line);
}

template <int type> void mma(float *d, const uint32_t *a, const uint32_t *b, const float *c, const char *name,
                             const char *file, int line)
{
    ptx_lane me{};
    me.run = &mma_run<type>, me.name = name;
    me.a = a, me.b = b, me.c = c, me.d = d;
    (void)warp_op(W_PTX, 0xffffffffu, (uint64_t)(uintptr_t)(warp_collective *)&me, 0, 32, file, line);
}

} /* namespace ptx */
} /* namespace emu */

#define EMU_PTX_SITE const char *file = __builtin_FILE(), int line = __builtin_LINE()

inline void mma_bf16_m16n8k16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2],
                              const float (&c)[4], EMU_PTX_SITE)
{
    emu::ptx::mma<emu::ptx::BF16>(d, a, b, c, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", file,
                                  line);
}

inline void mma_f16_m16n8k16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2],
                             const float (&c)[4], EMU_PTX_SITE)
{
    emu::ptx::mma<emu::ptx::F16>(d, a, b, c, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", file, line);
}

inline void mma_tf32_m16n8k8(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2],
                             const float (&c)[4], EMU_PTX_SITE)
{
    emu::ptx::mma<emu::ptx::TF32>(d, a, b, c, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", file,
                                  line);
}

inline uint32_t f32_to_tf32(float x) { return emu::tf32_rna_bits(x); }

/* max.NaN.f32: PTX's canonical NaN (0x7fffffff) when either operand is NaN, else the larger (PTX ISA, "max") */
inline float fmax_nan(float x, float y)
{
    if (x != x || y != y) {
        uint32_t u = 0x7fffffffu;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    return x > y ? x : x < y ? y : signbit(x) ? y : x; /* equal: +0 over -0 */
}

inline void ldmatrix_x1(uint32_t &r0, const void *row, EMU_PTX_SITE)
{
    uint32_t *r[1] = {&r0};
    emu::ptx::ldmatrix<1, 0>(r, row, file, line);
}

inline void ldmatrix_x2(uint32_t &r0, uint32_t &r1, const void *row, EMU_PTX_SITE)
{
    uint32_t *r[2] = {&r0, &r1};
    emu::ptx::ldmatrix<2, 0>(r, row, file, line);
}

inline void ldmatrix_x4(uint32_t &r0, uint32_t &r1, uint32_t &r2, uint32_t &r3, const void *row, EMU_PTX_SITE)
{
    uint32_t *r[4] = {&r0, &r1, &r2, &r3};
    emu::ptx::ldmatrix<4, 0>(r, row, file, line);
}

inline void ldmatrix_x1_trans(uint32_t &r0, const void *row, EMU_PTX_SITE)
{
    uint32_t *r[1] = {&r0};
    emu::ptx::ldmatrix<1, 1>(r, row, file, line);
}

inline void ldmatrix_x2_trans(uint32_t &r0, uint32_t &r1, const void *row, EMU_PTX_SITE)
{
    uint32_t *r[2] = {&r0, &r1};
    emu::ptx::ldmatrix<2, 1>(r, row, file, line);
}

inline void ldmatrix_x4_trans(uint32_t &r0, uint32_t &r1, uint32_t &r2, uint32_t &r3, const void *row,
                              EMU_PTX_SITE)
{
    uint32_t *r[4] = {&r0, &r1, &r2, &r3};
    emu::ptx::ldmatrix<4, 1>(r, row, file, line);
}

#undef EMU_PTX_SITE

/* noinline: the return address is the kernel's call site (the eyes' source line) */
__attribute__((noinline, no_sanitize_thread)) inline void cp_async_16(void *dst, const void *src)
{
    ::emu::async_copy(dst, src, 16, 16, 16, 0, NULL, __builtin_return_address(0));
}
__attribute__((noinline)) inline void cp_async_commit(void) { ::emu::async_commit(); }
template <int N> __attribute__((noinline)) void cp_async_wait(void)
{
    static_assert(N >= 0, "cp.async.wait_group takes a non-negative immediate");
    ::emu::async_wait_prior((size_t)N);
}

#endif
