/* linear_ce_fused.c - lesson 5, cpu: the fix on the CPU (declared in linear_ce.h), read top to bottom: the
 * bf16 GEMMs (naive's too), the row pass on AVX-512F, AVX2 or plain C, then the fused block loop that
 * accumulates dW inside the GEMM itself, in fp32 (beta = 1). One tracked workspace, carved once: a block's
 * f32 logits (which become its bf16 gradient) and the GEMMs' float32 conversion panels; nothing is allocated
 * inside the block loop. */
#include "../kernels/linear_ce.h"

#include <immintrin.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_cpu.h"
#include "track.h"

/* ==== the bf16 GEMMs, one panel of W's rows at a time (linear_ce.h) =======================================
 * On the bf16 instructions, or a converted panel through sgemm_cpu. */

/* Conversions run in blocks of a fixed CVT_BLOCK elements: a loop with a constant trip count is what -O2's
 * cheap vectoriser turns into SIMD shifts (a plain loop over cols stays scalar). */
enum { CVT_BLOCK = 16 };

static void bf16_row_to_f32(float *dst, const bf16 *src, size_t n)
{
    size_t j = 0;
    for (; j + CVT_BLOCK <= n; j += CVT_BLOCK)
        for (size_t k = 0; k < CVT_BLOCK; k++) dst[j + k] = bf16_to_f32(src[j + k]);
    for (; j < n; j++) dst[j] = bf16_to_f32(src[j]);
}

static void lce_bf16_to_f32(float *dst, size_t ldd, const bf16 *src, size_t lds, size_t rows, size_t cols)
{
    for (size_t i = 0; i < rows; i++) bf16_row_to_f32(dst + i * ldd, src + i * lds, cols);
}

void lce_f32_to_bf16(bf16 *dst, size_t ldd, const float *src, size_t lds, size_t rows, size_t cols)
{
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++) dst[i * ldd + j] = bf16_from_f32(src[i * lds + j]);
}

void lce_x_block(const lce_operands *o)
{
    if (!gemm_cpu_bf16_native()) lce_bf16_to_f32(o->xf, o->H, o->x, o->H, o->rows, o->H);
}

void lce_logits_panel(const lce_operands *o, size_t v0, size_t vb, float *out, size_t ldo)
{
    size_t rows = o->rows, H = o->H;
    const bf16 *Wp = o->W + v0 * H; /* (vb, H) */
    /* out (rows, vb) = x (rows, H) . Wp^T (H, vb); K = H, Wp stored (N, K): transB */
    if (gemm_cpu_bf16_native()) {
        gemm_cpu_bf16(0, 1, rows, vb, H, o->x, H, Wp, H, 0.0f, out, ldo);
        return;
    }
    lce_bf16_to_f32(o->wp, H, Wp, H, vb, H);
    sgemm_cpu(0, 1, rows, vb, H, 1.0f, o->xf, H, o->wp, H, 0.0f, out, ldo);
}

void lce_grad_panel(const lce_operands *o, size_t v0, size_t vb, int with_w)
{
    if (gemm_cpu_bf16_native()) return;
    lce_bf16_to_f32(o->gp, vb, o->g + v0, o->ldg, o->rows, vb);        /* gp (rows, vb) */
    if (with_w) lce_bf16_to_f32(o->wp, o->H, o->W + v0 * o->H, o->H, vb, o->H); /* wp (vb, H) */
}

void lce_dx_panel(const lce_operands *o, size_t v0, size_t vb, float beta, float *dxc)
{
    size_t rows = o->rows, H = o->H;
    /* dxc (rows, H) = beta dxc + g_panel (rows, vb) . W_panel (vb, H); K = vb, the panel's share of the sum
     * over V */
    if (gemm_cpu_bf16_native())
        gemm_cpu_bf16(0, 0, rows, H, vb, o->g + v0, o->ldg, o->W + v0 * H, H, beta, dxc, H);
    else sgemm_cpu(0, 0, rows, H, vb, 1.0f, o->gp, vb, o->wp, H, beta, dxc, H);
}

void lce_dw_panel(const lce_operands *o, size_t v0, size_t vb, float beta, float *out)
{
    size_t rows = o->rows, H = o->H;
    /* out (vb, H) = beta out + g_panel^T (vb, rows) . x (rows, H); g_panel is stored (rows, vb) = (K, M):
     * transA. The sum over the block's rows happens inside the GEMM's reduction, in float32. */
    if (gemm_cpu_bf16_native()) gemm_cpu_bf16(1, 0, vb, H, rows, o->g + v0, o->ldg, o->x, H, beta, out, H);
    else sgemm_cpu(1, 0, vb, H, rows, 1.0f, o->gp, vb, o->xf, H, beta, out, H);
}

float lce_mean_scale(const int32_t *target, size_t N)
{
    size_t n = 0;
    for (size_t i = 0; i < N; i++) n += target[i] != LCE_IGNORE;
    return n ? 1.0f / (float)n : 0.0f;
}

void lce_scale_saved_gradients(const lce_dims *d, float dloss, bf16 **grad_input, float **grad_weight,
                               bf16 **dx, float **dW)
{
    bf16 *gi = *grad_input; /* (N, H) */
    float *gw = *grad_weight; /* (V, H) */
    for (size_t i = 0; i < lce_x_count(d); i++) gi[i] = bf16_from_f32(bf16_to_f32(gi[i]) * dloss);
    for (size_t i = 0; i < lce_w_count(d); i++) gw[i] *= dloss;
    track_relabel(MEM_HOST, gi, "dx [N,H] bf16 (grad_input, scaled)");
    track_relabel(MEM_HOST, gw, "dW [V,H] f32 (grad_weight, scaled)");
    *dx = gi;
    *dW = gw;
    *grad_input = NULL;
    *grad_weight = NULL;
}

/* ==== the row pass (cpu_lce_rows) ==========================================================================
 * Per row the maximum, exp(z - max) stored over the row while it is summed, then the gradient
 * scale * (e / s - onehot) as bf16 over the row's first half.
 *
 * Three paths, one per instruction set, chosen at run time from what the CPU reports
 * (__builtin_cpu_supports): AVX-512F (16 lanes), AVX2 with FMA (8 lanes), plain C (libm's expf); the vector
 * paths carry their instruction sets as function attributes, so the file needs no -m flag. The vector
 * paths share one exp: a power of two from the exponent bits times a degree-6 polynomial on [-ln2/2, ln2/2]
 * (Cephes' expf coefficients, about 1 ulp). Each pass reads the row from the cache the one before left it in:
 * a row of the medium size's V = 32768 is 128 KiB. The bf16 rounding is bf16_from_f32's integer rule in every
 * path, so the paths differ only in exp's last bits and the order of the sum.
 *
 * In place: the bf16 gradient of element v lands at byte 2v, inside float v/2. A vector pass loads floats
 * [v, v + L) before it stores bf16 [v, v + L), bytes [2v, 2v + 2L) = floats [v/2, v/2 + L/2): all read
 * already.
 */

/* Below EXP_LO, expf's result is not a normal float: the vector exp returns 0 there (libm a denormal, then 0
 * below -103.97), a difference far under any tolerance here (the gradient's absolute error budget is 1e-6).
 * The pass only asks for exp(z - max) <= 1; EXP_HI bounds the exponent bits for any other argument. */
#define EXP_LO (-87.33654f)
#define EXP_HI 88.0f /* 2^127 at most: the exponent bits stay finite */

/* The target's gradient, from its e: (e / s - 1) * scale, the one entry the vector loop gives no onehot. */
static void put_bf16(float *row, size_t v, float g)
{
    bf16 h = bf16_from_f32(g);
    memcpy((char *)row + v * sizeof h, &h, sizeof h); /* a byte store, legal over float storage */
}

/* The rows' shared finish: loss and the target's entry. e_t is exp(z_t - m), read before the gradient
 * sweep. */
typedef struct {
    float m, s, zt, et;
} row_sums;

static double finish_row(float *zr, int32_t t, row_sums r, float scale)
{
    float lse = r.m + logf(r.s);
    put_bf16(zr, (size_t)t, (r.et / r.s - 1.0f) * scale);
    return (double)lce_row_loss(lse, r.zt);
}

/* ---- plain C ------------------------------------------------------------------------------------------- */

static double rows_c(float *z, const int32_t *target, size_t rows, size_t V, float scale)
{
    double loss = 0.0;
    for (size_t r = 0; r < rows; r++) {
        float *zr = z + r * V;
        int32_t t = target[r];
        if (t == LCE_IGNORE) {
            memset(zr, 0, V * sizeof(bf16));
            continue;
        }
        row_sums q = {-INFINITY, 0.0f, zr[t], 0.0f};
        for (size_t v = 0; v < V; v++) q.m = zr[v] > q.m ? zr[v] : q.m; /* fmaxf's answer: NaN skipped */
        double s = 0.0;
        for (size_t v = 0; v < V; v++) s += (double)(zr[v] = expf(zr[v] - q.m));
        q.s = (float)s, q.et = zr[t];
        float inv = scale / q.s;
        for (size_t v = 0; v < V; v++) put_bf16(zr, v, zr[v] * inv);
        loss += finish_row(zr, t, q, scale);
    }
    return loss;
}

/* ---- AVX2 + FMA ---------------------------------------------------------------------------------------- */

#define AVX2 __attribute__((target("avx2,fma")))

AVX2 static inline __m256 exp8(__m256 x)
{
    __m256 lo = _mm256_set1_ps(EXP_LO);
    __m256 keep = _mm256_cmp_ps(x, lo, _CMP_NLT_UQ); /* x >= lo, or NaN: NaN goes through */
    x = _mm256_min_ps(_mm256_set1_ps(EXP_HI), _mm256_max_ps(lo, x)); /* operand order: a NaN x is returned */
    __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504f)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_and_ps(_mm256_mul_ps(p, _mm256_castsi256_ps(e)), keep);
}

/* bf16_from_f32 on 8 lanes, as 32-bit lanes holding the 16-bit results */
AVX2 static inline __m256i bf16_8(__m256 f)
{
    __m256i u = _mm256_castps_si256(f), hi = _mm256_srli_epi32(u, 16);
    __m256i bias = _mm256_add_epi32(_mm256_set1_epi32(0x7fff), _mm256_and_si256(hi, _mm256_set1_epi32(1)));
    __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(u, bias), 16);
    __m256i quiet = _mm256_or_si256(hi, _mm256_set1_epi32(0x40));
    __m256i magnitude = _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff));
    __m256i nan = _mm256_cmpgt_epi32(magnitude, _mm256_set1_epi32(0x7f800000));
    return _mm256_blendv_epi8(rounded, quiet, nan);
}

AVX2 static double rows_avx2(float *z, const int32_t *target, size_t rows, size_t V, float scale)
{
    double loss = 0.0;
    for (size_t r = 0; r < rows; r++) {
        float *zr = z + r * V;
        int32_t t = target[r];
        if (t == LCE_IGNORE) {
            memset(zr, 0, V * sizeof(bf16));
            continue;
        }
        row_sums q = {-INFINITY, 0.0f, zr[t], 0.0f};
        size_t v = 0, body = V / 16 * 16;
        __m256 m0 = _mm256_set1_ps(-INFINITY), m1 = m0;
        for (; v < body; v += 16) { /* max(z, m): a NaN z leaves m */
            m0 = _mm256_max_ps(_mm256_loadu_ps(zr + v), m0);
            m1 = _mm256_max_ps(_mm256_loadu_ps(zr + v + 8), m1);
        }
        float lanes[8];
        _mm256_storeu_ps(lanes, _mm256_max_ps(m0, m1));
        for (int i = 0; i < 8; i++) q.m = lanes[i] > q.m ? lanes[i] : q.m;
        for (; v < V; v++) q.m = zr[v] > q.m ? zr[v] : q.m;
        __m256 mv = _mm256_set1_ps(q.m), s0 = _mm256_setzero_ps(), s1 = s0;
        for (v = 0; v < body; v += 16) {
            __m256 e0 = exp8(_mm256_sub_ps(_mm256_loadu_ps(zr + v), mv));
            __m256 e1 = exp8(_mm256_sub_ps(_mm256_loadu_ps(zr + v + 8), mv));
            _mm256_storeu_ps(zr + v, e0);
            _mm256_storeu_ps(zr + v + 8, e1);
            s0 = _mm256_add_ps(s0, e0), s1 = _mm256_add_ps(s1, e1);
        }
        _mm256_storeu_ps(lanes, _mm256_add_ps(s0, s1));
        double s = 0.0;
        for (int i = 0; i < 8; i++) s += lanes[i];
        for (; v < V; v++) s += (double)(zr[v] = expf(zr[v] - q.m));
        q.s = (float)s, q.et = zr[t];
        float inv = scale / q.s;
        __m256 iv = _mm256_set1_ps(inv);
        for (v = 0; v < body; v += 16) {
            __m256i a = bf16_8(_mm256_mul_ps(_mm256_loadu_ps(zr + v), iv));
            __m256i b = bf16_8(_mm256_mul_ps(_mm256_loadu_ps(zr + v + 8), iv));
            /* packus: [a0-3 b0-3 a4-7 b4-7] as 16-bit lanes; the 64-bit permute puts them in order */
            __m256i h = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xD8);
            _mm256_storeu_si256((__m256i *)((char *)zr + v * sizeof(bf16)), h);
        }
        for (; v < V; v++) put_bf16(zr, v, zr[v] * inv);
        loss += finish_row(zr, t, q, scale);
    }
    return loss;
}

/* ---- AVX-512F ------------------------------------------------------------------------------------------ */

#define AVX512 __attribute__((target("avx512f")))

AVX512 static inline __m512 exp16(__m512 x)
{
    __m512 lo = _mm512_set1_ps(EXP_LO);
    __mmask16 keep = _mm512_cmp_ps_mask(x, lo, _CMP_NLT_UQ); /* x >= lo, or NaN */
    x = _mm512_min_ps(_mm512_set1_ps(EXP_HI), _mm512_max_ps(lo, x));
    __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504f)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.9875691500e-4f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
    p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    __m512i e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
    return _mm512_maskz_mul_ps(keep, p, _mm512_castsi512_ps(e));
}

AVX512 static inline __m256i bf16_16(__m512 f)
{
    __m512i u = _mm512_castps_si512(f), hi = _mm512_srli_epi32(u, 16);
    __m512i bias = _mm512_add_epi32(_mm512_set1_epi32(0x7fff), _mm512_and_si512(hi, _mm512_set1_epi32(1)));
    __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(u, bias), 16);
    __m512i quiet = _mm512_or_si512(hi, _mm512_set1_epi32(0x40));
    __m512i magnitude = _mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff));
    __mmask16 nan = _mm512_cmpgt_epi32_mask(magnitude, _mm512_set1_epi32(0x7f800000));
    return _mm512_cvtepi32_epi16(_mm512_mask_blend_epi32(nan, rounded, quiet)); /* each lane < 2^16: exact */
}

AVX512 static double rows_avx512(float *z, const int32_t *target, size_t rows, size_t V, float scale)
{
    double loss = 0.0;
    for (size_t r = 0; r < rows; r++) {
        float *zr = z + r * V;
        int32_t t = target[r];
        if (t == LCE_IGNORE) {
            memset(zr, 0, V * sizeof(bf16));
            continue;
        }
        row_sums q = {-INFINITY, 0.0f, zr[t], 0.0f};
        size_t v = 0, body = V / 32 * 32;
        __m512 m0 = _mm512_set1_ps(-INFINITY), m1 = m0;
        for (; v < body; v += 32) {
            m0 = _mm512_max_ps(_mm512_loadu_ps(zr + v), m0);
            m1 = _mm512_max_ps(_mm512_loadu_ps(zr + v + 16), m1);
        }
        float lanes[16];
        _mm512_storeu_ps(lanes, _mm512_max_ps(m0, m1));
        for (int i = 0; i < 16; i++) q.m = lanes[i] > q.m ? lanes[i] : q.m;
        for (; v < V; v++) q.m = zr[v] > q.m ? zr[v] : q.m;
        __m512 mv = _mm512_set1_ps(q.m), s0 = _mm512_setzero_ps(), s1 = s0;
        for (v = 0; v < body; v += 32) {
            __m512 e0 = exp16(_mm512_sub_ps(_mm512_loadu_ps(zr + v), mv));
            __m512 e1 = exp16(_mm512_sub_ps(_mm512_loadu_ps(zr + v + 16), mv));
            _mm512_storeu_ps(zr + v, e0);
            _mm512_storeu_ps(zr + v + 16, e1);
            s0 = _mm512_add_ps(s0, e0), s1 = _mm512_add_ps(s1, e1);
        }
        _mm512_storeu_ps(lanes, _mm512_add_ps(s0, s1));
        double s = 0.0;
        for (int i = 0; i < 16; i++) s += lanes[i];
        for (; v < V; v++) s += (double)(zr[v] = expf(zr[v] - q.m));
        q.s = (float)s, q.et = zr[t];
        float inv = scale / q.s;
        __m512 iv = _mm512_set1_ps(inv);
        for (v = 0; v < body; v += 32) {
            __m256i a = bf16_16(_mm512_mul_ps(_mm512_loadu_ps(zr + v), iv));
            __m256i b = bf16_16(_mm512_mul_ps(_mm512_loadu_ps(zr + v + 16), iv));
            _mm256_storeu_si256((__m256i *)((char *)zr + v * sizeof(bf16)), a);
            _mm256_storeu_si256((__m256i *)((char *)zr + (v + 16) * sizeof(bf16)), b);
        }
        for (; v < V; v++) put_bf16(zr, v, zr[v] * inv);
        loss += finish_row(zr, t, q, scale);
    }
    return loss;
}

/* ---- the choice ---------------------------------------------------------------------------------------- */

typedef double rows_fn(float *z, const int32_t *target, size_t rows, size_t V, float scale);
static const struct {
    const char *name, *needs;
    rows_fn *run;
} paths[] = {
    {"avx512", "AVX-512F", rows_avx512}, {"avx2", "AVX2 and FMA", rows_avx2}, {"c", "nothing", rows_c}};
enum { NPATHS = sizeof paths / sizeof paths[0] };
static int path = -1;
static char about[160];

int cpu_lce_rows_can(const char *name)
{
    __builtin_cpu_init();
    if (strcmp(name, "avx512") == 0) return __builtin_cpu_supports("avx512f");
    if (strcmp(name, "avx2") == 0) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return strcmp(name, "c") == 0;
}

int cpu_lce_rows_use(const char *name)
{
    for (int i = 0; i < NPATHS; i++)
        if (strcmp(paths[i].name, name) == 0 && cpu_lce_rows_can(name)) {
            path = i;
            snprintf(about, sizeof about, "%s (%s)", name, getenv(LCE_ROWS_ENV) ? "forced: " LCE_ROWS_ENV
                                                                                   : "chosen");
            return 0;
        }
    return -1;
}

/* LCE_CPU_ROWS's path, else the widest this CPU runs. A forced path it cannot run is a bad environment: one
 * message, exit status 2 (the lessons' bad input). */
static void choose(void)
{
    if (path >= 0) return;
    const char *want = getenv(LCE_ROWS_ENV);
    if (want && *want) {
        if (cpu_lce_rows_use(want) != 0) {
            fprintf(stderr, "%s=%s: not one of avx512, avx2, c, or not an instruction set this CPU has\n",
                    LCE_ROWS_ENV, want);
            exit(2);
        }
        return;
    }
    for (int i = 0; i < NPATHS; i++)
        if (cpu_lce_rows_can(paths[i].name)) {
            path = i;
            snprintf(about, sizeof about,
                     "%s (the widest this CPU has: it needs %s; %s=avx512|avx2|c forces one)", paths[i].name,
                     paths[i].needs, LCE_ROWS_ENV);
            return;
        }
}

const char *cpu_lce_rows_about(void)
{
    choose();
    return about;
}

double cpu_lce_rows(float *z, const int32_t *target, size_t rows, size_t V, float scale)
{
    choose();
    return paths[path].run(z, target, rows, V, scale);
}

/* ==== the fused block loop =================================================================================
 * A block is k of the seed's chunks, k = ceil(LCE_CPU_GEMM_ROWS / chunk) (linear_ce.h). */

typedef struct {
    float *logits; /* (block, V) f32; after the row pass, row r holds its bf16 gradient in its first half */
    float *xf;     /* (block, H) the block's x rows in f32 */
    float *wp;     /* (vb, H) a panel of W in f32 */
    float *gp;     /* (block, vb) a panel of the gradient in f32 */
    float *dxc;    /* (block, H) g . W, accumulated over the panels */
} cpu_workspace;

size_t cpu_lce_block_rows(const lce_dims *d)
{
    size_t k = (LCE_CPU_GEMM_ROWS + d->chunk - 1) / d->chunk, rows = size_mul(k, d->chunk);
    return rows < d->N ? rows : d->N;
}

static void carve(arena *a, const lce_dims *d, cpu_workspace *w)
{
    size_t c = cpu_lce_block_rows(d), vb = lce_vpanel(d);
    w->logits = arena_take(a, size_mul(c, d->V), DT_F32, "logits");
    w->xf = arena_take(a, c * d->H, DT_F32, "xf");
    w->wp = arena_take(a, vb * d->H, DT_F32, "wp");
    w->gp = arena_take(a, c * vb, DT_F32, "gp");
    w->dxc = arena_take(a, c * d->H, DT_F32, "dxc");
}

size_t cpu_lce_workspace_bytes(const lce_dims *d)
{
    arena a;
    cpu_workspace w;
    return ARENA_BYTES(a, carve(&a, d, &w));
}

/* One block of rows [start, start + rows): logits, the row pass, then per W panel the dx share and the
 * in-place dW accumulation. */
static double cpu_block(const lce_dims *d, size_t start, size_t rows, const bf16 *x, const bf16 *W,
                        const int32_t *target, float scale, const cpu_workspace *w, fused_lce_saved *sv)
{
    size_t H = d->H, V = d->V, vb = lce_vpanel(d);
    lce_operands o = {
        .x = x + start * H, .xf = w->xf, .W = W, .gp = w->gp, .wp = w->wp, .rows = rows, .H = H};
    lce_x_block(&o);
    for (size_t v0 = 0; v0 < V; v0 += vb) { /* logits (rows, V) f32, row stride V */
        size_t n = V - v0 < vb ? V - v0 : vb;
        lce_logits_panel(&o, v0, n, w->logits + v0, V);
    }
    double loss = cpu_lce_rows(w->logits, target + start, rows, V, scale);
    o.g = (const bf16 *)w->logits; /* (rows, V) bf16, row stride 2V */
    o.ldg = 2 * V;
    for (size_t v0 = 0; v0 < V; v0 += vb) {
        size_t n = V - v0 < vb ? V - v0 : vb;
        lce_grad_panel(&o, v0, n, 1);
        lce_dx_panel(&o, v0, n, v0 ? 1.0f : 0.0f, w->dxc);
        lce_dw_panel(&o, v0, n, 1.0f, sv->grad_weight + v0 * H); /* beta = 1: in place */
    }
    lce_f32_to_bf16(sv->grad_input + start * H, H, w->dxc, H, rows, H);
    return loss;
}

float *cpu_lce_forward(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target,
                       fused_lce_saved *saved)
{
    saved->grad_weight = host_alloc_array(lce_w_count(d), DT_F32, "grad_weight [V,H] f32 (saved)");
    saved->grad_input = host_alloc_array(lce_x_count(d), DT_BF16, "grad_input [N,H] bf16 (saved)");
    /* the first block accumulates onto zeros */
    memset(saved->grad_weight, 0, lce_w_count(d) * sizeof(float));
    arena a;
    cpu_workspace w;
    size_t bytes = cpu_lce_workspace_bytes(d);
    arena_init(&a, host_alloc(bytes, "workspace: logits [block,V] f32 + panels"), bytes);
    carve(&a, d, &w);
    float scale = lce_mean_scale(target, d->N);
    double sum = 0.0;
    size_t B = cpu_lce_block_rows(d);
    for (size_t start = 0; start < d->N; start += B)
        sum += cpu_block(d, start, d->N - start < B ? d->N - start : B, x, W, target, scale, &w, saved);
    host_free(a.base);
    float *loss = host_alloc_array(1, DT_F32, "loss [1] f32");
    loss[0] = (float)(sum * scale);
    return loss;
}

void cpu_lce_backward(const lce_dims *d, fused_lce_saved *saved, const float *dloss, bf16 **dx, float **dW)
{
    lce_scale_saved_gradients(d, dloss[0], &saved->grad_input, &saved->grad_weight, dx, dW);
}

mem_formula cpu_lce_memory(const lce_dims *d)
{
    size_t inputs = lce_input_bytes(d), grads = lce_grad_bytes(d);
    mem_formula m;
    size_t loop = size_add(size_add(inputs, grads), cpu_lce_workspace_bytes(d)); /* workspace, then loss */
    m.forward_live = size_add(size_add(inputs, grads), 4);
    m.peak = size_add(m.forward_live, 4) > loop ? size_add(m.forward_live, 4) : loop;
    m.allocs = 8; /* x W target | grad_weight grad_input workspace | loss | dloss */
    return m;
}
