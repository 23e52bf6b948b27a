/* gemm_cpu.c - the project's CPU GEMM: the provider chosen for this CPU at run time (see gemm_cpu.h).
 *
 * The lessons compare algorithms and memory, so every CPU implementation, naive and optimized alike, runs its
 * matrix products through the same optimized library: a time ratio then measures the algorithm, not the
 * quality of two hand-written loops. (A plain triple loop was 12x behind PyTorch on OpenBLAS for lesson 1.)
 * Which library is fastest depends on the CPU: Debian's OpenBLAS 0.3.21 does not know AMD's Zen 4 and runs its
 * AVX2 kernels there (117 GFLOP/s on one core, against oneDNN's 231 with AVX-512), and OPENBLAS_CORETYPE, which
 * would fix that, is read when OpenBLAS loads, before main. oneDNN dispatches on the instructions it finds (and
 * DNNL_MAX_CPU_ISA caps them), so the layer asks each candidate for the same products, checks and times them,
 * and keeps the fastest. The tests keep one tiny independent reference GEMM of their own.
 *
 * CBLAS takes int dimensions and leading dimensions: a size beyond INT_MAX is a programming error here (the
 * lessons' fit checks refuse such dimensions first), reported with the call's sizes. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include "gemm_cpu.h"

#include <cblas.h>
#include <dnnl.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gemm_matmul.h"
#include "gemm_record.h"
#include "timer.h"

typedef void sgemm_fn(int ta, int tb, size_t M, size_t N, size_t K, float alpha, const float *A, size_t lda,
                      const float *B, size_t ldb, float beta, float *C, size_t ldc);

static int as_int(size_t v, const char *what)
{
    if (v > INT_MAX) {
        fprintf(stderr, "sgemm_cpu: %s = %zu exceeds CBLAS's int range\n", what, v);
        abort();
    }
    return (int)v;
}

static void openblas_sgemm(int ta, int tb, size_t M, size_t N, size_t K, float alpha, const float *A, size_t lda,
                           const float *B, size_t ldb, float beta, float *C, size_t ldc)
{
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, as_int(M, "M"),
                as_int(N, "N"), as_int(K, "K"), alpha, A, as_int(lda, "lda"), B, as_int(ldb, "ldb"), beta, C,
                as_int(ldc, "ldc"));
}

/* oneDNN's GEMM API is row-major already, with 64-bit dimensions. */
static void onednn_sgemm(int ta, int tb, size_t M, size_t N, size_t K, float alpha, const float *A, size_t lda,
                         const float *B, size_t ldb, float beta, float *C, size_t ldc)
{
    if (dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', (dnnl_dim_t)M, (dnnl_dim_t)N, (dnnl_dim_t)K, alpha, A,
                   (dnnl_dim_t)lda, B, (dnnl_dim_t)ldb, beta, C, (dnnl_dim_t)ldc) != dnnl_success) {
        fprintf(stderr, "sgemm_cpu: dnnl_sgemm refused [%zu, %zu, %zu] (lda %zu, ldb %zu, ldc %zu)\n", M, N, K, lda,
                ldb, ldc);
        abort();
    }
}

static void onednn_matmul(int ta, int tb, size_t M, size_t N, size_t K, float alpha, const float *A, size_t lda,
                          const float *B, size_t ldb, float beta, float *C, size_t ldc)
{
    if (gemm_matmul(GEMM_MM_F32, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc) != 0) {
        fprintf(stderr, "sgemm_cpu: oneDNN has no float32 matmul for [%zu, %zu, %zu]\n", M, N, K);
        abort();
    }
}

typedef struct {
    const char *name; /* GEMM_CPU_PROVIDER's value */
    sgemm_fn *run;
    char about[96];   /* library, version, kernels */
    double rate;      /* multiply-adds per second on the S^3 calibration (timing_side); 0 until measured */
    int correct;
} provider;

static provider providers[] = {{"onednn", onednn_sgemm, "", 0, 0},
                               {"onednn-matmul", onednn_matmul, "", 0, 0},
                               {"openblas", openblas_sgemm, "", 0, 0}};
enum { NPROV = sizeof providers / sizeof providers[0] };
static provider *chosen;
static int forced; /* GEMM_CPU_PROVIDER or gemm_cpu_use: one provider for every product */
static char library[512];

/* ---- the choice -------------------------------------------------------------------------------------------- */

/* One knob for both libraries: OPENBLAS_NUM_THREADS (what the bench scripts set), else OMP_NUM_THREADS (oneDNN
 * reads it through OpenMP); unset, each library takes every core. */
static void set_threads(void)
{
    static int done;
    if (done++) return;
    const char *e = getenv("OPENBLAS_NUM_THREADS");
    if (!e || !*e) e = getenv("OMP_NUM_THREADS");
    int n = e ? atoi(e) : 0;
    if (n <= 0) return;
    openblas_set_num_threads(n);
    omp_set_num_threads(n);
}

static void describe_providers(void)
{
    const dnnl_version_t *v = dnnl_version();
    snprintf(providers[0].about, sizeof providers[0].about, "oneDNN %d.%d.%d sgemm (%s)", v->major, v->minor,
             v->patch, gemm_onednn_isa());
    const char *k = gemm_matmul_kernel(GEMM_MM_F32, 0, 0, 0, 0.0f);
    snprintf(providers[1].about, sizeof providers[1].about, "oneDNN %d.%d.%d matmul (%s, %s)", v->major, v->minor,
             v->patch, k ? k : "none", gemm_onednn_isa());
    char version[32] = "?"; /* openblas_get_config(): "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ... Zen MAX_THREADS=64" */
    sscanf(openblas_get_config(), "OpenBLAS %31s", version);
    snprintf(providers[2].about, sizeof providers[2].about, "OpenBLAS %s (%s kernels)", version,
             openblas_get_corename());
}

enum { S_MAX = 512, E = 48 }; /* the largest timing side, and the exactness check's */
static float cal_a[S_MAX * S_MAX], cal_b[S_MAX * S_MAX], cal_c[S_MAX * S_MAX]; /* calibration buffers, not a lesson's memory */
static int S = 256; /* the timing side (timing_side) */

/* 256, or 512 with more than four threads: a 256^3 product (17 million multiply-adds) split over 16 threads takes
 * a few microseconds each, and then the threads' start and join are what is timed, not their rate (on the GPU
 * report's 16-core machine every provider measured 4-12 GFLOP/s at 256^3). */
static int timing_side(void)
{
    int t = openblas_get_num_threads(), o = omp_get_max_threads();
    return (t > o ? t : o) > 4 ? 512 : 256;
}

/* Small integers, so every product and sum is exact in float32 and any correct GEMM returns the same bits: op(A)
 * (E, E) . op(B) (E, E) for all four transpose pairs, with padded strides, beta = 1 and alpha = 2. */
static int exact_on_integers(sgemm_fn *run)
{
    enum { LD = E + 3 };
    static float a[E * LD], b[E * LD], c[E * LD];
    for (int i = 0; i < E * LD; i++) a[i] = (float)(i % 7 - 3), b[i] = (float)(i % 5 - 2);
    for (int t = 0; t < 4; t++) {
        int ta = t & 1, tb = t >> 1;
        for (int i = 0; i < E * LD; i++) c[i] = (float)(i % 3);
        run(ta, tb, E, E, E, 2.0f, a, LD, b, LD, 1.0f, c, LD);
        for (int i = 0; i < E; i++)
            for (int j = 0; j < E; j++) {
                double s = 0;
                for (int k = 0; k < E; k++) s += (double)(ta ? a[k * LD + i] : a[i * LD + k]) * (tb ? b[j * LD + k] : b[k * LD + j]);
                if ((double)c[i * LD + j] != 2.0 * s + (double)((i * LD + j) % 3)) return 0;
            }
    }
    return 1;
}

/* The process's CPU seconds: GEMM_CPU_PROFILE's clock, and the calibration's on one thread, so that time this
 * shared machine gives other processes is not charged to a GEMM (with more threads, every thread's time adds up,
 * and wall-clock is the smaller). */
static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double time_one_ms(sgemm_fn *run)
{
    double t0 = host_time_ms(), c0 = cpu_seconds();
    run(0, 0, S, S, S, 1.0f, cal_a, S, cal_b, S, 0.0f, cal_c, S);
    double wall = host_time_ms() - t0, cpu = 1e3 * (cpu_seconds() - c0);
    return cpu < wall ? cpu : wall;
}

/* Each candidate checked, then timed on S^3 products, the candidates taking turns so that a load spike on this
 * shared machine hits them alike; the best time of each (the rate its cores reach). Forced, only that one. With
 * more than one thread, OpenBLAS timed between oneDNN's calls is slow (8 GFLOP/s on 2 threads here, 132 alone):
 * oneDNN's OpenMP workers spin on the cores after each call. That is what a lesson mixing the two would see, so it
 * is measured so, and no tie sends the skinny products to OpenBLAS then. */
static void measure(provider **list, int n)
{
    S = timing_side();
    for (int i = 0; i < S * S; i++) cal_a[i] = (float)(i % 7) - 3.0f, cal_b[i] = (float)(i % 5) - 2.0f;
    double best[8] = {0};
    for (int i = 0; i < n; i++) {
        list[i]->correct = exact_on_integers(list[i]->run);
        if (list[i]->correct) time_one_ms(list[i]->run); /* JIT, buffers, threads */
    }
    double t_start = host_time_ms();
    for (int rep = 0; rep < 12 && (rep < 4 || host_time_ms() - t_start < 20.0); rep++)
        for (int i = 0; i < n; i++) {
            if (!list[i]->correct) continue;
            double ms = time_one_ms(list[i]->run);
            if (best[i] == 0.0 || ms < best[i]) best[i] = ms;
        }
    for (int i = 0; i < n; i++) list[i]->rate = list[i]->correct ? (double)S * S * S / (best[i] * 1e-3) : 0.0;
}

#define OPENBLAS_MARGIN 1.10 /* rates within 10% at S^3: a tie */
enum { SKINNY = 32 };        /* a product with a dimension this small or smaller is skinny */
static int skinny_openblas;  /* skinny products on OpenBLAS (a tie at S^3 with the chosen provider) */

static provider *find(const char *name)
{
    for (int i = 0; i < NPROV; i++)
        if (strcmp(providers[i].name, name) == 0) return &providers[i];
    return NULL;
}

/* The other library: OpenBLAS beside either of oneDNN's entry points, oneDNN's sgemm beside OpenBLAS. */
static provider *rival(void)
{
    provider *r = chosen == find("openblas") ? find("onednn") : find("openblas");
    return r->correct ? r : NULL;
}

static void describe_choice(const char *how)
{
    int n = snprintf(library, sizeof library, "%s, %.0f GFLOP/s at %d^3, %s", chosen->about, 2e-9 * chosen->rate, S, how);
    const char *sep = "; ";
    for (int i = 0; i < NPROV && n < (int)sizeof library; i++) {
        provider *p = &providers[i];
        if (p == chosen || (p->rate == 0.0 && p->correct)) continue;
        if (p->rate > 0.0) n += snprintf(library + n, sizeof library - n, "%s%s %.0f", sep, p->about, 2e-9 * p->rate);
        else if (strstr(how, "forced") == NULL)
            n += snprintf(library + n, sizeof library - n, "%s%s: wrong on the exactness check", sep, p->about);
        else continue;
        sep = ", ";
    }
}

static void choose(void)
{
    if (chosen) return;
    set_threads();
    describe_providers();
    const char *want = getenv("GEMM_CPU_PROVIDER");
    if (want && *want) {
        if (gemm_cpu_use(want) != 0) {
            fprintf(stderr, "GEMM_CPU_PROVIDER=%s: not one of onednn, onednn-matmul, openblas, or wrong here\n", want);
            exit(2);
        }
        return;
    }
    provider *all[NPROV], *best = NULL;
    for (int i = 0; i < NPROV; i++) all[i] = &providers[i];
    measure(all, NPROV);
    for (int i = 0; i < NPROV; i++)
        if (providers[i].correct && (!best || providers[i].rate > best->rate)) best = &providers[i];
    /* A near tie at S^3 (within OPENBLAS_MARGIN) goes to oneDNN's sgemm, and then the skinny products (a
     * dimension of SKINNY or less) to OpenBLAS: measured on an AVX2-only EPYC, one thread, with the products'
     * own operands (GEMM_CPU_PROFILE), lessons 1-3 and 5 ran their GEMMs 10-50% faster on oneDNN, and lesson 4's
     * per-step products of 32 rows 15-25% faster on OpenBLAS, while 256^3 was a tie. Where OpenBLAS lacks the
     * CPU's kernels (AVX-512 on Zen 4: 117 GFLOP/s against oneDNN's 231) there is no tie and oneDNN runs all. */
    provider *openblas = find("openblas"), *onednn = find("onednn");
    if (best && onednn->correct && onednn->rate * OPENBLAS_MARGIN >= best->rate) best = onednn;
    skinny_openblas = best != openblas && openblas->correct && openblas->rate * OPENBLAS_MARGIN >= best->rate;
    if (!best) {
        fprintf(stderr, "sgemm_cpu: no GEMM provider passed the exactness check on this CPU\n");
        abort();
    }
    chosen = best;
    char how[256];
    int n = snprintf(how, sizeof how, "chosen (the fastest; a 10%% tie goes to oneDNN sgemm)");
    if (rival())
        n += snprintf(how + n, sizeof how - n, "; a product of up to %d^3 multiply-adds on %s where that is over 10%% "
                      "faster on its own shape (timed at its first call)", S, rival()->name);
    if (skinny_openblas) snprintf(how + n, sizeof how - n, "; a larger one with a dimension <= %d on openblas", SKINNY);
    describe_choice(how);
}

int gemm_cpu_use(const char *name)
{
    provider *p = find(name);
    if (!p) return -1;
    if (!providers[0].about[0]) {
        set_threads();
        describe_providers();
    }
    measure(&p, 1);
    if (!p->correct) return -1;
    chosen = p;
    forced = 1;
    describe_choice("forced (GEMM_CPU_PROVIDER)");
    return 0;
}

/* ---- small products: the provider timed on their own shape -------------------------------------------------- */

/* Below S^3 multiply-adds, the S^3 timing says little about a product: which library is faster on a small shape
 * depends on the shape and on the CPU, in either direction (the README says what it chose where). So the first call
 * of each such shape times the chosen provider and the other library on that shape (its transposes and strides;
 * the calibration buffers as operands), taking turns, best of ROUNDS; the other library takes the shape only if it
 * is faster by more than the tie margin. The choice is made before the shape's first product computes,
 * so every call of a shape in a process runs on one provider: the same inputs give the same bits. */
enum { SHAPES_MAX = 128, ROUNDS = 4 };
typedef struct {
    int ta, tb, beta1;
    size_t M, N, K, lda, ldb, ldc;
    provider *p;
    double us_chosen, us_rival; /* best single-call microseconds of the two */
} shape_choice;
static shape_choice shape_choices[SHAPES_MAX];
static int nshape_choices;
static double setup_ms; /* the time spent choosing, all shapes together */

static double time_call_us(provider *p, const shape_choice *s)
{
    double t0 = host_time_ms(), c0 = cpu_seconds();
    p->run(s->ta, s->tb, s->M, s->N, s->K, 1.0f, cal_a, s->lda, cal_b, s->ldb, s->beta1 ? 1.0f : 0.0f, cal_c, s->ldc);
    double wall = 1e3 * (host_time_ms() - t0), cpu = 1e6 * (cpu_seconds() - c0);
    return cpu < wall ? cpu : wall;
}

/* The provider for a product of at most S^3 multiply-adds whose operands fit the calibration buffers; NULL for
 * any other (the S^3 rule decides those). */
static provider *provider_for_shape(int ta, int tb, size_t M, size_t N, size_t K, size_t lda, size_t ldb, size_t ldc,
                                    float beta)
{
    provider *r = rival();
    const size_t cap = (size_t)S_MAX * S_MAX;
    if (!r || (double)M * N * K > (double)S * S * S || (ta ? K : M) * lda > cap || (tb ? N : K) * ldb > cap ||
        M * ldc > cap)
        return NULL;
    shape_choice k = {!!ta, !!tb, beta != 0.0f, M, N, K, lda, ldb, ldc, NULL, 0.0, 0.0};
    for (int i = nshape_choices - 1; i >= 0; i--) {
        const shape_choice *c = &shape_choices[i];
        if (c->ta == k.ta && c->tb == k.tb && c->beta1 == k.beta1 && c->M == M && c->N == N && c->K == K &&
            c->lda == lda && c->ldb == ldb && c->ldc == ldc)
            return c->p;
    }
    if (nshape_choices == SHAPES_MAX) return NULL;
    double t_start = host_time_ms();
    size_t na = (ta ? K : M) * lda, nb = (tb ? N : K) * ldb;
    for (size_t i = 0; i < na; i++) cal_a[i] = (float)(i % 7) - 3.0f;
    for (size_t i = 0; i < nb; i++) cal_b[i] = (float)(i % 5) - 2.0f;
    memset(cal_c, 0, M * ldc * sizeof *cal_c);
    time_call_us(chosen, &k), time_call_us(r, &k); /* first calls: JIT, packing buffers */
    for (int round = 0; round < ROUNDS; round++) {
        double a = time_call_us(chosen, &k), b = time_call_us(r, &k);
        if (round == 0 || a < k.us_chosen) k.us_chosen = a;
        if (round == 0 || b < k.us_rival) k.us_rival = b;
    }
    k.p = k.us_rival * OPENBLAS_MARGIN < k.us_chosen ? r : chosen;
    shape_choices[nshape_choices++] = k;
    if (getenv("GEMM_CPU_PROFILE"))
        fprintf(stderr, "gemm_cpu shape %c%c [%zu, %zu, %zu]: %s %.1f us, %s %.1f us: %s\n", ta ? 'T' : 'N',
                tb ? 'T' : 'N', M, N, K, chosen->name, k.us_chosen, r->name, k.us_rival, k.p->name);
    setup_ms += host_time_ms() - t_start;
    return k.p;
}

/* Which provider runs a float32 product: the forced one; else the one timed on its shape; else the S^3 choice,
 * with OpenBLAS for a skinny product on a tie. */
static provider *provider_for(int ta, int tb, size_t M, size_t N, size_t K, size_t lda, size_t ldb, size_t ldc,
                              float beta)
{
    if (forced) return chosen;
    provider *p = provider_for_shape(ta, tb, M, N, K, lda, ldb, ldc, beta);
    if (p) return p;
    return skinny_openblas && (M <= SKINNY || N <= SKINNY || K <= SKINNY) ? find("openblas") : chosen;
}

/* ---- the products -------------------------------------------------------------------------------------------- */

/* K = 0: C = beta C, by the BLAS definition (a library may also skip the call entirely). */
static void scale_only(size_t M, size_t N, float beta, float *C, size_t ldc)
{
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++) C[i * ldc + j] = beta == 0.0f ? 0.0f : beta * C[i * ldc + j];
}

void sgemm_cpu(int transA, int transB, size_t M, size_t N, size_t K, float alpha, const float *A, size_t lda,
               const float *B, size_t ldb, float beta, float *C, size_t ldc)
{
    if (M == 0 || N == 0) return;
    if (K == 0) {
        scale_only(M, N, beta, C, ldc);
        return;
    }
    choose();
    provider *p = provider_for(transA, transB, M, N, K, lda, ldb, ldc, beta);
    double t0 = gemm_record_timing() ? cpu_seconds() : 0.0;
    /* beta == 0: every provider writes C without reading it, so a poisoned (NaN) C cannot leak into the result. */
    p->run(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    gemm_record_call(0, transA, transB, M, N, K, lda, ldb, ldc, beta, 1, t0 > 0.0 ? cpu_seconds() - t0 : 0.0);
}

void sgemm_cpu_strided_batched(int transA, int transB, size_t M, size_t N, size_t K, float alpha,
                               const float *A, size_t lda, size_t strideA, const float *B, size_t ldb,
                               size_t strideB, float beta, float *C, size_t ldc, size_t strideC, size_t batch)
{
    for (size_t b = 0; b < batch; b++)
        sgemm_cpu(transA, transB, M, N, K, alpha, A + b * strideA, lda, B + b * strideB, ldb, beta,
                  C + b * strideC, ldc);
}

void dgemm_cpu(int transA, int transB, size_t M, size_t N, size_t K, double alpha, const double *A, size_t lda,
               const double *B, size_t ldb, double beta, double *C, size_t ldc)
{
    if (M == 0 || N == 0) return;
    set_threads();
    cblas_dgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans,
                as_int(M, "M"), as_int(N, "N"), as_int(K, "K"), alpha, A, as_int(lda, "lda"), B, as_int(ldb, "ldb"),
                beta, C, as_int(ldc, "ldc"));
}

/* ---- bf16 products ------------------------------------------------------------------------------------------ */

static int bf16_state = -1; /* -1 not decided; 0 float32 conversions; 1 oneDNN's bf16 matmul */
static char bf16_about[256];

/* The exactness check and the timing, run on bf16 copies of the calibration values (small integers: exact),
 * straight on oneDNN: not through gemm_cpu_bf16, whose calls an implementation's GEMM record counts. */
static double bf16_rate(void)
{
    static bf16 a[S_MAX * S_MAX], b[S_MAX * S_MAX];
    for (int i = 0; i < S * S; i++) a[i] = bf16_from_f32((float)(i % 7) - 3.0f), b[i] = bf16_from_f32((float)(i % 5) - 2.0f);
    if (gemm_matmul(GEMM_MM_BF16, 0, 0, S, S, S, 1.0f, a, S, b, S, 0.0f, cal_c, S) != 0) return 0.0;
    for (int i = 0; i < S; i += 37)
        for (int j = 0; j < S; j += 41) {
            double s = 0;
            for (int k = 0; k < S; k++) s += (double)((i * S + k) % 7 - 3) * ((k * S + j) % 5 - 2);
            if ((double)cal_c[i * S + j] != s) return 0.0;
        }
    double best = 0.0;
    for (int reps = 0; reps < 5; reps++) {
        double t0 = host_time_ms();
        gemm_matmul(GEMM_MM_BF16, 0, 0, S, S, S, 1.0f, a, S, b, S, 0.0f, cal_c, S);
        double ms = host_time_ms() - t0;
        if (best == 0.0 || ms < best) best = ms;
    }
    return (double)S * S * S / (best * 1e-3);
}

/* oneDNN's kernel for bf16 products in each layout lesson 5 uses (x W^T; g W with g's rows strided, beta = 1;
 * g^T x, beta = 1), or NULL when one of them has none or only the plain reference loop ("ref:..."). */
static const char *bf16_kernel(void)
{
    static const struct { int ta, tb; size_t pad; float beta; } layouts[] = {{0, 1, 0, 0.0f}, {0, 0, 40, 1.0f}, {1, 0, 40, 1.0f}};
    const char *k = NULL;
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
        k = gemm_matmul_kernel(GEMM_MM_BF16, layouts[i].ta, layouts[i].tb, layouts[i].pad, layouts[i].beta);
        if (!k || strncmp(k, "ref", 3) == 0) return NULL;
    }
    return gemm_matmul_kernel(GEMM_MM_BF16, 0, 1, 0, 0.0f);
}

/* bf16 instructions (oneDNN's avx512_core_bf16 level or above) and matmul kernels that are not oneDNN's plain
 * reference loop; then the bf16 rate must beat the float32 provider's, conversions aside. GEMM_CPU_BF16=0 turns
 * it off (the float32 path, on any CPU). */
static void decide_bf16(void)
{
    if (bf16_state >= 0) return;
    choose();
    unsigned isa = (unsigned)dnnl_get_effective_cpu_isa(), need = (unsigned)dnnl_cpu_isa_avx512_core_bf16;
    const char *k = (isa & need) == need ? bf16_kernel() : NULL;
    const char *off = getenv("GEMM_CPU_BF16");
    bf16_state = 0;
    if (off && strcmp(off, "0") == 0) {
        snprintf(bf16_about, sizeof bf16_about, "bf16 products: float32 copies, then the float32 GEMM (GEMM_CPU_BF16=0)");
    } else if (!k) {
        snprintf(bf16_about, sizeof bf16_about, "bf16 products: float32 copies, then the float32 GEMM (oneDNN at %s: "
                 "no bf16 dot-product instructions)", gemm_onednn_isa());
    } else {
        double r = bf16_rate();
        if (r > chosen->rate) {
            bf16_state = 1;
            snprintf(bf16_about, sizeof bf16_about, "bf16 products: oneDNN bf16 matmul (%s), %.0f GFLOP/s at %d^3 "
                     "against float32's %.0f", k, 2e-9 * r, S, 2e-9 * chosen->rate);
        } else {
            snprintf(bf16_about, sizeof bf16_about, "bf16 products: float32 copies, then the float32 GEMM (oneDNN's "
                     "bf16 matmul %s: %s at %d^3, float32 %.0f GFLOP/s)", k, r > 0 ? "slower" : "inexact", S,
                     2e-9 * chosen->rate);
        }
    }
}

int gemm_cpu_bf16_native(void)
{
    decide_bf16();
    return bf16_state;
}

const char *gemm_cpu_bf16_about(void)
{
    decide_bf16();
    return bf16_about;
}

void gemm_cpu_bf16(int transA, int transB, size_t M, size_t N, size_t K, const bf16 *A, size_t lda, const bf16 *B,
                   size_t ldb, float beta, float *C, size_t ldc)
{
    if (M == 0 || N == 0) return;
    if (K == 0) {
        scale_only(M, N, beta, C, ldc);
        return;
    }
    double t0 = gemm_record_timing() ? cpu_seconds() : 0.0;
    if (bf16_state != 1 || gemm_matmul(GEMM_MM_BF16, transA, transB, M, N, K, 1.0f, A, lda, B, ldb, beta, C, ldc) != 0) {
        fprintf(stderr, "gemm_cpu_bf16: no bf16 GEMM on this CPU (call it only where gemm_cpu_bf16_native())\n");
        abort();
    }
    gemm_record_call(1, transA, transB, M, N, K, lda, ldb, ldc, beta, 1, t0 > 0.0 ? cpu_seconds() - t0 : 0.0);
}

/* ---- what the lessons print and divide by ------------------------------------------------------------------ */

int gemm_cpu_threads(void)
{
    choose();
    return chosen->run == openblas_sgemm ? openblas_get_num_threads() : omp_get_max_threads();
}

const char *gemm_cpu_library(void)
{
    choose();
    return library;
}

void gemm_cpu_warm_up(void)
{
    /* The choice ran the chosen provider already (threads started, JIT done, buffers mapped); one small GEMM
     * more makes sure of it whatever the provider. Stack buffers: nothing to track. The bf16 path is decided here
     * too, so that its own timing runs before the implementations' timed (and recorded) runs, not inside one. */
    decide_bf16();
    float a[64 * 64], c[64 * 64];
    for (int i = 0; i < 64 * 64; i++) a[i] = (float)(i % 7);
    sgemm_cpu(0, 0, 64, 64, 64, 1.0f, a, 64, a, 64, 0.0f, c, 64);
}

double gemm_cpu_setup_ms(void) { return setup_ms; }

const char *gemm_cpu_provider_name(int transA, int transB, size_t M, size_t N, size_t K, size_t lda, size_t ldb,
                                   size_t ldc, float beta)
{
    choose();
    return provider_for(transA, transB, M, N, K, lda, ldb, ldc, beta)->name;
}

double gemm_cpu_fmas_per_second(void)
{
    choose();
    return chosen->rate;
}

/* ---- the peak on an implementation's own shapes ------------------------------------------------------------- */

void gemm_cpu_record_begin(void) { gemm_record_begin(); }
void gemm_cpu_record_again(void) { gemm_record_again(); }
void gemm_cpu_record_end(void) { gemm_record_end(); }

static int replay_as_f32; /* the profile's oneDNN float32 replay: bf16 shapes as float32 products too */

static void replay(int is_bf16, int ta, int tb, size_t M, size_t N, size_t K, float alpha, const void *A,
                   size_t lda, const void *B, size_t ldb, float beta, float *C, size_t ldc)
{
    if (is_bf16 && !replay_as_f32) gemm_cpu_bf16(ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc);
    else sgemm_cpu(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

/* The providers the recorded shapes ran on, for the profile line: "onednn", or "onednn (3 shapes), openblas (2)". */
static const char *providers_used(void)
{
    static char text[128];
    int count[NPROV + 1] = {0}, n = 0, kinds = 0; /* the last: bf16 products */
    for (int s = 0; s < gemm_record_shapes(); s++) {
        int ta, tb, bf;
        size_t M, N, K, lda, ldb, ldc;
        float beta;
        gemm_record_shape(s, &bf, &ta, &tb, &M, &N, &K, &lda, &ldb, &ldc, &beta);
        count[bf ? NPROV : (int)(provider_for(ta, tb, M, N, K, lda, ldb, ldc, beta) - providers)]++;
    }
    text[0] = 0;
    for (int i = 0; i <= NPROV; i++) kinds += count[i] > 0;
    for (int i = 0; i <= NPROV && n < (int)sizeof text; i++) {
        const char *name = i < NPROV ? providers[i].name : "onednn-bf16";
        if (count[i] > 0)
            n += kinds == 1 ? snprintf(text + n, sizeof text - n, "%s", name)
                            : snprintf(text + n, sizeof text - n, "%s%s (%d shape%s)", n ? ", " : "", name, count[i],
                                       count[i] == 1 ? "" : "s");
    }
    return text[0] ? text : chosen->name;
}

double gemm_cpu_peak_seconds(const char *label)
{
    double peak = gemm_record_replay(replay), in_layer = gemm_record_layer_seconds();
    if (in_layer > 0.0) { /* GEMM_CPU_PROFILE: the GEMMs' own rate, against this provider and oneDNN float32 */
        provider *keep = chosen;
        int keep_forced = forced;
        chosen = &providers[0];
        forced = 1;
        replay_as_f32 = 1;
        double onednn = gemm_record_replay(replay);
        replay_as_f32 = 0;
        chosen = keep;
        forced = keep_forced;
        fprintf(stderr, "gemm_cpu profile: %s: %zu GEMMs of %d shapes, %.2f CPU ms inside the layer; the same shapes "
                        "alone: %.2f ms on %s (%.0f%%), %.2f ms on oneDNN sgemm float32 (%.0f%%)\n",
                label, gemm_record_calls(), gemm_record_shapes(), 1e3 * in_layer, 1e3 * peak, providers_used(),
                100.0 * peak / in_layer, 1e3 * onednn, 100.0 * onednn / in_layer);
    }
    gemm_record_clear();
    return peak;
}
