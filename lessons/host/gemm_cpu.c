/* gemm_cpu.c - the project's CPU GEMM: the provider chosen for this CPU at run time (see gemm_cpu.h).
 *
 * The lessons compare algorithms and memory, so every CPU implementation, naive and optimized alike, runs its
 * matrix products through the same optimized library: a time ratio then measures the algorithm, not the
 * quality of two hand-written loops.
 * Which library is fastest depends on the CPU: Debian's OpenBLAS 0.3.21 does not know AMD's Zen 4 and runs
 * its AVX2 kernels there, while oneDNN dispatches on the instructions it finds (DNNL_MAX_CPU_ISA caps them).
 * The choice is a rule over what oneDNN reports (choose() below), not a race: timing the candidates at
 * start-up on a shared machine picked a different provider from one run to the next. The tests keep one tiny
 * independent reference GEMM of their own.
 *
 * CBLAS takes int dimensions and leading dimensions: a size beyond INT_MAX is a programming error here (the
 * lessons' fit checks refuse such dimensions first), reported with the call's sizes. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT; clock_gettime, setenv, strcasecmp */
#include "gemm_cpu.h"

#include <cblas.h>
#include <dnnl.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

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

static void openblas_sgemm(int ta, int tb, size_t M, size_t N, size_t K, float alpha, const float *A,
                           size_t lda, const float *B, size_t ldb, float beta, float *C, size_t ldc)
{
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, as_int(M, "M"),
                as_int(N, "N"), as_int(K, "K"), alpha, A, as_int(lda, "lda"), B, as_int(ldb, "ldb"), beta, C,
                as_int(ldc, "ldc"));
}

/* oneDNN's GEMM API is row-major already, with 64-bit dimensions. */
static void onednn_sgemm(int ta, int tb, size_t M, size_t N, size_t K, float alpha, const float *A,
                         size_t lda, const float *B, size_t ldb, float beta, float *C, size_t ldc)
{
    if (dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', (dnnl_dim_t)M, (dnnl_dim_t)N, (dnnl_dim_t)K, alpha, A,
                   (dnnl_dim_t)lda, B, (dnnl_dim_t)ldb, beta, C, (dnnl_dim_t)ldc) != dnnl_success) {
        fprintf(stderr, "sgemm_cpu: dnnl_sgemm refused [%zu, %zu, %zu] (lda %zu, ldb %zu, ldc %zu)\n", M, N,
                K, lda, ldb, ldc);
        abort();
    }
}

static void onednn_matmul(int ta, int tb, size_t M, size_t N, size_t K, float alpha, const float *A,
                          size_t lda, const float *B, size_t ldb, float beta, float *C, size_t ldc)
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
static const char
    *choice_how; /* the rule's reason or "forced": describe_choice's argument, kept for --threads */

/* ---- threads and idle workers -------------------------------------------------------------------------- */

static int nthreads;          /* both libraries' thread count, once set_threads ran */
static char threads_why[64];  /* where the count came from, for the header */

int gemm_cpu_cores_available(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* gemm_cpu_set_threads's count; else OPENBLAS_NUM_THREADS (what the bench scripts set), else OMP_NUM_THREADS;
 * else the cores this process may run on. Both libraries get it explicitly, so the header's count is the one
 * that runs. */
static void set_threads(void)
{
    if (!nthreads) {
        const char *names[] = {"OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"};
        for (int i = 0; i < 2 && !nthreads; i++) {
            const char *e = getenv(names[i]);
            if (e && atoi(e) > 0) {
                nthreads = atoi(e);
                snprintf(threads_why, sizeof threads_why, "%s=%d", names[i], nthreads);
            }
        }
        if (!nthreads) {
            nthreads = gemm_cpu_cores_available();
            snprintf(threads_why, sizeof threads_why, "the cores available; --threads N");
        }
    }
    openblas_set_num_threads(nthreads);
    omp_set_num_threads(nthreads);
}

static void describe_choice(const char *how);

void gemm_cpu_set_threads(int n)
{
    if (n <= 0) return;
    nthreads = n;
    snprintf(threads_why, sizeof threads_why, "--threads %d", n);
    set_threads();
    if (chosen) describe_choice(choice_how); /* the header's count follows */
}

/* Is a debugger or a tool attached? A debugger follows one program image, and a tool that injects itself
 * (valgrind and preloaded libraries through LD_PRELOAD, ncu, nsys and compute-sanitizer through
 * CUDA_INJECTION64_PATH) may not follow a re-executed one: the program then runs as started. */
static int traced(void)
{
    const char *preload = getenv("LD_PRELOAD"), *injection = getenv("CUDA_INJECTION64_PATH");
    if ((preload && *preload) || (injection && *injection)) return 1;
    char line[128];
    int pid = 0;
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "TracerPid: %d", &pid) == 1) break;
    if (f) fclose(f);
    return pid != 0;
}

/* OpenMP's workers (oneDNN's) and OpenBLAS's own threads busy-wait after each call, libgomp for up to 300,000
 * spins and OpenBLAS for 2^28 cycles: on a 2-core machine a library called right after the other runs beside
 * spinning threads at a fraction of its rate. Both read their wait setting from the environment when they
 * load, before main, so the program sets it and executes itself again, once. */
void gemm_cpu_exec_with_sleeping_workers(char **argv)
{
    static const char *const vars[][2] = {{"OMP_WAIT_POLICY", "PASSIVE"}, {"OPENBLAS_THREAD_TIMEOUT", "4"}};
    if (getenv("GEMM_CPU_REEXECUTED") || traced()) return;
    int set[2] = {0, 0};
    for (int i = 0; i < 2; i++)
        if (!getenv(vars[i][0])) set[i] = setenv(vars[i][0], vars[i][1], 1) == 0;
    if (!set[0] && !set[1]) return;
    setenv("GEMM_CPU_REEXECUTED", "1", 1);
    execv("/proc/self/exe", argv);
    for (int i = 0; i < 2; i++) /* exec failed: this image's libraries kept their defaults; say so */
        if (set[i]) unsetenv(vars[i][0]);
    unsetenv("GEMM_CPU_REEXECUTED");
}

/* What the workers do between calls, from the settings the libraries read when they loaded. */
static const char *wait_about(void)
{
    static char text[160];
    const char *omp = getenv("OMP_WAIT_POLICY"), *ob = getenv("OPENBLAS_THREAD_TIMEOUT");
    int omp_sleeps = omp && (strcasecmp(omp, "PASSIVE") == 0),
        ob_sleeps = ob && atoi(ob) > 0 && atoi(ob) <= 8;
    snprintf(text, sizeof text, "workers %s between calls (OMP_WAIT_POLICY=%s, OPENBLAS_THREAD_TIMEOUT=%s)",
             omp_sleeps && ob_sleeps ? "sleep" : "may spin", omp ? omp : "unset", ob ? ob : "unset");
    return text;
}

/* ---- the choice: a fixed rule -------------------------------------------------------------------------- */

static void describe_providers(void)
{
    const dnnl_version_t *v = dnnl_version();
    snprintf(providers[0].about, sizeof providers[0].about, "oneDNN %d.%d.%d sgemm (%s)", v->major, v->minor,
             v->patch, gemm_onednn_isa());
    const char *k = gemm_matmul_kernel(GEMM_MM_F32, 0, 0, 0, 0.0f);
    snprintf(providers[1].about, sizeof providers[1].about, "oneDNN %d.%d.%d matmul (%s, %s)", v->major,
             v->minor, v->patch, k ? k : "none", gemm_onednn_isa());
    char version[32] =
        "?"; /* openblas_get_config(): "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ... Zen MAX_THREADS=64" */
    sscanf(openblas_get_config(), "OpenBLAS %31s", version);
    snprintf(providers[2].about, sizeof providers[2].about, "OpenBLAS %s (%s kernels)", version,
             openblas_get_corename());
}

enum { S_MAX = 512, E = 48 }; /* the largest timing side, and the exactness check's */
/* calibration buffers, not a lesson's memory */
static float cal_a[S_MAX * S_MAX], cal_b[S_MAX * S_MAX], cal_c[S_MAX * S_MAX];
static int S = 256; /* the timing side (timing_side) */

/* 256, or 512 with more than four threads: a 256^3 product (17 million multiply-adds) split over 16 threads
 * takes a few microseconds each, and then the threads' start and join are what is timed, not their rate
 * (docs/results has what the GPU report's 16-core machine measured at 256^3). */
static int timing_side(void) { return nthreads > 4 ? 512 : 256; }

/* Small integers, so every product and sum is exact in float32 and any correct GEMM returns the same bits:
 * op(A) (E, E) . op(B) (E, E) for all four transpose pairs, with padded strides, beta = 1 and alpha = 2. */
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
                for (int k = 0; k < E; k++)
                    s += (double)(ta ? a[k * LD + i] : a[i * LD + k]) * (tb ? b[j * LD + k] : b[k * LD + j]);
                if ((double)c[i * LD + j] != 2.0 * s + (double)((i * LD + j) % 3)) return 0;
            }
    }
    return 1;
}

/* The process's CPU seconds: GEMM_CPU_PROFILE's clock, and the rate's on one thread, so that time this shared
 * machine gives other processes is not charged to a GEMM (with more threads, every thread's time adds up, and
 * wall-clock is the smaller). */
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

/* The rate of a provider the rule chose, on S^3 products: the best of a few (the rate its cores reach). What
 * the lessons' time estimates divide by and the header prints; it decides nothing. */
static void measure(provider *p)
{
    S = timing_side();
    for (int i = 0; i < S * S; i++) cal_a[i] = (float)(i % 7) - 3.0f, cal_b[i] = (float)(i % 5) - 2.0f;
    time_one_ms(p->run); /* JIT, buffers, threads */
    double best = 0.0, t_start = host_time_ms();
    for (int rep = 0; rep < 12 && (rep < 4 || host_time_ms() - t_start < 20.0); rep++) {
        double ms = time_one_ms(p->run);
        if (best == 0.0 || ms < best) best = ms;
    }
    p->rate = (double)S * S * S / (best * 1e-3);
}

enum { SKINNY = 32 };       /* a product with a dimension this small or smaller is skinny */
static int skinny_openblas; /* the rule's second clause: skinny products on OpenBLAS */
static char rule_why[256];

static provider *find(const char *name)
{
    for (int i = 0; i < NPROV; i++)
        if (strcmp(providers[i].name, name) == 0) return &providers[i];
    return NULL;
}

/* oneDNN dispatches to AVX-512 here (its effective ISA is avx512_core or above). */
static int onednn_avx512(void)
{
    unsigned isa = (unsigned)dnnl_get_effective_cpu_isa(), need = (unsigned)dnnl_cpu_isa_avx512_core;
    return (isa & need) == need;
}

static void describe_choice(const char *how)
{
    choice_how = how;
    int n = snprintf(library, sizeof library, "%s", chosen->about);
    if (skinny_openblas)
        n += snprintf(library + n, sizeof library - n, ", %s for a product with a dimension <= %d",
                      find("openblas")->about, SKINNY);
    snprintf(library + n, sizeof library - n, ", %s; %d thread%s (%s); %s", how, nthreads,
             nthreads == 1 ? "" : "s", threads_why, wait_about());
}

/* The rule, from what oneDNN reports of the CPU (its effective ISA) and the product's shape; the measurements
 * it came from are the README's ("CPU GEMMs"):
 *   1. every float32 product on oneDNN's sgemm: it was the fastest, or tied, on every CPU measured (with
 *      AVX-512
 *      oneDNN uses it, and Debian's OpenBLAS 0.3.21 runs its AVX2 kernels on Zen 4);
 *   2. where oneDNN runs below AVX-512 (an AVX2 CPU, or DNNL_MAX_CPU_ISA=AVX2), a product with a dimension <=
 *      32
 *      on OpenBLAS: on an AVX2-only CPU lesson 4's per-step products of 32 rows ran faster there, the rest
 *      slower.
 * A provider the rule names that fails the exactness check gives its products to the other library. No timing
 * decides anything: the same CPU and the same product give the same provider in every run. */
static void choose(void)
{
    if (chosen) return;
    set_threads();
    describe_providers();
    const char *want = getenv("GEMM_CPU_PROVIDER");
    if (want && *want) {
        if (gemm_cpu_use(want) != 0) {
            fprintf(stderr,
                    "GEMM_CPU_PROVIDER=%s: not one of onednn, onednn-matmul, openblas, or wrong here\n",
                    want);
            exit(2);
        }
        return;
    }
    provider *onednn = find("onednn"), *openblas = find("openblas");
    onednn->correct = exact_on_integers(onednn->run);
    openblas->correct = exact_on_integers(openblas->run);
    if (!onednn->correct && !openblas->correct) {
        fprintf(stderr, "sgemm_cpu: no GEMM provider passed the exactness check on this CPU\n");
        abort();
    }
    chosen = onednn->correct ? onednn : openblas;
    skinny_openblas = chosen == onednn && openblas->correct && !onednn_avx512();
    if (!onednn->correct)
        snprintf(rule_why, sizeof rule_why, "by rule (oneDNN's sgemm failed the exactness check here)");
    else if (skinny_openblas)
        snprintf(rule_why, sizeof rule_why,
                 "by rule (oneDNN at %s, below AVX-512: skinny products on OpenBLAS)", gemm_onednn_isa());
    else
        snprintf(rule_why, sizeof rule_why, "by rule (oneDNN at %s%s)", gemm_onednn_isa(),
                 onednn_avx512() ? ": every product on oneDNN" : "");
    measure(chosen);
    if (skinny_openblas) measure(openblas);
    describe_choice(rule_why);
}

int gemm_cpu_use(const char *name)
{
    provider *p = find(name);
    if (!p) return -1;
    if (!providers[0].about[0]) {
        set_threads();
        describe_providers();
    }
    p->correct = exact_on_integers(p->run);
    if (!p->correct) return -1;
    measure(p);
    chosen = p;
    forced = 1;
    skinny_openblas = 0;
    describe_choice("forced (GEMM_CPU_PROVIDER)");
    return 0;
}

/* Which provider runs a float32 product: the forced one; else the rule's. */
static provider *provider_for(size_t M, size_t N, size_t K)
{
    if (forced) return chosen;
    return skinny_openblas && (M <= SKINNY || N <= SKINNY || K <= SKINNY) ? find("openblas") : chosen;
}

/* ---- the products -------------------------------------------------------------------------------------- */

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
    provider *p = provider_for(M, N, K);
    double t0 = gemm_record_timing() ? cpu_seconds() : 0.0;
    /* beta == 0: every provider writes C without reading it, so a poisoned (NaN) C cannot leak into the
     * result. */
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

void dgemm_cpu(int transA, int transB, size_t M, size_t N, size_t K, double alpha, const double *A,
               size_t lda, const double *B, size_t ldb, double beta, double *C, size_t ldc)
{
    if (M == 0 || N == 0) return;
    if (!nthreads) set_threads();
    cblas_dgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans,
                as_int(M, "M"), as_int(N, "N"), as_int(K, "K"), alpha, A, as_int(lda, "lda"), B,
                as_int(ldb, "ldb"), beta, C, as_int(ldc, "ldc"));
}

/* ---- bf16 products ------------------------------------------------------------------------------------- */

static int bf16_state = -1; /* -1 not decided; 0 float32 conversions; 1 oneDNN's bf16 matmul */
static char bf16_about[256];

/* The exactness check on bf16 copies of the calibration values (small integers: exact), straight on oneDNN:
 * not through gemm_cpu_bf16, whose calls an implementation's GEMM record counts. 1 when every sampled entry
 * is exact. */
static int bf16_exact(void)
{
    static bf16 a[S_MAX * S_MAX], b[S_MAX * S_MAX];
    for (int i = 0; i < S * S; i++)
        a[i] = bf16_from_f32((float)(i % 7) - 3.0f), b[i] = bf16_from_f32((float)(i % 5) - 2.0f);
    if (gemm_matmul(GEMM_MM_BF16, 0, 0, S, S, S, 1.0f, a, S, b, S, 0.0f, cal_c, S) != 0) return 0;
    for (int i = 0; i < S; i += 37)
        for (int j = 0; j < S; j += 41) {
            double s = 0;
            for (int k = 0; k < S; k++) s += (double)((i * S + k) % 7 - 3) * ((k * S + j) % 5 - 2);
            if ((double)cal_c[i * S + j] != s) return 0;
        }
    return 1;
}

/* oneDNN's kernel for bf16 products in each layout lesson 5 uses (x W^T; g W with g's rows strided, beta = 1;
 * g^T x, beta = 1), or NULL when one of them has none or only the plain reference loop ("ref:..."). */
static const char *bf16_kernel(void)
{
    static const struct {
        int ta, tb;
        size_t pad;
        float beta;
    } layouts[] = {{0, 1, 0, 0.0f}, {0, 0, 40, 1.0f}, {1, 0, 40, 1.0f}};
    const char *k = NULL;
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
        k = gemm_matmul_kernel(GEMM_MM_BF16, layouts[i].ta, layouts[i].tb, layouts[i].pad, layouts[i].beta);
        if (!k || strncmp(k, "ref", 3) == 0) return NULL;
    }
    return gemm_matmul_kernel(GEMM_MM_BF16, 0, 1, 0, 0.0f);
}

/* A rule, as for float32: bf16 instructions (oneDNN's avx512_core_bf16 level or above), matmul kernels that
 * are not oneDNN's plain reference loop, and exact results on the check. A bf16 product then does half the
 * float32 path's work and none of its conversions (and out-ran float32 on every AVX-512 machine measured), so
 * no timing is asked. GEMM_CPU_BF16=0 turns it off (the float32 path, on any CPU). */
static void decide_bf16(void)
{
    if (bf16_state >= 0) return;
    choose();
    unsigned isa = (unsigned)dnnl_get_effective_cpu_isa(), need = (unsigned)dnnl_cpu_isa_avx512_core_bf16;
    const char *k = (isa & need) == need ? bf16_kernel() : NULL;
    const char *off = getenv("GEMM_CPU_BF16");
    bf16_state = 0;
    if (off && strcmp(off, "0") == 0) {
        snprintf(bf16_about, sizeof bf16_about,
                 "bf16 products: float32 copies, then the float32 GEMM (GEMM_CPU_BF16=0)");
    } else if (!k) {
        snprintf(bf16_about, sizeof bf16_about,
                 "bf16 products: float32 copies, then the float32 GEMM (oneDNN at %s: "
                 "no bf16 dot-product instructions)",
                 gemm_onednn_isa());
    } else if (!bf16_exact()) {
        snprintf(bf16_about, sizeof bf16_about,
                 "bf16 products: float32 copies, then the float32 GEMM (oneDNN's "
                 "bf16 matmul %s: inexact on the check)",
                 k);
    } else {
        bf16_state = 1;
        snprintf(bf16_about, sizeof bf16_about,
                 "bf16 products: oneDNN bf16 matmul (%s), by rule: the CPU's bf16 "
                 "dot-product instructions",
                 k);
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

void gemm_cpu_bf16(int transA, int transB, size_t M, size_t N, size_t K, const bf16 *A, size_t lda,
                   const bf16 *B, size_t ldb, float beta, float *C, size_t ldc)
{
    if (M == 0 || N == 0) return;
    if (K == 0) {
        scale_only(M, N, beta, C, ldc);
        return;
    }
    double t0 = gemm_record_timing() ? cpu_seconds() : 0.0;
    if (bf16_state != 1 ||
        gemm_matmul(GEMM_MM_BF16, transA, transB, M, N, K, 1.0f, A, lda, B, ldb, beta, C, ldc) != 0) {
        fprintf(stderr,
                "gemm_cpu_bf16: no bf16 GEMM on this CPU (call it only where gemm_cpu_bf16_native())\n");
        abort();
    }
    gemm_record_call(1, transA, transB, M, N, K, lda, ldb, ldc, beta, 1, t0 > 0.0 ? cpu_seconds() - t0 : 0.0);
}

/* ---- what the lessons print and divide by -------------------------------------------------------------- */

int gemm_cpu_threads(void)
{
    choose();
    return nthreads;
}

const char *gemm_cpu_library(void)
{
    choose();
    return library;
}

/* The bf16 matmul's rate at S^3, for the rates line (0 off the bf16 path). */
static double bf16_rate(void)
{
    static bf16 a[S_MAX * S_MAX], b[S_MAX * S_MAX];
    if (bf16_state != 1) return 0.0;
    for (int i = 0; i < S * S; i++)
        a[i] = bf16_from_f32((float)(i % 7) - 3.0f), b[i] = bf16_from_f32((float)(i % 5) - 2.0f);
    double best = 0.0;
    for (int reps = 0; reps < 6; reps++) {
        double t0 = host_time_ms();
        gemm_matmul(GEMM_MM_BF16, 0, 0, S, S, S, 1.0f, a, S, b, S, 0.0f, cal_c, S);
        double ms = host_time_ms() - t0;
        if (reps > 0 && (best == 0.0 || ms < best)) best = ms; /* the first: JIT and buffers */
    }
    return (double)S * S * S / (best * 1e-3);
}

static char rates[256];
enum { IDLE_PAUSE_MS = 10 };

void gemm_cpu_warm_up(void)
{
    /* The choice ran the chosen provider already (threads started, JIT done, buffers mapped); one small GEMM
     * more on each provider in use makes sure of it. Stack buffers: nothing to track. The bf16 path is
     * decided here too, so that its check runs before the implementations' timed (and recorded) runs, not
     * inside one. */
    decide_bf16();
    float a[64 * 64], c[64 * 64];
    for (int i = 0; i < 64 * 64; i++) a[i] = (float)(i % 7);
    sgemm_cpu(0, 0, 64, 64, 64, 1.0f, a, 64, a, 64, 0.0f, c, 64);
    if (skinny_openblas) sgemm_cpu(0, 0, 16, 64, 64, 1.0f, a, 64, a, 64, 0.0f, c, 64);
    double r16 = bf16_rate();
    /* The CPU time the process spends while it sleeps right after its calls: its workers' waiting
     * (wait_about) */
    double c0 = cpu_seconds();
    struct timespec pause = {0, IDLE_PAUSE_MS * 1000000L};
    nanosleep(&pause, NULL);
    double idle_ms = 1e3 * (cpu_seconds() - c0);
    int n = snprintf(rates, sizeof rates, "%s %.0f GFLOP/s at %d^3", chosen->name, 2e-9 * chosen->rate, S);
    if (skinny_openblas)
        n += snprintf(rates + n, sizeof rates - n, ", openblas %.0f", 2e-9 * find("openblas")->rate);
    if (r16 > 0.0) n += snprintf(rates + n, sizeof rates - n, ", onednn-bf16 %.0f", 2e-9 * r16);
    snprintf(rates + n, sizeof rates - n,
             "; idle workers used %.1f CPU ms over a %d ms pause after the calls", idle_ms, IDLE_PAUSE_MS);
}

const char *gemm_cpu_rates(void)
{
    if (!rates[0]) gemm_cpu_warm_up();
    return rates;
}

const char *gemm_cpu_provider_name(size_t M, size_t N, size_t K)
{
    choose();
    return provider_for(M, N, K)->name;
}

double gemm_cpu_fmas_per_second(void)
{
    choose();
    return chosen->rate;
}

/* ---- the peak on an implementation's own shapes -------------------------------------------------------- */

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

/* The providers the recorded shapes ran on, for the profile line: "onednn", or "onednn (3 shapes), openblas
 * (2)". */
static const char *providers_used(void)
{
    static char text[128];
    int count[NPROV + 1] = {0}, n = 0, kinds = 0; /* the last: bf16 products */
    for (int s = 0; s < gemm_record_shapes(); s++) {
        int ta, tb, bf;
        size_t M, N, K, lda, ldb, ldc;
        float beta;
        gemm_record_shape(s, &bf, &ta, &tb, &M, &N, &K, &lda, &ldb, &ldc, &beta);
        count[bf ? NPROV : (int)(provider_for(M, N, K) - providers)]++;
    }
    text[0] = 0;
    for (int i = 0; i <= NPROV; i++) kinds += count[i] > 0;
    for (int i = 0; i <= NPROV && n < (int)sizeof text; i++) {
        const char *name = i < NPROV ? providers[i].name : "onednn-bf16";
        if (count[i] > 0)
            n += kinds == 1 ? snprintf(text + n, sizeof text - n, "%s", name)
                            : snprintf(text + n, sizeof text - n, "%s%s (%d shape%s)", n ? ", " : "", name,
                                       count[i], count[i] == 1 ? "" : "s");
    }
    return text[0] ? text : chosen->name;
}

double gemm_cpu_peak_seconds(const char *label)
{
    double peak = gemm_record_replay(replay), in_layer = gemm_record_layer_seconds();
    /* GEMM_CPU_PROFILE: the GEMMs' own rate, against this provider and oneDNN float32 */
    if (in_layer > 0.0) {
        provider *keep = chosen;
        int keep_forced = forced;
        chosen = &providers[0];
        forced = 1;
        replay_as_f32 = 1;
        double onednn = gemm_record_replay(replay);
        replay_as_f32 = 0;
        chosen = keep;
        forced = keep_forced;
        fprintf(stderr,
                "gemm_cpu profile: %s: %zu GEMMs of %d shapes, %.2f CPU ms inside the layer; the same shapes "
                "alone: %.2f ms on %s (%.0f%%), %.2f ms on oneDNN sgemm float32 (%.0f%%)\n",
                label, gemm_record_calls(), gemm_record_shapes(), 1e3 * in_layer, 1e3 * peak,
                providers_used(), 100.0 * peak / in_layer, 1e3 * onednn, 100.0 * onednn / in_layer);
    }
    gemm_record_clear();
    return peak;
}
