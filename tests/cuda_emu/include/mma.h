/* mma.h - TEST-ONLY shim: nvcuda::wmma (the tensor-core warp matrix functions) on the CPU emulator. A .cu file's
 * `#include <mma.h>` finds this file first in the emulation build (make EMU=1); nvcc finds NVIDIA's.
 *
 * Shapes and types (the ones this project uses; any other combination does not compile, as under nvcc):
 *   m16n16k8  matrix_a/matrix_b precision::tf32 (stored as float), row_major or col_major; accumulator float
 *   m16n16k16 matrix_a/matrix_b __nv_bfloat16 (NVIDIA's <cuda_bf16.h>), row_major or col_major; accumulator float
 *
 * What the CUDA C++ Programming Guide ("Warp Matrix Functions") says, and what is checked here:
 *   - load_matrix_sync, store_matrix_sync and mma_sync are warp-collective: every lane of the warp must call
 *     the same one with the same mptr, ldm, layout and template arguments. They park the lane in the scheduler
 *     like a shuffle (warp kind W_WMMA, emu_warp.cc); the warp's operation runs once all 32 lanes have arrived.
 *     A lane that exited, waits elsewhere, or passes other arguments fails the launch. fill_fragment and x[]
 *     are per-lane and need no warp.
 *   - mptr must be 256-bit (32-byte) aligned; ldm (in elements) a multiple of 8 for 16-bit element types and
 *     of 4 for float/tf32 -- 16 bytes either way. Either fails the launch with cudaErrorMisalignedAddress.
 *     A device-memory tile that runs past its allocation fails it with cudaErrorIllegalAddress.
 *   - "The mapping of matrix elements into fragment internal storage is unspecified": here lane l's x[i]
 *     holds element perm[l * num_elements + i] of the tile: each lane the elements PTX's mma.m16n8k* fragments
 *     give it (what nvcc lowers WMMA to; so a kernel that learns where its elements sit and loads them itself
 *     meets the GPU's shared-memory banks), in a random register order, the same for every lane, drawn once per
 *     process and fragment type (EMU_WMMA_SEED=n fixes it) with no register where PTX numbers it. Code that
 *     assumes a layout computes garbage here. EMU_WMMA_PAIRS=1 draws a 16-bit fragment's order by 32-bit
 *     register (x[2r], x[2r + 1] adjacent in memory, the lower first, as in PTX's mma fragments): for code that
 *     checks for such pairs and loads them as words, so that both of its paths run here. EMU_WMMA_PTX=1 keeps
 *     every fragment in PTX's register order, no derangement: for code that checks for that order on the device
 *     first and otherwise refuses to run.
 * Numerics:
 *   - __float_to_tf32 is NVIDIA's cvt.rna.tf32.f32 (crt/mma.h of CUDA 13): round to nearest, ties away from
 *     zero, to 10 mantissa bits (the result is still a float with the low 13 bits zero).
 *   - A tf32 fragment loaded from floats keeps their bits; NVIDIA documents no rounding for unconverted values
 *     (the Guide's recipe converts each x[i] with __float_to_tf32 after the load), and the tensor core reads
 *     only the top 19 bits, so mma_sync here truncates each tf32 operand (low 13 bits dropped).
 *   - bf16 operands are bf16 already (the conversion to __nv_bfloat16 rounded them, to nearest even).
 *   - Products of tf32 (11-bit significands) and bf16 (8-bit) are exact in float; each element of D sums C
 *     and the k products in float, in k order. The hardware's order and internal rounding of that sum are
 *     unspecified: compare tensor-core results with a tolerance, never bitwise. */
#ifndef CUDA_EMU_MMA_H
#define CUDA_EMU_MMA_H

#include <cuda_bf16.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "emu_kernel.h"
#include "emu_ptx.h"

namespace emu {

/* The process's fragment-layout seed (emu_warp.cc): EMU_WMMA_SEED, or drawn from the clock and pid. */
uint64_t wmma_seed(void);
/* 1 under EMU_WMMA_PAIRS=1: 16-bit fragments keep PTX's register pairs (frag_perm) */
int wmma_pairs(void);
/* 1 under EMU_WMMA_PTX=1: every fragment keeps PTX's register order (frag_perm) */
int wmma_ptx(void);

/* One lane's WMMA request: the common part (warp_collective, checked equal across lanes) and its fragments. */
struct wmma_lane : warp_collective {
    void *d;                   /* load: the fragment; mma: D */
    const void *a, *b, *c;     /* store: a is the fragment; mma: A, B, C */
};

inline uint64_t splitmix(uint64_t &s)
{
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Where fragment type F's tile lives (specialised below, once the fragments are defined): cols, the tile's columns
 * (its row-major index q is row * cols + column); by_col, 1 for matrix_b, whose lanes own columns; vec, the
 * consecutive elements a lane owns along the other dimension (a tf32: 1; two bf16 or two float accumulators: 2). */
template <class F> struct frag_shape;

/* The lane that owns tile element q in PTX's mma.m16n8k8 (tf32) and m16n8k16 (bf16) fragments, which nvcc lowers
 * WMMA to on sm_80 and later (PTX ISA, "Matrix Fragments for mma.m16n8k*"): for a and the accumulator, row % 8
 * (the group) and column / vec % 4 (the thread in the group); for b, the same with rows and columns swapped. */
template <class F> int owner_lane(int q)
{
    typedef frag_shape<F> S;
    int r = q / S::cols, c = q % S::cols;
    return S::by_col ? c % 8 * 4 + r / S::vec % 4 : r % 8 * 4 + c / S::vec % 4;
}

/* The register PTX gives tile element q within its lane's fragment (the same "Matrix Fragments" figures): for a
 * and the accumulator, the column half of 4 * vec first, then the row half of 8, then the element within its vec;
 * for b the column half of 8, then the row half of 4 * vec. */
template <class F> int ptx_register(int q)
{
    typedef frag_shape<F> S;
    int r = q / S::cols, c = q % S::cols;
    int outer = S::by_col ? c / 8 : c / (4 * S::vec), inner = S::by_col ? r / (4 * S::vec) : r / 8;
    return outer * 2 * S::vec + inner * S::vec + (S::by_col ? r : c) % S::vec;
}

/* The scrambled layout of fragment type F: x[i] of lane l is element perm()[l * E + i] (row-major index). Each
 * lane holds the elements PTX's fragments give it (owner_lane), in a register order drawn once per process and
 * type, the same for every lane: x[i] is the same part (row half, column quarter) of each lane's, as on the GPU,
 * so code that learns where its elements sit and loads x[i] itself makes the GPU's shared-memory bank pattern. The
 * order is drawn with no register where PTX numbers it (a derangement), so code that assumes PTX's numbering reads
 * every element wrong. */
template <class F> const int *frag_perm(void)
{
    enum { E = F::num_elements, n = 32 * E };
    static int p[n];
    static bool ready = false;
    if (!ready) {
        uint64_t s = wmma_seed();
        for (const char *c = __PRETTY_FUNCTION__; *c; c++) s = s * 131 + (unsigned char)*c; /* one per type */
        int filled[32] = {0};
        for (int q = 0; q < n; q++) {
            int l = owner_lane<F>(q), k = ptx_register<F>(q);
            if (k >= E || (filled[l] >> k & 1)) {
                fprintf(stderr, "mma.h: lane %d's register %d of a fragment is given twice\n", l, k);
                abort();
            }
            filled[l] |= 1 << k;
            p[l * E + k] = q; /* PTX's numbering, for now */
        }
        /* x[i] is PTX's element order[i], for every lane; order[i] != i for every i. With EMU_WMMA_PAIRS=1 a
         * fragment of 16-bit elements is deranged by 32-bit register instead: x[2r], x[2r + 1] are one register's
         * two elements, adjacent in the tile's row (a) or column (b), the lower first, as PTX's mma fragments pack
         * them; only which register is x[2r] is drawn. */
        int pairs = wmma_pairs() && sizeof(typename F::storage_element_type) == 2, unit = pairs ? 2 : 1;
        int order[E];
        for (int i = 0; i < E; i++) order[i] = i; /* EMU_WMMA_PTX=1: PTX's order itself */
        for (int fixed = !wmma_ptx(); fixed;) {
            int reg[E];
            for (int i = 0; i < E / unit; i++) reg[i] = i;
            for (int i = E / unit - 1; i > 0; i--) {
                int j = (int)(splitmix(s) % (uint64_t)(i + 1)), t = reg[i];
                reg[i] = reg[j], reg[j] = t;
            }
            fixed = 0;
            for (int i = 0; i < E / unit; i++) fixed |= reg[i] == i;
            for (int i = 0; i < E; i++) order[i] = reg[i / unit] * unit + i % unit;
        }
        for (int l = 0; l < 32; l++) {
            int mine[E];
            for (int i = 0; i < E; i++) mine[i] = p[l * E + order[i]];
            for (int i = 0; i < E; i++) p[l * E + i] = mine[i];
        }
        ready = true;
    }
    return p;
}

/* The inverse of frag_perm: element q of the tile is x[inv[q] % E] of lane inv[q] / E. */
template <class F> const int *frag_inv(void)
{
    enum { n = 32 * F::num_elements };
    static int inv[n];
    static bool ready = false;
    if (!ready) {
        const int *p = frag_perm<F>();
        for (int i = 0; i < n; i++) inv[p[i]] = i;
        ready = true;
    }
    return inv;
}

/* The order in which a warp's fragment load or store touches memory, for the eyes' accounting (requests, bank
 * wavefronts): the fragments of PTX's mma.m16n8k8 (tf32) and m16n8k16 (bf16) that nvcc lowers WMMA to on sm_80 and
 * later (PTX ISA, "Matrix Fragments for mma.m16n8k*"). In memory coordinates (row = the strided dimension), each
 * step covers 8 rows x 4 lanes per row, each lane `vec` consecutive elements (a tf32: 1; two bf16 or two float
 * accumulators: 2), lane = (row % 8) * 4 + column / vec % 4. fn(q, lane): q the element's row-major tile index.
 * Which register of the (scrambled, frag_perm) fragment receives the element is not this order's concern. */
template <class Fn> void hw_order(int rows, int cols, int row_major, int vec, Fn fn)
{
    int mr = row_major ? rows : cols, mc = row_major ? cols : rows; /* rows and columns in memory */
    for (int r0 = 0; r0 < mr; r0 += 8)
        for (int c0 = 0; c0 < mc; c0 += 4 * vec)
            for (int j = 0; j < vec; j++)
                for (int lane = 0; lane < 32; lane++) {
                    int r = r0 + lane / 4, c = c0 + lane % 4 * vec + j;
                    fn(row_major ? r * cols + c : c * cols + r, lane);
                }
}

inline float tf32_truncate(float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    u &= 0xffffe000u;
    memcpy(&v, &u, 4);
    return v;
}

/* offset in elements of tile element (r, c) stored row-major (element (r,c) at r*ldm + c) or column-major */
inline size_t tile_offset(int r, int c, unsigned ldm, int row_major)
{
    return row_major ? (size_t)r * ldm + c : (size_t)c * ldm + r;
}

} /* namespace emu */

namespace nvcuda {
namespace wmma {

struct row_major;
struct col_major;
struct matrix_a;
struct matrix_b;
struct accumulator;
namespace precision {
struct tf32;
}
enum layout_t { mem_row_major, mem_col_major };

template <class T> struct storage_of { typedef T type; };
template <> struct storage_of<precision::tf32> { typedef float type; };

template <class T, int size> struct __frag_base {
    enum { num_elements = size, num_storage_elements = size };
    typedef T element_type;
    typedef typename storage_of<T>::type storage_element_type;
    storage_element_type x[size];
};

template <class Use, int m, int n, int k, class T, class Layout = void> class fragment; /* others: undefined */
template <class L> class fragment<matrix_a, 16, 16, 16, __nv_bfloat16, L> : public __frag_base<__nv_bfloat16, 8> {};
template <class L> class fragment<matrix_b, 16, 16, 16, __nv_bfloat16, L> : public __frag_base<__nv_bfloat16, 8> {};
template <> class fragment<accumulator, 16, 16, 16, float> : public __frag_base<float, 8> {};
template <class L> class fragment<matrix_a, 16, 16, 8, precision::tf32, L> : public __frag_base<precision::tf32, 4> {};
template <class L> class fragment<matrix_b, 16, 16, 8, precision::tf32, L> : public __frag_base<precision::tf32, 4> {};
template <> class fragment<accumulator, 16, 16, 8, float> : public __frag_base<float, 8> {};

/* NVIDIA's cvt.rna.tf32.f32: round to nearest, ties away from zero; Inf stays Inf, NaN stays NaN */
inline float __float_to_tf32(float in)
{
    uint32_t u = emu::tf32_rna_bits(in); /* emu_ptx.h: mma_ptx.h's f32_to_tf32 is the same instruction */
    float r;
    memcpy(&r, &u, 4);
    return r;
}

/* rows and columns of a fragment's tile, and whether a matrix_a/matrix_b layout is row-major */
template <class Use, int m, int n, int k> struct tile_dims;
template <int m, int n, int k> struct tile_dims<matrix_a, m, n, k> { enum { rows = m, cols = k }; };
template <int m, int n, int k> struct tile_dims<matrix_b, m, n, k> { enum { rows = k, cols = n }; };
template <int m, int n, int k> struct tile_dims<accumulator, m, n, k> { enum { rows = m, cols = n }; };
template <class L> struct is_row { enum { value = 1 }; };
template <> struct is_row<col_major> { enum { value = 0 }; };
template <class Use> struct is_b { enum { value = 0 }; };
template <> struct is_b<matrix_b> { enum { value = 1 }; };

} /* namespace wmma */
} /* namespace nvcuda */
template <class Use, int m, int n, int k, class T, class L>
struct emu::frag_shape<nvcuda::wmma::fragment<Use, m, n, k, T, L>> {
    typedef nvcuda::wmma::fragment<Use, m, n, k, T, L> F;
    enum {
        cols = nvcuda::wmma::tile_dims<Use, m, n, k>::cols,
        by_col = nvcuda::wmma::is_b<Use>::value,
        vec = sizeof(typename F::storage_element_type) == 2 || F::num_elements == 8 ? 2 : 1
    };
};
namespace nvcuda {
namespace wmma {

namespace detail {

/* elements per lane per step of hw_order: two bf16 (a 32-bit word), two float accumulators, one tf32 */
template <class F> int run_vec(void)
{
    return sizeof(typename F::storage_element_type) == 2 || F::num_elements == 8 ? 2 : 1;
}

template <class F, int cols> void load_run(emu::warp_collective *const lanes[32])
{
    typedef typename F::storage_element_type S;
    const S *p = (const S *)lanes[0]->mem;
    const int *inv = emu::frag_inv<F>();
    int row_major = lanes[0]->layout == mem_row_major, rows = 32 * F::num_elements / cols;
    emu::hw_order(rows, cols, row_major, run_vec<F>(), [&](int q, int lane) {
        F &f = *(F *)((emu::wmma_lane *)lanes[inv[q] / F::num_elements])->d;
        emu::collective_lane(lane);
        f.x[inv[q] % F::num_elements] = p[emu::tile_offset(q / cols, q % cols, lanes[0]->ldm, row_major)];
    });
}

template <class F, int cols> void store_run(emu::warp_collective *const lanes[32])
{
    typedef typename F::storage_element_type S;
    S *p = (S *)lanes[0]->mem;
    const int *inv = emu::frag_inv<F>();
    int row_major = lanes[0]->layout == mem_row_major, rows = 32 * F::num_elements / cols;
    emu::hw_order(rows, cols, row_major, run_vec<F>(), [&](int q, int lane) {
        const F &f = *(const F *)((emu::wmma_lane *)lanes[inv[q] / F::num_elements])->a;
        emu::collective_lane(lane);
        p[emu::tile_offset(q / cols, q % cols, lanes[0]->ldm, row_major)] = f.x[inv[q] % F::num_elements];
    });
}

/* the operand value the tensor core multiplies */
inline float operand(float v) { return emu::tf32_truncate(v); } /* a tf32 fragment: top 19 bits */
inline float operand(__nv_bfloat16 v) { return __bfloat162float(v); }

/* gathers a fragment type's 32 lanes into its dense row-major tile */
template <class F> void gather(emu::warp_collective *const lanes[32], const void *emu::wmma_lane::*which, float *tile)
{
    const int *perm = emu::frag_perm<F>();
    for (int l = 0; l < 32; l++) {
        const F &f = *(const F *)(((emu::wmma_lane *)lanes[l])->*which);
        for (int i = 0; i < F::num_elements; i++) tile[perm[l * F::num_elements + i]] = operand(f.x[i]);
    }
}

template <class FA, class FB, class FC, int m, int n, int k>
void mma_run(emu::warp_collective *const lanes[32])
{
    float A[m * k], B[k * n], C[m * n];
    gather<FA>(lanes, &emu::wmma_lane::a, A);
    gather<FB>(lanes, &emu::wmma_lane::b, B);
    const int *perm = emu::frag_perm<FC>();
    for (int l = 0; l < 32; l++) { /* C is float: no operand rounding */
        const FC &f = *(const FC *)((emu::wmma_lane *)lanes[l])->c;
        for (int i = 0; i < FC::num_elements; i++) C[perm[l * FC::num_elements + i]] = f.x[i];
    }
    for (int r = 0; r < m; r++)
        for (int c = 0; c < n; c++)
            for (int kk = 0; kk < k; kk++) C[r * n + c] += A[r * k + kk] * B[kk * n + c];
    for (int l = 0; l < 32; l++) { /* D may be C: written only after every lane's C was read */
        FC &f = *(FC *)((emu::wmma_lane *)lanes[l])->d;
        for (int i = 0; i < FC::num_elements; i++) f.x[i] = C[perm[l * FC::num_elements + i]];
    }
}

inline void arrive(emu::wmma_lane &me, const char *file, int line)
{
    (void)emu::warp_op(emu::W_WMMA, 0xffffffffu, (uint64_t)(uintptr_t)&me, 0, 32, file, line);
}

} /* namespace detail */

/* matrix_a / matrix_b: the layout is the fragment's */
template <class Use, int m, int n, int k, class T, class L>
void load_matrix_sync(fragment<Use, m, n, k, T, L> &a, const typename storage_of<T>::type *mptr, unsigned ldm,
                      const char *file = __builtin_FILE(), int line = __builtin_LINE())
{
    typedef fragment<Use, m, n, k, T, L> F;
    typedef tile_dims<Use, m, n, k> D;
    emu::wmma_lane me{};
    me.run = &detail::load_run<F, D::cols>, me.name = "wmma::load_matrix_sync";
    me.mem = mptr, me.ldm = ldm, me.layout = is_row<L>::value ? mem_row_major : mem_col_major;
    me.elem = sizeof(*mptr), me.extent = (emu::tile_offset(D::rows - 1, D::cols - 1, ldm, is_row<L>::value) + 1) * me.elem;
    me.d = &a;
    detail::arrive(me, file, line);
}

template <int m, int n, int k>
void load_matrix_sync(fragment<accumulator, m, n, k, float> &a, const float *mptr, unsigned ldm, layout_t layout,
                      const char *file = __builtin_FILE(), int line = __builtin_LINE())
{
    emu::wmma_lane me{};
    me.run = &detail::load_run<fragment<accumulator, m, n, k, float>, n>, me.name = "wmma::load_matrix_sync";
    me.mem = mptr, me.ldm = ldm, me.layout = layout;
    me.elem = sizeof(float), me.extent = (emu::tile_offset(m - 1, n - 1, ldm, layout == mem_row_major) + 1) * 4;
    me.d = &a;
    detail::arrive(me, file, line);
}

template <int m, int n, int k>
void store_matrix_sync(float *mptr, const fragment<accumulator, m, n, k, float> &a, unsigned ldm, layout_t layout,
                       const char *file = __builtin_FILE(), int line = __builtin_LINE())
{
    emu::wmma_lane me{};
    me.run = &detail::store_run<fragment<accumulator, m, n, k, float>, n>, me.name = "wmma::store_matrix_sync";
    me.mem = mptr, me.ldm = ldm, me.layout = layout, me.writes = 1;
    me.elem = sizeof(float), me.extent = (emu::tile_offset(m - 1, n - 1, ldm, layout == mem_row_major) + 1) * 4;
    me.a = &a;
    detail::arrive(me, file, line);
}

template <int m, int n, int k, class T, class LA, class LB>
void mma_sync(fragment<accumulator, m, n, k, float> &d, const fragment<matrix_a, m, n, k, T, LA> &a,
              const fragment<matrix_b, m, n, k, T, LB> &b, const fragment<accumulator, m, n, k, float> &c,
              const char *file = __builtin_FILE(), int line = __builtin_LINE())
{
    typedef fragment<accumulator, m, n, k, float> FC;
    emu::wmma_lane me{};
    me.run = &detail::mma_run<fragment<matrix_a, m, n, k, T, LA>, fragment<matrix_b, m, n, k, T, LB>, FC, m, n, k>;
    me.name = "wmma::mma_sync", me.layout = -1;
    me.d = &d, me.a = &a, me.b = &b, me.c = &c;
    detail::arrive(me, file, line);
}

/* per lane, like an assignment to each x[i]: the Guide calls it with a common value from every lane */
template <class T, int size>
void fill_fragment(__frag_base<T, size> &f, const typename storage_of<T>::type &v)
{
    for (int i = 0; i < size; i++) f.x[i] = v;
}

} /* namespace wmma */
} /* namespace nvcuda */

#endif
