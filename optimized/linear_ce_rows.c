/* linear_ce_rows.c - lesson 5's CPU row pass (see linear_ce_rows.h): per row the maximum, exp(z - max) stored
 * over the row while it is summed, then the gradient scale * (e / s - onehot) as bf16 over the row's first
 * half.
 *
 * Three paths, one per instruction set, chosen at run time from what the CPU reports
 * (__builtin_cpu_supports): AVX-512F (16 lanes), AVX2 with FMA (8 lanes), plain C (libm's expf). The vector
 * paths share one exp: a power of two from the exponent bits times a degree-6 polynomial on [-ln2/2, ln2/2]
 * (Cephes' expf coefficients, about 1 ulp). Each pass reads the row from the cache the one before left it in:
 * a row of the medium size's V = 32768 is 128 KiB. The bf16 rounding is bf16_from_f32's integer rule in every
 * path, so the paths differ only in exp's last bits and the order of the sum.
 *
 * In place: the bf16 gradient of element v lands at byte 2v, inside float v/2. A vector pass loads floats
 * [v, v + L) before it stores bf16 [v, v + L), bytes [2v, 2v + 2L) = floats [v/2, v/2 + L/2): all read
 * already.
 */
#include "linear_ce_rows.h"

#include <immintrin.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/linear_ce_math.h"
#include "../kernels/linear_ce_problem.h"

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
