/* gemm_record.c - an implementation's GEMM shapes and the provider's peak on them (see gemm_record.h). */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include "gemm_record.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>


typedef struct {
    int is_bf16, ta, tb, beta; /* beta: 0, or 1 for "reads C" (its value does not change the time) */
    size_t M, N, K, lda, ldb, ldc, calls;
} shape;

enum { MAX_SHAPES = 128 }; /* distinct shapes of one implementation: a few per pass (full and last blocks) */
static shape shapes[MAX_SHAPES];
static int nshapes, recording, overflow, timing = -1, runs;
static double layer_s;

void gemm_record_clear(void)
{
    nshapes = 0;
    overflow = 0;
    layer_s = 0.0;
    runs = 0;
}

void gemm_record_begin(void)
{
    gemm_record_clear();
    gemm_record_again();
}

void gemm_record_again(void)
{
    recording = 1;
    runs++;
    if (timing < 0) timing = getenv("GEMM_CPU_PROFILE") != NULL;
}

static double per_run(double x) { return runs > 0 ? x / (double)runs : x; }

int gemm_record_timing(void) { return recording && timing > 0; }
double gemm_record_layer_seconds(void) { return per_run(layer_s); }
int gemm_record_shapes(void) { return nshapes; }

size_t gemm_record_calls(void)
{
    size_t n = 0;
    for (int i = 0; i < nshapes; i++) n += shapes[i].calls;
    return runs > 1 ? n / (size_t)runs : n;
}

void gemm_record_end(void) { recording = 0; }

void gemm_record_call(int is_bf16, int transA, int transB, size_t M, size_t N, size_t K, size_t lda,
                      size_t ldb, size_t ldc, float beta, size_t calls, double seconds)
{
    if (!recording) return;
    layer_s += seconds;
    shape k = {is_bf16, !!transA, !!transB, beta != 0.0f, M, N, K, lda, ldb, ldc, calls};
    /* the last shape is the likeliest: batches and loops repeat it */
    for (int i = nshapes - 1; i >= 0; i--) {
        shape *s = &shapes[i];
        if (s->is_bf16 == k.is_bf16 && s->ta == k.ta && s->tb == k.tb && s->beta == k.beta && s->M == M &&
            s->N == N && s->K == K && s->lda == lda && s->ldb == ldb && s->ldc == ldc) {
            s->calls += calls;
            return;
        }
    }
    if (nshapes == MAX_SHAPES) {
        overflow = 1;
        return;
    }
    shapes[nshapes++] = k;
}

void gemm_record_shape(int i, int *is_bf16, int *transA, int *transB, size_t *M, size_t *N, size_t *K,
                       size_t *lda, size_t *ldb, size_t *ldc, float *beta)
{
    const shape *s = &shapes[i];
    *is_bf16 = s->is_bf16, *transA = s->ta, *transB = s->tb, *M = s->M, *N = s->N, *K = s->K;
    *lda = s->lda, *ldb = s->ldb, *ldc = s->ldc, *beta = s->beta ? 1.0f : 0.0f;
}

/* A sample's seconds: the smaller of wall-clock and process CPU time. On one thread CPU time is the smaller
 * and leaves out the time this shared machine gives other processes; on several, wall-clock is (CPU time adds
 * the threads up). */
typedef struct { struct timespec wall, cpu; } stamp;
static stamp now(void)
{
    stamp t;
    clock_gettime(CLOCK_MONOTONIC, &t.wall);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t.cpu);
    return t;
}
static double since(stamp t0)
{
    stamp t = now();
    double wall =
        (double)(t.wall.tv_sec - t0.wall.tv_sec) + 1e-9 * (double)(t.wall.tv_nsec - t0.wall.tv_nsec);
    double cpu = (double)(t.cpu.tv_sec - t0.cpu.tv_sec) + 1e-9 * (double)(t.cpu.tv_nsec - t0.cpu.tv_nsec);
    return cpu < wall ? cpu : wall;
}

/* The best per-call seconds of one shape: samples of n calls each (n makes a sample long against the clock's
 * resolution, so the resolution does not count, and at most the recorded count), best of three after a
 * warm-up call. */
static double best_call_seconds(gemm_replay_fn *run, const shape *s, const void *A, const void *B, float *C)
{
    size_t lda = s->lda, ldb = s->ldb;
    float beta = s->beta ? 1.0f : 0.0f;
    stamp t0 = now();
    run(s->is_bf16, s->ta, s->tb, s->M, s->N, s->K, 1.0f, A, lda, B, ldb, beta, C, s->ldc); /* warm, JIT */
    double first = since(t0);
    size_t n = first > 0.0 ? (size_t)(0.3e-3 / first) + 1 : 1000;
    if (n > s->calls) n = s->calls;
    double best = first;
    for (int rep = 0; rep < 3; rep++) {
        t0 = now();
        for (size_t i = 0; i < n; i++)
            run(s->is_bf16, s->ta, s->tb, s->M, s->N, s->K, 1.0f, A, lda, B, ldb, beta, C, s->ldc);
        double sec = since(t0) / (double)n;
        if (sec < best) best = sec;
    }
    return best;
}

double gemm_record_replay(gemm_replay_fn *run)
{
    recording = 0; /* the replay's own calls are not recorded */
    double total = 0.0;
    if (overflow)
        fprintf(stderr, "gemm_record: more than %d GEMM shapes; the peak counts the first ones only\n",
                MAX_SHAPES);
    for (int i = 0; i < nshapes; i++) {
        const shape *s = &shapes[i];
        size_t es = 4; /* float32-sized even for bf16 shapes: a replay may run them as float32 */
        size_t na = (s->ta ? s->K : s->M) * s->lda, nb = (s->tb ? s->N : s->K) * s->ldb, nc = s->M * s->ldc;
        /* replay operands: calibration buffers, not a lesson's memory (the implementation's are freed by
         * now). Filled, so every page is a real one (an untouched calloc page reads as one shared zero
         * page). */
        unsigned char *A = malloc(na * es + 64), *B = malloc(nb * es + 64);
        float *C = malloc(nc * sizeof *C + 64);
        if (!A || !B || !C) {
            fprintf(stderr, "gemm_record: no memory to replay a [%zu, %zu, %zu] GEMM\n", s->M, s->N, s->K);
            exit(2);
        }
        for (size_t j = 0; j < na * es; j++) A[j] = (unsigned char)(j % 4 == 3 ? 0x3f : 0);
        for (size_t j = 0; j < nb * es; j++) B[j] = (unsigned char)(j % 4 == 3 ? 0x3e : 0);
        for (size_t j = 0; j < nc; j++) C[j] = 0.0f;
        total += (double)s->calls * best_call_seconds(run, s, A, B, C);
        free(A);
        free(B);
        free(C);
    }
    return per_run(total);
}
